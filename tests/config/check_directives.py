#!/usr/bin/env python3
"""Every row of the config table (src/base/config.c) has a status in
docs/configuration.md, and every "default only" directive (F_DEFONLY) is
refused at a non-default value both as a start-up flag and at CONFIG SET
(immutable ones: CONFIG SET says so). Ends with "N passed, M failed"."""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "helpers"))
from resp import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.path.join(ROOT, "build-release", "goblin-core")
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def table_rows():
    src = open(os.path.join(ROOT, "src/base/config.c")).read()
    t = src[src.index("static config_entry table[] = {"):src.index("#define NTABLE")]
    rows = []
    for m in re.finditer(r'\{"([a-z0-9_-]+)", (?:NULL|"[a-z0-9_-]+"), (T_[A-Z]+), ([^,]+), [^,]+, "([^"]*)"', t):
        rows.append((m.group(1), m.group(2), m.group(3), m.group(4)))
    return rows


def doc_status():
    st = {}
    for line in open(os.path.join(ROOT, "docs/configuration.md")):
        m = re.match(r"^\| ([a-z0-9_-]+) \| ([^|]+) \|", line)
        if m and m.group(1) != "directive":
            st[m.group(1)] = m.group(2).strip()
    return st


# A value that is not the default, by type (enums: one of Redis's values).
ENUM_OTHER = {"oom-score-adj": "yes", "enable-protected-configs": "yes",
              "enable-module-command": "yes", "repl-diskless-load": "swapdb",
              "shutdown-on-sigint": "nosave", "shutdown-on-sigterm": "nosave"}


def other_value(name, typ, dflt):
    if name in ENUM_OTHER:
        return ENUM_OTHER[name]
    if typ == "T_BOOL":
        return "no" if dflt == "yes" else "yes"
    if typ in ("T_INT", "T_LL", "T_SIZE"):
        return str(int(dflt) + 1)
    return "somevalue"




def reap(srv):
    """Wait for a server told to shut down; kill it if it does not go."""
    try:
        srv.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.kill()


def connect(port, srv):
    """A connection to the server srv started on port, or None when it
    exits or does not answer within 5 s."""
    for _ in range(100):
        if srv.poll() is not None:
            return None
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            time.sleep(0.05)
    return None


def call(sock, *args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    sock.sendall(out)
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace")


def main():
    rows = table_rows()
    st = doc_status()
    check(len(rows) > 90, "the table parsed (%d rows)" % len(rows))
    for name, typ, flags, dflt in rows:
        check(name in st, "%s has no status in docs/configuration.md" % name)
        if "F_PASSTHRU" in flags:
            check(name.startswith("append") or name.startswith("aof-"),
                  "%s is F_PASSTHRU (accepted, no effect) but is no AOF directive" % name)
        if "F_DEFONLY" in flags:
            check(st.get(name) == "default only", "%s is F_DEFONLY but the doc says %r" % (name, st.get(name)))
        elif name in st:
            check(st[name] != "default only", "the doc says %s is default only; the table does not" % name)
    defonly = [(n, t, f, d) for n, t, f, d in rows if "F_DEFONLY" in f]
    tmp = tempfile.mkdtemp(prefix="goblin-directives-")
    # Start-up: a non-default value is refused, the default accepted.
    for name, typ, flags, dflt in defonly:
        v = other_value(name, typ, dflt)
        r = subprocess.run(["nice", "-n", "19", SERVER, "--port", "0", "--dir", tmp, "--save", "", "--" + name, v],
                           capture_output=True, text=True, timeout=20)
        check(r.returncode != 0 and "not supported" in r.stderr,
              "start-up --%s %s: rc %d, %s" % (name, v, r.returncode, r.stderr.strip()[-200:]))
    # CONFIG SET on a running server.
    port = free_port()
    args = ["nice", "-n", "19", SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp, "--save", ""]
    for name, typ, flags, dflt in defonly:
        args += ["--" + name, dflt if dflt else '']
    srv = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        sock = connect(port, srv)
        check(sock is not None, "the server starts with every default-only directive at its default")
        if sock:
            for name, typ, flags, dflt in defonly:
                v = other_value(name, typ, dflt)
                rep = call(sock, "config", "set", name, v)
                want = "immutable" if "F_IMMUTABLE" in flags else "not supported"
                check(rep.startswith("-") and want in rep, "CONFIG SET %s %s: %s" % (name, v, rep.strip()))
                if "F_IMMUTABLE" not in flags:
                    rep = call(sock, "config", "set", name, dflt)
                    check(rep.startswith("+OK"), "CONFIG SET %s %s (the default): %s" % (name, dflt, rep.strip()))
            call(sock, "shutdown", "nosave")
    finally:
        reap(srv)
    stock_config(tmp)
    supervised_systemd(tmp)
    syslog_lines(tmp)
    io_threads(tmp)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def supervised_systemd(tmp):
    """supervised systemd: READY=1 reaches $NOTIFY_SOCKET once the server
    answers, STOPPING=1 when it shuts down (a Type=notify unit)."""
    path = os.path.join(tmp, "notify.sock")
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(path)
    ns.settimeout(20)
    port = free_port()
    env = dict(os.environ, NOTIFY_SOCKET=path)
    srv = subprocess.Popen(["nice", "-n", "19", SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp,
                            "--save", "", "--supervised", "systemd"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=env)
    try:
        try:
            msg = ns.recv(4096).decode()
        except socket.timeout:
            msg = ""
        check("READY=1" in msg and "STATUS=Ready to accept connections" in msg, "systemd READY message: %r" % msg)
        sock = socket.create_connection(("127.0.0.1", port)) if msg else None
        if sock:
            check(call(sock, "ping") == "+PONG\r\n", "PING after READY=1")
            call(sock, "shutdown", "nosave")
            try:
                msg = ns.recv(4096).decode()
            except socket.timeout:
                msg = ""
            check(msg == "STOPPING=1\n", "systemd STOPPING message: %r" % msg)
    finally:
        ns.close()
        reap(srv)


def syslog_lines(tmp):
    """syslog-enabled: the log lines reach syslog(3) under syslog-ident at
    syslog-facility, each at Redis's level (the server runs in a mount
    namespace of its own where /dev/log is a socket of this test's)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("skipped: the syslog check needs root and unshare (a private /dev/log)")
        return
    path = os.path.join(tmp, "log.sock")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ls.bind(path)
    ls.settimeout(20)
    made = not os.path.exists("/dev/log")
    if made:  # a mount point for the bind mount, removed below
        open("/dev/log", "w").close()
    port = free_port()
    srv = subprocess.Popen(["unshare", "-m", "sh", "-c", 'mount --bind "$0" /dev/log && exec "$@"', path,
                            SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp, "--save", "",
                            "--syslog-enabled", "yes", "--syslog-ident", "goblin-test",
                            "--syslog-facility", "local3"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        try:
            while not any("Ready to accept connections" in x for x in lines):
                lines.append(ls.recv(4096).decode(errors="replace"))
        except socket.timeout:
            pass
        ready = [x for x in lines if "Ready to accept connections" in x]
        # <PRI> is facility * 8 + severity: local3 (19), notice (5).
        check(ready and ready[0].startswith("<157>") and ("goblin-test[%d]: " % srv.pid) in ready[0],
              "syslog line of the start: %r" % (ready[0] if ready else lines[-3:]))
        sock = socket.create_connection(("127.0.0.1", port)) if ready else None
        if sock:
            check(call(sock, "config", "get", "syslog-facility") ==
                  "*2\r\n$15\r\nsyslog-facility\r\n$6\r\nlocal3\r\n", "CONFIG GET syslog-facility")
            rep = call(sock, "config", "set", "syslog-ident", "other")
            check("immutable" in rep, "CONFIG SET syslog-ident: %s" % rep.strip())
            call(sock, "shutdown", "nosave")
    finally:
        ls.close()
        reap(srv)
        if made:
            os.unlink("/dev/log")
    r = subprocess.run([SERVER, "--port", "0", "--syslog-facility", "local9"], capture_output=True, text=True,
                       timeout=20)
    check(r.returncode != 0 and "syslog-facility" in r.stderr, "--syslog-facility local9: %s" % r.stderr.strip())


def io_threads(tmp):
    """io-threads N with cores at its default runs N workers."""
    port = free_port()
    srv = subprocess.Popen(["nice", "-n", "19", SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp,
                            "--save", "", "--io-threads", "2", "--io-threads-do-reads", "yes"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        sock = connect(port, srv)
        check(sock is not None, "the server starts with io-threads 2")
        if sock:
            check(call(sock, "config", "get", "cores") == "*2\r\n$5\r\ncores\r\n$1\r\n2\r\n",
                  "io-threads 2: CONFIG GET cores")
            check(call(sock, "config", "get", "io-threads-do-reads").endswith("$3\r\nyes\r\n"),
                  "CONFIG GET io-threads-do-reads")
            call(sock, "shutdown", "nosave")
    finally:
        reap(srv)


def stock_config(tmp):
    """A Redis user's config file loads as it is: Debian's redis.conf (the
    redis-server package deps/ installs), its paths and port overridden."""
    conf = "/etc/redis/redis.conf"
    if not os.path.exists(conf):
        print("skipped: %s is not installed here (Debian's redis-server package)" % conf)
        return
    port = free_port()
    args = ["nice", "-n", "19", SERVER, conf, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp,
            "--daemonize", "no", "--logfile", "", "--pidfile", os.path.join(tmp, "stock.pid"), "--save", ""]
    srv = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        sock = connect(port, srv)
        err = "" if sock else (srv.stderr.read() if srv.poll() is not None else "no answer")
        check(sock is not None, "goblin-core starts with %s: %s" % (conf, err.strip()[-300:]))
        if sock:
            check(call(sock, "ping") == "+PONG\r\n", "PING with %s" % conf)
            call(sock, "shutdown", "nosave")
    finally:
        reap(srv)


if __name__ == "__main__":
    sys.exit(main())
