/* mirror.c -- the origin client of the HTTP front-end (--mirror URL).
 *
 * A GET or HEAD that misses the store is fetched from the origin with a
 * GET of prefix + "/" + the key (percent-encoded), over persistent
 * HTTP/1.1 connections: plain non-blocking sockets on the worker's own
 * event loop, kept in a per-worker idle pool after a keep-alive response.
 * The response is parsed with libhttp-parser as it arrives.
 *
 * Two transports carry those connections, the rest is common (oconn_io_*):
 * `mirror-client socket`, non-blocking sockets whose readiness libevent
 * reports; `mirror-client uring`, an io_uring ring per worker that does the
 * connect, send and recv itself, its completions reaped from the worker's
 * loop through an eventfd registered with the ring. A uring connection has
 * at most one operation of each kind in flight (connect, send, recv; a
 * recv only once connected), each tagged with the connection and its kind;
 * a connection that is let go while some are in flight is shut down, its
 * operations cancelled, and freed when the last completion comes.
 *
 * Coalescing: each worker has a table of fetches in flight, by key; a miss
 * for a key being fetched joins that fetch as a waiter instead of starting
 * another. A miss on another worker joins it too, as a remote waiter
 * (registry under glock): when the fetch ends its owner posts that worker
 * the outcome, and the request is served again there (a hit now), or
 * answered with the origin's status. A waiter
 * that wants the plain body (GET, no Range, no If-None-Match) gets the
 * status line and headers as soon as the origin's headers came (when they
 * have a Content-Length), then every piece of the body as it is received;
 * the others, and every waiter of a response without a length, are
 * answered when it is complete, as a hit would be (Range, 304...).
 *
 * Admission: a 200 with a body of at most MIRROR_STORE_MAX bytes (and at
 * most proto-max-bulk-len) is kept whole while it streams and stored when
 * complete, with SET through the command layer on a waiter's client; a
 * larger one is passed through to the waiters it had, not stored, and
 * closes the fetch to new waiters. Other statuses (404...) are passed to
 * the waiters, not stored. An origin error or reset answers 502, no byte
 * for mirror-timeout ms answers 504; nothing is stored then. A waiter whose
 * answer had begun is disconnected instead (its head promised a length).
 * A reused idle connection that fails before any byte of the response is
 * retried once on a new one.
 *
 * Tails: a kept 200 with a length that the store will split into a RAM
 * head and an SSD tail (mem/ssdtail.h) has its tail written while the body
 * arrives, in MIRROR_TAIL_STEP pieces as they complete, through the
 * worker's asynchronous ring, from the body buffer (page-aligned for
 * this). When the body is complete the last piece goes, and the store
 * waits for the writes still in flight (the waiters that stream already
 * have every byte); the SET then takes the written extent (ssdtail_offer)
 * instead of writing the tail itself. A write that failed leaves the SET
 * to write it.
 *
 * Invariant: every fetch is in its worker's table from start to end; a
 * connection waits on at most one fetch (its module stops reading requests
 * while it waits), and leaves it when it goes (mirror_conn_gone). All of
 * it runs on the worker's thread. */
#include <assert.h>
#include <errno.h>
#include <http_parser.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "cmd/stream.h"
#include "mem/objstore.h"
#include "mem/ssdtail.h"
#include "net/http.h"
#include "net/internal.h"
#include "net/net.h"
#include "session/reply.h"
#include "session/session.h"
#include "util/monotime.h"

#define MIRROR_STORE_MAX (64LL << 20) /* bytes kept to store one object */
#define MIRROR_OTHER_MAX (1LL << 20)  /* a non-200 body passed on */
#define MIRROR_IDLE_MAX 32            /* idle origin connections per worker */
/* Back-pressure: reading from the origin pauses while a streaming waiter
 * has more than HIGH bytes of output unsent, and goes on once every one
 * is under LOW; one that keeps it paused for mirror-timeout is dropped. */
#define MIRROR_OBUF_HIGH CMD_STREAM_OBUF_HIGH
#define MIRROR_OBUF_LOW (256u * 1024)

static int enabled;
static struct sockaddr_storage origin_addr;
static socklen_t origin_len;
static char origin_host[300]; /* Host header */
static char *origin_prefix;   /* "" or "/a/b" */
static long long timeout_ms = 10000;
static int use_uring; /* mirror-client uring */
#define MIRROR_RECV_BUF 65536                /* a socket read */
#define MIRROR_URING_RECV_BUF (256u * 1024) /* a uring connection's receive buffer */

typedef struct waiter {
    struct waiter *next;
    conn *k;        /* NULL: gone */
    http_want w;
    int streaming;  /* its head went out: the body follows as received */
} waiter;

struct oconn;

typedef struct ofetch {
    struct ofetch *next;
    char *key;
    size_t klen;
    waiter *waiters;
    struct oconn *oc;
    int status;
    long long clen;     /* -1: none given */
    int headers;        /* the origin's head was read */
    int keep;           /* the body is kept whole (store / answer later) */
    int joinable;
    char *buf;
    size_t blen, bcap;
    http_etag_acc *tag; /* a kept 200's ETag hash, piece by piece (NULL: none yet) */
    ssdtail_writer *tw; /* the tail written to the SSD as it arrives (NULL: none) */
    size_t tw_done;     /* tail bytes handed to it */
    struct event *timer;
    int retried;
    int delivering;
    int nwaiters;
    int fail_status; /* a failure found while starting: answered from the timer */
    int owner;       /* the worker */
    struct rwaiter *remote; /* taken from the registry when the fetch ends */
    struct event *throttle; /* polls the paused waiters' output */
    int64_t paused_at;      /* ms; 0: reading */
} ofetch;

enum { OP_CONNECT, OP_SEND, OP_RECV, OP_CANCEL };

typedef struct oconn {
    struct oconn *next; /* idle list */
    int fd;
    struct event *rev, *wev; /* socket transport */
    http_parser hp;
    ofetch *f;
    char *out;
    size_t olen, osent;
    int connected, reused, got, done, eof;
    /* uring transport: operations in flight (one per kind at most), the
     * holds of completion handlers running, reading wanted, let go. */
    int op[3];
    int inflight;
    int want_read;
    int dead;
    char *rbuf;
} oconn;

static _Thread_local struct event_base *tbase; /* this worker's loop */
static _Thread_local ofetch *fetches;
static _Thread_local oconn *idle;
static _Thread_local int nidle;

/* Fetches in flight on every worker, by key (under glock): a miss on
 * another worker joins as a remote waiter (worker, client id). When the
 * fetch ends, the owner posts each remote waiter's worker the outcome:
 * "again" (the object is stored now, or was too large to hold: serve the
 * request again, a hit or a fetch of its own) or a status and body. */
typedef struct rwaiter {
    struct rwaiter *next;
    int wid;
    uint64_t cid;
} rwaiter;

typedef struct gentry {
    struct gentry *next;
    char *key;
    size_t klen;
    int owner;
    rwaiter *remote;
} gentry;

static pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER;
static gentry *gtab;
static uint64_t ended; /* fetches that left the registry (mirror_ended) */

/* On the waiting worker: its clients waiting for another worker's fetch. */
typedef struct rwait {
    struct rwait *next;
    conn *k;
    uint64_t cid;
    char *key;
    size_t klen;
    http_want w;
} rwait;
static _Thread_local rwait *rwaits;

int mirror_enabled(void) { return enabled; }

int mirror_setup(const char *url, long long tmo, int uring, char *err, size_t errlen) {
    if (strncmp(url, "http://", 7) != 0) {
        snprintf(err, errlen, "only http://HOST:PORT[/prefix] origins are supported");
        return -1;
    }
    const char *h = url + 7, *slash = strchr(h, '/');
    size_t hl = slash ? (size_t)(slash - h) : strlen(h);
    if (!hl || hl >= sizeof(origin_host)) {
        snprintf(err, errlen, "no host");
        return -1;
    }
    memcpy(origin_host, h, hl);
    origin_host[hl] = '\0';
    char host[300], port[16] = "80";
    snprintf(host, sizeof(host), "%s", origin_host);
    char *colon = strrchr(host, ':');
    if (host[0] == '[') {
        char *rb = strchr(host, ']');
        if (!rb) {
            snprintf(err, errlen, "bad host");
            return -1;
        }
        *rb = '\0';
        if (rb[1] == ':') snprintf(port, sizeof(port), "%s", rb + 2);
        memmove(host, host + 1, strlen(host));
    } else if (colon) {
        *colon = '\0';
        snprintf(port, sizeof(port), "%s", colon + 1);
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    memcpy(&origin_addr, res->ai_addr, res->ai_addrlen);
    origin_len = res->ai_addrlen;
    freeaddrinfo(res);
    const char *pfx = slash ? slash : "";
    size_t pl = strlen(pfx);
    while (pl && pfx[pl - 1] == '/') pl--;
    origin_prefix = strndup(pfx, pl);
    timeout_ms = tmo > 0 ? tmo : 10000;
    use_uring = uring;
    enabled = 1;
    return 0;
}

/* ---- Origin connections ---------------------------------------------------- */

/* ---- The uring transport ------------------------------------------------------ */

#define RING_QD 256
static _Thread_local struct io_uring ring;
static _Thread_local int ring_state; /* 0 untried, 1 ok, -1 unavailable */
static _Thread_local int ring_efd = -1;
static _Thread_local struct event *ring_ev;
static _Thread_local int ring_pending; /* operations in flight, cancels aside */
static _Thread_local int ring_reaping;  /* in on_ring: one submit at its end */

static void oc_input(oconn *oc, const char *buf, ssize_t n);
static void fail_later(ofetch *f, int status);
static void fetch_fail(ofetch *f, int status, const char *why);
static void on_ring(evutil_socket_t fd, short what, void *arg);

static int ring_ready(void) {
    if (ring_state == 0) {
        ring_state = -1;
        if (io_uring_queue_init(RING_QD, &ring, 0) != 0) {
            log_warn("HTTP mirror: io_uring_queue_init failed: the uring origin client cannot run");
            return 0;
        }
        ring_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (ring_efd < 0 || io_uring_register_eventfd(&ring, ring_efd) != 0 ||
            !(ring_ev = event_new(tbase, ring_efd, EV_READ | EV_PERSIST, on_ring, NULL)) ||
            event_add(ring_ev, NULL) != 0) {
            if (ring_ev) event_free(ring_ev);
            ring_ev = NULL;
            if (ring_efd >= 0) close(ring_efd);
            ring_efd = -1;
            io_uring_queue_exit(&ring);
            return 0;
        }
        ring_state = 1;
    }
    return ring_state == 1;
}

static struct io_uring_sqe *ring_sqe(void) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    if (!sqe) {
        io_uring_submit(&ring);
        sqe = io_uring_get_sqe(&ring);
    }
    return sqe;
}

/* The tag of oc's operation of one kind: the pointer, the kind in its low
 * bits (an oconn is at least 8-aligned). */
static uint64_t op_tag(oconn *oc, int kind) { return (uint64_t)(uintptr_t)oc | (uint64_t)kind; }

static int ring_op(oconn *oc, int kind) {
    struct io_uring_sqe *sqe = ring_sqe();
    if (!sqe) return -1;
    switch (kind) {
    case OP_CONNECT: io_uring_prep_connect(sqe, oc->fd, (struct sockaddr *)&origin_addr, origin_len); break;
    case OP_SEND: io_uring_prep_send(sqe, oc->fd, oc->out + oc->osent, oc->olen - oc->osent, MSG_NOSIGNAL); break;
    case OP_RECV: io_uring_prep_recv(sqe, oc->fd, oc->rbuf, MIRROR_URING_RECV_BUF, 0); break;
    default: assert(0);
    }
    io_uring_sqe_set_data64(sqe, op_tag(oc, kind));
    oc->op[kind] = 1;
    oc->inflight++;
    ring_pending++;
    if (!ring_reaping) io_uring_submit(&ring);
    return 0;
}

static void uring_free_maybe(oconn *oc) {
    if (oc->dead && oc->inflight == 0) {
        free(oc->rbuf);
        free(oc->out);
        free(oc);
    }
}

/* Let oc go: its operations are cancelled; freed once none is in flight. */
static void uring_release(oconn *oc) {
    oc->dead = 1;
    oc->f = NULL;
    if (oc->fd >= 0) {
        shutdown(oc->fd, SHUT_RDWR);
        for (int kind = 0; kind < 3; kind++) {
            if (!oc->op[kind]) continue;
            struct io_uring_sqe *sqe = ring_sqe();
            if (!sqe) continue;
            io_uring_prep_cancel64(sqe, op_tag(oc, kind), 0);
            io_uring_sqe_set_data64(sqe, (uint64_t)OP_CANCEL);
        }
        io_uring_submit(&ring);
        close(oc->fd); /* the operations in flight hold the socket */
        oc->fd = -1;
    }
    uring_free_maybe(oc);
}

static void uring_want_read(oconn *oc) {
    if (!oc->dead && oc->want_read && oc->connected && !oc->op[OP_RECV] && ring_op(oc, OP_RECV) != 0 && oc->f)
        fail_later(oc->f, 502);
}

static void uring_complete(oconn *oc, int kind, int res) {
    oc->op[kind] = 0;
    oc->inflight--;
    if (oc->dead) {
        uring_free_maybe(oc);
        return;
    }
    oc->inflight++; /* held while the handler runs: it may let oc go */
    switch (kind) {
    case OP_CONNECT:
        if (res < 0) {
            if (oc->f) fetch_fail(oc->f, 502, "cannot connect to the origin");
            else uring_release(oc);
            break;
        }
        oc->connected = 1;
        oc->want_read = 1;
        if (oc->osent < oc->olen && ring_op(oc, OP_SEND) != 0 && oc->f) fetch_fail(oc->f, 502, "io_uring full");
        break;
    case OP_SEND:
        if (res < 0 && res != -EINTR && res != -EAGAIN) {
            if (oc->f) fetch_fail(oc->f, 502, "origin write failed");
            else uring_release(oc);
            break;
        }
        if (res > 0) oc->osent += (size_t)res;
        if (oc->osent < oc->olen && ring_op(oc, OP_SEND) != 0 && oc->f) fetch_fail(oc->f, 502, "io_uring full");
        break;
    case OP_RECV:
        if (res == -EINTR || res == -EAGAIN) break;
        oc_input(oc, oc->rbuf, res < 0 ? -1 : (ssize_t)res);
        break;
    }
    oc->inflight--;
    if (oc->dead) uring_free_maybe(oc);
    else uring_want_read(oc);
}

static void ring_reap(struct io_uring_cqe *cqe) {
    uint64_t tag = io_uring_cqe_get_data64(cqe);
    int res = cqe->res;
    io_uring_cqe_seen(&ring, cqe);
    if (tag == OP_CANCEL) return;
    ring_pending--;
    uring_complete((oconn *)(uintptr_t)(tag & ~(uint64_t)7), (int)(tag & 7), res);
}

static void on_ring(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    (void)arg;
    uint64_t v;
    if (read(ring_efd, &v, sizeof(v)) < 0) { /* nothing signalled: fine */
    }
    struct io_uring_cqe *cqe;
    ring_reaping = 1;
    while (io_uring_peek_cqe(&ring, &cqe) == 0) ring_reap(cqe);
    ring_reaping = 0;
    if (io_uring_sq_ready(&ring)) io_uring_submit(&ring);
}

/* ---- Origin connections, either transport ---------------------------------- */

static void oconn_free(oconn *oc) {
    if (use_uring) {
        uring_release(oc);
        return;
    }
    if (oc->rev) event_free(oc->rev);
    if (oc->wev) event_free(oc->wev);
    if (oc->fd >= 0) close(oc->fd);
    free(oc->out);
    free(oc);
}

/* Reading from oc: on (responses, or an idle connection's close) / off
 * (back-pressure). */
static void oconn_read(oconn *oc, int on) {
    if (use_uring) {
        oc->want_read = on;
        if (on) uring_want_read(oc);
        return;
    }
    if (on) event_add(oc->rev, NULL);
    else event_del(oc->rev);
}

static void idle_remove(oconn *oc) {
    for (oconn **pp = &idle; *pp; pp = &(*pp)->next)
        if (*pp == oc) {
            *pp = oc->next;
            nidle--;
            return;
        }
}

static void on_oread(evutil_socket_t fd, short what, void *arg);
static void on_owrite(evutil_socket_t fd, short what, void *arg);
static void fetch_fail(ofetch *f, int status, const char *why);
static void fetch_start(ofetch *f);

static worker *self_worker(conn *k) { return k->w; }

static oconn *oconn_new(struct event_base *base) {
    if (use_uring && !ring_ready()) return NULL;
    oconn *oc = calloc(1, sizeof(*oc));
    if (!oc) return NULL;
    oc->fd = socket(origin_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | (use_uring ? 0 : SOCK_NONBLOCK), 0);
    if (oc->fd < 0) {
        free(oc);
        return NULL;
    }
    int one = 1;
    setsockopt(oc->fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
    if (use_uring) {
        if (!(oc->rbuf = malloc(MIRROR_URING_RECV_BUF)) || ring_op(oc, OP_CONNECT) != 0) {
            close(oc->fd);
            free(oc->rbuf);
            free(oc);
            return NULL;
        }
        return oc;
    }
    if (connect(oc->fd, (struct sockaddr *)&origin_addr, origin_len) != 0 && errno != EINPROGRESS) {
        close(oc->fd);
        free(oc);
        return NULL;
    }
    oc->rev = event_new(base, oc->fd, EV_READ | EV_PERSIST, on_oread, oc);
    oc->wev = event_new(base, oc->fd, EV_WRITE | EV_PERSIST, on_owrite, oc);
    return oc;
}

static int oconn_flush(oconn *oc) {
    if (use_uring) {
        /* Sent once connected (the connect's completion starts it). */
        if (!oc->connected || oc->op[OP_SEND] || oc->osent >= oc->olen) return 0;
        return ring_op(oc, OP_SEND);
    }
    while (oc->osent < oc->olen) {
        ssize_t n = write(oc->fd, oc->out + oc->osent, oc->olen - oc->osent);
        if (n > 0) {
            oc->osent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)) {
            event_add(oc->wev, NULL);
            return 0;
        }
        return -1;
    }
    event_del(oc->wev);
    return 0;
}

static void on_owrite(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    oconn *oc = arg;
    if (!oc->f) {
        event_del(oc->wev);
        return;
    }
    if (oconn_flush(oc) != 0) fetch_fail(oc->f, 502, "origin write failed");
}

/* ---- Parsing the origin's response ----------------------------------------- */

static int plain_get(const http_want *w) { return w->method == HTTP_M_GET && w->range == HTTP_RANGE_NONE && !w->inm; }

/* A piece of the body goes straight to the socket when nothing waits in
 * front of it (reply_rawv), else after the waiter's unsent output. */
static void waiter_send(waiter *wt, const char *p, size_t n) {
    if (!wt->k || !n) return;
    struct iovec v = {(void *)p, n};
    reply_rawv(&wt->k->c, &v, 1);
    http_stat_add(&http_stat.bytes_out, n);
}

/* A streaming waiter's head: status 200 and the origin's length. */
static void waiter_stream_head(ofetch *f, waiter *wt) {
    char head[1024];
    size_t hl = http_head(head, sizeof(head), 200, f->clen, NULL, NULL, NULL, &wt->w);
    waiter_send(wt, head, hl);
    wt->streaming = 1;
    http_stat_first_byte(wt->w.t0_us);
}

/* The tail bytes that arrived go to the SSD in whole MIRROR_TAIL_STEP
 * units (last: all of them), so that when the body is complete at most
 * one such write is still in flight for the store to wait for. A write
 * that cannot be made fails the writer: the store then writes the tail
 * itself. */
#define MIRROR_TAIL_STEP (256u * 1024)
static void tail_put(ofetch *f, int last) {
    size_t H = objstore_ram_head();
    if (f->blen <= H) return;
    size_t have = f->blen - H;
    size_t upto = last ? have : have / MIRROR_TAIL_STEP * MIRROR_TAIL_STEP;
    if (upto <= f->tw_done) return;
    (void)ssdtail_writer_put(f->tw, f->tw_done, upto - f->tw_done, f->buf + H + f->tw_done);
    f->tw_done = upto;
}

static int cb_headers(http_parser *hp) {
    oconn *oc = hp->data;
    ofetch *f = oc->f;
    if (!f) return -1;
    f->headers = 1;
    f->status = hp->status_code;
    f->clen = (hp->flags & F_CONTENTLENGTH) ? (long long)hp->content_length : -1;
    long long max = MIRROR_STORE_MAX;
    if (cfg.proto_max_bulk_len > 0 && cfg.proto_max_bulk_len < max) max = cfg.proto_max_bulk_len;
    if (f->status == 200) {
        f->keep = f->clen < 0 || f->clen <= max;
        http_etag_acc_drop(f->tag);
        f->tag = f->keep ? http_etag_acc_new() : NULL;
        size_t H = objstore_ram_head();
        ssdtail_writer_drop(f->tw, NULL);
        f->tw = NULL;
        f->tw_done = 0;
        if (f->keep && f->clen > 0 && (size_t)f->clen > H && H % 4096 == 0 && ssdtail_active())
            f->tw = ssdtail_writer_open((size_t)f->clen - H);
        if (f->clen >= 0) {
            for (waiter *wt = f->waiters; wt; wt = wt->next)
                if (wt->k && plain_get(&wt->w)) waiter_stream_head(f, wt);
        }
        if (!f->keep) f->joinable = 0;
    } else {
        f->keep = 1;
        f->joinable = 0;
    }
    return 0;
}

static int cb_body(http_parser *hp, const char *p, size_t n) {
    oconn *oc = hp->data;
    ofetch *f = oc->f;
    if (!f) return -1;
    long long max = f->status == 200 ? MIRROR_STORE_MAX : MIRROR_OTHER_MAX;
    if (cfg.proto_max_bulk_len > 0 && f->status == 200 && cfg.proto_max_bulk_len < max) max = cfg.proto_max_bulk_len;
    if (f->keep) {
        if ((long long)(f->blen + n) > max) {
            /* Too large to keep: the streaming waiters still get it all. */
            f->keep = 0;
            f->joinable = 0;
            ssdtail_writer_drop(f->tw, f->buf); /* frees the buffer after its writes */
            f->tw = NULL;
            f->buf = NULL;
            f->blen = f->bcap = 0;
            http_etag_acc_drop(f->tag);
            f->tag = NULL;
        } else {
            /* One byte more for a terminating NUL: command arguments are
             * C strings. */
            if (f->blen + n + 1 > f->bcap) {
                char *nb;
                size_t nc;
                if (!f->buf && f->clen >= 0 && (size_t)f->clen >= n) {
                    /* The whole body at once, page-aligned: the store
                     * writes a tail's whole chunks to the SSD from here
                     * (ssdtail_write) instead of copying them. */
                    nc = ((size_t)f->clen + 1 + 4095) & ~(size_t)4095;
                    nb = aligned_alloc(4096, nc);
                } else {
                    nc = f->bcap ? f->bcap : 16384;
                    while (nc < f->blen + n + 1) nc *= 2;
                    if (f->clen >= 0 && (size_t)f->clen >= f->blen + n && nc > (size_t)f->clen + 1)
                        nc = (size_t)f->clen + 1;
                    nb = realloc(f->buf, nc);
                }
                if (!nb) return -1;
                f->buf = nb;
                f->bcap = nc;
            }
            memcpy(f->buf + f->blen, p, n);
            f->blen += n;
            f->buf[f->blen] = '\0';
            if (f->tag && f->status == 200) http_etag_acc_add(f->tag, p, n);
            if (f->tw) tail_put(f, 0);
        }
    }
    for (waiter *wt = f->waiters; wt; wt = wt->next)
        if (wt->streaming) waiter_send(wt, p, n);
    for (waiter *wt = f->waiters; wt; wt = wt->next)
        if (wt->streaming && wt->k) session_client_flush(&wt->k->c);
    return 0;
}

static int cb_complete(http_parser *hp) {
    oconn *oc = hp->data;
    oc->done = 1;
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings osettings = {
    .on_headers_complete = cb_headers,
    .on_body = cb_body,
    .on_message_complete = cb_complete,
};

/* ---- Fetches ---------------------------------------------------------------- */

/* The fetch ends: out of this worker's table and of the registry (its
 * remote waiters are kept in f->remote for remote_notify). */
static void fetch_unlink(ofetch *f) {
    for (ofetch **pp = &fetches; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    pthread_mutex_lock(&glock);
    for (gentry **pp = &gtab; *pp; pp = &(*pp)->next) {
        gentry *g = *pp;
        if (g->owner == f->owner && g->klen == f->klen && memcmp(g->key, f->key, f->klen) == 0) {
            *pp = g->next;
            f->remote = g->remote;
            free(g->key);
            free(g);
            /* Written under glock, read without it by mirror_ended
             * (before the store lookup that precedes a miss). */
            __atomic_store_n(&ended, ended + 1, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&glock);
}

enum { REMOTE_AGAIN, REMOTE_STATUS };

typedef struct rjob {
    uint64_t cid;
    int kind, status;
    char *body;
    size_t blen;
} rjob;

static rwait *rwait_take(uint64_t cid) {
    for (rwait **pp = &rwaits; *pp; pp = &(*pp)->next)
        if ((*pp)->cid == cid) {
            rwait *r = *pp;
            *pp = r->next;
            return r;
        }
    return NULL;
}

/* On the waiting worker: the outcome of the fetch its client waited for. */
static void remote_job(void *arg) {
    rjob *j = arg;
    rwait *r = rwait_take(j->cid);
    if (r) {
        conn *k = r->k;
        http_set_waiting(k, 0);
        if (j->kind == REMOTE_AGAIN) {
            http_serve_again(k, r->key, r->klen, &r->w);
        } else {
            char head[1024];
            size_t hl = http_head(head, sizeof(head), j->status, (long long)j->blen, NULL, NULL,
                                  j->status >= 500 ? "Content-Type: text/plain\r\n" : NULL, &r->w);
            reply_raw(&k->c, head, hl);
            if (r->w.method == HTTP_M_GET) reply_raw(&k->c, j->body, j->blen);
            http_stat_add(&http_stat.bytes_out, hl + (r->w.method == HTTP_M_GET ? j->blen : 0));
            http_stat_first_byte(r->w.t0_us);
            if (r->w.close) client_flag_on(&k->c, CLIENT_CLOSE_AFTER_REPLY);
        }
        free(r->w.inm);
        free(r->key);
        free(r);
        if (!http_waiting(k)) http_resume(k); /* a miss again waits for a fetch of its own */
    }
    free(j->body);
    free(j);
}

static void remote_notify(ofetch *f, int kind, int status, const char *body, size_t blen) {
    while (f->remote) {
        rwaiter *rw = f->remote;
        f->remote = rw->next;
        rjob *j = calloc(1, sizeof(*j));
        if (j) {
            j->cid = rw->cid;
            j->kind = kind;
            j->status = status;
            if (kind == REMOTE_STATUS && blen && (j->body = malloc(blen))) {
                memcpy(j->body, body, blen);
                j->blen = blen;
            }
            net_post(rw->wid, remote_job, j);
        }
        free(rw);
    }
}

/* A miss enters the registry, in one step under glock so that two
 * workers missing the same key at once start one fetch between them:
 * REG_JOINED, it joined the fetch another worker has in flight for key (a
 * remote waiter, answered by remote_job); REG_AGAIN, there is none but a
 * fetch ended since the request looked in the store (w->mirror_seen): the
 * object may be stored now, so the request looks again; REG_OWNER, f (the
 * caller's new fetch, key set) is in the registry now and the caller
 * starts it; REG_ALONE, the same but without the registry (no memory: the
 * fetch goes on without remote waiters). */
enum { REG_JOINED, REG_AGAIN, REG_OWNER, REG_ALONE };

static int registry_enter(conn *k, ofetch *f, http_want *w) {
    rwait *r = calloc(1, sizeof(*r));
    rwaiter *rw = calloc(1, sizeof(*rw));
    gentry *g = calloc(1, sizeof(*g));
    char *kc = malloc(f->klen + 1);
    char *gk = malloc(f->klen + 1);
    if (!r || !rw || !g || !kc || !gk) {
        free(r);
        free(rw);
        free(g);
        free(kc);
        free(gk);
        return REG_ALONE;
    }
    memcpy(kc, f->key, f->klen + 1);
    memcpy(gk, f->key, f->klen + 1);
    int out = REG_OWNER;
    pthread_mutex_lock(&glock);
    gentry *x = gtab;
    for (; x; x = x->next)
        if (x->owner != f->owner && x->klen == f->klen && memcmp(x->key, f->key, f->klen) == 0) break;
    if (x) {
        rw->wid = k->w->id;
        rw->cid = k->c.id;
        rw->next = x->remote;
        x->remote = rw;
        rw = NULL;
        out = REG_JOINED;
    } else if (ended != w->mirror_seen) {
        out = REG_AGAIN;
    } else {
        g->key = gk;
        g->klen = f->klen;
        g->owner = f->owner;
        g->next = gtab;
        gtab = g;
        g = NULL;
        gk = NULL;
    }
    pthread_mutex_unlock(&glock);
    free(rw);
    free(g);
    free(gk);
    if (out != REG_JOINED) {
        free(r);
        free(kc);
        return out;
    }
    r->k = k;
    r->cid = k->c.id;
    r->key = kc;
    r->klen = f->klen;
    r->w = *w;
    w->inm = NULL;
    r->next = rwaits;
    rwaits = r;
    http_stat_add(&http_stat.coalesced, 1);
    return REG_JOINED;
}

uint64_t mirror_ended(void) { return __atomic_load_n(&ended, __ATOMIC_ACQUIRE); }

static void fetch_free(ofetch *f) {
    while (f->waiters) {
        waiter *wt = f->waiters;
        f->waiters = wt->next;
        free(wt->w.inm);
        free(wt);
    }
    if (f->timer) event_free(f->timer);
    if (f->throttle) event_free(f->throttle);
    http_etag_acc_drop(f->tag);
    ssdtail_writer_drop(f->tw, f->buf); /* frees the buffer, after the writes from it */
    free(f->key);
    free(f);
}

/* The connection f used: back to the idle pool, or closed. */
static void release_oconn(ofetch *f, int reusable) {
    oconn *oc = f->oc;
    if (!oc) return;
    f->oc = NULL;
    oc->f = NULL;
    /* A send still in flight (an origin that answered before reading the
     * whole request) holds the request's buffer: not reused. */
    if (use_uring && oc->op[OP_SEND]) reusable = 0;
    if (reusable && nidle < MIRROR_IDLE_MAX) {
        oc->olen = oc->osent = 0;
        oc->done = oc->got = 0;
        oc->reused = 1;
        http_parser_init(&oc->hp, HTTP_RESPONSE);
        oc->hp.data = oc;
        if (!use_uring) event_del(oc->wev);
        oconn_read(oc, 1);
        oc->next = idle;
        idle = oc;
        nidle++;
        return;
    }
    oconn_free(oc);
}

/* Answer each waiter (fn), then let it go on with its next requests. The
 * fetch is out of the table already. */
static void deliver_each(ofetch *f, void (*fn)(ofetch *f, waiter *wt, void *arg), void *arg) {
    f->delivering = 1;
    for (waiter *wt = f->waiters; wt; wt = wt->next) {
        conn *k = wt->k;
        if (!k) continue;
        fn(f, wt, arg);
        wt->k = NULL; /* it leaves the fetch now */
        if (wt->w.close) client_flag_on(&k->c, CLIENT_CLOSE_AFTER_REPLY);
        http_resume(k);
    }
    f->delivering = 0;
}

static void answer_complete(ofetch *f, waiter *wt, void *arg) {
    (void)arg;
    conn *k = wt->k;
    if (wt->streaming) return; /* it has it all */
    if (f->status == 200 && f->keep) {
        http_answer_value(k, &wt->w, f->buf ? f->buf : "", f->blen);
        http_stat_first_byte(wt->w.t0_us);
        return;
    }
    if (f->status == 200) {
        /* Passed through while it joined: it cannot have it. */
        http_answer_status(k, &wt->w, 502, "origin object too large to hold");
        return;
    }
    char head[1024];
    size_t hl = http_head(head, sizeof(head), f->status, (long long)f->blen, NULL, NULL, NULL, &wt->w);
    waiter_send(wt, head, hl);
    if (wt->w.method == HTTP_M_GET) waiter_send(wt, f->buf, f->blen);
    http_stat_first_byte(wt->w.t0_us);
}

static void fetch_done(ofetch *f) {
    /* Stored before it leaves the registry: a miss elsewhere either
     * joins it or, seeing it ended (mirror_ended), finds it stored. The
     * tail's last piece goes, and the writes still in flight are waited
     * for (the pieces before went as they came). */
    if (f->status == 200 && f->keep) {
        const char *body = f->buf ? f->buf : "";
        int tail_ok = 0;
        if (f->tw) {
            tail_put(f, 1);
            tail_ok = ssdtail_writer_finish(f->tw);
        }
        for (waiter *wt = f->waiters; wt; wt = wt->next)
            if (wt->k) {
                uint64_t tag = f->tag ? http_etag_acc_end(f->tag) : http_etag_hash(body, f->blen);
                f->tag = NULL;
                size_t H = objstore_ram_head();
                if (tail_ok) ssdtail_offer(f->tw, body + H, f->blen - H);
                http_store(wt->k, f->key, f->klen, body, f->blen, tag);
                if (tail_ok && ssdtail_offer_end()) f->tw = NULL;
                break;
            }
    }
    fetch_unlink(f);
    if (f->timer) evtimer_del(f->timer);
    int reusable = !f->oc->eof && http_should_keep_alive(&f->oc->hp);
    release_oconn(f, reusable);
    deliver_each(f, answer_complete, NULL);
    if (f->status == 200) remote_notify(f, REMOTE_AGAIN, 0, NULL, 0);
    else if (f->keep) remote_notify(f, REMOTE_STATUS, f->status, f->buf, f->blen);
    else remote_notify(f, REMOTE_STATUS, 502, "origin answer too large to hold\n", 32);
    fetch_free(f);
}

typedef struct fail_arg {
    int status;
    const char *why;
} fail_arg;

static void answer_fail(ofetch *f, waiter *wt, void *arg) {
    (void)f;
    fail_arg *a = arg;
    if (wt->streaming) {
        /* Its head promised bytes that will not come. */
        client_flag_on(&wt->k->c, CLIENT_CLOSE_ASAP);
        return;
    }
    http_answer_status(wt->k, &wt->w, a->status, a->why);
}

static void fetch_fail(ofetch *f, int status, const char *why) {
    oconn *oc = f->oc;
    if (oc && oc->reused && !oc->got && !f->retried && status == 502) {
        /* An idle connection the origin had closed: once more, afresh. */
        f->retried = 1;
        release_oconn(f, 0);
        fetch_start(f);
        return;
    }
    fetch_unlink(f);
    if (f->timer) evtimer_del(f->timer);
    release_oconn(f, 0);
    http_stat_add(&http_stat.fetch_failed, 1);
    log_verbose("HTTP mirror: fetching '%.*s' failed: %s", (int)(f->klen > 200 ? 200 : f->klen), f->key, why);
    fail_arg a = {status, why};
    deliver_each(f, answer_fail, &a);
    char msg[128];
    int ml = snprintf(msg, sizeof(msg), "%s\n", why);
    remote_notify(f, REMOTE_STATUS, status, msg, (size_t)ml);
    fetch_free(f);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    ofetch *f = arg;
    if (f->fail_status) fetch_fail(f, f->fail_status, "cannot reach the origin");
    else fetch_fail(f, 504, "origin timed out");
}

static void arm_timer(ofetch *f) {
    struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)((timeout_ms % 1000) * 1000)};
    evtimer_add(f->timer, &tv);
}

/* Some streaming waiter has more than mark bytes of output unsent. */
static int backlog(const ofetch *f, size_t mark) {
    for (const waiter *wt = f->waiters; wt; wt = wt->next)
        if (wt->streaming && wt->k && wt->k->c.olen - wt->k->c.osent > mark) return 1;
    return 0;
}

static int fetch_after_read(ofetch *f);
static void on_throttle(evutil_socket_t fd, short what, void *arg);

static void on_oread(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    oconn *oc = arg;
    char buf[MIRROR_RECV_BUF];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    oc_input(oc, buf, n);
}

/* n bytes (0: end of file, -1: an error) came from oc. */
static void oc_input(oconn *oc, const char *buf, ssize_t n) {
    ofetch *f = oc->f;
    if (!f) {
        /* Idle: the origin closed it (or sent what nobody asked for). */
        idle_remove(oc);
        oconn_free(oc);
        return;
    }
    if (n < 0) {
        fetch_fail(f, 502, "origin connection reset");
        return;
    }
    if (n == 0) {
        /* End of file: it ends a response without a length. */
        http_parser_execute(&oc->hp, &osettings, NULL, 0);
        oc->eof = 1;
        if (oc->done) fetch_done(f);
        else fetch_fail(f, 502, "origin closed the connection");
        return;
    }
    oc->got = 1;
    arm_timer(f);
    f->delivering = 1;
    size_t used = http_parser_execute(&oc->hp, &osettings, buf, (size_t)n);
    f->delivering = 0;
    (void)used;
    if (fetch_after_read(f) == 0 && backlog(f, MIRROR_OBUF_HIGH)) {
        /* A waiter reads slower than the origin sends: wait for it. */
        oconn_read(oc, 0);
        evtimer_del(f->timer);
        f->paused_at = monotime_ms();
        if (!f->throttle) f->throttle = evtimer_new(tbase, on_throttle, f);
        struct timeval tv = {0, 5000};
        if (f->throttle) evtimer_add(f->throttle, &tv);
    }
}

/* After body bytes were handed out: the waiters that went meanwhile are
 * dropped; the fetch ends if complete, failed or nobody waits. 1 when f
 * is gone. */
static int fetch_after_read(ofetch *f) {
    oconn *oc = f->oc;
    for (waiter **pp = &f->waiters; *pp;) {
        waiter *wt = *pp;
        if (!wt->k && !oc->done) {
            *pp = wt->next;
            free(wt->w.inm);
            free(wt);
            f->nwaiters--;
        } else {
            pp = &wt->next;
        }
    }
    if (oc->done) {
        fetch_done(f);
        return 1;
    }
    enum http_errno e = HTTP_PARSER_ERRNO(&oc->hp);
    if (e != HPE_OK) {
        fetch_fail(f, 502, http_errno_description(e));
        return 1;
    }
    if (!f->waiters) {
        /* Nobody waits here any more: the fetch stops (nothing is stored);
         * waiters on other workers fetch it themselves. */
        fetch_unlink(f);
        release_oconn(f, 0);
        remote_notify(f, REMOTE_AGAIN, 0, NULL, 0);
        fetch_free(f);
        return 1;
    }
    return 0;
}

static void on_throttle(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    ofetch *f = arg;
    if (backlog(f, MIRROR_OBUF_LOW)) {
        if (monotime_ms() - f->paused_at < timeout_ms) {
            struct timeval tv = {0, 5000};
            evtimer_add(f->throttle, &tv);
            return;
        }
        /* Too slow for too long: those still behind are dropped. */
        f->delivering = 1;
        for (waiter *wt = f->waiters; wt; wt = wt->next)
            if (wt->streaming && wt->k && wt->k->c.olen - wt->k->c.osent > MIRROR_OBUF_LOW) {
                conn *k = wt->k;
                wt->k = NULL;
                client_flag_on(&k->c, CLIENT_CLOSE_ASAP);
                session_client_flush(&k->c);
            }
        f->delivering = 0;
        if (fetch_after_read(f)) return;
    }
    f->paused_at = 0;
    oconn_read(f->oc, 1);
    arm_timer(f);
}

/* Percent-encode the key into the request path. */
static size_t enc_key(char *o, const char *k, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)k[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
            ch == '.' || ch == '_' || ch == '~' || ch == '/') {
            o[j++] = (char)ch;
        } else {
            o[j++] = '%';
            o[j++] = hex[ch >> 4];
            o[j++] = hex[ch & 15];
        }
    }
    return j;
}

/* A failure while a request is being served is answered from the loop
 * (the timer, now): never from inside the module's process(). */
static void fail_later(ofetch *f, int status) {
    f->fail_status = status;
    struct timeval tv = {0, 0};
    evtimer_add(f->timer, &tv);
}

static void fetch_start(ofetch *f) {
    oconn *oc = idle;
    if (oc) {
        idle = oc->next;
        nidle--;
    } else {
        oc = oconn_new(tbase);
        if (!oc) {
            fail_later(f, 502);
            return;
        }
        http_parser_init(&oc->hp, HTTP_RESPONSE);
        oc->hp.data = oc;
    }
    oc->f = f;
    oconn_read(oc, 1);
    f->oc = oc;
    size_t cap = strlen(origin_prefix) + f->klen * 3 + strlen(origin_host) + 128;
    free(oc->out);
    oc->out = malloc(cap);
    if (!oc->out) {
        fail_later(f, 502);
        return;
    }
    size_t o = (size_t)snprintf(oc->out, cap, "GET %s/", origin_prefix);
    o += enc_key(oc->out + o, f->key, f->klen);
    o += (size_t)snprintf(oc->out + o, cap - o, " HTTP/1.1\r\nHost: %s\r\nUser-Agent: goblin\r\n\r\n", origin_host);
    oc->olen = o;
    oc->osent = 0;
    f->fail_status = 0;
    arm_timer(f);
    if (oconn_flush(oc) != 0) fail_later(f, 502);
}

int mirror_miss(conn *k, const char *key, size_t klen, http_want *w) {
    tbase = self_worker(k)->base;
    ofetch *f = NULL;
    for (ofetch *x = fetches; x; x = x->next)
        if (x->joinable && x->klen == klen && memcmp(x->key, key, klen) == 0) {
            f = x;
            break;
        }
    waiter *wt = calloc(1, sizeof(*wt));
    if (!wt) {
        http_answer_status(k, w, 503, "out of memory");
        return 0;
    }
    if (f) {
        wt->k = k;
        wt->w = *w;
        w->inm = NULL;
        http_set_waiting(k, 1);
        http_stat_add(&http_stat.coalesced, 1);
        wt->next = f->waiters;
        f->waiters = wt;
        f->nwaiters++;
        /* The head came already: a plain GET catches up from what is kept. */
        if (f->headers && f->status == 200 && f->clen >= 0 && f->keep && plain_get(&wt->w)) {
            waiter_stream_head(f, wt);
            waiter_send(wt, f->buf, f->blen);
        }
        return 0;
    }
    f = calloc(1, sizeof(*f));
    if (!f || !(f->key = malloc(klen + 1))) {
        free(f);
        free(wt);
        http_answer_status(k, w, 503, "out of memory");
        return 0;
    }
    memcpy(f->key, key, klen);
    f->key[klen] = '\0';
    f->klen = klen;
    f->owner = k->w->id;
    int reg = registry_enter(k, f, w);
    if (reg == REG_JOINED || reg == REG_AGAIN) {
        free(f->key);
        free(f);
        free(wt);
        if (reg == REG_JOINED) http_set_waiting(k, 1);
        return reg == REG_AGAIN;
    }
    wt->k = k;
    wt->w = *w;
    w->inm = NULL;
    http_set_waiting(k, 1);
    f->joinable = 1;
    f->clen = -1;
    f->waiters = wt;
    f->nwaiters = 1;
    f->timer = evtimer_new(tbase, on_timeout, f);
    f->next = fetches;
    fetches = f;
    http_stat_add(&http_stat.fetches, 1);
    fetch_start(f);
    return 0;
}

void mirror_conn_gone(conn *k) {
    for (rwait **pp = &rwaits; *pp; pp = &(*pp)->next)
        if ((*pp)->k == k) {
            /* The owner's answer will find nobody. */
            rwait *r = *pp;
            *pp = r->next;
            free(r->w.inm);
            free(r->key);
            free(r);
            return;
        }
    for (ofetch *f = fetches; f; f = f->next) {
        for (waiter **pp = &f->waiters; *pp; pp = &(*pp)->next) {
            waiter *wt = *pp;
            if (wt->k != k) continue;
            wt->k = NULL;
            if (f->delivering) return;
            *pp = wt->next;
            free(wt->w.inm);
            free(wt);
            f->nwaiters--;
            if (!f->waiters) {
                /* Nobody waits here any more: the fetch stops. */
                fetch_unlink(f);
                release_oconn(f, 0);
                remote_notify(f, REMOTE_AGAIN, 0, NULL, 0);
                fetch_free(f);
            }
            return;
        }
    }
}

void mirror_thread_exit(void) {
    while (idle) {
        oconn *oc = idle;
        idle = oc->next;
        nidle--;
        oconn_free(oc);
    }
    if (ring_state == 1) {
        /* The cancelled operations of the connections let go complete
         * soon; an origin fetch still in flight is not waited for. */
        struct __kernel_timespec ts = {0, 200 * 1000 * 1000};
        struct io_uring_cqe *cqe;
        while (ring_pending > 0 && io_uring_wait_cqe_timeout(&ring, &cqe, &ts) == 0) ring_reap(cqe);
        event_free(ring_ev);
        ring_ev = NULL;
        close(ring_efd);
        ring_efd = -1;
        io_uring_queue_exit(&ring);
    }
    ring_state = 0;
}
