"""Keyspace: DEL, EXISTS, TYPE, KEYS, SCAN, RENAME, MOVE, COPY, expiry,
databases."""

from gencore import Cmd

NAME = "keyspace"


def g_del(ctx):
    return Cmd(ctx.choice((b"DEL", b"UNLINK")), *ctx.keys(1, 4))


def g_exists(ctx):
    return Cmd(b"EXISTS", *ctx.keys(1, 5))


def g_touch(ctx):
    return Cmd(b"TOUCH", *ctx.keys(1, 4))


def g_type(ctx):
    return Cmd(b"TYPE", ctx.key())


_PATTERNS = [
    b"*", b"k*", b"k?", b"k[0-5]", b"k[^0-5]*", b"k[!0-5]", b"\\*", b"k\\*",
    b"[k]", b"\\[k\\]", b"*x", b"{t}*", b"", b"?", b"k1*", b"*[", b"[",
    b"k[", b"k[0-", b"[^a]*", b"*\\", b"K*", b"*:*", b"sp?ace", b"sp ace",
    b"\x00*", b"*\n", b"k[1-0]", b"k[a-]", b"[]", b"[]]*", b"**", b"*?*",
    b"?*?", b"[k-k]*", b"longer*", b"k1[01]", b"[\\]k]*", b"*1", b"\\k0",
]
_PATCH = b"k*?[]^\\-01{}tx:"


def _pattern(ctx):
    if ctx.chance(0.8):
        return ctx.choice(_PATTERNS)
    return bytes(ctx.choice(_PATCH) for _ in range(ctx.randint(1, 6)))


def g_keys(ctx):
    return Cmd(b"KEYS", _pattern(ctx))


_TYPES = (b"string", b"list", b"set", b"zset", b"hash", b"stream", b"none",
          b"STRING", b"foo", b"")


def g_scan(ctx):
    """SCAN from cursor 0 to completion; the collected set is compared."""
    args = [b"SCAN", b"0"]
    opts = []
    if ctx.chance(0.5):
        opts.append([ctx.opt(b"MATCH"), _pattern(ctx)])
    if ctx.chance(0.5):
        opts.append([ctx.opt(b"COUNT"), b"%d" % ctx.randint(1, 30)])
    if ctx.chance(0.3):
        opts.append([ctx.opt(b"TYPE"), ctx.choice(_TYPES)])
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return [Cmd(*args, scan=(1, False))]


def g_scan_bad(ctx):
    """Invalid SCAN calls: errors only, no cursor-dependent replies (a list,
    so that the driver never mutates them into valid calls)."""
    r = ctx.rng.random()
    if r < 0.3:
        return [Cmd(b"SCAN", ctx.choice((b"abc", b"1x", b" 1", b"1.0",
                                         b"18446744073709551616", b"+",
                                         b"-")))]
    opt = ctx.choice(([b"COUNT", b"0"], [b"COUNT", b"-1"], [b"COUNT", b"x"],
                      [b"COUNT"], [b"MATCH"], [b"TYPE"], [b"FOO", b"1"],
                      [b"COUNT", b"9223372036854775808"], [b"NOVALUES"]))
    return [Cmd(b"SCAN", b"0", *opt)]


def g_randomkey(ctx):
    return Cmd(b"RANDOMKEY")


def g_rename(ctx):
    name = ctx.choice((b"RENAME", b"RENAMENX"))
    k1 = ctx.key()
    k2 = k1 if ctx.chance(0.1) else ctx.key()
    return Cmd(name, k1, k2)


def g_move(ctx):
    return Cmd(b"MOVE", ctx.key(), ctx.db())


def g_copy(ctx):
    k1 = ctx.key()
    k2 = k1 if ctx.chance(0.08) else ctx.key()
    args = [b"COPY", k1, k2]
    opts = []
    if ctx.chance(0.4):
        opts.append([ctx.opt(b"DB"), ctx.db()])
    if ctx.chance(0.4):
        opts.append([ctx.opt(b"REPLACE")])
    if ctx.chance(0.04):
        opts.append(ctx.choice(([b"DB"], [b"FOO"], [b"REPLACE", b"x"])))
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return Cmd(*args)


def _expire_flags(ctx):
    r = ctx.rng.random()
    if r < 0.5:
        return []
    if r < 0.9:
        return [ctx.opt(ctx.choice((b"NX", b"XX", b"GT", b"LT")))]
    return ctx.choice(([b"NX", b"XX"], [b"GT", b"LT"], [b"NX", b"GT"],
                       [b"XX", b"GT"], [b"XX", b"LT"], [b"LT", b"XX"],
                       [b"FOO"], [b"GT", b"GT"], [b"NX", b"NX"]))


def g_expire(ctx):
    name = ctx.choice((b"EXPIRE", b"PEXPIRE", b"EXPIREAT", b"PEXPIREAT"))
    r = ctx.rng.random()
    if r < 0.75:
        t = {b"EXPIRE": ctx.rel_s, b"PEXPIRE": ctx.rel_ms,
             b"EXPIREAT": ctx.abs_s, b"PEXPIREAT": ctx.abs_ms}[name]()
    elif r < 0.88:
        # in the past: the key is deleted at once (if the flags allow)
        t = ctx.past_rel() if name in (b"EXPIRE", b"PEXPIRE") else \
            (ctx.past_abs_s() if name == b"EXPIREAT" else ctx.past_abs_ms())
    else:
        t = ctx.bad_time(rel_ms=(name == b"PEXPIRE"))
    return Cmd(name, ctx.key(), t, *_expire_flags(ctx))


def g_ttl(ctx):
    return Cmd(ctx.choice((b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME")),
               ctx.key())


def g_persist(ctx):
    return Cmd(b"PERSIST", ctx.key())


def g_dbsize(ctx):
    return Cmd(b"DBSIZE")


def g_select(ctx):
    return Cmd(b"SELECT", ctx.db())


def g_swapdb(ctx):
    return Cmd(b"SWAPDB", ctx.db(), ctx.db())


def g_flushdb(ctx):
    args = [b"FLUSHDB"]
    if ctx.chance(0.4):
        args.append(ctx.opt(ctx.choice((b"ASYNC", b"SYNC"))) if ctx.chance(0.9)
                    else ctx.choice((b"FOO", b"")))
    return Cmd(*args)


def g_flushall(ctx):
    args = [b"FLUSHALL"]
    if ctx.chance(0.4):
        args.append(ctx.opt(ctx.choice((b"ASYNC", b"SYNC"))) if ctx.chance(0.9)
                    else ctx.choice((b"FOO", b"")))
    return Cmd(*args)


GENERATORS = [
    (6, g_del),
    (5, g_exists),
    (2, g_touch),
    (4, g_type),
    (4, g_keys),
    (2, g_scan),
    (1, g_scan_bad),
    (2, g_randomkey),
    (5, g_rename),
    (4, g_move),
    (5, g_copy),
    (10, g_expire),
    (8, g_ttl),
    (3, g_persist),
    (4, g_dbsize),
    (4, g_select),
    (2, g_swapdb),
    (0.4, g_flushdb),
    (0.1, g_flushall),
]

# Fraction of commands taken from every family's CREATORS (keys of all
# existing types for TYPE, RENAME, COPY, MOVE, SCAN TYPE to work on).
MIX_CREATORS = 0.35
