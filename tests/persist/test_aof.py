#!/usr/bin/env python3
"""The append-only file against Redis 7.0's multi-part layout: the
directory, manifest, base and incr files Goblin creates on a first start
with appendonly yes; INFO persistence's aof fields in Redis's order; an
appendonlydir written by redis-server 7.0 (RDB base + incr commands with
SELECT and MULTI/EXEC) loading into Goblin with the same DEBUG DIGEST;
BGREWRITEAOF producing files that redis-check-aof accepts and redis-server
loads to the same digest; torn tails (aof-load-truncated yes truncates and
logs as Redis, no refuses to start); a torn MULTI reverted; a damaged
manifest and a missing listed file stopping start-up; BGREWRITEAOF refused
under --arena-hugetlb.

  python3 tests/persist/test_aof.py [-v] [name-substring ...]

Ends with "aof: N passed, M failed".
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CHECK_AOF, ROOT, Err, Suite, check_aof, info, wait_for  # noqa: E402
import dataset  # noqa: E402

TMP = os.path.join(ROOT, "tests", "tmp", "aof.%d" % os.getpid())
VERBOSE = "-v" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "-v"]
SUITE = Suite("aof", TMP, VERBOSE)
test, tdir, start = SUITE.test, SUITE.tdir, SUITE.start
AOFDIR = "appendonlydir"


def manifest(d):
    with open(os.path.join(d, AOFDIR, "appendonly.aof.manifest")) as f:
        return [line.split() for line in f.read().splitlines()]


def write_dir(d, files, lines=None):
    """An appendonlydir by hand: files is [(name, bytes, type)]."""
    ad = os.path.join(d, AOFDIR)
    os.makedirs(ad, exist_ok=True)
    seq = {"b": 0, "i": 0}
    out = []
    for name, data, typ in files:
        with open(os.path.join(ad, name), "wb") as f:
            f.write(data)
        seq[typ] += 1
        out.append("file %s seq %d type %s\n" % (name, seq[typ], typ))
    with open(os.path.join(ad, "appendonly.aof.manifest"), "w") as f:
        f.write(lines if lines is not None else "".join(out))


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def start_fails(d, *args):
    """Start Goblin expecting it to refuse: returns its log."""
    s = start("goblin", d, "--appendonly", "yes", *args, wait=False)
    try:
        s.p.wait(20)
    except subprocess.TimeoutExpired:
        raise AssertionError("goblin started; expected a refusal:\n" + s.log_tail())
    assert s.p.returncode != 0, s.p.returncode
    return s.log_text()


def digest(s):
    return s.c.ok("DEBUG", "DIGEST")


def loads_everywhere(g, d):
    """Stop g; its appendonlydir passes redis-check-aof and loads into
    redis-server and into goblin-core with g's DEBUG DIGEST."""
    want = digest(g)
    g.shutdown("NOSAVE")
    files_load_everywhere(d, want)


def files_load_everywhere(d, want):
    """d's appendonlydir passes redis-check-aof and loads into redis-server
    and into goblin-core with the DEBUG DIGEST want."""
    check_aof(d)
    rs = start("redis", d, "--appendonly", "yes")
    assert digest(rs) == want
    rs.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes")
    assert digest(g) == want


@test
def first_start_creates_dir_manifest_base_and_incr():
    d = tdir("first")
    g = start("goblin", d, "--appendonly", "yes")
    m = manifest(d)
    assert m == [["file", "appendonly.aof.1.base.rdb", "seq", "1", "type", "b"],
                 ["file", "appendonly.aof.1.incr.aof", "seq", "1", "type", "i"]], m
    with open(os.path.join(d, AOFDIR, "appendonly.aof.1.base.rdb"), "rb") as f:
        base = f.read()
    assert base.startswith(b"REDIS0010") and b"aof-base" in base, base[:40]
    assert os.path.getsize(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof")) == 0
    i = info(g.c)
    assert i["aof_enabled"] == "1" and i["aof_last_write_status"] == "ok", i
    assert int(i["aof_base_size"]) == len(base) == int(i["aof_current_size"]), i
    assert "Creating AOF base file appendonly.aof.1.base.rdb on server start" in g.log_text()
    g.shutdown("NOSAVE")
    # The files pass redis-check-aof, and a restart reopens them.
    check_aof(d)
    g = start("goblin", d, "--appendonly", "yes")
    assert "Opening AOF incr file appendonly.aof.1.incr.aof on server start" in g.log_text()
    assert len(manifest(d)) == 2


@test
def preamble_no_creates_an_empty_aof_base():
    d = tdir("nopreamble")
    start("goblin", d, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    m = manifest(d)
    assert m[0][1] == "appendonly.aof.1.base.aof", m
    assert os.path.getsize(os.path.join(d, AOFDIR, "appendonly.aof.1.base.aof")) == 0


@test
def info_aof_fields_in_redis_order():
    g = start("goblin", tdir("info_g"), "--appendonly", "yes")
    r = start("redis", tdir("info_r"), "--appendonly", "yes")

    def keys(s):
        txt = s.c.ok("INFO", "persistence").decode()
        return [ln.split(":")[0] for ln in txt.splitlines() if ln.startswith(("aof_", "module_fork"))]
    assert keys(g) == keys(r), (keys(g), keys(r))
    ig = info(g.c)
    assert ig["aof_rewrites"] == "0" and ig["aof_last_bgrewrite_status"] == "ok"
    assert ig["aof_last_rewrite_time_sec"] == "-1" and ig["aof_current_rewrite_time_sec"] == "-1"
    # Off: no tail lines, as Redis.
    g2 = start("goblin", tdir("info_off"))
    assert "aof_current_size" not in info(g2.c) and info(g2.c)["aof_enabled"] == "0"


@test
def redis_written_appendonlydir_loads_with_the_same_digest():
    d = tdir("fromredis")
    r = start("redis", d, "--appendonly", "yes", "--appendfsync", "always")
    dataset.build(r.c, big=False)
    # Commands after the base: SELECT, MULTI/EXEC, expiries, deletes.
    r.c.ok("SELECT", "5")
    r.c.ok("SET", "in5", "v")
    r.c.ok("MULTI")
    r.c.ok("INCR", "ctr")
    r.c.ok("RPUSH", "lst", "a", "b")
    r.c.ok("EXEC")
    r.c.ok("SELECT", "0")
    r.c.ok("HSET", "h:late", "f", "v")
    r.c.ok("PEXPIRE", "h:late", "100000000")
    want = digest(r)
    r.shutdown("NOSAVE")
    assert len(manifest(d)) == 2
    assert os.path.getsize(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof")) > 0
    g = start("goblin", d, "--appendonly", "yes")
    assert digest(g) == want
    assert "DB loaded from append only file" in g.log_text()


@test
def an_old_aof_with_an_rdb_preamble_keeps_its_command_tail():
    """Redis 4-6 wrote one appendonly.aof: with aof-use-rdb-preamble yes (their
    default) an RDB, then the commands since the rewrite. Moved into the AOF
    directory as the base, it loads whole: the RDB's keys and the tail's
    commands, the same digest as redis-server 7.0 gives."""
    src = tdir("preamble_src")
    r = start("redis", src)
    dataset.build(r.c, big=False)
    r.c.ok("SAVE")
    r.shutdown("NOSAVE")
    with open(os.path.join(src, "dump.rdb"), "rb") as f:
        rdb = f.read()
    tail = (resp("SELECT", "0") + resp("SET", "after-the-rdb", "v") + resp("SELECT", "3") +
            resp("RPUSH", "tail-list", "a", "b") + resp("DEL", "str:1"))
    digests = {}
    for kind in ("redis", "goblin"):
        d = tdir("preamble_" + kind)
        with open(os.path.join(d, "appendonly.aof"), "wb") as f:
            f.write(rdb + tail)
        s = start(kind, d, "--appendonly", "yes")
        assert s.c.ok("GET", "after-the-rdb") == b"v", kind
        digests[kind] = digest(s)
        if kind == "goblin":
            log = s.log_text()
            assert "Reading RDB preamble from AOF file..." in log and "Reading the remaining AOF tail..." in log, log
    assert digests["goblin"] == digests["redis"], digests


@test
def an_upgrade_cut_short_before_its_rename_goes_on():
    """The manifest names the old-style appendonly.aof as its only base but
    the file is still in dir (an upgrade stopped before the rename): it is
    moved in and loaded, as Redis 7.0 does. Both servers."""
    for kind in ("redis", "goblin"):
        d = tdir("upgrade_cut_" + kind)
        with open(os.path.join(d, "appendonly.aof"), "wb") as f:
            f.write(resp("SET", "k1", "v1") + resp("SET", "k2", "v2"))
        os.makedirs(os.path.join(d, AOFDIR))
        with open(os.path.join(d, AOFDIR, "appendonly.aof.manifest"), "w") as f:
            f.write("file appendonly.aof seq 1 type b\n")
        s = start(kind, d, "--appendonly", "yes")
        assert s.c.ok("MGET", "k1", "k2") == [b"v1", b"v2"], kind
        assert not os.path.exists(os.path.join(d, "appendonly.aof")), kind
        assert manifest(d) == [["file", "appendonly.aof", "seq", "1", "type", "b"],
                               ["file", "appendonly.aof.1.incr.aof", "seq", "1", "type", "i"]], (kind, manifest(d))


@test
def aof_disable_auto_gc_keeps_history_in_redis_order():
    """aof-disable-auto-gc yes: the files two rewrites replaced stay, listed
    as history newest first (each rewrite's incr files, then its old base),
    the same manifest as redis-server 7.0 writes; set back to no, they are
    deleted at once."""
    got = {}
    for kind in ("redis", "goblin"):
        d = tdir("autogc_" + kind)
        s = start(kind, d, "--appendonly", "yes")
        s.c.ok("CONFIG", "SET", "aof-disable-auto-gc", "yes")
        for i in range(2):
            s.c.ok("SET", "k%d" % i, "v")
            s.c.ok("BGREWRITEAOF")
            wait_for(lambda: info(s.c)["aof_rewrite_in_progress"] == "0" and info(s.c)["aof_rewrites"] == str(i + 1),
                     30)
        got[kind] = manifest(d)
        hist = [m[1] for m in got[kind] if m[-1] == "h"]
        assert all(os.path.exists(os.path.join(d, AOFDIR, h)) for h in hist), (kind, hist)
        s.c.ok("CONFIG", "SET", "aof-disable-auto-gc", "no")
        wait_for(lambda: not any(os.path.exists(os.path.join(d, AOFDIR, h)) for h in hist), 10)
        assert [m[-1] for m in manifest(d)] == ["b", "i"], (kind, manifest(d))
    assert got["goblin"] == got["redis"], got
    assert [m[-1] for m in got["redis"]] == ["b", "h", "h", "h", "h", "i"], got


@test
def redis_rewritten_base_loads_with_the_same_digest():
    d = tdir("fromredis_rw")
    r = start("redis", d, "--appendonly", "yes")
    dataset.build(r.c, big=False)
    r.c.ok("BGREWRITEAOF")
    wait_for(lambda: info(r.c)["aof_rewrite_in_progress"] == "0" and info(r.c)["aof_rewrites"] == "1")
    r.c.ok("SET", "after", "rewrite")
    want = digest(r)
    r.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes")
    assert digest(g) == want


@test
def bgrewriteaof_files_pass_redis_check_aof_and_load_in_redis():
    d = tdir("rewrite")
    g = start("goblin", d, "--appendonly", "yes")
    dataset.build(g.c, big=False)
    assert g.c.ok("BGREWRITEAOF") == b"Background append only file rewriting started"
    wait_for(lambda: info(g.c)["aof_rewrite_in_progress"] == "0")
    i = info(g.c)
    assert i["aof_rewrites"] == "1" and i["aof_last_bgrewrite_status"] == "ok", i
    m = manifest(d)
    assert [x[1] for x in m] == ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof"], m
    # The history files are gone.
    assert sorted(os.listdir(os.path.join(d, AOFDIR))) == sorted(
        ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"])
    loads_everywhere(g, d)


FN1 = "#!lua name=lib1\nredis.register_function('f1', function(keys, args) return redis.call('incr', keys[1]) end)"
FN2 = ("#!lua name=lib2\nredis.register_function{function_name='f2', callback=function() return 2 end, "
       "flags={'no-writes'}, description='two'}")
FN3 = "#!lua name=lib3\nredis.register_function('f3', function() return 3 end)"


def functions(c):
    return sorted(lib[1] for lib in c.ok("FUNCTION", "LIST"))


@test
def functions_replay_from_the_aof_and_its_rewrites():
    """FUNCTION LOAD / DELETE / RESTORE / FLUSH and FCALL's effects reach
    the AOF, which replays in Goblin and in redis-server; rewrites (RDB
    preamble or commands) keep the libraries."""
    for preamble in ("yes", "no"):
        d = tdir("functions_" + preamble)
        g = start("goblin", d, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
        g.c.ok("FUNCTION", "LOAD", FN1)
        g.c.ok("FUNCTION", "LOAD", FN2)
        assert g.c.ok("FCALL", "f1", 1, "cnt") == 1
        assert g.c.ok("FCALL", "f1", 1, "cnt") == 2
        payload = g.c.ok("FUNCTION", "DUMP")
        g.c.ok("FUNCTION", "FLUSH")
        g.c.ok("FUNCTION", "RESTORE", payload)
        g.c.ok("FUNCTION", "LOAD", FN3)
        g.c.ok("FUNCTION", "DELETE", "lib2")
        want = functions(g.c)
        assert want == [b"lib1", b"lib3"], want
        g.shutdown("NOSAVE")
        with open(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof"), "rb") as f:
            incr = f.read()
        assert b"FUNCTION" in incr and b"incr" in incr and b"FCALL" not in incr, incr[:400]
        check_aof(d)
        for kind in ("redis", "goblin"):
            s2 = start(kind, d, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
            assert functions(s2.c) == want, (kind, functions(s2.c))
            assert s2.c.ok("GET", "cnt") == b"2"
            assert s2.c.ok("FCALL", "f3", 0) == 3
            if kind == "goblin":
                s2.c.ok("BGREWRITEAOF")
                wait_for(lambda: info(s2.c)["aof_rewrite_in_progress"] == "0" and
                         int(info(s2.c)["aof_rewrites"]) >= 1)
            s2.shutdown("NOSAVE")
        check_aof(d)
        for kind in ("redis", "goblin"):
            s3 = start(kind, d, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
            assert functions(s3.c) == want, ("after the rewrite", kind, functions(s3.c))
            s3.shutdown("NOSAVE")


@test
def bgrewriteaof_twice_and_inside_multi():
    g = start("goblin", tdir("rewrite2"), "--appendonly", "yes")
    g.c.ok("SET", "k", "v")
    g.c.ok("BGREWRITEAOF")
    r = g.c.call("BGREWRITEAOF")
    assert r == b"Background append only file rewriting started" or (
        isinstance(r, Err) and r.msg == "ERR Background append only file rewriting already in progress"), r
    wait_for(lambda: info(g.c)["aof_rewrite_in_progress"] == "0")
    g.c.ok("MULTI")
    g.c.ok("BGREWRITEAOF")
    assert g.c.ok("EXEC") == [b"Background append only file rewriting scheduled"]
    wait_for(lambda: info(g.c)["aof_rewrite_in_progress"] == "0" and info(g.c)["aof_rewrite_scheduled"] == "0")
    wait_for(lambda: int(info(g.c)["aof_rewrites"]) >= 2)


@test
def torn_tail_is_truncated_with_aof_load_truncated_yes():
    d = tdir("torn_yes")
    good = resp("SET", "a", "1") + resp("SELECT", "2") + resp("SET", "b", "2")
    torn = b"*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$5\r\nab"
    write_dir(d, [("appendonly.aof.1.base.aof", b"", "b"), ("appendonly.aof.1.incr.aof", good + torn, "i")])
    g = start("goblin", d, "--appendonly", "yes")
    assert g.c.ok("GET", "a") == b"1"
    g.c.ok("SELECT", "2")
    assert g.c.ok("GET", "b") == b"2" and g.c.ok("GET", "c") is None
    log = g.log_text()
    assert "!!! Warning: short read while loading the AOF file appendonly.aof.1.incr.aof!!!" in log
    assert "!!! Truncating the AOF appendonly.aof.1.incr.aof at offset %d !!!" % len(good) in log
    assert "AOF appendonly.aof.1.incr.aof loaded anyway because aof-load-truncated is enabled" in log
    assert os.path.getsize(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof")) == len(good)


@test
def an_error_reply_while_loading_counts_as_unexpected():
    """A command of the AOF that fails (INCR of a string) does not stop the
    load; INFO stats counts it in unexpected_error_replies and the log says
    so, as Redis 7.0 does; CONFIG RESETSTAT zeroes the count. Under
    propagation-error-behavior panic the server stops there instead."""
    for kind in ("goblin", "redis"):
        d = tdir("unexpected_" + kind)
        cmds = resp("SET", "a", "abc") + resp("INCR", "a") + resp("SET", "b", "2")
        write_dir(d, [("appendonly.aof.1.base.aof", b"", "b"), ("appendonly.aof.1.incr.aof", cmds, "i")])
        s = start(kind, d, "--appendonly", "yes")
        assert s.c.ok("GET", "a") == b"abc" and s.c.ok("GET", "b") == b"2", kind
        assert info(s.c, "stats")["unexpected_error_replies"] == "1", (kind, info(s.c, "stats"))
        assert "== CRITICAL ==" in s.log_text(), kind
        s.c.ok("CONFIG", "RESETSTAT")
        assert info(s.c, "stats")["unexpected_error_replies"] == "0", kind
        s.shutdown("NOSAVE")
        # propagation-error-behavior panic: the load stops the server there;
        # panic-on-replicas leaves the AOF alone.
        s = start(kind, d, "--appendonly", "yes", "--propagation-error-behavior", "panic-on-replicas")
        assert s.c.ok("GET", "b") == b"2", kind
        s.shutdown("NOSAVE")
        s = start(kind, d, "--appendonly", "yes", "--propagation-error-behavior", "panic", wait=False)
        try:
            s.p.wait(20)
        except subprocess.TimeoutExpired:
            raise AssertionError("%s went on loading past the error" % kind)
        assert s.p.returncode != 0 and "panicked sending an error" in s.log_text(), (kind, s.log_tail())


@test
def torn_tail_refused_with_aof_load_truncated_no():
    d = tdir("torn_no")
    data = resp("SET", "a", "1") + b"*2\r\n$3\r\nGET"
    write_dir(d, [("appendonly.aof.1.incr.aof", data, "i")])
    log = start_fails(d, "--aof-load-truncated", "no")
    assert "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof. You can: 1) Make a " \
           "backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>." in log, log[-800:]
    assert os.path.getsize(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof")) == len(data)


@test
def torn_multi_is_reverted():
    d = tdir("torn_multi")
    good = resp("SET", "a", "1")
    tail = resp("MULTI") + resp("SET", "x", "1") + resp("SET", "y", "2")
    write_dir(d, [("appendonly.aof.1.incr.aof", good + tail, "i")])
    g = start("goblin", d, "--appendonly", "yes")
    assert g.c.ok("GET", "a") == b"1" and g.c.ok("GET", "x") is None
    assert "Revert incomplete MULTI/EXEC transaction in AOF file appendonly.aof.1.incr.aof" in g.log_text()
    assert os.path.getsize(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof")) == len(good)


@test
def truncated_file_that_is_not_the_last_is_fatal():
    d = tdir("torn_middle")
    write_dir(d, [("appendonly.aof.1.base.aof", resp("SET", "a", "1") + b"*1\r\n", "b"),
                  ("appendonly.aof.1.incr.aof", resp("SET", "b", "1"), "i")])
    log = start_fails(d)
    assert "Fatal error: the truncated file is not the last file" in log


def logged(log, pattern):
    """How many lines of the server's log (not its stderr) match pattern."""
    return sum(1 for line in log.splitlines() if re.match(r"\d+:[MCSX] ", line) and re.search(pattern, line))


@test
def damaged_manifest_or_missing_file_stops_start_up():
    """Each refusal is logged once, as Redis logs it (Redis's own tests
    count the lines)."""
    d = tdir("badmanifest")
    write_dir(d, [("appendonly.aof.1.incr.aof", resp("SET", "a", "1"), "i")], lines="file x seq\n")
    log = start_fails(d)
    assert logged(log, "Invalid AOF manifest file format") == 1, log[-500:]
    d = tdir("missing")
    write_dir(d, [("appendonly.aof.1.incr.aof", resp("SET", "a", "1"), "i")],
              lines="file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
    log = start_fails(d)
    assert logged(log, "appendonly.aof.1.base.rdb .*No such file or directory") == 1, log[-500:]
    d = tdir("unknowncmd")
    write_dir(d, [("appendonly.aof.1.incr.aof", resp("NOSUCHCMD", "a"), "i")])
    log = start_fails(d)
    assert logged(log, "Unknown command 'NOSUCHCMD' reading the append only file appendonly.aof.1.incr.aof") == 1, log


@test
def bgrewriteaof_refused_under_arena_hugetlb():
    g = start("goblin", tdir("huge"), "--arena-hugetlb")
    r = g.c.call("BGREWRITEAOF")
    assert isinstance(r, Err) and r.msg.startswith("ERR BGREWRITEAOF is disabled while arena-hugetlb is on"), r


@test
def config_directives():
    g = start("goblin", tdir("config"), "--appendonly", "yes", "--appendfsync", "always")
    assert g.c.ok("CONFIG", "GET", "appendfsync") == [b"appendfsync", b"always"]
    g.c.ok("CONFIG", "SET", "appendfsync", "everysec")
    assert g.c.ok("CONFIG", "GET", "appendfsync") == [b"appendfsync", b"everysec"]
    r = g.c.call("CONFIG", "SET", "appendfsync", "sometimes")
    assert isinstance(r, Err), r
    r = g.c.call("CONFIG", "SET", "appenddirname", "x")
    assert isinstance(r, Err), r
    assert g.c.ok("CONFIG", "GET", "aof-load-truncated") == [b"aof-load-truncated", b"yes"]


@test
def stream_records_reach_the_file_with_group_commit():
    """Four threads append 8000 records through the write stream with
    appendfsync always (each waits at the barrier) and with everysec; the
    files pass redis-check-aof and load into redis-server and Goblin."""
    import glob
    # The objects of today's sources (a build directory may keep objects of
    # files that have since moved or gone).
    srcs = [c for c in glob.glob(os.path.join(ROOT, "src", "**", "*.c"), recursive=True)
            if os.path.relpath(c, ROOT) != os.path.join("src", "main.c")]
    objs = [os.path.join(ROOT, "build-release", os.path.relpath(c, ROOT))[:-2] + ".o" for c in srcs]
    objs = [o for o in objs if os.path.exists(o)]
    if not objs:
        raise Exception("build-release objects missing")
    exe = os.path.join(TMP, "aof_stream_driver")
    libs = subprocess.run(["make", "-s", "-C", ROOT, "print-libs"], check=True, capture_output=True,
                          text=True).stdout.split()
    subprocess.run(["gcc", "-std=c11", "-D_GNU_SOURCE", "-O1", "-I" + os.path.join(ROOT, "src"),
                    os.path.join(ROOT, "tests", "persist", "aof_stream_driver.c")] + objs +
                   ["-o", exe] + libs, check=True)
    for mode in ("always", "everysec"):
        d = tdir("driver_" + mode)
        r = subprocess.run([exe, "--dir", d, "--appendonly", "yes", "--appendfsync", mode], cwd=d,
                           capture_output=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert b"aof_buffer_length:0" in r.stdout, r.stdout
        check_aof(d)
        rs = start("redis", d, "--appendonly", "yes")
        sizes = [rs.c.ok("SELECT", n) and rs.c.ok("DBSIZE") for n in range(3)]
        assert sizes == [4000, 2000, 2000], sizes
        rs.c.ok("SELECT", "0")
        want = digest(rs)
        rs.shutdown("NOSAVE")
        g = start("goblin", d, "--appendonly", "yes")
        assert digest(g) == want


def fill(c, n, prefix="k"):
    """n string keys and a few of every type, pipelined."""
    for i in range(0, n, 1000):
        args = []
        for j in range(i, min(n, i + 1000)):
            args += ["%s:%d" % (prefix, j), "v%d" % j]
        c.ok("MSET", *args)
    c.ok("HSET", prefix + ":h", "a", "1", "b", "2")
    c.ok("RPUSH", prefix + ":l", "x", "y", "z")
    c.ok("SADD", prefix + ":s", "1", "2", "three")
    c.ok("ZADD", prefix + ":z", "1", "a", "2.5", "b")
    c.ok("SET", prefix + ":ttl", "v", "EX", "100000")


def files_in(d):
    return sorted(os.listdir(os.path.join(d, AOFDIR)))


@test
def config_set_appendonly_yes_on_a_live_dataset():
    """CONFIG SET appendonly yes while clients write: the first base comes
    from a background rewrite, writes meanwhile go to a temp incr file that
    becomes the first incr file; the reloaded AOF has the live digest."""
    d = tdir("runtime_on")
    g = start("goblin", d)
    fill(g.c, 200000)
    assert info(g.c)["aof_enabled"] == "0"
    assert g.c.ok("CONFIG", "SET", "appendonly", "yes") == b"OK"
    i = info(g.c)
    assert i["aof_enabled"] == "1", i
    # Writes during the rewrite.
    for j in range(2000):
        g.c.ok("INCR", "counter")
        if j % 100 == 0:
            g.c.ok("RPUSH", "during", j)
    wait_for(lambda: info(g.c)["aof_rewrite_in_progress"] == "0", 60)
    i = info(g.c)
    assert i["aof_last_bgrewrite_status"] == "ok" and i["aof_rewrites"] == "1", i
    m = manifest(d)
    assert [x[5] for x in m] == ["b", "i"], m
    assert files_in(d) == sorted([m[0][1], m[1][1], "appendonly.aof.manifest"]), files_in(d)
    g.c.ok("SET", "after", "1")
    want = digest(g)
    assert g.c.ok("CONFIG", "GET", "appendonly") == [b"appendonly", b"yes"]
    g.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes")
    assert digest(g) == want
    check_aof(d)


@test
def config_set_appendonly_inside_multi_schedules_the_rewrite():
    """Inside EXEC, CONFIG SET appendonly yes schedules the first rewrite
    (logged as Redis logs it) and the cron starts it after the
    transaction; both servers."""
    for kind in ("goblin", "redis"):
        s = start(kind, tdir("multi_aof_" + kind))
        s.c.ok("MULTI")
        s.c.ok("SET", "foo", "bar")
        s.c.ok("CONFIG", "SET", "appendonly", "yes")
        assert s.c.ok("EXEC") == [b"OK", b"OK"], kind
        assert "An AOF background was scheduled to start when possible" in s.log_text(), kind
        wait_for(lambda: info(s.c)["aof_rewrites"] == "1" and info(s.c)["aof_rewrite_in_progress"] == "0", 20)
        assert info(s.c)["aof_last_bgrewrite_status"] == "ok", kind


@test
def config_set_appendonly_no_then_yes_again():
    """no: buffered writes reach the file and it stops growing; the files
    stay. yes again: a new base; the old files become history and go."""
    d = tdir("runtime_off")
    g = start("goblin", d, "--appendonly", "yes")
    g.c.ok("SET", "a", "1")
    old = files_in(d)
    assert g.c.ok("CONFIG", "SET", "appendonly", "no") == b"OK"
    assert info(g.c)["aof_enabled"] == "0"
    size = os.path.getsize(os.path.join(d, AOFDIR, manifest(d)[1][1]))
    g.c.ok("SET", "b", "2")
    assert os.path.getsize(os.path.join(d, AOFDIR, manifest(d)[1][1])) == size
    assert files_in(d) == old
    assert g.c.ok("CONFIG", "SET", "appendonly", "yes") == b"OK"
    wait_for(lambda: info(g.c)["aof_rewrite_in_progress"] == "0", 30)
    m = manifest(d)
    assert m[0][1] == "appendonly.aof.2.base.rdb" and m[1][1] == "appendonly.aof.2.incr.aof", m
    assert files_in(d) == sorted([m[0][1], m[1][1], "appendonly.aof.manifest"]), files_in(d)
    g.c.ok("SET", "c", "3")
    want = digest(g)
    g.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes")
    assert digest(g) == want and g.c.ok("MGET", "a", "b", "c") == [b"1", b"2", b"3"]


@test
def config_set_appendonly_under_arena_hugetlb_writes_the_base_now():
    d = tdir("runtime_huge")
    g = start("goblin", d, "--arena-hugetlb")
    fill(g.c, 5000)
    assert g.c.ok("CONFIG", "SET", "appendonly", "yes") == b"OK"
    i = info(g.c)
    assert i["aof_enabled"] == "1" and i["aof_rewrite_in_progress"] == "0", i
    m = manifest(d)
    assert [x[5] for x in m] == ["b", "i"], m
    g.c.ok("SET", "later", "x")
    want = digest(g)
    g.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes", "--arena-hugetlb")
    assert digest(g) == want


@test
def automatic_rewrite_on_growth():
    d = tdir("auto")
    g = start("goblin", d, "--appendonly", "yes", "--auto-aof-rewrite-min-size", "64kb",
              "--auto-aof-rewrite-percentage", "100")
    assert g.c.ok("CONFIG", "GET", "auto-aof-rewrite-min-size") == [b"auto-aof-rewrite-min-size", b"65536"]
    for i in range(3000):
        g.c.ok("SET", "key:%d" % (i % 50), "x" * 40)
    wait_for(lambda: int(info(g.c)["aof_rewrites"]) >= 1 and info(g.c)["aof_rewrite_in_progress"] == "0", 30)
    assert "Starting automatic rewriting of AOF on" in g.log_text()
    i = info(g.c)
    # 3000 records of ~72 bytes were written; a rewrite (at 64 KB, or later
    # if the writes outran it) left 50 keys plus what came after it.
    assert int(i["aof_current_size"]) < 150 * 1024, i
    g.c.ok("CONFIG", "SET", "auto-aof-rewrite-percentage", "0")
    n = int(info(g.c)["aof_rewrites"])
    for i in range(6000):
        g.c.ok("SET", "key:%d" % (i % 50), "x" * 40)
    time.sleep(1.5)
    assert int(info(g.c)["aof_rewrites"]) == n


@test
def timestamp_annotations_are_written_and_skipped():
    d = tdir("ts")
    g = start("goblin", d, "--appendonly", "yes", "--aof-timestamp-enabled", "yes")
    g.c.ok("SET", "a", "1")
    time.sleep(1.1)
    g.c.ok("SET", "b", "2")
    want = digest(g)
    g.shutdown("NOSAVE")
    with open(os.path.join(d, AOFDIR, manifest(d)[1][1]), "rb") as f:
        data = f.read()
    ts = [ln for ln in data.split(b"\r\n") if ln.startswith(b"#TS:")]
    assert len(ts) >= 2 and all(int(t[4:]) > 1700000000 for t in ts), data
    files_load_everywhere(d, want)


@test
def loading_a_large_aof_answers_loading_with_progress():
    d = tdir("progress")
    g = start("goblin", d, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    for i in range(0, 20000, 500):
        g.c.ok("MSET", *[x for j in range(i, i + 500) for x in ("k%d" % j, "v")])
    for i in range(20000):
        g.c.ok("INCR", "n")  # 20000 commands in the incr file
    want = digest(g)
    g.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes", "--aof-use-rdb-preamble", "no", wait=False,
              env={"GOBLIN_TEST_RDB_LOAD_SLOW_US": "100000"})
    g.wait_ready(allow_loading=True)
    r = g.c.call("GET", "n")
    assert isinstance(r, Err) and r.msg.startswith("LOADING"), r
    wait_for(lambda: int(info(g.c).get("loading_loaded_bytes", "0")) > 0, 20)
    i = info(g.c)
    assert i["loading"] == "1" and int(i["loading_total_bytes"]) > int(i["loading_loaded_bytes"]) > 0, i
    assert 0 < float(i["loading_loaded_perc"]) < 100, i
    wait_for(lambda: info(g.c)["loading"] == "0", 60)
    assert digest(g) == want


@test
def one_child_at_a_time_with_bgsave():
    """As Redis: BGSAVE during a rewrite is refused unless SCHEDULE'd (then it
    runs after); BGREWRITEAOF during a BGSAVE is scheduled."""
    d = tdir("children")
    g = start("goblin", d, "--appendonly", "yes", env={"GOBLIN_TEST_RDB_SAVE_SLOW_US": "20000"})
    fill(g.c, 3000)
    assert g.c.ok("BGREWRITEAOF") == b"Background append only file rewriting started"
    r = g.c.call("BGSAVE")
    assert isinstance(r, Err) and r.msg == ("ERR Another child process is active (AOF?): can't BGSAVE right now. "
                                            "Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible."), r
    assert g.c.ok("BGSAVE", "SCHEDULE") == b"Background saving scheduled"
    wait_for(lambda: info(g.c)["rdb_bgsave_in_progress"] == "1", 60)
    assert info(g.c)["aof_rewrite_in_progress"] == "0"
    assert g.c.ok("BGREWRITEAOF") == b"Background append only file rewriting scheduled"
    assert info(g.c)["aof_rewrite_scheduled"] == "1"
    wait_for(lambda: info(g.c)["aof_rewrites"] == "2" and info(g.c)["aof_rewrite_in_progress"] == "0", 60)
    i = info(g.c)
    assert i["rdb_last_bgsave_status"] == "ok" and i["aof_last_bgrewrite_status"] == "ok", i


@test
def rewrite_without_preamble_writes_commands_every_type():
    """aof-use-rdb-preamble no: the rewrite's base is commands (SELECT, SET,
    RPUSH/SADD/ZADD/HMSET by 64, PEXPIREAT); redis-check-aof accepts it and
    both servers load it to the same digest."""
    d = tdir("rewrite_cmds")
    g = start("goblin", d, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    dataset.build(g.c, big=True)
    g.c.ok("SELECT", "0")
    g.c.ok("RPUSH", "l:200", *range(200))
    g.c.ok("SET", "ttl", "v", "PX", "100000000")
    assert g.c.ok("BGREWRITEAOF") == b"Background append only file rewriting started"
    wait_for(lambda: info(g.c)["aof_rewrite_in_progress"] == "0", 60)
    assert info(g.c)["aof_last_bgrewrite_status"] == "ok"
    m = manifest(d)
    assert m[0][1] == "appendonly.aof.2.base.aof", m
    with open(os.path.join(d, AOFDIR, m[0][1]), "rb") as f:
        base = f.read()
    assert base.startswith(b"*2\r\n$6\r\nSELECT\r\n") and b"PEXPIREAT" in base and b"HMSET" in base, base[:80]
    # 200 elements: 64 + 64 + 64 + 8.
    assert base.count(b"\r\n$5\r\nRPUSH\r\n$5\r\nl:200\r\n") == 4
    loads_everywhere(g, d)


@test
def replay_is_counted_nowhere():
    """As Redis's fake AOF client: loading adds no command statistics, no
    total_commands_processed, no slowlog entries."""
    d = tdir("uncounted")
    g = start("goblin", d, "--appendonly", "yes")
    for i in range(50):
        g.c.ok("INCR", "n")
    g.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes", "--slowlog-log-slower-than", "0")
    assert g.c.ok("GET", "n") == b"50"
    stats = info(g.c, "commandstats")
    assert not any(k.startswith("cmdstat_incr") for k in stats), stats
    assert int(info(g.c, "stats")["total_commands_processed"]) <= 3
    assert all(b"INCR" not in repr(e).encode().upper() for e in g.c.ok("SLOWLOG", "GET", "100"))


def incr_records(d):
    """The commands of the last incr file, as lists of bytes."""
    with open(os.path.join(d, AOFDIR, manifest(d)[-1][1]), "rb") as f:
        data = f.read()
    out, i = [], 0
    while i < len(data):
        assert data[i:i + 1] == b"*", data[i:i + 20]
        j = data.index(b"\r\n", i)
        argc, i = int(data[i + 1:j]), j + 2
        args = []
        for _ in range(argc):
            j = data.index(b"\r\n", i)
            n, i = int(data[i + 1:j]), j + 2
            args.append(data[i:i + n])
            i += n + 2
        out.append(args)
    return out


@test
def deletions_are_del_or_unlink_as_redis():
    """Keys the server deletes are recorded as DEL, or UNLINK under
    lazyfree-lazy-expire, exactly where Redis 7.0 does (EXPIRE in the past,
    a lazily and an actively expired key, GETEX PXAT in the past; SPOP of
    the whole set and RESTORE in the past stay DEL)."""
    for lazy in ("no", "yes"):
        got = {}
        for kind in ("redis", "goblin"):
            d = tdir("lazy_%s_%s" % (lazy, kind))
            s = start(kind, d, "--appendonly", "yes", "--lazyfree-lazy-expire", lazy,
                      "--lazyfree-lazy-server-del", lazy, "--lazyfree-lazy-eviction", lazy)
            c = s.c
            c.ok("SET", "a", "1")
            c.ok("EXPIRE", "a", "-1")
            c.ok("SET", "b", "1", "PX", "1")
            time.sleep(0.05)
            c.ok("GET", "b")
            c.ok("SADD", "s", "x", "y")
            c.ok("SPOP", "s", "5")
            c.ok("SET", "g", "1")
            c.ok("GETEX", "g", "PXAT", "1")
            c.ok("SET", "r", "1")
            payload = c.ok("DUMP", "r")
            c.ok("RESTORE", "r", "1", payload, "REPLACE", "ABSTTL")
            c.ok("SET", "act", "1", "PX", "1")
            wait_for(lambda: c.ok("DBSIZE") == 0, 5)
            s.shutdown("NOSAVE")
            got[kind] = [r for r in incr_records(d) if r[0] in (b"DEL", b"UNLINK")]
        assert got["goblin"] == got["redis"], (lazy, got)
        assert len(got["redis"]) == 6, got


@test
def randomkey_and_scan_expire_keys_without_multi_as_redis():
    """RANDOMKEY and SCAN (Redis 7.0's touches-arbitrary-keys commands) that
    lazily expire several keys record the DELs one by one; inside MULTI
    they stay in the transaction. The same records as redis-server."""
    got = {}
    for kind in ("redis", "goblin"):
        d = tdir("arbitrary_" + kind)
        s = start(kind, d, "--appendonly", "yes")
        c = s.c
        c.ok("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        for cmd in (("RANDOMKEY",), ("SCAN", "0"), ("MULTI", "RANDOMKEY")):
            c.ok("SET", "a1", "1", "PX", "1")
            c.ok("SET", "a2", "1", "PX", "1")
            time.sleep(0.01)
            if cmd[0] == "MULTI":
                c.ok("MULTI")
                c.ok("RANDOMKEY")
                c.ok("EXEC")
            else:
                c.ok(*cmd)
            c.ok("DEL", "a1", "a2")
        s.shutdown("NOSAVE")
        got[kind] = [r[0] for r in incr_records(d) if r[0] in (b"DEL", b"MULTI", b"EXEC")]
    assert got["goblin"] == got["redis"], got
    assert got["redis"][:4] == [b"DEL", b"DEL", b"DEL", b"DEL"], got


@test
def rewritten_commands_are_recorded_as_redis():
    """Commands Redis 7.0 records in another form are recorded in the same
    one, byte for byte but for the times: SET with any expiry as SET key
    value PXAT ms, SET ... GET without its GET, GETDEL as DEL (UNLINK under
    lazyfree-lazy-user-del), ZPOPMIN as sent, BZPOPMIN as ZPOPMIN key, the
    M forms with what they popped, BRPOPLPUSH as RPOPLPUSH, BLMOVE with its
    directions as sent or, served after blocking, as left and right;
    PUBLISH not at all (it goes to the replicas only); GETSET as SET;
    FLUSHDB and FLUSHALL even when there was nothing to remove."""
    def run(c, d):
        c.ok("FLUSHALL")
        c.ok("FLUSHDB")
        c.ok("FLUSHDB", "ASYNC")
        c.ok("GETSET", "g", "1")
        c.ok("getset", "g", "2")
        c.ok("SET", "a", "1", "EX", "100")
        c.ok("SET", "a", "2", "pxat", "9000000000000")
        c.ok("SET", "a", "3", "nx", "get")
        c.ok("SET", "a", "4", "XX", "GET", "KEEPTTL", "get")
        c.ok("SETEX", "b", "100", "v")
        c.ok("GETDEL", "b")
        c.ok("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
        c.ok("SET", "b", "v")
        c.ok("GETDEL", "b")
        c.ok("CONFIG", "SET", "lazyfree-lazy-user-del", "no")
        c.ok("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
        c.ok("zpopmin", "z")
        c.ok("ZPOPMAX", "z", "5")
        c.ok("ZADD", "z", "1", "a", "2", "b")
        c.ok("BZPOPMIN", "z", "0")
        c.ok("ZMPOP", "1", "z", "MAX", "COUNT", "9")
        c.ok("RPUSH", "l", "a", "b", "c")
        c.ok("BRPOPLPUSH", "l", "l2", "0")
        c.ok("BLMOVE", "l", "l2", "Left", "rIGHT", "0")
        c.ok("LMPOP", "1", "l", "RIGHT", "COUNT", "5")
        c.ok("PUBLISH", "ch", "m")  # replicas only
        c.ok("MULTI")
        c.ok("PUBLISH", "ch", "m")
        c.ok("SET", "p", "1")
        c.ok("EXEC")
        d.send("BLMOVE", "l", "l3", "LEFT", "RIGHT", "0")
        d.send("BZPOPMAX", "z", "0")
        time.sleep(0.2)
        c.ok("RPUSH", "l", "x")
        c.ok("ZADD", "z", "5", "e")
        d.read()
        d.read()

    got = {}
    for kind in ("redis", "goblin"):
        d = tdir("rewritten_%s" % kind)
        s = start(kind, d, "--appendonly", "yes")
        other = s.client()
        run(s.c, other)
        other.close()
        s.shutdown("NOSAVE")
        got[kind] = [[re.sub(rb"^1[0-9]{12}$", b"<ms>", a) for a in r] for r in incr_records(d)
                     if r[0].upper() != b"SELECT"]
    assert got["goblin"] == got["redis"], "\n".join(
        "%s %s" % ("  " if a == b else "!!", (a, b)) for a, b in zip(got["redis"], got["goblin"]))
    assert len(got["redis"]) > 20, got["redis"]


@test
def aof_selects_are_those_of_its_own_records():
    """With a replica attached, PUBLISH in another database reaches the
    replica with its SELECT and the AOF takes neither: the AOF's SELECTs are
    the ones its own records need, byte for byte as Redis's."""
    def run(c):
        c.ok("SET", "a", "1")
        c.ok("SELECT", "3")
        c.ok("PUBLISH", "ch", "m")
        c.ok("SELECT", "0")
        c.ok("SET", "b", "2")
        c.ok("SELECT", "3")
        c.ok("SET", "c", "3")
        c.ok("PUBLISH", "ch", "m")
        c.ok("SELECT", "5")
        c.ok("PUBLISH", "ch", "m")
        c.ok("SELECT", "3")
        c.ok("SET", "d", "4")

    got = {}
    for kind in ("redis", "goblin"):
        d = tdir("aofsel_%s" % kind)
        s = start(kind, d, "--appendonly", "yes", "--repl-diskless-sync-delay", "0")
        rep = start(kind, tdir("aofsel_rep_%s" % kind), "--replicaof", "127.0.0.1", str(s.port))
        assert wait_for(lambda: info(rep.c, "replication").get("master_link_status") == "up", 20), kind
        run(s.c)
        assert wait_for(lambda: rep.c.ok("GET", "b") == b"2", 10), kind
        rep.c.ok("SELECT", "3")
        assert wait_for(lambda: rep.c.ok("GET", "d") == b"4", 10), kind
        rep.shutdown("NOSAVE")
        s.shutdown("NOSAVE")
        got[kind] = incr_records(d)
    assert got["goblin"] == got["redis"], (got["redis"], got["goblin"])
    assert [b"SELECT", b"3"] in got["redis"], got["redis"]


@test
def shutdown_waits_for_the_first_base():
    d = tdir("initial")
    g = start("goblin", d, env={"GOBLIN_TEST_RDB_SAVE_SLOW_US": "20000"})
    fill(g.c, 20000)
    g.c.ok("CONFIG", "SET", "appendonly", "yes")
    r = g.c.call("SHUTDOWN", "NOSAVE")
    assert isinstance(r, Err) and r.msg == "ERR Errors trying to SHUTDOWN. Check logs.", r
    assert "Writing initial AOF, can't exit." in g.log_text()
    assert g.c.ok("PING") == b"PONG"
    wait_for(lambda: info(g.c)["aof_rewrite_in_progress"] == "0", 60)
    want = digest(g)
    g.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes")
    assert digest(g) == want


@test
def write_errors_refuse_writes_and_service_resumes():
    """DEBUG AOF-FAULT: with everysec, an acknowledged write waits in the
    buffer while the disk fails, later writes get MISCONF, reads work, and
    after the writer succeeds again everything acknowledged is in the file.
    With always, the client whose write is not on disk is disconnected
    without a reply (never acknowledged); a failed fsync is retried."""
    d = tdir("eio")
    g = start("goblin", d, "--appendonly", "yes", "--appendfsync", "everysec")
    g.c.ok("DEBUG", "AOF-FAULT", "2", "0")
    assert g.c.ok("SET", "a", "1") == b"OK"
    wait_for(lambda: info(g.c)["aof_last_write_status"] == "err", 5)
    r = g.c.call("SET", "b", "1")
    assert isinstance(r, Err) and r.msg.startswith("MISCONF Errors writing to the AOF file: Input/output error"), r
    assert g.c.ok("GET", "a") == b"1"
    wait_for(lambda: info(g.c)["aof_last_write_status"] == "ok", 10)
    assert g.c.ok("SET", "c", "1") == b"OK"
    assert "AOF write error looks solved" in g.log_text()
    g.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes", "--appendfsync", "always")
    assert g.c.ok("MGET", "a", "b", "c") == [b"1", None, b"1"]
    # always: a write that cannot be written is never acknowledged.
    g.c.ok("DEBUG", "AOF-FAULT", "1", "0")
    c2 = g.client()
    try:
        r = c2.call("SET", "x", "1")
    except (OSError, EOFError, ConnectionError) as e:
        r = e
    assert not (r == b"OK"), r
    wait_for(lambda: info(g.c)["aof_last_write_status"] == "ok", 10)
    # A failed fsync: the same, then the writer fsyncs again.
    g.c.ok("DEBUG", "AOF-FAULT", "0", "1")
    c3 = g.client()
    try:
        r = c3.call("SET", "y", "1")
    except (OSError, EOFError, ConnectionError) as e:
        r = e
    assert not (r == b"OK"), r
    wait_for(lambda: info(g.c)["aof_last_write_status"] == "ok", 10)
    assert g.c.ok("SET", "z", "1") == b"OK"
    assert "closing the connections whose writes are not on disk" in g.log_text()
    want = digest(g)
    g.shutdown("NOSAVE")
    g = start("goblin", d, "--appendonly", "yes")
    assert digest(g) == want


@test
def shutdown_kills_a_running_rewrite_and_keeps_the_aof():
    """SHUTDOWN while BGREWRITEAOF's child runs (slowed by
    rdb-key-save-delay): the child is killed, as Redis logs it, its temp
    files go, and the restart loads the whole dataset from the files the
    rewrite would have replaced. Both servers."""
    for kind in ("goblin", "redis"):
        d = tdir("shutdown_rewrite_" + kind)
        s = start(kind, d, "--appendonly", "yes")
        s.c.pipeline([["SET", "k:%d" % i, "v" * 10] for i in range(2000)])
        s.c.ok("SET", "last", "v")
        s.c.ok("CONFIG", "SET", "rdb-key-save-delay", "10000")
        s.c.ok("BGREWRITEAOF")
        assert wait_for(lambda: info(s.c)["aof_rewrite_in_progress"] == "1", 10), (kind, "in progress")
        s.c.ok("INCR", "during")
        assert s.shutdown("NOSAVE") == 0, (kind, "shutdown")
        assert "There is a child rewriting the AOF. Killing it!" in s.log_text(), (kind, s.log_tail(10))
        assert not [f for f in os.listdir(os.path.join(d, AOFDIR)) if f.startswith("temp")], kind
        assert not [f for f in os.listdir(d) if f.startswith("temp-rewriteaof")], kind
        s = start(kind, d, "--appendonly", "yes")
        assert s.c.ok("DBSIZE") == 2002 and s.c.ok("GET", "during") == b"1", (kind, s.c.ok("DBSIZE"))


@test
def debug_loadaof_replays_the_files_as_redis():
    """DEBUG LOADAOF empties the dataset and replays the files: the same
    digest after a rewrite and more writes, nothing appended to the files,
    no change left to save; the manifest and files are read again from
    disk (a command the test writes into the incr file appears). Both servers."""
    for kind in ("goblin", "redis"):
        d = tdir("loadaof_" + kind)
        s = start(kind, d, "--appendonly", "yes")
        dataset.build(s.c, big=False)
        s.c.ok("BGREWRITEAOF")
        wait_for(lambda: info(s.c)["aof_rewrite_in_progress"] == "0", 60)
        s.c.ok("SELECT", "0")
        s.c.ok("SET", "after", "rewrite", "EX", "1000")
        s.c.ok("INCR", "n")
        want = digest(s)
        size = int(info(s.c)["aof_current_size"])
        assert s.c.ok("DEBUG", "LOADAOF") == b"OK", kind
        assert digest(s) == want, kind
        assert int(info(s.c)["aof_current_size"]) == size, kind
        assert info(s.c)["rdb_changes_since_last_save"] == "0", kind
        assert 900 < s.c.ok("TTL", "after") <= 1000, kind
        incr = os.path.join(d, AOFDIR, manifest(d)[-1][1])
        with open(incr, "ab") as f:
            f.write(resp("SET", "written-by-the-test", "1"))
        assert s.c.ok("DEBUG", "LOADAOF") == b"OK", kind
        assert s.c.ok("GET", "written-by-the-test") == b"1", kind
        assert s.c.ok("INCR", "n") == 2, kind
        assert "Append Only File loaded by DEBUG LOADAOF" in s.log_text(), kind


@test
def debug_loadaof_without_files_changes_nothing():
    """Goblin refuses DEBUG LOADAOF when no manifest names a file (Redis
    7.0 empties the dataset and exits); the dataset stays."""
    g = start("goblin", tdir("loadaof_none"))
    g.c.ok("SET", "k", "v")
    r = g.c.call("DEBUG", "LOADAOF")
    assert isinstance(r, Err) and r.msg.startswith("ERR no append-only file to load"), r
    assert g.c.ok("GET", "k") == b"v"


@test
def debug_loadaof_of_damaged_files_exits_as_redis():
    """A file that cannot be replayed once the dataset is emptied ends the
    process with exit code 1, on both servers."""
    for kind in ("goblin", "redis"):
        d = tdir("loadaof_bad_" + kind)
        s = start(kind, d, "--appendonly", "yes", "--aof-load-truncated", "no")
        s.c.ok("SET", "k", "v")
        incr = os.path.join(d, AOFDIR, manifest(d)[-1][1])
        with open(incr, "ab") as f:
            f.write(b"*2\r\n$3\r\nGET\r\n$1\r\n")
        try:
            s.c.call("DEBUG", "LOADAOF")
        except (OSError, EOFError):
            pass
        s.p.wait(10)
        assert s.p.returncode == 1, (kind, s.p.returncode)


def main():
    if not os.path.exists(CHECK_AOF):
        print("aof: redis-check-aof not found")
    time.sleep(0)
    return SUITE.main(ARGS)


if __name__ == "__main__":
    sys.exit(main())
