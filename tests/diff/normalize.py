"""How replies are compared: byte for byte, except where Redis itself gives no
order or where a reply depends on the clock or on chance.

A comparator is a function (ref_node, srv_node) -> bool.  The table COMPARE
maps an upper-case command name (or "NAME SUBCOMMAND") to its comparator;
anything not in it is compared exactly.  A generator may also force a
comparator for one command with Cmd(..., compare=fn).

Errors are always compared exactly, whatever the comparator.
"""

__all__ = ["exact", "sorted_elements", "sorted_pairs", "shape", "tolerance",
           "hello", "COMPARE", "comparator_for", "fmt_cmd", "fmt_raw"]


def exact(a, b):
    return a.raw == b.raw


def _header(node):
    # The bytes of an aggregate's own header line ("*3\r\n", "~2\r\n", ...).
    return node.raw[:node.raw.index(b"\r\n") + 2]


def _canon_sorted(node):
    if not node.is_aggregate():
        return node.raw
    return _header(node) + b"".join(sorted(c.raw for c in node.v))


def _canon_pairs(node):
    if not node.is_aggregate() or len(node.v) % 2:
        return node.raw
    pairs = [node.v[i].raw + node.v[i + 1].raw for i in range(0, len(node.v), 2)]
    return _header(node) + b"".join(sorted(pairs))


def sorted_elements(a, b):
    """An aggregate whose element order is unspecified (KEYS, SMEMBERS)."""
    if a.raw == b.raw:
        return True
    if a.is_error() or b.is_error():
        return False
    return _canon_sorted(a) == _canon_sorted(b)


def sorted_pairs(a, b):
    """A map / flat field-value array whose pair order is unspecified."""
    if a.raw == b.raw:
        return True
    if a.is_error() or b.is_error():
        return False
    return _canon_pairs(a) == _canon_pairs(b)


def shape(a, b):
    """Replies chosen by chance (RANDOMKEY): same type, same null-ness, same
    aggregate length; errors exactly."""
    if a.is_error() or b.is_error():
        return a.raw == b.raw
    if a.t != b.t or (a.v is None) != (b.v is None):
        return False
    if a.is_aggregate():
        return len(a.v) == len(b.v)
    return True


class tolerance:
    """Integer replies that depend on the clock (TTL, PTTL, EXPIRETIME ...).

    Negative values (-1 no expiry, -2 no key) must match exactly; positive
    values may differ by at most `tol` (the servers executed the command a
    few milliseconds apart).  The generators only ever set expiry times far
    in the future or in the past, so no key expires during a run and every
    other reply stays deterministic.

    With `systematic`, the comparator also counts how often it had to
    tolerate a difference: for second-resolution replies that should be rare
    (a millisecond boundary crossed between the two servers), so a high
    ratio means a rounding bug that the tolerance would otherwise hide
    (checked by the driver through suspicious()).
    """

    def __init__(self, tol, systematic=False):
        self.tol = tol
        self.systematic = systematic
        self.equal = 0
        self.tolerated = 0
        self.__name__ = "tolerance(%d)" % tol

    def __call__(self, a, b):
        if a.raw == b.raw:
            if a.t == ":" and a.v >= 0:
                self.equal += 1
            return True
        if a.t != ":" or b.t != ":":
            return False
        if a.v < 0 or b.v < 0:
            return False
        if abs(a.v - b.v) <= self.tol:
            self.tolerated += 1
            return True
        return False

    def suspicious(self):
        n = self.equal + self.tolerated
        return (self.systematic and self.tolerated >= 5
                and self.tolerated > 0.05 * n)

    def reset(self):
        self.equal = self.tolerated = 0


def hello(a, b):
    """HELLO: a map; everything must match except the connection id."""
    if a.raw == b.raw:
        return True
    if a.is_error() or b.is_error():
        return False
    if a.t != b.t or not a.is_aggregate() or not b.is_aggregate():
        return False
    if len(a.v) != len(b.v):
        return False
    for i in range(0, len(a.v), 2):
        ka, va = a.v[i], a.v[i + 1]
        kb, vb = b.v[i], b.v[i + 1]
        if ka.raw != kb.raw:
            return False
        if ka.v == b"id":
            if va.t != vb.t:
                return False
            continue
        if va.raw != vb.raw:
            return False
    return True


# Commands whose replies are not compared byte for byte.
COMPARE = {
    # Keyspace: order is the hash table's.
    "KEYS": sorted_elements,
    # Chance.
    "RANDOMKEY": shape,
    # Clock.
    "TTL": tolerance(1, systematic=True),
    "PTTL": tolerance(1000),
    "EXPIRETIME": tolerance(1, systematic=True),
    "PEXPIRETIME": tolerance(1000),
    # Connection id.
    "HELLO": hello,
    # Later families (read-only replies without a defined order).
    "SMEMBERS": sorted_elements,
    "SINTER": sorted_elements,
    "SUNION": sorted_elements,
    "SDIFF": sorted_elements,
    "HKEYS": sorted_elements,
    "HVALS": sorted_elements,
    "HGETALL": sorted_pairs,
    # Libraries in the functions dict's order (the functions family gives
    # each library one function, so only the outer order is unspecified).
    "FUNCTION LIST": sorted_elements,
}


def comparator_for(cmd):
    if cmd.compare is not None:
        return cmd.compare
    args = cmd.args
    if not args:
        return exact
    name = args[0].upper().decode("latin-1")
    if len(args) > 1:
        fn = COMPARE.get(name + " " + args[1].upper().decode("latin-1"))
        if fn is not None:
            return fn
    return COMPARE.get(name, exact)


def _fmt_arg(a):
    try:
        s = a.decode("ascii")
    except UnicodeDecodeError:
        return repr(a)
    if s and all(33 <= ord(ch) < 127 and ch not in "'\"\\" for ch in s):
        return s
    return repr(s)


def fmt_cmd(cmd, limit=400):
    if cmd.raw is not None:
        s = "(inline) " + repr(cmd.raw)
    else:
        s = " ".join(_fmt_arg(a) for a in cmd.args)
    if cmd.scan is not None:
        s = "(scan to completion) " + s
    if len(s) > limit:
        s = s[:limit] + "... (%d chars)" % len(s)
    return s


def fmt_raw(raw, limit=600):
    s = repr(raw)
    if len(s) > limit:
        s = s[:limit] + "... (%d bytes)" % len(raw)
    return s
