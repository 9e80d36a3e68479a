/* pubsub.c -- Pub/Sub (channels, patterns, shard channels) and keyspace
 * notifications.
 *
 * Subscribers may live on any worker. The registry (channel -> clients,
 * patterns, shard channels) is guarded by pubsub_lock, a leaf lock: PUBLISH
 * and notifications (which run under shard locks) take it last. A message
 * is encoded once per protocol version and queued to each receiver with
 * session_client_send_async(), except to the publishing client itself, which
 * gets it inline so it precedes the PUBLISH reply as in Redis. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cluster/cluster.h"
#include "cmd/server/pubsub.h"

#include "cmd/server/acl.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/propagate.h"
#include "cmd/server/admin_family.h"
#include "session/reply.h"
#include "util/hashfn.h"
#include "util/strutil.h"
#include "ds/swiss.h"
#include "session/session.h"
#include "base/config.h"

typedef struct chan {
    size_t n;
    client **subs;
    int nsubs, cap;
    char name[];
} chan;

typedef struct pstate {
    char **chans;   /* subscribed names, NUL-terminated copies with length prefix kept */
    size_t *chanl;
    int nchans, capchans;
    char **pats;
    size_t *patl;
    int npats, cappats;
    char **schans;
    size_t *schanl;
    int nschans, capschans;
} pstate;

static pthread_mutex_t pubsub_lock = PTHREAD_MUTEX_INITIALIZER;
static swiss channels, shard_channels;
/* Patterns: a flat list of (pattern, client); PSUBSCRIBE counts are small. */
typedef struct patsub {
    char *pat;
    size_t n;
    client *c;
} patsub;
static patsub *patterns;
static int npatterns, cappatterns;

typedef struct cref {
    const char *p;
    size_t n;
} cref;

static uint64_t ch_slot_hash(void *ctx, const void *slot) {
    (void)ctx;
    const chan *ch = *(chan *const *)slot;
    return hash_bytes(ch->name, ch->n);
}
static int ch_slot_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    const chan *ch = *(chan *const *)slot;
    const cref *r = key;
    return ch->n == r->n && memcmp(ch->name, r->p, r->n) == 0;
}
static const swiss_type chan_type = {sizeof(chan *), ch_slot_hash, ch_slot_match};

static pstate *ps_get(client *c) {
    if (!c->pstate) c->pstate = calloc(1, sizeof(pstate));
    return c->pstate;
}

static int ps_count(const client *c) {
    const pstate *p = c->pstate;
    return p ? p->nchans + p->npats : 0;
}

/* After every change of c's subscriptions: the PUBSUB flag, and the counts
 * CLIENT LIST shows. */
static void update_flag(client *c) {
    const pstate *p = c->pstate;
    if (p && (p->nchans + p->npats + p->nschans) > 0) client_flag_on(c, CLIENT_PUBSUB);
    else client_flag_off(c, CLIENT_PUBSUB);
    __atomic_store_n(&c->sub_count, p ? p->nchans : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->psub_count, p ? p->npats : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->ssub_count, p ? p->nschans : 0, __ATOMIC_RELAXED);
}

/* Name list helpers (per-client). */
static int list_find(char **v, size_t *l, int n, const char *p, size_t len) {
    for (int i = 0; i < n; i++)
        if (l[i] == len && memcmp(v[i], p, len) == 0) return i;
    return -1;
}

static void list_add(char ***v, size_t **l, int *n, int *cap, const char *p, size_t len) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *v = realloc(*v, sizeof(char *) * (size_t)*cap);
        *l = realloc(*l, sizeof(size_t) * (size_t)*cap);
    }
    (*v)[*n] = malloc(len + 1);
    memcpy((*v)[*n], p, len);
    (*v)[*n][len] = '\0';
    (*l)[*n] = len;
    (*n)++;
}

static void list_del(char **v, size_t *l, int *n, int i) {
    free(v[i]);
    for (int k = i; k < *n - 1; k++) {
        v[k] = v[k + 1];
        l[k] = l[k + 1];
    }
    (*n)--;
}

/* pubsub_lock held */
static void chan_add(swiss *tab, const char *p, size_t n, client *c) {
    cref r = {p, n};
    uint64_t h = hash_bytes(p, n);
    void *slot = swiss_find(tab, h, &r);
    chan *ch;
    if (slot) {
        ch = *(chan **)slot;
    } else {
        ch = calloc(1, sizeof(chan) + n + 1);
        ch->n = n;
        memcpy(ch->name, p, n);
        slot = swiss_insert(tab, h);
        memcpy(slot, &ch, sizeof(ch));
    }
    if (ch->nsubs == ch->cap) {
        ch->cap = ch->cap ? ch->cap * 2 : 4;
        ch->subs = realloc(ch->subs, sizeof(client *) * (size_t)ch->cap);
    }
    ch->subs[ch->nsubs++] = c;
}

/* pubsub_lock held */
static void chan_del(swiss *tab, const char *p, size_t n, client *c) {
    cref r = {p, n};
    void *slot = swiss_find(tab, hash_bytes(p, n), &r);
    if (!slot) return;
    chan *ch = *(chan **)slot;
    for (int i = 0; i < ch->nsubs; i++)
        if (ch->subs[i] == c) {
            /* keep subscription order for delivery fairness */
            memmove(&ch->subs[i], &ch->subs[i + 1], sizeof(client *) * (size_t)(ch->nsubs - i - 1));
            ch->nsubs--;
            break;
        }
    if (!ch->nsubs) {
        swiss_delete(tab, slot);
        free(ch->subs);
        free(ch);
    }
}

/* Confirmations are pushes: CLIENT REPLY OFF/SKIP does not hold them back
 * (Redis 7.0, in RESP2 too). */
static void reply_sub(client *c, const char *kind, const char *p, size_t n, long count) {
    uint32_t muted = client_reply_unmute(c);
    reply_push(c, 3);
    reply_bulk_cstr(c, kind);
    if (p) reply_bulk(c, p, n);
    else reply_null(c);
    reply_int(c, count);
    client_flag_on(c, muted);
}

static void subscribeGeneric(client *c, int shard) {
    pstate *ps = ps_get(c);
    for (int i = 1; i < c->argc; i++) {
        const garg *a = &c->argv[i];
        pthread_mutex_lock(&pubsub_lock);
        if (shard) {
            if (list_find(ps->schans, ps->schanl, ps->nschans, a->p, a->n) < 0) {
                list_add(&ps->schans, &ps->schanl, &ps->nschans, &ps->capschans, a->p, a->n);
                chan_add(&shard_channels, a->p, a->n, c);
            }
        } else if (list_find(ps->chans, ps->chanl, ps->nchans, a->p, a->n) < 0) {
            list_add(&ps->chans, &ps->chanl, &ps->nchans, &ps->capchans, a->p, a->n);
            chan_add(&channels, a->p, a->n, c);
        }
        pthread_mutex_unlock(&pubsub_lock);
        update_flag(c);
        reply_sub(c, shard ? "ssubscribe" : "subscribe", a->p, a->n, shard ? ps->nschans : ps_count(c));
    }
}

static void subscribeCommand(client *c) {
    if (client_flags_peek(c) & CLIENT_MULTI) {
        /* Redis: SUBSCRIBE inside MULTI is allowed to queue; executed in EXEC */
    }
    subscribeGeneric(c, 0);
}
static void ssubscribeCommand(client *c) { subscribeGeneric(c, 1); }

static void unsubscribe_one(client *c, int shard, int idx, int notify) {
    pstate *ps = c->pstate;
    char *name = shard ? ps->schans[idx] : ps->chans[idx];
    size_t n = shard ? ps->schanl[idx] : ps->chanl[idx];
    char *copy = malloc(n + 1);
    memcpy(copy, name, n);
    pthread_mutex_lock(&pubsub_lock);
    chan_del(shard ? &shard_channels : &channels, name, n, c);
    if (shard) list_del(ps->schans, ps->schanl, &ps->nschans, idx);
    else list_del(ps->chans, ps->chanl, &ps->nchans, idx);
    pthread_mutex_unlock(&pubsub_lock);
    update_flag(c);
    if (notify) reply_sub(c, shard ? "sunsubscribe" : "unsubscribe", copy, n, shard ? ps->nschans : ps_count(c));
    free(copy);
}

static void unsubscribeGeneric(client *c, int shard) {
    pstate *ps = ps_get(c);
    if (c->argc == 1) {
        int cnt = shard ? ps->nschans : ps->nchans;
        if (cnt == 0) {
            reply_sub(c, shard ? "sunsubscribe" : "unsubscribe", NULL, 0, shard ? ps->nschans : ps_count(c));
            return;
        }
        while (shard ? ps->nschans : ps->nchans) unsubscribe_one(c, shard, 0, 1);
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        const garg *a = &c->argv[i];
        int idx = shard ? list_find(ps->schans, ps->schanl, ps->nschans, a->p, a->n)
                        : list_find(ps->chans, ps->chanl, ps->nchans, a->p, a->n);
        if (idx >= 0) unsubscribe_one(c, shard, idx, 1);
        else reply_sub(c, shard ? "sunsubscribe" : "unsubscribe", a->p, a->n, shard ? ps->nschans : ps_count(c));
    }
}

static void unsubscribeCommand(client *c) { unsubscribeGeneric(c, 0); }
static void sunsubscribeCommand(client *c) { unsubscribeGeneric(c, 1); }

static void psubscribeCommand(client *c) {
    pstate *ps = ps_get(c);
    for (int i = 1; i < c->argc; i++) {
        const garg *a = &c->argv[i];
        if (list_find(ps->pats, ps->patl, ps->npats, a->p, a->n) < 0) {
            list_add(&ps->pats, &ps->patl, &ps->npats, &ps->cappats, a->p, a->n);
            pthread_mutex_lock(&pubsub_lock);
            if (npatterns == cappatterns) {
                cappatterns = cappatterns ? cappatterns * 2 : 8;
                patterns = realloc(patterns, sizeof(patsub) * (size_t)cappatterns);
            }
            patterns[npatterns].pat = ps->pats[ps->npats - 1];
            patterns[npatterns].n = a->n;
            patterns[npatterns].c = c;
            npatterns++;
            pthread_mutex_unlock(&pubsub_lock);
        }
        update_flag(c);
        reply_sub(c, "psubscribe", a->p, a->n, ps_count(c));
    }
}

static void punsubscribe_one(client *c, int idx, int notify) {
    pstate *ps = c->pstate;
    char *pat = ps->pats[idx];
    size_t n = ps->patl[idx];
    char *copy = malloc(n + 1);
    memcpy(copy, pat, n);
    pthread_mutex_lock(&pubsub_lock);
    for (int i = 0; i < npatterns; i++)
        if (patterns[i].c == c && patterns[i].pat == pat) {
            memmove(&patterns[i], &patterns[i + 1], sizeof(patsub) * (size_t)(npatterns - i - 1));
            npatterns--;
            break;
        }
    list_del(ps->pats, ps->patl, &ps->npats, idx);
    pthread_mutex_unlock(&pubsub_lock);
    update_flag(c);
    if (notify) reply_sub(c, "punsubscribe", copy, n, ps_count(c));
    free(copy);
}

static void punsubscribeCommand(client *c) {
    pstate *ps = ps_get(c);
    if (c->argc == 1) {
        if (!ps->npats) {
            reply_sub(c, "punsubscribe", NULL, 0, ps_count(c));
            return;
        }
        while (ps->npats) punsubscribe_one(c, 0, 1);
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        const garg *a = &c->argv[i];
        int idx = list_find(ps->pats, ps->patl, ps->npats, a->p, a->n);
        if (idx >= 0) punsubscribe_one(c, idx, 1);
        else reply_sub(c, "punsubscribe", a->p, a->n, ps_count(c));
    }
}

/* ACL SETUSER changed u's channels: collect u's clients with a subscription
 * no longer allowed (Redis's ACLKillPubsubClientsIfNeeded). Subscribers
 * are found from the channel tables, so no other client's state is read. */
typedef struct denied_ctx {
    const struct acl_user *u;
    pubsub_allowed_fn *allowed;
    void *arg;
    uint64_t *ids;
    size_t n, cap;
} denied_ctx;

static void denied_add(denied_ctx *d, const client *c) {
    for (size_t i = 0; i < d->n; i++)
        if (d->ids[i] == c->id) return;
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        d->ids = realloc(d->ids, sizeof(uint64_t) * d->cap);
        if (!d->ids) abort();
    }
    d->ids[d->n++] = c->id;
}

static void denied_scan_table(denied_ctx *d, swiss *tab) {
    swiss_iter it;
    swiss_iter_init(&it, tab);
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        const chan *ch = *(chan **)slot;
        int verdict = -1; /* evaluated once per channel, when a client of u is on it */
        for (int i = 0; i < ch->nsubs; i++) {
            if (acl_client_user(ch->subs[i]) != d->u) continue;
            if (verdict < 0) verdict = d->allowed(d->arg, ch->name, ch->n, 0);
            if (!verdict) denied_add(d, ch->subs[i]);
        }
    }
    swiss_iter_done(&it);
}

size_t pubsub_denied_clients(const struct acl_user *u, pubsub_allowed_fn *allowed, void *arg, uint64_t **ids) {
    denied_ctx d = {u, allowed, arg, NULL, 0, 0};
    pthread_mutex_lock(&pubsub_lock);
    denied_scan_table(&d, &channels);
    denied_scan_table(&d, &shard_channels);
    for (int i = 0; i < npatterns; i++)
        if (acl_client_user(patterns[i].c) == u && !allowed(arg, patterns[i].pat, patterns[i].n, 1))
            denied_add(&d, patterns[i].c);
    pthread_mutex_unlock(&pubsub_lock);
    *ids = d.ids;
    return d.n;
}

/* Message encodings, built lazily for each protocol version. */
typedef struct msgbuf {
    char *b[2];
    size_t n[2];
} msgbuf;

static void enc_bulk(char **b, size_t *n, size_t *cap, const char *p, size_t len) {
    char hdr[32];
    int hl = snprintf(hdr, sizeof(hdr), "$%zu\r\n", len);
    size_t need = *n + (size_t)hl + len + 2;
    if (need > *cap) {
        *cap = need * 2;
        *b = realloc(*b, *cap);
    }
    memcpy(*b + *n, hdr, (size_t)hl);
    *n += (size_t)hl;
    memcpy(*b + *n, p, len);
    *n += len;
    memcpy(*b + *n, "\r\n", 2);
    *n += 2;
}

static const char *msg_for(msgbuf *m, int resp, const char *kind, const char *pat, size_t patn, const char *ch,
                           size_t chn, const char *msg, size_t msgn, size_t *len) {
    int k = resp == 3 ? 1 : 0;
    if (!m->b[k]) {
        size_t cap = 64 + chn + msgn + patn, n = 0;
        char *b = malloc(cap);
        n = (size_t)snprintf(b, cap, "%c%d\r\n", resp == 3 ? '>' : '*', pat ? 4 : 3);
        enc_bulk(&b, &n, &cap, kind, strlen(kind));
        if (pat) enc_bulk(&b, &n, &cap, pat, patn);
        enc_bulk(&b, &n, &cap, ch, chn);
        enc_bulk(&b, &n, &cap, msg, msgn);
        m->b[k] = b;
        m->n[k] = n;
    }
    *len = m->n[k];
    return m->b[k];
}

/* A message for the client running the command (PUBLISH to itself, from
 * a script too, or a keyspace event it caused) joins its output at once,
 * before its reply as in Redis; others get it through their worker. */
static void deliver(client *self, client *to, const char *p, size_t n) {
    if (to == self || to == cmd_running_client()) {
        reply_raw_unmuted(to, p, n);
    } else {
        session_client_send_async(to, p, n);
    }
}

/* Publish; returns the number of receivers. self may be NULL. */
static long publish(client *self, int shard, const char *ch, size_t chn, const char *msg, size_t msgn) {
    long receivers = 0;
    msgbuf plain = {{0}, {0}};
    pthread_mutex_lock(&pubsub_lock);
    cref r = {ch, chn};
    swiss *tab = shard ? &shard_channels : &channels;
    void *slot = swiss_size(tab) ? swiss_find(tab, hash_bytes(ch, chn), &r) : NULL;
    if (slot) {
        chan *c = *(chan **)slot;
        for (int i = 0; i < c->nsubs; i++) {
            size_t n;
            const char *p = msg_for(&plain, c->subs[i]->resp, shard ? "smessage" : "message", NULL, 0, ch, chn, msg,
                                    msgn, &n);
            deliver(self, c->subs[i], p, n);
            receivers++;
        }
    }
    if (!shard) {
        for (int i = 0; i < npatterns; i++) {
            patsub *ps = &patterns[i];
            if (!glob_match(ps->pat, ps->n, ch, chn, 0)) continue;
            msgbuf pm = {{0}, {0}};
            size_t n;
            const char *p = msg_for(&pm, ps->c->resp, "pmessage", ps->pat, ps->n, ch, chn, msg, msgn, &n);
            deliver(self, ps->c, p, n);
            free(pm.b[0]);
            free(pm.b[1]);
            receivers++;
        }
    }
    pthread_mutex_unlock(&pubsub_lock);
    free(plain.b[0]);
    free(plain.b[1]);
    return receivers;
}

/* As Redis: a message reaches the replicas' subscribers through the
 * replication stream (not the AOF), or, in cluster mode, the other nodes'
 * through the cluster bus. */
static void publishCommand(client *c) {
    reply_int(c, publish(c, 0, c->argv[1].p, c->argv[1].n, c->argv[2].p, c->argv[2].n));
    cluster_propagate_publish(c->argv[1].p, c->argv[1].n, c->argv[2].p, c->argv[2].n, 0);
    if (!cluster_enabled()) prop_force_repl(c);
}

static void spublishCommand(client *c) {
    reply_int(c, publish(c, 1, c->argv[1].p, c->argv[1].n, c->argv[2].p, c->argv[2].n));
    cluster_propagate_publish(c->argv[1].p, c->argv[1].n, c->argv[2].p, c->argv[2].n, 1);
    if (!cluster_enabled()) prop_force_repl(c);
}

/* A message another cluster node published. */
static void publish_from_cluster(const char *ch, size_t chn, const char *msg, size_t msgn, int sharded) {
    publish(NULL, sharded, ch, chn, msg, msgn);
}

typedef struct chlist {
    char **v;
    size_t *l;
    int n, cap;
} chlist;

static void pubsubChannelsGeneric(client *c, int shard) {
    const garg *pat = c->argc > 2 ? &c->argv[2] : NULL;
    if (c->argc > 3) {
        reply_err_arity(c);
        return;
    }
    chlist out = {0};
    pthread_mutex_lock(&pubsub_lock);
    swiss *tab = shard ? &shard_channels : &channels;
    swiss_iter it;
    swiss_iter_init(&it, tab);
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        chan *ch = *(chan **)slot;
        if (pat && !glob_match(pat->p, pat->n, ch->name, ch->n, 0)) continue;
        list_add(&out.v, &out.l, &out.n, &out.cap, ch->name, ch->n);
    }
    swiss_iter_done(&it);
    pthread_mutex_unlock(&pubsub_lock);
    reply_array(c, out.n);
    for (int i = 0; i < out.n; i++) {
        reply_bulk(c, out.v[i], out.l[i]);
        free(out.v[i]);
    }
    free(out.v);
    free(out.l);
}

static void pubsubChannelsCommand(client *c) { pubsubChannelsGeneric(c, 0); }
static void pubsubShardchannelsCommand(client *c) { pubsubChannelsGeneric(c, 1); }

static void pubsubNumsubGeneric(client *c, int shard) {
    reply_map(c, c->argc - 2);
    pthread_mutex_lock(&pubsub_lock);
    for (int i = 2; i < c->argc; i++) {
        cref r = {c->argv[i].p, c->argv[i].n};
        swiss *tab = shard ? &shard_channels : &channels;
        void *slot = swiss_size(tab) ? swiss_find(tab, hash_bytes(r.p, r.n), &r) : NULL;
        reply_bulk(c, r.p, r.n);
        reply_int(c, slot ? (*(chan **)slot)->nsubs : 0);
    }
    pthread_mutex_unlock(&pubsub_lock);
}

static void pubsubNumsubCommand(client *c) { pubsubNumsubGeneric(c, 0); }
static void pubsubShardnumsubCommand(client *c) { pubsubNumsubGeneric(c, 1); }

/* Redis counts distinct patterns (pubsub_lock held). */
static long distinct_patterns(void) {
    long distinct = 0;
    for (int i = 0; i < npatterns; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = patterns[j].n == patterns[i].n && memcmp(patterns[j].pat, patterns[i].pat, patterns[i].n) == 0;
        if (!seen) distinct++;
    }
    return distinct;
}

static void pubsubNumpatCommand(client *c) {
    pthread_mutex_lock(&pubsub_lock);
    long distinct = distinct_patterns();
    pthread_mutex_unlock(&pubsub_lock);
    reply_int(c, distinct);
}

void pubsub_counts(long *nchannels, long *npats, long *nshard) {
    pthread_mutex_lock(&pubsub_lock);
    *nchannels = (long)swiss_size(&channels);
    *npats = distinct_patterns();
    *nshard = (long)swiss_size(&shard_channels);
    pthread_mutex_unlock(&pubsub_lock);
}

static void pubsubHelpCommand(client *c) {
    static const char *const lines[] = {
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        NULL,
    };
    admin_reply_help(c, "PUBSUB", lines);
}

/* Client going away or RESET: drop every subscription silently. */
void pubsub_client_gone(client *c) {
    pstate *ps = c->pstate;
    if (!ps) return;
    while (ps->nchans) unsubscribe_one(c, 0, 0, 0);
    while (ps->nschans) unsubscribe_one(c, 1, 0, 0);
    while (ps->npats) punsubscribe_one(c, 0, 0);
    free(ps->chans);
    free(ps->chanl);
    free(ps->pats);
    free(ps->patl);
    free(ps->schans);
    free(ps->schanl);
    free(ps);
    c->pstate = NULL;
    client_flag_off(c, CLIENT_PUBSUB);
}

/* ---- keyspace notifications ---- */

#define NOTIFY_ALL_CLASSES (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET | \
                            NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

static _Atomic int notify_flags_cur;

/* Redis's keyspaceEventsFlagsToString: buf needs 16 bytes. */
static void notify_flags_string(int f, char *buf) {
    char *p = buf;
    if ((f & NOTIFY_ALL_CLASSES) == NOTIFY_ALL_CLASSES) {
        *p++ = 'A';
    } else {
        static const struct { int bit; char ch; } cl[] = {
            {NOTIFY_GENERIC, 'g'}, {NOTIFY_STRING, '$'}, {NOTIFY_LIST, 'l'}, {NOTIFY_SET, 's'},
            {NOTIFY_HASH, 'h'},    {NOTIFY_ZSET, 'z'},   {NOTIFY_EXPIRED, 'x'}, {NOTIFY_EVICTED, 'e'},
            {NOTIFY_STREAM, 't'},  {NOTIFY_MODULE, 'd'}, {NOTIFY_NEW, 'n'}};
        for (size_t i = 0; i < sizeof cl / sizeof cl[0]; i++)
            if (f & cl[i].bit) *p++ = cl[i].ch;
    }
    if (f & NOTIFY_KEYSPACE) *p++ = 'K';
    if (f & NOTIFY_KEYEVENT) *p++ = 'E';
    if (f & NOTIFY_KEY_MISS) *p++ = 'm';
    *p = '\0';
}

/* Parse notify-keyspace-events letters into NOTIFY_* bits; -1 if invalid. */
static int parse_notify_flags(const char *s) {
    int f = 0;
    for (; *s; s++) {
        switch (*s) {
        case 'A': f |= NOTIFY_ALL_CLASSES; break;
        case 'g': f |= NOTIFY_GENERIC; break;
        case '$': f |= NOTIFY_STRING; break;
        case 'l': f |= NOTIFY_LIST; break;
        case 's': f |= NOTIFY_SET; break;
        case 'h': f |= NOTIFY_HASH; break;
        case 'z': f |= NOTIFY_ZSET; break;
        case 'x': f |= NOTIFY_EXPIRED; break;
        case 'e': f |= NOTIFY_EVICTED; break;
        case 'K': f |= NOTIFY_KEYSPACE; break;
        case 'E': f |= NOTIFY_KEYEVENT; break;
        case 'n': f |= NOTIFY_NEW; break;
        case 't': f |= NOTIFY_STREAM; break;
        case 'm': f |= NOTIFY_KEY_MISS; break;
        case 'd': f |= NOTIFY_MODULE; break;
        default: return -1;
        }
    }
    return f;
}

/* notify-keyspace-events: the letters are checked and stored normalised
 * ("KEA" shows as "AKE"), the flags follow the stored value. */
static int notify_config_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    int f = parse_notify_flags(v);
    if (f < 0) {
        snprintf(err, errlen, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        return -1;
    }
    char buf[16];
    notify_flags_string(f, buf);
    snprintf(norm, normlen, "%s", buf);
    return 1;
}

static void notify_config_apply(const char *v) { notify_flags_cur = parse_notify_flags(v); }

void pubsub_config_register(void) {
    static const config_hook hook = {notify_config_check, notify_config_apply};
    config_register_hook("notify-keyspace-events", &hook);
}

static int notify_flags(void) { return notify_flags_cur; }

void pubsub_notify(int type, const char *event, int dbid, const char *key, size_t klen) {
    int f = notify_flags();
    if (!(f & type) || !(f & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT))) return;
    char *ch = malloc(klen + 64 + strlen(event));
    if (f & NOTIFY_KEYSPACE) {
        int n = sprintf(ch, "__keyspace@%d__:", dbid);
        memcpy(ch + n, key, klen);
        publish(NULL, 0, ch, (size_t)n + klen, event, strlen(event));
    }
    if (f & NOTIFY_KEYEVENT) {
        int n = sprintf(ch, "__keyevent@%d__:%s", dbid, event);
        publish(NULL, 0, ch, (size_t)n, key, klen);
    }
    free(ch);
}

void pubsub_family_init(void) {
    swiss_init(&channels, &chan_type, NULL);
    swiss_init(&shard_channels, &chan_type, NULL);
    cluster_set_publish_hook(publish_from_cluster);
}

const cmd_handler pubsub_handlers[] = {
    {"subscribe", subscribeCommand, CMD_LOCK_NONE},
    {"unsubscribe", unsubscribeCommand, CMD_LOCK_NONE},
    {"psubscribe", psubscribeCommand, CMD_LOCK_NONE},
    {"punsubscribe", punsubscribeCommand, CMD_LOCK_NONE},
    {"ssubscribe", ssubscribeCommand, CMD_LOCK_NONE},
    {"sunsubscribe", sunsubscribeCommand, CMD_LOCK_NONE},
    {"publish", publishCommand, CMD_LOCK_NONE},
    {"spublish", spublishCommand, CMD_LOCK_NONE},
    {"pubsub|channels", pubsubChannelsCommand, CMD_LOCK_NONE},
    {"pubsub|numsub", pubsubNumsubCommand, CMD_LOCK_NONE},
    {"pubsub|numpat", pubsubNumpatCommand, CMD_LOCK_NONE},
    {"pubsub|shardchannels", pubsubShardchannelsCommand, CMD_LOCK_NONE},
    {"pubsub|shardnumsub", pubsubShardnumsubCommand, CMD_LOCK_NONE},
    {"pubsub|help", pubsubHelpCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
