#!/usr/bin/env python3
"""Replication: goblin-core against redis-server 7.0.

Every server starts fresh in its own temporary directory with --save ""
(goblin with its defaults and --cores); every primary has
--repl-diskless-sync-delay 0 (Redis waits 5 s by default before a diskless
sync, Goblin too). Rounds alternate the order of the configurations (the
first one alternating from round to round). Sections (--sections):

  write   redis-benchmark -P 16 -c 50 -t set -n N -r 1000000 (--n N) against
          the primary, four configurations:
            a  goblin alone
            b  goblin with one goblin replica attached and online
            c  redis alone
            d  redis with one redis replica attached and online
          During a replicated run the replication lag is sampled every
          --sample-ms (100): the primary's master_repl_offset read before
          and after the replica's slave_repl_offset, lag = the mean of the
          two minus the replica's (the error is half the bytes the primary
          wrote meanwhile). Printed: the largest lag of the run, in bytes
          and in milliseconds of the primary's stream rate over the run;
          the seconds the replica took to reach the primary's offset after
          the benchmark ended (it must within --catchup seconds); whether
          the link ever went down or a second full sync happened (the
          primary's "Starting BGSAVE for SYNC" lines). DBSIZE is compared
          after catch-up. Server CPU (user + system, /proc) per request for
          the primary and the replica.
          Goals: b/a >= 0.9 (a replica costs the primary at most 10%),
          b/d >= 1.0.
  sync    full sync of a dataset of --keys keys (1,000,000; the dataset of
          aof_bench.py: 80% strings of 16-64 bytes, every 10th with a TTL;
          5% each hashes of 8 fields (every 4th with a TTL), lists, sets
          and zsets of 8 elements), built once per primary with pipelined
          commands over a raw socket. Primaries, kept for the whole run:
            goblin          goblin-core
            goblin-hugetlb  goblin-core --arena-hugetlb: fork is refused,
                            the RDB comes from the fork-less versioned
                            iteration (checked in its log: "fork-less")
            redis           redis-server
          For each mode of --modes (diskless = repl-diskless-sync yes, the
          default; disk = no; set with CONFIG SET on the primary), a fresh
          empty replica of the same server is started (goblin-hugetlb's is
          a plain goblin) and sent REPLICAOF; timed until its INFO
          replication shows master_link_status:up and slave_repl_offset
          equal to the primary's master_repl_offset (polled every 10 ms).
          Also printed: the time to link up, CPU seconds of the primary
          (including its reaped fork children) and of the replica over the
          sync. Every sync is checked for DBSIZE; the first round compares
          DEBUG DIGEST of replica and primary. goblin-hugetlb runs in the
          first mode only (its path is the same in both).
          Goal: goblin's time <= Redis's.

  python3 benchmarks/repl_bench.py [--rounds 3] [--cores 1] [--pin]
      [--sections write,sync] [--n 2000000] [--keys 1000000]
      [--modes diskless,disk] [--json FILE]
  a quick look: --rounds 1 --n 200000 --keys 100000

Standard library only (reuses the helpers of tlb_arena_benchmark.py and the
dataset of aof_bench.py).
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "persist"))
import aof_bench  # noqa: E402
import tlb_arena_benchmark as tb  # noqa: E402

WRITE_CONFIGS = [("a", "goblin", False, "goblin alone"), ("b", "goblin", True, "goblin + goblin replica"),
                 ("c", "redis", False, "redis alone"), ("d", "redis", True, "redis + redis replica")]
SYNC_PRIMARIES = [("goblin", "goblin", False), ("goblin-hugetlb", "goblin", True), ("redis", "redis", False)]
GOALS = {"b/a": 0.9, "b/d": 1.0, "sync": 1.0}
SYNC_LINE = "Starting BGSAVE for SYNC"


med = aof_bench.med


def proc_cpu_with_children(pid):
    """utime + stime + cutime + cstime of pid: its threads and the children
    it has reaped (a fork that wrote an RDB)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def repl_info(conn):
    return tb.info_fields(conn, "replication")


def offsets(primary_conn, replica_conn):
    """(primary offset, replica offset, replica link up, primary read twice
    around the replica: the spread)."""
    p1 = int(repl_info(primary_conn)["master_repl_offset"])
    ri = repl_info(replica_conn)
    p2 = int(repl_info(primary_conn)["master_repl_offset"])
    r = int(ri.get("slave_repl_offset", "-1"))
    return (p1 + p2) / 2.0, r, ri.get("master_link_status") == "up", p2 - p1


def in_sync(primary_conn, replica_conn):
    ri = repl_info(replica_conn)
    if ri.get("master_link_status") != "up":
        return False
    return int(ri["slave_repl_offset"]) == int(repl_info(primary_conn)["master_repl_offset"])


def wait_in_sync(primary_conn, replica_conn, timeout, step=0.01):
    """Seconds until the replica is up and at the primary's offset, or None."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if in_sync(primary_conn, replica_conn):
            return time.time() - t0
        time.sleep(step)
    return None


def log_text(s):
    try:
        with open(s.log_path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def server_args(kind, args, primary=False, hugetlb=False, extra=()):
    a = ["--enable-debug-command", "yes"]
    if kind == "goblin":
        a += ["--cores", str(args.cores)]
        if hugetlb:
            a += ["--arena-hugetlb"]
    if primary:
        a += ["--repl-diskless-sync-delay", "0"]
    return a + list(extra)


def start(kind, args, cpus, cleanup, name, **kw):
    binary = args.goblin if kind == "goblin" else args.redis
    s = cleanup.server(tb.Server(binary, server_args(kind, args, **kw), cpus, name=name))
    s.start()
    return s


def stop(s, cleanup):
    s.stop()
    cleanup.servers.remove(s)


class LagSampler(threading.Thread):
    """Samples the replication lag every period seconds on its own two
    connections."""

    def __init__(self, primary, replica, period):
        super().__init__(daemon=True)
        self.pc, self.rc = tb.Conn(primary.port), tb.Conn(replica.port)
        self.period = period
        self.done = threading.Event()
        self.max_lag = 0.0
        self.max_spread = 0
        self.samples = 0
        self.link_down = 0
        self.error = None

    def run(self):
        try:
            while not self.done.wait(self.period):
                p, r, up, spread = offsets(self.pc, self.rc)
                self.samples += 1
                if not up:
                    self.link_down += 1
                    continue
                if p - r > self.max_lag:
                    self.max_lag, self.max_spread = p - r, spread
        except Exception as e:  # noqa: BLE001 -- reported by the caller
            self.error = e
        finally:
            self.pc.close()
            self.rc.close()

    def finish(self):
        self.done.set()
        self.join(30)


# ------------------------------------------------------------ write rate --

def write_run(cfg, args, srv_cpus, cli_cpus, cleanup):
    key, kind, with_replica, _ = cfg
    p = start(kind, args, srv_cpus, cleanup, "%s-primary" % kind, primary=True)
    r = None
    try:
        if with_replica:
            r = start(kind, args, srv_cpus, cleanup, "%s-replica" % kind,
                      extra=["--replicaof", "127.0.0.1", str(p.port)])
            if wait_in_sync(p.conn, r.conn, 60) is None:
                raise RuntimeError("%s replica did not come online:\n%s\n%s" % (kind, p.log_tail(), r.log_tail()))
            # The replica can report the link up a moment before its primary
            # lists it online (redis-server too): wait for both.
            deadline = time.time() + 10
            while "state=online" not in tb.info_fields(p.conn, "replication").get("slave0", ""):
                if time.time() > deadline:
                    raise RuntimeError("%s primary does not list its replica online" % kind)
                time.sleep(0.05)
        cmd = tb.taskset_prefix(cli_cpus) + [
            args.redis_benchmark, "-h", "127.0.0.1", "-p", str(p.port), "-c", str(args.clients), "-n", str(args.n),
            "-P", "16", "-r", "1000000", "-t", "set", "--csv"]
        off0 = int(repl_info(p.conn)["master_repl_offset"])
        cp0 = tb.proc_cpu_seconds(p.pid)
        cr0 = tb.proc_cpu_seconds(r.pid) if r else 0.0
        sampler = None
        if r:
            sampler = LagSampler(p, r, args.sample_ms / 1000.0)
            sampler.start()
        t0 = time.time()
        try:
            out = tb.run_client(cmd, cleanup, timeout=args.timeout)
        finally:
            if sampler:
                sampler.finish()
        wall = time.time() - t0
        cp1 = tb.proc_cpu_seconds(p.pid)
        cr1 = tb.proc_cpu_seconds(r.pid) if r else 0.0
        off1 = int(repl_info(p.conn)["master_repl_offset"])
        res = {"rate": aof_bench.parse_csv(out, ["SET"])["SET"], "wall": wall,
               "primary_cpu_us": 1e6 * (cp1 - cp0) / args.n}
        for s in (p, r):
            if s and not s.alive():
                raise RuntimeError("%s died during the run:\n%s" % (s.name, s.log_tail()))
        if r:
            if sampler.error:
                raise RuntimeError("lag sampling failed: %s" % sampler.error)
            catchup = wait_in_sync(p.conn, r.conn, args.catchup)
            if catchup is None:
                raise RuntimeError("%s replica not at the primary's offset %.0f s after the run: %s" % (
                    kind, args.catchup, offsets(p.conn, r.conn)))
            np_, nr = p.conn.call("DBSIZE"), r.conn.call("DBSIZE")
            if np_ != nr:
                raise RuntimeError("%s: DBSIZE %d on the primary, %d on the replica" % (kind, np_, nr))
            cr2 = tb.proc_cpu_seconds(r.pid)
            stream_rate = (off1 - off0) / wall
            res.update({
                "replica_cpu_us": 1e6 * (cr2 - cr0) / args.n, "max_lag": sampler.max_lag,
                "max_lag_spread": sampler.max_spread, "samples": sampler.samples,
                "max_lag_ms": 1000.0 * sampler.max_lag / stream_rate if stream_rate > 0 else 0.0,
                "catchup": catchup, "link_down_samples": sampler.link_down,
                "full_syncs": log_text(p).count(SYNC_LINE), "stream_bytes": off1 - off0})
        return res
    finally:
        if r:
            stop(r, cleanup)
        stop(p, cleanup)


# ------------------------------------------------------------- full sync --

def encoded_dataset(keys):
    batches = []
    for b in aof_bench.dataset(keys):
        batches.append((b"".join(tb.enc(*c) for c in b), len(b)))
    return batches


def build_primary(name, kind, hugetlb, batches, args, cpus, cleanup):
    s = start(kind, args, cpus, cleanup, name, primary=True, hugetlb=hugetlb)
    t0 = time.time()
    c = tb.Conn(s.port, timeout=600)
    for data, n in batches:
        c.send(data, n)
    c.drain()
    c.close()
    n = s.conn.call("DBSIZE")
    if n != args.keys:
        raise RuntimeError("%s: DBSIZE %d after the build, expected %d" % (name, n, args.keys))
    mem = tb.info_fields(s.conn, "memory").get("used_memory_human", "?")
    print("%s: built %d keys in %.1f s (used_memory %s)" % (name, n, time.time() - t0, mem), flush=True)
    return s


def sync_run(name, kind, primary, mode, args, cpus, cleanup, check_digest):
    primary.conn.call("CONFIG", "SET", "repl-diskless-sync", "yes" if mode == "diskless" else "no")
    r = start(kind, args, cpus, cleanup, "%s-replica" % name)
    try:
        before = log_text(primary).count(SYNC_LINE)
        os.sync()
        cp0, cr0 = proc_cpu_with_children(primary.pid), proc_cpu_with_children(r.pid)
        t0 = time.time()
        r.conn.call("REPLICAOF", "127.0.0.1", str(primary.port))
        t_up = None
        while True:
            now = time.time()
            if now - t0 > args.sync_timeout:
                raise RuntimeError("%s: no sync within %.0f s:\n%s\n%s" % (
                    name, args.sync_timeout, primary.log_tail(), r.log_tail()))
            ri = repl_info(r.conn)
            if ri.get("master_link_status") == "up":
                if t_up is None:
                    t_up = now - t0
                if int(ri["slave_repl_offset"]) == int(repl_info(primary.conn)["master_repl_offset"]):
                    break
            time.sleep(0.01)
        t = time.time() - t0
        cp1, cr1 = proc_cpu_with_children(primary.pid), proc_cpu_with_children(r.pid)
        n = r.conn.call("DBSIZE")
        if n != args.keys:
            raise RuntimeError("%s replica has %d keys after the sync, expected %d" % (name, n, args.keys))
        ptext = log_text(primary)
        if ptext.count(SYNC_LINE) != before + 1:
            raise RuntimeError("%s: expected one full sync in the primary's log" % name)
        nofork = "fork-less" in ptext.rsplit(SYNC_LINE, 1)[1].split("\n", 1)[0]
        dig = None
        if check_digest:
            dig = (r.conn.call("DEBUG", "DIGEST"), primary.conn.call("DEBUG", "DIGEST"))
            if dig[0] != dig[1]:
                raise RuntimeError("%s: DEBUG DIGEST differs: replica %s, primary %s" % (name, dig[0], dig[1]))
        return {"time": t, "link_up": t_up, "primary_cpu": cp1 - cp0, "replica_cpu": cr1 - cr0,
                "nofork": nofork, "digest_checked": check_digest}
    finally:
        stop(r, cleanup)


# ------------------------------------------------------------------ main --

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--goblin", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--redis-benchmark", default="/usr/bin/redis-benchmark")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cores", type=int, default=1, help="goblin --cores (redis stays single threaded)")
    ap.add_argument("--sections", default="write,sync", help="of write,sync")
    ap.add_argument("--n", type=int, default=2000000, help="redis-benchmark -n of the write section")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--sample-ms", type=float, default=100, help="lag sampling period")
    ap.add_argument("--catchup", type=float, default=5, help="seconds a replica may take to catch up")
    ap.add_argument("--keys", type=int, default=1000000, help="keys of the full sync dataset")
    ap.add_argument("--modes", default="diskless,disk", help="full sync modes, of diskless,disk")
    ap.add_argument("--pin", action="store_true", help="servers on the first CPU(s), client on the rest")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed for one redis-benchmark run")
    ap.add_argument("--sync-timeout", type=float, default=600, help="seconds allowed for one full sync")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    sections = [x.strip() for x in args.sections.split(",") if x.strip()]
    modes = [x.strip() for x in args.modes.split(",") if x.strip()]
    for x in sections:
        if x not in ("write", "sync"):
            ap.error("unknown section %s" % x)
    for x in modes:
        if x not in ("diskless", "disk"):
            ap.error("unknown mode %s" % x)
    for b in (args.goblin, args.redis, args.redis_benchmark):
        if not os.path.exists(b):
            ap.error("missing %s" % b)
    cleanup = tb.Cleanup()
    try:
        return run(args, sections, modes, cleanup)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        cleanup.run()


def run(args, sections, modes, cleanup):
    srv_cpus, cli_cpus, pin_note = tb.plan_pinning(args.pin, None, None, args.cores)
    rv = subprocess.run([args.redis, "--version"], capture_output=True, text=True).stdout
    redis_version = rv.split("v=")[1].split()[0] if "v=" in rv else "?"
    date = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print("repl_bench: %s; %s; load average %s" % (date, tb.machine_description(), load))
    try:
        huge = open("/proc/sys/vm/nr_hugepages").read().strip()
    except OSError:
        huge = "?"
    print("redis-server %s; goblin-core %s --cores %d; %s; %d rounds; vm.nr_hugepages %s" % (
        redis_version, args.goblin, args.cores, pin_note, args.rounds, huge), flush=True)
    res = {"date": date, "machine": tb.machine_description(), "load_average": load, "redis_version": redis_version,
           "nr_hugepages": huge,
           "cores": args.cores, "pinning": pin_note, "rounds": args.rounds, "args": vars(args)}
    t_start = time.time()

    writes = []   # per round: {config key: run}
    if "write" in sections:
        for rnd in range(args.rounds):
            order = WRITE_CONFIGS if rnd % 2 == 0 else WRITE_CONFIGS[::-1]
            got = {}
            for cfg in order:
                got[cfg[0]] = write_run(cfg, args, srv_cpus, cli_cpus, cleanup)
            writes.append(got)
            parts = []
            for cfg in WRITE_CONFIGS:
                g = got[cfg[0]]
                s = "%s %.0f" % (cfg[0], g["rate"])
                if "max_lag" in g:
                    s += " (lag max %.0f B = %.1f ms, catch-up %.2f s)" % (g["max_lag"], g["max_lag_ms"], g["catchup"])
                parts.append(s)
            print("round %d write: %s" % (rnd + 1, "; ".join(parts)), flush=True)

    syncs = []    # per round: {(primary name, mode): run}
    if "sync" in sections:
        t0 = time.time()
        batches = encoded_dataset(args.keys)
        print("dataset of %d keys encoded in %.1f s (%.0f MB of commands)" % (
            args.keys, time.time() - t0, sum(len(d) for d, _ in batches) / 1e6), flush=True)
        prims = {}
        for name, kind, huge in SYNC_PRIMARIES:
            prims[name] = build_primary(name, kind, huge, batches, args, srv_cpus, cleanup)
        del batches
        for rnd in range(args.rounds):
            got = {}
            order = SYNC_PRIMARIES if rnd % 2 == 0 else SYNC_PRIMARIES[::-1]
            for mode in modes:
                for name, kind, huge in order:
                    got[(name, mode)] = sync_run(name, kind, prims[name], mode, args, srv_cpus, cleanup, rnd == 0)
            syncs.append(got)
            print("round %d sync: %s" % (rnd + 1, "; ".join(
                "%s %s %.2f s (up %.2f)" % (n, m, v["time"], v["link_up"]) for (n, m), v in sorted(got.items()))),
                flush=True)
        if not all(x[("goblin-hugetlb", modes[0])]["nofork"] for x in syncs):
            raise RuntimeError("goblin-hugetlb: the primary's log does not say \"fork-less\"")
        for name in prims:
            stop(prims[name], cleanup)
    print("(%.0f s)" % (time.time() - t_start))

    # ---- summary
    print()
    print("medians of %d rounds; ratios = median of the per-round ratios (range); load average at start %s" % (
        args.rounds, load))
    verdicts = []
    if writes:
        print()
        print("redis-benchmark -P 16 -c %d -t set -n %d -r 1000000 against the primary" % (args.clients, args.n))
        print("%-26s %10s %9s %9s %12s %9s %9s" % ("config", "SET/s", "prim us", "repl us", "max lag B",
                                                 "lag ms", "catch-up"))
        for key, kind, rep, label in WRITE_CONFIGS:
            rows = [x[key] for x in writes]
            line = "%-26s %10.0f %9.2f" % ("%s %s" % (key, label), med([x["rate"] for x in rows]),
                                          med([x["primary_cpu_us"] for x in rows]))
            if rep:
                line += " %9.2f %12.0f %9.1f %8.2fs" % (
                    med([x["replica_cpu_us"] for x in rows]), max(x["max_lag"] for x in rows),
                    max(x["max_lag_ms"] for x in rows), max(x["catchup"] for x in rows))
            print(line)
        print("(prim us / repl us: server CPU per request, user + system from /proc; max lag: the largest of "
              "all rounds, in bytes and in ms of the primary's stream rate; catch-up: the slowest, after the "
              "benchmark ended)")
        for num, den in (("b", "a"), ("b", "d"), ("d", "c")):
            q = [x[num]["rate"] / x[den]["rate"] for x in writes]
            goal = GOALS.get("%s/%s" % (num, den))
            met = None if goal is None else med(q) >= goal
            print("ratio %s/%s %5.2f (%.2f - %.2f)%s" % (num, den, med(q), min(q), max(q),
                                                       "" if goal is None else "   goal >= %.1f: %s" % (
                                                           goal, "met" if met else "NOT met")))
            if goal is not None:
                verdicts.append(("%s/%s" % (num, den), med(q), goal, met))
        bad = [(k, x[k]["link_down_samples"], x[k]["full_syncs"]) for x in writes for k in ("b", "d")
               if x[k]["link_down_samples"] or x[k]["full_syncs"] != 1]
        print("replica links: %s" % ("up through every run, one full sync each" if not bad else
                                     "TROUBLE (config, samples down, full syncs): %s" % bad))
    if syncs:
        print()
        print("full sync of %d keys: REPLICAOF on an empty replica until link up and offsets equal" % args.keys)
        print("%-40s %9s %17s %9s %9s %9s" % ("primary -> replica, mode", "time s", "range", "link up",
                                             "prim cpu", "repl cpu"))
        for mode in modes:
            for name, kind, huge in SYNC_PRIMARIES:
                k = (name, mode)
                if k not in syncs[0]:
                    continue
                rows = [x[k] for x in syncs]
                ts = [x["time"] for x in rows]
                label = "%s -> %s, %s" % (name, kind, "fork-less " + mode if huge else mode)
                print("%-40s %9.3f %8.3f - %6.3f %9.3f %9.2f %9.2f" % (
                    label, med(ts), min(ts), max(ts), med([x["link_up"] for x in rows]),
                    med([x["primary_cpu"] for x in rows]), med([x["replica_cpu"] for x in rows])))
        for mode in modes:
            for name in ("goblin", "goblin-hugetlb"):
                if (name, mode) not in syncs[0]:
                    continue
                q = [x[(name, mode)]["time"] / x[("redis", mode)]["time"] for x in syncs]
                met = med(q) <= GOALS["sync"]
                print("%s/redis, %s%s: %.2f (%.2f - %.2f)   goal <= 1.0: %s" % (
                    name, mode, " (fork-less against redis's %s)" % mode if name != "goblin" else "",
                    med(q), min(q), max(q), "met" if met else "NOT met"))
                verdicts.append(("sync %s/redis %s" % (name, mode), med(q), GOALS["sync"], met))
        print("(times include the replica's load; DEBUG DIGEST of replica and primary equal in round 1; "
              "goblin-hugetlb's primary log says \"fork-less\")")
    res["writes"] = writes
    res["syncs"] = [{"%s %s" % k: v for k, v in x.items()} for x in syncs]
    res["verdicts"] = verdicts
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
