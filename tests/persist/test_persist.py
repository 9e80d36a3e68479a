#!/usr/bin/env python3
"""Persistence tests: RDB round trips Goblin <-> file <-> Goblin and
Goblin <-> redis-server 7.0, hand-made files with every old encoding,
corrupt files (truncated, bit flips, each kind of damage), crashes
(kill -9 during SAVE and BGSAVE, and under continuous writes), a full disk (tmpfs), an unwritable
directory, the arena-hugetlb refusal, -LOADING, save points, SHUTDOWN and
SIGTERM, and a small fuzz run of LOAD.

  python3 tests/persist/test_persist.py [-v] [name-substring ...]

GOBLIN=path selects the server binary (default build-release/goblin-core);
PERSIST_KEEP=1 keeps the servers' directories and logs (tests/tmp/persist.*);
PERSIST_FUZZ_N / PERSIST_FUZZ_SEED size and seed the LOAD fuzz run.
Ends with "persist: N passed, M failed". The tests that mount a tmpfs need
root; without it they say so and are skipped.
"""
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, Err, Skip, Suite, info, mount_tmpfs, umount, wait_for  # noqa: E402
import dataset  # noqa: E402
import rdbgen  # noqa: E402

CHECK_RDB = "/usr/bin/redis-check-rdb"
TMP = os.path.join(ROOT, "tests", "tmp", "persist.%d" % os.getpid())
VERBOSE = "-v" in sys.argv
SUITE = Suite("persist", TMP, VERBOSE)
test, tdir, start = SUITE.test, SUITE.tdir, SUITE.start


def goblin(d, *args, env=None, wait=True):
    return start("goblin", d, *args, env=env, wait=wait)


def redis(d, *args):
    return start("redis", d, *args)


def check_rdb(path):
    p = subprocess.run([CHECK_RDB, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode("utf-8", "replace")
    assert p.returncode == 0 and "RDB looks OK" in out, "redis-check-rdb failed:\n" + out[-1500:]
    return out


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def eq(a, b, what=""):
    assert a == b, "%s: %r != %r" % (what, a, b) if what else "%r != %r" % (a, b)


def assert_same(a, b, what, ignore_encoding=False):
    d = dataset.diff(a, b, ignore_encoding)
    assert not d, "%s differ:\n%s" % (what, d)


def child_pids(pid):
    out = []
    for f in glob.glob("/proc/%d/task/*/children" % pid):
        try:
            out += [int(x) for x in open(f).read().split()]
        except OSError:
            pass
    return out


# ---- round trips ------------------------------------------------------------------

@test
def goblin_roundtrip_via_startup_load():
    d = tdir("rt_startup")
    g = goblin(d)
    dataset.build(g.c)
    before = dataset.snapshot(g.c)
    eq(g.c.call("SAVE"), b"OK")
    check_rdb(os.path.join(d, "dump.rdb"))
    g.stop()
    g2 = goblin(d)
    after = dataset.snapshot(g2.c)
    assert_same(before, after, "Goblin before SAVE and after restart")
    assert "keys loaded" in g2.log_text()
    g2.stop()


@test
def goblin_roundtrip_via_load_and_bgsave():
    d = tdir("rt_load")
    g = goblin(d)
    dataset.build(g.c)
    before = dataset.snapshot(g.c)
    t0 = g.c.ok("LASTSAVE")
    time.sleep(1.05)
    eq(g.c.call("BGSAVE"), b"Background saving started")
    assert wait_for(lambda: info(g.c)["rdb_bgsave_in_progress"] == "0"), "BGSAVE did not finish"
    i = info(g.c)
    eq(i["rdb_last_bgsave_status"], "ok", "bgsave status")
    eq(i["rdb_changes_since_last_save"], "0", "changes since save")
    assert g.c.ok("LASTSAVE") > t0, "LASTSAVE did not move"
    check_rdb(os.path.join(d, "dump.rdb"))
    shutil.copy(os.path.join(d, "dump.rdb"), os.path.join(d, "copy.rdb"))
    g.c.ok("FLUSHALL")
    eq(g.c.ok("DBSIZE"), 0)
    eq(g.c.call("LOAD"), b"OK")
    assert_same(before, dataset.snapshot(g.c), "LOAD of dump.rdb")
    g.c.ok("FLUSHALL")
    eq(g.c.call("LOAD", os.path.join(d, "copy.rdb")), b"OK")
    assert_same(before, dataset.snapshot(g.c), "LOAD of a copy")
    # Loading from another file counts as changes (save points see them).
    assert int(info(g.c)["rdb_changes_since_last_save"]) > 0
    g.stop()


@test
def goblin_to_redis():
    d = tdir("g2r")
    g = goblin(d)
    dataset.build(g.c)
    before = dataset.snapshot(g.c)
    eq(g.c.call("SAVE"), b"OK")
    check_rdb(os.path.join(d, "dump.rdb"))
    g.stop()
    r = redis(d)
    after = dataset.snapshot(r.c)
    assert_same(before, after, "Goblin's dataset and redis-server's load of Goblin's dump")
    r.stop()


@test
def goblin_to_redis_uncompressed():
    d = tdir("g2r_nocomp")
    g = goblin(d, "--rdbcompression", "no")
    dataset.build(g.c, big=False)
    before = dataset.snapshot(g.c)
    eq(g.c.call("SAVE"), b"OK")
    data = read(os.path.join(d, "dump.rdb"))
    assert b"abcabcabcabc" in data, "rdbcompression no still compressed"
    check_rdb(os.path.join(d, "dump.rdb"))
    g.stop()
    r = redis(d)
    assert_same(before, dataset.snapshot(r.c), "uncompressed dump in redis-server")
    r.stop()


@test
def redis_to_goblin():
    d = tdir("r2g")
    r = redis(d)
    dataset.build(r.c)
    before = dataset.snapshot(r.c)
    eq(r.c.call("SAVE"), b"OK")
    r.stop()
    g = goblin(d)
    after = dataset.snapshot(g.c)
    assert_same(before, after, "redis-server's dataset and Goblin's start-up load of its dump")
    # And back: Goblin's save of it loads into redis-server unchanged.
    eq(g.c.call("SAVE"), b"OK")
    g.stop()
    r2 = redis(d)
    assert_same(before, dataset.snapshot(r2.c), "Redis -> Goblin -> Redis")
    r2.stop()


LIBS = [
    "#!lua name=lib1\nlocal function add(a) return a + 1 end\n"
    "redis.register_function('f1', function(keys, args) return add(tonumber(args[1])) end)\n"
    "redis.register_function{function_name='f2', callback=function() return redis.call('get', 'k') end, "
    "flags={'no-writes', 'allow-stale'}, description='reads k'}",
    "#!lua name=lib2\nredis.register_function('f3', function(keys) return redis.call('set', keys[1], 'v') end)"
    + "\n-- padding so that the code is long enough to be LZF compressed " * 8,
]


def function_list(c):
    """FUNCTION LIST WITHCODE, libraries and functions in name order."""
    out = []
    for lib in c.ok("FUNCTION", "LIST", "WITHCODE"):
        m = dict(zip(lib[0::2], lib[1::2]))
        funcs = sorted([dict(zip(f[0::2], f[1::2])) for f in m[b"functions"]], key=lambda f: f[b"name"])
        for f in funcs:
            f[b"flags"] = sorted(f[b"flags"])
        m[b"functions"] = funcs
        out.append(m)
    return sorted(out, key=lambda m: m[b"library_name"])


def check_functions(c, want, what):
    eq(function_list(c), want, what)
    c.ok("SET", "k", "kv")
    eq(c.call("FCALL", "f1", 0, 41), 42, what + ": f1")
    eq(c.call("FCALL_RO", "f2", 0), b"kv", what + ": f2")
    eq(c.call("FCALL", "f3", 1, "x"), b"OK", what + ": f3")


@test
def functions_goblin_to_redis_and_back():
    """Libraries saved by Goblin load in redis-server (FUNCTION2 records),
    and the other way round, through SAVE and start-up loads."""
    d = tdir("fn_g2r")
    g = goblin(d)
    for code in LIBS:
        g.c.ok("FUNCTION", "LOAD", code)
    g.c.ok("SET", "k", "kv")
    want = function_list(g.c)
    eq(len(want), 2)
    eq(g.c.call("SAVE"), b"OK")
    check_rdb(os.path.join(d, "dump.rdb"))
    g.stop()
    r = redis(d)
    check_functions(r.c, want, "redis-server's load of Goblin's dump")
    r.c.ok("FUNCTION", "DELETE", "lib2")
    r.c.ok("FUNCTION", "LOAD", LIBS[1].replace("lib2", "lib3"))
    want2 = function_list(r.c)
    eq(r.c.call("SAVE"), b"OK")
    r.stop()
    g = goblin(d)
    eq(function_list(g.c), want2, "Goblin's load of redis-server's dump")
    eq(g.c.call("FCALL", "f1", 0, 1), 2)
    # DEBUG RELOAD and LOAD keep them; a file without libraries empties them.
    eq(g.c.call("DEBUG", "RELOAD"), b"OK")
    eq(function_list(g.c), want2, "after DEBUG RELOAD")
    g.stop()
    d2 = tdir("fn_empty")
    r = redis(d2)
    r.c.ok("SET", "a", "b")
    eq(r.c.call("SAVE"), b"OK")
    r.stop()
    g = goblin(d)
    eq(g.c.call("LOAD", os.path.join(d2, "dump.rdb")), b"OK")
    eq(g.c.ok("FUNCTION", "LIST"), [], "libraries after loading a file without any")
    g.stop()


@test
def function_dump_restore_between_goblin_and_redis():
    """FUNCTION DUMP payloads restore on the other server, both ways."""
    g = goblin(tdir("fn_dump_g"))
    r = redis(tdir("fn_dump_r"))
    for code in LIBS:
        g.c.ok("FUNCTION", "LOAD", code)
    want = function_list(g.c)
    eq(r.c.call("FUNCTION", "RESTORE", g.c.ok("FUNCTION", "DUMP")), b"OK")
    check_functions(r.c, want, "Goblin's FUNCTION DUMP restored in redis-server")
    g.c.ok("FUNCTION", "FLUSH")
    eq(g.c.call("FUNCTION", "RESTORE", r.c.ok("FUNCTION", "DUMP")), b"OK")
    check_functions(g.c, want, "redis-server's FUNCTION DUMP restored in Goblin")
    # Uncompressed payloads are byte for byte Redis's.
    g.c.ok("CONFIG", "SET", "rdbcompression", "no")
    r.c.ok("CONFIG", "SET", "rdbcompression", "no")
    g.c.ok("FUNCTION", "FLUSH")
    r.c.ok("FUNCTION", "FLUSH")
    g.c.ok("FUNCTION", "LOAD", LIBS[0])
    r.c.ok("FUNCTION", "LOAD", LIBS[0])
    eq(g.c.ok("FUNCTION", "DUMP"), r.c.ok("FUNCTION", "DUMP"), "uncompressed FUNCTION DUMP")
    # Errors as Redis's.
    for args in (("bad",), (r.c.ok("DUMP", "k") or b"x",)):
        eq(g.c.call("FUNCTION", "RESTORE", *args), r.c.call("FUNCTION", "RESTORE", *args), "RESTORE %r" % (args,))
    g.stop()
    r.stop()


def dump_all(c):
    """{(db, key): (payload, pexpiretime)} of every key, by DUMP."""
    out = {}
    for db in (0, 1, 9):
        c.ok("SELECT", db)
        for k in dataset._keys(c):
            out[(db, k)] = (c.ok("DUMP", k), c.ok("PEXPIRETIME", k))
    c.ok("SELECT", 0)
    return out


def restore_all(c, dumps):
    for (db, k), (payload, at) in sorted(dumps.items()):
        c.ok("SELECT", db)
        if at > 0:
            eq(c.call("RESTORE", k, at, payload, "ABSTTL"), b"OK", "RESTORE %r" % k)
        else:
            eq(c.call("RESTORE", k, 0, payload), b"OK", "RESTORE %r" % k)
    c.ok("SELECT", 0)


@test
def dump_restore_between_goblin_and_redis():
    """DUMP every key of the full dataset on one server, RESTORE it on the
    other, both ways: same values, TTLs and encodings."""
    d = tdir("dumprestore")
    g = goblin(d)
    r = redis(tdir("dumprestore_r"))
    dataset.build(g.c)
    want = dataset.snapshot(g.c)
    restore_all(r.c, dump_all(g.c))
    assert_same(want, dataset.snapshot(r.c), "Goblin's dataset and its DUMPs RESTOREd in redis-server")
    g.c.ok("FLUSHALL")
    restore_all(g.c, dump_all(r.c))
    assert_same(want, dataset.snapshot(g.c), "redis-server's DUMPs RESTOREd in Goblin")
    # The compact forms come out byte for byte as Redis writes them (LZF
    # off: Goblin's compressor may pick other matches, as any LZF may).
    g.c.ok("CONFIG", "SET", "rdbcompression", "no")
    r.c.ok("CONFIG", "SET", "rdbcompression", "no")
    gd, rd = dump_all(g.c), dump_all(r.c)
    same = 0
    for key, (payload, _) in gd.items():
        db, k = key
        g.c.ok("SELECT", db)
        enc = g.c.ok("OBJECT", "ENCODING", k)
        g.c.ok("SELECT", 0)
        if enc in (b"int", b"embstr", b"listpack", b"intset"):
            eq(payload, rd[key][0], "DUMP of %r (%s)" % (k, enc.decode()))
            same += 1
    assert same >= 30, "only %d compact keys compared" % same
    g.stop()
    r.stop()


def restore_replies(c):
    """RESTORE's replies to bad requests, and what each left behind."""
    c.ok("FLUSHALL")
    c.ok("SET", "src", "value")
    c.ok("RPUSH", "lsrc", "a", "b")
    good = c.ok("DUMP", "src")
    lgood = c.ok("DUMP", "lsrc")
    c.ok("SET", "busy", "old")
    body = good[:-10]
    ver10 = bytes([10, 0])

    def payload(b, ver=ver10):
        import struct
        return b + ver + struct.pack("<Q", crc64(b + ver))

    cases = [
        ["RESTORE", "busy", 0, good],
        ["RESTORE", "busy", "abc", good, "REPLACE"],
        ["RESTORE", "new", -1, good],
        ["RESTORE", "new", "x", good],
        ["RESTORE", "new", 0, good[:-1] + bytes([good[-1] ^ 1])],
        ["RESTORE", "new", 0, b"short"],
        ["RESTORE", "new", 0, payload(body, bytes([11, 0]))],
        ["RESTORE", "new", 0, payload(b"\x00\x05hel")],
        ["RESTORE", "new", 0, payload(b"\x63\x01a")],
        ["RESTORE", "new", 0, payload(b"\x0e\x00")],
        ["RESTORE", "new", 0, good, "IDLETIME", -1],
        ["RESTORE", "new", 0, good, "IDLETIME", "x"],
        ["RESTORE", "new", 0, good, "FREQ", 256],
        ["RESTORE", "new", 0, good, "IDLETIME", 10, "FREQ", 5],
        ["RESTORE", "new", 0, good, "BOGUS"],
        ["RESTORE", "new", 0, good, "IDLETIME"],
        ["RESTORE", "new", 0, good, "REPLACE", "ABSTTL"],
        ["RESTORE", "busy", 0, lgood, "REPLACE"],
        ["RESTORE", "past", 1, good, "ABSTTL"],
        ["RESTORE", "busy", 1, good, "REPLACE", "ABSTTL"],
        ["RESTORE", "idle", 0, good, "IDLETIME", 1000],
        ["OBJECT", "IDLETIME", "idle"],
        ["RESTORE", "ttl", 100000, good],
        ["PTTL", "ttl"],
        ["DUMP", "nokey"],
    ]
    out = []
    for cmd in cases:
        rep = c.call(*cmd)
        if cmd[0] == "PTTL":
            rep = 99000 < rep <= 100000
        out.append((repr(cmd[:3])[:60], repr(rep), sorted(dataset._keys(c))))
    return out


def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected), bit by bit."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
    return crc


@test
def restore_errors_match_redis():
    """Every refusal is Redis 7.0's, in Redis's order of checks, and
    changes nothing."""
    g = goblin(tdir("restore_err_g"))
    r = redis(tdir("restore_err_r"))
    got, want = restore_replies(g.c), restore_replies(r.c)
    for a, b in zip(got, want):
        eq(a, b, "goblin vs redis-server (case %d)" % got.index(a))
    g.stop()
    r.stop()


@test
def restore_of_damaged_payloads_never_crashes():
    """Valid DUMPs of every type with bytes flipped, cut or inserted (and
    the checksum made right again): RESTORE answers OK or an error, and a
    restored key reads back."""
    import struct
    rng = random.Random(int(os.environ.get("PERSIST_FUZZ_SEED", "11")))
    g = goblin(tdir("restore_fuzz"))
    dataset.build(g.c, big=False)
    payloads = [p for p, _ in dump_all(g.c).values()]
    ok = errs = 0
    for i in range(int(os.environ.get("PERSIST_FUZZ_N", "3000")) // 2):
        body = bytearray(rng.choice(payloads)[:-10])
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(body))
            how = rng.random()
            if how < 0.6:
                body[pos] = rng.getrandbits(8)
            elif how < 0.8:
                del body[pos:pos + rng.randint(1, 8)]
            else:
                body[pos:pos] = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8)))
            if not body:
                body = bytearray(b"\x00")
        b = bytes(body) + b"\x0a\x00"
        rep = g.c.call("RESTORE", "fz", 0, b + struct.pack("<Q", crc64(b)), "REPLACE")
        if rep == b"OK":
            ok += 1
            t = g.c.ok("TYPE", "fz")
            assert t in (b"string", b"list", b"set", b"zset", b"hash", b"stream"), t
            if t == b"stream":
                for cmd in (["XRANGE", "fz", "-", "+"], ["XREVRANGE", "fz", "+", "-"], ["XINFO", "STREAM", "fz", "FULL"],
                            ["XADD", "fz", "*", "f", "v"], ["XTRIM", "fz", "MAXLEN", "1"]):
                    g.c.call(*cmd)
            assert isinstance(g.c.call("DUMP", "fz"), bytes)
            g.c.ok("DEL", "fz")
        else:
            assert isinstance(rep, Err), rep
            errs += 1
    assert g.alive(), "server died"
    eq(g.c.call("PING"), b"PONG")
    assert ok > 10 and errs > 100, "ok %d, errors %d" % (ok, errs)
    g.stop()


@test
def restore_stream_node_key_is_its_first_entry():
    """A stream node whose first entry's ID is not the node key (Redis
    never writes one: deleted entries keep their place) is refused as bad
    data; a node whose first entry was deleted loads and DUMPs the same
    bytes as redis-server's."""
    import struct
    g = goblin(tdir("restore_stream_node"))
    r = redis(tdir("restore_stream_node_r"))
    # node key 10-0, its only entry 10-9 (seq delta 9): type 19, group g
    body = bytes.fromhex(
        "130110000000000000000a00000000000000001d1d0000000a0001010001010181610200010201000109018162"
        "020401ff014064050a00405a00320101670000" "81ffffffffffffffff0000")
    b = body + b"\x0a\x00"
    rep = g.c.call("RESTORE", "bad", 0, b + struct.pack("<Q", crc64(b)))
    assert isinstance(rep, Err) and "Bad data format" in str(rep), rep
    eq(g.c.call("EXISTS", "bad"), 0)
    # with seq delta 0 the same node is valid
    fixed = body.replace(bytes.fromhex("000109018162"), bytes.fromhex("000100018162"))
    assert fixed != body
    b = fixed + b"\x0a\x00"
    eq(g.c.call("RESTORE", "good", 0, b + struct.pack("<Q", crc64(b))), b"OK")
    eq(g.c.call("XRANGE", "good", "-", "+"), [[b"10-0", [b"a", b"b"]]])
    for c in (g.c, r.c):
        c.ok("XADD", "s", "1-1", "f", "v")
        c.ok("XADD", "s", "2-1", "f", "w")
        c.ok("XDEL", "s", "1-1")
    dump = r.c.call("DUMP", "s")
    eq(g.c.call("DUMP", "s"), dump, "DUMP of a node whose first entry is deleted")
    eq(g.c.call("RESTORE", "s2", 0, dump), b"OK")
    eq(g.c.call("XRANGE", "s2", "-", "+"), [[b"2-1", [b"f", b"w"]]])
    eq(g.c.call("DUMP", "s2"), dump)
    g.stop()
    r.stop()


def _stream_shapes(c):
    """Streams of every shape on c (a redis-server 7.0: deleted entries,
    several nodes, groups with pending entries, consumers with and without
    them, XSETID); returns their keys."""
    c.ok("CONFIG", "SET", "stream-node-max-entries", 10)
    c.ok("XGROUP", "CREATE", "x:empty", "g", "$", "MKSTREAM")
    for i in range(1, 40):
        c.ok("XADD", "x:nodes", "%d-%d" % (i, i % 3), "a", i, "b", "v" * (i % 7))
    c.ok("XDEL", "x:nodes", "1-1", "12-0", "39-0")
    c.ok("XGROUP", "CREATE", "x:nodes", "g1", "0")
    c.ok("XGROUP", "CREATE", "x:nodes", "g2", "5-2", "ENTRIESREAD", 4)
    c.ok("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 6, "STREAMS", "x:nodes", ">")
    c.ok("XREADGROUP", "GROUP", "g1", "bob", "COUNT", 2, "STREAMS", "x:nodes", ">")
    c.ok("XACK", "x:nodes", "g1", "3-0")
    c.ok("XGROUP", "CREATECONSUMER", "x:nodes", "g2", "idle")
    c.ok("XCLAIM", "x:nodes", "g1", "bob", 0, "2-2")
    c.ok("XADD", "x:setid", "10-0", "f", "v")
    c.ok("XSETID", "x:setid", "100-5", "ENTRIESADDED", 50, "MAXDELETEDID", "90-0")
    c.ok("CONFIG", "SET", "stream-node-max-entries", 100)
    return [b"x:empty", b"x:nodes", b"x:setid"]


def _consumers_seen(c, key):
    """{(group, consumer): seen-time} from XINFO STREAM FULL."""
    out = {}
    for g in dataset._pairs(c.ok("XINFO", "STREAM", key, "FULL"))[b"groups"]:
        g = dataset._pairs(g)
        for x in g[b"consumers"]:
            x = dataset._pairs(x)
            out[(g[b"name"], x[b"name"])] = x[b"seen-time"]
    return out


@test
def stream_types_15_and_21_load():
    """A stream of Redis 5-6 (RDB type 15, version 9) loads as
    redis-server 7.0 loads it (entries added, first and max deleted IDs
    and entries read derived as Redis does); one of Redis 7.2 (type 21,
    version 11: a consumer's active time follows its seen time) loads as
    the type-19 stream it was written from, seen times included."""
    import struct
    r = redis(tdir("stream_old_r"))
    keys = _stream_shapes(r.c)
    parsed = {k: rdbgen.stream_parse19(r.c.ok("DUMP", k)[:-10]) for k in keys}
    want19 = dataset.snapshot(r.c, encodings=False)
    seen19 = {k: _consumers_seen(r.c, k) for k in keys}
    r.stop()
    for rtype, version in ((15, 9), (21, 11)):
        d = tdir("stream_type%d" % rtype)
        recs = []
        for k in keys:
            s = dict(parsed[k])
            # a type-21 consumer's active time: a value of its own, so that
            # a loader that took it for the seen time shows
            s["active"] = {(g["name"], n): struct.pack("<q", 1234) for g in s["groups"] for n, _, _ in g["cons"]}
            recs.append(rdbgen.record(rtype, k, rdbgen.stream_payload(s, rtype)[1:]))
        body = rdbgen.selectdb(0) + b"".join(recs)
        write(os.path.join(d, "dump.rdb"), rdbgen.rdb_file(body, version=version))
        g = goblin(d)
        got = dataset.snapshot(g.c, encodings=False)
        if rtype == 15:
            rr = redis(d)
            assert_same(dataset.snapshot(rr.c, encodings=False), got, "type 15: Redis 7.0 vs Goblin")
            rr.stop()
        else:
            assert_same(want19, got, "type 21 vs the type-19 original")
            for k in keys:
                eq(_consumers_seen(g.c, k), seen19[k], "seen times of %r" % k)
        g.stop()


@test
def empty_collections_in_a_file_are_skipped_and_logged():
    """An empty collection in a dump (an older server wrote it): Redis 7.0
    skips the key and logs it; so does Goblin, and counts them."""
    rg = rdbgen
    s = rg.string
    body = rg.selectdb(0) + rg.record(rg.T_STRING, "kept", s("v")) + rg.record(rg.T_SET, "eset", rg.length(0)) + \
        rg.record(rg.T_LIST_QUICKLIST_2, "elist", rg.length(0)) + rg.record(rg.T_HASH, "ehash", rg.length(0))
    for kind in ("redis", "goblin"):
        d = tdir("empty_keys_" + kind)
        write(os.path.join(d, "dump.rdb"), rg.rdb_file(body))
        srv = start(kind, d)
        eq(srv.c.ok("DBSIZE"), 1, kind)
        eq(srv.c.ok("GET", "kept"), b"v", kind)
        log = srv.log_text()
        for k in ("eset", "elist", "ehash"):
            assert "skipping empty key: " + k in log, (kind, k, log[-800:])
        assert "empty keys skipped: 3" in log, (kind, log[-800:])
        srv.stop()


@test
def redis_to_goblin_small_encodings_configured():
    """Thresholds differ between the saver and the loader: values are
    re-encoded with the loader's limits, as Redis does."""
    d = tdir("r2g_limits")
    r = redis(d, "--hash-max-listpack-entries", "2", "--zset-max-listpack-entries", "2",
              "--set-max-intset-entries", "2", "--list-max-listpack-size", "2")
    dataset.build(r.c, big=False)
    before = dataset.snapshot(r.c, encodings=False)
    eq(r.c.call("SAVE"), b"OK")
    r.stop()
    g = goblin(d)
    eq(g.c.call("LOAD"), b"OK")
    assert_same(before, dataset.snapshot(g.c, encodings=False), "values across different limits")
    eq(g.c.ok("OBJECT", "ENCODING", "h:small"), b"listpack")
    g.stop()


def old_encodings_file(version=9):
    rg = rdbgen
    s = rg.string
    recs = [
        rg.selectdb(0), rg.resizedb(30, 2),
        rg.record(rg.T_STRING, "str:raw", s("hello", "raw")),
        rg.record(rg.T_STRING, "str:int8", s("-100", "int")),
        rg.record(rg.T_STRING, "str:int16", s("30000", "int")),
        rg.record(rg.T_STRING, "str:int32", s("-2000000000", "int")),
        rg.record(rg.T_STRING, "str:lzf", s(b"compress me " * 50, "lzf")),
        rg.record(rg.T_STRING, "str:lzf-short-lit", s(b"abcdefghijklmnopqrstuvwxyz0123456789" * 3, "lzf")),
        rg.record(rg.T_STRING, "str:sec-expire", s("v"), expire_s=2000000000),
        rg.record(rg.T_STRING, "str:ms-expire", s("v"), expire_ms=4102444800555),
        b"\xf8" + rg.length(12345) + rg.record(rg.T_STRING, "str:idle", s("i")),
        b"\xf9\x05" + rg.record(rg.T_STRING, "str:freq", s("f")),
        rg.record(rg.T_LIST, "list:plain", rg.length(3) + s("a") + s("12") + s(b"x" * 70, "lzf")),
        rg.record(rg.T_LIST_ZIPLIST, "list:ziplist",
                  s(rg.ziplist(["a", 0, 12, 13, -1, 300, -40000, 8000000, 2 ** 31, 2 ** 40, b"y" * 100,
                                b"w" * 20000]))),
        rg.record(rg.T_LIST_QUICKLIST, "list:quicklist",
                  rg.length(2) + s(rg.ziplist(["q1", "q2"])) + s(rg.ziplist(["q3", 4]), "lzf")),
        rg.record(rg.T_LIST_QUICKLIST_2, "list:quicklist2",
                  rg.length(3) + rg.length(2) + s(rg.listpack(["p1", 2, -3000, b"z" * 5000])) +
                  rg.length(1) + s(b"plain node element") + rg.length(2) + s(rg.listpack(["p2"]), "lzf")),
        rg.record(rg.T_SET, "set:plain", rg.length(3) + s("a") + s("1") + s("b")),
        rg.record(rg.T_SET, "set:plain-ints", rg.length(3) + s("5") + s("-1") + s("100000")),
        rg.record(rg.T_SET_INTSET, "set:intset16", s(rg.intset([3, 1, 2], 2))),
        rg.record(rg.T_SET_INTSET, "set:intset32", s(rg.intset([1, 100000, -100000], 4))),
        rg.record(rg.T_SET_INTSET, "set:intset64", s(rg.intset([1, 2 ** 40, -2 ** 50], 8))),
        rg.record(rg.T_ZSET, "zset:text", rg.length(4) + s("a") + rg.double_text(1.5) + s("b") +
                  rg.double_text(float("inf")) + s("c") + rg.double_text(float("-inf")) + s("d") +
                  rg.double_text(-2.25)),
        rg.record(rg.T_ZSET_2, "zset:bin", rg.length(2) + s("x") + rdbgen.struct.pack("<d", 0.1) + s("y") +
                  rdbgen.struct.pack("<d", -7.0)),
        rg.record(rg.T_ZSET_ZIPLIST, "zset:ziplist", s(rg.ziplist([3, -4, "m1", 1, "m2", "2.5"]))),
        rg.record(rg.T_ZSET_LISTPACK, "zset:listpack", s(rg.listpack(["c", "-inf", "a", 1, "b", "1.5"]))),
        rg.record(rg.T_HASH, "hash:plain", rg.length(2) + s("f1") + s("v1") + s("f2") + s("2")),
        rg.record(rg.T_HASH_ZIPMAP, "hash:zipmap", s(rg.zipmap([("k1", "v1"), ("k2", b"x" * 300), ("3", "4")]))),
        rg.record(rg.T_HASH_ZIPLIST, "hash:ziplist", s(rg.ziplist(["a", "1", "b", 2, 3, "c"]))),
        rg.record(rg.T_HASH_LISTPACK, "hash:listpack", s(rg.listpack(["f", "v", "n", 5, 6, b"q" * 100]))),
        # a Redis 5/6 stream (type 15): one node, entries 5-0 and 6-0 with
        # the master's field, a group whose PEL holds 5-0 for consumer c
        rg.record(rg.T_STREAM, "stream:v1",
                  rg.length(1) + s(rdbgen.struct.pack(">QQ", 5, 0)) +
                  s(rg.listpack([2, 0, 1, "f", 0, 2, 0, 0, "v1", 4, 2, 1, 0, "v2", 4])) +
                  rg.length(2) + rg.length(6) + rg.length(0) + rg.length(1) + s("g") + rg.length(5) +
                  rg.length(0) + rg.length(1) + rdbgen.struct.pack(">QQ", 5, 0) + rdbgen.struct.pack("<q", 1000) +
                  rg.length(3) + rg.length(1) + s("c") + rdbgen.struct.pack("<q", 2000) + rg.length(1) +
                  rdbgen.struct.pack(">QQ", 5, 0)),
        rg.selectdb(3),
        rg.record(rg.T_STRING, "db3:key", s("three")),
    ]
    return rg.rdb_file(b"".join(recs), version=version)


@test
def old_encodings_match_redis():
    d = tdir("old_enc")
    for ver, checksum in [(9, True), (7, True), (10, False)]:
        data = old_encodings_file(ver)
        if not checksum:
            data = data[:-8] + b"\x00" * 8  # a file written with rdbchecksum no
        write(os.path.join(d, "dump.rdb"), data)
        r = redis(d)
        want = dataset.snapshot(r.c, encodings=False)
        r.stop()
        eq(len([k for k in want if k[0] == 0]), 28, "redis-server loaded the hand-made file")
        g = goblin(d)
        eq(g.c.call("LOAD"), b"OK")
        assert_same(want, dataset.snapshot(g.c, encodings=False), "old encodings (v%d) Redis vs Goblin" % ver)
        g.stop()


@test
def zipmap_era_file_v3():
    """An RDB version 3 file (no aux fields, no checksum)."""
    d = tdir("v3")
    rg = rdbgen
    body = rg.selectdb(0) + rg.record(rg.T_HASH_ZIPMAP, "zm", rg.string(rg.zipmap([("a", "b"), ("c", "d")]))) + \
        rg.record(rg.T_STRING, "s", rg.string("v"), expire_s=2000000000)
    write(os.path.join(d, "dump.rdb"), rg.rdb_file(body, version=3))
    r = redis(d)
    want = dataset.snapshot(r.c, encodings=False)
    r.stop()
    g = goblin(d)
    eq(g.c.call("LOAD"), b"OK")
    assert_same(want, dataset.snapshot(g.c, encodings=False), "v3 file")
    g.stop()


# ---- corrupt files ----------------------------------------------------------------

def load_err(c, path):
    r = c.call("LOAD", path)
    assert isinstance(r, Err), "LOAD of a bad file succeeded: %r" % r
    return r.msg


def crafted(body, version=10, checksum=True):
    return rdbgen.rdb_file(rdbgen.selectdb(0) + body, version=version, checksum=checksum)


@test
def each_kind_of_damage_has_its_error():
    d = tdir("damage")
    g = goblin(d)
    g.c.ok("SET", "keep", "me")
    rg = rdbgen
    s = rg.string
    good = crafted(rg.record(rg.T_STRING, "k", s("v")))
    cases = {
        "missing": (None, "no such file"),
        "not-rdb": (b"hello world, not a dump at all", "bad magic"),
        "short": (b"RED", "bad magic"),
        "version": (b"REDIS0012" + good[9:], "bad version"),
        "version-digits": (b"REDISab10" + good[9:], "bad version"),
        "truncated": (good[:-12], "truncated"),
        "checksum": (good[:-1] + bytes([good[-1] ^ 1]), "bad checksum"),
        "type": (crafted(b"\x2a" + s("k") + s("v")), "unknown type"),
        "length": (crafted(rg.record(rg.T_LIST, "k", b"\x82")), "bad length"),
        "listpack": (crafted(rg.record(rg.T_HASH_LISTPACK, "k", s(rg.listpack(["a", "b"])[:-3] + b"\x7f\x01\xff")
                                       .replace(b"\x0d\x00", b"\x0d\x00")) ), None),
        "intset-order": (crafted(rg.record(rg.T_SET_INTSET, "k", s(rdbgen.struct.pack("<IIhh", 2, 2, 5, 3)))),
                         "corrupt encoding"),
        "ziplist-tail": (crafted(rg.record(rg.T_LIST_ZIPLIST, "k", s(rg.ziplist(["a", "b"])[:4] + b"\x63\x00\x00\x00" +
                                                                   rg.ziplist(["a", "b"])[8:]))), "corrupt encoding"),
        "lzf": (crafted(rg.record(rg.T_STRING, "k", b"\xc3" + rg.length(3) + rg.length(10) + b"\x40\x99\x99")),
                "corrupt encoding"),
        "dup-key": (crafted(rg.record(rg.T_STRING, "k", s("1")) + rg.record(rg.T_STRING, "k", s("2"))), "duplicate"),
        "dup-member": (crafted(rg.record(rg.T_SET, "k", rg.length(2) + s("m") + s("m"))), "duplicate"),
        "dup-field": (crafted(rg.record(rg.T_HASH, "k", rg.length(2) + s("f") + s("1") + s("f") + s("2"))),
                      "duplicate"),
        "nan": (crafted(rg.record(rg.T_ZSET_2, "k", rg.length(1) + s("m") + b"\x00\x00\x00\x00\x00\x00\xf8\x7f")),
                "bad value"),
        "dbindex": (rg.rdb_file(rg.selectdb(200) + rg.record(rg.T_STRING, "k", s("v"))), "bad value"),
        "stream": (crafted(rg.record(rg.T_STREAM, "mystream", b"\x00")), "bad length"),
        "stream-nodekey": (crafted(rg.record(rg.T_STREAM, "k", rg.length(1) + s("short") + s(bytes(rg.listpack(["1"]))))),
                           "corrupt encoding"),
        "module": (crafted(rg.record(rg.T_MODULE_2, "mymod", rg.length((12345 << 10) | 3))), "unsupported"),
        "function": (crafted(b"\xf5" + s("#!lua name=x\nreturn 1")), "bad value"),
    }
    # A file larger than a read is checksummed by a thread alongside the parse.
    big = crafted(rg.record(rg.T_STRING, "k", s("x" * (2 << 20))))
    cases["checksum-big"] = (big[:-1] + bytes([big[-1] ^ 1]), "bad checksum")
    # The listpack case: a valid header whose second entry's back length is wrong.
    lp = bytearray(rg.listpack(["a", "b"]))
    lp[-2] ^= 0x01
    cases["listpack"] = (crafted(rg.record(rg.T_HASH_LISTPACK, "k", s(bytes(lp)))), "corrupt encoding")
    for name, (data, want) in cases.items():
        path = os.path.join(d, name + ".rdb")
        if data is not None:
            write(path, data)
        msg = load_err(g.c, path)
        assert ("%s:" % want) in msg, "%s: error %r does not say %r" % (name, msg, want)
        if name == "checksum":
            assert "bad checksum: RDB CRC error" in msg, msg  # Redis's words after the kind
        if name in ("stream", "module"):
            assert ("my" + name[:3]) in msg, "%s: the key is not named in %r" % (name, msg)
        eq(g.c.ok("GET", "keep"), b"me", "dataset after " + name)
        eq(g.c.ok("DBSIZE"), 1, "dbsize after " + name)
    # A damaged file whose damage shows up as a structural error is reported
    # as what it is: a bad checksum.
    bad = bytearray(crafted(rg.record(rg.T_LIST, "k", rg.length(1) + s("v"))))
    i = bad.index(b"\x01k") - 1
    bad[i] = 42  # the type byte
    write(os.path.join(d, "flip.rdb"), bytes(bad))
    msg = load_err(g.c, os.path.join(d, "flip.rdb"))
    assert "bad checksum:" in msg and "unknown value type" in msg, msg
    g.stop()


@test
def truncated_and_bit_flipped_dumps():
    d = tdir("corrupt")
    g = goblin(d)
    dataset.build(g.c, big=False)
    eq(g.c.call("SAVE"), b"OK")
    good = read(os.path.join(d, "dump.rdb"))
    before = dataset.snapshot(g.c)
    path = os.path.join(d, "bad.rdb")
    rng = random.Random(11)
    cuts = sorted(set([0, 1, 5, 9, 10, len(good) - 1, len(good) - 8, len(good) - 9] +
                      [rng.randrange(len(good)) for _ in range(60)]))
    for cut in cuts:
        write(path, good[:cut])
        msg = load_err(g.c, path)
        want = "bad magic:" if cut < 9 else "truncated:"
        if cut >= 18 and good[cut - 9] == 0xFF and "inside a" in msg:
            # The cut file happens to end like a dump (0xFF and 8 bytes),
            # and a string runs past its end: the loader cannot tell that
            # from a damaged length and reports the checksum.
            want = "bad checksum:"
        assert want in msg, "cut at %d of %d: %r" % (cut, len(good), msg)
    for _ in range(150):
        b = bytearray(good)
        off = rng.randrange(len(b))
        b[off] ^= 1 << rng.randrange(8)
        write(path, bytes(b))
        msg = load_err(g.c, path)
        ok = any(w in msg for w in ("bad checksum:", "bad magic:", "bad version:"))
        if not ok and off >= len(good) - 9:
            ok = True  # the EOF opcode or the checksum itself
        assert ok, "flip at %d of %d: %r" % (off, len(good), msg)
    assert_same(before, dataset.snapshot(g.c), "dataset after 200 failed LOADs")
    g.stop()


@test
def fuzz_load_never_crashes():
    d = tdir("fuzz")
    g = goblin(d)
    dataset.build(g.c, big=False)
    eq(g.c.call("SAVE"), b"OK")
    # Seeds: Goblin's own dump (listpacks, intsets, LZF) and a hand-made
    # file with every older encoding (ziplist, zipmap, quicklist, text
    # scores).
    seeds = [read(os.path.join(d, "dump.rdb")), old_encodings_file(9)]
    g.c.ok("FLUSHALL")
    g.c.ok("SET", "sentinel", "1")
    rng = random.Random(int(os.environ.get("PERSIST_FUZZ_SEED", "5")))
    path = os.path.join(d, "fuzz.rdb")
    n = int(os.environ.get("PERSIST_FUZZ_N", "300"))
    for i in range(n):
        good = seeds[i % len(seeds)]
        b = bytearray(good)
        for _ in range(rng.randrange(1, 8)):
            op = rng.randrange(4)
            off = rng.randrange(9, len(b))
            if op == 0:
                b[off] = rng.randrange(256)
            elif op == 1:
                del b[off:off + rng.randrange(1, 16)]
            elif op == 2:
                b[off:off] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
            else:
                b[off] = rng.choice([0x80, 0x81, 0xC3, 0xFF, 0xFE, 0x00, 0x3F])
        # Recompute the checksum half of the time so the structure is what
        # the loader has to judge.
        if rng.random() < 0.5 and len(b) > 17:
            body = bytes(b[:-8])
            b = bytearray(body + rdbgen.struct.pack("<Q", rdbgen.crc64(body)))
        write(path, bytes(b))
        r = g.c.call("LOAD", path)
        assert g.alive(), "server died on fuzz case %d:\n%s" % (i, g.log_tail())
        if isinstance(r, Err):
            eq(g.c.ok("GET", "sentinel"), b"1", "dataset after failed fuzz LOAD %d" % i)
        else:
            g.c.ok("FLUSHALL")
            g.c.ok("SET", "sentinel", "1")
    g.stop()


@test
def corrupt_dump_stops_startup():
    d = tdir("startup_corrupt")
    g = goblin(d)
    g.c.ok("SET", "a", "b")
    eq(g.c.call("SAVE"), b"OK")
    g.stop()
    data = bytearray(read(os.path.join(d, "dump.rdb")))
    data[len(data) // 2] ^= 0x40
    write(os.path.join(d, "dump.rdb"), bytes(data))
    g2 = goblin(d, wait=False)
    rc = g2.p.wait(20)
    eq(rc, 1, "exit code with a corrupt dump")
    out = g2.log_text()
    assert "Fatal error loading the DB" in out and "checksum" in out, out[-800:]
    # Logged once, then Redis's last line, which its tooling looks for
    # (the stderr line "goblin-core: ..." is not a log line).
    logged = [ln for ln in out.splitlines() if " # " in ln]
    eq(sum("Fatal error loading the DB" in ln for ln in logged), 1, "the reason logged once")
    assert logged[-1].endswith("# Terminating server after rdb file reading failure."), logged[-3:]
    write(os.path.join(d, "dump.rdb"), bytes(data[:40]))
    g3 = goblin(d, wait=False)
    eq(g3.p.wait(20), 1, "exit code with a truncated dump")
    assert "truncated" in g3.log_text()


# ---- BGSAVE, crashes, full disk ---------------------------------------------------------

SLOW = {"GOBLIN_TEST_RDB_SAVE_SLOW_US": "2000"}  # 2 KB writes, 2 ms apart: ~1 MB/s


def fill(c, n=600, size=3000):
    c.pipeline([["SET", "fill:%d" % i, ("%d" % i) * (size // len(str(i)))] for i in range(n)])


@test
def bgsave_is_a_point_in_time_snapshot():
    d = tdir("bgsave_snap")
    g = goblin(d, "--rdbcompression", "no", env=SLOW)
    fill(g.c)
    g.c.ok("SET", "probe", "before")
    eq(g.c.call("BGSAVE"), b"Background saving started")
    t0 = time.time()
    eq(g.c.call("BGSAVE").msg, "ERR Background save already in progress")
    eq(g.c.call("BGSAVE", "SCHEDULE").msg, "ERR Background save already in progress")
    eq(g.c.call("SAVE").msg, "ERR Background save already in progress")
    eq(g.c.call("BGSAVE", "NOW").msg, "ERR syntax error")
    # The parent keeps serving, and what it does now is not in the file.
    g.c.ok("SET", "probe", "after")
    g.c.ok("DEL", "fill:1")
    assert time.time() - t0 < 1.0, "the server was blocked during BGSAVE"
    i = info(g.c)
    eq(i["rdb_bgsave_in_progress"], "1")
    assert int(i["current_save_keys_total"]) == 601, i["current_save_keys_total"]
    assert int(i["rdb_current_bgsave_time_sec"]) >= 0
    assert wait_for(lambda: info(g.c)["rdb_bgsave_in_progress"] == "0", 60), "BGSAVE never finished"
    eq(info(g.c)["rdb_last_bgsave_status"], "ok")
    eq(info(g.c)["rdb_changes_since_last_save"], "2")
    eq(g.c.call("LOAD"), b"OK")
    eq(g.c.ok("GET", "probe"), b"before")
    assert g.c.ok("EXISTS", "fill:1") == 1
    assert "Background saving terminated with success" in g.log_text()
    g.stop()


@test
def kill9_bgsave_child_keeps_previous_dump():
    d = tdir("kill_child")
    g = goblin(d, "--rdbcompression", "no", env=SLOW)
    g.c.ok("SET", "old", "dump")
    eq(g.c.call("SAVE"), b"OK")
    prev = read(os.path.join(d, "dump.rdb"))
    fill(g.c)
    rng = random.Random(3)
    for attempt in range(2):
        eq(g.c.call("BGSAVE"), b"Background saving started")
        kids = wait_for(lambda: child_pids(g.p.pid), 5)
        assert kids, "no child process"
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(kids[0], signal.SIGKILL)
        assert wait_for(lambda: info(g.c)["rdb_bgsave_in_progress"] == "0", 10)
        eq(info(g.c)["rdb_last_bgsave_status"], "err")
        eq(read(os.path.join(d, "dump.rdb")), prev, "dump after a killed BGSAVE")
        assert wait_for(lambda: not glob.glob(os.path.join(d, "temp-*.rdb")), 5), \
            "temp file left: %s" % glob.glob(os.path.join(d, "temp-*"))
    assert "terminated by signal 9" in g.log_text()
    g.stop()


@test
def kill9_during_save_keeps_previous_dump():
    d = tdir("kill_save")
    g = goblin(d, "--rdbcompression", "no", env=SLOW)
    g.c.ok("SET", "old", "dump")
    eq(g.c.call("SAVE"), b"OK")
    prev = read(os.path.join(d, "dump.rdb"))
    fill(g.c)
    c2 = g.client()
    def save_and_die():
        try:
            c2.call("SAVE")
        except (ConnectionError, OSError):
            pass  # the server is killed under it

    th = threading.Thread(target=save_and_die)
    c2.sock.settimeout(30)
    th.daemon = True
    th.start()
    assert wait_for(lambda: glob.glob(os.path.join(d, "temp-*.rdb")), 5), "SAVE did not start"
    time.sleep(0.3)
    g.stop(signal.SIGKILL)
    eq(read(os.path.join(d, "dump.rdb")), prev, "dump after kill -9 during SAVE")
    for t in glob.glob(os.path.join(d, "temp-*.rdb")):
        os.unlink(t)
    g2 = goblin(d)
    eq(g2.c.ok("GET", "old"), b"dump")
    eq(g2.c.ok("DBSIZE"), 1)
    g2.stop()


@test
def full_disk_keeps_previous_dump():
    d = tdir("enospc")
    mount_tmpfs(d, "size=1m")
    try:
        g = goblin(d)
        g.c.ok("SET", "small", "dataset")
        eq(g.c.call("SAVE"), b"OK")
        prev = read(os.path.join(d, "dump.rdb"))
        g.c.pipeline([["SET", "big:%d" % i, os.urandom(2000)] for i in range(600)])
        r = g.c.call("SAVE")
        assert isinstance(r, Err) and "no space left" in r.msg.lower(), r
        eq(read(os.path.join(d, "dump.rdb")), prev, "dump after ENOSPC")
        eq(glob.glob(os.path.join(d, "temp-*")), [], "temp files after ENOSPC")
        eq(g.c.call("BGSAVE"), b"Background saving started")
        assert wait_for(lambda: info(g.c)["rdb_bgsave_in_progress"] == "0", 20)
        eq(info(g.c)["rdb_last_bgsave_status"], "err")
        eq(read(os.path.join(d, "dump.rdb")), prev, "dump after ENOSPC in BGSAVE")
        assert wait_for(lambda: not glob.glob(os.path.join(d, "temp-*")), 5)
        assert "No space left on device" in g.log_text()
        g.stop()
    finally:
        umount(d)


@test
def unwritable_dir_keeps_previous_dump():
    d = tdir("rodir")
    mount_tmpfs(d, "size=4m")
    try:
        g = goblin(d)
        g.c.ok("SET", "a", "1")
        eq(g.c.call("SAVE"), b"OK")
        prev = read(os.path.join(d, "dump.rdb"))
        subprocess.check_call(["mount", "-o", "remount,ro", d])
        g.c.ok("SET", "a", "2")
        r = g.c.call("SAVE")
        assert isinstance(r, Err) and "Read-only file system" in r.msg, r
        eq(g.c.call("BGSAVE"), b"Background saving started")
        assert wait_for(lambda: info(g.c)["rdb_bgsave_in_progress"] == "0", 10)
        eq(info(g.c)["rdb_last_bgsave_status"], "err")
        eq(read(os.path.join(d, "dump.rdb")), prev)
        if g.c.call("COMMAND", "INFO", "LOAD")[0] is not None:
            # SHUTDOWN that cannot save refuses to exit, as Redis.
            g.c.ok("CONFIG", "SET", "save", "3600 1")
            r = g.c.call("SHUTDOWN")
            assert isinstance(r, Err) and r.msg == "ERR Errors trying to SHUTDOWN. Check logs.", r
            assert g.alive()
            eq(g.c.ok("GET", "a"), b"2")
            g.c.ok("CONFIG", "SET", "save", "")
        g.stop()
    finally:
        umount(d)


@test
def hugetlb_refuses_bgsave_but_saves():
    d = tdir("hugetlb")
    g = goblin(d, "--arena-hugetlb", "yes")
    g.c.ok("SET", "k", "v")
    r = g.c.call("BGSAVE")
    eq(r.msg if isinstance(r, Err) else r,
       "ERR BGSAVE is disabled while arena-hugetlb is on (copy-on-write would copy whole 2 MiB pages); use SAVE")
    eq(g.c.call("SAVE"), b"OK")
    check_rdb(os.path.join(d, "dump.rdb"))
    if g.c.call("COMMAND", "INFO", "LOAD")[0] is not None:
        i = info(g.c)
        eq(i.get("rdb_bgsave_disabled"), "1")
        assert "arena-hugetlb" in i.get("rdb_bgsave_disabled_reason", "")
        eq(g.c.call("LOAD"), b"OK")
        g.c.ok("CONFIG", "SET", "save", "1 1")
        g.c.ok("SET", "k", "w")
        g.c.ok("SET", "k2", "w")
        time.sleep(2.5)
        log = g.log_text()
        eq(log.count("reached but skipped"), 1, "save point refusals logged")
        assert child_pids(g.p.pid) == []
        eq(info(g.c)["rdb_bgsave_in_progress"], "0")
        g.c.ok("CONFIG", "SET", "save", "")
        g.c.ok("SET", "k3", "z")
        eq(g.shutdown("SAVE"), 0, "SHUTDOWN SAVE with arena-hugetlb")
        g2 = goblin(d)
        eq(g2.c.ok("GET", "k3"), b"z")
        g2.stop()
    else:
        g.stop()


# ---- lifecycle -----------------------------------------------------------------------------

@test
def loading_state_during_startup_load():
    d = tdir("loading")
    g = goblin(d)
    g.c.ok("DEBUG", "POPULATE", 60000)
    eq(g.c.call("SAVE"), b"OK")
    g.stop()
    g2 = goblin(d, env={"GOBLIN_TEST_RDB_LOAD_SLOW_US": "150000"}, wait=False)
    g2.wait_ready(allow_loading=True)
    c = g2.c
    r = c.call("GET", "key:1")
    assert isinstance(r, Err) and r.msg == "LOADING Redis is loading the dataset in memory", r
    i = info(c)
    eq(i["loading"], "1")
    for f in ("loading_start_time", "loading_total_bytes", "loading_loaded_bytes", "loading_loaded_perc",
              "loading_eta_seconds"):
        assert f in i, "INFO persistence lacks %s" % f
    assert float(i["loading_loaded_perc"]) < 100
    assert c.call("PING") == b"PONG" or True
    assert wait_for(lambda: info(c)["loading"] == "0", 30)
    eq(c.ok("DBSIZE"), 60000)
    eq(info(c)["rdb_last_load_keys_loaded"], "60000")
    g2.stop()


@test
def sigterm_during_loading_exits_without_saving():
    d = tdir("loading_term")
    g = goblin(d)
    g.c.ok("DEBUG", "POPULATE", 40000)
    eq(g.c.call("SAVE"), b"OK")
    g.stop()
    prev = read(os.path.join(d, "dump.rdb"))
    g2 = goblin(d, "--save", "1 1", env={"GOBLIN_TEST_RDB_LOAD_SLOW_US": "200000"}, wait=False)
    g2.wait_ready(allow_loading=True)
    g2.p.send_signal(signal.SIGTERM)
    eq(g2.p.wait(20), 0, "exit code after SIGTERM during loading")
    eq(read(os.path.join(d, "dump.rdb")), prev, "the dump after SIGTERM during loading")


@test
def save_points_trigger_bgsave():
    d = tdir("savepoints")
    g = goblin(d)
    eq(g.c.call("CONFIG", "SET", "save", "1 2"), b"OK")
    eq(g.c.ok("CONFIG", "GET", "save")[1], b"1 2")
    g.c.ok("SET", "a", "1")
    time.sleep(1.5)
    eq(info(g.c)["rdb_saves"], "0", "one change is below the save point")
    g.c.ok("SET", "b", "1")
    assert wait_for(lambda: info(g.c)["rdb_saves"] == "1", 5), "save point did not fire"
    assert "2 changes in 1 seconds. Saving..." in g.log_text()
    assert wait_for(lambda: info(g.c)["rdb_changes_since_last_save"] == "0", 5)
    r = g.c.call("CONFIG", "SET", "save", "1 2 3")
    assert isinstance(r, Err), r
    g.stop()


@test
def shutdown_and_sigterm_save():
    d = tdir("shutdown")
    g = goblin(d, "--save", "3600 1")
    g.c.ok("SET", "x", "1")
    eq(g.shutdown(), 0, "SHUTDOWN exit code")
    g = goblin(d, "--save", "3600 1")
    eq(g.c.ok("GET", "x"), b"1")
    g.c.ok("SET", "x", "2")
    eq(g.shutdown("NOSAVE"), 0)
    g = goblin(d, "--save", "3600 1")
    eq(g.c.ok("GET", "x"), b"1", "SHUTDOWN NOSAVE saved")
    g.c.ok("SET", "x", "3")
    g.p.send_signal(signal.SIGTERM)
    eq(g.p.wait(20), 0, "SIGTERM exit code")
    g = goblin(d)
    eq(g.c.ok("GET", "x"), b"3", "SIGTERM with save points did not save")
    g.c.ok("SET", "x", "4")
    g.p.send_signal(signal.SIGTERM)
    eq(g.p.wait(20), 0)
    g = goblin(d)
    eq(g.c.ok("GET", "x"), b"3", "SIGTERM without save points saved")
    g.c.ok("SET", "x", "5")
    eq(g.shutdown("SAVE"), 0)
    g = goblin(d)
    eq(g.c.ok("GET", "x"), b"5", "SHUTDOWN SAVE without save points")
    g.stop()


@test
def expired_keys_are_skipped_on_load():
    d = tdir("expired")
    g = goblin(d)
    g.c.ok("SET", "live", "1")
    g.c.ok("SET", "dying", "1", "PX", "150")
    eq(g.c.call("SAVE"), b"OK")
    time.sleep(0.3)
    eq(g.c.call("LOAD"), b"OK")
    eq(g.c.ok("EXISTS", "dying"), 0)
    i = info(g.c)
    eq(i["rdb_last_load_keys_expired"], "1")
    eq(i["rdb_last_load_keys_loaded"], "1")
    g.stop()


@test
def load_is_atomic_for_other_clients_and_watch():
    d = tdir("atomic")
    g = goblin(d, env={"GOBLIN_TEST_RDB_LOAD_SLOW_US": "100000"})
    g.c.ok("DEBUG", "POPULATE", 40000)
    g.c.ok("SET", "probe", "new")
    eq(g.c.call("SAVE"), b"OK")
    g.c.ok("FLUSHALL")
    g.c.ok("SET", "probe", "old")
    w = g.client()
    w.ok("WATCH", "probe")
    res = {}
    c2 = g.client()
    th = threading.Thread(target=lambda: res.setdefault("r", c2.call("LOAD")))
    th.start()
    time.sleep(0.3)
    # Meanwhile the old dataset is served, not -LOADING.
    eq(g.c.ok("GET", "probe"), b"old")
    eq(g.c.ok("DBSIZE"), 1)
    th.join(30)
    eq(res.get("r"), b"OK")
    eq(g.c.ok("GET", "probe"), b"new")
    eq(g.c.ok("DBSIZE"), 40001)
    w.ok("MULTI")
    w.ok("SET", "probe", "from-tx")
    eq(w.call("EXEC"), None, "EXEC after LOAD changed a WATCHed key")
    g.stop()


@test
def debug_reload_and_flushall_save():
    d = tdir("reload")
    g = goblin(d)
    dataset.build(g.c, big=False)
    before = dataset.snapshot(g.c)
    eq(g.c.call("DEBUG", "RELOAD"), b"OK")
    assert_same(before, dataset.snapshot(g.c), "DEBUG RELOAD")
    eq(g.c.call("DEBUG", "RELOAD", "NOSAVE"), b"OK")
    assert_same(before, dataset.snapshot(g.c), "DEBUG RELOAD NOSAVE")
    g.c.ok("CONFIG", "SET", "save", "3600 1")
    g.c.ok("FLUSHALL")
    g.c.ok("CONFIG", "SET", "save", "")
    eq(g.c.call("LOAD"), b"OK")
    eq(g.c.ok("DBSIZE"), 0, "FLUSHALL with save points saved the empty dataset")
    g.stop()


# ---- kill -9 under continuous writes ------------------------------------------------

class Writers:
    """W clients, each appending steps to its own keys in one MULTI/EXEC per
    step: w<i>:n = step, RPUSH w<i>:log step, HSET w<i>:h f<step> step, and
    INCR total. A point-in-time snapshot therefore holds, per writer, a
    prefix 0..n-1 of its steps with all three keys agreeing, and total is
    the sum of the n. sent[i] counts steps sent, acked[i] steps whose EXEC
    was answered; they stop at the first connection error (the kill)."""

    def __init__(self, g, w=3, start=None):
        start = start or [0] * w
        self.sent = list(start)
        self.acked = list(start)
        self.errors = []
        self.stop = False
        self.threads = [threading.Thread(target=self.run, args=(g.client(), i), daemon=True) for i in range(w)]
        for t in self.threads:
            t.start()

    def run(self, c, i):
        n = self.acked[i]
        try:
            c.sock.settimeout(30)
            while not self.stop:
                self.sent[i] = n + 1
                r = c.pipeline([["MULTI"], ["SET", "w%d:n" % i, n + 1], ["RPUSH", "w%d:log" % i, n],
                                ["HSET", "w%d:h" % i, "f%d" % n, n], ["INCR", "total"], ["EXEC"]], check=False)
                if not isinstance(r[-1], list) or len(r[-1]) != 4:
                    self.errors.append("w%d step %d: EXEC -> %r" % (i, n, r[-1]))
                    return
                n += 1
                self.acked[i] = n
        except (ConnectionError, OSError, ValueError):
            pass  # the server was killed
        finally:
            c.close()

    def bounds(self):
        return list(self.acked), list(self.sent)

    def join(self):
        self.stop = True
        for t in self.threads:
            t.join(30)
        assert not self.errors, self.errors


def writers_state(c, w):
    """Each writer's step count in the dataset, checking it is consistent."""
    ns = []
    for i in range(w):
        v = c.ok("GET", "w%d:n" % i)
        n = int(v) if v is not None else 0
        eq(c.ok("LLEN", "w%d:log" % i), n, "w%d:log length" % i)
        eq(c.ok("HLEN", "w%d:h" % i), n, "w%d:h size" % i)
        if n:
            eq(c.ok("LINDEX", "w%d:log" % i, -1), b"%d" % (n - 1), "w%d:log tail" % i)
            eq(c.ok("HGET", "w%d:h" % i, "f%d" % (n - 1)), b"%d" % (n - 1), "w%d:h last field" % i)
        ns.append(n)
    t = c.ok("GET", "total")
    eq(int(t) if t is not None else 0, sum(ns), "total vs the writers' steps")
    return ns


def in_bounds(ns, lo, hi, what):
    for i, n in enumerate(ns):
        assert lo[i] <= n <= hi[i], "%s: writer %d has %d steps, snapshot bounds [%d, %d]" % (what, i, n, lo[i], hi[i])


def bgsave_ok(g, timeout=60):
    """BGSAVE to completion; the writers' bounds around the fork."""
    eq(g.c.call("BGSAVE"), b"Background saving started")
    assert wait_for(lambda: info(g.c)["rdb_bgsave_in_progress"] == "0", timeout), "BGSAVE never finished"
    eq(info(g.c)["rdb_last_bgsave_status"], "ok")


@test
def kill9_under_continuous_writes_restarts_at_last_snapshot():
    """With no AOF the guarantee is the last successful snapshot: kill -9
    while clients write (idle, during a BGSAVE with its child killed too,
    during a BGSAVE whose child survives) never leaves a corrupt or partial
    dump.rdb, the server starts, and its data is that snapshot."""
    d = tdir("kill_writes")
    W = 3
    path = os.path.join(d, "dump.rdb")
    g = goblin(d, "--rdbcompression", "no", env=SLOW)
    rng = random.Random(11)
    # 1. Snapshots (SAVE and BGSAVE) under writes, then kill -9 while idle.
    wr = Writers(g, W)
    assert wait_for(lambda: min(wr.acked) > 20, 10), "writers made no progress"
    for cmd in ("BGSAVE", "SAVE", "BGSAVE"):
        time.sleep(rng.uniform(0.1, 0.3))
        lo = list(wr.acked)
        if cmd == "SAVE":
            eq(g.c.call("SAVE"), b"OK")
        else:
            eq(g.c.call("BGSAVE"), b"Background saving started")
        hi = list(wr.sent)
        if cmd == "BGSAVE":
            assert wait_for(lambda: info(g.c)["rdb_bgsave_in_progress"] == "0", 30), "BGSAVE never finished"
            eq(info(g.c)["rdb_last_bgsave_status"], "ok")
        snap, snap_lo, snap_hi = read(path), lo, hi
    time.sleep(rng.uniform(0.1, 0.3))
    assert not glob.glob(os.path.join(d, "temp-*.rdb"))
    g.stop(signal.SIGKILL)
    wr.join()
    assert sum(wr.acked) > sum(snap_hi), "no writes after the last snapshot: the test proves nothing"
    eq(read(path), snap, "dump.rdb after kill -9")
    check_rdb(path)
    g = goblin(d, "--rdbcompression", "no", env=SLOW)
    ns = writers_state(g.c, W)
    in_bounds(ns, snap_lo, snap_hi, "restart after an idle kill -9")
    eq(g.c.ok("DBSIZE"), 3 * W + 1)
    base = ns

    # 2. Kill -9 the server and its BGSAVE child mid-save (a machine crash):
    #    the previous dump stays, byte for byte.
    fill(g.c)
    wr = Writers(g, W, base)
    assert wait_for(lambda: min(wr.acked) > min(base) + 20, 10), "writers made no progress"
    eq(g.c.call("BGSAVE"), b"Background saving started")
    kids = wait_for(lambda: child_pids(g.p.pid), 5)
    assert kids, "no BGSAVE child"
    assert wait_for(lambda: glob.glob(os.path.join(d, "temp-*.rdb")), 5), "BGSAVE wrote no temp file"
    time.sleep(rng.uniform(0.1, 0.5))
    eq(info(g.c)["rdb_bgsave_in_progress"], "1", "BGSAVE finished too fast for the test")
    g.stop(signal.SIGKILL)
    for k in kids:
        try:
            os.kill(k, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wr.join()
    assert wait_for(lambda: not any(os.path.exists("/proc/%d" % k) and
                                    open("/proc/%d/stat" % k).read().split()[2] != "Z" for k in kids), 10)
    eq(read(path), snap, "dump.rdb after kill -9 of the server and its child during BGSAVE")
    for t in glob.glob(os.path.join(d, "temp-*.rdb")):
        os.unlink(t)  # what an orphaned temp file is: never loaded
    g = goblin(d, "--rdbcompression", "no", env=SLOW)
    eq(writers_state(g.c, W), base, "restart after the crash during BGSAVE")
    eq(g.c.ok("DBSIZE"), 3 * W + 1)

    # 3. Kill -9 the server alone mid-BGSAVE: the orphaned child finishes
    #    its snapshot or not, and either way the dump is whole and loads.
    fill(g.c)
    wr = Writers(g, W, base)
    assert wait_for(lambda: min(wr.acked) > min(base) + 20, 10), "writers made no progress"
    lo = list(wr.acked)
    eq(g.c.call("BGSAVE"), b"Background saving started")
    hi = list(wr.sent)
    kids = wait_for(lambda: child_pids(g.p.pid), 5)
    assert kids, "no BGSAVE child"
    time.sleep(rng.uniform(0.1, 0.5))
    g.stop(signal.SIGKILL)
    wr.join()
    assert wait_for(lambda: not any(os.path.exists("/proc/%d" % k) for k in kids), 30), "the BGSAVE child never ended"
    check_rdb(path)
    g = goblin(d, "--rdbcompression", "no")
    ns = writers_state(g.c, W)
    if VERBOSE:
        print("    the orphaned BGSAVE child %s" % ("did not finish" if read(path) == snap else "finished"))
    if read(path) == snap:
        eq(ns, base, "restart on the previous dump")
    else:
        in_bounds(ns, lo, hi, "restart on the orphaned child's snapshot")
        eq(g.c.ok("DBSIZE"), 3 * W + 1 + 600)
    g.stop()


# ---- runner ------------------------------------------------------------------------------------

def main():
    sel = [a for a in sys.argv[1:] if not a.startswith("-")]
    return SUITE.main(sel, keep=bool(os.environ.get("PERSIST_KEEP")))


if __name__ == "__main__":
    sys.exit(main())
