/* rand.c -- per-thread PRNG: splitmix64 seeding, xorshift128+ stepping. */
#include "util/rand.h"

#include <stdatomic.h>
#include <time.h>

static _Thread_local uint64_t rs[2];
static _Thread_local int rs_ready;
static atomic_uint_fast64_t rand_counter = 0x9e3779b97f4a7c15ULL;

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rand_seed_thread(uint64_t seed) {
    rs[0] = splitmix(&seed);
    rs[1] = splitmix(&seed) | 1;
    rs_ready = 1;
}

uint64_t rand_next(void) {
    if (!rs_ready) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        rand_seed_thread((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
                         atomic_fetch_add(&rand_counter, 0x9e3779b97f4a7c15ULL));
    }
    uint64_t s1 = rs[0];
    const uint64_t s0 = rs[1];
    const uint64_t r = s0 + s1;
    rs[0] = s0;
    s1 ^= s1 << 23;
    rs[1] = s1 ^ s0 ^ (s1 >> 18) ^ (s0 >> 5);
    return r;
}

uint64_t rand_below_from(uint64_t (*rnd)(void), uint64_t n) {
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do r = rnd(); while (r >= lim);
    return r % n;
}

uint64_t rand_below(uint64_t n) { return rand_below_from(rand_next, n); }

double rand_double(void) { return (double)(rand_next() >> 11) * (1.0 / 9007199254740992.0); }
