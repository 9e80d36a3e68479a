/* cron.c -- the housekeeping thread: active expiry, incremental rehashing,
 * the entry pools' and the small-object arena's compaction, instantaneous
 * metrics. Runs hz times a second; each step takes its own
 * locks shard by shard, so clients never wait for a whole cycle.
 *
 * The latency monitor (latency-monitor-threshold) sees the cron's work under
 * Redis's event names: "expire-cycle" is one active-expiry cycle (shard by
 * shard: a client waits at most for its shard's part of it), and
 * "active-defrag-cycle" one small-object compaction step, which excludes
 * every reader of the keyspace while records move: that one is a pause every
 * key command of the moment shares. */
#include "cmd/cron.h"
#include "cmd/blocking.h"
#include "cmd/evict.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "base/process.h"
#include "base/tstat.h"
#include "cmd/cluster/migrate.h"
#include "cmd/command.h"
#include "cmd/repl/repl.h"
#include "cmd/server/admin_family.h"
#include "cmd/server/script_ldb.h"
#include "cmd/tracking.h"
#include "db/db.h"
#include "db/memusage.h"
#include "mem/smallobj.h"
#include "session/session.h"
#include "util/monotime.h"

#ifndef GOBLIN_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

static pthread_t cron_tid;
static int cron_stopping;
static int active_rehashing = 1; /* activerehashing */
static int dynamic_hz = 1;       /* dynamic-hz */
static int active_defrag = 1;    /* activedefrag */
static int bg_thread = 1;        /* jemalloc-bg-thread */
static int cron_started;

/* jemalloc-bg-thread: jemalloc's background purging thread on or off. At
 * start-up the value is only noted (cron_start applies it, after any
 * daemonizing fork); CONFIG SET applies it at once. */
static void bg_thread_apply(const char *v) {
    __atomic_store_n(&bg_thread, strcmp(v, "yes") == 0, __ATOMIC_RELAXED);
#ifndef GOBLIN_NO_JEMALLOC
    if (__atomic_load_n(&cron_started, __ATOMIC_RELAXED)) {
        _Bool on = (_Bool)__atomic_load_n(&bg_thread, __ATOMIC_RELAXED);
        mallctl("background_thread", NULL, NULL, &on, sizeof(on));
    }
#endif
}

void cron_config_register(void) {
    static const config_hook bg_hook = {.apply = bg_thread_apply};
    int rc = config_bind_int("activerehashing", &active_rehashing);
    rc |= config_bind_int("dynamic-hz", &dynamic_hz);
    rc |= config_bind_int("activedefrag", &active_defrag);
    rc |= config_register_hook("jemalloc-bg-thread", &bg_hook);
    if (rc) abort();
}

/* Redis's dynamic hz: with many clients the rate doubles until each tick
 * serves at most 200 of them (500 at most). */
static int effective_hz(int hz) {
    if (!__atomic_load_n(&dynamic_hz, __ATOMIC_RELAXED)) return hz;
    long clients = session_clients_count();
    while (clients / hz > 200) {
        hz *= 2;
        if (hz > 500) return 500;
    }
    return hz;
}

/* The rate now (CONFIG SET hz, dynamic-hz), published for INFO. */
static int cron_hz(void) {
    int hz = __atomic_load_n(&cfg.hz, __ATOMIC_RELAXED);
    if (hz <= 0) hz = 10;
    hz = effective_hz(hz);
    __atomic_store_n(&srv.hz, hz, __ATOMIC_RELAXED);
    return hz;
}

/* The instantaneous rates INFO shows (read from other threads with
 * relaxed atomic loads). */
static void rates_store(double ops, double kin, double kout, double rkin, double rkout) {
    __atomic_store(&srv.inst_ops_per_sec, &ops, __ATOMIC_RELAXED);
    __atomic_store(&srv.inst_input_kbps, &kin, __ATOMIC_RELAXED);
    __atomic_store(&srv.inst_output_kbps, &kout, __ATOMIC_RELAXED);
    __atomic_store(&srv.inst_repl_input_kbps, &rkin, __ATOMIC_RELAXED);
    __atomic_store(&srv.inst_repl_output_kbps, &rkout, __ATOMIC_RELAXED);
}

void cron_rates_reset(void) { rates_store(0, 0, 0, 0, 0); }

static int cron_paused; /* atomics */
void cron_pause(int on) { __atomic_store_n(&cron_paused, on, __ATOMIC_RELAXED); }
int cron_is_paused(void) { return __atomic_load_n(&cron_paused, __ATOMIC_RELAXED); }

static void *cron_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-cron");
    uint64_t last_cmds = 0, last_in = 0, last_out = 0, last_rin = 0, last_rout = 0;
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    while (!__atomic_load_n(&cron_stopping, __ATOMIC_RELAXED)) {
        int hz = cron_hz();
        long period_ns = 1000000000L / hz; /* a whole second at hz 1: tv_nsec must stay below it */
        struct timespec ts = {period_ns / 1000000000L, period_ns % 1000000000L};
        nanosleep(&ts, NULL);
        if (__atomic_load_n(&cron_paused, __ATOMIC_RELAXED)) continue;
        __atomic_fetch_add(&srv.cron_loops, 1, __ATOMIC_RELAXED);
        /* The commands' clock (db_freeze_time) follows the system clock. */
        monotime_sync_wall();
        /* Active expiry: at most 25% of the period, 2% more per step of
         * active-expire-effort (Redis's slow cycle); the period of the rate
         * set now (a CONFIG SET hz during the sleep counts at once, as
         * Redis's cycle reads its hz when it runs). The latency sample is
         * the cycle's own time, from when it holds the keyspace. */
        hz = cron_hz();
        int effort = __atomic_load_n(&cfg.active_expire_effort, __ATOMIC_RELAXED) - 1;
        if (effort < 0 || effort > 9) effort = 0;
        long long took_us;
        cmd_active_expire_cycle(10000L * (25 + 2 * effort) / hz, effort, &took_us);
        latency_add_sample_if_needed("expire-cycle", took_us / 1000);
        evict_cron();
        /* Client-side caching: the table limit, the broadcast of expired keys. */
        tracking_cron();
        if (__atomic_load_n(&active_rehashing, __ATOMIC_RELAXED)) db_rehash_cycle();
        /* activedefrag: the entry pools' sparse slabs, one shard's pass
         * at a time, and the small-object arena's sparse segments, one per
         * tick at most, with readers excluded (records move). */
        int defrag_on = __atomic_load_n(&active_defrag, __ATOMIC_RELAXED);
        if (defrag_on) db_defrag_cycle();
        else db_defrag_stop();
        db_prefetch_refresh();
        if (defrag_on && smallobj_wants_compaction()) {
            db_wrlock_keyspace();
            uint64_t t0 = monotime_us();
            smallobj_compact_step();
            uint64_t held = monotime_us() - t0;
            db_unlock_keyspace();
            latency_add_sample_if_needed("active-defrag-cycle", (long long)(held / 1000));
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double dt = (double)(now.tv_sec - last.tv_sec) + (double)(now.tv_nsec - last.tv_nsec) / 1e9;
        if (dt >= 1.0) {
            /* Sums of the per-thread counters, from the start (a CONFIG
             * RESETSTAT meanwhile must not make a difference negative). */
            uint64_t cmds = tstat_sum_raw(TSTAT_COMMANDS);
            uint64_t in = tstat_sum_raw(TSTAT_NET_INPUT);
            uint64_t out = tstat_sum_raw(TSTAT_NET_OUTPUT);
            uint64_t rin = repl_bytes_raw(REPL_BYTES_IN), rout = repl_bytes_raw(REPL_BYTES_OUT);
            double ops = (double)(cmds - last_cmds) / dt;
            double kin = (double)(in - last_in) / dt / 1024;
            double kout = (double)(out - last_out) / dt / 1024;
            double rkin = (double)(rin - last_rin) / dt / 1024;
            double rkout = (double)(rout - last_rout) / dt / 1024;
            rates_store(ops, kin, kout, rkin, rkout);
            last_rin = rin;
            last_rout = rout;
            last_cmds = cmds;
            last_in = in;
            last_out = out;
            last = now;
            uint64_t used = memusage_used();
            if (used > __atomic_load_n(&srv.stat_peak_memory, __ATOMIC_RELAXED))
                __atomic_store_n(&srv.stat_peak_memory, used, __ATOMIC_RELAXED);
            migrate_close_idle();
            ldb_reap_children(); /* the forked Lua debugging sessions that ended */
            block_cluster_cron();
        }
    }
    return NULL;
}

void cron_start(void) {
#ifndef GOBLIN_NO_JEMALLOC
    /* Redis's default jemalloc-bg-thread yes: purge freed pages (old index
     * tables after a resize) in the background so RSS follows usage. */
    _Bool bg = (_Bool)__atomic_load_n(&bg_thread, __ATOMIC_RELAXED);
    mallctl("background_thread", NULL, NULL, &bg, sizeof(bg));
#endif
    __atomic_store_n(&cron_started, 1, __ATOMIC_RELAXED);
    pthread_create(&cron_tid, NULL, cron_main, NULL);
}

void cron_stop(void) {
    __atomic_store_n(&cron_stopping, 1, __ATOMIC_RELAXED);
    pthread_join(cron_tid, NULL);
}
