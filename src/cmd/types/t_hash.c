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
#include "cmd/families.h"
#include "cmd/types/scan.h"
#include "session/reply.h"
#include "ds/hash.h"
#include "util/rand.h"
#include "util/strutil.h"
#include "base/config.h"

/* ---- object glue ---- */

static void hash_obj_free(gobj *o) {
    hash_free(o->u.p);
    o->u.p = NULL;
}

static int hash_obj_dup(gobj *dst, const gobj *src) {
    hash *d = hash_dup(src->u.p);
    if (!d) return -1;
    *dst = *src;
    dst->u.p = d;
    return 0;
}

static size_t hash_obj_mem_usage(const gobj *o) { return hash_mem_usage(o->u.p); }

static const obj_type_ops hash_ops = {hash_obj_free, hash_obj_dup, hash_obj_mem_usage};

void hash_family_init(void) { obj_register_type(OBJ_HASH, &hash_ops); }

static hash_limits hash_cfg_limits(void) {
    hash_limits lim;
    lim.max_entries = cfg.hash_max_listpack_entries < 0 ? 0 : (size_t)cfg.hash_max_listpack_entries;
    lim.max_value = cfg.hash_max_listpack_value < 0 ? 0 : (size_t)cfg.hash_max_listpack_value;
    return lim;
}

static inline hash *obj_hash(dbentry *e) { return e->val.u.p; }

static inline void sync_encoding(dbentry *e) {
    e->val.enc = hash_form(obj_hash(e)) == HASH_SMALL ? ENC_LISTPACK : ENC_HASHTABLE;
}

/* The key's entry when it holds a hash; NULL when absent. *wrong is set
 * (and WRONGTYPE replied) when it holds another type. */
static dbentry *lookup_hash(client *c, gdb *db, const garg *key, int *wrong) {
    return cmd_lookup_typed(c, db, key, OBJ_HASH, wrong);
}

/* A new, empty hash key (filled by the caller before the command ends). */
static dbentry *create_hash(gdb *db, const garg *key) {
    hash *h = hash_new();
    if (!h) return NULL;
    dbentry *e = db_add(db, key->p, key->n);
    if (!e) {
        hash_free(h);
        return NULL;
    }
    e->val.type = OBJ_HASH;
    e->val.enc = ENC_LISTPACK;
    e->val.u.p = h;
    return e;
}

static void reply_err_oom(client *c) { reply_error(c, "ERR out of memory"); }

static void reply_set_error(client *c, int rc) {
    if (rc == HASH_EFULL) reply_error(c, "ERR hash is too large (its arena's reference space is exhausted)");
    else reply_err_oom(c);
}

/* Set one pair on the hash of e; keeps e->val in step with the (possibly
 * converted) hash. Returns hash_set's result. */
static int set_pair(dbentry *e, const garg *f, const char *v, size_t vlen, const hash_limits *lim) {
    hash *h = obj_hash(e);
    int rc = hash_set(&h, f->p, f->n, v, vlen, lim);
    e->val.u.p = h;
    sync_encoding(e);
    return rc;
}

/* A write that failed on a key it created must not leave it empty. */
static void drop_if_empty(gdb *db, dbentry *e) {
    if (hash_len(obj_hash(e)) == 0) db_delete_entry(db, e);
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
    dbentry *e = lookup_hash(c, db, key, &wrong);
    if (wrong) return;
    if (!e && !(e = create_hash(db, key))) {
        reply_err_oom(c);
        return;
    }
    hash_limits lim = hash_cfg_limits();
    long long created = 0;
    int rc = 0, written = 0;
    for (int i = 2; i < c->argc && rc >= 0; i += 2) {
        rc = set_pair(e, &c->argv[i], c->argv[i + 1].p, c->argv[i + 1].n, &lim);
        if (rc >= 0) written++;
        if (rc > 0) created++;
    }
    if (rc < 0) {
        drop_if_empty(db, e);
        reply_set_error(c, rc);
        if (!written) return;
    } else if (is_hmset) {
        reply_ok(c);
    } else {
        reply_int(c, created);
    }
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_HASH, "hset", db, key->p, key->n);
}

static void hsetCommand(client *c) { hsetGeneric(c, 0); }
static void hmsetCommand(client *c) { hsetGeneric(c, 1); }

static void hsetnxCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1], *field = &c->argv[2];
    int wrong;
    dbentry *e = lookup_hash(c, db, key, &wrong);
    if (wrong) return;
    if (e && hash_exists(obj_hash(e), field->p, field->n)) {
        reply_int(c, 0);
        return;
    }
    if (!e && !(e = create_hash(db, key))) {
        reply_err_oom(c);
        return;
    }
    hash_limits lim = hash_cfg_limits();
    int rc = set_pair(e, field, c->argv[3].p, c->argv[3].n, &lim);
    if (rc < 0) {
        drop_if_empty(db, e);
        reply_set_error(c, rc);
        return;
    }
    reply_int(c, 1);
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_HASH, "hset", db, key->p, key->n);
}

/* ---- reads ---- */

static void hgetCommand(client *c) {
    int wrong;
    dbentry *e = lookup_hash(c, cmd_db(c), &c->argv[1], &wrong);
    if (wrong) return;
    const char *v;
    size_t vl;
    if (e && hash_get(obj_hash(e), c->argv[2].p, c->argv[2].n, &v, &vl)) reply_bulk(c, v, vl);
    else reply_null(c);
}

static void hmgetCommand(client *c) {
    int wrong;
    dbentry *e = lookup_hash(c, cmd_db(c), &c->argv[1], &wrong);
    if (wrong) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const char *v;
        size_t vl;
        if (e && hash_get(obj_hash(e), c->argv[i].p, c->argv[i].n, &v, &vl)) reply_bulk(c, v, vl);
        else reply_null(c);
    }
}

static void hlenCommand(client *c) {
    int wrong;
    dbentry *e = lookup_hash(c, cmd_db(c), &c->argv[1], &wrong);
    if (wrong) return;
    reply_int(c, e ? (long long)hash_len(obj_hash(e)) : 0);
}

static void hstrlenCommand(client *c) {
    int wrong;
    dbentry *e = lookup_hash(c, cmd_db(c), &c->argv[1], &wrong);
    if (wrong) return;
    size_t vl = 0;
    if (e && !hash_get(obj_hash(e), c->argv[2].p, c->argv[2].n, NULL, &vl)) vl = 0;
    reply_int(c, (long long)vl);
}

static void hexistsCommand(client *c) {
    int wrong;
    dbentry *e = lookup_hash(c, cmd_db(c), &c->argv[1], &wrong);
    if (wrong) return;
    reply_int(c, e && hash_exists(obj_hash(e), c->argv[2].p, c->argv[2].n));
}

enum { WANT_FIELDS = 1, WANT_VALUES = 2 };

static void hgetallGeneric(client *c, int want) {
    int wrong;
    dbentry *e = lookup_hash(c, cmd_db(c), &c->argv[1], &wrong);
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

static void hdelCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = lookup_hash(c, db, key, &wrong);
    if (wrong) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    long long deleted = 0;
    int removed = 0;
    for (int i = 2; i < c->argc; i++) {
        hash *h = obj_hash(e);
        int d = hash_del(&h, c->argv[i].p, c->argv[i].n);
        e->val.u.p = h;
        if (!d) continue;
        deleted++;
        if (hash_len(h) == 0) {
            db_delete_entry(db, e);
            removed = 1;
            break;
        }
    }
    if (deleted) {
        cmd_key_modified(c, db, key->p, key->n);
        cmd_notify(c, NOTIFY_HASH, "hdel", db, key->p, key->n);
        if (removed) cmd_notify(c, NOTIFY_GENERIC, "del", db, key->p, key->n);
    }
    reply_int(c, deleted);
}

/* ---- counters ---- */

static void hincrbyCommand(client *c) {
    long long incr;
    if (arg_ll(c, &c->argv[3], &incr) != 0) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1], *field = &c->argv[2];
    int wrong;
    dbentry *e = lookup_hash(c, db, key, &wrong);
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
    if (!e && !(e = create_hash(db, key))) {
        reply_err_oom(c);
        return;
    }
    hash_limits lim = hash_cfg_limits();
    int rc = set_pair(e, field, buf, (size_t)n, &lim);
    if (rc < 0) {
        drop_if_empty(db, e);
        reply_set_error(c, rc);
        return;
    }
    reply_int(c, nv);
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_HASH, "hincrby", db, key->p, key->n);
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
    dbentry *e = lookup_hash(c, db, key, &wrong);
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
    if (!e && !(e = create_hash(db, key))) {
        reply_err_oom(c);
        return;
    }
    hash_limits lim = hash_cfg_limits();
    int rc = set_pair(e, field, buf, (size_t)n, &lim);
    if (rc < 0) {
        drop_if_empty(db, e);
        reply_set_error(c, rc);
        return;
    }
    reply_bulk(c, buf, (size_t)n);
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_HASH, "hincrbyfloat", db, key->p, key->n);
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

/* Negative counts repeat picks; a count this large could never be served
 * (Redis 7.0 runs out of memory trying), so Goblin refuses it. */
#define HRANDFIELD_MAX_REPEATED ((unsigned long long)1 << 32)

static void hrandfieldWithCount(client *c, long long l, int withvalues) {
    int uniq = l >= 0;
    unsigned long long count = uniq ? (unsigned long long)l : (unsigned long long)-l;
    if (!uniq && count > HRANDFIELD_MAX_REPEATED) {
        reply_error(c, "ERR value is out of range");
        return;
    }
    int wrong;
    dbentry *e = lookup_hash(c, cmd_db(c), &c->argv[1], &wrong);
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
        if (!str_to_ll(c->argv[2].p, c->argv[2].n, &l)) {
            reply_err_not_int(c);
            return;
        }
        if (l < -LLONG_MAX) {
            reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and "
                           "9223372036854775807");
            return;
        }
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
    dbentry *e = lookup_hash(c, cmd_db(c), &c->argv[1], &wrong);
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
