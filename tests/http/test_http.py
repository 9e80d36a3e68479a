#!/usr/bin/python3
"""The HTTP/1.1 cache front-end (--http-port) and its origin fill (--mirror).

  /usr/bin/python3 tests/http/test_http.py [-v] [name-substring ...]

Starts goblin-core (GOBLIN=path, default build-release/goblin-core) on free
ports it picks, talks to it with raw sockets, curl and redis-py, and runs a
small origin server of its own (counts requests; can be slow, reset the
connection or answer errors). Ends with "http: N passed, M failed".
"""
import hashlib
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "helpers"))
from resp import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOBLIN = os.environ.get("GOBLIN", os.path.join(ROOT, "build-release", "goblin-core"))
TMP = os.path.join(ROOT, "tests", "tmp", "http.%d" % os.getpid())
VERBOSE = "-v" in sys.argv
FILTERS = [a for a in sys.argv[1:] if not a.startswith("-")]


class Server:
    def __init__(self, name, *args):
        self.dir = os.path.join(TMP, name)
        os.makedirs(self.dir, exist_ok=True)
        self.port = free_port()
        self.hport = free_port()
        self.log = open(os.path.join(self.dir, "log.txt"), "wb")
        cmd = [GOBLIN, "--port", str(self.port), "--http-port", str(self.hport), "--save", "", "--dir", self.dir,
               "--cores", "1"] + list(args)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.hport), timeout=1).close()
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("goblin did not start: %s" % open(os.path.join(self.dir, "log.txt")).read())
                time.sleep(0.05)
        self.r = redis.Redis(port=self.port, socket_timeout=10)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def alive(self):
        return self.proc.poll() is None and self.r.ping()

    def info_http(self):
        return {k: v for k, v in self.r.info("goblin").items() if k.startswith("http_")}

    def ssd_streams(self):
        return self.r.info("all")["objstore_ssd"]["streams"]


def conn(srv, timeout=10):
    s = socket.create_connection(("127.0.0.1", srv.hport), timeout=timeout)
    return s


class Reader:
    """Reads HTTP responses off a socket."""

    def __init__(self, s):
        self.s = s
        self.buf = b""

    def fill(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def response(self, head=False):
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        h, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = h.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hdrs = {}
        for ln in lines[1:]:
            k, v = ln.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
        n = int(hdrs.get("content-length", "0"))
        if head or status in (204, 304):
            n = 0
        while len(self.buf) < n:
            self.fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, hdrs, body

    def closed(self):
        try:
            self.s.settimeout(5)
            return self.s.recv(1) == b""
        except (ConnectionResetError, socket.timeout):
            return False


def req(method, path, headers=(), body=None, version="1.1"):
    lines = ["%s %s HTTP/%s" % (method, path, version), "Host: test"]
    lines += ["%s: %s" % h for h in headers]
    if body is not None:
        lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def leave_mid_body(srv, path, n):
    """GET path, read up to n bytes of the answer, and reset the connection."""
    s = conn(srv)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(req("GET", path))
    s.recv(n)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()


def fetch(srv, method, path, headers=(), body=None, version="1.1"):
    s = conn(srv)
    s.sendall(req(method, path, headers, body, version))
    r = Reader(s).response(head=method == "HEAD")
    s.close()
    return r


# ---- The origin -------------------------------------------------------------

class Origin:
    def __init__(self):
        self.counts = {}
        self.peers = set()
        self.lock = threading.Lock()
        origin = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                p = self.path
                with origin.lock:
                    origin.counts[p] = origin.counts.get(p, 0) + 1
                    origin.peers.add(self.client_address)
                name = p.rsplit("/", 1)[-1]
                if name.startswith("slow"):
                    time.sleep(3)
                if name.startswith("delay"):
                    time.sleep(0.7)
                if name.startswith("reset"):
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    self.connection.close()
                    self.close_connection = True
                    return
                if "missing" in name:
                    return self.send(404, b"no such object\n")
                if name.startswith("err"):
                    return self.send(500, b"origin broke\n")
                if "chunked" in name:
                    body = origin.body(p)
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for i in range(0, len(body), 100):
                        part = body[i:i + 100]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if "huge" in name:
                    return self.send(200, b"H" * (16 << 20))
                if "big" in name:
                    return self.send(200, b"B" * (3 << 20))
                if name.startswith("mib"):
                    return self.send(200, origin.mib(p))
                return self.send(200, origin.body(p))

            def send(self, code, body):
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Quiet(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # the reset and timed-out requests end this way

        self.srv = Quiet(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    @staticmethod
    def body(path):
        return (("origin object %s\n" % path) * 50).encode()

    @staticmethod
    def mib(path):
        """1 MiB that differs from one path to another (it comes in many
        pieces)."""
        return hashlib.sha256(path.encode()).digest() * (1 << 15)

    def count(self, path):
        with self.lock:
            return self.counts.get(path, 0)

    def stop(self):
        self.srv.shutdown()


# ---- Tests ------------------------------------------------------------------

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


S = {}  # servers shared by the tests


def plain():
    if "plain" not in S:
        S["plain"] = Server("plain", "--http-admin", "yes")
    return S["plain"]


def ssd():
    if "ssd" not in S:
        d = os.path.join(TMP, "ssd-pool")
        os.makedirs(d, exist_ok=True)
        S["ssd"] = Server("ssd", "--ram-head", "16K", "--io-chunk", "16K", "--write-io-chunk", "64K", "--ssd-dir", d,
                          "--http-admin", "yes")
    return S["ssd"]


MODE = ["socket"]  # the origin client the mirror tests run with (--mirror-client)


def sfx():
    return "" if MODE[0] == "socket" else "-" + MODE[0]


def mirror():
    m, o = "mirror" + sfx(), "origin" + sfx()
    if m not in S:
        S[o] = Origin()
        S[m] = Server(m, "--mirror", "http://127.0.0.1:%d/pfx" % S[o].port, "--mirror-timeout", "1000",
                      "--proto-max-bulk-len", "2mb", "--mirror-client", MODE[0])
    return S[m], S[o]


def mirror_ssd():
    """A mirror whose objects past 16 KiB have their tails on the SSD,
    written in 64 KiB chunks (a 1 MiB object is 16 of them)."""
    m, o = "mirror-ssd" + sfx(), "origin-ssd" + sfx()
    if m not in S:
        S[o] = Origin()
        d = os.path.join(TMP, m + "-pool")
        os.makedirs(d, exist_ok=True)
        S[m] = Server(m, "--mirror", "http://127.0.0.1:%d/pfx" % S[o].port, "--mirror-timeout", "1000",
                      "--proto-max-bulk-len", "32mb", "--mirror-client", MODE[0], "--ram-head", "16K",
                      "--io-chunk", "16K", "--write-io-chunk", "64K", "--ssd-dir", d,
                      "--enable-debug-command", "yes")
    return S[m], S[o]


def eq(a, b, what=""):
    assert a == b, "%s: %r != %r" % (what, a, b)


@test
def get_hit_headers():
    g = plain()
    g.r.set("k1", b"hello\r\nworld\x00\xff")
    st, h, body = fetch(g, "GET", "/k1")
    eq(st, 200, "status")
    eq(body, b"hello\r\nworld\x00\xff", "body")
    eq(h["content-length"], "14")
    assert h["etag"].startswith('"') and len(h["etag"]) == 18, h
    assert h["date"].endswith("GMT"), h


@test
def head_has_no_body():
    g = plain()
    g.r.set("k2", b"x" * 1000)
    s = conn(g)
    rd = Reader(s)
    s.sendall(req("HEAD", "/k2") + req("GET", "/k2"))
    st, h, body = rd.response(head=True)
    eq((st, h["content-length"], body), (200, "1000", b""))
    st, h, body = rd.response()
    eq((st, len(body)), (200, 1000))


@test
def keepalive_sequential():
    g = plain()
    g.r.set("ka", b"v")
    s = conn(g)
    rd = Reader(s)
    for i in range(5):
        s.sendall(req("GET", "/ka"))
        eq(rd.response()[2], b"v")


@test
def pipelining_in_order():
    g = plain()
    keys = ["p%d" % i for i in range(20)]
    for k in keys:
        g.r.set(k, ("value of %s" % k).encode() * 10)
    s = conn(g)
    rd = Reader(s)
    s.sendall(b"".join(req("GET", "/" + k) for k in keys) + req("GET", "/p-missing"))
    for k in keys:
        st, h, body = rd.response()
        eq((st, body), (200, ("value of %s" % k).encode() * 10))
    eq(rd.response()[0], 404)


@test
def connection_close_and_http10():
    g = plain()
    g.r.set("cc", b"abc")
    s = conn(g)
    s.sendall(req("GET", "/cc", headers=[("Connection", "close")]))
    rd = Reader(s)
    st, h, body = rd.response()
    eq((st, body, h.get("connection")), (200, b"abc", "close"))
    assert rd.closed(), "not closed after Connection: close"
    s = conn(g)
    s.sendall(req("GET", "/cc", version="1.0"))
    rd = Reader(s)
    eq(rd.response()[2], b"abc")
    assert rd.closed(), "HTTP/1.0 without keep-alive not closed"
    s = conn(g)
    s.sendall(req("GET", "/cc", headers=[("Connection", "keep-alive")], version="1.0") * 2)
    rd = Reader(s)
    st, h, body = rd.response()
    eq(h.get("connection", "").lower(), "keep-alive")
    eq(rd.response()[2], b"abc")


@test
def ranges():
    g = plain()
    g.r.set("rg", b"0123456789")
    for hdr, st, body, cr in [("bytes=2-4", 206, b"234", "bytes 2-4/10"), ("bytes=7-", 206, b"789", "bytes 7-9/10"),
                              ("bytes=-3", 206, b"789", "bytes 7-9/10"), ("bytes=5-100", 206, b"56789", "bytes 5-9/10"),
                              ("bytes=10-", 416, b"", "bytes */10"), ("bytes=-0", 416, b"", "bytes */10")]:
        s, h, b = fetch(g, "GET", "/rg", headers=[("Range", hdr)])
        eq((s, b, h.get("content-range")), (st, body, cr), hdr)
    # Several ranges or another unit: the whole value.
    s, h, b = fetch(g, "GET", "/rg", headers=[("Range", "bytes=0-1,3-4")])
    eq((s, b), (200, b"0123456789"))


@test
def etag_and_304():
    g = plain()
    g.r.set("et", b"first")
    st, h, _ = fetch(g, "GET", "/et")
    tag = h["etag"]
    st, h2, body = fetch(g, "GET", "/et", headers=[("If-None-Match", tag)])
    eq((st, body, h2["etag"]), (304, b"", tag))
    st, _, _ = fetch(g, "GET", "/et", headers=[("If-None-Match", '"nope", W/%s' % tag)])
    eq(st, 304)
    g.r.set("et", b"second")
    st, h3, body = fetch(g, "GET", "/et", headers=[("If-None-Match", tag)])
    eq((st, body), (200, b"second"))
    assert h3["etag"] != tag


@test
def etag_follows_every_write():
    # The ETag is kept after a value's first GET: every way of writing the
    # key gives the new value's ETag on the next GET.
    if "etag" not in S:
        mport = free_port()
        S["etag"] = Server("etag", "--http-admin", "yes", "--memcache-port", str(mport))
        S["etag"].mport = mport
    g = S["etag"]
    r = g.r

    def mc_set(key, val):
        m = socket.create_connection(("127.0.0.1", g.mport), timeout=10)
        m.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key.encode(), len(val), val))
        eq(m.recv(100), b"STORED\r\n", "memcache set")
        m.close()

    def check(key, what):
        st, h, body = fetch(g, "GET", "/" + key)
        eq(st, 200, what)
        # The kept ETag is the one the same bytes get hashed afresh.
        ref = "ref-%d" % random.randrange(1 << 30)
        r.set(ref, body)
        eq(h["etag"], fetch(g, "GET", "/" + ref)[1]["etag"], what)
        st2, h2, _ = fetch(g, "GET", "/" + key, headers=[("If-None-Match", h["etag"])])
        eq((st2, h2["etag"]), (304, h["etag"]), what)
        return h["etag"]

    r.set("ew", b"v1")
    t = check("ew", "set")
    steps = [("append", lambda: r.append("ew", b"+")), ("setrange", lambda: r.setrange("ew", 0, b"X")),
             ("incr", lambda: (r.set("ew", 5), check("ew", "int"), r.incr("ew"))),
             ("set same length", lambda: r.set("ew", b"v9")),
             ("lua", lambda: r.eval("redis.call('set', KEYS[1], 'lua')", 1, "ew")),
             ("multi", lambda: r.pipeline(transaction=True).set("ew", b"tx").execute()),
             ("http put", lambda: eq(fetch(g, "PUT", "/ew", body=b"put")[0], 204)),
             ("memcache set", lambda: mc_set("ew", b"memcached")),
             ("rename", lambda: (r.set("ew2", b"renamed"), r.rename("ew2", "ew"))),
             ("restore", lambda: r.restore("ew", 0, r.dump("ew") and (r.set("ew3", b"restored") and r.dump("ew3")),
                                           replace=True)),
             ("move", lambda: (r.delete("ew"), redis.Redis(port=g.port, db=1).set("ew", b"moved"),
                               redis.Redis(port=g.port, db=1).move("ew", 0))),
             ("swapdb", lambda: (redis.Redis(port=g.port, db=1).set("ew", b"swapped"), r.swapdb(0, 1))),
             ("flushall", lambda: (r.flushall(), r.set("ew", b"flushed")))]
    for what, fn in steps:
        fn()
        t2 = check("ew", what)
        assert t2 != t, what
        t = t2
    eq(fetch(g, "GET", "/ew")[2], b"flushed")


@test
def errors_and_methods():
    g = plain()
    eq(fetch(g, "GET", "/no-such-key")[0], 404)
    eq(fetch(g, "POST", "/x", body=b"1")[0], 405)
    eq(fetch(g, "PROPFIND", "/x")[0], 501)
    eq(fetch(g, "GET", "/bad%zzescape")[0], 400)
    s = conn(g)
    s.sendall(b"GARBAGE\r\n\r\n")
    rd = Reader(s)
    eq(rd.response()[0], 400)
    assert rd.closed(), "not closed after 400"
    g.r.lpush("alist", "a")
    eq(fetch(g, "GET", "/alist")[0], 409)
    assert g.alive()


@test
def put_delete_admin():
    g = plain()
    st, _, _ = fetch(g, "PUT", "/dir/a%20key", body=b"put \x00 body")
    eq(st, 204)
    eq(g.r.get("dir/a key"), b"put \x00 body")
    eq(fetch(g, "GET", "/dir/a%20key")[2], b"put \x00 body")
    eq(fetch(g, "DELETE", "/dir/a%20key")[0], 204)
    eq(g.r.exists("dir/a key"), 0)
    eq(fetch(g, "DELETE", "/dir/a%20key")[0], 404)
    # Through the write path: WATCH sees it.
    p = g.r.pipeline()
    p.watch("w")
    fetch(g, "PUT", "/w", body=b"1")
    p.multi()
    p.set("w", "2")
    try:
        p.execute()
        raise AssertionError("WATCH not dirtied by PUT")
    except redis.WatchError:
        pass
    # curl with a large body (Expect: 100-continue).
    data = os.urandom(300000)
    path = os.path.join(TMP, "putbody")
    open(path, "wb").write(data)
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-T", path,
                          "-H", "Expect: 100-continue", "http://127.0.0.1:%d/curlput" % g.hport],
                         stdout=subprocess.PIPE, timeout=20).stdout
    eq(out, b"204")
    eq(g.r.get("curlput"), data)


@test
def more_edges():
    g = plain()
    g.r.set("star", b"v")
    eq(fetch(g, "GET", "/star", headers=[("If-None-Match", "*")])[0], 304)
    st, h, body = fetch(g, "HEAD", "/no-such")
    eq((st, body), (404, b""))
    g.r.set("", b"empty key")
    eq(fetch(g, "GET", "/")[2], b"empty key")
    g.r.set("q", b"query")
    eq(fetch(g, "GET", "/q?x=1&y=2")[2], b"query")
    eq(fetch(g, "GET", "http://example.com/q")[2], b"query")
    g.r.set("e", b"")
    st, h, body = fetch(g, "GET", "/e")
    eq((st, h["content-length"], body), (200, "0", b""))
    eq(fetch(g, "GET", "/e", headers=[("Range", "bytes=0-")])[0], 416)
    # A body over proto-max-bulk-len: 413, closed.
    s = conn(g)
    s.sendall(b"PUT /huge HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % (600 << 20))
    rd = Reader(s)
    eq(rd.response()[0], 413)
    assert rd.closed()
    assert g.alive()


@test
def put_refused_without_admin():
    g = mirror()[0]
    eq(fetch(g, "PUT", "/x", body=b"1")[0], 405)
    eq(fetch(g, "DELETE", "/x")[0], 405)


@test
def curl_and_cross_protocol():
    g = plain()
    val = os.urandom(5000)
    g.r.set("bin/ary", val)
    out = subprocess.run(["curl", "-s", "http://127.0.0.1:%d/bin%%2Fary" % g.hport], stdout=subprocess.PIPE,
                         timeout=20).stdout
    eq(out, val)
    out = subprocess.run(["curl", "-s", "http://127.0.0.1:%d/bin/ary" % g.hport, "http://127.0.0.1:%d/bin/ary" % g.hport],
                         stdout=subprocess.PIPE, timeout=20).stdout
    eq(out, val + val)
    g.r.set("int", 12345)
    eq(fetch(g, "GET", "/int")[2], b"12345")


@test
def ssd_tail_bodies():
    g = ssd()
    val = os.urandom(1 << 20)
    g.r.set("big", val)
    eq(g.r.get("big"), val, "RESP")
    streams0 = g.ssd_streams()
    s = conn(g)
    rd = Reader(s)
    s.sendall(req("GET", "/big") + req("GET", "/big", headers=[("Range", "bytes=1000-1999")]) +
              req("HEAD", "/big") + req("GET", "/big"))
    st, h, body = rd.response()
    eq((st, len(body)), (200, 1 << 20))
    assert body == val, "streamed body differs"
    st, h, body = rd.response()
    eq((st, body, h["content-range"]), (206, val[1000:2000], "bytes 1000-1999/1048576"))
    st, h, body = rd.response(head=True)
    eq((st, h["content-length"]), (200, "1048576"))
    eq(rd.response()[2], val)
    # Connection: close on a streamed body: closed once it is all out.
    s = conn(g)
    s.sendall(req("GET", "/big", headers=[("Connection", "close")]) + req("GET", "/big"))
    rd = Reader(s)
    st, h, body = rd.response()
    eq((st, h.get("connection")), (200, "close"))
    assert body == val
    assert rd.closed() and rd.buf == b"", "not closed after a streamed Connection: close answer"
    out = subprocess.run(["curl", "-s", "http://127.0.0.1:%d/big" % g.hport], stdout=subprocess.PIPE, timeout=20).stdout
    assert out == val, "curl body differs"
    assert g.ssd_streams() >= streams0 + 3, "HTTP GETs were not streamed from the SSD"


@test
def ssd_tail_etag_when_stored_through_http():
    g = ssd()
    val = os.urandom(200 * 1024)
    eq(fetch(g, "PUT", "/bigput", body=val)[0], 204)
    streams0 = g.ssd_streams()
    st, h, body = fetch(g, "GET", "/bigput")
    eq((st, body), (200, val))
    assert g.ssd_streams() > streams0, "not streamed"
    tag = h.get("etag")
    assert tag, "a value stored through HTTP has an ETag even when streamed"
    st, h2, body = fetch(g, "GET", "/bigput", headers=[("If-None-Match", tag)])
    eq((st, body, h2["etag"]), (304, b"", tag))
    eq(fetch(g, "HEAD", "/bigput")[1]["etag"], tag)
    st, h3, body = fetch(g, "GET", "/bigput", headers=[("Range", "bytes=10-19")])
    eq((st, body, h3["etag"]), (206, val[10:20], tag))
    # The same bytes stored in RAM get the same ETag from a GET.
    g.r.set("small-copy", val[:100])
    eq(fetch(g, "PUT", "/smallput", body=val[:100])[0], 204)
    eq(fetch(g, "GET", "/small-copy")[1]["etag"], fetch(g, "GET", "/smallput")[1]["etag"])
    # Written over RESP: no ETag is known for the streamed value any more.
    val2 = os.urandom(200 * 1024)
    g.r.set("bigput", val2)
    st, h4, body = fetch(g, "GET", "/bigput", headers=[("If-None-Match", tag)])
    eq((st, body, h4.get("etag")), (200, val2, None))
    eq(fetch(g, "PUT", "/bigput", body=val)[0], 204)
    eq(fetch(g, "GET", "/bigput")[1]["etag"], tag)


@test
def client_disconnects_mid_body():
    g = ssd()
    val = os.urandom(1 << 20)
    g.r.set("big2", val)
    for _ in range(5):
        leave_mid_body(g, "/big2", 1000)
    # Another client meanwhile and after: whole bodies.
    st, _, body = fetch(g, "GET", "/big2")
    assert st == 200 and body == val
    assert g.alive()


def direct_bytes(g):
    return g.r.info("goblin")["net_output_direct_bytes"]


@test
def large_bodies_from_the_store():
    # A large body goes to the socket straight from the store: a whole
    # small-object record (the default head) and a RAM head and tail
    # (--ram-head 16K, no SSD), with ranges across the head's end, HEAD,
    # 304, pipelining and a reader that does not read while the key changes.
    if "ramtail" not in S:
        S["ramtail"] = Server("ramtail", "--ram-head", "16K", "--http-admin", "yes")
    for g, n in [(plain(), 150000), (S["ramtail"], 3 << 20)]:
        val = os.urandom(n)
        g.r.set("lb", val)
        d0 = direct_bytes(g)
        st, h, body = fetch(g, "GET", "/lb")
        eq((st, body == val), (200, True), "first GET")
        tag = h["etag"]
        st, h2, body = fetch(g, "GET", "/lb")
        eq((st, body == val, h2["etag"]), (200, True, tag), "second GET, the ETag kept")
        assert direct_bytes(g) - d0 >= n, "not sent from the store: %d" % (direct_bytes(g) - d0)
        st, h, body = fetch(g, "GET", "/lb", headers=[("Range", "bytes=16000-40000")])
        eq((st, body, h["content-range"]), (206, val[16000:40001], "bytes 16000-40000/%d" % n), "range")
        eq(fetch(g, "GET", "/lb", headers=[("If-None-Match", tag)])[0], 304, "304")
        s = conn(g)
        rd = Reader(s)
        s.sendall((req("GET", "/lb") + req("HEAD", "/lb") + req("GET", "/lb", headers=[("Range", "bytes=-5")])) * 6)
        time.sleep(0.3)
        g.r.set("lb", b"changed")
        g.r.delete("lb")
        for i in range(6):
            st, h, body = rd.response()
            eq((st, body == val), (200, True), "pipelined GET %d" % i)
            st, h, body = rd.response(head=True)
            eq((st, h["content-length"], body), (200, str(n), b""), "pipelined HEAD %d" % i)
            st, h, body = rd.response()
            eq((st, body), (206, val[-5:]), "pipelined range %d" % i)
        s.close()
    assert plain().alive() and S["ramtail"].alive()


@test
def mirror_fill_and_cross_protocol():
    g, o = mirror()
    st, h, body = fetch(g, "GET", "/obj1")
    eq((st, body), (200, Origin.body("/pfx/obj1")))
    eq(o.count("/pfx/obj1"), 1)
    time.sleep(0.1)
    st, h, body = fetch(g, "GET", "/obj1")
    eq((st, body), (200, Origin.body("/pfx/obj1")))
    assert "etag" in h, "a hit has an ETag"
    eq(o.count("/pfx/obj1"), 1, "second GET went to the origin")
    eq(g.r.get("obj1"), Origin.body("/pfx/obj1"), "RESP GET of the filled object")
    # HEAD and Range on a miss are answered once the object is in.
    st, h, body = fetch(g, "HEAD", "/obj2")
    eq((st, h["content-length"]), (200, str(len(Origin.body("/pfx/obj2")))))
    st, h, body = fetch(g, "GET", "/obj3", headers=[("Range", "bytes=0-5")])
    eq((st, body), (206, b"origin"))
    # A chunked answer (no length): buffered, then served and stored.
    st, h, body = fetch(g, "GET", "/chunked1")
    eq((st, body), (200, Origin.body("/pfx/chunked1")))
    eq(g.r.get("chunked1"), Origin.body("/pfx/chunked1"))
    # Keys needing escapes reach the origin escaped.
    st, h, body = fetch(g, "GET", "/sp%20ace")
    eq((st, body), (200, Origin.body("/pfx/sp%20ace")))


@test
def mirror_fill_etag_is_the_bytes_hash():
    # An origin fill hashes its body piece by piece as it arrives; the
    # ETag kept is the one the same bytes get when hashed at once.
    g, o = mirror()
    for path, ref in (("/mib1", Origin.mib("/pfx/mib1")), ("/chunked2", Origin.body("/pfx/chunked2"))):
        eq(fetch(g, "GET", path)[2], ref, path)
        time.sleep(0.1)
        st, h, body = fetch(g, "GET", path)
        eq((st, body), (200, ref), path)
        g.r.set("copy" + path, ref)
        eq(h["etag"], fetch(g, "GET", "/copy" + path)[1]["etag"], path)
        eq(o.count("/pfx" + path), 1, path)


def ssd_info(g):
    return g.r.info("all")["objstore_ssd"]


@test
def mirror_tail_written_while_it_arrives():
    # The tail of a filled object is written as its chunks arrive; the
    # SET takes that extent: one tail write per object, no more chunks
    # than the tail needs, and the object then streams from the SSD.
    g, o = mirror_ssd()
    i0 = ssd_info(g)
    ref = Origin.mib("/pfx/mibfill")
    eq(fetch(g, "GET", "/mibfill")[2], ref)
    time.sleep(0.2)
    i1 = ssd_info(g)
    eq((i1["writes"] - i0["writes"], i1["write_errors"] - i0["write_errors"]), (1, 0), "tail writes")
    eq(i1["chunks_used"] - i0["chunks_used"], -(-(len(ref) - 16384) // 65536), "chunks of the tail")
    st, h, body = fetch(g, "GET", "/mibfill")
    eq((st, body), (200, ref))
    assert ssd_info(g)["streams"] > i1["streams"], "the hit was not streamed from the SSD"
    eq(g.r.get("mibfill"), ref, "RESP GET of the filled object")
    eq(o.count("/pfx/mibfill"), 1)
    # An injected write fault: the writer cannot start, the SET writes
    # the tail itself.
    g.r.execute_command("DEBUG", "SSD-FAULT", 1, 0)
    ref2 = Origin.mib("/pfx/mibfault")
    eq(fetch(g, "GET", "/mibfault")[2], ref2)
    time.sleep(0.2)
    i2 = ssd_info(g)
    eq((i2["writes"] - i1["writes"], i2["write_errors"] - i1["write_errors"]), (1, 1), "after a fault")
    eq(fetch(g, "GET", "/mibfault")[2], ref2)
    # Overwritten over RESP: both tails go.
    g.r.set("mibfill", b"x")
    g.r.delete("mibfault")
    eq(ssd_info(g)["chunks_used"], i0["chunks_used"], "chunks after the keys went")


@test
def mirror_tail_writer_left_mid_body():
    # The only client goes while a 16 MiB body is written: the fetch
    # stops, its buffer goes after the writes in flight, and the extent
    # is given back; nothing is stored.
    g, o = mirror_ssd()
    c0 = ssd_info(g)["chunks_used"]
    leave_mid_body(g, "/hugeleave", 2000)
    deadline = time.time() + 5
    while time.time() < deadline and (g.r.exists("hugeleave") or ssd_info(g)["chunks_used"] != c0):
        time.sleep(0.05)
    eq((g.r.exists("hugeleave"), ssd_info(g)["chunks_used"]), (0, c0), "after the client left")
    # A whole fetch of the same object afterwards.
    st, h, body = fetch(g, "GET", "/hugeleave")
    eq((st, len(body), body == b"H" * (16 << 20)), (200, 16 << 20, True))
    assert g.alive()


@test
def mirror_reuses_origin_connections():
    g, o = mirror()
    with o.lock:
        o.peers.clear()
    for i in range(10):
        st, _, body = fetch(g, "GET", "/reuse%d" % i)
        eq((st, body), (200, Origin.body("/pfx/reuse%d" % i)))
    with o.lock:
        n = len(o.peers)
    eq(n, 1, "origin connections for 10 sequential fetches")


@test
def mirror_origin_errors():
    g, o = mirror()
    for path, status in [("/missing1", 404), ("/err1", 500)]:
        for i in range(2):
            st, h, body = fetch(g, "GET", path)
            eq(st, status, path)
        eq(o.count("/pfx" + path), 2, "%s was cached" % path)
        eq(g.r.exists(path[1:]), 0)
    t0 = time.time()
    st, _, _ = fetch(g, "GET", "/slow1")
    eq(st, 504, "slow origin")
    assert time.time() - t0 < 2.5, "timeout took too long"
    eq(g.r.exists("slow1"), 0)
    st, _, _ = fetch(g, "GET", "/reset1")
    eq(st, 502, "origin reset")
    eq(g.r.exists("reset1"), 0)
    # Still serving, and the origin connections recover.
    eq(fetch(g, "GET", "/after-errors")[0], 200)
    info = g.info_http()
    assert info["http_origin_failed"] >= 2, info


@test
def mirror_origin_down():
    if "down" + sfx() not in S:
        S["down" + sfx()] = Server("down" + sfx(), "--mirror", "http://127.0.0.1:%d" % free_port(),
                                   "--mirror-client", MODE[0])
    g = S["down" + sfx()]
    for i in range(3):
        eq(fetch(g, "GET", "/x%d" % i)[0], 502)
    eq(fetch(g, "HEAD", "/x")[0], 502)
    assert g.info_http()["http_origin_failed"] >= 4
    assert g.alive()


@test
def mirror_large_passthrough():
    g, o = mirror()
    # Over the store's limit (proto-max-bulk-len 2mb here): passed through,
    # not stored.
    for i in range(2):
        st, h, body = fetch(g, "GET", "/big1")
        eq((st, len(body)), (200, 3 << 20))
        assert body == b"B" * (3 << 20)
    eq(o.count("/pfx/big1"), 2, "origin fetches")
    eq(g.r.exists("big1"), 0)


@test
def mirror_client_leaves_mid_body():
    g, o = mirror()
    n0 = o.count("/pfx/big-shared")
    socks = [conn(g) for _ in range(4)]
    socks[0].setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    for s in socks:
        s.sendall(req("GET", "/big-shared"))
    # One reads a little of the body and goes; the others get all of it.
    socks[0].recv(2000)
    socks[0].setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    socks[0].close()
    for s in socks[1:]:
        st, h, body = Reader(s).response()
        eq((st, len(body)), (200, 3 << 20))
        assert body == b"B" * (3 << 20)
        s.close()
    assert o.count("/pfx/big-shared") - n0 <= 4
    assert g.alive()


@test
def mirror_slow_reader_back_pressure():
    g, o = mirror()
    s = conn(g, timeout=20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.sendall(req("GET", "/huge1"))
    s.recv(1000, socket.MSG_PEEK)
    time.sleep(0.5)
    # A client's unsent output is its obl plus its omem.
    omem = max(sum(int(f.split("=")[1]) for f in ln.split() if f.startswith(("obl=", "omem=")))
               for ln in g.r.execute_command("CLIENT", "LIST").decode().splitlines())
    if VERBOSE:
        print("slow reader obl", omem)
    assert omem < (4 << 20), "output of a slow reader grew to %d bytes" % omem
    st, h, body = Reader(s).response()
    eq((st, len(body)), (200, 16 << 20))
    assert body == b"H" * (16 << 20)
    s.close()
    assert g.alive()


@test
def mirror_coalesces_500_misses():
    g, o = mirror()
    n = 500
    socks = [conn(g, timeout=20) for _ in range(n)]
    for s in socks:
        s.sendall(req("GET", "/delay-obj"))
    want = Origin.body("/pfx/delay-obj")
    for s in socks:
        st, h, body = Reader(s).response()
        eq((st, body), (200, want))
        s.close()
    eq(o.count("/pfx/delay-obj"), 1, "origin fetches")
    info = g.info_http()
    assert info["http_origin_coalesced"] >= n - 1, info
    eq(g.r.get("delay-obj"), want)


@test
def mirror_full_store():
    """A store at maxmemory: under allkeys-lru origin fills evict older
    objects; under noeviction they are answered but not kept (the next
    request goes to the origin again)."""
    o = S.get("origin" + sfx()) or mirror()[1]
    for policy in ("allkeys-lru", "noeviction"):
        name = "full-%s%s" % (policy, sfx())
        if name not in S:
            S[name] = Server(name, "--mirror", "http://127.0.0.1:%d/pfx" % o.port, "--mirror-client", MODE[0],
                             "--proto-max-bulk-len", "4mb", "--maxmemory", "16mb", "--maxmemory-policy", policy)
        g = S[name]
        paths = ["/big-%s-%d" % (policy, i) for i in range(12)]
        for p in paths:
            s = conn(g, timeout=20)
            s.sendall(req("GET", p))
            st, h, body = Reader(s).response()
            eq((st, len(body)), (200, 3 << 20), p)
            assert body == b"B" * (3 << 20), p
            s.close()
        info = g.r.info()
        assert info["used_memory"] < (24 << 20), info["used_memory"]
        if policy == "allkeys-lru":
            assert info["evicted_keys"] > 0 and 0 < g.r.dbsize() < len(paths), (info["evicted_keys"], g.r.dbsize())
        else:
            assert g.r.dbsize() < len(paths), g.r.dbsize()
            gone = [p for p in paths if not g.r.exists(p[1:])]
            assert gone
            n0 = o.count("/pfx" + gone[0])
            s = conn(g, timeout=20)
            s.sendall(req("GET", gone[0]))
            st, h, body = Reader(s).response()
            eq((st, len(body)), (200, 3 << 20))
            s.close()
            eq(o.count("/pfx" + gone[0]), n0 + 1, "an object not kept is fetched again")
        assert g.alive()


@test
def mirror_coalesces_across_workers():
    if "mirror2" + sfx() not in S:
        o = mirror()[1]
        S["mirror2" + sfx()] = Server("mirror2" + sfx(), "--mirror", "http://127.0.0.1:%d/pfx" % o.port,
                                      "--mirror-timeout", "3000", "--cores", "2", "--mirror-client", MODE[0])
    g, o = S["mirror2" + sfx()], S["origin" + sfx()]
    n = 500
    socks = [conn(g, timeout=20) for _ in range(n)]
    for s in socks:
        s.sendall(req("GET", "/delay-two"))
    want = Origin.body("/pfx/delay-two")
    for s in socks:
        st, h, body = Reader(s).response()
        eq((st, body), (200, want))
        s.close()
    eq(o.count("/pfx/delay-two"), 1, "origin fetches")
    info = g.info_http()
    assert info["http_origin_coalesced"] >= n - 1, info
    # Errors reach the waiters on every worker.
    socks = [conn(g, timeout=20) for _ in range(20)]
    for s in socks:
        s.sendall(req("GET", "/delay-missing"))
    for s in socks:
        eq(Reader(s).response()[0], 404)
        s.close()
    eq(o.count("/pfx/delay-missing"), 1, "origin fetches of the 404")


@test
def mirror_fetches_each_object_once_across_workers():
    """Misses for one key on both workers at the same instant, and misses
    just as its fetch ends: one origin fetch each time."""
    if "mirror2" + sfx() not in S:
        o = mirror()[1]
        S["mirror2" + sfx()] = Server("mirror2" + sfx(), "--mirror", "http://127.0.0.1:%d/pfx" % o.port,
                                      "--mirror-timeout", "3000", "--cores", "2", "--mirror-client", MODE[0])
    g, o = S["mirror2" + sfx()], S["origin" + sfx()]
    socks = [conn(g, timeout=20) for _ in range(16)]
    rds = [Reader(s) for s in socks]
    for i in range(60):
        path = "/race%s-%d" % (sfx(), i)
        data = req("GET", path)
        for s in socks:
            s.sendall(data)
        want = Origin.body("/pfx" + path)
        for rd in rds:
            st, h, body = rd.response()
            eq((st, body), (200, want))
        eq(o.count("/pfx" + path), 1, "origin fetches of " + path)
    for s in socks:
        s.close()


@test
def info_section():
    g = plain()
    fetch(g, "GET", "/k1")
    info = g.info_http()
    for k in ["http_requests", "http_hits", "http_misses", "http_origin_fetches", "http_origin_coalesced",
              "http_origin_failed", "http_bytes_in", "http_bytes_out", "http_first_byte_p99_us"]:
        assert k in info, k
    assert info["http_requests"] > 0 and info["http_hits"] > 0 and info["http_bytes_out"] > 0, info


def with_uring(fn):
    """fn again, its mirror servers using the io_uring origin client."""
    def run():
        MODE[0] = "uring"
        try:
            fn()
        finally:
            MODE[0] = "socket"
    run.__name__ = fn.__name__ + "_uring"
    return run


for _fn in [t for t in TESTS if t.__name__.startswith("mirror_")]:
    TESTS.append(with_uring(_fn))


def uring_fds(srv):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % srv.proc.pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (srv.proc.pid, fd)) == "anon_inode:[io_uring]"
        except OSError:
            pass
    return n


@test
def mirror_client_uring_is_origin_client():
    g, o = mirror()
    eq(g.r.config_get("mirror-client")["mirror-client"], "socket")
    MODE[0] = "uring"
    try:
        g, o = mirror()
    finally:
        MODE[0] = "socket"
    eq(g.r.config_get("mirror-client")["mirror-client"], "uring")
    eq(fetch(g, "GET", "/ring-probe")[0], 200)
    # One ring more than the socket client's server (the worker's origin ring).
    eq(uring_fds(S["mirror-uring"]), uring_fds(S["mirror"]) + 1, "io_uring instances of the uring mirror")
    p = subprocess.run([GOBLIN, "--port", "0", "--mirror-client", "curl"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=10)
    assert p.returncode != 0, p.stdout


@test
def goblin_store_defaults():
    store = os.path.join(os.path.dirname(GOBLIN), "goblin-store")
    assert os.path.exists(store), "make builds goblin-store beside goblin-core"
    d = os.path.join(TMP, "store")
    os.makedirs(os.path.join(d, "ssd"), exist_ok=True)
    o = mirror()[1]
    port, hport = free_port(), free_port()
    # The seed benchmark's command line, scaled down.
    cmd = [store, "--port", str(port), "--save", "", "--dir", d, "--mirror", "http://127.0.0.1:%d/pfx" % o.port,
           "--mirror-client", "uring", "--listen-address", "127.0.0.1", "--http-port", str(hport), "--no-memcache",
           "--net", "async", "--numa", "0", "--cores", "2", "--memory", "64M", "--small-memory", "64M", "--block", "2M",
           "--ram-head", "256K", "--io-chunk", "256K", "--write-io-chunk", "1M", "--no-numa-promotion",
           "--ssd-dir", os.path.join(d, "ssd"), "--memcache-port", str(free_port())]
    with open(os.path.join(d, "log.txt"), "wb") as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 10
            while True:
                try:
                    s = socket.create_connection(("127.0.0.1", hport), timeout=1)
                    break
                except OSError:
                    assert p.poll() is None and time.time() < deadline, open(os.path.join(d, "log.txt")).read()
                    time.sleep(0.05)
            s.sendall(req("GET", "/store-obj"))
            st, h, body = Reader(s).response()
            eq((st, body), (200, Origin.body("/pfx/store-obj")))
            s.close()
            eq(redis.Redis(port=port).config_get("http-port")["http-port"], str(hport))
            eq(redis.Redis(port=port).config_get("net")["net"], "async")
        finally:
            p.terminate()
            p.wait(10)
        assert "network I/O: async" in open(os.path.join(d, "log.txt")).read()
    # Without --http-port, goblin-store listens on 8080 (when it is free;
    # else one is given), and the memcache listener is on unless
    # --no-memcache.
    r = subprocess.run([store, "--port", "0", "--save", "", "--dir", d, "--cores", "1", "--http-port", "0", "--bogus"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    assert r.returncode != 0
    probe = socket.socket()
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind(("127.0.0.1", 8080))
        hp = 8080
    except OSError:
        hp = free_port()
    probe.close()
    port, mport = free_port(), free_port()
    # No --save: a cache has no save points by default (goblin-core has Redis's).
    args = [store, "--port", str(port), "--dir", d, "--cores", "1", "--bind", "127.0.0.1",
            "--memcache-port", str(mport)] + ([] if hp == 8080 else ["--http-port", str(hp)])
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", hp), timeout=1).close()
                break
            except OSError:
                assert p.poll() is None and time.time() < deadline, "goblin-store without --http-port"
                time.sleep(0.05)
        eq(redis.Redis(port=port).config_get("http-port")["http-port"], str(hp))
        eq(redis.Redis(port=port).config_get("save")["save"], "")
        m = socket.create_connection(("127.0.0.1", mport), timeout=5)
        m.sendall(b"version\r\n")
        assert m.recv(100).startswith(b"VERSION "), "goblin-store's memcache listener"
        m.close()
    finally:
        p.terminate()
        p.wait(10)
    eq(plain().r.config_get("http-port")["http-port"], str(plain().hport))
    # --net takes auto, async or epoll; anything else is refused.
    r = subprocess.run([store, "--port", "0", "--net", "uring"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=10)
    assert r.returncode != 0 and b"net" in r.stdout, r.stdout


@test
def net_auto_falls_back_without_io_uring():
    """With io_uring turned off for the machine (kernel.io_uring_disabled=2),
    --net auto serves with epoll and says so; --net async refuses to start."""
    knob = "/proc/sys/kernel/io_uring_disabled"
    if os.geteuid() != 0 or not os.path.exists(knob):
        print("    (skipped: needs root and %s to turn io_uring off)" % knob)
        return
    old = open(knob).read().strip()
    d = os.path.join(TMP, "noring")
    os.makedirs(d, exist_ok=True)
    try:
        with open(knob, "w") as f:
            f.write("2")
        r = subprocess.run([GOBLIN, "--port", str(free_port()), "--net", "async", "--save", "", "--dir", d],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        assert r.returncode != 0 and b"--net async" in r.stdout, r.stdout
        port = free_port()
        with open(os.path.join(d, "log.txt"), "wb") as log:
            p = subprocess.Popen([GOBLIN, "--port", str(port), "--save", "", "--dir", d, "--cores", "2",
                                  "--memcache-port", str(free_port())], stdout=log, stderr=subprocess.STDOUT)
        try:
            c = redis.Redis(port=port)
            deadline = time.time() + 10
            while True:
                try:
                    c.ping()
                    break
                except redis.exceptions.ConnectionError:
                    assert p.poll() is None and time.time() < deadline, open(os.path.join(d, "log.txt")).read()
                    time.sleep(0.05)
            eq(c.config_get("net")["net"], "auto")
            pipe = c.pipeline(transaction=False)
            for i in range(2000):
                pipe.set("k%d" % i, "v%d" % i)
            pipe.execute()
            eq(c.get("k1999"), b"v1999")
        finally:
            p.terminate()
            p.wait(10)
        text = open(os.path.join(d, "log.txt")).read()
        assert "no io_uring for the connections" in text and "network I/O: epoll" in text, text
    finally:
        with open(knob, "w") as f:
            f.write(old)


def main():
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP)
    passed = failed = 0
    try:
        for fn in TESTS:
            if FILTERS and not any(f in fn.__name__ for f in FILTERS):
                continue
            t0 = time.time()
            try:
                fn()
                passed += 1
                print("[ok] %s (%.2fs)" % (fn.__name__, time.time() - t0))
            except Exception as e:  # noqa: BLE001
                failed += 1
                print("[FAIL] %s: %s: %s" % (fn.__name__, type(e).__name__, e))
                if VERBOSE:
                    import traceback
                    traceback.print_exc()
    finally:
        for s in S.values():
            s.stop()
    if not failed and not os.environ.get("HTTP_KEEP"):
        shutil.rmtree(TMP, ignore_errors=True)
    print("http: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
