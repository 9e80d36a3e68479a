/* hashfn.h -- the one byte-string hash used by every index in Goblin.
 *
 * A 64-bit multiply-fold hash over 8-byte words, keyed by a process-wide seed
 * that is chosen at random at start-up (hash flooding needs the seed). The
 * 128-bit multiply folds high and low halves, so every input bit reaches the
 * low bits the swiss table uses for its group index and its 7-bit tag. */
#ifndef GOBLIN_UTIL_HASHFN_H
#define GOBLIN_UTIL_HASHFN_H

#include <stddef.h>
#include <stdint.h>

void hash_set_seed(uint64_t seed);
uint64_t hash_bytes(const void *p, size_t len);
uint64_t hash_u64(uint64_t v);

#endif
