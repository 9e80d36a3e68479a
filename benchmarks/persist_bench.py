#!/usr/bin/env python3
"""SAVE and start-up load: goblin-core against redis-server 7.0.

The dataset, built identically in both servers:
  a hash of N fields     "f:<i>" -> "v:<7i>"
  a zset of N members    "m:<i>" with random scores (fixed seed)
  a list of N elements   "element-<i>"
  N string keys          "key:<i>" -> 100 random hex characters
(N = 1,000,000 by default.) Both servers keep their defaults
(rdbcompression yes, goblin --cores 1).

The dataset is built once in redis-server (pipelined commands) and saved;
goblin-core loads that dump at start-up and saves its own. Each round,
interleaved: redis SAVE, goblin SAVE, then each server is restarted on its
own dump and its start-up load is timed from its log ("DB loaded from disk:
S seconds", which both print). CPU seconds (user + system of the whole
process, from /proc) are reported next to wall time, because these shared
machines are often busy: wall time then includes waiting for a CPU. Peak
extra memory during SAVE is the highest VmRSS sampled every 2 ms while SAVE
runs, minus VmRSS just before it. Prints medians of the rounds and ratios.

  python3 benchmarks/persist_bench.py [--n 1000000] [--rounds 3]
      [--server build-release/goblin-core] [--reference /usr/bin/redis-server]

Standard library only (reuses tests/persist/harness.py).
"""
import argparse
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "persist"))
import harness  # noqa: E402


def cpu(pid):
    """User + system seconds of the whole process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def build(c, n, seed=1):
    rng = random.Random(seed)
    step = 1000
    cmds = []
    for i in range(0, n, step):
        r = range(i, min(n, i + step))
        h = ["HSET", "hash"]
        z = ["ZADD", "zset"]
        lst = ["RPUSH", "list"]
        m = ["MSET"]
        for j in r:
            h += ["f:%d" % j, "v:%d" % (7 * j)]
            z += [repr(rng.random() * 1e6), "m:%d" % j]
            lst.append("element-%d" % j)
            m += ["key:%d" % j, "%032x%032x%036x" % (rng.getrandbits(128), rng.getrandbits(128),
                                                     rng.getrandbits(144))]
        cmds += [h, z, lst, m]
    c.pipeline(cmds)


def timed_save(s):
    base = rss(s.p.pid)
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                peak[0] = max(peak[0], rss(s.p.pid))
            except OSError:
                return
            time.sleep(0.002)

    th = threading.Thread(target=sample)
    th.start()
    c0 = cpu(s.p.pid)
    t0 = time.perf_counter()
    r = s.c.call("SAVE")
    dt = time.perf_counter() - t0
    c1 = cpu(s.p.pid)
    done.set()
    th.join()
    assert r == b"OK", r
    return dt, c1 - c0, peak[0] - base, base


LOADED = re.compile(r"DB loaded from disk: ([0-9.]+) seconds")


def timed_load(kind, d):
    s = harness.Server(kind, d, wait=False)
    s.wait_ready(timeout=600)
    c = cpu(s.p.pid)
    m = LOADED.findall(s.log_text())
    s.stop()
    if not m:
        raise RuntimeError("%s did not report its load time:\n%s" % (kind, s.log_tail()))
    return float(m[-1]), c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    a = ap.parse_args()
    os.environ["GOBLIN"] = os.path.abspath(a.server)
    harness.REDIS = a.reference
    tmp = tempfile.mkdtemp(prefix="persist_bench.")
    dirs = {"redis": os.path.join(tmp, "redis"), "goblin": os.path.join(tmp, "goblin")}
    res = {k: {"save": [], "save_cpu": [], "load": [], "load_cpu": [], "mem": [], "base": [], "size": []}
           for k in dirs}
    try:
        s = harness.Server("redis", dirs["redis"])
        t0 = time.time()
        build(s.c, a.n)
        print("redis: dataset built in %.1f s (%d keys)" % (time.time() - t0, s.c.ok("DBSIZE")), flush=True)
        s.c.ok("SAVE")
        s.stop()
        os.makedirs(dirs["goblin"])
        shutil.copy(os.path.join(dirs["redis"], "dump.rdb"), os.path.join(dirs["goblin"], "dump.rdb"))
        s = harness.Server("goblin", dirs["goblin"], wait=False)
        s.wait_ready(timeout=600)
        if s.c.ok("DBSIZE") != a.n + 3:
            raise RuntimeError("goblin did not load redis's dump (needs the core wiring):\n" + s.log_tail())
        s.c.ok("SAVE")
        s.stop()
        for rnd in range(a.rounds):
            for kind in ("redis", "goblin"):
                s = harness.Server(kind, dirs[kind], wait=False)
                s.wait_ready(timeout=600)
                dt, dc, mem, base = timed_save(s)
                s.stop()
                res[kind]["save"].append(dt)
                res[kind]["save_cpu"].append(dc)
                res[kind]["mem"].append(mem)
                res[kind]["base"].append(base)
                res[kind]["size"].append(os.path.getsize(os.path.join(dirs[kind], "dump.rdb")))
            for kind in ("redis", "goblin"):
                t, c = timed_load(kind, dirs[kind])
                res[kind]["load"].append(t)
                res[kind]["load_cpu"].append(c)
            print("round %d: " % (rnd + 1) + "  ".join(
                "%s save %.3fs (cpu %.2f) load %.3fs (cpu %.2f)" % (
                    k, res[k]["save"][-1], res[k]["save_cpu"][-1], res[k]["load"][-1], res[k]["load_cpu"][-1])
                for k in dirs), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: {m: statistics.median(v) for m, v in res[k].items()} for k in res}
    print()
    print("N = %d per structure (hash fields, zset members, list elements, string keys); medians of %d rounds"
          % (a.n, a.rounds))
    print("%-8s %8s %8s %8s %8s %9s %12s %10s" % ("", "SAVE s", "SAVE cpu", "load s", "load cpu", "dump MB",
                                                 "dataset MB", "SAVE +MB"))
    for k in ("redis", "goblin"):
        m = med[k]
        print("%-8s %8.3f %8.2f %8.3f %8.2f %9.1f %12.1f %10.1f" % (
            k, m["save"], m["save_cpu"], m["load"], m["load_cpu"], m["size"] / 2 ** 20, m["base"] / 2 ** 20,
            m["mem"] / 2 ** 20))
    r, g = med["redis"], med["goblin"]
    print()
    print("SAVE: goblin/redis wall %.2fx, cpu %.2fx (goal <= 1.0)" % (g["save"] / r["save"],
                                                                     g["save_cpu"] / r["save_cpu"]))
    print("load: goblin faster by %.2fx wall, %.2fx cpu (goal >= 1.5)" % (r["load"] / g["load"],
                                                                         r["load_cpu"] / g["load_cpu"]))
    print("SAVE peak extra memory: %.1f%% of goblin's dataset RSS (goal <= 10%%)" % (100.0 * g["mem"] / g["base"]))


if __name__ == "__main__":
    main()
