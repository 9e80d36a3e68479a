/* test_set.c -- ds/set against a reference model.
 *
 * Members are derived from integer ids in [0, U): canonical integers
 * (positive, negative, int64 extremes), non-canonical numbers ("007", "+1",
 * "-0"), words "m:<id>", binary members with NUL bytes, the empty member and
 * members longer than the 64-byte small-form limit. The reference is a
 * presence array indexed by id plus a model of Redis 7.0's encoding rule
 * (intset until a non-integer arrives or an add passes the limit; never
 * back). Randomized runs mix adds, removes, lookups and pops and compare the
 * whole content (iteration, scan, random picks) at checkpoints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/arena.h"
#include "ds/set.h"
#include "util/strutil.h"
#include "unit.h"

/* Member bytes of id (buf holds at least 128 bytes); *isint tells whether
 * it is a canonical int64. The mapping is a bijection on [0, 2^20). */
static size_t member_of(uint32_t id, char *buf, int *isint) {
    *isint = 0;
    switch (id % 8) {
    case 0: /* canonical integers, both signs, small and big */
        *isint = 1;
        return (size_t)snprintf(buf, 128, "%lld", (long long)(id / 8));
    case 1:
        *isint = 1;
        return (size_t)snprintf(buf, 128, "%lld", -(long long)(id / 8 + 1) * 1000003LL);
    case 2:
        *isint = 1;
        return (size_t)snprintf(buf, 128, "%lld", (long long)(id / 8) * 1000000007LL + 1000000000000LL);
    case 3: /* int64 extremes and neighbours, then more words */
        if (id / 8 < 4) {
            static const char *ext[] = {"9223372036854775807", "-9223372036854775808", "9223372036854775806",
                                        "-9223372036854775807"};
            *isint = 1;
            return (size_t)snprintf(buf, 128, "%s", ext[id / 8]);
        }
        return (size_t)snprintf(buf, 128, "w%u", id);
    case 4: /* non-canonical numbers: stay bytes */
        return (size_t)snprintf(buf, 128, "%s%u", (id / 8) % 3 == 0 ? "0" : (id / 8) % 3 == 1 ? "+" : " ", id);
    case 5: /* binary with NUL bytes */
        buf[0] = '\0';
        memcpy(buf + 1, &id, 4);
        buf[5] = '\xff';
        return 6;
    case 6: /* long members: 60..90 bytes, around the small-form limit */
        memset(buf, 'L', 128);
        return (size_t)snprintf(buf, 128, "long:%u:", id) + 55 + id % 36 - 9;
    default:
        if (id == 7) return 0; /* the empty member */
        return (size_t)snprintf(buf, 128, "m:%u", id);
    }
}

/* The reference: presence by id, a model of Redis's encoding, and a
 * reverse index from member bytes to id (open addressing, FNV-1a). */
typedef struct model {
    uint32_t universe;
    uint8_t *present;
    size_t count;
    int intset;        /* Redis's encoding: still an intset */
    char (*bytes)[128];
    size_t *len;
    uint8_t *isint;
    uint32_t *rev;     /* reverse index slots: id + 1, 0 empty */
    size_t rmask;
} model;

static uint64_t fnv(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h;
}

static void model_init(model *m, uint32_t u) {
    m->universe = u;
    m->present = calloc(u, 1);
    m->count = 0;
    m->intset = 1;
    m->bytes = malloc((size_t)u * 128);
    m->len = malloc(u * sizeof(size_t));
    m->isint = malloc(u);
    size_t cap = 16;
    while (cap < (size_t)u * 2) cap <<= 1;
    m->rev = calloc(cap, sizeof(uint32_t));
    m->rmask = cap - 1;
    for (uint32_t i = 0; i < u; i++) {
        int isint;
        m->len[i] = member_of(i, m->bytes[i], &isint);
        m->isint[i] = (uint8_t)isint;
        size_t j = (size_t)fnv(m->bytes[i], m->len[i]) & m->rmask;
        while (m->rev[j]) {
            uint32_t o = m->rev[j] - 1;
            CHECK_MSG(m->len[o] != m->len[i] || memcmp(m->bytes[o], m->bytes[i], m->len[i]) != 0,
                      "members %u and %u are equal", o, i);
            j = (j + 1) & m->rmask;
        }
        m->rev[j] = i + 1;
    }
}

static void model_free(model *m) {
    free(m->present);
    free(m->bytes);
    free(m->len);
    free(m->isint);
    free(m->rev);
}

/* Id of member bytes, or UINT32_MAX. */
static uint32_t fast_id(const model *m, const char *p, size_t n) {
    size_t j = (size_t)fnv(p, n) & m->rmask;
    while (m->rev[j]) {
        uint32_t id = m->rev[j] - 1;
        if (m->len[id] == n && (n == 0 || memcmp(m->bytes[id], p, n) == 0)) return id;
        j = (j + 1) & m->rmask;
    }
    return UINT32_MAX;
}

static void model_add(model *m, uint32_t id, size_t max_intset) {
    if (m->present[id]) return;
    m->present[id] = 1;
    m->count++;
    if (m->intset && (!m->isint[id] || m->count > (max_intset > SET_INTSET_HARD_MAX ? SET_INTSET_HARD_MAX : max_intset)))
        m->intset = 0;
}

static void model_del(model *m, uint32_t id) {
    if (!m->present[id]) return;
    m->present[id] = 0;
    m->count--;
}

typedef struct seen_ctx {
    model *m;
    uint8_t *seen;
    size_t n;
    int allow_repeats;
    int remove;        /* popped: drop from the model */
} seen_ctx;

static void on_member(void *arg, const set_elem *e) {
    seen_ctx *sc = arg;
    uint32_t id = fast_id(sc->m, e->p, e->n);
    CHECK_MSG(id != UINT32_MAX, "unknown member of %zu bytes", e->n);
    CHECK_MSG(sc->m->present[id], "member %u reported but not present", id);
    if (!sc->allow_repeats) CHECK_MSG(!sc->seen[id], "member %u reported twice", id);
    if (e->isint) {
        long long v;
        CHECK(str_to_ll(e->p, e->n, &v) && v == e->v);
    }
    sc->seen[id] = 1;
    sc->n++;
}

static void on_pop(void *arg, const set_elem *e) {
    seen_ctx *sc = arg;
    on_member(arg, e);
    model_del(sc->m, fast_id(sc->m, e->p, e->n));
}

static void check_all(gset *s, model *m) {
    CHECK_EQ(set_check(s), 0);
    CHECK_EQ(set_card(s), m->count);
    CHECK_EQ(set_is_intset(s), m->intset);
    seen_ctx sc = {m, calloc(m->universe, 1), 0, 0, 0};
    set_iter it;
    set_elem e;
    set_iter_init(&it, s);
    long long prev = 0;
    while (set_iter_next(&it, &e)) {
        on_member(&sc, &e);
        if (set_is_intset(s)) {
            CHECK(e.isint);
            CHECK(sc.n == 1 || e.v > prev); /* ascending */
            prev = e.v;
        }
    }
    set_iter_done(&it);
    CHECK_EQ(sc.n, m->count);
    /* scan to completion: every member at least once */
    memset(sc.seen, 0, m->universe);
    sc.allow_repeats = 1;
    uint64_t cur = 0;
    int rounds = 0;
    do {
        cur = set_scan(s, cur, on_member, &sc);
        CHECK(++rounds < 10000000);
    } while (cur);
    for (uint32_t i = 0; i < m->universe; i++) CHECK_EQ(sc.seen[i], m->present[i]);
    free(sc.seen);
}

static uint64_t test_rnd_state = 99;
static uint64_t test_rnd(void) {
    unit_rng r = {test_rnd_state};
    uint64_t v = unit_rand(&r);
    test_rnd_state = r.s;
    return v;
}

static void random_ops(uint32_t universe, uint64_t ops, uint64_t seed, size_t max_intset, int faults, int ints_only) {
    unit_rng r = {seed};
    model m;
    model_init(&m, universe);
    set_limits lim = {max_intset};
    gset *s = set_new();
    CHECK(s);
    int max_form = SET_INTSET;
    uint64_t refused = 0;
    seen_ctx pc = {&m, calloc(universe, 1), 0, 0, 1};
    for (uint64_t i = 0; i < ops; i++) {
        uint32_t id = (uint32_t)unit_below(&r, universe);
        if (ints_only) id = id - id % 8 + (uint32_t)unit_below(&r, 3);
        unsigned roll = (unsigned)unit_below(&r, 1000);
        if (faults && unit_below(&r, 300) == 0) arena_set_fault(1 + (int)unit_below(&r, 2));
        if (roll < 500) {
            int rc = set_add(&s, m.bytes[id], m.len[id], &lim);
            if (rc < 0) {
                CHECK_MSG(faults && rc == SET_ENOMEM, "set_add failed: %d", rc);
                refused++;
            } else {
                CHECK_EQ(rc, !m.present[id]);
                model_add(&m, id, max_intset);
            }
        } else if (roll < 800) {
            CHECK_EQ(set_remove(&s, m.bytes[id], m.len[id]), m.present[id]);
            model_del(&m, id);
        } else if (roll < 990) {
            CHECK_EQ(set_contains(s, m.bytes[id], m.len[id]), m.present[id]);
            set_elem e;
            set_elem_bytes(&e, m.bytes[id], m.len[id]);
            CHECK_EQ(set_contains_elem(s, &e), m.present[id]);
        } else if (roll < 997) {
            size_t before = m.count;
            memset(pc.seen, 0, universe);
            pc.n = 0;
            CHECK_EQ(set_pop(&s, test_rnd, on_pop, &pc), before > 0);
            CHECK_EQ(m.count, before - (before > 0));
        } else {
            size_t before = m.count, k = (size_t)unit_below(&r, before + 3);
            memset(pc.seen, 0, universe);
            pc.n = 0;
            set_pop_many(&s, k, test_rnd, on_pop, &pc);
            CHECK_EQ(pc.n, k < before ? k : before);
            CHECK_EQ(set_card(s), m.count);
        }
        /* never back to intset; large only goes back to small when a pop
         * rebuilds it around the few members it keeps */
        CHECK(set_form(s) >= max_form);
        max_form = set_form(s) == SET_INTSET ? SET_INTSET : SET_SMALL;
        CHECK_EQ(set_is_intset(s), m.intset);
        if (i % 5000 == 4999) check_all(s, &m);
    }
    arena_set_fault(0);
    check_all(s, &m);
    for (uint32_t id = 0; id < universe; id++) CHECK_EQ(set_contains(s, m.bytes[id], m.len[id]), m.present[id]);
    if (faults) unit_log("%llu adds refused by injected faults", (unsigned long long)refused);
    free(pc.seen);
    set_free(s);
    model_free(&m);
}

TEST(set, random_small_universe) { random_ops(40, unit_scaled(200000, 20000), 11, 512, 0, 0); }
TEST(set, random_ints_only) { random_ops(4000, unit_scaled(300000, 30000), 12, 512, 0, 1); }
TEST(set, random_ints_big_limit) { random_ops(4000, unit_scaled(200000, 20000), 13, 100000, 0, 1); }
TEST(set, random_mixed_universe) { random_ops(700, unit_scaled(300000, 30000), 14, 512, 0, 0); }
TEST(set, random_large_universe) { random_ops(20000, unit_scaled(600000, 60000), 15, 512, 0, 0); }
TEST(set, random_tiny_limits) { random_ops(200, unit_scaled(200000, 20000), 16, 3, 0, 1); }
TEST(set, random_zero_limit) { random_ops(200, unit_scaled(100000, 10000), 17, 0, 0, 1); }
TEST(set, random_alloc_faults) { random_ops(5000, unit_scaled(300000, 30000), 18, 512, 1, 0); }

static gset *filled(const char *fmt, size_t n, const set_limits *lim) {
    gset *s = set_new();
    char b[64];
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(b, sizeof(b), fmt, i);
        CHECK_EQ(set_add(&s, b, (size_t)len, lim), 1);
    }
    return s;
}

static const set_limits def_lim = {512};

TEST(set, conversion_thresholds) {
    /* 512 integers: intset; the 513th converts straight to large. */
    gset *s = filled("%zu", 512, &def_lim);
    CHECK_EQ(set_form(s), SET_INTSET);
    CHECK_EQ(set_add(&s, "512", 3, &def_lim), 1);
    CHECK_EQ(set_form(s), SET_LARGE);
    CHECK_EQ(set_card(s), 513);
    CHECK_EQ(set_check(s), 0);
    /* removing back to few integers does not bring intset back */
    for (int i = 0; i < 510; i++) {
        char b[16];
        int n = snprintf(b, sizeof(b), "%d", i);
        CHECK_EQ(set_remove(&s, b, (size_t)n), 1);
    }
    CHECK_EQ(set_form(s), SET_LARGE);
    CHECK_EQ(set_card(s), 3);
    set_free(s);

    /* A word converts a small intset to the packed small form. */
    s = filled("%zu", 10, &def_lim);
    CHECK_EQ(set_add(&s, "a", 1, &def_lim), 1);
    CHECK_EQ(set_form(s), SET_SMALL);
    CHECK(!set_is_intset(s));
    CHECK_EQ(set_add(&s, "3", 1, &def_lim), 0);
    CHECK(set_contains(s, "3", 1));
    CHECK_EQ(set_remove(&s, "a", 1), 1);
    CHECK_EQ(set_form(s), SET_SMALL);
    /* ... which becomes large at the 65th member or a long one */
    for (size_t i = 10; set_card(s) < SET_SMALL_MAX_ENTRIES; i++) {
        char b[16];
        int n = snprintf(b, sizeof(b), "x%zu", i);
        CHECK_EQ(set_add(&s, b, (size_t)n, &def_lim), 1);
    }
    CHECK_EQ(set_form(s), SET_SMALL);
    CHECK_EQ(set_add(&s, "one more", 8, &def_lim), 1);
    CHECK_EQ(set_form(s), SET_LARGE);
    set_free(s);
    char longm[SET_SMALL_MAX_MEMBER + 1];
    memset(longm, 'z', sizeof(longm));
    s = set_new();
    CHECK_EQ(set_add(&s, longm, SET_SMALL_MAX_MEMBER, &def_lim), 1);
    CHECK_EQ(set_form(s), SET_SMALL);
    CHECK_EQ(set_add(&s, longm, SET_SMALL_MAX_MEMBER + 1, &def_lim), 1);
    CHECK_EQ(set_form(s), SET_LARGE);
    set_free(s);
    /* A long first member goes straight to large. */
    s = set_new();
    CHECK_EQ(set_add(&s, longm, sizeof(longm), &def_lim), 1);
    CHECK_EQ(set_form(s), SET_LARGE);
    set_free(s);

    /* Non-canonical numbers are not integers. */
    const char *nonint[] = {"007", "+1", "-0", " 1", "1 ", "9223372036854775808", "-9223372036854775809", "1.0", ""};
    for (size_t i = 0; i < sizeof(nonint) / sizeof(nonint[0]); i++) {
        s = set_new();
        CHECK_EQ(set_add(&s, nonint[i], strlen(nonint[i]), &def_lim), 1);
        CHECK_MSG(!set_is_intset(s), "\"%s\" made an intset", nonint[i]);
        set_free(s);
    }
    const char *ints[] = {"0", "-1", "9223372036854775807", "-9223372036854775808"};
    s = set_new();
    for (size_t i = 0; i < 4; i++) CHECK_EQ(set_add(&s, ints[i], strlen(ints[i]), &def_lim), 1);
    CHECK(set_is_intset(s));
    CHECK(!set_contains(s, "-0", 2));
    CHECK(!set_contains(s, "00", 2));
    CHECK(set_contains(s, "-9223372036854775808", 20));
    set_free(s);

    /* A limit of 0: the first add converts (Redis adds, then converts). */
    set_limits zero = {0};
    s = set_new();
    CHECK_EQ(set_add(&s, "1", 1, &zero), 1);
    CHECK_EQ(set_form(s), SET_SMALL);
    set_free(s);
    /* A lowered limit converts only on a successful add. */
    s = filled("%zu", 20, &def_lim);
    set_limits five = {5};
    CHECK_EQ(set_add(&s, "3", 1, &five), 0);
    CHECK(set_is_intset(s));
    CHECK_EQ(set_remove(&s, "3", 1), 1);
    CHECK(set_is_intset(s));
    CHECK_EQ(set_add(&s, "3", 1, &five), 1);
    CHECK(!set_is_intset(s));
    set_free(s);
    /* set_new_hashtable never reports intset */
    s = set_new_hashtable();
    CHECK_EQ(set_add(&s, "1", 1, &def_lim), 1);
    CHECK(!set_is_intset(s));
    set_free(s);
}

TEST(set, intset_order_and_extremes) {
    gset *s = set_new();
    const long long vals[] = {5, -3, 9223372036854775807LL, 0, -9223372036854775807LL - 1, 17, -3, 5};
    for (size_t i = 0; i < 8; i++) {
        char b[32];
        int n = ll_to_str(b, sizeof(b), vals[i]);
        set_add(&s, b, (size_t)n, &def_lim);
    }
    CHECK_EQ(set_card(s), 6);
    const long long want[] = {-9223372036854775807LL - 1, -3, 0, 5, 17, 9223372036854775807LL};
    set_iter it;
    set_elem e;
    set_iter_init(&it, s);
    for (int i = 0; i < 6; i++) {
        CHECK(set_iter_next(&it, &e));
        CHECK(e.isint && e.v == want[i]);
        char b[32];
        int n = ll_to_str(b, sizeof(b), want[i]);
        CHECK_EQ(e.n, (size_t)n);
        CHECK(memcmp(e.p, b, e.n) == 0);
    }
    CHECK(!set_iter_next(&it, &e));
    set_iter_done(&it);
    /* an integer elem finds its member in a hashtable set too */
    gset *h = set_new_hashtable();
    CHECK_EQ(set_add(&h, "17", 2, &def_lim), 1);
    set_elem x;
    x.isint = 1;
    x.v = 17;
    x.n = (size_t)ll_to_str(x.buf, sizeof(x.buf), 17);
    x.p = x.buf;
    CHECK(set_contains_elem(h, &x));
    CHECK(set_contains_elem(s, &x));
    CHECK_EQ(set_remove_elem(&h, &x), 1);
    CHECK_EQ(set_remove_elem(&s, &x), 1);
    CHECK(!set_contains_elem(s, &x));
    CHECK_EQ(set_add_elem(&s, &x, &def_lim), 1);
    CHECK(set_contains(s, "17", 2));
    set_free(h);
    set_free(s);
}

/* ---- uniformity ---- */

typedef struct hits {
    uint32_t *h;
    size_t universe;
    size_t n;
    const char *fmt; /* members are fmt % index */
    int isint;
    size_t last; /* the index of the last member seen */
} hits;

static size_t index_of(const hits *hc, const set_elem *e) {
    size_t v = 0;
    const char *p = e->p;
    size_t n = e->n;
    if (!hc->isint) {
        CHECK(n >= 2 && p[0] == 'm' && p[1] == ':');
        p += 2;
        n -= 2;
    }
    for (size_t i = 0; i < n; i++) {
        CHECK(p[i] >= '0' && p[i] <= '9');
        v = v * 10 + (size_t)(p[i] - '0');
    }
    CHECK(v < hc->universe);
    return v;
}

static void on_hit(void *arg, const set_elem *e) {
    hits *hc = arg;
    hc->last = index_of(hc, e);
    hc->h[hc->last]++;
    hc->n++;
}

/* Chi-square over n cells with `draws` uniform draws: mean n-1, sd
 * sqrt(2(n-1)); 6 sd is a loose bound that a biased picker still fails. */
static void check_uniform(const uint32_t *h, size_t n, size_t draws) {
    double e = (double)draws / (double)n, chi = 0;
    for (size_t i = 0; i < n; i++) chi += ((double)h[i] - e) * ((double)h[i] - e) / e;
    double bound = (double)(n - 1) + 6 * __builtin_sqrt(2.0 * (double)(n - 1));
    CHECK_MSG(chi < bound, "chi-square %.1f over %zu cells (bound %.1f)", chi, n, bound);
}

static void reset(hits *hc) {
    memset(hc->h, 0, hc->universe * sizeof(uint32_t));
    hc->n = 0;
}

static void uniform_checks(const char *fmt, size_t n, int want_form) {
    set_limits lim = {512};
    gset *s = filled(fmt, n, &lim);
    CHECK_EQ(set_form(s), want_form);
    hits hc = {calloc(n, sizeof(uint32_t)), n, 0, fmt, fmt[0] == '%'};
    size_t draws = n * 200;
    /* single picks */
    for (size_t i = 0; i < draws; i++) {
        set_elem e;
        CHECK(set_random(s, test_rnd, &e));
        on_hit(&hc, &e);
    }
    check_uniform(hc.h, n, draws);
    /* repeated picks */
    reset(&hc);
    set_random_members(s, draws, test_rnd, on_hit, &hc);
    CHECK_EQ(hc.n, draws);
    check_uniform(hc.h, n, draws);
    /* distinct picks: each count gives that many distinct members */
    size_t counts[] = {0, 1, 2, n / 10 + 1, n / 3, n / 2, n - 1, n, n + 5};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        reset(&hc);
        set_random_unique(s, counts[c], test_rnd, on_hit, &hc);
        CHECK_EQ(hc.n, counts[c] < n ? counts[c] : n);
        for (size_t i = 0; i < n; i++) CHECK(hc.h[i] <= 1);
    }
    /* ... and every member equally often, on the rejection and the shuffle
     * paths */
    size_t ks[] = {n / 4 + 1, n / 2 + 1};
    for (int k = 0; k < 2; k++) {
        reset(&hc);
        size_t reps = 200 * n / ks[k];
        for (size_t i = 0; i < reps; i++) set_random_unique(s, ks[k], test_rnd, on_hit, &hc);
        check_uniform(hc.h, n, hc.n);
    }
    /* pops: a popped member is put back before the next pop (each pop is
     * uniform over what the set holds then, whatever its layout: a pop
     * that favoured the latest member added would pop that one again and
     * again), and pop_many subsets of fresh copies (both the one-by-one
     * and the keep-few paths) */
    reset(&hc);
    size_t trials = n * 100 > 40000 ? 40000 : n * 100;
    size_t cells = n;
    gset *d0 = set_dup(s);
    CHECK(d0);
    for (size_t i = 0; i < trials; i++) {
        CHECK_EQ(set_pop(&d0, test_rnd, on_hit, &hc), 1);
        CHECK_EQ(set_card(d0), n - 1);
        char b[64];
        int len = snprintf(b, sizeof(b), fmt, hc.last);
        CHECK_EQ(set_add(&d0, b, (size_t)len, &lim), 1);
    }
    CHECK_EQ(set_form(d0), want_form);
    CHECK_EQ(set_check(d0), 0);
    set_free(d0);
    check_uniform(hc.h, cells, trials);
    size_t pk[] = {n / 3, n - n / 10};
    for (int k = 0; k < 2; k++) {
        reset(&hc);
        size_t reps = trials / 20 + 10;
        for (size_t i = 0; i < reps; i++) {
            gset *d = set_dup(s);
            set_pop_many(&d, pk[k], test_rnd, on_hit, &hc);
            CHECK_EQ(set_card(d), n - pk[k]);
            CHECK_EQ(set_check(d), 0);
            /* popped and kept are disjoint and cover the set */
            set_iter it;
            set_elem e;
            set_iter_init(&it, d);
            while (set_iter_next(&it, &e)) CHECK(hc.h[index_of(&hc, &e)] < i + 1);
            set_iter_done(&it);
            set_free(d);
        }
        check_uniform(hc.h, n, hc.n);
    }
    free(hc.h);
    set_free(s);
}

TEST(set, uniform_intset) { uniform_checks("%zu", 300, SET_INTSET); }
TEST(set, uniform_small) { uniform_checks("m:%zu", 50, SET_SMALL); }
TEST(set, uniform_large) { uniform_checks("m:%zu", 2000, SET_LARGE); }

TEST(set, random_empty) {
    gset *s = set_new();
    set_elem e;
    CHECK(!set_random(s, test_rnd, &e));
    hits hc = {calloc(1, sizeof(uint32_t)), 1, 0, "%zu", 1};
    set_random_members(s, 10, test_rnd, on_hit, &hc);
    set_random_unique(s, 10, test_rnd, on_hit, &hc);
    CHECK_EQ(set_pop(&s, test_rnd, on_hit, &hc), 0);
    set_pop_many(&s, 3, test_rnd, on_hit, &hc);
    CHECK_EQ(hc.n, 0);
    free(hc.h);
    set_free(s);
}

TEST(set, pop_many_everything) {
    for (int f = 0; f < 3; f++) {
        const char *fmt = f == 0 ? "%zu" : "m:%zu";
        size_t n = f == 2 ? 1000 : 40;
        gset *s = filled(fmt, n, &def_lim);
        hits hc = {calloc(n, sizeof(uint32_t)), n, 0, fmt, f == 0};
        set_pop_many(&s, n + 1, test_rnd, on_hit, &hc);
        CHECK_EQ(hc.n, n);
        CHECK_EQ(set_card(s), 0);
        CHECK_EQ(set_check(s), 0);
        /* still usable */
        CHECK_EQ(set_add(&s, "m:1", 3, &def_lim), 1);
        CHECK_EQ(set_card(s), 1);
        free(hc.h);
        set_free(s);
    }
}

/* ---- scan ---- */

TEST(set, scan_packed_returns_everything) {
    gset *s = filled("%zu", 100, &def_lim);
    hits hc = {calloc(100, sizeof(uint32_t)), 100, 0, "%zu", 1};
    CHECK_EQ(set_scan(s, 12345, on_hit, &hc), 0);
    CHECK_EQ(hc.n, 100);
    set_free(s);
    free(hc.h);
}

typedef struct scan_seen {
    uint8_t *seen;
    size_t universe;
} scan_seen;

static void on_scan(void *arg, const set_elem *e) {
    scan_seen *ss = arg;
    CHECK(e->n > 2);
    size_t v = 0;
    for (size_t i = 2; i < e->n; i++) v = v * 10 + (size_t)(e->p[i] - '0');
    CHECK(v < ss->universe);
    ss->seen[v] = 1;
}

/* Members present for the whole scan are reported, while the set grows
 * (and shrinks) between the steps. */
static void scan_under_change(size_t start, size_t grow, int deletes, uint64_t seed) {
    unit_rng r = {seed};
    size_t universe = start + grow;
    gset *s = filled("m:%zu", start, &def_lim);
    uint8_t *stable = malloc(universe);
    memset(stable, 0, universe);
    for (size_t i = 0; i < start; i++) stable[i] = 1;
    scan_seen ss = {calloc(universe, 1), universe};
    uint64_t cur = 0;
    size_t next = start;
    do {
        cur = set_scan(s, cur, on_scan, &ss);
        for (int k = 0; k < 7 && next < universe; k++, next++) {
            char b[32];
            int n = snprintf(b, sizeof(b), "m:%zu", next);
            CHECK_EQ(set_add(&s, b, (size_t)n, &def_lim), 1);
        }
        if (deletes && unit_below(&r, 2)) {
            size_t v = (size_t)unit_below(&r, start);
            char b[32];
            int n = snprintf(b, sizeof(b), "m:%zu", v);
            set_remove(&s, b, (size_t)n);
            stable[v] = 0;
        }
    } while (cur);
    for (size_t i = 0; i < start; i++)
        if (stable[i]) CHECK_MSG(ss.seen[i], "m:%zu missed", i);
    CHECK_EQ(set_check(s), 0);
    free(stable);
    free(ss.seen);
    set_free(s);
}

TEST(set, scan_under_growth) { scan_under_change(3000, 30000, 0, 31); }
TEST(set, scan_under_growth_and_deletes) { scan_under_change(3000, 30000, 1, 33); }

/* ---- copies, forced conversion, compaction ---- */

TEST(set, dup_is_deep) {
    for (int f = 0; f < 3; f++) {
        const char *fmt = f == 0 ? "%zu" : "m:%zu";
        size_t n = f == 2 ? 5000 : 30;
        gset *s = filled(fmt, n, &def_lim);
        CHECK_EQ(set_form(s), f);
        gset *d = set_dup(s);
        CHECK(d);
        CHECK_EQ(set_form(d), set_form(s));
        CHECK_EQ(set_card(d), n);
        CHECK_EQ(set_check(d), 0);
        char b[32];
        int len = snprintf(b, sizeof(b), fmt, (size_t)2);
        CHECK_EQ(set_remove(&s, b, (size_t)len), 1);
        CHECK(set_contains(d, b, (size_t)len));
        CHECK_EQ(set_add(&s, "zz", 2, &def_lim), 1);
        CHECK(!set_contains(d, "zz", 2));
        CHECK(set_mem_usage(d) > 0);
        set_free(s);
        set_free(d);
    }
}

TEST(set, convert_forced) {
    gset *s = filled("%zu", 10, &def_lim);
    CHECK_EQ(set_convert(&s, SET_SMALL), SET_OK);
    CHECK_EQ(set_form(s), SET_SMALL);
    CHECK_EQ(set_convert(&s, SET_INTSET), SET_OK); /* never backwards */
    CHECK_EQ(set_form(s), SET_SMALL);
    CHECK_EQ(set_convert(&s, SET_LARGE), SET_OK);
    CHECK_EQ(set_form(s), SET_LARGE);
    CHECK_EQ(set_card(s), 10);
    CHECK_EQ(set_check(s), 0);
    CHECK(set_contains(s, "7", 1));
    set_free(s);
    s = filled("%zu", 100, &def_lim);
    CHECK_EQ(set_convert(&s, SET_SMALL), SET_OK); /* too many: large */
    CHECK_EQ(set_form(s), SET_LARGE);
    CHECK_EQ(set_check(s), 0);
    set_free(s);
}

TEST(set, churn_compacts) {
    /* Remove and re-add members of a large set over and over: dead arena
     * bytes must be reclaimed, not accumulated. */
    size_t n = 20000;
    gset *s = filled("m:%zu", n, &def_lim);
    size_t base = set_mem_usage(s);
    unit_rng r = {5};
    for (size_t round = 0; round < 20; round++) {
        for (size_t i = 0; i < n / 2; i++) {
            char b[32];
            int len = snprintf(b, sizeof(b), "m:%zu", (size_t)unit_below(&r, n));
            if (set_remove(&s, b, (size_t)len)) CHECK_EQ(set_add(&s, b, (size_t)len, &def_lim), 1);
        }
        CHECK_EQ(set_check(s), 0);
    }
    size_t after = set_mem_usage(s);
    unit_log("mem %zu -> %zu after churn", base, after);
    CHECK_MSG(after < base * 2, "mem %zu -> %zu", base, after);
    while (set_compact_step(s, 1 << 20)) {
    }
    CHECK_EQ(set_check(s), 0);
    CHECK_EQ(set_card(s), n);
    set_free(s);
}

TEST(set, pop_keep_few_frees_memory) {
    size_t n = 100000;
    gset *s = filled("m:%zu", n, &def_lim);
    size_t before = set_mem_usage(s);
    hits hc = {calloc(n, sizeof(uint32_t)), n, 0, "m:%zu", 0};
    set_pop_many(&s, n - 10, test_rnd, on_hit, &hc);
    CHECK_EQ(hc.n, n - 10);
    CHECK_EQ(set_card(s), 10);
    CHECK_EQ(set_check(s), 0);
    CHECK(set_mem_usage(s) < 4096);
    CHECK(!set_is_intset(s));
    unit_log("mem %zu -> %zu", before, set_mem_usage(s));
    free(hc.h);
    set_free(s);
}

/* Bytes per member of a 1M-member set of "m:<i>" members, as the set
 * itself accounts it. */
TEST(set, bytes_per_member) {
    size_t n = (size_t)unit_scaled(1000000, 100000);
    gset *s = set_new();
    char b[32];
    double t0 = unit_now();
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(b, sizeof(b), "m:%zu", i);
        CHECK_EQ(set_add(&s, b, (size_t)len, &def_lim), 1);
    }
    double t1 = unit_now();
    unit_rng r = {7};
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(b, sizeof(b), "m:%zu", (size_t)unit_below(&r, n));
        CHECK(set_contains(s, b, (size_t)len));
    }
    double t2 = unit_now();
    double per = (double)set_mem_usage(s) / (double)n;
    unit_log("%zu members: %.1f B/member; insert %.0f ns, lookup %.0f ns", n, per, (t1 - t0) * 1e9 / (double)n,
             (t2 - t1) * 1e9 / (double)n);
    CHECK_MSG(per < 28, "%.1f B/member", per);
    set_free(s);
}

/* set_new_reserve (RDB loads): a hashtable set, presized past the packed
 * form's limit, that takes its members like any other. */
TEST(set, new_reserve) {
    set_limits lim = {512};
    char b[32];
    gset *s = set_new_reserve(10);
    CHECK_EQ(set_form(s), SET_SMALL);
    CHECK_EQ(set_is_intset(s), 0);
    set_free(s);
    size_t n = 5000;
    s = set_new_reserve(n);
    CHECK_EQ(set_form(s), SET_LARGE);
    for (size_t i = 0; i < n; i++) {
        size_t bl = (size_t)snprintf(b, sizeof(b), "%zu", i);
        CHECK_EQ(set_add(&s, b, bl, &lim), 1);
    }
    CHECK_EQ(set_add(&s, "7", 1, &lim), 0);
    CHECK_EQ(set_card(s), n);
    CHECK_EQ(set_is_intset(s), 0);
    CHECK_EQ(set_check(s), 0);
    set_free(s);
}
