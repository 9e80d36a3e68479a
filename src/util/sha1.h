/* sha1.h -- SHA-1 (FIPS 180-4), for script identifiers (EVALSHA) and the
 * DEBUG DIGEST signatures (db/digest.c). */
#ifndef GOBLIN_UTIL_SHA1_H
#define GOBLIN_UTIL_SHA1_H
#include <stddef.h>
#include <stdint.h>

typedef struct sha1_ctx {
    uint32_t h[5];
    uint64_t len;        /* bytes hashed so far */
    unsigned char buf[64];
    size_t nbuf;
} sha1_ctx;

void sha1_init(sha1_ctx *c);
void sha1_update(sha1_ctx *c, const void *p, size_t n);
void sha1_final(sha1_ctx *c, unsigned char out[20]);
/* 40 lowercase hex digits and a NUL. */
void sha1_hex(const void *p, size_t n, char out[41]);
#endif
