"""Server launcher, test runner and small helpers of the persistence and
digest tests (and of benchmarks/persist_bench.py). Standard library only;
the RESP client is tests/helpers/resp.py (its error replies are Err values,
not raised).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "helpers"))
from resp import Conn, Err, free_port  # noqa: E402,F401 -- Err and free_port are for the importers




def goblin_binary():
    return os.environ.get("GOBLIN", os.path.join(ROOT, "build-release", "goblin-core"))


REDIS = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")


class Server:
    """A goblin-core or redis-server process in its own directory; args may
    begin with a config file."""

    def __init__(self, kind, d, args=(), env=None, wait=True):
        self.kind, self.dir = kind, d
        os.makedirs(d, exist_ok=True)
        args = list(args)
        # An explicit --port (a restart on the same port) replaces the free one.
        self.port = int(args[args.index("--port") + 1]) if "--port" in args else free_port()
        # Beside the directory, not in it: tests mount filesystems on it.
        self.log = "%s.%s.log" % (d.rstrip("/"), kind)
        binary = goblin_binary() if kind == "goblin" else REDIS
        # A first argument that is no option is a config file, as for the servers.
        conf = [args.pop(0)] if args and not args[0].startswith("--") else []
        argv = [binary] + conf + ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", d]
        if kind == "redis":
            argv += ["--save", "", "--appendonly", "no", "--enable-debug-command", "yes"]
        else:
            argv += ["--enable-debug-command", "yes"]
            if "--save" not in args:
                argv += ["--save", ""]
        argv += list(args)
        e = dict(os.environ)
        if env:
            e.update(env)
        self.logf = open(self.log, "ab")
        self.p = subprocess.Popen(argv, stdout=self.logf, stderr=subprocess.STDOUT, env=e, cwd=d)
        self.c = None
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=30.0, allow_loading=False):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.p.poll() is not None:
                raise RuntimeError("%s exited with %s:\n%s" % (self.kind, self.p.returncode, self.log_tail()))
            try:
                c = Conn(self.port, timeout=60.0)
                r = c.call("PING")
                if r == b"PONG" or (allow_loading and isinstance(r, Err) and r.msg.startswith("LOADING")):
                    self.c = c
                    return
                c.close()
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("%s not ready:\n%s" % (self.kind, self.log_tail()))

    def client(self):
        return Conn(self.port, timeout=60.0)

    def log_tail(self, n=20):
        try:
            with open(self.log, "rb") as f:
                return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")
        except OSError:
            return ""

    def log_text(self):
        with open(self.log, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def alive(self):
        return self.p.poll() is None

    def stop(self, sig=signal.SIGKILL, timeout=10.0):
        if self.c:
            self.c.close()
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.logf.close()
        return self.p.returncode

    def shutdown(self, *args):
        try:
            r = self.c.call("SHUTDOWN", *args)
        except (ConnectionError, OSError):
            r = None
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            pass
        if isinstance(r, Err):
            return r
        self.logf.close()
        return self.p.returncode


def info(c, section="persistence"):
    txt = c.ok("INFO", section).decode()
    out = {}
    for line in txt.split("\r\n"):
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


def wait_for(cond, timeout=10.0, step=0.02):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


class Skip(Exception):
    """Raised by a test that cannot run here: counted and printed as [skip]."""


def mount_tmpfs(d, opts):
    """A tmpfs on d (a full disk to order); Skip without root."""
    if os.geteuid() != 0:
        raise Skip("needs root for mount -t tmpfs")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", d], stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise Skip("mount failed: %s" % r.stderr.decode().strip())


def umount(d):
    subprocess.run(["umount", "-l", d], stderr=subprocess.DEVNULL)


CHECK_AOF = "/usr/bin/redis-check-aof"


def check_aof(d, manifest="appendonlydir/appendonly.aof.manifest"):
    """redis-check-aof accepts the AOF directory under d."""
    r = subprocess.run([CHECK_AOF, os.path.join(d, manifest)], capture_output=True)
    assert r.returncode == 0 and b"All AOF files and manifest are valid" in r.stdout, r.stdout + r.stderr


class Suite:
    """The tests of one script and their runner.

    @suite.test registers a function (run in registration order);
    suite.tdir(name) is a fresh directory under tmp; suite.start(kind, d,
    ...) starts a Server that is stopped after the test, its log then
    searched for sanitizer reports (each a failure). main(sel) runs the
    tests whose names contain one of the strings in sel (all when empty),
    removes tmp unless something failed or keep is set, and ends with the
    line "<name>: N passed, M failed"; it returns the exit code.
    """

    def __init__(self, name, tmp, verbose=False):
        self.name, self.tmp, self.verbose = name, tmp, verbose
        self.tests, self.servers = [], []

    def test(self, fn):
        self.tests.append(fn)
        return fn

    def tdir(self, name):
        d = os.path.join(self.tmp, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def start(self, kind, d, *args, env=None, wait=True):
        s = Server(kind, d, args, env=env, wait=wait)
        self.servers.append(s)
        return s

    def _stop_servers(self):
        """Stop this test's servers; their sanitizer report lines."""
        reports = []
        for s in self.servers:
            try:
                s.stop()
            except Exception:  # noqa: BLE001
                pass
            try:
                text = s.log_text()
            except OSError:
                text = ""
            for line in text.splitlines():
                if re.search(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error: |ThreadSanitizer", line):
                    reports.append("%s: %s" % (s.log, line[:300]))
        self.servers.clear()
        return reports

    def main(self, sel=(), keep=False):
        os.makedirs(self.tmp, exist_ok=True)
        passed = failed = skipped = 0
        for fn in self.tests:
            if sel and not any(s in fn.__name__ for s in sel):
                continue
            t0 = time.time()
            try:
                fn()
                passed += 1
                print("[ok] %s (%.1fs)" % (fn.__name__, time.time() - t0), flush=True)
            except Skip as e:
                skipped += 1
                print("[skip] %s: %s" % (fn.__name__, e), flush=True)
            except Exception as e:  # noqa: BLE001
                failed += 1
                print("[FAIL] %s: %s" % (fn.__name__, e), flush=True)
                if self.verbose:
                    traceback.print_exc()
                for s in self.servers:
                    if s.alive() or self.verbose:
                        print("    --- %s log tail:\n%s" % (s.kind, s.log_tail(8)))
            finally:
                reports = self._stop_servers()
                if reports:
                    failed += 1
                    print("[FAIL] %s: sanitizer report(s):\n    %s" % (fn.__name__, "\n    ".join(reports[:10])),
                          flush=True)
        if failed == 0 and not keep:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print("(files kept in %s)" % self.tmp)
        print("%s: %d passed, %d failed%s" % (self.name, passed, failed, ", %d skipped" % skipped if skipped else ""))
        return 1 if failed else 0
