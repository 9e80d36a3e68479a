/* test_monotime.c -- the monotonic microsecond clock keeps CLOCK_MONOTONIC's pace. */
#include <time.h>

#include "util/monotime.h"
#include "unit.h"

static uint64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

TEST(monotime, keeps_pace_with_clock_monotonic) {
    monotime_init();
    unit_log("source: %s", monotime_source());
    uint64_t a = monotime_us(), ma = mono_us();
    struct timespec d = {0, 50 * 1000 * 1000};
    nanosleep(&d, NULL);
    uint64_t b = monotime_us(), mb = mono_us();
    CHECK(b > a);
    double ratio = (double)(b - a) / (double)(mb - ma);
    CHECK_MSG(ratio > 0.95 && ratio < 1.05, "monotime %llu us against CLOCK_MONOTONIC %llu us",
              (unsigned long long)(b - a), (unsigned long long)(mb - ma));
    uint64_t prev = monotime_us();
    for (int i = 0; i < 100000; i++) {
        uint64_t now = monotime_us();
        CHECK(now >= prev);
        prev = now;
    }
}
