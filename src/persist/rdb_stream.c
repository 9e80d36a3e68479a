/* rdb_stream.c -- loading stream values: RDB_TYPE_STREAM_LISTPACKS (15,
 * Redis 5-6), _2 (19, Redis 7.0) and _3 (21, Redis 7.2, whose consumers
 * also carry an active time, read and dropped).
 *
 * A stream value is its radix tree of listpacks, as (master ID, listpack)
 * pairs, then the length, last ID, [first ID, max deleted ID, entries
 * added], and the consumer groups: name, last ID, [entries read], the
 * group PEL (raw IDs with delivery time and count) and the consumers (name,
 * seen time, [active time], raw IDs of their pending entries). Each
 * listpack is walked with packed.c's validating iterator and its entries
 * rebuilt as one run each (ds/stream's stream_load_entry), deleted entries
 * included, so node boundaries survive a round trip. Everything that does
 * not add up is corruption: a node key that is not 16 bytes, a master
 * entry or entry that is cut short, lp-count fields that disagree, a
 * node's first entry whose ID is not the node key (Redis never writes
 * one: deleted entries keep their place), IDs that do not grow, counts
 * that differ from the entries, a PEL entry that is duplicated or that no
 * consumer (or two consumers) claims. */
#include <stdlib.h>
#include <string.h>

#include "ds/stream.h"
#include "persist/packed.h"
#include "persist/rdb_in.h"
#include "util/strutil.h"

static uint64_t be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

/* In Redis's words where it has them ("Stream listpack integrity check
 * failed"), so an operator's search finds both. */
static int corrupt(rdb_in *in, const char *what) {
    return in_fail(in, RDB_ERR_ENCODING, "Stream integrity check failed: %s", what);
}

/* Elements of one listpack, as text (integers formatted into txt). */
typedef struct lp_elems {
    stream_str *e;
    int64_t *iv;
    int *isint;
    char (*txt)[24];
    size_t n, cap;
} lp_elems;

static void elems_free(lp_elems *l) {
    free(l->e);
    free(l->iv);
    free(l->isint);
    free(l->txt);
}

static int elems_read(rdb_in *in, lp_elems *l, const unsigned char *blob, size_t n) {
    lp_iter it;
    l->n = 0;
    if (lp_iter_init(&it, blob, n) != 0)
        return in_fail(in, RDB_ERR_ENCODING, "Stream listpack integrity check failed: bad header");
    pk_elem e;
    int r;
    while ((r = lp_iter_next(&it, &e)) == 1) {
        if (l->n == l->cap) {
            size_t nc = l->cap ? l->cap * 2 : 64;
            stream_str *ne = realloc(l->e, nc * sizeof(*ne));
            if (ne) l->e = ne;
            int64_t *ni = realloc(l->iv, nc * sizeof(*ni));
            if (ni) l->iv = ni;
            int *nb = realloc(l->isint, nc * sizeof(*nb));
            if (nb) l->isint = nb;
            char(*nt)[24] = realloc(l->txt, nc * sizeof(*nt));
            if (nt) l->txt = nt;
            if (!ne || !ni || !nb || !nt) return in_nomem(in);
            l->cap = nc;
        }
        size_t k = l->n++;
        l->isint[k] = e.isint;
        l->iv[k] = e.v;
        if (e.isint) {
            l->e[k].n = (size_t)ll_to_str(l->txt[k], sizeof(l->txt[k]), e.v);
            l->e[k].p = NULL; /* points into txt, set once the arrays stop moving */
        } else {
            l->e[k].p = e.s;
            l->e[k].n = e.n;
        }
    }
    if (r < 0) return in_fail(in, RDB_ERR_ENCODING, "Stream listpack integrity check failed");
    for (size_t k = 0; k < l->n; k++)
        if (l->isint[k]) l->e[k].p = l->txt[k];
    return 0;
}

/* An integer element at k (a listpack integer, or text that is one). */
static int elem_int(const lp_elems *l, size_t k, int64_t *v) {
    if (k >= l->n) return 0;
    if (l->isint[k]) {
        *v = l->iv[k];
        return 1;
    }
    long long x;
    if (!str_to_ll(l->e[k].p, l->e[k].n, &x)) return 0;
    *v = x;
    return 1;
}

/* One node: its entries into s. *prev is the last live ID loaded so far. */
static int load_node(rdb_in *in, gstream *s, const stream_id *master, lp_elems *l, stream_id *prev, int *any) {
    int64_t count, deleted, nmaster, zero;
    if (!elem_int(l, 0, &count) || !elem_int(l, 1, &deleted) || !elem_int(l, 2, &nmaster) || count < 0 ||
        deleted < 0 || nmaster < 0 || (uint64_t)nmaster > l->n)
        return corrupt(in, "bad master entry");
    size_t k = 3 + (size_t)nmaster;
    if (!elem_int(l, k, &zero) || zero != 0) return corrupt(in, "master entry not terminated");
    k++;
    const stream_str *mf = &l->e[3];
    int64_t live = 0, dead = 0;
    stream_str *fv = NULL;
    size_t capfv = 0;
    int first = 1, rc = 0;
    while (k < l->n) {
        int64_t flags, msd, seqd, nf, lpcount;
        if (!elem_int(l, k, &flags) || !elem_int(l, k + 1, &msd) || !elem_int(l, k + 2, &seqd)) {
            rc = corrupt(in, "entry header cut short");
            break;
        }
        k += 3;
        int same = (flags & 2) != 0;
        if (same) {
            nf = nmaster;
        } else if (!elem_int(l, k++, &nf) || nf < 0) {
            rc = corrupt(in, "bad field count");
            break;
        }
        size_t need = same ? (size_t)nf : 2 * (size_t)nf;
        if (need > l->n - k) {
            rc = corrupt(in, "entry cut short");
            break;
        }
        if (2 * (size_t)nf > capfv) {
            capfv = 2 * (size_t)nf;
            stream_str *nfv = realloc(fv, capfv * sizeof(*nfv));
            if (!nfv) {
                rc = in_nomem(in);
                break;
            }
            fv = nfv;
        }
        for (size_t i = 0; i < (size_t)nf; i++) {
            if (same) {
                fv[2 * i] = mf[i];
            } else {
                fv[2 * i] = l->e[k++];
            }
            fv[2 * i + 1] = l->e[k++];
        }
        if (!elem_int(l, k++, &lpcount) || lpcount != nf + 3 + (same ? 0 : nf + 1)) {
            rc = corrupt(in, "lp-count does not match the entry");
            break;
        }
        stream_id id = {master->ms + (uint64_t)msd, master->seq + (uint64_t)seqd};
        /* Deleted entries keep their place, so a node's first entry is
         * always the one whose ID is the node key (runs are found by it). */
        if (first && stream_id_cmp(&id, master) != 0) {
            rc = corrupt(in, "first entry ID differs from its node key");
            break;
        }
        /* Live IDs grow; a deleted entry may be above the ones after it
         * (XSETID lowered the last ID past it), as Redis loads it. */
        int del = (flags & 1) != 0;
        if ((!first && stream_id_cmp(&id, master) <= 0) || (!del && *any && stream_id_cmp(&id, prev) <= 0)) {
            rc = corrupt(in, "entry IDs out of order");
            break;
        }
        if (!del) {
            *any = 1;
            *prev = id;
        }
        if (del) dead++;
        else live++;
        if (stream_load_entry(s, first, master, mf, (size_t)nmaster, &id, fv, (size_t)nf, del) != STREAM_OK) {
            rc = in_nomem(in);
            break;
        }
        first = 0;
    }
    free(fv);
    if (rc) return rc;
    if (live != count || dead != deleted) return corrupt(in, "node counts do not match its entries");
    if (first) return corrupt(in, "empty listpack inside stream");
    stream_load_end_run(s);
    return 0;
}

static int in_ms(rdb_in *in, int64_t *t) {
    const unsigned char *p = in_take(in, 8);
    if (!p) return -1;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    *t = (int64_t)v;
    return 0;
}

static int in_raw_id(rdb_in *in, stream_id *id) {
    const unsigned char *p = in_take(in, 16);
    if (!p) return -1;
    id->ms = be64(p);
    id->seq = be64(p + 8);
    return 0;
}

typedef struct pending {
    stream_id id;
    int64_t time;
    uint64_t count;
    int claimed;
} pending;

static int pending_find(const pending *v, size_t n, const stream_id *id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = stream_id_cmp(&v[mid].id, id);
        if (c == 0) return (int)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

static int load_groups(rdb_in *in, int type, gstream *s) {
    uint64_t ngroups;
    if (in_len(in, &ngroups) != 0) return -1;
    while (ngroups--) {
        rstr name;
        if (in_string(in, &name) != 0) return -1;
        char *gname = malloc(name.n + 1);
        if (!gname) return in_nomem(in);
        memcpy(gname, name.p, name.n);
        size_t gn = name.n;
        stream_id last;
        uint64_t er = (uint64_t)STREAM_ENTRIES_READ_INVALID;
        if (in_len(in, &last.ms) != 0 || in_len(in, &last.seq) != 0 ||
            (type != RDB_TYPE_STREAM_LISTPACKS && in_len(in, &er) != 0)) {
            free(gname);
            return -1;
        }
        long long entries_read =
            type == RDB_TYPE_STREAM_LISTPACKS ? stream_estimate_distance(s, &last) : (long long)er;
        stream_group *g = stream_group_create(s, gname, gn, &last, entries_read);
        free(gname);
        if (!g) return corrupt(in, "duplicated consumer group name");
        uint64_t npel;
        if (in_len(in, &npel) != 0) return -1;
        if (npel > (uint64_t)1 << 40) return corrupt(in, "PEL size out of range");
        /* The array grows as entries arrive: the count comes from the input
         * and may promise far more than it holds. */
        size_t cappv = npel < 1024 ? (size_t)(npel ? npel : 1) : 1024;
        pending *pv = malloc(sizeof(*pv) * cappv);
        if (!pv) return in_nomem(in);
        int rc = 0;
        for (uint64_t i = 0; i < npel && !rc; i++) {
            if (i == cappv) {
                size_t nc = cappv * 2 < npel ? cappv * 2 : (size_t)npel;
                pending *np = realloc(pv, sizeof(*pv) * nc);
                if (!np) {
                    rc = in_nomem(in);
                    break;
                }
                pv = np;
                cappv = nc;
            }
            if (in_raw_id(in, &pv[i].id) != 0 || in_ms(in, &pv[i].time) != 0 || in_len(in, &pv[i].count) != 0) {
                rc = -1;
            } else if (i && stream_id_cmp(&pv[i - 1].id, &pv[i].id) >= 0) {
                rc = corrupt(in, "duplicated global PEL entry");
            }
            pv[i].claimed = 0;
        }
        uint64_t ncons = 0;
        if (!rc && in_len(in, &ncons) != 0) rc = -1;
        while (!rc && ncons--) {
            rstr cname;
            int64_t seen, active;
            if (in_string(in, &cname) != 0) {
                rc = -1;
                break;
            }
            if (stream_consumer_find(g, cname.p, cname.n)) {
                rc = corrupt(in, "Duplicate stream consumer detected");
                break;
            }
            stream_consumer *c = stream_consumer_create(g, cname.p, cname.n, 0);
            if (!c) {
                rc = in_nomem(in);
                break;
            }
            if (in_ms(in, &seen) != 0 || (type == RDB_TYPE_STREAM_LISTPACKS_3 && in_ms(in, &active) != 0)) {
                rc = -1;
                break;
            }
            c->seen_time = seen;
            uint64_t cpel;
            if (in_len(in, &cpel) != 0) {
                rc = -1;
                break;
            }
            while (cpel--) {
                stream_id id;
                if (in_raw_id(in, &id) != 0) {
                    rc = -1;
                    break;
                }
                int k = pending_find(pv, (size_t)npel, &id);
                if (k < 0 || pv[k].claimed) {
                    rc = corrupt(in, "consumer entry not found in group global PEL");
                    break;
                }
                pv[k].claimed = 1;
                stream_nack *na = stream_nack_add(g, c, &id, pv[k].time);
                if (!na) {
                    rc = in_nomem(in);
                    break;
                }
                na->delivery_count = pv[k].count;
            }
        }
        for (uint64_t i = 0; i < npel && !rc; i++)
            if (!pv[i].claimed) rc = corrupt(in, "PEL entry without a consumer");
        free(pv);
        if (rc) return -1;
    }
    return 0;
}

int rdb_load_stream(rdb_in *in, int type, gobj *o) {
    gstream *s = stream_new();
    if (!s) return in_nomem(in);
    lp_elems l = {0};
    uint64_t nodes;
    stream_id prev = {0, 0};
    int any = 0;
    if (in_len(in, &nodes) != 0) goto fail;
    while (nodes--) {
        rstr key;
        if (in_string(in, &key) != 0) goto fail;
        if (key.n != 16) {
            corrupt(in, "node key is not the size of a stream ID");
            goto fail;
        }
        stream_id master = {be64(key.p), be64(key.p + 8)};
        if (any && stream_id_cmp(&master, &prev) <= 0) {
            corrupt(in, "node keys out of order");
            goto fail;
        }
        rstr lp;
        if (in_string(in, &lp) != 0) goto fail;
        if (elems_read(in, &l, lp.p, lp.n) != 0) goto fail;
        if (load_node(in, s, &master, &l, &prev, &any) != 0) goto fail;
    }
    uint64_t length;
    if (in_len(in, &length) != 0 || in_len(in, &s->last_id.ms) != 0 || in_len(in, &s->last_id.seq) != 0) goto fail;
    if (type != RDB_TYPE_STREAM_LISTPACKS) {
        if (in_len(in, &s->first_id.ms) != 0 || in_len(in, &s->first_id.seq) != 0 ||
            in_len(in, &s->max_deleted_id.ms) != 0 || in_len(in, &s->max_deleted_id.seq) != 0 ||
            in_len(in, &s->entries_added) != 0)
            goto fail;
    } else {
        s->entries_added = s->length;
        /* As Redis 7.0's loader: the first live entry, or for an empty
         * stream the largest ID (its edge search found nothing), which
         * XINFO STREAM shows as recorded-first-entry-id. */
        if (!stream_edge_id(s, 1, &s->first_id)) s->first_id.ms = s->first_id.seq = UINT64_MAX;
    }
    if (length != s->length) {
        corrupt(in, "length inconsistent with the entries");
        goto fail;
    }
    if (any && stream_id_cmp(&prev, &s->last_id) > 0) {
        corrupt(in, "an entry is past the last ID");
        goto fail;
    }
    if (load_groups(in, type, s) != 0) goto fail;
    elems_free(&l);
    o->type = OBJ_STREAM;
    o->enc = ENC_STREAM;
    o->u.p = s;
    return LOAD_OK;
fail:
    elems_free(&l);
    stream_free(s);
    return LOAD_ERR;
}
