#!/usr/bin/env python3
"""Replication against redis-server 7.0, both directions, on loopback.

Every type and encoding (tests/persist/dataset.py) plus writes during the
sync in effect form (SPOP, INCRBYFLOAT, EXPIRE, scripts, MULTI) must reach
the replica as the same dataset: compared with DEBUG DIGEST once the
replica's offset equals the primary's. Also: goblin -> goblin -> redis
chains, partial resync after a cut link (a TCP proxy in this file) and a
full one after the backlog overflowed, promotion with REPLICAOF NO ONE and
a second replica following it by the second replication id, WAIT, ROLE,
READONLY, expiry on a replica, repl-diskless-load (disabled, on-empty-db,
swapdb: from the socket, the old data served meanwhile and kept when the
transfer fails), repl-diskless-sync-max-replicas, and full syncs without fork under
--arena-hugetlb (the versioned iteration: clients keep writing, no client
waits 200 ms, a sync killed half-way, whole-keyspace commands meanwhile).

  python3 tests/repl/test_repl.py [-v] [name-substring ...]

Ends with "repl: N passed, M failed".
"""
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "persist"))
from harness import REDIS, ROOT, Conn, Err, Suite, free_port, info, wait_for  # noqa: E402
import dataset  # noqa: E402
from resp import encode  # noqa: E402

TMP = os.path.join(ROOT, "tests", "tmp", "repl.%d" % os.getpid())
VERBOSE = "-v" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "-v"]
SUITE = Suite("repl", TMP, VERBOSE)
test, tdir, start = SUITE.test, SUITE.tdir, SUITE.start

PRIMARY_ARGS = ("--repl-diskless-sync-delay", "0")


def digest(s):
    return s.c.ok("DEBUG", "DIGEST")


def digest_diff(a, b, most=10):
    """Why two servers' digests differ: up to most keys (db, key) whose
    DEBUG DIGEST-VALUE, type or expire time differs, or that only one side has,
    with what each side holds: a failure names the keys it is about."""
    out = []
    for db in range(16):
        keys = {}
        for side, s in (("a", a), ("b", b)):
            s.c.ok("SELECT", db)
            cur = b"0"
            while True:
                cur, batch = s.c.ok("SCAN", cur, "COUNT", 1000)
                for k in batch:
                    keys.setdefault(k, set()).add(side)
                if cur in (b"0", "0", 0):
                    break
        for k in sorted(keys):
            got = []
            for s in (a, b):
                s.c.ok("SELECT", db)
                got.append((s.c.call("TYPE", k), s.c.call("PEXPIRETIME", k), s.c.call("DEBUG", "DIGEST-VALUE", k)))
            if got[0] != got[1]:
                out.append((db, k, got[0], got[1]))
                if len(out) >= most:
                    break
        if len(out) >= most:
            break
    for s in (a, b):
        s.c.ok("SELECT", 0)
    return out


def offset(s):
    i = info(s.c, "replication")
    return int(i["slave_repl_offset"] if i["role"] == "slave" else i["master_repl_offset"])


def in_sync(primary, *replicas, timeout=30):
    """Wait until every replica is up and at the primary's offset."""
    def ok():
        want = offset(primary)
        for r in replicas:
            i = info(r.c, "replication")
            if i.get("master_link_status") != "up" or int(i["slave_repl_offset"]) != want:
                return False
        return True
    assert wait_for(ok, timeout), [info(r.c, "replication") for r in (primary,) + replicas]


def primary(kind, d, *args, big=False):
    """A primary under d/p holding every type and encoding (dataset.py),
    its client back on database 0."""
    p = start(kind, os.path.join(d, "p"), *args)
    dataset.build(p.c, big=big)
    p.c.ok("SELECT", "0")
    return p


def replica_of(kind, d, primary_port, *args):
    return start(kind, d, "--replicaof", "127.0.0.1", str(primary_port), *args)


def effect_form_writes(c, rng, n=300):
    """Writes whose effect is not their text: what the stream must rewrite."""
    for i in range(n):
        k = rng.randrange(30)
        op = rng.randrange(12)
        if op == 0:
            c.ok("SADD", "eff:set:%d" % k, *[str(rng.randrange(50)) for _ in range(5)])
            c.ok("SPOP", "eff:set:%d" % k)
        elif op == 1:
            c.ok("INCRBYFLOAT", "eff:f:%d" % k, "%.3f" % rng.uniform(-10, 10))
        elif op == 2:
            c.ok("SET", "eff:t:%d" % k, "v", "EX", str(rng.randrange(100, 1000)))
        elif op == 3:
            c.ok("EVAL", "redis.call('incr', KEYS[1]); return redis.call('lpush', KEYS[2], ARGV[1])", "2",
                 "eff:cnt:%d" % k, "eff:l:%d" % k, str(i))
        elif op == 4:
            c.ok("MULTI")
            c.ok("HINCRBYFLOAT", "eff:h", "f%d" % k, "1.5")
            c.ok("ZINCRBY", "eff:z", "2", "m%d" % k)
            c.ok("EXEC")
        elif op == 5:
            c.ok("EXPIRE", "eff:t:%d" % k, "500")
        elif op == 6:
            c.ok("RPUSH", "eff:q", str(i))
            c.ok("LPOP", "eff:q")
        elif op == 7:
            c.ok("SETEX", "eff:sx:%d" % k, "1000", str(i))
        elif op == 9:
            # streams: "*" IDs, approximate trims, group reads and claims go
            # out in the form of their effect (the ID, "=", XCLAIM, SETID)
            c.ok("XADD", "eff:x", "MAXLEN", "~", "50", "*", "f", str(i))
            if rng.randrange(3) == 0:
                c.call("XGROUP", "CREATE", "eff:x", "g%d" % (k % 3), "0")
        elif op == 10:
            c.call("XREADGROUP", "GROUP", "g%d" % (k % 3), "c%d" % (k % 4), "COUNT", "3",
                   *(["NOACK"] if k % 5 == 0 else []), "STREAMS", "eff:x", ">")
            c.call("XACK", "eff:x", "g%d" % (k % 3), "0-1")
        elif op == 11:
            c.call("XAUTOCLAIM", "eff:x", "g%d" % (k % 3), "c%d" % (k % 4), "0", "0", "COUNT", "2")
            c.call("XTRIM", "eff:x", "MINID", "~", "0")
        else:
            c.ok("DEL", "eff:set:%d" % k)


class Writer(threading.Thread):
    """Writes in the background while a sync happens."""

    def __init__(self, server, seed):
        super().__init__(daemon=True)
        self.c = server.client()
        self.rng = random.Random(seed)
        self.stop = False

    def run(self):
        while not self.stop:
            effect_form_writes(self.c, self.rng, 20)


def both_ways(primary_kind, replica_kind, hugetlb=False):
    d = tdir("%s_to_%s%s" % (primary_kind, replica_kind, "_huge" if hugetlb else ""))
    pargs = PRIMARY_ARGS + (("--arena-hugetlb",) if hugetlb and primary_kind == "goblin" else ())
    p = primary(primary_kind, d, *pargs, big=True)
    w = Writer(p, 1)
    w.start()
    r = replica_of(replica_kind, os.path.join(d, "r"), p.port)
    time.sleep(1.0)
    w.stop = True
    w.join()
    effect_form_writes(p.c, random.Random(2))
    in_sync(p, r)
    assert digest(r) == digest(p)
    # The groups as the stream rebuilt them: pending entries, consumers and
    # last IDs (entries-read and lag are left out: Redis 7.0 propagates a
    # group's read counter only with XGROUP SETID, so its replicas'
    # counters drift from the primary's, Goblin's as redis-server's).
    for cmd in (["XINFO", "GROUPS", "eff:x"], ["XPENDING", "eff:x", "g0"], ["XPENDING", "eff:x", "g1", "-", "+", "1000"]):
        want, got = p.c.call(*cmd), r.c.call(*cmd)
        if cmd[1] == "GROUPS" and isinstance(want, list) and isinstance(got, list):
            want = [g[:8] for g in want]
            got = [g[:8] for g in got]
        if cmd[-1] == "1000" and isinstance(want, list) and isinstance(got, list):
            want = [(e[0], e[1], e[3]) for e in want]
            got = [(e[0], e[1], e[3]) for e in got]
        assert want == got, "%s: primary %r, replica %r" % (cmd, want, got)
    return p, r


@test
def goblin_primary_redis_replica():
    p, r = both_ways("goblin", "redis")
    assert "Synchronization with replica 127.0.0.1:%d succeeded" % r.port in p.log_text()
    # INFO's replication buffers: the backlog's ring (repl-backlog-size) and
    # what the link holds.
    m = info(p.c, "memory")
    assert int(m["mem_replication_backlog"]) == 1 << 20, m
    assert int(m["mem_total_replication_buffers"]) == int(m["mem_replication_backlog"]) + int(m["mem_clients_slaves"]), m


@test
def redis_primary_goblin_replica():
    p, r = both_ways("redis", "goblin")
    assert "MASTER <-> REPLICA sync: Finished with success" in r.log_text()
    # A replica refuses writes, answers reads, and says so in ROLE.
    e = r.c.call("SET", "x", "1")
    assert isinstance(e, Err) and e.msg == "READONLY You can't write against a read only replica.", e
    role = r.c.ok("ROLE")
    assert role[0] == b"slave" and role[2] == p.port and role[3] == b"connected", role


FN = ("#!lua name=lib\nredis.register_function('bump', function(keys) return redis.call('incr', keys[1]) end)\n"
      "redis.register_function{function_name='peek', callback=function(keys) return redis.call('get', keys[1]) end, "
      "flags={'no-writes'}}")


def libraries(c):
    return sorted(lib[1] for lib in c.ok("FUNCTION", "LIST"))


@test
def functions_reach_the_replicas():
    """A library in the full sync's RDB, then FUNCTION LOAD / DELETE /
    FLUSH and FCALL's effects over the stream, Goblin and redis-server
    replicas of Goblin and redis-server primaries."""
    for pk, rk in (("goblin", "goblin"), ("goblin", "redis"), ("redis", "goblin")):
        d = tdir("functions_%s_%s" % (pk, rk))
        p = start(pk, os.path.join(d, "p"), *PRIMARY_ARGS)
        p.c.ok("FUNCTION", "LOAD", FN.replace("name=lib", "name=first"))
        r = replica_of(rk, os.path.join(d, "r"), p.port)
        in_sync(p, r)
        assert libraries(r.c) == [b"first"], (pk, rk, libraries(r.c))
        p.c.ok("FUNCTION", "DELETE", "first")
        p.c.ok("FUNCTION", "LOAD", FN)
        assert p.c.ok("FCALL", "bump", 1, "n") == 1
        assert p.c.ok("FCALL", "bump", 1, "n") == 2
        in_sync(p, r)
        assert libraries(r.c) == [b"lib"], (pk, rk, libraries(r.c))
        assert r.c.ok("FCALL_RO", "peek", 1, "n") == b"2"
        e = r.c.call("FCALL", "bump", 1, "n")
        assert isinstance(e, Err) and e.msg == "READONLY You can't write against a read only replica.", e
        e = r.c.call("FUNCTION", "LOAD", FN.replace("name=lib", "name=other"))
        assert isinstance(e, Err) and e.msg.startswith("READONLY"), e
        p.c.ok("FUNCTION", "FLUSH")
        in_sync(p, r)
        assert libraries(r.c) == [], (pk, rk)
        assert digest(r) == digest(p)
        r.stop()
        p.stop()


@test
def debug_replicate_reaches_the_replicas_only():
    """DEBUG REPLICATE sends a command to the replicas alone (no SELECT
    before it): they diverge from the primary, as with redis-server."""
    for pk, rk in (("goblin", "redis"),):
        d = tdir("debug_replicate_%s_%s" % (pk, rk))
        p = start(pk, os.path.join(d, "p"))
        r = replica_of(rk, os.path.join(d, "r"), p.port)
        in_sync(p, r)
        assert p.c.ok("DEBUG", "REPLICATE", "SET", "only-on-replicas", "1") == b"OK"
        p.c.ok("SET", "after", "x")
        assert wait_for(lambda: r.c.ok("GET", "after") == b"x", 10), (pk, rk)
        assert r.c.ok("GET", "only-on-replicas") == b"1", (pk, rk)
        assert p.c.ok("GET", "only-on-replicas") is None, (pk, rk)
        r.stop()
        p.stop()


@test
def debug_sleep_stops_the_keepalives_of_a_replica_waiting_for_its_sync():
    """A replica waiting for its sync (repl-diskless-sync-delay) is kept
    alive by newlines from the primary's cron; DEBUG SLEEP stops the whole
    primary, those too, as Redis's does: the replica times out."""
    d = tdir("sleep_keepalive")
    p = start("goblin", os.path.join(d, "p"), "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "1000")
    r = start("goblin", os.path.join(d, "r"), "--repl-timeout", "2")
    r.c.ok("REPLICAOF", "127.0.0.1", str(p.port))
    assert wait_for(lambda: "MASTER <-> REPLICA sync started" in r.log_text(), 10), r.log_tail()
    time.sleep(3)  # kept alive past repl-timeout while the primary runs
    assert "Timeout connecting to the MASTER" not in r.log_text(), r.log_tail()
    p.c.ok("DEBUG", "SLEEP", "4")
    assert "Timeout connecting to the MASTER" in r.log_text(), r.log_tail()
    r.stop()
    p.stop()


@test
def client_kill_of_a_replica_in_a_full_sync_ends_its_link_at_once():
    """CLIENT KILL TYPE replica while the primary's snapshot is still being
    written (rdb-key-save-delay): the replica sees the link go at once and
    its load fails, keeping its data, as with Redis."""
    d = tdir("kill_in_sync")
    p = start("goblin", os.path.join(d, "p"), "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0")
    p.c.ok("DEBUG", "POPULATE", "300", "k", "1000")
    p.c.ok("CONFIG", "SET", "rdb-key-save-delay", "20000")  # 6 s for the whole snapshot
    r = start("goblin", os.path.join(d, "r"), "--repl-diskless-load", "swapdb")
    r.c.ok("SET", "mine", "1")
    r.c.ok("REPLICAOF", "127.0.0.1", str(p.port))
    assert wait_for(lambda: info(r.c, "persistence")["loading"] == "1", 10), r.log_tail()
    # The sync's RDB child shows in INFO, as Redis's.
    assert info(p.c, "persistence")["rdb_bgsave_in_progress"] == "1", "in progress"
    p.c.ok("CONFIG", "SET", "repl-diskless-sync-delay", "5")
    assert p.c.ok("CLIENT", "KILL", "TYPE", "replica") == 1
    assert wait_for(lambda: info(r.c, "persistence")["loading"] == "0", 2), r.log_tail()
    assert r.c.ok("GET", "mine") == b"1" and r.c.ok("DBSIZE") == 1
    p.c.ok("CONFIG", "SET", "rdb-key-save-delay", "0")
    r.stop()
    p.stop()


@test
def goblin_to_goblin_to_redis_chain():
    d = tdir("chain")
    p = primary("goblin", d, *PRIMARY_ARGS)
    m = replica_of("goblin", os.path.join(d, "m"), p.port, *PRIMARY_ARGS)
    r = replica_of("redis", os.path.join(d, "r"), m.port)
    effect_form_writes(p.c, random.Random(3))
    in_sync(p, m)
    in_sync(m, r)
    want = digest(p)
    assert digest(m) == want and digest(r) == want
    # One history: the chain shares the primary's id and offsets.
    assert info(r.c, "replication")["master_replid"] == info(p.c, "replication")["master_replid"]
    role = p.c.ok("ROLE")
    assert role[0] == b"master" and len(role[2]) == 1 and role[2][0][1] == str(m.port).encode(), role


@test
def publish_reaches_the_subscribers_of_the_replicas():
    """PUBLISH and SPUBLISH go to the replicas (as Redis propagates them)
    and from there down a chain, alone, in MULTI and from a script, in
    both directions between goblin and Redis; not into the AOF."""
    for pk, mk, rk in (("goblin", "goblin", "redis"), ("redis", "goblin", "goblin")):
        d = tdir("publish_%s_%s_%s" % (pk, mk, rk))
        p = start(pk, os.path.join(d, "p"), "--appendonly", "yes", *PRIMARY_ARGS)
        m = replica_of(mk, os.path.join(d, "m"), p.port, *PRIMARY_ARGS)
        r = replica_of(rk, os.path.join(d, "r"), m.port)
        in_sync(p, m)
        in_sync(m, r)
        subs = []
        for s in (m, r):
            c = s.client()
            c.send("SUBSCRIBE", "news")
            assert c.read() == [b"subscribe", b"news", 1]
            c.send("SSUBSCRIBE", "snews")
            assert c.read() == [b"ssubscribe", b"snews", 1]
            subs.append(c)
        p.c.ok("PUBLISH", "news", "one")
        p.c.ok("MULTI")
        p.c.ok("SET", "k", "v")
        p.c.ok("PUBLISH", "news", "two")
        p.c.ok("EXEC")
        p.c.ok("EVAL", "return redis.call('publish', 'news', 'three')", "0")
        p.c.ok("SPUBLISH", "snews", "four")
        for c in subs:
            got = [c.read() for _ in range(4)]
            assert got == [[b"message", b"news", b"one"], [b"message", b"news", b"two"],
                           [b"message", b"news", b"three"], [b"smessage", b"snews", b"four"]], (pk, mk, rk, got)
            c.close()
        in_sync(p, m)
        assert m.c.ok("GET", "k") == b"v"
        if pk == "goblin":
            aof = open(os.path.join(d, "p", "appendonlydir", "appendonly.aof.1.incr.aof"), "rb").read()
            assert b"news" not in aof and b"$1\r\nk\r\n" in aof, aof


class Proxy(threading.Thread):
    """A TCP proxy to a port that can cut every connection through it."""

    def __init__(self, target):
        super().__init__(daemon=True)
        self.target = target
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(8)
        self.port = self.ls.getsockname()[1]
        self.conns = []
        self.refuse = False
        self.stalled = False
        self.slow = 0.0  # seconds to sleep after each 16 KB passed on (a slow link)
        self.lock = threading.Lock()

    def run(self):
        while True:
            try:
                a, _ = self.ls.accept()
            except OSError:
                return
            if self.refuse:
                a.close()
                continue
            b = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.conns += [a, b]
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=self.pump, args=(x, y), daemon=True).start()

    def pump(self, x, y):
        try:
            while True:
                data = x.recv(16384 if self.slow else 65536)
                if not data:
                    break
                while self.stalled:
                    time.sleep(0.01)
                y.sendall(data)
                if self.slow:
                    time.sleep(self.slow)
        except OSError:
            pass
        for s in (x, y):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            for s in self.conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass
            self.conns = []


@test
def partial_resync_after_a_cut_and_full_after_overflow():
    for replica_kind in ("goblin", "redis"):
        d = tdir("cut_" + replica_kind)
        p = primary("goblin", d, *PRIMARY_ARGS, "--repl-backlog-size", "64kb")
        px = Proxy(p.port)
        px.start()
        r = replica_of(replica_kind, os.path.join(d, "r"), px.port)
        in_sync(p, r)
        assert p.log_text().count("full resync") == 1
        # A cut: the replica comes back and continues from its offset.
        px.refuse = True
        px.cut()
        effect_form_writes(p.c, random.Random(4), 100)
        px.refuse = False
        in_sync(p, r)
        assert digest(r) == digest(p)
        assert "Partial resynchronization request from 127.0.0.1" in p.log_text(), p.log_tail(30)
        assert p.log_text().count("full resync") == 1
        # More than the backlog holds while cut: a full sync again.
        px.refuse = True
        px.cut()
        p.c.ok("SET", "big", "x" * 100000)
        px.refuse = False
        in_sync(p, r)
        assert digest(r) == digest(p)
        assert p.log_text().count("full resync") == 2, p.log_tail(30)


@test
def promotion_keeps_the_history_for_the_other_replica():
    d = tdir("promote")
    p = primary("goblin", d, *PRIMARY_ARGS)
    a = replica_of("goblin", os.path.join(d, "a"), p.port, *PRIMARY_ARGS)
    b = replica_of("redis", os.path.join(d, "b"), p.port)
    effect_form_writes(p.c, random.Random(5), 100)
    in_sync(p, a, b)
    old_id = info(p.c, "replication")["master_replid"]
    p.stop()
    # a becomes the primary; b follows it with PSYNC on the old id.
    assert a.c.ok("REPLICAOF", "NO", "ONE") == b"OK"
    ia = info(a.c, "replication")
    assert ia["role"] == "master" and ia["master_replid2"] == old_id, ia
    assert b.c.ok("REPLICAOF", "127.0.0.1", str(a.port)) == b"OK"
    a.c.ok("SET", "after", "promotion")
    in_sync(a, b)
    assert digest(a) == digest(b)
    assert "Partial resynchronization request from 127.0.0.1" in a.log_text(), a.log_tail(30)


@test
def wait_role_and_expiry_on_a_replica():
    d = tdir("wait")
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS)
    assert p.c.ok("WAIT", "1", "100") == 0
    r = replica_of("goblin", os.path.join(d, "r"), p.port)
    in_sync(p, r)
    p.c.ok("SET", "k", "v")
    assert p.c.ok("WAIT", "1", "5000") == 1
    t0 = time.time()
    assert p.c.ok("WAIT", "2", "300") == 1
    assert time.time() - t0 >= 0.25
    e = r.c.call("WAIT", "1", "0")
    assert isinstance(e, Err) and e.msg.startswith("ERR WAIT cannot be used with replica instances"), e
    # Expiry: the replica hides a logically expired key; the primary's DEL
    # removes it. With active expiry off on the primary, the key stays in
    # the replica until the primary touches it.
    p.c.ok("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    p.c.ok("SET", "e", "v", "PX", "200")
    in_sync(p, r)
    assert r.c.ok("GET", "e") == b"v"
    time.sleep(0.3)
    assert r.c.ok("GET", "e") is None
    assert r.c.ok("DBSIZE") == 2  # still there, just not visible
    assert p.c.ok("GET", "e") is None  # the primary expires it and sends DEL
    in_sync(p, r)
    assert r.c.ok("DBSIZE") == 1
    i = info(p.c, "replication")
    assert i["connected_slaves"] == "1" and i["slave0"].startswith("ip=127.0.0.1,port=%d,state=online" % r.port), i


@test
def a_writable_replica_expires_the_keys_its_clients_gave_a_ttl():
    """replica-read-only no: a key a client of the replica gave a TTL is
    expired by the replica itself (Redis's slaveKeysWithExpire), its DEL in
    the replica's AOF; a key the primary gave a TTL still waits for the
    primary's DEL, hidden meanwhile; a write to it starts a new key. Both
    servers."""
    for kind in ("redis", "goblin"):
        d = tdir("wrexp_" + kind)
        p = start(kind, os.path.join(d, "p"), *PRIMARY_ARGS)
        r = replica_of(kind, os.path.join(d, "r"), p.port, "--replica-read-only", "no", "--appendonly", "yes")
        in_sync(p, r)
        p.c.ok("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        p.c.ok("SET", "pk1", "5", "PX", "10")
        p.c.ok("SET", "pk2", "5", "PX", "10")
        in_sync(p, r)
        r.c.ok("SELECT", "5")
        for k in ("k1", "k2", "k3"):
            r.c.ok("SET", k, "1", "PX", "300")
        r.c.ok("SET", "k4", "1")
        r.c.ok("SET", "k5", "1", "EX", "100")
        assert r.c.ok("DBSIZE") == 5, kind
        assert wait_for(lambda: r.c.ok("DBSIZE") == 2, timeout=10), (kind, r.c.ok("DBSIZE"))
        assert info(r.c, "stats")["expired_keys"] == "3", kind
        r.c.ok("SELECT", "0")
        assert r.c.ok("DBSIZE") == 2 and r.c.ok("EXISTS", "pk1", "pk2") == 0, kind
        assert r.c.ok("INCR", "pk1") == 1 and r.c.ok("TTL", "pk1") == -1, kind
        assert r.c.ok("GET", "pk2") is None and r.c.ok("DBSIZE") == 2, kind
        aof = b""
        for name in sorted(os.listdir(os.path.join(d, "r", "appendonlydir"))):
            if ".incr." in name:
                with open(os.path.join(d, "r", "appendonlydir", name), "rb") as f:
                    aof += f.read()
        for k in (b"k1", b"k2", b"k3"):
            assert b"$3\r\nDEL\r\n$2\r\n" + k in aof, (kind, k, aof[-400:])
        r.stop()
        p.stop()


@test
def full_sync_without_fork_under_arena_hugetlb():
    p, r = both_ways("goblin", "goblin", hugetlb=True)
    assert "(fork-less: versioned iteration)" in p.log_text()


@test
def diskless_sync_of_a_dump_over_4mb():
    """rdb-save-incremental-fsync (yes) must not fdatasync the pipe of a
    diskless sync: a dump past 4 MB (RDB_AUTOSYNC_BYTES) reaches the
    replica whole, at the first attempt."""
    d = tdir("diskless_big")
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS)
    rng = random.Random(3)
    for i in range(0, 60000, 1000):   # ~6.5 MB of incompressible values
        p.c.pipeline([["SET", "big:%d" % j, "%0100x" % rng.getrandbits(400)] for j in range(i, i + 1000)])
    r = replica_of("goblin", os.path.join(d, "r"), p.port)
    in_sync(p, r)
    assert r.c.ok("DBSIZE") == 60000 and digest(r) == digest(p)
    assert p.log_text().count("Starting BGSAVE for SYNC") == 1, p.log_tail()


@test
def sentinel_fails_over_a_goblin_primary():
    """Three redis-server --sentinel over a goblin primary and two goblin
    replicas: after kill -9 of the primary one replica is promoted, the
    other follows it, writes acknowledged with WAIT survive, and a redis-py
    Sentinel client finds the new primary."""
    import subprocess
    d = tdir("sentinel")
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS)
    a = replica_of("goblin", os.path.join(d, "a"), p.port, *PRIMARY_ARGS)
    b = replica_of("goblin", os.path.join(d, "b"), p.port, *PRIMARY_ARGS)
    in_sync(p, a, b)
    sentinels = []
    for i in range(3):
        sd = os.path.join(d, "s%d" % i)
        os.makedirs(sd)
        port = free_port()
        conf = os.path.join(sd, "sentinel.conf")
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\nsentinel monitor mymaster 127.0.0.1 %d 2\n"
                    "sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 5000\n"
                    % (port, p.port))
        log = open(os.path.join(d, "s%d.log" % i), "wb")
        proc = subprocess.Popen([REDIS, conf, "--sentinel"], cwd=sd, stdout=log, stderr=subprocess.STDOUT)
        sentinels.append((proc, port))
    try:
        def sentinel_view():
            try:
                c = Conn(sentinels[0][1], timeout=5.0)
            except OSError:
                return None  # not listening yet
            try:
                m = c.call("SENTINEL", "MASTER", "mymaster")
            finally:
                c.close()
            if isinstance(m, Err):
                return None
            return dict(zip(m[::2], m[1::2]))
        assert wait_for(lambda: (sentinel_view() or {}).get(b"num-slaves") == b"2" and
                        (sentinel_view() or {}).get(b"num-other-sentinels") == b"2", 20), sentinel_view()
        for i in range(100):
            p.c.ok("SET", "acked:%d" % i, str(i))
        assert p.c.ok("WAIT", "2", "2000") == 2
        p.stop()

        def repl_info(s):
            # A new connection each time: Sentinel kills the normal clients
            # of the nodes it reconfigures (CLIENT KILL TYPE normal).
            c = s.client()
            try:
                return info(c, "replication")
            finally:
                c.close()

        def promoted():
            for s in (a, b):
                if repl_info(s)["role"] == "master":
                    return s
            return None
        new = wait_for(promoted, 30, 0.2)
        assert new, [repl_info(s) for s in (a, b)]
        other = b if new is a else a
        assert wait_for(lambda: repl_info(other).get("master_port") == str(new.port) and
                        repl_info(other).get("master_link_status") == "up", 30, 0.2), repl_info(other)
        for s in (new, other):
            s.c = s.client()
        assert new.c.ok("MGET", *["acked:%d" % i for i in range(100)]) == [str(i).encode() for i in range(100)]
        # A Sentinel-aware client (redis-py) writes to the new primary.
        code = ("from redis.sentinel import Sentinel\n"
                "s = Sentinel([('127.0.0.1', %d), ('127.0.0.1', %d)], socket_timeout=2)\n"
                "m = s.master_for('mymaster', socket_timeout=2)\n"
                "m.set('via', 'sentinel')\nprint(s.discover_master('mymaster')[1])\n"
                % (sentinels[0][1], sentinels[1][1]))
        r = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == str(new.port).encode(), r.stdout + r.stderr
        # And ioredis with sentinels (installed by tests/clients/run.sh, which
        # make test runs first).
        node_dir = os.path.join(ROOT, "tests", "clients", "node")
        if os.path.isdir(os.path.join(node_dir, "node_modules", "ioredis")):
            js = ("const Redis = require('ioredis');\n"
                  "const r = new Redis({sentinels: [{host: '127.0.0.1', port: %d}, {host: '127.0.0.1', port: %d}],"
                  " name: 'mymaster', enableOfflineQueue: true});\n"
                  "(async () => { await r.set('via-ioredis', 'sentinel');"
                  " console.log(r.stream.remotePort); r.disconnect(); })()"
                  ".catch(e => { console.error(e); process.exit(1); });\n" % (sentinels[1][1], sentinels[2][1]))
            r = subprocess.run(["node", "-e", js], capture_output=True, timeout=60, cwd=node_dir)
            assert r.returncode == 0 and r.stdout.strip() == str(new.port).encode(), r.stdout + r.stderr
            in_sync(new, other)
            assert other.c.ok("GET", "via-ioredis") == b"sentinel"
        else:
            print("    ioredis part skipped: tests/clients/node/node_modules has no ioredis (run tests/clients/run.sh)",
                  flush=True)
        in_sync(new, other)
        assert other.c.ok("GET", "via") == b"sentinel"
    finally:
        for proc, _ in sentinels:
            proc.kill()
            proc.wait()


def client_lines(c, *args):
    """CLIENT LIST [args] as a list of {field: value}."""
    out = c.ok("CLIENT", "LIST", *args)
    text = out.decode() if isinstance(out, bytes) else out
    return [dict(kv.split("=", 1) for kv in line.split(" ")) for line in text.splitlines() if line]


@test
def replication_links_in_client_list_and_kill():
    """A replica's link is one of the primary's clients as Redis shows it
    (flags S, CLIENT LIST TYPE replica and ID), CLIENT KILL closes it by ID
    or TYPE replica; on the replica the primary is a client (flags M) that
    CLIENT KILL TYPE master or ID closes; each time the replica comes back with a partial
    resync (INFO's sync_partial_ok). INFO counts the replication traffic
    both ways. The same assertions hold against redis-server 7.0."""
    for kind in ("goblin", "redis"):
        d = tdir("links_" + kind)
        p = start(kind, os.path.join(d, "p"), *PRIMARY_ARGS)
        r = replica_of(kind, os.path.join(d, "r"), p.port)
        in_sync(p, r)
        # The traffic: the RDB and the stream out of the primary, into the
        # replica; a 200 KB value moves both by at least its size.
        out0 = int(info(p.c, "stats")["total_net_repl_output_bytes"])
        in0 = int(info(r.c, "stats")["total_net_repl_input_bytes"])
        assert out0 > 0 and in0 > 0, (kind, out0, in0)
        p.c.ok("SET", "big", "x" * 200000)
        in_sync(p, r)
        assert int(info(p.c, "stats")["total_net_repl_output_bytes"]) >= out0 + 200000, kind
        assert int(info(r.c, "stats")["total_net_repl_input_bytes"]) >= in0 + 200000, kind
        p.c.ok("CONFIG", "RESETSTAT")
        assert int(info(p.c, "stats")["total_net_repl_output_bytes"]) < 1000, kind
        links = [f for f in client_lines(p.c) if f["flags"] == "S"]
        assert len(links) == 1, (kind, links)
        link = links[0]
        assert link["laddr"] == "127.0.0.1:%d" % p.port and link["addr"].startswith("127.0.0.1:"), (kind, link)
        assert [f["id"] for f in client_lines(p.c, "TYPE", "replica")] == [link["id"]], kind
        assert [f["id"] for f in client_lines(p.c, "TYPE", "slave")] == [link["id"]], kind
        assert all(f["flags"] != "S" for f in client_lines(p.c, "TYPE", "normal")), kind
        assert [f["flags"] for f in client_lines(p.c, "ID", link["id"])] == ["S"], kind
        assert p.c.ok("CLIENT", "KILL", "TYPE", "master") == 0, kind  # a primary follows nobody
        assert p.c.ok("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") == 0, (kind, client_lines(p.c))
        partial = int(info(p.c, "stats")["sync_partial_ok"])
        assert p.c.ok("CLIENT", "KILL", "ID", link["id"]) == 1, kind
        assert wait_for(lambda: int(info(p.c, "stats")["sync_partial_ok"]) == partial + 1, 20), (kind, info(p.c, "stats"))
        in_sync(p, r)
        # On the replica, the primary is a client: flags M, TYPE master, its
        # addr the primary's, run by no user (Redis's "(superuser)"), counted
        # in connected_clients; no USER filter kills it, its ID does.
        prim = client_lines(r.c, "TYPE", "master")
        assert len(prim) == 1, (kind, client_lines(r.c))
        assert prim[0]["flags"] == "M" and prim[0]["addr"] == "127.0.0.1:%d" % p.port, (kind, prim)
        assert prim[0]["user"] == "(superuser)" and prim[0]["laddr"].startswith("127.0.0.1:"), (kind, prim)
        assert [f["id"] for f in client_lines(r.c) if f["flags"] == "M"] == [prim[0]["id"]], kind
        assert [f["flags"] for f in client_lines(r.c, "ID", prim[0]["id"])] == ["M"], kind
        assert all(f["flags"] != "M" for f in client_lines(r.c, "TYPE", "normal")), kind
        assert int(info(r.c, "clients")["connected_clients"]) == len(client_lines(r.c)), (kind, info(r.c, "clients"), client_lines(r.c))
        assert r.c.ok("CLIENT", "KILL", "USER", "default", "SKIPME", "yes") == 0, kind
        assert info(r.c, "replication")["replica_announced"] == "1", kind
        r.c.ok("CONFIG", "SET", "replica-announced", "no")
        assert info(r.c, "replication")["replica_announced"] == "0", kind
        r.c.ok("CONFIG", "SET", "replica-announced", "yes")
        assert r.c.ok("CLIENT", "KILL", "ID", prim[0]["id"]) == 1, kind
        assert wait_for(lambda: int(info(p.c, "stats")["sync_partial_ok"]) == partial + 2, 20), kind
        # A partial resync brings the same client back (Redis resurrects its
        # cached master); its socket is a new one.
        assert wait_for(lambda: len(client_lines(r.c, "TYPE", "master")) == 1, 20), kind
        back = client_lines(r.c, "TYPE", "master")[0]
        assert back["id"] == prim[0]["id"] and back["laddr"] != prim[0]["laddr"], (kind, back, prim)
        in_sync(p, r)
        p.c.ok("SET", "after", "1")
        assert r.c.ok("CLIENT", "KILL", "TYPE", "master") == 1, kind
        assert wait_for(lambda: int(info(p.c, "stats")["sync_partial_ok"]) == partial + 3, 20), kind
        in_sync(p, r)
        assert r.c.ok("GET", "after") == b"1", kind
        new = [f for f in client_lines(p.c, "TYPE", "replica")]
        assert len(new) == 1 and new[0]["id"] != link["id"], (kind, new)
        assert p.c.ok("CLIENT", "KILL", "TYPE", "replica") == 1, kind
        r.stop()
        p.stop()


@test
def shutdown_waits_for_lagging_replicas():
    """SHUTDOWN waits (shutdown-timeout) while a replica is behind the
    stream: writes are held meanwhile, reads served; SHUTDOWN ABORT stops
    the wait (the SHUTDOWN gets an error, the held write then runs); a
    shutdown ends only once the replica has every write. The same
    assertions hold against redis-server 7.0."""
    for kind in ("goblin", "redis"):
        d = tdir("shutdown_" + kind)
        p = start(kind, os.path.join(d, "p"), *PRIMARY_ARGS)
        r = replica_of(kind, os.path.join(d, "r"), p.port)
        in_sync(p, r)
        e = p.c.call("SHUTDOWN", "ABORT")
        assert isinstance(e, Err) and "No shutdown in progress" in e.msg, (kind, e)
        assert "shutdown_in_milliseconds" not in info(p.c, "server"), kind
        os.kill(r.p.pid, signal.SIGSTOP)
        try:
            p.c.ok("SET", "k1", "v1")
            s = p.client()
            s.send("SHUTDOWN", "NOSAVE")
            time.sleep(0.5)
            assert p.alive(), kind
            assert p.client().ok("GET", "k1") == b"v1", kind
            # INFO says how long the shutdown may still wait (shutdown-timeout 10 s).
            left = int(info(p.client(), "server").get("shutdown_in_milliseconds", "-1"))
            assert 0 < left <= 10000, (kind, left)
            w = p.client()
            w.send("SET", "k2", "v2")
            w.sock.settimeout(0.3)
            try:
                held = w.read()
            except socket.timeout:
                held = None
            assert held is None, (kind, held)  # paused while the shutdown waits
            assert p.c.ok("SHUTDOWN", "ABORT") == b"OK", kind
            e = s.read()
            assert isinstance(e, Err) and "Errors trying to SHUTDOWN" in e.msg, (kind, e)
            w.sock.settimeout(10)
            assert w.read() == b"OK", kind
            p.c.ok("SET", "k3", "v3")
            s = p.client()
            s.send("SHUTDOWN", "NOSAVE")
            time.sleep(0.5)
            assert p.alive(), kind
        finally:
            os.kill(r.p.pid, signal.SIGCONT)
        assert wait_for(lambda: not p.alive(), 20), kind
        assert r.c.ok("GET", "k3") == b"v3" and r.c.ok("GET", "k2") == b"v2", kind
        assert "1 of 1 replicas are in sync when shutting down." in p.log_text(), (kind, p.log_tail(10))
        # A replica that never catches up holds a shutdown for
        # shutdown-timeout seconds at most.
        p = start(kind, os.path.join(d, "p2"), *PRIMARY_ARGS)
        r.c.ok("REPLICAOF", "127.0.0.1", str(p.port))
        in_sync(p, r)
        p.c.ok("CONFIG", "SET", "shutdown-timeout", "1")
        os.kill(r.p.pid, signal.SIGSTOP)
        try:
            p.c.ok("SET", "k4", "v4")
            t0 = time.time()
            p.c.send("SHUTDOWN", "NOSAVE")
            assert wait_for(lambda: not p.alive(), 20), kind
            assert 0.8 <= time.time() - t0 < 10, (kind, time.time() - t0)
            log = p.log_text()
            assert "Lagging replica" in log and "0 of 1 replicas are in sync when shutting down." in log, kind
        finally:
            os.kill(r.p.pid, signal.SIGCONT)
        r.stop()
        p.stop()


def stopped(pid):
    """Whether the process is stopped (SIGSTOP took effect): every thread of
    it, since the group stop reaches the threads one by one."""
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "T":
                    return False
        except FileNotFoundError:
            pass  # a thread that has just exited
    return True


@test
def shutdowns_from_several_clients_share_one_outcome():
    """Two clients send SHUTDOWN while a replica lags: both are blocked
    (INFO blocked_clients), and both get the error when the shutdown is
    aborted or fails (here on an AOF that still writes its first base),
    the failure logged as Redis logs it. Goblin and redis-server alike."""
    for kind in ("goblin", "redis"):
        for ending in ("abort", "fail"):
            d = tdir("shutdowns_%s_%s" % (kind, ending))
            p = start(kind, os.path.join(d, "p"), *PRIMARY_ARGS)
            r = replica_of(kind, os.path.join(d, "r"), p.port)
            in_sync(p, r)
            os.kill(r.p.pid, signal.SIGSTOP)
            try:
                # Stopped before the write, so that it cannot acknowledge it.
                assert wait_for(lambda: stopped(r.p.pid), 5), kind
                p.c.ok("INCR", "k")
                waiting = [p.client(), p.client()]
                for c in waiting:
                    c.send("SHUTDOWN")
                assert wait_for(lambda: info(p.c, "clients")["blocked_clients"] == "2", 5), \
                    (kind, info(p.c, "clients"))
                if ending == "abort":
                    assert p.c.ok("SHUTDOWN", "ABORT") == b"OK", kind
                else:
                    p.c.ok("CONFIG", "SET", "rdb-key-save-delay", "30000000")
                    p.c.ok("CONFIG", "SET", "appendonly", "yes")
            finally:
                os.kill(r.p.pid, signal.SIGCONT)
            for c in waiting:
                c.sock.settimeout(15)
                e = c.read()
                assert isinstance(e, Err) and e.msg == "ERR Errors trying to SHUTDOWN. Check logs.", (kind, ending, e)
            assert p.alive() and p.c.ok("GET", "k") == b"1", (kind, ending)
            assert info(p.c, "clients")["blocked_clients"] == "0", kind
            log = p.log_text()
            if ending == "abort":
                assert "Shutdown manually aborted." in log, (kind, p.log_tail(10))
            else:
                assert "Writing initial AOF, can't exit." in log and \
                    "Errors trying to shut down the server. Check the logs for more information." in log, \
                    (kind, p.log_tail(10))
                p.c.ok("CONFIG", "SET", "rdb-key-save-delay", "0")
            p.stop()
            r.stop()


@test
def a_replica_that_cannot_persist_its_primarys_writes_stops():
    """replica-ignore-disk-write-errors: a replica whose AOF cannot be
    written applies its primary's writes only with yes (and logs that); with
    no, Redis's default, it stops at the next one."""
    d = tdir("diskerr")
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS)
    r = replica_of("goblin", os.path.join(d, "r"), p.port, "--appendonly", "yes")
    in_sync(p, r)
    r.c.ok("CONFIG", "SET", "replica-ignore-disk-write-errors", "yes")
    r.c.ok("DEBUG", "AOF-FAULT", "1000000", "1000000")
    p.c.ok("SET", "a", "1")
    assert wait_for(lambda: info(r.c, "persistence")["aof_last_write_status"] == "err", 20), info(r.c, "persistence")
    p.c.ok("SET", "a2", "2")
    in_sync(p, r)
    assert r.c.ok("GET", "a2") == b"2"
    assert "applying a command even though it is unable to write to disk" in r.log_text()
    r.c.ok("CONFIG", "SET", "replica-ignore-disk-write-errors", "no")
    p.c.ok("SET", "b", "3")
    assert wait_for(lambda: not r.alive(), 20), "the replica still runs"
    assert "Replica was unable to write command to disk" in r.log_text()
    r.stop()
    p.stop()


@test
def a_replica_prefetches_the_keys_of_its_stream():
    """Over a large keyspace a replica reads the stream's commands ahead and
    prefetches their keys; the dataset it applies is the primary's."""
    d = tdir("prefetch")
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS)
    p.c.ok("DEBUG", "POPULATE", "80000", "key")
    r = replica_of("goblin", os.path.join(d, "r"), p.port)
    in_sync(p, r)
    before = int(info(r.c, "goblin")["keys_prefetched"])
    rng = random.Random(8)
    for _ in range(20):
        cmds = []
        for i in range(500):
            k = "key:%d" % rng.randrange(80000)
            cmds.append(["SET", k, "v%d" % i] if i % 3 else ["DEL", k])
        p.c.pipeline(cmds, check=False)
        in_sync(p, r)
        if int(info(r.c, "goblin")["keys_prefetched"]) > before:
            break
    assert int(info(r.c, "goblin")["keys_prefetched"]) > before, "the replica prefetched no key"
    assert digest(r) == digest(p)


@test
def a_restarted_replica_continues_from_its_dump():
    """A replica's dump keeps its primary's replication id and offset
    (repl-id, repl-offset aux fields): restarted, it continues with a
    partial resync; Goblin reads redis-server's dump fields and writes its
    own the same way."""
    for replica_kind in ("goblin", "redis"):
        d = tdir("restart_" + replica_kind)
        p = primary("goblin", d, *PRIMARY_ARGS)
        rd = os.path.join(d, "r")
        r = replica_of(replica_kind, rd, p.port)
        effect_form_writes(p.c, random.Random(6), 100)
        in_sync(p, r)
        r.c.ok("SAVE")
        r.stop()
        effect_form_writes(p.c, random.Random(7), 100)
        r = replica_of(replica_kind, rd, p.port)
        in_sync(p, r)
        assert digest(r) == digest(p)
        assert p.log_text().count("full resync") == 1, p.log_tail(20)
        assert "Partial resynchronization request from 127.0.0.1" in p.log_text()


@test
def a_restarted_primary_continues_its_stream():
    """A primary's dump keeps its own replication id and offset: restarted
    from it, it takes that id as its secondary one, valid up to the offset,
    and its replicas (Goblin and redis-server, one behind the other)
    continue with a partial resync, as with Redis 7.0; the keys that
    expired while it was down reach them as deletions."""
    d = tdir("primary_restart")
    pd = os.path.join(d, "p")
    p = primary("goblin", d, *PRIMARY_ARGS)
    r1 = replica_of("goblin", os.path.join(d, "r1"), p.port, *PRIMARY_ARGS)
    r2 = replica_of("redis", os.path.join(d, "r2"), r1.port)
    effect_form_writes(p.c, random.Random(8), 100)
    for i in range(20):
        p.c.ok("SET", "short:%d" % i, "v", "PX", "300")
    in_sync(p, r1)
    in_sync(r1, r2)

    def acked():
        i = info(p.c, "replication")
        return "offset=%s," % i["master_repl_offset"] in i.get("slave0", "")
    # Once r1 has acknowledged everything, SHUTDOWN has no replica to wait for
    # and sends no REPLCONF GETACK: the dump's offset is the one read here.
    assert wait_for(acked, 10), info(p.c, "replication")
    old_id = info(p.c, "replication")["master_replid"]
    old_off = offset(p)
    rc = p.shutdown("SAVE")
    assert rc == 0, rc
    time.sleep(0.4)
    p = start("goblin", pd, "--port", str(p.port), *PRIMARY_ARGS)
    i = info(p.c, "replication")
    assert i["master_replid2"] == old_id and i["master_replid"] != old_id, i
    assert int(i["second_repl_offset"]) == old_off + 1, (i, old_off)
    effect_form_writes(p.c, random.Random(9), 100)
    in_sync(p, r1)
    in_sync(r1, r2)
    assert digest(r1) == digest(p) and digest(r2) == digest(p), (digest_diff(p, r1), digest_diff(p, r2))
    sizes = [s.c.ok("DBSIZE") for s in (p, r1, r2)]
    assert sizes[0] == sizes[1] == sizes[2], sizes
    assert r1.c.ok("EXISTS", "short:0") == 0
    stats = info(p.c, "stats")
    assert stats["sync_partial_ok"] == "1" and stats["sync_full"] == "0", stats
    assert "Partial resynchronization request from 127.0.0.1" in p.log_text(), p.log_tail(20)


@test
def a_signal_after_shutdown_does_not_save_again():
    """SHUTDOWN NOW SAVE, then a SIGTERM while the server exits (as a
    supervisor might send): one final save, at the stream's offset, and no
    second shutdown (which would ask the replica for an ACK and save a later
    offset); the restart continues the stream where it was."""
    d = tdir("signal_after_shutdown")
    pd = os.path.join(d, "p")
    p = primary("goblin", d, *PRIMARY_ARGS)
    r = replica_of("goblin", os.path.join(d, "r"), p.port)
    effect_form_writes(p.c, random.Random(11), 50)
    in_sync(p, r)
    off = offset(p)
    p.c.send("SHUTDOWN", "NOW", "SAVE")
    assert wait_for(lambda: "User requested shutdown..." in p.log_text(), 10), p.log_tail()
    if p.alive():
        p.p.send_signal(signal.SIGTERM)
    p.p.wait(10)
    assert p.log_text().count("Saving the final RDB snapshot before exiting.") == 1, p.log_tail(12)
    p = start("goblin", pd, "--port", str(p.port), *PRIMARY_ARGS)
    i = info(p.c, "replication")
    assert int(i["second_repl_offset"]) == off + 1, (i, off)


@test
def replicaof_follows_into_config_get_and_rewrite():
    """CONFIG GET replicaof shows the primary REPLICAOF set and CONFIG
    REWRITE writes it, or drops the line on a primary, as Redis does:
    Sentinel rewrites the config of a node it reconfigured so that a
    restart keeps the role."""
    for kind in ("redis", "goblin"):
        d = tdir("rewrite_replicaof_" + kind)
        os.makedirs(d, exist_ok=True)
        conf = os.path.join(d, "node.conf")
        with open(conf, "w") as f:
            f.write("replicaof 127.0.0.1 1\n")

        def replicaof_lines():
            with open(conf) as f:
                return [ln.strip() for ln in f if ln.startswith(("replicaof", "slaveof"))]
        s = start(kind, d, conf)
        assert s.c.ok("CONFIG", "GET", "replicaof") == [b"replicaof", b"127.0.0.1 1"], kind
        s.c.ok("REPLICAOF", "127.0.0.1", "2")
        assert s.c.ok("CONFIG", "GET", "slaveof") == [b"slaveof", b"127.0.0.1 2"], kind
        s.c.ok("CONFIG", "REWRITE")
        assert replicaof_lines() == ["replicaof 127.0.0.1 2"], (kind, replicaof_lines())
        s.c.ok("REPLICAOF", "NO", "ONE")
        assert s.c.ok("CONFIG", "GET", "replicaof") == [b"replicaof", b""], kind
        s.c.ok("CONFIG", "REWRITE")
        assert replicaof_lines() == [], (kind, replicaof_lines())
        s.c.ok("REPLICAOF", "127.0.0.1", "3")
        s.c.ok("CONFIG", "REWRITE")
        s.stop()
        s = start(kind, d, conf)
        i = info(s.c, "replication")
        assert i["role"] == "slave" and i["master_port"] == "3", (kind, i)
        s.stop()


@test
def role_says_handshake_while_the_primary_delays_the_sync():
    """ROLE's link state of a replica whose PSYNC waits for the primary's
    delayed sync is "handshake", as Redis's."""
    for kind in ("redis", "goblin"):
        d = tdir("handshake_" + kind)
        p = start(kind, os.path.join(d, "p"), "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "1000")
        r = replica_of(kind, os.path.join(d, "r"), p.port)
        assert wait_for(lambda: r.c.ok("ROLE")[3] == b"handshake", 10), (kind, r.c.ok("ROLE"))
        r.stop()
        p.stop()


@test
def redis_cli_functions_rdb_and_replica_mode():
    """REPLCONF rdb-filter-only (Redis 7.0): redis-cli --functions-rdb gets
    an RDB with the function libraries and no keys, redis-cli --replica an
    empty RDB and then the stream; bad filters get Redis's errors."""
    lib = "#!lua name=clilib\nredis.register_function('f1', function() return 1 end)"
    for kind in ("redis", "goblin"):
        d = tdir("clirdb_" + kind)
        p = start(kind, os.path.join(d, "p"), *PRIMARY_ARGS)
        p.c.ok("SET", "a", "1")
        p.c.ok("FUNCTION", "LOAD", lib)
        e = p.c.call("REPLCONF", "rdb-filter-only", "functions foo")
        assert isinstance(e, Err) and e.msg == "ERR Unsupported rdb-filter-only option: foo", (kind, e)
        e = p.c.call("REPLCONF", "rdb-only", "2")
        assert isinstance(e, Err) and e.msg == "ERR value is out of range, value must between 0 and 1", (kind, e)
        os.makedirs(os.path.join(d, "q"), exist_ok=True)
        out = os.path.join(d, "q", "dump.rdb")
        subprocess.run(["redis-cli", "-p", str(p.port), "--functions-rdb", out], check=True, capture_output=True,
                       timeout=30)
        q = start(kind, os.path.join(d, "q"))
        assert q.c.ok("DBSIZE") == 0, kind
        assert q.c.ok("FUNCTION", "LIST")[0][1] == b"clilib", kind
        q.stop()
        cli = subprocess.Popen(["redis-cli", "-p", str(p.port), "--replica"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
        try:
            time.sleep(0.5)
            p.c.ok("SET", "b", "2")
            time.sleep(0.5)
        finally:
            cli.kill()
        text = cli.communicate()[0].decode(errors="replace")
        assert "SYNC done" in text and "Logging commands from master." in text, (kind, text)
        # Redis 7.0 sends a filtered RDB diskless and then waits for an ACK
        # that redis-cli does not send before it streams; Goblin streams.
        if kind == "goblin":
            assert '"SET","b","2"' in text, text
        p.stop()


def resp_cmd(*args):
    return encode(args)


def read_psync_rdb(f):
    """The +FULLRESYNC line and the RDB after it ($<len> or $EOF:<mark>
    framing) from a raw replica connection's reader; returns the RDB's
    bytes."""
    line = f.readline()
    assert line.startswith(b"+FULLRESYNC"), line
    line = f.readline()
    while line == b"\n":  # keepalive newlines before the bulk
        line = f.readline()
    assert line.startswith(b"$"), line
    if line.startswith(b"$EOF:"):
        mark, data = line[5:45], b""
        while not data.endswith(mark):
            chunk = f.read1(65536)
            assert chunk, "connection closed inside the RDB"
            data += chunk
        return data[:-40]
    return f.read(int(line[1:]))


@test
def rdb_only_gets_the_rdb_and_then_the_link_closes():
    """REPLCONF rdb-only 1 (redis-cli --rdb): the client gets the RDB, none
    of the stream, and the primary closes the link after it; a filtered sync
    without the EOF capability is refused. Both servers, raw sockets."""
    for kind in ("redis", "goblin"):
        d = tdir("rdbonly_" + kind)
        p = start(kind, os.path.join(d, "p"), *PRIMARY_ARGS)
        p.c.ok("SET", "a", "1")
        s = socket.create_connection(("127.0.0.1", p.port))
        s.settimeout(10)
        f = s.makefile("rb")
        # Pipelined, the PSYNC finds the REPLCONF's reply still unsent.
        s.sendall(resp_cmd("REPLCONF", "rdb-filter-only", "") + resp_cmd("PSYNC", "?", "-1"))
        assert f.readline() == b"+OK\r\n", kind
        assert f.readline() == b"-ERR SYNC and PSYNC are invalid with pending output\r\n", kind
        s.sendall(resp_cmd("PSYNC", "?", "-1"))
        assert f.readline() == b"-ERR Filtered replica requires EOF capability\r\n", kind
        s.close()
        s = socket.create_connection(("127.0.0.1", p.port))
        s.settimeout(10)
        f = s.makefile("rb")
        for arg in ("capa", "eof"), ("rdb-only", "1"):
            s.sendall(resp_cmd("REPLCONF", *arg))
            assert f.readline() == b"+OK\r\n", kind
        s.sendall(resp_cmd("PSYNC", "?", "-1"))
        rdb = read_psync_rdb(f)
        assert rdb.startswith(b"REDIS") and b"a" in rdb, (kind, rdb[:40])
        p.c.ok("SET", "after", "x" * 64)
        rest = f.read()  # to the end of the connection
        assert b"after" not in rest and rest.strip(b"\n") == b"", (kind, rest[:80])
        assert wait_for(lambda: info(p.c, "replication")["connected_slaves"] == "0"), kind
        s.close()
        p.stop()


@test
def a_writable_replica_does_not_panic_on_its_primarys_errors():
    """propagation-error-behavior panic stops a read-only replica that
    fails a command of its primary's stream, not a writable one (its own
    writes may clash with the primary's), as Redis 7.0: the error is logged
    and counted."""
    lib = "#!lua name=clash\nredis.register_function('f', function() return 1 end)"
    for kind in ("redis", "goblin"):
        d = tdir("clash_" + kind)
        p = start(kind, os.path.join(d, "p"), *PRIMARY_ARGS)
        r = replica_of(kind, os.path.join(d, "r"), p.port, "--replica-read-only", "no",
                       "--propagation-error-behavior", "panic")
        in_sync(p, r)
        r.c.ok("FUNCTION", "LOAD", lib)
        p.c.ok("FUNCTION", "LOAD", lib)
        p.c.ok("SET", "after", "1")
        in_sync(p, r)
        assert r.alive() and r.c.ok("GET", "after") == b"1", kind
        assert info(r.c, "stats")["unexpected_error_replies"] == "1", kind
        r.stop()
        p.stop()


@test
def failover_command_both_ways():
    """FAILOVER (Redis 7.0's coordinated failover): the primary pauses
    writes, waits for the target to catch up, becomes its replica with
    PSYNC ... FAILOVER; the target promotes itself. Goblin -> goblin, and a
    redis-server primary failing over to a goblin replica."""
    for primary_kind in ("goblin", "redis"):
        d = tdir("failover_" + primary_kind)
        p = primary(primary_kind, d, *PRIMARY_ARGS)
        t = replica_of("goblin", os.path.join(d, "t"), p.port, *PRIMARY_ARGS)
        effect_form_writes(p.c, random.Random(8), 100)
        in_sync(p, t)
        if primary_kind == "goblin":
            e = p.c.call("FAILOVER", "TO", "127.0.0.1", "1")
            assert isinstance(e, Err) and e.msg == "ERR FAILOVER target HOST and PORT is not a replica.", e
            e = t.c.call("FAILOVER")
            assert isinstance(e, Err) and e.msg == "ERR FAILOVER is not valid when server is a replica.", e
        assert p.c.ok("FAILOVER", "TO", "127.0.0.1", str(t.port), "TIMEOUT", "5000") == b"OK"
        assert wait_for(lambda: info(t.c, "replication")["role"] == "master" and
                        info(p.c, "replication").get("master_link_status") == "up", 15), \
            (info(p.c, "replication"), info(t.c, "replication"))
        assert wait_for(lambda: info(p.c, "replication")["master_failover_state"] == "no-failover", 10)
        assert info(p.c, "replication")["master_port"] == str(t.port)
        t.c.ok("SET", "after", "failover")
        in_sync(t, p)
        assert digest(t) == digest(p)
        e = p.c.call("SET", "x", "1")
        assert isinstance(e, Err) and e.msg.startswith("READONLY"), e


@test
def failover_refused_by_the_target_is_aborted():
    """A target that refuses PSYNC (ACL -psync) aborts the FAILOVER: the
    primary stays one, logs Redis's reason, and its replica syncs again."""
    for kind in ("redis", "goblin"):
        d = tdir("failover_refused_" + kind)
        p = start(kind, os.path.join(d, "p"), *PRIMARY_ARGS)
        t = replica_of(kind, os.path.join(d, "t"), p.port)
        p.c.ok("SET", "a", "1")
        in_sync(p, t)
        t.c.ok("ACL", "SETUSER", "default", "-psync")
        assert p.c.ok("FAILOVER") == b"OK"
        assert wait_for(lambda: info(p.c, "replication")["master_failover_state"] == "no-failover", 10), kind
        assert info(p.c, "replication")["role"] == "master", kind
        want = "FAILOVER to 127.0.0.1:%d aborted: Failover target rejected psync request" % t.port
        assert want in p.log_text(), (kind, p.log_tail(10))
        t.c.ok("ACL", "SETUSER", "default", "+psync")
        p.c.ok("SET", "b", "2")
        in_sync(p, t)


@test
def a_stalled_link_times_out_and_recovers():
    """Nothing moves through the link for longer than repl-timeout: both
    sides close it; once it moves again the replica catches up."""
    d = tdir("stall")
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS, "--repl-timeout", "2", "--repl-ping-replica-period", "1")
    px = Proxy(p.port)
    px.start()
    r = replica_of("goblin", os.path.join(d, "r"), px.port, "--repl-timeout", "2")
    in_sync(p, r)
    px.stalled = True
    p.c.ok("SET", "during", "stall")
    assert wait_for(lambda: "Disconnecting timedout replica" in p.log_text() and
                    "MASTER timeout" in r.log_text(), 15), (p.log_tail(5), r.log_tail(5))
    px.cut()
    px.stalled = False
    in_sync(p, r)
    assert r.c.ok("GET", "during") == b"stall" and digest(r) == digest(p)


@test
def kill9_of_either_side_in_the_middle_of_a_sync():
    d = tdir("kill9")
    slow = {"GOBLIN_TEST_RDB_SAVE_SLOW_US": "2000"}
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS, env=slow)
    for i in range(0, 50000, 1000):
        p.c.ok("MSET", *[x for j in range(i, i + 1000) for x in ("k%d" % j, "v" * 50)])
    # The replica dies half-way: the primary's link and child go away.
    r = replica_of("goblin", os.path.join(d, "r"), p.port)
    assert wait_for(lambda: "Starting BGSAVE for SYNC" in p.log_text(), 10)
    # INFO shows the transfer, with Redis's fields.
    assert wait_for(lambda: int(info(r.c, "replication").get("master_sync_read_bytes", "0")) > 0, 10)
    i = info(r.c, "replication")
    assert i["master_sync_in_progress"] == "1" and "master_sync_last_io_seconds_ago" in i, i
    r.stop()
    assert wait_for(lambda: info(p.c, "replication")["connected_slaves"] == "0", 30), info(p.c, "replication")
    assert p.c.ok("SET", "still", "serving") == b"OK"
    # The primary dies half-way: the replica keeps its old data and, once a
    # primary is back on that port, syncs again.
    r = replica_of("goblin", os.path.join(d, "r2"), p.port)
    assert wait_for(lambda: p.log_text().count("Starting BGSAVE for SYNC") >= 2, 10)
    time.sleep(0.3)
    port = p.port
    p.stop()
    assert r.c.ok("PING") == b"PONG"
    assert info(r.c, "replication")["master_link_status"] == "down"
    p2 = start("goblin", os.path.join(d, "p2"), *PRIMARY_ARGS, "--port", str(port))
    p2.c.ok("SET", "new", "primary")
    in_sync(p2, r)
    assert digest(r) == digest(p2)


@test
def random_generator_load_on_two_cores_reaches_the_replicas():
    """Four clients pipeline the differential generator's commands (every
    family, TTLs of 1-50 ms and of hours, writing scripts) into a primary
    on --cores 2 with a goblin and a redis-server replica attached; once
    the expired keys are gone on the primary and the replicas caught up,
    all three have the same DEBUG DIGEST."""
    import test_aof_durability as dur  # its generator-driven load
    d = tdir("random")
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS, "--cores", "2")
    rg = replica_of("goblin", os.path.join(d, "rg"), p.port)
    rr = replica_of("redis", os.path.join(d, "rr"), p.port)
    in_sync(p, rg, rr)
    ws = [dur.Random(p.port, "repl", i, False) for i in range(4)]
    for w in ws:
        w.start()
    time.sleep(4.0)
    for w in ws:
        w.stop.set()
    for w in ws:
        w.join(60)
    assert not [w.error for w in ws if w.error or w.is_alive()]
    time.sleep(0.1)  # every short TTL is over
    dur.settle(p.c)  # the primary deleted them, and sent the DELs
    in_sync(p, rg, rr)
    want = digest(p)
    assert digest(rg) == want, ("goblin replica differs", digest_diff(p, rg))
    assert digest(rr) == want, ("redis replica differs", digest_diff(p, rr))
    print("    random: %d commands" % sum(w.cmds for w in ws), flush=True)


@test
def a_replica_with_aof_keeps_what_it_replicated():
    """appendonly yes on a replica: the full sync restarts its AOF from the
    loaded dataset and the applied stream is appended; restarted alone from
    its AOF it has the primary's digest."""
    d = tdir("replica_aof")
    p = primary("goblin", d, *PRIMARY_ARGS)
    rd = os.path.join(d, "r")
    r = replica_of("goblin", rd, p.port, "--appendonly", "yes")
    effect_form_writes(p.c, random.Random(9), 200)
    in_sync(p, r)
    want = digest(p)
    assert digest(r) == want
    # The AOF restarted from the synced dataset: its first base must be in
    # before a shutdown is allowed (as Redis: "Writing initial AOF").
    assert wait_for(lambda: info(r.c)["aof_rewrite_in_progress"] == "0" and
                    info(r.c)["aof_rewrites"] == "1", 20), info(r.c)
    assert r.shutdown("NOSAVE") == 0
    r = start("goblin", rd, "--appendonly", "yes")
    assert digest(r) == want


SET_REPL = ("redis.call('set','a','1'); redis.set_repl(redis.REPL_NONE); redis.call('set','b','2'); "
            "redis.set_repl(redis.REPL_AOF); redis.call('set','c','3'); redis.set_repl(redis.REPL_ALL); "
            "redis.call('set','d','4')")


@test
def a_script_chooses_where_its_writes_go():
    """redis.set_repl: a script's writes after REPL_NONE reach neither the
    AOF nor the replicas, after REPL_AOF only the AOF, after REPL_REPLICA
    only the replicas; the next script starts with REPL_ALL. Goblin and
    redis-server primaries, each with a replica of the other kind (the
    offsets must agree: a transaction with nothing for the replicas still
    reaches them as MULTI/EXEC, as Redis sends it)."""
    for pk, rk in (("goblin", "redis"), ("redis", "goblin")):
        d = tdir("set_repl_%s_%s" % (pk, rk))
        p = start(pk, os.path.join(d, "p"), "--appendonly", "yes", *PRIMARY_ARGS)
        r = replica_of(rk, os.path.join(d, "r"), p.port)
        in_sync(p, r)
        p.c.ok("EVAL", SET_REPL, 0)
        p.c.ok("EVAL", "redis.set_repl(redis.REPL_AOF); redis.call('set','e','5'); redis.call('incr','f')", 0)
        p.c.ok("EVAL", "redis.set_repl(redis.REPL_REPLICA); redis.call('set','g','6')", 0)
        p.c.ok("EVAL", "redis.call('set','h','7')", 0)
        in_sync(p, r)
        keys = ["a", "b", "c", "d", "e", "f", "g", "h"]
        assert p.c.ok("MGET", *keys) == [b"1", b"2", b"3", b"4", b"5", b"1", b"6", b"7"], pk
        assert r.c.ok("MGET", *keys) == [b"1", None, None, b"4", None, None, b"6", b"7"], (pk, r.c.ok("MGET", *keys))
        for script, want in (("redis.set_repl()", "redis.set_repl() requires two arguments."),
                             ("redis.set_repl(4)", "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
                                                   "REPL_ALL or REPL_NONE.")):
            e = p.c.call("EVAL", script, 0)
            assert isinstance(e, Err) and e.msg.startswith("ERR " + want), (pk, e)
        # The AOF holds what went to it: replayed, b and g are gone.
        assert p.c.ok("DEBUG", "LOADAOF") == b"OK"
        assert p.c.ok("MGET", *keys) == [b"1", None, b"3", b"4", b"5", b"1", None, b"7"], (pk, p.c.ok("MGET", *keys))
        r.stop()
        p.stop()


# ---- the fork-less full sync (versioned iteration) ------------------------

# The pass sleeps this long after each step (about 1,000 keys of a shard),
# so a sync of a few hundred thousand keys lasts seconds (no lock is held
# while it sleeps).
SLOW_PASS = {"GOBLIN_TEST_RDB_SAVE_SLOW_US": "5000"}
MIXED = 320000


def fill_mixed(c, n=MIXED):
    """About n keys: half strings (DEBUG POPULATE: key:0 ...), the rest
    hashes, lists, sets and sorted sets (fh:i, fl:i, fs:i, fz:i), a fifth of
    the collections with a TTL of an hour, plus dataset.py's every type
    and encoding in databases 0, 1 and 9."""
    dataset.build(c, big=True)
    c.ok("SELECT", "0")
    c.ok("DEBUG", "POPULATE", str(n // 2), "key", "20")
    per = n // 8
    for base in range(0, per, 2000):
        cmds = []
        for i in range(base, min(per, base + 2000)):
            cmds.append(["HSET", "fh:%d" % i, "a", str(i), "b", "x" * (i % 60)])
            cmds.append(["RPUSH", "fl:%d" % i, "1", "two", str(i)])
            cmds.append(["SADD", "fs:%d" % i, str(i), "m%d" % i])
            cmds.append(["ZADD", "fz:%d" % i, "1", "a", str(i), "b"])
            if i % 5 == 0:
                cmds.append(["EXPIRE", "fh:%d" % i, "3600"])
        c.pipeline(cmds)
    return per


class KeyWriter(threading.Thread):
    """Changes keys that exist before the sync (so that writers save old
    values): INCR, HSET, LPUSH, DEL, EXPIRE, SET, APPEND, MULTI/EXEC and
    EVAL, each a round trip."""

    def __init__(self, server, seed, per):
        super().__init__(daemon=True)
        self.c = server.client()
        self.rng = random.Random(seed)
        self.per, self.stop, self.n, self.error = per, False, 0, None

    def one(self):
        c, rng = self.c, self.rng
        i = rng.randrange(self.per)
        op = rng.randrange(11)
        if op == 0:
            c.ok("INCR", "cnt:%d" % rng.randrange(100))
        elif op == 1:
            c.ok("HSET", "fh:%d" % i, "w", str(self.n))
        elif op == 2:
            c.ok("LPUSH", "fl:%d" % i, str(self.n))
        elif op == 3:
            c.ok("DEL", "fs:%d" % i, "key:%d" % rng.randrange(self.per * 4))
        elif op == 4:
            c.ok("EXPIRE", "fz:%d" % i, str(rng.randrange(1000, 5000)))
        elif op == 5:
            c.ok("SET", "key:%d" % rng.randrange(self.per * 4), "new%d" % self.n)
        elif op == 6:
            c.ok("APPEND", "key:%d" % rng.randrange(self.per * 4), "+")
        elif op == 7:
            c.ok("MULTI")
            c.ok("HINCRBY", "fh:%d" % i, "a", "1")
            c.ok("ZINCRBY", "fz:%d" % i, "2", "b")
            c.ok("SELECT", "1")
            c.ok("SET", "moved:%d" % i, "x")
            c.ok("SELECT", "0")
            c.ok("EXEC")
        elif op == 8:
            c.ok("EVAL", "redis.call('sadd', KEYS[1], ARGV[1]); return redis.call('rpop', KEYS[2])", "2",
                 "fs:%d" % i, "fl:%d" % i, str(self.n))
        elif op == 9:
            # Another writer may rename the same key between the two calls.
            if c.ok("EXISTS", "fh:%d" % i):
                r = c.call("RENAME", "fh:%d" % i, "fhr:%d" % i)
                assert r == b"OK" or (isinstance(r, Err) and r.msg == "ERR no such key"), r
        else:
            c.ok("PERSIST", "fh:%d" % (i - i % 5))

    def run(self):
        try:
            while not self.stop:
                self.one()
                self.n += 1
        except Exception as e:  # noqa: BLE001
            self.error = e


class Pinger(threading.Thread):
    """PING and INCR in turn; gaps[i] = (end time, time since the reply
    before)."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.c = server.client()
        self.stop, self.gaps = False, []

    def run(self):
        last = time.monotonic()
        i = 0
        while not self.stop:
            if i % 2:
                self.c.ok("PING")
            else:
                self.c.ok("INCR", "ping:counter")
            i += 1
            now = time.monotonic()
            self.gaps.append((now, now - last))
            last = now

    def longest(self, t0, t1):
        return max([g for t, g in self.gaps if t0 <= t <= t1] or [0])


def link_up(r):
    return info(r.c, "replication").get("master_link_status") == "up"


def forkless_primary(d, *args, env=SLOW_PASS):
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS, "--arena-hugetlb", *args, env=env)
    per = fill_mixed(p.c)
    return p, per


@test
def forkless_sync_keeps_serving_writes():
    """--arena-hugetlb: a goblin and a redis-server replica attach at once
    while four clients change existing keys (the second sync waits for the
    first's snapshot); a client doing PING/INCR throughout never waits
    200 ms; both replicas end with the primary's digest; INFO shows what
    the writers saved and the buffer stayed within its bound."""
    d = tdir("forkless")
    p, per = forkless_primary(d)
    size = sum(int(v.split(",")[0].split("=")[1]) for v in info(p.c, "keyspace").values())
    ws = [KeyWriter(p, 10 + i, per) for i in range(4)]
    ping = Pinger(p)
    for w in ws + [ping]:
        w.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    rg = replica_of("goblin", os.path.join(d, "rg"), p.port)
    rr = replica_of("redis", os.path.join(d, "rr"), p.port)
    assert wait_for(lambda: link_up(rg), 120), info(rg.c, "replication")
    t1 = time.monotonic()
    assert wait_for(lambda: link_up(rr), 120), info(rr.c, "replication")
    t2 = time.monotonic()
    time.sleep(0.3)
    for w in ws:
        w.stop = True
    ping.stop = True
    for w in ws + [ping]:
        w.join(30)
    assert not [w.error for w in ws if w.error], [w.error for w in ws]
    in_sync(p, rg, rr, timeout=60)
    want = digest(p)
    assert digest(rg) == want, "goblin replica differs"
    assert digest(rr) == want, "redis replica differs"
    i = info(p.c, "replication")
    gap = ping.longest(t0, t2)
    print("    forkless: %d keys, syncs %.2fs and %.2fs, %d writes, longest client gap %.1f ms, "
          "writers saved %s keys, buffer peak %s bytes" %
          (size, t1 - t0, t2 - t1, sum(w.n for w in ws), gap * 1000,
           i["forkless_sync_keys_saved_by_writers"], i["forkless_sync_buffer_peak"]), flush=True)
    assert t1 - t0 > 1.0, "the sync was too short to tell (%.2fs)" % (t1 - t0)
    assert gap < 0.2, "a client waited %.0f ms during the sync" % (gap * 1000)
    for f in ("forkless_sync_in_progress", "forkless_sync_buffer_bytes", "forkless_sync_buffer_peak",
              "forkless_sync_buffer_limit", "forkless_sync_keys_saved", "forkless_sync_keys_saved_by_writers",
              "forkless_sync_writer_flushes", "forkless_syncs_started", "forkless_syncs_failed"):
        assert f in i, (f, i)
    assert i["forkless_sync_in_progress"] == "0" and i["forkless_syncs_started"] == "2", i
    assert i["forkless_syncs_failed"] == "0", i
    assert int(i["forkless_sync_keys_saved_by_writers"]) > 0, i
    assert int(i["forkless_sync_buffer_peak"]) <= int(i["forkless_sync_buffer_limit"]) + (1 << 20), i
    log = p.log_text()
    assert log.count("(fork-less: versioned iteration)") == 2, p.log_tail()


@test
def forkless_sync_aborted_then_done_again():
    """A replica killed in the middle of a fork-less sync: the primary ends
    the snapshot (marks only) and keeps serving; the next sync (to a file
    this time: repl-diskless-sync no) gives a replica the primary's digest,
    writes going on throughout. Then one command deleting 60,000 keys
    during a sync: the writers' buffer passes its 1 MiB bound and that
    writer writes it out itself."""
    d = tdir("forkless_abort")
    p, per = forkless_primary(d, "--repl-backlog-size", "1mb")
    ws = [KeyWriter(p, 20 + i, per) for i in range(2)]
    for w in ws:
        w.start()
    r1 = replica_of("goblin", os.path.join(d, "r1"), p.port)
    assert wait_for(lambda: int(info(p.c, "replication")["forkless_sync_keys_saved"]) > 50000, 30)
    assert info(p.c, "replication")["forkless_sync_in_progress"] == "1"
    r1.stop()
    assert wait_for(lambda: info(p.c, "replication")["forkless_syncs_failed"] == "1", 30), \
        info(p.c, "replication")
    assert wait_for(lambda: info(p.c, "replication")["forkless_sync_in_progress"] == "0", 30)
    assert p.c.ok("SET", "still", "serving") == b"OK"
    p.c.ok("CONFIG", "SET", "repl-diskless-sync", "no")
    r2 = replica_of("goblin", os.path.join(d, "r2"), p.port)
    assert wait_for(lambda: link_up(r2), 120), info(r2.c, "replication")
    for w in ws:
        w.stop = True
    for w in ws:
        w.join(30)
    assert not [w.error for w in ws if w.error], [w.error for w in ws]
    in_sync(p, r2, timeout=60)
    assert digest(r2) == digest(p)
    assert "Synchronization with replica 127.0.0.1:%d succeeded" % r2.port in p.log_text()
    # The bound: a third replica, and one DEL of 60,000 strings during its sync.
    r3 = replica_of("redis", os.path.join(d, "r3"), p.port)
    assert wait_for(lambda: info(p.c, "replication")["forkless_sync_in_progress"] == "1", 30)
    assert p.c.ok("DEL", *["key:%d" % j for j in range(60000, 120000)]) > 0
    assert wait_for(lambda: link_up(r3), 120), info(r3.c, "replication")
    in_sync(p, r2, r3, timeout=60)
    want = digest(p)
    assert digest(r2) == want and digest(r3) == want
    i = info(p.c, "replication")
    assert int(i["forkless_sync_writer_flushes"]) >= 1, i
    assert int(i["forkless_sync_buffer_peak"]) <= int(i["forkless_sync_buffer_limit"]) + (1 << 20), i


@test
def forkless_sync_with_whole_keyspace_commands():
    """During fork-less syncs: SWAPDB, MOVE, COPY ... DB REPLACE, FLUSHDB
    (the snapshot is completed first), SORT ... STORE and ZUNIONSTORE
    (movable keys), and keys with TTLs of 20 ms to 2 s expiring under the
    pass (saved before the db layer removes them): goblin and redis-server
    replicas end with the primary's digest."""
    d = tdir("forkless_whole")
    p, per = forkless_primary(d)
    rng = random.Random(5)
    for db in (2, 3):
        p.c.ok("SELECT", str(db))
        p.c.ok("DEBUG", "POPULATE", "20000", "db%d" % db, "10")
    p.c.ok("SELECT", "0")
    for base in range(0, 20000, 2000):
        p.c.pipeline([["SET", "ttl:%d" % i, "v", "PX", str(rng.randrange(20, 2000))] for i in range(base, base + 2000)])

    def whole(c, n):
        c.ok("SWAPDB", "2", "3")
        c.ok("MOVE", "key:%d" % (n * 7), "4")
        c.ok("COPY", "key:%d" % (n * 7 + 1), "db2:%d" % n, "DB", "2", "REPLACE")
        c.ok("SORT", "fl:%d" % n, "ALPHA", "STORE", "fz:%d" % (n + 1))
        c.ok("ZUNIONSTORE", "fz:%d" % (n + 2), "2", "fz:%d" % (n + 3), "fz:%d" % (n + 4))
        c.ok("SELECT", "1")
        c.ok("SET", "db1:%d" % n, str(n))
        c.ok("SELECT", "0")

    ws = [KeyWriter(p, 30, per)]
    for w in ws:
        w.start()
    rg = replica_of("goblin", os.path.join(d, "rg"), p.port)
    assert wait_for(lambda: info(p.c, "replication")["forkless_sync_in_progress"] == "1", 30)
    for n in range(200):
        whole(p.c, n)
    assert wait_for(lambda: link_up(rg), 120), info(rg.c, "replication")
    rr = replica_of("redis", os.path.join(d, "rr"), p.port)
    assert wait_for(lambda: info(p.c, "replication")["forkless_sync_in_progress"] == "1", 30)
    for n in range(200, 300):
        whole(p.c, n)
    p.c.ok("SELECT", "3")
    p.c.ok("FLUSHDB")
    p.c.ok("SELECT", "0")
    for n in range(300, 350):
        whole(p.c, n)
    assert wait_for(lambda: link_up(rr), 120), info(rr.c, "replication")
    for w in ws:
        w.stop = True
    for w in ws:
        w.join(30)
    assert not [w.error for w in ws if w.error], [w.error for w in ws]
    time.sleep(2.1)  # every TTL is over: a lookup expires what is left and sends the DELs
    p.c.pipeline([["EXISTS", "ttl:%d" % i] for i in range(20000)], check=False)
    in_sync(p, rg, rr, timeout=60)
    want = digest(p)
    assert digest(rg) == want, "goblin replica differs"
    assert digest(rr) == want, "redis replica differs"
    assert info(p.c, "replication")["forkless_syncs_failed"] == "0"


# ---- repl-diskless-load and repl-diskless-sync-max-replicas ------------------

def temp_files(d):
    return [f for f in os.listdir(d) if f.startswith("temp-")]


def watch_temp_files(d, seen, stop):
    """Every temp-* name that shows up in d while stop is not set."""
    while not stop.is_set():
        seen.update(temp_files(d))
        time.sleep(0.005)


@test
def diskless_load_modes_from_goblin_and_redis_primaries():
    """A goblin replica with each repl-diskless-load (set with CONFIG SET
    before REPLICAOF) of a goblin and a redis-server primary, each sending
    the RDB both ways ($EOF: with repl-diskless-sync yes, $<len> with no):
    the same digest; socket loads write no temp file and say "to parser";
    on-empty-db over a non-empty dataset falls back to the file."""
    for pk in ("goblin", "redis"):
        for dsync in ("yes", "no"):
            d = tdir("dload_%s_%s" % (pk, dsync))
            p = primary(pk, d, *PRIMARY_ARGS, "--repl-diskless-sync", dsync)
            effect_form_writes(p.c, random.Random(11), 100)
            want = digest(p)
            for mode, prefill in (("disabled", False), ("on-empty-db", False), ("on-empty-db", True),
                                  ("swapdb", True)):
                rd = os.path.join(d, "r_%s_%d" % (mode, prefill))
                r = start("goblin", rd)
                if prefill:
                    r.c.ok("SET", "stale", "1")
                assert r.c.ok("CONFIG", "SET", "repl-diskless-load", mode) == b"OK"
                assert r.c.ok("CONFIG", "GET", "repl-diskless-load") == [b"repl-diskless-load", mode.encode()]
                seen, stop = set(), threading.Event()
                t = threading.Thread(target=watch_temp_files, args=(rd, seen, stop), daemon=True)
                t.start()
                r.c.ok("REPLICAOF", "127.0.0.1", str(p.port))
                in_sync(p, r)
                stop.set()
                t.join()
                what = (pk, dsync, mode, prefill)
                assert digest(r) == want, what
                log = r.log_text()
                socket_load = mode == "swapdb" or (mode == "on-empty-db" and not prefill)
                if socket_load:
                    assert "from master to parser" in log or "with EOF to parser" in log, (what, r.log_tail(10))
                    assert not seen, (what, seen)
                else:
                    assert "to disk" in log, (what, r.log_tail(10))
                if mode == "on-empty-db" and prefill:
                    assert "the dataset is not empty: loading through a file" in log
                framing = "EOF" if dsync == "yes" else "bytes"
                assert ("with EOF to" in log) == (framing == "EOF"), (what, r.log_tail(10))
                assert temp_files(rd) == [], what
                r.stop()


def slow_primary(d, keys=200000):
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS)
    p.c.ok("DEBUG", "POPULATE", str(keys), "key", "20")
    px = Proxy(p.port)
    px.start()
    px.slow = 0.01  # about 1.6 MB/s: the RDB of 200,000 keys takes seconds
    return p, px


@test
def swapdb_keeps_the_old_data_and_serves_it_while_the_same_history_loads():
    """swapdb over a slow link, as Redis 7.0 decides it. A first sync (the
    primary's history is new to the replica): -LOADING meanwhile (loading:1,
    async_loading:0), no temp file, and the link cut half-way leaves the old
    dataset. A later full sync of the same history (the replica fell out of
    the primary's backlog): the old data is served while the new one loads
    (async_loading:1, loading:0), and replaced when it is in."""
    d = tdir("swapdb")
    p, px = slow_primary(d)
    rd = os.path.join(d, "r")
    r = start("goblin", rd, "--repl-diskless-load", "swapdb")
    r.c.pipeline([["SET", "old:%d" % i, str(i)] for i in range(1000)])
    r.c.ok("REPLICAOF", "127.0.0.1", str(px.port))
    assert wait_for(lambda: info(r.c, "persistence")["loading"] == "1", 30), r.log_tail(10)
    seen, stop = set(), threading.Event()
    t = threading.Thread(target=watch_temp_files, args=(rd, seen, stop), daemon=True)
    t.start()
    ip = info(r.c, "persistence")
    assert ip["async_loading"] == "0" and "loading_loaded_bytes" in ip, ip
    e = r.c.call("GET", "old:7")
    assert isinstance(e, Err) and e.msg.startswith("LOADING"), e
    # Cut the link in the middle: the partial new dataset is discarded.
    px.refuse = True
    px.cut()
    assert wait_for(lambda: "Failed trying to load the MASTER synchronization DB from socket" in r.log_text(), 30), \
        r.log_tail(10)
    assert wait_for(lambda: info(r.c, "persistence")["loading"] == "0", 10)
    assert r.c.ok("DBSIZE") == 1000 and r.c.ok("GET", "old:999") == b"999"
    assert "the old dataset stays" in r.log_text()
    assert "Internal error in RDB reading" in r.log_text()  # Redis's line, which its tests wait for
    # Now let it through, at full speed.
    px.slow = 0
    px.refuse = False
    in_sync(p, r, timeout=60)
    stop.set()
    t.join()
    assert not seen, seen
    assert r.c.ok("GET", "old:7") is None and digest(r) == digest(p)
    # Out of the backlog while the link is down: the next sync is a full
    # one of the same history, served from the old data as it loads.
    p.c.ok("CONFIG", "SET", "repl-backlog-size", "16384")
    px.refuse = True
    px.cut()
    p.c.pipeline([["SET", "late:%d" % i, "x" * 100] for i in range(2000)])
    px.slow = 0.01
    px.refuse = False
    assert wait_for(lambda: info(r.c, "persistence")["async_loading"] == "1", 30), r.log_tail(10)
    ip = info(r.c, "persistence")
    assert ip["loading"] == "0", ip
    assert r.c.ok("GET", "key:7") == p.c.ok("GET", "key:7") and r.c.ok("EXISTS", "late:1") == 0
    e = r.c.call("CONFIG", "SET", "appendonly", "no")
    assert isinstance(e, Err) and e.msg.startswith("LOADING"), e
    e = r.c.call("REPLICAOF", "NO", "ONE")
    assert isinstance(e, Err) and e.msg.startswith("LOADING"), e
    px.slow = 0
    in_sync(p, r, timeout=60)
    assert r.c.ok("EXISTS", "late:1") == 1 and digest(r) == digest(p)


@test
def on_empty_db_loads_from_the_socket_with_loading_set():
    """on-empty-db on an empty replica: the socket load answers -LOADING
    and INFO says loading:1 meanwhile (as Redis)."""
    d = tdir("onempty")
    p, px = slow_primary(d, keys=100000)
    r = start("goblin", os.path.join(d, "r"), "--repl-diskless-load", "on-empty-db")
    r.c.ok("REPLICAOF", "127.0.0.1", str(px.port))
    assert wait_for(lambda: info(r.c, "persistence")["loading"] == "1", 30), r.log_tail(10)
    e = r.c.call("GET", "key:1")
    assert isinstance(e, Err) and e.msg.startswith("LOADING"), e
    assert info(r.c, "persistence")["async_loading"] == "0"
    px.slow = 0
    in_sync(p, r, timeout=60)
    assert digest(r) == digest(p)


def swapdb_replica_takes_both_framings(kind, name, seed, *primary_args):
    """A replica of kind with repl-diskless-load swapdb (holding a stale
    key) syncs from a goblin primary sending $EOF: and then $<len>:, loads
    from the socket and ends with the primary's digest."""
    for dsync in ("yes", "no"):
        d = tdir(name + dsync)
        p = primary("goblin", d, *PRIMARY_ARGS, *primary_args, "--repl-diskless-sync", dsync)
        r = start(kind, os.path.join(d, "r"), "--repl-diskless-load", "swapdb")
        r.c.ok("SET", "stale", "1")
        r.c.ok("REPLICAOF", "127.0.0.1", str(p.port))
        effect_form_writes(p.c, random.Random(seed), 100)
        in_sync(p, r)
        assert digest(r) == digest(p), dsync
        assert "to parser" in r.log_text(), r.log_tail(10)


@test
def redis_replica_of_goblin_with_swapdb():
    """redis-server 7.0 with its own repl-diskless-load swapdb, replica of
    a goblin primary sending $EOF: and $<len>: same digest."""
    swapdb_replica_takes_both_framings("redis", "redis_swapdb_", 12)


@test
def swapdb_replica_of_a_forkless_primary():
    """--arena-hugetlb: the fork-less RDB (chunks of several databases
    interleaved) loads from the socket too, sent both ways."""
    swapdb_replica_takes_both_framings("goblin", "forkless_swapdb_", 13, "--arena-hugetlb")


@test
def diskless_sync_max_replicas_starts_early():
    """repl-diskless-sync-delay 5: with max-replicas 1 a replica's sync
    starts at once; with 2, the first waits until the second arrives, then
    both start before the delay is over."""
    d = tdir("maxrep")
    p = primary("goblin", d, "--repl-diskless-sync-delay", "5", "--repl-diskless-sync-max-replicas", "1")
    t0 = time.monotonic()
    r1 = replica_of("goblin", os.path.join(d, "r1"), p.port)
    assert wait_for(lambda: link_up(r1), 30)
    assert time.monotonic() - t0 < 3.0, time.monotonic() - t0
    assert "Starting the diskless sync early" in p.log_text()
    assert p.c.ok("CONFIG", "SET", "repl-diskless-sync-max-replicas", "2") == b"OK"
    t0 = time.monotonic()
    r2 = replica_of("goblin", os.path.join(d, "r2"), p.port)
    time.sleep(1.5)
    assert not link_up(r2)
    r3 = replica_of("redis", os.path.join(d, "r3"), p.port)
    assert wait_for(lambda: link_up(r2) and link_up(r3), 30)
    assert time.monotonic() - t0 < 4.5, time.monotonic() - t0
    in_sync(p, r1, r2, r3)
    want = digest(p)
    assert digest(r1) == want and digest(r2) == want and digest(r3) == want


@test
def replicas_within_the_delay_share_one_rdb():
    """Replicas that ask for a full sync within repl-diskless-sync-delay
    get one RDB from one fork, as from Redis (goblin and redis-server
    replicas together), while clients write; each takes the stream from
    the same offset and ends with the primary's dataset. One replica that
    goes away mid-transfer does not stop the others."""
    d = tdir("shared")
    p = primary("goblin", d, "--repl-diskless-sync-delay", "2", big=True)
    stop = threading.Event()

    def writer():
        c = Conn(p.port)
        i = 0
        while not stop.is_set():
            c.ok("SET", "w:%d" % (i % 500), i)
            c.ok("INCR", "w:count")
            i += 1
        c.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        rs = [replica_of("goblin", os.path.join(d, "r1"), p.port),
              replica_of("redis", os.path.join(d, "r2"), p.port),
              replica_of("goblin", os.path.join(d, "r3"), p.port)]
        gone = replica_of("goblin", os.path.join(d, "gone"), p.port)
        assert wait_for(lambda: "The diskless sync serves" in p.log_text(), 30), p.log_text()[-2000:]
        gone.stop()
        assert wait_for(lambda: all(link_up(r) for r in rs), 60)
    finally:
        stop.set()
        t.join()
    in_sync(p, *rs)
    want = digest(p)
    for r in rs:
        assert digest(r) == want, digest_diff(p, r)
    log = p.log_text()
    assert log.count("Starting BGSAVE for SYNC") == 1, log[-3000:]
    assert "The diskless sync serves 4 replicas with one RDB" in log, log[-3000:]
    assert int(info(p.c, "replication")["connected_slaves"]) == 3


@test
def an_expire_whose_time_passed_before_the_replica_applies_it():
    """A replica that applies PEXPIREAT (or GETEX PXAT, RESTORE ABSTTL)
    after its time has passed keeps the key with that time and waits for
    the primary's DEL, as Redis's checkAlreadyExpired: the primary ran it
    in time, and a PERSIST or a write that follows must find the key on
    the replica too. CLIENT PAUSE WRITE on the replicas holds the stream
    until the times are over."""
    d = tdir("late_expire")
    p = start("goblin", os.path.join(d, "p"), *PRIMARY_ARGS)
    rg = replica_of("goblin", os.path.join(d, "rg"), p.port)
    rr = replica_of("redis", os.path.join(d, "rr"), p.port)
    in_sync(p, rg, rr)
    for r in (rg, rr):
        assert r.c.ok("CLIENT", "PAUSE", 600, "WRITE") == b"OK"
    c = p.c
    c.ok("SET", "a", "v")
    c.ok("PEXPIRE", "a", 150)
    c.ok("PERSIST", "a")
    c.ok("SADD", "s", "x", "y")
    c.ok("PEXPIRE", "s", 150)
    c.ok("SUNIONSTORE", "u", "s")
    c.ok("PERSIST", "s")
    c.ok("SET", "g", "v")
    c.ok("GETEX", "g", "PX", 150)
    c.ok("APPEND", "g", "w")
    c.ok("PERSIST", "g")
    dump = c.ok("DUMP", "a")
    c.ok("RESTORE", "r", int(time.time() * 1000) + 150, dump, "ABSTTL")
    c.ok("PERSIST", "r")
    time.sleep(0.8)
    in_sync(p, rg, rr)
    want = digest(p)
    for name, r in (("goblin", rg), ("redis", rr)):
        assert digest(r) == want, (name, digest_diff(p, r))
    for k in ("a", "s", "u", "g", "r"):
        assert rg.c.ok("EXISTS", k) == 1 and rg.c.ok("PTTL", k) == -1, k


def main():
    return SUITE.main(ARGS)


if __name__ == "__main__":
    sys.exit(main())
