/* zbtree.h -- counted B+tree of a big sorted set's elements (see zbtree.c).
 *
 * An element is one arena entry: its score (8 bytes, host double), then its
 * member bytes. The tree orders the elements' references by (score, member)
 * and counts them per subtree, so rank <-> position is O(log n) both ways.
 * It never owns the entries: it reads them from the arena it was given, and
 * whoever moves an entry calls zbt_replace_ref. Leaves are chained both ways
 * for range walks (zset.c walks them directly). Allocation failures abort. */
#ifndef GOBLIN_DS_ZBTREE_H
#define GOBLIN_DS_ZBTREE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ds/arena.h"

#define ZBT_LEAF_CAP 139 /* a leaf is 768 bytes */
#define ZBT_INNER_CAP 31

/* A leaf's pairs: entry references in order, each with a 10-bit hint of
 * its key (see zbtree.c, "Hints"): (zbt_key(score) >> shift) - base, its
 * low 8 bits in hlo, its top 2 in hhi (32 to a word). */
typedef struct zbt_leaf {
    struct zbt_leaf *prev, *next;
    uint64_t base;
    uint16_t n;
    uint8_t shift;             /* 0..54 */
    uint64_t hhi[(ZBT_LEAF_CAP + 31) / 32];
    uint8_t hlo[ZBT_LEAF_CAP];
    arena_ref ref[ZBT_LEAF_CAP];
} zbt_leaf;

/* Pair i's hint in leaf l. */
static inline unsigned zbt_hint(const zbt_leaf *l, int i) {
    return l->hlo[i] | (unsigned)(l->hhi[i >> 5] >> ((i & 31) * 2) & 3) << 8;
}

typedef struct zbtree {
    const arena *a;      /* where the elements live */
    void *root;          /* NULL when empty */
    zbt_leaf *head, *tail;
    uint32_t nleaf, ninner;
    int height;          /* 0: the root is a leaf */
} zbtree;

/* The order of members: bytes, then length (memcmp, shorter first). */
static inline int zbt_lex_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn) {
    size_t l = an < bn ? an : bn;
    int c = l ? memcmp(a, b, l) : 0;
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* A score's key: its 64-bit form whose unsigned order is the scores'
 * order (the sign bit flipped for positives, every bit for negatives); -0.0
 * is 0.0, as comparisons of doubles have it. */
static inline uint64_t zbt_key(double d) {
    uint64_t u;
    if (d == 0) d = 0.0;
    memcpy(&u, &d, 8);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

/* The element at r: its member (*n bytes) and its score. */
static inline const unsigned char *zbt_member(const zbtree *t, arena_ref r, size_t *n) {
    size_t len;
    const unsigned char *e = arena_get(t->a, r, &len);
    *n = len - 8;
    return e + 8;
}

static inline double zbt_score(const zbtree *t, arena_ref r) {
    double s;
    memcpy(&s, arena_get(t->a, r, NULL), 8);
    return s;
}

/* An empty tree over the entries of a (allocates nothing). */
void zbt_init(zbtree *t, const arena *a);
/* Free every node; the tree is empty again. */
void zbt_clear(zbtree *t);
/* Bytes of the nodes. */
size_t zbt_mem_bytes(const zbtree *t);

/* (s1, r1) <=> (s2, r2), two stored elements. */
int zbt_cmp(const zbtree *t, double s1, arena_ref r1, double s2, arena_ref r2);

/* Add element ref (score, member m[0..n)), absent from the tree. */
void zbt_insert(zbtree *t, double score, const unsigned char *m, size_t n, arena_ref ref);
/* An insert of score to come: stage 0 starts loading the parent of the
 * leaf it will reach (the levels above are read: the caches hold them),
 * stage 1 -- once that has had time to arrive -- the leaf itself. The
 * descent goes by score alone (a tie may pick a neighbour: only the
 * prefetch is off). Reads only. */
void zbt_prefetch(const zbtree *t, double score, int stage);
/* Rank of the key (score, m, n), or where it would go; ref: the key's own
 * entry (compared by reference) or ARENA_REF_NONE. */
size_t zbt_rank(const zbtree *t, double score, const unsigned char *m, size_t n, arena_ref ref);
/* Remove the pair at rank r (< count); its reference comes back. */
arena_ref zbt_delete_rank(zbtree *t, size_t r);
/* Element ref (member m, score old) gets score: the entry's score is
 * rewritten and the pair moves to its new place. */
void zbt_rescore(zbtree *t, arena_ref ref, const unsigned char *m, size_t n, double old, double score);
/* The entry of element (score, m, n) moved from `from` to `to`: re-point its
 * pair and the inner minimum that names it. Entries of both refs must be
 * readable. */
void zbt_replace_ref(zbtree *t, double score, const unsigned char *m, size_t n, arena_ref from, arena_ref to);
/* Fill an empty tree with n pairs sorted by key, nodes evenly filled. */
void zbt_build(zbtree *t, const double *sc, const arena_ref *rf, size_t n);

/* The leaf holding rank r (< count), *pos its position there. */
zbt_leaf *zbt_locate(const zbtree *t, size_t r, int *pos);

/* A monotone predicate over stored pairs (false ... false true ... true).
 * The pair's score lies in [lo, hi]: exact when lo == hi (an inner node's
 * key), else what a leaf's hint tells of it (zbt_score(t, r) reads it). */
typedef int zbt_pred_fn(const zbtree *t, const void *arg, double lo, double hi, arena_ref r);
/* Rank of the first pair for which pred holds (the count when none). */
size_t zbt_lower_pred(const zbtree *t, zbt_pred_fn *pred, const void *arg);

/* Every invariant of a tree of n pairs (see zbtree.c): 0, or a negative
 * line-specific code. */
int zbt_check(const zbtree *t, size_t n);
/* 1 when entry r's pair sits where its key sorts. */
int zbt_holds(const zbtree *t, arena_ref r);

#endif
