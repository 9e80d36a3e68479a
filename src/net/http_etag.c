/* http_etag.c -- the ETags of database 0's string values, each computed
 * once per value and kept (see http.h).
 *
 * An ETag is the 64-bit hash of the value's bytes (XXH3 of Debian's
 * libxxhash, seeded from the process's random seed: it hashes several
 * lanes at once where util/hashfn.c's hash is one chain of multiply-folds,
 * and it has a streaming form, so an origin fill hashes each piece as it
 * arrives, while it is in the cache): a strong validator, the same for the
 * same bytes while the process lives, changing when they change (and on a
 * restart, which only costs clients a full answer). Hashing the whole
 * value on every GET would still cost tens of microseconds for a large
 * one, so the front-end hashes a value once, when it is stored through
 * HTTP or on its first GET, and keeps the result here, by key, until the
 * key is written.
 *
 * A value stored through HTTP (a PUT, an origin fill) is hashed as it is
 * stored: the writer names the key and the hash (http_etag_store_begin)
 * and the modification report of that key, on that thread, puts the entry
 * in instead of removing it, under the shard lock the write holds. So
 * values whose tail is streamed from the SSD, whose bytes a GET never has
 * all at once, have an ETag when they came through HTTP.
 *
 * Invalidation: the command layer tells this table of every key modified
 * (the hook WATCH relies on, cmd_set_key_observer: SET, APPEND, DEL,
 * RENAME, MOVE, RESTORE, a script's writes, a replica's stream, FLUSHALL,
 * SWAPDB, a load), from inside the writing command, while it holds the
 * key's shard lock. The table is split in stripes by the key's hash; each
 * has a mutex and an epoch that every invalidation of one of its keys
 * advances (an invalidation of every key advances them all).
 *
 * Invariant: an entry holds the hash of the key's current value. A reader
 * takes the stripe's epoch before the GET that reads the value and hands
 * it back with its lookup or insertion: both happen only if the epoch is
 * still the same, i.e. no write to any key of the stripe completed since
 * (a write in progress holds the shard lock the GET needed, so its
 * invalidation is over before the GET reads). A stripe that grows past
 * its share of HTTP_ETAG_MAX entries is emptied (they are recomputed on
 * demand). */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cmd/command.h"
#include "net/http.h"
#include "util/hashfn.h"

#define NSTRIPES 256
#define HTTP_ETAG_MAX (1u << 20) /* entries over all stripes (about 64 MiB at most) */

typedef struct tent {
    struct tent *next;
    uint64_t h;   /* the key's hash */
    uint64_t tag; /* the value's */
    size_t klen;
    char key[];
} tent;

typedef struct stripe {
    pthread_mutex_t lock;
    uint64_t epoch;
    tent **b;
    size_t nb, n;
} stripe;

static stripe stripes[NSTRIPES];
static int active;

/* The write this thread is about to make through HTTP, and its hash. */
static _Thread_local struct {
    const char *key;
    size_t klen;
    uint64_t tag;
    int on;
} storing;

static stripe *stripe_of(uint64_t h) { return &stripes[(h >> 56) % NSTRIPES]; }

static void stripe_clear(stripe *s) {
    for (size_t i = 0; i < s->nb; i++) {
        while (s->b[i]) {
            tent *e = s->b[i];
            s->b[i] = e->next;
            free(e);
        }
    }
    s->n = 0;
}

static tent **find(stripe *s, uint64_t h, const char *key, size_t klen) {
    if (!s->nb) return NULL;
    for (tent **pp = &s->b[h & (s->nb - 1)]; *pp; pp = &(*pp)->next)
        if ((*pp)->h == h && (*pp)->klen == klen && memcmp((*pp)->key, key, klen) == 0) return pp;
    return NULL;
}

static void grow(stripe *s) {
    size_t nb = s->nb ? s->nb * 2 : 64;
    tent **b = calloc(nb, sizeof(*b));
    if (!b) return;
    for (size_t i = 0; i < s->nb; i++) {
        while (s->b[i]) {
            tent *e = s->b[i];
            s->b[i] = e->next;
            e->next = b[e->h & (nb - 1)];
            b[e->h & (nb - 1)] = e;
        }
    }
    free(s->b);
    s->b = b;
    s->nb = nb;
}

static tent *tent_new(uint64_t h, const char *key, size_t klen, uint64_t tag) {
    tent *e = malloc(sizeof(*e) + klen);
    if (!e) return NULL;
    e->h = h;
    e->tag = tag;
    e->klen = klen;
    memcpy(e->key, key, klen);
    return e;
}

/* e enters s (locked; no entry for its key). */
static tent *tent_put(stripe *s, tent *e) {
    if (s->n >= HTTP_ETAG_MAX / NSTRIPES) stripe_clear(s);
    if (s->n >= s->nb) grow(s);
    if (!s->nb) return e;
    e->next = s->b[e->h & (s->nb - 1)];
    s->b[e->h & (s->nb - 1)] = e;
    s->n++;
    return NULL;
}

static void on_key_modified(int dbid, const char *key, size_t klen) {
    if (dbid > 0) return;
    if (!key) {
        for (int i = 0; i < NSTRIPES; i++) {
            pthread_mutex_lock(&stripes[i].lock);
            stripes[i].epoch++;
            stripe_clear(&stripes[i]);
            pthread_mutex_unlock(&stripes[i].lock);
        }
        return;
    }
    uint64_t h = hash_bytes(key, klen);
    stripe *s = stripe_of(h);
    tent *ne = NULL;
    if (storing.on && dbid == 0 && storing.klen == klen && memcmp(storing.key, key, klen) == 0) {
        ne = tent_new(h, key, klen, storing.tag);
        storing.on = 0; /* the one write it was for */
    }
    pthread_mutex_lock(&s->lock);
    s->epoch++;
    tent **pp = find(s, h, key, klen);
    if (pp) {
        tent *e = *pp;
        *pp = e->next;
        free(e);
        s->n--;
    }
    if (ne) ne = tent_put(s, ne);
    pthread_mutex_unlock(&s->lock);
    free(ne);
}

void http_etag_store_begin(const char *key, size_t klen, uint64_t tag) {
    if (!active) return;
    storing.key = key;
    storing.klen = klen;
    storing.tag = tag;
    storing.on = 1;
}

void http_etag_store_end(void) { storing.on = 0; }

int http_etag_lookup(const char *key, size_t klen, uint64_t epoch, char *buf) {
    if (!active) return 0;
    uint64_t h = hash_bytes(key, klen);
    stripe *s = stripe_of(h);
    pthread_mutex_lock(&s->lock);
    tent **pp = s->epoch == epoch ? find(s, h, key, klen) : NULL;
    uint64_t tag = pp ? (*pp)->tag : 0;
    pthread_mutex_unlock(&s->lock);
    if (pp) snprintf(buf, 24, "\"%016llx\"", (unsigned long long)tag);
    return pp != NULL;
}

void http_etag_init(void) {
    for (int i = 0; i < NSTRIPES; i++) pthread_mutex_init(&stripes[i].lock, NULL);
    cmd_set_key_observer(on_key_modified);
    active = 1;
}

uint64_t http_etag_epoch(const char *key, size_t klen) {
    if (!active) return 0;
    stripe *s = stripe_of(hash_bytes(key, klen));
    pthread_mutex_lock(&s->lock);
    uint64_t e = s->epoch;
    pthread_mutex_unlock(&s->lock);
    return e;
}

static uint64_t etag_seed(void) { return hash_u64(0x6574616773656564ULL); }

uint64_t http_etag_hash(const char *p, size_t n) { return XXH3_64bits_withSeed(p, n, etag_seed()); }

struct http_etag_acc {
    XXH3_state_t *st;
};

http_etag_acc *http_etag_acc_new(void) {
    http_etag_acc *a = malloc(sizeof(*a));
    if (!a) return NULL;
    if (!(a->st = XXH3_createState()) || XXH3_64bits_reset_withSeed(a->st, etag_seed()) != XXH_OK) {
        http_etag_acc_drop(a);
        return NULL;
    }
    return a;
}

void http_etag_acc_add(http_etag_acc *a, const char *p, size_t n) {
    XXH_errorcode rc = XXH3_64bits_update(a->st, p, n);
    assert(rc == XXH_OK);
    (void)rc;
}

uint64_t http_etag_acc_end(http_etag_acc *a) {
    uint64_t h = XXH3_64bits_digest(a->st);
    http_etag_acc_drop(a);
    return h;
}

void http_etag_acc_drop(http_etag_acc *a) {
    if (!a) return;
    XXH3_freeState(a->st);
    free(a);
}

void http_etag_of(const char *key, size_t klen, uint64_t epoch, const char *body, size_t len, char *buf) {
    uint64_t tag = 0;
    int have = 0;
    uint64_t h = 0;
    stripe *s = NULL;
    if (active) {
        h = hash_bytes(key, klen);
        s = stripe_of(h);
        pthread_mutex_lock(&s->lock);
        tent **pp = s->epoch == epoch ? find(s, h, key, klen) : NULL;
        if (pp) {
            tag = (*pp)->tag;
            have = 1;
        }
        pthread_mutex_unlock(&s->lock);
    }
    if (!have) {
        tag = http_etag_hash(body, len);
        tent *e = s ? tent_new(h, key, klen, tag) : NULL;
        if (e) {
            pthread_mutex_lock(&s->lock);
            if (s->epoch == epoch && !find(s, h, key, klen)) e = tent_put(s, e);
            pthread_mutex_unlock(&s->lock);
            free(e);
        }
    }
    snprintf(buf, 24, "\"%016llx\"", (unsigned long long)tag);
}
