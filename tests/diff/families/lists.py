"""Lists: LPUSH/RPUSH and the rest of the Redis 7.0 list family (the
non-blocking commands; the blocking ones only inside MULTI, where they
never block).

Values come from a small pool (so LREM, LPOS and LINSERT find their pivots)
mixed with integers of every width (stored compactly by Goblin, as text by
Redis's listpack: the replies must agree), binary values and long values
that force chunk splits. CONFIG SET list-max-listpack-size changes the
chunk geometry between commands; replies must not depend on it. The
setting is global and outlives a stream: g_config_reset puts the default
back, and both servers always see the same value.
"""

from gencore import Cmd

NAME = "lists"

POOL = [b"a", b"b", b"c", b"x", b"", b"1", b"-1", b"0", b"31", b"32",
        b"127", b"128", b"-128", b"007", b"-0", b"+1", b"9223372036854775807",
        b"-9223372036854775808", b"9223372036854775808", b"a b", b"\x00\xff",
        b"\r\n"]

INDEXES = [b"0", b"1", b"-1", b"2", b"-2", b"5", b"-5", b"100", b"-100",
           b"9223372036854775807", b"-9223372036854775808", b"4294967296",
           b"-4294967296"]


def _key(ctx):
    return ctx.key()


def _elem(ctx):
    r = ctx.rng.random()
    if r < 0.55:
        return ctx.choice(POOL)
    if r < 0.7:
        return ctx.int_str()
    if r < 0.8:
        return ctx.small_val()
    if r < 0.97:
        return ctx.val()
    # around the 127/128 and 16383/16384 prefix edges, and past 8 KiB chunks
    n = ctx.choice((127, 128, 129, 8191, 8192, 9000, 16383, 16384, 20000))
    return bytes(ctx.choice(b"abcdefgh") for _ in range(n))


def _index(ctx):
    r = ctx.rng.random()
    if r < 0.8:
        return b"%d" % ctx.randint(-30, 30)
    if r < 0.93:
        return ctx.choice(INDEXES)
    return ctx.bad_int()


def _count(ctx):
    r = ctx.rng.random()
    if r < 0.75:
        return b"%d" % ctx.randint(0, 12)
    if r < 0.85:
        return ctx.choice((b"-1", b"-9223372036854775808", b"9223372036854775807", b"1000000"))
    return ctx.bad_int()


def _side(ctx):
    r = ctx.rng.random()
    if r < 0.96:
        return ctx.opt(ctx.choice((b"LEFT", b"RIGHT")))
    return ctx.choice((b"MIDDLE", b"", b"LEF", b"0"))


# -- writes --------------------------------------------------------------------

def g_push(ctx):
    name = ctx.choice((b"LPUSH", b"RPUSH", b"LPUSH", b"RPUSH", b"LPUSHX",
                       b"RPUSHX"))
    return Cmd(name, _key(ctx), *[_elem(ctx) for _ in range(ctx.randint(1, 6))])


def g_fill(ctx):
    """A long list: several chunks at every list-max-listpack-size."""
    name = ctx.choice((b"LPUSH", b"RPUSH"))
    n = ctx.randint(50, 400)
    vals = [_elem(ctx) if ctx.chance(0.3) else ctx.choice(POOL)
            for _ in range(n)]
    return Cmd(name, _key(ctx), *vals)


def g_pop(ctx):
    name = ctx.choice((b"LPOP", b"RPOP"))
    if ctx.chance(0.5):
        return Cmd(name, _key(ctx))
    return Cmd(name, _key(ctx), _count(ctx))


def g_lset(ctx):
    idx = b"%d" % ctx.randint(-6, 6) if ctx.chance(0.6) else _index(ctx)
    return Cmd(b"LSET", _key(ctx), idx, _elem(ctx))


def g_linsert(ctx):
    where = ctx.opt(ctx.choice((b"BEFORE", b"AFTER"))) if ctx.chance(0.96) \
        else ctx.choice((b"MIDDLE", b""))
    return Cmd(b"LINSERT", _key(ctx), where, ctx.choice(POOL), _elem(ctx))


def g_lrem(ctx):
    r = ctx.rng.random()
    if r < 0.85:
        cnt = b"%d" % ctx.randint(-4, 4)
    elif r < 0.95:
        cnt = ctx.choice((b"-9223372036854775808", b"9223372036854775807"))
    else:
        cnt = ctx.bad_int()
    return Cmd(b"LREM", _key(ctx), cnt, ctx.choice(POOL))


def g_ltrim(ctx):
    r = ctx.rng.random()
    if r < 0.7:   # mild trims: the lists should not vanish too fast
        a, e = ctx.randint(0, 3), ctx.randint(-4, -1)
        return Cmd(b"LTRIM", _key(ctx), b"%d" % a, b"%d" % e)
    return Cmd(b"LTRIM", _key(ctx), _index(ctx), _index(ctx))


def g_lmove(ctx):
    if ctx.chance(0.25):
        return Cmd(b"RPOPLPUSH", _key(ctx), _key(ctx))
    return Cmd(b"LMOVE", _key(ctx), _key(ctx), _side(ctx), _side(ctx))


def g_lmpop(ctx):
    r = ctx.rng.random()
    keys = ctx.keys(1, 4)
    if r < 0.85:
        nk = b"%d" % len(keys)
    elif r < 0.92:
        nk = ctx.choice((b"0", b"-1", b"abc", b"9223372036854775807"))
    else:
        nk = b"%d" % (len(keys) + ctx.choice((-1, 1, 2)))
    args = [b"LMPOP", nk] + keys + [_side(ctx)]
    if ctx.chance(0.5):
        args += [ctx.opt(b"COUNT"), _count(ctx)]
    if ctx.chance(0.05):
        args += ctx.choice(([b"COUNT", b"2"], [b"COUNT"], [b"FOO"]))
    return Cmd(*args)


def g_blocking_in_multi(ctx):
    """Blocking pops inside MULTI answer at once (served or the timeout
    reply), which makes them deterministic."""
    k = _key(ctx)
    r = ctx.rng.random()
    t = ctx.choice((b"0", b"0.5", b"1", b"0.001"))
    if ctx.chance(0.08):
        t = ctx.choice((b"-1", b"abc", b"inf", b"1e400"))
    if r < 0.3:
        b = Cmd(ctx.choice((b"BLPOP", b"BRPOP")), k, *ctx.keys(0, 2), t)
    elif r < 0.55:
        b = Cmd(b"BLMOVE", k, _key(ctx), _side(ctx), _side(ctx), t)
    elif r < 0.7:
        b = Cmd(b"BRPOPLPUSH", k, _key(ctx), t)
    else:
        keys = [k] + ctx.keys(0, 2)
        args = [b"BLMPOP", t, b"%d" % len(keys)] + keys + [_side(ctx)]
        if ctx.chance(0.5):
            args += [b"COUNT", _count(ctx)]
        b = Cmd(*args)
    return [Cmd(b"MULTI"), b, Cmd(b"EXEC")]


def g_blocking_served(ctx):
    """Outside MULTI only where a key is certain to have elements."""
    k = _key(ctx)
    name = ctx.choice((b"BLPOP", b"BRPOP", b"BLMOVE", b"BLMPOP"))
    push = Cmd(b"RPUSH", k, _elem(ctx), _elem(ctx))
    if name == b"BLMOVE":
        b = Cmd(b"BLMOVE", k, _key(ctx), ctx.choice((b"LEFT", b"RIGHT")),
                ctx.choice((b"LEFT", b"RIGHT")), b"0")
    elif name == b"BLMPOP":
        b = Cmd(b"BLMPOP", b"0", b"2", _key(ctx), k,
                ctx.choice((b"LEFT", b"RIGHT")), b"COUNT", b"%d" % ctx.randint(1, 3))
        # the first key may hold another type: WRONGTYPE, never a block
    else:
        b = Cmd(name, k, b"0")
    return [Cmd(b"DEL", k), push, b]


# -- reads -----------------------------------------------------------------------

def g_llen(ctx):
    return Cmd(b"LLEN", _key(ctx))


def g_lindex(ctx):
    return Cmd(b"LINDEX", _key(ctx), _index(ctx))


def g_lrange(ctx):
    r = ctx.rng.random()
    if r < 0.4:
        return Cmd(b"LRANGE", _key(ctx), b"0", b"-1")
    return Cmd(b"LRANGE", _key(ctx), _index(ctx), _index(ctx))


def g_lpos(ctx):
    args = [b"LPOS", _key(ctx), ctx.choice(POOL)]
    opts = []
    if ctx.chance(0.5):
        r = ctx.rng.random()
        rank = b"%d" % ctx.choice((1, 2, 3, -1, -2, -3)) if r < 0.85 else \
            ctx.choice((b"0", b"-9223372036854775808", b"9223372036854775807", b"abc"))
        opts.append([ctx.opt(b"RANK"), rank])
    if ctx.chance(0.4):
        opts.append([ctx.opt(b"COUNT"), _count(ctx)])
    if ctx.chance(0.3):
        opts.append([ctx.opt(b"MAXLEN"), _count(ctx)])
    if ctx.chance(0.04):
        opts.append(ctx.choice(([b"RANK"], [b"FOO", b"1"], [b"COUNT"])))
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return Cmd(*args)


def g_encoding(ctx):
    return Cmd(b"OBJECT", b"ENCODING", _key(ctx))


def g_type(ctx):
    return Cmd(b"TYPE", _key(ctx))


# -- settings and other types ----------------------------------------------------

def g_config(ctx):
    v = ctx.choice((b"-1", b"-2", b"-3", b"-5", b"-6", b"0", b"1", b"2", b"4",
                    b"128"))
    return Cmd(b"CONFIG", b"SET", b"list-max-listpack-size", v)


def g_config_reset(ctx):
    return Cmd(b"CONFIG", b"SET", b"list-max-listpack-size", b"-2")


def g_other_type(ctx):
    """A string key among the list keys: WRONGTYPE for list commands."""
    return Cmd(b"SET", _key(ctx), ctx.small_val())


def g_copy(ctx):
    """COPY of a list is a deep copy: change the copy, read the original."""
    k1, k2 = _key(ctx), _key(ctx)
    return [Cmd(b"COPY", k1, k2, b"REPLACE"), Cmd(b"RPUSH", k2, b"changed"),
            Cmd(b"LRANGE", k1, b"0", b"-1"), Cmd(b"LRANGE", k2, b"-3", b"-1")]


GENERATORS = [
    (16, g_push),
    (1, g_fill),
    (10, g_pop),
    (4, g_lset),
    (5, g_linsert),
    (4, g_lrem),
    (2, g_ltrim),
    (5, g_lmove),
    (4, g_lmpop),
    (2, g_blocking_in_multi),
    (1, g_blocking_served),
    (4, g_llen),
    (6, g_lindex),
    (8, g_lrange),
    (6, g_lpos),
    (1, g_encoding),
    (1, g_type),
    (0.5, g_config),
    (0.5, g_config_reset),
    (0.8, g_other_type),
    (1, g_copy),
]

CREATORS = [
    (6, g_push),
    (1, g_lmove),
]

MIX = {"keyspace": 0.06}
