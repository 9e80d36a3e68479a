/* handshake.c -- REPLCONF before a replica's PSYNC: what it says of
 * itself (listening-port, ip-address, capa) and of the sync it wants
 * (rdb-only, rdb-filter-only), kept for the link (handshake.h). The ACKs
 * of a linked replica arrive on its link thread (primary.c), not here. */
#include "cmd/repl/handshake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/command.h"
#include "cmd/repl/repl.h"
#include "session/reply.h"

void repl_client_gone(client *c) {
    free(c->rstate);
    c->rstate = NULL;
}

repl_hs *repl_hs_of(client *c) {
    if (!c->rstate) c->rstate = calloc(1, sizeof(repl_hs));
    return c->rstate;
}

int repl_replconf(client *c) {
    if ((c->argc % 2) == 0) {
        reply_err_syntax(c);
        return 0;
    }
    repl_hs *h = repl_hs_of(c);
    if (!h) {
        reply_error(c, "ERR out of memory");
        return 0;
    }
    for (int i = 1; i < c->argc; i += 2) {
        const garg *k = &c->argv[i], *v = &c->argv[i + 1];
        if (arg_is(k, "listening-port")) {
            long long port;
            if (arg_ll(c, v, &port) != 0) return 0;
            h->port = (int)port;
        } else if (arg_is(k, "ip-address")) {
            snprintf(h->ip, sizeof(h->ip), "%.*s", (int)v->n, v->p);
        } else if (arg_is(k, "capa")) {
            if (arg_is(v, "eof")) h->capa_eof = 1;
            else if (arg_is(v, "psync2")) h->capa_psync2 = 1;
        } else if (arg_is(k, "ack") || arg_is(k, "getack") || arg_is(k, "fack")) {
            /* On a replica's own link these arrive on the link thread; on
             * a client connection they are ignored, as Redis. */
            return 0;
        } else if (arg_is(k, "rdb-only")) {
            long long v01;
            if (arg_ll(c, v, &v01) != 0) return 0;
            if (v01 < 0 || v01 > 1) {
                reply_error(c, "ERR value is out of range, value must between 0 and 1");
                return 0;
            }
            h->rdb_only = (int)v01;
        } else if (arg_is(k, "rdb-filter-only")) {
            /* Space-separated include filters; "functions" is the only one
             * Redis 7.0 knows, and none at all means an empty RDB. */
            int functions = 0;
            size_t i0 = 0;
            while (i0 < v->n) {
                while (i0 < v->n && v->p[i0] == ' ') i0++;
                size_t i1 = i0;
                while (i1 < v->n && v->p[i1] != ' ') i1++;
                if (i1 == i0) break;
                if (i1 - i0 == 9 && !strncasecmp(v->p + i0, "functions", 9)) {
                    functions = 1;
                } else {
                    reply_errorf(c, "ERR Unsupported rdb-filter-only option: %.*s", (int)(i1 - i0), v->p + i0);
                    return 0;
                }
                i0 = i1;
            }
            h->filter = 1;
            h->filter_functions = functions;
        } else {
            reply_errorf(c, "ERR Unrecognized REPLCONF option: %.*s", (int)k->n, k->p);
            return 0;
        }
    }
    reply_ok(c);
    return 0;
}
