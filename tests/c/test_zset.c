/* test_zset.c -- the sorted set (ds/zset.c) against a sorted-array model.
 *
 * Every randomized test keeps a reference array sorted by (score, member)
 * and, after every operation, checks the touched member's rank and score
 * and a sample of other ranks both ways (rank -> element, member -> rank);
 * every few operations the whole structure is compared and zset_check()
 * verifies the B+tree, index and arena invariants. Scores come from a
 * small pool so ties (ordered by member bytes) are frequent, and include
 * -0, inf and -inf. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/zset.h"
#include "unit.h"

typedef struct ref_el {
    double s;
    size_t n;
    char m[40];
} ref_el;

typedef struct ref_zset {
    ref_el *v;
    size_t n, cap;
} ref_zset;

static int el_cmp(double s1, const char *m1, size_t n1, double s2, const char *m2, size_t n2) {
    if (s1 < s2) return -1;
    if (s1 > s2) return 1;
    size_t l = n1 < n2 ? n1 : n2;
    int c = l ? memcmp(m1, m2, l) : 0;
    if (c) return c;
    return n1 < n2 ? -1 : n1 > n2;
}

static long ref_find(const ref_zset *r, const char *m, size_t n) {
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].n == n && memcmp(r->v[i].m, m, n) == 0) return (long)i;
    return -1;
}

static void ref_remove_at(ref_zset *r, size_t i) {
    memmove(r->v + i, r->v + i + 1, (r->n - i - 1) * sizeof(ref_el));
    r->n--;
}

static void ref_insert(ref_zset *r, double s, const char *m, size_t n) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = realloc(r->v, r->cap * sizeof(ref_el));
    }
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (el_cmp(r->v[mid].s, r->v[mid].m, r->v[mid].n, s, m, n) < 0) lo = mid + 1;
        else hi = mid;
    }
    memmove(r->v + lo + 1, r->v + lo, (r->n - lo) * sizeof(ref_el));
    r->v[lo].s = s;
    r->v[lo].n = n;
    memcpy(r->v[lo].m, m, n);
    r->n++;
}

/* Ties, -0, the infinities, and distinct doubles that round to one float
 * (16777216/16777217, 1e6+0.01/1e6+0.02, 1e300/1e308 vs inf), which the
 * leaves can only order by reading the entries. */
static const double score_pool[] = {0,         -0.0,   1,           1,          2,           2.5,
                                    -3,        7,      1e10,        -1e-5,      INFINITY,    -INFINITY,
                                    42,        0.1,    16777216.0,  16777217.0, 1000000.01,  1000000.02,
                                    1e300,     1e308,  -1e300,      5e-324,     1e-40,       -1e-40};

static double rand_score(unit_rng *g) {
    if (unit_below(g, 3) == 0) return (double)(int64_t)unit_below(g, 2000) - 1000.0 + 0.5;
    return score_pool[unit_below(g, sizeof(score_pool) / sizeof(score_pool[0]))];
}

static size_t rand_member(unit_rng *g, size_t pool, char *buf) {
    uint64_t k = unit_below(g, pool);
    int form = (int)(k % 5);
    if (form == 0) return (size_t)snprintf(buf, 40, "%llu", (unsigned long long)k);
    if (form == 1) return (size_t)snprintf(buf, 40, "m:%llu", (unsigned long long)k);
    if (form == 2) {
        size_t n = (size_t)(k % 7);
        for (size_t i = 0; i < n; i++) buf[i] = (char)("\0ab\xff"[(k >> i) & 3]);
        buf[n] = (char)k; /* distinct per k */
        return n + 1;
    }
    if (form == 3) return (size_t)snprintf(buf, 40, "a-much-longer-member-name-%llu", (unsigned long long)k);
    return (size_t)snprintf(buf, 40, "%c%llu", (char)('a' + k % 26), (unsigned long long)k);
}

/* Rank and score of member, both ways, against the model. */
static void check_member(zset *z, const ref_zset *r, const char *m, size_t n) {
    long want = ref_find(r, m, n);
    double s = -123;
    long got = zset_rank(z, m, n, &s);
    CHECK_MSG(got == want, "rank %ld want %ld", got, want);
    if (want >= 0) {
        CHECK(s == r->v[want].s || (isnan(s) && isnan(r->v[want].s)));
        CHECK(zset_score(z, m, n, &s) == 1);
        CHECK(s == r->v[want].s);
    } else {
        CHECK(zset_score(z, m, n, &s) == 0);
    }
}

static void check_rank(zset *z, const ref_zset *r, size_t rank) {
    const char *m;
    size_t n;
    double s;
    zset_at(z, rank, &m, &n, &s);
    const ref_el *e = &r->v[rank];
    CHECK_MSG(n == e->n && memcmp(m, e->m, n) == 0, "member at rank %zu differs", rank);
    CHECK(s == e->s);
    CHECK_EQ(zset_rank(z, m, n, NULL), rank);
}

static void check_all(zset *z, const ref_zset *r) {
    int rc = zset_check(z);
    CHECK_MSG(rc == 0, "zset_check: %d", rc);
    CHECK_EQ(zset_card(z), r->n);
    zset_iter it;
    zset_iter_init(&it, z, 0, 0);
    const char *m;
    size_t n;
    double s;
    size_t i = 0;
    while (zset_iter_next(&it, &m, &n, &s)) {
        CHECK(i < r->n);
        CHECK(n == r->v[i].n && memcmp(m, r->v[i].m, n) == 0 && s == r->v[i].s);
        i++;
    }
    CHECK_EQ(i, r->n);
    if (r->n) {
        zset_iter_init(&it, z, r->n - 1, 1);
        i = r->n;
        while (zset_iter_next(&it, &m, &n, &s)) {
            CHECK(i > 0);
            i--;
            CHECK(n == r->v[i].n && memcmp(m, r->v[i].m, n) == 0);
        }
        CHECK_EQ(i, 0);
    }
    for (size_t k = 0; k < r->n; k++) CHECK_EQ(zset_rank(z, r->v[k].m, r->v[k].n, NULL), k);
}

static void check_spans(zset *z, const ref_zset *r, unit_rng *g) {
    zset_range rg;
    rg.min = rand_score(g);
    rg.max = rand_score(g);
    rg.minex = (int)unit_below(g, 2);
    rg.maxex = (int)unit_below(g, 2);
    size_t lo, hi;
    zset_score_span(z, &rg, &lo, &hi);
    size_t wlo = 0, whi = 0;
    int empty = rg.min > rg.max || (rg.min == rg.max && (rg.minex || rg.maxex));
    if (!empty) {
        while (wlo < r->n && !(rg.minex ? r->v[wlo].s > rg.min : r->v[wlo].s >= rg.min)) wlo++;
        whi = wlo;
        while (whi < r->n && (rg.maxex ? r->v[whi].s < rg.max : r->v[whi].s <= rg.max)) whi++;
    } else {
        wlo = whi = 0;
    }
    if (wlo == whi) CHECK(lo == hi);
    else CHECK_MSG(lo == wlo && hi == whi, "score span [%zu,%zu) want [%zu,%zu)", lo, hi, wlo, whi);
}

/* One randomized run: ops operations over a member pool with limits. */
static void run_random(uint64_t seed, size_t ops, size_t pool, zset_limits lim, int full_every) {
    unit_rng g = {seed};
    zset *z = zset_new(&lim);
    ref_zset r = {0};
    char buf[40];
    for (size_t op = 0; op < ops; op++) {
        size_t n = rand_member(&g, pool, buf);
        uint64_t what = unit_below(&g, 100);
        if (what < 50) {
            int in = 0;
            uint64_t f = unit_below(&g, 10);
            if (f == 0) in = ZADD_IN_NX;
            else if (f == 1) in = ZADD_IN_XX;
            else if (f == 2) in = ZADD_IN_GT;
            else if (f == 3) in = ZADD_IN_LT;
            else if (f == 4) in = ZADD_IN_INCR;
            double sc = rand_score(&g), ns = 0;
            int out;
            int rc = zset_add(z, sc, buf, n, in, &out, &ns, &lim);
            CHECK_EQ(rc, ZSET_OK);
            long at = ref_find(&r, buf, n);
            if (at >= 0) {
                double cur = r.v[at].s, want = sc;
                if (in & ZADD_IN_NX) {
                    CHECK(out == ZADD_OUT_NOP);
                } else {
                    if (in & ZADD_IN_INCR) want = cur + sc;
                    if (isnan(want)) {
                        CHECK(out == ZADD_OUT_NAN);
                    } else if (((in & ZADD_IN_LT) && want >= cur) || ((in & ZADD_IN_GT) && want <= cur)) {
                        CHECK(out == ZADD_OUT_NOP);
                    } else if (want != cur) {
                        CHECK(out == ZADD_OUT_UPDATED);
                        CHECK(ns == want);
                        ref_remove_at(&r, (size_t)at);
                        if (want == 0 && zset_is_packed(z)) want = 0;
                        ref_insert(&r, want, buf, n);
                    } else {
                        CHECK(out == 0);
                    }
                }
            } else if (in & ZADD_IN_XX) {
                CHECK(out == ZADD_OUT_NOP);
            } else {
                CHECK(out == ZADD_OUT_ADDED);
                double st = sc;
                if (st == 0 && zset_is_packed(z)) st = 0;
                ref_insert(&r, st, buf, n);
            }
        } else if (what < 75) {
            long at = ref_find(&r, buf, n);
            CHECK_EQ(zset_delete(z, buf, n), at >= 0);
            if (at >= 0) ref_remove_at(&r, (size_t)at);
        } else if (what < 78 && r.n) {
            size_t lo = unit_below(&g, r.n), len = unit_below(&g, 1 + (r.n - lo < 40 ? r.n - lo : 40));
            CHECK_EQ(zset_delete_range(z, lo, lo + len), len);
            for (size_t i = 0; i < len; i++) ref_remove_at(&r, lo);
        } else if (what < 80 && r.n) {
            size_t rk = unit_below(&g, r.n);
            for (int rev = 0; rev < 2; rev++) {
                zset_iter it;
                zset_iter_init(&it, z, rk, rev);
                const char *m;
                size_t mn;
                double s;
                for (size_t k = 0; k < 70; k++) {
                    int ok = zset_iter_next(&it, &m, &mn, &s);
                    size_t want = rev ? rk - k : rk + k;
                    if ((rev && k > rk) || (!rev && want >= r.n)) {
                        CHECK(!ok);
                        break;
                    }
                    CHECK(ok && mn == r.v[want].n && memcmp(m, r.v[want].m, mn) == 0);
                }
            }
        } else if (what < 85) {
            check_spans(z, &r, &g);
        } else if (what < 87) {
            zset_compact_step(z, 1 << 12);
        } else {
            /* a read-only probe of a random (maybe absent) member */
        }
        check_member(z, &r, buf, n);
        for (int k = 0; k < 4 && r.n; k++) check_rank(z, &r, unit_below(&g, r.n));
        if (r.n) {
            check_rank(z, &r, 0);
            check_rank(z, &r, r.n - 1);
        }
        if (full_every && op % (size_t)full_every == 0) check_all(z, &r);
    }
    check_all(z, &r);
    zset *d = zset_dup(z);
    CHECK(d != NULL);
    CHECK_EQ(zset_is_packed(d), zset_is_packed(z));
    check_all(d, &r);
    zset_free(d);
    zset_free(z);
    free(r.v);
}

TEST(zset, packed_random) {
    zset_limits lim = {128, 64};
    run_random(1, unit_scaled(20000, 2000), 150, lim, 16);
}

TEST(zset, conversions_random) {
    /* Tiny limits: the set crosses packed -> big often (and never back). */
    zset_limits lim = {8, 16};
    run_random(2, unit_scaled(20000, 2000), 60, lim, 8);
}

TEST(zset, big_random_small_pool) {
    zset_limits lim = {0, 0};
    run_random(3, unit_scaled(60000, 5000), 600, lim, 64);
}

TEST(zset, big_random_multilevel) {
    /* A pool large enough for a three-level tree with frequent ties. */
    zset_limits lim = {0, 0};
    run_random(4, unit_scaled(300000, 20000), 8000, lim, 4096);
}

/* Ascending and descending loads fill leaves; random loads stay dense. */
TEST(zset, fill_and_memory) {
    zset_limits lim = {0, 0};
    const size_t n = unit_scaled(200000, 20000);
    char buf[32];
    for (int mode = 0; mode < 3; mode++) {
        zset *z = zset_new(&lim);
        unit_rng g = {99};
        for (size_t i = 0; i < n; i++) {
            int len = snprintf(buf, sizeof(buf), "m:%zu", i);
            double s = mode == 0 ? (double)i : mode == 1 ? -(double)i : (double)unit_rand(&g) / 1e10;
            int out;
            CHECK_EQ(zset_add(z, s, buf, (size_t)len, 0, &out, NULL, &lim), ZSET_OK);
        }
        CHECK_EQ(zset_check(z), 0);
        double per = (double)zset_mem_bytes(z) / (double)n;
        unit_log("%s load of %zu members: %.1f bytes/member (structure)", mode == 0 ? "ascending" : mode == 1 ? "descending" : "random",
                 n, per);
        CHECK(per < 52);
        zset_free(z);
    }
}

/* Deleting most of a big zset compacts the arena and keeps ranks right. */
static int ref_el_cmp(const void *a, const void *b) {
    const ref_el *x = a, *y = b;
    return el_cmp(x->s, x->m, x->n, y->s, y->m, y->n);
}

/* The model of the members still alive, sorted. */
static void model_of(ref_zset *r, const double *sc, const char *alive, size_t n) {
    r->n = 0;
    for (size_t i = 0; i < n; i++) {
        if (!alive[i]) continue;
        if (r->n == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 64;
            r->v = realloc(r->v, r->cap * sizeof(ref_el));
        }
        ref_el *e = &r->v[r->n++];
        e->s = sc[i];
        e->n = (size_t)snprintf(e->m, sizeof(e->m), "member:%zu", i);
    }
    qsort(r->v, r->n, sizeof(ref_el), ref_el_cmp);
}

TEST(zset, delete_compaction) {
    zset_limits lim = {0, 0};
    const size_t n = unit_scaled(100000, 10000);
    zset *z = zset_new(&lim);
    ref_zset r = {0};
    char buf[40];
    unit_rng g = {7};
    double *sc = calloc(n, sizeof(double));
    char *alive = calloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof(buf), "member:%zu", i);
        sc[i] = (double)unit_below(&g, 1000);
        alive[i] = 1;
        int out;
        CHECK_EQ(zset_add(z, sc[i], buf, (size_t)len, 0, &out, NULL, &lim), ZSET_OK);
    }
    model_of(&r, sc, alive, n);
    check_all(z, &r);
    size_t before = zset_mem_bytes(z);
    for (size_t i = 0; i < n; i++) {
        if (i % 10 == 0) continue;
        int len = snprintf(buf, sizeof(buf), "member:%zu", i);
        CHECK_EQ(zset_delete(z, buf, (size_t)len), 1);
        alive[i] = 0;
        if (i % 5003 == 0) {
            model_of(&r, sc, alive, n);
            check_all(z, &r);
        }
    }
    while (zset_compact_step(z, 1 << 16)) {
    }
    model_of(&r, sc, alive, n);
    check_all(z, &r);
    size_t after = zset_mem_bytes(z);
    unit_log("%zu members: %zu bytes; after deleting 90%%: %zu bytes", n, before, after);
    /* The arena keeps its active block (up to one 2 MiB chunk) whatever
     * is deleted; the rest (index, tree, emptied blocks) shrinks. */
    CHECK(after < ((size_t)2 << 20) + before / 4);
    zset_free(z);
    free(r.v);
    free(sc);
    free(alive);
}

/* Rank seeks at any offset take O(log n) (time per op at three sizes). */
TEST(zset, rank_seek_log) {
    zset_limits lim = {0, 0};
    size_t sizes[3] = {1000, 100000, unit_scaled(1000000, 100000)};
    double per[3];
    char buf[32];
    for (int k = 0; k < 3; k++) {
        zset *z = zset_new(&lim);
        unit_rng g = {5};
        for (size_t i = 0; i < sizes[k]; i++) {
            int len = snprintf(buf, sizeof(buf), "m:%zu", i);
            int out;
            zset_add(z, (double)unit_rand(&g) / 3e9, buf, (size_t)len, 0, &out, NULL, &lim);
        }
        const size_t reps = 200000;
        double t0 = unit_now();
        size_t sum = 0;
        for (size_t i = 0; i < reps; i++) {
            const char *m;
            size_t n;
            double s;
            zset_at(z, (sizes[k] / 2 + i) % sizes[k], &m, &n, &s);
            sum += n;
            int len = snprintf(buf, sizeof(buf), "m:%zu", (i * 7919) % sizes[k]);
            sum += (size_t)zset_rank(z, buf, (size_t)len, NULL);
        }
        per[k] = (unit_now() - t0) / (double)reps * 1e9;
        unit_log("n=%zu: %.0f ns per (seek at offset + rank of member) [%zu]", sizes[k], per[k], sum % 10);
        zset_free(z);
    }
    /* Logarithmic, not linear: 1000x more members cost far less than 100x. */
    CHECK(per[2] < per[0] * 40);
}

/* Lex spans on equal scores, both directions, against the model. */
TEST(zset, lex_spans) {
    const char *words[] = {"", "a", "aa", "ab", "b", "ba", "c", "d", "zz", "\xff"};
    const size_t nw = sizeof(words) / sizeof(words[0]);
    for (int big = 0; big < 2; big++) {
        zset_limits lim = {big ? 0 : 128, 64};
        zset *z = zset_new(&lim);
        for (size_t i = 0; i < nw; i++) {
            int out;
            zset_add(z, 0, words[i], strlen(words[i]), 0, &out, NULL, &lim);
        }
        CHECK_EQ(zset_is_packed(z), !big);
        unit_rng g = {11};
        for (int t = 0; t < 2000; t++) {
            zset_lexrange lr;
            zset_lexbound *bd[2] = {&lr.min, &lr.max};
            for (int j = 0; j < 2; j++) {
                uint64_t k = unit_below(&g, 6);
                bd[j]->kind = k == 0 ? ZLEX_NEG_INF : k == 1 ? ZLEX_POS_INF : k < 4 ? ZLEX_INCL : ZLEX_EXCL;
                const char *w = words[unit_below(&g, nw)];
                bd[j]->p = w;
                bd[j]->n = strlen(w);
            }
            size_t wlo = nw, whi = nw;
            for (size_t i = 0; i < nw; i++) {
                size_t ln = strlen(words[i]);
                int ge = lr.min.kind == ZLEX_NEG_INF ? 1 : lr.min.kind == ZLEX_POS_INF ? 0
                         : el_cmp(0, words[i], ln, 0, lr.min.p, lr.min.n) >= (lr.min.kind == ZLEX_EXCL);
                int le = lr.max.kind == ZLEX_POS_INF ? 1 : lr.max.kind == ZLEX_NEG_INF ? 0
                         : el_cmp(0, words[i], ln, 0, lr.max.p, lr.max.n) <= -(lr.max.kind == ZLEX_EXCL);
                if (ge && le && wlo == nw) wlo = i;
                if (ge && le) whi = i + 1;
            }
            for (int rev = 0; rev < 2; rev++) {
                size_t lo, hi;
                zset_lex_span(z, &lr, rev, &lo, &hi);
                if (wlo == nw) CHECK(lo == hi);
                else CHECK_MSG(lo == wlo && hi == whi, "lex span [%zu,%zu) want [%zu,%zu)", lo, hi, wlo, whi);
            }
        }
        zset_free(z);
    }
}

static double merge_sum(double a, double b) { return a + b; }

/* The accumulator sorts once and packs small results. */
TEST(zset, accumulator) {
    for (int small = 0; small < 2; small++) {
        zset_limits lim = {small ? 1000 : 10, 64};
        zset *z = zset_acc_new();
        ref_zset r = {0};
        char buf[40];
        unit_rng g = {21};
        for (int i = 0; i < 3000; i++) {
            size_t n = rand_member(&g, 500, buf);
            double s = (double)unit_below(&g, 5);
            CHECK_EQ(zset_acc_add(z, buf, n, s, merge_sum), ZSET_OK);
            long at = ref_find(&r, buf, n);
            if (at >= 0) {
                s += r.v[at].s;
                ref_remove_at(&r, (size_t)at);
            }
            ref_insert(&r, s, buf, n);
        }
        CHECK_EQ(zset_acc_finish(z, &lim), ZSET_OK);
        CHECK_EQ(zset_is_packed(z), small && zset_max_member(z) <= 64);
        check_all(z, &r);
        zset_free(z);
        free(r.v);
    }
}

/* Packed storage keeps Redis's listpack view of -0. */
TEST(zset, packed_negative_zero) {
    zset_limits lim = {128, 64};
    zset *z = zset_new(&lim);
    int out;
    double ns;
    zset_add(z, -0.0, "x", 1, 0, &out, &ns, &lim);
    double s;
    CHECK(zset_score(z, "x", 1, &s));
    CHECK(s == 0 && !signbit(s));
    zset_free(z);
    zset_limits big = {0, 0};
    z = zset_new(&big);
    zset_add(z, -0.0, "x", 1, 0, &out, &ns, &big);
    CHECK(zset_score(z, "x", 1, &s));
    CHECK(s == 0 && signbit(s));
    CHECK(zset_pack_if_fits(z, &lim));
    CHECK(zset_score(z, "x", 1, &s));
    CHECK(s == 0 && !signbit(s));
    zset_free(z);
}

/* zset_new_reserve (RDB loads): big from the start past the packed limits,
 * index presized, members in descending score order as Redis writes them. */
TEST(zset, new_reserve) {
    zset_limits lim = {128, 64};
    zset *z = zset_new_reserve(100, &lim);
    CHECK(zset_is_packed(z));
    zset_free(z);
    size_t n = 5000;
    z = zset_new_reserve(n, &lim);
    CHECK(!zset_is_packed(z));
    char b[32];
    for (size_t i = n; i-- > 0;) {
        size_t bl = (size_t)snprintf(b, sizeof(b), "m:%zu", i);
        int out = 0;
        CHECK_EQ(zset_add(z, (double)i, b, bl, ZADD_IN_NX, &out, NULL, &lim), ZSET_OK);
        CHECK(out & ZADD_OUT_ADDED);
    }
    CHECK_EQ(zset_card(z), n);
    CHECK_EQ(zset_check(z), 0);
    zset_free(z);
}
