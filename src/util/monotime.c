/* monotime.c -- the monotonic microsecond clock (see monotime.h).
 *
 * Calibration: TSC ticks and CLOCK_MONOTONIC nanoseconds are read before
 * and after a 10 ms sleep; us_per_tick is their ratio. A reading is
 * (rdtsc - tsc_base) * us_per_tick: the base keeps the product well
 * inside a double's 53 bits of precision for years of uptime. The wall
 * clock of a reading is the reading plus the last offset to
 * CLOCK_REALTIME taken (a 10 ms calibration is good to about 1e-5, a
 * microsecond over the cron's 100 ms between two offsets). */
#include "util/monotime.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <x86intrin.h>
#define MONOTIME_HAVE_TSC 1
#endif

static int use_tsc;
static uint64_t tsc_base;
static double us_per_tick;
/* CLOCK_REALTIME minus monotime_us, in us (monotime_sync_wall writes it,
 * any thread reads it). */
static int64_t wall_offset_us;

static uint64_t clock_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

#ifdef MONOTIME_HAVE_TSC
/* Both flags on the first CPU's flags line of /proc/cpuinfo. */
static int tsc_invariant(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[4096];
    int ok = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) != 0) continue;
        ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
        break;
    }
    fclose(f);
    return ok;
}

static uint64_t clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}
#endif

static void monotime_calibrate(void) {
#ifdef MONOTIME_HAVE_TSC
    if (!tsc_invariant()) return;
    uint64_t n0 = clock_ns(), t0 = __rdtsc();
    struct timespec d = {0, 10 * 1000 * 1000};
    nanosleep(&d, NULL);
    uint64_t n1 = clock_ns(), t1 = __rdtsc();
    if (t1 <= t0 || n1 <= n0) return;
    us_per_tick = (double)(n1 - n0) / 1000.0 / (double)(t1 - t0);
    tsc_base = t0;
    use_tsc = 1;
#endif
}

uint64_t monotime_us(void) {
#ifdef MONOTIME_HAVE_TSC
    if (__builtin_expect(use_tsc, 1)) return (uint64_t)((double)(__rdtsc() - tsc_base) * us_per_tick);
#endif
    return clock_us();
}

void monotime_init(void) {
    monotime_calibrate();
    monotime_sync_wall();
}

void monotime_sync_wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t mono = monotime_us();
    int64_t wall = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    __atomic_store_n(&wall_offset_us, wall - (int64_t)mono, __ATOMIC_RELAXED);
}

int64_t monotime_unix_ms(uint64_t mono_us) {
    return ((int64_t)mono_us + __atomic_load_n(&wall_offset_us, __ATOMIC_RELAXED)) / 1000;
}

const char *monotime_source(void) { return use_tsc ? "tsc" : "clock_gettime"; }
