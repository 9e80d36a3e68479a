/* strval.c -- string values on the head/tail object store.
 *
 * A value is one of (flags' OBJ_EMBEDDED, then u.p's bit 0):
 *   ENC_INT            a canonical int64 inline in the gobj;
 *   small  (u.p even)  a record of the small-object arena: values
 *                      shorter than --ram-head, their bytes alone (no NUL).
 *                      The word holds the record's handle (bits 1-31) and
 *                      the value's length word (bits 32-63): its length,
 *                      or for values of COMP_MIN..COMP_MAX bytes stored LZF
 *                      compressed when that makes the record smaller,
 *                      COMP_BIT | clen << 16 | length; those
 *                      are read back through a per-command scratch buffer.
 *                      The length is the word's, not the record's: only
 *                      the gobj in its entry is written (a copy reads);
 *   embedded (OBJ_EMBEDDED) the value in the room its key's entry was
 *                      allocated with (db_add_room): a value a write stores
 *                      under a new key, up to EMBED_MAX bytes and unless a
 *                      fixed small-object pool or --perverse placement is
 *                      set, lives right after the key, so a read touches
 *                      one allocation instead of three (entry, handle cell,
 *                      record). The entry owns the room: freeing the value
 *                      frees nothing, a value that no longer fits moves to
 *                      the arena (the room stays unused until the key goes),
 *                      and a value that leaves its entry (RENAME, MOVE) is
 *                      copied out first (strval_unembed). The room
 *                      follows the key, which follows the gobj's header
 *                      (db.h), so the value is found from the gobj's
 *                      address and goes with its entry when the entry is
 *                      reallocated; a copy of the gobj is not the value
 *                      (only the gobj in its entry is). A value that
 *                      enters the room moves the key back over u first; one
 *                      that leaves it moves the key on, over the room's
 *                      start, and writes its word (object.h,
 *                      obj_room_enter / leave). The record is read byte by
 *                      byte, and its layout is not the arena's but a
 *                      2-byte header:
 *                        plain       [cap][len][len bytes][NUL]
 *                        compressed  [cap][EMB_COMP][rawlen][clen][clen LZF bytes]
 *                      Invariant: the room is EMB_HDR + cap + 1 bytes
 *                      whatever it holds (a plain value of up to cap bytes
 *                      fits); len and rawlen are 0..EMBED_MAX (< EMB_COMP);
 *                      the compressed form is there only when it is
 *                      smaller than the plain one would be (and
 *                      deflate_into found it worth it), so no room is over
 *                      EMB_HDR + EMBED_MAX + 1 bytes (cap fits its byte);
 *   large  (u.p odd)   a bigval: one head slot of ram_head bytes in a block
 *                      of the head pool plus a tail (RAM or SSD extent).
 *
 * The interface hands out contiguous byte pointers (strval_bytes,
 * strval_resize), which a head + tail is not. A large value therefore gets
 * a contiguous *view* when one is asked for: the head and tail copied into
 * one buffer, valid until the value is changed or freed (the contract the
 * interface always had). strval_resize writes into the view and marks it
 * dirty; the view is the value then, until it is folded back into head and
 * tail (strval_end_command, or when the value is freed). Invariant: a
 * bigval without a dirty view has len >= ram_head, its head holds bytes
 * [0, ram_head) and its tail the rest.
 *
 * Invariant for ENC_INT: exactly the canonical decimal strings str_to_ll
 * accepts, so GET of an int round-trips. */
#include "strval.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/lzf.h"
#include "util/strutil.h"
#include "mem/objstore.h"
#include "mem/smallobj.h"
#include "mem/ssdtail.h"

typedef struct bigval {
    size_t len;
    objhead head;
    objtail tail;
    char *view;
    size_t viewcap;
    int dirty;
    int listed;
} bigval;

static uint64_t tail_read_errors, tail_write_errors;
static _Thread_local const char *io_failed;

const char *strval_io_error(void) { return io_failed; }
void strval_count_read_error(void) { __atomic_fetch_add(&tail_read_errors, 1, __ATOMIC_RELAXED); }

/* An embedded value is marked in flags (its u holds the record's first
 * bytes). A bigval pointer is malloc-aligned and tagged with bit 0; a
 * small value's word has bit 0 clear (handles are never 0, so the word
 * is not NULL). */
#define IS_EMB(o) (((o)->flags & OBJ_EMBEDDED) != 0)
#define EMB(o) obj_room(o)
#define IS_BIG(o) (!IS_EMB(o) && (((uintptr_t)(o)->u.p) & 1u) != 0)
#define BIG(o) ((bigval *)((uintptr_t)(o)->u.p & ~(uintptr_t)1))
_Static_assert(sizeof(void *) == 8, "a small value's word holds a handle and a length word");
#define SMALL_H(o) ((uint32_t)((uintptr_t)(o)->u.p >> 1) & 0x7fffffffu) /* its record's handle */
#define SMALL_LW(o) ((uint32_t)((uintptr_t)(o)->u.p >> 32))              /* its length word */
#define SMALL(o) smallobj_rec(SMALL_H(o)) /* an arena value's record */
/* Values up to this size are embedded in a new key's entry: beyond it the
 * allocator's size classes (a quarter of a power of two apart) waste more
 * than the arena's records and their handle cost. It is also what
 * the one-byte len and cap of an embedded record can hold. */
#define EMBED_MAX 254
/* An embedded record (see above): bytes 0 cap and 1 len (or EMB_COMP),
 * then the plain bytes and a NUL; a compressed one has bytes 2 rawlen and
 * 3 clen (EMB_CHDR bytes in all) before its LZF bytes. */
#define EMB_HDR 2
#define EMB_CHDR 4
#define EMB_COMP 255
_Static_assert(EMBED_MAX < EMB_COMP && EMBED_MAX <= 255, "an embedded len is one byte, EMB_COMP apart");
static size_t emb_cap(const unsigned char *e) { return e[0]; }
static size_t emb_room(const unsigned char *e) { return EMB_HDR + e[0] + 1; }
static int emb_is_comp(const unsigned char *e) { return e[1] == EMB_COMP; }
static size_t emb_len(const unsigned char *e) { return emb_is_comp(e) ? e[2] : e[1]; }
static char *emb_data(unsigned char *e) { return (char *)e + EMB_HDR; }
static const char *emb_cdata(const unsigned char *e) { return (const char *)e + EMB_CHDR; }
static size_t emb_clen(const unsigned char *e) { return e[3]; }
/* o (in its entry) is about to be written into its room, which then starts
 * at e (the key moves first: db.h); emb_leave: o's word is about to be
 * something else, the room's bytes are no longer needed. */
static void emb_enter(gobj *o, const unsigned char *e) {
    obj_room_enter(o);
    assert(e == EMB(o));
    (void)e;
}
static void emb_leave(gobj *o) { obj_room_leave(o); }

/* Compressed small values (see above). */
#define COMP_BIT 0x80000000u
#define COMP_MIN 32
#define COMP_MAX 4096
#define IS_COMP(lw) (((lw) & COMP_BIT) != 0)
#define COMP_RAWLEN(lw) ((lw) & 0xffffu)
#define COMP_CLEN(lw) (((lw) >> 16) & 0x7fffu)
static uint32_t comp_word(size_t clen, size_t n) { return COMP_BIT | (uint32_t)clen << 16 | (uint32_t)n; }
static size_t small_len(const gobj *o) {
    uint32_t lw = SMALL_LW(o);
    return IS_COMP(lw) ? COMP_RAWLEN(lw) : lw;
}

/* Scratch for decompressed values: bump-allocated, valid until the command
 * ends (strval_end_command) or strval_fold releases it. */
typedef struct scratch {
    struct scratch *next;
    size_t used, cap;
    char data[];
} scratch;
static _Thread_local scratch *scr;
static void tls_register(void);
static _Thread_local bigval **touched;
static _Thread_local size_t ntouched, captouched;
#define SCRATCH_BLOCK (16u * 1024)

static char *scratch_alloc(size_t n) {
    if (!scr || scr->cap - scr->used < n) {
        size_t cap = n > SCRATCH_BLOCK ? n : SCRATCH_BLOCK;
        scratch *b = malloc(sizeof(*b) + cap);
        if (!b) return NULL;
        tls_register();
        b->next = scr;
        b->used = 0;
        b->cap = cap;
        scr = b;
    }
    char *p = scr->data + scr->used;
    scr->used += n;
    return p;
}

/* Keep one standard block, drop the rest. */
static void scratch_reset(void) {
    while (scr && (scr->next || scr->cap != SCRATCH_BLOCK)) {
        scratch *n = scr->next;
        free(scr);
        scr = n;
    }
    if (scr) scr->used = 0;
}

static _Thread_local lzf_state *lzf_st;

/* The thread's scratch and compressor state go when the thread does. */
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static void tls_free(void *unused) {
    (void)unused;
    while (scr) {
        scratch *n = scr->next;
        free(scr);
        scr = n;
    }
    free(lzf_st);
    lzf_st = NULL;
    free(touched);
    touched = NULL;
    ntouched = captouched = 0;
}
static void tls_key_make(void) { pthread_key_create(&tls_key, tls_free); }
static void tls_register(void) {
    static _Thread_local int done;
    if (done) return;
    done = 1;
    pthread_once(&tls_once, tls_key_make);
    pthread_setspecific(tls_key, &done);
}

/* c[0..clen), the LZF form of n bytes, decompressed into out (+ NUL). */
static void inflate_into(const char *c, size_t clen, char *out, size_t n) {
    size_t got = lzf_decompress(c, clen, out, n);
    assert(got == n);
    (void)got;
    out[n] = '\0';
}

/* Decompressed bytes of a compressed arena value (+ NUL), in scratch. */
static char *small_inflate(const gobj *o) {
    uint32_t lw = SMALL_LW(o);
    char *b = scratch_alloc(COMP_RAWLEN(lw) + 1);
    if (b) inflate_into(SMALL(o)->data, COMP_CLEN(lw), b, COMP_RAWLEN(lw));
    return b;
}

/* The same for a compressed embedded record. */
static char *emb_inflate(const unsigned char *e) {
    char *b = scratch_alloc(emb_len(e) + 1);
    if (b) inflate_into(emb_cdata(e), emb_clen(e), b, emb_len(e));
    return b;
}

/* A compressed record of clen bytes pays only when it saves 16 bytes over
 * the plain one (and the reads through a scratch buffer that cost). */
static int comp_saves(size_t clen, size_t n) { return smallobj_size_for(clen) + 16 <= smallobj_size_for(n); }

/* A record holding p[0..n) (plain bytes or LZF): its handle, or
 * SMALLOBJ_NONE. */
static uint32_t small_put(const char *p, size_t n) {
    uint32_t h = smallobj_alloc(n);
    if (h != SMALLOBJ_NONE) memcpy(smallobj_rec(h)->data, p, n);
    return h;
}

/* The LZF form of p[0..n) in out (COMP_MAX bytes): its length, or 0 when
 * compressing does not make the record smaller. */
static size_t deflate_into(const char *p, size_t n, char *out) {
    /* Values that do not compress (random bytes, hex digests) cost a failed
     * attempt each: after failures, attempts thin out (every 2nd, 4th ...
     * up to every 64th value) until one succeeds. Per thread. */
    static _Thread_local unsigned skip_log, skipped;
    if (n < COMP_MIN || n >= COMP_MAX) return 0;
    if (skipped < (1u << skip_log) - 1) {
        skipped++;
        return 0;
    }
    skipped = 0;
    if (!lzf_st) {
        if (!(lzf_st = malloc(sizeof(*lzf_st)))) return 0;
        tls_register();
    }
    size_t cn = lzf_compress(lzf_st, p, n, out, n);
    if (!cn || !comp_saves(cn, n)) {
        if (skip_log < 6) skip_log++;
        return 0;
    }
    skip_log = 0;
    return cn;
}

/* o's value is now the arena record h with length word lw. */
static void set_small(gobj *o, uint32_t h, uint32_t lw) {
    assert(h != SMALLOBJ_NONE && h <= 0x7fffffffu);
    emb_leave(o);
    o->u.p = (void *)(uintptr_t)((uint64_t)lw << 32 | (uint64_t)h << 1);
}

/* o's value becomes a compressed record for p[0..n): 1, or 0 when
 * compressing does not make the record smaller (or no memory). */
static int small_deflate(gobj *o, const char *p, size_t n) {
    char out[COMP_MAX];
    size_t cn = deflate_into(p, n, out);
    uint32_t h = cn ? small_put(out, cn) : SMALLOBJ_NONE;
    if (h == SMALLOBJ_NONE) return 0;
    set_small(o, h, comp_word(cn, n));
    return 1;
}

/* The record of o goes (an embedded one belongs to its entry). */
static void small_release(gobj *o) {
    if (!IS_EMB(o)) smallobj_free(SMALL_H(o));
}

/* Views made during the current command on this thread (see
 * strval_end_command). Used only once the dispatcher calls the hook. */
static int scoped;

static void touch(bigval *b) {
    if (!scoped || b->listed) return;
    if (ntouched == captouched) {
        size_t nc = captouched ? captouched * 2 : 16;
        bigval **nt = realloc(touched, nc * sizeof(*nt));
        if (!nt) return;
        tls_register();
        touched = nt;
        captouched = nc;
    }
    touched[ntouched++] = b;
    b->listed = 1;
}

static void untouch(bigval *b) {
    if (!b->listed) return;
    for (size_t i = 0; i < ntouched; i++)
        if (touched[i] == b) {
            touched[i] = touched[--ntouched];
            break;
        }
    b->listed = 0;
}

void strval_set_int(gobj *o, int64_t v) {
    o->type = OBJ_STRING;
    o->enc = ENC_INT;
    emb_leave(o);
    o->u.i = v;
}

int strval_set(gobj *o, const char *p, size_t n) {
    long long v;
    o->type = OBJ_STRING;
    if (n <= 20 && str_to_ll(p, n, &v)) {
        strval_set_int(o, v);
        return 0;
    }
    return strval_set_str(o, p, n);
}

/* A new bigval holding p[0..n), n >= ram_head. NULL when the head pool is
 * full or the tail cannot be stored. */
static bigval *big_new(const char *p, size_t n) {
    size_t H = objstore_ram_head();
    bigval *b = calloc(1, sizeof(*b));
    if (!b) return NULL;
    if (objstore_head_alloc(&b->head) != 0) {
        free(b);
        return NULL;
    }
    memcpy(b->head.p, p, H);
    if (objstore_tail_write(&b->tail, p + H, n - H) != 0) {
        __atomic_fetch_add(&tail_write_errors, 1, __ATOMIC_RELAXED);
        io_failed = STRVAL_WRITE_ERR;
        objstore_head_free(&b->head);
        free(b);
        return NULL;
    }
    b->len = n;
    return b;
}

int strval_set_str(gobj *o, const char *p, size_t n) {
    io_failed = NULL;
    o->type = OBJ_STRING;
    o->enc = n <= STRVAL_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW;
    if (n < objstore_ram_head()) {
        if (small_deflate(o, p, n)) return 0;
        uint32_t h = small_put(p, n);
        if (h == SMALLOBJ_NONE) return -1;
        set_small(o, h, (uint32_t)n);
        return 0;
    }
    bigval *b = big_new(p, n);
    if (!b) return -1;
    emb_leave(o);
    o->u.p = (void *)((uintptr_t)b | 1u);
    return 0;
}

/* Fold a dirty view back into head and tail; drop the view. On a tail
 * write error the view stays (it is still the value) and -1 is returned. */
static int big_fold(bigval *b) {
    if (!b->view) return 0;
    if (b->dirty) {
        size_t H = objstore_ram_head();
        objtail nt;
        if (objstore_tail_write(&nt, b->view + H, b->len - H) != 0) {
            __atomic_fetch_add(&tail_write_errors, 1, __ATOMIC_RELAXED);
            return -1;
        }
        memcpy(b->head.p, b->view, H);
        objstore_tail_free(&b->tail);
        b->tail = nt;
        b->dirty = 0;
    }
    free(b->view);
    b->view = NULL;
    b->viewcap = 0;
    return 0;
}

/* The contiguous view of b with room for cap bytes (+ NUL). */
static char *big_view(bigval *b, size_t cap) {
    if (!b->view) {
        size_t H = objstore_ram_head();
        size_t vc = cap > b->len ? cap : b->len;
        b->view = malloc(vc + 1);
        if (!b->view) return NULL;
        b->viewcap = vc;
        memcpy(b->view, b->head.p, H);
        if (objstore_tail_read(&b->tail, b->view + H) != 0) {
            /* An I/O error: no view, the caller answers an error and the
             * value stays as it is (INFO objstore_tail_read_errors). */
            __atomic_fetch_add(&tail_read_errors, 1, __ATOMIC_RELAXED);
            io_failed = STRVAL_READ_ERR;
            free(b->view);
            b->view = NULL;
            b->viewcap = 0;
            return NULL;
        }
        b->view[b->len] = '\0';
    } else if (cap > b->viewcap) {
        size_t nc = cap < (1u << 20) ? cap * 2 : cap + (1u << 20);
        char *nv = realloc(b->view, nc + 1);
        if (!nv) return NULL;
        b->view = nv;
        b->viewcap = nc;
    }
    touch(b);
    return b->view;
}

const char *strval_bytes(const gobj *o, char *tmp, size_t *len) {
    assert(o->type == OBJ_STRING);
    if (o->enc == ENC_INT) {
        *len = (size_t)ll_to_str(tmp, STRUTIL_LLSTR, o->u.i);
        return tmp;
    }
    if (IS_EMB(o)) {
        unsigned char *e = EMB(o);
        *len = emb_len(e);
        return emb_is_comp(e) ? emb_inflate(e) : emb_data(e);
    }
    if (!IS_BIG(o)) {
        *len = small_len(o);
        return IS_COMP(SMALL_LW(o)) ? small_inflate(o) : SMALL(o)->data;
    }
    bigval *b = BIG(o);
    io_failed = NULL;
    const char *v = big_view(b, b->len);
    if (!v) return NULL;
    objstore_count_served(&b->head, objstore_ram_head());
    *len = b->len;
    return v;
}

int strval_lzf(const gobj *o, const char **c, size_t *clen, size_t *len) {
    if (o->type != OBJ_STRING || o->enc == ENC_INT || IS_BIG(o)) return 0;
    if (IS_EMB(o)) {
        const unsigned char *e = EMB(o);
        if (!emb_is_comp(e)) return 0;
        *c = emb_cdata(e);
        *clen = emb_clen(e);
        *len = emb_len(e);
        return 1;
    }
    uint32_t lw = SMALL_LW(o);
    if (!IS_COMP(lw)) return 0;
    *c = SMALL(o)->data;
    *clen = COMP_CLEN(lw);
    *len = COMP_RAWLEN(lw);
    return 1;
}

int strval_set_packed(gobj *o, const char *p, size_t n, const char *c, size_t clen) {
    o->type = OBJ_STRING;
    io_failed = NULL;
    /* n >= COMP_MIN: never one of the integers strval_set keeps inline. */
    if (n >= COMP_MIN && n < COMP_MAX && n < objstore_ram_head() && clen < n && comp_saves(clen, n)) {
        uint32_t h = small_put(c, clen);
        if (h == SMALLOBJ_NONE) return -1;
        o->enc = n <= STRVAL_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW;
        set_small(o, h, comp_word(clen, n));
        return 0;
    }
    return strval_set(o, p, n);
}

int strval_ram_parts(const gobj *o, const char **head, size_t *headlen, const char **tail, size_t *taillen) {
    if (o->type != OBJ_STRING || o->enc == ENC_INT || !IS_BIG(o)) return 0;
    bigval *b = BIG(o);
    if (b->view || (b->tail.len && !b->tail.ram)) return 0;
    objstore_count_served(&b->head, objstore_ram_head());
    *head = b->head.p;
    *headlen = objstore_ram_head();
    *tail = b->tail.ram;
    *taillen = b->tail.len;
    return 1;
}

int strval_stream_open(const gobj *o, const char **head, size_t *headlen, size_t *total,
                       struct ssdtail_stream **tail) {
    if (o->type != OBJ_STRING || o->enc == ENC_INT || !IS_BIG(o)) return 0;
    bigval *b = BIG(o);
    if (b->view || b->tail.ram || !b->tail.nchunks || !ssdtail_active()) return 0;
    ssdtail_stream *s = ssdtail_stream_open(b->tail.off, b->tail.len);
    if (!s) return 0;
    objstore_count_served(&b->head, objstore_ram_head());
    *head = b->head.p;
    *headlen = objstore_ram_head();
    *total = b->len;
    *tail = s;
    return 1;
}

size_t strval_len(const gobj *o) {
    if (o->enc == ENC_INT) {
        char tmp[STRUTIL_LLSTR];
        size_t n;
        strval_bytes(o, tmp, &n);
        return n;
    }
    if (IS_EMB(o)) return emb_len(EMB(o));
    return IS_BIG(o) ? BIG(o)->len : small_len(o);
}

int strval_get_int(const gobj *o, int64_t *v) {
    if (o->enc == ENC_INT) {
        *v = o->u.i;
        return 1;
    }
    if (IS_BIG(o)) return 0; /* at least ram_head (>= 4K) bytes */
    long long x;
    if (IS_EMB(o)) {
        unsigned char *e = EMB(o);
        if (emb_is_comp(e) || emb_len(e) > 20 || !str_to_ll(emb_data(e), emb_len(e), &x)) return 0;
        *v = x;
        return 1;
    }
    uint32_t lw = SMALL_LW(o);
    if (IS_COMP(lw) || lw > 20 || !str_to_ll(SMALL(o)->data, lw, &x)) return 0;
    *v = x;
    return 1;
}

/* A small or embedded value o of len bytes at src (in its own record)
 * grows to newlen bytes in a new place: an arena record with room to grow,
 * or a large value. The new bytes are zeros. NULL on no memory (o is
 * unchanged). */
static char *small_grow(gobj *o, const char *src, size_t len, size_t newlen) {
    size_t H = objstore_ram_head();
    if (newlen < H) {
        /* Room to grow like an append-heavy value needs, below the head;
         * a value written into for the first time (SETRANGE or SETBIT of a
         * new key) gets its length, as Redis allocates a new key's. */
        size_t cap = len == 0 ? newlen : newlen * 2 < H ? newlen * 2 : H - 1;
        uint32_t nh = smallobj_alloc(cap);
        if (nh == SMALLOBJ_NONE) return NULL;
        char *d = smallobj_rec(nh)->data;
        memcpy(d, src, len);
        memset(d + len, 0, newlen - len);
        small_release(o);
        set_small(o, nh, (uint32_t)newlen);
        o->enc = ENC_RAW;
        return d;
    }
    /* Becomes large: the head slot is taken now (so a full pool is an
     * error here), the bytes live in a dirty view until folded. */
    bigval *b = calloc(1, sizeof(*b));
    if (!b) return NULL;
    if (objstore_head_alloc(&b->head) != 0) {
        free(b);
        return NULL;
    }
    size_t vc = len == 0 ? newlen : newlen < (1u << 20) ? newlen * 2 : newlen + (1u << 20);
    b->view = malloc(vc + 1);
    if (!b->view) {
        objstore_head_free(&b->head);
        free(b);
        return NULL;
    }
    b->viewcap = vc;
    memcpy(b->view, src, len);
    memset(b->view + len, 0, newlen - len + 1);
    b->len = newlen;
    b->dirty = 1;
    small_release(o);
    emb_leave(o);
    o->u.p = (void *)((uintptr_t)b | 1u);
    o->enc = ENC_RAW;
    touch(b);
    return b->view;
}

char *strval_resize(gobj *o, size_t newlen) {
    io_failed = NULL;
    if (o->enc == ENC_INT) {
        char tmp[STRUTIL_LLSTR];
        size_t n;
        strval_bytes(o, tmp, &n);
        gobj t = *o;
        if (strval_set_str(&t, tmp, n) != 0) return NULL;
        *o = t;
    }
    if (IS_EMB(o)) {
        /* Stays in its room, plain, when newlen fits there. */
        unsigned char *e = EMB(o);
        size_t len = emb_len(e);
        const char *src = emb_is_comp(e) ? emb_inflate(e) : emb_data(e);
        if (!src) return NULL;
        assert(newlen >= len);
        if (newlen > emb_cap(e)) return small_grow(o, src, len, newlen);
        char *d = emb_data(e);
        if (src != d) memcpy(d, src, len); /* from the scratch */
        memset(d + len, 0, newlen - len + 1);
        e[1] = (unsigned char)newlen;
        o->enc = ENC_RAW;
        return d;
    }
    if (!IS_BIG(o) && IS_COMP(SMALL_LW(o))) {
        /* Written to: back to a plain record first. */
        size_t n = small_len(o);
        char *raw = small_inflate(o);
        uint32_t h = raw ? small_put(raw, n) : SMALLOBJ_NONE;
        if (h == SMALLOBJ_NONE) return NULL;
        small_release(o);
        set_small(o, h, (uint32_t)n);
    }
    if (!IS_BIG(o)) {
        smallrec *r = SMALL(o);
        size_t len = small_len(o);
        assert(newlen >= len);
        if (newlen <= smallobj_cap(r)) {
            memset(r->data + len, 0, newlen - len);
            set_small(o, SMALL_H(o), (uint32_t)newlen);
            o->enc = ENC_RAW;
            return r->data;
        }
        return small_grow(o, r->data, len, newlen);
    }
    bigval *b = BIG(o);
    assert(newlen >= b->len);
    char *v = big_view(b, newlen);
    if (!v) return NULL;
    memset(v + b->len, 0, newlen - b->len + 1);
    b->len = newlen;
    b->dirty = 1;
    o->enc = ENC_RAW;
    return v;
}

void strval_free(gobj *o) {
    if (o->enc != ENC_INT && o->u.p) {
        if (IS_BIG(o)) {
            bigval *b = BIG(o);
            untouch(b);
            free(b->view);
            objstore_tail_free(&b->tail);
            objstore_head_free(&b->head);
            free(b);
        } else {
            small_release(o);
        }
    }
    emb_leave(o);
    o->u.p = NULL;
}

int strval_dup(gobj *dst, const gobj *src) {
    *dst = *src;
    if (src->enc == ENC_INT) return 0;
    char tmp[STRUTIL_LLSTR];
    size_t n;
    const char *p = strval_bytes(src, tmp, &n);
    if (!p) return -1;
    gobj t = *src;
    t.flags &= (uint16_t)~OBJ_EMBEDDED; /* a copy: no room, no key behind it */
    if (strval_set_str(&t, p, n) != 0) return -1;
    t.enc = src->enc;
    *dst = t;
    return 0;
}

size_t strval_mem_usage(const gobj *o) {
    if (o->enc == ENC_INT) return 0;
    if (IS_EMB(o)) return 0; /* in its entry's allocation (db_entry_size) */
    if (!IS_BIG(o)) return smallobj_record_size(SMALL(o)) + SMALLOBJ_CELL_BYTES;
    const bigval *b = BIG(o);
    size_t n = sizeof(*b) + objstore_ram_head() + b->viewcap;
    if (b->tail.ram) n += b->tail.len;
    return n;
}

void strval_set_command_scoped(int on) { scoped = on; }

void strval_end_command(void) {
    scratch_reset();
    for (size_t i = 0; i < ntouched; i++) {
        touched[i]->listed = 0;
        big_fold(touched[i]);
    }
    ntouched = 0;
}

int strval_fold(gobj *o) {
    scratch_reset();
    if (o->type != OBJ_STRING || o->enc == ENC_INT || !IS_BIG(o)) return 0;
    bigval *b = BIG(o);
    untouch(b);
    return big_fold(b);
}

int strval_pressure(size_t request) {
    size_t rec = request < objstore_ram_head() ? smallobj_size_for(request) : 0;
    return (objstore_heads_exhausted() ? STRVAL_PRESSURE_HEADS : 0) |
           (smallobj_exhausted(64 * 1024, rec) ? STRVAL_PRESSURE_SMALL : 0);
}

int strval_pressure_relieves(const gobj *o, int bits) {
    if (o->type != OBJ_STRING || o->enc == ENC_INT) return 0;
    if (IS_EMB(o)) return 0; /* in its entry, not in either pool */
    if (!o->u.p) return 0;
    return IS_BIG(o) ? (bits & STRVAL_PRESSURE_HEADS) != 0 : (bits & STRVAL_PRESSURE_SMALL) != 0;
}

void strval_stats(uint64_t *read_errors, uint64_t *write_errors) {
    *read_errors = __atomic_load_n(&tail_read_errors, __ATOMIC_RELAXED);
    *write_errors = tail_write_errors;
}

/* ---- Values embedded in their entry ------------------------------------ */

/* The LZF form strval_embed_size made, for strval_set_embedded to use. */
static _Thread_local struct {
    const char *p;
    size_t n, clen;
    char c[COMP_MAX];
} emb_plan;

/* Where the user placed small values, they stay: a fixed small-object
 * pool (--small-memory: its node, its capacity) or the far node of
 * --perverse (remote placement on purpose). */
static int embed_allowed(void) { return !objstore_cfg.small_memory && !objstore_cfg.perverse; }

/* Bytes of an embedded record holding n bytes, or their LZF form of clen
 * bytes when clen (no NUL then). */
static size_t emb_size(size_t n, size_t clen) { return clen ? EMB_CHDR + clen : EMB_HDR + n + 1; }
/* The LZF form (clen bytes, 0: none) of an n-byte value, if it is to be
 * embedded compressed: when smaller than the plain form (which also makes
 * clen and n fit their header bytes); else 0. */
static size_t emb_clen_kept(size_t n, size_t clen) {
    return clen && n <= EMBED_MAX && emb_size(n, clen) < emb_size(n, 0) ? clen : 0;
}

size_t strval_embed_size(const char *p, size_t n) {
    long long v;
    io_failed = NULL; /* a store starts here (db_set_string): no error yet */
    emb_plan.p = NULL;
    if (n > EMBED_MAX || n >= objstore_ram_head() || !embed_allowed() || (n <= 20 && str_to_ll(p, n, &v))) return 0;
    size_t cn = emb_clen_kept(n, deflate_into(p, n, emb_plan.c));
    emb_plan.p = p;
    emb_plan.n = n;
    emb_plan.clen = cn;
    return emb_size(n, cn);
}

/* Writes the embedded record e of room bytes in all (EMB_HDR + 1 up to
 * EMB_HDR + EMBED_MAX + 1): p[0..n), or its LZF form c[0..clen) when
 * clen (p may be NULL then). Byte by byte: e has any alignment. */
static void emb_write(unsigned char *e, size_t room, const char *p, size_t n, const char *c, size_t clen) {
    assert(room >= EMB_HDR + 1 && room <= EMB_HDR + EMBED_MAX + 1 && n <= EMBED_MAX);
    e[0] = (unsigned char)(room - EMB_HDR - 1);
    if (clen) {
        assert(EMB_CHDR + clen <= room);
        e[1] = EMB_COMP;
        e[2] = (unsigned char)n;
        e[3] = (unsigned char)clen;
        memcpy(e + EMB_CHDR, c, clen);
    } else {
        assert(EMB_HDR + n + 1 <= room);
        e[1] = (unsigned char)n;
        memcpy(e + EMB_HDR, p, n);
        e[EMB_HDR + n] = '\0';
    }
}

void strval_set_embedded(gobj *o, void *room, const char *p, size_t n) {
    assert(emb_plan.p == p && emb_plan.n == n);
    unsigned char *e = room;
    if (!(o->flags & OBJ_EMBEDDED)) emb_enter(o, e); /* db_add_room has the key in place */
    assert(e == EMB(o));
    emb_write(e, emb_size(n, emb_plan.clen), p, n, emb_plan.c, emb_plan.clen);
    emb_plan.p = NULL;
    o->type = OBJ_STRING;
    o->enc = n <= STRVAL_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW;
}

int strval_set_in_place(gobj *o, const char *p, size_t n) {
    long long v;
    if (o->type != OBJ_STRING || o->enc == ENC_INT || !IS_EMB(o)) return 0;
    if (n > EMBED_MAX) return 0;
    if (n <= 20 && str_to_ll(p, n, &v)) return 0; /* kept as an integer */
    unsigned char *e = EMB(o);
    size_t room = emb_room(e);
    char c[COMP_MAX];
    size_t cn = emb_clen_kept(n, deflate_into(p, n, c));
    if (emb_size(n, cn) > room) return 0;
    emb_write(e, room, p, n, c, cn);
    o->enc = n <= STRVAL_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW;
    return 1;
}

int strval_is_embedded(const gobj *o) { return o->type == OBJ_STRING && o->enc != ENC_INT && IS_EMB(o); }

int strval_unembed(gobj *o) {
    if (!strval_is_embedded(o)) return 0;
    const unsigned char *e = EMB(o);
    size_t n = emb_len(e);
    /* Kept compressed: deflate_into found it worth it in the arena. */
    int comp = emb_is_comp(e);
    uint32_t h = comp ? small_put(emb_cdata(e), emb_clen(e)) : small_put((const char *)e + EMB_HDR, n);
    if (h == SMALLOBJ_NONE) return -1;
    set_small(o, h, comp ? comp_word(emb_clen(e), n) : (uint32_t)n);
    return 0;
}

size_t strval_embed_size_of(const gobj *o) {
    if (o->type != OBJ_STRING || o->enc == ENC_INT || IS_BIG(o) || IS_EMB(o) || !embed_allowed()) return 0;
    uint32_t lw = SMALL_LW(o);
    size_t n = small_len(o);
    if (n > EMBED_MAX) return 0;
    return emb_size(n, emb_clen_kept(n, IS_COMP(lw) ? COMP_CLEN(lw) : 0));
}

void strval_embed(gobj *o, void *room) {
    size_t need = strval_embed_size_of(o);
    assert(need);
    uint32_t h = SMALL_H(o), lw = SMALL_LW(o);
    const smallrec *r = smallobj_rec(h);
    unsigned char *e = room;
    size_t n = small_len(o);
    emb_enter(o, e); /* the key goes over u, read above */
    if (!IS_COMP(lw)) {
        emb_write(e, need, r->data, n, NULL, 0);
    } else if (emb_clen_kept(n, COMP_CLEN(lw))) {
        emb_write(e, need, NULL, n, r->data, COMP_CLEN(lw));
    } else {
        /* Its LZF form would not be smaller embedded: plain. */
        e[0] = (unsigned char)(need - EMB_HDR - 1);
        e[1] = (unsigned char)n;
        inflate_into(r->data, COMP_CLEN(lw), emb_data(e), n);
    }
    smallobj_free(h);
}

size_t strval_embedded_room(const gobj *o) { return strval_is_embedded(o) ? emb_room(EMB(o)) : 0; }
