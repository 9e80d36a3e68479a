#!/usr/bin/env python3
"""The cache front-ends: goblin-core's HTTP cache (--http-port, --mirror)
against Varnish, and its memcache front-end (--memcache-port) against
memcached 1.6, side by side in one run.

HTTP (section "http"). A corpus of --objects files (lognormal sizes, mean
about 175 KiB, 15 % under 4 KiB, a tail past 1 MiB, os.urandom bytes; the
shape of note 002's corpus, --sigma) is written once under --corpus-base
and reused while its manifest hash matches. An nginx origin on loopback serves it (its own nginx.conf:
worker_processes 1, sendfile, keepalive, an access log that is counted).
For every round, in an order that alternates round by round, each cache
is started empty and:

  population  every object fetched once through the cache, shuffled, at
              concurrency 32 (python client, persistent HTTP/1.1); the
              origin's access log must grow by exactly --objects
  warm/py     a Zipf (s = --zipf) replay of --warm-requests paths (fixed
              seed), --passes times, at concurrency 8: status 200 and the
              exact length of every body checked; TTFB (send to first
              response byte) percentiles over all requests
  warm/wrk    the same path list rotated by wrk (-t 2 -c 8, --wrk-seconds)
              through a Lua script: throughput
  checks      the origin log must not grow during the warm passes

Per server: Gbit/s and objects/s, TTFB p50/p90/p99, cache CPU-seconds per
GB served (utime+stime of the cache's processes, all threads, over the
window), VmRSS after population, resident object memory (goblin: INFO's
object store figures and the head model: every object under --ram-head
rounded to 16 bytes, one head for every other; varnish: SMF.s0.g_bytes or
SMA.s0.g_bytes). The client's own CPU share is printed beside every
throughput: a client near 100 % of a CPU is the limit, not the server; the
origin's CPU in population too. Before the runs, the tails' disk is
measured as goblin uses it (O_DIRECT 1 MiB writes, 256 KiB reads from 8
threads), with the share of warm bytes past a --main-head head: their
quotient bounds goblin's warm rate with tails on that disk.

Caches: goblin-core --cores 2 --http-port P --mirror http://127.0.0.1:O
--ssd-dir DIR --ram-head H --block 2M --goblin-args (one run per --heads
entry: the head sweep, chart in --chart); goblin-ram, the same without
--ssd-dir; varnish, note 002's storage: varnishd -F -s
file,DIR/varnish.bin,SIZE,4K,random on the tails' disk (--ssd-base);
varnish-malloc, -s malloc,SIZE. Both Varnish VCLs cache 200s for 7 days,
grace and keep 0.

memcache (section "mc"): goblin-core --memcache-port against memcached -t 2
-U 0 -m MB -I 2m: --mc-keys values of 100 B - 2 KiB and --mc-large values
of 64 KiB - 1 MiB set, then GET throughput (--mc-procs client processes,
--mc-conns connections each, --mc-depth pipelined gets) for --mc-seconds,
and VmRSS growth per stored byte (key + value) for the small set.

  python3 benchmarks/cache_bench.py [--objects 4000] [--rounds 3]
      [--sections http,mc] [--heads 16K,32K,64K,128K,256K] [--json F]
      [--chart docs/img/cache_heads.png]

Standard library only; the chart uses benchmarks/charts.py (matplotlib).
"""

import argparse
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tlb_arena_benchmark import free_port  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOBLIN = os.path.join(REPO, "build-release", "goblin-core")
CLK = os.sysconf("SC_CLK_TCK")
KI = 1024


def parse_size(s):
    s = s.strip().upper().rstrip("B")
    mult = {"K": KI, "M": KI * KI, "G": KI ** 3}.get(s[-1:], 1)
    return int(float(s.rstrip("KMG")) * mult)


def fmt_size(n):
    for unit, m in (("M", KI * KI), ("K", KI)):
        if n >= m and n % m == 0:
            return "%d%s" % (n // m, unit)
    return str(n)


def wait_port(port, proc=None, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("server exited with %s" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("port %d did not open" % port)


def pct(xs, p):
    """Nearest-rank percentile."""
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(math.ceil(p / 100.0 * len(xs))) - 1))
    return xs[k]


def med(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else float("nan")


# ---------------------------------------------------------------- /proc

def tree_pids(pid):
    """pid and all its descendants."""
    out = [pid]
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError):
            pass
    i = 0
    while i < len(out):
        out.extend(kids.get(out[i], []))
        i += 1
    return out


def cpu_seconds(pid):
    """utime+stime of pid and its descendants (all threads), seconds."""
    t = 0
    for p in tree_pids(pid):
        try:
            with open("/proc/%d/stat" % p) as f:
                st = f.read()
            fields = st[st.rindex(")") + 2:].split()
            t += int(fields[11]) + int(fields[12])
        except (OSError, ValueError):
            pass
    return t / CLK


def rss_bytes(pid):
    """VmRSS (+ HugetlbPages) of pid and its descendants."""
    tot = 0
    for p in tree_pids(pid):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:") or line.startswith("HugetlbPages:"):
                        tot += int(line.split()[1]) * KI
        except OSError:
            pass
    return tot


# ---------------------------------------------------------------- corpus

def corpus_sizes(n, seed, sigma):
    """15 % small (100 B .. 4 KiB, log-uniform), the rest lognormal with
    the given sigma and a mean that puts the whole corpus near 175 KiB;
    capped at 16 MiB. Note 002 gives its corpus's shape only through the
    resident object memory of its head sweep (0.200, 0.279 and 0.353 of
    Vinyl's page-rounded corpus at 64K, 128K and 256K heads); sigma 1.9
    gives 0.172, 0.260 and 0.368 (median ~22 KiB), the closest fit of the
    three together. Sigma 1.0 (median ~100 KiB: 0.276, 0.463, 0.673) was
    this script's corpus before that fit."""
    rng = random.Random(seed)
    sizes = []
    big_mean = (175 * KI - 0.15 * 1200) / 0.85
    mu = math.log(big_mean) - sigma * sigma / 2
    for _ in range(n):
        if rng.random() < 0.15:
            sizes.append(int(math.exp(rng.uniform(math.log(100), math.log(4095)))))
        else:
            s = int(rng.lognormvariate(mu, sigma))
            sizes.append(max(4 * KI, min(s, 16 * KI * KI)))
    return sizes


def make_corpus(base, n, seed, sigma):
    sizes = corpus_sizes(n, seed, sigma)
    manifest = [("o/%05d.bin" % i, s) for i, s in enumerate(sizes)]
    h = hashlib.sha256(json.dumps([seed, manifest]).encode()).hexdigest()[:16]
    root = os.path.join(base, "corpus-%s" % h)
    stamp = os.path.join(root, "MANIFEST.json")
    if os.path.exists(stamp):
        with open(stamp) as f:
            if json.load(f).get("hash") == h:
                ok = all(os.path.getsize(os.path.join(root, p)) == s for p, s in manifest)
                if ok:
                    return root, manifest, h, False
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "o"))
    for p, s in manifest:
        with open(os.path.join(root, p), "wb") as f:
            f.write(os.urandom(s))
    with open(stamp, "w") as f:
        json.dump({"hash": h, "seed": seed, "objects": manifest}, f)
    return root, manifest, h, True


def zipf_sequence(n_objects, length, s, seed):
    rng = random.Random(seed)
    ranks = list(range(n_objects))
    rng.shuffle(ranks)                       # rank -> object index
    w = [1.0 / (k + 1) ** s for k in range(n_objects)]
    cum = list(itertools.accumulate(w))
    picks = rng.choices(range(n_objects), cum_weights=cum, k=length)
    return [ranks[k] for k in picks]


# ---------------------------------------------------------------- origin

NGINX_CONF = """
worker_processes 1;
daemon off;
user root;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log {tmp}/access.log;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 120s;
    keepalive_requests 1000000;
    client_body_temp_path {tmp}/cb;
    proxy_temp_path {tmp}/pt;
    fastcgi_temp_path {tmp}/ft;
    uwsgi_temp_path {tmp}/ut;
    scgi_temp_path {tmp}/st;
    types {{ }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ }}
    }}
}}
"""


class Origin:
    def __init__(self, root, tmp):
        self.tmp = os.path.join(tmp, "nginx")
        os.makedirs(self.tmp)
        self.port = free_port()
        self.log = os.path.join(self.tmp, "access.log")
        conf = os.path.join(self.tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(tmp=self.tmp, port=self.port, root=root))
        self.proc = subprocess.Popen(["nginx", "-c", conf, "-p", self.tmp],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, self.proc)

    def count(self):
        try:
            with open(self.log, "rb") as f:
                return sum(1 for _ in f)
        except FileNotFoundError:
            return 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---------------------------------------------------------------- caches

VCL = """vcl 4.1;
backend default {{ .host = "127.0.0.1"; .port = "{port}"; }}
sub vcl_backend_response {{
    if (beresp.status == 200) {{
        set beresp.ttl = 7d;
        set beresp.grace = 0s;
        set beresp.keep = 0s;
    }}
    set beresp.do_stream = true;
}}
sub vcl_hash {{
    hash_data(req.url);
    return (lookup);
}}
"""


class Cache:
    """A running cache process: goblin-core or varnishd."""

    def __init__(self, kind, head, origin, tmp, corpus_bytes, args):
        ssd_base = args.ssd_base
        self.kind, self.head = kind, head
        ram_only = kind == "goblin-ram"
        file_storage = kind == "varnish"
        kind = "goblin" if ram_only else "varnish" if kind == "varnish-malloc" else kind
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="%s-" % kind, dir=tmp)
        os.chmod(self.dir, 0o755)           # varnishd reads the VCL after dropping privileges
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        if kind == "goblin":
            self.rport = free_port()
            self.ssd = None if ram_only else tempfile.mkdtemp(prefix="ssd-", dir=ssd_base)
            cmd = [GOBLIN, "--port", str(self.rport), "--bind", "127.0.0.1",
                   "--http-port", str(self.port),
                   "--mirror", "http://127.0.0.1:%d" % origin.port]
            if self.ssd:
                cmd += ["--ssd-dir", self.ssd]
            cmd += ["--ram-head", fmt_size(head), "--block", "2M",
                    "--cores", "2", "--save", "", "--appendonly", "no", "--dir", self.dir]
            cmd += args.goblin_args.split()
            if goblin_has_memcache():
                cmd += ["--memcache-port", "0"]
        else:
            self.ssd = None
            vcl = os.path.join(self.dir, "bench.vcl")
            with open(vcl, "w") as f:
                f.write(VCL.format(port=origin.port))
            mb = int(corpus_bytes * 1.5 / KI / KI) + 256
            if file_storage:
                # note 002's Vinyl: a file on the tails' disk, 4 KiB granularity, random advice
                self.ssd = tempfile.mkdtemp(prefix="varnish-", dir=ssd_base)
                storage = "file,%s,%dM,4K,random" % (os.path.join(self.ssd, "varnish.bin"), mb)
            else:
                storage = "malloc,%dM" % mb
            cmd = ["varnishd", "-F", "-a", "127.0.0.1:%d" % self.port, "-f", vcl,
                   "-s", storage, "-n", os.path.join(self.dir, "n"),
                   "-p", "default_grace=0", "-p", "default_keep=0"]
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)
        wait_port(self.port, self.proc)
        if kind == "varnish":
            time.sleep(0.3)

    def alive(self):
        return self.proc.poll() is None

    def info(self):
        """goblin: INFO as a dict (RESP port)."""
        s = socket.create_connection(("127.0.0.1", self.rport), timeout=5)
        s.sendall(b"*1\r\n$4\r\nINFO\r\n")
        buf = b""
        while True:
            buf += s.recv(1 << 16)
            if b"\r\n" in buf:
                n = int(buf[1:buf.index(b"\r\n")])
                if len(buf) >= buf.index(b"\r\n") + 2 + n:
                    break
        s.close()
        out = {}
        for line in buf.decode(errors="replace").split("\r\n"):
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                out[k] = v
        return out

    def varnishstat(self):
        try:
            r = subprocess.run(["varnishstat", "-n", os.path.join(self.dir, "n"), "-1", "-j"],
                               capture_output=True, text=True, timeout=20)
            d = json.loads(r.stdout)
            d = d.get("counters", d)
            return {k: v.get("value") for k, v in d.items() if isinstance(v, dict)}
        except Exception:
            return {}

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if self.ssd:
            shutil.rmtree(self.ssd, ignore_errors=True)


# ---------------------------------------------------------------- HTTP client

def http_run(port, seq, manifest, conc, record=True):
    """Fetch seq (object indexes) over conc persistent connections, one
    request in flight each. Returns dict with wall time, bytes, TTFBs (us),
    errors (list of strings), client CPU seconds."""
    it = iter(range(len(seq)))
    lock = threading.Lock()
    ttfb = []
    errors = []
    total = [0, 0]                      # bytes, objects

    def worker():
        s = None
        buf = bytearray(1 << 20)
        mv = memoryview(buf)
        my_ttfb = []
        my_bytes = my_objs = 0
        while True:
            with lock:
                i = next(it, None)
            if i is None:
                break
            path, size = manifest[seq[i]]
            req = ("GET /%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path, port)).encode()
            for attempt in (0, 1):
                try:
                    if s is None:
                        s = socket.create_connection(("127.0.0.1", port), timeout=30)
                        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    t0 = time.perf_counter_ns()
                    s.sendall(req)
                    head = b""
                    first = None
                    while b"\r\n\r\n" not in head:
                        n = s.recv_into(mv, len(buf))
                        if n == 0:
                            raise ConnectionError("closed before the head")
                        if first is None:
                            first = time.perf_counter_ns()
                        head += bytes(mv[:n])
                    hend = head.index(b"\r\n\r\n") + 4
                    lines = head[:hend].decode("latin-1").split("\r\n")
                    status = int(lines[0].split()[1])
                    cl = None
                    close = False
                    for ln in lines[1:]:
                        k, _, v = ln.partition(":")
                        k = k.strip().lower()
                        if k == "content-length":
                            cl = int(v)
                        elif k == "connection" and "close" in v.lower():
                            close = True
                    have = len(head) - hend
                    if cl is None:
                        raise ValueError("no Content-Length")
                    while have < cl:
                        n = s.recv_into(mv, min(len(buf), cl - have))
                        if n == 0:
                            raise ConnectionError("closed after %d of %d body bytes" % (have, cl))
                        have += n
                    if have != cl:
                        errors.append("%s: %d body bytes past Content-Length %d" % (path, have, cl))
                        s.close()
                        s = None
                    if status != 200:
                        errors.append("%s: status %d" % (path, status))
                    elif cl != size:
                        errors.append("%s: length %d, expected %d" % (path, cl, size))
                    if close and s is not None:
                        s.close()
                        s = None
                    if record:
                        my_ttfb.append((first - t0) / 1000.0)
                    my_bytes += cl
                    my_objs += 1
                    break
                except (OSError, ValueError, IndexError) as e:
                    if s is not None:
                        s.close()
                        s = None
                    if attempt == 1:
                        errors.append("%s: %s: %s" % (path, type(e).__name__, e))
        if s is not None:
            s.close()
        with lock:
            ttfb.extend(my_ttfb)
            total[0] += my_bytes
            total[1] += my_objs

    c0 = time.process_time()
    t0 = time.perf_counter()
    ths = [threading.Thread(target=worker) for _ in range(conc)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    wall = time.perf_counter() - t0
    return {"wall": wall, "bytes": total[0], "objects": total[1], "ttfb": ttfb,
            "errors": errors, "client_cpu": time.process_time() - c0}


WRK_LUA = """
local counter = 0
function setup(thread)
    thread:set("tid", counter)
    counter = counter + 1
end
function init(args)
    paths = {}
    for line in io.lines(args[1]) do paths[#paths + 1] = line end
    i = ((tid or 0) * 7919) % #paths
end
function request()
    i = i % #paths + 1
    return wrk.format("GET", paths[i])
end
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("WRKJSON {\\"requests\\": %d, \\"bytes\\": %d, \\"duration_us\\": %d, " ..
        "\\"connect\\": %d, \\"read\\": %d, \\"write\\": %d, \\"status\\": %d, \\"timeout\\": %d, " ..
        "\\"lat_p50\\": %d, \\"lat_p99\\": %d}\\n",
        summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write,
        e.status, e.timeout, latency:percentile(50), latency:percentile(99)))
end
"""


def wrk_run(port, pathfile, luafile, seconds, conns, threads):
    cmd = ["wrk", "-t", str(threads), "-c", str(conns), "-d", "%ds" % seconds,
           "-s", luafile, "http://127.0.0.1:%d" % port, "--", pathfile]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = p.communicate()
    # wrk's CPU: its rusage via wait4 is gone after communicate(); use os.times() children
    m = re.search(r"WRKJSON (\{.*\})", out)
    if not m:
        raise RuntimeError("wrk: " + out[-500:])
    return json.loads(m.group(1))


# ---------------------------------------------------------------- HTTP section

def kv(field):
    return dict(x.split("=", 1) for x in field.split(",") if "=" in x)


def goblin_has_memcache():
    """Whether this goblin-core knows --memcache-port (then HTTP runs pass 0)."""
    with open(GOBLIN, "rb") as f:
        return b"memcache-port" in f.read()


def goblin_info_objmem(info):
    """Resident object bytes from INFO: used heads x --ram-head + the
    small-object arena's live bytes + tails kept in RAM."""
    try:
        head = int(info["objstore_ram_head"])
        heads = sum(int(kv(v)["heads_used"]) for k, v in info.items()
                    if re.match(r"objstore_pool\d+$", k))
        small = int(kv(info["objstore_small"])["live_bytes"])
        return heads * head + small + int(info.get("objstore_ram_tail_bytes", 0))
    except (KeyError, ValueError):
        return None


def goblin_object_memory(manifest, head):
    return sum((s + 15) // 16 * 16 if s < head else head for _, s in manifest)


def populate(c, origin, manifest, conc, seed):
    """Every object fetched once through cache c, in an order shuffled by
    seed, at concurrency conc: http_run's figures, with the origin requests
    it made and the CPU seconds of the cache and of the origin meanwhile."""
    order = list(range(len(manifest)))
    random.Random(seed).shuffle(order)
    o0 = origin.count()
    cpu0, ocpu0 = cpu_seconds(c.proc.pid), cpu_seconds(origin.proc.pid)
    pop = http_run(c.port, order, manifest, conc, record=False)
    pop["cache_cpu"] = cpu_seconds(c.proc.pid) - cpu0
    pop["origin_cpu"] = cpu_seconds(origin.proc.pid) - ocpu0
    time.sleep(0.5)
    pop["origin_requests"] = origin.count() - o0
    return pop


def run_cache(args, kind, head, origin, manifest, corpus_bytes, seq_warm, pathfile, luafile, tmp):
    r = {"kind": kind, "head": head}
    c = Cache(kind, head, origin, tmp, corpus_bytes, args)
    try:
        r["cmd"] = " ".join(c.cmd)
        rss0 = rss_bytes(c.proc.pid)
        pop = populate(c, origin, manifest, args.pop_conc, args.seed + 1)
        r["pop_origin"] = pop["origin_requests"]
        r["pop_errors"] = pop["errors"]
        r["pop_gbps"] = pop["bytes"] * 8 / pop["wall"] / 1e9
        r["pop_objs"] = pop["objects"] / pop["wall"]
        r["pop_cpu_per_gb"] = pop["cache_cpu"] / (pop["bytes"] / 1e9)
        r["pop_client_cpu"] = pop["client_cpu"] / pop["wall"]
        r["pop_server_cpu"] = pop["cache_cpu"] / pop["wall"]
        r["pop_origin_cpu"] = pop["origin_cpu"] / pop["wall"]
        time.sleep(1.0)
        r["rss_empty"] = rss0
        r["rss_pop"] = rss_bytes(c.proc.pid)
        if kind.startswith("goblin"):
            info = c.info()
            r["info"] = {k: v for k, v in info.items()
                         if k.startswith(("objstore", "smallobj", "http_", "used_memory", "pool", "ssd"))}
            r["objmem_model"] = goblin_object_memory(manifest, head)
            r["objmem_measured"] = goblin_info_objmem(info)
        else:
            vs = c.varnishstat()
            r["objmem_measured"] = vs.get("SMA.s0.g_bytes", vs.get("SMF.s0.g_bytes"))
            r["objmem_model"] = sum((s + 4095) // 4096 * 4096 for _, s in manifest)
            r["varnish_objects"] = vs.get("MAIN.n_object")
        # warm, python: exact lengths and TTFB
        o2 = origin.count()
        passes = []
        ttfb = []
        werr = []
        for _ in range(args.passes):
            cpu0 = cpu_seconds(c.proc.pid)
            w = http_run(c.port, seq_warm, manifest, args.warm_conc)
            cpu1 = cpu_seconds(c.proc.pid)
            passes.append({"gbps": w["bytes"] * 8 / w["wall"] / 1e9, "objs": w["objects"] / w["wall"],
                           "cpu_per_gb": (cpu1 - cpu0) / (w["bytes"] / 1e9),
                           "client_cpu": w["client_cpu"] / w["wall"],
                           "server_cpu": (cpu1 - cpu0) / w["wall"]})
            ttfb.extend(w["ttfb"])
            werr.extend(w["errors"])
        r["py_passes"] = passes
        r["py_gbps"] = med([p["gbps"] for p in passes])
        r["py_objs"] = med([p["objs"] for p in passes])
        r["py_cpu_per_gb"] = med([p["cpu_per_gb"] for p in passes])
        r["py_client_cpu"] = med([p["client_cpu"] for p in passes])
        r["py_server_cpu"] = med([p["server_cpu"] for p in passes])
        r["ttfb_p50"], r["ttfb_p90"], r["ttfb_p99"] = (pct(ttfb, 50), pct(ttfb, 90), pct(ttfb, 99))
        r["ttfb_mean"] = statistics.fmean(ttfb) if ttfb else float("nan")
        r["warm_errors"] = werr
        time.sleep(0.3)
        r["warm_origin_py"] = origin.count() - o2
        # warm, wrk: throughput
        cpu0 = cpu_seconds(c.proc.pid)
        ch0 = os.times()
        wk = wrk_run(c.port, pathfile, luafile, args.wrk_seconds, args.warm_conc, 2)
        ch1 = os.times()
        cpu1 = cpu_seconds(c.proc.pid)
        secs = wk["duration_us"] / 1e6
        r["wrk"] = wk
        r["wrk_gbps"] = wk["bytes"] * 8 / secs / 1e9
        r["wrk_objs"] = wk["requests"] / secs
        r["wrk_cpu_per_gb"] = (cpu1 - cpu0) / (wk["bytes"] / 1e9)
        r["wrk_server_cpu"] = (cpu1 - cpu0) / secs
        r["wrk_client_cpu"] = ((ch1.children_user - ch0.children_user) +
                               (ch1.children_system - ch0.children_system)) / secs
        r["wrk_errors"] = sum(wk[k] for k in ("connect", "read", "write", "status", "timeout"))
        time.sleep(0.3)
        r["warm_origin"] = origin.count() - o2
        r["rss_end"] = rss_bytes(c.proc.pid)
        r["alive"] = c.alive()
        if kind.startswith("goblin"):
            info = c.info()
            r["info_end"] = {k: v for k, v in info.items() if k.startswith(("objstore", "http_"))}
    finally:
        c.stop()
    return r


def http_section(args, tmp, res):
    root, manifest, h, made = make_corpus(args.corpus_base, args.objects, args.seed, args.sigma)
    sizes = [s for _, s in manifest]
    corpus_bytes = sum(sizes)
    res["corpus"] = {"dir": root, "hash": h, "objects": len(sizes), "bytes": corpus_bytes,
                     "mean": corpus_bytes / len(sizes), "median": statistics.median(sizes),
                     "small_frac": sum(1 for s in sizes if s < 4 * KI) / len(sizes),
                     "over_1m": sum(1 for s in sizes if s > KI * KI), "max": max(sizes),
                     "written_now": made}
    cp = res["corpus"]
    print("corpus %s: %d objects, %.1f MiB, mean %.1f KiB, median %.1f KiB, %.1f%% < 4 KiB, "
          "%d > 1 MiB (max %.2f MiB)%s" % (h, cp["objects"], corpus_bytes / KI / KI, cp["mean"] / KI,
                                           cp["median"] / KI, 100 * cp["small_frac"], cp["over_1m"],
                                           cp["max"] / KI / KI, " (written now)" if made else " (reused)"),
          flush=True)
    seq = zipf_sequence(len(manifest), args.warm_requests, args.zipf, args.seed + 2)
    seq_bytes = sum(manifest[i][1] for i in seq)
    main_head = parse_size(args.main_head)
    tail_bytes = sum(max(0, manifest[i][1] - main_head) for i in seq)
    res["warm_seq"] = {"requests": len(seq), "bytes": seq_bytes, "distinct": len(set(seq)),
                       "tail_frac": tail_bytes / seq_bytes,
                       "in_ram_frac": sum(1 for i in seq if manifest[i][1] <= main_head) / len(seq)}
    if "goblin" in args.caches.split(","):
        dc = disk_ceiling(args.ssd_base)
        res["disk"] = dc
        if dc:
            # Every warm byte past a --main-head head is read from the disk:
            # the warm rate cannot pass read / tail fraction.
            print("disk under %s: O_DIRECT writes %.2f GB/s (1 MiB, 1 thread), reads %.2f GB/s (256 KiB, %d "
                  "threads); warm bytes past %s heads %.1f%% (requests wholly in RAM %.1f%%): goblin's warm "
                  "rate with tails on this disk is at most %.1f Gbit/s" % (
                      args.ssd_base, dc["write"] / 1e9, dc["read"] / 1e9, dc["threads"], args.main_head,
                      100 * res["warm_seq"]["tail_frac"], 100 * res["warm_seq"]["in_ram_frac"],
                      dc["read"] * 8 / 1e9 / max(res["warm_seq"]["tail_frac"], 1e-9)), flush=True)
    pathfile = os.path.join(tmp, "paths.txt")
    with open(pathfile, "w") as f:
        for i in seq:
            f.write("/%s\n" % manifest[i][0])
    luafile = os.path.join(tmp, "rotate.lua")
    with open(luafile, "w") as f:
        f.write(WRK_LUA)
    origin = Origin(root, tmp)
    heads = [parse_size(x) for x in args.heads.split(",")] if args.heads else []
    if main_head not in heads:
        heads.append(main_head)
    configs = [("goblin", hd) for hd in heads]
    if "goblin-ram" in args.caches.split(","):
        configs.append(("goblin-ram", main_head))
    for v in ("varnish", "varnish-malloc"):
        if v in args.caches.split(","):
            configs.append((v, 0))
    res["runs"] = []
    try:
        for rnd in range(args.rounds):
            order = configs[:]
            # alternate: varnish first on even rounds, last on odd ones; heads reversed too
            if rnd % 2 == 0:
                order = order[::-1]
            for kind, hd in order:
                label = kind if kind.startswith("varnish") else "%s-%s" % (kind, fmt_size(hd))
                print("round %d: %s ..." % (rnd + 1, label), end="", flush=True)
                r = run_cache(args, kind, hd, origin, manifest, corpus_bytes, seq, pathfile, luafile, tmp)
                r["round"] = rnd + 1
                r["label"] = label
                res["runs"].append(r)
                print(" pop %.2f Gbit/s (%d origin req, %d err), warm py %.2f Gbit/s, wrk %.2f Gbit/s, "
                      "ttfb p50 %.0f us, origin during warm %d, errors %d/%d" % (
                          r["pop_gbps"], r["pop_origin"], len(r["pop_errors"]), r["py_gbps"], r["wrk_gbps"],
                          r["ttfb_p50"], r["warm_origin"], len(r["warm_errors"]), r["wrk_errors"]), flush=True)
                for e in (r["pop_errors"] + r["warm_errors"])[:5]:
                    print("    error:", e)
                if not r["alive"]:
                    print("    the cache process died")
    finally:
        origin.stop()


def disk_ceiling(base, size=1 << 30, seconds=3.0, threads=8):
    """What the tails' disk gives, measured the way goblin uses it: a file
    of `size` bytes written with O_DIRECT in 1 MiB writes (--write-io-chunk)
    from one thread, then 256 KiB O_DIRECT reads (--io-chunk) at random
    aligned offsets from `threads` threads for `seconds`. Bytes/s of each;
    None when the directory's filesystem refuses O_DIRECT."""
    import mmap
    d = tempfile.mkdtemp(prefix="disk-", dir=base)
    path = os.path.join(d, "probe.bin")
    try:
        try:
            fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o600)
        except OSError:
            return None
        wbuf = mmap.mmap(-1, 1 << 20)
        wbuf.write(os.urandom(1 << 20))
        t0 = time.perf_counter()
        for off in range(0, size, 1 << 20):
            os.pwrite(fd, wbuf, off)
        os.fsync(fd)
        wrate = size / (time.perf_counter() - t0)
        os.close(fd)
        total = [0]
        lock = threading.Lock()
        stop = time.perf_counter() + seconds

        def reader(seed):
            rng = random.Random(seed)
            rfd = os.open(path, os.O_RDONLY | os.O_DIRECT)
            buf = mmap.mmap(-1, 256 * KI)
            n = 0
            while time.perf_counter() < stop:
                n += os.preadv(rfd, [buf], rng.randrange(size // (256 * KI)) * 256 * KI)
            os.close(rfd)
            with lock:
                total[0] += n

        ts = [threading.Thread(target=reader, args=(i,)) for i in range(threads)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return {"write": wrate, "read": total[0] / (time.perf_counter() - t0), "threads": threads}
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------- memcache

def mc_start(kind, tmp, mb):
    port = free_port()
    d = tempfile.mkdtemp(prefix="mc-%s-" % kind, dir=tmp)
    log = open(os.path.join(d, "server.log"), "w")
    if kind == "goblin":
        cmd = [GOBLIN, "--port", str(free_port()), "--bind", "127.0.0.1", "--memcache-port", str(port),
               "--memcache-max-item-size", "2m", "--cores", "2", "--save", "", "--appendonly", "no", "--dir", d]
    else:
        cmd = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", str(mb), "-I", "2m",
               "-t", "2", "-u", "root"]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=d)
    wait_port(port, p)
    return p, port, log, cmd


class McConn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def fill(self):
        if self.pos > (1 << 20):
            del self.buf[:self.pos]
            self.pos = 0
        d = self.s.recv(1 << 20)
        if not d:
            raise ConnectionError("closed")
        self.buf += d

    def line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                ln = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return ln
            self.fill()

    def take(self, n):
        while len(self.buf) - self.pos < n:
            self.fill()
        self.pos += n

    def get_reply(self):
        """One get's reply: returns value length or -1 on a miss."""
        ln = self.line()
        if ln == b"END":
            return -1
        if not ln.startswith(b"VALUE "):
            raise ValueError("bad reply %r" % ln[:80])
        n = int(ln.split()[3])
        self.take(n + 2)
        end = self.line()
        if end != b"END":
            raise ValueError("no END after value: %r" % end[:80])
        return n


def mc_load(port, items, depth=64):
    c = McConn(port)
    for i in range(0, len(items), depth):
        batch = items[i:i + depth]
        out = []
        for k, v in batch:
            out.append(b"set %s 0 0 %d\r\n" % (k, len(v)))
            out.append(v)
            out.append(b"\r\n")
        c.s.sendall(b"".join(out))
        for _ in batch:
            ln = c.line()
            if ln != b"STORED":
                raise ValueError("set: %r" % ln[:80])
    c.s.close()


def mc_worker(port, keys, lens, conns, depth, seconds, seed, q):
    rng = random.Random(seed)
    cs = [McConn(port) for _ in range(conns)]
    n = ok = bad = 0
    nbytes = 0
    lat = []
    reqs = [None] * conns
    nk = len(keys)
    t_end = time.perf_counter() + seconds
    t0 = time.perf_counter()
    c0 = time.process_time()
    while time.perf_counter() < t_end:
        for j, c in enumerate(cs):
            idx = [rng.randrange(nk) for _ in range(depth)]
            reqs[j] = idx
            c.s.sendall(b"".join(b"get %s\r\n" % keys[i] for i in idx))
        for j, c in enumerate(cs):
            for i in reqs[j]:
                got = c.get_reply()
                n += 1
                if got == lens[i]:
                    ok += 1
                    nbytes += got
                else:
                    bad += 1
    wall = time.perf_counter() - t0
    q.put({"gets": n, "ok": ok, "bad": bad, "bytes": nbytes, "wall": wall,
           "cpu": time.process_time() - c0})


DRIVER = os.path.join(REPO, "build-release", "mc-get-driver")


def mc_driver():
    """build-release/mc-get-driver (benchmarks/mc_get_driver.c), built on first use; None without gcc."""
    src = os.path.join(REPO, "benchmarks", "mc_get_driver.c")
    if not os.path.exists(DRIVER) or os.path.getmtime(DRIVER) < os.path.getmtime(src):
        os.makedirs(os.path.dirname(DRIVER), exist_ok=True)
        r = subprocess.run(["gcc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", DRIVER, src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            return None
    return DRIVER


def mc_bench(port, keys, lens, args, depth):
    if args.mc_client == "c" and mc_driver():
        keyfmt = keys[0][:2].decode() + ("%08d" if len(keys[0]) == 10 else "%05d")
        assert (keyfmt % 1).encode() == keys[1]
        lf = os.path.join(args.tmp, "lens-%s.txt" % keyfmt[0])
        with open(lf, "w") as f:
            f.write("\n".join(str(x) for x in lens))
        ps = [subprocess.Popen([DRIVER, str(port), str(args.mc_conns), str(depth), str(args.mc_seconds),
                                keyfmt, lf, str(100 + i)], stdout=subprocess.PIPE, text=True)
              for i in range(args.mc_procs)]
        rs = []
        for p in ps:
            out, _ = p.communicate()
            if p.returncode != 0:
                raise RuntimeError("mc-get-driver exited with %d" % p.returncode)
            rs.append(json.loads(out))
    else:
        rs = mc_bench_py(port, keys, lens, args, depth)
    wall = max(r["wall"] for r in rs)
    return {"gets_s": sum(r["gets"] for r in rs) / wall, "bad": sum(r["bad"] for r in rs),
            "mb_s": sum(r["bytes"] for r in rs) / wall / 1e6,
            "client_cpu": sum(r["cpu"] for r in rs) / wall}


def mc_bench_py(port, keys, lens, args, depth):
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=mc_worker,
                                  args=(port, keys, lens, args.mc_conns, depth, args.mc_seconds, 100 + i, q))
          for i in range(args.mc_procs)]
    for p in ps:
        p.start()
    rs = [q.get() for _ in ps]
    for p in ps:
        p.join()
    return rs


def mc_section(args, tmp, res):
    rng = random.Random(args.seed + 3)
    small = []
    for i in range(args.mc_keys):
        k = b"k:%08d" % i
        small.append((k, os.urandom(rng.randint(100, 2048))))
    large = []
    for i in range(args.mc_large):
        k = b"L:%05d" % i
        large.append((k, os.urandom(int(math.exp(rng.uniform(math.log(64 * KI), math.log(KI * KI)))))))
    stored = sum(len(k) + len(v) for k, v in small)
    res["mc_data"] = {"small": len(small), "small_bytes": stored, "large": len(large),
                      "large_bytes": sum(len(v) for _, v in large)}
    mb = int((stored + res["mc_data"]["large_bytes"]) * 3 / KI / KI) + 512
    res["mc_runs"] = []
    for rnd in range(args.rounds):
        order = ["goblin", "memcached"] if rnd % 2 == 0 else ["memcached", "goblin"]
        for kind in order:
            p, port, log, cmd = mc_start(kind, tmp, mb)
            r = {"kind": kind, "round": rnd + 1, "cmd": " ".join(cmd)}
            try:
                time.sleep(0.5)
                rss0 = rss_bytes(p.pid)
                mc_load(port, small)
                time.sleep(1.0)
                rss1 = rss_bytes(p.pid)
                r["rss_empty"], r["rss_small"] = rss0, rss1
                r["rss_per_byte"] = (rss1 - rss0) / stored
                mc_load(port, large, depth=4)
                cpu0 = cpu_seconds(p.pid)
                t0 = time.perf_counter()
                r["small_get"] = mc_bench(port, [k for k, _ in small], [len(v) for _, v in small], args,
                                          args.mc_depth)
                cpu1 = cpu_seconds(p.pid)
                r["small_get"]["server_cpu"] = (cpu1 - cpu0) / (time.perf_counter() - t0)
                cpu0 = cpu_seconds(p.pid)
                t0 = time.perf_counter()
                r["large_get"] = mc_bench(port, [k for k, _ in large], [len(v) for _, v in large], args, 2)
                cpu1 = cpu_seconds(p.pid)
                r["large_get"]["server_cpu"] = (cpu1 - cpu0) / (time.perf_counter() - t0)
                r["alive"] = p.poll() is None
            except Exception as e:
                r["error"] = "%s: %s" % (type(e).__name__, e)
            finally:
                if p.poll() is None:
                    p.terminate()
                    try:
                        p.wait(10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
                log.close()
            res["mc_runs"].append(r)
            if "error" in r:
                print("round %d: %s memcache: %s" % (rnd + 1, kind, r["error"]), flush=True)
            else:
                print("round %d: %s memcache: small get %.0f/s (client cpu %.2f, server cpu %.2f, bad %d), "
                      "large get %.0f MB/s, RSS/stored byte %.3f" % (
                          rnd + 1, kind, r["small_get"]["gets_s"], r["small_get"]["client_cpu"],
                          r["small_get"]["server_cpu"], r["small_get"]["bad"], r["large_get"]["mb_s"],
                          r["rss_per_byte"]), flush=True)


# ---------------------------------------------------------------- report

def summarize(args, res):
    runs = res.get("runs", [])
    out = {}
    labels = []
    for r in runs:
        if r["label"] not in labels:
            labels.append(r["label"])
    if runs:
        print()
        print("HTTP: medians over %d round(s); warm = %d Zipf requests (%.0f MiB, %d distinct objects)" % (
            args.rounds, res["warm_seq"]["requests"], res["warm_seq"]["bytes"] / KI / KI,
            res["warm_seq"]["distinct"]))
        hdr = ("cache", "pop Gbit/s", "pop obj/s", "pop CPU s/GB", "warm wrk Gbit/s", "wrk obj/s",
               "wrk CPU s/GB", "warm py Gbit/s", "py CPU s/GB", "TTFB p50/p90/p99 us", "RSS after pop MiB",
               "object mem MiB (model)", "origin pop/warm", "errors", "client CPU py/wrk")
        print(" | ".join(hdr))
        for lb in labels:
            rs = [r for r in runs if r["label"] == lb]
            m = lambda k: med([r[k] for r in rs])  # noqa: E731
            om = med([r.get("objmem_measured") or float("nan") for r in rs])
            row = {k: m(k) for k in ("pop_gbps", "pop_objs", "pop_cpu_per_gb", "wrk_gbps", "wrk_objs",
                                     "wrk_cpu_per_gb", "py_gbps", "py_cpu_per_gb", "ttfb_p50", "ttfb_p90",
                                     "ttfb_p99", "ttfb_mean", "rss_pop", "py_client_cpu", "wrk_client_cpu",
                                     "py_server_cpu", "wrk_server_cpu", "pop_client_cpu", "pop_server_cpu",
                                     "pop_origin_cpu")}
            row["objmem"] = om
            row["objmem_model"] = med([r["objmem_model"] for r in rs])
            row["pop_origin"] = [r["pop_origin"] for r in rs]
            row["warm_origin"] = [r["warm_origin"] for r in rs]
            row["warm_origin_py"] = [r["warm_origin_py"] for r in rs]
            row["errors"] = sum(len(r["pop_errors"]) + len(r["warm_errors"]) + r["wrk_errors"] for r in rs)
            row["died"] = sum(1 for r in rs if not r["alive"])
            out[lb] = row
            print(" | ".join([lb, "%.2f" % row["pop_gbps"], "%.0f" % row["pop_objs"],
                              "%.2f" % row["pop_cpu_per_gb"], "%.2f" % row["wrk_gbps"], "%.0f" % row["wrk_objs"],
                              "%.2f" % row["wrk_cpu_per_gb"], "%.2f" % row["py_gbps"],
                              "%.2f" % row["py_cpu_per_gb"],
                              "%.0f/%.0f/%.0f" % (row["ttfb_p50"], row["ttfb_p90"], row["ttfb_p99"]),
                              "%.0f" % (row["rss_pop"] / KI / KI), "%.0f (%.0f)" % (om / KI / KI, row["objmem_model"] / KI / KI),
                              "%s/%s" % (row["pop_origin"], row["warm_origin"]),
                              "%d%s" % (row["errors"], " DIED %d" % row["died"] if row["died"] else ""),
                              "%.2f/%.2f" % (row["py_client_cpu"], row["wrk_client_cpu"])]))
        print("(client CPU: CPUs' worth the python client / wrk used in population, warm py, warm wrk; "
              "the cache's CPU in the same windows)")
        for lb in labels:
            o = out[lb]
            print("  %-14s client %.2f / %.2f / %.2f   cache %.2f / %.2f / %.2f   origin in population %.2f" % (
                lb, o["pop_client_cpu"], o["py_client_cpu"], o["wrk_client_cpu"],
                o["pop_server_cpu"], o["py_server_cpu"], o["wrk_server_cpu"], o["pop_origin_cpu"]))
    res["summary"] = out

    ratios = []
    main = "goblin-%s" % fmt_size(parse_size(args.main_head))

    def per_round(k, a, b):
        vals = []
        for rnd in range(1, args.rounds + 1):
            ra = [r for r in runs if r["round"] == rnd and r["label"] == a]
            rb = [r for r in runs if r["round"] == rnd and r["label"] == b]
            if ra and rb and rb[0][k]:
                vals.append(ra[0][k] / rb[0][k])
        return vals

    for vk in ("varnish", "varnish-malloc"):
        if main not in out or vk not in out:
            continue
        for name, k, goal, cmp in (("warm HTTP throughput (wrk) goblin/%s", "wrk_gbps", 1.1, ">="),
                                   ("warm HTTP throughput (python) goblin/%s", "py_gbps", 1.1, ">="),
                                   ("CPU-seconds per GB, warm wrk, goblin/%s", "wrk_cpu_per_gb", 0.7, "<="),
                                   ("population throughput goblin/%s", "pop_gbps", 1.7, ">="),
                                   ("TTFB p50 goblin/%s", "ttfb_p50", None, "")):
            v = per_round(k, main, vk)
            ratios.append((name % vk, med(v), (min(v), max(v)) if v else None, goal, cmp))
        om = out[main]["objmem"] / out[vk]["objmem"] if out[vk]["objmem"] else float("nan")
        ratios.append(("resident object memory goblin/%s (INFO heads+small / SMF or SMA)" % vk, om, None, 0.5, "<="))
        om = out[main]["objmem_model"] / out[vk]["objmem_model"]
        ratios.append(("object memory, models: goblin heads / corpus in 4 KiB pages", om, None, 0.5, "<="))
    mcr = res.get("mc_runs", [])
    if mcr:
        ok = [r for r in mcr if "error" not in r]
        g = [r for r in ok if r["kind"] == "goblin"]
        m = [r for r in ok if r["kind"] == "memcached"]
        print()
        print("memcache: medians over rounds")
        for kind, rs in (("goblin", g), ("memcached", m)):
            if rs:
                print("%s: small get %.0f/s (client CPU %.2f, server CPU %.2f), large get %.0f MB/s, "
                      "RSS empty %.1f MiB, after small set %.1f MiB, RSS/stored byte %.3f" % (
                          kind, med([r["small_get"]["gets_s"] for r in rs]),
                          med([r["small_get"]["client_cpu"] for r in rs]),
                          med([r["small_get"]["server_cpu"] for r in rs]),
                          med([r["large_get"]["mb_s"] for r in rs]), med([r["rss_empty"] for r in rs]) / KI / KI,
                          med([r["rss_small"] for r in rs]) / KI / KI, med([r["rss_per_byte"] for r in rs])))
        if g and m:
            v = []
            for rnd in range(1, args.rounds + 1):
                a = [r for r in g if r["round"] == rnd]
                b = [r for r in m if r["round"] == rnd]
                if a and b:
                    v.append(a[0]["small_get"]["gets_s"] / b[0]["small_get"]["gets_s"])
            ratios.append(("memcache small get throughput goblin/memcached", med(v),
                           (min(v), max(v)) if v else None, 1.0, ">="))
            v = []
            for rnd in range(1, args.rounds + 1):
                a = [r for r in g if r["round"] == rnd]
                b = [r for r in m if r["round"] == rnd]
                if a and b:
                    v.append(a[0]["large_get"]["mb_s"] / b[0]["large_get"]["mb_s"])
            ratios.append(("memcache large get throughput goblin/memcached", med(v),
                           (min(v), max(v)) if v else None, None, ""))
        if g:
            ratios.append(("goblin memcache RSS per stored byte", med([r["rss_per_byte"] for r in g]),
                           None, 1.05, "<="))
        if m:
            ratios.append(("memcached RSS per stored byte", med([r["rss_per_byte"] for r in m]),
                           None, None, ""))
    if ratios:
        print()
        print("targets:")
        res["ratios"] = []
        for name, v, rng, goal, cmp in ratios:
            met = ""
            if goal is not None and not math.isnan(v):
                met = "met" if (v >= goal if cmp == ">=" else v <= goal) else "NOT met"
            print("  %-62s %6.3f%s%s" % (name, v, " (%.2f-%.2f)" % rng if rng else "",
                                         "   goal %s %.2f: %s" % (cmp, goal, met) if goal else ""))
            res["ratios"].append({"name": name, "value": v, "range": rng, "goal": goal, "cmp": cmp, "met": met})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", default="http,mc")
    ap.add_argument("--caches", default="goblin,goblin-ram,varnish",
                    help="goblin: --ssd-dir, one run per --heads entry; goblin-ram: no --ssd-dir, --main-head")
    ap.add_argument("--keep", action="store_true", help="keep the temp directory (server logs)")
    ap.add_argument("--objects", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--sigma", type=float, default=1.9,
                    help="the corpus's lognormal sigma (1.9: note 002's shape; 1.0: the earlier, narrower corpus)")
    ap.add_argument("--goblin-args", default="--mirror-client uring --no-numa-promotion",
                    help="appended to every goblin-core command line (note 002's origin client by default)")
    ap.add_argument("--corpus-base", default="/tmp/goblin-cache-bench")
    ap.add_argument("--ssd-base", default="/var/tmp", help="where goblin's --ssd-dir goes (a disk, not tmpfs)")
    ap.add_argument("--heads", default="16K,32K,64K,128K,256K", help="goblin --ram-head sweep ('' for none)")
    ap.add_argument("--main-head", default="256K", help="the head size compared with varnish")
    ap.add_argument("--pop-conc", type=int, default=32)
    ap.add_argument("--warm-conc", type=int, default=8)
    ap.add_argument("--warm-requests", type=int, default=0, help="Zipf replay length (default 2 x objects)")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--zipf", type=float, default=1.0)
    ap.add_argument("--wrk-seconds", type=int, default=8)
    ap.add_argument("--mc-keys", type=int, default=200000)
    ap.add_argument("--mc-large", type=int, default=200)
    ap.add_argument("--mc-procs", type=int, default=2)
    ap.add_argument("--mc-conns", type=int, default=4)
    ap.add_argument("--mc-depth", type=int, default=32)
    ap.add_argument("--mc-seconds", type=int, default=5)
    ap.add_argument("--mc-client", choices=("c", "python"), default="c",
                    help="c: build-release/mc-get-driver (benchmarks/mc_get_driver.c, built on first use)")
    ap.add_argument("--json")
    ap.add_argument("--chart")
    args = ap.parse_args()
    if not args.warm_requests:
        args.warm_requests = 2 * args.objects
    os.makedirs(args.corpus_base, exist_ok=True)
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "args": dict(vars(args)),
           "loadavg_start": open("/proc/loadavg").read().split()[:3],
           "machine": "%d CPUs" % os.cpu_count()}
    res["machine"] += ", load average %s at start" % res["loadavg_start"][0]
    print("load average at start:", " ".join(res["loadavg_start"]), flush=True)
    tmp = tempfile.mkdtemp(prefix="cache-bench-")
    os.chmod(tmp, 0o755)
    args.tmp = tmp
    try:
        secs = args.sections.split(",")
        if "http" in secs:
            http_section(args, tmp, res)
        if "mc" in secs:
            mc_section(args, tmp, res)
    finally:
        res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        print("load average at end:", " ".join(res["loadavg_end"]), flush=True)
        summarize(args, res)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1, default=str)
        if args.chart and res.get("summary"):
            j = args.json or os.path.join(tmp, "result.json")
            if not args.json:
                with open(j, "w") as f:
                    json.dump(res, f, default=str)
            py = sys.executable
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                py = "/usr/bin/python3"
            subprocess.run([py, os.path.join(REPO, "benchmarks", "charts.py"), "cache_heads", j, args.chart])
        if args.keep:
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
