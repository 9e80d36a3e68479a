/* test_lathist.c -- the latency histogram's geometry, percentiles and
 * cumulative distribution (the figures INFO latencystats and LATENCY
 * HISTOGRAM print). */
#include <stdio.h>
#include <string.h>

#include "util/lathist.h"
#include "unit.h"

TEST(lathist, every_value_lies_in_its_counter) {
    int prev = -1;
    for (int64_t v = 1; v <= LATHIST_MAX; v = v < 4096 ? v + 1 : v + v / 97 + 1) {
        int i = lathist_index(v);
        CHECK(i >= 0 && i < LATHIST_LEN);
        CHECK(i >= prev); /* counters in value order */
        prev = i;
        CHECK_MSG(lathist_lowest(i) <= v && v <= lathist_highest(i), "v=%lld in [%lld, %lld]", (long long)v,
                  (long long)lathist_lowest(i), (long long)lathist_highest(i));
        /* two significant digits: a counter is at most 1/128 of its value wide */
        CHECK(v < 256 || (lathist_highest(i) - lathist_lowest(i) + 1) * 128 <= lathist_lowest(i));
    }
    CHECK(lathist_index(LATHIST_MAX) < LATHIST_LEN);
    CHECK_EQ(lathist_lowest(lathist_index(255)), 255);
    CHECK_EQ(lathist_highest(lathist_index(255)), 255);
    CHECK_EQ(lathist_lowest(lathist_index(1000)), 1000);
    CHECK_EQ(lathist_highest(lathist_index(1000)), 1003);
    CHECK_EQ(lathist_highest(lathist_index(1024)), 1031);
}

static uint64_t counts[LATHIST_LEN];
static char out[4096];
static size_t outlen;

static void cdf_line(void *arg, int64_t usec, uint64_t cum) {
    (void)arg;
    outlen += (size_t)snprintf(out + outlen, sizeof(out) - outlen, "%lld:%llu ", (long long)usec,
                               (unsigned long long)cum);
}

static uint64_t fill(const int64_t *v, int n) {
    memset(counts, 0, sizeof(counts));
    for (int i = 0; i < n; i++) counts[lathist_index(v[i])]++;
    return (uint64_t)n;
}

TEST(lathist, percentiles_are_counter_bounds) {
    const int64_t v[] = {1000, 1000, 1000, 2000, 5000, 1000000};
    uint64_t total = fill(v, 6);
    CHECK_EQ(lathist_percentile(counts, total, 50), 1003);    /* p50 of INFO: 1.003 usec */
    CHECK_EQ(lathist_percentile(counts, total, 66.7), 2007);  /* rank 4: the 2000 ns counter, 8 wide */
    CHECK_EQ(lathist_percentile(counts, total, 99), 1003519); /* rank 6: 1 ms, its counter is 4096 wide */
    CHECK_EQ(lathist_percentile(counts, total, 100), 1003519);
    CHECK_EQ(lathist_percentile(counts, total, 0), 1000); /* rank 1, its lowest value */
    memset(counts, 0, sizeof(counts));
    CHECK_EQ(lathist_percentile(counts, 0, 50), 0);
}

TEST(lathist, cumulative_distribution_at_power_of_two_levels) {
    const int64_t v[] = {1000, 1000, 1000, 2000, 5000, 1000000};
    uint64_t total = fill(v, 6);
    outlen = 0;
    int n = lathist_cdf(counts, total, cdf_line, NULL);
    /* 1024 ns holds the three 1000s, 2048 the 2000, 8192 the 5000, and
     * 2^20 ns (the walk reports the end of the counter at that level,
     * 1056767 ns) the millisecond. */
    CHECK_MSG(strcmp(out, "1:3 2:4 8:5 1056:6 ") == 0, "%s", out);
    CHECK_EQ(n, 4);
    outlen = 0;
    CHECK_EQ(lathist_cdf(counts, 0, cdf_line, NULL), 0);
    /* One second lies in the last bucket, [2^29, 2^30): the walk runs off
     * the end before the 2^30 level and reports the last counter's end. */
    const int64_t w[] = {LATHIST_MAX, 1};
    total = fill(w, 2);
    outlen = 0;
    lathist_cdf(counts, total, cdf_line, NULL);
    CHECK_MSG(strcmp(out, "1:1 1073741:2 ") == 0, "%s", out);
}
