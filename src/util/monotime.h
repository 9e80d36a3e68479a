/* monotime.h -- a cheap monotonic clock in microseconds, for timing
 * commands (INFO commandstats, SLOWLOG, LATENCY).
 *
 * With an invariant TSC (the CPU flags constant_tsc and nonstop_tsc, the
 * check Redis 7's monotonic clock makes) a reading is one rdtsc scaled by
 * a rate calibrated against CLOCK_MONOTONIC when monotime_init() runs,
 * about half the cost of clock_gettime's vDSO path here; otherwise, and
 * before monotime_init(), it is CLOCK_MONOTONIC. Readings are comparable
 * only within one process. */
#ifndef GOBLIN_UTIL_MONOTIME_H
#define GOBLIN_UTIL_MONOTIME_H
#include <stdint.h>

/* Calibrate (sleeps about 10 ms). Call once at start-up, before threads. */
void monotime_init(void);
uint64_t monotime_us(void);
/* The same clock in milliseconds (deadlines and timeouts). */
static inline int64_t monotime_ms(void) { return (int64_t)(monotime_us() / 1000); }
/* The wall clock (unix ms) at the moment monotime_us read mono_us: the
 * offset between CLOCK_REALTIME and this clock is taken by monotime_init
 * and again by every monotime_sync_wall (the cron's tick), so a step of
 * the system clock is followed within a tick and the drift of the TSC's
 * calibrated rate never adds up. Lets a caller that has read monotime_us
 * know the wall time too without reading a second clock. */
int64_t monotime_unix_ms(uint64_t mono_us);
void monotime_sync_wall(void);
/* "tsc" or "clock_gettime": what monotime_us reads. */
const char *monotime_source(void);
#endif
