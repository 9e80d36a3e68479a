/* internal.h -- structures shared by net/worker.c and net/conn.c only. */
#ifndef GOBLIN_NET_INTERNAL_H
#define GOBLIN_NET_INTERNAL_H
#include <event2/event.h>
#include <pthread.h>

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
    struct worker *w;
} listener;

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
    struct conn *conns;      /* this worker's connections */
    /* appendfsync always: connections whose replies wait for their records
     * to be on disk. durable: held during this loop iteration, no target
     * yet; dbatch: waiting for the fsync of their target offset (the worker
     * keeps serving meanwhile). dlast: the last target given. */
    struct conn *durable, *dbatch;
    uint64_t dlast;
    /* Connections with output to write at the end of this loop iteration
     * (conn_write_pending). */
    struct conn *pending;
    /* Connections CLIENT PAUSE holds, in the order they were held (Redis's
     * paused-clients list): released in that order when the pause ends
     * (conn_release_paused). pseq numbers them; pause_ev fires when the
     * pause in force ends. */
    struct conn *phead, *ptail;
    uint64_t pseq;
    struct event *pause_ev;
    int64_t pause_at;        /* the end pause_ev was armed for */
    /* The wall clock (unix ms) read when the connection being served
     * started its batch of commands (conn_process). */
    int64_t batch_ms;
    /* net_events_while_busy is serving the connections (not re-entered). */
    int busy_pump;
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
    int paused;                      /* held by CLIENT PAUSE: on w->phead */
    struct conn *zprev, *znext;      /* w->phead list, when paused */
    uint64_t zseq;                   /* w->pseq when it was held */
    /* Query buffer housekeeping (conn_qbuf_cron, Redis's
     * clientsCronResizeQueryBuffer): the largest qlen since the last cron
     * pass, the reads so far and as last seen by the cron, and the cron
     * time of the last pass that saw a read. */
    size_t qpeak;
    uint64_t qreads, qreads_seen;
    int64_t qactive_ms;
    struct event *tev;               /* blocking timeout */
    void (*tfn)(client *c);
    /* Commands of this connection are running (conn_process), on the
     * stack of this worker's thread: a busy pump leaves it alone. */
    int running;
    /* The busy pump saw its end of file: left to the loop, once the
     * command that pumps is over, to close. */
    int busy_eof;
    /* Async output from other threads (MONITOR). */
    pthread_mutex_t alock;
    char *abuf;
    size_t alen;
} conn;

extern worker *net_workers;
/* unix_sock: from the unixsocket listener (flag U, never refused by
 * protected mode: the peer is on this host). */
void conn_accept(worker *w, const net_proto *proto, int fd, const char *peer, const char *local, int unix_sock);
void conn_tick(worker *w);
/* Run the connections CLIENT PAUSE held, in the order they were held;
 * those the pause still applies to are held again, in the same order. */
void conn_release_paused(worker *w);
void conn_free_all(worker *w);
void conn_drain_async(worker *w);
/* End of a loop iteration: write the output of the connections that ran
 * commands or got output during it (first), then send the replies that
 * waited for the AOF fsync (one fsync for every reply held during it). */
void conn_write_pending(worker *w);
void conn_durable_flush(worker *w);
void conn_durable_notify(void);
/* From net_events_while_busy: read what k sent, run it, send the replies
 * it can now; a connection to close is only marked (CLIENT_CLOSE_ASAP),
 * since frames up the stack may still point at it. */
void conn_busy_serve(conn *k);
#endif
