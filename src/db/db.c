/* db.c -- the keyspace: databases split in shards of swiss tables.
 *
 * Invariants: an entry is in exactly one shard, the one its key hash names
 * (in slot mode: its hash slot, and then also in that slot's set);
 * an entry is in its shard's vol iff it has a TTL: VIDX(e) == DB_VIDX_NONE iff
 * db_entry_expire(e) == -1, else shard->vol[VIDX(e)] == e.
 * An expired entry may still be present until lazy or active expiry removes
 * it, but no lookup ever returns it. */
#include "db/db.h"
#include "db/keylist.h"
#include "db/lazyfree.h"
#include "db/mcmeta.h"
#include "db/strval.h"

#include <assert.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/tstat.h"
#include "util/crc16.h"
#include "util/hashfn.h"
#include "util/monotime.h"
#include "util/rand.h"

typedef struct keyref {
    const char *p;
    size_t n;
} keyref;

static uint64_t entry_hash(const dbentry *e) { return hash_bytes(db_entry_key(e), db_entry_klen(e)); }

static int entry_match(const dbentry *e, const keyref *k) {
    return db_entry_klen(e) == k->n && memcmp(db_entry_key(e), k->p, k->n) == 0;
}

static inline uint32_t slot_ref(const void *slot) {
    uint32_t ref;
    memcpy(&ref, slot, sizeof(ref));
    return ref;
}

static inline void slot_set_ref(void *slot, uint32_t ref) { memcpy(slot, &ref, sizeof(ref)); }

static inline const dbentry *slot_entry(void *ctx, const void *slot) { return db_space_entry(ctx, slot_ref(slot)); }

/* A shard's index: 4-byte references into its db_space (the ctx). */
static uint64_t key_slot_hash(void *ctx, const void *slot) { return entry_hash(slot_entry(ctx, slot)); }

static int key_slot_match(void *ctx, const void *slot, const void *key) {
    return entry_match(slot_entry(ctx, slot), key);
}

static void key_slot_prefetch(void *ctx, const void *slot) {
    const dbentry *e = slot_entry(ctx, slot);
    /* The header and the key's bytes after it (a key of up to 17 bytes ends
     * within e + 33). */
    __builtin_prefetch(e);
    __builtin_prefetch((const char *)e + 32);
}

/* The key index's parts grow by a quarter (swiss.c, "Growth"): 6.9 B per
 * key instead of 8.9, for four moves per key while it grows instead of one. */
static const swiss_type keyspace_type = {sizeof(uint32_t), key_slot_hash, key_slot_match, 0, key_slot_prefetch, 4};

/* A hash slot's set of keys (cluster mode): entry pointers. */
static uint64_t ptr_slot_hash(void *ctx, const void *slot) {
    (void)ctx;
    return entry_hash(*(dbentry *const *)slot);
}

static int ptr_slot_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    return entry_match(*(dbentry *const *)slot, key);
}

static const swiss_type slotset_type = {sizeof(dbentry *), ptr_slot_hash, ptr_slot_match, 0, NULL};

/* A database's 64 key indexes grow together (the hash spreads keys
 * evenly), so at the same size they would all split in parts at once
 * (swiss.c): 64 splits of ~3.3K keys inside one big MSET. The odd shards
 * split at half the default point: 32 splits at a time. (Quarters and
 * eighths too would cut that to 16, but a part has a minimum size, and
 * 16 parts per shard that early cost 12-15 % more memory at 50K-100K
 * keys; halves stay within -1..+5 %.) */
static void shard_index_init(shard *sh, unsigned s) {
    db_space *sp = calloc(1, sizeof(*sp));
    if (!sp) abort();
    swiss_init(&sh->keys, &keyspace_type, sp);
    swiss_set_split_shift(&sh->keys, s % 2);
}

static gdb *dbs[DB_MAX];
static int ndbs;
static db_hooks hooks;
volatile int db_active_expire_enabled = 1;
uint64_t db_stat_expired_keys;
uint64_t db_stat_expire_cycle_us, db_stat_expire_time_cap;
double db_stat_expired_stale_perc;
static _Thread_local int count_lookups;

void db_count_lookups(int on) { count_lookups = on; }

void db_init_all(int n) {
    assert(n > 0 && n <= DB_MAX);
    ndbs = n;
    for (int i = 0; i < n; i++) {
        gdb *db = calloc(1, sizeof(gdb));
        assert(db);
        db->id = i;
        for (int s = 0; s < DB_NSHARDS; s++) {
            pthread_mutex_init(&db->shards[s].lock, NULL);
            shard_index_init(&db->shards[s], s);
        }
        dbs[i] = db;
    }
}

void db_set_hooks(const db_hooks *h) { hooks = *h; }

void db_dirty_add(uint64_t n) { tstat_add(TSTAT_DIRTY, n); }

uint64_t db_dirty_now(void) { return tstat_sum_raw(TSTAT_DIRTY); }

void db_signal_modified(gdb *db, const char *key, size_t klen) {
    tstat_add(TSTAT_DIRTY, 1);
    if (hooks.modified) hooks.modified(db, key, klen);
}

void db_signal_replaced(void) {
    db_signal_modified(NULL, NULL, 0);
    if (hooks.replaced) hooks.replaced();
}

int db_count(void) { return ndbs; }
gdb *db_get(int id) { return id >= 0 && id < ndbs ? dbs[id] : NULL; }

void db_swap(int a, int b) {
    gdb *t = dbs[a];
    dbs[a] = dbs[b];
    dbs[b] = t;
    dbs[a]->id = a;
    dbs[b]->id = b;
}

uint64_t db_key_hash(const char *k, size_t n) { return hash_bytes(k, n); }

/* Slot mode (cluster-enabled): set once before db_init_all, read-only after. */
static int slot_mode;
void db_set_slot_mode(int on) { slot_mode = on; }
int db_slot_mode(void) { return slot_mode; }

/* The key hash (and in slot mode the hash slot) a command's lock step
 * computed, for its lookups to reuse (a single-key command would otherwise
 * hash its key several times). Keyed by the argument's address and length:
 * valid only between db_remember_key and db_forget_key, while the
 * command's arguments cannot change. */
static _Thread_local struct {
    const char *k;
    size_t n;
    uint64_t h;
    unsigned slot;
} key_memo;

static inline unsigned key_slot(const char *k, size_t n) {
    if (k == key_memo.k && n == key_memo.n) {
#ifdef __SANITIZE_ADDRESS__
        assert(key_memo.slot == crc16_key_slot(k, n));
#endif
        return key_memo.slot;
    }
    return crc16_key_slot(k, n);
}

/* A key's shard: the top bits of its hash, or its hash slot in slot mode. */
static inline unsigned shard_of(uint64_t h, const char *k, size_t n) {
    if (__builtin_expect(slot_mode, 0)) return db_shard_of_slot(key_slot(k, n));
    return (unsigned)(h >> (64 - DB_SHARD_BITS));
}

unsigned db_shard_of(const char *k, size_t n) {
    if (slot_mode) return db_shard_of_slot(crc16_key_slot(k, n));
    return shard_of(hash_bytes(k, n), k, n);
}

unsigned db_remember_key(const char *k, size_t n) {
    key_memo.k = NULL;
    key_memo.h = hash_bytes(k, n);
    if (slot_mode) key_memo.slot = crc16_key_slot(k, n);
    key_memo.k = k;
    key_memo.n = n;
    return shard_of(key_memo.h, k, n);
}

void db_forget_key(void) { key_memo.k = NULL; }

static inline uint64_t key_hash(const char *k, size_t n) {
    if (k == key_memo.k && n == key_memo.n) {
#ifdef __SANITIZE_ADDRESS__
        /* The sanitizer build (whole Tcl suite) checks the contract. */
        assert(key_memo.h == hash_bytes(k, n));
#endif
        return key_memo.h;
    }
    return hash_bytes(k, n);
}

/* ---- The keyspace lock ----------------------------------------------------
 *
 * Every command takes it for reading, a few (EXEC, scripts, whole-keyspace
 * commands) for writing. A shared reader count would be a cache line every
 * worker writes on every command, so readers announce themselves in a
 * counter of their own instead (one cache line per thread, KS_SLOTS of
 * them; a thread past the last shares the overflow counter), and a writer
 * raises `ks_writer` under `ks_wlock`, then waits for every counter to
 * read zero. A reader that finds a writer steps back and waits on
 * ks_wlock, which the writer holds until it is done.
 *
 * Invariant: a thread reads the keyspace only while its counter is raised
 * and it has seen ks_writer == 0 after raising it; a writer writes only
 * after raising ks_writer and then seeing every counter at zero. Both
 * sides store, then load the other's word, with sequentially consistent
 * atomics, so at least one of them sees the other: never both inside.
 *
 * A thread that holds the lock for writing (EXEC, whole-keyspace commands)
 * may call code that asks for the keyspace again; that nests instead of
 * deadlocking. A reader may ask again for reading (it nests too). */
#define KS_SLOTS 256
typedef struct ks_slot {
    _Alignas(64) int readers;
} ks_slot;
static ks_slot ks_slots[KS_SLOTS];
static ks_slot ks_overflow;          /* shared by threads that found no free slot */
static int ks_taken[KS_SLOTS];       /* slot owned by a live thread */
static int ks_high;                  /* slots ever handed out: [0, ks_high) */
static int ks_writer;
static pthread_mutex_t ks_wlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t ks_key;
static pthread_once_t ks_once = PTHREAD_ONCE_INIT;
static _Thread_local ks_slot *ks_mine;
static _Thread_local int ks_write_held, ks_nested, ks_depth;

static void ks_release(void *arg) {
    int i = (int)(intptr_t)arg - 1;
    assert(__atomic_load_n(&ks_slots[i].readers, __ATOMIC_RELAXED) == 0);
    __atomic_store_n(&ks_taken[i], 0, __ATOMIC_RELEASE);
}
static void ks_key_make(void) { pthread_key_create(&ks_key, ks_release); }

/* The calling thread's counter, handed out on its first read (and given
 * back when the thread exits). */
static ks_slot *ks_slot_of_thread(void) {
    if (ks_mine) return ks_mine;
    pthread_once(&ks_once, ks_key_make);
    for (int i = 0; i < KS_SLOTS; i++) {
        int zero = 0;
        if (!__atomic_compare_exchange_n(&ks_taken[i], &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) continue;
        int h = __atomic_load_n(&ks_high, __ATOMIC_RELAXED);
        while (h < i + 1 && !__atomic_compare_exchange_n(&ks_high, &h, i + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
        }
        pthread_setspecific(ks_key, (void *)(intptr_t)(i + 1));
        return ks_mine = &ks_slots[i];
    }
    return ks_mine = &ks_overflow;
}

static void (*ks_wait_hook)(void);

void db_set_keyspace_wait_hook(void (*fn)(void)) { ks_wait_hook = fn; }

/* Take ks_wlock; while a writer holds it, run the wait hook every
 * KS_WAIT_NS. */
#define KS_WAIT_NS 5000000L
static void ks_wlock_take(void) {
    if (!ks_wait_hook) {
        pthread_mutex_lock(&ks_wlock);
        return;
    }
    if (pthread_mutex_trylock(&ks_wlock) == 0) return;
    for (;;) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += KS_WAIT_NS;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        if (pthread_mutex_timedlock(&ks_wlock, &dl) == 0) return;
        ks_wait_hook();
    }
}

/* The reader's half of the handshake: count me in, then look for a
 * writer (a writer sets ks_writer, then waits for every count to drop). 1:
 * in; 0: a writer is at work and the count is taken back. */
static int ks_reader_enter(ks_slot *me) {
    __atomic_add_fetch(&me->readers, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&ks_writer, __ATOMIC_SEQ_CST)) return 1;
    __atomic_sub_fetch(&me->readers, 1, __ATOMIC_SEQ_CST);
    return 0;
}

void db_rdlock_keyspace(void) {
    if (ks_write_held) {
        ks_nested++;
        return;
    }
    if (ks_depth++) return;
    ks_slot *me = ks_slot_of_thread();
    while (!ks_reader_enter(me)) {
        ks_wlock_take(); /* the writer holds it until it is done */
        pthread_mutex_unlock(&ks_wlock);
    }
}

static void ks_wait_empty(const ks_slot *sl) {
    for (unsigned spins = 0; __atomic_load_n(&sl->readers, __ATOMIC_SEQ_CST); spins++) {
        if (spins < 64) {
            __builtin_ia32_pause();
        } else {
            struct timespec ts = {0, spins < 1024 ? 0 : 50000};
            nanosleep(&ts, NULL);
        }
    }
}

void db_wrlock_keyspace(void) {
    if (ks_write_held) {
        ks_nested++;
        return;
    }
    assert(ks_depth == 0); /* a reader asking to write would wait for itself */
    ks_wlock_take();
    __atomic_store_n(&ks_writer, 1, __ATOMIC_SEQ_CST);
    int high = __atomic_load_n(&ks_high, __ATOMIC_SEQ_CST);
    for (int i = 0; i < high; i++) ks_wait_empty(&ks_slots[i]);
    ks_wait_empty(&ks_overflow);
    ks_write_held = 1;
}

void db_unlock_keyspace(void) {
    if (ks_nested) {
        ks_nested--;
        return;
    }
    if (ks_write_held) {
        ks_write_held = 0;
        __atomic_store_n(&ks_writer, 0, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&ks_wlock);
        return;
    }
    assert(ks_depth > 0);
    if (--ks_depth) return;
    __atomic_sub_fetch(&ks_mine->readers, 1, __ATOMIC_RELEASE);
}

int db_keyspace_write_held(void) { return ks_write_held; }

/* Shards with fewer keys than this are left alone: their index and entries
 * are likely in cache already, and the prefetch would only cost. */
#define DB_PREFETCH_MIN_KEYS 1024

/* Per database, whether its shards are that big on average, refreshed by
 * the cron: a protocol module asks before it even reads requests ahead. */
static int prefetch_on[DB_MAX];

int db_prefetch_wanted(int dbid) {
    return dbid >= 0 && dbid < DB_MAX && __atomic_load_n(&prefetch_on[dbid], __ATOMIC_RELAXED);
}

void db_prefetch_refresh(void) {
    db_rdlock_keyspace();
    for (int i = 0; i < ndbs; i++) {
        size_t n = 0;
        for (unsigned sh = 0; sh < DB_NSHARDS; sh++) {
            db_lock_shard(dbs[i], sh);
            n += swiss_size(&dbs[i]->shards[sh].keys);
            db_unlock_shard(dbs[i], sh);
        }
        int on = n >= (size_t)DB_NSHARDS * DB_PREFETCH_MIN_KEYS;
        /* Written only when it changes: every worker reads the line. */
        if (__atomic_load_n(&prefetch_on[i], __ATOMIC_RELAXED) != on) __atomic_store_n(&prefetch_on[i], on, __ATOMIC_RELAXED);
    }
    db_unlock_keyspace();
}

/* Two passes over keys k[at[0..count)], each key's shard locked around
 * its step as a lookup would lock it (unless held: the caller holds them
 * all): the home groups first, then (their lines arriving meanwhile) the
 * entries their tags point at. A shard too small for its index to miss
 * the caches is skipped. */
static void prefetch_pass(gdb *db, const char *const *k, const size_t *n, const int *at, int count, int held) {
    uint64_t h[DB_PREFETCH_MAX];
    unsigned sh[DB_PREFETCH_MAX];
    int m = 0;
    for (int j = 0; j < count; j++) {
        int i = at[j];
        h[m] = hash_bytes(k[i], n[i]);
        sh[m] = shard_of(h[m], k[i], n[i]);
        shard *s = &db->shards[sh[m]];
        if (!held) pthread_mutex_lock(&s->lock);
        int big = swiss_size(&s->keys) >= DB_PREFETCH_MIN_KEYS;
        if (big) swiss_prefetch_group(&s->keys, h[m]);
        if (!held) pthread_mutex_unlock(&s->lock);
        m += big;
    }
    for (int i = 0; i < m; i++) {
        if (!held) pthread_mutex_lock(&db->shards[sh[i]].lock);
        swiss_prefetch_match(&db->shards[sh[i]].keys, h[i]);
        if (!held) pthread_mutex_unlock(&db->shards[sh[i]].lock);
    }
    tstat_add(TSTAT_KEYS_PREFETCHED, (uint64_t)m);
}

/* A key equal to the one before it (a pipeline on one list, say) is
 * looked at once, and a batch of fewer than two distinct keys has nothing
 * to overlap. Only from a thread holding no keyspace lock (never inside a
 * command, a script's busy pump or a wake-up run from a command), and only
 * when no writer holds or waits for the keyspace: a prefetch never waits. */
int db_prefetch_keys(int dbid, const char *const *k, const size_t *n, int count) {
    if (count > DB_PREFETCH_MAX) count = DB_PREFETCH_MAX;
    int at[DB_PREFETCH_MAX], distinct = 0;
    for (int i = 0; i < count; i++)
        if (!i || n[i] != n[i - 1] || memcmp(k[i], k[i - 1], n[i]) != 0) at[distinct++] = i;
    if (distinct < 2 || ks_write_held || ks_depth) return distinct;
    ks_slot *me = ks_slot_of_thread();
    if (!ks_reader_enter(me)) return distinct;
    gdb *db = db_get(dbid);
    if (db) prefetch_pass(db, k, n, at, distinct, 0);
    __atomic_sub_fetch(&me->readers, 1, __ATOMIC_RELEASE);
    return distinct;
}

void db_prefetch_held(gdb *db, const char *const *k, const size_t *n, int count) {
    if (count < 2 || !db_prefetch_wanted(db->id)) return;
    if (count > DB_PREFETCH_MAX) count = DB_PREFETCH_MAX;
    int at[DB_PREFETCH_MAX];
    for (int i = 0; i < count; i++) at[i] = i;
    prefetch_pass(db, k, n, at, count, 1);
}
/* Under the keyspace write lock no other thread can hold a shard. */
void db_lock_shard(gdb *db, unsigned s) {
    if (!ks_write_held) pthread_mutex_lock(&db->shards[s].lock);
}
void db_unlock_shard(gdb *db, unsigned s) {
    if (!ks_write_held) pthread_mutex_unlock(&db->shards[s].lock);
}

/* While a command runs, expiry uses one time taken at its start (as Redis
 * does), so a key named twice cannot expire between the two lookups. */
static _Thread_local int64_t frozen_ms;
static _Thread_local int frozen_depth;

void db_freeze_time(uint64_t mono_us) {
    if (frozen_depth++ == 0) frozen_ms = monotime_unix_ms(mono_us);
}

void db_unfreeze_time(void) {
    if (--frozen_depth == 0) frozen_ms = 0;
}

int64_t db_now_ms(void) {
    if (frozen_ms) return frozen_ms;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline shard *shard_for(gdb *db, uint64_t h, const char *k, size_t n) {
    return &db->shards[shard_of(h, k, n)];
}

/* ---- the keys of each hash slot (slot mode) ------------------------------
 *
 * One swiss set of entry pointers per slot, made when the slot gets its
 * first key; the array of sets when the database gets its first key (a
 * compare-and-swap: two shards may add their first keys at once). A slot's
 * set changes only under its shard's lock, as the shard's own index. */
typedef struct db_slots {
    swiss *set[CRC16_SLOTS];
} db_slots;

static db_slots *slots_of(gdb *db) {
    db_slots *ds = __atomic_load_n(&db->slots, __ATOMIC_ACQUIRE);
    if (ds) return ds;
    db_slots *fresh = calloc(1, sizeof(*fresh));
    if (!fresh) abort();
    if (__atomic_compare_exchange_n(&db->slots, &ds, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return fresh;
    free(fresh);
    return ds;
}

static int slots_add(gdb *db, dbentry *e, uint64_t h, unsigned sl) {
    db_slots *ds = slots_of(db);
    if (!ds->set[sl]) {
        swiss *t = malloc(sizeof(swiss));
        if (!t) return -1;
        swiss_init(t, &slotset_type, NULL);
        ds->set[sl] = t;
    }
    void *slot = swiss_insert(ds->set[sl], h);
    if (!slot) return -1;
    memcpy(slot, &e, sizeof(e));
    return 0;
}

/* The slot holding e in its hash slot's set (h: its key's hash); *setp:
 * where the set's pointer is. */
static void *slots_find(gdb *db, dbentry *e, uint64_t h, swiss ***setp) {
    db_slots *ds = __atomic_load_n(&db->slots, __ATOMIC_ACQUIRE);
    size_t n = db_entry_klen(e);
    unsigned sl = crc16_key_slot(db_entry_key(e), n);
    assert(ds && ds->set[sl]);
    keyref kr = {db_entry_key(e), n};
    void *slot = swiss_find(ds->set[sl], h, &kr);
    assert(slot && *(dbentry **)slot == e); /* a set of pointers */
    *setp = &ds->set[sl];
    return slot;
}

static void slots_del(gdb *db, dbentry *e) {
    swiss **set;
    void *slot = slots_find(db, e, key_hash(db_entry_key(e), db_entry_klen(e)), &set);
    swiss_delete(*set, slot);
    if (swiss_size(*set) == 0) {
        swiss_free(*set);
        free(*set);
        *set = NULL;
    }
}

static void slots_free(gdb *db) {
    db_slots *ds = db->slots;
    if (!ds) return;
    for (unsigned i = 0; i < CRC16_SLOTS; i++)
        if (ds->set[i]) {
            swiss_free(ds->set[i]);
            free(ds->set[i]);
        }
    free(ds);
    db->slots = NULL;
}

size_t db_slot_count(gdb *db, unsigned slot) {
    db_slots *ds = __atomic_load_n(&db->slots, __ATOMIC_ACQUIRE);
    if (!ds || slot >= CRC16_SLOTS || !ds->set[slot]) return 0;
    return swiss_size(ds->set[slot]);
}

size_t db_slot_keys(gdb *db, unsigned slot, size_t max, db_slot_fn *fn, void *arg) {
    db_slots *ds = __atomic_load_n(&db->slots, __ATOMIC_ACQUIRE);
    if (!ds || slot >= CRC16_SLOTS || !ds->set[slot]) return 0;
    size_t n = 0;
    swiss_iter it;
    swiss_iter_init(&it, ds->set[slot]);
    void *p;
    while (n < max && (p = swiss_iter_next(&it))) {
        fn(arg, *(dbentry **)p);
        n++;
    }
    swiss_iter_done(&it);
    return n;
}

void db_slots_exchange(gdb *a, gdb *b) {
    db_slots *t = a->slots;
    a->slots = b->slots;
    b->slots = t;
}

/* The entry's position in its shard's vol (only entries with a dbext can
 * have a TTL). */
#define VIDX(e) (db_entry_has_ext(e) ? db_entry_ext(e)->vidx : DB_VIDX_NONE)
static inline void vidx_set(dbentry *e, uint32_t i) {
    assert(db_entry_has_ext(e));
    db_entry_ext(e)->vidx = i;
}

/* ---- snapshot marks (db.h) ---- */
int db_snap_on;
uint32_t db_snap_mark;
static uint64_t snap_gen;
static db_snap_save_fn *snap_hook;
static void (*snap_finish)(void);

void db_snap_set_hooks(db_snap_save_fn *save, void (*finish)(void)) {
    snap_hook = save;
    snap_finish = finish;
}

void db_snap_start(void) {
    __atomic_store_n(&db_snap_mark, db_snap_mark ^ DB_SNAP_BIT, __ATOMIC_RELAXED);
    __atomic_store_n(&db_snap_on, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&snap_gen, 1, __ATOMIC_RELEASE);
}

void db_snap_stop(void) { __atomic_store_n(&db_snap_on, 0, __ATOMIC_RELAXED); }

uint64_t db_snap_generation(void) { return __atomic_load_n(&snap_gen, __ATOMIC_ACQUIRE); }

void db_snap_adopt(gdb *db) {
    for (int s = 0; s < DB_NSHARDS; s++) {
        swiss_iter it;
        void *slot;
        swiss_iter_init(&it, &db->shards[s].keys);
        while ((slot = swiss_iter_next(&it))) {
            db_entry_mark_saved(db_index_entry(&db->shards[s].keys, slot));
        }
        swiss_iter_done(&it);
    }
}

/* Before the db layer removes e or changes its TTL. */
static inline void snap_save(gdb *db, dbentry *e) {
    if (__builtin_expect(db_entry_unsaved(e), 0) && snap_hook) snap_hook(db, e);
}

static void vol_remove(shard *sh, dbentry *e) {
    if (VIDX(e) == DB_VIDX_NONE) return;
    assert(VIDX(e) < sh->nvol && sh->vol[VIDX(e)] == e);
    size_t n = sh->nvol - 1;
    /* nvol: written under the shard lock, read without it by the expiry
     * cycle's skip test and by db_expires(): relaxed atomics. */
    __atomic_store_n(&sh->nvol, n, __ATOMIC_RELAXED);
    dbentry *last = sh->vol[n];
    sh->vol[VIDX(e)] = last;
    vidx_set(last, VIDX(e));
    vidx_set(e, DB_VIDX_NONE);
    if (sh->nvol == 0 && sh->capvol > 64) {
        free(sh->vol);
        sh->vol = NULL;
        sh->capvol = 0;
    }
}

static int vol_add(shard *sh, dbentry *e) {
    if (VIDX(e) != DB_VIDX_NONE) return 0;
    if (sh->nvol >= DB_VIDX_NONE) return -1;
    if (sh->nvol == sh->capvol) {
        size_t cap = sh->capvol ? sh->capvol * 2 : 8;
        dbentry **nv = realloc(sh->vol, cap * sizeof(*nv));
        if (!nv) return -1;
        sh->vol = nv;
        sh->capvol = cap;
    }
    vidx_set(e, (uint32_t)sh->nvol);
    sh->vol[sh->nvol] = e;
    __atomic_store_n(&sh->nvol, sh->nvol + 1, __ATOMIC_RELAXED);
    return 0;
}

static int expiry_paused; /* atomics: set and cleared around the AOF load */
static int replica_mode;  /* atomics: this node follows a primary (below) */

void db_pause_expiry(int on) { __atomic_store_n(&expiry_paused, on, __ATOMIC_RELAXED); }

int db_is_expired(const dbentry *e, int64_t now) {
    if (!db_entry_has_ext(e)) return 0;
    int64_t when = db_entry_ext(e)->expire;
    return when != -1 && when <= now && !__atomic_load_n(&expiry_paused, __ATOMIC_RELAXED);
}

int db_time_passed(int64_t when_ms) {
    /* A replica takes the time as a TTL and waits for its primary's DEL,
     * as Redis's checkAlreadyExpired: the primary ran the command before
     * that time, and what it does with the key meanwhile (PERSIST, a
     * write) must find it here too. */
    return when_ms <= db_now_ms() && !__atomic_load_n(&expiry_paused, __ATOMIC_RELAXED) &&
           !__atomic_load_n(&replica_mode, __ATOMIC_RELAXED);
}

/* Bytes from an entry's gobj to its end, for a short key of klen bytes
 * and a room of room bytes (0: none): the value word or the room, at
 * least 8 bytes of which make the word's place when the value leaves it. */
static inline size_t entry_span(size_t klen, size_t room) {
    size_t word = sizeof(((gobj *)0)->u);
    return OBJ_HDR_BYTES + klen + (room > word ? room : word);
}

/* A far reference for e, an allocation of size bytes (db.h); 0 when out
 * of memory. */
static uint32_t far_add(db_space *sp, dbentry *e, size_t size) {
    uint32_t i;
    if (sp->far_free) {
        i = sp->far_free - 1;
        sp->far_free = (uint32_t)((uintptr_t)sp->far[i] >> 1);
    } else {
        if (sp->nfar == sp->capfar) {
            if (sp->capfar >= DB_REF_FAR / 2) return 0;
            /* By half: a shard's first entries (before its pool's first
             * slab) are a few dozen; doubling would leave half of the
             * table unused in every shard. */
            uint32_t cap = sp->capfar ? sp->capfar + sp->capfar / 2 : 16;
            dbentry **v = realloc(sp->far, cap * sizeof(*v));
            if (v) sp->far = v;
            uint16_t *z = realloc(sp->far_size, cap * sizeof(*z));
            if (z) sp->far_size = z;
            if (!v || !z) return 0;
            sp->capfar = cap;
        }
        i = sp->nfar++;
    }
    sp->far[i] = e;
    sp->far_size[i] = (uint16_t)(size < UINT16_MAX ? size : UINT16_MAX);
    return DB_REF_FAR | i;
}

/* Frees far reference ref; returns the size far_add was given (capped). */
static size_t far_del(db_space *sp, uint32_t ref) {
    uint32_t i = ref & ~DB_REF_FAR;
    assert((ref & DB_REF_FAR) && i < sp->nfar);
    sp->far[i] = (dbentry *)(uintptr_t)((uintptr_t)sp->far_free << 1 | 1u);
    sp->far_free = i + 1;
    return sp->far_size[i];
}

/* Under the address sanitizer each entry is an allocation of its own, so
 * that it sees reads and writes past an entry's end. */
#ifdef __SANITIZE_ADDRESS__
#define ENTRY_POOLED(sh, size) 0
#else
#define ENTRY_POOLED(sh, size) ((void)(sh), (size) <= SLAB_MAX)
#endif

/* A shard's pool has references below DB_REF_FAR. */
#define POOL_MAX_IDS (DB_REF_FAR >> SLAB_REF_OFF_BITS)

/* Memory for an entry of size bytes whose value is voff bytes in: a slot
 * of the shard's pool or malloc's; *ref: the entry's reference. The
 * entry's flags must get DBE_SLAB when *ref has no DB_REF_FAR. */
static char *entry_alloc(shard *sh, size_t size, size_t voff, uint32_t *ref) {
    db_space *sp = db_shard_space(sh);
    if (!sp->pool) {
        /* Made with the shard's first entry: it counts the malloc'd ones
         * for its fill floor from the start. */
        if (!(sp->pool = malloc(sizeof(slab_pool)))) return NULL;
        slab_pool_init_refs(sp->pool, POOL_MAX_IDS);
        slab_pool_set_fill(sp->pool, 90);
    }
    if (ENTRY_POOLED(sh, size)) {
        char *p = slab_pool_alloc(sp->pool, size);
        if (p) {
            *ref = slab_pool_ref(p + voff);
            return p;
        }
    }
    char *p = malloc(size);
    if (p && !(*ref = far_add(sp, (dbentry *)(void *)(p + voff), size))) {
        free(p);
        return NULL;
    }
    if (p) slab_pool_outside(sp->pool, size, malloc_usable_size(p), +1);
    return p;
}

/* Gives back e's memory (not its value's). */
static void entry_release(db_space *sp, dbentry *e) {
    if (e->val.flags & DBE_SLAB) slab_pool_free(sp->pool, db_entry_start(e));
    else free(db_entry_start(e));
}

/* e, whose reference is ref, leaves its live shard: its memory goes. */
static void entry_drop(db_space *sp, dbentry *e, uint32_t ref) {
    if (!(e->val.flags & DBE_SLAB)) {
        size_t size = far_del(sp, ref);
        slab_pool_outside(sp->pool, size, malloc_usable_size(db_entry_start(e)), -1);
    }
    entry_release(sp, e);
}

void db_index_free_entry(swiss *keys, void *slot) {
    dbentry *e = db_index_entry(keys, slot);
    obj_free(&e->val);
    entry_release(keys->ctx, e);
}

void db_index_free_space(swiss *keys) {
    db_space *sp = keys->ctx;
    if (sp->pool) {
        slab_pool_destroy(sp->pool);
        free(sp->pool);
    }
    free(sp->far);
    free(sp->far_size);
    free(sp);
    keys->ctx = NULL;
}

void db_index_free_entries(swiss *keys) {
    swiss_iter it;
    swiss_iter_init(&it, keys);
    void *slot;
    while ((slot = swiss_iter_next(&it))) db_index_free_entry(keys, slot);
    swiss_iter_done(&it);
    db_index_free_space(keys);
}

/* Takes e out of its shard (the snapshot saves it first); the caller
 * frees it. */
static void shard_detach(gdb *db, shard *sh, void *slot, dbentry *e) {
    snap_save(db, e);
    vol_remove(sh, e);
    if (__builtin_expect(slot_mode, 0)) slots_del(db, e);
    swiss_delete(&sh->keys, slot);
}

static void shard_remove(gdb *db, shard *sh, void *slot, dbentry *e) {
    uint32_t ref = slot_ref(slot);
    shard_detach(db, sh, slot, e);
    obj_free(&e->val);
    entry_drop(db_shard_space(sh), e, ref);
}

static void *find_slot(gdb *db, const char *k, size_t n, shard **shp) {
    uint64_t h = key_hash(k, n);
    keyref kr = {k, n};
    *shp = shard_for(db, h, k, n);
    return swiss_find(&(*shp)->keys, h, &kr);
}

/* Deletes an expired entry found through slot; notifies the hook. */
static void expire_now(gdb *db, shard *sh, void *slot, dbentry *e) {
    char small[128];
    size_t n = db_entry_klen(e);
    char *copy = n < sizeof(small) ? small : malloc(n + 1);
    if (copy) memcpy(copy, db_entry_key(e), n);
    shard_remove(db, sh, slot, e);
    __atomic_fetch_add(&db_stat_expired_keys, 1, __ATOMIC_RELAXED);
    if (hooks.expired && copy) hooks.expired(db, copy, n);
    if (copy != small) free(copy);
}

dbentry *db_lookup_raw(gdb *db, const char *k, size_t n) {
    shard *sh;
    void *slot = find_slot(db, k, n, &sh);
    return slot ? db_index_entry(&sh->keys, slot) : NULL;
}

/* A replica does not expire keys itself: its primary sends the DELs. A
 * logically expired key is missing to its clients but stays, and the
 * primary's own commands still see it (as Redis's expireIfNeeded). */
static _Thread_local int primary_context;

void db_set_replica_mode(int on) {
    __atomic_store_n(&replica_mode, on, __ATOMIC_RELAXED);
    if (!on) db_replica_ttl_clear(); /* a primary expires every key itself */
}

/* Set around an ordinary client's command (db.h): a TTL it gives a key on
 * a (writable) replica is listed for the replica to expire itself, and a
 * write command's lookup deletes a key whose time has passed. */
static _Thread_local int client_call;
int db_set_client_call(int how) {
    int was = client_call;
    client_call = how;
    return was;
}

/* CLIENT PAUSE (WRITE or ALL) holds expiry as a replica does: a key whose
 * time has passed is missing to reads but is not deleted until the pause
 * ends (Redis 7.0's expireIfNeeded). 0: no pause. */
static int64_t expiry_held_until;
void db_hold_expiry(int64_t until_ms) { __atomic_store_n(&expiry_held_until, until_ms, __ATOMIC_RELAXED); }

static int expiry_held(void) {
    int64_t until = __atomic_load_n(&expiry_held_until, __ATOMIC_RELAXED);
    return until && db_now_ms() < until;
}

/* Expired keys stay (replica, or a pause in force). */
static int keep_expired(void) { return __atomic_load_n(&replica_mode, __ATOMIC_RELAXED) || expiry_held(); }
void db_set_primary_context(int on) { primary_context = on; }

static dbentry *lookup_uncounted(gdb *db, const char *k, size_t n, int touch) {
    shard *sh;
    void *slot = find_slot(db, k, n, &sh);
    if (!slot) return NULL;
    dbentry *e = db_index_entry(&sh->keys, slot);
    if (db_is_expired(e, db_now_ms())) {
        if (keep_expired()) {
            int replica = __atomic_load_n(&replica_mode, __ATOMIC_RELAXED);
            /* A write on a writable replica starts the key anew, as Redis's
             * EXPIRE_FORCE_DELETE_EXPIRED: the old one must not stay
             * beside it (a pause holds writes, so it is not in force). */
            if (client_call == DB_CALL_CLIENT_WRITE && replica && !expiry_held()) {
                expire_now(db, sh, slot, e);
                return NULL;
            }
            if (!primary_context || !replica) return NULL;
        } else {
            expire_now(db, sh, slot, e);
            return NULL;
        }
    }
    if (touch) obj_touch(&e->val);
    return e;
}

void db_count_read(int hit) {
    tstat_add(hit ? TSTAT_KEYSPACE_HITS : TSTAT_KEYSPACE_MISSES, 1);
}

void db_count_read_key(gdb *db, const char *k, size_t n, int hit) {
    db_count_read(hit);
    if (!hit && hooks.missed && db_get(db->id) == db) hooks.missed(db, k, n);
}

dbentry *db_lookup(gdb *db, const char *k, size_t n) {
    dbentry *e = lookup_uncounted(db, k, n, 1);
    if (count_lookups) db_count_read_key(db, k, n, e != NULL);
    return e;
}

dbentry *db_lookup_notouch(gdb *db, const char *k, size_t n) {
    dbentry *e = lookup_uncounted(db, k, n, 0);
    if (count_lookups) db_count_read_key(db, k, n, e != NULL);
    return e;
}

dbentry *db_lookup_read(gdb *db, const char *k, size_t n) {
    dbentry *e = lookup_uncounted(db, k, n, 1);
    db_count_read_key(db, k, n, e != NULL);
    return e;
}

int db_key_exists(gdb *db, const char *k, size_t n) { return db_lookup(db, k, n) != NULL; }

int db_expire_if_needed(gdb *db, dbentry *e) {
    if (keep_expired()) return 0;
    return db_expire_listed(db, e);
}

int db_expire_listed(gdb *db, dbentry *e) {
    if (!db_is_expired(e, db_now_ms())) return 0;
    shard *sh;
    void *slot = find_slot(db, db_entry_key(e), db_entry_klen(e), &sh);
    assert(slot);
    expire_now(db, sh, slot, e);
    return 1;
}

dbentry *db_add(gdb *db, const char *k, size_t n) { return db_add_room(db, k, n, 0, NULL); }

dbentry *db_add_room(gdb *db, const char *k, size_t n, size_t room, void **roomp) {
    return db_add_ext(db, k, n, room, roomp, 0);
}

dbentry *db_add_ext(gdb *db, const char *k, size_t n, size_t room, void **roomp, int ttl) {
    uint64_t h = key_hash(k, n);
    shard *sh = shard_for(db, h, k, n);
    /* A long key's bytes follow its entry, which has no room then, and its
     * length is in a dbext, as a TTL is. */
    int shortk = db_key_short(n);
    if (!shortk) room = 0;
    size_t ext = ttl || !shortk ? sizeof(dbext) : 0;
    size_t size = ext + (shortk ? entry_span(n, room) : sizeof(dbentry) + n);
    size_t voff = ext;
    uint32_t ref;
    char *base = entry_alloc(sh, size, voff, &ref);
    if (!base) return NULL;
    dbentry *e = (dbentry *)(void *)(base + voff);
    memset(&e->val, 0, sizeof(e->val));
    e->val.type = OBJ_NONE;
    obj_init_access(&e->val);
    /* A new key is not part of a snapshot that runs: it gets the mark. */
    e->val.flags = (uint16_t)__atomic_load_n(&db_snap_mark, __ATOMIC_RELAXED);
    e->val.flags |= (uint16_t)(shortk ? n : DBE_KLEN);
    if (!(ref & DB_REF_FAR)) e->val.flags |= DBE_SLAB;
    if (ext) {
        e->val.flags |= DBE_EXT;
        *db_entry_ext(e) = (dbext){-1, DB_VIDX_NONE, (uint32_t)n};
    }
    /* With a room, the key goes where an embedded value has it: the value
     * the caller writes there next (strval_set_embedded) moves nothing; a
     * value word written instead moves it on (db_entry_set_value). */
    if (room) e->val.flags |= OBJ_EMBEDDED;
    memcpy((char *)(uintptr_t)db_entry_key(e), k, n);
    if (roomp) *roomp = room ? (void *)obj_room(&e->val) : NULL;
    void *slot = swiss_insert(&sh->keys, h);
    if (!slot) {
        entry_drop(db_shard_space(sh), e, ref);
        return NULL;
    }
    slot_set_ref(slot, ref);
    if (__builtin_expect(slot_mode, 0) && slots_add(db, e, h, key_slot(k, n)) != 0) {
        swiss_delete(&sh->keys, slot);
        entry_drop(db_shard_space(sh), e, ref);
        return NULL;
    }
    /* Redis's "new" keyspace event (notify-keyspace-events n). */
    if (hooks.added && db_get(db->id) == db) hooks.added(db, k, n);
    return e;
}

size_t db_entry_size(const dbentry *e) {
    void *base = db_entry_start((dbentry *)e);
    return e->val.flags & DBE_SLAB ? slab_size(base) : malloc_usable_size(base);
}

void db_delete_entry(gdb *db, dbentry *e) {
    shard *sh;
    void *slot = find_slot(db, db_entry_key(e), db_entry_klen(e), &sh);
    assert(slot && db_index_entry(&sh->keys, slot) == e);
    shard_remove(db, sh, slot, e);
}

/* db_delete and db_unlink: lazy hands a large value to the lazy-free
 * thread. */
static int remove_key(gdb *db, const char *k, size_t n, int lazy) {
    shard *sh;
    void *slot = find_slot(db, k, n, &sh);
    if (!slot) return 0;
    dbentry *e = db_index_entry(&sh->keys, slot);
    if (db_is_expired(e, db_now_ms()) && !keep_expired()) {
        expire_now(db, sh, slot, e);
        return 0;
    }
    uint32_t ref = slot_ref(slot);
    shard_detach(db, sh, slot, e);
    if (lazy && lazyfree_worth(e)) lazyfree_value(&e->val);
    else obj_free(&e->val);
    entry_drop(db_shard_space(sh), e, ref);
    return 1;
}

int db_delete(gdb *db, const char *k, size_t n) { return remove_key(db, k, n, 0); }

int db_unlink(gdb *db, const char *k, size_t n) { return remove_key(db, k, n, 1); }

void db_replace_value(dbentry *e, const gobj *v) {
    obj_free(&e->val);
    db_entry_set_value(e, v);
}

void db_entry_set_value(dbentry *e, const gobj *v) {
    assert(e->val.type == OBJ_NONE);
    obj_room_leave(&e->val); /* u is written: the key goes past it */
    uint32_t lru = e->val.lru;
    uint16_t flags = e->val.flags;
    e->val = *v;
    e->val.lru = lru;
    e->val.flags = flags;
}

/* The key at index slot, hashed h, moved from e to ne (reference ref):
 * the index, the cluster slot's key set and the memcache metadata name ne
 * now. e is still readable; the caller frees it. */
static void entry_moved(gdb *db, void *slot, uint32_t ref, uint64_t h, dbentry *e, dbentry *ne) {
    slot_set_ref(slot, ref);
    if (__builtin_expect(slot_mode, 0)) {
        swiss **set;
        memcpy(slots_find(db, e, h, &set), &ne, sizeof(ne));
    }
    mcmeta_moved(db, e, ne);
}

/* e gets a dbext: the entry moves into a new allocation with room for one
 * in front (its bytes copied whole, an embedded value with them), and
 * what points at it (the shard's index, the slot's set, an embedded
 * value's pointer) is pointed at the copy. NULL when out of memory. */
static dbentry *entry_add_ext(gdb *db, shard *sh, uint64_t h, dbentry *e) {
    size_t klen = db_entry_klen(e);
    assert(db_key_short(klen));
    assert(!(e->val.flags & OBJ_EMBEDDED) || strval_is_embedded(&e->val)); /* not a room still to be filled */
    /* The gobj, the key and an embedded value's room (an unused one stays
     * behind). */
    size_t size = entry_span(klen, strval_embedded_room(&e->val));
    uint32_t ref;
    char *base = entry_alloc(sh, sizeof(dbext) + size, sizeof(dbext), &ref);
    if (!base) return NULL;
    memcpy(base + sizeof(dbext), e, size);
    dbentry *ne = (dbentry *)(void *)(base + sizeof(dbext));
    ne->val.flags = (uint16_t)((ne->val.flags & ~DBE_SLAB) | DBE_EXT | (ref & DB_REF_FAR ? 0 : DBE_SLAB));
    *db_entry_ext(ne) = (dbext){-1, DB_VIDX_NONE, (uint32_t)klen};
    keyref kr = {db_entry_key(e), klen};
    void *slot = swiss_find(&sh->keys, h, &kr);
    assert(slot && db_index_entry(&sh->keys, slot) == e);
    uint32_t old = slot_ref(slot);
    entry_moved(db, slot, ref, h, e, ne);
    entry_drop(db_shard_space(sh), e, old);
    return ne;
}

dbentry *db_set_expire(gdb *db, dbentry *e, int64_t when) {
    size_t klen = db_entry_klen(e);
    uint64_t h = hash_bytes(db_entry_key(e), klen);
    shard *sh = shard_for(db, h, db_entry_key(e), klen);
    snap_save(db, e);
    if (!db_entry_has_ext(e) && !(e = entry_add_ext(db, sh, h, e))) abort();
    db_entry_ext(e)->expire = when;
    if (vol_add(sh, e) != 0) abort();
    if (client_call && __atomic_load_n(&replica_mode, __ATOMIC_RELAXED)) db_replica_ttl_note(db, db_entry_key(e), klen);
    return e;
}

void db_persist(gdb *db, dbentry *e) {
    if (!db_entry_has_ext(e)) return;
    size_t klen = db_entry_klen(e);
    shard *sh = shard_for(db, hash_bytes(db_entry_key(e), klen), db_entry_key(e), klen);
    snap_save(db, e);
    vol_remove(sh, e);
    db_entry_ext(e)->expire = -1;
}

/* e's value was just replaced: its TTL goes unless how keeps it. */
static void ttl_after_store(gdb *db, dbentry *e, int how) {
    if (!(how & DB_KEEPTTL) && db_entry_expire(e) != -1) db_persist(db, e);
}

dbentry *db_install(gdb *db, dbentry *e, const char *k, size_t n, gobj *v, int how) {
    if (e) {
        db_replace_value(e, v);
        ttl_after_store(db, e, how);
        return e;
    }
    if (!(e = db_add_ext(db, k, n, 0, NULL, how & DB_TTL))) {
        strval_free(v);
        return NULL;
    }
    db_entry_set_value(e, v);
    return e;
}

dbentry *db_set_string(gdb *db, dbentry *e, const char *k, size_t n, const char *p, size_t len, int how) {
    /* A small value is embedded in its entry: written over the old one
     * when it fits there, or in a new key's entry. */
    if (e && strval_set_in_place(&e->val, p, len)) {
        ttl_after_store(db, e, how);
        return e;
    }
    size_t room;
    if (!e && db_key_short(n) && (room = strval_embed_size(p, len)) != 0) {
        void *at;
        if (!(e = db_add_ext(db, k, n, room, &at, how & DB_TTL))) return NULL;
        strval_set_embedded(&e->val, at, p, len);
        return e;
    }
    gobj v = {0};
    if (strval_set(&v, p, len) != 0) return NULL;
    return db_install(db, e, k, n, &v, how);
}

size_t db_size(gdb *db) {
    size_t n = 0;
    for (int s = 0; s < DB_NSHARDS; s++) n += swiss_size(&db->shards[s].keys);
    return n;
}

size_t db_expires(gdb *db) {
    size_t n = 0;
    for (int s = 0; s < DB_NSHARDS; s++) n += __atomic_load_n(&db->shards[s].nvol, __ATOMIC_RELAXED);
    return n;
}

/* db_flush and db_flush_async: async moves each non-empty shard's index
 * to the lazy-free thread whole and gives the shard an empty one. */
static void flush(gdb *db, int async) {
    /* A live database (not a detached one of a load): a snapshot that runs
     * is completed first (simpler than saving each entry as it goes, and
     * no slower: the whole database would be written). */
    if (db_snap_running() && snap_finish && db->id >= 0 && db->id < ndbs && dbs[db->id] == db) snap_finish();
    slots_free(db);
    for (int s = 0; s < DB_NSHARDS; s++) {
        shard *sh = &db->shards[s];
        if (async && swiss_size(&sh->keys)) {
            lazyfree_index(&sh->keys, sh->vol);
        } else {
            db_index_free_entries(&sh->keys);
            swiss_free(&sh->keys);
            free(sh->vol);
        }
        shard_index_init(sh, (unsigned)s);
        sh->vol = NULL;
        __atomic_store_n(&sh->nvol, 0, __ATOMIC_RELAXED);
        sh->capvol = 0;
    }
}

void db_flush(gdb *db) { flush(db, 0); }

gdb *db_detached_new(int id) {
    gdb *g = calloc(1, sizeof(gdb));
    if (!g) return NULL;
    g->id = id;
    for (int s = 0; s < DB_NSHARDS; s++) {
        pthread_mutex_init(&g->shards[s].lock, NULL);
        shard_index_init(&g->shards[s], (unsigned)s);
    }
    return g;
}

void db_detached_free(gdb *g) {
    if (!g) return;
    slots_free(g);
    for (int s = 0; s < DB_NSHARDS; s++) {
        shard *sh = &g->shards[s];
        db_index_free_entries(&sh->keys);
        swiss_free(&sh->keys);
        free(sh->vol);
        pthread_mutex_destroy(&sh->lock);
    }
    free(g);
}

void db_exchange(gdb *live, gdb *st) {
    for (int s = 0; s < DB_NSHARDS; s++) {
        shard *a = &live->shards[s], *b = &st->shards[s];
        /* The index's ctx, its db_space, goes with it. */
        swiss tk = a->keys;
        a->keys = b->keys;
        b->keys = tk;
        dbentry **tv = a->vol;
        a->vol = b->vol;
        b->vol = tv;
        size_t tn = a->nvol, tc = a->capvol;
        a->nvol = b->nvol;
        a->capvol = b->capvol;
        b->nvol = tn;
        b->capvol = tc;
    }
    db_slots_exchange(live, st);
    live->avg_ttl = 0;
    live->expire_cursor = 0;
}

void db_flush_async(gdb *db) { flush(db, 1); }

dbentry *db_random_key(gdb *db) {
    size_t total = db_size(db);
    for (int tries = 0; total && tries < 100; tries++) {
        /* Pick a shard weighted by its size, then a uniform slot in it. */
        size_t r = (size_t)rand_below(total);
        int s = 0;
        while (r >= swiss_size(&db->shards[s].keys)) r -= swiss_size(&db->shards[s++].keys);
        shard *sh = &db->shards[s];
        void *slot = swiss_random(&sh->keys, rand_next);
        if (!slot) continue;
        dbentry *e = db_index_entry(&sh->keys, slot);
        if (db_is_expired(e, db_now_ms()) && !keep_expired()) {
            /* Like Redis: a dataset of only volatile keys could loop; after
             * a few tries give back an expired key's neighbour instead. */
            if (db_expires(db) == total && tries > 50) return e;
            expire_now(db, sh, slot, e);
            total = db_size(db);
            continue;
        }
        return e;
    }
    return NULL;
}

typedef struct scan_ctx {
    db_scan_fn *fn;
    void *arg;
    const swiss *keys;
} scan_ctx;

static void scan_tramp(void *arg, void *slot) {
    scan_ctx *sc = arg;
    sc->fn(sc->arg, db_index_entry(sc->keys, slot));
}

uint64_t db_scan(gdb *db, uint64_t cursor, db_scan_fn *fn, void *arg) {
    unsigned s = (unsigned)(cursor & (DB_NSHARDS - 1));
    uint64_t v = cursor >> DB_SHARD_BITS;
    scan_ctx sc = {fn, arg, &db->shards[s].keys};
    db_lock_shard(db, s);
    v = swiss_scan(&db->shards[s].keys, v, scan_tramp, &sc);
    db_unlock_shard(db, s);
    if (v == 0) {
        if (++s == DB_NSHARDS) return 0;
        return s;
    }
    return (v << DB_SHARD_BITS) | s;
}

static long long mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* What an active expiry cycle counts: keys expired and sampled, and the
 * remaining TTLs of the live keys sampled (for avg_ttl). */
typedef struct expire_tally {
    size_t expired, sampled;
    double ttl_sum;
    long long ttl_n;
} expire_tally;

/* Up to 16 samples of TTL keys of shard s, while more of a sample than
 * Redis's acceptable share was expired: samples of 20 keys and 10 %, each
 * step of effort (0..9) 5 keys more and a point less, as Redis's
 * activeExpireCycle. 1 when all 16 were taken (the shard may hold more
 * expired keys). */
static int expire_shard(gdb *db, int s, int effort, expire_tally *t) {
    const int per_sample = 20 + 5 * effort, stale_pct = 10 - effort;
    shard *sh = &db->shards[s];
    if (!__atomic_load_n(&sh->nvol, __ATOMIC_RELAXED)) return 0; /* unlocked peek */
    db_lock_shard(db, (unsigned)s);
    int round = 0;
    for (; round < 16 && sh->nvol; round++) {
        int64_t now = db_now_ms();
        int sampled = 0, hit = 0;
        for (; sampled < per_sample && sh->nvol; sampled++) {
            dbentry *e = sh->vol[rand_below(sh->nvol)];
            if (db_is_expired(e, now)) {
                keyref kr = {db_entry_key(e), db_entry_klen(e)};
                expire_now(db, sh, swiss_find(&sh->keys, entry_hash(e), &kr), e);
                hit++;
            } else {
                t->ttl_sum += (double)db_entry_expire(e) - (double)now;
                t->ttl_n++;
            }
        }
        t->expired += (size_t)hit;
        t->sampled += (size_t)sampled;
        if (sampled && hit * 100 / sampled <= stale_pct) break;
    }
    db_unlock_shard(db, (unsigned)s);
    return round == 16;
}

/* Each shard in turn (expire_shard), within the time budget; when some
 * shard took all its samples, the shards are passed over again while the
 * budget lasts, so the rate of removal follows the budget (as Redis's
 * does) rather than a fixed number of samples per cycle, and no shard is
 * held for more than 16 samples at a time. */
size_t db_active_expire_cycle(long long budget_us, int effort, long long *took_us) {
    if (took_us) *took_us = 0;
    if (!__atomic_load_n(&db_active_expire_enabled, __ATOMIC_RELAXED)) return 0;
    if (expiry_held()) return 0;
    if (__atomic_load_n(&replica_mode, __ATOMIC_RELAXED)) {
        long long t0 = mono_us();
        size_t n = db_replica_ttl_cycle(budget_us);
        if (took_us) *took_us = mono_us() - t0;
        return n;
    }
    size_t expired = 0, sampled_all = 0;
    int capped = 0;
    /* Where the last cycle ran out of time (cron thread only): the next one
     * starts there, so no database or shard waits behind the others. */
    static int first_db, first_shard;
    db_rdlock_keyspace();
    long long start = mono_us();
    int d0 = first_db < ndbs ? first_db : 0;
    for (int i = 0; i < ndbs; i++) {
        int d = (d0 + i) % ndbs;
        gdb *db = dbs[d];
        expire_tally t = {0, 0, 0, 0};
        for (int hot = 1; hot && !capped;) {
            hot = 0;
            for (int j = 0; j < DB_NSHARDS && !capped; j++) {
                int s = (first_shard + j) % DB_NSHARDS;
                hot |= expire_shard(db, s, effort, &t);
                if ((capped = mono_us() - start > budget_us)) {
                    first_db = d;
                    first_shard = (s + 1) % DB_NSHARDS;
                }
            }
        }
        expired += t.expired;
        sampled_all += t.sampled;
        int64_t prev = __atomic_load_n(&db->avg_ttl, __ATOMIC_RELAXED);
        if (t.ttl_n) {
            double a = t.ttl_sum / (double)t.ttl_n;
            int64_t avg = a > 9e18 ? (int64_t)9e18 : (int64_t)a;
            __atomic_store_n(&db->avg_ttl, prev ? (prev / 50) * 49 + avg / 50 : avg, __ATOMIC_RELAXED);
        } else if (!db_expires(db)) {
            __atomic_store_n(&db->avg_ttl, 0, __ATOMIC_RELAXED);
        }
    }
    db_unlock_keyspace();
    /* Redis's expired_stale_perc: a moving average (weight 1/20 per cycle)
     * of the share of sampled keys found expired. */
    double cur = sampled_all ? (double)expired / (double)sampled_all : 0, old;
    __atomic_load(&db_stat_expired_stale_perc, &old, __ATOMIC_RELAXED);
    double avg = cur * 0.05 + old * 0.95;
    __atomic_store(&db_stat_expired_stale_perc, &avg, __ATOMIC_RELAXED);
    long long took = mono_us() - start;
    if (took_us) *took_us = took;
    __atomic_fetch_add(&db_stat_expire_cycle_us, (uint64_t)took, __ATOMIC_RELAXED);
    if (capped) __atomic_fetch_add(&db_stat_expire_time_cap, 1, __ATOMIC_RELAXED);
    return expired;
}

/* The cron's share of the key indexes' resizes: 256 groups of each
 * resizing shard in turn, for at most DB_REHASH_BUDGET_US per call (Redis
 * gives its incremental rehash 1 ms per cron tick), resumed at the next
 * shard by the next call. Without a budget, the 64 shards that resize
 * together cost the cron thread 2-4 ms at once. */
#define DB_REHASH_BUDGET_US 1000

/* Collections whose index resize a write started (db_note_resize): a
 * keylist, each listed once however many of its index parts start
 * resizing. resizing_lock is a leaf, taken under a shard lock; nresizing
 * (the list's length) is read without it by the cron. */
static keylist resizing;
static size_t nresizing;
static pthread_mutex_t resizing_lock = PTHREAD_MUTEX_INITIALIZER;

void db_note_resize(gdb *db, const char *k, size_t n) {
    pthread_mutex_lock(&resizing_lock);
    keylist_put_name(&resizing, db->id, k, n);
    __atomic_store_n(&nresizing, resizing.n, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&resizing_lock);
}

/* Steps of 64 groups (~900 entries, ~0.1 ms) of each listed collection in
 * turn (keyspace read lock held) while the cycle's budget lasts, so a
 * shard is held for at most about the budget. A key that is gone, or
 * whose value has nothing left to move, leaves the list; the ones not
 * reached stay, in order, ahead of those listed meanwhile. The list is
 * taken whole: the shard locks come before resizing_lock. */
static void rehash_listed(uint64_t t0) {
    keylist work;
    pthread_mutex_lock(&resizing_lock);
    keylist_take(&resizing, &work);
    __atomic_store_n(&nresizing, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&resizing_lock);
    size_t done = 0; /* work.v[0..done) visited */
    int keep_last = 0;
    while (done < work.n && monotime_us() - t0 < DB_REHASH_BUDGET_US) {
        keyname *r = &work.v[done++];
        gdb *db = r->dbid < ndbs ? dbs[r->dbid] : NULL;
        keep_last = 0;
        if (db) {
            unsigned s = db_shard_of(r->k, r->n);
            db_lock_shard(db, s);
            dbentry *e = db_lookup_raw(db, r->k, r->n);
            do keep_last = e && obj_rehash_step(&e->val, 64);
            while (keep_last && monotime_us() - t0 < DB_REHASH_BUDGET_US);
            db_unlock_shard(db, s);
        }
        if (!keep_last) free(r->k);
    }
    size_t from = keep_last ? done - 1 : done; /* the one the budget ran out in stays */
    if (from) memmove(work.v, work.v + from, (work.n - from) * sizeof(*work.v));
    pthread_mutex_lock(&resizing_lock);
    keylist_give_back(&resizing, work.v, work.n - from, work.cap);
    __atomic_store_n(&nresizing, resizing.n, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&resizing_lock);
}

void db_rehash_cycle(void) {
    static unsigned cursor; /* cron thread only */
    unsigned total = (unsigned)ndbs * DB_NSHARDS;
    uint64_t t0 = monotime_us();
    db_rdlock_keyspace();
    for (unsigned i = 0; i < total; i++) {
        unsigned at = (cursor + i) % total;
        gdb *db = dbs[at / DB_NSHARDS];
        unsigned s = at % DB_NSHARDS;
        db_lock_shard(db, s);
        int stepped = swiss_is_rehashing(&db->shards[s].keys);
        if (stepped) swiss_rehash_step(&db->shards[s].keys, 256);
        db_unlock_shard(db, s);
        if (stepped && monotime_us() - t0 >= DB_REHASH_BUDGET_US) {
            cursor = (at + 1) % total;
            break;
        }
    }
    if (__atomic_load_n(&nresizing, __ATOMIC_RELAXED)) rehash_listed(t0);
    db_unlock_keyspace();
}

/* ---- the entry pools' compaction (db/defrag.c) ---- */

/* db.h. What names the entry: as entry_add_ext re-points it. */
int db_entry_evacuate(gdb *db, shard *sh, void *slot) {
    dbentry *e = db_index_entry(&sh->keys, slot);
    db_space *sp = db_shard_space(sh);
    char *base = db_entry_start(e);
    size_t size = slab_size(base), voff = (size_t)((char *)e - base);
    char *nb = slab_pool_alloc(sp->pool, size);
    if (!nb) return -1;
    assert(!slab_pool_marked(nb));
    memcpy(nb, base, size);
    dbentry *ne = (dbentry *)(void *)(nb + voff);
    if (VIDX(ne) != DB_VIDX_NONE) {
        assert(sh->vol[VIDX(ne)] == e);
        sh->vol[VIDX(ne)] = ne;
    }
    entry_moved(db, slot, slab_pool_ref(ne), key_hash(db_entry_key(e), db_entry_klen(e)), e, ne);
    slab_pool_free(sp->pool, base);
    return 0;
}

