/* digest.c -- the DEBUG DIGEST signatures (see digest.h for the two folds).
 *
 * Per value type, what is folded after the type:
 *   string  mix of its bytes (an integer as its decimal text);
 *   list    mix of every element, head to tail;
 *   set     xor of every member (an intset's as decimal text);
 *   zset    xor, per element, of a signature (20 bytes) started at zero
 *           that mixes the member and then the score as "%.17g" text;
 *   hash    xor, per pair, of a signature started at zero that mixes the
 *           field and then the value;
 *   stream  mix, per entry in ID order, of its ID as "ms.seq" and then of
 *           each field and value (groups are not part of it, as in Redis).
 * The dataset: for each non-empty database in id order, mix its id (4
 * bytes, big endian) into the result, then xor in each key's signature
 * (20 bytes): a zero start, a mix of the key name, then the value's as
 * above. An element's or a key's signature is itself a piece: what is
 * xored is its SHA-1, as for any other piece. Every
 * element is read through its structure's iterator, so the encoding of a
 * value (intset or table, packed or skiplist) never changes its signature.
 * Invariant: nothing here modifies a value; the only side effect is that a
 * large string's contiguous view, if one was built to read it, is folded
 * away at once (as the RDB writer does). */
#include "db/digest.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "db/strval.h"
#include "ds/hash.h"
#include "ds/list.h"
#include "ds/set.h"
#include "ds/stream.h"
#include "ds/zset.h"
#include "util/sha1.h"
#include "util/strutil.h"

static void fold_xor_hash(unsigned char d[DIGEST_BYTES], const unsigned char h[DIGEST_BYTES]) {
    for (int i = 0; i < DIGEST_BYTES; i++) d[i] ^= h[i];
}

/* d = SHA1(d ^ h), h being the SHA-1 of the piece. */
static void fold_mix_hash(unsigned char d[DIGEST_BYTES], const unsigned char h[DIGEST_BYTES]) {
    sha1_ctx c;
    fold_xor_hash(d, h);
    sha1_init(&c);
    sha1_update(&c, d, DIGEST_BYTES);
    sha1_final(&c, d);
}

static void piece_hash(const void *p, size_t n, unsigned char h[DIGEST_BYTES]) {
    sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, p, n);
    sha1_final(&c, h);
}

static void fold_xor(unsigned char d[DIGEST_BYTES], const void *p, size_t n) {
    unsigned char h[DIGEST_BYTES];
    piece_hash(p, n, h);
    fold_xor_hash(d, h);
}

static void fold_mix(unsigned char d[DIGEST_BYTES], const void *p, size_t n) {
    unsigned char h[DIGEST_BYTES];
    piece_hash(p, n, h);
    fold_mix_hash(d, h);
}

/* A 32-bit number as 4 big-endian bytes (type codes, database ids). */
static void fold_mix_u32(unsigned char d[DIGEST_BYTES], uint32_t v) {
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    fold_mix(d, b, sizeof(b));
}

/* A string value: hashed from its two parts when they are both in RAM (no
 * copy), otherwise from the contiguous bytes strval_bytes gives. */
static int string_mix(unsigned char d[DIGEST_BYTES], const gobj *o) {
    unsigned char h[DIGEST_BYTES];
    const char *head, *tail;
    size_t headlen, taillen;
    if (o->enc != ENC_INT && strval_ram_parts(o, &head, &headlen, &tail, &taillen)) {
        sha1_ctx c;
        sha1_init(&c);
        sha1_update(&c, head, headlen);
        if (taillen) sha1_update(&c, tail, taillen);
        sha1_final(&c, h);
    } else {
        char tmp[STRUTIL_LLSTR];
        size_t n;
        const char *p = strval_bytes(o, tmp, &n);
        if (!p) return -1;
        piece_hash(p, n, h);
        /* Drop a large value's view (or the scratch of a compressed one)
         * now rather than at the end of the command: a digest reads every
         * string of the dataset. The view is clean, so this only frees. */
        if (o->enc != ENC_INT) strval_fold((gobj *)o);
    }
    fold_mix_hash(d, h);
    return 0;
}

static void list_mix(unsigned char d[DIGEST_BYTES], const gobj *o) {
    list_iter it;
    list_elem e;
    list_iter_init(&it, o->u.p, 0, LIST_TAIL);
    while (list_iter_next(&it, &e)) {
        char buf[STRUTIL_LLSTR];
        size_t n;
        const char *p = list_elem_text(&e, buf, &n);
        fold_mix(d, p, n);
    }
    list_iter_release(&it);
}

static void set_xor(unsigned char d[DIGEST_BYTES], const gobj *o) {
    set_iter it;
    set_elem e;
    set_iter_init(&it, o->u.p);
    while (set_iter_next(&it, &e)) fold_xor(d, e.p, e.n);
    set_iter_done(&it);
}

static void zset_xor(unsigned char d[DIGEST_BYTES], const gobj *o) {
    zset_iter it;
    const char *m;
    size_t n;
    double score;
    zset_iter_init(&it, o->u.p, 0, 0);
    while (zset_iter_next(&it, &m, &n, &score)) {
        unsigned char el[DIGEST_BYTES] = {0};
        char buf[64];
        int bl = snprintf(buf, sizeof(buf), "%.17g", score);
        assert(bl > 0 && (size_t)bl < sizeof(buf));
        fold_mix(el, m, n);
        fold_mix(el, buf, (size_t)bl);
        fold_xor(d, el, DIGEST_BYTES);
    }
}

static void hash_xor(unsigned char d[DIGEST_BYTES], const gobj *o) {
    hash_iter it;
    const char *f, *v;
    size_t fl, vl;
    hash_iter_init(&it, o->u.p);
    while (hash_iter_next(&it, &f, &fl, &v, &vl)) {
        unsigned char el[DIGEST_BYTES] = {0};
        fold_mix(el, f, fl);
        fold_mix(el, v, vl);
        fold_xor(d, el, DIGEST_BYTES);
    }
    hash_iter_done(&it);
}

static void stream_mix(unsigned char d[DIGEST_BYTES], const gobj *o) {
    stream_iter it;
    stream_id id;
    size_t nf;
    stream_iter_init(&it, o->u.p, NULL, NULL, 0);
    while (stream_iter_next(&it, &id, &nf)) {
        char buf[48];
        int bl = snprintf(buf, sizeof(buf), "%llu.%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
        fold_mix(d, buf, (size_t)bl);
        for (size_t i = 0; i < nf; i++) {
            stream_str f, v;
            stream_iter_field(&it, &f, &v);
            fold_mix(d, f.p, f.n);
            fold_mix(d, v.p, v.n);
        }
    }
    stream_iter_done(&it);
}

int digest_entry(const dbentry *e, unsigned char d[DIGEST_BYTES]) {
    const gobj *o = &e->val;
    if (o->type == OBJ_NONE) return 0; /* a key being created: no value yet */
    fold_mix_u32(d, o->type);
    switch (o->type) {
    case OBJ_STRING:
        if (string_mix(d, o) != 0) return -1;
        break;
    case OBJ_LIST: list_mix(d, o); break;
    case OBJ_SET: set_xor(d, o); break;
    case OBJ_ZSET: zset_xor(d, o); break;
    case OBJ_HASH: hash_xor(d, o); break;
    case OBJ_STREAM: stream_mix(d, o); break;
    default: assert(!"unknown value type"); break;
    }
    if (db_entry_expire(e) != -1) fold_xor(d, "!!expire!!", 10);
    return 0;
}

int digest_dataset(unsigned char out[DIGEST_BYTES]) {
    assert(db_keyspace_write_held());
    memset(out, 0, DIGEST_BYTES);
    for (int id = 0; id < db_count(); id++) {
        gdb *db = db_get(id);
        if (!db_size(db)) continue;
        fold_mix_u32(out, (uint32_t)id);
        for (unsigned s = 0; s < DB_NSHARDS; s++) {
            swiss_iter it;
            void *slot;
            int rc = 0;
            swiss_iter_init(&it, &db->shards[s].keys);
            while (rc == 0 && (slot = swiss_iter_next(&it))) {
                const dbentry *e = db_index_entry(&db->shards[s].keys, slot);
                if (e->val.type == OBJ_NONE) continue;
                unsigned char kd[DIGEST_BYTES] = {0};
                fold_mix(kd, db_entry_key(e), db_entry_klen(e));
                rc = digest_entry(e, kd);
                fold_xor(out, kd, DIGEST_BYTES);
            }
            swiss_iter_done(&it);
            if (rc != 0) return -1;
        }
    }
    return 0;
}

void digest_hex(const unsigned char d[DIGEST_BYTES], char out[DIGEST_HEX]) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < DIGEST_BYTES; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * DIGEST_BYTES] = '\0';
}
