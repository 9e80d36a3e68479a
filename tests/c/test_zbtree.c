/* test_zbtree.c -- ds/zbtree, the counted B+tree of a big sorted set,
 * against a sorted array of (score, member) over entries of one arena.
 *
 * Scores come from a small set so that ties (equal scores, and distinct
 * scores that round to one float) are common. Random inserts, deletes by
 * rank and rescores are checked for rank, position and order at
 * checkpoints; moved entries (zbt_replace_ref), bulk builds and the
 * predicate search are checked on the side. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/arena.h"
#include "ds/zbtree.h"
#include "unit.h"

/* An element: score and member "m<id>" in an arena entry. */
static arena_ref put_elem(arena *a, double score, uint32_t id) {
    char m[16];
    size_t n = (size_t)snprintf(m, sizeof(m), "m%u", id);
    arena_ref r;
    void *p;
    CHECK_EQ(arena_alloc(a, 8 + n, &r, &p), ARENA_OK);
    memcpy(p, &score, 8);
    memcpy((char *)p + 8, m, n);
    return r;
}

/* The same, inserted into t. */
static arena_ref add_elem(zbtree *t, arena *a, double score, uint32_t id) {
    arena_ref ref = put_elem(a, score, id);
    size_t n;
    const unsigned char *mem = zbt_member(t, ref, &n);
    zbt_insert(t, score, mem, n, ref);
    return ref;
}

/* Scores with many ties: exact repeats, neighbours of one float, both
 * zeros, millisecond timestamps a float cannot tell apart, and values
 * spread over every magnitude (for the leaves' hint frames). */
static double pick_score(unit_rng *r) {
    double base = (double)unit_below(r, 50);
    switch (unit_below(r, 7)) {
    case 0: return base;
    case 1: return base + 1e-12 * (double)unit_below(r, 5);
    case 2: return -base * 1e6;
    case 3: return unit_below(r, 2) ? -0.0 : 0.0;
    case 4: return 1.7e12 + (double)unit_below(r, 100000);
    case 5: {
        double m = (double)unit_below(r, 1u << 30) / (double)(1u << 30);
        return ldexp(unit_below(r, 2) ? m : -m, (int)unit_below(r, 200) - 100);
    }
    default: return unit_below(r, 20) == 0 ? (unit_below(r, 2) ? INFINITY : -INFINITY) : base / 7;
    }
}

typedef struct model {
    const zbtree *t;
    arena_ref *v;
    size_t n;
} model;

static int model_cmp(const void *x, const void *y, void *ctx) {
    const zbtree *t = ctx;
    arena_ref a = *(const arena_ref *)x, b = *(const arena_ref *)y;
    return zbt_cmp(t, zbt_score(t, a), a, zbt_score(t, b), b);
}

static void model_sort(model *m) { qsort_r(m->v, m->n, sizeof(arena_ref), model_cmp, (void *)m->t); }

/* The tree holds exactly the model's refs, in its order, at its ranks. */
static void verify(const zbtree *t, model *m) {
    model_sort(m);
    CHECK_EQ(zbt_check(t, m->n), 0);
    size_t i = 0;
    for (const zbt_leaf *l = t->head; l; l = l->next)
        for (int k = 0; k < l->n; k++, i++) CHECK(i < m->n && l->ref[k] == m->v[i]);
    CHECK_EQ(i, m->n);
    for (size_t j = 0; j < m->n; j += 1 + m->n / 200) {
        arena_ref r = m->v[j];
        size_t n;
        const unsigned char *mem = zbt_member(t, r, &n);
        CHECK_EQ(zbt_rank(t, zbt_score(t, r), mem, n, r), j);
        CHECK_EQ(zbt_rank(t, zbt_score(t, r), mem, n, ARENA_REF_NONE), j);
        CHECK(zbt_holds(t, r));
        int pos;
        const zbt_leaf *l = zbt_locate(t, j, &pos);
        CHECK(l->ref[pos] == r);
    }
}

/* The span the tree gives for a pair holds its score. */
static int pred_score_ge(const zbtree *t, const void *arg, double lo, double hi, arena_ref r) {
    double bound = *(const double *)arg, s = zbt_score(t, r);
    CHECK(lo <= s && s <= hi);
    if (lo >= bound) return 1;
    if (hi < bound) return 0;
    return s >= bound;
}

TEST(zbtree, random_ops_against_a_sorted_array) {
    arena a;
    CHECK_EQ(arena_init(&a, NULL), ARENA_OK);
    zbtree t;
    zbt_init(&t, &a);
    size_t cap = (size_t)unit_scaled(20000, 2000);
    model m = {&t, malloc(cap * sizeof(arena_ref)), 0};
    unit_rng r = {7};
    uint32_t next_id = 0;
    for (size_t op = 0; op < cap * 3; op++) {
        unsigned roll = (unsigned)unit_below(&r, 100);
        if (m.n < cap && (roll < 55 || m.n == 0)) {
            m.v[m.n++] = add_elem(&t, &a, pick_score(&r), next_id++);
        } else if (roll < 85) {
            size_t k = (size_t)unit_below(&r, m.n);
            int pos;
            arena_ref want = zbt_locate(&t, k, &pos)->ref[pos];
            arena_ref got = zbt_delete_rank(&t, k);
            CHECK(got == want);
            arena_free(&a, got);
            size_t i = 0;
            while (m.v[i] != got) i++;
            m.v[i] = m.v[--m.n];
        } else {
            arena_ref ref = m.v[unit_below(&r, m.n)];
            size_t n;
            const unsigned char *mem = zbt_member(&t, ref, &n);
            double old = zbt_score(&t, ref), s = pick_score(&r);
            if (s != old) zbt_rescore(&t, ref, mem, n, old, s);
            CHECK(zbt_score(&t, ref) == s);
        }
        if (op % (cap / 2) == 0) verify(&t, &m);
    }
    verify(&t, &m);
    /* Score bounds: the rank of the first element >= bound. */
    double bounds[] = {-INFINITY, -1e6, -1e-30, -0.0, 0, 1e-30, 1.0 / 7, 3, 3 + 1e-12, 49, 1.7e12 + 50000, INFINITY};
    for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++) {
        size_t want = 0;
        while (want < m.n && zbt_score(&t, m.v[want]) < bounds[b]) want++;
        CHECK_EQ(zbt_lower_pred(&t, pred_score_ge, &bounds[b]), want);
    }
    CHECK(zbt_mem_bytes(&t) >= t.nleaf * sizeof(zbt_leaf));
    zbt_clear(&t);
    CHECK(t.root == NULL && t.nleaf == 0 && t.ninner == 0);
    CHECK_EQ(zbt_check(&t, 0), 0);
    free(m.v);
    arena_destroy(&a);
}

/* Keys appended in order (millisecond timestamps, which a float cannot
 * tell apart) get distinct hints in every leaf: no insert, and no lookup
 * but the one that finds its own key, reads an entry to order them. */
TEST(zbtree, appended_timestamps_get_distinct_hints) {
    arena a;
    CHECK_EQ(arena_init(&a, NULL), ARENA_OK);
    zbtree t;
    zbt_init(&t, &a);
    size_t n = (size_t)unit_scaled(50000, 5000);
    for (size_t i = 0; i < n; i++) add_elem(&t, &a, 1.7e12 + (double)i, (uint32_t)i);
    CHECK_EQ(zbt_check(&t, n), 0);
    size_t leaves = 0;
    for (const zbt_leaf *l = t.head; l; l = l->next, leaves++)
        for (int i = 1; i < l->n; i++) CHECK(zbt_hint(l, i - 1) < zbt_hint(l, i));
    CHECK(leaves > 10);
    zbt_clear(&t);
    arena_destroy(&a);
}

/* Entries move (as compaction moves them): re-pointed pairs, inner minima
 * included, keep the tree whole; the old copies are freed afterwards. */
TEST(zbtree, replace_ref_and_build) {
    arena a;
    CHECK_EQ(arena_init(&a, NULL), ARENA_OK);
    zbtree t;
    zbt_init(&t, &a);
    size_t n = 20000;
    model m = {&t, malloc(n * sizeof(arena_ref)), n};
    unit_rng r = {11};
    for (size_t i = 0; i < n; i++) m.v[i] = put_elem(&a, pick_score(&r), (uint32_t)i);
    model_sort(&m);
    double *sc = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) sc[i] = zbt_score(&t, m.v[i]);
    zbt_build(&t, sc, m.v, n);
    verify(&t, &m);
    /* Prefetching the path of any score, at either stage, reads only. */
    for (int i = 0; i < 200; i++) {
        zbt_prefetch(&t, pick_score(&r), i & 1);
        zbt_prefetch(&t, i % 2 ? -INFINITY : NAN, i & 1);
    }
    CHECK(t.height >= 2);
    verify(&t, &m);
    /* Evenly filled: no leaf below half full. */
    for (const zbt_leaf *l = t.head; l; l = l->next) CHECK(l->n >= ZBT_LEAF_CAP / 2);
    /* Move every third element, minima of inner nodes among them. */
    for (size_t i = 0; i < n; i += 3) {
        arena_ref from = m.v[i];
        size_t len;
        const void *data = arena_get(&a, from, &len);
        arena_ref to;
        CHECK_EQ(arena_put(&a, data, len, &to), ARENA_OK);
        size_t mn;
        const unsigned char *mem = zbt_member(&t, to, &mn);
        zbt_replace_ref(&t, zbt_score(&t, to), mem, mn, from, to);
        arena_free(&a, from);
        m.v[i] = to;
    }
    verify(&t, &m);
    /* Delete everything from the front: the tree empties cleanly. */
    model_sort(&m);
    for (size_t i = 0; i < n; i++) CHECK(zbt_delete_rank(&t, 0) == m.v[i]);
    CHECK(t.root == NULL && t.head == NULL && t.nleaf == 0 && t.ninner == 0);
    zbt_prefetch(&t, 1.0, 0); /* an empty tree: nothing to load */
    zbt_prefetch(&t, 1.0, 1);
    free(sc);
    free(m.v);
    arena_destroy(&a);
}
