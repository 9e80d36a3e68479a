/* unit.h -- the tiny test framework of the C unit tests (tests/c/unit_main.c).
 *
 *   TEST(swiss, grow_during_scan) { ... CHECK(x == 1); CHECK_EQ(a, b); }
 *
 * Tests register themselves before main() runs and run in the order of their
 * files and lines (constructors run in an order the linker picks: link-time
 * optimisation reverses it within a file); a failed CHECK reports the
 * file, line and values and abandons the test (longjmp back to the runner),
 * so a CHECK may sit in a helper function. The runner ends with exactly one
 * line "N passed, M failed" and a non-zero exit status on any failure.
 * `unit-tests [substring...]` runs only the tests whose "suite.name" contains
 * one of the substrings. UNIT_SCALE=<float> scales the randomized workloads
 * (default 1, 0.5 under sanitizers). */
#ifndef GOBLIN_TESTS_UNIT_H
#define GOBLIN_TESTS_UNIT_H

#include <stdint.h>

typedef void unit_fn(void);

void unit_register(const char *suite, const char *name, const char *file, int line, unit_fn *fn);
_Noreturn void unit_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An informational line under the current test (measurements, skips). */
void unit_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Run fn when the current test ends, passed or failed (LIFO, up to 8):
 * restores global state a failed CHECK would otherwise leak. */
void unit_cleanup(void (*fn)(void));
/* Multiply iteration counts by this (>= 0.01). */
double unit_scale(void);
/* n scaled, at least min. */
uint64_t unit_scaled(uint64_t n, uint64_t min);
/* Seconds on a monotonic clock. */
double unit_now(void);

#define TEST(suite, name)                                                             \
    static void unit_test_##suite##_##name(void);                                     \
    __attribute__((constructor)) static void unit_reg_##suite##_##name(void) {        \
        unit_register(#suite, #name, __FILE__, __LINE__, unit_test_##suite##_##name); \
    }                                                                                 \
    static void unit_test_##suite##_##name(void)

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) unit_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                       \
    do {                                                                           \
        if (!(cond)) unit_fail(__FILE__, __LINE__, __VA_ARGS__);                   \
    } while (0)

#define CHECK_EQ(a, b)                                                             \
    do {                                                                           \
        unsigned long long unit_a_ = (unsigned long long)(a);                      \
        unsigned long long unit_b_ = (unsigned long long)(b);                      \
        if (unit_a_ != unit_b_)                                                    \
            unit_fail(__FILE__, __LINE__, "CHECK_EQ(%s, %s): %llu != %llu", #a, #b, \
                      unit_a_, unit_b_);                                           \
    } while (0)

#define CHECK_STR(got, want)                                                       \
    do {                                                                           \
        const char *unit_g_ = (got), *unit_w_ = (want);                            \
        if (strcmp(unit_g_, unit_w_) != 0)                                         \
            unit_fail(__FILE__, __LINE__, "CHECK_STR(%s): \"%s\" != \"%s\"", #got,  \
                      unit_g_, unit_w_);                                           \
    } while (0)

/* Deterministic PRNG for the tests (splitmix64), independent of ds/rand. */
typedef struct unit_rng {
    uint64_t s;
} unit_rng;

static inline uint64_t unit_rand(unit_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (bias irrelevant at test sizes). */
static inline uint64_t unit_below(unit_rng *r, uint64_t n) { return unit_rand(r) % n; }

#endif
