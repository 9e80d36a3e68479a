#!/usr/bin/env python3
"""Bounded soak test: many clients, every command family, MULTI/EXEC with
WATCH, blocking pops, Pub/Sub, expiry and DUMP/RESTORE against one server,
then a check of the final dataset against a model.

    python3 tests/soak/soak.py [--server build-release/goblin-core]
        [--cores 2] [--clients 120] [--duration 150] [--port N] [--seed S]
        [--tls-fraction F]

Without --port a server is started (--cores 2 by default) on a free port and
stopped at the end; its stderr is scanned for sanitizer reports, so the same
script checks the asan and tsan builds. Standard library only.

How consistency is checked:
  * each worker owns the keys "w<id>:*" and keeps a model of them; every
    reply is compared with what the model predicts, and at the end every
    key of every model is compared with the server's value (TYPE, GET,
    HGETALL, LRANGE, SMEMBERS, ZRANGE WITHSCORES);
  * shared keys: a counter every worker increments (the final value is the
    sum of the increments), a bank of accounts moved between with
    WATCH/MULTI/EXEC (the total never changes), a queue fed with RPUSH and
    drained with BLPOP (nothing lost, nothing duplicated);
  * Pub/Sub: every subscriber gets every message of its channels, in order,
    from each publisher;
  * expiry: keys given a short TTL are gone at the end, the others are not;
  * ACLs: clients run as a user whose rules another thread keeps rewriting
    (their commands stay allowed, a key outside their patterns never is),
    and a user deleted while its client is connected disconnects it.
--tls-fraction F (with a server it starts): the server also listens on a
TLS port (certificates made with the openssl CLI, client certificates
required) and that fraction of the command workers, subscribers and ACL
clients connect over TLS (Python's ssl module) instead of plaintext.
Exit status 0 when everything holds; the last line is
"soak: N passed, M failed".
"""

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "helpers"))
from resp import Conn, Err, encode, free_port  # noqa: E402

# ----------------------------------------------------------------- TLS --

# Set by main with --tls-fraction: {"port", "ctx", "every"}.
TLS = {}


class TlsConn(Conn):
    """Conn over TLS (the same reads and writes on an SSLSocket)."""

    def __init__(self, port, ctx, timeout=30.0):
        Conn.__init__(self, port, timeout=timeout, name="tls:127.0.0.1:%d" % port)
        self.sock = ctx.wrap_socket(self.sock, server_hostname="localhost")


def open_conn(port, slot, timeout=30.0):
    """Slot's connection: TLS for one slot in TLS["every"], else plaintext."""
    if TLS and slot % TLS["every"] == 0:
        return TlsConn(TLS["port"], TLS["ctx"], timeout=timeout)
    return Conn(port, timeout=timeout)


def make_tls(workdir, fraction):
    import ssl
    d = os.path.join(workdir, "certs")
    os.makedirs(d)

    def ossl(*a):
        subprocess.run(["openssl"] + list(a), cwd=d, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    ossl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", "ca.key", "-out", "ca.crt", "-days",
         "2", "-subj", "/CN=soak CA")
    for who in ("server", "client"):
        ossl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", who + ".key", "-out", who + ".csr",
             "-subj", "/CN=" + who)
        ossl("x509", "-req", "-in", who + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
             who + ".crt", "-days", "2")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(os.path.join(d, "ca.crt"))
    ctx.load_cert_chain(os.path.join(d, "client.crt"), os.path.join(d, "client.key"))
    TLS.update(port=free_port(), ctx=ctx, every=max(1, int(round(1 / fraction))))
    return ["--tls-port", str(TLS["port"])] + [
        a for n, f in (("cert", "server.crt"), ("key", "server.key"), ("ca-cert", "ca.crt"))
        for a in ("--tls-%s-file" % n, os.path.join(d, f))]


# ------------------------------------------------------------- results --


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.failures = []
        self.checks = 0
        self.commands = 0

    def ok(self, n=1):
        with self.lock:
            self.checks += n

    def fail(self, what):
        with self.lock:
            if len(self.failures) < 200:
                self.failures.append(what)

    def count(self, n):
        with self.lock:
            self.commands += n


# -------------------------------------------------------------- worker --

SHORT_TTL_MS = (200, 1500)
# Churner: keys per round (enough that a shard's pool holds more than the
# compaction's floor of free bytes once they are deleted), rounds.
CHURN_KEYS = 150000
CHURN_ROUNDS = 3


class Worker(threading.Thread):
    """Runs random commands on its own keys, plus shared-key operations,
    checking each reply against its model."""

    def __init__(self, wid, port, deadline, res, seed, shared):
        super().__init__(daemon=True)
        self.wid, self.port, self.deadline, self.res = wid, port, deadline, res
        self.rng = random.Random(seed)
        self.shared = shared
        self.model = {}        # key -> (type, value)
        self.expiring = {}     # key -> absolute deadline (s) of a short TTL
        self.incr_total = 0
        self.pushed = []
        self.popped = []
        self.ncmd = 0

    def k(self, name):
        return "w%d:%s" % (self.wid, name)

    def expect(self, got, want, what):
        if got != want:
            self.res.fail("w%d %s: expected %r, got %r" % (self.wid, what, want, got))
        else:
            self.res.ok()

    def call(self, *args):
        self.ncmd += 1
        return self.c.call(*args)

    def live(self, key):
        """Model lookup honouring short TTLs (None while uncertain)."""
        if key in self.expiring:
            return "uncertain"
        return self.model.get(key)

    # ---- families on own keys ------------------------------------------------

    def op_string(self):
        key = self.k("s%d" % self.rng.randrange(20))
        cur = self.live(key)
        if cur == "uncertain":
            self.call("DEL", key)
            self.model.pop(key, None)
            self.expiring.pop(key, None)
            return
        r = self.rng.random()
        if cur is not None and cur[0] != "string":
            self.expect(self.call("DEL", key), 1, "DEL non-string")
            del self.model[key]
            return
        if r < 0.3:
            v = ("%d-" % self.rng.randrange(1000)).encode() * self.rng.randrange(1, 20)
            self.expect(self.call("SET", key, v), b"OK", "SET")
            self.model[key] = ("string", v)
        elif r < 0.5:
            want = cur[1] if cur else None
            self.expect(self.call("GET", key), want, "GET " + key)
        elif r < 0.7:
            v = b"+%d" % self.rng.randrange(100)
            base = cur[1] if cur else b""
            self.expect(self.call("APPEND", key, v), len(base) + len(v), "APPEND")
            self.model[key] = ("string", base + v)
        elif r < 0.85:
            ikey = self.k("i%d" % self.rng.randrange(5))
            icur = self.live(ikey)
            if icur == "uncertain" or (icur is not None and icur[0] != "string"):
                return
            n = self.rng.randrange(-50, 100)
            base = int(icur[1]) if icur else 0
            self.expect(self.call("INCRBY", ikey, n), base + n, "INCRBY")
            self.model[ikey] = ("string", str(base + n).encode())
        else:
            if cur:
                self.expect(self.call("STRLEN", key), len(cur[1]), "STRLEN")
            else:
                self.expect(self.call("EXISTS", key), 0, "EXISTS")

    def op_hash(self):
        key = self.k("h%d" % self.rng.randrange(8))
        cur = self.model.get(key)
        h = dict(cur[1]) if cur else {}
        r = self.rng.random()
        if r < 0.45:
            f, v = b"f%d" % self.rng.randrange(30), b"v%d" % self.rng.randrange(1000)
            self.expect(self.call("HSET", key, f, v), 0 if f in h else 1, "HSET")
            h[f] = v
        elif r < 0.6:
            f = b"f%d" % self.rng.randrange(30)
            self.expect(self.call("HDEL", key, f), 1 if f in h else 0, "HDEL")
            h.pop(f, None)
        elif r < 0.75:
            f = b"n%d" % self.rng.randrange(3)
            base = int(h.get(f, b"0"))
            n = self.rng.randrange(1, 10)
            self.expect(self.call("HINCRBY", key, f, n), base + n, "HINCRBY")
            h[f] = str(base + n).encode()
        else:
            got = self.call("HGETALL", key)
            got = dict(zip(got[0::2], got[1::2])) if isinstance(got, list) else got
            self.expect(got, h, "HGETALL")
        if h:
            self.model[key] = ("hash", h)
        else:
            self.model.pop(key, None)

    def op_list(self):
        key = self.k("l%d" % self.rng.randrange(6))
        cur = self.model.get(key)
        lst = list(cur[1]) if cur else []
        r = self.rng.random()
        if r < 0.4:
            vals = [b"e%d" % self.rng.randrange(10000) for _ in range(self.rng.randrange(1, 5))]
            self.expect(self.call("RPUSH", key, *vals), len(lst) + len(vals), "RPUSH")
            lst += vals
        elif r < 0.55:
            self.expect(self.call("LPOP", key), lst.pop(0) if lst else None, "LPOP")
        elif r < 0.65:
            v = b"h%d" % self.rng.randrange(100)
            self.expect(self.call("LPUSH", key, v), len(lst) + 1, "LPUSH")
            lst.insert(0, v)
        elif r < 0.75:
            self.expect(self.call("LTRIM", key, 0, 19), b"OK", "LTRIM")
            lst = lst[:20]
        else:
            self.expect(self.call("LRANGE", key, 0, -1), lst, "LRANGE")
        if lst:
            self.model[key] = ("list", lst)
        else:
            self.model.pop(key, None)

    def op_set(self):
        key = self.k("t%d" % self.rng.randrange(6))
        cur = self.model.get(key)
        st = set(cur[1]) if cur else set()
        r = self.rng.random()
        if r < 0.5:
            m = b"m%d" % self.rng.randrange(40)
            self.expect(self.call("SADD", key, m), 0 if m in st else 1, "SADD")
            st.add(m)
        elif r < 0.7:
            m = b"m%d" % self.rng.randrange(40)
            self.expect(self.call("SREM", key, m), 1 if m in st else 0, "SREM")
            st.discard(m)
        elif r < 0.85:
            self.expect(self.call("SCARD", key), len(st), "SCARD")
        else:
            got = self.call("SMEMBERS", key)
            self.expect(set(got) if isinstance(got, list) else got, st, "SMEMBERS")
        if st:
            self.model[key] = ("set", st)
        else:
            self.model.pop(key, None)

    def op_zset(self):
        key = self.k("z%d" % self.rng.randrange(6))
        cur = self.model.get(key)
        z = dict(cur[1]) if cur else {}
        r = self.rng.random()
        if r < 0.4:
            m, s = b"z%d" % self.rng.randrange(30), self.rng.randrange(-100, 100)
            self.expect(self.call("ZADD", key, s, m), 0 if m in z else 1, "ZADD")
            z[m] = s
        elif r < 0.55:
            m, n = b"z%d" % self.rng.randrange(30), self.rng.randrange(1, 5)
            want = z.get(m, 0) + n
            self.expect(self.call("ZINCRBY", key, n, m), str(want).encode(), "ZINCRBY")
            z[m] = want
        elif r < 0.7:
            m = b"z%d" % self.rng.randrange(30)
            self.expect(self.call("ZREM", key, m), 1 if m in z else 0, "ZREM")
            z.pop(m, None)
        else:
            self.expect(self.call("ZRANGE", key, 0, -1, "WITHSCORES"), zset_flat(z), "ZRANGE")
        if z:
            self.model[key] = ("zset", z)
        else:
            self.model.pop(key, None)

    def op_dump(self):
        """DUMP one of the own keys and RESTORE it over this worker's copy
        key: the copy reads back as the model says."""
        keys = sorted(k for k in self.model if k not in self.expiring and not k.endswith(":copy"))
        if not keys:
            return
        key = self.rng.choice(keys)
        typ, val = self.model[key]
        payload = self.call("DUMP", key)
        if not isinstance(payload, bytes):
            self.res.fail("w%d DUMP %s: %r" % (self.wid, key, payload))
            return
        dst = self.k("copy")
        self.expect(self.call("RESTORE", dst, 0, payload, "REPLACE"), b"OK", "RESTORE")
        if typ == "string":
            got, want = self.call("GET", dst), val
        elif typ == "hash":
            r = self.call("HGETALL", dst)
            got, want = dict(zip(r[0::2], r[1::2])), dict(val)
        elif typ == "list":
            got, want = self.call("LRANGE", dst, 0, -1), list(val)
        elif typ == "set":
            got, want = set(self.call("SMEMBERS", dst)), set(val)
        else:
            got, want = self.call("ZRANGE", dst, 0, -1, "WITHSCORES"), zset_flat(val)
            val = dict(val)
        self.expect(got, want, "RESTOREd copy of " + key)
        self.model[dst] = (typ, want if typ != "zset" else val)

    def op_expire(self):
        """Short TTLs on throw-away keys; long TTLs on kept keys."""
        if self.rng.random() < 0.5:
            key = self.k("x%d" % self.rng.randrange(1000000))
            ttl = self.rng.randrange(*SHORT_TTL_MS)
            self.expect(self.call("SET", key, "soon", "PX", ttl), b"OK", "SET PX")
            self.expiring[key] = time.time() + ttl / 1000.0
            self.model[key] = ("string", b"soon")
        else:
            key = self.k("keep%d" % self.rng.randrange(10))
            self.expect(self.call("SET", key, "kept", "EX", 100000), b"OK", "SET EX")
            self.model[key] = ("string", b"kept")
            ttl = self.call("TTL", key)
            if not (isinstance(ttl, int) and 99000 < ttl <= 100000):
                self.res.fail("w%d TTL of %s: %r" % (self.wid, key, ttl))

    def op_multi(self):
        """A transaction on own keys: all of it or nothing."""
        a, b = self.k("ta"), self.k("tb")
        ca, cb = self.model.get(a), self.model.get(b)
        va = int(ca[1]) if ca else 0
        vb = int(cb[1]) if cb else 0
        n = self.rng.randrange(1, 10)
        self.c.send("MULTI")
        self.c.send("INCRBY", a, n)
        self.c.send("INCRBY", b, n)
        self.c.send("EXEC")
        self.ncmd += 4
        replies = [self.c.read() for _ in range(4)]
        self.expect(replies, [b"OK", b"QUEUED", b"QUEUED", [va + n, vb + n]], "MULTI/EXEC")
        self.model[a] = ("string", str(va + n).encode())
        self.model[b] = ("string", str(vb + n).encode())

    # ---- shared keys -----------------------------------------------------------------

    def op_shared_counter(self):
        n = self.rng.randrange(1, 5)
        got = self.call("INCRBY", "shared:counter", n)
        if isinstance(got, int):
            self.incr_total += n
            self.res.ok()
        else:
            self.res.fail("w%d INCRBY shared:counter: %r" % (self.wid, got))

    def op_bank(self):
        """Move money between two accounts with WATCH: the total is fixed."""
        i, j = self.rng.sample(range(self.shared["accounts"]), 2)
        ka, kb = "bank:%d" % i, "bank:%d" % j
        for _ in range(20):
            self.call("WATCH", ka, kb)
            a, b = self.call("GET", ka), self.call("GET", kb)
            x = self.rng.randrange(1, 10)
            self.c.send("MULTI")
            self.c.send("DECRBY", ka, x)
            self.c.send("INCRBY", kb, x)
            self.c.send("EXEC")
            self.ncmd += 4
            r = [self.c.read() for _ in range(4)]
            if r[3] is None:
                continue  # someone else moved first: retry
            if r[:3] != [b"OK", b"QUEUED", b"QUEUED"] or r[3] != [int(a) - x, int(b) + x]:
                self.res.fail("w%d bank transfer: %r (before %r %r)" % (self.wid, r, a, b))
            else:
                self.res.ok()
            return

    def op_queue(self):
        if self.rng.random() < 0.5:
            v = b"q%d:%d" % (self.wid, len(self.pushed))
            if isinstance(self.call("RPUSH", "shared:queue", v), int):
                self.pushed.append(v)
        else:
            r = self.call("BLPOP", "shared:queue", "0.05")
            if isinstance(r, list):
                self.popped.append(r[1])

    def op_publish(self):
        ch = "chan:%d" % self.rng.randrange(self.shared["channels"])
        # One publisher per channel at a time keeps the sequence total.
        with self.shared["publock"][ch]:
            seq = self.shared["pubseq"][ch] = self.shared["pubseq"][ch] + 1
            got = self.call("PUBLISH", ch, "%d" % seq)
        if not isinstance(got, int):
            self.res.fail("w%d PUBLISH: %r" % (self.wid, got))

    # ---- main loop ----------------------------------------------------------------------

    def run(self):
        ops = [(self.op_string, 20), (self.op_hash, 12), (self.op_list, 12), (self.op_set, 10),
               (self.op_zset, 10), (self.op_expire, 6), (self.op_multi, 6), (self.op_shared_counter, 8),
               (self.op_bank, 5), (self.op_queue, 6), (self.op_publish, 5), (self.op_dump, 4)]
        table = [f for f, w in ops for _ in range(w)]
        try:
            self.c = open_conn(self.port, self.wid)
            while time.time() < self.deadline:
                self.rng.choice(table)()
                # Forget short-TTL keys once they are surely gone.
                if self.expiring and self.rng.random() < 0.05:
                    now = time.time()
                    for key, t in list(self.expiring.items()):
                        if t + 0.5 < now:
                            del self.expiring[key]
                            self.model.pop(key, None)
                            self.expect(self.call("EXISTS", key), 0, "EXISTS after TTL " + key)
        except Exception as e:  # noqa: BLE001 -- any failure is a soak failure
            self.res.fail("w%d crashed: %r" % (self.wid, e))
        finally:
            self.res.count(self.ncmd)
            try:
                self.c.close()
            except Exception:  # noqa: BLE001
                pass


def zset_flat(z):
    out = []
    for m, s in sorted(z.items(), key=lambda kv: (kv[1], kv[0])):
        out += [m, str(s).encode()]
    return out


# ---------------------------------------------------------- subscriber --


class Subscriber(threading.Thread):
    def __init__(self, sid, port, channels, res):
        super().__init__(daemon=True)
        self.sid, self.port, self.channels, self.res = sid, port, channels, res
        self.last = {ch: 0 for ch in channels}
        self.received = 0
        self.ready = threading.Event()
        self.stop = False

    def run(self):
        try:
            c = open_conn(self.port, self.sid, timeout=1)
            c.send("SUBSCRIBE", *self.channels)
            for _ in self.channels:
                c.read()
            self.ready.set()
            while not self.stop:
                try:
                    m = c.read()
                except socket.timeout:
                    continue
                if not (isinstance(m, list) and m[0] == b"message"):
                    self.res.fail("sub%d unexpected %r" % (self.sid, m))
                    continue
                ch, seq = m[1].decode(), int(m[2])
                # Publishers number each channel's messages 1, 2, 3...
                if seq != self.last[ch] + 1:
                    self.res.fail("sub%d %s: got %d after %d" % (self.sid, ch, seq, self.last[ch]))
                self.last[ch] = seq
                self.received += 1
            c.close()
        except Exception as e:  # noqa: BLE001
            self.res.fail("sub%d crashed: %r" % (self.sid, e))
            self.ready.set()


# ----------------------------------------------------------------- ACLs --


class AclChurn(threading.Thread):
    """Rewrites the rules of the user the ACL clients run as, lists users
    and clients, and deletes/recreates a throw-away user whose client must
    then be disconnected -- concurrently with the traffic."""

    def __init__(self, port, deadline, res):
        super().__init__(daemon=True)
        self.port, self.deadline, self.res = port, deadline, res
        self.ncmd = 0

    def run(self):
        rules = [["~acl:*", "+@all"], ["~acl:*", "+@read", "+@write", "+@connection"],
                 ["~acl:*", "%R~other:*", "+@all", "-flushall"]]
        try:
            c = Conn(self.port)
            i = 0
            while time.time() < self.deadline:
                i += 1
                r = c.call("ACL", "SETUSER", "soak-acl", "reset", "on", ">pw", *rules[i % len(rules)])
                if r != b"OK":
                    self.res.fail("ACL SETUSER: %r" % r)
                c.call("ACL", "SETUSER", "soak-tmp", "on", ">t", "+@all", "~*")
                victim = Conn(self.port)
                ok = victim.call("AUTH", "soak-tmp", "t") == b"OK" and victim.call("PING") == b"PONG"
                if c.call("ACL", "DELUSER", "soak-tmp") != 1 or not ok:
                    self.res.fail("ACL DELUSER soak-tmp / AUTH failed")
                try:
                    victim.sock.settimeout(5)
                    gone = victim.read()  # nothing comes but the close
                    self.res.fail("a deleted user's client got %r" % (gone,))
                except (ConnectionError, OSError):
                    self.res.ok()
                victim.close()
                listed = c.call("CLIENT", "LIST")
                # (The ACL clients start a moment later and stop at the deadline.)
                if b"user=soak-acl" not in listed and i > 3 and time.time() < self.deadline - 1:
                    self.res.fail("CLIENT LIST shows no soak-acl client: %r" % listed[-600:])
                c.call("ACL", "LIST")
                c.call("ACL", "LOG", "5")
                self.ncmd += 9
                time.sleep(0.02)
            c.close()
        except Exception as e:  # noqa: BLE001
            self.res.fail("acl churn crashed: %r" % e)
        finally:
            self.res.count(self.ncmd)


class AclClient(threading.Thread):
    """Runs as the churned user: its commands stay allowed whatever rules
    the churn applies, so every reply must be a success; a key outside the
    user's patterns must always be refused."""

    def __init__(self, cid, port, deadline, res):
        super().__init__(daemon=True)
        self.cid, self.port, self.deadline, self.res = cid, port, deadline, res
        self.ncmd = 0

    def run(self):
        try:
            c = open_conn(self.port, self.cid)
            for _ in range(100):
                if c.call("AUTH", "soak-acl", "pw") == b"OK":
                    break
                time.sleep(0.05)
            key = "acl:%d" % self.cid
            n = 0
            while time.time() < self.deadline:
                n += 1
                got = c.call("INCR", key)
                if got != n:
                    self.res.fail("acl client %d INCR: %r, expected %d" % (self.cid, got, n))
                    n = got if isinstance(got, int) else n
                got = c.call("SET", "forbidden:%d" % self.cid, "x")
                if not (isinstance(got, Err) and str(got).startswith("NOPERM")):
                    self.res.fail("acl client %d wrote outside its keys: %r" % (self.cid, got))
                self.ncmd += 2
            self.res.ok()
            c.close()
        except Exception as e:  # noqa: BLE001
            self.res.fail("acl client %d crashed: %r" % (self.cid, e))
        finally:
            self.res.count(self.ncmd)


# ------------------------------------------------------------------ main --




class Churner(threading.Thread):
    """Mass deletes while the workers run: rounds of CHURN_KEYS keys loaded
    in pipelines (one in ten with a long TTL), then all but two in fifty
    deleted (one with a TTL, one without). The entry pools' compaction moves the survivors meanwhile (a
    shard's pool that is mostly free bytes is compacted by the cron); at
    the end each survivor has its value, and a TTL where it got one."""

    def __init__(self, port, deadline, res):
        super().__init__(daemon=True)
        self.port, self.deadline, self.res = port, deadline, res
        self.kept = {}  # key -> (value, has a TTL)

    def pipeline(self, c, cmds):
        for i in range(0, len(cmds), 500):
            part = cmds[i:i + 500]
            c.sock.sendall(b"".join(encode(cmd) for cmd in part))
            for cmd in part:
                r = c.read()
                if isinstance(r, Err):
                    self.res.fail("churn: %s -> %s" % (cmd[:2], r.msg))
        self.res.count(len(cmds))

    def run(self):
        try:
            c = Conn(self.port, timeout=120)
            for rnd in range(CHURN_ROUNDS):
                if time.time() > self.deadline - 10:
                    break
                keys = ["churn:%d:%d" % (rnd, i) for i in range(CHURN_KEYS)]
                self.pipeline(c, [("SET", k, "c%d" % i) + (("EX", 100000) if i % 10 == 0 else ())
                                  for i, k in enumerate(keys)])
                gone = [k for i, k in enumerate(keys) if i % 50 > 1]
                self.pipeline(c, [("DEL",) + tuple(gone[i:i + 100]) for i in range(0, len(gone), 100)])
                for i in range(CHURN_KEYS):
                    if i % 50 <= 1:
                        self.kept[keys[i]] = ("c%d" % i, i % 10 == 0)
                time.sleep(2)  # the cron's passes, before the next load fills the free slots
            c.close()
        except Exception as e:  # noqa: BLE001
            self.res.fail("churn: %r" % e)

    def check(self, c):
        bad = []
        for k, (v, ttl) in self.kept.items():
            got, t = c.call("GET", k), c.call("TTL", k)
            if got != v.encode() or (t > 0) != ttl:
                bad.append((k, got, t))
        if bad:
            self.res.fail("churn: %d survivors wrong, first %r" % (len(bad), bad[0]))
        else:
            self.res.ok(len(self.kept))
        return int(c.call("INFO", "stats").decode().split("active_defrag_hits:")[1].split()[0])


def start_server(binary, cores, port, workdir, extra=()):
    errlog = open(os.path.join(workdir, "stderr"), "w")
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir] + list(extra)
    if "redis-server" in os.path.basename(binary):
        argv += ["--daemonize", "no", "--appendonly", "no"]  # validating the soak itself
    else:
        argv += ["--cores", str(cores)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errlog)
    for _ in range(300):
        try:
            c = Conn(port, timeout=2)
            if c.call("PING") == b"PONG":
                c.close()
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("server did not start; see %s" % workdir)


def final_check(port, workers, subs, shared, res, started_expiry):
    c = Conn(port)
    # Own keys against the models.
    for w in workers:
        for key, (typ, val) in w.model.items():
            if key in w.expiring:
                continue
            got_type = c.call("TYPE", key)
            if got_type != typ.encode():
                res.fail("final %s: type %r, model %r" % (key, got_type, typ))
                continue
            if typ == "string":
                got = c.call("GET", key)
            elif typ == "hash":
                r = c.call("HGETALL", key)
                got = dict(zip(r[0::2], r[1::2]))
            elif typ == "list":
                got = c.call("LRANGE", key, 0, -1)
            elif typ == "set":
                got = set(c.call("SMEMBERS", key))
            else:
                got = c.call("ZRANGE", key, 0, -1, "WITHSCORES")
                val = zset_flat(val)
            if got != val:
                res.fail("final %s: %r, model %r" % (key, got, val))
            else:
                res.ok()
    # Every short TTL has run out by now.
    leftover = 0
    for w in workers:
        for key in w.expiring:
            if c.call("EXISTS", key) != 0:
                leftover += 1
    if leftover:
        res.fail("final: %d keys with a short TTL still exist" % leftover)
    # The models hold every key of the workers' spaces (nothing extra).
    cursor, seen = b"0", 0
    while True:
        cursor, keys = c.call("SCAN", cursor, "MATCH", "w*", "COUNT", 1000)
        for key in keys:
            wid = int(key.split(b":")[0][1:])
            if key.decode() not in workers[wid].model:
                res.fail("final: unexpected key %r" % key)
            seen += 1
        if cursor == b"0":
            break
    # Shared counter, bank, queue.
    want = sum(w.incr_total for w in workers)
    got = int(c.call("GET", "shared:counter") or 0)
    res.ok() if got == want else res.fail("shared counter %d, increments %d" % (got, want))
    total = sum(int(c.call("GET", "bank:%d" % i)) for i in range(shared["accounts"]))
    want = shared["accounts"] * 1000
    res.ok() if total == want else res.fail("bank total %d, expected %d" % (total, want))
    rest = c.call("LRANGE", "shared:queue", 0, -1)
    pushed = [v for w in workers for v in w.pushed]
    popped = [v for w in workers for v in w.popped] + rest
    if sorted(pushed) != sorted(popped):
        res.fail("queue: %d pushed, %d popped or left" % (len(pushed), len(popped)))
    else:
        res.ok()
    # Pub/Sub: each subscriber saw every message of its channels.
    for s in subs:
        for ch in s.channels:
            if s.last[ch] != shared["pubseq"][ch]:
                res.fail("sub%d %s: last %d of %d" % (s.sid, ch, s.last[ch], shared["pubseq"][ch]))
            else:
                res.ok()
    info = c.call("INFO", "stats").decode()
    c.close()
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="build-release/goblin-core")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--clients", type=int, default=120, help="command workers (plus subscribers)")
    ap.add_argument("--subscribers", type=int, default=8)
    ap.add_argument("--duration", type=float, default=150)
    ap.add_argument("--port", type=int, default=0, help="use a running server instead")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--tls-fraction", type=float, default=0,
                    help="this fraction of the clients over TLS (a server the soak starts)")
    a = ap.parse_args()

    workdir = tempfile.mkdtemp(prefix="goblin-soak-")
    proc = None
    port = a.port
    if not port:
        port = free_port()
        extra = make_tls(workdir, a.tls_fraction) if a.tls_fraction > 0 else []
        proc = start_server(a.server, a.cores, port, workdir, extra)
    print("soak: %d clients + %d subscribers for %.0f s against %s (port %d, --cores %d), seed %d%s" %
          (a.clients, a.subscribers, a.duration, a.server if proc else "a running server", port, a.cores, a.seed,
           ", one client in %d over TLS (port %d)" % (TLS["every"], TLS["port"]) if TLS else ""))
    sys.stdout.flush()

    res = Results()
    setup = Conn(port)
    setup.call("FLUSHALL")
    shared = {"accounts": 10, "channels": 6}
    for i in range(shared["accounts"]):
        setup.call("SET", "bank:%d" % i, 1000)
    setup.close()
    shared["pubseq"] = {"chan:%d" % i: 0 for i in range(shared["channels"])}
    shared["publock"] = {"chan:%d" % i: threading.Lock() for i in range(shared["channels"])}

    rng = random.Random(a.seed)
    subs = []
    for i in range(a.subscribers):
        chans = rng.sample(sorted(shared["pubseq"]), 3)
        subs.append(Subscriber(i, port, chans, res))
    for s in subs:
        s.start()
    for s in subs:
        s.ready.wait(10)

    start = time.time()
    deadline = start + a.duration
    workers = [Worker(i, port, deadline, res, rng.randrange(1 << 30), shared) for i in range(a.clients)]
    c = Conn(port)
    c.call("ACL", "SETUSER", "soak-acl", "on", ">pw", "~acl:*", "+@all")
    c.close()
    churner = Churner(port, deadline, res)
    extra = [AclChurn(port, deadline, res), churner] + [AclClient(i, port, deadline, res) for i in range(4)]
    for w in workers + extra:
        w.start()
    while any(w.is_alive() for w in workers + extra):
        time.sleep(1)
        if proc and proc.poll() is not None:
            res.fail("server exited during the soak (status %s)" % proc.returncode)
            break
    elapsed = time.time() - start
    # Let subscribers drain, short TTLs run out.
    time.sleep(SHORT_TTL_MS[1] / 1000.0 + 1.0)
    for s in subs:
        s.stop = True
    for s in subs:
        s.join(5)

    info = ""
    if not proc or proc.poll() is None:
        try:
            info = final_check(port, workers, subs, shared, res, start)
            c = Conn(port)
            moved = churner.check(c)
            c.close()
            print("soak: %d churn survivors checked, %d entries moved by the compaction" % (len(churner.kept), moved))
        except Exception as e:  # noqa: BLE001
            res.fail("final check failed: %r" % e)

    if proc:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            res.fail("server did not stop on SIGTERM")
        with open(os.path.join(workdir, "stderr")) as f:
            err = f.read()
        reports = [l for l in err.splitlines()
                   if "ERROR: AddressSanitizer" in l or "ERROR: LeakSanitizer" in l or
                   "WARNING: ThreadSanitizer" in l or "runtime error:" in l]
        if reports:
            res.fail("sanitizer reports (%d), first: %s" % (len(reports), reports[0]))
            print("server stderr kept in %s" % workdir)

    received = sum(s.received for s in subs)
    print("soak: %d commands from %d clients in %.1f s (%.0f/s); %d Pub/Sub messages delivered; %d checks" %
          (res.commands, a.clients, elapsed, res.commands / max(elapsed, 0.001), received, res.checks))
    for line in info.splitlines():
        if line.startswith(("expired_keys:", "evicted_keys:", "total_connections_received:")):
            print("soak: server %s" % line.strip())
    for f in res.failures[:30]:
        print("FAIL: %s" % f)
    if proc and not res.failures:
        shutil.rmtree(workdir, ignore_errors=True)
    print("soak: %d passed, %d failed" % (res.checks, len(res.failures)))
    sys.exit(1 if res.failures else 0)


if __name__ == "__main__":
    main()
