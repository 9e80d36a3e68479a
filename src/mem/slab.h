/* slab.h -- slots for small blocks in 8-byte size classes (see slab.c).
 *
 * For owners of many small, exactly sized blocks (a small hash is one such
 * block): a block of n <= SLAB_MAX bytes gets a slot of n rounded up to a
 * multiple of SLAB_QUANTUM, so it wastes at most 7 bytes where the general
 * allocator's classes lose 16 on average at 150-200 bytes. Slots are
 * 8-byte aligned. Thread-safe (one lock per size class). */
#ifndef GOBLIN_MEM_SLAB_H
#define GOBLIN_MEM_SLAB_H

#include <stddef.h>

#define SLAB_QUANTUM 8
#define SLAB_MAX 512

/* A slot of at least n (0..SLAB_MAX) bytes; NULL when out of memory. */
void *slab_alloc(size_t n);
/* Give back a slot of slab_alloc. */
void slab_free(void *p);
/* Bytes of the slot p (its size class). */
size_t slab_size(const void *p);
/* Bytes of the slot slab_alloc(n) returns (n <= SLAB_MAX). */
static inline size_t slab_class_size(size_t n) {
    return n ? (n + SLAB_QUANTUM - 1) / SLAB_QUANTUM * SLAB_QUANTUM : SLAB_QUANTUM;
}

#endif
