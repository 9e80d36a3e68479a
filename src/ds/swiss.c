/* swiss.c -- open-addressing hash index, SSE2 groups, split in parts that
 * grow independently and incrementally.
 *
 * Layout. A table (swiss_tab) is ngroups groups of 16 slots. Each slot has
 * one control byte: EMPTY (0x00, so zeroed memory is an empty table),
 * DELETED (0x01) or FULL (0x80 | the low 7 bits of the element's hash). A
 * group is stored as its 16 control bytes followed by its 16 slots (80
 * bytes with 4-byte slots), so a lookup's control bytes and the slot it
 * then reads are adjacent: one random page and usually one or two cache
 * lines per probe, where separate control and slot arrays cost two pages. A
 * lookup hashes once: bits 0..6 are the tag, bits 7..38 the element's 32-bit
 * hash position pos. One SSE2 compare of the 16 control bytes against the tag
 * yields the candidates of a group; the probe moves to the next group
 * (linearly, wrapping) until a group that has an EMPTY byte, which ends every
 * probe chain.
 *
 * Parts. A small index is one part (s->one, group counts powers of two).
 * When that part would grow past SWISS_SPLIT_GROUPS groups it is split, once
 * and in one bounded step (at most ~3.6K elements), into SWISS_NPARTS parts
 * (a table may ask to split earlier, at 1/2, 1/4 or 1/8 of that size, so
 * that tables growing side by side do not all split at once):
 * part i holds the elements whose pos has i in its top SWISS_PART_BITS bits.
 * Every part resizes on its own (same size to drop tombstones, shrink below
 * 1/8) and parts start at staggered sizes ((NPARTS + i) << k groups for part
 * i), so with a uniform hash they reach 15/16 at different totals.
 *
 * Growth. A part doubles at the maximum load of 15/16 (the single part's
 * group counts are powers of two); a part of a split index whose type asks
 * for it (swiss_type.grow_div = d) grows by 1/d instead, to any group count
 * (and shrinks to any): by a quarter for the key index, by a half for the
 * large form of collections. The mean load over a growing index is
 * 15/16 * (1 - 1/g) / ln g for growth factor g: 0.68 when doubling (the
 * load swings between 15/32 and 15/16), 0.77 for g = 3/2 (5/8 to 15/16),
 * 0.84 for g = 5/4 (3/4 to 15/16); with 4-byte slots, 5 B/slot / load =
 * 7.4, 6.5 and 5.95 B per element. The price is moves: a doubling table
 * moves each element once on average while it grows, g = 3/2 twice, g =
 * 5/4 four times (each move hashes the element, which reads it). A fuller
 * table makes a lookup that misses probe further (13/16 to 7/8: ~10 %);
 * from 7/8 to 15/16 the server's CPU per SET, GET, HSET, HGET, SADD and
 * ZADD did not move (docs/benchmarks.md section 5).
 * Only one part (1/16 of the index) is ever copied by one resize, so the
 * transient peak is small.
 *
 * Below a third of the split point the parts merge back into one (bounded
 * the same way).
 *
 * Home group. Within a part the in-part position q (pos without the part
 * bits, left-aligned in 32 bits) picks the home group by a multiply-shift:
 * home = q * ngroups >> 32. Home groups are thus contiguous, ordered ranges
 * of hash positions for any group count; that is what makes the scan below
 * independent of sizes.
 *
 * Invariant (chains). An element whose home group is g sits in the first
 * group of g, g+1, ... (mod ngroups) that had a free byte when it was
 * inserted, so every group between g and its position has no EMPTY byte.
 * Deletes write DELETED, never EMPTY, so chains only break when a whole table
 * is rebuilt. Load (live + deleted) stays at most 15/16, so a chain always
 * ends. Lookups and the scan rely on this.
 *
 * Resize. A part resizes into its t[1], moving t[0] a group at a time: a
 * find/insert/delete moves one group (of the part it touches if that one is
 * resizing, else of the lowest resizing part) -- while that part grows, only
 * one operation in the type's grow_pace does -- and the server's cron calls
 * swiss_rehash_step() when idle. New tables are zeroed memory (EMPTY is
 * 0x00) that costs no O(capacity) work to get (see tab_mem_alloc). Moved
 * slots become DELETED in t[0], so its chains stay intact until it is freed.
 * New elements go to t[1]. No call pays for more than one group plus a
 * probe, except: the insert that starts a part's next resize finishes its
 * previous one (when one is still in flight), the one-off split/merge
 * (bounded by SWISS_SPLIT_GROUPS), and freeing a part's old table (1/16 of
 * the index; a big one is unmapped by mem/reclaim's thread).
 *
 * Scan. The cursor is a hash position (0 .. 2^32-1; 0 also means done). A
 * call visits the home group that contains the cursor in the cursor's part,
 * in t[0] and t[1] if resizing, and reports the elements whose position is
 * in [cursor, end), where end is the nearest group boundary of either table;
 * it returns end. Ranges of successive calls are disjoint and increasing and
 * cover [0, 2^32) whatever the sizes were at each call, so every element
 * present for the whole scan is reported exactly once. */
#include "swiss.h"

#include <assert.h>
#include <emmintrin.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mem/reclaim.h"

#ifndef GOBLIN_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#define CTRL_EMPTY ((uint8_t)0x00)
#define CTRL_DELETED ((uint8_t)0x01)
#define CTRL_FULL_BIT 0x80

/* One part grows up to this many groups (4096 slots, 3584 elements) before
 * the index splits into SWISS_NPARTS parts (fewer after
 * swiss_set_split_shift). */
#define SWISS_SPLIT_GROUPS 256
#define SWISS_SPLIT_SHIFT_MAX 3
/* Parts merge back into one below 4 elements per split group (1024 by
 * default; hysteresis: a third of the split point), once no part is
 * resizing and the capacity is at most 8 times the split point's. */
#define SWISS_MERGE_PER_GROUP 4
#define SWISS_MERGE_SLOTS_PER_GROUP (8 * SWISS_GROUP)

static inline size_t split_groups(const swiss *s) { return (size_t)SWISS_SPLIT_GROUPS >> s->split_shift; }

static inline size_t tab_cap(const swiss_tab *t) { return t->ngroups * SWISS_GROUP; }
/* Maximum load (live + deleted) of a table: LOAD_NUM / LOAD_DEN. */
#define LOAD_NUM 15 /* 15/16 */
#define LOAD_DEN 16
static inline size_t tab_max_load(const swiss_tab *t) { return tab_cap(t) / LOAD_DEN * LOAD_NUM; }
static inline uint32_t hash_pos(uint64_t h) { return (uint32_t)(h >> 7); }
static inline size_t home_group(uint32_t q, size_t ngroups) { return (size_t)(((uint64_t)q * ngroups) >> 32); }
/* First in-part position whose home group is past g (2^32 for the last). */
static inline uint64_t group_end(size_t g, size_t ngroups) {
    return (((uint64_t)(g + 1) << 32) + ngroups - 1) / ngroups;
}
static inline uint8_t hash_tag(uint64_t h) { return (uint8_t)(CTRL_FULL_BIT | (h & 0x7f)); }
static inline int ctrl_full(uint8_t c) { return (c & CTRL_FULL_BIT) != 0; }

static inline unsigned part_shift(const swiss *s) { return s->parts ? SWISS_PART_BITS : 0; }
static inline unsigned nparts(const swiss *s) { return s->parts ? SWISS_NPARTS : 1; }
static inline swiss_part *part_at(swiss *s, unsigned i) { return s->parts ? &s->parts[i] : &s->one; }
static inline unsigned part_index(const swiss *s, const swiss_part *p) {
    return s->parts ? (unsigned)(p - s->parts) : 0;
}
/* The part of hash position pos and the in-part position q. */
static inline swiss_part *part_for(swiss *s, uint32_t pos, uint32_t *q) {
    if (!s->parts) {
        *q = pos;
        return &s->one;
    }
    *q = pos << SWISS_PART_BITS;
    return &s->parts[pos >> (32 - SWISS_PART_BITS)];
}

/* Bytes of one group: 16 control bytes and 16 slots (a multiple of 16, so
 * every group's control bytes stay 16-byte aligned for the SSE2 loads). */
static inline size_t group_bytes(const swiss *s) { return SWISS_GROUP * (1 + (size_t)s->type->slot_size); }
static inline uint8_t *group_ctrl(const swiss *s, const swiss_tab *t, size_t g) {
    return t->mem + g * group_bytes(s);
}
static inline uint8_t *ctrl_at(const swiss *s, const swiss_tab *t, size_t i) {
    return group_ctrl(s, t, i / SWISS_GROUP) + i % SWISS_GROUP;
}
static inline unsigned char *slot_at(const swiss *s, const swiss_tab *t, size_t i) {
    return group_ctrl(s, t, i / SWISS_GROUP) + SWISS_GROUP + (i % SWISS_GROUP) * s->type->slot_size;
}

static inline unsigned group_match(const uint8_t *ctrl, uint8_t tag) {
    __m128i g = _mm_load_si128((const __m128i *)ctrl);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(g, _mm_set1_epi8((char)tag)));
}
static inline unsigned group_empty(const uint8_t *ctrl) { return group_match(ctrl, CTRL_EMPTY); }
/* FULL bytes have the high bit set; EMPTY and DELETED never do. */
static inline unsigned group_free(const uint8_t *ctrl) {
    return ~(unsigned)_mm_movemask_epi8(_mm_load_si128((const __m128i *)ctrl)) & 0xFFFFu;
}

/* Table memory. Zero bytes are EMPTY, so zeroed memory is a valid empty
 * table. A big one (SWISS_MAP_MIN bytes or more) is mapped directly: fresh
 * anonymous pages read as zero without being touched, so starting a resize
 * costs O(1) and the pages fault in as incremental moves and new inserts
 * reach them. A small one (under SWISS_ZERO_MIN) comes from the heap
 * unzeroed, and only its control bytes are set EMPTY (16 per group of 16
 * slots): a zeroed allocation served from recently freed pages is zeroed
 * by jemalloc with madvise(MADV_DONTNEED), a system call and a fault per
 * page each time (a set of 2,000 members copied and freed 40,000 times
 * spent a third of its time there). A middle one is asked for zeroed all
 * the same: jemalloc zeroes recycled pages by giving them back, so the
 * rest of the size class (up to a quarter more than asked for) and the
 * slots never written stay out of the resident set, where an unzeroed one
 * keeps every recycled page resident (0.35 B per member of a 1M-member
 * set, whose index parts are 300-600 KiB). Zeroing 2-6 MB part tables
 * took 0.3-1.8 ms, calloc timed under an LD_PRELOAD shim, hence the
 * mapping above 1 MiB. Mapped bytes are counted for used_memory, which
 * reads the allocator's statistics and would not see them. */
#ifdef __SANITIZE_ADDRESS__
/* ASan builds keep every table on the heap: ASan puts redzones around heap
 * chunks and LeakSanitizer scans them for pointers (the key index's slots
 * point at entries); it does neither for a private mapping. */
#define SWISS_MAP_MIN SIZE_MAX
#else
#define SWISS_MAP_MIN ((size_t)1 << 20)
#endif
/* Heap tables bypass the thread's cache: a resize frees a table of one size
 * and takes one of another, so a freed one would wait there (resident, and
 * counted as allocated) for an allocation of its size that rarely comes. */
#define SWISS_ZERO_MIN ((size_t)256 << 10)
#ifndef GOBLIN_NO_JEMALLOC
#define TAB_HEAP_ALLOC(n) mallocx((n), MALLOCX_TCACHE_NONE)
#define TAB_HEAP_ALLOC_ZEROED(n) mallocx((n), MALLOCX_ZERO | MALLOCX_TCACHE_NONE)
#define TAB_HEAP_FREE(p) dallocx((p), MALLOCX_TCACHE_NONE)
#else
#define TAB_HEAP_ALLOC(n) malloc(n)
#define TAB_HEAP_ALLOC_ZEROED(n) calloc(1, (n))
#define TAB_HEAP_FREE(p) free(p)
#endif
static atomic_size_t swiss_mapped;

size_t swiss_mapped_bytes(void) { return atomic_load_explicit(&swiss_mapped, memory_order_relaxed); }

static size_t map_len(size_t bytes) {
    size_t pg = 4096;
    return (bytes + pg - 1) & ~(pg - 1);
}

/* Memory for a table of ngroups groups of gbytes bytes, every control byte
 * EMPTY: a mapping reads as zero; a heap block gets its control bytes set. */
static void *tab_mem_alloc(size_t ngroups, size_t gbytes) {
    size_t bytes = ngroups * gbytes;
    if (bytes >= SWISS_ZERO_MIN && bytes < SWISS_MAP_MIN) return TAB_HEAP_ALLOC_ZEROED(bytes);
    if (bytes < SWISS_MAP_MIN) {
        uint8_t *m = TAB_HEAP_ALLOC(bytes);
        if (m)
            for (size_t g = 0; g < ngroups; g++) memset(m + g * gbytes, CTRL_EMPTY, SWISS_GROUP);
        return m;
    }
    void *p = mmap(NULL, map_len(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    atomic_fetch_add_explicit(&swiss_mapped, map_len(bytes), memory_order_relaxed);
    return p;
}

static void tab_mem_free(void *p, size_t bytes) {
    if (bytes < SWISS_MAP_MIN) {
        TAB_HEAP_FREE(p);
        return;
    }
    /* A big old table's pages are freed by a background thread (a 10M-key
     * index's parts are several MB each). */
    reclaim_unmap(p, map_len(bytes));
    atomic_fetch_sub_explicit(&swiss_mapped, map_len(bytes), memory_order_relaxed);
}

static int tab_alloc(swiss *s, swiss_tab *t, size_t ngroups) {
    assert(ngroups > 0 && ngroups < ((size_t)1 << 31));
    uint8_t *mem = tab_mem_alloc(ngroups, group_bytes(s));
    if (!mem) return -1;
    assert(((uintptr_t)mem & 15) == 0); /* malloc's alignment on x86-64; pages */
    t->mem = mem;
    t->ngroups = ngroups;
    t->used = 0;
    t->tombs = 0;
    return 0;
}

static void tab_release(const swiss *s, swiss_tab *t) {
    if (t->mem) tab_mem_free(t->mem, t->ngroups * group_bytes(s));
    memset(t, 0, sizeof(*t));
}

static void part_reset(const swiss *s, swiss_part *p) {
    tab_release(s, &p->t[0]);
    tab_release(s, &p->t[1]);
    p->rehash_idx = SWISS_IDLE;
}

void swiss_init(swiss *s, const swiss_type *type, void *ctx) {
    memset(s, 0, sizeof(*s));
    s->type = type;
    s->ctx = ctx;
    s->one.rehash_idx = SWISS_IDLE;
}

void swiss_set_split_shift(swiss *s, unsigned shift) {
    assert(shift <= SWISS_SPLIT_SHIFT_MAX && s->count == 0 && !s->parts);
    s->split_shift = (uint8_t)shift;
}

void swiss_free(swiss *s) {
    part_reset(s, &s->one);
    if (s->parts) {
        for (unsigned i = 0; i < SWISS_NPARTS; i++) part_reset(s, &s->parts[i]);
        free(s->parts);
        s->parts = NULL;
    }
    s->count = 0;
    s->resizing = 0;
}

void swiss_clear(swiss *s) { swiss_free(s); }

size_t swiss_size(const swiss *s) { return s->count; }
int swiss_is_rehashing(const swiss *s) { return s->resizing != 0; }

size_t swiss_capacity(const swiss *s) {
    size_t c = 0;
    for (unsigned i = 0; i < nparts(s); i++) {
        const swiss_part *p = s->parts ? &s->parts[i] : &s->one;
        c += tab_cap(&p->t[0]) + tab_cap(&p->t[1]);
    }
    return c;
}

size_t swiss_mem_bytes(const swiss *s) {
    size_t b = swiss_capacity(s) * (1 + (size_t)s->type->slot_size);
    if (s->parts) b += SWISS_NPARTS * sizeof(swiss_part);
    return b;
}

/* Raw placement into t for an element known to be absent there. */
static size_t tab_place(const swiss *s, swiss_tab *t, uint32_t q, uint8_t tag) {
    size_t g = home_group(q, t->ngroups);
    for (;;) {
        uint8_t *ctrl = group_ctrl(s, t, g);
        unsigned m = group_free(ctrl);
        if (m) {
            unsigned j = (unsigned)__builtin_ctz(m);
            if (ctrl[j] == CTRL_DELETED) t->tombs--;
            ctrl[j] = tag;
            t->used++;
            return g * SWISS_GROUP + j;
        }
        if (++g == t->ngroups) g = 0;
    }
}

static unsigned char *tab_find(swiss *s, swiss_tab *t, uint32_t q, uint8_t tag, const void *key) {
    if (t->used == 0) return NULL;
    size_t g = home_group(q, t->ngroups);
    size_t start = g;
    for (;;) {
        uint8_t *ctrl = group_ctrl(s, t, g);
        unsigned m = group_match(ctrl, tag);
        while (m) {
            unsigned char *slot = ctrl + SWISS_GROUP + (size_t)__builtin_ctz(m) * s->type->slot_size;
            if (s->type->match(s->ctx, slot, key)) return slot;
            m &= m - 1;
        }
        if (group_empty(ctrl)) return NULL;
        if (++g == t->ngroups) g = 0;
        if (g == start) return NULL;
    }
}

/* Place the element in slot src (hash h) into the right part of s. */
static void place_moved(swiss *s, swiss_tab *to, uint64_t h, const void *src) {
    uint32_t q = (uint32_t)(hash_pos(h) << part_shift(s));
    size_t k = tab_place(s, to, q, hash_tag(h));
    memcpy(slot_at(s, to, k), src, s->type->slot_size);
}

static void part_finish(swiss *s, swiss_part *p) {
    tab_release(s, &p->t[0]);
    p->t[0] = p->t[1];
    memset(&p->t[1], 0, sizeof(p->t[1]));
    p->rehash_idx = SWISS_IDLE;
    s->resizing &= ~(1u << part_index(s, p));
}

/* Ask the type to start loading what hashing group g of t will read (its
 * elements), so their cache misses overlap. */
static void prefetch_group_elems(swiss *s, swiss_tab *t, size_t g) {
    if (!s->type->prefetch_slot || g >= t->ngroups) return;
    size_t base = g * SWISS_GROUP;
    for (size_t j = 0; j < SWISS_GROUP; j++)
        if (ctrl_full(*ctrl_at(s, t, base + j))) s->type->prefetch_slot(s->ctx, slot_at(s, t, base + j));
}

/* Move up to n groups of p's resize; 1 if more remain. */
static int part_step(swiss *s, swiss_part *p, size_t n) {
    if (p->rehash_idx == SWISS_IDLE) return 0;
    swiss_tab *from = &p->t[0], *to = &p->t[1];
    while (n-- && p->rehash_idx < from->ngroups) {
        size_t base = p->rehash_idx * SWISS_GROUP;
        prefetch_group_elems(s, from, p->rehash_idx);
        for (size_t j = 0; j < SWISS_GROUP && from->used; j++) {
            size_t i = base + j;
            if (!ctrl_full(*ctrl_at(s, from, i))) continue;
            unsigned char *src = slot_at(s, from, i);
            place_moved(s, to, s->type->hash_slot(s->ctx, src), src);
            *ctrl_at(s, from, i) = CTRL_DELETED;
            from->used--;
            from->tombs++;
        }
        p->rehash_idx++;
        s->moved_groups++;
        if (from->used == 0) p->rehash_idx = from->ngroups;
    }
    if (p->rehash_idx >= from->ngroups) {
        part_finish(s, p);
        return 0;
    }
    return 1;
}

int swiss_rehash_step(swiss *s, size_t n) {
    if (!s->resizing) return 0;
    if (s->paused) return 1;
    while (n && s->resizing) {
        part_step(s, part_at(s, (unsigned)__builtin_ctz(s->resizing)), 1);
        n--;
    }
    return s->resizing != 0;
}


/* Room left in a resizing part's new table once what its old one still
 * holds has moved in. */
static inline size_t resize_room(const swiss_part *p) {
    size_t taken = p->t[1].used + p->t[1].tombs + p->t[0].used, max = tab_max_load(&p->t[1]);
    return taken < max ? max - taken : 0;
}

/* Non-zero when the new table's room is down to twice the groups still to
 * move: the resize then steps on every operation, and as each of those
 * inserts at most one element and moves a group, the move ends before the
 * table fills. (Asking for room for pace inserts per group, all that a
 * paced resize lets in, would start a part that grows by half short: it has
 * room for 7.5 per group, though it gets only ~1/16 of the index's inserts.) */
static inline int room_short(const swiss_part *p) {
    return resize_room(p) < (p->t[0].ngroups - p->rehash_idx) * 2;
}

/* The incremental work of one find/insert/delete that touched part p (out
 * of line: the common case is no resize in flight). */
static __attribute__((noinline)) void op_step_slow(swiss *s, swiss_part *p) {
    if (s->paused) return;
    if (p->rehash_idx == SWISS_IDLE) p = part_at(s, (unsigned)__builtin_ctz(s->resizing));
    /* A growing part of a paced type steps on one operation in grow_pace
     * (swiss.h); a same-size rebuild or a shrink, on every one. */
    uint32_t pace = s->type->grow_pace;
    if (pace > 1 && p->t[1].ngroups > p->t[0].ngroups && ++s->pace % pace && !room_short(p)) return;
    part_step(s, p, 1);
}

static inline void op_step(swiss *s, swiss_part *p) {
    if (__builtin_expect(s->resizing != 0, 0)) op_step_slow(s, p);
}

/* Smallest base << k groups with cap * num/den >= n (base 1: a power of
 * two; base NPARTS + i: part i's size at a split, so that the parts' sizes
 * are staggered over one octave). */
static size_t groups_fit(size_t base, size_t n, size_t num, size_t den) {
    size_t g = base;
    while (g * SWISS_GROUP * num < n * den) g <<= 1;
    return g;
}

static int part_resize(swiss *s, swiss_part *p, size_t ngroups) {
    assert(p->rehash_idx == SWISS_IDLE);
    assert(ngroups > 0);
    if (p->t[0].ngroups == 0) return tab_alloc(s, &p->t[0], ngroups);
    if (tab_alloc(s, &p->t[1], ngroups) != 0) return -1;
    p->rehash_idx = 0;
    s->resizing |= 1u << part_index(s, p);
    if (p->t[0].used == 0) part_finish(s, p);
    return 0;
}

/* Smallest group count (at least one) with cap * num/den >= n. */
static size_t groups_exact(size_t n, size_t num, size_t den) {
    size_t g = (n * den + SWISS_GROUP * num - 1) / (SWISS_GROUP * num);
    return g ? g : 1;
}

/* Allocate the parts of a split index, part i of ng[i] groups; NULL: no
 * memory (nothing changed). */
static swiss_part *parts_alloc(swiss *s, const size_t *ng) {
    swiss_part *parts = calloc(SWISS_NPARTS, sizeof(*parts));
    if (!parts) return NULL;
    for (unsigned i = 0; i < SWISS_NPARTS; i++) {
        parts[i].rehash_idx = SWISS_IDLE;
        if (tab_alloc(s, &parts[i].t[0], ng[i]) != 0) {
            for (unsigned j = 0; j < i; j++) tab_release(s, &parts[j].t[0]);
            free(parts);
            return NULL;
        }
    }
    return parts;
}

/* One part -> SWISS_NPARTS parts (the single part is idle). Bounded: the
 * single part has at most SWISS_SPLIT_GROUPS groups. */
static int split(swiss *s) {
    swiss_tab *from = &s->one.t[0];
    assert(!s->parts && s->one.rehash_idx == SWISS_IDLE && from->ngroups <= split_groups(s));
    size_t cnt[SWISS_NPARTS] = {0};
    /* Each element's hash once (it reads the element: a cache miss apiece,
     * overlapped by loading the next group's elements meanwhile). */
    uint64_t hv[SWISS_SPLIT_GROUPS * SWISS_GROUP];
    prefetch_group_elems(s, from, 0);
    for (size_t i = 0; i < tab_cap(from); i++) {
        if (i % SWISS_GROUP == 0) prefetch_group_elems(s, from, i / SWISS_GROUP + 1);
        if (ctrl_full(*ctrl_at(s, from, i))) {
            hv[i] = s->type->hash_slot(s->ctx, slot_at(s, from, i));
            cnt[hash_pos(hv[i]) >> (32 - SWISS_PART_BITS)]++;
        }
    }
    /* Room for each part's share plus a quarter, in staggered sizes: the
     * loads come out spread between ~0.37 and ~0.75, and the parts reach
     * 15/16 at different totals. */
    size_t ng[SWISS_NPARTS];
    for (unsigned i = 0; i < SWISS_NPARTS; i++) ng[i] = groups_fit(SWISS_NPARTS + i, cnt[i] + cnt[i] / 4 + SWISS_GROUP, LOAD_NUM, LOAD_DEN);
    swiss_part *parts = parts_alloc(s, ng);
    if (!parts) return -1;
    s->parts = parts;
    for (size_t i = 0; i < tab_cap(from); i++) {
        if (!ctrl_full(*ctrl_at(s, from, i))) continue;
        uint64_t h = hv[i];
        place_moved(s, &parts[hash_pos(h) >> (32 - SWISS_PART_BITS)].t[0], h, slot_at(s, from, i));
    }
    part_reset(s, &s->one);
    return 0;
}

/* SWISS_NPARTS parts -> one (no part resizing, small capacity). */
static void merge(swiss *s) {
    assert(s->parts && !s->resizing);
    swiss_tab to;
    if (tab_alloc(s, &to, groups_fit(1, s->count, LOAD_NUM, 2 * LOAD_DEN)) != 0) return; /* stay split */
    swiss_part *parts = s->parts;
    s->parts = NULL; /* place_moved: single-part positions */
    for (unsigned k = 0; k < SWISS_NPARTS; k++) {
        swiss_tab *from = &parts[k].t[0];
        prefetch_group_elems(s, from, 0);
        for (size_t i = 0; i < tab_cap(from); i++) {
            if (i % SWISS_GROUP == 0) prefetch_group_elems(s, from, i / SWISS_GROUP + 1);
            if (!ctrl_full(*ctrl_at(s, from, i))) continue;
            unsigned char *src = slot_at(s, from, i);
            place_moved(s, &to, s->type->hash_slot(s->ctx, src), src);
        }
        part_reset(s, &parts[k]);
    }
    free(parts);
    assert(to.used == s->count);
    part_reset(s, &s->one);
    s->one.t[0] = to;
}

/* The next size of a full table of ng groups: double while the index is one
 * part or its type says so, else 1/grow_div more (see "Growth" above). */
static size_t grown_groups(const swiss *s, size_t ng) {
    uint32_t d = s->type->grow_div;
    if (!s->parts || d == 0) return ng * 2;
    return ng + (ng + d - 1) / d;
}

/* p's table is full: finish its resize in flight, then grow it (or split
 * the single part), or rebuild it at the same size to drop tombstones. */
static int part_grow(swiss *s, swiss_part *p) {
    int was_paused = s->paused;
    s->paused = 0;
    while (part_step(s, p, 64)) {
    }
    s->paused = was_paused;
    swiss_tab *t = &p->t[0];
    if (t->ngroups && t->used + t->tombs + 1 <= tab_max_load(t)) return 0;
    size_t ng = t->ngroups ? t->ngroups : 1;
    if (t->ngroups && t->used + 1 > tab_max_load(t) / 2) ng = grown_groups(s, t->ngroups);
    if (!s->parts && ng > split_groups(s)) return split(s);
    return part_resize(s, p, ng);
}

/* swiss_find while some part resizes: step, then look in both tables. */
static __attribute__((noinline)) void *find_resizing(swiss *s, swiss_part *p, uint32_t q, uint8_t tag,
                                                     const void *key) {
    op_step_slow(s, p);
    unsigned char *slot = tab_find(s, &p->t[0], q, tag, key);
    if (!slot && p->rehash_idx != SWISS_IDLE) slot = tab_find(s, &p->t[1], q, tag, key);
    return slot;
}

void *swiss_find(swiss *s, uint64_t h, const void *key) {
    uint32_t pos = hash_pos(h), q = pos;
    swiss_part *p = &s->one;
    if (s->parts) {
        unsigned i = pos >> (32 - SWISS_PART_BITS);
        s->hint = i;
        p = &s->parts[i];
        q = pos << SWISS_PART_BITS;
    }
    if (__builtin_expect(s->resizing != 0, 0)) return find_resizing(s, p, q, hash_tag(h), key);
    /* No resize in flight: t[1] is unallocated. */
    return tab_find(s, &p->t[0], q, hash_tag(h), key);
}

/* The part of h and its in-part position, for a reader that changes
 * nothing (part_for without the hint). */
static const swiss_part *part_of_hash(const swiss *s, uint64_t h, uint32_t *q) {
    uint32_t pos = hash_pos(h);
    if (!s->parts) {
        *q = pos;
        return &s->one;
    }
    *q = pos << SWISS_PART_BITS;
    return &s->parts[pos >> (32 - SWISS_PART_BITS)];
}

void swiss_prefetch_group(const swiss *s, uint64_t h) {
    uint32_t q;
    const swiss_part *p = part_of_hash(s, h, &q);
    for (int i = 0; i < 2; i++) {
        const swiss_tab *t = &p->t[i];
        if (!t->used) continue;
        const uint8_t *ctrl = group_ctrl(s, t, home_group(q, t->ngroups));
        /* The control bytes and the first slots share a line; the rest of
         * the group's slots are in the next one or two. */
        __builtin_prefetch(ctrl);
        __builtin_prefetch(ctrl + 64);
    }
}

void swiss_prefetch_match(const swiss *s, uint64_t h) {
    if (!s->type->prefetch_slot) return;
    uint32_t q;
    const swiss_part *p = part_of_hash(s, h, &q);
    uint8_t tag = hash_tag(h);
    for (int i = 0; i < 2; i++) {
        const swiss_tab *t = &p->t[i];
        if (!t->used) continue;
        const uint8_t *ctrl = group_ctrl(s, t, home_group(q, t->ngroups));
        for (unsigned m = group_match(ctrl, tag); m; m &= m - 1)
            s->type->prefetch_slot(s->ctx, ctrl + SWISS_GROUP + (size_t)__builtin_ctz(m) * s->type->slot_size);
    }
}

void *swiss_insert(swiss *s, uint64_t h) {
    uint32_t q;
    swiss_part *p = part_for(s, hash_pos(h), &q);
    op_step(s, p);
    swiss_tab *t = p->rehash_idx != SWISS_IDLE ? &p->t[1] : &p->t[0];
    /* Full: no room for one more, counting (mid-resize) what is still to
     * move in; part_grow then finishes the move first. */
    if (t->ngroups == 0 || (p->rehash_idx != SWISS_IDLE ? resize_room(p) < 1 : t->used + t->tombs + 1 > tab_max_load(t))) {
        if (part_grow(s, p) != 0) return NULL;
        p = part_for(s, hash_pos(h), &q); /* the index may have split */
        t = p->rehash_idx != SWISS_IDLE ? &p->t[1] : &p->t[0];
    }
    assert(t->used + t->tombs < tab_cap(t));
    size_t i = tab_place(s, t, q, hash_tag(h));
    s->count++;
    return slot_at(s, t, i);
}

static int tab_owns(const swiss *s, const swiss_tab *t, const unsigned char *slot, size_t *idx) {
    size_t gb = group_bytes(s);
    if (!t->ngroups || slot < t->mem || slot >= t->mem + t->ngroups * gb) return 0;
    size_t off = (size_t)(slot - t->mem), g = off / gb, r = off % gb;
    assert(r >= SWISS_GROUP && (r - SWISS_GROUP) % s->type->slot_size == 0);
    *idx = g * SWISS_GROUP + (r - SWISS_GROUP) / s->type->slot_size;
    return 1;
}

/* The part and table holding slot: first the part of the last find (a
 * delete usually follows the find of its slot), else a walk. The hint is
 * worth its store in every find: walking every time made 2M HDEL-style
 * deletes 5% slower in-process. */
static swiss_part *owner_of(swiss *s, const unsigned char *slot, swiss_tab **tp, size_t *idx) {
    swiss_part *p = s->parts ? &s->parts[s->hint % SWISS_NPARTS] : &s->one;
    for (int j = 0; j < 2; j++) {
        if (tab_owns(s, &p->t[j], slot, idx)) {
            *tp = &p->t[j];
            return p;
        }
    }
    for (unsigned k = 0; k < nparts(s); k++) {
        p = part_at(s, k);
        for (int j = 0; j < 2; j++) {
            if (tab_owns(s, &p->t[j], slot, idx)) {
                *tp = &p->t[j];
                return p;
            }
        }
    }
    return NULL;
}

void swiss_delete(swiss *s, void *slot) {
    size_t i = 0;
    swiss_tab *t = NULL;
    swiss_part *p = owner_of(s, slot, &t, &i);
    assert(p && t && ctrl_full(*ctrl_at(s, t, i)));
    if (!p) return;
    *ctrl_at(s, t, i) = CTRL_DELETED;
    t->used--;
    t->tombs++;
    s->count--;
    if (s->paused) return;
    if (s->count == 0) {
        swiss_free(s);
        return;
    }
    op_step(s, p);
    if (p->rehash_idx == SWISS_IDLE) {
        swiss_tab *t0 = &p->t[0];
        if (t0->ngroups > 1 && t0->used < tab_cap(t0) / 8) {
            size_t ng = s->parts ? groups_exact(t0->used, LOAD_NUM, 2 * LOAD_DEN) : groups_fit(1, t0->used, LOAD_NUM, 2 * LOAD_DEN);
            assert(ng < t0->ngroups);
            part_resize(s, p, ng);
        }
    }
    if (s->parts && s->count < SWISS_MERGE_PER_GROUP * split_groups(s) && !s->resizing &&
        swiss_capacity(s) <= SWISS_MERGE_SLOTS_PER_GROUP * split_groups(s))
        merge(s);
}

/* Report the elements of t with in-part position in [lo, hi), all of whose
 * home is group g: walk g's chain. */
static void scan_range(swiss *s, swiss_tab *t, size_t g, uint64_t lo, uint64_t hi, swiss_scan_fn *fn, void *arg) {
    if (!t->used) return;
    unsigned sh = part_shift(s);
    size_t i = g;
    do {
        const uint8_t *ctrl = group_ctrl(s, t, i);
        for (size_t j = 0; j < SWISS_GROUP; j++) {
            if (!ctrl_full(ctrl[j])) continue;
            unsigned char *slot = slot_at(s, t, i * SWISS_GROUP + j);
            uint32_t q = (uint32_t)(hash_pos(s->type->hash_slot(s->ctx, slot)) << sh);
            if (q >= lo && q < hi) fn(arg, slot);
        }
        if (group_empty(ctrl)) break;
        if (++i == t->ngroups) i = 0;
    } while (i != g);
}

uint64_t swiss_scan(swiss *s, uint64_t v, swiss_scan_fn *fn, void *arg) {
    if (s->count == 0 || v > UINT32_MAX) return 0;
    s->paused++;
    uint32_t pos = (uint32_t)v, q;
    swiss_part *p = part_for(s, pos, &q);
    unsigned sh = part_shift(s);
    int ntabs = p->rehash_idx != SWISS_IDLE ? 2 : 1;
    uint64_t end = (uint64_t)1 << 32;
    for (int k = 0; k < ntabs; k++) {
        swiss_tab *t = &p->t[k];
        if (!t->ngroups) continue;
        uint64_t e = group_end(home_group(q, t->ngroups), t->ngroups);
        if (e < end) end = e;
    }
    assert(end > q);
    for (int k = 0; k < ntabs; k++) {
        swiss_tab *t = &p->t[k];
        if (t->ngroups) scan_range(s, t, home_group(q, t->ngroups), q, end, fn, arg);
    }
    s->paused--;
    /* Back from in-part positions to hash positions: q = low bits << sh. */
    uint64_t base = sh ? (uint64_t)(pos >> (32 - sh)) << (32 - sh) : 0;
    uint64_t next = base + ((end + ((uint64_t)1 << sh) - 1) >> sh);
    assert(next > v);
    return next >= ((uint64_t)1 << 32) ? 0 : next;
}

static swiss_tab *tab_at(swiss *s, unsigned k) { return &part_at(s, k >> 1)->t[k & 1]; }

void *swiss_random(swiss *s, uint64_t (*rnd)(void)) {
    size_t n = s->count;
    if (n == 0) return NULL;
    unsigned ntabs = 2 * nparts(s);
    size_t total = 0;
    for (unsigned k = 0; k < ntabs; k++) {
        swiss_tab *t = tab_at(s, k);
        if (t->used) total += tab_cap(t);
    }
    /* Rejection sampling over all slots is exactly uniform; load is at
     * least 1/8 except in tiny tables, so few draws are needed. */
    for (int tries = 0; tries < 256; tries++) {
        size_t r = (size_t)(rnd() % total);
        for (unsigned k = 0; k < ntabs; k++) {
            swiss_tab *t = tab_at(s, k);
            if (!t->used) continue;
            if (r < tab_cap(t)) {
                if (ctrl_full(*ctrl_at(s, t, r))) return slot_at(s, t, r);
                break;
            }
            r -= tab_cap(t);
        }
    }
    /* Pathological sparseness: the k-th live slot, walking. */
    size_t k = (size_t)(rnd() % n);
    for (unsigned ti = 0; ti < ntabs; ti++) {
        swiss_tab *t = tab_at(s, ti);
        for (size_t i = 0; i < tab_cap(t); i++)
            if (ctrl_full(*ctrl_at(s, t, i)) && k-- == 0) return slot_at(s, t, i);
    }
    return NULL;
}

void swiss_iter_init(swiss_iter *it, swiss *s) {
    it->s = s;
    it->table = 0;
    it->idx = 0;
    s->paused++;
}

void *swiss_iter_next(swiss_iter *it) {
    swiss *s = it->s;
    while (it->table < (int)(2 * nparts(s))) {
        swiss_tab *t = tab_at(s, (unsigned)it->table);
        while (it->idx < tab_cap(t)) {
            size_t i = it->idx++;
            if (ctrl_full(*ctrl_at(s, t, i))) return slot_at(s, t, i);
        }
        it->table++;
        it->idx = 0;
    }
    return NULL;
}

void swiss_iter_done(swiss_iter *it) {
    swiss *s = it->s;
    assert(s->paused > 0);
    s->paused--;
    if (!s->paused && s->count == 0) swiss_free(s);
}

int swiss_reserve(swiss *s, size_t n) {
    /* Only an empty, idle table is presized: a bulk load (RDB) then never
     * pays for the resizes it would go through one element at a time. */
    if (s->count != 0 || s->resizing || s->paused) return 0;
    if (n <= split_groups(s) * SWISS_GROUP / LOAD_DEN * LOAD_NUM) {
        if (s->parts) return 0;
        /* The smallest table whose maximum load holds n: the same
         * density natural growth ends at. */
        size_t g = groups_fit(1, n, LOAD_NUM, LOAD_DEN);
        if (s->one.t[0].ngroups >= g) return 0;
        part_reset(s, &s->one);
        return tab_alloc(s, &s->one.t[0], g);
    }
    /* Split from the start; each part just holds its share (plus a little
     * for the spread of the hash): a loaded index is as dense as a grown
     * one at its fullest, and its parts then grow as usual. */
    if (s->parts) {
        size_t have = 0;
        for (unsigned i = 0; i < SWISS_NPARTS; i++) have += tab_max_load(&s->parts[i].t[0]);
        if (have >= n) return 0;
    }
    size_t ng[SWISS_NPARTS], each = groups_exact(n / SWISS_NPARTS + n / 256 + SWISS_GROUP, LOAD_NUM, LOAD_DEN);
    for (unsigned i = 0; i < SWISS_NPARTS; i++) ng[i] = each;
    swiss_part *parts = parts_alloc(s, ng);
    if (!parts) return -1;
    swiss_free(s);
    s->parts = parts;
    return 0;
}
