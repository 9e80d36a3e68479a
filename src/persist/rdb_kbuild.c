/* rdb_kbuild.c -- the RDB loader's key builder (see rdb_kbuild.h). */
#include "persist/rdb_kbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/strval.h"

void rdb_key_shown(char *out, size_t cap, const unsigned char *k, size_t kn) {
    size_t n = kn < 64 ? kn : 64, o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        unsigned char c = k[i];
        if (c >= 32 && c < 127 && c != '\'' && c != '\\') out[o++] = (char)c;
        else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    snprintf(out + o, cap - o, "%s", kn > 64 ? "..." : "");
}

/* Insert b's records (builder thread, or the parser when none runs), shard
 * by shard: consecutive inserts then touch one shard's index, which stays
 * in cache, instead of a random one of 64 per key. */
static void kb_apply(kbuilder *kb, kbatch *b) {
    rdb_loaded *ld = kb->ld;
    uint32_t start[DB_NSHARDS + 1] = {0};
    uint32_t *order = malloc(b->n * sizeof(uint32_t));
    uint8_t *sh = malloc(b->n);
    if (order && sh) {
        for (size_t i = 0; i < b->n; i++) {
            sh[i] = (uint8_t)db_shard_of((const char *)b->keys + b->r[i].koff, b->r[i].klen);
            start[sh[i] + 1]++;
        }
        for (int s = 0; s < DB_NSHARDS; s++) start[s + 1] += start[s];
        for (size_t i = 0; i < b->n; i++) order[start[sh[i]]++] = (uint32_t)i;
    }
    for (size_t j = 0; j < b->n; j++) {
        krec *r = &b->r[order && sh ? order[j] : j];
        if (kb->err) {
            obj_free(&r->val);
            continue;
        }
        gdb *db = ld->dbs[r->dbid];
        const char *k = (const char *)b->keys + r->koff;
        dbentry *e = NULL;
        size_t room = strval_embed_size_of(&r->val); /* a small string moves into its entry */
        void *at = NULL;
        if (db_lookup_raw(db, k, r->klen)) {
            kb->err = RDB_ERR_DUPLICATE;
        } else if (!(e = db_add_ext(db, k, r->klen, room, &at, r->expire != -1))) {
            kb->err = RDB_ERR_NOMEM;
        }
        if (!e) {
            char shown[300];
            rdb_key_shown(shown, sizeof(shown), (const unsigned char *)k, r->klen);
            snprintf(kb->msg, sizeof(kb->msg), "%s in database %d (key '%s', offset %llu)",
                     kb->err == RDB_ERR_DUPLICATE ? "duplicate key" : "out of memory adding a key", r->dbid, shown,
                     (unsigned long long)r->off);
            obj_free(&r->val);
            continue;
        }
        db_entry_set_value(e, &r->val);
        if (at) strval_embed(&e->val, at);
        if (r->expire != -1) db_set_expire(db, e, r->expire);
        ld->keys++;
    }
    free(order);
    free(sh);
    b->n = 0;
    b->klen = 0;
}

static void *kb_main(void *arg) {
    kbuilder *kb = arg;
    pthread_setname_np(pthread_self(), "goblin-rdbload");
    pthread_mutex_lock(&kb->mu);
    for (;;) {
        while (!kb->todo && !kb->stop) pthread_cond_wait(&kb->cv, &kb->mu);
        if (!kb->todo) break;
        kbatch *b = kb->todo;
        pthread_mutex_unlock(&kb->mu);
        kb_apply(kb, b);
        pthread_mutex_lock(&kb->mu);
        kb->todo = NULL;
        pthread_cond_broadcast(&kb->cv);
    }
    pthread_mutex_unlock(&kb->mu);
    return NULL;
}

void kb_init(kbuilder *kb, rdb_loaded *ld) {
    memset(kb, 0, sizeof(*kb));
    kb->ld = ld;
    pthread_mutex_init(&kb->mu, NULL);
    pthread_cond_init(&kb->cv, NULL);
}

/* Hand the parser's batch over (or apply it here when no thread runs or
 * none can be started). Returns the builder's error so far, read while the
 * builder is idle (it writes err only while it works on a batch). */
int kb_flush(kbuilder *kb, int final) {
    kbatch *b = &kb->bufs[kb->cur];
    if (!kb->started && b->n && !final) {
        if (pthread_create(&kb->tid, NULL, kb_main, kb) == 0) kb->started = 1;
    }
    if (!kb->started) {
        kb_apply(kb, b);
        return kb->err;
    }
    pthread_mutex_lock(&kb->mu);
    while (kb->todo) pthread_cond_wait(&kb->cv, &kb->mu);
    int err = kb->err;
    if (b->n && !err) {
        kb->todo = b;
        pthread_cond_broadcast(&kb->cv);
        kb->cur ^= 1;
        if (final) {
            while (kb->todo) pthread_cond_wait(&kb->cv, &kb->mu);
            err = kb->err;
        }
    }
    pthread_mutex_unlock(&kb->mu);
    return err;
}

/* Stop the thread and free what was never inserted. */
void kb_done(kbuilder *kb) {
    if (kb->started) {
        pthread_mutex_lock(&kb->mu);
        while (kb->todo) pthread_cond_wait(&kb->cv, &kb->mu);
        kb->stop = 1;
        pthread_cond_broadcast(&kb->cv);
        pthread_mutex_unlock(&kb->mu);
        pthread_join(kb->tid, NULL);
    }
    for (int i = 0; i < 2; i++) {
        kbatch *b = &kb->bufs[i];
        for (size_t j = 0; j < b->n; j++) obj_free(&b->r[j].val);
        free(b->r);
        free(b->keys);
    }
    pthread_mutex_destroy(&kb->mu);
    pthread_cond_destroy(&kb->cv);
}

/* Append a key to the parser's batch; the record is completed by kb_push. */
int kb_key(kbuilder *kb, const unsigned char *k, size_t n) {
    kbatch *b = &kb->bufs[kb->cur];
    if (b->klen + n > b->kcap) {
        size_t cap = b->kcap ? b->kcap : BATCH_KEYBYTES_FIRST; /* up to about BATCH_KEYBYTES */
        while (cap < b->klen + n) cap *= 2;
        unsigned char *nk = realloc(b->keys, cap);
        if (!nk) return -1;
        b->keys = nk;
        b->kcap = cap;
    }
    if (n) memcpy(b->keys + b->klen, k, n);
    return 0;
}

/* Queue the record whose key kb_key just stored. 1 when the batch is full. */
int kb_push(kbuilder *kb, size_t klen, int dbid, const gobj *v, int64_t expire, uint64_t off) {
    kbatch *b = &kb->bufs[kb->cur];
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        krec *nr = realloc(b->r, cap * sizeof(krec));
        if (!nr) return -1;
        b->r = nr;
        b->cap = cap;
    }
    krec *r = &b->r[b->n++];
    r->val = *v;
    r->expire = expire;
    r->off = off;
    r->koff = (uint32_t)b->klen;
    r->klen = (uint32_t)klen;
    r->dbid = dbid;
    b->klen += klen;
    return b->n >= BATCH_RECS || b->klen >= BATCH_KEYBYTES;
}

