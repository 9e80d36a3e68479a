"""RESP2/RESP3 client of the Python tests (standard library only).

    import resp                              # with tests/helpers on sys.path
    c = resp.Conn(port)                      # blocking, with a socket timeout
    c.call("SET", "k", 1)                    # -> b'OK'
    c.call("NOSUCH")                         # -> Err('ERR unknown command ...')
    c.pipeline([["INCR", "n"], ["GET", "n"]])
    c.send("SUBSCRIBE", "ch"); c.read()      # replies read one at a time

Two levels of replies:

  * parse() and Conn.read_node() give a Node: the reply's type byte, its
    parsed form and its exact bytes on the wire (the differential tester
    compares those bytes);
  * Conn.read() / call() give plain values (value() converts a Node):
    simple and bulk strings are bytes, integers int, nulls None, arrays,
    sets and pushes lists, maps dicts, doubles float, booleans bool, and
    an error reply is returned as an Err, not raised, so a test can assert
    on it.

exchange() drives several connections at once without blocking on any of
them: it sends each its pipelined payload and collects a given number of
replies (as Nodes) from each.
"""

__all__ = ["Node", "Err", "Incomplete", "ProtocolError", "ConnClosed",
           "ReplyTimeout", "encode", "parse", "value", "Conn", "exchange"]

import selectors
import socket
import time


_ports_given = set()


def free_port(host="127.0.0.1"):
    """A TCP port nobody listens on right now, for a server under test, and
    not one this process was given before: the kernel may hand the same
    free port to two binds in a row, and two options of one server (or two
    servers not started yet) must not get it both."""
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((host, 0))
            port = s.getsockname()[1]
        finally:
            s.close()
        if port not in _ports_given:
            _ports_given.add(port)
            return port


class Incomplete(Exception):
    """Not enough bytes buffered yet for one whole reply."""


class ProtocolError(Exception):
    """The server sent bytes that are not valid RESP."""


class Err(Exception):
    """An error reply ('-' or RESP3 '!'), as a value: msg is its text."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg

    def __repr__(self):
        return "Err(%r)" % self.msg

    def __eq__(self, other):
        return isinstance(other, Err) and other.msg == self.msg

    def __hash__(self):
        return hash(self.msg)


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


# ------------------------------------------------------------ encoding --

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
    """Encode one command (a sequence of bytes/str/int/float) as a RESP
    multibulk."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = _arg(a)
        out.append(b"$%d\r\n" % len(a))
        out.append(a)
        out.append(b"\r\n")
    return b"".join(out)


# ------------------------------------------------------------- parsing --

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


def _key(v):
    # A map key must be hashable: an aggregate key becomes a tuple.
    return tuple(_key(x) for x in v) if isinstance(v, list) else v


def value(node):
    """The plain Python value of a Node (see the module's docstring)."""
    t, v = node.t, node.v
    if t in "-!":
        return Err(v.decode("utf-8", "replace"))
    if v is None or t in "+:$(":
        return int(v) if t == "(" else v
    if t == "=":
        return v[4:]  # drop the "txt:" / "mkd:" format prefix
    if t == ",":
        return float(v)
    if t == "#":
        return v == b"t"
    if t == "%":
        return {_key(value(k)): value(x) for k, x in zip(v[::2], v[1::2])}
    return [value(x) for x in v]


# ---------------------------------------------------------- connection --

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
    """One TCP connection to a server.

    Reads block for at most `timeout` seconds (socket.timeout, an OSError,
    when nothing comes); a closed connection raises ConnectionError.  The
    socket is `sock` (callers may change its timeout).
    """

    def __init__(self, port, host="127.0.0.1", timeout=30.0, name=None):
        self.name = name or "%s:%d" % (host, port)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
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
        if self.pos == len(self.buf) or (self.pos > 1 << 20 and self.pos * 2 > len(self.buf)):
            del self.buf[:self.pos]
            self.pos = 0
        return node

    def send(self, *args):
        """Send one command without reading its reply."""
        self.sock.sendall(encode(args))

    def read_node(self):
        """The next reply as a Node, waiting for it."""
        while True:
            if self.pos < len(self.buf):
                try:
                    return self._take()
                except Incomplete:
                    pass
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("%s: connection closed by the server" % self.name)
            self.buf += data

    def read(self):
        """The next reply as a plain value (an error reply is an Err)."""
        return value(self.read_node())

    def call(self, *args):
        self.send(*args)
        return self.read()

    def ok(self, *args):
        """call(), raising AssertionError on an error reply."""
        r = self.call(*args)
        if isinstance(r, Err):
            raise AssertionError("%s -> %s" % (args[:3], r.msg))
        return r

    def pipeline(self, cmds, check=True):
        """Send the commands (lists of arguments) in batches of 1000 and
        return their replies; with check, an error reply raises
        AssertionError."""
        out = []
        for i in range(0, len(cmds), 1000):
            chunk = cmds[i:i + 1000]
            self.sock.sendall(b"".join(encode(c) for c in chunk))
            for c in chunk:
                r = self.read()
                if check and isinstance(r, Err):
                    raise AssertionError("%s -> %s" % (c[:3], r.msg))
                out.append(r)
        return out


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
        _drain(st)  # replies a blocking read() left buffered
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
                # The selector said ready: send and recv do not wait.
                if mask & selectors.EVENT_WRITE and len(st["out"]):
                    try:
                        k = conn.sock.send(st["out"][:256 * 1024])
                    except (BlockingIOError, InterruptedError, socket.timeout):
                        k = 0
                    except OSError:
                        raise ConnClosed(conn, st["got"])
                    st["out"] = st["out"][k:]
                if mask & selectors.EVENT_READ:
                    try:
                        data = conn.sock.recv(256 * 1024)
                    except (BlockingIOError, InterruptedError, socket.timeout):
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
