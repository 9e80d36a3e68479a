"""Building blocks for command generators.

A generator is a function gen(ctx) -> Cmd or list of Cmd.  A list is sent as
consecutive commands and is never mutated (use it when the commands must stay
together, e.g. a SET with a past EXAT followed by a lookup that deletes the
logically expired key).  A single Cmd may be mutated by the stream driver
(arguments dropped, duplicated or inserted, command name case changed) to
produce arity and syntax errors.

Determinism rules every generator must follow (else the test is flaky):
  * Never set an expiry that lands during the run.  Use ctx.rel_s(), rel_ms(),
    abs_s(), abs_ms() for future times (at least 115 days away, spaced so that
    NX/XX/GT/LT comparisons never depend on the exact millisecond a server
    ran the command), and ctx.past_* for times in the past.
  * A SET/SETEX-like command with a past absolute time leaves a logically
    expired key in Redis until it is touched (DBSIZE would then depend on the
    active-expire cycle): follow it in the same list with a lookup of the key.
  * Nothing that depends on chance changes state (SPOP-like commands need a
    comparator and a way to resynchronise; add one when a family needs it).
  * Keep allocations small: bit and byte offsets of writes stay below a few
    KiB unless they are out of range (errors).
"""

import bisect


def b(x):
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8", "surrogateescape")
    if isinstance(x, int):
        return str(x).encode()
    if isinstance(x, float):
        return repr(x).encode()
    if isinstance(x, (bytearray, memoryview)):
        return bytes(x)
    raise TypeError("bad argument %r" % (x,))


class Cmd:
    """One command to send to both servers.

    args     list of bytes (the multibulk)
    compare  optional comparator overriding normalize.COMPARE
    raw      optional bytes sent instead of the multibulk (inline commands)
    scan     optional (cursor_index, pairs): iterate this SCAN-like command
             to completion on both servers and compare the collected sets
    """
    __slots__ = ("args", "compare", "raw", "scan")

    def __init__(self, *args, compare=None, raw=None, scan=None):
        self.args = [b(a) for a in args]
        self.compare = compare
        self.raw = raw
        self.scan = scan

    @property
    def name(self):
        if self.raw is not None:
            tok = self.raw.split(None, 1)
            return tok[0].upper().decode("latin-1") if tok else ""
        return self.args[0].upper().decode("latin-1") if self.args else ""

    def __repr__(self):
        return "Cmd(%r)" % (self.args,)


# ---------------------------------------------------------------------------
# Key spaces and values

# Twenty keys, so commands interact.  Glob metacharacters, binary bytes, a
# space, an empty name and a hash tag are deliberate.
KEYS = [b"k%d" % i for i in range(12)] + [
    b"", b"sp ace", b"\x00bin\xff\r\n", b"{t}x", b"k*", b"[k]", b"K0",
    b"longer:key:name:0123456789",
]

EDGE_INTS = [
    b"0", b"-0", b"+1", b"007", b"1", b"-1", b"9223372036854775807",
    b"-9223372036854775808", b"9223372036854775806", b"-9223372036854775807",
    b"9223372036854775808", b"-9223372036854775809", b"18446744073709551616",
    b"4294967296", b"2147483648", b"-2147483649", b"1 ", b" 1", b"1e3",
    b"0x10", b"-", b"+", b"12345678901234567890123",
]

FLOATS = [
    b"1.5", b"-0.0", b"0.0", b"3.14159", b"1e10", b"1.7976931348623157e308",
    b"-1.7976931348623157e308", b"inf", b"-inf", b"+inf", b"nan", b".5",
    b"5.", b"0.1", b"1e-5", b"2.5e-3", b"1E2", b"10.50", b"-3.0e0",
    b"4.9e-324", b"1e400", b"0x1p3", b"1.0 ", b" 2.0", b"1,5", b"100",
    b"3.0000000000000001", b"123456789012345678901234567890",
]

BAD_INTS = [
    b"abc", b"1.5", b"", b" 1", b"1 ", b"9223372036854775808",
    b"-9223372036854775809", b"1e3", b"0x1", b"--1", b"+-1", b"1a", b"\x00",
]

GARBAGE = [b"", b"x", b"0", b"-1", b"NX", b"XX", b"EX", b"GET", b"abc",
           b"\x00"]

ALNUM = b"abcdefghijklmnopqrstuvwxyz0123456789"
WORDCH = b"abcxyz0129 -_:"


class Ctx:
    """Per-stream generator context: the random source and helpers."""

    def __init__(self, rng, t_base, keys=KEYS):
        self.rng = rng
        self.t_base = t_base
        self.key_pool = keys
        self.seq = 0          # expiry uniqueness counter

    # -- choices ---------------------------------------------------------
    def chance(self, p):
        return self.rng.random() < p

    def choice(self, seq):
        return self.rng.choice(seq)

    def randint(self, a, c):
        return self.rng.randint(a, c)

    def opt(self, word):
        """An option keyword, sometimes in another letter case."""
        if self.rng.random() < 0.15:
            w = word.decode()
            w = "".join(ch.lower() if self.rng.random() < 0.5 else ch
                        for ch in w)
            return w.encode()
        return word

    # -- keys ------------------------------------------------------------
    def key(self):
        return self.rng.choice(self.key_pool)

    def keys(self, lo=1, hi=4):
        return [self.key() for _ in range(self.rng.randint(lo, hi))]

    def db(self):
        r = self.rng.random()
        if r < 0.9:
            return b"%d" % self.rng.randint(0, 3)
        return self.rng.choice([b"15", b"16", b"-1", b"abc", b"", b"1.0",
                                b"9223372036854775808", b" 1"])

    # -- values ----------------------------------------------------------
    def word(self, lo=1, hi=12):
        n = self.rng.randint(lo, hi)
        return bytes(self.rng.choice(WORDCH) for _ in range(n))

    def binary(self, lo=0, hi=20):
        n = self.rng.randint(lo, hi)
        special = b"\x00\r\n\xff\x80 \t\"'\\$*:"
        return bytes(self.rng.choice(special) if self.rng.random() < 0.4
                     else self.rng.randint(0, 255) for _ in range(n))

    def int_str(self):
        r = self.rng.random()
        if r < 0.75:
            return b"%d" % self.rng.randint(-100, 1000)
        if r < 0.9:
            return b"%d" % self.rng.randint(-(1 << 62), 1 << 62)
        return self.rng.choice(EDGE_INTS)

    def float_str(self):
        r = self.rng.random()
        if r < 0.5:
            return self.rng.choice(FLOATS)
        if r < 0.8:
            return b"%.3f" % (self.rng.uniform(-1000, 1000))
        return repr(self.rng.uniform(-1e6, 1e6)).encode()

    def val(self):
        """A value for a string key: integers, floats, binary, empty, text."""
        r = self.rng.random()
        if r < 0.30:
            return b"%d" % self.rng.randint(-100, 1000)
        if r < 0.38:
            return self.rng.choice(EDGE_INTS)
        if r < 0.48:
            return self.float_str()
        if r < 0.58:
            return self.binary()
        if r < 0.63:
            return b""
        if r < 0.94:
            return self.word()
        if r < 0.99:
            return bytes(self.rng.choice(ALNUM)
                         for _ in range(self.rng.randint(20, 300)))
        return bytes(self.rng.choice(ALNUM)
                     for _ in range(self.rng.randint(1000, 4000)))

    def small_val(self):
        r = self.rng.random()
        if r < 0.3:
            return b"%d" % self.rng.randint(0, 99)
        if r < 0.5:
            return self.binary(0, 6)
        if r < 0.55:
            return b""
        return self.word(1, 8)

    def bad_int(self):
        return self.rng.choice(BAD_INTS)

    def int_or_bad(self, good, p_bad=0.08):
        """`good` (bytes/int) or, with probability p_bad, a non-integer."""
        if self.rng.random() < p_bad:
            return self.bad_int()
        return b(good)

    # -- expiry times ----------------------------------------------------
    # Future times sit on levels far apart; within a level a per-stream
    # counter makes every value unique and increasing, so whether a new
    # expiry is greater or smaller than the current one never depends on the
    # millisecond a server executed the command.
    LEVELS = (10_000_000, 20_000_000, 30_000_000, 1_000_000_000,
              9_000_000_000_000)
    ABS_OFFSET = 5_000_000

    def _lvl(self):
        self.seq += 1
        if self.seq >= 1_000_000:
            raise RuntimeError("stream too long for the expiry scheme")
        return self.rng.choice(self.LEVELS[:4] if self.rng.random() < 0.9
                               else self.LEVELS) + self.seq

    def rel_s(self):
        return b"%d" % self._lvl()

    def rel_ms(self):
        return b"%d" % (self._lvl() * 1000 + self.rng.randint(0, 999))

    def abs_s(self):
        return b"%d" % (self.t_base + self.ABS_OFFSET + self._lvl())

    def abs_ms(self):
        return b"%d" % ((self.t_base + self.ABS_OFFSET + self._lvl()) * 1000
                        + self.rng.randint(0, 999))

    def past_abs_s(self):
        return self.rng.choice([b"1", b"1000", b"%d" % (self.t_base - 100000),
                                b"%d" % (self.t_base - self.rng.randint(
                                    1000, 10 ** 8))])

    def past_abs_ms(self):
        return self.rng.choice([b"1", b"1000", b"%d" % ((self.t_base - 100000)
                                                         * 1000),
                                b"%d" % ((self.t_base - self.rng.randint(
                                    1000, 10 ** 8)) * 1000)])

    def past_rel(self):
        return self.rng.choice([b"0", b"-1", b"-1000",
                                b"%d" % -self.rng.randint(1, 10 ** 9)])

    BAD_TIMES = [b"0", b"-1", b"-100", b"abc", b"1.5", b"", b" 5",
                 b"9223372036854775807", b"9223372036854775806",
                 b"-9223372036854775808", b"9223372036854776",
                 b"9223372036854775", b"9223372036854775808",
                 b"92233720368547758"]

    # Valid (far future) when relative milliseconds: the same value set twice
    # at different moments would make GT/LT depend on timing.
    _UNSAFE_REL_MS = (b"9223372036854776", b"9223372036854775",
                      b"92233720368547758")

    def bad_time(self, rel_ms=False):
        """An invalid, overflowing or past time.  With rel_ms (PX, PSETEX,
        PEXPIRE) values that would be a valid relative time are avoided."""
        while True:
            t = self.rng.choice(self.BAD_TIMES)
            if not (rel_ms and t in self._UNSAFE_REL_MS):
                return t

    # -- mutation --------------------------------------------------------
    def mutate(self, cmd):
        """Turn a command into a (usually) invalid variant of itself.
        Blocking commands are left alone: a mutation can make their timeout
        0 (BZPOPMIN k 0.01 -> BZPOPMIN k 0.01 0), and then both servers
        block for good on empty keys, which would read as a hang."""
        if cmd.args[0].upper() in BLOCKING:
            return cmd
        args = list(cmd.args)
        r = self.rng.random()
        if r < 0.3 and len(args) > 1:
            del args[self.rng.randrange(1, len(args))]
        elif r < 0.5 and len(args) > 1:
            i = self.rng.randrange(1, len(args))
            args.insert(i, args[i])
        elif r < 0.8:
            args.insert(self.rng.randint(1, len(args)),
                        self.rng.choice(GARBAGE))
        else:
            name = args[0].decode("latin-1")
            args[0] = "".join(ch.lower() if self.rng.random() < 0.5 else ch
                              for ch in name).encode("latin-1")
        c = Cmd(*args, compare=cmd.compare)
        return c


BLOCKING = {b"BLPOP", b"BRPOP", b"BRPOPLPUSH", b"BLMOVE", b"BLMPOP", b"BZPOPMIN", b"BZPOPMAX",
            b"BZMPOP", b"XREAD", b"XREADGROUP", b"WAIT"}


class Picker:
    """Weighted choice among generators."""

    def __init__(self, weighted):
        self.fns = []
        self.cum = []
        total = 0.0
        for w, fn in weighted:
            if w <= 0:
                continue
            total += w
            self.fns.append(fn)
            self.cum.append(total)
        self.total = total

    def pick(self, rng):
        return self.fns[bisect.bisect_right(self.cum, rng.random() * self.total)]
