#!/usr/bin/env python3
"""Bytes per element: goblin-core against redis-server 7.0, same data.

Data sets (all values deterministic, the same bytes sent to both servers):

  hash      one hash, 1,000,000 fields "field:<n>", 16-byte values
  zset      one zset, 1,000,000 members "member:<n>", score n / 7
  list      one list, 1,000,000 elements "element:<n>" (RPUSH)
  set       one set, 1,000,000 members "member:<n>" (strings: no intset)
  strings   1,000,000 keys "key:<n>", 100-byte values (MSET); the values
            repeat a 16-character hex word, so they compress (Goblin keeps
            such values LZF-compressed in its small-object arena)
  rstrings  the same with 100 pseudo-random bytes per value (do not
            compress: what plain storage costs)
  kstrings  rstrings with the keys "k:<n>" (the strings goal's data set)
  smallhash 100,000 hashes "hash:<k>" of 10 fields "f0".."f9", 16-byte
            values (small: listpack in Redis, packed block in Goblin);
            an element is a field, the per-key figure is printed too

For each data set a fresh pair of servers is started concurrently on free
loopback ports (no persistence, goblin --cores 1), with --pin on the same
CPU(s). Resident memory is VmRSS + HugetlbPages from /proc/PID/status (huge
pages are not in VmRSS): read on the empty server, again after the pipelined
load (1000 elements per command) has settled, and once more after
MEMORY PURGE (jemalloc returns freed pages; Redis runs jemalloc's background
thread, Goblin does not yet, so the settled figure can include freed but
unreturned memory such as an old index table after a resize). Printed per
data set and server: bytes per element above the empty server for both
readings, the ratio goblin/redis, and its goal (SETS below).

  ./benchmarks/memory.py [--sets hash,zset,...] [--scale 0.1] [--rounds 1]
                         [--chart docs/img/memory.png] [--json FILE]

Python 3 standard library only (imports the helpers of tlb_arena_benchmark.py).
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlb_arena_benchmark as tb  # noqa: E402

PER_CMD = 1000
PER_BATCH = 20

# name: (elements at scale 1, goal ratio goblin/redis or None)
SETS = {
    "hash": (1_000_000, 0.45),
    "zset": (1_000_000, 0.45),
    "list": (1_000_000, 1.0),
    "set": (1_000_000, 0.5),
    "strings": (1_000_000, 0.6),
    "rstrings": (1_000_000, None),
    "kstrings": (1_000_000, 0.7),
    "smallhash": (1_000_000, None),      # 100,000 hashes x 10 fields
}
LABELS = {
    "hash": "1M-field hash", "zset": "1M-member zset", "list": "1M-element list",
    "set": "1M-member set", "strings": "1M strings (100 B)", "rstrings": "1M strings (100 random B)",
    "kstrings": "1M strings k:<n> (100 random B)",
    "smallhash": "100K hashes x 10 (per field)",
}


def val(i, n):
    """n deterministic bytes for element i."""
    h = (i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    s = b"%016x" % h
    return (s * (n // 16 + 1))[:n]


def rval(i, n):
    """n pseudo-random bytes for element i (splitmix64 stream)."""
    out = bytearray()
    x = (i * 0x9E3779B97F4A7C15 + 1) & 0xFFFFFFFFFFFFFFFF
    while len(out) < n:
        x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        out += (z ^ (z >> 31)).to_bytes(8, "little")
    return bytes(out[:n])


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def batches(name, n):
    """Yields (bytes, ncommands) loading data set name with n elements."""
    i = 0
    while i < n:
        parts, ncmd = [], 0
        while ncmd < PER_BATCH and i < n:
            if name == "smallhash":
                # PER_CMD fields per batch slot = PER_CMD/10 HSET commands of 10 fields
                k = min(PER_CMD, n - i)
                for h in range(i // 10, (i + k) // 10):
                    parts.append(b"*22\r\n$4\r\nHSET\r\n" + bulk(b"hash:%d" % h) +
                                 b"".join(bulk(b"f%d" % f) + bulk(val(h * 10 + f, 16)) for f in range(10)))
                    ncmd += 1
                i += k
                continue
            k = min(PER_CMD, n - i)
            r = range(i, i + k)
            if name == "hash":
                head = b"*%d\r\n$4\r\nHSET\r\n$8\r\nmem:hash\r\n" % (2 + 2 * k)
                body = b"".join(bulk(b"field:%d" % j) + bulk(val(j, 16)) for j in r)
            elif name == "zset":
                head = b"*%d\r\n$4\r\nZADD\r\n$8\r\nmem:zset\r\n" % (2 + 2 * k)
                body = b"".join(bulk(repr(j / 7).encode()) + bulk(b"member:%d" % j) for j in r)
            elif name == "list":
                head = b"*%d\r\n$5\r\nRPUSH\r\n$8\r\nmem:list\r\n" % (2 + k)
                body = b"".join(bulk(b"element:%d" % j) for j in r)
            elif name == "set":
                head = b"*%d\r\n$4\r\nSADD\r\n$7\r\nmem:set\r\n" % (2 + k)
                body = b"".join(bulk(b"member:%d" % j) for j in r)
            elif name == "strings":
                head = b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * k)
                body = b"".join(bulk(b"key:%d" % j) + bulk(val(j, 100)) for j in r)
            elif name == "rstrings":
                head = b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * k)
                body = b"".join(bulk(b"key:%d" % j) + bulk(rval(j, 100)) for j in r)
            elif name == "kstrings":
                head = b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * k)
                body = b"".join(bulk(b"k:%d" % j) + bulk(rval(j, 100)) for j in r)
            else:
                raise ValueError(name)
            parts.append(head + body)
            i += k
            ncmd += 1
        yield b"".join(parts), ncmd


def check(conn, name, n):
    if name == "hash":
        got = conn.call("HLEN", "mem:hash")
    elif name == "zset":
        got = conn.call("ZCARD", "mem:zset")
    elif name == "list":
        got = conn.call("LLEN", "mem:list")
    elif name == "set":
        got = conn.call("SCARD", "mem:set")
    elif name in ("strings", "rstrings", "kstrings"):
        got = conn.call("DBSIZE")
    else:
        got = conn.call("DBSIZE") * 10
    if got != n:
        raise RuntimeError("%s holds %s elements, expected %d" % (name, got, n))


def settle(pids, wait=1.0, rounds=10):
    """Resident bytes once two reads 0.5 s apart agree within 64 KiB."""
    time.sleep(wait)
    last = [tb.resident(p) for p in pids]
    for _ in range(rounds):
        time.sleep(0.5)
        cur = [tb.resident(p) for p in pids]
        if all(abs(a - b) < 65536 for a, b in zip(cur, last)):
            return cur
        last = cur
    return last


def measure(args, name, n, srv_cpus, cleanup):
    gob = cleanup.server(tb.Server(args.goblin, ["--cores", "1"] + args.goblin_arg, srv_cpus, name="goblin"))
    red = cleanup.server(tb.Server(args.redis, ["--appendonly", "no"], srv_cpus, name="redis"))
    try:
        gob.start()
        red.start()
        pids = [gob.pid, red.pid]
        empty = settle(pids, wait=0.5)
        el = tb.load_all([gob, red], batches(name, n))
        for s in (gob, red):
            check(s.conn, name, n)
        loaded = settle(pids)
        for s in (gob, red):
            s.conn.call("MEMORY", "PURGE")
        purged = settle(pids, wait=0.5)
        enc = {}
        for s in (gob, red):
            key = {"hash": "mem:hash", "zset": "mem:zset", "list": "mem:list", "set": "mem:set",
                   "strings": "key:0", "rstrings": "key:0", "kstrings": "k:0", "smallhash": "hash:0"}[name]
            try:
                enc[s.name] = s.conn.call("OBJECT", "ENCODING", key).decode()
            except tb.RespError as e:
                enc[s.name] = "? (%s)" % e
        out = {}
        for i, s in enumerate((gob, red)):
            out[s.name] = {"empty": empty[i], "loaded": loaded[i], "purged": purged[i],
                           "settled_bpe": (loaded[i] - empty[i]) / n,
                           "purged_bpe": (purged[i] - empty[i]) / n, "encoding": enc[s.name]}
        out["load_seconds"] = el
        return out
    finally:
        for s in (gob, red):
            s.stop()
            cleanup.servers.remove(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--goblin", default=os.path.join(tb.REPO, "build-release", "goblin-core"))
    ap.add_argument("--goblin-arg", action="append", default=[],
                    help="extra goblin-core argument (repeat), e.g. --goblin-arg=--arena-hugetlb")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated subset of " + ",".join(SETS))
    ap.add_argument("--scale", type=float, default=1.0, help="element counts x this (quick: 0.1)")
    ap.add_argument("--rounds", type=int, default=1, help="fresh server pairs per data set; medians")
    ap.add_argument("--pin", action="store_true", help="both servers on the first CPU")
    ap.add_argument("--server-cpus")
    ap.add_argument("--chart", metavar="FILE.png")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    bad = [s for s in names if s not in SETS]
    if bad:
        ap.error("unknown data set(s): %s" % ",".join(bad))
    for b in (args.goblin, args.redis):
        if not os.path.exists(b):
            ap.error("missing %s" % b)
    cleanup = tb.Cleanup()
    try:
        return run(args, names, cleanup)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping servers", file=sys.stderr)
        return 130
    except (RuntimeError, tb.RespError, OSError) as e:
        print("\nerror: %s" % e, file=sys.stderr)
        return 1
    finally:
        cleanup.run()


def run(args, names, cleanup):
    srv_cpus, _, pin_note = tb.plan_pinning(args.pin, args.server_cpus, None, 1)
    if srv_cpus:
        pin_note = "both servers on CPU %s (the loader is not pinned)" % tb.cpulist(srv_cpus)
    date = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    print("goblin memory: %s" % date)
    print("machine: %s" % tb.machine_description())
    print("pinning: %s; goblin args: --cores 1 %s" % (pin_note, " ".join(args.goblin_arg)))
    print()
    hdr = "%-28s %9s %9s %7s %9s %9s %7s %6s  %s" % (
        "data set", "goblin", "redis", "ratio", "goblin", "redis", "ratio", "goal", "encodings (goblin / redis)")
    print("%-28s %27s %27s" % ("", "--- after MEMORY PURGE ---", "----- settled load -----"))
    print(hdr.replace("goblin  ", "goblin  ", 1))
    rows = []
    for name in names:
        base_n, goal = SETS[name]
        n = max(10, int(base_n * args.scale))
        if name == "smallhash":
            n -= n % 10
        runs = [measure(args, name, n, srv_cpus, cleanup) for _ in range(args.rounds)]
        med = lambda srv, k: statistics.median(r[srv][k] for r in runs)  # noqa: E731
        gp, rp = med("goblin", "purged_bpe"), med("redis", "purged_bpe")
        gs, rs = med("goblin", "settled_bpe"), med("redis", "settled_bpe")
        label = LABELS[name] if args.scale == 1.0 else "%s (%d)" % (name, n)
        print("%-28s %9.1f %9.1f %6.2fx %9.1f %9.1f %6.2fx %6s  %s / %s" % (
            label, gp, rp, gp / rp, gs, rs, gs / rs, "%.2fx" % goal if goal else "-",
            runs[-1]["goblin"]["encoding"], runs[-1]["redis"]["encoding"]), flush=True)
        row = {"name": label, "set": name, "elements": n, "goblin": gp, "redis": rp,
               "goblin_settled": gs, "redis_settled": rs, "ratio": gp / rp, "ratio_settled": gs / rs,
               "goal": goal, "runs": runs}
        if name == "smallhash":
            print("%-28s %9.1f %9.1f   (bytes per hash key, after MEMORY PURGE)" % ("", gp * 10, rp * 10))
        rows.append(row)
    result = {"date": date, "machine": tb.machine_description(), "pinning": pin_note,
              "scale": args.scale, "rounds": args.rounds, "rows": rows,
              "figure": "after MEMORY PURGE"}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.chart:
        tb.call_charts("memory", result, args.chart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
