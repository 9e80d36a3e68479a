#!/usr/bin/env python3
"""Sorted sets: goblin-core against redis-server 7.0, side by side.

Three measurements, each starting both servers on free loopback ports (no
persistence, --cores 1 for goblin) and loading the same data into both:

  memory      one zset of N members "m:<i>" with random scores (fixed seed);
              resident memory (VmRSS + HugetlbPages from /proc/PID/status)
              read empty and after loading; bytes per member and the ratio.
  throughput  redis-benchmark -P 16 -c 50 against a zset of N members
              "m:<12-digit i>" (redis-benchmark's __rand_int__ spelling):
              ZADD (score updates of random members), ZSCORE, ZRANK,
              ZRANGE 0 99 WITHSCORES, ZRANGEBYSCORE <rand> +inf LIMIT 0 10.
              Servers pinned to CPU 0, redis-benchmark to CPU 1; the two
              servers alternate test by test; medians of the rounds.
  scaling     server-side time per call (INFO commandstats) of ZRANK of
              random members and of ZRANGE key off off at off = n/2 (capped
              at 500,000), for zsets of 1K, 100K and 1M members.

  python3 benchmarks/zset_bench.py [memory|throughput|scaling|all]
      [--members 1000000] [--requests 300000] [--rounds 3]
      [--server build-release/goblin-core] [--reference /usr/bin/redis-server]

Standard library only.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hash_memory import Conn, free_port  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Server:
    def __init__(self, kind, binary, cpu=None):
        self.kind = kind
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="zbench-")
        if kind == "goblin":
            argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                    "--save", "", "--cores", "1", "--dir", self.dir]
        else:
            argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no", "--daemonize", "no",
                    "--dir", self.dir, "--logfile", ""]
        if cpu is not None:
            argv = ["taskset", "-c", str(cpu)] + argv
        self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        self.c = Conn(self.port)
        while True:
            try:
                if self.c.call(b"PING") == b"PONG":
                    break
            except RuntimeError:
                pass
            time.sleep(0.05)

    def rss(self):
        kb = 0
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "HugetlbPages:")):
                    kb += int(line.split()[1])
        return kb * 1024

    def stop(self):
        try:
            self.c.call(b"SHUTDOWN", b"NOSAVE")
        except Exception:
            pass
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def load(srv, key, n, name_fmt, seed=42, batch=1000):
    rnd = random.Random(seed)
    cmds = []
    for i in range(0, n, batch):
        args = [b"ZADD", key]
        for j in range(i, min(n, i + batch)):
            args.append(b"%.4f" % (rnd.random() * 1e6))
            args.append(name_fmt % j)
        cmds.append(args)
        if len(cmds) == 20:
            srv.c.pipeline(cmds)
            cmds = []
    if cmds:
        srv.c.pipeline(cmds)


def settle(srv, secs=1.0):
    """RSS once it stops moving (incremental rehash finishing, etc.)."""
    last = srv.rss()
    for _ in range(int(secs / 0.2) + 10):
        time.sleep(0.2)
        cur = srv.rss()
        if abs(cur - last) < 64 * 1024:
            return cur
        last = cur
    return last


def bench_memory(a):
    print("memory: one zset of %d members m:<i>, random scores" % a.members)
    # The settled figure still holds whatever the allocator has freed and
    # not yet given back (jemalloc's decay, seconds): it moves by 1-2 B per
    # member from run to run. After MEMORY PURGE (both servers) it does
    # not: that is the figure to compare builds by, as hash_memory.py and
    # set_memory.py do.
    res = {"goblin": [], "redis": []}
    purged = {"goblin": [], "redis": []}
    for rnd in range(a.rounds):
        order = [("goblin", a.server), ("redis", a.reference)]
        if rnd % 2:
            order.reverse()
        for kind, binary in order:
            srv = Server(kind, binary)
            try:
                empty = settle(srv)
                load(srv, b"z", a.members, b"m:%d")
                full = settle(srv)
                encoding = srv.c.call(b"OBJECT", b"ENCODING", b"z").decode()
                card = int(srv.c.call(b"ZCARD", b"z"))
                srv.c.call(b"MEMORY", b"PURGE")
                after = settle(srv)
                per, per_p = (full - empty) / card, (after - empty) / card
                res[kind].append(per)
                purged[kind].append(per_p)
                print("  round %d %-6s %s card=%d  %.1f bytes/member, %.1f after MEMORY PURGE" %
                      (rnd, kind, encoding, card, per, per_p))
            finally:
                srv.stop()
    g, r = statistics.median(res["goblin"]), statistics.median(res["redis"])
    print("  median: goblin %.1f  redis %.1f  ratio %.3f" % (g, r, g / r))
    g, r = statistics.median(purged["goblin"]), statistics.median(purged["redis"])
    print("  median after MEMORY PURGE: goblin %.1f  redis %.1f  ratio %.3f" % (g, r, g / r))


TESTS = [
    ("ZADD", ["zadd", "bz", "__rand_int__", "m:__rand_int__"]),
    ("ZSCORE", ["zscore", "bz", "m:__rand_int__"]),
    ("ZRANK", ["zrank", "bz", "m:__rand_int__"]),
    ("ZRANGE 0 99 WITHSCORES", ["zrange", "bz", "0", "99", "withscores"]),
    ("ZRANGEBYSCORE LIMIT 0 10", ["zrangebyscore", "bz", "__rand_int__",
                                  "+inf", "limit", "0", "10"]),
]


def run_rb(port, cmd, n):
    argv = ["taskset", "-c", "1", "redis-benchmark", "-h", "127.0.0.1",
            "-p", str(port), "-P", "16", "-c", "50", "-n", str(n),
            "-r", "1000000", "--csv"] + cmd
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = [p.strip('"') for p in line.split(",")]
        if len(parts) >= 2 and parts[0] != "test":
            try:
                return float(parts[1])
            except ValueError:
                pass
    raise RuntimeError("no result from redis-benchmark: %r" % out)


def bench_throughput(a):
    print("throughput: redis-benchmark -P 16 -c 50 -n %d, zset of %d members"
          % (a.requests, a.members))
    srvs = {"goblin": Server("goblin", a.server, cpu=0),
            "redis": Server("redis", a.reference, cpu=0)}
    try:
        for s in srvs.values():
            load(s, b"bz", a.members, b"m:%012d")
            settle(s)
        res = {(k, t): [] for k in srvs for t, _ in TESTS}
        for rnd in range(a.rounds):
            for name, cmd in TESTS:
                kinds = ["goblin", "redis"] if rnd % 2 == 0 else ["redis", "goblin"]
                for k in kinds:
                    res[(k, name)].append(run_rb(srvs[k].port, cmd, a.requests))
        print("  %-26s %12s %12s %7s" % ("command", "goblin rps", "redis rps",
                                         "ratio"))
        for name, _ in TESTS:
            g = statistics.median(res[("goblin", name)])
            r = statistics.median(res[("redis", name)])
            print("  %-26s %12.0f %12.0f %7.2f" % (name, g, r, g / r))
    finally:
        for s in srvs.values():
            s.stop()


def cmdstat(srv, name):
    info = srv.c.call(b"INFO", b"commandstats").decode()
    for line in info.splitlines():
        if line.startswith("cmdstat_%s:" % name):
            kv = dict(x.split("=") for x in line.split(":", 1)[1].split(","))
            return int(kv["calls"]), int(kv["usec"])
    return 0, 0


def per_call(srv, name, cmds):
    c0, u0 = cmdstat(srv, name)
    for i in range(0, len(cmds), 1000):
        srv.c.pipeline(cmds[i:i + 1000])
    c1, u1 = cmdstat(srv, name)
    return (u1 - u0) / max(1, c1 - c0)


def bench_scaling(a):
    sizes = [1000, 100000, 1000000]
    print("scaling: server time per call (INFO commandstats), usec")
    print("  %-8s %-7s %10s %14s" % ("server", "n", "ZRANK", "ZRANGE @ off"))
    rnd = random.Random(7)
    for kind, binary in (("goblin", a.server), ("redis", a.reference)):
        srv = Server(kind, binary)
        try:
            for n in sizes:
                key = b"s%d" % n
                load(srv, key, n, b"m:%012d")
                settle(srv, 0.5)
                rank_cmds = [[b"ZRANK", key, b"m:%012d" % rnd.randrange(n)]
                             for _ in range(20000)]
                off = min(n // 2, 500000)
                range_cmds = [[b"ZRANGE", key, b"%d" % off, b"%d" % off]
                              for _ in range(20000)]
                t_rank = per_call(srv, "zrank", rank_cmds)
                t_range = per_call(srv, "zrange", range_cmds)
                print("  %-8s %-7d %10.2f %14.2f   (offset %d)" %
                      (kind, n, t_rank, t_range, off))
                srv.c.call(b"DEL", key)
        finally:
            srv.stop()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", nargs="?", default="all",
                   choices=("memory", "throughput", "scaling", "all"))
    p.add_argument("--members", type=int, default=1000000)
    p.add_argument("--requests", type=int, default=300000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--server", default=os.path.join(REPO, "build-release",
                                                    "goblin-core"))
    p.add_argument("--reference", default="/usr/bin/redis-server")
    a = p.parse_args()
    if a.what in ("memory", "all"):
        bench_memory(a)
    if a.what in ("throughput", "all"):
        bench_throughput(a)
    if a.what in ("scaling", "all"):
        bench_scaling(a)


if __name__ == "__main__":
    sys.exit(main())
