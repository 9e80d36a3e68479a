/* hash.h -- field -> value maps for the hash type (see hash.c for the design).
 *
 * A hash has two forms. The small form is one packed block with no index
 * (what Redis calls a listpack): used while the hash has at most
 * limits.max_entries fields and every field and value written so far was at
 * most limits.max_value bytes. The large form keeps every (field, value) pair
 * in the hash's own arena and indexes them with a swiss table of 4-byte arena
 * references. hash_set() converts small -> large when a limit is crossed;
 * nothing converts back (Redis never does either).
 *
 * Pointers handed out (field/value bytes from get, iteration, scan, random)
 * stay valid until the next call that modifies the hash. Not thread-safe:
 * the owner (a shard) serialises calls. */
#ifndef GOBLIN_DS_HASH_H
#define GOBLIN_DS_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "ds/swiss.h"

typedef struct hash hash;

enum { HASH_SMALL = 0, HASH_LARGE = 1 };

#define HASH_OK 0
#define HASH_ENOMEM (-1) /* out of memory; the hash is unchanged */
#define HASH_EFULL (-2)  /* the arena's reference space is exhausted (4 GiB of pairs) */

/* The small form's byte budget, like Redis's listpack safety limit. */
#define HASH_SMALL_MAX_BYTES ((size_t)1 << 30)

typedef struct hash_limits {
    size_t max_entries; /* hash-max-listpack-entries */
    size_t max_value;   /* hash-max-listpack-value: longest field or value */
} hash_limits;

/* A new empty hash (small form); NULL when out of memory. */
hash *hash_new(void);
/* A new empty hash for n fields to come (an RDB load): the large form with
 * its index presized for n when n > lim->max_entries (Redis loads such a
 * hash as a hashtable directly), else hash_new(). NULL when out of memory. */
hash *hash_new_hint(size_t n, const hash_limits *lim);
void hash_free(hash *h);
/* A deep copy in the same form, compacted; NULL when out of memory. */
hash *hash_dup(const hash *h);

int hash_form(const hash *h);       /* HASH_SMALL or HASH_LARGE */
size_t hash_len(const hash *h);
/* Bytes the hash holds: the packed block, or struct + arena + index. */
size_t hash_mem_usage(const hash *h);
/* Move up to groups groups of the large form's index resize in flight
 * (lf_rehash_step); 1 while more remain, 0 when none (or small). */
int hash_rehash_step(hash *h, size_t groups);

/* 1 and the value when field is present, else 0. */
int hash_get(hash *h, const void *f, size_t flen, const char **v, size_t *vlen);
int hash_exists(hash *h, const void *f, size_t flen);
/* A lookup of field f to come (lf_prefetch's stages; large form only). */
void hash_prefetch(const hash *h, const void *f, size_t flen, int stage);

/* Set field to value. Returns 1 when the field was new, 0 when it was
 * overwritten, or a HASH_E* error (the hash is then unchanged). *hp may be
 * replaced (conversion to the large form). */
int hash_set(hash **hp, const void *f, size_t flen, const void *v, size_t vlen, const hash_limits *lim);
/* 1 when field was deleted, 0 when absent. An emptied hash stays valid;
 * *hp may be replaced (the small block shrinks). */
int hash_del(hash **hp, const void *f, size_t flen);
/* Force the large form (tests, DEBUG). HASH_OK or an error. */
int hash_convert(hash **hp);

/* Every pair, once. Nothing may modify the hash while an iterator is open. */
typedef struct hash_iter {
    hash *h;
    size_t pos;         /* small: byte offset of the next entry */
    swiss_iter si;      /* large */
} hash_iter;

void hash_iter_init(hash_iter *it, hash *h);
int hash_iter_next(hash_iter *it, const char **f, size_t *flen, const char **v, size_t *vlen);
void hash_iter_done(hash_iter *it);

typedef void hash_pair_fn(void *arg, const char *f, size_t flen, const char *v, size_t vlen);
typedef uint64_t hash_rand_fn(void);

/* One uniformly chosen pair; 0 when the hash is empty. */
int hash_random(hash *h, hash_rand_fn *rnd, const char **f, size_t *flen, const char **v, size_t *vlen);
/* count independent uniform picks (repetitions allowed), reported in order. */
void hash_random_pairs(hash *h, size_t count, hash_rand_fn *rnd, hash_pair_fn *fn, void *arg);
/* count distinct pairs chosen uniformly (count < hash_len; larger counts
 * report every pair). Returns HASH_OK or HASH_ENOMEM (nothing reported). */
int hash_random_unique(hash *h, size_t count, hash_rand_fn *rnd, hash_pair_fn *fn, void *arg);

/* SCAN contract: call fn for one step's pairs and return the next cursor,
 * 0 when done. The small form reports everything and returns 0 whatever the
 * cursor; the large form follows swiss_scan (every pair present for the
 * whole scan is reported at least once, across growth). */
uint64_t hash_scan(hash *h, uint64_t cursor, hash_pair_fn *fn, void *arg);

/* Consistency check for tests: 0 when every invariant holds, else a
 * negative line-specific code. */
int hash_check(const hash *h);

#endif
