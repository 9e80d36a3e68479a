/* objstore.h -- the head pool and tails of large objects.
 *
 * An object at least --ram-head bytes long takes one fixed head slot of
 * ram_head bytes; slots are packed into --block blocks (default 2 MiB =
 * eight 256 KiB heads) of a pool. With --memory the pool is one fixed
 * mapping on the serving node (HugeTLB first, ordinary pages as fallback,
 * same geometry either way), and --sub-memory adds one pool per other
 * online node; allocation takes local slots first, then foreign ones, and
 * fails (the caller answers OOM) when every pool is full. Without --memory
 * the pool grows block by block without a limit.
 *
 * The rest of the object (the tail, len - ram_head bytes) lives in RAM, or
 * in SSD extents (ssdtail.h) when --ssd-dir is set. An object exactly
 * ram_head long has no tail.
 *
 * Pure module: no server types. One leaf mutex guards the pools; tails in
 * RAM are plain allocations owned by their object. */
#ifndef GOBLIN_MEM_OBJSTORE_H
#define GOBLIN_MEM_OBJSTORE_H
#include <stddef.h>
#include <stdint.h>

/* The settings, filled by the config table (base/config.c). */
typedef struct objstore_config {
    long long memory, sub_memory, small_memory, small_sub_memory;
    long long block, ram_head, io_chunk, write_io_chunk;
    char *ssd_dir;
    long long numa;          /* -1: no binding */
    int no_numa_promotion;
    int perverse;
    long long numa_decay_ms;  /* score decay interval (default 60000) */
} objstore_config;
extern objstore_config objstore_cfg;

/* Start-up constraint checks (no allocation). 0 ok; -1 with err set. */
int objstore_validate(const objstore_config *c, char *err, size_t errlen);
/* Map the pools and open the SSD directory. 0 ok; -1 with err set. Safe to
 * call once; objstore_ensure_init() initializes with the current settings
 * if nobody did (unit tests, tools). */
int objstore_init(char *err, size_t errlen);
void objstore_ensure_init(void);
void objstore_shutdown(void);
size_t objstore_ram_head(void);

/* A head slot: pool, slot index and its address. */
typedef struct objhead {
    char *p;
    uint32_t idx;
    uint16_t pool;
} objhead;
/* 0 ok, -1 when every pool is full. */
int objstore_head_alloc(objhead *h);
void objstore_head_free(objhead *h);
/* Every pool has a fixed capacity (--memory) and no free head slot left:
 * the next large object cannot be stored. */
int objstore_heads_exhausted(void);

/* A tail: in RAM (ram != NULL) or an SSD extent. */
typedef struct objtail {
    char *ram;
    uint64_t off;      /* SSD: byte offset of the extent */
    uint32_t nchunks;  /* SSD: extent length in write chunks */
    size_t len;
} objtail;
/* Store bytes p[0..n) as a new tail. 0 ok, -1 on no space or I/O error
 * (nothing is allocated then). */
int objstore_tail_write(objtail *t, const char *p, size_t n);
/* Read the whole tail into dst (t->len bytes). 0 ok, -1 on I/O error. */
int objstore_tail_read(const objtail *t, char *dst);
void objstore_tail_free(objtail *t);

/* Accounting of GET payload bytes served from a head on its pool's node. */
void objstore_count_served(const objhead *h, size_t head_bytes);

/* ---- Promotion ----
 * Each head slot of a fixed pool has a score; objstore_count_served() (a GET
 * served from the head) raises it. objstore_decay() halves every score; the
 * coordinator does that once per numa_decay_ms. objstore_promote_once()
 * finds the hottest full block of a foreign pool and the coldest full block
 * of the preferred pool (pool 0: the serving node, or the farthest node
 * under --perverse) and, when the foreign one is hotter, exchanges their
 * contents: bytes, owners (each objhead's p/pool/idx is re-pointed) and
 * scores. Both blocks stay full, so free lists do not change.
 *
 * Locking (docs/locking.md): the exchange re-points heads that string
 * commands read under their shard locks, so it runs under the keyspace
 * write lock, taken through the callbacks given to
 * objstore_promotion_start() (the store has no server types); the store's
 * own leaf mutex is taken after it. Candidates are chosen under the leaf
 * mutex alone and re-checked once both are held. */
typedef void (*objstore_lock_fn)(void);
/* Start the coordinator thread (no-op with --no-numa-promotion or with
 * fewer than two pools). lock/unlock: the keyspace write lock. */
int objstore_promotion_start(objstore_lock_fn lock, objstore_lock_fn unlock);
void objstore_promotion_stop(void);
/* One decision: 1 exchanged, 0 nothing to do (or promotion off), -1 error.
 * With lock == NULL the caller guarantees no head is read concurrently. */
int objstore_promote_once(objstore_lock_fn lock, objstore_lock_fn unlock);
void objstore_decay(void);
/* Score of the slot h is in (tests, INFO). */
uint32_t objstore_head_score(const objhead *h);

typedef struct objstore_promo_stats {
    int enabled, running;
    uint64_t exchanges, bytes_copied, longest_ns, decays, considered;
    long long decay_ms;
} objstore_promo_stats;
void objstore_promo_stats_get(objstore_promo_stats *st);

typedef struct objstore_pool_info {
    int node_req, node_obs, huge;
    size_t bytes, blocks, blocks_used, slots, slots_used;
    int obs_agree, obs_probed;
} objstore_pool_info;
typedef struct objstore_stats {
    int npools;
    objstore_pool_info pool[16];
    uint64_t head_alloc_fail;
    uint64_t ram_tail_bytes, ram_tails;
    uint64_t served_local, served_remote;
    int serving_node;
} objstore_stats;
void objstore_stats_get(objstore_stats *st);
/* Head slots in use in all pools, read without the store's lock (used
 * memory must not wait for a thread that allocates or frees heads). */
size_t objstore_heads_used(void);
#endif
