#!/usr/bin/env python3
"""Generate docs/compatibility.md: every Redis 7.0 command and whether Goblin has it.

Starts a redis-server 7.0 and a goblin-core on free ports (or uses running
ones), reads the reference command set from redis-server's COMMAND DOCS and
COMMAND INFO, and Goblin's from its COMMAND LIST and COMMAND INFO, and prints
the comparison as Markdown. A command counts as implemented when Goblin's
COMMAND LIST names it; its COMMAND INFO entry is compared with Redis's and a
difference is noted.

Usage:
  utils/gen_compat_doc.py > docs/compatibility.md
  utils/gen_compat_doc.py --goblin ./build-release/goblin-core --redis /usr/bin/redis-server
  utils/gen_compat_doc.py --goblin-port 6400      # use a running goblin-core
  utils/gen_compat_doc.py --redis-port 6379       # use a running redis-server 7.0

The output depends only on the two command tables, so regenerating it after a
family lands changes exactly the rows of that family. tests/clients/run.sh
regenerates it into a temporary file and fails when docs/compatibility.md is
stale. Standard library only.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

# Redis's command groups, in the order the document lists them, with the
# family name Goblin's docs and test causes use.
FAMILIES = [
    ("generic", "keyspace"),
    ("string", "strings"),
    ("bitmap", "bitmaps"),
    ("list", "lists"),
    ("hash", "hashes"),
    ("set", "sets"),
    ("sorted-set", "zsets"),
    ("hyperloglog", "hyperloglog"),
    ("geo", "geo"),
    ("stream", "streams"),
    ("pubsub", "pubsub"),
    ("transactions", "transactions"),
    ("scripting", "scripting"),
    ("connection", "connection"),
    ("server", "server"),
    ("cluster", "cluster"),
]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Conn:
    """A minimal RESP2 client."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self._read()

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError("connection closed")
            self.buf += d
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError("connection closed")
            self.buf += d
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n).decode("utf-8", "replace")
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)

    def close(self):
        self.s.close()


def wait_ready(port, proc, what):
    deadline = time.time() + 15
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            sys.exit("gen_compat_doc: %s exited with status %s" % (what, proc.returncode))
        try:
            c = Conn(port)
            if c.call("PING") == "PONG":
                return c
            c.close()
        except (OSError, EOFError, RuntimeError):
            pass
        time.sleep(0.05)
    sys.exit("gen_compat_doc: %s did not answer PING on port %d" % (what, port))


def pairs(flat):
    """A RESP2 flattened map as a list of (key, value)."""
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def redis_commands(conn):
    """name -> {summary, since, group, subs: {name -> {...}}} from COMMAND DOCS."""
    docs = {}
    for name, body in pairs(conn.call("COMMAND", "DOCS")):
        d = dict(pairs(body))
        entry = {"summary": d.get("summary", ""), "since": d.get("since", ""), "group": d.get("group", ""),
                 "subs": {}}
        for sub, sbody in pairs(d.get("subcommands") or []):
            sd = dict(pairs(sbody))
            entry["subs"][sub.lower()] = {"summary": sd.get("summary", ""), "since": sd.get("since", ""),
                                          "group": sd.get("group", "")}
        docs[name.lower()] = entry
    return docs


def info_of(conn, names):
    """COMMAND INFO for each name (subcommands as container|sub), top-level fields only."""
    out = {}
    names = sorted(names)
    for i in range(0, len(names), 50):
        chunk = names[i:i + 50]
        for name, entry in zip(chunk, conn.call("COMMAND", "INFO", *chunk)):
            # Drop the nested subcommand entries: each is compared on its own.
            out[name] = None if entry is None else entry[:9]
    return out


def norm_docs(body):
    """A COMMAND DOCS entry with its subcommands sorted by name (Redis lists
    them in its hash table's order, which changes from run to run)."""
    out = []
    for k, v in pairs(body):
        if k == "subcommands" and isinstance(v, list):
            v = sorted((sub, norm_docs(sb)) for sub, sb in pairs(v))
        out.append((k, v))
    return out


def docs_of(conn, names):
    """COMMAND DOCS for each name, normalised (None: no entry)."""
    out = {}
    for name in sorted(names):
        reply = conn.call("COMMAND", "DOCS", name)
        out[name] = norm_docs(reply[1]) if reply else None
    return out


def describe_diff(a, b):
    fields = ["name", "arity", "flags", "first key", "last key", "step", "ACL categories", "tips", "key specs"]
    return ", ".join(f for f, x, y in zip(fields, a, b) if x != y) or "length"


def esc(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap.add_argument("--goblin", default=os.path.join(root, "build-release", "goblin-core"))
    ap.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    ap.add_argument("--goblin-port", type=int, help="use a goblin-core already listening here")
    ap.add_argument("--redis-port", type=int, help="use a redis-server 7.0 already listening here")
    args = ap.parse_args()

    procs = []
    tmp = tempfile.mkdtemp(prefix="gen-compat-")
    try:
        if args.redis_port:
            rport, rproc = args.redis_port, None
        else:
            rport = free_port()
            rproc = subprocess.Popen([args.redis, "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            procs.append(rproc)
        if args.goblin_port:
            gport, gproc = args.goblin_port, None
        else:
            if not os.access(args.goblin, os.X_OK):
                sys.exit("gen_compat_doc: %s not built (run make)" % args.goblin)
            gport = free_port()
            gproc = subprocess.Popen([args.goblin, "--port", str(gport), "--dir", tmp, "--save", "",
                                      "--cores", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(gproc)
        rc = wait_ready(rport, rproc, "redis-server")
        gc = wait_ready(gport, gproc, "goblin-core")

        version = dict(l.split(":", 1) for l in rc.call("INFO", "server").splitlines()
                       if ":" in l).get("redis_version", "?")
        if not version.startswith("7.0."):
            sys.exit("gen_compat_doc: the reference must be redis-server 7.0, got %s" % version)
        docs = redis_commands(rc)
        all_names = set(docs)
        for name, d in docs.items():
            all_names.update("%s|%s" % (name, s) if "|" not in s else s for s in d["subs"])
        listed = {n.lower() for n in gc.call("COMMAND", "LIST")}
        rinfo = info_of(rc, all_names)
        ginfo = info_of(gc, all_names & listed)
        rdocs = docs_of(rc, all_names & listed)
        gdocs = docs_of(gc, all_names & listed)
        extra = sorted(listed - all_names)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)

    def row(name, d, label):
        impl = name in listed
        notes = []
        if impl and ginfo.get(name) is None:
            notes.append("in COMMAND LIST but COMMAND INFO is nil")
        elif impl and ginfo[name] != rinfo[name]:
            notes.append("COMMAND INFO differs from Redis (%s)" % describe_diff(ginfo[name], rinfo[name]))
        if impl and gdocs.get(name) != rdocs.get(name):
            notes.append("COMMAND DOCS differs from Redis")
        return impl, "| `%s` | %s | %s | %s | %s |" % (label, "yes" if impl else "**no**", d["since"],
                                                      esc(d["summary"]), "; ".join(notes))

    groups = {g: [] for g, _ in FAMILIES}
    for name in docs:
        g = docs[name]["group"]
        if g not in groups:
            FAMILIES.append((g, g))
            groups[g] = []
        groups[g].append(name)

    sections, summary = [], []
    tot = [0, 0, 0, 0]
    for group, family in FAMILIES:
        names = sorted(groups[group])
        if not names:
            continue
        lines = ["## %s" % family, "", "Redis group `%s`." % group, "",
                 "| Command | Goblin | Since | Summary | Notes |", "|---|---|---|---|---|"]
        n = [0, 0, 0, 0]  # commands, implemented, subcommands, implemented
        for name in names:
            d = docs[name]
            subs = sorted(d["subs"])
            impl, line = row(name, d, name.upper())
            if subs:
                have = sum(1 for s in subs if ("%s|%s" % (name, s) if "|" not in s else s) in listed)
                line = line.replace("| yes |", "| yes (%d/%d) |" % (have, len(subs)), 1) if impl else line
            n[0] += 1
            n[1] += impl
            lines.append(line)
            for s in subs:
                full = "%s|%s" % (name, s) if "|" not in s else s
                simpl, sline = row(full, d["subs"][s], full.upper().replace("|", " "))
                n[2] += 1
                n[3] += simpl
                lines.append(sline)
        lines.append("")
        sections.append("\n".join(lines))
        summary.append("| [%s](#%s) | `%s` | %d | %d | %d | %d |" % (family, family, group, n[0], n[1], n[2], n[3]))
        tot = [a + b for a, b in zip(tot, n)]

    out = [
        "# Redis 7.0 command compatibility",
        "",
        "<!-- Generated by utils/gen_compat_doc.py. Do not edit by hand. -->",
        "",
        "Every command of Redis %s and whether `goblin-core` implements it. Generated by"
        % version,
        "`utils/gen_compat_doc.py` from redis-server's `COMMAND DOCS` / `COMMAND INFO` and",
        "goblin-core's `COMMAND LIST` / `COMMAND INFO`: a command is implemented when Goblin's",
        "command table registers a handler for it (it then appears in `COMMAND LIST`); its",
        "`COMMAND INFO` entry is compared with Redis's and any difference is noted.",
        "",
        "When a command family lands, regenerate this file and commit it with the family:",
        "",
        "    make && utils/gen_compat_doc.py > docs/compatibility.md",
        "",
        "`make test` (tests/clients/run.sh, scenario `compat-doc/up-to-date`) regenerates it",
        "into a temporary file and fails while this copy is stale, so it cannot drift.",
        "",
        "## Summary",
        "",
        "| Family | Redis group | Commands | Implemented | Subcommands | Implemented |",
        "|---|---|---:|---:|---:|---:|",
    ] + summary + [
        "| **total** | | %d | %d | %d | %d |" % tuple(tot),
        "",
    ] + sections
    out.append("## Goblin-only commands")
    out.append("")
    if extra:
        out.append("Commands in Goblin's `COMMAND LIST` that Redis 7.0 does not have:")
        out.append("")
        out += ["* `%s`" % e.upper().replace("|", " ") for e in extra]
    else:
        out.append("None: every command Goblin registers is a Redis 7.0 command.")
    out.append("")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
