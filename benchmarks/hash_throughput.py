#!/usr/bin/env python3
"""HSET / HGET throughput on a 1M-field hash, and PING latency while a hash
grows: goblin-core against redis-server 7.0.

throughput (default)
    Both servers run pinned to the same CPU (taskset -c SERVER_CPU), each
    is loaded with one hash of N fields "f:%012d" (redis-benchmark's
    __rand_int__ spelling, so random fields hit) with 8..16 byte values, and
    redis-benchmark, pinned to another CPU, runs

        redis-benchmark -P 16 -c 50 -r N -n REQUESTS HSET|HGET bighash f:__rand_int__ ...

    against one server then the other, alternating which goes first, for
    several rounds. Medians of the requests/s and the ratio goblin / redis
    are printed, and the server's CPU time per request (utime + stime from
    /proc/PID/stat), which a busy shared machine disturbs much less than
    the request rate. HSET writes 12-byte values over 8..16-byte ones, so it also
    exercises the arena's dead bytes and compaction.

growth
    One goblin-core; a loader sends HSET batches (--batch fields each) into
    one hash up to --growth-fields fields while another process sends PING
    every millisecond on its own connection and records the round-trips;
    prints their distribution and the slowest ones, and the commands the
    server's slow log caught over 2 ms (server time, free of the client
    processes' scheduling). A PING can wait for at most the HSET in progress
    on its worker, so batches are kept small.

  python3 benchmarks/hash_throughput.py [--fields 1000000] [--requests 2000000]
      [--rounds 3] [--server-cpu 0] [--client-cpu 1] [--cores 1]
  python3 benchmarks/hash_throughput.py --mode growth [--growth-fields 10000000]
      [--batch 100] [--server-cpu 0]

Standard library only (plus redis-benchmark and taskset).
"""

import argparse
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hash_memory import Conn, free_port  # noqa: E402


def start(kind, binary, port, workdir, cores, cpu):
    if kind == "redis":
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", workdir, "--logfile", ""]
    else:
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--dir", workdir, "--cores", str(cores)]
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu)] + argv
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = Conn(port)
    while True:
        try:
            if c.call("PING") == b"PONG":
                break
        except RuntimeError:
            time.sleep(0.05)
    return p, c


def load(c, n, seed=1, key=b"bighash", batch=2000):
    rng = random.Random(seed)
    letters = b"abcdefghijklmnopqrstuvwxyz"
    args = []
    for i in range(n):
        args += [b"f:%012d" % i, bytes(rng.choice(letters) for _ in range(rng.randint(8, 16)))]
        if len(args) >= 2 * batch:
            c.call(b"HSET", key, *args)
            args = []
    if args:
        c.call(b"HSET", key, *args)
    assert int(c.call(b"HLEN", key)) == n


def bench(port, cmd, n, requests, cpu):
    argv = ["redis-benchmark", "-p", str(port), "-P", "16", "-c", "50", "-r", str(n),
            "-n", str(requests), "-q"]
    if cmd == "hset":
        argv += ["hset", "bighash", "f:__rand_int__", "__rand_int__"]
    else:
        argv += ["hget", "bighash", "f:__rand_int__"]
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu)] + argv
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    m = re.findall(r"([0-9.]+) requests per second", out)
    if not m:
        raise RuntimeError("redis-benchmark output: %r" % out)
    return float(m[-1])


def cpu_seconds(pid):
    """User + system CPU time of a process (all its threads)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def throughput(a):
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        ports = {"redis": free_port(), "goblin": free_port()}
        procs = {}
        try:
            for kind, d in (("redis", d1), ("goblin", d2)):
                binary = a.reference if kind == "redis" else a.server
                p, c = start(kind, binary, ports[kind], d, a.cores, a.server_cpu)
                procs[kind] = p
                t0 = time.time()
                load(c, a.fields)
                print("loaded %s: %d fields in %.1fs (encoding %s)"
                      % (kind, a.fields, time.time() - t0,
                         c.call(b"OBJECT", b"ENCODING", b"bighash").decode()))
                sys.stdout.flush()
            res = {(k, cmd): [] for k in ports for cmd in ("hset", "hget")}
            cpu = {(k, cmd): [] for k in ports for cmd in ("hset", "hget")}
            for r in range(a.rounds):
                for cmd in ("hset", "hget"):
                    order = ("redis", "goblin") if r % 2 == 0 else ("goblin", "redis")
                    for kind in order:
                        c0 = cpu_seconds(procs[kind].pid)
                        rps = bench(ports[kind], cmd, a.fields, a.requests, a.client_cpu)
                        us = (cpu_seconds(procs[kind].pid) - c0) * 1e6 / a.requests
                        res[(kind, cmd)].append(rps)
                        cpu[(kind, cmd)].append(us)
                        print("  round %d %-4s %-6s %10.0f requests/s  %.2f us server CPU/request"
                              % (r + 1, cmd, kind, rps, us))
                        sys.stdout.flush()
            for cmd in ("hset", "hget"):
                mr = statistics.median(res[("redis", cmd)])
                mg = statistics.median(res[("goblin", cmd)])
                cr = statistics.median(cpu[("redis", cmd)])
                cg = statistics.median(cpu[("goblin", cmd)])
                print("%s median: redis %.0f/s, goblin %.0f/s, goblin/redis %.3f; server CPU/request: "
                      "redis %.2f us, goblin %.2f us" % (cmd, mr, mg, mg / mr, cr, cg))
        finally:
            for p in procs.values():
                p.terminate()
                p.wait()


def pinger(port, stop, out):
    """PING every millisecond until stop is set; send the round-trips back.
    Runs in its own process: in a thread of the loader it would measure the
    loader's hold on the interpreter lock as well."""
    pc = Conn(port)
    lat = []
    while not stop.is_set():
        t0 = time.perf_counter()
        pc.call(b"PING")
        lat.append(time.perf_counter() - t0)
        time.sleep(0.001)
    out.put(lat)


def growth(a):
    import multiprocessing as mp
    with tempfile.TemporaryDirectory() as d:
        port = free_port()
        p, c = start("goblin", a.server, port, d, a.cores, a.server_cpu)
        stop = mp.Event()
        q = mp.Queue()
        pr = mp.Process(target=pinger, args=(port, stop, q))
        pr.start()
        t0 = time.time()
        # Server-side view: every command slower than 2 ms goes to the slow
        # log, so a slow PING round-trip can be told apart from time the
        # server really spent in one command (vs. scheduling on a busy box).
        c.call(b"CONFIG", b"SET", b"slowlog-log-slower-than", b"2000")
        c.call(b"CONFIG", b"SET", b"slowlog-max-len", b"1024")
        c.call(b"SLOWLOG", b"RESET")
        slow = []
        try:
            load(c, a.growth_fields, key=b"growing", batch=a.batch)
            slow = sorted((int(e[2]) for e in c.call(b"SLOWLOG", b"GET", b"1024")), reverse=True)
        finally:
            stop.set()
            lat = q.get()
            pr.join()
            p.terminate()
            p.wait()
        lat.sort()
        print("growth to %d fields (HSET batches of %d fields) in %.1fs; %d PINGs: median %.2f ms, "
              "p99 %.2f ms, p99.9 %.2f ms, max %.2f ms"
              % (a.growth_fields, a.batch, time.time() - t0, len(lat), 1e3 * lat[len(lat) // 2],
                 1e3 * lat[int(len(lat) * 0.99)], 1e3 * lat[int(len(lat) * 0.999)], 1e3 * lat[-1]))
        print("slowest PINGs (ms): %s" % " ".join("%.1f" % (1e3 * x) for x in lat[-10:]))
        print("server-side: %d commands over 2 ms (slow log); slowest (ms): %s"
              % (len(slow), " ".join("%.1f" % (x / 1e3) for x in slow[:10]) or "-"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("throughput", "growth"), default="throughput")
    ap.add_argument("--fields", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=2000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--growth-fields", type=int, default=10000000)
    ap.add_argument("--batch", type=int, default=100, help="fields per HSET while growing")
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    a = ap.parse_args()
    if a.mode == "growth":
        growth(a)
    else:
        throughput(a)


if __name__ == "__main__":
    main()
