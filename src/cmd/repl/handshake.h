/* handshake.h -- what a replica said before its PSYNC (REPLCONF), kept on
 * its client (c->rstate) until the link takes it over. Internal to
 * cmd/repl. */
#ifndef GOBLIN_CMD_REPL_HANDSHAKE_H
#define GOBLIN_CMD_REPL_HANDSHAKE_H
#include "session/client.h"

typedef struct repl_hs {
    int port;               /* listening-port */
    char ip[64];            /* ip-address */
    int capa_eof, capa_psync2;
    /* rdb-filter-only (Redis 7.0): the RDB of the full sync holds no keys
     * (filter), and the function libraries only when "functions" was
     * given (filter_functions). rdb-only: the client wants the RDB alone,
     * without the stream, and the link closes after it. */
    int filter, filter_functions, rdb_only;
} repl_hs;

/* c's state, made on first use; NULL out of memory. */
repl_hs *repl_hs_of(client *c);
#endif
