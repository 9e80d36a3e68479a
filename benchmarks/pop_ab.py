#!/usr/bin/env python3
"""Population through two goblin-core binaries, interleaved: the A/B of
cache_bench.py's population alone, for changes to the origin-fill path.

Each round starts binary A, then B, empty (cache_bench.py's goblin
configuration: --cores 2, --ram-head 256K, tails in --ssd-dir under
--ssd-base, --goblin-args), and fetches every object of cache_bench.py's
corpus once through it from the same nginx origin, at concurrency 32.
Per run: Gbit/s, the cache's CPU-seconds per GB, the client's and the
origin's; the origin's log must grow by exactly the object count. Medians
and B/A ratios at the end.

  python3 benchmarks/pop_ab.py --a OLD_BINARY --b NEW_BINARY [--rounds 5]
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cache_bench as cb  # noqa: E402


def one(args, binary, origin, manifest, tmp):
    cb.GOBLIN = os.path.abspath(binary)  # the server runs in its own directory
    c = cb.Cache("goblin", cb.parse_size(args.head), origin, tmp, sum(s for _, s in manifest), args)
    try:
        pop = cb.populate(c, origin, manifest, args.conc, args.seed + 1)
        gb = pop["bytes"] / 1e9
        r = {"gbps": pop["bytes"] * 8 / pop["wall"] / 1e9, "cache": pop["cache_cpu"] / gb,
             "client": pop["client_cpu"] / gb, "origin": pop["origin_cpu"] / gb,
             "errors": len(pop["errors"]), "origin_requests": pop["origin_requests"]}
    finally:
        c.stop()
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="goblin-core binary A (the baseline)")
    ap.add_argument("--b", required=True, help="goblin-core binary B")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--objects", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--sigma", type=float, default=1.9)
    ap.add_argument("--head", default="256K")
    ap.add_argument("--conc", type=int, default=32)
    ap.add_argument("--corpus-base", default="/tmp/goblin-cache-bench")
    ap.add_argument("--ssd-base", default="/var/tmp")
    ap.add_argument("--goblin-args", default="--mirror-client uring --no-numa-promotion")
    args = ap.parse_args()
    root, manifest, h, made = cb.make_corpus(args.corpus_base, args.objects, args.seed, args.sigma)
    tmp = tempfile.mkdtemp(prefix="pop-ab-")
    os.chmod(tmp, 0o755)
    origin = cb.Origin(root, tmp)
    res = {"a": [], "b": []}
    try:
        for rnd in range(args.rounds):
            for k in ("a", "b") if rnd % 2 == 0 else ("b", "a"):
                r = one(args, getattr(args, k), origin, manifest, tmp)
                res[k].append(r)
                print("round %d %s: %.2f Gbit/s, cache %.2f s/GB, client %.2f, origin %.2f, origin requests %d, "
                      "errors %d" % (rnd + 1, k.upper(), r["gbps"], r["cache"], r["client"], r["origin"],
                                     r["origin_requests"], r["errors"]), flush=True)
    finally:
        origin.stop()
    bad = sum(r["errors"] + (r["origin_requests"] != len(manifest)) for k in res for r in res[k])
    for key, name in (("gbps", "population Gbit/s"), ("cache", "cache CPU s/GB")):
        a = statistics.median(r[key] for r in res["a"])
        b = statistics.median(r[key] for r in res["b"])
        print("%-20s A %.2f  B %.2f  B/A %.2f" % (name, a, b, b / a))
    print("runs with errors or a wrong origin count: %d" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
