/* test_hll.c -- ds/hll: hashing and register choice against values read
 * from Redis 7.0 (PFDEBUG DECODE of one-element HLLs), the empty value's
 * bytes, counts and sizes Redis gives for "1".."N", the dense register
 * packing, sparse and dense copies fed the same elements holding the same
 * registers and counts, both promotions (size limit, register above 32),
 * and the corrupt-value checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/hll.h"
#include "unit.h"

static void add_str(hll *h, const char *s, size_t smax) { CHECK(hll_add(h, s, strlen(s), smax) >= 0); }

/* Registers of a value as one byte each. */
static void regs_of(const hll *h, uint8_t *out) {
    memset(out, 0, HLL_REGISTERS);
    CHECK_EQ(hll_merge_regs(out, h->p, h->len), 0);
}

TEST(hll, pattern_matches_redis) {
    /* element, register index, value: PFADD t <e>; PFDEBUG DECODE t */
    static const struct {
        const char *e;
        long index;
        int count;
    } want[] = {
        {"a", 12711, 2}, {"b", 15780, 1}, {"c", 8436, 1},          {"d", 7292, 1},
        {"", 5938, 2},   {"hello", 9216, 1}, {"foobar12345678", 13442, 2},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        long index;
        int count = hll_pattern(want[i].e, strlen(want[i].e), &index);
        CHECK_MSG(index == want[i].index && count == want[i].count, "%s: %ld,%d", want[i].e, index, count);
    }
    /* The count is bounded: 50 hash bits plus the forced one. */
    for (int i = 0; i < 100000; i++) {
        long index;
        char b[16];
        int n = snprintf(b, sizeof(b), "%d", i);
        int count = hll_pattern(b, (size_t)n, &index);
        CHECK(count >= 1 && count <= HLL_Q + 1 && index >= 0 && index < HLL_REGISTERS);
    }
}

TEST(hll, empty_value_bytes) {
    hll h;
    CHECK_EQ(hll_init_empty(&h), 0);
    static const unsigned char want[] = {'H', 'Y', 'L', 'L', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff};
    CHECK_EQ(h.len, sizeof(want));
    CHECK(memcmp(h.p, want, sizeof(want)) == 0);
    CHECK_EQ(hll_check(h.p, h.len), 0);
    uint64_t card = 1;
    CHECK(hll_cache_get(h.p, &card) && card == 0);
    int inv = 0;
    CHECK_EQ(hll_count(h.p, h.len, &inv), 0);
    CHECK_EQ(inv, 0);
    hll_free(&h);
}

TEST(hll, four_elements_bytes_match_redis) {
    /* redis-cli PFADD h a b c d; GET h */
    static const unsigned char want[] = {'H',  'Y',  'L',  'L',  1,    0,    0,    0,    0,    0,    0,
                                         0,    0,    0,    0,    0x80, 0x5c, 0x7b, 0x80, 0x44, 0x76, 0x80,
                                         0x50, 0xb1, 0x84, 0x4b, 0xfb, 0x80, 0x42, 0x5a};
    hll h;
    CHECK_EQ(hll_init_empty(&h), 0);
    const char *els[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) CHECK_EQ(hll_add(&h, els[i], 1, 3000), 1);
    CHECK_EQ(hll_add(&h, "a", 1, 3000), 0);
    CHECK_EQ(h.len, sizeof(want));
    CHECK(memcmp(h.p, want, sizeof(want)) == 0);
    CHECK_EQ(hll_count(h.p, h.len, NULL), 4);
    hll_free(&h);
}

TEST(hll, counts_match_redis) {
    /* PFADD t 1 2 ... N with the default hll-sparse-max-bytes. */
    hll h;
    char b[16];
    CHECK_EQ(hll_init_empty(&h), 0);
    for (int i = 1; i <= 1000; i++) {
        snprintf(b, sizeof(b), "%d", i);
        add_str(&h, b, HLL_SPARSE_DEFAULT_MAX_BYTES);
    }
    CHECK_EQ(hll_encoding(h.p), HLL_SPARSE);
    CHECK_EQ(h.len, 1922);
    CHECK_EQ(hll_count(h.p, h.len, NULL), 1001);
    for (int i = 1001; i <= 5000; i++) {
        snprintf(b, sizeof(b), "%d", i);
        add_str(&h, b, HLL_SPARSE_DEFAULT_MAX_BYTES);
    }
    CHECK_EQ(hll_encoding(h.p), HLL_DENSE);
    CHECK_EQ(h.len, HLL_DENSE_SIZE);
    CHECK_EQ(hll_count(h.p, h.len, NULL), 4985);
    hll_free(&h);
}

TEST(hll, dense_registers_pack) {
    unsigned char *regs = calloc(1, HLL_DENSE_SIZE - HLL_HDR_SIZE);
    uint8_t *want = malloc(HLL_REGISTERS);
    CHECK(regs && want);
    uint64_t x = 88172645463325252ULL;
    for (int round = 0; round < 20; round++) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            want[i] = (uint8_t)(x & 63);
            hll_dense_put(regs, i, want[i]);
        }
        /* Rewrite a few, including the first and last register. */
        long some[] = {0, 1, 2, 3, 4, 5, 8191, HLL_REGISTERS - 2, HLL_REGISTERS - 1};
        for (size_t k = 0; k < sizeof(some) / sizeof(some[0]); k++) {
            want[some[k]] = (uint8_t)((want[some[k]] + 17 + round) & 63);
            hll_dense_put(regs, some[k], want[some[k]]);
        }
        for (long i = 0; i < HLL_REGISTERS; i++) CHECK_EQ(hll_dense_get(regs, i), want[i]);
    }
    /* LSB-first packing: register 0 is the low 6 bits of byte 0. */
    memset(regs, 0, HLL_DENSE_SIZE - HLL_HDR_SIZE);
    hll_dense_put(regs, 0, 63);
    hll_dense_put(regs, 1, 1);
    CHECK_EQ(regs[0], 0x7f);
    CHECK_EQ(regs[1], 0);
    free(regs);
    free(want);
}

TEST(hll, sparse_and_dense_agree) {
    uint64_t total = unit_scaled(50000, 10000);
    hll s, d;
    uint8_t *rs = malloc(HLL_REGISTERS), *rd = malloc(HLL_REGISTERS);
    CHECK(rs && rd);
    CHECK_EQ(hll_init_empty(&s), 0);
    CHECK_EQ(hll_init_empty(&d), 0);
    CHECK_EQ(hll_to_dense(&d), 0);
    uint64_t next = 1, x = 12345;
    for (uint64_t j = 1; j <= total; j++) {
        unsigned char e[12];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = 1 + (size_t)(x % 12);
        for (size_t k = 0; k < n; k++) e[k] = (unsigned char)(x >> (5 * k));
        /* A sparse limit no stream reaches: it turns dense only for > 32. */
        int a = hll_add(&s, e, n, 1 << 20), b = hll_add(&d, e, n, 0);
        CHECK(a >= 0 && b >= 0);
        CHECK_EQ(a, b);
        if (j != next && j != total) continue;
        next = next * 3;
        regs_of(&s, rs);
        regs_of(&d, rd);
        CHECK(memcmp(rs, rd, HLL_REGISTERS) == 0);
        int inv = 0;
        uint64_t cs = hll_count(s.p, s.len, &inv), cd = hll_count(d.p, d.len, &inv);
        CHECK_EQ(inv, 0);
        CHECK_EQ(cs, cd);
        CHECK_EQ(hll_count_regs(rs), cd);
        /* The sparse copy turned dense equals the dense one. */
        hll t;
        CHECK_EQ(hll_load(&t, s.p, s.len), 0);
        CHECK_EQ(hll_to_dense(&t), 0);
        CHECK_EQ(t.len, d.len);
        CHECK(memcmp(t.p + HLL_HDR_SIZE, d.p + HLL_HDR_SIZE, HLL_DENSE_SIZE - HLL_HDR_SIZE) == 0);
        hll_free(&t);
    }
    hll_free(&s);
    hll_free(&d);
    free(rs);
    free(rd);
}

TEST(hll, promotion) {
    hll h;
    /* By size: the first change that would pass the limit turns it dense. */
    CHECK_EQ(hll_init_empty(&h), 0);
    size_t prev = h.len;
    char b[16];
    int i = 0;
    while (hll_encoding(h.p) == HLL_SPARSE) {
        prev = h.len;
        snprintf(b, sizeof(b), "e%d", i++);
        CHECK(hll_add(&h, b, strlen(b), 200) >= 0);
        CHECK(h.len <= 200 || hll_encoding(h.p) == HLL_DENSE);
    }
    CHECK(prev <= 200 && prev > 150);
    CHECK_EQ(h.len, HLL_DENSE_SIZE);
    hll_free(&h);
    /* By value: a register above 32 cannot be a VAL opcode. */
    CHECK_EQ(hll_init_empty(&h), 0);
    CHECK_EQ(hll_set(&h, 100, 32, 3000), 1);
    CHECK_EQ(hll_encoding(h.p), HLL_SPARSE);
    CHECK_EQ(hll_set(&h, 200, 33, 3000), 1);
    CHECK_EQ(hll_encoding(h.p), HLL_DENSE);
    CHECK_EQ(hll_dense_get(h.p + HLL_HDR_SIZE, 100), 32);
    CHECK_EQ(hll_dense_get(h.p + HLL_HDR_SIZE, 200), 33);
    CHECK_EQ(hll_set(&h, 200, 20, 3000), 0);
    hll_free(&h);
}

TEST(hll, sparse_edits) {
    /* Splits of XZERO/ZERO/VAL runs and joins of equal neighbours, checked
     * through the registers and the opcode count. */
    hll h;
    uint8_t want[HLL_REGISTERS] = {0}, got[HLL_REGISTERS];
    CHECK_EQ(hll_init_empty(&h), 0);
    long idx[] = {0, 1, 2, 3, 4, 100, 101, 102, 103, 16383, 16382, 8000, 8001, 8002, 8003, 8004};
    for (size_t k = 0; k < sizeof(idx) / sizeof(idx[0]); k++) {
        CHECK_EQ(hll_set(&h, idx[k], 3, 1 << 20), 1);
        want[idx[k]] = 3;
        regs_of(&h, got);
        CHECK(memcmp(got, want, sizeof(want)) == 0);
    }
    /* 0..4: VAL 3 x4 then VAL 3 x1 */
    CHECK_EQ(h.p[HLL_HDR_SIZE], 0x80 | (2 << 2) | 3);
    CHECK_EQ(hll_set(&h, 2, 5, 1 << 20), 1); /* split a VAL run */
    want[2] = 5;
    regs_of(&h, got);
    CHECK(memcmp(got, want, sizeof(want)) == 0);
    CHECK_EQ(hll_set(&h, 2, 4, 1 << 20), 0);
    hll_free(&h);
}

TEST(hll, corrupt_values) {
    unsigned char v[64] = {'H', 'Y', 'L', 'L', 1};
    CHECK_EQ(hll_check(v, 15), -1);
    CHECK_EQ(hll_check(v, 16), 0);
    v[4] = 2;
    CHECK_EQ(hll_check(v, 18), -1);
    v[4] = 0;
    CHECK_EQ(hll_check(v, 18), -1); /* dense of the wrong size */
    v[4] = 1;
    /* Runs short of 16384, past it, and a VAL past the last register. */
    const unsigned char *bad[] = {(const unsigned char *)"\x7f\xfe", (const unsigned char *)"\x7f\xff\x00",
                                  (const unsigned char *)"\x7f\xff\x80", (const unsigned char *)"\x7f"};
    size_t badlen[] = {2, 3, 3, 1};
    for (int k = 0; k < 4; k++) {
        memcpy(v + HLL_HDR_SIZE, bad[k], badlen[k]);
        size_t len = HLL_HDR_SIZE + badlen[k];
        uint8_t max[HLL_REGISTERS] = {0};
        int inv = 0;
        hll_count(v, len, &inv);
        CHECK_MSG(inv || k == 2, "case %d", k);
        CHECK_EQ(hll_merge_regs(max, v, len), HLL_ERR_INVALID);
        hll h;
        CHECK_EQ(hll_load(&h, v, len), 0);
        CHECK_EQ(hll_to_dense(&h), HLL_ERR_INVALID);
        hll_free(&h);
    }
    /* Cache bytes: little endian, top bit of the last byte = stale. */
    hll_cache_set(v, 0x0102030405060708ULL);
    CHECK_EQ(v[8], 0x08);
    CHECK_EQ(v[15], 0x01);
    uint64_t card;
    CHECK(hll_cache_get(v, &card) && card == 0x0102030405060708ULL);
    hll_cache_invalidate(v);
    CHECK(!hll_cache_get(v, &card));
}
