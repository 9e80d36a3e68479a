/* smallobj.c -- the compact small-object arena (see smallobj.h).
 *
 * Invariant: every segment is a sequence of records from its start up to
 * its bump offset, each record's size is 16 + round16(cap + 1), and a
 * record is either live (referenced by exactly one handle cell) or on the
 * free list of its size class. That sequence is what compaction walks. */
#include "mem/smallobj.h"

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

static size_t rec_size(size_t cap) { return 16 + ((cap + 1 + 15) & ~(size_t)15); }

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
    /* The tail of the previous segment stays as one dead record. */
    if (nsegs) {
        seg *ps = &segs[nsegs - 1];
        if (seg_sz - ps->used >= 32) {
            smallrec *r = (smallrec *)(ps->base + ps->used);
            r->cap = (uint32_t)(seg_sz - ps->used - 17);
            r->cap &= ~15u; /* rec_size(cap) <= remaining */
            r->live = 0;
            ps->used += rec_size(r->cap);
            st.free_bytes += rec_size(r->cap);
            size_t cl = rec_size(r->cap) / 16;
            if (cl < nclasses) {
                *(smallrec **)r->data = freelist[cl];
                freelist[cl] = r;
            }
        }
    }
    segs[nsegs].base = b;
    segs[nsegs].used = sz;
    nsegs++;
    st.segments = nsegs;
    st.seg_bytes = nsegs * seg_sz;
    return (smallrec *)b;
}

smallrec **smallobj_alloc(size_t cap) {
    size_t sz = rec_size(cap);
    size_t cl = sz / 16;
    pthread_mutex_lock(&lock);
    smallrec *r = NULL;
    if (cl < nclasses && freelist[cl]) {
        r = freelist[cl];
        freelist[cl] = *(smallrec **)r->data;
        st.free_bytes -= sz;
    } else {
        r = bump(sz);
    }
    uint32_t h;
    if (!r || handle_new(&h) != 0) {
        st.alloc_fail++;
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    r->len = 0;
    r->cap = (uint32_t)((sz - 16) - 1);
    r->handle = h;
    r->live = 1;
    r->data[0] = '\0';
    *cell(h) = r;
    st.live_records++;
    st.live_bytes += sz;
    smallrec **c = cell(h);
    pthread_mutex_unlock(&lock);
    return c;
}

void smallobj_free(smallrec **hc) {
    if (!hc) return;
    pthread_mutex_lock(&lock);
    smallrec *r = *hc;
    size_t sz = rec_size(r->cap);
    uint32_t h = r->handle;
    r->live = 0;
    size_t cl = sz / 16;
    *(smallrec **)r->data = freelist[cl];
    freelist[cl] = r;
    st.free_bytes += sz;
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
            size_t sz = rec_size(r->cap);
            if (r->live) {
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
     * earlier ones keep theirs as one free record each. */
    for (size_t i = 0; i + 1 < nsegs; i++) {
        seg *s = &segs[i];
        if (seg_sz - s->used < 32) continue;
        smallrec *r = (smallrec *)(s->base + s->used);
        size_t room = seg_sz - s->used;
        /* Largest class that fits and is a valid record size. */
        size_t cap = room - 17;
        cap &= ~(size_t)15;
        while (rec_size(cap) > room) cap -= 16;
        size_t sz = rec_size(cap);
        size_t cl = sz / 16;
        if (cl >= nclasses) {
            /* Bigger than any object: cut it into max-class records. */
            size_t mcap = (nclasses - 1) * 16 - 17;
            mcap &= ~(size_t)15;
            while (rec_size(mcap) / 16 >= nclasses) mcap -= 16;
            size_t off = s->used;
            while (seg_sz - off >= rec_size(mcap)) {
                smallrec *q = (smallrec *)(s->base + off);
                q->cap = (uint32_t)mcap;
                q->live = 0;
                *(smallrec **)q->data = freelist[rec_size(mcap) / 16];
                freelist[rec_size(mcap) / 16] = q;
                off += rec_size(mcap);
                st.free_bytes += rec_size(mcap);
            }
            s->used = off;
            continue;
        }
        r->cap = (uint32_t)cap;
        r->live = 0;
        *(smallrec **)r->data = freelist[cl];
        freelist[cl] = r;
        s->used += sz;
        st.free_bytes += sz;
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
