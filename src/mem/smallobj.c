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
} seg;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t seg_sz, cap_bytes, max_obj;
static int seg_node = -1;
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
    cap_bytes = capacity;
    max_obj = maxobj;
    seg_node = node;
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

static smallrec *bump(size_t sz) {
    if (nsegs && segs[nsegs - 1].used + sz <= seg_sz) {
        seg *s = &segs[nsegs - 1];
        smallrec *r = (smallrec *)(s->base + s->used);
        s->used += sz;
        return r;
    }
    if (cap_bytes && (nsegs + 1) * seg_sz > cap_bytes) return NULL;
    if (nsegs == capsegs) {
        size_t nc = capsegs ? capsegs * 2 : 16;
        seg *ns = realloc(segs, nc * sizeof(seg));
        if (!ns) return NULL;
        segs = ns;
        capsegs = nc;
    }
    int huge;
    char *b = gnuma_pool_map(seg_sz, seg_node, 0, &huge);
    if (!b) return NULL;
    /* The tail of the previous segment becomes free records. */
    if (nsegs) {
        seg *ps = &segs[nsegs - 1];
        while (seg_sz - ps->used >= 16) {
            size_t room = seg_sz - ps->used;
            size_t sz = room < (nclasses - 1) * 16 ? room : (nclasses - 1) * 16;
            push_free((smallrec *)(ps->base + ps->used), sz);
            ps->used += sz;
        }
    }
    segs[nsegs].base = b;
    segs[nsegs].used = sz;
    nsegs++;
    st.segments = nsegs;
    st.seg_bytes = nsegs * seg_sz;
    return (smallrec *)b;
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
    /* Holes are now at segment ends: the last segment bumps into its own;
     * earlier ones keep theirs as free records (of the largest class). */
    for (size_t i = 0; i + 1 < nsegs; i++) {
        seg *s = &segs[i];
        while (seg_sz - s->used >= 16) {
            size_t room = seg_sz - s->used;
            size_t sz = room < (nclasses - 1) * 16 ? room : (nclasses - 1) * 16;
            push_free((smallrec *)(s->base + s->used), sz);
            s->used += sz;
        }
    }
    st.compactions++;
    size_t freed = before > st.free_bytes ? before - st.free_bytes : 0;
    pthread_mutex_unlock(&lock);
    return freed;
}

void smallobj_stats_get(smallobj_stats *out) {
    pthread_mutex_lock(&lock);
    *out = st;
    out->capacity = cap_bytes;
    pthread_mutex_unlock(&lock);
}
