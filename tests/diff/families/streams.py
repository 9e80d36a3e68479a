"""Streams: XADD and the rest of the Redis 7.0 stream family, consumer
groups included, with explicit IDs, except on one key of its own (AUTO_KEY)
where XADD takes "*": an automatic ID is the clock, so those replies are
compared by shape (an ID "ms-seq" whose ms is within a minute of the
other server's) and the reads of that key mask the IDs.

Run boundaries are exercised through CONFIG SET of stream-node-max-entries
(XTRIM ~, XINFO STREAM's radix-tree-keys and -nodes depend on them) and
through entries larger than stream-node-max-bytes; g_config_reset puts the
defaults back.

What depends on the clock is masked by comparators: the idle time of
XPENDING's extended form and XINFO CONSUMERS, the seen and delivery times
of XINFO STREAM FULL. Idle thresholds (XPENDING IDLE, XCLAIM and
XAUTOCLAIM min-idle-time) are 0 or so large that nothing qualifies, so what
they select never depends on the milliseconds between two commands.
"""

from gencore import Cmd

NAME = "streams"

FIELDS = [b"f", b"g", b"name", b"", b"1", b"-5", b"x" * 70, b"\x00\xff"]
GROUPS = [b"g1", b"g2", b"grp"]
CONSUMERS = [b"alice", b"bob", b"c", b""]
HUGE_IDLE = b"100000000000"


def _key(ctx):
    """Mostly a few keys, so that groups meet their streams."""
    if ctx.chance(0.8):
        return ctx.choice(ctx.key_pool[:4])
    return ctx.key()


def _next_ms(ctx):
    """A clock of this stream of commands: most new entries come after the
    ones before them (the context is per stream, so a replay regenerates
    the same values)."""
    ms = getattr(ctx, "_stream_ms", 0) + ctx.randint(0, 3)
    ctx._stream_ms = ms
    return ms


def _ms(ctx):
    top = getattr(ctx, "_stream_ms", 0)
    return ctx.randint(0, top + 20)


def _id(ctx):
    r = ctx.rng.random()
    if r < 0.75:
        return b"%d-%d" % (_ms(ctx), ctx.randint(0, 3))
    if r < 0.85:
        return b"%d" % _ms(ctx)
    if r < 0.88:
        return ctx.choice((b"0-0", b"0", b"18446744073709551615-18446744073709551614", b"18446744073709551615"))
    return ctx.choice((b"-", b"+", b"abc", b"1-x", b"-1", b"1-", b"1--1", b"18446744073709551616", b"(5"))


def _range_id(ctx):
    r = ctx.rng.random()
    if r < 0.3:
        return ctx.choice((b"-", b"+"))
    if r < 0.5:
        return b"(" + _id(ctx)
    return _id(ctx)


def _value(ctx):
    r = ctx.rng.random()
    if r < 0.5:
        return ctx.small_val()
    if r < 0.7:
        return ctx.int_str()
    return ctx.val()


def _fields(ctx):
    args = []
    same = ctx.chance(0.6)
    for i in range(ctx.randint(1, 3)):
        args += [FIELDS[i] if same else ctx.choice(FIELDS), _value(ctx)]
    return args


def _trim(ctx):
    if ctx.chance(0.5):
        s = [ctx.opt(b"MAXLEN")]
        thr = ctx.choice((b"0", b"1", b"3", b"10", b"100", b"-1", b"x"))
    else:
        s = [ctx.opt(b"MINID")]
        thr = b"%d" % _ms(ctx)
    op = ctx.choice(([], [b"="], [b"~"], [b"~"]))
    lim = []
    if ctx.chance(0.2):
        lim = [ctx.opt(b"LIMIT"), ctx.choice((b"0", b"1", b"10", b"-1"))]
    return s + op + [thr] + lim


# -- masks for what depends on the clock ------------------------------------------------

def _same_masked(a, b, mask):
    """Trees equal except the leaves mask(path-parent, index) says to skip."""
    if a.raw == b.raw:
        return True
    if a.t != b.t:
        return False
    if not a.is_aggregate() or not b.is_aggregate():
        return False
    if len(a.v) != len(b.v):
        return False
    for i, (x, y) in enumerate(zip(a.v, b.v)):
        if mask(a, i):
            if x.t != y.t:
                return False
            continue
        if not _same_masked(x, y, mask):
            return False
    return True


def _after_key(names):
    def mask(parent, i):
        return i > 0 and parent.v[i - 1].t == "$" and parent.v[i - 1].v in names
    return mask


def xpending_compare(a, b):
    # extended form: [id, consumer, idle, count] entries, idle masked
    def mask(parent, i):
        return len(parent.v) == 4 and i == 2 and parent.v[0].t == "$" and parent.v[3].t == ":"
    return _same_masked(a, b, mask)


def xinfo_consumers_compare(a, b):
    return _same_masked(a, b, _after_key((b"idle",)))


def xinfo_full_compare(a, b):
    keyed = _after_key((b"seen-time",))

    def mask(parent, i):
        if keyed(parent, i):
            return True
        # group PEL [id, consumer, time, count], consumer PEL [id, time, count]
        n = len(parent.v)
        if n == 4 and i == 2 and parent.v[0].t == "$" and parent.v[1].t == "$" and parent.v[3].t == ":":
            return True
        if n == 3 and i == 1 and parent.v[0].t == "$" and parent.v[1].t == ":" and parent.v[2].t == ":":
            return True
        return False
    return _same_masked(a, b, mask)


# -- writes ------------------------------------------------------------------

def g_xadd(ctx):
    args = [b"XADD", _key(ctx)]
    if ctx.chance(0.1):
        args.append(ctx.opt(b"NOMKSTREAM"))
    if ctx.chance(0.2):
        args += _trim(ctx)
    r = ctx.rng.random()
    if r < 0.15:
        args.append(b"%d-*" % _next_ms(ctx))
    elif r < 0.75:
        args.append(b"%d-%d" % (_next_ms(ctx), ctx.randint(0, 2)))
    elif r < 0.995:
        args.append(_id(ctx))
    else:
        args.append(b"18446744073709551615-18446744073709551615")
    args += _fields(ctx)
    if ctx.chance(0.03):
        args.pop()
    return Cmd(*args)


def g_xadd_run(ctx):
    """Several entries in a row with growing IDs (fills runs)."""
    k = _key(ctx)
    out = []
    for i in range(ctx.randint(3, 30)):
        out.append(Cmd(b"XADD", k, b"%d-%d" % (_next_ms(ctx), 0), b"f", b"%d" % i, b"g", b"v" * (i % 7)))
    return out


AUTO_KEY = b"xauto"


def _auto_id(node):
    """(ms, seq) of a bulk "ms-seq", else None."""
    if node.t != "$" or not isinstance(node.v, bytes):
        return None
    ms, dash, seq = node.v.partition(b"-")
    if not dash or not ms.isdigit() or not seq.isdigit():
        return None
    return int(ms), int(seq)


def auto_id_compare(a, b):
    """XADD * : both an ID of the clock's shape, about the same time."""
    if a.raw == b.raw:
        return True
    x, y = _auto_id(a), _auto_id(b)
    return x is not None and y is not None and abs(x[0] - y[0]) < 60000


def auto_range_compare(a, b):
    """XRANGE of AUTO_KEY: the same entries, each entry's ID by shape."""
    if a.raw == b.raw:
        return True
    if a.t != b.t or not a.is_aggregate() or not b.is_aggregate() or len(a.v) != len(b.v):
        return False
    for x, y in zip(a.v, b.v):
        if not x.is_aggregate() or not y.is_aggregate() or len(x.v) != 2 or len(y.v) != 2:
            return False
        if not auto_id_compare(x.v[0], y.v[0]) or x.v[1].raw != y.v[1].raw:
            return False
    return True


def g_xadd_auto(ctx):
    """XADD "*" on AUTO_KEY, sometimes trimmed, then reads of it: the
    length exactly, the entries with their IDs by shape; an explicit ID
    below the clock's is refused by both."""
    out = []
    for i in range(ctx.randint(1, 4)):
        args = [b"XADD", AUTO_KEY]
        if ctx.chance(0.3):
            args += [b"MAXLEN", b"=", b"%d" % ctx.randint(0, 6)]
        args += [b"*", b"n", b"%d" % i] + ([b"v", ctx.small_val()] if ctx.chance(0.5) else [])
        out.append(Cmd(*args, compare=auto_id_compare))
    if ctx.chance(0.2):
        out.append(Cmd(b"XADD", AUTO_KEY, b"5-1", b"f", b"v"))
    out.append(Cmd(b"XLEN", AUTO_KEY))
    out.append(Cmd(b"XRANGE", AUTO_KEY, b"-", b"+", b"COUNT", b"%d" % ctx.randint(1, 8), compare=auto_range_compare))
    if ctx.chance(0.2):
        out.append(Cmd(b"DEL", AUTO_KEY))
    return out


def g_xdel(ctx):
    return Cmd(b"XDEL", _key(ctx), *[_id(ctx) for _ in range(ctx.randint(1, 4))])


def g_xtrim(ctx):
    return Cmd(b"XTRIM", _key(ctx), *_trim(ctx))


def g_xsetid(ctx):
    args = [b"XSETID", _key(ctx), _id(ctx)]
    if ctx.chance(0.3):
        args += [ctx.opt(b"ENTRIESADDED"), ctx.choice((b"0", b"5", b"1000", b"-1"))]
    if ctx.chance(0.3):
        args += [ctx.opt(b"MAXDELETEDID"), _id(ctx)]
    return Cmd(*args)


# -- reads -------------------------------------------------------------------

def g_xrange(ctx):
    name = ctx.choice((b"XRANGE", b"XREVRANGE"))
    args = [name, _key(ctx), _range_id(ctx), _range_id(ctx)]
    if ctx.chance(0.4):
        args += [ctx.opt(b"COUNT"), ctx.choice((b"0", b"1", b"2", b"5", b"-1", b"x"))]
    return Cmd(*args)


def g_xlen(ctx):
    return Cmd(b"XLEN", _key(ctx))


def g_xread(ctx):
    args = [b"XREAD"]
    if ctx.chance(0.4):
        args += [ctx.opt(b"COUNT"), ctx.choice((b"0", b"1", b"3", b"-2"))]
    if ctx.chance(0.05):
        args += [ctx.opt(b"BLOCK"), ctx.choice((b"-1", b"x"))]
    keys = ctx.keys(1, 3)
    args.append(ctx.opt(b"STREAMS"))
    args += keys
    args += [ctx.choice((_id(ctx), b"$", b"0")) for _ in keys]
    if ctx.chance(0.05):
        args.pop()
    return Cmd(*args)


def g_info(ctx):
    k = _key(ctx)
    r = ctx.rng.random()
    if r < 0.45:
        return Cmd(b"XINFO", b"STREAM", k)
    if r < 0.65:
        return Cmd(b"XINFO", b"GROUPS", k)
    if r < 0.8:
        return Cmd(b"XINFO", b"CONSUMERS", k, ctx.choice(GROUPS), compare=xinfo_consumers_compare)
    if r < 0.95:
        args = [b"XINFO", b"STREAM", k, b"FULL"]
        if ctx.chance(0.5):
            args += [b"COUNT", ctx.choice((b"0", b"1", b"3", b"-1"))]
        return Cmd(*args, compare=xinfo_full_compare)
    return Cmd(b"XINFO", ctx.choice((b"HELP", b"FOO", b"STREAM")), *([k] if ctx.chance(0.5) else []))


def g_encoding(ctx):
    k = _key(ctx)
    return [Cmd(b"TYPE", k), Cmd(b"OBJECT", b"ENCODING", k)]


# -- groups ------------------------------------------------------------------

def g_xgroup_create(ctx):
    args = [b"XGROUP", b"CREATE", _key(ctx), ctx.choice(GROUPS), ctx.choice((b"$", b"0", b"0", _id(ctx)))]
    if ctx.chance(0.7):
        args.append(ctx.opt(b"MKSTREAM"))
    if ctx.chance(0.2):
        args += [ctx.opt(b"ENTRIESREAD"), ctx.choice((b"0", b"3", b"-1", b"-2"))]
    return Cmd(*args)


def g_xgroup_other(ctx):
    k, g = _key(ctx), ctx.choice(GROUPS)
    r = ctx.rng.random()
    if r < 0.3:
        args = [b"XGROUP", b"SETID", k, g, ctx.choice((b"$", b"0", _id(ctx)))]
        if ctx.chance(0.3):
            args += [b"ENTRIESREAD", ctx.choice((b"0", b"2", b"-1"))]
        return Cmd(*args)
    if r < 0.5:
        return Cmd(b"XGROUP", b"CREATECONSUMER", k, g, ctx.choice(CONSUMERS))
    if r < 0.7:
        return Cmd(b"XGROUP", b"DELCONSUMER", k, g, ctx.choice(CONSUMERS))
    if r < 0.9:
        return Cmd(b"XGROUP", b"DESTROY", k, g)
    return Cmd(b"XGROUP", ctx.choice((b"HELP", b"FOO", b"CREATE")), *([k] if ctx.chance(0.5) else []))


def g_xreadgroup(ctx):
    args = [b"XREADGROUP", ctx.opt(b"GROUP"), ctx.choice(GROUPS), ctx.choice(CONSUMERS)]
    if ctx.chance(0.5):
        args += [ctx.opt(b"COUNT"), ctx.choice((b"1", b"2", b"5", b"0"))]
    if ctx.chance(0.2):
        args.append(ctx.opt(b"NOACK"))
    keys = [_key(ctx) for _ in range(ctx.randint(1, 2))]
    args.append(ctx.opt(b"STREAMS"))
    args += keys
    args += [ctx.choice((b">", b">", b">", b"0", _id(ctx), b"$")) for _ in keys]
    return Cmd(*args)


def g_xack(ctx):
    return Cmd(b"XACK", _key(ctx), ctx.choice(GROUPS), *[_id(ctx) for _ in range(ctx.randint(1, 3))])


def g_xpending(ctx):
    k, g = _key(ctx), ctx.choice(GROUPS)
    if ctx.chance(0.4):
        return Cmd(b"XPENDING", k, g)
    args = [b"XPENDING", k, g]
    if ctx.chance(0.3):
        args += [ctx.opt(b"IDLE"), ctx.choice((b"0", HUGE_IDLE, b"x"))]
    args += [_range_id(ctx), _range_id(ctx), ctx.choice((b"10", b"1", b"0", b"-1", b"x"))]
    if ctx.chance(0.4):
        args.append(ctx.choice(CONSUMERS))
    return Cmd(*args, compare=xpending_compare)


def g_xclaim(ctx):
    args = [b"XCLAIM", _key(ctx), ctx.choice(GROUPS), ctx.choice(CONSUMERS),
            ctx.choice((b"0", b"0", b"0", HUGE_IDLE, b"x"))]
    args += [_id(ctx) for _ in range(ctx.randint(1, 3))]
    for _ in range(ctx.randint(0, 2)):
        r = ctx.rng.random()
        if r < 0.25:
            args.append(ctx.opt(b"JUSTID"))
        elif r < 0.45:
            args.append(ctx.opt(b"FORCE"))
        elif r < 0.6:
            args += [ctx.opt(b"RETRYCOUNT"), ctx.choice((b"0", b"5", b"x"))]
        elif r < 0.75:
            args += [ctx.opt(b"LASTID"), _id(ctx)]
        elif r < 0.85:
            args += [ctx.opt(b"IDLE"), ctx.choice((b"0", b"x"))]
        else:
            args.append(b"BOGUS")
    return Cmd(*args)


def g_xautoclaim(ctx):
    args = [b"XAUTOCLAIM", _key(ctx), ctx.choice(GROUPS), ctx.choice(CONSUMERS), ctx.choice((b"0", HUGE_IDLE)),
            _range_id(ctx)]
    if ctx.chance(0.4):
        args += [ctx.opt(b"COUNT"), ctx.choice((b"1", b"2", b"10", b"0", b"-1"))]
    if ctx.chance(0.4):
        args.append(ctx.opt(b"JUSTID"))
    return Cmd(*args)


def g_config(ctx):
    """stream-node-max-bytes stays 4096: redis-server 7.0.15 corrupts a
    stream when the limit drops below the size of its last node and an
    entry is added (an assertion in streamIteratorGetID on the next read),
    so only the entry limit changes."""
    e = ctx.choice((b"0", b"1", b"2", b"5", b"100", b"100"))
    return [Cmd(b"CONFIG", b"SET", b"stream-node-max-entries", e),
            Cmd(b"CONFIG", b"SET", b"stream-node-max-bytes", b"4096")]


def g_config_reset(ctx):
    return [Cmd(b"CONFIG", b"SET", b"stream-node-max-entries", b"100"),
            Cmd(b"CONFIG", b"SET", b"stream-node-max-bytes", b"4096")]


def g_other_type(ctx):
    """A string key among the stream keys: WRONGTYPE for stream commands."""
    return Cmd(b"SET", _key(ctx), ctx.small_val())


def g_copy(ctx):
    """COPY of a stream is a deep copy: change the copy, read the original."""
    k1, k2 = _key(ctx), _key(ctx)
    return [Cmd(b"COPY", k1, k2, b"REPLACE"), Cmd(b"XADD", k2, b"500-0", b"f", b"changed"),
            Cmd(b"XLEN", k1), Cmd(b"XINFO", b"GROUPS", k2)]


GENERATORS = [
    (14, g_xadd),
    (3, g_xadd_run),
    (5, g_xdel),
    (4, g_xtrim),
    (2, g_xsetid),
    (10, g_xrange),
    (3, g_xlen),
    (5, g_xread),
    (5, g_info),
    (2, g_encoding),
    (6, g_xgroup_create),
    (4, g_xgroup_other),
    (10, g_xreadgroup),
    (4, g_xack),
    (5, g_xpending),
    (5, g_xclaim),
    (3, g_xautoclaim),
    (0.5, g_config),
    (0.5, g_config_reset),
    (0.2, g_other_type),
    (1, g_copy),
    (2, g_xadd_auto),
]

CREATORS = [
    (4, g_xadd),
    (1, g_xadd_run),
]

MIX = {"keyspace": 0.06}
