"""SORT and SORT_RO over lists, sets and sorted sets: numeric and ALPHA
order, ASC/DESC, LIMIT, BY patterns (string keys, hash fields, "nosort"),
GET patterns ('#', strings, hash fields, missing keys), STORE, and the
errors.

Keys. The sources have keys of their own, one type each, so a generator
knows what it sorts: sl0..sl2 are lists, ss0..ss2 sets, sz0..sz2 sorted
sets (only this family writes them; STORE only targets lists and the
scratch key "sdst"). Weights and GET values live in w_<element> (strings)
and h_<element> (hashes with fields f and g).

Where Redis gives no order the comparison is looser:
  * a set sorted BY a pattern without '*' (and without STORE) comes in its
    iteration order: elements are compared as a multiset (in groups of the
    GET patterns), and only the length when LIMIT picks a part of it;
  * ALPHA with BY can tie (equal or missing weights); ties keep the input
    order of a stable sort, and a set's or sorted set's input order is its
    hash table's: compared as a multiset; with LIMIT Redis switches to an
    unstable partial quicksort, so only the length is compared.
The values never overflow or underflow a double: Redis does not reset errno
before its strtod, so after an ERANGE it refuses valid numbers in later
SORTs for a while (Goblin does not), which no comparison could follow.
"""

from gencore import Cmd
import normalize

NAME = "sort"

LISTS = [b"sl0", b"sl1", b"sl2"]
SETS = [b"ss0", b"ss1", b"ss2"]
ZSETS = [b"sz0", b"sz1", b"sz2"]
DST = b"sdst"
STR = b"sstr"

# Elements: numbers of every spelling strtod accepts, a few it refuses,
# words (ALPHA), and the empty element. No NUL bytes: ALPHA compares them
# as C strings in Redis, which ties elements with a common prefix.
NUMS = [b"%d" % i for i in range(-3, 15)] + [
    b"1.5", b"-2.25", b"0.1", b"1e3", b"-0", b"+5", b" 7", b"0x10", b"inf",
    b"-inf", b"3.0", b"007", b"100", b"99", b"1e2",
]
BAD = [b"nan", b"abc", b"1 ", b"1x", b"--1"]
WORDS = [b"a", b"b", b"c", b"apple", b"Banana", b"cherry", b"a b", b"Z",
         b"", b"10x", b"\xc3\xa9t\xc3\xa9", b"\xff"]

WEIGHTS = NUMS + [b"", b"x", b"inf"]


def _num(ctx):
    return ctx.choice(NUMS)


def _elem(ctx, numeric):
    if numeric:
        return ctx.choice(BAD) if ctx.chance(0.02) else _num(ctx)
    return ctx.choice(WORDS + NUMS[:10])


def _src(ctx):
    r = ctx.rng.random()
    if r < 0.4:
        return b"list", ctx.choice(LISTS)
    if r < 0.7:
        return b"set", ctx.choice(SETS)
    if r < 0.95:
        return b"zset", ctx.choice(ZSETS)
    return b"other", ctx.choice((STR, b"nokey"))


# -- filling the sources ------------------------------------------------------------

def g_fill_list(ctx):
    k = ctx.choice(LISTS)
    numeric = ctx.chance(0.6)
    n = ctx.randint(1, 12)
    cmds = []
    if ctx.chance(0.3):
        cmds.append(Cmd(b"DEL", k))
    cmds.append(Cmd(b"RPUSH", k, *[_elem(ctx, numeric) for _ in range(n)]))
    return cmds


def g_fill_set(ctx):
    k = ctx.choice(SETS)
    numeric = ctx.chance(0.6)
    n = ctx.choice((1, 3, 8, 15, 70, 600))
    cmds = []
    if ctx.chance(0.3):
        cmds.append(Cmd(b"DEL", k))
    if n > 20:
        base = ctx.randint(-100, 100)
        cmds.append(Cmd(b"SADD", k, *[b"%d" % (base + i * 3) for i in range(n)]))
    else:
        cmds.append(Cmd(b"SADD", k, *[_elem(ctx, numeric) for _ in range(n)]))
    return cmds


def g_fill_zset(ctx):
    k = ctx.choice(ZSETS)
    numeric = ctx.chance(0.6)
    n = ctx.choice((1, 3, 8, 15, 200))
    args = []
    for i in range(n):
        m = _elem(ctx, numeric) if n <= 20 else b"%d" % ctx.randint(-500, 500)
        args += [b"%d" % ctx.randint(-5, 5), m]
    cmds = []
    if ctx.chance(0.3):
        cmds.append(Cmd(b"DEL", k))
    cmds.append(Cmd(b"ZADD", k, *args))
    return cmds


def g_srem(ctx):
    return Cmd(b"SREM", ctx.choice(SETS), *[_elem(ctx, ctx.chance(0.5)) for _ in range(3)])


def g_weights(ctx):
    """Weights and GET values: strings w_<e> and hash fields h_<e>."""
    elems = [_elem(ctx, ctx.chance(0.5)) for _ in range(ctx.randint(1, 6))]
    if ctx.chance(0.6):
        args = []
        for e in elems:
            args += [b"w_" + e, ctx.choice(WEIGHTS)]
        return Cmd(b"MSET", *args)
    e = ctx.choice(elems)
    return Cmd(b"HSET", b"h_" + e, ctx.choice((b"f", b"g")), ctx.choice(WEIGHTS))


def g_weight_other(ctx):
    """A weight key of another type: it is no weight."""
    e = _elem(ctx, True)
    return [Cmd(b"DEL", b"w_" + e), Cmd(b"RPUSH", b"w_" + e, b"1")]


def g_other(ctx):
    return Cmd(b"SET", STR, ctx.small_val())


# -- SORT -------------------------------------------------------------------------

_BY = [b"w_*", b"w_*", b"h_*->f", b"h_*->g", b"nosort", b"#", b"w_", b"*",
       b"h_*->", b"x_*_y", b"w_*->f"]
_GET = [b"#", b"w_*", b"h_*->f", b"h_*->g", b"nothing", b"x_*", b"*"]


def _groups(k):
    """Multiset comparison in groups of k elements (one per GET)."""
    def cmp(a, b):
        if a.raw == b.raw:
            return True
        if a.is_error() or b.is_error():
            return False
        if a.t != b.t or not a.is_aggregate() or not b.is_aggregate():
            return False
        if len(a.v) != len(b.v) or len(a.v) % k:
            return False
        ga = sorted(b"".join(x.raw for x in a.v[i:i + k]) for i in range(0, len(a.v), k))
        gb = sorted(b"".join(x.raw for x in b.v[i:i + k]) for i in range(0, len(b.v), k))
        return ga == gb
    cmp.__name__ = "groups(%d)" % k
    return cmp


def _sort_cmd(ctx, readonly, store):
    kind, src = _src(ctx)
    args = [b"SORT_RO" if readonly else b"SORT", src]
    opts = []
    by = None
    if ctx.chance(0.45):
        by = ctx.choice(_BY)
        opts.append([ctx.opt(b"BY"), by])
    gets = 0
    for _ in range(ctx.choice((0, 0, 1, 2, 3))):
        opts.append([ctx.opt(b"GET"), ctx.choice(_GET)])
        gets += 1
    limit = False
    if ctx.chance(0.35):
        limit = True
        opts.append([ctx.opt(b"LIMIT"), b"%d" % ctx.randint(-2, 8), b"%d" % ctx.randint(-1, 8)])
    alpha = ctx.chance(0.4)
    if alpha:
        opts.append([ctx.opt(b"ALPHA")])
    if ctx.chance(0.4):
        opts.append([ctx.opt(ctx.choice((b"ASC", b"DESC")))])
    nosort = by is not None and b"*" not in by
    k = max(gets, 1)
    cmp = None
    if kind == b"set" and nosort and not store:
        cmp = normalize.shape if limit else _groups(k)
    elif alpha and by is not None and not nosort:
        if limit:
            cmp = normalize.shape
        elif kind != b"list":
            cmp = _groups(k)
    dst = None
    if store:
        # A result whose order is not Redis's to define only ever goes to
        # the scratch key: a source list in different orders on the two
        # servers would make every later comparison fail.
        dst = DST if cmp is not None or ctx.chance(0.6) else ctx.choice(LISTS)
        opts.append([ctx.opt(b"STORE"), dst])
    ctx.rng.shuffle(opts)
    for o in opts:
        args += o
    return args, dst, cmp


def g_sort(ctx):
    args, _, cmp = _sort_cmd(ctx, ctx.chance(0.3), False)
    return [Cmd(*args, compare=cmp)]


def g_sort_store(ctx):
    """SORT ... STORE, then the stored list. The scratch key is emptied
    first (a STORE that fails leaves it alone, and it may hold a list whose
    order differs between the servers from an earlier ambiguous STORE)."""
    args, dst, cmp = _sort_cmd(ctx, False, True)
    lr = Cmd(b"LRANGE", dst, b"0", b"-1", compare=cmp)
    cmds = [Cmd(*args), lr, Cmd(b"TYPE", dst)]
    if dst == DST:
        cmds.insert(0, Cmd(b"DEL", DST))
    return cmds


def g_sort_mutable(ctx):
    """A plain SORT that the driver may mutate into syntax errors."""
    kind, src = _src(ctx)
    return Cmd(b"SORT", src, ctx.opt(b"LIMIT"), b"0", b"%d" % ctx.randint(0, 5))


def g_sort_errors(ctx):
    _, src = _src(ctx)
    bad = ctx.choice(([b"LIMIT"], [b"LIMIT", b"0"], [b"LIMIT", b"x", b"1"],
                      [b"LIMIT", b"0", b"1.5"], [b"BY"], [b"GET"], [b"STORE"],
                      [b"FOO"], [b"ALPHA", b"BAR"],
                      [b"LIMIT", b"0", b"99999999999999999999"]))
    cmds = [Cmd(b"SORT", src, *bad)]
    if ctx.chance(0.3):
        cmds.append(Cmd(b"SORT_RO", src, b"STORE", DST))
    return cmds


def g_encoding(ctx):
    """SORT converts a listpack sorted set to skiplist (as Redis does)."""
    k = ctx.choice(ZSETS)
    return [Cmd(b"OBJECT", b"ENCODING", k), Cmd(b"SORT_RO", k, b"ALPHA", b"LIMIT", b"0", b"3"),
            Cmd(b"OBJECT", b"ENCODING", k)]


GENERATORS = [
    (4, g_fill_list),
    (4, g_fill_set),
    (3, g_fill_zset),
    (1, g_srem),
    (5, g_weights),
    (0.5, g_weight_other),
    (0.3, g_other),
    (16, g_sort),
    (5, g_sort_store),
    (1, g_sort_mutable),
    (1.5, g_sort_errors),
    (1, g_encoding),
]
