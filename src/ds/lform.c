/* lform.c -- the large form of a collection: arena entries + an index of refs.
 *
 * Layout. Every element is one entry of the collection's own chunked arena
 * (a 1-2 byte length prefix and its bytes, bump-allocated, no per-element
 * malloc). A swiss table indexes the entries; its slot is the entry's 4-byte
 * arena_ref, and lf_hash_slot / lf_match read the key from the arena (where
 * the lf_type says it lies), so the index stores neither hashes nor
 * pointers: an element costs its bytes, the prefix and about 5-10 bytes of
 * index. Lookups by key compare bytes; lookups by reference (lf_find_ref,
 * used to re-point or remove a known entry) hash the entry's key but match
 * the reference only, so they never depend on what the bytes compare to.
 *
 * Compaction. Removals and rewrites leave dead arena bytes. lf_compact runs
 * one bounded arena_compact_step, which copies live entries out of the
 * most-dead block and reports each move while both copies are readable;
 * lf_moved finds the slot by reference and re-points it, then calls the
 * type's hook (the sorted set re-points its B+tree too). Compaction waits
 * while the index is resizing: a resize step rehashes slots by reading
 * their entries, and the index must not be reshaped under a move.
 *
 * Maintenance policy (lf_maintain, after each write). arena_compact_needed
 * scans the block table, so it is skipped until the dead bytes have grown
 * by a 64th of the arena (at least 256 bytes) since the last look, or the
 * live bytes are a quarter of the blocks and half of what they were then,
 * unless the previous step left work (compacting). Each write then moves
 * at most the caller's budget, so the work is spread over the writes that
 * made it.
 *
 * Sampling (lf_sample: HRANDFIELD, SRANDMEMBER with a count). A uniform
 * subset of count distinct entries: when it is over a third of them, a
 * partial Fisher-Yates shuffle of every ref; else uniform slots from
 * swiss_random with repeats rejected through a small ref set.
 *
 * Invariant (lf_check): the index holds exactly the arena's live entries,
 * one slot each, keys distinct, each slot found by its own key's hash. */
#include "ds/lform.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashfn.h"
#include "util/rand.h"

static inline const lf_type *type_of(const lform *l) {
    /* The index's type is the first member of the lf_type (LF_TYPE). */
    return (const lf_type *)(const void *)l->idx.type;
}

/* The key inside an entry's bytes (entries always hold key_skip bytes). */
static inline const unsigned char *key_in(const lform *l, const unsigned char *e, size_t len, size_t *klen) {
    const lf_type *t = type_of(l);
    if (!t->key_sized) {
        *klen = len - t->key_skip;
        return e + t->key_skip;
    }
    size_t vl, n = arena_pair_header(e, klen, &vl);
    assert(n + *klen + vl == len);
    (void)vl;
    return e + n;
}

/* The key of live entry r (the index callbacks' hot path). */
static inline const unsigned char *key_of(const lform *l, arena_ref r, size_t *klen) {
    size_t len;
    const unsigned char *e = arena_get(&l->a, r, &len);
    return key_in(l, e, len, klen);
}

const unsigned char *lf_key(const lform *l, arena_ref r, size_t *klen) { return key_of(l, r, klen); }

uint64_t lf_hash_slot(void *ctx, const void *slot) {
    size_t kl;
    const unsigned char *k = key_of(ctx, arena_ref_load(slot), &kl);
    return hash_bytes(k, kl);
}

void lf_prefetch_slot(void *ctx, const void *slot) {
    const lform *l = ctx;
    arena_prefetch(&l->a, arena_ref_load(slot));
}

void lf_prefetch(const lform *l, const void *key, size_t klen, int stage) {
    if (lf_count(l) < LF_PREFETCH_MIN) return;
    uint64_t hv = hash_bytes(key, klen);
    if (stage) swiss_prefetch_match(&l->idx, hv);
    else swiss_prefetch_group(&l->idx, hv);
}

int lf_match(void *ctx, const void *slot, const void *key) {
    const lf_lookup *q = key;
    arena_ref r = arena_ref_load(slot);
    if (q->by_ref != ARENA_REF_NONE) return r == q->by_ref;
    size_t kl;
    const unsigned char *k = key_of(ctx, r, &kl);
    return kl == q->klen && (kl == 0 || memcmp(k, q->key, kl) == 0);
}

void lf_init(lform *l, const lf_type *t) {
    assert(!t->key_sized || t->key_skip == 0);
    arena_config cfg = {.pairs = t->key_sized};
    int rc = arena_init(&l->a, &cfg);
    assert(rc == ARENA_OK); /* the default configuration is always valid */
    (void)rc;
    swiss_init(&l->idx, &t->index, l);
    l->dead_mark = l->live_mark = 0;
    l->compacting = 0;
    l->noted = 0;
}

void lf_destroy(lform *l) {
    swiss_free(&l->idx);
    arena_destroy(&l->a);
}

void lf_reset(lform *l) {
    const lf_type *t = type_of(l);
    lf_destroy(l);
    lf_init(l, t);
}

size_t lf_mem_bytes(const lform *l) { return arena_mem_bytes(&l->a) + swiss_mem_bytes(&l->idx); }

/* The slot of the entry at r whose bytes (here or at a new place) are e. */
static void *find_ref_in(lform *l, arena_ref r, const unsigned char *e, size_t len) {
    size_t kl;
    const unsigned char *k = key_in(l, e, len, &kl);
    lf_lookup q = {NULL, 0, r};
    return swiss_find(&l->idx, hash_bytes(k, kl), &q);
}

void *lf_find_ref(lform *l, arena_ref r) {
    size_t len;
    const unsigned char *e = arena_get(&l->a, r, &len);
    return find_ref_in(l, r, e, len);
}

void lf_replace(lform *l, void *slot, arena_ref r) {
    arena_ref old = arena_ref_load(slot);
    arena_ref_store(slot, r);
    arena_free(&l->a, old);
}

size_t lf_remove_ref(lform *l, arena_ref r) {
    size_t len;
    const unsigned char *e = arena_get(&l->a, r, &len);
    void *slot = find_ref_in(l, r, e, len);
    assert(slot);
    lf_remove(l, slot);
    return arena_entry_size(&l->a, len);
}

/* The arena moved an entry: re-point its slot, then the type's holders. */
static void lf_moved(void *ctx, arena_ref from, arena_ref to, const void *data, size_t len) {
    lform *l = ctx;
    void *slot = find_ref_in(l, from, data, len);
    assert(slot);
    if (slot) arena_ref_store(slot, to);
    const lf_type *t = type_of(l);
    if (t->moved) t->moved(l, from, to, data, len);
}

int lf_compact(lform *l, size_t budget) {
    if (swiss_is_rehashing(&l->idx) || !arena_compact_needed(&l->a)) {
        l->compacting = 0;
        return 0;
    }
    int rc = arena_compact_step(&l->a, budget, lf_moved, l);
    l->compacting = rc == 1;
    return rc == 1;
}

/* lf_maintain found the dead bytes worth a look (or a compaction under
 * way): one step unless the index is resizing (then nothing changes, and
 * the next write looks again). */
void lf_maintain_step(lform *l, size_t budget) {
    if (swiss_is_rehashing(&l->idx)) return;
    lf_compact(l, budget);
    l->dead_mark = l->a.dead_bytes;
    l->live_mark = l->a.live_bytes;
}

static _Thread_local int resize_started;

void lf_note_resize(lform *l, int resizing) {
    l->noted = (uint8_t)resizing;
    if (resizing) resize_started = 1;
}

int lf_take_resize_started(void) {
    int r = resize_started;
    resize_started = 0;
    return r;
}

int lf_rehash_step(lform *l, size_t groups) {
    if (swiss_rehash_step(&l->idx, groups) || (groups && lf_compact(l, groups << 10))) return 1;
    l->noted = 0;
    return 0;
}

int lf_refset_init(lf_refset *rs, size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    rs->t = malloc(cap * sizeof(arena_ref));
    if (!rs->t) return LF_ENOMEM;
    memset(rs->t, 0xff, cap * sizeof(arena_ref)); /* ARENA_REF_NONE */
    rs->mask = cap - 1;
    return LF_OK;
}

void lf_refset_free(lf_refset *rs) {
    free(rs->t);
    rs->t = NULL;
}

/* The cell holding r, or the free cell where it would go. */
static inline arena_ref *refset_cell(const lf_refset *rs, arena_ref r) {
    size_t i = (size_t)hash_u64(r) & rs->mask;
    while (rs->t[i] != ARENA_REF_NONE && rs->t[i] != r) i = (i + 1) & rs->mask;
    return &rs->t[i];
}

int lf_refset_add(lf_refset *rs, arena_ref r) {
    arena_ref *c = refset_cell(rs, r);
    if (*c == r) return 0;
    *c = r;
    return 1;
}

int lf_refset_has(const lf_refset *rs, arena_ref r) { return *refset_cell(rs, r) == r; }

int lf_sample(lform *l, size_t count, lf_rand_fn *rnd, lf_ref_fn *fn, void *arg) {
    size_t n = lf_count(l);
    assert(count > 0 && count < n);
    if (count * 3 > n) {
        arena_ref *refs = malloc(n * sizeof(*refs));
        if (!refs) return LF_ENOMEM;
        size_t k = 0;
        swiss_iter it;
        swiss_iter_init(&it, &l->idx);
        void *slot;
        while (k < n && (slot = swiss_iter_next(&it))) refs[k++] = arena_ref_load(slot);
        swiss_iter_done(&it);
        for (size_t i = 0; i < count && i < k; i++) {
            size_t j = i + (size_t)rand_below_from(rnd, k - i);
            arena_ref t = refs[i];
            refs[i] = refs[j];
            refs[j] = t;
            fn(arg, refs[i]);
        }
        free(refs);
        return LF_OK;
    }
    lf_refset rs;
    if (lf_refset_init(&rs, count) != LF_OK) return LF_ENOMEM;
    for (size_t got = 0; got < count;) {
        arena_ref r = arena_ref_load(swiss_random(&l->idx, rnd));
        if (!lf_refset_add(&rs, r)) continue;
        fn(arg, r);
        got++;
    }
    lf_refset_free(&rs);
    return LF_OK;
}

int lf_check(const lform *l) {
    int rc = arena_check(&l->a);
    if (rc) return rc;
    if (swiss_size(&l->idx) != l->a.entries) return -__LINE__;
    lform *w = (lform *)l; /* iteration pauses the index: not const */
    swiss_iter it;
    swiss_iter_init(&it, &w->idx);
    void *slot;
    size_t n = 0;
    int bad = 0;
    while (!bad && (slot = swiss_iter_next(&it))) {
        size_t kl;
        const unsigned char *k = lf_key(l, arena_ref_load(slot), &kl);
        n++;
        /* Lookups while iterating are allowed (the index is paused). */
        if (lf_find(w, k, kl, hash_bytes(k, kl)) != slot) bad = -__LINE__;
    }
    swiss_iter_done(&it);
    if (bad) return bad;
    if (n != l->a.entries) return -__LINE__;
    return 0;
}
