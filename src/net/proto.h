/* proto.h -- a protocol module: what turns a connection's bytes into calls
 * on the command layer, and its replies back into bytes.
 *
 * The transport (worker.c, conn.c) owns sockets, event loops, the query
 * buffer, the output path, timers and wake-ups, the same for every
 * protocol. A listener is bound to one protocol module; each connection it
 * accepts keeps that module for its whole life. The module parses requests
 * out of the query buffer, runs each through the command layer on the
 * connection's client (cmd_execute, or commands of its own making), and
 * lets the transport send what the reply functions appended. RESP is one
 * such module (resp_proto.c); the memcache and HTTP front-ends are its
 * peers on the same transport.
 *
 * Contract of process(): called on the connection's worker whenever new
 * bytes arrived or a paused/blocked client may go on; runs every complete
 * request it can, calling conn_may_run() before and conn_ran() after each
 * command, and returns how many bytes of qbuf it consumed (the transport
 * drops them). It stops early, consuming nothing more, while the client is
 * blocked, streaming or closing, or conn_may_run() said no. */
#ifndef GOBLIN_NET_PROTO_H
#define GOBLIN_NET_PROTO_H
#include <stddef.h>

#include "session/client.h"

struct conn;

enum { NET_REFUSE_MAXCLIENTS, NET_REFUSE_PROTECTED };

typedef struct net_proto {
    const char *name;
    /* The bytes a refused connection gets before it is closed. */
    const char *(*refusal)(int why);
    /* Per-connection state: set up, torn down. */
    int (*open)(struct conn *k);
    void (*close)(struct conn *k);
    size_t (*process)(struct conn *k);
    /* Bytes the request being read is known to need (0: unknown or
     * small), so one read can take a large argument whole; also the size
     * below which the query buffer is not trimmed while it is read. */
    size_t (*pending_hint)(const struct conn *k);
    /* Optional: the bytes at the start of the query buffer already parsed
     * into arguments of a partial request, and those arguments' total
     * length (CLIENT LIST shows them as Redis does: out of qbuf, as
     * argv-mem). */
    void (*partial)(const struct conn *k, size_t *parsed, size_t *argv_len);
} net_proto;

extern const net_proto resp_proto;
extern const net_proto mc_proto; /* mc_proto.c */
/* The memcache port to listen on (memcache-port; 0: none, also under
 * --no-memcache); binds the front-end's settings (start-up). */
int mc_proto_port(void);
/* Its TLS port (memcache-tls-port; 0: none, also under --no-memcache);
 * after mc_proto_port. */
int mc_proto_tls_port(void);
#define MC_DEFAULT_PORT 11211

/* For protocol modules, around each command they run: conn_may_run is 0
 * when CLIENT PAUSE holds the command back (the connection is marked
 * paused and run again, in the order it was held, when the pause ends:
 * the module must not consume the request); conn_ran does what follows every command (output limits,
 * CLIENT REPLY SKIP bookkeeping). */
int conn_may_run(struct conn *k, int argc, garg *argv);
void conn_ran(struct conn *k);
/* The protocol failed: reply already appended, close after sending it. */
void conn_protocol_error(struct conn *k, const char *what);
#endif
