/* lathist.c -- latency histograms with Redis 7.0's bucket geometry (see
 * lathist.h).
 *
 * Index arithmetic: a value v >= 256 with bit length n falls in bucket
 * b = n - 8 and sub-bucket s = v >> b (128 <= s < 256); bucket 0 also holds
 * the exact values 0 .. 255 (s = v). Counter (b + 1) * 128 + (s - 128)
 * holds it, which lays the counters out in increasing value order: the
 * value of counter i is s << b, and it stands for the 2^b values from
 * there. Invariant: lathist_lowest(lathist_index(v)) <= v <=
 * lathist_highest(lathist_index(v)) for every v in [LATHIST_MIN,
 * LATHIST_MAX], and both bounds grow with the index. */
#include "util/lathist.h"

#include <assert.h>

#define HALF_MAG 7 /* 128 half sub-buckets */
#define HALF 128
#define SUB_MASK 255

static int bucket_of(int64_t v) { return (64 - __builtin_clzll((uint64_t)v | SUB_MASK)) - (HALF_MAG + 1); }

int lathist_index(int64_t v) {
    assert(v >= 0 && v <= LATHIST_MAX);
    int b = bucket_of(v);
    int s = (int)(v >> b);
    return ((b + 1) << HALF_MAG) + (s - HALF);
}

int64_t lathist_lowest(int idx) {
    int b = (idx >> HALF_MAG) - 1;
    int s = (idx & (HALF - 1)) + HALF;
    if (b < 0) {
        s -= HALF;
        b = 0;
    }
    return (int64_t)s << b;
}

/* The width of the range a value's counter stands for. */
static int64_t range_of(int64_t v) {
    int b = bucket_of(v);
    int s = (int)(v >> b);
    return (int64_t)1 << (s >= 2 * HALF ? b + 1 : b);
}

static int64_t lowest_of(int64_t v) {
    int b = bucket_of(v);
    return (v >> b) << b;
}

static int64_t highest_of(int64_t v) { return lowest_of(v) + range_of(v) - 1; }

int64_t lathist_highest(int idx) { return highest_of(lathist_lowest(idx)); }

int64_t lathist_percentile(const uint64_t *counts, uint64_t total, double pct) {
    double p = pct < 100.0 ? pct : 100.0;
    int64_t rank = (int64_t)((p / 100) * (double)total + 0.5);
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    int64_t v = 0;
    for (int i = 0; i < LATHIST_LEN; i++) {
        seen += counts[i];
        if (seen >= (uint64_t)rank) {
            v = lathist_lowest(i);
            break;
        }
    }
    return pct == 0.0 ? lowest_of(v) : highest_of(v);
}

/* The walk HdrHistogram's logarithmic iterator makes (first level 1024,
 * base 2): move counter by counter, adding counts, until the current
 * counter's value reaches the level's lowest value; report the counter's
 * highest value and the cumulative count there, and double the level.
 * Reports whose cumulative count did not grow are skipped (as Redis's
 * LATENCY HISTOGRAM skips them), so the walk can stop once every count is
 * in: what follows would only repeat the last count. */
int lathist_cdf(const uint64_t *counts, uint64_t total, lathist_cdf_fn *fn, void *arg) {
    int idx = -1, n = 0;
    int64_t value = 0, highest = 0, level = 1024;
    uint64_t cum = 0, reported = 0;
    while (cum < total && idx < LATHIST_LEN) {
        while (value < lowest_of(level)) {
            if (++idx >= LATHIST_LEN) break;
            cum += counts[idx];
            value = lathist_lowest(idx);
            highest = highest_of(value);
        }
        if (value >= lowest_of(level)) level *= 2;
        if (cum > reported) {
            fn(arg, highest / 1000, cum);
            n++;
        }
        reported = cum;
    }
    return n;
}
