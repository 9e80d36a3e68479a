"""Minimal RESP2/RESP3 encoder and reader for the differential tester.

The reader returns, for every reply, a Node holding the exact raw bytes of the
reply (what is compared byte for byte) plus a parsed form (what normalizers
use when Redis itself gives no order).

Standard library only.
"""

__all__ = ["Node", "Incomplete", "ProtocolError", "encode", "parse", "Conn",
           "ConnClosed", "ReplyTimeout", "exchange"]

import selectors
import socket
import time


class Incomplete(Exception):
    """Not enough bytes buffered yet for one whole reply."""


class ProtocolError(Exception):
    """The server sent bytes that are not valid RESP."""


class Node:
    """One reply (or one element of an aggregate reply).

    t    -- the RESP type byte as a one-character str: '+', '-', ':', '$', '*',
            '_', ',', '#', '(', '=', '!', '%', '~', '>'
    v    -- parsed value: bytes for simple/bulk/error/double/bignum/verbatim,
            int for ':', None for nulls ('$-1', '*-1', '_'), a list of child
            Nodes for aggregates (maps are flattened: k1, v1, k2, v2 ...)
    raw  -- the exact bytes of this reply on the wire (an attribute '|' that
            precedes a reply is included in the raw bytes of that reply)
    """
    __slots__ = ("t", "v", "raw")

    def __init__(self, t, v, raw):
        self.t = t
        self.v = v
        self.raw = raw

    def is_error(self):
        return self.t in "-!"

    def is_aggregate(self):
        return self.t in "*%~>" and self.v is not None

    def __repr__(self):
        return "Node(%r)" % (self.raw,)


def _arg(a):
    if isinstance(a, bytes):
        return a
    if isinstance(a, (bytearray, memoryview)):
        return bytes(a)
    if isinstance(a, str):
        return a.encode("utf-8", "surrogateescape")
    if isinstance(a, int):
        return str(a).encode()
    if isinstance(a, float):
        return repr(a).encode()
    raise TypeError("cannot encode %r" % (a,))


def encode(args):
    """Encode one command (a sequence of bytes/str/int) as a RESP multibulk."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = _arg(a)
        out.append(b"$%d\r\n" % len(a))
        out.append(a)
        out.append(b"\r\n")
    return b"".join(out)


_AGG_MULT = {"*": 1, "~": 1, ">": 1, "%": 2, "|": 2}


def parse(buf, pos):
    """Parse one reply starting at buf[pos].

    Returns (Node, new_pos).  Raises Incomplete if buf does not yet hold the
    whole reply, ProtocolError if the bytes are not RESP.
    """
    start = pos
    while True:
        end = buf.find(b"\r\n", pos)
        if end < 0:
            if len(buf) - pos > 64 * 1024:
                raise ProtocolError("no CRLF within 64 KiB at offset %d" % pos)
            raise Incomplete()
        if end == pos:
            raise ProtocolError("empty line at offset %d" % pos)
        t = chr(buf[pos])
        line = bytes(buf[pos + 1:end])
        nxt = end + 2
        if t in "+-":
            return Node(t, line, bytes(buf[start:nxt])), nxt
        if t == ":":
            try:
                v = int(line)
            except ValueError:
                raise ProtocolError("bad integer %r" % line)
            return Node(t, v, bytes(buf[start:nxt])), nxt
        if t in ",#(":
            return Node(t, line, bytes(buf[start:nxt])), nxt
        if t == "_":
            if line:
                raise ProtocolError("bad null %r" % line)
            return Node(t, None, bytes(buf[start:nxt])), nxt
        if t in "$=!":
            try:
                n = int(line)
            except ValueError:
                raise ProtocolError("bad bulk length %r" % line)
            if n < 0:
                if n != -1 or t != "$":
                    raise ProtocolError("bad bulk length %r" % line)
                return Node(t, None, bytes(buf[start:nxt])), nxt
            if len(buf) < nxt + n + 2:
                raise Incomplete()
            if buf[nxt + n:nxt + n + 2] != b"\r\n":
                raise ProtocolError("bulk of length %d not followed by CRLF" % n)
            v = bytes(buf[nxt:nxt + n])
            return Node(t, v, bytes(buf[start:nxt + n + 2])), nxt + n + 2
        if t in _AGG_MULT:
            try:
                n = int(line)
            except ValueError:
                raise ProtocolError("bad aggregate length %r" % line)
            if n < 0:
                if n != -1 or t != "*":
                    raise ProtocolError("bad aggregate length %r" % line)
                return Node(t, None, bytes(buf[start:nxt])), nxt
            children = []
            p = nxt
            for _ in range(n * _AGG_MULT[t]):
                child, p = parse(buf, p)
                children.append(child)
            if t == "|":
                # An attribute: metadata preceding the real reply.  Keep its
                # bytes as part of the raw reply and parse what follows.
                pos = p
                continue
            return Node(t, children, bytes(buf[start:p])), p
        raise ProtocolError("unknown type byte %r at offset %d" % (t, pos))


class ConnClosed(Exception):
    def __init__(self, conn, got):
        Exception.__init__(self, "%s closed the connection" % conn.name)
        self.conn = conn
        self.got = got


class ReplyTimeout(Exception):
    def __init__(self, conn, got):
        Exception.__init__(self, "%s did not reply in time" % conn.name)
        self.conn = conn
        self.got = got


class Conn:
    """A connection whose replies are read by exchange()."""

    def __init__(self, host, port, name, timeout=10.0):
        self.name = name
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.buf = bytearray()
        self.pos = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _take(self):
        """Parse one buffered reply or raise Incomplete."""
        node, p = parse(self.buf, self.pos)
        self.pos = p
        if self.pos > 1 << 20 and self.pos * 2 > len(self.buf):
            del self.buf[:self.pos]
            self.pos = 0
        return node


def exchange(jobs, timeout=30.0):
    """Send payloads and collect replies on several connections concurrently.

    jobs: list of (conn, payload_bytes, n_replies).
    Returns a list (parallel to jobs) of lists of Nodes.
    Raises ConnClosed / ReplyTimeout (with the replies got so far) or
    ProtocolError.
    """
    sel = selectors.DefaultSelector()
    state = []
    for i, (conn, payload, n) in enumerate(jobs):
        st = {"conn": conn, "out": memoryview(payload), "n": n, "got": [],
              "i": i}
        state.append(st)
        # Replies possibly buffered already (should not happen, but be safe).
        _drain(st)
        ev = 0
        if len(st["out"]):
            ev |= selectors.EVENT_WRITE
        if len(st["got"]) < n:
            ev |= selectors.EVENT_READ
        if ev:
            sel.register(conn.sock, ev, st)
    deadline = time.monotonic() + timeout
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                for key in list(sel.get_map().values()):
                    st = key.data
                    raise ReplyTimeout(st["conn"], st["got"])
            for key, mask in sel.select(min(left, 1.0)):
                st = key.data
                conn = st["conn"]
                if mask & selectors.EVENT_WRITE and len(st["out"]):
                    try:
                        k = conn.sock.send(st["out"][:256 * 1024])
                    except (BlockingIOError, InterruptedError):
                        k = 0
                    except OSError:
                        raise ConnClosed(conn, st["got"])
                    st["out"] = st["out"][k:]
                if mask & selectors.EVENT_READ:
                    try:
                        data = conn.sock.recv(256 * 1024)
                    except (BlockingIOError, InterruptedError):
                        data = None
                    except OSError:
                        raise ConnClosed(conn, st["got"])
                    if data is not None:
                        if not data:
                            raise ConnClosed(conn, st["got"])
                        conn.buf += data
                        _drain(st)
                ev = 0
                if len(st["out"]):
                    ev |= selectors.EVENT_WRITE
                if len(st["got"]) < st["n"]:
                    ev |= selectors.EVENT_READ
                if ev == 0:
                    sel.unregister(conn.sock)
                elif ev != key.events:
                    sel.modify(conn.sock, ev, st)
    finally:
        sel.close()
    return [st["got"] for st in state]


def _drain(st):
    conn = st["conn"]
    while len(st["got"]) < st["n"]:
        try:
            st["got"].append(conn._take())
        except Incomplete:
            return
        except ProtocolError as e:
            e.conn = conn
            e.got = st["got"]
            raise
