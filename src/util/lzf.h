/* lzf.h -- the LZF format RDB files use for compressed strings (and the
 * object store for compressible small strings).
 *
 * A compressed stream is a sequence of items, each led by a control byte c:
 *   c < 32    a literal run: the next c + 1 bytes are copied as they are;
 *   c >= 32   a back reference: length L = c >> 5 (when 7, plus the next
 *             byte), offset O = ((c & 31) << 8 | next byte) + 1; copy L + 2
 *             bytes starting O bytes back in the output (overlap allowed).
 * Pure module, no allocation. */
#ifndef GOBLIN_UTIL_LZF_H
#define GOBLIN_UTIL_LZF_H
#include <stddef.h>
#include <stdint.h>

#define LZF_HASH_LOG 14

/* The compressor's match table. It needs no clearing between calls (every
 * candidate is verified against the input), so one per thread is reused. */
typedef struct lzf_state {
    uint32_t htab[1u << LZF_HASH_LOG];
} lzf_state;

/* Compress in[0..n) into out[0..cap). Returns the compressed length, or 0
 * when it would not fit in cap (the caller then stores the bytes plainly). */
size_t lzf_compress(lzf_state *st, const void *in, size_t n, void *out, size_t cap);

/* Decompress in[0..n) into out[0..cap). Returns the decompressed length, or
 * 0 on corrupt input (a reference before the start, a run past either end). */
size_t lzf_decompress(const void *in, size_t n, void *out, size_t cap);

#endif
