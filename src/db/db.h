/* db.h -- databases, shards, keys and expiry.
 *
 * A database is DB_NSHARDS shards; a key lives in the shard chosen by the top
 * bits of its hash. Each shard is a swiss table of dbentry pointers with its
 * own mutex and its own array of keys that carry a TTL (for active expiry
 * sampling). Lock order (docs/locking.md): the keyspace lock first (read
 * for ordinary commands, write for whole-keyspace ones), then shard mutexes
 * in ascending (db, shard) order. All db_* key functions expect the caller to
 * hold the key's shard (or the keyspace write lock). */
#ifndef GOBLIN_DB_DB_H
#define GOBLIN_DB_DB_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "db/object.h"
#include "ds/swiss.h"
#include "mem/slab.h"

#define DB_NSHARDS 64
#define DB_SHARD_BITS 6
#define DB_MAX 64
#define DB_SNAP_BIT 0x8000u
#define DB_VIDX_NONE 0x7fffffffu

/* A key's entry. The entry pointer names its value, a gobj (whose flags
 * word the entry owns); the key's bytes (no NUL: always read with their
 * length) follow the gobj's 8-byte header, or its value word u when the
 * value has one; what only some keys need is in a dbext before the gobj:
 * the TTL (with the entry's place in its shard's list of keys that have
 * one) and the length of a key of DBE_KLEN bytes or more.
 *
 *     [dbext]  gobj: type enc flags lru | u | key [unused room]
 *     [dbext]  gobj: type enc flags lru | key | room        (OBJ_EMBEDDED)
 *              ^ entry
 *
 * A new key's small string lives in the room it was given (db_add_room),
 * right after the key: a 100-byte value under a 9-byte key takes 8 + 9 +
 * 103 bytes, with no padding between (a room is read byte by byte). An
 * entry with a room has at least 8 bytes of it, so that the value word
 * fits when the value leaves (a value that no longer fits, an integer):
 * the key then moves 8 bytes on, over the room's start, and back when a
 * value enters the room (object.h, obj_room_enter and obj_room_leave; only
 * the gobj in its entry may enter or leave: a copy of it has no key
 * behind it). A long key (DBE_KLEN bytes or more) has a dbext, no room and
 * its bytes after u. An entry gets its dbext when it is created with one
 * in mind or when its key first gets a TTL, which moves it
 * (db_set_expire); it keeps it until the key goes.
 *
 * The allocation comes from the shard's slab pool (8-byte size classes, no
 * lock of its own: the shard's lock serialises it) if it fits a slab slot
 * and the pool's fill floor lets it (a slab of 16 KiB for a size class few entries have would be mostly
 * empty: those go to malloc until the slabs' free bytes are within a tenth
 * of the shard's entries, or their own count would fill a slab); else
 * from malloc. The shard's index holds 4-byte references
 * (db_space, below), not pointers.
 *
 * val.flags: bit 15 the snapshot mark (DB_SNAP_BIT, below), bit 14 DBE_EXT
 * (a dbext precedes the gobj), bit 13 DBE_SLAB (the allocation is a slot of
 * the shard's pool), bit 12 OBJ_EMBEDDED (object.h: the value is in the
 * room, the key before it), bits 0-11 the key's length, or DBE_KLEN when
 * the length is in the dbext. Invariant: whatever writes a value into an
 * entry keeps val.flags but OBJ_EMBEDDED, which only a value entering or
 * leaving the room changes, moving the key with it (db_entry_set_value,
 * db_replace_value, strval.c). */
#define DBE_EXT 0x4000u
#define DBE_SLAB 0x2000u
#define DBE_KLEN OBJ_KLEN
_Static_assert(OBJ_EMBEDDED == 0x1000u && OBJ_KLEN == 0x0fffu, "the value's bit of an entry's flags, the key's length");

typedef struct dbext {
    int64_t expire;     /* unix ms, -1 when the key has no TTL */
    uint32_t vidx;      /* position in shard->vol, DB_VIDX_NONE when none */
    uint32_t klen;      /* the key's length when DBE_KLEN or more */
} dbext;

typedef struct dbentry {
    gobj val;
} dbentry;

/* Whether a key of klen bytes is short: its length in the entry's flags,
 * with room for an embedded value. */
static inline int db_key_short(size_t klen) { return klen < DBE_KLEN; }
static inline int db_entry_has_ext(const dbentry *e) { return (e->val.flags & DBE_EXT) != 0; }
static inline dbext *db_entry_ext(const dbentry *e) { return (dbext *)(void *)(uintptr_t)e - 1; }
static inline size_t db_entry_klen(const dbentry *e) {
    unsigned k = e->val.flags & DBE_KLEN;
    return k != DBE_KLEN ? k : db_entry_ext(e)->klen;
}
static inline const char *db_entry_key(const dbentry *e) { return obj_key(&e->val); }
/* unix ms, -1 when the key has no TTL */
static inline int64_t db_entry_expire(const dbentry *e) {
    return db_entry_has_ext(e) ? db_entry_ext(e)->expire : -1;
}

typedef struct shard {
    pthread_mutex_t lock;
    swiss keys;
    dbentry **vol;      /* entries with a TTL, unordered */
    size_t nvol, capvol;
} shard;

/* What a shard index's slots refer to (the index's ctx; it goes where the
 * index goes). A slot is a 4-byte reference: the slab pool's reference of
 * the entry's address (slab.h), or, with DB_REF_FAR, the entry's place in
 * far, the table of the entries malloc gave (a small shard's, a large
 * entry's). Invariant: a far cell is an entry's address or a free cell
 * (bit 0 set: the next free cell's place + 1 above it, 0: none). */
typedef struct db_space {
    slab_pool *pool;    /* NULL until the shard's first entry */
    dbentry **far;
    uint16_t *far_size; /* each far entry's requested bytes (capped), for pool's counts */
    uint32_t nfar, capfar, far_free;
    size_t defrag_live; /* the pool's live bytes when a look found nothing to move */
} db_space;

#define DB_REF_FAR 0x80000000u

/* The space of sh's index (its ctx). */
static inline db_space *db_shard_space(const shard *sh) { return sh->keys.ctx; }

/* The start of e's allocation (its dbext, if any, comes first). */
static inline void *db_entry_start(dbentry *e) { return db_entry_has_ext(e) ? (void *)db_entry_ext(e) : (void *)e; }

static inline dbentry *db_space_entry(const db_space *sp, uint32_t ref) {
    if (ref & DB_REF_FAR) return sp->far[ref & ~DB_REF_FAR];
    return (dbentry *)slab_pool_at(sp->pool, ref);
}
/* The entry a slot of a shard's index (keys) refers to. */
static inline dbentry *db_index_entry(const swiss *keys, const void *slot) {
    uint32_t ref;
    memcpy(&ref, slot, sizeof(ref));
    return db_space_entry(keys->ctx, ref);
}

struct db_slots;

typedef struct gdb {
    int id;
    shard shards[DB_NSHARDS];
    /* Cluster mode only (NULL otherwise): the keys of each hash slot. */
    struct db_slots *slots;
    int64_t avg_ttl;    /* running estimate from the expiry cycle */
    uint64_t expire_cursor;
} gdb;

/* Hooks the command layer installs to hear about key changes made by the
 * db layer itself (lazy and active expiry, eviction) and about changes
 * signalled with db_signal_modified (WATCH hooks in there). */
typedef struct db_hooks {
    void (*expired)(gdb *db, const char *key, size_t klen);
    void (*modified)(gdb *db, const char *key, size_t klen);
    void (*replaced)(void);
    /* A key entered a live database (db_add*; not a load's detached one). */
    void (*added)(gdb *db, const char *key, size_t klen);
    /* A counted read lookup found no key (keyspace_misses): Redis's
     * keymiss event. */
    void (*missed)(gdb *db, const char *key, size_t klen);
} db_hooks;

/* Changes since start-up (Redis's server.dirty): save points compare it
 * with its value at the last save. Counted per thread (base/tstat.h):
 * db_dirty_add adds to the calling thread's count, db_dirty_now sums. */
void db_dirty_add(uint64_t n);
uint64_t db_dirty_now(void);
/* One change to key of db (key NULL: every key of db; db NULL: of every
 * db): counts one in the dirty counter and tells the modified hook. */
void db_signal_modified(gdb *db, const char *key, size_t klen);
/* The whole dataset was replaced by a load (LOAD, DEBUG RELOAD, a
 * replica's full sync): db_signal_modified of every key of every db, and
 * the replaced hook (client-side caching forgets every key). */
void db_signal_replaced(void);

void db_init_all(int ndbs);
void db_set_hooks(const db_hooks *h);
int db_count(void);
gdb *db_get(int id);
void db_swap(int a, int b);              /* keyspace write lock held */

uint64_t db_key_hash(const char *k, size_t n);
unsigned db_shard_of(const char *k, size_t n);
/* db_shard_of that also keeps the hash for this thread's lookups of the same
 * argument (same address and length) until db_forget_key. */
unsigned db_remember_key(const char *k, size_t n);
void db_forget_key(void);

/* Locks. */
void db_rdlock_keyspace(void);
void db_wrlock_keyspace(void);
void db_unlock_keyspace(void);
int db_keyspace_write_held(void);
/* fn runs every few milliseconds on a thread waiting for the keyspace lock
 * while another thread holds it for writing (a long script: the waiting
 * worker serves its other connections meanwhile). It must not take the
 * keyspace lock. Set once at start-up. */
void db_set_keyspace_wait_hook(void (*fn)(void));
/* Start loading what lookups of keys k[0..count) in database dbid will
 * read (index groups, then entries), so a batch of commands' cache misses
 * overlap; changes nothing, and does nothing for fewer than two distinct
 * keys (a key equal to the one before it counts once) or where a lookup
 * could not run now without waiting (this thread holds a keyspace lock,
 * or a writer is at work). At most DB_PREFETCH_MAX keys are looked at.
 * Returns the number of distinct keys in the batch. */
#define DB_PREFETCH_MAX 32
int db_prefetch_keys(int dbid, const char *const *k, const size_t *n, int count);
/* The same for a command's own keys k[0..count) of db, whose shards the
 * caller holds (or the keyspace write lock): a multi-key command's lookups
 * then overlap their misses. Only where db_prefetch_wanted says it pays. */
void db_prefetch_held(gdb *db, const char *const *k, const size_t *n, int count);
/* Whether database dbid is large enough for prefetching to pay (its index
 * and entries no longer fit the caches), as the cron last found it with
 * db_prefetch_refresh. */
int db_prefetch_wanted(int dbid);
void db_prefetch_refresh(void);
void db_lock_shard(gdb *db, unsigned s);
void db_unlock_shard(gdb *db, unsigned s);

int64_t db_now_ms(void);
/* Freeze db_now_ms() for the calling thread (nests), around one command,
 * at the wall time of mono_us, a monotime_us reading the caller took. */
void db_freeze_time(uint64_t mono_us);
void db_unfreeze_time(void);

/* Key access. lookup applies lazy expiry and refreshes the access clock;
 * lookup_raw does neither (for TTL-agnostic internal use). lookup_read is
 * Redis's lookupKeyRead: it counts a keyspace hit or miss whatever the
 * command, for the keys a write command reads (GETDEL's key, SINTERSTORE's
 * sources); lookup counts only under a read-only command. */
dbentry *db_lookup(gdb *db, const char *k, size_t n);
/* db_lookup that leaves the access clock alone (Redis's LOOKUP_NOTOUCH:
 * TTL, TYPE, EXISTS and the like). */
dbentry *db_lookup_notouch(gdb *db, const char *k, size_t n);
dbentry *db_lookup_read(gdb *db, const char *k, size_t n);
/* Counts one read lookup answered without db_lookup_read: a key named twice
 * and looked up once, OBJECT's untouched lookup. */
void db_count_read(int hit);
dbentry *db_lookup_raw(gdb *db, const char *k, size_t n);
int db_key_exists(gdb *db, const char *k, size_t n);
/* Add an absent key; the caller sets e->val before releasing the shard. */
dbentry *db_add(gdb *db, const char *k, size_t n);
/* db_add with room bytes (right after the key, at *roomp) for the value
 * to be embedded in: strval_set_embedded writes it there, or a value set
 * with db_entry_set_value moves in with strval_embed; the room goes with
 * the entry. */
dbentry *db_add_room(gdb *db, const char *k, size_t n, size_t room, void **roomp);
/* db_add_room for a key that gets a TTL at once (ttl non-zero): its entry
 * is made with a dbext, so db_set_expire does not move it. */
dbentry *db_add_ext(gdb *db, const char *k, size_t n, size_t room, void **roomp, int ttl);
void db_delete_entry(gdb *db, dbentry *e);
/* Bytes of e's allocation: the entry, its key and an embedded value. */
size_t db_entry_size(const dbentry *e);
int db_delete(gdb *db, const char *k, size_t n);
/* Free every entry of a detached shard index (their values too) and what
 * they live in (its db_space); the index is left holding dangling slots:
 * free it next. db_index_free_entry frees the entry of one slot (and
 * nothing else), db_index_free_space the rest once each is freed. */
void db_index_free_entries(swiss *keys);
void db_index_free_entry(swiss *keys, void *slot);
void db_index_free_space(swiss *keys);
/* db_delete whose large collection values a background thread frees
 * (UNLINK; DEL under lazyfree-lazy-user-del). */
int db_unlink(gdb *db, const char *k, size_t n);
/* Replace the value of e (freeing the old one); its access clock stays. */
void db_replace_value(dbentry *e, const gobj *v);
/* v becomes the value of e, which holds none (a new key's, or one whose
 * value moved out): e's access clock and flags stay. */
void db_entry_set_value(dbentry *e, const gobj *v);
/* How db_install and db_set_string treat the TTL: DB_KEEPTTL keeps it
 * (else it is removed); DB_TTL: the caller sets one next (a new key's
 * entry is made ready for it). */
enum { DB_KEEPTTL = 1, DB_TTL = 2 };
/* The fresh value *v becomes the value of key k[0..n): it replaces e's
 * value (whatever its type; the old one is freed), or the key is added when
 * e is NULL. Returns the entry; NULL: out of memory (*v freed, nothing
 * changed). */
dbentry *db_install(gdb *db, dbentry *e, const char *k, size_t n, gobj *v, int how);
/* Bytes p[0..len) become the string value of key k[0..n) (entry e, or a
 * new key when e is NULL), as db_install: a value that fits the room of
 * e's embedded one is written there, a small one under a new key is
 * embedded in its entry, anything else is stored on its own. NULL: out of
 * memory or a tail write error (strval_io_error), nothing changed. */
dbentry *db_set_string(gdb *db, dbentry *e, const char *k, size_t n, const char *p, size_t len, int how);
/* The key's TTL becomes when_ms. e may move to make room for it: the
 * entry to use from then on is the one returned. */
dbentry *db_set_expire(gdb *db, dbentry *e, int64_t when_ms);
void db_persist(gdb *db, dbentry *e);
int db_is_expired(const dbentry *e, int64_t now);
/* Replica mode: keys are not expired here (the primary sends the DELs);
 * clients see a logically expired key as missing, except on a thread in
 * the primary's context (the replication stream's applier). */
void db_set_replica_mode(int on);
void db_set_primary_context(int on);
/* CLIENT PAUSE: until until_ms (0: now) expired keys are missing to reads
 * but nothing deletes them. */
void db_hold_expiry(int64_t until_ms);
/* While the append-only file loads nothing expires, as in Redis: a later
 * command of the file may extend or remove a TTL that has passed since
 * (db_is_expired is then false for every key). db_time_passed(when): the
 * absolute time when_ms is over, expiry is not paused and this node is not
 * a replica (the test of the commands that delete a key given a time in
 * the past; a replica keeps the key with that time instead). */
void db_pause_expiry(int on);
int db_time_passed(int64_t when_ms);
/* Expire e if its time has passed: returns 1 when it was deleted. */
int db_expire_if_needed(gdb *db, dbentry *e);

/* ---- Keys a writable replica's own clients gave a TTL (db/replttl.c) ----
 *
 * A replica leaves expiry to its primary's DELs, but a key one of its own
 * clients gave a TTL (replica-read-only no) has no primary to expire it:
 * as Redis's slaveKeysWithExpire, db_set_expire lists its name when called
 * inside a client's call (db_set_client_call) on a replica, and the active expire cycle of
 * a replica walks the list instead of sampling. db_expire_listed expires e
 * if its time has passed, replica or not (shard lock held); 1 when it was
 * deleted. */
/* What the calling thread runs now: DB_CALL_NONE (the primary's stream,
 * a load, the cron), an ordinary client's command, or its write command
 * (whose lookups on a writable replica delete a key whose time has
 * passed, as Redis). Returns the setting it replaces (calls nest). */
enum { DB_CALL_NONE, DB_CALL_CLIENT, DB_CALL_CLIENT_WRITE };
int db_set_client_call(int how);
void db_replica_ttl_note(gdb *db, const char *k, size_t n);
size_t db_replica_ttl_cycle(long long budget_us);
void db_replica_ttl_clear(void);
int db_expire_listed(gdb *db, dbentry *e);

/* ---- Marks of the fork-less snapshot (persist/rdb_snap.c) -------------
 *
 * Every entry carries one mark bit. Invariant: while no snapshot runs,
 * every entry's mark equals db_snap_mark (new entries are created with
 * it). A snapshot starts under the keyspace write lock by flipping
 * db_snap_mark: every entry is then unsaved; saving an entry (writing the
 * value it had when the snapshot started) sets its mark. A snapshot ends
 * only after a pass over every shard marked every entry (also when its
 * output failed: the pass then only marks), so the invariant holds again
 * and the next snapshot's flip makes every entry unsaved. One bit is
 * enough: no snapshot starts before the previous one ended. */
extern int db_snap_on;          /* a snapshot runs (relaxed atomic) */
extern uint32_t db_snap_mark;   /* 0 or DB_SNAP_BIT (relaxed atomic) */
static inline int db_snap_running(void) { return __atomic_load_n(&db_snap_on, __ATOMIC_RELAXED); }
/* A snapshot runs and e's value as of its start is not in it yet. */
static inline int db_entry_unsaved(const dbentry *e) {
    return db_snap_running() && (e->val.flags & DB_SNAP_BIT) != __atomic_load_n(&db_snap_mark, __ATOMIC_RELAXED);
}
static inline void db_entry_mark_saved(dbentry *e) {
    e->val.flags = (uint16_t)((e->val.flags & ~DB_SNAP_BIT) | __atomic_load_n(&db_snap_mark, __ATOMIC_RELAXED));
}
/* Hooks of the snapshot. save: called (shard lock or keyspace write lock
 * held) before the db layer removes an unsaved entry (expiry, eviction,
 * db_delete*) or changes its TTL, so that the old value is saved first;
 * the value changes of commands are announced by the dispatcher
 * (cmd_call). finish: called (keyspace write lock held) before db_flush
 * empties a live database: the snapshot is completed first. */
typedef void db_snap_save_fn(gdb *db, dbentry *e);
void db_snap_set_hooks(db_snap_save_fn *save, void (*finish)(void));
/* Start (flip the mark, count a generation) and stop a snapshot; the
 * keyspace write lock is held for the start. */
void db_snap_start(void);
void db_snap_stop(void);
/* Snapshots started since start-up: a dataset built while one started
 * (a detached load) must adopt the current mark before it goes live. */
uint64_t db_snap_generation(void);
/* Every entry of db gets the current mark (a detached database, or the
 * keyspace write lock held). */
void db_snap_adopt(gdb *db);

/* ---- Hash slots (cluster mode) ----------------------------------------
 *
 * With db_set_slot_mode(1) (before db_init_all; cluster-enabled) every
 * database keeps, per hash slot (util/crc16.h), the set of its keys, and a
 * key's shard is its slot modulo DB_NSHARDS: all keys of one slot share a
 * shard, whose lock guards the slot's set too. Without it nothing of this
 * exists and a key's shard comes from its hash (no cost per key). */
void db_set_slot_mode(int on);
int db_slot_mode(void);
/* The shard holding the keys of slot (lock it to read the slot's keys). */
static inline unsigned db_shard_of_slot(unsigned slot) { return slot & (DB_NSHARDS - 1); }
/* Keys of slot in db (its shard locked, or the keyspace write lock). */
size_t db_slot_count(gdb *db, unsigned slot);
/* Calls fn for up to max keys of slot (same locking); returns how many. */
typedef void db_slot_fn(void *arg, dbentry *e);
size_t db_slot_keys(gdb *db, unsigned slot, size_t max, db_slot_fn *fn, void *arg);
/* Exchange the slot index of two databases (with their shard contents). */
void db_slots_exchange(gdb *a, gdb *b);

/* A database outside the live array (a load builds one, then exchanges its
 * contents with a live database's): every db_* key function works on it.
 * NULL when out of memory. db_detached_free empties and frees one. */
gdb *db_detached_new(int id);
void db_detached_free(gdb *db);
/* Exchange the contents (keys, TTL lists, entry pools, slot sets) of a live
 * database and a detached one; locks and identities stay where they are. */
void db_exchange(gdb *live, gdb *detached);

size_t db_size(gdb *db);
size_t db_expires(gdb *db);
void db_flush(gdb *db);
/* db_flush whose entries a background thread frees (FLUSHALL ASYNC); the
 * database is empty when it returns. */
void db_flush_async(gdb *db);
/* Random live key (lazy-expiring what it meets); NULL when empty. */
dbentry *db_random_key(gdb *db);

/* SCAN: calls fn for keys of the cursor's step, returns next cursor. The
 * caller holds the keyspace read lock; the shard lock is taken here. */
typedef void db_scan_fn(void *arg, dbentry *e);
uint64_t db_scan(gdb *db, uint64_t cursor, db_scan_fn *fn, void *arg);

/* Incremental housekeeping (expiry sampling and rehash steps); returns the
 * number of keys expired. Takes the locks it needs. effort: Redis's
 * active-expire-effort less one (0..9): larger samples, and a shard is
 * sampled again at a lower share of expired keys. The budget counts from
 * when the keyspace lock is held; *took_us (unless NULL) is the time from
 * then to the end: the cycle's own, without waiting for a whole-keyspace
 * command. */
size_t db_active_expire_cycle(long long budget_us, int effort, long long *took_us);
void db_rehash_cycle(void);
/* The shards' entry pools compact themselves: a shard whose pool's slabs
 * are mostly free bytes (a mass delete leaves every slab that keeps one
 * live entry) has its sparsest slabs marked (slab_pool_evacuate), and a
 * pass over its index, resumed each call for at most a millisecond under
 * the shard's lock, moves the entries found in them as a first TTL does
 * (their index reference, TTL list place, hash slot set and memcache
 * metadata follow); the emptied slabs' pages go back to the kernel. From
 * the cron, one shard at a time. */
void db_defrag_cycle(void);
/* Ends the pass db_defrag_cycle has running, if any: its pool's marked
 * slabs take slots again (activedefrag turned off). Cron thread. */
void db_defrag_stop(void);
/* A cron step's time for the passes, microseconds (1000; 0: one step of
 * the index scan per tick, for tests). */
void db_defrag_budget_set(unsigned us);
/* The entry at slot of sh's index, in a marked slab (slab_pool_evacuate),
 * moves to a slot of the pool's other slabs; its index reference, TTL
 * list place, hash slot set and memcache metadata follow. 0, or -1 when
 * no slot was free. Under the shard's lock. */
int db_entry_evacuate(gdb *db, shard *sh, void *slot);
/* INFO's active_defrag_*: entries moved (hits) and looked at in a pass but
 * not moved (misses), milliseconds with a pass running, and whether one
 * is. */
typedef struct db_defrag_stats {
    uint64_t hits, misses, total_ms, current_ms;
    int running;
} db_defrag_stats;
void db_defrag_stats_get(db_defrag_stats *st);
/* Bytes of the slabs the shards' entry pools hold (INFO goblin's
 * keyspace_slab_bytes): slab.c's per-thread count, no lock taken. */
size_t db_entry_slab_bytes(void);
void db_defrag_stats_reset(void);
/* A write left the collection at key resizing its index (lf_take_resize
 * started): list it for db_rehash_cycle, which finishes the resize while
 * the collection is idle. Called under the key's shard lock; a key is
 * listed once, however many of its index parts start resizing. */
void db_note_resize(gdb *db, const char *k, size_t n);
extern volatile int db_active_expire_enabled;
/* keyspace_hits / keyspace_misses: db_lookup counts them while the calling
 * thread runs a read-only command, db_lookup_read always (Redis counts read
 * lookups only). Per-thread counters: TSTAT_KEYSPACE_HITS / _MISSES of
 * base/tstat.h. */
void db_count_lookups(int on);
/* Count one read lookup of k as a hit or a miss, a miss told to the missed
 * hook (OBJECT counts its lookup with db_count_read: Redis gives it no
 * keymiss event). */
void db_count_read_key(gdb *db, const char *k, size_t n, int hit);
extern uint64_t db_stat_expired_keys;
/* The active expiry cycle: microseconds spent in it, and the cycles that
 * stopped at their time budget (INFO's expire_cycle_cpu_milliseconds and
 * expired_time_cap_reached_count; CONFIG RESETSTAT zeroes them). */
extern uint64_t db_stat_expire_cycle_us, db_stat_expire_time_cap;
/* INFO's expired_stale_perc / 100: the moving average of the share of keys
 * the cycles sampled that had expired (relaxed atomic; RESETSTAT zeroes). */
extern double db_stat_expired_stale_perc;
#endif
