/* test_arena.c -- ds/arena and mem/hugetlb.
 *
 * The randomized test keeps a reference model of every live entry (its
 * reference, length and the seed of its bytes) and an index from reference
 * to entry built on ds/swiss, re-pointed by the compaction callback exactly
 * as a collection's member index would be. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ds/arena.h"
#include "util/hashfn.h"
#include "ds/swiss.h"
#include "mem/hugetlb.h"
#include "unit.h"

/* ---- content ---- */

static void fill(unsigned char *p, size_t len, uint64_t seed) {
    unit_rng r = {seed};
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        uint64_t v = unit_rand(&r);
        memcpy(p + k, &v, 8);
    }
    if (k < len) {
        uint64_t v = unit_rand(&r);
        memcpy(p + k, &v, len - k);
    }
}

static int same(const unsigned char *p, size_t len, uint64_t seed) {
    unit_rng r = {seed};
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        uint64_t v = unit_rand(&r);
        if (memcmp(p + k, &v, 8)) return 0;
    }
    if (k < len) {
        uint64_t v = unit_rand(&r);
        if (memcmp(p + k, &v, len - k)) return 0;
    }
    return 1;
}

/* ---- model ---- */

typedef struct item {
    arena_ref ref;
    uint32_t len;
    uint32_t pos;  /* index in model.live */
    uint64_t seed;
} item;

typedef struct model {
    arena a;
    item *items;
    uint32_t nitems;
    uint32_t *live;   /* ids of live items */
    uint32_t nlive;
    uint32_t *free_ids;
    uint32_t nfree;
    swiss index;      /* ref -> item id */
    size_t live_bytes;
    uint64_t moves;
    uint64_t seq;
} model;

static uint64_t idx_hash_slot(void *ctx, const void *slot) {
    model *m = ctx;
    uint32_t id;
    memcpy(&id, slot, 4);
    return hash_u64(m->items[id].ref);
}

static int idx_match(void *ctx, const void *slot, const void *key) {
    model *m = ctx;
    uint32_t id;
    memcpy(&id, slot, 4);
    return m->items[id].ref == *(const arena_ref *)key;
}

static const swiss_type idx_type = {4, idx_hash_slot, idx_match};

static void model_init(model *m, const arena_config *cfg, uint32_t cap) {
    memset(m, 0, sizeof(*m));
    CHECK_EQ(arena_init(&m->a, cfg), ARENA_OK);
    m->items = calloc(cap, sizeof(item));
    m->live = calloc(cap, sizeof(uint32_t));
    m->free_ids = calloc(cap, sizeof(uint32_t));
    CHECK(m->items && m->live && m->free_ids);
    for (uint32_t i = 0; i < cap; i++) m->free_ids[m->nfree++] = cap - 1 - i;
    m->nitems = cap;
    swiss_init(&m->index, &idx_type, m);
}

static void model_free(model *m) {
    arena_destroy(&m->a);
    swiss_free(&m->index);
    free(m->items);
    free(m->live);
    free(m->free_ids);
}

static void index_put(model *m, uint32_t id) {
    arena_ref r = m->items[id].ref;
    CHECK_MSG(swiss_find(&m->index, hash_u64(r), &r) == NULL, "ref %#x handed out twice", r);
    void *slot = swiss_insert(&m->index, hash_u64(r));
    CHECK(slot);
    memcpy(slot, &id, 4);
}

static uint32_t index_take(model *m, arena_ref r) {
    void *slot = swiss_find(&m->index, hash_u64(r), &r);
    CHECK_MSG(slot, "ref %#x not in the index", r);
    uint32_t id;
    memcpy(&id, slot, 4);
    swiss_delete(&m->index, slot);
    return id;
}

/* Allocate a new entry of len bytes; returns the id or UINT32_MAX when the
 * arena refused (the only acceptable refusals are ENOMEM from injected faults
 * and EFULL). */
static uint32_t model_add(model *m, size_t len, int *rc_out) {
    CHECK(m->nfree > 0);
    uint32_t id = m->free_ids[m->nfree - 1];
    arena_ref ref;
    void *p;
    int rc = arena_alloc(&m->a, len, &ref, &p);
    if (rc_out) *rc_out = rc;
    if (rc != ARENA_OK) return UINT32_MAX;
    CHECK(ref != ARENA_REF_NONE);
    m->nfree--;
    item *it = &m->items[id];
    it->ref = ref;
    it->len = (uint32_t)len;
    it->seed = ++m->seq * 0x2545f4914f6cdd1dULL;
    fill(p, len, it->seed);
    it->pos = m->nlive;
    m->live[m->nlive++] = id;
    m->live_bytes += arena_entry_size(&m->a, len);
    index_put(m, id);
    return id;
}

static void model_verify_item(model *m, uint32_t id) {
    item *it = &m->items[id];
    size_t len;
    unsigned char *p = arena_get(&m->a, it->ref, &len);
    CHECK_EQ(len, it->len);
    CHECK_MSG(same(p, len, it->seed), "bytes of item %u (ref %#x, len %zu) changed", id, it->ref, len);
}

static void model_del(model *m, uint32_t id) {
    item *it = &m->items[id];
    CHECK_EQ(index_take(m, it->ref), id);
    arena_free(&m->a, it->ref);
    m->live_bytes -= arena_entry_size(&m->a, it->len);
    uint32_t last = m->live[--m->nlive];
    m->live[it->pos] = last;
    m->items[last].pos = it->pos;
    m->free_ids[m->nfree++] = id;
}

static void model_on_move(void *ctx, arena_ref from, arena_ref to, const void *data, size_t len) {
    model *m = ctx;
    /* the old copy is still readable during the callback */
    size_t olen;
    const void *old = arena_get(&m->a, from, &olen);
    CHECK(old != data && olen == len);
    uint32_t id = index_take(m, from);
    item *it = &m->items[id];
    CHECK_EQ(len, it->len);
    CHECK(same(data, len, it->seed));
    CHECK(same(old, len, it->seed));
    it->ref = to;
    index_put(m, id);
    m->moves++;
}

static void model_verify(model *m) {
    int rc = arena_check(&m->a);
    CHECK_MSG(rc == 0, "arena_check failed at arena.c line %d", -rc);
    CHECK_EQ(m->a.entries, m->nlive);
    CHECK_EQ(m->a.live_bytes, m->live_bytes);
    CHECK_EQ(swiss_size(&m->index), m->nlive);
    for (uint32_t i = 0; i < m->nlive; i++) model_verify_item(m, m->live[i]);
}

static size_t pick_len(unit_rng *r, size_t chunk) {
    unsigned roll = (unsigned)unit_below(r, 1000);
    if (roll < 700) return (size_t)unit_below(r, 41);
    if (roll < 900) return 40 + (size_t)unit_below(r, 360);
    if (roll < 995) return 400 + (size_t)unit_below(r, 4600);
    /* rare: around and beyond the chunk (dedicated blocks) */
    size_t cap = chunk > (256u << 10) ? (256u << 10) : chunk;
    if (unit_below(r, 8) == 0) cap = chunk + chunk / 2;
    return (size_t)unit_below(r, cap + 1);
}

typedef struct rcfg {
    const char *name;
    arena_config cfg;
    uint64_t ops;
    uint32_t population;
    int faults;
} rcfg;

static void hugetlb_reset(void);

static void random_run(const rcfg *c, uint64_t seed) {
    model m;
    if (c->faults) unit_cleanup(hugetlb_reset);
    model_init(&m, &c->cfg, c->population + 16);
    unit_rng r = {seed};
    size_t chunk = (size_t)1 << m.a.chunk_shift;
    uint64_t period = c->ops / 4 + 1, verify_every = c->ops / 16 + 1;
    uint64_t steps = 0, refused = 0;
    uint32_t peak_live = 0, peak_blocks = 0;
    double peak_dead = 0;
    for (uint64_t i = 0; i < c->ops; i++) {
        unsigned p_add = (i % period) < period / 2 ? 60 : 25;
        unsigned roll = (unsigned)unit_below(&r, 100);
        if (c->faults && unit_below(&r, 500) == 0) arena_set_fault(1 + (int)unit_below(&r, 3));
        if (roll < p_add) {
            if (m.nfree > 0) {
                int rc;
                if (model_add(&m, pick_len(&r, chunk), &rc) == UINT32_MAX) {
                    CHECK_MSG(c->faults && rc == ARENA_ENOMEM, "alloc refused: %d", rc);
                    refused++;
                }
            }
        } else if (roll < 80) {
            if (m.nlive) model_del(&m, m.live[unit_below(&r, m.nlive)]);
        } else if (roll < 90) {
            /* overwrite: new bytes first, then the old entry goes (HSET) */
            if (m.nlive && m.nfree) {
                uint32_t old = m.live[unit_below(&r, m.nlive)];
                int rc;
                if (model_add(&m, pick_len(&r, chunk), &rc) != UINT32_MAX) model_del(&m, old);
                else refused++;
            }
        } else if (roll < 97) {
            if (m.nlive) model_verify_item(&m, m.live[unit_below(&r, m.nlive)]);
        } else {
            int rc = arena_compact_step(&m.a, (size_t)unit_below(&r, 64 << 10), model_on_move, &m);
            CHECK_MSG(rc >= 0 || (c->faults && rc == ARENA_ENOMEM), "compact step: %d", rc);
            steps++;
        }
        if (i % verify_every == verify_every - 1) model_verify(&m);
        if (m.nlive > peak_live) peak_live = m.nlive;
        if (m.a.blocks > peak_blocks) peak_blocks = m.a.blocks;
        if (m.a.bytes_alloc > (1u << 20) && (double)m.a.dead_bytes / (double)m.a.bytes_alloc > peak_dead)
            peak_dead = (double)m.a.dead_bytes / (double)m.a.bytes_alloc;
    }
    arena_set_fault(0);
    model_verify(&m);
    /* Compact to the end: afterwards no block but the active one is past
     * the threshold, and nothing was lost. */
    int rc;
    while ((rc = arena_compact_step(&m.a, 1 << 20, model_on_move, &m)) == 1) {
    }
    CHECK_EQ(rc, 0);
    CHECK(!arena_compact_needed(&m.a));
    model_verify(&m);
    arena_stats st;
    arena_stats_get(&m.a, &st);
    unit_log("%s: %llu ops, peak %u live / %u blocks / %.0f%% dead; now %u live, %llu blocks, %.1f MiB, %.1f%% dead; "
             "%llu compactions, %llu moves, %llu steps, %llu refused",
             c->name, (unsigned long long)c->ops, peak_live, peak_blocks, 100 * peak_dead, m.nlive,
             (unsigned long long)st.blocks, st.bytes_alloc / 1048576.0,
             st.bytes_alloc ? 100.0 * (double)st.dead_bytes / (double)st.bytes_alloc : 0.0,
             (unsigned long long)st.compactions, (unsigned long long)m.moves, (unsigned long long)steps,
             (unsigned long long)refused);
    CHECK_EQ(st.moved, m.moves);
    while (m.nlive) model_del(&m, m.live[m.nlive - 1]);
    CHECK_EQ(m.a.blocks, 0);
    CHECK_EQ(arena_mem_bytes(&m.a), 0);
    CHECK_EQ(arena_check(&m.a), 0);
    model_free(&m);
}

TEST(arena, random_ops_default_chunk) {
    rcfg c = {"chunk 2M", {0}, unit_scaled(1500000, 200000), 40000, 0};
    random_run(&c, 1);
}

TEST(arena, random_ops_small_chunk) {
    /* 4 KiB chunks: thousands of blocks, dedicated blocks for >4 KiB. */
    rcfg c = {"chunk 4K", {.chunk = 4096, .first_block = 64}, unit_scaled(1500000, 200000), 20000, 0};
    random_run(&c, 2);
    rcfg c2 = {"chunk 64K shift 3", {.chunk = 65536, .first_block = 128, .ref_shift = 3, .compact_dead_pct = 25},
               unit_scaled(800000, 100000), 20000, 0};
    random_run(&c2, 3);
}

TEST(arena, random_ops_with_alloc_failures) {
    rcfg c = {"chunk 8K faults", {.chunk = 8192, .first_block = 64}, unit_scaled(600000, 100000), 10000, 1};
    random_run(&c, 4);
}

TEST(arena, random_ops_hugetlb_fallback) {
    /* With --arena-hugetlb on, whatever the pool holds, nothing breaks. */
    unit_cleanup(hugetlb_reset);
    hugetlb_set_enabled(1);
    rcfg c = {"chunk 2M hugetlb on", {0}, unit_scaled(300000, 50000), 20000, 0};
    random_run(&c, 5);
    hugetlb_set_enabled(0);
}

/* ---- targeted tests ---- */

TEST(arena, prefix_lengths) {
    arena a;
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 1 << 16}), ARENA_OK);
    size_t lens[] = {0, 1, 2, 62, 63, 64, 65, 127, 128, 8190, 8191, 8192, 8193, 65000, 65530, 65534, 65535, 65536,
                     1 << 20, (1 << 20) + 7};
    size_t n = sizeof(lens) / sizeof(lens[0]);
    arena_ref refs[32];
    for (size_t i = 0; i < n; i++) {
        void *p;
        CHECK_EQ(arena_alloc(&a, lens[i], &refs[i], &p), ARENA_OK);
        fill(p, lens[i], i + 1);
    }
    for (size_t i = 0; i < n; i++) {
        size_t len;
        void *p = arena_get(&a, refs[i], &len);
        CHECK_EQ(len, lens[i]);
        CHECK(same(p, len, i + 1));
    }
    CHECK_EQ(arena_entry_size(&a, 0), 1);
    CHECK_EQ(arena_entry_size(&a, 63), 64);
    CHECK_EQ(arena_entry_size(&a, 64), 66);
    CHECK_EQ(arena_entry_size(&a, 8191), 8193);
    CHECK_EQ(arena_entry_size(&a, 8192), 8195);
    CHECK_EQ(arena_check(&a), 0);
    arena_ref r;
    CHECK_EQ(arena_put(&a, "hello", 5, &r), ARENA_OK);
    size_t len;
    CHECK(memcmp(arena_get(&a, r, &len), "hello", 5) == 0 && len == 5);
    void *p;
    CHECK_EQ(arena_alloc(&a, ARENA_MAX_ENTRY + 1, &r, &p), ARENA_EINVAL);
    CHECK_EQ(arena_check(&a), 0);
    arena_destroy(&a);
    CHECK_EQ(arena_mem_bytes(&a), 0);
}

/* ---- pair arenas ---- */

typedef struct pair_model {
    arena a;
    arena_ref ref[3000];
    uint32_t fl[3000], vl[3000];
    uint64_t seed[3000];
    int live[3000];
    uint64_t moves;
} pair_model;

static void pair_fill(pair_model *m, int i) {
    void *f, *v;
    CHECK_EQ(arena_pair_alloc(&m->a, m->fl[i], m->vl[i], &m->ref[i], &f, &v), ARENA_OK);
    fill(f, m->fl[i], m->seed[i]);
    fill(v, m->vl[i], ~m->seed[i]);
    m->live[i] = 1;
}

static void pair_verify(pair_model *m, int n) {
    int rc = arena_check(&m->a);
    CHECK_MSG(rc == 0, "arena_check failed at arena.c line %d", -rc);
    uint64_t live = 0;
    for (int i = 0; i < n; i++) {
        if (!m->live[i]) continue;
        live++;
        const void *f, *v;
        size_t fl, vl;
        arena_pair_get(&m->a, m->ref[i], &f, &fl, &v, &vl);
        CHECK(fl == m->fl[i] && vl == m->vl[i]);
        CHECK_MSG(same(f, fl, m->seed[i]) && same(v, vl, ~m->seed[i]), "pair %d changed", i);
    }
    CHECK_EQ(m->a.entries, live);
}

static void pair_moved(void *ctx, arena_ref from, arena_ref to, const void *data, size_t len) {
    pair_model *m = ctx;
    for (int i = 0; i < 3000; i++)
        if (m->live[i] && m->ref[i] == from) {
            size_t fl, vl, hs = arena_pair_header(data, &fl, &vl);
            CHECK(fl == m->fl[i] && vl == m->vl[i] && hs + fl + vl == len);
            m->ref[i] = to;
            m->moves++;
            return;
        }
    CHECK_MSG(0, "moved ref %#x is not live", from);
}

TEST(arena, pair_headers) {
    static pair_model m;
    memset(&m, 0, sizeof(m));
    CHECK_EQ(arena_init(&m.a, &(arena_config){.chunk = 4096, .first_block = 64, .pairs = 1}), ARENA_OK);
    /* One header byte up to a 14-byte field with a 16-byte value (not both
     * empty); past either, a LONG byte and two varints. */
    struct {
        uint32_t fl, vl, size;
    } pr[] = {{0, 0, 3},    {1, 0, 2},      {0, 1, 2},     {5, 7, 13},       {14, 16, 31},        {15, 16, 34},
              {14, 17, 34}, {0, 16, 17},    {14, 0, 15},   {127, 3, 133},    {128, 3, 135},       {20000, 1, 20006},
              {3, 100000, 100008}};
    int n = (int)(sizeof(pr) / sizeof(pr[0]));
    for (int i = 0; i < n; i++) {
        m.fl[i] = pr[i].fl;
        m.vl[i] = pr[i].vl;
        m.seed[i] = 100 + (uint64_t)i;
        pair_fill(&m, i);
        size_t len;
        unsigned char *e = arena_get(&m.a, m.ref[i], &len);
        CHECK_MSG(len == pr[i].size, "pair (%u, %u) takes %zu bytes", pr[i].fl, pr[i].vl, len);
        CHECK_EQ(arena_entry_size(&m.a, len), len);
        CHECK((e[0] == ARENA_PAIR_LONG) == (pr[i].size > 1 + pr[i].fl + pr[i].vl));
    }
    pair_verify(&m, n);
    CHECK_EQ(m.a.live_bytes, 3 + 2 + 2 + 13 + 31 + 34 + 34 + 17 + 15 + 133 + 135 + 20006 + 100008);
    for (int i = 0; i < n; i += 2) {
        arena_free(&m.a, m.ref[i]);
        m.live[i] = 0;
    }
    pair_verify(&m, n);
    for (int i = 0; i < n; i++)
        if (m.live[i]) arena_free(&m.a, m.ref[i]);
    CHECK_EQ(m.a.blocks, 0);
    arena_destroy(&m.a);

    /* Random pairs, frees (dead entries of every size, the two-byte ones
     * included) and compaction that walks over them. */
    memset(&m, 0, sizeof(m));
    CHECK_EQ(arena_init(&m.a, &(arena_config){.chunk = 4096, .first_block = 64, .pairs = 1}), ARENA_OK);
    unit_rng r = {7};
    for (int i = 0; i < 3000; i++) {
        unsigned roll = (unsigned)unit_below(&r, 10);
        m.fl[i] = (uint32_t)(roll < 7 ? unit_below(&r, 16) : unit_below(&r, 300));
        m.vl[i] = (uint32_t)(roll < 5 ? unit_below(&r, 18) : unit_below(&r, 200));
        if (m.fl[i] + m.vl[i] == 0 && (i & 1)) m.vl[i] = 1;
        m.seed[i] = 1000 + (uint64_t)i;
        pair_fill(&m, i);
    }
    for (int i = 0; i < 3000; i++)
        if (unit_below(&r, 3)) {
            arena_free(&m.a, m.ref[i]);
            m.live[i] = 0;
        }
    pair_verify(&m, 3000);
    CHECK(m.a.dead_bytes > 0);
    int rc;
    while ((rc = arena_compact_step(&m.a, 512, pair_moved, &m)) == 1) pair_verify(&m, 3000);
    CHECK_EQ(rc, 0);
    CHECK(m.moves > 0);
    pair_verify(&m, 3000);
    unit_log("%llu pairs moved", (unsigned long long)m.moves);
    arena_destroy(&m.a);
}

TEST(arena, geometric_growth_and_small_footprint) {
    arena a;
    CHECK_EQ(arena_init(&a, NULL), ARENA_OK);
    CHECK_EQ(arena_mem_bytes(&a), 0);
    arena_ref r[3];
    for (int i = 0; i < 3; i++) CHECK_EQ(arena_put(&a, "field:value", 11, &r[i]), ARENA_OK);
    /* A 3-field collection costs one 256-byte block, not a chunk. */
    CHECK_EQ(a.blocks, 1);
    CHECK_EQ(a.bytes_alloc, 256);
    CHECK(arena_mem_bytes(&a) <= 256 + 2 * 64);
    /* Block sizes double until the chunk size, then stay there. */
    size_t prev_alloc = a.bytes_alloc, prev_blocks = a.blocks, last = 256;
    int full = 0;
    char v[100] = {0};
    arena_ref x;
    while (full < 3) {
        CHECK_EQ(arena_put(&a, v, sizeof(v), &x), ARENA_OK);
        if (a.blocks != prev_blocks) {
            size_t sz = a.bytes_alloc - prev_alloc;
            CHECK_MSG(sz == last || sz == last * 2, "block of %zu after %zu", sz, last);
            CHECK(sz <= ARENA_CHUNK_DEFAULT);
            if (sz == ARENA_CHUNK_DEFAULT) full++;
            last = sz;
            prev_alloc = a.bytes_alloc;
            prev_blocks = a.blocks;
        }
    }
    unit_log("%u blocks, %.2f MiB after reaching 3 full chunks", a.blocks, a.bytes_alloc / 1048576.0);
    CHECK_EQ(arena_check(&a), 0);
    arena_destroy(&a);
    CHECK_EQ(arena_mem_bytes(&a), 0);
}

TEST(arena, pointers_stable_across_allocation) {
    arena a;
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 4096, .first_block = 64}), ARENA_OK);
    arena_ref keep[64];
    void *kp[64];
    for (int i = 0; i < 64; i++) {
        CHECK_EQ(arena_alloc(&a, (size_t)i * 7, &keep[i], &kp[i]), ARENA_OK);
        fill(kp[i], (size_t)i * 7, (uint64_t)i);
    }
    arena_ref x;
    void *p;
    for (int i = 0; i < 20000; i++) CHECK_EQ(arena_alloc(&a, (size_t)(i % 300), &x, &p), ARENA_OK);
    for (int i = 0; i < 64; i++) {
        size_t len;
        CHECK(arena_get(&a, keep[i], &len) == kp[i]);
        CHECK(same(kp[i], len, (uint64_t)i));
    }
    arena_destroy(&a);
}

TEST(arena, blocks_given_back) {
    arena a;
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 4096, .first_block = 64}), ARENA_OK);
    enum { N = 4000 };
    static arena_ref r[N];
    for (int i = 0; i < N; i++) CHECK_EQ(arena_put(&a, "0123456789abcdef0123456789abcdef", 32, &r[i]), ARENA_OK);
    uint32_t blocks = a.blocks;
    CHECK(blocks > 20);
    /* Free the oldest half: their blocks go back immediately, no
     * compaction needed. */
    for (int i = 0; i < N / 2; i++) arena_free(&a, r[i]);
    CHECK_EQ(arena_check(&a), 0);
    CHECK_MSG(a.blocks < blocks / 2 + 2, "%u of %u blocks left", a.blocks, blocks);
    CHECK_EQ(a.dead_bytes < 4096 * 2, 1);
    /* Free the newest entry: the bump offset moves back, no dead bytes. */
    size_t dead = a.dead_bytes;
    arena_free(&a, r[N - 1]);
    CHECK_EQ(a.dead_bytes, dead);
    arena_ref again;
    CHECK_EQ(arena_put(&a, "x", 1, &again), ARENA_OK);
    CHECK_EQ(again, r[N - 1]);
    arena_free(&a, again);
    for (int i = N / 2; i < N - 1; i++) arena_free(&a, r[i]);
    CHECK_EQ(a.blocks, 0);
    CHECK_EQ(arena_mem_bytes(&a), 0);
    CHECK_EQ(arena_check(&a), 0);
    arena_destroy(&a);
}

typedef struct move_log {
    arena_ref *refs;
    int n;
    uint64_t moved_bytes, moves;
} move_log;

static void log_move(void *ctx, arena_ref from, arena_ref to, const void *data, size_t len) {
    move_log *ml = ctx;
    int found = 0;
    for (int i = 0; i < ml->n; i++)
        if (ml->refs[i] == from) {
            ml->refs[i] = to;
            found = 1;
            break;
        }
    CHECK_MSG(found, "moved ref %#x is not live", from);
    CHECK(len == 24 && memcmp(data, "entry-", 6) == 0);
    ml->moved_bytes += len;
    ml->moves++;
}

TEST(arena, a_shrunk_arena_moves_to_a_smaller_block) {
    arena a;
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 65536, .first_block = 64}), ARENA_OK);
    enum { N = 3000 };
    static arena_ref all[N];
    char buf[24];
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "entry-%017d", i);
        CHECK_EQ(arena_put(&a, buf, 24, &all[i]), ARENA_OK);
    }
    /* A growing arena's newest block is not sparse. */
    CHECK(!arena_compact_needed(&a));
    /* Keep every 100th entry, newest first freed: the survivors of the
     * active block are far fewer than a quarter of it. */
    static arena_ref live[N / 100];
    for (int i = N - 1; i >= 0; i--)
        if (i % 100) arena_free(&a, all[i]);
        else live[i / 100] = all[i];
    move_log ml = {live, N / 100, 0, 0};
    CHECK_EQ(arena_check(&a), 0);
    size_t before = arena_mem_bytes(&a);
    int rc, steps = 0;
    while ((rc = arena_compact_step(&a, 1 << 20, log_move, &ml)) == 1) steps++;
    CHECK_EQ(rc, 0);
    CHECK_EQ(arena_check(&a), 0);
    CHECK(!arena_compact_needed(&a));
    CHECK_MSG(arena_mem_bytes(&a) * 8 < before, "%zu bytes of blocks, %zu before", arena_mem_bytes(&a), before);
    CHECK(ml.moves > 0);
    for (int i = 0; i < N; i += 100) {
        size_t len;
        snprintf(buf, sizeof(buf), "entry-%017d", i);
        const char *p = arena_get(&a, live[i / 100], &len);
        CHECK(len == 24 && memcmp(p, buf, 24) == 0);
    }
    unit_log("blocks %zu -> %zu bytes, %d steps, %llu moves", before, arena_mem_bytes(&a), steps,
             (unsigned long long)ml.moves);
    arena_destroy(&a);
}

TEST(arena, compaction_repoints_in_bounded_steps) {
    arena a;
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 4096, .first_block = 4096}), ARENA_OK);
    enum { N = 3000 };
    static arena_ref all[N], live[N];
    char buf[24];
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "entry-%017d", i);
        CHECK_EQ(arena_put(&a, buf, 24, &all[i]), ARENA_OK);
    }
    /* Kill 3 of every 4 entries: every full block is 75% dead. */
    int nl = 0;
    for (int i = 0; i < N; i++) {
        if (i % 4)
            arena_free(&a, all[i]);
        else
            live[nl++] = all[i];
    }
    CHECK(arena_compact_needed(&a));
    arena_stats before;
    arena_stats_get(&a, &before);
    move_log ml = {live, nl, 0, 0};
    int rc, steps = 0;
    do {
        uint64_t b0 = ml.moved_bytes, m0 = ml.moves;
        rc = arena_compact_step(&a, 100, log_move, &ml);
        CHECK(rc == 0 || rc == 1);
        /* at most the budget, or a single entry */
        CHECK(ml.moved_bytes - b0 <= 100 || ml.moves - m0 == 1);
        steps++;
        CHECK_EQ(arena_check(&a), 0);
    } while (rc == 1);
    arena_stats after;
    arena_stats_get(&a, &after);
    unit_log("compaction: %d steps, %llu moves, blocks %llu -> %llu, dead %llu -> %llu bytes", steps,
             (unsigned long long)ml.moves, (unsigned long long)before.blocks, (unsigned long long)after.blocks,
             (unsigned long long)before.dead_bytes, (unsigned long long)after.dead_bytes);
    CHECK(after.blocks * 3 < before.blocks);
    CHECK(after.dead_bytes * 10 < before.dead_bytes);
    CHECK(after.compactions > 0);
    CHECK_EQ(after.moved, ml.moves);
    for (int i = 0; i < nl; i++) {
        size_t len;
        const char *p = arena_get(&a, live[i], &len);
        snprintf(buf, sizeof(buf), "entry-%017d", i * 4);
        CHECK(len == 24 && memcmp(p, buf, 24) == 0);
    }
    /* Out of memory in the middle of a step loses nothing. */
    for (int i = 0; i < nl; i += 2) arena_free(&a, live[i]);
    int k = 0;
    for (int i = 1; i < nl; i += 2) live[k++] = live[i];
    nl = k;
    ml.n = nl;
    if (arena_compact_needed(&a)) {
        arena_set_fault(1);
        /* The active block may still have room, so the fault can hit a
         * later step; either way no entry is lost. */
        for (int s = 0; s < 50 && (rc = arena_compact_step(&a, 1 << 20, log_move, &ml)) > 0; s++) {
        }
        arena_set_fault(0);
        CHECK(rc == 0 || rc == 1 || rc == ARENA_ENOMEM);
        CHECK_EQ(arena_check(&a), 0);
        while (arena_compact_step(&a, 1 << 20, log_move, &ml) == 1) {
        }
    }
    for (int i = 0; i < nl; i++) {
        size_t len;
        const char *p = arena_get(&a, live[i], &len);
        CHECK(len == 24 && memcmp(p, "entry-", 6) == 0);
    }
    CHECK_EQ(arena_check(&a), 0);
    arena_destroy(&a);
}

TEST(arena, reference_limits_and_config) {
    arena a;
    CHECK_EQ(arena_init(&a, NULL), ARENA_OK);
    CHECK_EQ(a.off_bits, 21);
    CHECK_EQ(a.max_blocks, 2047);
    arena_destroy(&a);
    CHECK_EQ(arena_init(&a, &(arena_config){.ref_shift = 3}), ARENA_OK);
    CHECK_EQ(a.max_blocks, 16383);
    arena_ref r;
    for (int i = 0; i < 100; i++) {
        CHECK_EQ(arena_put(&a, "abc", 3, &r), ARENA_OK);
        CHECK_EQ((uintptr_t)arena_get(&a, r, NULL) % 8, 1); /* 8-aligned entry, 1-byte prefix */
    }
    arena_destroy(&a);
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 3 << 20}), ARENA_EINVAL);
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 2048}), ARENA_EINVAL);
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 4096, .first_block = 8192}), ARENA_EINVAL);
    CHECK_EQ(arena_init(&a, &(arena_config){.first_block = 100}), ARENA_EINVAL);
    CHECK_EQ(arena_init(&a, &(arena_config){.ref_shift = 7}), ARENA_EINVAL);
    CHECK_EQ(arena_set_default_chunk(1000), ARENA_EINVAL);
    CHECK_EQ(arena_set_default_chunk(4 << 20), ARENA_OK);
    CHECK_EQ(arena_init(&a, NULL), ARENA_OK);
    CHECK_EQ(a.off_bits, 22);
    arena_destroy(&a);
    CHECK_EQ(arena_set_default_chunk(ARENA_CHUNK_DEFAULT), ARENA_OK);
    /* Exhaustion: EFULL, and the arena is unchanged and usable. */
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 4096, .first_block = 4096, .max_blocks = 3}), ARENA_OK);
    static arena_ref refs[1000];
    int n = 0, rc;
    char v[1000] = {0};
    while ((rc = arena_put(&a, v, sizeof(v), &refs[n])) == ARENA_OK) n++;
    CHECK_EQ(rc, ARENA_EFULL);
    CHECK_EQ(n, 12);
    CHECK_EQ(a.blocks, 3);
    CHECK_EQ(arena_check(&a), 0);
    CHECK_EQ(arena_put(&a, v, 10, &refs[n]), ARENA_OK); /* still room in the active block */
    n++;
    for (int i = 0; i < 4; i++) arena_free(&a, refs[i]); /* first block empties */
    CHECK_EQ(a.blocks, 2);
    CHECK_EQ(arena_put(&a, v, sizeof(v), &refs[0]), ARENA_OK);
    CHECK_EQ(arena_check(&a), 0);
    /* A dedicated block (entry > chunk) needs a block id too. */
    static char big[5000];
    CHECK_EQ(a.blocks, 3);
    CHECK_EQ(arena_put(&a, big, sizeof(big), &refs[1]), ARENA_EFULL);
    for (int i = 4; i < 8; i++) arena_free(&a, refs[i]);
    CHECK_EQ(arena_put(&a, big, sizeof(big), &refs[1]), ARENA_OK);
    CHECK_EQ(arena_check(&a), 0);
    arena_destroy(&a);
}

TEST(arena, global_counters) {
    arena_stats g0, g1, g2;
    arena_global_stats(&g0);
    arena a, b;
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 8192}), ARENA_OK);
    CHECK_EQ(arena_init(&b, NULL), ARENA_OK);
    arena_ref r;
    char v[200] = {0};
    for (int i = 0; i < 5000; i++) {
        CHECK_EQ(arena_put(&a, v, sizeof(v), &r), ARENA_OK);
        CHECK_EQ(arena_put(&b, v, 20, &r), ARENA_OK);
    }
    arena_global_stats(&g1);
    CHECK_EQ(g1.blocks - g0.blocks, a.blocks + b.blocks);
    CHECK_EQ(g1.bytes_alloc - g0.bytes_alloc, a.bytes_alloc + b.bytes_alloc);
    uint64_t live = g1.live_bytes - g0.live_bytes;
    CHECK(live <= a.live_bytes + b.live_bytes && live + 2 * 16384 >= a.live_bytes + b.live_bytes);
    arena_destroy(&a);
    arena_destroy(&b);
    arena_global_stats(&g2);
    CHECK_EQ(g2.blocks, g0.blocks);
    CHECK_EQ(g2.bytes_alloc, g0.bytes_alloc);
    CHECK_EQ(g2.live_bytes, g0.live_bytes);
    CHECK_EQ(g2.dead_bytes, g0.dead_bytes);
    CHECK_EQ(g2.entries, g0.entries);
}

/* ---- HugeTLB ---- */

static void hugetlb_reset(void) {
    hugetlb_set_fault(0);
    hugetlb_set_enabled(0);
    arena_set_fault(0);
}

/* Full-size blocks handed out by the provider since s0 (small blocks come
 * from malloc, so this counts an arena's frozen blocks). */
static uint64_t full_blocks_since(const hugetlb_stats *s0) {
    hugetlb_stats s;
    hugetlb_stats_get(&s);
    return (s.huge_blocks + s.plain_blocks) - (s0->huge_blocks + s0->plain_blocks);
}

TEST(hugetlb, fallback_never_crashes) {
    hugetlb_stats s0, s1;
    unit_cleanup(hugetlb_reset);
    CHECK(!arena_hugetlb_enabled());
    CHECK(hugetlb_bgsave_refusal() == NULL);
    size_t hp = hugetlb_page_size();
    unit_log("huge page size %zu KiB", hp >> 10);
    CHECK(hp >= 4096 && !(hp & (hp - 1)));
    hugetlb_set_enabled(1);
    CHECK(arena_hugetlb_enabled());
    CHECK(hugetlb_bgsave_refusal() != NULL);
    /* Injected failures at each step of the HugeTLB path: ordinary pages,
     * counted, fully writable. */
    unsigned faults[] = {HUGETLB_FAULT_MAP, HUGETLB_FAULT_POPULATE};
    for (int i = 0; i < 2; i++) {
        hugetlb_set_fault(faults[i]);
        hugetlb_stats_get(&s0);
        int huge = 1;
        unsigned char *p = hugetlb_alloc_block(2 * hp, &huge);
        CHECK(p && !huge);
        memset(p, 0xa5, 2 * hp);
        hugetlb_stats_get(&s1);
        CHECK_EQ(s1.fallbacks - s0.fallbacks, 1);
        CHECK_EQ(s1.plain_bytes - s0.plain_bytes, 2 * hp);
        hugetlb_free_block(p, 2 * hp, huge);
    }
    /* Nothing at all: NULL, and the arena says ENOMEM. */
    hugetlb_set_fault(HUGETLB_FAULT_MAP | HUGETLB_FAULT_PLAIN);
    int huge;
    CHECK(hugetlb_alloc_block(hp, &huge) == NULL);
    arena a;
    CHECK_EQ(arena_init(&a, &(arena_config){.chunk = 4096, .first_block = 4096}), ARENA_OK);
    arena_ref r;
    CHECK_EQ(arena_put(&a, "x", 1, &r), ARENA_ENOMEM);
    CHECK_EQ(arena_check(&a), 0);
    hugetlb_set_fault(0);
    arena_destroy(&a);
    /* The real pool, whatever it holds (usually empty): an arena of full
     * chunks works and every chunk is HugeTLB or counted as a fallback. */
    long total = -1, freep = -1;
    hugetlb_pool_pages(&total, &freep);
    hugetlb_stats_get(&s1);
    CHECK_EQ(arena_init(&a, NULL), ARENA_OK);
    char v[1000];
    memset(v, 7, sizeof(v));
    while (full_blocks_since(&s1) < 5) CHECK_EQ(arena_put(&a, v, sizeof(v), &r), ARENA_OK);
    uint64_t full = full_blocks_since(&s1);
    unit_log("pool: %ld pages, %ld free; arena %.1f MiB, %.1f MiB HugeTLB, %llu fallbacks", total, freep,
             a.bytes_alloc / 1048576.0, a.huge_bytes / 1048576.0, (unsigned long long)a.fallbacks);
    CHECK_EQ(a.huge_bytes / ARENA_CHUNK_DEFAULT + a.fallbacks, full);
    CHECK_EQ(arena_check(&a), 0);
    arena_destroy(&a);
    hugetlb_set_enabled(0);
    CHECK(hugetlb_bgsave_refusal() == NULL);
}

/* Root only: reserve a few pages, check frozen blocks are really backed by
 * HugeTLB pages (HugetlbPages in /proc/self/status), restore the pool. */

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
static long saved_nr_hugepages = -1;

static long read_long_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

static int write_long_file(const char *path, long v) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fprintf(f, "%ld\n", v) > 0;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : -1;
}

static void restore_nr_hugepages(void) {
    if (saved_nr_hugepages < 0) return;
    write_long_file(NR_HUGEPAGES, saved_nr_hugepages);
    long now = read_long_file(NR_HUGEPAGES);
    if (now != saved_nr_hugepages)
        fprintf(stdout, "    # WARNING: vm.nr_hugepages is %ld, could not restore %ld\n", now, saved_nr_hugepages);
    saved_nr_hugepages = -1;
}

static long status_hugetlb_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "HugetlbPages: %ld kB", &v) == 1) break;
    fclose(f);
    return v;
}

TEST(hugetlb, frozen_blocks_are_hugetlb_backed) {
    if (geteuid() != 0) {
        unit_log("SKIPPED: not root, cannot reserve a HugeTLB pool with vm.nr_hugepages");
        return;
    }
    size_t hp = hugetlb_page_size();
    if (hp != ARENA_CHUNK_DEFAULT) {
        unit_log("SKIPPED: huge page is %zu KiB, not the 2 MiB default chunk", hp >> 10);
        return;
    }
    long orig = read_long_file(NR_HUGEPAGES);
    long total, freep;
    if (orig < 0 || hugetlb_pool_pages(&total, &freep) != 0) {
        unit_log("SKIPPED: cannot read %s or /proc/meminfo", NR_HUGEPAGES);
        return;
    }
    if (status_hugetlb_kb() < 0) {
        unit_log("SKIPPED: no HugetlbPages line in /proc/self/status");
        return;
    }
    enum { WANT = 6 };
    saved_nr_hugepages = orig;
    static int registered;
    if (!registered++) atexit(restore_nr_hugepages);
    unit_cleanup(restore_nr_hugepages);
    unit_cleanup(hugetlb_reset);
    if (write_long_file(NR_HUGEPAGES, orig + WANT) != 0) {
        saved_nr_hugepages = -1;
        unit_log("SKIPPED: writing %s failed (vm.nr_hugepages is read-only here)", NR_HUGEPAGES);
        return;
    }
    long granted = read_long_file(NR_HUGEPAGES) - orig; /* the kernel may grant fewer */
    hugetlb_pool_pages(&total, &freep);
    if (granted < 3 || freep < 3) {
        restore_nr_hugepages();
        unit_log("SKIPPED: the kernel granted %ld of %d pages (%ld free)", granted, WANT, freep);
        return;
    }
    unit_log("pool: vm.nr_hugepages %ld -> %ld, %ld free", orig, orig + granted, freep);
    long kb0 = status_hugetlb_kb();
    hugetlb_set_enabled(1);
    arena a;
    CHECK_EQ(arena_init(&a, NULL), ARENA_OK);
    /* Fill until three full chunks exist (the geometric blocks come first). */
    enum { V = 1000 };
    char v[V];
    uint64_t n = 0;
    static arena_ref refs[20000];
    hugetlb_stats base;
    hugetlb_stats_get(&base);
    while (full_blocks_since(&base) < 3) {
        fill((unsigned char *)v, V, n);
        CHECK(n < 20000);
        CHECK_EQ(arena_put(&a, v, V, &refs[n]), ARENA_OK);
        n++;
    }
    long kb1 = status_hugetlb_kb();
    hugetlb_stats hs;
    hugetlb_stats_get(&hs);
    unit_log("arena: %.1f MiB in %u blocks, %.1f MiB HugeTLB, %llu fallbacks; HugetlbPages %ld -> %ld kB", a.bytes_alloc / 1048576.0,
             a.blocks, a.huge_bytes / 1048576.0, (unsigned long long)a.fallbacks, kb0, kb1);
    CHECK_EQ(a.huge_bytes, 3 * ARENA_CHUNK_DEFAULT);
    CHECK_EQ(a.fallbacks, 0);
    CHECK_EQ((uint64_t)(kb1 - kb0) * 1024, a.huge_bytes);
    CHECK_EQ(hs.huge_bytes, a.huge_bytes);
    for (uint64_t i = 0; i < n; i++) {
        size_t len;
        void *p = arena_get(&a, refs[i], &len);
        CHECK(len == V && same(p, len, i));
    }
    /* Short pool: more full chunks than pages left fall back silently. */
    hugetlb_pool_pages(&total, &freep);
    uint64_t fb0 = a.fallbacks;
    while (full_blocks_since(&base) < 3 + (uint64_t)freep + 2) {
        CHECK(n < 20000);
        fill((unsigned char *)v, V, n);
        CHECK_EQ(arena_put(&a, v, V, &refs[n]), ARENA_OK);
        n++;
    }
    unit_log("short pool: %ld pages were free, arena now %.1f MiB HugeTLB, %llu fallbacks", freep,
             a.huge_bytes / 1048576.0, (unsigned long long)(a.fallbacks - fb0));
    CHECK(a.fallbacks - fb0 >= 2);
    for (uint64_t i = 0; i < n; i++) {
        size_t len;
        void *p = arena_get(&a, refs[i], &len);
        CHECK(len == V && same(p, len, i));
    }
    CHECK_EQ(arena_check(&a), 0);
    arena_destroy(&a);
    hugetlb_set_enabled(0);
    CHECK_EQ(status_hugetlb_kb(), kb0);
    restore_nr_hugepages();
    CHECK_EQ(read_long_file(NR_HUGEPAGES), orig);
}
