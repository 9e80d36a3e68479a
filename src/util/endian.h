/* endian.h -- little-endian fixed-width fields, as the RDB format, Redis's
 * listpack/ziplist/intset blobs and Goblin's packed list chunks store them.
 * Byte by byte, so any alignment and any host order is fine. */
#ifndef GOBLIN_UTIL_ENDIAN_H
#define GOBLIN_UTIL_ENDIAN_H
#include <stdint.h>

static inline uint16_t le_get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le_get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t le_get64(const unsigned char *p) {
    return (uint64_t)le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}
static inline void le_put16(unsigned char *p, uint16_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void le_put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline void le_put64(unsigned char *p, uint64_t v) {
    le_put32(p, (uint32_t)v);
    le_put32(p + 4, (uint32_t)(v >> 32));
}
#endif
