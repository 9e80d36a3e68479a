/* rdb_in.h -- the RDB reader's input, shared by rdb_load.c and the value
 * loaders kept in their own files (rdb_stream.c). See rdb_load.c for the
 * buffering and error rules: the first error is recorded in the input
 * (in_fail), every reader returns -1 from then on. */
#ifndef GOBLIN_PERSIST_RDB_IN_H
#define GOBLIN_PERSIST_RDB_IN_H
#include <stddef.h>
#include <stdint.h>

#include "db/object.h"
#include "ds/hash.h"
#include "ds/list.h"
#include "ds/set.h"
#include "ds/zset.h"
#include "persist/rdb.h"

typedef struct rstr {
    const unsigned char *p;
    size_t n;
    int isint;
    int64_t v;
    const unsigned char *zp; /* LZF in the file: the compressed bytes (else NULL) */
    size_t zn;
} rstr;

typedef struct growbuf {
    unsigned char *p;
    size_t n, cap;
} growbuf;

typedef struct rdb_in {
    int fd;
    unsigned char *buf;
    size_t cap, pos, end;
    uint64_t base;          /* file offset of buf[0] */
    uint64_t crc;
    size_t crcpos;          /* buf[crcpos..pos) not yet in crc */
    int crc_async;          /* the checksum thread covers the file instead */
    uint64_t fsize;
    int version;
    int err;
    char *emsg;
    size_t elen;
    int have_key;
    int overrun;            /* a length claimed more bytes than the file has */
    struct {
        const unsigned char *p;
        size_t n;
    } key;                  /* the current key (in the builder's batch) */
    growbuf tmp, z;         /* field/member copy, LZF output */
    char itext[24];         /* an int-encoded string's text */
    /* building */
    hash_limits hlim;
    zset_limits zlim;
    set_limits slim;
    list_limit llim;
    const rdb_load_opts *opt;
    rdb_read_fn *rd;        /* a reader load (rdb_load_reader): bytes come from rd, not fd */
    void *rd_arg;
} rdb_in;

/* Record the first error (code of rdb_format.h); the message gets the
 * key and offset appended. Returns -1. */
__attribute__((format(printf, 3, 4))) int in_fail(rdb_in *in, int code, const char *fmt, ...);
int in_nomem(rdb_in *in);
/* Make n bytes available at buf[pos]. */
int in_fill(rdb_in *in, size_t n);
/* n contiguous bytes, valid until the next read; NULL on error. */
static inline const unsigned char *in_take(rdb_in *in, size_t n) {
    if (in->end - in->pos < n && in_fill(in, n) != 0) return NULL;
    const unsigned char *p = in->buf + in->pos;
    in->pos += n;
    return p;
}
int in_len(rdb_in *in, uint64_t *len);
/* A string: bytes in the buffer, the LZF scratch or an integer's text. */
int in_string(rdb_in *in, rstr *s);

enum { LOAD_OK = 0, LOAD_ERR = -1, LOAD_EMPTY = 1 };

/* RDB_TYPE_STREAM_LISTPACKS (15) and _2 (19) into o (rdb_stream.c). */
int rdb_load_stream(rdb_in *in, int type, gobj *o);
#endif
