#!/usr/bin/python3
"""Other clients while the lazy-free thread frees a FLUSHALL ASYNC.

Each build in --server (A/B: several, interleaved round by round) is
started pinned to one CPU (--server-cpu, the lazy-free thread beside the
worker, the worst case), filled with DEBUG POPULATE (values of --value
bytes: records of the small-object store), then FLUSHALL ASYNC; until the
lazy-free thread is done, a client on the other CPU sends PING, INFO
keyspace and INFO memory in turn every 10 ms and times each. Reported per
build, medians over the rounds: each probe's median, p99 and worst round
trip (ms), the time the freeing took and the process CPU it used.

  python3 benchmarks/lazyfree_bench.py --server OLD/goblin-core --server NEW/goblin-core --keys 5000000 --rounds 3
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tlb_arena_benchmark import free_port  # noqa: E402

PROBES = (("ping",), ("info", "keyspace"), ("info", "memory"))


def cpu_s(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def one_run(server, a):
    port = free_port()
    d = tempfile.mkdtemp(prefix="lazyfree-bench-")
    srv = subprocess.Popen(["taskset", "-c", a.server_cpu, server, "--port", str(port), "--cores", "1", "--save", "",
                            "--dir", d, "--enable-debug-command", "yes"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        c = redis.Redis(port=port)
        for _ in range(100):
            try:
                c.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        for i in range(0, a.keys, 1000000):
            c.execute_command("DEBUG", "POPULATE", min(1000000, a.keys - i), "key:%d:" % i, a.value)
        time.sleep(1)
        cpu0, t0 = cpu_s(srv.pid), time.monotonic()
        c.execute_command("FLUSHALL", "ASYNC")
        lat = {p: [] for p in PROBES}
        while True:
            for p in PROBES:
                s = time.perf_counter()
                c.execute_command(*p)
                lat[p].append((time.perf_counter() - s) * 1e3)
            if not int(c.info("memory")["lazyfree_pending_objects"]):
                break
            time.sleep(0.01)
        out = {"freed_s": time.monotonic() - t0, "cpu_s": cpu_s(srv.pid) - cpu0}
        for p, v in lat.items():
            v.sort()
            name = " ".join(p)
            out[name + " median"] = v[len(v) // 2]
            out[name + " p99"] = v[min(len(v) - 1, int(len(v) * 0.99))]
            out[name + " max"] = v[-1]
        return out
    finally:
        srv.kill()
        srv.wait()
        subprocess.run(["rm", "-rf", d])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", action="append", required=True, help="goblin-core build (repeat to A/B)")
    ap.add_argument("--keys", type=int, default=5000000)
    ap.add_argument("--value", type=int, default=100, help="bytes per value")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--client-cpu", default="1")
    a = ap.parse_args()
    os.sched_setaffinity(0, {int(x) for x in a.client_cpu.split(",")})
    runs = {s: [] for s in a.server}
    for r in range(a.rounds):
        order = a.server if r % 2 == 0 else list(reversed(a.server))
        for s in order:
            runs[s].append(one_run(s, a))
            print("  round %d %s: %s" % (r + 1, s, {k: round(v, 2) for k, v in runs[s][-1].items()}), flush=True)
    print("\n%d keys of %d bytes, FLUSHALL ASYNC, medians of %d rounds" % (a.keys, a.value, a.rounds))
    keys = list(runs[a.server[0]][0].keys())
    print("%-24s" % "" + "".join("%14s" % os.path.basename(os.path.dirname(os.path.dirname(s))) for s in a.server))
    for k in keys:
        print("%-24s" % k + "".join("%14.2f" % statistics.median(x[k] for x in runs[s]) for s in a.server))


if __name__ == "__main__":
    sys.exit(main())
