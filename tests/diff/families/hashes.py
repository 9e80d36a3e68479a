"""Hashes: HSET/HGET and the rest of the Redis 7.0 hash family, with both
encodings (listpack / hashtable) exercised through CONFIG SET of
hash-max-listpack-entries / -value and through long fields and values.

The hash-max-listpack-* settings are global and outlive a stream (FLUSHALL
does not reset them): g_config always sets both and g_config_reset puts the
defaults back, so a stream replayed alone may start from other settings
than in the full run. Both servers always see the same settings, so their
replies have to agree either way.
"""

from gencore import Cmd
import normalize

NAME = "hashes"

# Fields: a small pool so that commands meet each other's fields, with the
# empty field, binary bytes, numbers, and fields longer than the default
# 64-byte listpack limit.
FIELDS = [b"f%d" % i for i in range(10)] + [
    b"", b"a b", b"\x00\xff\r\n", b"1", b"-1", b"n", b"F0", b"f*", b"[f]",
    b"x" * 65, b"long:" + b"y" * 70, b"x" * 64,
]

# Many-field hashes (to pass hash-max-listpack-entries).
MANY = [b"m%d" % i for i in range(700)]

_PATTERNS = [
    b"*", b"f*", b"f?", b"f[0-4]", b"f[^0-4]", b"*1", b"m1*", b"m?", b"",
    b"\\*", b"[f]", b"x*", b"*y", b"?", b"F*", b"f\\*", b"m[0-9][0-9]",
    b"*[", b"\x00*",
]


def _field(ctx):
    r = ctx.rng.random()
    if r < 0.85:
        return ctx.choice(FIELDS)
    if r < 0.93:
        return ctx.choice(MANY)
    return ctx.word(1, 10)


def _value(ctx):
    r = ctx.rng.random()
    if r < 0.55:
        return ctx.small_val()
    if r < 0.7:
        return ctx.int_str()
    if r < 0.78:
        return ctx.float_str()
    return ctx.val()


def _key(ctx):
    return ctx.key()


# -- writes --------------------------------------------------------------------

def _pairs(ctx, lo=1, hi=4):
    args = []
    for _ in range(ctx.randint(lo, hi)):
        args += [_field(ctx), _value(ctx)]
    return args


def g_hset(ctx):
    name = ctx.choice((b"HSET", b"HSET", b"HSET", b"HMSET"))
    args = [name, _key(ctx)] + _pairs(ctx)
    if ctx.chance(0.03):
        args.pop()                      # odd number of arguments
    return Cmd(*args)


def g_hsetnx(ctx):
    return Cmd(b"HSETNX", _key(ctx), _field(ctx), _value(ctx))


def g_hfill(ctx):
    """Many fields at once: crosses hash-max-listpack-entries."""
    n = ctx.choice((5, 17, 60, 130, 513, 520))
    start = ctx.randint(0, len(MANY) - n) if n < len(MANY) else 0
    args = [b"HSET", _key(ctx)]
    for f in MANY[start:start + n]:
        args += [f, b"%d" % ctx.randint(0, 999)]
    return [Cmd(*args), Cmd(b"OBJECT", b"ENCODING", args[1]),
            Cmd(b"HLEN", args[1])]


def g_hdel(ctx):
    fs = [_field(ctx) for _ in range(ctx.randint(1, 4))]
    return Cmd(b"HDEL", _key(ctx), *fs)


def g_hdel_all(ctx):
    """Delete every field of a small hash: the key must go away."""
    k = _key(ctx)
    return [Cmd(b"HSET", k, b"only", b"1"), Cmd(b"HDEL", k, b"only", b"only"),
            Cmd(b"EXISTS", k), Cmd(b"TYPE", k)]


_INCRS = [b"1", b"-1", b"0", b"100", b"-100", b"9223372036854775807",
          b"-9223372036854775808", b"9223372036854775806",
          b"4611686018427387904", b"-4611686018427387905"]


def g_hincrby(ctx):
    r = ctx.rng.random()
    if r < 0.6:
        n = b"%d" % ctx.randint(-1000, 1000)
    elif r < 0.85:
        n = ctx.choice(_INCRS)
    else:
        n = ctx.bad_int()
    return Cmd(b"HINCRBY", _key(ctx), _field(ctx), n)


def g_hincrbyfloat(ctx):
    r = ctx.rng.random()
    if r < 0.5:
        n = b"%.2f" % ctx.rng.uniform(-100, 100) if ctx.chance(0.7) else \
            b"%d" % ctx.randint(-100, 100)
    elif r < 0.85:
        n = ctx.float_str()
    elif r < 0.95:
        n = ctx.choice((b"1e300", b"-1e300", b"1e4000", b"1.7976931348623157e308",
                        b"0.1", b"1e-300", b"inf", b"-inf", b"nan"))
    else:
        n = ctx.bad_int()
    return Cmd(b"HINCRBYFLOAT", _key(ctx), _field(ctx), n)


def g_hcounter_set(ctx):
    """Put numbers and near-numbers into fields so counters work on them."""
    v = ctx.choice((b"0", b"10", b"-5", b"9223372036854775807",
                    b"-9223372036854775808", b"9223372036854775808", b"1.5",
                    b"-0", b"+1", b"007", b" 1", b"1 ", b"abc", b"", b"1e3",
                    b"3.0", b"inf", b"-inf", b"nan", b"0x10", b"1e400",
                    b"10.50", b"-0.0"))
    return Cmd(b"HSET", _key(ctx), _field(ctx), v)


def g_hincrbyfloat_grow(ctx):
    """A float that grows past 64 bytes: listpack -> hashtable."""
    k = _key(ctx)
    f = ctx.choice(FIELDS[:4])
    return [Cmd(b"HSET", k, f, b"1"),
            Cmd(b"HINCRBYFLOAT", k, f, ctx.choice((b"1e70", b"1e100",
                                                   b"1e60", b"12345.678"))),
            Cmd(b"OBJECT", b"ENCODING", k)]


# -- reads ---------------------------------------------------------------------

def g_hget(ctx):
    return Cmd(b"HGET", _key(ctx), _field(ctx))


def g_hmget(ctx):
    return Cmd(b"HMGET", _key(ctx), *[_field(ctx) for _ in range(ctx.randint(1, 5))])


def g_hgetall(ctx):
    return Cmd(ctx.choice((b"HGETALL", b"HKEYS", b"HVALS")), _key(ctx))


def g_hlen(ctx):
    return Cmd(b"HLEN", _key(ctx))


def g_hstrlen(ctx):
    return Cmd(b"HSTRLEN", _key(ctx), _field(ctx))


def g_hexists(ctx):
    return Cmd(b"HEXISTS", _key(ctx), _field(ctx))


def g_encoding(ctx):
    return Cmd(b"OBJECT", b"ENCODING", _key(ctx))


def g_type(ctx):
    return Cmd(b"TYPE", _key(ctx))


# -- HRANDFIELD ----------------------------------------------------------------

def _fields(node, withvalues):
    """Fields of a HRANDFIELD count reply (flat, flat pairs or RESP3 pairs);
    None when malformed."""
    if any(x.is_aggregate() for x in node.v):
        if not all(x.is_aggregate() and len(x.v) == 2 and
                   all(y.t == "$" and y.v is not None for y in x.v)
                   for x in node.v):
            return None
        return [x.v[0].v for x in node.v]
    if any(x.t != "$" or x.v is None for x in node.v):
        return None
    if withvalues:
        if len(node.v) % 2:
            return None
        return [node.v[i].v for i in range(0, len(node.v), 2)]
    return [x.v for x in node.v]


def _rand_compare(count, withvalues):
    """Replies chosen by chance: the same shape; distinct fields for a
    positive count; a reply with fewer fields than a positive count is the
    whole hash and is compared as a set."""
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
        if [x.is_aggregate() for x in a.v] != [x.is_aggregate() for x in b.v]:
            return False
        fa, fb = _fields(a, withvalues), _fields(b, withvalues)
        if fa is None or fb is None:
            return False
        if count is None or count < 0:
            return True
        if len(set(fa)) != len(fa) or len(set(fb)) != len(fb):
            return False
        if len(fa) < count:
            if withvalues and a.v and not a.v[0].is_aggregate():
                return normalize.sorted_pairs(a, b)
            return normalize.sorted_elements(a, b)
        return True
    cmp.__name__ = "hrandfield(%r,%r)" % (count, withvalues)
    return cmp


def g_hrandfield(ctx):
    """Random picks are sent as lists (never mutated): their comparator
    knows the count and WITHVALUES of the command as generated."""
    k = _key(ctx)
    r = ctx.rng.random()
    if r < 0.2:
        return [Cmd(b"HRANDFIELD", k, compare=_rand_compare(None, False))]
    if r < 0.92:
        n = ctx.choice((0, 1, 2, 3, 5, 10, 30, 1000, -1, -2, -5, -20))
        withvalues = ctx.chance(0.5)
        args = [b"HRANDFIELD", k, b"%d" % n]
        if withvalues:
            args.append(ctx.opt(b"WITHVALUES"))
        return [Cmd(*args, compare=_rand_compare(n, withvalues))]
    # errors (deterministic)
    bad = ctx.choice(([b"x"], [b"1.5"], [b""], [b"-9223372036854775808"],
                      [b"-9223372036854775808", b"WITHVALUES"],
                      [b"-4611686018427387904", b"WITHVALUES"],
                      [b"9223372036854775808"], [b"1", b"WITHVALUE"],
                      [b"1", b"WITHVALUES", b"x"], [b"x", b"WITHVALUES"],
                      [b"1", b"foo"]))
    return [Cmd(b"HRANDFIELD", k, *bad)]


# -- HSCAN ---------------------------------------------------------------------

def g_hscan(ctx):
    """HSCAN from cursor 0 to completion; collected pairs are compared."""
    args = [b"HSCAN", _key(ctx), b"0"]
    opts = []
    if ctx.chance(0.5):
        opts.append([ctx.opt(b"MATCH"), ctx.choice(_PATTERNS)])
    if ctx.chance(0.5):
        opts.append([ctx.opt(b"COUNT"), b"%d" % ctx.randint(1, 40)])
    if ctx.chance(0.1):
        opts.append([ctx.opt(b"MATCH"), ctx.choice(_PATTERNS)])
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return Cmd(*args, scan=(2, True))


def g_hscan_bad(ctx):
    """Invalid HSCAN calls: errors (or, on a missing key, the empty scan).
    Sent as a list so that the driver never mutates them: a mutation can
    put "" or a NUL byte where the cursor goes, which Redis's strtoul()
    reads as cursor 0."""
    k = _key(ctx)
    r = ctx.rng.random()
    if r < 0.3:
        return [Cmd(b"HSCAN", k, ctx.choice((b"abc", b"1x", b" 1", b"1.0",
                                             b"18446744073709551616")))]
    opt = ctx.choice(([b"COUNT", b"0"], [b"COUNT", b"-1"], [b"COUNT", b"x"],
                      [b"COUNT"], [b"MATCH"], [b"TYPE", b"hash"],
                      [b"FOO", b"1"], [b"COUNT", b"9223372036854775808"],
                      [b"NOVALUES"], [b"MATCH", b"*", b"COUNT"]))
    return [Cmd(b"HSCAN", k, b"0", *opt)]


# -- settings and other types ----------------------------------------------------

def g_config(ctx):
    e = ctx.choice((b"0", b"1", b"2", b"4", b"16", b"128", b"512", b"512"))
    v = ctx.choice((b"0", b"1", b"8", b"16", b"64", b"64"))
    return [Cmd(b"CONFIG", b"SET", b"hash-max-listpack-entries", e),
            Cmd(b"CONFIG", b"SET", b"hash-max-listpack-value", v)]


def g_config_reset(ctx):
    return [Cmd(b"CONFIG", b"SET", b"hash-max-listpack-entries", b"512"),
            Cmd(b"CONFIG", b"SET", b"hash-max-listpack-value", b"64")]


def g_other_type(ctx):
    """A string key among the hash keys: WRONGTYPE for hash commands."""
    return Cmd(b"SET", _key(ctx), ctx.small_val())


def g_copy(ctx):
    """COPY of a hash is a deep copy: change the copy, read the original."""
    k1, k2 = _key(ctx), _key(ctx)
    f = ctx.choice(FIELDS[:4])
    return [Cmd(b"COPY", k1, k2, b"REPLACE"), Cmd(b"HSET", k2, f, b"changed"),
            Cmd(b"HGET", k1, f), Cmd(b"OBJECT", b"ENCODING", k2)]


GENERATORS = [
    (14, g_hset),
    (3, g_hsetnx),
    (1, g_hfill),
    (6, g_hdel),
    (1, g_hdel_all),
    (5, g_hincrby),
    (5, g_hincrbyfloat),
    (3, g_hcounter_set),
    (1, g_hincrbyfloat_grow),
    (10, g_hget),
    (4, g_hmget),
    (5, g_hgetall),
    (3, g_hlen),
    (3, g_hstrlen),
    (3, g_hexists),
    (4, g_encoding),
    (1, g_type),
    (5, g_hrandfield),
    (3, g_hscan),
    (1, g_hscan_bad),
    (0.5, g_config),
    (0.5, g_config_reset),
    (0.8, g_other_type),
    (1, g_copy),
]

CREATORS = [
    (6, g_hset),
    (1, g_hincrby),
]

MIX = {"keyspace": 0.06}
