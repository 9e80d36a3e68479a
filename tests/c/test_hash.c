/* test_hash.c -- ds/hash against a reference model.
 *
 * Fields are derived from integer ids in [0, U) (printable "f:<id>", binary
 * ones with NUL bytes, and the empty field for id 0), so the reference is an
 * array of values indexed by id. Randomized runs mix sets with values of
 * every size around the small-form limit, deletes and lookups, and compare
 * the whole content (iteration, scan, random picks) at checkpoints. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/arena.h"
#include "ds/hash.h"
#include "util/hashfn.h"
#include "unit.h"

typedef struct ref {
    uint32_t universe;
    char **val;    /* NULL: absent */
    size_t *vlen;
    size_t count;
} ref;

static void ref_init(ref *m, uint32_t u) {
    m->universe = u;
    m->val = calloc(u, sizeof(char *));
    m->vlen = calloc(u, sizeof(size_t));
    m->count = 0;
}

static void ref_free(ref *m) {
    for (uint32_t i = 0; i < m->universe; i++) free(m->val[i]);
    free(m->val);
    free(m->vlen);
}

/* Field bytes of id (buf holds at least 32 bytes). */
static size_t field_of(uint32_t id, char *buf) {
    if (id == 0) return 0; /* the empty field */
    if (id % 7 == 3) {
        /* binary, with NUL bytes */
        buf[0] = '\0';
        memcpy(buf + 1, &id, 4);
        buf[5] = '\xff';
        buf[6] = '\0';
        return 7;
    }
    return (size_t)snprintf(buf, 32, "f:%u", id);
}

/* Id of field bytes, or UINT32_MAX when they are no field of ours. */
static uint32_t id_of(const char *f, size_t n) {
    if (n == 0) return 0;
    if (n == 7 && f[0] == '\0') {
        uint32_t id;
        memcpy(&id, f + 1, 4);
        return id;
    }
    if (n < 3 || f[0] != 'f' || f[1] != ':') return UINT32_MAX;
    uint32_t v = 0;
    for (size_t i = 2; i < n; i++) v = v * 10 + (uint32_t)(f[i] - '0');
    return v;
}

static void ref_set(ref *m, uint32_t id, const char *v, size_t vlen) {
    if (!m->val[id]) m->count++;
    free(m->val[id]);
    m->val[id] = malloc(vlen + 1);
    memcpy(m->val[id], v, vlen);
    m->vlen[id] = vlen;
}

static int ref_del(ref *m, uint32_t id) {
    if (!m->val[id]) return 0;
    free(m->val[id]);
    m->val[id] = NULL;
    m->count--;
    return 1;
}

static size_t make_value(unit_rng *r, char *buf, size_t maxlen) {
    size_t len;
    unsigned roll = (unsigned)unit_below(r, 100);
    if (roll < 70) len = unit_below(r, 20);
    else if (roll < 90) len = 60 + unit_below(r, 10); /* around the 64-byte limit */
    else len = unit_below(r, maxlen + 1);
    for (size_t i = 0; i < len; i++) buf[i] = (char)unit_below(r, 256);
    return len;
}

static void check_value(hash *h, ref *m, uint32_t id) {
    char fb[32];
    size_t fl = field_of(id, fb);
    const char *v;
    size_t vl;
    int got = hash_get(h, fb, fl, &v, &vl);
    CHECK_EQ(got, m->val[id] != NULL);
    CHECK_EQ(hash_exists(h, fb, fl), got);
    if (got) {
        CHECK_EQ(vl, m->vlen[id]);
        CHECK(vl == 0 || memcmp(v, m->val[id], vl) == 0);
    }
}

/* Iterate everything: each pair once, exactly the reference. */
static void check_all(hash *h, ref *m) {
    CHECK_EQ(hash_check(h), 0);
    CHECK_EQ(hash_len(h), m->count);
    uint8_t *seen = calloc(m->universe, 1);
    hash_iter it;
    hash_iter_init(&it, h);
    const char *f, *v;
    size_t fl, vl, n = 0;
    while (hash_iter_next(&it, &f, &fl, &v, &vl)) {
        uint32_t id = id_of(f, fl);
        CHECK(id < m->universe);
        CHECK(!seen[id]);
        seen[id] = 1;
        CHECK(m->val[id] != NULL);
        CHECK_EQ(vl, m->vlen[id]);
        CHECK(vl == 0 || memcmp(v, m->val[id], vl) == 0);
        n++;
    }
    hash_iter_done(&it);
    CHECK_EQ(n, m->count);
    free(seen);
}

static const hash_limits default_limits = {512, 64};

static void random_ops(uint32_t universe, uint64_t ops, uint64_t seed, hash_limits lim, int faults) {
    unit_rng r = {seed};
    ref m;
    ref_init(&m, universe);
    hash *h = hash_new();
    CHECK(h);
    char *vbuf = malloc(4096);
    int was_large = 0;
    uint64_t refused = 0;
    for (uint64_t i = 0; i < ops; i++) {
        uint32_t id = (uint32_t)unit_below(&r, universe);
        char fb[32];
        size_t fl = field_of(id, fb);
        unsigned roll = (unsigned)unit_below(&r, 100);
        if (faults && unit_below(&r, 300) == 0) arena_set_fault(1 + (int)unit_below(&r, 2));
        if (roll < 55) {
            size_t vl = make_value(&r, vbuf, 300);
            int rc = hash_set(&h, fb, fl, vbuf, vl, &lim);
            if (rc < 0) {
                CHECK_MSG(faults && rc == HASH_ENOMEM, "hash_set failed: %d", rc);
                refused++;
            } else {
                CHECK_EQ(rc, m.val[id] == NULL);
                ref_set(&m, id, vbuf, vl);
            }
        } else if (roll < 80) {
            CHECK_EQ(hash_del(&h, fb, fl), ref_del(&m, id));
        } else {
            check_value(h, &m, id);
        }
        if (hash_form(h) == HASH_LARGE) was_large = 1;
        CHECK(!was_large || hash_form(h) == HASH_LARGE); /* never back to small */
        if (hash_form(h) == HASH_SMALL) CHECK(hash_len(h) <= lim.max_entries);
        if (i % 5000 == 4999) check_all(h, &m);
    }
    arena_set_fault(0);
    check_all(h, &m);
    for (uint32_t id = 0; id < universe; id++) check_value(h, &m, id);
    if (faults) unit_log("%llu writes refused by injected faults", (unsigned long long)refused);
    hash_free(h);
    free(vbuf);
    ref_free(&m);
}

TEST(hash, random_small_universe) { random_ops(40, unit_scaled(200000, 20000), 11, default_limits, 0); }
TEST(hash, random_mixed_universe) { random_ops(700, unit_scaled(400000, 40000), 12, default_limits, 0); }
TEST(hash, random_large_universe) { random_ops(30000, unit_scaled(1000000, 100000), 13, default_limits, 0); }
TEST(hash, random_tiny_limits) { random_ops(200, unit_scaled(200000, 20000), 14, (hash_limits){4, 8}, 0); }
TEST(hash, random_alloc_faults) { random_ops(5000, unit_scaled(300000, 30000), 15, default_limits, 1); }

TEST(hash, small_keeps_order_and_overwrites_in_place) {
    hash *h = hash_new();
    hash_limits lim = default_limits;
    CHECK_EQ(hash_set(&h, "a", 1, "1", 1, &lim), 1);
    CHECK_EQ(hash_set(&h, "b", 1, "22", 2, &lim), 1);
    CHECK_EQ(hash_set(&h, "", 0, "", 0, &lim), 1);
    CHECK_EQ(hash_set(&h, "c\0d", 3, "x\0y", 3, &lim), 1);
    CHECK_EQ(hash_set(&h, "b", 1, "a much longer value", 19, &lim), 0);
    CHECK_EQ(hash_set(&h, "a", 1, "", 0, &lim), 0);
    CHECK_EQ(hash_form(h), HASH_SMALL);
    CHECK_EQ(hash_len(h), 4);
    const char *want_f[] = {"a", "b", "", "c\0d"};
    size_t want_fl[] = {1, 1, 0, 3};
    const char *want_v[] = {"", "a much longer value", "", "x\0y"};
    size_t want_vl[] = {0, 19, 0, 3};
    hash_iter it;
    hash_iter_init(&it, h);
    const char *f, *v;
    size_t fl, vl;
    for (int i = 0; i < 4; i++) {
        CHECK(hash_iter_next(&it, &f, &fl, &v, &vl));
        CHECK_EQ(fl, want_fl[i]);
        CHECK(memcmp(f, want_f[i], fl) == 0);
        CHECK_EQ(vl, want_vl[i]);
        CHECK(memcmp(v, want_v[i], vl) == 0);
    }
    CHECK(!hash_iter_next(&it, &f, &fl, &v, &vl));
    hash_iter_done(&it);
    CHECK_EQ(hash_del(&h, "b", 1), 1);
    CHECK_EQ(hash_del(&h, "b", 1), 0);
    CHECK_EQ(hash_del(&h, "", 0), 1);
    CHECK(hash_get(h, "c\0d", 3, &v, &vl));
    CHECK_EQ(vl, 3);
    CHECK_EQ(hash_check(h), 0);
    CHECK_EQ(hash_del(&h, "a", 1), 1);
    CHECK_EQ(hash_del(&h, "c\0d", 3), 1);
    CHECK_EQ(hash_len(h), 0);
    CHECK_EQ(hash_check(h), 0);
    hash_free(h);
}

static hash *filled(size_t n, const hash_limits *lim) {
    hash *h = hash_new();
    char fb[32], vb[32];
    for (size_t i = 0; i < n; i++) {
        size_t fl = (size_t)snprintf(fb, sizeof(fb), "f:%zu", i);
        size_t vl = (size_t)snprintf(vb, sizeof(vb), "v%zu", i);
        CHECK_EQ(hash_set(&h, fb, fl, vb, vl, lim), 1);
    }
    return h;
}

TEST(hash, conversion_thresholds) {
    hash_limits lim = {8, 10};
    /* Count: 8 fields stay small, the 9th converts. */
    hash *h = filled(8, &lim);
    CHECK_EQ(hash_form(h), HASH_SMALL);
    CHECK_EQ(hash_set(&h, "f:0", 3, "new", 3, &lim), 0);
    CHECK_EQ(hash_form(h), HASH_SMALL);
    CHECK_EQ(hash_set(&h, "x", 1, "y", 1, &lim), 1);
    CHECK_EQ(hash_form(h), HASH_LARGE);
    CHECK_EQ(hash_len(h), 9);
    CHECK_EQ(hash_check(h), 0);
    /* Deleting back below the limit never converts back. */
    for (int i = 0; i < 8; i++) {
        char fb[32];
        size_t fl = (size_t)snprintf(fb, sizeof(fb), "f:%d", i);
        CHECK_EQ(hash_del(&h, fb, fl), 1);
    }
    CHECK_EQ(hash_form(h), HASH_LARGE);
    CHECK_EQ(hash_len(h), 1);
    hash_free(h);

    /* A field of 10 bytes fits, 11 converts. */
    h = hash_new();
    CHECK_EQ(hash_set(&h, "0123456789", 10, "v", 1, &lim), 1);
    CHECK_EQ(hash_form(h), HASH_SMALL);
    CHECK_EQ(hash_set(&h, "0123456789a", 11, "v", 1, &lim), 1);
    CHECK_EQ(hash_form(h), HASH_LARGE);
    hash_free(h);

    /* A value growing past the limit (HINCRBYFLOAT-style overwrite). */
    h = filled(3, &lim);
    CHECK_EQ(hash_set(&h, "f:1", 3, "0123456789", 10, &lim), 0);
    CHECK_EQ(hash_form(h), HASH_SMALL);
    CHECK_EQ(hash_set(&h, "f:1", 3, "0123456789.5", 12, &lim), 0);
    CHECK_EQ(hash_form(h), HASH_LARGE);
    const char *v;
    size_t vl;
    CHECK(hash_get(h, "f:1", 3, &v, &vl));
    CHECK_EQ(vl, 12);
    CHECK(hash_get(h, "f:2", 3, &v, &vl));
    CHECK(memcmp(v, "v2", 2) == 0);
    hash_free(h);

    /* max_entries 0: the first field already converts. */
    hash_limits zero = {0, 64};
    h = hash_new();
    CHECK_EQ(hash_set(&h, "a", 1, "b", 1, &zero), 1);
    CHECK_EQ(hash_form(h), HASH_LARGE);
    hash_free(h);

    /* The limit lowered under an existing small hash: the next write,
     * even an overwrite, converts. */
    h = filled(6, &lim);
    hash_limits lower = {4, 10};
    CHECK_EQ(hash_form(h), HASH_SMALL);
    CHECK_EQ(hash_set(&h, "f:0", 3, "z", 1, &lower), 0);
    CHECK_EQ(hash_form(h), HASH_LARGE);
    CHECK_EQ(hash_len(h), 6);
    hash_free(h);
}

TEST(hash, set_from_own_bytes) {
    /* A value that points into the hash itself (copying a field's value to
     * another field): the block moves under it in the small form. */
    hash_limits lim = default_limits;
    hash *h = filled(20, &lim);
    for (int round = 0; round < 2; round++) {
        const char *v;
        size_t vl;
        CHECK(hash_get(h, "f:3", 3, &v, &vl));
        CHECK_EQ(hash_set(&h, "copy", 4, v, vl, &lim), round == 0);
        CHECK(hash_get(h, "f:3", 3, &v, &vl));
        CHECK_EQ(hash_set(&h, "f:4", 3, v, vl, &lim), 0);
        const char *f;
        size_t fl;
        hash_iter it;
        hash_iter_init(&it, h);
        CHECK(hash_iter_next(&it, &f, &fl, &v, &vl));
        hash_iter_done(&it);
        char fcopy[32];
        memcpy(fcopy, f, fl);
        /* field and value both inside the block, 70 bytes long: converts */
        char big[70];
        memset(big, 'q', sizeof(big));
        CHECK(hash_set(&h, fcopy, fl, big, sizeof(big), &lim) >= 0);
        CHECK(hash_get(h, "copy", 4, &v, &vl));
        CHECK_EQ(vl, 2);
        CHECK(memcmp(v, "v3", 2) == 0);
        CHECK(hash_get(h, "f:4", 3, &v, &vl));
        CHECK(memcmp(v, "v3", 2) == 0);
        CHECK_EQ(hash_check(h), 0);
        CHECK_EQ(hash_form(h), HASH_LARGE);
    }
    hash_free(h);
}

/* Overwrites with changing lengths leave dead bytes; compaction must keep
 * them bounded and never lose or corrupt a pair. */
TEST(hash, overwrite_churn_compacts) {
    uint32_t n = (uint32_t)unit_scaled(50000, 5000);
    unit_rng r = {21};
    ref m;
    ref_init(&m, n);
    hash *h = hash_new();
    char vb[64];
    char fb[32];
    for (uint32_t id = 0; id < n; id++) {
        size_t fl = field_of(id, fb);
        size_t vl = 8 + unit_below(&r, 9);
        memset(vb, 'a' + (int)(id % 26), vl);
        CHECK(hash_set(&h, fb, fl, vb, vl, &default_limits) == 1);
        ref_set(&m, id, vb, vl);
    }
    size_t peak_mem = 0;
    uint64_t rounds = (uint64_t)n * 10;
    for (uint64_t i = 0; i < rounds; i++) {
        uint32_t id = (uint32_t)unit_below(&r, n);
        size_t fl = field_of(id, fb);
        size_t vl = 8 + unit_below(&r, 9);
        for (size_t k = 0; k < vl; k++) vb[k] = (char)unit_below(&r, 256);
        CHECK_EQ(hash_set(&h, fb, fl, vb, vl, &default_limits), 0);
        ref_set(&m, id, vb, vl);
        if (i % 1000 == 0 && hash_mem_usage(h) > peak_mem) peak_mem = hash_mem_usage(h);
    }
    check_all(h, &m);
    size_t live = 0;
    for (uint32_t id = 0; id < n; id++) live += field_of(id, fb) + m.vlen[id] + 3;
    unit_log("%u fields, %llu overwrites: live %.1f B/field, peak %.1f B/field, end %.1f B/field", n,
             (unsigned long long)rounds, (double)live / n, (double)peak_mem / n, (double)hash_mem_usage(h) / n);
    /* Dead bytes must not pile up: blocks are compacted at half dead, so
     * the arena stays under twice the live bytes plus the active block and
     * the one being emptied (2 MiB chunks); the index is ~10 B/field. */
    size_t bound = 2 * live + 2 * ((size_t)2 << 20) + (size_t)n * 12;
    CHECK_MSG(peak_mem <= bound, "peak %zu > bound %zu", peak_mem, bound);
    hash_free(h);
    ref_free(&m);
}

typedef struct scan_seen {
    uint8_t *seen;
    uint32_t universe;
    size_t reports;
} scan_seen;

static void on_scan(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    scan_seen *s = arg;
    (void)v;
    (void)vl;
    uint32_t id = id_of(f, fl);
    CHECK(id < s->universe);
    s->seen[id] = 1;
    s->reports++;
}

/* Scan while the hash grows (and loses fields outside the stable set):
 * every field present for the whole scan is reported. */
static void scan_under_change(uint32_t stable, uint32_t grow, int with_deletes, uint64_t seed) {
    unit_rng r = {seed};
    uint32_t universe = stable + grow;
    hash *h = hash_new();
    char fb[32];
    for (uint32_t id = 0; id < stable; id++) {
        size_t fl = field_of(id, fb);
        CHECK(hash_set(&h, fb, fl, "v", 1, &default_limits) == 1);
    }
    scan_seen s = {calloc(universe, 1), universe, 0};
    uint64_t cursor = 0;
    uint32_t next = stable;
    int steps = 0;
    do {
        cursor = hash_scan(h, cursor, on_scan, &s);
        steps++;
        for (int k = 0; k < 8 && next < universe; k++) {
            size_t fl = field_of(next++, fb);
            CHECK(hash_set(&h, fb, fl, "w", 1, &default_limits) >= 0);
        }
        if (with_deletes && next > stable + 4) {
            uint32_t id = stable + (uint32_t)unit_below(&r, next - stable);
            size_t fl = field_of(id, fb);
            hash_del(&h, fb, fl);
        }
    } while (cursor != 0);
    for (uint32_t id = 0; id < stable; id++) CHECK_MSG(s.seen[id], "field %u never reported", id);
    unit_log("stable %u, grew to %zu in %d steps, %zu reports", stable, hash_len(h), steps, s.reports);
    CHECK_EQ(hash_check(h), 0);
    free(s.seen);
    hash_free(h);
}

TEST(hash, scan_small_returns_everything) {
    hash *h = filled(10, &default_limits);
    scan_seen s = {calloc(100, 1), 100, 0};
    CHECK_EQ(hash_scan(h, 0, on_scan, &s), 0);
    CHECK_EQ(s.reports, 10);
    /* any cursor: everything again, cursor 0 */
    CHECK_EQ(hash_scan(h, 12345, on_scan, &s), 0);
    CHECK_EQ(s.reports, 20);
    free(s.seen);
    hash_free(h);
}

TEST(hash, scan_under_growth) {
    scan_under_change(600, 20000, 0, 31);
    scan_under_change(2000, (uint32_t)unit_scaled(100000, 20000), 0, 32);
}

TEST(hash, scan_under_growth_and_deletes) { scan_under_change(3000, 30000, 1, 33); }

typedef struct pick_count {
    uint32_t *hits;
    uint32_t universe;
    size_t n;
} pick_count;

static void on_pick(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    pick_count *p = arg;
    uint32_t id = id_of(f, fl);
    CHECK(id < p->universe);
    /* filled() values are "v<id>" */
    char want[32];
    size_t wl = (size_t)snprintf(want, sizeof(want), "v%u", id);
    CHECK_EQ(vl, wl);
    CHECK(memcmp(v, want, vl) == 0);
    p->hits[id]++;
    p->n++;
}

static uint64_t test_rnd_state = 99;
static uint64_t test_rnd(void) {
    unit_rng r = {test_rnd_state};
    uint64_t v = unit_rand(&r);
    test_rnd_state = r.s;
    return v;
}

/* Chi-square over n cells with `draws` uniform draws: a loose bound. */
static void check_uniform(const uint32_t *hits, size_t n, size_t draws) {
    double e = (double)draws / (double)n, chi = 0;
    for (size_t i = 0; i < n; i++) chi += ((double)hits[i] - e) * ((double)hits[i] - e) / e;
    /* mean n-1, sd sqrt(2(n-1)): allow 6 sd */
    double bound = (double)(n - 1) + 6 * __builtin_sqrt(2.0 * (double)(n - 1));
    CHECK_MSG(chi < bound, "chi-square %.1f over %zu cells (bound %.1f)", chi, n, bound);
}

static void random_checks(size_t n) {
    hash *h = filled(n, &default_limits);
    pick_count p = {calloc(n, sizeof(uint32_t)), (uint32_t)n, 0};
    size_t draws = n * 200;
    hash_random_pairs(h, draws, test_rnd, on_pick, &p);
    CHECK_EQ(p.n, draws);
    check_uniform(p.hits, n, draws);
    /* single picks */
    memset(p.hits, 0, n * sizeof(uint32_t));
    p.n = 0;
    for (size_t i = 0; i < draws; i++) {
        const char *f, *v;
        size_t fl, vl;
        CHECK(hash_random(h, test_rnd, &f, &fl, &v, &vl));
        on_pick(&p, f, fl, v, vl);
    }
    check_uniform(p.hits, n, draws);
    /* distinct picks: every count, and uniform over repeated draws */
    size_t counts[] = {1, 2, n / 10 + 1, n / 3, n / 2, n - 1, n, n + 5};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        size_t want = counts[c] < n ? counts[c] : n;
        memset(p.hits, 0, n * sizeof(uint32_t));
        p.n = 0;
        CHECK_EQ(hash_random_unique(h, counts[c], test_rnd, on_pick, &p), HASH_OK);
        CHECK_EQ(p.n, want);
        for (size_t i = 0; i < n; i++) CHECK(p.hits[i] <= 1);
    }
    memset(p.hits, 0, n * sizeof(uint32_t));
    p.n = 0;
    size_t k = n / 4 + 1, reps = 200 * n / k;
    for (size_t i = 0; i < reps; i++) hash_random_unique(h, k, test_rnd, on_pick, &p);
    check_uniform(p.hits, n, p.n);
    memset(p.hits, 0, n * sizeof(uint32_t));
    p.n = 0;
    k = n / 2 + 1; /* the shuffle path */
    reps = 200 * n / k;
    for (size_t i = 0; i < reps; i++) hash_random_unique(h, k, test_rnd, on_pick, &p);
    check_uniform(p.hits, n, p.n);
    free(p.hits);
    hash_free(h);
}

TEST(hash, random_small_uniform) { random_checks(50); }
TEST(hash, random_large_uniform) { random_checks(3000); }

TEST(hash, random_empty) {
    hash *h = hash_new();
    const char *f, *v;
    size_t fl, vl;
    CHECK(!hash_random(h, test_rnd, &f, &fl, &v, &vl));
    pick_count p = {calloc(1, sizeof(uint32_t)), 1, 0};
    hash_random_pairs(h, 10, test_rnd, on_pick, &p);
    CHECK_EQ(p.n, 0);
    free(p.hits);
    hash_free(h);
}

TEST(hash, dup_is_deep) {
    for (int large = 0; large < 2; large++) {
        size_t n = large ? 5000 : 30;
        hash *h = filled(n, &default_limits);
        CHECK_EQ(hash_form(h), large ? HASH_LARGE : HASH_SMALL);
        hash *d = hash_dup(h);
        CHECK(d);
        CHECK_EQ(hash_form(d), hash_form(h));
        CHECK_EQ(hash_len(d), n);
        CHECK_EQ(hash_check(d), 0);
        CHECK_EQ(hash_set(&h, "f:1", 3, "changed", 7, &default_limits), 0);
        CHECK_EQ(hash_del(&h, "f:2", 3), 1);
        const char *v;
        size_t vl;
        CHECK(hash_get(d, "f:1", 3, &v, &vl));
        CHECK(vl == 2 && memcmp(v, "v1", 2) == 0);
        CHECK(hash_exists(d, "f:2", 3));
        hash_free(h);
        hash_free(d);
    }
}

TEST(hash, convert_forced) {
    hash *h = filled(10, &default_limits);
    CHECK_EQ(hash_convert(&h), HASH_OK);
    CHECK_EQ(hash_form(h), HASH_LARGE);
    CHECK_EQ(hash_len(h), 10);
    CHECK_EQ(hash_check(h), 0);
    CHECK_EQ(hash_convert(&h), HASH_OK);
    hash_free(h);
}

TEST(hash, large_values) {
    /* A 1 MiB value lives in a dedicated arena block. */
    size_t big = (size_t)1 << 20;
    char *v1 = malloc(big * 3);
    for (size_t i = 0; i < big * 3; i++) v1[i] = (char)(i * 7);
    hash *h = filled(100, &default_limits);
    CHECK_EQ(hash_set(&h, "big", 3, v1, big, &default_limits), 1);
    CHECK_EQ(hash_form(h), HASH_LARGE);
    CHECK_EQ(hash_set(&h, "bigger", 6, v1, big * 3, &default_limits), 1);
    CHECK_EQ(hash_set(&h, "big", 3, v1 + 1, big, &default_limits), 0);
    const char *v;
    size_t vl;
    CHECK(hash_get(h, "big", 3, &v, &vl));
    CHECK_EQ(vl, big);
    CHECK(memcmp(v, v1 + 1, big) == 0);
    CHECK(hash_get(h, "bigger", 6, &v, &vl));
    CHECK_EQ(vl, big * 3);
    CHECK(memcmp(v, v1, vl) == 0);
    CHECK_EQ(hash_check(h), 0);
    CHECK(hash_mem_usage(h) > big * 4);
    CHECK_EQ(hash_del(&h, "bigger", 6), 1);
    /* the 3 MiB pair had a block of its own, given back with it */
    CHECK(hash_mem_usage(h) < big * 3);
    hash_free(h);
    free(v1);
}

/* Bytes per field of a 1M-field hash of "f:<i>" fields and 8-16 byte
 * values, as the hash itself accounts it. */
TEST(hash, bytes_per_field) {
    size_t n = (size_t)unit_scaled(1000000, 100000);
    unit_rng r = {41};
    hash *h = hash_new();
    char fb[32], vb[32];
    double t0 = unit_now();
    for (size_t i = 0; i < n; i++) {
        size_t fl = (size_t)snprintf(fb, sizeof(fb), "f:%zu", i);
        size_t vl = 8 + unit_below(&r, 9);
        for (size_t k = 0; k < vl; k++) vb[k] = (char)('a' + unit_below(&r, 26));
        CHECK_EQ(hash_set(&h, fb, fl, vb, vl, &default_limits), 1);
    }
    double t1 = unit_now();
    for (size_t i = 0; i < n; i++) {
        size_t fl = (size_t)snprintf(fb, sizeof(fb), "f:%zu", (size_t)unit_below(&r, n));
        CHECK(hash_exists(h, fb, fl));
    }
    double t2 = unit_now();
    double per = (double)hash_mem_usage(h) / (double)n;
    unit_log("%zu fields: %.1f B/field; insert %.0f ns, lookup %.0f ns", n, per, (t1 - t0) * 1e9 / (double)n,
             (t2 - t1) * 1e9 / (double)n);
    CHECK_MSG(per < 38, "%.1f B/field", per);
    hash_free(h);
}

/* Fields and values in every header format of the small form: short
 * (field <= 15, value <= 14), value length following (field <= 13) and
 * both lengths following, with overwrites moving between formats. */
TEST(hash, small_entry_formats) {
    hash_limits lim = {512, 200};
    unit_rng r = {51};
    ref m;
    ref_init(&m, 64);
    hash *h = hash_new();
    char fbuf[64][40], vb[200];
    size_t flen[64];
    for (uint32_t id = 0; id < 64; id++) {
        flen[id] = id % 32; /* 0..31 bytes: every field format */
        for (size_t k = 0; k < flen[id]; k++) fbuf[id][k] = (char)('a' + (id + k) % 26);
        if (flen[id]) fbuf[id][0] = (char)id; /* distinct */
    }
    for (int i = 0; i < 20000; i++) {
        uint32_t id = (uint32_t)unit_below(&r, 64);
        if (flen[id] == 0 && id != 0) continue;
        size_t vl = unit_below(&r, 3) == 0 ? unit_below(&r, 200) : unit_below(&r, 20);
        for (size_t k = 0; k < vl; k++) vb[k] = (char)unit_below(&r, 256);
        if (unit_below(&r, 5) == 0) {
            int had = m.val[id] != NULL;
            CHECK_EQ(hash_del(&h, fbuf[id], flen[id]), had);
            ref_del(&m, id);
        } else {
            CHECK_EQ(hash_set(&h, fbuf[id], flen[id], vb, vl, &lim), m.val[id] == NULL);
            ref_set(&m, id, vb, vl);
        }
        CHECK_EQ(hash_form(h), HASH_SMALL);
        if (i % 500 == 0) CHECK_EQ(hash_check(h), 0);
        const char *v;
        size_t gl;
        if (m.val[id]) {
            CHECK(hash_get(h, fbuf[id], flen[id], &v, &gl));
            CHECK_EQ(gl, m.vlen[id]);
            CHECK(gl == 0 || memcmp(v, m.val[id], gl) == 0);
        }
    }
    CHECK_EQ(hash_check(h), 0);
    CHECK_EQ(hash_len(h), m.count);
    hash_free(h);
    ref_free(&m);
}

/* The small form's 1-byte count saturates past 255 and is then counted by
 * walking. */
TEST(hash, small_count_saturates) {
    hash_limits lim = {100000, 64};
    hash *h = hash_new();
    char fb[32];
    size_t n = 300;
    for (size_t i = 0; i < n; i++) {
        size_t fl = (size_t)snprintf(fb, sizeof(fb), "%zu", i);
        CHECK_EQ(hash_set(&h, fb, fl, "", 0, &lim), 1);
    }
    CHECK_EQ(hash_form(h), HASH_SMALL);
    CHECK_EQ(hash_len(h), n);
    CHECK_EQ(hash_check(h), 0);
    for (size_t i = 0; i < 10; i++) {
        size_t fl = (size_t)snprintf(fb, sizeof(fb), "%zu", i * 29);
        CHECK_EQ(hash_del(&h, fb, fl), 1);
    }
    CHECK_EQ(hash_len(h), n - 10);
    CHECK_EQ(hash_check(h), 0);
    hash_free(h);
}

/* Record-like small hashes: names frequent across hashes are interned (one
 * id byte instead of the name), so later hashes are smaller than the first
 * and every name reads back unchanged; a rare long name stays inline. */
static const char *rec_names[] = {"name", "email", "created_at", "f:0", "f:1", "f:2", "counter", "x"};
#define REC_N (sizeof(rec_names) / sizeof(rec_names[0]))

static hash *rec_hash(size_t k) {
    hash *h = hash_new();
    char v[32], rare[40];
    for (size_t j = 0; j < REC_N; j++) {
        size_t vl = (size_t)snprintf(v, sizeof(v), "value-%06zu-%zu", k, j);
        CHECK(hash_set(&h, rec_names[j], strlen(rec_names[j]), v, vl, &default_limits) == 1);
    }
    size_t rl = (size_t)snprintf(rare, sizeof(rare), "a-rare-field-name-%06zu", k);
    CHECK_EQ(hash_set(&h, rare, rl, "r", 1, &default_limits), 1);
    return h;
}

static void rec_verify(hash *h, size_t k) {
    char v[32], rare[40];
    CHECK_EQ(hash_check(h), 0);
    CHECK_EQ(hash_len(h), REC_N + 1);
    for (size_t j = 0; j < REC_N; j++) {
        size_t vl = (size_t)snprintf(v, sizeof(v), "value-%06zu-%zu", k, j);
        const char *got;
        size_t gl;
        CHECK(hash_get(h, rec_names[j], strlen(rec_names[j]), &got, &gl));
        CHECK(gl == vl && memcmp(got, v, vl) == 0);
    }
    size_t rl = (size_t)snprintf(rare, sizeof(rare), "a-rare-field-name-%06zu", k);
    CHECK(hash_exists(h, rare, rl));
    /* iteration gives back the names themselves, in insertion order */
    hash_iter it;
    hash_iter_init(&it, h);
    const char *f, *vv;
    size_t fl, vvl, j = 0;
    while (hash_iter_next(&it, &f, &fl, &vv, &vvl)) {
        if (j < REC_N) CHECK(fl == strlen(rec_names[j]) && memcmp(f, rec_names[j], fl) == 0);
        else CHECK(fl == rl && memcmp(f, rare, rl) == 0);
        j++;
    }
    hash_iter_done(&it);
    CHECK_EQ(j, REC_N + 1);
}

TEST(hash, interned_fields) {
    size_t n = 3000;
    hash **hs = calloc(n, sizeof(*hs));
    for (size_t k = 0; k < n; k++) hs[k] = rec_hash(k);
    CHECK_MSG(hash_mem_usage(hs[n - 1]) + 16 <= hash_mem_usage(hs[0]), "first %zu B, last %zu B",
              hash_mem_usage(hs[0]), hash_mem_usage(hs[n - 1]));
    unit_log("record hash: %zu B before interning, %zu B after", hash_mem_usage(hs[0]), hash_mem_usage(hs[n - 1]));
    for (size_t k = 0; k < n; k += 7) rec_verify(hs[k], k);
    /* overwrites (same and other sizes), deletes, copies and conversion keep it all */
    for (size_t k = 0; k < n; k += 3) {
        CHECK_EQ(hash_set(&hs[k], "email", 5, "e", 1, &default_limits), 0);
        CHECK_EQ(hash_set(&hs[k], "email", 5, "a-much-longer-email-value-than-before", 37, &default_limits), 0);
        CHECK_EQ(hash_del(&hs[k], "counter", 7), 1);
        CHECK_EQ(hash_del(&hs[k], "counter", 7), 0);
        hash *d = hash_dup(hs[k]);
        CHECK_EQ(hash_check(d), 0);
        CHECK_EQ(hash_len(d), REC_N);
        const char *got;
        size_t gl;
        CHECK(hash_get(d, "email", 5, &got, &gl) && gl == 37);
        CHECK_EQ(hash_convert(&d), HASH_OK);
        CHECK_EQ(hash_form(d), HASH_LARGE);
        CHECK(hash_get(d, "created_at", 10, &got, &gl));
        CHECK_EQ(hash_check(d), 0);
        hash_free(d);
        CHECK_EQ(hash_check(hs[k]), 0);
    }
    for (size_t k = 0; k < n; k++) hash_free(hs[k]);
    free(hs);
}

/* Interning and the slab allocator from several threads at once (each
 * thread its own hashes, as shards are): every hash reads back whole. */
typedef struct rec_job {
    size_t base, n;
    int bad;
} rec_job;

static void *rec_thread(void *arg) {
    rec_job *j = arg;
    hash **hs = calloc(j->n, sizeof(*hs));
    for (size_t k = 0; k < j->n; k++) hs[k] = rec_hash(j->base + k);
    for (size_t k = 0; k < j->n; k++) {
        const char *got;
        size_t gl;
        char v[32];
        size_t vl = (size_t)snprintf(v, sizeof(v), "value-%06zu-%zu", j->base + k, (size_t)1);
        if (hash_check(hs[k]) != 0 || !hash_get(hs[k], "email", 5, &got, &gl) || gl != vl || memcmp(got, v, vl))
            j->bad++;
        if (k % 2) {
            hash_free(hs[k]);
            hs[k] = NULL;
        }
    }
    for (size_t k = 0; k < j->n; k++) hash_free(hs[k]);
    free(hs);
    return NULL;
}

TEST(hash, interned_threads) {
    pthread_t t[4];
    rec_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (rec_job){(size_t)i * 100000, 2000, 0};
        CHECK_EQ(pthread_create(&t[i], NULL, rec_thread, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(jobs[i].bad, 0);
    }
}

/* Small blocks sit in 8-byte size classes: a block of up to 512 bytes
 * wastes at most 7; random growth, shrinking and frees keep every hash. */
TEST(hash, slab_blocks) {
    unit_rng r = {77};
    hash_limits lim = {512, 64};
    size_t n = 500;
    hash **hs = calloc(n, sizeof(*hs));
    size_t *cnt = calloc(n, sizeof(*cnt));
    char fb[32], vb[64];
    for (int round = 0; round < 40000; round++) {
        size_t k = unit_below(&r, n);
        if (!hs[k]) hs[k] = hash_new();
        size_t fl = (size_t)snprintf(fb, sizeof(fb), "k%zu", (size_t)unit_below(&r, 24));
        if (unit_below(&r, 3) == 0) {
            cnt[k] -= (size_t)hash_del(&hs[k], fb, fl);
        } else {
            size_t vl = unit_below(&r, 40);
            memset(vb, 'a' + (int)(vl % 26), vl);
            int rc = hash_set(&hs[k], fb, fl, vb, vl, &lim);
            CHECK(rc == 0 || rc == 1);
            cnt[k] += (size_t)rc;
        }
        if (unit_below(&r, 50) == 0) {
            CHECK_EQ(hash_check(hs[k]), 0);
            CHECK_EQ(hash_len(hs[k]), cnt[k]);
            hash_free(hs[k]);
            hs[k] = NULL;
            cnt[k] = 0;
        }
    }
    for (size_t k = 0; k < n; k++) {
        if (!hs[k]) continue;
        CHECK_EQ(hash_check(hs[k]), 0);
        CHECK_EQ(hash_len(hs[k]), cnt[k]);
        size_t used = 1 + 1; /* count and end bytes */
        hash_iter it;
        hash_iter_init(&it, hs[k]);
        const char *f, *v;
        size_t fl, vl;
        while (hash_iter_next(&it, &f, &fl, &v, &vl)) used += fl + vl;
        hash_iter_done(&it);
        CHECK(hash_mem_usage(hs[k]) >= 2);
        if (hash_mem_usage(hs[k]) <= 512) CHECK(hash_mem_usage(hs[k]) < used + 3 * cnt[k] + 8);
        hash_free(hs[k]);
    }
    free(hs);
    free(cnt);
}
