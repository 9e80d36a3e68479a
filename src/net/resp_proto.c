/* resp_proto.c -- RESP2/RESP3 as a protocol module (proto.h): requests in
 * multibulk or inline form, parsed in place by resp.c, each run through
 * cmd_execute on the connection's client. A protocol error is answered
 * with Redis's "-ERR Protocol error: ..." and the connection closes after
 * the reply, as Redis does. */
#include <stdio.h>
#include <stdlib.h>

#include "base/config.h"
#include "cmd/command.h"
#include "cmd/server/acl.h"
#include "db/db.h"
#include "net/internal.h"
#include "net/proto.h"
#include "net/resp.h"
#include "util/resppeek.h"
#include "session/reply.h"

static const char *resp_refusal(int why) {
    if (why == NET_REFUSE_MAXCLIENTS) return "-ERR max number of clients reached\r\n";
    return "-DENIED Redis is running in protected mode because protected mode is enabled and no password "
           "is set for the default user. In this mode connections are only accepted from the loopback "
           "interface. If you want to connect from external computers to Redis you may adopt one of the "
           "following solutions: 1) Just disable protected mode sending the command 'CONFIG SET "
           "protected-mode no' from the loopback interface by connecting to Redis from the same host the "
           "server is running, however MAKE SURE Redis is not publicly accessible from internet if you do "
           "so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the "
           "protected mode by editing the Redis configuration file, and setting the protected mode option "
           "to 'no', and then restarting the server. 3) If you started the server manually just for "
           "testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication "
           "password for the default user. NOTE: You only need to do one of the above things in order for "
           "the server to start accepting connections from the outside.\r\n";
}

static int resp_open(conn *k) {
    resp_parser *p = malloc(sizeof(*p));
    if (!p) return -1;
    resp_parser_init(p);
    k->pstate = p;
    return 0;
}

static void resp_close(conn *k) {
    resp_parser *p = k->pstate;
    if (!p) return;
    resp_parser_free(p);
    free(p);
    k->pstate = NULL;
}

/* Pipelined requests (RESP_PREFETCH_BATCH at a time, when two or more of
 * them name a key, in a database large enough for it to pay) have their
 * keys' index groups and entries prefetched before the first of them runs,
 * so the batch's cache misses overlap. The requests are only read ahead:
 * each still runs in order, parsed when its turn comes. */
#define RESP_PREFETCH_BATCH 16
#define RESP_PREFETCH_REST 8

static void resp_prefetch(conn *k, resp_parser *p, size_t start, size_t *upto) {
    const char *key[RESP_PREFETCH_BATCH];
    size_t len[RESP_PREFETCH_BATCH], span;
    if (p->peek_rest || !db_prefetch_wanted(k->c.db)) {
        if (p->peek_rest) p->peek_rest--;
        *upto = k->qlen; /* not for the rest of this read */
        return;
    }
    int n = resp_peek_keys(k->qbuf + start, k->qlen - start, key, len, RESP_PREFETCH_BATCH, &span);
    *upto = start + (span ? span : k->qlen - start);
    /* One request per read, or one key over and over (a pipeline on one
     * list): nothing to overlap. Look again some reads later. */
    if (db_prefetch_keys(k->c.db, key, len, n) < 2) p->peek_rest = RESP_PREFETCH_REST;
}

static size_t resp_process(conn *k) {
    client *c = &k->c;
    resp_parser *p = k->pstate;
    size_t start = 0, prefetched = 0;
    while (!(client_flags_peek(c) & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_BLOCKED | CLIENT_STREAMING)) &&
           start < k->qlen && !k->paused && !k->turn_over) {
        if (start >= prefetched && p->type == 0) resp_prefetch(k, p, start, &prefetched);
        size_t used;
        int argc;
        garg *argv;
        const char *err = NULL;
        resp_limits lim = {cfg.proto_max_bulk_len, !acl_auth_required(c)};
        int r = resp_parse(p, k->qbuf + start, k->qlen - start, &lim, &used, &argc, &argv, &err);
        if (r == RESP_NEED_MORE) break;
        if (r == RESP_ERROR) {
            conn_protocol_error(k, err);
            break;
        }
        if (!conn_may_run(k, argc, argv)) {
            /* Parse again later from the same place: do not consume. */
            resp_parser_free(p);
            resp_parser_init(p);
            break;
        }
        c->argc = argc;
        c->argv = argv;
        if (argc) cmd_execute(c);
        c->argc = 0;
        c->argv = NULL;
        resp_trim(p);
        start += used;
        conn_ran(k);
    }
    /* Parser offsets are relative to the command start, which the
     * transport moves to 0 when it drops the consumed bytes. */
    return start;
}

static size_t resp_hint(const conn *k) { return k->pstate ? resp_pending_hint(k->pstate) : 0; }

static void resp_partial_of(const conn *k, size_t *parsed, size_t *argv_len) {
    *parsed = *argv_len = 0;
    if (k->pstate) resp_partial(k->pstate, parsed, argv_len);
}

const net_proto resp_proto = {
    .name = "resp",
    .refusal = resp_refusal,
    .open = resp_open,
    .close = resp_close,
    .process = resp_process,
    .pending_hint = resp_hint,
    .partial = resp_partial_of,
};
