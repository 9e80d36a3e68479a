/* meminfo.c -- the memory engine's lines in INFO's `# Goblin` section:
 * arena blocks and bytes (live, dead, HugeTLB-backed), fallbacks,
 * compactions, and whether fork-based BGSAVE is allowed. */
#include <stdio.h>

#include "cmd/server/admin_family.h"
#include "cmd/families.h"
#include "ds/arena.h"
#include "mem/hugetlb.h"

static void meminfo_section(strbuf *b) {
    arena_stats a;
    hugetlb_stats h;
    long total = 0, free_pages = 0;
    arena_global_stats(&a);
    hugetlb_stats_get(&h);
    hugetlb_pool_pages(&total, &free_pages);
    const char *refusal = hugetlb_bgsave_refusal();
    strbuf_addf(b,
              "arena_hugetlb:%s\r\n"
              "arena_chunk_bytes:%zu\r\n"
              "arena_blocks:%llu\r\n"
              "arena_bytes_alloc:%llu\r\n"
              "arena_bytes_used:%llu\r\n"
              "arena_live_bytes:%llu\r\n"
              "arena_dead_bytes:%llu\r\n"
              "arena_entries:%llu\r\n"
              "arena_hugetlb_bytes:%llu\r\n"
              "arena_hugetlb_blocks:%llu\r\n"
              "arena_plain_block_bytes:%llu\r\n"
              "arena_hugetlb_fallbacks:%llu\r\n"
              "arena_compactions:%llu\r\n"
              "arena_moved_entries:%llu\r\n"
              "hugepages_total:%ld\r\n"
              "hugepages_free:%ld\r\n"
              "hugepage_size:%zu\r\n"
              "bgsave_allowed:%s\r\n"
              "bgsave_disabled_reason:%s\r\n",
              arena_hugetlb_enabled() ? "yes" : "no", arena_default_chunk(), (unsigned long long)a.blocks,
              (unsigned long long)a.bytes_alloc, (unsigned long long)a.bytes_used,
              (unsigned long long)a.live_bytes, (unsigned long long)a.dead_bytes, (unsigned long long)a.entries,
              (unsigned long long)h.huge_bytes, (unsigned long long)h.huge_blocks,
              (unsigned long long)h.plain_bytes, (unsigned long long)h.fallbacks,
              (unsigned long long)a.compactions, (unsigned long long)a.moved, total, free_pages,
              hugetlb_page_size(), refusal ? "no" : "yes", refusal ? refusal : "");
}

void meminfo_family_init(void) { info_register_goblin(meminfo_section); }
