/* slab.h -- slots for small blocks in 8-byte size classes (see slab.c).
 *
 * For owners of many small, exactly sized blocks (a small hash is one such
 * block, a key's entry another): a block of n <= SLAB_MAX bytes gets a slot
 * of n rounded up to a multiple of SLAB_QUANTUM, so it wastes at most 7
 * bytes where the general allocator's classes lose 16 on average at 150-200
 * bytes. Slots are 8-byte aligned.
 *
 * Two ways to use it: the process-wide slab_alloc/slab_free, thread-safe
 * (one lock per size class); or a slab_pool of one owner that serialises
 * its calls (a keyspace shard under its lock), with no lock and no write
 * to memory any other owner touches. A slot goes back to where it came
 * from: slab_free for slab_alloc's, slab_pool_free with the same pool for
 * slab_pool_alloc's. */
#ifndef GOBLIN_MEM_SLAB_H
#define GOBLIN_MEM_SLAB_H

#include <stddef.h>
#include <stdint.h>

/* Slabs are cut from 2 MiB blocks of mem/hugetlb (slab.c), but in
 * sanitizer builds, where each is a heap allocation. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLAB_CHUNKED 0
#else
#define SLAB_CHUNKED 1
#endif

#define SLAB_BYTES ((size_t)16384) /* a slab, aligned to its size */
#define SLAB_QUANTUM 8
#define SLAB_MAX 512
#define SLAB_NCLASS (SLAB_MAX / SLAB_QUANTUM)

struct slab_page;

typedef struct slab_pool {
    struct slab_page *avail[SLAB_NCLASS + 1]; /* per class: slabs with a free or never-used slot */
    uint32_t nslabs;                          /* slabs held, all classes */
    /* With a fill floor (slab_pool_set_fill): bytes of live slots and what
     * the owner keeps elsewhere instead (it updates outside). */
    uint8_t fill_pct;
    size_t live_bytes, outside;
    /* Blocks kept elsewhere, by class; a count that reaches UINT16_MAX
     * stays there (a class that had that many is busy for good). */
    uint16_t outside_n[SLAB_NCLASS + 1];
    /* With references (slab_pool_init_refs): the slabs by id. */
    struct slab_page **pagev;
    uint32_t npagev, cappagev, max_ids;
    uint32_t *free_ids, nfree_ids;            /* ids of given-back slabs */
} slab_pool;

/* A reference names an 8-byte aligned address inside a slot of a pool
 * with references: its slab's id and its offset in 8-byte units. */
#define SLAB_REF_OFF_BITS 11
_Static_assert((1u << SLAB_REF_OFF_BITS) * SLAB_QUANTUM == SLAB_BYTES, "offsets of a 16 KiB slab");

/* A slot of at least n (0..SLAB_MAX) bytes; NULL when out of memory. */
void *slab_alloc(size_t n);
/* Give back a slot of slab_alloc. */
void slab_free(void *p);
/* Give back the empty slabs of slab_alloc's pool: a class keeps its last
 * slab with room when it empties (against churn), and a burst through
 * many classes (a small block growing one field at a time) leaves one per
 * class, each with its touched pages. MEMORY PURGE. Returns how many. */
size_t slab_purge(void);
/* Bytes of the slot p (its size class), of either kind. */
size_t slab_size(const void *p);
/* Bytes of the slot slab_alloc(n) returns (n <= SLAB_MAX). */
static inline size_t slab_class_size(size_t n) {
    return n ? (n + SLAB_QUANTUM - 1) / SLAB_QUANTUM * SLAB_QUANTUM : SLAB_QUANTUM;
}

/* An empty pool (zeroed memory is one too). */
void slab_pool_init(slab_pool *sp);
/* An empty pool whose addresses have 32-bit references below
 * max_ids << SLAB_REF_OFF_BITS: once it holds max_ids slabs, an allocation
 * that needs a new one fails (NULL). */
void slab_pool_init_refs(slab_pool *sp, uint32_t max_ids);
/* An owner's pool of many size classes could keep a mostly empty slab per
 * class: with a fill floor it starts a new slab only if the free bytes of
 * its slabs, the new one included, stay within 100 - pct % of all the
 * owner holds (its live slots and what it keeps elsewhere, outside); an
 * allocation that would need one fails (NULL) and the owner allocates
 * elsewhere (and counts it in outside). So while sizes are many and an
 * owner small its blocks go elsewhere. A class whose blocks kept elsewhere
 * would fill a quarter of a slab gets one in any case: a slab of one size
 * many blocks have fills up. 0: no floor. */
void slab_pool_set_fill(slab_pool *sp, unsigned pct);
/* The owner keeps a block of n bytes elsewhere (delta +1), or no longer
 * (-1): outside grows or shrinks by bytes, its class's count by one. */
void slab_pool_outside(slab_pool *sp, size_t n, size_t bytes, int delta);
/* The reference of p (8-byte aligned, inside a live slot) and back. */
uint32_t slab_pool_ref(const void *p);
static inline void *slab_pool_at(const slab_pool *sp, uint32_t ref) {
    return (char *)sp->pagev[ref >> SLAB_REF_OFF_BITS] + (size_t)(ref & ((1u << SLAB_REF_OFF_BITS) - 1)) * SLAB_QUANTUM;
}
void *slab_pool_alloc(slab_pool *sp, size_t n);
void slab_pool_free(slab_pool *sp, void *p);
/* Give back the pool's empty slabs (as slab_purge); returns how many. */
size_t slab_pool_purge(slab_pool *sp);
/* Evacuation (a pool with references, slab.c): marks the sparsest slabs
 * of each class whose live slots would fit in two slabs fewer (an empty
 * one goes back at once), and returns how many. A marked slab takes no
 * new slot and is given back when its last slot is freed; the owner moves
 * its live slots meanwhile (slab_pool_alloc of the slot's size, a copy,
 * slab_pool_free of the old one). slab_pool_marked: whether the slot at p is in a marked slab.
 * slab_pool_evacuate_end: the slabs still marked take slots again. */
size_t slab_pool_evacuate(slab_pool *sp);
int slab_pool_marked(const void *p);
void slab_pool_evacuate_end(slab_pool *sp);
/* With a fill floor: the bytes of the pool's slabs that no live slot
 * holds. */
size_t slab_pool_slack(const slab_pool *sp);
/* Frees the pool's slabs; every slot must have been given back. The pool is
 * empty again. */
void slab_pool_destroy(slab_pool *sp);
/* Bytes of the blocks slabs are cut from (0 unless SLAB_CHUNKED). */
size_t slab_chunk_bytes(void);
/* Used memory counts slab slots, not slabs: what a slot's owner frees
 * shows at once, as with malloc. slab_counted_bytes: the slabs' share of
 * what the allocator or the block provider reports (the blocks, or in
 * sanitizer builds the heap slabs); slab_live_bytes: the live slots' bytes
 * (of every pool, summed per thread: no shared write per slot). */
size_t slab_counted_bytes(void);
size_t slab_live_bytes(void);
/* Bytes of the slabs held by the pools made by slab_pool_init_refs (the
 * shards' key entries), summed per thread as slab_live_bytes: no lock. */
size_t slab_ref_pool_bytes(void);
/* Bytes of slabs the pool holds (and its id table). */
size_t slab_pool_bytes(const slab_pool *sp);

#endif
