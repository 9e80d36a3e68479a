"""Tiny RESP2 client and server launcher for the persistence tests.

Standard library only. Replies: bytes (bulk/simple), int, list, None,
or an Err instance (an error reply is returned, not raised, so tests can
assert on it).
"""
import os
import signal
import socket
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Err(Exception):
    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg

    def __repr__(self):
        return "Err(%r)" % self.msg


def _enc(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a).encode()
        elif isinstance(a, float):
            a = repr(a).encode()
        elif isinstance(a, str):
            a = a.encode("utf-8", "surrogateescape")
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Client:
    def __init__(self, port, timeout=60.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass

    def _fill(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise ConnectionError("connection closed")
        self.buf += d

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                l, self.buf = self.buf[:i], self.buf[i + 2:]
                return l
            self._fill()

    def _read(self):
        l = self._line()
        t, rest = l[:1], l[1:]
        if t == b"+":
            return rest
        if t == b"-":
            return Err(rest.decode("utf-8", "replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if t == b"*":
            n = int(rest)
            if n < 0:
                return None
            return [self._read() for _ in range(n)]
        raise ValueError("bad reply %r" % l)

    def call(self, *args):
        self.s.sendall(_enc(args))
        return self._read()

    def ok(self, *args):
        r = self.call(*args)
        if isinstance(r, Err):
            raise AssertionError("%s -> %s" % (args[:3], r.msg))
        return r

    def pipeline(self, cmds, check=True):
        out = []
        for i in range(0, len(cmds), 1000):
            chunk = cmds[i:i + 1000]
            self.s.sendall(b"".join(_enc(c) for c in chunk))
            for c in chunk:
                r = self._read()
                if check and isinstance(r, Err):
                    raise AssertionError("%s -> %s" % (c[:3], r.msg))
                out.append(r)
        return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


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
                c = Client(self.port)
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
        return Client(self.port)

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
