/* zset.c -- sorted sets: a packed block when small, arena + swiss index +
 * counted B+tree when big.
 *
 * Packed encoding. One malloc'd block of entries sorted by (score, member):
 *     score (8 bytes, host double) | LEB128 member length | member | back
 * where back is the size T of the first three fields written backwards
 * (last byte: low 7 bits of T, bit 7 set when an earlier byte follows), so
 * the block can be walked in both directions. Scores are stored as a Redis
 * listpack stores them: -0 becomes 0 (Redis prints the score with d2string
 * into the listpack). Lookups are linear, which is what Redis does at these
 * sizes too.
 *
 * Big encoding. Every element is one arena entry, score (8 bytes) followed
 * by the member bytes; the entry's 32-bit reference names the element
 * everywhere else:
 *   - a swiss table of references, hashed by member bytes: member -> entry
 *     in O(1) (ZSCORE, ZADD's existence check);
 *   - a B+tree of pairs in (score, member) order. Leaves hold 93 pairs of
 *     (f32 of the score, reference) in 768 bytes; inner nodes 31 children
 *     with, per child, its element count and its exact minimum key (double
 *     score, reference). Counts make rank <-> position O(log n) both ways
 *     (ZRANK, ZRANGE at an offset); minimum keys steer the descent for a
 *     (score, member) key, a score bound or a lex bound. Leaves are chained
 *     both ways for range walks.
 * Rounding a double to float is monotone, so the f32 in a leaf orders pairs
 * exactly except when two scores round to the same float; only then does a
 * comparison read the entry (exact score, then member bytes). That halves
 * the leaf bytes per member (8 instead of 12 + slack) at the price of an
 * arena read on near-ties, and walks read the entry anyway for the member.
 *
 * Invariants (zset_check verifies them all):
 *   - inner node x: x->score/ref[i] is exactly the minimum key of child i,
 *     x->cnt[i] its element count; keys strictly increase across the leaf
 *     chain; every leaf is at the same depth; no node is empty;
 *   - swiss size == tree count == arena entries == n, and each swiss slot's
 *     reference is in the tree at the rank of its key;
 *   - packed: entries sorted, count == n, no stored -0.
 * Exact minima (rather than mere separators) make every key in an inner
 * node the reference of a live entry, so comparisons can always read it.
 *
 * Fill. Inserts go top-down and make room before descending: a full child
 * first shifts half its surplus to a sibling with room, and only splits when
 * both neighbours are full; appends beyond the maximum (and prepends before
 * the minimum) split unevenly, so ascending loads fill leaves completely
 * and random loads stay around 80%. Deletes merge a child that drops below
 * a quarter with a neighbour, or even the two out.
 *
 * Compaction. Deletes leave dead arena bytes; after each delete the writer
 * runs one bounded arena_compact_step (about twice the bytes it freed), whose
 * move callback re-points the swiss slot and the tree pair (and the inner
 * minimum that names the same entry, which always lies on the descent path
 * of that key). While an entry is in flight, reads of its old reference are
 * served from the moved bytes (mv_from/mv_data).
 *
 * Accumulator. ZUNIONSTORE and friends build a big zset without its tree
 * (arena + index only), then sort the references once and build the tree
 * bottom-up with evenly filled nodes (or pack the result when it fits). */
#include "util/varint.h"
#include "ds/zset.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds/arena.h"
#include "util/hashfn.h"
#include "ds/swiss.h"

#define ZL_CAP 93
#define ZI_CAP 31
#define ZL_MIN (ZL_CAP / 4)
#define ZI_MIN (ZI_CAP / 4)
#define ZMAX_H 40

typedef struct zleaf {
    uint16_t n;
    struct zleaf *prev, *next;
    float key[ZL_CAP];         /* f32(score): orders pairs except on ties */
    arena_ref ref[ZL_CAP];
} zleaf;

typedef struct zinner {
    uint16_t n;                /* children */
    uint32_t cnt[ZI_CAP];      /* elements under each child */
    arena_ref ref[ZI_CAP];     /* minimum key of each child ... */
    double score[ZI_CAP];      /* ... (score, entry) */
    void *kid[ZI_CAP];
} zinner;

typedef struct zbig {
    arena a;
    swiss idx;
    void *root;                /* NULL when empty */
    zleaf *head, *tail;
    int height;                /* 0: the root is a leaf */
    int acc;                   /* accumulating: no tree yet */
    size_t nleaf, ninner;
    arena_ref mv_from;         /* entry being moved by compaction */
    const unsigned char *mv_data;
    size_t mv_len;
} zbig;

struct zset {
    size_t n;
    unsigned char *pk;         /* packed entries (NULL when big) */
    size_t pklen, pkcap;
    zbig *big;                 /* NULL when packed */
};

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) abort();
    return p;
}

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n);
    if (!q) abort();
    return q;
}

static inline int mem_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn) {
    size_t l = an < bn ? an : bn;
    int c = l ? memcmp(a, b, l) : 0;
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* back field: T written so that it can be read from its end. */
static inline void back_put(unsigned char *p, size_t t) {
    size_t k = varint_size(t);
    for (size_t j = 0; j < k; j++) {
        unsigned char c = (unsigned char)((t >> (7 * j)) & 0x7f);
        if (j + 1 < k) c |= 0x80;
        p[k - 1 - j] = c;
    }
}

static inline size_t back_get(const unsigned char *end, size_t *t) {
    size_t v = 0, j = 0;
    for (;;) {
        unsigned char c = end[-1 - (ptrdiff_t)j];
        v |= (size_t)(c & 0x7f) << (7 * j);
        j++;
        if (!(c & 0x80)) break;
    }
    *t = v;
    return j;
}

/* ------------------------------------------------------------------ */
/* packed encoding                                                     */

static inline size_t pk_entry_size(size_t mlen) {
    size_t t = 8 + varint_size(mlen) + mlen;
    return t + varint_size(t);
}

static inline size_t pk_decode(const unsigned char *p, double *s, const unsigned char **m, size_t *mlen) {
    memcpy(s, p, 8);
    size_t ml, ls = varint_get(p + 8, &ml);
    *m = p + 8 + ls;
    *mlen = ml;
    size_t t = 8 + ls + ml;
    return t + varint_size(t);
}

static inline size_t pk_prev(const unsigned char *base, size_t off) {
    size_t t, k = back_get(base + off, &t);
    return off - k - t;
}

static void pk_reserve(zset *z, size_t extra) {
    if (z->pklen + extra <= z->pkcap) return;
    size_t cap = z->pkcap ? z->pkcap : 64;
    while (cap < z->pklen + extra) cap *= 2;
    z->pk = xrealloc(z->pk, cap);
    z->pkcap = cap;
}

static void pk_shrink(zset *z) {
    if (z->pkcap > 256 && z->pklen < z->pkcap / 4) {
        size_t cap = z->pkcap / 2;
        z->pk = xrealloc(z->pk, cap);
        z->pkcap = cap;
    }
}

/* Offset of member, or SIZE_MAX; *rank and *score when found. */
static size_t pk_find(const zset *z, const void *m, size_t n, size_t *rank, double *score) {
    size_t off = 0, r = 0;
    while (off < z->pklen) {
        double s;
        const unsigned char *em;
        size_t el, sz = pk_decode(z->pk + off, &s, &em, &el);
        if (el == n && (n == 0 || memcmp(em, m, n) == 0)) {
            if (rank) *rank = r;
            if (score) *score = s;
            return off;
        }
        off += sz;
        r++;
    }
    return SIZE_MAX;
}

static size_t pk_offset_of_rank(const zset *z, size_t rank) {
    size_t off = 0;
    if (rank > z->n / 2) {
        /* Closer to the end: walk back from the last entry. */
        off = z->pklen;
        for (size_t r = z->n; r > rank; r--) off = pk_prev(z->pk, off);
        return off;
    }
    while (rank--) {
        double s;
        const unsigned char *em;
        size_t el;
        off += pk_decode(z->pk + off, &s, &em, &el);
    }
    return off;
}

static void pk_write(unsigned char *p, double score, const void *m, size_t n) {
    memcpy(p, &score, 8);
    size_t ls = varint_put(p + 8, n);
    if (n) memcpy(p + 8 + ls, m, n);
    back_put(p + 8 + ls + n, 8 + ls + n);
}

/* Insert an absent member at its sorted place. */
static void pk_insert(zset *z, double score, const void *m, size_t n) {
    if (score == 0) score = 0; /* listpack stores d2string(-0) == "0" */
    size_t off = 0;
    while (off < z->pklen) {
        double s;
        const unsigned char *em;
        size_t el, sz = pk_decode(z->pk + off, &s, &em, &el);
        if (s > score || (s == score && mem_cmp(em, el, m, n) > 0)) break;
        off += sz;
    }
    size_t esz = pk_entry_size(n);
    pk_reserve(z, esz);
    memmove(z->pk + off + esz, z->pk + off, z->pklen - off);
    pk_write(z->pk + off, score, m, n);
    z->pklen += esz;
    z->n++;
}

static void pk_delete_span(zset *z, size_t from, size_t to, size_t count) {
    memmove(z->pk + from, z->pk + to, z->pklen - to);
    z->pklen -= to - from;
    z->n -= count;
    pk_shrink(z);
}

/* ------------------------------------------------------------------ */
/* big encoding: entries and index                                     */

static inline const unsigned char *zb_entry(const zbig *b, arena_ref r, size_t *len) {
    if (r == b->mv_from) {
        *len = b->mv_len;
        return b->mv_data;
    }
    return arena_get(&b->a, r, len);
}

static inline double zb_entry_score(const zbig *b, arena_ref r) {
    size_t len;
    const unsigned char *e = zb_entry(b, r, &len);
    double s;
    memcpy(&s, e, 8);
    return s;
}

typedef struct zmatch {
    const unsigned char *m;
    size_t n;
    arena_ref ref; /* match by reference when not ARENA_REF_NONE */
} zmatch;

static uint64_t zb_hash_slot(void *ctx, const void *slot) {
    const zbig *b = ctx;
    arena_ref r = arena_ref_load(slot);
    size_t len;
    const unsigned char *e = zb_entry(b, r, &len);
    return hash_bytes(e + 8, len - 8);
}

static int zb_match(void *ctx, const void *slot, const void *key) {
    const zbig *b = ctx;
    const zmatch *k = key;
    arena_ref r = arena_ref_load(slot);
    if (k->ref != ARENA_REF_NONE) return r == k->ref;
    size_t len;
    const unsigned char *e = zb_entry(b, r, &len);
    return len - 8 == k->n && (k->n == 0 || memcmp(e + 8, k->m, k->n) == 0);
}

static const swiss_type zb_swiss_type = {sizeof(arena_ref), zb_hash_slot, zb_match};

static zbig *zb_new(void) {
    zbig *b = xmalloc(sizeof(*b));
    memset(b, 0, sizeof(*b));
    arena_init(&b->a, NULL);
    swiss_init(&b->idx, &zb_swiss_type, b);
    b->mv_from = ARENA_REF_NONE;
    return b;
}

static arena_ref *zb_slot(zbig *b, uint64_t h, const void *m, size_t n) {
    zmatch k = {m, n, ARENA_REF_NONE};
    return swiss_find(&b->idx, h, &k);
}

/* ------------------------------------------------------------------ */
/* B+tree                                                              */

typedef struct zkey {
    double score;
    const unsigned char *m;
    size_t n;
    arena_ref ref; /* the key's own entry when known, else ARENA_REF_NONE */
    float f;       /* f32(score) */
} zkey;

/* Rounding to float is monotone (a < b implies f32(a) <= f32(b)), so a leaf
 * orders its pairs by f32 first and reads the exact score only when the
 * floats are equal. Out-of-range values clamp to the infinities, which
 * keeps the map monotone without relying on the conversion's overflow. */
static inline float f32(double d) {
    if (d > FLT_MAX) return INFINITY;
    if (d < -FLT_MAX) return -INFINITY;
    return (float)d;
}

static inline zkey zkey_of(double score, const unsigned char *m, size_t n, arena_ref ref) {
    zkey k;
    k.score = score;
    k.m = m;
    k.n = n;
    k.ref = ref;
    k.f = f32(score);
    return k;
}

/* key <=> stored pair (s, r) */
static inline int zb_cmp(const zbig *b, const zkey *k, double s, arena_ref r) {
    if (k->score < s) return -1;
    if (k->score > s) return 1;
    if (k->ref == r) return 0;
    size_t len;
    const unsigned char *e = zb_entry(b, r, &len);
    return mem_cmp(k->m, k->n, e + 8, len - 8);
}

/* stored pair <=> stored pair */
static inline int zb_cmp2(const zbig *b, double s1, arena_ref r1, double s2, arena_ref r2) {
    if (s1 < s2) return -1;
    if (s1 > s2) return 1;
    if (r1 == r2) return 0;
    size_t l1, l2;
    const unsigned char *e1 = zb_entry(b, r1, &l1), *e2 = zb_entry(b, r2, &l2);
    return mem_cmp(e1 + 8, l1 - 8, e2 + 8, l2 - 8);
}

/* key <=> leaf pair (f32 score f, entry r) */
static inline int zb_cmp_leaf(const zbig *b, const zkey *k, float f, arena_ref r) {
    if (k->f < f) return -1;
    if (k->f > f) return 1;
    if (k->ref == r) return 0;
    size_t len;
    const unsigned char *e = zb_entry(b, r, &len);
    double s;
    memcpy(&s, e, 8);
    if (k->score < s) return -1;
    if (k->score > s) return 1;
    return mem_cmp(k->m, k->n, e + 8, len - 8);
}

static zleaf *leaf_new(zbig *b) {
    zleaf *l = xmalloc(sizeof(*l));
    l->n = 0;
    l->prev = l->next = NULL;
    b->nleaf++;
    return l;
}

static zinner *inner_new(zbig *b) {
    zinner *x = xmalloc(sizeof(*x));
    x->n = 0;
    b->ninner++;
    return x;
}

static void leaf_free(zbig *b, zleaf *l) {
    free(l);
    b->nleaf--;
}

static void inner_free(zbig *b, zinner *x) {
    free(x);
    b->ninner--;
}

static inline size_t node_n(const void *node, int h) {
    return h == 0 ? ((const zleaf *)node)->n : ((const zinner *)node)->n;
}

static inline size_t node_cap(int h) { return h == 0 ? ZL_CAP : ZI_CAP; }

/* The exact minimum key of a node (a leaf's comes from its arena entry). */
static inline void node_min(const zbig *b, const void *node, int h, double *s, arena_ref *r) {
    if (h == 0) {
        const zleaf *l = node;
        *r = l->ref[0];
        *s = zb_entry_score(b, l->ref[0]);
    } else {
        const zinner *x = node;
        *s = x->score[0];
        *r = x->ref[0];
    }
}

static size_t node_count(const void *node, int h) {
    if (h == 0) return ((const zleaf *)node)->n;
    const zinner *x = node;
    size_t c = 0;
    for (int i = 0; i < x->n; i++) c += x->cnt[i];
    return c;
}

static void free_subtree(zbig *b, void *node, int h) {
    if (h == 0) {
        leaf_free(b, node);
        return;
    }
    zinner *x = node;
    for (int i = 0; i < x->n; i++) free_subtree(b, x->kid[i], h - 1);
    inner_free(b, x);
}

/* Child of x whose subtree holds (or would hold) key k. */
static inline int inner_child(const zbig *b, const zinner *x, const zkey *k) {
    int lo = 1, hi = x->n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (zb_cmp(b, k, x->score[mid], x->ref[mid]) >= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

/* First position in l whose key is >= k. */
static inline int leaf_lower(const zbig *b, const zleaf *l, const zkey *k) {
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (zb_cmp_leaf(b, k, l->key[mid], l->ref[mid]) > 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Move the first mv entries of child i to the end of child i-1. */
static void shift_left(const zbig *b, zinner *x, int i, int h, size_t mv) {
    if (h == 0) {
        zleaf *L = x->kid[i - 1], *K = x->kid[i];
        memcpy(L->key + L->n, K->key, mv * sizeof(float));
        memcpy(L->ref + L->n, K->ref, mv * sizeof(arena_ref));
        L->n = (uint16_t)(L->n + mv);
        memmove(K->key, K->key + mv, (K->n - mv) * sizeof(float));
        memmove(K->ref, K->ref + mv, (K->n - mv) * sizeof(arena_ref));
        K->n = (uint16_t)(K->n - mv);
        x->cnt[i - 1] += (uint32_t)mv;
        x->cnt[i] -= (uint32_t)mv;
    } else {
        zinner *L = x->kid[i - 1], *K = x->kid[i];
        uint32_t moved = 0;
        for (size_t j = 0; j < mv; j++) moved += K->cnt[j];
        memcpy(L->cnt + L->n, K->cnt, mv * sizeof(uint32_t));
        memcpy(L->ref + L->n, K->ref, mv * sizeof(arena_ref));
        memcpy(L->score + L->n, K->score, mv * sizeof(double));
        memcpy(L->kid + L->n, K->kid, mv * sizeof(void *));
        L->n = (uint16_t)(L->n + mv);
        size_t rest = K->n - mv;
        memmove(K->cnt, K->cnt + mv, rest * sizeof(uint32_t));
        memmove(K->ref, K->ref + mv, rest * sizeof(arena_ref));
        memmove(K->score, K->score + mv, rest * sizeof(double));
        memmove(K->kid, K->kid + mv, rest * sizeof(void *));
        K->n = (uint16_t)rest;
        x->cnt[i - 1] += moved;
        x->cnt[i] -= moved;
    }
    node_min(b, x->kid[i - 1], h, &x->score[i - 1], &x->ref[i - 1]);
    if (node_n(x->kid[i], h)) node_min(b, x->kid[i], h, &x->score[i], &x->ref[i]);
}

/* Move the last mv entries of child i to the front of child i+1. */
static void shift_right(const zbig *b, zinner *x, int i, int h, size_t mv) {
    if (h == 0) {
        zleaf *K = x->kid[i], *R = x->kid[i + 1];
        memmove(R->key + mv, R->key, R->n * sizeof(float));
        memmove(R->ref + mv, R->ref, R->n * sizeof(arena_ref));
        memcpy(R->key, K->key + K->n - mv, mv * sizeof(float));
        memcpy(R->ref, K->ref + K->n - mv, mv * sizeof(arena_ref));
        R->n = (uint16_t)(R->n + mv);
        K->n = (uint16_t)(K->n - mv);
        x->cnt[i] -= (uint32_t)mv;
        x->cnt[i + 1] += (uint32_t)mv;
    } else {
        zinner *K = x->kid[i], *R = x->kid[i + 1];
        uint32_t moved = 0;
        size_t from = K->n - mv;
        for (size_t j = from; j < K->n; j++) moved += K->cnt[j];
        memmove(R->cnt + mv, R->cnt, R->n * sizeof(uint32_t));
        memmove(R->ref + mv, R->ref, R->n * sizeof(arena_ref));
        memmove(R->score + mv, R->score, R->n * sizeof(double));
        memmove(R->kid + mv, R->kid, R->n * sizeof(void *));
        memcpy(R->cnt, K->cnt + from, mv * sizeof(uint32_t));
        memcpy(R->ref, K->ref + from, mv * sizeof(arena_ref));
        memcpy(R->score, K->score + from, mv * sizeof(double));
        memcpy(R->kid, K->kid + from, mv * sizeof(void *));
        R->n = (uint16_t)(R->n + mv);
        K->n = (uint16_t)from;
        x->cnt[i] -= moved;
        x->cnt[i + 1] += moved;
    }
    node_min(b, x->kid[i + 1], h, &x->score[i + 1], &x->ref[i + 1]);
    if (node_n(x->kid[i], h)) node_min(b, x->kid[i], h, &x->score[i], &x->ref[i]);
}

/* Open a slot at position at of x for a new child. */
static void inner_open(zinner *x, int at) {
    size_t rest = x->n - (size_t)at;
    memmove(x->cnt + at + 1, x->cnt + at, rest * sizeof(uint32_t));
    memmove(x->ref + at + 1, x->ref + at, rest * sizeof(arena_ref));
    memmove(x->score + at + 1, x->score + at, rest * sizeof(double));
    memmove(x->kid + at + 1, x->kid + at, rest * sizeof(void *));
    x->n++;
}

static void inner_close(zinner *x, int at) {
    size_t rest = x->n - (size_t)at - 1;
    memmove(x->cnt + at, x->cnt + at + 1, rest * sizeof(uint32_t));
    memmove(x->ref + at, x->ref + at + 1, rest * sizeof(arena_ref));
    memmove(x->score + at, x->score + at + 1, rest * sizeof(double));
    memmove(x->kid + at, x->kid + at + 1, rest * sizeof(void *));
    x->n--;
}

/* Split child i of x (which has room): child i keeps `keep` entries. */
static void split_child(zbig *b, zinner *x, int i, int h, size_t keep) {
    inner_open(x, i + 1);
    if (h == 0) {
        zleaf *K = x->kid[i], *S = leaf_new(b);
        size_t mv = K->n - keep;
        memcpy(S->key, K->key + keep, mv * sizeof(float));
        memcpy(S->ref, K->ref + keep, mv * sizeof(arena_ref));
        S->n = (uint16_t)mv;
        K->n = (uint16_t)keep;
        S->prev = K;
        S->next = K->next;
        if (K->next) K->next->prev = S;
        else b->tail = S;
        K->next = S;
        x->kid[i + 1] = S;
        x->cnt[i + 1] = (uint32_t)mv;
        x->cnt[i] -= (uint32_t)mv;
    } else {
        zinner *K = x->kid[i], *S = inner_new(b);
        size_t mv = K->n - keep;
        uint32_t moved = 0;
        for (size_t j = keep; j < K->n; j++) moved += K->cnt[j];
        memcpy(S->cnt, K->cnt + keep, mv * sizeof(uint32_t));
        memcpy(S->ref, K->ref + keep, mv * sizeof(arena_ref));
        memcpy(S->score, K->score + keep, mv * sizeof(double));
        memcpy(S->kid, K->kid + keep, mv * sizeof(void *));
        S->n = (uint16_t)mv;
        K->n = (uint16_t)keep;
        x->kid[i + 1] = S;
        x->cnt[i + 1] = moved;
        x->cnt[i] -= moved;
    }
    node_min(b, x->kid[i + 1], h, &x->score[i + 1], &x->ref[i + 1]);
}

/* Child i of x is full: shift to a sibling with room for two more (so that
 * neither ends up full), else split it; either way both halves have room.
 * app / pre: the key being inserted goes after the maximum / before the
 * minimum of the whole tree. */
static void make_room(zbig *b, zinner *x, int i, int h, int app, int pre) {
    size_t cap = node_cap(h), n = node_n(x->kid[i], h);
    if (!pre && i > 0) {
        size_t ln = node_n(x->kid[i - 1], h);
        if (ln + 1 < cap) {
            shift_left(b, x, i, h, (n - ln + 1) / 2);
            return;
        }
    }
    if (!app && i + 1 < x->n) {
        size_t rn = node_n(x->kid[i + 1], h);
        if (rn + 1 < cap) {
            shift_right(b, x, i, h, (n - rn + 1) / 2);
            return;
        }
    }
    size_t keep = app ? cap - 1 : pre ? 1 : cap / 2;
    split_child(b, x, i, h, keep);
}

static void bt_insert(zbig *b, const zkey *k) {
    if (!b->root) {
        zleaf *l = leaf_new(b);
        l->key[0] = k->f;
        l->ref[0] = k->ref;
        l->n = 1;
        b->root = l;
        b->height = 0;
        b->head = b->tail = l;
        return;
    }
    int app = zb_cmp_leaf(b, k, b->tail->key[b->tail->n - 1], b->tail->ref[b->tail->n - 1]) > 0;
    int pre = !app && zb_cmp_leaf(b, k, b->head->key[0], b->head->ref[0]) < 0;
    if (node_n(b->root, b->height) == node_cap(b->height)) {
        zinner *r = inner_new(b);
        r->n = 1;
        r->kid[0] = b->root;
        r->cnt[0] = (uint32_t)node_count(b->root, b->height);
        node_min(b, b->root, b->height, &r->score[0], &r->ref[0]);
        b->root = r;
        b->height++;
    }
    void *node = b->root;
    for (int h = b->height; h > 0; h--) {
        zinner *x = node;
        int i = inner_child(b, x, k);
        if (node_n(x->kid[i], h - 1) == node_cap(h - 1)) {
            make_room(b, x, i, h - 1, app, pre);
            i = inner_child(b, x, k);
        }
        if (i == 0 && zb_cmp(b, k, x->score[0], x->ref[0]) < 0) {
            x->score[0] = k->score;
            x->ref[0] = k->ref;
        }
        x->cnt[i]++;
        node = x->kid[i];
    }
    zleaf *l = node;
    int pos = leaf_lower(b, l, k);
    assert(l->n < ZL_CAP);
    memmove(l->key + pos + 1, l->key + pos, (size_t)(l->n - pos) * sizeof(float));
    memmove(l->ref + pos + 1, l->ref + pos, (size_t)(l->n - pos) * sizeof(arena_ref));
    l->key[pos] = k->f;
    l->ref[pos] = k->ref;
    l->n++;
}

typedef struct zpath {
    zinner *node[ZMAX_H];
    int idx[ZMAX_H];
    int depth;
} zpath;

/* Rank of key k (or of where it would go); leaf and position optional. */
static size_t bt_find(const zbig *b, const zkey *k, zpath *path, zleaf **leafp, int *posp) {
    size_t r = 0;
    void *node = b->root;
    int d = 0;
    for (int h = b->height; h > 0; h--) {
        zinner *x = node;
        int i = inner_child(b, x, k);
        for (int j = 0; j < i; j++) r += x->cnt[j];
        if (path) {
            path->node[d] = x;
            path->idx[d] = i;
        }
        d++;
        node = x->kid[i];
    }
    if (path) path->depth = d;
    zleaf *l = node;
    int pos = leaf_lower(b, l, k);
    if (leafp) *leafp = l;
    if (posp) *posp = pos;
    return r + (size_t)pos;
}

static zleaf *bt_locate(const zbig *b, size_t r, int *pos) {
    void *node = b->root;
    for (int h = b->height; h > 0; h--) {
        zinner *x = node;
        int i = 0;
        while (i + 1 < x->n && r >= x->cnt[i]) r -= x->cnt[i++];
        node = x->kid[i];
    }
    *pos = (int)r;
    return node;
}

/* Monotone predicate over stored pairs (false ... false true ... true).
 * s is the exact score when exact, else the leaf's f32 of it. */
typedef int zpred_fn(const zbig *b, const void *arg, double s, arena_ref r, int exact);

/* Rank of the first pair for which pred holds (count when none). */
static size_t bt_lower_pred(const zbig *b, zpred_fn *pred, const void *arg) {
    if (!b->root) return 0;
    size_t r = 0;
    void *node = b->root;
    for (int h = b->height; h > 0; h--) {
        zinner *x = node;
        int lo = 0, hi = x->n;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (pred(b, arg, x->score[mid], x->ref[mid], 1)) hi = mid;
            else lo = mid + 1;
        }
        int i = lo > 0 ? lo - 1 : 0;
        for (int j = 0; j < i; j++) r += x->cnt[j];
        node = x->kid[i];
    }
    zleaf *l = node;
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (pred(b, arg, l->key[mid], l->ref[mid], 0)) hi = mid;
        else lo = mid + 1;
    }
    return r + (size_t)lo;
}

/* Merge or even out child i of x with a neighbour (x has >= 2 children). */
static void rebalance(zbig *b, zinner *x, int i, int h) {
    int li = i > 0 ? i - 1 : i;
    size_t ln = node_n(x->kid[li], h), rn = node_n(x->kid[li + 1], h);
    if (ln + rn <= node_cap(h)) {
        if (h == 0) {
            zleaf *L = x->kid[li], *R = x->kid[li + 1];
            memcpy(L->key + L->n, R->key, R->n * sizeof(float));
            memcpy(L->ref + L->n, R->ref, R->n * sizeof(arena_ref));
            L->n = (uint16_t)(L->n + R->n);
            L->next = R->next;
            if (R->next) R->next->prev = L;
            else b->tail = L;
            leaf_free(b, R);
        } else {
            zinner *L = x->kid[li], *R = x->kid[li + 1];
            memcpy(L->cnt + L->n, R->cnt, R->n * sizeof(uint32_t));
            memcpy(L->ref + L->n, R->ref, R->n * sizeof(arena_ref));
            memcpy(L->score + L->n, R->score, R->n * sizeof(double));
            memcpy(L->kid + L->n, R->kid, R->n * sizeof(void *));
            L->n = (uint16_t)(L->n + R->n);
            inner_free(b, R);
        }
        x->cnt[li] += x->cnt[li + 1];
        inner_close(x, li + 1);
        if (node_n(x->kid[li], h)) node_min(b, x->kid[li], h, &x->score[li], &x->ref[li]);
        return;
    }
    if (ln < rn) shift_left(b, x, li + 1, h, (rn - ln) / 2);
    else shift_right(b, x, li, h, (ln - rn) / 2);
}

static void del_rank_rec(zbig *b, void *node, int h, size_t r, arena_ref *ref) {
    if (h == 0) {
        zleaf *l = node;
        size_t pos = r;
        assert(pos < l->n);
        *ref = l->ref[pos];
        memmove(l->key + pos, l->key + pos + 1, (l->n - pos - 1) * sizeof(float));
        memmove(l->ref + pos, l->ref + pos + 1, (l->n - pos - 1) * sizeof(arena_ref));
        l->n--;
        return;
    }
    zinner *x = node;
    int i = 0;
    while (r >= x->cnt[i]) r -= x->cnt[i++];
    del_rank_rec(b, x->kid[i], h - 1, r, ref);
    x->cnt[i]--;
    size_t kn = node_n(x->kid[i], h - 1);
    /* The child's minimum changed only if it was the pair removed. */
    if (kn && x->ref[i] == *ref) node_min(b, x->kid[i], h - 1, &x->score[i], &x->ref[i]);
    if (kn < (h - 1 == 0 ? ZL_MIN : ZI_MIN) && x->n > 1) rebalance(b, x, i, h - 1);
}

/* Remove the pair at rank r; its reference comes back. */
static void bt_delete_rank(zbig *b, size_t r, arena_ref *ref) {
    del_rank_rec(b, b->root, b->height, r, ref);
    if (b->height == 0) {
        zleaf *l = b->root;
        if (l->n == 0) {
            leaf_free(b, l);
            b->root = NULL;
            b->head = b->tail = NULL;
        }
        return;
    }
    while (b->height > 0 && ((zinner *)b->root)->n == 1) {
        zinner *x = b->root;
        b->root = x->kid[0];
        b->height--;
        inner_free(b, x);
    }
    if (b->height == 0) {
        zleaf *l = b->root;
        if (l->n == 0) {
            leaf_free(b, l);
            b->root = NULL;
            b->head = b->tail = NULL;
        }
    }
}

/* Build the tree from pairs sorted by key, nodes evenly filled. */
static void bt_build(zbig *b, const double *sc, const arena_ref *rf, size_t n) {
    assert(!b->root);
    if (n == 0) return;
    size_t nl = (n + ZL_CAP - 1) / ZL_CAP;
    void **level = xmalloc(nl * sizeof(void *));
    uint32_t *cnt = xmalloc(nl * sizeof(uint32_t));
    size_t at = 0;
    zleaf *prev = NULL;
    for (size_t i = 0; i < nl; i++) {
        size_t take = n / nl + (i < n % nl);
        zleaf *l = leaf_new(b);
        for (size_t j = 0; j < take; j++) l->key[j] = f32(sc[at + j]);
        memcpy(l->ref, rf + at, take * sizeof(arena_ref));
        l->n = (uint16_t)take;
        l->prev = prev;
        if (prev) prev->next = l;
        else b->head = l;
        prev = l;
        at += take;
        level[i] = l;
        cnt[i] = (uint32_t)take;
    }
    b->tail = prev;
    size_t cur = nl;
    int h = 0;
    while (cur > 1) {
        size_t np = (cur + ZI_CAP - 1) / ZI_CAP;
        size_t k = 0;
        for (size_t i = 0; i < np; i++) {
            size_t take = cur / np + (i < cur % np);
            zinner *x = inner_new(b);
            uint32_t total = 0;
            for (size_t j = 0; j < take; j++, k++) {
                x->kid[j] = level[k];
                x->cnt[j] = cnt[k];
                node_min(b, level[k], h, &x->score[j], &x->ref[j]);
                total += cnt[k];
            }
            x->n = (uint16_t)take;
            level[i] = x;
            cnt[i] = total;
        }
        cur = np;
        h++;
    }
    b->root = level[0];
    b->height = h;
    free(level);
    free(cnt);
}

/* Compaction moved an entry: re-point the pair (and the inner minimum that
 * names it, which lies on the descent path of its key). */
static void bt_replace_ref(zbig *b, const zkey *k, arena_ref to) {
    void *node = b->root;
    for (int h = b->height; h > 0; h--) {
        zinner *x = node;
        int i = inner_child(b, x, k);
        if (x->ref[i] == k->ref) x->ref[i] = to;
        node = x->kid[i];
    }
    zleaf *l = node;
    int pos = leaf_lower(b, l, k);
    assert(pos < l->n && l->ref[pos] == k->ref);
    l->ref[pos] = to;
}

/* ------------------------------------------------------------------ */
/* big encoding: element operations                                    */

static void zb_moved(void *ctx, arena_ref from, arena_ref to, const void *data, size_t len) {
    zbig *b = ctx;
    const unsigned char *d = data;
    b->mv_from = from;
    b->mv_data = d;
    b->mv_len = len;
    zmatch km = {d + 8, len - 8, from};
    arena_ref *slot = swiss_find(&b->idx, hash_bytes(d + 8, len - 8), &km);
    assert(slot);
    *slot = to;
    if (!b->acc) {
        double sc;
        memcpy(&sc, d, 8);
        zkey k = zkey_of(sc, d + 8, len - 8, from);
        bt_replace_ref(b, &k, to);
    }
    b->mv_from = ARENA_REF_NONE;
}

static void zb_compact(zbig *b, size_t budget) {
    if (arena_compact_needed(&b->a)) arena_compact_step(&b->a, budget, zb_moved, b);
}

/* A new element (absent from the index). */
static int zb_insert(zbig *b, uint64_t h, double score, const void *m, size_t n) {
    arena_ref ref;
    void *p;
    int rc = arena_alloc(&b->a, 8 + n, &ref, &p);
    if (rc != ARENA_OK) return rc == ARENA_EFULL ? ZSET_EFULL : ZSET_ENOMEM;
    unsigned char *e = p;
    memcpy(e, &score, 8);
    if (n) memcpy(e + 8, m, n);
    arena_ref *slot = swiss_insert(&b->idx, h);
    if (!slot) {
        arena_free(&b->a, ref);
        return ZSET_ENOMEM;
    }
    *slot = ref;
    if (!b->acc) {
        zkey k = zkey_of(score, e + 8, n, ref);
        bt_insert(b, &k);
    }
    return ZSET_OK;
}

/* Change the score of the element at ref (member m/n, score old). */
static void zb_rescore(zbig *b, arena_ref ref, const unsigned char *m, size_t n, double old, double score) {
    zkey ko = zkey_of(old, m, n, ref);
    zpath path;
    zleaf *l;
    int pos;
    size_t r = bt_find(b, &ko, &path, &l, &pos);
    assert(pos < l->n && l->ref[pos] == ref);
    zkey kn = zkey_of(score, m, n, ref);
    int ok = 1;
    if (pos > 0) ok = zb_cmp_leaf(b, &kn, l->key[pos - 1], l->ref[pos - 1]) > 0;
    else if (l->prev) ok = zb_cmp_leaf(b, &kn, l->prev->key[l->prev->n - 1], l->prev->ref[l->prev->n - 1]) > 0;
    if (ok) {
        if (pos + 1 < l->n) ok = zb_cmp_leaf(b, &kn, l->key[pos + 1], l->ref[pos + 1]) < 0;
        else if (l->next) ok = zb_cmp_leaf(b, &kn, l->next->key[0], l->next->ref[0]) < 0;
    }
    unsigned char *e = arena_get(&b->a, ref, NULL);
    memcpy(e, &score, 8);
    if (ok) {
        l->key[pos] = kn.f;
        if (pos == 0) {
            for (int d = path.depth - 1; d >= 0; d--) {
                path.node[d]->score[path.idx[d]] = score;
                if (path.idx[d] != 0) break;
            }
        }
        return;
    }
    arena_ref rr;
    bt_delete_rank(b, r, &rr);
    assert(rr == ref);
    (void)rr;
    kn.m = e + 8;
    bt_insert(b, &kn);
}

/* Remove the element of rank r; returns the arena bytes freed. */
static size_t zb_delete_rank(zbig *b, size_t r) {
    arena_ref ref;
    bt_delete_rank(b, r, &ref);
    size_t len;
    const unsigned char *e = arena_get(&b->a, ref, &len);
    zmatch km = {NULL, 0, ref};
    arena_ref *slot = swiss_find(&b->idx, hash_bytes(e + 8, len - 8), &km);
    assert(slot);
    swiss_delete(&b->idx, slot);
    arena_free(&b->a, ref);
    return arena_entry_bytes(len);
}

static void zb_free(zbig *b) {
    if (b->root) free_subtree(b, b->root, b->height);
    swiss_free(&b->idx);
    arena_destroy(&b->a);
    free(b);
}

/* ------------------------------------------------------------------ */
/* conversions                                                         */

typedef struct pair_vec {
    double *sc;
    arena_ref *rf;
    size_t n;
} pair_vec;

/* packed -> big */
static int to_big(zset *z) {
    zbig *b = zb_new();
    pair_vec v = {xmalloc((z->n ? z->n : 1) * sizeof(double)), xmalloc((z->n ? z->n : 1) * sizeof(arena_ref)), 0};
    size_t off = 0;
    int rc = ZSET_OK;
    while (off < z->pklen) {
        double s;
        const unsigned char *m;
        size_t n, sz = pk_decode(z->pk + off, &s, &m, &n);
        arena_ref ref;
        void *p;
        int arc = arena_alloc(&b->a, 8 + n, &ref, &p);
        arena_ref *slot = arc == ARENA_OK ? swiss_insert(&b->idx, hash_bytes(m, n)) : NULL;
        if (!slot) {
            rc = arc == ARENA_EFULL ? ZSET_EFULL : ZSET_ENOMEM;
            break;
        }
        memcpy(p, &s, 8);
        if (n) memcpy((unsigned char *)p + 8, m, n);
        *slot = ref;
        v.sc[v.n] = s;
        v.rf[v.n] = ref;
        v.n++;
        off += sz;
    }
    if (rc == ZSET_OK) bt_build(b, v.sc, v.rf, v.n);
    free(v.sc);
    free(v.rf);
    if (rc != ZSET_OK) {
        zb_free(b);
        return rc;
    }
    free(z->pk);
    z->pk = NULL;
    z->pklen = z->pkcap = 0;
    z->big = b;
    return ZSET_OK;
}

/* big (with its tree) -> packed */
static void to_packed(zset *z) {
    zbig *b = z->big;
    size_t bytes = 0;
    for (zleaf *l = b->head; l; l = l->next)
        for (int i = 0; i < l->n; i++) {
            size_t len;
            arena_get(&b->a, l->ref[i], &len);
            bytes += pk_entry_size(len - 8);
        }
    unsigned char *pk = xmalloc(bytes ? bytes : 1);
    size_t off = 0;
    for (zleaf *l = b->head; l; l = l->next)
        for (int i = 0; i < l->n; i++) {
            size_t len;
            const unsigned char *e = arena_get(&b->a, l->ref[i], &len);
            double s;
            memcpy(&s, e, 8);
            if (s == 0) s = 0;
            pk_write(pk + off, s, e + 8, len - 8);
            off += pk_entry_size(len - 8);
        }
    zb_free(b);
    z->big = NULL;
    z->pk = pk;
    z->pklen = z->pkcap = bytes;
}

/* ------------------------------------------------------------------ */
/* public API                                                          */

zset *zset_new(const zset_limits *lim) {
    (void)lim;
    zset *z = xmalloc(sizeof(*z));
    memset(z, 0, sizeof(*z));
    return z;
}

zset *zset_new_hint(size_t size_hint, const zset_limits *lim) {
    zset *z = zset_new(lim);
    if (lim && size_hint > lim->max_entries) z->big = zb_new();
    return z;
}

zset *zset_new_reserve(size_t n, const zset_limits *lim) {
    zset *z = zset_new_hint(n, lim);
    /* A failed reserve only costs the growth steps it would have saved. */
    if (z && z->big) (void)swiss_reserve(&z->big->idx, n);
    return z;
}

void zset_free(zset *z) {
    if (!z) return;
    if (z->big) zb_free(z->big);
    free(z->pk);
    free(z);
}

size_t zset_card(const zset *z) { return z->n; }
int zset_is_packed(const zset *z) { return z->big == NULL; }

size_t zset_mem_bytes(const zset *z) {
    size_t m = sizeof(*z);
    if (!z->big) return m + z->pkcap;
    const zbig *b = z->big;
    return m + sizeof(*b) + arena_mem_bytes(&b->a) + swiss_mem_bytes(&b->idx) + b->nleaf * sizeof(zleaf) +
           b->ninner * sizeof(zinner);
}

zset *zset_dup(const zset *z) {
    zset *d = zset_new(NULL);
    if (!z->big) {
        if (z->pklen) {
            d->pk = xmalloc(z->pklen);
            memcpy(d->pk, z->pk, z->pklen);
        }
        d->pklen = d->pkcap = z->pklen;
        d->n = z->n;
        return d;
    }
    const zbig *b = z->big;
    zbig *nb = zb_new();
    pair_vec v = {xmalloc((z->n ? z->n : 1) * sizeof(double)), xmalloc((z->n ? z->n : 1) * sizeof(arena_ref)), 0};
    int rc = ZSET_OK;
    for (zleaf *l = b->head; l && rc == ZSET_OK; l = l->next)
        for (int i = 0; i < l->n; i++) {
            size_t len;
            const unsigned char *e = arena_get(&b->a, l->ref[i], &len);
            arena_ref ref;
            int arc = arena_put(&nb->a, e, len, &ref);
            arena_ref *slot = arc == ARENA_OK ? swiss_insert(&nb->idx, hash_bytes(e + 8, len - 8)) : NULL;
            if (!slot) {
                rc = ZSET_ENOMEM;
                break;
            }
            *slot = ref;
            memcpy(&v.sc[v.n], e, 8);
            v.rf[v.n] = ref;
            v.n++;
        }
    if (rc == ZSET_OK) bt_build(nb, v.sc, v.rf, v.n);
    free(v.sc);
    free(v.rf);
    if (rc != ZSET_OK) {
        zb_free(nb);
        free(d);
        return NULL;
    }
    d->big = nb;
    d->n = z->n;
    return d;
}

int zset_score(zset *z, const void *m, size_t n, double *score) {
    if (!z->big) return pk_find(z, m, n, NULL, score) != SIZE_MAX;
    zbig *b = z->big;
    arena_ref *slot = zb_slot(b, hash_bytes(m, n), m, n);
    if (!slot) return 0;
    if (score) *score = zb_entry_score(b, *slot);
    return 1;
}

long zset_rank(zset *z, const void *m, size_t n, double *score) {
    if (!z->big) {
        size_t r;
        if (pk_find(z, m, n, &r, score) == SIZE_MAX) return -1;
        return (long)r;
    }
    zbig *b = z->big;
    arena_ref *slot = zb_slot(b, hash_bytes(m, n), m, n);
    if (!slot) return -1;
    arena_ref ref = *slot;
    double s = zb_entry_score(b, ref);
    if (score) *score = s;
    zkey k = zkey_of(s, m, n, ref);
    return (long)bt_find(b, &k, NULL, NULL, NULL);
}

int zset_add(zset *z, double score, const void *m, size_t n, int in, int *out, double *newscore,
             const zset_limits *lim) {
    int nx = in & ZADD_IN_NX, xx = in & ZADD_IN_XX, gt = in & ZADD_IN_GT, lt = in & ZADD_IN_LT;
    int incr = in & ZADD_IN_INCR;
    *out = 0;
    if (!z->big) {
        double cur;
        size_t off = pk_find(z, m, n, NULL, &cur);
        if (off != SIZE_MAX) {
            if (nx) {
                *out = ZADD_OUT_NOP;
                return ZSET_OK;
            }
            if (incr) {
                score += cur;
                if (isnan(score)) {
                    *out = ZADD_OUT_NAN;
                    return ZSET_OK;
                }
            }
            if ((lt && score >= cur) || (gt && score <= cur)) {
                *out = ZADD_OUT_NOP;
                return ZSET_OK;
            }
            if (newscore) *newscore = score;
            if (score != cur) {
                double s;
                const unsigned char *em;
                size_t el, sz = pk_decode(z->pk + off, &s, &em, &el);
                pk_delete_span(z, off, off + sz, 1);
                pk_insert(z, score, m, n);
                *out = ZADD_OUT_UPDATED;
            }
            return ZSET_OK;
        }
        if (xx) {
            *out = ZADD_OUT_NOP;
            return ZSET_OK;
        }
        size_t maxe = lim ? lim->max_entries : 128, maxv = lim ? lim->max_value : 64;
        if (z->n + 1 <= maxe && n <= maxv) {
            pk_insert(z, score, m, n);
            if (newscore) *newscore = score;
            *out = ZADD_OUT_ADDED;
            return ZSET_OK;
        }
        int rc = to_big(z);
        if (rc != ZSET_OK) return rc;
        /* fall through: absent from the new index too */
    }
    zbig *b = z->big;
    uint64_t h = hash_bytes(m, n);
    arena_ref *slot = zb_slot(b, h, m, n);
    if (slot) {
        if (nx) {
            *out = ZADD_OUT_NOP;
            return ZSET_OK;
        }
        arena_ref ref = *slot;
        size_t len;
        const unsigned char *e = arena_get(&b->a, ref, &len);
        double cur;
        memcpy(&cur, e, 8);
        if (incr) {
            score += cur;
            if (isnan(score)) {
                *out = ZADD_OUT_NAN;
                return ZSET_OK;
            }
        }
        if ((lt && score >= cur) || (gt && score <= cur)) {
            *out = ZADD_OUT_NOP;
            return ZSET_OK;
        }
        if (newscore) *newscore = score;
        if (score != cur) {
            zb_rescore(b, ref, e + 8, len - 8, cur, score);
            *out = ZADD_OUT_UPDATED;
        }
        return ZSET_OK;
    }
    if (xx) {
        *out = ZADD_OUT_NOP;
        return ZSET_OK;
    }
    int rc = zb_insert(b, h, score, m, n);
    if (rc != ZSET_OK) return rc;
    z->n++;
    if (newscore) *newscore = score;
    *out = ZADD_OUT_ADDED;
    return ZSET_OK;
}

int zset_delete(zset *z, const void *m, size_t n) {
    if (!z->big) {
        double s;
        size_t off = pk_find(z, m, n, NULL, &s);
        if (off == SIZE_MAX) return 0;
        const unsigned char *em;
        size_t el, sz = pk_decode(z->pk + off, &s, &em, &el);
        pk_delete_span(z, off, off + sz, 1);
        return 1;
    }
    zbig *b = z->big;
    arena_ref *slot = zb_slot(b, hash_bytes(m, n), m, n);
    if (!slot) return 0;
    arena_ref ref = *slot;
    zkey k = zkey_of(zb_entry_score(b, ref), m, n, ref);
    size_t r = bt_find(b, &k, NULL, NULL, NULL);
    size_t freed = zb_delete_rank(b, r);
    z->n--;
    zb_compact(b, 2 * freed + 64);
    return 1;
}

size_t zset_delete_range(zset *z, size_t lo, size_t hi) {
    if (hi > z->n) hi = z->n;
    if (lo >= hi) return 0;
    size_t cnt = hi - lo;
    if (!z->big) {
        size_t from = pk_offset_of_rank(z, lo), to = from;
        for (size_t i = 0; i < cnt; i++) {
            double s;
            const unsigned char *em;
            size_t el;
            to += pk_decode(z->pk + to, &s, &em, &el);
        }
        pk_delete_span(z, from, to, cnt);
        return cnt;
    }
    zbig *b = z->big;
    if (cnt == z->n) {
        /* Everything: drop the structure wholesale. */
        zb_free(b);
        z->big = zb_new();
        z->n = 0;
        return cnt;
    }
    size_t freed = 0;
    for (size_t i = 0; i < cnt; i++) freed += zb_delete_rank(b, lo);
    z->n -= cnt;
    zb_compact(b, 2 * freed + 64);
    return cnt;
}

/* ---- ranges ---- */

static inline int score_gte_min(const zset_range *r, double s) { return r->minex ? s > r->min : s >= r->min; }
static inline int score_lte_max(const zset_range *r, double s) { return r->maxex ? s < r->max : s <= r->max; }

/* A leaf's f32 decides against a bound unless both round to one float. */
static int pred_score_gte_min(const zbig *b, const void *arg, double s, arena_ref r, int exact) {
    const zset_range *rg = arg;
    if (!exact) {
        float fs = (float)s, fb = f32(rg->min);
        if (fs != fb) return fs > fb;
        s = zb_entry_score(b, r);
    }
    return score_gte_min(rg, s);
}

static int pred_score_gt_max(const zbig *b, const void *arg, double s, arena_ref r, int exact) {
    const zset_range *rg = arg;
    if (!exact) {
        float fs = (float)s, fb = f32(rg->max);
        if (fs != fb) return fs > fb;
        s = zb_entry_score(b, r);
    }
    return !score_lte_max(rg, s);
}

void zset_score_span(zset *z, const zset_range *r, size_t *lo, size_t *hi) {
    *lo = *hi = 0;
    if (r->min > r->max || (r->min == r->max && (r->minex || r->maxex))) return;
    if (z->n == 0) return;
    size_t a, c;
    if (!z->big) {
        size_t off = 0, i = 0;
        a = c = z->n;
        while (off < z->pklen) {
            double s;
            const unsigned char *em;
            size_t el;
            off += pk_decode(z->pk + off, &s, &em, &el);
            if (a == z->n && score_gte_min(r, s)) a = i;
            if (!score_lte_max(r, s)) {
                c = i;
                break;
            }
            i++;
        }
    } else {
        a = bt_lower_pred(z->big, pred_score_gte_min, r);
        c = bt_lower_pred(z->big, pred_score_gt_max, r);
    }
    if (c < a) c = a;
    *lo = a;
    *hi = c;
}

static inline int lex_gte_min(const zset_lexbound *b, const unsigned char *m, size_t n) {
    switch (b->kind) {
    case ZLEX_NEG_INF: return 1;
    case ZLEX_POS_INF: return 0;
    case ZLEX_INCL: return mem_cmp(m, n, (const unsigned char *)b->p, b->n) >= 0;
    default: return mem_cmp(m, n, (const unsigned char *)b->p, b->n) > 0;
    }
}

static inline int lex_lte_max(const zset_lexbound *b, const unsigned char *m, size_t n) {
    switch (b->kind) {
    case ZLEX_NEG_INF: return 0;
    case ZLEX_POS_INF: return 1;
    case ZLEX_INCL: return mem_cmp(m, n, (const unsigned char *)b->p, b->n) <= 0;
    default: return mem_cmp(m, n, (const unsigned char *)b->p, b->n) < 0;
    }
}

int zset_lexrange_nonempty(const zset_lexrange *r) {
    /* Redis's sdscmplex on the two bounds; -inf and +inf compare as the
     * smallest and greatest strings, and two infinities of the same sign
     * as equal (both bounds are then exclusive). */
    const zset_lexbound *a = &r->min, *b = &r->max;
    int cmp;
    int ainf = a->kind <= ZLEX_POS_INF, binf = b->kind <= ZLEX_POS_INF;
    if (ainf && binf && a->kind == b->kind) cmp = 0;
    else if (a->kind == ZLEX_NEG_INF || b->kind == ZLEX_POS_INF) cmp = -1;
    else if (a->kind == ZLEX_POS_INF || b->kind == ZLEX_NEG_INF) cmp = 1;
    else cmp = mem_cmp((const unsigned char *)a->p, a->n, (const unsigned char *)b->p, b->n);
    int minex = a->kind != ZLEX_INCL, maxex = b->kind != ZLEX_INCL;
    return !(cmp > 0 || (cmp == 0 && (minex || maxex)));
}

static int pred_lex_gte_min(const zbig *b, const void *arg, double s, arena_ref r, int exact) {
    (void)s;
    (void)exact;
    size_t len;
    const unsigned char *e = zb_entry(b, r, &len);
    return lex_gte_min(&((const zset_lexrange *)arg)->min, e + 8, len - 8);
}

static int pred_lex_gt_max(const zbig *b, const void *arg, double s, arena_ref r, int exact) {
    (void)s;
    (void)exact;
    size_t len;
    const unsigned char *e = zb_entry(b, r, &len);
    return !lex_lte_max(&((const zset_lexrange *)arg)->max, e + 8, len - 8);
}

void zset_lex_span(zset *z, const zset_lexrange *r, int rev, size_t *lo, size_t *hi) {
    *lo = *hi = 0;
    if (!zset_lexrange_nonempty(r) || z->n == 0) return;
    const char *m;
    size_t n;
    double s;
    /* Redis first checks the two ends: last >= min, first <= max. */
    zset_at(z, z->n - 1, &m, &n, &s);
    if (!lex_gte_min(&r->min, (const unsigned char *)m, n)) return;
    zset_at(z, 0, &m, &n, &s);
    if (!lex_lte_max(&r->max, (const unsigned char *)m, n)) return;
    if (z->big) {
        size_t a = bt_lower_pred(z->big, pred_lex_gte_min, r);
        size_t c = bt_lower_pred(z->big, pred_lex_gt_max, r);
        if (c < a) c = a;
        *lo = a;
        *hi = c;
        return;
    }
    /* Packed: the listpack walks, element by element. */
    zset_iter it;
    if (!rev) {
        size_t i = 0, a = SIZE_MAX;
        zset_iter_init(&it, z, 0, 0);
        while (zset_iter_next(&it, &m, &n, &s)) {
            if (a == SIZE_MAX) {
                if (lex_gte_min(&r->min, (const unsigned char *)m, n)) {
                    if (!lex_lte_max(&r->max, (const unsigned char *)m, n)) return;
                    a = i;
                }
            } else if (!lex_lte_max(&r->max, (const unsigned char *)m, n)) {
                break;
            }
            i++;
        }
        if (a == SIZE_MAX) return;
        *lo = a;
        *hi = i;
    } else {
        size_t i = z->n, c = SIZE_MAX;
        zset_iter_init(&it, z, z->n - 1, 1);
        while (zset_iter_next(&it, &m, &n, &s)) {
            if (c == SIZE_MAX) {
                if (lex_lte_max(&r->max, (const unsigned char *)m, n)) {
                    if (!lex_gte_min(&r->min, (const unsigned char *)m, n)) return;
                    c = i;
                }
            } else if (!lex_gte_min(&r->min, (const unsigned char *)m, n)) {
                break;
            }
            i--;
        }
        if (c == SIZE_MAX) return;
        *lo = i;
        *hi = c;
    }
}

/* ---- iteration ---- */

void zset_iter_init(zset_iter *it, const zset *z, size_t rank, int rev) {
    it->z = z;
    it->rev = rev;
    it->off = SIZE_MAX;
    it->leaf = NULL;
    it->pos = 0;
    if (rank >= z->n) return;
    if (!z->big) {
        it->off = pk_offset_of_rank(z, rank);
    } else {
        it->leaf = bt_locate(z->big, rank, &it->pos);
    }
}

int zset_iter_next(zset_iter *it, const char **m, size_t *n, double *score) {
    const zset *z = it->z;
    if (!z->big) {
        if (it->off == SIZE_MAX) return 0;
        const unsigned char *em;
        size_t sz = pk_decode(z->pk + it->off, score, &em, n);
        *m = (const char *)em;
        if (!it->rev) {
            it->off += sz;
            if (it->off >= z->pklen) it->off = SIZE_MAX;
        } else {
            it->off = it->off == 0 ? SIZE_MAX : pk_prev(z->pk, it->off);
        }
        return 1;
    }
    zleaf *l = it->leaf;
    if (!l) return 0;
    size_t len;
    const unsigned char *e = arena_get(&z->big->a, l->ref[it->pos], &len);
    *m = (const char *)e + 8;
    *n = len - 8;
    memcpy(score, e, 8);
    if (!it->rev) {
        if (++it->pos >= l->n) {
            it->leaf = l->next;
            it->pos = 0;
        }
    } else {
        if (--it->pos < 0) {
            it->leaf = l->prev;
            it->pos = l->prev ? l->prev->n - 1 : 0;
        }
    }
    return 1;
}

void zset_at(const zset *z, size_t rank, const char **m, size_t *n, double *score) {
    zset_iter it;
    zset_iter_init(&it, z, rank, 0);
    int ok = zset_iter_next(&it, m, n, score);
    assert(ok);
    (void)ok;
}

/* ---- scan ---- */

typedef struct scan_ctx {
    zbig *b;
    zset_scan_fn *fn;
    void *arg;
} scan_ctx;

static void scan_cb(void *arg, void *slot) {
    scan_ctx *sc = arg;
    arena_ref r = arena_ref_load(slot);
    size_t len;
    const unsigned char *e = arena_get(&sc->b->a, r, &len);
    double s;
    memcpy(&s, e, 8);
    sc->fn(sc->arg, (const char *)e + 8, len - 8, s);
}

uint64_t zset_scan(zset *z, uint64_t cursor, zset_scan_fn *fn, void *arg) {
    if (!z->big) {
        zset_iter it;
        zset_iter_init(&it, z, 0, 0);
        const char *m;
        size_t n;
        double s;
        while (zset_iter_next(&it, &m, &n, &s)) fn(arg, m, n, s);
        return 0;
    }
    scan_ctx sc = {z->big, fn, arg};
    return swiss_scan(&z->big->idx, cursor, scan_cb, &sc);
}

/* ---- accumulator ---- */

zset *zset_acc_new(void) {
    zset *z = zset_new(NULL);
    z->big = zb_new();
    z->big->acc = 1;
    return z;
}

int zset_acc_add(zset *z, const void *m, size_t n, double score, zset_merge_fn *merge) {
    zbig *b = z->big;
    assert(b && b->acc);
    uint64_t h = hash_bytes(m, n);
    arena_ref *slot = zb_slot(b, h, m, n);
    if (slot) {
        unsigned char *e = arena_get(&b->a, *slot, NULL);
        double cur;
        memcpy(&cur, e, 8);
        cur = merge(cur, score);
        memcpy(e, &cur, 8);
        return ZSET_OK;
    }
    int rc = zb_insert(b, h, score, m, n);
    if (rc == ZSET_OK) z->n++;
    return rc;
}

int zset_acc_find(zset *z, const void *m, size_t n, double *score) {
    zbig *b = z->big;
    arena_ref *slot = zb_slot(b, hash_bytes(m, n), m, n);
    if (!slot) return 0;
    if (score) *score = zb_entry_score(b, *slot);
    return 1;
}

typedef struct sort_pair {
    double s;
    arena_ref r;
} sort_pair;

static int sort_cmp(const void *x, const void *y, void *ctx) {
    const sort_pair *a = x, *c = y;
    return zb_cmp2(ctx, a->s, a->r, c->s, c->r);
}

int zset_acc_finish(zset *z, const zset_limits *lim) {
    zbig *b = z->big;
    assert(b && b->acc);
    size_t n = z->n, maxlen = 0;
    sort_pair *v = xmalloc((n ? n : 1) * sizeof(*v));
    size_t k = 0;
    swiss_iter it;
    swiss_iter_init(&it, &b->idx);
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        arena_ref r = arena_ref_load(slot);
        size_t len;
        const unsigned char *e = arena_get(&b->a, r, &len);
        memcpy(&v[k].s, e, 8);
        v[k].r = r;
        if (len - 8 > maxlen) maxlen = len - 8;
        k++;
    }
    swiss_iter_done(&it);
    assert(k == n);
    qsort_r(v, n, sizeof(*v), sort_cmp, b);
    double *sc = xmalloc((n ? n : 1) * sizeof(double));
    arena_ref *rf = xmalloc((n ? n : 1) * sizeof(arena_ref));
    for (size_t i = 0; i < n; i++) {
        sc[i] = v[i].s;
        rf[i] = v[i].r;
    }
    free(v);
    b->acc = 0;
    bt_build(b, sc, rf, n);
    free(sc);
    free(rf);
    if (lim && n <= lim->max_entries && maxlen <= lim->max_value) to_packed(z);
    return ZSET_OK;
}

size_t zset_max_member(const zset *z) {
    size_t mx = 0;
    zset_iter it;
    zset_iter_init(&it, z, 0, 0);
    const char *m;
    size_t n;
    double s;
    while (zset_iter_next(&it, &m, &n, &s))
        if (n > mx) mx = n;
    return mx;
}

int zset_pack_if_fits(zset *z, const zset_limits *lim) {
    if (!z->big) return 0;
    if (z->n > lim->max_entries || zset_max_member(z) > lim->max_value) return 0;
    to_packed(z);
    return 1;
}

int zset_compact_step(zset *z, size_t budget) {
    if (!z->big) return 0;
    if (!arena_compact_needed(&z->big->a)) return 0;
    int rc = arena_compact_step(&z->big->a, budget, zb_moved, z->big);
    return rc == 1;
}

/* ------------------------------------------------------------------ */
/* checks                                                              */

typedef struct check_ctx {
    const zbig *b;
    double last_s;
    arena_ref last_r;
    int have_last;
    zleaf *expect_leaf; /* next leaf in chain order */
    int leaf_depth;
    size_t nleaf, ninner;
} check_ctx;

/* Returns the subtree count, or (size_t)-1 on an inconsistency. */
static size_t check_node(check_ctx *c, void *node, int h, int depth, int is_root) {
    const zbig *b = c->b;
    if (h == 0) {
        zleaf *l = node;
        c->nleaf++;
        if (l->n == 0 || l->n > ZL_CAP) return (size_t)-1;
        if (c->leaf_depth < 0) c->leaf_depth = depth;
        if (depth != c->leaf_depth) return (size_t)-1;
        if (l != c->expect_leaf) return (size_t)-1;
        c->expect_leaf = l->next;
        if (l->next && l->next->prev != l) return (size_t)-1;
        for (int i = 0; i < l->n; i++) {
            double s = zb_entry_score(b, l->ref[i]);
            if (isnan(s)) return (size_t)-1;
            if (memcmp(&l->key[i], &(float){f32(s)}, sizeof(float)) != 0) return (size_t)-1;
            if (c->have_last && zb_cmp2(b, c->last_s, c->last_r, s, l->ref[i]) >= 0) return (size_t)-1;
            c->last_s = s;
            c->last_r = l->ref[i];
            c->have_last = 1;
        }
        return l->n;
    }
    zinner *x = node;
    c->ninner++;
    if (x->n == 0 || x->n > ZI_CAP || (is_root && x->n < 2)) return (size_t)-1;
    size_t total = 0;
    for (int i = 0; i < x->n; i++) {
        double s;
        arena_ref r;
        node_min(b, x->kid[i], h - 1, &s, &r);
        if (s != x->score[i] || r != x->ref[i]) return (size_t)-1;
        size_t k = check_node(c, x->kid[i], h - 1, depth + 1, 0);
        if (k == (size_t)-1 || k != x->cnt[i]) return (size_t)-1;
        total += k;
    }
    return total;
}

int zset_check(const zset *z) {
    if (!z->big) {
        size_t off = 0, cnt = 0;
        double ls = 0;
        const unsigned char *lm = NULL;
        size_t ln = 0;
        while (off < z->pklen) {
            double s;
            const unsigned char *m;
            size_t n, sz = pk_decode(z->pk + off, &s, &m, &n);
            if (off + sz > z->pklen) return -__LINE__;
            if (isnan(s) || (s == 0 && signbit(s))) return -__LINE__;
            size_t t;
            back_get(z->pk + off + sz, &t);
            if (t != 8 + varint_size(n) + n) return -__LINE__;
            if (cnt && (s < ls || (s == ls && mem_cmp(lm, ln, m, n) >= 0))) return -__LINE__;
            ls = s;
            lm = m;
            ln = n;
            off += sz;
            cnt++;
        }
        if (off != z->pklen || cnt != z->n) return -__LINE__;
        return 0;
    }
    const zbig *b = z->big;
    if (b->acc) return -__LINE__;
    if (arena_check(&b->a) != 0) return -__LINE__;
    if (b->a.entries != z->n) return -__LINE__;
    if (swiss_size(&b->idx) != z->n) return -__LINE__;
    if (!b->root) {
        if (z->n || b->head || b->tail || b->nleaf || b->ninner) return -__LINE__;
        return 0;
    }
    check_ctx c = {b, 0, 0, 0, b->head, -1, 0, 0};
    size_t cnt = check_node(&c, b->root, b->height, 0, 1);
    if (cnt == (size_t)-1 || cnt != z->n) return -__LINE__;
    if (c.expect_leaf != NULL || b->head->prev != NULL) return -__LINE__;
    if (c.nleaf != b->nleaf || c.ninner != b->ninner) return -__LINE__;
    if (b->tail->next != NULL) return -__LINE__;
    /* Every indexed entry sits in the tree at the rank of its key. */
    swiss_iter it;
    swiss_iter_init(&it, (swiss *)&b->idx);
    void *slot;
    int bad = 0;
    while (!bad && (slot = swiss_iter_next(&it))) {
        arena_ref r = arena_ref_load(slot);
        size_t len;
        const unsigned char *e = arena_get(&b->a, r, &len);
        double sc;
        memcpy(&sc, e, 8);
        zkey k = zkey_of(sc, e + 8, len - 8, ARENA_REF_NONE);
        zleaf *l;
        int pos;
        bt_find(b, &k, NULL, &l, &pos);
        if (pos >= l->n || l->ref[pos] != r) bad = 1;
    }
    swiss_iter_done(&it);
    if (bad) return -__LINE__;
    return 0;
}
