/* test_rdb.c -- the pure codecs under the RDB reader and writer: CRC-64,
 * LZF, and the packed blobs (listpack, ziplist, intset, zipmap).
 *
 * The unit-test binary links util/, ds/, mem/ and persist/packed.c (a
 * pure codec). The dataset-level reader and writer (rdb_load.c, rdb_save.c) are exercised by
 * tests/persist/test_persist.py and tests/unit/persistence.tcl against
 * real files and redis-server. Byte layouts below were checked against
 * what redis-server 7.0.15 writes (DEBUG LISTPACK / redis-check-rdb). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/crc64.h"
#include "util/lzf.h"
#include "persist/packed.h"
#include "unit.h"

/* ---- CRC-64 ----------------------------------------------------------------- */

static uint64_t crc64_bitwise(uint64_t crc, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++) crc = (crc & 1) ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ULL : crc >> 1;
    }
    return crc;
}

TEST(rdb, crc64_check_value) {
    CHECK_EQ(crc64_update(0, "123456789", 9), 0xe9c6d914c4b8d9caULL);
    CHECK_EQ(crc64_update(0, "", 0), 0);
    /* Continuing a CRC is the same as one pass. */
    CHECK_EQ(crc64_update(crc64_update(0, "12345", 5), "6789", 4), 0xe9c6d914c4b8d9caULL);
}

TEST(rdb, crc64_slicing_matches_bitwise) {
    unit_rng r = {42};
    unsigned char buf[4099];
    for (size_t i = 0; i < sizeof(buf); i++) buf[i] = (unsigned char)unit_rand(&r);
    for (int t = 0; t < 200; t++) {
        size_t off = unit_below(&r, 16), n = unit_below(&r, sizeof(buf) - 16);
        uint64_t want = crc64_bitwise(0, buf + off, n);
        CHECK_EQ(crc64_update(0, buf + off, n), want);
        /* In pieces, at unaligned boundaries. */
        size_t cut = n ? unit_below(&r, n) : 0;
        CHECK_EQ(crc64_update(crc64_update(0, buf + off, cut), buf + off + cut, n - cut), want);
    }
}

/* The folding path (64 bytes and more, where the CPU has PCLMULQDQ) at
 * every length around its block boundaries, every alignment, with a
 * running state, and over a megabyte. */
TEST(rdb, crc64_folding_matches_bitwise) {
    unit_rng r = {43};
    size_t big = 1u << 20;
    unsigned char *buf = malloc(big + 16);
    CHECK(buf != NULL);
    for (size_t i = 0; i < big + 16; i++) buf[i] = (unsigned char)unit_rand(&r);
    for (size_t n = 56; n < 300; n++) {
        size_t off = n % 16;
        uint64_t init = unit_rand(&r);
        CHECK_EQ(crc64_update(init, buf + off, n), crc64_bitwise(init, buf + off, n));
    }
    CHECK_EQ(crc64_update(0, buf + 3, big), crc64_bitwise(0, buf + 3, big));
    free(buf);
}

/* ---- LZF -------------------------------------------------------------------- */

static void lzf_roundtrip(const unsigned char *in, size_t n) {
    static lzf_state st;
    size_t cap = n + n / 16 + 64;
    unsigned char *c = malloc(cap), *d = malloc(n + 1);
    CHECK(c && d);
    size_t cn = lzf_compress(&st, in, n, c, cap);
    if (n) CHECK_MSG(cn > 0, "compress of %zu bytes failed with room %zu", n, cap);
    if (cn) {
        CHECK_EQ(lzf_decompress(c, cn, d, n), n);
        CHECK(memcmp(in, d, n) == 0);
        /* One byte less of room is refused, never overrun. */
        if (n) CHECK_EQ(lzf_decompress(c, cn, d, n - 1), 0);
        /* And the compressor refuses an output buffer that is too small. */
        CHECK_EQ(lzf_compress(&st, in, n, c, cn - 1), 0);
    }
    free(c);
    free(d);
}

TEST(rdb, lzf_roundtrips) {
    unit_rng r = {7};
    unsigned char *buf = malloc(200000);
    CHECK(buf);
    size_t sizes[] = {1, 2, 3, 4, 20, 21, 31, 32, 33, 100, 264, 265, 8191, 8192, 8193, 70000, 200000};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)unit_rand(&r); /* incompressible */
        lzf_roundtrip(buf, n);
        memset(buf, 'a', n); /* one long run: maximal references */
        lzf_roundtrip(buf, n);
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)"abcabd"[i % 6]; /* short period */
        lzf_roundtrip(buf, n);
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i % 7 == 0 ? unit_rand(&r) : 'x' + i % 3);
        lzf_roundtrip(buf, n);
    }
    /* Text that compresses: at least 3x. */
    static lzf_state st;
    size_t n = 0;
    for (int i = 0; n < 10000; i++) n += (size_t)sprintf((char *)buf + n, "element-%d,", i % 50);
    unsigned char out[10000];
    size_t cn = lzf_compress(&st, buf, n, out, sizeof(out));
    CHECK_MSG(cn > 0 && cn < n / 3, "compressed %zu to %zu", n, cn);
    free(buf);
}

TEST(rdb, lzf_rejects_corrupt_input) {
    unsigned char out[64];
    /* A back reference before the start of the output. */
    const unsigned char before[] = {0x20, 0x05};
    CHECK_EQ(lzf_decompress(before, sizeof(before), out, sizeof(out)), 0);
    /* A literal run longer than the input. */
    const unsigned char longlit[] = {0x05, 'a', 'b'};
    CHECK_EQ(lzf_decompress(longlit, sizeof(longlit), out, sizeof(out)), 0);
    /* A reference missing its offset byte. */
    const unsigned char cut[] = {0x00, 'a', 0x20};
    CHECK_EQ(lzf_decompress(cut, sizeof(cut), out, sizeof(out)), 0);
    const unsigned char cut7[] = {0x00, 'a', 0xE0};
    CHECK_EQ(lzf_decompress(cut7, sizeof(cut7), out, sizeof(out)), 0);
    /* Output larger than the room. */
    const unsigned char big[] = {0x00, 'a', 0xE0, 0xFF, 0x00};
    CHECK_EQ(lzf_decompress(big, sizeof(big), out, sizeof(out)), 0);
    /* Random garbage never writes past the room (run under ASan). */
    unit_rng r = {99};
    unsigned char in[256];
    for (int t = 0; t < 20000; t++) {
        size_t n = 1 + unit_below(&r, sizeof(in));
        for (size_t i = 0; i < n; i++) in[i] = (unsigned char)unit_rand(&r);
        size_t room = unit_below(&r, sizeof(out) + 1);
        unsigned char *o = malloc(room ? room : 1);
        size_t got = lzf_decompress(in, n, o, room);
        CHECK(got <= room);
        free(o);
    }
}

/* ---- listpack ------------------------------------------------------------------ */

static void lp_expect(const unsigned char *blob, size_t n, const pk_elem *want, size_t nwant) {
    lp_iter it;
    pk_elem e;
    CHECK(lp_iter_init(&it, blob, n) == 0);
    for (size_t i = 0; i < nwant; i++) {
        CHECK_MSG(lp_iter_next(&it, &e) == 1, "element %zu missing", i);
        CHECK_EQ(e.isint, want[i].isint);
        if (e.isint) CHECK_MSG(e.v == want[i].v, "element %zu: %lld != %lld", i, (long long)e.v, (long long)want[i].v);
        else CHECK(e.n == want[i].n && memcmp(e.s, want[i].s, e.n) == 0);
    }
    CHECK_EQ(lp_iter_next(&it, &e), 0);
}

TEST(rdb, listpack_exact_bytes) {
    /* What Redis 7.0 stores for HSET h a 1: 12 bytes. */
    lp_builder b;
    lpb_init(&b);
    lpb_add_str(&b, "a", 1);
    lpb_add_str(&b, "1", 1);
    size_t n;
    const unsigned char *p = lpb_finish(&b, &n);
    const unsigned char want[] = {0x0c, 0, 0, 0, 0x02, 0, 0x81, 'a', 0x02, 0x01, 0x01, 0xff};
    CHECK_EQ(n, sizeof(want));
    CHECK(memcmp(p, want, n) == 0);
    /* -1 as a 13-bit integer (0x1fff: df ff), 300 likewise (c1 2c). */
    lpb_reset(&b);
    lpb_add_int(&b, -1);
    lpb_add_int(&b, 300);
    p = lpb_finish(&b, &n);
    const unsigned char want2[] = {0x0d, 0, 0, 0, 0x02, 0, 0xdf, 0xff, 0x02, 0xc1, 0x2c, 0x02, 0xff};
    CHECK_EQ(n, sizeof(want2));
    CHECK(memcmp(p, want2, n) == 0);
    lpb_free(&b);
}

TEST(rdb, listpack_every_encoding_roundtrips) {
    static const int64_t ints[] = {0, 1, 127, 128, -1, 4095, 4096, -4096, -4097, 32767, 32768, -32768, -32769,
                                   8388607, 8388608, -8388608, -8388609, INT32_MAX, (int64_t)INT32_MAX + 1,
                                   INT32_MIN, (int64_t)INT32_MIN - 1, INT64_MAX, INT64_MIN};
    size_t nints = sizeof(ints) / sizeof(ints[0]);
    static const size_t lens[] = {0, 1, 63, 64, 120, 126, 127, 128, 4095, 4096, 16380, 16400, 70000, 2100000};
    size_t nlens = sizeof(lens) / sizeof(lens[0]);
    char *big = malloc(2100000);
    CHECK(big);
    for (size_t i = 0; i < 2100000; i++) big[i] = (char)('a' + i % 26);
    pk_elem *want = calloc(nints * 2 + nlens + 8, sizeof(pk_elem));
    lp_builder b;
    lpb_init(&b);
    size_t k = 0;
    char txt[32];
    for (size_t i = 0; i < nints; i++) {
        lpb_add_int(&b, ints[i]);
        want[k++] = (pk_elem){NULL, 0, ints[i], 1};
        int tn = snprintf(txt, sizeof(txt), "%lld", (long long)ints[i]);
        lpb_add_str(&b, txt, (size_t)tn); /* canonical integers become integers */
        want[k++] = (pk_elem){NULL, 0, ints[i], 1};
    }
    for (size_t i = 0; i < nlens; i++) {
        lpb_add_str(&b, big, lens[i]);
        want[k++] = (pk_elem){(const unsigned char *)big, lens[i], 0, 0};
    }
    const char *strs[] = {"007", "-0", "+1", " 1", "1 ", "9223372036854775808", "1.5"};
    for (size_t i = 0; i < 7; i++) {
        lpb_add_str(&b, strs[i], strlen(strs[i]));
        want[k++] = (pk_elem){(const unsigned char *)strs[i], strlen(strs[i]), 0, 0};
    }
    size_t n;
    const unsigned char *p = lpb_finish(&b, &n);
    CHECK(p);
    lp_expect(p, n, want, k);
    lpb_free(&b);
    free(want);
    free(big);
}

TEST(rdb, listpack_count_saturates) {
    lp_builder b;
    lpb_init(&b);
    for (int i = 0; i < 70000; i++) lpb_add_int(&b, i % 100);
    size_t n;
    const unsigned char *p = lpb_finish(&b, &n);
    CHECK_EQ(p[4] | p[5] << 8, 65535);
    lp_iter it;
    pk_elem e;
    CHECK(lp_iter_init(&it, p, n) == 0);
    int cnt = 0, r;
    while ((r = lp_iter_next(&it, &e)) > 0) cnt++;
    CHECK_EQ(r, 0);
    CHECK_EQ(cnt, 70000);
    lpb_free(&b);
}

/* Walk the whole blob; -1 corrupt, else the number of elements. */
static long lp_walk(const unsigned char *p, size_t n) {
    lp_iter it;
    pk_elem e;
    if (lp_iter_init(&it, p, n) != 0) return -1;
    long cnt = 0;
    int r;
    while ((r = lp_iter_next(&it, &e)) > 0) cnt++;
    return r < 0 ? -1 : cnt;
}

TEST(rdb, listpack_rejects_corruption) {
    lp_builder b;
    lpb_init(&b);
    lpb_add_str(&b, "hello", 5);
    lpb_add_int(&b, 1000000);
    lpb_add_str(&b, "x", 1);
    size_t n;
    const unsigned char *p0 = lpb_finish(&b, &n);
    unsigned char *p = malloc(n);
    memcpy(p, p0, n);
    CHECK_EQ(lp_walk(p, n), 3);
    /* Every truncation: the header's byte count or the terminator fails. */
    for (size_t cut = 0; cut < n; cut++) {
        unsigned char *q = malloc(cut ? cut : 1);
        memcpy(q, p, cut);
        CHECK_EQ(lp_walk(q, cut), -1);
        free(q);
    }
    /* Wrong element count in the header. */
    p[4] = 2;
    CHECK_EQ(lp_walk(p, n), -1);
    p[4] = 3;
    /* A back length that does not match. */
    p[6 + 1 + 5] ^= 1;
    CHECK_EQ(lp_walk(p, n), -1);
    p[6 + 1 + 5] ^= 1;
    /* An unused encoding byte. */
    p[6] = 0xF7;
    CHECK_EQ(lp_walk(p, n), -1);
    /* Every single-byte change is either still a valid listpack or
     * rejected; nothing is read outside the blob (ASan). */
    memcpy(p, p0, n);
    for (size_t i = 0; i < n; i++) {
        for (int v = 0; v < 256; v++) {
            unsigned char *q = malloc(n);
            memcpy(q, p, n);
            q[i] = (unsigned char)v;
            long w = lp_walk(q, n);
            CHECK(w == -1 || w >= 0);
            free(q);
        }
    }
    free(p);
    lpb_free(&b);
}

/* ---- ziplist ------------------------------------------------------------------ */

typedef struct zlb {
    unsigned char buf[40000];
    size_t len, prev, last;
    unsigned count;
} zlb;

static void zlb_init(zlb *z) {
    memset(z, 0, sizeof(*z));
    z->len = 10;
    z->last = 10;
}

static void zlb_entry(zlb *z, const unsigned char *enc, size_t enclen, const void *data, size_t dlen) {
    size_t start = z->len;
    if (z->prev < 254) {
        z->buf[z->len++] = (unsigned char)z->prev;
    } else {
        z->buf[z->len++] = 254;
        for (int i = 0; i < 4; i++) z->buf[z->len++] = (unsigned char)(z->prev >> (8 * i));
    }
    memcpy(z->buf + z->len, enc, enclen);
    z->len += enclen;
    if (dlen) memcpy(z->buf + z->len, data, dlen);
    z->len += dlen;
    z->prev = z->len - start;
    z->last = start;
    z->count++;
}

static size_t zlb_finish(zlb *z) {
    z->buf[z->len++] = 0xFF;
    for (int i = 0; i < 4; i++) z->buf[i] = (unsigned char)(z->len >> (8 * i));
    for (int i = 0; i < 4; i++) z->buf[4 + i] = (unsigned char)(z->last >> (8 * i));
    z->buf[8] = (unsigned char)z->count;
    z->buf[9] = (unsigned char)(z->count >> 8);
    return z->len;
}

static void zlb_str(zlb *z, const char *s, size_t n) {
    unsigned char enc[5];
    size_t el;
    if (n < 64) {
        enc[0] = (unsigned char)n;
        el = 1;
    } else if (n < 16384) {
        enc[0] = (unsigned char)(0x40 | (n >> 8));
        enc[1] = (unsigned char)n;
        el = 2;
    } else {
        enc[0] = 0x80;
        enc[1] = (unsigned char)(n >> 24);
        enc[2] = (unsigned char)(n >> 16);
        enc[3] = (unsigned char)(n >> 8);
        enc[4] = (unsigned char)n;
        el = 5;
    }
    zlb_entry(z, enc, el, s, n);
}

static void zlb_int(zlb *z, unsigned char enc, int64_t v, size_t bytes) {
    unsigned char d[8];
    for (size_t i = 0; i < bytes; i++) d[i] = (unsigned char)((uint64_t)v >> (8 * i));
    zlb_entry(z, &enc, 1, d, bytes);
}

static zlb zl_build_buf;

TEST(rdb, ziplist_every_encoding) {
    zlb *z = &zl_build_buf;
    zlb_init(z);
    static char big[20000];
    memset(big, 'q', sizeof(big));
    zlb_str(z, "", 0);
    zlb_str(z, big, 63);
    zlb_str(z, big, 64);
    zlb_str(z, big, 300); /* next prevlen takes 5 bytes */
    zlb_str(z, big, 16384);
    for (int v = 0; v <= 12; v++) {
        unsigned char e = (unsigned char)(0xF1 + v);
        zlb_entry(z, &e, 1, NULL, 0);
    }
    zlb_int(z, 0xFE, -100, 1);
    zlb_int(z, 0xC0, -30000, 2);
    zlb_int(z, 0xF0, -8000000, 3);
    zlb_int(z, 0xD0, -2000000000, 4);
    zlb_int(z, 0xE0, INT64_MIN, 8);
    size_t n = zlb_finish(z);
    zl_iter it;
    pk_elem e;
    CHECK(zl_iter_init(&it, z->buf, n) == 0);
    size_t slens[] = {0, 63, 64, 300, 16384};
    for (int i = 0; i < 5; i++) {
        CHECK(zl_iter_next(&it, &e) == 1);
        CHECK(!e.isint && e.n == slens[i]);
    }
    for (int v = 0; v <= 12; v++) {
        CHECK(zl_iter_next(&it, &e) == 1);
        CHECK(e.isint && e.v == v);
    }
    int64_t iv[] = {-100, -30000, -8000000, -2000000000, INT64_MIN};
    for (int i = 0; i < 5; i++) {
        CHECK(zl_iter_next(&it, &e) == 1);
        CHECK_MSG(e.isint && e.v == iv[i], "int %d: %lld", i, (long long)e.v);
    }
    CHECK_EQ(zl_iter_next(&it, &e), 0);
    /* A wrong tail offset, a wrong count, a wrong previous length. */
    unsigned char *q = malloc(n);
    memcpy(q, z->buf, n);
    q[4] ^= 1;
    CHECK(zl_iter_init(&it, q, n) == 0);
    int r;
    while ((r = zl_iter_next(&it, &e)) > 0) {
    }
    CHECK_EQ(r, -1);
    memcpy(q, z->buf, n);
    q[8] ^= 1;
    CHECK(zl_iter_init(&it, q, n) == 0);
    while ((r = zl_iter_next(&it, &e)) > 0) {
    }
    CHECK_EQ(r, -1);
    memcpy(q, z->buf, n);
    q[10 + 1] = 5; /* the second entry's previous length (was 1) */
    CHECK(zl_iter_init(&it, q, n) == 0);
    while ((r = zl_iter_next(&it, &e)) > 0) {
    }
    CHECK_EQ(r, -1);
    /* Truncations are rejected. */
    for (size_t cut = 0; cut + 1 < n; cut += 997) CHECK(zl_iter_init(&it, z->buf, cut) != 0);
    free(q);
    /* The empty ziplist. */
    zlb_init(z);
    n = zlb_finish(z);
    CHECK(zl_iter_init(&it, z->buf, n) == 0);
    CHECK_EQ(zl_iter_next(&it, &e), 0);
}

/* ---- intset ------------------------------------------------------------------- */

TEST(rdb, intset_widths_and_order) {
    int64_t a[] = {-5, 1, 300};
    int64_t b[] = {-70000, 1, 70000};
    int64_t c[] = {INT64_MIN, 0, INT64_MAX};
    int64_t *sets[] = {a, b, c};
    uint32_t widths[] = {2, 4, 8};
    for (int s = 0; s < 3; s++) {
        size_t n;
        unsigned char *blob = is_build(sets[s], 3, &n);
        CHECK(blob);
        CHECK_EQ(n, 8 + 3 * widths[s]);
        is_iter it;
        CHECK(is_iter_init(&it, blob, n) == 0);
        CHECK_EQ(it.width, widths[s]);
        int64_t v;
        for (int i = 0; i < 3; i++) {
            CHECK(is_iter_next(&it, &v) == 1);
            CHECK(v == sets[s][i]);
        }
        CHECK_EQ(is_iter_next(&it, &v), 0);
        /* Out of order, duplicated, bad width, bad length. */
        unsigned char *q = malloc(n);
        memcpy(q, blob, n);
        memcpy(q + 8, blob + 8 + widths[s], widths[s]); /* first = second */
        CHECK(is_iter_init(&it, q, n) == 0);
        int r;
        while ((r = is_iter_next(&it, &v)) > 0) {
        }
        CHECK_EQ(r, -1);
        memcpy(q, blob, n);
        q[0] = 3;
        CHECK(is_iter_init(&it, q, n) != 0);
        CHECK(is_iter_init(&it, blob, n - 1) != 0);
        free(q);
        free(blob);
    }
    size_t n;
    unsigned char *empty = is_build(NULL, 0, &n);
    is_iter it;
    CHECK(is_iter_init(&it, empty, n) == 0 && is_count(&it) == 0);
    free(empty);
}

/* ---- zipmap ------------------------------------------------------------------- */

TEST(rdb, zipmap_pairs) {
    unsigned char zm[700];
    size_t n = 0;
    zm[n++] = 2;
    zm[n++] = 3;
    memcpy(zm + n, "foo", 3);
    n += 3;
    zm[n++] = 3;
    zm[n++] = 2; /* two free bytes after the value */
    memcpy(zm + n, "bar", 3);
    n += 3;
    zm[n++] = 'X';
    zm[n++] = 'Y';
    zm[n++] = 1;
    zm[n++] = 'k';
    zm[n++] = 254; /* a 5-byte length */
    zm[n++] = 0x2c;
    zm[n++] = 0x01;
    zm[n++] = 0;
    zm[n++] = 0;
    zm[n++] = 0;
    memset(zm + n, 'v', 300);
    n += 300;
    zm[n++] = 0xFF;
    zm_iter it;
    pk_elem e;
    CHECK(zm_iter_init(&it, zm, n) == 0);
    CHECK(zm_iter_next(&it, &e) == 1 && e.n == 3 && memcmp(e.s, "foo", 3) == 0);
    CHECK(zm_iter_next(&it, &e) == 1 && e.n == 3 && memcmp(e.s, "bar", 3) == 0);
    CHECK(zm_iter_next(&it, &e) == 1 && e.n == 1 && e.s[0] == 'k');
    CHECK(zm_iter_next(&it, &e) == 1 && e.n == 300);
    CHECK_EQ(zm_iter_next(&it, &e), 0);
    /* Cut anywhere: never a read past the end, always -1 or a short walk
     * that ends in -1 (no terminator where it should be). */
    for (size_t cut = 1; cut < n; cut++) {
        unsigned char *q = malloc(cut);
        memcpy(q, zm, cut);
        q[cut - 1] = 0xFF;
        if (zm_iter_init(&it, q, cut) == 0) {
            int r;
            while ((r = zm_iter_next(&it, &e)) > 0) {
            }
            CHECK(r == -1 || r == 0);
        }
        free(q);
    }
}
