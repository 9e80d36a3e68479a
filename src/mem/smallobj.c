/* smallobj.c -- the compact small-object arena (see smallobj.h).
 *
 * Records are bump-allocated in segments; a freed record goes on the
 * doubly linked free list of its exact size class and is reused first.
 * Free-list links are 32-bit record ids (segment index, offset / 16), so
 * they fit the 16 bytes every record has: handle (FREE), cap, prev, next.
 *
 * Compaction evacuates a sparse segment: its free records are unlinked,
 * its live records are copied to free records of their class elsewhere or
 * to the bump point of a current segment (their handle cells re-pointed),
 * and the emptied segment is handed to the reclaim thread (mem/reclaim.h),
 * which unmaps it after the step: munmap frees every page (and, the first
 * time after a large load on a shadow-paging VM, takes tens of
 * milliseconds), and the caller excludes readers for the whole step. One
 * segment per step, so the caller's pause is bounded by copying at most
 * one segment.
 *
 * Invariants: every mapped segment is a sequence of records from its start
 * up to its bump offset; a record's size is round16(12 + cap + 1), or
 * round16(12 + cap) when raw; a record is live (its handle cell points at
 * it) or free (handle FREE, on the list of class size / 16); a segment's
 * `live` is the sum of its live records' sizes; st.free_bytes is the sum
 * of all free records' sizes. */
#include "mem/smallobj.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mem/numa.h"
#include "mem/reclaim.h"

#define HCHUNK 4096
#define HDR 12
#define FREE UINT32_MAX
#define NIL UINT32_MAX

typedef struct seg {
    char *base;        /* NULL: slot unused (segment released) */
    size_t used;       /* bump offset */
    size_t live;       /* bytes of live records */
    int pool;
} seg;

/* Pools: segments mapped on one node, up to a capacity (0: unbounded).
 * Pool 0 is the serving node's (--small-memory); the others, in the order
 * added, each other node's (--small-sub-memory). A pool bumps into its
 * current segment only; when every pool is full, allocation fails. */
#define MAXSPOOLS 16
typedef struct spool {
    int node;
    size_t cap_bytes, nsegs;
    long cur;              /* index in segs of the segment it bumps into, -1 */
} spool;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t seg_sz, max_obj;
static unsigned offbits;       /* log2(seg_sz / 16): offset bits of a record id */
static spool spools[MAXSPOOLS];
static int nspools;
static seg *segs;
static size_t nsegs, capsegs;  /* slots in use (some may be released) */
static size_t *byaddr;         /* mapped segment indices sorted by base */
static size_t nbyaddr;
static smallrec ***hchunks;    /* handle table: chunks of HCHUNK cells */
static size_t nhchunks;
static uint32_t hfree_head = UINT32_MAX; /* free cells chain through the cell */
static uint32_t hnext;
static uint32_t *freelist;     /* per size class (16-byte units): head id */
static size_t nclasses;
static smallobj_stats st;

/* Frees since the last evacuation that could not finish: retrying before
 * the arena changed would copy for nothing. */
static uint64_t frees_since_stuck = UINT64_MAX;
#define RETRY_FREES 4096

/* Size of a record with room for cap bytes (+ NUL unless raw). */
static size_t rec_size(size_t cap) { return (HDR + cap + 1 + 15) & ~(size_t)15; }
static size_t raw_size(size_t n) { return (HDR + n + 15) & ~(size_t)15; }
static size_t size_of(const smallrec *r) {
    return (r->cap & SMALLOBJ_RAW) ? raw_size(SMALLOBJ_CAP(r)) : rec_size(r->cap);
}

/* ---- record ids and segments --------------------------------------------- */

static uint32_t rid_of(size_t si, const smallrec *r) {
    return (uint32_t)(si << offbits | (size_t)((const char *)r - segs[si].base) >> 4);
}
static smallrec *rec_of(uint32_t id) {
    return (smallrec *)(segs[id >> offbits].base + ((size_t)(id & ((1u << offbits) - 1)) << 4));
}

/* The segment holding p (binary search over the mapped bases). */
static size_t seg_of(const void *p) {
    size_t lo = 0, hi = nbyaddr;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if ((const char *)p >= segs[byaddr[mid]].base) lo = mid;
        else hi = mid;
    }
    size_t si = byaddr[lo];
    assert((const char *)p >= segs[si].base && (const char *)p < segs[si].base + seg_sz);
    return si;
}

static void byaddr_add(size_t si) {
    size_t at = nbyaddr;
    while (at > 0 && segs[byaddr[at - 1]].base > segs[si].base) at--;
    memmove(byaddr + at + 1, byaddr + at, (nbyaddr - at) * sizeof(*byaddr));
    byaddr[at] = si;
    nbyaddr++;
}

static void byaddr_del(size_t si) {
    for (size_t i = 0; i < nbyaddr; i++)
        if (byaddr[i] == si) {
            memmove(byaddr + i, byaddr + i + 1, (nbyaddr - i - 1) * sizeof(*byaddr));
            nbyaddr--;
            return;
        }
    assert(0);
}

/* ---- free lists ------------------------------------------------------------ */

static uint32_t get32(const smallrec *r, int off) {
    uint32_t v;
    memcpy(&v, (const char *)r + off, 4);
    return v;
}
static void set32(smallrec *r, int off, uint32_t v) { memcpy((char *)r + off, &v, 4); }
#define PREV 8
#define NEXT 12

/* Turn the sz bytes at r (in segment si) into a free record. */
static void push_free(size_t si, smallrec *r, size_t sz) {
    assert(sz >= 16 && sz % 16 == 0 && sz / 16 < nclasses);
    r->handle = FREE;
    r->cap = (uint32_t)(sz - HDR) | SMALLOBJ_RAW;
    size_t cl = sz / 16;
    uint32_t id = rid_of(si, r);
    set32(r, PREV, NIL);
    set32(r, NEXT, freelist[cl]);
    if (freelist[cl] != NIL) set32(rec_of(freelist[cl]), PREV, id);
    freelist[cl] = id;
    st.free_bytes += sz;
}

static void unlink_free(smallrec *r) {
    size_t sz = size_of(r), cl = sz / 16;
    uint32_t prev = get32(r, PREV), next = get32(r, NEXT);
    if (prev != NIL) set32(rec_of(prev), NEXT, next);
    else freelist[cl] = next;
    if (next != NIL) set32(rec_of(next), PREV, prev);
    st.free_bytes -= sz;
}

/* The rest of segment s as free records (it stops being bumped into). */
static void seg_close(size_t si) {
    seg *s = &segs[si];
    while (seg_sz - s->used >= 16) {
        size_t room = seg_sz - s->used;
        size_t sz = room < (nclasses - 1) * 16 ? room : (nclasses - 1) * 16;
        push_free(si, (smallrec *)(s->base + s->used), sz);
        s->used += sz;
    }
}

/* ---- set-up -------------------------------------------------------------- */

int smallobj_init(size_t capacity, size_t segsize, size_t maxobj, int node) {
    assert(segsize >= 4096 && (segsize & (segsize - 1)) == 0);
    seg_sz = segsize;
    max_obj = maxobj;
    offbits = 0;
    while ((16u << offbits) < segsize) offbits++;
    spools[0] = (spool){node, capacity, 0, -1};
    nspools = 1;
    nclasses = rec_size(maxobj) / 16 + 1;
    freelist = malloc(nclasses * sizeof(*freelist));
    if (!freelist) return -1;
    for (size_t i = 0; i < nclasses; i++) freelist[i] = NIL;
    return 0;
}

int smallobj_add_pool(int node, size_t capacity) {
    if (nspools == MAXSPOOLS || capacity < seg_sz) return -1;
    pthread_mutex_lock(&lock);
    spools[nspools++] = (spool){node, capacity, 0, -1};
    pthread_mutex_unlock(&lock);
    return 0;
}

static smallrec **cell(uint32_t h) { return &hchunks[h / HCHUNK][h % HCHUNK]; }

static int handle_new(uint32_t *out) {
    if (hfree_head != UINT32_MAX) {
        *out = hfree_head;
        hfree_head = (uint32_t)(uintptr_t)*cell(hfree_head);
        return 0;
    }
    if (hnext / HCHUNK == nhchunks) {
        smallrec ***nc = realloc(hchunks, (nhchunks + 1) * sizeof(*nc));
        if (!nc) return -1;
        hchunks = nc;
        if (!(hchunks[nhchunks] = calloc(HCHUNK, sizeof(smallrec *)))) return -1;
        nhchunks++;
    }
    *out = hnext++;
    return 0;
}

/* ---- allocation ------------------------------------------------------------ */

/* Map a segment for pool p; its slot index, or -1. Caller holds lock. */
static long seg_new(int p) {
    spool *sp = &spools[p];
    if (sp->cap_bytes && (sp->nsegs + 1) * seg_sz > sp->cap_bytes) return -1;
    size_t si = 0;
    while (si < nsegs && segs[si].base) si++;
    if (si == nsegs) {
        if (nsegs == ((size_t)1 << (32 - offbits)) - 1) return -1; /* record ids exhausted */
        if (nsegs == capsegs) {
            size_t nc = capsegs ? capsegs * 2 : 16;
            seg *ns = realloc(segs, nc * sizeof(seg));
            size_t *nb = ns ? realloc(byaddr, nc * sizeof(size_t)) : NULL;
            if (ns) segs = ns;
            if (!nb) return -1;
            byaddr = nb;
            capsegs = nc;
        }
        nsegs++;
    }
    int huge;
    char *b = gnuma_pool_map(seg_sz, sp->node, 0, &huge);
    if (!b) {
        if (si == nsegs - 1) nsegs--;
        return -1;
    }
    segs[si] = (seg){b, 0, 0, p};
    byaddr_add(si);
    sp->nsegs++;
    st.segments++;
    st.seg_bytes += seg_sz;
    return (long)si;
}

/* sz bytes of record space, not in segment `avoid` (-1: any): a free record
 * of the class, else the bump point of the first pool (local first) with
 * room, or (may_map) capacity for another segment. *si gets its segment. */
static smallrec *take(size_t sz, long avoid, int may_map, size_t *si) {
    size_t cl = sz / 16;
    assert(cl < nclasses);
    for (uint32_t id = freelist[cl]; id != NIL; id = get32(rec_of(id), NEXT)) {
        if ((long)(id >> offbits) == avoid) continue;
        smallrec *r = rec_of(id);
        unlink_free(r);
        *si = id >> offbits;
        return r;
    }
    for (int p = 0; p < nspools; p++) {
        spool *sp = &spools[p];
        if (sp->cur >= 0 && sp->cur != avoid && segs[sp->cur].used + sz <= seg_sz) {
            seg *s = &segs[sp->cur];
            smallrec *r = (smallrec *)(s->base + s->used);
            s->used += sz;
            *si = (size_t)sp->cur;
            return r;
        }
        long n = may_map ? seg_new(p) : -1;
        if (n < 0) continue;
        if (sp->cur >= 0) seg_close((size_t)sp->cur);
        sp->cur = n;
        segs[n].used = sz;
        *si = (size_t)n;
        return (smallrec *)segs[n].base;
    }
    return NULL;
}

static smallrec **alloc_sized(size_t sz, int raw) {
    pthread_mutex_lock(&lock);
    size_t si;
    smallrec *r = take(sz, -1, 1, &si);
    uint32_t h;
    if (!r || handle_new(&h) != 0) {
        if (r) push_free(si, r, sz);
        st.alloc_fail++;
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    r->len = 0;
    r->cap = raw ? (uint32_t)(sz - HDR) | SMALLOBJ_RAW : (uint32_t)(sz - HDR - 1);
    r->handle = h;
    if (!raw) r->data[0] = '\0';
    *cell(h) = r;
    segs[si].live += sz;
    st.live_records++;
    /* Stored atomically: smallobj_live_bytes reads it without the lock. */
    __atomic_store_n(&st.live_bytes, st.live_bytes + sz, __ATOMIC_RELAXED);
    smallrec **c = cell(h);
    pthread_mutex_unlock(&lock);
    return c;
}

smallrec **smallobj_alloc(size_t cap) { return alloc_sized(rec_size(cap), 0); }
smallrec **smallobj_alloc_raw(size_t n) { return alloc_sized(raw_size(n), 1); }
size_t smallobj_record_size(const smallrec *r) { return size_of(r); }

void smallobj_free(smallrec **hc) {
    if (!hc) return;
    pthread_mutex_lock(&lock);
    smallrec *r = *hc;
    size_t sz = size_of(r);
    uint32_t h = r->handle;
    assert(h != FREE && *cell(h) == r);
    size_t si = seg_of(r);
    segs[si].live -= sz;
    push_free(si, r, sz);
    if (frees_since_stuck < RETRY_FREES) frees_since_stuck++;
    st.live_records--;
    __atomic_store_n(&st.live_bytes, st.live_bytes - sz, __ATOMIC_RELAXED);
    *cell(h) = (smallrec *)(uintptr_t)hfree_head;
    hfree_head = h;
    pthread_mutex_unlock(&lock);
}

int smallobj_exhausted(size_t need) {
    pthread_mutex_lock(&lock);
    size_t room = st.free_bytes;
    int bounded = nspools > 0;
    for (int p = 0; p < nspools; p++) {
        const spool *sp = &spools[p];
        if (!sp->cap_bytes) bounded = 0;
        else room += sp->cap_bytes - sp->nsegs * seg_sz;
        if (sp->cur >= 0) room += seg_sz - segs[sp->cur].used;
    }
    pthread_mutex_unlock(&lock);
    return bounded && room < need;
}

/* ---- compaction ------------------------------------------------------------ */

static int is_current(size_t si) { return spools[segs[si].pool].cur == (long)si; }

/* The sparsest segment worth evacuating, or -1: the arena is at most 3/4
 * live with two segments' worth of free bytes, and the segment is not a
 * current one and at most half live. Evacuation never maps a segment, so
 * each one that finishes gives a segment back. Caller holds lock. */
static long victim(void) {
    if (frees_since_stuck < RETRY_FREES) return -1;
    if (st.seg_bytes - st.live_bytes < 2 * seg_sz || st.live_bytes > st.seg_bytes / 4 * 3) return -1;
    long best = -1;
    for (size_t i = 0; i < nsegs; i++) {
        if (!segs[i].base || is_current(i) || segs[i].live > seg_sz / 2) continue;
        if (best < 0 || segs[i].live < segs[best].live) best = (long)i;
    }
    return best;
}

int smallobj_wants_compaction(void) {
    pthread_mutex_lock(&lock);
    int w = victim() >= 0;
    pthread_mutex_unlock(&lock);
    return w;
}

size_t smallobj_compact_step(void) {
    pthread_mutex_lock(&lock);
    long v = victim();
    if (v < 0) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    seg *s = &segs[v];
    /* Its free records leave the lists first, so nothing lands in it. */
    for (size_t off = 0; off < s->used;) {
        smallrec *r = (smallrec *)(s->base + off);
        size_t sz = size_of(r);
        if (r->handle == FREE) unlink_free(r);
        off += sz;
    }
    size_t off = 0;
    for (; off < s->used;) {
        smallrec *r = (smallrec *)(s->base + off);
        size_t sz = size_of(r);
        if (r->handle != FREE) {
            size_t to;
            smallrec *n = take(sz, v, 0, &to);
            if (!n) break; /* full elsewhere: keep the rest here */
            s = &segs[v];  /* take() may have grown the table */
            memcpy(n, r, sz);
            *cell(n->handle) = n;
            segs[to].live += sz;
            s->live -= sz;
            r->handle = FREE;
            st.moved++;
        }
        off += sz;
    }
    if (off < s->used) {
        /* Interrupted: what was free or emptied here is free again. */
        for (size_t o = 0; o < s->used;) {
            smallrec *r = (smallrec *)(s->base + o);
            size_t sz = size_of(r);
            if (r->handle == FREE) push_free((size_t)v, r, sz);
            o += sz;
        }
        st.compactions++;
        frees_since_stuck = 0;
        pthread_mutex_unlock(&lock);
        return 0;
    }
    assert(s->live == 0);
    reclaim_unmap(s->base, seg_sz); /* segments are plain pages (seg_new) */
    byaddr_del((size_t)v);
    spools[s->pool].nsegs--;
    s->base = NULL;
    s->used = 0;
    st.segments--;
    st.seg_bytes -= seg_sz;
    st.compactions++;
    st.released += seg_sz;
    pthread_mutex_unlock(&lock);
    return seg_sz;
}

size_t smallobj_compact(void) {
    size_t total = 0, b;
    while ((b = smallobj_compact_step()) > 0) total += b;
    return total;
}

size_t smallobj_live_bytes(void) { return __atomic_load_n(&st.live_bytes, __ATOMIC_RELAXED); }

void smallobj_stats_get(smallobj_stats *out) {
    pthread_mutex_lock(&lock);
    *out = st;
    out->capacity = 0;
    out->npools = nspools;
    for (int p = 0; p < nspools; p++) {
        out->pool[p].node = spools[p].node;
        out->pool[p].segments = spools[p].nsegs;
        out->pool[p].capacity = spools[p].cap_bytes;
        out->capacity += spools[p].cap_bytes;
    }
    pthread_mutex_unlock(&lock);
}
