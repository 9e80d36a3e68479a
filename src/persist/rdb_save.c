/* rdb_save.c -- the RDB writer: every database, every type, version 10.
 *
 * Output goes through one buffer (1 MiB) whose bytes are checksummed as
 * they are flushed; payloads larger than the buffer bypass it. Each value
 * is written in the encoding Redis 7.0 itself would pick for it:
 *   string   int-encoded when it is a canonical integer that fits 32 bits,
 *            LZF-compressed when longer than 20 bytes and it pays, raw
 *            otherwise;
 *   list     QUICKLIST_2: listpack nodes cut by list-max-listpack-size
 *            (an element of 1 GiB or more is a PLAIN node, as in Redis);
 *   set      INTSET for an intset, else SET (members as strings);
 *   zset     ZSET_LISTPACK for the packed form, else ZSET_2 (members from
 *            the highest score down, binary doubles);
 *   hash     HASH_LISTPACK for the small form, else HASH.
 * The QUICKLIST_2 node count precedes the nodes, so a list is walked twice:
 * once to cut the nodes (sizes only), once to write them; nothing
 * proportional to the list is buffered. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/mcmeta.h"
#include "db/strval.h"
#include "ds/hash.h"
#include "ds/list.h"
#include "ds/set.h"
#include "ds/stream.h"
#include "util/strutil.h"
#include "ds/zset.h"
#include "util/crc64.h"
#include "util/lzf.h"
#include "util/rand.h"
#include "persist/packed.h"
#include "persist/rdb.h"
#include "base/config.h"
#include "base/process.h"

#define OUT_BUF (1u << 20)
#define DUMP_BUF (16u << 10)
#define PLAIN_NODE_MIN ((size_t)1 << 30) /* Redis's packed_threshold default */

volatile long rdb_save_slow_us;

typedef struct rdb_out {
    int fd;                    /* -1: into mem (DUMP) */
    unsigned char *buf;
    size_t len, cap;           /* cap: OUT_BUF, or DUMP_BUF into mem */
    unsigned char *mem;        /* fd -1: the output so far */
    size_t mlen, mcap;
    uint64_t crc;
    uint64_t flushed;          /* bytes written to fd */
    uint64_t synced;           /* flushed at the last incremental fdatasync */
    int autosync;              /* fdatasync every RDB_AUTOSYNC_BYTES */
    int nocrc;                 /* into mem for a later write: no checksum here */
    int nofold;                /* leave large-string views to strval_end_command */
    int err;
    int errnum;
    int compress;
    lzf_state *lzf;
    unsigned char *zbuf;       /* compression output */
    size_t zcap;
    lp_builder lp;             /* listpack under construction */
} rdb_out;

/* ---- raw output ---------------------------------------------------------- */

/* Append to o->mem (DUMP's payload). */
static void out_memwrite(rdb_out *o, const unsigned char *p, size_t n) {
    if (o->err) return;
    if (n > o->mcap - o->mlen) {
        size_t cap = o->mcap ? o->mcap : 256;
        while (cap - o->mlen < n) cap *= 2;
        unsigned char *m = realloc(o->mem, cap);
        if (!m) {
            o->err = RDB_ERR_NOMEM;
            o->errnum = ENOMEM;
            return;
        }
        o->mem = m;
        o->mcap = cap;
    }
    memcpy(o->mem + o->mlen, p, n);
    o->mlen += n;
}

static void out_syswrite(rdb_out *o, const unsigned char *p, size_t n) {
    if (!o->nocrc) o->crc = crc64_update(o->crc, p, n);
    if (o->fd < 0) {
        out_memwrite(o, p, n);
        return;
    }
    while (n && !o->err) {
        size_t chunk = n;
        long slow = rdb_save_slow_us;
        if (slow > 0 && chunk > (size_t)slow) chunk = (size_t)slow;
        ssize_t w = write(o->fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            o->errnum = errno;
            o->err = (errno == ENOSPC || errno == EDQUOT) ? RDB_ERR_NOSPACE : RDB_ERR_IO;
            return;
        }
        if (slow > 0) usleep((useconds_t)slow);
        p += w;
        n -= (size_t)w;
        o->flushed += (uint64_t)w;
    }
    if (o->autosync && !o->err && o->flushed - o->synced >= RDB_AUTOSYNC_BYTES) {
        if (fdatasync(o->fd) != 0 && errno != EINVAL) { /* EINVAL: a pipe or socket, nothing to sync */
            o->errnum = errno;
            o->err = (errno == ENOSPC || errno == EDQUOT) ? RDB_ERR_NOSPACE : RDB_ERR_IO;
            return;
        }
        o->synced = o->flushed;
    }
}

static void out_flush(rdb_out *o) {
    if (o->len) out_syswrite(o, o->buf, o->len);
    o->len = 0;
}

/* Output to fd (-1: into o->mem) through a buffer of cap bytes; -1 (and
 * o->err) when out of memory. out_close frees all but o->mem. */
static int out_open(rdb_out *o, int fd, int compress, size_t cap) {
    memset(o, 0, sizeof(*o));
    o->fd = fd;
    o->compress = compress;
    o->cap = cap;
    o->buf = malloc(cap);
    o->lzf = compress ? calloc(1, sizeof(lzf_state)) : NULL;
    lpb_init(&o->lp);
    if (!o->buf || (compress && !o->lzf)) {
        o->err = RDB_ERR_NOMEM;
        o->errnum = ENOMEM;
        return -1;
    }
    return 0;
}

static void out_close(rdb_out *o) {
    free(o->buf);
    free(o->lzf);
    free(o->zbuf);
    lpb_free(&o->lp);
}

/* Flush, then the CRC-64 of everything written (little endian), as both
 * a file and a DUMP payload end. */
static void out_finish(rdb_out *o, int no_checksum) {
    out_flush(o);
    if (o->err) return;
    unsigned char b[8];
    le_put64(b, no_checksum ? 0 : o->crc);
    out_syswrite(o, b, 8);
}

static void out_bytes(rdb_out *o, const void *p, size_t n) {
    if (o->err) return;
    if (n > o->cap - o->len) {
        out_flush(o);
        if (n >= o->cap / 2) {
            out_syswrite(o, p, n);
            return;
        }
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static inline void out_byte(rdb_out *o, unsigned char b) {
    if (o->len == o->cap) out_flush(o);
    o->buf[o->len++] = b;
}

static void out_len(rdb_out *o, uint64_t v) {
    unsigned char b[9];
    size_t n;
    if (v < (1u << 6)) {
        b[0] = (unsigned char)v;
        n = 1;
    } else if (v < (1u << 14)) {
        b[0] = (unsigned char)((RDB_14BITLEN << 6) | (v >> 8));
        b[1] = (unsigned char)v;
        n = 2;
    } else if (v <= UINT32_MAX) {
        b[0] = RDB_32BITLEN;
        for (int i = 0; i < 4; i++) b[1 + i] = (unsigned char)(v >> (24 - 8 * i));
        n = 5;
    } else {
        b[0] = RDB_64BITLEN;
        for (int i = 0; i < 8; i++) b[1 + i] = (unsigned char)(v >> (56 - 8 * i));
        n = 9;
    }
    out_bytes(o, b, n);
}

/* An int-encoded string when v fits 32 bits; returns 0 when it does not. */
static int out_int_enc(rdb_out *o, int64_t v) {
    unsigned char b[5];
    size_t n;
    if (v >= INT8_MIN && v <= INT8_MAX) {
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT8;
        b[1] = (unsigned char)(int8_t)v;
        n = 2;
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT16;
        b[1] = (unsigned char)v;
        b[2] = (unsigned char)(v >> 8);
        n = 3;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT32;
        for (int i = 0; i < 4; i++) b[1 + i] = (unsigned char)((uint64_t)v >> (8 * i));
        n = 5;
    } else {
        return 0;
    }
    out_bytes(o, b, n);
    return 1;
}

/* A string the way Redis's rdbSaveRawString writes it. */
static void out_string(rdb_out *o, const void *p, size_t n) {
    if (n <= 11 && n > 0) {
        long long v;
        if (str_to_ll(p, n, &v) && out_int_enc(o, v)) return;
    }
    if (o->compress && n > 20) {
        size_t cap = n - 4;
        if (cap > o->zcap) {
            unsigned char *nz = realloc(o->zbuf, cap);
            if (nz) {
                o->zbuf = nz;
                o->zcap = cap;
            }
        }
        if (cap <= o->zcap) {
            size_t cn = lzf_compress(o->lzf, p, n, o->zbuf, cap);
            if (cn) {
                out_byte(o, (RDB_ENCVAL << 6) | RDB_ENC_LZF);
                out_len(o, cn);
                out_len(o, n);
                out_bytes(o, o->zbuf, cn);
                return;
            }
        }
    }
    out_len(o, n);
    out_bytes(o, p, n);
}

static void out_string_ll(rdb_out *o, int64_t v) {
    if (out_int_enc(o, v)) return;
    char buf[STRUTIL_LLSTR];
    int n = ll_to_str(buf, sizeof(buf), v);
    out_len(o, (uint64_t)n);
    out_bytes(o, buf, (size_t)n);
}

static void out_double_bin(rdb_out *o, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    unsigned char b[8];
    le_put64(b, u);
    out_bytes(o, b, 8);
}

static void out_aux(rdb_out *o, const char *k, const char *v) {
    out_byte(o, RDB_OPCODE_AUX);
    out_string(o, k, strlen(k));
    out_string(o, v, strlen(v));
}

static void out_lp_blob(rdb_out *o) {
    size_t n;
    const unsigned char *blob = lpb_finish(&o->lp, &n);
    if (!blob) {
        if (!o->err) {
            o->err = RDB_ERR_NOMEM;
            o->errnum = ENOMEM;
        }
        return;
    }
    out_string(o, blob, n);
}

/* ---- values ---------------------------------------------------------------- */

static int value_rdb_type(const gobj *v) {
    switch (v->type) {
    case OBJ_STRING: return RDB_TYPE_STRING;
    case OBJ_LIST: return RDB_TYPE_LIST_QUICKLIST_2;
    case OBJ_SET: return set_is_intset(v->u.p) ? RDB_TYPE_SET_INTSET : RDB_TYPE_SET;
    case OBJ_ZSET: return zset_is_packed(v->u.p) ? RDB_TYPE_ZSET_LISTPACK : RDB_TYPE_ZSET_2;
    case OBJ_HASH: return hash_form(v->u.p) == HASH_SMALL ? RDB_TYPE_HASH_LISTPACK : RDB_TYPE_HASH;
    case OBJ_STREAM: return RDB_TYPE_STREAM_LISTPACKS_2;
    default: return -1;
    }
}

static void save_string(rdb_out *o, const gobj *v) {
    if (v->enc == ENC_INT) {
        out_string_ll(o, v->u.i);
        return;
    }
    const char *c;
    size_t cn, n;
    if (o->compress && strval_lzf(v, &c, &cn, &n)) {
        /* Kept compressed: the same LZF bytes, no round trip. */
        out_byte(o, (RDB_ENCVAL << 6) | RDB_ENC_LZF);
        out_len(o, cn);
        out_len(o, n);
        out_bytes(o, c, cn);
        return;
    }
    char tmp[STRUTIL_LLSTR];
    const char *p = strval_bytes(v, tmp, &n);
    if (!p) {
        /* An unreadable SSD tail: the snapshot fails (the old dump stays). */
        if (!o->err) {
            o->err = strval_io_error() ? RDB_ERR_IO : RDB_ERR_NOMEM;
            o->errnum = strval_io_error() ? EIO : ENOMEM;
        }
        return;
    }
    out_string(o, p, n);
    /* A large value's bytes came as a contiguous copy of head and tail
     * (a "view"); drop it now, or a SAVE would hold a copy of every large
     * string until the command ends. A clean view is only freed. (Not in
     * the middle of a command: the fold also resets the thread's scratch,
     * which the command may still be reading.) */
    if (!o->nofold) strval_fold((gobj *)v);
}

/* Size of an element inside a listpack (entry + back length). */
static size_t lp_entry_size(const list_elem *e) {
    size_t l;
    if (e->isint) {
        int64_t v = e->v;
        l = (v >= 0 && v <= 127) ? 1 : (v >= -4096 && v <= 4095) ? 2 : (v >= -32768 && v <= 32767) ? 3
            : (v >= -8388608 && v <= 8388607) ? 4 : (v >= INT32_MIN && v <= INT32_MAX) ? 5 : 9;
    } else {
        l = e->n + (e->n < 64 ? 1 : e->n < 4096 ? 2 : 5);
    }
    return l + (l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5);
}

/* Cuts a list into nodes the way a quicklist with this fill would hold it:
 * a node takes elements while its listpack stays within the byte budget
 * (and the count limit); an oversized element gets a node of its own, a
 * huge one a PLAIN node. Returns the number of nodes; with write set, also
 * writes them. Both passes take the same decisions from the same sizes. */
static void close_node(rdb_out *o, int write) {
    if (!write) return;
    out_len(o, RDB_QUICKLIST_NODE_PACKED);
    out_lp_blob(o);
    lpb_reset(&o->lp);
}

static uint64_t list_nodes(rdb_out *o, glist *l, const list_limit *lim, int write) {
    list_iter it;
    list_elem e;
    uint64_t nodes = 0, cnt = 0;
    size_t bytes = 7; /* an empty listpack */
    lpb_reset(&o->lp);
    list_iter_init(&it, l, 0, LIST_TAIL);
    while (list_iter_next(&it, &e) && !o->err) {
        size_t es = lp_entry_size(&e);
        int plain = !e.isint && e.n >= PLAIN_NODE_MIN;
        int fits = !plain && bytes + es <= lim->bytes && (!lim->count || cnt < lim->count);
        if (cnt && !fits) {
            close_node(o, write);
            nodes++;
            cnt = 0;
            bytes = 7;
        }
        if (plain) {
            if (write) {
                out_len(o, RDB_QUICKLIST_NODE_PLAIN);
                out_len(o, e.n);
                out_bytes(o, e.p, e.n);
            }
            nodes++;
            continue;
        }
        if (write) {
            if (e.isint) lpb_add_int(&o->lp, e.v);
            else lpb_add_str(&o->lp, e.p, e.n);
        }
        cnt++;
        bytes += es;
    }
    list_iter_release(&it);
    if (cnt) {
        close_node(o, write);
        nodes++;
    }
    return nodes;
}

static void save_list(rdb_out *o, const gobj *v) {
    glist *l = v->u.p;
    list_limit lim;
    list_limit_from_fill(&lim, cfg.list_max_listpack_size);
    out_len(o, list_nodes(o, l, &lim, 0));
    list_nodes(o, l, &lim, 1);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void save_set(rdb_out *o, const gobj *v) {
    gset *s = v->u.p;
    set_iter it;
    set_elem e;
    size_t n = set_card(s);
    if (set_is_intset(s)) {
        int64_t *vals = malloc((n ? n : 1) * sizeof(int64_t));
        if (!vals) {
            o->err = RDB_ERR_NOMEM;
            o->errnum = ENOMEM;
            return;
        }
        size_t k = 0, sorted = 1;
        set_iter_init(&it, s);
        while (k < n && set_iter_next(&it, &e)) {
            vals[k] = e.v;
            if (k && vals[k] <= vals[k - 1]) sorted = 0;
            k++;
        }
        set_iter_done(&it);
        if (!sorted) qsort(vals, k, sizeof(int64_t), cmp_i64);
        size_t bl;
        unsigned char *blob = is_build(vals, k, &bl);
        free(vals);
        if (!blob) {
            o->err = RDB_ERR_NOMEM;
            o->errnum = ENOMEM;
            return;
        }
        out_string(o, blob, bl);
        free(blob);
        return;
    }
    out_len(o, n);
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) out_string(o, e.p, e.n);
    set_iter_done(&it);
}

static void lp_add_score(lp_builder *b, double d) {
    char buf[64];
    int n = double_to_str(buf, sizeof(buf), d);
    lpb_add_str(b, buf, (size_t)n);
}

static void save_zset(rdb_out *o, const gobj *v) {
    zset *z = v->u.p;
    zset_iter it;
    const char *m;
    size_t n;
    double sc;
    if (zset_is_packed(z)) {
        lpb_reset(&o->lp);
        zset_iter_init(&it, z, 0, 0);
        while (zset_iter_next(&it, &m, &n, &sc)) {
            lpb_add_str(&o->lp, m, n);
            lp_add_score(&o->lp, sc);
        }
        out_lp_blob(o);
        return;
    }
    size_t card = zset_card(z);
    out_len(o, card);
    if (!card) return;
    /* From the highest score down, as Redis writes a skiplist. */
    zset_iter_init(&it, z, card - 1, 1);
    while (zset_iter_next(&it, &m, &n, &sc)) {
        out_string(o, m, n);
        out_double_bin(o, sc);
    }
}

static void save_hash(rdb_out *o, const gobj *v) {
    hash *h = v->u.p;
    hash_iter it;
    const char *f, *val;
    size_t fl, vl;
    if (hash_form(h) == HASH_SMALL) {
        lpb_reset(&o->lp);
        hash_iter_init(&it, h);
        while (hash_iter_next(&it, &f, &fl, &val, &vl)) {
            lpb_add_str(&o->lp, f, fl);
            lpb_add_str(&o->lp, val, vl);
        }
        hash_iter_done(&it);
        out_lp_blob(o);
        return;
    }
    out_len(o, hash_len(h));
    hash_iter_init(&it, h);
    while (hash_iter_next(&it, &f, &fl, &val, &vl)) {
        out_string(o, f, fl);
        out_string(o, val, vl);
    }
    hash_iter_done(&it);
}

/* Streams as Redis 7.0 writes them: each run as a radix-tree node, its
 * master ID (16 bytes, big endian) and its listpack (the master entry,
 * then every entry, deleted ones included), then the stream's metadata
 * and its groups with their PELs and consumers. */
typedef struct sv_run {
    lp_builder *lp;
    const stream_run_view *v;
    int started;
} sv_run;

static void sv_entry(void *arg, const stream_id *id, int deleted, int same, const stream_str *fv, size_t nf) {
    sv_run *r = arg;
    lp_builder *lp = r->lp;
    if (!r->started) {
        r->started = 1;
        lpb_add_int(lp, r->v->live);
        lpb_add_int(lp, r->v->dead);
        lpb_add_int(lp, (int64_t)r->v->nmaster);
        for (size_t i = 0; i < r->v->nmaster; i++) lpb_add_str(lp, r->v->master[i].p, r->v->master[i].n);
        lpb_add_int(lp, 0);
    }
    lpb_add_int(lp, (deleted ? 1 : 0) | (same ? 2 : 0));
    lpb_add_int(lp, (int64_t)(id->ms - r->v->first.ms));
    lpb_add_int(lp, (int64_t)(id->seq - r->v->first.seq));
    if (!same) lpb_add_int(lp, (int64_t)nf);
    for (size_t i = 0; i < nf; i++) {
        if (!same) lpb_add_str(lp, fv[2 * i].p, fv[2 * i].n);
        lpb_add_str(lp, fv[2 * i + 1].p, fv[2 * i + 1].n);
    }
    lpb_add_int(lp, (int64_t)nf + 3 + (same ? 0 : (int64_t)nf + 1));
}

static void out_stream_id_raw(rdb_out *o, const stream_id *id) {
    unsigned char b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(id->ms >> (56 - 8 * i));
        b[8 + i] = (unsigned char)(id->seq >> (56 - 8 * i));
    }
    out_bytes(o, b, 16);
}

static void out_ms(rdb_out *o, int64_t t) {
    unsigned char b[8];
    le_put64(b, (uint64_t)t);
    out_bytes(o, b, 8);
}

static void save_stream(rdb_out *o, const gobj *v) {
    gstream *s = v->u.p;
    out_len(o, stream_nruns(s));
    for (size_t i = 0; i < stream_nruns(s); i++) {
        stream_run_view view;
        sv_run r = {&o->lp, &view, 0};
        lpb_reset(&o->lp);
        unsigned char key[16];
        const stream_id *first = &s->runs[i].first;
        for (int k = 0; k < 8; k++) {
            key[k] = (unsigned char)(first->ms >> (56 - 8 * k));
            key[8 + k] = (unsigned char)(first->seq >> (56 - 8 * k));
        }
        out_len(o, 16);
        out_bytes(o, key, 16);
        stream_run_walk(s, i, &view, sv_entry, &r);
        out_lp_blob(o);
    }
    out_len(o, s->length);
    out_len(o, s->last_id.ms);
    out_len(o, s->last_id.seq);
    out_len(o, s->first_id.ms);
    out_len(o, s->first_id.seq);
    out_len(o, s->max_deleted_id.ms);
    out_len(o, s->max_deleted_id.seq);
    out_len(o, s->entries_added);
    out_len(o, s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) {
        const stream_group *g = s->groups[i];
        out_string(o, g->name, g->nlen);
        out_len(o, g->last_id.ms);
        out_len(o, g->last_id.seq);
        out_len(o, (uint64_t)g->entries_read);
        out_len(o, g->pel.n);
        for (size_t k = 0; k < g->pel.n; k++) {
            out_stream_id_raw(o, &g->pel.v[k]->id);
            out_ms(o, g->pel.v[k]->delivery_time);
            out_len(o, g->pel.v[k]->delivery_count);
        }
        out_len(o, g->ncons);
        for (size_t k = 0; k < g->ncons; k++) {
            const stream_consumer *c = g->cons[k];
            out_string(o, c->name, c->nlen);
            out_ms(o, c->seen_time);
            out_len(o, c->pel.n);
            for (size_t m = 0; m < c->pel.n; m++) out_stream_id_raw(o, &c->pel.v[m]->id);
        }
    }
}

/* The body of a value (after its type byte), in a file or a DUMP. */
static void save_value(rdb_out *o, const gobj *v) {
    switch (v->type) {
    case OBJ_STRING: save_string(o, v); break;
    case OBJ_LIST: save_list(o, v); break;
    case OBJ_SET: save_set(o, v); break;
    case OBJ_ZSET: save_zset(o, v); break;
    case OBJ_HASH: save_hash(o, v); break;
    case OBJ_STREAM: save_stream(o, v); break;
    default: break;
    }
}

static void save_entry(rdb_out *o, const dbentry *e) {
    const gobj *v = &e->val;
    int t = value_rdb_type(v);
    if (t < 0) return; /* a key being created (no value yet) */
    if (db_entry_expire(e) != -1) {
        unsigned char b[9];
        b[0] = RDB_OPCODE_EXPIRETIME_MS;
        le_put64(b + 1, (uint64_t)db_entry_expire(e));
        out_bytes(o, b, 9);
    }
    out_byte(o, (unsigned char)t);
    out_string(o, db_entry_key(e), db_entry_klen(e));
    save_value(o, v);
}

/* ---- the file ---------------------------------------------------------------- */

/* ---- function libraries ------------------------------------------------ */

static const rdb_func_hooks *func_hooks;

void rdb_set_func_hooks(const rdb_func_hooks *h) { func_hooks = h; }
const rdb_func_hooks *rdb_func_hooks_get(void) { return func_hooks; }

static void emit_function(void *arg, const char *code, size_t n) {
    rdb_out *o = arg;
    out_byte(o, RDB_OPCODE_FUNCTION2);
    out_string(o, code, n);
}

/* Every live library, as Redis's rdbSaveFunctions. */
static void out_functions(rdb_out *o) {
    if (func_hooks && func_hooks->each) func_hooks->each(emit_function, o);
}

int rdb_dump_functions(int compress, unsigned char **out, size_t *outlen) {
    *out = NULL;
    *outlen = 0;
    rdb_out o;
    if (out_open(&o, -1, compress, DUMP_BUF) == 0) {
        out_functions(&o);
        unsigned char ver[2];
        le_put16(ver, RDB_VERSION_WRITTEN);
        out_bytes(&o, ver, 2);
        out_finish(&o, 0);
    }
    out_close(&o);
    if (o.err) {
        free(o.mem);
        return o.err;
    }
    *out = o.mem;
    *outlen = o.mlen;
    return RDB_OK;
}

/* The magic and the aux fields, then the function libraries. */
static void out_header(rdb_out *o, const rdb_save_opts *opt) {
    char magic[16];
    snprintf(magic, sizeof(magic), "REDIS%04d", RDB_VERSION_WRITTEN);
    out_bytes(o, magic, 9);
    char num[32];
    out_aux(o, "redis-ver", GOBLIN_REDIS_VERSION);
    snprintf(num, sizeof(num), "%d", (int)(sizeof(void *) * 8));
    out_aux(o, "redis-bits", num);
    snprintf(num, sizeof(num), "%lld", (long long)time(NULL));
    out_aux(o, "ctime", num);
    snprintf(num, sizeof(num), "%llu", (unsigned long long)opt->used_mem);
    out_aux(o, "used-mem", num);
    if (opt->repl_id[0]) {
        snprintf(num, sizeof(num), "%d", opt->repl_stream_db);
        out_aux(o, "repl-stream-db", num);
        out_aux(o, "repl-id", opt->repl_id);
        snprintf(num, sizeof(num), "%lld", opt->repl_offset);
        out_aux(o, "repl-offset", num);
    }
    out_aux(o, "aof-base", opt->aof_base ? "1" : "0");
    /* Memcache flags and CAS uniques (db/mcmeta.h): an aux field Redis
     * ignores when it loads the file; none in a file without keys. */
    size_t mlen = 0;
    char *mblob = opt->no_keys ? NULL : mcmeta_dump(&mlen);
    if (mblob) {
        out_byte(o, RDB_OPCODE_AUX);
        out_string(o, "goblin-mcmeta", 13);
        out_string(o, mblob, mlen);
        free(mblob);
    }
    if (!opt->no_functions) out_functions(o);
}

static void out_selectdb(rdb_out *o, int d) {
    out_byte(o, RDB_OPCODE_SELECTDB);
    out_len(o, (uint64_t)d);
}

void rdb_key_delay(int us) {
    if (us < 0) us = rand_below((uint64_t)(-(long long)us)) == 0 ? 1 : 0;
    if (us) usleep((useconds_t)us);
}

int rdb_save_fd(int fd, const rdb_save_opts *opt, rdb_save_stats *st, char *err, size_t errlen) {
    rdb_out o;
    memset(st, 0, sizeof(*st));
    if (out_open(&o, fd, opt->compress, OUT_BUF) != 0) {
        out_close(&o);
        snprintf(err, errlen, "out of memory");
        return RDB_ERR_NOMEM;
    }
    o.autosync = opt->incremental_fsync;

    out_header(&o, opt);

    uint64_t keys = 0, next_report = 4096;
    for (int d = 0; d < db_count() && !o.err && !opt->no_keys; d++) {
        gdb *db = db_get(d);
        size_t size = db_size(db);
        if (!size) continue;
        out_selectdb(&o, d);
        out_byte(&o, RDB_OPCODE_RESIZEDB);
        out_len(&o, size);
        out_len(&o, db_expires(db));
        for (int s = 0; s < DB_NSHARDS && !o.err; s++) {
            swiss_iter it;
            void *slot;
            swiss_iter_init(&it, &db->shards[s].keys);
            while ((slot = swiss_iter_next(&it)) && !o.err) {
                save_entry(&o, db_index_entry(&db->shards[s].keys, slot));
                if (opt->key_delay_us) rdb_key_delay(opt->key_delay_us);
                if (++keys == next_report) {
                    next_report += 4096;
                    if (opt->progress) opt->progress(opt->progress_arg, keys, o.flushed + o.len);
                }
            }
            swiss_iter_done(&it);
        }
    }
    out_byte(&o, RDB_OPCODE_EOF);
    out_finish(&o, opt->no_checksum); /* rdbchecksum no: zero, as Redis writes */
    st->keys = keys;
    st->bytes = o.flushed;
    int rc = o.err;
    if (rc == RDB_ERR_NOMEM) snprintf(err, errlen, "out of memory");
    else if (rc) snprintf(err, errlen, "write error: %s", strerror(o.errnum));
    out_close(&o);
    return rc;
}

/* ---- records into memory (rdb.h: rdb_membuf) ------------------------------ */

struct rdb_membuf {
    rdb_out o;
    int db;                    /* database of the last record, -1: none yet */
};

rdb_membuf *rdb_membuf_new(int compress) {
    rdb_membuf *b = calloc(1, sizeof(*b));
    if (!b) return NULL;
    if (out_open(&b->o, -1, compress, DUMP_BUF) != 0) {
        out_close(&b->o);
        free(b);
        return NULL;
    }
    b->o.nocrc = 1;
    b->db = -1;
    return b;
}

void rdb_membuf_free(rdb_membuf *b) {
    if (!b) return;
    out_close(&b->o);
    free(b->o.mem);
    free(b);
}

void rdb_membuf_header(rdb_membuf *b, const rdb_save_opts *opt) { out_header(&b->o, opt); }

void rdb_membuf_db(rdb_membuf *b, int dbid, uint64_t size, uint64_t expires) {
    out_selectdb(&b->o, dbid);
    out_byte(&b->o, RDB_OPCODE_RESIZEDB);
    out_len(&b->o, size);
    out_len(&b->o, expires);
    b->db = dbid;
}

void rdb_membuf_entry(rdb_membuf *b, int dbid, const dbentry *e, int fold) {
    if (b->db != dbid) {
        out_selectdb(&b->o, dbid);
        b->db = dbid;
    }
    b->o.nofold = !fold;
    save_entry(&b->o, e);
}

size_t rdb_membuf_len(const rdb_membuf *b) { return b->o.mlen + b->o.len; }

unsigned char *rdb_membuf_take(rdb_membuf *b, size_t *n) {
    out_flush(&b->o);
    unsigned char *p = b->o.mem;
    *n = b->o.mlen;
    b->o.mem = NULL;
    b->o.mlen = b->o.mcap = 0;
    b->db = -1;
    return p;
}

int rdb_membuf_error(const rdb_membuf *b, char *err, size_t errlen) {
    if (!b->o.err) return RDB_OK;
    if (b->o.err == RDB_ERR_NOMEM) snprintf(err, errlen, "out of memory");
    else snprintf(err, errlen, "error reading a value: %s", strerror(b->o.errnum));
    return b->o.err;
}

/* DUMP's payload, as Redis's createDumpPayload makes it: the value's type
 * byte and body, the RDB version (2 bytes, little endian) and the CRC-64
 * of all that (8 bytes, little endian). */
int rdb_dump_value(const gobj *v, int compress, unsigned char **out, size_t *outlen) {
    *out = NULL;
    *outlen = 0;
    int t = value_rdb_type(v);
    if (t < 0) return RDB_ERR_TYPE;
    rdb_out o;
    if (out_open(&o, -1, compress, DUMP_BUF) == 0) {
        out_byte(&o, (unsigned char)t);
        save_value(&o, v);
        unsigned char ver[2];
        le_put16(ver, RDB_VERSION_WRITTEN);
        out_bytes(&o, ver, 2);
        out_finish(&o, 0); /* DUMP payloads always carry their CRC */
    }
    out_close(&o);
    if (o.err) {
        free(o.mem);
        return o.err;
    }
    *out = o.mem;
    *outlen = o.mlen;
    return RDB_OK;
}

void rdb_temp_path(char *buf, size_t len, const char *path, long pid) {
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(buf, len, "%.*s/temp-%ld.rdb", (int)(slash - path), path, pid);
    else snprintf(buf, len, "temp-%ld.rdb", pid);
}

static int fsync_dir_of(const char *path) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", path);
    const char *dir = dirname(tmp);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    int rc = fsync(dfd);
    close(dfd);
    return rc;
}

int rdb_save_file(const char *path, const rdb_save_opts *opt, rdb_save_stats *st, char *err, size_t errlen) {
    char tmp[PATH_MAX];
    rdb_temp_path(tmp, sizeof(tmp), path, (long)getpid());
    memset(st, 0, sizeof(*st));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        char cwd[PATH_MAX];
        snprintf(err, errlen, "failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp,
                 getcwd(cwd, sizeof(cwd)) ? cwd : "?", strerror(e));
        return (e == ENOSPC || e == EDQUOT) ? RDB_ERR_NOSPACE : RDB_ERR_IO;
    }
    int rc = rdb_save_fd(fd, opt, st, err, errlen);
    if (rc == RDB_OK && fsync(fd) != 0) {
        int e = errno;
        snprintf(err, errlen, "fsync of %s failed: %s", tmp, strerror(e));
        rc = (e == ENOSPC || e == EDQUOT) ? RDB_ERR_NOSPACE : RDB_ERR_IO;
    }
    if (close(fd) != 0 && rc == RDB_OK) {
        int e = errno;
        snprintf(err, errlen, "close of %s failed: %s", tmp, strerror(e));
        rc = (e == ENOSPC || e == EDQUOT) ? RDB_ERR_NOSPACE : RDB_ERR_IO;
    }
    if (rc == RDB_OK && rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename of %s to %s failed: %s", tmp, path, strerror(errno));
        rc = RDB_ERR_IO;
    }
    if (rc != RDB_OK) {
        unlink(tmp);
        return rc;
    }
    /* The rename is durable once the directory is. A failure here leaves a
     * complete file in place; report it all the same. */
    if (fsync_dir_of(path) != 0) {
        snprintf(err, errlen, "fsync of the directory of %s failed: %s", path, strerror(errno));
        return RDB_ERR_IO;
    }
    return RDB_OK;
}
