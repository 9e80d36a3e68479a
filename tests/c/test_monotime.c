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

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

TEST(monotime, a_reading_gives_the_wall_clock) {
    monotime_init();
    int64_t before = wall_ms();
    int64_t t = monotime_unix_ms(monotime_us());
    int64_t after = wall_ms();
    CHECK_MSG(t >= before - 1 && t <= after + 1, "%lld not within [%lld, %lld]", (long long)t, (long long)before,
              (long long)after);
    /* Later readings keep the wall clock's pace, and a new offset changes
     * nothing while the system clock is not stepped. */
    struct timespec d = {0, 30 * 1000 * 1000};
    nanosleep(&d, NULL);
    monotime_sync_wall();
    before = wall_ms();
    t = monotime_unix_ms(monotime_us());
    after = wall_ms();
    CHECK_MSG(t >= before - 1 && t <= after + 1, "%lld not within [%lld, %lld]", (long long)t, (long long)before,
              (long long)after);
    uint64_t m = monotime_us();
    CHECK(monotime_unix_ms(m + 5000) - monotime_unix_ms(m) == 5);
}
