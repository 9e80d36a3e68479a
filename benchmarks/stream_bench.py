#!/usr/bin/env python3
"""Streams: goblin-core against redis-server 7.0, memory and speed.

Memory: a fresh pair of servers (no persistence, goblin --cores 1, with
--pin on the same CPU) gets the same stream, loaded pipelined: --entries
(1,000,000) entries XADD mem:s * f1 <8 pseudo-random bytes> f2 <int>.
Bytes per entry above the empty server (VmRSS + HugetlbPages, read as
memory.py does: once settled after the load, again after MEMORY PURGE).
Goal: goblin at most 0.8x redis.

Speed: another pair of servers, both running at once; redis-benchmark
-P 16 -c 50 (--pipeline, --clients) of

  XADD    XADD bench:s * f v
  XRANGE  XRANGE bench:r - + COUNT 10       (bench:r prefilled, --prefill)
  XREAD   XREAD COUNT 10 STREAMS bench:r 0

A/B interleaved as compare.py does (each test on both servers back to
back, the first server alternating), --rounds rounds; printed per test:
median req/s, median and range of the per-round ratio goblin/redis (above
1: goblin is faster), and the server CPU time per request (compare.py's
server_cpu_seconds: all the server's threads, from schedstat) with its
median ratio (below 1: goblin spends less). Goal: goblin's rate at least
redis's.

  ./benchmarks/stream_bench.py --pin [--rounds 5] [--entries 1000000]
      [--requests 500000] [--skip-memory] [--skip-speed] [--json FILE]

Python 3 standard library only (imports compare.py, memory.py and
tlb_arena_benchmark.py).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlb_arena_benchmark as tb  # noqa: E402
from compare import pick_row, server_cpu_seconds  # noqa: E402
from memory import bulk, rval, settle  # noqa: E402

PER_BATCH = 1000
TESTS = {
    "XADD": (["XADD", "bench:s", "*", "f", "v"], "xadd "),
    "XRANGE": (["XRANGE", "bench:r", "-", "+", "COUNT", "10"], "xrange "),
    "XREAD": (["XREAD", "COUNT", "10", "STREAMS", "bench:r", "0"], "xread "),
}


def xadd_batches(key, n):
    """Yields (bytes, ncommands): n XADDs of key, two small fields each."""
    k = bulk(key)
    for i in range(0, n, PER_BATCH):
        parts = []
        for j in range(i, min(n, i + PER_BATCH)):
            parts.append(b"*7\r\n$4\r\nXADD\r\n" + k + b"$1\r\n*\r\n$2\r\nf1\r\n" + bulk(rval(j, 8)) +
                         b"$2\r\nf2\r\n" + bulk(b"%d" % j))
        yield b"".join(parts), len(parts)


def memory(args, srv_cpus, cleanup):
    gob = cleanup.server(tb.Server(args.goblin, ["--cores", "1"], srv_cpus, name="goblin"))
    red = cleanup.server(tb.Server(args.redis, ["--appendonly", "no"], srv_cpus, name="redis"))
    n = args.entries
    try:
        gob.start()
        red.start()
        pids = [gob.pid, red.pid]
        empty = settle(pids, wait=0.5)
        el = tb.load_all([gob, red], xadd_batches(b"mem:s", n))
        for s in (gob, red):
            got = s.conn.call("XLEN", "mem:s")
            if got != n:
                raise RuntimeError("%s: mem:s holds %s entries, expected %d" % (s.name, got, n))
        loaded = settle(pids)
        for s in (gob, red):
            s.conn.call("MEMORY", "PURGE")
        purged = settle(pids, wait=0.5)
        out = {"entries": n, "load_seconds": el}
        for i, s in enumerate((gob, red)):
            out[s.name] = {"empty": empty[i], "loaded": loaded[i], "purged": purged[i],
                           "settled_bpe": (loaded[i] - empty[i]) / n, "purged_bpe": (purged[i] - empty[i]) / n}
        return out
    finally:
        for s in (gob, red):
            s.stop()
            cleanup.servers.remove(s)


def speed(args, srv_cpus, cli_cpus, cleanup):
    gob = cleanup.server(tb.Server(args.goblin, ["--cores", "1"], srv_cpus, name="goblin"))
    red = cleanup.server(tb.Server(args.redis, ["--appendonly", "no"], srv_cpus, name="redis"))
    servers = {"goblin": gob, "redis": red}
    try:
        gob.start()
        red.start()
        el = tb.load_all([gob, red], xadd_batches(b"bench:r", args.prefill))
        print("prefilled bench:r, %d entries, in %.1f s" % (args.prefill, el), flush=True)
        res = {t: {"goblin": [], "redis": [], "ratios": [], "cpu_goblin": [], "cpu_redis": [], "cpu_ratios": []}
               for t in TESTS}
        k = 0
        for r in range(args.rounds):
            t0 = time.time()
            for t, (cmdline, prefix) in TESTS.items():
                order = ["goblin", "redis"] if k % 2 == 0 else ["redis", "goblin"]
                k += 1
                got, cpu = {}, {}
                for name in order:
                    s = servers[name]
                    cmd = tb.taskset_prefix(cli_cpus) + [
                        args.redis_benchmark, "-h", "127.0.0.1", "-p", str(s.port), "-c", str(args.clients),
                        "-n", str(args.requests), "-P", str(args.pipeline), "--csv"] + cmdline
                    c0 = server_cpu_seconds(s.pid)
                    out = tb.run_client(cmd, cleanup, timeout=args.timeout)
                    cpu[name] = (server_cpu_seconds(s.pid) - c0) / args.requests * 1e6
                    got[name] = pick_row(out, t, prefix)
                    if not s.alive():
                        raise RuntimeError("%s died during %s:\n%s" % (name, t, s.log_tail()))
                c = res[t]
                for name in ("goblin", "redis"):
                    c[name].append(got[name])
                    c["cpu_" + name].append(cpu[name])
                c["ratios"].append(got["goblin"] / got["redis"])
                if cpu["redis"] > 0:
                    c["cpu_ratios"].append(cpu["goblin"] / cpu["redis"])
            print("  round %d/%d done in %.0f s" % (r + 1, args.rounds, time.time() - t0), flush=True)
        return res
    finally:
        for s in (gob, red):
            s.stop()
            cleanup.servers.remove(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--goblin", default=os.path.join(tb.REPO, "build-release", "goblin-core"))
    ap.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    ap.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark")
    ap.add_argument("--entries", type=int, default=1000000, help="entries of the memory stream")
    ap.add_argument("--prefill", type=int, default=100000, help="entries of bench:r (XRANGE, XREAD)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=500000, help="-n per redis-benchmark run")
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pin", action="store_true", help="servers on the first CPU, client on the rest")
    ap.add_argument("--server-cpus")
    ap.add_argument("--client-cpus")
    ap.add_argument("--timeout", type=float, default=300, help="seconds allowed for one redis-benchmark run")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    for b in (args.goblin, args.redis, args.redis_benchmark):
        if not os.path.exists(b):
            ap.error("missing %s" % b)
    srv_cpus, cli_cpus, pin_note = tb.plan_pinning(args.pin, args.server_cpus, args.client_cpus, 1)
    rv = subprocess.run([args.redis, "--version"], stdout=subprocess.PIPE).stdout.decode().strip()
    print("goblin stream_bench: %s" % time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    print("machine: %s" % tb.machine_description())
    print("%s; goblin-core %s --cores 1; pinning: %s" % (rv.split(" sha=")[0], args.goblin, pin_note))
    result = {"pinning": pin_note}
    cleanup = tb.Cleanup()
    try:
        if not args.skip_memory:
            m = memory(args, srv_cpus, cleanup)
            result["memory"] = m
            g, r = m["goblin"], m["redis"]
            print()
            print("memory: %d entries XADD * f1 <8 random bytes> f2 <int>, loaded in %.1f s" % (
                m["entries"], m["load_seconds"]))
            print("%-8s %14s %14s %14s %14s" % ("", "empty MiB", "loaded MiB", "B/entry", "B/entry purged"))
            for name, v in (("goblin", g), ("redis", r)):
                print("%-8s %14.1f %14.1f %14.1f %14.1f" % (name, v["empty"] / 2**20, v["loaded"] / 2**20,
                                                          v["settled_bpe"], v["purged_bpe"]))
            print("ratio goblin/redis: %.2f settled, %.2f purged (goal <= 0.80)" % (
                g["settled_bpe"] / r["settled_bpe"], g["purged_bpe"] / r["purged_bpe"]))
        if not args.skip_speed:
            res = speed(args, srv_cpus, cli_cpus, cleanup)
            result["speed"] = res
            print()
            print("-P %d, %d clients, %d requests, %d rounds (req/s medians; ratio = goblin/redis per round; "
                  "server CPU us/request medians; cpu ratio = goblin/redis per round)" % (
                      args.pipeline, args.clients, args.requests, args.rounds))
            print("%-7s %11s %11s %6s %13s | %7s %7s %6s" % (
                "test", "goblin", "redis", "ratio", "ratio range", "cpu gob", "cpu red", "cpu"))
            for t, c in res.items():
                cq = statistics.median(c["cpu_ratios"]) if c["cpu_ratios"] else float("nan")
                print("%-7s %11.0f %11.0f %6.2f %6.2f-%6.2f | %7.3f %7.3f %6.2f" % (
                    t, statistics.median(c["goblin"]), statistics.median(c["redis"]),
                    statistics.median(c["ratios"]), min(c["ratios"]), max(c["ratios"]),
                    statistics.median(c["cpu_goblin"]), statistics.median(c["cpu_redis"]), cq))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        return 0
    except KeyboardInterrupt:
        print("\ninterrupted: stopping servers", file=sys.stderr)
        return 130
    except (RuntimeError, tb.RespError, OSError) as e:
        print("\nerror: %s" % e, file=sys.stderr)
        return 1
    finally:
        cleanup.run()


if __name__ == "__main__":
    sys.exit(main())
