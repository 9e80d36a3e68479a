"""Geo commands: GEOADD (NX/XX/CH), GEOPOS, GEOHASH, GEODIST, GEORADIUS and
GEORADIUSBYMEMBER (with their _RO forms, STORE and STOREDIST), GEOSEARCH
and GEOSEARCHSTORE, with every option, unit and error, and ZRANGE read-backs
of the stored results.

Determinism: a search without ASC/DESC returns members in the order the
server scans its geohash cells, which both servers share; so do COUNT ANY
results.  What Redis leaves to chance is the order of equal distances when
COUNT cuts a longer result (a partial quicksort), so every member has its
own positions (two per member, all distinct and irregular: no two points
are ever at the same distance from a centre), and COUNT is only used on
keys that hold such positions.  Keys of the "zw:" pool get arbitrary ZADD
scores (negative, huge, inf: positions Redis still decodes, many of them
equal), "gd:" keys the distances STOREDIST writes; both are searched
without COUNT.
"""

import random

from gencore import Cmd, KEYS

NAME = "geo"

# Fixed, irregular positions: member i may sit at POS[i][0] or POS[i][1].
_rng = random.Random(20240611)


def _coord(lo, hi):
    return b"%.6f" % _rng.uniform(lo, hi)


MEMBERS = [b"m%d" % i for i in range(24)] + [
    b"", b"sp ace", b"\x00bin", b"10", b"-1", b"x" * 70]
POS = []
for _i, _m in enumerate(MEMBERS):
    if _i < 18:       # Europe: most searches find several of these
        POS.append([(_coord(-10, 30), _coord(35, 60)) for _ in range(2)])
    elif _i < 22:     # near the antimeridian and the poles
        POS.append([(_coord(175, 180), _coord(-84, 84)),
                    (_coord(-180, -175), _coord(80, 85.05))])
    else:             # anywhere
        POS.append([(_coord(-180, 180), _coord(-85, 85)) for _ in range(2)])
BULK_POS = [(_coord(-20, 40), _coord(30, 65)) for _ in range(400)]

GEO_KEYS = [KEYS[0], KEYS[1], KEYS[2], KEYS[12], KEYS[15]]
WEIRD_KEYS = [b"zw:a", b"zw:b"]
DIST_KEYS = [b"gd:a", b"gd:b"]
WEIRD_SCORES = [b"0", b"-1", b"1.5", b"inf", b"-inf", b"1e300", b"-1e300",
                b"9007199254740992", b"4503599627370496", b"18446744073709551616",
                b"9223372036854775808", b"3479099956230698", b"13510798882111488",
                b"123456789", b"-0.5"]

BAD_COORDS = [(b"180.000001", b"0"), (b"-181", b"10"), (b"0", b"85.06"),
              (b"0", b"-90"), (b"inf", b"0"), (b"abc", b"1"), (b"1", b""),
              (b"nan", b"0"), (b" 1", b"1"), (b"1000", b"x")]
EDGE_COORDS = [(b"180", b"85.05112878"), (b"-180", b"-85.05112878"),
               (b"0", b"0"), (b"180", b"0"), (b"-180", b"85.05112878")]

UNITS = [b"km", b"km", b"km", b"mi", b"KM", b"Mi", b"m", b"ft", b"M", b"FT"]
BAD_UNITS = [b"yd", b"", b"kms", b"M\x00x", b"meters"]
RADII = [b"0", b"1", b"10", b"50", b"100", b"250", b"500", b"500", b"800",
         b"1000", b"1000", b"1500", b"2000", b"2000", b"3000", b"5000",
         b"20000", b"0.5", b"1e3"]
RADII_M = [b"0", b"100", b"5000", b"100000", b"500000", b"800000", b"1000000",
           b"1e6", b"2000000", b"3000000", b"20000000"]
BAD_RADII = [b"-1", b"abc", b"", b"nan", b"-0.001", b" 1"]


def _member(ctx):
    """Mostly the first dozen, so that lookups often find their member."""
    if ctx.chance(0.6):
        return ctx.choice(MEMBERS[:12])
    return ctx.choice(MEMBERS)


def _pos_of(ctx, i):
    return ctx.choice(POS[i])


def _triple(ctx):
    r = ctx.rng.random()
    i = ctx.randint(0, len(MEMBERS) - 1)
    if r < 0.03:
        lon, lat = ctx.choice(BAD_COORDS)
    else:
        lon, lat = _pos_of(ctx, i)
    return [lon, lat, MEMBERS[i]]


def _unit(ctx, p_bad=0.03):
    if ctx.chance(p_bad):
        return ctx.choice(BAD_UNITS)
    return ctx.opt(ctx.choice(UNITS))


def _radius(ctx, p_bad=0.03, unit=b"km"):
    """A radius (or box side) that means something in unit."""
    if ctx.chance(p_bad):
        return ctx.choice(BAD_RADII)
    if unit.lower() in (b"m", b"ft"):
        return ctx.choice(RADII_M)
    return ctx.choice(RADII)


def _distance(ctx, p_bad=0.03):
    """<radius> <unit>"""
    unit = _unit(ctx)
    return [_radius(ctx, p_bad, unit), unit]


def _center(ctx):
    r = ctx.rng.random()
    if r < 0.5:
        return list(_pos_of(ctx, ctx.randint(0, len(MEMBERS) - 1)))
    if r < 0.9:
        return [b"%.5f" % ctx.rng.uniform(-10, 30),
                b"%.5f" % ctx.rng.uniform(35, 60)]
    if r < 0.97:
        return list(ctx.choice(EDGE_COORDS))
    return list(ctx.choice(BAD_COORDS))


def _geo_key(ctx):
    """Mostly a few keys, so that sets grow and searches find something."""
    if ctx.chance(0.8):
        return ctx.choice(GEO_KEYS)
    return ctx.key()


def _store_key(ctx):
    """Destinations are mostly other keys than the sources (a store into
    a source shrinks it)."""
    if ctx.chance(0.2):
        return ctx.choice(GEO_KEYS)
    return ctx.key()


def _options(ctx, count_ok=True):
    """Optional WITH* / ASC|DESC / COUNT [ANY] words, shuffled."""
    opts = []
    for w in (b"WITHDIST", b"WITHHASH", b"WITHCOORD"):
        if ctx.chance(0.3):
            opts.append([ctx.opt(w)])
    if ctx.chance(0.5):
        opts.append([ctx.opt(ctx.choice((b"ASC", b"DESC")))])
    if count_ok and ctx.chance(0.4):
        c = [ctx.opt(b"COUNT"), ctx.choice((b"1", b"2", b"3", b"5", b"100"))]
        if ctx.chance(0.3):
            c.append(ctx.opt(b"ANY"))
        opts.append(c)
    elif ctx.chance(0.03):
        opts.append(ctx.choice(([b"ANY"], [b"COUNT", b"0"], [b"COUNT", b"-2"],
                                [b"COUNT", b"x"], [b"COUNT"], [b"FOO"],
                                [b"ASC", b"DESC"])))
    ctx.rng.shuffle(opts)
    return [a for o in opts for a in o]


# -- writes -------------------------------------------------------------------

def g_geoadd(ctx):
    args = [b"GEOADD", _geo_key(ctx)]
    r = ctx.rng.random()
    if r < 0.5:
        pass
    elif r < 0.95:
        args += [ctx.opt(f) for f in ctx.rng.sample([b"NX", b"XX", b"CH"],
                                                     ctx.randint(1, 2))]
    else:
        args += ctx.choice(([b"NX", b"XX"], [b"CH", b"CH"], [b"GT"],
                            [b"XX", b"CH", b"NX"], [b"INCR"]))
    for _ in range(ctx.randint(1, 6)):
        args += _triple(ctx)
    if ctx.chance(0.02):
        args.pop()
    return Cmd(*args)


def g_geoadd_edges(ctx):
    """The map's corners and edges, one member per position (two members
    at one position would tie in distance)."""
    i = ctx.randint(0, len(EDGE_COORDS) - 1)
    lon, lat = EDGE_COORDS[i]
    return Cmd(b"GEOADD", _geo_key(ctx), lon, lat, b"edge:%d" % i)


def g_geoadd_bulk(ctx):
    """Enough members to cross zset-max-listpack-entries (128)."""
    k = _geo_key(ctx)
    n = ctx.randint(120, 200)
    base = ctx.randint(0, len(BULK_POS) - n)
    args = [b"GEOADD", k]
    for i in range(base, base + n):
        lon, lat = BULK_POS[i]
        args += [lon, lat, b"bulk:%d" % i]
    return [Cmd(*args), Cmd(b"OBJECT", b"ENCODING", k)]


def g_zrem(ctx):
    return Cmd(b"ZREM", _geo_key(ctx), *[_member(ctx)
                                         for _ in range(ctx.randint(1, 3))])


def g_set_string(ctx):
    """Strings for WRONGTYPE, mostly outside the keys the sets grow in."""
    return Cmd(b"SET", ctx.key(), ctx.small_val())


# -- reads -----------------------------------------------------------------------

def g_geopos(ctx):
    return Cmd(b"GEOPOS", _geo_key(ctx), *[_member(ctx)
                                           for _ in range(ctx.randint(1, 4))])


def g_geohash(ctx):
    return Cmd(b"GEOHASH", _geo_key(ctx), *[_member(ctx)
                                            for _ in range(ctx.randint(1, 4))])


def g_geodist(ctx):
    args = [b"GEODIST", _geo_key(ctx), _member(ctx), _member(ctx)]
    if ctx.chance(0.6):
        args.append(_unit(ctx, 0.06))
    if ctx.chance(0.02):
        args.append(b"km")
    return Cmd(*args)


def g_zrange(ctx):
    return Cmd(b"ZRANGE", _geo_key(ctx), b"0", b"-1", b"WITHSCORES")


# -- searches -------------------------------------------------------------------

def _dst_for(ctx, word):
    """STOREDIST results hold distances as scores, which decode to positions
    that can coincide: they go to the DIST_KEYS pool, never searched with
    COUNT."""
    if word.upper() == b"STOREDIST":
        return ctx.choice(DIST_KEYS)
    return _store_key(ctx)


def _store(ctx, args):
    """STORE / STOREDIST dst (sometimes twice: the last one counts); returns
    the destination for the read-backs."""
    for _ in range(2 if ctx.chance(0.1) else 1):
        word = ctx.opt(ctx.choice((b"STORE", b"STOREDIST")))
        dst = _dst_for(ctx, word)
        args += [word, dst]
    return dst


def g_georadius(ctx):
    ro = ctx.chance(0.2)
    name = b"GEORADIUS_RO" if ro else b"GEORADIUS"
    lon, lat = _center(ctx)
    args = [name, _geo_key(ctx), lon, lat] + _distance(ctx)
    if ro or ctx.chance(0.7):
        args += _options(ctx)
        if ro and ctx.chance(0.03):
            args += [b"STORE", _geo_key(ctx)]
        return Cmd(*args)
    if ctx.chance(0.5):
        args += [ctx.opt(ctx.choice((b"ASC", b"DESC")))]
    if ctx.chance(0.3):
        args += [ctx.opt(b"COUNT"), ctx.choice((b"1", b"2", b"4"))]
    if ctx.chance(0.04):
        args.append(ctx.opt(ctx.choice((b"WITHDIST", b"WITHHASH", b"WITHCOORD"))))
    dst = _store(ctx, args)
    return [Cmd(*args), Cmd(b"ZRANGE", dst, b"0", b"-1", b"WITHSCORES"),
            Cmd(b"OBJECT", b"ENCODING", dst)]


def g_georadiusbymember(ctx):
    ro = ctx.chance(0.2)
    name = b"GEORADIUSBYMEMBER_RO" if ro else b"GEORADIUSBYMEMBER"
    args = [name, _geo_key(ctx), _member(ctx)] + _distance(ctx)
    store = not ro and ctx.chance(0.3)
    if not store:
        args += _options(ctx)
        return Cmd(*args)
    if ctx.chance(0.5):
        args += [ctx.opt(ctx.choice((b"ASC", b"DESC")))]
    if ctx.chance(0.05):
        args.append(ctx.opt(b"WITHDIST"))
    dst = _store(ctx, args)
    return [Cmd(*args), Cmd(b"ZRANGE", dst, b"0", b"-1", b"WITHSCORES")]


def _from_by(ctx):
    """FROMMEMBER / FROMLONLAT and BYRADIUS / BYBOX words (rarely wrong)."""
    parts = []
    if ctx.chance(0.5):
        parts.append([ctx.opt(b"FROMMEMBER"), _member(ctx)])
    else:
        parts.append([ctx.opt(b"FROMLONLAT")] + _center(ctx))
    if ctx.chance(0.5):
        parts.append([ctx.opt(b"BYRADIUS")] + _distance(ctx))
    else:
        unit = _unit(ctx)
        parts.append([ctx.opt(b"BYBOX"), _radius(ctx, 0.03, unit),
                      _radius(ctx, 0.02, unit), unit])
    r = ctx.rng.random()
    if r < 0.03:
        parts.pop(ctx.randint(0, 1))
    elif r < 0.06:
        parts.append(ctx.choice(([b"FROMMEMBER", b"m1"],
                                 [b"FROMLONLAT", b"1", b"1"],
                                 [b"BYRADIUS", b"1", b"km"],
                                 [b"BYBOX", b"1", b"1", b"km"])))
    ctx.rng.shuffle(parts)
    return parts


def g_geosearch(ctx):
    parts = _from_by(ctx)
    opts = _options(ctx)
    if ctx.chance(0.03):
        opts += ctx.choice(([b"STORE", b"k1"], [b"STOREDIST"]))
    args = [b"GEOSEARCH", _geo_key(ctx)] + [a for p in parts for a in p] + opts
    return Cmd(*args)


def g_geosearchstore(ctx):
    storedist = ctx.chance(0.4)
    dst = ctx.choice(DIST_KEYS) if storedist else _store_key(ctx)
    parts = _from_by(ctx)
    args = [b"GEOSEARCHSTORE", dst, _geo_key(ctx)] + \
        [a for p in parts for a in p]
    if ctx.chance(0.5):
        args.append(ctx.opt(ctx.choice((b"ASC", b"DESC"))))
    if ctx.chance(0.3):
        args += [ctx.opt(b"COUNT"), ctx.choice((b"1", b"2", b"4"))]
        if ctx.chance(0.3):
            args.append(ctx.opt(b"ANY"))
    if storedist:
        args.append(ctx.opt(b"STOREDIST"))
    if ctx.chance(0.04):
        args.append(ctx.choice((b"WITHDIST", b"WITHCOORD", b"STORE")))
    return [Cmd(*args), Cmd(b"ZRANGE", dst, b"0", b"-1", b"WITHSCORES"),
            Cmd(b"OBJECT", b"ENCODING", dst)]


# -- arbitrary scores ------------------------------------------------------------

def g_weird_zadd(ctx):
    args = [b"ZADD", ctx.choice(WEIRD_KEYS)]
    for _ in range(ctx.randint(1, 4)):
        args += [ctx.choice(WEIRD_SCORES), _member(ctx)]
    return Cmd(*args)


def g_weird_read(ctx):
    k = ctx.choice(WEIRD_KEYS + DIST_KEYS)
    r = ctx.rng.random()
    if r < 0.25:
        return Cmd(b"GEOPOS", k, *[_member(ctx) for _ in range(3)])
    if r < 0.45:
        return Cmd(b"GEOHASH", k, *[_member(ctx) for _ in range(3)])
    if r < 0.6:
        return Cmd(b"GEODIST", k, _member(ctx), _member(ctx), _unit(ctx, 0))
    lon, lat = ctx.choice(EDGE_COORDS + [(b"10", b"50"), (b"0", b"-85")])
    opts = [ctx.opt(w) for w in (b"WITHDIST", b"WITHHASH", b"WITHCOORD")
            if ctx.chance(0.4)]
    if ctx.chance(0.5):
        opts.append(ctx.choice((b"ASC", b"DESC")))
    if r < 0.8:
        return Cmd(b"GEORADIUS", k, lon, lat,
                   ctx.choice((b"1", b"100", b"20000", b"inf")), b"km", *opts)
    return Cmd(b"GEOSEARCH", k, b"FROMLONLAT", lon, lat, b"BYBOX",
               ctx.choice((b"10", b"1000", b"50000")),
               ctx.choice((b"10", b"1000", b"50000")), b"km", *opts)


GENERATORS = [
    (14, g_geoadd),
    (1, g_geoadd_edges),
    (0.5, g_geoadd_bulk),
    (1, g_zrem),
    (0.25, g_set_string),
    (4, g_geopos),
    (3, g_geohash),
    (5, g_geodist),
    (1, g_zrange),
    (10, g_georadius),
    (6, g_georadiusbymember),
    (12, g_geosearch),
    (5, g_geosearchstore),
    (2, g_weird_zadd),
    (3, g_weird_read),
]

CREATORS = [
    (4, g_geoadd),
]

MIX = {"keyspace": 0.05}
