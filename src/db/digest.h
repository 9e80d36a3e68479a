/* digest.h -- DEBUG DIGEST: SHA-1 signatures of values and of the whole
 * dataset, byte for byte the ones Redis 7.0 computes for the same data.
 *
 * Two ways of folding a piece into a 20-byte signature d:
 *   xor  d ^= SHA1(piece)            (order-free: set members, hash pairs,
 *                                     zset elements, keys of a database)
 *   mix  d = SHA1(d ^ SHA1(piece))   (ordered: list elements, the parts of
 *                                     one element, the database ids)
 * A value's signature mixes its type (4 bytes, big endian), then its
 * contents, and xors "!!expire!!" when the key has a TTL (the time itself
 * is not part of it). */
#ifndef GOBLIN_DB_DIGEST_H
#define GOBLIN_DB_DIGEST_H
#include "db/db.h"

#define DIGEST_BYTES 20
#define DIGEST_HEX 41 /* 40 lowercase hex digits and a NUL */

/* Fold the signature of e's value into d (Redis's xorObjectDigest: the key
 * name is not part of it). The caller holds e's shard or the keyspace write
 * lock. 0, or -1 when a string's SSD tail could not be read or memory ran
 * out (strval_io_error tells which); d is then meaningless. */
int digest_entry(const dbentry *e, unsigned char d[DIGEST_BYTES]);
/* The signature of every database (DEBUG DIGEST): all zeros when every
 * database is empty. Logically expired keys not yet removed count, as in
 * Redis. The caller holds the keyspace write lock. 0 or -1 as above. */
int digest_dataset(unsigned char out[DIGEST_BYTES]);
void digest_hex(const unsigned char d[DIGEST_BYTES], char out[DIGEST_HEX]);
#endif
