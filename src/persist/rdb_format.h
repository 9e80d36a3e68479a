/* rdb_format.h -- the constants of the RDB file format and the loader's
 * error codes.
 *
 * File: "REDIS" + four ASCII digits of version, then a sequence of opcodes
 * and key/value records, the EOF opcode, and (version >= 5) the CRC-64 of
 * everything before it as 8 little-endian bytes. Goblin writes version 10,
 * what Redis 7.0 writes, and reads versions 1 to 11.
 *
 * Lengths: the top two bits of the first byte select 6 bits (00), 14 bits
 * big-endian (01), a 32- or 64-bit big-endian value (10: 0x80 / 0x81), or a
 * special string encoding (11: int8, int16, int32 little-endian, or LZF). */
#ifndef GOBLIN_PERSIST_RDB_FORMAT_H
#define GOBLIN_PERSIST_RDB_FORMAT_H

#define RDB_VERSION_WRITTEN 10
#define RDB_VERSION_MIN 1
#define RDB_VERSION_MAX 11

/* Value types. */
enum {
    RDB_TYPE_STRING = 0,
    RDB_TYPE_LIST = 1,
    RDB_TYPE_SET = 2,
    RDB_TYPE_ZSET = 3,
    RDB_TYPE_HASH = 4,
    RDB_TYPE_ZSET_2 = 5,
    RDB_TYPE_MODULE_PRE_GA = 6,
    RDB_TYPE_MODULE_2 = 7,
    RDB_TYPE_HASH_ZIPMAP = 9,
    RDB_TYPE_LIST_ZIPLIST = 10,
    RDB_TYPE_SET_INTSET = 11,
    RDB_TYPE_ZSET_ZIPLIST = 12,
    RDB_TYPE_HASH_ZIPLIST = 13,
    RDB_TYPE_LIST_QUICKLIST = 14,
    RDB_TYPE_STREAM_LISTPACKS = 15,
    RDB_TYPE_HASH_LISTPACK = 16,
    RDB_TYPE_ZSET_LISTPACK = 17,
    RDB_TYPE_LIST_QUICKLIST_2 = 18,
    RDB_TYPE_STREAM_LISTPACKS_2 = 19,
    RDB_TYPE_SET_LISTPACK = 20,        /* version 11 (Redis 7.2) */
    RDB_TYPE_STREAM_LISTPACKS_3 = 21,  /* version 11 (Redis 7.2) */
};

/* Opcodes (values no type uses). */
enum {
    RDB_OPCODE_FUNCTION_PRE_GA = 246,
    RDB_OPCODE_FUNCTION2 = 245,
    RDB_OPCODE_MODULE_AUX = 247,
    RDB_OPCODE_IDLE = 248,
    RDB_OPCODE_FREQ = 249,
    RDB_OPCODE_AUX = 250,
    RDB_OPCODE_RESIZEDB = 251,
    RDB_OPCODE_EXPIRETIME_MS = 252,
    RDB_OPCODE_EXPIRETIME = 253,
    RDB_OPCODE_SELECTDB = 254,
    RDB_OPCODE_EOF = 255,
};

/* Length prefixes. */
#define RDB_6BITLEN 0
#define RDB_14BITLEN 1
#define RDB_32BITLEN 0x80
#define RDB_64BITLEN 0x81
#define RDB_ENCVAL 3
#define RDB_ENC_INT8 0
#define RDB_ENC_INT16 1
#define RDB_ENC_INT32 2
#define RDB_ENC_LZF 3

/* Quicklist 2 node containers. */
#define RDB_QUICKLIST_NODE_PLAIN 1
#define RDB_QUICKLIST_NODE_PACKED 2

/* Loader and writer results: one code per kind of failure, so a caller (and
 * a test) can tell a truncated file from a flipped bit from a foreign type. */
enum rdb_err {
    RDB_OK = 0,
    RDB_ERR_IO,          /* open/read/write/fsync/rename failed (errno) */
    RDB_ERR_NOFILE,      /* the file does not exist */
    RDB_ERR_MAGIC,       /* does not start with "REDIS" */
    RDB_ERR_VERSION,     /* a version this server cannot read */
    RDB_ERR_TRUNCATED,   /* the file ends inside a record */
    RDB_ERR_CHECKSUM,    /* the CRC-64 at the end does not match */
    RDB_ERR_TYPE,        /* an unknown value type or opcode */
    RDB_ERR_LENGTH,      /* a length no valid file can have */
    RDB_ERR_ENCODING,    /* a corrupt listpack/ziplist/intset/zipmap/LZF payload */
    RDB_ERR_DUPLICATE,   /* a key, field or member that occurs twice */
    RDB_ERR_VALUE,       /* an invalid value (NaN score, database index) */
    RDB_ERR_UNSUPPORTED, /* a stream or module value, module aux data */
    RDB_ERR_NOMEM,       /* out of memory while building the dataset */
    RDB_ERR_ABORTED,     /* stopped on request (shutdown during loading) */
    RDB_ERR_NOSPACE,     /* ENOSPC / EDQUOT while writing */
    RDB_ERR_BUSY,        /* another save or load is running */
    RDB_ERR_REFUSED,     /* BGSAVE refused (arena-hugetlb) */
    RDB_ERR_OTHER_CHILD, /* BGSAVE: an AOF rewrite child is running */
};

/* A short stable name of an error code ("bad checksum", "truncated"). */
const char *rdb_err_name(int err);

#endif
