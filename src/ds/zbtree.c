/* zbtree.c -- counted B+tree over a big sorted set's arena entries.
 *
 * Layout. The tree holds pairs in (score, member) order. Leaves hold 139
 * pairs of (10-bit hint, reference) in 768 bytes; inner nodes 31 children
 * with, per child, its element count and its exact minimum key (double
 * score, reference). Counts make rank <-> position O(log n) both ways
 * (ZRANK, ZRANGE at an offset); minimum keys steer the descent for a
 * (score, member) key, a score bound or a lex bound. Leaves are chained
 * both ways for range walks.
 *
 * Hints. A score's key (zbt_key) is a 64-bit integer in the scores' order.
 * A leaf has a frame (shift, base) that holds its keys: a pair's hint is
 * its key's bucket, key >> shift, less base, at most HINT_MAX (1023).
 * Hints order pairs as their keys do, so a comparison reads the entry
 * (exact score, then member bytes) only when the hints are equal; a key
 * whose bucket is below base or past base + HINT_MAX is below or above
 * every pair of the leaf. A leaf's keys are few and close together and its
 * frame spreads them over 512-1023 buckets, so most comparisons end at the
 * hint (random scores: a search reads about one entry in five; with 8-bit
 * hints, 148 to a leaf, it read four in five). That is 5.25 bytes per pair
 * where a float of the score cost 8, and it orders keys a float cannot
 * tell apart (millisecond timestamps). A key outside the frame widens it:
 * the hints of any coarser frame follow from the old ones without reading
 * entries (leaf_reframe). A finer frame needs the keys themselves: a leaf
 * that splits, shifts or merges re-reads them once its hints use under
 * half the buckets and its first and last keys allow a finer one
 * (leaf_sharpen).
 *
 * Fill. Inserts go top-down and make room before descending: a full child
 * first shifts half its surplus to a sibling with room, and only splits when
 * both neighbours are full; appends beyond the maximum (and prepends before
 * the minimum) split unevenly, so ascending loads fill leaves completely
 * and random loads stay around 80%. Deletes merge a child that drops below
 * a quarter with a neighbour, or even the two out. zbt_build fills nodes
 * evenly from sorted pairs (conversions, the ZUNIONSTORE accumulator).
 *
 * Moves. When compaction moves an entry, zbt_replace_ref re-points its pair
 * and the inner minimum that names the same entry, which always lies on the
 * descent path of that key.
 *
 * Invariants (zbt_check): inner node x: x->score/ref[i] is exactly the
 * minimum key of child i, x->cnt[i] its element count; keys strictly
 * increase across the leaf chain; every leaf is at the same depth; no node
 * is empty; the root, when inner, has two children at least. Exact minima
 * (rather than mere separators) make every key in an inner node the
 * reference of a live entry, so comparisons can always read it. */
#include "ds/zbtree.h"

#include <assert.h>
#include <stdlib.h>

#define LEAF_MIN (ZBT_LEAF_CAP / 4)
#define INNER_MIN (ZBT_INNER_CAP / 4)
#define MAX_HEIGHT 40

typedef struct zbt_inner {
    uint16_t n;                    /* children */
    uint32_t cnt[ZBT_INNER_CAP];   /* elements under each child */
    arena_ref ref[ZBT_INNER_CAP];  /* minimum key of each child ... */
    double score[ZBT_INNER_CAP];   /* ... (score, entry) */
    void *kid[ZBT_INNER_CAP];
} zbt_inner;

/* A search key: an element's score and member. */
typedef struct zkey {
    double score;
    const unsigned char *m;
    size_t n;
    arena_ref ref; /* the key's own entry when known, else ARENA_REF_NONE */
    uint64_t u;    /* zbt_key(score) */
} zkey;

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) abort();
    return p;
}

static inline zkey zkey_of(double score, const unsigned char *m, size_t n, arena_ref ref) {
    zkey k;
    k.score = score;
    k.m = m;
    k.n = n;
    k.ref = ref;
    k.u = zbt_key(score);
    return k;
}

/* Member m[0..n) <=> the member of entry r. */
static inline int member_cmp(const zbtree *t, const unsigned char *m, size_t n, arena_ref r) {
    size_t rn;
    const unsigned char *rm = zbt_member(t, r, &rn);
    return zbt_lex_cmp(m, n, rm, rn);
}

/* key <=> stored pair (s, r) */
static inline int key_cmp(const zbtree *t, const zkey *k, double s, arena_ref r) {
    if (k->score < s) return -1;
    if (k->score > s) return 1;
    if (k->ref == r) return 0;
    return member_cmp(t, k->m, k->n, r);
}

/* stored pair <=> stored pair */
int zbt_cmp(const zbtree *t, double s1, arena_ref r1, double s2, arena_ref r2) {
    if (s1 != s2 || r1 == r2) return (s1 > s2) - (s1 < s2);
    size_t n1;
    const unsigned char *m1 = zbt_member(t, r1, &n1);
    return member_cmp(t, m1, n1, r2);
}

/* key <=> the element whose entry bytes are e (len). */
static inline int entry_cmp(const zkey *k, const unsigned char *e, size_t len) {
    double s;
    memcpy(&s, e, 8);
    if (k->score != s) return k->score < s ? -1 : 1;
    return zbt_lex_cmp(k->m, k->n, e + 8, len - 8);
}

/* ---- hints ----
 *
 * A leaf's frame is (shift, base): a key u falls in bucket u >> shift, and
 * its hint is its bucket's distance from base, at most HINT_MAX. Hints of
 * one frame order keys as the keys themselves do (coarsely), and a frame
 * can be rewritten to any coarser one exactly: the buckets of a shift
 * s + k are those of s shifted by k. */

#define HINT_BITS 10
#define HINT_MAX ((1u << HINT_BITS) - 1)
_Static_assert(sizeof(zbt_leaf) == 768, "a leaf is 768 bytes");

static inline void hint_set(zbt_leaf *l, int i, uint64_t h) {
    unsigned b = (unsigned)(i & 31) * 2;
    l->hlo[i] = (uint8_t)h;
    l->hhi[i >> 5] = (l->hhi[i >> 5] & ~(UINT64_C(3) << b)) | (h >> 8 & 3) << b;
}

/* Copy n hints from s[si..] to d[di..] (the same leaf's may overlap). */
static void hints_move(zbt_leaf *d, int di, const zbt_leaf *s, int si, int n) {
    if (d == s && di > si)
        for (int i = n - 1; i >= 0; i--) hint_set(d, di + i, zbt_hint(s, si + i));
    else
        for (int i = 0; i < n; i++) hint_set(d, di + i, zbt_hint(s, si + i));
}

/* Open hint position pos of l (n hints before): those at and after it move
 * up one. Whole words of the top bits shift at once. */
static void hints_open(zbt_leaf *l, int pos, int n) {
    memmove(l->hlo + pos + 1, l->hlo + pos, (size_t)(n - pos));
    uint64_t *w = l->hhi;
    int wi = pos >> 5;
    for (int j = n >> 5; j > wi; j--) w[j] = w[j] << 2 | w[j - 1] >> 62;
    uint64_t keep = (UINT64_C(1) << ((pos & 31) * 2)) - 1;
    w[wi] = (w[wi] & ~keep) << 2 | (w[wi] & keep);
}

/* Close hint position pos of l (n hints before): those after it move down
 * one. */
static void hints_close(zbt_leaf *l, int pos, int n) {
    memmove(l->hlo + pos, l->hlo + pos + 1, (size_t)(n - pos - 1));
    uint64_t *w = l->hhi;
    int wi = pos >> 5;
    uint64_t keep = (UINT64_C(1) << ((pos & 31) * 2)) - 1;
    w[wi] = (w[wi] & keep) | (w[wi] >> 2 & ~keep);
    for (int j = wi + 1; j <= (n - 1) >> 5; j++) {
        w[j - 1] |= (w[j] & 3) << 62;
        w[j] >>= 2;
    }
}

/* The smallest k for which buckets lo and hi, shifted by k, are at most
 * HINT_MAX apart. */
static unsigned fit_shift(uint64_t lo, uint64_t hi) {
    uint64_t d = hi - lo;
    unsigned k = d > HINT_MAX ? 64 - HINT_BITS - (unsigned)__builtin_clzll(d) : 0;
    while ((hi >> k) - (lo >> k) > HINT_MAX) k++;
    return k;
}

/* Key u against leaf l's frame: -1 below every pair, 1 above, else 0 and
 * its hint in *h. */
static inline int frame_side(const zbt_leaf *l, uint64_t u, unsigned *h) {
    uint64_t q = u >> l->shift;
    if (q < l->base) return -1;
    if (q - l->base > HINT_MAX) return 1;
    *h = (unsigned)(q - l->base);
    return 0;
}

/* Rewrite l's hints for the coarser frame (shift, base), but for the gap
 * of gn positions at gap (filled by the caller, in the new frame). */
static void leaf_reframe(zbt_leaf *l, unsigned shift, uint64_t base, int gap, int gn) {
    unsigned k = shift - l->shift;
    for (int i = 0; i < l->n; i++)
        if (i < gap || i >= gap + gn) hint_set(l, i, ((l->base + zbt_hint(l, i)) >> k) - base);
    l->shift = (uint8_t)shift;
    l->base = base;
}

/* Make l's frame one that holds key u too. */
static void leaf_admit(zbt_leaf *l, uint64_t u) {
    if (l->n == 0) {
        l->shift = 0;
        l->base = u;
        return;
    }
    uint64_t q = u >> l->shift;
    if (q >= l->base && q <= l->base + HINT_MAX) return;
    /* The frame that fits the keys themselves, not the old frame's start. */
    uint64_t lo = l->base + zbt_hint(l, 0), hi = l->base + zbt_hint(l, l->n - 1);
    if (q < lo) lo = q;
    if (q > hi) hi = q;
    unsigned k = fit_shift(lo, hi);
    leaf_reframe(l, l->shift + k, lo >> k, 0, 0);
}

/* Copy the mv pairs of leaf S from position from to position at of leaf
 * T (whose room there the caller has made): T's frame widens to hold them
 * too, their hints follow in it. S keeps its frame. */
static void leaf_take(zbt_leaf *T, int at, const zbt_leaf *S, int from, int mv) {
    if (mv == 0) return;
    memcpy(T->ref + at, S->ref + from, (size_t)mv * sizeof(arena_ref));
    unsigned s = T->shift > S->shift ? T->shift : S->shift;
    uint64_t lo = (S->base + zbt_hint(S, from)) >> (s - S->shift);
    uint64_t hi = (S->base + zbt_hint(S, from + mv - 1)) >> (s - S->shift);
    int tn = T->n - mv; /* T's own pairs, around the gap */
    if (tn > 0) {
        int last = at < tn ? T->n - 1 : at - 1;
        int first = at > 0 ? 0 : mv;
        uint64_t tlo = (T->base + zbt_hint(T, first)) >> (s - T->shift);
        uint64_t thi = (T->base + zbt_hint(T, last)) >> (s - T->shift);
        if (tlo < lo) lo = tlo;
        if (thi > hi) hi = thi;
    }
    unsigned k = fit_shift(lo, hi);
    uint64_t base = lo >> k;
    if (tn > 0) {
        leaf_reframe(T, s + k, base, at, mv);
    } else {
        T->shift = (uint8_t)(s + k);
        T->base = base;
    }
    unsigned ks = s + k - S->shift;
    for (int i = 0; i < mv; i++) hint_set(T, at + i, ((S->base + zbt_hint(S, from + i)) >> ks) - base);
}

static inline uint64_t entry_key(const zbtree *t, arena_ref r) { return zbt_key(zbt_score(t, r)); }

/* Give l the finest frame its first and last keys allow, re-reading every
 * key for the new hints (loads issued ahead of the reads), once its hints
 * use fewer than SHARPEN_SPAN of the HINT_MAX + 1 buckets: a finer frame
 * is then at least twice as fine (a fitted one spreads a leaf's keys over
 * half of them or more). */
#define SHARPEN_SPAN ((HINT_MAX + 1) / 2)
static void leaf_sharpen(const zbtree *t, zbt_leaf *l) {
    if (l->n < 2 || zbt_hint(l, l->n - 1) - zbt_hint(l, 0) >= SHARPEN_SPAN) return;
    uint64_t first = entry_key(t, l->ref[0]);
    unsigned s = fit_shift(first, entry_key(t, l->ref[l->n - 1]));
    if (s >= l->shift) return;
    enum { AHEAD = 8 };
    for (int i = 0; i < l->n && i < AHEAD; i++) arena_prefetch(t->a, l->ref[i]);
    uint64_t base = first >> s;
    for (int i = 0; i < l->n; i++) {
        if (i + AHEAD < l->n) arena_prefetch(t->a, l->ref[i + AHEAD]);
        hint_set(l, i, (entry_key(t, l->ref[i]) >> s) - base);
    }
    l->shift = (uint8_t)s;
    l->base = base;
}

/* key (whose hint in l is h) <=> pair i of leaf l, k within l's frame:
 * the entry is read when the hints are equal. */
static inline int slot_cmp(const zbtree *t, const zkey *k, unsigned h, const zbt_leaf *l, int i) {
    unsigned hi = zbt_hint(l, i);
    if (h != hi) return h < hi ? -1 : 1;
    if (k->ref == l->ref[i]) return 0;
    size_t len;
    const unsigned char *e = arena_get(t->a, l->ref[i], &len);
    return entry_cmp(k, e, len);
}

/* key <=> pair i of leaf l. */
static inline int leaf_cmp(const zbtree *t, const zkey *k, const zbt_leaf *l, int i) {
    unsigned h;
    int side = frame_side(l, k->u, &h);
    return side ? side : slot_cmp(t, k, h, l, i);
}

static zbt_leaf *leaf_new(zbtree *t) {
    zbt_leaf *l = xmalloc(sizeof(*l));
    l->n = 0;
    l->prev = l->next = NULL;
    t->nleaf++;
    return l;
}

static zbt_inner *inner_new(zbtree *t) {
    zbt_inner *x = xmalloc(sizeof(*x));
    x->n = 0;
    t->ninner++;
    return x;
}

static void leaf_free(zbtree *t, zbt_leaf *l) {
    free(l);
    t->nleaf--;
}

static void inner_free(zbtree *t, zbt_inner *x) {
    free(x);
    t->ninner--;
}

static inline size_t node_n(const void *node, int h) {
    return h == 0 ? ((const zbt_leaf *)node)->n : ((const zbt_inner *)node)->n;
}

static inline size_t node_cap(int h) { return h == 0 ? ZBT_LEAF_CAP : ZBT_INNER_CAP; }

/* The exact minimum key of a node (a leaf's comes from its arena entry). */
static inline void node_min(const zbtree *t, const void *node, int h, double *s, arena_ref *r) {
    if (h == 0) {
        const zbt_leaf *l = node;
        *r = l->ref[0];
        *s = zbt_score(t, l->ref[0]);
    } else {
        const zbt_inner *x = node;
        *s = x->score[0];
        *r = x->ref[0];
    }
}

static size_t node_count(const void *node, int h) {
    if (h == 0) return ((const zbt_leaf *)node)->n;
    const zbt_inner *x = node;
    size_t c = 0;
    for (int i = 0; i < x->n; i++) c += x->cnt[i];
    return c;
}

static void free_subtree(zbtree *t, void *node, int h) {
    if (h == 0) {
        leaf_free(t, node);
        return;
    }
    zbt_inner *x = node;
    for (int i = 0; i < x->n; i++) free_subtree(t, x->kid[i], h - 1);
    inner_free(t, x);
}

/* Child of x whose subtree holds (or would hold) key k. */
static inline int inner_child(const zbtree *t, const zbt_inner *x, const zkey *k) {
    int lo = 1, hi = x->n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (key_cmp(t, k, x->score[mid], x->ref[mid]) >= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

/* First position in l whose key is >= k. */
static inline int leaf_lower(const zbtree *t, const zbt_leaf *l, const zkey *k) {
    unsigned h;
    int side = frame_side(l, k->u, &h);
    if (side) return side < 0 ? 0 : l->n;
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (slot_cmp(t, k, h, l, mid) > 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Move the first mv entries of child i to the end of child i-1. */
static void shift_left(const zbtree *t, zbt_inner *x, int i, int h, size_t mv) {
    if (h == 0) {
        zbt_leaf *L = x->kid[i - 1], *K = x->kid[i];
        L->n = (uint16_t)(L->n + mv);
        leaf_take(L, L->n - (int)mv, K, 0, (int)mv);
        hints_move(K, 0, K, (int)mv, K->n - (int)mv);
        memmove(K->ref, K->ref + mv, (K->n - mv) * sizeof(arena_ref));
        K->n = (uint16_t)(K->n - mv);
        leaf_sharpen(t, K);
        x->cnt[i - 1] += (uint32_t)mv;
        x->cnt[i] -= (uint32_t)mv;
    } else {
        zbt_inner *L = x->kid[i - 1], *K = x->kid[i];
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
    node_min(t, x->kid[i - 1], h, &x->score[i - 1], &x->ref[i - 1]);
    if (node_n(x->kid[i], h)) node_min(t, x->kid[i], h, &x->score[i], &x->ref[i]);
}

/* Move the last mv entries of child i to the front of child i+1. */
static void shift_right(const zbtree *t, zbt_inner *x, int i, int h, size_t mv) {
    if (h == 0) {
        zbt_leaf *K = x->kid[i], *R = x->kid[i + 1];
        hints_move(R, (int)mv, R, 0, R->n);
        memmove(R->ref + mv, R->ref, R->n * sizeof(arena_ref));
        R->n = (uint16_t)(R->n + mv);
        leaf_take(R, 0, K, K->n - (int)mv, (int)mv);
        K->n = (uint16_t)(K->n - mv);
        leaf_sharpen(t, K);
        x->cnt[i] -= (uint32_t)mv;
        x->cnt[i + 1] += (uint32_t)mv;
    } else {
        zbt_inner *K = x->kid[i], *R = x->kid[i + 1];
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
    node_min(t, x->kid[i + 1], h, &x->score[i + 1], &x->ref[i + 1]);
    if (node_n(x->kid[i], h)) node_min(t, x->kid[i], h, &x->score[i], &x->ref[i]);
}

/* Open a slot at position at of x for a new child. */
static void inner_open(zbt_inner *x, int at) {
    size_t rest = x->n - (size_t)at;
    memmove(x->cnt + at + 1, x->cnt + at, rest * sizeof(uint32_t));
    memmove(x->ref + at + 1, x->ref + at, rest * sizeof(arena_ref));
    memmove(x->score + at + 1, x->score + at, rest * sizeof(double));
    memmove(x->kid + at + 1, x->kid + at, rest * sizeof(void *));
    x->n++;
}

static void inner_close(zbt_inner *x, int at) {
    size_t rest = x->n - (size_t)at - 1;
    memmove(x->cnt + at, x->cnt + at + 1, rest * sizeof(uint32_t));
    memmove(x->ref + at, x->ref + at + 1, rest * sizeof(arena_ref));
    memmove(x->score + at, x->score + at + 1, rest * sizeof(double));
    memmove(x->kid + at, x->kid + at + 1, rest * sizeof(void *));
    x->n--;
}

/* Split child i of x (which has room): child i keeps `keep` entries. */
static void split_child(zbtree *t, zbt_inner *x, int i, int h, size_t keep) {
    inner_open(x, i + 1);
    if (h == 0) {
        zbt_leaf *K = x->kid[i], *S = leaf_new(t);
        size_t mv = K->n - keep;
        hints_move(S, 0, K, (int)keep, (int)mv);
        memcpy(S->ref, K->ref + keep, mv * sizeof(arena_ref));
        S->shift = K->shift;
        S->base = K->base;
        S->n = (uint16_t)mv;
        K->n = (uint16_t)keep;
        leaf_sharpen(t, K);
        leaf_sharpen(t, S);
        S->prev = K;
        S->next = K->next;
        if (K->next) K->next->prev = S;
        else t->tail = S;
        K->next = S;
        x->kid[i + 1] = S;
        x->cnt[i + 1] = (uint32_t)mv;
        x->cnt[i] -= (uint32_t)mv;
    } else {
        zbt_inner *K = x->kid[i], *S = inner_new(t);
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
    node_min(t, x->kid[i + 1], h, &x->score[i + 1], &x->ref[i + 1]);
}

/* Child i of x is full: shift to a sibling with room for two more (so that
 * neither ends up full), else split it; either way both halves have room.
 * app / pre: the key being inserted goes after the maximum / before the
 * minimum of the whole tree. */
static void make_room(zbtree *t, zbt_inner *x, int i, int h, int app, int pre) {
    size_t cap = node_cap(h), n = node_n(x->kid[i], h);
    if (!pre && i > 0) {
        size_t ln = node_n(x->kid[i - 1], h);
        if (ln + 1 < cap) {
            shift_left(t, x, i, h, (n - ln + 1) / 2);
            return;
        }
    }
    if (!app && i + 1 < x->n) {
        size_t rn = node_n(x->kid[i + 1], h);
        if (rn + 1 < cap) {
            shift_right(t, x, i, h, (n - rn + 1) / 2);
            return;
        }
    }
    size_t keep = app ? cap - 1 : pre ? 1 : cap / 2;
    split_child(t, x, i, h, keep);
}

static void insert_key(zbtree *t, const zkey *k) {
    if (!t->root) {
        zbt_leaf *l = leaf_new(t);
        leaf_admit(l, k->u);
        hint_set(l, 0, 0);
        l->ref[0] = k->ref;
        l->n = 1;
        t->root = l;
        t->height = 0;
        t->head = t->tail = l;
        return;
    }
    int app = leaf_cmp(t, k, t->tail, t->tail->n - 1) > 0;
    int pre = !app && leaf_cmp(t, k, t->head, 0) < 0;
    if (node_n(t->root, t->height) == node_cap(t->height)) {
        zbt_inner *r = inner_new(t);
        r->n = 1;
        r->kid[0] = t->root;
        r->cnt[0] = (uint32_t)node_count(t->root, t->height);
        node_min(t, t->root, t->height, &r->score[0], &r->ref[0]);
        t->root = r;
        t->height++;
    }
    void *node = t->root;
    for (int h = t->height; h > 0; h--) {
        zbt_inner *x = node;
        int i = inner_child(t, x, k);
        if (node_n(x->kid[i], h - 1) == node_cap(h - 1)) {
            make_room(t, x, i, h - 1, app, pre);
            i = inner_child(t, x, k);
        }
        if (i == 0 && key_cmp(t, k, x->score[0], x->ref[0]) < 0) {
            x->score[0] = k->score;
            x->ref[0] = k->ref;
        }
        x->cnt[i]++;
        node = x->kid[i];
    }
    zbt_leaf *l = node;
    int pos = leaf_lower(t, l, k);
    assert(l->n < ZBT_LEAF_CAP);
    leaf_admit(l, k->u);
    hints_open(l, pos, l->n);
    memmove(l->ref + pos + 1, l->ref + pos, (size_t)(l->n - pos) * sizeof(arena_ref));
    hint_set(l, pos, (k->u >> l->shift) - l->base);
    l->ref[pos] = k->ref;
    l->n++;
}

/* Loads the lines of n bytes at p. */
static inline void prefetch_bytes(const void *p, size_t n) {
    for (size_t o = 0; o < n; o += 64) __builtin_prefetch((const char *)p + o);
}

void zbt_prefetch(const zbtree *t, double score, int stage) {
    const void *node = t->root;
    if (!node || t->height == 0) return;
    for (int h = t->height; h > 0; h--) {
        const zbt_inner *x = node;
        if (h == 1 && stage == 0) {
            prefetch_bytes(x->score, sizeof(x->score));
            prefetch_bytes(x->kid, sizeof(x->kid));
            return;
        }
        int lo = 1, hi = x->n;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (score >= x->score[mid]) lo = mid + 1;
            else hi = mid;
        }
        node = x->kid[lo - 1];
    }
    prefetch_bytes(node, sizeof(zbt_leaf));
}

typedef struct zpath {
    zbt_inner *node[MAX_HEIGHT];
    int idx[MAX_HEIGHT];
    int depth;
} zpath;

/* Rank of key k (or of where it would go); leaf and position optional. */
static size_t find_key(const zbtree *t, const zkey *k, zpath *path, zbt_leaf **leafp, int *posp) {
    size_t r = 0;
    void *node = t->root;
    int d = 0;
    for (int h = t->height; h > 0; h--) {
        zbt_inner *x = node;
        int i = inner_child(t, x, k);
        for (int j = 0; j < i; j++) r += x->cnt[j];
        if (path) {
            path->node[d] = x;
            path->idx[d] = i;
        }
        d++;
        node = x->kid[i];
    }
    if (path) path->depth = d;
    zbt_leaf *l = node;
    int pos = leaf_lower(t, l, k);
    if (leafp) *leafp = l;
    if (posp) *posp = pos;
    return r + (size_t)pos;
}

zbt_leaf *zbt_locate(const zbtree *t, size_t r, int *pos) {
    void *node = t->root;
    for (int h = t->height; h > 0; h--) {
        zbt_inner *x = node;
        int i = 0;
        while (i + 1 < x->n && r >= x->cnt[i]) r -= x->cnt[i++];
        node = x->kid[i];
    }
    *pos = (int)r;
    return node;
}

/* The score a key stands for; a key beyond the infinities' clamps to them. */
static double key_score(uint64_t u) {
    if (u >= zbt_key(INFINITY)) return INFINITY;
    if (u <= zbt_key(-INFINITY)) return -INFINITY;
    uint64_t b = (u >> 63) ? u & ~(UINT64_C(1) << 63) : ~u;
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* The scores a pair with hint h in leaf l may have: [*lo, *hi]. */
static void hint_span(const zbt_leaf *l, unsigned h, double *lo, double *hi) {
    uint64_t a = (l->base + h) << l->shift;
    *lo = key_score(a);
    *hi = key_score(a | ((UINT64_C(1) << l->shift) - 1));
}

/* First of the n keys of an inner node for which pred holds (n when none). */
static int lower_in(const zbtree *t, zbt_pred_fn *pred, const void *arg, const double *sc, const arena_ref *ref,
                    int n) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (pred(t, arg, sc[mid], sc[mid], ref[mid])) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* The same over the pairs of a leaf, each known by its hint's span. */
static int lower_in_leaf(const zbtree *t, zbt_pred_fn *pred, const void *arg, const zbt_leaf *l) {
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        double a, b;
        hint_span(l, zbt_hint(l, mid), &a, &b);
        if (pred(t, arg, a, b, l->ref[mid])) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* Rank of the first pair for which pred holds (count when none). */
size_t zbt_lower_pred(const zbtree *t, zbt_pred_fn *pred, const void *arg) {
    if (!t->root) return 0;
    size_t r = 0;
    void *node = t->root;
    for (int h = t->height; h > 0; h--) {
        zbt_inner *x = node;
        int lo = lower_in(t, pred, arg, x->score, x->ref, x->n);
        int i = lo > 0 ? lo - 1 : 0;
        for (int j = 0; j < i; j++) r += x->cnt[j];
        node = x->kid[i];
    }
    zbt_leaf *l = node;
    return r + (size_t)lower_in_leaf(t, pred, arg, l);
}

/* Merge or even out child i of x with a neighbour (x has >= 2 children). */
static void rebalance(zbtree *t, zbt_inner *x, int i, int h) {
    int li = i > 0 ? i - 1 : i;
    size_t ln = node_n(x->kid[li], h), rn = node_n(x->kid[li + 1], h);
    if (ln + rn <= node_cap(h)) {
        if (h == 0) {
            zbt_leaf *L = x->kid[li], *R = x->kid[li + 1];
            L->n = (uint16_t)(L->n + R->n);
            leaf_take(L, L->n - R->n, R, 0, R->n);
            leaf_sharpen(t, L);
            L->next = R->next;
            if (R->next) R->next->prev = L;
            else t->tail = L;
            leaf_free(t, R);
        } else {
            zbt_inner *L = x->kid[li], *R = x->kid[li + 1];
            memcpy(L->cnt + L->n, R->cnt, R->n * sizeof(uint32_t));
            memcpy(L->ref + L->n, R->ref, R->n * sizeof(arena_ref));
            memcpy(L->score + L->n, R->score, R->n * sizeof(double));
            memcpy(L->kid + L->n, R->kid, R->n * sizeof(void *));
            L->n = (uint16_t)(L->n + R->n);
            inner_free(t, R);
        }
        x->cnt[li] += x->cnt[li + 1];
        inner_close(x, li + 1);
        if (node_n(x->kid[li], h)) node_min(t, x->kid[li], h, &x->score[li], &x->ref[li]);
        return;
    }
    if (ln < rn) shift_left(t, x, li + 1, h, (rn - ln) / 2);
    else shift_right(t, x, li, h, (ln - rn) / 2);
}

static void del_rank_rec(zbtree *t, void *node, int h, size_t r, arena_ref *ref) {
    if (h == 0) {
        zbt_leaf *l = node;
        size_t pos = r;
        assert(pos < l->n);
        *ref = l->ref[pos];
        hints_close(l, (int)pos, l->n);
        memmove(l->ref + pos, l->ref + pos + 1, (l->n - pos - 1) * sizeof(arena_ref));
        l->n--;
        return;
    }
    zbt_inner *x = node;
    int i = 0;
    while (r >= x->cnt[i]) r -= x->cnt[i++];
    del_rank_rec(t, x->kid[i], h - 1, r, ref);
    x->cnt[i]--;
    size_t kn = node_n(x->kid[i], h - 1);
    /* The child's minimum changed only if it was the pair removed. */
    if (kn && x->ref[i] == *ref) node_min(t, x->kid[i], h - 1, &x->score[i], &x->ref[i]);
    if (kn < (h - 1 == 0 ? LEAF_MIN : INNER_MIN) && x->n > 1) rebalance(t, x, i, h - 1);
}

/* Remove the pair at rank r; its reference comes back. */
static void delete_rank(zbtree *t, size_t r, arena_ref *ref) {
    del_rank_rec(t, t->root, t->height, r, ref);
    /* Drop roots left with one child; an emptied leaf root goes too. */
    while (t->height > 0 && ((zbt_inner *)t->root)->n == 1) {
        zbt_inner *x = t->root;
        t->root = x->kid[0];
        t->height--;
        inner_free(t, x);
    }
    if (t->height == 0) {
        zbt_leaf *l = t->root;
        if (l->n == 0) {
            leaf_free(t, l);
            t->root = NULL;
            t->head = t->tail = NULL;
        }
    }
}

/* Build the tree from pairs sorted by key, nodes evenly filled. */
void zbt_build(zbtree *t, const double *sc, const arena_ref *rf, size_t n) {
    assert(!t->root);
    if (n == 0) return;
    size_t nl = (n + ZBT_LEAF_CAP - 1) / ZBT_LEAF_CAP;
    void **level = xmalloc(nl * sizeof(void *));
    uint32_t *cnt = xmalloc(nl * sizeof(uint32_t));
    size_t at = 0;
    zbt_leaf *prev = NULL;
    for (size_t i = 0; i < nl; i++) {
        size_t take = n / nl + (i < n % nl);
        zbt_leaf *l = leaf_new(t);
        uint64_t first = zbt_key(sc[at]);
        unsigned sh = fit_shift(first, zbt_key(sc[at + take - 1]));
        l->shift = (uint8_t)sh;
        l->base = first >> sh;
        for (size_t j = 0; j < take; j++) hint_set(l, (int)j, (zbt_key(sc[at + j]) >> sh) - l->base);
        memcpy(l->ref, rf + at, take * sizeof(arena_ref));
        l->n = (uint16_t)take;
        l->prev = prev;
        if (prev) prev->next = l;
        else t->head = l;
        prev = l;
        at += take;
        level[i] = l;
        cnt[i] = (uint32_t)take;
    }
    t->tail = prev;
    size_t cur = nl;
    int h = 0;
    while (cur > 1) {
        size_t np = (cur + ZBT_INNER_CAP - 1) / ZBT_INNER_CAP;
        size_t k = 0;
        for (size_t i = 0; i < np; i++) {
            size_t take = cur / np + (i < cur % np);
            zbt_inner *x = inner_new(t);
            uint32_t total = 0;
            for (size_t j = 0; j < take; j++, k++) {
                x->kid[j] = level[k];
                x->cnt[j] = cnt[k];
                node_min(t, level[k], h, &x->score[j], &x->ref[j]);
                total += cnt[k];
            }
            x->n = (uint16_t)take;
            level[i] = x;
            cnt[i] = total;
        }
        cur = np;
        h++;
    }
    t->root = level[0];
    t->height = h;
    free(level);
    free(cnt);
}

/* Compaction moved an entry: re-point the pair (and the inner minimum that
 * names it, which lies on the descent path of its key). */
static void replace_ref(zbtree *t, const zkey *k, arena_ref to) {
    void *node = t->root;
    for (int h = t->height; h > 0; h--) {
        zbt_inner *x = node;
        int i = inner_child(t, x, k);
        if (x->ref[i] == k->ref) x->ref[i] = to;
        node = x->kid[i];
    }
    zbt_leaf *l = node;
    int pos = leaf_lower(t, l, k);
    assert(pos < l->n && l->ref[pos] == k->ref);
    l->ref[pos] = to;
}

/* Change the score of the element at ref (member m/n, score old). */
void zbt_rescore(zbtree *t, arena_ref ref, const unsigned char *m, size_t n, double old, double score) {
    zkey ko = zkey_of(old, m, n, ref);
    zpath path;
    zbt_leaf *l;
    int pos;
    size_t r = find_key(t, &ko, &path, &l, &pos);
    assert(pos < l->n && l->ref[pos] == ref);
    zkey kn = zkey_of(score, m, n, ref);
    int ok = 1;
    if (pos > 0) ok = leaf_cmp(t, &kn, l, pos - 1) > 0;
    else if (l->prev) ok = leaf_cmp(t, &kn, l->prev, l->prev->n - 1) > 0;
    if (ok) {
        if (pos + 1 < l->n) ok = leaf_cmp(t, &kn, l, pos + 1) < 0;
        else if (l->next) ok = leaf_cmp(t, &kn, l->next, 0) < 0;
    }
    unsigned char *e = arena_get(t->a, ref, NULL);
    memcpy(e, &score, 8);
    if (ok) {
        leaf_admit(l, kn.u);
        hint_set(l, pos, (kn.u >> l->shift) - l->base);
        if (pos == 0) {
            for (int d = path.depth - 1; d >= 0; d--) {
                path.node[d]->score[path.idx[d]] = score;
                if (path.idx[d] != 0) break;
            }
        }
        return;
    }
    arena_ref rr;
    delete_rank(t, r, &rr);
    assert(rr == ref);
    (void)rr;
    kn.m = e + 8;
    insert_key(t, &kn);
}

/* ------------------------------------------------------------------ */
/* checks                                                              */

typedef struct check_ctx {
    const zbtree *t;
    double last_s;
    arena_ref last_r;
    int have_last;
    zbt_leaf *expect_leaf; /* next leaf in chain order */
    int leaf_depth;
    size_t nleaf, ninner;
} check_ctx;

/* Returns the subtree count, or (size_t)-1 on an inconsistency. */
static size_t check_node(check_ctx *c, void *node, int h, int depth, int is_root) {
    const zbtree *t = c->t;
    if (h == 0) {
        zbt_leaf *l = node;
        c->nleaf++;
        if (l->n == 0 || l->n > ZBT_LEAF_CAP) return (size_t)-1;
        if (c->leaf_depth < 0) c->leaf_depth = depth;
        if (depth != c->leaf_depth) return (size_t)-1;
        if (l != c->expect_leaf) return (size_t)-1;
        c->expect_leaf = l->next;
        if (l->next && l->next->prev != l) return (size_t)-1;
        for (int i = 0; i < l->n; i++) {
            double s = zbt_score(t, l->ref[i]);
            if (isnan(s)) return (size_t)-1;
            uint64_t u = zbt_key(s);
            uint64_t q = u >> l->shift;
            if (l->shift > 64 - HINT_BITS || q < l->base || q - l->base != zbt_hint(l, i)) return (size_t)-1;
            if (c->have_last && zbt_cmp(t, c->last_s, c->last_r, s, l->ref[i]) >= 0) return (size_t)-1;
            c->last_s = s;
            c->last_r = l->ref[i];
            c->have_last = 1;
        }
        return l->n;
    }
    zbt_inner *x = node;
    c->ninner++;
    if (x->n == 0 || x->n > ZBT_INNER_CAP || (is_root && x->n < 2)) return (size_t)-1;
    size_t total = 0;
    for (int i = 0; i < x->n; i++) {
        double s;
        arena_ref r;
        node_min(t, x->kid[i], h - 1, &s, &r);
        if (s != x->score[i] || r != x->ref[i]) return (size_t)-1;
        size_t k = check_node(c, x->kid[i], h - 1, depth + 1, 0);
        if (k == (size_t)-1 || k != x->cnt[i]) return (size_t)-1;
        total += k;
    }
    return total;
}


/* ------------------------------------------------------------------ */
/* public                                                              */

void zbt_init(zbtree *t, const arena *a) {
    memset(t, 0, sizeof(*t));
    t->a = a;
}

void zbt_clear(zbtree *t) {
    if (t->root) free_subtree(t, t->root, t->height);
    zbt_init(t, t->a);
}

size_t zbt_mem_bytes(const zbtree *t) { return t->nleaf * sizeof(zbt_leaf) + t->ninner * sizeof(zbt_inner); }

void zbt_insert(zbtree *t, double score, const unsigned char *m, size_t n, arena_ref ref) {
    zkey k = zkey_of(score, m, n, ref);
    insert_key(t, &k);
}

size_t zbt_rank(const zbtree *t, double score, const unsigned char *m, size_t n, arena_ref ref) {
    zkey k = zkey_of(score, m, n, ref);
    return find_key(t, &k, NULL, NULL, NULL);
}

arena_ref zbt_delete_rank(zbtree *t, size_t r) {
    arena_ref ref;
    delete_rank(t, r, &ref);
    return ref;
}

void zbt_replace_ref(zbtree *t, double score, const unsigned char *m, size_t n, arena_ref from, arena_ref to) {
    zkey k = zkey_of(score, m, n, from);
    replace_ref(t, &k, to);
}

int zbt_check(const zbtree *t, size_t n) {
    if (!t->root) {
        if (n || t->head || t->tail || t->nleaf || t->ninner) return -__LINE__;
        return 0;
    }
    check_ctx c = {t, 0, 0, 0, t->head, -1, 0, 0};
    size_t cnt = check_node(&c, t->root, t->height, 0, 1);
    if (cnt == (size_t)-1 || cnt != n) return -__LINE__;
    if (c.expect_leaf != NULL || t->head->prev != NULL) return -__LINE__;
    if (c.nleaf != t->nleaf || c.ninner != t->ninner) return -__LINE__;
    if (t->tail->next != NULL) return -__LINE__;
    return 0;
}

int zbt_holds(const zbtree *t, arena_ref r) {
    if (!t->root) return 0;
    size_t n;
    const unsigned char *m = zbt_member(t, r, &n);
    zkey k = zkey_of(zbt_score(t, r), m, n, ARENA_REF_NONE);
    zbt_leaf *l;
    int pos;
    find_key(t, &k, NULL, &l, &pos);
    return pos < l->n && l->ref[pos] == r;
}
