/* server.c -- housekeeping thread: active expiry, incremental rehashing,
 * instantaneous metrics. Runs hz times a second; each step takes its own
 * locks shard by shard, so clients never wait for a whole cycle. */
#include "server/server.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/command.h"
#include "db/db.h"
#include "net/net.h"
#include "ds/swiss.h"
#include "mem/hugetlb.h"
#include "mem/objstore.h"
#include "mem/smallobj.h"
#include "base/config.h"

#ifndef GOBLIN_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

server_state srv;
static pthread_t cron_tid;
static int cron_stop;

/* Full arena blocks are mmap'd (possibly from the HugeTLB pool), so the
 * allocator does not see them: add them explicitly. */
static uint64_t block_bytes(int huge_only) {
    hugetlb_stats h;
    hugetlb_stats_get(&h);
    return h.huge_bytes + (huge_only ? 0 : h.plain_bytes);
}

/* The object store's heads and small objects live in mapped segments the
 * allocator does not see either: count what they hold (live records and
 * used head slots), so that freeing keys shows (maxmemory eviction). */
static uint64_t store_bytes(void) {
    smallobj_stats so;
    smallobj_stats_get(&so);
    objstore_stats os;
    objstore_stats_get(&os);
    uint64_t heads = 0;
    for (int i = 0; i < os.npools && i < 16; i++) heads += os.pool[i].slots_used;
    return so.live_bytes + heads * objstore_ram_head();
}

#ifdef GOBLIN_NO_JEMALLOC
/* Sanitizer builds: their runtime counts live allocations (RSS never
 * shrinks under ASan's quarantine, which would mislead maxmemory). */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));
#endif

uint64_t server_used_memory(void) {
#ifdef GOBLIN_NO_JEMALLOC
    if (__sanitizer_get_current_allocated_bytes)
        return __sanitizer_get_current_allocated_bytes() + block_bytes(0) + store_bytes() + swiss_mapped_bytes();
#else
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    mallctl("epoch", &epoch, &sz, &epoch, sz);
    size_t allocated = 0;
    sz = sizeof(allocated);
    if (mallctl("stats.allocated", &allocated, &sz, NULL, 0) == 0) return allocated + block_bytes(0) + store_bytes() + swiss_mapped_bytes();
#endif
    /* RSS already counts plain blocks; HugeTLB pages are not in RSS. */
    return server_rss_memory() + block_bytes(1);  /* mapped segments are in RSS */
}

uint64_t server_rss_memory(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &rss) != 2) rss = 0;
        fclose(f);
    }
    return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void *cron_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-cron");
    uint64_t last_cmds = 0, last_in = 0, last_out = 0;
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    while (!__atomic_load_n(&cron_stop, __ATOMIC_RELAXED)) {
        int hz = __atomic_load_n(&cfg.hz, __ATOMIC_RELAXED);  /* CONFIG SET hz */
        if (hz <= 0) hz = 10;
        struct timespec ts = {0, 1000000000L / hz};
        nanosleep(&ts, NULL);
        __atomic_fetch_add(&srv.cron_loops, 1, __ATOMIC_RELAXED);
        /* Active expiry: at most 25% of the period. */
        db_active_expire_cycle(250000 / hz);
        db_rehash_cycle();
        /* Small-object compaction: one sparse segment per tick at most,
         * with readers excluded (records move). */
        if (smallobj_wants_compaction()) {
            db_wrlock_keyspace();
            smallobj_compact_step();
            db_unlock_keyspace();
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double dt = (double)(now.tv_sec - last.tv_sec) + (double)(now.tv_nsec - last.tv_nsec) / 1e9;
        if (dt >= 1.0) {
            uint64_t cmds = __atomic_load_n(&cmd_stat_numcommands, __ATOMIC_RELAXED);
            uint64_t in = __atomic_load_n(&net_stat_net_input, __ATOMIC_RELAXED);
            uint64_t out = __atomic_load_n(&net_stat_net_output, __ATOMIC_RELAXED);
            /* INFO reads these from other threads (relaxed atomic loads). */
            double ops = (double)(cmds - last_cmds) / dt;
            double kin = (double)(in - last_in) / dt / 1024;
            double kout = (double)(out - last_out) / dt / 1024;
            __atomic_store(&srv.inst_ops_per_sec, &ops, __ATOMIC_RELAXED);
            __atomic_store(&srv.inst_input_kbps, &kin, __ATOMIC_RELAXED);
            __atomic_store(&srv.inst_output_kbps, &kout, __ATOMIC_RELAXED);
            last_cmds = cmds;
            last_in = in;
            last_out = out;
            last = now;
            uint64_t used = server_used_memory();
            if (used > __atomic_load_n(&srv.stat_peak_memory, __ATOMIC_RELAXED))
                __atomic_store_n(&srv.stat_peak_memory, used, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

void server_cron_start(void) {
#ifndef GOBLIN_NO_JEMALLOC
    /* Redis's default jemalloc-bg-thread yes: purge freed pages (old index
     * tables after a resize) in the background so RSS follows usage. */
    _Bool bg = 1;
    mallctl("background_thread", NULL, NULL, &bg, sizeof(bg));
#endif
    pthread_create(&cron_tid, NULL, cron_main, NULL);
}

void server_cron_stop(void) {
    __atomic_store_n(&cron_stop, 1, __ATOMIC_RELAXED);
    pthread_join(cron_tid, NULL);
}
