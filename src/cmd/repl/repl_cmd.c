/* repl_cmd.c -- the replication commands: REPLICAOF / SLAVEOF, REPLCONF,
 * PSYNC, SYNC, ROLE, WAIT, and INFO's replication section. The work is in
 * primary.c and replica.c; this file parses and speaks Redis's replies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/repl/repl.h"
#include "db/db.h"
#include "session/reply.h"
#include "util/strutil.h"

static void replicaofCommand(client *c) {
    if (strcmp(repl_failover_state(), "no-failover")) {
        reply_error(c, "ERR REPLICAOF not allowed while failing over.");
        return;
    }
    if (arg_is(&c->argv[1], "no") && arg_is(&c->argv[2], "one")) {
        char err[128];
        repl_replicaof(NULL, 0, err, sizeof(err));
        reply_ok(c);
        return;
    }
    long long port;
    if (!str_to_ll(c->argv[2].p, c->argv[2].n, &port) || port < 0 || port > 65535) {
        reply_error(c, "ERR Invalid master port");
        return;
    }
    char err[128];
    int rc = repl_replicaof(c->argv[1].p, (int)port, err, sizeof(err));
    if (rc < 0) reply_errorf(c, "ERR %s", err);
    else if (rc == 1) reply_simple(c, "OK Already connected to specified master");
    else reply_ok(c);
}

static void replconfCommand(client *c) { repl_replconf(c); }

/* FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds] */
static void failoverCommand(client *c) {
    const char *host = NULL;
    long long port = 0, timeout = 0;
    int force = 0, abort_ = 0;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "to") && i + 2 < c->argc && !host) {
            host = c->argv[i + 1].p;
            if (!str_to_ll(c->argv[i + 2].p, c->argv[i + 2].n, &port) || port < 0 || port > 65535) {
                reply_error(c, "ERR Invalid port");
                return;
            }
            i += 2;
        } else if (arg_is(&c->argv[i], "force") && !force) {
            force = 1;
        } else if (arg_is(&c->argv[i], "abort") && !abort_) {
            abort_ = 1;
        } else if (arg_is(&c->argv[i], "timeout") && i + 1 < c->argc && !timeout) {
            if (!str_to_ll(c->argv[i + 1].p, c->argv[i + 1].n, &timeout) || timeout <= 0) {
                reply_error(c, "ERR FAILOVER timeout must be greater than 0");
                return;
            }
            i++;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (abort_) {
        if (host || force || timeout) {
            reply_error(c, "ERR FAILOVER abort should be used by itself");
            return;
        }
        if (repl_failover_abort() != 0) reply_error(c, "ERR No failover in progress.");
        else reply_ok(c);
        return;
    }
    if (force && (!timeout || !host)) {
        reply_error(c, "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
        return;
    }
    if (repl_is_replica()) {
        reply_error(c, "ERR FAILOVER is not valid when server is a replica.");
        return;
    }
    char err[128];
    if (repl_failover_start(host, (int)port, timeout, force, err, sizeof(err)) != 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    reply_ok(c);
}

static void psyncCommand(client *c) { repl_psync(c, 1); }

static void syncCommand(client *c) { repl_psync(c, 0); }

static void role_replica_cb(void *arg, const char *ip, int port, uint64_t ack) {
    client *c = arg;
    char p[16], a[32];
    snprintf(p, sizeof(p), "%d", port);
    snprintf(a, sizeof(a), "%llu", (unsigned long long)ack);
    reply_array(c, 3);
    reply_bulk_cstr(c, ip);
    reply_bulk_cstr(c, p);
    reply_bulk_cstr(c, a);
}

static void roleCommand(client *c) {
    if (repl_is_replica()) {
        repl_role_replica(c);
        return;
    }
    reply_array(c, 3);
    reply_bulk_cstr(c, "master");
    reply_int(c, (long long)repl_offset());
    size_t h = reply_defer(c);
    reply_defer_array(c, h, repl_replicas_each(role_replica_cb, c));
}

/* WAIT numreplicas timeout: the replicas that acknowledged the stream up
 * to now, waiting up to timeout ms (0: forever) for numreplicas. */
static void waitCommand(client *c) {
    long long n, ms;
    if (arg_ll(c, &c->argv[1], &n) != 0) return;
    if (!str_to_ll(c->argv[2].p, c->argv[2].n, &ms)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return;
    }
    if (repl_is_replica()) {
        reply_error(c, "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if "
                       "a replica is configured to be writable (which is not the default) writes to replicas are "
                       "just local and are not propagated.");
        return;
    }
    uint64_t off = repl_offset();
    int acked = repl_acked(off);
    if (acked >= n || (client_flags_peek(c) & (CLIENT_MULTI | CLIENT_IN_EXEC))) {
        reply_int(c, acked);
        return;
    }
    repl_wait(c, (int)n, off, ms ? db_now_ms() + ms : 0);
}

void repl_info(strbuf *b) {
    int replica = repl_is_replica();
    strbuf_addf(b, "# Replication\r\nrole:%s\r\n", replica ? "slave" : "master");
    if (replica) repl_info_replica(b);
    repl_info_replicas(b);
    repl_info_offsets(b);
}

void repl_family_init(void) {
    repl_primary_init();
    repl_replica_init();
}

void repl_family_shutdown(void) {
    repl_replica_shutdown();
    repl_primary_shutdown();
}

const cmd_handler repl_handlers[] = {
    {"replicaof", replicaofCommand, CMD_LOCK_NONE},
    {"slaveof", replicaofCommand, CMD_LOCK_NONE},
    {"replconf", replconfCommand, CMD_LOCK_NONE},
    {"psync", psyncCommand, CMD_LOCK_NONE},
    {"sync", syncCommand, CMD_LOCK_NONE},
    {"role", roleCommand, CMD_LOCK_NONE},
    {"wait", waitCommand, CMD_LOCK_NONE},
    {"failover", failoverCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
