/* sort.c -- SORT and SORT_RO over lists, sets and sorted sets, with Redis
 * 7.0's options (BY, GET, LIMIT, ASC/DESC, ALPHA, STORE), replies and
 * errors.
 *
 * Both commands are "movablekeys": the dispatcher runs them under the
 * keyspace write lock, which is what lets BY and GET patterns read any key.
 *
 * The steps follow Redis because several of them are visible: the elements
 * to sort are copied out of the source (a pattern lookup may lazily expire
 * keys, the source included, so nothing may point into it); BY with a
 * pattern without '*' means "don't sort" (lists and sorted sets keep their
 * order and LIMIT picks a range of it; sets keep their iteration order,
 * except with STORE, where they are sorted ALPHA for a reproducible
 * result); a packed sorted set is converted to the skiplist encoding, as
 * Redis does destructively (OBJECT ENCODING shows it); numeric sort parses
 * with strtod like Redis (leading spaces, hex and "inf" accepted, trailing
 * bytes, overflow, underflow and NaN rejected) and breaks ties by the
 * elements' bytes; ALPHA compares with strcmp (what Redis's strcoll does in
 * the C and C.UTF-8 locales) and with memcmp when storing. The sort is a
 * stable merge sort, like glibc's qsort that Redis calls, so equal keys
 * keep their input order (Redis's BY+LIMIT partial quicksort is not stable:
 * ALPHA BY ties under LIMIT may come out in another order).
 * A set sorted "BY nosort" is sorted ALPHA all the same when the result is
 * stored or goes to a script (CLIENT_SCRIPT), as Redis does: a set has no
 * order of its own. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/blocking.h"
#include "cmd/cluster/cluster.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/server/acl.h"
#include "cmd/types/tcommon.h"
#include "session/reply.h"
#include "db/strval.h"
#include "ds/hash.h"
#include "ds/list.h"
#include "ds/set.h"
#include "util/strutil.h"
#include "ds/zset.h"
#include "base/config.h"

/* ---- a byte pool: copies that stay put until the command ends ---- */

#define POOL_CHUNK ((size_t)64 << 10)

typedef struct pool_chunk {
    struct pool_chunk *next;
    size_t used, cap;
    char data[];
} pool_chunk;

typedef struct pool {
    pool_chunk *head;
    int oom;
} pool;

/* A NUL-terminated copy of p[0..n); NULL (and pool->oom) on no memory. */
static char *pool_put(pool *pl, const char *p, size_t n) {
    pool_chunk *ch = pl->head;
    if (!ch || ch->cap - ch->used < n + 1) {
        size_t cap = n + 1 > POOL_CHUNK ? n + 1 : POOL_CHUNK;
        ch = malloc(sizeof(pool_chunk) + cap);
        if (!ch) {
            pl->oom = 1;
            return NULL;
        }
        ch->used = 0;
        ch->cap = cap;
        ch->next = pl->head;
        pl->head = ch;
    }
    char *d = ch->data + ch->used;
    if (n) memcpy(d, p, n);
    d[n] = '\0';
    ch->used += n + 1;
    return d;
}

static void pool_free(pool *pl) {
    while (pl->head) {
        pool_chunk *n = pl->head->next;
        free(pl->head);
        pl->head = n;
    }
}

/* ---- patterns ---- */

/* What a BY or GET pattern names for one element. */
typedef struct pat_val {
    const char *p;
    size_t n;
    char tmp[STRUTIL_LLSTR]; /* integer strings are formatted here */
} pat_val;

/* Redis's lookupKeyByPattern: "#" is the element itself; otherwise the
 * first '*' is replaced by the element and the key read as a string, or,
 * with "->field" after the '*', as a hash field. Redis scans the pattern
 * as a C string ('*', "->" and the "#" test stop at a NUL byte) but takes
 * the postfix and field to the pattern's full length; so does this.
 * Returns 1 with *out filled (valid until the next keyspace call), 0 when
 * there is nothing. */
static int pattern_lookup(gdb *db, const garg *pat, const char *el, size_t eln, pat_val *out) {
    const char *sp = pat->p;
    size_t slen = pat->n;
    if (slen >= 1 && sp[0] == '#' && (slen == 1 || sp[1] == '\0')) {
        out->p = el;
        out->n = eln;
        return 1;
    }
    size_t clen = strnlen(sp, slen);
    const char *star = memchr(sp, '*', clen);
    if (!star) return 0;
    const char *field = NULL;
    size_t fieldlen = 0;
    const char *after = star + 1, *cend = sp + clen;
    for (const char *q = after; q + 1 < cend; q++) {
        if (q[0] == '-' && q[1] == '>') {
            if (q + 2 < cend) {
                field = q + 2;
                fieldlen = slen - (size_t)(field - sp);
            }
            break;
        }
    }
    size_t prefixlen = (size_t)(star - sp);
    size_t postfixlen = slen - prefixlen - 1 - (field ? fieldlen + 2 : 0);
    size_t klen = prefixlen + eln + postfixlen;
    char stackbuf[256];
    char *key = klen <= sizeof(stackbuf) ? stackbuf : malloc(klen);
    if (!key) return 0;
    memcpy(key, sp, prefixlen);
    if (eln) memcpy(key + prefixlen, el, eln);
    memcpy(key + prefixlen + eln, after, postfixlen);
    dbentry *e = db_lookup_read(db, key, klen);
    if (key != stackbuf) free(key);
    if (!e) return 0;
    if (field) {
        if (e->val.type != OBJ_HASH) return 0;
        const char *v;
        size_t vl;
        if (!hash_get(e->val.u.p, field, fieldlen, &v, &vl)) return 0;
        out->p = v;
        out->n = vl;
        return 1;
    }
    if (e->val.type != OBJ_STRING) return 0;
    out->p = strval_bytes(&e->val, out->tmp, &out->n);
    return out->p != NULL; /* an unreadable tail reads as missing */
}

/* ---- the vector ---- */

typedef struct sort_item {
    const char *p;    /* the element (pool copy, NUL-terminated) */
    size_t n;
    double score;
    const char *cmp;  /* ALPHA with BY: the weight (pool copy), NULL when none */
    size_t cmpn;
} sort_item;

typedef struct sort_opts {
    int desc, alpha, bypattern, store;
} sort_opts;

/* Memcmp order, shorter first on a common prefix (compareStringObjects). */
static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

static int item_cmp(const sort_item *a, const sort_item *b, const sort_opts *o) {
    int c;
    if (!o->alpha) {
        if (a->score > b->score) c = 1;
        else if (a->score < b->score) c = -1;
        else c = bytes_cmp(a->p, a->n, b->p, b->n);
    } else if (o->bypattern) {
        if (!a->cmp || !b->cmp) c = a->cmp == b->cmp ? 0 : !a->cmp ? -1 : 1;
        else if (o->store) c = bytes_cmp(a->cmp, a->cmpn, b->cmp, b->cmpn);
        else c = strcmp(a->cmp, b->cmp);
    } else {
        c = o->store ? bytes_cmp(a->p, a->n, b->p, b->n) : strcmp(a->p, b->p);
    }
    return o->desc ? -c : c;
}

/* Stable merge sort of v[0..n) using tmp[0..n). */
static void merge_sort(sort_item *v, sort_item *tmp, size_t n, const sort_opts *o) {
    if (n < 2) return;
    if (n <= 8) {
        for (size_t i = 1; i < n; i++) {
            sort_item x = v[i];
            size_t j = i;
            while (j > 0 && item_cmp(&v[j - 1], &x, o) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    merge_sort(v, tmp, h, o);
    merge_sort(v + h, tmp, n - h, o);
    if (item_cmp(&v[h - 1], &v[h], o) <= 0) return;
    memcpy(tmp, v, h * sizeof(*v));
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) v[k++] = item_cmp(&v[j], &tmp[i], o) < 0 ? v[j++] : tmp[i++];
    while (i < h) v[k++] = tmp[i++];
}

typedef struct vec {
    sort_item *v;
    size_t n, cap;
    pool pl;
} vec;

static int vec_push(vec *vc, const char *p, size_t n) {
    if (vc->n == vc->cap) {
        size_t cap = vc->cap ? vc->cap * 2 : 64;
        sort_item *nv = realloc(vc->v, cap * sizeof(*nv));
        if (!nv) return -1;
        vc->v = nv;
        vc->cap = cap;
    }
    char *d = pool_put(&vc->pl, p, n);
    if (!d) return -1;
    vc->v[vc->n++] = (sort_item){d, n, 0, NULL, 0};
    return 0;
}

static void vec_set_elem(void *arg, const set_elem *e) {
    vec *vc = arg;
    if (!vc->pl.oom && vec_push(vc, e->p, e->n) != 0) vc->pl.oom = 1;
}

/* Elements of a list from index (or from the end with desc), n of them. */
static int load_list(vec *vc, glist *l, long long from, int backwards, long long n) {
    list_iter it;
    list_elem le;
    char buf[STRUTIL_LLSTR];
    int rc = 0;
    list_iter_init(&it, l, (uint64_t)from, backwards ? LIST_HEAD : LIST_TAIL);
    while (n-- > 0 && rc == 0 && list_iter_next(&it, &le)) {
        size_t len;
        const char *p = list_elem_text(&le, buf, &len);
        rc = vec_push(vc, p, len);
    }
    list_iter_release(&it);
    return rc;
}

static int load_zset(vec *vc, zset *z, size_t rank, int rev, long long n) {
    zset_iter it;
    const char *m;
    size_t len;
    double sc;
    int rc = 0;
    zset_iter_init(&it, z, rank, rev);
    while (n-- > 0 && rc == 0 && zset_iter_next(&it, &m, &len, &sc)) rc = vec_push(vc, m, len);
    return rc;
}

/* SORT on a packed sorted set converts it to the skiplist encoding first,
 * as Redis 7.0 does (destructively, even for SORT_RO). Best effort: on no
 * memory the packed zset is sorted as it is. */
static void zset_to_skiplist(dbentry *e) {
    zset *z = e->val.u.p;
    if (!zset_is_packed(z)) return;
    zset_limits lim = {0, 0};
    zset *big = zset_new_hint(zset_card(z) + 1, &lim);
    if (!big) return;
    zset_iter it;
    const char *m;
    size_t n;
    double sc;
    zset_iter_init(&it, z, 0, 0);
    while (zset_iter_next(&it, &m, &n, &sc)) {
        int out;
        if (zset_add(big, sc, m, n, 0, &out, NULL, &lim) != ZSET_OK) {
            zset_free(big);
            return;
        }
    }
    gobj v = e->val;
    v.u.p = big;
    v.enc = ENC_SKIPLIST;
    db_replace_value(e, &v);
}

/* Redis's SORT score: strtod over the whole (C) string, no overflow,
 * underflow or NaN. Returns 0 when the value is not a number. */
static int sort_score(const char *p, size_t n, double *out) {
    char buf[128];
    char *s = n < sizeof(buf) ? buf : malloc(n + 1);
    if (!s) return 0;
    memcpy(s, p, n);
    s[n] = '\0';
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    int ok = end[0] == '\0' && errno != ERANGE && !isnan(d);
    if (s != buf) free(s);
    *out = d;
    return ok;
}

/* ---- the command ---- */

enum { GETS_MAX_INLINE = 16 };

static int full_key_access(client *c, int *cached) {
    if (*cached < 0) *cached = acl_allows_any_key(c, __atomic_load_n(&c->cur, __ATOMIC_RELAXED));
    return *cached;
}

static void sortGeneric(client *c, int readonly) {
    gdb *db = cmd_db(c);
    sort_opts o = {0, 0, 0, 0};
    long long limit_start = 0, limit_count = -1;
    int dontsort = 0;
    const garg *sortby = NULL, *storekey = NULL;
    const garg *gets_inline[GETS_MAX_INLINE];
    const garg **gets = gets_inline;
    int ngets = 0, capgets = GETS_MAX_INLINE;
    int full_keys = -1; /* acl_allows_any_key, asked once */

    for (int j = 2; j < c->argc; j++) {
        int leftargs = c->argc - j - 1;
        const garg *a = &c->argv[j];
        if (arg_is(a, "asc")) {
            o.desc = 0;
        } else if (arg_is(a, "desc")) {
            o.desc = 1;
        } else if (arg_is(a, "alpha")) {
            o.alpha = 1;
        } else if (arg_is(a, "limit") && leftargs >= 2) {
            if (arg_ll(c, &c->argv[j + 1], &limit_start) != 0 || arg_ll(c, &c->argv[j + 2], &limit_count) != 0)
                goto done;
            j += 2;
        } else if (!readonly && arg_is(a, "store") && leftargs >= 1) {
            storekey = &c->argv[++j];
        } else if (arg_is(a, "by") && leftargs >= 1) {
            sortby = &c->argv[++j];
            /* No '*' (as a C string): nothing to sort by. */
            dontsort = memchr(sortby->p, '*', strnlen(sortby->p, sortby->n)) == NULL;
            /* A real pattern reads keys nobody named: not in a cluster,
             * and only for a user who may read any key. */
            if (!dontsort && cluster_enabled()) {
                reply_error(c, "ERR BY option of SORT denied in Cluster mode.");
                goto done;
            }
            if (!dontsort && !full_key_access(c, &full_keys)) {
                reply_error(c, "ERR BY option of SORT denied due to insufficient ACL permissions.");
                goto done;
            }
        } else if (arg_is(a, "get") && leftargs >= 1) {
            if (cluster_enabled()) {
                reply_error(c, "ERR GET option of SORT denied in Cluster mode.");
                goto done;
            }
            if (!full_key_access(c, &full_keys)) {
                reply_error(c, "ERR GET option of SORT denied due to insufficient ACL permissions.");
                goto done;
            }
            if (ngets == capgets) {
                const garg **ng = malloc((size_t)capgets * 2 * sizeof(*ng));
                if (!ng) {
                    reply_error(c, "ERR out of memory");
                    goto done;
                }
                memcpy(ng, gets, (size_t)ngets * sizeof(*ng));
                if (gets != gets_inline) free(gets);
                gets = ng;
                capgets *= 2;
            }
            gets[ngets++] = &c->argv[++j];
        } else {
            reply_err_syntax(c);
            goto done;
        }
    }

    dbentry *se = db_lookup_read(db, c->argv[1].p, c->argv[1].n);
    int type = se ? se->val.type : OBJ_LIST;
    if (type != OBJ_SET && type != OBJ_LIST && type != OBJ_ZSET) {
        reply_err_wrongtype(c);
        goto done;
    }
    if (dontsort && type == OBJ_SET && (storekey || (client_flags_peek(c) & CLIENT_SCRIPT))) {
        /* A set has no order of its own: a stored result is sorted. */
        dontsort = 0;
        o.alpha = 1;
        sortby = NULL;
    }
    if (se && type == OBJ_ZSET) zset_to_skiplist(se);

    long long vlen = 0;
    if (se) {
        if (type == OBJ_LIST) vlen = (long long)list_len(se->val.u.p);
        else if (type == OBJ_SET) vlen = (long long)set_card(se->val.u.p);
        else vlen = (long long)zset_card(se->val.u.p);
    }
    long long start = limit_start < 0 ? 0 : limit_start, end;
    if (start >= vlen) {
        start = vlen - 1;
        end = vlen - 2;
    } else {
        end = limit_count < 0 || limit_count >= vlen ? vlen - 1 : start + limit_count - 1;
        if (end >= vlen) end = vlen - 1;
    }

    vec vc = {0};
    int rc = 0;
    if (se && type != OBJ_SET && dontsort) {
        /* Lists and sorted sets keep their own order: load just the range. */
        long long n = end - start + 1;
        if (n > 0) {
            if (type == OBJ_LIST) rc = load_list(&vc, se->val.u.p, o.desc ? vlen - start - 1 : start, o.desc, n);
            else rc = load_zset(&vc, se->val.u.p, (size_t)(o.desc ? vlen - start - 1 : start), o.desc, n);
        }
        end -= start;
        start = 0;
    } else if (se && type == OBJ_LIST) {
        rc = load_list(&vc, se->val.u.p, 0, 0, vlen);
    } else if (se && type == OBJ_SET) {
        set_iter it;
        set_elem e;
        set_iter_init(&it, se->val.u.p);
        while (set_iter_next(&it, &e)) vec_set_elem(&vc, &e);
        set_iter_done(&it);
        rc = vc.pl.oom ? -1 : 0;
    } else if (se) {
        rc = load_zset(&vc, se->val.u.p, 0, 0, vlen);
    }
    if (rc != 0) {
        reply_error(c, "ERR out of memory");
        goto free_vec;
    }
    se = NULL; /* pattern lookups may expire keys: no pointers into the source from here */

    int conversion_error = 0;
    if (!dontsort) {
        o.bypattern = sortby != NULL;
        o.store = storekey != NULL;
        for (size_t j = 0; j < vc.n; j++) {
            sort_item *it = &vc.v[j];
            pat_val pv;
            const char *bp = it->p;
            size_t bn = it->n;
            if (sortby) {
                if (!pattern_lookup(db, sortby, it->p, it->n, &pv)) continue;
                bp = pv.p;
                bn = pv.n;
            }
            if (o.alpha) {
                if (sortby) {
                    it->cmp = pool_put(&vc.pl, bp, bn);
                    it->cmpn = bn;
                    if (!it->cmp) {
                        reply_error(c, "ERR out of memory");
                        goto free_vec;
                    }
                }
            } else if (!sort_score(bp, bn, &it->score)) {
                conversion_error = 1;
            }
        }
        sort_item *tmp = vc.n > 8 ? malloc((vc.n / 2 + 1) * sizeof(*tmp)) : NULL;
        if (vc.n > 8 && !tmp) {
            reply_error(c, "ERR out of memory");
            goto free_vec;
        }
        merge_sort(vc.v, tmp, vc.n, &o);
        free(tmp);
    }

    long long nout = end - start + 1;
    if (nout < 0) nout = 0;
    long long outputlen = ngets ? (long long)ngets * nout : nout;
    if (conversion_error) {
        reply_error(c, "ERR One or more scores can't be converted into double");
    } else if (!storekey) {
        reply_array(c, (long)outputlen);
        for (long long j = start; j <= end; j++) {
            sort_item *it = &vc.v[j];
            if (!ngets) reply_bulk(c, it->p, it->n);
            for (int g = 0; g < ngets; g++) {
                pat_val pv;
                if (pattern_lookup(db, gets[g], it->p, it->n, &pv)) reply_bulk(c, pv.p, pv.n);
                else reply_null(c);
            }
        }
    } else {
        glist *l = list_new();
        list_limit lim;
        list_limit_from_fill(&lim, cfg.list_max_listpack_size);
        int prc = l ? LIST_OK : LIST_ENOMEM;
        for (long long j = start; j <= end && prc == LIST_OK; j++) {
            sort_item *it = &vc.v[j];
            list_val lv;
            if (!ngets) {
                list_val_init(&lv, it->p, it->n);
                prc = list_push(l, LIST_TAIL, &lv, &lim);
            }
            for (int g = 0; g < ngets && prc == LIST_OK; g++) {
                pat_val pv;
                if (pattern_lookup(db, gets[g], it->p, it->n, &pv)) list_val_init(&lv, pv.p, pv.n);
                else list_val_init(&lv, "", 0);
                prc = list_push(l, LIST_TAIL, &lv, &lim);
            }
        }
        if (prc != LIST_OK) {
            list_free(l);
            reply_error(c, prc == LIST_ETOOBIG ? "ERR Element too large" : "ERR out of memory");
            goto free_vec;
        }
        const garg *dst = storekey;
        if (outputlen) {
            if (!tc_set_key(c, db, dst, OBJ_LIST, ENC_QUICKLIST, l)) goto free_vec;
            tc_changed(c, db, dst, OBJ_LIST, "sortstore");
            block_signal_key(db, dst->p, dst->n);
        } else {
            list_free(l);
            tc_delete_key(c, db, dst);
        }
        reply_int(c, outputlen);
    }

free_vec:
    free(vc.v);
    pool_free(&vc.pl);
done:
    if (gets != gets_inline) free(gets);
}

static void sortCommand(client *c) { sortGeneric(c, 0); }
static void sortroCommand(client *c) { sortGeneric(c, 1); }

const cmd_handler sort_handlers[] = {
    {"sort", sortCommand, CMD_LOCK_KEYS},
    {"sort_ro", sortroCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
