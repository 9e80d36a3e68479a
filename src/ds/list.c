/* list.c -- the deque of packed chunks behind the list type (see list.h).
 *
 * Why this shape. A list is read and written mostly at its ends and walked
 * in order; what costs memory is the per-element overhead. So elements are
 * packed back to back in chunks (one prefix byte for an element shorter
 * than 128 bytes, no per-element pointer, no back-length byte), and the
 * chunks hang off a small directory that keeps each chunk's element count
 * next to its pointer. Push/pop touch one end chunk; an index walks the
 * counts (contiguous in the directory, so no chunk is touched on the way)
 * from the nearer end, then scans inside one chunk; a middle edit rewrites
 * one chunk and splits it when it outgrows the limit.
 *
 * Element encoding (first byte h), canonical: a value has exactly one
 * encoding, so two elements are equal iff their encodings are.
 *   h < 0x80          string of h bytes follows
 *   0x80 | hi6, lo8   string of (hi6 << 8 | lo8) bytes, 128..16383
 *   0xC0 + v          integer 0..31
 *   0xE0 + k, k bytes integer, k = 1..8 little-endian two's complement
 *                     (the shortest k that holds it)
 *   0xF0, len32       string of len32 bytes (16384 and more)
 * A value is an integer iff its text is a canonical decimal int64 (what
 * Redis's string2ll accepts), and then it is always stored as one.
 *
 * Chunks are plain heap blocks (malloc'd): a 16-byte header (capacity, the
 * live byte range [start, end) and the offset of the last element) and the
 * data. Free space may sit at both sides of the live range so that pushes
 * at either end are amortised O(1); a chunk grows geometrically up to the
 * limit (8 KiB by default, header included, so a full chunk is exactly one
 * allocator size class). We keep chunks out of the collection arena on
 * purpose: a list chunk is itself a small bump-filled block of
 * length-prefixed entries that grows, shrinks and is rewritten in place;
 * in the arena every such rewrite would be a fresh entry plus dead bytes
 * and a compaction pass to re-point the directory.
 *
 * Walking backwards. The prefix encoding only reads forwards. The last
 * element's offset is kept in the chunk header (so the tail is O(1) to
 * read); removing it needs the offset of the one before. For chunks of
 * TIX_MIN or more elements the list keeps one lazily built offset index
 * (tix) for one chunk: RPOP, LINDEX into the same chunk and backward
 * iteration use it; every change to that chunk either updates it (pushes
 * and pops at its ends) or drops it.
 *
 * Invariant (list_check): every chunk holds at least one element; the
 * directory's counts sum to the length; walking a chunk from start decodes
 * exactly its count of well-formed canonical elements and ends at end, and
 * last is the offset of the final one; chunk_bytes is the sum of the chunks'
 * allocation sizes; a live tix names a chunk of the list and holds exactly
 * its element offsets. Chunks respect the limit when written (a chunk may
 * exceed it only with a single element), but the limit can change
 * (CONFIG SET), so it is not part of the invariant. */
#include "ds/list.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "util/endian.h"
#include "util/strutil.h"

typedef struct lchunk {
    uint32_t cap;     /* data bytes available */
    uint32_t start;   /* live bytes are d[start, end) */
    uint32_t end;
    uint32_t last;    /* offset of the last element */
    unsigned char d[];
} lchunk;

#define CHDR ((size_t)sizeof(lchunk))
#define LIST_MAX_STR ((size_t)UINT32_MAX - 64)

typedef struct lslot {
    lchunk *c;
    uint32_t n;       /* elements in c */
    uint32_t pad;
} lslot;

/* Offsets of the elements of one chunk: offs[lo, hi). */
typedef struct ltix {
    const lchunk *c;     /* NULL when nothing is cached */
    const lchunk *hint;  /* chunk of the last in-chunk scan (only compared) */
    uint32_t *offs;
    uint32_t lo, hi, cap;
} ltix;

#define TIX_MIN 32    /* chunks with fewer elements are simply scanned */
#define TIX_SCAN 16   /* ... and so are positions this close to the front */

struct glist {
    lslot *dir;       /* ring of cap slots, logical i at (head + i) & (cap - 1) */
    uint32_t cap, head, nch;
    uint64_t len;
    size_t chunk_bytes;
    ltix *tix;
};

/* ---- element encoding -------------------------------------------------- */

static inline size_t el_size(const unsigned char *p) {
    unsigned h = p[0];
    if (h < 0x80) return 1 + (size_t)h;
    if (h < 0xC0) return 2 + ((size_t)(h & 0x3F) << 8 | p[1]);
    if (h < 0xE0) return 1;
    if (h < 0xF0) return 1 + (size_t)(h - 0xE0);
    return 5 + (size_t)le_get32(p + 1);
}

static inline size_t el_decode(const unsigned char *p, list_elem *e) {
    unsigned h = p[0];
    if (h < 0x80) {
        e->isint = 0;
        e->p = (const char *)p + 1;
        e->n = h;
        return 1 + (size_t)h;
    }
    if (h < 0xC0) {
        e->isint = 0;
        e->n = (size_t)(h & 0x3F) << 8 | p[1];
        e->p = (const char *)p + 2;
        return 2 + e->n;
    }
    if (h < 0xE0) {
        e->isint = 1;
        e->v = h - 0xC0;
        e->p = NULL;
        e->n = 0;
        return 1;
    }
    if (h < 0xF0) {
        unsigned k = h - 0xE0;
        uint64_t u = 0;
        for (unsigned i = 0; i < k; i++) u |= (uint64_t)p[1 + i] << (8 * i);
        if (k < 8 && (u >> (8 * k - 1) & 1)) u |= ~(uint64_t)0 << (8 * k);
        e->isint = 1;
        e->v = (long long)u;
        e->p = NULL;
        e->n = 0;
        return 1 + k;
    }
    e->isint = 0;
    e->n = le_get32(p + 1);
    e->p = (const char *)p + 5;
    return 5 + e->n;
}

static unsigned int_bytes(long long v) {
    unsigned k = 1;
    while (k < 8) {
        long long lim = 1LL << (8 * k - 1);
        if (v >= -lim && v < lim) break;
        k++;
    }
    return k;
}

static size_t enc_size(const list_val *v) {
    if (v->isint) return v->v >= 0 && v->v < 32 ? 1 : 1 + int_bytes(v->v);
    if (v->n < 128) return 1 + v->n;
    if (v->n < 16384) return 2 + v->n;
    return 5 + v->n;
}

static void enc_write(unsigned char *d, const list_val *v) {
    if (v->isint) {
        if (v->v >= 0 && v->v < 32) {
            d[0] = (unsigned char)(0xC0 + v->v);
            return;
        }
        unsigned k = int_bytes(v->v);
        uint64_t u = (uint64_t)v->v;
        d[0] = (unsigned char)(0xE0 + k);
        for (unsigned i = 0; i < k; i++) d[1 + i] = (unsigned char)(u >> (8 * i));
        return;
    }
    size_t h;
    if (v->n < 128) {
        d[0] = (unsigned char)v->n;
        h = 1;
    } else if (v->n < 16384) {
        d[0] = (unsigned char)(0x80 | v->n >> 8);
        d[1] = (unsigned char)(v->n & 0xFF);
        h = 2;
    } else {
        d[0] = 0xF0;
        d[1] = (unsigned char)v->n;
        d[2] = (unsigned char)(v->n >> 8);
        d[3] = (unsigned char)(v->n >> 16);
        d[4] = (unsigned char)(v->n >> 24);
        h = 5;
    }
    if (v->n) memcpy(d + h, v->p, v->n);
}

void list_val_init(list_val *v, const void *p, size_t n) {
    v->p = p;
    v->n = n;
    v->isint = 0;
    v->v = 0;
    const char *s = p;
    if (n >= 1 && n <= 20 && ((s[0] >= '0' && s[0] <= '9') || s[0] == '-')) {
        long long x;
        if (str_to_ll(s, n, &x)) {
            v->isint = 1;
            v->v = x;
        }
    }
}

void list_val_from_elem(list_val *v, const list_elem *e) {
    v->p = e->p;
    v->n = e->n;
    v->v = e->v;
    v->isint = e->isint;
}

const char *list_elem_text(const list_elem *e, char *buf, size_t *n) {
    if (!e->isint) {
        *n = e->n;
        return e->p;
    }
    *n = (size_t)ll_to_str(buf, STRUTIL_LLSTR, e->v);
    return buf;
}

int list_elem_eq(const list_elem *e, const list_val *v) {
    if (e->isint != v->isint) return 0;
    if (e->isint) return e->v == v->v;
    return e->n == v->n && (e->n == 0 || memcmp(e->p, v->p, e->n) == 0);
}

/* ---- limits -------------------------------------------------------------- */

void list_limit_from_fill(list_limit *lim, long long fill) {
    if (fill < 0) {
        long long lvl = -fill;
        if (lvl > 5) lvl = 5;
        lim->bytes = (size_t)4096 << (lvl - 1);
        lim->count = 0;
    } else {
        if (fill < 1) fill = 1;
        if (fill > 32767) fill = 32767;
        lim->bytes = 8192;
        lim->count = (uint32_t)fill;
    }
}

static inline size_t data_limit(const list_limit *lim) { return lim->bytes > CHDR + 16 ? lim->bytes - CHDR : 16; }

static inline int count_ok(const list_limit *lim, uint64_t n) { return !lim->count || n <= lim->count; }

/* ---- directory ------------------------------------------------------------ */

static inline lslot *SL(const glist *l, uint32_t i) { return &l->dir[(l->head + i) & (l->cap - 1)]; }

/* Resize the ring to newcap (a power of two >= nch), logical order kept. */
static int dir_resize(glist *l, uint32_t newcap) {
    lslot *nd = malloc(sizeof(lslot) * newcap);
    if (!nd) return LIST_ENOMEM;
    for (uint32_t i = 0; i < l->nch; i++) nd[i] = *SL(l, i);
    free(l->dir);
    l->dir = nd;
    l->cap = newcap;
    l->head = 0;
    return LIST_OK;
}

/* Room for `more` additional slots. */
static int dir_reserve(glist *l, uint32_t more) {
    if (l->nch + more <= l->cap) return LIST_OK;
    uint32_t c = l->cap ? l->cap : 1;
    while (c < l->nch + more) c *= 2;
    return dir_resize(l, c);
}

/* Open a slot at logical i (0..nch); capacity reserved by the caller. */
static void dir_insert(glist *l, uint32_t i) {
    if (i < l->nch / 2) {
        l->head = (l->head - 1) & (l->cap - 1);
        for (uint32_t j = 0; j < i; j++) *SL(l, j) = *SL(l, j + 1);
    } else {
        for (uint32_t j = l->nch; j > i; j--) *SL(l, j) = *SL(l, j - 1);
    }
    l->nch++;
}

static void dir_remove(glist *l, uint32_t i) {
    if (i < l->nch / 2) {
        for (uint32_t j = i; j > 0; j--) *SL(l, j) = *SL(l, j - 1);
        l->head = (l->head + 1) & (l->cap - 1);
    } else {
        for (uint32_t j = i; j + 1 < l->nch; j++) *SL(l, j) = *SL(l, j + 1);
    }
    l->nch--;
    if (l->nch == 0) {
        l->head = 0;
    } else if (l->cap >= 16 && l->nch * 4 < l->cap) {
        (void)dir_resize(l, l->cap / 2);   /* keeping the bigger ring is fine too */
    }
}

/* ---- the offset cache -------------------------------------------------------- */

static inline void tix_forget(glist *l, const lchunk *c) {
    if (l->tix && l->tix->c == c) l->tix->c = NULL;
}

/* The cache goes, memory and all. */
static void tix_drop(glist *l) {
    if (!l->tix) return;
    free(l->tix->offs);
    free(l->tix);
    l->tix = NULL;
}

/* Offsets of all n elements of c; NULL (nothing cached) on no memory. */
static ltix *tix_build(glist *l, lchunk *c, uint32_t n) {
    ltix *t = l->tix;
    if (!t) {
        t = l->tix = calloc(1, sizeof(ltix));
        if (!t) return NULL;
    }
    uint32_t head = n / 4 + 4;
    uint32_t need = head + n + n / 4 + 4;
    if (t->cap < need || t->cap > 2 * need + 64) {   /* also give back what a bigger chunk needed */
        uint32_t *no = realloc(t->offs, sizeof(uint32_t) * need);
        if (!no) {
            t->c = NULL;
            return NULL;
        }
        t->offs = no;
        t->cap = need;
    }
    uint32_t off = c->start;
    t->lo = head;
    t->hi = head;
    for (uint32_t i = 0; i < n; i++) {
        t->offs[t->hi++] = off;
        off += (uint32_t)el_size(c->d + off);
    }
    t->c = c;
    return t;
}

static void tix_push_back(glist *l, const lchunk *c, uint32_t off) {
    ltix *t = l->tix;
    if (!t || t->c != c) return;
    if (t->hi == t->cap) {
        uint32_t nc = t->cap + t->cap / 2 + 8;
        uint32_t *no = realloc(t->offs, sizeof(uint32_t) * nc);
        if (!no) {
            t->c = NULL;
            return;
        }
        t->offs = no;
        t->cap = nc;
    }
    t->offs[t->hi++] = off;
}

static void tix_push_front(glist *l, const lchunk *c, uint32_t off) {
    ltix *t = l->tix;
    if (!t || t->c != c) return;
    if (t->lo == 0) {
        t->c = NULL;   /* rebuilt (with room in front) when needed again */
        return;
    }
    t->offs[--t->lo] = off;
}

static inline void tix_pop(glist *l, const lchunk *c, int where, uint32_t k) {
    ltix *t = l->tix;
    if (!t || t->c != c) return;
    if (where == LIST_HEAD) t->lo += k;
    else t->hi -= k;
}

/* ---- chunks ------------------------------------------------------------------ */

static size_t chunk_usable(const lchunk *c) { return malloc_usable_size((void *)c); }

static void chunk_set_cap(lchunk *c, size_t usable) {
    size_t cap = usable - CHDR;
    c->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

static lchunk *chunk_new(glist *l, size_t datacap) {
    lchunk *c = malloc(CHDR + datacap);
    if (!c) return NULL;
    size_t us = chunk_usable(c);
    chunk_set_cap(c, us);
    c->start = c->end = c->last = 0;
    l->chunk_bytes += us;
    return c;
}

/* realloc keeping the bytes (and so the offsets) where they are; the caller
 * guarantees end <= datacap. */
static lchunk *chunk_resize(glist *l, lchunk *c, size_t datacap) {
    size_t old = chunk_usable(c);
    lchunk *n = realloc(c, CHDR + datacap);
    if (!n) return NULL;
    size_t us = chunk_usable(n);
    chunk_set_cap(n, us);
    l->chunk_bytes = l->chunk_bytes - old + us;
    if (l->tix && l->tix->c == c) l->tix->c = n;
    return n;
}

static void chunk_release(glist *l, lchunk *c) {
    tix_forget(l, c);
    l->chunk_bytes -= chunk_usable(c);
    free(c);
}

/* Move the live bytes to start at ns (the cache no longer matches). */
static void chunk_move(glist *l, lchunk *c, uint32_t ns) {
    if (ns == c->start) return;
    tix_forget(l, c);
    uint32_t used = c->end - c->start;
    memmove(c->d + ns, c->d + c->start, used);
    c->last = c->last - c->start + ns;
    c->start = ns;
    c->end = ns + used;
}

/* Offset of the last of the n elements of c, by scanning. */
static uint32_t chunk_scan_last(const lchunk *c, uint32_t n) {
    uint32_t off = c->start;
    for (uint32_t i = 0; i + 1 < n; i++) off += (uint32_t)el_size(c->d + off);
    return off;
}

/* Offset of element k of the n elements of c. */
static uint32_t chunk_elem_off(glist *l, lchunk *c, uint32_t n, uint32_t k) {
    if (k == 0) return c->start;
    if (k + 1 == n) return c->last;
    ltix *t = l->tix;
    if (t && t->c == c) return t->offs[t->lo + k];
    if (n >= TIX_MIN && k >= TIX_SCAN) {
        /* A second scan deep into the same chunk: index it once. */
        if (t && t->hint == c) {
            t = tix_build(l, c, n);
            if (t) return t->offs[t->lo + k];
        } else {
            if (!t) t = l->tix = calloc(1, sizeof(ltix));
            if (t) t->hint = c;
        }
    }
    uint32_t off = c->start;
    for (uint32_t i = 0; i < k; i++) off += (uint32_t)el_size(c->d + off);
    return off;
}

/* Make room for need bytes at one end of the chunk in slot s. Returns 1 with
 * the room made, 0 when the element should go to a new chunk instead (the
 * limit, or a nearly full chunk whose free bytes sit at the other end), or
 * LIST_ENOMEM. */
static int chunk_room(glist *l, lslot *s, int where, size_t need, const list_limit *lim) {
    lchunk *c = s->c;
    size_t used = c->end - c->start, dlim = data_limit(lim);
    if (used + need > dlim || !count_ok(lim, (uint64_t)s->n + 1)) return 0;
    if (where == LIST_TAIL ? c->cap - c->end >= need : c->start >= need) return 1;
    size_t freeb = c->cap - used;
    if (freeb < need + c->cap / 8 && c->cap < dlim) {
        /* Grow geometrically, never past the limit. */
        size_t want = (used + need) + (used + need) / 2;
        if (want > dlim) want = dlim;
        if (want < c->cap) want = c->cap;
        if (c->end > want) chunk_move(l, c, 0);
        lchunk *n = chunk_resize(l, c, want);
        if (!n) return LIST_ENOMEM;
        s->c = c = n;
        /* realloc kept start: a tail push usually needs no move at all */
        if (where == LIST_TAIL && c->cap - c->end >= need) return 1;
        freeb = c->cap - used;
    } else if (freeb < need + c->cap / 16) {
        return 0;   /* full enough: do not shuffle 8 KiB for every push */
    }
    size_t slack = freeb - need;
    if (where == LIST_TAIL) chunk_move(l, c, (uint32_t)(slack / 4));
    else chunk_move(l, c, (uint32_t)(need + slack - slack / 4));
    return 1;
}

/* A chunk whose bytes use a small part of its capacity gives memory back. */
static void chunk_maybe_shrink(glist *l, lslot *s) {
    lchunk *c = s->c;
    uint32_t used = c->end - c->start;
    if (c->cap < 512 || (size_t)used * 4 >= c->cap) return;
    chunk_move(l, c, 0);
    lchunk *n = chunk_resize(l, c, used + used / 2 + 8);
    if (n) s->c = n;
    /* The offset cache goes too when it was this chunk's (sized for the
     * elements it had) or nobody's: rebuilt to size when needed. */
    if (l->tix && (!l->tix->c || l->tix->c == s->c)) tix_drop(l);
}

/* ---- lifecycle ------------------------------------------------------------------- */

glist *list_new(void) { return calloc(1, sizeof(glist)); }

static void list_clear(glist *l) {
    for (uint32_t i = 0; i < l->nch; i++) chunk_release(l, SL(l, i)->c);
    l->nch = 0;
    l->head = 0;
    l->len = 0;
    tix_drop(l);
    if (l->cap > 4) {
        free(l->dir);
        l->dir = NULL;
        l->cap = 0;
    }
}

void list_free(glist *l) {
    if (!l) return;
    list_clear(l);
    free(l->dir);
    free(l);
}

glist *list_dup(const glist *src) {
    glist *l = list_new();
    if (!l) return NULL;
    if (src->nch) {
        uint32_t cap = 1;
        while (cap < src->nch) cap *= 2;
        if (dir_resize(l, cap) != LIST_OK) goto oom;
    }
    for (uint32_t i = 0; i < src->nch; i++) {
        const lslot *s = SL(src, i);
        const lchunk *c = s->c;
        uint32_t used = c->end - c->start;
        lchunk *n = chunk_new(l, used);
        if (!n) goto oom;
        memcpy(n->d, c->d + c->start, used);
        n->start = 0;
        n->end = used;
        n->last = c->last - c->start;
        l->dir[i].c = n;
        l->dir[i].n = s->n;
        l->nch++;
        l->len += s->n;
    }
    return l;
oom:
    list_free(l);
    return NULL;
}

uint64_t list_len(const glist *l) { return l->len; }

size_t list_mem_bytes(const glist *l) {
    size_t b = malloc_usable_size((void *)l) + l->chunk_bytes;
    if (l->dir) b += malloc_usable_size(l->dir);
    if (l->tix) {
        b += malloc_usable_size(l->tix);
        if (l->tix->offs) b += malloc_usable_size(l->tix->offs);
    }
    return b;
}

void list_stats_get(const glist *l, list_stats *st) {
    st->chunks = l->nch;
    st->chunk_bytes = l->chunk_bytes;
    st->used_bytes = 0;
    for (uint32_t i = 0; i < l->nch; i++) st->used_bytes += SL(l, i)->c->end - SL(l, i)->c->start;
}

/* ---- ends -------------------------------------------------------------------------- */

int list_push(glist *l, int where, const list_val *v, const list_limit *lim) {
    if (!v->isint && v->n > LIST_MAX_STR) return LIST_ETOOBIG;
    size_t need = enc_size(v);
    if (l->nch) {
        lslot *s = SL(l, where == LIST_HEAD ? 0 : l->nch - 1);
        int r = chunk_room(l, s, where, need, lim);
        if (r < 0) return r;
        if (r > 0) {
            lchunk *c = s->c;
            if (where == LIST_TAIL) {
                enc_write(c->d + c->end, v);
                tix_push_back(l, c, c->end);
                c->last = c->end;
                c->end += (uint32_t)need;
            } else {
                c->start -= (uint32_t)need;
                enc_write(c->d + c->start, v);
                tix_push_front(l, c, c->start);
            }
            s->n++;
            l->len++;
            return LIST_OK;
        }
    }
    if (dir_reserve(l, 1) != LIST_OK) return LIST_ENOMEM;
    /* A list that has filled a chunk with several elements will likely fill
     * this one as much: size it like that neighbour at once (the byte limit
     * for byte budgets, fewer bytes under an element count limit). */
    size_t dlim = data_limit(lim), cap = need;
    if (l->nch) {
        const lslot *nb = SL(l, where == LIST_HEAD ? 0 : l->nch - 1);
        size_t nbused = nb->c->end - nb->c->start;
        size_t want = nbused < dlim ? nbused : dlim;
        if (nb->n > 1 && want > cap) cap = want;
    }
    lchunk *c = chunk_new(l, cap);
    if (!c) return LIST_ENOMEM;
    uint32_t off = where == LIST_TAIL ? 0 : c->cap - (uint32_t)need;
    enc_write(c->d + off, v);
    c->start = c->last = off;
    c->end = off + (uint32_t)need;
    uint32_t i = where == LIST_HEAD ? 0 : l->nch;
    dir_insert(l, i);
    SL(l, i)->c = c;
    SL(l, i)->n = 1;
    l->len++;
    return LIST_OK;
}

int list_peek(glist *l, int where, list_elem *e) {
    if (!l->len) return 0;
    const lchunk *c = SL(l, where == LIST_HEAD ? 0 : l->nch - 1)->c;
    el_decode(c->d + (where == LIST_HEAD ? c->start : c->last), e);
    return 1;
}

static void drop_chunk(glist *l, uint32_t i) {
    lslot *s = SL(l, i);
    l->len -= s->n;
    chunk_release(l, s->c);
    dir_remove(l, i);
}

void list_pop(glist *l, int where, uint64_t n) {
    if (n >= l->len) {
        list_clear(l);
        return;
    }
    if (where == LIST_HEAD) {
        while (n && SL(l, 0)->n <= n) {
            n -= SL(l, 0)->n;
            drop_chunk(l, 0);
        }
        if (!n) return;
        lslot *s = SL(l, 0);
        lchunk *c = s->c;
        uint32_t off = n == 1 ? c->start + (uint32_t)el_size(c->d + c->start) : chunk_elem_off(l, c, s->n, (uint32_t)n);
        c->start = off;
        tix_pop(l, c, LIST_HEAD, (uint32_t)n);
        s->n -= (uint32_t)n;
        l->len -= n;
        chunk_maybe_shrink(l, s);
    } else {
        while (n && SL(l, l->nch - 1)->n <= n) {
            n -= SL(l, l->nch - 1)->n;
            drop_chunk(l, l->nch - 1);
        }
        if (!n) return;
        lslot *s = SL(l, l->nch - 1);
        lchunk *c = s->c;
        uint32_t m = s->n - (uint32_t)n;   /* elements kept, >= 1 */
        ltix *t = l->tix;
        if ((!t || t->c != c) && s->n >= TIX_MIN) t = tix_build(l, c, s->n);
        uint32_t lastoff;
        if (t && t->c == c) {
            lastoff = t->offs[t->lo + m - 1];
            c->end = t->offs[t->lo + m];
            t->hi -= (uint32_t)n;
        } else {
            lastoff = chunk_scan_last(c, m);
            c->end = lastoff + (uint32_t)el_size(c->d + lastoff);
        }
        c->last = lastoff;
        s->n = m;
        l->len -= n;
        chunk_maybe_shrink(l, s);
    }
}

/* Sum of the counts of the 8 slots from physical position p (no wrap). */
static inline uint64_t sum8(const lslot *s) {
    return (uint64_t)s[0].n + s[1].n + s[2].n + s[3].n + s[4].n + s[5].n + s[6].n + s[7].n;
}

/* Chunk i and position k in it of element idx < len, walking the counts
 * from the nearer end, eight slots per step where the ring does not wrap
 * (the loads are independent, so a 1M-element list costs ~100 steps). */
static uint32_t seek(const glist *l, uint64_t idx, uint32_t *k) {
    uint32_t i, mask = l->cap - 1;
    if (idx < l->len / 2) {
        i = 0;
        for (;;) {
            uint32_t p = (l->head + i) & mask;
            if (i + 8 <= l->nch && p + 8 <= l->cap) {
                uint64_t sum = sum8(&l->dir[p]);
                if (idx >= sum) {
                    idx -= sum;
                    i += 8;
                    continue;
                }
            }
            uint32_t n = l->dir[p].n;
            if (idx < n) break;
            idx -= n;
            i++;
        }
        *k = (uint32_t)idx;
    } else {
        uint64_t r = l->len - 1 - idx;
        i = l->nch - 1;
        for (;;) {
            uint32_t p = (l->head + i) & mask;
            if (i >= 8 && p >= 7) {
                uint64_t sum = sum8(&l->dir[p - 7]);
                if (r >= sum) {
                    r -= sum;
                    i -= 8;
                    continue;
                }
            }
            uint32_t n = l->dir[p].n;
            if (r < n) break;
            r -= n;
            i--;
        }
        *k = SL(l, i)->n - 1 - (uint32_t)r;
    }
    return i;
}

static int norm_index(const glist *l, long long index, uint64_t *out) {
    if (index < 0) {
        if ((uint64_t)(-(index + 1)) >= l->len) return 0;
        *out = l->len - (uint64_t)(-(index + 1)) - 1;
    } else {
        if ((uint64_t)index >= l->len) return 0;
        *out = (uint64_t)index;
    }
    return 1;
}

int list_index(glist *l, long long index, list_elem *e) {
    uint64_t idx;
    if (!norm_index(l, index, &idx)) return 0;
    uint32_t k, i = seek(l, idx, &k);
    lslot *s = SL(l, i);
    el_decode(s->c->d + chunk_elem_off(l, s->c, s->n, k), e);
    return 1;
}

/* ---- middle edits ----------------------------------------------------------- */

/* Cut the encoded elements buf[0, len) (cnt of them) into chunks within the
 * limit, balanced, and put them in place of slot i. The list is unchanged
 * on LIST_ENOMEM. */
static int replace_with_pieces(glist *l, uint32_t i, const unsigned char *buf, size_t len, uint32_t cnt,
                               const list_limit *lim) {
    size_t dlim = data_limit(lim);
    uint64_t k = (len + dlim - 1) / dlim;
    if (lim->count && (cnt + lim->count - 1) / lim->count > k) k = (cnt + lim->count - 1) / lim->count;
    if (k < 1) k = 1;
    size_t target = len / k;
    uint32_t cnt_target = (uint32_t)((cnt + k - 1) / k);
    /* First pass: where the cuts go. */
    uint32_t maxp = cnt, np = 0;
    uint32_t *cut = malloc(sizeof(uint32_t) * 2 * (maxp + 1));
    if (!cut) return LIST_ENOMEM;
    uint32_t *pcnt = cut + maxp + 1;
    size_t off = 0, pstart = 0;
    uint32_t pc = 0;
    while (off < len) {
        size_t sz = el_size(buf + off);
        if (pc && (off - pstart + sz > dlim || !count_ok(lim, (uint64_t)pc + 1))) {
            cut[np] = (uint32_t)pstart;
            pcnt[np++] = pc;
            pstart = off;
            pc = 0;
        }
        off += sz;
        pc++;
        if (off < len && (off - pstart >= target || (lim->count && pc >= cnt_target))) {
            cut[np] = (uint32_t)pstart;
            pcnt[np++] = pc;
            pstart = off;
            pc = 0;
        }
    }
    if (pc) {
        cut[np] = (uint32_t)pstart;
        pcnt[np++] = pc;
    }
    cut[np] = (uint32_t)len;
    if (dir_reserve(l, np - 1) != LIST_OK) {
        free(cut);
        return LIST_ENOMEM;
    }
    lchunk **pieces = malloc(sizeof(lchunk *) * np);
    if (!pieces) {
        free(cut);
        return LIST_ENOMEM;
    }
    for (uint32_t p = 0; p < np; p++) {
        uint32_t plen = cut[p + 1] - cut[p];
        pieces[p] = chunk_new(l, plen);
        if (!pieces[p]) {
            while (p--) chunk_release(l, pieces[p]);
            free(pieces);
            free(cut);
            return LIST_ENOMEM;
        }
        memcpy(pieces[p]->d, buf + cut[p], plen);
        pieces[p]->start = 0;
        pieces[p]->end = plen;
        pieces[p]->last = chunk_scan_last(pieces[p], pcnt[p]);
    }
    chunk_release(l, SL(l, i)->c);
    SL(l, i)->c = pieces[0];
    SL(l, i)->n = pcnt[0];
    for (uint32_t p = 1; p < np; p++) {
        dir_insert(l, i + p);
        SL(l, i + p)->c = pieces[p];
        SL(l, i + p)->n = pcnt[p];
    }
    free(pieces);
    free(cut);
    return LIST_OK;
}

/* Replace bytes [a, b) of the chunk in slot i by the encoding of v (none
 * when v is NULL); the chunk's count grows by dn (0 or 1; the caller keeps
 * the list length). In place when the
 * result respects the limit (or is a single element), else the chunk is
 * rewritten as several. */
static int chunk_splice(glist *l, uint32_t i, uint32_t a, uint32_t b, const list_val *v, uint32_t dn,
                        const list_limit *lim) {
    lslot *s = SL(l, i);
    lchunk *c = s->c;
    size_t ins = v ? enc_size(v) : 0;
    size_t used = c->end - c->start;
    size_t nused = used - (b - a) + ins;
    uint32_t nn = s->n + (uint32_t)dn;
    if ((nused <= data_limit(lim) && count_ok(lim, nn)) || nn == 1) {
        tix_forget(l, c);
        if (nused > c->cap) {
            lchunk *n = chunk_resize(l, c, nused);
            if (!n) return LIST_ENOMEM;
            s->c = c = n;
        }
        if (c->end - (b - a) + ins > c->cap) {
            uint32_t shift = c->start;
            chunk_move(l, c, 0);
            a -= shift;
            b -= shift;
        }
        memmove(c->d + a + ins, c->d + b, c->end - b);
        c->end = (uint32_t)(c->end - (b - a) + ins);
        if (v) enc_write(c->d + a, v);
        s->n = nn;
        c->last = chunk_scan_last(c, nn);
        return LIST_OK;
    }
    unsigned char *buf = malloc(nused);
    if (!buf) return LIST_ENOMEM;
    memcpy(buf, c->d + c->start, a - c->start);
    if (v) enc_write(buf + (a - c->start), v);
    memcpy(buf + (a - c->start) + ins, c->d + b, c->end - b);
    int r = replace_with_pieces(l, i, buf, nused, nn, lim);
    free(buf);
    return r;
}

/* Merge the chunk in slot i with a neighbour when both are sparse. */
static void maybe_merge(glist *l, uint32_t i, const list_limit *lim) {
    if (i >= l->nch) return;
    size_t dlim = data_limit(lim);
    for (int side = 0; side < 2; side++) {
        uint32_t a = side == 0 ? i - 1 : i, b = a + 1;
        if ((side == 0 && i == 0) || b >= l->nch) continue;
        lslot *sa = SL(l, a), *sb = SL(l, b);
        size_t ua = sa->c->end - sa->c->start, ub = sb->c->end - sb->c->start;
        if (ua + ub > dlim / 2 || !count_ok(lim, (uint64_t)sa->n + sb->n)) continue;
        lchunk *ca = sa->c, *cb = sb->c;
        if (ca->cap - ca->end < ub) {
            chunk_move(l, ca, 0);
            if (ca->cap < ua + ub) {
                lchunk *n = chunk_resize(l, ca, ua + ub);
                if (!n) return;
                sa->c = ca = n;
            }
        }
        tix_forget(l, ca);
        memcpy(ca->d + ca->end, cb->d + cb->start, ub);
        ca->last = ca->end + (cb->last - cb->start);
        ca->end += (uint32_t)ub;
        sa->n += sb->n;
        chunk_release(l, cb);
        dir_remove(l, b);
        return;
    }
}

int list_set(glist *l, long long index, const list_val *v, const list_limit *lim) {
    uint64_t idx;
    if (!norm_index(l, index, &idx)) return LIST_ERANGE;
    if (!v->isint && v->n > LIST_MAX_STR) return LIST_ETOOBIG;
    uint32_t k, i = seek(l, idx, &k);
    lslot *s = SL(l, i);
    uint32_t a = chunk_elem_off(l, s->c, s->n, k);
    uint32_t b = a + (uint32_t)el_size(s->c->d + a);
    int r = chunk_splice(l, i, a, b, v, 0, lim);
    if (r == LIST_OK) maybe_merge(l, i, lim);
    return r;
}

int list_insert(glist *l, uint64_t index, const list_val *v, const list_limit *lim) {
    if (index > l->len) return LIST_ERANGE;
    if (index == 0) return list_push(l, LIST_HEAD, v, lim);
    if (index == l->len) return list_push(l, LIST_TAIL, v, lim);
    if (!v->isint && v->n > LIST_MAX_STR) return LIST_ETOOBIG;
    uint32_t k, i = seek(l, index, &k);
    lslot *s = SL(l, i);
    if (k == 0) {
        /* At a chunk boundary: the end of the previous chunk may have room. */
        lslot *p = SL(l, i - 1);
        size_t need = enc_size(v);
        int r = chunk_room(l, p, LIST_TAIL, need, lim);
        if (r < 0) return r;
        if (r > 0) {
            lchunk *c = p->c;
            enc_write(c->d + c->end, v);
            tix_push_back(l, c, c->end);
            c->last = c->end;
            c->end += (uint32_t)need;
            p->n++;
            l->len++;
            return LIST_OK;
        }
    }
    uint32_t a = chunk_elem_off(l, s->c, s->n, k);
    int r = chunk_splice(l, i, a, a, v, 1, lim);
    if (r == LIST_OK) l->len++;
    return r;
}

/* Remove the m elements at ascending offsets offs[] from the chunk in slot
 * i. Returns 1 when the chunk went away. */
static int chunk_remove_offsets(glist *l, uint32_t i, const uint32_t *offs, uint32_t m) {
    lslot *s = SL(l, i);
    lchunk *c = s->c;
    if (m == s->n) {
        drop_chunk(l, i);
        return 1;
    }
    tix_forget(l, c);
    uint32_t w = offs[0];
    for (uint32_t j = 0; j < m; j++) {
        uint32_t from = offs[j] + (uint32_t)el_size(c->d + offs[j]);
        uint32_t to = j + 1 < m ? offs[j + 1] : c->end;
        memmove(c->d + w, c->d + from, to - from);
        w += to - from;
    }
    c->end = w;
    s->n -= m;
    l->len -= m;
    c->last = chunk_scan_last(c, s->n);
    return 0;
}

uint64_t list_remove(glist *l, const list_val *v, long long count, const list_limit *lim) {
    uint64_t want = count == 0 ? UINT64_MAX : count > 0 ? (uint64_t)count : (uint64_t)(-(count + 1)) + 1;
    uint64_t removed = 0;
    uint32_t *offs = NULL, cap = 0;
    uint32_t lo = UINT32_MAX, hi = UINT32_MAX;   /* touched chunks, final numbering */
    list_elem e;
    if (count >= 0) {
        uint32_t i = 0;
        while (i < l->nch && removed < want) {
            lslot *s = SL(l, i);
            lchunk *c = s->c;
            if (cap < s->n) {
                uint32_t *no = realloc(offs, sizeof(uint32_t) * s->n);
                if (!no) break;
                offs = no;
                cap = s->n;
            }
            uint32_t m = 0, off = c->start;
            for (uint32_t j = 0; j < s->n && removed + m < want; j++) {
                size_t sz = el_decode(c->d + off, &e);
                if (list_elem_eq(&e, v)) offs[m++] = off;
                off += (uint32_t)sz;
            }
            if (m) {
                removed += m;
                if (lo == UINT32_MAX) lo = i;
                hi = i;
                if (chunk_remove_offsets(l, i, offs, m)) continue;   /* the next chunk is now i */
            }
            i++;
        }
    } else {
        uint32_t i = l->nch;
        while (i > 0 && removed < want) {
            i--;
            lslot *s = SL(l, i);
            lchunk *c = s->c;
            if (cap < 2 * s->n) {
                uint32_t *no = realloc(offs, sizeof(uint32_t) * 2 * s->n);
                if (!no) break;
                offs = no;
                cap = 2 * s->n;
            }
            uint32_t *all = offs + s->n, off = c->start;
            for (uint32_t j = 0; j < s->n; j++) {
                all[j] = off;
                off += (uint32_t)el_size(c->d + off);
            }
            uint32_t m = 0;
            for (uint32_t j = s->n; j > 0 && removed + m < want; j--) {
                el_decode(c->d + all[j - 1], &e);
                if (list_elem_eq(&e, v)) offs[m++] = all[j - 1];
            }
            if (m) {
                for (uint32_t x = 0, y = m - 1; x < y; x++, y--) {
                    uint32_t t = offs[x];
                    offs[x] = offs[y];
                    offs[y] = t;
                }
                removed += m;
                int gone = chunk_remove_offsets(l, i, offs, m);
                /* Chunks after i move down one place when i goes away. */
                if (hi == UINT32_MAX) hi = i;
                else if (gone) hi--;
                lo = i;
            }
        }
    }
    free(offs);
    /* Sparse neighbours left behind are merged. */
    if (lo != UINT32_MAX && l->nch) {
        if (hi >= l->nch) hi = l->nch - 1;
        for (uint32_t i = hi + 1; i-- > lo;)
            if (i < l->nch) maybe_merge(l, i, lim);
    }
    return removed;
}

/* ---- iteration ------------------------------------------------------------------- */

/* Offsets of elements 0..upto of the chunk in slot i for a backward walk. */
static void iter_load_back(list_iter *it, uint32_t i, uint32_t upto) {
    glist *l = it->l;
    lslot *s = SL(l, i);
    lchunk *c = s->c;
    it->ci = i;
    it->base = c->d;
    it->k = upto + 1;
    ltix *t = l->tix;
    if (!t || t->c != c) {
        if (s->n >= TIX_MIN && upto + 1 == s->n) t = tix_build(l, c, s->n);
    }
    if (t && t->c == c) {
        it->offs = t->offs + t->lo;
        return;
    }
    if (it->scap < upto + 1) {
        uint32_t *no = realloc(it->scratch, sizeof(uint32_t) * (upto + 1));
        if (!no) {
            it->k = 0;
            it->ci = 0;   /* ends the walk (no memory) */
            return;
        }
        it->scratch = no;
        it->scap = upto + 1;
    }
    uint32_t off = c->start;
    for (uint32_t j = 0; j <= upto; j++) {
        it->scratch[j] = off;
        off += (uint32_t)el_size(c->d + off);
    }
    it->offs = it->scratch;
}

void list_iter_init(list_iter *it, glist *l, uint64_t index, int dir) {
    memset(it, 0, sizeof(*it));
    it->l = l;
    it->dir = dir;
    if (index >= l->len) {
        it->ci = l->nch;   /* forward: past the end */
        return;
    }
    uint32_t k, i = seek(l, index, &k);
    lslot *s = SL(l, i);
    if (dir == LIST_TAIL) {
        it->ci = i;
        it->p = s->c->d + chunk_elem_off(l, s->c, s->n, k);
        it->end = s->c->d + s->c->end;
    } else {
        iter_load_back(it, i, k);
    }
}

int list_iter_next(list_iter *it, list_elem *e) {
    glist *l = it->l;
    if (it->dir == LIST_TAIL) {
        if (it->p == it->end) {
            if (it->ci + 1 >= l->nch) return 0;
            it->ci++;
            lchunk *c = SL(l, it->ci)->c;
            it->p = c->d + c->start;
            it->end = c->d + c->end;
        }
        it->p += el_decode(it->p, e);
        return 1;
    }
    if (!it->k) {
        if (it->ci == 0 || it->ci >= l->nch) return 0;
        iter_load_back(it, it->ci - 1, SL(l, it->ci - 1)->n - 1);
        if (!it->k) return 0;
    }
    el_decode(it->base + it->offs[--it->k], e);
    return 1;
}

void list_iter_release(list_iter *it) {
    free(it->scratch);
    it->scratch = NULL;
    it->scap = 0;
}

/* ---- checking ------------------------------------------------------------------------ */

int list_check(const glist *l) {
    if (l->cap & (l->cap - 1)) return -1;
    if (l->nch > l->cap) return -2;
    if (l->nch && !l->dir) return -3;
    uint64_t total = 0;
    size_t bytes = 0;
    int tix_found = 0;
    for (uint32_t i = 0; i < l->nch; i++) {
        const lslot *s = SL(l, i);
        const lchunk *c = s->c;
        if (!c || s->n == 0) return -4;
        if (c->start > c->end || c->end > c->cap) return -5;
        if (c->cap + CHDR > malloc_usable_size((void *)c)) return -6;
        bytes += malloc_usable_size((void *)c);
        uint32_t off = c->start, lastoff = c->start;
        for (uint32_t j = 0; j < s->n; j++) {
            if (off >= c->end) return -7;
            list_elem e;
            unsigned h = c->d[off];
            if (h >= 0xE9 && h != 0xF0) return -8;
            size_t sz = el_decode(c->d + off, &e);
            if (off + sz > c->end) return -9;
            /* canonical: the encoding enc_write would choose */
            list_val v;
            if (e.isint) {
                v.isint = 1;
                v.v = e.v;
            } else {
                list_val_init(&v, e.p, e.n);
                if (v.isint) return -10;   /* an integer stored as text */
            }
            if (enc_size(&v) != sz) return -11;
            lastoff = off;
            off += (uint32_t)sz;
        }
        if (off != c->end) return -12;
        if (lastoff != c->last) return -13;
        total += s->n;
        if (l->tix && l->tix->c == c) {
            const ltix *t = l->tix;
            if (t->hi - t->lo != s->n || t->hi > t->cap) return -14;
            uint32_t o = c->start;
            for (uint32_t j = 0; j < s->n; j++) {
                if (t->offs[t->lo + j] != o) return -15;
                o += (uint32_t)el_size(c->d + o);
            }
            tix_found = 1;
        }
    }
    if (total != l->len) return -16;
    if (bytes != l->chunk_bytes) return -17;
    if (l->tix && l->tix->c && !tix_found) return -18;
    return 0;
}
