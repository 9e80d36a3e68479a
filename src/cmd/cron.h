/* cron.h -- the housekeeping thread: hz times a second, active expiry,
 * incremental rehashing and small-object compaction; once a second the
 * instantaneous metrics and the memory peak of base/process.h. Each step
 * takes its own locks shard by shard, so clients never wait for a cycle. */
#ifndef GOBLIN_CMD_CRON_H
#define GOBLIN_CMD_CRON_H

/* Bind the cron's directives (activerehashing, dynamic-hz,
 * jemalloc-bg-thread); call before config_load(). */
void cron_config_register(void);
void cron_start(void);
void cron_stop(void);
/* The instantaneous rates start over (CONFIG RESETSTAT). */
void cron_rates_reset(void);
/* DEBUG PAUSE-CRON: while on, the thread's ticks do nothing (Redis's test
 * hook: what tests see then is what commands did, not the cron). */
void cron_pause(int on);
/* Whether DEBUG PAUSE-CRON holds the cron. */
int cron_is_paused(void);
#endif
