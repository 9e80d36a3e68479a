/* hash.c -- the hash type's two forms: a packed block and an arena + index.
 *
 * Why two forms. Most hashes are small (a user record, a few counters): for
 * them any index costs more than it saves, so a small hash is one malloc'd
 * block of entries searched linearly, like Redis's listpack. Big hashes need
 * O(1) lookups and must not pay a pointer, an allocation header and an
 * allocator size class per field (what makes Redis spend ~86 B on a field of
 * 20 B): their pairs are appended to the hash's own chunked arena and a swiss
 * table of 4-byte arena references indexes them, so a field costs its bytes,
 * a 2-3 byte prefix and about 5-10 bytes of index.
 *
 * Small form. One malloc'd block: a 2-byte pair count (saturating at 65535,
 * past which it is counted by walking), the entries, and an 0xFF end byte.
 * An entry is a header byte, the field and the value. The header holds both
 * lengths when the field is at most 15 bytes and the value at most 14
 * (high nibble field, low nibble value: one byte of overhead per pair, where
 * a listpack spends four); a low nibble of 15 means the value length
 * follows as LEB128 (high nibble 0..13: the field length) or, for 0xEF, both
 * lengths follow. Entries keep insertion order; an overwrite rewrites the
 * entry in place (shifting the tail when its size changes), a delete closes
 * the gap, and the block is reallocated to the exact size after every
 * change, so it sits in the smallest allocator size class that holds it.
 *
 * The form is the low bit of the hash pointer (1: large), so a small hash
 * spends no byte on it.
 *
 * Large form. Every pair is one arena_pair entry. The swiss table's slot is
 * the pair's arena_ref; hash_slot and match read the field bytes from the
 * arena, so the index stores no hashes and no pointers. An overwrite with a
 * value of the same length rewrites the bytes in place; any other overwrite
 * appends a new pair, re-points the slot and frees the old pair (dead bytes).
 * After a write that left dead bytes (checked once they have grown by a
 * 64th of the arena, to keep the arena's block scan off the hot path), if
 * the arena reports a block past its dead threshold, one bounded compaction
 * step runs: the arena moves live pairs out of the
 * victim block and calls hl_move() for each, which finds the slot by
 * reference (never reading the freed bytes) and re-points it. Compaction
 * waits while the index is resizing, because a resize step rehashes slots
 * by reading their pairs, and a pair being moved has no readable old bytes.
 *
 * Conversion. hash_set() keeps the small form while, after the write,
 * count <= max_entries, the written field and value are <= max_value and the
 * block stays under HASH_SMALL_MAX_BYTES; otherwise it converts first (or
 * right after, for the count). There is no large -> small conversion.
 *
 * Invariants (hash_check). Small: walking from the header to the end byte
 * finds well-formed entries with distinct fields, as many as the count says
 * (at least 65535 when it is saturated), inside the allocation. Large: the
 * index holds exactly the arena's live entries, one slot each, every field
 * distinct and found by its own hash. */
#include "ds/varint.h"
#include "ds/hash.h"

#include <assert.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "ds/arena.h"
#include "ds/hashfn.h"

/* struct hash is never defined: a hash * is either a small block or a
 * tagged pointer to an hlarge. */

typedef struct hlarge {
    uint8_t compacting; /* a compaction step left work to do */
    size_t dead_mark;   /* arena dead bytes when compaction was last considered */
    arena a;
    swiss idx;
} hlarge;

#define LARGE_TAG ((uintptr_t)1)

static inline int is_large(const hash *h) { return ((uintptr_t)h & LARGE_TAG) != 0; }
static inline hlarge *as_large(const hash *h) { return (hlarge *)((uintptr_t)h & ~LARGE_TAG); }
static inline hash *tag_large(hlarge *l) { return (hash *)((uintptr_t)l | LARGE_TAG); }
static inline unsigned char *as_small(const hash *h) { return (unsigned char *)h; }

/* Bytes moved by one compaction step (at least one pair is always moved). */
#define HASH_COMPACT_BUDGET 4096

/* ---- LEB128 lengths ---- */

/* ---- small form ---- */

#define SMALL_HDR 2           /* the pair count */
#define SMALL_END 0xFF        /* end byte, never an entry header */
#define SMALL_LONG 0xEF       /* header: both lengths follow */
#define SMALL_COUNT_SAT 0xFFFF

static inline size_t ent_hdr_len(size_t fl, size_t vl) {
    if (fl <= 15 && vl <= 14) return 1;
    if (fl <= 13) return 1 + varint_size(vl);
    return 1 + varint_size(fl) + varint_size(vl);
}

static inline size_t ent_size(size_t fl, size_t vl) { return ent_hdr_len(fl, vl) + fl + vl; }

static inline size_t ent_put(unsigned char *p, const void *f, size_t fl, const void *v, size_t vl) {
    size_t n;
    if (fl <= 15 && vl <= 14) {
        p[0] = (unsigned char)(fl << 4 | vl);
        n = 1;
    } else if (fl <= 13) {
        p[0] = (unsigned char)(fl << 4 | 0x0F);
        n = 1 + varint_put(p + 1, vl);
    } else {
        p[0] = SMALL_LONG;
        n = 1 + varint_put(p + 1, fl);
        n += varint_put(p + n, vl);
    }
    if (fl) memcpy(p + n, f, fl);
    if (vl) memcpy(p + n + fl, v, vl);
    return n + fl + vl;
}

/* Decode the entry at offset pos (not the end byte); returns the offset of
 * the next one. */
static inline size_t small_entry(const unsigned char *s, size_t pos, const char **f, size_t *flen, const char **v,
                                 size_t *vlen) {
    const unsigned char *p = s + pos;
    unsigned h = *p++;
    if ((h & 0x0F) != 0x0F) {
        *flen = h >> 4;
        *vlen = h & 0x0F;
    } else if (h != SMALL_LONG) {
        *flen = h >> 4;
        p += varint_get(p, vlen);
    } else {
        p += varint_get(p, flen);
        p += varint_get(p, vlen);
    }
    *f = (const char *)p;
    *v = (const char *)p + *flen;
    return (size_t)(p - s) + *flen + *vlen;
}

static inline size_t small_count_raw(const unsigned char *s) { return (size_t)s[0] | (size_t)s[1] << 8; }

static inline void small_count_store(unsigned char *s, size_t n) {
    if (n > SMALL_COUNT_SAT) n = SMALL_COUNT_SAT;
    s[0] = (unsigned char)n;
    s[1] = (unsigned char)(n >> 8);
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
 * value), or (size_t)-1 with *next the offset of the end byte. */
static size_t small_find(const unsigned char *s, const void *f, size_t flen, const char **vp, size_t *vlen,
                         size_t *next) {
    size_t pos = SMALL_HDR;
    while (s[pos] != SMALL_END) {
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
    return (size_t)-1;
}

/* ---- large form: index callbacks ---- */

typedef struct hl_key {
    const void *f;
    size_t flen;
    arena_ref by_ref; /* ARENA_REF_NONE: compare bytes; else: the slot holding this ref */
} hl_key;

static inline arena_ref slot_ref(const void *slot) {
    arena_ref r;
    memcpy(&r, slot, sizeof(r));
    return r;
}

static inline void slot_set(void *slot, arena_ref r) { memcpy(slot, &r, sizeof(r)); }

static inline void hl_pair(const hlarge *l, arena_ref r, const char **f, size_t *flen, const char **v,
                           size_t *vlen) {
    const void *fp, *vp;
    arena_pair_get(&l->a, r, &fp, flen, &vp, vlen);
    *f = fp;
    *v = vp;
}

static uint64_t hl_hash_slot(void *ctx, const void *slot) {
    const char *f, *v;
    size_t fl, vl;
    hl_pair(ctx, slot_ref(slot), &f, &fl, &v, &vl);
    return hash_bytes(f, fl);
}

static int hl_match(void *ctx, const void *slot, const void *key) {
    const hl_key *k = key;
    arena_ref r = slot_ref(slot);
    if (k->by_ref != ARENA_REF_NONE) return r == k->by_ref;
    const char *f, *v;
    size_t fl, vl;
    hl_pair(ctx, r, &f, &fl, &v, &vl);
    return fl == k->flen && (fl == 0 || memcmp(f, k->f, fl) == 0);
}

static const swiss_type hl_type = {sizeof(arena_ref), hl_hash_slot, hl_match};

static hlarge *large_new(void) {
    hlarge *l = calloc(1, sizeof(*l));
    if (!l) return NULL;
    if (arena_init(&l->a, NULL) != ARENA_OK) {
        free(l);
        return NULL;
    }
    swiss_init(&l->idx, &hl_type, l);
    return l;
}

static void large_free(hlarge *l) {
    swiss_free(&l->idx);
    arena_destroy(&l->a);
    free(l);
}

static void *large_find(hlarge *l, const void *f, size_t flen, uint64_t hv) {
    hl_key k = {f, flen, ARENA_REF_NONE};
    return swiss_find(&l->idx, hv, &k);
}

static int arena_err(int rc) { return rc == ARENA_EFULL ? HASH_EFULL : HASH_ENOMEM; }

/* Compaction re-points the slot of a moved pair. */
static void hl_move(void *ctx, arena_ref from, arena_ref to, const void *data, size_t len) {
    hlarge *l = ctx;
    size_t flen;
    size_t n = varint_get(data, &flen);
    assert(n + flen <= len);
    (void)len;
    hl_key k = {NULL, 0, from};
    void *slot = swiss_find(&l->idx, hash_bytes((const unsigned char *)data + n, flen), &k);
    assert(slot);
    if (slot) slot_set(slot, to);
}

/* After a write: one bounded compaction step when the arena wants one. The
 * block scan behind arena_compact_needed is skipped until the dead bytes
 * have grown by a 64th of the arena (at least 256 bytes) since the last
 * look, unless a compaction is under way. */
static void large_maintain(hlarge *l) {
    arena *a = &l->a;
    if (a->dead_bytes < l->dead_mark) l->dead_mark = a->dead_bytes;
    if (a->dead_bytes == 0 || swiss_is_rehashing(&l->idx)) return;
    size_t slack = a->bytes_alloc / 64;
    if (slack < 256) slack = 256;
    if (!l->compacting && a->dead_bytes < l->dead_mark + slack) return;
    if (arena_compact_needed(a)) {
        int rc = arena_compact_step(a, HASH_COMPACT_BUDGET, hl_move, l);
        l->compacting = rc == 1;
    } else {
        l->compacting = 0;
    }
    l->dead_mark = a->dead_bytes;
}

/* Insert a pair known to be absent. */
static int large_insert(hlarge *l, const void *f, size_t flen, const void *v, size_t vlen, uint64_t hv) {
    arena_ref r;
    void *fp, *vp;
    int rc = arena_pair_alloc(&l->a, flen, vlen, &r, &fp, &vp);
    if (rc != ARENA_OK) return arena_err(rc);
    if (flen) memcpy(fp, f, flen);
    if (vlen) memcpy(vp, v, vlen);
    void *slot = swiss_insert(&l->idx, hv);
    if (!slot) {
        arena_free(&l->a, r);
        return HASH_ENOMEM;
    }
    slot_set(slot, r);
    return HASH_OK;
}

static int large_set(hlarge *l, const void *f, size_t flen, const void *v, size_t vlen) {
    uint64_t hv = hash_bytes(f, flen);
    void *slot = large_find(l, f, flen, hv);
    if (!slot) {
        int rc = large_insert(l, f, flen, v, vlen, hv);
        if (rc != HASH_OK) return rc;
        large_maintain(l);
        return 1;
    }
    arena_ref old = slot_ref(slot);
    const char *of, *ov;
    size_t ofl, ovl;
    hl_pair(l, old, &of, &ofl, &ov, &ovl);
    if (ovl == vlen) {
        /* Same size: rewrite in place, no dead bytes. */
        if (vlen) memmove((char *)ov, v, vlen);
        return 0;
    }
    arena_ref r;
    void *fp, *vp;
    int rc = arena_pair_alloc(&l->a, flen, vlen, &r, &fp, &vp);
    if (rc != ARENA_OK) return arena_err(rc);
    /* Allocation never moves live entries: of and v (which may point into
     * this hash) are still valid. */
    if (flen) memcpy(fp, of, flen);
    if (vlen) memcpy(vp, v, vlen);
    slot_set(slot, r);
    arena_free(&l->a, old);
    large_maintain(l);
    return 0;
}

static int large_del(hlarge *l, const void *f, size_t flen) {
    void *slot = large_find(l, f, flen, hash_bytes(f, flen));
    if (!slot) return 0;
    arena_ref r = slot_ref(slot);
    swiss_delete(&l->idx, slot);
    arena_free(&l->a, r);
    large_maintain(l);
    return 1;
}

/* ---- conversion ---- */

static int small_to_large(hash **hp) {
    unsigned char *s = as_small(*hp);
    hlarge *l = large_new();
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
    free(s);
    *hp = tag_large(l);
    return HASH_OK;
}

int hash_convert(hash **hp) {
    if (is_large(*hp)) return HASH_OK;
    return small_to_large(hp);
}

/* ---- public ---- */

hash *hash_new(void) {
    unsigned char *s = malloc(SMALL_HDR + 1);
    if (!s) return NULL;
    small_count_store(s, 0);
    s[SMALL_HDR] = SMALL_END;
    return (hash *)s;
}

void hash_free(hash *h) {
    if (!h) return;
    if (is_large(h)) large_free(as_large(h));
    else free(h);
}

hash *hash_dup(const hash *h) {
    if (!is_large(h)) {
        const unsigned char *s = as_small(h);
        size_t n = small_end(s, SMALL_HDR) + 1;
        unsigned char *d = malloc(n);
        if (d) memcpy(d, s, n);
        return (hash *)d;
    }
    hlarge *src = as_large(h);
    hlarge *l = large_new();
    if (!l) return NULL;
    swiss_iter it;
    swiss_iter_init(&it, &src->idx);
    void *slot;
    int rc = HASH_OK;
    while (rc == HASH_OK && (slot = swiss_iter_next(&it))) {
        const char *f, *v;
        size_t fl, vl;
        hl_pair(src, slot_ref(slot), &f, &fl, &v, &vl);
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
    return swiss_size(&as_large(h)->idx);
}

size_t hash_mem_usage(const hash *h) {
    if (!is_large(h)) return malloc_usable_size((void *)h);
    const hlarge *l = as_large(h);
    return malloc_usable_size((void *)l) + arena_mem_bytes(&l->a) + swiss_mem_bytes(&l->idx);
}

int hash_get(hash *h, const void *f, size_t flen, const char **v, size_t *vlen) {
    const char *vp;
    size_t vl;
    if (!is_large(h)) {
        if (small_find(as_small(h), f, flen, &vp, &vl, NULL) == (size_t)-1) return 0;
    } else {
        hlarge *l = as_large(h);
        void *slot = large_find(l, f, flen, hash_bytes(f, flen));
        if (!slot) return 0;
        const char *fp;
        size_t fl;
        hl_pair(l, slot_ref(slot), &fp, &fl, &vp, &vl);
    }
    if (v) *v = vp;
    if (vlen) *vlen = vl;
    return 1;
}

int hash_exists(hash *h, const void *f, size_t flen) { return hash_get(h, f, flen, NULL, NULL); }

/* Small-form write of a pair whose entry was found at pos..next (pos is
 * (size_t)-1 for a new pair, next then the end byte's offset). The caller
 * has checked that f and v do not point into the block. Returns 1 (new),
 * 0 (overwritten) or HASH_ENOMEM (unchanged). */
static int small_write(hash **hp, size_t pos, size_t next, const void *f, size_t flen, const void *v, size_t vlen) {
    unsigned char *s = as_small(*hp);
    size_t new_sz = ent_size(flen, vlen);
    if (pos == (size_t)-1) {
        size_t end = next;
        unsigned char *ns = realloc(s, end + new_sz + 1);
        if (!ns) return HASH_ENOMEM;
        *hp = (hash *)ns;
        ent_put(ns + end, f, flen, v, vlen);
        ns[end + new_sz] = SMALL_END;
        small_count_store(ns, small_count(ns) + 1);
        return 1;
    }
    size_t old_sz = next - pos;
    if (new_sz == old_sz) {
        ent_put(s + pos, f, flen, v, vlen);
        return 0;
    }
    size_t end = small_end(s, next);
    size_t tail = end + 1 - next;
    size_t nsize = end + 1 - old_sz + new_sz;
    if (new_sz > old_sz) {
        unsigned char *ns = realloc(s, nsize);
        if (!ns) return HASH_ENOMEM;
        s = ns;
        *hp = (hash *)s;
    }
    memmove(s + pos + new_sz, s + next, tail);
    ent_put(s + pos, f, flen, v, vlen);
    if (new_sz < old_sz) {
        unsigned char *ns = realloc(s, nsize);
        if (ns) *hp = (hash *)ns; /* a failed shrink keeps the bigger block */
    }
    return 0;
}

static int inside(const void *p, size_t n, const unsigned char *s) {
    const unsigned char *b = p;
    return n && b >= s && b < s + malloc_usable_size((void *)s);
}

int hash_set(hash **hp, const void *f, size_t flen, const void *v, size_t vlen, const hash_limits *lim) {
    hash *h = *hp;
    if (is_large(h)) return large_set(as_large(h), f, flen, v, vlen);
    unsigned char *s = as_small(h);
    if (inside(f, flen, s) || inside(v, vlen, s)) {
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
        size_t next;
        size_t pos = small_find(s, f, flen, NULL, NULL, &next);
        size_t count = small_count(s);
        /* An insert that would pass max_entries converts first; an
         * overwrite of a hash already past it (the limit was lowered since)
         * converts after, as Redis does on any write. */
        if (pos != (size_t)-1 || count + 1 <= lim->max_entries) {
            /* The block's size after the write must stay under the cap. */
            size_t grow = ent_size(flen, vlen), end = next;
            if (pos != (size_t)-1) {
                grow = grow > next - pos ? grow - (next - pos) : 0;
                end = grow ? small_end(s, next) : 0;
            }
            if (end + 1 + grow < HASH_SMALL_MAX_BYTES) {
                int rc = small_write(hp, pos, next, f, flen, v, vlen);
                if (rc >= 0 && small_count(as_small(*hp)) > lim->max_entries) {
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
    unsigned char *ns = realloc(s, end + 1 - (next - pos));
    if (ns) *hp = (hash *)ns; /* a failed shrink keeps the bigger block */
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
    hl_pair(as_large(it->h), slot_ref(slot), f, flen, v, vlen);
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
    hlarge *l = as_large(h);
    void *slot = swiss_random(&l->idx, rnd);
    if (!slot) return 0;
    hl_pair(l, slot_ref(slot), f, flen, v, vlen);
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

/* A small open-addressing set of arena refs (for distinct random picks). */
typedef struct refset {
    arena_ref *t;
    size_t mask;
} refset;

static int refset_add(refset *rs, arena_ref r) {
    size_t i = (size_t)hash_u64(r) & rs->mask;
    while (rs->t[i] != ARENA_REF_NONE) {
        if (rs->t[i] == r) return 0;
        i = (i + 1) & rs->mask;
    }
    rs->t[i] = r;
    return 1;
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
    hlarge *l = as_large(h);
    if (count * 3 > n) {
        /* Many of them: a partial Fisher-Yates shuffle of every ref. */
        arena_ref *refs = malloc(n * sizeof(*refs));
        if (!refs) return HASH_ENOMEM;
        size_t k = 0;
        swiss_iter it;
        swiss_iter_init(&it, &l->idx);
        void *slot;
        while ((slot = swiss_iter_next(&it)) && k < n) refs[k++] = slot_ref(slot);
        swiss_iter_done(&it);
        for (size_t i = 0; i < count && i < k; i++) {
            size_t j = i + (size_t)(rnd() % (k - i));
            arena_ref t = refs[i];
            refs[i] = refs[j];
            refs[j] = t;
            hl_pair(l, refs[i], &f, &fl, &v, &vl);
            fn(arg, f, fl, v, vl);
        }
        free(refs);
        return HASH_OK;
    }
    /* Few of them: random picks, duplicates rejected. */
    size_t cap = 16;
    while (cap < count * 2) cap <<= 1;
    refset rs = {malloc(cap * sizeof(arena_ref)), cap - 1};
    if (!rs.t) return HASH_ENOMEM;
    memset(rs.t, 0xff, cap * sizeof(arena_ref));
    size_t got = 0;
    while (got < count) {
        void *slot = swiss_random(&l->idx, rnd);
        arena_ref r = slot_ref(slot);
        if (!refset_add(&rs, r)) continue;
        hl_pair(l, r, &f, &fl, &v, &vl);
        fn(arg, f, fl, v, vl);
        got++;
    }
    free(rs.t);
    return HASH_OK;
}

/* ---- scan ---- */

typedef struct scan_ctx {
    hlarge *l;
    hash_pair_fn *fn;
    void *arg;
} scan_ctx;

static void scan_slot(void *arg, void *slot) {
    scan_ctx *sc = arg;
    const char *f, *v;
    size_t fl, vl;
    hl_pair(sc->l, slot_ref(slot), &f, &fl, &v, &vl);
    sc->fn(sc->arg, f, fl, v, vl);
}

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
    scan_ctx sc = {as_large(h), fn, arg};
    return swiss_scan(&sc.l->idx, cursor, scan_slot, &sc);
}

/* ---- checks ---- */

int hash_check(const hash *h) {
    if (!is_large(h)) {
        const unsigned char *s = as_small(h);
        size_t size = malloc_usable_size((void *)s);
        size_t pos = SMALL_HDR, n = 0;
        while (pos < size && s[pos] != SMALL_END) {
            const char *f, *v;
            size_t fl, vl;
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
    hlarge *l = as_large(h);
    int rc = arena_check(&l->a);
    if (rc) return rc;
    if (swiss_size(&l->idx) != l->a.entries) return -__LINE__;
    swiss_iter it;
    swiss_iter_init(&it, &l->idx);
    void *slot;
    size_t n = 0;
    int bad = 0;
    while (!bad && (slot = swiss_iter_next(&it))) {
        const char *f, *v;
        size_t fl, vl;
        hl_pair(l, slot_ref(slot), &f, &fl, &v, &vl);
        n++;
        hl_key k = {f, fl, ARENA_REF_NONE};
        /* Lookups while iterating are allowed (the index is paused). */
        void *found = swiss_find(&l->idx, hash_bytes(f, fl), &k);
        if (found != slot) bad = -__LINE__;
    }
    swiss_iter_done(&it);
    if (bad) return bad;
    if (n != l->a.entries) return -__LINE__;
    return 0;
}
