/* replstat.c -- the replication figures of INFO stats: full and partial
 * syncs (the primary's count), and the bytes of replication traffic, out
 * to replicas (RDB and stream) and in from the primary.
 *
 * Each counter only grows (relaxed atomics, any thread); CONFIG RESETSTAT
 * moves a baseline instead of zeroing it, so that the cron's per-second
 * rates, taken from the raw counts, never see one go backwards. */
#include "cmd/repl/repl.h"

static uint64_t sync_raw[3], sync_base[3]; /* REPL_SYNC_* */
static uint64_t bytes_raw[2], bytes_base[2]; /* REPL_BYTES_IN, REPL_BYTES_OUT */

void repl_stat_sync(int which) { __atomic_fetch_add(&sync_raw[which], 1, __ATOMIC_RELAXED); }

void repl_stat_bytes(int dir, size_t n) { __atomic_fetch_add(&bytes_raw[dir], (uint64_t)n, __ATOMIC_RELAXED); }

unsigned long long repl_sync_stat(int which) {
    return __atomic_load_n(&sync_raw[which], __ATOMIC_RELAXED) - __atomic_load_n(&sync_base[which], __ATOMIC_RELAXED);
}

uint64_t repl_bytes_raw(int dir) { return __atomic_load_n(&bytes_raw[dir], __ATOMIC_RELAXED); }

unsigned long long repl_bytes_stat(int dir) {
    return repl_bytes_raw(dir) - __atomic_load_n(&bytes_base[dir], __ATOMIC_RELAXED);
}

void repl_stats_reset(void) {
    for (int i = 0; i < 3; i++) __atomic_store_n(&sync_base[i], __atomic_load_n(&sync_raw[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++) __atomic_store_n(&bytes_base[i], repl_bytes_raw(i), __ATOMIC_RELAXED);
}
