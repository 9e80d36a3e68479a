/* blocking.c -- see blocking.h for the contract.
 *
 * Waiter queues: one per (db index, key), in a swiss table keyed by both,
 * each a FIFO list of waiter nodes; every blocked client owns one node per
 * key it waits on. All of it is guarded by block_lock, which is never held
 * while a shard lock is taken (signal only appends to a thread-local list;
 * the queues are looked at after the command released its locks).
 *
 * Retry chain: a signalled key hands a retry to its first waiter only (on
 * that waiter's worker). The waiter re-runs its command; if it was served,
 * the key is signalled again so the next waiter gets its turn while the key
 * can still serve; if not, the client stays blocked in place (FIFO kept). */
#include "cmd/blocking.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cluster/cluster.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/server/script.h"
#include "session/reply.h"
#include "util/hashfn.h"
#include "util/strutil.h"
#include "ds/swiss.h"
#include "session/session.h"

typedef struct waiter {
    struct waiter *prev, *next;
    struct bqueue *q;
    client *c;
} waiter;

typedef struct bqueue {
    waiter *head, *tail;
    int db;
    size_t klen;
    char key[];
} bqueue;

typedef struct bstate {
    int argc;
    garg *argv;          /* owned copies of the blocked command, as re-run */
    garg *sent;          /* as the client sent it, once block_set_arg changed argv */
    int nkeys;
    waiter *w;           /* one per key */
    int64_t deadline;
    int db;
    int retrying;        /* the command is being re-run */
    int timeout_zero;    /* timeout replies :0 (WAIT) instead of a null array */
    int reblocked;       /* ... and asked to block again */
    int pass_on;         /* block_pass_on */
    uint64_t run_us;     /* the time its runs took so far (not the waits) */
} bstate;

static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;
static swiss queues;
static int queues_ready;
static long nblocked;

typedef struct qkey {
    int db;
    const char *p;
    size_t n;
} qkey;

static uint64_t qhash(int db, const char *p, size_t n) { return hash_bytes(p, n) ^ hash_u64((uint64_t)db); }

static uint64_t q_slot_hash(void *ctx, const void *slot) {
    (void)ctx;
    const bqueue *q = *(bqueue *const *)slot;
    return qhash(q->db, q->key, q->klen);
}

static int q_slot_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    const bqueue *q = *(bqueue *const *)slot;
    const qkey *k = key;
    return q->db == k->db && q->klen == k->n && memcmp(q->key, k->p, k->n) == 0;
}

static const swiss_type queue_type = {sizeof(bqueue *), q_slot_hash, q_slot_match};

static void queues_init(void) {
    if (!queues_ready) {
        swiss_init(&queues, &queue_type, NULL);
        queues_ready = 1;
    }
}

/* Keys signalled by the command running on this thread. */
typedef struct ready_key {
    int db;
    size_t n;
    char *p;
} ready_key;
static _Thread_local ready_key *ready;
static _Thread_local int nready, capready;

int block_parse_timeout(client *c, const garg *a, int64_t *deadline) {
    long double t;
    if (!str_to_ldouble(a->p, a->n, &t) || isnan(t)) {
        reply_error(c, "ERR timeout is not a float or out of range");
        return -1;
    }
    /* As Redis 7.0: milliseconds rounded up (0.0001 waits 1 ms, not
     * forever); what does not fit (inf) becomes LLONG_MIN: "negative". */
    long double ms = ceill(t * 1000.0L);
    long long tms = ms >= -9223372036854775808.0L && ms < 9223372036854775808.0L ? (long long)ms : LLONG_MIN;
    if (tms < 0) {
        reply_error(c, "ERR timeout is negative");
        return -1;
    }
    int64_t now = db_now_ms();
    if (tms > 0 && tms > INT64_MAX - now) {
        reply_error(c, "ERR timeout is out of range");
        return -1;
    }
    *deadline = tms > 0 ? now + tms : 0;
    return 0;
}

int block_retrying(const client *c) {
    const bstate *b = c->bstate;
    return b && b->retrying;
}

const garg *block_sent_args(const client *c) {
    const bstate *b = c->bstate;
    if (!b || !b->retrying) return c->argv;
    return b->sent ? b->sent : b->argv;
}

int block_waiting(const client *c) {
    const bstate *b = c->bstate;
    return b && (!b->retrying || b->reblocked);
}

void block_add_run_time(client *c, uint64_t us) {
    bstate *b = c->bstate;
    if (b) b->run_us += us;
}

/* CLIENT UNBLOCK ends a blocked command with no run that replies: its
 * statistics, as Redis's updateStatsOnUnblock (a timeout of its own adds
 * none, as in Redis 7.0). Before finish_block: the slow log shows the
 * arguments it keeps. */
static void unblocked_stats(client *c, int failed) {
    const bstate *b = c->bstate;
    cmd_unblocked(c, block_sent_args(c), b ? b->run_us : 0, failed);
}

int block_allowed(const client *c) { return !(client_flags_peek(c) & (CLIENT_MULTI | CLIENT_IN_EXEC)); }

long block_count(void) { return __atomic_load_n(&nblocked, __ATOMIC_RELAXED); }

static void bstate_free(bstate *b) {
    cmd_args_free(b->argv, b->argc);
    cmd_args_free(b->sent, b->argc);
    free(b->w);
    free(b);
}

/* block_lock held. */
static void unlink_waiters(bstate *b) {
    for (int i = 0; i < b->nkeys; i++) {
        waiter *w = &b->w[i];
        bqueue *q = w->q;
        if (!q) continue;
        if (w->prev) w->prev->next = w->next;
        else q->head = w->next;
        if (w->next) w->next->prev = w->prev;
        else q->tail = w->prev;
        w->q = NULL;
        if (!q->head) {
            qkey k = {q->db, q->key, q->klen};
            void *slot = swiss_find(&queues, qhash(q->db, q->key, q->klen), &k);
            if (slot) swiss_delete(&queues, slot);
            free(q);
        }
    }
}

static void on_timeout(client *c);

void block_on_keys(client *c, const garg *keys, int nkeys, int64_t deadline) {
    bstate *b = c->bstate;
    if (b && b->retrying) {
        b->reblocked = 1;   /* keep our place in every queue */
        return;
    }
    b = calloc(1, sizeof(*b));
    b->argc = c->argc;
    b->argv = cmd_args_copy(c->argv, c->argc);
    b->nkeys = nkeys;
    b->w = calloc((size_t)nkeys, sizeof(waiter));
    b->deadline = deadline;
    b->db = c->db;
    pthread_mutex_lock(&block_lock);
    queues_init();
    for (int i = 0; i < nkeys; i++) {
        qkey k = {c->db, keys[i].p, keys[i].n};
        uint64_t h = qhash(c->db, keys[i].p, keys[i].n);
        void *slot = swiss_find(&queues, h, &k);
        bqueue *q;
        if (slot) {
            q = *(bqueue **)slot;
        } else {
            q = calloc(1, sizeof(bqueue) + keys[i].n + 1);
            q->db = c->db;
            q->klen = keys[i].n;
            memcpy(q->key, keys[i].p, keys[i].n);
            slot = swiss_insert(&queues, h);
            memcpy(slot, &q, sizeof(q));
        }
        /* The same key twice (BLPOP k k 0) waits once. */
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= b->w[j].q == q;
        if (dup) continue;
        waiter *w = &b->w[i];
        w->c = c;
        w->q = q;
        w->prev = q->tail;
        if (q->tail) q->tail->next = w;
        else q->head = w;
        q->tail = w;
    }
    __atomic_fetch_add(&nblocked, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&block_lock);
    c->bstate = b;
    size_t held = 0;
    for (int i = 0; i < b->argc; i++) held += b->argv[i].n;
    __atomic_store_n(&c->argv_blocked, held, __ATOMIC_RELAXED);
    client_flag_on(c, CLIENT_BLOCKED);
    session_client_timer(c, deadline, on_timeout);
}

/* Owning worker only: drop the block, keep the client. */
static void finish_block(client *c) {
    bstate *b = c->bstate;
    if (!b) return;
    pthread_mutex_lock(&block_lock);
    unlink_waiters(b);
    __atomic_fetch_sub(&nblocked, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&block_lock);
    c->bstate = NULL;
    __atomic_store_n(&c->argv_blocked, 0, __ATOMIC_RELAXED);
    client_flag_off(c, CLIENT_BLOCKED);
    session_client_timer(c, 0, NULL);
    bstate_free(b);
}

void block_forget_client(client *c) {
    if (c->bstate) finish_block(c);
}

void block_pass_on(client *c) {
    bstate *b = c->bstate;
    if (b) b->pass_on = 1;
}

void block_set_arg(client *c, int i, const char *p, size_t n) {
    bstate *b = c->bstate;
    if (!b || i < 0 || i >= b->argc) return;
    if (!b->sent) b->sent = cmd_args_copy(b->argv, b->argc);
    char *np = malloc(n + 1);
    if (!np) return;
    memcpy(np, p, n);
    np[n] = '\0';
    free(b->argv[i].p);
    b->argv[i].p = np;
    b->argv[i].n = n;
}

static void on_timeout(client *c) {
    if (!c->bstate) return;
    /* As Redis, which handles timeouts outside a running script: a
     * blocked client times out once the script has ended. */
    int is_eval;
    int64_t since;
    if (script_running(&is_eval, &since)) {
        session_client_timer(c, db_now_ms() + 10, on_timeout);
        return;
    }
    int zero = ((bstate *)c->bstate)->timeout_zero;
    finish_block(c);
    if (zero) reply_int(c, 0);
    else reply_null_array(c);
    session_client_resume(c);
}

void block_signal_key(gdb *db, const char *key, size_t klen) {
    if (!__atomic_load_n(&nblocked, __ATOMIC_RELAXED)) return;
    for (int i = 0; i < nready; i++)
        if (ready[i].db == db->id && ready[i].n == klen && memcmp(ready[i].p, key, klen) == 0) return;
    if (nready == capready) {
        capready = capready ? capready * 2 : 8;
        ready = realloc(ready, sizeof(ready_key) * (size_t)capready);
    }
    ready[nready].db = db->id;
    ready[nready].n = klen;
    ready[nready].p = malloc(klen + 1);
    memcpy(ready[nready].p, key, klen);
    nready++;
}

static void signal_db(gdb *db, int all);

void block_signal_db(gdb *db) { signal_db(db, 0); }
void block_signal_db_all(gdb *db) { signal_db(db, 1); }

static void signal_db(gdb *db, int all) {
    if (!__atomic_load_n(&nblocked, __ATOMIC_RELAXED)) return;
    /* The keys waited on in db, copied out: block_lock is not held while
     * the keyspace is read. */
    garg *keys = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&block_lock);
    if (queues_ready) {
        swiss_iter it;
        swiss_iter_init(&it, &queues);
        for (void *slot; (slot = swiss_iter_next(&it));) {
            const bqueue *q = *(bqueue *const *)slot;
            if (q->db != db->id) continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                garg *nk = realloc(keys, cap * sizeof(*keys));
                if (!nk) break;
                keys = nk;
            }
            char *p = malloc(q->klen + 1);
            if (!p) break;
            memcpy(p, q->key, q->klen);
            keys[n].p = p;
            keys[n].n = q->klen;
            n++;
        }
        swiss_iter_done(&it);
    }
    pthread_mutex_unlock(&block_lock);
    for (size_t i = 0; i < n; i++) {
        if (all || db_lookup_raw(db, keys[i].p, keys[i].n)) block_signal_key(db, keys[i].p, keys[i].n);
        free(keys[i].p);
    }
    free(keys);
}

typedef struct retry_job {
    uint64_t id;
    int wid;
    int db;
    size_t klen;
    char key[];          /* the signalled key */
} retry_job;

static retry_job *new_job(const waiter *w, int db, const char *key, size_t klen) {
    retry_job *j = malloc(sizeof(*j) + klen + 1);
    if (!j) abort();
    j->id = w->c->id;
    j->wid = w->c->worker_id;
    j->db = db;
    j->klen = klen;
    memcpy(j->key, key, klen);
    j->key[klen] = '\0';
    return j;
}

static void retry_in_worker(void *arg);

/* Retry jobs posted and not yet finished (a served waiter's job posts the
 * next one before it finishes): CLIENT PAUSE's release waits for none to
 * be in flight before it runs the next held client, as Redis serves the
 * clients a command woke before it runs another. */
static long retries_in_flight;

static void retry_post(retry_job *j) {
    __atomic_fetch_add(&retries_in_flight, 1, __ATOMIC_RELAXED);
    session_post(j->wid, retry_in_worker, j);
}

long block_retries_pending(void) { return __atomic_load_n(&retries_in_flight, __ATOMIC_ACQUIRE); }

static void retry_run(void *arg);

static void retry_in_worker(void *arg) {
    retry_run(arg);
    __atomic_fetch_sub(&retries_in_flight, 1, __ATOMIC_RELEASE);
}

/* The turn of the waiter after c's in the queue of the job's key (pass-on
 * mode, c not served): NULL when c is the last. block_lock held. */
static retry_job *pass_turn_locked(bstate *b, const retry_job *j) {
    for (int i = 0; i < b->nkeys; i++) {
        bqueue *q = b->w[i].q;
        if (!q || q->db != j->db || q->klen != j->klen || memcmp(q->key, j->key, j->klen) != 0) continue;
        waiter *next = b->w[i].next;
        return next ? new_job(next, j->db, j->key, j->klen) : NULL;
    }
    return NULL;
}

static void retry_run(void *arg) {
    retry_job *j = arg;
    client *c = session_worker_find_client(j->wid, j->id);
    if (!c || !c->bstate) {
        free(j);
        return;
    }
    bstate *b = c->bstate;
    b->retrying = 1;
    b->reblocked = 0;
    int saved_db = c->db;
    __atomic_store_n(&c->db, b->db, __ATOMIC_RELAXED);
    c->argc = b->argc;
    c->argv = b->argv;
    cmd_execute(c);
    c->argc = 0;
    c->argv = NULL;
    __atomic_store_n(&c->db, saved_db, __ATOMIC_RELAXED);
    b->retrying = 0;
    if (b->reblocked) {
        if (b->pass_on) {
            pthread_mutex_lock(&block_lock);
            retry_job *nj = pass_turn_locked(b, j);
            pthread_mutex_unlock(&block_lock);
            if (nj) retry_post(nj);
        }
        free(j);
        return;
    }
    free(j);
    /* Served: give the next waiter of each key a turn. */
    gdb *db = db_get(b->db);
    int nk = b->nkeys;
    char **keys = malloc(sizeof(char *) * (size_t)nk);
    size_t *lens = malloc(sizeof(size_t) * (size_t)nk);
    int kn = 0;
    pthread_mutex_lock(&block_lock);
    for (int i = 0; i < nk; i++)
        if (b->w[i].q) {
            keys[kn] = strndup(b->w[i].q->key, b->w[i].q->klen);
            lens[kn++] = b->w[i].q->klen;
        }
    pthread_mutex_unlock(&block_lock);
    finish_block(c);
    for (int i = 0; i < kn; i++) {
        block_signal_key(db, keys[i], lens[i]);
        free(keys[i]);
    }
    free(keys);
    free(lens);
    block_handle_ready();
    session_client_resume(c);
}

void block_handle_ready(void) {
    if (!nready) return;
    while (nready) {
        ready_key rk = ready[--nready];
        pthread_mutex_lock(&block_lock);
        qkey k = {rk.db, rk.p, rk.n};
        void *slot = queues_ready ? swiss_find(&queues, qhash(rk.db, rk.p, rk.n), &k) : NULL;
        if (slot) {
            bqueue *q = *(bqueue **)slot;
            if (q->head) {
                retry_job *j = new_job(q->head, rk.db, rk.p, rk.n);
                pthread_mutex_unlock(&block_lock);
                retry_post(j);
                free(rk.p);
                continue;
            }
        }
        pthread_mutex_unlock(&block_lock);
        free(rk.p);
    }
    /* Nothing can be appended while we are here (signals come from commands
     * run on this thread, and retries run later as jobs): release it. */
    free(ready);
    ready = NULL;
    capready = 0;
}

typedef struct unblock_job {
    uint64_t id;
    int wid;
    int with_error;
    struct unblock_job *next; /* block_cluster_cron's list */
} unblock_job;

static void unblock_in_worker(void *arg) {
    unblock_job *j = arg;
    client *c = session_worker_find_client(j->wid, j->id);
    int err = j->with_error;
    free(j);
    if (!c || !c->bstate) return;
    int zero = ((bstate *)c->bstate)->timeout_zero;
    /* Redis 7.0 counts a failed call for either kind of CLIENT UNBLOCK
     * (its clientCommand passes had_errors 1 for both). */
    unblocked_stats(c, 1);
    finish_block(c);
    if (err) reply_error(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    else if (zero) reply_int(c, 0);
    else reply_null_array(c);
    session_client_resume(c);
}

typedef struct find_ctx {
    uint64_t id;
    int wid;
    int found;
} find_ctx;

static void find_blocked(void *arg, client *c) {
    find_ctx *f = arg;
    if (c->id == f->id && (client_flags_peek(c) & CLIENT_BLOCKED)) {
        f->found = 1;
        f->wid = c->worker_id;
    }
}

int block_unblock_client(uint64_t id, int with_error) {
    find_ctx f = {id, 0, 0};
    session_registry_lock();
    session_clients_each(find_blocked, &f);
    session_registry_unlock();
    if (!f.found) return 0;
    unblock_job *j = malloc(sizeof(*j));
    j->id = id;
    j->wid = f.wid;
    j->with_error = with_error;
    session_post(f.wid, unblock_in_worker, j);
    return 1;
}

/* ---- Cluster: a slot that moved away --------------------------------------
 * Once a second (cron) each blocked client is looked at on its worker: when
 * the slot of its keys is now served elsewhere (or the cluster failed), it
 * gets -MOVED (-CLUSTERDOWN) and waits no more, as Redis's
 * clusterRedirectBlockedClientIfNeeded from its clients cron. */

static void redirect_in_worker(void *arg) {
    unblock_job *j = arg;
    client *c = session_worker_find_client(j->wid, j->id);
    free(j);
    if (!c || !c->bstate) return;
    bstate *b = c->bstate;
    if (b->retrying || b->nkeys == 0 || !b->w[0].q) return;
    /* Every key of a blocking command is in one slot: the first says. */
    garg key = {b->w[0].q->key, b->w[0].q->klen};
    const cmd_def *cmd = cmd_lookup(b->argv[0].p, b->argv[0].n);
    int write = cmd && (cmd->flags & CMDF_WRITE);
    if (!cluster_blocked_redirect(c, &key, write)) return;
    finish_block(c);
    session_client_resume(c);
}

static void collect_blocked(void *arg, client *c) {
    if (!(client_flags_peek(c) & CLIENT_BLOCKED)) return;
    unblock_job *j = malloc(sizeof(*j));
    if (!j) return;
    j->id = c->id;
    j->wid = c->worker_id;
    j->with_error = 0;
    j->next = *(unblock_job **)arg;
    *(unblock_job **)arg = j;
}

void block_cluster_cron(void) {
    if (!cluster_enabled() || !block_count()) return;
    unblock_job *list = NULL;
    session_registry_lock();
    session_clients_each(collect_blocked, &list);
    session_registry_unlock();
    while (list) {
        unblock_job *next = list->next;
        session_post(list->wid, redirect_in_worker, list);
        list = next;
    }
}

static void clientUnblockCommand(client *c) {
    long long id;
    int with_error = 0;
    if (arg_ll(c, &c->argv[2], &id) != 0) return;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "error")) with_error = 1;
        else if (!arg_is(&c->argv[3], "timeout")) {
            reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    } else if (c->argc > 4) {
        reply_err_syntax(c);
        return;
    }
    reply_int(c, block_unblock_client((uint64_t)id, with_error));
}

const cmd_handler blocking_handlers[] = {
    {"client|unblock", clientUnblockCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
