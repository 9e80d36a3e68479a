/* slab.c -- a slab allocator for small blocks, 8-byte size classes.
 *
 * jemalloc rounds a 150-200 byte block up to a multiple of 32 (16 bytes lost
 * on average, a tenth of a 10-field hash). Blocks of at most SLAB_MAX bytes
 * therefore come from slabs of SLAB_BYTES bytes (aligned to their size, so a
 * slot finds its slab by masking) cut into slots of one size class, a
 * multiple of 8 bytes. Each class keeps the slabs that have a free slot on a
 * list; a slab's free slots form an intrusive list, slots never used yet are
 * handed out from its bump offset. A slab that empties is given back unless
 * it is its class's only slab with room. A pool (slab_pool) is the set of
 * class lists; the process-wide one guards each class with a lock, an
 * owner's pool relies on the owner's serialisation.
 *
 * Invariant (under the class's lock or the pool owner's): a slab is on its
 * class's list iff it has a free or never-used slot and is not marked for
 * evacuation, used counts its live slots, and nslabs counts the pool's
 * slabs, listed or not.
 *
 * Frees leave a class with many slabs that are mostly empty (a mass
 * delete keeps every slab that still has one live slot). The owner of a
 * pool with references can evacuate them: slab_pool_evacuate marks the
 * sparsest slabs of each class whose live slots would fit in two slabs
 * fewer; a marked slab takes no new slot and goes back to where slabs
 * come from when its last slot is freed, while the owner moves each live
 * slot it finds there into an unmarked slab (and re-points whatever names
 * it). */
#include "mem/slab.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/tstat.h"
#include "mem/hugetlb.h"

#define SLAB_HDR 64 /* slab header, rounded up so slots stay aligned */

typedef struct slab_page {
    struct slab_page *prev, *next; /* on the class list (listed) */
    void *free;                    /* freed slots, linked through their first word */
    uint32_t used;                 /* live slots */
    uint32_t bump;                 /* offset (from SLAB_HDR) of the first never-used slot */
    uint32_t cls;                  /* slot size / SLAB_QUANTUM; fixed for the slab's life */
    uint16_t listed;
    uint16_t marked;               /* to be evacuated: never listed */
    uint32_t id;                   /* in a pool with references: pagev[id] == this */
    struct slab_chunk *chunk;      /* the block it was cut from (SLAB_CHUNKED) */
} slab_page;

_Static_assert(sizeof(slab_page) <= SLAB_HDR, "the slab header fits before the first slot");

/* ---- where slabs come from ----------------------------------------------
 *
 * Slabs are cut from 2 MiB blocks of the block provider (mem/hugetlb.c:
 * HugeTLB pages under --arena-hugetlb, ordinary ones otherwise; counted in
 * used memory as blocks), not allocated one by one: jemalloc keeps ~2 bytes
 * of metadata per key entry for 16 KiB extents, and pads them. A chunk
 * hands out its 16 KiB-aligned slabs, takes freed ones back (their pages
 * are returned to the kernel at once, as jemalloc would in time) and goes
 * back to the provider when none is used, but for one empty chunk kept
 * against churn. Under a sanitizer slabs stay heap allocations (the leak
 * checker scans the heap for pointers; it does not scan mappings).
 * Invariant (chunk_lock): a chunk is on chunk_avail iff it has a free or
 * never-used slab; nused counts its slabs handed out. */
#if SLAB_CHUNKED
#define SLAB_CHUNK ((size_t)2 << 20)
#define SLAB_PER_CHUNK (SLAB_CHUNK / SLAB_BYTES)

typedef struct slab_chunk {
    struct slab_chunk *prev, *next; /* on chunk_avail */
    char *map;                      /* the block */
    int huge;
    char *first;                    /* its first 16 KiB boundary */
    uint32_t nslabs, nused, bump, nfree;
    uint8_t freev[SLAB_PER_CHUNK];  /* indexes of freed slabs */
} slab_chunk;

static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;
static slab_chunk *chunk_avail, *chunk_spare;
/* Written under chunk_lock, read without it (used memory, on every command
 * under maxmemory): relaxed atomics. */
static size_t chunk_bytes;

size_t slab_chunk_bytes(void) { return __atomic_load_n(&chunk_bytes, __ATOMIC_RELAXED); }

static void chunk_unlink(slab_chunk *c) {
    if (c->prev) c->prev->next = c->next;
    else chunk_avail = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void chunk_link(slab_chunk *c) {
    c->prev = NULL;
    c->next = chunk_avail;
    if (c->next) c->next->prev = c;
    chunk_avail = c;
}

static slab_chunk *chunk_new(void) {
    slab_chunk *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->map = hugetlb_alloc_block(SLAB_CHUNK, &c->huge);
    if (!c->map) {
        free(c);
        return NULL;
    }
    __atomic_store_n(&chunk_bytes, chunk_bytes + SLAB_CHUNK, __ATOMIC_RELAXED);
    c->first = (char *)(((uintptr_t)c->map + SLAB_BYTES - 1) & ~(uintptr_t)(SLAB_BYTES - 1));
    c->nslabs = (uint32_t)((size_t)(c->map + SLAB_CHUNK - c->first) / SLAB_BYTES);
    return c;
}

/* A zeroed-header slab of SLAB_BYTES, SLAB_BYTES-aligned; NULL: no memory. */
static slab_page *slab_get(void) {
    pthread_mutex_lock(&chunk_lock);
    slab_chunk *c = chunk_avail;
    if (!c) {
        c = chunk_spare ? chunk_spare : chunk_new();
        chunk_spare = NULL;
        if (!c) {
            pthread_mutex_unlock(&chunk_lock);
            return NULL;
        }
        chunk_link(c);
    }
    uint32_t i = c->nfree ? c->freev[--c->nfree] : c->bump++;
    if (++c->nused == c->nslabs) chunk_unlink(c);
    pthread_mutex_unlock(&chunk_lock);
    slab_page *s = (slab_page *)(void *)(c->first + (size_t)i * SLAB_BYTES);
    memset(s, 0, sizeof(*s));
    s->chunk = c;
    return s;
}

static void slab_put(slab_page *s) {
    slab_chunk *c = s->chunk;
    /* Its pages go back first: nobody can take it before it is listed. */
    if (!c->huge) madvise(s, SLAB_BYTES, MADV_DONTNEED);
    slab_chunk *gone = NULL;
    pthread_mutex_lock(&chunk_lock);
    if (c->nused == c->nslabs) chunk_link(c);
    c->freev[c->nfree++] = (uint8_t)(((char *)s - c->first) / SLAB_BYTES);
    if (--c->nused == 0) {
        chunk_unlink(c);
        if (chunk_spare) {
            gone = c;
            __atomic_store_n(&chunk_bytes, chunk_bytes - SLAB_CHUNK, __ATOMIC_RELAXED);
        } else {
            chunk_spare = c;
        }
    }
    pthread_mutex_unlock(&chunk_lock);
    if (gone) {
        hugetlb_free_block(gone->map, SLAB_CHUNK, gone->huge);
        free(gone);
    }
}

size_t slab_counted_bytes(void) { return slab_chunk_bytes(); }
#else
size_t slab_chunk_bytes(void) { return 0; }

static size_t heap_slabs; /* atomic */

size_t slab_counted_bytes(void) { return __atomic_load_n(&heap_slabs, __ATOMIC_RELAXED) * SLAB_BYTES; }

static slab_page *slab_get(void) {
    slab_page *s = aligned_alloc(SLAB_BYTES, SLAB_BYTES);
    if (s) {
        memset(s, 0, sizeof(*s));
        __atomic_add_fetch(&heap_slabs, 1, __ATOMIC_RELAXED);
    }
    return s;
}

static void slab_put(slab_page *s) {
    __atomic_sub_fetch(&heap_slabs, 1, __ATOMIC_RELAXED);
    free(s);
}
#endif

size_t slab_live_bytes(void) { return (size_t)tstat_sum_raw(TSTAT_SLAB_LIVE); }
size_t slab_ref_pool_bytes(void) { return (size_t)tstat_sum_raw(TSTAT_SLAB_REF_POOLS) * SLAB_BYTES; }

/* sp took (delta > 0) or gave back (delta < 0) slabs. */
static inline void pool_slabs_counted(const slab_pool *sp, int64_t delta) {
    if (sp->max_ids) tstat_add(TSTAT_SLAB_REF_POOLS, (uint64_t)delta);
}

static inline slab_page *slab_of(const void *p) {
    return (slab_page *)((uintptr_t)p & ~(uintptr_t)(SLAB_BYTES - 1));
}

size_t slab_size(const void *p) { return (size_t)slab_of(p)->cls * SLAB_QUANTUM; }

static void slab_unlink(slab_pool *sp, slab_page *s) {
    if (s->prev) s->prev->next = s->next;
    else sp->avail[s->cls] = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->listed = 0;
}

static void slab_link(slab_pool *sp, slab_page *s) {
    s->prev = NULL;
    s->next = sp->avail[s->cls];
    if (s->next) s->next->prev = s;
    sp->avail[s->cls] = s;
    s->listed = 1;
}

/* The pool operations touch only the class's list head and the class's
 * slabs, and count slabs atomically: the process-wide pool below runs them
 * under the class's lock alone. */
void slab_pool_init(slab_pool *sp) { memset(sp, 0, sizeof(*sp)); }

void slab_pool_init_refs(slab_pool *sp, uint32_t max_ids) {
    slab_pool_init(sp);
    assert(max_ids > 0 && max_ids <= (UINT32_MAX >> SLAB_REF_OFF_BITS) + 1);
    sp->max_ids = max_ids;
}

/* Under a fill floor, a class whose blocks kept elsewhere would fill this
 * share of a slab gets one whatever the slabs' free bytes: a class that
 * has had that many is likely to fill it. Low enough that few of a busy
 * class's blocks stay elsewhere for good (they are not moved in later):
 * at 90 %, values of many sizes, whose entries spread over ~20 classes,
 * cost 8 bytes per key more at 200K keys. High enough that a class of a
 * few blocks gets no slab of its own. */
#define SLAB_CLASS_FILL_PCT 25

void slab_pool_set_fill(slab_pool *sp, unsigned pct) {
    assert(pct <= 100);
    sp->fill_pct = (uint8_t)pct;
}

void slab_pool_outside(slab_pool *sp, size_t n, size_t bytes, int delta) {
    size_t cls = n <= SLAB_MAX ? slab_class_size(n) / SLAB_QUANTUM : 0; /* 0: never a slot's */
    if (delta > 0) {
        sp->outside += bytes;
        if (cls && sp->outside_n[cls] != UINT16_MAX) sp->outside_n[cls]++;
    } else {
        assert(sp->outside >= bytes && (!cls || sp->outside_n[cls] > 0));
        sp->outside -= bytes;
        if (cls && sp->outside_n[cls] != UINT16_MAX) sp->outside_n[cls]--;
    }
}

uint32_t slab_pool_ref(const void *p) {
    const slab_page *s = slab_of(p);
    assert(((uintptr_t)p & (SLAB_QUANTUM - 1)) == 0);
    return s->id << SLAB_REF_OFF_BITS | (uint32_t)(((uintptr_t)p - (uintptr_t)s) / SLAB_QUANTUM);
}

/* Gives s an id (a pool with references); -1 when none is left. */
static int slab_id_take(slab_pool *sp, slab_page *s) {
    if (sp->nfree_ids) {
        s->id = sp->free_ids[--sp->nfree_ids];
    } else {
        if (sp->npagev == sp->max_ids) return -1;
        if (sp->npagev == sp->cappagev) {
            uint32_t cap = sp->cappagev ? sp->cappagev * 2 : 16;
            slab_page **v = realloc(sp->pagev, cap * sizeof(*v));
            uint32_t *f = realloc(sp->free_ids, cap * sizeof(*f));
            if (v) sp->pagev = v;
            if (f) sp->free_ids = f;
            if (!v || !f) return -1;
            sp->cappagev = cap;
        }
        s->id = sp->npagev++;
    }
    sp->pagev[s->id] = s;
    return 0;
}

static void slab_id_give(slab_pool *sp, slab_page *s) {
    sp->pagev[s->id] = NULL;
    sp->free_ids[sp->nfree_ids++] = s->id; /* room: every id once handed out has a cell */
}

void *slab_pool_alloc(slab_pool *sp, size_t n) {
    assert(n <= SLAB_MAX);
    size_t size = slab_class_size(n), cls = size / SLAB_QUANTUM;
    slab_page *s = sp->avail[cls];
    if (!s) {
        if (sp->fill_pct && (size_t)sp->outside_n[cls] * size * 100 < SLAB_CLASS_FILL_PCT * SLAB_BYTES) {
            /* The slabs' free bytes with the new one, against everything held. */
            size_t live = sp->live_bytes + size, slack = (sp->nslabs + 1) * SLAB_BYTES - live;
            if (slack * 100 > (100 - (size_t)sp->fill_pct) * (live + sp->outside)) return NULL;
        }
        s = slab_get();
        if (!s) return NULL;
        if (sp->max_ids && slab_id_take(sp, s) != 0) {
            slab_put(s);
            return NULL;
        }
        s->cls = (uint32_t)cls;
        slab_link(sp, s);
        __atomic_add_fetch(&sp->nslabs, 1, __ATOMIC_RELAXED);
        pool_slabs_counted(sp, 1);
    }
    if (sp->fill_pct) sp->live_bytes += size;
    void *p;
    if (s->free) {
        p = s->free;
        memcpy(&s->free, p, sizeof(void *));
    } else {
        p = (char *)s + SLAB_HDR + s->bump;
        s->bump += (uint32_t)size;
    }
    s->used++;
    if (!s->free && SLAB_HDR + s->bump + size > SLAB_BYTES) slab_unlink(sp, s);
    tstat_add(TSTAT_SLAB_LIVE, size);
    return p;
}

/* Give s, a slab with no live slot, back to where slabs come from. */
static void slab_release(slab_pool *sp, slab_page *s) {
    if (s->listed) slab_unlink(sp, s);
    __atomic_sub_fetch(&sp->nslabs, 1, __ATOMIC_RELAXED);
    pool_slabs_counted(sp, -1);
    if (sp->max_ids) slab_id_give(sp, s);
    slab_put(s);
}

void slab_pool_free(slab_pool *sp, void *p) {
    slab_page *s = slab_of(p);
    assert(s->used > 0);
    if (sp->fill_pct) sp->live_bytes -= (size_t)s->cls * SLAB_QUANTUM;
    tstat_add(TSTAT_SLAB_LIVE, -(uint64_t)s->cls * SLAB_QUANTUM);
    memcpy(p, &s->free, sizeof(void *));
    s->free = p;
    s->used--;
    if (s->marked) {
        if (s->used == 0) slab_release(sp, s);
        return;
    }
    if (!s->listed) slab_link(sp, s);
    if (s->used == 0 && (s->prev || s->next)) slab_release(sp, s);
}

/* ---- evacuation ----------------------------------------------------------
 *
 * Over the pool's slabs (by id), class by class: with used live slots of
 * cap per slab, ceil(used / cap) slabs would hold them; when the class has
 * at least two more, its sparsest slabs are marked until one spare is
 * left besides those (the moves need free slots, churn wants one more).
 * Marking takes a slab off its list; slab_pool_evacuate_end puts back on
 * it whatever is still marked (a slot the owner could not move). */

static int by_class_then_used(const void *a, const void *b) {
    const slab_page *x = *(slab_page *const *)a, *y = *(slab_page *const *)b;
    if (x->cls != y->cls) return x->cls < y->cls ? -1 : 1;
    return x->used < y->used ? -1 : x->used > y->used;
}

static size_t slab_cap(uint32_t cls) { return (SLAB_BYTES - SLAB_HDR) / ((size_t)cls * SLAB_QUANTUM); }

size_t slab_pool_evacuate(slab_pool *sp) {
    assert(sp->max_ids);
    slab_page **v = malloc((sp->npagev ? sp->npagev : 1) * sizeof(*v));
    if (!v) return 0;
    size_t n = 0, marked = 0;
    for (uint32_t i = 0; i < sp->npagev; i++)
        if (sp->pagev[i] && !sp->pagev[i]->marked) v[n++] = sp->pagev[i];
    qsort(v, n, sizeof(*v), by_class_then_used);
    for (size_t a = 0, b; a < n; a = b) {
        size_t used = 0;
        for (b = a; b < n && v[b]->cls == v[a]->cls; b++) used += v[b]->used;
        size_t cap = slab_cap(v[a]->cls), keep = (used + cap - 1) / cap + 1;
        if (b - a < keep + 1) continue;
        for (size_t i = a; i < b - keep; i++) {
            marked++;
            if (v[i]->used == 0) { /* the one a class keeps against churn */
                slab_release(sp, v[i]);
                continue;
            }
            if (v[i]->listed) slab_unlink(sp, v[i]);
            v[i]->marked = 1;
        }
    }
    free(v);
    return marked;
}

int slab_pool_marked(const void *p) { return slab_of(p)->marked; }

void slab_pool_evacuate_end(slab_pool *sp) {
    for (uint32_t i = 0; i < sp->npagev; i++) {
        slab_page *s = sp->pagev[i];
        if (!s || !s->marked) continue;
        s->marked = 0;
        assert(s->used > 0); /* an emptied marked slab went back at its last free */
        if (s->free || SLAB_HDR + s->bump + (size_t)s->cls * SLAB_QUANTUM <= SLAB_BYTES) slab_link(sp, s);
    }
}

size_t slab_pool_slack(const slab_pool *sp) {
    size_t held = (size_t)__atomic_load_n(&sp->nslabs, __ATOMIC_RELAXED) * SLAB_BYTES;
    return held > sp->live_bytes ? held - sp->live_bytes : 0;
}

/* Give back class cls's empty slabs (the one a class keeps against churn,
 * and any left on its list behind slabs linked since). */
static size_t pool_purge_class(slab_pool *sp, size_t cls) {
    size_t n = 0;
    for (slab_page *s = sp->avail[cls], *next; s; s = next) {
        next = s->next;
        if (s->used) continue;
        slab_release(sp, s);
        n++;
    }
    return n;
}

size_t slab_pool_purge(slab_pool *sp) {
    size_t n = 0;
    for (size_t c = 0; c <= SLAB_NCLASS; c++) n += pool_purge_class(sp, c);
    return n;
}

void slab_pool_destroy(slab_pool *sp) {
    pool_slabs_counted(sp, -(int64_t)sp->nslabs);
    for (size_t c = 0; c <= SLAB_NCLASS; c++) {
        slab_page *s = sp->avail[c];
        while (s) {
            slab_page *next = s->next;
            assert(s->used == 0);
            slab_put(s);
            s = next;
        }
    }
    free(sp->pagev);
    free(sp->free_ids);
    uint32_t max_ids = sp->max_ids;
    uint8_t fill = sp->fill_pct;
    slab_pool_init(sp);
    sp->max_ids = max_ids;
    sp->fill_pct = fill;
}

size_t slab_pool_bytes(const slab_pool *sp) {
    size_t n = __atomic_load_n(&sp->nslabs, __ATOMIC_RELAXED);
    return n * SLAB_BYTES + (size_t)sp->cappagev * (sizeof(slab_page *) + sizeof(uint32_t));
}

/* ---- the process-wide pool ---------------------------------------------- */

static slab_pool slab_global;
static pthread_mutex_t slab_locks[SLAB_NCLASS + 1];
static pthread_once_t slab_once = PTHREAD_ONCE_INIT;

static void slab_init(void) {
    for (size_t i = 0; i <= SLAB_NCLASS; i++) pthread_mutex_init(&slab_locks[i], NULL);
}

void *slab_alloc(size_t n) {
    assert(n <= SLAB_MAX);
    pthread_once(&slab_once, slab_init);
    pthread_mutex_t *l = &slab_locks[slab_class_size(n) / SLAB_QUANTUM];
    pthread_mutex_lock(l);
    void *p = slab_pool_alloc(&slab_global, n);
    pthread_mutex_unlock(l);
    return p;
}

void slab_free(void *p) {
    pthread_mutex_t *l = &slab_locks[slab_of(p)->cls];
    pthread_mutex_lock(l);
    slab_pool_free(&slab_global, p);
    pthread_mutex_unlock(l);
}

size_t slab_purge(void) {
    pthread_once(&slab_once, slab_init);
    size_t n = 0;
    for (size_t c = 0; c <= SLAB_NCLASS; c++) {
        pthread_mutex_lock(&slab_locks[c]);
        n += pool_purge_class(&slab_global, c);
        pthread_mutex_unlock(&slab_locks[c]);
    }
    return n;
}
