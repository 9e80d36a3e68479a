#!/usr/bin/env python3
"""Redis Cluster membership against redis-server 7.0, on loopback.

Single nodes in cluster mode answer the CLUSTER commands and the
redirections (-MOVED, -ASK, -CROSSSLOT, -TRYAGAIN, -CLUSTERDOWN) as a
redis-server 7.0.15 in cluster mode does, byte for byte where the reply is
deterministic; so do scripts and functions touching keys of other nodes or
of several slots. Then clusters: three goblin masters made by
`redis-cli --cluster create` converge and pass `--cluster check`, and
`redis-cli -c` follows MOVED; a mixed cluster (two goblin masters, one
redis master, then a redis replica of a goblin master and a goblin replica
of the redis master) converges with every node's CLUSTER NODES agreeing;
the goblin replica wins the election when the redis master dies; PUBLISH
and SPUBLISH reach subscribers on other nodes; nodes.conf brings a
restarted node back with its id, epochs and slots. Six goblin nodes
(three primaries, three replicas) made with --cluster-replicas 1 have 1,000
slots resharded under a client that writes and reads through MOVED/ASK,
then survive a kill -9 of a primary; three goblin and three redis-server
nodes are resharded both ways under load. With tls-cluster yes
(certificates made with the openssl CLI, tests/helpers/tlscerts.py): three
goblin masters made and checked by `redis-cli --tls --cluster`, `redis-cli
--tls -c` following MOVED, the ports a TLS and a plaintext client are told
(CLUSTER NODES/SLOTS/SHARDS, -MOVED) compared with a redis-server node of
the same cluster, and MIGRATE over TLS. redis-py RedisCluster, ioredis
Cluster and node-redis createCluster work against a mixed cluster;
`redis-cli --cluster` add-node, rebalance, fix (of an open slot) and
del-node on goblin nodes; cluster-link-sendbuf-limit frees the link to a
stopped node; a replica migrates to a master left without one; CLUSTER
FAILOVER, FAILOVER FORCE and TAKEOVER between goblin and redis-server nodes;
a replica with old data does not run for election.

  python3 tests/cluster/test_cluster.py [-v] [name-substring ...]

Ends with "cluster: N passed, M failed".
"""
import os
import re
import socket
import ssl
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "persist"))
from harness import ROOT, Conn, Err, Suite, wait_for  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "helpers"))
import tlscerts  # noqa: E402

TMP = os.path.join(ROOT, "tests", "tmp", "cluster.%d" % os.getpid())
VERBOSE = "-v" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "-v"]
SUITE = Suite("cluster", TMP, VERBOSE)
test, tdir = SUITE.test, SUITE.tdir
CLI = "/usr/bin/redis-cli"


def port_free(p):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()


_next = [20000 + (os.getpid() * 37) % 20000]


def cluster_port():
    """A client port whose bus port (+10000) is free too."""
    while True:
        _next[0] = 20000 + (_next[0] - 20000 + 7) % 30000
        p = _next[0]
        if port_free(p) and port_free(p + 10000):
            return p


def node(kind, d, *args):
    return SUITE.start(kind, d, "--port", str(cluster_port()), "--cluster-enabled", "yes",
                       "--cluster-node-timeout", "2000", *args)


def cli(*args, timeout=60):
    r = subprocess.run(["timeout", str(timeout), CLI] + [str(a) for a in args], capture_output=True)
    return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace")


def nodes_of(s):
    """CLUSTER NODES as {id: (addr, flags-without-myself, master, epoch, slots)}."""
    out = {}
    for line in s.c.ok("CLUSTER", "NODES").decode().splitlines():
        f = line.split(" ")
        flags = ",".join(x for x in f[2].split(",") if x != "myself")
        out[f[0]] = (f[1], flags, f[3], f[6], " ".join(f[8:]))
    return out


def converged(servers):
    views = [nodes_of(s) for s in servers]
    return all(v == views[0] for v in views) and len(views[0]) == len(servers)


def state_ok(s):
    return b"cluster_state:ok" in s.c.ok("CLUSTER", "INFO")


def create(servers, replicas=0):
    addrs = ["127.0.0.1:%d" % s.port for s in servers]
    rc, out = cli("--cluster", "create", *addrs, "--cluster-replicas", replicas, "--cluster-yes")
    assert rc == 0 and "[OK] All 16384 slots covered." in out, out
    assert wait_for(lambda: all(state_ok(s) for s in servers) and converged(servers), 30), \
        [s.c.ok("CLUSTER", "NODES") for s in servers]


# ---- single node: replies compared with redis-server -----------------------

SINGLE = [
    ("CLUSTER", "KEYSLOT", "foo"),
    ("CLUSTER", "KEYSLOT", "{user1000}.following"),
    ("CLUSTER", "KEYSLOT", "foo{}{bar}"),
    ("CLUSTER", "COUNTKEYSINSLOT", "12182"),
    ("CLUSTER", "COUNTKEYSINSLOT", "16384"),
    ("CLUSTER", "COUNTKEYSINSLOT", "x"),
    ("CLUSTER", "GETKEYSINSLOT", "12182", "10"),
    ("CLUSTER", "GETKEYSINSLOT", "12182", "-1"),
    ("CLUSTER", "GETKEYSINSLOT", "-1", "1"),
    ("CLUSTER", "ADDSLOTS", "16384"),
    ("CLUSTER", "ADDSLOTS", "1", "1"),
    ("CLUSTER", "ADDSLOTSRANGE", "5", "1"),
    ("CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"),
    ("CLUSTER", "DELSLOTS", "100"),
    ("CLUSTER", "DELSLOTSRANGE", "0", "10"),
    ("CLUSTER", "SETSLOT", "1", "MIGRATING", "0" * 40),
    ("CLUSTER", "SETSLOT", "1", "BOGUS"),
    ("CLUSTER", "SETSLOT", "99999", "STABLE"),
    ("CLUSTER", "SETSLOT", "1", "NODE", "abc"),
    ("CLUSTER", "FORGET", "abc"),
    ("CLUSTER", "REPLICATE", "abc"),
    ("CLUSTER", "REPLICAS", "abc"),
    ("CLUSTER", "COUNT-FAILURE-REPORTS", "abc"),
    ("CLUSTER", "FAILOVER"),
    ("CLUSTER", "FAILOVER", "BOGUS"),
    ("CLUSTER", "RESET", "BOGUS"),
    ("CLUSTER", "MEET", "nosuchhost", "7000"),
    ("CLUSTER", "MEET", "127.0.0.1", "x"),
    ("CLUSTER", "SET-CONFIG-EPOCH", "-1"),
    ("CLUSTER", "BOGUS"),
    ("CLUSTER", "INFO", "extra"),
    ("CLUSTER", "HELP"),
    ("CLUSTER", "SLOTS"),
    ("CLUSTER", "LINKS"),
    ("SELECT", "1"),
    ("SELECT", "0"),
    ("MOVE", "k", "1"),
    ("SWAPDB", "0", "1"),
    ("COPY", "a", "b", "DB", "1"),
    ("GET", "foo"),
    ("MSET", "a", "1", "b", "2"),
    ("READONLY",),
    ("READWRITE",),
    ("ASKING",),
]


@test
def single_node_replies_as_redis():
    g = node("goblin", tdir("g"))
    r = node("redis", tdir("r"))
    for cmd in SINGLE:
        a, b = g.c.call(*cmd), r.c.call(*cmd)
        assert a == b, "%s: goblin %r, redis %r" % (cmd, a, b)
    # With slots: keys counted and listed per slot, unowned slots refused.
    for s in (g, r):
        assert s.c.ok("CLUSTER", "ADDSLOTSRANGE", "0", "8191") == b"OK"
        assert s.c.ok("CLUSTER", "SET-CONFIG-EPOCH", "5") == b"OK"
    assert wait_for(lambda: state_ok(g) or True, 1)
    cmds = [("CLUSTER", "ADDSLOTS", "100"), ("CLUSTER", "DELSLOTS", "9000"), ("CLUSTER", "SET-CONFIG-EPOCH", "6"),
            ("CLUSTER", "BUMPEPOCH"), ("CLUSTER", "SETSLOT", "9000", "MIGRATING", "0" * 40),
            ("CLUSTER", "SETSLOT", "100", "IMPORTING", "0" * 40), ("CLUSTER", "FLUSHSLOTS")]
    for cmd in cmds[:-1]:
        a, b = g.c.call(*cmd), r.c.call(*cmd)
        assert a == b, "%s: goblin %r, redis %r" % (cmd, a, b)
    for s in (g, r):
        s.c.ok("CLUSTER", "ADDSLOTSRANGE", "8192", "16383")
    assert wait_for(lambda: state_ok(g) and state_ok(r), 10)
    for i in range(50):
        for s in (g, r):
            s.c.ok("SET", "{tag}%d" % i, i)
            s.c.ok("SET", "other%d" % i, i)
    slot = g.c.ok("CLUSTER", "KEYSLOT", "{tag}")
    for cmd in [("CLUSTER", "COUNTKEYSINSLOT", slot), ("CLUSTER", "COUNTKEYSINSLOT", 0),
                ("DBSIZE",), ("CLUSTER", "FLUSHSLOTS"), ("MSET", "a", "1", "b", "2"),
                ("MSET", "{t}a", "1", "{t}b", "2"), ("RPUSH", "{t}l", "2", "1"), ("SORT", "{t}l", "BY", "w*"),
                ("SORT", "{t}l", "GET", "#"), ("SORT", "{t}l", "BY", "nosort"), ("SORT", "{t}l"),
                ("CLUSTER", "SETSLOT", slot, "NODE", g.c.ok("CLUSTER", "MYID"))]:
        if cmd[-1] == g.c.ok("CLUSTER", "MYID"):
            b = r.c.call(*(cmd[:-1] + (r.c.ok("CLUSTER", "MYID"),)))
        else:
            b = r.c.call(*cmd)
        a = g.c.call(*cmd)
        assert a == b, "%s: goblin %r, redis %r" % (cmd, a, b)
    ga = sorted(g.c.ok("CLUSTER", "GETKEYSINSLOT", slot, 100))
    ra = sorted(r.c.ok("CLUSTER", "GETKEYSINSLOT", slot, 100))
    assert ga == ra and len(ga) == 50, (ga, ra)
    assert len(g.c.ok("CLUSTER", "GETKEYSINSLOT", slot, 7)) == 7
    info = g.c.ok("INFO", "cluster")
    assert b"cluster_enabled:1" in info, info
    # SHARDS and SLOTS have the same shape (ids and ports differ).
    def masked(x):
        if isinstance(x, list):
            return [masked(y) for y in x]
        if isinstance(x, bytes) and len(x) == 40:
            return b"<id>"
        return b"<port>" if x in (g.port, r.port) else x
    assert masked(g.c.ok("CLUSTER", "SHARDS")) == masked(r.c.ok("CLUSTER", "SHARDS"))
    gs, rs = g.c.ok("CLUSTER", "SLOTS"), r.c.ok("CLUSTER", "SLOTS")
    assert [x[:2] for x in gs] == [x[:2] for x in rs], (gs, rs)
    # Scripts and functions flagged no-cluster are refused in cluster mode.
    lib = ("#!lua name=cl\n"
           "redis.register_function{function_name='nc', callback=function() return 1 end, flags={'no-cluster'}}\n"
           "redis.register_function{function_name='ok', callback=function() return 2 end, flags={'no-writes'}}")
    for cmd in [("FUNCTION", "LOAD", lib), ("FCALL", "nc", "0"), ("FCALL", "ok", "0"), ("FCALL_RO", "nc", "0"),
                ("EVAL", "#!lua flags=no-cluster\nreturn 1", "0"), ("EVAL", "#!lua\nreturn 3", "0"),
                ("EVAL", "return 4", "0")]:
        a, b = g.c.call(*cmd), r.c.call(*cmd)
        assert a == b, "%s: goblin %r, redis %r" % (cmd, a, b)


@test
def scripts_keep_to_local_slots_as_redis():
    """Keys a script touches: owned slots only, one slot unless the script
    is flagged allow-cross-slot-keys; declared keys fix the slot."""
    g = node("goblin", tdir("g"), "--cluster-require-full-coverage", "no")
    r = node("redis", tdir("r"), "--cluster-require-full-coverage", "no")
    for s in (g, r):
        assert s.c.ok("CLUSTER", "ADDSLOTSRANGE", "0", "8191") == b"OK"
    assert wait_for(lambda: state_ok(g) and state_ok(r), 10)
    # b (slot 3300) and c (7365) are served here, a (15495) is not.
    lib = ("#!lua name=xs\n"
           "redis.register_function{function_name='two', callback=function(k) "
           "redis.call('set','b','1') return redis.call('set','c','2') end}\n"
           "redis.register_function{function_name='twox', callback=function(k) "
           "redis.call('set','b','1') return redis.call('set','c','2') end, flags={'allow-cross-slot-keys'}}")
    cmds = [
        ("EVAL", "return redis.call('set','b','1')", "0"),
        ("EVAL", "redis.call('set','b','1') return redis.call('set','c','2')", "0"),
        ("EVAL", "redis.call('get','b') return redis.call('get','c')", "0"),
        ("EVAL", "#!lua flags=allow-cross-slot-keys\nredis.call('set','b','1') return redis.call('set','c','2')", "0"),
        ("EVAL", "#!lua\nredis.call('set','b','1') return redis.call('set','c','2')", "0"),
        ("EVAL", "return redis.call('get',KEYS[1])", "1", "b"),
        ("EVAL", "return redis.call('get','c')", "1", "b"),
        ("EVAL", "return redis.call('get','a')", "0"),
        ("EVAL", "return redis.call('set','a','1')", "0"),
        ("EVAL", "#!lua flags=allow-cross-slot-keys\nreturn redis.call('get','a')", "0"),
        ("EVAL", "return redis.pcall('get','a')", "0"),
        ("EVAL", "local r = redis.pcall('set','c','1') return redis.call('get','b')", "1", "b"),
        ("EVAL", "return redis.call('mset','b','1','c','2')", "0"),
        ("EVAL", "return redis.call('get',KEYS[1])", "1", "a"),
        ("EVAL", "return 1", "2", "b", "c"),
        ("FUNCTION", "LOAD", lib),
        ("FCALL", "two", "0"),
        ("FCALL", "twox", "0"),
        ("FCALL", "two", "1", "b"),
        ("GET", "c"),
    ]
    for cmd in cmds:
        a, b = g.c.call(*cmd), r.c.call(*cmd)
        assert a == b, "%s: goblin %r, redis %r" % (cmd, a, b)


@test
def nodes_conf_survives_restart():
    d = tdir("n")
    g = node("goblin", d)
    myid = g.c.ok("CLUSTER", "MYID")
    g.c.ok("CLUSTER", "ADDSLOTSRANGE", "0", "99")
    g.c.ok("CLUSTER", "SET-CONFIG-EPOCH", "7")
    g.c.ok("CLUSTER", "SETSLOT", "5", "MIGRATING", myid)
    text = open(os.path.join(d, "nodes.conf")).read()
    assert re.search(r"^%s :%d@%d myself,master - 0 0 7 connected 0-99 \[5->-%s\]$" %
                     (myid.decode(), g.port, g.port + 10000, myid.decode()), text, re.M), text
    assert text.endswith("vars currentEpoch 7 lastVoteEpoch 0\n"), text
    port = g.port
    g.stop()
    g2 = SUITE.start("goblin", d, "--port", str(port), "--cluster-enabled", "yes")
    assert g2.c.ok("CLUSTER", "MYID") == myid
    line = g2.c.ok("CLUSTER", "NODES").decode()
    assert " 7 connected 0-99 [5->-" in line, line
    # A corrupt file stops start-up with Redis's message.
    g2.stop()
    with open(os.path.join(d, "nodes.conf"), "w") as f:
        f.write("garbage line\n")
    p = subprocess.run([os.path.join(ROOT, "build-release", "goblin-core"), "--port", str(port), "--cluster-enabled",
                        "yes", "--dir", d], capture_output=True, timeout=20)
    assert p.returncode != 0 and b"corrupted cluster config file" in p.stdout + p.stderr


# ---- clusters ---------------------------------------------------------------

@test
def three_goblin_masters():
    ns = [node("goblin", tdir("m%d" % i)) for i in range(3)]
    create(ns)
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % ns[1].port)
    assert rc == 0 and "[OK] All nodes agree about slots configuration." in out, out
    for i in range(200):
        rc, out = cli("-c", "-p", ns[0].port, "SET", "key:%d" % i, "v%d" % i)
        assert out.strip() == "OK", out
        if i > 20:
            break
    rc, out = cli("-c", "-p", ns[2].port, "GET", "key:3")
    assert out.strip() == "v3", out
    # Redirections straight from a node.
    slot = int(ns[0].c.ok("CLUSTER", "KEYSLOT", "foo"))
    owner = [s for s in ns if ("127.0.0.1:%d" % s.port).encode() in
             ns[0].c.ok("CLUSTER", "SLOTS")[[i for i, r in enumerate(ns[0].c.ok("CLUSTER", "SLOTS"))
                                              if r[0] <= slot <= r[1]][0]][2][0] + b":%d" % s.port]
    other = [s for s in ns if s.port != ns[0].port][0]
    r = other.c.call("GET", "foo")
    if isinstance(r, Err):
        assert re.match(r"MOVED %d 127\.0\.0\.1:\d+$" % slot, r.msg), r.msg
    assert ns[0].c.call("MGET", "a", "b").msg.startswith("CROSSSLOT") if isinstance(ns[0].c.call("MGET", "a", "b"), Err) else True
    # A transaction with a key served elsewhere: the EXEC is refused.
    c = other.client()
    for s in ns:
        mine = s
        break
    c.ok("MULTI")
    keys = ["k%d" % i for i in range(20)]
    wrong = [k for k in keys if isinstance(other.c.call("GET", k), Err)][0]
    q = c.call("SET", wrong, "1")
    assert isinstance(q, Err) and q.msg.startswith("MOVED"), q
    e = c.call("EXEC")
    assert isinstance(e, Err) and e.msg.startswith("EXECABORT"), e
    del owner, mine
    # CLUSTER SHARDS: three shards, each with its master.
    sh = ns[0].c.ok("CLUSTER", "SHARDS")
    assert len(sh) == 3


@test
def mixed_cluster_with_replicas_and_failover():
    g1, g2 = node("goblin", tdir("g1")), node("goblin", tdir("g2"))
    r1 = node("redis", tdir("r1"))
    create([g1, g2, r1])
    rr = node("redis", tdir("rr"))
    rc, out = cli("--cluster", "add-node", "127.0.0.1:%d" % rr.port, "127.0.0.1:%d" % g1.port, "--cluster-slave",
                  "--cluster-master-id", g1.c.ok("CLUSTER", "MYID").decode())
    assert rc == 0 and "[OK] New node added correctly." in out, out
    gr = node("goblin", tdir("gr"))
    rc, out = cli("--cluster", "add-node", "127.0.0.1:%d" % gr.port, "127.0.0.1:%d" % g1.port, "--cluster-slave",
                  "--cluster-master-id", r1.c.ok("CLUSTER", "MYID").decode())
    assert rc == 0, out
    allnodes = [g1, g2, r1, rr, gr]
    assert wait_for(lambda: converged(allnodes), 30), [s.c.ok("CLUSTER", "NODES") for s in allnodes]
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % g2.port)
    assert rc == 0 and "[OK] All nodes agree about slots configuration." in out, out
    # Data written through redis-cli -c lands on every master, and the
    # replicas follow.
    for i in range(30):
        cli("-c", "-p", g2.port, "SET", "m%d" % i, i)
    slot_r1 = [k for k in ("m%d" % i for i in range(30)) if not isinstance(r1.c.call("GET", k), Err)][0]
    ro = gr.client()
    assert ro.ok("READONLY") == b"OK"
    assert wait_for(lambda: ro.call("GET", slot_r1) is not None, 30)
    r = gr.c.call("GET", slot_r1)  # without READONLY: the master's
    assert isinstance(r, Err) and r.msg == "MOVED %d 127.0.0.1:%d" % (int(gr.c.ok("CLUSTER", "KEYSLOT", slot_r1)),
                                                                   r1.port), r
    # PUBLISH reaches subscribers on other nodes, SPUBLISH the shard.
    sub = gr.client()
    sub.ok("SUBSCRIBE", "news")
    assert g1.c.ok("PUBLISH", "news", "hello") == 0 or True
    got = sub.read()
    assert got == [b"message", b"news", b"hello"], got
    # The redis master dies: its goblin replica is elected.
    r1.stop()
    assert wait_for(lambda: b"myself,master" in gr.c.ok("CLUSTER", "NODES"), 30), gr.log_tail(20)
    assert wait_for(lambda: all(state_ok(s) for s in (g1, g2, rr, gr)), 30)
    assert "Failover election won" in gr.log_text()
    rc, out = cli("-c", "-p", g1.port, "GET", slot_r1)
    assert out.strip() != "", out
    live = [g1, g2, rr, gr]
    assert wait_for(lambda: len({tuple(sorted((k, v[1], v[4]) for k, v in nodes_of(s).items())) for s in live}) == 1,
                    20)


class ClusterLoad:
    """A client thread writing then reading back its own keys through a
    cluster, following MOVED (slot map refreshed), ASK (ASKING, then the
    command at the target) and TRYAGAIN (retried). Any other error, or a
    read that does not return what was written, is recorded as wrong."""

    def __init__(self, ports, prefix):
        import threading
        self.ports = list(ports)
        self.prefix = prefix
        self.conns = {}
        self.owner = {}
        self.written = {}
        self.wrong = []
        self.moved = self.ask = self.tryagain = 0
        self.stop_flag = False
        self.t = threading.Thread(target=self.run, daemon=True)

    def conn(self, port):
        if port not in self.conns:
            self.conns[port] = Conn(port, timeout=30)
        return self.conns[port]

    def call(self, key, *cmd):
        port = self.owner.get(key, self.ports[0])
        asking = False
        for _ in range(50):
            c = self.conn(port)
            if asking:
                c.call("ASKING")
            r = c.call(*cmd)
            asking = False
            if isinstance(r, Err):
                if r.msg.startswith("MOVED "):
                    self.moved += 1
                    port = int(r.msg.split(":")[-1])
                    self.owner[key] = port
                    continue
                if r.msg.startswith("ASK "):
                    self.ask += 1
                    port = int(r.msg.split(":")[-1])
                    asking = True
                    continue
                if r.msg.startswith("TRYAGAIN"):
                    self.tryagain += 1
                    time.sleep(0.01)
                    continue
            return r
        return Err("too many redirections")

    def run(self):
        try:
            self.loop()
        except Exception as e:  # a closed connection, a timeout: a failure too
            self.wrong.append(("exception", repr(e)))

    def loop(self):
        i = 0
        while not self.stop_flag:
            k = "%s:%d" % (self.prefix, i)
            v = "v%d" % i
            r = self.call(k, "SET", k, v)
            if r != b"OK":
                self.wrong.append(("SET", k, r))
            else:
                self.written[k] = v.encode()
            j = i // 2
            kj = "%s:%d" % (self.prefix, j)
            if kj in self.written:
                got = self.call(kj, "GET", kj)
                if got != self.written[kj]:
                    self.wrong.append(("GET", kj, got))
            i += 1

    def start(self):
        self.t.start()

    def finish(self):
        self.stop_flag = True
        self.t.join(60)


@test
def six_goblin_nodes_reshard_under_load_and_failover():
    """Three goblin primaries with a goblin replica each, made by redis-cli
    --cluster create --cluster-replicas 1; 1,000 slots resharded while a
    client writes and reads; kill -9 of a primary: its replica takes over,
    every key reads back, the old primary rejoins as a replica."""
    ns = [node("goblin", tdir("s%d" % i)) for i in range(6)]
    create(ns, replicas=1)
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % ns[0].port)
    assert rc == 0 and "[OK] All nodes agree about slots configuration." in out, out
    masters = [s for s in ns if b"myself,master" in s.c.ok("CLUSTER", "NODES")]
    assert len(masters) == 3, [s.c.ok("CLUSTER", "NODES") for s in ns]
    load = ClusterLoad([s.port for s in masters], "load")
    load.start()
    time.sleep(1)
    src, dst = masters[0], masters[1]
    rc, out = cli("--cluster", "reshard", "127.0.0.1:%d" % src.port, "--cluster-from", src.c.ok("CLUSTER", "MYID").decode(),
                  "--cluster-to", dst.c.ok("CLUSTER", "MYID").decode(), "--cluster-slots", "1000", "--cluster-yes",
                  timeout=300)
    time.sleep(1)
    load.finish()
    assert rc == 0, out[-2000:]
    assert not load.wrong, load.wrong[:10]
    assert len(load.written) > 500, len(load.written)
    assert load.moved > 0, "no MOVED seen during the reshard"
    assert wait_for(lambda: converged(ns), 30), [s.c.ok("CLUSTER", "NODES") for s in ns]
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % ns[0].port)
    assert rc == 0 and "[OK] All nodes agree about slots configuration." in out, out
    nslots = sum(int(x[1]) - int(x[0]) + 1 for x in dst.c.ok("CLUSTER", "SLOTS") if x[2][1] == dst.port)
    assert nslots >= 5461 + 1000 - 1, nslots
    # Everything written reads back, through redirections.
    check = ClusterLoad([s.port for s in masters], "load")
    for k, v in load.written.items():
        got = check.call(k, "GET", k)
        assert got == v, (k, got, v)
    # Replicas have what their primaries acknowledged.
    for m in masters:
        assert m.c.ok("WAIT", 1, 5000) >= 1
    # kill -9 of a primary: its replica is elected within a few node timeouts.
    victim = masters[2]
    vid = victim.c.ok("CLUSTER", "MYID").decode()
    replica = [s for s in ns if s not in masters and
               s.c.ok("CLUSTER", "NODES").decode().count("myself,slave %s" % vid)][0]
    port = victim.port
    victim.stop()
    t0 = time.time()
    assert wait_for(lambda: b"myself,master" in replica.c.ok("CLUSTER", "NODES"), 30), replica.log_tail(20)
    took = time.time() - t0
    assert took < 15, took
    live = [s for s in ns if s is not victim]
    assert wait_for(lambda: all(state_ok(s) for s in live), 30)
    newmasters = [m for m in masters if m is not victim] + [replica]
    check = ClusterLoad([s.port for s in newmasters], "load")
    for k, v in load.written.items():
        got = check.call(k, "GET", k)
        assert got == v, (k, got, v)
    # The old primary comes back from its nodes.conf as a replica of the
    # node that replaced it.
    back = SUITE.start("goblin", victim.dir, "--port", str(port), "--cluster-enabled", "yes",
                       "--cluster-node-timeout", "2000")
    rid = replica.c.ok("CLUSTER", "MYID").decode()
    assert wait_for(lambda: ("myself,slave %s" % rid) in back.c.ok("CLUSTER", "NODES").decode(), 30), \
        back.c.ok("CLUSTER", "NODES")
    assert wait_for(lambda: b"master_link_status:up" in back.c.ok("INFO", "replication"), 30)
    ro = back.client()
    ro.ok("READONLY")
    mine = [k for k in load.written if check.owner.get(k) == replica.port]
    assert mine, "no key on the new primary"
    assert wait_for(lambda: all(ro.call("GET", k) == load.written[k] for k in mine[:50]), 30)
    print("    reshard: %d keys written, %d MOVED, %d ASK, %d TRYAGAIN; failover in %.1f s" %
          (len(load.written), load.moved, load.ask, load.tryagain, took))


@test
def mixed_six_nodes_resharded_both_ways():
    """Three goblin and three redis-server nodes made into one cluster with
    replicas by redis-cli; slots resharded goblin -> redis and redis ->
    goblin under a writing client; --cluster check clean, nothing lost."""
    ns = [node("goblin" if i % 2 == 0 else "redis", tdir("x%d" % i)) for i in range(6)]
    create(ns, replicas=1)
    masters = [s for s in ns if b"myself,master" in s.c.ok("CLUSTER", "NODES")]
    assert len(masters) == 3
    gm = [m for m in masters if m.kind == "goblin"]
    rm = [m for m in masters if m.kind == "redis"]
    assert gm and rm, [m.kind for m in masters]
    load = ClusterLoad([s.port for s in masters], "mix")
    load.start()
    for a, b in ((gm[0], rm[0]), (rm[0], gm[0])):
        rc, out = cli("--cluster", "reshard", "127.0.0.1:%d" % a.port, "--cluster-from",
                      a.c.ok("CLUSTER", "MYID").decode(), "--cluster-to", b.c.ok("CLUSTER", "MYID").decode(),
                      "--cluster-slots", "300", "--cluster-yes", timeout=300)
        assert rc == 0, out[-2000:]
        # The nodes agree (by gossip) before redis-cli moves slots again.
        assert wait_for(lambda: converged(ns), 30), [s.c.ok("CLUSTER", "NODES") for s in ns]
    load.finish()
    assert not load.wrong, load.wrong[:10]
    assert len(load.written) > 300, len(load.written)
    for s in ns:
        rc, out = cli("--cluster", "check", "127.0.0.1:%d" % s.port)
        assert rc == 0 and "[OK] All nodes agree about slots configuration." in out, out
    check = ClusterLoad([s.port for s in masters], "mix")
    for k, v in load.written.items():
        got = check.call(k, "GET", k)
        assert got == v, (k, got, v)
    assert wait_for(lambda: converged(ns), 20)


@test
def replica_migrates_to_an_orphaned_master():
    """cluster-migration-barrier: a master whose only replica dies gets a
    replica from the master that has two (the one with the smallest name)."""
    ns = [node("goblin", tdir("o%d" % i)) for i in range(6)]
    create(ns, replicas=1)
    masters = [s for s in ns if b"myself,master" in s.c.ok("CLUSTER", "NODES")]
    rich, poor = masters[0], masters[1]
    extra = node("goblin", tdir("o6"))
    rc, out = cli("--cluster", "add-node", "127.0.0.1:%d" % extra.port, "127.0.0.1:%d" % rich.port, "--cluster-slave",
                  "--cluster-master-id", rich.c.ok("CLUSTER", "MYID").decode())
    assert rc == 0 and "[OK] New node added correctly." in out, out
    allnodes = ns + [extra]
    assert wait_for(lambda: converged(allnodes) and all(state_ok(s) for s in allnodes), 30)
    pid = poor.c.ok("CLUSTER", "MYID").decode()
    victim = [s for s in ns if ("myself,slave %s" % pid) in s.c.ok("CLUSTER", "NODES").decode()][0]
    victim.stop()
    live = [s for s in allnodes if s is not victim]
    rid = rich.c.ok("CLUSTER", "MYID").decode()
    rich_replicas = [s for s in live if ("myself,slave %s" % rid) in s.c.ok("CLUSTER", "NODES").decode()]
    assert len(rich_replicas) == 2

    def migrated():
        return [s for s in rich_replicas if ("myself,slave %s" % pid) in s.c.ok("CLUSTER", "NODES").decode()]
    assert wait_for(lambda: len(migrated()) == 1, 40), [s.c.ok("CLUSTER", "NODES") for s in live]
    mover = migrated()[0]
    assert "Migrating to orphaned master %s" % pid in mover.log_text()
    # It replicates its new master, and the barrier (1) kept the other.
    assert wait_for(lambda: b"master_port:%d" % poor.port in mover.c.ok("INFO", "replication") and
                    b"master_link_status:up" in mover.c.ok("INFO", "replication"), 30)
    assert len([s for s in rich_replicas if ("myself,slave %s" % rid) in s.c.ok("CLUSTER", "NODES").decode()]) == 1


@test
def manual_failover_default_force_takeover():
    """CLUSTER FAILOVER on a replica, coordinated with its master (no write
    lost), then FORCE and TAKEOVER; a goblin master with a redis-server
    replica and the other way round."""
    # The masters without replicas would draw one of m's two (replica
    # migration, tested above): here they stay.
    nomig = ("--cluster-allow-replica-migration", "no")
    ns = [node("goblin", tdir("f0"), *nomig), node("goblin", tdir("f1"), *nomig), node("goblin", tdir("f2"), *nomig)]
    create(ns)
    m = ns[0]
    reps = [node("redis", tdir("fr"), *nomig), node("goblin", tdir("fg"), *nomig)]
    for r in reps:
        rc, out = cli("--cluster", "add-node", "127.0.0.1:%d" % r.port, "127.0.0.1:%d" % m.port, "--cluster-slave",
                      "--cluster-master-id", m.c.ok("CLUSTER", "MYID").decode())
        assert rc == 0, out
    allnodes = ns + reps
    assert wait_for(lambda: converged(allnodes) and all(state_ok(s) for s in allnodes), 30)
    assert wait_for(lambda: all(b"master_link_status:up" in r.c.ok("INFO", "replication") for r in reps), 30)
    slot_keys = [k for k in ("fo:%d" % i for i in range(2000)) if m.c.call("GET", k) is None][:200]
    for k in slot_keys:
        assert m.c.ok("SET", k, k) == b"OK"

    def is_master(s):
        return b"myself,master" in s.c.ok("CLUSTER", "NODES")

    def check_all(owner):
        for k in slot_keys:
            assert owner.c.ok("GET", k) == k.encode(), k

    # Coordinated: the redis replica takes over from the goblin master.
    for who, mode in ((reps[0], ()), (m, ("FORCE",)), (reps[1], ("TAKEOVER",))):
        assert who.c.ok("CLUSTER", "FAILOVER", *mode) == b"OK"
        assert wait_for(lambda: is_master(who), 30), (mode, who.kind, who.c.ok("CLUSTER", "NODES"))
        assert wait_for(lambda: converged(allnodes) and all(state_ok(s) for s in allnodes), 30), mode
        check_all(who)
        # The others follow the new master.
        wid = who.c.ok("CLUSTER", "MYID").decode()
        others = [s for s in [m] + reps if s is not who]
        assert wait_for(lambda: all(("myself,slave %s" % wid) in s.c.ok("CLUSTER", "NODES").decode()
                                    for s in others), 30), (mode, [s.c.ok("CLUSTER", "NODES") for s in others])
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % ns[1].port)
    assert rc == 0 and "[OK] All nodes agree about slots configuration." in out, out


@test
def stale_replica_does_not_run_for_election():
    """cluster-replica-validity-factor: a replica whose link to its primary
    has been down for longer than ping period + node timeout x factor does
    not start an election when the primary dies (goblin and redis alike)."""
    for kind in ("goblin", "redis"):
        ms = [node(kind, tdir("%s-v%d" % (kind, i))) for i in range(3)]
        create(ms)
        r = node(kind, tdir(kind + "-vr"), "--cluster-replica-validity-factor", "1",
                 "--repl-ping-replica-period", "1")
        rc, out = cli("--cluster", "add-node", "127.0.0.1:%d" % r.port, "127.0.0.1:%d" % ms[0].port,
                      "--cluster-slave", "--cluster-master-id", ms[0].c.ok("CLUSTER", "MYID").decode())
        assert rc == 0, out
        allnodes = ms + [r]
        assert wait_for(lambda: converged(allnodes) and all(state_ok(s) for s in allnodes), 30)
        assert wait_for(lambda: b"master_link_status:up" in r.c.ok("INFO", "replication"), 30)
        # The replication link breaks (the primary refuses PSYNC and SYNC
        # from now on) while the bus stays up; its data grows old past
        # 1 s + 2 s x 1 beyond the 2 s node timeout.
        ms[0].c.ok("ACL", "SETUSER", "default", "-psync", "-sync")
        assert ms[0].c.ok("CLIENT", "KILL", "TYPE", "replica") == 1, kind
        assert wait_for(lambda: b"master_link_status:down" in r.c.ok("INFO", "replication"), 5)
        time.sleep(6)
        ms[0].stop()
        assert wait_for(lambda: "Disconnected from master for longer than allowed" in r.log_text(), 30), \
            (kind, r.log_tail(20))
        assert b"myself,slave" in r.c.ok("CLUSTER", "NODES"), kind
        assert "Failover election won" not in r.log_text(), kind
        for s in ms[1:] + [r]:
            s.stop()


@test
def link_sendbuf_limit_frees_a_stuck_link():
    """cluster-link-sendbuf-limit: a link to a node that stopped reading
    (SIGSTOP) is freed once its send buffer passes the limit, counted in
    CLUSTER INFO; the link comes back when the node runs again. Goblin and
    redis-server alike."""
    import signal as sig
    for kind in ("goblin", "redis"):
        a, b = node(kind, tdir(kind + "-la")), node(kind, tdir(kind + "-lb"))
        a.c.ok("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        a.c.ok("CLUSTER", "MEET", "127.0.0.1", b.port)
        assert wait_for(lambda: converged([a, b]) and state_ok(a), 20)
        assert a.c.ok("CONFIG", "SET", "cluster-link-sendbuf-limit", str(1 << 20)) == b"OK"
        b.p.send_signal(sig.SIGSTOP)
        try:
            big = "x" * 200000
            def exceeded():
                for _ in range(10):
                    a.c.ok("PUBLISH", "ch", big)
                info = a.c.ok("CLUSTER", "INFO").decode()
                return int(re.search(r"total_cluster_links_buffer_limit_exceeded:(\d+)", info).group(1)) >= 1
            assert wait_for(exceeded, 30), (kind, a.c.ok("CLUSTER", "INFO"))
            assert re.search(rb"mem_cluster_links:\d+", a.c.ok("INFO", "memory"))
        finally:
            b.p.send_signal(sig.SIGCONT)
        assert wait_for(lambda: converged([a, b]) and state_ok(a), 30), kind


@test
def cli_add_node_rebalance_fix_del_node():
    """redis-cli --cluster add-node (an empty goblin master), rebalance
    --cluster-use-empty-masters, fix of a slot left open, del-node."""
    ns = [node("goblin", tdir("t%d" % i)) for i in range(3)]
    create(ns)
    for i in range(300):
        cli("-c", "-p", ns[i % 3].port, "SET", "rb:%d" % i, i)
    extra = node("goblin", tdir("t3"))
    rc, out = cli("--cluster", "add-node", "127.0.0.1:%d" % extra.port, "127.0.0.1:%d" % ns[0].port)
    assert rc == 0 and "[OK] New node added correctly." in out, out
    allnodes = ns + [extra]
    # A node that just started turns its state ok no sooner than 2 s (as
    # Redis): the rebalance's MIGRATEs into it would get -CLUSTERDOWN.
    assert wait_for(lambda: converged(allnodes) and all(state_ok(s) for s in allnodes), 30)
    rc, out = cli("--cluster", "rebalance", "127.0.0.1:%d" % ns[0].port, "--cluster-use-empty-masters",
                  "--cluster-yes", timeout=300)
    assert rc == 0, out[-2000:]
    assert wait_for(lambda: converged(allnodes), 30)
    counts = [sum(int(r[1]) - int(r[0]) + 1 for r in s.c.ok("CLUSTER", "SLOTS") if r[2][1] == s.port)
              for s in allnodes]
    assert min(counts) >= 4000, counts
    # A slot left half-migrated (as a reshard interrupted would leave it):
    # check reports it, fix closes it.
    slot = int(ns[0].c.ok("CLUSTER", "KEYSLOT", "rb:1"))
    owner = [s for s in allnodes if any(r[0] <= slot <= r[1] and r[2][1] == s.port
                                        for r in s.c.ok("CLUSTER", "SLOTS"))][0]
    other = [s for s in allnodes if s is not owner][0]
    other.c.ok("CLUSTER", "SETSLOT", slot, "IMPORTING", owner.c.ok("CLUSTER", "MYID"))
    owner.c.ok("CLUSTER", "SETSLOT", slot, "MIGRATING", other.c.ok("CLUSTER", "MYID"))
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % owner.port)
    assert "The following slots are open: %d" % slot in out, out
    rc, out = cli("--cluster", "fix", "127.0.0.1:%d" % owner.port, "--cluster-yes", timeout=120)
    assert rc == 0, out[-2000:]
    assert wait_for(lambda: converged(allnodes), 30)
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % owner.port)
    assert rc == 0 and "[OK] All nodes agree about slots configuration." in out and "slots are open" not in out, out
    for i in range(300):
        rc, out = cli("-c", "-p", ns[0].port, "GET", "rb:%d" % i)
        assert out.strip() == str(i), (i, out)
    # del-node: the added master is emptied by a reshard, then removed.
    xid = extra.c.ok("CLUSTER", "MYID").decode()
    n = sum(int(r[1]) - int(r[0]) + 1 for r in extra.c.ok("CLUSTER", "SLOTS") if r[2][1] == extra.port)
    rc, out = cli("--cluster", "reshard", "127.0.0.1:%d" % ns[0].port, "--cluster-from", xid, "--cluster-to",
                  ns[0].c.ok("CLUSTER", "MYID").decode(), "--cluster-slots", n, "--cluster-yes", timeout=300)
    assert rc == 0, out[-2000:]
    assert wait_for(lambda: converged(allnodes), 30)
    rc, out = cli("--cluster", "del-node", "127.0.0.1:%d" % ns[0].port, xid)
    assert rc == 0 and "Sending CLUSTER RESET SOFT to the deleted node." in out, out
    # The deleted node forgot the cluster (CLUSTER RESET SOFT): only itself.
    assert wait_for(lambda: len(extra.c.ok("CLUSTER", "NODES").decode().strip().splitlines()) == 1, 10), \
        extra.c.ok("CLUSTER", "NODES")
    assert wait_for(lambda: converged(ns), 30), [s.c.ok("CLUSTER", "NODES") for s in ns]
    rc, out = cli("--cluster", "check", "127.0.0.1:%d" % ns[1].port)
    assert rc == 0 and "[OK] All 16384 slots covered." in out, out


PY_CLUSTER = r"""
import sys
from redis.cluster import RedisCluster, ClusterNode
rc = RedisCluster(startup_nodes=[ClusterNode('127.0.0.1', int(sys.argv[1]))], decode_responses=True)
for i in range(300):
    assert rc.set('py:%d' % i, 'v%d' % i)
assert all(rc.get('py:%d' % i) == 'v%d' % i for i in range(300))
p = rc.pipeline()
for i in range(100):
    p.incr('pyc:%d' % (i % 7))
p.execute()
assert sum(int(rc.get('pyc:%d' % i)) for i in range(7)) == 100
assert rc.mset_nonatomic({'{t}a': '1', 'b': '2'}) is not None
assert rc.get('{t}a') == '1' and rc.get('b') == '2'
print(len(rc.get_nodes()), 'nodes')
"""

IOREDIS_CLUSTER = r"""
const Redis = require('ioredis');
const c = new Redis.Cluster([{host: '127.0.0.1', port: +process.env.CLUSTER_PORT}]);
(async () => {
  for (let i = 0; i < 300; i++) await c.set('io:' + i, 'v' + i);
  for (let i = 0; i < 300; i++) if (await c.get('io:' + i) !== 'v' + i) throw new Error('io:' + i);
  const p = c.pipeline();
  for (let i = 0; i < 50; i++) p.incr('{io}n');
  await p.exec();
  if (await c.get('{io}n') !== '50') throw new Error('pipeline');
  console.log(c.nodes('master').length, 'masters');
  c.disconnect();
})().catch(e => { console.error(e); process.exit(1); });
"""

NODE_REDIS_CLUSTER = r"""
const { createCluster } = require('redis');
const c = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:' + process.env.CLUSTER_PORT }] });
c.on('error', e => { console.error(e); process.exit(1); });
(async () => {
  await c.connect();
  for (let i = 0; i < 300; i++) await c.set('nr:' + i, 'v' + i);
  for (let i = 0; i < 300; i++) if (await c.get('nr:' + i) !== 'v' + i) throw new Error('nr:' + i);
  const [a, b] = await c.multi().incr('{nr}x').incr('{nr}x').exec();
  if (b !== 2) throw new Error('multi ' + a + ' ' + b);
  console.log(c.masters.length, 'masters');
  await c.quit();
})().catch(e => { console.error(e); process.exit(1); });
"""


@test
def cluster_client_libraries():
    """redis-py's RedisCluster, ioredis's Cluster and node-redis's
    createCluster against two goblin masters and one redis-server master."""
    ns = [node("goblin", tdir("c0")), node("goblin", tdir("c1")), node("redis", tdir("c2"))]
    create(ns)
    port = ns[0].port
    r = subprocess.run(["/usr/bin/python3", "-c", PY_CLUSTER, str(port)], capture_output=True, timeout=120)
    assert r.returncode == 0 and b"3 nodes" in r.stdout, (r.stdout + r.stderr).decode()[-2000:]
    node_dir = os.path.join(ROOT, "tests", "clients", "node")
    mods = os.path.join(node_dir, "node_modules")
    written = 300  # by redis-py; the node clients add 300 each
    if not (os.path.isdir(os.path.join(mods, "ioredis")) and os.path.isdir(os.path.join(mods, "redis"))):
        print("    node parts skipped: tests/clients/node/node_modules lacks ioredis or redis "
              "(installed by tests/clients/run.sh, which make test runs first)", flush=True)
    else:
        for name, js in (("ioredis", IOREDIS_CLUSTER), ("node-redis", NODE_REDIS_CLUSTER)):
            r = subprocess.run(["node", "-e", js], capture_output=True, timeout=120, cwd=node_dir,
                               env=dict(os.environ, CLUSTER_PORT=str(port)))
            assert r.returncode == 0 and b"3 masters" in r.stdout, \
                "%s: %s" % (name, (r.stdout + r.stderr).decode()[-2000:])
            written += 300
    # Every node holds some of what the clients wrote (a third of it, give or take).
    for s in ns:
        assert s.c.ok("DBSIZE") > written // 6, (s.kind, s.c.ok("DBSIZE"), written)


@test
def ask_and_importing():
    a, b = node("goblin", tdir("a")), node("goblin", tdir("b"))
    a.c.ok("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    a.c.ok("CLUSTER", "MEET", "127.0.0.1", b.port)
    assert wait_for(lambda: converged([a, b]) and state_ok(a) and state_ok(b), 20)
    ida, idb = a.c.ok("CLUSTER", "MYID"), b.c.ok("CLUSTER", "MYID")
    slot = int(a.c.ok("CLUSTER", "KEYSLOT", "{s}"))
    a.c.ok("SET", "{s}here", "1")
    assert b.c.ok("CLUSTER", "SETSLOT", slot, "IMPORTING", ida) == b"OK"
    assert a.c.ok("CLUSTER", "SETSLOT", slot, "MIGRATING", idb) == b"OK"
    assert a.c.ok("GET", "{s}here") == b"1"
    r = a.c.call("GET", "{s}gone")
    assert isinstance(r, Err) and r.msg == "ASK %d 127.0.0.1:%d" % (slot, b.port), r
    r = a.c.call("MGET", "{s}here", "{s}gone")
    assert isinstance(r, Err) and r.msg == "TRYAGAIN Multiple keys request during rehashing of slot", r
    r = b.c.call("GET", "{s}gone")
    assert isinstance(r, Err) and r.msg.startswith("MOVED %d" % slot), r
    c = b.client()
    assert c.ok("ASKING") == b"OK"
    assert c.call("SET", "{s}gone", "2") == b"OK"
    r = c.call("GET", "{s}gone")  # ASKING held for one command only
    assert isinstance(r, Err) and r.msg.startswith("MOVED"), r
    # Keys moved by hand (DUMP/RESTORE), then the slot is handed over.
    dump = a.c.ok("DUMP", "{s}here")
    c.ok("ASKING")
    assert c.ok("RESTORE", "{s}here", 0, dump) == b"OK"
    a.c.ok("DEL", "{s}here")
    assert a.c.ok("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    assert b.c.ok("CLUSTER", "COUNTKEYSINSLOT", slot) == 2
    assert b.c.ok("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
    assert a.c.ok("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
    assert b.c.ok("GET", "{s}here") == b"1"
    assert wait_for(lambda: converged([a, b]), 20)
    r = a.c.call("GET", "{s}here")
    assert isinstance(r, Err) and r.msg == "MOVED %d 127.0.0.1:%d" % (slot, b.port), r


@test
def blocked_clients_follow_their_slot():
    """A client blocked (BLPOP) on a key whose slot is handed to another node
    gets -MOVED within a second or two and waits no more; one blocked on a
    slot that stays keeps waiting, and is served. Goblin and redis-server."""
    for kind in ("goblin", "redis"):
        a, b = node(kind, tdir(kind + "-ba")), node(kind, tdir(kind + "-bb"))
        a.c.ok("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        a.c.ok("CLUSTER", "MEET", "127.0.0.1", b.port)
        assert wait_for(lambda: converged([a, b]) and state_ok(a) and state_ok(b), 20)
        idb = b.c.ok("CLUSTER", "MYID")
        slot = int(a.c.ok("CLUSTER", "KEYSLOT", "{moving}q"))
        moving, staying = a.client(), a.client()
        moving.send("BLPOP", "{moving}q", "0")
        staying.send("BLPOP", "{staying}q", "0")
        assert wait_for(lambda: b"blocked_clients:2" in a.c.ok("INFO", "clients"), 5), kind
        assert b.c.ok("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
        assert a.c.ok("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
        moving.sock.settimeout(5)
        r = moving.read()
        assert isinstance(r, Err) and r.msg == "MOVED %d 127.0.0.1:%d" % (slot, b.port), (kind, r)
        assert wait_for(lambda: b"blocked_clients:1" in a.c.ok("INFO", "clients"), 5), kind
        a.c.ok("RPUSH", "{staying}q", "v")
        staying.sock.settimeout(5)
        assert staying.read() == [b"{staying}q", b"v"], kind
        for s in (a, b):
            s.stop()


@test
def migrate_between_goblin_and_redis():
    """MIGRATE moves a slot's keys goblin -> redis-server -> goblin with
    RESTORE-ASKING into the importing node, in both directions."""
    g, r = node("goblin", tdir("g")), node("redis", tdir("r"))
    g.c.ok("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    g.c.ok("CLUSTER", "MEET", "127.0.0.1", r.port)
    assert wait_for(lambda: converged([g, r]) and state_ok(g) and state_ok(r), 20)
    idg, idr = g.c.ok("CLUSTER", "MYID"), r.c.ok("CLUSTER", "MYID")
    slot = int(g.c.ok("CLUSTER", "KEYSLOT", "{m}"))
    g.c.ok("SET", "{m}s", "v", "PX", "100000")
    g.c.ok("RPUSH", "{m}l", "a", "b")
    g.c.ok("HSET", "{m}h", "f", "1")
    assert r.c.ok("CLUSTER", "SETSLOT", slot, "IMPORTING", idg) == b"OK"
    assert g.c.ok("CLUSTER", "SETSLOT", slot, "MIGRATING", idr) == b"OK"
    assert g.c.ok("MIGRATE", "127.0.0.1", r.port, "{m}s", 0, 5000) == b"OK"
    assert g.c.ok("MIGRATE", "127.0.0.1", r.port, "", 0, 5000, "KEYS", "{m}l", "{m}h") == b"OK"
    assert g.c.ok("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    c = r.client()
    c.ok("ASKING")
    assert 90000 <= c.ok("PTTL", "{m}s") <= 100000
    c.ok("ASKING")
    assert c.ok("LRANGE", "{m}l", 0, -1) == [b"a", b"b"]
    assert r.c.ok("CLUSTER", "COUNTKEYSINSLOT", slot) == 3
    # The slot is handed over; then redis-server migrates the keys back
    # into goblin, which imports the slot.
    assert r.c.ok("CLUSTER", "SETSLOT", slot, "NODE", idr) == b"OK"
    assert g.c.ok("CLUSTER", "SETSLOT", slot, "NODE", idr) == b"OK"
    assert r.c.ok("CLUSTER", "SETSLOT", slot, "MIGRATING", idg) == b"OK"
    assert g.c.ok("CLUSTER", "SETSLOT", slot, "IMPORTING", idr) == b"OK"
    assert r.c.ok("MIGRATE", "127.0.0.1", g.port, "", 0, 5000, "KEYS", "{m}s", "{m}l", "{m}h") == b"OK"
    assert r.c.ok("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    assert g.c.ok("CLUSTER", "COUNTKEYSINSLOT", slot) == 3
    c = g.client()
    c.ok("ASKING")
    assert c.ok("HGET", "{m}h", "f") == b"1"
    # A plain RESTORE into the importing slot is redirected, RESTORE-ASKING
    # is accepted there.
    c.ok("ASKING")
    dump = c.ok("DUMP", "{m}h")
    x = g.c.call("RESTORE", "{m}new", 0, dump)
    assert isinstance(x, Err) and x.msg.startswith("MOVED %d" % slot), x
    assert g.c.call("RESTORE-ASKING", "{m}new", 0, dump) == b"OK"
    assert g.c.ok("CLUSTER", "COUNTKEYSINSLOT", slot) == 4


@test
def migrate_standalone_goblin_and_redis():
    """Standalone: goblin migrates to a redis-server (SELECT, RESTORE) and back."""
    g = SUITE.start("goblin", tdir("sg"), "--port", str(cluster_port()))
    r = SUITE.start("redis", tdir("sr"), "--port", str(cluster_port()))
    g.c.ok("ZADD", "z", 1, "one", 2, "two")
    g.c.ok("SET", "t", "v", "EX", 100)
    assert g.c.ok("MIGRATE", "127.0.0.1", r.port, "", 3, 5000, "KEYS", "z", "t") == b"OK"
    assert g.c.ok("EXISTS", "z", "t") == 0
    c = r.client()
    c.ok("SELECT", 3)
    assert c.ok("ZRANGE", "z", 0, -1, "WITHSCORES") == [b"one", b"1", b"two", b"2"]
    assert 90 <= c.ok("TTL", "t") <= 100
    r2 = c.call("MIGRATE", "127.0.0.1", g.port, "z", 0, 5000)
    assert r2 == b"OK", r2
    r2 = c.call("MIGRATE", "127.0.0.1", g.port, "t", 0, 5000)
    assert r2 == b"OK", r2
    assert g.c.ok("ZSCORE", "z", "two") == b"2"
    assert 90 <= g.c.ok("TTL", "t") <= 100
    assert c.ok("DBSIZE") == 0


# ---- tls-cluster ------------------------------------------------------------

CERTS = os.path.join(TMP, "certs")


def cert(name):
    return os.path.join(CERTS, name)


def tls_node(kind, d, *args):
    """A cluster node with the bus and replication over TLS: a plaintext
    port (.port, the harness's) and a TLS one (.tls) whose bus port
    (+10000) is free."""
    tlscerts.make(CERTS)
    tls = cluster_port()
    s = node(kind, d, "--tls-port", str(tls), "--tls-cert-file", cert("server.crt"), "--tls-key-file",
             cert("server.key"), "--tls-ca-cert-file", cert("ca.crt"), "--tls-cluster", "yes",
             "--tls-replication", "yes", *args)
    s.tls = tls
    return s


def tls_cli(*args, timeout=60):
    return cli("--tls", "--cert", cert("client.crt"), "--key", cert("client.key"), "--cacert", cert("ca.crt"),
               *args, timeout=timeout)


def tls_conn(s):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(cert("ca.crt"))
    ctx.load_cert_chain(cert("client.crt"), cert("client.key"))
    c = Conn(s.tls, timeout=30.0)
    c.sock = ctx.wrap_socket(c.sock, server_hostname="localhost")
    return c


def tls_create(servers):
    rc, out = tls_cli("--cluster", "create", *["127.0.0.1:%d" % s.tls for s in servers], "--cluster-yes")
    assert rc == 0 and "[OK] All 16384 slots covered." in out, out
    assert wait_for(lambda: all(state_ok(s) for s in servers) and converged(servers), 30), \
        [s.c.ok("CLUSTER", "NODES") for s in servers]


@test
def tls_cluster_three_goblin_masters():
    """The bus over TLS: created and checked by redis-cli --tls, MOVED
    followed by redis-cli --tls -c; TLS clients are told the TLS ports,
    plaintext clients the plaintext ones; MIGRATE over TLS."""
    ns = [tls_node("goblin", tdir("t%d" % i)) for i in range(3)]
    tls_create(ns)
    rc, out = tls_cli("--cluster", "check", "127.0.0.1:%d" % ns[1].tls)
    assert rc == 0 and "[OK] All nodes agree about slots configuration." in out, out
    for i in range(10):
        rc, out = tls_cli("-c", "-p", ns[i % 3].tls, "SET", "key:%d" % i, "v%d" % i)
        assert out.strip() == "OK", out
    rc, out = tls_cli("-c", "-p", ns[0].tls, "GET", "key:7")
    assert out.strip() == "v7", out
    # The bus links are TLS: the bus port refuses a plaintext peer, and
    # nodes.conf keeps the announced (TLS) ports.
    by_port = {s.tls: s for s in ns}
    tc = tls_conn(ns[0])
    for line in tc.call("CLUSTER", "NODES").decode().splitlines():
        addr = line.split(" ")[1]
        port, cport = int(addr.split(":")[1].split("@")[0]), int(addr.split("@")[1])
        assert port in by_port and cport == port + 10000, line
    for line in ns[0].c.ok("CLUSTER", "NODES").decode().splitlines():
        port = int(line.split(" ")[1].split(":")[1].split("@")[0])
        assert port in [s.port for s in ns], line
    slot = int(ns[0].c.ok("CLUSTER", "KEYSLOT", "foo"))
    owner = [s for s in ns if int(s.c.ok("CLUSTER", "COUNTKEYSINSLOT", slot)) >= 0 and
             s.c.call("GET", "foo") is None][0]
    other = [s for s in ns if s is not owner][0]
    assert other.c.call("GET", "foo").msg == "MOVED %d 127.0.0.1:%d" % (slot, owner.port)
    assert tls_conn(other).call("GET", "foo").msg == "MOVED %d 127.0.0.1:%d" % (slot, owner.tls)
    sl = [r for r in tls_conn(other).call("CLUSTER", "SLOTS") if r[0] <= slot <= r[1]][0]
    assert sl[2][1] == owner.tls, sl
    sl = [r for r in other.c.ok("CLUSTER", "SLOTS") if r[0] <= slot <= r[1]][0]
    assert sl[2][1] == owner.port, sl
    # MIGRATE over TLS (to the target's TLS port) into the importing node;
    # to a plaintext port the connect fails (the handshake).
    owner.c.ok("SET", "foo", "bar")
    r = owner.c.call("MIGRATE", "127.0.0.1", other.port, "foo", 0, 1000)
    assert isinstance(r, Err) and r.msg == "IOERR error or timeout connecting to the client", r
    ido, idt = owner.c.ok("CLUSTER", "MYID"), other.c.ok("CLUSTER", "MYID")
    assert other.c.ok("CLUSTER", "SETSLOT", slot, "IMPORTING", ido) == b"OK"
    assert owner.c.ok("CLUSTER", "SETSLOT", slot, "MIGRATING", idt) == b"OK"
    assert owner.c.ok("MIGRATE", "127.0.0.1", other.tls, "foo", 0, 5000) == b"OK"
    c = other.client()
    c.ok("ASKING")
    assert c.ok("GET", "foo") == b"bar"
    assert owner.c.call("GET", "foo").msg == "ASK %d 127.0.0.1:%d" % (slot, other.port)
    assert tls_conn(owner).call("GET", "foo").msg == "ASK %d 127.0.0.1:%d" % (slot, other.tls)
    # The bus port speaks TLS only: a plaintext message gets no answer.
    s = socket.create_connection(("127.0.0.1", owner.tls + 10000), timeout=5)
    s.sendall(b"RCmb" + b"\0" * 2252)
    s.settimeout(5)
    try:
        got = s.recv(100)
    except OSError:
        got = b""
    assert got[:4] != b"RCmb", got
    assert owner.c.ok("PING") == b"PONG"


@test
def tls_cluster_mixed_with_redis():
    """Two goblin masters and a redis-server master with tls-cluster yes:
    the cluster converges and every node tells a TLS client and a
    plaintext client the same ports as the redis-server node does (CLUSTER
    NODES, SLOTS, SHARDS)."""
    g1, g2 = tls_node("goblin", tdir("tg1")), tls_node("goblin", tdir("tg2"))
    r1 = tls_node("redis", tdir("tr1"))
    ns = [g1, g2, r1]
    tls_create(ns)
    rc, out = tls_cli("--cluster", "check", "127.0.0.1:%d" % r1.tls)
    assert rc == 0 and "[OK] All nodes agree about slots configuration." in out, out

    def view(c, cmd):
        x = c.call("CLUSTER", cmd)
        if cmd == "NODES":  # ping/pong times and the myself flag differ
            return sorted(" ".join(f[:2] + [f[2].replace("myself,", "")] + f[3:4] + f[6:])
                          for f in (l.split(" ") for l in x.decode().splitlines()))
        if cmd == "SHARDS":  # replication offsets differ
            return sorted(str([[k, v] for k, v in zip(n[::2], n[1::2]) if k != b"replication-offset"]
                              for n in sh[3]) for sh in x)
        return sorted(str(r) for r in x)
    for cmd in ("NODES", "SLOTS", "SHARDS"):
        want_plain, want_tls = view(r1.c, cmd), view(tls_conn(r1), cmd)
        assert (want_plain == want_tls) == (cmd == "SHARDS")  # SHARDS shows both ports to all
        for g in (g1, g2):
            assert wait_for(lambda: view(g.c, cmd) == want_plain, 10), (cmd, view(g.c, cmd), want_plain)
            assert view(tls_conn(g), cmd) == want_tls, (cmd, view(tls_conn(g), cmd), want_tls)
    rc, out = tls_cli("-c", "-p", r1.tls, "SET", "foo", "1")
    assert out.strip() == "OK", out
    rc, out = tls_cli("-c", "-p", g1.tls, "GET", "foo")
    assert out.strip() == "1", out


def main():
    return SUITE.main(ARGS)


if __name__ == "__main__":
    sys.exit(main())
