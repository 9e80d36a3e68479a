/* test_slab.c -- mem/slab: small blocks in 8-byte size classes.
 *
 * Every slot has its class's size and 8-byte alignment, live slots never
 * overlap (each is filled with its own pattern and read back), and several
 * threads allocating and freeing at once keep every slot intact. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem/slab.h"
#include "unit.h"

TEST(slab, size_classes) {
    CHECK_EQ(slab_class_size(0), 8);
    CHECK_EQ(slab_class_size(1), 8);
    CHECK_EQ(slab_class_size(8), 8);
    CHECK_EQ(slab_class_size(9), 16);
    CHECK_EQ(slab_class_size(SLAB_MAX - 1), SLAB_MAX);
    CHECK_EQ(slab_class_size(SLAB_MAX), SLAB_MAX);
    for (size_t n = 0; n <= SLAB_MAX; n++) {
        void *p = slab_alloc(n);
        CHECK(p != NULL);
        CHECK_EQ((uintptr_t)p % 8, 0);
        CHECK_EQ(slab_size(p), slab_class_size(n));
        CHECK(slab_size(p) >= n && slab_size(p) < n + 8 + (n == 0) * 8);
        memset(p, 0xA5, slab_size(p));
        slab_free(p);
    }
}

static void fill(unsigned char *p, size_t n, uint32_t tag) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(tag * 31 + i);
}

static int intact(const unsigned char *p, size_t n, uint32_t tag) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(tag * 31 + i)) return 0;
    return 1;
}

typedef struct churn_job {
    uint64_t seed;
    size_t slots, rounds;
    int bad;
} churn_job;

/* Random allocations and frees over a table of live slots. */
static void *churn(void *arg) {
    churn_job *j = arg;
    unit_rng r = {j->seed};
    unsigned char **p = calloc(j->slots, sizeof(*p));
    size_t *len = calloc(j->slots, sizeof(*len));
    for (size_t round = 0; round < j->rounds; round++) {
        size_t k = (size_t)unit_below(&r, j->slots);
        if (p[k]) {
            if (!intact(p[k], len[k], (uint32_t)k)) j->bad++;
            slab_free(p[k]);
            p[k] = NULL;
        } else {
            len[k] = (size_t)unit_below(&r, SLAB_MAX + 1);
            p[k] = slab_alloc(len[k]);
            if (!p[k] || slab_size(p[k]) != slab_class_size(len[k])) {
                j->bad++;
                continue;
            }
            fill(p[k], len[k], (uint32_t)k);
        }
    }
    for (size_t k = 0; k < j->slots; k++) {
        if (!p[k]) continue;
        if (!intact(p[k], len[k], (uint32_t)k)) j->bad++;
        slab_free(p[k]);
    }
    free(p);
    free(len);
    return NULL;
}

TEST(slab, churn_keeps_every_slot) {
    churn_job j = {1, 3000, (size_t)unit_scaled(300000, 20000), 0};
    churn(&j);
    CHECK_EQ(j.bad, 0);
}

TEST(slab, threads) {
    pthread_t t[4];
    churn_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (churn_job){(uint64_t)i + 10, 2000, (size_t)unit_scaled(100000, 10000), 0};
        CHECK_EQ(pthread_create(&t[i], NULL, churn, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(jobs[i].bad, 0);
    }
}

/* An owner's pool: slots of every class, freed in a scrambled order, leave
 * one slab per class at most (the last with room), and destroy frees them. */
TEST(slab, pool_gives_slabs_back) {
    slab_pool sp;
    slab_pool_init(&sp);
    enum { N = 3000 };
    static unsigned char *p[N];
    static size_t len[N];
    unit_rng r = {42};
    for (size_t i = 0; i < N; i++) {
        len[i] = (size_t)unit_below(&r, SLAB_MAX + 1);
        p[i] = slab_pool_alloc(&sp, len[i]);
        CHECK(p[i] != NULL);
        CHECK_EQ((uintptr_t)p[i] % 8, 0);
        CHECK_EQ(slab_size(p[i]), slab_class_size(len[i]));
        fill(p[i], len[i], (uint32_t)i);
    }
    CHECK(slab_pool_bytes(&sp) >= 3000 * 8);
    for (size_t i = 0; i < N; i++) CHECK(intact(p[i], len[i], (uint32_t)i));
    /* Free every other slot, then reuse: a freed slot comes back. */
    for (size_t i = 0; i < N; i += 2) slab_pool_free(&sp, p[i]);
    size_t before = slab_pool_bytes(&sp);
    for (size_t i = 0; i < N; i += 2) {
        p[i] = slab_pool_alloc(&sp, len[i]);
        fill(p[i], len[i], (uint32_t)i);
    }
    CHECK_EQ(slab_pool_bytes(&sp), before);
    for (size_t i = 0; i < N; i++) CHECK(intact(p[i], len[i], (uint32_t)i));
    for (size_t k = 0; k < N; k++) {
        size_t i = (k * 7919) % N;
        slab_pool_free(&sp, p[i]);
    }
    CHECK(slab_pool_bytes(&sp) <= (SLAB_NCLASS + 1) * 16384);
    slab_pool_destroy(&sp);
    CHECK_EQ(slab_pool_bytes(&sp), 0);
}

/* A class keeps its last slab when it empties; purging gives every empty
 * slab back, and the pool goes on serving. */
TEST(slab, purge_gives_kept_slabs_back) {
    slab_pool sp;
    slab_pool_init(&sp);
    enum { K = SLAB_NCLASS - 1 };
    static unsigned char *p[K];
    for (size_t i = 0; i < K; i++) {
        p[i] = slab_pool_alloc(&sp, 8 * (i + 1));
        CHECK(p[i] != NULL);
        fill(p[i], 8 * (i + 1), (uint32_t)i);
    }
    unsigned char *keep = slab_pool_alloc(&sp, 8);
    CHECK(keep != NULL);
    fill(keep, 8, 999);
    CHECK_EQ(slab_pool_bytes(&sp), K * 16384);
    for (size_t i = 0; i < K; i++) slab_pool_free(&sp, p[i]);
    /* One slab per class is kept; the class of `keep` is not empty. */
    CHECK_EQ(slab_pool_bytes(&sp), K * 16384);
    CHECK_EQ(slab_pool_purge(&sp), K - 1);
    CHECK_EQ(slab_pool_bytes(&sp), 16384);
    CHECK_EQ(slab_pool_purge(&sp), 0);
    CHECK(intact(keep, 8, 999));
    for (size_t i = 0; i < K; i++) {
        p[i] = slab_pool_alloc(&sp, 8 * (i + 1));
        CHECK(p[i] != NULL);
        fill(p[i], 8 * (i + 1), (uint32_t)i);
    }
    for (size_t i = 0; i < K; i++) CHECK(intact(p[i], 8 * (i + 1), (uint32_t)i));
    for (size_t i = 0; i < K; i++) slab_pool_free(&sp, p[i]);
    slab_pool_free(&sp, keep);
    slab_pool_destroy(&sp);
    CHECK_EQ(slab_pool_bytes(&sp), 0);
    /* The process-wide pool: a burst through 50 classes, then purge. */
    for (size_t i = 0; i < 50; i++) p[i] = slab_alloc(8 * (i + 1));
    for (size_t i = 0; i < 50; i++) slab_free(p[i]);
    CHECK(slab_purge() >= 50);
    CHECK_EQ(slab_purge(), 0);
    void *q = slab_alloc(100);
    CHECK(q != NULL);
    slab_free(q);
}

/* References: every slot's address comes back from its reference, a
 * freed slab's id is used again, and a pool out of ids refuses. */
TEST(slab, pool_references) {
    slab_pool sp;
    slab_pool_init_refs(&sp, 3);
    enum { N = 700 };
    static unsigned char *p[N];
    size_t got = 0;
    for (size_t i = 0; i < N; i++) {
        p[i] = slab_pool_alloc(&sp, 64); /* 255 slots per slab: 3 slabs hold 765 */
        CHECK(p[i] != NULL);
        got += p[i] != NULL;
        uint32_t ref = slab_pool_ref(p[i] + 8);
        CHECK(slab_pool_at(&sp, ref) == p[i] + 8);
        CHECK((ref >> SLAB_REF_OFF_BITS) < 3);
    }
    CHECK_EQ(got, N);
    /* A fourth class needs a fourth slab: no id is left. */
    CHECK(slab_pool_alloc(&sp, 200) == NULL);
    /* Empty the first slab (and not the last one with room): its id goes
     * back and the other class gets it. */
    uint32_t first = slab_pool_ref(p[0]) >> SLAB_REF_OFF_BITS;
    size_t freed = 0;
    for (size_t i = 0; i < N; i++)
        if ((slab_pool_ref(p[i]) >> SLAB_REF_OFF_BITS) == first) {
            slab_pool_free(&sp, p[i]);
            p[i] = NULL;
            freed++;
        }
    CHECK(freed > 0);
    unsigned char *q = slab_pool_alloc(&sp, 200);
    CHECK(q != NULL);
    CHECK_EQ(slab_pool_ref(q) >> SLAB_REF_OFF_BITS, first);
    CHECK(slab_pool_at(&sp, slab_pool_ref(q)) == q);
    slab_pool_free(&sp, q);
    for (size_t i = 0; i < N; i++)
        if (p[i]) slab_pool_free(&sp, p[i]);
    slab_pool_destroy(&sp);
    CHECK_EQ(slab_pool_bytes(&sp), 0);
}

/* The slabs of pools with references are counted without a lock (INFO's
 * keyspace_slab_bytes): a slab taken adds one, a slab given back or
 * destroyed with its pool takes it off; a plain pool is not counted. */
TEST(slab, reference_pool_slabs_are_counted) {
    size_t start = slab_ref_pool_bytes();
    slab_pool plain;
    slab_pool_init(&plain);
    void *x = slab_pool_alloc(&plain, 64);
    CHECK(x != NULL);
    CHECK_EQ(slab_ref_pool_bytes(), start);
    slab_pool_free(&plain, x);
    slab_pool_destroy(&plain);
    slab_pool sp;
    slab_pool_init_refs(&sp, 100);
    enum { PER = (SLAB_BYTES - 64) / 64, N = 3 * PER };
    static unsigned char *p[N];
    for (size_t i = 0; i < N; i++) CHECK((p[i] = slab_pool_alloc(&sp, 64)) != NULL);
    CHECK_EQ(sp.nslabs, 3);
    CHECK_EQ(slab_ref_pool_bytes(), start + 3 * SLAB_BYTES);
    /* The last slab's slots go: the pool keeps it against churn (still
     * counted) until a purge gives it back. */
    for (size_t i = 2 * PER; i < N; i++) slab_pool_free(&sp, p[i]);
    CHECK_EQ(slab_ref_pool_bytes(), start + (size_t)sp.nslabs * SLAB_BYTES);
    CHECK_EQ(slab_pool_purge(&sp), 1);
    CHECK_EQ(slab_ref_pool_bytes(), start + 2 * SLAB_BYTES);
    for (size_t i = 0; i < 2 * PER; i++) slab_pool_free(&sp, p[i]);
    slab_pool_destroy(&sp);
    CHECK_EQ(slab_ref_pool_bytes(), start);
}

/* A class of ten slabs with five live slots each: evacuation marks the
 * sparsest eight (one slab holds the 50, one more is kept spare); nothing
 * new goes to a marked slab, each empties as its slots move and goes back,
 * and a slab still marked at the end takes slots again. */
TEST(slab, pool_evacuation) {
    slab_pool sp;
    slab_pool_init_refs(&sp, 1000);
    enum { PER = (SLAB_BYTES - 64) / 64, N = 10 * PER };
    static unsigned char *p[N];
    for (size_t i = 0; i < N; i++) {
        p[i] = slab_pool_alloc(&sp, 64);
        CHECK(p[i] != NULL);
        fill(p[i], 64, (uint32_t)i);
    }
    CHECK_EQ(sp.nslabs, 10);
    CHECK_EQ(slab_pool_evacuate(&sp), 0); /* full slabs: nothing to gain */
    for (size_t i = 0; i < N; i++)
        if (i % PER >= 5) {
            slab_pool_free(&sp, p[i]);
            p[i] = NULL;
        }
    CHECK_EQ(sp.nslabs, 10);
    CHECK_EQ(slab_pool_evacuate(&sp), 8);
    size_t marked = 0;
    for (size_t i = 0; i < N; i++) marked += p[i] && slab_pool_marked(p[i]);
    CHECK_EQ(marked, 40);
    for (int k = 0; k < 20; k++) {
        unsigned char *q = slab_pool_alloc(&sp, 60);
        CHECK(q != NULL && !slab_pool_marked(q));
        slab_pool_free(&sp, q);
    }
    /* Move all but one slab's slots: seven slabs go back. */
    unsigned char *left = NULL;
    for (size_t i = 0; i < N; i++) {
        if (!p[i] || !slab_pool_marked(p[i])) continue;
        if (!left) left = p[i];
        if (((uintptr_t)p[i] ^ (uintptr_t)left) < SLAB_BYTES) continue; /* left's slab */
        unsigned char *q = slab_pool_alloc(&sp, 64);
        CHECK(q != NULL && !slab_pool_marked(q));
        memcpy(q, p[i], 64);
        slab_pool_free(&sp, p[i]);
        p[i] = q;
    }
    CHECK_EQ(sp.nslabs, 3);
    CHECK(slab_pool_marked(left));
    slab_pool_evacuate_end(&sp);
    CHECK(!slab_pool_marked(left));
    for (size_t i = 0; i < N; i++)
        if (p[i]) CHECK(intact(p[i], 64, (uint32_t)i));
    /* The unmarked slab takes slots again: the three slabs fill up before
     * a fourth is made. */
    enum { MORE = 3 * PER - 50 };
    static unsigned char *more[MORE];
    for (int k = 0; k < MORE; k++) CHECK((more[k] = slab_pool_alloc(&sp, 64)) != NULL);
    CHECK_EQ(sp.nslabs, 3);
    for (int k = 0; k < MORE; k++) slab_pool_free(&sp, more[k]);
    for (size_t i = 0; i < N; i++)
        if (p[i]) slab_pool_free(&sp, p[i]);
    slab_pool_destroy(&sp);
    CHECK_EQ(slab_pool_bytes(&sp), 0);
}

/* The empty slab a class keeps against churn is among the sparsest: it
 * goes back at once rather than stay marked with nothing to free it. */
TEST(slab, pool_evacuation_of_an_empty_slab) {
    slab_pool sp;
    slab_pool_init_refs(&sp, 1000);
    enum { PER = (SLAB_BYTES - 64) / 128, N = 6 * PER };
    static unsigned char *p[N];
    for (size_t i = 0; i < N; i++) CHECK((p[i] = slab_pool_alloc(&sp, 128)) != NULL);
    /* Empty the last slab whole (it is kept: the class's only one with
     * room), then all but one slot of the others. */
    for (size_t i = 5 * PER; i < N; i++) slab_pool_free(&sp, p[i]);
    CHECK_EQ(sp.nslabs, 6);
    for (size_t i = 0; i < 5 * PER; i++)
        if (i % PER) slab_pool_free(&sp, p[i]);
    CHECK_EQ(sp.nslabs, 6);
    CHECK_EQ(slab_pool_evacuate(&sp), 4); /* 5 live slots: 1 slab and a spare kept */
    CHECK_EQ(sp.nslabs, 5);
    for (size_t i = 0; i < 5 * PER; i += PER) {
        if (!slab_pool_marked(p[i])) continue;
        unsigned char *q = slab_pool_alloc(&sp, 128);
        CHECK(q != NULL && !slab_pool_marked(q));
        slab_pool_free(&sp, p[i]);
        p[i] = q;
    }
    CHECK_EQ(sp.nslabs, 2);
    slab_pool_evacuate_end(&sp);
    for (size_t i = 0; i < 5 * PER; i += PER) slab_pool_free(&sp, p[i]);
    slab_pool_destroy(&sp);
    CHECK_EQ(slab_pool_bytes(&sp), 0);
}

/* Slabs come from 2 MiB blocks: 300 slabs take at least two, and once
 * every slab is back at most one empty block stays mapped. */
TEST(slab, blocks_go_back) {
    size_t before = slab_chunk_bytes();
    slab_pool sp;
    slab_pool_init(&sp);
    enum { N = 300 * 31 }; /* 31 slots of 512 bytes per slab */
    static void *p[N];
    for (size_t i = 0; i < N; i++) {
        p[i] = slab_pool_alloc(&sp, 512);
        CHECK(p[i] != NULL);
        memset(p[i], (int)i, 512);
    }
    if (SLAB_CHUNKED) CHECK(slab_chunk_bytes() >= (size_t)300 * 16384);
    else CHECK_EQ(slab_chunk_bytes(), 0);
    for (size_t i = 0; i < N; i++) slab_pool_free(&sp, p[i]);
    slab_pool_destroy(&sp);
    CHECK(slab_chunk_bytes() <= before + ((size_t)2 << 20));
}

/* Under a fill floor a class gets a slab of its own once the blocks the
 * owner keeps elsewhere for it would fill a quarter of one, whatever the
 * slabs' free bytes; a class with fewer still does not. */
TEST(slab, pool_fill_floor_busy_class) {
    slab_pool sp;
    slab_pool_init(&sp);
    slab_pool_set_fill(&sp, 90);
    size_t outside = 0;
    while ((outside + 1) * 120 * 4 <= 16384) { /* 34 blocks of 120 bytes: under a quarter */
        CHECK(slab_pool_alloc(&sp, 120) == NULL);
        slab_pool_outside(&sp, 120, 128, +1);
        outside++;
    }
    CHECK_EQ(outside, 34);
    CHECK(slab_pool_alloc(&sp, 120) == NULL); /* 34 * 120 < 16384 / 4 */
    slab_pool_outside(&sp, 120, 128, +1);
    outside++;
    void *p = slab_pool_alloc(&sp, 120); /* 35 * 120 >= 16384 / 4 */
    CHECK(p != NULL);
    CHECK_EQ(slab_pool_bytes(&sp), 16384);
    CHECK(slab_pool_alloc(&sp, 200) == NULL); /* another class: none outside, the free bytes rule */
    slab_pool_free(&sp, p);
    while (outside--) slab_pool_outside(&sp, 120, 128, -1);
    slab_pool_destroy(&sp);
    CHECK_EQ(slab_pool_bytes(&sp), 0);
}

/* A class's count of blocks kept elsewhere saturates: one that reached
 * UINT16_MAX stays busy (gets a slab) after any number of them go back,
 * and the pool's byte counts still balance. */
TEST(slab, pool_outside_count_saturates) {
    slab_pool sp;
    slab_pool_init(&sp);
    slab_pool_set_fill(&sp, 90);
    for (size_t i = 0; i < (size_t)UINT16_MAX + 10; i++) slab_pool_outside(&sp, 8, 16, +1);
    CHECK_EQ(sp.outside_n[1], UINT16_MAX);
    for (size_t i = 0; i < (size_t)UINT16_MAX + 10; i++) slab_pool_outside(&sp, 8, 16, -1);
    CHECK_EQ(sp.outside, 0);
    CHECK_EQ(sp.outside_n[1], UINT16_MAX);
    void *p = slab_pool_alloc(&sp, 8); /* the free bytes rule alone would refuse */
    CHECK(p != NULL);
    CHECK(slab_pool_alloc(&sp, 16) == NULL);
    slab_pool_free(&sp, p);
    slab_pool_destroy(&sp);
}

/* An owner keeps a pool per shard (64 per database): the pool itself stays
 * in jemalloc's 768-byte class. */
TEST(slab, pool_is_small) {
    CHECK(sizeof(slab_pool) <= 768);
}

/* A fill floor: one slot of each of many classes does not get a slab per
 * class; a class gets its slab once the slabs' free bytes stay within a
 * fifth of what the owner holds (here and elsewhere). */
TEST(slab, pool_fill_floor) {
    slab_pool sp;
    slab_pool_init(&sp);
    slab_pool_set_fill(&sp, 80);
    CHECK(slab_pool_alloc(&sp, 120) == NULL); /* a slab for 120 bytes: 16 KiB free */
    sp.outside = 90000;                       /* the owner holds that much elsewhere */
    void *first = slab_pool_alloc(&sp, 120);
    CHECK(first != NULL);
    size_t refused = 0;
    for (size_t n = 8; n <= SLAB_MAX; n += 8)
        if (n != 120 && !slab_pool_alloc(&sp, n)) refused++;
    CHECK_EQ(refused, SLAB_NCLASS - 1);
    CHECK_EQ(slab_pool_bytes(&sp), 16384);
    /* Fill the one slab (136 slots of 120 bytes), then another class may start. */
    static void *p[136];
    p[0] = first;
    for (size_t i = 1; i < 136; i++) CHECK((p[i] = slab_pool_alloc(&sp, 120)) != NULL);
    CHECK_EQ(slab_pool_bytes(&sp), 16384);
    void *q = slab_pool_alloc(&sp, 200);
    CHECK(q != NULL);
    CHECK_EQ(slab_pool_bytes(&sp), 2 * 16384);
    CHECK(slab_pool_alloc(&sp, 300) == NULL); /* a third slab: 32 KiB free of 107 KB */
    slab_pool_free(&sp, q);
    for (size_t i = 0; i < 136; i++) slab_pool_free(&sp, p[i]);
    slab_pool_destroy(&sp);
    CHECK_EQ(slab_pool_bytes(&sp), 0);
}
