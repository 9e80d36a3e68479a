/* tracking.c -- client-side caching: CLIENT TRACKING, CACHING, GETREDIR,
 * TRACKINGINFO and the invalidation messages.
 *
 * Tables, all under tlock (a leaf below the shard locks; it may take the
 * client registry lock, and a connection's output lock through
 * session_client_send_async, in that order):
 *  - clients: client id -> client, every client with CLIENT_TRACKING set.
 *  - keys (default mode): key name -> the sorted, duplicate-free ids of the
 *    clients that read it since it last changed. Names only: the table is
 *    shared by every database, as Redis's is.
 *  - prefixes (BCAST): sorted by their bytes, each with its subscribed
 *    clients and the keys under it that changed since the last broadcast
 *    (with the client that changed each last, for NOLOOP); plens holds the
 *    distinct prefix lengths, so the prefixes of a key are found by one
 *    binary search per length.
 * Invariants: a client is in clients iff its CLIENT_TRACKING flag is set;
 * a BCAST client is in the client list of exactly the prefixes its tstate
 * names; items is the sum of the id-set sizes. Ids of clients gone or no
 * longer tracking stay in the sets until their key changes (as in Redis).
 *
 * Races: a read remembers its keys while its shard locks are held
 * (tracking_after_proc), and every change of a key is signalled with the
 * key's shard locked, so a change that follows a read finds the read's
 * entry. An invalidation for a client whose own top-level command is
 * running on this thread is kept (pending, per thread) and sent after its
 * reply; messages for other clients go through their worker's queue. */
#include "cmd/tracking.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "cmd/keyspec.h"
#include "ds/swiss.h"
#include "session/reply.h"
#include "session/session.h"
#include "util/hashfn.h"
#include "util/rand.h"
#include "util/strutil.h"

int tracking_live;

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;

/* ---- tables ---------------------------------------------------------------- */

typedef struct tkey {
    uint64_t *ids;
    uint32_t nids, cap;
    size_t klen;
    char key[];
} tkey;

/* A key under a BCAST prefix that changed; by: who changed it last. */
typedef struct bkey {
    const void *by;
    size_t klen;
    char key[];
} bkey;

typedef struct tprefix {
    size_t plen;
    char *p;
    client **subs;
    int nsubs, cap;
    swiss changed; /* bkey * */
} tprefix;

/* A BCAST client's prefixes, sorted as the prefix table is. */
typedef struct tstate {
    char **p;
    size_t *pl;
    int n, cap;
} tstate;

typedef struct kref {
    const char *p;
    size_t n;
} kref;

static uint64_t tkey_hash(void *ctx, const void *slot) {
    (void)ctx;
    const tkey *k = *(tkey *const *)slot;
    return hash_bytes(k->key, k->klen);
}
static int tkey_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    const tkey *k = *(tkey *const *)slot;
    const kref *r = key;
    return k->klen == r->n && memcmp(k->key, r->p, r->n) == 0;
}
static uint64_t bkey_hash(void *ctx, const void *slot) {
    (void)ctx;
    const bkey *k = *(bkey *const *)slot;
    return hash_bytes(k->key, k->klen);
}
static int bkey_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    const bkey *k = *(bkey *const *)slot;
    const kref *r = key;
    return k->klen == r->n && memcmp(k->key, r->p, r->n) == 0;
}
static uint64_t tcl_hash(void *ctx, const void *slot) {
    (void)ctx;
    return hash_u64((*(client *const *)slot)->id);
}
static int tcl_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    return (*(client *const *)slot)->id == *(const uint64_t *)key;
}
static const swiss_type tkey_type = {sizeof(tkey *), tkey_hash, tkey_match, 0};
static const swiss_type bkey_type = {sizeof(bkey *), bkey_hash, bkey_match, 0};
static const swiss_type tcl_type = {sizeof(client *), tcl_hash, tcl_match, 0};

static swiss keys, clients;
static uint64_t items;
static tprefix **pfx;
static int npfx, cappfx;
static size_t *plens;
static int nplens;
static int bcast_dirty;           /* relaxed atomic: some prefix has changed keys */
static long long nclients_stat;   /* relaxed atomic copies for INFO */
static long long nkeys_stat, items_stat, nprefixes_stat;
static unsigned limit_rounds;     /* trackingLimitUsedSlots' timeout_counter */
static const cmd_def *cmd_eval_ro, *cmd_evalsha_ro, *cmd_fcall_ro;

/* tlock held: the INFO copies and the live flag. */
static void tables_changed(void) {
    __atomic_store_n(&nclients_stat, (long long)swiss_size(&clients), __ATOMIC_RELAXED);
    __atomic_store_n(&nkeys_stat, (long long)swiss_size(&keys), __ATOMIC_RELAXED);
    __atomic_store_n(&items_stat, (long long)items, __ATOMIC_RELAXED);
    __atomic_store_n(&nprefixes_stat, (long long)npfx, __ATOMIC_RELAXED);
    int live = swiss_size(&clients) || swiss_size(&keys) || npfx;
    if (tracking_active() != live) __atomic_store_n(&tracking_live, live, __ATOMIC_RELAXED);
}

void tracking_init(void) {
    swiss_init(&keys, &tkey_type, NULL);
    swiss_init(&clients, &tcl_type, NULL);
    cmd_eval_ro = cmd_lookup("eval_ro", 7);
    cmd_evalsha_ro = cmd_lookup("evalsha_ro", 10);
    cmd_fcall_ro = cmd_lookup("fcall_ro", 8);
}

void tracking_stats_get(tracking_stats *st) {
    st->clients = __atomic_load_n(&nclients_stat, __ATOMIC_RELAXED);
    st->keys = __atomic_load_n(&nkeys_stat, __ATOMIC_RELAXED);
    st->items = __atomic_load_n(&items_stat, __ATOMIC_RELAXED);
    st->prefixes = __atomic_load_n(&nprefixes_stat, __ATOMIC_RELAXED);
}

/* Radix-tree order, as Redis lists keys and prefixes: bytes, then length. */
static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn) {
    int r = memcmp(a, b, an < bn ? an : bn);
    if (r) return r;
    return an < bn ? -1 : an > bn ? 1 : 0;
}

/* ---- the client running a command on this thread -------------------------- *
 * top: the client whose command (cmd_execute) or top-level call runs on this
 * thread; in_call: inside that call, where its own invalidations wait for
 * its reply. Only the owner thread sets them, so top is a live client. */
static _Thread_local client *tl_top;
static _Thread_local int tl_in_call;
/* Invalidations for top, sent after its reply: key copies, NULL for a flush. */
static _Thread_local char **tl_pend;
static _Thread_local size_t *tl_pendl;
static _Thread_local int tl_npend, tl_cappend;

static void pending_add(const char *key, size_t klen) {
    if (tl_npend == tl_cappend) {
        tl_cappend = tl_cappend ? tl_cappend * 2 : 8;
        tl_pend = realloc(tl_pend, sizeof(char *) * (size_t)tl_cappend);
        tl_pendl = realloc(tl_pendl, sizeof(size_t) * (size_t)tl_cappend);
        if (!tl_pend || !tl_pendl) abort();
    }
    char *copy = NULL;
    if (key) {
        copy = malloc(klen ? klen : 1);
        if (!copy) abort();
        memcpy(copy, key, klen);
    }
    tl_pend[tl_npend] = copy;
    tl_pendl[tl_npend] = klen;
    tl_npend++;
}

void tracking_thread_exit(void) {
    for (int i = 0; i < tl_npend; i++) free(tl_pend[i]);
    free(tl_pend);
    free(tl_pendl);
    tl_pend = NULL;
    tl_pendl = NULL;
    tl_npend = tl_cappend = 0;
}

/* ---- messages -------------------------------------------------------------- */

/* A message being built. */
typedef struct tbuf {
    char *p;
    size_t n, cap;
} tbuf;

static void tb_cat(tbuf *b, const char *p, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

enum { TM_KEY, TM_NULL, TM_PROTO };

/* Bytes for to: on its own connection at once when it is this thread's
 * client (as Redis appends to the current client's buffer), else through its
 * worker. Pushes go out under CLIENT REPLY OFF/SKIP too. */
static void deliver(client *to, const char *p, size_t n) {
    if (to == tl_top) {
        reply_raw_unmuted(to, p, n);
    } else {
        session_client_send_async(to, p, n);
    }
}

/* The message for to (the tracking client, or where it redirects):
 * a RESP3 push, or a Pub/Sub message on __redis__:invalidate for a RESP2
 * redirection target in Pub/Sub mode; nothing for others. A null is encoded
 * in the tracking client's protocol (tresp), as Redis does. */
static void emit(client *to, int redirected, int tresp, int kind, const char *p, size_t n) {
    int resp = __atomic_load_n(&to->resp, __ATOMIC_RELAXED);
    tbuf b = {0};
    static const char push[] = ">2\r\n$10\r\ninvalidate\r\n";
    static const char message[] = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
    if (resp > 2) tb_cat(&b, push, sizeof(push) - 1);
    else if (redirected && (client_flags_peek(to) & CLIENT_PUBSUB)) tb_cat(&b, message, sizeof(message) - 1);
    else return;
    if (kind == TM_KEY) {
        char hdr[40];
        int hl = snprintf(hdr, sizeof(hdr), "*1\r\n$%zu\r\n", n);
        tb_cat(&b, hdr, (size_t)hl);
        tb_cat(&b, p, n);
        tb_cat(&b, "\r\n", 2);
    } else if (kind == TM_NULL) {
        if (tresp > 2) tb_cat(&b, "_\r\n", 3);
        else tb_cat(&b, "$-1\r\n", 5);
    } else {
        tb_cat(&b, p, n);
    }
    deliver(to, b.p, b.n);
    free(b.p);
}

/* Redis's sendTrackingMessage: to t, or to the client it redirects to;
 * when that one is gone, t is flagged and told (RESP3) instead. */
static void send_tracking(client *t, int kind, const char *p, size_t n) {
    uint64_t redir = __atomic_load_n(&t->track_redir, __ATOMIC_RELAXED);
    int tresp = __atomic_load_n(&t->resp, __ATOMIC_RELAXED);
    if (!redir) {
        emit(t, 0, tresp, kind, p, n);
        return;
    }
    session_registry_lock();
    client *r = session_find_client(redir);
    /* A client that is closing (QUIT, CLIENT KILL) takes no more output:
     * the redirection is broken from then on, whichever worker frees it
     * and when (Redis's one thread has freed it by the next command). */
    if (r && (client_flags_peek(r) & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP))) r = NULL;
    if (r) emit(r, 1, tresp, kind, p, n); /* r stays registered while the lock is held */
    session_registry_unlock();
    if (r) return;
    client_flag_on(t, CLIENT_TRACKING_BROKEN_REDIR);
    if (tresp > 2) {
        char msg[80];
        int len = snprintf(msg, sizeof(msg), ">2\r\n$21\r\ntracking-redir-broken\r\n:%llu\r\n", (unsigned long long)redir);
        deliver(t, msg, (size_t)len);
    }
}

/* tlock held. */
static client *clients_find(uint64_t id) {
    void *slot = swiss_find(&clients, hash_u64(id), &id);
    return slot ? *(client **)slot : NULL;
}

/* Redis's trackingInvalidateKey for one entry (tlock held): every client
 * that may cache the key is told, except a NOLOOP client about its own
 * command, then the entry goes. */
static void invalidate_entry(void *slot) {
    tkey *k = *(tkey **)slot;
    for (uint32_t i = 0; i < k->nids; i++) {
        client *t = clients_find(k->ids[i]);
        if (!t) continue;
        uint32_t f = client_flags_peek(t);
        if (!(f & CLIENT_TRACKING) || (f & CLIENT_TRACKING_BCAST)) continue;
        if ((f & CLIENT_TRACKING_NOLOOP) && t == tl_top) continue;
        if (t == tl_top && tl_in_call) pending_add(k->key, k->klen);
        else send_tracking(t, TM_KEY, k->key, k->klen);
    }
    items -= k->nids;
    swiss_delete(&keys, slot);
    free(k->ids);
    free(k);
}

/* ---- BCAST prefixes -------------------------------------------------------- */

/* Position of (p, n) in pfx, or where it would go (*found 0). */
static int pfx_search(const char *p, size_t n, int *found) {
    int lo = 0, hi = npfx;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int r = bytes_cmp(pfx[mid]->p, pfx[mid]->plen, p, n);
        if (r == 0) {
            *found = 1;
            return mid;
        }
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = 0;
    return lo;
}

static void plens_rebuild(void) {
    free(plens);
    plens = malloc(sizeof(size_t) * (size_t)(npfx + 1));
    if (!plens) abort();
    nplens = 0;
    for (int i = 0; i < npfx; i++) {
        int seen = 0;
        for (int j = 0; j < nplens && !seen; j++) seen = plens[j] == pfx[i]->plen;
        if (!seen) plens[nplens++] = pfx[i]->plen;
    }
}

static void bkeys_clear(swiss *s) {
    swiss_iter it;
    swiss_iter_init(&it, s);
    void *slot;
    while ((slot = swiss_iter_next(&it))) free(*(bkey **)slot);
    swiss_iter_done(&it);
    swiss_clear(s);
}

/* tlock held: c joins the prefix (p, n), made on first use. */
/* A prefix's share of its client's memory: its slots in the client's
 * arrays and in the prefix's, and the prefix's bytes. */
static size_t prefix_mem(size_t n) { return sizeof(char *) + sizeof(size_t) + sizeof(client *) + n; }

static void pfx_subscribe(client *c, const char *p, size_t n) {
    int found;
    int at = pfx_search(p, n, &found);
    tprefix *tp;
    if (found) {
        tp = pfx[at];
    } else {
        tp = calloc(1, sizeof(*tp));
        if (!tp) abort();
        tp->p = malloc(n ? n : 1);
        if (!tp->p) abort();
        memcpy(tp->p, p, n);
        tp->plen = n;
        swiss_init(&tp->changed, &bkey_type, NULL);
        if (npfx == cappfx) {
            cappfx = cappfx ? cappfx * 2 : 8;
            pfx = realloc(pfx, sizeof(tprefix *) * (size_t)cappfx);
            if (!pfx) abort();
        }
        memmove(&pfx[at + 1], &pfx[at], sizeof(tprefix *) * (size_t)(npfx - at));
        pfx[at] = tp;
        npfx++;
        plens_rebuild();
    }
    for (int i = 0; i < tp->nsubs; i++)
        if (tp->subs[i] == c) return;
    if (tp->nsubs == tp->cap) {
        tp->cap = tp->cap ? tp->cap * 2 : 4;
        tp->subs = realloc(tp->subs, sizeof(client *) * (size_t)tp->cap);
        if (!tp->subs) abort();
    }
    tp->subs[tp->nsubs++] = c;
    tstate *ts = c->tstate;
    if (!ts) {
        ts = c->tstate = calloc(1, sizeof(tstate));
        if (!ts) abort();
    }
    int pos = 0;
    while (pos < ts->n && bytes_cmp(ts->p[pos], ts->pl[pos], p, n) < 0) pos++;
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? ts->cap * 2 : 4;
        ts->p = realloc(ts->p, sizeof(char *) * (size_t)ts->cap);
        ts->pl = realloc(ts->pl, sizeof(size_t) * (size_t)ts->cap);
        if (!ts->p || !ts->pl) abort();
    }
    memmove(&ts->p[pos + 1], &ts->p[pos], sizeof(char *) * (size_t)(ts->n - pos));
    memmove(&ts->pl[pos + 1], &ts->pl[pos], sizeof(size_t) * (size_t)(ts->n - pos));
    ts->p[pos] = tp->p;
    ts->pl[pos] = n;
    ts->n++;
    client_state_mem_add(c, (long long)prefix_mem(n));
}

/* tlock held: c leaves every prefix; a prefix left with no client goes. */
static void pfx_unsubscribe_all(client *c) {
    tstate *ts = c->tstate;
    if (!ts) return;
    for (int i = 0; i < ts->n; i++) {
        int found;
        int at = pfx_search(ts->p[i], ts->pl[i], &found);
        if (!found) continue;
        tprefix *tp = pfx[at];
        for (int j = 0; j < tp->nsubs; j++)
            if (tp->subs[j] == c) {
                memmove(&tp->subs[j], &tp->subs[j + 1], sizeof(client *) * (size_t)(tp->nsubs - j - 1));
                tp->nsubs--;
                break;
            }
        if (tp->nsubs) continue;
        bkeys_clear(&tp->changed);
        swiss_free(&tp->changed);
        free(tp->subs);
        free(tp->p);
        free(tp);
        memmove(&pfx[at], &pfx[at + 1], sizeof(tprefix *) * (size_t)(npfx - at - 1));
        npfx--;
    }
    plens_rebuild();
    for (int i = 0; i < ts->n; i++) client_state_mem_add(c, -(long long)prefix_mem(ts->pl[i]));
    free(ts->p);
    free(ts->pl);
    free(ts);
    c->tstate = NULL;
}

/* tlock held: key changed (by: who changed it); note it under each prefix
 * it starts with. */
static void bcast_note(const void *by, const char *key, size_t klen) {
    for (int l = 0; l < nplens; l++) {
        if (plens[l] > klen) continue;
        int found;
        int at = pfx_search(key, plens[l], &found);
        if (!found) continue;
        tprefix *tp = pfx[at];
        kref r = {key, klen};
        uint64_t h = hash_bytes(key, klen);
        void *slot = swiss_find(&tp->changed, h, &r);
        if (slot) {
            (*(bkey **)slot)->by = by;
            continue;
        }
        bkey *b = malloc(sizeof(bkey) + (klen ? klen : 1));
        if (!b) abort();
        b->by = by;
        b->klen = klen;
        memcpy(b->key, key, klen);
        slot = swiss_insert(&tp->changed, h);
        if (!slot) abort();
        memcpy(slot, &b, sizeof(b));
        __atomic_store_n(&bcast_dirty, 1, __ATOMIC_RELAXED);
    }
}

static int bkey_sort_cmp(const void *a, const void *b) {
    const bkey *x = *(bkey *const *)a, *y = *(bkey *const *)b;
    return bytes_cmp(x->key, x->klen, y->key, y->klen);
}

/* The array of the keys (sorted), leaving out those skip changed last;
 * 0 when it would be empty. */
static size_t bcast_proto(bkey **v, size_t n, const void *skip, tbuf *out) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += !skip || v[i]->by != skip;
    if (!count) return 0;
    char hdr[40];
    int hl = snprintf(hdr, sizeof(hdr), "*%zu\r\n", count);
    tb_cat(out, hdr, (size_t)hl);
    for (size_t i = 0; i < n; i++) {
        if (skip && v[i]->by == skip) continue;
        hl = snprintf(hdr, sizeof(hdr), "$%zu\r\n", v[i]->klen);
        tb_cat(out, hdr, (size_t)hl);
        tb_cat(out, v[i]->key, v[i]->klen);
        tb_cat(out, "\r\n", 2);
    }
    return count;
}

void tracking_bcast_flush(void) {
    if (!__atomic_load_n(&bcast_dirty, __ATOMIC_RELAXED)) return;
    pthread_mutex_lock(&tlock);
    __atomic_store_n(&bcast_dirty, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < npfx; i++) {
        tprefix *tp = pfx[i];
        size_t n = swiss_size(&tp->changed);
        if (!n) continue;
        bkey **v = malloc(sizeof(bkey *) * n);
        if (!v) abort();
        size_t k = 0;
        swiss_iter it;
        swiss_iter_init(&it, &tp->changed);
        void *slot;
        while ((slot = swiss_iter_next(&it))) v[k++] = *(bkey **)slot;
        swiss_iter_done(&it);
        qsort(v, k, sizeof(bkey *), bkey_sort_cmp);
        tbuf all = {0};
        bcast_proto(v, k, NULL, &all);
        for (int j = 0; j < tp->nsubs; j++) {
            client *c = tp->subs[j];
            if (client_flags_peek(c) & CLIENT_TRACKING_NOLOOP) {
                tbuf own = {0};
                if (bcast_proto(v, k, c, &own)) send_tracking(c, TM_PROTO, own.p, own.n);
                free(own.p);
            } else {
                send_tracking(c, TM_PROTO, all.p, all.n);
            }
        }
        free(all.p);
        free(v);
        bkeys_clear(&tp->changed);
    }
    pthread_mutex_unlock(&tlock);
}

/* ---- changes --------------------------------------------------------------- */

void tracking_key_modified(const client *by, const char *key, size_t klen) {
    pthread_mutex_lock(&tlock);
    if (npfx) bcast_note(by, key, klen);
    if (swiss_size(&keys)) {
        kref r = {key, klen};
        void *slot = swiss_find(&keys, hash_bytes(key, klen), &r);
        if (slot) {
            invalidate_entry(slot);
            tables_changed();
        }
    }
    pthread_mutex_unlock(&tlock);
}

static void keys_free_all(void) {
    swiss_iter it;
    swiss_iter_init(&it, &keys);
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        tkey *k = *(tkey **)slot;
        free(k->ids);
        free(k);
    }
    swiss_iter_done(&it);
    swiss_clear(&keys);
    items = 0;
}

void tracking_invalidate_all(void) {
    pthread_mutex_lock(&tlock);
    swiss_iter it;
    swiss_iter_init(&it, &clients);
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        client *t = *(client **)slot;
        if (t == tl_top && tl_in_call) pending_add(NULL, 0);
        else send_tracking(t, TM_NULL, NULL, 0);
    }
    swiss_iter_done(&it);
    keys_free_all();
    tables_changed();
    pthread_mutex_unlock(&tlock);
}

/* Redis's trackingLimitUsedSlots (tlock held): over tracking-table-max-keys,
 * random keys are invalidated as if they changed, up to 100 more per call
 * for every earlier call that did not get under the limit. */
static void limit_locked(void) {
    long long max = __atomic_load_n(&cfg.tracking_table_max_keys, __ATOMIC_RELAXED);
    if (max <= 0) return;
    if (swiss_size(&keys) <= (size_t)max) {
        limit_rounds = 0;
        return;
    }
    int effort = 100 * (int)(limit_rounds + 1);
    while (effort-- > 0) {
        void *slot = swiss_random(&keys, rand_next);
        if (!slot) break;
        invalidate_entry(slot);
        if (swiss_size(&keys) <= (size_t)max) {
            limit_rounds = 0;
            tables_changed();
            return;
        }
    }
    limit_rounds++;
    tables_changed();
}

static int over_limit(void) {
    long long max = __atomic_load_n(&cfg.tracking_table_max_keys, __ATOMIC_RELAXED);
    return max > 0 && __atomic_load_n(&nkeys_stat, __ATOMIC_RELAXED) > max;
}

void tracking_cron(void) {
    if (!tracking_active()) return;
    if (__atomic_load_n(&nclients_stat, __ATOMIC_RELAXED) && over_limit()) {
        pthread_mutex_lock(&tlock);
        limit_locked();
        pthread_mutex_unlock(&tlock);
    }
    tracking_bcast_flush();
}

/* ---- the dispatcher's hooks ------------------------------------------------ */

void tracking_command_begin(client *c, tracking_frame *save) {
    save->top = tl_top;
    save->in_call = tl_in_call;
    tl_top = c;
    tl_in_call = 0;
    if (__atomic_load_n(&nclients_stat, __ATOMIC_RELAXED) && over_limit()) {
        pthread_mutex_lock(&tlock);
        limit_locked();
        pthread_mutex_unlock(&tlock);
    }
}

void tracking_command_end(const tracking_frame *save) {
    tl_top = save->top;
    tl_in_call = save->in_call;
}

void tracking_call_begin(client *c, int nested, tracking_frame *save) {
    save->top = tl_top;
    save->in_call = tl_in_call;
    if (nested) return;
    tl_top = c;
    tl_in_call = 1;
}

/* Redis's trackingRememberKeys, for the keys of the command the client
 * sent: a read-only command run by a script remembers the script's keys. */
void tracking_after_proc(client *c, const cmd_def *cmd, int nested) {
    if (!(cmd->flags & CMDF_READONLY) || cmd == cmd_eval_ro || cmd == cmd_evalsha_ro || cmd == cmd_fcall_ro) return;
    client *caller = nested && tl_top && c != tl_top ? tl_top : c;
    uint32_t f = client_flags_peek(caller);
    if (!(f & CLIENT_TRACKING) || (f & CLIENT_TRACKING_BCAST)) return;
    int caching = (f & CLIENT_TRACKING_CACHING) != 0;
    if (((f & CLIENT_TRACKING_OPTIN) && !caching) || ((f & CLIENT_TRACKING_OPTOUT) && caching)) return;
    const cmd_def *sent = caller->cur ? caller->cur : cmd;
    if (sent->flags & CMDF_PUBSUB) return;
    cmd_keyacc *ka;
    int nk = cmd_call_keys(sent, caller->argv, caller->argc, &ka);
    pthread_mutex_lock(&tlock);
    for (int i = 0; i < nk; i++) {
        const garg *a = &caller->argv[ka[i].pos];
        kref r = {a->p, a->n};
        uint64_t h = hash_bytes(a->p, a->n);
        void *slot = swiss_find(&keys, h, &r);
        tkey *k;
        if (slot) {
            k = *(tkey **)slot;
        } else {
            k = calloc(1, sizeof(tkey) + (a->n ? a->n : 1));
            if (!k) abort();
            k->klen = a->n;
            memcpy(k->key, a->p, a->n);
            slot = swiss_insert(&keys, h);
            if (!slot) abort();
            memcpy(slot, &k, sizeof(k));
        }
        uint32_t lo = 0, hi = k->nids;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (k->ids[mid] < caller->id) lo = mid + 1;
            else hi = mid;
        }
        if (lo < k->nids && k->ids[lo] == caller->id) continue;
        if (k->nids == k->cap) {
            k->cap = k->cap ? k->cap * 2 : 2;
            k->ids = realloc(k->ids, sizeof(uint64_t) * k->cap);
            if (!k->ids) abort();
        }
        memmove(&k->ids[lo + 1], &k->ids[lo], sizeof(uint64_t) * (k->nids - lo));
        k->ids[lo] = caller->id;
        k->nids++;
        items++;
    }
    tables_changed();
    pthread_mutex_unlock(&tlock);
    free(ka);
}

void tracking_call_end(client *c, const cmd_def *cmd, int nested, const tracking_frame *save) {
    if (nested) return;
    /* The invalidations this call caused for c itself, after its reply. */
    tl_in_call = 0;
    for (int i = 0; i < tl_npend; i++) {
        if (tl_pend[i]) send_tracking(c, TM_KEY, tl_pend[i], tl_pendl[i]);
        else send_tracking(c, TM_NULL, NULL, 0);
        free(tl_pend[i]);
    }
    tl_npend = 0;
    /* CLIENT CACHING applies to the next command (or transaction). */
    uint32_t f = client_flags_peek(c);
    const cmd_def *family = cmd->parent ? cmd->parent : cmd;
    if ((f & CLIENT_TRACKING_CACHING) && !(f & CLIENT_MULTI) && strcmp(family->name, "client") != 0)
        client_flag_off(c, CLIENT_TRACKING_CACHING);
    tl_top = save->top;
    tl_in_call = save->in_call;
}

/* ---- enabling and disabling -------------------------------------------------- */

#define TRACKING_MODE_FLAGS                                                                                  \
    (CLIENT_TRACKING_BROKEN_REDIR | CLIENT_TRACKING_BCAST | CLIENT_TRACKING_OPTIN | CLIENT_TRACKING_OPTOUT | \
     CLIENT_TRACKING_NOLOOP | CLIENT_TRACKING_CACHING)

static void tracking_disable(client *c) {
    pthread_mutex_lock(&tlock);
    if (client_flags_peek(c) & CLIENT_TRACKING_BCAST) pfx_unsubscribe_all(c);
    if (client_flags_peek(c) & CLIENT_TRACKING) {
        void *slot = swiss_find(&clients, hash_u64(c->id), &c->id);
        if (slot) swiss_delete(&clients, slot);
        client_flag_off(c, CLIENT_TRACKING | TRACKING_MODE_FLAGS);
    }
    __atomic_store_n(&c->track_redir, 0, __ATOMIC_RELAXED);
    tables_changed();
    pthread_mutex_unlock(&tlock);
}

void tracking_client_gone(client *c) {
    if (client_flags_peek(c) & (CLIENT_TRACKING | CLIENT_TRACKING_BCAST)) tracking_disable(c);
}

static void tracking_enable(client *c, uint64_t redir, uint32_t options, garg **prefixes, int nprefixes) {
    pthread_mutex_lock(&tlock);
    if (!(client_flags_peek(c) & CLIENT_TRACKING)) {
        void *slot = swiss_insert(&clients, hash_u64(c->id));
        if (!slot) abort();
        memcpy(slot, &c, sizeof(c));
    }
    client_flag_off(c, CLIENT_TRACKING_BROKEN_REDIR | CLIENT_TRACKING_BCAST | CLIENT_TRACKING_OPTIN |
                           CLIENT_TRACKING_OPTOUT | CLIENT_TRACKING_NOLOOP);
    client_flag_on(c, CLIENT_TRACKING);
    __atomic_store_n(&c->track_redir, redir, __ATOMIC_RELAXED);
    if (options & CLIENT_TRACKING_BCAST) {
        client_flag_on(c, CLIENT_TRACKING_BCAST);
        if (!nprefixes) pfx_subscribe(c, "", 0);
        for (int i = 0; i < nprefixes; i++) pfx_subscribe(c, prefixes[i]->p, prefixes[i]->n);
    }
    client_flag_on(c, options & (CLIENT_TRACKING_OPTIN | CLIENT_TRACKING_OPTOUT | CLIENT_TRACKING_NOLOOP));
    tables_changed();
    pthread_mutex_unlock(&tlock);
}

/* ---- CLIENT subcommands ---------------------------------------------------- */

static int starts_same(const char *a, size_t an, const char *b, size_t bn) {
    return memcmp(a, b, an < bn ? an : bn) == 0;
}

/* Redis's checkPrefixCollisionsOrReply, with its return value: 0 stops the
 * command, and so does only an overlap found for the first given prefix
 * (an overlap among later ones is replied and the command goes on). */
static int prefixes_check(client *c, garg **p, int n) {
    const tstate *ts = c->tstate;
    for (int i = 0; i < n; i++) {
        for (int e = 0; ts && e < ts->n; e++)
            if (starts_same(ts->p[e], ts->pl[e], p[i]->p, p[i]->n)) {
                reply_errorf(c,
                             "ERR Prefix '%s' overlaps with an existing prefix '%.*s'. Prefixes for a single client "
                             "must not overlap.",
                             p[i]->p, (int)strnlen(ts->p[e], ts->pl[e]), ts->p[e]);
                return 0;
            }
        for (int j = i + 1; j < n; j++)
            if (starts_same(p[i]->p, p[i]->n, p[j]->p, p[j]->n)) {
                reply_errorf(c,
                             "ERR Prefix '%s' overlaps with another provided prefix '%s'. Prefixes for a single "
                             "client must not overlap.",
                             p[i]->p, p[j]->p);
                return i;
            }
    }
    return 1;
}

static void clientTrackingCommand(client *c) {
    long long redir = 0;
    uint32_t options = 0;
    garg **prefix = NULL;
    int nprefix = 0;
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const garg *a = &c->argv[j];
        if (arg_is(a, "redirect") && more) {
            j++;
            if (redir != 0) {
                reply_error(c, "ERR A client can only redirect to a single other client");
                goto out;
            }
            if (arg_ll(c, &c->argv[j], &redir) != 0) goto out;
            session_registry_lock();
            int exists = redir > 0 && session_find_client((uint64_t)redir) != NULL;
            session_registry_unlock();
            if (!exists) {
                reply_error(c, "ERR The client ID you want redirect to does not exist");
                goto out;
            }
        } else if (arg_is(a, "bcast")) {
            options |= CLIENT_TRACKING_BCAST;
        } else if (arg_is(a, "optin")) {
            options |= CLIENT_TRACKING_OPTIN;
        } else if (arg_is(a, "optout")) {
            options |= CLIENT_TRACKING_OPTOUT;
        } else if (arg_is(a, "noloop")) {
            options |= CLIENT_TRACKING_NOLOOP;
        } else if (arg_is(a, "prefix") && more) {
            j++;
            prefix = realloc(prefix, sizeof(garg *) * (size_t)(nprefix + 1));
            if (!prefix) abort();
            prefix[nprefix++] = &c->argv[j];
        } else {
            reply_err_syntax(c);
            goto out;
        }
    }
    uint32_t f = client_flags_peek(c);
    if (arg_is(&c->argv[2], "on")) {
        if (!(options & CLIENT_TRACKING_BCAST) && nprefix) {
            reply_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
            goto out;
        }
        if ((f & CLIENT_TRACKING) && !!(f & CLIENT_TRACKING_BCAST) != !!(options & CLIENT_TRACKING_BCAST)) {
            reply_error(c, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
                           "then re-enabling it with a different mode.");
            goto out;
        }
        if ((options & CLIENT_TRACKING_BCAST) && (options & (CLIENT_TRACKING_OPTIN | CLIENT_TRACKING_OPTOUT))) {
            reply_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
            goto out;
        }
        if ((options & CLIENT_TRACKING_OPTIN) && (options & CLIENT_TRACKING_OPTOUT)) {
            reply_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
            goto out;
        }
        if (((options & CLIENT_TRACKING_OPTIN) && (f & CLIENT_TRACKING_OPTOUT)) ||
            ((options & CLIENT_TRACKING_OPTOUT) && (f & CLIENT_TRACKING_OPTIN))) {
            reply_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
                           "then re-enabling it with a different mode.");
            goto out;
        }
        if ((options & CLIENT_TRACKING_BCAST) && !prefixes_check(c, prefix, nprefix)) goto out;
        tracking_enable(c, (uint64_t)redir, options, prefix, nprefix);
    } else if (arg_is(&c->argv[2], "off")) {
        tracking_client_gone(c);
    } else {
        reply_err_syntax(c);
        goto out;
    }
    reply_ok(c);
out:
    free(prefix);
}

static void clientCachingCommand(client *c) {
    uint32_t f = client_flags_peek(c);
    if (!(f & CLIENT_TRACKING)) {
        reply_error(c, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                       "OPTOUT mode enabled");
        return;
    }
    if (arg_is(&c->argv[2], "yes")) {
        if (!(f & CLIENT_TRACKING_OPTIN)) {
            reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (arg_is(&c->argv[2], "no")) {
        if (!(f & CLIENT_TRACKING_OPTOUT)) {
            reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        reply_err_syntax(c);
        return;
    }
    client_flag_on(c, CLIENT_TRACKING_CACHING);
    reply_ok(c);
}

static void clientGetredirCommand(client *c) {
    if (client_flags_peek(c) & CLIENT_TRACKING) reply_int(c, (long long)c->track_redir);
    else reply_int(c, -1);
}

static void clientTrackinginfoCommand(client *c) {
    uint32_t f = client_flags_peek(c);
    const char *flags[8];
    int n = 0;
    flags[n++] = (f & CLIENT_TRACKING) ? "on" : "off";
    if (f & CLIENT_TRACKING_BCAST) flags[n++] = "bcast";
    if (f & CLIENT_TRACKING_OPTIN) {
        flags[n++] = "optin";
        if (f & CLIENT_TRACKING_CACHING) flags[n++] = "caching-yes";
    }
    if (f & CLIENT_TRACKING_OPTOUT) {
        flags[n++] = "optout";
        if (f & CLIENT_TRACKING_CACHING) flags[n++] = "caching-no";
    }
    if (f & CLIENT_TRACKING_NOLOOP) flags[n++] = "noloop";
    if (f & CLIENT_TRACKING_BROKEN_REDIR) flags[n++] = "broken_redirect";
    reply_map(c, 3);
    reply_bulk_cstr(c, "flags");
    reply_set(c, n);
    for (int i = 0; i < n; i++) reply_bulk_cstr(c, flags[i]);
    reply_bulk_cstr(c, "redirect");
    reply_int(c, (f & CLIENT_TRACKING) ? (long long)c->track_redir : -1);
    reply_bulk_cstr(c, "prefixes");
    pthread_mutex_lock(&tlock);
    const tstate *ts = c->tstate;
    reply_array(c, ts ? ts->n : 0);
    for (int i = 0; ts && i < ts->n; i++) reply_bulk(c, ts->p[i], ts->pl[i]);
    pthread_mutex_unlock(&tlock);
}

const cmd_handler tracking_handlers[] = {
    {"client|tracking", clientTrackingCommand, CMD_LOCK_NONE},
    {"client|caching", clientCachingCommand, CMD_LOCK_NONE},
    {"client|getredir", clientGetredirCommand, CMD_LOCK_NONE},
    {"client|trackinginfo", clientTrackinginfoCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
