/* mcache.c -- the memcache command family (mcache.h).
 *
 * Every operation is one call of cmd_call with a definition of this file
 * (key range argv[1..], so the dispatcher locks the keys' shards of
 * database 0). A memcache item is a string key: its bytes are the value,
 * its TTL the exptime, and its client flags and CAS unique live in the
 * side table db/mcmeta.h. Invariant: every write here first signals the
 * key modified (which forgets its old metadata, dirties WATCH and counts
 * the change for the write stream) and then records the new metadata, so
 * a key's metadata is always the one of its last memcache write, and a
 * key last written over RESP has none (flags 0, a fresh CAS when asked).
 * What reaches the write stream is the Redis form of the effect. */
#include "cmd/mcache/mcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/process.h"
#include "cmd/command.h"
#include "cmd/evict.h"
#include "cmd/propagate.h"
#include "cmd/repl/repl.h"
#include "cmd/server/acl.h"
#include "cmd/stream.h"
#include "db/mcmeta.h"
#include "db/strval.h"
#include "persist/persist.h"
#include "session/reply.h"
#include "util/strutil.h"

static long long max_item = 1024 * 1024;
/* Counters per thread (no cache line every worker writes): each thread's
 * block is made on its first count and stays on the list (threads are the
 * long-lived workers); a reader adds the blocks up. */
typedef struct mc_stat_block {
    uint64_t v[MCS_N];
    struct mc_stat_block *next;
} mc_stat_block;

static mc_stat_block *stat_blocks; /* push-only list, atomic head */
static _Thread_local mc_stat_block *stat_mine;

void mc_stat_add(int which, int64_t n) {
    mc_stat_block *b = stat_mine;
    if (!b) {
        b = calloc(1, sizeof(*b));
        if (!b) return;
        b->next = __atomic_load_n(&stat_blocks, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&stat_blocks, &b->next, b, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
        }
        stat_mine = b;
    }
    __atomic_store_n(&b->v[which], b->v[which] + (uint64_t)n, __ATOMIC_RELAXED);
}

uint64_t mc_stat(int which) {
    uint64_t sum = 0;
    for (mc_stat_block *b = __atomic_load_n(&stat_blocks, __ATOMIC_ACQUIRE); b; b = b->next)
        sum += __atomic_load_n(&b->v[which], __ATOMIC_RELAXED);
    return sum;
}
long long mc_max_item_size(void) { return __atomic_load_n(&max_item, __ATOMIC_RELAXED); }
void mc_config_init(void) { config_bind_ll("memcache-max-item-size", &max_item); }

static _Thread_local mc_req *cur;

#define OUT(c, lit) reply_raw((c), lit, sizeof(lit) - 1)

/* ---- expiry ---------------------------------------------------------- */

#define MC_REL_MAX (60LL * 60 * 24 * 30)

/* memcached's realtime(): 0 no expiry (*when -1), 1 *when (unix ms), -1
 * already expired. */
static int mc_when(long long exptime, int64_t *when) {
    *when = -1;
    if (exptime == 0) return 0;
    if (exptime < 0) return -1;
    int64_t now = db_now_ms();
    if (exptime > MC_REL_MAX) {
        if (exptime * 1000 <= now) return -1;
        *when = exptime * 1000;
        return 1;
    }
    *when = now + exptime * 1000;
    return 1;
}

/* ---- storage helpers ----------------------------------------------- */

static dbentry *mc_string(gdb *db, const garg *k) {
    dbentry *e = db_lookup(db, k->p, k->n);
    return e && e->val.type == OBJ_STRING ? e : NULL;
}

/* Bytes of e's value (a view valid until the command ends); NULL on a
 * tail read error or no memory. */
static const char *mc_bytes(const dbentry *e, char *tmp, size_t *n) { return strval_bytes(&e->val, tmp, n); }

/* p[0..n) becomes the value of key (entry e or a new key; a small value
 * embedded in its entry, as RESP's SET does). TTL removed unless keepttl.
 * NULL: no memory / tail write error, nothing changed. */
static dbentry *mc_put(gdb *db, dbentry *e, const garg *key, const char *p, size_t n, int keepttl) {
    return db_set_string(db, e, key->p, key->n, p, n, keepttl ? DB_KEEPTTL : 0);
}

static void prop_set(client *c, const garg *key, const char *p, size_t n, int64_t when, int keepttl) {
    char ms[32];
    const char *a[5] = {"SET", key->p, p, NULL, NULL};
    size_t l[5] = {3, key->n, n, 0, 0};
    int argc = 3;
    if (when >= 0) {
        a[3] = "PXAT";
        l[3] = 4;
        l[4] = (size_t)snprintf(ms, sizeof(ms), "%lld", (long long)when);
        a[4] = ms;
        argc = 5;
    } else if (keepttl) {
        a[3] = "KEEPTTL";
        l[3] = 7;
        argc = 4;
    }
    prop_rewrite(c, argc, a, l);
}

/* The key goes (an expired store, a delete): signalled and propagated. */
static int mc_remove(client *c, gdb *db, const garg *key) {
    if (!db_delete(db, key->p, key->n)) return 0;
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_GENERIC, "del", db, key->p, key->n);
    const char *a[2] = {"DEL", key->p};
    size_t l[2] = {3, key->n};
    prop_rewrite(c, 2, a, l);
    return 1;
}

/* After a change of e's value: signal (which drops the old metadata),
 * then the new metadata. An item of flags 0 gets none: the common store
 * costs no side-table entry, and its CAS unique is given when one is
 * first shown (mcmeta_ensure). Until then no client can hold it, so a
 * compare fails as against a changed item, as it must. Returns the new
 * unique, 0 when none is given yet. */
static uint64_t mc_stored(client *c, gdb *db, dbentry *e, const garg *key, uint32_t flags) {
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_STRING, "set", db, key->p, key->n);
    if (flags == 0) return 0;
    mcmeta m = {.flags = flags, .cas = mcmeta_next_cas()};
    mcmeta_set(db, e, &m);
    return m.cas;
}

/* A TTL change keeps flags and CAS (memcached's touch). Returns the entry,
 * which a first TTL may have moved. */
static dbentry *mc_retime(client *c, gdb *db, dbentry *e, const garg *key, int64_t when) {
    mcmeta m;
    int had = mcmeta_get(db, e, &m);
    char ms[32];
    if (when >= 0) {
        e = db_set_expire(db, e, when);
        const char *a[3] = {"PEXPIREAT", key->p, ms};
        size_t l[3] = {9, key->n, (size_t)snprintf(ms, sizeof(ms), "%lld", (long long)when)};
        prop_also(c->db, 3, a, l);
    } else {
        if (db_entry_expire(e) == -1) return e;
        db_persist(db, e);
        const char *a[2] = {"PERSIST", key->p};
        size_t l[2] = {7, key->n};
        prop_also(c->db, 2, a, l);
    }
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_GENERIC, when >= 0 ? "expire" : "persist", db, key->p, key->n);
    if (had) mcmeta_set(db, e, &m);
    return e;
}

/* ---- meta return flags ---------------------------------------------- */

/* What a meta reply's return flags describe: the item's metadata (NULL:
 * none shown), its entry (NULL: a miss), its key and value size. The
 * flags are printed in the order the request gave them (meta_order). */
typedef struct mc_ret {
    const mcmeta *m;
    const dbentry *e;
    const garg *key;
    size_t size;
    int vivified; /* mg N made the item: its TTL shows from the N on */
} mc_ret;

static void meta_retflags(client *c, const mc_req *r, const char *order, const mc_ret *rt) {
    char buf[64];
    /* The flags each command returns (memcached 1.6.18). */
    const char *shown = r->op == MC_MG ? "cfhklOst" : r->op == MC_MS ? "ckO" : r->op == MC_MD ? "kO" : "ctkO";
    for (const char *f = order; *f; f++) {
        int n = 0;
        if (!strchr(shown, *f)) continue;
        switch (*f) {
        case 'h':
            if (rt->e) OUT(c, " h0");
            continue;
        case 'l':
            if (rt->e) OUT(c, " l0");
            continue;
        case 'O':
            if (r->opaque) {
                OUT(c, " O");
                reply_raw(c, r->opaque, r->olen);
            }
            continue;
        case 'k':
            OUT(c, " k");
            reply_raw(c, rt->key->p, rt->key->n);
            continue;
        case 'b': continue;
        case 'c':
            if (rt->m) n = snprintf(buf, sizeof(buf), " c%llu", (unsigned long long)rt->m->cas);
            break;
        case 'f':
            if (rt->m) n = snprintf(buf, sizeof(buf), " f%u", rt->m->flags);
            break;
        case 's':
            if (rt->e) n = snprintf(buf, sizeof(buf), " s%zu", rt->size);
            break;
        case 't':
            if (rt->e) {
                long long t = db_entry_expire(rt->e) == -1 ? -1 : (db_entry_expire(rt->e) - db_now_ms() + 999) / 1000;
                /* mg walks its flags in order: the TTL t shows is the one
                 * the T (and, on an item N made, N) before it set. */
                if (r->op == MC_MG) {
                    if (rt->vivified) t = -1;
                    for (const char *g = order; g < f; g++) {
                        long long x;
                        if (*g == 'T') x = r->exptime;
                        else if (*g == 'N' && rt->vivified) x = r->vivify_ttl;
                        else continue;
                        int64_t w;
                        int k = mc_when(x, &w);
                        t = k <= 0 ? -1 : (w - db_now_ms() + 999) / 1000;
                    }
                }
                n = snprintf(buf, sizeof(buf), " t%lld", t);
            }
            break;
        default: break;
        }
        if (n > 0) reply_raw(c, buf, (size_t)n);
    }
}

/* The parser leaves the request's flag letters (in order) after the keys:
 * argv[2] for the meta commands. */
static const char *meta_order(client *c) { return c->argc > 2 ? c->argv[2].p : ""; }

/* ---- retrieval ---------------------------------------------------- */

static void reply_value(client *c, const dbentry *e, const char *hdr, size_t hl, const char *trailer, int last) {
    if (last && cmd_stream_reply_framed(c, &e->val, hdr, hl, trailer)) return;
    const char *h, *t;
    size_t hlen, tl;
    char tmp[STRUTIL_LLSTR];
    struct iovec v[4] = {{(void *)hdr, hl}};
    int nv = 1;
    if (strval_ram_parts(&e->val, &h, &hlen, &t, &tl)) {
        v[nv++] = (struct iovec){(void *)h, hlen};
        if (tl) v[nv++] = (struct iovec){(void *)t, tl};
    } else {
        size_t n;
        const char *p = mc_bytes(e, tmp, &n);
        v[nv++] = (struct iovec){(void *)(p ? p : ""), p ? n : 0};
    }
    v[nv++] = (struct iovec){(void *)trailer, strlen(trailer)};
    reply_rawv(c, v, nv); /* a large value: straight from the store when it can */
}

static void mc_get(client *c) {
    mc_req *r = cur;
    gdb *db = cmd_db(c);
    int with_cas = r->op == MC_GETS || r->op == MC_GATS;
    int touch = r->op == MC_GAT || r->op == MC_GATS;
    int64_t when = -1;
    int st = touch ? mc_when(r->exptime, &when) : 0;
    int first = touch ? 2 : 1;
    prop_none(c);
    for (int i = first; i < c->argc; i++) {
        const garg *k = &c->argv[i];
        dbentry *e = mc_string(db, k);
        mc_stat_add(touch ? MCS_CMD_TOUCH : MCS_CMD_GET, 1);
        if (!e) {
            mc_stat_add(touch ? MCS_TOUCH_MISSES : MCS_GET_MISSES, 1);
            continue;
        }
        if (touch) {
            /* An expired time still shows the value once (memcached). */
            if (st >= 0) e = mc_retime(c, db, e, k, when);
            mc_stat_add(MCS_TOUCH_HITS, 1);
        } else {
            mc_stat_add(MCS_GET_HITS, 1);
        }
        mcmeta m;
        if (with_cas) mcmeta_ensure(db, e, &m);
        else if (!mcmeta_get(db, e, &m)) m.flags = 0;
        char hdr[400];
        int hl = snprintf(hdr, sizeof(hdr), "VALUE %.*s %u %zu", (int)k->n, k->p, m.flags, strval_len(&e->val));
        if (with_cas) hl += snprintf(hdr + hl, sizeof(hdr) - (size_t)hl, " %llu", (unsigned long long)m.cas);
        hl += snprintf(hdr + hl, sizeof(hdr) - (size_t)hl, "\r\n");
        int last = i == c->argc - 1;
        if (touch && st < 0) {
            reply_value(c, e, hdr, (size_t)hl, "\r\n", 0);
            mc_remove(c, db, k);
            continue;
        }
        reply_value(c, e, hdr, (size_t)hl, last ? "\r\nEND\r\n" : "\r\n", last);
        if (last) return;
    }
    OUT(c, "END\r\n");
}

/* ---- storage ----------------------------------------------------- */

enum { ST_STORED, ST_NOT_STORED, ST_EXISTS, ST_NOT_FOUND, ST_ERROR };

/* One store of r's data under key argv[1] in mode op (MC_SET ..
 * MC_CAS); *cas_out the new unique. */
static int mc_store(client *c, const mc_req *r, int op, uint64_t *cas_out) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *any = db_lookup(db, key->p, key->n);
    dbentry *e = any && any->val.type == OBJ_STRING ? any : NULL;
    mc_stat_add(MCS_CMD_SET, 1);
    if (op == MC_ADD && any) return ST_NOT_STORED; /* a key of another type is there too */
    if ((op == MC_REPLACE || op == MC_APPEND || op == MC_PREPEND) && !e) return ST_NOT_STORED;
    if (op == MC_CAS) {
        if (!e) {
            mc_stat_add(MCS_CAS_MISSES, 1);
            return ST_NOT_FOUND;
        }
        mcmeta m;
        if (!mcmeta_get(db, e, &m) || m.cas != r->cas) {
            mc_stat_add(MCS_CAS_BADVAL, 1);
            return ST_EXISTS;
        }
        mc_stat_add(MCS_CAS_HITS, 1);
    }
    if (op == MC_APPEND || op == MC_PREPEND) {
        mcmeta m;
        if (!mcmeta_get(db, e, &m)) m.flags = 0;
        char tmp[STRUTIL_LLSTR];
        size_t n;
        const char *old = mc_bytes(e, tmp, &n);
        if (!old) return ST_ERROR;
        if (n + r->dlen > (size_t)mc_max_item_size()) return ST_ERROR;
        char *nb = malloc(n + r->dlen + 1);
        if (!nb) return ST_ERROR;
        if (op == MC_APPEND) {
            memcpy(nb, old, n);
            memcpy(nb + n, r->data, r->dlen);
        } else {
            memcpy(nb, r->data, r->dlen);
            memcpy(nb + r->dlen, old, n);
        }
        dbentry *ne = mc_put(db, e, key, nb, n + r->dlen, 1);
        if (!ne) {
            free(nb);
            return ST_ERROR;
        }
        if (op == MC_APPEND) {
            const char *a[3] = {"APPEND", key->p, r->data};
            size_t l[3] = {6, key->n, r->dlen};
            prop_rewrite(c, 3, a, l);
        } else {
            prop_set(c, key, nb, n + r->dlen, -1, 1);
        }
        free(nb);
        *cas_out = mc_stored(c, db, ne, key, m.flags);
        return ST_STORED;
    }
    int64_t when;
    if (mc_when(r->has_exp ? r->exptime : 0, &when) < 0) {
        /* Stored already expired: the key is gone. */
        mc_remove(c, db, key);
        *cas_out = mcmeta_next_cas();
        return ST_STORED;
    }
    dbentry *ne = mc_put(db, any, key, r->data, r->dlen, 0);
    if (!ne) return ST_ERROR;
    if (when >= 0) ne = db_set_expire(db, ne, when);
    prop_set(c, key, r->data, r->dlen, when, 0);
    *cas_out = mc_stored(c, db, ne, key, r->flags);
    return ST_STORED;
}

static void mc_update(client *c) {
    mc_req *r = cur;
    uint64_t cas = 0;
    prop_none(c);
    int st = mc_store(c, r, r->op, &cas);
    if (r->noreply) return;
    switch (st) {
    case ST_STORED: OUT(c, "STORED\r\n"); break;
    case ST_NOT_STORED: OUT(c, "NOT_STORED\r\n"); break;
    case ST_EXISTS: OUT(c, "EXISTS\r\n"); break;
    case ST_NOT_FOUND: OUT(c, "NOT_FOUND\r\n"); break;
    default: OUT(c, "SERVER_ERROR out of memory storing object\r\n"); break;
    }
}

/* ---- delete, touch, incr/decr, flush ------------------------------------ */

static void mc_delete(client *c) {
    mc_req *r = cur;
    prop_none(c);
    gdb *db = cmd_db(c);
    int hit = mc_string(db, &c->argv[1]) && mc_remove(c, db, &c->argv[1]);
    mc_stat_add(hit ? MCS_DELETE_HITS : MCS_DELETE_MISSES, 1);
    if (r->noreply) return;
    if (hit) OUT(c, "DELETED\r\n");
    else OUT(c, "NOT_FOUND\r\n");
}

static void mc_touch(client *c) {
    mc_req *r = cur;
    prop_none(c);
    gdb *db = cmd_db(c);
    dbentry *e = mc_string(db, &c->argv[1]);
    mc_stat_add(MCS_CMD_TOUCH, 1);
    int hit = e != NULL;
    if (e) {
        int64_t when;
        if (mc_when(r->exptime, &when) < 0) mc_remove(c, db, &c->argv[1]);
        else e = mc_retime(c, db, e, &c->argv[1], when);
    }
    mc_stat_add(hit ? MCS_TOUCH_HITS : MCS_TOUCH_MISSES, 1);
    if (r->noreply) return;
    if (hit) OUT(c, "TOUCHED\r\n");
    else OUT(c, "NOT_FOUND\r\n");
}

static int mc_isspace(char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r'); }

/* memcached's safe_strtoull on an item's bytes (which it reads with the
 * "\r\n" after them): strtoull's number -- leading white space, a sign,
 * at least one digit, no overflow -- that white space or the end follows
 * (the rest of the value is ignored); a minus sign only for a number
 * that stays non-negative as a signed one. */
static int mc_parse_u64(const char *p, size_t n, uint64_t *v) {
    size_t i = 0;
    while (i < n && mc_isspace(p[i])) i++;
    int neg = 0;
    if (i < n && (p[i] == '+' || p[i] == '-')) neg = p[i++] == '-';
    if (i == n || p[i] < '0' || p[i] > '9') return -1;
    uint64_t x = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        uint64_t d = (uint64_t)(p[i] - '0');
        if (x > (UINT64_MAX - d) / 10) return -1;
        x = x * 10 + d;
    }
    if (i < n && !mc_isspace(p[i])) return -1;
    if (neg) {
        x = (uint64_t)0 - x;
        if ((int64_t)x < 0) return -1;
    }
    *v = x;
    return 0;
}

enum { AR_OK, AR_MISS, AR_NONNUM, AR_EXISTS, AR_ERR };

/* incr (decr 0) / decr of key by delta; *out the new value. */
static int mc_arith(client *c, int incr, uint64_t delta, uint64_t cas, uint64_t *out, uint64_t *cas_out) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = mc_string(db, key);
    if (!e) return AR_MISS;
    mcmeta m;
    int had = mcmeta_get(db, e, &m);
    if (!had) m.flags = 0;
    if (cas && (!had || m.cas != cas)) return AR_EXISTS;
    char tmp[STRUTIL_LLSTR];
    size_t n;
    const char *p = mc_bytes(e, tmp, &n);
    if (!p) return AR_ERR;
    uint64_t v;
    if (mc_parse_u64(p, n, &v) != 0) return AR_NONNUM;
    if (incr) v += delta;
    else v = delta > v ? 0 : v - delta;
    char num[32];
    size_t k = (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
    /* memcached rewrites a result no longer than the value in place,
     * padded with spaces to the value's length. */
    size_t len = k <= n ? n : k;
    char *nb = malloc(len ? len : 1);
    if (!nb) return AR_ERR;
    memcpy(nb, num, k);
    memset(nb + k, ' ', len - k);
    if (!mc_put(db, e, key, nb, len, 1)) {
        free(nb);
        return AR_ERR;
    }
    prop_set(c, key, nb, len, -1, 1);
    free(nb);
    *cas_out = mc_stored(c, db, e, key, m.flags);
    *out = v;
    return AR_OK;
}

static void mc_incr(client *c) {
    mc_req *r = cur;
    prop_none(c);
    uint64_t v = 0, cas;
    int incr = r->op == MC_INCR;
    int st = mc_arith(c, incr, r->delta, 0, &v, &cas);
    if (st == AR_OK) mc_stat_add(incr ? MCS_INCR_HITS : MCS_DECR_HITS, 1);
    else if (st == AR_MISS) mc_stat_add(incr ? MCS_INCR_MISSES : MCS_DECR_MISSES, 1);
    if (st == AR_NONNUM) {
        /* memcached answers this one even under noreply. */
        OUT(c, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
        return;
    }
    if (r->noreply) return;
    if (st == AR_MISS) {
        OUT(c, "NOT_FOUND\r\n");
    } else if (st == AR_OK) {
        char b[32];
        int k = snprintf(b, sizeof(b), "%llu\r\n", (unsigned long long)v);
        reply_raw(c, b, (size_t)k);
    } else {
        OUT(c, "SERVER_ERROR out of memory\r\n");
    }
}

/* flush_all <delay>: the flush is due at flush_at (unix ms, 0: none) and
 * done by the first memcache request that comes after it (mc_run). */
static int64_t flush_at;

static void mc_flush(client *c) {
    mc_req *r = cur;
    gdb *db = db_get(0);
    mc_stat_add(MCS_CMD_FLUSH, 1);
    int64_t when;
    if (r->has_exp && mc_when(r->exptime, &when) > 0) {
        __atomic_store_n(&flush_at, when, __ATOMIC_RELAXED);
        prop_none(c);
        if (!r->noreply) OUT(c, "OK\r\n");
        return;
    }
    __atomic_store_n(&flush_at, 0, __ATOMIC_RELAXED);
    if (db_size(db)) {
        db_flush(db);
        cmd_key_modified(c, db, NULL, 0);
        const char *a[1] = {"FLUSHDB"};
        size_t l[1] = {7};
        prop_rewrite(c, 1, a, l);
    } else {
        prop_none(c);
    }
    if (!r->noreply) OUT(c, "OK\r\n");
}

/* ---- meta commands ------------------------------------------------- */

/* The metadata of e a meta reply shows (*m left alone when e has none):
 * with the c flag the item gets its CAS unique if it had none yet. */
static void meta_of(gdb *db, const dbentry *e, const mc_req *r, mcmeta *m) {
    if (r->mflags & MC_MF('c')) mcmeta_ensure(db, e, m);
    else mcmeta_get(db, e, m);
}

static void meta_code(client *c, const mc_req *r, const char *code, const mc_ret *rt) {
    reply_raw(c, code, 2);
    meta_retflags(c, r, meta_order(c), rt);
    OUT(c, "\r\n");
}

/* The win/stale flags mg appends (memcached's serve-stale protocol): Z
 * when a win token was already handed out, X when the item is stale, and
 * W to the first fetch of a stale item (it wins the token). */
static void mc_winflags(gdb *db, const dbentry *e, mcmeta *m, char *out) {
    out[0] = '\0';
    if (m->state & MCMETA_TOKEN) strcat(out, " Z");
    if (m->state & MCMETA_STALE) {
        strcat(out, " X");
        if (!(m->state & MCMETA_TOKEN)) {
            strcat(out, " W");
            m->state |= MCMETA_TOKEN;
            mcmeta_set(db, e, m);
        }
    }
}

static void mc_mg(client *c) {
    mc_req *r = cur;
    prop_none(c);
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = mc_string(db, key);
    mc_stat_add(MCS_CMD_GET, 1);
    mcmeta m = {0};
    char win[16] = "";
    if (!e) {
        mc_stat_add(MCS_GET_MISSES, 1);
        if (!(r->mflags & MC_MF('N'))) {
            if (r->noreply) return;
            mc_ret rt = {NULL, NULL, key, 0};
            meta_code(c, r, "EN", &rt);
            return;
        }
        /* N: the miss creates an empty item with that TTL, and this
         * fetch wins the token to fill it. */
        int64_t when;
        int k = mc_when(r->vivify_ttl, &when);
        e = mc_put(db, NULL, key, "", 0, 0);
        if (!e) {
            OUT(c, "SERVER_ERROR out of memory storing object\r\n");
            return;
        }
        if (k > 0) e = db_set_expire(db, e, when);
        prop_set(c, key, "", 0, k > 0 ? when : -1, 0);
        mc_stored(c, db, e, key, 0);
        mcmeta_ensure(db, e, &m);
        m.state |= MCMETA_TOKEN;
        mcmeta_set(db, e, &m);
        strcpy(win, " W");
    } else {
        mc_stat_add(MCS_GET_HITS, 1);
        meta_of(db, e, r, &m); /* m is {0} when e has none */
        mc_winflags(db, e, &m, win);
    }
    mc_ret rt = {&m, e, key, strval_len(&e->val), win[1] == 'W' && !(m.state & MCMETA_STALE)};
    if (!(r->mflags & MC_MF('v'))) {
        OUT(c, "HD"); /* q hides only the miss */
        meta_retflags(c, r, meta_order(c), &rt);
        reply_raw(c, win, strlen(win));
        OUT(c, "\r\n");
    } else {
        char hdr[512];
        int hl = snprintf(hdr, sizeof(hdr), "VA %zu", rt.size);
        reply_raw(c, hdr, (size_t)hl);
        meta_retflags(c, r, meta_order(c), &rt);
        reply_raw(c, win, strlen(win));
        reply_value(c, e, "\r\n", 2, "\r\n", 0);
    }
    /* T: the new TTL applies after the reply showed the old one (not to
     * an item N just made). */
    const char *ord = meta_order(c), *tp = strchr(ord, 'T'), *np = strchr(ord, 'N');
    if (tp && (!rt.vivified || (np && tp > np))) {
        int64_t when;
        if (mc_when(r->exptime, &when) >= 0) e = mc_retime(c, db, e, key, when);
        else mc_remove(c, db, key);
    }
}

static void mc_ms(client *c) {
    mc_req *r = cur;
    prop_none(c);
    int op = MC_SET;
    switch (r->mode) {
    case 'E': case 'e': op = MC_ADD; break;
    case 'A': case 'a': op = MC_APPEND; break;
    case 'P': case 'p': op = MC_PREPEND; break;
    case 'R': case 'r': op = MC_REPLACE; break;
    default: break;
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    uint64_t cas = 0;
    int st;
    mcmeta m;
    dbentry *e = NULL;
    if ((r->mflags & MC_MF('C')) && op != MC_ADD) {
        /* A compare first (add ignores it): on a miss NS for append and
         * prepend, NF otherwise; EX on a mismatch. */
        e = mc_string(db, key);
        if (!e) {
            st = op == MC_APPEND || op == MC_PREPEND ? ST_NOT_STORED : ST_NOT_FOUND;
            mc_stat_add(MCS_CAS_MISSES, 1);
        } else {
            mcmeta_ensure(db, e, &m);
            if ((r->mflags & MC_MF('I')) && op == MC_SET && r->cas < m.cas) {
                /* Invalidate mode: an older CAS still stores, as a stale
                 * item whose token is out. */
                st = mc_store(c, r, op, &cas);
                dbentry *ne = st == ST_STORED ? mc_string(db, key) : NULL;
                if (ne) {
                    mcmeta_ensure(db, ne, &m);
                    m.state |= MCMETA_STALE | MCMETA_TOKEN;
                    mcmeta_set(db, ne, &m);
                }
                e = NULL;
            } else if (m.cas != r->cas) {
                st = ST_EXISTS;
                mc_stat_add(MCS_CAS_BADVAL, 1);
            } else {
                mc_stat_add(MCS_CAS_HITS, 1);
                st = mc_store(c, r, op, &cas);
                e = NULL;
            }
        }
    } else {
        st = mc_store(c, r, op, &cas);
    }
    /* c shows the stored item's CAS, 0 when nothing was stored. */
    m = (mcmeta){0};
    e = NULL;
    if (st == ST_STORED) {
        e = mc_string(db, key);
        m = (mcmeta){.flags = r->flags, .cas = cas};
        if (e) meta_of(db, e, r, &m);
    }
    mc_ret rt = {&m, e, key, e ? strval_len(&e->val) : 0};
    if (st == ST_STORED && r->noreply) return;
    switch (st) {
    case ST_STORED: meta_code(c, r, "HD", &rt); break;
    case ST_NOT_STORED: meta_code(c, r, "NS", &rt); break;
    case ST_EXISTS: meta_code(c, r, "EX", &rt); break;
    case ST_NOT_FOUND: meta_code(c, r, "NF", &rt); break;
    default: OUT(c, "SERVER_ERROR out of memory storing object\r\n"); break;
    }
}

static void mc_md(client *c) {
    mc_req *r = cur;
    prop_none(c);
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = mc_string(db, key);
    mc_ret rt = {NULL, NULL, key, 0};
    if (!e) {
        mc_stat_add(MCS_DELETE_MISSES, 1);
        meta_code(c, r, "NF", &rt);
        return;
    }
    if (r->mflags & MC_MF('C')) {
        mcmeta m;
        if (!mcmeta_get(db, e, &m) || m.cas != r->cas) {
            meta_code(c, r, "EX", &rt);
            return;
        }
    }
    if (r->mflags & MC_MF('I')) {
        /* Invalidate: the item stays, stale, its win token to be handed
         * out again (and T sets its TTL). */
        mcmeta m;
        mcmeta_ensure(db, e, &m);
        int64_t when;
        if ((r->mflags & MC_MF('T')) && mc_when(r->exptime, &when) >= 0) e = mc_retime(c, db, e, key, when);
        m.state = (m.state | MCMETA_STALE) & ~(uint32_t)MCMETA_TOKEN;
        m.cas = mcmeta_next_cas();
        mcmeta_set(db, e, &m);
        mc_stat_add(MCS_DELETE_HITS, 1);
        if (!r->noreply) meta_code(c, r, "HD", &rt);
        return;
    }
    mc_remove(c, db, key);
    mc_stat_add(MCS_DELETE_HITS, 1);
    if (!r->noreply) meta_code(c, r, "HD", &rt);
}

static void mc_ma(client *c) {
    mc_req *r = cur;
    prop_none(c);
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int incr = !(r->mode == 'D' || r->mode == 'd' || r->mode == '-');
    uint64_t v = 0, cas = 0;
    int st = mc_arith(c, incr, r->mflags & MC_MF('D') ? r->delta : 1, r->mflags & MC_MF('C') ? r->cas : 0, &v, &cas);
    int vivified = 0;
    if (st == AR_MISS && (r->mflags & MC_MF('N'))) {
        vivified = 1;
        /* Autovivify with the initial value J (default 0). */
        char nb[32];
        int k = snprintf(nb, sizeof(nb), "%llu", (unsigned long long)r->init);
        int64_t when;
        mc_when(r->vivify_ttl, &when);
        dbentry *e = mc_put(db, NULL, key, nb, (size_t)k, 0);
        if (e) {
            if (when >= 0) e = db_set_expire(db, e, when);
            prop_set(c, key, nb, (size_t)k, when, 0);
            cas = mc_stored(c, db, e, key, 0);
            v = (uint64_t)r->init;
            st = AR_OK;
        } else {
            st = AR_ERR;
        }
    }
    if (st == AR_OK) mc_stat_add(incr ? MCS_INCR_HITS : MCS_DECR_HITS, 1);
    else if (st == AR_MISS) mc_stat_add(incr ? MCS_INCR_MISSES : MCS_DECR_MISSES, 1);
    dbentry *e = st == AR_OK ? mc_string(db, key) : NULL;
    mcmeta m = {.cas = cas};
    if (e) meta_of(db, e, r, &m);
    mc_ret rt = {e ? &m : NULL, e, key, e ? strval_len(&e->val) : 0};
    switch (st) {
    case AR_OK:
        if (r->noreply && !vivified) break; /* q hides a hit, VA included */
        if (r->mflags & MC_MF('v')) {
            char b[64];
            int k = snprintf(b, sizeof(b), "VA %d", snprintf(NULL, 0, "%llu", (unsigned long long)v));
            reply_raw(c, b, (size_t)k);
            meta_retflags(c, r, meta_order(c), &rt);
            k = snprintf(b, sizeof(b), "\r\n%llu\r\n", (unsigned long long)v);
            reply_raw(c, b, (size_t)k);
        } else if (!r->noreply || vivified) {
            meta_code(c, r, "HD", &rt); /* q does not hide a vivified item's HD */
        }
        break;
    case AR_MISS: meta_code(c, r, "NF", &rt); break;
    case AR_EXISTS: meta_code(c, r, "EX", &rt); break;
    case AR_NONNUM: OUT(c, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"); break;
    default: OUT(c, "SERVER_ERROR out of memory\r\n"); break;
    }
}

/* ---- the family's definitions and the entry point ------------------- */

#define DEF(nm, fn, fl, lk, fst) \
    {.name = nm, .fullname = nm, .arity = -2, .flags = (fl), .first = (fst), .last = -1, .step = 1, \
     .flags_str = "", .acl_str = "", .proc = (fn), .lock = (lk)}

/* Meta commands keep their flag letters in argv[2], outside the keys. */
#define MDEF(nm, fn, fl) \
    {.name = nm, .fullname = nm, .arity = -2, .flags = (fl), .first = 1, .last = 1, .step = 1, .flags_str = "", \
     .acl_str = "", .proc = (fn), .lock = CMD_LOCK_KEYS}

#define RD (CMDF_READONLY | CMDF_FAST)
#define WR (CMDF_WRITE | CMDF_DENYOOM)
static cmd_def defs[MC_NOPS] = {
    [MC_GET] = DEF("mc_get", mc_get, RD, CMD_LOCK_KEYS, 1),
    [MC_GETS] = DEF("mc_gets", mc_get, RD, CMD_LOCK_KEYS, 1),
    [MC_GAT] = DEF("mc_gat", mc_get, CMDF_WRITE | CMDF_FAST, CMD_LOCK_KEYS, 2),
    [MC_GATS] = DEF("mc_gats", mc_get, CMDF_WRITE | CMDF_FAST, CMD_LOCK_KEYS, 2),
    [MC_SET] = DEF("mc_set", mc_update, WR, CMD_LOCK_KEYS, 1),
    [MC_ADD] = DEF("mc_add", mc_update, WR, CMD_LOCK_KEYS, 1),
    [MC_REPLACE] = DEF("mc_replace", mc_update, WR, CMD_LOCK_KEYS, 1),
    [MC_APPEND] = DEF("mc_append", mc_update, WR, CMD_LOCK_KEYS, 1),
    [MC_PREPEND] = DEF("mc_prepend", mc_update, WR, CMD_LOCK_KEYS, 1),
    [MC_CAS] = DEF("mc_cas", mc_update, WR, CMD_LOCK_KEYS, 1),
    [MC_DELETE] = DEF("mc_delete", mc_delete, CMDF_WRITE | CMDF_FAST, CMD_LOCK_KEYS, 1),
    [MC_INCR] = DEF("mc_incr", mc_incr, WR | CMDF_FAST, CMD_LOCK_KEYS, 1),
    [MC_DECR] = DEF("mc_decr", mc_incr, WR | CMDF_FAST, CMD_LOCK_KEYS, 1),
    [MC_TOUCH] = DEF("mc_touch", mc_touch, CMDF_WRITE | CMDF_FAST, CMD_LOCK_KEYS, 1),
    [MC_FLUSH] = DEF("mc_flush_all", mc_flush, CMDF_WRITE, CMD_LOCK_ALL, 0),
    [MC_MG] = MDEF("mc_mg", mc_mg, RD), /* with T a write: mc_run checks */
    [MC_MS] = MDEF("mc_ms", mc_ms, WR),
    [MC_MD] = MDEF("mc_md", mc_md, CMDF_WRITE | CMDF_FAST),
    [MC_MA] = MDEF("mc_ma", mc_ma, WR | CMDF_FAST),
};

void mc_run(client *c, mc_req *r) {
    const cmd_def *d = &defs[r->op];
    /* The key range is argv[first..]; meta commands keep their flag
     * letters in argv[2], outside it. */
    c->db = 0;
    mc_stat_add(MCS_REQUESTS, 1);
    if (acl_auth_required(c)) {
        /* memcache has no AUTH here: a password keeps the port closed. */
        OUT(c, "CLIENT_ERROR unauthenticated\r\n");
        return;
    }
    if (persist_loading()) {
        OUT(c, "SERVER_ERROR loading the dataset\r\n");
        return;
    }
    if ((d->flags & CMDF_WRITE) || (r->op == MC_MG && (r->mflags & (MC_MF('T') | MC_MF('N'))))) {
        if (repl_is_replica() && repl_read_only()) {
            OUT(c, "SERVER_ERROR read only replica\r\n");
            return;
        }
        if (persist_writes_refused()) {
            OUT(c, "SERVER_ERROR the last save failed: writes are refused\r\n");
            return;
        }
    }
    if (d->flags & CMDF_DENYOOM) evict_store_pressure(r->dlen);
    if (cfg.maxmemory > 0 && !repl_is_replica() && evict_perform() == EVICT_FAIL && (d->flags & CMDF_DENYOOM)) {
        OUT(c, "SERVER_ERROR out of memory storing object\r\n");
        return;
    }
    int64_t due = __atomic_load_n(&flush_at, __ATOMIC_RELAXED);
    if (due && db_now_ms() >= due && __atomic_compare_exchange_n(&flush_at, &due, 0, 0, __ATOMIC_RELAXED,
                                                                  __ATOMIC_RELAXED)) {
        /* A delayed flush_all that is due: first, as its own call. */
        mc_req f;
        memset(&f, 0, sizeof(f));
        f.op = MC_FLUSH;
        f.noreply = 1;
        cur = &f;
        cmd_call(c, &defs[MC_FLUSH]);
    }
    cur = r;
    cmd_call(c, d);
    cur = NULL;
}

/* ---- stats ---------------------------------------------------------- */

static const struct {
    const char *name;
    int which;
} stat_names[] = {
    {"cmd_get", MCS_CMD_GET},         {"cmd_set", MCS_CMD_SET},           {"cmd_flush", MCS_CMD_FLUSH},
    {"cmd_touch", MCS_CMD_TOUCH},     {"get_hits", MCS_GET_HITS},         {"get_misses", MCS_GET_MISSES},
    {"get_expired", MCS_GET_EXPIRED}, {"delete_misses", MCS_DELETE_MISSES}, {"delete_hits", MCS_DELETE_HITS},
    {"incr_misses", MCS_INCR_MISSES}, {"incr_hits", MCS_INCR_HITS},       {"decr_misses", MCS_DECR_MISSES},
    {"decr_hits", MCS_DECR_HITS},     {"cas_misses", MCS_CAS_MISSES},     {"cas_hits", MCS_CAS_HITS},
    {"cas_badval", MCS_CAS_BADVAL},   {"touch_hits", MCS_TOUCH_HITS},     {"touch_misses", MCS_TOUCH_MISSES},
    {"bytes_read", MCS_BYTES_READ},   {"bytes_written", MCS_BYTES_WRITTEN},
};

void mc_reply_stats(client *c) {
    char b[256];
    int64_t now = db_now_ms();
    int n = snprintf(b, sizeof(b), "STAT pid %d\r\nSTAT uptime %lld\r\nSTAT time %lld\r\nSTAT version %s\r\n",
                     (int)getpid(), (long long)((now - srv.start_ms) / 1000), (long long)(now / 1000), GOBLIN_VERSION);
    reply_raw(c, b, (size_t)n);
    n = snprintf(b, sizeof(b), "STAT pointer_size %d\r\nSTAT curr_connections %llu\r\nSTAT total_connections %llu\r\n",
                 (int)(sizeof(void *) * 8), (unsigned long long)mc_stat(MCS_CURR_CONN),
                 (unsigned long long)mc_stat(MCS_TOTAL_CONN));
    reply_raw(c, b, (size_t)n);
    for (size_t i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++) {
        n = snprintf(b, sizeof(b), "STAT %s %llu\r\n", stat_names[i].name,
                     (unsigned long long)mc_stat(stat_names[i].which));
        reply_raw(c, b, (size_t)n);
    }
    gdb *db = db_get(0);
    n = snprintf(b, sizeof(b), "STAT limit_maxbytes %lld\r\nSTAT item_size_max %lld\r\nSTAT curr_items %zu\r\n",
                 cfg.maxmemory, mc_max_item_size(), db ? db_size(db) : (size_t)0);
    reply_raw(c, b, (size_t)n);
    OUT(c, "END\r\n");
}

size_t mc_info(char *buf, size_t cap) {
    int n = snprintf(buf, cap,
                     "# Memcache\r\nmemcache_requests:%llu\r\nmemcache_get_hits:%llu\r\nmemcache_get_misses:%llu\r\n"
                     "memcache_bytes_read:%llu\r\nmemcache_bytes_written:%llu\r\nmemcache_connected_clients:%llu\r\n"
                     "memcache_total_connections:%llu\r\nmemcache_keys_with_metadata:%llu\r\n",
                     (unsigned long long)mc_stat(MCS_REQUESTS), (unsigned long long)mc_stat(MCS_GET_HITS),
                     (unsigned long long)mc_stat(MCS_GET_MISSES), (unsigned long long)mc_stat(MCS_BYTES_READ),
                     (unsigned long long)mc_stat(MCS_BYTES_WRITTEN), (unsigned long long)mc_stat(MCS_CURR_CONN),
                     (unsigned long long)mc_stat(MCS_TOTAL_CONN), (unsigned long long)mcmeta_count());
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}
