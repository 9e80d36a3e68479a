/* packed.h -- the packed blobs inside RDB values: listpack, ziplist, intset
 * and zipmap, read through one validating iterator each, and the two that
 * Goblin writes (listpack and intset) built by small builders.
 *
 * Every iterator checks the blob as it goes: each entry must lie inside the
 * blob, every header field must agree with what the walk finds (total
 * bytes, element count, tail offset, back lengths / previous lengths) and
 * the blob must end exactly at its terminator. A caller that iterates to
 * the end (next() returning 0) has therefore validated the whole blob; -1
 * means corrupt and the element is not filled. Pure module, no server
 * types. */
#ifndef GOBLIN_PERSIST_PACKED_H
#define GOBLIN_PERSIST_PACKED_H
#include <stddef.h>
#include <stdint.h>

#include "util/endian.h"

/* An element: bytes s[0..n) or, when isint, the integer v. */
typedef struct pk_elem {
    const unsigned char *s;
    size_t n;
    int64_t v;
    int isint;
} pk_elem;

/* The element as text (integers formatted into buf, >= 21 bytes). */
const unsigned char *pk_elem_text(const pk_elem *e, char *buf, size_t *n);

/* ---- listpack ------------------------------------------------------------
 * u32 total bytes, u16 element count (65535: count it), entries, 0xFF. An
 * entry is an encoding byte (+ length / integer bytes), the string bytes,
 * and a "back length" (the entry's size so far, 1-5 bytes, read backwards). */
typedef struct lp_iter {
    const unsigned char *p, *end; /* next entry, the terminator */
    uint32_t declared, seen;
} lp_iter;
/* -1 when the header is already wrong. */
int lp_iter_init(lp_iter *it, const unsigned char *blob, size_t n);
/* 1 element, 0 at the (verified) end, -1 corrupt. */
int lp_iter_next(lp_iter *it, pk_elem *e);

typedef struct lp_builder {
    unsigned char *p;
    size_t len, cap;
    uint32_t count;
    int oom;
} lp_builder;
void lpb_init(lp_builder *b);
void lpb_reset(lp_builder *b);   /* empty again, keeps the buffer */
void lpb_free(lp_builder *b);
/* Append a string (stored as an integer when it is a canonical one, as
 * Redis's listpack does) or an integer. */
void lpb_add_str(lp_builder *b, const void *s, size_t n);
void lpb_add_int(lp_builder *b, int64_t v);
/* Bytes the listpack would have now (header + entries + terminator). */
static inline size_t lpb_size(const lp_builder *b) { return b->len + 1; }
/* Write the header and terminator; returns the blob (valid until the next
 * builder call) and its size, NULL when an allocation failed. */
const unsigned char *lpb_finish(lp_builder *b, size_t *n);

/* ---- ziplist -------------------------------------------------------------
 * u32 total bytes, u32 offset of the last entry, u16 count (65535: count
 * it), entries, 0xFF. An entry is the previous entry's size (1 or 5 bytes),
 * an encoding (string length or integer kind) and the data. */
typedef struct zl_iter {
    const unsigned char *base, *p, *end;
    size_t prevsize, lastoff;
    uint32_t declared, seen;
} zl_iter;
int zl_iter_init(zl_iter *it, const unsigned char *blob, size_t n);
int zl_iter_next(zl_iter *it, pk_elem *e);

/* ---- intset --------------------------------------------------------------
 * u32 element width (2, 4 or 8), u32 count, the integers little-endian in
 * strictly ascending order. */
typedef struct is_iter {
    const unsigned char *p;
    uint32_t width, count, i;
    int64_t prev;
} is_iter;
int is_iter_init(is_iter *it, const unsigned char *blob, size_t n);
/* 1 with *v, 0 at the end, -1 when out of order. */
int is_iter_next(is_iter *it, int64_t *v);
static inline uint32_t is_count(const is_iter *it) { return it->count; }

/* An intset of v[0..n) (sorted ascending, distinct) into a malloc'd blob;
 * NULL when out of memory. */
unsigned char *is_build(const int64_t *v, size_t n, size_t *blob_len);

/* ---- zipmap (RDB versions before 4) ----------------------------------------
 * u8 count (254+: count it), then key length, key, value length, a "free"
 * byte f, the value and f unused bytes; 0xFF ends it. A length is one byte
 * (< 254) or 254 followed by a u32. Elements come key, value, key, value. */
typedef struct zm_iter {
    const unsigned char *p, *end;
    int want_value;
    unsigned free_after;
} zm_iter;
int zm_iter_init(zm_iter *it, const unsigned char *blob, size_t n);
int zm_iter_next(zm_iter *it, pk_elem *e);

#endif
