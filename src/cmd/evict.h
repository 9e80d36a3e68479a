/* evict.h -- maxmemory: evicting keys by policy before commands run, and
 * refusing commands that would grow memory when nothing can be evicted. */
#ifndef GOBLIN_CMD_EVICT_H
#define GOBLIN_CMD_EVICT_H
#include <stddef.h>
#include <stdint.h>

enum { EVICT_OK = 0, EVICT_FAIL = 1 };

/* Before a command, with maxmemory set and no locks held: evict keys as
 * maxmemory-policy says until used memory is back under maxmemory.
 * EVICT_FAIL when memory stays over the limit (noeviction, or nothing the
 * policy may evict): denyoom commands are then refused with -OOM. */
int evict_perform(void);

/* Before a denyoom command, no locks held: when the object store's heads
 * or small-object pools are exhausted, evict string keys of that kind by
 * maxmemory-policy until there is room (nothing with noeviction).
 * request: the largest value the command may store (its longest
 * argument): the small-object pools have room when they have 64 KiB left
 * and a place for a record of that size. EVICT_FAIL when the policy found
 * nothing to evict. */
int evict_store_pressure(size_t request);
/* The object store has a fixed pool (--memory or --small-memory): only
 * then is evict_store_pressure worth its request size. */
int evict_store_bounded(void);

/* Used memory as eviction sees it: memusage_used(), refreshed at most
 * once a millisecond (a refresh costs tens of microseconds). */
uint64_t evict_used_memory(void);

/* From the cron, every tick: evicts when CONFIG SET maxmemory lowered the
 * limit, or an eviction ran out of time with memory still over it. */
void evict_cron(void);

/* INFO evicted_keys. */
extern uint64_t evict_stat_evicted_keys;
/* INFO's total_eviction_exceeded_time and current_eviction_exceeded_time
 * (ms used memory has been over maxmemory, in all and in the stretch under
 * way); CONFIG RESETSTAT zeroes them. */
void evict_exceeded_time(uint64_t *total_ms, uint64_t *current_ms);
void evict_exceeded_reset(void);
#endif
