#!/usr/bin/env python3
"""DEBUG DIGEST and DEBUG DIGEST-VALUE against redis-server 7.0: the same
commands go to both servers, then the dataset signature and the signature
of every key in every database must be byte-identical.

Goblin runs with --ram-head 16K and an --ssd-dir, so strings from 16 KiB up
have a head and a tail on the SSD directory. Covered: strings (int, embstr,
raw, LZF-compressed small values, head-only and head + tail values up to
3 MB, changed by APPEND/SETRANGE/SETBIT/INCRBYFLOAT), HyperLogLogs (sparse
and dense), lists (small, many nodes, integers, after edits), sets (intset
of 16/32/64-bit members, the small and the large table, an intset grown
into a table and shrunk back), sorted sets (listpack and skiplist, scores
that print oddly in %.17g: -0, inf, 0.1, denormals, the largest double),
hashes (listpack and hashtable), keys with a TTL (PEXPIREAT to the same
absolute time on both) and logically expired keys not yet removed, sixteen
databases (SWAPDB, MOVE), the small encodings forced by CONFIG SET, a
seeded random stream of writes, and signatures across RDB files: Goblin's
DEBUG RELOAD, Goblin loading Redis's dump and Redis loading Goblin's.

  python3 tests/persist/test_digest.py [-v] [--seed N] [name-substring ...]

GOBLIN=path selects the server binary (default build-release/goblin-core),
REDIS_SERVER the reference; --seed (or GOBLIN_SEED; "random" for a fresh
one) seeds the random stream. Ends with "digest: N passed, M failed".
"""
import os
import random
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, Suite  # noqa: E402
import dataset  # noqa: E402

TMP = os.path.join(ROOT, "tests", "tmp", "digest.%d" % os.getpid())
VERBOSE = "-v" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "-v"]
SEED = os.environ.get("GOBLIN_SEED", "20261129")
if "--seed" in ARGS:
    i = ARGS.index("--seed")
    SEED = ARGS[i + 1]
    del ARGS[i:i + 2]
SEED = random.randrange(1 << 31) if SEED == "random" else int(SEED)
HEAD = 16384
ZERO = b"0" * 40
SUITE = Suite("digest", TMP, VERBOSE)
test, tdir, start = SUITE.test, SUITE.tdir, SUITE.start


def goblin(d, *args):
    return start("goblin", d, "--ram-head", "16K", "--io-chunk", "16K", "--write-io-chunk", "64K",
                 "--ssd-dir", os.path.join(d, "ssd"), *args)


def pair(name):
    """A Goblin (SSD tails) and a redis-server, both empty."""
    return goblin(tdir(name + "_g")), start("redis", tdir(name + "_r"))


def both(g, r, cmds, check=True):
    """Send the commands to both servers; the replies must match too (a
    different reply means the datasets already differ)."""
    a = g.c.pipeline(cmds, check=check)
    b = r.c.pipeline(cmds, check=check)
    for cmd, x, y in zip(cmds, a, b):
        if x != y:
            raise AssertionError("replies differ for %r: goblin %r, redis %r"
                                 % ([str(v)[:40] for v in cmd[:4]], str(x)[:200], str(y)[:200]))


def keys_of(c):
    keys, cur = [], b"0"
    while True:
        cur, batch = c.ok("SCAN", cur, "COUNT", 1000)
        keys += batch
        if cur == b"0":
            return sorted(set(keys))


def same_digests(g, r, dbs=range(16), what=""):
    """DEBUG DIGEST equal and non-zero unless both are empty; then, per
    database, the same keys with the same DEBUG DIGEST-VALUE each."""
    dg, dr = g.c.ok("DEBUG", "DIGEST"), r.c.ok("DEBUG", "DIGEST")
    assert re.fullmatch(rb"[0-9a-f]{40}", dg), "not a digest: %r" % dg
    lines = []
    checked = 0
    for db in dbs:
        g.c.ok("SELECT", db)
        r.c.ok("SELECT", db)
        kg, kr = keys_of(g.c), keys_of(r.c)
        if kg != kr:
            lines.append("db %d: keys differ: only goblin %r, only redis %r"
                         % (db, sorted(set(kg) - set(kr))[:5], sorted(set(kr) - set(kg))[:5]))
            continue
        for i in range(0, len(kr), 500):
            chunk = kr[i:i + 500] + [b"\x00no such key"]
            vg = g.c.ok("DEBUG", "DIGEST-VALUE", *chunk)
            vr = r.c.ok("DEBUG", "DIGEST-VALUE", *chunk)
            assert vg[-1] == ZERO and vr[-1] == ZERO, "missing key: %r %r" % (vg[-1], vr[-1])
            for k, x, y in zip(chunk, vg, vr):
                checked += 1
                if x != y and len(lines) < 8:
                    lines.append("db %d key %r (%s, goblin %s / redis %s): %s != %s"
                                 % (db, k[:60], r.c.call("TYPE", k), g.c.call("OBJECT", "ENCODING", k),
                                    r.c.call("OBJECT", "ENCODING", k), x, y))
    g.c.ok("SELECT", 0)
    r.c.ok("SELECT", 0)
    if dg != dr:
        lines.insert(0, "DEBUG DIGEST: goblin %s, redis %s" % (dg.decode(), dr.decode()))
    assert not lines, "%s\n    %s" % (what or "digests differ", "\n    ".join(lines))
    if VERBOSE:
        print("    %s: %s, %d keys" % (what, dg.decode(), checked))
    return dg


def build(g, r, cmds, expect, what):
    """Send cmds to both; Redis must have chosen the encodings in expect
    ((key, encoding) pairs: the case is really covered); same digests."""
    both(g, r, cmds)
    enc = [(k, r.c.ok("OBJECT", "ENCODING", k).decode()) for k, _ in expect]
    assert enc == list(expect), "encodings in redis-server: %r" % enc
    return same_digests(g, r, what=what)


def big(n, seed, compressible):
    if compressible:
        w = b"goblin-%d:" % seed
        return (w * (n // len(w) + 1))[:n]
    rng = random.Random(seed)
    return bytes(rng.getrandbits(8) for _ in range(n))


# ---- tests --------------------------------------------------------------------------------------

@test
def empty_dataset_is_all_zeros():
    g, r = pair("empty")
    assert same_digests(g, r, what="empty") == ZERO
    assert g.c.ok("DEBUG", "DIGEST-VALUE") == [] == r.c.ok("DEBUG", "DIGEST-VALUE")
    both(g, r, [["SET", "k", "v"], ["DEL", "k"]])
    assert same_digests(g, r, what="emptied") == ZERO


@test
def persist_dataset_every_type():
    g, r = pair("dataset")
    for s in (g, r):
        dataset.build(s.c)
    assert same_digests(g, r, what="dataset.build") != ZERO


@test
def strings_every_encoding_and_size():
    g, r = pair("strings")
    cmds = [["SET", "int:%d" % i, str(v)] for i, v in enumerate(dataset.INTS)]
    cmds += [["SET", "s:44", b"x" * 44], ["SET", "s:45", b"y" * 45], ["SET", "s:empty", b""],
             ["SET", "s:minus0", b"-0"], ["SET", "s:lead0", b"007"], ["SET", "s:bin", bytes(range(256))],
             ["SET", "s:float", b"3.14"], ["SET", "s:21digits", b"123456789012345678901"]]
    sizes = (31, 32, 33, 100, 4095, 4096, 4097, HEAD - 1, HEAD, HEAD + 1, 2 * HEAD, 3 * HEAD + 7,
             1000003, 3000000)
    for n in sizes:
        cmds.append(["SET", "big:c:%d" % n, big(n, n, True)])
        cmds.append(["SET", "big:r:%d" % n, big(n, n, False)])
    build(g, r, cmds, [("int:0", "int"), ("s:44", "embstr"), ("s:45", "raw")], "strings as set")
    # Changes through the tail and across the head boundary.
    edits = []
    for n in (HEAD - 1, HEAD, 3 * HEAD + 7, 1000003):
        edits += [["APPEND", "big:c:%d" % n, "tail"], ["SETRANGE", "big:r:%d" % n, HEAD - 2, "ABCD"],
                  ["SETRANGE", "big:c:%d" % n, n - 1, "Z"], ["SETBIT", "big:r:%d" % n, 8 * n + 3, 1]]
    edits += [["APPEND", "int:3", "9"], ["INCRBYFLOAT", "s:float", "0.1"], ["INCRBY", "int:5", 1000],
              ["SETRANGE", "s:44", 44, "z"], ["SETBIT", "s:setbit", 100000, 1], ["GETSET", "int:1", "x" * 5000]]
    both(g, r, edits)
    same_digests(g, r, what="strings after edits")


@test
def hyperloglog_sparse_and_dense():
    g, r = pair("hll")
    cmds = [["PFADD", "hll:sparse", "a", "b", "c"], ["PFADD", "hll:empty"]]
    els = ["e%d" % i for i in range(20000)]
    for i in range(0, len(els), 2000):
        cmds.append(["PFADD", "hll:dense"] + els[i:i + 2000])
    cmds += [["PFCOUNT", "hll:dense"], ["PFMERGE", "hll:merged", "hll:sparse", "hll:dense"]]
    both(g, r, cmds)
    same_digests(g, r, what="hll")


@test
def lists_every_shape():
    g, r = pair("lists")
    cmds = [["RPUSH", "l:small", "a", "1", "b", "-5", "100000", ""],
            ["RPUSH", "l:ints"] + [str(v) for v in dataset.INTS],
            ["RPUSH", "l:big"] + ["element-%d" % i for i in range(5000)] + [str(i) for i in range(3000)],
            ["RPUSH", "l:hugeelem", "before", "H" * 20000, "after", "x" * 70000],
            ["LPUSH", "l:lpush", "c", "b", "a"]]
    both(g, r, cmds)
    same_digests(g, r, what="lists")
    both(g, r, [["LINSERT", "l:big", "BEFORE", "element-2500", "inserted"], ["LREM", "l:big", 0, "7"],
                ["LSET", "l:small", 2, "B"], ["LTRIM", "l:ints", 2, -3], ["LPOP", "l:big", 10],
                ["RPOPLPUSH", "l:big", "l:small"], ["LMOVE", "l:small", "l:new", "LEFT", "RIGHT"]])
    same_digests(g, r, what="lists after edits")


@test
def sets_every_encoding():
    g, r = pair("sets")
    cmds = [["SADD", "set:int16", "1", "2", "3", "-7"], ["SADD", "set:int32", "1", "70000", "-70000"],
            ["SADD", "set:int64", "1", str(2 ** 40), str(-2 ** 62), str(2 ** 63 - 1), str(-2 ** 63)],
            ["SADD", "set:512"] + [str(i * 7) for i in range(512)],
            ["SADD", "set:513"] + [str(i * 7) for i in range(513)],
            ["SADD", "set:str", "a", "b", "c", "1"], ["SADD", "set:bin", b"\x00", b"\xff\xfe", b""],
            ["SADD", "set:big"] + ["member-%d" % i for i in range(1000)],
            ["SADD", "set:longmember", "m" * 100, "short"],
            ["SADD", "set:shrunk", "1", "2", "3", "x"], ["SREM", "set:shrunk", "x"],
            ["SUNIONSTORE", "set:union", "set:int16", "set:str"],
            ["SINTERSTORE", "set:inter", "set:512", "set:513"],
            ["SDIFFSTORE", "set:diff", "set:big", "set:str"],
            ["SMOVE", "set:big", "set:str", "member-5"], ["SMOVE", "set:512", "set:int32", "14"]]
    build(g, r, cmds, [("set:int16", "intset"), ("set:512", "intset"), ("set:513", "hashtable"),
                       ("set:str", "hashtable"), ("set:shrunk", "hashtable")], "sets")


@test
def zsets_every_encoding_and_score():
    g, r = pair("zsets")
    scores = ["1", "2.5", "-3", "inf", "-inf", "0", "-0", "1e300", "0.1", "3.0000000000000004", "100000",
              "5e-324", "1.7976931348623157e308", "-1.5e-310", "0.3333333333333333", "123456789012345678",
              "1e-5", "1e16", "-2147483648"]
    args = []
    for i, s in enumerate(scores):
        args += [s, "m%d" % i]
    cmds = [["ZADD", "z:small"] + args, ["ZADD", "z:ties", "1", "b", "1", "a", "1", "c"],
            ["ZADD", "z:intmembers", "1", "1", "2", "-7", "3", "100000"],
            ["ZADD", "z:longmember", "1", "m" * 100, "2", "short"] + args,
            ["ZADD", "z:128"] + [x for i in range(128) for x in (str(i / 8), "e%d" % i)],
            ["ZADD", "z:129"] + [x for i in range(129) for x in (str(i / 8), "e%d" % i)],
            ["ZADD", "z:shrunk", "1", "a", "2", "m" * 100], ["ZREM", "z:shrunk", "m" * 100],
            ["ZINCRBY", "z:small", "0.7", "m1"], ["ZADD", "z:small", "INCR", "-1e-3", "m2"],
            ["ZUNIONSTORE", "z:union", 2, "z:small", "z:129", "WEIGHTS", "0.5", "3"],
            ["ZINTERSTORE", "z:inter", 2, "z:128", "z:129", "AGGREGATE", "MAX"],
            ["ZRANGESTORE", "z:range", "z:129", 10, 60]]
    build(g, r, cmds, [("z:small", "listpack"), ("z:longmember", "skiplist"), ("z:128", "listpack"),
                       ("z:129", "skiplist"), ("z:shrunk", "skiplist")], "zsets")
    both(g, r, [["ZREMRANGEBYRANK", "z:129", 0, 9], ["ZPOPMIN", "z:128", 3], ["ZADD", "z:small", "7", "m6"]])
    same_digests(g, r, what="zsets after edits")


@test
def hashes_every_encoding():
    g, r = pair("hashes")
    cmds = [["HSET", "h:small", "f1", "v1", "n", "12", "neg", "-5", "empty", "", "", "emptyfield"],
            ["HSET", "h:longval", "f", "v" * 100], ["HSET", "h:bin", b"\x00\x01", b"\xff" * 3],
            ["HSET", "h:512"] + [x for i in range(512) for x in ("f%d" % i, str(i))],
            ["HSET", "h:513"] + [x for i in range(512) for x in ("f%d" % i, str(i))], ["HSET", "h:513", "f512", "x"],
            ["HSET", "h:shrunk", "a", "1", "b", "x" * 100], ["HDEL", "h:shrunk", "b"],
            ["HINCRBY", "h:small", "n", 30], ["HINCRBYFLOAT", "h:small", "fl", "1.25"],
            ["HINCRBYFLOAT", "h:513", "f3", "0.1"], ["HSETNX", "h:513", "new", "v"],
            ["HDEL", "h:513", "f0", "f1"]]
    build(g, r, cmds, [("h:small", "listpack"), ("h:longval", "hashtable"), ("h:512", "listpack"),
                       ("h:513", "hashtable"), ("h:shrunk", "hashtable")], "hashes")


@test
def keys_with_ttl():
    g, r = pair("ttl")
    at = 4102444800123  # 2100-01-01, ms precision: the same absolute time on both
    cmds = []
    for i, (t, mk) in enumerate([("str", ["SET", "{k}", "v"]), ("int", ["SET", "{k}", "12"]),
                                 ("list", ["RPUSH", "{k}", "a", "b"]), ("set", ["SADD", "{k}", "1", "2"]),
                                 ("zset", ["ZADD", "{k}", "1", "a"]), ("hash", ["HSET", "{k}", "f", "v"]),
                                 ("big", ["SET", "{k}", "B" * 50000])]):
        k = "ttl:%s" % t
        cmds.append([a.replace("{k}", k) if isinstance(a, str) else a for a in mk])
        cmds.append(["PEXPIREAT", k, at + i])
        cmds.append([a.replace("{k}", "nottl:" + t) if isinstance(a, str) else a for a in mk])
    cmds += [["SET", "ttl:setex", "v", "PXAT", at], ["SET", "ttl:persisted", "v", "PXAT", at],
             ["PERSIST", "ttl:persisted"], ["SET", "ttl:getex", "v"], ["GETEX", "ttl:getex", "PXAT", at]]
    both(g, r, cmds)
    same_digests(g, r, what="ttl")


@test
def logically_expired_keys_still_count():
    g, r = pair("expired")
    both(g, r, [["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["SET", "gone", "v", "PX", "1"],
                ["HSET", "gone:h", "f", "v"], ["PEXPIRE", "gone:h", "1"], ["SET", "stays", "v"]])
    time.sleep(0.1)
    # Not SCANned (SCAN would expire them): signatures of the named keys.
    keys = ["gone", "gone:h", "stays"]
    vg, vr = g.c.ok("DEBUG", "DIGEST-VALUE", *keys), r.c.ok("DEBUG", "DIGEST-VALUE", *keys)
    assert vg == vr and ZERO not in vg, (vg, vr)
    dg, dr = g.c.ok("DEBUG", "DIGEST"), r.c.ok("DEBUG", "DIGEST")
    assert dg == dr, (dg, dr)
    both(g, r, [["GET", "gone"], ["HGET", "gone:h", "f"]])
    same_digests(g, r, dbs=[0], what="after lazy expiry")
    assert g.c.ok("DEBUG", "DIGEST") != dg


@test
def sixteen_databases_swapdb_and_move():
    g, r = pair("dbs")
    cmds = []
    for db in range(16):
        cmds += [["SELECT", db], ["SET", "k", "db%d" % db], ["SADD", "s%d" % (db % 3), db],
                 ["HSET", "same", "f", "v"]]
    cmds += [["SELECT", 0]]
    both(g, r, cmds)
    d1 = same_digests(g, r, what="16 databases")
    both(g, r, [["SWAPDB", 3, 7]])
    d2 = same_digests(g, r, what="after SWAPDB")
    assert d1 != d2
    both(g, r, [["SWAPDB", 3, 7], ["SELECT", 5], ["MOVE", "s2", 15], ["SELECT", 0], ["FLUSHDB"]])
    same_digests(g, r, what="after MOVE and FLUSHDB")


@test
def small_encodings_configured():
    g, r = pair("smallenc")
    both(g, r, [["CONFIG", "SET", "set-max-intset-entries", "4"],
                ["CONFIG", "SET", "zset-max-listpack-entries", "4"],
                ["CONFIG", "SET", "zset-max-listpack-value", "8"],
                ["CONFIG", "SET", "hash-max-listpack-entries", "4"],
                ["CONFIG", "SET", "hash-max-listpack-value", "8"],
                ["CONFIG", "SET", "list-max-listpack-size", "4"]])
    for s in (g, r):
        dataset.build(s.c, big=False)
    same_digests(g, r, what="small encodings")


def random_command(rng):
    k = "r:%d" % rng.randrange(40)
    m = rng.choice(["a", "b", "c", "1", "2", "-3", "1000", "x" * 70, "m%d" % rng.randrange(300),
                    str(rng.randrange(-10 ** 6, 10 ** 6)), ""])
    v = rng.choice(["v", "12", "-0", "3.5", "z" * 100, "y" * (HEAD + rng.randrange(-2, 3)), "w" * 40000])
    sc = rng.choice(["1", "2.5", "-inf", "inf", "0.1", str(rng.uniform(-1e9, 1e9)), str(rng.randrange(100))])
    return rng.choice([
        ["SET", k, v], ["APPEND", k, m], ["INCRBY", k, rng.randrange(-5, 5)], ["SETRANGE", k, rng.randrange(20000), m],
        ["RPUSH", k, m, v[:50]], ["LPUSH", k, m], ["LPOP", k], ["LREM", k, rng.randrange(-2, 3), m],
        ["LINSERT", k, "AFTER", m, v[:20]], ["LTRIM", k, rng.randrange(3), -rng.randrange(1, 4)],
        ["SADD", k, m, str(rng.randrange(600))], ["SREM", k, m], ["SADD", k] + [str(i) for i in range(rng.randrange(600))],
        ["ZADD", k, sc, m], ["ZINCRBY", k, sc if sc not in ("inf", "-inf") else "1", m], ["ZREM", k, m],
        ["ZADD", k] + [x for i in range(rng.randrange(200)) for x in (str(i / 4), "zm%d" % i)],
        ["HSET", k, m or "f", v[:80]], ["HDEL", k, m], ["HINCRBY", k, "n", rng.randrange(100)],
        ["HSET", k] + [x for i in range(rng.randrange(200)) for x in ("hf%d" % i, str(i))],
        ["PFADD", k, m, v[:10]], ["DEL", k], ["PEXPIREAT", k, 4102444800000 + rng.randrange(1000)],
        ["PERSIST", k], ["RENAME", k, "r:%d" % rng.randrange(40)], ["COPY", k, "r:%d" % rng.randrange(40), "REPLACE"],
        ["MOVE", k, rng.randrange(1, 3)], ["SWAPDB", 0, rng.randrange(1, 3)],
    ])


@test
def random_writes():
    g, r = pair("random")
    rng = random.Random(SEED)
    for rnd in range(10):
        cmds = [random_command(rng) for _ in range(500)]
        both(g, r, cmds, check=False)
        same_digests(g, r, dbs=range(3), what="random writes, round %d (seed %d)" % (rnd, SEED))


@test
def signatures_survive_rdb_files():
    g, r = pair("rdb")
    for s in (g, r):
        dataset.build(s.c)
    both(g, r, [["SET", "big:ssd", big(3 * HEAD + 7, 1, False)], ["SET", "big:1m", big(1000003, 2, True)]])
    d = same_digests(g, r, what="before the files")
    assert g.c.ok("DEBUG", "RELOAD") == b"OK"
    same_digests(g, r, what="after Goblin's DEBUG RELOAD")
    # Goblin loads Redis's dump, Redis loads Goblin's.
    assert g.c.ok("SAVE") == b"OK" and r.c.ok("SAVE") == b"OK"
    g.stop()
    r.stop()
    gd, rd = g.dir, r.dir
    shutil.copy(os.path.join(rd, "dump.rdb"), os.path.join(TMP, "redis.rdb"))
    shutil.copy(os.path.join(gd, "dump.rdb"), os.path.join(rd, "dump.rdb"))
    shutil.copy(os.path.join(TMP, "redis.rdb"), os.path.join(gd, "dump.rdb"))
    shutil.rmtree(os.path.join(gd, "ssd"), ignore_errors=True)
    g2, r2 = goblin(gd), start("redis", rd)
    assert same_digests(g2, r2, what="each loading the other's dump") == d


# ---- runner ------------------------------------------------------------------------------------

def main():
    print("seed: %d" % SEED)
    return SUITE.main(ARGS)


if __name__ == "__main__":
    sys.exit(main())
