/* monotime.c -- the monotonic microsecond clock (see monotime.h).
 *
 * Calibration: TSC ticks and CLOCK_MONOTONIC nanoseconds are read before
 * and after a 10 ms sleep; us_per_tick is their ratio. A reading is
 * (rdtsc - tsc_base) * us_per_tick: the base keeps the product well
 * inside a double's 53 bits of precision for years of uptime. */
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

void monotime_init(void) {
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

const char *monotime_source(void) { return use_tsc ? "tsc" : "clock_gettime"; }
