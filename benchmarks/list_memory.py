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
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


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

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(1 << 16)
            if not d:
                raise EOFError
            self.buf += d
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
                self.buf += self.s.recv(1 << 16)
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if t == b"*":
            return [self.read() for _ in range(int(line[1:]))]
        raise RuntimeError("unexpected reply %r" % line)

    def call(self, *args):
        self.s.sendall(enc([a if isinstance(a, bytes) else str(a).encode() for a in args]))
        return self.read()


def resident(pid):
    kb = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "HugetlbPages:")):
                kb += int(line.split()[1])
    return kb * 1024


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
