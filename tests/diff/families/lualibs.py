"""The libraries of the scripting state, fuzzed: cmsgpack (pack of random
Lua values, unpack / unpack_one / unpack_limit of random and corrupted
MessagePack bytes), struct (pack, unpack and size of random format strings
and values, unpack of random bytes at random offsets), cjson (encode of
random values, decode of random and corrupted JSON texts) and bit.

Every script returns one string: the packed bytes, or a canonical
serialisation (SER below: entries sorted, numbers as %.17g, strings as %q) of
the results of a pcall, so that both servers' replies compare byte for
byte whatever the shape of the Lua values. Map keys stay under 32 bytes:
longer strings hash differently in Redis's Lua (every byte hashed) and the
Debian Lua (sampled bytes), which changes table iteration order and so the
order of packed map entries.

No keys are touched. Values go through ARGV (binary strings) or as Lua
literals (numbers, short strings).
"""

import json
import struct as pystruct

from gencore import Cmd

NAME = "lualibs"

SER = (b"local function ser(v, d) local t = type(v) "
       b"if v == cjson.null then return 'null' end "
       b"if t == 'table' then if d > 40 then return '<deep>' end "
       b"local o = {} for k, x in pairs(v) do o[#o+1] = ser(k, d+1) .. '=' .. ser(x, d+1) end "
       b"table.sort(o) "
       b"return '{' .. table.concat(o, ',') .. '}' "
       b"elseif t == 'number' then return string.format('%.17g', v) "
       b"elseif t == 'string' then return string.format('%q', v) "
       b"elseif t == 'boolean' or t == 'nil' then return tostring(v) else return t end end ")

INTS = [0, 1, -1, 31, 32, -32, -33, 127, 128, -128, -129, 255, 256, 32767, 32768,
        -32768, -32769, 65535, 65536, 2147483647, 2147483648, -2147483648,
        -2147483649, 4294967295, 4294967296, 9007199254740992, 9007199254740993,
        -9007199254740992, 9223372036854775807, -9223372036854775808,
        18446744073709551615, 18446744073709551616, 1e19, -1e19, 1e300]
FLOATS = ["0.5", "1.5", "-2.25", "0.1", "1e-300", "-1e-300", "3.4028234663852886e38",
          "3.5e38", "1.401298464324817e-45", "(1/0)", "(-1/0)", "(0/0)", "(-0)",
          "123456.789", "2^53", "2^63", "-2^63", "2^64", "1/3"]


def lua_str(s):
    """A Lua literal for bytes s (decimal escapes for anything unusual)."""
    out = []
    for ch in s:
        c = chr(ch)
        if c.isalnum() or c in " _-.:":
            out.append(c)
        else:
            out.append("\\%d" % ch)
    return ("'" + "".join(out) + "'").encode()


def lua_num(ctx):
    r = ctx.rng.random()
    if r < 0.4:
        return b"%d" % ctx.randint(-300, 300)
    if r < 0.7:
        v = ctx.choice(INTS)
        return (b"%d" % v) if isinstance(v, int) else repr(v).encode()
    if r < 0.85:
        return ctx.choice(FLOATS).encode()
    return repr(ctx.rng.uniform(-1e12, 1e12)).encode()


def short_key(ctx):
    return bytes(ctx.rng.choice(b"abcxyz_019") for _ in range(ctx.randint(1, 10)))


def lua_value(ctx, depth=0, maxdepth=4):
    """A Lua expression for a random value."""
    r = ctx.rng.random()
    if depth >= maxdepth or r < 0.55:
        r2 = ctx.rng.random()
        if r2 < 0.45:
            return lua_num(ctx)
        if r2 < 0.8:
            n = ctx.choice([0, 1, 5, 31, 32, 33, 255, 256, 300])
            if ctx.chance(0.7):
                n = ctx.randint(0, 12)
            if n > 12:
                return b"string.rep('q', %d)" % n
            return lua_str(ctx.binary(n, n))
        return ctx.choice([b"true", b"false", b"nil", b"cjson.null"])
    if r < 0.8:
        n = ctx.choice([0, 1, 2, 3, 15, 16, 17]) if ctx.chance(0.3) else ctx.randint(0, 4)
        items = [lua_value(ctx, depth + 1, maxdepth) for _ in range(min(n, 5))]
        items += [b"%d" % i for i in range(len(items), n)]
        return b"{" + b",".join(items) + b"}"
    parts = []
    for _ in range(ctx.randint(0, 4)):
        kr = ctx.rng.random()
        if kr < 0.5:
            k = b"[" + lua_str(short_key(ctx)) + b"]"
        elif kr < 0.8:
            k = b"[%d]" % ctx.randint(-2, 20)
        else:
            k = b"[" + ctx.choice([b"1.5", b"0", b"2^31", b"-1", b"true"]) + b"]"
        parts.append(k + b"=" + lua_value(ctx, depth + 1, maxdepth))
    return b"{" + b",".join(parts) + b"}"


def nested(ctx):
    """A table nested around a value, 14 to 18 deep (the 16 limit of pack)."""
    d = ctx.randint(14, 18)
    inner = lua_value(ctx, 0, 1)
    return b"{" * d + inner + b"}" * d


def run(script, *argv):
    return [Cmd(b"EVAL", SER + script, b"0", *argv)]


# -- cmsgpack ------------------------------------------------------------

def g_mp_pack(ctx):
    vals = [nested(ctx) if ctx.chance(0.1) else lua_value(ctx)
            for _ in range(ctx.randint(1, 3))]
    return run(b"return cmsgpack.pack(" + b",".join(vals) + b")")


def g_mp_roundtrip(ctx):
    v = lua_value(ctx)
    return run(b"return ser({pcall(cmsgpack.unpack, cmsgpack.pack(" + v + b"))}, 0)")


def mp_encode(ctx, depth=0):
    """Random MessagePack bytes, with every type tag (bin and ext too)."""
    r = ctx.rng.random()
    if depth > 3 or r < 0.6:
        t = ctx.randint(0, 14)
        if t == 0:
            return bytes([ctx.randint(0, 0x7f)])
        if t == 1:
            return bytes([ctx.randint(0xe0, 0xff)])
        if t == 2:
            tag, fmt = ctx.choice([(0xcc, ">B"), (0xcd, ">H"), (0xce, ">I"), (0xcf, ">Q")])
            return bytes([tag]) + pystruct.pack(fmt, ctx.randint(0, (1 << (8 * pystruct.calcsize(fmt))) - 1))
        if t == 3:
            tag, fmt = ctx.choice([(0xd0, ">b"), (0xd1, ">h"), (0xd2, ">i"), (0xd3, ">q")])
            bits = 8 * pystruct.calcsize(fmt)
            return bytes([tag]) + pystruct.pack(fmt, ctx.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1))
        if t == 4:
            return b"\xca" + pystruct.pack(">f", ctx.rng.uniform(-1e6, 1e6))
        if t == 5:
            return b"\xcb" + pystruct.pack(">d", ctx.rng.uniform(-1e300, 1e300))
        if t == 6:
            s = ctx.binary(0, 31)
            return bytes([0xa0 | len(s)]) + s
        if t == 7:
            s = ctx.binary(0, 40)
            return ctx.choice([b"\xd9" + bytes([len(s)]), b"\xda" + pystruct.pack(">H", len(s)),
                               b"\xdb" + pystruct.pack(">I", len(s))]) + s
        if t == 8:
            return ctx.choice([b"\xc0", b"\xc2", b"\xc3"])
        if t == 9:
            s = ctx.binary(0, 5)
            return ctx.choice([b"\xc4", b"\xc7", b"\xd4", b"\xc1"]) + bytes([len(s)]) + s
        if t == 10:
            return bytes(ctx.randint(0, 255) for _ in range(ctx.randint(1, 4)))
        if t == 11:
            return ctx.choice([b"\xca\x7f\xc0\x00\x00", b"\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00",
                               b"\xcb\xff\xf0\x00\x00\x00\x00\x00\x00", b"\xca\x80\x00\x00\x00"])
        s = short_key(ctx)
        return bytes([0xa0 | len(s)]) + s
    n = ctx.randint(0, 4) if ctx.chance(0.9) else ctx.choice([15, 16, 17])
    if ctx.chance(0.5):
        items = b"".join(mp_encode(ctx, depth + 1) for _ in range(n))
        hdr = bytes([0x90 | n]) if n < 16 and ctx.chance(0.7) else (
            b"\xdc" + pystruct.pack(">H", n) if ctx.chance(0.5) else b"\xdd" + pystruct.pack(">I", n))
        return hdr + items
    items = b"".join(mp_encode(ctx, depth + 1) + mp_encode(ctx, depth + 1) for _ in range(n))
    hdr = bytes([0x80 | n]) if n < 16 and ctx.chance(0.7) else (
        b"\xde" + pystruct.pack(">H", n) if ctx.chance(0.5) else b"\xdf" + pystruct.pack(">I", n))
    return hdr + items


def mp_bytes(ctx):
    data = b"".join(mp_encode(ctx) for _ in range(ctx.randint(1, 3)))
    r = ctx.rng.random()
    if r < 0.15 and data:
        data = data[:ctx.randint(0, len(data) - 1)]
    elif r < 0.25 and data:
        i = ctx.randint(0, len(data) - 1)
        data = data[:i] + bytes([ctx.randint(0, 255)]) + data[i + 1:]
    return data


def g_mp_unpack(ctx):
    data = mp_bytes(ctx)
    r = ctx.rng.random()
    if r < 0.5:
        return run(b"return ser({pcall(cmsgpack.unpack, ARGV[1])}, 0)", data)
    off = b"%d" % ctx.choice([0, 0, 1, 2, 5, len(data), len(data) + 1, -1])
    if r < 0.75:
        return run(b"return ser({pcall(cmsgpack.unpack_one, ARGV[1], tonumber(ARGV[2]))}, 0)", data, off)
    lim = b"%d" % ctx.choice([0, 1, 2, 3, -1])
    return run(b"return ser({pcall(cmsgpack.unpack_limit, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))}, 0)",
               data, lim, off)


def g_mp_errors(ctx):
    s = ctx.choice([
        b"return ser({pcall(cmsgpack.pack)}, 0)",
        b"return ser({pcall(cmsgpack.unpack)}, 0)",
        b"return ser({pcall(cmsgpack.unpack, {})}, 0)",
        b"return ser({pcall(cmsgpack.unpack_one)}, 0)",
        b"return ser({pcall(cmsgpack.unpack_limit, 'x')}, 0)",
        b"return ser({pcall(cmsgpack.unpack_limit, '\\1\\2', 'a')}, 0)",
        b"return ser({pcall(cmsgpack.unpack, 12)}, 0)",
        b"return ser({pcall(cmsgpack.unpack, string.rep('\\145', 9000))}, 0)",
        b"return ser({pcall(cmsgpack.unpack, string.rep('\\1', 9000))}, 0)",
        b"return ser({pcall(cmsgpack.unpack, string.rep('\\129', 5000) .. '\\192')}, 0)",
        b"return ser({pcall(cmsgpack.unpack, '\\129\\192\\1')}, 0)",
        b"return ser({pcall(cmsgpack.unpack, '\\129\\203\\127\\248\\0\\0\\0\\0\\0\\0\\1')}, 0)",
        b"local t = {} t[1] = t return cmsgpack.pack(t)",
        b"return cmsgpack.pack(setmetatable({1, 2}, {__index = function(t, k) return k * 10 end}))",
        b"return cmsgpack.pack(print or 1, function() end)",
        b"return ser(cmsgpack, 0)",
    ])
    return run(s)


# -- struct --------------------------------------------------------------

OPTS = ["b", "B", "h", "H", "l", "L", "T", "i", "I", "i1", "I2", "i3", "I5", "i7", "i8",
        "I9", "i16", "I16", "i32", "i33", "i0", "c", "c1", "c3", "c0", "s", "f", "d", "x",
        "<", ">", "!", "!1", "!2", "!4", "!8", "!3", " ", "z", "3", "i99999999999"]


def fmt(ctx):
    return "".join(ctx.choice(OPTS) for _ in range(ctx.randint(0, 5))).encode()


def struct_arg(ctx):
    r = ctx.rng.random()
    if r < 0.6:
        return lua_num(ctx)
    if r < 0.9:
        return lua_str(ctx.binary(0, 6))
    return ctx.choice([b"nil", b"{}", b"true"])


def g_struct_pack(ctx):
    f = fmt(ctx)
    args = b"".join(b"," + struct_arg(ctx) for _ in range(ctx.randint(0, 5)))
    return run(b"return ser({pcall(struct.pack, ARGV[1]" + args + b")}, 0)", f)


def g_struct_roundtrip(ctx):
    f = fmt(ctx)
    args = b"".join(b"," + struct_arg(ctx) for _ in range(ctx.randint(1, 5)))
    return run(b"local ok, s = pcall(struct.pack, ARGV[1]" + args + b") "
               b"if not ok then return ser({ok, s}, 0) end "
               b"return ser({s, pcall(struct.unpack, ARGV[1], s)}, 0)", f)


def g_struct_unpack(ctx):
    f = fmt(ctx)
    data = ctx.binary(0, 40)
    off = b"%d" % ctx.choice([1, 1, 1, 2, 3, 0, -1, len(data), len(data) + 1, len(data) + 2])
    return run(b"return ser({pcall(struct.unpack, ARGV[1], ARGV[2], tonumber(ARGV[3]))}, 0)", f, data, off)


def g_struct_size(ctx):
    return run(b"return ser({pcall(struct.size, ARGV[1])}, 0)", fmt(ctx))


# -- cjson and bit -------------------------------------------------------

def py_json(ctx, depth=0):
    r = ctx.rng.random()
    if depth > 3 or r < 0.6:
        return ctx.choice([ctx.randint(-1000, 1000), ctx.rng.uniform(-1e20, 1e20), True, False, None,
                           ctx.word(0, 8).decode(), "\u00e9\u4e2d", "\U0001F600", 1e300, 2 ** 64])
    if r < 0.8:
        return [py_json(ctx, depth + 1) for _ in range(ctx.randint(0, 4))]
    return {short_key(ctx).decode(): py_json(ctx, depth + 1) for _ in range(ctx.randint(0, 4))}


def json_text(ctx):
    t = json.dumps(py_json(ctx), ensure_ascii=ctx.chance(0.5)).encode()
    r = ctx.rng.random()
    if r < 0.2 and t:
        t = t[:ctx.randint(0, len(t) - 1)]
    elif r < 0.3 and t:
        i = ctx.randint(0, len(t) - 1)
        t = t[:i] + ctx.choice([b",", b"]", b"}", b"\"", b"\\", b"\x01", b"\xff", b"1e999", b"-", b"nan"]) + t[i + 1:]
    elif r < 0.4:
        t = ctx.choice([b"\"\\ud800\"", b"\"\\u00e9\\uD83D\\uDE00\"", b"[1,,2]", b"{\"a\" 1}", b"0x1F", b"-0",
                        b"1e400", b"  true  ", b"[" * 1001 + b"]" * 1001, b"Infinity", b"\"\\/\\b\\f\\n\\r\\t\"",
                        b"123456789012345678901234567890", b"0.1e-400"])
    return t


def g_cjson_encode(ctx):
    v = lua_value(ctx)
    return run(b"return ser({pcall(cjson.encode, " + v + b")}, 0)")


def g_cjson_decode(ctx):
    return run(b"return ser({pcall(cjson.decode, ARGV[1])}, 0)", json_text(ctx))


def g_bit(ctx):
    f = ctx.choice([b"band", b"bor", b"bxor", b"lshift", b"rshift", b"arshift", b"rol", b"ror", b"bnot",
                    b"tobit", b"tohex", b"bswap"])
    args = b",".join(lua_num(ctx) for _ in range(ctx.randint(1, 3)))
    return run(b"return ser({pcall(bit." + f + b", " + args + b")}, 0)")


GENERATORS = [
    (6, g_mp_pack),
    (4, g_mp_roundtrip),
    (8, g_mp_unpack),
    (2, g_mp_errors),
    (6, g_struct_pack),
    (4, g_struct_roundtrip),
    (5, g_struct_unpack),
    (2, g_struct_size),
    (4, g_cjson_encode),
    (4, g_cjson_decode),
    (2, g_bit),
]
