/* memusage.c -- used memory as INFO, MEMORY STATS and maxmemory see it: the
 * allocator's live bytes (jemalloc's stats.allocated; the sanitizer
 * runtime's count in ASan/TSan builds, where RSS never shrinks under the
 * quarantine), plus what the allocator does not see: full arena blocks
 * (mmap'd, possibly HugeTLB), the object store's heads and small objects,
 * and the swiss tables' mapped slot arrays. Slabs (mem/slab.c) count by
 * their live slots, not whole: a key's entry freed shows at once. */
#include "db/memusage.h"

#include <stdio.h>
#include <unistd.h>

#include "ds/swiss.h"
#include "mem/hugetlb.h"
#include "mem/objstore.h"
#include "mem/slab.h"
#include "mem/smallobj.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMUSAGE_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MEMUSAGE_SANITIZER 1
#endif
#endif
#ifndef MEMUSAGE_SANITIZER
#define MEMUSAGE_SANITIZER 0
#endif

#if MEMUSAGE_SANITIZER
/* The sanitizer runtime's own count (sanitizer/allocator_interface.h, which
 * gcc does not install; the runtime library it documents is linked by
 * -fsanitize). */
size_t __sanitizer_get_current_allocated_bytes(void);
#elif !defined(GOBLIN_NO_JEMALLOC)
#include <jemalloc/jemalloc.h>
#endif

/* Full arena blocks are mmap'd (possibly from the HugeTLB pool), so the
 * allocator does not see them: add them explicitly. */
static uint64_t block_bytes(int huge_only) {
    hugetlb_stats h;
    hugetlb_stats_get(&h);
    return h.huge_bytes + (huge_only ? 0 : h.plain_bytes);
}

/* The object store's heads and small objects live in mapped segments the
 * allocator does not see either: count what they hold (live records and
 * used head slots), so that freeing keys shows (maxmemory eviction). Both
 * are read without the stores' locks: INFO and the eviction check would
 * otherwise wait behind a thread freeing millions of values. */
static uint64_t store_bytes(void) {
    return smallobj_live_bytes() + objstore_heads_used() * objstore_ram_head();
}

/* counted (the allocator's and the blocks' bytes) with slabs by their live
 * slots instead of whole. */
static uint64_t slabs_by_slot(uint64_t counted) {
    uint64_t whole = slab_counted_bytes();
    return (counted > whole ? counted - whole : 0) + slab_live_bytes();
}

uint64_t memusage_used(void) {
#if MEMUSAGE_SANITIZER
    return slabs_by_slot(__sanitizer_get_current_allocated_bytes() + block_bytes(0)) + store_bytes() +
           swiss_mapped_bytes();
#elif !defined(GOBLIN_NO_JEMALLOC)
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    mallctl("epoch", &epoch, &sz, &epoch, sz);
    size_t allocated = 0;
    sz = sizeof(allocated);
    if (mallctl("stats.allocated", &allocated, &sz, NULL, 0) == 0)
        return slabs_by_slot(allocated + block_bytes(0)) + store_bytes() + swiss_mapped_bytes();
#endif
    /* RSS already counts plain blocks; HugeTLB pages are not in RSS. */
    return memusage_rss() + block_bytes(1);  /* mapped segments are in RSS */
}

uint64_t memusage_rss(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &rss) != 2) rss = 0;
        fclose(f);
    }
    return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

