/* reclaim.c -- big mappings unmapped by a background thread (see reclaim.h).
 *
 * A handed-over mapping starts with a link {next, len}; the list is LIFO
 * under `mu`. The thread takes the whole list at once and unmaps it
 * outside the lock. `pending` counts the bytes handed over and not yet
 * unmapped; reclaim_drain() waits on `done` for it to reach zero. The
 * thread starts on first use (pthread_once) and belongs to the process
 * that started it: a forked child (BGSAVE) unmaps in place. */
#include "mem/reclaim.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef struct rlink {
    struct rlink *next;
    size_t len;
} rlink;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static rlink *head;
static size_t pending, handed;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pid_t owner; /* 0: no thread */
#define RECLAIM_PIECE ((size_t)512 << 10)

static void *run(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-reclaim");
    /* Below every ordinary thread: a worker that wakes preempts it. */
    struct sched_param sp = {0};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!head) pthread_cond_wait(&work, &mu);
        rlink *l = head;
        head = NULL;
        pthread_mutex_unlock(&mu);
        size_t freed = 0;
        while (l) {
            rlink *next = l->next;
            size_t len = l->len;
            /* In pieces, with a short sleep after each: SCHED_IDLE is a
             * small weight, not a strict priority, so on a busy CPU the
             * scheduler still picks this thread over a runnable worker now
             * and then (a worker waited 6 ms behind it, the first DEL of a
             * 10M-field hash at nice 19 beside a nice-0 neighbour). Off the
             * run queue between pieces, it takes the CPU from a worker for
             * one piece at most (~50 us of page freeing). */
            for (size_t off = 0; off < len; off += RECLAIM_PIECE) {
                munmap((char *)l + off, len - off < RECLAIM_PIECE ? len - off : RECLAIM_PIECE);
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
            }
            freed += len;
            l = next;
        }
        pthread_mutex_lock(&mu);
        pending -= freed;
        if (!pending) pthread_cond_broadcast(&done);
    }
    return NULL;
}

static void start(void) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, run, NULL) == 0) owner = getpid();
    pthread_attr_destroy(&a);
}

void reclaim_unmap(void *p, size_t len) {
    if (!p) return;
    if (len >= RECLAIM_MIN) {
        pthread_once(&once, start);
        if (owner && owner == getpid()) {
            rlink *l = p;
            l->len = len;
            pthread_mutex_lock(&mu);
            l->next = head;
            head = l;
            pending += len;
            handed += len;
            pthread_cond_signal(&work);
            pthread_mutex_unlock(&mu);
            return;
        }
    }
    munmap(p, len);
}

size_t reclaim_pending_bytes(void) {
    pthread_mutex_lock(&mu);
    size_t n = pending;
    pthread_mutex_unlock(&mu);
    return n;
}

size_t reclaim_handed_bytes(void) {
    pthread_mutex_lock(&mu);
    size_t n = handed;
    pthread_mutex_unlock(&mu);
    return n;
}

void reclaim_drain(void) {
    pthread_mutex_lock(&mu);
    while (pending) pthread_cond_wait(&done, &mu);
    pthread_mutex_unlock(&mu);
}
