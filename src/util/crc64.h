/* crc64.h -- CRC-64/Jones, the checksum at the end of every RDB file.
 *
 * Reflected polynomial 0xad93d23594c935a9, initial value 0, no final xor:
 * crc64_update(0, "123456789", 9) == 0xe9c6d914c4b8d9ca. Pure module. */
#ifndef GOBLIN_UTIL_CRC64_H
#define GOBLIN_UTIL_CRC64_H
#include <stddef.h>
#include <stdint.h>

/* Continue a CRC over p[0..n); start with crc = 0. Thread-safe. */
uint64_t crc64_update(uint64_t crc, const void *p, size_t n);

#endif
