/* shutdown.c -- the grace period of a shutdown (Redis 7.0's
 * shutdown-timeout): before the server exits, its replicas catch up with
 * the stream, so that the writes it acknowledged outlive it.
 *
 * While some replica's acknowledged offset is behind the stream, writes
 * are paused (SESSION_PAUSE_BY_SHUTDOWN), the replicas are asked for an
 * ACK, and the shutdown waits until every one has acknowledged the whole
 * stream, shutdown-timeout seconds have passed (it then goes on, naming the
 * replicas that lag) or SHUTDOWN ABORT arrives (writes resume, the server
 * keeps running). Invariant: state is GRACE_WAITING or GRACE_ABORTED only
 * inside repl_shutdown_grace, GRACE_FINISHING from its successful end until
 * the shutdown is over or repl_shutdown_grace_end, and the pause is in force
 * exactly while state is not GRACE_OFF. The wait ends by one compare-and-swap
 * from GRACE_WAITING, to GRACE_FINISHING by the waiting thread or to
 * GRACE_ABORTED by SHUTDOWN ABORT: an abort that was answered OK stops the
 * shutdown even if the replicas catch up right after it.
 *
 * A SHUTDOWN that arrives while another one waits or finishes joins it, as
 * Redis blocks every SHUTDOWN client of an initiated shutdown: the client
 * is blocked (CLIENT_BLOCKED, no block state, as WAIT's) until the state
 * goes back to GRACE_OFF -- the shutdown was aborted or failed -- and then
 * gets the error; if the server exits, its connection closes with it. The
 * joiners' list is taken under jmu together with the move to GRACE_OFF,
 * so none joins a shutdown that is already over.
 *
 * Before it, a shutdown asked for by a signal may wait too: Redis acts on
 * the signal from its cron, so while DEBUG PAUSE-CRON holds the cron the
 * shutdown is pending, and SHUTDOWN ABORT drops it. */
#include "cmd/repl/repl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "base/config.h"
#include "base/log.h"
#include "session/reply.h"
#include "session/session.h"
#include "util/monotime.h"

enum { GRACE_OFF, GRACE_WAITING, GRACE_ABORTED, GRACE_FINISHING };

static int timeout_s = 10; /* shutdown-timeout */
static int state;          /* GRACE_*: atomics */
static int64_t grace_until; /* atomics: the wait's deadline (monotime_ms), 0: no wait */
/* A signal's shutdown: SIG_PENDING from the signal until the cron may act
 * (repl_shutdown_signal_wait), SIG_RUNNING while it runs; SHUTDOWN ABORT
 * takes it back to SIG_NONE. atomics (sig_word, below) */
enum { SIG_NONE, SIG_PENDING, SIG_RUNNING };
static unsigned sig_word;

/* A SHUTDOWN client waiting for the outcome of another's shutdown. */
typedef struct joiner {
    uint64_t id;
    int wid;
    struct joiner *next;
} joiner;
static pthread_mutex_t jmu = PTHREAD_MUTEX_INITIALIZER;
static joiner *joiners; /* jmu */

/* On the joiner's worker: the shutdown it waited for did not happen. */
static void joiner_answer(void *arg) {
    joiner *j = arg;
    client *c = session_worker_find_client(j->wid, j->id);
    if (c && (client_flags_peek(c) & CLIENT_BLOCKED) && !c->bstate) {
        client_flag_off(c, CLIENT_BLOCKED);
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        session_client_resume(c);
    }
    free(j);
}

/* The move to GRACE_OFF: the joiners are answered. */
static void grace_off(void) {
    pthread_mutex_lock(&jmu);
    __atomic_store_n(&state, GRACE_OFF, __ATOMIC_RELEASE);
    joiner *list = joiners;
    joiners = NULL;
    pthread_mutex_unlock(&jmu);
    while (list) {
        joiner *next = list->next;
        session_post(list->wid, joiner_answer, list);
        list = next;
    }
}

int repl_shutdown_join(client *c) {
    joiner *j = malloc(sizeof(*j));
    if (!j) return 0;
    j->id = c->id;
    j->wid = c->worker_id;
    pthread_mutex_lock(&jmu);
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == GRACE_OFF) {
        pthread_mutex_unlock(&jmu);
        free(j);
        return 0;
    }
    client_flag_on(c, CLIENT_BLOCKED);
    j->next = joiners;
    joiners = j;
    pthread_mutex_unlock(&jmu);
    return 1;
}

void repl_shutdown_config_register(void) {
    if (config_bind_int("shutdown-timeout", &timeout_s)) abort(); /* the table lost a row */
}

typedef struct lag {
    uint64_t off;
    int all, behind, log;
} lag;

static void lag_one(void *arg, const char *ip, int port, uint64_t ack) {
    lag *l = arg;
    l->all++;
    if (ack >= l->off) return;
    l->behind++;
    if (l->log)
        log_warn("Lagging replica %s:%d reported offset %llu behind master.", ip, port,
                 (unsigned long long)(l->off - ack));
}

/* Replicas whose acknowledged offset is behind the stream (logged). */
static int behind(int log) {
    lag l = {repl_offset(), 0, 0, log};
    repl_replicas_each(lag_one, &l);
    return l.behind;
}

void repl_shutdown_report(void) {
    lag l = {repl_offset(), 0, 0, 1};
    repl_replicas_each(lag_one, &l);
    if (l.all) log_notice("%d of %d replicas are in sync when shutting down.", l.all - l.behind, l.all);
}

int repl_shutdown_grace(void (*pump)(void)) {
    int t = __atomic_load_n(&timeout_s, __ATOMIC_RELAXED);
    if (t <= 0 || !behind(0)) return 0;
    int off = GRACE_OFF;
    if (!__atomic_compare_exchange_n(&state, &off, GRACE_WAITING, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return -1; /* another shutdown waits, or is finishing */
    session_pause(SESSION_PAUSE_BY_SHUTDOWN, INT64_MAX, SESSION_PAUSE_WRITE);
    repl_request_acks();
    log_notice("Waiting for replicas before shutting down.");
    int64_t deadline = monotime_ms() + (int64_t)t * 1000;
    __atomic_store_n(&grace_until, deadline, __ATOMIC_RELEASE);
    for (;;) {
        if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == GRACE_ABORTED) {
            log_warn("Shutdown manually aborted.");
            __atomic_store_n(&grace_until, 0, __ATOMIC_RELEASE);
            session_unpause(SESSION_PAUSE_BY_SHUTDOWN);
            grace_off();
            return -1;
        }
        /* Past the deadline, repl_shutdown_report names the laggards. */
        if (!behind(0) || monotime_ms() >= deadline) {
            int waiting = GRACE_WAITING;
            if (__atomic_compare_exchange_n(&state, &waiting, GRACE_FINISHING, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                return 0;
            continue; /* SHUTDOWN ABORT came first */
        }
        /* The calling worker's other clients are served meanwhile (reads;
         * writes wait for the pause), as Redis serves them while its
         * SHUTDOWN client is blocked. */
        if (pump) pump();
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

long long repl_shutdown_in_ms(void) {
    int64_t until = __atomic_load_n(&grace_until, __ATOMIC_ACQUIRE);
    if (!until) return -1;
    int64_t left = until - monotime_ms();
    return left > 0 ? left : 0;
}

void repl_shutdown_grace_end(void) {
    __atomic_store_n(&grace_until, 0, __ATOMIC_RELEASE);
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == GRACE_OFF) return;
    session_unpause(SESSION_PAUSE_BY_SHUTDOWN);
    grace_off();
}

/* sig_word: a signal's shutdown, its state in the low two bits and, above
 * them, the number of signals that began one (so a thread woken late
 * cannot take over a newer signal's shutdown). */
#define SIG_STATE(w) ((w) & 3)
#define SIG_WITH(w, st) (((w) & ~3u) | (st))

int repl_shutdown_abort(void) {
    int waiting = GRACE_WAITING;
    if (!__atomic_compare_exchange_n(&state, &waiting, GRACE_ABORTED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* A signal's shutdown not begun yet: dropped. */
        unsigned w = __atomic_load_n(&sig_word, __ATOMIC_ACQUIRE);
        if (SIG_STATE(w) != SIG_PENDING ||
            !__atomic_compare_exchange_n(&sig_word, &w, SIG_WITH(w, SIG_NONE), 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return -1;
        log_notice("Shutdown manually aborted.");
        return 0;
    }
    /* A signal's shutdown waiting for its replicas is over. */
    unsigned w = __atomic_load_n(&sig_word, __ATOMIC_ACQUIRE);
    if (SIG_STATE(w) == SIG_RUNNING)
        __atomic_compare_exchange_n(&sig_word, &w, SIG_WITH(w, SIG_NONE), 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    return 0;
}

unsigned repl_shutdown_signal_begin(void) {
    unsigned w = __atomic_load_n(&sig_word, __ATOMIC_ACQUIRE);
    for (;;) {
        if (SIG_STATE(w) != SIG_NONE) return 0;
        unsigned n = ((w & ~3u) + 4) | SIG_PENDING;
        if (__atomic_compare_exchange_n(&sig_word, &w, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return n;
    }
}

int repl_shutdown_signal_wait(unsigned ticket, int (*held)(void)) {
    while (__atomic_load_n(&sig_word, __ATOMIC_ACQUIRE) == ticket && held()) {
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    unsigned w = ticket;
    return __atomic_compare_exchange_n(&sig_word, &w, SIG_WITH(ticket, SIG_RUNNING), 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED)
               ? 0
               : -1;
}

void repl_shutdown_signal_end(unsigned ticket) {
    unsigned w = SIG_WITH(ticket, SIG_RUNNING);
    if (!__atomic_compare_exchange_n(&sig_word, &w, SIG_WITH(ticket, SIG_NONE), 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED)) {
        w = ticket; /* never went on (the thread could not start) */
        __atomic_compare_exchange_n(&sig_word, &w, SIG_WITH(ticket, SIG_NONE), 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    }
}

int repl_shutdown_signal_active(void) { return SIG_STATE(__atomic_load_n(&sig_word, __ATOMIC_ACQUIRE)) != SIG_NONE; }
