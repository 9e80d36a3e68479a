#!/usr/bin/env python3
"""Bytes per list element: goblin-core against redis-server 7.0, side by side.

Starts both servers on free loopback ports (no persistence), reads each
one's resident memory (VmRSS + HugetlbPages from /proc/PID/status) when
empty, pushes the same N elements (random lowercase text of 8..16 bytes,
fixed seed) into one list with pipelined RPUSH batches, reads the resident
memory again and prints bytes per element above the empty server, and the
ratio goblin / redis. Several rounds alternate the servers; medians are
printed.

  python3 benchmarks/list_memory.py [--elements 1000000] [--rounds 3]
      [--server build-release/goblin-core] [--reference /usr/bin/redis-server]
      [--min-len 8] [--max-len 16] [--cores 1] [--push RPUSH|LPUSH]

Standard library only.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hash_memory import free_port, resident, start  # noqa: E402


def settle(pid):
    """Resident bytes once they stop moving (allocator purges, lazy frees)."""
    last = resident(pid)
    for _ in range(20):
        time.sleep(0.25)
        cur = resident(pid)
        if abs(cur - last) < 64 * 1024:
            return cur
        last = cur
    return last


def elements(n, lo, hi, seed):
    rng = random.Random(seed)
    letters = b"abcdefghijklmnopqrstuvwxyz"
    out = []
    payload = 0
    for _ in range(n):
        k = rng.randint(lo, hi)
        v = bytes(rng.choice(letters) for _ in range(k))
        payload += k
        out.append(v)
    return out, payload


def measure(kind, binary, vals, cores, push):
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        p, c = start(kind, binary, port, d, cores)
        try:
            base = settle(p.pid)
            batch = 1000
            for i in range(0, len(vals), batch):
                c.call(push, b"biglist", *vals[i:i + batch])
            n = int(c.call(b"LLEN", b"biglist"))
            assert n == len(vals), (n, len(vals))
            enc_name = c.call(b"OBJECT", b"ENCODING", b"biglist")
            after = settle(p.pid)
            usage = c.call(b"MEMORY", b"USAGE", b"biglist", b"SAMPLES", b"0")
        finally:
            p.terminate()
            p.wait()
    return (after - base) / len(vals), enc_name.decode(), int(usage) / len(vals) if usage else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--elements", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-len", type=int, default=8)
    ap.add_argument("--max-len", type=int, default=16)
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--push", default="RPUSH", choices=("RPUSH", "LPUSH"))
    a = ap.parse_args()
    vals, payload = elements(a.elements, a.min_len, a.max_len, a.seed)
    print("%d elements of %d..%d bytes (payload %.2f B/element) by %s, %d rounds"
          % (a.elements, a.min_len, a.max_len, payload / a.elements, a.push, a.rounds))
    res = {"redis": [], "goblin": []}
    for r in range(a.rounds):
        order = ("redis", "goblin") if r % 2 == 0 else ("goblin", "redis")
        for kind in order:
            binary = a.reference if kind == "redis" else a.server
            per, encname, usage = measure(kind, binary, vals, a.cores, a.push.encode())
            res[kind].append(per)
            print("  round %d %-6s %7.2f B/element resident (MEMORY USAGE %.2f, encoding %s)"
                  % (r + 1, kind, per, usage, encname))
            sys.stdout.flush()
    mr, mg = statistics.median(res["redis"]), statistics.median(res["goblin"])
    print("median: redis %.2f B/element, goblin %.2f B/element, goblin/redis %.3f" % (mr, mg, mg / mr))


if __name__ == "__main__":
    main()
