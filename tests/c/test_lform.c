/* test_lform.c -- ds/lform: the arena + index-of-references large form.
 *
 * The three key layouts (whole entry, after a fixed prefix, length-prefixed
 * with a value behind), lookups by key and by reference, replace and remove,
 * and compaction: every move re-points the index and reaches the type's
 * hook (here a side table of refs by id, as a sorted set's tree holds them),
 * with both copies readable; compaction waits while the index resizes;
 * lf_maintain after each delete gives most of the memory back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/lform.h"
#include "util/hashfn.h"
#include "util/rand.h"
#include "unit.h"

static size_t key_of(uint32_t id, char *buf) { return (size_t)snprintf(buf, 32, "key:%u", id); }

/* ---- layouts ---- */

static const lf_type whole_type = LF_TYPE(0, 0, NULL);
static const lf_type pair_type = LF_TYPE(0, 1, NULL);

TEST(lform, whole_entry_keys) {
    lform l;
    lf_init(&l, &whole_type);
    char k[32];
    for (uint32_t i = 0; i < 5000; i++) {
        size_t n = key_of(i, k);
        uint64_t hv = hash_bytes(k, n);
        CHECK(lf_find(&l, k, n, hv) == NULL);
        arena_ref r = ARENA_REF_NONE;
        CHECK_EQ(lf_put(&l, k, n, hv, &r), LF_OK);
        CHECK(r != ARENA_REF_NONE);
        CHECK(lf_find_ref(&l, r) == lf_find(&l, k, n, hv));
    }
    CHECK_EQ(lf_count(&l), 5000);
    CHECK_EQ(lf_check(&l), 0);
    CHECK(lf_mem_bytes(&l) > 5000 * 8);
    for (uint32_t i = 0; i < 5000; i++) {
        size_t n = key_of(i, k), kl;
        void *slot = lf_find(&l, k, n, hash_bytes(k, n));
        CHECK(slot != NULL);
        const unsigned char *got = lf_key(&l, arena_ref_load(slot), &kl);
        CHECK(kl == n && memcmp(got, k, n) == 0);
        if (i % 2) lf_remove(&l, slot);
    }
    CHECK_EQ(lf_count(&l), 2500);
    CHECK_EQ(lf_check(&l), 0);
    for (uint32_t i = 1; i < 5000; i += 2) {
        size_t n = key_of(i, k);
        CHECK(lf_find(&l, k, n, hash_bytes(k, n)) == NULL);
    }
    lf_reset(&l);
    CHECK_EQ(lf_count(&l), 0);
    CHECK_EQ(lf_mem_bytes(&l), 0);
    CHECK_EQ(lf_check(&l), 0);
    /* Usable again after a reset; the empty key is a key like any other. */
    CHECK_EQ(lf_put(&l, "", 0, hash_bytes("", 0), NULL), LF_OK);
    CHECK(lf_find(&l, "", 0, hash_bytes("", 0)) != NULL);
    CHECK_EQ(lf_check(&l), 0);
    lf_destroy(&l);
}

/* Pairs: the key is the field; values of any length behind it, rewritten
 * by lf_replace (the same field, a new entry). */
TEST(lform, sized_keys_and_replace) {
    lform l;
    lf_init(&l, &pair_type);
    char k[32], v[200];
    for (uint32_t i = 0; i < 3000; i++) {
        size_t n = key_of(i, k), vl = i % 150;
        memset(v, 'a' + (int)(i % 26), vl);
        arena_ref r;
        void *fp, *vp;
        CHECK_EQ(arena_pair_alloc(&l.a, n, vl, &r, &fp, &vp), ARENA_OK);
        memcpy(fp, k, n);
        memcpy(vp, v, vl);
        CHECK_EQ(lf_index(&l, r, hash_bytes(k, n)), LF_OK);
    }
    CHECK_EQ(lf_check(&l), 0);
    /* A value stored in an entry is not a key: only fields match. */
    CHECK(lf_find(&l, "aaaa", 4, hash_bytes("aaaa", 4)) == NULL);
    for (uint32_t i = 0; i < 3000; i += 3) {
        size_t n = key_of(i, k);
        void *slot = lf_find(&l, k, n, hash_bytes(k, n));
        CHECK(slot != NULL);
        arena_ref r;
        void *fp, *vp;
        CHECK_EQ(arena_pair_alloc(&l.a, n, 7, &r, &fp, &vp), ARENA_OK);
        memcpy(fp, k, n);
        memcpy(vp, "updated", 7);
        lf_replace(&l, slot, r);
    }
    CHECK_EQ(lf_count(&l), 3000);
    CHECK_EQ(lf_check(&l), 0);
    for (uint32_t i = 0; i < 3000; i++) {
        size_t n = key_of(i, k);
        void *slot = lf_find(&l, k, n, hash_bytes(k, n));
        CHECK(slot != NULL);
        const void *fp, *vp;
        size_t fl, vl;
        arena_pair_get(&l.a, arena_ref_load(slot), &fp, &fl, &vp, &vl);
        CHECK(fl == n && memcmp(fp, k, n) == 0);
        if (i % 3 == 0) CHECK(vl == 7 && memcmp(vp, "updated", 7) == 0);
        else CHECK_EQ(vl, i % 150);
    }
    lf_destroy(&l);
}

static void no_fault(void) { arena_set_fault(0); }

TEST(lform, errors) {
    CHECK_EQ(lf_arena_err(ARENA_EFULL), LF_EFULL);
    CHECK_EQ(lf_arena_err(ARENA_ENOMEM), LF_ENOMEM);
    lform l;
    lf_init(&l, &whole_type);
    /* The first entry needs a block: refused, nothing indexed. */
    arena_set_fault(1);
    unit_cleanup(no_fault);
    CHECK_EQ(lf_put(&l, "x", 1, hash_bytes("x", 1), NULL), LF_ENOMEM);
    arena_set_fault(0);
    CHECK_EQ(lf_count(&l), 0);
    CHECK_EQ(lf_check(&l), 0);
    CHECK_EQ(lf_put(&l, "x", 1, hash_bytes("x", 1), NULL), LF_OK);
    CHECK_EQ(lf_check(&l), 0);
    lf_destroy(&l);
}

/* ---- compaction ---- */

/* Entries: an 8-byte id, then the key. side[id] is the entry's ref, kept
 * by the hook as another holder of refs would be. */
typedef struct side_form {
    lform l;
    arena_ref *side;
    size_t moves, bad;
} side_form;

static void side_moved(lform *l, arena_ref from, arena_ref to, const void *data, size_t len) {
    side_form *s = (side_form *)(void *)l;
    uint64_t id;
    memcpy(&id, data, 8);
    size_t old_len;
    const void *old = arena_get(&l->a, from, &old_len);
    /* Both copies are readable, the index already names the new one. */
    if (s->side[id] != from || old_len != len || memcmp(old, data, len) != 0) s->bad++;
    if (arena_ref_load(lf_find_ref(l, to)) != to) s->bad++;
    s->side[id] = to;
    s->moves++;
}

static const lf_type side_type = LF_TYPE(8, 0, side_moved);

static void side_put(side_form *s, uint64_t id) {
    char k[32];
    size_t n = key_of((uint32_t)id, k);
    arena_ref r;
    void *p;
    CHECK_EQ(arena_alloc(&s->l.a, 8 + n, &r, &p), ARENA_OK);
    memcpy(p, &id, 8);
    memcpy((char *)p + 8, k, n);
    CHECK_EQ(lf_index(&s->l, r, hash_bytes(k, n)), LF_OK);
    s->side[id] = r;
}

static void side_del(side_form *s, uint64_t id) {
    void *slot = lf_find_ref(&s->l, s->side[id]);
    CHECK(slot != NULL);
    lf_remove(&s->l, slot);
    s->side[id] = ARENA_REF_NONE;
}

/* Every live id's side ref is the slot's ref for its key. */
static void side_verify(side_form *s, size_t ids) {
    CHECK_EQ(lf_check(&s->l), 0);
    CHECK_EQ(s->bad, 0);
    char k[32];
    size_t live = 0;
    for (size_t id = 0; id < ids; id++) {
        if (s->side[id] == ARENA_REF_NONE) continue;
        size_t n = key_of((uint32_t)id, k);
        void *slot = lf_find(&s->l, k, n, hash_bytes(k, n));
        CHECK(slot != NULL && arena_ref_load(slot) == s->side[id]);
        live++;
    }
    CHECK_EQ(live, lf_count(&s->l));
}

TEST(lform, maintain_reclaims_and_moves_reach_the_hook) {
    size_t ids = 200000; /* two chunks at the peak */
    side_form s = {.side = malloc(ids * sizeof(arena_ref))};
    lf_init(&s.l, &side_type);
    for (size_t id = 0; id < ids; id++) side_put(&s, id);
    size_t full = s.l.a.bytes_alloc;
    /* Delete 90% in random order, maintaining after each delete. */
    unit_rng r = {42};
    size_t *order = malloc(ids * sizeof(size_t));
    for (size_t i = 0; i < ids; i++) order[i] = i;
    for (size_t i = ids - 1; i > 0; i--) {
        size_t j = (size_t)unit_below(&r, i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < ids - ids / 10; i++) {
        side_del(&s, order[i]);
        lf_maintain(&s.l, LF_COMPACT_BUDGET);
    }
    side_verify(&s, ids);
    CHECK(s.moves > 0);
    unit_log("%zu entries: %zu arena bytes; after deleting 90%%: %zu (%zu moves)", ids, full,
             (size_t)s.l.a.bytes_alloc, s.moves);
    /* Compaction keeps up: the arena gave back half its blocks at least. */
    CHECK(s.l.a.bytes_alloc <= full / 2);
    /* Finish by hand: nothing left past the threshold afterwards. */
    while (swiss_is_rehashing(&s.l.idx)) swiss_rehash_step(&s.l.idx, 64);
    while (lf_compact(&s.l, 1 << 20)) {
    }
    CHECK(!arena_compact_needed(&s.l.a));
    CHECK_EQ(s.l.compacting, 0);
    side_verify(&s, ids);
    lf_destroy(&s.l);
    free(order);
    free(s.side);
}

TEST(lform, compaction_waits_while_the_index_resizes) {
    size_t ids = 40000;
    side_form s = {.side = malloc(ids * sizeof(arena_ref))};
    lf_init(&s.l, &side_type);
    for (size_t id = 0; id < ids; id++) side_put(&s, id);
    /* 15 entries of 16 go: every block ends up mostly dead, and the index
     * shrinks on the way; compaction stands still while it resizes. */
    int waited = 0;
    for (size_t id = 0; id < ids; id++) {
        if (id % 16 == 0) continue;
        side_del(&s, id);
        if (swiss_is_rehashing(&s.l.idx) && arena_compact_needed(&s.l.a)) {
            size_t moves = s.moves;
            CHECK_EQ(lf_compact(&s.l, 1 << 20), 0);
            CHECK_EQ(s.l.compacting, 0);
            CHECK_EQ(s.moves, moves);
            waited++;
        }
    }
    CHECK(waited > 0);
    while (swiss_is_rehashing(&s.l.idx)) swiss_rehash_step(&s.l.idx, 64);
    CHECK(arena_compact_needed(&s.l.a));
    int steps = 0;
    while (lf_compact(&s.l, 4096)) steps++;
    CHECK(steps > 0 && s.moves > 0);
    CHECK(!arena_compact_needed(&s.l.a));
    side_verify(&s, ids);
    lf_destroy(&s.l);
    free(s.side);
}

/* A large form's index is paced (LF_GROW_PACE): growing by find + put in
 * batches of 1000, as a 1000-field HSET does, no batch moves more than
 * 2000 / LF_GROW_PACE index groups, however big the form (one group per
 * operation moved up to 2000 groups, ~26K elements, in one such batch). */
TEST(lform, growth_spreads_index_resizes) {
    CHECK_EQ(whole_type.index.grow_pace, LF_GROW_PACE);
    lform l;
    lf_init(&l, &whole_type);
    char k[32];
    uint32_t n = (uint32_t)unit_scaled(1000000, 200000);
    uint64_t worst = 0, last = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t kn = key_of(i, k);
        uint64_t hv = hash_bytes(k, kn);
        CHECK(lf_find(&l, k, kn, hv) == NULL);
        CHECK_EQ(lf_put(&l, k, kn, hv, NULL), LF_OK);
        if (i % 1000 == 999) {
            uint64_t d = l.idx.moved_groups - last;
            if (d > worst) worst = d;
            last = l.idx.moved_groups;
        }
    }
    unit_log("%u keys, %llu index groups moved, most in a batch of 1000: %llu", n,
             (unsigned long long)l.idx.moved_groups, (unsigned long long)worst);
    CHECK(l.idx.moved_groups > 10000);
    CHECK(worst <= 2000 / LF_GROW_PACE + 1);
    CHECK_EQ(lf_check(&l), 0);
    lf_destroy(&l);
}

/* A write that leaves the index resizing reports it once per resize (the
 * server then lists the key for its cron), and lf_rehash_step finishes a
 * resize while nothing else touches the collection. */
TEST(lform, resizes_reported_once_and_finished_idle) {
    lform l;
    lf_init(&l, &whole_type);
    (void)lf_take_resize_started();
    char k[32];
    uint32_t reports = 0, starts = 0, i = 0;
    int was = 0;
    for (; i < 100000 || !l.idx.resizing; i++) {
        size_t kn = key_of(i, k);
        CHECK_EQ(lf_put(&l, k, kn, hash_bytes(k, kn), NULL), LF_OK);
        int now = l.idx.resizing != 0, rep = lf_take_resize_started();
        CHECK(!rep || now);
        reports += (uint32_t)rep;
        starts += (uint32_t)(now && !was);
        was = now;
    }
    unit_log("%u keys: %u resizes seen, %u reported", i, starts, reports);
    CHECK(starts > 10);
    CHECK_EQ(reports, starts);
    CHECK_EQ(lf_take_resize_started(), 0);
    size_t before = swiss_mem_bytes(&l.idx);
    uint32_t steps = 0;
    while (lf_rehash_step(&l, 64)) steps++;
    CHECK(steps > 0);
    CHECK_EQ(l.idx.resizing, 0);
    CHECK_EQ(l.noted, 0);
    CHECK(swiss_mem_bytes(&l.idx) < before);
    CHECK_EQ(lf_check(&l), 0);
    CHECK_EQ(lf_rehash_step(&l, 64), 0);
    lf_destroy(&l);
}

/* ---- sampling ---- */

typedef struct pick_log {
    const lform *l;
    size_t *hits;      /* by key id */
    lf_refset seen;    /* of this round */
    size_t picked, repeats;
} pick_log;

static void log_pick(void *arg, arena_ref r) {
    pick_log *pl = arg;
    size_t kl;
    const unsigned char *k = lf_key(pl->l, r, &kl);
    pl->hits[strtoul((const char *)k + 4, NULL, 10)]++;
    if (!lf_refset_add(&pl->seen, r)) pl->repeats++;
    pl->picked++;
}

/* Both strategies (a third of the entries or more: a shuffle; fewer:
 * rejection) pick distinct entries, each about equally often. */
TEST(lform, sample_distinct_and_uniform) {
    rand_seed_thread(99);
    lform l;
    lf_init(&l, &whole_type);
    char k[32];
    size_t n = 30;
    for (uint32_t i = 0; i < n; i++) {
        size_t kn = key_of(i, k);
        CHECK_EQ(lf_put(&l, k, kn, hash_bytes(k, kn), NULL), LF_OK);
    }
    size_t counts[] = {1, 5, 10, 11, 29};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        size_t hits[30] = {0}, rounds = 6000;
        pick_log pl = {&l, hits, {0}, 0, 0};
        for (size_t round = 0; round < rounds; round++) {
            CHECK_EQ(lf_refset_init(&pl.seen, counts[c]), LF_OK);
            CHECK_EQ(lf_sample(&l, counts[c], rand_next, log_pick, &pl), LF_OK);
            lf_refset_free(&pl.seen);
        }
        CHECK_EQ(pl.repeats, 0);
        CHECK_EQ(pl.picked, rounds * counts[c]);
        /* Expected hits per entry: rounds * count / n; allow 5 sigma. */
        double want = (double)rounds * (double)counts[c] / (double)n;
        for (size_t i = 0; i < n; i++)
            CHECK_MSG((double)hits[i] > want - 5 * sqrt(want) - 1 && (double)hits[i] < want + 5 * sqrt(want) + 1,
                      "count %zu: entry %zu picked %zu times, expected about %.0f", counts[c], i, hits[i], want);
    }
    lf_destroy(&l);
}

TEST(lform, refset) {
    lf_refset rs;
    CHECK_EQ(lf_refset_init(&rs, 1000), LF_OK);
    for (arena_ref r = 0; r < 1000; r++) CHECK_EQ(lf_refset_add(&rs, r * 7919), 1);
    for (arena_ref r = 0; r < 1000; r++) CHECK_EQ(lf_refset_add(&rs, r * 7919), 0);
    for (arena_ref r = 0; r < 7919 * 1000; r += 7) CHECK_EQ(lf_refset_has(&rs, r), r % 7919 == 0);
    lf_refset_free(&rs);
    CHECK(rs.t == NULL);
}
