/* crc16.h -- CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
 * reflection, no final xor: crc16_update(0, "123456789", 9) == 0x31c3),
 * the checksum Redis Cluster hashes keys with. Pure module. */
#ifndef GOBLIN_UTIL_CRC16_H
#define GOBLIN_UTIL_CRC16_H
#include <stddef.h>
#include <stdint.h>

#define CRC16_SLOTS 16384

/* Continue a CRC over p[0..n); start with crc = 0. */
uint16_t crc16_update(uint16_t crc, const void *p, size_t n);
/* The cluster hash slot (0..16383) of a key, honouring {hash tags}. */
unsigned crc16_key_slot(const char *key, size_t n);
#endif
