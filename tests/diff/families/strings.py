"""Strings: GET/SET and friends, counters, ranges, bit operations, LCS."""

from gencore import Cmd

NAME = "strings"


# -- expiry option helpers ---------------------------------------------------

def _future_expiry(ctx):
    """A valid future expiry option for SET/GETEX."""
    kind = ctx.choice((b"EX", b"PX", b"EXAT", b"PXAT"))
    val = {b"EX": ctx.rel_s, b"PX": ctx.rel_ms, b"EXAT": ctx.abs_s,
           b"PXAT": ctx.abs_ms}[kind]()
    return [ctx.opt(kind), val]


def _bad_expiry(ctx):
    kind = ctx.choice((b"EX", b"PX", b"EXAT", b"PXAT"))
    r = ctx.rng.random()
    if r < 0.15:
        return [ctx.opt(kind)]                    # missing argument
    return [ctx.opt(kind), ctx.bad_time(rel_ms=(kind == b"PX"))]


# -- plain get/set -------------------------------------------------------------

def g_get(ctx):
    return Cmd(b"GET", ctx.key())


def g_set(ctx):
    args = [b"SET", ctx.key(), ctx.val()]
    opts = []
    r = ctx.rng.random()
    if r < 0.35:
        opts.append(_future_expiry(ctx))
    elif r < 0.45:
        opts.append([ctx.opt(b"KEEPTTL")])
    elif r < 0.52:
        opts.append(_bad_expiry(ctx))
    if ctx.chance(0.25):
        opts.append([ctx.opt(ctx.choice((b"NX", b"XX")))])
    if ctx.chance(0.25):
        opts.append([ctx.opt(b"GET")])
    if ctx.chance(0.06):
        # conflicting or duplicated options
        opts.append(ctx.choice(([b"NX"], [b"XX"], [b"KEEPTTL"], [b"GET"],
                                _future_expiry(ctx), [b"PERSIST"], [b"FOO"],
                                [b"EX", b"10000000", b"EXTRA"])))
    ctx.rng.shuffle(opts)
    for o in opts:
        args.extend(o)
    return Cmd(*args)


def g_set_past(ctx):
    """SET with an absolute expiry in the past: the key is logically gone.
    Followed by a lookup so that no logically expired key stays behind."""
    k = ctx.key()
    if ctx.chance(0.5):
        exp = [ctx.opt(b"EXAT"), ctx.past_abs_s()]
    else:
        exp = [ctx.opt(b"PXAT"), ctx.past_abs_ms()]
    args = [b"SET", k, ctx.val()] + exp
    if ctx.chance(0.3):
        args.append(ctx.opt(b"GET"))
    if ctx.chance(0.2):
        args.append(ctx.opt(ctx.choice((b"NX", b"XX"))))
    look = ctx.choice((b"EXISTS", b"GET", b"TTL", b"TYPE", b"STRLEN"))
    return [Cmd(*args), Cmd(look, k)]


def g_setnx(ctx):
    return Cmd(b"SETNX", ctx.key(), ctx.val())


def g_setex(ctx):
    name = ctx.choice((b"SETEX", b"PSETEX"))
    if ctx.chance(0.8):
        t = ctx.rel_s() if name == b"SETEX" else ctx.rel_ms()
    else:
        t = ctx.bad_time(rel_ms=(name == b"PSETEX"))
    return Cmd(name, ctx.key(), t, ctx.val())


def g_getset(ctx):
    return Cmd(b"GETSET", ctx.key(), ctx.val())


def g_getdel(ctx):
    return Cmd(b"GETDEL", ctx.key())


def g_getex(ctx):
    args = [b"GETEX", ctx.key()]
    r = ctx.rng.random()
    if r < 0.4:
        args += _future_expiry(ctx)
    elif r < 0.55:
        args.append(ctx.opt(b"PERSIST"))
    elif r < 0.65:
        # a past absolute time deletes the key at once (GETEX does that)
        if ctx.chance(0.5):
            args += [ctx.opt(b"EXAT"), ctx.past_abs_s()]
        else:
            args += [ctx.opt(b"PXAT"), ctx.past_abs_ms()]
    elif r < 0.75:
        args += _bad_expiry(ctx)
    elif r < 0.8:
        args += ctx.choice(([b"PERSIST", b"EX", b"100000000"],
                            _future_expiry(ctx) + [b"PERSIST"],
                            [b"KEEPTTL"], [b"NX"], [b"PERSIST", b"PERSIST"]))
    return Cmd(*args)


def g_mget(ctx):
    return Cmd(b"MGET", *ctx.keys(1, 6))


def g_mset(ctx):
    name = ctx.choice((b"MSET", b"MSET", b"MSETNX"))
    args = [name]
    for _ in range(ctx.randint(1, 4)):
        args += [ctx.key(), ctx.val()]
    if ctx.chance(0.05):
        args.pop()
    return Cmd(*args)


# -- append / ranges -------------------------------------------------------------

def g_append(ctx):
    return Cmd(b"APPEND", ctx.key(), ctx.small_val())


def g_strlen(ctx):
    return Cmd(b"STRLEN", ctx.key())


def _idx(ctx):
    r = ctx.rng.random()
    if r < 0.8:
        return b"%d" % ctx.randint(-25, 40)
    if r < 0.92:
        return ctx.choice((b"9223372036854775807", b"-9223372036854775808",
                           b"4294967296", b"-4294967296", b"2147483647",
                           b"-2147483648"))
    return ctx.bad_int()


def g_getrange(ctx):
    name = ctx.choice((b"GETRANGE", b"GETRANGE", b"SUBSTR"))
    return Cmd(name, ctx.key(), _idx(ctx), _idx(ctx))


def g_setrange(ctx):
    r = ctx.rng.random()
    val = ctx.small_val() if ctx.chance(0.85) else ctx.val()
    if r < 0.8:
        off = b"%d" % ctx.randint(0, 64)
    elif r < 0.88:
        off = b"%d" % ctx.randint(65, 4096)
    elif r < 0.94:
        off = ctx.choice((b"-1", b"-9223372036854775808"))
    elif r < 0.97:
        # beyond proto-max-bulk-len (512 MiB): an error, or with an empty
        # value a no-op.  Never a valid write (it would allocate 512 MiB).
        off = ctx.choice((b"536870912", b"536870911", b"9223372036854775807",
                          b"4294967296", b"9223372036854775806"))
        if ctx.chance(0.3):
            val = b""
        elif len(val) < 2:
            val = b"xy"
    else:
        off = ctx.bad_int()
    return Cmd(b"SETRANGE", ctx.key(), off, val)


# -- counters ------------------------------------------------------------------

def g_incr(ctx):
    return Cmd(ctx.choice((b"INCR", b"DECR")), ctx.key())


def g_incrby(ctx):
    name = ctx.choice((b"INCRBY", b"DECRBY"))
    r = ctx.rng.random()
    if r < 0.7:
        n = b"%d" % ctx.randint(-1000, 1000)
    elif r < 0.85:
        n = ctx.choice((b"9223372036854775807", b"-9223372036854775808",
                        b"9223372036854775806", b"-9223372036854775807",
                        b"4611686018427387904", b"-1", b"0"))
    else:
        n = ctx.bad_int()
    return Cmd(name, ctx.key(), n)


def g_incrbyfloat(ctx):
    r = ctx.rng.random()
    if r < 0.5:
        n = b"%d" % ctx.randint(-100, 100) if ctx.chance(0.3) else \
            b"%.2f" % ctx.rng.uniform(-100, 100)
    else:
        n = ctx.float_str() if ctx.chance(0.8) else ctx.bad_int()
    return Cmd(b"INCRBYFLOAT", ctx.key(), n)


def g_counter_set(ctx):
    """Put a number into a key so counters have something to work on."""
    k = ctx.key()
    r = ctx.rng.random()
    if r < 0.5:
        v = b"%d" % ctx.randint(-50, 50)
    elif r < 0.75:
        v = ctx.choice((b"9223372036854775807", b"-9223372036854775808",
                        b"9223372036854775806", b"-9223372036854775807",
                        b"1.5", b"-0.0", b"1e308", b"3.0", b"10.5e2"))
    else:
        v = ctx.float_str()
    return Cmd(b"SET", k, v)


# -- bits ----------------------------------------------------------------------

def _bitoff_write(ctx):
    r = ctx.rng.random()
    if r < 0.85:
        return b"%d" % ctx.randint(0, 200)
    if r < 0.93:
        return b"%d" % ctx.randint(201, 20000)
    if r < 0.97:
        return ctx.choice((b"-1", b"4294967296", b"9223372036854775807",
                           b"18446744073709551616"))
    return ctx.bad_int()


def _bitoff_read(ctx):
    r = ctx.rng.random()
    if r < 0.85:
        return b"%d" % ctx.randint(0, 300)
    if r < 0.93:
        return ctx.choice((b"4294967295", b"4294967294", b"100000000"))
    if r < 0.97:
        return ctx.choice((b"-1", b"4294967296"))
    return ctx.bad_int()


def g_setbit(ctx):
    r = ctx.rng.random()
    bit = b"%d" % ctx.randint(0, 1) if r < 0.92 else \
        ctx.choice((b"2", b"-1", b"x", b"", b"01", b"1 "))
    return Cmd(b"SETBIT", ctx.key(), _bitoff_write(ctx), bit)


def g_getbit(ctx):
    return Cmd(b"GETBIT", ctx.key(), _bitoff_read(ctx))


def _unit(ctx):
    return ctx.opt(ctx.choice((b"BYTE", b"BIT")))


def g_bitcount(ctx):
    args = [b"BITCOUNT", ctx.key()]
    r = ctx.rng.random()
    if r < 0.3:
        pass
    elif r < 0.7:
        args += [_idx(ctx), _idx(ctx)]
    elif r < 0.9:
        args += [_idx(ctx), _idx(ctx), _unit(ctx)]
    else:
        args += ctx.choice(([_idx(ctx)], [b"0", b"1", b"WORD"],
                            [b"0", b"-1", b"BIT", b"x"]))
    return Cmd(*args)


def g_bitpos(ctx):
    r = ctx.rng.random()
    bit = b"%d" % ctx.randint(0, 1) if r < 0.93 else \
        ctx.choice((b"2", b"-1", b"x"))
    args = [b"BITPOS", ctx.key(), bit]
    n = ctx.randint(0, 3)
    if n >= 1:
        args.append(_idx(ctx))
    if n >= 2:
        args.append(_idx(ctx))
    if n >= 3:
        args.append(_unit(ctx) if ctx.chance(0.9) else b"WORD")
    if ctx.chance(0.02):
        args.append(b"extra")
    return Cmd(*args)


def g_bitop(ctx):
    r = ctx.rng.random()
    op = ctx.opt(ctx.choice((b"AND", b"OR", b"XOR", b"NOT"))) if r < 0.95 \
        else ctx.choice((b"NAND", b"", b"ANDX"))
    if op.upper() == b"NOT" and ctx.chance(0.85):
        srcs = [ctx.key()]
    else:
        srcs = ctx.keys(1, 4)
    return Cmd(b"BITOP", op, ctx.key(), *srcs)


_INT_TYPES = [b"i%d" % n for n in (1, 2, 3, 5, 7, 8, 13, 16, 31, 32, 33, 63, 64)]
_UINT_TYPES = [b"u%d" % n for n in (1, 2, 4, 7, 8, 9, 15, 16, 31, 32, 62, 63)]
_BAD_TYPES = [b"u64", b"i65", b"i0", b"u0", b"x8", b"8", b"", b"I8", b"U8",
              b"i-1", b"i08"]


def _bf_type(ctx):
    r = ctx.rng.random()
    if r < 0.47:
        return ctx.choice(_INT_TYPES)
    if r < 0.95:
        return ctx.choice(_UINT_TYPES)
    return ctx.choice(_BAD_TYPES)


def _bf_off(ctx, write):
    r = ctx.rng.random()
    if r < 0.6:
        return b"%d" % ctx.randint(0, 128)
    if r < 0.9:
        return b"#%d" % ctx.randint(0, 16)
    if r < 0.95 and not write:
        return ctx.choice((b"4294967295", b"4294967232", b"#536870911"))
    return ctx.choice((b"-1", b"#-1", b"4294967296", b"abc", b"#", b"# 1",
                       b"1.0", b"#x"))


def _bf_val(ctx):
    r = ctx.rng.random()
    if r < 0.6:
        return b"%d" % ctx.randint(-300, 300)
    if r < 0.9:
        return b"%d" % ctx.randint(-(1 << 63), (1 << 63) - 1)
    return ctx.bad_int()


def _bf_ops(ctx, ro):
    ops = []
    for _ in range(ctx.randint(1, 4)):
        r = ctx.rng.random()
        if r < 0.4 or ro:
            ops += [ctx.opt(b"GET"), _bf_type(ctx), _bf_off(ctx, False)]
        elif r < 0.65:
            ops += [ctx.opt(b"SET"), _bf_type(ctx), _bf_off(ctx, True),
                    _bf_val(ctx)]
        elif r < 0.85:
            ops += [ctx.opt(b"INCRBY"), _bf_type(ctx), _bf_off(ctx, True),
                    _bf_val(ctx)]
        elif r < 0.97:
            ops += [ctx.opt(b"OVERFLOW"),
                    ctx.opt(ctx.choice((b"WRAP", b"SAT", b"FAIL")))]
        else:
            ops += ctx.choice(([b"OVERFLOW", b"NONE"], [b"GET", b"u8"],
                               [b"FOO", b"u8", b"0"], [b"OVERFLOW"]))
    return ops


def g_bitfield(ctx):
    args = [b"BITFIELD", ctx.key()]
    if ctx.chance(0.97):
        args += _bf_ops(ctx, False)
    return Cmd(*args)


def g_bitfield_ro(ctx):
    args = [b"BITFIELD_RO", ctx.key()]
    if ctx.chance(0.85):
        args += _bf_ops(ctx, True)
    else:
        args += _bf_ops(ctx, False)
    return Cmd(*args)


# -- LCS -----------------------------------------------------------------------
# LCS is O(len1 * len2) in time and memory; it runs on its own small keys,
# which only ever hold short values.

LCS_KEYS = [b"lcs:a", b"lcs:b", b"lcs:c", b"lcs:none"]


def g_lcs_set(ctx):
    k = ctx.choice(LCS_KEYS[:3])
    alphabet = ctx.choice((b"ab", b"abc", b"ACGT", b"abcdefgh", b"\x00\xff"))
    n = ctx.randint(0, 40)
    v = bytes(ctx.choice(alphabet) for _ in range(n))
    if ctx.chance(0.1):
        return Cmd(b"APPEND", k, v[:8])
    return Cmd(b"SET", k, v)


def g_lcs(ctx):
    k1 = ctx.choice(LCS_KEYS)
    k2 = ctx.choice(LCS_KEYS)
    args = [b"LCS", k1, k2]
    opts = []
    if ctx.chance(0.3):
        opts.append([ctx.opt(b"LEN")])
    if ctx.chance(0.5):
        opts.append([ctx.opt(b"IDX")])
    if ctx.chance(0.3):
        r = ctx.rng.random()
        mm = b"%d" % ctx.randint(0, 6) if r < 0.8 else \
            ctx.choice((b"-1", b"abc", b"9223372036854775807"))
        opts.append([ctx.opt(b"MINMATCHLEN"), mm])
    if ctx.chance(0.3):
        opts.append([ctx.opt(b"WITHMATCHLEN")])
    if ctx.chance(0.04):
        opts.append(ctx.choice(([b"MINMATCHLEN"], [b"FOO"], [b"LEN", b"LEN"])))
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return Cmd(*args)


GENERATORS = [
    (10, g_get),
    (12, g_set),
    (2, g_set_past),
    (2, g_setnx),
    (3, g_setex),
    (2, g_getset),
    (2, g_getdel),
    (4, g_getex),
    (3, g_mget),
    (3, g_mset),
    (3, g_append),
    (2, g_strlen),
    (3, g_getrange),
    (3, g_setrange),
    (4, g_incr),
    (3, g_incrby),
    (4, g_incrbyfloat),
    (4, g_counter_set),
    (4, g_setbit),
    (3, g_getbit),
    (3, g_bitcount),
    (3, g_bitpos),
    (3, g_bitop),
    (5, g_bitfield),
    (2, g_bitfield_ro),
    (2, g_lcs_set),
    (3, g_lcs),
]

# Generators that create keys of this family's type; the keyspace family
# mixes the CREATORS of every family in, so that TYPE, RENAME, COPY, MOVE,
# SCAN TYPE ... see every type that exists.
CREATORS = [
    (6, g_set),
    (2, g_mset),
    (1, g_setex),
    (1, g_append),
    (1, g_setbit),
    (1, g_incr),
]

# Fraction of this family's streams drawn from other families' generators.
MIX = {"keyspace": 0.08}
