/* rdb_load.c -- the RDB reader: versions 1 to 11, every encoding Redis
 * has written for the five types, into detached databases.
 *
 * Input is read through one buffer; in_take(n) hands out n contiguous bytes
 * that stay valid until the next read, and the CRC-64 is folded over bytes
 * as they are consumed (never over the stored checksum itself). A string
 * comes back as an rstr pointing into the buffer, into the decompression
 * scratch (LZF) or at an integer's text. Anything that must survive the
 * next read (the key, a hash field, a zset member) is copied first.
 *
 * Errors are distinct codes (rdb_format.h) with a message naming what was
 * being read, the key and the file offset. When a structural error shows
 * up (unknown type, bad length, corrupt encoding...), the loader checks the
 * file's trailing checksum: if the file is damaged, the checksum mismatch
 * is reported first, since that is the root cause, with the first symptom
 * as detail.
 *
 * Values are rebuilt through the ds/ APIs with the current encoding limits,
 * so a hash that was a listpack in a file from a server with larger limits
 * becomes a hashtable here, exactly as Redis converts on load. Duplicate
 * keys, fields and members and NaN scores are corruption, as in Redis;
 * empty collections are skipped; keys whose TTL has passed are skipped and
 * counted. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/mcmeta.h"
#include "db/strval.h"
#include "ds/hash.h"
#include "ds/list.h"
#include "ds/set.h"
#include "util/strutil.h"
#include "ds/zset.h"
#include "util/crc64.h"
#include "util/lzf.h"
#include "persist/packed.h"
#include "persist/rdb.h"
#include "persist/rdb_in.h"
#include "persist/rdb_kbuild.h"
#include "persist/rdb_snap.h"
#include "base/config.h"
#include "base/log.h"

#define IN_CHUNK (1u << 20)

volatile long rdb_load_slow_us;

const char *rdb_err_name(int err) {
    switch (err) {
    case RDB_OK: return "ok";
    case RDB_ERR_IO: return "I/O error";
    case RDB_ERR_NOFILE: return "no such file";
    case RDB_ERR_MAGIC: return "bad magic";
    case RDB_ERR_VERSION: return "bad version";
    case RDB_ERR_TRUNCATED: return "truncated";
    case RDB_ERR_CHECKSUM: return "bad checksum";
    case RDB_ERR_TYPE: return "unknown type";
    case RDB_ERR_LENGTH: return "bad length";
    case RDB_ERR_ENCODING: return "corrupt encoding";
    case RDB_ERR_DUPLICATE: return "duplicate";
    case RDB_ERR_VALUE: return "bad value";
    case RDB_ERR_UNSUPPORTED: return "unsupported";
    case RDB_ERR_NOMEM: return "out of memory";
    case RDB_ERR_ABORTED: return "aborted";
    case RDB_ERR_NOSPACE: return "no space";
    case RDB_ERR_BUSY: return "busy";
    case RDB_ERR_REFUSED: return "refused";
    case RDB_ERR_OTHER_CHILD: return "another child";
    default: return "error";
    }
}

static int gb_reserve(growbuf *g, size_t n) {
    if (n <= g->cap) return 0;
    size_t cap = g->cap ? g->cap : 64;
    while (cap < n) cap *= 2;
    unsigned char *np = realloc(g->p, cap);
    if (!np) return -1;
    g->p = np;
    g->cap = cap;
    return 0;
}

static int gb_set(growbuf *g, const void *p, size_t n) {
    if (gb_reserve(g, n + 1) != 0) return -1;
    memcpy(g->p, p, n);
    g->p[n] = 0;
    g->n = n;
    return 0;
}

static inline uint64_t in_offset(const rdb_in *in) { return in->base + in->pos; }

/* Record the first error; the message gets the key and offset appended. */
int in_fail(rdb_in *in, int code, const char *fmt, ...) {
    if (in->err) return -1;
    in->err = code;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (in->have_key) {
        char shown[300];
        rdb_key_shown(shown, sizeof(shown), in->key.p, in->key.n);
        snprintf(in->emsg, in->elen, "%s (key '%s', offset %llu)", msg, shown, (unsigned long long)in_offset(in));
    } else {
        snprintf(in->emsg, in->elen, "%s (offset %llu)", msg, (unsigned long long)in_offset(in));
    }
    return -1;
}

/* Make n bytes available at buf[pos]. */
int in_fill(rdb_in *in, size_t n) {
    if (in->err) return -1;
    /* Checksum what was consumed, then drop it. */
    if (!in->crc_async) in->crc = crc64_update(in->crc, in->buf + in->crcpos, in->pos - in->crcpos);
    size_t keep = in->end - in->pos;
    if (in->pos) memmove(in->buf, in->buf + in->pos, keep);
    in->base += in->pos;
    in->pos = 0;
    in->crcpos = 0;
    in->end = keep;
    if (n > in->cap) {
        size_t cap = n + IN_CHUNK;
        unsigned char *nb = realloc(in->buf, cap);
        if (!nb) return in_fail(in, RDB_ERR_NOMEM, "out of memory reading %zu bytes", n);
        in->buf = nb;
        in->cap = cap;
    }
    if (in->fd < 0 && !in->rd) /* RESTORE: the whole payload is in buf */
        return in_fail(in, RDB_ERR_TRUNCATED, "payload truncated: %zu more bytes needed, %zu left", n, in->end);
    while (in->end < n) {
        ssize_t r = in->rd ? in->rd(in->rd_arg, in->buf + in->end, in->cap - in->end)
                           : read(in->fd, in->buf + in->end, in->cap - in->end);
        if (r < 0) {
            if (errno == EINTR) continue;
            return in_fail(in, RDB_ERR_IO, "read error: %s", strerror(errno));
        }
        if (r == 0)
            return in_fail(in, RDB_ERR_TRUNCATED, "%s truncated: %zu more bytes needed, %zu left",
                           in->rd ? "input" : "file", n, in->end);
        in->end += (size_t)r;
    }
    return 0;
}

static int in_byte(rdb_in *in, unsigned *b) {
    const unsigned char *p = in_take(in, 1);
    if (!p) return -1;
    *b = p[0];
    return 0;
}

/* A length, or (*enc set) the kind of a specially encoded string. */
static int in_len_enc(rdb_in *in, uint64_t *len, int *enc) {
    const unsigned char *p = in_take(in, 1);
    if (!p) return -1;
    unsigned b = p[0];
    *enc = 0;
    switch (b >> 6) {
    case RDB_6BITLEN: *len = b & 0x3F; return 0;
    case RDB_14BITLEN:
        if (!(p = in_take(in, 1))) return -1;
        *len = (uint64_t)(b & 0x3F) << 8 | p[0];
        return 0;
    case RDB_ENCVAL:
        *enc = 1;
        *len = b & 0x3F;
        return 0;
    default:
        if (b == RDB_32BITLEN) {
            if (!(p = in_take(in, 4))) return -1;
            *len = (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
            return 0;
        }
        if (b == RDB_64BITLEN) {
            if (!(p = in_take(in, 8))) return -1;
            uint64_t v = 0;
            for (int i = 0; i < 8; i++) v = v << 8 | p[i];
            *len = v;
            return 0;
        }
        return in_fail(in, RDB_ERR_LENGTH, "bad length encoding 0x%02x", b);
    }
}

int in_len(rdb_in *in, uint64_t *len) {
    int enc;
    if (in_len_enc(in, len, &enc) != 0) return -1;
    if (enc) return in_fail(in, RDB_ERR_LENGTH, "string encoding 0x%02x where a length was expected",
                            (unsigned)(0xC0 | *len));
    return 0;
}

/* Bytes that remain in the file after the current position (known for
 * regular files; UINT64_MAX otherwise). */
static uint64_t in_remaining(const rdb_in *in) {
    if (!in->fsize) return UINT64_MAX;
    uint64_t off = in_offset(in);
    return off < in->fsize ? in->fsize - off : 0;
}

int in_string(rdb_in *in, rstr *s) {
    uint64_t len;
    int enc;
    if (in_len_enc(in, &len, &enc) != 0) return -1;
    s->isint = 0;
    s->zp = NULL;
    if (!enc) {
        if (len > in_remaining(in)) {
            in->overrun = 1;
            return in_fail(in, RDB_ERR_TRUNCATED, "file truncated inside a string of %llu bytes",
                           (unsigned long long)len);
        }
        const unsigned char *p = in_take(in, (size_t)len);
        if (!p) return -1;
        s->p = p;
        s->n = (size_t)len;
        return 0;
    }
    const unsigned char *p;
    switch (len) {
    case RDB_ENC_INT8:
        if (!(p = in_take(in, 1))) return -1;
        s->v = (int8_t)p[0];
        break;
    case RDB_ENC_INT16:
        if (!(p = in_take(in, 2))) return -1;
        s->v = (int16_t)(uint16_t)(p[0] | p[1] << 8);
        break;
    case RDB_ENC_INT32:
        if (!(p = in_take(in, 4))) return -1;
        s->v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        break;
    case RDB_ENC_LZF: {
        uint64_t clen, ulen;
        if (in_len(in, &clen) != 0 || in_len(in, &ulen) != 0) return -1;
        if (clen > in_remaining(in)) {
            in->overrun = 1;
            return in_fail(in, RDB_ERR_TRUNCATED, "file truncated inside a compressed string of %llu bytes",
                           (unsigned long long)clen);
        }
        if (ulen == 0 || clen == 0)
            return in_fail(in, RDB_ERR_LENGTH, "compressed string with length %llu -> %llu", (unsigned long long)clen,
                           (unsigned long long)ulen);
        /* LZF expands at most ~ (255 + 2) / 3 times per reference. */
        if (ulen / 100 > clen)
            return in_fail(in, RDB_ERR_LENGTH, "compressed string of %llu bytes claims %llu bytes",
                           (unsigned long long)clen, (unsigned long long)ulen);
        if (!(p = in_take(in, (size_t)clen))) return -1;
        if (gb_reserve(&in->z, (size_t)ulen) != 0)
            return in_fail(in, RDB_ERR_NOMEM, "out of memory for a %llu-byte string", (unsigned long long)ulen);
        if (lzf_decompress(p, (size_t)clen, in->z.p, (size_t)ulen) != ulen)
            return in_fail(in, RDB_ERR_ENCODING, "corrupt LZF-compressed string (%llu -> %llu bytes)",
                           (unsigned long long)clen, (unsigned long long)ulen);
        s->p = in->z.p;
        s->n = (size_t)ulen;
        s->zp = p;
        s->zn = (size_t)clen;
        return 0;
    }
    default: return in_fail(in, RDB_ERR_LENGTH, "unknown string encoding %llu", (unsigned long long)len);
    }
    s->isint = 1;
    s->n = (size_t)ll_to_str(in->itext, sizeof(in->itext), s->v);
    s->p = (const unsigned char *)in->itext;
    return 0;
}

/* ---- value builders -------------------------------------------------------- */

int in_nomem(rdb_in *in) { return in_fail(in, RDB_ERR_NOMEM, "out of memory building the value"); }

static int push_elem(rdb_in *in, glist *l, const pk_elem *e) {
    list_val v;
    if (e->isint) {
        v.p = NULL;
        v.n = 0;
        v.v = e->v;
        v.isint = 1;
    } else {
        list_val_init(&v, e->s, e->n);
    }
    int rc = list_push(l, LIST_TAIL, &v, &in->llim);
    if (rc == LIST_ETOOBIG) return in_fail(in, RDB_ERR_LENGTH, "list element of %zu bytes is too large", e->n);
    if (rc != LIST_OK) return in_nomem(in);
    return 0;
}

static int push_blob_lp(rdb_in *in, glist *l, const rstr *b) {
    lp_iter it;
    pk_elem e;
    int r;
    if (lp_iter_init(&it, b->p, b->n) != 0) return in_fail(in, RDB_ERR_ENCODING, "Listpack integrity check failed: bad header");
    while ((r = lp_iter_next(&it, &e)) > 0)
        if (push_elem(in, l, &e) != 0) return -1;
    return r < 0 ? in_fail(in, RDB_ERR_ENCODING, "Listpack integrity check failed: bad entry") : 0;
}

static int push_blob_zl(rdb_in *in, glist *l, const rstr *b) {
    zl_iter it;
    pk_elem e;
    int r;
    if (zl_iter_init(&it, b->p, b->n) != 0) return in_fail(in, RDB_ERR_ENCODING, "Ziplist integrity check failed: bad header");
    while ((r = zl_iter_next(&it, &e)) > 0)
        if (push_elem(in, l, &e) != 0) return -1;
    return r < 0 ? in_fail(in, RDB_ERR_ENCODING, "Ziplist integrity check failed: bad entry") : 0;
}

static int load_list(rdb_in *in, int type, gobj *o) {
    glist *l = list_new();
    if (!l) return in_nomem(in);
    uint64_t n;
    rstr s;
    if (type == RDB_TYPE_LIST_ZIPLIST) {
        if (in_string(in, &s) != 0 || push_blob_zl(in, l, &s) != 0) goto fail;
    } else {
        if (in_len(in, &n) != 0) goto fail;
        for (uint64_t i = 0; i < n; i++) {
            if (type == RDB_TYPE_LIST) {
                if (in_string(in, &s) != 0) goto fail;
                pk_elem e = {s.p, s.n, s.v, s.isint};
                if (push_elem(in, l, &e) != 0) goto fail;
            } else if (type == RDB_TYPE_LIST_QUICKLIST) {
                if (in_string(in, &s) != 0 || push_blob_zl(in, l, &s) != 0) goto fail;
            } else {
                uint64_t container;
                if (in_len(in, &container) != 0) goto fail;
                if (container != RDB_QUICKLIST_NODE_PLAIN && container != RDB_QUICKLIST_NODE_PACKED) {
                    in_fail(in, RDB_ERR_ENCODING, "quicklist node container %llu (1 or 2 expected)",
                            (unsigned long long)container);
                    goto fail;
                }
                if (in_string(in, &s) != 0) goto fail;
                if (s.n == 0) { /* as Redis: no node is empty */
                    in_fail(in, RDB_ERR_ENCODING, "Quicklist integrity check failed: an empty node");
                    goto fail;
                }
                if (container == RDB_QUICKLIST_NODE_PLAIN) {
                    pk_elem e = {s.p, s.n, 0, 0};
                    if (push_elem(in, l, &e) != 0) goto fail;
                } else if (push_blob_lp(in, l, &s) != 0) {
                    goto fail;
                }
            }
        }
    }
    if (list_len(l) == 0) {
        list_free(l);
        return LOAD_EMPTY;
    }
    o->type = OBJ_LIST;
    o->enc = ENC_QUICKLIST;
    o->u.p = l;
    return LOAD_OK;
fail:
    list_free(l);
    return LOAD_ERR;
}

static int set_add_checked(rdb_in *in, gset **s, const pk_elem *e) {
    char buf[STRUTIL_LLSTR];
    size_t n;
    const unsigned char *p = pk_elem_text(e, buf, &n);
    int rc = set_add(s, p, n, &in->slim);
    if (rc == 1) return 0;
    if (rc == 0) return in_fail(in, RDB_ERR_DUPLICATE, "Duplicate set members detected");
    return in_nomem(in);
}

static int load_set(rdb_in *in, int type, gobj *o) {
    gset *s = NULL;
    rstr b;
    pk_elem e;
    int r = 0;
    if (type == RDB_TYPE_SET) {
        uint64_t n;
        if (in_len(in, &n) != 0) return LOAD_ERR;
        if (n == 0) return LOAD_EMPTY;
        /* Presize for n members (each takes at least a byte of the file). */
        uint64_t hint = n < in_remaining(in) ? n : in_remaining(in);
        s = n > in->slim.max_intset ? set_new_reserve((size_t)hint) : set_new();
        if (!s) return in_nomem(in);
        for (uint64_t i = 0; i < n; i++) {
            if (in_string(in, &b) != 0) goto fail;
            e = (pk_elem){b.p, b.n, b.v, b.isint};
            if (set_add_checked(in, &s, &e) != 0) goto fail;
        }
    } else if (type == RDB_TYPE_SET_INTSET) {
        is_iter it;
        if (in_string(in, &b) != 0) return LOAD_ERR;
        if (is_iter_init(&it, b.p, b.n) != 0) return in_fail(in, RDB_ERR_ENCODING, "Intset integrity check failed: bad header");
        if (is_count(&it) == 0) return LOAD_EMPTY;
        s = is_count(&it) > in->slim.max_intset ? set_new_reserve(is_count(&it)) : set_new();
        if (!s) return in_nomem(in);
        int64_t v;
        while ((r = is_iter_next(&it, &v)) > 0) {
            e = (pk_elem){NULL, 0, v, 1};
            if (set_add_checked(in, &s, &e) != 0) goto fail;
        }
        if (r < 0) {
            in_fail(in, RDB_ERR_ENCODING, "Intset integrity check failed: members out of order");
            goto fail;
        }
    } else { /* SET_LISTPACK */
        lp_iter it;
        if (in_string(in, &b) != 0) return LOAD_ERR;
        if (lp_iter_init(&it, b.p, b.n) != 0) return in_fail(in, RDB_ERR_ENCODING, "Listpack integrity check failed: bad header");
        if (!(s = set_new())) return in_nomem(in);
        while ((r = lp_iter_next(&it, &e)) > 0)
            if (set_add_checked(in, &s, &e) != 0) goto fail;
        if (r < 0) {
            in_fail(in, RDB_ERR_ENCODING, "Listpack integrity check failed: bad entry");
            goto fail;
        }
        if (set_card(s) == 0) {
            set_free(s);
            return LOAD_EMPTY;
        }
    }
    o->type = OBJ_SET;
    o->enc = set_is_intset(s) ? ENC_INTSET : ENC_HASHTABLE;
    o->u.p = s;
    return LOAD_OK;
fail:
    set_free(s);
    return LOAD_ERR;
}

/* Redis's rdbLoadDoubleValue: a length byte (253 NaN, 254 +inf, 255 -inf)
 * and that many ASCII characters. */
static int in_double_text(rdb_in *in, double *d) {
    unsigned n;
    if (in_byte(in, &n) != 0) return -1;
    if (n == 253) *d = NAN;
    else if (n == 254) *d = INFINITY;
    else if (n == 255) *d = -INFINITY;
    else {
        const unsigned char *p = in_take(in, n);
        if (!p) return -1;
        char buf[256];
        memcpy(buf, p, n);
        buf[n] = 0;
        char *end;
        *d = strtod(buf, &end);
        /* What sscanf("%lg") takes: a number, then anything. */
        if (end == buf) return in_fail(in, RDB_ERR_VALUE, "bad score '%s'", buf);
    }
    return 0;
}

static int in_double_bin(rdb_in *in, double *d) {
    const unsigned char *p = in_take(in, 8);
    if (!p) return -1;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--) u = u << 8 | p[i];
    memcpy(d, &u, 8);
    return 0;
}

static int zadd_checked(rdb_in *in, zset *z, const unsigned char *m, size_t n, double score) {
    if (isnan(score)) return in_fail(in, RDB_ERR_VALUE, "NaN score");
    int out = 0;
    int rc = zset_add(z, score, m, n, ZADD_IN_NX, &out, NULL, &in->zlim);
    if (rc != ZSET_OK) return in_nomem(in);
    if (!(out & ZADD_OUT_ADDED)) return in_fail(in, RDB_ERR_DUPLICATE, "Duplicate zset fields detected");
    return 0;
}

static int pk_score(rdb_in *in, const pk_elem *e, double *d) {
    if (e->isint) {
        *d = (double)e->v;
        return 0;
    }
    char buf[128];
    if (e->n == 0 || e->n >= sizeof(buf)) return in_fail(in, RDB_ERR_VALUE, "bad score of %zu bytes", e->n);
    memcpy(buf, e->s, e->n);
    buf[e->n] = 0;
    char *end;
    *d = strtod(buf, &end);
    if (*end) return in_fail(in, RDB_ERR_VALUE, "bad score '%s'", buf);
    return 0;
}

static int load_zset(rdb_in *in, int type, gobj *o) {
    zset *z = NULL;
    rstr b;
    if (type == RDB_TYPE_ZSET || type == RDB_TYPE_ZSET_2) {
        uint64_t n;
        if (in_len(in, &n) != 0) return LOAD_ERR;
        if (n == 0) return LOAD_EMPTY;
        /* Ordered inserts beat zset_acc's sort-at-the-end here: Redis
         * writes members from the highest score down, so every insert lands
         * at the same (cached) end of the tree. */
        uint64_t hint = n < in_remaining(in) ? n : in_remaining(in);
        if (!(z = zset_new_reserve((size_t)hint, &in->zlim))) return in_nomem(in);
        for (uint64_t i = 0; i < n; i++) {
            double sc = 0;
            if (in_string(in, &b) != 0 || gb_set(&in->tmp, b.p, b.n) != 0) goto fail_io;
            if (type == RDB_TYPE_ZSET_2 ? in_double_bin(in, &sc) : in_double_text(in, &sc)) goto fail;
            if (zadd_checked(in, z, in->tmp.p, in->tmp.n, sc) != 0) goto fail;
        }
    } else {
        pk_elem m, s;
        int r1, r2 = 1;
        if (in_string(in, &b) != 0) return LOAD_ERR;
        int zl = type == RDB_TYPE_ZSET_ZIPLIST;
        lp_iter li;
        zl_iter zi;
        if (zl ? zl_iter_init(&zi, b.p, b.n) : lp_iter_init(&li, b.p, b.n))
            return in_fail(in, RDB_ERR_ENCODING, "Zset %s integrity check failed: bad header", zl ? "ziplist" : "listpack");
        if (!(z = zset_new(&in->zlim))) return in_nomem(in);
        for (;;) {
            r1 = zl ? zl_iter_next(&zi, &m) : lp_iter_next(&li, &m);
            if (r1 <= 0) break;
            r2 = zl ? zl_iter_next(&zi, &s) : lp_iter_next(&li, &s);
            if (r2 <= 0) break;
            double sc = 0;
            char buf[STRUTIL_LLSTR];
            size_t mn;
            const unsigned char *mp = pk_elem_text(&m, buf, &mn);
            if (pk_score(in, &s, &sc) != 0 || zadd_checked(in, z, mp, mn, sc) != 0) goto fail;
        }
        if (r1 < 0 || r2 < 0) {
            in_fail(in, RDB_ERR_ENCODING, "Zset %s integrity check failed: bad entry", zl ? "ziplist" : "listpack");
            goto fail;
        }
        if (r2 == 0) {
            in_fail(in, RDB_ERR_ENCODING, "sorted set %s with a member but no score", zl ? "ziplist" : "listpack");
            goto fail;
        }
        if (zset_card(z) == 0) {
            zset_free(z);
            return LOAD_EMPTY;
        }
    }
    o->type = OBJ_ZSET;
    o->enc = zset_is_packed(z) ? ENC_LISTPACK : ENC_SKIPLIST;
    o->u.p = z;
    return LOAD_OK;
fail_io:
    if (!in->err) in_nomem(in);
fail:
    zset_free(z);
    return LOAD_ERR;
}

static int hset_checked(rdb_in *in, hash **h, const unsigned char *f, size_t fl, const unsigned char *v, size_t vl) {
    int rc = hash_set(h, f, fl, v, vl, &in->hlim);
    if (rc == 1) return 0;
    if (rc == 0) return in_fail(in, RDB_ERR_DUPLICATE, "Duplicate hash fields detected");
    return in_nomem(in);
}

static int load_hash(rdb_in *in, int type, gobj *o) {
    hash *h = NULL;
    rstr b;
    if (type == RDB_TYPE_HASH) {
        uint64_t n;
        if (in_len(in, &n) != 0) return LOAD_ERR;
        if (n == 0) return LOAD_EMPTY;
        /* Presize for n fields (each takes at least two bytes of the file,
         * so a corrupt length cannot make this reserve more than the file
         * could fill). */
        uint64_t hint = n < in_remaining(in) / 2 ? n : in_remaining(in) / 2;
        if (!(h = hash_new_hint((size_t)hint, &in->hlim))) return in_nomem(in);
        for (uint64_t i = 0; i < n; i++) {
            if (in_string(in, &b) != 0) goto fail;
            if (gb_set(&in->tmp, b.p, b.n) != 0) {
                in_nomem(in);
                goto fail;
            }
            if (in_string(in, &b) != 0) goto fail;
            if (hset_checked(in, &h, in->tmp.p, in->tmp.n, b.p, b.n) != 0) goto fail;
        }
    } else {
        const char *what = type == RDB_TYPE_HASH_ZIPMAP ? "Zipmap" : type == RDB_TYPE_HASH_ZIPLIST ? "Ziplist"
                                                                                                 : "Listpack";
        if (!(h = hash_new())) return in_nomem(in);
        if (in_string(in, &b) != 0) goto fail;
        lp_iter li;
        zl_iter zi;
        zm_iter mi;
        int bad = type == RDB_TYPE_HASH_ZIPMAP    ? zm_iter_init(&mi, b.p, b.n)
                  : type == RDB_TYPE_HASH_ZIPLIST ? zl_iter_init(&zi, b.p, b.n)
                                                  : lp_iter_init(&li, b.p, b.n);
        if (bad) {
            in_fail(in, RDB_ERR_ENCODING, "%s integrity check failed: bad header", what);
            goto fail;
        }
        pk_elem f, v;
        int r1, r2 = 1;
        for (;;) {
            r1 = type == RDB_TYPE_HASH_ZIPMAP ? zm_iter_next(&mi, &f)
                 : type == RDB_TYPE_HASH_ZIPLIST ? zl_iter_next(&zi, &f) : lp_iter_next(&li, &f);
            if (r1 <= 0) break;
            r2 = type == RDB_TYPE_HASH_ZIPMAP ? zm_iter_next(&mi, &v)
                 : type == RDB_TYPE_HASH_ZIPLIST ? zl_iter_next(&zi, &v) : lp_iter_next(&li, &v);
            if (r2 <= 0) break;
            char fb[STRUTIL_LLSTR], vb[STRUTIL_LLSTR];
            size_t fl, vl;
            const unsigned char *fp = pk_elem_text(&f, fb, &fl), *vp = pk_elem_text(&v, vb, &vl);
            if (hset_checked(in, &h, fp, fl, vp, vl) != 0) goto fail;
        }
        if (r1 < 0 || r2 < 0) {
            in_fail(in, RDB_ERR_ENCODING, "%s integrity check failed: bad entry", what);
            goto fail;
        }
        if (r2 == 0) {
            in_fail(in, RDB_ERR_ENCODING, "%s integrity check failed: a hash field without a value", what);
            goto fail;
        }
        if (hash_len(h) == 0) {
            hash_free(h);
            return LOAD_EMPTY;
        }
    }
    o->type = OBJ_HASH;
    o->enc = hash_form(h) == HASH_SMALL ? ENC_LISTPACK : ENC_HASHTABLE;
    o->u.p = h;
    return LOAD_OK;
fail:
    hash_free(h);
    return LOAD_ERR;
}

/* A module type id: nine 6-bit characters and a 10-bit encoding version. */
static void module_name(uint64_t id, char *name) {
    static const char cs[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (int i = 0; i < 9; i++) name[i] = cs[(id >> (10 + 6 * (8 - i))) & 63];
    name[9] = 0;
}

static int load_value(rdb_in *in, int type, gobj *o) {
    memset(o, 0, sizeof(*o));
    switch (type) {
    case RDB_TYPE_STRING: {
        rstr s;
        if (in_string(in, &s) != 0) return LOAD_ERR;
        if (s.isint) {
            strval_set_int(o, s.v);
        } else if (s.zp ? strval_set_packed(o, (const char *)s.p, s.n, (const char *)s.zp, s.zn)
                        : strval_set(o, (const char *)s.p, s.n)) {
            return in_nomem(in);
        }
        return LOAD_OK;
    }
    case RDB_TYPE_LIST:
    case RDB_TYPE_LIST_ZIPLIST:
    case RDB_TYPE_LIST_QUICKLIST:
    case RDB_TYPE_LIST_QUICKLIST_2: return load_list(in, type, o);
    case RDB_TYPE_SET:
    case RDB_TYPE_SET_INTSET:
    case RDB_TYPE_SET_LISTPACK: return load_set(in, type, o);
    case RDB_TYPE_ZSET:
    case RDB_TYPE_ZSET_2:
    case RDB_TYPE_ZSET_ZIPLIST:
    case RDB_TYPE_ZSET_LISTPACK: return load_zset(in, type, o);
    case RDB_TYPE_HASH:
    case RDB_TYPE_HASH_ZIPMAP:
    case RDB_TYPE_HASH_ZIPLIST:
    case RDB_TYPE_HASH_LISTPACK: return load_hash(in, type, o);
    case RDB_TYPE_STREAM_LISTPACKS:
    case RDB_TYPE_STREAM_LISTPACKS_2:
    case RDB_TYPE_STREAM_LISTPACKS_3:
        return rdb_load_stream(in, type, o);
    case RDB_TYPE_MODULE_PRE_GA:
    case RDB_TYPE_MODULE_2: {
        uint64_t id;
        char name[10] = "?";
        if (in_len(in, &id) == 0) module_name(id, name);
        in->err = 0; /* report the module even if its id could not be read */
        return in_fail(in, RDB_ERR_UNSUPPORTED, "module value of type '%s' (RDB type %d): Goblin loads no modules",
                       name, type);
    }
    default: return in_fail(in, RDB_ERR_TYPE, "unknown value type %d", type);
    }
}

static int is_value_type(int t) { return (t >= 0 && t <= 7) || (t >= 9 && t <= 21); }

void rdb_load_commit(rdb_loaded *ld) {
    /* A fork-less snapshot that runs is finished first: the dataset it
     * describes is about to go. And the new entries need the current
     * snapshot mark, which they have unless a snapshot started (the mark
     * flipped) while they were made. */
    rdb_snap_finish_locked();
    if (ld->snap_gen != db_snap_generation())
        for (int i = 0; i < DB_MAX; i++)
            if (ld->dbs[i]) db_snap_adopt(ld->dbs[i]);
    for (int i = 0; i < db_count(); i++) {
        if (!ld->dbs[i]) {
            ld->dbs[i] = db_detached_new(i);
            if (!ld->dbs[i]) {
                db_flush(db_get(i)); /* no memory for a shell: empty it in place */
                continue;
            }
        }
        db_exchange(db_get(i), ld->dbs[i]);
    }
    /* The file's libraries replace the live ones (Redis empties them
     * before a load). */
    const rdb_func_hooks *h = rdb_func_hooks_get();
    if (h && h->swap) ld->funcs = h->swap(ld->funcs);
    mcmeta_load(ld->mcmeta, ld->mcmeta_len);
}

void rdb_load_discard(rdb_loaded *ld) {
    free(ld->mcmeta);
    ld->mcmeta = NULL;
    ld->mcmeta_len = 0;
    for (int i = 0; i < DB_MAX; i++) {
        db_detached_free(ld->dbs[i]);
        ld->dbs[i] = NULL;
    }
    rdb_free_codes(ld->fcodes, ld->flens, ld->nfuncs);
    ld->fcodes = NULL;
    ld->flens = NULL;
    ld->nfuncs = 0;
    const rdb_func_hooks *h = rdb_func_hooks_get();
    if (h && h->release && ld->funcs) h->release(ld->funcs);
    ld->funcs = NULL;
}

/* ---- the file ---------------------------------------------------------------- */

/* ---- the checksum thread ----------------------------------------------------------
 *
 * The CRC covers every byte but the last eight. For a regular file the
 * parser need not fold it in as it goes: a thread reads the file on its own
 * (pread, from the page cache the parser fills) and checksums [0, size-8),
 * which is the right range whenever the EOF opcode turns out to sit at
 * size-9, as in every file Redis or Goblin writes. Otherwise the parser
 * falls back to checksumming the range it parsed. */
typedef struct crc_job {
    int fd;
    uint64_t len;
    uint64_t crc;
    int ok;
    int stop;               /* atomic */
    pthread_t tid;
    int started;
} crc_job;

/* CRC of [0, len) of fd, read with pread; -1 on a read error or a stop. */
static int crc_of_file(int fd, uint64_t len, uint64_t *out, const int *stop) {
    unsigned char *b = malloc(IN_CHUNK);
    if (!b) return -1;
    uint64_t crc = 0, off = 0;
    while (off < len) {
        if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED)) break;
        size_t want = len - off < IN_CHUNK ? (size_t)(len - off) : IN_CHUNK;
        ssize_t r = pread(fd, b, want, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        crc = crc64_update(crc, b, (size_t)r);
        off += (uint64_t)r;
    }
    free(b);
    if (off != len) return -1;
    *out = crc;
    return 0;
}

static void *crc_main(void *arg) {
    crc_job *j = arg;
    pthread_setname_np(pthread_self(), "goblin-rdbcrc");
    j->ok = crc_of_file(j->fd, j->len, &j->crc, &j->stop) == 0;
    return NULL;
}

static void crc_job_end(crc_job *j) {
    if (!j->started) return;
    __atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
    pthread_join(j->tid, NULL);
    j->started = 0;
}

/* After a structural error: is the file's stored checksum wrong? Then the
 * file is damaged and that is what to report. */
static int diagnose_checksum(rdb_in *in, uint64_t *stored, uint64_t *computed) {
    if (in->version < 5 || in->fsize < 9 + 9) return 0;
    unsigned char tail[9];
    if (pread(in->fd, tail, 9, (off_t)(in->fsize - 9)) != 9 || tail[0] != RDB_OPCODE_EOF) return 0;
    uint64_t st = le_get64(tail + 1);
    if (st == 0 || crc_of_file(in->fd, in->fsize - 8, computed, NULL) != 0) return 0;
    *stored = st;
    return st != *computed;
}

static int checksum_verified(void);
static int payload_footer_ok(const unsigned char *p, size_t n, int ver);

/* ---- function libraries ------------------------------------------------------------ */

static int codes_push(char ***codes, size_t **lens, int *n, char *code, size_t len) {
    char **nc = realloc(*codes, sizeof(char *) * (size_t)(*n + 1));
    if (nc) *codes = nc;
    size_t *nl = realloc(*lens, sizeof(size_t) * (size_t)(*n + 1));
    if (nl) *lens = nl;
    if (!nc || !nl) {
        free(code);
        return -1;
    }
    (*codes)[*n] = code;
    (*lens)[*n] = len;
    (*n)++;
    return 0;
}

void rdb_free_codes(char **codes, size_t *lens, int n) {
    for (int i = 0; i < n; i++) free(codes[i]);
    free(codes);
    free(lens);
}

/* One string as a malloc'd, NUL-terminated copy. */
static int in_string_dup(rdb_in *in, char **out, size_t *n) {
    rstr v;
    if (in_string(in, &v) != 0) return -1;
    char num[24];
    const void *p = v.p;
    size_t len = v.n;
    if (v.isint) {
        len = (size_t)snprintf(num, sizeof(num), "%lld", (long long)v.v);
        p = num;
    }
    char *c = malloc(len + 1);
    if (!c) return in_fail(in, RDB_ERR_NOMEM, "out of memory for a function library");
    memcpy(c, p, len);
    c[len] = '\0';
    *out = c;
    *n = len;
    return 0;
}

/* The body of a function record (the opcode read): FUNCTION2 is the
 * library's code; the 7.0 release candidates' FUNCTION wrote name, engine,
 * an optional description and the code without its "#!" line, which is
 * put back as Redis does. */
static int in_function(rdb_in *in, unsigned t, char **code, size_t *n) {
    if (t == RDB_OPCODE_FUNCTION2) return in_string_dup(in, code, n);
    char *name = NULL, *engine = NULL, *desc = NULL, *blob = NULL;
    size_t nn, en, dn, bn;
    uint64_t has_desc = 0;
    int rc = -1;
    if (in_string_dup(in, &name, &nn) == 0 && in_string_dup(in, &engine, &en) == 0 && in_len(in, &has_desc) == 0 &&
        (!has_desc || in_string_dup(in, &desc, &dn) == 0) && in_string_dup(in, &blob, &bn) == 0) {
        size_t len = 2 + en + 6 + nn + 1 + bn;
        char *c = malloc(len + 1);
        if (!c) {
            in_fail(in, RDB_ERR_NOMEM, "out of memory for a function library");
        } else {
            snprintf(c, len + 1, "#!%s name=%s\n", engine, name);
            memcpy(c + 2 + en + 6 + nn + 1, blob, bn);
            c[len] = '\0';
            *code = c;
            *n = len;
            rc = 0;
        }
    }
    free(name);
    free(engine);
    free(desc);
    free(blob);
    return rc;
}

/* The file's libraries become a set (rdb_func_hooks.build). */
static int build_functions(rdb_loaded *ld, char *err, size_t errlen) {
    const rdb_func_hooks *h = rdb_func_hooks_get();
    int rc = RDB_OK;
    if (h && h->build) {
        char why[512];
        if (h->build(ld->fcodes, ld->flens, ld->nfuncs, &ld->funcs, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "Failed loading library, %s", why);
            rc = RDB_ERR_VALUE;
        }
    }
    rdb_free_codes(ld->fcodes, ld->flens, ld->nfuncs);
    ld->fcodes = NULL;
    ld->flens = NULL;
    ld->nfuncs = 0;
    return rc;
}

int rdb_restore_functions(const unsigned char *p, size_t len, char ***codes, size_t **lens, int *n, char *err,
                          size_t errlen) {
    *codes = NULL;
    *lens = NULL;
    *n = 0;
    if (len < 10) {
        snprintf(err, errlen, "payload too short");
        return RDB_ERR_CHECKSUM;
    }
    const unsigned char *foot = p + len - 10;
    int ver = le_get16(foot);
    if (!payload_footer_ok(p, len, ver)) {
        snprintf(err, errlen, "payload version or checksum wrong");
        return RDB_ERR_CHECKSUM;
    }
    rdb_in in;
    memset(&in, 0, sizeof(in));
    in.fd = -1;
    in.emsg = err;
    in.elen = errlen;
    in.version = ver;
    in.fsize = len;
    in.cap = in.end = len;
    in.buf = malloc(len);
    if (!in.buf) {
        snprintf(err, errlen, "out of memory");
        return RDB_ERR_NOMEM;
    }
    memcpy(in.buf, p, len);
    int rc = RDB_OK;
    /* Up to the footer, as Redis: each record a function. */
    while (rc == RDB_OK && len - in.pos > 10) {
        unsigned t;
        char *code;
        size_t cn;
        if (in_byte(&in, &t) != 0) {
            snprintf(err, errlen, "can not read data type");
            rc = RDB_ERR_TYPE;
        } else if (t != RDB_OPCODE_FUNCTION2 && t != RDB_OPCODE_FUNCTION_PRE_GA) {
            snprintf(err, errlen, "given type is not a function");
            rc = RDB_ERR_TYPE;
        } else if (in_function(&in, t, &code, &cn) != 0) {
            snprintf(err, errlen, "%s", t == RDB_OPCODE_FUNCTION2 ? "Failed loading library payload"
                                                                 : "failed loading the given functions payload");
            rc = RDB_ERR_VALUE;
        } else if (codes_push(codes, lens, n, code, cn) != 0) {
            snprintf(err, errlen, "out of memory");
            rc = RDB_ERR_NOMEM;
        }
    }
    free(in.buf);
    free(in.tmp.p);
    free(in.z.p);
    if (rc != RDB_OK) {
        rdb_free_codes(*codes, *lens, *n);
        *codes = NULL;
        *lens = NULL;
        *n = 0;
    }
    return rc;
}

static int load_stream(rdb_in *in, rdb_loaded *ld, kbuilder *kb, crc_job *cj) {
    const unsigned char *p = in_take(in, 9);
    if (!p) {
        if (in->err == RDB_ERR_TRUNCATED) {
            in->err = 0;
            in_fail(in, RDB_ERR_MAGIC, "not an RDB file (%llu bytes, shorter than the header)",
                    (unsigned long long)in->fsize);
        }
        return -1;
    }
    if (memcmp(p, "REDIS", 5) != 0) return in_fail(in, RDB_ERR_MAGIC, "not an RDB file (bad magic)");
    int ver = 0;
    for (int i = 5; i < 9; i++) {
        if (p[i] < '0' || p[i] > '9') return in_fail(in, RDB_ERR_VERSION, "bad RDB version field");
        ver = ver * 10 + (p[i] - '0');
    }
    if (ver < RDB_VERSION_MIN || ver > RDB_VERSION_MAX)
        return in_fail(in, RDB_ERR_VERSION, "RDB version %d is not supported (this server reads %d to %d)", ver,
                       RDB_VERSION_MIN, RDB_VERSION_MAX);
    in->version = ld->version = ver;
    /* From here on a thread checksums the file, when it is a regular one
     * larger than a read: a smaller one is checksummed as it is parsed
     * (as a stream is), with no thread to start for it. */
    if (ver >= 5 && in->fsize > IN_CHUNK) {
        cj->fd = in->fd;
        cj->len = in->fsize - 8;
        if (pthread_create(&cj->tid, NULL, crc_main, cj) == 0) {
            cj->started = 1;
            in->crc_async = 1;
        }
    }

    int64_t now = db_now_ms();
    int64_t expire = -1;
    int dbid = 0;
    uint64_t next_report = 4096, queued = 0;
    for (;;) {
        unsigned t;
        in->have_key = 0;
        if (in_byte(in, &t) != 0) return -1;
        switch (t) {
        case RDB_OPCODE_EXPIRETIME: {
            const unsigned char *q = in_take(in, 4);
            if (!q) return -1;
            expire = (int64_t)(int32_t)((uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
                                        (uint32_t)q[3] << 24) * 1000;
            continue;
        }
        case RDB_OPCODE_EXPIRETIME_MS: {
            const unsigned char *q = in_take(in, 8);
            if (!q) return -1;
            uint64_t u = 0;
            for (int i = 7; i >= 0; i--) u = u << 8 | q[i];
            expire = (int64_t)u;
            continue;
        }
        case RDB_OPCODE_FREQ:
            if (!in_take(in, 1)) return -1;
            continue;
        case RDB_OPCODE_IDLE: {
            uint64_t idle;
            if (in_len(in, &idle) != 0) return -1;
            continue;
        }
        case RDB_OPCODE_SELECTDB: {
            uint64_t id;
            if (in_len(in, &id) != 0) return -1;
            if (id >= (uint64_t)db_count())
                return in_fail(in, RDB_ERR_VALUE, "database index %llu out of range (this server has %d databases)",
                               (unsigned long long)id, db_count());
            dbid = (int)id;
            continue;
        }
        case RDB_OPCODE_RESIZEDB: {
            uint64_t a, b;
            if (in_len(in, &a) != 0 || in_len(in, &b) != 0) return -1;
            /* A hint only: never more than the file could hold. */
            if (a > 4096 && a < in_remaining(in) && !ld->dbs[dbid]) {
                if (!(ld->dbs[dbid] = db_detached_new(dbid))) return in_fail(in, RDB_ERR_NOMEM, "out of memory");
                for (int s = 0; s < DB_NSHARDS; s++)
                    swiss_reserve(&ld->dbs[dbid]->shards[s].keys, (size_t)(a / DB_NSHARDS + a / DB_NSHARDS / 8 + 16));
            }
            continue;
        }
        case RDB_OPCODE_AUX: {
            rstr k, v;
            char name[32];
            if (in_string(in, &k) != 0) return -1;
            snprintf(name, sizeof(name), "%.*s", (int)(k.n < 31 ? k.n : 31), (const char *)k.p);
            if (in_string(in, &v) != 0) return -1;
            if (strcmp(name, "redis-ver") == 0)
                snprintf(ld->redis_ver, sizeof(ld->redis_ver), "%.*s", (int)(v.n < 31 ? v.n : 31), (const char *)v.p);
            else if (strcmp(name, "repl-id") == 0 && v.n == 40)
                snprintf(ld->repl_id, sizeof(ld->repl_id), "%.*s", 40, (const char *)v.p);
            else if (strcmp(name, "goblin-mcmeta") == 0 && v.n && !v.isint && v.p) {
                /* Memcache flags and CAS (db/mcmeta.h), set at commit. */
                char *b = malloc(v.n);
                if (b) {
                    memcpy(b, v.p, v.n);
                    free(ld->mcmeta);
                    ld->mcmeta = b;
                    ld->mcmeta_len = v.n;
                }
            } else if (strcmp(name, "repl-offset") == 0 || strcmp(name, "repl-stream-db") == 0) {
                long long x;
                if (str_to_ll((const char *)v.p, v.n, &x)) {
                    if (name[5] == 'o') ld->repl_offset = x;
                    else ld->repl_stream_db = (int)x;
                }
            }
            continue;
        }
        case RDB_OPCODE_MODULE_AUX: {
            uint64_t id;
            char name[10] = "?";
            if (in_len(in, &id) == 0) module_name(id, name);
            in->err = 0;
            return in_fail(in, RDB_ERR_UNSUPPORTED, "module auxiliary data of module type '%s': Goblin loads no modules",
                           name);
        }
        case RDB_OPCODE_FUNCTION2:
        case RDB_OPCODE_FUNCTION_PRE_GA: {
            char *code;
            size_t n;
            if (in_function(in, t, &code, &n) != 0) return -1;
            if (codes_push(&ld->fcodes, &ld->flens, &ld->nfuncs, code, n) != 0)
                return in_fail(in, RDB_ERR_NOMEM, "out of memory for a function library");
            continue;
        }
        case RDB_OPCODE_EOF: goto eof;
        default: break;
        }
        if (!is_value_type((int)t) || t == 8) return in_fail(in, RDB_ERR_TYPE, "unknown value type or opcode %u", t);
        rstr k;
        if (in_string(in, &k) != 0) return -1;
        /* The key goes straight into the batch; in->key views it there for
         * error messages (valid until the next key). */
        if (kb_key(kb, k.p, k.n) != 0) return in_fail(in, RDB_ERR_NOMEM, "out of memory for a key");
        kbatch *b = &kb->bufs[kb->cur];
        in->key.p = b->keys ? b->keys + b->klen : (unsigned char *)"";
        in->key.n = k.n;
        in->have_key = 1;
        gobj v;
        int rc = load_value(in, (int)t, &v);
        if (rc == LOAD_ERR) return -1;
        if (rc == LOAD_EMPTY) {
            /* As Redis 7.0: an empty collection (an older server wrote it)
             * is skipped, each one logged. */
            char shown[300];
            rdb_key_shown(shown, sizeof(shown), in->key.p, in->key.n);
            log_warn("rdbLoadObject skipping empty key: %s", shown);
            ld->empty++;
        } else if (expire != -1 && expire < now && !in->opt->keep_expired) {
            obj_free(&v);
            ld->expired++;
            if (in->opt->expired) in->opt->expired(in->opt->expired_arg, dbid, in->key.p, in->key.n);
        } else {
            if (!ld->dbs[dbid] && !(ld->dbs[dbid] = db_detached_new(dbid))) {
                obj_free(&v);
                return in_fail(in, RDB_ERR_NOMEM, "out of memory for a database");
            }
            int full = kb_push(kb, k.n, dbid, &v, expire, in_offset(in));
            if (full < 0) {
                obj_free(&v);
                return in_fail(in, RDB_ERR_NOMEM, "out of memory queuing a key");
            }
            queued++;
            if (in->opt->key_delay_us) rdb_key_delay(in->opt->key_delay_us);
            if (full && kb_flush(kb, 0) != 0) {
                in->have_key = 0;
                in->err = kb->err;
                snprintf(in->emsg, in->elen, "%s", kb->msg);
                return -1;
            }
        }
        expire = -1;
        if (queued + ld->expired + ld->empty >= next_report) {
            next_report += 4096;
            if (in->opt->abort && __atomic_load_n(in->opt->abort, __ATOMIC_RELAXED)) {
                in->have_key = 0;
                return in_fail(in, RDB_ERR_ABORTED, "loading aborted (shutdown requested)");
            }
            if (in->opt->progress) in->opt->progress(in->opt->progress_arg, queued, in_offset(in));
            if (rdb_load_slow_us > 0) usleep((useconds_t)rdb_load_slow_us);
        }
    }
eof:
    in->have_key = 0;
    if (kb_flush(kb, 1) != 0) {
        in->err = kb->err;
        snprintf(in->emsg, in->elen, "%s", kb->msg);
        return -1;
    }
    if (!in->crc_async) in->crc = crc64_update(in->crc, in->buf + in->crcpos, in->pos - in->crcpos);
    in->crcpos = in->pos;
    if (ver >= 5) {
        uint64_t computed = in->crc;
        if (in->crc_async) {
            pthread_join(cj->tid, NULL);
            cj->started = 0;
            uint64_t parsed = in_offset(in);
            if (!cj->ok || parsed != cj->len) {
                /* Not the usual layout (bytes after the checksum): checksum
                 * what was parsed. */
                if (crc_of_file(in->fd, parsed, &computed, NULL) != 0)
                    return in_fail(in, RDB_ERR_IO, "read error while checksumming: %s", strerror(errno));
            } else {
                computed = cj->crc;
            }
        }
        const unsigned char *q = in_take(in, 8);
        if (!q) return -1;
        uint64_t stored = le_get64(q);
        /* Zero: saved with rdbchecksum no; rdbchecksum no here: not
         * verified (Redis 7.0's rdbLoadRio). */
        if (stored != 0 && stored != computed && checksum_verified())
            return in_fail(in, RDB_ERR_CHECKSUM,
                           "RDB CRC error, the file says %016llx, the data gives %016llx",
                           (unsigned long long)stored, (unsigned long long)computed);
    }
    return 0;
}

/* rdbchecksum as configured now. */
static int skip_checksum; /* atomics: DEBUG SET-SKIP-CHECKSUM-VALIDATION */

void rdb_set_skip_checksum(int on) { __atomic_store_n(&skip_checksum, on, __ATOMIC_RELAXED); }

/* A payload's footer: a version this build reads, and its CRC-64 (unless
 * the checks are skipped). */
static int payload_footer_ok(const unsigned char *p, size_t n, int ver) {
    if (ver > RDB_VERSION_WRITTEN) return 0;
    return __atomic_load_n(&skip_checksum, __ATOMIC_RELAXED) || crc64_update(0, p, n - 8) == le_get64(p + n - 8);
}

static int checksum_verified(void) {
    if (__atomic_load_n(&skip_checksum, __ATOMIC_RELAXED)) return 0;
    char *v = config_value("rdbchecksum");
    int yes = !v || strcmp(v, "yes") == 0;
    free(v);
    return yes;
}

/* The encoding limits of the running configuration, for the values built. */
static void in_limits_from_cfg(rdb_in *in) {
    in->hlim.max_entries = cfg.hash_max_listpack_entries < 0 ? 0 : (size_t)cfg.hash_max_listpack_entries;
    in->hlim.max_value = cfg.hash_max_listpack_value < 0 ? 0 : (size_t)cfg.hash_max_listpack_value;
    in->zlim.max_entries = cfg.zset_max_listpack_entries < 0 ? 0 : (size_t)cfg.zset_max_listpack_entries;
    in->zlim.max_value = cfg.zset_max_listpack_value < 0 ? 0 : (size_t)cfg.zset_max_listpack_value;
    in->slim.max_intset = cfg.set_max_intset_entries < 0 ? 0 : (size_t)cfg.set_max_intset_entries;
    list_limit_from_fill(&in->llim, cfg.list_max_listpack_size);
}

/* RESTORE's payload (see rdb_dump_value): footer first, as Redis's
 * verifyDumpPayload, then the value, checked as strictly as in a file. */
int rdb_restore_value(const unsigned char *p, size_t n, gobj *o, char *err, size_t errlen) {
    memset(o, 0, sizeof(*o));
    if (n < 10) {
        snprintf(err, errlen, "payload of %zu bytes is too short", n);
        return RDB_ERR_VERSION;
    }
    const unsigned char *foot = p + n - 10;
    int ver = le_get16(foot);
    /* Versions up to the one written, as Redis 7.0 (the file loader also
     * reads 11: a 7.2 payload is refused here as 7.0 refuses it). */
    if (!payload_footer_ok(p, n, ver)) {
        snprintf(err, errlen, "payload version %d or checksum wrong", ver);
        return RDB_ERR_CHECKSUM;
    }
    rdb_in in;
    memset(&in, 0, sizeof(in));
    in.fd = -1;
    in.emsg = err;
    in.elen = errlen;
    in.version = ver;
    /* Like Redis's reader, the value may run into the footer and need not
     * end where it starts: a request Redis takes is taken. */
    in.fsize = n;
    in.cap = in.end = n;
    in.buf = malloc(in.cap);
    if (!in.buf) {
        snprintf(err, errlen, "out of memory");
        return RDB_ERR_NOMEM;
    }
    memcpy(in.buf, p, in.end);
    in_limits_from_cfg(&in);
    unsigned t;
    int rc = RDB_OK;
    if (in_byte(&in, &t) != 0) {
        rc = in.err;
    } else if (!is_value_type((int)t) || t == 8) {
        in_fail(&in, RDB_ERR_TYPE, "unknown value type %u", t);
        rc = in.err;
    } else {
        int lr = load_value(&in, (int)t, o);
        if (lr == LOAD_ERR) {
            rc = in.err ? in.err : RDB_ERR_ENCODING;
        } else if (lr == LOAD_EMPTY) {
            /* Redis 7.0 refuses an empty collection too. */
            snprintf(err, errlen, "empty collection");
            rc = RDB_ERR_VALUE;
        }
    }
    if (rc != RDB_OK) memset(o, 0, sizeof(*o));
    free(in.buf);
    free(in.tmp.p);
    free(in.z.p);
    return rc;
}

/* The part common to files and readers: in is set up (fd or rd, fsize). */
static int load_in(rdb_in *in, const rdb_load_opts *opt, rdb_loaded *ld, char *err, size_t errlen) {
    in->emsg = err;
    in->elen = errlen;
    static const rdb_load_opts no_opts; /* opt NULL: no progress, no abort */
    in->opt = opt ? opt : &no_opts;
    ld->bytes = in->fsize;
    /* A regular file smaller than a read gets a buffer of its size. */
    in->cap = in->fsize && in->fsize < IN_CHUNK ? (size_t)in->fsize + 1 : IN_CHUNK;
    in->buf = malloc(in->cap);
    if (!in->buf) {
        snprintf(err, errlen, "out of memory");
        return RDB_ERR_NOMEM;
    }
    in_limits_from_cfg(in);

    kbuilder kb;
    crc_job cj;
    memset(&cj, 0, sizeof(cj));
    kb_init(&kb, ld);
    int rc = load_stream(in, ld, &kb, &cj) == 0 ? RDB_OK : in->err;
    crc_job_end(&cj);
    kb_done(&kb);
    /* A string running past the end is a truncated file, or a damaged
     * length in a complete one: when the file still ends like a dump (EOF
     * opcode and checksum), the checksum decides. */
    if (rc == RDB_ERR_TYPE || rc == RDB_ERR_LENGTH || rc == RDB_ERR_ENCODING || rc == RDB_ERR_VALUE ||
        rc == RDB_ERR_DUPLICATE || rc == RDB_ERR_UNSUPPORTED || (rc == RDB_ERR_TRUNCATED && in->overrun)) {
        uint64_t stored, computed;
        if (diagnose_checksum(in, &stored, &computed)) {
            char first[512];
            snprintf(first, sizeof(first), "%s", err);
            snprintf(err, errlen,
                     "RDB CRC error, the file says %016llx, the data gives %016llx; first damage "
                     "seen: %s",
                     (unsigned long long)stored, (unsigned long long)computed, first);
            rc = RDB_ERR_CHECKSUM;
        }
    }
    if (rc == RDB_OK) rc = build_functions(ld, err, errlen);
    if (rc == RDB_OK) {
        /* What was read past the RDB's end (a reader's framing). */
        size_t rest = in->end - in->pos;
        ld->ntail = rest;
        memcpy(ld->tail, in->buf + in->pos, rest < sizeof(ld->tail) ? rest : sizeof(ld->tail));
        ld->end = in_offset(in);
        if (in->rd) ld->bytes = ld->end;
    }
    free(in->buf);
    free(in->tmp.p);
    free(in->z.p);
    if (rc != RDB_OK) rdb_load_discard(ld);
    return rc;
}

static void loaded_init(rdb_loaded *ld) {
    memset(ld, 0, sizeof(*ld));
    ld->snap_gen = db_snap_generation(); /* before any entry is made */
    ld->repl_offset = -1;
    ld->repl_stream_db = -1;
    ld->ndbs = db_count();
}

int rdb_load_file(const char *path, const rdb_load_opts *opt, rdb_loaded *ld, char *err, size_t errlen) {
    loaded_init(ld);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "can't open '%s': %s", path, strerror(e));
        return e == ENOENT ? RDB_ERR_NOFILE : RDB_ERR_IO;
    }
    struct stat stt;
    rdb_in in;
    memset(&in, 0, sizeof(in));
    in.fd = fd;
    if (fstat(fd, &stt) == 0 && S_ISREG(stt.st_mode)) in.fsize = (uint64_t)stt.st_size;
    int rc = load_in(&in, opt, ld, err, errlen);
    close(fd);
    return rc;
}

int rdb_load_reader(rdb_read_fn *rd, void *arg, const rdb_load_opts *opt, rdb_loaded *ld, char *err,
                    size_t errlen) {
    loaded_init(ld);
    rdb_in in;
    memset(&in, 0, sizeof(in));
    in.fd = -1;
    in.rd = rd;
    in.rd_arg = arg;
    return load_in(&in, opt, ld, err, errlen);
}
