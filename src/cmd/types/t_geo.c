/* t_geo.c -- the geo commands, with Redis 7.0's replies and errors:
 * GEOADD GEODIST GEOHASH GEOPOS, GEORADIUS GEORADIUSBYMEMBER and their _RO
 * forms, GEOSEARCH and GEOSEARCHSTORE.
 *
 * A geo set is a sorted set whose scores are 52-bit geohashes
 * (util/geohash); every write goes through the zset family's settings and
 * forms (cmd/types/t_zset.h), so a geo set is an ordinary zset to every
 * other command, to RDB and to replicas. GEOADD is ZADD with computed
 * scores, and like Redis it is propagated as that ZADD. A search covers its
 * shape with a geohash cell and its neighbours, reads their score ranges in
 * Redis's order, keeps the members the shape contains (stopping early for
 * COUNT ANY), sorts by distance when asked (stable: ties keep the order in
 * which they were found), then replies or stores the result through the
 * zset STORE ending (STORE / STOREDIST, GEOSEARCHSTORE), which is
 * propagated as sent.
 *
 * Parsing follows Redis's georadiusGeneric step by step, since the order of
 * its checks decides which error a bad call gets: the source key's type
 * first, then the centre and the shape, then the options left to right
 * (option words compare as C strings, as strcasecmp does), then the
 * combinations. Coordinates print as %.17Lf without trailing zeros (RESP3:
 * doubles), distances with four decimals as bulk strings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/blocking.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/propagate.h"
#include "cmd/types/t_zset.h"
#include "cmd/types/tcommon.h"
#include "ds/zset.h"
#include "session/reply.h"
#include "util/geohash.h"
#include "util/strutil.h"

static inline zset *obj_zset(dbentry *e) { return e->val.u.p; }

/* An option word as Redis compares it: strcasecmp on the C string, so
 * bytes after a NUL inside the argument do not count. */
static int opt_is(const garg *a, const char *lit) { return strcasecmp(a->p, lit) == 0; }

/* getDoubleFromObjectOrReply with Redis's optional message. */
static int arg_double_msg(client *c, const garg *a, double *v, const char *msg) {
    if (str_to_double(a->p, a->n, v)) return 0;
    if (msg) reply_error(c, msg);
    else reply_error(c, "ERR value is not a valid float");
    return -1;
}

/* Longitude and latitude from two arguments, within the stored limits. */
static int parse_lonlat(client *c, const garg *a, double *lon, double *lat) {
    if (arg_double_msg(c, &a[0], lon, NULL) != 0 || arg_double_msg(c, &a[1], lat, NULL) != 0) return -1;
    if (*lon < GEO_LONG_MIN || *lon > GEO_LONG_MAX || *lat < GEO_LAT_MIN || *lat > GEO_LAT_MAX) {
        reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", *lon, *lat);
        return -1;
    }
    return 0;
}

/* Meters per unit, or -1 after replying the error. */
static double parse_unit(client *c, const garg *a) {
    if (opt_is(a, "m")) return 1;
    if (opt_is(a, "km")) return 1000;
    if (opt_is(a, "ft")) return 0.3048;
    if (opt_is(a, "mi")) return 1609.34;
    reply_error(c, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* <radius> <unit> */
static int parse_radius(client *c, const garg *a, geo_shape *s) {
    double r;
    if (arg_double_msg(c, &a[0], &r, "ERR need numeric radius") != 0) return -1;
    if (r < 0) {
        reply_error(c, "ERR radius cannot be negative");
        return -1;
    }
    double conv = parse_unit(c, &a[1]);
    if (conv < 0) return -1;
    s->radius = r;
    s->conversion = conv;
    return 0;
}

/* <width> <height> <unit> */
static int parse_box(client *c, const garg *a, geo_shape *s) {
    double w, h;
    if (arg_double_msg(c, &a[0], &w, "ERR need numeric width") != 0 ||
        arg_double_msg(c, &a[1], &h, "ERR need numeric height") != 0)
        return -1;
    if (h < 0 || w < 0) {
        reply_error(c, "ERR height or width cannot be negative");
        return -1;
    }
    double conv = parse_unit(c, &a[2]);
    if (conv < 0) return -1;
    s->width = w;
    s->height = h;
    s->conversion = conv;
    return 0;
}

/* The position of member m of z; -1 when it is not there. */
static int member_pos(zset *z, const garg *m, double *lon, double *lat) {
    double score;
    if (!zset_score(z, m->p, m->n, &score)) return -1;
    geohash_decode_score(score, lon, lat);
    return 0;
}

/* A coordinate: Redis's addReplyHumanLongDouble (%.17Lf, trailing zeros
 * dropped; a bulk string in RESP2, a double in RESP3). */
static void reply_coord(client *c, double v) {
    char buf[64];
    int n = ld_to_str_human(buf, sizeof(buf), (long double)v);
    if (c->resp == 2) {
        reply_bulk(c, buf, (size_t)n);
        return;
    }
    reply_raw(c, ",", 1);
    reply_raw(c, buf, (size_t)n);
    reply_raw(c, "\r\n", 2);
}

/* A distance: four decimals, a bulk string in both protocols. */
static void reply_distance(client *c, double d) {
    char buf[64];
    int n = geo_format_distance(buf, sizeof(buf), d);
    reply_bulk(c, buf, (size_t)n);
}

/* ---- GEOADD ---- */

/* GEOADD key [NX|XX] [CH] lon lat member [lon lat member ...]: all the
 * positions are checked before anything is written. */
static void geoaddCommand(client *c) {
    int nx = 0, xx = 0, ch = 0, longidx = 2;
    while (longidx < c->argc) {
        const garg *a = &c->argv[longidx];
        if (opt_is(a, "nx")) nx = 1;
        else if (opt_is(a, "xx")) xx = 1;
        else if (opt_is(a, "ch")) ch = 1;
        else break;
        longidx++;
    }
    int elements = (c->argc - longidx) / 3;
    if ((c->argc - longidx) % 3 || (xx && nx) || elements == 0) {
        reply_err_syntax(c);
        return;
    }
    uint64_t small[16];
    uint64_t *scores = elements <= 16 ? small : malloc(sizeof(uint64_t) * (size_t)elements);
    if (!scores) {
        tc_reply_oom(c);
        return;
    }
    for (int i = 0; i < elements; i++) {
        double lon, lat;
        if (parse_lonlat(c, &c->argv[longidx + i * 3], &lon, &lat) != 0) goto done;
        scores[i] = geohash_score_of(lon, lat);
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_ZSET, &wrong);
    if (wrong) goto done;
    long long added = 0, updated = 0;
    zset_limits lim = zset_cmd_limits();
    if (!e) {
        if (xx) {
            reply_int(c, 0); /* no key + XX: nothing to do */
            goto done;
        }
        if (!(e = tc_add_key(c, db, key, OBJ_ZSET, ENC_LISTPACK, zset_new(&lim)))) goto done;
        zset_cmd_sync(e);
    }
    int flags = (nx ? ZADD_IN_NX : 0) | (xx ? ZADD_IN_XX : 0);
    for (int i = 0; i < elements; i++) {
        const garg *m = &c->argv[longidx + i * 3 + 2];
        int out;
        int rc = zset_add(obj_zset(e), (double)scores[i], m->p, m->n, flags, &out, NULL, &lim);
        if (rc != ZSET_OK) {
            zset_cmd_sync(e);
            tc_reply_write_error(c, rc == ZSET_EFULL, "sorted set");
            tc_drop_if_empty(db, e);
            goto changed;
        }
        if (out & ZADD_OUT_ADDED) added++;
        if (out & ZADD_OUT_UPDATED) updated++;
    }
    zset_cmd_sync(e);
    reply_int(c, ch ? added + updated : added);
changed:
    if (added || updated) {
        tc_changed(c, db, key, OBJ_ZSET, "zadd");
        if (added) block_signal_key(db, key->p, key->n);
        /* Redis runs GEOADD as the ZADD it stands for, and that is what
         * AOF and replicas get: "zadd", the options as sent, score member. */
        int argc = longidx + elements * 2;
        const char **p = malloc(sizeof(char *) * (size_t)argc);
        size_t *n = malloc(sizeof(size_t) * (size_t)argc);
        char *num = malloc((size_t)elements * STRUTIL_LLSTR);
        if (!p || !n || !num) abort();
        p[0] = "zadd";
        n[0] = 4;
        for (int i = 1; i < longidx; i++) {
            p[i] = c->argv[i].p;
            n[i] = c->argv[i].n;
        }
        for (int i = 0; i < elements; i++) {
            char *s = num + (size_t)i * STRUTIL_LLSTR;
            p[longidx + i * 2] = s;
            n[longidx + i * 2] = (size_t)ll_to_str(s, STRUTIL_LLSTR, (long long)scores[i]);
            p[longidx + i * 2 + 1] = c->argv[longidx + i * 3 + 2].p;
            n[longidx + i * 2 + 1] = c->argv[longidx + i * 3 + 2].n;
        }
        prop_rewrite(c, argc, p, n);
        free(p);
        free(n);
        free(num);
    }
done:
    if (scores != small) free(scores);
}

/* ---- GEOPOS / GEOHASH / GEODIST ---- */

static void geoposCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double lon, lat;
        if (!e || member_pos(obj_zset(e), &c->argv[j], &lon, &lat) != 0) {
            reply_null_array(c);
            continue;
        }
        reply_array(c, 2);
        reply_coord(c, lon);
        reply_coord(c, lat);
    }
}

static void geohashCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double lon, lat;
        if (!e || member_pos(obj_zset(e), &c->argv[j], &lon, &lat) != 0) {
            reply_null(c);
            continue;
        }
        /* The stored hash spans latitudes +-85.05; the standard one +-90:
         * the position is hashed again. */
        char buf[12];
        geohash_string(lon, lat, buf);
        reply_bulk(c, buf, 11);
    }
}

/* GEODIST key member1 member2 [unit]: the unit is checked before the key. */
static void geodistCommand(client *c) {
    double to_m = 1;
    if (c->argc == 5) {
        to_m = parse_unit(c, &c->argv[4]);
        if (to_m < 0) return;
    } else if (c->argc > 5) {
        reply_err_syntax(c);
        return;
    }
    dbentry *e = tc_lookup_or_reply(c, cmd_db(c), &c->argv[1], OBJ_ZSET, reply_null);
    if (!e) return;
    double lon1, lat1, lon2, lat2;
    if (member_pos(obj_zset(e), &c->argv[2], &lon1, &lat1) != 0 ||
        member_pos(obj_zset(e), &c->argv[3], &lon2, &lat2) != 0) {
        reply_null(c);
        return;
    }
    reply_distance(c, geo_distance(lon1, lat1, lon2, lat2) / to_m);
}

/* ---- GEORADIUS & co., GEOSEARCH, GEOSEARCHSTORE ---- */

/* One member found by a search; m points into the source zset, which no
 * one modifies until the result has been replied or built. */
typedef struct geo_point {
    double lon, lat, dist, score;
    const char *m;
    size_t n;
    size_t seq; /* order found (ties of a sort keep it) */
} geo_point;

typedef struct geo_points {
    geo_point *v;
    size_t used, cap;
    int oom;
} geo_points;

static void points_add(geo_points *ga, const geo_point *p) {
    if (ga->oom) return;
    if (ga->used == ga->cap) {
        size_t ncap = ga->cap ? ga->cap * 2 : 8;
        geo_point *nv = realloc(ga->v, sizeof(geo_point) * ncap);
        if (!nv) {
            ga->oom = 1;
            return;
        }
        ga->v = nv;
        ga->cap = ncap;
    }
    ga->v[ga->used] = *p;
    ga->v[ga->used].seq = ga->used;
    ga->used++;
}

/* The members of z with scores in [r.min, r.max) that s contains, added
 * to ga until it holds limit points (0: no limit). */
static void points_in_range(zset *z, geo_scorerange r, const geo_shape *s, geo_points *ga, size_t limit) {
    zset_range zr = {.min = (double)r.min, .max = (double)r.max, .minex = 0, .maxex = 1};
    size_t lo, hi;
    zset_score_span(z, &zr, &lo, &hi);
    if (lo >= hi) return;
    zset_iter it;
    zset_iter_init(&it, z, lo, 0);
    geo_point p;
    for (size_t k = lo; k < hi && zset_iter_next(&it, &p.m, &p.n, &p.score); k++) {
        geohash_decode_score(p.score, &p.lon, &p.lat);
        if (geo_shape_contains(s, p.lon, p.lat, &p.dist)) points_add(ga, &p);
        if (ga->used && limit && ga->used >= limit) break;
    }
}

static int by_dist_asc(const void *x, const void *y) {
    const geo_point *a = x, *b = y;
    if (a->dist != b->dist) return a->dist > b->dist ? 1 : -1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_dist_desc(const void *x, const void *y) {
    const geo_point *a = x, *b = y;
    if (a->dist != b->dist) return a->dist < b->dist ? 1 : -1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

enum {
    GEO_COORDS = 1 << 0,      /* centre from arguments (GEORADIUS) */
    GEO_MEMBER = 1 << 1,      /* centre from a member (GEORADIUSBYMEMBER) */
    GEO_NOSTORE = 1 << 2,     /* the _RO forms: no STORE / STOREDIST */
    GEO_SEARCH = 1 << 3,      /* GEOSEARCH arguments */
    GEO_SEARCHSTORE = 1 << 4, /* GEOSEARCHSTORE: destination first, STOREDIST flag */
};
enum { SORT_NONE, SORT_ASC, SORT_DESC };

static void georadiusGeneric(client *c, int srckey, int flags) {
    gdb *db = cmd_db(c);
    /* A read lookup (keyspace hits and misses count), also for the forms
     * that write. */
    const garg *src = &c->argv[srckey];
    dbentry *e = db_lookup_read(db, src->p, src->n);
    if (e && e->val.type != OBJ_ZSET) {
        reply_err_wrongtype(c);
        return;
    }
    zset *z = e ? obj_zset(e) : NULL;

    const garg *storekey = NULL;
    int storedist = 0;
    geo_shape shape = {0};
    int base;
    if (flags & GEO_COORDS) {
        base = 6;
        shape.type = GEO_CIRCLE;
        if (parse_lonlat(c, &c->argv[2], &shape.lon, &shape.lat) != 0) return;
        if (parse_radius(c, &c->argv[4], &shape) != 0) return;
    } else if (flags & GEO_MEMBER) {
        /* A missing key still has its options parsed: they decide the
         * reply (0 with STORE, else an empty array). */
        base = 5;
        if (z) {
            shape.type = GEO_CIRCLE;
            if (member_pos(z, &c->argv[2], &shape.lon, &shape.lat) != 0) {
                reply_error(c, "ERR could not decode requested zset member");
                return;
            }
            if (parse_radius(c, &c->argv[3], &shape) != 0) return;
        }
    } else {
        base = 2;
        if (flags & GEO_SEARCHSTORE) {
            base = 3;
            storekey = &c->argv[1];
        }
    }

    int withdist = 0, withhash = 0, withcoord = 0;
    int frommember = 0, fromloc = 0, byradius = 0, bybox = 0;
    int sort = SORT_NONE, any = 0;
    long long count = 0;
    int search = (flags & GEO_SEARCH) != 0;
    int canstore = !(flags & GEO_NOSTORE) && !search;
    int remaining = c->argc - base;
    for (int i = 0; i < remaining; i++) {
        const garg *a = &c->argv[base + i];
        if (opt_is(a, "withdist")) {
            withdist = 1;
        } else if (opt_is(a, "withhash")) {
            withhash = 1;
        } else if (opt_is(a, "withcoord")) {
            withcoord = 1;
        } else if (opt_is(a, "any")) {
            any = 1;
        } else if (opt_is(a, "asc")) {
            sort = SORT_ASC;
        } else if (opt_is(a, "desc")) {
            sort = SORT_DESC;
        } else if (opt_is(a, "count") && i + 1 < remaining) {
            if (arg_ll(c, a + 1, &count) != 0) return;
            if (count <= 0) {
                reply_error(c, "ERR COUNT must be > 0");
                return;
            }
            i++;
        } else if (opt_is(a, "store") && i + 1 < remaining && canstore) {
            storekey = a + 1;
            storedist = 0;
            i++;
        } else if (opt_is(a, "storedist") && i + 1 < remaining && canstore) {
            storekey = a + 1;
            storedist = 1;
            i++;
        } else if (opt_is(a, "storedist") && (flags & GEO_SEARCHSTORE)) {
            storedist = 1;
        } else if (opt_is(a, "frommember") && i + 1 < remaining && search && !fromloc) {
            if (z && member_pos(z, a + 1, &shape.lon, &shape.lat) != 0) {
                reply_error(c, "ERR could not decode requested zset member");
                return;
            }
            frommember = 1;
            i++;
        } else if (opt_is(a, "fromlonlat") && i + 2 < remaining && search && !frommember) {
            if (parse_lonlat(c, a + 1, &shape.lon, &shape.lat) != 0) return;
            fromloc = 1;
            i += 2;
        } else if (opt_is(a, "byradius") && i + 2 < remaining && search && !bybox) {
            if (parse_radius(c, a + 1, &shape) != 0) return;
            shape.type = GEO_CIRCLE;
            byradius = 1;
            i += 2;
        } else if (opt_is(a, "bybox") && i + 3 < remaining && search && !byradius) {
            if (parse_box(c, a + 1, &shape) != 0) return;
            shape.type = GEO_BOX;
            bybox = 1;
            i += 3;
        } else {
            reply_err_syntax(c);
            return;
        }
    }

    if (storekey && (withdist || withhash || withcoord)) {
        reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     (flags & GEO_SEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return;
    }
    if (search && !(frommember || fromloc)) {
        reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s", c->argv[0].p);
        return;
    }
    if (search && !(byradius || bybox)) {
        reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %s", c->argv[0].p);
        return;
    }
    if (any && !count) {
        reply_error(c, "ERR the ANY argument requires COUNT argument");
        return;
    }
    if (!z) {
        if (storekey) zset_cmd_store(c, db, storekey, NULL, 0, NULL);
        else reply_array(c, 0);
        return;
    }
    /* COUNT wants the nearest: ascending unless told otherwise (ANY wants
     * whichever come first). */
    if (count && sort == SORT_NONE && !any) sort = SORT_ASC;

    geo_scorerange ranges[9];
    int nranges = geo_search_ranges(&shape, ranges);
    geo_points ga = {0};
    size_t limit = any ? (size_t)count : 0;
    for (int i = 0; i < nranges; i++) {
        if (ga.used && limit && ga.used >= limit) break;
        points_in_range(z, ranges[i], &shape, &ga, limit);
    }
    if (ga.oom) {
        free(ga.v);
        tc_reply_oom(c);
        return;
    }
    if (ga.used == 0 && !storekey) {
        reply_array(c, 0);
        free(ga.v);
        return;
    }
    size_t returned = count == 0 || ga.used < (unsigned long long)count ? ga.used : (size_t)count;
    if (sort != SORT_NONE) qsort(ga.v, ga.used, sizeof(geo_point), sort == SORT_ASC ? by_dist_asc : by_dist_desc);

    if (!storekey) {
        int options = withdist + withhash + withcoord;
        reply_array(c, (long)returned);
        for (size_t i = 0; i < returned; i++) {
            const geo_point *p = &ga.v[i];
            if (options) reply_array(c, options + 1);
            reply_bulk(c, p->m, p->n);
            if (withdist) reply_distance(c, p->dist / shape.conversion);
            if (withhash) reply_int(c, (long long)p->score);
            if (withcoord) {
                reply_array(c, 2);
                reply_coord(c, p->lon);
                reply_coord(c, p->lat);
            }
        }
        free(ga.v);
        return;
    }
    /* The result is built whole before it replaces the destination (which
     * may be the source the points still point into). */
    zset *dst = NULL;
    if (returned) {
        zset_limits lim = zset_cmd_limits();
        dst = zset_new_hint(returned, &lim);
        if (!dst) {
            free(ga.v);
            tc_reply_oom(c);
            return;
        }
        for (size_t i = 0; i < returned; i++) {
            const geo_point *p = &ga.v[i];
            int out;
            double score = storedist ? p->dist / shape.conversion : p->score;
            int rc = zset_add(dst, score, p->m, p->n, 0, &out, NULL, &lim);
            if (rc != ZSET_OK) {
                zset_free(dst);
                free(ga.v);
                tc_reply_write_error(c, rc == ZSET_EFULL, "sorted set");
                return;
            }
        }
    }
    free(ga.v);
    zset_cmd_store(c, db, storekey, dst, returned, search ? "geosearchstore" : "georadiusstore");
}

static void georadiusCommand(client *c) { georadiusGeneric(c, 1, GEO_COORDS); }
static void georadiusbymemberCommand(client *c) { georadiusGeneric(c, 1, GEO_MEMBER); }
static void georadiusroCommand(client *c) { georadiusGeneric(c, 1, GEO_COORDS | GEO_NOSTORE); }
static void georadiusbymemberroCommand(client *c) { georadiusGeneric(c, 1, GEO_MEMBER | GEO_NOSTORE); }
static void geosearchCommand(client *c) { georadiusGeneric(c, 1, GEO_SEARCH); }
static void geosearchstoreCommand(client *c) { georadiusGeneric(c, 2, GEO_SEARCH | GEO_SEARCHSTORE); }

const cmd_handler geo_handlers[] = {
    {"geoadd", geoaddCommand, CMD_LOCK_KEYS},
    {"geodist", geodistCommand, CMD_LOCK_KEYS},
    {"geohash", geohashCommand, CMD_LOCK_KEYS},
    {"geopos", geoposCommand, CMD_LOCK_KEYS},
    {"georadius", georadiusCommand, CMD_LOCK_KEYS},
    {"georadius_ro", georadiusroCommand, CMD_LOCK_KEYS},
    {"georadiusbymember", georadiusbymemberCommand, CMD_LOCK_KEYS},
    {"georadiusbymember_ro", georadiusbymemberroCommand, CMD_LOCK_KEYS},
    {"geosearch", geosearchCommand, CMD_LOCK_KEYS},
    {"geosearchstore", geosearchstoreCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
