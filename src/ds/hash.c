/* hash.c -- the hash type's two forms: a packed block and an arena + index.
 *
 * Why two forms. Most hashes are small (a user record, a few counters): for
 * them any index costs more than it saves, so a small hash is one packed
 * block of entries searched linearly, like Redis's listpack. Big hashes need
 * O(1) lookups and must not pay a pointer, an allocation header and an
 * allocator size class per field (what makes Redis spend ~86 B on a field of
 * 20 B): their pairs are appended to the hash's own chunked arena and a swiss
 * table of 4-byte arena references indexes them, so a field costs its bytes,
 * a 1-byte header (3+ for a field over 14 bytes or a value over 16) and
 * about 5-10 bytes of index.
 *
 * Small form. One block: a 1-byte pair count (saturating at 255, past
 * which it is counted by walking), the entries, and an 0xFF end byte. An
 * entry is a header byte, an optional id byte or length varints, the field
 * (unless interned) and the value. The header's high nibble is the field's
 * length (0..12), or 13: an id byte follows naming an interned field (see
 * "interned field names": a name frequent across hashes is stored once for
 * the process), or 14: the field's length follows as LEB128; the low
 * nibble is the value's length (0..14), or 15: it follows as LEB128. A
 * short pair thus costs one byte of overhead where a listpack spends four,
 * and a record field such as "name" costs one byte instead of four or more.
 * Entries keep insertion order; an overwrite rewrites the entry in place
 * (shifting the tail when its size changes), a delete closes the gap, and
 * the block is resized to the exact size after every change. Blocks of up
 * to SLAB_MAX bytes live in slab slots of 8-byte size classes (mem/slab.c),
 * so a block wastes at most 7 bytes; bigger ones are malloc'd.
 *
 * The form is the low bit of the hash pointer (1: large), so a small hash
 * spends no byte on it; bit 1 marks a small block in a slab slot.
 *
 * Large form (ds/lform.c). Every pair is one arena_pair entry, keyed by
 * its field; the swiss table's slot is the pair's arena_ref, so the index
 * stores no hashes and no pointers. An overwrite with a value of the same
 * length rewrites the bytes in place; any other overwrite appends a new
 * pair, re-points the slot and frees the old pair (dead bytes). After every
 * write the large form's maintenance (lf_maintain) runs a bounded
 * compaction step when the arena wants one.
 *
 * Conversion. hash_set() keeps the small form while, after the write,
 * count <= max_entries, the written field and value are <= max_value and the
 * block stays under HASH_SMALL_MAX_BYTES; otherwise it converts first (or
 * right after, for the count). There is no large -> small conversion.
 *
 * Invariants (hash_check). Small: walking from the header to the end byte
 * finds well-formed entries (no high nibble 15, ids of interned names) with
 * distinct fields, as many as the count says (at least 255 when it is
 * saturated), inside the allocation. Large: the
 * index holds exactly the arena's live entries, one slot each, every field
 * distinct and found by its own hash. */
#include "util/varint.h"
#include "ds/hash.h"

#include <assert.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ds/lform.h"
#include "mem/slab.h"
#include "util/hashfn.h"

/* struct hash is never defined: a hash * is either a small block or a
 * tagged pointer to an lform (the large form). */

_Static_assert(HASH_ENOMEM == LF_ENOMEM && HASH_EFULL == LF_EFULL, "hash error codes are lform's");

#define LARGE_TAG ((uintptr_t)1)

static inline int is_large(const hash *h) { return ((uintptr_t)h & LARGE_TAG) != 0; }
static inline lform *as_large(const hash *h) { return (lform *)((uintptr_t)h & ~LARGE_TAG); }
static inline hash *tag_large(lform *l) { return (hash *)((uintptr_t)l | LARGE_TAG); }
/* Bit 1 of a small hash's pointer marks a block in a slab slot (slab slots
 * are 8-byte aligned, malloc's 16). */
#define SLAB_TAG ((uintptr_t)2)
static inline unsigned char *as_small(const hash *h) { return (unsigned char *)((uintptr_t)h & ~SLAB_TAG); }

/* ---- interned field names ----
 *
 * Hashes used as records repeat the same field names in every key. A name
 * of INTERN_MINLEN..INTERN_MAXLEN bytes that is frequent among the new
 * fields of small hashes gets an id; the small form then stores the one id
 * byte instead of the name. Frequency is estimated as in TinyLFU: a
 * count-min sketch (intern_seen, two counters per name, the smaller one
 * counts) that is halved every INTERN_PERIOD inserts, so a name is interned
 * once its estimate reaches INTERN_AFTER, which takes about INTERN_AFTER / 2
 * uses per period (~0.1% of new fields); names that each occur rarely
 * (random or numbered field names) stay under it however many there are,
 * and do not use up the ids. At most
 * INTERN_MAX names, never removed or changed: ids and the bytes they name
 * are immortal, so field pointers into the table stay valid forever.
 * Writers take intern_lock; readers find ids without it (the name is
 * written before the lookup slot that publishes it, with release/acquire),
 * and a reader that meets an id in a block was synchronised with the
 * writer of that block (the shard lock), which saw the name published. */

#define INTERN_MAX 255
#define INTERN_MINLEN 2 /* a 1-byte name costs no more than its id */
#define INTERN_MAXLEN 32
#define INTERN_SLOTS 1024 /* lookup table, power of two, load <= 1/4 */
#define INTERN_SEEN 4096
#define INTERN_AFTER 16
#define INTERN_PERIOD 8192

static char intern_name[INTERN_MAX][INTERN_MAXLEN];
static uint8_t intern_len[INTERN_MAX];
static _Atomic uint16_t intern_slot[INTERN_SLOTS]; /* 0 free, else id + 1 */
static _Atomic uint8_t intern_seen[INTERN_SEEN];
static _Atomic unsigned intern_count;
static _Atomic unsigned intern_ticks;
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

static int intern_find(const void *f, size_t fl, uint64_t hv) {
    for (size_t i = (size_t)hv & (INTERN_SLOTS - 1);; i = (i + 1) & (INTERN_SLOTS - 1)) {
        unsigned v = atomic_load_explicit(&intern_slot[i], memory_order_acquire);
        if (!v) return -1;
        if (intern_len[v - 1] == fl && memcmp(intern_name[v - 1], f, fl) == 0) return (int)(v - 1);
    }
}

/* The id of name f, or -1. add: this is an insert of a new field, which
 * counts towards interning the name. */
static int intern_id(const void *f, size_t fl, int add) {
    if (fl < INTERN_MINLEN || fl > INTERN_MAXLEN) return -1;
    if (!add && atomic_load_explicit(&intern_count, memory_order_relaxed) == 0) return -1;
    uint64_t hv = hash_bytes(f, fl);
    int id = intern_find(f, fl, hv);
    if (id >= 0 || !add || atomic_load_explicit(&intern_count, memory_order_relaxed) >= INTERN_MAX) return id;
    /* The sketch is approximate by design: racing updates may lose a
     * count, never corrupt anything. */
    if ((atomic_fetch_add_explicit(&intern_ticks, 1, memory_order_relaxed) + 1) % INTERN_PERIOD == 0) {
        for (size_t i = 0; i < INTERN_SEEN; i++)
            atomic_store_explicit(&intern_seen[i], (uint8_t)(atomic_load_explicit(&intern_seen[i], memory_order_relaxed) >> 1),
                                  memory_order_relaxed);
    }
    _Atomic uint8_t *c1 = &intern_seen[(hv >> 20) & (INTERN_SEEN - 1)];
    _Atomic uint8_t *c2 = &intern_seen[(hv >> 40) & (INTERN_SEEN - 1)];
    unsigned a = atomic_load_explicit(c1, memory_order_relaxed), b = atomic_load_explicit(c2, memory_order_relaxed);
    if (a < 255) atomic_store_explicit(c1, (uint8_t)(a + 1), memory_order_relaxed);
    if (b < 255) atomic_store_explicit(c2, (uint8_t)(b + 1), memory_order_relaxed);
    if ((a < b ? a : b) + 1 < INTERN_AFTER) return -1;
    pthread_mutex_lock(&intern_lock);
    id = intern_find(f, fl, hv);
    unsigned n = atomic_load_explicit(&intern_count, memory_order_relaxed);
    if (id < 0 && n < INTERN_MAX) {
        id = (int)n;
        memcpy(intern_name[n], f, fl);
        intern_len[n] = (uint8_t)fl;
        size_t i = (size_t)hv & (INTERN_SLOTS - 1);
        while (atomic_load_explicit(&intern_slot[i], memory_order_relaxed)) i = (i + 1) & (INTERN_SLOTS - 1);
        atomic_store_explicit(&intern_slot[i], (uint16_t)(n + 1), memory_order_release);
        atomic_store_explicit(&intern_count, n + 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&intern_lock);
    return id;
}

/* ---- small form ---- */

#define SMALL_HDR 1           /* the pair count, saturating */
#define SMALL_END 0xFF        /* end byte, never an entry header */
#define SMALL_COUNT_SAT 0xFF
#define FL_INLINE_MAX 12      /* header high nibble 0..12: the field's length */
#define FL_INTERNED 13        /* high nibble 13: an id byte names the field */
#define FL_LONG 14            /* high nibble 14: the field's length follows */
#define VL_INLINE_MAX 14      /* low nibble 0..14: the value's length, 15: it follows */

/* Entry header: [h][id | varint field length][varint value length]. */
static inline size_t ent_hdr_len(size_t fl, size_t vl, int id) {
    size_t n = 1;
    if (id >= 0) n++;
    else if (fl > FL_INLINE_MAX) n += varint_size(fl);
    if (vl > VL_INLINE_MAX) n += varint_size(vl);
    return n;
}

static inline size_t ent_size(size_t fl, size_t vl, int id) { return ent_hdr_len(fl, vl, id) + (id >= 0 ? 0 : fl) + vl; }

static inline size_t ent_put(unsigned char *p, const void *f, size_t fl, const void *v, size_t vl, int id) {
    unsigned a = id >= 0 ? FL_INTERNED : fl <= FL_INLINE_MAX ? (unsigned)fl : FL_LONG;
    unsigned b = vl <= VL_INLINE_MAX ? (unsigned)vl : 15;
    size_t n = 1;
    p[0] = (unsigned char)(a << 4 | b);
    if (id >= 0) p[n++] = (unsigned char)id;
    else if (a == FL_LONG) n += varint_put(p + n, fl);
    if (b == 15) n += varint_put(p + n, vl);
    if (id < 0 && fl) {
        memcpy(p + n, f, fl);
        n += fl;
    }
    if (vl) memcpy(p + n, v, vl);
    return n + vl;
}

/* Decode the entry at offset pos (not the end byte); returns the offset of
 * the next one. */
static inline size_t small_entry(const unsigned char *s, size_t pos, const char **f, size_t *flen, const char **v,
                                 size_t *vlen) {
    const unsigned char *p = s + pos;
    unsigned h = *p++;
    unsigned a = h >> 4, b = h & 0x0F;
    size_t fl = a, vl = b;
    int id = -1;
    if (a == FL_INTERNED) id = *p++;
    else if (a > FL_INLINE_MAX) p += varint_get(p, &fl);
    if (b > VL_INLINE_MAX) p += varint_get(p, &vl);
    if (id >= 0) {
        *f = intern_name[id];
        fl = intern_len[id];
    } else {
        *f = (const char *)p;
        p += fl;
    }
    *flen = fl;
    *vlen = vl;
    *v = (const char *)p;
    return (size_t)(p - s) + vl;
}

static inline size_t small_count_raw(const unsigned char *s) { return s[0]; }

static inline void small_count_store(unsigned char *s, size_t n) {
    s[0] = (unsigned char)(n > SMALL_COUNT_SAT ? SMALL_COUNT_SAT : n);
}

/* Offset of the end byte. */
static size_t small_end(const unsigned char *s, size_t from) {
    size_t pos = from;
    while (s[pos] != SMALL_END) {
        const char *f, *v;
        size_t fl, vl;
        pos = small_entry(s, pos, &f, &fl, &v, &vl);
    }
    return pos;
}

static size_t small_count(const unsigned char *s) {
    size_t n = small_count_raw(s);
    if (n < SMALL_COUNT_SAT) return n;
    n = 0;
    for (size_t pos = SMALL_HDR; s[pos] != SMALL_END; n++) {
        const char *f, *v;
        size_t fl, vl;
        pos = small_entry(s, pos, &f, &fl, &v, &vl);
    }
    return n;
}

/* Offset of field's entry (with *next the offset after it, *vp and *vlen its
 * value), or (size_t)-1 with *next the offset of the end byte and *count
 * (when asked for) the number of entries. */
static size_t small_find_n(const unsigned char *s, const void *f, size_t flen, const char **vp, size_t *vlen,
                           size_t *next, size_t *count) {
    size_t pos = SMALL_HDR, n = 0;
    for (; s[pos] != SMALL_END; n++) {
        const char *ef, *ev;
        size_t fl, vl;
        size_t nx = small_entry(s, pos, &ef, &fl, &ev, &vl);
        if (fl == flen && (flen == 0 || memcmp(ef, f, flen) == 0)) {
            if (vp) *vp = ev;
            if (vlen) *vlen = vl;
            if (next) *next = nx;
            return pos;
        }
        pos = nx;
    }
    if (next) *next = pos;
    if (count) *count = n;
    return (size_t)-1;
}

static inline size_t small_find(const unsigned char *s, const void *f, size_t flen, const char **vp, size_t *vlen,
                                size_t *next) {
    return small_find_n(s, f, flen, vp, vlen, next, NULL);
}

/* The small block behind h: in a slab slot (SLAB_TAG) or malloc'd. */
static inline int blk_in_slab(const hash *h) { return ((uintptr_t)h & SLAB_TAG) != 0; }

static inline size_t blk_cap(const hash *h) {
    const unsigned char *s = as_small(h);
    return blk_in_slab(h) ? slab_size(s) : malloc_usable_size((void *)s);
}

static void blk_free(hash *h) {
    unsigned char *s = as_small(h);
    if (blk_in_slab(h)) slab_free(s);
    else free(s);
}

/* A new block of exactly n bytes (its size class), as a hash pointer. */
static hash *blk_new(size_t n) {
    if (n <= SLAB_MAX) {
        void *p = slab_alloc(n);
        return p ? (hash *)((uintptr_t)p | SLAB_TAG) : NULL;
    }
    return malloc(n);
}

/* Resize the block of *hp to n bytes, keeping its first keep bytes; *hp is
 * replaced. Returns the new block, or NULL (out of memory; *hp unchanged). */
static unsigned char *blk_resize(hash **hp, size_t keep, size_t n) {
    hash *h = *hp;
    unsigned char *s = as_small(h);
    if (keep > n) keep = n;
    if (!blk_in_slab(h) && n > SLAB_MAX) {
        unsigned char *ns = realloc(s, n);
        if (!ns) return NULL;
        *hp = (hash *)ns;
        return ns;
    }
    if (blk_in_slab(h) && n <= SLAB_MAX && slab_class_size(n) == slab_size(s)) return s;
    hash *nh = blk_new(n);
    if (!nh) return NULL;
    unsigned char *ns = as_small(nh);
    memcpy(ns, s, keep);
    blk_free(h);
    *hp = nh;
    return ns;
}

/* ---- large form ---- */

/* Pair entries of a pair arena (header, field, value), keyed by the field. */
static const lf_type hl_type = LF_TYPE(0, 1, NULL);

static inline void hl_pair(const lform *l, arena_ref r, const char **f, size_t *flen, const char **v,
                           size_t *vlen) {
    const void *fp, *vp;
    arena_pair_get(&l->a, r, &fp, flen, &vp, vlen);
    *f = fp;
    *v = vp;
}

static lform *large_new(void) {
    lform *l = malloc(sizeof(*l));
    if (!l) return NULL;
    lf_init(l, &hl_type);
    return l;
}

static void large_free(lform *l) {
    lf_destroy(l);
    free(l);
}

/* Insert a pair known to be absent. */
static int large_insert(lform *l, const void *f, size_t flen, const void *v, size_t vlen, uint64_t hv) {
    arena_ref r;
    void *fp, *vp;
    int rc = arena_pair_alloc(&l->a, flen, vlen, &r, &fp, &vp);
    if (rc != ARENA_OK) return lf_arena_err(rc);
    if (flen) memcpy(fp, f, flen);
    if (vlen) memcpy(vp, v, vlen);
    return lf_index(l, r, hv);
}

static int large_set(lform *l, const void *f, size_t flen, const void *v, size_t vlen) {
    uint64_t hv = hash_bytes(f, flen);
    void *slot = lf_find(l, f, flen, hv);
    if (!slot) {
        int rc = large_insert(l, f, flen, v, vlen, hv);
        if (rc != HASH_OK) return rc;
        lf_maintain(l, LF_COMPACT_BUDGET);
        return 1;
    }
    const char *of, *ov;
    size_t ofl, ovl;
    hl_pair(l, arena_ref_load(slot), &of, &ofl, &ov, &ovl);
    if (ovl == vlen) {
        /* Same size: rewrite in place, no dead bytes. */
        if (vlen) memmove((char *)ov, v, vlen);
        return 0;
    }
    arena_ref r;
    void *fp, *vp;
    int rc = arena_pair_alloc(&l->a, flen, vlen, &r, &fp, &vp);
    if (rc != ARENA_OK) return lf_arena_err(rc);
    /* Allocation never moves live entries: of and v (which may point into
     * this hash) are still valid. */
    if (flen) memcpy(fp, of, flen);
    if (vlen) memcpy(vp, v, vlen);
    lf_replace(l, slot, r);
    lf_maintain(l, LF_COMPACT_BUDGET);
    return 0;
}

static int large_del(lform *l, const void *f, size_t flen) {
    void *slot = lf_find(l, f, flen, hash_bytes(f, flen));
    if (!slot) return 0;
    lf_remove(l, slot);
    lf_maintain(l, LF_COMPACT_BUDGET);
    return 1;
}

/* ---- conversion ---- */

static int small_to_large(hash **hp) {
    unsigned char *s = as_small(*hp);
    lform *l = large_new();
    if (!l) return HASH_ENOMEM;
    for (size_t pos = SMALL_HDR; s[pos] != SMALL_END;) {
        const char *f, *v;
        size_t fl, vl;
        pos = small_entry(s, pos, &f, &fl, &v, &vl);
        int rc = large_insert(l, f, fl, v, vl, hash_bytes(f, fl));
        if (rc != HASH_OK) {
            large_free(l);
            return rc;
        }
    }
    blk_free(*hp);
    *hp = tag_large(l);
    return HASH_OK;
}

int hash_convert(hash **hp) {
    if (is_large(*hp)) return HASH_OK;
    return small_to_large(hp);
}

/* ---- public ---- */

hash *hash_new(void) {
    hash *h = blk_new(SMALL_HDR + 1);
    if (!h) return NULL;
    unsigned char *s = as_small(h);
    small_count_store(s, 0);
    s[SMALL_HDR] = SMALL_END;
    return h;
}

hash *hash_new_hint(size_t n, const hash_limits *lim) {
    if (n <= lim->max_entries) return hash_new();
    lform *l = large_new();
    if (!l) return NULL;
    /* A failed reserve only costs the growth steps it would have saved. */
    (void)swiss_reserve(&l->idx, n);
    return tag_large(l);
}

void hash_free(hash *h) {
    if (!h) return;
    if (is_large(h)) large_free(as_large(h));
    else blk_free(h);
}

hash *hash_dup(const hash *h) {
    if (!is_large(h)) {
        const unsigned char *s = as_small(h);
        size_t n = small_end(s, SMALL_HDR) + 1;
        hash *d = blk_new(n);
        if (d) memcpy(as_small(d), s, n);
        return d;
    }
    lform *src = as_large(h);
    lform *l = large_new();
    if (!l) return NULL;
    swiss_iter it;
    swiss_iter_init(&it, &src->idx);
    void *slot;
    int rc = HASH_OK;
    while (rc == HASH_OK && (slot = swiss_iter_next(&it))) {
        const char *f, *v;
        size_t fl, vl;
        hl_pair(src, arena_ref_load(slot), &f, &fl, &v, &vl);
        rc = large_insert(l, f, fl, v, vl, hash_bytes(f, fl));
    }
    swiss_iter_done(&it);
    if (rc != HASH_OK) {
        large_free(l);
        return NULL;
    }
    return tag_large(l);
}

int hash_form(const hash *h) { return is_large(h) ? HASH_LARGE : HASH_SMALL; }

size_t hash_len(const hash *h) {
    if (!is_large(h)) return small_count(as_small(h));
    return lf_count(as_large(h));
}

size_t hash_mem_usage(const hash *h) {
    if (!is_large(h)) return blk_cap(h);
    const lform *l = as_large(h);
    return malloc_usable_size((void *)l) + lf_mem_bytes(l);
}

int hash_rehash_step(hash *h, size_t groups) { return is_large(h) ? lf_rehash_step(as_large(h), groups) : 0; }

int hash_get(hash *h, const void *f, size_t flen, const char **v, size_t *vlen) {
    const char *vp;
    size_t vl;
    if (!is_large(h)) {
        if (small_find(as_small(h), f, flen, &vp, &vl, NULL) == (size_t)-1) return 0;
    } else {
        lform *l = as_large(h);
        void *slot = lf_find(l, f, flen, hash_bytes(f, flen));
        if (!slot) return 0;
        const char *fp;
        size_t fl;
        hl_pair(l, arena_ref_load(slot), &fp, &fl, &vp, &vl);
    }
    if (v) *v = vp;
    if (vlen) *vlen = vl;
    return 1;
}

int hash_exists(hash *h, const void *f, size_t flen) { return hash_get(h, f, flen, NULL, NULL); }

void hash_prefetch(const hash *h, const void *f, size_t flen, int stage) {
    if (is_large(h)) lf_prefetch(as_large(h), f, flen, stage);
}

/* Small-form write of a pair whose entry was found at pos..next (pos is
 * (size_t)-1 for a new pair, next then the end byte's offset, count the
 * number of pairs), with id the field's interned id or -1. The caller
 * has checked that f and v do not point into the block. Returns 1 (new),
 * 0 (overwritten) or HASH_ENOMEM (unchanged). */
static int small_write(hash **hp, size_t pos, size_t next, const void *f, size_t flen, const void *v, size_t vlen,
                       int id, size_t count) {
    unsigned char *s = as_small(*hp);
    size_t new_sz = ent_size(flen, vlen, id);
    if (pos == (size_t)-1) {
        size_t end = next;
        unsigned char *ns = blk_resize(hp, end, end + new_sz + 1);
        if (!ns) return HASH_ENOMEM;
        ent_put(ns + end, f, flen, v, vlen, id);
        ns[end + new_sz] = SMALL_END;
        small_count_store(ns, count + 1);
        return 1;
    }
    size_t old_sz = next - pos;
    if (new_sz == old_sz) {
        ent_put(s + pos, f, flen, v, vlen, id);
        return 0;
    }
    size_t end = small_end(s, next);
    size_t tail = end + 1 - next;
    size_t nsize = end + 1 - old_sz + new_sz;
    if (new_sz > old_sz) {
        s = blk_resize(hp, end + 1, nsize);
        if (!s) return HASH_ENOMEM;
    }
    memmove(s + pos + new_sz, s + next, tail);
    ent_put(s + pos, f, flen, v, vlen, id);
    if (new_sz < old_sz) (void)blk_resize(hp, nsize, nsize); /* a failed shrink keeps the bigger block */
    return 0;
}

static int inside(const void *p, size_t n, const hash *h) {
    const unsigned char *b = p, *s = as_small(h);
    return n && b >= s && b < s + blk_cap(h);
}

int hash_set(hash **hp, const void *f, size_t flen, const void *v, size_t vlen, const hash_limits *lim) {
    hash *h = *hp;
    if (is_large(h)) return large_set(as_large(h), f, flen, v, vlen);
    unsigned char *s = as_small(h);
    if (inside(f, flen, h) || inside(v, vlen, h)) {
        /* Bytes of this very block: they move with it, copy them first. */
        char *tmp = malloc(flen + vlen + 1);
        if (!tmp) return HASH_ENOMEM;
        if (flen) memcpy(tmp, f, flen);
        if (vlen) memcpy(tmp + flen, v, vlen);
        int rc = hash_set(hp, tmp, flen, tmp + flen, vlen, lim);
        free(tmp);
        return rc;
    }
    if (flen <= lim->max_value && vlen <= lim->max_value) {
        size_t next, count = 0;
        size_t pos = small_find_n(s, f, flen, NULL, NULL, &next, &count);
        /* An insert that would pass max_entries converts first; an
         * overwrite of a hash already past it (the limit was lowered since)
         * converts after, as Redis does on any write. */
        if (pos != (size_t)-1 || count + 1 <= lim->max_entries) {
            /* A new field counts towards interning its name; an
             * overwrite uses the name's id when it already has one. */
            int id = intern_id(f, flen, pos == (size_t)-1);
            /* The block's size after the write must stay under the cap. */
            size_t grow = ent_size(flen, vlen, id), end = next;
            if (pos != (size_t)-1) {
                grow = grow > next - pos ? grow - (next - pos) : 0;
                end = grow ? small_end(s, next) : 0;
            }
            if (end + 1 + grow < HASH_SMALL_MAX_BYTES) {
                int rc = small_write(hp, pos, next, f, flen, v, vlen, id, count);
                /* (An insert already checked its count against the limit.) */
                if (rc == 0 && small_count(as_small(*hp)) > lim->max_entries) {
                    /* Already written: a failed conversion leaves a valid
                     * (if oversized) small hash, tried again on the next write. */
                    small_to_large(hp);
                }
                return rc;
            }
        }
    }
    int rc = small_to_large(hp);
    if (rc != HASH_OK) return rc;
    return large_set(as_large(*hp), f, flen, v, vlen);
}

int hash_del(hash **hp, const void *f, size_t flen) {
    hash *h = *hp;
    if (is_large(h)) return large_del(as_large(h), f, flen);
    unsigned char *s = as_small(h);
    size_t next;
    size_t pos = small_find(s, f, flen, NULL, NULL, &next);
    if (pos == (size_t)-1) return 0;
    size_t count = small_count(s);
    size_t end = small_end(s, next);
    memmove(s + pos, s + next, end + 1 - next);
    small_count_store(s, count - 1);
    size_t nsize = end + 1 - (next - pos);
    (void)blk_resize(hp, nsize, nsize); /* a failed shrink keeps the bigger block */
    return 1;
}

/* ---- iteration ---- */

void hash_iter_init(hash_iter *it, hash *h) {
    it->h = h;
    it->pos = SMALL_HDR;
    if (is_large(h)) swiss_iter_init(&it->si, &as_large(h)->idx);
}

int hash_iter_next(hash_iter *it, const char **f, size_t *flen, const char **v, size_t *vlen) {
    if (!is_large(it->h)) {
        const unsigned char *s = as_small(it->h);
        if (s[it->pos] == SMALL_END) return 0;
        it->pos = small_entry(s, it->pos, f, flen, v, vlen);
        return 1;
    }
    void *slot = swiss_iter_next(&it->si);
    if (!slot) return 0;
    hl_pair(as_large(it->h), arena_ref_load(slot), f, flen, v, vlen);
    return 1;
}

void hash_iter_done(hash_iter *it) {
    if (is_large(it->h)) swiss_iter_done(&it->si);
}

/* ---- random ---- */

/* Offsets of every entry of a small hash (caller frees); NULL on OOM. */
static uint32_t *small_offsets(const unsigned char *s, size_t n) {
    uint32_t *off = malloc((n + 1) * sizeof(*off));
    if (!off) return NULL;
    size_t pos = SMALL_HDR;
    for (size_t i = 0; i < n; i++) {
        off[i] = (uint32_t)pos;
        const char *f, *v;
        size_t fl, vl;
        pos = small_entry(s, pos, &f, &fl, &v, &vl);
    }
    return off;
}

int hash_random(hash *h, hash_rand_fn *rnd, const char **f, size_t *flen, const char **v, size_t *vlen) {
    size_t n = hash_len(h);
    if (n == 0) return 0;
    if (!is_large(h)) {
        const unsigned char *s = as_small(h);
        uint64_t k = rnd() % n;
        size_t pos = SMALL_HDR;
        for (;;) {
            pos = small_entry(s, pos, f, flen, v, vlen);
            if (k-- == 0) return 1;
        }
    }
    lform *l = as_large(h);
    void *slot = swiss_random(&l->idx, rnd);
    if (!slot) return 0;
    hl_pair(l, arena_ref_load(slot), f, flen, v, vlen);
    return 1;
}

void hash_random_pairs(hash *h, size_t count, hash_rand_fn *rnd, hash_pair_fn *fn, void *arg) {
    size_t n = hash_len(h);
    if (n == 0) return;
    const char *f, *v;
    size_t fl, vl;
    if (!is_large(h)) {
        const unsigned char *s = as_small(h);
        uint32_t *off = count > 4 ? small_offsets(s, n) : NULL;
        for (size_t i = 0; i < count; i++) {
            if (off) {
                small_entry(s, off[rnd() % n], &f, &fl, &v, &vl);
            } else {
                hash_random(h, rnd, &f, &fl, &v, &vl);
            }
            fn(arg, f, fl, v, vl);
        }
        free(off);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        hash_random(h, rnd, &f, &fl, &v, &vl);
        fn(arg, f, fl, v, vl);
    }
}

typedef struct pair_ctx {
    lform *l;
    hash_pair_fn *fn;
    void *arg;
} pair_ctx;

/* Report the pair at r. */
static void report_ref(void *arg, arena_ref r) {
    pair_ctx *pc = arg;
    const char *f, *v;
    size_t fl, vl;
    hl_pair(pc->l, r, &f, &fl, &v, &vl);
    pc->fn(pc->arg, f, fl, v, vl);
}

int hash_random_unique(hash *h, size_t count, hash_rand_fn *rnd, hash_pair_fn *fn, void *arg) {
    size_t n = hash_len(h);
    const char *f, *v;
    size_t fl, vl;
    if (count >= n) {
        hash_iter it;
        hash_iter_init(&it, h);
        while (hash_iter_next(&it, &f, &fl, &v, &vl)) fn(arg, f, fl, v, vl);
        hash_iter_done(&it);
        return HASH_OK;
    }
    if (count == 0) return HASH_OK;
    if (!is_large(h)) {
        /* Selection sampling: each entry is taken with probability
         * needed / remaining, which yields a uniform subset in order. */
        const unsigned char *s = as_small(h);
        size_t pos = SMALL_HDR, need = count;
        for (size_t left = n; left && need; left--) {
            pos = small_entry(s, pos, &f, &fl, &v, &vl);
            if (rnd() % left < need) {
                fn(arg, f, fl, v, vl);
                need--;
            }
        }
        return HASH_OK;
    }
    pair_ctx pc = {as_large(h), fn, arg};
    return lf_sample(pc.l, count, rnd, report_ref, &pc) == LF_OK ? HASH_OK : HASH_ENOMEM;
}

/* ---- scan ---- */

static void scan_slot(void *arg, void *slot) { report_ref(arg, arena_ref_load(slot)); }

uint64_t hash_scan(hash *h, uint64_t cursor, hash_pair_fn *fn, void *arg) {
    if (!is_large(h)) {
        const unsigned char *s = as_small(h);
        for (size_t pos = SMALL_HDR; s[pos] != SMALL_END;) {
            const char *f, *v;
            size_t fl, vl;
            pos = small_entry(s, pos, &f, &fl, &v, &vl);
            fn(arg, f, fl, v, vl);
        }
        return 0;
    }
    pair_ctx pc = {as_large(h), fn, arg};
    return swiss_scan(&pc.l->idx, cursor, scan_slot, &pc);
}

/* ---- checks ---- */

int hash_check(const hash *h) {
    if (!is_large(h)) {
        const unsigned char *s = as_small(h);
        size_t size = blk_cap(h);
        size_t pos = SMALL_HDR, n = 0;
        while (pos < size && s[pos] != SMALL_END) {
            const char *f, *v;
            size_t fl, vl;
            /* A header's high nibble is never 15; an id names an interned field. */
            if (s[pos] >> 4 == 15) return -__LINE__;
            if (s[pos] >> 4 == FL_INTERNED &&
                (pos + 1 >= size || s[pos + 1] >= atomic_load_explicit(&intern_count, memory_order_acquire)))
                return -__LINE__;
            size_t next = small_entry(s, pos, &f, &fl, &v, &vl);
            if (next >= size || next <= pos) return -__LINE__;
            /* No earlier entry has the same field. */
            if (small_find(s, f, fl, NULL, NULL, NULL) != pos) return -__LINE__;
            pos = next;
            n++;
        }
        if (pos >= size) return -__LINE__;
        size_t c = small_count_raw(s);
        if (c < SMALL_COUNT_SAT ? c != n : n < SMALL_COUNT_SAT) return -__LINE__;
        return 0;
    }
    return lf_check(as_large(h));
}
