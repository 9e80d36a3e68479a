#!/usr/bin/env python3
"""TLS as Redis 7.0 configures it, against redis-server 7.0.15 with the
same options.

Certificates are made here with the openssl CLI: a CA, a server
certificate (and a second one, for reloading), a client certificate, an
expired client certificate and one from another CA. Checked: the tls-*
directives' values (CONFIG GET, the same as Redis's), redis-cli --tls and
redis-py with ssl=True (Debian's /usr/bin/python3), tls-auth-clients
yes/optional/no, refused certificates with Redis's log line, plaintext to
the TLS port and TLS to the plaintext port, a silent or half-done
handshake that holds nobody else up, half-closed connections, pipelined
requests that OpenSSL buffers (SSL_pending), large values whose tails
stream from the SSD through SSL_write, CONFIG SET of the certificate
files (new connections get the new certificate; a failed reload keeps the
old one and answers Redis's error), CONFIG SET tls-port, tls-protocols,
and replication over TLS (tls-replication: goblin -> goblin and
redis-server -> goblin). Then the memcache and HTTP front-ends' TLS ports
(memcache-tls-port, http-tls-port; goblin only): memcache text and meta
commands answered as on the plaintext port, a 1 MB value and pipelines;
HTTPS with curl and http.client (GET, HEAD, Range, 304, keep-alive,
PUT/DELETE, pipelining, Connection: close), SSD-tailed values, mirror fill
and a slow reader of a large pass-through; client certificates,
certificate reloads, plaintext to those ports and TLS to the plaintext
ones, start-up refusals.

  python3 tests/tls/test_tls.py [-v] [name-substring ...]

Ends with "tls: N passed, M failed".
"""
import os
import re
import socket
import ssl
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "persist"))
from harness import ROOT, Conn, Err, Suite, free_port, goblin_binary, info, wait_for  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "helpers"))
import tlscerts  # noqa: E402

TMP = os.path.join(ROOT, "tests", "tmp", "tls.%d" % os.getpid())
VERBOSE = "-v" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "-v"]
SUITE = Suite("tls", TMP, VERBOSE)
test, tdir, start = SUITE.test, SUITE.tdir, SUITE.start
CERTS = os.path.join(TMP, "certs")
SYS_PYTHON = "/usr/bin/python3"


def cert(name):
    return os.path.join(CERTS, name)


def make_certs():
    """CA, server, server2 (for reloads), client, expired (client, its
    validity ended yesterday), other (client, signed by another CA)."""
    tlscerts.make(CERTS)


def tls_args(port, *extra):
    return ("--tls-port", str(port), "--tls-cert-file", cert("server.crt"), "--tls-key-file", cert("server.key"),
            "--tls-ca-cert-file", cert("ca.crt")) + extra


def pair(name, *extra, goblin_extra=()):
    """A goblin and a redis-server with the same TLS options (each also on
    a plaintext port, its .c); their TLS ports as .tls."""
    d = tdir(name)
    out = []
    for kind in ("goblin", "redis"):
        port = free_port()
        s = start(kind, os.path.join(d, kind), *tls_args(port, *extra),
                  *(goblin_extra if kind == "goblin" else ()))
        s.tls = port
        out.append(s)
    return out


def one(name, *extra):
    d = tdir(name)
    port = free_port()
    s = start("goblin", d, *tls_args(port, *extra))
    s.tls = port
    return s


def context(client="client", verify=True, maxv=None, minv=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    if verify:
        ctx.load_verify_locations(cert("ca.crt"))
    else:
        ctx.verify_mode = ssl.CERT_NONE
    if client:
        ctx.load_cert_chain(cert(client + ".crt"), cert(client + ".key"))
    if maxv:
        ctx.maximum_version = maxv
    if minv:
        ctx.minimum_version = minv
    return ctx


def tls_sock(port, client="client", timeout=10.0, **kw):
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s = context(client, **kw).wrap_socket(raw, server_hostname="localhost")
    return s


def read_reply(s, want_lines=1, timeout=10.0):
    """Bytes until want_lines CRLF-ended lines arrived (or EOF)."""
    s.settimeout(timeout)
    buf = b""
    while buf.count(b"\r\n") < want_lines:
        try:
            chunk = s.recv(65536)
        except (ConnectionError, ssl.SSLError, OSError):
            break
        if not chunk:
            break
        buf += chunk
    return buf


def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def tls_call(port, *args, client="client"):
    """One command over a fresh TLS connection: the reply's bytes, or the
    exception the connection raised."""
    try:
        s = tls_sock(port, client)
        try:
            s.sendall(cmd(*args))
            return read_reply(s)
        finally:
            s.close()
    except (ssl.SSLError, OSError) as e:
        return e


def closes(k, timeout=5.0):
    """The peer closes k (whatever it sent before: an alert), in time."""
    k.settimeout(timeout)
    try:
        while k.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except (socket.timeout, OSError):
        return False


def refused(r):
    return isinstance(r, Exception) or r == b""


def redis_cli(port, *args, client="client"):
    argv = ["timeout", "10", "redis-cli", "-p", str(port), "--tls", "--cacert", cert("ca.crt")]
    if client:
        argv += ["--cert", cert(client + ".crt"), "--key", cert(client + ".key")]
    return subprocess.run(argv + ["--no-raw"] + list(args), capture_output=True, text=True)


def log_has(s, text, timeout=5.0):
    return wait_for(lambda: text in s.log_text(), timeout)


def peer_cn(port):
    s = tls_sock(port)
    try:
        der = s.getpeercert(binary_form=True)
    finally:
        s.close()
    r = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-subject"], input=der,
                       capture_output=True)
    return r.stdout.decode().strip()


# ---------------------------------------------------------------------------

@test
def directives_and_defaults_as_redis():
    g, r = pair("directives")
    for s in (g, r):
        assert s.c.ok("PING") == b"PONG"
    got = []
    for s in (g, r):
        v = s.c.ok("CONFIG", "GET", "tls-*")
        d = dict(zip(v[::2], v[1::2]))
        d.pop(b"tls-port")
        got.append(d)
    assert got[0] == got[1], (got[0], got[1])
    assert len(got[0]) == 19, sorted(got[0])
    # Defaults of a server started without any TLS option.
    d = tdir("defaults")
    g2 = start("goblin", os.path.join(d, "g"))
    r2 = start("redis", os.path.join(d, "r"))
    vals = []
    for s in (g2, r2):
        v = s.c.ok("CONFIG", "GET", "tls-*")
        vals.append(dict(zip(v[::2], v[1::2])))
    assert vals[0] == vals[1], (vals[0], vals[1])
    # Bad values: the same errors.
    for args in (("tls-auth-clients", "maybe"), ("tls-session-cache-size", "-1"), ("tls-port", "70000"),
                 ("tls-prefer-server-ciphers", "perhaps")):
        a, b = g.c.call("CONFIG", "SET", *args), r.c.call("CONFIG", "SET", *args)
        assert isinstance(a, Err) and isinstance(b, Err) and a.msg == b.msg, (args, a, b)


@test
def tls_only_server_and_info_as_redis():
    """port 0: no plaintext listener; INFO's tcp_port shows the TLS port."""
    d = tdir("tlsonly")
    for kind in ("goblin", "redis"):
        tport = free_port()
        s = start(kind, os.path.join(d, kind), *tls_args(tport), "--port", "0", wait=False)
        assert wait_for(lambda: tls_call(tport, "PING") == b"+PONG\r\n", 20), (kind, s.log_tail())
        got = tls_call(tport, "INFO", "server")
        assert ("tcp_port:%d" % tport).encode() in got, (kind, got[:400])
        s.stop()


@test
def redis_cli_over_tls_as_redis():
    g, r = pair("cli")
    for args in (("PING",), ("SET", "k", "v"), ("GET", "k"), ("INCR", "n"), ("LPUSH", "l", "a", "b"),
                 ("LRANGE", "l", "0", "-1"), ("HELLO", "3"), ("GET", "missing"), ("NOSUCH",)):
        a, b = redis_cli(g.tls, *args), redis_cli(r.tls, *args)
        if args[0] == "HELLO":
            assert "proto" in a.stdout and "proto" in b.stdout, (a.stdout, b.stdout)
            continue
        assert a.stdout == b.stdout and a.returncode == b.returncode, (args, a.stdout, a.stderr, b.stdout)
    # CLIENT LIST shows the TLS client as any other (and counts it).
    s = tls_sock(g.tls)
    s.sendall(cmd("CLIENT", "LIST"))
    assert b"cmd=client|list" in read_reply(s, 2)
    s.close()


@test
def redis_py_with_ssl():
    if subprocess.run([SYS_PYTHON, "-c", "import redis"], capture_output=True).returncode != 0:
        raise AssertionError("redis-py is missing from %s (python3-redis)" % SYS_PYTHON)
    g, r = pair("redispy")
    script = r"""
import redis, sys
port, ca, crt, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
c = redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=ca, ssl_certfile=crt, ssl_keyfile=key,
                ssl_check_hostname=False)
out = [c.ping(), c.set("a", "1"), c.get("a"), c.incrby("a", 41)]
p = c.pipeline(transaction=False)
for i in range(2000):
    p.set("k%d" % i, "v" * (i % 300))
    p.get("k%d" % i)
res = p.execute()
out.append(all(res[2 * i + 1] == b"v" * (i % 300) for i in range(2000)))
big = bytes(range(256)) * 20000
c.set("big", big)
out.append(c.get("big") == big)
t = c.pipeline(transaction=True)
t.incr("x").incr("x").get("x")
out.append(t.execute())
print(repr(out))
"""
    outs = []
    for s in (g, r):
        p = subprocess.run([SYS_PYTHON, "-c", script, str(s.tls), cert("ca.crt"), cert("client.crt"),
                            cert("client.key")], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
        outs.append(p.stdout)
    assert outs[0] == outs[1], outs
    assert "True, True" in outs[0], outs[0]


NODE_DIR = os.path.join(ROOT, "tests", "clients", "node")


@test
def node_redis_and_ioredis_with_tls():
    """node-redis 4.7.1 and ioredis 5.9.2 (the pinned packages of
    tests/clients/node, installed with npm ci when missing)."""
    mods = os.path.join(NODE_DIR, "node_modules")
    if not os.path.isdir(os.path.join(mods, "ioredis")) or not os.path.isdir(os.path.join(mods, "redis")):
        r = subprocess.run(["timeout", "300", "npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR,
                           capture_output=True, text=True)
        assert r.returncode == 0, "npm ci failed: " + r.stderr[-500:]
    g, r = pair("node")
    outs = []
    for s in (g, r):
        p = subprocess.run(["node", os.path.join(HERE, "node_tls.js"), str(s.tls), cert("ca.crt"),
                            cert("client.crt"), cert("client.key")], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, NODE_PATH=mods))
        assert p.returncode == 0, p.stderr[-1000:]
        outs.append(p.stdout.strip())
    assert outs[0] == outs[1], outs
    assert "error" not in outs[0], outs[0]


def accept_matrix(mode):
    """(no cert, good cert, other-CA cert, expired cert) accepted? on both."""
    g, r = pair("auth-" + mode, "--tls-auth-clients", mode)
    rows = []
    for s in (g, r):
        row = []
        for client in (None, "client", "other", "expired"):
            row.append(tls_call(s.tls, "PING", client=client) == b"+PONG\r\n")
        rows.append(row)
    assert rows[0] == rows[1], (mode, rows)
    return g, rows[0]


@test
def auth_clients_yes_optional_no():
    g, row = accept_matrix("yes")
    assert row == [False, True, False, False], row
    assert log_has(g, "Error accepting a client connection: error:0A0000C7:SSL routines::peer did not return a "
                      "certificate")
    assert log_has(g, "Error accepting a client connection: error:0A000086:SSL routines::certificate verify failed")
    assert g.c.ok("PING") == b"PONG" and tls_call(g.tls, "PING") == b"+PONG\r\n"
    g, row = accept_matrix("optional")
    assert row == [True, True, False, False], row
    g, row = accept_matrix("no")
    assert row == [True, True, True, True], row
    # At run time: new connections follow the new value.
    assert g.c.ok("CONFIG", "SET", "tls-auth-clients", "yes") == b"OK"
    assert refused(tls_call(g.tls, "PING", client=None))
    assert tls_call(g.tls, "PING") == b"+PONG\r\n"


@test
def plaintext_to_the_tls_port_and_tls_to_the_plaintext_port():
    g, r = pair("cross")
    for s in (g, r):
        k = socket.create_connection(("127.0.0.1", s.tls), timeout=5)
        k.sendall(b"PING\r\n")
        got = read_reply(k, timeout=5)
        k.close()
        assert b"PONG" not in got, got
    assert log_has(g, "Error accepting a client connection: error:0A00010B:SSL routines::wrong version number")
    # TLS to the plaintext port: the handshake cannot succeed; nothing breaks.
    for s in (g, r):
        raw = socket.create_connection(("127.0.0.1", s.port), timeout=2)
        try:
            context().wrap_socket(raw, server_hostname="localhost")
            ok = True
        except (ssl.SSLError, OSError):
            ok = False
        raw.close()
        assert not ok
    for s in (g, r):
        assert s.c.ok("PING") == b"PONG"
        assert tls_call(s.tls, "PING") == b"+PONG\r\n"
    # A connection closed at once and garbage after a TLS record header.
    socket.create_connection(("127.0.0.1", g.tls)).close()
    k = socket.create_connection(("127.0.0.1", g.tls))
    k.sendall(b"\x16\x03\x01\x00\x05hello")
    k.close()
    assert tls_call(g.tls, "PING") == b"+PONG\r\n" and g.alive()


@test
def a_silent_or_slow_handshake_holds_up_nobody():
    g = one("slow", "--cores", "1")
    silent = [socket.create_connection(("127.0.0.1", g.tls)) for _ in range(20)]
    # Half a ClientHello, byte by byte, from another connection.
    ctx = context()
    inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inb, outb, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = outb.read()
    slow = socket.create_connection(("127.0.0.1", g.tls))
    for i in range(len(hello) // 2):
        slow.send(hello[i:i + 1])
        if i % 50 == 0:
            t0 = time.time()
            assert tls_call(g.tls, "PING") == b"+PONG\r\n"
            assert g.c.ok("PING") == b"PONG"
            assert time.time() - t0 < 2.0
    for k in silent + [slow]:
        k.close()
    assert tls_call(g.tls, "PING") == b"+PONG\r\n"


@test
def client_renegotiation_is_refused_as_redis():
    """TLSv1.2 renegotiation asked by the client (openssl s_client's R):
    refused by both (OpenSSL 3's default, Redis's setting)."""
    g, r = pair("reneg")
    for s in (g, r):
        script = "printf 'PING\\r\\n'; sleep 0.5; printf 'R\\n'; sleep 0.5; printf 'PING\\r\\n'; sleep 0.5"
        p = subprocess.run("(%s) | timeout 10 openssl s_client -connect 127.0.0.1:%d -tls1_2 -cert %s -key %s "
                           "-CAfile %s" % (script, s.tls, cert("client.crt"), cert("client.key"), cert("ca.crt")),
                           shell=True, capture_output=True, text=True)
        out = p.stdout + p.stderr
        assert "+PONG" in out and "RENEGOTIATING" in out and "no renegotiation" in out, (s.kind, out[-600:])
        assert tls_call(s.tls, "PING") == b"+PONG\r\n" and s.c.ok("PING") == b"PONG"


@test
def half_closed_connections_as_redis():
    g, r = pair("halfclose")
    for s in (g, r):
        # TLS: a request, then the write side shut at the TCP level.
        # (SSLSocket.shutdown would drop the TLS layer: shut a duplicate.)
        k = tls_sock(s.tls)
        k.sendall(cmd("SET", "h", "1") + cmd("GET", "h"))
        dup = socket.fromfd(k.fileno(), socket.AF_INET, socket.SOCK_STREAM)
        dup.shutdown(socket.SHUT_WR)
        dup.close()
        got = read_reply(k, 2)
        k.close()
        assert got == b"+OK\r\n$1\r\n1\r\n", (s.kind, got[:100])
        # TLS: close_notify after a request; the server closes too (goblin
        # answers with its close_notify, Redis just closes).
        k = tls_sock(s.tls)
        k.sendall(cmd("INCR", "c"))
        assert read_reply(k) == b":1\r\n"
        try:
            raw = k.unwrap()
            raw.settimeout(5)
            assert raw.recv(100) == b"", s.kind
            raw.close()
        except ssl.SSLEOFError:
            assert s.kind == "redis"
            k.close()
        # Plaintext, the same.
        p = socket.create_connection(("127.0.0.1", s.port))
        p.sendall(cmd("GET", "h"))
        p.shutdown(socket.SHUT_WR)
        got = read_reply(p)
        p.close()
        assert got == b"$1\r\n1\r\n", got
        # The handshake half done, then the write side shut.
        k = socket.create_connection(("127.0.0.1", s.tls))
        k.sendall(b"\x16\x03\x01")
        k.shutdown(socket.SHUT_WR)
        assert closes(k), s.kind
        k.close()
    for s in (g, r):
        assert tls_call(s.tls, "GET", "c") == b"$1\r\n1\r\n"
        assert s.c.ok("PING") == b"PONG"


@test
def pipelines_openssl_buffers_are_all_served():
    """One TLS write holding many requests (and large ones): the bytes
    OpenSSL decrypted but the server had not asked for yet (SSL_pending)
    must be served without waiting for another socket event."""
    g = one("pending")
    k = tls_sock(g.tls)
    val = b"x" * 100000
    batch = b"".join(cmd("SET", "p%d" % i, val) for i in range(20)) + b"".join(cmd("GET", "p%d" % i)
                                                                              for i in range(20))
    k.sendall(batch)
    want = b"+OK\r\n" * 20 + (b"$100000\r\n" + val + b"\r\n") * 20
    k.settimeout(10)
    got = b""
    while len(got) < len(want):
        chunk = k.recv(1 << 20)
        if not chunk:
            break
        got += chunk
    assert got == want, len(got)
    # Many small commands in one write.
    k.sendall(b"".join(cmd("INCR", "n") for _ in range(5000)))
    got = b""
    while got.count(b"\r\n") < 5000:
        chunk = k.recv(1 << 20)
        if not chunk:
            break
        got += chunk
    assert got.endswith(b":5000\r\n"), got[-40:]
    k.close()


@test
def large_values_streamed_from_ssd_over_tls():
    d = tdir("ssd")
    port = free_port()
    os.makedirs(os.path.join(d, "ssd"), exist_ok=True)
    g = start("goblin", os.path.join(d, "g"), *tls_args(port), "--ram-head", "16K", "--io-chunk", "16K",
              "--ssd-dir", os.path.join(d, "ssd"))
    vals = {}
    for i, n in enumerate((20000, 300000, 5 * 1024 * 1024 + 7)):
        v = os.urandom(n)
        vals["big%d" % i] = v
        assert g.c.ok("SET", "big%d" % i, v) == b"OK"
    ks = [tls_sock(port) for _ in range(3)]
    for k in ks:
        k.sendall(b"".join(cmd("GET", name) for name in vals) + cmd("PING"))
    want = b"".join(b"$%d\r\n%s\r\n" % (len(v), v) for v in vals.values()) + b"+PONG\r\n"
    for k in ks:
        k.settimeout(20)
        got = b""
        while len(got) < len(want):
            chunk = k.recv(1 << 20)
            if not chunk:
                break
            got += chunk
        assert got == want, (len(got), len(want))
        k.close()
    i = info(g.c, "stats")
    assert g.alive() and i


@test
def config_set_reloads_the_certificate():
    g, r = pair("reload")
    for s in (g, r):
        assert "goblin-server-1" in peer_cn(s.tls)
        old = tls_sock(s.tls)
        ok = s.c.call("CONFIG", "SET", "tls-cert-file", cert("server2.crt"), "tls-key-file", cert("server2.key"))
        assert ok == b"OK", (s.kind, ok)
        assert "goblin-server-2" in peer_cn(s.tls), s.kind
        old.sendall(cmd("PING"))
        assert read_reply(old) == b"+PONG\r\n"
        old.close()
    # A failed reload: Redis's error, the old values and context kept.
    errs = []
    for s in (g, r):
        e1 = s.c.call("CONFIG", "SET", "tls-cert-file", os.path.join(TMP, "nonexistent.crt"))
        e2 = s.c.call("CONFIG", "SET", "tls-key-file", cert("server.key"))  # not server2's key
        e3 = s.c.call("CONFIG", "SET", "tls-ca-cert-file", os.path.join(TMP, "none.crt"))
        e4 = s.c.call("CONFIG", "SET", "tls-protocols", "TLSv9")
        errs.append([e.msg if isinstance(e, Err) else e for e in (e1, e2, e3, e4)])
        assert s.c.ok("CONFIG", "GET", "tls-cert-file")[1] == cert("server2.crt").encode()
        assert s.c.ok("CONFIG", "GET", "tls-key-file")[1] == cert("server2.key").encode()
        assert "goblin-server-2" in peer_cn(s.tls)
    assert errs[0] == errs[1], errs
    assert errs[0][0] == ("ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS "
                          "configuration. Check server logs."), errs[0]
    assert log_has(g, "Failed to load certificate: %s" % os.path.join(TMP, "nonexistent.crt"))
    assert log_has(g, "Failed applying new configuration. Possibly related to new tls-cert-file setting. "
                      "Restoring previous settings.")
    # Back to the first certificate, both files in one CONFIG SET.
    assert g.c.ok("CONFIG", "SET", "tls-key-file", cert("server.key"), "tls-cert-file", cert("server.crt")) == b"OK"
    assert "goblin-server-1" in peer_cn(g.tls)


@test
def config_set_tls_port():
    g, r = pair("tlsport")
    for s in (g, r):
        newp = free_port()
        assert s.c.ok("CONFIG", "SET", "tls-port", str(newp)) == b"OK"
        assert wait_for(lambda: tls_call(newp, "PING") == b"+PONG\r\n", 5), s.kind
        assert wait_for(lambda: refused(tls_call(s.tls, "PING")), 5), s.kind
        assert s.c.ok("CONFIG", "SET", "tls-port", "0") == b"OK"
        assert wait_for(lambda: refused(tls_call(newp, "PING")), 5), s.kind
    # TLS enabled at run time on a server started without it.
    d = tdir("tlsport-late")
    a = start("goblin", os.path.join(d, "g"))
    b = start("redis", os.path.join(d, "r"))
    for s in (a, b):
        e = s.c.call("CONFIG", "SET", "tls-port", str(free_port()))
        assert isinstance(e, Err), e
        assert e.msg.endswith("Unable to update TLS configuration. Check server logs."), e.msg
        p = free_port()
        ok = s.c.call("CONFIG", "SET", "tls-cert-file", cert("server.crt"), "tls-key-file", cert("server.key"),
                      "tls-ca-cert-file", cert("ca.crt"), "tls-port", str(p))
        assert ok == b"OK", (s.kind, ok)
        assert wait_for(lambda: tls_call(p, "PING") == b"+PONG\r\n", 5), s.kind


@test
def session_resumption_as_redis():
    """tls-session-caching yes/no and TLSv1.2/1.3: a client offering its
    last session resumes it exactly when Redis's does."""
    got = {}
    for caching in ("yes", "no"):
        g, r = pair("sessions-" + caching, "--tls-session-caching", caching)
        for s in (g, r):
            for maxv in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
                ctx = context(maxv=maxv)
                k = ctx.wrap_socket(socket.create_connection(("127.0.0.1", s.tls)), server_hostname="localhost")
                k.sendall(cmd("PING"))
                assert read_reply(k) == b"+PONG\r\n"
                sess = k.session
                k.close()
                # With caching off, OpenSSL refuses the offered session with
                # an internal error alert (no session id context): Redis 7.0
                # does exactly that too.
                try:
                    k = ctx.wrap_socket(socket.create_connection(("127.0.0.1", s.tls)), server_hostname="localhost",
                                        session=sess)
                    k.sendall(cmd("PING"))
                    assert read_reply(k) == b"+PONG\r\n"
                    got[(s.kind, caching, str(maxv))] = k.session_reused
                    k.close()
                except ssl.SSLError as e:
                    got[(s.kind, caching, str(maxv))] = e.reason
            assert tls_call(s.tls, "PING") == b"+PONG\r\n"
    for key, v in got.items():
        if key[0] == "goblin":
            assert v == got[("redis",) + key[1:]], got
    assert got[("goblin", "yes", str(ssl.TLSVersion.TLSv1_2))], got


@test
def tls_protocols_and_ciphers():
    g, r = pair("protocols", "--tls-protocols", "TLSv1.2", "--tls-ciphers", "ECDHE-RSA-AES128-GCM-SHA256")
    for s in (g, r):
        k = tls_sock(s.tls)
        assert k.version() == "TLSv1.2" and k.cipher()[0] == "ECDHE-RSA-AES128-GCM-SHA256", (k.version(), k.cipher())
        k.close()
        try:
            tls_sock(s.tls, minv=ssl.TLSVersion.TLSv1_3).close()
            ok13 = True
        except (ssl.SSLError, OSError):
            ok13 = False
        assert not ok13, s.kind
    g2 = one("protocols13", "--tls-protocols", "TLSv1.3")
    k = tls_sock(g2.tls)
    assert k.version() == "TLSv1.3"
    k.close()
    # A start-up with a bad protocol list fails as Redis's does.
    d = tdir("protocols-bad")
    for kind in ("goblin", "redis"):
        try:
            start(kind, os.path.join(d, kind), *tls_args(free_port(), "--tls-protocols", "SSLv9"))
            ok = True
        except RuntimeError as e:
            ok = False
            assert "Invalid tls-protocols specified" in str(e) or "Failed to configure TLS" in str(e), str(e)
        assert not ok, kind


@test
def missing_certificate_at_start_up_as_redis():
    d = tdir("nocert")
    for kind in ("goblin", "redis"):
        try:
            start(kind, os.path.join(d, kind), "--tls-port", str(free_port()))
            ok = True
        except RuntimeError as e:
            ok = False
            assert "No tls-cert-file configured!" in str(e) or "Failed to configure TLS" in str(e), str(e)
        assert not ok, kind


def replica_over_tls(primary_kind, name, *primary_args):
    d = tdir(name)
    pport = free_port()
    p = start(primary_kind, os.path.join(d, "p"), *tls_args(pport), "--repl-diskless-sync-delay", "0",
              *primary_args)
    for i in range(2000):
        p.c.ok("SET", "k%d" % i, "v%d" % i)
    p.c.ok("SET", "big", os.urandom(3 * 1024 * 1024))
    rport = free_port()
    rep = start("goblin", os.path.join(d, "r"), *tls_args(rport, "--tls-replication", "yes",
                                                          "--tls-client-cert-file", cert("client.crt"),
                                                          "--tls-client-key-file", cert("client.key")),
                "--replicaof", "127.0.0.1", str(pport))
    assert wait_for(lambda: info(rep.c, "replication").get("master_link_status") == "up", 30), \
        info(rep.c, "replication")
    for i in range(500):
        p.c.ok("INCR", "counter")
    want = p.c.ok("DEBUG", "DIGEST")
    assert wait_for(lambda: rep.c.ok("DEBUG", "DIGEST") == want, 30)
    assert rep.c.ok("GET", "counter") == b"500"
    # The primary saw a TLS replica (its link is on the TLS port).
    assert info(p.c, "replication").get("connected_slaves") == "1"
    return p, rep


@test
def replication_over_tls_goblin_to_goblin():
    replica_over_tls("goblin", "repl-gg")


@test
def replication_over_tls_goblin_to_goblin_through_a_file():
    """repl-diskless-sync no: the RDB file goes out through SSL_write
    (no sendfile), and with --arena-hugetlb the fork-less snapshot too."""
    replica_over_tls("goblin", "repl-gg-disk", "--repl-diskless-sync", "no")
    replica_over_tls("goblin", "repl-gg-forkless", "--arena-hugetlb", "yes")


@test
def replication_over_tls_redis_to_goblin():
    replica_over_tls("redis", "repl-rg")


@test
def redis_replica_of_a_goblin_primary_over_tls():
    d = tdir("repl-gr")
    pport = free_port()
    p = start("goblin", os.path.join(d, "p"), *tls_args(pport), "--repl-diskless-sync-delay", "0")
    for i in range(1000):
        p.c.ok("SET", "k%d" % i, "v%d" % i)
    rep = start("redis", os.path.join(d, "r"), *tls_args(free_port(), "--tls-replication", "yes"),
                "--replicaof", "127.0.0.1", str(pport))
    assert wait_for(lambda: info(rep.c, "replication").get("master_link_status") == "up", 30)
    p.c.ok("SET", "after", "1")
    assert wait_for(lambda: rep.c.call("GET", "after") == b"1", 10)
    assert wait_for(lambda: rep.c.ok("DBSIZE") == 1001, 10)


# ---- The memcache and HTTP front-ends over TLS ------------------------------
#
# memcache-tls-port and http-tls-port: the same server context as tls-port
# (its certificate, CA, tls-auth-clients), the same transport. Each server
# has the plaintext listeners too (.mc, .http) to compare with.

def front(name, *extra, auth="yes", cores="1"):
    """A goblin with memcache and HTTP on plaintext and TLS ports: .mc,
    .mct, .http, .https (and tls-port .tls)."""
    d = tdir(name)
    port, mc, mct, http, https = (free_port() for _ in range(5))
    s = start("goblin", os.path.join(d, "g"), *tls_args(port), "--tls-auth-clients", auth, "--cores", cores,
              "--memcache-port", str(mc), "--memcache-tls-port", str(mct), "--http-port", str(http),
              "--http-tls-port", str(https), *extra)
    s.tls, s.mc, s.mct, s.http, s.https = port, mc, mct, http, https
    return s


def recv_until(k, end, timeout=20.0, n=None):
    """Bytes off k until they end with end (or n of them came)."""
    k.settimeout(timeout)
    buf = b""
    while not (buf.endswith(end) if n is None else len(buf) >= n):
        chunk = k.recv(1 << 20)
        if not chunk:
            break
        buf += chunk
    return buf


def mc_talk(k, req, end=b"\r\n"):
    k.sendall(req)
    return recv_until(k, end)


def mc_script(k, pfx):
    """The text and meta commands, each with its reply checked; the
    replies, CAS values masked, for comparing two transports."""
    out = []

    def say(req, want, end=b"\r\n"):
        got = mc_talk(k, req, end)
        assert re.fullmatch(want, got, re.S), (req[:60], got[:200])
        masked = re.sub(rb"(VALUE \S+ \d+ \d+) \d+", rb"\1 #", got.replace(pfx, b"K:"))
        out.append(re.sub(rb"\bc\d+", b"c#", masked))
        return got
    a, b = pfx + b"a", pfx + b"b"
    say(b"set %s 5 0 5\r\nhello\r\n" % a, rb"STORED\r\n")
    say(b"get %s\r\n" % a, rb"VALUE %s 5 5\r\nhello\r\nEND\r\n" % a, b"END\r\n")
    cas = int(say(b"gets %s\r\n" % a, rb"VALUE %s 5 5 \d+\r\nhello\r\nEND\r\n" % a, b"END\r\n").split()[4])
    say(b"cas %s 0 0 3 %d\r\nnew\r\n" % (a, cas + 1000), rb"EXISTS\r\n")
    say(b"cas %s 0 0 3 %d\r\nnew\r\n" % (a, cas), rb"STORED\r\n")
    say(b"append %s 0 0 2\r\n!!\r\n" % a, rb"STORED\r\n")
    say(b"incr %s 1\r\n" % b, rb"NOT_FOUND\r\n")
    say(b"add %s 0 0 1\r\n7\r\n" % b, rb"STORED\r\n")
    say(b"incr %s 35\r\n" % b, rb"42\r\n")
    say(b"get %s %s\r\n" % (a, b), rb"VALUE %s 0 5\r\nnew!!\r\nVALUE %s 0 2\r\n42\r\nEND\r\n" % (a, b), b"END\r\n")
    say(b"ms %s 4 F9 T0\r\nmeta\r\n" % a, rb"HD\r\n")
    say(b"mg %s v f s\r\n" % a, rb"VA 4 f9 s4\r\nmeta\r\n", b"meta\r\n")
    say(b"mg %s c v\r\n" % a, rb"VA 4 c\d+\r\nmeta\r\n", b"meta\r\n")
    say(b"md %s q\r\nmn\r\n" % a, rb"MN\r\n")
    say(b"mg %s v\r\n" % a, rb"EN\r\n")
    say(b"delete %s\r\n" % b, rb"DELETED\r\n")
    say(b"version\r\n", rb"VERSION .+\r\n")
    return out


@test
def memcache_over_tls():
    """Text and meta commands give the same replies over memcache-tls-port
    as over memcache-port; a 1 MB value; many pipelined requests."""
    g = front("mc", "--memcache-max-item-size", "4M")
    plain = socket.create_connection(("127.0.0.1", g.mc), timeout=10)
    k = tls_sock(g.mct)
    a, b = mc_script(k, b"t:"), mc_script(plain, b"p:")
    assert a == b, [(x, y) for x, y in zip(a, b) if x != y]
    plain.close()
    # A 1 MB value, each way, and seen by RESP.
    big = os.urandom(1 << 20)
    assert mc_talk(k, b"set big 0 0 %d\r\n%s\r\n" % (len(big), big)) == b"STORED\r\n"
    want = b"VALUE big 0 %d\r\n%s\r\nEND\r\n" % (len(big), big)
    k.sendall(b"get big\r\n")
    assert recv_until(k, b"", n=len(want)) == want
    assert g.c.ok("STRLEN", "big") == len(big)
    # Pipelined: 3000 sets and gets in one write, answered in order.
    batch = b"".join(b"set p%d 0 0 %d\r\n%s\r\n" % (i, len(str(i)), str(i).encode()) for i in range(3000))
    batch += b"".join(b"get p%d\r\n" % i for i in range(3000)) + b"mn\r\n"
    got = mc_talk(k, batch, b"MN\r\n")
    want = b"STORED\r\n" * 3000 + b"".join(b"VALUE p%d 0 %d\r\n%d\r\nEND\r\n" % (i, len(str(i)), i)
                                          for i in range(3000)) + b"MN\r\n"
    assert got == want, (len(got), len(want))
    k.close()
    assert g.c.ok("GET", "p2999") == b"2999"


@test
def memcache_tls_client_certificates():
    """tls-auth-clients yes: the memcache TLS port wants a client
    certificate of the CA; no: anyone."""
    g = front("mc-auth")
    for client, ok in ((None, False), ("client", True), ("other", False), ("expired", False)):
        try:
            k = tls_sock(g.mct, client=client)
            got = mc_talk(k, b"version\r\n")
            k.close()
        except (ssl.SSLError, OSError):
            got = b""
        assert got.startswith(b"VERSION ") == ok, (client, got)
    assert log_has(g, "peer did not return a certificate")
    g2 = front("mc-noauth", auth="no")
    k = tls_sock(g2.mct, client=None)
    assert mc_talk(k, b"set x 0 0 1\r\n1\r\n") == b"STORED\r\n"
    k.close()


class HttpReader:
    """HTTP/1.1 responses off a (TLS) socket."""

    def __init__(self, s):
        self.s, self.buf = s, b""

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
        hdrs = {}
        for ln in lines[1:]:
            a, b = ln.split(":", 1)
            hdrs[a.strip().lower()] = b.strip()
        status = int(lines[0].split()[1])
        n = 0 if head or status in (204, 304) else int(hdrs.get("content-length", "0"))
        while len(self.buf) < n:
            self.fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, hdrs, body


def http_req(method, path, headers=(), body=None):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: test"] + ["%s: %s" % h for h in headers]
    if body is not None:
        lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def curl(port, path, *extra, client="client"):
    argv = ["timeout", "30", "curl", "-sS", "--cacert", cert("ca.crt")]
    if client:
        argv += ["--cert", cert(client + ".crt"), "--key", cert(client + ".key")]
    return subprocess.run(argv + list(extra) + ["https://127.0.0.1:%d%s" % (port, path)], capture_output=True)


@test
def https_get_head_range_etag_keepalive_pipelining():
    import http.client
    g = front("https", "--http-admin", "yes")
    val = os.urandom(50000)
    assert g.c.ok("SET", "obj", val) == b"OK"
    # curl, with and without the client certificate tls-auth-clients wants.
    r = curl(g.https, "/obj")
    assert r.returncode == 0 and r.stdout == val, (r.returncode, r.stderr)
    assert curl(g.https, "/obj", client=None).returncode != 0
    r = curl(g.https, "/obj", "-I")
    assert b"HTTP/1.1 200" in r.stdout and b"Content-Length: 50000" in r.stdout, r.stdout
    # http.client: one kept-alive connection for a series of requests.
    c = http.client.HTTPSConnection("127.0.0.1", g.https, context=context(), timeout=10)
    c.request("GET", "/obj")
    resp = c.getresponse()
    assert resp.status == 200 and resp.read() == val
    etag = resp.getheader("ETag")
    assert etag
    c.request("HEAD", "/obj")
    resp = c.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Length") == "50000" and resp.read() == b""
    c.request("GET", "/obj", headers={"Range": "bytes=100-199"})
    resp = c.getresponse()
    assert resp.status == 206 and resp.read() == val[100:200]
    assert resp.getheader("Content-Range") == "bytes 100-199/50000"
    c.request("GET", "/obj", headers={"If-None-Match": etag})
    resp = c.getresponse()
    assert resp.status == 304 and resp.read() == b""
    c.request("GET", "/nosuch")
    resp = c.getresponse()
    assert resp.status == 404
    resp.read()
    # PUT and DELETE (http-admin), seen by RESP.
    c.request("PUT", "/put1", body=b"from https")
    resp = c.getresponse()
    assert resp.status in (200, 201, 204), resp.status
    resp.read()
    assert g.c.ok("GET", "put1") == b"from https"
    c.request("DELETE", "/put1")
    resp = c.getresponse()
    assert resp.status in (200, 204), resp.status
    resp.read()
    assert g.c.ok("EXISTS", "put1") == 0
    c.request("GET", "/obj")
    resp = c.getresponse()
    assert resp.status == 200 and resp.read() == val
    c.close()
    # Pipelining: many requests in one TLS write, answered in order.
    k = tls_sock(g.https)
    for i in range(50):
        g.c.ok("SET", "pl%d" % i, "value %d" % i)
    k.sendall(b"".join(http_req("GET", "/pl%d" % i) for i in range(50)) +
              http_req("GET", "/obj", [("Range", "bytes=-10")]) + http_req("HEAD", "/obj"))
    rd = HttpReader(k)
    for i in range(50):
        st, h, body = rd.response()
        assert (st, body) == (200, ("value %d" % i).encode()), (i, st, body)
    st, h, body = rd.response()
    assert (st, body) == (206, val[-10:])
    st, h, body = rd.response(head=True)
    assert st == 200 and h["content-length"] == "50000"
    # Connection: close: the answer, then the server closes (close_notify).
    k.sendall(http_req("GET", "/pl1", [("Connection", "close")]))
    assert rd.response()[2] == b"value 1"
    assert closes(k)
    k.close()


@test
def https_large_values_with_ssd_tails():
    """Values whose tails stream from the SSD (--ram-head 16K), whole and
    in ranges, over HTTPS: byte-exact, several connections at once."""
    d = tdir("https-ssd")
    os.makedirs(os.path.join(d, "ssd"), exist_ok=True)
    g = front("https-ssd-g", "--ram-head", "16K", "--io-chunk", "16K", "--write-io-chunk", "64K",
              "--ssd-dir", os.path.join(d, "ssd"))
    vals = {}
    for i, n in enumerate((20000, 300000, 5 * 1024 * 1024 + 7)):
        vals["big%d" % i] = os.urandom(n)
        assert g.c.ok("SET", "big%d" % i, vals["big%d" % i]) == b"OK"
    streams0 = ssd_streams(g)
    r = curl(g.https, "/big2")
    assert r.returncode == 0 and r.stdout == vals["big2"], (r.returncode, len(r.stdout), r.stderr)
    ks = [tls_sock(g.https) for _ in range(3)]
    for k in ks:
        k.sendall(b"".join(http_req("GET", "/" + name) for name in vals) +
                  http_req("GET", "/big2", [("Range", "bytes=4000000-4100000")]))
    for k in ks:
        k.settimeout(30)
        rd = HttpReader(k)
        for name, v in vals.items():
            st, h, body = rd.response()
            assert st == 200 and body == v, (name, st, len(body), len(v))
        st, h, body = rd.response()
        assert st == 206 and body == vals["big2"][4000000:4100001], (st, len(body))
        k.close()
    assert ssd_streams(g) >= streams0 + 10, "the HTTPS GETs did not stream from the SSD"
    # Connection: close on a streamed body: all of it, then the close.
    k = tls_sock(g.https)
    k.sendall(http_req("GET", "/big2", [("Connection", "close")]) + http_req("GET", "/big0"))
    rd = HttpReader(k)
    st, h, body = rd.response()
    assert st == 200 and h.get("connection") == "close" and body == vals["big2"]
    assert rd.buf == b"" and closes(k)
    k.close()
    # The same over memcache's TLS port.
    k = tls_sock(g.mct)
    v = vals["big1"]
    k.sendall(b"get big1\r\n")
    want = b"VALUE big1 0 %d\r\n%s\r\nEND\r\n" % (len(v), v)
    assert recv_until(k, b"", n=len(want)) == want
    k.close()
    assert g.alive()


def ssd_streams(g):
    line = info(g.c, "all")["objstore_ssd"]
    return int(re.search(r"\bstreams=(\d+)", line).group(1))


class Origin:
    """A plaintext HTTP origin: /pfx/<name> is a body made of its path
    (big*: 3 MB, huge*: 16 MB); counts requests."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        self.counts, self.lock = {}, threading.Lock()
        origin = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                with origin.lock:
                    origin.counts[self.path] = origin.counts.get(self.path, 0) + 1
                body = (b"H" * (16 << 20) if "huge" in self.path else b"B" * (3 << 20) if "big" in self.path
                        else Origin.body(self.path))
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    @staticmethod
    def body(path):
        return (("origin object %s\n" % path) * 50).encode()

    def count(self, path):
        with self.lock:
            return self.counts.get(path, 0)


@test
def https_mirror_fill():
    """--mirror: a miss on the HTTPS port is filled from the plaintext
    origin and answered through TLS; a large object passes through."""
    o = Origin()
    try:
        g = front("https-mirror", "--mirror", "http://127.0.0.1:%d/pfx" % o.port, "--proto-max-bulk-len", "2mb")
        k = tls_sock(g.https)
        rd = HttpReader(k)
        k.sendall(http_req("GET", "/obj1"))
        assert rd.response()[::2] == (200, Origin.body("/pfx/obj1"))
        k.sendall(http_req("GET", "/obj1") + http_req("GET", "/obj2", [("Range", "bytes=0-5")]) +
                  http_req("HEAD", "/obj3"))
        st, h, body = rd.response()
        assert (st, body) == (200, Origin.body("/pfx/obj1")) and "etag" in h
        assert rd.response()[::2] == (206, b"origin")
        st, h, _ = rd.response(head=True)
        assert st == 200 and h["content-length"] == str(len(Origin.body("/pfx/obj3")))
        assert o.count("/pfx/obj1") == 1
        assert g.c.ok("GET", "obj2") == Origin.body("/pfx/obj2")
        # Over the store's limit: streamed through as the origin sends it.
        for _ in range(2):
            k.sendall(http_req("GET", "/big1"))
            st, h, body = rd.response()
            assert st == 200 and body == b"B" * (3 << 20), (st, len(body))
        k.close()
        # Many HTTPS clients missing one object at once: one fetch.
        ks = [tls_sock(g.https) for _ in range(20)]
        for k in ks:
            k.sendall(http_req("GET", "/shared"))
        for k in ks:
            assert HttpReader(k).response()[::2] == (200, Origin.body("/pfx/shared"))
            k.close()
        assert o.count("/pfx/shared") == 1
        r = curl(g.https, "/viacurl")
        assert r.stdout == Origin.body("/pfx/viacurl"), r.stderr
        # A slow HTTPS reader of a large pass-through: reading the origin
        # waits for its output to drain (the output stays small).
        k = tls_sock(g.https, timeout=30)
        k.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        k.sendall(http_req("GET", "/huge1"))
        rd = HttpReader(k)
        rd.fill()
        time.sleep(0.5)
        # A client's unsent output is its obl plus its omem.
        obl = max(sum(int(f.split(b"=")[1]) for f in ln.split() if f.startswith((b"obl=", b"omem=")))
                  for ln in g.c.ok("CLIENT", "LIST").splitlines())
        assert obl < (4 << 20), obl
        st, h, body = rd.response()
        assert st == 200 and body == b"H" * (16 << 20), (st, len(body))
        k.sendall(http_req("GET", "/obj1"))
        assert rd.response()[::2] == (200, Origin.body("/pfx/obj1"))
        k.close()
    finally:
        o.srv.shutdown()


@test
def plaintext_to_the_front_ends_tls_ports_and_tls_to_their_plain_ports():
    g = front("front-cross", "--cores", "1")
    g.c.ok("SET", "k", "v")
    # Plaintext to the TLS ports: no answer, the connection closes.
    for port, msg in ((g.mct, b"get k\r\n"), (g.https, http_req("GET", "/k"))):
        k = socket.create_connection(("127.0.0.1", port), timeout=5)
        k.sendall(msg)
        got = read_reply(k, timeout=5)
        k.close()
        assert b"VALUE" not in got and b"HTTP/1.1" not in got, got
    assert log_has(g, "wrong version number")
    # TLS to the plaintext ports: read as (bad) requests; no handshake.
    inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = context().wrap_bio(inb, outb, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = outb.read()
    for port, want in ((g.mc, b"ERROR\r\n"), (g.http, b"HTTP/1.1 400 Bad Request\r\n")):
        k = socket.create_connection(("127.0.0.1", port), timeout=5)
        k.sendall(hello)
        got = recv_until(k, want, timeout=5)
        k.close()
        assert got.startswith(want), (port, got[:100])
    for port in (g.mc, g.http):
        raw = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            context().wrap_socket(raw, server_hostname="localhost")
            ok = True
        except (ssl.SSLError, OSError):
            ok = False
        raw.close()
        assert not ok, port
    # Silent connections and half a ClientHello hold nobody up.
    silent = [socket.create_connection(("127.0.0.1", p)) for p in (g.mct, g.https) for _ in range(10)]
    part = socket.create_connection(("127.0.0.1", g.https))
    part.sendall(b"\x16\x03\x01\x02\x00\x01")
    t0 = time.time()
    k = tls_sock(g.mct)
    assert mc_talk(k, b"get k\r\n", b"END\r\n") == b"VALUE k 0 1\r\nv\r\nEND\r\n"
    k.close()
    assert curl(g.https, "/k").stdout == b"v"
    p = socket.create_connection(("127.0.0.1", g.mc), timeout=5)
    assert mc_talk(p, b"get k\r\n", b"END\r\n") == b"VALUE k 0 1\r\nv\r\nEND\r\n"
    p.close()
    assert time.time() - t0 < 5
    for s in silent + [part]:
        s.close()
    assert g.alive() and g.c.ok("PING") == b"PONG"


@test
def front_end_tls_ports_follow_certificate_reloads():
    g = front("front-reload")
    for port in (g.tls, g.mct, g.https):
        assert "goblin-server-1" in peer_cn(port)
    assert g.c.ok("CONFIG", "SET", "tls-cert-file", cert("server2.crt"), "tls-key-file", cert("server2.key")) == b"OK"
    for port in (g.tls, g.mct, g.https):
        assert "goblin-server-2" in peer_cn(port), port
    # No tls-port at all: the reload still reaches them.
    d = tdir("front-reload-notls")
    mct, https = free_port(), free_port()
    g2 = start("goblin", os.path.join(d, "g"), "--tls-cert-file", cert("server.crt"), "--tls-key-file",
               cert("server.key"), "--tls-ca-cert-file", cert("ca.crt"), "--memcache-port", "0",
               "--memcache-tls-port", str(mct), "--http-tls-port", str(https))
    assert "goblin-server-1" in peer_cn(https)
    # HTTPS only (no http-port): ETags follow the key's writes all the same.
    g2.c.ok("SET", "e", "one")
    tag1 = re.search(rb"ETag: (\S+)", curl(https, "/e", "-i").stdout).group(1)
    g2.c.ok("SET", "e", "two")
    r = curl(https, "/e", "-i")
    tag2 = re.search(rb"ETag: (\S+)", r.stdout).group(1)
    assert tag1 != tag2 and r.stdout.endswith(b"two"), (tag1, tag2, r.stdout)
    r = curl(https, "/e", "-i", "-H", "If-None-Match: " + tag2.decode())
    assert r.stdout.startswith(b"HTTP/1.1 304"), r.stdout
    assert g2.c.ok("CONFIG", "SET", "tls-cert-file", cert("server2.crt"), "tls-key-file", cert("server2.key")) == b"OK"
    assert "goblin-server-2" in peer_cn(https) and "goblin-server-2" in peer_cn(mct)
    # Start-up only, as memcache-port and http-port.
    for name in ("memcache-tls-port", "http-tls-port"):
        assert g2.c.ok("CONFIG", "GET", name)[1] == str(mct if name[0] == "m" else https).encode()
        e = g2.c.call("CONFIG", "SET", name, str(free_port()))
        assert isinstance(e, Err) and "immutable" in e.msg, e


@test
def front_end_tls_ports_refused_without_certificates():
    d = tdir("front-nocert")
    for flag in ("--memcache-tls-port", "--http-tls-port"):
        try:
            start("goblin", os.path.join(d, flag[2:]), flag, str(free_port()), "--memcache-port", "0")
            ok = True
        except RuntimeError as e:
            ok = False
            assert "No tls-cert-file configured!" in str(e) and "Failed to configure TLS" in str(e), str(e)
        assert not ok, flag
    # One port for two listeners: refused.
    p = free_port()
    try:
        start("goblin", os.path.join(d, "same"), *tls_args(free_port()), "--http-port", str(p), "--http-tls-port",
              str(p), "--memcache-port", "0")
        ok = True
    except RuntimeError as e:
        ok = False
        assert "Port %d is given to both http-port and http-tls-port" % p in str(e), str(e)
    assert not ok
    # goblin-store (HTTP on 8080 by default): the flags as goblin-core's.
    store = os.path.join(os.path.dirname(goblin_binary()), "goblin-store")
    port, https = free_port(), free_port()
    sd = os.path.join(d, "store")
    os.makedirs(sd)
    with open(os.path.join(d, "store.log"), "wb") as lf:
        proc = subprocess.Popen([store, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", sd,
                                 "--http-port", str(free_port()), "--memcache-port", "0", "--http-tls-port",
                                 str(https), "--tls-cert-file", cert("server.crt"), "--tls-key-file",
                                 cert("server.key"), "--tls-ca-cert-file", cert("ca.crt")], stdout=lf,
                                stderr=subprocess.STDOUT)
    try:
        assert wait_for(lambda: curl(https, "/nothing").stdout.startswith(b"not found") or
                        b"404" in curl(https, "/nothing", "-i").stdout, 20), open(os.path.join(d, "store.log")).read()
    finally:
        proc.kill()
        proc.wait()


def main():
    make_certs()
    return SUITE.main(ARGS)


if __name__ == "__main__":
    sys.exit(main())
