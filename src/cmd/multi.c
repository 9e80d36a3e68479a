/* multi.c -- MULTI/EXEC/DISCARD and optimistic locking (WATCH/UNWATCH).
 *
 * Queued commands keep owned copies of their arguments. EXEC takes the
 * keyspace write lock once and runs every queued command under it, so a
 * transaction is atomic with respect to every client on every worker; the
 * dispatcher sees the held lock and takes no other.
 *
 * WATCH: a global table (db index, key) -> watching clients, guarded by
 * watch_lock (a leaf lock: taken under shard locks, never the reverse).
 * Every modification path calls cmd_key_modified(), which marks the
 * watchers' cas_dirty (an atomic word apart from flags); FLUSHDB, FLUSHALL
 * and SWAPDB touch only the keys their databases held, as Redis 7.0
 * (multi_touch_emptied, multi_touch_swapped); a load passes key == NULL.
 * Expiry reaches it through the db layer's hook. A key already expired
 * when watched is remembered per watcher (mstate.wexp): its removal is no
 * change to that watcher. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/blocking.h"
#include "cmd/command.h"
#include "cmd/multi.h"
#include "cmd/propagate.h"
#include "cmd/families.h"
#include "cmd/server/function.h"
#include "session/reply.h"
#include "util/hashfn.h"
#include "ds/swiss.h"

typedef struct mcmd {
    const cmd_def *cmd;
    uint32_t flags; /* as the dispatcher sees it (a script's own flags) */
    int argc;
    garg *argv;
} mcmd;

typedef struct mstate {
    mcmd *cmds;
    int n, cap;
    /* The union of the queued commands' flags, and of their complements
     * (the flags some queued command lacks): kept as commands queue. */
    uint32_t flags_any, flags_lacking;
    /* watched keys of this client; wexp[i]: watched[i] was already
     * expired when watched (Redis's watchedKey.expired: its expiry then
     * is no change). Both under watch_lock. */
    struct wkey **watched;
    unsigned char *wexp;
    int nwatched, capwatched;
    int nexp; /* how many wexp are set: none spares the search */
    size_t watch_mem; /* what the watches add to the client's state_mem */
} mstate;

typedef struct wkey {
    int db;
    size_t klen;
    client **clients;
    int nclients, cap;
    char key[];
} wkey;

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static swiss watch_tab;
static long nwatching;  /* total watch registrations; fast path when 0 */

typedef struct wref {
    int db;
    const char *p;
    size_t n;
} wref;

static uint64_t wk_hash(int db, const char *p, size_t n) { return hash_bytes(p, n) ^ hash_u64((uint64_t)db + 1); }
static uint64_t wk_slot_hash(void *ctx, const void *slot) {
    (void)ctx;
    const wkey *w = *(wkey *const *)slot;
    return wk_hash(w->db, w->key, w->klen);
}
static int wk_slot_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    const wkey *w = *(wkey *const *)slot;
    const wref *r = key;
    return w->db == r->db && w->klen == r->n && memcmp(w->key, r->p, r->n) == 0;
}
static const swiss_type watch_type = {sizeof(wkey *), wk_slot_hash, wk_slot_match};

static mstate *ms_get(client *c) {
    if (!c->mstate) c->mstate = calloc(1, sizeof(mstate));
    return c->mstate;
}

static void free_queue(client *c, mstate *m) {
    for (int i = 0; i < m->n; i++) cmd_args_free(m->cmds[i].argv, m->cmds[i].argc);
    m->n = 0;
    m->flags_any = m->flags_lacking = 0;
    __atomic_store_n(&c->multi_count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->multi_mem, 0, __ATOMIC_RELAXED);
}

static void unwatch_all(client *c) {
    mstate *m = c->mstate;
    if (!m || !m->nwatched) return;
    pthread_mutex_lock(&watch_lock);
    for (int i = 0; i < m->nwatched; i++) {
        wkey *w = m->watched[i];
        for (int j = 0; j < w->nclients; j++)
            if (w->clients[j] == c) {
                w->clients[j] = w->clients[--w->nclients];
                break;
            }
        __atomic_fetch_sub(&nwatching, 1, __ATOMIC_RELAXED); /* peeked unlocked by multi_touch */
        if (!w->nclients) {
            wref r = {w->db, w->key, w->klen};
            void *slot = swiss_find(&watch_tab, wk_hash(w->db, w->key, w->klen), &r);
            if (slot) swiss_delete(&watch_tab, slot);
            free(w->clients);
            free(w);
        }
    }
    m->nwatched = 0;
    m->nexp = 0;
    client_state_mem_add(c, -(long long)m->watch_mem);
    m->watch_mem = 0;
    __atomic_store_n(&c->cas_dirty, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&watch_lock);
}

/* The union of the flags of the queued commands (Redis's mstate.cmd_flags):
 * the dispatcher refuses an EXEC holding a denyoom command when out of
 * memory, as Redis 7.0 does. */
uint32_t multi_queued_flags(const client *c) {
    const mstate *m = c->mstate;
    return m ? m->flags_any : 0;
}

uint32_t multi_queued_lacking(const client *c) {
    const mstate *m = c->mstate;
    return m ? m->flags_lacking : 0;
}

void multi_queued_each(const client *c, multi_each_fn *fn, void *arg) {
    const mstate *m = c->mstate;
    if (m)
        for (int i = 0; i < m->n; i++) fn(arg, m->cmds[i].cmd, m->cmds[i].argc, m->cmds[i].argv);
}

/* Also called by RESET and when the client goes away. */
void multi_discard_state(client *c) {
    mstate *m = c->mstate;
    if (!m) return;
    free_queue(c, m);
    unwatch_all(c);
    client_flag_off(c, CLIENT_MULTI | CLIENT_DIRTY_EXEC | CLIENT_DIRTY_CAS);
    free(m->cmds);
    free(m->watched);
    free(m->wexp);
    free(m);
    c->mstate = NULL;
}

static void mark_dirty_locked(wkey *w) {
    /* The watchers run on other workers: cas_dirty, not flags (see client.h). */
    for (int j = 0; j < w->nclients; j++) __atomic_store_n(&w->clients[j]->cas_dirty, 1, __ATOMIC_RELAXED);
}

static void wexp_set(mstate *m, int k, int v) {
    if (m->wexp[k] == v) return;
    m->wexp[k] = (unsigned char)v;
    m->nexp += v ? 1 : -1;
}

/* The place of w in wc's watched keys (wc watches w). watch_lock held. */
static int watch_index(const client *wc, const wkey *w) {
    const mstate *m = wc->mstate;
    int k = 0;
    while (k < m->nwatched && m->watched[k] != w) k++;
    assert(k < m->nwatched);
    return k;
}

/* A change to w's key: its watchers are dirty, except those that watched
 * it already expired (Redis 7.0's touchWatchedKey): for them the removal
 * of that expired key is no change, and they watch a missing key from
 * then on. present: whether the key is there after the change (-1: look
 * it up; the caller holds the key's shard lock). watch_lock held. */
static void mark_key_dirty_locked(wkey *w, int present) {
    for (int j = 0; j < w->nclients; j++) {
        client *wc = w->clients[j];
        mstate *m = wc->mstate;
        int k = m->nexp ? watch_index(wc, w) : -1;
        if (k >= 0 && m->wexp[k]) {
            if (present < 0) present = db_lookup_raw(db_get(w->db), w->key, w->klen) != NULL;
            if (!present) wexp_set(m, k, 0);
            continue;
        }
        __atomic_store_n(&wc->cas_dirty, 1, __ATOMIC_RELAXED);
    }
}

void multi_touch_emptied(int dbid) {
    if (!__atomic_load_n(&nwatching, __ATOMIC_RELAXED)) return;
    gdb *db = db_get(dbid);
    pthread_mutex_lock(&watch_lock);
    swiss_iter it;
    swiss_iter_init(&it, &watch_tab);
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        wkey *w = *(wkey **)slot;
        /* The database is about to be emptied: each key it holds goes. */
        if (w->db == dbid && db_lookup_raw(db, w->key, w->klen)) mark_key_dirty_locked(w, 0);
    }
    swiss_iter_done(&it);
    pthread_mutex_unlock(&watch_lock);
}

/* Touch watched keys: key == NULL means the whole db, db < 0 every db. */
void multi_touch(int dbid, const char *key, size_t klen) {
    if (!__atomic_load_n(&nwatching, __ATOMIC_RELAXED)) return;
    pthread_mutex_lock(&watch_lock);
    if (key) {
        wref r = {dbid, key, klen};
        void *slot = swiss_find(&watch_tab, wk_hash(dbid, key, klen), &r);
        if (slot) mark_key_dirty_locked(*(wkey **)slot, -1);
    } else {
        swiss_iter it;
        swiss_iter_init(&it, &watch_tab);
        void *slot;
        while ((slot = swiss_iter_next(&it))) {
            wkey *w = *(wkey **)slot;
            if (dbid < 0 || w->db == dbid) mark_dirty_locked(w);
        }
        swiss_iter_done(&it);
    }
    pthread_mutex_unlock(&watch_lock);
}

void multi_touch_swapped(int a, int b) {
    if (!__atomic_load_n(&nwatching, __ATOMIC_RELAXED)) return;
    int64_t now = db_now_ms();
    pthread_mutex_lock(&watch_lock);
    swiss_iter it;
    swiss_iter_init(&it, &watch_tab);
    void *slot;
    while ((slot = swiss_iter_next(&it))) {
        wkey *w = *(wkey **)slot;
        if (w->db != a && w->db != b) continue;
        /* Swapped already: the database that was under w->db is now
         * under the other index. */
        gdb *was = db_get(w->db == a ? b : a), *came = db_get(w->db);
        dbentry *old = db_lookup_raw(was, w->key, w->klen);
        dbentry *cur = db_lookup_raw(came, w->key, w->klen);
        if (!old && !cur) continue;
        int cur_expired = cur && db_is_expired(cur, now);
        for (int j = 0; j < w->nclients; j++) {
            client *wc = w->clients[j];
            mstate *m = wc->mstate;
            int k = watch_index(wc, w);
            if (m->wexp[k]) {
                /* Expired when watched: gone now, or still expired, is no change. */
                if (!cur) wexp_set(m, k, 0);
                if (!cur || cur_expired) continue;
            } else if (!old && cur_expired) {
                wexp_set(m, k, 1); /* an expired key took the place of none */
                continue;
            }
            __atomic_store_n(&wc->cas_dirty, 1, __ATOMIC_RELAXED);
        }
    }
    swiss_iter_done(&it);
    pthread_mutex_unlock(&watch_lock);
}

static int multi_queue(client *c, const cmd_def *cmd) {
    if (!(client_flags_peek(c) & CLIENT_MULTI)) return 0;
    const char *n = cmd->parent ? cmd->parent->name : cmd->name;
    if (!strcmp(n, "exec") || !strcmp(n, "discard") || !strcmp(n, "multi") || !strcmp(n, "watch") ||
        !strcmp(n, "quit") || !strcmp(n, "reset"))
        return 0;
    if (cmd->flags & CMDF_NO_MULTI) {
        reply_error(c, "ERR Command not allowed inside a transaction");
        client_flag_on(c, CLIENT_DIRTY_EXEC);
        return 1;
    }
    mstate *m = ms_get(c);
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 8;
        m->cmds = realloc(m->cmds, sizeof(mcmd) * (size_t)m->cap);
    }
    mcmd *q = &m->cmds[m->n++];
    q->cmd = cmd;
    q->flags = (cmd->flags & CMDF_NO_OWN_RECORD) ? script_dispatch_flags(c, cmd) : cmd->flags;
    m->flags_any |= q->flags;
    m->flags_lacking |= ~q->flags;
    q->argc = c->argc;
    q->argv = cmd_args_copy(c->argv, c->argc);
    size_t mem = sizeof(void *) * (size_t)c->argc;
    for (int i = 0; i < c->argc; i++) mem += c->argv[i].n;
    __atomic_store_n(&c->multi_count, m->n, __ATOMIC_RELAXED);
    __atomic_store_n(&c->multi_mem, c->multi_mem + mem, __ATOMIC_RELAXED);
    reply_simple(c, "QUEUED");
    return 1;
}

static void multiCommand(client *c) {
    if (client_flags_peek(c) & CLIENT_MULTI) {
        reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    ms_get(c);
    client_flag_on(c, CLIENT_MULTI);
    reply_ok(c);
}

static void discardCommand(client *c) {
    if (!(client_flags_peek(c) & CLIENT_MULTI)) {
        reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    multi_discard_state(c);
    reply_ok(c);
}

/* A watched key that existed unexpired at WATCH time and has expired since
 * dirties the transaction (Redis 7.0 isWatchedKeyExpired). */
static int watched_key_expired(client *c) {
    mstate *m = c->mstate;
    if (!m) return 0;
    int64_t now = db_now_ms();
    for (int i = 0; i < m->nwatched; i++) {
        wkey *w = m->watched[i];
        if (m->wexp[i]) continue;
        gdb *db = db_get(w->db);
        dbentry *e = db_lookup_raw(db, w->key, w->klen);
        if (e && db_is_expired(e, now)) return 1;
    }
    return 0;
}

static void execCommand(client *c) {
    if (!(client_flags_peek(c) & CLIENT_MULTI)) {
        reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    mstate *m = c->mstate;
    if (client_flags_peek(c) & CLIENT_DIRTY_EXEC) {
        reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        multi_discard_state(c);
        return;
    }
    db_wrlock_keyspace();
    /* Writers dirty us under the keyspace read lock: holding the write
     * lock, every earlier modification is visible. */
    if (__atomic_load_n(&c->cas_dirty, __ATOMIC_RELAXED) || watched_key_expired(c)) {
        db_unlock_keyspace();
        reply_null_array(c);
        multi_discard_state(c);
        return;
    }
    /* Unwatch first: our own writes must not dirty us. */
    unwatch_all(c);
    int argc = c->argc;
    garg *argv = c->argv;
    const cmd_def *self = c->cur;
    client_flag_off(c, CLIENT_MULTI);
    client_flag_on(c, CLIENT_IN_EXEC);
    size_t exec_argv = 0;
    for (int i = 0; i < argc; i++) exec_argv += argv[i].n;
    __atomic_store_n(&c->exec_argv, exec_argv, __ATOMIC_RELAXED);
    reply_array(c, m->n);
    for (int i = 0; i < m->n; i++) {
        c->argc = m->cmds[i].argc;
        c->argv = m->cmds[i].argv;
        cmd_call(c, m->cmds[i].cmd);
    }
    client_flag_off(c, CLIENT_IN_EXEC);
    __atomic_store_n(&c->exec_argv, 0, __ATOMIC_RELAXED);
    c->argc = argc;
    c->argv = argv;
    __atomic_store_n(&c->cur, self, __ATOMIC_RELAXED);
    c->cmd_failed = 0;
    /* The transaction's records enter the stream while nothing else can
     * change the keyspace: after the unlock, another worker's write could
     * be applied after them and appended before them. */
    prop_flush();
    db_unlock_keyspace();
    multi_discard_state(c);
}

static void watchCommand(client *c) {
    if (client_flags_peek(c) & CLIENT_MULTI) {
        reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    mstate *m = ms_get(c);
    gdb *db = cmd_db(c);
    int64_t now = db_now_ms();
    pthread_mutex_lock(&watch_lock);
    for (int i = 1; i < c->argc; i++) {
        const garg *k = &c->argv[i];
        int dup = 0;
        for (int j = 0; j < m->nwatched; j++)
            if (m->watched[j]->db == c->db && m->watched[j]->klen == k->n && !memcmp(m->watched[j]->key, k->p, k->n))
                dup = 1;
        if (dup) continue;
        wref r = {c->db, k->p, k->n};
        uint64_t h = wk_hash(c->db, k->p, k->n);
        void *slot = swiss_find(&watch_tab, h, &r);
        wkey *w;
        if (slot) {
            w = *(wkey **)slot;
        } else {
            w = calloc(1, sizeof(wkey) + k->n + 1);
            w->db = c->db;
            w->klen = k->n;
            memcpy(w->key, k->p, k->n);
            slot = swiss_insert(&watch_tab, h);
            memcpy(slot, &w, sizeof(w));
        }
        if (w->nclients == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 4;
            w->clients = realloc(w->clients, sizeof(client *) * (size_t)w->cap);
        }
        w->clients[w->nclients++] = c;
        __atomic_fetch_add(&nwatching, 1, __ATOMIC_RELAXED);
        if (m->nwatched == m->capwatched) {
            m->capwatched = m->capwatched ? m->capwatched * 2 : 4;
            m->watched = realloc(m->watched, sizeof(wkey *) * (size_t)m->capwatched);
            m->wexp = realloc(m->wexp, (size_t)m->capwatched);
            if (!m->watched || !m->wexp) abort();
        }
        /* Its share: the slots in the client's arrays and in the key's,
         * and the key's record (Redis counts a list node and a record). */
        size_t wm = sizeof(wkey *) + 1 + sizeof(client *) + sizeof(wkey) + k->n + 1;
        m->watch_mem += wm;
        client_state_mem_add(c, (long long)wm);
        dbentry *e = db_lookup_raw(db, k->p, k->n);
        m->wexp[m->nwatched] = 0;
        m->watched[m->nwatched] = w;
        wexp_set(m, m->nwatched++, e && db_is_expired(e, now));
    }
    pthread_mutex_unlock(&watch_lock);
    reply_ok(c);
}

static void unwatchCommand(client *c) {
    unwatch_all(c);
    reply_ok(c);
}

extern int (*cmd_multi_queue_hook)(client *c, const cmd_def *cmd);

void multi_family_init(void) {
    swiss_init(&watch_tab, &watch_type, NULL);
    cmd_multi_queue_hook = multi_queue;
}

const cmd_handler multi_handlers[] = {
    {"multi", multiCommand, CMD_LOCK_NONE},     {"exec", execCommand, CMD_LOCK_SELF},
    {"discard", discardCommand, CMD_LOCK_NONE}, {"watch", watchCommand, CMD_LOCK_KEYS},
    {"unwatch", unwatchCommand, CMD_LOCK_NONE}, {NULL, NULL, 0},
};
