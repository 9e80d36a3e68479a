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
 *   - the large form (ds/lform.c): the arena and a swiss table of
 *     references hashed by member bytes (key_skip 8): member -> entry in
 *     O(1) (ZSCORE, ZADD's existence check);
 *   - a counted B+tree of the references in (score, member) order
 *     (ds/zbtree.c): rank <-> position in O(log n) both ways (ZRANK, ZRANGE
 *     at an offset), descents for a score or lex bound, leaves chained for
 *     range walks.
 *
 * Invariants (zset_check verifies them all):
 *   - the large form's and the tree's own (lf_check, zbt_check);
 *   - swiss size == tree count == arena entries == n, and each swiss slot's
 *     reference is in the tree at the rank of its key;
 *   - packed: entries sorted, count == n, no stored -0.
 *
 * Compaction. Deletes leave dead arena bytes; after a delete the writer
 * calls lf_maintain with a budget of about twice the bytes it freed. The
 * large form re-points the index slot of every entry a step moves, and
 * zb_moved() re-points the tree pair (zbt_replace_ref).
 *
 * Accumulator. ZUNIONSTORE and friends build a big zset without its tree
 * (arena + index only), then sort the references once and build the tree
 * bottom-up with evenly filled nodes (or pack the result when it fits). */
#include "util/varint.h"
#include "ds/zset.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ds/lform.h"
#include "ds/zbtree.h"
#include "util/hashfn.h"

_Static_assert(ZSET_ENOMEM == LF_ENOMEM && ZSET_EFULL == LF_EFULL, "zset error codes are lform's");

typedef struct zbig {
    lform lf;                  /* the entries and the member index */
    zbtree t;                  /* the same entries in (score, member) order */
    int acc;                   /* accumulating: no tree yet */
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
        if (s > score || (s == score && zbt_lex_cmp(em, el, m, n) > 0)) break;
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
/* big encoding                                                        */

static void zb_moved(lform *l, arena_ref from, arena_ref to, const void *data, size_t len);

/* Index key: the member, after the 8-byte score. */
static const lf_type zb_lf_type = LF_TYPE(8, 0, zb_moved);

static inline zbig *zb_of(lform *l) { return (zbig *)(void *)((char *)l - offsetof(zbig, lf)); }

/* Compaction moved an element and re-pointed its index slot: the tree pair
 * follows (no tree while accumulating). */
static void zb_moved(lform *l, arena_ref from, arena_ref to, const void *data, size_t len) {
    zbig *b = zb_of(l);
    if (b->acc) return;
    const unsigned char *d = data;
    double sc;
    memcpy(&sc, d, 8);
    zbt_replace_ref(&b->t, sc, d + 8, len - 8, from, to);
}

static zbig *zb_new(void) {
    zbig *b = xmalloc(sizeof(*b));
    lf_init(&b->lf, &zb_lf_type);
    zbt_init(&b->t, &b->lf.a);
    b->acc = 0;
    return b;
}

/* The reference of member m, or ARENA_REF_NONE (h = hash_bytes(m, n)). */
static inline arena_ref zb_find(zbig *b, uint64_t h, const void *m, size_t n) {
    void *slot = lf_find(&b->lf, m, n, h);
    return slot ? arena_ref_load(slot) : ARENA_REF_NONE;
}

/* A new entry for an element absent from the index, indexed (not in the
 * tree); *ref names it, *e (if not NULL) receives its bytes. */
static int zb_add_entry(zbig *b, uint64_t h, double score, const void *m, size_t n, arena_ref *ref,
                        const unsigned char **e) {
    void *p;
    int rc = arena_alloc(&b->lf.a, 8 + n, ref, &p);
    if (rc != ARENA_OK) return lf_arena_err(rc);
    memcpy(p, &score, 8);
    if (n) memcpy((unsigned char *)p + 8, m, n);
    if (e) *e = p;
    return lf_index(&b->lf, *ref, h);
}

/* A new element (absent from the index). */
static int zb_insert(zbig *b, uint64_t h, double score, const void *m, size_t n) {
    arena_ref ref;
    const unsigned char *e = NULL;
    int rc = zb_add_entry(b, h, score, m, n, &ref, &e);
    if (rc != LF_OK) return rc;
    if (!b->acc) zbt_insert(&b->t, score, e + 8, n, ref);
    return ZSET_OK;
}

/* Remove the element of rank r; returns the arena bytes freed. */
static size_t zb_delete_rank(zbig *b, size_t r) { return lf_remove_ref(&b->lf, zbt_delete_rank(&b->t, r)); }

static void zb_free(zbig *b) {
    zbt_clear(&b->t);
    lf_destroy(&b->lf);
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
        rc = zb_add_entry(b, hash_bytes(m, n), s, m, n, &ref, NULL);
        if (rc != ZSET_OK) break;
        v.sc[v.n] = s;
        v.rf[v.n] = ref;
        v.n++;
        off += sz;
    }
    if (rc == ZSET_OK) zbt_build(&b->t, v.sc, v.rf, v.n);
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
    for (zbt_leaf *l = b->t.head; l; l = l->next)
        for (int i = 0; i < l->n; i++) {
            size_t len;
            arena_get(&b->lf.a, l->ref[i], &len);
            bytes += pk_entry_size(len - 8);
        }
    unsigned char *pk = xmalloc(bytes ? bytes : 1);
    size_t off = 0;
    for (zbt_leaf *l = b->t.head; l; l = l->next)
        for (int i = 0; i < l->n; i++) {
            size_t len;
            const unsigned char *e = arena_get(&b->lf.a, l->ref[i], &len);
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
    if (z && z->big) (void)swiss_reserve(&z->big->lf.idx, n);
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
    return m + sizeof(*b) + lf_mem_bytes(&b->lf) + zbt_mem_bytes(&b->t);
}

int zset_rehash_step(zset *z, size_t groups) { return z->big ? lf_rehash_step(&z->big->lf, groups) : 0; }

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
    for (zbt_leaf *l = b->t.head; l && rc == ZSET_OK; l = l->next)
        for (int i = 0; i < l->n; i++) {
            size_t len;
            const unsigned char *e = arena_get(&b->lf.a, l->ref[i], &len);
            arena_ref ref;
            rc = lf_put(&nb->lf, e, len, hash_bytes(e + 8, len - 8), &ref);
            if (rc != LF_OK) break;
            memcpy(&v.sc[v.n], e, 8);
            v.rf[v.n] = ref;
            v.n++;
        }
    if (rc == ZSET_OK) zbt_build(&nb->t, v.sc, v.rf, v.n);
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
    arena_ref ref = zb_find(b, hash_bytes(m, n), m, n);
    if (ref == ARENA_REF_NONE) return 0;
    if (score) *score = zbt_score(&b->t, ref);
    return 1;
}

void zset_prefetch(const zset *z, const void *m, size_t n, int stage) {
    if (z->big) lf_prefetch(&z->big->lf, m, n, stage);
}

void zset_prefetch_score(const zset *z, double score, int stage) {
    if (z->big && lf_count(&z->big->lf) >= LF_PREFETCH_MIN) zbt_prefetch(&z->big->t, score, stage);
}

long zset_rank(zset *z, const void *m, size_t n, double *score) {
    if (!z->big) {
        size_t r;
        if (pk_find(z, m, n, &r, score) == SIZE_MAX) return -1;
        return (long)r;
    }
    zbig *b = z->big;
    arena_ref ref = zb_find(b, hash_bytes(m, n), m, n);
    if (ref == ARENA_REF_NONE) return -1;
    double s = zbt_score(&b->t, ref);
    if (score) *score = s;
    return (long)zbt_rank(&b->t, s, m, n, ref);
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
    arena_ref ref = zb_find(b, h, m, n);
    if (ref != ARENA_REF_NONE) {
        if (nx) {
            *out = ZADD_OUT_NOP;
            return ZSET_OK;
        }
        size_t len;
        const unsigned char *e = arena_get(&b->lf.a, ref, &len);
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
            zbt_rescore(&b->t, ref, e + 8, len - 8, cur, score);
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
    arena_ref ref = zb_find(b, hash_bytes(m, n), m, n);
    if (ref == ARENA_REF_NONE) return 0;
    size_t r = zbt_rank(&b->t, zbt_score(&b->t, ref), m, n, ref);
    size_t freed = zb_delete_rank(b, r);
    z->n--;
    lf_maintain(&b->lf, 2 * freed + 64);
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
    lf_maintain(&b->lf, 2 * freed + 64);
    return cnt;
}

/* ---- ranges ---- */

static inline int score_gte_min(const zset_range *r, double s) { return r->minex ? s > r->min : s >= r->min; }
static inline int score_lte_max(const zset_range *r, double s) { return r->maxex ? s < r->max : s <= r->max; }

/* What a leaf's hint tells of a score ([lo, hi]) decides against a bound
 * unless the bound falls inside; only then is the entry read. */
static int pred_score_gte_min(const zbtree *t, const void *arg, double lo, double hi, arena_ref r) {
    const zset_range *rg = arg;
    if (score_gte_min(rg, lo)) return 1;
    if (!score_gte_min(rg, hi)) return 0;
    return score_gte_min(rg, zbt_score(t, r));
}

static int pred_score_gt_max(const zbtree *t, const void *arg, double lo, double hi, arena_ref r) {
    const zset_range *rg = arg;
    if (!score_lte_max(rg, lo)) return 1;
    if (score_lte_max(rg, hi)) return 0;
    return !score_lte_max(rg, zbt_score(t, r));
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
        a = zbt_lower_pred(&z->big->t, pred_score_gte_min, r);
        c = zbt_lower_pred(&z->big->t, pred_score_gt_max, r);
    }
    if (c < a) c = a;
    *lo = a;
    *hi = c;
}

static inline int lex_gte_min(const zset_lexbound *b, const unsigned char *m, size_t n) {
    switch (b->kind) {
    case ZLEX_NEG_INF: return 1;
    case ZLEX_POS_INF: return 0;
    case ZLEX_INCL: return zbt_lex_cmp(m, n, (const unsigned char *)b->p, b->n) >= 0;
    default: return zbt_lex_cmp(m, n, (const unsigned char *)b->p, b->n) > 0;
    }
}

static inline int lex_lte_max(const zset_lexbound *b, const unsigned char *m, size_t n) {
    switch (b->kind) {
    case ZLEX_NEG_INF: return 0;
    case ZLEX_POS_INF: return 1;
    case ZLEX_INCL: return zbt_lex_cmp(m, n, (const unsigned char *)b->p, b->n) <= 0;
    default: return zbt_lex_cmp(m, n, (const unsigned char *)b->p, b->n) < 0;
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
    else cmp = zbt_lex_cmp((const unsigned char *)a->p, a->n, (const unsigned char *)b->p, b->n);
    int minex = a->kind != ZLEX_INCL, maxex = b->kind != ZLEX_INCL;
    return !(cmp > 0 || (cmp == 0 && (minex || maxex)));
}

static int pred_lex_gte_min(const zbtree *t, const void *arg, double lo, double hi, arena_ref r) {
    (void)lo;
    (void)hi;
    size_t n;
    const unsigned char *m = zbt_member(t, r, &n);
    return lex_gte_min(&((const zset_lexrange *)arg)->min, m, n);
}

static int pred_lex_gt_max(const zbtree *t, const void *arg, double lo, double hi, arena_ref r) {
    (void)lo;
    (void)hi;
    size_t n;
    const unsigned char *m = zbt_member(t, r, &n);
    return !lex_lte_max(&((const zset_lexrange *)arg)->max, m, n);
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
        size_t a = zbt_lower_pred(&z->big->t, pred_lex_gte_min, r);
        size_t c = zbt_lower_pred(&z->big->t, pred_lex_gt_max, r);
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
        it->leaf = zbt_locate(&z->big->t, rank, &it->pos);
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
    zbt_leaf *l = it->leaf;
    if (!l) return 0;
    size_t len;
    const unsigned char *e = arena_get(&z->big->lf.a, l->ref[it->pos], &len);
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
    const unsigned char *e = arena_get(&sc->b->lf.a, r, &len);
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
    return swiss_scan(&z->big->lf.idx, cursor, scan_cb, &sc);
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
    arena_ref ref = zb_find(b, h, m, n);
    if (ref != ARENA_REF_NONE) {
        unsigned char *e = arena_get(&b->lf.a, ref, NULL);
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
    arena_ref ref = zb_find(b, hash_bytes(m, n), m, n);
    if (ref == ARENA_REF_NONE) return 0;
    if (score) *score = zbt_score(&b->t, ref);
    return 1;
}

typedef struct sort_pair {
    double s;
    arena_ref r;
} sort_pair;

static int sort_cmp(const void *x, const void *y, void *ctx) {
    const sort_pair *a = x, *c = y;
    return zbt_cmp(ctx, a->s, a->r, c->s, c->r);
}

int zset_acc_finish(zset *z, const zset_limits *lim) {
    zbig *b = z->big;
    assert(b && b->acc);
    size_t n = z->n, maxlen = 0;
    sort_pair *v = xmalloc((n ? n : 1) * sizeof(*v));
    size_t k = 0;
    swiss_iter it;
    swiss_iter_init(&it, &b->lf.idx);
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        arena_ref r = arena_ref_load(slot);
        size_t len;
        const unsigned char *e = arena_get(&b->lf.a, r, &len);
        memcpy(&v[k].s, e, 8);
        v[k].r = r;
        if (len - 8 > maxlen) maxlen = len - 8;
        k++;
    }
    swiss_iter_done(&it);
    assert(k == n);
    qsort_r(v, n, sizeof(*v), sort_cmp, &b->t);
    double *sc = xmalloc((n ? n : 1) * sizeof(double));
    arena_ref *rf = xmalloc((n ? n : 1) * sizeof(arena_ref));
    for (size_t i = 0; i < n; i++) {
        sc[i] = v[i].s;
        rf[i] = v[i].r;
    }
    free(v);
    b->acc = 0;
    zbt_build(&b->t, sc, rf, n);
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
    return lf_compact(&z->big->lf, budget);
}

/* ------------------------------------------------------------------ */
/* checks                                                              */

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
            if (cnt && (s < ls || (s == ls && zbt_lex_cmp(lm, ln, m, n) >= 0))) return -__LINE__;
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
    int rc = lf_check(&b->lf);
    if (rc) return rc;
    if (b->lf.a.entries != z->n) return -__LINE__;
    rc = zbt_check(&b->t, z->n);
    if (rc) return rc;
    /* Every indexed entry sits in the tree at the rank of its key. */
    swiss_iter it;
    swiss_iter_init(&it, (swiss *)&b->lf.idx);
    void *slot;
    int bad = 0;
    while (!bad && (slot = swiss_iter_next(&it)))
        if (!zbt_holds(&b->t, arena_ref_load(slot))) bad = 1;
    swiss_iter_done(&it);
    if (bad) return -__LINE__;
    return 0;
}
