/* hugetlb.c -- HugeTLB block provider with a safe fallback (see hugetlb.h).
 *
 * Why populate. A MAP_HUGETLB mapping normally reserves its pages at mmap
 * time, but the reservation does not cover every case (cgroup hugetlb limits,
 * cpuset/mempolicy nodes without free pages, MAP_NORESERVE, pages stolen by a
 * fork's copy-on-write): the first touch of an unbacked huge page is a
 * SIGBUS, which no allocator can recover from. MADV_POPULATE_WRITE (Linux
 * 5.14) faults every page in up front and reports a shortage as an errno.
 * A kernel without it answers EINVAL, which we treat like any other failure:
 * we never hand out a huge mapping we could not populate.
 *
 * Invariant: every block this module returns is fully usable memory; the
 * stats count live blocks by backing, so huge_bytes is exactly the memory
 * this process holds from the HugeTLB pool through arenas. */
#include "mem/hugetlb.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "mem/reclaim.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif

#define HUGETLB_DEFAULT_PAGE ((size_t)2 << 20)

static atomic_int hugetlb_on;
static atomic_uint hugetlb_fault;
static atomic_size_t hugetlb_pagesz;

static atomic_uint_fast64_t st_huge_blocks, st_huge_bytes;
static atomic_uint_fast64_t st_plain_blocks, st_plain_bytes;
static atomic_uint_fast64_t st_fallbacks, st_failures;

void hugetlb_set_enabled(int on) { atomic_store(&hugetlb_on, on ? 1 : 0); }
int hugetlb_enabled(void) { return atomic_load_explicit(&hugetlb_on, memory_order_relaxed); }
int arena_hugetlb_enabled(void) { return hugetlb_enabled(); }

const char *hugetlb_bgsave_refusal(void) {
    if (!hugetlb_enabled()) return NULL;
    return "BGSAVE is disabled while arena-hugetlb is on (copy-on-write would copy whole 2 MiB pages); use SAVE";
}

void hugetlb_set_fault(unsigned mask) { atomic_store(&hugetlb_fault, mask); }

/* Value in kB (or a bare count) of the first /proc/meminfo line starting
 * with key, or -1. */
static long meminfo_value(const char *key) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            if (sscanf(line + kl + 1, "%ld", &v) != 1) v = -1;
            break;
        }
    }
    fclose(f);
    return v;
}

size_t hugetlb_page_size(void) {
    size_t sz = atomic_load_explicit(&hugetlb_pagesz, memory_order_relaxed);
    if (sz) return sz;
    long kb = meminfo_value("Hugepagesize");
    sz = kb > 0 ? (size_t)kb * 1024 : HUGETLB_DEFAULT_PAGE;
    /* Only a power of two makes sense as a page size. */
    if (sz & (sz - 1)) sz = HUGETLB_DEFAULT_PAGE;
    atomic_store_explicit(&hugetlb_pagesz, sz, memory_order_relaxed);
    return sz;
}

int hugetlb_pool_pages(long *total, long *free_pages) {
    long t = meminfo_value("HugePages_Total");
    long f = meminfo_value("HugePages_Free");
    if (t < 0 || f < 0) return -1;
    if (total) *total = t;
    if (free_pages) *free_pages = f;
    return 0;
}

/* The HugeTLB attempt: mapped and populated, or NULL with nothing mapped. */
static void *try_huge(size_t size) {
    unsigned fault = atomic_load_explicit(&hugetlb_fault, memory_order_relaxed);
    if (fault & HUGETLB_FAULT_MAP) return NULL;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p == MAP_FAILED) return NULL;
    int rc = (fault & HUGETLB_FAULT_POPULATE) ? -1 : madvise(p, size, MADV_POPULATE_WRITE);
    if (rc != 0) {
        munmap(p, size);
        return NULL;
    }
    return p;
}

void *hugetlb_alloc_block(size_t size, int *huge) {
    *huge = 0;
    if (size == 0) return NULL;
    size_t hp = hugetlb_page_size();
    if (hugetlb_enabled() && size % hp == 0) {
        void *p = try_huge(size);
        if (p) {
            *huge = 1;
            atomic_fetch_add_explicit(&st_huge_blocks, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&st_huge_bytes, size, memory_order_relaxed);
            return p;
        }
        atomic_fetch_add_explicit(&st_fallbacks, 1, memory_order_relaxed);
    }
    unsigned fault = atomic_load_explicit(&hugetlb_fault, memory_order_relaxed);
    void *p = (fault & HUGETLB_FAULT_PLAIN)
                  ? MAP_FAILED
                  : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        atomic_fetch_add_explicit(&st_failures, 1, memory_order_relaxed);
        return NULL;
    }
    atomic_fetch_add_explicit(&st_plain_blocks, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st_plain_bytes, size, memory_order_relaxed);
    return p;
}

void hugetlb_free_block(void *p, size_t size, int huge) {
    if (!p) return;
    /* Ordinary pages: the kernel frees each one (~0.13 ms per 2 MiB block
     * touched), so a background thread does it; HugeTLB pages go straight
     * back to the pool (cheap, and the next block may need them). */
    if (huge) munmap(p, size);
    else reclaim_unmap(p, size);
    if (huge) {
        atomic_fetch_sub_explicit(&st_huge_blocks, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&st_huge_bytes, size, memory_order_relaxed);
    } else {
        atomic_fetch_sub_explicit(&st_plain_blocks, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&st_plain_bytes, size, memory_order_relaxed);
    }
}

void hugetlb_stats_get(hugetlb_stats *st) {
    st->huge_blocks = atomic_load_explicit(&st_huge_blocks, memory_order_relaxed);
    st->huge_bytes = atomic_load_explicit(&st_huge_bytes, memory_order_relaxed);
    st->plain_blocks = atomic_load_explicit(&st_plain_blocks, memory_order_relaxed);
    st->plain_bytes = atomic_load_explicit(&st_plain_bytes, memory_order_relaxed);
    st->fallbacks = atomic_load_explicit(&st_fallbacks, memory_order_relaxed);
    st->failures = atomic_load_explicit(&st_failures, memory_order_relaxed);
}
