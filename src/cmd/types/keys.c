/* keys.c -- the generic keyspace commands: DEL, EXISTS, TYPE, KEYS, SCAN,
 * RANDOMKEY, RENAME(NX), MOVE, COPY, TOUCH, SWAPDB and the expiry family.
 *
 * Locking: commands whose keys are all in their argument range run under
 * their shards' locks (the dispatcher takes them); KEYS, RANDOMKEY, MOVE,
 * COPY and SWAPDB reach beyond one database's named shards and run under
 * the keyspace write lock; SCAN runs under the keyspace read lock, its
 * step (the rest of SCAN is scan.c's) locking one shard at a time. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cluster/cluster.h"
#include "cmd/blocking.h"
#include "cmd/command.h"
#include "cmd/propagate.h"
#include "cmd/families.h"
#include "base/config.h"
#include "base/log.h"
#include "cmd/types/scan.h"
#include "session/reply.h"
#include "util/strutil.h"
#include "db/strval.h"
#include "persist/persist.h"
#include "persist/rdb.h"

static void delGeneric(client *c, int lazy) {
    gdb *db = cmd_db(c);
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        cmd_prefetch_run(c, db, i, 1, 1);
        if ((lazy ? db_unlink : db_delete)(db, c->argv[i].p, c->argv[i].n)) {
            cmd_key_modified(c, db, c->argv[i].p, c->argv[i].n);
            cmd_notify(c, NOTIFY_GENERIC, "del", db, c->argv[i].p, c->argv[i].n);
            n++;
        }
    }
    reply_int(c, n);
}

/* As Redis: UNLINK hands large values to the lazy-free thread, DEL does
 * so under lazyfree-lazy-user-del. */
static int lazy_user_del;
static void delCommand(client *c) { delGeneric(c, keys_lazy_user_del()); }
static void unlinkCommand(client *c) { delGeneric(c, 1); }

/* EXISTS leaves the keys' access clocks alone, TOUCH sets them. */
static void count_keys(client *c, dbentry *(*lookup)(gdb *, const char *, size_t)) {
    gdb *db = cmd_db(c);
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        cmd_prefetch_run(c, db, i, 1, 1);
        n += lookup(db, c->argv[i].p, c->argv[i].n) != NULL;
    }
    reply_int(c, n);
}

static void existsCommand(client *c) { count_keys(c, db_lookup_notouch); }
static void touchCommand(client *c) { count_keys(c, db_lookup); }

static void typeCommand(client *c) {
    dbentry *e = db_lookup_notouch(cmd_db(c), c->argv[1].p, c->argv[1].n);
    reply_simple(c, e ? obj_type_name(e->val.type) : "none");
}

static int all_pattern(const garg *p) { return p->n == 1 && p->p[0] == '*'; }

static void keysCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *pat = &c->argv[1];
    int all = all_pattern(pat);
    size_t h = reply_defer(c);
    long n = 0;
    int64_t now = db_now_ms();
    for (int s = 0; s < DB_NSHARDS; s++) {
        swiss_iter it;
        swiss_iter_init(&it, &db->shards[s].keys);
        void *slot;
        while ((slot = swiss_iter_next(&it))) {
            dbentry *e = db_index_entry(&db->shards[s].keys, slot);
            if (db_is_expired(e, now)) continue;
            if (!all && !glob_match(pat->p, pat->n, db_entry_key(e), db_entry_klen(e), 0)) continue;
            reply_bulk(c, db_entry_key(e), db_entry_klen(e));
            n++;
        }
        swiss_iter_done(&it);
    }
    reply_defer_array(c, h, n);
}

/* SCAN's iteration (scan.c does the rest): the keys of one step of the
 * selected database, keys of another TYPE and expired keys counted but
 * left out. An expired key found is deleted after the step, as Redis's
 * SCAN does (expired_keys, a DEL in the write stream). */
typedef struct scan_ctx {
    scan_acc *a;
    gdb *db;
    char **gone;
    size_t *gonen;
    int ngone, capgone;
} scan_ctx;

/* SCAN's TYPE check is Redis's read lookup of each key MATCH let through
 * (one that touches nothing but counts a keyspace hit, or a miss for an
 * expired key); the key itself is filtered here, while it is at hand, and
 * MATCH again in scan_command. */
static void scan_key(void *arg, dbentry *e) {
    scan_ctx *x = arg;
    scan_acc *a = x->a;
    size_t kn = db_entry_klen(e);
    int expired = db_is_expired(e, db_now_ms());
    int matched = !a->pat || glob_match(a->pat->p, a->pat->n, db_entry_key(e), kn, 0);
    if (a->type != SCAN_ANY_TYPE && matched) db_count_read_key(x->db, db_entry_key(e), kn, !expired);
    if (expired && !matched) {
        /* Left for later, as Redis expires only the keys MATCH lets
         * through (the reply leaves it out either way). */
        scan_skip(a);
    } else if (expired) {
        if (a->type == SCAN_TYPE_NONE) scan_push(a, db_entry_key(e), kn);
        else scan_skip(a);
        if (x->ngone == x->capgone) {
            int nc = x->capgone ? x->capgone * 2 : 16;
            char **ng = realloc(x->gone, sizeof(char *) * (size_t)nc);
            size_t *nn = realloc(x->gonen, sizeof(size_t) * (size_t)nc);
            if (ng) x->gone = ng;
            if (nn) x->gonen = nn;
            if (!ng || !nn) return; /* it stays: the next lookup expires it */
            x->capgone = nc;
        }
        char *k = malloc(kn + 1);
        if (!k) return;
        memcpy(k, db_entry_key(e), kn);
        x->gone[x->ngone] = k;
        x->gonen[x->ngone++] = kn;
    } else if (a->type != SCAN_ANY_TYPE && e->val.type != a->type) {
        scan_skip(a);
    } else {
        scan_push(a, db_entry_key(e), kn);
    }
}

/* Under the keyspace read lock the dispatcher took (CMD_LOCK_READ). */
static uint64_t scan_keyspace_step(void *db, uint64_t cursor, scan_acc *a) {
    scan_ctx x = {a, db, NULL, NULL, 0, 0};
    cursor = db_scan(db, cursor, scan_key, &x);
    for (int i = 0; i < x.ngone; i++) {
        unsigned s = db_shard_of(x.gone[i], x.gonen[i]);
        db_lock_shard(db, s);
        dbentry *e = db_lookup_raw(db, x.gone[i], x.gonen[i]);
        if (e) db_expire_if_needed(db, e);
        prop_flush(); /* its DEL, before another write to the key can be */
        db_unlock_shard(db, s);
        free(x.gone[i]);
    }
    free(x.gone);
    free(x.gonen);
    return cursor;
}

static const scan_kind keyspace_scan = {SCAN_KEYSPACE, 1, scan_keyspace_step};

static void scanCommand(client *c) { scan_command(c, &keyspace_scan); }

static void randomkeyCommand(client *c) {
    dbentry *e = db_random_key(cmd_db(c));
    if (!e) reply_null(c);
    else reply_bulk(c, db_entry_key(e), db_entry_klen(e));
}

/* Move entry e (key from of src) to the free key to of dst (same or other
 * db), keeping value and TTL, and signal both keys: the events of RENAME
 * or MOVE, ev[0] for the source and ev[1] for the destination. */
static void move_entry(client *c, gdb *src, dbentry *e, const garg *from, gdb *dst, const garg *to,
                       const char *const ev[2]) {
    /* An embedded string is copied out of its entry, into the new one. */
    if (strval_unembed(&e->val) != 0) abort();
    void *at;
    int64_t exp = db_entry_expire(e);
    dbentry *ne = db_add_ext(dst, to->p, to->n, strval_embed_size_of(&e->val), &at, exp != -1);
    if (!ne) abort();
    db_entry_set_value(ne, &e->val);
    if (at) strval_embed(&ne->val, at);
    ne->val.lru = e->val.lru; /* the value keeps its access clock */
    e->val.type = OBJ_NONE; /* ownership moved */
    db_delete_entry(src, e);
    if (exp != -1) db_set_expire(dst, ne, exp);
    block_signal_key(dst, to->p, to->n);
    cmd_key_modified(c, src, from->p, from->n);
    cmd_key_modified(c, dst, to->p, to->n);
    cmd_notify(c, NOTIFY_GENERIC, ev[0], src, from->p, from->n);
    cmd_notify(c, NOTIFY_GENERIC, ev[1], dst, to->p, to->n);
}

static void renameGeneric(client *c, int nx) {
    gdb *db = cmd_db(c);
    const garg *src = &c->argv[1], *dst = &c->argv[2];
    dbentry *e = db_lookup(db, src->p, src->n);
    if (!e) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (src->n == dst->n && memcmp(src->p, dst->p, src->n) == 0) {
        if (nx) reply_int(c, 0);
        else reply_ok(c);
        return;
    }
    dbentry *d = db_lookup(db, dst->p, dst->n);
    if (d) {
        if (nx) {
            reply_int(c, 0);
            return;
        }
        db_delete_entry(db, d);
    }
    static const char *const events[2] = {"rename_from", "rename_to"};
    move_entry(c, db, e, src, db, dst, events);
    if (nx) reply_int(c, 1);
    else reply_ok(c);
}

static void renameCommand(client *c) { renameGeneric(c, 0); }
static void renamenxCommand(client *c) { renameGeneric(c, 1); }

static int parse_db_index(client *c, const garg *a, int *out) {
    long long id;
    if (!str_to_ll(a->p, a->n, &id) || id < INT_MIN || id > INT_MAX) {
        reply_err_not_int(c);
        return -1;
    }
    if (id < 0 || id >= db_count()) {
        reply_error(c, "ERR DB index is out of range");
        return -1;
    }
    *out = (int)id;
    return 0;
}

static void moveCommand(client *c) {
    int dbid;
    if (cluster_enabled()) {
        reply_error(c, "ERR MOVE is not allowed in cluster mode");
        return;
    }
    if (parse_db_index(c, &c->argv[2], &dbid) != 0) return;
    gdb *src = cmd_db(c), *dst = db_get(dbid);
    if (src == dst) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    const garg *k = &c->argv[1];
    dbentry *e = db_lookup(src, k->p, k->n);
    if (!e || db_lookup(dst, k->p, k->n)) {
        reply_int(c, 0);
        return;
    }
    static const char *const events[2] = {"move_from", "move_to"};
    move_entry(c, src, e, k, dst, k, events);
    reply_int(c, 1);
}

static void copyCommand(client *c) {
    gdb *src = cmd_db(c), *dst = src;
    int replace = 0;
    for (int i = 3; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "replace")) {
            replace = 1;
        } else if (arg_is(&c->argv[i], "db") && i + 1 < c->argc) {
            int id;
            if (parse_db_index(c, &c->argv[++i], &id) != 0) return;
            dst = db_get(id);
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (cluster_enabled() && (src->id != 0 || dst->id != 0)) {
        reply_error(c, "ERR Copying to another database is not allowed in cluster mode");
        return;
    }
    const garg *sk = &c->argv[1], *dk = &c->argv[2];
    if (src == dst && sk->n == dk->n && memcmp(sk->p, dk->p, sk->n) == 0) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    dbentry *e = db_lookup_read(src, sk->p, sk->n);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    dbentry *d = db_lookup(dst, dk->p, dk->n);
    if (d) {
        if (!replace) {
            reply_int(c, 0);
            return;
        }
        db_delete_entry(dst, d);
    }
    gobj copy;
    if (obj_dup(&copy, &e->val) != 0) {
        reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    int64_t exp = db_entry_expire(e);
    dbentry *ne = db_add_ext(dst, dk->p, dk->n, 0, NULL, exp != -1);
    db_entry_set_value(ne, &copy);
    if (exp != -1) db_set_expire(dst, ne, exp);
    block_signal_key(dst, dk->p, dk->n);
    cmd_key_modified(c, dst, dk->p, dk->n);
    cmd_notify(c, NOTIFY_GENERIC, "copy_to", dst, dk->p, dk->n);
    reply_int(c, 1);
}

static void swapdbCommand(client *c) {
    long long a, b;
    if (cluster_enabled()) {
        reply_error(c, "ERR SWAPDB is not allowed in cluster mode");
        return;
    }
    if (!str_to_ll(c->argv[1].p, c->argv[1].n, &a) || a < INT_MIN || a > INT_MAX) {
        reply_error(c, "ERR invalid first DB index");
        return;
    }
    if (!str_to_ll(c->argv[2].p, c->argv[2].n, &b) || b < INT_MIN || b > INT_MAX) {
        reply_error(c, "ERR invalid second DB index");
        return;
    }
    if (a < 0 || a >= db_count() || b < 0 || b >= db_count()) {
        reply_error(c, "ERR DB index is out of range");
        return;
    }
    if (a != b) {
        db_swap((int)a, (int)b);
        cmd_dbs_swapped(c, (int)a, (int)b);
    }
    reply_ok(c);
}

/* DUMP key: the value in Redis's DUMP payload layout (persist/rdb.h), so
 * a Redis 7.0 server can RESTORE it and the other way round. */
static void dumpCommand(client *c) {
    dbentry *e = db_lookup_read(cmd_db(c), c->argv[1].p, c->argv[1].n);
    if (!e) {
        reply_null(c);
        return;
    }
    unsigned char *p;
    size_t n;
    int rc = rdb_dump_value(&e->val, persist_compress(), &p, &n);
    if (rc != RDB_OK) {
        const char *io = rc == RDB_ERR_IO ? strval_io_error() : NULL;
        reply_error(c, io ? io : "ERR out of memory");
        return;
    }
    reply_bulk(c, (const char *)p, n);
    free(p);
}

/* RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f] (also
 * RESTORE-ASKING, which MIGRATE sends in cluster mode), in
 * Redis 7.0's order of checks: options, BUSYKEY, TTL, payload. A refused
 * RESTORE changes nothing; a TTL already past only deletes (with REPLACE). */
static void restoreCommand(client *c) {
    int replace = 0, absttl = 0;
    long long idle = -1, freq = -1, ttl;
    for (int j = 4; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(&c->argv[j], "replace")) {
            replace = 1;
        } else if (arg_is(&c->argv[j], "absttl")) {
            absttl = 1;
        } else if (arg_is(&c->argv[j], "idletime") && more >= 1 && freq == -1) {
            if (!str_to_ll(c->argv[j + 1].p, c->argv[j + 1].n, &idle)) {
                reply_err_not_int(c);
                return;
            }
            if (idle < 0) {
                reply_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
            j++;
        } else if (arg_is(&c->argv[j], "freq") && more >= 1 && idle == -1) {
            if (!str_to_ll(c->argv[j + 1].p, c->argv[j + 1].n, &freq)) {
                reply_err_not_int(c);
                return;
            }
            if (freq < 0 || freq > 255) {
                reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
            j++;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *old = db_lookup(db, key->p, key->n);
    if (old && !replace) {
        reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    if (!str_to_ll(c->argv[2].p, c->argv[2].n, &ttl)) {
        reply_err_not_int(c);
        return;
    }
    if (ttl < 0) {
        reply_error(c, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    gobj v;
    char err[256];
    int rc = rdb_restore_value((const unsigned char *)c->argv[3].p, c->argv[3].n, &v, err, sizeof(err));
    if (rc != RDB_OK) {
        /* As Redis's rdbReportError in a RESTORE: the reason, at verbose. */
        if (rc != RDB_ERR_CHECKSUM && rc != RDB_ERR_VERSION) log_verbose("Internal error in RESTORE's payload -> %s", err);
        reply_error(c, rc == RDB_ERR_CHECKSUM || rc == RDB_ERR_VERSION ? "ERR DUMP payload version or checksum are wrong"
                       : rc == RDB_ERR_NOMEM                        ? "ERR out of memory"
                                                                     : "ERR Bad data format");
        return;
    }
    if (old) db_delete_entry(db, old);
    if (ttl && !absttl) ttl = ttl > LLONG_MAX - db_now_ms() ? LLONG_MAX : ttl + db_now_ms();
    if (ttl && db_time_passed(ttl)) {
        obj_free(&v);
        if (old) {
            cmd_key_modified(c, db, key->p, key->n);
            cmd_notify(c, NOTIFY_GENERIC, "del", db, key->p, key->n);
            prop_none(c);
            prop_key(c->db, "DEL", key->p, key->n); /* DEL whatever lazyfree says, as Redis 7.0 */
        }
        reply_ok(c);
        return;
    }
    obj_init_access(&v);
    obj_set_access(&v, idle, (int)freq);
    void *at;
    dbentry *ne = db_add_ext(db, key->p, key->n, strval_embed_size_of(&v), &at, ttl != 0);
    if (!ne) abort();
    db_entry_set_value(ne, &v);
    if (at) strval_embed(&ne->val, at);
    ne->val.lru = v.lru; /* IDLETIME / FREQ */
    if (ttl) db_set_expire(db, ne, ttl);
    block_signal_key(db, key->p, key->n);
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_GENERIC, "restore", db, key->p, key->n);
    if (ttl && !absttl) { /* the TTL as an absolute time, as Redis propagates it */
        prop_rewrite_arg_ll(c, 2, ttl);
        prop_rewrite_arg(c, c->argc, "ABSTTL", 6);
    }
    reply_ok(c);
}

/* ---- expiry ---- */

enum { EXP_NX = 1, EXP_XX = 2, EXP_GT = 4, EXP_LT = 8 };

static void expireGeneric(client *c, int64_t basetime, int seconds) {
    int flags = 0;
    for (int i = 3; i < c->argc; i++) {
        const garg *o = &c->argv[i];
        if (arg_is(o, "nx")) flags |= EXP_NX;
        else if (arg_is(o, "xx")) flags |= EXP_XX;
        else if (arg_is(o, "gt")) flags |= EXP_GT;
        else if (arg_is(o, "lt")) flags |= EXP_LT;
        else {
            reply_errorf(c, "ERR Unsupported option %s", o->p);
            return;
        }
    }
    if ((flags & EXP_NX) && (flags & (EXP_XX | EXP_GT | EXP_LT))) {
        reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & EXP_GT) && (flags & EXP_LT)) {
        reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return;
    }
    long long when;
    if (arg_ll(c, &c->argv[2], &when) != 0) return;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) goto bad_time;
        when *= 1000;
    }
    if (when > LLONG_MAX - basetime) goto bad_time;
    when += basetime;
    gdb *db = cmd_db(c);
    const garg *k = &c->argv[1];
    dbentry *e = db_lookup(db, k->p, k->n);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    int64_t cur = db_entry_expire(e);
    if (((flags & EXP_NX) && cur != -1) || ((flags & EXP_XX) && cur == -1) ||
        ((flags & EXP_GT) && (cur == -1 || when <= cur)) || ((flags & EXP_LT) && cur != -1 && when >= cur)) {
        reply_int(c, 0);
        return;
    }
    if (db_time_passed(when)) {
        db_delete_entry(db, e);
        cmd_key_modified(c, db, k->p, k->n);
        cmd_notify(c, NOTIFY_GENERIC, "del", db, k->p, k->n);
        /* The stream says what happened: the key is gone. */
        prop_none(c);
        prop_deletion(c->db, PROP_DEL_EXPIRED, k->p, k->n);
    } else {
        e = db_set_expire(db, e, when);
        cmd_key_modified(c, db, k->p, k->n);
        cmd_notify(c, NOTIFY_GENERIC, "expire", db, k->p, k->n);
        /* Propagated as an absolute time, options kept, as Redis does. */
        prop_rewrite_arg(c, 0, "PEXPIREAT", 9);
        prop_rewrite_arg_ll(c, 2, when);
    }
    reply_int(c, 1);
    return;
bad_time:
    reply_errorf(c, "ERR invalid expire time in '%s' command", c->cur->fullname);
}

static void expireCommand(client *c) { expireGeneric(c, db_now_ms(), 1); }
static void pexpireCommand(client *c) { expireGeneric(c, db_now_ms(), 0); }
static void expireatCommand(client *c) { expireGeneric(c, 0, 1); }
static void pexpireatCommand(client *c) { expireGeneric(c, 0, 0); }

/* mode: 0 TTL, 1 PTTL, 2 EXPIRETIME, 3 PEXPIRETIME */
static void ttlGeneric(client *c, int mode) {
    dbentry *e = db_lookup_notouch(cmd_db(c), c->argv[1].p, c->argv[1].n);
    if (!e) {
        reply_int(c, -2);
        return;
    }
    int64_t when = db_entry_expire(e);
    if (when == -1) {
        reply_int(c, -1);
        return;
    }
    int64_t v;
    switch (mode) {
    case 0: {
        int64_t ttl = when - db_now_ms();
        if (ttl < 0) ttl = 0;
        v = (ttl + 500) / 1000;
        break;
    }
    case 1: {
        int64_t ttl = when - db_now_ms();
        v = ttl < 0 ? 0 : ttl;
        break;
    }
    case 2: v = (int64_t)(((uint64_t)when + 500) / 1000); break; /* no overflow near INT64_MAX */
    default: v = when; break;
    }
    reply_int(c, v);
}

static void ttlCommand(client *c) { ttlGeneric(c, 0); }
static void pttlCommand(client *c) { ttlGeneric(c, 1); }
static void expiretimeCommand(client *c) { ttlGeneric(c, 2); }
static void pexpiretimeCommand(client *c) { ttlGeneric(c, 3); }

static void persistCommand(client *c) {
    gdb *db = cmd_db(c);
    dbentry *e = db_lookup(db, c->argv[1].p, c->argv[1].n);
    if (!e || db_entry_expire(e) == -1) {
        reply_int(c, 0);
        return;
    }
    db_persist(db, e);
    cmd_key_modified(c, db, c->argv[1].p, c->argv[1].n);
    cmd_notify(c, NOTIFY_GENERIC, "persist", db, c->argv[1].p, c->argv[1].n);
    reply_int(c, 1);
}

void keys_family_init(void) { config_bind_int("lazyfree-lazy-user-del", &lazy_user_del); }

int keys_lazy_user_del(void) { return __atomic_load_n(&lazy_user_del, __ATOMIC_RELAXED); }

const cmd_handler keys_handlers[] = {
    {"del", delCommand, CMD_LOCK_KEYS},
    {"unlink", unlinkCommand, CMD_LOCK_KEYS},
    {"exists", existsCommand, CMD_LOCK_KEYS},
    {"touch", touchCommand, CMD_LOCK_KEYS},
    {"type", typeCommand, CMD_LOCK_KEYS},
    {"keys", keysCommand, CMD_LOCK_ALL},
    {"scan", scanCommand, CMD_LOCK_READ},
    {"randomkey", randomkeyCommand, CMD_LOCK_ALL},
    {"rename", renameCommand, CMD_LOCK_KEYS},
    {"renamenx", renamenxCommand, CMD_LOCK_KEYS},
    {"move", moveCommand, CMD_LOCK_ALL},
    {"copy", copyCommand, CMD_LOCK_ALL},
    {"swapdb", swapdbCommand, CMD_LOCK_ALL},
    {"dump", dumpCommand, CMD_LOCK_KEYS},
    {"restore", restoreCommand, CMD_LOCK_KEYS},
    {"restore-asking", restoreCommand, CMD_LOCK_KEYS}, /* its ASKING flag: cluster_redirect */
    {"expire", expireCommand, CMD_LOCK_KEYS},
    {"pexpire", pexpireCommand, CMD_LOCK_KEYS},
    {"expireat", expireatCommand, CMD_LOCK_KEYS},
    {"pexpireat", pexpireatCommand, CMD_LOCK_KEYS},
    {"ttl", ttlCommand, CMD_LOCK_KEYS},
    {"pttl", pttlCommand, CMD_LOCK_KEYS},
    {"expiretime", expiretimeCommand, CMD_LOCK_KEYS},
    {"pexpiretime", pexpiretimeCommand, CMD_LOCK_KEYS},
    {"persist", persistCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
