/* zset.h -- sorted set: member -> score, ordered by (score, member).
 *
 * Two encodings (see zset.c for the design and the invariants):
 *   packed  one sorted byte block, no index (Redis's "listpack" encoding);
 *   big     members and scores in an arena, a swiss-table index member ->
 *           entry (O(1) score lookup) and a B+tree of (score, entry) with
 *           subtree counts (O(log n) rank, seek by rank / score / member).
 * Ties on score are ordered by member bytes (memcmp, shorter first).
 *
 * The structure knows nothing about the server: encoding thresholds come in
 * as zset_limits, and command semantics stay in cmd/t_zset.c except for the
 * ZADD flag logic, which is the one piece every writer shares.
 *
 * Pointers to member bytes handed out by lookups and iterators stay valid
 * until the next modification of the same zset. */
#ifndef GOBLIN_DS_ZSET_H
#define GOBLIN_DS_ZSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct zset zset;

typedef struct zset_limits {
    size_t max_entries;  /* packed while card <= this ... */
    size_t max_value;    /* ... and every member is at most this long */
} zset_limits;

#define ZSET_OK 0
#define ZSET_ENOMEM (-1)  /* allocation failed */
#define ZSET_EFULL (-2)   /* the arena's reference space is exhausted */

/* A new empty zset (packed; writes convert it when the limits demand). */
zset *zset_new(const zset_limits *lim);
/* The same, but big from the start when size_hint elements will not fit
 * the packed limits (Redis creates such results as skiplists directly). */
zset *zset_new_hint(size_t size_hint, const zset_limits *lim);
/* zset_new_hint for exactly n members to come (an RDB load): a big zset's
 * member index is also presized for n, so it never grows while loading. */
zset *zset_new_reserve(size_t n, const zset_limits *lim);
void zset_free(zset *z);
/* Deep copy, same encoding; NULL on allocation failure. */
zset *zset_dup(const zset *z);
size_t zset_card(const zset *z);
int zset_is_packed(const zset *z);
/* Bytes of memory held (structure, blocks, index, tree nodes). */
size_t zset_mem_bytes(const zset *z);
/* Move up to groups groups of the member index's resize in flight
 * (lf_rehash_step); 1 while more remain. */
int zset_rehash_step(zset *z, size_t groups);

/* Score of member; 1 when present. */
int zset_score(zset *z, const void *m, size_t n, double *score);
/* A lookup of member m to come (lf_prefetch's stages; big form only). */
void zset_prefetch(const zset *z, const void *m, size_t n, int stage);
/* An insert of score to come (zbt_prefetch's stages; big form of
 * LF_PREFETCH_MIN members or more only). */
void zset_prefetch_score(const zset *z, double score, int stage);
/* 0-based ascending rank of member, -1 when absent (score optional). */
long zset_rank(zset *z, const void *m, size_t n, double *score);

/* ZADD semantics: flags in, outcome out. */
enum { ZADD_IN_NX = 1, ZADD_IN_XX = 2, ZADD_IN_GT = 4, ZADD_IN_LT = 8, ZADD_IN_INCR = 16 };
enum { ZADD_OUT_NOP = 1, ZADD_OUT_NAN = 2, ZADD_OUT_ADDED = 4, ZADD_OUT_UPDATED = 8 };
/* Add or update member with score under the ZADD flags. *out receives the
 * ZADD_OUT_* outcome and *newscore (if not NULL) the member's score after
 * the call when it was added or updated. With INCR the score is added to the
 * current one; a NaN result leaves the member untouched (ZADD_OUT_NAN).
 * Returns ZSET_OK or an error (nothing changed). */
int zset_add(zset *z, double score, const void *m, size_t n, int in, int *out, double *newscore,
             const zset_limits *lim);
/* Remove member; 1 when it was present. */
int zset_delete(zset *z, const void *m, size_t n);
/* Remove the elements of ranks [lo, hi); returns how many. */
size_t zset_delete_range(zset *z, size_t lo, size_t hi);

/* Score ranges: [min, max] with either end exclusive. */
typedef struct zset_range {
    double min, max;
    int minex, maxex;
} zset_range;
/* Lex ranges: a bound is -inf, +inf, or a member inclusive / exclusive. */
enum { ZLEX_NEG_INF = 0, ZLEX_POS_INF = 1, ZLEX_INCL = 2, ZLEX_EXCL = 3 };
typedef struct zset_lexbound {
    int kind;
    const char *p;
    size_t n;
} zset_lexbound;
typedef struct zset_lexrange {
    zset_lexbound min, max;
} zset_lexrange;

/* Ranks [*lo, *hi) of the elements inside a score range (empty: lo == hi). */
void zset_score_span(zset *z, const zset_range *r, size_t *lo, size_t *hi);
/* The same for a lex range. The span is what an ascending (rev = 0) or
 * descending (rev = 1) walk visits: members are assumed sorted when all
 * scores are equal, and the packed encoding scans exactly as Redis's
 * listpack does, so unsorted members give the same answer as Redis. */
void zset_lex_span(zset *z, const zset_lexrange *r, int rev, size_t *lo, size_t *hi);
/* Whether a lex range can hold anything at all (min <= max). */
int zset_lexrange_nonempty(const zset_lexrange *r);

/* Iteration from a rank, ascending or descending. */
typedef struct zset_iter {
    const zset *z;
    int rev;
    size_t off;        /* packed: offset of the next entry, SIZE_MAX at the end */
    void *leaf;        /* big: leaf of the next entry, NULL at the end */
    int pos;
} zset_iter;
void zset_iter_init(zset_iter *it, const zset *z, size_t rank, int rev);
/* 1 with the next element, 0 at the end. */
int zset_iter_next(zset_iter *it, const char **m, size_t *n, double *score);

/* Element at a rank (< card). */
void zset_at(const zset *z, size_t rank, const char **m, size_t *n, double *score);

/* SCAN: calls fn for the elements of one cursor step; returns the next
 * cursor, 0 when done. A packed zset is reported whole in one step. */
typedef void zset_scan_fn(void *arg, const char *m, size_t n, double score);
uint64_t zset_scan(zset *z, uint64_t cursor, zset_scan_fn *fn, void *arg);

/* Accumulating a computed zset (ZUNIONSTORE and friends): members are
 * added unordered (merge decides the score of a member seen twice), then
 * zset_acc_finish sorts once and picks the encoding from the limits. */
typedef double zset_merge_fn(double old, double add);
zset *zset_acc_new(void);
int zset_acc_add(zset *z, const void *m, size_t n, double score, zset_merge_fn *merge);
/* 1 when member is in the accumulator (score optional). */
int zset_acc_find(zset *z, const void *m, size_t n, double *score);
int zset_acc_finish(zset *z, const zset_limits *lim);

/* Convert to packed when card and members fit the limits. */
int zset_pack_if_fits(zset *z, const zset_limits *lim);
/* Longest member (for encoding decisions). */
size_t zset_max_member(const zset *z);

/* Incremental arena compaction (called by the writers themselves; exposed
 * for tests and DEBUG). Returns 1 while more work remains. */
int zset_compact_step(zset *z, size_t budget);

/* Walk the whole structure and check every invariant; 0 when consistent,
 * else a negative line-specific code. */
int zset_check(const zset *z);

#endif
