/* test_objstore.c -- head pool, tails, small-object arena, SSD extents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem/objstore.h"
#include "mem/reclaim.h"
#include "mem/smallobj.h"
#include "mem/ssdtail.h"
#include "unit.h"

TEST(objstore, validate_constraints) {
    char err[256];
    objstore_config c = {.block = 2 << 20, .ram_head = 256 << 10, .io_chunk = 256 << 10,
                         .write_io_chunk = 1 << 20, .numa = -1};
    CHECK(objstore_validate(&c, err, sizeof(err)) == 0);
    c.ram_head = 3 << 10;
    CHECK(objstore_validate(&c, err, sizeof(err)) == -1);
    c.ram_head = 4 << 20; /* does not divide the block */
    CHECK(objstore_validate(&c, err, sizeof(err)) == -1);
    c.ram_head = 256 << 10;
    c.block = 1 << 20; /* below the 2 MiB HugeTLB page */
    CHECK(objstore_validate(&c, err, sizeof(err)) == -1);
    c.block = 3 << 20;
    CHECK(objstore_validate(&c, err, sizeof(err)) == -1);
    c.block = 4 << 20;
    CHECK(objstore_validate(&c, err, sizeof(err)) == 0);
    c.numa = 999;
    CHECK(objstore_validate(&c, err, sizeof(err)) == -1);
    c.numa = -1;
    c.memory = 1LL << 50;
    CHECK(objstore_validate(&c, err, sizeof(err)) == -1);
}

TEST(objstore, heads_and_ram_tails) {
    objstore_ensure_init();
    size_t H = objstore_ram_head();
    objhead h[20];
    for (int i = 0; i < 20; i++) {
        CHECK(objstore_head_alloc(&h[i]) == 0);
        memset(h[i].p, i, H);
    }
    for (int i = 0; i < 20; i++) CHECK(h[i].p[H - 1] == (char)i && h[i].p[0] == (char)i);
    for (int i = 0; i < 20; i++) objstore_head_free(&h[i]);
    size_t n = 3 * H + 7;
    char *src = malloc(n), *dst = malloc(n);
    for (size_t i = 0; i < n; i++) src[i] = (char)(i * 7);
    objtail t;
    CHECK(objstore_tail_write(&t, src, n) == 0);
    CHECK(objstore_tail_read(&t, dst) == 0);
    CHECK(memcmp(src, dst, n) == 0);
    objstore_tail_free(&t);
    CHECK(objstore_tail_write(&t, src, 0) == 0); /* exactly ram_head: no tail */
    CHECK(t.len == 0 && t.ram == NULL);
    free(src);
    free(dst);
}

TEST(smallobj, packed_reuse_and_compact) {
    objstore_ensure_init();
    smallobj_stats a, b;
    smallobj_stats_get(&a);
    uint32_t h[1000];
    for (int i = 0; i < 1000; i++) {
        h[i] = smallobj_alloc(1024);
        CHECK(h[i] != SMALLOBJ_NONE);
        /* Records follow each other, byte-aligned. */
        if (i) CHECK((char *)smallobj_rec(h[i]) == (char *)smallobj_rec(h[i - 1]) + 1032);
        CHECK(smallobj_record_size(smallobj_rec(h[i])) == 1032); /* 8 + 1024 */
        memset(smallobj_rec(h[i])->data, i & 0xff, 1024);
    }
    smallobj_stats_get(&b);
    /* A 1 KiB object costs about 1 KiB: the header only. */
    CHECK(b.live_bytes - a.live_bytes == 1000 * 1032);
    for (int i = 0; i < 1000; i += 2) smallobj_free(h[i]);
    smallobj_compact();
    for (int i = 1; i < 1000; i += 2) {
        CHECK((unsigned char)smallobj_rec(h[i])->data[0] == (unsigned)(i & 0xff));
        CHECK((unsigned char)smallobj_rec(h[i])->data[1023] == (unsigned)(i & 0xff));
    }
    for (int i = 1; i < 1000; i += 2) smallobj_free(h[i]);
    uint32_t z = smallobj_alloc(0);
    CHECK(z != SMALLOBJ_NONE);
    CHECK(smallobj_record_size(smallobj_rec(z)) == 32); /* the least a record takes */
    smallobj_free(z);
    /* 25 bytes take 33 (the 8-byte header and the bytes). */
    uint32_t r = smallobj_alloc(25);
    CHECK(r != SMALLOBJ_NONE && smallobj_record_size(smallobj_rec(r)) == 33 && smallobj_cap(smallobj_rec(r)) == 25);
    smallobj_free(r);
}

/* A freed record merges with free neighbours on both sides; the merged
 * record serves a request of their joint size. One that ends at the bump
 * point goes back to it. */
TEST(smallobj, freed_neighbours_merge) {
    objstore_ensure_init();
    uint32_t pin0 = smallobj_alloc(100);
    uint32_t a = smallobj_alloc(992), b = smallobj_alloc(1192), c = smallobj_alloc(792); /* 1000, 1200, 800 */
    uint32_t pin = smallobj_alloc(100);
    CHECK(pin0 && a && b && c && pin);
    CHECK((char *)smallobj_rec(b) == (char *)smallobj_rec(a) + 1000 &&
          (char *)smallobj_rec(c) == (char *)smallobj_rec(b) + 1200);
    smallrec *at = smallobj_rec(a);
    smallobj_free(a);
    smallobj_free(c);
    CHECK_EQ(smallobj_check(), 0);
    smallobj_free(b); /* joins both */
    CHECK_EQ(smallobj_check(), 0);
    uint32_t m = smallobj_alloc(3000 - 8);
    CHECK(m && smallobj_rec(m) == at && smallobj_record_size(at) == 3000);
    CHECK_EQ(smallobj_check(), 0);
    /* The last record before the bump point goes back to it. */
    smallrec *tail = smallobj_rec(pin);
    smallobj_free(pin);
    uint32_t again = smallobj_alloc(100);
    CHECK(again && smallobj_rec(again) == tail);
    smallobj_free(again);
    smallobj_free(m);
    smallobj_free(pin0);
    CHECK_EQ(smallobj_check(), 0);
}

/* A freed record is reused by a request of its size or up to 12 bytes
 * less, whole (its cap says the room it has); not by a smaller one. */
TEST(smallobj, freed_record_reused_with_slack) {
    objstore_ensure_init();
    uint32_t a = smallobj_alloc(2004), pin = smallobj_alloc(1); /* 8 + 2004 = 2012 bytes */
    CHECK(a && pin && smallobj_record_size(smallobj_rec(a)) == 2012);
    smallrec *at = smallobj_rec(a);
    smallobj_free(a);
    uint32_t b = smallobj_alloc(2004 - 12);
    CHECK(b && smallobj_rec(b) == at && smallobj_record_size(at) == 2012 && smallobj_cap(at) == 2004);
    smallobj_free(b);
    uint32_t c = smallobj_alloc(2004 - 13);
    CHECK(c && smallobj_rec(c) != at && smallobj_record_size(smallobj_rec(c)) == 1999);
    smallobj_free(c);
    smallobj_free(pin);
}

/* A compaction step moves records while readers are excluded; the segment
 * it empties goes to the reclaim thread, not to munmap inside the step
 * (unmapping frees every page: milliseconds). */
TEST(smallobj, step_hands_the_emptied_segment_to_reclaim) {
    objstore_ensure_init();
    enum { N = 8192 };
    static uint32_t h[N];
    for (int i = 0; i < N; i++) {
        h[i] = smallobj_alloc(1000);
        CHECK(h[i] != SMALLOBJ_NONE);
        memset(smallobj_rec(h[i])->data, i & 0xff, 1000);
    }
    unsigned char *first = (unsigned char *)smallobj_rec(h[0]);
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *page = (unsigned char *)((uintptr_t)first & ~(uintptr_t)(pg - 1));
    for (int i = 0; i < N; i++)
        if (i % 16) smallobj_free(h[i]);
    int released = 0, steps = 0;
    while (smallobj_wants_compaction() && steps++ < 64) {
        size_t before = reclaim_handed_bytes();
        size_t b = smallobj_compact_step();
        if (b == 0) break;
        released++;
        CHECK_EQ(reclaim_handed_bytes() - before, b);
    }
    CHECK(released > 0);
    /* The records survived their moves; the first segment went away. */
    for (int i = 0; i < N; i += 16) {
        CHECK((unsigned char)smallobj_rec(h[i])->data[0] == (unsigned)(i & 0xff));
        CHECK((unsigned char)smallobj_rec(h[i])->data[999] == (unsigned)(i & 0xff));
    }
    CHECK(smallobj_rec(h[0]) != (smallrec *)first);
    reclaim_drain();
    unsigned char vec;
    CHECK(mincore(page, (size_t)pg, &vec) == -1);
    for (int i = 0; i < N; i += 16) smallobj_free(h[i]);
}

/* Random alloc/free/compact against a model: every live
 * record keeps its bytes, and the arena's accounting adds up. */
TEST(smallobj, random_ops_against_a_model) {
    objstore_ensure_init();
    enum { N = 4000 };
    static uint32_t h[N];
    static unsigned sz[N];
    unsigned seed = 12345;
    smallobj_stats base;
    smallobj_stats_get(&base);
    for (int step = 0; step < 200000; step++) {
        seed = seed * 1103515245u + 12345u;
        int i = (int)((seed >> 8) % N);
        if (h[i]) {
            for (unsigned k = 0; k < sz[i]; k += 97) CHECK((unsigned char)smallobj_rec(h[i])->data[k] == (unsigned char)(i + k));
            smallobj_free(h[i]);
            h[i] = SMALLOBJ_NONE;
        } else {
            unsigned n = (seed >> 12) % 3000;
            h[i] = smallobj_alloc(n);
            CHECK(h[i] != SMALLOBJ_NONE);
            CHECK(smallobj_cap(smallobj_rec(h[i])) >= n);
            for (unsigned k = 0; k < n; k++) smallobj_rec(h[i])->data[k] = (char)(i + k);
            sz[i] = n;
        }
        if (step % 50000 == 49999) {
            CHECK_EQ(smallobj_check(), 0);
            smallobj_compact();
            CHECK_EQ(smallobj_check(), 0);
        }
        if (step % 5000 == 0) CHECK_EQ(smallobj_check(), 0);
    }
    smallobj_compact();
    CHECK_EQ(smallobj_check(), 0);
    size_t live = 0;
    for (int i = 0; i < N; i++)
        if (h[i]) {
            for (unsigned k = 0; k < sz[i]; k++) CHECK((unsigned char)smallobj_rec(h[i])->data[k] == (unsigned char)(i + k));
            live += smallobj_record_size(smallobj_rec(h[i]));
        }
    smallobj_stats now;
    smallobj_stats_get(&now);
    CHECK(now.live_bytes - base.live_bytes == live);
    for (int i = 0; i < N; i++)
        if (h[i]) smallobj_free(h[i]);
}

/* Sparse segments are evacuated and given back; every live record keeps
 * its bytes through its handle. */
TEST(smallobj, compaction_gives_segments_back) {
    objstore_ensure_init();
    enum { N = 40000 };
    static uint32_t h[N];
    smallobj_stats a, b, c;
    smallobj_stats_get(&a);
    for (int i = 0; i < N; i++) {
        size_t n = 200 + (size_t)(i % 7) * 150;
        h[i] = smallobj_alloc(n + (size_t)(i & 3)); /* records at odd addresses */
        CHECK(h[i] != SMALLOBJ_NONE);
        for (size_t k = 0; k < n; k++) smallobj_rec(h[i])->data[k] = (char)(i * 31 + k);
    }
    /* Keep one record in ten. */
    for (int i = 0; i < N; i++)
        if (i % 10) {
            smallobj_free(h[i]);
            h[i] = SMALLOBJ_NONE;
        }
    smallobj_stats_get(&b);
    CHECK(smallobj_wants_compaction());
    size_t released = smallobj_compact();
    smallobj_stats_get(&c);
    unit_log("%zu segments, %zu KiB live -> %zu segments after compaction (%zu KiB released, %llu records moved)",
             b.segments, b.live_bytes >> 10, c.segments, released >> 10, (unsigned long long)(c.moved - b.moved));
    CHECK(released > 0 && c.segments < b.segments);
    CHECK(c.seg_bytes - c.live_bytes < b.seg_bytes - b.live_bytes);
    CHECK(c.live_bytes == b.live_bytes);
    for (int i = 0; i < N; i += 10) {
        size_t n = 200 + (size_t)(i % 7) * 150;
        int ok = 1;
        for (size_t k = 0; k < n; k++) ok &= smallobj_rec(h[i])->data[k] == (char)(i * 31 + k);
        CHECK(ok);
    }
    CHECK(!smallobj_wants_compaction());
    for (int i = 0; i < N; i += 10) smallobj_free(h[i]);
    (void)a;
}

TEST(ssdtail, marker_extents_and_faults) {
    char dir[] = "/tmp/goblin-ssdtest-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char other[512], err[512];
    snprintf(other, sizeof(other), "%s/stranger", dir);
    FILE *f = fopen(other, "w");
    fclose(f);
    CHECK(ssdtail_open(dir, 65536, 16384, err, sizeof(err)) == -1); /* unmarked, non-empty */
    unlink(other);
    CHECK(ssdtail_open(dir, 65536, 16384, err, sizeof(err)) == 0);
    char marker[512];
    snprintf(marker, sizeof(marker), "%s/%s", dir, SSDTAIL_MARKER);
    struct stat sb;
    CHECK(stat(marker, &sb) == 0 && sb.st_size == 23);
    size_t n = 200000;
    char *src = malloc(n), *dst = malloc(n);
    for (size_t i = 0; i < n; i++) src[i] = (char)(i * 13 + 1);
    uint64_t off[3];
    uint32_t nc[3];
    for (int i = 0; i < 3; i++) CHECK(ssdtail_write(src, n - (size_t)i, &off[i], &nc[i]) == 0);
    CHECK(nc[0] == 4);
    for (int i = 0; i < 3; i++) {
        memset(dst, 0, n);
        CHECK(ssdtail_read(off[i], dst, n - (size_t)i) == 0);
        CHECK(memcmp(src, dst, n - (size_t)i) == 0);
    }
    ssdtail_inject(1, 1);
    uint64_t o2;
    uint32_t c2;
    CHECK(ssdtail_write(src, n, &o2, &c2) == -1);
    CHECK(ssdtail_read(off[1], dst, n) == -1);
    CHECK(ssdtail_read(off[1], dst, n - 1) == 0); /* faults were one-shot */
    CHECK(memcmp(src, dst, n - 1) == 0);
    ssdtail_free(off[1], nc[1]);
    CHECK(ssdtail_write(src, 1000, &o2, &c2) == 0);
    CHECK(o2 == off[1]); /* first fit reuses the hole */
    ssdtail_close();
    unlink(marker);
    rmdir(dir);
    free(src);
    free(dst);
}

/* A tail written in pieces by a writer, taken by the next ssdtail_write of
 * the same bytes; not taken by other bytes; a misordered piece fails it; a
 * writer dropped with writes in flight frees its buffer and extent after
 * them. */
TEST(ssdtail, writer_pieces_offer_and_drop) {
    char dir[] = "/tmp/goblin-ssdtest-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char err[512], marker[512];
    CHECK(ssdtail_open(dir, 65536, 16384, err, sizeof(err)) == 0);
    snprintf(marker, sizeof(marker), "%s/%s", dir, SSDTAIL_MARKER);
    if (ssdtail_async_fd() < 0) {
        unit_log("SKIPPED: no io_uring here, writers are not available");
    } else {
        size_t n = 200000 + 123, cap = (n + 4095) / 4096 * 4096;
        char *buf = aligned_alloc(4096, cap), *dst = malloc(n);
        for (size_t i = 0; i < n; i++) buf[i] = (char)(i * 7 + 3);
        ssdtail_stats s0, s1;
        ssdtail_stats_get(&s0);
        ssdtail_writer *w = ssdtail_writer_open(n);
        CHECK(w != NULL);
        CHECK(ssdtail_writer_put(w, 0, 65536, buf) == 0);
        CHECK(ssdtail_writer_put(w, 65536, 131072, buf + 65536) == 0);
        CHECK(ssdtail_writer_put(w, 196608, n - 196608, buf + 196608) == 0);
        CHECK(ssdtail_writer_finish(w) == 1);
        uint64_t off;
        uint32_t nc;
        ssdtail_offer(w, buf, n);
        CHECK(ssdtail_write(buf, n, &off, &nc) == 0);
        CHECK(ssdtail_offer_end() == 1);
        ssdtail_stats_get(&s1);
        CHECK(nc == 4 && s1.writes == s0.writes + 1 && s1.chunks_used == s0.chunks_used + 4);
        CHECK(ssdtail_read(off, dst, n) == 0 && memcmp(buf, dst, n) == 0);

        /* Offered, but the write is of other bytes: it writes them itself. */
        ssdtail_writer *w2 = ssdtail_writer_open(n);
        CHECK(w2 != NULL && ssdtail_writer_put(w2, 0, n, buf) == 0 && ssdtail_writer_finish(w2) == 1);
        ssdtail_offer(w2, buf, n);
        uint64_t off2;
        uint32_t nc2;
        CHECK(ssdtail_write(dst, n, &off2, &nc2) == 0);
        CHECK(ssdtail_offer_end() == 0);
        ssdtail_writer_drop(w2, NULL);
        ssdtail_stats_get(&s1);
        CHECK(s1.chunks_used == s0.chunks_used + 8);

        /* Pieces out of order: the writer fails and ends not ok. */
        ssdtail_writer *w3 = ssdtail_writer_open(n);
        CHECK(w3 != NULL && ssdtail_writer_put(w3, 4096, 4096, buf + 4096) == -1);
        CHECK(ssdtail_writer_finish(w3) == 0);
        ssdtail_writer_drop(w3, NULL);

        /* Dropped at once, its buffer with it: both go after the writes. */
        char *b4 = aligned_alloc(4096, cap);
        memcpy(b4, buf, n);
        ssdtail_writer *w4 = ssdtail_writer_open(n);
        CHECK(w4 != NULL && ssdtail_writer_put(w4, 0, n, b4) == 0);
        ssdtail_writer_drop(w4, b4);
        ssdtail_thread_exit(); /* waits for the writes in flight */
        ssdtail_stats_get(&s1);
        CHECK(s1.chunks_used == s0.chunks_used + 8);
        /* The extents of the failed and the dropped writers are free again:
         * first fit puts the next tail between the two kept ones. */
        uint64_t off3;
        uint32_t nc3;
        CHECK(ssdtail_write(buf, n, &off3, &nc3) == 0);
        CHECK(off3 == off + 4 * 65536 && off2 == off + 8 * 65536);
        ssdtail_free(off, nc);
        ssdtail_free(off2, nc2);
        ssdtail_free(off3, nc3);
        free(buf);
        free(dst);
    }
    ssdtail_close();
    unlink(marker);
    rmdir(dir);
}
