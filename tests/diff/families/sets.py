"""Sets: SADD/SREM and the rest of the Redis 7.0 set family, with both
encodings (intset / hashtable) exercised through CONFIG SET of
set-max-intset-entries, integer and non-integer members, and fills past the
limits.

Order: SMEMBERS, SINTER, SUNION and SDIFF have no defined order in Redis
(normalize.COMPARE sorts them); SSCAN is iterated to completion and the
collected members compared. Chance: SRANDMEMBER replies are compared by
shape, distinctness and -- when the reply is the whole set -- as sets; SPOP
changes the set by chance, so it is sent as an unmutated list that saves the
set first and restores it after (SUNIONSTORE), which keeps both servers in
the same state (the restored set is rebuilt from scratch, so both report the
same encoding too).

set-max-intset-entries is global and outlives a stream: g_config always
sets it and g_config_reset puts the default back; both servers always see
the same value.
"""

from gencore import Cmd, EDGE_INTS
import normalize

NAME = "sets"

# Members: small integers (intsets), int64 edges and near-integers (which
# must not make an intset), words, binary bytes, the empty member, and
# members longer than Goblin's 64-byte packed-form limit.
INTS = [b"%d" % i for i in range(-5, 25)]
WORDS = [b"a", b"b", b"c", b"x", b"y", b"z", b"m1", b"m2", b"a b",
         b"\x00\xff", b"\r\n", b"", b"*", b"[a]"]
LONG = [b"L" * 64, b"L" * 65, b"long:" + b"y" * 100]

# Many-member fills (to pass set-max-intset-entries and the packed form).
MANY_INTS = [b"%d" % i for i in range(1000)]
MANY_WORDS = [b"w%d" % i for i in range(700)]

# Keys of this family's own: SPOP's save/restore scratch key.
TMP = b"{sets}tmp"

_PATTERNS = [b"*", b"1*", b"?", b"[0-4]", b"w1*", b"*1", b"a*", b"",
             b"\\*", b"[a]", b"-*", b"*[", b"\x00*"]


def _member(ctx):
    r = ctx.rng.random()
    if r < 0.45:
        return ctx.choice(INTS)
    if r < 0.55:
        return ctx.choice(EDGE_INTS)
    if r < 0.85:
        return ctx.choice(WORDS)
    if r < 0.9:
        return ctx.choice(LONG)
    if r < 0.95:
        return ctx.choice(MANY_WORDS)
    return ctx.word(1, 8)


def _members(ctx, lo=1, hi=5, ints=None):
    if ints is None:
        ints = ctx.chance(0.4)
    n = ctx.randint(lo, hi)
    if ints:
        return [ctx.choice(INTS) for _ in range(n)]
    return [_member(ctx) for _ in range(n)]


def _key(ctx):
    return ctx.key()


def _keys(ctx, lo=1, hi=4):
    return [_key(ctx) for _ in range(ctx.randint(lo, hi))]


# -- writes --------------------------------------------------------------------

def g_sadd(ctx):
    return Cmd(b"SADD", _key(ctx), *_members(ctx))


def g_sfill(ctx):
    """Many members at once: crosses set-max-intset-entries (512) and the
    packed form's 64 members."""
    k = _key(ctx)
    pool = MANY_INTS if ctx.chance(0.6) else MANY_WORDS
    n = ctx.choice((5, 30, 64, 65, 100, 511, 512, 513, 600))
    n = min(n, len(pool))
    start = ctx.randint(0, len(pool) - n)
    return [Cmd(b"SADD", k, *pool[start:start + n]),
            Cmd(b"OBJECT", b"ENCODING", k), Cmd(b"SCARD", k)]


def g_srem(ctx):
    return Cmd(b"SREM", _key(ctx), *_members(ctx, 1, 4))


def g_srem_all(ctx):
    """Remove the only member: the key must go away."""
    k = _key(ctx)
    m = _member(ctx)
    return [Cmd(b"DEL", k), Cmd(b"SADD", k, m), Cmd(b"SREM", k, m, m),
            Cmd(b"EXISTS", k)]


def g_smove(ctx):
    k1, k2 = _key(ctx), _key(ctx)
    m = ctx.choice(INTS) if ctx.chance(0.5) else _member(ctx)
    return [Cmd(b"SMOVE", k1, k2, m), Cmd(b"OBJECT", b"ENCODING", k2)]


# -- reads ---------------------------------------------------------------------

def g_smembers(ctx):
    return Cmd(b"SMEMBERS", _key(ctx))


def g_sismember(ctx):
    return Cmd(b"SISMEMBER", _key(ctx), _member(ctx))


def g_smismember(ctx):
    return Cmd(b"SMISMEMBER", _key(ctx), *_members(ctx, 1, 5))


def g_scard(ctx):
    return Cmd(b"SCARD", _key(ctx))


def g_encoding(ctx):
    return Cmd(b"OBJECT", b"ENCODING", _key(ctx))


# -- multi-key operations ------------------------------------------------------

def g_setop(ctx):
    name = ctx.choice((b"SINTER", b"SUNION", b"SDIFF"))
    return Cmd(name, *_keys(ctx))


def g_setop_store(ctx):
    name = ctx.choice((b"SINTERSTORE", b"SUNIONSTORE", b"SDIFFSTORE"))
    dst = _key(ctx)
    return [Cmd(name, dst, *_keys(ctx)), Cmd(b"OBJECT", b"ENCODING", dst),
            Cmd(b"SMEMBERS", dst), Cmd(b"TYPE", dst)]


def g_sdiff_algorithms(ctx):
    """SDIFFSTORE of a big first set minus small ones, with a low intset
    limit: the result's encoding shows which of Redis's two algorithms ran
    (copying the first set passes the limit on the way)."""
    a, b, d = _key(ctx), _key(ctx), _key(ctx)
    n = ctx.randint(6, 14)
    m = ctx.randint(1, n - 2)
    reps = ctx.randint(1, 8)
    limit = b"%d" % ctx.randint(n - m, n)
    return [Cmd(b"CONFIG", b"SET", b"set-max-intset-entries", limit),
            Cmd(b"DEL", a, b),
            Cmd(b"SADD", a, *INTS[:n]), Cmd(b"SADD", b, *INTS[:m]),
            Cmd(b"SDIFFSTORE", d, a, *([b] * reps)),
            Cmd(b"OBJECT", b"ENCODING", d),
            Cmd(b"CONFIG", b"SET", b"set-max-intset-entries", b"512")]


def g_sintercard(ctx):
    keys = _keys(ctx)
    r = ctx.rng.random()
    if r < 0.8:
        args = [b"%d" % len(keys)] + keys
        if ctx.chance(0.5):
            args += [ctx.opt(b"LIMIT"), b"%d" % ctx.randint(0, 5)]
        return Cmd(b"SINTERCARD", *args)
    bad = ctx.choice(([b"0"], [b"-1"], [b"x"], [b"%d" % (len(keys) + 1)],
                      [b"%d" % len(keys), b"LIMIT"],
                      [b"%d" % len(keys), b"LIMIT", b"-1"],
                      [b"%d" % len(keys), b"LIMIT", b"x"],
                      [b"%d" % len(keys), b"FOO", b"1"],
                      [b"9223372036854775807"], [b"9223372036854775808"]))
    if len(bad) == 1:
        return [Cmd(b"SINTERCARD", bad[0], *keys)]
    return [Cmd(b"SINTERCARD", bad[0], *keys, *bad[1:])]


# -- chance: SRANDMEMBER and SPOP ----------------------------------------------------

def _distinct(node):
    vs = [x.v for x in node.v]
    return len(set(vs)) == len(vs)


def _rand_compare(count):
    """SRANDMEMBER: same shape; distinct members for a positive count; a
    reply shorter than a positive count is the whole set (compared as a
    set)."""
    def cmp(a, b):
        if a.raw == b.raw:
            return True
        if a.is_error() or b.is_error():
            return False
        if a.t != b.t or (a.v is None) != (b.v is None):
            return False
        if not a.is_aggregate():
            return True
        if len(a.v) != len(b.v):
            return False
        if any(x.t != "$" or x.v is None for x in a.v + b.v):
            return False
        if count is None or count < 0:
            return True
        if not _distinct(a) or not _distinct(b):
            return False
        if len(a.v) < count:
            return normalize.sorted_elements(a, b)
        return True
    cmp.__name__ = "srandmember(%r)" % (count,)
    return cmp


def g_srandmember(ctx):
    k = _key(ctx)
    r = ctx.rng.random()
    if r < 0.2:
        return [Cmd(b"SRANDMEMBER", k, compare=_rand_compare(None))]
    if r < 0.9:
        n = ctx.choice((0, 1, 2, 3, 5, 10, 30, 1000, -1, -2, -5, -20))
        return [Cmd(b"SRANDMEMBER", k, b"%d" % n, compare=_rand_compare(n))]
    bad = ctx.choice(([b"x"], [b"1.5"], [b""], [b"-9223372036854775808"],
                      [b"9223372036854775808"], [b"1", b"2"], [b"x", b"y"]))
    return [Cmd(b"SRANDMEMBER", k, *bad)]


def _pop_compare(count):
    """SPOP: same shape, distinct members; popping at least the whole set
    returns it (compared as a set)."""
    def cmp(a, b):
        if a.raw == b.raw:
            return True
        if a.is_error() or b.is_error():
            return False
        if a.t != b.t or (a.v is None) != (b.v is None):
            return False
        if not a.is_aggregate():
            return True
        if len(a.v) != len(b.v):
            return False
        if not _distinct(a) or not _distinct(b):
            return False
        if count is not None and len(a.v) < count:
            return normalize.sorted_elements(a, b)
        return True
    cmp.__name__ = "spop(%r)" % (count,)
    return cmp


def g_spop(ctx):
    """SPOP between a save and a restore of the set, so that the state
    after the list does not depend on chance. What SPOP replied and how
    many members remained are compared."""
    k = _key(ctx)
    r = ctx.rng.random()
    if r < 0.3:
        pop = Cmd(b"SPOP", k, compare=_pop_compare(None))
        count = None
    elif r < 0.9:
        count = ctx.choice((0, 1, 2, 3, 5, 10, 30, 100, 1000))
        pop = Cmd(b"SPOP", k, b"%d" % count, compare=_pop_compare(count))
    else:
        bad = ctx.choice(([b"-1"], [b"x"], [b"1.5"], [b"1", b"2"],
                          [b"9223372036854775808"]))
        pop = Cmd(b"SPOP", k, *bad)
    return [Cmd(b"DEL", TMP), Cmd(b"SUNIONSTORE", TMP, k), pop,
            Cmd(b"SCARD", k), Cmd(b"SUNIONSTORE", k, TMP), Cmd(b"DEL", TMP)]


def g_spop_all(ctx):
    """SPOP that empties the set is deterministic: reply and deletion."""
    k = _key(ctx)
    ms = _members(ctx, 1, 4)
    return [Cmd(b"DEL", k), Cmd(b"SADD", k, *ms),
            Cmd(b"SPOP", k, b"%d" % ctx.choice((len(ms), 100)),
                compare=normalize.sorted_elements),
            Cmd(b"EXISTS", k)]


# -- SSCAN ---------------------------------------------------------------------

def g_sscan(ctx):
    args = [b"SSCAN", _key(ctx), b"0"]
    opts = []
    if ctx.chance(0.5):
        opts.append([ctx.opt(b"MATCH"), ctx.choice(_PATTERNS)])
    if ctx.chance(0.5):
        opts.append([ctx.opt(b"COUNT"), b"%d" % ctx.randint(1, 40)])
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return Cmd(*args, scan=(2, False))


def g_sscan_bad(ctx):
    """Invalid SSCAN calls, as unmutated lists (see hashes.g_hscan_bad for
    why a mutated cursor is avoided)."""
    k = _key(ctx)
    if ctx.chance(0.3):
        return [Cmd(b"SSCAN", k, ctx.choice((b"abc", b"1x", b" 1", b"1.0",
                                             b"18446744073709551616")))]
    opt = ctx.choice(([b"COUNT", b"0"], [b"COUNT", b"-1"], [b"COUNT", b"x"],
                      [b"COUNT"], [b"MATCH"], [b"TYPE", b"set"],
                      [b"FOO", b"1"], [b"MATCH", b"*", b"COUNT"]))
    return [Cmd(b"SSCAN", k, b"0", *opt)]


# -- settings and other types ----------------------------------------------------

def g_config(ctx):
    v = ctx.choice((b"0", b"1", b"3", b"5", b"16", b"64", b"512", b"512"))
    return Cmd(b"CONFIG", b"SET", b"set-max-intset-entries", v)


def g_config_reset(ctx):
    return Cmd(b"CONFIG", b"SET", b"set-max-intset-entries", b"512")


def g_other_type(ctx):
    """A string key among the set keys: WRONGTYPE for set commands."""
    return Cmd(b"SET", _key(ctx), ctx.small_val())


def g_copy(ctx):
    """COPY of a set is a deep copy: change the copy, read the original."""
    k1, k2 = _key(ctx), _key(ctx)
    return [Cmd(b"COPY", k1, k2, b"REPLACE"), Cmd(b"SADD", k2, b"changed"),
            Cmd(b"SREM", k2, b"1", b"a"), Cmd(b"SMEMBERS", k1),
            Cmd(b"OBJECT", b"ENCODING", k2)]


GENERATORS = [
    (14, g_sadd),
    (1.5, g_sfill),
    (6, g_srem),
    (1, g_srem_all),
    (4, g_smove),
    (5, g_smembers),
    (5, g_sismember),
    (3, g_smismember),
    (3, g_scard),
    (3, g_encoding),
    (6, g_setop),
    (4, g_setop_store),
    (0.5, g_sdiff_algorithms),
    (3, g_sintercard),
    (4, g_srandmember),
    (3, g_spop),
    (1, g_spop_all),
    (3, g_sscan),
    (1, g_sscan_bad),
    (0.5, g_config),
    (0.5, g_config_reset),
    (0.8, g_other_type),
    (1, g_copy),
]

CREATORS = [
    (6, g_sadd),
    (1, g_smove),
]

MIX = {"keyspace": 0.06}
