/* numa_info.c -- INFO lines of the object store and its NUMA placement.
 *
 * Appended to the `# Goblin` section (info_register_goblin): per head pool
 * the node requested and the node the kernel reports (move_pages on sampled
 * pages), HugeTLB or not, bytes and blocks used; GET head bytes served from
 * the serving node and from other nodes; the small-object arena and the
 * SSD tails. Names start with objstore_ and numa_ so tests can grep them. */
#include <stdint.h>

#include "cmd/server/admin_family.h"
#include "cmd/families.h"
#include "db/db.h"
#include "db/strval.h"
#include "mem/numa.h"
#include "mem/objstore.h"
#include "mem/smallobj.h"
#include "mem/ssdtail.h"

static void numa_info_section(strbuf *b) {
    objstore_stats st;
    objstore_stats_get(&st);
    strbuf_addf(b, "numa_nodes:%d\r\n", gnuma_nodes());
    strbuf_addf(b, "numa_serving_node:%d\r\n", st.serving_node);
    strbuf_addf(b, "numa_perverse:%d\r\n", objstore_cfg.perverse);
    objstore_promo_stats ps;
    objstore_promo_stats_get(&ps);
    strbuf_addf(b, "numa_promotion:%s\r\n", !ps.enabled ? "off" : ps.running ? "on" : "idle");
    strbuf_addf(b, "numa_promotion_exchanges:%llu\r\n", (unsigned long long)ps.exchanges);
    strbuf_addf(b, "numa_promotion_bytes_copied:%llu\r\n", (unsigned long long)ps.bytes_copied);
    strbuf_addf(b, "numa_promotion_longest_exchange_us:%llu\r\n", (unsigned long long)(ps.longest_ns / 1000));
    strbuf_addf(b, "numa_promotion_decays:%llu\r\n", (unsigned long long)ps.decays);
    strbuf_addf(b, "numa_promotion_decay_interval_ms:%lld\r\n", ps.decay_ms);
    strbuf_addf(b, "objstore_ram_head:%zu\r\n", objstore_ram_head());
    strbuf_addf(b, "objstore_block:%lld\r\n", objstore_cfg.block);
    strbuf_addf(b, "objstore_pools:%d\r\n", st.npools);
    for (int i = 0; i < st.npools; i++) {
        const objstore_pool_info *p = &st.pool[i];
        strbuf_addf(b,
                  "objstore_pool%d:node_requested=%d,node_observed=%d,observed_pages=%d/%d,hugetlb=%d,bytes=%zu,"
                  "blocks=%zu,blocks_used=%zu,heads=%zu,heads_used=%zu\r\n",
                  i, p->node_req, p->node_obs, p->obs_agree, p->obs_probed, p->huge, p->bytes, p->blocks,
                  p->blocks_used, p->slots, p->slots_used);
    }
    strbuf_addf(b, "objstore_head_alloc_failures:%llu\r\n", (unsigned long long)st.head_alloc_fail);
    strbuf_addf(b, "numa_get_head_bytes_local:%llu\r\n", (unsigned long long)st.served_local);
    strbuf_addf(b, "numa_get_head_bytes_remote:%llu\r\n", (unsigned long long)st.served_remote);
    strbuf_addf(b, "objstore_ram_tails:%llu\r\n", (unsigned long long)st.ram_tails);
    strbuf_addf(b, "objstore_ram_tail_bytes:%llu\r\n", (unsigned long long)st.ram_tail_bytes);
    smallobj_stats ss;
    smallobj_stats_get(&ss);
    strbuf_addf(b,
              "objstore_small:segments=%zu,bytes=%zu,capacity=%zu,records=%zu,live_bytes=%zu,free_bytes=%zu,"
              "alloc_failures=%llu,compactions=%llu,moved=%llu,released=%llu\r\n",
              ss.segments, ss.seg_bytes, ss.capacity, ss.live_records, ss.live_bytes, ss.free_bytes,
              (unsigned long long)ss.alloc_fail, (unsigned long long)ss.compactions, (unsigned long long)ss.moved,
              (unsigned long long)ss.released);
    for (int i = 0; i < ss.npools; i++)
        strbuf_addf(b, "objstore_small_pool%d:node=%d,segments=%zu,capacity=%zu\r\n", i, ss.pool[i].node,
                  ss.pool[i].segments, ss.pool[i].capacity);
    ssdtail_stats ts;
    ssdtail_stats_get(&ts);
    uint64_t re, we;
    strval_stats(&re, &we);
    strbuf_addf(b,
              "objstore_ssd:active=%d,direct=%d,uring=%d,chunks_used=%llu,writes=%llu,write_errors=%llu,reads=%llu,"
              "read_errors=%llu,streams=%llu,streams_open=%llu,pinned_frees=%llu,submit_refusals=%llu\r\n",
              ssdtail_active(), ts.direct, ts.uring, (unsigned long long)ts.chunks_used,
              (unsigned long long)ts.writes, (unsigned long long)ts.write_errors, (unsigned long long)ts.reads,
              (unsigned long long)ts.read_errors, (unsigned long long)ts.streams,
              (unsigned long long)ts.streams_open, (unsigned long long)ts.pinned_frees,
              (unsigned long long)ts.submit_refusals);
    strbuf_addf(b, "objstore_tail_read_errors:%llu\r\nobjstore_tail_write_errors:%llu\r\n", (unsigned long long)re,
              (unsigned long long)we);
}

/* The promotion coordinator exchanges head blocks under the keyspace write
 * lock (docs/locking.md): no string command is reading a head then. */
void objstore_family_init(void) {
    info_register_goblin(numa_info_section);
    objstore_promotion_start(db_wrlock_keyspace, db_unlock_keyspace);
}
void objstore_family_shutdown(void) { objstore_shutdown(); }
