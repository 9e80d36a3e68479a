/* smallobj.c -- the compact small-object arena (see smallobj.h).
 *
 * Invariant: every segment is a sequence of records from its start up to
 * its bump offset, each record's size is round16(12 + cap + 1), or
 * round16(12 + cap) for a raw one, and a record is either live (its handle
 * cell points at it) or free (handle UINT32_MAX, on the free list of its
 * size class, linked through bytes 8..15, which every record has). That
 * sequence is what compaction walks. */
#include "mem/smallobj.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mem/numa.h"

#define HCHUNK 4096

typedef struct seg {
    char *base;
    size_t used;
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
static spool spools[MAXSPOOLS];
static int nspools;
static seg *segs;
static size_t nsegs, capsegs;
static smallrec ***hchunks;  /* handle table: chunks of HCHUNK cells */
static size_t nhchunks;
static uint32_t hfree_head = UINT32_MAX; /* free cells chain through the cell */
static uint32_t hnext;
static smallrec **freelist;   /* per size class (16-byte units) */
static size_t nclasses;
static smallobj_stats st;

#define HDR 12
#define FREE UINT32_MAX

/* Size of a record with room for cap bytes (+ NUL unless raw). */
static size_t rec_size(size_t cap) { return (HDR + cap + 1 + 15) & ~(size_t)15; }
static size_t raw_size(size_t n) { return (HDR + n + 15) & ~(size_t)15; }
static size_t size_of(const smallrec *r) {
    return (r->cap & SMALLOBJ_RAW) ? raw_size(SMALLOBJ_CAP(r)) : rec_size(r->cap);
}
/* The free-list link lives at offset 8 (8-aligned: records are 16-aligned). */
static smallrec *link_get(const smallrec *r) {
    smallrec *n;
    memcpy(&n, (const char *)r + 8, sizeof(n));
    return n;
}
static void link_set(smallrec *r, smallrec *n) { memcpy((char *)r + 8, &n, sizeof(n)); }
/* Turn the sz bytes at r into a free record of class sz / 16. */
static void push_free(smallrec *r, size_t sz) {
    assert(sz >= 16 && sz % 16 == 0);
    r->handle = FREE;
    r->cap = (uint32_t)(sz - HDR) | SMALLOBJ_RAW;
    size_t cl = sz / 16;
    link_set(r, freelist[cl]);
    freelist[cl] = r;
    st.free_bytes += sz;
}

int smallobj_init(size_t capacity, size_t segsize, size_t maxobj, int node) {
    seg_sz = segsize;
    max_obj = maxobj;
    spools[0] = (spool){node, capacity, 0, -1};
    nspools = 1;
    nclasses = rec_size(maxobj) / 16 + 1;
    freelist = calloc(nclasses, sizeof(*freelist));
    return freelist ? 0 : -1;
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

int smallobj_add_pool(int node, size_t capacity) {
    if (nspools == MAXSPOOLS || capacity < seg_sz) return -1;
    pthread_mutex_lock(&lock);
    spools[nspools++] = (spool){node, capacity, 0, -1};
    pthread_mutex_unlock(&lock);
    return 0;
}

/* The rest of segment s as free records (it stops being bumped into). */
static void seg_close(seg *s) {
    while (seg_sz - s->used >= 16) {
        size_t room = seg_sz - s->used;
        size_t sz = room < (nclasses - 1) * 16 ? room : (nclasses - 1) * 16;
        push_free((smallrec *)(s->base + s->used), sz);
        s->used += sz;
    }
}

/* sz bytes at the bump point of the first pool (local first) that has
 * room or may map another segment. Caller holds lock. */
static smallrec *bump(size_t sz) {
    for (int p = 0; p < nspools; p++) {
        spool *sp = &spools[p];
        if (sp->cur >= 0 && segs[sp->cur].used + sz <= seg_sz) {
            seg *s = &segs[sp->cur];
            smallrec *r = (smallrec *)(s->base + s->used);
            s->used += sz;
            return r;
        }
        if (sp->cap_bytes && (sp->nsegs + 1) * seg_sz > sp->cap_bytes) continue;
        if (nsegs == capsegs) {
            size_t nc = capsegs ? capsegs * 2 : 16;
            seg *ns = realloc(segs, nc * sizeof(seg));
            if (!ns) return NULL;
            segs = ns;
            capsegs = nc;
        }
        int huge;
        char *b = gnuma_pool_map(seg_sz, sp->node, 0, &huge);
        if (!b) continue;
        if (sp->cur >= 0) seg_close(&segs[sp->cur]);
        segs[nsegs] = (seg){b, sz, p};
        sp->cur = (long)nsegs;
        sp->nsegs++;
        nsegs++;
        st.segments = nsegs;
        st.seg_bytes = nsegs * seg_sz;
        return (smallrec *)b;
    }
    return NULL;
}

static smallrec **alloc_sized(size_t sz, int raw) {
    size_t cl = sz / 16;
    pthread_mutex_lock(&lock);
    smallrec *r = NULL;
    if (cl < nclasses && freelist[cl]) {
        r = freelist[cl];
        freelist[cl] = link_get(r);
        st.free_bytes -= sz;
    } else {
        r = bump(sz);
    }
    uint32_t h;
    if (!r || handle_new(&h) != 0) {
        if (r) push_free(r, sz);
        st.alloc_fail++;
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    r->len = 0;
    r->cap = raw ? (uint32_t)(sz - HDR) | SMALLOBJ_RAW : (uint32_t)(sz - HDR - 1);
    r->handle = h;
    if (!raw) r->data[0] = '\0';
    *cell(h) = r;
    st.live_records++;
    st.live_bytes += sz;
    smallrec **c = cell(h);
    pthread_mutex_unlock(&lock);
    return c;
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

smallrec **smallobj_alloc(size_t cap) { return alloc_sized(rec_size(cap), 0); }
size_t smallobj_record_size(const smallrec *r) { return size_of(r); }
smallrec **smallobj_alloc_raw(size_t n) { return alloc_sized(raw_size(n), 1); }

void smallobj_free(smallrec **hc) {
    if (!hc) return;
    pthread_mutex_lock(&lock);
    smallrec *r = *hc;
    size_t sz = size_of(r);
    uint32_t h = r->handle;
    assert(h != FREE && *cell(h) == r);
    push_free(r, sz);
    st.live_records--;
    st.live_bytes -= sz;
    *cell(h) = (smallrec *)(uintptr_t)hfree_head;
    hfree_head = h;
    pthread_mutex_unlock(&lock);
}

size_t smallobj_compact(void) {
    pthread_mutex_lock(&lock);
    size_t before = st.free_bytes;
    memset(freelist, 0, nclasses * sizeof(*freelist));
    st.free_bytes = 0;
    for (size_t i = 0; i < nsegs; i++) {
        seg *s = &segs[i];
        size_t rd = 0, wr = 0;
        while (rd < s->used) {
            smallrec *r = (smallrec *)(s->base + rd);
            size_t sz = size_of(r);
            if (r->handle != FREE) {
                if (wr != rd) {
                    memmove(s->base + wr, r, sz);
                    smallrec *m = (smallrec *)(s->base + wr);
                    *cell(m->handle) = m;
                    st.moved++;
                }
                wr += sz;
            }
            rd += sz;
        }
        s->used = wr;
    }
    /* Holes are now at segment ends: a pool's current segment bumps into
     * its own; the others keep theirs as free records. */
    for (size_t i = 0; i < nsegs; i++)
        if (spools[segs[i].pool].cur != (long)i) seg_close(&segs[i]);
    st.compactions++;
    size_t freed = before > st.free_bytes ? before - st.free_bytes : 0;
    pthread_mutex_unlock(&lock);
    return freed;
}

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
