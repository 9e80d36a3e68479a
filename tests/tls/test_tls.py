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
redis-server -> goblin).

  python3 tests/tls/test_tls.py [-v] [name-substring ...]

Ends with "tls: N passed, M failed".
"""
import os
import socket
import ssl
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "persist"))
from harness import ROOT, Conn, Err, Suite, free_port, info, wait_for  # noqa: E402
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


def main():
    make_certs()
    return SUITE.main(ARGS)


if __name__ == "__main__":
    sys.exit(main())
