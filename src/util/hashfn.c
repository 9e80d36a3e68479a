/* hashfn.c -- seeded 64-bit byte-string hash (see hashfn.h). */
#include "util/hashfn.h"

#include <string.h>

#define HASH_K0 0xa0761d6478bd642fULL
#define HASH_K1 0xe7037ed1a0b428dbULL
#define HASH_K2 0x8ebc6af09c88c6e3ULL

static uint64_t hash_seed = 0x243f6a8885a308d3ULL;

void hash_set_seed(uint64_t seed) { hash_seed = seed; }

static inline uint64_t hash_fold(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t hash_read64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t hash_read_tail(const unsigned char *p, size_t n) {
    /* 1..7 bytes, little-endian into a word. */
    uint64_t v = 0;
    memcpy(&v, p, n);
    return v;
}

uint64_t hash_bytes(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = hash_seed ^ hash_fold(len ^ HASH_K0, HASH_K1);
    while (len >= 16) {
        h = hash_fold(hash_read64(p) ^ HASH_K1, hash_read64(p + 8) ^ h);
        p += 16;
        len -= 16;
    }
    if (len >= 8) {
        h = hash_fold(hash_read64(p) ^ HASH_K2, h ^ HASH_K0);
        p += 8;
        len -= 8;
    }
    if (len) h = hash_fold(hash_read_tail(p, len) ^ HASH_K1, h ^ HASH_K2);
    return hash_fold(h ^ HASH_K0, HASH_K2 ^ hash_seed);
}

uint64_t hash_u64(uint64_t v) { return hash_fold(v ^ hash_seed ^ HASH_K0, HASH_K1); }
