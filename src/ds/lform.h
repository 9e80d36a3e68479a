/* lform.h -- the large form of a collection: entries in a chunked arena,
 * indexed by a swiss table of their 4-byte references (see lform.c).
 *
 * The hash, set and sorted-set types keep their big values in one of these.
 * A type says where the key lies in its entries (lf_type); the module owns
 * the rest: lookups by key or by reference, indexing and removing entries,
 * and compaction, whose moves re-point the index (and, through the type's
 * hook, whatever else holds references). The arena and the index are open
 * fields: callers allocate entries in `a` and iterate, scan or sample `idx`
 * directly, but change the index only through lf_* calls. Not thread-safe:
 * the owner (a shard) serialises calls. */
#ifndef GOBLIN_DS_LFORM_H
#define GOBLIN_DS_LFORM_H

#include <stddef.h>
#include <stdint.h>

#include "ds/arena.h"
#include "ds/swiss.h"

#define LF_OK 0
#define LF_ENOMEM (-1) /* out of memory; nothing changed */
#define LF_EFULL (-2)  /* the arena's reference space is exhausted */

/* Bytes a compaction step moves after an ordinary write. */
#define LF_COMPACT_BUDGET 4096

typedef struct lform {
    arena a;             /* the entries */
    swiss idx;           /* one slot (an arena_ref) per live entry */
    size_t dead_mark;    /* dead bytes when compaction was last considered */
    size_t live_mark;    /* live bytes then, or the most since */
    uint8_t compacting;  /* the last compaction step left work to do */
    uint8_t noted;       /* the index's resize in flight has been reported */
} lform;

/* Compaction moved an entry from `from` to `to` (data, len: its bytes at
 * the new place) and has re-pointed its index slot; both copies are
 * readable until the hook returns. The hook may read the arena and look
 * entries up, but must not allocate, free, insert or remove. */
typedef void lf_moved_fn(lform *l, arena_ref from, arena_ref to, const void *data, size_t len);

/* What differs per type. An entry's key (what the index hashes and
 * matches) starts key_skip bytes into it and runs to the entry's end
 * (key_sized 0), or the entries are (field, value) pairs of a pair arena
 * and the key is the field (key_sized 1, with key_skip 0). Declare one with
 * LF_TYPE: its first member is the index's own swiss_type. */
typedef struct lf_type {
    swiss_type index;
    uint8_t key_skip;    /* at most 255 */
    uint8_t key_sized;
    lf_moved_fn *moved;  /* NULL when the index is the only holder of refs */
} lf_type;

/* The index callbacks every lf_type uses (ctx is the lform). */
uint64_t lf_hash_slot(void *ctx, const void *slot);
int lf_match(void *ctx, const void *slot, const void *key);
void lf_prefetch_slot(void *ctx, const void *slot);

/* The index of a large form steps a growing part's resize on one operation
 * in 8 (swiss_type.grow_pace): one group per operation moved a part ~13
 * times faster than its new table fills, so a 1000-field HSET into a hash
 * of millions moved 2000 groups (~26K elements) and took 3-7 ms of CPU
 * instead of 0.5 ms; at one in 8, under 2 ms. (The key index keeps one per
 * operation: the server's cron moves its groups as well.) Its parts grow
 * by half (grow_div 2): against doubling that takes 1.6-1.9 B per element
 * off a 1M-element hash, set or zset for ~10 % more CPU in the inserts of a
 * growing one measured in-process, ~1 % of a server's SADD, HSET or ZADD;
 * growing by a quarter, as the key index does, took 0.3 B more for 50 %. */
#define LF_GROW_PACE 8

#define LF_TYPE(key_skip, key_sized, moved) \
    { {sizeof(arena_ref), lf_hash_slot, lf_match, LF_GROW_PACE, lf_prefetch_slot, 2}, (key_skip), (key_sized), (moved) }

/* An empty large form (allocates nothing). */
void lf_init(lform *l, const lf_type *t);
/* Free the arena and the index; lf_init may follow. */
void lf_destroy(lform *l);
/* Empty it in place, same type (allocates nothing). */
void lf_reset(lform *l);

static inline size_t lf_count(const lform *l) { return swiss_size(&l->idx); }
/* Bytes of the arena and the index (the struct itself excluded). */
size_t lf_mem_bytes(const lform *l);

/* An arena_* error as LF_EFULL or LF_ENOMEM. */
static inline int lf_arena_err(int arena_rc) { return arena_rc == ARENA_EFULL ? LF_EFULL : LF_ENOMEM; }

/* What lf_match compares a slot with: a key, or a reference (by_ref not
 * ARENA_REF_NONE: the slot holding exactly that entry). */
typedef struct lf_lookup {
    const void *key;
    size_t klen;
    arena_ref by_ref;
} lf_lookup;

/* The slot of the entry whose key is key[0..klen), hv = hash_bytes(key,
 * klen); NULL when absent. */
static inline void *lf_find(lform *l, const void *key, size_t klen, uint64_t hv) {
    lf_lookup q = {key, klen, ARENA_REF_NONE};
    return swiss_find(&l->idx, hv, &q);
}
/* The slot holding live entry r (found by its key's hash, matched by
 * reference: never compares bytes). */
void *lf_find_ref(lform *l, arena_ref r);
/* A lookup of key[0..klen) to come: stage 0 starts loading its home group
 * in the index, stage 1 (once that has had time to arrive) the entries
 * whose tags match. Reads only. Nothing for an index of fewer than
 * LF_PREFETCH_MIN entries, which the caches hold anyway. */
#define LF_PREFETCH_MIN 32768
void lf_prefetch(const lform *l, const void *key, size_t klen, int stage);
/* The key of live entry r. */
const unsigned char *lf_key(const lform *l, arena_ref r, size_t *klen);

void lf_note_resize(lform *l, int resizing);
/* After an insert or a removal: report an index resize that started (see
 * "Idle resizes" below). */
static inline void lf_note_check(lform *l) {
    int resizing = l->idx.resizing != 0;
    if (__builtin_expect(resizing != l->noted, 0)) lf_note_resize(l, resizing);
}

/* Index entry r, allocated in l->a and filled, whose key (hash hv) is
 * absent. LF_OK, or LF_ENOMEM with r freed. (Inline, as the insert paths
 * of the types were.) */
static inline int lf_index(lform *l, arena_ref r, uint64_t hv) {
    void *slot = swiss_insert(&l->idx, hv);
    if (!slot) {
        arena_free(&l->a, r);
        return LF_ENOMEM;
    }
    arena_ref_store(slot, r);
    lf_note_check(l);
    return LF_OK;
}

/* arena_put(data, len) + lf_index; *ref (if not NULL) names the entry.
 * LF_OK or an error, nothing changed. */
static inline int lf_put(lform *l, const void *data, size_t len, uint64_t hv, arena_ref *ref) {
    arena_ref r;
    int rc = arena_put(&l->a, data, len, &r);
    if (rc != ARENA_OK) return lf_arena_err(rc);
    rc = lf_index(l, r, hv);
    if (rc == LF_OK && ref) *ref = r;
    return rc;
}
/* Point slot at entry r (same key, filled) and free the entry it held. */
void lf_replace(lform *l, void *slot, arena_ref r);
/* Remove the entry in slot from the index and free it. */
static inline void lf_remove(lform *l, void *slot) {
    arena_ref r = arena_ref_load(slot);
    swiss_delete(&l->idx, slot);
    arena_free(&l->a, r);
    lf_note_check(l);
}
/* Remove live entry r (its slot found by reference) and free it; returns
 * the arena bytes it took (prefix included). */
size_t lf_remove_ref(lform *l, arena_ref r);

/* One compaction step of about budget bytes when the arena has a block
 * past its dead threshold and the index is not resizing. Returns 1 when
 * more work remains. */
int lf_compact(lform *l, size_t budget);
/* After a write: lf_compact(budget) when dead bytes have grown by a 64th
 * of the arena (at least 256 bytes) since the last look, or while a
 * compaction is under way. The test is inline, the step is not. */
void lf_maintain_step(lform *l, size_t budget);
static inline void lf_maintain(lform *l, size_t budget) {
    const arena *a = &l->a;
    if (a->dead_bytes < l->dead_mark) l->dead_mark = a->dead_bytes;
    if (a->live_bytes > l->live_mark) l->live_mark = a->live_bytes;
    if (!l->compacting) {
        size_t slack = a->bytes_alloc / 64;
        if (slack < 256) slack = 256;
        /* Shrunk to a quarter of its blocks: looked at each time the live
         * bytes halve (the arena gives the survivors a smaller block). */
        int shrunk = a->live_bytes * 4 <= a->bytes_alloc && a->live_bytes * 2 <= l->live_mark;
        if (!shrunk && (a->dead_bytes == 0 || a->dead_bytes < l->dead_mark + slack)) return;
    }
    lf_maintain_step(l, budget);
}

/* Idle resizes. An insert or removal that leaves the index resizing (a
 * resize started since the last report) sets a flag of the calling thread, which
 * lf_take_resize_started returns and clears: the server then lists the
 * key, and its cron finishes the resize with lf_rehash_step while the
 * collection sits idle (the old and new tables of a resize in flight both
 * hold memory; without the cron only operations on the collection move
 * it). lf_rehash_step moves up to groups groups (0: none, a question),
 * then, the resize done, runs a compaction step of up to groups KiB (a
 * collection that shrank and went idle gives its blocks back); 1 while
 * more remain. */
int lf_take_resize_started(void);
int lf_rehash_step(lform *l, size_t groups);

/* A set of refs (open addressing), for distinct random picks. */
typedef struct lf_refset {
    arena_ref *t;        /* ARENA_REF_NONE: free */
    size_t mask;
} lf_refset;

/* Room for n refs. LF_OK or LF_ENOMEM. */
int lf_refset_init(lf_refset *rs, size_t n);
void lf_refset_free(lf_refset *rs);
/* 1 when r was added, 0 when it was there already. */
int lf_refset_add(lf_refset *rs, arena_ref r);
int lf_refset_has(const lf_refset *rs, arena_ref r);

typedef uint64_t lf_rand_fn(void);
typedef void lf_ref_fn(void *arg, arena_ref r);
/* count distinct entries (0 < count < lf_count), every subset of that size
 * equally likely, reported to fn as they are chosen (fn must not change
 * l). Over a third of them: a partial Fisher-Yates shuffle of every ref;
 * fewer: random picks, repeats rejected. LF_OK, or LF_ENOMEM with nothing
 * reported. */
int lf_sample(lform *l, size_t count, lf_rand_fn *rnd, lf_ref_fn *fn, void *arg);

/* Every invariant: the arena's own, and the index holding exactly its live
 * entries, one slot each, each found by its key's hash. 0 when they hold,
 * else a negative line-specific code. */
int lf_check(const lform *l);

#endif
