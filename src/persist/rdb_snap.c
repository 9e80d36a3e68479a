/* rdb_snap.c -- a point-in-time RDB without fork (see rdb_snap.h).
 *
 * State. The pass's position (database, shard, cursor, done) is moved by
 * the thread in rdb_snap_run under the keyspace read lock, or by a
 * finisher under the keyspace write lock, never both at once. The output
 * (descriptor, running CRC, byte count) is under out_mu; the writers'
 * buffer, the claim and the counters under state_mu. `failed` (atomic)
 * turns every further save into a mark only. */
#include "persist/rdb_snap.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "persist/rdb_format.h"
#include "util/crc64.h"
#include "util/endian.h"
#include "util/fdio.h"

#define CHUNK_BYTES (1u << 20) /* the pass writes its records in chunks of about this */
#define STEP_SLOTS 1024        /* entries looked at under one shard lock, at most */

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
    /* fixed between begin and the end */
    int ndbs;
    gdb *dbs[DB_MAX];                  /* the databases as numbered at the start */
    uint64_t size[DB_MAX], expires[DB_MAX];
    int compress, no_checksum;
    size_t limit;
    /* the pass (keyspace lock, see above) */
    int d, s, done;
    uint64_t cursor;
    rdb_membuf *it;                    /* the pass's chunk (its thread only) */
    /* out_mu */
    int fd;
    uint64_t crc, bytes;
    char err[256];
    /* state_mu */
    int claimed;
    rdb_membuf *side;                  /* the writers' buffer */
    rdb_snap_stats st;
} S;
static int failed;          /* atomic */
static uint64_t out_bytes;  /* atomic: S.bytes for INFO */

int rdb_snap_claim(void) {
    pthread_mutex_lock(&state_mu);
    int rc = S.claimed ? -1 : 0;
    S.claimed = 1;
    pthread_mutex_unlock(&state_mu);
    return rc;
}

void rdb_snap_release(void) {
    pthread_mutex_lock(&state_mu);
    S.claimed = 0;
    pthread_mutex_unlock(&state_mu);
}

static void fail(const char *why) {
    if (__atomic_exchange_n(&failed, 1, __ATOMIC_RELAXED)) return;
    pthread_mutex_lock(&state_mu);
    snprintf(S.err, sizeof(S.err), "%s", why);
    pthread_mutex_unlock(&state_mu);
}

/* Bytes to the output (out_mu held). */
static void out_write(const unsigned char *p, size_t n) {
    if (!n || __atomic_load_n(&failed, __ATOMIC_RELAXED)) return;
    S.crc = crc64_update(S.crc, p, n);
    if (fd_write_all(S.fd, p, n) != 0) {
        char m[128];
        snprintf(m, sizeof(m), "write error: %s", strerror(errno));
        fail(m);
        return;
    }
    S.bytes += n;
    __atomic_store_n(&out_bytes, S.bytes, __ATOMIC_RELAXED);
}

/* A chunk of b to the output. */
static void write_chunk(rdb_membuf *b) {
    char m[200];
    if (rdb_membuf_error(b, m, sizeof(m)) != RDB_OK) fail(m);
    size_t n;
    unsigned char *p = rdb_membuf_take(b, &n);
    pthread_mutex_lock(&out_mu);
    out_write(p, n);
    pthread_mutex_unlock(&out_mu);
    free(p);
}

/* The writers' buffer to the output (no state_mu held). */
static void drain(void) {
    pthread_mutex_lock(&out_mu);
    pthread_mutex_lock(&state_mu);
    unsigned char *p = NULL;
    size_t n = 0;
    char m[200];
    int bad = 0;
    if (S.side) {
        bad = rdb_membuf_error(S.side, m, sizeof(m)) != RDB_OK;
        p = rdb_membuf_take(S.side, &n);
    }
    S.st.buffer_bytes = 0;
    pthread_mutex_unlock(&state_mu);
    if (bad) fail(m);
    out_write(p, n);
    pthread_mutex_unlock(&out_mu);
    free(p);
}

/* The snapshot's number of db (-1: not one of its databases, e.g. a
 * detached one being loaded or freed). */
static int index_of(const gdb *db) {
    for (int i = 0; i < S.ndbs; i++)
        if (S.dbs[i] == db) return i;
    return -1;
}

void rdb_snap_save(gdb *db, dbentry *e, int fold) {
    if (!db_entry_unsaved(e)) return;
    int d = index_of(db);
    if (d < 0) return;
    db_entry_mark_saved(e);
    if (__atomic_load_n(&failed, __ATOMIC_RELAXED)) return;
    pthread_mutex_lock(&state_mu);
    size_t n = 0;
    if (S.side) {
        rdb_membuf_entry(S.side, d, e, fold);
        n = rdb_membuf_len(S.side);
        S.st.buffer_bytes = n;
        if (n > S.st.buffer_peak) S.st.buffer_peak = n;
        S.st.keys_saved++;
        S.st.keys_saved_by_writers++;
        if (n >= S.limit) S.st.writer_flushes++;
    }
    pthread_mutex_unlock(&state_mu);
    if (n >= S.limit) drain(); /* over the bound: this writer writes it out */
}

static void db_hook(gdb *db, dbentry *e) {
    /* In the middle of a command: large-string views wait for its end. */
    rdb_snap_save(db, e, 0);
}

int rdb_snap_begin(int fd, const rdb_save_opts *opt, size_t limit, char *err, size_t errlen) {
    rdb_membuf *it = rdb_membuf_new(opt->compress), *side = rdb_membuf_new(opt->compress);
    rdb_membuf *hdr = rdb_membuf_new(0);
    if (!it || !side || !hdr) {
        rdb_membuf_free(it);
        rdb_membuf_free(side);
        rdb_membuf_free(hdr);
        rdb_snap_release();
        snprintf(err, errlen, "out of memory");
        return RDB_ERR_NOMEM;
    }
    S.ndbs = db_count();
    for (int i = 0; i < S.ndbs; i++) {
        S.dbs[i] = db_get(i);
        S.size[i] = db_size(S.dbs[i]);
        S.expires[i] = db_expires(S.dbs[i]);
    }
    S.compress = opt->compress;
    S.no_checksum = opt->no_checksum;
    S.limit = limit;
    S.d = S.s = S.done = 0;
    S.cursor = 0;
    S.it = it;
    __atomic_store_n(&failed, 0, __ATOMIC_RELAXED);
    pthread_mutex_lock(&out_mu);
    S.fd = fd;
    S.crc = S.bytes = 0;
    rdb_membuf_header(hdr, opt);
    size_t n;
    unsigned char *p = rdb_membuf_take(hdr, &n);
    out_write(p, n);
    pthread_mutex_unlock(&out_mu);
    free(p);
    rdb_membuf_free(hdr);
    pthread_mutex_lock(&state_mu);
    S.side = side;
    S.err[0] = '\0';
    uint64_t started = S.st.started, nfailed = S.st.failed;
    memset(&S.st, 0, sizeof(S.st));
    S.st.started = started + 1;
    S.st.failed = nfailed;
    S.st.in_progress = 1;
    S.st.buffer_limit = limit;
    pthread_mutex_unlock(&state_mu);
    db_snap_set_hooks(db_hook, rdb_snap_finish_locked);
    db_snap_start();
    return RDB_OK;
}

typedef struct stepctx {
    const swiss *keys;
    rdb_membuf *b;
    int d, mark_only, fold;
    unsigned seen;
    uint64_t saved;
} stepctx;

static void step_entry(void *arg, void *slot) {
    stepctx *c = arg;
    dbentry *e = db_index_entry(c->keys, slot);
    c->seen++;
    if (!db_entry_unsaved(e)) return;
    db_entry_mark_saved(e);
    if (c->mark_only) return;
    rdb_membuf_entry(c->b, c->d, e, c->fold);
    c->saved++;
}

/* One step of the pass into b: up to STEP_SLOTS entries of the current
 * shard under its lock. The keyspace lock is held (read, or write by a
 * finisher). Returns 0 once the pass is done. */
static int step(rdb_membuf *b, int fold) {
    while (!S.done && S.s == 0 && S.cursor == 0 && !S.size[S.d]) /* empty at the start: nothing of it to save */
        if (++S.d == S.ndbs) S.done = 1;
    if (S.done) return 0;
    gdb *db = S.dbs[S.d];
    swiss *t = &db->shards[S.s].keys;
    stepctx c = {t, b, S.d, __atomic_load_n(&failed, __ATOMIC_RELAXED), fold, 0, 0};
    if (S.s == 0 && S.cursor == 0 && !c.mark_only) rdb_membuf_db(b, S.d, S.size[S.d], S.expires[S.d]);
    db_lock_shard(db, (unsigned)S.s);
    do {
        S.cursor = swiss_scan(t, S.cursor, step_entry, &c);
    } while (S.cursor && c.seen < STEP_SLOTS && rdb_membuf_len(b) < CHUNK_BYTES);
    db_unlock_shard(db, (unsigned)S.s);
    if (!S.cursor && ++S.s == DB_NSHARDS) {
        S.s = 0;
        if (++S.d == S.ndbs) S.done = 1;
    }
    if (c.saved) {
        pthread_mutex_lock(&state_mu);
        S.st.keys_saved += c.saved;
        pthread_mutex_unlock(&state_mu);
    }
    return !S.done;
}

void rdb_snap_finish_locked(void) {
    if (!db_snap_running() || S.done) return;
    rdb_membuf *b = rdb_membuf_new(S.compress);
    if (!b) fail("out of memory");
    rdb_membuf *scratch = b ? b : S.it; /* marks only after a failure: nothing is written */
    while (step(scratch, 1))
        if (b && rdb_membuf_len(b) >= CHUNK_BYTES) write_chunk(b);
    if (b) write_chunk(b);
    rdb_membuf_free(b);
}

static int64_t mono_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int rdb_snap_run(rdb_snap_tick_fn *tick, void *arg, rdb_save_stats *st, char *err, size_t errlen) {
    int64_t last_tick = mono_ms();
    int more = 1;
    while (more) {
        db_rdlock_keyspace();
        more = step(S.it, 1); /* each large-string view is folded as it is written */
        db_unlock_keyspace();
        if (rdb_membuf_len(S.it) >= CHUNK_BYTES || !more) write_chunk(S.it);
        pthread_mutex_lock(&state_mu);
        int pending = S.st.buffer_bytes > 0;
        pthread_mutex_unlock(&state_mu);
        if (pending) drain();
        if (tick && mono_ms() - last_tick >= 1000) {
            last_tick = mono_ms();
            if (tick(arg) != 0) fail("the replica went away");
        }
        long slow = rdb_save_slow_us; /* test hook: a slow pass (no lock held) */
        if (slow > 0) usleep((useconds_t)slow);
    }
    /* Every entry is marked: no writer adds a record from here on (each
     * one that did, did so under a shard lock the pass took later). */
    drain();
    pthread_mutex_lock(&out_mu);
    unsigned char eof = RDB_OPCODE_EOF, crc[8];
    out_write(&eof, 1);
    le_put64(crc, S.no_checksum ? 0 : S.crc); /* rdbchecksum no: zero, as Redis writes */
    out_write(crc, 8);
    uint64_t bytes = S.bytes;
    pthread_mutex_unlock(&out_mu);
    db_snap_stop();
    int bad = __atomic_load_n(&failed, __ATOMIC_RELAXED);
    pthread_mutex_lock(&state_mu);
    rdb_membuf_free(S.side);
    S.side = NULL;
    S.st.in_progress = 0;
    S.st.buffer_bytes = 0;
    if (bad) S.st.failed++;
    if (st) {
        st->keys = S.st.keys_saved;
        st->bytes = bytes;
    }
    if (bad) snprintf(err, errlen, "%s", S.err);
    S.claimed = 0;
    pthread_mutex_unlock(&state_mu);
    rdb_membuf_free(S.it);
    S.it = NULL;
    return bad ? RDB_ERR_IO : RDB_OK;
}

void rdb_snap_get_stats(rdb_snap_stats *st) {
    pthread_mutex_lock(&state_mu);
    *st = S.st;
    pthread_mutex_unlock(&state_mu);
    st->bytes = __atomic_load_n(&out_bytes, __ATOMIC_RELAXED);
}
