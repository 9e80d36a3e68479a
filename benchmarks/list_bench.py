#!/usr/bin/env python3
"""List throughput: goblin-core against redis-server 7.0, interleaved.

Each round starts one server pinned to one CPU (taskset), runs
redis-benchmark pinned to another CPU with -P 16 -c 50 for LPUSH, RPUSH,
LPOP, RPOP, LRANGE_100 and LRANGE_600 (with SET and GET as a baseline of
the shared command path), then fills a 1,000,000-element list and
benchmarks LINDEX of its middle element, and stops the server. Rounds
alternate which server goes first (these machines are shared and noisy);
medians and the goblin/redis ratio are printed per test.

  python3 benchmarks/list_bench.py [--rounds 3] [--requests 200000]
      [--server-cpu 0] [--client-cpu 1] [--cores 1]

Standard library only (plus redis-benchmark and taskset).
"""

import argparse
import csv
import io
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tlb_arena_benchmark import free_port  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = ["LPUSH", "RPUSH", "LPOP", "RPOP", "LRANGE_100", "LRANGE_600", "LINDEX_MIDDLE_1M", "SET", "GET"]


def wait_ping(port):
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"PING\r\n")
            if s.recv(64).startswith(b"+PONG"):
                s.close()
                return
            s.close()
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError("server on port %d did not answer" % port)


def fill(port, n):
    """RPUSH n short elements to biglist, pipelined."""
    s = socket.create_connection(("127.0.0.1", port))
    batch = 1000
    sent = 0
    pending = 0
    buf = b""
    while sent < n:
        k = min(batch, n - sent)
        args = [b"RPUSH", b"biglist"] + [b"element:%d" % (sent + i) for i in range(k)]
        s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
        sent += k
        pending += 1
        while pending:
            d = s.recv(65536)
            buf += d
            pending -= buf.count(b"\r\n")
            buf = b""
    s.close()


def bench(port, cpu, args, requests):
    cmd = ["taskset", "-c", str(cpu), "redis-benchmark", "-h", "127.0.0.1", "-p", str(port),
           "-P", "16", "-c", "50", "-n", str(requests), "--csv"] + args
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    res = {}
    for row in csv.reader(io.StringIO(out)):
        if not row or row[0] == "test":
            continue
        res[row[0]] = float(row[1])
    return res


def run_one(kind, binary, a):
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        if kind == "redis":
            argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--dir", d, "--logfile", ""]
        else:
            argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--dir", d, "--cores", str(a.cores)]
        p = subprocess.Popen(["taskset", "-c", a.server_cpu] + argv,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ping(port)
            res = {}
            r = bench(port, a.client_cpu, ["-t", "set,get,lpush,rpush,lpop,rpop,lrange_100,lrange_600"], a.requests)
            for k, v in r.items():
                name = k.split(" ")[0]
                if name.startswith("LRANGE_"):
                    name = "_".join(name.split("_")[:2])
                res[name] = v
            fill(port, 1000000)
            r = bench(port, a.client_cpu, ["LINDEX", "biglist", "500000"], a.requests)
            res["LINDEX_MIDDLE_1M"] = list(r.values())[0]
        finally:
            p.terminate()
            p.wait()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--client-cpu", default="1")
    ap.add_argument("--cores", type=int, default=1)
    a = ap.parse_args()
    got = {"redis": {t: [] for t in TESTS}, "goblin": {t: [] for t in TESTS}}
    for rnd in range(a.rounds):
        order = ("redis", "goblin") if rnd % 2 == 0 else ("goblin", "redis")
        for kind in order:
            res = run_one(kind, a.reference if kind == "redis" else a.server, a)
            for t in TESTS:
                if t in res:
                    got[kind][t].append(res[t])
            print("round %d %-6s %s" % (rnd + 1, kind,
                                         "  ".join("%s=%.0f" % (t, res.get(t, 0)) for t in TESTS)))
            sys.stdout.flush()
    print("\n%-18s %12s %12s %8s" % ("test (req/s)", "redis", "goblin", "ratio"))
    for t in TESTS:
        r, g = got["redis"][t], got["goblin"][t]
        if not r or not g:
            continue
        mr, mg = statistics.median(r), statistics.median(g)
        print("%-18s %12.0f %12.0f %8.2f" % (t, mr, mg, mg / mr))


if __name__ == "__main__":
    main()
