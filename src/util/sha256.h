/* sha256.h -- SHA-256 (FIPS 180-4), used to store ACL passwords as Redis
 * does: the lowercase hex digest of the clear-text password. */
#ifndef GOBLIN_UTIL_SHA256_H
#define GOBLIN_UTIL_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32
#define SHA256_HEX_LEN 64

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t total;          /* bytes hashed so far */
    uint8_t block[64];
    size_t fill;             /* bytes waiting in block */
} sha256_ctx;

void sha256_init(sha256_ctx *ctx);
void sha256_update(sha256_ctx *ctx, const void *data, size_t len);
void sha256_final(sha256_ctx *ctx, uint8_t out[SHA256_DIGEST_LEN]);
/* One-shot: the 64 lowercase hex digits of SHA-256(data), NUL-terminated. */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);
#endif
