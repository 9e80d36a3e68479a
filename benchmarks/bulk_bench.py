#!/usr/bin/env python3
"""Commands of a thousand elements on a big keyspace or collection: MSET,
HSET, SADD and ZADD, goblin-core builds and redis-server side by side.

For every kind, round by round (the servers' order alternating), each
server is started alone pinned to --server-cpu, loaded with --preload
elements by the same commands (keys key:N for MSET, fields/members of one
key for the others), then --commands commands of --per elements each are
timed one at a time: about half of their elements new, half already
there (random picks from twice the preloaded range), ZADD scores random.
Reported per server: its CPU time per command (utime + stime from /proc,
all threads, over the timed commands) and the client-side latency
median, p90 and max. The client runs on --client-cpu.

The kind tmpset is a set made and dropped: SADD tmp (--per members),
SUNIONSTORE tmp2 tmp and DEL tmp tmp2 sent in one write and timed as one
(a pipeline whose commands outlast a worker's turn; tables allocated and
freed each time); nothing is preloaded for it.

  python3 benchmarks/bulk_bench.py [--servers goblin=PATH,old=PATH,redis=PATH]
      [--kinds mset,hset,sadd,zadd] [--preload 2000000] [--rounds 3]

Standard library only.
"""
import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tlb_arena_benchmark import free_port  # noqa: E402


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def command(kind, rnd, per, pick):
    """One command of per elements; pick() gives element numbers."""
    if kind == "mset":
        a = ["MSET"]
        for _ in range(per):
            n = pick()
            a += ["key:%010d" % n, "v%d" % n]
    elif kind == "hset":
        a = ["HSET", "h"]
        for _ in range(per):
            a += ["f%010d" % pick(), "x"]
    elif kind == "sadd":
        a = ["SADD", "s"]
        for _ in range(per):
            a.append("m%010d" % pick())
    elif kind == "tmpset":
        return encode(["SADD", "tmp"] + ["m%010d" % pick() for _ in range(per)]) + \
            encode(["SUNIONSTORE", "tmp2", "tmp"]) + encode(["DEL", "tmp", "tmp2"])
    else:
        a = ["ZADD", "z"]
        for _ in range(per):
            a += [rnd.randrange(10**9), "m%010d" % pick()]
    return encode(a)


def replies(kind):
    return 3 if kind == "tmpset" else 1


def cpu_ticks(pid):
    st = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(st[11]) + int(st[12])


def read_line(f):
    line = f.readline()
    if not line or line[:1] == b"-":
        raise RuntimeError("server said %r" % line)
    return line


def run_one(name, path, kind, args):
    port = free_port()
    argv = ["taskset", "-c", str(args.server_cpu), path, "--port", str(port), "--save", "", "--appendonly", "no"]
    if name != "redis":
        argv += ["--cores", "1"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                s = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("%s did not start" % path)
        f = s.makefile("rb")
        rnd = random.Random(1)
        seq = iter(range(10**12))
        for _ in range(0 if kind == "tmpset" else args.preload // args.per):
            s.sendall(command(kind, rnd, args.per, lambda: next(seq)))
            read_line(f)
        time.sleep(0.3)  # the cron notices the size (prefetching)
        rnd = random.Random(7)
        cmds = [command(kind, rnd, args.per, lambda: rnd.randrange(2 * args.preload)) for _ in range(args.commands)]
        t0 = cpu_ticks(proc.pid)
        lat = []
        for c in cmds:
            a = time.perf_counter()
            s.sendall(c)
            for _ in range(replies(kind)):
                read_line(f)
            lat.append(time.perf_counter() - a)
        cpu_ms = (cpu_ticks(proc.pid) - t0) * 1000.0 / os.sysconf("SC_CLK_TCK") / len(cmds)
        s.close()
        lat.sort()
        return cpu_ms, lat[len(lat) // 2] * 1e3, lat[len(lat) * 9 // 10] * 1e3, lat[-1] * 1e3
    finally:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="goblin=build-release/goblin-core,redis=redis-server",
                    help="name=path,...; the name 'redis' runs without --cores")
    ap.add_argument("--kinds", default="mset,hset,sadd,zadd", help="of mset,hset,sadd,zadd,tmpset")
    ap.add_argument("--preload", type=int, default=2000000)
    ap.add_argument("--per", type=int, default=1000)
    ap.add_argument("--commands", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.client_cpu})
    servers = [tuple(x.split("=", 1)) for x in args.servers.split(",")]
    print("bulk_bench: %s UTC, %d CPUs; %d commands of %d elements after %d preloaded; %d rounds"
          % (time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), os.cpu_count(), args.commands, args.per,
             args.preload, args.rounds))
    res = {}
    for kind in args.kinds.split(","):
        for r in range(args.rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for name, path in order:
                res.setdefault((kind, name), []).append(run_one(name, path, kind, args))
                sys.stderr.write(".")
                sys.stderr.flush()
    sys.stderr.write("\n")
    print("| command | server | server CPU ms per command (median) | latency median ms | p90 ms | max ms (worst round) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for kind in args.kinds.split(","):
        for name, _ in servers:
            rows = res[(kind, name)]
            print("| %s of %d | %s | %.3f | %.2f | %.2f | %.2f |" % (
                kind.upper(), args.per, name, statistics.median(x[0] for x in rows),
                statistics.median(x[1] for x in rows), statistics.median(x[2] for x in rows),
                max(x[3] for x in rows)))


if __name__ == "__main__":
    main()
