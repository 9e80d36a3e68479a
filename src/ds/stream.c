/* stream.c -- the stream type (see stream.h).
 *
 * Layout. Entries are packed in runs, the idea of Redis's listpack per
 * radix-tree node in our own bytes. A run starts with a header (its master
 * ID, 16 bytes, then the master fields: a count and each field) and holds
 * entries back to back:
 *   flags (1 byte: bit 0 deleted, bit 1 same fields as the master)
 *   LEB128 ms delta from the master ID, LEB128 zigzag seq delta
 *   [LEB128 field count, when not same fields]
 *   for each field: [LEB128 len, field bytes when not same] LEB128 len, value
 * Sealed runs are entries of the stream's own chunked arena; the last run,
 * while entries are still appended to it, is a heap buffer (`open`) that
 * grows geometrically, so an append copies nothing else; starting the next
 * run seals it (one copy into the arena). The index is a vector of run
 * descriptors sorted by master ID (appends go at its end; binary search
 * finds a run by ID). Deleting marks the entry's flags byte in place and
 * counts it; a run with no live entry goes (its arena bytes become dead,
 * reclaimed by compaction steps whose moves re-point the descriptor found
 * through the master ID stored in the run's header).
 *
 * Run boundaries follow Redis exactly: a new run starts when the tail's
 * Redis listpack size plus the new entry's field and value bytes reaches
 * stream-node-max-bytes, or its entries (live and deleted) reach
 * stream-node-max-entries. Each descriptor keeps the listpack size the run
 * would have (lp_fixed plus the two counters), so XTRIM ~, XINFO's
 * radix-tree-keys and the RDB nodes match redis-server's.
 *
 * Consumer groups: a vector of groups sorted by name, each with its
 * consumers sorted by name, and a pending entries list (PEL) that is a
 * vector of nack pointers sorted by ID; each consumer's PEL holds the same
 * nacks (owned by the group's), as Redis shares them between its raxes.
 * New deliveries have the highest IDs, so PEL inserts are mostly appends.
 *
 * Invariant (stream_check): runs are sorted by master ID, a run's entries
 * after the first have larger IDs and its live ones grow (a deleted entry
 * may be above the entries after it: XSETID may lower last_id past it, as
 * in Redis, so walks bound live entries only), each run's counters match
 * its flags bytes and live > 0; length is the sum of live counts; every
 * nack is in its group's PEL and in its consumer's PEL, each sorted and
 * free of duplicates. */
#include "ds/stream.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "util/varint.h"

#define F_DELETED 1
#define F_SAME 2
#define RUN_HDR 16

int stream_id_incr(stream_id *id) {
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX) return -1;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 0;
}

int stream_id_decr(stream_id *id) {
    if (id->seq == 0) {
        if (id->ms == 0) return -1;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 0;
}

/* ---- Redis listpack sizes ---- */

static size_t lp_backlen(size_t l) {
    if (l <= 127) return 1;
    if (l < 16383) return 2;
    if (l < 2097151) return 3;
    if (l < 268435455) return 4;
    return 5;
}

size_t stream_lp_int_size(int64_t v) {
    size_t l;
    if (v >= 0 && v <= 127) l = 1;
    else if (v >= -4096 && v <= 4095) l = 2;
    else if (v >= -32768 && v <= 32767) l = 3;
    else if (v >= -8388608 && v <= 8388607) l = 4;
    else if (v >= -2147483648LL && v <= 2147483647LL) l = 5;
    else l = 9;
    return l + lp_backlen(l);
}

size_t stream_lp_str_size(const void *p, size_t n) {
    long long v;
    if (n > 0 && n <= 20 && str_to_ll(p, n, &v)) return stream_lp_int_size(v);
    size_t l = n < 64 ? 1 + n : n < 4096 ? 2 + n : 5 + n;
    return l + lp_backlen(l);
}

static size_t run_lp_bytes(const stream_run *r) {
    return r->lp_fixed + stream_lp_int_size(r->live) + stream_lp_int_size(r->dead);
}

/* ---- runs ---- */

static inline unsigned char *run_bytes(const gstream *s, const stream_run *r) {
    if (r->ref == ARENA_REF_NONE) return s->open;
    return arena_get(&s->a, r->ref, NULL);
}

static inline uint64_t zz_enc(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t zz_dec(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Master fields of run bytes b into *mf (grown as needed); returns the
 * offset of the first entry. */
static size_t run_master(const unsigned char *b, stream_str **mf, size_t *cap, size_t *n) {
    size_t o = RUN_HDR, cnt, l;
    o += varint_get(b + o, &cnt);
    if (cnt > *cap) {
        stream_str *m = realloc(*mf, cnt * sizeof(*m));
        if (!m) abort();
        *mf = m;
        *cap = cnt;
    }
    for (size_t i = 0; i < cnt; i++) {
        o += varint_get(b + o, &l);
        (*mf)[i].p = b + o;
        (*mf)[i].n = l;
        o += l;
    }
    *n = cnt;
    return o;
}

/* Decode the entry header at b+o: flags, id, nfields; returns the offset
 * of its first field. */
static size_t entry_head(const unsigned char *b, size_t o, const stream_id *master, size_t nmaster, int *flags,
                         stream_id *id, size_t *nf) {
    size_t v;
    *flags = b[o++];
    o += varint_get(b + o, &v);
    id->ms = master->ms + (uint64_t)v;
    o += varint_get(b + o, &v);
    id->seq = master->seq + (uint64_t)zz_dec(v);
    if (*flags & F_SAME) {
        *nf = nmaster;
    } else {
        o += varint_get(b + o, &v);
        *nf = v;
    }
    return o;
}

/* Offset after the entry whose fields start at o. */
static size_t entry_skip(const unsigned char *b, size_t o, int same, size_t nf) {
    size_t l;
    for (size_t i = 0; i < nf; i++) {
        if (!same) {
            o += varint_get(b + o, &l);
            o += l;
        }
        o += varint_get(b + o, &l);
        o += l;
    }
    return o;
}

static int runs_reserve(gstream *s) {
    if (s->nruns < s->caprun) return 0;
    size_t nc = s->caprun ? s->caprun * 2 : 4;
    stream_run *r = realloc(s->runs, nc * sizeof(*r));
    if (!r) return -1;
    s->runs = r;
    s->caprun = nc;
    return 0;
}

static int open_reserve(gstream *s, size_t len, size_t need) {
    if (len + need <= s->open_cap) return 0;
    size_t nc = s->open_cap ? s->open_cap : 64;
    while (nc < len + need) nc *= 2;
    unsigned char *p = realloc(s->open, nc);
    if (!p) return -1;
    s->open = p;
    s->open_cap = nc;
    return 0;
}

/* The open run goes into the arena. */
int stream_seal(gstream *s) {
    if (!s->nruns) return STREAM_OK;
    stream_run *r = &s->runs[s->nruns - 1];
    if (r->ref != ARENA_REF_NONE) return STREAM_OK;
    arena_ref ref;
    int rc = arena_put(&s->a, s->open, r->len, &ref);
    if (rc != ARENA_OK) return rc == ARENA_EFULL ? STREAM_EFULL : STREAM_ENOMEM;
    r->ref = ref;
    free(s->open);
    s->open = NULL;
    s->open_cap = 0;
    return STREAM_OK;
}

static void put_str(unsigned char *b, size_t *o, const void *p, size_t n) {
    *o += varint_put(b + *o, n);
    if (n) memcpy(b + *o, p, n);
    *o += n;
}

/* Start a new open run with master ID first and master fields mf. */
static int run_start(gstream *s, const stream_id *first, const stream_str *mf, size_t nmaster) {
    int rc = stream_seal(s);
    if (rc != STREAM_OK) return rc;
    if (runs_reserve(s) != 0) return STREAM_ENOMEM;
    size_t need = RUN_HDR + varint_size(nmaster);
    for (size_t i = 0; i < nmaster; i++) need += varint_size(mf[i].n) + mf[i].n;
    if (open_reserve(s, 0, need) != 0) return STREAM_ENOMEM;
    unsigned char *b = s->open;
    memcpy(b, &first->ms, 8);
    memcpy(b + 8, &first->seq, 8);
    size_t o = RUN_HDR;
    o += varint_put(b + o, nmaster);
    /* listpack: header 6, terminator 1, master: num-fields, fields, 0 */
    size_t lpf = 7 + stream_lp_int_size((int64_t)nmaster) + stream_lp_int_size(0);
    for (size_t i = 0; i < nmaster; i++) {
        put_str(b, &o, mf[i].p, mf[i].n);
        lpf += stream_lp_str_size(mf[i].p, mf[i].n);
    }
    stream_run *r = &s->runs[s->nruns++];
    r->first = *first;
    r->ref = ARENA_REF_NONE;
    r->live = r->dead = 0;
    r->lp_fixed = (uint32_t)lpf;
    r->len = (uint32_t)o;
    return STREAM_OK;
}

/* Append an entry to the open run (which exists). */
static int run_add(gstream *s, const stream_id *id, const stream_str *fv, size_t nfields, int deleted) {
    stream_run *r = &s->runs[s->nruns - 1];
    assert(r->ref == ARENA_REF_NONE);
    const unsigned char *b = s->open;
    /* same fields as the master? */
    size_t cnt, l, o = RUN_HDR;
    o += varint_get(b + o, &cnt);
    int same = cnt == nfields;
    for (size_t i = 0; i < cnt && same; i++) {
        o += varint_get(b + o, &l);
        if (l != fv[2 * i].n || (l && memcmp(b + o, fv[2 * i].p, l) != 0)) same = 0;
        o += l;
    }
    uint64_t msd = id->ms - r->first.ms;
    int64_t seqd = (int64_t)(id->seq - r->first.seq);
    size_t need = 1 + varint_size(msd) + varint_size(zz_enc(seqd)) + (same ? 0 : varint_size(nfields));
    for (size_t i = 0; i < nfields; i++) {
        if (!same) need += varint_size(fv[2 * i].n) + fv[2 * i].n;
        need += varint_size(fv[2 * i + 1].n) + fv[2 * i + 1].n;
    }
    if ((uint64_t)r->len + need > UINT32_MAX - 64) return STREAM_EFULL;
    if (open_reserve(s, r->len, need) != 0) return STREAM_ENOMEM;
    unsigned char *w = s->open;
    o = r->len;
    w[o++] = (unsigned char)((same ? F_SAME : 0) | (deleted ? F_DELETED : 0));
    o += varint_put(w + o, msd);
    o += varint_put(w + o, zz_enc(seqd));
    if (!same) o += varint_put(w + o, nfields);
    size_t lpf = stream_lp_int_size((same ? F_SAME : 0) | (deleted ? F_DELETED : 0)) +
                 stream_lp_int_size((int64_t)msd) + stream_lp_int_size(seqd);
    if (!same) lpf += stream_lp_int_size((int64_t)nfields);
    for (size_t i = 0; i < nfields; i++) {
        if (!same) {
            put_str(w, &o, fv[2 * i].p, fv[2 * i].n);
            lpf += stream_lp_str_size(fv[2 * i].p, fv[2 * i].n);
        }
        put_str(w, &o, fv[2 * i + 1].p, fv[2 * i + 1].n);
        lpf += stream_lp_str_size(fv[2 * i + 1].p, fv[2 * i + 1].n);
    }
    int64_t lpcount = (int64_t)nfields + 3 + (same ? 0 : (int64_t)nfields + 1);
    lpf += stream_lp_int_size(lpcount);
    r->len = (uint32_t)o;
    r->lp_fixed += (uint32_t)lpf;
    if (deleted) r->dead++;
    else r->live++;
    return STREAM_OK;
}

int stream_append(gstream *s, const stream_id *id, const stream_str *fv, size_t nfields, const stream_limits *lim) {
    size_t tot = 0;
    for (size_t i = 0; i < 2 * nfields; i++) tot += fv[i].n;
    int fresh = 1;
    if (s->nruns) {
        stream_run *r = &s->runs[s->nruns - 1];
        size_t maxb = lim->max_bytes;
        if (maxb == 0 || maxb > ((size_t)1 << 30)) maxb = (size_t)1 << 30;
        fresh = r->ref != ARENA_REF_NONE || run_lp_bytes(r) + tot >= maxb ||
                (lim->max_entries && (long long)(r->live + r->dead) >= lim->max_entries);
    }
    int rc;
    if (fresh) {
        stream_str *mf = malloc((nfields ? nfields : 1) * sizeof(*mf));
        if (!mf) return STREAM_ENOMEM;
        for (size_t i = 0; i < nfields; i++) mf[i] = fv[2 * i];
        rc = run_start(s, id, mf, nfields);
        free(mf);
        if (rc != STREAM_OK) return rc;
    }
    rc = run_add(s, id, fv, nfields, 0);
    if (rc != STREAM_OK) {
        if (fresh) { /* drop the empty run again */
            s->nruns--;
            free(s->open);
            s->open = NULL;
            s->open_cap = 0;
        }
        return rc;
    }
    s->length++;
    s->entries_added++;
    s->last_id = *id;
    if (s->length == 1) s->first_id = *id;
    return STREAM_OK;
}

int stream_load_entry(gstream *s, int new_run, const stream_id *first, const stream_str *mf, size_t nmaster,
                      const stream_id *id, const stream_str *fv, size_t nfields, int deleted) {
    int rc;
    if (new_run || !s->nruns || s->runs[s->nruns - 1].ref != ARENA_REF_NONE) {
        if ((rc = run_start(s, first, mf, nmaster)) != STREAM_OK) return rc;
    }
    if ((rc = run_add(s, id, fv, nfields, deleted)) != STREAM_OK) return rc;
    if (!deleted) s->length++;
    return STREAM_OK;
}

static void run_remove(gstream *s, size_t i);

void stream_load_end_run(gstream *s) {
    if (s->nruns && s->runs[s->nruns - 1].live == 0) run_remove(s, s->nruns - 1);
}

gstream *stream_new(void) {
    gstream *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    if (arena_init(&s->a, NULL) != ARENA_OK) {
        free(s);
        return NULL;
    }
    return s;
}

static void pel_free(stream_pel *p) { free(p->v); }

static void group_free(stream_group *g) {
    for (size_t i = 0; i < g->pel.n; i++) free(g->pel.v[i]);
    pel_free(&g->pel);
    for (size_t i = 0; i < g->ncons; i++) {
        pel_free(&g->cons[i]->pel);
        free(g->cons[i]->name);
        free(g->cons[i]);
    }
    free(g->cons);
    free(g->name);
    free(g);
}

void stream_free(gstream *s) {
    if (!s) return;
    for (size_t i = 0; i < s->ngroups; i++) group_free(s->groups[i]);
    free(s->groups);
    arena_destroy(&s->a);
    free(s->runs);
    free(s->open);
    free(s);
}

size_t stream_mem_bytes(const gstream *s) {
    size_t m = sizeof(*s) + arena_mem_bytes(&s->a) + s->caprun * sizeof(stream_run) + s->open_cap;
    for (size_t i = 0; i < s->ngroups; i++) {
        const stream_group *g = s->groups[i];
        m += sizeof(*g) + g->nlen + g->pel.cap * sizeof(void *) + g->pel.n * sizeof(stream_nack);
        for (size_t j = 0; j < g->ncons; j++)
            m += sizeof(stream_consumer) + g->cons[j]->nlen + g->cons[j]->pel.cap * sizeof(void *);
        m += g->capcons * sizeof(void *);
    }
    return m;
}

/* ---- iteration ---- */

void stream_iter_init(stream_iter *it, gstream *s, const stream_id *start, const stream_id *end, int rev) {
    memset(it, 0, sizeof(*it));
    it->s = s;
    if (start) it->start = *start;
    if (end) it->end = *end;
    else it->end.ms = it->end.seq = UINT64_MAX;
    it->rev = rev;
    /* first run to look at: the last whose master ID <= the bound */
    const stream_id *bound = rev ? &it->end : &it->start;
    size_t lo = 0, hi = s->nruns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (stream_id_cmp(&s->runs[mid].first, bound) <= 0) lo = mid + 1;
        else hi = mid;
    }
    /* lo = number of runs with first <= bound */
    if (rev) {
        it->run = lo; /* runs [0, lo) are candidates; we go down from lo-1 */
    } else {
        it->run = lo ? lo - 1 : 0;
    }
    it->in_run = 0;
}

/* Load run i: offsets of its entries and its master fields. */
static void iter_load(stream_iter *it, size_t i) {
    gstream *s = it->s;
    const stream_run *r = &s->runs[i];
    const unsigned char *b = run_bytes(s, r);
    it->base = b;
    size_t o = run_master(b, &it->master, &it->capmaster, &it->nmaster);
    size_t n = (size_t)r->live + r->dead;
    if (n > it->capoffs) {
        uint32_t *no = realloc(it->offs, n * sizeof(*no));
        if (!no) abort();
        it->offs = no;
        it->capoffs = n;
    }
    for (size_t k = 0; k < n; k++) {
        it->offs[k] = (uint32_t)o;
        int fl;
        stream_id id;
        size_t nf;
        size_t f = entry_head(b, o, &r->first, it->nmaster, &fl, &id, &nf);
        o = entry_skip(b, f, fl & F_SAME, nf);
    }
    assert(o == r->len);
    it->noffs = n;
    it->pos = it->rev ? (long)n : -1;
    it->in_run = 1;
}

int stream_iter_next(stream_iter *it, stream_id *id, size_t *nfields) {
    gstream *s = it->s;
    for (;;) {
        if (!it->in_run) {
            if (it->rev) {
                if (it->run == 0) return 0;
                it->run--;
            } else if (it->run >= s->nruns) {
                return 0;
            }
            iter_load(it, it->run);
        }
        for (;;) {
            it->pos += it->rev ? -1 : 1;
            if (it->pos < 0 || (size_t)it->pos >= it->noffs) break;
            int fl;
            stream_id cur;
            size_t nf;
            const stream_run *r = &s->runs[it->run];
            size_t f = entry_head(it->base, it->offs[it->pos], &r->first, it->nmaster, &fl, &cur, &nf);
            /* bounds apply to live entries only: a deleted one may be
             * above the entries after it (see the invariant) */
            if (fl & F_DELETED) continue;
            if (!it->rev && stream_id_cmp(&cur, &it->end) > 0) return 0;
            if (it->rev && stream_id_cmp(&cur, &it->start) < 0) return 0;
            if (!it->rev && stream_id_cmp(&cur, &it->start) < 0) continue;
            if (it->rev && stream_id_cmp(&cur, &it->end) > 0) continue;
            it->ep = it->base + f;
            it->same = (fl & F_SAME) != 0;
            it->nfields = nf;
            it->fi = 0;
            it->cur = cur;
            *id = cur;
            *nfields = nf;
            return 1;
        }
        it->in_run = 0;
        if (!it->rev) it->run++;
    }
}

void stream_iter_field(stream_iter *it, stream_str *field, stream_str *value) {
    size_t l;
    if (it->same) {
        *field = it->master[it->fi];
    } else {
        it->ep += varint_get(it->ep, &l);
        field->p = it->ep;
        field->n = l;
        it->ep += l;
    }
    it->ep += varint_get(it->ep, &l);
    value->p = it->ep;
    value->n = l;
    it->ep += l;
    it->fi++;
}

static void run_remove(gstream *s, size_t i) {
    stream_run *r = &s->runs[i];
    if (r->ref == ARENA_REF_NONE) {
        free(s->open);
        s->open = NULL;
        s->open_cap = 0;
    } else {
        arena_free(&s->a, r->ref);
    }
    memmove(&s->runs[i], &s->runs[i + 1], (s->nruns - i - 1) * sizeof(*r));
    s->nruns--;
}

static void stream_moved(void *ctx, arena_ref from, arena_ref to, const void *data, size_t len) {
    gstream *s = ctx;
    (void)len;
    stream_id first;
    memcpy(&first.ms, data, 8);
    memcpy(&first.seq, (const unsigned char *)data + 8, 8);
    size_t lo = 0, hi = s->nruns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = stream_id_cmp(&s->runs[mid].first, &first);
        if (c == 0) {
            assert(s->runs[mid].ref == from);
            s->runs[mid].ref = to;
            return;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    assert(0 && "moved run not indexed");
}

/* A few compaction steps after runs went. */
static void stream_compact(gstream *s) {
    for (int i = 0; i < 4 && arena_compact_needed(&s->a); i++)
        if (arena_compact_step(&s->a, 64 * 1024, stream_moved, s) != 1) break;
}

/* Mark the entry at offset o of run i deleted. Returns 1 when the run went. */
static int mark_deleted(gstream *s, size_t i, size_t o) {
    stream_run *r = &s->runs[i];
    unsigned char *b = run_bytes(s, r);
    assert(!(b[o] & F_DELETED));
    b[o] |= F_DELETED;
    r->live--;
    r->dead++;
    s->length--;
    if (r->live == 0) {
        run_remove(s, i);
        return 1;
    }
    return 0;
}

void stream_iter_delete(stream_iter *it) {
    gstream *s = it->s;
    /* When the run goes, the next one moves down into its index: the
     * forward walk loads that index next, the backward one the one below. */
    if (mark_deleted(s, it->run, it->offs[it->pos])) it->in_run = 0;
}

void stream_iter_done(stream_iter *it) {
    free(it->offs);
    free(it->master);
    it->offs = NULL;
    it->master = NULL;
}

int stream_edge_id(gstream *s, int first, stream_id *id) {
    stream_iter it;
    size_t nf;
    stream_iter_init(&it, s, NULL, NULL, !first);
    int ok = stream_iter_next(&it, id, &nf);
    stream_iter_done(&it);
    if (!ok) id->ms = id->seq = 0;
    return ok;
}

int stream_delete(gstream *s, const stream_id *id) {
    stream_iter it;
    stream_id cur;
    size_t nf;
    stream_iter_init(&it, s, id, id, 0);
    int found = stream_iter_next(&it, &cur, &nf);
    if (found) stream_iter_delete(&it);
    stream_iter_done(&it);
    if (found) {
        if (s->length == 0) s->first_id.ms = s->first_id.seq = 0;
        else if (stream_id_cmp(id, &s->first_id) == 0) stream_edge_id(s, 1, &s->first_id);
        stream_compact(s);
    }
    return found;
}

/* The last entry's ID of run i (deleted ones included). */
static stream_id run_last_id(gstream *s, size_t i) {
    stream_iter it;
    memset(&it, 0, sizeof(it));
    it.s = s;
    iter_load(&it, i);
    int fl;
    size_t nf;
    stream_id id;
    entry_head(it.base, it.offs[it.noffs - 1], &s->runs[i].first, it.nmaster, &fl, &id, &nf);
    stream_iter_done(&it);
    return id;
}

int64_t stream_trim(gstream *s, const stream_trim_args *t) {
    if (t->strategy == STREAM_TRIM_NONE) return 0;
    int64_t deleted = 0;
    while (s->nruns) {
        if (t->strategy == STREAM_TRIM_MAXLEN && s->length <= t->maxlen) break;
        stream_run *r = &s->runs[0];
        int64_t entries = r->live;
        if (t->limit && deleted + entries > t->limit) break;
        int remove;
        if (t->strategy == STREAM_TRIM_MAXLEN) {
            remove = s->length - (uint64_t)entries >= t->maxlen;
        } else {
            stream_id last = run_last_id(s, 0);
            remove = stream_id_cmp(&last, &t->minid) < 0;
        }
        if (remove) {
            s->length -= (uint64_t)entries;
            deleted += entries;
            run_remove(s, 0);
            continue;
        }
        if (t->approx) break;
        /* entries inside run 0 */
        stream_iter it;
        memset(&it, 0, sizeof(it));
        it.s = s;
        iter_load(&it, 0);
        for (size_t k = 0; k < it.noffs; k++) {
            int fl;
            size_t nf;
            stream_id id;
            entry_head(it.base, it.offs[k], &s->runs[0].first, it.nmaster, &fl, &id, &nf);
            int stop = t->strategy == STREAM_TRIM_MAXLEN ? s->length <= t->maxlen : stream_id_cmp(&id, &t->minid) >= 0;
            if (stop) break;
            if (!(fl & F_DELETED)) {
                deleted++;
                /* never the run's last live entry: the whole-run test
                 * above would have removed it */
                /* Redis keeps a node whose last live entry this marks
                 * (its last entry is a deleted one); we drop the run */
                if (mark_deleted(s, 0, it.offs[k])) break;
            }
        }
        stream_iter_done(&it);
        break;
    }
    if (s->length == 0) s->first_id.ms = s->first_id.seq = 0;
    else if (deleted) stream_edge_id(s, 1, &s->first_id);
    if (deleted) stream_compact(s);
    return deleted;
}

int stream_run_walk(gstream *s, size_t i, stream_run_view *v, stream_entry_fn *fn, void *arg) {
    stream_iter it;
    memset(&it, 0, sizeof(it));
    it.s = s;
    iter_load(&it, i);
    const stream_run *r = &s->runs[i];
    v->first = r->first;
    v->live = r->live;
    v->dead = r->dead;
    v->master = it.master;
    v->nmaster = it.nmaster;
    stream_str *fv = NULL;
    size_t capfv = 0;
    for (size_t k = 0; k < it.noffs; k++) {
        int fl;
        size_t nf;
        stream_id id;
        size_t f = entry_head(it.base, it.offs[k], &r->first, it.nmaster, &fl, &id, &nf);
        if (2 * nf > capfv) {
            capfv = 2 * nf;
            fv = realloc(fv, capfv * sizeof(*fv));
            if (!fv) abort();
        }
        it.ep = it.base + f;
        it.same = (fl & F_SAME) != 0;
        it.fi = 0;
        for (size_t j = 0; j < nf; j++) stream_iter_field(&it, &fv[2 * j], &fv[2 * j + 1]);
        fn(arg, &id, fl & F_DELETED, it.same, fv, nf);
    }
    free(fv);
    v->master = NULL; /* valid during the callbacks only */
    stream_iter_done(&it);
    return 0;
}

/* ---- copy ---- */

static int pel_reserve(stream_pel *p, size_t n) {
    if (n <= p->cap) return 0;
    size_t nc = p->cap ? p->cap : 4;
    while (nc < n) nc *= 2;
    stream_nack **v = realloc(p->v, nc * sizeof(*v));
    if (!v) return -1;
    p->v = v;
    p->cap = nc;
    return 0;
}

gstream *stream_dup(const gstream *src) {
    gstream *s = stream_new();
    if (!s) return NULL;
    gstream *from = (gstream *)src;
    for (size_t i = 0; i < from->nruns; i++) {
        const stream_run *r = &from->runs[i];
        const unsigned char *b = run_bytes(from, r);
        if (runs_reserve(s) != 0) goto oom;
        stream_run *d = &s->runs[s->nruns];
        *d = *r;
        if (r->ref == ARENA_REF_NONE) {
            if (open_reserve(s, 0, r->len) != 0) goto oom;
            memcpy(s->open, b, r->len);
        } else if (arena_put(&s->a, b, r->len, &d->ref) != ARENA_OK) {
            goto oom;
        }
        s->nruns++;
    }
    s->length = from->length;
    s->last_id = from->last_id;
    s->first_id = from->first_id;
    s->max_deleted_id = from->max_deleted_id;
    s->entries_added = from->entries_added;
    for (size_t i = 0; i < from->ngroups; i++) {
        const stream_group *g = from->groups[i];
        stream_group *ng = stream_group_create(s, g->name, g->nlen, &g->last_id, g->entries_read);
        if (!ng) goto oom;
        for (size_t j = 0; j < g->ncons; j++) {
            stream_consumer *c = stream_consumer_create(ng, g->cons[j]->name, g->cons[j]->nlen, g->cons[j]->seen_time);
            if (!c) goto oom;
        }
        for (size_t j = 0; j < g->pel.n; j++) {
            const stream_nack *na = g->pel.v[j];
            stream_consumer *c = stream_consumer_find(ng, na->consumer->name, na->consumer->nlen);
            stream_nack *nn = stream_nack_add(ng, c, &na->id, na->delivery_time);
            if (!nn) goto oom;
            nn->delivery_count = na->delivery_count;
        }
    }
    return s;
oom:
    stream_free(s);
    return NULL;
}

/* ---- consumer groups ---- */

static int name_cmp(const char *a, size_t an, const void *b, size_t bn) {
    size_t m = an < bn ? an : bn;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

static size_t group_pos(gstream *s, const void *name, size_t n, int *found) {
    size_t lo = 0, hi = s->ngroups;
    *found = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = name_cmp(s->groups[mid]->name, s->groups[mid]->nlen, name, n);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

stream_group *stream_group_find(gstream *s, const void *name, size_t n) {
    int found;
    size_t i = group_pos(s, name, n, &found);
    return found ? s->groups[i] : NULL;
}

static char *dup_name(const void *p, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, p, n);
    d[n] = 0;
    return d;
}

stream_group *stream_group_create(gstream *s, const void *name, size_t n, const stream_id *last_id,
                                  long long entries_read) {
    int found;
    size_t i = group_pos(s, name, n, &found);
    if (found) return NULL;
    if (s->ngroups == s->capgroups) {
        size_t nc = s->capgroups ? s->capgroups * 2 : 2;
        stream_group **g = realloc(s->groups, nc * sizeof(*g));
        if (!g) return NULL;
        s->groups = g;
        s->capgroups = nc;
    }
    stream_group *g = calloc(1, sizeof(*g));
    if (!g || !(g->name = dup_name(name, n))) {
        free(g);
        return NULL;
    }
    g->nlen = n;
    g->last_id = *last_id;
    g->entries_read = entries_read;
    memmove(&s->groups[i + 1], &s->groups[i], (s->ngroups - i) * sizeof(*s->groups));
    s->groups[i] = g;
    s->ngroups++;
    return g;
}

int stream_group_destroy(gstream *s, const void *name, size_t n) {
    int found;
    size_t i = group_pos(s, name, n, &found);
    if (!found) return 0;
    group_free(s->groups[i]);
    memmove(&s->groups[i], &s->groups[i + 1], (s->ngroups - i - 1) * sizeof(*s->groups));
    s->ngroups--;
    return 1;
}

static size_t cons_pos(stream_group *g, const void *name, size_t n, int *found) {
    size_t lo = 0, hi = g->ncons;
    *found = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = name_cmp(g->cons[mid]->name, g->cons[mid]->nlen, name, n);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

stream_consumer *stream_consumer_find(stream_group *g, const void *name, size_t n) {
    int found;
    size_t i = cons_pos(g, name, n, &found);
    return found ? g->cons[i] : NULL;
}

stream_consumer *stream_consumer_create(stream_group *g, const void *name, size_t n, int64_t now) {
    int found;
    size_t i = cons_pos(g, name, n, &found);
    if (found) return NULL;
    if (g->ncons == g->capcons) {
        size_t nc = g->capcons ? g->capcons * 2 : 2;
        stream_consumer **v = realloc(g->cons, nc * sizeof(*v));
        if (!v) return NULL;
        g->cons = v;
        g->capcons = nc;
    }
    stream_consumer *c = calloc(1, sizeof(*c));
    if (!c || !(c->name = dup_name(name, n))) {
        free(c);
        return NULL;
    }
    c->nlen = n;
    c->seen_time = now;
    memmove(&g->cons[i + 1], &g->cons[i], (g->ncons - i) * sizeof(*g->cons));
    g->cons[i] = c;
    g->ncons++;
    return c;
}

size_t stream_consumer_delete(stream_group *g, stream_consumer *c) {
    size_t n = c->pel.n;
    for (size_t i = 0; i < c->pel.n; i++) {
        stream_nack *na = c->pel.v[i];
        stream_pel_remove(&g->pel, &na->id);
        free(na);
    }
    pel_free(&c->pel);
    int found;
    size_t i = cons_pos(g, c->name, c->nlen, &found);
    assert(found);
    memmove(&g->cons[i], &g->cons[i + 1], (g->ncons - i - 1) * sizeof(*g->cons));
    g->ncons--;
    free(c->name);
    free(c);
    return n;
}

size_t stream_pel_lower(const stream_pel *p, const stream_id *id) {
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (stream_id_cmp(&p->v[mid]->id, id) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

stream_nack *stream_pel_find(const stream_pel *p, const stream_id *id) {
    size_t i = stream_pel_lower(p, id);
    return i < p->n && stream_id_cmp(&p->v[i]->id, id) == 0 ? p->v[i] : NULL;
}

int stream_pel_insert(stream_pel *p, stream_nack *na) {
    if (pel_reserve(p, p->n + 1) != 0) return -1;
    size_t i = p->n && stream_id_cmp(&p->v[p->n - 1]->id, &na->id) < 0 ? p->n : stream_pel_lower(p, &na->id);
    memmove(&p->v[i + 1], &p->v[i], (p->n - i) * sizeof(*p->v));
    p->v[i] = na;
    p->n++;
    return 0;
}

void stream_pel_remove(stream_pel *p, const stream_id *id) {
    size_t i = stream_pel_lower(p, id);
    if (i < p->n && stream_id_cmp(&p->v[i]->id, id) == 0) {
        memmove(&p->v[i], &p->v[i + 1], (p->n - i - 1) * sizeof(*p->v));
        p->n--;
    }
}

stream_nack *stream_nack_add(stream_group *g, stream_consumer *c, const stream_id *id, int64_t now) {
    stream_nack *na = malloc(sizeof(*na));
    if (!na) return NULL;
    na->id = *id;
    na->delivery_time = now;
    na->delivery_count = 1;
    na->consumer = c;
    if (pel_reserve(&g->pel, g->pel.n + 1) != 0 || pel_reserve(&c->pel, c->pel.n + 1) != 0) {
        free(na);
        return NULL;
    }
    stream_pel_insert(&g->pel, na);
    stream_pel_insert(&c->pel, na);
    return na;
}

void stream_nack_del(stream_group *g, stream_nack *na) {
    stream_pel_remove(&g->pel, &na->id);
    stream_pel_remove(&na->consumer->pel, &na->id);
    free(na);
}

void stream_nack_move(stream_nack *na, stream_consumer *c) {
    if (na->consumer == c) return;
    stream_pel_remove(&na->consumer->pel, &na->id);
    if (stream_pel_insert(&c->pel, na) != 0) abort();
    na->consumer = c;
}

int stream_range_has_tombstones(gstream *s, const stream_id *start, const stream_id *end) {
    static const stream_id zero = {0, 0}, max = {UINT64_MAX, UINT64_MAX};
    if (!s->length || (s->max_deleted_id.ms == 0 && s->max_deleted_id.seq == 0)) return 0;
    if (stream_id_cmp(&s->first_id, &s->max_deleted_id) > 0) return 0;
    const stream_id *a = start ? start : &zero, *b = end ? end : &max;
    return stream_id_cmp(a, &s->max_deleted_id) <= 0 && stream_id_cmp(&s->max_deleted_id, b) <= 0;
}

long long stream_estimate_distance(gstream *s, const stream_id *id) {
    if (!s->entries_added) return 0;
    if (!s->length && stream_id_cmp(id, &s->last_id) < 1) return (long long)s->entries_added;
    int cl = stream_id_cmp(id, &s->last_id);
    if (cl == 0) return (long long)s->entries_added;
    if (cl > 0) return STREAM_ENTRIES_READ_INVALID;
    int cf = stream_id_cmp(id, &s->first_id);
    int cx = stream_id_cmp(&s->max_deleted_id, &s->first_id);
    if ((s->max_deleted_id.ms == 0 && s->max_deleted_id.seq == 0) || cx < 0) {
        if (cf < 0) return (long long)(s->entries_added - s->length);
        if (cf == 0) return (long long)(s->entries_added - s->length + 1);
    }
    return STREAM_ENTRIES_READ_INVALID;
}

int stream_check(gstream *s) {
    uint64_t len = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        const stream_run *r = &s->runs[i];
        if (i && stream_id_cmp(&s->runs[i - 1].first, &r->first) >= 0) return -1;
        if (r->ref == ARENA_REF_NONE && i != s->nruns - 1) return -2;
        if (r->live == 0) return -3;
        stream_iter it;
        memset(&it, 0, sizeof(it));
        it.s = s;
        iter_load(&it, i);
        uint32_t live = 0, dead = 0;
        stream_id prev = {0, 0};
        for (size_t k = 0; k < it.noffs; k++) {
            int fl;
            size_t nf;
            stream_id id;
            entry_head(it.base, it.offs[k], &r->first, it.nmaster, &fl, &id, &nf);
            if (k == 0 && stream_id_cmp(&id, &r->first) != 0) return -4;
            if (k && stream_id_cmp(&r->first, &id) >= 0) return -5;
            if (fl & F_DELETED) {
                dead++;
                continue;
            }
            if (live && stream_id_cmp(&prev, &id) >= 0) return -5;
            prev = id;
            live++;
        }
        stream_iter_done(&it);
        if (live != r->live || dead != r->dead) return -6;
        if (stream_id_cmp(&prev, &s->last_id) > 0) return -7;
        len += live;
    }
    if (len != s->length) return -8;
    for (size_t i = 0; i < s->ngroups; i++) {
        stream_group *g = s->groups[i];
        if (i && name_cmp(s->groups[i - 1]->name, s->groups[i - 1]->nlen, g->name, g->nlen) >= 0) return -9;
        size_t tot = 0;
        for (size_t j = 0; j < g->ncons; j++) {
            stream_consumer *c = g->cons[j];
            tot += c->pel.n;
            for (size_t k = 0; k < c->pel.n; k++) {
                if (c->pel.v[k]->consumer != c) return -10;
                if (k && stream_id_cmp(&c->pel.v[k - 1]->id, &c->pel.v[k]->id) >= 0) return -11;
                if (stream_pel_find(&g->pel, &c->pel.v[k]->id) != c->pel.v[k]) return -12;
            }
        }
        if (tot != g->pel.n) return -13;
        for (size_t k = 1; k < g->pel.n; k++)
            if (stream_id_cmp(&g->pel.v[k - 1]->id, &g->pel.v[k]->id) >= 0) return -14;
    }
    return 0;
}
