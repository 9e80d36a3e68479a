"""A dataset touching every type, encoding and expiry form, and a full
snapshot of a server's keyspace for comparison."""
import random

from resp import Err  # tests/helpers, on sys.path through harness

INTS = [0, 1, 12, 127, 128, -1, -128, -129, 4095, -4096, 4096, 32767, -32768, 32768, 8388607, -8388608,
        8388608, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 63 - 1, -2 ** 63]


def build(c, rng=None, big=True):
    """Fill databases 0, 1 and 9 of the server behind client c."""
    rng = rng or random.Random(7)
    cmds = []
    a = cmds.append
    # strings
    for i, v in enumerate(INTS):
        a(["SET", "int:%d" % i, str(v)])
    for k, v in [("s:empty", b""), ("s:minus0", b"-0"), ("s:lead0", b"007"), ("s:space", b" 12"),
                 ("s:float", b"3.14"), ("s:44", b"x" * 44), ("s:45", b"y" * 45),
                 ("s:bin", bytes(range(256))), ("s:crlf", b"a\r\nb\x00c"),
                 ("s:compressible", b"abcabcabc" * 200), ("s:20", b"z" * 20), ("s:21", b"z" * 21),
                 ("s:random", bytes(rng.getrandbits(8) for _ in range(5000))),
                 ("s:11digits", b"12345678901"), ("s:int32max+1", b"2147483648")]:
        a(["SET", k, v])
    a(["SET", "k" * 300, "long key"])
    a(["SET", b"\x00bin\xffkey", "binary key"])
    # lists
    a(["RPUSH", "l:small", "a", "1", "b", "-5", "100000", ""])
    a(["RPUSH", "l:ints"] + [str(v) for v in INTS])
    if big:
        a(["RPUSH", "l:big"] + ["element-%d" % i for i in range(3000)] + [str(i) for i in range(3000)])
    a(["RPUSH", "l:hugeelem", "before", "H" * 20000, "after"])
    a(["RPUSH", "l:one", "x"])
    # sets
    a(["SADD", "set:int16", "1", "2", "3", "-7"])
    a(["SADD", "set:int32", "1", "70000", "-70000"])
    a(["SADD", "set:int64", "1", str(2 ** 40), str(-2 ** 62)])
    a(["SADD", "set:str", "a", "b", "c", "1"])
    a(["SADD", "set:bin", b"\x00", b"\xff\xfe", b""])
    if big:
        a(["SADD", "set:bigint"] + [str(i * 3) for i in range(600)])
        a(["SADD", "set:big"] + ["member-%d" % i for i in range(1000)])
    # zsets
    a(["ZADD", "z:small", "1", "one", "2.5", "two.5", "-3", "neg", "inf", "pinf", "-inf", "ninf", "0", "zero",
       "1e300", "huge", "0.1", "tenth", "3.0000000000000004", "ulp", "100000", "intscore"])
    a(["ZADD", "z:ties", "1", "b", "1", "a", "1", "c"])
    a(["ZADD", "z:longmember", "1", "m" * 100, "2", "short"])
    if big:
        args = ["ZADD", "z:big"]
        for i in range(300):
            args += [repr(rng.uniform(-1e6, 1e6)), "member:%d" % i]
        a(args)
    # hashes
    a(["HSET", "h:small", "f1", "v1", "n", "12", "neg", "-5", "empty", "", "", "emptyfield"])
    a(["HSET", "h:longval", "f", "v" * 100])
    a(["HSET", "h:bin", b"\x00\x01", b"\xff" * 3])
    if big:
        args = ["HSET", "h:big"]
        for i in range(700):
            args += ["field:%d" % i, "value:%d" % (i * 7)]
        a(args)
    # streams: several nodes, deleted entries, groups with pending entries
    a(["XADD", "x:small", "1-1", "f", "v", "n", "12"])
    a(["XADD", "x:small", "1-2", "f", "w", "n", "-5"])
    a(["XADD", "x:small", "2-0", "other", "", "bin", b"\x00\xff"])
    a(["XDEL", "x:small", "1-2"])
    for i in range(1, 260 if big else 60):
        if i % 9 == 0:
            a(["XADD", "x:multi", "%d-%d" % (i, i % 3), "a", str(i), "extra", "e" * (i % 50)])
        else:
            a(["XADD", "x:multi", "%d-%d" % (i, i % 3), "a", str(i), "b", "value-%d" % i])
    a(["XDEL", "x:multi", "3-0", "4-1", "50-2"])
    a(["XGROUP", "CREATE", "x:multi", "g1", "0"])
    a(["XGROUP", "CREATE", "x:multi", "g2", "$", "ENTRIESREAD", "7"])
    a(["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "x:multi", ">"])
    a(["XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "x:multi", ">"])
    a(["XACK", "x:multi", "g1", "1-1"])
    a(["XGROUP", "CREATECONSUMER", "x:multi", "g2", "carol"])
    a(["XADD", "x:empty", "1-0", "f", "v"])
    a(["XDEL", "x:empty", "1-0"])
    a(["XSETID", "x:empty", "5-5", "ENTRIESADDED", "3", "MAXDELETEDID", "4-0"])
    a(["XADD", "x:bigval", "7-0", "f", "V" * 20000])
    # expiry
    a(["SET", "ttl:str", "v"])
    a(["PEXPIREAT", "ttl:str", "4102444800123"])  # 2100-01-01, ms precision
    a(["RPUSH", "ttl:list", "a", "b"])
    a(["PEXPIREAT", "ttl:list", "4102444800999"])
    a(["HSET", "ttl:hash", "a", "b"])
    a(["EXPIRE", "ttl:hash", "86400"])
    c.pipeline(cmds)
    # other databases
    c.ok("SELECT", 1)
    c.pipeline([["SET", "db1:key", "in db 1"], ["SADD", "db1:set", "x", "y"], ["SET", "int:0", "shadow"]])
    c.ok("SELECT", 9)
    c.pipeline([["ZADD", "db9:z", "1", "a"], ["HSET", "db9:h", "k", "v"]])
    c.ok("SELECT", 0)


def _pairs(r):
    return dict(zip(r[0::2], r[1::2]))


def _stream_view(full):
    """XINFO STREAM FULL without what depends on time or node layout."""
    s = _pairs(full)
    groups = []
    for g in s[b"groups"]:
        g = _pairs(g)
        cons = tuple((_pairs(x)[b"name"], tuple((p[0], p[2]) for p in _pairs(x)[b"pending"]))
                     for x in g[b"consumers"])
        groups.append((g[b"name"], g[b"last-delivered-id"], g[b"entries-read"], g[b"lag"],
                       tuple((p[0], p[1], p[3]) for p in g[b"pending"]), cons))
    entries = tuple((e[0], tuple(e[1])) for e in s[b"entries"])
    return (s[b"length"], s[b"last-generated-id"], s[b"max-deleted-entry-id"], s[b"entries-added"],
            s[b"recorded-first-entry-id"], entries, tuple(groups))


def _keys(c):
    keys, cur = [], b"0"
    while True:
        r = c.ok("SCAN", cur, "COUNT", 1000)
        cur, batch = r[0], r[1]
        keys += batch
        if cur == b"0":
            return sorted(set(keys))


def snapshot(c, dbs=range(16), encodings=True):
    """{(db, key): (type, value, pexpiretime, encoding)} of every key."""
    out = {}
    for db in dbs:
        if isinstance(c.call("SELECT", db), Err):
            break
        for k in _keys(c):
            t = c.ok("TYPE", k)
            if t == b"string":
                v = c.ok("GET", k)
            elif t == b"list":
                v = tuple(c.ok("LRANGE", k, 0, -1))
            elif t == b"set":
                v = tuple(sorted(c.ok("SMEMBERS", k)))
            elif t == b"zset":
                v = tuple(c.ok("ZRANGE", k, 0, -1, "WITHSCORES"))
            elif t == b"hash":
                r = c.ok("HGETALL", k)
                v = tuple(sorted(zip(r[0::2], r[1::2])))
            elif t == b"stream":
                v = _stream_view(c.ok("XINFO", "STREAM", k, "FULL", "COUNT", 0))
            else:
                v = None
            enc = c.ok("OBJECT", "ENCODING", k) if encodings else None
            out[(db, k)] = (t, v, c.ok("PEXPIRETIME", k), enc)
    c.ok("SELECT", 0)
    return out


def diff(a, b, ignore_encoding=False, limit=8):
    """Human-readable differences between two snapshots ('' when equal)."""
    lines = []
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        if ignore_encoding and x and y:
            x, y = x[:3], y[:3]
        if x != y:
            lines.append("%r: %s != %s" % (k, str(x)[:200], str(y)[:200]))
            if len(lines) >= limit:
                lines.append("...")
                break
    return "\n".join(lines)
