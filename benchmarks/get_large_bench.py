#!/usr/bin/env python3
"""GET of large values: time to first byte and throughput, goblin-core
against redis-server 7.0 holding the same data.

Three servers run side by side, each pinned to the same CPU:

  redis        redis-server 7.0, values in RAM
  goblin-ram   goblin-core without --ssd-dir: heads in the head pool, tails
               in RAM
  goblin-ssd   goblin-core --ssd-dir DIR (on the disk under --ssd-base):
               the 256 KiB head in RAM, the tail read from the SSD extent
               with O_DIRECT io_uring reads as the reply streams

Each holds --objects values of every size (64K, 256K and 1M by default;
random bytes, the same on every server). For every round, the servers take
turns (the order rotates) and for every size:

  ttfb        one connection, --requests GETs of random keys, one at a
              time: "first byte" is the first recv() of the reply
              (header included), "payload" the first byte of the value
              itself, "complete" the last byte. Medians and p99 in us.
  throughput  --conns connections (one client process each, all pinned to
              --client-cpu) GET random keys back to back for --seconds;
              GETs/s and MiB/s of payload.

The table prints the medians over rounds and the ratio to redis. This
measures speed on this machine (a VM disk); NUMA placement is measured in
the VM (tests/numa), never as speed.

  python3 benchmarks/get_large_bench.py [--sizes 64K,256K,1M] [--objects 32]
      [--rounds 3] [--requests 300] [--conns 8] [--seconds 2]
      [--server-cpu 0] [--client-cpu 1] [--ssd-base /var/tmp]

Standard library only (plus taskset).
"""

import argparse
import multiprocessing
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hash_memory import free_port  # noqa: E402


def parse_size(s):
    s = s.strip().upper()
    mult = {"K": 1024, "M": 1024 * 1024}.get(s[-1], 1)
    return int(s.rstrip("KM")) * mult


class Conn:
    """Minimal RESP client that can time the first byte of a reply."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    @staticmethod
    def enc(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def _fill(self):
        chunk = self.s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("connection closed")
        self.buf += chunk

    def line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                ln = bytes(self.buf[:i])
                del self.buf[: i + 2]
                return ln
            self._fill()

    def reply(self):
        ln = self.line()
        if ln[:1] == b"$":
            n = int(ln[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            v = bytes(self.buf[:n])
            del self.buf[: n + 2]
            return v
        if ln[:1] == b"-":
            raise RuntimeError(ln.decode())
        return ln[1:]

    def call(self, *args):
        self.s.sendall(self.enc(*args))
        return self.reply()

    def timed_get(self, key):
        """(first byte, first payload byte, complete) in ns after sending."""
        assert not self.buf
        t0 = time.perf_counter_ns()
        self.s.sendall(self.enc("GET", key))
        self._fill()
        t1 = time.perf_counter_ns()
        while b"\r\n" not in self.buf:
            self._fill()
        i = self.buf.find(b"\r\n")
        n = int(self.buf[1:i])
        del self.buf[: i + 2]
        if not self.buf:
            self._fill()
        t2 = time.perf_counter_ns()
        got = len(self.buf)
        view = bytearray(1 << 20)
        while got < n + 2:
            r = self.s.recv_into(view)
            if r == 0:
                raise RuntimeError("connection closed")
            got += r
        t3 = time.perf_counter_ns()
        self.buf = bytearray()
        return t1 - t0, t2 - t0, t3 - t0


def start(kind, binary, port, workdir, cpu, ssd_dir):
    if kind == "redis":
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", workdir, "--logfile", "", "--proto-max-bulk-len", "512mb"]
    else:
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir,
                "--cores", "1"]
        if ssd_dir:
            argv += ["--ssd-dir", ssd_dir]
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu)] + argv
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while True:
        try:
            c = Conn(port)
            if c.call("PING") == b"PONG":
                return p, c
        except (OSError, RuntimeError):
            if time.time() > deadline or p.poll() is not None:
                raise RuntimeError("%s did not start" % kind)
            time.sleep(0.05)


def worker(port, keys, seconds, seed, out):
    rng = random.Random(seed)
    c = Conn(port)
    n = 0
    nbytes = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        v = c.call("GET", rng.choice(keys))
        n += 1
        nbytes += len(v)
    out.put((n, nbytes))


def throughput(port, keys, conns, seconds, seed):
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=worker, args=(port, keys, seconds, seed + i, q)) for i in range(conns)]
    t0 = time.perf_counter()
    for p in ps:
        p.start()
    res = [q.get() for _ in ps]
    for p in ps:
        p.join()
    dt = max(seconds, time.perf_counter() - t0 - 0.05)
    n = sum(r[0] for r in res)
    b = sum(r[1] for r in res)
    return n / seconds, b / seconds / (1 << 20), dt


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--sizes", default="64K,256K,1M")
    ap.add_argument("--objects", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--ssd-base", default="/var/tmp")
    a = ap.parse_args()
    if a.client_cpu is not None:
        os.sched_setaffinity(0, {a.client_cpu})
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    rng = random.Random(7)
    data = {}
    for sz in sizes:
        for i in range(a.objects):
            data["obj:%d:%d" % (sz, i)] = rng.randbytes(sz)
    kinds = ["redis", "goblin-ram", "goblin-ssd"]
    procs, conns = {}, {}
    tmp = tempfile.mkdtemp(prefix="getbench-")
    ssd = tempfile.mkdtemp(prefix="getbench-ssd-", dir=a.ssd_base)
    os.rmdir(ssd)  # goblin creates and marks it
    results = {}  # (kind, size, metric) -> [per-round values]
    try:
        for kind in kinds:
            port = free_port()
            wd = os.path.join(tmp, kind)
            os.mkdir(wd)
            binary = a.reference if kind == "redis" else a.server
            p, c = start(kind, binary, port, wd, a.server_cpu, ssd if kind == "goblin-ssd" else None)
            procs[kind] = (p, port)
            conns[kind] = c
            for k, v in data.items():
                assert c.call("SET", k, v) == b"OK"
            for k in list(data)[:: max(1, len(data) // 8)]:
                assert c.call("GET", k) == data[k], "%s returned a different value for %s" % (kind, k)
        if True:
            info = conns["goblin-ssd"].call("INFO", "goblin").decode()
            line = [l for l in info.split("\r\n") if l.startswith("objstore_ssd:")]
            print("goblin-ssd:", line[0] if line else "?", "dir", ssd)
        for rnd in range(a.rounds):
            order = kinds[rnd % len(kinds):] + kinds[: rnd % len(kinds)]
            for kind in order:
                c = conns[kind]
                port = procs[kind][1]
                for sz in sizes:
                    keys = ["obj:%d:%d" % (sz, i) for i in range(a.objects)]
                    r2 = random.Random(rnd * 1000 + sz)
                    fb, pl, done = [], [], []
                    for _ in range(a.requests):
                        t = c.timed_get(r2.choice(keys))
                        fb.append(t[0] / 1000)
                        pl.append(t[1] / 1000)
                        done.append(t[2] / 1000)
                    res = results.setdefault((kind, sz), {})
                    for name, xs in (("fb50", fb), ("fb99", fb), ("pl50", pl), ("done50", done), ("done99", done)):
                        p = 0.99 if name.endswith("99") else 0.5
                        res.setdefault(name, []).append(pct(xs, p))
                    gets, mib, _ = throughput(port, keys, a.conns, a.seconds, rnd * 7919 + sz)
                    res.setdefault("gets", []).append(gets)
                    res.setdefault("mib", []).append(mib)
            print("round %d done" % (rnd + 1), file=sys.stderr)
        info = conns["goblin-ssd"].call("INFO", "goblin").decode()
        line = [l for l in info.split("\r\n") if l.startswith("objstore_ssd:")]
        print("goblin-ssd after:", line[0] if line else "?")
    finally:
        for kind, (p, _) in procs.items():
            p.terminate()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(ssd, ignore_errors=True)

    med = statistics.median
    print()
    print("GET of large values, medians over %d rounds (%d objects per size, %d serial GETs for latency, "
          "%d connections x %.1f s for throughput)" % (a.rounds, a.objects, a.requests, a.conns, a.seconds))
    print("%-10s %-11s %10s %10s %10s %11s %11s %10s %9s %8s" % (
        "size", "server", "1st byte", "1st b p99", "payload", "complete", "compl p99", "GETs/s", "MiB/s", "vs redis"))
    for sz in sizes:
        base = med(results[("redis", sz)]["gets"])
        for kind in kinds:
            r = results[(kind, sz)]
            print("%-10s %-11s %8.0fus %8.0fus %8.0fus %9.0fus %9.0fus %10.0f %9.0f %7.2fx" % (
                "%dK" % (sz // 1024), kind, med(r["fb50"]), med(r["fb99"]), med(r["pl50"]), med(r["done50"]),
                med(r["done99"]), med(r["gets"]), med(r["mib"]), med(r["gets"]) / base))


if __name__ == "__main__":
    main()
