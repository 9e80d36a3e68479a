/* test_reclaim.c -- mem/reclaim: big mappings unmapped by a background
 * thread, and its two users (plain arena blocks, big swiss tables). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ds/swiss.h"
#include "mem/hugetlb.h"
#include "mem/reclaim.h"
#include "unit.h"

/* Is the page at p mapped? (mincore fails with ENOMEM on an unmapped one.) */
static int mapped(void *p) {
    unsigned char v;
    return mincore(p, 4096, &v) == 0 || errno != ENOMEM;
}

static void *touched_map(size_t len) {
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    memset(p, 0x5a, len);
    return p;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

TEST(reclaim, big_mappings_are_unmapped_in_the_background) {
    enum { N = 64 };
    size_t len = (size_t)2 << 20;
    void *p[N];
    for (int i = 0; i < N; i++) p[i] = touched_map(len);
    /* The same amount unmapped in place, for scale. */
    void *q[N];
    for (int i = 0; i < N; i++) q[i] = touched_map(len);
    double t0 = cpu_now();
    for (int i = 0; i < N; i++) munmap(q[i], len);
    double inplace = cpu_now() - t0;
    /* The hand-over's cost, the least of three rounds: a loaded virtual
     * machine charges the thread time it did not run now and then. */
    double handed = 1e9;
    for (int round = 0; round < 3; round++) {
        if (round)
            for (int i = 0; i < N; i++) p[i] = touched_map(len);
        t0 = cpu_now();
        for (int i = 0; i < N; i++) reclaim_unmap(p[i], len);
        double t = cpu_now() - t0;
        if (t < handed) handed = t;
        reclaim_drain();
        CHECK_EQ(reclaim_pending_bytes(), 0);
        for (int i = 0; i < N; i++) CHECK_MSG(!mapped(p[i]), "mapping %d still mapped after the drain", i);
    }
    unit_log("128 MiB of touched pages: munmap %.2f ms CPU of the caller, hand-over %.3f ms (least of 3)",
             inplace * 1e3, handed * 1e3);
    /* The hand-over frees no page: a few microseconds per mapping. */
    CHECK_MSG(handed < inplace / 4 + 0.0005, "hand-over took %.3f ms, munmap %.3f ms", handed * 1e3,
              inplace * 1e3);
}

TEST(reclaim, unmapped_in_pieces_to_the_last_page) {
    /* The thread unmaps in pieces; a length that is no multiple of a piece
     * is unmapped to its last page. */
    size_t len = ((size_t)3 << 20) + 3 * 4096;
    unsigned char *p = touched_map(len);
    reclaim_unmap(p, len);
    reclaim_drain();
    for (size_t off = 0; off < len; off += 4096) CHECK_MSG(!mapped(p + off), "page at %zu still mapped", off);
}

TEST(reclaim, small_mappings_and_forked_children_unmap_in_place) {
    void *s = touched_map(RECLAIM_MIN / 2);
    reclaim_unmap(s, RECLAIM_MIN / 2);
    CHECK(!mapped(s));
    reclaim_unmap(NULL, RECLAIM_MIN); /* nothing */
    /* The thread is the parent's: a child unmaps at once. */
    void *b = touched_map(RECLAIM_MIN * 4);
    reclaim_unmap(touched_map(RECLAIM_MIN), RECLAIM_MIN); /* the thread runs */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        reclaim_unmap(b, RECLAIM_MIN * 4);
        _exit(mapped(b) ? 1 : 0);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(mapped(b)); /* the child's unmap was its own */
    reclaim_unmap(b, RECLAIM_MIN * 4);
    reclaim_drain();
    CHECK(!mapped(b));
}

TEST(reclaim, plain_arena_blocks_are_counted_off_at_once) {
    hugetlb_stats s0, s1, s2;
    hugetlb_stats_get(&s0);
    int huge = 0;
    size_t len = (size_t)2 << 20;
    unsigned char *p = hugetlb_alloc_block(len, &huge);
    CHECK(p != NULL);
    memset(p, 1, len);
    hugetlb_stats_get(&s1);
    hugetlb_free_block(p, len, huge);
    hugetlb_stats_get(&s2);
    /* used_memory counts these: they drop with the free, not the unmap */
    CHECK_EQ(s2.plain_bytes + s2.huge_bytes, s0.plain_bytes + s0.huge_bytes);
    CHECK_EQ(s1.plain_bytes + s1.huge_bytes, s0.plain_bytes + s0.huge_bytes + len);
    reclaim_drain();
    CHECK(!mapped(p));
}

static uint64_t u32_hash(void *ctx, const void *slot) {
    (void)ctx;
    uint32_t v;
    memcpy(&v, slot, 4);
    return (uint64_t)v * 0x9e3779b97f4a7c15ULL;
}
static int u32_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    return memcmp(slot, key, 4) == 0;
}
static const swiss_type u32_type = {4, u32_hash, u32_match};

TEST(reclaim, big_swiss_tables_leave_the_count_at_once) {
    size_t before = swiss_mapped_bytes();
    swiss s;
    swiss_init(&s, &u32_type, NULL);
    uint32_t n = (uint32_t)unit_scaled(1500000, 1500000);
    for (uint32_t v = 0; v < n; v++) {
        uint64_t h = u32_hash(NULL, &v);
        memcpy(swiss_insert(&s, h), &v, 4);
    }
    while (swiss_rehash_step(&s, 1024)) {
    }
    swiss_free(&s);
    CHECK_EQ(swiss_mapped_bytes(), before);
    reclaim_drain();
    CHECK_EQ(reclaim_pending_bytes(), 0);
}
