/* evict.c -- maxmemory eviction, as Redis 7.0 approximates it.
 *
 * Before every command (when maxmemory is set) used memory is compared with
 * the limit. Over it, keys are evicted until the estimated bytes freed cover
 * the excess:
 *   - *-random: a random key (volatile-random: one with a TTL), taking the
 *     databases in turn;
 *   - *-lru, *-lfu, volatile-ttl: maxmemory-samples keys are sampled from
 *     every database (from the keys with a TTL for volatile-*) and scored
 *     (idle time; 255 - the LFU counter; time to expiry, inverted), the best
 *     candidates are kept in a pool of 16 across rounds, and the best one
 *     still present is evicted.
 * The same policies apply when the object store is full (--memory and
 * --sub-memory heads, or the --small-memory pools): before a denyoom
 * command, evict_store_pressure() evicts, by the policy, string keys whose
 * storage is the exhausted kind until room is back (noeviction: the write
 * fails with -OOM and changes nothing).
 * An evicted key is deleted like DEL: WATCH sees it, "evicted" keyspace
 * events fire, INFO evicted_keys counts it. With noeviction, or when the
 * policy finds nothing to evict, the caller refuses denyoom commands.
 *
 * Measuring memory is expensive (a jemalloc stats refresh), so the value
 * is cached for a millisecond and the eviction loop counts what it frees
 * from the objects' sizes; it is measured again at the end.
 *
 * Locking: one thread evicts at a time (others go on, as Redis lets
 * commands run while eviction is "in progress"); it holds the keyspace
 * read lock and one shard lock at a time (docs/locking.md). The candidate
 * pool belongs to the evicting thread. */
#include "cmd/evict.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/command.h"
#include "cmd/families.h"
#include "db/db.h"
#include "db/mcmeta.h"
#include "db/memusage.h"
#include "db/strval.h"
#include "persist/aof.h"
#include "mem/objstore.h"
#include "util/rand.h"
#include "base/config.h"
#include "base/log.h"
#include "base/process.h"
#include "cmd/multi.h"
#include "cmd/repl/repl.h"
#include "cmd/tracking.h"
#include "cmd/propagate.h"
#include "session/session.h"

/* Positions in config.c's maxmemory-policy list. */
enum {
    POL_VOLATILE_LRU = 0,
    POL_VOLATILE_LFU = 1,
    POL_VOLATILE_RANDOM = 2,
    POL_VOLATILE_TTL = 3,
    POL_ALLKEYS_LRU = 4,
    POL_ALLKEYS_LFU = 5,
    POL_ALLKEYS_RANDOM = 6,
    POL_NOEVICTION = 7,
};

#define POOL_SIZE 16
#define REFRESH_US 1000
#define EVICT_TIME_CAP_US 10000

uint64_t evict_stat_evicted_keys;

static int64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- Measuring ------------------------------------------------------------------ */

static uint64_t measure(void) { return memusage_used(); }

/* Used memory as eviction counts it: without the AOF buffers, as Redis
 * (mem_not_counted_for_evict). */
static uint64_t counted(uint64_t used) {
    uint64_t nc = aof_buffer_bytes();
    return used > nc ? used - nc : 0;
}

static uint64_t cached_used;
static int64_t cached_at;
static int evict_again; /* atomics: evict_cron evicts on the next tick */

static uint64_t used_memory(int fresh) {
    int64_t now = mono_us();
    int64_t at = __atomic_load_n(&cached_at, __ATOMIC_ACQUIRE);
    if (!fresh && now - at < REFRESH_US) return __atomic_load_n(&cached_used, __ATOMIC_RELAXED);
    /* One refresher at a time; the others use the value being replaced. */
    if (!fresh && !__atomic_compare_exchange_n(&cached_at, &at, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return __atomic_load_n(&cached_used, __ATOMIC_RELAXED);
    uint64_t u = measure();
    __atomic_store_n(&cached_used, u, __ATOMIC_RELAXED);
    __atomic_store_n(&cached_at, mono_us(), __ATOMIC_RELEASE);
    return u;
}

uint64_t evict_used_memory(void) { return used_memory(0); }

/* ---- Candidates --------------------------------------------------------------------- */

typedef struct cand {
    uint64_t score;   /* higher evicts first */
    int dbid;
    char *key;
    size_t klen;
} cand;

static cand pool[POOL_SIZE];   /* ascending score; owned by the evicting thread */
static int npool;

static void pool_insert(uint64_t score, int dbid, const char *k, size_t n) {
    for (int i = 0; i < npool; i++)
        if (pool[i].dbid == dbid && pool[i].klen == n && memcmp(pool[i].key, k, n) == 0) return;
    if (npool == POOL_SIZE) {
        if (score <= pool[0].score) return;
        free(pool[0].key);
        memmove(pool, pool + 1, sizeof(cand) * (POOL_SIZE - 1));
        npool--;
    }
    int at = npool;
    while (at > 0 && pool[at - 1].score > score) at--;
    memmove(pool + at + 1, pool + at, sizeof(cand) * (size_t)(npool - at));
    pool[at].score = score;
    pool[at].dbid = dbid;
    pool[at].key = malloc(n + 1);
    if (!pool[at].key) abort();
    memcpy(pool[at].key, k, n);
    pool[at].klen = n;
    npool++;
}

/* While the store is under pressure: only keys whose storage is the
 * exhausted kind are candidates (0: any key). */
static int pressure_bits;
static int candidate(const dbentry *e) { return !pressure_bits || strval_pressure_relieves(&e->val, pressure_bits); }

static uint64_t score_of(int policy, const dbentry *e) {
    switch (policy) {
    case POL_VOLATILE_TTL: return UINT64_MAX - (uint64_t)db_entry_expire(e);
    case POL_VOLATILE_LFU:
    case POL_ALLKEYS_LFU: return 255 - obj_lfu_freq(&e->val);
    default: {
        /* Seconds clock of the last access (wraps like Redis's LRU clock). */
        uint32_t now = obj_clock(), t = e->val.lru;
        return now >= t ? (uint64_t)(now - t) : (uint64_t)(UINT32_MAX - t) + now;
    }
    }
}

static int volatile_policy(int p) { return p <= POL_VOLATILE_TTL; }

/* A random entry of a random non-empty shard (one with TTL keys when
 * volatile), under that shard's lock; the lock is kept when found. */
static dbentry *random_entry_locked(gdb *db, int vol, unsigned *shard_out) {
    for (int tries = 0; tries < DB_NSHARDS * 2; tries++) {
        unsigned s = (unsigned)(tries < DB_NSHARDS ? rand_below(DB_NSHARDS) : (unsigned)(tries - DB_NSHARDS));
        shard *sh = &db->shards[s];
        db_lock_shard(db, s);
        dbentry *e = NULL;
        if (vol) {
            if (sh->nvol) e = sh->vol[rand_below(sh->nvol)];
        } else {
            void *slot = swiss_random(&sh->keys, rand_next);
            if (slot) e = db_index_entry(&sh->keys, slot);
        }
        if (e) {
            *shard_out = s;
            return e;
        }
        db_unlock_shard(db, s);
    }
    return NULL;
}

/* Databases found empty (or without TTL keys, for volatile policies)
 * during the current eviction run: not searched again until the next. */
static uint64_t empty_dbs;

static void pool_populate(int policy, int samples) {
    int vol = volatile_policy(policy);
    for (int d = 0; d < db_count(); d++) {
        if (empty_dbs & (1ULL << d)) continue;
        gdb *db = db_get(d);
        /* Filtered sampling draws more to find its samples. */
        int found = 0;
        for (int i = 0; i < (pressure_bits ? samples * 16 : samples) && found < samples; i++) {
            unsigned s;
            dbentry *e = random_entry_locked(db, vol, &s);
            if (!e) {
                if (i == 0) empty_dbs |= 1ULL << d;
                break;
            }
            if (candidate(e)) {
                pool_insert(score_of(policy, e), d, db_entry_key(e), db_entry_klen(e));
                found++;
            }
            db_unlock_shard(db, s);
        }
    }
}


/* Delete e (its shard locked) as an eviction; returns the bytes it held. */
static size_t evict_entry(gdb *db, dbentry *e) {
    size_t n = db_entry_klen(e);
    char small[256];
    char *key = n < sizeof(small) ? small : malloc(n + 1);
    if (!key) abort();
    memcpy(key, db_entry_key(e), n);
    size_t bytes = obj_mem_usage(&e->val) + db_entry_size(e) + sizeof(dbentry *) + 1;
    db_delete_entry(db, e);
    mcmeta_forget(db, key, n);
    multi_touch(db->id, key, n);
    if (tracking_active()) tracking_key_modified(NULL, key, n);
    prop_deletion(db->id, PROP_DEL_EVICTED, key, n);
    cmd_notify(NULL, NOTIFY_EVICTED, "evicted", db, key, n);
    __atomic_fetch_add(&evict_stat_evicted_keys, 1, __ATOMIC_RELAXED);
    if (key != small) free(key);
    return bytes;
}

/* Evict one key as policy says; the bytes freed, 0 when none could be. */
static size_t evict_one(int policy, int samples) {
    static int next_db;
    if (policy == POL_ALLKEYS_RANDOM || policy == POL_VOLATILE_RANDOM) {
        for (int i = 0; i < db_count(); i++) {
            int d = next_db++ % db_count();
            if (empty_dbs & (1ULL << d)) continue;
            gdb *db = db_get(d);
            unsigned s;
            dbentry *e = random_entry_locked(db, policy == POL_VOLATILE_RANDOM, &s);
            for (int tries = 0; e && !candidate(e) && tries < 64; tries++) {
                db_unlock_shard(db, s);
                e = random_entry_locked(db, policy == POL_VOLATILE_RANDOM, &s);
            }
            if (e && !candidate(e)) {
                db_unlock_shard(db, s);
                continue;
            }
            if (!e) {
                empty_dbs |= 1ULL << d;
                continue;
            }
            size_t b = evict_entry(db, e);
            db_unlock_shard(db, s);
            return b;
        }
        return 0;
    }
    for (int round = 0; round < 2; round++) {
        pool_populate(policy, samples);
        while (npool) {
            cand c = pool[--npool];
            gdb *db = db_get(c.dbid);
            size_t b = 0;
            if (db) {
                unsigned s = db_shard_of(c.key, c.klen);
                db_lock_shard(db, s);
                dbentry *e = db_lookup_raw(db, c.key, c.klen);
                if (e && (!volatile_policy(policy) || db_entry_expire(e) != -1) && candidate(e)) b = evict_entry(db, e);
                db_unlock_shard(db, s);
            }
            free(c.key);
            if (b) return b;
        }
    }
    return 0;
}

static int evicting;

/* Under CLIENT PAUSE the dataset stays as it is: no eviction (and no OOM
 * refusal), as Redis 7.0's performEvictions. */
static int evict_paused(void) { return session_pause_check(db_now_ms(), NULL) != SESSION_PAUSE_OFF; }

/* How long used memory stays over maxmemory (INFO's eviction exceeded
 * time, as Redis measures it): the start of the current stretch (mono_us,
 * 0: none) and the sum of the past ones. An eviction that leaves memory
 * over the limit (or cannot evict) starts a stretch, one that finds it
 * under ends it. Atomics: any worker evicts. */
static int64_t exceeded_since;
static uint64_t exceeded_total_us;

static int exceeded(int over, int rc) {
    int64_t since = __atomic_load_n(&exceeded_since, __ATOMIC_RELAXED);
    if (over && !since) {
        __atomic_compare_exchange_n(&exceeded_since, &since, mono_us(), 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    } else if (!over && since &&
               __atomic_compare_exchange_n(&exceeded_since, &since, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        __atomic_fetch_add(&exceeded_total_us, (uint64_t)(mono_us() - since), __ATOMIC_RELAXED);
    }
    return rc;
}

void evict_exceeded_time(uint64_t *total_ms, uint64_t *current_ms) {
    int64_t since = __atomic_load_n(&exceeded_since, __ATOMIC_RELAXED);
    uint64_t cur = since ? (uint64_t)(mono_us() - since) : 0;
    *current_ms = cur / 1000;
    *total_ms = (__atomic_load_n(&exceeded_total_us, __ATOMIC_RELAXED) + cur) / 1000;
}

void evict_exceeded_reset(void) {
    __atomic_store_n(&exceeded_since, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&exceeded_total_us, 0, __ATOMIC_RELAXED);
}

int evict_perform(void) {
    uint64_t max = (uint64_t)cfg.maxmemory;
    if (evict_paused()) return EVICT_OK;
    if (!max) return exceeded(0, EVICT_OK);
    uint64_t used = counted(used_memory(0));
    if (used <= max) return exceeded(0, EVICT_OK);
    int policy = cfg.maxmemory_policy;
    if (policy == POL_NOEVICTION) return exceeded(1, EVICT_FAIL);
    /* Someone else is evicting: let this command run meanwhile. */
    if (__atomic_exchange_n(&evicting, 1, __ATOMIC_ACQUIRE)) return EVICT_OK;
    int samples = cfg.maxmemory_samples > 0 ? cfg.maxmemory_samples : 5;
    uint64_t tofree = used - max, freed = 0;
    int64_t start = mono_us();
    int stuck = 0;
    empty_dbs = 0;
    int capped = 0;
    db_rdlock_keyspace();
    while (freed < tofree) {
        size_t b = evict_one(policy, samples);
        if (!b) {
            stuck = 1;
            break;
        }
        freed += b;
        if (mono_us() - start > EVICT_TIME_CAP_US) {
            capped = 1;
            break;
        }
    }
    db_unlock_keyspace();
    used = counted(used_memory(1));
    /* Out of time with memory still over: the cron goes on with it, as
     * Redis's eviction time proc does. */
    if (capped && used > max) __atomic_store_n(&evict_again, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&evicting, 0, __ATOMIC_RELEASE);
    return exceeded(used > max, stuck && used > max ? EVICT_FAIL : EVICT_OK);
}

int evict_store_bounded(void) { return objstore_cfg.memory > 0 || objstore_cfg.small_memory > 0; }

int evict_store_pressure(size_t request) {
    int policy = cfg.maxmemory_policy;
    if (policy == POL_NOEVICTION || !evict_store_bounded() || evict_paused())
        return EVICT_OK;
    int bits = strval_pressure(request);
    if (!bits) return EVICT_OK;
    if (__atomic_exchange_n(&evicting, 1, __ATOMIC_ACQUIRE)) return EVICT_OK;
    int samples = cfg.maxmemory_samples > 0 ? cfg.maxmemory_samples : 5;
    int64_t start = mono_us();
    int rc = EVICT_OK;
    empty_dbs = 0;
    db_rdlock_keyspace();
    while (bits) {
        pressure_bits = bits;
        size_t b = evict_one(policy, samples);
        pressure_bits = 0;
        if (!b) {
            rc = EVICT_FAIL;
            break;
        }
        if (mono_us() - start > EVICT_TIME_CAP_US) break;
        bits = strval_pressure(request);
    }
    db_unlock_keyspace();
    __atomic_store_n(&evicting, 0, __ATOMIC_RELEASE);
    return rc;
}

void evict_cron(void) {
    if (!__atomic_exchange_n(&evict_again, 0, __ATOMIC_RELAXED)) return;
    if (cfg.maxmemory > 0 && !repl_is_replica()) evict_perform();
}

/* CONFIG SET maxmemory: over the new limit, eviction starts at once (from
 * the cron), not only before the next command, as Redis 7.0's
 * updateMaxmemory. */
static int maxmemory_live;
static void maxmemory_apply(const char *v) {
    (void)v;
    if (!__atomic_load_n(&maxmemory_live, __ATOMIC_RELAXED) || cfg.maxmemory <= 0) return;
    uint64_t used = counted(used_memory(1));
    if ((uint64_t)cfg.maxmemory < used)
        log_warn("WARNING: the new maxmemory value set via CONFIG SET (%llu) is smaller than the current memory usage "
                 "(%llu). This will result in key eviction and/or the inability to accept new write commands "
                 "depending on the maxmemory-policy.",
                 (unsigned long long)cfg.maxmemory, (unsigned long long)used);
    __atomic_store_n(&evict_again, 1, __ATOMIC_RELAXED);
}

void evict_family_init(void) {
    static const config_hook hook = {.apply = maxmemory_apply};
    if (config_register_hook("maxmemory", &hook) != 0) abort(); /* the table lost a row */
    __atomic_store_n(&maxmemory_live, 1, __ATOMIC_RELAXED);
}

void evict_family_shutdown(void) {
    while (npool) free(pool[--npool].key);
}
