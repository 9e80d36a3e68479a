/* slab.c -- a slab allocator for small blocks, 8-byte size classes.
 *
 * jemalloc rounds a 150-200 byte block up to a multiple of 32 (16 bytes lost
 * on average, a tenth of a 10-field hash). Blocks of at most SLAB_MAX bytes
 * therefore come from slabs of SLAB_BYTES bytes (aligned to their size, so a
 * slot finds its slab by masking) cut into slots of one size class, a
 * multiple of 8 bytes. Each class keeps the slabs that have a free slot on a
 * list; a slab's free slots form an intrusive list, slots never used yet are
 * handed out from its bump offset. A slab that empties is given back unless
 * it is its class's only slab with room.
 *
 * Invariant (under the class lock): a slab is on its class's list iff it
 * has a free or never-used slot, and used counts its live slots. */
#include "mem/slab.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLAB_NCLASS (SLAB_MAX / SLAB_QUANTUM)
#define SLAB_BYTES ((size_t)16384)
#define SLAB_HDR 64 /* slab header, rounded up so slots stay aligned */

typedef struct slab_page {
    struct slab_page *prev, *next; /* on the class list (listed) */
    void *free;                    /* freed slots, linked through their first word */
    uint32_t used;                 /* live slots */
    uint32_t bump;                 /* offset (from SLAB_HDR) of the first never-used slot */
    uint32_t cls;                  /* slot size / SLAB_QUANTUM; fixed for the slab's life */
    uint32_t listed;
} slab_page;

_Static_assert(sizeof(slab_page) <= SLAB_HDR, "the slab header fits before the first slot");

typedef struct slab_class {
    pthread_mutex_t lock;
    slab_page *avail; /* slabs with a free or never-used slot */
} slab_class;

static slab_class slab_classes[SLAB_NCLASS + 1];
static pthread_once_t slab_once = PTHREAD_ONCE_INIT;

static void slab_init(void) {
    for (size_t i = 0; i <= SLAB_NCLASS; i++) pthread_mutex_init(&slab_classes[i].lock, NULL);
}

static inline slab_page *slab_of(const void *p) {
    return (slab_page *)((uintptr_t)p & ~(uintptr_t)(SLAB_BYTES - 1));
}

size_t slab_size(const void *p) { return (size_t)slab_of(p)->cls * SLAB_QUANTUM; }

static void slab_unlink(slab_class *c, slab_page *s) {
    if (s->prev) s->prev->next = s->next;
    else c->avail = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->listed = 0;
}

static void slab_link(slab_class *c, slab_page *s) {
    s->prev = NULL;
    s->next = c->avail;
    if (c->avail) c->avail->prev = s;
    c->avail = s;
    s->listed = 1;
}

void *slab_alloc(size_t n) {
    assert(n <= SLAB_MAX);
    pthread_once(&slab_once, slab_init);
    size_t size = slab_class_size(n), cls = size / SLAB_QUANTUM;
    slab_class *c = &slab_classes[cls];
    pthread_mutex_lock(&c->lock);
    slab_page *s = c->avail;
    if (!s) {
        s = aligned_alloc(SLAB_BYTES, SLAB_BYTES);
        if (!s) {
            pthread_mutex_unlock(&c->lock);
            return NULL;
        }
        memset(s, 0, sizeof(*s));
        s->cls = (uint32_t)cls;
        slab_link(c, s);
    }
    void *p;
    if (s->free) {
        p = s->free;
        memcpy(&s->free, p, sizeof(void *));
    } else {
        p = (char *)s + SLAB_HDR + s->bump;
        s->bump += (uint32_t)size;
    }
    s->used++;
    if (!s->free && SLAB_HDR + s->bump + size > SLAB_BYTES) slab_unlink(c, s);
    pthread_mutex_unlock(&c->lock);
    return p;
}

void slab_free(void *p) {
    slab_page *s = slab_of(p);
    slab_class *c = &slab_classes[s->cls];
    pthread_mutex_lock(&c->lock);
    assert(s->used > 0);
    memcpy(p, &s->free, sizeof(void *));
    s->free = p;
    s->used--;
    if (!s->listed) slab_link(c, s);
    if (s->used == 0 && (s->prev || s->next)) {
        slab_unlink(c, s);
        free(s);
    }
    pthread_mutex_unlock(&c->lock);
}
