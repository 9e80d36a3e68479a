#!/usr/bin/env python3
"""The memcache front-end.

Differential: the same random streams of text and meta commands (fixed
seed) go to goblin-core and to a real memcached (Debian's, the oracle),
one request at a time, each followed by "mn" so the end of its reply is
known; the replies must be equal after normalising what legitimately
differs (the version string, CAS unique values: compared by their
equality pattern, not their values).

Cross-protocol: memcache and RESP see the same keys of database 0; a RESP
write gives a memcache item flags 0 and a new CAS; exptime is the key's
TTL; a memcache write dirties WATCH and reaches the AOF in Redis form;
flags and CAS survive DEBUG RELOAD and SAVE + restart; values above
--ram-head with SSD tails are served whole; the item size limit; a client
gone in the middle of a value changes nothing.

Ends with "N passed, M failed"."""
import argparse
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "helpers"))
from resp import free_port  # noqa: E402

import redis  # noqa: E402

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s %s" % (what, detail))


def wait_port(port, proc=None, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


class Goblin:
    def __init__(self, server, extra=(), workdir=None):
        self.server = server
        self.dir = workdir or tempfile.mkdtemp(prefix="mc-test-")
        self.extra = list(extra)
        self.proc = None
        self.start()

    def start(self):
        self.port = free_port()
        self.mport = free_port()
        args = [self.server, "--port", str(self.port), "--memcache-port", str(self.mport), "--bind", "127.0.0.1",
                "--dir", self.dir, "--save", "", "--enable-debug-command", "yes"] + [x.replace("{dir}", self.dir) for x in self.extra]
        self.log = open(os.path.join(self.dir, "log.txt"), "ab")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        if not wait_port(self.port, self.proc) or not wait_port(self.mport, self.proc):
            raise RuntimeError("goblin-core did not start: %s" % " ".join(args))
        self.r = redis.Redis(port=self.port, socket_timeout=10)
        end = time.time() + 30
        while time.time() < end:  # until the dataset is loaded
            try:
                self.r.ping()
                break
            except redis.BusyLoadingError:
                time.sleep(0.05)
            except redis.AuthenticationError:
                break
            except redis.ResponseError:
                break

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Memcached:
    def __init__(self):
        self.mport = free_port()
        self.proc = subprocess.Popen(["memcached", "-p", str(self.mport), "-U", "0", "-l", "127.0.0.1", "-u", "nobody"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_port(self.mport, self.proc):
            raise RuntimeError("memcached did not start")

    def cleanup(self):
        self.proc.terminate()
        self.proc.wait()


class MC:
    """A raw memcache connection."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def read_until(self, end):
        while end not in self.buf:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError
            self.buf += d
        i = self.buf.index(end) + len(end)
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def call(self, data):
        """data, then mn: everything up to the MN."""
        self.send(data + b"mn\r\n")
        out = self.read_until(b"MN\r\n")
        return out[:-4]

    def close(self):
        self.s.close()


# ---- the differential streams -------------------------------------------

KEYS = [b"k%d" % i for i in range(6)] + [b"n1", b"n2", b"x" * 250]


def rval(rng):
    kind = rng.random()
    if kind < 0.3:
        return str(rng.randrange(0, 10 ** rng.randrange(1, 20))).encode()
    if kind < 0.35:
        return b""
    n = rng.randrange(1, 40)
    v = bytes(rng.choice(b"abcdefgh xyz\t01") for _ in range(n))
    # Not white space only: memcached's incr reads past such a value.
    return v if v.strip() else b"w" + v


def rexp(rng):
    return rng.choice([0, 0, 0, 100, 1000, -1, int(time.time()) + 3600, int(time.time()) - 10])


def gen(rng, cas_of):
    """One request (bytes); cas_of(key) gives this server's last CAS
    seen for key (a placeholder resolved per server)."""
    k = rng.choice(KEYS)
    op = rng.choice(["set", "set", "add", "replace", "append", "prepend", "cas", "get", "gets", "gat", "gats",
                     "delete", "incr", "decr", "touch", "mg", "mg", "ms", "ms", "md", "ma", "bad", "verbosity",
                     "flush"])
    nr = b" noreply" if rng.random() < 0.15 else b""
    if op in ("set", "add", "replace", "append", "prepend", "cas"):
        v = rval(rng)
        n = len(v)
        tail = b"\r\n"
        r = rng.random()
        if r < 0.03 and n:
            n -= 1  # bad data chunk (the "mn" after it stays whole)
        elif r < 0.05:
            n = -1
        line = b"%s %s %d %d %d" % (op.encode(), k, rng.choice([0, 1, 42, 4294967295]), rexp(rng), n)
        if op == "cas":
            line += b" " + (cas_of(k) if rng.random() < 0.7 else b"12345678")
        if n < 0:
            return line + nr + b"\r\n"
        return line + nr + b"\r\n" + v + tail
    if op in ("get", "gets"):
        ks = rng.sample(KEYS, rng.randrange(1, 4))
        return op.encode() + b" " + b" ".join(ks) + b"\r\n"
    if op in ("gat", "gats"):
        ks = rng.sample(KEYS, rng.randrange(1, 3))
        return b"%s %d %s\r\n" % (op.encode(), rng.choice([0, 100, -1]), b" ".join(ks))
    if op == "delete":
        return b"delete " + k + nr + b"\r\n"
    if op in ("incr", "decr"):
        return b"%s %s %d%s\r\n" % (op.encode(), k, rng.choice([0, 1, 7, 18446744073709551615]), nr)
    if op == "touch":
        return b"touch %s %d%s\r\n" % (k, rng.choice([0, 100, -1]), nr)
    if op == "mg":
        fl = rng.sample([b"v", b"s", b"f", b"t", b"c", b"k", b"O77", b"q", b"T300", b"N30"], rng.randrange(0, 5))
        return b"mg " + k + b"".join(b" " + f for f in fl) + b"\r\n"
    if op == "ms":
        v = rval(rng)
        fl = rng.sample([b"F7", b"T0", b"T200", b"k", b"O9", b"q", b"c", b"I",
                         b"M" + rng.choice([b"E", b"A", b"P", b"R", b"S"]), b"C" + cas_of(k)], rng.randrange(0, 4))
        return b"ms %s %d%s\r\n%s\r\n" % (k, len(v), b"".join(b" " + f for f in fl), v)
    if op == "md":
        fl = rng.sample([b"q", b"k", b"O5", b"I", b"T60", b"C" + cas_of(k)], rng.randrange(0, 3))
        return b"md " + k + b"".join(b" " + f for f in fl) + b"\r\n"
    if op == "ma":
        fl = rng.sample([b"v", b"q", b"k", b"N0", b"J13", b"D3", b"MD", b"MI", b"t", b"c"], rng.randrange(0, 4))
        if b"MD" in fl and b"MI" in fl:
            fl.remove(b"MI")
        return b"ma " + k + b"".join(b" " + f for f in fl) + b"\r\n"
    if op == "verbosity":
        return rng.choice([b"verbosity 1\r\n", b"verbosity\r\n", b"verbosity 0 noreply\r\n"])
    if op == "flush":
        return b"flush_all" + nr + b"\r\n" if rng.random() < 0.3 else b"version\r\n"
    return rng.choice([b"bogus\r\n", b"GET k0\r\n", b"\r\n", b"set k0 1 2\r\n", b"get " + b"y" * 251 + b"\r\n",
                       b"incr k0 abc\r\n", b"touch k0 zz\r\n", b"delete k0 5\r\n", b"mg k0 zz\r\n", b"mg k0 v v\r\n",
                       b"ms k0 x\r\n", b"ms k0 2 MX\r\nab\r\n", b"ms k0 2 T\r\nab\r\n", b"mg\r\n",
                       b"mg k0 O" + b"1" * 40 + b"\r\n", b"set k0 x 0 1\r\nz\r\n", b"cas k0 0 0 1\r\nz\r\n"])


CAS_RE = re.compile(rb"^(VALUE \S+ \d+ \d+) (\d+)\r$|(?<= )c(\d+)(?= |\r)", re.M)


def learn_cas(reply, key_cas):
    """Remember the CAS each VALUE / meta c reply gave, per key."""
    for m in re.finditer(rb"^VALUE (\S+) \d+ \d+ (\d+)\r$", reply, re.M):
        key_cas[m.group(1)] = m.group(2)
    for m in re.finditer(rb"^(?:VA \d+|HD)((?: \S+)*)\r$", reply, re.M):
        toks = m.group(1).split()
        c = [t[1:] for t in toks if t.startswith(b"c")]
        k = [t[1:] for t in toks if t.startswith(b"k")]
        if c and k:
            key_cas[k[0]] = c[0]


def normalise(reply, ids):
    """CAS values by identity (first seen order), version string."""
    def cid(v):
        if v not in ids:
            ids[v] = len(ids) + 1
        return b"<cas%d>" % ids[v]
    reply = re.sub(rb"^(VALUE \S+ \d+ \d+) (\d+)\r$", lambda m: m.group(1) + b" " + cid(m.group(2)) + b"\r",
                   reply, flags=re.M)
    reply = re.sub(rb"(?<= )c(\d+)(?=[ \r])", lambda m: b"c" + cid(m.group(1)), reply)
    reply = re.sub(rb"^VERSION .*\r$", b"VERSION x\r", reply, flags=re.M)
    # memcached rewrites an incr/decr result in place (space-padded to the
    # old length) only when nothing else holds the item: either form.
    reply = re.sub(rb"^(VALUE \S+ \d+ )\d+((?: \S+)?\r\n)(\d+) +\r\n",
                   lambda m: m.group(1) + b"%d" % len(m.group(3)) + m.group(2) + m.group(3) + b"\r\n", reply, flags=re.M)
    reply = re.sub(rb"^VA \d+((?: \S+)*\r\n)(\d+) +\r\n",
                   lambda m: b"VA %d" % len(m.group(2)) + m.group(1) + m.group(2) + b"\r\n", reply, flags=re.M)
    reply = re.sub(rb"(?<= )s\d+(?=[ \r])", b"s", reply)
    return reply


T_RE = re.compile(rb"(?<= )t(-?\d+)(?=[ \r])")


def same_reply(a, b):
    """Equal, but a remaining TTL (t flag) may differ by a second or two:
    memcached's clock ticks once a second."""
    if a == b:
        return True
    if T_RE.sub(b"t", a) != T_RE.sub(b"t", b):
        return False
    ta = [int(x) for x in T_RE.findall(a)]
    tb = [int(x) for x in T_RE.findall(b)]
    return all(abs(x - y) <= 2 and (x < 0) == (y < 0) for x, y in zip(ta, tb))


def differential(server, seed, rounds):
    g = Goblin(server)
    m = Memcached()
    try:
        for stream in range(rounds):
            rng = random.Random(seed * 1000 + stream)
            a, b = MC(g.mport), MC(m.mport)
            a.call(b"flush_all\r\n")
            b.call(b"flush_all\r\n")
            cas_a, cas_b, ids_a, ids_b = {}, {}, {}, {}
            bad = 0
            for i in range(300):
                # The request is drawn once, with placeholders for CAS.
                marker = b"\x00CAS\x00"
                req = gen(rng, lambda k: marker + k + marker)

                def resolve(req, cas):
                    return re.sub(re.escape(marker) + rb"(.*?)" + re.escape(marker),
                                  lambda mm: cas.get(mm.group(1), b"999999"), req)
                try:
                    ra = a.call(resolve(req, cas_a))
                except (socket.timeout, EOFError):
                    check(False, "differential stream %d step %d: no reply from goblin to %r" % (stream, i, req[:200]))
                    return
                rb_ = b.call(resolve(req, cas_b))
                learn_cas(ra, cas_a)
                learn_cas(rb_, cas_b)
                na, nb = normalise(ra, ids_a), normalise(rb_, ids_b)
                if not same_reply(na, nb):
                    bad += 1
                    if bad <= 3:
                        print("stream %d step %d: %r\n  goblin:    %r\n  memcached: %r" %
                              (stream, i, resolve(req, cas_b)[:200], na[:300], nb[:300]))
            check(bad == 0, "differential stream %d (seed %d)" % (stream, seed), "%d mismatches" % bad)
            a.close()
            b.close()
    finally:
        g.cleanup()
        m.cleanup()


# ---- cross-protocol ------------------------------------------------------

def cross(server):
    g = Goblin(server, ["--appendonly", "yes"])
    try:
        r = g.r
        c = MC(g.mport)
        check(c.call(b"set a 7 0 5\r\nhello\r\n") == b"STORED\r\n", "mc set")
        check(r.get("a") == b"hello", "mc set -> RESP GET")
        r.set("b", b"bin\x00ary\r\nx")
        check(c.call(b"get b\r\n") == b"VALUE b 0 10\r\nbin\x00ary\r\nx\r\nEND\r\n", "RESP SET -> mc get")
        out1 = c.call(b"gets a\r\n")
        out2 = c.call(b"gets a\r\n")
        check(out1 == out2 and out1.startswith(b"VALUE a 7 5 "), "gets stable", repr(out1))
        cas1 = out1.split(b"\r\n")[0].split()[-1]
        r.append("a", "!")
        out3 = c.call(b"gets a\r\n")
        check(out3.startswith(b"VALUE a 0 6 ") and out3.split(b"\r\n")[0].split()[-1] != cas1,
              "RESP write resets flags and changes CAS", repr(out3))
        check(c.call(b"cas a 0 0 1 %s\r\nz\r\n" % cas1) == b"EXISTS\r\n", "stale CAS after RESP write")
        c.call(b"set t 0 100 1\r\nx\r\n")
        pttl = r.pttl("t")
        check(95000 < pttl <= 100000, "exptime as PTTL", str(pttl))
        abs_t = int(time.time()) + 1000
        c.call(b"set t2 0 %d 1\r\nx\r\n" % abs_t)
        check(990000 < r.pttl("t2") <= 1000000, "absolute exptime as PTTL")
        c.call(b"set t3 0 -1 1\r\nx\r\n")
        check(r.exists("t3") == 0, "negative exptime: gone")
        c.call(b"touch t 0\r\n")
        check(r.pttl("t") == -1, "touch 0 persists")
        # WATCH is dirtied by a memcache write.
        p = r.pipeline()
        p.watch("w")
        p.multi()
        p.set("w", "resp")
        c.call(b"set w 0 0 2\r\nmc\r\n")
        try:
            p.execute()
            ok = False
        except redis.WatchError:
            ok = True
        check(ok and r.get("w") == b"mc", "memcache write dirties WATCH")
        # A delayed flush_all.
        check(c.call(b"set fl 0 0 1\r\nx\r\nflush_all 1\r\nget fl\r\n") == b"STORED\r\nOK\r\nVALUE fl 0 1\r\nx\r\nEND\r\n",
              "flush_all 1: not yet")
        time.sleep(1.2)
        check(c.call(b"get fl\r\n") == b"END\r\n" and r.exists("fl") == 0, "flush_all 1: done after the delay")
        # CLIENT PAUSE WRITE holds memcache writes, not reads.
        r.execute_command("CLIENT", "PAUSE", 600, "WRITE")
        t0 = time.time()
        c.call(b"get w\r\n")
        t1 = time.time()
        c.call(b"set w 0 0 1\r\np\r\n")
        t2 = time.time()
        check(t1 - t0 < 0.3 and t2 - t0 >= 0.4, "CLIENT PAUSE WRITE holds memcache writes only", "%.2f %.2f" % (t1 - t0, t2 - t0))
        # Non-numeric incr, over RESP integers.
        r.set("num", 41)
        check(c.call(b"incr num 1\r\n") == b"42\r\n", "incr of a RESP integer")
        check(r.get("num") == b"42", "incr visible over RESP")
        # A list is not an item.
        r.rpush("lst", "x")
        check(c.call(b"get lst\r\n") == b"END\r\n", "other types are misses")
        check(c.call(b"add lst 0 0 1\r\ny\r\n") == b"NOT_STORED\r\n" and r.type("lst") == b"list", "add keeps other types")
        check(c.call(b"set lst 0 0 1\r\ny\r\n") == b"STORED\r\n" and r.get("lst") == b"y", "set replaces other types")
        # Database 0 only.
        r.execute_command("SELECT", 0)
        # The AOF holds the effects in Redis form.
        c.call(b"set ttlkey 3 500 2\r\nab\r\nappend ttlkey 0 0 2\r\ncd\r\nprepend ttlkey 0 0 2\r\nzz\r\n"
               b"incr num 5\r\nset b 0 0 1\r\nx\r\ndelete b\r\ntouch ttlkey 900\r\n")
        time.sleep(1.2)
        aof = b""
        d = os.path.join(g.dir, "appendonlydir")
        for f in sorted(os.listdir(d)):
            if ".incr." in f:
                aof += open(os.path.join(d, f), "rb").read()
        check(b"PXAT" in aof and b"$6\r\nAPPEND" in aof and b"KEEPTTL" in aof and b"PEXPIREAT" in aof
              and b"$3\r\nDEL" in aof, "AOF holds SET PXAT / APPEND / SET KEEPTTL / DEL / PEXPIREAT")
        check(b"mc_" not in aof, "no memcache-only command in the AOF")
        # Flags and CAS survive DEBUG RELOAD and a restart from the RDB.
        c.call(b"set keep 99 0 3\r\nabc\r\n")
        before = c.call(b"gets keep\r\n")
        r.execute_command("DEBUG", "RELOAD")
        after = c.call(b"gets keep\r\n")
        check(before == after, "flags and CAS survive DEBUG RELOAD", "%r %r" % (before, after))
        c.call(b"set fresh 0 0 1\r\nq\r\n")
        fresh = c.call(b"gets fresh\r\n").split(b"\r\n")[0].split()[-1]
        check(int(fresh) > int(before.split(b"\r\n")[0].split()[-1]), "CAS keeps growing after a reload")
        r.config_set("appendonly", "no")
        r.save()
        c.close()
        g.stop()
        g.extra = []  # from the RDB (the AOF's log carries no flags)
        g.start()
        c = MC(g.mport)
        again = c.call(b"gets keep\r\n")
        check(again == before, "flags and CAS survive SAVE + restart", "%r %r" % (before, again))
        # The dump still loads in Redis 7.0.
        rport = free_port()
        rdir = tempfile.mkdtemp(prefix="mc-redis-")
        shutil.copy(os.path.join(g.dir, "dump.rdb"), os.path.join(rdir, "dump.rdb"))
        rp = subprocess.Popen(["/usr/bin/redis-server", "--port", str(rport), "--dir", rdir, "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ok = wait_port(rport, rp)
            rr = redis.Redis(port=rport, socket_timeout=10)
            for _ in range(50):
                try:
                    if rr.get("keep") is not None:
                        break
                except redis.BusyLoadingError:
                    pass
                time.sleep(0.1)
            check(ok and rr.get("keep") == b"abc", "a dump with memcache metadata loads in redis-server 7.0")
        finally:
            rp.terminate()
            rp.wait()
            shutil.rmtree(rdir, ignore_errors=True)
        # Counters.
        st = c.call(b"stats\r\n")
        check(b"STAT cmd_get " in st and b"STAT curr_connections 1\r\n" in st and st.endswith(b"END\r\n"), "stats")
        info = g.r.info("memcache")
        check("memcache_requests" in info and info.get("memcache_connected_clients") == 1, "INFO memcache", str(info))
        # A client gone in the middle of a value leaves nothing.
        d = MC(g.mport)
        d.send(b"set half 0 0 100\r\n" + b"x" * 50)
        time.sleep(0.1)
        d.close()
        time.sleep(0.1)
        check(c.call(b"get half\r\n") == b"END\r\n" and g.r.exists("half") == 0, "half a value stores nothing")
        check(c.call(b"get " + b"k" * 251 + b"\r\n") == b"CLIENT_ERROR bad command line format\r\n", "key > 250")
        c.close()
    finally:
        g.cleanup()


def transport(server):
    """Requests split at every byte parse as whole ones; concurrent
    memcache and RESP increments of one key add up."""
    import threading
    g = Goblin(server)
    try:
        stream = (b"set s1 5 0 10\r\n0123456789\r\nget s1 nope\r\nappend s1 0 0 2\r\nab\r\n"
                  b"ms s2 3 T0 F9\r\nxyz\r\nmg s2 v f s k\r\nincr s1 1\r\nset n 0 0 1\r\n7\r\n"
                  b"decr n 2\r\ngat 0 s1 n\r\nma n v D5\r\nmd s2\r\nbogus\r\nset x 0 0 2\r\nabc\r\n")
        whole = MC(g.mport).call(stream + b"flush_all\r\n")
        c = MC(g.mport)
        for b in stream + b"flush_all\r\nmn\r\n":
            c.send(bytes([b]))
        split = c.read_until(b"MN\r\n")[:-4]
        check(whole == split and whole.count(b"\r\n") > 15, "byte-by-byte requests answer as whole ones",
              "%r\n%r" % (whole, split))
        c.call(b"set ctr 0 0 1\r\n0\r\n")

        def mc_incr():
            m = MC(g.mport)
            for _ in range(300):
                m.call(b"incr ctr 1\r\n")
            m.close()

        def resp_incr():
            rr = redis.Redis(port=g.port)
            for _ in range(300):
                rr.incrby("ctr", 2)
        ts = [threading.Thread(target=f) for f in (mc_incr, mc_incr, resp_incr)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        check(g.r.get("ctr") == b"1200", "concurrent memcache and RESP increments add up", repr(g.r.get("ctr")))
        c.close()
    finally:
        g.cleanup()


def maxmemory(server):
    """Memcache sets go through maxmemory: evicted under allkeys-lru,
    refused under noeviction."""
    g = Goblin(server, ["--maxmemory", "20mb", "--maxmemory-policy", "allkeys-lru"])
    try:
        c = MC(g.mport)
        v = b"x" * 10000
        bad = sum(c.call(b"set key%d 0 0 %d\r\n%s\r\n" % (i, len(v), v)) != b"STORED\r\n" for i in range(4000))
        check(bad == 0 and g.r.dbsize() < 4000 and g.r.info("stats")["evicted_keys"] > 0,
              "allkeys-lru evicts for memcache sets", "bad=%d keys=%d" % (bad, g.r.dbsize()))
        g.r.config_set("maxmemory-policy", "noeviction")
        # A key that is there now stays (nothing evicts under noeviction;
        # the last one set may have gone to the cron's eviction before).
        kept = g.r.randomkey()
        replies = set(c.call(b"set more%d 0 0 %d\r\n%s\r\n" % (i, len(v), v)) for i in range(3000))
        check(b"SERVER_ERROR out of memory storing object\r\n" in replies, "noeviction refuses memcache sets",
              repr(replies))
        got = c.call(b"get %s\r\n" % kept)
        check(got.startswith(b"VALUE %s 0 10000\r\n" % kept), "reads go on at the limit", repr(got[:60]))
        c.close()
    finally:
        g.cleanup()


def replica(server):
    """Memcache writes reach a replica in Redis form."""
    a = Goblin(server)
    b = Goblin(server)
    try:
        b.r.execute_command("REPLICAOF", "127.0.0.1", a.port)
        c = MC(a.mport)
        c.call(b"set r1 3 100 5\r\nhello\r\nset r2 0 0 1\r\n5\r\nincr r2 10\r\nappend r1 0 0 1\r\n!\r\n"
               b"ms r3 2 T50\r\nab\r\nset gone 0 0 1\r\nx\r\ndelete gone\r\n")
        ok = False
        for _ in range(100):
            try:
                if b.r.get("r3") == b"ab":
                    ok = True
                    break
            except redis.RedisError:
                pass
            time.sleep(0.1)
        check(ok, "memcache writes reach the replica")
        check(b.r.get("r1") == b"hello!" and 90000 < b.r.pttl("r1") <= 100000, "set+append with its TTL on the replica")
        check(b.r.get("r2") == b"15" and b.r.exists("gone") == 0, "incr and delete on the replica")
        check(0 < b.r.pttl("r3") <= 50000, "ms T on the replica")
        d = MC(b.mport)
        # Flags come with a full sync's RDB, not with the command stream.
        check(re.match(rb"VALUE r1 [03] 6\r\nhello!\r\nEND\r\n$", d.call(b"get r1\r\n")) is not None,
              "memcache read on the replica")
        check(d.call(b"set x 0 0 1\r\ny\r\n") == b"SERVER_ERROR read only replica\r\n", "a replica refuses memcache writes")
        c.close()
        d.close()
    finally:
        b.cleanup()
        a.cleanup()


def limits(server):
    g = Goblin(server, ["--memcache-max-item-size", "2m"])
    try:
        c = MC(g.mport)
        v = os.urandom(1500000)
        check(c.call(b"set big 1 0 %d\r\n%s\r\n" % (len(v), v)) == b"STORED\r\n", "1.5 MB under a 2 MB limit")
        check(g.r.get("big") == v, "big value over RESP")
        w = b"y" * (3 << 20)
        check(c.call(b"set big 0 0 %d\r\n%s\r\n" % (len(w), w)) == b"SERVER_ERROR object too large for cache\r\n",
              "over the limit")
        check(g.r.exists("big") == 0, "a too large set drops the old item (as memcached)")
        check(c.call(b"version\r\n").startswith(b"VERSION "), "connection usable after a swallowed value")
        g.r.config_set("memcache-max-item-size", "128m")
        big = os.urandom(64 << 20)
        check(c.call(b"set huge 0 0 %d\r\n%s\r\n" % (len(big), big)) == b"STORED\r\n", "64 MB under 128m")
        c.close()
    finally:
        g.cleanup()
    # A password closes the memcache port (it has no AUTH).
    g = Goblin(server, ["--requirepass", "pw"])
    try:
        c = MC(g.mport)
        check(c.call(b"set a 0 0 1\r\nx\r\nget a\r\n") == b"CLIENT_ERROR unauthenticated\r\n" * 2,
              "requirepass refuses memcache requests")
        c.close()
    finally:
        g.cleanup()
    # --no-memcache: no listener.
    port = free_port()
    mport = free_port()
    d = tempfile.mkdtemp(prefix="mc-test-")
    p = subprocess.Popen([server, "--port", str(port), "--memcache-port", str(mport), "--no-memcache", "--save", "",
                          "--dir", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, p)
        try:
            socket.create_connection(("127.0.0.1", mport), timeout=1).close()
            ok = False
        except OSError:
            ok = True
        check(ok, "--no-memcache: nothing listens on memcache-port")
    finally:
        p.terminate()
        p.wait()
        shutil.rmtree(d, ignore_errors=True)


def ssd_tails(server):
    g = Goblin(server, ["--ram-head", "16K", "--io-chunk", "16K", "--write-io-chunk", "64K", "--ssd-dir", "{dir}/ssd"])
    try:
        c = MC(g.mport)
        vals = {b"s%d" % i: os.urandom(20000 + i * 70001) for i in range(4)}
        for k, v in vals.items():
            check(c.call(b"set %s 5 0 %d\r\n%s\r\n" % (k, len(v), v)) == b"STORED\r\n", "set with an SSD tail")
        for k, v in vals.items():
            check(c.call(b"get %s\r\n" % k) == b"VALUE %s 5 %d\r\n%s\r\nEND\r\n" % (k, len(v), v), "get streams the tail")
            check(g.r.get(k) == v, "RESP GET of the same value")
        ks = list(vals)
        want = b"".join(b"VALUE %s 5 %d\r\n%s\r\n" % (k, len(vals[k]), vals[k]) for k in ks) + b"END\r\n"
        check(c.call(b"get " + b" ".join(ks) + b"\r\n") == want, "multi-key get of tailed values")
        got = c.call(b"mg s3 v f s\r\n")
        check(got == b"VA %d f5 s%d\r\n%s\r\n" % (len(vals[b"s3"]), len(vals[b"s3"]), vals[b"s3"]), "mg of a tailed value")
        c.close()
    finally:
        g.cleanup()


def direct_sends(server):
    """A large value goes to the socket straight from the store while
    nothing waits before it: RAM heads and tails (--ram-head 16K) and a
    whole small-object record; a reader that does not read leaves the rest
    copied, in order, and a change to the key after its get does not reach
    the bytes still to go."""
    g = Goblin(server, ["--ram-head", "16K", "--memcache-max-item-size", "4m"])
    try:
        c = MC(g.mport)
        old = os.urandom(3 << 20)
        vals = {b"big": old, b"mid": os.urandom(40000), b"small": b"x" * 100}
        for k, v in vals.items():
            check(c.call(b"set %s 3 0 %d\r\n%s\r\n" % (k, len(v), v)) == b"STORED\r\n", "set " + k.decode())
        before = g.r.info("goblin")["net_output_direct_bytes"]
        # Ten gets of 3 MiB pipelined and not read: the socket fills.
        order = [b"big", b"small", b"mid"] * 10
        c.send(b"".join(b"get %s\r\n" % k for k in order))
        time.sleep(0.3)
        c2 = MC(g.mport)
        new = os.urandom(3 << 20)
        check(c2.call(b"set big 3 0 %d\r\n%s\r\n" % (len(new), new)) == b"STORED\r\n", "overwritten meanwhile")
        check(c2.call(b"delete big\r\n") == b"DELETED\r\n", "deleted meanwhile")
        c2.close()
        for k in order:
            v = vals[k]
            got = c.read_until(b"END\r\n")
            check(got == b"VALUE %s 3 %d\r\n%s\r\nEND\r\n" % (k, len(v), v), "get %s in order, the bytes it saw" % k.decode())
        after = g.r.info("goblin")["net_output_direct_bytes"]
        check(after - before >= (3 << 20), "large values sent from the store: %d bytes" % (after - before))
        c.close()
    finally:
        g.cleanup()


def cas_side_table(server):
    """Flags and CAS uniques live in a side table; an item of flags 0 has no
    entry until its unique is first shown. The CAS semantics do not change:
    a shown unique is stable until the item changes, every change makes a
    new one, and a compare against anything else fails."""
    g = Goblin(server, [])
    try:
        r = g.r
        c, c2 = MC(g.mport), MC(g.mport)

        def meta_keys():
            return int(r.info("memcache")["memcache_keys_with_metadata"])

        for i in range(200):
            c.send(b"set z%d 0 0 3 noreply\r\nabc\r\n" % i)
        c.call(b"")
        check(meta_keys() == 0, "flags-0 stores keep no side-table entry", str(meta_keys()))
        c.call(b"set f 7 0 1\r\nx\r\n")
        check(meta_keys() == 1, "a store with flags keeps one", str(meta_keys()))
        # An unshown unique: no compare can match it.
        misses = [c.call(b"cas z0 0 0 1 %d\r\ny\r\n" % n) for n in range(1, 40)]
        check(all(m == b"EXISTS\r\n" for m in misses), "cas against a never-shown unique fails", repr(misses[:3]))
        a = c.call(b"gets z1\r\n")
        b = c2.call(b"gets z1\r\n")
        check(a == b and a.startswith(b"VALUE z1 0 3 "), "the first shown unique is stable across connections",
              repr((a, b)))
        cas1 = a.split(b"\r\n")[0].split()[-1]
        check(c.call(b"cas z1 0 0 1 %s\r\nq\r\n" % cas1) == b"STORED\r\n", "cas with the shown unique")
        d = c.call(b"gets z1\r\n")
        cas2 = d.split(b"\r\n")[0].split()[-1]
        check(d.startswith(b"VALUE z1 0 1 ") and cas2 != cas1, "the stored item has a new unique", repr(d))
        check(c.call(b"cas z1 0 0 1 %s\r\nw\r\n" % cas1) == b"EXISTS\r\n", "the old unique no longer matches")
        c.call(b"set z1 0 0 1\r\nv\r\n")
        check(c.call(b"cas z1 0 0 1 %s\r\nw\r\n" % cas2) == b"EXISTS\r\n",
              "a flags-0 store replaces a shown unique")
        # ms c shows the unique that mg c and gets show afterwards.
        hd = c.call(b"ms m1 2 c\r\nhi\r\n")
        m = re.match(rb"^HD c(\d+)\r\n$", hd)
        mg = c.call(b"mg m1 c\r\n")
        check(m is not None and mg == b"HD c%s\r\n" % m.group(1), "ms c then mg c: one unique", repr((hd, mg)))
        gs = c.call(b"gets m1\r\n")
        check(m is not None and gs.split(b"\r\n")[0].endswith(b" " + m.group(1)), "ms c then gets", repr(gs))
        # ma c: the counter's unique, stable until the next change.
        c.call(b"set n 0 0 1\r\n5\r\n")
        ma = c.call(b"ma n c v\r\n")
        mm = re.match(rb"^VA 1 c(\d+)\r\n6\r\n$", ma)
        check(mm is not None and c.call(b"mg n c\r\n") == b"HD c%s\r\n" % mm.group(1), "ma c then mg c", repr(ma))
        # mg N on a miss: the item it makes has a unique and the win token.
        v1 = c.call(b"mg nv N30 c\r\n")
        v2 = c.call(b"mg nv c\r\n")
        m1, m2 = re.match(rb"^HD c(\d+) W\r\n$", v1), re.match(rb"^HD c(\d+) Z\r\n$", v2)
        check(m1 is not None and m2 is not None and m1.group(1) == m2.group(1) and m1.group(1) != b"0",
              "mg N: unique and token", repr((v1, v2)))
        # A key's first TTL (touch, gat) keeps flags and unique.
        c.call(b"set t1 5 0 2\r\nab\r\n")
        g1 = c.call(b"gets t1\r\n")
        check(c.call(b"touch t1 1000\r\n") == b"TOUCHED\r\n", "touch", "")
        c.call(b"set t2 6 0 2\r\ncd\r\n")
        g2 = c.call(b"gets t2\r\n")
        check(c.call(b"gat 1000 t2\r\n") == b"VALUE t2 6 2\r\ncd\r\nEND\r\n", "gat", "")
        check(c.call(b"gets t1 t2\r\n") == g1[:-5] + g2, "flags and unique after a first TTL",
              repr((g1, g2, c.call(b"gets t1 t2\r\n"))))
        check(0 < r.ttl("t1") <= 1000 and 0 < r.ttl("t2") <= 1000, "the TTLs", "")
        # Flags survive a restart; flags-0 items come back with flags 0.
        c.call(b"set p 9 0 1\r\nx\r\n")
        r.save()
        g.stop()
        g.start()
        c = MC(g.mport)
        check(c.call(b"get p z2\r\n") == b"VALUE p 9 1\r\nx\r\nVALUE z2 0 3\r\nabc\r\nEND\r\n",
              "flags after a restart", "")
    finally:
        g.cleanup()


def embedded(server):
    """A small value stored over memcache lives in its key's entry, as one
    stored with RESP's SET does: the same MEMORY USAGE for the same key
    length and value; and it stays right as later writes grow, shrink and
    rewrite it (in place, out of the entry, as a counter) and with flags."""
    g = Goblin(server, [])
    try:
        r = g.r
        c = MC(g.mport)
        rng = random.Random(7)
        for n in (1, 7, 21, 44, 45, 100, 200, 254):
            v = bytes(rng.choice(b"abcdefghij") for _ in range(n))
            c.call(b"set m%03d 0 0 %d\r\n%s\r\n" % (n, n, v))
            r.set("r%03d" % n, v)
            um, ur = r.memory_usage("m%03d" % n), r.memory_usage("r%03d" % n)
            check(um == ur and r.get("m%03d" % n) == v, "a %d-byte memcache value takes what RESP's does" % n,
                  repr((um, ur)))
        c.call(b"set e 3 0 5\r\nhello\r\n")
        check(c.call(b"append e 0 0 6\r\n world\r\n") == b"STORED\r\n", "append")
        check(c.call(b"prepend e 0 0 1\r\n>\r\n") == b"STORED\r\n", "prepend")
        check(c.call(b"get e\r\n") == b"VALUE e 3 12\r\n>hello world\r\nEND\r\n", "append/prepend in the entry")
        big = b"x" * 300
        c.call(b"append e 0 0 300\r\n%s\r\n" % big)
        check(r.get("e") == b">hello world" + big, "appended past the entry's room")
        c.call(b"set e 4 0 2\r\nhi\r\n")
        check(c.call(b"get e\r\n") == b"VALUE e 4 2\r\nhi\r\nEND\r\n", "a small value again, new flags")
        c.call(b"set n 0 0 2\r\n41\r\n")
        check(c.call(b"incr n 1\r\n") == b"42\r\n" and r.get("n") == b"42", "incr")
        c.call(b"set s 5 0 40\r\n%s\r\n" % (b"y" * 40))
        g1 = c.call(b"gets s\r\n")
        c.call(b"set s 6 0 3\r\nabc\r\n")
        g2 = c.call(b"gets s\r\n")
        check(g2.startswith(b"VALUE s 6 3 ") and g2.split(b"\r\n")[0].split()[-1] != g1.split(b"\r\n")[0].split()[-1]
              and g2.endswith(b"\r\nabc\r\nEND\r\n"), "rewritten in its room: flags and a new unique", repr((g1, g2)))
        r.execute_command("DEBUG", "RELOAD")
        check(c.call(b"get s e m100\r\n").count(b"VALUE") == 3 and r.get("m100") == r.get("r100"),
              "after DEBUG RELOAD")
    finally:
        g.cleanup()


def compaction(server):
    """After a mass delete the cron moves the surviving entries out of
    their sparse slabs: each item keeps its flags, its shown CAS unique and
    its TTL (the side table follows the moved entry)."""
    g = Goblin(server, [])
    try:
        r = g.r
        c = MC(g.mport)
        n = 200000
        for i in range(0, n, 1000):
            c.send(b"".join(b"set c%d %d %d 4 noreply\r\nv%03d\r\n" % (k, k % 7 + 1, 100000 if k % 300 == 0 else 0,
                                                                       k % 1000) for k in range(i, i + 1000)))
        c.call(b"")
        keep = range(0, n, 100)
        shown = {k: c.call(b"gets c%d\r\n" % k) for k in keep}
        before = r.info("stats")["active_defrag_hits"]
        gone = r.eval("local d = 0 for i = 0, tonumber(ARGV[1]) - 1 do if i % 100 ~= 0 then "
                      "d = d + redis.call('del', 'c' .. i) end end return d", 0, n)
        check(gone == n - len(keep), "the mass delete", str(gone))
        # The passes run shard by shard: wait until the count stands still.
        deadline, last = time.time() + 30, -1
        while time.time() < deadline:
            hits = r.info("stats")["active_defrag_hits"]
            if hits == last and hits > before and not r.info("memory")["active_defrag_running"]:
                break
            last = hits
            time.sleep(0.5)
        moved = r.info("stats")["active_defrag_hits"] - before
        check(moved >= len(keep) // 10, "survivors moved", str(moved))
        now = {k: c.call(b"gets c%d\r\n" % k) for k in keep}
        bad = [k for k in keep if now[k] != shown[k]]
        check(not bad, "flags, value and unique of the moved items",
              repr([(shown[k], now[k]) for k in bad[:3]]))
        ttls = [r.ttl("c%d" % k) for k in keep if k % 300 == 0]
        check(all(99000 < t <= 100000 for t in ttls), "their TTLs", repr(ttls[:5]))
        check(all(r.ttl("c%d" % k) == -1 for k in keep if k % 300), "no TTL where none was set")
    finally:
        g.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(ROOT, "build-release", "goblin-core"))
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--streams", type=int, default=8)
    a = ap.parse_args()
    for name, fn in [("differential", lambda: differential(a.server, a.seed, a.streams)),
                     ("cross", lambda: cross(a.server)), ("transport", lambda: transport(a.server)),
                     ("replica", lambda: replica(a.server)), ("maxmemory", lambda: maxmemory(a.server)),
                     ("limits", lambda: limits(a.server)), ("cas", lambda: cas_side_table(a.server)),
                     ("ssd", lambda: ssd_tails(a.server)), ("direct", lambda: direct_sends(a.server)),
                     ("embedded", lambda: embedded(a.server)), ("compaction", lambda: compaction(a.server))]:
        try:
            fn()
        except Exception as e:  # a crash of one group is a failure, the others still run
            check(False, "%s raised %r" % (name, e))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
