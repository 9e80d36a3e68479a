/* arena.h -- chunked arena for collection members (see arena.c for the design).
 *
 * An arena hands out length-prefixed entries by bump allocation inside a list
 * of blocks and names each entry by a compact 32-bit reference, so an index
 * slot that points at an entry costs 4 bytes. Entries never move except
 * through arena_compact_step(), which reports every move to a callback so the
 * index can re-point.
 *
 * Pointers returned by arena_alloc()/arena_get() stay valid until the entry
 * is freed or a compaction step moves it; allocating other entries never
 * moves existing ones. An arena is not thread-safe: its owner (a shard)
 * serialises calls. The global counters are atomics. */
#ifndef GOBLIN_DS_ARENA_H
#define GOBLIN_DS_ARENA_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/varint.h"

typedef uint32_t arena_ref;
#define ARENA_REF_NONE ((arena_ref)0xFFFFFFFFu)

/* A ref kept in an index slot (swiss slots need not be aligned). */
static inline arena_ref arena_ref_load(const void *slot) {
    arena_ref r;
    memcpy(&r, slot, sizeof(r));
    return r;
}
static inline void arena_ref_store(void *slot, arena_ref r) { memcpy(slot, &r, sizeof(r)); }

#define ARENA_OK 0
#define ARENA_ENOMEM (-1)  /* no memory for a new block */
#define ARENA_EFULL (-2)   /* the reference format (or max_blocks) is exhausted */
#define ARENA_EINVAL (-3)  /* bad configuration or entry length */

#define ARENA_CHUNK_DEFAULT ((size_t)2 << 20)
#define ARENA_FIRST_DEFAULT ((size_t)256)
#define ARENA_CHUNK_MIN ((size_t)4096)
#define ARENA_CHUNK_MAX ((size_t)1 << 30)
#define ARENA_DEAD_PCT_DEFAULT 50
#define ARENA_MAX_ENTRY (((size_t)1 << 40) - 64)

typedef struct arena_config {
    size_t chunk;              /* full block size, power of two; 0: the default */
    size_t first_block;        /* first block size, power of two; 0: 256 */
    unsigned ref_shift;        /* entries start on 1<<ref_shift byte boundaries, so
                                  refs address 4 GiB << ref_shift; 0..6 */
    unsigned compact_dead_pct; /* a block is compacted at this % dead; 0: 50 */
    uint32_t max_blocks;       /* cap on live blocks; 0: what refs allow */
    unsigned pairs;            /* 1: a pair arena (arena_pair_alloc entries only) */
} arena_config;

struct arena_block;

typedef struct arena {
    struct arena_block *blk;   /* descriptor table, indexed by block id */
    uint32_t nblk;             /* ids in use are < nblk */
    uint32_t capblk;
    uint32_t free_id;          /* free descriptor list head */
    uint32_t active;           /* block receiving appends */
    uint32_t victim;           /* block being compacted */
    uint32_t max_blocks;
    size_t vpos;               /* next offset to examine in the victim */
    uint8_t chunk_shift, first_shift, off_bits, ref_shift, dead_pct;
    uint8_t pairs;             /* entries are pairs, sized by their own header */
    uint32_t blocks;           /* live blocks */
    uint64_t entries;          /* live entries */
    size_t bytes_alloc;        /* sum of block sizes */
    size_t regular_bytes;      /* ... of blocks below or at chunk size */
    size_t live_bytes;         /* live entries, prefixes included */
    size_t dead_bytes;         /* freed or overwritten, not yet reclaimed */
    size_t huge_bytes;         /* blocks backed by HugeTLB pages */
    uint64_t fallbacks;        /* full blocks that wanted HugeTLB and did not get it */
    uint64_t compactions;      /* blocks emptied by compaction */
    uint64_t moved;            /* entries moved by compaction */
    size_t g_live, g_dead;     /* values last reported to the global counters */
    uint64_t g_entries;
} arena;

typedef struct arena_stats {
    uint64_t blocks;
    uint64_t bytes_alloc;      /* block memory */
    uint64_t bytes_used;       /* live + dead */
    uint64_t live_bytes;
    uint64_t dead_bytes;
    uint64_t hugetlb_bytes;
    uint64_t entries;
    uint64_t fallbacks;
    uint64_t compactions;
    uint64_t moved;
} arena_stats;

/* Server-wide default chunk (the arena-chunk setting). Returns ARENA_EINVAL
 * unless chunk is a power of two in [ARENA_CHUNK_MIN, ARENA_CHUNK_MAX]. */
int arena_set_default_chunk(size_t chunk);
size_t arena_default_chunk(void);

/* cfg may be NULL for the defaults. Allocates nothing. */
int arena_init(arena *a, const arena_config *cfg);
/* Frees every block; the arena may be initialised again. */
void arena_destroy(arena *a);

/* A new entry with room for len payload bytes: *ref names it, *ptr points at
 * the (uninitialised) payload. Returns ARENA_OK or an error, with the arena
 * unchanged on error. */
int arena_alloc(arena *a, size_t len, arena_ref *ref, void **ptr);
/* arena_alloc + memcpy. */
int arena_put(arena *a, const void *data, size_t len, arena_ref *ref);
/* The payload of a live entry; *len (if not NULL) receives its length. */
void *arena_get(const arena *a, arena_ref ref, size_t *len);
/* Start loading live entry ref's first bytes (no read of it is made). */
void arena_prefetch(const arena *a, arena_ref ref);
/* Release a live entry. Its bytes become dead (or the block is given back). */
void arena_free(arena *a, arena_ref ref);

/* Bytes an entry of payload length len occupies in this arena, its length
 * prefix included: len itself in a pair arena (the pair header is part of
 * what arena_get returns). */
size_t arena_entry_size(const arena *a, size_t len);

/* (field, value) pairs, in a pair arena (arena_config.pairs). A pair arena
 * has no length prefix of its own: an entry is a pair header, the field and
 * the value, and arena_get returns the whole entry. The header is one byte
 * for a field of at most ARENA_PAIR_FMAX bytes with a value of at most
 * ARENA_PAIR_VMAX, not both empty: code = flen * (VMAX + 1) + vlen - 1,
 * 0..253. Byte ARENA_PAIR_LONG is followed by varint(flen) varint(vlen);
 * byte ARENA_PAIR_DEAD marks a freed entry and is followed by varint(entry
 * size) (every entry has at least two bytes, so that always fits). */
#define ARENA_PAIR_FMAX 14
#define ARENA_PAIR_VMAX 16
#define ARENA_PAIR_DEAD 0xFEu
#define ARENA_PAIR_LONG 0xFFu

/* Header bytes of a live pair entry at e; its field and value lengths. */
static inline size_t arena_pair_header(const unsigned char *e, size_t *flen, size_t *vlen) {
    unsigned c = e[0];
    if (c < ARENA_PAIR_DEAD) {
        c++;
        *flen = c / (ARENA_PAIR_VMAX + 1);
        *vlen = c % (ARENA_PAIR_VMAX + 1);
        return 1;
    }
    assert(c == ARENA_PAIR_LONG);
    size_t n = 1 + varint_get(e + 1, flen);
    return n + varint_get(e + n, vlen);
}

int arena_pair_alloc(arena *a, size_t flen, size_t vlen, arena_ref *ref, void **field, void **value);
void arena_pair_get(const arena *a, arena_ref ref, const void **field, size_t *flen, const void **value,
                    size_t *vlen);

/* Compaction. Called for every entry moved, after the copy: to names the
 * same bytes (data, len) at their new place, and from still names the old
 * copy until the callback returns; then from is freed. The callback may read
 * the arena (arena_get of any live ref, from included) but must not
 * allocate, free or compact. */
typedef void arena_move_fn(void *ctx, arena_ref from, arena_ref to, const void *data, size_t len);
/* Move live entries out of the most-dead block, at most budget payload bytes
 * per call (at least one entry, so every call makes progress), and free the
 * block once it is empty. Returns 1 if more work remains, 0 if none,
 * or ARENA_ENOMEM/ARENA_EFULL when no room could be found (nothing lost). */
int arena_compact_step(arena *a, size_t budget, arena_move_fn *fn, void *ctx);
/* Non-zero when some block has passed the dead threshold. */
int arena_compact_needed(const arena *a);

void arena_stats_get(const arena *a, arena_stats *st);
/* Sum over every arena of the process. Live/dead/entries lag each arena by
 * less than 16 KiB of changes (they are flushed in batches to keep atomics
 * off the hot path); blocks, bytes and HugeTLB bytes are exact. */
void arena_global_stats(arena_stats *st);
/* Memory the arena holds: blocks plus its descriptor table. */
size_t arena_mem_bytes(const arena *a);

/* Walk every block and check every invariant; 0 if consistent, else a
 * negative line-specific code (tests, DEBUG). */
int arena_check(const arena *a);

/* Fault injection for tests: the n-th block allocation from now fails
 * (once); 0 turns it off. */
void arena_set_fault(int n);

#endif
