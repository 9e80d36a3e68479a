/* set.h -- unordered sets of byte strings (see set.c for the design).
 *
 * A set has three internal forms:
 *   SET_INTSET  a sorted array of int64: every member is a canonical decimal
 *               integer and there are at most limits.max_intset of them
 *               (Redis's "intset" encoding);
 *   SET_SMALL   one packed block of short members, no index;
 *   SET_LARGE   members in the set's own arena, a swiss table of 4-byte
 *               arena references as the index.
 * SMALL and LARGE are both what Redis 7.0 calls "hashtable": a set that has
 * left the intset form never returns to it. set_add() performs the
 * conversions (intset -> small or large, small -> large); set_pop_many() may
 * rebuild a large set that keeps few members as a small one.
 *
 * Members handed out (set_elem) point into the set, or into the set_elem's
 * own buffer for integers; they stay valid until the next call that
 * modifies the set. Not thread-safe: the owner (a shard) serialises calls,
 * reads included (a lookup may advance an incremental index resize). */
#ifndef GOBLIN_DS_SET_H
#define GOBLIN_DS_SET_H

#include <stddef.h>
#include <stdint.h>

#include "ds/swiss.h"

typedef struct gset gset;

enum { SET_INTSET = 0, SET_SMALL = 1, SET_LARGE = 2 };

#define SET_OK 0
#define SET_ENOMEM (-1) /* out of memory; the set is unchanged */
#define SET_EFULL (-2)  /* the arena's reference space is exhausted (4 GiB of members) */

/* Bounds of the packed SMALL form (internal: OBJECT ENCODING says hashtable). */
#define SET_SMALL_MAX_ENTRIES 64
#define SET_SMALL_MAX_MEMBER 64

/* Redis caps set-max-intset-entries at 2^30 whatever the setting. */
#define SET_INTSET_HARD_MAX ((size_t)1 << 30)

typedef struct set_limits {
    size_t max_intset; /* set-max-intset-entries */
} set_limits;

/* A member. p/n are its bytes; when isint is set, v is its value and p
 * points into buf (the canonical decimal text). isint == 0 only means "not
 * known to be an integer" (members of hashtable sets are plain bytes). A
 * set_elem must not be copied by value while p points into its buf. */
typedef struct set_elem {
    const char *p;
    size_t n;
    int64_t v;
    int isint;
    char buf[24];
} set_elem;

typedef uint64_t set_rand_fn(void);
typedef void set_elem_fn(void *arg, const set_elem *e);

/* A new empty set in the intset form (it converts on the first non-integer
 * member); NULL when out of memory. */
gset *set_new(void);
/* A new empty set that is "hashtable" from the start (never intset). */
gset *set_new_hashtable(void);
/* set_new_hashtable() for n members to come (an RDB load): past the packed
 * form's 64 members, the arena + index form with its index presized for n,
 * so it never grows while loading. NULL when out of memory. */
gset *set_new_reserve(size_t n);
void set_free(gset *s);
/* A deep copy in the same encoding; NULL when out of memory. */
gset *set_dup(const gset *s);

int set_form(const gset *s);      /* SET_INTSET, SET_SMALL or SET_LARGE */
int set_is_intset(const gset *s);
size_t set_card(const gset *s);
/* Bytes the set holds: the array or block, or struct + arena + index. */
size_t set_mem_usage(const gset *s);
/* Move up to groups groups of the large form's index resize in flight
 * (lf_rehash_step); 1 while more remain. */
int set_rehash_step(gset *s, size_t groups);

/* A set_elem of bytes p[0..n) (isint 0). */
void set_elem_bytes(set_elem *e, const void *p, size_t n);

int set_contains(gset *s, const void *m, size_t n);
/* A lookup of member m to come (lf_prefetch's stages; large form only). */
void set_prefetch(const gset *s, const void *m, size_t n, int stage);
int set_contains_elem(gset *s, const set_elem *e);

/* Add a member: 1 when added, 0 when already present, or a SET_E* error
 * (the set unchanged). *sp may be replaced (growth, conversion). */
int set_add(gset **sp, const void *m, size_t n, const set_limits *lim);
int set_add_elem(gset **sp, const set_elem *e, const set_limits *lim);
/* Remove a member: 1 when removed, 0 when absent. An emptied set stays
 * valid (the caller deletes the key); *sp may be replaced (shrinking). */
int set_remove(gset **sp, const void *m, size_t n);
int set_remove_elem(gset **sp, const set_elem *e);
/* Force a form further along intset -> small -> large (tests, DEBUG); a
 * set that does not fit the small form goes to large. SET_OK or an error. */
int set_convert(gset **sp, int form);

/* Every member, once. Nothing may modify the set while an iterator is
 * open (lookups in it are fine). */
typedef struct set_iter {
    gset *s;
    size_t pos;      /* intset: index; small: byte offset */
    swiss_iter si;   /* large */
} set_iter;
void set_iter_init(set_iter *it, gset *s);
int set_iter_next(set_iter *it, set_elem *e);
void set_iter_done(set_iter *it);

/* One uniformly chosen member; 0 when the set is empty. */
int set_random(gset *s, set_rand_fn *rnd, set_elem *e);
/* count independent uniform picks (repetitions allowed). */
void set_random_members(gset *s, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg);
/* count distinct members, every subset of that size equally likely; a count
 * >= card reports every member. Never fails: without memory for its work
 * array it falls back to selection sampling over the whole set. */
void set_random_unique(gset *s, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg);
/* Remove one uniformly chosen member, reporting it to fn before it goes.
 * Returns 1, or 0 when the set is empty. */
int set_pop(gset **sp, set_rand_fn *rnd, set_elem_fn *fn, void *arg);
/* Remove count distinct uniformly chosen members (a uniform subset),
 * reporting each to fn before it goes; count >= card empties the set. Never
 * fails (without memory for the rebuild it pops one member at a time). */
void set_pop_many(gset **sp, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg);

/* SCAN contract: call fn for one step's members and return the next
 * cursor, 0 when done. Intset and small sets report everything at once and
 * return 0 whatever the cursor; large sets follow swiss_scan (every member
 * present for the whole scan is reported at least once, across growth). */
uint64_t set_scan(gset *s, uint64_t cursor, set_elem_fn *fn, void *arg);

/* Incremental arena compaction (writers call it themselves; exposed for
 * tests). Returns 1 while more work remains. */
int set_compact_step(gset *s, size_t budget);

/* Consistency check for tests: 0 when every invariant holds, else a
 * negative line-specific code. */
int set_check(const gset *s);

#endif
