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


LETTERS = bytes(b"abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(256))


def load(c, n, seed=1, key=b"bighash", batch=2000, times=None):
    """HSET n fields "f:%012d" with random 8..16-letter values into key, batch
    fields per command. With times a list, append each HSET's round-trip."""
    rng = random.Random(seed)
    for lo in range(0, n, batch):
        hi = min(n, lo + batch)
        raw = rng.randbytes(16 * (hi - lo)).translate(LETTERS)
        args = []
        for i in range(lo, hi):
            o = 16 * (i - lo)
            args += [b"f:%012d" % i, raw[o:o + 8 + raw[o] % 9]]
        t0 = time.monotonic()
        c.call(b"HSET", key, *args)
        if times is not None:
            times.append(time.monotonic() - t0)
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


def realtime(cpu):
    """Pin the calling process to cpu and make it SCHED_FIFO when allowed, so
    the measuring processes wake as soon as their event happens and what they
    record is the server's delay (and the machine's), not their own queueing
    behind the loader."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        return True
    except (PermissionError, OSError):
        return False


def pinger(port, stop, out, cpu):
    """PING every millisecond until stop is set; send back (start, round-trip)
    pairs. Runs in its own process: in a thread of the loader it would measure
    the loader's hold on the interpreter lock as well."""
    realtime(cpu)
    pc = Conn(port)
    lat = []
    while not stop.is_set():
        t0 = time.monotonic()
        pc.call(b"PING")
        lat.append((t0, time.monotonic() - t0))
        time.sleep(0.001)
    out.put(lat)


def hiccups(stop, out, cpu):
    """The machine's own stalls on one CPU: a SCHED_FIFO process sleeps 1 ms
    in a loop and records (start, overshoot) for every wake-up more than
    0.5 ms late. On a virtual machine the host can take a vCPU away for
    milliseconds; whatever that does to this process it does to the server
    or the pinger on the same CPU, whatever the server's code."""
    realtime(cpu)
    late = []
    while not stop.is_set():
        t0 = time.monotonic()
        time.sleep(0.001)
        over = time.monotonic() - t0 - 0.001
        if over > 0.0005:
            late.append((t0, over))
    out.put(late)


def grow_one(kind, binary, a, d):
    """Grow one hash to a.growth_fields on a fresh server; return the PING
    samples, the hiccups per CPU, the slow log's slowest and the load time."""
    import multiprocessing as mp
    port = free_port()
    p, c = start(kind, binary, port, d, a.cores, a.server_cpu)
    stop = mp.Event()
    q = mp.Queue()
    # The loader and the pinger run on the client CPU, the server alone on
    # its own: on a shared CPU the scheduler's time slices (several ms)
    # would be measured as the server's latency.
    procs = [mp.Process(target=pinger, args=(port, stop, q, a.client_cpu))]
    cpus = sorted({x for x in (a.server_cpu, a.client_cpu) if x is not None})
    hq = {cpu: mp.Queue() for cpu in cpus}
    procs += [mp.Process(target=hiccups, args=(stop, hq[cpu], cpu)) for cpu in cpus]
    for pr in procs:
        pr.start()
    if a.client_cpu is not None:
        os.sched_setaffinity(0, {a.client_cpu})
    # Server-side view: every command slower than 2 ms goes to the slow log.
    c.call(b"CONFIG", b"SET", b"slowlog-log-slower-than", b"2000")
    c.call(b"CONFIG", b"SET", b"slowlog-max-len", b"1024")
    c.call(b"SLOWLOG", b"RESET")
    slow = []
    times = []
    t0 = time.time()
    try:
        load(c, a.growth_fields, key=b"growing", batch=a.batch, times=times)
        took = time.time() - t0
        slow = sorted((int(e[2]) for e in c.call(b"SLOWLOG", b"GET", b"1024")), reverse=True)
    finally:
        stop.set()
        lat = q.get()
        late = {cpu: hq[cpu].get() for cpu in cpus}
        for pr in procs:
            pr.join()
        p.terminate()
        p.wait()
        os.sched_setaffinity(0, range(os.cpu_count()))
    return lat, late, slow, took, times


def growth(a):
    """Grow each server a.growth_runs times, alternating which goes first.
    Every run reports its PINGs, the machine's stalls and the slow log. The
    machine's stalls land at random moments, the server's own pauses (an
    index resize, a new arena block) at the same field counts every run: the
    minimum over the runs of each HSET batch's round-trip keeps the second
    and drops the first. Its maximum over the batches is what the server,
    not the machine, makes a PING wait at worst (a PING waits for at most the
    batch in progress on its worker)."""
    kinds = [k for k in a.growth_servers.split(",") if k]
    best = {k: None for k in kinds}
    with tempfile.TemporaryDirectory() as d:
        for r in range(a.growth_runs):
            for kind in (kinds if r % 2 == 0 else kinds[::-1]):
                binary = a.reference if kind == "redis" else a.server
                lat, late, slow, took, times = grow_one(kind, binary, a, d)
                best[kind] = times if best[kind] is None else [min(x, y) for x, y in zip(best[kind], times)]
                rtt = sorted(x[1] for x in lat)
                n = len(rtt)
                print("run %d %s: growth to %d fields (HSET batches of %d fields) in %.1fs; %d PINGs: median %.2f ms, "
                      "p99 %.2f ms, p99.9 %.2f ms, max %.2f ms"
                      % (r + 1, kind, a.growth_fields, a.batch, took, n, 1e3 * rtt[n // 2], 1e3 * rtt[int(n * 0.99)],
                         1e3 * rtt[int(n * 0.999)], 1e3 * rtt[-1]))
                print("  slowest PINGs (ms): %s" % " ".join("%.1f" % (1e3 * x) for x in rtt[-10:]))
                for cpu, l in sorted(late.items()):
                    worst = sorted((x[1] for x in l), reverse=True)
                    print("  machine stalls on CPU %d (1 ms sleeps of a SCHED_FIFO process woken late): "
                          "%d over 2 ms, slowest (ms): %s"
                          % (cpu, sum(1 for x in worst if x > 0.002),
                             " ".join("%.1f" % (1e3 * x) for x in worst[:5]) or "-"))
                # A PING over 5 ms whose interval overlaps a stall of 2 ms or
                # more on either CPU waited (at least partly) for the machine.
                stalls = [(t, t + o) for l in late.values() for t, o in l if o > 0.002]
                over = [(t, x) for t, x in lat if x > 0.005]
                hit = sum(1 for t, x in over if any(s < t + x and e > t for s, e in stalls))
                print("  PINGs over 5 ms: %d, of which %d overlap a machine stall over 2 ms" % (len(over), hit))
                print("  server side: %d commands over 2 ms (slow log); slowest (ms): %s"
                      % (len(slow), " ".join("%.1f" % (x / 1e3) for x in slow[:10]) or "-"))
                sys.stdout.flush()
    for kind in kinds:
        b = best[kind]
        order = sorted(range(len(b)), key=b.__getitem__, reverse=True)
        srt = sorted(b)
        print("%s: HSET batch round-trip, minimum over %d runs per batch: median %.3f ms, p99.9 %.2f ms, "
              "max %.2f ms; slowest batches (ms @ fields before): %s"
              % (kind, a.growth_runs, 1e3 * srt[len(srt) // 2], 1e3 * srt[int(len(srt) * 0.999)], 1e3 * srt[-1],
                 " ".join("%.2f@%d" % (1e3 * b[i], i * a.batch) for i in order[:6])))


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
    ap.add_argument("--growth-runs", type=int, default=3)
    ap.add_argument("--growth-servers", default="goblin,redis",
                    help="which servers to grow, in order (comma-separated: goblin, redis)")
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    a = ap.parse_args()
    if a.mode == "growth":
        growth(a)
    else:
        throughput(a)


if __name__ == "__main__":
    main()
