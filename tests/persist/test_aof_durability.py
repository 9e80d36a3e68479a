#!/usr/bin/env python3
"""Durability of the append-only file under load and under failures:

  * kill -9 under load with appendfsync always: every acknowledged write
    (INCR values, RPUSH elements, SET values, MULTI/EXEC blocks) is there
    after a restart, nothing beyond the one write in flight per client is,
    a transaction is all or nothing, and a value another client read is
    not lost either;
  * the same with appendfsync everysec: at most about the last two seconds
    of acknowledged writes are lost;
  * a full disk (the AOF directory is a small tmpfs): writes are refused
    with MISCONF while the AOF cannot be written, reads go on, writes
    resume once there is room again, and a restart has every acknowledged
    write and none of the refused ones (DEBUG DIGEST of the live server
    equals the restarted one's); with appendfsync always, a write that was
    acknowledged while the disk was full survives a kill -9;
  * an I/O error (EIO injected with strace into the AOF writer thread's
    write and fdatasync calls; skipped without strace or ptrace): the same
    refusal and recovery, and with appendfsync always a failed fdatasync
    does not leave the server refusing writes for good;
  * an fdatasync stalled for 2 s (strace) while the same keys are
    overwritten: the AOF buffers grow but do not count against maxmemory,
    so allkeys-lru evicts nothing;
  * BGREWRITEAOF three times while clients write: the live digest and
    expiry times equal those of a restart from the files, which
    redis-check-aof accepts and redis-server 7.0 loads to the same digest;
    a kill -9 while the rewrite child still writes loses nothing;
  * a TTL of 100 ms removed or extended before it passed (in the incr file
    or in the base) does not lose the key on a restart after the 100 ms,
    and changes made beside a reply (PFCOUNT's cache, PFDEBUG's dense
    conversion, SPOP, INCRBYFLOAT, a script reading TIME) or by commands
    that failed (a BITFIELD whose writes all failed, a PFADD on a corrupt
    sparse HLL) reload to the same values;
  * random mixed load on --cores 2 from the differential tester's command
    generator (every family, MULTI/EXEC, EVAL), plus scripts that write,
    keys with 1-50 ms TTLs, keys with TTLs of hours, and a run under a
    small maxmemory with allkeys-lru: after the clients stop and every
    short TTL has passed, the keys, their absolute expiry times, their
    DEBUG DIGEST-VALUE and DEBUG DIGEST equal those after a restart from
    the AOF (DEBUG DIGEST only says whether a key has a TTL, so the times
    are compared with PEXPIRETIME). The command streams follow --seed
    (default 20261129); the interleaving of the clients does not.

  python3 tests/persist/test_aof_durability.py [--seed N] [-v] [name-substring ...]

The tests that mount a tmpfs need root, those that inject EIO need strace
and ptrace; without them they say so and are skipped. PERSIST_KEEP=1 keeps
the servers' directories and logs. Ends with "aof-durability: N passed, M
failed".
"""
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import CHECK_AOF, ROOT, Err, Skip, Suite, check_aof, info, mount_tmpfs, umount, wait_for  # noqa: E402
from resp import Conn  # noqa: E402  (tests/helpers, put on the path by harness)

sys.path.insert(0, os.path.join(ROOT, "tests", "diff"))
import families  # noqa: E402
import gencore  # noqa: E402
from difftest import build_picker  # noqa: E402

DEFAULT_SEED = 20261129
ARGS = sys.argv[1:]
SEED = DEFAULT_SEED
if "--seed" in ARGS:
    i = ARGS.index("--seed")
    SEED = int(ARGS[i + 1])
    del ARGS[i:i + 2]
VERBOSE = "-v" in ARGS
SEL = [a for a in ARGS if not a.startswith("-")]
TMP = os.path.join(ROOT, "tests", "tmp", "aof-durability.%d" % os.getpid())
SUITE = Suite("aof-durability", TMP, VERBOSE)
test, tdir, start = SUITE.test, SUITE.tdir, SUITE.start
AOFDIR = "appendonlydir"
MANIFEST = os.path.join(AOFDIR, "appendonly.aof.manifest")


def rng_for(name):
    return random.Random("%d/%s" % (SEED, name))


def note(msg):
    if VERBOSE:
        print("    " + msg, flush=True)


def log_from(s, offset):
    """The server's log after byte offset (what one start wrote)."""
    with open(s.log, "rb") as f:
        f.seek(offset)
        return f.read().decode("utf-8", "replace")


def log_size(d):
    try:
        return os.path.getsize("%s.goblin.log" % d.rstrip("/"))
    except OSError:
        return 0


def keyspace(c, values=False, sizes=None):
    """{(db, key): PEXPIRETIME} of every key of every database (with
    values, {(db, key): (PEXPIRETIME, DEBUG DIGEST-VALUE)}); sizes, a list,
    gets each database's DBSIZE. Looking a key up deletes it when its TTL
    has passed (lazy expiry)."""
    out = {}
    for db in range(16):
        c.ok("SELECT", db)
        keys, cur = set(), b"0"
        while True:
            cur, ks = c.ok("SCAN", cur, "COUNT", 1000)
            keys.update(ks)
            if cur == b"0":
                break
        ks = sorted(keys)
        ts = c.pipeline([["PEXPIRETIME", k] for k in ks])
        vs = c.pipeline([["DEBUG", "DIGEST-VALUE", k] for k in ks]) if values else ts
        for k, t, v in zip(ks, ts, vs):
            if t != -2:
                out[(db, k)] = (t, v[0]) if values else t
        if sizes is not None:
            sizes.append(c.ok("DBSIZE"))
    c.ok("SELECT", 0)
    return out


def settle(c, values=False, timeout=5.0):
    """keyspace() once no key whose TTL has passed is left in any database
    (SCAN does not list such a key but DBSIZE and DEBUG DIGEST count it
    until a lookup or the active expiry cycle deletes it)."""
    deadline = time.time() + timeout
    while True:
        sizes = []
        ks = keyspace(c, values, sizes)
        if sum(sizes) == len(ks):
            return ks
        assert time.time() < deadline, "%d keys whose TTL passed still there after %.0f s" % (
            sum(sizes) - len(ks), timeout)
        time.sleep(0.1)


def dumps(c, keys):
    """{(db, key): DUMP payload} of the given keys (to show a difference)."""
    out = {}
    for db in sorted(set(d for d, _ in keys)):
        c.ok("SELECT", db)
        ks = [k for d, k in keys if d == db]
        out.update(((db, k), v) for k, v in zip(ks, c.pipeline([["DUMP", k] for k in ks], check=False)))
    c.ok("SELECT", 0)
    return out


def diff_keyspaces(a, b, limit=8, da=None, db_=None):
    """Lines saying how two keyspace() results differ (with the DUMP
    payloads da and db_ of each side when given)."""
    out = []
    for k in sorted(set(a) | set(b)):
        if a.get(k, "absent") != b.get(k, "absent"):
            line = "db %d key %r: live %s, restarted %s" % (k[0], k[1], a.get(k, "absent"), b.get(k, "absent"))
            if da is not None and db_ is not None:
                line += " (DUMP live %r, restarted %r)" % ((da.get(k) or b"")[:120], (db_.get(k) or b"")[:120])
            out.append(line)
    return out[:limit] + (["... %d more" % (len(out) - limit)] if len(out) > limit else [])


# ---- clients that record what was acknowledged ---------------------------------------------------

class Tracked(threading.Thread):
    """One client writing its own keys, one command at a time, keeping
    every acknowledged write with the monotonic time its reply came, and
    the write it sent whose reply had not come (in flight) when the
    server went away:

      t<id>:ctr     INCR                 ctr:  [(value, t)]
      t<id>:list    RPUSH e<seq>         lst:  [(element, t)]
      t<id>:s<n>    SET v<seq>           strs: {key: [(value, t)]}
      t<id>:txc/txl MULTI INCR RPUSH EXEC  tx:  [(element, t)]
    """

    def __init__(self, port, wid):
        super().__init__(daemon=True)
        self.port, self.wid = port, wid
        self.rng = rng_for("tracked/%d" % wid)
        self.stop = threading.Event()
        self.ctr, self.lst, self.tx = [], [], []
        self.strs = {}
        self.inflight = None
        self.errors = []
        self.ops = 0

    def k(self, name):
        return "t%d:%s" % (self.wid, name)

    def bad(self, what, got, want):
        self.errors.append("client %d: %s replied %r, expected %r" % (self.wid, what, got, want))
        raise ConnectionError("unexpected reply")

    def run(self):
        try:
            c = Conn(self.port, timeout=30.0)
        except OSError as e:
            self.errors.append("client %d: connect: %s" % (self.wid, e))
            return
        seq = 0
        try:
            while not self.stop.is_set():
                seq += 1
                r = self.rng.random()
                if r < 0.3:
                    want = len(self.ctr) + 1
                    self.inflight = ("incr", want)
                    got = c.call("INCR", self.k("ctr"))
                    if got != want:
                        self.bad("INCR", got, want)
                    self.ctr.append((got, time.monotonic()))
                elif r < 0.6:
                    e = b"e%d" % seq
                    self.inflight = ("rpush", e)
                    got = c.call("RPUSH", self.k("list"), e)
                    if got != len(self.lst) + 1:
                        self.bad("RPUSH", got, len(self.lst) + 1)
                    self.lst.append((e, time.monotonic()))
                elif r < 0.85:
                    key = self.k("s%d" % self.rng.randrange(8))
                    v = b"v%d" % seq + b"." * self.rng.randrange(200)
                    self.inflight = ("set", key, v)
                    got = c.call("SET", key, v)
                    if got != b"OK":
                        self.bad("SET", got, b"OK")
                    self.strs.setdefault(key, []).append((v, time.monotonic()))
                else:
                    e = b"x%d" % seq
                    self.inflight = ("tx", e)
                    got = c.pipeline([["MULTI"], ["INCR", self.k("txc")], ["RPUSH", self.k("txl"), e], ["EXEC"]],
                                     check=False)
                    want = [b"OK", b"QUEUED", b"QUEUED", [len(self.tx) + 1, len(self.tx) + 1]]
                    if got != want:
                        self.bad("MULTI/EXEC", got, want)
                    self.tx.append((e, time.monotonic()))
                self.inflight = None
                self.ops += 1
        except (OSError, ConnectionError):
            pass  # the server is gone (or a reply was wrong: in errors)
        finally:
            c.close()

    def verify(self, c, cutoff, t_kill):
        """Compare with the restarted server c. Returns (problems, lost):
        problems are states no prefix of this client's writes explains;
        lost are (what, age) of acknowledged writes that are missing, age
        being how long before the kill their reply came; writes
        acknowledged at or before `cutoff` are expected."""
        probs, lost = [], []
        inf = self.inflight or ("none",)

        def seq_check(what, got, hist, extra):
            """got must be hist[:n] (+ the element in flight); the rest lost."""
            allowed = [x for x, _ in hist] + ([extra] if extra is not None else [])
            if allowed[:len(got)] != got:
                probs.append("%s: %r is not a prefix of the %d acknowledged writes (+ %r in flight)"
                             % (what, got[:5], len(hist), extra))
                return
            for x, t in hist[len(got):]:
                lost.append(("%s %r" % (what, x), t_kill - t, t <= cutoff))

        g = c.call("GET", self.k("ctr"))
        n = int(g) if g is not None else 0
        seq_check(self.k("ctr"), list(range(1, n + 1)), self.ctr, inf[1] if inf[0] == "incr" else None)
        seq_check(self.k("list"), c.call("LRANGE", self.k("list"), 0, -1), self.lst,
                  inf[1] if inf[0] == "rpush" else None)
        for key, hist in self.strs.items():
            got = c.call("GET", key)
            vals = [v for v, _ in hist]
            flight = inf[2] if inf[0] == "set" and inf[1] == key else None
            if got is None:
                pos = -1
            elif got == flight:
                pos = len(hist)
            elif got in vals:
                pos = vals.index(got)
            else:
                probs.append("%s = %r: never written" % (key, got[:20]))
                continue
            for v, t in hist[pos + 1:]:
                lost.append(("%s %r" % (key, v[:12]), t_kill - t, t <= cutoff))
        txl = c.call("LRANGE", self.k("txl"), 0, -1)
        txc = c.call("GET", self.k("txc"))
        if int(txc or 0) != len(txl):
            probs.append("%s = %r but %s has %d elements: a transaction half applied"
                         % (self.k("txc"), txc, self.k("txl"), len(txl)))
        seq_check(self.k("txl"), txl, self.tx, inf[1] if inf[0] == "tx" else None)
        return probs, lost


class Observer(threading.Thread):
    """Reads the clients' counters and keeps the highest value seen of
    each: a value a client could read must survive a crash too."""

    def __init__(self, port, writers):
        super().__init__(daemon=True)
        self.port, self.writers = port, writers
        self.rng = rng_for("observer")
        self.seen = {}
        self.stop = threading.Event()

    def run(self):
        try:
            c = Conn(self.port, timeout=30.0)
            while not self.stop.is_set():
                w = self.rng.choice(self.writers)
                v = c.call("GET", w.k("ctr"))
                if v is not None:
                    self.seen[w.wid] = max(self.seen.get(w.wid, 0), int(v))
        except (OSError, ConnectionError):
            pass


def kill_under_load(name, fsync, nclients, window):
    """Clients write, the server is killed with SIGKILL after 2-3 s and
    restarted on its directory; writes acknowledged more than `window`
    seconds before the kill must be there (None: every acknowledged
    write). Returns the restarted server and the log of its start."""
    d = tdir(name)
    args = ("--appendonly", "yes", "--appendfsync", fsync, "--cores", "2")
    g = start("goblin", d, *args)
    ws = [Tracked(g.port, i) for i in range(nclients)]
    obs = Observer(g.port, ws) if window is None else None
    for w in ws:
        w.start()
    if obs:
        obs.start()
    time.sleep(rng_for(name).uniform(2.0, 3.0))
    i = info(g.c)
    assert i["aof_last_write_status"] == "ok", i
    seen_before = dict(obs.seen) if obs else {}
    t_kill = time.monotonic()
    g.stop(signal.SIGKILL)
    for w in ws:
        w.join(30)
    if obs:
        obs.join(30)
    errors = [e for w in ws for e in w.errors]
    assert not errors, errors[:5]
    ops = sum(w.ops for w in ws)
    assert all(w.ops > 0 for w in ws), [w.ops for w in ws]
    at = log_size(d)
    g2 = start("goblin", d, *args)
    started = log_from(g2, at)
    cutoff = t_kill if window is None else t_kill - window
    probs, lost = [], []
    for w in ws:
        p, lo = w.verify(g2.c, cutoff, t_kill)
        probs += p
        lost += lo
    must = [x for x in lost if x[2]]
    worst = max([0.0] + [a for _, a, _ in lost])
    print("    %s: %d clients, %d acknowledged writes, %d lost (acknowledged at most %.3f s before the kill)"
          % (fsync, nclients, ops, len(lost), worst), flush=True)
    assert not probs, probs[:5]
    if window is None:
        assert not lost, "acknowledged writes lost with appendfsync always: %s" % lost[:5]
    else:
        assert not must, "writes acknowledged more than %.1f s before the kill were lost: %s" % (window, must[:5])
    if obs:
        # Values read before the kill: with appendfsync always a client
        # can only have read what is on disk (as Redis, which fsyncs
        # before it sends any reply of an event loop iteration).
        gone = []
        for w in ws:
            v = g2.c.call("GET", w.k("ctr"))
            if int(v or 0) < seen_before.get(w.wid, 0):
                gone.append("%s: read %d, restarted with %r" % (w.k("ctr"), seen_before[w.wid], v))
        assert not gone, "values other clients read were lost: %s" % gone[:5]
    return g2, started


@test
def kill9_always_keeps_every_acknowledged_write():
    g2, started = kill_under_load("kill_always", "always", 32, None)
    assert re.search(r"DB loaded from append only file: [0-9.]+ seconds", started), started[-600:]
    assert "Opening AOF incr file appendonly.aof.1.incr.aof on server start" in started, started[-600:]
    assert info(g2.c)["aof_enabled"] == "1"


@test
def kill9_everysec_loses_at_most_two_seconds():
    g2, started = kill_under_load("kill_everysec", "everysec", 24, 2.5)
    assert re.search(r"DB loaded from append only file: [0-9.]+ seconds", started), started[-600:]


# ---- a full disk ------------------------------------------------------------------------------------

def fill_until_refused(s, acked, refused, prefix, limit=20000):
    """SET prefix<n> (1000 bytes) one at a time through server s's client
    until one is refused; returns that error."""
    for n in range(limit):
        c = s.c
        k = b"%s%d" % (prefix, n)
        try:
            r = c.call("SET", k, b"%d:" % n + b"f" * 1000)
        except (OSError, EOFError, ConnectionError):
            # appendfsync always: a write that could not reach the disk is
            # not acknowledged; its connection is closed instead.
            refused.append(k)
            s.c = s.client()
            continue
        if isinstance(r, Err):
            refused.append(k)
            return r
        assert r == b"OK", r
        acked.append(k)
    raise AssertionError("%d writes of 1 KB into a 2 MB tmpfs and none refused" % limit)


def restart_keeps_what_was_acked(g, d, args, acked, refused):
    """Stop g; its AOF passes redis-check-aof and a restart has g's digest,
    every acknowledged key and no refused one. Returns the new server."""
    want = g.c.ok("DEBUG", "DIGEST")
    g.shutdown("NOSAVE")
    check_aof(d)
    g = start("goblin", d, *args)
    assert g.c.ok("DEBUG", "DIGEST") == want
    assert g.c.ok("DBSIZE") == len(acked)
    got = g.c.pipeline([["EXISTS", k] for k in acked])
    assert all(x == 1 for x in got), [k for k, x in zip(acked, got) if x != 1][:5]
    assert g.c.ok("EXISTS", *refused) == 0
    return g


def enospc_dir(name):
    d = tdir(name)
    ad = os.path.join(d, AOFDIR)
    os.makedirs(ad)
    mount_tmpfs(ad, "size=2m")
    # Room taken by a file of our own, given back later.
    filler = os.path.join(ad, "filler")
    with open(filler, "wb") as f:
        f.write(b"\0" * (1024 * 1024))
    return d, ad, filler


@test
def enospc_refuses_writes_then_resumes():
    d, ad, filler = enospc_dir("enospc")
    try:
        args = ("--appendonly", "yes", "--appendfsync", "everysec", "--cores", "2")
        g = start("goblin", d, *args)
        acked, refused = [], []
        err = fill_until_refused(g, acked, refused, b"full:")
        assert err.msg.startswith("MISCONF Errors writing to the AOF file"), err
        assert "No space left on device" in err.msg, err
        note("%d writes acknowledged before the first refusal" % len(acked))
        assert len(acked) > 100, len(acked)
        # Every write is refused now (a command of another type too), and
        # reads still work.
        for k in (b"other:1", b"other:2"):
            r = g.c.call("SET", k, "x")
            assert isinstance(r, Err) and r.msg == err.msg, r
            refused.append(k)
        r = g.c.call("RPUSH", "other:list", "x")
        assert isinstance(r, Err) and r.msg.startswith("MISCONF"), r
        refused.append(b"other:list")
        i = info(g.c)
        assert i["aof_last_write_status"] == "err", i
        assert g.c.ok("GET", acked[0]).startswith(b"0:")
        assert g.c.ok("DBSIZE") == len(acked)
        assert g.c.ok("EXISTS", *refused) == 0
        assert "Error writing to the AOF file: No space left on device" in g.log_text()
        # Room again: writes resume within a few seconds.
        os.unlink(filler)
        t0 = time.time()
        n = 0
        while True:
            k = b"after:%d" % n
            r = g.c.call("SET", k, "v")
            if r == b"OK":
                acked.append(k)
                break
            assert isinstance(r, Err) and r.msg.startswith("MISCONF"), r
            refused.append(k)
            n += 1
            assert time.time() - t0 < 5, "writes still refused 5 s after the disk has room"
            time.sleep(0.05)
        note("writes resumed %.2f s after the space came back" % (time.time() - t0))
        assert info(g.c)["aof_last_write_status"] == "ok"
        assert "AOF write error looks solved, Redis can write again." in g.log_text()
        for j in range(100):
            k = b"late:%d" % j
            g.c.ok("SET", k, "v%d" % j)
            acked.append(k)
        g = restart_keeps_what_was_acked(g, d, args, acked, refused)
        g.stop()
    finally:
        umount(ad)


@test
def enospc_always_acknowledges_only_durable_writes():
    """appendfsync always: a reply goes out only once its command is on
    disk. Fill the disk, kill -9 while it is still full, give room back:
    every write that got OK is there after a restart."""
    d, ad, filler = enospc_dir("enospc_always")
    try:
        args = ("--appendonly", "yes", "--appendfsync", "always")
        g = start("goblin", d, *args)
        acked, refused = [], []
        err = fill_until_refused(g, acked, refused, b"full:")
        assert err.msg.startswith("MISCONF Errors writing to the AOF file"), err
        g.stop(signal.SIGKILL)
        os.unlink(filler)
        g = start("goblin", d, *args)
        got = g.c.pipeline([["EXISTS", k] for k in acked])
        lost = [k for k, x in zip(acked, got) if x != 1]
        assert not lost, "%d of %d acknowledged writes lost: %s" % (len(lost), len(acked), lost[:5])
        assert g.c.ok("DBSIZE") == len(acked)
        g.stop()
    finally:
        umount(ad)


# ---- I/O errors (strace fault injection) ------------------------------------------------------------

class Inject:
    """strace attached to the AOF writer thread of a server, failing the
    given calls with EIO until stopped (strace then detaches and the
    thread goes on untouched)."""

    def __init__(self, s, spec, logf):
        self.log = logf
        tid = None
        # The thread names itself when it starts: on a busy machine that
        # may be a moment after the server answers.
        deadline = time.time() + 10
        while not tid and time.time() < deadline:
            for t in os.listdir("/proc/%d/task" % s.p.pid):
                with open("/proc/%d/task/%s/comm" % (s.p.pid, t)) as f:
                    if f.read().strip() == "goblin-aof":
                        tid = int(t)
            if not tid:
                time.sleep(0.05)
        assert tid, "no goblin-aof thread"
        self.p = subprocess.Popen(["strace", "-p", str(tid), "-o", logf, "-e", "trace=write,fdatasync",
                                   "-e", "inject=" + spec], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # strace says "Process N attached" on stderr once it is.
        line = self.p.stderr.readline().decode()
        if "attached" not in line:
            self.p.wait(5)
            raise Skip("strace cannot attach: %s" % line.strip())

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            self.p.wait(10)
        with open(self.log) as f:
            return f.read()


def need_strace():
    if not any(os.access(os.path.join(p, "strace"), os.X_OK) for p in os.environ.get("PATH", "").split(":")):
        raise Skip("needs strace to inject EIO")


@test
def eio_write_refuses_writes_then_resumes():
    need_strace()
    d = tdir("eio")
    args = ("--appendonly", "yes", "--appendfsync", "everysec", "--cores", "2")
    g = start("goblin", d, *args)
    acked, refused = [], []
    for n in range(200):
        g.c.ok("SET", b"before:%d" % n, "v")
        acked.append(b"before:%d" % n)
    inj = Inject(g, "write:error=EIO", os.path.join(d, "strace.out"))
    try:
        t0 = time.time()
        err = None
        n = 0
        while err is None:
            k = b"during:%d" % n
            r = g.c.call("SET", k, "v")
            if isinstance(r, Err):
                err = r
                refused.append(k)
            else:
                acked.append(k)
            n += 1
            assert time.time() - t0 < 5, "no write refused 5 s into the I/O errors"
        assert err.msg == "MISCONF Errors writing to the AOF file: Input/output error", err
        assert info(g.c)["aof_last_write_status"] == "err"
        assert g.c.ok("GET", "before:1") == b"v"
        r = g.c.call("INCR", "ctr")
        assert isinstance(r, Err) and r.msg == err.msg, r
        refused.append(b"ctr")
    finally:
        trace = inj.stop()
    assert "EIO (Input/output error) (INJECTED)" in trace, trace[-500:]
    t0 = time.time()
    while g.c.call("SET", "resumed", "1") != b"OK":
        assert time.time() - t0 < 5, "writes still refused 5 s after the I/O errors stopped"
        time.sleep(0.05)
    acked.append(b"resumed")
    assert info(g.c)["aof_last_write_status"] == "ok"
    assert "AOF write error looks solved, Redis can write again." in g.log_text()
    restart_keeps_what_was_acked(g, d, args, acked, refused)


@test
def fsync_eio_always_is_not_acknowledged_and_recovers():
    """appendfsync always, one fdatasync fails with EIO: the write waiting
    for it must not be acknowledged (Redis exits instead), and the server
    must not refuse writes for good once fdatasync works again (either it
    takes writes again or, as Redis, it has exited)."""
    need_strace()
    d = tdir("fsync_eio")
    args = ("--appendonly", "yes", "--appendfsync", "always")
    g = start("goblin", d, *args)
    g.c.ok("SET", "before", "v")
    inj = Inject(g, "fdatasync:error=EIO:when=1", os.path.join(d, "strace.out"))
    problems = []
    try:
        try:
            r = g.c.call("SET", "victim", "v")
        except (OSError, ConnectionError):
            r = None  # the server exited: nothing was acknowledged
        if r == b"OK":
            problems.append("SET whose fdatasync failed was acknowledged with +OK")
    finally:
        trace = inj.stop()
    assert "fdatasync(" in trace and "(INJECTED)" in trace, trace[-500:]
    if g.alive():
        try:
            c = g.client()
            t0 = time.time()
            while True:
                r = c.call("SET", "after", "v")
                if r == b"OK":
                    break
                if time.time() - t0 > 5:
                    problems.append("writes still refused (%s) 5 s after fdatasync works again" % r)
                    break
                time.sleep(0.1)
        except (OSError, ConnectionError):
            pass
    assert not problems, problems


@test
def slow_fsync_does_not_evict_keys():
    """With maxmemory and allkeys-lru, writes that do not grow the dataset
    (the same keys overwritten) while an fdatasync takes 2 s (delay
    injected with strace) pile up in the AOF buffers: those do not count
    against maxmemory (as in Redis), so no key is evicted."""
    need_strace()
    d = tdir("slow_fsync")
    g = start("goblin", d, "--appendonly", "yes", "--appendfsync", "everysec")
    keys = ["k%d" % i for i in range(1000)]
    rng = rng_for("slow_fsync")
    g.c.pipeline([["SET", k, rng.randbytes(1000)] for k in keys])
    used = int(info(g.c, "memory")["used_memory"])
    g.c.ok("CONFIG", "SET", "maxmemory", used + 2 * 1024 * 1024)
    g.c.ok("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    inj = Inject(g, "fdatasync:delay_enter=2000000", os.path.join(d, "strace.out"))
    try:
        # A second after the last fsync, the next write is followed by
        # one: the writer is then stuck in it for 2 s.
        time.sleep(1.1)
        g.c.ok("SET", "start", "1")
        time.sleep(0.1)
        peak, errs = 0, []
        for r in range(8):  # 8 MB of commands, the dataset stays 1 MB
            rs = g.c.pipeline([["SET", k, rng.randbytes(1000)] for k in keys], check=False)
            errs += [x for x in rs if isinstance(x, Err)]
            peak = max(peak, int(info(g.c)["aof_buffer_length"]))
    finally:
        inj.stop()
    s = info(g.c, "stats")
    note("AOF pending bytes up to %d, %s keys evicted, %d writes refused" % (peak, s["evicted_keys"], len(errs)))
    assert peak > 2 * 1024 * 1024, "the AOF buffer never grew past 2 MB (%d): the test did not stall fdatasync" % peak
    assert not errs, "%d writes refused: %s" % (len(errs), errs[0])
    assert s["evicted_keys"] == "0" and g.c.ok("DBSIZE") == 1001, (s["evicted_keys"], g.c.ok("DBSIZE"))


# ---- rewrites under load ----------------------------------------------------------------------------

class Mixed(threading.Thread):
    """Writes strings, counters, lists, hashes, sets, sorted sets,
    deletes and expiries of hours, in pipelined batches, until stopped."""

    def __init__(self, port, wid):
        super().__init__(daemon=True)
        self.port, self.wid = port, wid
        self.rng = rng_for("mixed/%d" % wid)
        self.stop = threading.Event()
        self.error = None
        self.cmds = 0

    def cmd(self):
        r, rng = self.rng.random(), self.rng
        own = "m%d:%d" % (self.wid, rng.randrange(50))
        shared = "shared:%d" % rng.randrange(30)
        k = own if rng.random() < 0.7 else shared
        v = b"%d" % rng.randrange(10 ** 6)
        if r < 0.15:
            return ["SET", k + ":s", v * rng.randrange(1, 40)]
        if r < 0.25:
            return ["INCRBY", k + ":n", rng.randrange(-5, 100)]
        if r < 0.35:
            return ["RPUSH", k + ":l", v, v + b"x"]
        if r < 0.4:
            return ["LPOP", k + ":l"]
        if r < 0.5:
            return ["HSET", k + ":h", "f%d" % rng.randrange(20), v]
        if r < 0.6:
            return ["SADD", k + ":set", v[:2]]
        if r < 0.7:
            return ["ZADD", k + ":z", rng.randrange(1000) / 7.0, v[:3]]
        if r < 0.75:
            return ["ZINCRBY", k + ":z", 1.5, v[:3]]
        if r < 0.8:
            return ["DEL", k + rng.choice([":s", ":n", ":l", ":h", ":set", ":z"])]
        if r < 0.9:
            return ["EXPIRE", k + rng.choice([":s", ":l", ":h"]), rng.randrange(3600, 86400)]
        if r < 0.95:
            return ["APPEND", k + ":s", v]
        return ["INCRBYFLOAT", k + ":f", "%.3f" % (rng.random() * 10)]

    def run(self):
        try:
            c = Conn(self.port, timeout=30.0)
            while not self.stop.is_set():
                batch = [self.cmd() for _ in range(self.rng.randrange(1, 30))]
                c.pipeline(batch, check=False)
                self.cmds += len(batch)
            c.close()
        except Exception as e:  # noqa: BLE001
            self.error = "%s: %s" % (type(e).__name__, e)


def rewrite_done(c, n):
    i = info(c)
    return i["aof_rewrite_in_progress"] == "0" and i["aof_rewrite_scheduled"] == "0" and int(i["aof_rewrites"]) >= n


@test
def rewrites_under_load_reload_to_the_same_dataset():
    d = tdir("rewrite")
    args = ("--appendonly", "yes", "--cores", "2")
    g = start("goblin", d, *args)
    # Enough data that the child takes a while and clients write meanwhile.
    g.c.ok("DEBUG", "POPULATE", 200000, "pop", 20)
    ws = [Mixed(g.port, i) for i in range(6)]
    for w in ws:
        w.start()
    for n in range(1, 4):
        time.sleep(0.3)
        before = sum(w.cmds for w in ws)
        r = g.c.call("BGREWRITEAOF")
        assert r == b"Background append only file rewriting started", r
        assert wait_for(lambda: rewrite_done(g.c, n), 30), info(g.c)
        i = info(g.c)
        assert i["aof_last_bgrewrite_status"] == "ok" and i["aof_last_write_status"] == "ok", i
        note("rewrite %d: %d commands from clients while it ran" % (n, sum(w.cmds for w in ws) - before))
    time.sleep(0.3)
    for w in ws:
        w.stop.set()
    for w in ws:
        w.join(30)
    assert not [w.error for w in ws if w.error], [w.error for w in ws if w.error]
    ks = keyspace(g.c)
    want = g.c.ok("DEBUG", "DIGEST")
    g.shutdown("NOSAVE")
    files = sorted(os.listdir(os.path.join(d, AOFDIR)))
    assert files == ["appendonly.aof.4.base.rdb", "appendonly.aof.4.incr.aof", "appendonly.aof.manifest"], files
    check_aof(d)
    g = start("goblin", d, *args)
    assert g.c.ok("DEBUG", "DIGEST") == want
    assert keyspace(g.c) == ks, diff_keyspaces(ks, keyspace(g.c))
    g.shutdown("NOSAVE")
    r = start("redis", d, "--appendonly", "yes")
    assert r.c.ok("DEBUG", "DIGEST") == want


@test
def kill9_during_rewrite_loses_nothing():
    """kill -9 while the rewrite child still writes the new base (slowed
    down by the saver's test hook) and after clients wrote into the incr
    file opened for it: a restart has everything."""
    d = tdir("rewrite_kill")
    args = ("--appendonly", "yes", "--cores", "2")
    # The child writes 2 KB every 8 ms: about 250 KB/s, so the rewrite of
    # these 2 MB lasts several seconds even when the checks below run
    # slowly on a loaded machine.
    g = start("goblin", d, *args, env={"GOBLIN_TEST_RDB_SAVE_SLOW_US": "8000"})
    for b in range(40):
        g.c.ok("MSET", *[x for i in range(1000) for x in ("base:%d:%d" % (b, i), "v%d" % i * 5)])
    ws = [Mixed(g.port, i) for i in range(4)]
    for w in ws:
        w.start()
    time.sleep(0.3)
    assert g.c.call("BGREWRITEAOF") == b"Background append only file rewriting started"
    time.sleep(0.3)
    for w in ws:
        w.stop.set()
    for w in ws:
        w.join(30)
    assert not [w.error for w in ws if w.error], [w.error for w in ws if w.error]
    # Everything is in the file (the page cache survives a kill -9).
    assert wait_for(lambda: info(g.c)["aof_buffer_length"] == "0", 5)
    want = g.c.ok("DEBUG", "DIGEST")
    ks = keyspace(g.c)
    i = info(g.c)
    assert i["aof_rewrite_in_progress"] == "1", "the rewrite ended before the kill: %s" % i
    g.stop(signal.SIGKILL)
    at = log_size(d)
    g = start("goblin", d, *args)
    assert g.c.ok("DEBUG", "DIGEST") == want
    assert keyspace(g.c) == ks, diff_keyspaces(ks, keyspace(g.c))
    # Two incr files: the one of before the rewrite and the one it opened.
    assert "Opening AOF incr file appendonly.aof.2.incr.aof on server start" in log_from(g, at)
    # A rewrite after the restart starts from the files as they are.
    assert g.c.call("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_for(lambda: rewrite_done(g.c, 1), 30)
    assert info(g.c)["aof_last_bgrewrite_status"] == "ok"
    assert g.c.ok("DEBUG", "DIGEST") == want
    g.shutdown("NOSAVE")
    check_aof(d)


# ---- TTLs and propagation edge cases ----------------------------------------------------------------

@test
def ttl_changed_before_it_passed_survives_restart():
    """A key given a TTL of 100 ms whose TTL is then removed or extended
    must not be lost by a restart after the 100 ms, whether the short TTL
    is in the incr file or in the base (Redis expires nothing while it
    loads the AOF)."""
    d = tdir("ttl_changed")
    args = ("--appendonly", "yes")
    g = start("goblin", d, *args)
    c = g.c
    t0 = time.time()
    c.ok("SET", "in_base", "v", "PX", 1500)
    assert c.ok("BGREWRITEAOF")
    assert wait_for(lambda: rewrite_done(c, 1), 10)
    assert c.ok("PERSIST", "in_base") == 1, "the rewrite took longer than the 1.5 s TTL"
    c.ok("SET", "persisted", "v", "PX", 100)
    c.ok("PERSIST", "persisted")
    c.ok("SET", "extended", "v", "PX", 100)
    c.ok("PEXPIRE", "extended", 30)
    c.ok("EXPIRE", "extended", 3600)
    c.ok("SET", "getex", "v", "PX", 100)
    c.ok("GETEX", "getex", "PERSIST")
    c.ok("RPUSH", "list", "a")
    c.ok("PEXPIRE", "list", 100)
    c.ok("RPUSH", "list", "b")
    c.ok("PERSIST", "list")
    c.ok("SET", "gone", "v", "PX", 100)
    time.sleep(max(0.3, 1.7 - (time.time() - t0)))
    ks = settle(c, values=True)
    assert sorted(k for _, k in ks) == [b"extended", b"getex", b"in_base", b"list", b"persisted"], ks
    want = c.ok("DEBUG", "DIGEST")
    g.shutdown("NOSAVE")
    g = start("goblin", d, *args)
    got = settle(g.c, values=True)
    assert got == ks, diff_keyspaces(ks, got)
    assert g.c.ok("DEBUG", "DIGEST") == want
    g.shutdown("NOSAVE")
    # redis-server 7.0 keeps them too.
    r = start("redis", d, "--appendonly", "yes")
    got = settle(r.c, values=True)
    assert got == ks, diff_keyspaces(ks, got)


@test
def changes_made_by_reads_and_failed_writes_reload():
    """Commands that change a value beside their reply, or that fail and
    still change it (Redis 7.0 leaves those changes out of the AOF): the
    restarted dataset is the live one."""
    d = tdir("odd_changes")
    args = ("--appendonly", "yes")
    g = start("goblin", d, *args)
    c = g.c
    c.ok("PFADD", "h1", "a", "b", "c")
    c.ok("PFCOUNT", "h1")  # writes the cached cardinality back
    c.ok("PFADD", "h2", "a", "b", "c")
    c.ok("PFDEBUG", "GETREG", "h2")  # converts to dense
    c.ok("PFADD", "h3", "a", "b", "c")
    assert c.ok("PFDEBUG", "TODENSE", "h3") == 1
    # Every write fails on OVERFLOW FAIL but the string is created or grown.
    assert c.ok("BITFIELD", "bf1", "OVERFLOW", "FAIL", "INCRBY", "u2", 312, 100) == [None]
    c.ok("SET", "bf2", "")
    assert c.ok("BITFIELD", "bf2", "OVERFLOW", "FAIL", "SET", "u1", 63, 2) == [None]
    # A sparse HLL whose opcodes cover 8147 registers, not 16384: PFADD
    # sets the registers it reaches, then fails with INVALIDOBJ.
    c.ok("SET", "bad_hll", b"HYLL\x01\x00\x00\x00\xff7\xdb\x8d8\xe5\xa1\x7f\xf5\xf3\x9e\xff_\xce")
    r = c.call("PFADD", "bad_hll", *["e%d" % i for i in range(20)])
    assert isinstance(r, Err) and r.msg.startswith("INVALIDOBJ"), r
    c.ok("SADD", "s", *range(50))
    c.ok("SPOP", "s", 7)
    c.ok("INCRBYFLOAT", "f", "1.1")
    c.ok("EVAL", "local t = redis.call('time') return redis.call('set', KEYS[1], t[1] .. t[2])", 1, "t")
    ks = settle(c, values=True)
    assert c.ok("STRLEN", "bf1") == 40 and c.ok("STRLEN", "bf2") == 8
    want = c.ok("DEBUG", "DIGEST")
    g.shutdown("NOSAVE")
    g = start("goblin", d, *args)
    got = settle(g.c, values=True)
    assert got == ks, diff_keyspaces(ks, got)
    assert g.c.ok("DEBUG", "DIGEST") == want


@test
def writes_beside_transactions_and_scans_keep_their_order():
    """The stream's order is the order the changes were applied in, also
    for a command that takes its locks itself: transactions on one worker
    and another worker's pushes to the same list, SCANs that delete keys
    whose TTL passed while another client sets those keys again. Live and
    restarted from the AOF, the list and the keys are the same."""
    d = tdir("order")
    args = ("--appendonly", "yes", "--appendfsync", "no", "--cores", "2")
    g = start("goblin", d, *args)
    stop = threading.Event()
    errors = []

    def run(fn):
        def body():
            try:
                fn(Conn(g.port))
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))
                stop.set()
        return threading.Thread(target=body, daemon=True)

    def transactions(c):
        # A long transaction: its records are many, the window after
        # it lets the keyspace go is wide.
        for i in range(60):
            cmds = []
            for j in range(5):
                cmds += [["MULTI"], ["RPUSH", "L", "a%d.%d" % (i, j)]]
                cmds += [["SET", "pad%d" % q, i] for q in range(150)]
                cmds.append(["EXEC"])
            c.pipeline(cmds)

    def pushes(tag):
        def fn(c):
            n = 0
            while not stop.is_set():
                c.pipeline([["RPUSH", "L", "%s%d" % (tag, n + j)] for j in range(50)])
                n += 50
        return fn

    # Round r: keys s<r>:<k> with a 1 ms TTL, then SCANs, which delete
    # them; meanwhile another client sets keys of the round for good. No
    # one writes a key of an earlier round again, so a DEL recorded after
    # the SET it was applied before would leave the key out of the AOF.
    rnd = [0]

    def scans(c):
        for r in range(60):
            c.pipeline([["SET", "s%d:%d" % (r, k), "v", "PX", 1] for k in range(200)])
            rnd[0] = r
            time.sleep(0.003)
            cur = b"0"
            while True:
                cur, _ = c.ok("SCAN", cur, "MATCH", "s%d:*" % r, "COUNT", 1000)
                if cur == b"0":
                    break
        rnd[0] = -1

    def resets(c):
        rng = random.Random(SEED)
        while not stop.is_set() and rnd[0] >= 0:
            r = rnd[0]
            c.pipeline([["SET", "s%d:%d" % (r, rng.randrange(200)), "w"] for _ in range(10)])

    ts = [run(transactions), run(pushes("b")), run(pushes("c")), run(scans), run(resets)]
    for t in ts:
        t.start()
    ts[0].join(120)
    ts[3].join(120)
    stop.set()
    for t in ts:
        t.join(60)
    assert not errors, errors
    time.sleep(0.05)  # every 1 ms TTL is over
    ks = settle(g.c, values=True)
    live = g.c.ok("LRANGE", "L", 0, -1)
    want = g.c.ok("DEBUG", "DIGEST")
    assert g.shutdown("NOSAVE") == 0
    g = start("goblin", d, *args)
    got = g.c.ok("LRANGE", "L", 0, -1)
    ks2 = keyspace(g.c, values=True)
    bad = []
    if got != live:
        at = next(i for i in range(len(live) + 1) if i >= len(live) or i >= len(got) or live[i] != got[i])
        bad.append("the list differs at element %d of %d: live %r, restarted %r"
                   % (at, len(live), live[at:at + 4], got[at:at + 4]))
    ks.pop((0, b"L"), None)
    ks2.pop((0, b"L"), None)
    if ks2 != ks:
        bad.append("keys differ: %s" % diff_keyspaces(ks, ks2))
    assert not bad, bad
    assert g.c.ok("DEBUG", "DIGEST") == want
    note("%d list elements, %d keys" % (len(live), len(ks)))


# ---- random mixed load ------------------------------------------------------------------------------

ALL_FAMILIES = families.load_all()
PICKERS = [build_picker(ALL_FAMILIES, m) for m in ALL_FAMILIES.values()]
# Positional index of the timeout of blocking commands (from the end for
# the ones whose timeout is the last argument).
BLOCKING = {b"BLPOP": -1, b"BRPOP": -1, b"BLMOVE": -1, b"BRPOPLPUSH": -1, b"BZPOPMIN": -1, b"BZPOPMAX": -1,
            b"BLMPOP": 1, b"BZMPOP": 1}

WRITE_SCRIPTS = [
    # Not deterministic: only the effects can be propagated.
    b"local t = redis.call('time') redis.call('set', KEYS[1], t[1] .. '.' .. t[2]) return 1",
    b"local m = redis.call('srandmember', KEYS[1]) if m then redis.call('rpush', KEYS[2], m) end return m",
    b"local m = redis.call('spop', KEYS[1]) if m then redis.call('sadd', KEYS[2], m) end return m",
    # Relative times written by a script.
    b"redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2]) return redis.call('pttl', KEYS[1])",
    b"redis.call('incrbyfloat', KEYS[1], '1.5') return redis.call('expire', KEYS[1], ARGV[2])",
    b"redis.call('hincrbyfloat', KEYS[1], 'f', '0.25') return redis.call('pexpire', KEYS[1], ARGV[2])",
    b"redis.call('sadd', KEYS[1], ARGV[1], ARGV[2]) return redis.call('scard', KEYS[1])",
]


class Random(threading.Thread):
    """Pipelines batches of the differential generator's commands (a
    family at random for each), with short and long TTLs, writing scripts
    and, with fill, big strings that push memory over maxmemory."""

    def __init__(self, port, run, wid, fill):
        super().__init__(daemon=True)
        self.port, self.wid, self.fill = port, wid, fill
        self.rng = rng_for("random/%s/%d" % (run, wid))
        self.ctx = gencore.Ctx(self.rng, int(time.time()))
        self.stop = threading.Event()
        self.error = None
        self.cmds = 0
        self.n = 0

    def key(self):
        return self.rng.choice(gencore.KEYS + [b"ttl:%d" % self.rng.randrange(50), b"long:%d" % self.rng.randrange(50)])

    def extra(self):
        """Commands of this test's own: TTLs, scripts, fillers."""
        rng, ctx = self.rng, self.ctx
        r = rng.random()
        if r < 0.3:  # 1-50 ms TTLs: some expire actively, some lazily
            ms = rng.randint(1, 50)
            k = self.key()
            return rng.choice([
                [b"PEXPIRE", k, ms],
                [b"SET", b"ttl:%d" % rng.randrange(50), ctx.small_val(), b"PX", ms],
                [b"PSETEX", b"ttl:%d" % rng.randrange(50), ms, ctx.small_val()],
                [b"GETEX", k, b"PX", ms],
                [b"EVAL", WRITE_SCRIPTS[3], 1, b"ttl:%d" % rng.randrange(50), ctx.small_val(), ms],
            ])
        if r < 0.55:  # hours: propagated as absolute times
            s = rng.randint(3600, 86400)
            k = self.key()
            return rng.choice([
                [b"EXPIRE", k, s],
                [b"SET", b"long:%d" % rng.randrange(50), ctx.small_val(), b"EX", s],
                [b"SETEX", b"long:%d" % rng.randrange(50), s, ctx.small_val()],
                [b"PEXPIREAT", k, int(time.time() * 1000) + s * 1000],
                [b"GETEX", k, b"EX", s],
                [b"EXPIRE", k, s, rng.choice([b"NX", b"XX", b"GT", b"LT"])],
                [b"EVAL", WRITE_SCRIPTS[4], 1, b"long:%d" % rng.randrange(50), b"x", s],
                [b"EVAL", WRITE_SCRIPTS[5], 1, b"long:h%d" % rng.randrange(10), b"x", s * 1000],
            ])
        if r < 0.8:
            i = rng.choice([0, 1, 2, 6])
            return [b"EVAL", WRITE_SCRIPTS[i], 2, self.key(), self.key(), ctx.small_val(), ctx.small_val()]
        return [b"MULTI", b"SET", b"ttl:%d" % rng.randrange(50), ctx.small_val(), b"PX", rng.randint(1, 50)]

    def commands(self):
        rng = self.rng
        if self.fill and rng.random() < 0.5:
            self.n += 1
            k = b"fill:%d:%d" % (self.wid, self.n)
            v = rng.randbytes(rng.randrange(1000, 3000))
            if rng.random() < 0.2:
                return [[b"SET", k, v, b"PX", rng.randint(1, 50)]]
            return [[b"SET", k, v]]
        if rng.random() < 0.15:
            x = self.extra()
            if x[0] == b"MULTI":  # a transaction with a short TTL inside
                return [[b"MULTI"], x[1:], [b"INCR", self.key()], [b"PEXPIRE", self.key(), rng.randint(1, 50)],
                        [b"EXEC"]]
            return [x]
        item = rng.choice(PICKERS).pick(rng)(self.ctx)
        if isinstance(item, gencore.Cmd):
            if item.raw is None and item.scan is None and rng.random() < 0.02:
                item = self.ctx.mutate(item)
            item = [item]
        out = []
        for cmd in item:
            if cmd.raw is not None:
                out.append(cmd.raw)
                continue
            a = list(cmd.args)
            name = a[0].upper()
            # The HLL representation follows hll-sparse-max-bytes at the
            # time of PFADD; a restart replays PFADD under the default.
            if name == b"CONFIG" and b"hll" in b"".join(a).lower():
                continue
            # SORT ... BY <pattern> STORE: elements whose BY values tie keep
            # the source's order, and a set's order is not the same after a
            # restart (nor in Redis), so the stored list may differ.
            # Nor a numeric SORT ... STORE: redis-server 7.0 does not reset
            # errno before its strtod, so after any command of another
            # family left ERANGE behind (a double that overflows), a
            # redis-server replica refuses the SORT that the primary ran
            # ("One or more scores can't be converted into double") and
            # its copy of the destination differs.
            if name == b"SORT" and len(a) > 2:
                up = [x.upper() for x in a]
                if b"STORE" in up and any(up[j] == b"BY" and b"*" in a[j + 1] for j in range(len(a) - 1)):
                    continue
                if b"STORE" in up and b"ALPHA" not in up:
                    continue
            # Under maxmemory the data must outgrow the limit: no flushes.
            if self.fill and name in (b"FLUSHALL", b"FLUSHDB"):
                continue
            # Nothing blocks for ever: another client may have taken the
            # element a stream pushed for itself.
            if name in BLOCKING and len(a) > 2:
                i = BLOCKING[name]
                if a[i] == b"0":
                    a[i] = b"0.2"
            out.append(a)
        return out

    def run(self):
        from resp import encode
        try:
            c = Conn(self.port, timeout=30.0)
            while not self.stop.is_set():
                cmds = []
                while len(cmds) < 40:
                    cmds += self.commands()
                c.sock.sendall(b"".join(x if isinstance(x, bytes) else encode(x) for x in cmds))
                for _ in cmds:
                    c.read()
                self.cmds += len(cmds)
            c.close()
        except Exception as e:  # noqa: BLE001
            self.error = "%s: %s" % (type(e).__name__, e)


def random_load(name, extra_args, fill, seconds):
    d = tdir(name)
    args = ("--appendonly", "yes", "--appendfsync", "everysec", "--cores", "2")
    g = start("goblin", d, *(args + extra_args))
    ws = [Random(g.port, name, i, fill) for i in range(6)]
    for w in ws:
        w.start()
    time.sleep(seconds)
    for w in ws:
        w.stop.set()
    for w in ws:
        w.join(60)
    errs = [w.error for w in ws if w.error or w.is_alive()]
    assert not errs, errs
    stats = info(g.c, "stats")
    # From here on nothing may change the data but what the AOF records.
    g.c.ok("CONFIG", "SET", "maxmemory", "0")
    # Eviction may have taken every key with a TTL: a few more, in the
    # forms the load uses, so that the restart has expiry times to keep.
    for j in range(4):
        g.c.ok("SET", "end:%d" % j, "v", "EX", 3600 + j)
        g.c.ok("HSET", "end:h%d" % j, "f", "v")
        g.c.ok("PEXPIREAT", "end:h%d" % j, int(time.time() * 1000) + 7200000 + j)
    time.sleep(0.1)  # every 1-50 ms TTL is over
    ks = settle(g.c, values=True)
    want = g.c.ok("DEBUG", "DIGEST")
    live = dumps(g.c, list(ks))
    i = info(g.c)
    assert i["aof_last_write_status"] == "ok", i
    print("    %s: %d commands, %d keys left, %s keys expired, %s evicted (used_memory_peak %s)"
          % (name, sum(w.cmds for w in ws), len(ks), stats["expired_keys"], stats["evicted_keys"],
             info(g.c, "memory")["used_memory_peak"]), flush=True)
    assert int(stats["expired_keys"]) > 0, stats
    assert g.shutdown("NOSAVE") == 0
    check_aof(d)
    g = start("goblin", d, *args)
    ks2 = keyspace(g.c, values=True)
    if ks2 != ks:
        bad = [k for k in set(ks) | set(ks2) if ks.get(k) != ks2.get(k)]
        raise AssertionError("keys, expiry times or values differ after the restart: %s"
                             % diff_keyspaces(ks, ks2, da=live, db_=dumps(g.c, bad)))
    assert g.c.ok("DEBUG", "DIGEST") == want, "DEBUG DIGEST differs after the restart"
    assert any(t > 0 for t, _ in ks.values()), "no key with a TTL left"
    return stats


@test
def random_load_reloads_to_the_same_dataset():
    random_load("random", (), False, 5.0)


@test
def random_load_with_evictions_reloads_to_the_same_dataset():
    # Besides the data, this load keeps 3-4 MB of client buffers and
    # allocator caches, and now and then a reply buffer of 8 MB (which
    # counts, as in Redis): 24 MB leaves room for keys to stay.
    stats = random_load("random_evict", ("--maxmemory", "24mb", "--maxmemory-policy", "allkeys-lru"), True, 5.0)
    assert int(stats["evicted_keys"]) > 0, stats


def main():
    print("aof-durability: seed %d" % SEED, flush=True)
    if not os.path.exists(CHECK_AOF):
        print("aof-durability: %s not found" % CHECK_AOF)
    return SUITE.main(SEL, keep=bool(os.environ.get("PERSIST_KEEP")))


if __name__ == "__main__":
    sys.exit(main())
