#!/usr/bin/env python3
"""Two goblin-core builds, each against redis-server 7.0, interleaved.

A change that should not move speed or memory (a restructuring, a
refactor) is checked by running compare.py and memory.py for the build
before it and the build after it, alternately, round after round, so drift
and neighbours' load hit both alike. Each run is one round of compare.py
(or memory.py) with its own fresh redis-server beside the goblin under
test; what is compared is the per-round ratio goblin/redis of each build,
and the figure printed per test is

    after/before = median(ratio of the after build) / median(ratio of before)

(1.00: no change; above 1 for req/s: the after build is faster; above 1
for bytes: it uses more).

  ./benchmarks/before_after.py --before OLD/goblin-core --after NEW/goblin-core \
      [--rounds 3] [--compare-args "--pin --requests 50000 ..."] \
      [--memory-args "--pin --scale 0.3"] [--skip-memory] [--skip-compare]

Python 3 standard library only.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(script, binary, extra, tmp):
    out = os.path.join(tmp, "out.json")
    cmd = [sys.executable, os.path.join(HERE, script), "--goblin", binary, "--json", out] + extra
    print("  $ " + " ".join(shlex.quote(a) for a in cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="goblin-core of the build before the change")
    ap.add_argument("--after", required=True, help="goblin-core of the build after the change")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--compare-args", default="--pin --requests 50000 --requests-pipelined 300000")
    ap.add_argument("--memory-args", default="--pin --scale 0.3")
    ap.add_argument("--skip-compare", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()

    builds = {"before": args.before, "after": args.after}
    speed = {b: {} for b in builds}   # (test, pipeline) -> [ratio goblin/redis per round]
    cpu = {b: {} for b in builds}     # (test, pipeline) -> [goblin CPU us/request per round]
    mem = {b: {} for b in builds}     # set -> [ratio goblin/redis per round]
    with tempfile.TemporaryDirectory(prefix="goblin-ba-") as tmp:
        for r in range(args.rounds):
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            print("round %d/%d (%s first)" % (r + 1, args.rounds, order[0]), flush=True)
            for b in order:
                if not args.skip_compare:
                    res = run_json("compare.py", builds[b], ["--rounds", "1"] + shlex.split(args.compare_args), tmp)
                    for row in res["rows"]:
                        speed[b].setdefault((row["test"], row["pipeline"]), []).extend(row["ratios"])
                        cpu[b].setdefault((row["test"], row["pipeline"]), []).extend(row.get("cpu_us_goblin", []))
                if not args.skip_memory:
                    res = run_json("memory.py", builds[b], ["--rounds", "1"] + shlex.split(args.memory_args), tmp)
                    for row in res["rows"]:
                        mem[b].setdefault(row["set"], []).append(row["ratio"])

    out = {"rounds": args.rounds, "compare_args": args.compare_args, "memory_args": args.memory_args,
           "speed": [], "memory": []}
    if speed["before"]:
        print()
        print("req/s, goblin/redis per round (medians of %d rounds); after/before above 1: faster" % args.rounds)
        print("(goblin's server CPU per request, us, medians: the steadier figure on a shared machine; "
              "after/before below 1: cheaper)")
        print("%-11s %4s %8s %8s %13s | %8s %8s %13s" % ("test", "-P", "before", "after", "after/before",
                                                       "cpu bef", "cpu aft", "after/before"))
        for key in speed["before"]:
            mb, ma = statistics.median(speed["before"][key]), statistics.median(speed["after"][key])
            cb = statistics.median(cpu["before"][key]) if cpu["before"].get(key) else float("nan")
            ca = statistics.median(cpu["after"][key]) if cpu["after"].get(key) else float("nan")
            print("%-11s %4d %8.2f %8.2f %13.2f | %8.3f %8.3f %13.2f" % (key[0], key[1], mb, ma, ma / mb,
                                                                       cb, ca, ca / cb))
            out["speed"].append({"test": key[0], "pipeline": key[1], "before": mb, "after": ma,
                                 "cpu_us_before": cb, "cpu_us_after": ca})
        ratios = [ma["after"] / ma["before"] for ma in out["speed"]]
        print("geometric mean of after/before: %.3f" % statistics.geometric_mean(ratios))
    if mem["before"]:
        print()
        print("bytes per element, goblin/redis after MEMORY PURGE (medians); after/before above 1: more memory")
        print("%-11s %8s %8s %13s" % ("set", "before", "after", "after/before"))
        for key in mem["before"]:
            mb, ma = statistics.median(mem["before"][key]), statistics.median(mem["after"][key])
            print("%-11s %8.3f %8.3f %13.3f" % (key, mb, ma, ma / mb))
            out["memory"].append({"set": key, "before": mb, "after": ma})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
