/* arena.c -- chunked, bump-allocated arena with compact references.
 *
 * Blocks. An arena is a table of block descriptors; a block id is the index
 * of its descriptor. Regular blocks grow geometrically: a new block is the
 * smallest power of two >= max(first_block, the entry, the bytes already in
 * regular blocks), capped at the chunk size (2 MiB by default), so a 3-field
 * hash costs one 256-byte block while a 1M-field hash is almost all full
 * chunks. A block that has grown to the chunk size is frozen at that size:
 * every later block is a full chunk, taken from the mem/hugetlb provider
 * (one HugeTLB page per 2 MiB chunk when --arena-hugetlb is on and the pool
 * has pages, ordinary pages otherwise). Smaller blocks come from malloc. An
 * entry larger than a chunk gets a dedicated block of its own.
 *
 * Entries. Appended at the active block's bump offset (aligned to
 * 1<<ref_shift): a varint prefix, then the payload. Prefix byte 0 holds the
 * DEAD flag (bit 7), a continuation flag (bit 6) and the low 6 bits of the
 * length; continuation bytes are LEB128. A pair arena (a hash's large form)
 * has no such prefix: its entries are (field, value) pairs whose own header
 * gives both lengths (arena.h, arena_pair_header), one byte for short pairs
 * where a prefix and a field length would take two, and a freed entry is
 * rewritten as a DEAD byte and its size. Either way a block is walkable from
 * offset 0 to its bump offset, which compaction and arena_check rely on.
 * When a new block is opened because an entry did not fit, the active block
 * becomes whichever of the old and the new one has more room left.
 *
 * References. ref = block_id << off_bits | offset >> ref_shift, with
 * off_bits = log2(chunk) - ref_shift; 21 + 11 bits for 2 MiB chunks, so 2047
 * blocks (4 GiB, the top id is reserved for ARENA_REF_NONE). Dedicated
 * blocks use offset 0 only. Past the limit arena_alloc returns ARENA_EFULL;
 * an arena expected to outgrow 4 GiB is created with ref_shift > 0 (entries
 * aligned to 2^ref_shift bytes, refs reach 4 GiB << ref_shift).
 *
 * Freeing marks the prefix DEAD and counts the entry's bytes dead in its
 * block, except at the active block's tail, where the bump offset simply
 * moves back. A block whose last live entry goes is given back at once (the
 * active block is reset instead; an arena with no entries holds no memory).
 *
 * Compaction picks the non-active block with the most dead bytes past
 * dead_pct of its size (or, when there is none and the arena's live bytes
 * fit in a quarter of the active block, opens a block of twice those bytes
 * as the active one and picks the old) and walks it from a saved offset,
 * copying each live entry through the ordinary allocation path (never into
 * the victim, which is not active and never becomes active) and reporting
 * (old ref, new ref) to the caller's callback while both copies are still
 * valid, then freeing the old one; a step moves a bounded number of bytes.
 * When the victim's last live entry has moved, the block is freed.
 *
 * Invariants (checked by arena_check): for every block, walking [0, used)
 * finds exactly live entries of live_bytes and dead entries of dead_bytes;
 * arena totals are sums over blocks; only the active block may be empty, and
 * then its bump offset is 0; the victim is never the active block; entries
 * never move except in arena_compact_step. */
#include "util/varint.h"
#include "ds/arena.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mem/hugetlb.h"

#define NO_BLOCK UINT32_MAX

enum { BK_FREE = 0, BK_SMALL, BK_FULL, BK_ONE };

struct arena_block {
    unsigned char *mem;   /* NULL for a free descriptor */
    size_t size;
    size_t used;          /* bump offset */
    size_t live_bytes;
    size_t dead_bytes;
    uint32_t live;        /* live entries; next free id while BK_FREE */
    uint8_t kind;
    uint8_t huge;
};

#define HDR_DEAD 0x80u
#define HDR_MORE 0x40u
#define HDR_LOW 0x3fu

/* Global counters (every arena of the process). */
static atomic_uint_fast64_t g_blocks, g_bytes_alloc, g_live, g_dead, g_huge, g_entries;
static atomic_uint_fast64_t g_fallbacks, g_compactions, g_moved;
static atomic_size_t g_default_chunk = ARENA_CHUNK_DEFAULT;
static atomic_int g_fault;

#define FLUSH_BYTES 16384

/* ---- entry prefix ---- */

static inline size_t hdr_size(size_t len) {
    size_t n = 1;
    for (len >>= 6; len; len >>= 7) n++;
    return n;
}

static inline void hdr_write(unsigned char *p, size_t len) {
    unsigned char b = (unsigned char)(len & HDR_LOW);
    len >>= 6;
    if (len) b |= HDR_MORE;
    *p++ = b;
    while (len) {
        b = (unsigned char)(len & 0x7f);
        len >>= 7;
        if (len) b |= 0x80;
        *p++ = b;
    }
}

static inline size_t hdr_read(const unsigned char *p, size_t *len) {
    size_t v = p[0] & HDR_LOW;
    if (!(p[0] & HDR_MORE)) {
        *len = v;
        return 1;
    }
    size_t n = 1;
    unsigned sh = 6;
    for (;;) {
        unsigned char b = p[n++];
        v |= (size_t)(b & 0x7f) << sh;
        sh += 7;
        if (!(b & 0x80)) break;
    }
    *len = v;
    return n;
}

/* The entry at p, live or dead: its prefix bytes (0 in a pair arena, where
 * the payload is the whole entry), its payload length and whether it is
 * dead. The entry occupies prefix + *len bytes. */
static inline size_t entry_read(const arena *a, const unsigned char *p, size_t *len, int *dead) {
    if (!a->pairs) {
        *dead = (p[0] & HDR_DEAD) != 0;
        return hdr_read(p, len);
    }
    if (p[0] == ARENA_PAIR_DEAD) {
        *dead = 1;
        varint_get(p + 1, len);
        return 0;
    }
    size_t fl, vl, hs = arena_pair_header(p, &fl, &vl);
    *dead = 0;
    *len = hs + fl + vl;
    return 0;
}

/* Mark the entry at p (prefix + len bytes) dead. */
static inline void entry_kill(const arena *a, unsigned char *p, size_t len) {
    if (!a->pairs) {
        p[0] |= HDR_DEAD;
        return;
    }
    assert(len >= 2 && 1 + varint_size(len) <= len);
    p[0] = ARENA_PAIR_DEAD;
    varint_put(p + 1, len);
}

size_t arena_entry_size(const arena *a, size_t len) { return a->pairs ? len : hdr_size(len) + len; }

/* ---- helpers ---- */

static inline size_t chunk_of(const arena *a) { return (size_t)1 << a->chunk_shift; }
static inline size_t align_up(const arena *a, size_t v) {
    size_t m = ((size_t)1 << a->ref_shift) - 1;
    return (v + m) & ~m;
}
static inline arena_ref make_ref(const arena *a, uint32_t id, size_t off) {
    return ((arena_ref)id << a->off_bits) | (arena_ref)(off >> a->ref_shift);
}
static inline uint32_t ref_block(const arena *a, arena_ref r) { return r >> a->off_bits; }
static inline size_t ref_off(const arena *a, arena_ref r) {
    return (size_t)(r & (((arena_ref)1 << a->off_bits) - 1)) << a->ref_shift;
}
static inline int pow2(size_t v) { return v && !(v & (v - 1)); }

static void stats_flush(arena *a) {
    if (a->live_bytes != a->g_live) {
        atomic_fetch_add_explicit(&g_live, (uint64_t)a->live_bytes - (uint64_t)a->g_live, memory_order_relaxed);
        a->g_live = a->live_bytes;
    }
    if (a->dead_bytes != a->g_dead) {
        atomic_fetch_add_explicit(&g_dead, (uint64_t)a->dead_bytes - (uint64_t)a->g_dead, memory_order_relaxed);
        a->g_dead = a->dead_bytes;
    }
    if (a->entries != a->g_entries) {
        atomic_fetch_add_explicit(&g_entries, a->entries - a->g_entries, memory_order_relaxed);
        a->g_entries = a->entries;
    }
}

static inline void stats_maybe_flush(arena *a) {
    size_t dl = a->live_bytes > a->g_live ? a->live_bytes - a->g_live : a->g_live - a->live_bytes;
    size_t dd = a->dead_bytes > a->g_dead ? a->dead_bytes - a->g_dead : a->g_dead - a->dead_bytes;
    if (dl + dd >= FLUSH_BYTES) stats_flush(a);
}

void arena_set_fault(int n) { atomic_store(&g_fault, n); }

static int fault_hit(void) {
    int v = atomic_load_explicit(&g_fault, memory_order_relaxed);
    while (v > 0) {
        if (atomic_compare_exchange_weak(&g_fault, &v, v - 1)) return v == 1;
    }
    return 0;
}

/* ---- configuration ---- */

static int chunk_valid(size_t chunk) { return pow2(chunk) && chunk >= ARENA_CHUNK_MIN && chunk <= ARENA_CHUNK_MAX; }

int arena_set_default_chunk(size_t chunk) {
    if (!chunk_valid(chunk)) return ARENA_EINVAL;
    atomic_store(&g_default_chunk, chunk);
    return ARENA_OK;
}

size_t arena_default_chunk(void) { return atomic_load_explicit(&g_default_chunk, memory_order_relaxed); }

int arena_init(arena *a, const arena_config *cfg) {
    memset(a, 0, sizeof(*a));
    size_t chunk = cfg && cfg->chunk ? cfg->chunk : arena_default_chunk();
    size_t first = cfg && cfg->first_block ? cfg->first_block : ARENA_FIRST_DEFAULT;
    unsigned shift = cfg ? cfg->ref_shift : 0;
    unsigned pct = cfg && cfg->compact_dead_pct ? cfg->compact_dead_pct : ARENA_DEAD_PCT_DEFAULT;
    if (!chunk_valid(chunk) || !pow2(first) || first < 64 || first > chunk || shift > 6 || pct > 100)
        return ARENA_EINVAL;
    a->chunk_shift = (uint8_t)__builtin_ctzll(chunk);
    a->first_shift = (uint8_t)__builtin_ctzll(first);
    a->ref_shift = (uint8_t)shift;
    a->off_bits = (uint8_t)(a->chunk_shift - shift);
    a->dead_pct = (uint8_t)pct;
    a->pairs = cfg && cfg->pairs;
    /* The top id is reserved: its last offset would spell ARENA_REF_NONE. */
    uint32_t id_limit = (uint32_t)((1ull << (32 - a->off_bits)) - 1);
    a->max_blocks = cfg && cfg->max_blocks && cfg->max_blocks < id_limit ? cfg->max_blocks : id_limit;
    a->free_id = a->active = a->victim = NO_BLOCK;
    return ARENA_OK;
}

/* ---- blocks ---- */

static int block_new(arena *a, size_t size, int one, uint32_t *idp) {
    if (a->blocks >= a->max_blocks) return ARENA_EFULL;
    if (fault_hit()) return ARENA_ENOMEM;
    if (a->free_id == NO_BLOCK && a->nblk == a->capblk) {
        uint32_t nc = a->capblk ? a->capblk * 2 : 2;
        if (nc > a->max_blocks) nc = a->max_blocks;
        assert(nc > a->nblk);
        struct arena_block *t = realloc(a->blk, (size_t)nc * sizeof(*t));
        if (!t) return ARENA_ENOMEM;
        a->blk = t;
        a->capblk = nc;
    }
    unsigned char *mem;
    int huge = 0;
    uint8_t kind;
    if (one) {
        kind = BK_ONE;
        mem = malloc(size);
    } else if (size == chunk_of(a)) {
        kind = BK_FULL;
        mem = hugetlb_alloc_block(size, &huge);
        if (mem && !huge && hugetlb_enabled() && size % hugetlb_page_size() == 0) {
            a->fallbacks++;
            atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
        }
    } else {
        kind = BK_SMALL;
        mem = malloc(size);
    }
    if (!mem) return ARENA_ENOMEM;

    uint32_t id;
    if (a->free_id != NO_BLOCK) {
        id = a->free_id;
        a->free_id = a->blk[id].live;
    } else {
        id = a->nblk++;
    }
    struct arena_block *b = &a->blk[id];
    memset(b, 0, sizeof(*b));
    b->mem = mem;
    b->size = size;
    b->kind = kind;
    b->huge = (uint8_t)huge;
    a->blocks++;
    a->bytes_alloc += size;
    if (!one) a->regular_bytes += size;
    if (huge) a->huge_bytes += size;
    atomic_fetch_add_explicit(&g_blocks, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_bytes_alloc, size, memory_order_relaxed);
    if (huge) atomic_fetch_add_explicit(&g_huge, size, memory_order_relaxed);
    *idp = id;
    return ARENA_OK;
}

/* Give a block's memory back and forget its byte counts (not its entries). */
static void block_unmap(arena *a, struct arena_block *b) {
    if (b->kind == BK_FULL)
        hugetlb_free_block(b->mem, b->size, b->huge);
    else
        free(b->mem);
    a->blocks--;
    a->bytes_alloc -= b->size;
    if (b->kind != BK_ONE) a->regular_bytes -= b->size;
    if (b->huge) a->huge_bytes -= b->size;
    a->dead_bytes -= b->dead_bytes;
    atomic_fetch_sub_explicit(&g_blocks, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&g_bytes_alloc, b->size, memory_order_relaxed);
    if (b->huge) atomic_fetch_sub_explicit(&g_huge, b->size, memory_order_relaxed);
    b->mem = NULL;
    b->kind = BK_FREE;
}

static void block_release(arena *a, uint32_t id) {
    struct arena_block *b = &a->blk[id];
    assert(b->mem && b->live == 0 && b->live_bytes == 0);
    block_unmap(a, b);
    if (a->active == id) a->active = NO_BLOCK;
    if (a->victim == id) a->victim = NO_BLOCK;
    b->live = a->free_id;
    a->free_id = id;
    stats_flush(a);
}

static void release_all(arena *a) {
    for (uint32_t id = 0; id < a->nblk; id++)
        if (a->blk[id].mem) block_unmap(a, &a->blk[id]);
    free(a->blk);
    a->blk = NULL;
    a->nblk = a->capblk = 0;
    a->free_id = a->active = a->victim = NO_BLOCK;
    a->vpos = 0;
    a->entries = 0;
    a->live_bytes = a->dead_bytes = 0;
    assert(a->blocks == 0 && a->bytes_alloc == 0 && a->regular_bytes == 0 && a->huge_bytes == 0);
    stats_flush(a);
}

void arena_destroy(arena *a) { release_all(a); }

/* Size of the next regular block for an entry of need bytes (need <= chunk). */
static size_t grow_size(const arena *a, size_t need) {
    size_t chunk = chunk_of(a), size = (size_t)1 << a->first_shift;
    size_t target = a->regular_bytes > need ? a->regular_bytes : need;
    while (size < target && size < chunk) size <<= 1;
    assert(size >= need);
    return size;
}

static inline size_t room(const arena *a, const struct arena_block *b) {
    size_t off = align_up(a, b->used);
    return off < b->size ? b->size - off : 0;
}

/* ---- entries ---- */

int arena_alloc(arena *a, size_t len, arena_ref *ref, void **ptr) {
    if (len > ARENA_MAX_ENTRY) return ARENA_EINVAL;
    assert(!a->pairs || len >= 2);
    size_t hs = a->pairs ? 0 : hdr_size(len), need = hs + len;
    uint32_t id;
    size_t off = 0;
    if (need > chunk_of(a)) {
        int rc = block_new(a, need, 1, &id);
        if (rc) return rc;
    } else if (a->active != NO_BLOCK && room(a, &a->blk[a->active]) >= need) {
        id = a->active;
        off = align_up(a, a->blk[id].used);
    } else {
        size_t size = grow_size(a, need);
        int rc = block_new(a, size, 0, &id);
        if (rc) return rc;
        if (a->active == NO_BLOCK || room(a, &a->blk[a->active]) < size - need) a->active = id;
    }
    struct arena_block *b = &a->blk[id];
    unsigned char *p = b->mem + off;
    if (!a->pairs) hdr_write(p, len);
    b->used = off + need;
    b->live++;
    b->live_bytes += need;
    a->entries++;
    a->live_bytes += need;
    *ref = make_ref(a, id, off);
    *ptr = p + hs;
    stats_maybe_flush(a);
    return ARENA_OK;
}

int arena_put(arena *a, const void *data, size_t len, arena_ref *ref) {
    void *p;
    int rc = arena_alloc(a, len, ref, &p);
    if (rc == ARENA_OK && len) memcpy(p, data, len);
    return rc;
}

void *arena_get(const arena *a, arena_ref ref, size_t *len) {
    uint32_t id = ref_block(a, ref);
    size_t off = ref_off(a, ref);
    assert(id < a->nblk);
    const struct arena_block *b = &a->blk[id];
    assert(b->mem && off < b->used);
    unsigned char *p = b->mem + off;
    size_t l;
    int dead;
    size_t hs = entry_read(a, p, &l, &dead);
    assert(!dead);
    (void)dead;
    if (len) *len = l;
    return p + hs;
}

void arena_prefetch(const arena *a, arena_ref ref) {
    uint32_t id = ref_block(a, ref);
    if (id < a->nblk && a->blk[id].mem) __builtin_prefetch(a->blk[id].mem + ref_off(a, ref));
}

void arena_free(arena *a, arena_ref ref) {
    uint32_t id = ref_block(a, ref);
    size_t off = ref_off(a, ref);
    assert(id < a->nblk);
    struct arena_block *b = &a->blk[id];
    assert(b->mem && off < b->used);
    unsigned char *p = b->mem + off;
    size_t len;
    int dead;
    size_t sz = entry_read(a, p, &len, &dead) + len;
    assert(!dead); /* double free */
    (void)dead;
    entry_kill(a, p, sz);
    b->live--;
    b->live_bytes -= sz;
    a->entries--;
    a->live_bytes -= sz;
    if (a->entries == 0) {
        release_all(a);
        return;
    }
    if (b->live == 0) {
        if (id == a->active) {
            a->dead_bytes -= b->dead_bytes;
            b->dead_bytes = 0;
            b->used = 0;
            stats_maybe_flush(a);
        } else {
            block_release(a, id);
        }
        return;
    }
    if (id == a->active && off + sz == b->used) {
        b->used = off; /* the tail entry: just move the bump offset back */
    } else {
        b->dead_bytes += sz;
        a->dead_bytes += sz;
    }
    stats_maybe_flush(a);
}

int arena_pair_alloc(arena *a, size_t flen, size_t vlen, arena_ref *ref, void **field, void **value) {
    assert(a->pairs);
    int one = flen <= ARENA_PAIR_FMAX && vlen <= ARENA_PAIR_VMAX && flen + vlen > 0;
    size_t hs = one ? 1 : 1 + varint_size(flen) + varint_size(vlen);
    if (flen > ARENA_MAX_ENTRY - 32 || vlen > ARENA_MAX_ENTRY - 32 - flen) return ARENA_EINVAL;
    void *p;
    int rc = arena_alloc(a, hs + flen + vlen, ref, &p);
    if (rc) return rc;
    unsigned char *q = p;
    if (one) {
        q[0] = (unsigned char)(flen * (ARENA_PAIR_VMAX + 1) + vlen - 1);
    } else {
        q[0] = ARENA_PAIR_LONG;
        size_t n = 1 + varint_put(q + 1, flen);
        varint_put(q + n, vlen);
    }
    *field = q + hs;
    *value = q + hs + flen;
    return ARENA_OK;
}

void arena_pair_get(const arena *a, arena_ref ref, const void **field, size_t *flen, const void **value,
                    size_t *vlen) {
    size_t len, fl, vl;
    const unsigned char *p = arena_get(a, ref, &len);
    size_t hs = arena_pair_header(p, &fl, &vl);
    assert(hs + fl + vl == len);
    *field = p + hs;
    *flen = fl;
    *value = p + hs + fl;
    *vlen = vl;
}

/* ---- compaction ---- */

static uint32_t pick_victim(const arena *a) {
    uint32_t best = NO_BLOCK;
    size_t best_dead = 0;
    for (uint32_t id = 0; id < a->nblk; id++) {
        const struct arena_block *b = &a->blk[id];
        if (!b->mem || b->kind == BK_ONE || id == a->active || b->dead_bytes == 0) continue;
        if (b->dead_bytes * 100 < (size_t)a->dead_pct * b->size) continue;
        if (b->dead_bytes > best_dead) {
            best_dead = b->dead_bytes;
            best = id;
        }
    }
    return best;
}

/* The size of the block that replaces a sparse active block: room for
 * twice the arena's live bytes, at least the first block's size; 0 when
 * the active block is not sparse, i.e. unless those live bytes fit in a
 * quarter of it (a collection that shrank keeps its survivors in the
 * block it last grew into, which compaction does not pick; one that grows
 * has about as many live bytes as its newest block holds). */
static size_t active_shrink_size(const arena *a) {
    if (a->active == NO_BLOCK) return 0;
    const struct arena_block *b = &a->blk[a->active];
    size_t size = (size_t)1 << a->first_shift;
    if (b->size <= size || a->live_bytes * 4 > b->size) return 0;
    while (size < 2 * a->live_bytes) size <<= 1;
    return size;
}

int arena_compact_needed(const arena *a) {
    if (a->victim != NO_BLOCK) return 1;
    return (a->dead_bytes && pick_victim(a) != NO_BLOCK) || active_shrink_size(a) != 0;
}

int arena_compact_step(arena *a, size_t budget, arena_move_fn *fn, void *ctx) {
    if (a->victim == NO_BLOCK) {
        a->victim = pick_victim(a);
        size_t size;
        if (a->victim == NO_BLOCK && (size = active_shrink_size(a)) != 0) {
            if (a->blk[a->active].live == 0) {
                /* Nothing to move: the next entry opens a block of its own. */
                block_release(a, a->active);
                return arena_compact_needed(a);
            }
            /* A smaller block becomes the active one; the old one is the
             * victim, its entries move into the new block. */
            uint32_t id;
            int rc = block_new(a, size, 0, &id);
            if (rc) return rc;
            a->victim = a->active;
            a->active = id;
        }
        if (a->victim == NO_BLOCK) return 0;
        a->vpos = 0;
    }
    const uint32_t vid = a->victim;
    size_t moved = 0;
    for (;;) {
        struct arena_block *vb = &a->blk[vid];
        assert(vb->mem && vb->live > 0 && a->vpos < vb->used);
        unsigned char *p = vb->mem + a->vpos;
        size_t len;
        int dead;
        size_t hs = entry_read(a, p, &len, &dead), sz = hs + len;
        if (dead) {
            a->vpos = align_up(a, a->vpos + sz);
            continue;
        }
        if (moved && moved + len > budget) return 1;
        arena_ref to;
        void *np;
        int rc = arena_alloc(a, len, &to, &np);
        if (rc) return rc;
        assert(ref_block(a, to) != vid);
        vb = &a->blk[vid]; /* the descriptor table may have moved */
        memcpy(np, vb->mem + a->vpos + hs, len);
        arena_ref from = make_ref(a, vid, a->vpos);
        a->vpos = align_up(a, a->vpos + sz);
        a->moved++;
        atomic_fetch_add_explicit(&g_moved, 1, memory_order_relaxed);
        moved += len ? len : 1;
        /* Both copies are valid during the callback, so an index whose
         * hash or compare reads the arena may still meet `from`. */
        fn(ctx, from, to, np, len);
        arena_free(a, from); /* releases the victim with its last entry */
        if (a->victim == NO_BLOCK) {
            a->compactions++;
            atomic_fetch_add_explicit(&g_compactions, 1, memory_order_relaxed);
            return arena_compact_needed(a);
        }
    }
}

/* ---- stats and checks ---- */

void arena_stats_get(const arena *a, arena_stats *st) {
    st->blocks = a->blocks;
    st->bytes_alloc = a->bytes_alloc;
    st->bytes_used = a->live_bytes + a->dead_bytes;
    st->live_bytes = a->live_bytes;
    st->dead_bytes = a->dead_bytes;
    st->hugetlb_bytes = a->huge_bytes;
    st->entries = a->entries;
    st->fallbacks = a->fallbacks;
    st->compactions = a->compactions;
    st->moved = a->moved;
}

void arena_global_stats(arena_stats *st) {
    st->blocks = atomic_load_explicit(&g_blocks, memory_order_relaxed);
    st->bytes_alloc = atomic_load_explicit(&g_bytes_alloc, memory_order_relaxed);
    st->live_bytes = atomic_load_explicit(&g_live, memory_order_relaxed);
    st->dead_bytes = atomic_load_explicit(&g_dead, memory_order_relaxed);
    st->bytes_used = st->live_bytes + st->dead_bytes;
    st->hugetlb_bytes = atomic_load_explicit(&g_huge, memory_order_relaxed);
    st->entries = atomic_load_explicit(&g_entries, memory_order_relaxed);
    st->fallbacks = atomic_load_explicit(&g_fallbacks, memory_order_relaxed);
    st->compactions = atomic_load_explicit(&g_compactions, memory_order_relaxed);
    st->moved = atomic_load_explicit(&g_moved, memory_order_relaxed);
}

size_t arena_mem_bytes(const arena *a) { return a->bytes_alloc + (size_t)a->capblk * sizeof(struct arena_block); }

int arena_check(const arena *a) {
    size_t blocks = 0, alloc = 0, regular = 0, live_b = 0, dead_b = 0, huge = 0;
    uint64_t entries = 0;
    size_t chunk = chunk_of(a), first = (size_t)1 << a->first_shift;
    if (a->nblk > a->capblk || a->blocks > a->max_blocks) return -__LINE__;
    for (uint32_t id = 0; id < a->nblk; id++) {
        const struct arena_block *b = &a->blk[id];
        if (!b->mem) {
            if (b->kind != BK_FREE) return -__LINE__;
            continue;
        }
        blocks++;
        alloc += b->size;
        if (b->huge) huge += b->size;
        if (b->used > b->size) return -__LINE__;
        switch (b->kind) {
        case BK_SMALL:
            if (!pow2(b->size) || b->size < first || b->size >= chunk) return -__LINE__;
            break;
        case BK_FULL:
            if (b->size != chunk) return -__LINE__;
            break;
        case BK_ONE:
            if (b->live != 1 || b->used != b->size || b->size <= chunk) return -__LINE__;
            break;
        default:
            return -__LINE__;
        }
        if (b->kind != BK_ONE) regular += b->size;
        size_t pos = 0, lb = 0, db = 0;
        uint32_t live = 0;
        while (pos < b->used) {
            size_t len;
            int dead;
            size_t sz = entry_read(a, b->mem + pos, &len, &dead) + len;
            if (pos + sz > b->used || (a->pairs && sz < 2)) return -__LINE__;
            if (dead) {
                db += sz;
            } else {
                live++;
                lb += sz;
            }
            pos = align_up(a, pos + sz);
        }
        if (pos != align_up(a, b->used)) return -__LINE__;
        if (live != b->live || lb != b->live_bytes || db != b->dead_bytes) return -__LINE__;
        if (live == 0 && (id != a->active || b->used != 0)) return -__LINE__;
        live_b += lb;
        dead_b += db;
        entries += live;
    }
    uint32_t nfree = 0;
    for (uint32_t id = a->free_id; id != NO_BLOCK; id = a->blk[id].live) {
        if (id >= a->nblk || a->blk[id].mem || ++nfree > a->nblk) return -__LINE__;
    }
    if (blocks != a->blocks || nfree + blocks != a->nblk) return -__LINE__;
    if (alloc != a->bytes_alloc || regular != a->regular_bytes || huge != a->huge_bytes) return -__LINE__;
    if (live_b != a->live_bytes || dead_b != a->dead_bytes || entries != a->entries) return -__LINE__;
    if (a->active != NO_BLOCK && (a->active >= a->nblk || !a->blk[a->active].mem || a->blk[a->active].kind == BK_ONE))
        return -__LINE__;
    if (a->victim != NO_BLOCK && (a->victim == a->active || a->victim >= a->nblk || !a->blk[a->victim].mem))
        return -__LINE__;
    /* (a descriptor table may outlive a failed first block: it is freed by
     * arena_destroy or when the arena next empties) */
    if (entries == 0 && a->blocks) return -__LINE__;
    return 0;
}
