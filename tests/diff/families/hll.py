"""HyperLogLog: PFADD, PFCOUNT, PFMERGE and PFDEBUG, with the HLL values
themselves compared byte for byte (GET after the changes, so the sparse
opcode stream, the dense registers and the cached-count header must all be
Redis's).

Elements: a small universe (repeats: PFADD answering 0), words, binary
bytes and the empty element. Fills add 1..200000 elements to one key in
batches of PFADDs (sparse keys, the sparse -> dense promotion by
hll-sparse-max-bytes and by a register above 32, dense keys), then GET,
PFCOUNT, GET again (the cache written back) and PFDEBUG ENCODING.
Damaged values come from SET: a sparse header over random opcodes (runs
that do not add up to 16384: INVALIDOBJ once reached), a dense header with
the wrong length and other strings (WRONGTYPE of the HLL kind), and the
strings family's SETRANGE/APPEND over HLL keys. Other types give the
ordinary WRONGTYPE. hll-sparse-max-bytes is set on both servers by
g_config and put back by g_config_reset.
"""

from gencore import Cmd

NAME = "hll"

SMALL = [b"%d" % i for i in range(40)] + [b"a", b"b", b"", b"\x00", b"\xff\x00\r\n"]


def _element(ctx):
    r = ctx.rng.random()
    if r < 0.5:
        return ctx.choice(SMALL)
    if r < 0.8:
        return ctx.word(1, 10)
    return ctx.binary(0, 24)


def g_pfadd(ctx):
    return Cmd(b"PFADD", ctx.key(), *[_element(ctx) for _ in range(ctx.randint(0, 8))])


def g_fresh(ctx):
    """A key made an HLL again (damaged values and other types pile up)."""
    k = ctx.key()
    return [Cmd(b"DEL", k), Cmd(b"PFADD", k, *[_element(ctx) for _ in range(ctx.randint(0, 40))])]


def _fill(ctx, k, total):
    """PFADDs of `total` elements (a universe of about total/dup distinct
    ones) to k, in batches of up to 5000."""
    univ = max(1, total // ctx.choice((1, 1, 2, 10)))
    tag = b"%d:" % ctx.randint(0, 1 << 30)
    out = []
    while total > 0:
        n = min(total, ctx.randint(1, 5000))
        els = []
        for _ in range(n):
            m = ctx.rng.randrange(univ)
            if m % 7 == 0:
                els.append(bytes([m & 0xff, (m >> 8) & 0xff, 0, (m >> 16) & 0xff]))
            else:
                els.append(tag + b"%d" % m)
        out.append(Cmd(b"PFADD", k, *els))
        total -= n
    return out


def g_fill(ctx):
    k = ctx.key()
    total = ctx.choice((1, 10, 100, 300, 1000, 2000, 5000, 20000, 60000, 200000))
    if total >= 20000 and ctx.chance(0.6):
        total = ctx.choice((100, 1000, 3000))
    out = [Cmd(b"DEL", k)] if ctx.chance(0.7) else []
    out += _fill(ctx, k, total)
    out += [Cmd(b"GET", k), Cmd(b"PFCOUNT", k), Cmd(b"GET", k), Cmd(b"PFDEBUG", b"ENCODING", k)]
    return out


def g_pfcount(ctx):
    return Cmd(b"PFCOUNT", *ctx.keys(1, 4))


def g_pfmerge(ctx):
    dst = ctx.key()
    return [Cmd(b"PFMERGE", dst, *ctx.keys(0, 3)), Cmd(b"GET", dst)]


def g_get(ctx):
    return Cmd(b"GET", ctx.key())


def g_encoding(ctx):
    """OBJECT ENCODING: Redis makes every HLL it writes a raw string."""
    return Cmd(b"OBJECT", b"ENCODING", ctx.key())


def g_pfdebug(ctx):
    sub = ctx.choice((b"ENCODING", b"DECODE", b"TODENSE", b"GETREG", b"encoding", b"decode", b"nosuch"))
    k = ctx.key()
    if sub in (b"TODENSE", b"GETREG"):
        return [Cmd(b"PFDEBUG", sub, k), Cmd(b"GET", k)]
    return Cmd(b"PFDEBUG", sub, k)


def _opcodes(ctx, n):
    out = bytearray()
    for _ in range(n):
        r = ctx.rng.random()
        if r < 0.3:
            out.append(ctx.randint(0, 63))                        # ZERO
        elif r < 0.6:
            out += bytes([0x40 | ctx.randint(0, 63), ctx.randint(0, 255)])  # XZERO
        else:
            out.append(0x80 | ctx.randint(0, 127))                # VAL
    return bytes(out)


def g_set_damaged(ctx):
    """SET of a string that is, or almost is, an HLL, then a command on it."""
    k = ctx.key()
    card = bytes(ctx.randint(0, 255) for _ in range(7)) + bytes([ctx.choice((0, 0x80, 0x7f, 0xff))])
    r = ctx.rng.random()
    if r < 0.35:
        # sparse: a plausible run (whole cover) or random opcodes
        if ctx.chance(0.5):
            body = bytes([0x7f, 0xff])
            if ctx.chance(0.5):
                body = bytes([0x40 | 0x3f, 0xfe, 0x80 | ctx.randint(0, 127) & ~3])  # 16383 zeros + VAL len 1
        else:
            body = _opcodes(ctx, ctx.randint(0, 12))
        val = b"HYLL\x01\x00\x00\x00" + card + body
    elif r < 0.55:
        # dense: right or wrong length
        n = ctx.choice((12288, 12288, 12287, 12289, 0, 5))
        val = b"HYLL\x00\x00\x00\x00" + card + bytes(ctx.randint(0, 255) for _ in range(min(n, 64))) + \
            bytes(max(0, n - 64))
    elif r < 0.7:
        val = ctx.choice((b"HYLL", b"HYLL\x02" + bytes(11), b"hyll\x01" + bytes(11) + b"\x7f\xff",
                          b"12345", b"", b"HYLL\x01\x00\x00\x00" + card))
    else:
        val = b"HYLL\x01" + bytes(ctx.randint(0, 255) for _ in range(3)) + card + _opcodes(ctx, ctx.randint(1, 6))
    then = ctx.choice((Cmd(b"PFADD", k, *[_element(ctx) for _ in range(ctx.randint(0, 30))]),
                       Cmd(b"PFCOUNT", k), Cmd(b"PFCOUNT", k, ctx.key()),
                       Cmd(b"PFMERGE", ctx.key(), k), Cmd(b"PFDEBUG", b"DECODE", k),
                       Cmd(b"PFDEBUG", b"TODENSE", k), Cmd(b"PFDEBUG", b"ENCODING", k)))
    return [Cmd(b"SET", k, val), then, Cmd(b"GET", k)]


def g_other_type(ctx):
    k = ctx.key()
    t = ctx.choice((Cmd(b"LPUSH", k, b"x"), Cmd(b"SADD", k, b"x"), Cmd(b"HSET", k, b"f", b"v"),
                    Cmd(b"ZADD", k, b"1", b"m")))
    return [t, ctx.choice((Cmd(b"PFADD", k, b"a"), Cmd(b"PFCOUNT", k), Cmd(b"PFMERGE", k),
                           Cmd(b"PFMERGE", ctx.key(), k), Cmd(b"PFDEBUG", b"GETREG", k)))]


def g_config(ctx):
    return Cmd(b"CONFIG", b"SET", b"hll-sparse-max-bytes", ctx.choice((b"0", b"100", b"3000", b"8000")))


def g_config_reset(ctx):
    return Cmd(b"CONFIG", b"SET", b"hll-sparse-max-bytes", b"3000")


GENERATORS = [
    (14, g_pfadd),
    (3, g_fill),
    (8, g_pfcount),
    (6, g_pfmerge),
    (6, g_get),
    (4, g_pfdebug),
    (2, g_encoding),
    (6, g_fresh),
    (2, g_set_damaged),
    (1, g_other_type),
    (1, g_config),
    (2, g_config_reset),
]

CREATORS = [
    (1, g_pfadd),
]

# No "strings" mix: an APPEND or SETRANGE can cut a sparse opcode at the
# value's end, and Redis then reads the byte after its value (the string's
# terminator, or a byte an earlier split left there, which GET never shows
# and Goblin does not keep). Both accept such a value; what PFADD makes of
# it can differ. Damaged values of every other kind come from g_set_damaged.
MIX = {"keyspace": 0.05}
