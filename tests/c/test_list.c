/* test_list.c -- ds/list (the deque of packed chunks) against a reference.
 *
 * The reference is a plain array of byte strings. Randomized runs (fixed
 * seeds) apply pushes and pops at both ends with counts, index reads, LSET,
 * inserts, removals by value from either end, forward and backward walks
 * from random positions, and copies, under several chunk limits (byte
 * budgets and element counts, including 1 element per chunk), checking the
 * structure's invariant (list_check) after every step on small lists and
 * periodically on large ones. Values mix short and long strings, canonical
 * integers of every width and text that only looks like an integer.
 * LIST_TEST_SEED=n runs the same workloads with other seeds. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/list.h"
#include "util/strutil.h"
#include "unit.h"

/* ---- reference ---------------------------------------------------------------- */

typedef struct rstr {
    char *p;
    size_t n;
} rstr;

typedef struct ref {
    rstr *a;
    size_t n, cap;
} ref;

static void ref_insert(ref *r, size_t i, const char *p, size_t n) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->a = realloc(r->a, r->cap * sizeof(rstr));
        CHECK(r->a);
    }
    memmove(r->a + i + 1, r->a + i, (r->n - i) * sizeof(rstr));
    r->a[i].p = malloc(n ? n : 1);
    if (n) memcpy(r->a[i].p, p, n);
    r->a[i].n = n;
    r->n++;
}

static void ref_delete(ref *r, size_t i) {
    free(r->a[i].p);
    memmove(r->a + i, r->a + i + 1, (r->n - i - 1) * sizeof(rstr));
    r->n--;
}

static void ref_free(ref *r) {
    for (size_t i = 0; i < r->n; i++) free(r->a[i].p);
    free(r->a);
    memset(r, 0, sizeof(*r));
}

/* ---- values --------------------------------------------------------------------- */

static char vbuf[70000];

/* A random value in vbuf; small pools make equal values common. */
static size_t gen_value(unit_rng *g) {
    static const char *odd[] = {"007", "-0", "+5", " 5", "5 ", "9223372036854775808", "-9223372036854775809",
                                "0x10", "1e3", "", "-", "00", "18446744073709551616", "3.0"};
    uint64_t r = unit_below(g, 100);
    if (r < 30) {   /* small pool of short strings */
        return (size_t)snprintf(vbuf, sizeof(vbuf), "v%u", (unsigned)unit_below(g, 12));
    }
    if (r < 45) {   /* integers of every width */
        static const long long edges[] = {0, 1, 31, 32, -1, 127, 128, -128, -129, 32767, 32768, -32768,
                                          8388607, 8388608, 2147483647, -2147483648LL, 4294967296LL,
                                          140737488355327LL, LLONG_MAX, LLONG_MIN};
        long long v;
        if (unit_below(g, 3) == 0) v = edges[unit_below(g, sizeof(edges) / sizeof(edges[0]))];
        else v = (long long)(unit_rand(g) >> unit_below(g, 64)) * (unit_below(g, 2) ? 1 : -1);
        return (size_t)ll_to_str(vbuf, sizeof(vbuf), v);
    }
    if (r < 50) {
        const char *s = odd[unit_below(g, sizeof(odd) / sizeof(odd[0]))];
        size_t n = strlen(s);
        memcpy(vbuf, s, n);
        return n;
    }
    size_t n;
    if (r < 85) n = unit_below(g, 24);
    else if (r < 95) n = 100 + unit_below(g, 200);
    else if (r < 99) n = 16370 + unit_below(g, 30);   /* around the 2-byte/5-byte prefix edge */
    else n = 20000 + unit_below(g, 40000);
    for (size_t i = 0; i < n; i++) vbuf[i] = (char)unit_rand(g);
    return n;
}

static int elem_is(const list_elem *e, const rstr *want) {
    char buf[STRUTIL_LLSTR];
    size_t n;
    const char *p = list_elem_text(e, buf, &n);
    return n == want->n && (n == 0 || memcmp(p, want->p, n) == 0);
}

static void check_equal(glist *l, const ref *r) {
    CHECK_EQ(list_len(l), r->n);
    list_iter it;
    list_iter_init(&it, l, 0, LIST_TAIL);
    list_elem e;
    size_t i = 0;
    while (list_iter_next(&it, &e)) {
        CHECK(i < r->n);
        CHECK_MSG(elem_is(&e, &r->a[i]), "element %zu differs", i);
        i++;
    }
    list_iter_release(&it);
    CHECK_EQ(i, r->n);
}

static void check_struct(const glist *l) {
    int rc = list_check(l);
    CHECK_MSG(rc == 0, "list_check = %d", rc);
}

/* ---- the randomized run ------------------------------------------------------------- */

/* LIST_TEST_SEED=n shifts every seed (to hunt with fresh ones). */
static uint64_t seed_offset(void) {
    const char *e = getenv("LIST_TEST_SEED");
    return e ? strtoull(e, NULL, 10) * 1000 : 0;
}

static void run_random(uint64_t seed, long long fill, uint64_t steps, size_t maxlen) {
    unit_rng g = {seed + seed_offset()};
    list_limit lim;
    list_limit_from_fill(&lim, fill);
    glist *l = list_new();
    CHECK(l);
    ref r = {0};
    for (uint64_t step = 0; step < steps; step++) {
        uint64_t op = unit_below(&g, 100);
        int where = (int)unit_below(&g, 2);
        if (r.n > maxlen && op < 40) op = 40 + unit_below(&g, 60);   /* bias towards shrinking */
        if (op < 38) {   /* push */
            size_t n = gen_value(&g);
            list_val v;
            list_val_init(&v, vbuf, n);
            CHECK_EQ(list_push(l, where, &v, &lim), LIST_OK);
            ref_insert(&r, where == LIST_HEAD ? 0 : r.n, vbuf, n);
        } else if (op < 50) {   /* peek + pop, sometimes several */
            list_elem e;
            int got = list_peek(l, where, &e);
            CHECK_EQ(got, r.n > 0);
            if (got) CHECK(elem_is(&e, &r.a[where == LIST_HEAD ? 0 : r.n - 1]));
            uint64_t n = unit_below(&g, 4) == 0 ? unit_below(&g, 300) : 1;
            list_pop(l, where, n);
            for (uint64_t k = 0; k < n && r.n; k++) ref_delete(&r, where == LIST_HEAD ? 0 : r.n - 1);
        } else if (op < 62) {   /* index */
            long long idx = (long long)unit_below(&g, r.n + 3) - (unit_below(&g, 2) ? (long long)r.n + 1 : 0);
            list_elem e;
            int got = list_index(l, idx, &e);
            long long norm = idx < 0 ? (long long)r.n + idx : idx;
            CHECK_EQ(got, norm >= 0 && norm < (long long)r.n);
            if (got) CHECK(elem_is(&e, &r.a[norm]));
        } else if (op < 70) {   /* set */
            long long idx = (long long)unit_below(&g, r.n + 2) - (unit_below(&g, 2) ? (long long)r.n + 1 : 0);
            long long norm = idx < 0 ? (long long)r.n + idx : idx;
            size_t n = gen_value(&g);
            list_val v;
            list_val_init(&v, vbuf, n);
            int rc = list_set(l, idx, &v, &lim);
            if (norm >= 0 && norm < (long long)r.n) {
                CHECK_EQ(rc, LIST_OK);
                ref_delete(&r, (size_t)norm);
                ref_insert(&r, (size_t)norm, vbuf, n);
            } else {
                CHECK_EQ(rc, LIST_ERANGE);
            }
        } else if (op < 80) {   /* insert */
            uint64_t idx = unit_below(&g, r.n + 1);
            size_t n = gen_value(&g);
            list_val v;
            list_val_init(&v, vbuf, n);
            CHECK_EQ(list_insert(l, idx, &v, &lim), LIST_OK);
            ref_insert(&r, idx, vbuf, n);
        } else if (op < 86) {   /* remove by value */
            size_t n = gen_value(&g);
            if (r.n && unit_below(&g, 2)) {   /* often a value that is there */
                const rstr *s = &r.a[unit_below(&g, r.n)];
                memcpy(vbuf, s->p, s->n);
                n = s->n;
            }
            long long count = (long long)unit_below(&g, 7) - 3;
            list_val v;
            list_val_init(&v, vbuf, n);
            uint64_t got = list_remove(l, &v, count, &lim);
            uint64_t want = count == 0 ? UINT64_MAX : (uint64_t)(count < 0 ? -count : count), removed = 0;
            if (count >= 0) {
                for (size_t i = 0; i < r.n && removed < want;) {
                    if (r.a[i].n == n && memcmp(r.a[i].p, vbuf, n) == 0) {
                        ref_delete(&r, i);
                        removed++;
                    } else {
                        i++;
                    }
                }
            } else {
                for (size_t i = r.n; i-- > 0 && removed < want;) {
                    if (r.a[i].n == n && memcmp(r.a[i].p, vbuf, n) == 0) {
                        ref_delete(&r, i);
                        removed++;
                    }
                }
            }
            CHECK_EQ(got, removed);
        } else if (op < 94) {   /* walk from a random position in either direction */
            if (r.n) {
                uint64_t start = unit_below(&g, r.n);
                list_iter it;
                int dir = unit_below(&g, 2) ? LIST_TAIL : LIST_HEAD;
                list_iter_init(&it, l, start, dir);
                list_elem e;
                uint64_t limit = unit_below(&g, 3) == 0 ? r.n : unit_below(&g, 50);
                uint64_t i = start, seen = 0;
                while (seen < limit && list_iter_next(&it, &e)) {
                    CHECK(elem_is(&e, &r.a[i]));
                    seen++;
                    if (dir == LIST_TAIL) i++;
                    else if (i-- == 0) break;
                }
                uint64_t avail = dir == LIST_TAIL ? r.n - start : start + 1;
                CHECK_EQ(seen, avail < limit ? avail : limit);
                list_iter_release(&it);
            }
        } else if (op < 96) {   /* copy, and continue with the copy */
            glist *d = list_dup(l);
            CHECK(d);
            check_struct(d);
            check_equal(d, &r);
            list_free(l);
            l = d;
        } else if (op < 97) {   /* change the limit, as CONFIG SET does */
            static const long long fills[] = {-1, -2, -3, -5, 1, 3, 16, 128};
            list_limit_from_fill(&lim, fills[unit_below(&g, 8)]);
        } else {
            size_t m = list_mem_bytes(l);
            CHECK(m >= sizeof(void *));
        }
        if (r.n < 300 || step % 97 == 0) check_struct(l);
        if (step % 211 == 0) check_equal(l, &r);
    }
    check_struct(l);
    check_equal(l, &r);
    list_free(l);
    ref_free(&r);
}

TEST(list, encoding_roundtrip) {
    static const char *vals[] = {"", "a", "0", "31", "32", "-1", "127", "128", "-128", "-129", "007", "-0", "+1",
                                 "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1.5"};
    list_limit lim;
    list_limit_from_fill(&lim, -2);
    glist *l = list_new();
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        list_val v;
        list_val_init(&v, vals[i], strlen(vals[i]));
        CHECK_EQ(list_push(l, LIST_TAIL, &v, &lim), LIST_OK);
    }
    check_struct(l);
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        list_elem e;
        CHECK(list_index(l, (long long)i, &e));
        rstr want = {(char *)vals[i], strlen(vals[i])};
        CHECK_MSG(elem_is(&e, &want), "value %s", vals[i]);
        list_val v;
        list_val_init(&v, vals[i], strlen(vals[i]));
        CHECK(list_elem_eq(&e, &v));
    }
    /* lengths around every prefix edge */
    static const size_t lens[] = {0, 127, 128, 16383, 16384, 70000};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        char *b = malloc(lens[i] + 1);
        memset(b, 'x', lens[i]);
        list_val v;
        list_val_init(&v, b, lens[i]);
        CHECK_EQ(list_push(l, LIST_HEAD, &v, &lim), LIST_OK);
        list_elem e;
        CHECK(list_peek(l, LIST_HEAD, &e));
        CHECK(!e.isint && e.n == lens[i]);
        free(b);
    }
    check_struct(l);
    list_free(l);
}

TEST(list, random_default_limit) {
    run_random(1, -2, unit_scaled(200000, 5000), 2000);
    run_random(2, -2, unit_scaled(100000, 5000), 20000);
}

TEST(list, random_small_chunks) {
    run_random(3, -1, unit_scaled(100000, 5000), 3000);
    run_random(4, 0, unit_scaled(50000, 2000), 500);   /* one element per chunk */
    run_random(5, 2, unit_scaled(50000, 2000), 500);
    run_random(6, 5, unit_scaled(50000, 2000), 800);
}

TEST(list, random_big_chunks) {
    run_random(7, -5, unit_scaled(100000, 5000), 5000);
    run_random(8, 128, unit_scaled(100000, 5000), 5000);
}

/* Queue and stack patterns at scale: O(1) ends, the offset cache. */
TEST(list, deque_patterns) {
    list_limit lim;
    list_limit_from_fill(&lim, -2);
    glist *l = list_new();
    uint64_t n = unit_scaled(300000, 10000);
    char b[32];
    for (uint64_t i = 0; i < n; i++) {
        int len = snprintf(b, sizeof(b), "e%llu", (unsigned long long)i);
        list_val v;
        list_val_init(&v, b, (size_t)len);
        CHECK_EQ(list_push(l, i % 2 ? LIST_HEAD : LIST_TAIL, &v, &lim), LIST_OK);
    }
    check_struct(l);
    /* head is e(n-1 odd) ... e1, e0, e2, ... tail */
    list_elem e;
    uint64_t k = 0;
    while (list_peek(l, LIST_TAIL, &e)) {   /* RPOP everything: evens descending, then odds */
        char t[STRUTIL_LLSTR];
        size_t tn;
        const char *p = list_elem_text(&e, t, &tn);
        uint64_t expect;
        uint64_t evens = (n + 1) / 2;
        if (k < evens) expect = 2 * (evens - 1 - k);
        else expect = 2 * (k - evens) + 1;
        int len = snprintf(b, sizeof(b), "e%llu", (unsigned long long)expect);
        CHECK_MSG(tn == (size_t)len && memcmp(p, b, tn) == 0, "rpop #%llu", (unsigned long long)k);
        list_pop(l, LIST_TAIL, 1);
        if (k % 10007 == 0) check_struct(l);
        k++;
    }
    CHECK_EQ(k, n);
    CHECK_EQ(list_len(l), 0);
    /* queue: LPUSH + RPOP on a short list keeps working and stays small */
    for (uint64_t i = 0; i < n; i++) {
        int len = snprintf(b, sizeof(b), "q%llu", (unsigned long long)i);
        list_val v;
        list_val_init(&v, b, (size_t)len);
        CHECK_EQ(list_push(l, LIST_HEAD, &v, &lim), LIST_OK);
        if (i >= 100) {
            CHECK(list_peek(l, LIST_TAIL, &e));
            len = snprintf(b, sizeof(b), "q%llu", (unsigned long long)(i - 100));
            CHECK(e.n == (size_t)len && memcmp(e.p, b, e.n) == 0);
            list_pop(l, LIST_TAIL, 1);
        }
    }
    check_struct(l);
    list_stats qs;
    list_stats_get(l, &qs);
    CHECK_MSG(list_mem_bytes(l) < 8192 + 2048, "queue of 100 holds %zu bytes (%llu chunks, %llu chunk bytes)", list_mem_bytes(l), (unsigned long long)qs.chunks, (unsigned long long)qs.chunk_bytes);
    list_free(l);
}

/* The memory target: 1M elements of 8..16 bytes, bytes per element. */
TEST(list, memory_per_element) {
    list_limit lim;
    list_limit_from_fill(&lim, -2);
    glist *l = list_new();
    unit_rng g = {42};
    uint64_t n = 1000000, payload = 0;
    char b[16];
    for (uint64_t i = 0; i < n; i++) {
        size_t len = 8 + unit_below(&g, 9);
        for (size_t j = 0; j < len; j++) b[j] = (char)('a' + unit_below(&g, 26));
        list_val v;
        list_val_init(&v, b, len);
        CHECK_EQ(list_push(l, LIST_TAIL, &v, &lim), LIST_OK);
        payload += len;
    }
    check_struct(l);
    list_stats st;
    list_stats_get(l, &st);
    double per = (double)list_mem_bytes(l) / (double)n;
    unit_log("1M x 8..16 B: %.2f B/element (payload %.2f, chunks %llu, chunk bytes %llu)", per,
             (double)payload / (double)n, (unsigned long long)st.chunks, (unsigned long long)st.chunk_bytes);
    CHECK(per < 13.5);
    list_free(l);
}

/* Splits keep chunks within the limit; sparse neighbours merge again. */
TEST(list, split_and_merge) {
    list_limit lim;
    list_limit_from_fill(&lim, -1);   /* 4 KiB */
    glist *l = list_new();
    char b[64];
    for (int i = 0; i < 2000; i++) {
        int len = snprintf(b, sizeof(b), "middle-%d", i);
        list_val v;
        list_val_init(&v, b, (size_t)len);
        CHECK_EQ(list_insert(l, list_len(l) / 2, &v, &lim), LIST_OK);
    }
    check_struct(l);
    list_stats st;
    list_stats_get(l, &st);
    CHECK(st.chunks > 2);
    CHECK(st.used_bytes / st.chunks > 4096 / 3);   /* not a trail of tiny chunks */
    list_val x;
    list_val_init(&x, "zz", 2);
    for (uint64_t i = 0; i < list_len(l); i += 2) CHECK_EQ(list_set(l, (long long)i, &x, &lim), LIST_OK);
    uint64_t before = list_len(l);
    CHECK_EQ(list_remove(l, &x, 0, &lim), before / 2);
    check_struct(l);
    list_stats st2;
    list_stats_get(l, &st2);
    CHECK(st2.chunks <= st.chunks);
    list_free(l);
}
