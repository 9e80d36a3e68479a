/* mcmeta.c -- the memcache metadata side table (mcmeta.h).
 *
 * 64 partitions by key hash, each a chained hash table under its own
 * mutex. Invariant: an entry is valid only while database 0 maps its key
 * to the dbentry it records (e); a stale one (the key was deleted or
 * re-created without a signal reaching us) reads as absent and is
 * dropped when met. A global count lets the forget path of plain RESP
 * writes skip every lock while no key has metadata. */
#include "db/mcmeta.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MCM_PARTS 64

typedef struct mcm {
    struct mcm *next;
    uint64_t hash;
    const dbentry *e;
    mcmeta m;
    uint32_t klen;
    char key[];
} mcm;

typedef struct mcpart {
    pthread_mutex_t lk;
    mcm **b;
    size_t nb, n;
} mcpart;

static mcpart parts[MCM_PARTS];
static pthread_once_t parts_once = PTHREAD_ONCE_INIT;
static uint64_t total;   /* entries, relaxed atomic */
static uint64_t cas_now; /* last unique handed out, atomic */

static void parts_init(void) {
    for (int i = 0; i < MCM_PARTS; i++) pthread_mutex_init(&parts[i].lk, NULL);
}

static mcpart *part_of(uint64_t h) {
    pthread_once(&parts_once, parts_init);
    return &parts[h & (MCM_PARTS - 1)];
}

uint64_t mcmeta_next_cas(void) { return __atomic_add_fetch(&cas_now, 1, __ATOMIC_RELAXED); }

void mcmeta_see_cas(uint64_t cas) {
    uint64_t cur = __atomic_load_n(&cas_now, __ATOMIC_RELAXED);
    while (cur < cas && !__atomic_compare_exchange_n(&cas_now, &cur, cas, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

uint64_t mcmeta_count(void) { return __atomic_load_n(&total, __ATOMIC_RELAXED); }

/* The slot holding key's entry in p (or the NULL slot ending its chain). */
static mcm **find(mcpart *p, uint64_t h, const char *k, size_t n) {
    if (!p->nb) return NULL;
    mcm **s = &p->b[(h >> 6) & (p->nb - 1)];
    while (*s && !((*s)->hash == h && (*s)->klen == n && memcmp((*s)->key, k, n) == 0)) s = &(*s)->next;
    return s;
}

static void unlink_at(mcpart *p, mcm **s) {
    mcm *x = *s;
    *s = x->next;
    free(x);
    p->n--;
    __atomic_sub_fetch(&total, 1, __ATOMIC_RELAXED);
}

static int grow(mcpart *p) {
    size_t nb = p->nb ? p->nb * 2 : 16;
    mcm **b = calloc(nb, sizeof(*b));
    if (!b) return -1;
    for (size_t i = 0; i < p->nb; i++) {
        mcm *x = p->b[i];
        while (x) {
            mcm *nx = x->next;
            mcm **s = &b[(x->hash >> 6) & (nb - 1)];
            x->next = *s;
            *s = x;
            x = nx;
        }
    }
    free(p->b);
    p->b = b;
    p->nb = nb;
    return 0;
}

int mcmeta_get(gdb *db, const dbentry *e, mcmeta *out) {
    if (!db || db->id != 0 || !mcmeta_count()) return 0;
    size_t n = db_entry_klen(e);
    uint64_t h = db_key_hash(db_entry_key(e), n);
    mcpart *p = part_of(h);
    int found = 0;
    pthread_mutex_lock(&p->lk);
    mcm **s = find(p, h, db_entry_key(e), n);
    if (s && *s) {
        if ((*s)->e == e) {
            *out = (*s)->m;
            found = 1;
        } else {
            unlink_at(p, s);
        }
    }
    pthread_mutex_unlock(&p->lk);
    return found;
}

/* Key's entry becomes (e, *m); with kept, an entry of e already there
 * stays and *kept becomes its metadata. */
static int put(const char *key, size_t klen, const dbentry *e, const mcmeta *m, mcmeta *kept) {
    uint64_t h = db_key_hash(key, klen);
    mcpart *p = part_of(h);
    int rc = 0;
    pthread_mutex_lock(&p->lk);
    mcm **s = find(p, h, key, klen);
    if (s && *s) {
        if (kept && (*s)->e == e) {
            *kept = (*s)->m;
        } else {
            (*s)->e = e;
            (*s)->m = *m;
        }
    } else if (p->n >= p->nb && grow(p) != 0) {
        rc = -1;
    } else {
        mcm *x = malloc(sizeof(*x) + klen);
        if (!x) {
            rc = -1;
        } else {
            x->hash = h;
            x->e = e;
            x->m = *m;
            x->klen = (uint32_t)klen;
            memcpy(x->key, key, klen);
            s = &p->b[(h >> 6) & (p->nb - 1)];
            x->next = *s;
            *s = x;
            p->n++;
            __atomic_add_fetch(&total, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&p->lk);
    return rc;
}

int mcmeta_set(gdb *db, const dbentry *e, const mcmeta *m) {
    if (!db || db->id != 0) return 0;
    return put(db_entry_key(e), db_entry_klen(e), e, m, NULL);
}

void mcmeta_ensure(gdb *db, const dbentry *e, mcmeta *out) {
    if (mcmeta_get(db, e, out)) return;
    out->flags = 0;
    out->state = 0;
    out->cas = mcmeta_next_cas();
    if (!db || db->id != 0) return;
    /* Readers of one key may run together (its shard held shared): the
     * first to give a unique wins and the others show that one. */
    put(db_entry_key(e), db_entry_klen(e), e, out, out);
}

void mcmeta_moved(gdb *db, const dbentry *from, const dbentry *to) {
    if (!db || db->id != 0 || !mcmeta_count()) return;
    size_t n = db_entry_klen(to);
    uint64_t h = db_key_hash(db_entry_key(to), n);
    mcpart *p = part_of(h);
    pthread_mutex_lock(&p->lk);
    mcm **s = find(p, h, db_entry_key(to), n);
    if (s && *s && (*s)->e == from) (*s)->e = to;
    pthread_mutex_unlock(&p->lk);
}

static void clear_all(void);
static char *staged;
static size_t staged_len;
static void apply_blob(const char *p, size_t n);

static void clear_part(mcpart *p) {
    for (size_t i = 0; i < p->nb; i++)
        while (p->b[i]) unlink_at(p, &p->b[i]);
}

void mcmeta_forget(gdb *db, const char *key, size_t klen) {
    if (db && db->id != 0) return;
    if (!mcmeta_count()) return;
    if (!key) {
        clear_all();
        if (staged) {
            /* The replaced signal right after a load: its metadata stays. */
            apply_blob(staged, staged_len);
            free(staged);
            staged = NULL;
            staged_len = 0;
        }
        return;
    }
    uint64_t h = db_key_hash(key, klen);
    mcpart *p = part_of(h);
    pthread_mutex_lock(&p->lk);
    mcm **s = find(p, h, key, klen);
    if (s && *s) unlink_at(p, s);
    pthread_mutex_unlock(&p->lk);
}

/* staged: the blob of the last load, applied again after the
 * forget-everything that follows the load (keyspace write lock). */

static void restore_one(const char *key, size_t klen, const mcmeta *m) {
    gdb *db = db_get(0);
    if (!db) return;
    const dbentry *e = db_lookup_raw(db, key, klen);
    if (!e) return;
    put(key, klen, e, m, NULL);
    mcmeta_see_cas(m->cas);
}

static void apply_blob(const char *p, size_t n) {
    size_t i = 0;
    while (i + 16 <= n) {
        uint32_t klen, flags;
        uint64_t cas;
        memcpy(&klen, p + i, 4);
        memcpy(&flags, p + i + 4, 4);
        memcpy(&cas, p + i + 8, 8);
        if (klen > n - i - 16) break;
        mcmeta m = {.flags = flags, .cas = cas};
        restore_one(p + i + 16, klen, &m);
        i += 16 + klen;
    }
}

static void clear_all(void) {
    for (int i = 0; i < MCM_PARTS; i++) {
        mcpart *p = part_of((uint64_t)i);
        pthread_mutex_lock(&p->lk);
        clear_part(p);
        pthread_mutex_unlock(&p->lk);
    }
}

void mcmeta_load(const char *blob, size_t len) {
    clear_all();
    free(staged);
    staged = NULL;
    staged_len = 0;
    if (!blob || !len) return;
    staged = malloc(len);
    if (staged) {
        memcpy(staged, blob, len);
        staged_len = len;
    }
    apply_blob(blob, len);
}

char *mcmeta_dump(size_t *len) {
    size_t cap = 0, n = 0;
    char *out = NULL;
    for (int i = 0; i < MCM_PARTS; i++) {
        mcpart *p = part_of((uint64_t)i);
        pthread_mutex_lock(&p->lk);
        for (size_t j = 0; j < p->nb; j++)
            for (mcm *x = p->b[j]; x; x = x->next) {
                size_t need = 16 + x->klen;
                if (n + need > cap) {
                    size_t nc = (cap ? cap * 2 : 4096) + need;
                    char *no = realloc(out, nc);
                    if (!no) continue;
                    out = no;
                    cap = nc;
                }
                memcpy(out + n, &x->klen, 4);
                memcpy(out + n + 4, &x->m.flags, 4);
                memcpy(out + n + 8, &x->m.cas, 8);
                memcpy(out + n + 16, x->key, x->klen);
                n += need;
            }
        pthread_mutex_unlock(&p->lk);
    }
    *len = n;
    if (!n) {
        free(out);
        return NULL;
    }
    return out;
}
