#!/usr/bin/env python3
"""Bytes per set member: goblin-core against redis-server 7.0, side by side.

Two data sets:

  big     one set of N members "m:<i>"; default N = 1,000,000
  many    M sets "s:<k>" of 10 members "m:<j>" each; default M = 100,000

For each, both servers are started on free loopback ports (no persistence),
their resident memory (VmRSS + HugetlbPages from /proc/PID/status) is read
when empty and again after pipelined SADD batches have loaded the data and
the figure has settled; the difference per member is printed with the
encoding the server reports and the ratio goblin / redis. Rounds alternate
which server goes first; medians are printed, before and after MEMORY
PURGE (see hash_memory.py, whose server and measurement helpers this
script shares).

  python3 benchmarks/set_memory.py [--set big|many|both] [--members N]
      [--sets M] [--rounds 3] [--server build-release/goblin-core]
      [--reference /usr/bin/redis-server] [--cores 1]

Standard library only.
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hash_memory import REPO, free_port, run_rounds, settle, start  # noqa: E402


def load_big(c, n):
    batch = []
    for i in range(n):
        batch.append(b"m:%d" % i)
        if len(batch) >= 1000:
            c.call(b"SADD", b"big", *batch)
            batch = []
    if batch:
        c.call(b"SADD", b"big", *batch)
    assert int(c.call(b"SCARD", b"big")) == n
    return c.call(b"OBJECT", b"ENCODING", b"big").decode()


def load_many(c, nsets, per):
    cmds = []
    for k in range(nsets):
        cmds.append([b"SADD", b"s:%d" % k] + [b"m:%d" % j for j in range(per)])
        if len(cmds) >= 500:
            c.pipeline(cmds)
            cmds = []
    if cmds:
        c.pipeline(cmds)
    assert int(c.call(b"DBSIZE")) == nsets
    return c.call(b"OBJECT", b"ENCODING", b"s:0").decode()


def measure(kind, binary, which, n, cores):
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        p, c = start(kind, binary, port, d, cores)
        try:
            c.call(b"MEMORY", b"PURGE")
            base = settle(p.pid)
            if which == "big":
                encname = load_big(c, n)
            else:
                encname = load_many(c, n // 10, 10)
            after = settle(p.pid)
            c.call(b"MEMORY", b"PURGE")
            purged = settle(p.pid)
        finally:
            p.terminate()
            p.wait()
    return (after - base) / n, (purged - base) / n, encname


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("big", "many", "both"), default="big")
    ap.add_argument("--members", type=int, default=1000000)
    ap.add_argument("--sets", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    ap.add_argument("--cores", type=int, default=1)
    a = ap.parse_args()
    sets = ("big", "many") if a.set == "both" else (a.set,)
    for which in sets:
        n = a.members if which == "big" else a.sets * 10
        if which == "big":
            print("big: one set of %d members m:<i>, %d rounds" % (n, a.rounds))
        else:
            print("many: %d sets of 10 members m:<j>, %d rounds" % (a.sets, a.rounds))
        run_rounds(which, a.rounds, unit="member",
                   one=lambda kind: measure(kind, a.reference if kind == "redis" else a.server, which, n, a.cores))


if __name__ == "__main__":
    main()
