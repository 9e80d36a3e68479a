/* lazyfree.c -- the background freeing thread (see lazyfree.h).
 *
 * A FIFO of jobs (one detached value, or one detached shard index with its
 * entries and what they live in) under one mutex; the thread is started on the first job and
 * sleeps on a condition variable when the queue is empty. Invariant:
 * pending counts the objects (keys) of the jobs queued or being freed, so
 * it drops to zero exactly when the queue is empty and the thread idle.
 * Freeing touches only the job's own memory (an index's db_space goes with
 * the job) and the allocators below it (malloc, the small-object
 * arena and the object store, each with its own lock), never a structure a
 * worker reads. */
#include "db/lazyfree.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "base/log.h"
#include "ds/stream.h"

typedef struct lfjob {
    struct lfjob *next;
    gobj val;         /* with val_set, or */
    int val_set;
    swiss keys;       /* with keys_set */
    int keys_set;
    dbentry **vol;
    uint64_t objects;
} lfjob;

static pthread_mutex_t lf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lf_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t lf_idle = PTHREAD_COND_INITIALIZER;
static lfjob *lf_head, *lf_tail;
static int lf_started, lf_busy;
static uint64_t lf_pending, lf_freed; /* atomics */

/* Redis frees in the background when the "free effort" passes 64: the
 * elements of a table or tree encoding, the nodes of a quicklist (about
 * 128 small elements each), a stream's nodes (our runs) plus its groups
 * times one more than the first group's pending entries (Redis's estimate
 * for all of them); a packed encoding is one allocation. */
#define LAZYFREE_THRESHOLD 64

int lazyfree_worth(const dbentry *e) {
    switch (e->val.enc) {
    case ENC_HASHTABLE:
    case ENC_SKIPLIST: return e->val.type != OBJ_STRING && obj_len(&e->val) > LAZYFREE_THRESHOLD;
    case ENC_QUICKLIST: return obj_len(&e->val) / 128 > LAZYFREE_THRESHOLD;
    case ENC_STREAM: {
        const gstream *s = e->val.u.p;
        size_t effort = stream_nruns(s);
        if (s->ngroups) effort += s->ngroups * (1 + s->groups[0]->pel.n);
        return effort > LAZYFREE_THRESHOLD;
    }
    default: return 0;
    }
}

/* The thread frees an index's entries in pieces of this many, off the run
 * queue for a moment after each (see lf_main). */
#define LAZYFREE_PIECE 4096

static void rest(void) {
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

/* Frees j's memory; paced: in pieces with a rest after each (the thread;
 * a caller freeing inline does not rest). */
static void job_run(lfjob *j, int paced) {
    if (j->val_set) obj_free(&j->val);
    if (j->keys_set) {
        if (paced) {
            swiss_iter it;
            swiss_iter_init(&it, &j->keys);
            void *slot;
            unsigned n = 0;
            while ((slot = swiss_iter_next(&it))) {
                db_index_free_entry(&j->keys, slot);
                if (++n % LAZYFREE_PIECE == 0) rest();
            }
            swiss_iter_done(&it);
            db_index_free_space(&j->keys);
        } else {
            db_index_free_entries(&j->keys);
        }
        swiss_free(&j->keys);
    }
    free(j->vol);
}

static void *lf_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-lazyfree");
    /* Below every ordinary thread (as the reclaim thread, mem/reclaim.c):
     * a worker that wakes with a request takes the CPU back at once, also
     * when both share one CPU; before, a worker waited 5-15 ms behind a
     * FLUSHALL ASYNC of 10M keys in one INFO. SCHED_IDLE is a small
     * weight, not a strict priority: the rests between pieces keep the
     * scheduler from choosing this thread over a runnable worker for
     * long. On a CPU that is never idle the freeing goes slowly; the
     * memory stays counted (lazyfree_pending_objects) until it is done. */
    struct sched_param sp = {0};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    pthread_mutex_lock(&lf_lock);
    for (;;) {
        while (!lf_head) pthread_cond_wait(&lf_cond, &lf_lock);
        lfjob *j = lf_head;
        lf_head = j->next;
        if (!lf_head) lf_tail = NULL;
        lf_busy = 1;
        pthread_mutex_unlock(&lf_lock);
        job_run(j, 1);
        __atomic_add_fetch(&lf_freed, j->objects, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&lf_pending, j->objects, __ATOMIC_RELAXED);
        free(j);
        pthread_mutex_lock(&lf_lock);
        lf_busy = 0;
        if (!lf_head) pthread_cond_broadcast(&lf_idle);
    }
    return NULL;
}

/* Queue j; without a thread (it could not be started) free it here. */
static void push(lfjob *j) {
    __atomic_add_fetch(&lf_pending, j->objects, __ATOMIC_RELAXED);
    pthread_mutex_lock(&lf_lock);
    if (!lf_started) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &a, lf_main, NULL) == 0) {
            lf_started = 1;
        } else {
            log_warn("lazyfree: cannot start the background thread; freeing inline");
            lf_started = -1;
        }
        pthread_attr_destroy(&a);
    }
    if (lf_started < 0) {
        pthread_mutex_unlock(&lf_lock);
        job_run(j, 0);
        __atomic_add_fetch(&lf_freed, j->objects, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&lf_pending, j->objects, __ATOMIC_RELAXED);
        free(j);
        return;
    }
    j->next = NULL;
    if (lf_tail) lf_tail->next = j;
    else lf_head = j;
    lf_tail = j;
    pthread_cond_signal(&lf_cond);
    pthread_mutex_unlock(&lf_lock);
}

void lazyfree_value(const gobj *v) {
    lfjob *j = calloc(1, sizeof(*j));
    if (!j) {
        gobj tmp = *v;
        obj_free(&tmp); /* no memory for the job: free it now */
        return;
    }
    j->val = *v;
    j->val_set = 1;
    j->objects = 1;
    push(j);
}

void lazyfree_index(swiss *keys, dbentry **vol) {
    lfjob *j = calloc(1, sizeof(*j));
    if (!j) {
        lfjob tmp = {0};
        tmp.keys = *keys;
        tmp.keys_set = 1;
        tmp.vol = vol;
        job_run(&tmp, 0);
        return;
    }
    j->keys = *keys;
    j->keys_set = 1;
    j->vol = vol;
    j->objects = swiss_size(keys);
    push(j);
}

uint64_t lazyfree_pending(void) { return __atomic_load_n(&lf_pending, __ATOMIC_RELAXED); }
uint64_t lazyfree_freed(void) { return __atomic_load_n(&lf_freed, __ATOMIC_RELAXED); }

void lazyfree_stats_reset(void) { __atomic_store_n(&lf_freed, 0, __ATOMIC_RELAXED); }

void lazyfree_drain(void) {
    pthread_mutex_lock(&lf_lock);
    while (lf_started > 0 && (lf_head || lf_busy)) pthread_cond_wait(&lf_idle, &lf_lock);
    pthread_mutex_unlock(&lf_lock);
}
