#!/usr/bin/env python3
"""goblin-core against redis-server 7.0, side by side, with redis-benchmark.

Both servers run at the same time on free loopback ports with the same
settings (no persistence, one worker: goblin --cores 1, redis single
threaded) and, with --pin, on the same CPU(s) while redis-benchmark runs on
the others. Before the first round both get the same preloaded data:

  bench:hash  --hash-fields fields "field:<12 digits>" (8-byte values),
              for HGET with random fields (-r FIELDS, the 12-digit names
              redis-benchmark makes from __rand_int__)
  bench:zset  --zset-members members "member:<12 digits>", score = n,
              for ZSCORE (random members) and ZRANGE bench:zset 0 99

Tests (redis-benchmark -t NAME, or a custom command):

  PING_MBULK (the protocol floor)
  SET GET INCR MSET LPUSH RPUSH LPOP RPOP LRANGE_100 LRANGE_600 SADD SPOP
  HSET                                        (redis-benchmark's own)
  HGET    hget bench:hash field:__rand_int__  -r hash fields
  ZADD                                        (redis-benchmark's own)
  ZSCORE  zscore bench:zset member:__rand_int__  -r zset members
  ZRANGE_100  zrange bench:zset 0 99
  PUBLISH publish bench:chan <16 bytes>       (not run unless named in --tests)
              with --subscribers redis-cli processes subscribed to
              bench:chan on each server (on the client CPUs), reading
              every message

--idle-connections N keeps N more connections open to each server,
idle, through the rounds (the cost of the connections a server has but
does not serve).

each with -P 1 and -P 16 (--pipelines), 50 clients (--clients), -r
--keyspace for the built-in tests. Rounds are A/B interleaved: in every
round each (test, pipeline) runs on both servers back to back, the first
server alternating from one round and one test to the next, so drift and
neighbours' load hit both alike. Printed per test and pipeline: both
servers' median req/s, and the median and range over rounds of the per-round
ratio goblin/redis (above 1: goblin is faster). Beside it: the server's CPU
time per request (the run time of all the server's threads, summed from
/proc/PID/task/*/schedstat, nanosecond resolution, before and after each
redis-benchmark run, divided by the requests), medians in microseconds and the median of the per-round ratio
goblin/redis (below 1: goblin spends less). On a shared machine this is the
steady figure: it does not depend on the share of the CPU that neighbours
leave the server. The geometric mean of the CPU ratios closes each table.

Request counts: --requests for -P 1, --requests-pipelined for -P 16, scaled
down for the slow tests (LRANGE_100 x0.25, LRANGE_600 x0.05, MSET x0.5).
A quick look: --rounds 1 --requests 20000 --requests-pipelined 100000.

--tls: both servers also listen on a TLS port (tls-port, a CA, a server
and a client certificate made with the openssl CLI in a temporary folder,
tls-auth-clients yes), and redis-benchmark runs with --tls --cert --key
--cacert against it: the same tables, over TLS. The preloading still goes
through the plaintext port.

  ./benchmarks/compare.py --pin [--rounds 5] [--chart docs/img/compare.png]

Python 3 standard library only (imports the helpers of tlb_arena_benchmark.py).
"""

import argparse
import json
import math
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlb_arena_benchmark as tb  # noqa: E402

TESTS = ["PING_MBULK", "SET", "GET", "INCR", "MSET", "LPUSH", "RPUSH", "LPOP", "RPOP", "LRANGE_100",
         "LRANGE_600", "SADD", "SPOP", "HSET", "HGET", "ZADD", "ZSCORE", "ZRANGE_100"]
OPTIONAL = ["PUBLISH"]
SCALE = {"LRANGE_100": 0.25, "LRANGE_600": 0.05, "MSET": 0.5}


def custom_command(test, args):
    """(extra redis-benchmark args, csv name prefix) for the test."""
    if test == "HGET":
        return (["-r", str(args.hash_fields), "hget", "bench:hash", "field:__rand_int__"], "hget ")
    if test == "ZSCORE":
        return (["-r", str(args.zset_members), "zscore", "bench:zset", "member:__rand_int__"], "zscore ")
    if test == "ZRANGE_100":
        return (["zrange", "bench:zset", "0", "99"], "zrange ")
    if test == "PUBLISH":
        return (["publish", "bench:chan", "m" * 16], "publish ")
    return (["-r", str(args.keyspace), "-t", test.lower()], None)


def server_cpu_seconds(pid):
    """CPU time of every thread of pid, seconds, from schedstat (ns, unlike
    the 10 ms ticks of /proc/PID/stat); falls back to /proc/PID/stat."""
    total, seen = 0, False
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
                    seen = True
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        pass
    return total / 1e9 if seen else tb.proc_cpu_seconds(pid)


def pick_row(out, test, prefix):
    for line in out.splitlines():
        cells = [c.strip('"') for c in line.strip().split('","')]
        if len(cells) < 2 or cells[0] == "test":
            continue
        name = cells[0]
        if prefix is not None:
            ok = name.lower().startswith(prefix)
        else:
            ok = name.split(" ")[0].upper() == test and "needed" not in name
        if ok:
            return float(cells[1])
    raise RuntimeError("no %s row in redis-benchmark output:\n%s" % (test, out))


def zset_batches(n, per_cmd=1000, per_batch=50):
    i = 0
    while i < n:
        parts, ncmd = [], 0
        while ncmd < per_batch and i < n:
            k = min(per_cmd, n - i)
            parts.append(b"*%d\r\n$4\r\nZADD\r\n$10\r\nbench:zset\r\n" % (2 + 2 * k))
            parts.append(b"".join([b"$%d\r\n%d\r\n$19\r\nmember:%012d\r\n" % (len(b"%d" % j), j, j)
                                   for j in range(i, i + k)]))
            i += k
            ncmd += 1
        yield b"".join(parts), ncmd


def make_certs(cleanup):
    """A CA, a server certificate for localhost/127.0.0.1 and a client
    certificate, made with the openssl CLI in a temporary folder."""
    import tempfile
    d = tempfile.mkdtemp(prefix="goblin-bench-tls-")
    cleanup.actions.append(lambda: shutil.rmtree(d, ignore_errors=True))

    def ossl(*a):
        subprocess.run(["openssl"] + list(a), cwd=d, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    ossl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", "ca.key", "-out", "ca.crt",
         "-days", "30", "-subj", "/CN=Goblin Bench CA")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for who, cn in (("server", "localhost"), ("client", "client")):
        ossl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", who + ".key", "-out", who + ".csr",
             "-subj", "/CN=" + cn)
        ossl("x509", "-req", "-in", who + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", who + ".crt", "-days", "30", *(["-extfile", "san.ext"] if who == "server" else []))
    return {n: os.path.join(d, n) for n in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--goblin", default=os.path.join(tb.REPO, "build-release", "goblin-core"))
    ap.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    ap.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark") or
                    "/usr/bin/redis-benchmark")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=100000, help="-n for -P 1")
    ap.add_argument("--requests-pipelined", type=int, default=500000, help="-n for -P > 1")
    ap.add_argument("--pipelines", default="1,16", help="comma-separated -P values")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--keyspace", type=int, default=1000000, help="-r for the built-in tests")
    ap.add_argument("--hash-fields", type=int, default=1000000)
    ap.add_argument("--zset-members", type=int, default=1000000)
    ap.add_argument("--tests", default=",".join(TESTS),
                    help="comma-separated subset of " + ",".join(TESTS + OPTIONAL))
    ap.add_argument("--subscribers", type=int, default=1, help="subscribers of bench:chan for PUBLISH")
    ap.add_argument("--idle-connections", type=int, default=0,
                    help="connections held open to each server, idle, through the rounds")
    ap.add_argument("--redis-cli", default=shutil.which("redis-cli") or "/usr/bin/redis-cli")
    ap.add_argument("--cores", type=int, default=1, help="goblin --cores (redis stays single threaded)")
    ap.add_argument("--pin", action="store_true", help="servers on the first CPU(s), client on the rest")
    ap.add_argument("--server-cpus")
    ap.add_argument("--client-cpus")
    ap.add_argument("--timeout", type=float, default=300, help="seconds allowed for one redis-benchmark run")
    ap.add_argument("--goblin-args", default="", help="more goblin-core flags, e.g. \"--net async\"")
    ap.add_argument("--tls", action="store_true", help="benchmark over TLS (tls-port, client certificates)")
    ap.add_argument("--chart", metavar="FILE.png")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    tests = [t.strip().upper() for t in args.tests.split(",") if t.strip()]
    bad = [t for t in tests if t not in TESTS + OPTIONAL]
    if bad:
        ap.error("unknown test(s): %s" % ",".join(bad))
    pipes = [int(p) for p in args.pipelines.split(",")]
    for b in (args.goblin, args.redis, args.redis_benchmark):
        if not os.path.exists(b):
            ap.error("missing %s" % b)

    cleanup = tb.Cleanup()
    try:
        return run(args, tests, pipes, cleanup)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping servers", file=sys.stderr)
        return 130
    except (RuntimeError, tb.RespError, OSError) as e:
        print("\nerror: %s" % e, file=sys.stderr)
        return 1
    finally:
        cleanup.run()


def subscribe(args, servers, cpus, cleanup):
    """args.subscribers redis-cli processes subscribed to bench:chan on each
    server, reading (and dropping) every message until the cleanup."""
    for s in servers:
        for _ in range(args.subscribers):
            p = subprocess.Popen(tb.taskset_prefix(cpus) + [args.redis_cli, "-p", str(s.port), "subscribe",
                                                           "bench:chan"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
            cleanup.procs.append(p)
        deadline = time.time() + 10
        while s.conn.call("PUBSUB", "NUMSUB", "bench:chan")[1] != args.subscribers:
            if time.time() > deadline:
                raise RuntimeError("%s: the subscribers did not subscribe" % s.name)
            time.sleep(0.05)
    print("%d subscriber(s) of bench:chan on each server" % args.subscribers)


def run(args, tests, pipes, cleanup):
    srv_cpus, cli_cpus, pin_note = tb.plan_pinning(args.pin, args.server_cpus, args.client_cpus, args.cores)
    rv = subprocess.run([args.redis, "--version"], stdout=subprocess.PIPE).stdout.decode().strip()
    redis_version = rv.split("v=")[1].split()[0] if "v=" in rv else "?"
    date = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    print("goblin compare: %s" % date)
    print("machine: %s" % tb.machine_description())
    print("redis-server %s; goblin-core %s --cores %d; pinning: %s" % (
        redis_version, args.goblin, args.cores, pin_note))
    tls_cli = []
    extra_gob, extra_red = args.goblin_args.split(), []
    if extra_gob:
        print("goblin-core flags: %s" % " ".join(extra_gob))
    tls_ports = {}
    if args.tls:
        certs = make_certs(cleanup)
        tls_cli = ["--tls", "--cert", certs["client.crt"], "--key", certs["client.key"],
                   "--cacert", certs["ca.crt"]]
        for name, extra in (("goblin", extra_gob), ("redis", extra_red)):
            tls_ports[name] = tb.free_port()
            extra += ["--tls-port", str(tls_ports[name]), "--tls-cert-file", certs["server.crt"],
                      "--tls-key-file", certs["server.key"], "--tls-ca-cert-file", certs["ca.crt"]]
        print("over TLS: redis-benchmark %s" % " ".join(tls_cli))
    gob = cleanup.server(tb.Server(args.goblin, ["--cores", str(args.cores)] + extra_gob, srv_cpus, name="goblin"))
    red = cleanup.server(tb.Server(args.redis, ["--appendonly", "no"] + extra_red, srv_cpus, name="redis"))
    gob.start()
    red.start()
    servers = {"goblin": gob, "redis": red}
    need_hash = "HGET" in tests
    need_zset = "ZSCORE" in tests or "ZRANGE_100" in tests
    if need_hash:
        el = tb.load_all([gob, red], tb.hash_batches(args.hash_fields, 8, key=b"bench:hash"))
        print("preloaded bench:hash, %d fields, in %.1f s" % (args.hash_fields, el))
    if need_zset:
        el = tb.load_all([gob, red], zset_batches(args.zset_members))
        print("preloaded bench:zset, %d members, in %.1f s" % (args.zset_members, el))
    if "PUBLISH" in tests:
        subscribe(args, [gob, red], cli_cpus, cleanup)
    idle = []
    if args.idle_connections:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 2 * args.idle_connections + 256
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
        for s in (gob, red):
            for _ in range(args.idle_connections):
                idle.append(socket.create_connection(("127.0.0.1", s.port)))
        print("%d idle connections to each server" % args.idle_connections)
    for s in (gob, red):
        if need_hash and s.conn.call("HLEN", "bench:hash") != args.hash_fields:
            raise RuntimeError("%s: bench:hash incomplete" % s.name)
        if need_zset and s.conn.call("ZCARD", "bench:zset") != args.zset_members:
            raise RuntimeError("%s: bench:zset incomplete" % s.name)

    res = {(t, p): {"goblin": [], "redis": [], "ratios": [], "cpu_goblin": [], "cpu_redis": [],
                    "cpu_ratios": []} for t in tests for p in pipes}
    print("%d rounds x %d tests x -P %s, %d clients; A/B interleaved" % (
        args.rounds, len(tests), "/".join(map(str, pipes)), args.clients), flush=True)
    k = 0
    for r in range(args.rounds):
        t0 = time.time()
        for p in pipes:
            for t in tests:
                extra, prefix = custom_command(t, args)
                n = args.requests if p == 1 else args.requests_pipelined
                n = max(1000, int(n * SCALE.get(t, 1.0)))
                order = ["goblin", "redis"] if k % 2 == 0 else ["redis", "goblin"]
                k += 1
                got, cpu = {}, {}
                for name in order:
                    s = servers[name]
                    port = tls_ports.get(name, s.port)
                    cmd = tb.taskset_prefix(cli_cpus) + [
                        args.redis_benchmark, "-h", "127.0.0.1", "-p", str(port), "-c", str(args.clients),
                        "-n", str(n), "-P", str(p), "--csv"] + tls_cli + extra
                    c0 = server_cpu_seconds(s.pid)
                    out = tb.run_client(cmd, cleanup, timeout=args.timeout)
                    cpu[name] = (server_cpu_seconds(s.pid) - c0) / n * 1e6
                    got[name] = pick_row(out, t, prefix)
                    if not s.alive():
                        raise RuntimeError("%s died during %s:\n%s" % (name, t, s.log_tail()))
                cell = res[(t, p)]
                cell["goblin"].append(got["goblin"])
                cell["redis"].append(got["redis"])
                cell["ratios"].append(got["goblin"] / got["redis"])
                cell["cpu_goblin"].append(cpu["goblin"])
                cell["cpu_redis"].append(cpu["redis"])
                if cpu["redis"] > 0:
                    cell["cpu_ratios"].append(cpu["goblin"] / cpu["redis"])
        print("  round %d/%d done in %.0f s" % (r + 1, args.rounds, time.time() - t0), flush=True)

    rows = []
    for p in pipes:
        print()
        print("-P %d, %d clients, %d rounds (req/s medians; ratio = goblin/redis per round; "
              "server CPU us/request medians; cpu ratio = goblin/redis per round)" % (
                  p, args.clients, args.rounds))
        print("%-11s %11s %11s %6s %13s | %7s %7s %6s %13s" % (
            "test", "goblin", "redis", "ratio", "ratio range", "cpu gob", "cpu red", "cpu", "cpu range"))
        logs = []
        for t in tests:
            c = res[(t, p)]
            mg, mr, mq = (statistics.median(c["goblin"]), statistics.median(c["redis"]),
                          statistics.median(c["ratios"]))
            cg, cr = statistics.median(c["cpu_goblin"]), statistics.median(c["cpu_redis"])
            cq = statistics.median(c["cpu_ratios"]) if c["cpu_ratios"] else float("nan")
            if c["cpu_ratios"]:
                logs.append(math.log(cq))
            print("%-11s %11.0f %11.0f %6.2f %6.2f-%6.2f | %7.3f %7.3f %6.2f %6.2f-%6.2f" % (
                t, mg, mr, mq, min(c["ratios"]), max(c["ratios"]), cg, cr, cq,
                min(c["cpu_ratios"] or [cq]), max(c["cpu_ratios"] or [cq])))
            rows.append({"test": t, "pipeline": p, "goblin": c["goblin"], "redis": c["redis"],
                         "ratios": c["ratios"], "goblin_median": mg, "redis_median": mr,
                         "ratio_median": mq, "cpu_us_goblin": c["cpu_goblin"],
                         "cpu_us_redis": c["cpu_redis"], "cpu_ratios": c["cpu_ratios"],
                         "cpu_us_goblin_median": cg, "cpu_us_redis_median": cr, "cpu_ratio_median": cq})
        if logs:
            print("geometric mean of the cpu ratios at -P %d: %.2f" % (p, math.exp(sum(logs) / len(logs))))
    result = {"date": date, "tls": args.tls, "machine": tb.machine_description(), "redis_version": redis_version,
              "rounds": args.rounds, "clients": args.clients, "pinning": pin_note,
              "requests": args.requests, "requests_pipelined": args.requests_pipelined,
              "cores": args.cores, "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.chart:
        tb.call_charts("compare", result, args.chart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
