/* t_zset.c -- the sorted set commands, with Redis 7.0's replies and errors:
 * ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK ZREVRANK ZCOUNT ZLEXCOUNT,
 * the ZRANGE family (ZRANGE ZRANGESTORE ZREVRANGE ZRANGEBYSCORE
 * ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX), ZREMRANGEBYRANK/SCORE/LEX,
 * ZPOPMIN ZPOPMAX BZPOPMIN BZPOPMAX ZMPOP BZMPOP, ZRANDMEMBER, ZUNION ZINTER
 * ZDIFF and their STORE forms, ZINTERCARD and ZSCAN.
 *
 * The structure lives in ds/zset (a packed form reported as "listpack", and
 * arena + swiss index + counted B+tree reported as "skiplist"); this file
 * reads the zset-max-listpack-* settings, passes them down on every write,
 * and mirrors the form into gobj.enc after each write. Commands run under
 * their keys' shard locks (the dispatcher takes them; commands with numkeys
 * run under the keyspace write lock) and follow one recipe: parse, look up
 * (or create) the key, check the type, do the work, reply, signal the
 * change. A zset never stays empty: the write that removes its last member
 * deletes the key. Writes that create or grow a zset signal the key so that
 * clients blocked in BZPOPMIN & co. are retried.
 *
 * Parsing follows Redis's own quirks where they are observable: score
 * bounds go through strtod on the C string ("" is 0, "(" alone is an
 * exclusive 0, hex and leading blanks pass), lex bounds stop at a NUL after
 * '+'/'-', and the range commands read their options before the key. */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/blocking.h"
#include "cmd/command.h"
#include "cmd/propagate.h"
#include "cmd/families.h"
#include "cmd/types/scan.h"
#include "cmd/types/tcommon.h"
#include "cmd/types/t_zset.h"
#include "session/reply.h"
#include "util/rand.h"
#include "ds/set.h"
#include "util/strutil.h"
#include "ds/zset.h"
#include "base/config.h"

/* ---- plain sets as inputs of ZUNION / ZINTER / ZDIFF ----
 *
 * A set key's value is a ds/set gset (gobj.u.p), read here through ds/set's
 * own API; every member counts with score 1. */
static size_t set_obj_card(const gobj *o) { return set_card(o->u.p); }

static int set_obj_contains(const gobj *o, const char *m, size_t n) { return set_contains(o->u.p, m, n); }

typedef void set_each_fn(void *arg, const char *m, size_t n);

static void set_obj_each(const gobj *o, set_each_fn *fn, void *arg) {
    set_iter it;
    set_elem e;
    set_iter_init(&it, o->u.p);
    while (set_iter_next(&it, &e)) fn(arg, e.p, e.n);
    set_iter_done(&it);
}

/* ---- object glue ---- */

TC_VALUE_TYPE_RESIZING(zset, OBJ_ZSET, zset_free, zset_dup, zset_mem_bytes, zset_card, zset_rehash_step)

zset_limits zset_cmd_limits(void) {
    return (zset_limits){.max_entries = tc_cfg_size(cfg.zset_max_listpack_entries),
                         .max_value = tc_cfg_size(cfg.zset_max_listpack_value)};
}

static inline zset *obj_zset(dbentry *e) { return e->val.u.p; }

static inline int zset_encoding(const zset *z) { return zset_is_packed(z) ? ENC_LISTPACK : ENC_SKIPLIST; }

void zset_cmd_sync(dbentry *e) { e->val.enc = (uint8_t)zset_encoding(obj_zset(e)); }

static void reply_zset_error(client *c, int rc) { tc_reply_write_error(c, rc == ZSET_EFULL, "sorted set"); }

void zset_cmd_store(client *c, gdb *db, const garg *key, zset *z, size_t n, const char *event) {
    if (tc_store(c, db, key, OBJ_ZSET, z ? zset_encoding(z) : ENC_LISTPACK, z, n, event))
        block_signal_key(db, key->p, key->n);
}

/* ---- argument parsing ---- */

/* A score bound as Redis's zslParseRange reads it: strtod over the C
 * string, '(' for exclusive, NaN refused. */
static int parse_score_bound(const garg *a, double *v, int *ex) {
    const char *p = a->p;
    *ex = 0;
    if (p[0] == '(') {
        p++;
        *ex = 1;
    }
    char *end;
    *v = strtod(p, &end);
    if (end[0] != '\0' || isnan(*v)) return -1;
    return 0;
}

static int parse_score_range(const garg *min, const garg *max, zset_range *r) {
    if (parse_score_bound(min, &r->min, &r->minex) != 0) return -1;
    if (parse_score_bound(max, &r->max, &r->maxex) != 0) return -1;
    return 0;
}

static int parse_lex_bound(const garg *a, zset_lexbound *b) {
    const char *p = a->p;
    switch (p[0]) {
    case '+':
        if (p[1] != '\0') return -1;
        b->kind = ZLEX_POS_INF;
        return 0;
    case '-':
        if (p[1] != '\0') return -1;
        b->kind = ZLEX_NEG_INF;
        return 0;
    case '(':
    case '[':
        b->kind = p[0] == '(' ? ZLEX_EXCL : ZLEX_INCL;
        b->p = p + 1;
        b->n = a->n - 1;
        return 0;
    default:
        return -1;
    }
}

static int parse_lex_range(const garg *min, const garg *max, zset_lexrange *r) {
    if (parse_lex_bound(min, &r->min) != 0 || parse_lex_bound(max, &r->max) != 0) return -1;
    return 0;
}

/* getLongFromObjectOrReply with Redis's (optional) custom message. */
static int arg_long_msg(client *c, const garg *a, long long *v, const char *msg) {
    if (!str_to_ll(a->p, a->n, v)) {
        if (msg) reply_error(c, msg);
        else reply_err_not_int(c);
        return -1;
    }
    return 0;
}

/* getRangeLongFromObjectOrReply. */
static int arg_long_range(client *c, const garg *a, long long *v, long long min, long long max, const char *msg) {
    if (arg_long_msg(c, a, v, msg) != 0) return -1;
    if (*v < min || *v > max) {
        if (msg) reply_error(c, msg);
        else reply_errorf(c, "ERR value is out of range, value must between %lld and %lld", min, max);
        return -1;
    }
    return 0;
}

/* getPositiveLongFromObjectOrReply. */
static int arg_positive(client *c, const garg *a, long long *v, const char *msg) {
    return arg_long_range(c, a, v, 0, LLONG_MAX, msg ? msg : "ERR value is out of range, must be positive");
}

enum { RANGE_AUTO, RANGE_RANK, RANGE_SCORE, RANGE_LEX };

/* The min and max arguments of the range commands: ranks, scores or lex
 * bounds, as type says. */
typedef struct zbounds {
    int type; /* RANGE_RANK, RANGE_SCORE or RANGE_LEX */
    long long start, end;
    zset_range score;
    zset_lexrange lex;
} zbounds;

/* Parse min and max as b->type says; -1 after replying Redis's error. */
static int parse_bounds(client *c, const garg *min, const garg *max, zbounds *b) {
    switch (b->type) {
    case RANGE_RANK:
        if (arg_long_msg(c, min, &b->start, NULL) != 0 || arg_long_msg(c, max, &b->end, NULL) != 0) return -1;
        return 0;
    case RANGE_SCORE:
        if (parse_score_range(min, max, &b->score) == 0) return 0;
        reply_error(c, "ERR min or max is not a float");
        return -1;
    default:
        assert(b->type == RANGE_LEX);
        if (parse_lex_range(min, max, &b->lex) == 0) return 0;
        reply_error(c, "ERR min or max not valid string range item");
        return -1;
    }
}

/* The ranks [*lo, *hi) of z that b selects; rev: ranks count from the
 * highest score (and lex bounds come high to low). */
static void bounds_span(zset *z, const zbounds *b, int rev, size_t *lo, size_t *hi) {
    if (b->type == RANGE_SCORE) {
        zset_score_span(z, &b->score, lo, hi);
    } else if (b->type == RANGE_LEX) {
        zset_lex_span(z, &b->lex, rev, lo, hi);
    } else {
        size_t card = zset_card(z);
        uint64_t first, n;
        if (!tc_clamp_range(b->start, b->end, card, &first, &n)) first = n = 0;
        *lo = rev && n ? card - (size_t)(first + n) : (size_t)first;
        *hi = *lo + (size_t)n;
    }
}

/* ---- ZADD / ZINCRBY ---- */

static void zaddGeneric(client *c, int flags) {
    int scoreidx = 2, ch = 0;
    while (scoreidx < c->argc) {
        const garg *a = &c->argv[scoreidx];
        if (arg_is(a, "nx")) flags |= ZADD_IN_NX;
        else if (arg_is(a, "xx")) flags |= ZADD_IN_XX;
        else if (arg_is(a, "ch")) ch = 1;
        else if (arg_is(a, "incr")) flags |= ZADD_IN_INCR;
        else if (arg_is(a, "gt")) flags |= ZADD_IN_GT;
        else if (arg_is(a, "lt")) flags |= ZADD_IN_LT;
        else break;
        scoreidx++;
    }
    int nx = flags & ZADD_IN_NX, xx = flags & ZADD_IN_XX, gt = flags & ZADD_IN_GT, lt = flags & ZADD_IN_LT;
    int incr = flags & ZADD_IN_INCR;
    int elements = c->argc - scoreidx;
    if (elements % 2 || !elements) {
        reply_err_syntax(c);
        return;
    }
    elements /= 2;
    if (nx && xx) {
        reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && elements > 1) {
        reply_error(c, "ERR INCR option supports a single increment-element pair");
        return;
    }
    double small[16];
    double *scores = elements <= 16 ? small : malloc(sizeof(double) * (size_t)elements);
    if (!scores) {
        tc_reply_oom(c);
        return;
    }
    for (int j = 0; j < elements; j++) {
        if (!str_to_double(c->argv[scoreidx + j * 2].p, c->argv[scoreidx + j * 2].n, &scores[j])) {
            reply_error(c, "ERR value is not a valid float");
            goto done;
        }
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_ZSET, &wrong);
    if (wrong) goto done;
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    zset_limits lim = zset_cmd_limits();
    if (!e) {
        if (xx) goto reply; /* no key + XX: nothing to do */
        if (!(e = tc_add_key(c, db, key, OBJ_ZSET, ENC_LISTPACK, zset_new(&lim)))) goto done;
        zset_cmd_sync(e);
    }
    zset *z = obj_zset(e);
    for (int j = 0; j < elements; j++) {
        tc_prefetch_elems(&e->val, c->argv, c->argc, scoreidx + 1 + j * 2, 2);
        /* And the B-tree path of the scores to come (new members go there). */
        if (j + TC_AHEAD < elements) zset_prefetch_score(z, scores[j + TC_AHEAD], 0);
        if (j + TC_AHEAD / 2 < elements) zset_prefetch_score(z, scores[j + TC_AHEAD / 2], 1);
        const garg *m = &c->argv[scoreidx + 1 + j * 2];
        int out;
        double ns = 0;
        int rc = zset_add(z, scores[j], m->p, m->n, flags, &out, &ns, &lim);
        if (rc != ZSET_OK) {
            zset_cmd_sync(e);
            reply_zset_error(c, rc);
            tc_drop_if_empty(db, e);
            goto changed;
        }
        if (out & ZADD_OUT_NAN) {
            reply_error(c, "ERR resulting score is not a number (NaN)");
            goto changed;
        }
        if (out & ZADD_OUT_ADDED) added++;
        if (out & ZADD_OUT_UPDATED) updated++;
        if (!(out & ZADD_OUT_NOP)) processed++;
        score = ns;
    }
    zset_cmd_sync(e);
reply:
    if (incr) {
        if (processed) reply_double(c, score);
        else reply_null(c);
    } else {
        reply_int(c, ch ? added + updated : added);
    }
changed:
    if (added || updated) {
        tc_changed(c, db, key, OBJ_ZSET, incr ? "zincr" : "zadd");
        if (added) block_signal_key(db, key->p, key->n);
    }
done:
    if (scores != small) free(scores);
}

static void zaddCommand(client *c) { zaddGeneric(c, 0); }
static void zincrbyCommand(client *c) { zaddGeneric(c, ZADD_IN_INCR); }

/* ---- ZREM / ZCARD / ZSCORE / ZMSCORE / ZRANK ---- */

/* ZREM's step (tc_remove_args). */
static int zset_remove_member(dbentry *e, const garg *m) { return zset_delete(obj_zset(e), m->p, m->n); }

static void zremCommand(client *c) { tc_remove_args(c, OBJ_ZSET, "zrem", zset_remove_member); }

static void zcardCommand(client *c) { tc_reply_len(c, OBJ_ZSET); }

static void zscoreCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    double s;
    if (e && zset_score(obj_zset(e), c->argv[2].p, c->argv[2].n, &s)) reply_double(c, s);
    else reply_null(c);
}

static void zmscoreCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double s;
        if (e) tc_prefetch_elems(&e->val, c->argv, c->argc, j, 1);
        if (e && zset_score(obj_zset(e), c->argv[j].p, c->argv[j].n, &s)) reply_double(c, s);
        else reply_null(c);
    }
}

static void zrankGeneric(client *c, int rev) {
    dbentry *e = tc_lookup_or_reply(c, cmd_db(c), &c->argv[1], OBJ_ZSET, reply_null);
    if (!e) return;
    zset *z = obj_zset(e);
    long r = zset_rank(z, c->argv[2].p, c->argv[2].n, NULL);
    if (r < 0) reply_null(c);
    else reply_int(c, rev ? (long long)zset_card(z) - 1 - r : r);
}

static void zrankCommand(client *c) { zrankGeneric(c, 0); }
static void zrevrankCommand(client *c) { zrankGeneric(c, 1); }

/* ---- ZCOUNT / ZLEXCOUNT ---- */

static void zcountGeneric(client *c, int rangetype) {
    zbounds b = {.type = rangetype};
    if (parse_bounds(c, &c->argv[2], &c->argv[3], &b) != 0) return;
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    size_t lo = 0, hi = 0;
    if (e) bounds_span(obj_zset(e), &b, 0, &lo, &hi);
    reply_int(c, (long long)(hi - lo));
}

static void zcountCommand(client *c) { zcountGeneric(c, RANGE_SCORE); }
static void zlexcountCommand(client *c) { zcountGeneric(c, RANGE_LEX); }

/* ---- the ZRANGE family ---- */

enum { DIR_AUTO, DIR_FORWARD, DIR_REVERSE };

/* Where a range goes: the client (array, RESP3 pairs nested) or a new
 * zset stored at a destination key (ZRANGESTORE). */
typedef struct range_out {
    client *c;
    int store;
    int withscores;
    int deferred;
    size_t handle;
    size_t count;
    zset *dst;
    zset_limits lim;
    int err;
} range_out;

static void out_begin(range_out *o, long long length) {
    if (o->store) {
        o->dst = zset_new_hint(length > 0 ? (size_t)length : 0, &o->lim);
        return;
    }
    client *c = o->c;
    if (length > 0) {
        reply_array(c, (long)(o->withscores && c->resp == 2 ? length * 2 : length));
        o->deferred = 0;
    } else {
        o->handle = reply_defer(c);
        o->deferred = 1;
    }
}

static void out_emit(range_out *o, const char *m, size_t n, double s) {
    o->count++;
    if (o->store) {
        int out;
        if (!o->err) o->err = zset_add(o->dst, s, m, n, 0, &out, NULL, &o->lim);
        return;
    }
    client *c = o->c;
    if (o->withscores && c->resp > 2) reply_array(c, 2);
    reply_bulk(c, m, n);
    if (o->withscores) reply_double(c, s);
}

static void out_end(range_out *o, gdb *db, const garg *dstkey) {
    client *c = o->c;
    if (!o->store) {
        if (o->deferred)
            reply_defer_array(c, o->handle, (long)(o->withscores && c->resp == 2 ? o->count * 2 : o->count));
        return;
    }
    if (o->err) {
        zset_free(o->dst);
        reply_zset_error(c, o->err);
        return;
    }
    zset_cmd_store(c, db, dstkey, o->dst, o->count, "zrangestore");
}

/* Emit the elements of ranks [lo, hi) of z, from lo up or from hi-1 down,
 * skipping offset of them and emitting at most limit (< 0: all). */
static void emit_span(range_out *o, zset *z, size_t lo, size_t hi, int rev, long long offset, long long limit) {
    if (offset < 0 || lo >= hi || (unsigned long long)offset >= hi - lo) return;
    size_t avail = hi - lo - (size_t)offset;
    size_t take = limit < 0 || (unsigned long long)limit > avail ? avail : (size_t)limit;
    if (take == 0) return;
    zset_iter it;
    zset_iter_init(&it, z, rev ? hi - 1 - (size_t)offset : lo + (size_t)offset, rev);
    const char *m;
    size_t n;
    double s;
    while (take-- && zset_iter_next(&it, &m, &n, &s)) out_emit(o, m, n, s);
}

static void zrangeGeneric(client *c, int argc_start, int store, int rangetype, int direction) {
    const garg *key = &c->argv[argc_start];
    int minidx = argc_start + 1, maxidx = argc_start + 2;
    long long opt_offset = 0, opt_limit = -1;
    int withscores = 0;
    for (int j = argc_start + 3; j < c->argc; j++) {
        int leftargs = c->argc - j - 1;
        if (!store && arg_is(&c->argv[j], "withscores")) {
            withscores = 1;
        } else if (arg_is(&c->argv[j], "limit") && leftargs >= 2) {
            if (arg_long_msg(c, &c->argv[j + 1], &opt_offset, NULL) != 0) return;
            if (arg_long_msg(c, &c->argv[j + 2], &opt_limit, NULL) != 0) return;
            j += 2;
        } else if (direction == DIR_AUTO && arg_is(&c->argv[j], "rev")) {
            direction = DIR_REVERSE;
        } else if (rangetype == RANGE_AUTO && arg_is(&c->argv[j], "bylex")) {
            rangetype = RANGE_LEX;
        } else if (rangetype == RANGE_AUTO && arg_is(&c->argv[j], "byscore")) {
            rangetype = RANGE_SCORE;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (direction == DIR_AUTO) direction = DIR_FORWARD;
    if (rangetype == RANGE_AUTO) rangetype = RANGE_RANK;
    if (opt_limit != -1 && rangetype == RANGE_RANK) {
        reply_error(c, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && rangetype == RANGE_LEX) {
        reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    int rev = direction == DIR_REVERSE;
    if (rev && rangetype != RANGE_RANK) {
        int t = minidx;
        minidx = maxidx;
        maxidx = t;
    }
    zbounds b = {.type = rangetype};
    if (parse_bounds(c, &c->argv[minidx], &c->argv[maxidx], &b) != 0) return;
    gdb *db = cmd_db(c);
    range_out o = {0};
    o.c = c;
    o.store = store;
    o.withscores = withscores || store;
    o.lim = zset_cmd_limits();
    dbentry *e = db_lookup_read(db, key->p, key->n);
    if (!e) {
        if (store) {
            out_begin(&o, -1);
            out_end(&o, db, &c->argv[1]);
        } else {
            reply_array(c, 0);
        }
        return;
    }
    if (e->val.type != OBJ_ZSET) {
        reply_err_wrongtype(c);
        return;
    }
    zset *z = obj_zset(e);
    size_t lo, hi;
    bounds_span(z, &b, rev, &lo, &hi);
    if (rangetype == RANGE_RANK) {
        /* Its length is known up front; a LIMIT that passed the check
         * above (an offset with count -1) is ignored, as by Redis. */
        out_begin(&o, (long long)(hi - lo));
        emit_span(&o, z, lo, hi, rev, 0, -1);
    } else {
        out_begin(&o, -1);
        emit_span(&o, z, lo, hi, rev, opt_offset, opt_limit);
    }
    out_end(&o, db, &c->argv[1]);
}

static void zrangeCommand(client *c) { zrangeGeneric(c, 1, 0, RANGE_AUTO, DIR_AUTO); }
static void zrangestoreCommand(client *c) { zrangeGeneric(c, 2, 1, RANGE_AUTO, DIR_AUTO); }
static void zrevrangeCommand(client *c) { zrangeGeneric(c, 1, 0, RANGE_RANK, DIR_REVERSE); }
static void zrangebyscoreCommand(client *c) { zrangeGeneric(c, 1, 0, RANGE_SCORE, DIR_FORWARD); }
static void zrevrangebyscoreCommand(client *c) { zrangeGeneric(c, 1, 0, RANGE_SCORE, DIR_REVERSE); }
static void zrangebylexCommand(client *c) { zrangeGeneric(c, 1, 0, RANGE_LEX, DIR_FORWARD); }
static void zrevrangebylexCommand(client *c) { zrangeGeneric(c, 1, 0, RANGE_LEX, DIR_REVERSE); }

/* ---- ZREMRANGEBYRANK / BYSCORE / BYLEX ---- */

static void zremrangeGeneric(client *c, int rangetype) {
    static const char *events[] = {NULL, "zremrangebyrank", "zremrangebyscore", "zremrangebylex"};
    zbounds b = {.type = rangetype};
    if (parse_bounds(c, &c->argv[2], &c->argv[3], &b) != 0) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_ZSET, tc_reply_zero);
    if (!e) return;
    zset *z = obj_zset(e);
    size_t lo, hi;
    bounds_span(z, &b, 0, &lo, &hi);
    size_t deleted = zset_delete_range(z, lo, hi);
    if (deleted) {
        zset_cmd_sync(e);
        tc_changed(c, db, key, OBJ_ZSET, events[rangetype]);
        tc_delete_if_empty(c, db, e, key);
    }
    reply_int(c, (long long)deleted);
}

static void zremrangebyrankCommand(client *c) { zremrangeGeneric(c, RANGE_RANK); }
static void zremrangebyscoreCommand(client *c) { zremrangeGeneric(c, RANGE_SCORE); }
static void zremrangebylexCommand(client *c) { zremrangeGeneric(c, RANGE_LEX); }

/* ---- ZPOPMIN / ZPOPMAX / BZPOPMIN / BZPOPMAX / ZMPOP / BZMPOP ---- */

enum { ZPOP_MIN = 0, ZPOP_MAX = 1 };

/* Pop up to count (-1: one, flat reply) elements from the first existing
 * key of keys. emitkey: the reply names the key (blocking and M forms);
 * nested: pairs as arrays; nil_when_empty: null array (not an empty one)
 * when no key exists. On a retry of a blocked command keys of another
 * type are passed over (Redis serves blocked clients only from zsets). */
static void genericZpop(client *c, const garg *keys, int nkeys, int where, int emitkey, long long count, int nested,
                        int nil_when_empty) {
    gdb *db = cmd_db(c);
    dbentry *e = NULL;
    const garg *key = NULL;
    for (int i = 0; i < nkeys; i++) {
        e = db_lookup(db, keys[i].p, keys[i].n);
        if (!e) continue;
        if (e->val.type != OBJ_ZSET) {
            reply_err_wrongtype(c);
            return;
        }
        key = &keys[i];
        break;
    }
    if (!e) {
        if (nil_when_empty) reply_null_array(c);
        else reply_array(c, 0);
        return;
    }
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    long long asked = count;
    if (count == -1) count = 1;
    zset *z = obj_zset(e);
    long long llen = (long long)zset_card(z);
    long long rangelen = count > llen ? llen : count;
    if (!nested && !emitkey) {
        reply_array(c, (long)(rangelen * 2));
    } else if (nested && !emitkey) {
        reply_array(c, (long)rangelen);
    } else if (!nested && emitkey) {
        reply_array(c, (long)(rangelen * 2 + 1));
        reply_bulk(c, key->p, key->n);
    } else {
        reply_array(c, 2);
        reply_bulk(c, key->p, key->n);
        reply_array(c, (long)rangelen);
    }
    for (long long i = 0; i < rangelen; i++) {
        size_t rank = where == ZPOP_MIN ? 0 : zset_card(z) - 1;
        const char *m;
        size_t n;
        double s;
        zset_at(z, rank, &m, &n, &s);
        if (nested) reply_array(c, 2);
        reply_bulk(c, m, n);
        reply_double(c, s);
        zset_delete_range(z, rank, rank + 1);
    }
    zset_cmd_sync(e);
    tc_changed(c, db, key, OBJ_ZSET, where == ZPOP_MIN ? "zpopmin" : "zpopmax");
    tc_delete_if_empty(c, db, e, key);
    /* As Redis: ZPOPMIN|ZPOPMAX go as they came; BZPOPMIN|BZPOPMAX as
     * ZPOPMIN|ZPOPMAX key; the M forms as ZPOPMIN|ZPOPMAX key n, n what
     * was popped. */
    if (!emitkey) return;
    char num[24];
    const char *p[3] = {where == ZPOP_MIN ? "ZPOPMIN" : "ZPOPMAX", key->p, num};
    const size_t pn[3] = {7, key->n, (size_t)snprintf(num, sizeof(num), "%lld", rangelen)};
    prop_rewrite(c, asked == -1 ? 2 : 3, p, pn);
}

static void zpopMinMax(client *c, int where) {
    if (c->argc > 3) {
        reply_err_syntax(c);
        return;
    }
    long long count = -1;
    if (c->argc == 3 && arg_positive(c, &c->argv[2], &count, NULL) != 0) return;
    int nested = c->resp > 2 && count != -1;
    genericZpop(c, &c->argv[1], 1, where, 0, count, nested, 0);
}

static void zpopminCommand(client *c) { zpopMinMax(c, ZPOP_MIN); }
static void zpopmaxCommand(client *c) { zpopMinMax(c, ZPOP_MAX); }

/* The blocking forms: serve from the first non-empty zset, else block. */
static void blockingGenericZpop(client *c, const garg *keys, int nkeys, int where, const garg *timeout,
                                long long count, int nested, int nil_when_empty) {
    int64_t deadline;
    if (block_parse_timeout(c, timeout, &deadline) != 0) return;
    gdb *db = cmd_db(c);
    int retry = block_retrying(c);
    for (int j = 0; j < nkeys; j++) {
        dbentry *e = db_lookup(db, keys[j].p, keys[j].n);
        if (!e) continue;
        if (e->val.type != OBJ_ZSET) {
            if (retry) continue;
            reply_err_wrongtype(c);
            return;
        }
        if (zset_card(obj_zset(e)) == 0) continue;
        genericZpop(c, &keys[j], 1, where, 1, count, nested, nil_when_empty);
        return;
    }
    if (!block_allowed(c)) {
        reply_null_array(c);
        return;
    }
    block_on_keys(c, keys, nkeys, deadline);
}

static void bzpopminCommand(client *c) {
    blockingGenericZpop(c, &c->argv[1], c->argc - 2, ZPOP_MIN, &c->argv[c->argc - 1], -1, 0, 0);
}
static void bzpopmaxCommand(client *c) {
    blockingGenericZpop(c, &c->argv[1], c->argc - 2, ZPOP_MAX, &c->argv[c->argc - 1], -1, 0, 0);
}

static void zmpopGeneric(client *c, int numkeys_idx, int is_block) {
    long long numkeys;
    if (arg_long_range(c, &c->argv[numkeys_idx], &numkeys, 1, LLONG_MAX, "ERR numkeys should be greater than 0") != 0)
        return;
    if (numkeys > c->argc) {
        reply_err_syntax(c);
        return;
    }
    long long where_idx = numkeys_idx + numkeys + 1;
    if (where_idx >= c->argc) {
        reply_err_syntax(c);
        return;
    }
    int where;
    if (arg_is(&c->argv[where_idx], "min")) {
        where = ZPOP_MIN;
    } else if (arg_is(&c->argv[where_idx], "max")) {
        where = ZPOP_MAX;
    } else {
        reply_err_syntax(c);
        return;
    }
    long long count = -1;
    for (long long j = where_idx + 1; j < c->argc; j++) {
        int moreargs = (c->argc - 1) - (int)j;
        if (count == -1 && arg_is(&c->argv[j], "count") && moreargs) {
            j++;
            if (arg_long_range(c, &c->argv[j], &count, 1, LLONG_MAX, "ERR count should be greater than 0") != 0)
                return;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (count == -1) count = 1;
    const garg *keys = &c->argv[numkeys_idx + 1];
    if (is_block) blockingGenericZpop(c, keys, (int)numkeys, where, &c->argv[1], count, 1, 1);
    else genericZpop(c, keys, (int)numkeys, where, 1, count, 1, 1);
}

static void zmpopCommand(client *c) { zmpopGeneric(c, 1, 0); }
static void bzmpopCommand(client *c) { zmpopGeneric(c, 2, 1); }

/* ---- ZRANDMEMBER ---- */

/* A small set of ranks for unique sampling (Floyd's algorithm). */
typedef struct rank_set {
    uint64_t *slot; /* rank + 1; 0 empty */
    size_t mask;
} rank_set;

static int rank_set_add(rank_set *rs, uint64_t r) {
    size_t i = (size_t)((r * 0x9E3779B97F4A7C15ULL) >> 17) & rs->mask;
    while (rs->slot[i]) {
        if (rs->slot[i] == r + 1) return 0;
        i = (i + 1) & rs->mask;
    }
    rs->slot[i] = r + 1;
    return 1;
}

static void reply_member(client *c, const char *m, size_t n, double s, int withscores) {
    if (withscores && c->resp > 2) reply_array(c, 2);
    reply_bulk(c, m, n);
    if (withscores) reply_double(c, s);
}

static void zrandmemberWithCount(client *c, long long l, int withscores) {
    dbentry *e = tc_lookup_or_reply(c, cmd_db(c), &c->argv[1], OBJ_ZSET, tc_reply_empty_array);
    if (!e) return;
    zset *z = obj_zset(e);
    size_t size = zset_card(z);
    unsigned long long count;
    int uniq = 1;
    if (l >= 0) {
        count = (unsigned long long)l;
    } else {
        count = (unsigned long long)(-l);
        uniq = 0;
    }
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    /* Case 1: repetitions allowed (or a single element): sample each. */
    if (!uniq || count == 1) {
        reply_array(c, (long)(withscores && c->resp == 2 ? count * 2 : count));
        while (count--) {
            const char *m;
            size_t n;
            double s;
            zset_at(z, (size_t)rand_below(size), &m, &n, &s);
            reply_member(c, m, n, s, withscores);
        }
        return;
    }
    /* Case 2: more than there is: the whole zset, from the highest (the
     * order of Redis's zset iterator). */
    if (count >= size) {
        reply_array(c, (long)(withscores && c->resp == 2 ? size * 2 : size));
        zset_iter it;
        zset_iter_init(&it, z, size - 1, 1);
        const char *m;
        size_t n;
        double s;
        while (zset_iter_next(&it, &m, &n, &s)) reply_member(c, m, n, s, withscores);
        return;
    }
    /* Cases 3 and 4: count distinct ranks out of size. */
    size_t cap = 16;
    while (cap < count * 2) cap <<= 1;
    rank_set rs = {calloc(cap, sizeof(uint64_t)), cap - 1};
    uint64_t *order = malloc(sizeof(uint64_t) * count);
    if (!rs.slot || !order) {
        free(rs.slot);
        free(order);
        tc_reply_oom(c);
        return;
    }
    size_t k = 0;
    for (uint64_t j = size - count; j < size; j++) {
        uint64_t t = rand_below(j + 1);
        if (!rank_set_add(&rs, t)) {
            rank_set_add(&rs, j);
            t = j;
        }
        order[k++] = t;
    }
    reply_array(c, (long)(withscores && c->resp == 2 ? count * 2 : count));
    for (size_t i = 0; i < k; i++) {
        const char *m;
        size_t n;
        double s;
        zset_at(z, (size_t)order[i], &m, &n, &s);
        reply_member(c, m, n, s, withscores);
    }
    free(rs.slot);
    free(order);
}

static void zrandmemberCommand(client *c) {
    if (c->argc >= 3) {
        long long l;
        if (tc_parse_rand_count(c, &c->argv[2], &l) != 0) return;
        if (c->argc > 4 || (c->argc == 4 && !arg_is(&c->argv[3], "withscores"))) {
            reply_err_syntax(c);
            return;
        }
        int withscores = c->argc == 4;
        if (withscores && (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2)) {
            reply_error(c, "ERR value is out of range");
            return;
        }
        zrandmemberWithCount(c, l, withscores);
        return;
    }
    dbentry *e = tc_lookup_or_reply(c, cmd_db(c), &c->argv[1], OBJ_ZSET, reply_null);
    if (!e) return;
    zset *z = obj_zset(e);
    const char *m;
    size_t n;
    double s;
    zset_at(z, (size_t)rand_below(zset_card(z)), &m, &n, &s);
    reply_bulk(c, m, n);
}

/* ---- ZUNION / ZINTER / ZDIFF, their STORE forms, ZINTERCARD ---- */

enum { SETOP_UNION, SETOP_INTER, SETOP_DIFF };
enum { AGGR_SUM, AGGR_MIN, AGGR_MAX };

typedef struct zsrc {
    dbentry *e;     /* NULL: missing key (empty) */
    double weight;
    size_t card;
    int idx;        /* argument order, for a stable sort */
} zsrc;

static double merge_sum(double a, double b) {
    double r = a + b;
    return isnan(r) ? 0.0 : r; /* inf + -inf */
}
static double merge_min(double a, double b) { return b < a ? b : a; }
static double merge_max(double a, double b) { return b > a ? b : a; }
static zset_merge_fn *const mergers[] = {merge_sum, merge_min, merge_max};

static int src_by_card(const void *x, const void *y) {
    const zsrc *a = x, *b = y;
    if (a->card != b->card) return a->card < b->card ? -1 : 1;
    return a->idx - b->idx;
}

/* 1 and the score of m in src (1.0 for a plain set member). */
static int src_find(const zsrc *src, const char *m, size_t n, double *score) {
    if (!src->e) return 0;
    if (src->e->val.type == OBJ_ZSET) return zset_score(obj_zset(src->e), m, n, score);
    if (!set_obj_contains(&src->e->val, m, n)) return 0;
    *score = 1.0;
    return 1;
}

/* Visiting every element of a source, sets with score 1. */
typedef void src_visit_fn(void *arg, const char *m, size_t n, double s);

typedef struct set_visit {
    src_visit_fn *fn;
    void *arg;
} set_visit;

static void set_visit_cb(void *arg, const char *m, size_t n) {
    set_visit *sv = arg;
    sv->fn(sv->arg, m, n, 1.0);
}

static void src_each(const zsrc *src, src_visit_fn *fn, void *arg) {
    if (!src->e || src->card == 0) return;
    if (src->e->val.type == OBJ_ZSET) {
        zset_iter it;
        zset_iter_init(&it, obj_zset(src->e), 0, 0);
        const char *m;
        size_t n;
        double s;
        while (zset_iter_next(&it, &m, &n, &s)) fn(arg, m, n, s);
        return;
    }
    set_visit sv = {fn, arg};
    set_obj_each(&src->e->val, set_visit_cb, &sv);
}

typedef struct setop_ctx {
    zsrc *src;
    int nsrc;
    int aggregate;
    int op;
    int card_only;
    long long limit;
    long long cardinality;
    int done;           /* ZINTERCARD reached its limit */
    zset *acc;
    double weight;      /* of the source being visited (union) */
    int rc;
} setop_ctx;

static void union_visit(void *arg, const char *m, size_t n, double s) {
    setop_ctx *x = arg;
    if (x->rc) return;
    double score = x->weight * s;
    if (isnan(score)) score = 0;
    x->rc = zset_acc_add(x->acc, m, n, score, mergers[x->aggregate]);
}

static void inter_visit(void *arg, const char *m, size_t n, double s) {
    setop_ctx *x = arg;
    if (x->rc || x->done) return;
    double score = x->src[0].weight * s;
    if (isnan(score)) score = 0;
    int j;
    for (j = 1; j < x->nsrc; j++) {
        double value;
        if (x->src[j].e == x->src[0].e) {
            value = s * x->src[j].weight;
        } else if (src_find(&x->src[j], m, n, &value)) {
            value *= x->src[j].weight;
        } else {
            break;
        }
        score = mergers[x->aggregate](score, value);
    }
    if (j < x->nsrc) return;
    if (x->card_only) {
        x->cardinality++;
        if (x->limit && x->cardinality >= x->limit) x->done = 1;
        return;
    }
    x->rc = zset_acc_add(x->acc, m, n, score, mergers[AGGR_SUM]);
}

static void diff_visit(void *arg, const char *m, size_t n, double s) {
    setop_ctx *x = arg;
    if (x->rc) return;
    for (int j = 1; j < x->nsrc; j++) {
        double v;
        if (x->src[j].e == x->src[0].e || src_find(&x->src[j], m, n, &v)) return;
    }
    x->rc = zset_acc_add(x->acc, m, n, s, mergers[AGGR_SUM]);
}

static void zsetopGeneric(client *c, const garg *dstkey, int numkeys_idx, int op, int card_only) {
    long long setnum;
    if (arg_long_msg(c, &c->argv[numkeys_idx], &setnum, NULL) != 0) return;
    if (setnum < 1) {
        reply_errorf(c, "ERR at least 1 input key is needed for '%s' command", c->cur ? c->cur->fullname : "?");
        return;
    }
    if (setnum > c->argc - (numkeys_idx + 1)) {
        reply_err_syntax(c);
        return;
    }
    gdb *db = cmd_db(c);
    zsrc *src = calloc((size_t)setnum, sizeof(zsrc));
    if (!src) {
        tc_reply_oom(c);
        return;
    }
    int i, j;
    for (i = 0, j = numkeys_idx + 1; i < setnum; i++, j++) {
        dbentry *e = db_lookup_read(db, c->argv[j].p, c->argv[j].n);
        if (e && e->val.type != OBJ_ZSET && e->val.type != OBJ_SET) {
            free(src);
            reply_err_wrongtype(c);
            return;
        }
        src[i].e = e;
        src[i].weight = 1.0;
        src[i].idx = i;
        src[i].card = !e ? 0 : e->val.type == OBJ_ZSET ? zset_card(obj_zset(e)) : set_obj_card(&e->val);
    }
    int aggregate = AGGR_SUM, withscores = 0;
    long long limit = 0;
    if (j < c->argc) {
        int remaining = c->argc - j;
        while (remaining) {
            if (op != SETOP_DIFF && !card_only && remaining >= setnum + 1 && arg_is(&c->argv[j], "weights")) {
                j++;
                remaining--;
                for (i = 0; i < setnum; i++, j++, remaining--) {
                    if (!str_to_double(c->argv[j].p, c->argv[j].n, &src[i].weight)) {
                        free(src);
                        reply_error(c, "ERR weight value is not a float");
                        return;
                    }
                }
            } else if (op != SETOP_DIFF && !card_only && remaining >= 2 && arg_is(&c->argv[j], "aggregate")) {
                j++;
                remaining--;
                if (arg_is(&c->argv[j], "sum")) aggregate = AGGR_SUM;
                else if (arg_is(&c->argv[j], "min")) aggregate = AGGR_MIN;
                else if (arg_is(&c->argv[j], "max")) aggregate = AGGR_MAX;
                else {
                    free(src);
                    reply_err_syntax(c);
                    return;
                }
                j++;
                remaining--;
            } else if (remaining >= 1 && !dstkey && !card_only && arg_is(&c->argv[j], "withscores")) {
                j++;
                remaining--;
                withscores = 1;
            } else if (card_only && remaining >= 2 && arg_is(&c->argv[j], "limit")) {
                j++;
                remaining--;
                if (arg_positive(c, &c->argv[j], &limit, "ERR LIMIT can't be negative") != 0) {
                    free(src);
                    return;
                }
                j++;
                remaining--;
            } else {
                free(src);
                reply_err_syntax(c);
                return;
            }
        }
    }
    /* Smallest inputs first (a stable order, as Redis's merge sort). */
    if (op != SETOP_DIFF) qsort(src, (size_t)setnum, sizeof(zsrc), src_by_card);

    setop_ctx x = {0};
    x.src = src;
    x.nsrc = (int)setnum;
    x.aggregate = aggregate;
    x.op = op;
    x.card_only = card_only;
    x.limit = limit;
    x.acc = card_only ? NULL : zset_acc_new();
    if (op == SETOP_INTER) {
        if (src[0].card > 0) src_each(&src[0], inter_visit, &x);
    } else if (op == SETOP_UNION) {
        for (i = 0; i < setnum && !x.rc; i++) {
            x.weight = src[i].weight;
            src_each(&src[i], union_visit, &x);
        }
    } else {
        src_each(&src[0], diff_visit, &x);
    }
    free(src);
    if (card_only) {
        reply_int(c, x.cardinality);
        return;
    }
    if (x.rc) {
        zset_free(x.acc);
        reply_zset_error(c, x.rc);
        return;
    }
    zset_limits lim = zset_cmd_limits();
    zset *res = x.acc;
    zset_acc_finish(res, dstkey ? &lim : NULL);
    if (dstkey) {
        static const char *events[] = {"zunionstore", "zinterstore", "zdiffstore"};
        zset_cmd_store(c, db, dstkey, res, zset_card(res), events[op]);
        return;
    }
    size_t card = zset_card(res);
    reply_array(c, (long)(withscores && c->resp == 2 ? card * 2 : card));
    zset_iter it;
    zset_iter_init(&it, res, 0, 0);
    const char *m;
    size_t n;
    double s;
    while (zset_iter_next(&it, &m, &n, &s)) reply_member(c, m, n, s, withscores);
    zset_free(res);
}

static void zunionstoreCommand(client *c) { zsetopGeneric(c, &c->argv[1], 2, SETOP_UNION, 0); }
static void zinterstoreCommand(client *c) { zsetopGeneric(c, &c->argv[1], 2, SETOP_INTER, 0); }
static void zdiffstoreCommand(client *c) { zsetopGeneric(c, &c->argv[1], 2, SETOP_DIFF, 0); }
static void zunionCommand(client *c) { zsetopGeneric(c, NULL, 1, SETOP_UNION, 0); }
static void zinterCommand(client *c) { zsetopGeneric(c, NULL, 1, SETOP_INTER, 0); }
static void zdiffCommand(client *c) { zsetopGeneric(c, NULL, 1, SETOP_DIFF, 0); }
static void zintercardCommand(client *c) { zsetopGeneric(c, NULL, 1, SETOP_INTER, 1); }

/* ---- ZSCAN ---- */

typedef struct zscan_step {
    scan_acc *a;
    int packed;
} zscan_step;

/* ZSCAN prints a score as Redis stores it: a listpack holds d2string's
 * text (integers within +-2^62 without exponent), a skiplist the double. */
static void scan_member_score(void *arg, const char *m, size_t n, double s) {
    zscan_step *x = arg;
    char buf[64];
    int len;
    if (x->packed && s >= (double)(-LLONG_MAX / 2) && s <= (double)(LLONG_MAX / 2) && s == (double)(long long)s)
        len = ll_to_str(buf, sizeof(buf), (long long)s);
    else
        len = double_to_str(buf, sizeof(buf), s);
    scan_push(x->a, m, n);
    scan_push(x->a, buf, (size_t)len);
}

static uint64_t zset_scan_step(void *z, uint64_t cursor, scan_acc *a) {
    zscan_step x = {a, zset_is_packed(z)};
    return zset_scan(z, cursor, scan_member_score, &x);
}

static const scan_kind zset_scan_kind = {OBJ_ZSET, 2, zset_scan_step};

static void zscanCommand(client *c) { scan_command(c, &zset_scan_kind); }

const cmd_handler zset_handlers[] = {
    {"zadd", zaddCommand, CMD_LOCK_KEYS},
    {"zincrby", zincrbyCommand, CMD_LOCK_KEYS},
    {"zrem", zremCommand, CMD_LOCK_KEYS},
    {"zcard", zcardCommand, CMD_LOCK_KEYS},
    {"zscore", zscoreCommand, CMD_LOCK_KEYS},
    {"zmscore", zmscoreCommand, CMD_LOCK_KEYS},
    {"zrank", zrankCommand, CMD_LOCK_KEYS},
    {"zrevrank", zrevrankCommand, CMD_LOCK_KEYS},
    {"zcount", zcountCommand, CMD_LOCK_KEYS},
    {"zlexcount", zlexcountCommand, CMD_LOCK_KEYS},
    {"zrange", zrangeCommand, CMD_LOCK_KEYS},
    {"zrangestore", zrangestoreCommand, CMD_LOCK_KEYS},
    {"zrevrange", zrevrangeCommand, CMD_LOCK_KEYS},
    {"zrangebyscore", zrangebyscoreCommand, CMD_LOCK_KEYS},
    {"zrevrangebyscore", zrevrangebyscoreCommand, CMD_LOCK_KEYS},
    {"zrangebylex", zrangebylexCommand, CMD_LOCK_KEYS},
    {"zrevrangebylex", zrevrangebylexCommand, CMD_LOCK_KEYS},
    {"zremrangebyrank", zremrangebyrankCommand, CMD_LOCK_KEYS},
    {"zremrangebyscore", zremrangebyscoreCommand, CMD_LOCK_KEYS},
    {"zremrangebylex", zremrangebylexCommand, CMD_LOCK_KEYS},
    {"zpopmin", zpopminCommand, CMD_LOCK_KEYS},
    {"zpopmax", zpopmaxCommand, CMD_LOCK_KEYS},
    {"bzpopmin", bzpopminCommand, CMD_LOCK_KEYS},
    {"bzpopmax", bzpopmaxCommand, CMD_LOCK_KEYS},
    {"zmpop", zmpopCommand, CMD_LOCK_KEYS},
    {"bzmpop", bzmpopCommand, CMD_LOCK_KEYS},
    {"zrandmember", zrandmemberCommand, CMD_LOCK_KEYS},
    {"zunion", zunionCommand, CMD_LOCK_KEYS},
    {"zinter", zinterCommand, CMD_LOCK_KEYS},
    {"zdiff", zdiffCommand, CMD_LOCK_KEYS},
    {"zunionstore", zunionstoreCommand, CMD_LOCK_KEYS},
    {"zinterstore", zinterstoreCommand, CMD_LOCK_KEYS},
    {"zdiffstore", zdiffstoreCommand, CMD_LOCK_KEYS},
    {"zintercard", zintercardCommand, CMD_LOCK_KEYS},
    {"zscan", zscanCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
