/* list.h -- a deque of packed chunks: the storage behind the list type.
 *
 * Elements are byte strings. A list keeps them in chunks of at most
 * list-max-listpack-size (a byte budget such as 8 KiB, or an element count);
 * a directory of (chunk, count) pairs makes push and pop at both ends O(1)
 * and turns an index into a walk over counts from the nearer end. See
 * list.c for the layout and its invariant.
 *
 * Element views (list_elem) point into the list and stay valid until the
 * next call that modifies the list. The list is not thread-safe: its owner
 * (the key's shard) serialises every call, reads included (a read may
 * update the list's internal position cache). */
#ifndef GOBLIN_DS_LIST_H
#define GOBLIN_DS_LIST_H
#include <stddef.h>
#include <stdint.h>

#define LIST_HEAD 0
#define LIST_TAIL 1

#define LIST_OK 0
#define LIST_ENOMEM (-1)
#define LIST_ERANGE (-2)    /* index out of range */
#define LIST_ETOOBIG (-3)   /* element of 4 GiB or more */

typedef struct glist glist;

/* How big a chunk may grow (from list-max-listpack-size): a byte budget for
 * the whole chunk, and when count > 0 also an element count. */
typedef struct list_limit {
    size_t bytes;
    uint32_t count;
} list_limit;

/* fill < 0: -1..-5 = 4, 8, 16, 32, 64 KiB (below -5 counts as -5);
 * fill >= 0: at most fill elements (at least 1, at most 32767) and 8 KiB. */
void list_limit_from_fill(list_limit *lim, long long fill);

/* A value to store or look for, classified once: canonical decimal
 * integers are stored in a compact integer form. */
typedef struct list_val {
    const char *p;
    size_t n;
    long long v;
    int isint;
} list_val;
void list_val_init(list_val *v, const void *p, size_t n);

/* An element read from a list: bytes p[0..n) or, when isint, the integer v
 * (whose text is its canonical decimal form). */
typedef struct list_elem {
    const char *p;
    size_t n;
    long long v;
    int isint;
} list_elem;

/* The element as text; an integer is formatted into buf (at least 21
 * bytes). */
const char *list_elem_text(const list_elem *e, char *buf, size_t *n);
/* The element as a value to push (elsewhere: it points into the list). */
void list_val_from_elem(list_val *v, const list_elem *e);
int list_elem_eq(const list_elem *e, const list_val *v);

glist *list_new(void);
void list_free(glist *l);
/* A copy with the same elements (chunks packed tight); NULL on no memory. */
glist *list_dup(const glist *l);
uint64_t list_len(const glist *l);
/* Heap bytes the list holds: header, directory, chunks, caches. */
size_t list_mem_bytes(const glist *l);

/* Push one value at an end. LIST_OK, LIST_ENOMEM or LIST_ETOOBIG (the list
 * unchanged on error). */
int list_push(glist *l, int where, const list_val *v, const list_limit *lim);
/* The element at an end; 0 when the list is empty. */
int list_peek(glist *l, int where, list_elem *e);
/* Remove n elements from an end (all of them when n >= length). */
void list_pop(glist *l, int where, uint64_t n);
/* Element at index (negative counts from the tail); 0 when out of range. */
int list_index(glist *l, long long index, list_elem *e);
/* Replace the element at index (negative from the tail). */
int list_set(glist *l, long long index, const list_val *v, const list_limit *lim);
/* Insert before the element at 0 <= index <= length (length appends). */
int list_insert(glist *l, uint64_t index, const list_val *v, const list_limit *lim);
/* Remove elements equal to v: count > 0 the first count from the head,
 * count < 0 the first -count from the tail, 0 all. Returns how many. */
uint64_t list_remove(glist *l, const list_val *v, long long count, const list_limit *lim);

/* Iteration from an index towards the tail (dir LIST_TAIL) or the head
 * (LIST_HEAD). The list must not change while an iterator is in use. */
typedef struct list_iter {
    glist *l;
    int dir;
    uint32_t ci;               /* chunk being walked */
    const unsigned char *p;    /* forward: next element */
    const unsigned char *end;  /* forward: end of the chunk's bytes */
    const unsigned char *base; /* backward: the chunk's bytes */
    const uint32_t *offs;      /* backward: offsets of the chunk's elements */
    uint32_t k;                /* backward: elements left in this chunk */
    uint32_t *scratch;         /* backward: owned offset buffer */
    uint32_t scap;
} list_iter;
/* index in [0, length); out of range gives an empty iteration. */
void list_iter_init(list_iter *it, glist *l, uint64_t index, int dir);
int list_iter_next(list_iter *it, list_elem *e);
void list_iter_release(list_iter *it);

/* Structure statistics (tests, DEBUG): chunks and bytes in chunks. */
typedef struct list_stats {
    uint64_t chunks;
    uint64_t chunk_bytes;   /* allocated for chunks */
    uint64_t used_bytes;    /* encoded elements */
} list_stats;
void list_stats_get(const glist *l, list_stats *st);

/* Walk everything and check every invariant: 0 if consistent, else a
 * negative code naming the broken one. */
int list_check(const glist *l);
#endif
