/* hugetlb.h -- the block provider behind full-size arena blocks.
 *
 * hugetlb_alloc_block() hands out page-aligned, zero-filled mappings. With
 * --arena-hugetlb on it first tries an explicit MAP_HUGETLB mapping from the
 * kernel's reserved pool (vm.nr_hugepages) and prefaults it with
 * madvise(MADV_POPULATE_WRITE), so a short pool is an error we handle here
 * instead of a SIGBUS on first touch. Any failure unmaps the attempt and
 * falls back to ordinary pages silently; a counter records how often.
 *
 * Pure module: no server types. Thread-safe (state is atomics). */
#ifndef GOBLIN_MEM_HUGETLB_H
#define GOBLIN_MEM_HUGETLB_H

#include <stddef.h>
#include <stdint.h>

/* Turn HugeTLB-backed blocks on or off (the --arena-hugetlb flag). Blocks
 * already handed out keep their backing. */
void hugetlb_set_enabled(int on);
int hugetlb_enabled(void);
/* The question the persistence code asks: is --arena-hugetlb on? (named
 * after the flag). While it is, fork-based BGSAVE is refused. */
int arena_hugetlb_enabled(void);
/* NULL when BGSAVE is allowed, else the reason to show in the error reply
 * and in INFO. */
const char *hugetlb_bgsave_refusal(void);

/* Default HugeTLB page size of the platform (Hugepagesize in /proc/meminfo;
 * 2 MiB when unknown). */
size_t hugetlb_page_size(void);

/* A mapping of size bytes (size > 0). *huge is set to 1 when it is backed by
 * HugeTLB pages: only when enabled and size is a multiple of
 * hugetlb_page_size(). NULL when even ordinary pages cannot be mapped. */
void *hugetlb_alloc_block(size_t size, int *huge);
/* Give back a block from hugetlb_alloc_block with the same size and flag. */
void hugetlb_free_block(void *p, size_t size, int huge);

typedef struct hugetlb_stats {
    uint64_t huge_blocks;   /* live HugeTLB-backed blocks */
    uint64_t huge_bytes;    /* bytes mapped from the HugeTLB pool */
    uint64_t plain_blocks;  /* live blocks on ordinary pages */
    uint64_t plain_bytes;
    uint64_t fallbacks;     /* enabled, tried HugeTLB, got ordinary pages */
    uint64_t failures;      /* not even ordinary pages could be mapped */
} hugetlb_stats;

void hugetlb_stats_get(hugetlb_stats *st);

/* Reserved pool as the kernel reports it (HugePages_Total / _Free).
 * Returns 0, or -1 when /proc/meminfo cannot be read. */
int hugetlb_pool_pages(long *total, long *free_pages);

/* Fault injection for tests: each set bit makes the matching step fail. */
#define HUGETLB_FAULT_MAP 1u      /* the MAP_HUGETLB mmap */
#define HUGETLB_FAULT_POPULATE 2u /* madvise(MADV_POPULATE_WRITE) */
#define HUGETLB_FAULT_PLAIN 4u    /* the ordinary-pages mmap */
void hugetlb_set_fault(unsigned mask);

#endif
