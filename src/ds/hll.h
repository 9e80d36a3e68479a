/* hll.h -- HyperLogLog cardinality estimator, byte-compatible with the
 * string values Redis 7.0 makes (PFADD, PFMERGE, RDB and DUMP move them as
 * ordinary strings).
 *
 * Layout (all of it is the string value):
 *   bytes 0..3   "HYLL"
 *   byte  4      encoding: 0 dense, 1 sparse
 *   bytes 5..7   unused (copied along, never interpreted)
 *   bytes 8..15  cached cardinality, little endian; the top bit of byte 15
 *                set means the cache is stale
 *   bytes 16..   dense: 16384 registers of 6 bits, 12288 bytes; register i
 *                starts at bit 6*i counting from the least significant bit
 *                of each byte (a register may straddle two bytes).
 *                sparse: run-length opcodes covering the 16384 registers:
 *                  00xxxxxx           ZERO  run of x+1 (1..64) zero registers
 *                  01xxxxxx yyyyyyyy  XZERO run of xy+1 (1..16384) zeros
 *                  1vvvvvxx           VAL   run of x+1 (1..4) registers
 *                                           holding v+1 (1..32)
 * Invariant of a valid value: a dense one is exactly HLL_DENSE_SIZE bytes;
 * a sparse one's runs add up to exactly HLL_REGISTERS. A sparse value turns
 * dense (never back) when a register needs more than 32 or when an update
 * would make it longer than the caller's sparse limit
 * (hll-sparse-max-bytes). Reading a value never trusts it: a malformed
 * sparse stream is reported as invalid rather than read out of bounds.
 *
 * An element is hashed with MurmurHash64A (seed 0xadc83b19); the low 14
 * bits pick the register, and the register candidate is 1 + the number of
 * trailing zero bits of the remaining 50 bits (at most 51). The count is
 * Ertl's improved raw estimator over the register histogram, computed in
 * the same floating-point steps as Redis so results agree exactly. */
#ifndef GOBLIN_DS_HLL_H
#define GOBLIN_DS_HLL_H
#include <stddef.h>
#include <stdint.h>

#define HLL_P 14
#define HLL_Q (64 - HLL_P)
#define HLL_REGISTERS (1 << HLL_P)
#define HLL_BITS 6
#define HLL_HDR_SIZE 16
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + (HLL_REGISTERS * HLL_BITS + 7) / 8)
#define HLL_DENSE 0
#define HLL_SPARSE 1
#define HLL_SPARSE_VAL_MAX 32
#define HLL_SPARSE_DEFAULT_MAX_BYTES 3000

/* Errors of the functions below. */
#define HLL_ERR_INVALID (-1)  /* malformed value (Redis: INVALIDOBJ) */
#define HLL_ERR_NOMEM (-2)

/* A value being worked on: a malloc'd copy of the string (hll_load,
 * hll_init_empty; any update may reallocate it), or a view of a dense
 * value's bytes (dense updates never reallocate; not hll_free'd). */
typedef struct hll {
    unsigned char *p;
    size_t len, cap;
} hll;

/* 0 when p[0..len) passes Redis's check of an HLL string value (magic,
 * known encoding, exact dense size), -1 otherwise. */
int hll_check(const unsigned char *p, size_t len);
/* Encoding byte of a checked value. */
static inline int hll_encoding(const unsigned char *p) { return p[4]; }

/* h becomes a copy of p[0..len) / a fresh empty sparse HLL (cache valid, 0).
 * 0 or HLL_ERR_NOMEM. hll_free releases the copy. */
int hll_load(hll *h, const unsigned char *p, size_t len);
int hll_init_empty(hll *h);
void hll_free(hll *h);

/* Cached cardinality: 1 with *card when valid, 0 when stale. */
int hll_cache_get(const unsigned char *p, uint64_t *card);
void hll_cache_set(unsigned char *p, uint64_t card);
void hll_cache_invalidate(unsigned char *p);

/* MurmurHash64A of p[0..n) with the given seed. */
uint64_t hll_murmur64a(const void *p, size_t n, uint64_t seed);
/* Register index (*index) and candidate value (returned, 1..51) of an
 * element. */
int hll_pattern(const void *ele, size_t n, long *index);

/* Dense register access; regs points past the header. */
int hll_dense_get(const unsigned char *regs, long i);
void hll_dense_put(unsigned char *regs, long i, int val);

/* Adds an element: 1 when a register grew, 0 when not, or an HLL_ERR_*. */
int hll_add(hll *h, const void *ele, size_t n, size_t sparse_max);
/* Raises register index to count if that is larger (see hll_add). */
int hll_set(hll *h, long index, int count, size_t sparse_max);
/* Sparse to dense (no-op when dense): 0 or an HLL_ERR_*. */
int hll_to_dense(hll *h);

/* max[i] = MAX(max[i], register i of the value p[0..len)), for a checked
 * value; HLL_ERR_INVALID for a malformed sparse stream. */
int hll_merge_regs(uint8_t *max, const unsigned char *p, size_t len);
/* Estimated cardinality of a checked value; *invalid set (if given) when a
 * sparse stream does not cover exactly HLL_REGISTERS registers. */
uint64_t hll_count(const unsigned char *p, size_t len, int *invalid);
/* Same for HLL_REGISTERS plain bytes, one per register. */
uint64_t hll_count_regs(const uint8_t *regs);

/* Sparse opcode walk for debugging: decodes the opcode at *p (< end),
 * advancing *p. kind: 'z' ZERO, 'Z' XZERO, 'v' VAL; *val is 0 for runs
 * of zeros. Bytes past end read as zero, as Redis's terminator does. */
void hll_sparse_op(const unsigned char **p, const unsigned char *end, int *kind, int *runlen, int *val);
#endif
