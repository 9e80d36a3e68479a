/* set.c -- the set type's three forms: int array, packed block, arena + index.
 *
 * Why three forms. Redis 7.0 keeps small all-integer sets as a sorted integer
 * array ("intset") and everything else in a dict, where a member costs a
 * dictEntry, an sds header and two allocator rounding losses (~56 B for an
 * 8-byte member). Goblin keeps the intset (its semantics are observable:
 * OBJECT ENCODING, the ascending order of SMEMBERS) and replaces the dict:
 *
 *   INTSET  {form, count, int64 v[count]} with v strictly ascending.
 *           Membership is a binary search; add/remove shift the tail and
 *           reallocate to the exact size. Used while every member is a
 *           canonical decimal int64 and count <= set-max-intset-entries.
 *   SMALL   {form, count, used, data[used]}: entries [len:1][bytes], in
 *           insertion order, searched linearly; at most 64 members of at
 *           most 64 bytes. This is what a 3-member set of words costs: one
 *           allocation of ~40 bytes instead of an arena and an index.
 *   LARGE   the large form (ds/lform.c): every member is one entry of the
 *           set's own chunked arena (1-2 byte length prefix + bytes, no
 *           per-member malloc), its key the whole entry, and a swiss table
 *           of 4-byte arena references indexes them. An 8-byte member costs
 *           ~9 bytes of arena and ~5-10 bytes of index.
 *
 * Encoding rules (Redis 7.0's, since they are visible): a set starts as an
 * intset; adding a member that is not a canonical integer, or growing past
 * max_intset (checked only when an add succeeds, capped at 2^30) converts
 * it to "hashtable" -- SMALL when the result fits, else LARGE. SMALL becomes
 * LARGE when a member is longer than 64 bytes or a 65th member arrives.
 * Nothing converts back to intset: a hashtable set stays one even when all
 * its members are integers again (set_new_hashtable() starts there). The
 * one move from LARGE to SMALL is set_pop_many() keeping few members: it
 * copies them into a fresh hashtable set and drops the old one whole.
 *
 * Deletes in LARGE leave dead arena bytes; after each one the large form's
 * maintenance (lf_maintain) runs a bounded compaction step when the arena
 * wants one.
 *
 * Random members are exactly uniform: an index below count for INTSET and
 * SMALL (rejection-sampled, no modulo bias), swiss_random (rejection over
 * slots) for LARGE. Distinct picks use selection sampling (in order, each
 * member kept with probability needed/remaining), a partial Fisher-Yates
 * shuffle of all references, or rejection of repeats -- each yields every
 * subset of the requested size with equal probability.
 *
 * Invariants (set_check): INTSET strictly ascending; SMALL well-formed,
 * count entries, members distinct, count <= 64 and lengths <= 64; LARGE:
 * the index holds exactly the arena's live entries, one slot each, members
 * distinct and each found by its own hash. */
#include "ds/set.h"

#include <assert.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "ds/lform.h"
#include "util/hashfn.h"
#include "util/rand.h"
#include "util/strutil.h"

struct gset {
    uint8_t form;
};

typedef struct sint {
    uint8_t form;      /* SET_INTSET */
    uint8_t pad[3];
    uint32_t count;
    int64_t v[];       /* strictly ascending */
} sint;

typedef struct ssmall {
    uint8_t form;      /* SET_SMALL */
    uint8_t pad;
    uint16_t count;
    uint32_t used;     /* bytes of entries in data */
    unsigned char data[];
} ssmall;

typedef struct slarge {
    uint8_t form;      /* SET_LARGE */
    lform lf;          /* every entry is a member */
} slarge;

_Static_assert(SET_ENOMEM == LF_ENOMEM && SET_EFULL == LF_EFULL, "set error codes are lform's");

static inline sint *as_int(gset *s) { return (sint *)s; }
static inline ssmall *as_small(gset *s) { return (ssmall *)s; }
static inline slarge *as_large(gset *s) { return (slarge *)s; }
static inline const sint *as_cint(const gset *s) { return (const sint *)s; }
static inline const ssmall *as_csmall(const gset *s) { return (const ssmall *)s; }
static inline const slarge *as_clarge(const gset *s) { return (const slarge *)s; }

/* Uniform in [0, n) without modulo bias; n > 0. */
static inline uint64_t rnd_below(set_rand_fn *rnd, uint64_t n) { return rand_below_from(rnd, n); }

static inline size_t max_intset(const set_limits *lim) {
    return lim->max_intset > SET_INTSET_HARD_MAX ? SET_INTSET_HARD_MAX : lim->max_intset;
}

void set_elem_bytes(set_elem *e, const void *p, size_t n) {
    e->p = p;
    e->n = n;
    e->v = 0;
    e->isint = 0;
}

static inline void elem_int(set_elem *e, int64_t v) {
    e->isint = 1;
    e->v = v;
    e->n = (size_t)ll_to_str(e->buf, sizeof(e->buf), v);
    e->p = e->buf;
}

/* ---- INTSET ---- */

static sint *int_alloc(size_t count) {
    sint *s = malloc(sizeof(sint) + count * sizeof(int64_t));
    if (!s) return NULL;
    memset(s, 0, sizeof(sint));
    s->form = SET_INTSET;
    return s;
}

/* 1 when v is present; *pos receives its index or its insertion point. */
static int int_search(const sint *s, int64_t v, size_t *pos) {
    size_t lo = 0, hi = s->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    *pos = lo;
    return lo < s->count && s->v[lo] == v;
}

static void int_remove_at(gset **sp, size_t pos) {
    sint *s = as_int(*sp);
    memmove(s->v + pos, s->v + pos + 1, (s->count - pos - 1) * sizeof(int64_t));
    s->count--;
    sint *ns = realloc(s, sizeof(sint) + s->count * sizeof(int64_t));
    if (ns) *sp = (gset *)ns; /* a failed shrink keeps the bigger block */
}

/* ---- SMALL ---- */

static ssmall *small_alloc(size_t used) {
    ssmall *s = malloc(sizeof(ssmall) + used);
    if (!s) return NULL;
    memset(s, 0, sizeof(ssmall));
    s->form = SET_SMALL;
    return s;
}

static inline size_t small_next(const ssmall *s, size_t pos, const char **m, size_t *n) {
    *n = s->data[pos];
    *m = (const char *)s->data + pos + 1;
    return pos + 1 + *n;
}

/* Offset of the member's entry, or SIZE_MAX. */
static size_t small_find(const ssmall *s, const void *m, size_t n) {
    if (n > SET_SMALL_MAX_MEMBER) return SIZE_MAX;
    size_t pos = 0;
    while (pos < s->used) {
        size_t len = s->data[pos];
        if (len == n && (n == 0 || memcmp(s->data + pos + 1, m, n) == 0)) return pos;
        pos += 1 + len;
    }
    return SIZE_MAX;
}

/* Append a member known to be absent; the caller checked it fits. */
static int small_append(gset **sp, const void *m, size_t n) {
    ssmall *s = as_small(*sp);
    assert(n <= SET_SMALL_MAX_MEMBER && s->count < SET_SMALL_MAX_ENTRIES);
    ssmall *ns = realloc(s, sizeof(ssmall) + s->used + 1 + n);
    if (!ns) return SET_ENOMEM;
    ns->data[ns->used] = (unsigned char)n;
    if (n) memcpy(ns->data + ns->used + 1, m, n);
    ns->used += (uint32_t)(1 + n);
    ns->count++;
    *sp = (gset *)ns;
    return 1;
}

static void small_remove_at(gset **sp, size_t pos) {
    ssmall *s = as_small(*sp);
    size_t len = 1 + (size_t)s->data[pos];
    memmove(s->data + pos, s->data + pos + len, s->used - pos - len);
    s->used -= (uint32_t)len;
    s->count--;
    ssmall *ns = realloc(s, sizeof(ssmall) + s->used);
    if (ns) *sp = (gset *)ns;
}

/* Offset of the k-th entry (k < count). */
static size_t small_offset(const ssmall *s, size_t k) {
    size_t pos = 0;
    while (k--) pos += 1 + (size_t)s->data[pos];
    return pos;
}

/* ---- LARGE ---- */

/* The key of an entry is the whole entry. */
static const lf_type lg_type = LF_TYPE(0, 0, NULL);

static inline const char *lg_member(const slarge *l, arena_ref r, size_t *n) { return arena_get(&l->lf.a, r, n); }

static slarge *large_new(void) {
    slarge *l = malloc(sizeof(*l));
    if (!l) return NULL;
    l->form = SET_LARGE;
    lf_init(&l->lf, &lg_type);
    return l;
}

static void large_free(slarge *l) {
    lf_destroy(&l->lf);
    free(l);
}

static inline void *large_find(slarge *l, const void *m, size_t n, uint64_t hv) { return lf_find(&l->lf, m, n, hv); }

/* Insert a member known to be absent. */
static inline int large_insert(slarge *l, const void *m, size_t n, uint64_t hv) {
    return lf_put(&l->lf, m, n, hv, NULL);
}

static int large_add(slarge *l, const void *m, size_t n) {
    uint64_t hv = hash_bytes(m, n);
    if (large_find(l, m, n, hv)) return 0;
    int rc = large_insert(l, m, n, hv);
    return rc == SET_OK ? 1 : rc;
}

/* Remove the member in slot (the caller has used its bytes). */
static void large_remove_slot(slarge *l, void *slot) {
    lf_remove(&l->lf, slot);
    lf_maintain(&l->lf, LF_COMPACT_BUDGET);
}

/* ---- conversions ---- */

/* A hashtable-form copy of an intset that will hold want members of at
 * most want_len bytes: SMALL when that fits, else LARGE. */
static int int_to_ht(gset **sp, size_t want, size_t want_len) {
    sint *s = as_int(*sp);
    char buf[STRUTIL_LLSTR];
    if (want <= SET_SMALL_MAX_ENTRIES && want_len <= SET_SMALL_MAX_MEMBER) {
        size_t used = 0;
        for (uint32_t i = 0; i < s->count; i++) used += 1 + (size_t)ll_to_str(buf, sizeof(buf), s->v[i]);
        ssmall *d = small_alloc(used);
        if (!d) return SET_ENOMEM;
        for (uint32_t i = 0; i < s->count; i++) {
            int n = ll_to_str(buf, sizeof(buf), s->v[i]);
            d->data[d->used] = (unsigned char)n;
            memcpy(d->data + d->used + 1, buf, (size_t)n);
            d->used += (uint32_t)(1 + n);
        }
        d->count = (uint16_t)s->count;
        free(s);
        *sp = (gset *)d;
        return SET_OK;
    }
    slarge *l = large_new();
    if (!l) return SET_ENOMEM;
    for (uint32_t i = 0; i < s->count; i++) {
        int n = ll_to_str(buf, sizeof(buf), s->v[i]);
        int rc = large_insert(l, buf, (size_t)n, hash_bytes(buf, (size_t)n));
        if (rc != SET_OK) {
            large_free(l);
            return rc;
        }
    }
    free(s);
    *sp = (gset *)l;
    return SET_OK;
}

static int small_to_large(gset **sp) {
    ssmall *s = as_small(*sp);
    slarge *l = large_new();
    if (!l) return SET_ENOMEM;
    size_t pos = 0;
    while (pos < s->used) {
        const char *m;
        size_t n;
        pos = small_next(s, pos, &m, &n);
        int rc = large_insert(l, m, n, hash_bytes(m, n));
        if (rc != SET_OK) {
            large_free(l);
            return rc;
        }
    }
    free(s);
    *sp = (gset *)l;
    return SET_OK;
}

int set_convert(gset **sp, int form) {
    int cur = (*sp)->form;
    if (form <= cur) return SET_OK;
    if (cur == SET_INTSET) {
        size_t want = form == SET_SMALL ? as_int(*sp)->count : SIZE_MAX;
        int rc = int_to_ht(sp, want, 0);
        if (rc != SET_OK) return rc;
        cur = (*sp)->form;
    }
    if (cur == SET_SMALL && form == SET_LARGE) return small_to_large(sp);
    return SET_OK;
}

/* ---- lifecycle ---- */

gset *set_new(void) { return (gset *)int_alloc(0); }

gset *set_new_hashtable(void) { return (gset *)small_alloc(0); }

gset *set_new_reserve(size_t n) {
    if (n <= SET_SMALL_MAX_ENTRIES) return set_new_hashtable();
    slarge *l = large_new();
    if (!l) return NULL;
    /* A failed reserve only costs the growth steps it would have saved. */
    (void)swiss_reserve(&l->lf.idx, n);
    return (gset *)l;
}

void set_free(gset *s) {
    if (!s) return;
    if (s->form == SET_LARGE) large_free(as_large(s));
    else free(s);
}

gset *set_dup(const gset *s) {
    if (s->form == SET_INTSET) {
        size_t bytes = sizeof(sint) + as_cint(s)->count * sizeof(int64_t);
        void *d = malloc(bytes);
        if (d) memcpy(d, s, bytes);
        return d;
    }
    if (s->form == SET_SMALL) {
        size_t bytes = sizeof(ssmall) + as_csmall(s)->used;
        void *d = malloc(bytes);
        if (d) memcpy(d, s, bytes);
        return d;
    }
    slarge *src = (slarge *)s; /* iteration pauses the index: not const */
    slarge *l = large_new();
    if (!l) return NULL;
    swiss_iter it;
    swiss_iter_init(&it, &src->lf.idx);
    void *slot;
    int rc = SET_OK;
    while (rc == SET_OK && (slot = swiss_iter_next(&it))) {
        size_t n;
        const char *m = lg_member(src, arena_ref_load(slot), &n);
        rc = large_insert(l, m, n, hash_bytes(m, n));
    }
    swiss_iter_done(&it);
    if (rc != SET_OK) {
        large_free(l);
        return NULL;
    }
    return (gset *)l;
}

int set_form(const gset *s) { return s->form; }
int set_is_intset(const gset *s) { return s->form == SET_INTSET; }

size_t set_card(const gset *s) {
    switch (s->form) {
    case SET_INTSET: return as_cint(s)->count;
    case SET_SMALL: return as_csmall(s)->count;
    default: return lf_count(&as_clarge(s)->lf);
    }
}

size_t set_mem_usage(const gset *s) {
    size_t n = malloc_usable_size((void *)s);
    if (s->form == SET_LARGE) n += lf_mem_bytes(&as_clarge(s)->lf);
    return n;
}

int set_rehash_step(gset *s, size_t groups) {
    return s->form == SET_LARGE ? lf_rehash_step(&as_large(s)->lf, groups) : 0;
}

/* ---- membership ---- */

int set_contains(gset *s, const void *m, size_t n) {
    switch (s->form) {
    case SET_INTSET: {
        long long v;
        size_t pos;
        return str_to_ll(m, n, &v) && int_search(as_int(s), v, &pos);
    }
    case SET_SMALL: return small_find(as_small(s), m, n) != SIZE_MAX;
    default: return large_find(as_large(s), m, n, hash_bytes(m, n)) != NULL;
    }
}

void set_prefetch(const gset *s, const void *m, size_t n, int stage) {
    if (s->form == SET_LARGE) lf_prefetch(&((const slarge *)s)->lf, m, n, stage);
}

int set_contains_elem(gset *s, const set_elem *e) {
    if (s->form == SET_INTSET && e->isint) {
        size_t pos;
        return int_search(as_int(s), e->v, &pos);
    }
    return set_contains(s, e->p, e->n);
}

/* ---- add / remove ---- */

/* Add to a hashtable-form set. */
static int ht_add(gset **sp, const void *m, size_t n) {
    if ((*sp)->form == SET_SMALL) {
        ssmall *s = as_small(*sp);
        if (small_find(s, m, n) != SIZE_MAX) return 0;
        if (s->count < SET_SMALL_MAX_ENTRIES && n <= SET_SMALL_MAX_MEMBER) return small_append(sp, m, n);
        int rc = small_to_large(sp);
        if (rc != SET_OK) return rc;
    }
    return large_add(as_large(*sp), m, n);
}

/* Add integer v (whose text is m[0..n)) to an intset. */
static int int_add(gset **sp, int64_t v, const void *m, size_t n, const set_limits *lim) {
    sint *s = as_int(*sp);
    size_t pos;
    if (int_search(s, v, &pos)) return 0;
    if ((size_t)s->count + 1 > max_intset(lim)) {
        /* Redis adds, then converts; converting first (with room for the
         * new member) leaves the set unchanged if memory runs out. */
        int rc = int_to_ht(sp, (size_t)s->count + 1, n);
        if (rc != SET_OK) return rc;
        return ht_add(sp, m, n);
    }
    sint *ns = realloc(s, sizeof(sint) + ((size_t)s->count + 1) * sizeof(int64_t));
    if (!ns) return SET_ENOMEM;
    memmove(ns->v + pos + 1, ns->v + pos, (ns->count - pos) * sizeof(int64_t));
    ns->v[pos] = v;
    ns->count++;
    *sp = (gset *)ns;
    return 1;
}

int set_add(gset **sp, const void *m, size_t n, const set_limits *lim) {
    if ((*sp)->form == SET_INTSET) {
        long long v;
        if (str_to_ll(m, n, &v)) return int_add(sp, v, m, n, lim);
        /* Not an integer, so certainly absent. */
        int rc = int_to_ht(sp, (size_t)as_int(*sp)->count + 1, n);
        if (rc != SET_OK) return rc;
    }
    return ht_add(sp, m, n);
}

int set_add_elem(gset **sp, const set_elem *e, const set_limits *lim) {
    if ((*sp)->form == SET_INTSET && e->isint) return int_add(sp, e->v, e->p, e->n, lim);
    return set_add(sp, e->p, e->n, lim);
}

int set_remove(gset **sp, const void *m, size_t n) {
    gset *s = *sp;
    switch (s->form) {
    case SET_INTSET: {
        long long v;
        size_t pos;
        if (!str_to_ll(m, n, &v) || !int_search(as_int(s), v, &pos)) return 0;
        int_remove_at(sp, pos);
        return 1;
    }
    case SET_SMALL: {
        size_t pos = small_find(as_small(s), m, n);
        if (pos == SIZE_MAX) return 0;
        small_remove_at(sp, pos);
        return 1;
    }
    default: {
        slarge *l = as_large(s);
        void *slot = large_find(l, m, n, hash_bytes(m, n));
        if (!slot) return 0;
        large_remove_slot(l, slot);
        return 1;
    }
    }
}

int set_remove_elem(gset **sp, const set_elem *e) {
    if ((*sp)->form == SET_INTSET && e->isint) {
        size_t pos;
        if (!int_search(as_int(*sp), e->v, &pos)) return 0;
        int_remove_at(sp, pos);
        return 1;
    }
    return set_remove(sp, e->p, e->n);
}

/* ---- iteration ---- */

void set_iter_init(set_iter *it, gset *s) {
    it->s = s;
    it->pos = 0;
    if (s->form == SET_LARGE) swiss_iter_init(&it->si, &as_large(s)->lf.idx);
}

int set_iter_next(set_iter *it, set_elem *e) {
    gset *s = it->s;
    if (s->form == SET_INTSET) {
        const sint *is = as_int(s);
        if (it->pos >= is->count) return 0;
        elem_int(e, is->v[it->pos++]);
        return 1;
    }
    if (s->form == SET_SMALL) {
        const ssmall *ss = as_small(s);
        if (it->pos >= ss->used) return 0;
        const char *m;
        size_t n;
        it->pos = small_next(ss, it->pos, &m, &n);
        set_elem_bytes(e, m, n);
        return 1;
    }
    void *slot = swiss_iter_next(&it->si);
    if (!slot) return 0;
    size_t n;
    const char *m = lg_member(as_large(s), arena_ref_load(slot), &n);
    set_elem_bytes(e, m, n);
    return 1;
}

void set_iter_done(set_iter *it) {
    if (it->s->form == SET_LARGE) swiss_iter_done(&it->si);
}

/* ---- random ---- */

static void small_elem_at(const ssmall *s, size_t pos, set_elem *e) {
    const char *m;
    size_t n;
    small_next(s, pos, &m, &n);
    set_elem_bytes(e, m, n);
}

static void large_elem_of(const slarge *l, const void *slot, set_elem *e) {
    size_t n;
    const char *m = lg_member(l, arena_ref_load(slot), &n);
    set_elem_bytes(e, m, n);
}

int set_random(gset *s, set_rand_fn *rnd, set_elem *e) {
    size_t card = set_card(s);
    if (card == 0) return 0;
    if (s->form == SET_INTSET) {
        elem_int(e, as_int(s)->v[rnd_below(rnd, card)]);
    } else if (s->form == SET_SMALL) {
        const ssmall *ss = as_small(s);
        small_elem_at(ss, small_offset(ss, (size_t)rnd_below(rnd, card)), e);
    } else {
        slarge *l = as_large(s);
        void *slot = swiss_random(&l->lf.idx, rnd);
        if (!slot) return 0;
        large_elem_of(l, slot, e);
    }
    return 1;
}

/* Offsets of every entry of a small set (caller frees); NULL on OOM. */
static uint32_t *small_offsets(const ssmall *s) {
    uint32_t *off = malloc(((size_t)s->count + 1) * sizeof(*off));
    if (!off) return NULL;
    size_t pos = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        off[i] = (uint32_t)pos;
        pos += 1 + (size_t)s->data[pos];
    }
    return off;
}

void set_random_members(gset *s, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg) {
    size_t card = set_card(s);
    if (card == 0) return;
    set_elem e;
    if (s->form == SET_SMALL && count > 4) {
        const ssmall *ss = as_small(s);
        uint32_t *off = small_offsets(ss);
        if (off) {
            for (size_t i = 0; i < count; i++) {
                small_elem_at(ss, off[rnd_below(rnd, card)], &e);
                fn(arg, &e);
            }
            free(off);
            return;
        }
    }
    for (size_t i = 0; i < count; i++) {
        set_random(s, rnd, &e);
        fn(arg, &e);
    }
}

/* count distinct random refs of a large set (count < card) into rs. */
static int large_pick_unique(slarge *l, size_t count, set_rand_fn *rnd, lf_refset *rs) {
    if (lf_refset_init(rs, count) != LF_OK) return SET_ENOMEM;
    for (size_t got = 0; got < count;) {
        void *slot = swiss_random(&l->lf.idx, rnd);
        if (lf_refset_add(rs, arena_ref_load(slot))) got++;
    }
    return SET_OK;
}

typedef struct elem_ctx {
    slarge *l;
    set_elem_fn *fn;
    void *arg;
} elem_ctx;

/* Report the member at r. */
static void report_ref(void *arg, arena_ref r) {
    elem_ctx *ec = arg;
    size_t n;
    const char *m = lg_member(ec->l, r, &n);
    set_elem e;
    set_elem_bytes(&e, m, n);
    ec->fn(ec->arg, &e);
}

static void report_all(gset *s, set_elem_fn *fn, void *arg) {
    set_iter it;
    set_elem e;
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) fn(arg, &e);
    set_iter_done(&it);
}

/* Selection sampling: each member is taken with probability needed /
 * remaining, which yields a uniform subset (in iteration order). */
static void select_unique(gset *s, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg) {
    set_iter it;
    set_elem e;
    size_t need = count;
    set_iter_init(&it, s);
    for (size_t left = set_card(s); left && need && set_iter_next(&it, &e); left--) {
        if (rnd_below(rnd, left) < need) {
            fn(arg, &e);
            need--;
        }
    }
    set_iter_done(&it);
}

void set_random_unique(gset *s, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg) {
    size_t card = set_card(s);
    if (count >= card) {
        report_all(s, fn, arg);
        return;
    }
    if (count == 0) return;
    if (s->form != SET_LARGE) {
        select_unique(s, count, rnd, fn, arg);
        return;
    }
    elem_ctx ec = {as_large(s), fn, arg};
    if (lf_sample(&ec.l->lf, count, rnd, report_ref, &ec) != LF_OK) select_unique(s, count, rnd, fn, arg);
}

/* ---- pop ---- */

int set_pop(gset **sp, set_rand_fn *rnd, set_elem_fn *fn, void *arg) {
    gset *s = *sp;
    size_t card = set_card(s);
    if (card == 0) return 0;
    set_elem e;
    if (s->form == SET_INTSET) {
        size_t i = (size_t)rnd_below(rnd, card);
        elem_int(&e, as_int(s)->v[i]);
        fn(arg, &e);
        int_remove_at(sp, i);
    } else if (s->form == SET_SMALL) {
        const ssmall *ss = as_small(s);
        size_t pos = small_offset(ss, (size_t)rnd_below(rnd, card));
        small_elem_at(ss, pos, &e);
        fn(arg, &e);
        small_remove_at(sp, pos);
    } else {
        slarge *l = as_large(s);
        void *slot = swiss_random(&l->lf.idx, rnd);
        large_elem_of(l, slot, &e);
        fn(arg, &e);
        large_remove_slot(l, slot);
    }
    return 1;
}

/* Empty a set in place, keeping its form (no allocation). */
static void set_clear(gset *s) {
    if (s->form == SET_INTSET) {
        as_int(s)->count = 0;
    } else if (s->form == SET_SMALL) {
        as_small(s)->count = 0;
        as_small(s)->used = 0;
    } else {
        lf_reset(&as_large(s)->lf);
    }
}

/* Selection sampling over an intset or small set, removing the chosen
 * members and closing the gaps in the same pass. */
static void packed_pop_many(gset **sp, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg) {
    gset *s = *sp;
    size_t card = set_card(s), need = count;
    set_elem e;
    if (s->form == SET_INTSET) {
        sint *is = as_int(s);
        size_t w = 0;
        for (size_t r = 0; r < card; r++) {
            if (need && rnd_below(rnd, card - r) < need) {
                elem_int(&e, is->v[r]);
                fn(arg, &e);
                need--;
            } else {
                is->v[w++] = is->v[r];
            }
        }
        is->count = (uint32_t)w;
        sint *ns = realloc(is, sizeof(sint) + w * sizeof(int64_t));
        if (ns) *sp = (gset *)ns;
        return;
    }
    ssmall *ss = as_small(s);
    size_t r = 0, w = 0, left = card;
    while (r < ss->used) {
        size_t len = 1 + (size_t)ss->data[r];
        if (need && rnd_below(rnd, left) < need) {
            small_elem_at(ss, r, &e);
            fn(arg, &e);
            need--;
        } else {
            if (w != r) memmove(ss->data + w, ss->data + r, len);
            w += len;
        }
        r += len;
        left--;
    }
    ss->used = (uint32_t)w;
    ss->count = (uint16_t)(card - count);
    ssmall *ns = realloc(ss, sizeof(ssmall) + w);
    if (ns) *sp = (gset *)ns;
}

/* Pop count members of a large set one by one (allocates nothing). */
static void large_pop_each(slarge *l, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg) {
    set_elem e;
    for (size_t i = 0; i < count; i++) {
        void *slot = swiss_random(&l->lf.idx, rnd);
        large_elem_of(l, slot, &e);
        fn(arg, &e);
        large_remove_slot(l, slot);
    }
}

void set_pop_many(gset **sp, size_t count, set_rand_fn *rnd, set_elem_fn *fn, void *arg) {
    gset *s = *sp;
    size_t card = set_card(s);
    if (count == 0) return;
    if (count >= card) {
        report_all(s, fn, arg);
        set_clear(s);
        return;
    }
    if (s->form != SET_LARGE) {
        packed_pop_many(sp, count, rnd, fn, arg);
        return;
    }
    slarge *l = as_large(s);
    size_t remaining = card - count;
    if (remaining * 5 > count) {
        /* Most members stay: pop them one by one. */
        large_pop_each(l, count, rnd, fn, arg);
        return;
    }
    /* Few members stay: choose them, copy them into a new (compact) set,
     * report everything else and drop the old set whole. */
    lf_refset keep;
    if (large_pick_unique(l, remaining, rnd, &keep) != SET_OK) {
        large_pop_each(l, count, rnd, fn, arg);
        return;
    }
    gset *ns = set_new_hashtable();
    for (size_t i = 0; ns && i <= keep.mask; i++) {
        if (keep.t[i] == ARENA_REF_NONE) continue;
        size_t n;
        const char *m = lg_member(l, keep.t[i], &n);
        if (ht_add(&ns, m, n) < 0) {
            set_free(ns);
            ns = NULL;
        }
    }
    if (!ns) {
        lf_refset_free(&keep);
        large_pop_each(l, count, rnd, fn, arg);
        return;
    }
    swiss_iter it;
    swiss_iter_init(&it, &l->lf.idx);
    void *slot;
    set_elem e;
    while ((slot = swiss_iter_next(&it))) {
        if (lf_refset_has(&keep, arena_ref_load(slot))) continue;
        large_elem_of(l, slot, &e);
        fn(arg, &e);
    }
    swiss_iter_done(&it);
    lf_refset_free(&keep);
    large_free(l);
    *sp = ns;
}

/* ---- scan ---- */

static void scan_slot(void *arg, void *slot) { report_ref(arg, arena_ref_load(slot)); }

uint64_t set_scan(gset *s, uint64_t cursor, set_elem_fn *fn, void *arg) {
    if (s->form != SET_LARGE) {
        report_all(s, fn, arg);
        return 0;
    }
    elem_ctx ec = {as_large(s), fn, arg};
    return swiss_scan(&ec.l->lf.idx, cursor, scan_slot, &ec);
}

int set_compact_step(gset *s, size_t budget) {
    if (s->form != SET_LARGE) return 0;
    return lf_compact(&as_large(s)->lf, budget);
}

/* ---- checks ---- */

int set_check(const gset *s) {
    if (s->form == SET_INTSET) {
        const sint *is = as_cint(s);
        for (uint32_t i = 1; i < is->count; i++)
            if (is->v[i - 1] >= is->v[i]) return -__LINE__;
        return 0;
    }
    if (s->form == SET_SMALL) {
        const ssmall *ss = as_csmall(s);
        if (ss->count > SET_SMALL_MAX_ENTRIES) return -__LINE__;
        size_t pos = 0;
        uint32_t n = 0;
        while (pos < ss->used) {
            const char *m;
            size_t len;
            size_t next = small_next(ss, pos, &m, &len);
            if (next > ss->used || len > SET_SMALL_MAX_MEMBER) return -__LINE__;
            if (small_find(ss, m, len) != pos) return -__LINE__; /* an earlier duplicate */
            pos = next;
            n++;
        }
        if (pos != ss->used || n != ss->count) return -__LINE__;
        return 0;
    }
    if (s->form != SET_LARGE) return -__LINE__;
    return lf_check(&as_clarge(s)->lf);
}
