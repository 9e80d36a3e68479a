"""Hand-made RDB files: every encoding Redis has ever written for the five
types, including the ones Redis 7.0 only reads (zipmap, ziplist, old
quicklist, ZSET with text scores, plain LIST), and deliberately broken ones.

Independent of Goblin's C code on purpose: the tests load these files into
redis-server 7.0 (the oracle) and into Goblin and compare.
"""
import struct

# ---- CRC-64/Jones (reflected, poly 0xad93d23594c935a9) ----------------------
_POLY = 0x95AC9329AC4BC9B5
_TAB = []
for _b in range(256):
    _c = _b
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TAB.append(_c)


def crc64(data, crc=0):
    for b in data:
        crc = _TAB[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


# ---- primitives -----------------------------------------------------------------
def length(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n <= 0xFFFFFFFF:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def lzf_compress(data):
    """A simple greedy LZF compressor (valid LZF, not tuned)."""
    out = bytearray()
    lit = bytearray()
    table = {}
    i, n = 0, len(data)

    def flush_lit():
        j = 0
        while j < len(lit):
            chunk = lit[j:j + 32]
            out.append(len(chunk) - 1)
            out.extend(chunk)
            j += 32
        lit.clear()

    while i < n:
        if i + 2 < n:
            key = data[i:i + 3]
            cand = table.get(key)
            table[key] = i
            if cand is not None and i - cand <= 8192:
                ln = 3
                while i + ln < n and ln < 264 and data[cand + ln] == data[i + ln]:
                    ln += 1
                flush_lit()
                off = i - cand - 1
                l = ln - 2
                if l < 7:
                    out.append((l << 5) | (off >> 8))
                else:
                    out.append((7 << 5) | (off >> 8))
                    out.append(l - 7)
                out.append(off & 0xFF)
                i += ln
                continue
        lit.append(data[i])
        i += 1
    flush_lit()
    return bytes(out)


def string(s, enc="auto"):
    """enc: raw | int | lzf | auto (int when it fits 32 bits, else raw)."""
    if isinstance(s, str):
        s = s.encode()
    if enc in ("auto", "int"):
        try:
            v = int(s)
            canonical = str(v).encode() == s
        except ValueError:
            canonical = False
        if canonical and -(1 << 31) <= v < (1 << 31):
            if -128 <= v < 128:
                return b"\xc0" + struct.pack("<b", v)
            if -32768 <= v < 32768:
                return b"\xc1" + struct.pack("<h", v)
            return b"\xc2" + struct.pack("<i", v)
        if enc == "int":
            raise ValueError("not int-encodable: %r" % s)
    if enc == "lzf":
        c = lzf_compress(s)
        return b"\xc3" + length(len(c)) + length(len(s)) + c
    return length(len(s)) + s


# ---- packed encodings -----------------------------------------------------------
def _canon_int(s):
    if isinstance(s, int):
        return s
    try:
        v = int(s)
    except ValueError:
        return None
    return v if str(v).encode() == (s if isinstance(s, bytes) else s.encode()) else None


def _backlen(l):
    if l <= 127:
        return bytes([l])
    if l < 16383:
        return bytes([l >> 7, (l & 127) | 128])
    if l < 2097151:
        return bytes([l >> 14, ((l >> 7) & 127) | 128, (l & 127) | 128])
    if l < 268435455:
        return bytes([l >> 21, ((l >> 14) & 127) | 128, ((l >> 7) & 127) | 128, (l & 127) | 128])
    return bytes([l >> 28, ((l >> 21) & 127) | 128, ((l >> 14) & 127) | 128, ((l >> 7) & 127) | 128,
                  (l & 127) | 128])


def listpack(items):
    body = bytearray()
    for it in items:
        v = _canon_int(it)
        if v is not None and -(1 << 63) <= v < (1 << 63):
            if 0 <= v <= 127:
                e = bytes([v])
            elif -4096 <= v <= 4095:
                u = v & 0x1FFF
                e = bytes([0xC0 | (u >> 8), u & 0xFF])
            elif -32768 <= v <= 32767:
                e = b"\xf1" + struct.pack("<h", v)
            elif -8388608 <= v <= 8388607:
                e = b"\xf2" + struct.pack("<i", v)[:3]
            elif -(1 << 31) <= v < (1 << 31):
                e = b"\xf3" + struct.pack("<i", v)
            else:
                e = b"\xf4" + struct.pack("<q", v)
        else:
            s = it if isinstance(it, bytes) else str(it).encode()
            n = len(s)
            if n < 64:
                e = bytes([0x80 | n]) + s
            elif n < 4096:
                e = bytes([0xE0 | (n >> 8), n & 0xFF]) + s
            else:
                e = b"\xf0" + struct.pack("<I", n) + s
        body += e + _backlen(len(e))
    total = 6 + len(body) + 1
    return struct.pack("<IH", total, min(len(items), 65535)) + bytes(body) + b"\xff"


def ziplist(items):
    entries = []
    prev = 0
    for it in items:
        v = _canon_int(it)
        if v is not None and -(1 << 63) <= v < (1 << 63):
            if 0 <= v <= 12:
                enc = bytes([0xF1 + v])
            elif -128 <= v <= 127:
                enc = b"\xfe" + struct.pack("<b", v)
            elif -32768 <= v <= 32767:
                enc = b"\xc0" + struct.pack("<h", v)
            elif -8388608 <= v <= 8388607:
                enc = b"\xf0" + struct.pack("<i", v)[:3]
            elif -(1 << 31) <= v < (1 << 31):
                enc = b"\xd0" + struct.pack("<i", v)
            else:
                enc = b"\xe0" + struct.pack("<q", v)
        else:
            s = it if isinstance(it, bytes) else str(it).encode()
            n = len(s)
            if n < 64:
                enc = bytes([n]) + s
            elif n < 16384:
                enc = bytes([0x40 | (n >> 8), n & 0xFF]) + s
            else:
                enc = b"\x80" + struct.pack(">I", n) + s
        pl = bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)
        e = pl + enc
        entries.append(e)
        prev = len(e)
    body = b"".join(entries)
    tail = 10 + len(body) - len(entries[-1]) if entries else 10
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, tail, min(len(items), 65535)) + body + b"\xff"


def intset(values, width=None):
    values = sorted(values)
    if width is None:
        width = 2
        for v in values:
            if not -(1 << 15) <= v < (1 << 15):
                width = 4
            if not -(1 << 31) <= v < (1 << 31):
                width = 8
                break
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<II", width, len(values)) + b"".join(struct.pack(fmt, v) for v in values)


def zipmap(pairs):
    out = bytearray([min(len(pairs), 254)])

    def zl(n):
        return bytes([n]) if n < 254 else b"\xfe" + struct.pack("<I", n)

    for k, v in pairs:
        k = k if isinstance(k, bytes) else str(k).encode()
        v = v if isinstance(v, bytes) else str(v).encode()
        out += zl(len(k)) + k + zl(len(v)) + b"\x00" + v
    out.append(0xFF)
    return bytes(out)


def double_text(d):
    if d != d:
        return b"\xfd"
    if d == float("inf"):
        return b"\xfe"
    if d == float("-inf"):
        return b"\xff"
    s = ("%.17g" % d).encode()
    return bytes([len(s)]) + s


# ---- records and files --------------------------------------------------------------
T_STRING, T_LIST, T_SET, T_ZSET, T_HASH, T_ZSET_2 = 0, 1, 2, 3, 4, 5
T_MODULE_2, T_HASH_ZIPMAP, T_LIST_ZIPLIST, T_SET_INTSET = 7, 9, 10, 11
T_ZSET_ZIPLIST, T_HASH_ZIPLIST, T_LIST_QUICKLIST, T_STREAM = 12, 13, 14, 15
T_HASH_LISTPACK, T_ZSET_LISTPACK, T_LIST_QUICKLIST_2 = 16, 17, 18


def record(t, key, payload, expire_ms=None, expire_s=None):
    out = b""
    if expire_ms is not None:
        out += b"\xfc" + struct.pack("<q", expire_ms)
    if expire_s is not None:
        out += b"\xfd" + struct.pack("<i", expire_s)
    return out + bytes([t]) + string(key, "raw") + payload


def aux(k, v):
    return b"\xfa" + string(k) + string(v)


def selectdb(n):
    return b"\xfe" + length(n)


def resizedb(a, b):
    return b"\xfb" + length(a) + length(b)


def rdb_file(body, version=10, checksum=True, aux_fields=True):
    head = b"REDIS%04d" % version
    if aux_fields and version >= 7:
        head += aux("redis-ver", "7.0.15") + aux("redis-bits", "64")
    data = head + body + b"\xff"
    if version >= 5:
        data += struct.pack("<Q", crc64(data) if checksum else 0)
    return data


# ---- reading DUMP payloads back (streams) ------------------------------------------
# A stream DUMPed by Redis 7.0 (type 19) is parsed into a dict and written
# again as type 15 (Redis 5-6) or 21 (Redis 7.2, whose consumers carry an
# active time after the seen time: s["active"][(group, consumer)], 8
# bytes, else the seen time again), so that every loader variant can be
# fed the same stream.

def _raw_string(b):
    return length(len(b)) + b


class Reader:
    def __init__(self, b):
        self.b, self.i = b, 0

    def byte(self):
        v = self.b[self.i]
        self.i += 1
        return v

    def take(self, n):
        v = self.b[self.i:self.i + n]
        assert len(v) == n
        self.i += n
        return v

    def length(self):
        c = self.byte()
        t = c >> 6
        if t == 0:
            return c & 63
        if t == 1:
            return (c & 63) << 8 | self.byte()
        if c == 0x80:
            return struct.unpack(">I", self.take(4))[0]
        if c == 0x81:
            return struct.unpack(">Q", self.take(8))[0]
        raise ValueError("special encoding where a length was expected")

    def string(self):
        c = self.b[self.i]
        if c >> 6 != 3:
            return self.take(self.length())
        self.i += 1
        kind = c & 63
        if kind == 0:
            return str(struct.unpack("<b", self.take(1))[0]).encode()
        if kind == 1:
            return str(struct.unpack("<h", self.take(2))[0]).encode()
        if kind == 2:
            return str(struct.unpack("<i", self.take(4))[0]).encode()
        assert kind == 3
        clen, ulen = self.length(), self.length()
        return lzf_decompress(self.take(clen), ulen)


def lzf_decompress(src, ulen):
    out = bytearray()
    i = 0
    while i < len(src):
        ctrl = src[i]
        i += 1
        if ctrl < 32:
            out += src[i:i + ctrl + 1]
            i += ctrl + 1
        else:
            n = ctrl >> 5
            ref = len(out) - ((ctrl & 31) << 8) - 1
            if n == 7:
                n += src[i]
                i += 1
            ref -= src[i]
            i += 1
            for _ in range(n + 2):
                out.append(out[ref])
                ref += 1
    assert len(out) == ulen
    return bytes(out)


def stream_parse19(body):
    """A type-19 payload body as a dict."""
    r = Reader(body)
    assert r.byte() == 19
    s = {"nodes": []}
    for _ in range(r.length()):
        s["nodes"].append((r.string(), r.string()))
    s["length"] = r.length()
    s["last"] = (r.length(), r.length())
    s["first"] = (r.length(), r.length())
    s["maxdel"] = (r.length(), r.length())
    s["added"] = r.length()
    s["groups"] = []
    for _ in range(r.length()):
        g = {"name": r.string(), "last": (r.length(), r.length()), "read": r.length(), "pel": [], "cons": []}
        for _ in range(r.length()):
            g["pel"].append((r.take(16), r.take(8), r.length()))
        for _ in range(r.length()):
            name, seen = r.string(), r.take(8)
            g["cons"].append((name, seen, [r.take(16) for _ in range(r.length())]))
        s["groups"].append(g)
    assert r.i == len(body), "trailing bytes"
    return s


def stream_payload(s, rtype):
    o = bytearray([rtype])
    o += length(len(s["nodes"]))
    for k, lp in s["nodes"]:
        o += _raw_string(k) + _raw_string(lp)
    o += length(s["length"]) + length(s["last"][0]) + length(s["last"][1])
    if rtype != 15:
        o += b"".join(length(x) for x in s["first"] + s["maxdel"]) + length(s["added"])
    o += length(len(s["groups"]))
    for g in s["groups"]:
        o += _raw_string(g["name"]) + length(g["last"][0]) + length(g["last"][1])
        if rtype != 15:
            o += length(g["read"])
        o += length(len(g["pel"]))
        for rid, t, cnt in g["pel"]:
            o += rid + t + length(cnt)
        o += length(len(g["cons"]))
        for name, seen, pel in g["cons"]:
            o += _raw_string(name) + seen
            if rtype == 21:
                o += s.get("active", {}).get((g["name"], name), seen)
            o += length(len(pel)) + b"".join(pel)
    return bytes(o)
