#!/usr/bin/env python3
"""Redis Cluster on loopback: goblin-core nodes against redis-server 7.0 nodes.

Every node starts fresh in its own temporary directory with --save ""
(goblin with --cores 1: a node per core is how a cluster is laid out on
one machine), cluster-enabled yes and a node timeout of 2 s. The clusters
are made by `redis-cli --cluster create` (three primaries). Rounds alternate
which server goes first. Sections (--sections):

  throughput  redis-benchmark -t set,get -n N -c 50 -P 16 -r 1000000
              against one node owning every slot, then with --cluster
              against the three-primary cluster: requests per second of
              each and the ratio cluster / one node (the aggregate gain of
              three processes on this machine's cores).
  moved       the cost of a redirection: a client connected to the wrong
              node sends GET, gets -MOVED, sends it again to the owner; the
              same GET sent straight to the owner. Mean microseconds per
              request of each (--ops requests, one at a time), and the
              difference: what a MOVED costs a client that follows it.
  reshard     --keys keys written (spread over every slot), then
              `redis-cli --cluster reshard` moves --slots slots from one
              primary to another (--cluster-pipeline 100) while a probe
              client sends GETs of keys of the moving slots to the source,
              following ASK and MOVED: wall time per slot moved and the
              probe's largest and 99th-percentile latency during the
              reshard (a slot's keys are unavailable to a reader for no
              longer than that).

  python3 benchmarks/cluster_bench.py [--rounds 3] [--sections throughput,moved,reshard]
      [--n 300000] [--ops 20000] [--keys 200000] [--slots 200] [--json FILE]
  a quick look: --rounds 1 --n 100000 --ops 5000 --keys 50000 --slots 50

Standard library only.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tlb_arena_benchmark import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOBLIN = os.path.join(ROOT, "build-release", "goblin-core")
REDIS = "/usr/bin/redis-server"
CLI = "/usr/bin/redis-cli"
BENCH = "/usr/bin/redis-benchmark"


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(k):
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return crc16(k) % 16384


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.s.makefile("rb")

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t in (b"+", b"-"):
            return (t, rest)
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            d = self.f.read(n + 2)
            return d[:-2]
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("bad reply %r" % line)

    def call(self, *args):
        self.send(*args)
        return self.read()


class Node:
    def __init__(self, kind, cluster=True):
        self.kind = kind
        self.dir = tempfile.mkdtemp(prefix="cluster_bench.")
        self.port = free_port(bus_offset=10000)
        args = [GOBLIN, "--cores", "1"] if kind == "goblin" else [REDIS]
        args += ["--port", str(self.port), "--save", "", "--appendonly", "no", "--dir", self.dir]
        if cluster:
            args += ["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"]
        self.p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir)
        for _ in range(200):
            try:
                self.c = Conn(self.port)
                if self.c.call("PING") == (b"+", b"PONG"):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("%s did not start" % kind)

    def stop(self):
        self.p.kill()
        self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def make_cluster(kind, n=3):
    ns = [Node(kind) for _ in range(n)]
    r = subprocess.run(["timeout", "60", CLI, "--cluster", "create"] + ["127.0.0.1:%d" % x.port for x in ns] +
                       ["--cluster-yes"], capture_output=True)
    if b"[OK] All 16384 slots covered." not in r.stdout:
        raise RuntimeError(r.stdout.decode()[-1000:])
    deadline = time.time() + 30
    while time.time() < deadline:
        if all(b"cluster_state:ok" in x.c.call("CLUSTER", "INFO") for x in ns):
            break
        time.sleep(0.1)
    return ns


def owners(ns):
    """slot -> node, from CLUSTER SLOTS."""
    by_port = {x.port: x for x in ns}
    out = {}
    for r in ns[0].c.call("CLUSTER", "SLOTS"):
        for s in range(r[0], r[1] + 1):
            out[s] = by_port[r[2][1]]
    return out


def bench_rps(port, n, cluster):
    args = ["timeout", "600", BENCH, "-p", str(port), "-t", "set,get", "-n", str(n), "-c", "50", "-P", "16",
            "-r", "1000000", "-q"]
    if cluster:
        args.append("--cluster")
    out = subprocess.run(args, capture_output=True).stdout.decode()
    rps = {}
    for line in out.replace("\r", "\n").splitlines():
        if ":" in line and "requests per second" in line:
            name, rest = line.split(":", 1)
            rps[name.strip().lower()] = float(rest.split("requests per second")[0].split()[-1])
    return rps


def sec_throughput(kind, a):
    single = Node(kind)
    single.c.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    time.sleep(2.5)
    one = bench_rps(single.port, a.n, False)
    single.stop()
    ns = make_cluster(kind)
    three = bench_rps(ns[0].port, a.n, True)
    for x in ns:
        x.stop()
    return {"one": one, "cluster": three}


def sec_moved(kind, a):
    ns = make_cluster(kind)
    own = owners(ns)
    key = b"moved-key"
    owner = own[key_slot(key)]
    wrong = [x for x in ns if x is not owner][0]
    owner.c.call("SET", key, "v")
    cw, co = Conn(wrong.port), Conn(owner.port)
    direct, redirected = [], []
    for i in range(a.ops):
        t = time.perf_counter()
        r = cw.call("GET", key)
        assert r[0] == b"-" and r[1].startswith(b"MOVED"), r
        assert co.call("GET", key) == b"v"
        redirected.append(time.perf_counter() - t)
        t = time.perf_counter()
        assert co.call("GET", key) == b"v"
        direct.append(time.perf_counter() - t)
    for x in ns:
        x.stop()
    d, m = statistics.mean(direct) * 1e6, statistics.mean(redirected) * 1e6
    return {"direct_us": d, "moved_us": m, "cost_us": m - d}


def sec_reshard(kind, a):
    ns = make_cluster(kind)
    own = owners(ns)
    conns = {x.port: Conn(x.port) for x in ns}
    pend = {x.port: 0 for x in ns}
    for i in range(a.keys):
        k = b"rk:%d" % i
        p = own[key_slot(k)].port
        conns[p].send("SET", k, "x" * 32)
        pend[p] += 1
        if pend[p] >= 1000:
            for _ in range(pend[p]):
                conns[p].read()
            pend[p] = 0
    for p, n in pend.items():
        for _ in range(n):
            conns[p].read()
    src = own[0]
    dst = [x for x in ns if x is not src][0]
    src_slots = sorted(s for s, x in own.items() if x is src)[:a.slots]
    probe_keys = [b"rk:%d" % i for i in range(a.keys) if key_slot(b"rk:%d" % i) in set(src_slots)][:2000]
    lat, stop = [], [False]

    def probe():
        cs = {x.port: Conn(x.port) for x in ns}
        i = 0
        while not stop[0]:
            k = probe_keys[i % len(probe_keys)]
            i += 1
            port, asking = src.port, False
            t = time.perf_counter()
            for _ in range(10):
                if asking:
                    cs[port].call("ASKING")
                r = cs[port].call("GET", k)
                if isinstance(r, tuple) and r[0] == b"-":
                    if r[1].startswith(b"ASK") or r[1].startswith(b"MOVED"):
                        asking = r[1].startswith(b"ASK")
                        port = int(r[1].split(b":")[-1])
                        continue
                    if r[1].startswith(b"TRYAGAIN"):
                        time.sleep(0.001)
                        continue
                break
            lat.append(time.perf_counter() - t)

    th = threading.Thread(target=probe, daemon=True)
    th.start()
    time.sleep(0.3)
    t0 = time.time()
    r = subprocess.run(["timeout", "600", CLI, "--cluster", "reshard", "127.0.0.1:%d" % src.port,
                        "--cluster-from", src.c.call("CLUSTER", "MYID").decode(),
                        "--cluster-to", dst.c.call("CLUSTER", "MYID").decode(),
                        "--cluster-slots", str(a.slots), "--cluster-yes", "--cluster-pipeline", "100"],
                       capture_output=True)
    took = time.time() - t0
    stop[0] = True
    th.join(10)
    if r.returncode != 0:
        raise RuntimeError(r.stdout.decode()[-1000:])
    moved_keys = sum(1 for i in range(a.keys) if key_slot(b"rk:%d" % i) in set(src_slots))
    for x in ns:
        x.stop()
    lat.sort()
    return {"ms_per_slot": took * 1000 / a.slots, "keys_moved": moved_keys, "probe_max_ms": lat[-1] * 1000,
            "probe_p99_ms": lat[int(len(lat) * 0.99)] * 1000, "probe_requests": len(lat)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sections", default="throughput,moved,reshard")
    ap.add_argument("--n", type=int, default=300000)
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--keys", type=int, default=200000)
    ap.add_argument("--slots", type=int, default=200)
    ap.add_argument("--json")
    a = ap.parse_args()
    secs = {"throughput": sec_throughput, "moved": sec_moved, "reshard": sec_reshard}
    res = {}
    for rnd in range(a.rounds):
        kinds = ["goblin", "redis"] if rnd % 2 == 0 else ["redis", "goblin"]
        for sec in a.sections.split(","):
            for kind in kinds:
                r = secs[sec](kind, a)
                res.setdefault(sec, {}).setdefault(kind, []).append(r)
                print("round %d %-10s %-6s %s" % (rnd + 1, sec, kind, json.dumps(r)), flush=True)

    def med(sec, kind, *path):
        vals = []
        for r in res[sec][kind]:
            for p in path:
                r = r.get(p, {}) if isinstance(r, dict) else None
            if isinstance(r, (int, float)):
                vals.append(r)
        return statistics.median(vals) if vals else float("nan")

    print("\nmedians of %d rounds" % a.rounds)
    if "throughput" in res:
        for op in ("set", "get"):
            for kind in ("goblin", "redis"):
                one, cl = med("throughput", kind, "one", op), med("throughput", kind, "cluster", op)
                print("throughput %-3s %-6s one node %10.0f/s  three-primary cluster %10.0f/s  cluster/one %.2f" %
                      (op.upper(), kind, one, cl, cl / one))
            print("throughput %-3s cluster goblin/redis %.2f" % (op.upper(), med("throughput", "goblin", "cluster", op) /
                                                                    med("throughput", "redis", "cluster", op)))
    if "moved" in res:
        for kind in ("goblin", "redis"):
            print("moved  %-6s direct GET %.1f us  via MOVED %.1f us  a MOVED costs %.1f us" %
                  (kind, med("moved", kind, "direct_us"), med("moved", kind, "moved_us"), med("moved", kind, "cost_us")))
    if "reshard" in res:
        for kind in ("goblin", "redis"):
            print("reshard %-6s %.1f ms per slot (%d keys in %d slots)  probe p99 %.2f ms  max %.1f ms" %
                  (kind, med("reshard", kind, "ms_per_slot"), med("reshard", kind, "keys_moved"), a.slots,
                   med("reshard", kind, "probe_p99_ms"), med("reshard", kind, "probe_max_ms")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
