#!/usr/bin/env python3
"""Pauses another client sees while the dataset grows, shrinks and compacts:
goblin-core against redis-server 7.0.

The goal it measures: no pause over 2 ms of the server's own making while
the keyspace grows from 0 to 10M keys, a collection grows to 10M members, a
10M-member collection is deleted (lazy free), FLUSHALL ASYNC runs or the
small-object arena compacts. Method of docs/benchmarks.md section 9,
results in section 13.

Scenarios (--scenarios, default all; N = 10,000,000 x --scale):

  keyspace  MSET of N string keys "key:%010d" with 8-byte values into an
            empty server: --per-cmd keys per MSET, --batch-cmds MSETs
            pipelined per batch (send the batch, read its replies)
  flushall  FLUSHALL ASYNC of those N keys (built unmeasured when keyspace
            is not selected)
  hash      HSET of N fields into one hash, batched the same way
  zset      ZADD of N members (pseudo-random integer scores) into one zset
  set       SADD of N members into one set
  del-hash, del-zset, del-set
            DEL of that N-member collection (lazyfree-lazy-user-del yes, so
            Redis frees it in its background thread)
  compact   --compact-keys x --scale string keys with --compact-value random
            bytes (goblin keeps them in its small-object arena); then, while
            measured, DEL of 9 keys in 10 in pipelined batches and the wait
            until INFO goblin's objstore_small segments stop falling (the
            cron compacts one sparse segment per tick). Redis does the same
            load and deletes and then waits --compact-wait-redis seconds.

Every scenario runs on a fresh server (the del-* and flushall ones right
after their growth, on the same server), --runs times per server, the
servers alternating which goes first. While a scenario is measured:

  * the server runs alone on --server-cpu (taskset), goblin with --cores 1;
  * the pinger, a SCHED_FIFO process on --client-cpu, sends PING (--probe)
    on its own connection, sleeps --ping-interval, and records the start and
    round trip of every PING;
  * the machine's stall meters of hash_throughput.py, one SCHED_FIFO
    process per CPU, sleep 1 ms in a loop and record every late wake-up;
    the one on the server's CPU also reads every server thread's CPU time
    (/proc/PID/task/*/schedstat) after each wake-up. It runs on the CPU
    the whole server is confined to, so no server thread is running when
    it reads and the counters are exact (read from another CPU, a running
    thread's counter lags by up to a scheduler tick, 4 ms here);
  * the loader (this process, on --client-cpu) sends the batches;
  * the server's slow log keeps every command over 1 ms, and its latency
    monitor (threshold 1 ms) every event of its own work over 1 ms.

Reported per scenario and server, per run and over the runs:

  PINGs, max and p99.9 round trip; the PINGs over 2 ms and how many of them
  overlap a machine stall over 1 ms on either CPU (the stall's interval is
  the whole late sleep); the worst PING that overlaps no such stall;

  server CPU in a PING: the CPU time all server threads used on the
  server's CPU while that PING was out (interpolated between the meter's
  samples, ~1 ms apart). It is what the server's own work made the PING
  wait (alone on its CPU the server would have answered in about that
  time); a neighbour's time slices and the host's stalls are not in it. On
  a shared machine, and with the server at nice 19 as the house rules want,
  neighbours take CPU 0 for milliseconds at a time: this tells the server's
  pauses from theirs;

  per-batch minimum (section 9): the batches of every run are aligned (the
  same batch index holds the same keys in every run; for an event, the
  same 10 ms slot after the command is sent; for the compaction wait, the
  same 100 ms slot); for each batch, the worst PING outstanding during it
  is taken per run and the smallest of those over the runs is kept. A
  machine stall or a neighbour hits one run at random, the server's own
  pause hits the same batch in every run: the largest per-batch minimum is
  the server's worst deterministic pause as the other client sees it. The
  same is done for the server CPU in a PING;

  slow log: for every command that took over 1 ms (server time) in any run,
  the smallest duration over the runs (0 when a run did not log it); the
  largest is the slowest command the server deterministically runs;

  latency monitor: per event (goblin's active-defrag-cycle is a compaction
  step, during which no key command runs), the largest sample of each run,
  and the smallest of those over the runs.

  python3 benchmarks/pause_bench.py [--scale 1] [--runs 3]
      [--scenarios keyspace,flushall,hash,del-hash,zset,del-zset,set,del-set,compact]
      [--servers goblin,redis] [--server build-release/goblin-core]
      [--reference /usr/bin/redis-server] [--json FILE]

Memory: about 2-3 GB per server at --scale 1; one server runs at a time.
Python 3 standard library only (plus taskset).
"""

import argparse
import array
import bisect
import json
import multiprocessing as mp
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from tlb_arena_benchmark import (Cleanup, Conn, RespError, Server, enc, info_fields,  # noqa: E402
                                 machine_description)
from hash_throughput import hiccups, realtime  # noqa: E402

SCENARIOS = ("keyspace", "flushall", "hash", "del-hash", "zset", "del-zset", "set", "del-set", "compact")
# Scenarios sharing one server: (growth, event after it).
GROUPS = (("keyspace", "flushall"), ("hash", "del-hash"), ("zset", "del-zset"), ("set", "del-set"),
          ("compact",))
PAUSE = 0.002        # the goal's bound
STALL = 0.001        # a machine stall that explains a slow PING
EVENT_SLOT = 0.010   # per-batch minimum after DEL / FLUSHALL: 10 ms slots
WAIT_SLOT = 0.100    # ... during the compaction wait: 100 ms slots (a cron tick at hz 10)


# ---------------------------------------------------------------------------
# measuring processes


class ThreadCPU:
    """Cumulative CPU time (ns, schedstat) of every thread of a process."""

    def __init__(self, pid):
        self.pid = pid
        self.fds = []
        self.tids = set()
        self.names = []
        self.last = []

    def rescan(self):
        try:
            tids = os.listdir("/proc/%d/task" % self.pid)
        except OSError:
            return
        for t in tids:
            if t in self.tids:
                continue
            try:
                fd = os.open("/proc/%d/task/%s/schedstat" % (self.pid, t), os.O_RDONLY)
                with open("/proc/%d/task/%s/comm" % (self.pid, t)) as f:
                    name = f.read().strip()
            except OSError:
                continue
            self.tids.add(t)
            self.fds.append(fd)
            self.names.append(name)
            self.last.append(0)

    def read(self):
        out = self.last
        for i, fd in enumerate(self.fds):
            try:
                out[i] = int(os.pread(fd, 64, 0).split()[0])
            except (OSError, ValueError, IndexError):
                pass                    # thread gone: keep its last value
        return list(out)


def pinger(port, stop, out, cpu, interval, probe):
    """Send the probe every interval until stop; put back the (start, round
    trip) of every one. Its own process, SCHED_FIFO on the client CPU."""
    realtime(cpu)
    c = Conn(port)
    cmd = enc("PING") if probe == "ping" else enc("GET", "pause:probe")
    rec = []
    while not stop.is_set():
        t0 = time.monotonic()
        c.sock.sendall(cmd)
        r = c.read_reply()
        rec.append((t0, time.monotonic() - t0))
        if isinstance(r, RespError):
            raise r
        time.sleep(interval)
    c.close()
    out.put(rec)


def server_cpu_meter(stop, out, cpu, pid):
    """hash_throughput.hiccups() on the server's CPU, which after every
    wake-up also reads the CPU time of every server thread. A thread's
    schedstat counter advances only when the kernel updates it (a context
    switch, a tick: 4 ms at HZ=250), so read from elsewhere it lags a
    running thread by up to a tick. This process runs SCHED_FIFO on the CPU
    the whole server is confined to: when it reads, no server thread is
    running and every counter is exact. Puts back the late wake-ups as
    hiccups() does, the sample times, the threads' cumulative CPU (ns) per
    sample and their names."""
    realtime(cpu)
    tc = ThreadCPU(pid)
    tc.rescan()
    late, times, series = [], [], []   # series[k]: (first sample, array of ns)
    n = 0
    while not stop.is_set():
        t0 = time.monotonic()
        time.sleep(0.001)
        t1 = time.monotonic()
        over = t1 - t0 - 0.001
        if over > 0.0005:
            late.append((t0, over))
        if n % 5 == 0:
            tc.rescan()
        n += 1
        v = tc.read()
        times.append(t1)
        while len(series) < len(v):
            series.append((len(times) - 1, array.array("q")))
        for k, x in enumerate(v):
            series[k][1].append(x)
    out.put((late, times, [(f, a.tobytes()) for f, a in series], tc.names))


class ServerCPU:
    """The server threads' CPU time between two moments, interpolated
    linearly between the meter's samples (about 1 ms apart)."""

    def __init__(self, times, series, names):
        self.t = times
        self.names = names
        self.series = []
        for f, b in series:
            a = array.array("q")
            a.frombytes(b)
            self.series.append((f, a))
        # a thread is taken to have had its first sampled value before it
        # was first seen (the meter looks for new threads every 5 ms)
        self.total = [0] * len(times)
        for f, a in self.series:
            for i in range(len(times)):
                self.total[i] += a[i - f] if i >= f else a[0]

    def _at(self, vals, first, t):
        """A cumulative series (from sample `first` on) at time t."""
        def v(i):
            return vals[i - first] if i >= first else vals[0]
        j = bisect.bisect_right(self.t, t) - 1
        if j < 0:
            return v(0)
        if j >= len(self.t) - 1:
            return v(len(self.t) - 1)
        t0, t1 = self.t[j], self.t[j + 1]
        x0, x1 = v(j), v(j + 1)
        return x0 + (x1 - x0) * (t - t0) / (t1 - t0) if t1 > t0 else x1

    def during(self, a, b):
        """Seconds of CPU all server threads used in [a, b]."""
        if len(self.t) < 2:
            return 0.0
        return max(0.0, (self._at(self.total, 0, b) - self._at(self.total, 0, a)) / 1e9)

    def busiest(self, a, b):
        """(thread name, seconds) of the thread that used most CPU in [a, b]."""
        best, name = 0.0, ""
        for k, (f, vals) in enumerate(self.series):
            d = (self._at(vals, f, b) - self._at(vals, f, a)) / 1e9
            if d > best:
                best, name = d, self.names[k]
        return name, best


class Meters:
    """The pinger and one stall meter per CPU, for one measured phase."""

    def __init__(self, srv, a):
        self.stop = mp.Event()
        self.pq = mp.Queue()
        self.cpus = sorted({a.server_cpu, a.client_cpu})
        self.hq = {cpu: mp.Queue() for cpu in self.cpus}
        self.procs = [mp.Process(target=pinger, args=(srv.port, self.stop, self.pq, a.client_cpu,
                                                      a.ping_interval, a.probe))]
        self.procs += [mp.Process(target=server_cpu_meter, args=(self.stop, self.hq[cpu], cpu, srv.pid))
                       if cpu == a.server_cpu else mp.Process(target=hiccups, args=(self.stop, self.hq[cpu], cpu))
                       for cpu in self.cpus]
        self.server_cpu = a.server_cpu

    def __enter__(self):
        for p in self.procs:
            p.start()
        time.sleep(0.3)                  # the pinger connected, the meters running
        return self

    def __exit__(self, *exc):
        self.stop.set()
        try:
            if exc[0] is None:
                self.pings = self.pq.get(timeout=60)
                self.late = {cpu: self.hq[cpu].get(timeout=60) for cpu in self.cpus}
                late, times, series, names = self.late[self.server_cpu]
                self.late[self.server_cpu] = late
                self.cpu = (times, series, names)
        finally:
            for p in self.procs:
                p.join(5)
                if p.is_alive():
                    p.terminate()
                    p.join()
        return False


# ---------------------------------------------------------------------------
# load


def cmd_bytes(kind, key, lo, hi):
    """One command for elements lo..hi-1 as RESP."""
    n = hi - lo
    if kind == "keyspace":
        body = b"".join([b"$14\r\nkey:%010d\r\n$8\r\n%08d\r\n" % (i, i % 100000000) for i in range(lo, hi)])
        return b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * n) + body
    head = b"$%d\r\n%s\r\n" % (len(key), key)
    if kind == "hash":
        body = b"".join([b"$12\r\nf:%010d\r\n$8\r\n%08d\r\n" % (i, i % 100000000) for i in range(lo, hi)])
        return b"*%d\r\n$4\r\nHSET\r\n" % (2 + 2 * n) + head + body
    if kind == "zset":
        body = b"".join([b"$10\r\n%010d\r\n$12\r\nm:%010d\r\n" % ((i * 2654435761) % 10000000000, i)
                         for i in range(lo, hi)])
        return b"*%d\r\n$4\r\nZADD\r\n" % (2 + 2 * n) + head + body
    if kind == "set":
        body = b"".join([b"$12\r\nm:%010d\r\n" % i for i in range(lo, hi)])
        return b"*%d\r\n$4\r\nSADD\r\n" % (2 + n) + head + body
    raise ValueError(kind)


def compact_cmd(lo, hi, vlen):
    raw = os.urandom(vlen * (hi - lo))
    parts = [b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * (hi - lo))]
    for i in range(lo, hi):
        o = vlen * (i - lo)
        parts.append(b"$12\r\nc:%010d\r\n$%d\r\n" % (i, vlen))
        parts.append(raw[o:o + vlen])
        parts.append(b"\r\n")
    return b"".join(parts)


def del_cmd(lo, hi):
    keys = [b"c:%010d" % i for i in range(lo, hi) if i % 10]
    return enc(b"DEL", *keys), keys


def run_batches(c, cmds_iter, batch_cmds, steps=None, label=None):
    """Send commands batch_cmds at a time (one sendall, then every reply);
    append (start, end, label) per batch to steps. cmds_iter yields
    (resp bytes, first element index)."""
    buf, first = [], None
    for data, idx in cmds_iter:
        if first is None:
            first = idx
        buf.append(data)
        if len(buf) == batch_cmds:
            _send_batch(c, buf, steps, label(first) if label else "")
            buf, first = [], None
    if buf:
        _send_batch(c, buf, steps, label(first) if label else "")


def _send_batch(c, buf, steps, lab):
    t0 = time.monotonic()
    c.sock.sendall(b"".join(buf))
    for _ in buf:
        r = c.read_reply()
        if isinstance(r, RespError):
            raise r
    if steps is not None:
        steps.append((t0, time.monotonic(), lab))


def grow(c, kind, n, per_cmd, batch_cmds, steps=None):
    key = {"hash": b"pause:hash", "zset": b"pause:zset", "set": b"pause:set"}.get(kind, b"")

    def cmds():
        for lo in range(0, n, per_cmd):
            yield cmd_bytes(kind, key, lo, min(n, lo + per_cmd)), lo
    run_batches(c, cmds(), batch_cmds, steps, lambda i: "%d" % i)
    if kind == "keyspace":
        got = int(c.call("DBSIZE"))
    else:
        got = int(c.call({"hash": "HLEN", "zset": "ZCARD", "set": "SCARD"}[kind], key))
    if got != n:
        raise RuntimeError("%s: %d elements after the load, expected %d" % (kind, got, n))
    return key


def info_int(c, section, field):
    v = info_fields(c, section).get(field)
    return int(v) if v is not None else None


def small_stats(c):
    line = info_fields(c, "goblin").get("objstore_small")
    if not line:
        return None
    return {k: int(v) for k, v in (kv.split("=") for kv in line.split(","))}


def wait_lazyfree(c, timeout=300.0):
    """Until no object is left for a lazy-free thread (0 at once for goblin,
    which frees inline)."""
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if not info_int(c, "memory", "lazyfree_pending_objects"):
            return
        time.sleep(0.02)
    raise RuntimeError("lazy free still pending after %.0f s" % timeout)


def slots(t_from, t_to, width, prefix, origin):
    out = []
    t = t_from
    while t < t_to:
        out.append((t, t + width, "%s%+d ms" % (prefix, round(1e3 * (t - origin)))))
        t += width
    return out


def set_monitors(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "1000")
    c.call("CONFIG", "SET", "slowlog-max-len", "100000")
    c.call("SLOWLOG", "RESET")
    # The latency monitor sees the server's own work between commands (goblin:
    # the cron's expire-cycle and active-defrag-cycle, a compaction step with
    # the keyspace excluded; Redis: its expire-cycle and the like).
    c.call("CONFIG", "SET", "latency-monitor-threshold", "1")
    c.call("LATENCY", "RESET")


def get_latency(c):
    """LATENCY LATEST as {event: all-time max ms} (since the last reset)."""
    out = {}
    for e in c.call("LATENCY", "LATEST"):
        name = e[0].decode() if isinstance(e[0], bytes) else str(e[0])
        out[name] = int(e[3])
    return out


def get_slowlog(c):
    out = []
    for e in c.call("SLOWLOG", "GET", "100000"):
        args = [x if isinstance(x, bytes) else str(x).encode() for x in e[3]]
        # the command and its first two arguments name it across runs (the
        # same key and first element in every run)
        out.append((b" ".join(args[:3]).decode(errors="replace")[:60], int(e[2]) / 1e6))
    return out


# ---------------------------------------------------------------------------
# one server, one group of scenarios


def start_server(kind, a, cleanup):
    lazy = ["--lazyfree-lazy-user-del", "yes", "--lazyfree-lazy-user-flush", "yes"]
    if kind == "redis":
        binary, args = a.reference, ["--appendonly", "no"] + lazy
    else:
        binary, args = a.server, ["--cores", str(a.cores)] + lazy
    s = cleanup.server(Server(binary, args, cpus=[a.server_cpu], name=kind))
    s.start()
    set_monitors(s.conn)
    return s


def measured(srv, a, body):
    """Run body(steps, extra) with the meters on; return the raw run."""
    c = srv.conn
    c.call("SLOWLOG", "RESET")
    c.call("LATENCY", "RESET")
    steps, extra = [], {}
    with Meters(srv, a) as m:
        t0 = time.monotonic()
        body(steps, extra)
        t1 = time.monotonic()
        time.sleep(0.05)
    extra["seconds"] = t1 - t0
    return {"pings": m.pings, "cpu": m.cpu, "late": m.late, "steps": steps,
            "slow": get_slowlog(c), "latency": get_latency(c), "extra": extra, "window": (t0, t1)}


def run_group(group, kind, a, sel, cleanup):
    """Fresh server; the selected scenarios of group; {scenario: raw run}."""
    n = max(1, int(10_000_000 * a.scale))
    srv = start_server(kind, a, cleanup)
    c = srv.conn
    out = {}
    try:
        if group[0] == "compact":
            out["compact"] = compact_run(srv, a)
            return out
        growth, event = group
        if growth in sel:
            def body(steps, extra):
                grow(c, growth, n, a.per_cmd, a.batch_cmds, steps)
            out[growth] = measured(srv, a, body)
            out[growth]["extra"]["used_memory"] = info_int(c, "memory", "used_memory")
        if event in sel:
            if growth not in sel:
                grow(c, growth, n, a.per_cmd, a.batch_cmds)
            args = ["FLUSHALL", "ASYNC"] if event == "flushall" else \
                ["DEL", {"hash": "pause:hash", "zset": "pause:zset", "set": "pause:set"}[growth]]
            before = info_int(c, "memory", "used_memory")
            time.sleep(0.5)

            def body(steps, extra):
                time.sleep(0.05)
                te = time.monotonic()
                r = c.call(*args)
                tr = time.monotonic()
                wait_lazyfree(c)
                tf = time.monotonic()
                time.sleep(a.tail)
                steps.extend(slots(te - 0.02, time.monotonic(), EVENT_SLOT, "", te))
                extra.update(reply=str(r), command_rtt=tr - te, freed_after=tf - te)
            out[event] = measured(srv, a, body)
            left = int(c.call("DBSIZE"))
            if left:
                raise RuntimeError("%s left %d keys" % (event, left))
            out[event]["extra"].update(used_before=before, used_after=info_int(c, "memory", "used_memory"))
        return out
    finally:
        srv.stop()
        cleanup.servers.remove(srv)


def compact_run(srv, a):
    c = srv.conn
    n = max(1000, int(a.compact_keys * a.scale))
    per = max(1, a.per_cmd // 10)          # 500-byte values: 100 keys per MSET
    vlen = a.compact_value

    def loads():
        for lo in range(0, n, per):
            yield compact_cmd(lo, min(n, lo + per), vlen), lo
    run_batches(c, loads(), a.batch_cmds)
    if int(c.call("DBSIZE")) != n:
        raise RuntimeError("compact: DBSIZE after the load is not %d" % n)
    before = small_stats(c)
    used_before = info_int(c, "memory", "used_memory")
    time.sleep(0.5)

    def body(steps, extra):
        def dels():
            for lo in range(0, n, a.per_cmd):
                yield del_cmd(lo, min(n, lo + a.per_cmd))[0], lo
        run_batches(c, dels(), a.batch_cmds, steps, lambda i: "del %d" % i)
        td = time.monotonic()
        extra["delete_seconds"] = td - steps[0][0]
        if before is None:
            time.sleep(a.compact_wait_redis)
        else:
            # until the segment count has not moved for 2 s
            last, since = None, time.monotonic()
            while time.monotonic() - td < a.compact_timeout:
                time.sleep(0.2)
                s = small_stats(c)
                if last is None or s["segments"] != last["segments"] or s["compactions"] != last["compactions"]:
                    last, since = s, time.monotonic()
                elif time.monotonic() - since >= 2.0:
                    break
            extra["compact_seconds"] = since - td
        time.sleep(a.tail)
        steps.extend(slots(td, time.monotonic(), WAIT_SLOT, "wait ", td))
    r = measured(srv, a, body)
    after = small_stats(c)
    r["extra"].update(keys=n, value_bytes=vlen, used_before=used_before,
                      used_after=info_int(c, "memory", "used_memory"))
    if before is not None:
        r["extra"].update(segments_before=before["segments"], segments_after=after["segments"],
                          compactions=after["compactions"] - before["compactions"],
                          moved=after["moved"] - before["moved"], released=after["released"] - before["released"])
    if int(c.call("DBSIZE")) != (n + 9) // 10:     # the keys i % 10 == 0 stay
        raise RuntimeError("compact: DBSIZE after the deletes is wrong")
    return r


# ---------------------------------------------------------------------------
# analysis


def overlapping(t0, t1, iv, starts, longest):
    """Does [t0, t1] overlap one of the intervals iv (sorted by start)?"""
    j = bisect.bisect_left(starts, t0 - longest)
    while j < len(iv) and iv[j][0] < t1:
        if iv[j][1] > t0:
            return True
        j += 1
    return False


def analyse(raw):
    """Per-run figures, and per-step worst PING / server CPU (for the
    per-batch minimum over runs)."""
    w0, w1 = raw["window"]
    sc = ServerCPU(*raw["cpu"])
    # (start, round trip, server CPU during it)
    pings = [(t, r, sc.during(t, t + r)) for t, r in raw["pings"] if w0 <= t <= w1]
    rtt = sorted(p[1] for p in pings)
    n = len(rtt)
    stalls = sorted((t, t + 0.001 + o) for l in raw["late"].values() for t, o in l if o > STALL)
    starts = [s for s, _ in stalls]
    longest = max((e - s for s, e in stalls), default=0.0)
    over = [p for p in pings if p[1] > PAUSE]
    hit = sum(1 for p in over if overlapping(p[0], p[0] + p[1], stalls, starts, longest))
    unexplained = 0.0
    for p in sorted(pings, key=lambda p: -p[1]):
        if not overlapping(p[0], p[0] + p[1], stalls, starts, longest):
            unexplained = p[1]
            break
    top_own = max(pings, key=lambda p: p[2]) if pings else (0.0, 0.0, 0.0)
    busiest = sc.busiest(top_own[0], top_own[0] + top_own[1]) if pings else ("", 0.0)
    # per step: the worst PING (round trip, server CPU) outstanding during it
    by_start = sorted(pings)
    t0s = [p[0] for p in by_start]
    maxrtt = rtt[-1] if rtt else 0.0
    step_rtt, step_own, labels = [], [], []
    for s, e, lab in raw["steps"]:
        j = bisect.bisect_left(t0s, s - maxrtt)
        wr = wo = 0.0
        while j < len(by_start) and by_start[j][0] < e:
            p = by_start[j]
            if p[0] + p[1] > s:
                wr = max(wr, p[1])
                wo = max(wo, p[2])
            j += 1
        step_rtt.append(wr)
        step_own.append(wo)
        labels.append(lab)
    # compact: the delete batches and the wait for the compaction apart
    phases = {}
    for v, lab in zip(step_own, labels):
        if lab.startswith(("del ", "wait ")):
            ph = lab.split(" ")[0]
            phases[ph] = max(phases.get(ph, 0.0), v)
    late = {cpu: sorted((o for _, o in l), reverse=True) for cpu, l in raw["late"].items()}
    batch = [e - s for s, e, _ in raw["steps"]]
    return {
        "pings": n,
        "median": rtt[n // 2] if n else 0.0,
        "p999": rtt[int(n * 0.999)] if n else 0.0,
        "max": maxrtt,
        "over": len(over),
        "over_stall": hit,
        "unexplained": unexplained,
        "own_max": top_own[2],
        "own_max_rtt": top_own[1],
        "own_max_thread": busiest[0],
        "own_max_thread_cpu": busiest[1],
        "own_over": sum(1 for p in pings if p[2] > PAUSE),
        "server_cpu_seconds": sc.during(w0, w1),
        "stalls": {cpu: {"over1": sum(1 for o in l if o > 0.001), "over2": sum(1 for o in l if o > 0.002),
                         "worst": l[0] if l else 0.0} for cpu, l in late.items()},
        "slowest": sorted(rtt[-5:], reverse=True),
        "slow": raw["slow"],
        "latency": raw["latency"],
        "step_rtt": step_rtt,
        "step_own": step_own,
        "step_labels": labels,
        "batch_seconds": batch,
        "extra": raw["extra"],
        "phase_cpu_max": phases,
    }


def per_batch_min(runs, field):
    """max over steps of (min over runs of runs[r][field][step]): value, label."""
    k = min(len(r[field]) for r in runs)
    if k == 0:
        return 0.0, ""
    best = [min(r[field][i] for r in runs) for i in range(k)]
    i = max(range(k), key=best.__getitem__)
    return best[i], runs[0]["step_labels"][i]


def slow_min(runs):
    """max over commands of (min over runs of its slow-log time; 0 when a
    run did not log it)."""
    keys = set()
    for r in runs:
        keys.update(k for k, _ in r["slow"])
    best, which = 0.0, ""
    for k in keys:
        m = min(max((d for kk, d in r["slow"] if kk == k), default=0.0) for r in runs)
        if m > best:
            best, which = m, k
    return best, which


def ms(x):
    return "%.2f" % (1e3 * x)


def print_run(scen, kind, r, i, a):
    e = r["extra"]
    print("  run %d %-6s %-9s %6.1fs  %6d PINGs: median %s, p99.9 %s, max %s ms; over 2 ms: %d "
          "(%d overlap a stall > 1 ms); worst not overlapping a stall %s ms; server CPU in a PING: max %s ms "
          "(in a %s ms PING; %s %s), %d over 2 ms; server CPU %.2f s"
          % (i + 1, kind, scen, e["seconds"], r["pings"], ms(r["median"]), ms(r["p999"]), ms(r["max"]),
             r["over"], r["over_stall"], ms(r["unexplained"]), ms(r["own_max"]), ms(r["own_max_rtt"]),
             r["own_max_thread"], ms(r["own_max_thread_cpu"]), r["own_over"], r["server_cpu_seconds"]))
    st = "; ".join("CPU %d: %d over 1 ms, %d over 2 ms, worst %s ms" % (cpu, s["over1"], s["over2"], ms(s["worst"]))
                   for cpu, s in sorted(r["stalls"].items()))
    print("      machine stalls: %s" % st)
    slow = sorted(r["slow"], key=lambda x: -x[1])[:3]
    print("      slowest PINGs (ms): %s; slow log: %d commands over 1 ms%s"
          % (" ".join(ms(x) for x in r["slowest"]), len(r["slow"]),
             ("; slowest: " + ", ".join("%s ms %s" % (ms(d), k) for k, d in slow)) if slow else ""))
    if r["latency"]:
        print("      latency monitor, max ms: %s" % ", ".join("%s %d" % kv for kv in sorted(r["latency"].items())))
    if r["phase_cpu_max"]:
        print("      server CPU in a PING, max: %s" % ", ".join(
            "%s %s ms" % ({"del": "during the deletes", "wait": "during the compaction wait"}[k], ms(v))
            for k, v in sorted(r["phase_cpu_max"].items())))
    keep = {k: v for k, v in e.items() if k != "seconds"}
    if r["batch_seconds"] and scen not in ("flushall", "compact") and not scen.startswith("del"):
        b = sorted(r["batch_seconds"])
        keep["batch_ms_median_max"] = "%s/%s" % (ms(b[len(b) // 2]), ms(b[-1]))
    if keep:
        print("      %s" % ", ".join("%s=%s" % (k, ("%.4f" % v if isinstance(v, float) else v))
                                      for k, v in sorted(keep.items())))
    sys.stdout.flush()


def summary(results, kinds, scen_order, a):
    rows = []
    for scen in scen_order:
        for kind in kinds:
            runs = results.get(scen, {}).get(kind)
            if not runs:
                continue
            pr, prl = per_batch_min(runs, "step_rtt")
            po, pol = per_batch_min(runs, "step_own")
            sm, smk = slow_min(runs)
            rows.append({
                "scenario": scen, "server": kind, "runs": len(runs),
                "pings": sum(r["pings"] for r in runs),
                "max": [r["max"] for r in runs],
                "p999": [r["p999"] for r in runs],
                "over": sum(r["over"] for r in runs),
                "over_stall": sum(r["over_stall"] for r in runs),
                "unexplained": [r["unexplained"] for r in runs],
                "own_max": [r["own_max"] for r in runs],
                "own_over": sum(r["own_over"] for r in runs),
                "batch_min_rtt": pr, "batch_min_rtt_at": prl,
                "batch_min_own": po, "batch_min_own_at": pol,
                "slow_min": sm, "slow_min_cmd": smk,
                "latency_min": {ev: min(r["latency"].get(ev, 0) for r in runs)
                                for ev in sorted(set().union(*(r["latency"] for r in runs)))},
                "extra": [r["extra"] for r in runs],
            })
    print()
    print("Summary (%d runs each; per run: max, p99.9, worst PING not overlapping a machine stall, "
          "server CPU in a PING; over the runs: PINGs over 2 ms and of them those overlapping a stall, "
          "per-batch minimum of the worst PING and of the server CPU in a PING, slowest command by "
          "the slow log, min over runs)" % a.runs)
    print("| scenario | server | PINGs | max ms | p99.9 ms | > 2 ms (overlapping a stall) "
          "| worst not overlapping a stall, ms | server CPU in one PING, max ms (PINGs > 2 ms) "
          "| per-batch min: worst PING, ms (at) | per-batch min: server CPU in a PING, ms (at) "
          "| slow log, min over runs, ms |")
    print("| --- | --- | ---: | --- | --- | --- | --- | --- | --- | --- | --- |")
    for w in rows:
        print("| %s | %s | %d | %s | %s | %d (%d) | %s | %s (%d) | %s (%s) | %s (%s) | %s |"
              % (w["scenario"], w["server"], w["pings"], " / ".join(ms(x) for x in w["max"]),
                 " / ".join(ms(x) for x in w["p999"]), w["over"], w["over_stall"],
                 " / ".join(ms(x) for x in w["unexplained"]), " / ".join(ms(x) for x in w["own_max"]),
                 w["own_over"], ms(w["batch_min_rtt"]), w["batch_min_rtt_at"], ms(w["batch_min_own"]),
                 w["batch_min_own_at"],
                 ms(w["slow_min"]) + (" (%s)" % w["slow_min_cmd"][:40] if w["slow_min_cmd"] else "")))
    print()
    print("Latency monitor (threshold 1 ms): per event, the largest sample of each run, ms; min over runs")
    for w in rows:
        ev = ", ".join("%s %d" % kv for kv in w["latency_min"].items() if kv[1] > 0)
        print("  %-9s %-6s %s" % (w["scenario"], w["server"], ev or "nothing over 1 ms in every run"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0, help="10M elements x scale (0.1: 1M)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated subset of " +
                    ",".join(SCENARIOS))
    ap.add_argument("--servers", default="goblin,redis", help="comma-separated: goblin, redis")
    ap.add_argument("--server", default=os.path.join(REPO, "build-release", "goblin-core"))
    ap.add_argument("--reference", default="/usr/bin/redis-server")
    ap.add_argument("--cores", type=int, default=1, help="goblin --cores")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--per-cmd", type=int, default=1000, help="elements per MSET/HSET/ZADD/SADD/DEL")
    ap.add_argument("--batch-cmds", type=int, default=20, help="commands pipelined per batch")
    ap.add_argument("--ping-interval", type=float, default=0.001, help="pinger's sleep between PINGs, s")
    ap.add_argument("--probe", choices=("ping", "get"), default="ping",
                    help="the pinger's command: PING, or GET of a missing key (takes the keyspace lock)")
    ap.add_argument("--tail", type=float, default=2.0, help="seconds measured after an event has finished")
    ap.add_argument("--compact-keys", type=int, default=2_000_000, help="keys of the compact scenario (x scale)")
    ap.add_argument("--compact-value", type=int, default=500, help="bytes per value in the compact scenario")
    ap.add_argument("--compact-timeout", type=float, default=300.0)
    ap.add_argument("--compact-wait-redis", type=float, default=2.0)
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    a = ap.parse_args()
    sel = [s.strip() for s in a.scenarios.split(",") if s.strip()]
    bad = [s for s in sel if s not in SCENARIOS]
    if bad:
        ap.error("unknown scenario(s): %s" % ",".join(bad))
    kinds = [k.strip() for k in a.servers.split(",") if k.strip()]
    if any(k not in ("goblin", "redis") for k in kinds):
        ap.error("--servers takes goblin and/or redis")
    for k in kinds:
        b = a.server if k == "goblin" else a.reference
        if not os.path.exists(b):
            ap.error("missing %s" % b)

    print("pause_bench: %s" % time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    print("machine: %s; load average %.2f %.2f %.2f" % ((machine_description(),) + os.getloadavg()))
    print("servers on CPU %d, pinger, stall meters and loader on CPU %d; scale %.3g (%d elements), %d runs, "
          "probe %s every %.1f ms" % (a.server_cpu, a.client_cpu, a.scale, int(10_000_000 * a.scale), a.runs,
                                      a.probe.upper(), 1e3 * a.ping_interval))
    sys.stdout.flush()
    groups = [g for g in GROUPS if any(s in sel for s in g)]
    results = {}
    cleanup = Cleanup()
    os.sched_setaffinity(0, {a.client_cpu})
    try:
        for r in range(a.runs):
            for g in groups:
                for kind in (kinds if r % 2 == 0 else kinds[::-1]):
                    got = run_group(g, kind, a, sel, cleanup)
                    for scen in g:
                        if scen in got:
                            res = analyse(got[scen])
                            results.setdefault(scen, {}).setdefault(kind, []).append(res)
                            print_run(scen, kind, res, r, a)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping servers", file=sys.stderr)
        return 130
    finally:
        cleanup.run()
    rows = summary(results, kinds, [s for s in SCENARIOS if s in sel], a)
    if a.json:
        for scen in results.values():
            for runs in scen.values():
                for r in runs:
                    for k in ("step_rtt", "step_own", "step_labels", "batch_seconds"):
                        r.pop(k, None)
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "summary": rows, "runs": results}, f, indent=1)
        print("JSON written to %s" % a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
