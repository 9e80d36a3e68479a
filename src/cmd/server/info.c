/* info.c -- INFO [section ...].
 *
 * The text is Redis 7.0's: "# Section" headers, "field:value" lines ending in
 * \r\n, one empty line between sections, the same field names in the same
 * order, so tools that parse INFO (redis-cli --stat, exporters, client
 * libraries reading redis_version) work unchanged. Fields for machinery
 * Goblin does not have (replication, AOF, Lua, defrag, ...) are present with
 * the values an idle Redis without that feature shows. Goblin's own numbers
 * are in a `# Goblin` section, which other subsystems extend through
 * info_register_goblin().
 *
 * Sections: INFO with no argument or "default" gives the default set; "all"
 * adds commandstats and latencystats; "everything" is "all" (there are no modules); names are
 * case-insensitive; unknown names select nothing. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cmd/mcache/mcache.h"
#include "cmd/cluster/cluster.h"
#include "cmd/cluster/migrate.h"
#include "cmd/server/admin_family.h"
#include "cmd/server/function.h"
#include "cmd/server/script.h"
#include "db/lazyfree.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "cmd/evict.h"
#include "cmd/families.h"
#include "cmd/repl/repl.h"
#include "cmd/server/pubsub.h"
#include "session/reply.h"
#include "session/session.h"
#include "base/config.h"
#include "base/process.h"
#include "base/tls.h"
#include "base/tstat.h"
#include "cmd/tracking.h"

#ifndef GOBLIN_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#define INFO_ALLOCATOR "jemalloc-" JEMALLOC_VERSION
#else
#define INFO_ALLOCATOR "libc"
#endif

/* ---- The Goblin section's extensions ------------------------------------ */

#define INFO_MAX_EXT 16
static info_section_fn *goblin_ext[INFO_MAX_EXT];
static int ngoblin_ext;

void info_register_goblin(info_section_fn *fn) {
    if (ngoblin_ext < INFO_MAX_EXT) goblin_ext[ngoblin_ext++] = fn;
}

/* ---- Sections ---------------------------------------------------------- */

static void info_server(strbuf *b) {
    struct utsname un;
    if (uname(&un) != 0) memset(&un, 0, sizeof(un));
    struct timeval tv;
    gettimeofday(&tv, NULL);
    long long now_us = (long long)tv.tv_sec * 1000000 + tv.tv_usec;
    long long uptime = (now_us / 1000 - srv.start_ms) / 1000;
    int hz = __atomic_load_n(&cfg.hz, __ATOMIC_RELAXED); /* CONFIG SET hz on another thread */
    int run_hz = __atomic_load_n(&srv.hz, __ATOMIC_RELAXED); /* the cron's rate (dynamic-hz) */
    if (!run_hz) run_hz = hz;
    strbuf_addf(b,
              "# Server\r\n"
              "redis_version:%s\r\n"
              "redis_git_sha1:00000000\r\n"
              "redis_git_dirty:0\r\n"
              "redis_build_id:0\r\n"
              "redis_mode:standalone\r\n"
              "os:%s %s %s\r\n"
              "arch_bits:%d\r\n"
              "monotonic_clock:POSIX clock_gettime\r\n"
              "multiplexing_api:epoll\r\n"
              "atomicvar_api:c11-builtin\r\n"
              "gcc_version:%d.%d.%d\r\n"
              "process_id:%ld\r\n"
              "process_supervised:no\r\n"
              "run_id:%s\r\n"
              "tcp_port:%d\r\n"
              "server_time_usec:%lld\r\n"
              "uptime_in_seconds:%lld\r\n"
              "uptime_in_days:%lld\r\n"
              "hz:%d\r\n"
              "configured_hz:%d\r\n"
              "lru_clock:%u\r\n"
              "executable:%s\r\n"
              "config_file:%s\r\n"
              "io_threads_active:0\r\n",
              GOBLIN_REDIS_VERSION, un.sysname, un.release, un.machine, (int)(sizeof(long) * 8),
#ifdef __GNUC__
              __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
#else
              0, 0, 0,
#endif
              (long)getpid(), srv.run_id, cfg.port ? cfg.port : tls_port(), now_us, uptime, uptime / 86400, run_hz, hz,
              (unsigned)(tv.tv_sec & 0xffffff), srv.executable, cfg.config_file ? cfg.config_file : "");
    long long shut = repl_shutdown_in_ms(); /* shown while a shutdown waits, as Redis */
    if (shut >= 0) strbuf_addf(b, "shutdown_in_milliseconds:%lld\r\n", shut);
}

typedef struct clients_acc {
    size_t max_in, max_out;
    long blocked;
} clients_acc;

static void clients_cb(void *arg, client *c) {
    clients_acc *a = arg;
    /* c may run on another worker: relaxed atomic loads (client.h). */
    /* Redis's input usage: the query buffer and the arguments parsed out
     * of it (a partial request's, a blocked command's). */
    size_t in = __atomic_load_n(&c->qbuf_len, __ATOMIC_RELAXED) + __atomic_load_n(&c->qbuf_free, __ATOMIC_RELAXED) +
                __atomic_load_n(&c->qbuf_argv, __ATOMIC_RELAXED) + __atomic_load_n(&c->argv_blocked, __ATOMIC_RELAXED);
    if (in > a->max_in) a->max_in = in;
    size_t peak = __atomic_load_n(&c->obuf_peak, __ATOMIC_RELAXED);
    if (peak > a->max_out) a->max_out = peak;
    if (client_flags_peek(c) & (CLIENT_BLOCKED | CLIENT_PAUSED)) a->blocked++;
}

static void info_clients(strbuf *b) {
    clients_acc a = {0};
    tracking_stats ts;
    tracking_stats_get(&ts);
    session_registry_lock();
    session_clients_each(clients_cb, &a);
    session_registry_unlock();
    strbuf_addf(b,
              "# Clients\r\n"
              "connected_clients:%ld\r\n"
              "cluster_connections:%d\r\n"
              "maxclients:%d\r\n"
              "client_recent_max_input_buffer:%zu\r\n"
              "client_recent_max_output_buffer:%zu\r\n"
              "blocked_clients:%ld\r\n"
              "tracking_clients:%lld\r\n"
              "clients_in_timeout_table:0\r\n",
              session_clients_count() + repl_primary_link_up(), cluster_connections(), cfg.maxclients, a.max_in, a.max_out, a.blocked, ts.clients);
}

static unsigned long long total_system_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (unsigned long long)pages * (unsigned long long)psize : 0;
}

static const char *config_string(const char *name, char *buf, size_t len);

static void info_memory(strbuf *b) {
    size_t rbl, rlinks; /* the replication backlog, the replicas' pending stream */
    repl_buffer_memory(&rbl, &rlinks);
    admin_mem_overview m;
    admin_mem_overview_get(&m, NULL, NULL);
    char used_h[32], rss_h[32], peak_h[32], sys_h[32], maxmem_h[32], policy[64];
    unsigned long long sysmem = total_system_memory();
    admin_bytes_human(used_h, sizeof(used_h), m.used);
    admin_bytes_human(rss_h, sizeof(rss_h), m.rss);
    admin_bytes_human(peak_h, sizeof(peak_h), m.peak);
    admin_bytes_human(sys_h, sizeof(sys_h), sysmem);
    admin_bytes_human(maxmem_h, sizeof(maxmem_h), (unsigned long long)cfg.maxmemory);
    size_t net = m.used > m.startup ? m.used - m.startup : 0;
    const admin_alloc_stats *al = &m.alloc;
    db_defrag_stats dfs;
    db_defrag_stats_get(&dfs);
    long nlibs, nfuncs, nscripts;
    function_counts(&nlibs, &nfuncs);
    size_t vm_eval, scripts_eval, vm_funcs, funcs_mem;
    script_memory(&nscripts, &vm_eval, &scripts_eval);
    function_memory(&vm_funcs, &funcs_mem);
    char lua_h[32], vm_total_h[32], scripts_h[32];
    admin_bytes_human(lua_h, sizeof(lua_h), vm_eval);
    admin_bytes_human(vm_total_h, sizeof(vm_total_h), vm_eval + vm_funcs);
    admin_bytes_human(scripts_h, sizeof(scripts_h), scripts_eval + funcs_mem);
#define RATIO(a, b) ((b) ? (double)(a) / (double)(b) : 0.0)
    strbuf_addf(b,
              "# Memory\r\n"
              "used_memory:%zu\r\n"
              "used_memory_human:%s\r\n"
              "used_memory_rss:%zu\r\n"
              "used_memory_rss_human:%s\r\n"
              "used_memory_peak:%zu\r\n"
              "used_memory_peak_human:%s\r\n"
              "used_memory_peak_perc:%.2f%%\r\n"
              "used_memory_overhead:%zu\r\n"
              "used_memory_startup:%zu\r\n"
              "used_memory_dataset:%zu\r\n"
              "used_memory_dataset_perc:%.2f%%\r\n"
              "allocator_allocated:%zu\r\n"
              "allocator_active:%zu\r\n"
              "allocator_resident:%zu\r\n"
              "total_system_memory:%llu\r\n"
              "total_system_memory_human:%s\r\n"
              "used_memory_lua:%zu\r\n"
              "used_memory_vm_eval:%zu\r\n"
              "used_memory_lua_human:%s\r\n"
              "used_memory_scripts_eval:%zu\r\n"
              "number_of_cached_scripts:%ld\r\n"
              "number_of_functions:%ld\r\n"
              "number_of_libraries:%ld\r\n"
              "used_memory_vm_functions:%zu\r\n"
              "used_memory_vm_total:%zu\r\n"
              "used_memory_vm_total_human:%s\r\n"
              "used_memory_functions:%zu\r\n"
              "used_memory_scripts:%zu\r\n"
              "used_memory_scripts_human:%s\r\n"
              "maxmemory:%lld\r\n"
              "maxmemory_human:%s\r\n"
              "maxmemory_policy:%s\r\n"
              "allocator_frag_ratio:%.2f\r\n"
              "allocator_frag_bytes:%lld\r\n"
              "allocator_rss_ratio:%.2f\r\n"
              "allocator_rss_bytes:%lld\r\n"
              "rss_overhead_ratio:%.2f\r\n"
              "rss_overhead_bytes:%lld\r\n"
              "mem_fragmentation_ratio:%.2f\r\n"
              "mem_fragmentation_bytes:%lld\r\n"
              "mem_not_counted_for_evict:%zu\r\n"
              "mem_replication_backlog:%zu\r\n"
              "mem_total_replication_buffers:%zu\r\n"
              "mem_clients_slaves:%zu\r\n"
              "mem_clients_normal:%zu\r\n"
              "mem_cluster_links:%zu\r\n"
              "mem_aof_buffer:%zu\r\n"
              "mem_allocator:%s\r\n"
              "active_defrag_running:%d\r\n"
              "lazyfree_pending_objects:%llu\r\n"
              "lazyfreed_objects:%llu\r\n",
              m.used, used_h, m.rss, rss_h, m.peak, peak_h, 100.0 * RATIO(m.used, m.peak), m.overhead, m.startup,
              m.dataset, 100.0 * RATIO(m.dataset, net), al->allocated, al->active, al->resident, sysmem, sys_h,
              vm_eval, vm_eval, lua_h, scripts_eval, nscripts, nfuncs, nlibs, vm_funcs, vm_eval + vm_funcs, vm_total_h,
              funcs_mem, scripts_eval + funcs_mem, scripts_h, cfg.maxmemory, maxmem_h,
              config_string("maxmemory-policy", policy, sizeof(policy)),
              RATIO(al->active, al->allocated), (long long)al->active - (long long)al->allocated,
              RATIO(al->resident, al->active), (long long)al->resident - (long long)al->active,
              RATIO(m.rss, al->resident), (long long)m.rss - (long long)al->resident, RATIO(m.rss, m.used),
              (long long)m.rss - (long long)m.used, aof_buffer_bytes(), rbl, rbl + rlinks, rlinks, m.clients,
              cluster_links_memory(), aof_buffer_bytes(),
              INFO_ALLOCATOR, dfs.running,
              (unsigned long long)lazyfree_pending(), (unsigned long long)lazyfree_freed());
#undef RATIO
}

static void info_persistence(strbuf *b) { persist_info(b); }

/* The cron thread refreshes these once a second. */
static double load_double(const double *p) {
    double v;
    __atomic_load(p, &v, __ATOMIC_RELAXED);
    return v;
}

static void info_stats(strbuf *b) {
    tracking_stats ts;
    tracking_stats_get(&ts);
    long nchan, npat, nshard;
    pubsub_counts(&nchan, &npat, &nshard);
    double stale;
    __atomic_load(&db_stat_expired_stale_perc, &stale, __ATOMIC_RELAXED);
    uint64_t over_total, over_now;
    evict_exceeded_time(&over_total, &over_now);
    db_defrag_stats dfs;
    db_defrag_stats_get(&dfs);
    strbuf_addf(b,
              "# Stats\r\n"
              "total_connections_received:%llu\r\n"
              "total_commands_processed:%llu\r\n"
              "instantaneous_ops_per_sec:%lld\r\n"
              "total_net_input_bytes:%llu\r\n"
              "total_net_output_bytes:%llu\r\n"
              "total_net_repl_input_bytes:%llu\r\n"
              "total_net_repl_output_bytes:%llu\r\n"
              "instantaneous_input_kbps:%.2f\r\n"
              "instantaneous_output_kbps:%.2f\r\n"
              "instantaneous_input_repl_kbps:%.2f\r\n"
              "instantaneous_output_repl_kbps:%.2f\r\n"
              "rejected_connections:%llu\r\n"
              "sync_full:%llu\r\n"
              "sync_partial_ok:%llu\r\n"
              "sync_partial_err:%llu\r\n"
              "expired_keys:%llu\r\n"
              "expired_stale_perc:%.2f\r\n"
              "expired_time_cap_reached_count:%llu\r\n"
              "expire_cycle_cpu_milliseconds:%llu\r\n"
              "evicted_keys:%llu\r\n"
              "evicted_clients:%llu\r\n"
              "total_eviction_exceeded_time:%llu\r\n"
              "current_eviction_exceeded_time:%llu\r\n"
              "keyspace_hits:%llu\r\n"
              "keyspace_misses:%llu\r\n"
              "pubsub_channels:%ld\r\n"
              "pubsub_patterns:%ld\r\n"
              "pubsubshard_channels:%ld\r\n"
              "latest_fork_usec:%llu\r\n"
              "total_forks:%llu\r\n"
              "migrate_cached_sockets:%d\r\n"
              "slave_expires_tracked_keys:0\r\n"
              "active_defrag_hits:%llu\r\n"
              "active_defrag_misses:%llu\r\n"
              "active_defrag_key_hits:%llu\r\n"
              "active_defrag_key_misses:%llu\r\n"
              "total_active_defrag_time:%llu\r\n"
              "current_active_defrag_time:%llu\r\n"
              "tracking_total_keys:%lld\r\n"
              "tracking_total_items:%lld\r\n"
              "tracking_total_prefixes:%lld\r\n"
              "unexpected_error_replies:%llu\r\n"
              "total_error_replies:%llu\r\n"
              "dump_payload_sanitizations:0\r\n"
              "total_reads_processed:%llu\r\n"
              "total_writes_processed:%llu\r\n"
              "io_threaded_reads_processed:0\r\n"
              "io_threaded_writes_processed:0\r\n"
              "reply_buffer_shrinks:%llu\r\n"
              "reply_buffer_expands:%llu\r\n",
              (unsigned long long)__atomic_load_n(&session_stat_connections, __ATOMIC_RELAXED),
              (unsigned long long)tstat_sum(TSTAT_COMMANDS),
              (long long)load_double(&srv.inst_ops_per_sec),
              (unsigned long long)tstat_sum(TSTAT_NET_INPUT), (unsigned long long)tstat_sum(TSTAT_NET_OUTPUT),
              repl_bytes_stat(REPL_BYTES_IN), repl_bytes_stat(REPL_BYTES_OUT),
              load_double(&srv.inst_input_kbps), load_double(&srv.inst_output_kbps),
              load_double(&srv.inst_repl_input_kbps), load_double(&srv.inst_repl_output_kbps),
              (unsigned long long)__atomic_load_n(&session_stat_rejected, __ATOMIC_RELAXED),
              repl_sync_stat(REPL_SYNC_FULL), repl_sync_stat(REPL_SYNC_PARTIAL_OK),
              repl_sync_stat(REPL_SYNC_PARTIAL_ERR),
              (unsigned long long)__atomic_load_n(&db_stat_expired_keys, __ATOMIC_RELAXED), stale * 100,
              (unsigned long long)__atomic_load_n(&db_stat_expire_time_cap, __ATOMIC_RELAXED),
              (unsigned long long)(__atomic_load_n(&db_stat_expire_cycle_us, __ATOMIC_RELAXED) / 1000),
              (unsigned long long)__atomic_load_n(&evict_stat_evicted_keys, __ATOMIC_RELAXED),
              (unsigned long long)__atomic_load_n(&session_stat_evicted_clients, __ATOMIC_RELAXED),
              (unsigned long long)over_total, (unsigned long long)over_now,
              (unsigned long long)tstat_sum(TSTAT_KEYSPACE_HITS), (unsigned long long)tstat_sum(TSTAT_KEYSPACE_MISSES),
              nchan, npat, nshard, (unsigned long long)__atomic_load_n(&srv.latest_fork_usec, __ATOMIC_RELAXED),
              (unsigned long long)__atomic_load_n(&srv.total_forks, __ATOMIC_RELAXED), migrate_cached_links(),
              (unsigned long long)dfs.hits, (unsigned long long)dfs.misses, (unsigned long long)dfs.hits,
              (unsigned long long)dfs.misses, (unsigned long long)dfs.total_ms, (unsigned long long)dfs.current_ms, ts.keys, ts.items, ts.prefixes,
              (unsigned long long)reply_unexpected_errors(), (unsigned long long)reply_total_errors(),
              (unsigned long long)tstat_sum(TSTAT_READS), (unsigned long long)tstat_sum(TSTAT_WRITES),
              (unsigned long long)__atomic_load_n(&session_stat_replybuf_shrinks, __ATOMIC_RELAXED),
              (unsigned long long)__atomic_load_n(&session_stat_replybuf_expands, __ATOMIC_RELAXED));
}

static void info_replication(strbuf *b) { repl_info(b); }

static void info_cpu(strbuf *b) {
    struct rusage self, children, thread;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    getrusage(RUSAGE_THREAD, &thread);
    /* "main thread": the worker serving this INFO. */
    strbuf_addf(b,
              "# CPU\r\n"
              "used_cpu_sys:%ld.%06ld\r\n"
              "used_cpu_user:%ld.%06ld\r\n"
              "used_cpu_sys_children:%ld.%06ld\r\n"
              "used_cpu_user_children:%ld.%06ld\r\n"
              "used_cpu_sys_main_thread:%ld.%06ld\r\n"
              "used_cpu_user_main_thread:%ld.%06ld\r\n",
              (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec, (long)self.ru_utime.tv_sec,
              (long)self.ru_utime.tv_usec, (long)children.ru_stime.tv_sec, (long)children.ru_stime.tv_usec,
              (long)children.ru_utime.tv_sec, (long)children.ru_utime.tv_usec, (long)thread.ru_stime.tv_sec,
              (long)thread.ru_stime.tv_usec, (long)thread.ru_utime.tv_sec, (long)thread.ru_utime.tv_usec);
}

static void info_modules(strbuf *b) { strbuf_addf(b, "# Modules\r\n"); }

static void cmdstat_line(strbuf *b, const cmd_def *d) {
    cmd_stats st;
    cmd_stats_get(d, &st);
    uint64_t calls = st.calls, usec = st.usec, rejected = st.rejected, failed = st.failed;
    if (!calls && !rejected && !failed) return;
    strbuf_addf(b, "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
              d->fullname, (unsigned long long)calls, (unsigned long long)usec,
              calls ? (double)usec / (double)calls : 0.0, (unsigned long long)rejected, (unsigned long long)failed);
}

static void cmdstat_cb(void *arg, const cmd_def *d) {
    cmdstat_line(arg, d);
    for (int i = 0; i < d->nsubs; i++) cmdstat_line(arg, d->subs[i]);
}

static void info_commandstats(strbuf *b) {
    strbuf_addf(b, "# Commandstats\r\n");
    cmd_each(cmdstat_cb, b);
}

typedef struct errstat {
    char code[32];
    unsigned long long count;
} errstat;

typedef struct errstats {
    errstat v[128];
    int n;
} errstats;

static void errstat_cb(void *arg, const char *code, uint64_t count) {
    errstats *es = arg;
    if (es->n == 128) return;
    snprintf(es->v[es->n].code, sizeof(es->v[es->n].code), "%s", code);
    es->v[es->n].count = count;
    es->n++;
}

static int errstat_cmp(const void *a, const void *b) {
    return strcmp(((const errstat *)a)->code, ((const errstat *)b)->code);
}

static void info_errorstats(strbuf *b) {
    errstats es;
    es.n = 0;
    reply_errorstats_each(errstat_cb, &es);
    qsort(es.v, (size_t)es.n, sizeof(errstat), errstat_cmp);
    strbuf_addf(b, "# Errorstats\r\n");
    for (int i = 0; i < es.n; i++) strbuf_addf(b, "errorstat_%s:count=%llu\r\n", es.v[i].code, es.v[i].count);
}

static void info_cluster(strbuf *b) { strbuf_addf(b, "# Cluster\r\ncluster_enabled:%d\r\n", cluster_enabled()); }

static void info_keyspace(strbuf *b) {
    strbuf_addf(b, "# Keyspace\r\n");
    db_rdlock_keyspace();
    for (int i = 0; i < db_count(); i++) {
        gdb *db = db_get(i);
        admin_db_overhead o;
        admin_db_overhead_get(db, &o);
        if (!o.keys && !o.expires) continue;
        long long avg_ttl = (long long)__atomic_load_n(&db->avg_ttl, __ATOMIC_RELAXED);
        strbuf_addf(b, "db%d:keys=%zu,expires=%zu,avg_ttl=%lld\r\n", i, o.keys, o.expires, avg_ttl);
    }
    db_unlock_keyspace();
}

static void info_goblin(strbuf *b) {
    strbuf_addf(b,
              "# Goblin\r\n"
              "goblin_version:%s\r\n"
              "redis_compat_version:%s\r\n"
              "cores:%d\r\n"
              "workers:%d\r\n"
              "shards_per_db:%d\r\n"
              "databases:%d\r\n"
              "net_output_direct_bytes:%llu\r\n"
              "keys_prefetched:%llu\r\n"
              "keyspace_slab_bytes:%zu\r\n",
              GOBLIN_VERSION, GOBLIN_REDIS_VERSION, cfg.cores, session_nworkers(), DB_NSHARDS, db_count(),
              (unsigned long long)tstat_sum(TSTAT_NET_OUTPUT_DIRECT),
              (unsigned long long)tstat_sum(TSTAT_KEYS_PREFETCHED), db_entry_slab_bytes());
    for (int i = 0; i < ngoblin_ext; i++) goblin_ext[i](b);
}

static void info_memcache(strbuf *b) {
    char buf[1024];
    size_t n = mc_info(buf, sizeof(buf));
    strbuf_addf(b, "%.*s", (int)n, buf);
}

/* A setting's value as CONFIG GET shows it, into buf. */
static const char *config_string(const char *name, char *buf, size_t len) {
    char *v = config_value(name);
    snprintf(buf, len, "%s", v ? v : "");
    free(v);
    return buf;
}

/* ---- INFO -------------------------------------------------------------- */

typedef struct info_section {
    const char *name;
    void (*fn)(strbuf *b);
    int in_default;
} info_section;

/* In Redis's order. */
static const info_section sections[] = {
    {"server", info_server, 1},
    {"clients", info_clients, 1},
    {"memory", info_memory, 1},
    {"persistence", info_persistence, 1},
    {"stats", info_stats, 1},
    {"replication", info_replication, 1},
    {"cpu", info_cpu, 1},
    {"module_list", info_modules, 1},
    {"commandstats", info_commandstats, 0},
    {"errorstats", info_errorstats, 1},
    {"latencystats", latency_info_latencystats, 0},
    {"cluster", info_cluster, 1},
    {"keyspace", info_keyspace, 1},
    {"goblin", info_goblin, 1},
    {"memcache", info_memcache, 1},
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static void infoCommand(client *c) {
    int want[NSECTIONS] = {0};
    int all = 0;
    if (c->argc == 1) {
        for (size_t s = 0; s < NSECTIONS; s++) want[s] = sections[s].in_default;
    }
    for (int i = 1; i < c->argc; i++) {
        const garg *a = &c->argv[i];
        if (arg_is(a, "default")) {
            for (size_t s = 0; s < NSECTIONS; s++) want[s] |= sections[s].in_default;
        } else if (arg_is(a, "all") || arg_is(a, "everything")) {
            all = 1;
        } else {
            for (size_t s = 0; s < NSECTIONS; s++)
                if (arg_is(a, sections[s].name) ||
                    (strcmp(sections[s].name, "module_list") == 0 && arg_is(a, "modules")))
                    want[s] = 1;
        }
    }
    strbuf b = {0};
    int emitted = 0;
    for (size_t s = 0; s < NSECTIONS; s++) {
        if (!all && !want[s]) continue;
        if (emitted++) strbuf_addf(&b, "\r\n");
        sections[s].fn(&b);
    }
    reply_verbatim(c, b.p ? b.p : "", b.len, "txt");
    free(b.p);
}

const cmd_handler info_handlers[] = {
    /* Sections take the locks they read under (keyspace: shard by shard). */
    {"info", infoCommand, CMD_LOCK_SELF},
    {NULL, NULL, 0},
};
