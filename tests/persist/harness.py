"""Server launcher and small helpers of the persistence tests (and of
benchmarks/persist_bench.py). Standard library only; the RESP client is
tests/helpers/resp.py (its error replies are Err values, not raised).
"""
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "helpers"))
from resp import Conn, Err, free_port  # noqa: E402,F401 -- Err and free_port are for the importers




def goblin_binary():
    return os.environ.get("GOBLIN", os.path.join(ROOT, "build-release", "goblin-core"))


REDIS = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")


class Server:
    """A goblin-core or redis-server process in its own directory."""

    def __init__(self, kind, d, args=(), env=None, wait=True):
        self.kind, self.dir = kind, d
        os.makedirs(d, exist_ok=True)
        self.port = free_port()
        # Beside the directory, not in it: tests mount filesystems on it.
        self.log = "%s.%s.log" % (d.rstrip("/"), kind)
        binary = goblin_binary() if kind == "goblin" else REDIS
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", d]
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
