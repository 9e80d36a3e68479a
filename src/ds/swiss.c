/* swiss.c -- open-addressing hash index, SSE2 groups, incremental resize.
 *
 * Layout. A table is ngroups (a power of two) groups of 16 slots. Each slot
 * has one control byte: EMPTY (0x00, so zeroed memory is an empty table),
 * DELETED (0x01) or FULL (0x80 | the low 7 bits of the element's hash). A
 * lookup hashes once: bits 7.. choose the element's home group, bits 0..6
 * are the tag. One SSE2 compare of the 16 control bytes against the tag
 * yields the candidates of a group; the probe moves to the next group
 * (linearly, wrapping) until a group that has an EMPTY byte, which ends
 * every probe chain.
 *
 * Invariant (chains). An element whose home group is g sits in the first group
 * of g, g+1, ... that had a free byte when it was inserted, so every group
 * between g and its position has no EMPTY byte. Deletes write DELETED, never
 * EMPTY, so chains only break when a whole table is rebuilt. Both lookups and
 * the scan below rely on this.
 *
 * Resize. When live + deleted slots pass 7/8 of capacity we allocate t[1]
 * (double the size if more than half of that is live, else the same size to
 * drop tombstones; a quarter-full table halves) and move t[0] a group at a
 * time: every find/insert/delete moves one group, and the server's cron calls
 * swiss_rehash_step() when idle. The new table comes from calloc and needs
 * no initialisation (EMPTY is 0x00), so starting a resize costs no
 * O(capacity) memset either. Moved slots become DELETED in t[0], so t[0]
 * chains stay intact until t[0] is freed. New elements go to t[1]. No single
 * call ever pays for more than one group plus a probe (plus, once per resize,
 * freeing the old table: ~2 ms of page release for a 10M-entry table), so a
 * 10M-entry table grows without stalling other clients.
 *
 * Scan. The cursor counts home groups in reverse-binary order (the classic
 * reverse-increment of Redis's dictScan). Visiting home group g means walking
 * the chain from g to the first group with an EMPTY byte and reporting the
 * elements whose home is g. Because home groups of a table of 2^k groups
 * split into exactly two home groups of a table of 2^(k+1), a reverse-binary
 * cursor never revisits a finished prefix and never skips one across growth
 * or shrink; while two tables exist, the group of the smaller one and all its
 * expansions in the larger one are visited in one call. Hence every element
 * present for the whole scan is reported at least once. */
#include "swiss.h"

#include <assert.h>
#include <emmintrin.h>
#include <stdlib.h>
#include <string.h>

#define CTRL_EMPTY ((uint8_t)0x00)
#define CTRL_DELETED ((uint8_t)0x01)
#define CTRL_FULL_BIT 0x80

static inline size_t tab_cap(const swiss_tab *t) { return t->ngroups * SWISS_GROUP; }
static inline size_t tab_max_load(const swiss_tab *t) { return tab_cap(t) / 8 * 7; }
static inline size_t home_group(uint64_t h, size_t ngroups) { return (size_t)(h >> 7) & (ngroups - 1); }
static inline uint8_t hash_tag(uint64_t h) { return (uint8_t)(CTRL_FULL_BIT | (h & 0x7f)); }
static inline int ctrl_full(uint8_t c) { return (c & CTRL_FULL_BIT) != 0; }

static inline unsigned char *slot_at(const swiss *s, const swiss_tab *t, size_t i) {
    return t->slots + i * s->type->slot_size;
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

static int tab_alloc(swiss *s, swiss_tab *t, size_t ngroups) {
    size_t cap = ngroups * SWISS_GROUP;
    size_t ctrl_bytes = cap;
    /* Zero bytes are EMPTY: calloc'd memory is a valid empty table, and a
     * large calloc maps fresh zero pages without touching them, so starting
     * a resize does no O(capacity) work; the pages fault in as incremental
     * moves and new inserts reach them. */
    void *mem = calloc(1, ctrl_bytes + cap * s->type->slot_size);
    if (!mem) return -1;
    assert(((uintptr_t)mem & 15) == 0); /* malloc's alignment on x86-64 */
    t->ctrl = mem;
    t->slots = (unsigned char *)mem + ctrl_bytes;
    t->ngroups = ngroups;
    t->used = 0;
    t->tombs = 0;
    return 0;
}

static void tab_release(swiss_tab *t) {
    free(t->ctrl);
    memset(t, 0, sizeof(*t));
}

void swiss_init(swiss *s, const swiss_type *type, void *ctx) {
    memset(s, 0, sizeof(*s));
    s->type = type;
    s->ctx = ctx;
    s->rehash_idx = SWISS_IDLE;
}

void swiss_free(swiss *s) {
    tab_release(&s->t[0]);
    tab_release(&s->t[1]);
    s->rehash_idx = SWISS_IDLE;
}

void swiss_clear(swiss *s) { swiss_free(s); }

size_t swiss_size(const swiss *s) { return s->t[0].used + s->t[1].used; }
size_t swiss_capacity(const swiss *s) { return tab_cap(&s->t[0]) + tab_cap(&s->t[1]); }
int swiss_is_rehashing(const swiss *s) { return s->rehash_idx != SWISS_IDLE; }

size_t swiss_mem_bytes(const swiss *s) {
    return swiss_capacity(s) * (1 + (size_t)s->type->slot_size);
}

/* Raw placement into t for an element known to be absent there. */
static size_t tab_place(swiss_tab *t, uint64_t h) {
    size_t mask = t->ngroups - 1;
    size_t g = home_group(h, t->ngroups);
    for (;;) {
        unsigned m = group_free(t->ctrl + g * SWISS_GROUP);
        if (m) {
            size_t i = g * SWISS_GROUP + (size_t)__builtin_ctz(m);
            if (t->ctrl[i] == CTRL_DELETED) t->tombs--;
            t->ctrl[i] = hash_tag(h);
            t->used++;
            return i;
        }
        g = (g + 1) & mask;
    }
}

static unsigned char *tab_find(swiss *s, swiss_tab *t, uint64_t h, const void *key) {
    if (t->ngroups == 0 || t->used == 0) return NULL;
    size_t mask = t->ngroups - 1;
    size_t g = home_group(h, t->ngroups);
    size_t start = g;
    uint8_t tag = hash_tag(h);
    for (;;) {
        const uint8_t *ctrl = t->ctrl + g * SWISS_GROUP;
        unsigned m = group_match(ctrl, tag);
        while (m) {
            size_t i = g * SWISS_GROUP + (size_t)__builtin_ctz(m);
            unsigned char *slot = slot_at(s, t, i);
            if (s->type->match(s->ctx, slot, key)) return slot;
            m &= m - 1;
        }
        if (group_empty(ctrl)) return NULL;
        g = (g + 1) & mask;
        if (g == start) return NULL;
    }
}

static void rehash_finish_swap(swiss *s) {
    tab_release(&s->t[0]);
    s->t[0] = s->t[1];
    memset(&s->t[1], 0, sizeof(s->t[1]));
    s->rehash_idx = SWISS_IDLE;
}

int swiss_rehash_step(swiss *s, size_t n) {
    if (s->rehash_idx == SWISS_IDLE) return 0;
    if (s->paused) return 1;
    swiss_tab *from = &s->t[0], *to = &s->t[1];
    uint32_t ss = s->type->slot_size;
    while (n-- && s->rehash_idx < from->ngroups) {
        size_t base = s->rehash_idx * SWISS_GROUP;
        for (size_t j = 0; j < SWISS_GROUP && from->used; j++) {
            size_t i = base + j;
            if (!ctrl_full(from->ctrl[i])) continue;
            unsigned char *src = slot_at(s, from, i);
            uint64_t h = s->type->hash_slot(s->ctx, src);
            size_t k = tab_place(to, h);
            memcpy(slot_at(s, to, k), src, ss);
            from->ctrl[i] = CTRL_DELETED;
            from->used--;
            from->tombs++;
        }
        s->rehash_idx++;
        if (from->used == 0) s->rehash_idx = from->ngroups;
    }
    if (s->rehash_idx >= from->ngroups) {
        rehash_finish_swap(s);
        return 0;
    }
    return 1;
}

/* Smallest power-of-two group count whose half-load holds n elements. */
static size_t groups_for(size_t n) {
    size_t g = 1;
    while (g * SWISS_GROUP * 7 / 16 < n) g <<= 1;
    return g;
}

static int start_resize(swiss *s, size_t ngroups) {
    assert(s->rehash_idx == SWISS_IDLE);
    if (s->t[0].ngroups == 0) return tab_alloc(s, &s->t[0], ngroups);
    if (tab_alloc(s, &s->t[1], ngroups) != 0) return -1;
    s->rehash_idx = 0;
    if (s->t[0].used == 0) rehash_finish_swap(s);
    return 0;
}

void *swiss_find(swiss *s, uint64_t h, const void *key) {
    if (s->rehash_idx != SWISS_IDLE) swiss_rehash_step(s, 1);
    unsigned char *slot = tab_find(s, &s->t[0], h, key);
    if (!slot && s->rehash_idx != SWISS_IDLE) slot = tab_find(s, &s->t[1], h, key);
    return slot;
}

void *swiss_insert(swiss *s, uint64_t h) {
    if (s->rehash_idx != SWISS_IDLE) swiss_rehash_step(s, 1);
    swiss_tab *t = s->rehash_idx != SWISS_IDLE ? &s->t[1] : &s->t[0];
    if (t->ngroups == 0 || t->used + t->tombs + 1 > tab_max_load(t)) {
        /* Finish any resize in flight (cheap: it is nearly done by now),
         * then pick the next size from the live count. */
        int was_paused = s->paused;
        s->paused = 0;
        while (swiss_rehash_step(s, 64)) {
        }
        s->paused = was_paused;
        t = &s->t[0];
        if (t->ngroups == 0 || t->used + t->tombs + 1 > tab_max_load(t)) {
            size_t ng = t->ngroups == 0 ? 1 : t->ngroups;
            if (t->ngroups && t->used + 1 > tab_max_load(t) / 2) ng = t->ngroups * 2;
            if (start_resize(s, ng) != 0) return NULL;
            t = s->rehash_idx != SWISS_IDLE ? &s->t[1] : &s->t[0];
        }
    }
    size_t i = tab_place(t, h);
    return slot_at(s, t, i);
}

static swiss_tab *owner_of(swiss *s, const unsigned char *slot, size_t *idx) {
    for (int k = 0; k < 2; k++) {
        swiss_tab *t = &s->t[k];
        if (!t->ngroups) continue;
        if (slot >= t->slots && slot < t->slots + tab_cap(t) * s->type->slot_size) {
            *idx = (size_t)(slot - t->slots) / s->type->slot_size;
            return t;
        }
    }
    return NULL;
}

void swiss_delete(swiss *s, void *slot) {
    size_t i;
    swiss_tab *t = owner_of(s, slot, &i);
    assert(t && ctrl_full(t->ctrl[i]));
    t->ctrl[i] = CTRL_DELETED;
    t->used--;
    t->tombs++;
    if (s->paused) return;
    if (s->rehash_idx != SWISS_IDLE) {
        swiss_rehash_step(s, 1);
        return;
    }
    swiss_tab *t0 = &s->t[0];
    if (t0->used == 0) {
        tab_release(t0);
        return;
    }
    if (t0->ngroups > 1 && t0->used < tab_cap(t0) / 8) start_resize(s, groups_for(t0->used));
}

/* Report the elements whose home group is g in t. */
static void scan_home(swiss *s, swiss_tab *t, size_t g, swiss_scan_fn *fn, void *arg) {
    if (!t->ngroups || !t->used) return;
    size_t mask = t->ngroups - 1, i = g;
    do {
        const uint8_t *ctrl = t->ctrl + i * SWISS_GROUP;
        for (size_t j = 0; j < SWISS_GROUP; j++) {
            if (!ctrl_full(ctrl[j])) continue;
            unsigned char *slot = slot_at(s, t, i * SWISS_GROUP + j);
            if (home_group(s->type->hash_slot(s->ctx, slot), t->ngroups) == g) fn(arg, slot);
        }
        if (group_empty(ctrl)) break;
        i = (i + 1) & mask;
    } while (i != g);
}

static inline uint64_t rev64(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    return __builtin_bswap64(v);
}

uint64_t swiss_scan(swiss *s, uint64_t v, swiss_scan_fn *fn, void *arg) {
    if (swiss_size(s) == 0) return 0;
    s->paused++;
    if (s->rehash_idx == SWISS_IDLE) {
        uint64_t m0 = s->t[0].ngroups - 1;
        scan_home(s, &s->t[0], (size_t)(v & m0), fn, arg);
        v |= ~m0;
        v = rev64(rev64(v) + 1);
    } else {
        swiss_tab *small = &s->t[0], *big = &s->t[1];
        if (small->ngroups > big->ngroups) {
            swiss_tab *x = small;
            small = big;
            big = x;
        }
        uint64_t m0 = small->ngroups - 1, m1 = big->ngroups - 1;
        scan_home(s, small, (size_t)(v & m0), fn, arg);
        do {
            scan_home(s, big, (size_t)(v & m1), fn, arg);
            v |= ~m1;
            v = rev64(rev64(v) + 1);
        } while (v & (m0 ^ m1));
    }
    s->paused--;
    return v;
}

void *swiss_random(swiss *s, uint64_t (*rnd)(void)) {
    size_t n = swiss_size(s);
    if (n == 0) return NULL;
    size_t c0 = s->t[0].used ? tab_cap(&s->t[0]) : 0;
    size_t c1 = s->t[1].used ? tab_cap(&s->t[1]) : 0;
    /* Rejection sampling over all slots is exactly uniform; load is at
     * least 1/8 except in tiny tables, so few draws are needed. */
    for (int tries = 0; tries < 256; tries++) {
        size_t r = (size_t)(rnd() % (c0 + c1));
        swiss_tab *t = r < c0 ? &s->t[0] : &s->t[1];
        size_t i = r < c0 ? r : r - c0;
        if (ctrl_full(t->ctrl[i])) return slot_at(s, t, i);
    }
    /* Pathological sparseness: the k-th live slot, walking. */
    size_t k = (size_t)(rnd() % n);
    for (int ti = 0; ti < 2; ti++) {
        swiss_tab *t = &s->t[ti];
        for (size_t i = 0; i < tab_cap(t); i++)
            if (ctrl_full(t->ctrl[i]) && k-- == 0) return slot_at(s, t, i);
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
    while (it->table < 2) {
        swiss_tab *t = &s->t[it->table];
        while (it->idx < tab_cap(t)) {
            size_t i = it->idx++;
            if (ctrl_full(t->ctrl[i])) return slot_at(s, t, i);
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
    if (!s->paused && s->rehash_idx == SWISS_IDLE && s->t[0].ngroups && s->t[0].used == 0)
        tab_release(&s->t[0]);
}

int swiss_reserve(swiss *s, size_t n) {
    /* Only an empty, idle table is presized: a bulk load (RDB) then never
     * pays for the resizes it would go through one element at a time. */
    if (swiss_size(s) != 0 || s->rehash_idx != SWISS_IDLE) return 0;
    /* The smallest table whose maximum load (7/8) holds n: the same
     * density natural growth ends at. */
    size_t g = 1;
    while (g * SWISS_GROUP / 8 * 7 < n) g <<= 1;
    if (s->t[0].ngroups >= g) return 0;
    tab_release(&s->t[0]);
    return tab_alloc(s, &s->t[0], g);
}
