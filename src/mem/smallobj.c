/* smallobj.c -- the compact small-object arena (see smallobj.h).
 *
 * Records are bump-allocated in segments, byte-aligned. A freed record
 * merges with a free neighbour on either side (a free record ends with
 * its size, and a record's first word has PREVFREE when the one before it
 * is free) and goes on the doubly linked free list of its exact size (a
 * class per byte); one that ends at a current segment's bump point goes
 * back to it instead. A request takes, in order: a free record of its
 * size or up to SLACK_CLASSES classes more, whole (its cap says the room
 * it has); the front of the smallest larger free record, split; the bump
 * point; a new segment. So records of other sizes reuse the space freed
 * (values overwritten with other sizes, a full fixed pool whose eviction
 * frees neighbours), as a segregated-fit allocator does. Free-list links
 * are the records' addresses: a free record needs MINREC bytes (handle
 * FREE, cap, prev, next, its segment's index, its size at the end); no
 * record is smaller.
 *
 * Compaction evacuates a sparse segment: its free records are unlinked,
 * its live records are copied to free records of their class elsewhere,
 * the bump point of a current segment, or the front of a larger free
 * record (their handle cells re-pointed), and the emptied segment is
 * handed to the reclaim thread (mem/reclaim.h),
 * which unmaps it after the step: munmap frees every page (and, the first
 * time after a large load on a shadow-paging VM, takes tens of
 * milliseconds), and the caller excludes readers for the whole step. One
 * segment per step, so the caller's pause is bounded by copying at most
 * one segment.
 *
 * Invariants: every mapped segment is a sequence of records from its start
 * up to its bump offset; a record's size is 8 + cap, at least MINREC and
 * at most the largest class; a record is live (its handle cell points at
 * it) or free (handle FREE, on the list of class size, its last 4 bytes
 * its size; off the lists only inside a compaction step); a record has
 * PREVFREE exactly when the record before it is free; the record before
 * a current segment's bump point is live; a segment's `live` is the sum of
 * its live records' sizes; st.free_bytes is the sum of the listed free
 * records' sizes. smallobj_check verifies them. */
#include "mem/smallobj.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mem/numa.h"
#include "mem/reclaim.h"

#define HCHUNK 16384      /* handle cells per chunk */
#define HDIR (((size_t)1 << 31) / HCHUNK) /* chunks: handles are below 2^31 */
#define CELL SMALLOBJ_CELL_BYTES
#define HDR 8
#define FREE 0x7fffffffu   /* the handle part of a free record's first word */
#define MINREC 32          /* handle, cap, two 8-byte links, segment, size at the end */
#define PREVFREE 0x80000000u /* in the first word: the record before this one is free */
#define SLACK_CLASSES 12   /* a free record may be up to 12 bytes too big */

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
static size_t seg_sz;
static spool spools[MAXSPOOLS];
static int nspools;
static seg *segs;
static size_t nsegs, capsegs;  /* slots in use (some may be released) */
static size_t *byaddr;         /* mapped segment indices sorted by base */
static size_t nbyaddr;
/* The handle table: chunks of HCHUNK cells of CELL bytes, each a record's
 * address (user-space addresses fit 48 bits) or, free, the next free
 * cell's handle. The directory never moves: readers find records through
 * it without the lock while another thread adds a chunk. Handle 0 is
 * never given out. */
static unsigned char *hchunks[HDIR];
static uint32_t hfree_head = UINT32_MAX; /* free cells chain through the cell */
static uint32_t hnext = 1;
static smallrec **freelist;    /* per size class (a byte each): head, NULL */
static uint64_t *nonempty;     /* a bit per class whose list has a record */
static size_t maxcl;           /* no class above it has a free record */
static size_t nclasses, most;  /* most: the largest class's size */
static smallobj_stats st;

/* Frees since the last evacuation that could not finish: retrying before
 * the arena changed would copy for nothing. */
static uint64_t frees_since_stuck = UINT64_MAX;
#define RETRY_FREES 4096

/* A record's header words (records are byte-aligned: read bytewise). The
 * first is the arena's: PREVFREE and the handle (or FREE), changed under
 * the lock when a neighbour is freed or taken. The cap is written only
 * when the record is made, so an owner reads it without the lock. */
static uint32_t get_word(const smallrec *r) {
    uint32_t v;
    memcpy(&v, r->hdr, 4);
    return v;
}
static void set_word(smallrec *r, uint32_t v) { memcpy(r->hdr, &v, 4); }
static uint32_t get_handle(const smallrec *r) { return get_word(r) & ~PREVFREE; }
static void set_handle(smallrec *r, uint32_t h) { set_word(r, (get_word(r) & PREVFREE) | h); }
static int has_prevfree(const smallrec *r) { return (get_word(r) & PREVFREE) != 0; }
static void set_capw(smallrec *r, uint32_t v) { memcpy(r->hdr + 4, &v, 4); }
size_t smallobj_cap(const smallrec *r) {
    uint32_t v;
    memcpy(&v, r->hdr + 4, 4);
    return v;
}

/* Size of a record with room for n bytes. */
static size_t rec_size(size_t n) { return HDR + n < MINREC ? MINREC : HDR + n; }
static size_t size_of(const smallrec *r) { return HDR + smallobj_cap(r); }
/* The cap that makes a record of sz bytes (>= MINREC). */
static uint32_t cap_for(size_t sz) { return (uint32_t)(sz - HDR); }

/* ---- segments ------------------------------------------------------------- */

static int in_seg(size_t si, const void *p) {
    return (const char *)p >= segs[si].base && (const char *)p < segs[si].base + seg_sz;
}
static int is_current(size_t si) { return spools[segs[si].pool].cur == (long)si; }

/* The record after r (sz bytes) in segment si; NULL at the bump point. */
static smallrec *next_of(size_t si, smallrec *r, size_t sz) {
    char *n = (char *)r + sz;
    return n < segs[si].base + segs[si].used ? (smallrec *)n : NULL;
}
static void set_prevfree(size_t si, smallrec *r, size_t sz, int isfree) {
    smallrec *n = next_of(si, r, sz);
    if (n) set_word(n, isfree ? get_word(n) | PREVFREE : get_word(n) & ~PREVFREE);
}
/* The free record before r (r has PREVFREE). */
static smallrec *prev_free(smallrec *r) {
    uint32_t psz;
    memcpy(&psz, (char *)r - 4, 4);
    smallrec *p = (smallrec *)((char *)r - psz);
    assert(get_handle(p) == FREE && size_of(p) == psz);
    return p;
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
    assert(in_seg(si, p));
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

/* A free record's links (at any byte address: read and written bytewise). */
static smallrec *link_get(const smallrec *r, int off) {
    smallrec *v;
    memcpy(&v, (const char *)r + off, sizeof(v));
    return v;
}
static void link_set(smallrec *r, int off, smallrec *v) { memcpy((char *)r + off, &v, sizeof(v)); }
#define PREV 8
#define NEXT 16
#define SEGI 24 /* a free record's segment index (4 bytes) */
static size_t free_seg(const smallrec *r) {
    uint32_t si;
    memcpy(&si, (const char *)r + SEGI, 4);
    return si;
}

/* Turn the sz bytes at r (segment si) into a listed free record; prevfree:
 * whether the record before it is free. */
static void push_free(size_t si, smallrec *r, size_t sz, int prevfree) {
    assert(sz >= MINREC && sz <= most);
    set_word(r, FREE | (prevfree ? PREVFREE : 0));
    set_capw(r, cap_for(sz));
    uint32_t tag = (uint32_t)sz;
    memcpy((char *)r + sz - 4, &tag, 4);
    size_t cl = sz;
    uint32_t segi = (uint32_t)si;
    memcpy((char *)r + SEGI, &segi, 4);
    link_set(r, PREV, NULL);
    link_set(r, NEXT, freelist[cl]);
    if (freelist[cl]) link_set(freelist[cl], PREV, r);
    freelist[cl] = r;
    nonempty[cl / 64] |= 1ull << (cl % 64);
    if (cl > maxcl) maxcl = cl;
    st.free_bytes += sz;
    set_prevfree(si, r, sz, 1);
}

/* Off its list (it stays marked FREE; the caller decides what it becomes). */
static void unlink_free(smallrec *r) {
    size_t sz = size_of(r), cl = sz;
    smallrec *prev = link_get(r, PREV), *next = link_get(r, NEXT);
    if (prev) link_set(prev, NEXT, next);
    else freelist[cl] = next;
    if (next) link_set(next, PREV, prev);
    if (!freelist[cl]) nonempty[cl / 64] &= ~(1ull << (cl % 64));
    st.free_bytes -= sz;
}

/* The sz bytes at r (segment si; r's PREVFREE is right) are no longer
 * live: merged with free neighbours (up to the largest class), given back
 * to the bump point when they end there, else listed. */
static void release_space(size_t si, smallrec *r, size_t sz) {
    int pf = has_prevfree(r);
    smallrec *n = next_of(si, r, sz);
    size_t nsz = n && get_handle(n) == FREE ? size_of(n) : 0;
    if (nsz && sz + nsz <= most) {
        unlink_free(n);
        sz += nsz;
        n = next_of(si, r, sz);
    }
    if (pf) {
        smallrec *p = prev_free(r);
        size_t psz = size_of(p);
        if (psz + sz <= most) {
            unlink_free(p);
            pf = has_prevfree(p);
            r = p;
            sz += psz;
        }
    }
    seg *s = &segs[si];
    if (!n && is_current(si)) {
        s->used = (size_t)((char *)r - s->base);
        while (pf) { /* free records before it (merging stopped at the largest class) */
            smallrec *p = prev_free(r);
            pf = has_prevfree(p);
            unlink_free(p);
            s->used = (size_t)((char *)p - s->base);
            r = p;
        }
        return;
    }
    push_free(si, r, sz, pf);
}

/* The rest of segment s as free records (it stops being bumped into); a
 * tail shorter than MINREC stays unused. The record before the bump point
 * is live (invariant), so the first piece has no free record before it. */
static void seg_close(size_t si) {
    seg *s = &segs[si];
    int pf = 0;
    while (seg_sz - s->used >= MINREC) {
        size_t room = seg_sz - s->used;
        size_t sz = room <= most ? room : room - most >= MINREC ? most : room - MINREC;
        smallrec *r = (smallrec *)(s->base + s->used);
        s->used += sz;
        push_free(si, r, sz, pf);
        pf = 1;
    }
}

/* ---- set-up -------------------------------------------------------------- */

int smallobj_init(size_t capacity, size_t segsize, size_t maxobj, int node) {
    assert(segsize >= 4096 && (segsize & (segsize - 1)) == 0);
    seg_sz = segsize;
    spools[0] = (spool){node, capacity, 0, -1};
    nspools = 1;
    /* A list head per byte of size, and room for the slack search above
     * the largest class: 2 MiB of heads for 256 KiB values. Mapped, not
     * allocated, so that only the pages of the classes in use become
     * resident: a calloc may be given pages the allocator zeroes (all of
     * them resident) and counts the whole array as allocated memory (INFO
     * used_memory). */
    assert(maxobj < ((size_t)1 << 30));
    nclasses = rec_size(maxobj) + 1 + SLACK_CLASSES;
    most = nclasses - 1;
    void *heads = mmap(NULL, nclasses * sizeof(*freelist), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (heads == MAP_FAILED) return -1;
    madvise(heads, nclasses * sizeof(*freelist), MADV_NOHUGEPAGE);
    freelist = heads;
    nonempty = calloc((nclasses + 63) / 64, sizeof(*nonempty));
    if (!nonempty) return -1;
    return 0;
}

int smallobj_add_pool(int node, size_t capacity) {
    if (nspools == MAXSPOOLS || capacity < seg_sz) return -1;
    pthread_mutex_lock(&lock);
    spools[nspools++] = (spool){node, capacity, 0, -1};
    pthread_mutex_unlock(&lock);
    return 0;
}

/* A cell's 48-bit content, written as a 4-byte and a 2-byte half. */
static uint64_t cell_get(uint32_t h) {
    const unsigned char *c = hchunks[h / HCHUNK] + (size_t)(h % HCHUNK) * CELL;
    uint32_t lo;
    uint16_t hi;
    memcpy(&lo, c, 4);
    memcpy(&hi, c + 4, 2);
    return (uint64_t)hi << 32 | lo;
}
static void cell_set(uint32_t h, uint64_t v) {
    assert(v >> 48 == 0);
    unsigned char *c = hchunks[h / HCHUNK] + (size_t)(h % HCHUNK) * CELL;
    uint32_t lo = (uint32_t)v;
    uint16_t hi = (uint16_t)(v >> 32);
    memcpy(c, &lo, 4);
    memcpy(c + 4, &hi, 2);
}
static void cell_point(uint32_t h, const smallrec *r) { cell_set(h, (uint64_t)(uintptr_t)r); }

smallrec *smallobj_rec(uint32_t h) { return (smallrec *)(uintptr_t)cell_get(h); }

static int handle_new(uint32_t *out) {
    if (hfree_head != UINT32_MAX) {
        *out = hfree_head;
        hfree_head = (uint32_t)cell_get(hfree_head);
        return 0;
    }
    if (hnext >= FREE) return -1;
    if (!hchunks[hnext / HCHUNK]) {
        unsigned char *c = calloc(HCHUNK, CELL);
        if (!c) return -1;
        __atomic_store_n(&hchunks[hnext / HCHUNK], c, __ATOMIC_RELEASE);
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

/* A listed free record of class c or more (from c up), not in segment
 * `avoid` (-1: any); NULL when there is none. */
static smallrec *free_from(size_t c, long avoid) {
    if (!st.free_bytes || c > maxcl) return NULL;
    for (size_t w = c / 64; w <= maxcl / 64; w++) {
        uint64_t bits = nonempty[w];
        if (w == c / 64) bits &= ~0ull << (c % 64);
        for (; bits; bits &= bits - 1) {
            size_t k = w * 64 + (size_t)__builtin_ctzll(bits);
            for (smallrec *r = freelist[k]; r; r = link_get(r, NEXT))
                if (avoid < 0 || !in_seg((size_t)avoid, r)) return r;
        }
    }
    if (avoid < 0) maxcl = c - 1; /* none from c up: the next search stops sooner */
    return NULL;
}

/* A listed free record of class cl up to upto (its class in *c), not in
 * segment `avoid`: one a request of class cl takes whole. NULL: none. */
static smallrec *fit_free(size_t cl, size_t upto, long avoid, size_t *c) {
    for (*c = cl; *c <= upto; (*c)++)
        for (smallrec *r = freelist[*c]; r; r = link_get(r, NEXT))
            if (avoid < 0 || !in_seg((size_t)avoid, r)) return r;
    return NULL;
}

/* The least class of a free record that a record of sz bytes splits: the
 * rest must make a free record. */
static size_t split_class(size_t sz) { return sz + MINREC; }

/* The front sz bytes of the smallest free record larger by MINREC or
 * more, not in segment `avoid`; the rest stays free. NULL: none. */
static smallrec *split_free(size_t sz, long avoid, size_t *si) {
    smallrec *r = free_from(split_class(sz), avoid);
    if (!r) return NULL;
    size_t big = size_of(r);
    unlink_free(r);
    *si = free_seg(r);
    push_free(*si, (smallrec *)((char *)r + sz), big - sz, 0);
    return r;
}

/* *sz bytes of record space, not in segment `avoid` (-1: any). An
 * allocation (slack) goes in the order of the header comment; a
 * compaction move takes its own size, else the bump point (packing the
 * moved records together), else a split. *sz becomes the record's size,
 * *si its segment. The record's PREVFREE is right for its place; the rest
 * of its header is the caller's to write. */
static smallrec *take(size_t *sz, long avoid, int slack, int may_map, size_t *si) {
    size_t cl = *sz, c;
    assert(cl + SLACK_CLASSES < nclasses);
    smallrec *r = fit_free(cl, cl + (slack ? SLACK_CLASSES : 0), avoid, &c);
    if (r) {
        unlink_free(r);
        *sz = c;
        *si = free_seg(r);
        set_prevfree(*si, r, *sz, 0);
        return r;
    }
    if (slack && (r = split_free(*sz, avoid, si))) return r;
    for (int p = 0; p < nspools; p++) {
        spool *sp = &spools[p];
        if (sp->cur >= 0 && sp->cur != avoid && segs[sp->cur].used + *sz <= seg_sz) {
            seg *s = &segs[sp->cur];
            r = (smallrec *)(s->base + s->used);
            s->used += *sz;
            *si = (size_t)sp->cur;
            set_word(r, 0); /* the record before the bump point is live */
            return r;
        }
        long n = may_map ? seg_new(p) : -1;
        if (n < 0) continue;
        if (sp->cur >= 0) seg_close((size_t)sp->cur);
        sp->cur = n;
        segs[n].used = *sz;
        *si = (size_t)n;
        r = (smallrec *)segs[n].base;
        set_word(r, 0);
        return r;
    }
    return slack ? NULL : split_free(*sz, avoid, si);
}

uint32_t smallobj_alloc(size_t n) {
    size_t sz = rec_size(n);
    pthread_mutex_lock(&lock);
    size_t si;
    smallrec *r = take(&sz, -1, 1, 1, &si);
    uint32_t h;
    if (!r || handle_new(&h) != 0) {
        if (r) release_space(si, r, sz);
        st.alloc_fail++;
        pthread_mutex_unlock(&lock);
        return SMALLOBJ_NONE;
    }
    set_capw(r, cap_for(sz));
    set_handle(r, h);
    cell_point(h, r);
    segs[si].live += sz;
    st.live_records++;
    /* Stored atomically: smallobj_live_bytes reads it without the lock. */
    __atomic_store_n(&st.live_bytes, st.live_bytes + sz, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
    return h;
}

size_t smallobj_record_size(const smallrec *r) { return size_of(r); }
size_t smallobj_size_for(size_t n) { return rec_size(n); }

void smallobj_free(uint32_t h) {
    if (h == SMALLOBJ_NONE) return;
    pthread_mutex_lock(&lock);
    smallrec *r = smallobj_rec(h);
    size_t sz = size_of(r);
    assert(get_handle(r) == h);
    size_t si = seg_of(r);
    segs[si].live -= sz;
    release_space(si, r, sz);
    if (frees_since_stuck < RETRY_FREES) frees_since_stuck++;
    st.live_records--;
    __atomic_store_n(&st.live_bytes, st.live_bytes - sz, __ATOMIC_RELAXED);
    cell_set(h, hfree_head);
    hfree_head = h;
    pthread_mutex_unlock(&lock);
}

int smallobj_exhausted(size_t need, size_t rec) {
    pthread_mutex_lock(&lock);
    size_t room = st.free_bytes;
    int bounded = nspools > 0, place = rec == 0;
    for (int p = 0; p < nspools; p++) {
        const spool *sp = &spools[p];
        size_t unmapped = sp->cap_bytes ? sp->cap_bytes - sp->nsegs * seg_sz : 0;
        if (!sp->cap_bytes) bounded = 0;
        room += unmapped;
        if (unmapped >= seg_sz) place = 1;
        if (sp->cur >= 0) {
            room += seg_sz - segs[sp->cur].used;
            if (segs[sp->cur].used + rec <= seg_sz) place = 1;
        }
    }
    if (bounded && !place && rec + SLACK_CLASSES < nclasses) {
        /* What take() would find: its class or a little more, or one to split. */
        size_t c;
        place = fit_free(rec, rec + SLACK_CLASSES, -1, &c) || free_from(split_class(rec), -1);
    }
    pthread_mutex_unlock(&lock);
    return bounded && (room < need || !place);
}

/* ---- compaction ------------------------------------------------------------ */

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
        if (get_handle(r) == FREE) unlink_free(r);
        off += sz;
    }
    size_t off = 0;
    for (; off < s->used;) {
        smallrec *r = (smallrec *)(s->base + off);
        size_t sz = size_of(r);
        if (get_handle(r) != FREE) {
            size_t to, nsz = sz;
            smallrec *n = take(&nsz, v, 0, 0, &to);
            if (!n) break; /* full elsewhere: keep the rest here */
            s = &segs[v];  /* take() may have grown the table */
            uint32_t pf = get_word(n) & PREVFREE;
            memcpy(n, r, sz);
            set_word(n, (get_word(n) & ~PREVFREE) | pf);
            cell_point(get_handle(n), n);
            segs[to].live += sz;
            s->live -= sz;
            set_handle(r, FREE);
            st.moved++;
        }
        off += sz;
    }
    if (off < s->used) {
        /* Interrupted: what was free or emptied here is free again. */
        for (size_t o = 0; o < s->used;) {
            smallrec *r = (smallrec *)(s->base + o);
            size_t sz = size_of(r);
            if (get_handle(r) == FREE) push_free((size_t)v, r, sz, has_prevfree(r));
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

int smallobj_check(void) {
    int rc = 0;
    pthread_mutex_lock(&lock);
    size_t free_listed = 0, live_recs = 0;
    for (size_t c = 0; c < nclasses && !rc; c++) {
        if (((nonempty[c / 64] >> (c % 64)) & 1) != (freelist[c] != NULL)) rc = -1;
        for (smallrec *r = freelist[c], *prev = NULL; r && !rc; prev = r, r = link_get(r, NEXT)) {
            if (get_handle(r) != FREE || size_of(r) != c || link_get(r, PREV) != prev) rc = -2;
            free_listed += c;
        }
    }
    if (!rc && free_listed != st.free_bytes) rc = -3;
    for (size_t si = 0; si < nsegs && !rc; si++) {
        const seg *s = &segs[si];
        if (!s->base) continue;
        size_t off = 0, live = 0;
        int prevfree = 0;
        while (off < s->used && !rc) {
            smallrec *r = (smallrec *)(s->base + off);
            size_t sz = size_of(r);
            uint32_t tag;
            if (sz < MINREC || sz > most || off + sz > s->used) rc = -4;
            else if (has_prevfree(r) != prevfree) rc = -5;
            else if (get_handle(r) == FREE && (memcpy(&tag, (char *)r + sz - 4, 4), tag != sz)) rc = -6;
            else if (get_handle(r) == FREE && free_seg(r) != si) rc = -11;
            else if (get_handle(r) != FREE && smallobj_rec(get_handle(r)) != r) rc = -7;
            if (get_handle(r) != FREE) {
                live += sz;
                live_recs++;
            }
            prevfree = get_handle(r) == FREE;
            off += sz;
        }
        if (!rc && live != s->live) rc = -8;
        if (!rc && is_current(si) && prevfree) rc = -9;
    }
    if (!rc && live_recs != st.live_records) rc = -10;
    pthread_mutex_unlock(&lock);
    return rc;
}
