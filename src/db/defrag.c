/* defrag.c -- the shards' entry pools compact themselves (db.h,
 * db_defrag_cycle).
 *
 * One pass at a time (cron thread only): the shard whose pool had slabs
 * marked, found again each call by its db and index and checked by its
 * space and pool (a FLUSHALL or a replica's full sync replaces them: the
 * pass is dropped with them; a SWAPDB moves the db, which the pass
 * follows). A pass is a swiss_scan of the shard's index from cursor 0 to
 * 0: every entry present throughout is seen once, so every entry that was in a marked slab when the pass began
 * has moved (or gone) at its end; new entries never go to a marked slab.
 * The slabs still marked then (a move found no memory) take slots again. */
#include <stdint.h>

#include "db/db.h"
#include "mem/slab.h"
#include "util/monotime.h"

#define DEFRAG_BUDGET_US 1000
static unsigned defrag_budget_us = DEFRAG_BUDGET_US; /* relaxed atomic: DEBUG DEFRAG-BUDGET */
#define DEFRAG_LOOK_SHARDS 64
/* A pool is looked at when its slabs' free bytes are at least this many
 * and at least DEFRAG_SLACK_PCT % of its slabs. */
#define DEFRAG_MIN_SLACK ((size_t)64 << 10)
#define DEFRAG_SLACK_PCT 30

static struct {
    gdb *db;
    unsigned shard;
    db_space *sp; /* NULL: no pass */
    slab_pool *pool;
    uint64_t cursor, started_us;
    unsigned next_look;
} defrag;
static uint64_t defrag_hits, defrag_misses, defrag_total_us; /* relaxed atomics: INFO reads them */
static uint64_t defrag_since_us;                               /* the running pass's start, 0: none */

typedef struct defrag_ctx {
    gdb *db;
    shard *sh;
    uint64_t hits, misses;
} defrag_ctx;

static void defrag_visit(void *arg, void *slot) {
    defrag_ctx *x = arg;
    dbentry *e = db_index_entry(&x->sh->keys, slot);
    if ((e->val.flags & DBE_SLAB) && slab_pool_marked(db_entry_start(e)) && db_entry_evacuate(x->db, x->sh, slot) == 0)
        x->hits++;
    else
        x->misses++;
}

/* Whether sp's pool is worth a look (its shard locked). */
static int defrag_wanted(db_space *sp) {
    if (!sp || !sp->pool || !sp->pool->max_ids) return 0;
    size_t slack = slab_pool_slack(sp->pool), held = (size_t)sp->pool->nslabs * SLAB_BYTES;
    if (slack < DEFRAG_MIN_SLACK || slack * 100 < DEFRAG_SLACK_PCT * held) return 0;
    /* Looked at before at about this size and found nothing to move. */
    size_t live = sp->pool->live_bytes, was = sp->defrag_live;
    return !was || live < was - was / 8 || live > was + was / 8;
}

static void defrag_end(void) {
    __atomic_add_fetch(&defrag_total_us, monotime_us() - defrag.started_us, __ATOMIC_RELAXED);
    __atomic_store_n(&defrag_since_us, 0, __ATOMIC_RELAXED);
    defrag.sp = NULL;
}

/* The shard of the running pass, locked; NULL (and the pass dropped) when
 * its space left the keyspace. (A new space and pool at the old addresses
 * would be harmless: a new pool has no marked slab.) */
static shard *defrag_shard(void) {
    db_lock_shard(defrag.db, defrag.shard);
    db_space *sp = db_shard_space(&defrag.db->shards[defrag.shard]);
    if (sp && sp == defrag.sp && sp->pool == defrag.pool) return &defrag.db->shards[defrag.shard];
    db_unlock_shard(defrag.db, defrag.shard);
    defrag_end();
    return NULL;
}

/* A shard to evacuate, locked, its pass started; NULL when none. */
static shard *defrag_start(void) {
    unsigned total = (unsigned)db_count() * DB_NSHARDS;
    for (unsigned i = 0; i < DEFRAG_LOOK_SHARDS && i < total; i++) {
        unsigned at = (defrag.next_look + i) % total;
        gdb *db = db_get((int)(at / DB_NSHARDS));
        unsigned s = at % DB_NSHARDS;
        db_lock_shard(db, s);
        db_space *sp = db_shard_space(&db->shards[s]);
        if (defrag_wanted(sp)) {
            if (slab_pool_evacuate(sp->pool)) {
                defrag.next_look = (at + 1) % total;
                defrag.db = db;
                defrag.shard = s;
                defrag.sp = sp;
                defrag.pool = sp->pool;
                defrag.cursor = 0;
                defrag.started_us = monotime_us();
                __atomic_store_n(&defrag_since_us, defrag.started_us, __ATOMIC_RELAXED);
                return &db->shards[s];
            }
            sp->defrag_live = sp->pool->live_bytes ? sp->pool->live_bytes : 1;
        }
        db_unlock_shard(db, s);
    }
    defrag.next_look = (defrag.next_look + DEFRAG_LOOK_SHARDS) % total;
    return NULL;
}

void db_defrag_budget_set(unsigned us) { __atomic_store_n(&defrag_budget_us, us, __ATOMIC_RELAXED); }

void db_defrag_cycle(void) {
    uint64_t t0 = monotime_us(), budget = __atomic_load_n(&defrag_budget_us, __ATOMIC_RELAXED);
    db_rdlock_keyspace();
    /* Passes that end early leave the rest of the budget to the next. */
    shard *sh;
    while ((sh = defrag.sp ? defrag_shard() : defrag_start())) {
        defrag_ctx x = {defrag.db, sh, 0, 0};
        do {
            defrag.cursor = swiss_scan(&sh->keys, defrag.cursor, defrag_visit, &x);
        } while (defrag.cursor && monotime_us() - t0 < budget);
        __atomic_add_fetch(&defrag_hits, x.hits, __ATOMIC_RELAXED);
        __atomic_add_fetch(&defrag_misses, x.misses, __ATOMIC_RELAXED);
        int done = !defrag.cursor;
        if (done) {
            slab_pool_evacuate_end(defrag.sp->pool);
            defrag_end();
        }
        db_unlock_shard(defrag.db, defrag.shard);
        if (!done || monotime_us() - t0 >= budget) break;
    }
    db_unlock_keyspace();
}

void db_defrag_stop(void) {
    if (!defrag.sp) return;
    db_rdlock_keyspace();
    shard *sh = defrag_shard();
    if (sh) { /* its slabs still marked take slots again */
        slab_pool_evacuate_end(defrag.sp->pool);
        defrag_end();
        db_unlock_shard(defrag.db, defrag.shard);
    }
    db_unlock_keyspace();
}

size_t db_entry_slab_bytes(void) { return slab_ref_pool_bytes(); }

void db_defrag_stats_get(db_defrag_stats *st) {
    uint64_t since = __atomic_load_n(&defrag_since_us, __ATOMIC_RELAXED), now = monotime_us();
    uint64_t cur = since && now > since ? now - since : 0;
    st->hits = __atomic_load_n(&defrag_hits, __ATOMIC_RELAXED);
    st->misses = __atomic_load_n(&defrag_misses, __ATOMIC_RELAXED);
    st->total_ms = (__atomic_load_n(&defrag_total_us, __ATOMIC_RELAXED) + cur) / 1000;
    st->current_ms = cur / 1000;
    st->running = since != 0;
}

void db_defrag_stats_reset(void) {
    __atomic_store_n(&defrag_hits, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&defrag_misses, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&defrag_total_us, 0, __ATOMIC_RELAXED);
}
