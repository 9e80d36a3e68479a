#!/usr/bin/env python3
"""The append-only file: goblin-core against redis-server 7.0.

Every run starts a fresh server in its own temporary directory with
--appendonly yes and --save "" (goblin with its defaults and --cores).
Both get --auto-aof-rewrite-percentage 0: an automatic rewrite (a fork
and a full dump, at a moment that differs between the two) would land in
some runs and not others, so both only append to one incr file. Rounds
alternate the servers (the first one alternating from round to round), and
the page cache is synced before every timed run so one server's dirty
pages are not written back during the other's run.

Sections (--sections; all but "off" by default):

  everysec  appendfsync everysec: redis-benchmark -P 16 -c 50 -n N
            -r 1000000 -t set,incr,hset,lpush           (--n-pipelined N)
  off       the same with --appendonly no, for reference: what the AOF
            costs each server
  always    appendfsync always: redis-benchmark -P 1 -c 50 -n N
            -r 1000000 -t set,incr                      (--n-always N)
            Also counted: the flush requests the disk holding the temp
            directory completed during the run (/sys/dev/block/.../stat;
            an fdatasync that must commit the file's size ends in one or
            two), an estimate of the fsyncs -- the whole disk's, so the
            neighbours' too.
  load      loading an AOF of commands. The dataset (--keys K, 1,000,000 by
            default; fixed seed, identical in both servers) is built with
            aof-use-rdb-preamble no, one command per key:
              80%  strings  SET string:<i> <16-64 bytes>, every 10th with EXAT
              5%   hashes   HSET hash:<i> with 8 fields, every 4th + EXPIREAT
              5%   lists    RPUSH list:<i> with 8 elements
              5%   sets     SADD set:<i> with 8 members
              5%   zsets    ZADD zset:<i> with 8 members
            then SHUTDOWN: "incr" is that directory (an empty base, the
            commands as they came in the incr file). Restarted on a copy,
            BGREWRITEAOF, SHUTDOWN: "base" is that directory (a base of
            commands as the rewrite writes them, an empty incr file). Each
            round, each server is restarted on a fresh copy of its own and
            of the other's directory of both forms, and the load is timed
            from its log ("DB loaded from append only file: S seconds",
            which both print), with the CPU seconds of the process (user +
            system, /proc) when it answers PING. Every load is checked for
            DBSIZE = K; the first round compares DEBUG DIGEST of all eight.

With --flush-delay-us D the servers' directories are on a pass-through
FUSE mount (benchmarks/slowflush_fs.c, built here with libfuse3) whose
fsync/fdatasync take D microseconds more than the disk's: a disk whose
flush dominates a request, which this machine's virtual disk (a flush in a
fraction of a millisecond) is not. The flushes column then counts the
mount's fsyncs exactly.

Printed: medians over rounds, and the median (and range) of the per-round
ratio goblin/redis; each against its goal.

  python3 benchmarks/aof_bench.py [--rounds 3] [--cores 1] [--pin]
      [--sections everysec,off,always,load] [--n-pipelined 2000000]
      [--n-always 200000] [--keys 1000000] [--json FILE]
  a quick look: --rounds 1 --n-pipelined 200000 --n-always 5000 --keys 100000

Standard library only (reuses tests/persist/harness.py and the helpers of
tlb_arena_benchmark.py).
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "persist"))
import harness  # noqa: E402
import tlb_arena_benchmark as tb  # noqa: E402

RATE_TESTS = {"everysec": ["SET", "INCR", "HSET", "LPUSH"], "off": ["SET", "INCR", "HSET", "LPUSH"],
              "always": ["SET", "INCR"]}
GOALS = {"everysec": 1.0, "off": None, "always": 2.0, "load": 0.67}
FORMS = {"base": "base of commands written by BGREWRITEAOF", "incr": "incr file of the commands as they came"}
LOADED = re.compile(r"DB loaded from append only file: ([0-9.]+) seconds")


# ---------------------------------------------------------------- helpers --

def disk_flushes(path):
    """Flush requests completed by the block device holding path (None when
    the kernel does not count them); on a slowflush_fs mount, its fsyncs."""
    try:
        return int(os.getxattr(path, "user.slowflush.flushes"))
    except OSError:
        pass
    st = os.stat(path)
    base = "/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    for p in (base + "/stat", base + "/../stat"):
        try:
            with open(p) as f:
                fields = f.read().split()
        except OSError:
            continue
        if len(fields) >= 17:
            return int(fields[15])
    return None


def parse_csv(out, tests):
    got = {}
    for line in out.splitlines():
        cells = [c.strip('"') for c in line.strip().split('","')]
        if len(cells) < 2 or cells[0] == "test":
            continue
        name = cells[0].split(" ")[0].upper()
        if name in tests and "needed" not in cells[0]:
            got[name] = float(cells[1])
    missing = [t for t in tests if t not in got]
    if missing:
        raise RuntimeError("no %s row in redis-benchmark output:\n%s" % (",".join(missing), out))
    return got


def aof_args(kind, cores, extra=()):
    a = ["--appendonly", "yes", "--auto-aof-rewrite-percentage", "0"] + list(extra)
    if kind == "goblin":
        a += ["--cores", str(cores)]
    return a


def med(xs):
    return statistics.median(xs) if xs else float("nan")


# ------------------------------------------------------------ rate tests --

def rate_run(kind, section, args, srv_cpus, cli_cpus, cleanup):
    """One fresh server, one redis-benchmark run of the section's tests."""
    binary = args.goblin if kind == "goblin" else args.redis
    if section == "off":
        sargs = ["--appendonly", "no"] + (["--cores", str(args.cores)] if kind == "goblin" else [])
    else:
        sargs = aof_args(kind, args.cores, ["--appendfsync", section])
    s = cleanup.server(tb.Server(binary, sargs, srv_cpus, name=kind))
    try:
        s.start()
        tests = RATE_TESTS[section]
        n, p = (args.n_always, 1) if section == "always" else (args.n_pipelined, 16)
        cmd = tb.taskset_prefix(cli_cpus) + [
            args.redis_benchmark, "-h", "127.0.0.1", "-p", str(s.port), "-c", str(args.clients), "-n", str(n),
            "-P", str(p), "-r", "1000000", "-t", ",".join(t.lower() for t in tests), "--csv"]
        os.sync()
        f0 = disk_flushes(s.dir)
        c0 = tb.proc_cpu_seconds(s.pid)
        t0 = time.time()
        out = tb.run_client(cmd, cleanup, timeout=args.timeout)
        wall = time.time() - t0
        c1 = tb.proc_cpu_seconds(s.pid)
        f1 = disk_flushes(s.dir)
        if not s.alive():
            raise RuntimeError("%s died during %s:\n%s" % (kind, section, s.log_tail()))
        inf = tb.info_fields(s.conn, "persistence")
        if inf.get("aof_enabled") != ("0" if section == "off" else "1"):
            raise RuntimeError("%s: AOF not on:\n%s" % (kind, inf))
        if int(inf.get("aof_rewrites", "0")):
            raise RuntimeError("%s rewrote its AOF during the run" % kind)
        size = int(inf.get("aof_current_size", "0"))
        rates = parse_csv(out, tests)
        return {"rates": rates, "cpu_us_per_req": 1e6 * (c1 - c0) / (n * len(tests)), "wall": wall,
                "flushes": None if f0 is None else f1 - f0, "requests": n * len(tests), "aof_bytes": size}
    finally:
        s.stop()
        cleanup.servers.remove(s)


# ------------------------------------------------------------------ load --

def dataset(keys, seed=1):
    """The commands, in batches; identical for every call."""
    rng = random.Random(seed)
    exat = int(time.time()) // 86400 * 86400 + 3 * 86400   # whole day, same in both builds
    batch = []
    for i in range(keys):
        kind = i % 20
        if kind < 16:
            v = "%x" % rng.getrandbits(256)
            v = v[:rng.randint(16, 64)]
            if i % 10 == 0:
                batch.append(["SET", "string:%d" % i, v, "EXAT", str(exat)])
            else:
                batch.append(["SET", "string:%d" % i, v])
        elif kind == 16:
            c = ["HSET", "hash:%d" % i]
            for j in range(8):
                c += ["field:%d" % j, "%d" % rng.getrandbits(40)]
            batch.append(c)
            if i % 80 == 16:
                batch.append(["EXPIREAT", "hash:%d" % i, str(exat)])
        elif kind == 17:
            batch.append(["RPUSH", "list:%d" % i] + ["element-%d-%d" % (i, j) for j in range(8)])
        elif kind == 18:
            batch.append(["SADD", "set:%d" % i] + ["member-%d" % rng.getrandbits(32) for _ in range(8)])
        else:
            c = ["ZADD", "zset:%d" % i]
            for j in range(8):
                c += [repr(round(rng.random() * 1000, 3)), "m:%d" % j]
            batch.append(c)
        if len(batch) >= 10000:
            yield batch
            batch = []
    if batch:
        yield batch


def aof_files(d):
    adir = os.path.join(d, "appendonlydir")
    return sorted((f, os.path.getsize(os.path.join(adir, f))) for f in os.listdir(adir))


def build(kind, srcs, args):
    """srcs["incr"]: the dataset as written by the commands (an empty base
    and one incr file); srcs["base"]: the same after BGREWRITEAOF (a base of
    commands and an empty incr file)."""
    extra = ["--aof-use-rdb-preamble", "no"]
    d = srcs["incr"]
    s = harness.Server(kind, d, aof_args(kind, args.cores, extra))
    t0 = time.time()
    for b in dataset(args.keys):
        s.c.pipeline(b)
    n = s.c.ok("DBSIZE")
    if n != args.keys:
        raise RuntimeError("%s: DBSIZE %d after the build, expected %d" % (kind, n, args.keys))
    dt = time.time() - t0
    s.shutdown()
    files = {"incr": aof_files(d)}
    shutil.copytree(d, srcs["base"], ignore=shutil.ignore_patterns("*.log"))
    s = harness.Server(kind, srcs["base"], aof_args(kind, args.cores, extra), wait=False)
    s.wait_ready(timeout=600)
    r = s.c.ok("BGREWRITEAOF")
    ok = harness.wait_for(lambda: harness.info(s.c).get("aof_rewrite_in_progress") == "0" and
                          harness.info(s.c).get("aof_rewrite_scheduled") == "0", timeout=600, step=0.1)
    st = harness.info(s.c).get("aof_last_bgrewrite_status")
    if not ok or st != "ok":
        raise RuntimeError("%s: BGREWRITEAOF (%s) did not finish well: %s\n%s" % (kind, r, st, s.log_tail()))
    # Redis deletes the history files in the background: wait for one base, one incr.
    harness.wait_for(lambda: len(aof_files(srcs["base"])) == 3, timeout=60)
    s.shutdown()
    files["base"] = aof_files(srcs["base"])
    print("%s: built %d keys in %.1f s; as written: %s; after BGREWRITEAOF: %s" % (
        kind, n, dt, ", ".join("%s %d B" % x for x in files["incr"]),
        ", ".join("%s %d B" % x for x in files["base"])), flush=True)
    return files


def timed_load(kind, src, work, args, check_digest):
    d = os.path.join(work, "load")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copytree(os.path.join(src, "appendonlydir"), os.path.join(d, "appendonlydir"))
    log = "%s.%s.log" % (d, kind)
    if os.path.exists(log):
        os.unlink(log)
    os.sync()
    s = harness.Server(kind, d, aof_args(kind, args.cores, ["--aof-use-rdb-preamble", "no"]), wait=False)
    try:
        s.wait_ready(timeout=600)
        c = tb.proc_cpu_seconds(s.p.pid)
        m = LOADED.findall(s.log_text())
        if not m:
            raise RuntimeError("%s did not report its load time:\n%s" % (kind, s.log_tail()))
        n = s.c.ok("DBSIZE")
        if n != args.keys:
            raise RuntimeError("%s loaded %d keys, expected %d:\n%s" % (kind, n, args.keys, s.log_tail()))
        dig = s.c.ok("DEBUG", "DIGEST") if check_digest else None
    finally:
        s.stop()
        shutil.rmtree(d, ignore_errors=True)
    return float(m[-1]), c, dig


# ------------------------------------------------------------------ main --

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--goblin", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--redis-benchmark", default="/usr/bin/redis-benchmark")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cores", type=int, default=1, help="goblin --cores (redis stays single threaded)")
    ap.add_argument("--sections", default="everysec,always,load", help="of everysec,off,always,load")
    ap.add_argument("--n-pipelined", type=int, default=2000000, help="-n per test, everysec -P 16")
    ap.add_argument("--n-always", type=int, default=200000, help="-n per test, always -P 1")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--keys", type=int, default=1000000, help="keys of the load dataset")
    ap.add_argument("--pin", action="store_true", help="servers on the first CPU(s), client on the rest")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed for one redis-benchmark run")
    ap.add_argument("--flush-delay-us", type=int, default=0,
                    help="servers on a FUSE mount whose fsyncs take this much longer (0: the temp dir as is)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    sections = [x.strip() for x in args.sections.split(",") if x.strip()]
    for x in sections:
        if x not in GOALS:
            ap.error("unknown section %s" % x)
    for b in (args.goblin, args.redis, args.redis_benchmark):
        if not os.path.exists(b):
            ap.error("missing %s" % b)
    os.environ["GOBLIN"] = os.path.abspath(args.goblin)
    harness.REDIS = args.redis
    cleanup = tb.Cleanup()
    tmp = tempfile.mkdtemp(prefix="aof_bench.")
    mnt = None
    try:
        if args.flush_delay_us:
            mnt = mount_slowflush(tmp, args.flush_delay_us)
            tempfile.tempdir = mnt   # the servers' directories (tb.Server uses mkdtemp)
        return run(args, sections, tmp, cleanup)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        cleanup.run()
        tempfile.tempdir = None
        if mnt:
            subprocess.call(["fusermount3", "-u", mnt])
        shutil.rmtree(tmp, ignore_errors=True)


def mount_slowflush(tmp, delay_us):
    """Build slowflush_fs and mount it on tmp/mnt over tmp/back."""
    exe = os.path.join(tmp, "slowflush_fs")
    src = os.path.join(REPO, "benchmarks", "slowflush_fs.c")
    flags = subprocess.check_output(["pkg-config", "--cflags", "--libs", "fuse3"], text=True).split()
    subprocess.check_call(["gcc", "-O2", "-o", exe, src] + flags)
    back, mnt = os.path.join(tmp, "back"), os.path.join(tmp, "mnt")
    os.makedirs(back)
    os.makedirs(mnt)
    subprocess.check_call([exe, back, mnt, str(delay_us)])
    if not os.path.ismount(mnt):
        raise RuntimeError("slowflush_fs did not mount on %s" % mnt)
    return mnt


def run(args, sections, tmp, cleanup):
    srv_cpus, cli_cpus, pin_note = tb.plan_pinning(args.pin, None, None, args.cores)
    rv = os.popen("%s --version" % args.redis).read()
    redis_version = rv.split("v=")[1].split()[0] if "v=" in rv else "?"
    date = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    print("aof_bench: %s; %s; load average %s" % (date, tb.machine_description(),
                                                  " ".join(open("/proc/loadavg").read().split()[:3])))
    print("redis-server %s; goblin-core %s --cores %d; %s; %d rounds; temp dir %s" % (
        redis_version, args.goblin, args.cores, pin_note, args.rounds, tmp), flush=True)
    if args.flush_delay_us:
        print("servers on slowflush_fs: every fsync/fdatasync %d us longer than the disk's" % args.flush_delay_us)
    res = {"date": date, "machine": tb.machine_description(), "redis_version": redis_version,
           "cores": args.cores, "pinning": pin_note, "rounds": args.rounds, "args": vars(args)}
    kinds = ["redis", "goblin"]

    rate = {sec: [] for sec in sections if sec in RATE_TESTS}   # per round: {kind: run}
    loads = []                                                   # per round: {(kind, file): (s, cpu)}
    if "load" in sections:
        srcs = {k: {form: os.path.join(tmp, "src-%s-%s" % (k, form)) for form in FORMS} for k in kinds}
        res["load_files"] = {k: build(k, srcs[k], args) for k in kinds}
    t_start = time.time()
    for r in range(args.rounds):
        order = kinds if r % 2 == 0 else kinds[::-1]
        for sec in rate:
            got = {}
            for k in order:
                got[k] = rate_run(k, sec, args, srv_cpus, cli_cpus, cleanup)
            rate[sec].append(got)
            print("round %d %-8s " % (r + 1, sec) + "  ".join(
                "%s %s (%.2f us cpu/req, %s flushes)" % (
                    k, " ".join("%s %.0f" % (t, got[k]["rates"][t]) for t in RATE_TESTS[sec]),
                    got[k]["cpu_us_per_req"], got[k]["flushes"]) for k in kinds), flush=True)
        if "load" in sections:
            got, digs = {}, {}
            for form in FORMS:
                for f in order:
                    for k in order:
                        t, c, dg = timed_load(k, srcs[f][form], tmp, args, r == 0)
                        got[(form, k, f)] = (t, c)
                        digs[(form, k, f)] = dg
            loads.append(got)
            for form in FORMS:
                print("round %d load %s " % (r + 1, form) + "  ".join(
                    "%s<-%s %.3fs (cpu %.2f)" % (k, f, got[(form, k, f)][0], got[(form, k, f)][1])
                    for f in kinds for k in kinds), flush=True)
            if r == 0:
                vals = set(digs.values())
                res["digests_equal"] = len(vals) == 1
                print("DEBUG DIGEST of the %d loads: %s" % (len(digs), 
                    "all equal" if len(vals) == 1 else "DIFFER: %s" % digs), flush=True)
    print("(%.0f s)" % (time.time() - t_start))

    # ---- summary
    print()
    print("medians of %d rounds; ratio = median of the per-round goblin/redis ratios (range)" % args.rounds)
    rows = []
    for sec in rate:
        p = 1 if sec == "always" else 16
        n = args.n_always if sec == "always" else args.n_pipelined
        print()
        print("%s, -P %d, -c %d, -n %d, -r 1000000 (req/s)" % (
            "appendonly no" if sec == "off" else "appendfsync " + sec, p, args.clients, n))
        print("%-7s %11s %11s %7s %15s %6s %5s" % ("test", "redis", "goblin", "ratio", "range", "goal", "met"))
        for t in RATE_TESTS[sec]:
            rr = [x["redis"]["rates"][t] for x in rate[sec]]
            gg = [x["goblin"]["rates"][t] for x in rate[sec]]
            q = [g / rd for g, rd in zip(gg, rr)]
            goal = GOALS[sec]
            print("%-7s %11.0f %11.0f %7.2f %7.2f - %5.2f %5s %5s" % (
                t, med(rr), med(gg), med(q), min(q), max(q), ">=%.1f" % goal if goal else "-",
                "-" if not goal else "yes" if med(q) >= goal else "no"))
            rows.append({"section": sec, "test": t, "redis": rr, "goblin": gg, "ratios": q})
        for k in kinds:
            cpu = [x[k]["cpu_us_per_req"] for x in rate[sec]]
            fl = [x[k]["flushes"] for x in rate[sec] if x[k]["flushes"] is not None]
            reqs = rate[sec][0][k]["requests"]
            line = "  %-6s server CPU %.2f us/request" % (k, med(cpu))
            if sec == "always" and fl:
                line += "; disk flushes %d per run (%.1f requests per flush)" % (med(fl), reqs / max(1, med(fl)))
            if sec != "off":
                line += "; AOF %.0f MB" % (med([x[k]["aof_bytes"] for x in rate[sec]]) / 2 ** 20)
            print(line)
    if loads:
        for form in FORMS:
            print()
            print("load of %d keys, %s (s; cpu = user+sys of the process when it answers PING)" % (
                args.keys, FORMS[form]))
            print("%-18s %8s %8s" % ("server <- file", "wall s", "cpu s"))
            for f in kinds:
                for k in kinds:
                    print("%-18s %8.3f %8.2f" % ("%s <- %s's" % (k, f), med([x[(form, k, f)][0] for x in loads]),
                                                 med([x[(form, k, f)][1] for x in loads])))
            for f in kinds:
                qw = [x[(form, "goblin", f)][0] / x[(form, "redis", f)][0] for x in loads]
                qc = [x[(form, "goblin", f)][1] / x[(form, "redis", f)][1] for x in loads]
                print("%s's file: goblin/redis wall %.2f (%.2f - %.2f), cpu %.2f (%.2f - %.2f); goal <= %.2f: %s" % (
                    f, med(qw), min(qw), max(qw), med(qc), min(qc), max(qc), GOALS["load"],
                    "met" if med(qw) <= GOALS["load"] else "not met"))
        res["loads"] = [{"%s %s<-%s" % kf: v for kf, v in x.items()} for x in loads]
    res["rates"] = rows
    res["rate_runs"] = rate
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
