/* varint.h -- LEB128 lengths, the one length prefix of ds/ (arena entries,
 * packed hashes, zsets): 7 bits a byte, low bits first, high bit = more. */
#ifndef GOBLIN_UTIL_VARINT_H
#define GOBLIN_UTIL_VARINT_H
#include <stddef.h>

static inline size_t varint_size(size_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t varint_put(unsigned char *p, size_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static inline size_t varint_get(const unsigned char *p, size_t *v) {
    size_t r = p[0] & 0x7f, n = 1;
    if (p[0] & 0x80) {
        unsigned sh = 7;
        for (;;) {
            unsigned char b = p[n++];
            r |= (size_t)(b & 0x7f) << sh;
            sh += 7;
            if (!(b & 0x80)) break;
        }
    }
    *v = r;
    return n;
}
#endif
