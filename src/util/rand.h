/* rand.h -- per-thread xoshiro-style PRNG for sampling (not cryptographic). */
#ifndef GOBLIN_UTIL_RAND_H
#define GOBLIN_UTIL_RAND_H
#include <stdint.h>
void rand_seed_thread(uint64_t seed);
uint64_t rand_next(void);
/* Uniform in [0, n) without modulo bias. n > 0. */
uint64_t rand_below(uint64_t n);
/* The same from the caller's source of uniform 64-bit values. */
uint64_t rand_below_from(uint64_t (*rnd)(void), uint64_t n);
double rand_double(void);
#endif
