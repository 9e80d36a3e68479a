/* aof_rewrite.c -- an AOF base in command form, as Redis 7.0's
 * rewriteAppendOnlyFile writes it when aof-use-rdb-preamble is no: per
 * database a SELECT, then per key the commands that rebuild it (SET;
 * RPUSH, SADD, ZADD and HMSET with at most 64 elements per command; a
 * stream as one XADD per entry, XSETID, and per group XGROUP CREATE with
 * its consumers' pending entries as XCLAIM ... FORCE, or XGROUP
 * CREATECONSUMER for a consumer with none) and a PEXPIREAT for a key with
 * a TTL.
 *
 * It runs in the rewrite child (a fork: the dataset cannot change under
 * it) or under the keyspace write lock, so it reads the keyspace without
 * locks. Output goes through one buffer; with incremental fsync the file
 * is fdatasync'ed every RDB_AUTOSYNC_BYTES, as the RDB writer does. */
#include "persist/aof_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/strval.h"
#include "ds/hash.h"
#include "ds/list.h"
#include "ds/set.h"
#include "ds/stream.h"
#include "ds/zset.h"
#include "persist/rdb.h"
#include "util/strutil.h"

#define RW_ITEMS_PER_CMD 64 /* Redis's AOF_REWRITE_ITEMS_PER_CMD */
#define RW_BUF (64 * 1024)

typedef struct rw_out {
    int fd;
    char buf[RW_BUF];
    size_t len;
    uint64_t written, synced;
    int autosync;
    int err; /* errno of the first failure, 0 */
} rw_out;

static void rw_flush(rw_out *o) {
    size_t off = 0;
    while (off < o->len && !o->err) {
        ssize_t w = write(o->fd, o->buf + off, o->len - off);
        if (w < 0) {
            if (errno != EINTR) o->err = errno;
            continue;
        }
        off += (size_t)w;
        o->written += (uint64_t)w;
    }
    o->len = 0;
    if (!o->err && o->autosync && o->written - o->synced >= RDB_AUTOSYNC_BYTES) {
        if (fdatasync(o->fd) != 0) o->err = errno;
        o->synced = o->written;
    }
}

static void rw_put(rw_out *o, const void *p, size_t n) {
    while (n && !o->err) {
        if (o->len == RW_BUF) rw_flush(o);
        size_t k = RW_BUF - o->len < n ? RW_BUF - o->len : n;
        memcpy(o->buf + o->len, p, k);
        o->len += k;
        p = (const char *)p + k;
        n -= k;
    }
}

static void rw_head(rw_out *o, char c, long long n) {
    char b[32];
    int k = snprintf(b, sizeof(b), "%c%lld\r\n", c, n);
    rw_put(o, b, (size_t)k);
}

static void rw_bulk(rw_out *o, const char *p, size_t n) {
    rw_head(o, '$', (long long)n);
    rw_put(o, p, n);
    rw_put(o, "\r\n", 2);
}

static void rw_bulk_ll(rw_out *o, long long v) {
    char b[STRUTIL_LLSTR];
    size_t n = (size_t)ll_to_str(b, sizeof(b), v);
    rw_bulk(o, b, n);
}

/* A command head: the array length, the name and the key. */
static void rw_cmd(rw_out *o, int argc, const char *name, const dbentry *e) {
    rw_head(o, '*', argc);
    rw_bulk(o, name, strlen(name));
    rw_bulk(o, db_entry_key(e), db_entry_klen(e));
}

/* The elements of a collection go out in commands of at most 64 of them
 * (width arguments each): elem() before each element starts the next
 * command when the last one is full. */
typedef struct rw_batch {
    rw_out *o;
    const dbentry *e;
    const char *name;
    int width;
    uint64_t left;
    int in_cmd;
} rw_batch;

static void elem(rw_batch *b) {
    if (!b->in_cmd) {
        b->in_cmd = b->left > RW_ITEMS_PER_CMD ? RW_ITEMS_PER_CMD : (int)b->left;
        rw_cmd(b->o, 2 + b->width * b->in_cmd, b->name, b->e);
        b->left -= (uint64_t)b->in_cmd;
    }
    b->in_cmd--;
}

static void rw_string(rw_out *o, const dbentry *e) {
    rw_cmd(o, 3, "SET", e);
    if (e->val.enc == ENC_INT) {
        rw_bulk_ll(o, e->val.u.i);
        return;
    }
    char tmp[STRUTIL_LLSTR];
    size_t n;
    const char *p = strval_bytes(&e->val, tmp, &n);
    if (!p) {
        if (!o->err) o->err = strval_io_error() ? EIO : ENOMEM;
        return;
    }
    rw_bulk(o, p, n);
    strval_fold((gobj *)&e->val);
}

static void rw_list(rw_out *o, const dbentry *e) {
    glist *l = e->val.u.p;
    rw_batch b = {o, e, "RPUSH", 1, list_len(l), 0};
    list_iter it;
    list_elem el;
    list_iter_init(&it, l, 0, 1);
    while (list_iter_next(&it, &el)) {
        elem(&b);
        if (el.isint) rw_bulk_ll(o, el.v);
        else rw_bulk(o, el.p, el.n);
    }
    list_iter_release(&it);
}

static void rw_set(rw_out *o, const dbentry *e) {
    gset *s = e->val.u.p;
    rw_batch b = {o, e, "SADD", 1, set_card(s), 0};
    set_iter it;
    set_elem el;
    set_iter_init(&it, s);
    while (set_iter_next(&it, &el)) {
        elem(&b);
        if (el.isint) rw_bulk_ll(o, el.v);
        else rw_bulk(o, el.p, el.n);
    }
    set_iter_done(&it);
}

static void rw_zset(rw_out *o, const dbentry *e) {
    zset *z = e->val.u.p;
    rw_batch b = {o, e, "ZADD", 2, zset_card(z), 0};
    if (!b.left) return;
    zset_iter it;
    const char *m;
    size_t n;
    double sc;
    zset_iter_init(&it, z, 0, 0);
    while (zset_iter_next(&it, &m, &n, &sc)) {
        elem(&b);
        char num[64];
        int k = snprintf(num, sizeof(num), "%.17g", sc); /* Redis's rioWriteBulkDouble */
        rw_bulk(o, num, (size_t)k);
        rw_bulk(o, m, n);
    }
}

static void rw_hash(rw_out *o, const dbentry *e) {
    hash *h = e->val.u.p;
    rw_batch b = {o, e, "HMSET", 2, hash_len(h), 0};
    hash_iter it;
    const char *f, *v;
    size_t fl, vl;
    hash_iter_init(&it, h);
    while (hash_iter_next(&it, &f, &fl, &v, &vl)) {
        elem(&b);
        rw_bulk(o, f, fl);
        rw_bulk(o, v, vl);
    }
    hash_iter_done(&it);
}

static void rw_stream_id(rw_out *o, const stream_id *id) {
    char b[48];
    int n = snprintf(b, sizeof(b), "%llu-%llu", (unsigned long long)id->ms, (unsigned long long)id->seq);
    rw_bulk(o, b, (size_t)n);
}

/* Redis's rewriteStreamObject. */
static void rw_stream(rw_out *o, const dbentry *e) {
    gstream *s = e->val.u.p;
    if (s->length) {
        stream_iter it;
        stream_id id;
        size_t nf;
        stream_iter_init(&it, s, NULL, NULL, 0);
        while (stream_iter_next(&it, &id, &nf)) {
            rw_cmd(o, 3 + (int)nf * 2, "XADD", e);
            rw_stream_id(o, &id);
            for (size_t i = 0; i < nf; i++) {
                stream_str f, v;
                stream_iter_field(&it, &f, &v);
                rw_bulk(o, f.p, f.n);
                rw_bulk(o, v.p, v.n);
            }
        }
        stream_iter_done(&it);
    } else {
        /* an empty stream: XADD an entry and trim it away */
        stream_id one = {0, 1};
        rw_cmd(o, 7, "XADD", e);
        rw_bulk(o, "MAXLEN", 6);
        rw_bulk(o, "0", 1);
        rw_stream_id(o, &one);
        rw_bulk(o, "x", 1);
        rw_bulk(o, "y", 1);
    }
    rw_cmd(o, 7, "XSETID", e);
    rw_stream_id(o, &s->last_id);
    rw_bulk(o, "ENTRIESADDED", 12);
    rw_bulk_ll(o, (long long)s->entries_added);
    rw_bulk(o, "MAXDELETEDID", 12);
    rw_stream_id(o, &s->max_deleted_id);
    for (size_t i = 0; i < s->ngroups; i++) {
        const stream_group *g = s->groups[i];
        rw_head(o, '*', 7);
        rw_bulk(o, "XGROUP", 6);
        rw_bulk(o, "CREATE", 6);
        rw_bulk(o, db_entry_key(e), db_entry_klen(e));
        rw_bulk(o, g->name, g->nlen);
        rw_stream_id(o, &g->last_id);
        rw_bulk(o, "ENTRIESREAD", 11);
        rw_bulk_ll(o, g->entries_read);
        for (size_t k = 0; k < g->ncons; k++) {
            const stream_consumer *c = g->cons[k];
            if (!c->pel.n) {
                rw_head(o, '*', 5);
                rw_bulk(o, "XGROUP", 6);
                rw_bulk(o, "CREATECONSUMER", 14);
                rw_bulk(o, db_entry_key(e), db_entry_klen(e));
                rw_bulk(o, g->name, g->nlen);
                rw_bulk(o, c->name, c->nlen);
                continue;
            }
            for (size_t m = 0; m < c->pel.n; m++) {
                const stream_nack *na = c->pel.v[m];
                rw_cmd(o, 12, "XCLAIM", e);
                rw_bulk(o, g->name, g->nlen);
                rw_bulk(o, c->name, c->nlen);
                rw_bulk(o, "0", 1);
                rw_stream_id(o, &na->id);
                rw_bulk(o, "TIME", 4);
                rw_bulk_ll(o, na->delivery_time);
                rw_bulk(o, "RETRYCOUNT", 10);
                rw_bulk_ll(o, (long long)na->delivery_count);
                rw_bulk(o, "JUSTID", 6);
                rw_bulk(o, "FORCE", 5);
            }
        }
    }
}

static void rw_entry(rw_out *o, const dbentry *e) {
    switch (e->val.type) {
    case OBJ_STRING: rw_string(o, e); break;
    case OBJ_LIST: rw_list(o, e); break;
    case OBJ_SET: rw_set(o, e); break;
    case OBJ_ZSET: rw_zset(o, e); break;
    case OBJ_HASH: rw_hash(o, e); break;
    case OBJ_STREAM: rw_stream(o, e); break;
    default: return; /* a key being created (no value yet) */
    }
    if (db_entry_expire(e) != -1) {
        rw_cmd(o, 3, "PEXPIREAT", e);
        rw_bulk_ll(o, db_entry_expire(e));
    }
}

/* A function library, as Redis's rewriteFunctions: FUNCTION LOAD code. */
static void rw_function(void *arg, const char *code, size_t n) {
    rw_out *o = arg;
    rw_head(o, '*', 3);
    rw_bulk(o, "FUNCTION", 8);
    rw_bulk(o, "LOAD", 4);
    rw_bulk(o, code, n);
}

int aof_rewrite_commands(const char *path, int incremental_fsync, int timestamp, char *err, size_t errlen) {
    rw_out *o = calloc(1, sizeof(*o));
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    o->autosync = incremental_fsync;
    o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        snprintf(err, errlen, "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): %s",
                 strerror(errno));
        free(o);
        return -1;
    }
    if (timestamp) {
        char b[40];
        int k = snprintf(b, sizeof(b), "#TS:%lld\r\n", (long long)time(NULL));
        rw_put(o, b, (size_t)k);
    }
    const rdb_func_hooks *fh = rdb_func_hooks_get();
    if (fh && fh->each) fh->each(rw_function, o);
    for (int d = 0; d < db_count() && !o->err; d++) {
        gdb *db = db_get(d);
        if (!db_size(db)) continue;
        rw_head(o, '*', 2);
        rw_bulk(o, "SELECT", 6);
        rw_bulk_ll(o, d);
        for (int s = 0; s < DB_NSHARDS && !o->err; s++) {
            swiss_iter it;
            void *slot;
            swiss_iter_init(&it, &db->shards[s].keys);
            while ((slot = swiss_iter_next(&it)) && !o->err) rw_entry(o, db_index_entry(&db->shards[s].keys, slot));
            swiss_iter_done(&it);
        }
    }
    rw_flush(o);
    if (!o->err && fsync(o->fd) != 0) o->err = errno;
    if (close(o->fd) != 0 && !o->err) o->err = errno;
    int e = o->err;
    free(o);
    if (e) {
        snprintf(err, errlen, "Write error writing append only file on disk: %s", strerror(e));
        unlink(path);
        return -1;
    }
    return 0;
}
