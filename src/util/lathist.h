/* lathist.h -- latency histograms with Redis 7.0's bucket geometry.
 *
 * Redis keeps one HdrHistogram per command, tracking 1 ns .. 1 s with two
 * significant digits, and derives LATENCY HISTOGRAM and INFO latencystats
 * from it. For those replies to agree with Redis's to the digit, a lathist
 * has the same geometry: values below 256 are counted exactly; above, each
 * power-of-two range [2^k, 2^(k+1)) is split into 128 equal sub-buckets
 * (k = 8 .. 29), so a count stands for every value of its sub-bucket.
 * LATHIST_LEN counters cover 1 .. 2^30 (values are clamped to
 * [LATHIST_MIN, LATHIST_MAX] on the way in).
 *
 * The counters are plain words: the owner adds with lathist_add_word-style
 * relaxed stores and readers sum several histograms (one per thread) into
 * a private copy before asking for percentiles or the cumulative
 * distribution, which read only that copy. */
#ifndef GOBLIN_UTIL_LATHIST_H
#define GOBLIN_UTIL_LATHIST_H
#include <stdint.h>

#define LATHIST_MIN 1LL          /* ns */
#define LATHIST_MAX 1000000000LL /* ns: one second */
#define LATHIST_LEN 3072         /* (23 buckets + 1) * 128 half sub-buckets */

/* The counter a value (ns, already clamped) is counted in. */
int lathist_index(int64_t v);
/* The smallest and the largest value that counter stands for. */
int64_t lathist_lowest(int idx);
int64_t lathist_highest(int idx);

/* The value at or below which pct percent of the total lie, as HdrHistogram
 * reports it (the highest value of the counter that reaches the rank;
 * for 0, its lowest). counts holds LATHIST_LEN counters summing to total. */
int64_t lathist_percentile(const uint64_t *counts, uint64_t total, double pct);

/* The cumulative distribution at the power-of-two reporting levels
 * 1024 ns, 2048 ns, ...: fn(usec, cumulative count) for each level whose
 * cumulative count grew, usec being the level's bucket bound in
 * microseconds (what LATENCY HISTOGRAM prints). Returns how many calls
 * were made. */
typedef void lathist_cdf_fn(void *arg, int64_t usec, uint64_t cumulative);
int lathist_cdf(const uint64_t *counts, uint64_t total, lathist_cdf_fn *fn, void *arg);
#endif
