#!/usr/bin/env python3
"""Bytes per hash field: goblin-core against redis-server 7.0, side by side.

Two data sets:

  big     one hash of N fields "f:<i>" with values of 8..16 random
          lowercase bytes (fixed seed); default N = 1,000,000
  many    M hashes "h:<k>" of 10 such fields each; default M = 100,000

For each, both servers are started on free loopback ports (no persistence),
their resident memory (VmRSS + HugetlbPages from /proc/PID/status) is read
when empty and again after pipelined HSET batches have loaded the data and
the figure has settled; the difference per field is printed with the
encoding the server reports and the ratio goblin / redis. Rounds alternate
which server goes first; medians are printed.

Freed memory that the allocator keeps (old index tables after a resize,
request buffers) stays resident until jemalloc's decay returns it, which
an idle process only does with jemalloc's background thread. So a second
figure is taken after MEMORY PURGE (both servers support it; Redis runs
the background thread by default, Goblin does not yet).

  python3 benchmarks/hash_memory.py [--set big|many|both] [--fields N]
      [--hashes M] [--rounds 3] [--server build-release/goblin-core]
      [--reference /usr/bin/redis-server] [--cores 1]

Standard library only.
"""

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tlb_arena_benchmark import free_port  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def enc(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        deadline = time.time() + 20
        while True:
            try:
                self.s = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.buf = b""

    def _fill(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise EOFError
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t = line[:1]
        if t in (b"+", b":"):
            return line[1:]
        if t == b"-":
            raise RuntimeError(line.decode())
        if t == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if t == b"*":
            n = int(line[1:])
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)

    def call(self, *args):
        self.s.sendall(enc([a if isinstance(a, bytes) else str(a).encode() for a in args]))
        return self.read()

    def pipeline(self, cmds):
        self.s.sendall(b"".join(enc(c) for c in cmds))
        return [self.read() for _ in cmds]


def resident(pid):
    kb = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "HugetlbPages:")):
                kb += int(line.split()[1])
    return kb * 1024


def settle(pid, window=5):
    """Resident bytes once they stop moving (allocator purges, lazy frees,
    the server's cron finishing index resizes, old tables unmapped by a
    background thread): the last of `window` readings 0.25 s apart that
    all lie within 64 KiB, or the reading after 10 s. (Two readings, 0.25 s,
    used to catch a cron's work half done.)"""
    seen = [resident(pid)]
    for _ in range(40):
        time.sleep(0.25)
        seen.append(resident(pid))
        last = seen[-window:]
        if len(last) == window and max(last) - min(last) < 64 * 1024:
            return seen[-1]
    return seen[-1]


def start(kind, binary, port, workdir, cores):
    if kind == "redis":
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", workdir, "--logfile", ""]
    else:
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--dir", workdir, "--cores", str(cores)]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = Conn(port)
    while True:
        try:
            if c.call("PING") == b"PONG":
                break
        except RuntimeError:
            time.sleep(0.05)
    return p, c


def values(n, lo, hi, seed):
    rng = random.Random(seed)
    letters = b"abcdefghijklmnopqrstuvwxyz"
    return [bytes(rng.choice(letters) for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def load_big(c, vals):
    batch = []
    for i, v in enumerate(vals):
        batch += [b"f:%d" % i, v]
        if len(batch) >= 2000:
            c.call(b"HSET", b"big", *batch)
            batch = []
    if batch:
        c.call(b"HSET", b"big", *batch)
    assert int(c.call(b"HLEN", b"big")) == len(vals)
    return c.call(b"OBJECT", b"ENCODING", b"big").decode()


def load_many(c, vals, per):
    cmds = []
    nh = len(vals) // per
    for k in range(nh):
        args = [b"HSET", b"h:%d" % k]
        for j in range(per):
            args += [b"f:%d" % j, vals[k * per + j]]
        cmds.append(args)
        if len(cmds) >= 500:
            c.pipeline(cmds)
            cmds = []
    if cmds:
        c.pipeline(cmds)
    assert int(c.call(b"DBSIZE")) == nh
    return c.call(b"OBJECT", b"ENCODING", b"h:0").decode()


def measure(kind, binary, which, vals, cores):
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        p, c = start(kind, binary, port, d, cores)
        try:
            c.call(b"MEMORY", b"PURGE")
            base = settle(p.pid)
            if which == "big":
                encname = load_big(c, vals)
            else:
                encname = load_many(c, vals, 10)
            after = settle(p.pid)
            c.call(b"MEMORY", b"PURGE")
            purged = settle(p.pid)
        finally:
            p.terminate()
            p.wait()
    return (after - base) / len(vals), (purged - base) / len(vals), encname


def run_rounds(which, rounds, unit, one):
    """Rounds alternating the servers (redis first in odd rounds); one(kind)
    measures one server and returns (resident B/unit, after MEMORY PURGE,
    encoding). Prints every round and the medians with the ratio."""
    res = {"redis": [], "goblin": []}
    resp = {"redis": [], "goblin": []}
    for r in range(rounds):
        order = ("redis", "goblin") if r % 2 == 0 else ("goblin", "redis")
        for kind in order:
            per, purged, encname = one(kind)
            res[kind].append(per)
            resp[kind].append(purged)
            print("  round %d %-6s %7.2f B/%s resident, %7.2f after MEMORY PURGE (encoding %s)"
                  % (r + 1, kind, per, unit, purged, encname))
            sys.stdout.flush()
    for label, d in (("resident", res), ("after MEMORY PURGE", resp)):
        mr, mg = statistics.median(d["redis"]), statistics.median(d["goblin"])
        print("%s median, %s: redis %.2f B/%s, goblin %.2f B/%s, goblin/redis %.3f"
              % (which, label, mr, unit, mg, unit, mg / mr))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("big", "many", "both"), default="both")
    ap.add_argument("--fields", type=int, default=1000000)
    ap.add_argument("--hashes", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    sets = ("big", "many") if a.set == "both" else (a.set,)
    for which in sets:
        n = a.fields if which == "big" else a.hashes * 10
        vals = values(n, 8, 16, a.seed)
        if which == "big":
            print("big: one hash of %d fields f:<i>, values 8..16 bytes, %d rounds" % (n, a.rounds))
        else:
            print("many: %d hashes of 10 fields f:<j>, values 8..16 bytes, %d rounds" % (a.hashes, a.rounds))
        run_rounds(which, a.rounds, unit="field",
                   one=lambda kind: measure(kind, a.reference if kind == "redis" else a.server, which, vals, a.cores))


if __name__ == "__main__":
    main()
