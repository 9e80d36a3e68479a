#!/usr/bin/env python3
"""Two goblin-core builds side by side, with no redis-server between them.

Both builds run at once (--cores 1, pinned to the first CPU with --pin, the
client on the others); each round runs redis-benchmark against one, then
the other (the first alternating), for each test. Printed per test: both
builds' median req/s and the median of the per-round ratio after/before,
and the server CPU per request (all threads, from schedstat) with the
per-round CPU ratios sorted, which on a shared machine is the figure to
trust (a ratio spread straddling 1.0 is no difference this machine can
resolve).

  ./benchmarks/ab_builds.py --before OLD/goblin-core --after NEW/goblin-core \\
      [--pin] [--rounds 10] [--tests get,set] [--pipeline 16] [--requests 1000000]

Python 3 standard library only (the helpers of tlb_arena_benchmark.py and
compare.py).
"""
import argparse
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlb_arena_benchmark as tb  # noqa: E402
from compare import pick_row, server_cpu_seconds  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--tests", default="get,set")
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--keyspace", type=int, default=1000000)
    ap.add_argument("--pin", action="store_true")
    ap.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark")
    args = ap.parse_args()
    tests = [t.strip().lower() for t in args.tests.split(",") if t.strip()]
    srv_cpus, cli_cpus, note = tb.plan_pinning(args.pin, None, None, 1)
    print("ab_builds: before %s, after %s; %s" % (args.before, args.after, note))
    cleanup = tb.Cleanup()
    try:
        servers = {}
        for name in ("before", "after"):
            servers[name] = cleanup.server(tb.Server(getattr(args, name), ["--cores", "1"], srv_cpus, name=name))
            servers[name].start()
        rate = {(n, t): [] for n in servers for t in tests}
        cpu = {(n, t): [] for n in servers for t in tests}
        for r in range(args.rounds):
            for t in tests:
                for name in (["before", "after"] if r % 2 == 0 else ["after", "before"]):
                    s = servers[name]
                    cmd = tb.taskset_prefix(cli_cpus) + [
                        args.redis_benchmark, "-h", "127.0.0.1", "-p", str(s.port), "-c", str(args.clients),
                        "-n", str(args.requests), "-P", str(args.pipeline), "-r", str(args.keyspace), "-t", t,
                        "--csv"]
                    c0 = server_cpu_seconds(s.pid)
                    out = tb.run_client(cmd, cleanup, timeout=600)
                    cpu[(name, t)].append((server_cpu_seconds(s.pid) - c0) / args.requests * 1e6)
                    rate[(name, t)].append(pick_row(out, t.upper(), None))
                    if not s.alive():
                        raise RuntimeError("%s died:\n%s" % (name, s.log_tail()))
            print("  round %d/%d done" % (r + 1, args.rounds), flush=True)
        print("-P %d, %d clients, %d rounds of %d requests" % (args.pipeline, args.clients, args.rounds,
                                                              args.requests))
        for t in tests:
            rb, ra = rate[("before", t)], rate[("after", t)]
            cb, ca = cpu[("before", t)], cpu[("after", t)]
            rr = sorted(a / b for a, b in zip(ra, rb))
            cr = sorted(a / b for a, b in zip(ca, cb))
            print("%-5s req/s before %.0f after %.0f, after/before %.3f (range %.2f-%.2f); "
                  "CPU us/request before %.3f after %.3f, after/before %.3f (per round: %s)" % (
                      t.upper(), statistics.median(rb), statistics.median(ra), statistics.median(rr), rr[0], rr[-1],
                      statistics.median(cb), statistics.median(ca), statistics.median(cr),
                      " ".join("%.2f" % x for x in cr)))
        return 0
    finally:
        cleanup.run()


if __name__ == "__main__":
    sys.exit(main())
