/* t_hash.c -- the hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL,
 * HDEL, HLEN, HSTRLEN, HEXISTS, HKEYS, HVALS, HINCRBY, HINCRBYFLOAT,
 * HRANDFIELD and HSCAN, with Redis 7.0's replies and errors.
 *
 * The structure lives in ds/hash (a packed small form, reported as
 * "listpack", and an arena + swiss index, reported as "hashtable"); this file
 * reads the hash-max-listpack-* settings, passes them down on every write,
 * and mirrors the form into gobj.enc after each write so OBJECT ENCODING
 * answers like Redis. Every command runs under its key's shard lock (the
 * dispatcher takes it) and follows one recipe: look up (or create) the key,
 * check the type, do the work, reply, signal the change. A hash never stays
 * empty: the write that removes its last field deletes the key. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "cmd/propagate.h"
#include "cmd/families.h"
#include "cmd/types/scan.h"
#include "cmd/types/tcommon.h"
#include "session/reply.h"
#include "ds/hash.h"
#include "util/rand.h"
#include "util/strutil.h"
#include "base/config.h"

/* ---- object glue ---- */

TC_VALUE_TYPE_RESIZING(hash, OBJ_HASH, hash_free, hash_dup, hash_mem_usage, hash_len, hash_rehash_step)

static hash_limits hash_cfg_limits(void) {
    return (hash_limits){.max_entries = tc_cfg_size(cfg.hash_max_listpack_entries),
                         .max_value = tc_cfg_size(cfg.hash_max_listpack_value)};
}

static inline hash *obj_hash(dbentry *e) { return e->val.u.p; }

static inline void sync_encoding(dbentry *e) {
    e->val.enc = hash_form(obj_hash(e)) == HASH_SMALL ? ENC_LISTPACK : ENC_HASHTABLE;
}

static void reply_set_error(client *c, int rc) { tc_reply_write_error(c, rc == HASH_EFULL, "hash"); }

/* Set one pair on the hash of e; keeps e->val in step with the (possibly
 * converted) hash. Returns hash_set's result. */
static int set_pair(dbentry *e, const garg *f, const char *v, size_t vlen, const hash_limits *lim) {
    hash *h = obj_hash(e);
    int rc = hash_set(&h, f->p, f->n, v, vlen, lim);
    e->val.u.p = h;
    sync_encoding(e);
    return rc;
}

/* HDEL's step (tc_remove_args); keeps e->val in step with the hash. */
static int hash_remove(dbentry *e, const garg *field) {
    hash *h = obj_hash(e);
    int d = hash_del(&h, field->p, field->n);
    e->val.u.p = h;
    return d;
}

/* Set field to v on the hash of e, or of a new key when e is NULL (HSETNX,
 * HINCRBY, HINCRBYFLOAT). -1 after replying the error; a key created here
 * does not stay empty. */
static int write_field(client *c, gdb *db, dbentry *e, const garg *key, const garg *field, const char *v, size_t vl) {
    if (!e && !(e = tc_add_key(c, db, key, OBJ_HASH, ENC_LISTPACK, hash_new()))) return -1;
    hash_limits lim = hash_cfg_limits();
    int rc = set_pair(e, field, v, vl, &lim);
    if (rc < 0) {
        tc_drop_if_empty(db, e);
        reply_set_error(c, rc);
        return -1;
    }
    return 0;
}

/* ---- HSET / HMSET / HSETNX ---- */

static void hsetGeneric(client *c, int is_hmset) {
    if (c->argc % 2 == 1) {
        reply_err_arity(c);
        return;
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_HASH, &wrong);
    if (wrong) return;
    if (!e && !(e = tc_add_key(c, db, key, OBJ_HASH, ENC_LISTPACK, hash_new()))) return;
    hash_limits lim = hash_cfg_limits();
    long long created = 0;
    int rc = 0, written = 0;
    for (int i = 2; i < c->argc && rc >= 0; i += 2) {
        tc_prefetch_elems(&e->val, c->argv, c->argc, i, 2);
        rc = set_pair(e, &c->argv[i], c->argv[i + 1].p, c->argv[i + 1].n, &lim);
        if (rc >= 0) written++;
        if (rc > 0) created++;
    }
    if (rc < 0) {
        tc_drop_if_empty(db, e);
        reply_set_error(c, rc);
        if (!written) return;
    } else if (is_hmset) {
        reply_ok(c);
    } else {
        reply_int(c, created);
    }
    tc_changed(c, db, key, OBJ_HASH, "hset");
}

static void hsetCommand(client *c) { hsetGeneric(c, 0); }
static void hmsetCommand(client *c) { hsetGeneric(c, 1); }

static void hsetnxCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1], *field = &c->argv[2];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_HASH, &wrong);
    if (wrong) return;
    if (e && hash_exists(obj_hash(e), field->p, field->n)) {
        reply_int(c, 0);
        return;
    }
    if (write_field(c, db, e, key, field, c->argv[3].p, c->argv[3].n) != 0) return;
    reply_int(c, 1);
    tc_changed(c, db, key, OBJ_HASH, "hset");
}

/* ---- reads ---- */

static void hgetCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    const char *v;
    size_t vl;
    if (e && hash_get(obj_hash(e), c->argv[2].p, c->argv[2].n, &v, &vl)) reply_bulk(c, v, vl);
    else reply_null(c);
}

static void hmgetCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const char *v;
        size_t vl;
        if (e) tc_prefetch_elems(&e->val, c->argv, c->argc, i, 1);
        if (e && hash_get(obj_hash(e), c->argv[i].p, c->argv[i].n, &v, &vl)) reply_bulk(c, v, vl);
        else reply_null(c);
    }
}

static void hlenCommand(client *c) { tc_reply_len(c, OBJ_HASH); }

static void hstrlenCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    size_t vl = 0;
    if (e && !hash_get(obj_hash(e), c->argv[2].p, c->argv[2].n, NULL, &vl)) vl = 0;
    reply_int(c, (long long)vl);
}

static void hexistsCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    reply_int(c, e && hash_exists(obj_hash(e), c->argv[2].p, c->argv[2].n));
}

enum { WANT_FIELDS = 1, WANT_VALUES = 2 };

static void hgetallGeneric(client *c, int want) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    int pairs = want == (WANT_FIELDS | WANT_VALUES);
    long n = e ? (long)hash_len(obj_hash(e)) : 0;
    if (pairs) reply_map(c, n);
    else reply_array(c, n);
    if (!e) return;
    hash_iter it;
    hash_iter_init(&it, obj_hash(e));
    const char *f, *v;
    size_t fl, vl;
    while (hash_iter_next(&it, &f, &fl, &v, &vl)) {
        if (want & WANT_FIELDS) reply_bulk(c, f, fl);
        if (want & WANT_VALUES) reply_bulk(c, v, vl);
    }
    hash_iter_done(&it);
}

static void hkeysCommand(client *c) { hgetallGeneric(c, WANT_FIELDS); }
static void hvalsCommand(client *c) { hgetallGeneric(c, WANT_VALUES); }
static void hgetallCommand(client *c) { hgetallGeneric(c, WANT_FIELDS | WANT_VALUES); }

/* ---- HDEL ---- */

static void hdelCommand(client *c) { tc_remove_args(c, OBJ_HASH, "hdel", hash_remove); }

/* ---- counters ---- */

static void hincrbyCommand(client *c) {
    long long incr;
    if (arg_ll(c, &c->argv[3], &incr) != 0) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1], *field = &c->argv[2];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_HASH, &wrong);
    if (wrong) return;
    long long cur = 0;
    const char *v;
    size_t vl;
    if (e && hash_get(obj_hash(e), field->p, field->n, &v, &vl) && !str_to_ll(v, vl, &cur)) {
        reply_error(c, "ERR hash value is not an integer");
        return;
    }
    if ((incr < 0 && cur < 0 && incr < LLONG_MIN - cur) || (incr > 0 && cur > 0 && incr > LLONG_MAX - cur)) {
        reply_error(c, "ERR increment or decrement would overflow");
        return;
    }
    long long nv = cur + incr;
    char buf[STRUTIL_LLSTR];
    int n = ll_to_str(buf, sizeof(buf), nv);
    if (write_field(c, db, e, key, field, buf, (size_t)n) != 0) return;
    reply_int(c, nv);
    tc_changed(c, db, key, OBJ_HASH, "hincrby");
}

static void hincrbyfloatCommand(client *c) {
    long double incr, cur = 0;
    if (!str_to_ldouble(c->argv[3].p, c->argv[3].n, &incr)) {
        reply_error(c, "ERR value is not a valid float");
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1], *field = &c->argv[2];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_HASH, &wrong);
    if (wrong) return;
    const char *v;
    size_t vl;
    if (e && hash_get(obj_hash(e), field->p, field->n, &v, &vl) && !str_to_ldouble(v, vl, &cur)) {
        reply_error(c, "ERR hash value is not a float");
        return;
    }
    long double nv = cur + incr;
    if (isnan(nv) || isinf(nv)) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[STRUTIL_LDSTR];
    int n = ld_to_str_human(buf, sizeof(buf), nv);
    if (n <= 0) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    if (write_field(c, db, e, key, field, buf, (size_t)n) != 0) return;
    reply_bulk(c, buf, (size_t)n);
    tc_changed(c, db, key, OBJ_HASH, "hincrbyfloat");
    /* The result, not the increment, as Redis propagates it. */
    const char *p[4] = {"HSET", key->p, field->p, buf};
    const size_t pn[4] = {4, key->n, field->n, (size_t)n};
    prop_rewrite(c, 4, p, pn);
}

/* ---- HRANDFIELD ---- */

typedef struct rand_reply {
    client *c;
    int withvalues;
} rand_reply;

static void reply_rand_pair(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    rand_reply *rr = arg;
    if (rr->withvalues && rr->c->resp > 2) reply_array(rr->c, 2);
    reply_bulk(rr->c, f, fl);
    if (rr->withvalues) reply_bulk(rr->c, v, vl);
}

static void hrandfieldWithCount(client *c, long long l, int withvalues) {
    unsigned long long count;
    int uniq;
    if (tc_rand_count(c, l, &count, &uniq) != 0) return;
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    if (!e || count == 0) {
        reply_array(c, 0);
        return;
    }
    hash *h = obj_hash(e);
    size_t size = hash_len(h);
    if (uniq && count > size) count = size;
    rand_reply rr = {c, withvalues};
    reply_array(c, (long)(withvalues && c->resp == 2 ? count * 2 : count));
    if (!uniq) {
        hash_random_pairs(h, (size_t)count, rand_next, reply_rand_pair, &rr);
    } else if (hash_random_unique(h, (size_t)count, rand_next, reply_rand_pair, &rr) != HASH_OK) {
        /* Out of memory before anything was written: still a well-formed
         * reply, made of plain picks. */
        hash_random_pairs(h, (size_t)count, rand_next, reply_rand_pair, &rr);
    }
}

static void hrandfieldCommand(client *c) {
    if (c->argc >= 3) {
        /* Redis's order: the count, then the syntax, then its range. */
        long long l;
        if (tc_parse_rand_count(c, &c->argv[2], &l) != 0) return;
        int withvalues = 0;
        if (c->argc > 4 || (c->argc == 4 && !arg_is(&c->argv[3], "withvalues"))) {
            reply_err_syntax(c);
            return;
        }
        if (c->argc == 4) {
            withvalues = 1;
            if (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2) {
                reply_error(c, "ERR value is out of range");
                return;
            }
        }
        hrandfieldWithCount(c, l, withvalues);
        return;
    }
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    const char *f, *v;
    size_t fl, vl;
    if (e && hash_random(obj_hash(e), rand_next, &f, &fl, &v, &vl)) reply_bulk(c, f, fl);
    else reply_null(c);
}

/* ---- HSCAN ---- */

static void scan_pair(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    scan_push(arg, f, fl);
    scan_push(arg, v, vl);
}

static uint64_t hash_scan_step(void *h, uint64_t cursor, scan_acc *a) { return hash_scan(h, cursor, scan_pair, a); }

static const scan_kind hash_scan_kind = {OBJ_HASH, 2, hash_scan_step};

static void hscanCommand(client *c) { scan_command(c, &hash_scan_kind); }

const cmd_handler hash_handlers[] = {
    {"hset", hsetCommand, CMD_LOCK_KEYS},
    {"hsetnx", hsetnxCommand, CMD_LOCK_KEYS},
    {"hmset", hmsetCommand, CMD_LOCK_KEYS},
    {"hget", hgetCommand, CMD_LOCK_KEYS},
    {"hmget", hmgetCommand, CMD_LOCK_KEYS},
    {"hgetall", hgetallCommand, CMD_LOCK_KEYS},
    {"hdel", hdelCommand, CMD_LOCK_KEYS},
    {"hlen", hlenCommand, CMD_LOCK_KEYS},
    {"hstrlen", hstrlenCommand, CMD_LOCK_KEYS},
    {"hexists", hexistsCommand, CMD_LOCK_KEYS},
    {"hkeys", hkeysCommand, CMD_LOCK_KEYS},
    {"hvals", hvalsCommand, CMD_LOCK_KEYS},
    {"hincrby", hincrbyCommand, CMD_LOCK_KEYS},
    {"hincrbyfloat", hincrbyfloatCommand, CMD_LOCK_KEYS},
    {"hrandfield", hrandfieldCommand, CMD_LOCK_KEYS},
    {"hscan", hscanCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
