/* swiss.h -- open-addressing hash index with SSE2 group probing.
 *
 * The table stores fixed-size opaque slots (4 bytes for an arena reference,
 * 8 for a pointer); it never owns what a slot refers to. Callers hash their
 * key once, then find / insert / delete by slot pointer. See swiss.c for the
 * layout, the incremental resize and the SCAN cursor contract. */
#ifndef GOBLIN_DS_SWISS_H
#define GOBLIN_DS_SWISS_H

#include <stddef.h>
#include <stdint.h>

#define SWISS_GROUP 16

typedef struct swiss_type {
    uint32_t slot_size;
    /* Hash of the element a slot refers to (used when moving slots). */
    uint64_t (*hash_slot)(void *ctx, const void *slot);
    /* Non-zero when the element in slot equals the lookup key. */
    int (*match)(void *ctx, const void *slot, const void *key);
    /* While a part grows, one find/insert/delete in grow_pace moves one of
     * its groups (0 or 1: every one). A full group holds 15 elements, so
     * the grown table has room for 15/d inserts per group still to move
     * (grow_div d; d = 1 when doubling), and a part of a split index gets
     * only 1/16 of the index's inserts: at a pace of 8 the move ends long
     * before the new table fills (each insert is an operation; should the
     * room run short, every operation steps). A bigger pace spreads a
     * resize over more operations: fewer groups moved inside one big
     * command. Same-size rebuilds and shrinks have less room and step on
     * every operation. */
    uint32_t grow_pace;
    /* Optional: start loading what hash_slot will read for slot. A resize
     * step asks it for a whole group before hashing any of its elements,
     * so their cache misses overlap instead of coming one by one. */
    void (*prefetch_slot)(void *ctx, const void *slot);
    /* 0: a part of a split index doubles when full, like the single part;
     * d > 0: it grows by 1/d (swiss.c, "Growth": denser, more moves). */
    uint32_t grow_div;
} swiss_type;

typedef struct swiss_tab {
    unsigned char *mem;    /* ngroups groups: 16 control bytes, then 16 slots */
    size_t ngroups;        /* 0 when unallocated */
    size_t used;           /* live slots */
    size_t tombs;          /* deleted slots */
} swiss_tab;

/* One independently growing open-addressing table: the whole index while it
 * is small, one of SWISS_NPARTS hash ranges once it is large (swiss.c). */
typedef struct swiss_part {
    swiss_tab t[2];        /* t[1] is allocated only while this part resizes */
    size_t rehash_idx;     /* next group of t[0] to move, or SWISS_IDLE */
} swiss_part;

#define SWISS_PART_BITS 4
#define SWISS_NPARTS (1u << SWISS_PART_BITS)

typedef struct swiss {
    const swiss_type *type;
    void *ctx;
    swiss_part one;        /* the table while small (parts == NULL) */
    swiss_part *parts;     /* SWISS_NPARTS parts once large, else NULL */
    size_t count;          /* live elements */
    uint32_t resizing;     /* bit i: part i (bit 0: one) is mid-resize */
    uint32_t hint;         /* part of the last slot found (delete's guess) */
    int paused;            /* >0: iterators alive, no resize steps */
    uint8_t split_shift;   /* splits at SWISS_SPLIT_GROUPS >> split_shift groups */
    uint32_t pace;         /* operations counted for grow_pace */
    uint64_t moved_groups; /* groups moved by resize steps (statistics) */
} swiss;

#define SWISS_IDLE ((size_t)-1)

typedef void swiss_scan_fn(void *arg, void *slot);

void swiss_init(swiss *s, const swiss_type *type, void *ctx);
/* An empty table splits into parts earlier: when its single part would
 * grow past SWISS_SPLIT_GROUPS >> shift groups (shift 0..3; it merges back
 * proportionally earlier). Tables that grow together (a database's key
 * shards) given different shifts split at different sizes, not all in one
 * command. */
void swiss_set_split_shift(swiss *s, unsigned shift);
void swiss_free(swiss *s);
void swiss_clear(swiss *s);
size_t swiss_size(const swiss *s);
size_t swiss_capacity(const swiss *s);
size_t swiss_mem_bytes(const swiss *s);
/* Bytes of big tables mapped outside the allocator, all indexes together
 * (used_memory adds them to the allocator's own count). */
size_t swiss_mapped_bytes(void);

/* Slot of the element matching key, or NULL. */
void *swiss_find(swiss *s, uint64_t hash, const void *key);
/* Prefetching for a batch of lookups (their cache misses overlap instead
 * of coming one by one): swiss_prefetch_group starts loading the home
 * group of hash (control bytes and slots; both tables of a resizing part),
 * swiss_prefetch_match -- called once that has had time to arrive -- reads
 * the home group's control bytes and hands each slot whose tag matches to
 * the type's prefetch_slot. Neither changes anything; both read the table,
 * so the caller holds what a find would hold. */
void swiss_prefetch_group(const swiss *s, uint64_t hash);
void swiss_prefetch_match(const swiss *s, uint64_t hash);
/* A free slot for a new element with this hash; the caller has checked the
 * element is absent and fills the slot before any other call. NULL only on
 * allocation failure. */
void *swiss_insert(swiss *s, uint64_t hash);
/* Remove the element in slot (a pointer returned by find/insert/next). */
void swiss_delete(swiss *s, void *slot);

/* Stateless cursor scan: call fn for the elements of the next hash range
 * (one home group) and return the next cursor, 0 when done. The cursor is a
 * 32-bit hash position, so it survives any growth, shrink or split: every
 * element present for the whole scan is reported exactly once (an element
 * moved by a resize is reported at most once as well). */
uint64_t swiss_scan(swiss *s, uint64_t cursor, swiss_scan_fn *fn, void *arg);

/* A uniformly chosen occupied slot, or NULL when empty. rnd: a random source. */
void *swiss_random(swiss *s, uint64_t (*rnd)(void));

/* Presize an empty table for n elements (bulk loads); 0 ok, -1 no memory. */
int swiss_reserve(swiss *s, size_t n);

/* Move up to n groups of an in-progress resize; returns 1 if more remain. */
int swiss_rehash_step(swiss *s, size_t n);
int swiss_is_rehashing(const swiss *s);

/* Full iteration. The current element may be deleted; nothing may be
 * inserted while an iterator is open. */
typedef struct swiss_iter {
    swiss *s;
    int table;             /* part * 2 + which of its two tables */
    size_t idx;
} swiss_iter;

void swiss_iter_init(swiss_iter *it, swiss *s);
void *swiss_iter_next(swiss_iter *it);
void swiss_iter_done(swiss_iter *it);

#endif
