/* client.h -- a connected client as the command layer sees it.
 *
 * The transport (net/) owns the socket and the query buffer; it fills
 * argc/argv with NUL-terminated arguments that stay valid for one command,
 * calls cmd_execute(), and sends what the reply functions appended to the
 * output buffer. Nothing here knows about sockets or event loops. */
#ifndef GOBLIN_SESSION_CLIENT_H
#define GOBLIN_SESSION_CLIENT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct garg {
    char *p;
    size_t n;
} garg;

enum {
    CLIENT_CLOSE_AFTER_REPLY = 1 << 0,
    CLIENT_CLOSE_ASAP = 1 << 1,
    CLIENT_MONITOR = 1 << 2,
    CLIENT_MULTI = 1 << 3,
    CLIENT_DIRTY_EXEC = 1 << 4,
    CLIENT_DIRTY_CAS = 1 << 5,
    CLIENT_PUBSUB = 1 << 6,
    CLIENT_AUTHENTICATED = 1 << 7,
    CLIENT_REPLY_OFF = 1 << 8,
    CLIENT_REPLY_SKIP_NEXT = 1 << 9,
    CLIENT_REPLY_SKIP = 1 << 10,
    CLIENT_NO_EVICT = 1 << 11,
    CLIENT_BLOCKED = 1 << 12,
    CLIENT_PAUSED = 1 << 13,
    CLIENT_IN_EXEC = 1 << 14,
    CLIENT_PROTECTED = 1 << 15,   /* freeing deferred while a command runs */
    CLIENT_STREAMING = 1 << 16,   /* a streamed reply is in progress (cmd/stream.c) */
    CLIENT_UNIX_SOCKET = 1 << 17, /* connected through the unixsocket listener */
    CLIENT_PRIMARY = 1 << 19,     /* applies the replication stream of this replica's primary */
    CLIENT_AOF_LOADER = 1 << 18,  /* replays the AOF: counted nowhere (no stats, slowlog or MONITOR), as
                                     Redis's fake AOF client */
    /* Client-side caching (cmd/tracking.c). Set and cleared by the owner
     * under the tracking lock, except BROKEN_REDIR, which the thread that
     * finds the redirection gone sets. */
    CLIENT_TRACKING = 1 << 20,
    CLIENT_TRACKING_BROKEN_REDIR = 1 << 21,
    CLIENT_TRACKING_BCAST = 1 << 22,
    CLIENT_TRACKING_OPTIN = 1 << 23,
    CLIENT_TRACKING_OPTOUT = 1 << 24,
    CLIENT_TRACKING_NOLOOP = 1 << 25,
    CLIENT_TRACKING_CACHING = 1 << 26, /* CLIENT CACHING given for the next command (owner only) */
    CLIENT_SCRIPT = 1 << 27,      /* runs a script's redis.call: MONITOR shows it as "lua" */
    /* Cluster mode: ASKING was sent (for the next command only) and
     * READONLY (reads of the master's slots served by its replica). */
    CLIENT_ASKING = 1u << 28,
    CLIENT_READONLY = 1u << 29,
    CLIENT_TLS = 1u << 30, /* connected through a tls-port listener */
    /* A protocol module reads back and rewrites the reply of the command
     * it runs (HTTP): no byte of that reply may leave the output buffer
     * before it has (reply_rawv copies). */
    CLIENT_CAPTURE = 1u << 31,
};

struct cmd_def;

typedef struct client {
    uint64_t id;
    int fd;
    void *conn;              /* owned by net/ */
    int worker_id;
    int db;                  /* selected database */
    int resp;                /* 2 or 3 */
    uint32_t flags;
    int argc;
    garg *argv;
    /* Output: the bytes reply_* append, which the transport (net/) sends. */
    char *obuf;
    size_t olen, ocap, osent;
    size_t obuf_peak;
    /* Set by net/ on a plain socket: sends iov[0..iovcnt) straight from
     * the caller's memory without blocking, when the connection's output
     * may go now; returns the bytes the socket took (0: none). Only
     * reply_rawv calls it, and only while nothing waits in obuf, so the
     * bytes keep their order. NULL: every reply is copied. */
    size_t (*send_direct)(struct client *c, const struct iovec *iov, int iovcnt);
    /* Set by a protocol that frames string values itself (HTTP) around a
     * command it runs: a string value replied whole from RAM (parts: its
     * bytes, len in all, streamed 0), or the head of one whose rest
     * follows as a stream (parts: the head, len: the whole value's,
     * streamed 1; the stream then carries the value's bytes alone), is
     * handed to it instead of being framed as a RESP bulk string. It
     * appends its own answer and returns 1, or returns 0 and the value is
     * replied as usual. */
    int (*value_sink)(struct client *c, const struct iovec *parts, int nparts, size_t len, int streamed);
    /* Identity. */
    char *name;
    char *lib_name, *lib_ver;
    char addr[64], laddr[64];
    int64_t ctime_ms, last_ms;
    uint64_t user;           /* index of the authenticated user */
    const struct cmd_def *cur, *last;
    uint64_t commands_processed;
    /* Queued transaction (MULTI); owned by cmd/multi.c. cas_dirty: a
     * watched key changed (set by any thread under watch_lock, relaxed
     * atomics; kept out of flags, which the owner updates plainly in net/). */
    void *mstate;
    int cas_dirty;
    /* For CLIENT LIST, kept by cmd/multi.c (relaxed atomics): the queued
     * commands, Redis's mstate.argv_len_sums (their arguments' lengths and
     * a pointer per argument), and while EXEC runs them the length of
     * EXEC's own arguments (Redis's argv-mem then). */
    int multi_count;
    size_t multi_mem, exec_argv;
    /* Blocking state (BLPOP & co); owned by cmd/blocking.c. */
    void *bstate;
    /* Pub/Sub subscriptions; owned by cmd/pubsub.c, which publishes their
     * counts for CLIENT LIST (relaxed atomics). */
    void *pstate;
    int sub_count, psub_count, ssub_count;
    /* Replication handshake (REPLCONF before PSYNC); owned by cmd/repl. */
    void *rstate;
    /* Client-side caching: the BCAST prefixes (owned by cmd/tracking.c,
     * under its lock) and the id invalidations go to (0: this client;
     * relaxed atomic, CLIENT LIST reads it). */
    void *tstate;
    uint64_t track_redir;
    /* Error flag of the command being executed (for failed_calls). */
    int cmd_failed;
    /* SCRIPT DEBUG's mode for the client's next EVAL (LDB_*; owned by
     * cmd/server/script_ldb.c, on the client's thread). */
    int lua_debug;
    /* For CLIENT LIST, kept by net/ (relaxed atomics): the query buffer's
     * unparsed bytes and free room, and the total length of the arguments
     * of a partial request already parsed (Redis's argv_len_sum). */
    size_t qbuf_len, qbuf_free, qbuf_argv;
    /* The same for the command a blocked client waits to run (kept by
     * cmd/blocking.c). */
    size_t argv_blocked;
    /* CLIENT LIST's rbs and rbp, kept by net/: the size Redis's reply
     * buffer would have and its peak use since the last reset. */
    size_t rbs, rbp;
    /* Authenticated ACL user; NULL is the default user (owned by cmd/server/acl_check.c,
     * changed under the client registry lock). */
    struct acl_user *acl_user;
    /* Output buffer limit: when the soft limit was first exceeded (ms, 0 when
     * under it); kept by net/. */
    int64_t obuf_soft_since_ms;
    /* Set by a command that takes the connection over (PSYNC): once the
     * command's replies are sent, the transport gives the socket to
     * handoff(fd, tls, handoff_arg) on the client's worker and frees the
     * rest of the client. tls: the connection's OpenSSL SSL (NULL for
     * plaintext), the new owner's from then on, with the socket left
     * blocking. */
    void (*handoff)(int fd, void *tls, void *arg);
    void *handoff_arg;
    /* What the client last added to maxmemory-clients' total
     * (session/evict.c; atomics). */
    size_t mem_noted;
    /* Bytes of the client's own state outside its buffers, kept by their
     * owners (relaxed atomics): its watched keys (cmd/multi.c) and its
     * tracking prefixes (cmd/tracking.c). Part of tot-mem, as in Redis. */
    size_t state_mem;
    /* Registry links (session/session.c, under its lock). */
    struct client *rprev, *rnext;
} client;

/* Cross-thread reads of a client (CLIENT LIST/KILL, INFO clients, ACL
 * kills) happen under the registry lock while the owner keeps running, so
 * the fields they read are written with relaxed atomics by the command
 * layer: flags through these helpers, db/resp/cur/last with
 * __atomic_store_n. The owner may read its own fields plainly. */
/* A client with no connection that runs commands for the server itself
 * (the AOF loader, a replica's primary): id 0, RESP2, authenticated. */
static inline void client_init_internal(client *c, uint32_t flags) {
    c->id = 0;
    c->fd = -1;
    c->worker_id = -1;
    c->resp = 2;
    c->flags = CLIENT_AUTHENTICATED | flags;
}

static inline void client_flag_on(client *c, uint32_t f) { __atomic_fetch_or(&c->flags, f, __ATOMIC_RELAXED); }
static inline void client_flag_off(client *c, uint32_t f) { __atomic_fetch_and(&c->flags, ~f, __ATOMIC_RELAXED); }
static inline uint32_t client_flags_peek(const client *c) { return __atomic_load_n(&c->flags, __ATOMIC_RELAXED); }
/* Pushed messages go out even under CLIENT REPLY OFF/SKIP: lift only those
 * bits (returned, for client_flag_on afterwards), so a flag another thread
 * sets meanwhile (CLOSE_ASAP) is not lost as a save/restore of the word
 * would lose it. */
static inline uint32_t client_reply_unmute(client *c) {
    uint32_t muted = client_flags_peek(c) & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP);
    client_flag_off(c, muted);
    return muted;
}
/* d bytes more (or fewer) of c's state_mem. */
static inline void client_state_mem_add(client *c, long long d) {
    __atomic_fetch_add(&c->state_mem, (size_t)d, __ATOMIC_RELAXED);
}
/* Output positions other threads read (CLIENT LIST omem, INFO clients). */
static inline void client_set_out(client *c, size_t osent, size_t olen) {
    __atomic_store_n(&c->osent, osent, __ATOMIC_RELAXED);
    __atomic_store_n(&c->olen, olen, __ATOMIC_RELAXED);
}

#endif
