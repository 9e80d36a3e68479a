/* failover.c -- FAILOVER, Redis 7.0's coordinated failover of a primary to
 * one of its replicas. The cron (primary.c) calls repl_failover_step ten
 * times a second; the replica side (replica.c) reports how its PSYNC ...
 * FAILOVER went with repl_failover_done. */
#include "cmd/repl/repl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <strings.h>

#include "base/log.h"
#include "session/session.h"
#include "util/monotime.h"

/* Redis 7.0's coordinated failover: writes are paused, the target replica
 * (named, or the first one to catch up) acknowledges the whole stream,
 * then this node becomes its replica with PSYNC ... FAILOVER, which makes
 * the target promote itself first; writes resume once the link is made.
 * A timeout aborts (or, with FORCE, goes ahead anyway). fo_* under fmu,
 * which is never held while primary.c's lock is taken the other way: the
 * links are asked through repl_failover_target and repl_replica_count. */
enum { FO_NONE, FO_WAIT_SYNC, FO_IN_PROGRESS };
static pthread_mutex_t fmu = PTHREAD_MUTEX_INITIALIZER;
static int fo_state;
static char fo_host[64];
static int fo_port;            /* 0: any replica that catches up */
/* The deadline is a span, not a date: monotime_ms, which a step of the
 * system clock does not move. 0: none. */
static int64_t fo_deadline;
static int fo_force;

static const char *fo_name(int s) {
    return s == FO_WAIT_SYNC ? "waiting-for-sync" : s == FO_IN_PROGRESS ? "failover-in-progress" : "no-failover";
}

int repl_failover_start(const char *host, int port, long long timeout_ms, int force, char *err, size_t errlen) {
    pthread_mutex_lock(&fmu);
    int rc = -1;
    if (fo_state != FO_NONE) {
        snprintf(err, errlen, "FAILOVER already in progress.");
        goto out;
    }
    if (!repl_replica_count()) {
        snprintf(err, errlen, "FAILOVER requires connected replicas.");
        goto out;
    }
    if (host) {
        if (!repl_failover_target(host, port, 0, NULL, 0, NULL)) {
            snprintf(err, errlen, "FAILOVER target HOST and PORT is not a replica.");
            goto out;
        }
        snprintf(fo_host, sizeof(fo_host), "%s", host);
    }
    fo_port = host ? port : 0;
    fo_force = force;
    fo_deadline = timeout_ms > 0 ? monotime_ms() + timeout_ms : 0;
    fo_state = FO_WAIT_SYNC;
    rc = 0;
    if (host) log_notice("FAILOVER requested to %s:%d.", host, port);
    else log_notice("FAILOVER requested to any replica.");
out:
    pthread_mutex_unlock(&fmu);
    if (rc == 0) {
        session_pause(SESSION_PAUSE_BY_FAILOVER, INT64_MAX, SESSION_PAUSE_WRITE);
        repl_request_acks();
    }
    return rc;
}

static void fo_abort_locked(const char *why) {
    if (fo_port) log_notice("FAILOVER to %s:%d aborted: %s", fo_host, fo_port, why);
    else log_notice("FAILOVER to any replica aborted: %s", why);
    fo_state = FO_NONE;
    session_unpause(SESSION_PAUSE_BY_FAILOVER);
}

int repl_failover_abort(void) {
    pthread_mutex_lock(&fmu);
    int s = fo_state;
    if (s == FO_WAIT_SYNC) fo_abort_locked("Failover manually aborted");
    pthread_mutex_unlock(&fmu);
    if (s == FO_IN_PROGRESS) {
        char err[64];
        repl_replicaof(NULL, 0, err, sizeof(err));
        repl_failover_done(0, "Failover manually aborted");
    }
    return s == FO_NONE ? -1 : 0;
}

void repl_failover_done(int ok, const char *why) {
    pthread_mutex_lock(&fmu);
    if (fo_state != FO_NONE) {
        if (ok) {
            log_notice("Failover target %s:%d is now the primary", fo_host, fo_port);
            fo_state = FO_NONE;
            session_unpause(SESSION_PAUSE_BY_FAILOVER);
        } else {
            fo_abort_locked(why);
        }
    }
    pthread_mutex_unlock(&fmu);
}

void repl_failover_step(void) {
    char host[64];
    int port = 0;
    pthread_mutex_lock(&fmu);
    if (fo_state != FO_WAIT_SYNC) {
        pthread_mutex_unlock(&fmu);
        return;
    }
    if (!repl_failover_target(fo_port ? fo_host : NULL, fo_port, 1, host, sizeof(host), &port)) port = 0;
    int timed_out = fo_deadline && monotime_ms() >= fo_deadline;
    int forced = 0;
    if (!port && timed_out && fo_force && fo_port) {
        snprintf(host, sizeof(host), "%s", fo_host);
        port = fo_port;
        forced = 1;
    }
    if (!port && timed_out) {
        fo_abort_locked("Replica never caught up before timeout");
    } else if (port) {
        snprintf(fo_host, sizeof(fo_host), "%s", host);
        fo_port = port;
        fo_state = FO_IN_PROGRESS;
        if (forced) log_notice("FAILOVER to %s:%d time out exceeded, failing over.", host, port);
        else log_notice("Failover target %s:%d is synced, failing over.", host, port);
    }
    pthread_mutex_unlock(&fmu);
    if (port) {
        char err[128];
        if (repl_replicaof_failover(host, port, err, sizeof(err)) != 0) {
            pthread_mutex_lock(&fmu);
            fo_abort_locked(err);
            pthread_mutex_unlock(&fmu);
        }
    } else {
        repl_request_acks();
    }
}

const char *repl_failover_state(void) {
    pthread_mutex_lock(&fmu);
    const char *s = fo_name(fo_state);
    pthread_mutex_unlock(&fmu);
    return s;
}
