"""Sorted sets: ZADD and friends, ranges by rank / score / lex, removals,
pops (blocking ones with a short timeout), ZRANDMEMBER, the set operations
(ZUNION/ZINTER/ZDIFF, their STORE forms, ZINTERCARD) and ZSCAN.

Scores are drawn from a pool with many ties, -0, inf and -inf, exponent
forms and invalid floats; range bounds mix inclusive, exclusive ("(") and
infinite ends, plus strtod quirks ("", "(", " 1", "0x10").  Members come
from a small pool (so commands interact), with binary bytes, integers and
long members (> 64 bytes, which forces the indexed encoding); bulk ZADDs of
130+ members cross the listpack limit the other way.

Lex commands on mixed scores are not deterministic in Redis itself (the
skiplist search depends on random node levels), so lex ranges run on a
dedicated key pool ("lex:*") where every score is 0.
"""

from gencore import Cmd
import normalize

NAME = "zsets"

LEX_KEYS = [b"lex:a", b"lex:b", b"lex:c"]

MEMBERS = [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h", b"aa", b"ab",
           b"ba", b"", b"0", b"1", b"10", b"-1", b"007", b"3.5",
           b"\x00", b"\xff", b"a\x00b", b"sp ace", b"m:1", b"m:2", b"M",
           b"x" * 65, b"y" * 70, b"z" * 64]

SCORES = [b"0", b"-0", b"1", b"1", b"2", b"2", b"3", b"-1", b"1.5", b"-2.5",
          b"0.1", b"10", b"100", b"1e3", b"1E-2", b"inf", b"-inf", b"+inf",
          b"123456789012345678", b"4.5e18", b"1e300", b"-1e300", b"3.0",
          b"0x10", b"1.7976931348623157e308", b"4.9e-324"]

BAD_SCORES = [b"abc", b"nan", b"", b" 1", b"1 ", b"1e400", b"--1", b"1,5",
              b"inf1", b"NaN", b"(1", b"\x00"]

LEX_WORDS = [b"", b"a", b"aa", b"ab", b"abc", b"b", b"ba", b"bb", b"c",
             b"d", b"z", b"\x00", b"\xff", b"A", b"0", b"10", b"9"]


def _member(ctx):
    if ctx.chance(0.05):
        return ctx.binary(0, 8)
    return ctx.choice(MEMBERS)


def _score(ctx):
    r = ctx.rng.random()
    if r < 0.55:
        return ctx.choice(SCORES)
    if r < 0.85:
        return b"%d" % ctx.randint(-5, 20)
    return b"%.3f" % ctx.rng.uniform(-10, 10)


def _score_or_bad(ctx, p_bad=0.04):
    return ctx.choice(BAD_SCORES) if ctx.chance(p_bad) else _score(ctx)


def _bound(ctx):
    """A ZRANGEBYSCORE-style bound."""
    r = ctx.rng.random()
    if r < 0.12:
        return ctx.choice((b"-inf", b"+inf", b"inf", b"(-inf", b"(+inf"))
    if r < 0.16:
        return ctx.choice((b"", b"(", b" 1", b"0x10", b"1e400", b"(1e400",
                           b"abc", b"nan", b"(nan", b"((1", b"1)", b"1\x00x",
                           b"[1"))
    s = _score(ctx)
    if ctx.chance(0.35):
        return b"(" + s
    return s


def _lex_bound(ctx):
    r = ctx.rng.random()
    if r < 0.2:
        return ctx.choice((b"-", b"+"))
    if r < 0.25:
        return ctx.choice((b"a", b"", b"--", b"+a", b"-\x00x", b"{a",
                           b"+\x00"))
    return ctx.choice((b"[", b"(")) + ctx.choice(LEX_WORDS + MEMBERS[:10])


def _lex_bound_any(ctx):
    """A lex bound for keys whose scores differ: only the whole range, the
    empty one and invalid items (anything else depends, in Redis, on the
    random levels of skiplist nodes)."""
    if ctx.chance(0.85):
        return ctx.choice((b"-", b"+"))
    return ctx.choice((b"a", b"", b"--", b"+a", b"{a", b"-\x00x", b"+\x00"))


def _idx(ctx):
    r = ctx.rng.random()
    if r < 0.85:
        return b"%d" % ctx.randint(-12, 12)
    if r < 0.95:
        return ctx.choice((b"9223372036854775807", b"-9223372036854775808",
                           b"1000", b"-1000"))
    return ctx.bad_int()


def _count(ctx):
    r = ctx.rng.random()
    if r < 0.8:
        return b"%d" % ctx.randint(0, 6)
    if r < 0.9:
        return ctx.choice((b"-1", b"-5", b"1000", b"9223372036854775807"))
    return ctx.bad_int()


# -- writes --------------------------------------------------------------------

def g_zadd(ctx):
    args = [b"ZADD", ctx.key()]
    r = ctx.rng.random()
    flags = []
    if r < 0.45:
        pass
    elif r < 0.85:
        flags = ctx.rng.sample([b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR"],
                               ctx.randint(1, 2))
    else:
        flags = ctx.choice(([b"NX", b"XX"], [b"GT", b"LT"], [b"NX", b"GT"],
                            [b"LT", b"NX"], [b"INCR", b"CH"],
                            [b"XX", b"GT", b"CH"], [b"CH", b"CH"],
                            [b"INCR", b"XX"], [b"INCR", b"NX"]))
    args += [ctx.opt(f) for f in flags]
    n = 1 if (b"INCR" in flags and ctx.chance(0.8)) else ctx.randint(1, 4)
    for _ in range(n):
        args += [_score_or_bad(ctx), _member(ctx)]
    if ctx.chance(0.03):
        args.pop()
    return Cmd(*args)


def g_zadd_bulk(ctx):
    """Enough members to cross zset-max-listpack-entries (128)."""
    k = ctx.key()
    n = ctx.randint(120, 200)
    args = [b"ZADD", k]
    base = ctx.randint(0, 3)
    for i in range(n):
        args += [b"%d" % ctx.randint(-3, 40) if ctx.chance(0.7) else
                 ctx.choice(SCORES), b"bulk:%d:%d" % (base, i)]
    return [Cmd(*args), Cmd(b"OBJECT", b"ENCODING", k)]


def g_zincrby(ctx):
    inc = _score_or_bad(ctx)
    if ctx.chance(0.04):
        inc = ctx.choice((b"nx", b"incr"))
    return Cmd(b"ZINCRBY", ctx.key(), inc, _member(ctx))


def g_zrem(ctx):
    return Cmd(b"ZREM", ctx.key(), *[_member(ctx)
                                     for _ in range(ctx.randint(1, 4))])


# -- reads ----------------------------------------------------------------------

def g_zcard(ctx):
    return Cmd(b"ZCARD", ctx.key())


def g_zscore(ctx):
    return Cmd(b"ZSCORE", ctx.key(), _member(ctx))


def g_zmscore(ctx):
    return Cmd(b"ZMSCORE", ctx.key(), *[_member(ctx)
                                        for _ in range(ctx.randint(1, 4))])


def g_zrank(ctx):
    return Cmd(ctx.choice((b"ZRANK", b"ZREVRANK")), ctx.key(), _member(ctx))


def g_zcount(ctx):
    return Cmd(b"ZCOUNT", ctx.key(), _bound(ctx), _bound(ctx))


def _limit(ctx):
    r = ctx.rng.random()
    if r < 0.75:
        return [ctx.opt(b"LIMIT"), b"%d" % ctx.randint(-1, 5),
                b"%d" % ctx.randint(-2, 6)]
    if r < 0.9:
        return [ctx.opt(b"LIMIT"), ctx.choice((b"-5", b"0", b"1000")),
                ctx.choice((b"-1", b"0", b"9223372036854775807"))]
    return ctx.choice(([b"LIMIT"], [b"LIMIT", b"1"], [b"LIMIT", b"x", b"1"],
                       [b"LIMIT", b"0", b"1.5"]))


def g_zrange(ctx):
    """ZRANGE in all its forms (rank, BYSCORE, BYLEX, REV, LIMIT)."""
    kind = ctx.choice((b"", b"", b"BYSCORE", b"BYSCORE", b"BYLEX"))
    if kind == b"BYLEX":
        if ctx.chance(0.8):
            key = ctx.choice(LEX_KEYS)
            lo, hi = _lex_bound(ctx), _lex_bound(ctx)
        else:
            key = ctx.key()
            lo, hi = _lex_bound_any(ctx), _lex_bound_any(ctx)
    elif kind == b"BYSCORE":
        key = ctx.key()
        lo, hi = _bound(ctx), _bound(ctx)
    else:
        key = ctx.key()
        lo, hi = _idx(ctx), _idx(ctx)
    args = [b"ZRANGE", key, lo, hi]
    opts = []
    if kind:
        opts.append([ctx.opt(kind)])
    if ctx.chance(0.4):
        opts.append([ctx.opt(b"REV")])
    if ctx.chance(0.35 if kind else 0.05):
        opts.append(_limit(ctx))
    if ctx.chance(0.45):
        opts.append([ctx.opt(b"WITHSCORES")])
    if ctx.chance(0.03):
        opts.append(ctx.choice(([b"BYSCORE", b"BYLEX"], [b"REV", b"REV"],
                                [b"FOO"], [b"BYSCORE", b"BYSCORE"])))
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return Cmd(*args)


def g_zrangestore(ctx):
    kind = ctx.choice((b"", b"BYSCORE", b"BYLEX"))
    if kind == b"BYLEX":
        src = ctx.choice(LEX_KEYS)
        dst = ctx.choice(LEX_KEYS) if ctx.chance(0.5) else ctx.key()
        lo, hi = _lex_bound(ctx), _lex_bound(ctx)
    else:
        src = ctx.key()
        dst = ctx.key()
        lo, hi = (_bound(ctx), _bound(ctx)) if kind else (_idx(ctx), _idx(ctx))
    args = [b"ZRANGESTORE", dst, src, lo, hi]
    if kind:
        args.append(ctx.opt(kind))
    if ctx.chance(0.3):
        args.append(ctx.opt(b"REV"))
    if kind and ctx.chance(0.3):
        args += _limit(ctx)
    if ctx.chance(0.04):
        args.append(ctx.opt(b"WITHSCORES"))
    return [Cmd(*args), Cmd(b"OBJECT", b"ENCODING", dst),
            Cmd(b"ZRANGE", dst, b"0", b"-1", b"WITHSCORES")]


def g_zrange_legacy(ctx):
    name = ctx.choice((b"ZREVRANGE", b"ZRANGEBYSCORE", b"ZREVRANGEBYSCORE",
                       b"ZRANGEBYLEX", b"ZREVRANGEBYLEX"))
    if name == b"ZREVRANGE":
        args = [name, ctx.key(), _idx(ctx), _idx(ctx)]
        if ctx.chance(0.5):
            args.append(ctx.opt(b"WITHSCORES"))
        if ctx.chance(0.05):
            args += ctx.choice(([b"LIMIT", b"0", b"1"], [b"REV"], [b"BYSCORE"]))
        return Cmd(*args)
    if name.endswith(b"BYLEX"):
        if ctx.chance(0.8):
            args = [name, ctx.choice(LEX_KEYS), _lex_bound(ctx), _lex_bound(ctx)]
        else:
            args = [name, ctx.key(), _lex_bound_any(ctx), _lex_bound_any(ctx)]
        if ctx.chance(0.4):
            args += _limit(ctx)
        if ctx.chance(0.05):
            args.append(ctx.choice((b"WITHSCORES", b"REV", b"BYLEX")))
        return Cmd(*args)
    args = [name, ctx.key(), _bound(ctx), _bound(ctx)]
    opts = []
    if ctx.chance(0.5):
        opts.append([ctx.opt(b"WITHSCORES")])
    if ctx.chance(0.4):
        opts.append(_limit(ctx))
    if ctx.chance(0.04):
        opts.append([ctx.choice((b"REV", b"BYSCORE", b"FOO"))])
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return Cmd(*args)


def g_zremrange(ctx):
    name = ctx.choice((b"ZREMRANGEBYRANK", b"ZREMRANGEBYSCORE",
                       b"ZREMRANGEBYLEX"))
    if name == b"ZREMRANGEBYRANK":
        return Cmd(name, ctx.key(), _idx(ctx), _idx(ctx))
    if name == b"ZREMRANGEBYSCORE":
        return Cmd(name, ctx.key(), _bound(ctx), _bound(ctx))
    if ctx.chance(0.8):
        return Cmd(name, ctx.choice(LEX_KEYS), _lex_bound(ctx), _lex_bound(ctx))
    return Cmd(name, ctx.key(), _lex_bound_any(ctx), _lex_bound_any(ctx))


# -- lex keys: every score is 0 ---------------------------------------------------

def g_lex_add(ctx):
    args = [b"ZADD", ctx.choice(LEX_KEYS)]
    if ctx.chance(0.2):
        args.append(ctx.opt(ctx.choice((b"NX", b"XX", b"CH"))))
    for _ in range(ctx.randint(1, 6)):
        args += [b"0", ctx.choice(LEX_WORDS)]
    return Cmd(*args)


def g_lex_read(ctx):
    k = ctx.choice(LEX_KEYS)
    r = ctx.rng.random()
    if r < 0.35:
        return Cmd(b"ZLEXCOUNT", k, _lex_bound(ctx), _lex_bound(ctx))
    if r < 0.7:
        args = [ctx.choice((b"ZRANGEBYLEX", b"ZREVRANGEBYLEX")), k,
                _lex_bound(ctx), _lex_bound(ctx)]
        if ctx.chance(0.4):
            args += _limit(ctx)
        return Cmd(*args)
    if r < 0.8:
        return Cmd(b"ZREM", k, ctx.choice(LEX_WORDS))
    return Cmd(b"ZRANGE", k, b"0", b"-1")


def g_lexcount_any(ctx):
    """Lex counts on the general key pool (whole / empty / invalid ranges)."""
    return Cmd(b"ZLEXCOUNT", ctx.key(), _lex_bound_any(ctx), _lex_bound_any(ctx))


# -- pops ----------------------------------------------------------------------

def g_zpop(ctx):
    args = [ctx.choice((b"ZPOPMIN", b"ZPOPMAX")), ctx.key()]
    if ctx.chance(0.5):
        args.append(_count(ctx))
    if ctx.chance(0.03):
        args.append(b"1")
    return Cmd(*args)


def _numkeys_keys(ctx, lo=1, hi=3):
    keys = ctx.keys(lo, hi)
    r = ctx.rng.random()
    if r < 0.9:
        nk = b"%d" % len(keys)
    elif r < 0.95:
        nk = ctx.choice((b"0", b"-1", b"abc", b"%d" % (len(keys) + 1)))
    else:
        nk = b"%d" % max(1, len(keys) - 1)
    return nk, keys


def g_zmpop(ctx):
    nk, keys = _numkeys_keys(ctx)
    args = [b"ZMPOP", nk] + keys
    args.append(ctx.opt(ctx.choice((b"MIN", b"MAX"))) if ctx.chance(0.95)
                else ctx.choice((b"FOO", b"COUNT")))
    if ctx.chance(0.5):
        args += [ctx.opt(b"COUNT"), ctx.choice((b"1", b"2", b"3", b"10",
                                                b"0", b"-1", b"x"))]
    if ctx.chance(0.03):
        args += [b"COUNT", b"1"]
    return Cmd(*args)


def g_bzpop(ctx):
    """Blocking pops: served at once, or a 10 ms timeout (null array)."""
    r = ctx.rng.random()
    tmo = b"0.01" if r < 0.9 else ctx.choice((b"-1", b"abc", b"nan", b"-0.5"))
    if ctx.chance(0.5):
        return Cmd(ctx.choice((b"BZPOPMIN", b"BZPOPMAX")), *ctx.keys(1, 3), tmo)
    nk, keys = _numkeys_keys(ctx)
    args = [b"BZMPOP", tmo, nk] + keys + [ctx.opt(ctx.choice((b"MIN", b"MAX")))]
    if ctx.chance(0.4):
        args += [ctx.opt(b"COUNT"), ctx.choice((b"1", b"2", b"5", b"0"))]
    return Cmd(*args)


def g_zrandmember(ctx):
    args = [b"ZRANDMEMBER", ctx.key()]
    if ctx.chance(0.7):
        args.append(ctx.choice((b"1", b"2", b"5", b"200", b"-3", b"-1", b"0",
                                b"x", b"-9223372036854775808",
                                b"9223372036854775807")))
        if ctx.chance(0.5):
            args.append(ctx.opt(b"WITHSCORES") if ctx.chance(0.9) else b"FOO")
    return Cmd(*args, compare=normalize.shape)


# -- set operations ----------------------------------------------------------------

def _setop_opts(ctx, nkeys, op):
    opts = []
    if op != b"DIFF" and ctx.chance(0.4):
        w = [ctx.choice((b"1", b"2", b"0", b"-1", b"0.5", b"inf", b"-inf",
                         b"1e300")) for _ in range(nkeys)]
        if ctx.chance(0.05):
            w[0] = ctx.choice((b"x", b"nan", b""))
        if ctx.chance(0.04) and len(w) > 1:
            w.pop()
        opts.append([ctx.opt(b"WEIGHTS")] + w)
    if op != b"DIFF" and ctx.chance(0.35):
        opts.append([ctx.opt(b"AGGREGATE"),
                     ctx.opt(ctx.choice((b"SUM", b"MIN", b"MAX")))
                     if ctx.chance(0.95) else b"AVG"])
    if ctx.chance(0.03):
        opts.append([ctx.choice((b"WEIGHTS", b"AGGREGATE", b"FOO", b"LIMIT"))])
    ctx.rng.shuffle(opts)
    return [a for o in opts for a in o]


def g_zsetop_store(ctx):
    op = ctx.choice((b"UNION", b"INTER", b"DIFF"))
    nk, keys = _numkeys_keys(ctx, 1, 4)
    dst = ctx.key()
    args = [b"Z" + op + b"STORE", dst, nk] + keys + \
        _setop_opts(ctx, len(keys), op)
    return [Cmd(*args), Cmd(b"OBJECT", b"ENCODING", dst),
            Cmd(b"ZRANGE", dst, b"0", b"-1", b"WITHSCORES")]


def g_zsetop(ctx):
    op = ctx.choice((b"UNION", b"INTER", b"DIFF"))
    nk, keys = _numkeys_keys(ctx, 1, 4)
    args = [b"Z" + op, nk] + keys + _setop_opts(ctx, len(keys), op)
    if ctx.chance(0.5):
        args.append(ctx.opt(b"WITHSCORES"))
    return Cmd(*args)


def g_zintercard(ctx):
    nk, keys = _numkeys_keys(ctx, 1, 4)
    args = [b"ZINTERCARD", nk] + keys
    if ctx.chance(0.4):
        args += [ctx.opt(b"LIMIT"), ctx.choice((b"0", b"1", b"2", b"-1",
                                                b"x", b"100"))]
    return Cmd(*args)


def g_zscan(ctx):
    """ZSCAN to completion; the collected (member, score) pairs compared."""
    args = [b"ZSCAN", ctx.key(), b"0"]
    if ctx.chance(0.4):
        args += [ctx.opt(b"MATCH"), ctx.choice((b"*", b"a*", b"?", b"*1*",
                                                 b"bulk:1*", b"[ab]*"))]
    if ctx.chance(0.4):
        args += [ctx.opt(b"COUNT"), b"%d" % ctx.randint(1, 50)]
    return Cmd(*args, scan=(2, True))


def g_zscan_bad(ctx):
    return Cmd(b"ZSCAN", ctx.key(), *ctx.choice((
        [b"x"], [b"0", b"COUNT", b"0"], [b"0", b"COUNT"],
        [b"0", b"MATCH"], [b"0", b"FOO", b"1"], [b"0", b"COUNT", b"x"],
        [b"0", b"TYPE", b"zset"])))


def g_sadd(ctx):
    """Plain sets as inputs of the set operations (score 1 each)."""
    return Cmd(b"SADD", ctx.key(), *[ctx.choice(MEMBERS[:20])
                                     for _ in range(ctx.randint(1, 4))])


def g_encoding(ctx):
    return Cmd(b"OBJECT", b"ENCODING", ctx.choice((ctx.key(),) + tuple(LEX_KEYS)))


GENERATORS = [
    (14, g_zadd),
    (0.6, g_zadd_bulk),
    (4, g_zincrby),
    (5, g_zrem),
    (2, g_zcard),
    (4, g_zscore),
    (2, g_zmscore),
    (4, g_zrank),
    (4, g_zcount),
    (12, g_zrange),
    (3, g_zrangestore),
    (6, g_zrange_legacy),
    (3, g_zremrange),
    (5, g_lex_add),
    (6, g_lex_read),
    (1, g_lexcount_any),
    (4, g_zpop),
    (2, g_zmpop),
    (0.6, g_bzpop),
    (2, g_zrandmember),
    (3, g_zsetop_store),
    (3, g_zsetop),
    (2, g_zintercard),
    (1.5, g_zscan),
    (0.5, g_zscan_bad),
    (1.5, g_encoding),
    (1.5, g_sadd),
]

CREATORS = [
    (6, g_zadd),
    (1, g_zsetop_store),
]

MIX = {"keyspace": 0.06, "strings": 0.03}
