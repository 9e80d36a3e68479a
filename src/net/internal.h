/* internal.h -- structures shared by net/worker.c and net/conn.c only. */
#ifndef GOBLIN_NET_INTERNAL_H
#define GOBLIN_NET_INTERNAL_H
#include <event2/event.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <openssl/ssl.h>

#include "session/client.h"
#include "net/proto.h"

typedef struct net_job {
    struct net_job *next;
    void (*fn)(void *);
    void *arg;
} net_job;

struct worker;

/* One listening socket of a worker, bound to the protocol it serves. */
typedef struct listener {
    int fd;
    struct event *ev;
    const net_proto *proto;
    int tls;                 /* its connections speak TLS (tls-port) */
    struct worker *w;
} listener;

enum { NET_SET_PLAIN = 0, NET_SET_TLS = 1 };

typedef struct worker {
    int id;
    pthread_t tid;
    struct event_base *base;
    listener *listeners;
    int nlisten;
    int efd;                 /* eventfd for posted jobs */
    struct event *efd_ev;
    struct event *tick_ev;   /* 100 ms housekeeping */
    pthread_mutex_t qlock;
    net_job *qhead, *qtail;
    /* Connections other threads queued output for or marked for closing
     * (conn.c's ready list), and those the drain took from it and has not
     * visited yet (conn_drain_async); both under qlock. */
    struct conn *aready, *adrain;
    struct conn *conns;      /* this worker's connections */
    /* RESP's listeners on port [NET_SET_PLAIN] and tls-port [NET_SET_TLS],
     * replaced when CONFIG SET changes the port. */
    listener *resp_sets[2];
    int nresp[2];
    /* appendfsync always: connections whose replies wait for their records
     * to be on disk. durable: held during this loop iteration, no target
     * yet; dbatch: waiting for the fsync of their target offset (the worker
     * keeps serving meanwhile). dlast: the last target given. */
    struct conn *durable, *dbatch;
    uint64_t dlast;
    /* Connections with output to write at the end of this loop iteration
     * (conn_write_pending). */
    struct conn *pending;
    /* Fires when the pause in force ends (its held connections are on
     * conn.c's held list). */
    struct event *pause_ev;
    int64_t pause_at;        /* the end pause_ev was armed for */
    /* The wall clock (unix ms, coarse) read when the connection being
     * served started its batch of commands (conn_process). */
    int64_t batch_ms;
    /* net_events_while_busy is serving the connections (not re-entered). */
    int busy_pump;
    /* --net async: the ring that serves an iteration's reads and writes in
     * one system call each (uring_io.c), NULL otherwise; and the
     * connections whose reads it serves next (conn_read_batch), newest at
     * the head, oldest at the tail (served first: the order the loop
     * found them readable). */
    struct nuring *uring;
    struct conn *rready, *rready_tail;
    /* Connections whose turn ended with complete requests still in their
     * query buffer (conn_ran): they run again after the next iteration's
     * events (conn_run_more). */
    struct conn *more;
    uint64_t iter;           /* loop iterations so far (turns) */
} worker;

typedef struct conn {
    client c;
    worker *w;
    struct event *rev, *wev;
    int wev_on;
    char *qbuf;
    size_t qlen, qcap;
    const net_proto *proto;          /* the listener's protocol module */
    void *pstate;                    /* and its per-connection state */
    struct conn *prev, *next;        /* worker list */
    struct conn *pprev, *pnext;      /* w->pending, when pwait */
    int pwait;
    struct conn *dprev, *dnext;      /* w->durable (dwait 1) or w->dbatch (2) */
    int dwait;
    uint64_t dneed;                  /* dwait 2: the AOF offset to wait for */
    /* --net async: on w->rready (rwait 1: readable, its read not yet
     * made) or on conn_read_batch's list of reads made, not yet run
     * (rwait 2, with their result rres and the query-buffer figures taken
     * before the read); either mode: on w->more (rwait 3), its turn over
     * with requests left to run. */
    struct conn *rprev, *rnext;
    int rwait;
    int rres;
    size_t rparsed, rargv;
    int paused;                      /* held by CLIENT PAUSE: on the held list */
    struct conn *zprev, *znext;      /* the held list (conn.c), when paused */
    uint64_t zseq;                   /* its number there */
    /* Query buffer housekeeping (conn_qbuf_cron, Redis's
     * clientsCronResizeQueryBuffer): the largest qlen since the last cron
     * pass, the reads and writes so far (Redis's last interaction) and as
     * last seen by the cron, and the cron time of the last pass that saw
     * one. */
    size_t qpeak;
    uint64_t qio, qio_seen;
    int64_t qactive_ms;
    /* Redis's reply buffer (clientsCronResizeOutputBuffer), kept as
     * figures only (the output itself is one growing buffer): its size,
     * its peak use, and when the peak was last reset. */
    size_t rbs, rbp;
    int64_t rbp_reset_ms;
    struct event *tev;               /* blocking timeout */
    void (*tfn)(client *c);
    /* Commands of this connection are running (conn_process), on the
     * stack of this worker's thread: a busy pump leaves it alone. */
    int running;
    /* Its turns (conn_process): the loop iteration of the last one, the
     * thread's command time (cmd_thread_busy_us) at which the one running
     * ends, and whether conn_ran found it over (the protocol module stops
     * before the next request). */
    uint64_t turn_iter;
    uint64_t turn_end;
    int turn_over;
    /* The busy pump saw its end of file: left to the loop, once the
     * command that pumps is over, to close. */
    int busy_eof;
    /* Output queued from other threads (Pub/Sub messages, MONITOR lines,
     * invalidations): abuf holds alen bytes of acap, under alock; the worker
     * is signalled when alen leaves 0 and takes it all (conn_take_async). */
    pthread_mutex_t alock;
    char *abuf;
    size_t alen, acap;
    struct conn *anext;              /* w->aready (alisted 1) or w->adrain (2), under w->qlock */
    int alisted;
    /* TLS (net/tlsio.c): the connection's SSL, NULL for plaintext; the
     * handshake is running while tls_hs; tls_want records that the last
     * SSL_read needed the socket writable or the last SSL_write needed it
     * readable (TLSIO_*), so the other event retries it. */
    SSL *ssl;
    int tls_hs;
    int tls_want;
} conn;

/* uring_io.c: a batch of socket reads (send 0) and writes (send 1), all
 * submitted in one system call; nuring_run returns when every one has
 * completed, res holding its byte count or -errno (-EAGAIN: the socket had
 * nothing to give or no room). Nothing stays in flight. */
typedef struct nuring nuring;
typedef struct nuring_op {
    int fd;
    int send;
    void *buf;
    size_t len;
    int res;
} nuring_op;
nuring *nuring_new(unsigned entries, char *err, size_t errlen);
void nuring_free(nuring *r);
void nuring_run(nuring *r, nuring_op *ops, int n);

extern worker *net_workers;
/* The worker whose loop runs on the calling thread, NULL on any other. */
worker *worker_self(void);
/* From any thread: w's loop wakes and runs its posted jobs and its drain
 * (conn_drain_async). */
void worker_wake(worker *w);
/* unix_sock: from the unixsocket listener (flag U, never refused by
 * protected mode: the peer is on this host). */
void conn_accept(worker *w, const net_proto *proto, int tls, int fd, const char *peer, const char *local,
                 int unix_sock);
void conn_tick(worker *w);
/* From any thread: the pause mode in force became less restrictive than
 * old_mode. The connections CLIENT PAUSE held run again, in the order they
 * were held (on their workers, one after the other); those the pause still
 * applies to are held again, in the same order. */
void conn_release_paused(int old_mode);
/* A pause past its end is over (Redis's serverCron check): the timer and
 * the tick call it. */
void conn_pause_check(void);
/* The release's drain job, on worker w. */
void conn_release_drain(worker *w);
void conn_free_all(worker *w);
void conn_drain_async(worker *w);
/* End of a loop iteration: write the output of the connections that ran
 * commands or got output during it (first), then send the replies that
 * waited for the AOF fsync (one fsync for every reply held during it). */
void conn_write_pending(worker *w);
/* --net async: read the connections the loop found readable, in batches
 * (after the loop's callbacks, before conn_write_pending), and from the
 * busy pump, run the reads made and not yet run. */
void conn_read_batch(worker *w);
void conn_busy_settle(void);
/* At the start of a loop iteration: the connections whose turn ran out
 * run their next turn (w->more). */
void conn_run_more(worker *w);
void conn_durable_flush(worker *w);
void conn_durable_notify(void);
/* From net_events_while_busy, with what poll(2) reported: write what k's
 * socket takes now (POLLOUT), read what k sent, run it, send the replies
 * it can now; a connection to close is only marked (CLIENT_CLOSE_ASAP),
 * since frames up the stack may still point at it. */
void conn_busy_serve(conn *k, short revents);
/* From net_events_while_busy: write the output waiting on w's pending-write
 * list (nothing freed). */
void conn_busy_flush(worker *w);
/* client.send_direct of every plain-socket connection (reply_rawv). */
size_t conn_send_direct(client *c, const struct iovec *iov, int iovcnt);
/* The addresses of the bind directive (port port_num), for the client
 * listeners and the cluster bus: count, or -1 with a log line. */
typedef struct bind_addr {
    struct sockaddr_storage ss;
    socklen_t len;
    int optional;
    char text[64];
} bind_addr;
int net_resolve_binds(bind_addr *out, int max, int port_num);
/* A bound, non-blocking socket for a (listening when reuseport). */
int net_make_listener(const bind_addr *a, int reuseport, int *err);

/* The cluster bus (cbus.c): listener, links and their thread. */
int net_cbus_start(void);
void net_cbus_stop(void);

/* ---- tlsio.c: a TLS connection's I/O through OpenSSL ---------------------
 *
 * Each call returns as read(2)/write(2) do, with errno EAGAIN when OpenSSL
 * needs the socket readable or writable first (the wait is armed: the
 * write event is added when it needs writable; the read event is always
 * on). A failure is logged as Redis logs it. */
enum { TLSIO_READ_WANTS_WRITE = 1, TLSIO_WRITE_WANTS_READ = 2 };
/* One step of the server handshake: 1 done, 0 waiting for the socket, -1
 * failed (logged "Error accepting a client connection: ..."; first: the
 * step run at accept time, whose log line names the descriptor too). */
int tlsio_handshake(conn *k, int first);
ssize_t tlsio_read(conn *k, char *buf, size_t n);
ssize_t tlsio_write(conn *k, const char *buf, size_t n);
/* Whether OpenSSL holds bytes for the next tlsio_read (decrypted, or
 * records read ahead; a partial record counts too). */
int tlsio_pending(conn *k);
/* close_notify when the handshake was done (best effort), then free. */
void tlsio_free(conn *k);
#endif
