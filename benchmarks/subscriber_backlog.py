#!/usr/bin/env python3
"""A subscriber that stays behind: server memory, goblin-core against redis-server 7.0.

A subscriber is kept LEAD messages behind its publisher (LEAD * SIZE bytes,
more than the loopback socket buffers hold) and then reads in step with it:
the publisher sends ten messages, the subscriber reads ten, for SECONDS.
The backlog stays the same all along; what the server holds for it should
too. Printed per server: the bytes sent to the subscriber, the growth of
the server's resident memory (VmRSS + HugetlbPages) over the empty server,
and messages per second. Both servers run with client-output-buffer-limit
"pubsub 0 0 0" (no limit: the backlog is the point). Rounds alternate which
server goes first; medians are printed.

  python3 benchmarks/subscriber_backlog.py [--seconds 10] [--lead 5000]
      [--size 4000] [--rounds 3] [--server build-release/goblin-core]
      [--reference /usr/bin/redis-server] [--cores 1]

Standard library only.
"""

import argparse
import os
import socket
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hash_memory import REPO, free_port, resident, settle, start  # noqa: E402


def readn(sock, n):
    while n:
        b = sock.recv(min(n, 1 << 20))
        if not b:
            raise RuntimeError("connection closed")
        n -= len(b)


def run(kind, binary, cores, seconds, lead, size):
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        p, c = start(kind, binary, port, d, cores)
        try:
            c.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
            base = settle(p.pid)
            sub = socket.create_connection(("127.0.0.1", port))
            pub = socket.create_connection(("127.0.0.1", port))
            sub.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nbl\r\n")
            readn(sub, len(b"*3\r\n$9\r\nsubscribe\r\n$2\r\nbl\r\n:1\r\n"))
            one = b"*3\r\n$7\r\nPUBLISH\r\n$2\r\nbl\r\n$%d\r\n%s\r\n" % (size, b"x" * size)
            msg = len(b"*3\r\n$7\r\nmessage\r\n$2\r\nbl\r\n$%d\r\n" % size) + size + 2
            for _ in range(lead):
                pub.sendall(one)
                readn(pub, 4)  # ":1\r\n"
            t0 = time.time()
            n = 0
            while time.time() - t0 < seconds:
                pub.sendall(one * 10)
                readn(pub, 40)
                readn(sub, 10 * msg)
                n += 10
            took = time.time() - t0
            grown = resident(p.pid) - base
            readn(sub, lead * msg)
            sub.close()
            pub.close()
        finally:
            p.terminate()
            p.wait()
    return (n + lead) * msg, grown, n / took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--lead", type=int, default=5000)
    ap.add_argument("--size", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    ap.add_argument("--cores", type=int, default=1)
    a = ap.parse_args()
    res = {"goblin": [], "redis": []}
    for r in range(a.rounds):
        order = ["goblin", "redis"] if r % 2 == 0 else ["redis", "goblin"]
        for kind in order:
            binary = a.server if kind == "goblin" else a.reference
            sent, grown, rate = run(kind, binary, a.cores, a.seconds, a.lead, a.size)
            res[kind].append((sent, grown, rate))
            print("round %d %-6s sent %6.0f MB  resident +%7.1f MB  %8.0f messages/s"
                  % (r + 1, kind, sent / 1e6, grown / 1e6, rate), flush=True)
    print("backlog %.1f MB (%d messages of %d bytes), %g s in step" % (a.lead * a.size / 1e6, a.lead, a.size,
                                                                      a.seconds))
    for kind in ("goblin", "redis"):
        v = res[kind]
        print("%-6s median: sent %6.0f MB, resident +%7.1f MB, %8.0f messages/s"
              % (kind, statistics.median(x[0] for x in v) / 1e6, statistics.median(x[1] for x in v) / 1e6,
                 statistics.median(x[2] for x in v)))


if __name__ == "__main__":
    main()
