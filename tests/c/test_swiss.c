/* test_swiss.c -- ds/swiss against a reference model.
 *
 * Keys are integer ids in [0, U); the reference is one byte per id. Three
 * slot flavours share one harness: 4-byte slots holding the id (like an
 * arena reference), 8-byte slots holding a 64-bit key derived from the id
 * (like a pointer), and 4-byte slots whose hash collides on purpose (ids
 * mod 251), which stresses long probe chains. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef GOBLIN_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "util/hashfn.h"
#include "ds/swiss.h"
#include "unit.h"

enum { M4, M8, MCOL, M4P, M4Q };

typedef struct th {
    swiss s;
    int mode;
    uint32_t universe;
    uint8_t *present;
    size_t count;
} th;

static uint64_t key8(uint32_t id) { return ((uint64_t)id << 32) | (uint32_t)(id * 2654435761u); }

static uint32_t slot_id(const th *t, const void *slot) {
    if (t->mode == M8) {
        uint64_t k;
        memcpy(&k, slot, 8);
        uint32_t id = (uint32_t)(k >> 32);
        CHECK_EQ(k, key8(id));
        return id;
    }
    uint32_t id;
    memcpy(&id, slot, 4);
    return id;
}

static uint64_t id_hash(const th *t, uint32_t id) {
    switch (t->mode) {
    case M8:
        return hash_u64(key8(id));
    case MCOL:
        return hash_u64(id % 251);
    default:
        return hash_u64(id);
    }
}

static uint64_t th_hash_slot(void *ctx, const void *slot) {
    th *t = ctx;
    return id_hash(t, slot_id(t, slot));
}

static int th_match(void *ctx, const void *slot, const void *key) {
    return slot_id(ctx, slot) == *(const uint32_t *)key;
}

/* 4-byte slots, parts growing by a quarter (as the key index's). */
static const swiss_type type4 = {4, th_hash_slot, th_match, 0, NULL, 4};
static const swiss_type type8 = {8, th_hash_slot, th_match};
/* Paced as a collection's index (lform): a growing part steps on one
 * operation in 8, and doubles. */
static const swiss_type type4p = {4, th_hash_slot, th_match, 8};
/* Paced tighter than a quarter's growth leaves room for: the resize must
 * still end before the new table fills. */
static const swiss_type type4q = {4, th_hash_slot, th_match, 8, NULL, 4};

static void th_init(th *t, int mode, uint32_t universe) {
    memset(t, 0, sizeof(*t));
    t->mode = mode;
    t->universe = universe;
    t->present = calloc(universe, 1);
    CHECK(t->present);
    swiss_init(&t->s, mode == M8 ? &type8 : mode == M4P ? &type4p : mode == M4Q ? &type4q : &type4, t);
}

static void th_free(th *t) {
    swiss_free(&t->s);
    free(t->present);
}

static void *th_find(th *t, uint32_t id) { return swiss_find(&t->s, id_hash(t, id), &id); }

static void th_insert(th *t, uint32_t id) {
    void *slot = swiss_insert(&t->s, id_hash(t, id));
    CHECK(slot);
    if (t->mode == M8) {
        uint64_t k = key8(id);
        memcpy(slot, &k, 8);
    } else {
        memcpy(slot, &id, 4);
    }
    t->present[id] = 1;
    t->count++;
}

static void th_delete(th *t, uint32_t id) {
    void *slot = th_find(t, id);
    CHECK_MSG(slot, "id %u missing before delete", id);
    swiss_delete(&t->s, slot);
    t->present[id] = 0;
    t->count--;
}

/* Full comparison with the reference through the iterator. */
static void th_verify(th *t) {
    CHECK_EQ(swiss_size(&t->s), t->count);
    CHECK(swiss_capacity(&t->s) >= t->count);
    uint8_t *seen = calloc(t->universe, 1);
    CHECK(seen);
    swiss_iter it;
    swiss_iter_init(&it, &t->s);
    size_t n = 0;
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        uint32_t id = slot_id(t, slot);
        CHECK(id < t->universe);
        CHECK_MSG(t->present[id], "iterated id %u is not in the reference", id);
        CHECK_MSG(!seen[id], "id %u iterated twice", id);
        seen[id] = 1;
        n++;
    }
    swiss_iter_done(&it);
    CHECK_EQ(n, t->count);
    free(seen);
}

/* Random insert/delete/lookup with an insert bias that sweeps up and down,
 * so the table grows, shrinks and drops tombstones many times. */
static void random_ops(int mode, uint32_t universe, uint64_t ops, uint64_t seed) {
    th t;
    th_init(&t, mode, universe);
    unit_rng r = {seed};
    uint64_t period = ops / 5 + 1, verify_every = ops / 20 + 1;
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t phase = i % period;
        /* insert probability: 0.9 in the first half of a period, 0.1 in the
         * second, so the population swings between ~0 and ~universe. */
        unsigned p_ins = phase < period / 2 ? 90 : 10;
        uint32_t id = (uint32_t)unit_below(&r, universe);
        unsigned roll = (unsigned)unit_below(&r, 100);
        if (roll < p_ins) {
            if (t.present[id]) {
                void *slot = th_find(&t, id);
                CHECK_MSG(slot && slot_id(&t, slot) == id, "present id %u not found", id);
            } else {
                CHECK(th_find(&t, id) == NULL);
                th_insert(&t, id);
            }
        } else if (roll < 97) {
            if (t.present[id]) th_delete(&t, id);
            else CHECK_MSG(th_find(&t, id) == NULL, "absent id %u found", id);
        } else {
            void *slot = th_find(&t, id);
            CHECK_EQ(slot != NULL, t.present[id]);
        }
        if (i % verify_every == verify_every - 1) th_verify(&t);
    }
    th_verify(&t);
    /* Drain completely: an empty table must hold no index memory. */
    for (uint32_t id = 0; id < universe; id++)
        if (t.present[id]) th_delete(&t, id);
    CHECK_EQ(swiss_size(&t.s), 0);
    while (swiss_rehash_step(&t.s, 1024)) {
    }
    th_verify(&t);
    th_free(&t);
}

TEST(swiss, random_ops_slot4) {
    random_ops(M4, 300000, unit_scaled(3000000, 100000), 1);
    random_ops(M4, 1000, unit_scaled(500000, 50000), 2);
}

TEST(swiss, random_ops_slot8) { random_ops(M8, 200000, unit_scaled(2000000, 100000), 3); }

TEST(swiss, random_ops_colliding_hashes) { random_ops(MCOL, 20000, unit_scaled(300000, 30000), 4); }

TEST(swiss, random_ops_paced) { random_ops(M4P, 200000, unit_scaled(2000000, 100000), 5); }

TEST(swiss, small_tables) {
    /* Tiny universes keep the table at one or two groups, the edge of the
     * shrink rule and of the scan masks. */
    for (uint64_t seed = 10; seed < 40; seed++) random_ops(M4, 1 + (uint32_t)(seed % 40), 2000, seed);
}

TEST(swiss, empty_table) {
    th t;
    th_init(&t, M4, 16);
    uint32_t id = 3;
    CHECK(swiss_find(&t.s, id_hash(&t, id), &id) == NULL);
    CHECK_EQ(swiss_size(&t.s), 0);
    CHECK_EQ(swiss_mem_bytes(&t.s), 0);
    CHECK_EQ(swiss_scan(&t.s, 0, NULL, NULL), 0);
    CHECK(swiss_random(&t.s, NULL) == NULL); /* empty: never draws */
    CHECK_EQ(swiss_rehash_step(&t.s, 10), 0);
    swiss_iter it;
    swiss_iter_init(&it, &t.s);
    CHECK(swiss_iter_next(&it) == NULL);
    swiss_iter_done(&it);
    th_insert(&t, 5);
    th_delete(&t, 5);
    CHECK_EQ(swiss_mem_bytes(&t.s), 0);
    th_insert(&t, 6);
    swiss_clear(&t.s);
    CHECK_EQ(swiss_size(&t.s), 0);
    t.present[6] = 0;
    t.count = 0;
    th_insert(&t, 7);
    th_verify(&t);
    th_free(&t);
}

/* ---- SCAN ---- */

typedef struct scan_state {
    th *t;
    uint8_t *reported;
    uint64_t reports;
} scan_state;

static void scan_cb(void *arg, void *slot) {
    scan_state *st = arg;
    uint32_t id = slot_id(st->t, slot);
    CHECK(id < st->t->universe);
    CHECK_MSG(st->t->present[id], "scan reported absent id %u", id);
    st->reported[id]++;
    st->reports++;
}

enum { SCAN_STATIC, SCAN_GROW, SCAN_SHRINK, SCAN_MIXED };

/* Scan calls made while a resize was in flight, and resizes that started
 * during a scan: evidence that the tests cover what they claim. */
static uint64_t scan_calls_mid_resize, scan_resizes;

/* One full scan of a table of n0 elements with `mode` mutations between the
 * calls; every element present for the whole scan must be reported. */
static void scan_once(int slot_mode, uint32_t n0, int mode, uint64_t seed) {
    uint32_t universe = n0 * 4 + 64;
    th t;
    th_init(&t, slot_mode, universe);
    unit_rng r = {seed};
    for (uint32_t i = 0; i < n0; i++) {
        uint32_t id = (uint32_t)unit_below(&r, universe);
        if (!t.present[id]) th_insert(&t, id);
    }
    /* Sometimes start in the middle of a resize. */
    if (seed & 1)
        while (!swiss_is_rehashing(&t.s) && t.count < universe - 1) {
            uint32_t id = (uint32_t)unit_below(&r, universe);
            if (!t.present[id]) th_insert(&t, id);
        }
    uint8_t *stable = malloc(universe);
    scan_state st = {&t, calloc(universe, 1), 0};
    CHECK(stable && st.reported);
    memcpy(stable, t.present, universe);
    uint64_t cursor = 0, calls = 0;
    do {
        int resizing = swiss_is_rehashing(&t.s);
        size_t groups = swiss_capacity(&t.s);
        scan_calls_mid_resize += resizing;
        cursor = swiss_scan(&t.s, cursor, scan_cb, &st);
        calls++;
        CHECK_MSG(calls < 50u * universe + 1000, "scan does not terminate");
        if (mode == SCAN_STATIC) continue;
        int muts = (int)unit_below(&r, 8);
        for (int k = 0; k < muts; k++) {
            uint32_t id = (uint32_t)unit_below(&r, universe);
            unsigned roll = (unsigned)unit_below(&r, 100);
            unsigned p_ins = mode == SCAN_GROW ? 85 : mode == SCAN_SHRINK ? 3 : 50;
            if (roll < p_ins) {
                if (!t.present[id]) th_insert(&t, id);
            } else if (t.count) {
                /* delete a present id: the first at or after the draw */
                while (!t.present[id]) id = id + 1 == universe ? 0 : id + 1;
                th_delete(&t, id);
                stable[id] = 0;
            }
        }
        if (unit_below(&r, 4) == 0) swiss_rehash_step(&t.s, 1);
        if (swiss_is_rehashing(&t.s) != resizing || swiss_capacity(&t.s) != groups) scan_resizes++;
    } while (cursor != 0);
    for (uint32_t id = 0; id < universe; id++) {
        if (stable[id]) CHECK_MSG(st.reported[id] >= 1, "stable id %u never reported (n0 %u mode %d)", id, n0, mode);
        /* The cursor is a hash position: stable elements exactly once. */
        if (stable[id]) CHECK_MSG(st.reported[id] == 1, "stable id %u reported %u times (n0 %u mode %d)", id,
                                  st.reported[id], n0, mode);
        if (mode == SCAN_STATIC) CHECK_MSG(st.reported[id] == t.present[id], "static scan reported id %u %u times",
                                           id, st.reported[id]);
    }
    free(stable);
    free(st.reported);
    th_free(&t);
}

TEST(swiss, scan_static_exactly_once) {
    uint32_t sizes[] = {0, 1, 2, 15, 16, 100, 1000, 5000, 40000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (uint64_t seed = 0; seed < 4; seed++) scan_once(i & 1 ? M8 : M4, sizes[i], SCAN_STATIC, seed + i * 7);
}

static void scan_report(const char *what) {
    unit_log("%s: %llu scan calls mid-resize, %llu resizes started during scans", what,
             (unsigned long long)scan_calls_mid_resize, (unsigned long long)scan_resizes);
    CHECK(scan_calls_mid_resize > 100 && scan_resizes > 10);
    scan_calls_mid_resize = scan_resizes = 0;
}

TEST(swiss, scan_across_growth) {
    scan_calls_mid_resize = scan_resizes = 0;
    uint64_t rounds = unit_scaled(160, 20);
    for (uint64_t k = 0; k < rounds; k++) scan_once(k % 3 == 2 ? M8 : M4, (uint32_t)(k * 97 % 3000), SCAN_GROW, 100 + k);
    scan_once(M4, 20000, SCAN_GROW, 7);
    scan_once(MCOL, 3000, SCAN_GROW, 9);
    scan_report("growth");
}

TEST(swiss, scan_across_shrink) {
    scan_calls_mid_resize = scan_resizes = 0;
    uint64_t rounds = unit_scaled(160, 20);
    for (uint64_t k = 0; k < rounds; k++) scan_once(k % 3 == 2 ? M8 : M4, (uint32_t)(500 + k * 131 % 6000), SCAN_SHRINK, 300 + k);
    scan_once(M4, 30000, SCAN_SHRINK, 11);
    scan_once(MCOL, 4000, SCAN_SHRINK, 13);
    scan_report("shrink");
}

TEST(swiss, scan_mixed) {
    uint64_t rounds = unit_scaled(200, 20);
    for (uint64_t k = 0; k < rounds; k++) scan_once(k & 1 ? M8 : M4, (uint32_t)(k * 211 % 5000), SCAN_MIXED, 500 + k);
}

/* ---- random element ---- */

static unit_rng random_rng = {12345};
static uint64_t random_src(void) { return unit_rand(&random_rng); }

/* Chi-square of swiss_random over the present ids; fails when the statistic
 * is beyond 6 standard deviations of its distribution. */
static void random_uniform(th *t, uint64_t draws) {
    uint32_t *hits = calloc(t->universe, sizeof(uint32_t));
    CHECK(hits);
    for (uint64_t i = 0; i < draws; i++) {
        void *slot = swiss_random(&t->s, random_src);
        CHECK(slot);
        uint32_t id = slot_id(t, slot);
        CHECK(t->present[id]);
        hits[id]++;
    }
    double expect = (double)draws / (double)t->count, chi = 0;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t id = 0; id < t->universe; id++) {
        if (!t->present[id]) continue;
        double d = hits[id] - expect;
        chi += d * d / expect;
        if (hits[id] < lo) lo = hits[id];
        if (hits[id] > hi) hi = hits[id];
    }
    double df = (double)t->count - 1, limit = df + 6 * __builtin_sqrt(2 * df);
    unit_log("swiss_random: n=%zu draws=%llu expect=%.0f min=%u max=%u chi2=%.0f (limit %.0f)", t->count,
             (unsigned long long)draws, expect, lo, hi, chi, limit);
    CHECK_MSG(chi < limit, "chi2 %.1f over %.1f", chi, limit);
    free(hits);
}

TEST(swiss, random_uniformity) {
    uint64_t draws = unit_scaled(1000000, 400000);
    th t;
    th_init(&t, M4, 4096);
    for (uint32_t id = 0; id < 1000; id++) th_insert(&t, id * 3);
    random_uniform(&t, draws);
    /* Mid-resize: elements spread over two tables of different sizes. */
    uint32_t id = 3001;
    while (!swiss_is_rehashing(&t.s)) th_insert(&t, id++);
    CHECK(swiss_is_rehashing(&t.s));
    random_uniform(&t, draws);
    th_free(&t);
    /* Very sparse (deletes under an open iterator do not shrink): exercises
     * the walk that follows failed rejection draws. */
    th_init(&t, M8, 20000);
    for (uint32_t i = 0; i < 20000; i++) th_insert(&t, i);
    swiss_iter it;
    swiss_iter_init(&it, &t.s);
    for (uint32_t i = 0; i < 20000; i++)
        if (i % 128) th_delete(&t, i);
    random_uniform(&t, draws / 10);
    swiss_iter_done(&it);
    th_verify(&t);
    th_free(&t);
}

/* ---- iteration ---- */

static void iter_delete(int mode, uint32_t n, int every, int start_rehashing) {
    th t;
    th_init(&t, mode, n + 1024);
    for (uint32_t id = 0; id < n; id++) th_insert(&t, id);
    uint32_t id = n;
    if (start_rehashing)
        while (!swiss_is_rehashing(&t.s) && id < t.universe) th_insert(&t, id++);
    uint8_t *seen = calloc(t.universe, 1);
    CHECK(seen);
    swiss_iter it;
    swiss_iter_init(&it, &t.s);
    void *slot;
    size_t visited = 0, expect = t.count;
    while ((slot = swiss_iter_next(&it))) {
        uint32_t sid = slot_id(&t, slot);
        CHECK(t.present[sid]);
        CHECK_MSG(!seen[sid], "id %u visited twice", sid);
        seen[sid] = 1;
        visited++;
        if (every && sid % (uint32_t)every == 0) {
            swiss_delete(&t.s, slot);
            t.present[sid] = 0;
            t.count--;
        } else {
            /* Lookups are allowed during iteration and must not move slots. */
            CHECK(th_find(&t, sid) == slot);
        }
    }
    swiss_iter_done(&it);
    CHECK_EQ(visited, expect);
    th_verify(&t);
    for (uint32_t i = 0; i < t.universe; i++) CHECK_EQ(th_find(&t, i) != NULL, t.present[i]);
    free(seen);
    th_free(&t);
}

TEST(swiss, iterate_with_delete) {
    iter_delete(M4, 100000, 3, 0);
    iter_delete(M8, 100000, 2, 1);
    iter_delete(M4, 50000, 1, 0); /* delete everything */
    iter_delete(M8, 5000, 1, 1);
    iter_delete(M4, 1, 1, 0);
    iter_delete(MCOL, 5000, 5, 0);
}

/* ---- incremental resize ---- */

/* Thread CPU time: on a shared machine wall time mostly measures preemption;
 * CPU time includes the page faults a call causes. */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

TEST(swiss, resize_is_incremental) {
    uint32_t n = (uint32_t)unit_scaled(2000000, 200000);
    th t;
    th_init(&t, M4, n);
    uint64_t resizes = 0;
    double worst = 0, worst_start = 0;
    uint64_t worst_finish = 0;
    for (uint32_t id = 0; id < n; id++) {
        uint64_t moved = t.s.moved_groups;
        size_t cap = swiss_capacity(&t.s);
        double t0 = cpu_now();
        th_insert(&t, id);
        double dt = cpu_now() - t0;
        uint64_t d = t.s.moved_groups - moved;
        /* A new table (a resize, the split) makes the capacity grow; only
         * such an insert may finish the previous resize of its part. */
        if (swiss_capacity(&t.s) > cap) {
            resizes++;
            if (dt > worst_start) worst_start = dt;
            if (d > worst_finish) worst_finish = d;
            /* at most one part's worth: 1/16 of the groups, and rarely */
            CHECK_MSG(d <= 1 + swiss_capacity(&t.s) / SWISS_GROUP / 16, "a resize start moved %llu groups",
                      (unsigned long long)d);
        } else {
            CHECK_MSG(d <= 1, "insert moved %llu groups", (unsigned long long)d);
            if (dt > worst) worst = dt;
        }
    }
    unit_log("%u inserts, %llu resize starts (most groups moved by one: %llu); slowest resize-starting insert "
             "%.0f us CPU; slowest other insert %.0f us CPU",
             n, (unsigned long long)resizes, (unsigned long long)worst_finish, worst_start * 1e6, worst * 1e6);
    CHECK(resizes >= 10);
    CHECK(t.s.parts != NULL);
    /* Deleting down to 1/8 load shrinks, also incrementally. */
    uint64_t shrinks = 0;
    for (uint32_t id = 0; id < n; id++) {
        uint64_t moved = t.s.moved_groups;
        size_t cap = swiss_capacity(&t.s);
        th_delete(&t, id);
        if (swiss_capacity(&t.s) > cap) shrinks++;
        /* th_delete is a find (one step) and a delete (one step) */
        CHECK(t.s.moved_groups - moved <= 2);
    }
    CHECK(shrinks >= 3);
    CHECK_EQ(swiss_size(&t.s), 0);
    th_free(&t);
}

/* A paced type (grow_pace 8, the large forms') spreads a growing part's
 * resize over eight times as many operations, and still finishes it before
 * the part next fills: the insert that starts a resize finds the previous
 * one done. In batches of 1000 find+insert pairs (a 1000-field HSET) no
 * batch moves more than 2000 / 8 groups, besides the one-off split. */
static void paced_growth(int with_finds) {
    uint32_t n = (uint32_t)unit_scaled(3000000, 300000);
    th t;
    th_init(&t, M4P, n);
    uint64_t resizes = 0, batch_worst = 0, batch_moved = 0, ops = 0, paced_moved = 0;
    for (uint32_t id = 0; id < n; id++) {
        uint64_t moved = t.s.moved_groups;
        size_t cap = swiss_capacity(&t.s);
        int split = t.s.parts == NULL;
        if (with_finds) {
            CHECK(th_find(&t, id) == NULL);
            ops++;
        }
        uint64_t before_insert = t.s.moved_groups;
        th_insert(&t, id);
        ops++;
        uint64_t d = t.s.moved_groups - moved;
        if (swiss_capacity(&t.s) > cap) {
            resizes++;
            /* the previous resize of the part is finished: at most the
             * insert's own paced step (the split moves its elements without
             * counting groups) */
            CHECK_MSG(t.s.moved_groups - before_insert <= 1, "a resize start at %u elements moved %llu groups", id,
                      (unsigned long long)(t.s.moved_groups - before_insert));
            if (!split) batch_moved += d;
        } else {
            CHECK_MSG(d <= 2, "find+insert moved %llu groups", (unsigned long long)d);
            paced_moved += d;
            batch_moved += d;
        }
        if (id % 1000 == 999) {
            if (batch_moved > batch_worst) batch_worst = batch_moved;
            batch_moved = 0;
        }
    }
    unit_log("%s: %u inserts, %llu resize starts, %llu groups moved by %llu operations; most in a batch of 1000: "
             "%llu",
             with_finds ? "find+insert" : "insert only", n, (unsigned long long)resizes,
             (unsigned long long)paced_moved, (unsigned long long)ops, (unsigned long long)batch_worst);
    CHECK(resizes >= 10);
    CHECK(paced_moved <= ops / 8 + 1);
    CHECK(batch_worst <= (uint64_t)(with_finds ? 2000 : 1000) / 8 + 1);
    for (uint32_t id = 0; id < n; id += 3) CHECK(th_find(&t, id) != NULL);
    th_verify(&t);
    th_free(&t);
}

/* A pace of 8 with parts growing by a quarter would let the new table fill
 * before the move ends (room for 13/4 inserts per group to move): once the
 * room runs short every operation steps, so still no insert moves more than
 * one group (none finishes a resize in a burst), every resize starts with
 * the previous one done, and everything stays reachable. */
TEST(swiss, quarter_growth_paced_past_its_room) {
    uint32_t n = (uint32_t)unit_scaled(2000000, 300000);
    th t;
    th_init(&t, M4Q, n);
    uint64_t resizes = 0, worst = 0;
    for (uint32_t id = 0; id < n; id++) {
        uint64_t moved = t.s.moved_groups;
        size_t cap = swiss_capacity(&t.s);
        th_insert(&t, id);
        uint64_t d = t.s.moved_groups - moved;
        if (swiss_capacity(&t.s) > cap) resizes++;
        if (d > worst) worst = d;
    }
    unit_log("%u inserts, %llu resize starts, most groups moved by one insert: %llu", n,
             (unsigned long long)resizes, (unsigned long long)worst);
    CHECK(resizes >= 40);
    CHECK(worst <= 1);
    for (uint32_t id = 0; id < n; id += 3) CHECK(th_find(&t, id) != NULL);
    th_verify(&t);
    th_free(&t);
}

TEST(swiss, paced_growth_with_finds) { paced_growth(1); }
TEST(swiss, paced_growth_inserts_only) { paced_growth(0); }

/* Split into parts and merge back, with scans and lookups in between;
 * with a split shift, at 1/2^shift of the default point (3584 elements,
 * the single part's 256 groups at 7/8, whether the split parts then
 * double or grow by a quarter). The split comes from the insert that finds
 * the single part full, so it starts with exactly one more element than
 * that part's maximum load; the merge back comes below a third of it. */
static void split_and_merge(unsigned shift, int mode) {
    th t;
    th_init(&t, mode, 100000);
    if (shift) swiss_set_split_shift(&t.s, shift);
    for (int round = 0; round < 3; round++) {
        uint32_t id = 0;
        size_t cap_before = 0;
        while (!t.s.parts) {
            cap_before = swiss_capacity(&t.s);
            if (!t.present[id]) th_insert(&t, id);
            id++;
        }
        CHECK_EQ(cap_before, (size_t)4096 >> shift);
        CHECK_EQ(t.count, (uint64_t)(4096 >> shift) / 16 * 15 + 1); /* 15/16 full, then one more */
        th_verify(&t);
        for (uint32_t i = 0; i < t.universe; i++) CHECK_EQ(th_find(&t, i) != NULL, t.present[i]);
        for (uint32_t i = 0; i < 20000; i++)
            if (!t.present[i]) th_insert(&t, i);
        th_verify(&t);
        for (uint32_t i = 0; i < t.universe && t.s.parts; i++)
            if (t.present[i]) th_delete(&t, i);
        while (swiss_rehash_step(&t.s, 1024)) {
        }
        th_verify(&t);
        for (uint32_t i = 0; i < t.universe; i++) CHECK_EQ(th_find(&t, i) != NULL, t.present[i]);
        CHECK(!t.s.parts || t.count == 0);
    }
    th_free(&t);
}

TEST(swiss, split_and_merge) {
    split_and_merge(0, M4);
    split_and_merge(0, M8);
}
TEST(swiss, split_and_merge_earlier) {
    split_and_merge(1, M4);
    split_and_merge(3, M4);
    split_and_merge(2, M8);
}

TEST(swiss, rehash_step_and_lookups_mid_resize) {
    th t;
    th_init(&t, M8, 300000);
    uint32_t id = 0;
    for (int round = 0; round < 6; round++) {
        while (!swiss_is_rehashing(&t.s)) th_insert(&t, id++);
        /* Every element is reachable while split over two tables. */
        for (uint32_t i = 0; i < id; i++) CHECK(th_find(&t, i) != NULL);
        while (swiss_rehash_step(&t.s, 3)) {
        }
        CHECK(!swiss_is_rehashing(&t.s));
        th_verify(&t);
    }
    th_free(&t);
}

/* ---- memory ---- */

TEST(swiss, index_bytes_per_entry) {
    /* Steady state = not mid-resize. Once split in parts (past ~3.3K
     * elements) parts grow by a quarter and their staggered sizes keep the
     * whole index near the mean load of such a table: about 5.9 B/entry
     * with 4-byte slots at a maximum load of 15/16 (6.9 at 7/8, 8.9 when
     * parts doubled), never more than 6.5; mid-resize at most a part more. */
    uint32_t n = (uint32_t)unit_scaled(2000000, 1000000);
    th t;
    th_init(&t, M4, n);
    double lo = 1e9, hi = 0, sum = 0, peak = 0;
    uint64_t samples = 0;
    double at_1m = 0;
    for (uint32_t id = 0; id < n; id++) {
        th_insert(&t, id);
        if (id + 1 == 1000000) {
            while (swiss_rehash_step(&t.s, 1024)) {
            }
            at_1m = (double)swiss_mem_bytes(&t.s) / 1e6;
        }
        if ((id + 1) % 1000 == 0 && id + 1 >= 10000) {
            double b = (double)swiss_mem_bytes(&t.s) / (double)swiss_size(&t.s);
            if (b > peak) peak = b;
            if (swiss_is_rehashing(&t.s)) continue;
            if (b < lo) lo = b;
            if (b > hi) hi = b;
            sum += b;
            samples++;
        }
    }
    unit_log("index bytes/entry, 4-byte slots, 10k..%u entries: min %.2f avg %.2f max %.2f (mid-resize peak "
             "%.2f); at 1M: %.2f",
             n, lo, sum / (double)samples, hi, peak, at_1m);
    CHECK(hi <= 6.5);
    CHECK(sum / (double)samples <= 6.2);
    CHECK(peak <= 8.5);
    CHECK(lo >= 5.5);
    th_free(&t);
}

TEST(swiss, big_tables_are_mapped_and_counted) {
    /* Parts of 1 MiB or more are mapped outside the allocator (so a resize
     * starts without zeroing anything) and counted by swiss_mapped_bytes();
     * the count follows every table allocated and freed, back to where it
     * started once the index is gone, and the contents are unaffected. */
    size_t before = swiss_mapped_bytes();
    uint32_t n = 3000000; /* parts of ~190K elements at 5 B/slot: past 1 MiB each */
    th t;
    th_init(&t, M4, n);
    for (uint32_t id = 0; id < n; id++) th_insert(&t, id);
    while (swiss_rehash_step(&t.s, 1024)) {
    }
    size_t mapped = swiss_mapped_bytes() - before;
#ifdef __SANITIZE_ADDRESS__
    /* The ASan build keeps big tables on the heap (see swiss.c). */
    unit_log("ASan build: big tables stay on the heap, so none may be mapped");
    CHECK_EQ(mapped, 0);
#else
    CHECK_MSG(mapped > 0, "no table was mapped for %u elements", n);
    CHECK(mapped <= swiss_mem_bytes(&t.s) + SWISS_NPARTS * 4096);
#endif
    for (uint32_t id = 0; id < n; id += 7) CHECK(th_find(&t, id) != NULL);
    for (uint32_t id = 0; id < n; id += 2) th_delete(&t, id); /* shrinks release mapped parts */
    while (swiss_rehash_step(&t.s, 1024)) {
    }
    th_verify(&t);
    th_free(&t);
    CHECK_EQ(swiss_mapped_bytes(), before);
}

/* swiss_prefetch_match hands the type's prefetch_slot every slot of the
 * home group whose tag matches: an element sitting in its home group is
 * among them, in both tables while a part resizes. */
static uint32_t pf_seen[64];
static int pf_nseen;

static void pf_record(void *ctx, const void *slot) {
    (void)ctx;
    if (pf_nseen < 64) memcpy(&pf_seen[pf_nseen++], slot, 4);
}

static uint64_t pf_hash(void *ctx, const void *slot) {
    (void)ctx;
    uint32_t id;
    memcpy(&id, slot, 4);
    return hash_u64(id);
}

static int pf_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    return memcmp(slot, key, 4) == 0;
}

TEST(swiss, prefetch_reaches_the_element) {
    static const swiss_type tp = {4, pf_hash, pf_match, 8, pf_record};
    swiss s;
    swiss_init(&s, &tp, NULL);
    uint32_t n = 50000, reached = 0;
    for (uint32_t id = 0; id < n; id++) {
        void *slot = swiss_insert(&s, hash_u64(id));
        CHECK(slot != NULL);
        memcpy(slot, &id, 4);
        /* Every few inserts (some mid-resize), the elements so far. */
        if (id % 4999 != 0) continue;
        for (uint32_t j = 0; j <= id; j++) {
            pf_nseen = 0;
            swiss_prefetch_group(&s, hash_u64(j));
            swiss_prefetch_match(&s, hash_u64(j));
            for (int i = 0; i < pf_nseen; i++) reached += pf_seen[i] == j;
        }
    }
    /* Nearly every element is in its home group at the load the index
     * keeps (the others are one group on: found by the lookup itself). */
    uint32_t looked = 0;
    for (uint32_t id = 0; id < n; id += 4999) looked += id + 1;
    CHECK_MSG(reached >= looked * 9 / 10, "reached %u of %u", reached, looked);
    swiss_free(&s);
}

/* The tables a resize frees go back to the allocator, not to this
 * thread's cache, where they would stay resident and counted as allocated
 * until an allocation of their size came: after a single part grows through
 * every power of two up to 256 groups, the allocator holds the last table
 * and next to nothing else. */
TEST(swiss, freed_tables_leave_the_thread_cache) {
    static const swiss_type tp = {4, pf_hash, pf_match, 0, NULL};
#ifndef GOBLIN_NO_JEMALLOC
    uint64_t epoch = 1;
    size_t esz = sizeof(epoch), before, after, len = sizeof(size_t);
    CHECK(mallctl("epoch", &epoch, &esz, &epoch, esz) == 0);
    CHECK(mallctl("stats.allocated", &before, &len, NULL, 0) == 0);
#endif
    swiss s;
    swiss_init(&s, &tp, NULL);
    for (uint32_t id = 0; id < 3000; id++) {
        void *slot = swiss_insert(&s, hash_u64(id));
        CHECK(slot != NULL);
        memcpy(slot, &id, 4);
    }
    while (swiss_rehash_step(&s, 64)) {
    }
    CHECK(s.parts == NULL);
#ifndef GOBLIN_NO_JEMALLOC
    CHECK(mallctl("epoch", &epoch, &esz, &epoch, esz) == 0);
    CHECK(mallctl("stats.allocated", &after, &len, NULL, 0) == 0);
    CHECK_MSG(after - before <= swiss_mem_bytes(&s) + 4096, "allocated +%zu for a table of %zu", after - before,
              swiss_mem_bytes(&s));
#else
    unit_log("without jemalloc: no allocator statistics to read; only the growth is checked");
#endif
    for (uint32_t id = 0; id < 3000; id++) CHECK(swiss_find(&s, hash_u64(id), &id) != NULL);
    swiss_free(&s);
}
