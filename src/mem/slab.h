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

#define SLAB_QUANTUM 8
#define SLAB_MAX 512
#define SLAB_NCLASS (SLAB_MAX / SLAB_QUANTUM)

struct slab_page;

typedef struct slab_pool {
    struct slab_page *avail[SLAB_NCLASS + 1]; /* per class: slabs with a free or never-used slot */
    uint32_t pages[SLAB_NCLASS + 1];          /* per class: slabs held */
} slab_pool;

/* A slot of at least n (0..SLAB_MAX) bytes; NULL when out of memory. */
void *slab_alloc(size_t n);
/* Give back a slot of slab_alloc. */
void slab_free(void *p);
/* Bytes of the slot p (its size class), of either kind. */
size_t slab_size(const void *p);
/* Bytes of the slot slab_alloc(n) returns (n <= SLAB_MAX). */
static inline size_t slab_class_size(size_t n) {
    return n ? (n + SLAB_QUANTUM - 1) / SLAB_QUANTUM * SLAB_QUANTUM : SLAB_QUANTUM;
}

/* An empty pool (zeroed memory is one too). */
void slab_pool_init(slab_pool *sp);
void *slab_pool_alloc(slab_pool *sp, size_t n);
void slab_pool_free(slab_pool *sp, void *p);
/* Frees the pool's slabs; every slot must have been given back. The pool is
 * empty again. */
void slab_pool_destroy(slab_pool *sp);
/* Bytes of slabs the pool holds. */
size_t slab_pool_bytes(const slab_pool *sp);

#endif
