#!/usr/bin/env python3
"""What 2 MiB huge pages are worth to Goblin's arenas: random HGET, A/B.

Method (results in docs/benchmarks.md, section 1):

  * Two goblin-core servers run at the same time on free loopback ports, one
    with --arena-hugetlb and one without; everything else is identical.
  * Each is loaded with one hash of --fields fields, "field:<n>" with n
    written zero-padded to 12 digits (0 <= n < fields, the names
    redis-benchmark makes from "field:__rand_int__" with -r FIELDS), each
    value --value-bytes bytes (n in hex, zero-padded). 8,000,000 fields with
    8-byte values make a ~214 MiB arena, far past the reach of the data TLB
    with 4 KiB pages (~107 huge pages with 2 MiB ones). The load is pipelined
    raw RESP (HSET with 1000 pairs per command), the same bytes sent to both.
  * Per server: HugetlbPages from /proc/PID/status (huge-page-backed bytes,
    which VmRSS does not count), the true resident set VmRSS + HugetlbPages,
    and the arena size from INFO goblin.
  * Then --trials timed trials per server, interleaved baseline, hugetlb,
    baseline, hugetlb, ... of random HGET for --seconds each, so whatever
    else the machine does hits both arms alike and cancels in the per-trial
    delta (hugetlb / baseline - 1). Printed: per-trial throughput, per-trial
    delta, the median and range of the delta, and the resident delta.

The load generator is build-release/hget-driver (benchmarks/hget_driver.c,
hiredis reply reader, `make bench-tools`; built on demand when missing) or,
failing that, redis-benchmark with a custom "hget myhash field:__rand_int__"
command and -r FIELDS. Both pipeline (-P), so the client is not the
bottleneck; the output says which one ran and how busy the server was.

Huge pages come from the kernel's reserved pool (vm.nr_hugepages). With an
empty or short pool the script says so up front, prints the sysctl needed
for the chosen size, and still runs: both arms then use 4 KiB pages, which
the report states. As root, --reserve sets vm.nr_hugepages itself (reading it
back: the kernel may grant fewer) and restores the old value at the end.

Servers and clients run in their own process groups and are always stopped
on exit, including Ctrl-C, SIGTERM and a failed load.

  ./benchmarks/tlb_arena_benchmark.py ./build-release/goblin-core --fields 8000000

Python 3 standard library only. compare.py and memory.py import the server
and RESP helpers from this file.
"""

import argparse
import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MIB = 1 << 20

# ---------------------------------------------------------------------------
# RESP


class RespError(Exception):
    """An error reply (-ERR ...)."""


def enc(*args):
    """One command as RESP bytes."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def parse_reply(buf, pos):
    """(reply, new_pos), or None when buf[pos:] holds no complete reply.
    Error replies come back as RespError instances (not raised)."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        return None
    t = buf[pos:pos + 1]
    line = bytes(buf[pos + 1:end])
    pos = end + 2
    if t == b"+":
        return line, pos
    if t == b"-":
        return RespError(line.decode(errors="replace")), pos
    if t == b":":
        return int(line), pos
    if t == b"$":
        n = int(line)
        if n < 0:
            return None, pos
        if len(buf) < pos + n + 2:
            return None                     # incomplete
        return bytes(buf[pos:pos + n]), pos + n + 2
    if t == b"*":
        n = int(line)
        if n < 0:
            return None, pos
        items = []
        for _ in range(n):
            r = parse_reply(buf, pos)
            if r is None:
                return None
            items.append(r[0])
            pos = r[1]
        return items, pos
    raise RuntimeError("protocol error near %r" % bytes(buf[pos - 1:pos + 40]))


_parse = parse_reply


class Conn:
    """A blocking RESP connection with pipelined bulk sending."""

    def __init__(self, port, host="127.0.0.1", timeout=60.0, connect_wait=20.0):
        deadline = time.time() + connect_wait
        while True:
            try:
                self.sock = socket.create_connection((host, port), timeout=timeout)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0
        self.outstanding = 0   # replies expected from pipelined sends
        self.first_error = None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _fill(self, block=True):
        if not block:
            self.sock.setblocking(False)
        try:
            data = self.sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return False
        finally:
            if not block:
                self.sock.setblocking(True)
        if not data:
            raise ConnectionError("server closed the connection")
        if self.pos > (1 << 20):
            del self.buf[:self.pos]
            self.pos = 0
        self.buf += data
        return True

    def read_reply(self):
        while True:
            r = _parse(self.buf, self.pos)
            if r is not None:
                self.pos = r[1]
                return r[0]
            self._fill()

    def call(self, *args):
        if self.outstanding:
            self.drain()
        self.sock.sendall(enc(*args))
        r = self.read_reply()
        if isinstance(r, RespError):
            raise r
        return r

    # pipelined bulk load: send() many commands, drain() at the end
    def send(self, data, ncmds):
        self.sock.sendall(data)
        self.outstanding += ncmds
        # consume what already arrived so the server never blocks on us
        while self._fill(block=False):
            pass
        self._consume()

    def _consume(self):
        while self.outstanding:
            r = _parse(self.buf, self.pos)
            if r is None:
                return
            self.pos = r[1]
            self.outstanding -= 1
            if isinstance(r[0], RespError) and self.first_error is None:
                self.first_error = r[0]

    def drain(self):
        while True:
            self._consume()
            if not self.outstanding:
                break
            self._fill()
        if self.first_error is not None:
            e, self.first_error = self.first_error, None
            raise RespError("during pipelined load: %s" % e)


def info_fields(conn, section=None):
    raw = conn.call("INFO", section) if section else conn.call("INFO")
    out = {}
    for line in raw.decode(errors="replace").splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out.setdefault(k, v)     # first occurrence wins
    return out


# ---------------------------------------------------------------------------
# processes, memory, CPUs


_ports_given = set()


def free_port(bus_offset=0):
    """A TCP port nobody listens on now and not one this process was given
    before (the kernel may hand the same free port to two binds in a row).
    With bus_offset, port + bus_offset must be free too (a cluster node's
    bus port) and below 65536."""
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        s.close()
        if p in _ports_given or p + bus_offset > 65535:
            continue
        if bus_offset:
            b = socket.socket()
            try:
                b.bind(("127.0.0.1", p + bus_offset))
            except OSError:
                continue
            finally:
                b.close()
        _ports_given.add(p)
        return p


def proc_status(pid):
    """VmRSS and HugetlbPages of pid, in bytes."""
    out = {"VmRSS": 0, "HugetlbPages": 0}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in out:
                out[k] = int(v.split()[0]) * 1024
    return out


def anon_huge_bytes(pid):
    """AnonHugePages (transparent huge pages) of pid, from smaps_rollup."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            m = re.search(r"\[(\w+)\]", f.read())
            return m.group(1) if m else "?"
    except OSError:
        return "n/a"


def resident(pid):
    s = proc_status(pid)
    return s["VmRSS"] + s["HugetlbPages"]


def proc_cpu_seconds(pid):
    """utime + stime of pid (all threads), seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tck


def parse_cpulist(s):
    cpus = []
    for part in s.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            cpus.extend(range(int(a), int(b) + 1))
        else:
            cpus.append(int(part))
    return cpus


def cpulist(cpus):
    return ",".join(str(c) for c in cpus)


def plan_pinning(pin, server_cpus, client_cpus, cores):
    """(server cpu list or None, client cpu list or None, note)."""
    if server_cpus or client_cpus:
        return (parse_cpulist(server_cpus) if server_cpus else None,
                parse_cpulist(client_cpus) if client_cpus else None,
                "pinned as asked")
    if not pin:
        return None, None, "not pinned (use --pin)"
    if not shutil.which("taskset"):
        return None, None, "not pinned: taskset not found (util-linux)"
    avail = sorted(os.sched_getaffinity(0))
    if len(avail) < 2:
        return None, None, "not pinned: only one CPU available"
    ns = min(cores, len(avail) - 1)
    srv, cli = avail[:ns], avail[ns:]
    note = "servers on CPU %s, client on CPU %s" % (cpulist(srv), cpulist(cli))
    if ns < cores:
        note += " (fewer CPUs than --cores %d + 1 client CPU)" % cores
    return srv, cli, note


def taskset_prefix(cpus):
    return ["taskset", "-c", cpulist(cpus)] if cpus else []


class Server:
    """A server process in its own process group, on a free loopback port."""

    def __init__(self, binary, args=(), cpus=None, name="server", keep_log=False):
        self.name = name
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="goblin-bench-")
        self.log_path = os.path.join(self.dir, "server.log")
        self.cmd = taskset_prefix(cpus) + [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                                            "--dir", self.dir, "--save", ""] + list(args)
        self.proc = None
        self.conn = None
        self.keep_log = keep_log

    def start(self):
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.time() + 20
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited at start-up (%s):\n%s" % (
                    self.name, " ".join(self.cmd), self.log_tail()))
            try:
                self.conn = Conn(self.port, connect_wait=0.2)
                self.conn.call("PING")
                return self
            except (OSError, RespError):
                if self.conn:
                    self.conn.close()
                    self.conn = None
                if time.time() > deadline:
                    raise RuntimeError("%s did not answer PING within 20 s:\n%s" % (
                        self.name, self.log_tail()))
                time.sleep(0.05)

    @property
    def pid(self):
        return self.proc.pid

    def log_tail(self, n=20):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-n:]).decode(errors="replace")
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.conn:
            self.conn.close()
            self.conn = None
        if self.proc is not None and self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if not self.keep_log:
            shutil.rmtree(self.dir, ignore_errors=True)


class Cleanup:
    """Stops every registered server / client and runs restore actions on
    exit, Ctrl-C, SIGTERM or SIGHUP."""

    def __init__(self):
        self.servers = []
        self.procs = []
        self.actions = []
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    @staticmethod
    def _on_signal(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)

    def server(self, s):
        self.servers.append(s)
        return s

    def run(self):
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)   # finish the cleanup
        try:
            for p in self.procs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    p.wait()
            for s in self.servers:
                s.stop()
            for a in reversed(self.actions):
                try:
                    a()
                except Exception as e:  # noqa: BLE001 -- report and go on
                    print("cleanup: %s" % e, file=sys.stderr)
        finally:
            signal.signal(signal.SIGINT, old)


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_client(cmd, cleanup, timeout):
    """Runs a client in its own process group; returns its stdout."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    cleanup.procs.append(p)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise RuntimeError("client timed out: %s" % " ".join(cmd))
    finally:
        cleanup.procs.remove(p)
    if p.returncode != 0:
        raise RuntimeError("client failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                                           err.decode(errors="replace")))
    return out.decode(errors="replace")


def machine_description():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%d CPUs (nproc), %s, kernel %s" % (os.cpu_count() or 0, model, os.uname().release)


def call_charts(kind, data, path):
    """Writes a PNG with benchmarks/charts.py, using an interpreter that has
    matplotlib (this one, else Debian's /usr/bin/python3)."""
    cand = [sys.executable, "/usr/bin/python3"]
    for py in cand:
        if not py or not os.path.exists(py):
            continue
        chk = subprocess.run([py, "-c", "import matplotlib"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        if chk.returncode == 0:
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump(data, f)
                tmp = f.name
            try:
                r = subprocess.run([py, os.path.join(HERE, "charts.py"), kind, tmp, path])
            finally:
                os.unlink(tmp)
            if r.returncode == 0:
                print("chart written to %s" % path)
                return True
            print("charts.py failed (%d)" % r.returncode, file=sys.stderr)
            return False
    print("no chart: matplotlib is missing (apt-get install python3-matplotlib)", file=sys.stderr)
    return False


# ---------------------------------------------------------------------------
# huge-page pool

HP_SYSCTL = "/proc/sys/vm/nr_hugepages"


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = int(v.split()[0])
    return out


def hugepage_size():
    return meminfo().get("Hugepagesize", 2048) * 1024


def read_nr_hugepages():
    with open(HP_SYSCTL) as f:
        return int(f.read())


def write_nr_hugepages(n):
    with open(HP_SYSCTL, "w") as f:
        f.write("%d\n" % n)
    return read_nr_hugepages()


def hdr_size(n):
    """Bytes of an arena entry's length prefix (src/ds/arena.c)."""
    k = 1
    n >>= 6
    while n:
        k += 1
        n >>= 7
    return k


def varint_size(n):
    k = 1
    while n >= 0x80:
        k += 1
        n >>= 7
    return k


def arena_estimate(fields, flen, vlen):
    payload = varint_size(flen) + flen + vlen
    return fields * (hdr_size(payload) + payload)


# ---------------------------------------------------------------------------
# the hash


FIELD_PREFIX = b"field:"
FIELD_DIGITS = 12


def hash_batches(fields, value_bytes, per_cmd=1000, per_batch=50, key=b"myhash"):
    """Yields (bytes, ncommands): pipelined HSET key field value ... commands."""
    flen = len(FIELD_PREFIX) + FIELD_DIGITS
    fast = 16 ** value_bytes >= fields if value_bytes < 16 else True
    if fast:
        fmt = b"$%d\r\n%s%%0%dd\r\n$%d\r\n%%0%dx\r\n" % (flen, FIELD_PREFIX, FIELD_DIGITS,
                                                       value_bytes, value_bytes)
        pair = lambda i: fmt % (i, i)          # noqa: E731
    else:
        ff = b"$%d\r\n%s%%0%dd\r\n$%d\r\n" % (flen, FIELD_PREFIX, FIELD_DIGITS, value_bytes)
        pair = lambda i: ff % i + (b"%016x" % i)[-value_bytes:] + b"\r\n"  # noqa: E731
    keyhdr = b"$4\r\nHSET\r\n$%d\r\n%s\r\n" % (len(key), key)
    i = 0
    while i < fields:
        parts = []
        ncmd = 0
        while ncmd < per_batch and i < fields:
            n = min(per_cmd, fields - i)
            parts.append(b"*%d\r\n" % (2 + 2 * n))
            parts.append(keyhdr)
            parts.append(b"".join([pair(j) for j in range(i, i + n)]))
            i += n
            ncmd += 1
        yield b"".join(parts), ncmd


def load_all(servers, batches, label="", total=None, report_every=5.0):
    """Sends every batch to every server (same bytes), pipelined."""
    conns = [Conn(s.port, timeout=600) for s in servers]
    t0 = last = time.time()
    sent = 0
    try:
        for data, ncmd in batches:
            for c in conns:
                c.send(data, ncmd)
            sent += ncmd
            now = time.time()
            if total and now - last > report_every:
                print("  %s: %d%% (%.0f s)" % (label, 100 * sent // total, now - t0), flush=True)
                last = now
            for s in servers:
                if not s.alive():
                    raise RuntimeError("%s died during the load:\n%s" % (s.name, s.log_tail()))
        for c in conns:
            c.drain()
    except OSError as e:
        dead = [s.name for s in servers if not s.alive()]
        if dead:
            raise RuntimeError("load failed: %s exited (%s):\n%s" % (
                ", ".join(dead), e, "\n".join(s.log_tail(8) for s in servers if not s.alive())))
        raise RuntimeError("load failed: %s" % e)
    finally:
        for c in conns:
            c.close()
    return time.time() - t0


# ---------------------------------------------------------------------------
# clients


def driver_path(build):
    p = os.path.join(REPO, "build-release", "hget-driver")
    if os.path.exists(p) or not build:
        return p if os.path.exists(p) else None
    if shutil.which("make") and os.path.exists(os.path.join(REPO, "Makefile")):
        print("building build-release/hget-driver (make bench-tools target) ...", flush=True)
        r = subprocess.run(["make", "-s", "-C", REPO, "build-release/hget-driver"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode == 0 and os.path.exists(p):
            return p
        print("  could not build it: %s" % r.stderr.decode(errors="replace").strip()[-300:])
    return None


class HgetClient:
    def __init__(self, kind, path, fields, conns, pipeline, cpus, cleanup, key="myhash"):
        self.kind, self.path = kind, path
        self.fields, self.conns, self.pipeline = fields, conns, pipeline
        self.cpus, self.cleanup, self.key = cpus, cleanup, key
        self.n = None   # redis-benchmark request count (calibrated)

    def describe(self):
        if self.kind == "hget-driver":
            return ("hget-driver (benchmarks/hget_driver.c, hiredis reader), %d connections, "
                    "pipeline %d, time-bounded" % (self.conns, self.pipeline))
        return ("redis-benchmark, %d clients, -P %d, -r %d, custom command "
                "'hget %s field:__rand_int__', -n calibrated to the trial length"
                % (self.conns, self.pipeline, self.fields, self.key))

    def _rb(self, port, n):
        cmd = taskset_prefix(self.cpus) + [
            self.path, "-h", "127.0.0.1", "-p", str(port), "-c", str(self.conns),
            "-P", str(self.pipeline), "-n", str(n), "-r", str(self.fields), "--csv",
            "hget", self.key, "field:__rand_int__"]
        t0 = time.time()
        out = run_client(cmd, self.cleanup, timeout=600)
        el = time.time() - t0
        for line in out.splitlines():
            cells = [c.strip('"') for c in line.split('","')]
            if len(cells) >= 2 and cells[0].lower().startswith("hget"):
                return {"rps": float(cells[1]), "requests": n, "seconds": el,
                        "misses": None, "errors": None}
        raise RuntimeError("cannot read redis-benchmark output:\n" + out)

    def calibrate(self, port, seconds):
        if self.kind != "redis-benchmark":
            return
        r = self._rb(port, 20000 * self.pipeline)
        self.n = max(10000, int(r["rps"] * seconds))

    def run(self, port, seconds, seed=1):
        if self.kind == "redis-benchmark":
            return self._rb(port, self.n)
        cmd = taskset_prefix(self.cpus) + [
            self.path, "-p", str(port), "-k", self.key, "-x", FIELD_PREFIX.decode(),
            "-r", str(self.fields), "-c", str(self.conns), "-P", str(self.pipeline),
            "-t", str(seconds), "-s", str(seed)]
        out = run_client(cmd, self.cleanup, timeout=seconds + 120)
        m = re.search(r"requests=(\d+) seconds=([\d.]+) rps=([\d.]+) misses=(\d+) errors=(\d+)", out)
        if not m:
            raise RuntimeError("cannot read hget-driver output:\n" + out)
        return {"requests": int(m.group(1)), "seconds": float(m.group(2)),
                "rps": float(m.group(3)), "misses": int(m.group(4)), "errors": int(m.group(5))}


# ---------------------------------------------------------------------------


def fmt_mib(b):
    return "%.1f MiB" % (b / MIB)


def pct(x):
    return "%+.1f%%" % (100 * x)


def server_report(s):
    st = proc_status(s.pid)
    inf = info_fields(s.conn, "goblin")
    return {
        "pid": s.pid,
        "vmrss": st["VmRSS"],
        "hugetlb_pages": st["HugetlbPages"],
        "resident": st["VmRSS"] + st["HugetlbPages"],
        "arena_bytes_alloc": int(inf.get("arena_bytes_alloc", 0) or 0),
        "arena_bytes_used": int(inf.get("arena_bytes_used", 0) or 0),
        "arena_hugetlb_bytes": int(inf.get("arena_hugetlb_bytes", 0) or 0),
        "arena_hugetlb_fallbacks": int(inf.get("arena_hugetlb_fallbacks", 0) or 0),
        "arena_blocks": int(inf.get("arena_blocks", 0) or 0),
        "anon_huge": anon_huge_bytes(s.pid),
    }


def main():
    ap = argparse.ArgumentParser(
        description="Interleaved A/B of random HGET on a large hash: goblin-core with "
                    "--arena-hugetlb (2 MiB huge pages) against the same server without.",
        epilog="Example: sudo sysctl -w vm.nr_hugepages=120 && "
               "./benchmarks/tlb_arena_benchmark.py ./build-release/goblin-core --fields 8000000 --pin",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("server", nargs="?", default=os.path.join(REPO, "build-release", "goblin-core"),
                    help="goblin-core binary")
    ap.add_argument("--fields", type=int, default=8_000_000, help="fields in the hash")
    ap.add_argument("--value-bytes", type=int, default=8, help="bytes per value")
    ap.add_argument("--trials", type=int, default=8, help="timed trials per server")
    ap.add_argument("--seconds", type=float, default=10.0, help="length of one trial")
    ap.add_argument("--warmup", type=float, default=2.0,
                    help="untimed HGET seconds per server before the trials")
    ap.add_argument("--cores", type=int, default=1, help="--cores (worker threads) of each server")
    ap.add_argument("--pin", action="store_true",
                    help="pin the servers and the client to disjoint CPUs with taskset "
                         "(servers on the first --cores CPUs, the client on the rest)")
    ap.add_argument("--server-cpus", help="explicit CPU list for both servers, e.g. 0")
    ap.add_argument("--client-cpus", help="explicit CPU list for the client, e.g. 1")
    ap.add_argument("--client", choices=["auto", "hget-driver", "redis-benchmark"], default="auto",
                    help="load generator (auto: hget-driver, built with make if missing, "
                         "else redis-benchmark)")
    ap.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark") or
                    "/usr/bin/redis-benchmark", help="redis-benchmark binary")
    ap.add_argument("--conns", type=int, default=4, help="client connections")
    ap.add_argument("--pipeline", type=int, default=32, help="requests in flight per connection")
    ap.add_argument("--reserve", action="store_true",
                    help="(root) raise vm.nr_hugepages to what this run needs, restore it at the end")
    ap.add_argument("--chart", metavar="FILE.png", help="also write a PNG of per-trial throughput")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args()

    if not os.path.exists(args.server):
        ap.error("no server binary at %s (build it with make)" % args.server)
    if args.fields <= 0 or args.value_bytes <= 0 or args.trials <= 0 or args.seconds <= 0:
        ap.error("--fields, --value-bytes, --trials and --seconds must be positive")

    cleanup = Cleanup()
    try:
        return run(args, cleanup)
    except KeyboardInterrupt as e:
        print("\ninterrupted (%s): stopping servers" % (str(e) or "Ctrl-C"), file=sys.stderr)
        return 130
    except (RuntimeError, RespError, OSError) as e:
        print("\nerror: %s" % e, file=sys.stderr)
        return 1
    finally:
        cleanup.run()


def run(args, cleanup):
    hp = hugepage_size()
    flen = len(FIELD_PREFIX) + FIELD_DIGITS
    est = arena_estimate(args.fields, flen, args.value_bytes)
    need = math.ceil(est / hp) + 2
    print("goblin tlb_arena_benchmark: %s" % time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    print("machine: %s" % machine_description())
    print("hash: %d fields 'field:<12 digits>', %d-byte values; estimated arena %s "
          "(%d huge pages of %d KiB)" % (args.fields, args.value_bytes, fmt_mib(est),
                                          math.ceil(est / hp), hp // 1024))

    # -- the pool
    nr = read_nr_hugepages()
    mi = meminfo()
    free = mi.get("HugePages_Free", 0)
    if args.reserve and free < need:
        if os.geteuid() != 0:
            print("--reserve needs root; continuing without it")
        else:
            want = nr + (need - free)
            got = write_nr_hugepages(want)
            cleanup.actions.append(lambda: (write_nr_hugepages(nr),
                                            print("vm.nr_hugepages restored to %d" % read_nr_hugepages())))
            print("--reserve: vm.nr_hugepages %d -> asked %d, kernel granted %d" % (nr, want, got))
            free = meminfo().get("HugePages_Free", 0)
    pool_ok = free >= need
    if free == 0:
        print()
        print("NOTE: the huge-page pool is EMPTY (vm.nr_hugepages=%d, HugePages_Free=0)." % read_nr_hugepages())
        print("  --arena-hugetlb then falls back to 4 KiB pages: BOTH arms below use 4 KiB pages")
        print("  and the delta only shows noise. To measure huge pages, reserve a pool first:")
        print("      sudo sysctl -w vm.nr_hugepages=%d      # this size needs ~%d free pages" % (
            read_nr_hugepages() + need, need))
        print("  (or run this script as root with --reserve). The run continues.")
        print()
    elif not pool_ok:
        print()
        print("NOTE: the huge-page pool is SHORT: %d free, ~%d needed for this size." % (free, need))
        print("  Part of the hugetlb arm's arena will fall back to 4 KiB pages (reported below).")
        print("  Raise it with: sudo sysctl -w vm.nr_hugepages=%d   (or --reserve as root)" % (
            read_nr_hugepages() + need - free))
        print()
    else:
        print("huge-page pool: %d free of %d (need ~%d)" % (free, meminfo().get("HugePages_Total", 0), need))

    # -- pinning and client
    srv_cpus, cli_cpus, pin_note = plan_pinning(args.pin, args.server_cpus, args.client_cpus, args.cores)
    print("pinning: %s" % pin_note)
    thp = thp_mode()
    print("transparent huge pages: %s%s" % (thp, " -- the baseline arm may get THP too (see AnonHugePages)"
                                            if thp == "always" else ""))
    kind = args.client
    path = None
    if kind in ("auto", "hget-driver"):
        path = driver_path(build=True)
        if path:
            kind = "hget-driver"
        elif kind == "hget-driver":
            raise RuntimeError("build-release/hget-driver is missing and could not be built "
                               "(make bench-tools; needs libhiredis-dev)")
    if kind in ("auto", "redis-benchmark"):
        kind, path = "redis-benchmark", args.redis_benchmark
        if not os.path.exists(path):
            raise RuntimeError("no load generator: neither hget-driver nor redis-benchmark")
    client = HgetClient(kind, path, args.fields, args.conns, args.pipeline, cli_cpus, cleanup)
    print("client: %s" % client.describe())

    # -- servers, started together
    common = ["--cores", str(args.cores)]
    base = cleanup.server(Server(args.server, common, srv_cpus, name="baseline"))
    huge = cleanup.server(Server(args.server, common + ["--arena-hugetlb", "yes"], srv_cpus,
                                 name="hugetlb"))
    base.start()
    huge.start()
    print("servers: baseline pid %d port %d; hugetlb (--arena-hugetlb) pid %d port %d; --cores %d" % (
        base.pid, base.port, huge.pid, huge.port, args.cores))
    empty = {s.name: resident(s.pid) for s in (base, huge)}

    print("loading %d fields into both servers (pipelined HSET, 1000 pairs per command) ..." % args.fields,
          flush=True)
    el = load_all([base, huge], hash_batches(args.fields, args.value_bytes),
                  label="load", total=math.ceil(args.fields / 1000))
    print("loaded in %.1f s (%.0f fields/s per server)" % (el, args.fields / el))
    for s in (base, huge):
        n = s.conn.call("HLEN", "myhash")
        if n != args.fields:
            raise RuntimeError("%s: HLEN myhash = %s, expected %d" % (s.name, n, args.fields))
    time.sleep(1.0)

    rep = {s.name: server_report(s) for s in (base, huge)}
    # jemalloc keeps freed pages (old index tables after a resize) until its
    # decay returns them, which an idle server does at no fixed time; purge
    # both so the comparison holds the same live bytes, and show both reads.
    for s in (base, huge):
        s.conn.call("MEMORY", "PURGE")
    time.sleep(1.0)
    for s in (base, huge):
        rep[s.name]["resident_before_purge"] = rep[s.name]["resident"]
        st = proc_status(s.pid)
        rep[s.name].update(vmrss=st["VmRSS"], hugetlb_pages=st["HugetlbPages"],
                           resident=st["VmRSS"] + st["HugetlbPages"])
    print()
    print("%-9s %14s %14s %16s %14s %14s %10s" % ("server", "VmRSS", "HugetlbPages", "resident(sum)",
                                                  "arena", "arena huge", "fallbacks"))
    for s in (base, huge):
        r = rep[s.name]
        print("%-9s %14s %14s %16s %14s %14s %10d" % (
            s.name, fmt_mib(r["vmrss"]), fmt_mib(r["hugetlb_pages"]), fmt_mib(r["resident"]),
            fmt_mib(r["arena_bytes_alloc"]), fmt_mib(r["arena_hugetlb_bytes"]),
            r["arena_hugetlb_fallbacks"]))
    rdelta = rep["hugetlb"]["resident"] - rep["baseline"]["resident"]
    rdelta_pct = rdelta / rep["baseline"]["resident"]
    rdelta0 = rep["hugetlb"]["resident_before_purge"] - rep["baseline"]["resident_before_purge"]
    huge_used = rep["hugetlb"]["hugetlb_pages"] > 0
    print("(read after MEMORY PURGE on both; before it: baseline %s, hugetlb %s, delta %+.1f MiB)" % (
        fmt_mib(rep["baseline"]["resident_before_purge"]), fmt_mib(rep["hugetlb"]["resident_before_purge"]),
        rdelta0 / MIB))
    print("resident delta (hugetlb - baseline): %+.1f MiB (%s of %s)" % (
        rdelta / MIB, pct(rdelta_pct), fmt_mib(rep["baseline"]["resident"])))
    for s in (base, huge):
        if rep[s.name]["anon_huge"]:
            print("%s: %s in transparent huge pages (AnonHugePages)" % (s.name, fmt_mib(rep[s.name]["anon_huge"])))
    if not huge_used:
        print("the hugetlb arm holds NO huge pages: both arms run on 4 KiB pages")
    elif rep["hugetlb"]["arena_hugetlb_fallbacks"]:
        print("the hugetlb arm fell back to 4 KiB pages for %d block(s) (short pool)" %
              rep["hugetlb"]["arena_hugetlb_fallbacks"])

    # -- trials
    print()
    if client.kind == "redis-benchmark":
        client.calibrate(base.port, args.seconds)       # also a warm-up of both
        client.calibrate(huge.port, args.seconds)
        print("redis-benchmark: -n %d per trial (calibrated to ~%.0f s)" % (client.n, args.seconds))
    elif args.warmup > 0:
        for s in (base, huge):
            client.run(s.port, args.warmup)
        print("warm-up: %.1f s of HGET on each server" % args.warmup)
    print("%d interleaved trials of %.1f s (baseline, hugetlb, baseline, ...):" % (args.trials, args.seconds))
    print("%5s %15s %15s %8s | %19s %8s | %s" % (
        "trial", "baseline req/s", "hugetlb req/s", "delta", "req/server-CPU-s b/h", "delta",
        "busy: server b/h, client b/h"))
    trials = []
    for t in range(args.trials):
        row = {}
        for s in (base, huge):
            c0, k0 = proc_cpu_seconds(s.pid), children_cpu()
            w0 = time.time()
            r = client.run(s.port, args.seconds, seed=t + 1)
            wall = max(1e-9, time.time() - w0)
            busy = (proc_cpu_seconds(s.pid) - c0) / wall
            row[s.name + "_client_cpu"] = (children_cpu() - k0) / wall
            if r.get("errors"):
                raise RuntimeError("%s answered %d HGETs with errors" % (s.name, r["errors"]))
            if r.get("misses"):
                raise RuntimeError("%s answered %d HGETs with nil: the hash is incomplete" %
                                   (s.name, r["misses"]))
            if not s.alive():
                raise RuntimeError("%s died during trial %d:\n%s" % (s.name, t + 1, s.log_tail()))
            row[s.name] = r["rps"]
            row[s.name + "_cpu"] = busy
            # requests per second of server CPU time: what the server spends
            # per HGET, whatever share of its CPU the neighbours left it
            row[s.name + "_per_cpu_s"] = r["requests"] / max(1e-9, busy * wall)
        row["delta"] = row["hugetlb"] / row["baseline"] - 1
        row["cpu_delta"] = row["hugetlb_per_cpu_s"] / row["baseline_per_cpu_s"] - 1
        trials.append(row)
        print("%5d %15.0f %15.0f %8s | %9.0f %9.0f %8s | %3.0f%%/%3.0f%%, %3.0f%%/%3.0f%%" % (
            t + 1, row["baseline"], row["hugetlb"], pct(row["delta"]),
            row["baseline_per_cpu_s"], row["hugetlb_per_cpu_s"], pct(row["cpu_delta"]),
            100 * row["baseline_cpu"], 100 * row["hugetlb_cpu"],
            100 * row["baseline_client_cpu"], 100 * row["hugetlb_client_cpu"]), flush=True)

    deltas = [r["delta"] for r in trials]
    med = statistics.median(deltas)
    lo, hi = min(deltas), max(deltas)
    cdeltas = [r["cpu_delta"] for r in trials]
    cmed, clo, chi = statistics.median(cdeltas), min(cdeltas), max(cdeltas)
    busy_med = statistics.median([r["baseline_cpu"] for r in trials] + [r["hugetlb_cpu"] for r in trials])
    mb = statistics.median(r["baseline"] for r in trials)
    mh = statistics.median(r["hugetlb"] for r in trials)
    arena = rep["hugetlb"]["arena_bytes_alloc"] or rep["baseline"]["arena_bytes_alloc"]
    print()
    print("median throughput: baseline %.0f req/s, hugetlb %.0f req/s" % (mb, mh))
    print("huge-page-backed: %s of the hugetlb arm's arena (%s); baseline %s" % (
        fmt_mib(rep["hugetlb"]["hugetlb_pages"]), fmt_mib(arena), fmt_mib(rep["baseline"]["hugetlb_pages"])))
    print()
    print("Result")
    print("%s-field hash, ~%.0f MiB arena, %d interleaved trials:" % (
        format(args.fields, ","), arena / MIB, args.trials))
    print("Per-trial throughput delta: %s median (range %s to %s). Resident delta: %.1f MiB (%s)." % (
        pct(med), pct(lo), pct(hi), rdelta / MIB, pct(rdelta_pct)))
    print("Requests per second of server CPU time, per-trial delta: %s median (range %s to %s)." % (
        pct(cmed), pct(clo), pct(chi)))
    if not huge_used:
        print("(empty pool: both arms used 4 KiB pages, so this delta is noise, not a huge-page effect)")
    if busy_med < 0.9:
        print("(the servers were busy only %.0f%% of the wall time (median): the CPU was shared with other "
              "work, so wall-clock throughput is noisy; the per-CPU-second figure is the steadier one)"
              % (100 * busy_med))
    print("memory-neutral (|resident delta| <= 1%%): %s" % ("yes" if abs(rdelta_pct) <= 0.01 else "NO"))
    print("client: %s; %s" % (client.kind, pin_note))

    result = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": machine_description(),
        "fields": args.fields, "value_bytes": args.value_bytes, "trials_n": args.trials,
        "seconds": args.seconds, "cores": args.cores, "pinning": pin_note,
        "client": client.describe(), "huge_pages_used": huge_used, "thp": thp,
        "servers": rep, "empty_resident": empty, "resident_delta": rdelta,
        "resident_delta_pct": rdelta_pct, "trials": trials,
        "delta_median": med, "delta_min": lo, "delta_max": hi,
        "cpu_delta_median": cmed, "cpu_delta_min": clo, "cpu_delta_max": chi,
        "server_busy_median": busy_med,
        "median_baseline": mb, "median_hugetlb": mh, "arena_bytes": arena,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.chart:
        call_charts("tlb", result, args.chart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
