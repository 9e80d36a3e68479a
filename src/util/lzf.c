/* lzf.c -- LZF compression and decompression (format in lzf.h).
 *
 * The compressor is a greedy single-pass matcher: a hash of the next three
 * bytes indexes the last position that had the same hash; when those three
 * bytes really match and lie within the 8 KiB window, the match is
 * extended (up to 264 bytes) and emitted as a back reference, otherwise one
 * literal byte is appended to the open literal run (at most 32 long). The
 * table holds positions + 1 of the current input; entries left from a
 * previous input are harmless because a candidate must lie before the
 * current position and its bytes are compared. */
#include "util/lzf.h"

#include <string.h>

#define LZF_MAX_OFF (1u << 13)
#define LZF_MAX_REF ((1u << 8) + (1u << 3)) /* 264: 7 + 255 + 2 */
#define LZF_MAX_LIT (1u << 5)

static inline uint32_t lzf_hash(const unsigned char *p) {
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - LZF_HASH_LOG);
}

size_t lzf_compress(lzf_state *st, const void *inp, size_t n, void *outp, size_t cap) {
    const unsigned char *in = inp;
    unsigned char *out = outp;
    if (n == 0 || cap == 0) return 0;
    size_t ip = 0, op = 1, lit = 0, litpos = 0; /* out[litpos]: control of the open run */
    while (ip < n) {
        /* A match needs three bytes; the last two are always literals. */
        if (ip + 2 < n) {
            uint32_t h = lzf_hash(in + ip);
            uint32_t cand = st->htab[h];
            st->htab[h] = (uint32_t)ip + 1;
            size_t r = (size_t)cand - 1;
            if (cand && cand <= ip && ip - r <= LZF_MAX_OFF && memcmp(in + r, in + ip, 3) == 0) {
                size_t maxlen = n - ip < LZF_MAX_REF ? n - ip : LZF_MAX_REF;
                size_t len = 3;
                while (len < maxlen && in[r + len] == in[ip + len]) len++;
                size_t off = ip - r - 1;
                /* Close the literal run (drop its control byte when empty). */
                if (lit) out[litpos] = (unsigned char)(lit - 1);
                else op--;
                size_t l = len - 2;
                if (op + 3 + 1 > cap) return 0;
                if (l < 7) {
                    out[op++] = (unsigned char)((l << 5) | (off >> 8));
                } else {
                    out[op++] = (unsigned char)((7u << 5) | (off >> 8));
                    out[op++] = (unsigned char)(l - 7);
                }
                out[op++] = (unsigned char)(off & 0xff);
                ip += len;
                /* Index a position inside the match too: cheap, finds more. */
                if (ip + 2 < n) st->htab[lzf_hash(in + ip - 1)] = (uint32_t)ip;
                lit = 0;
                litpos = op++;
                continue;
            }
        }
        if (op >= cap) return 0;
        out[op++] = in[ip++];
        if (++lit == LZF_MAX_LIT) {
            out[litpos] = LZF_MAX_LIT - 1;
            lit = 0;
            if (op >= cap) return 0;
            litpos = op++;
        }
    }
    if (lit) out[litpos] = (unsigned char)(lit - 1);
    else op--;
    return op;
}

size_t lzf_decompress(const void *inp, size_t n, void *outp, size_t cap) {
    const unsigned char *in = inp, *ie = in + n;
    unsigned char *out = outp;
    size_t op = 0;
    while (in < ie) {
        unsigned c = *in++;
        if (c < 32) {
            size_t len = (size_t)c + 1;
            if ((size_t)(ie - in) < len || cap - op < len) return 0;
            memcpy(out + op, in, len);
            in += len;
            op += len;
            continue;
        }
        size_t len = c >> 5;
        if (len == 7) {
            if (in >= ie) return 0;
            len += *in++;
        }
        if (in >= ie) return 0;
        size_t off = (((size_t)c & 31) << 8 | *in++) + 1;
        len += 2;
        if (off > op || cap - op < len) return 0;
        unsigned char *d = out + op;
        const unsigned char *s = d - off;
        if (off >= len) {
            memcpy(d, s, len);
        } else if (off >= 8) {
            /* Overlapping, but each 8-byte step reads bytes already written. */
            size_t i = 0;
            for (; i + 8 <= len; i += 8) memcpy(d + i, s + i, 8);
            for (; i < len; i++) d[i] = s[i];
        } else {
            for (size_t i = 0; i < len; i++) d[i] = s[i]; /* a short repeating run */
        }
        op += len;
    }
    return op;
}
