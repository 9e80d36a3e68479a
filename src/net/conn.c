/* conn.c -- connection life cycle: read, parse, execute, write.
 *
 * Reads append to the query buffer; every complete command in it runs in
 * order (pipelining). The replies are not written there: a connection
 * with output waiting goes on its worker's pending-write list (once), and
 * at the end of the worker's loop iteration, after every callback of that
 * iteration ran, conn_write_pending writes each listed connection's output
 * in one pass (Redis's beforeSleep / handleClientsWithPendingWrites). Only
 * what the socket refuses waits for EV_WRITE, and the EV_WRITE handler
 * writes at once. With appendfsync always, replies wait for the AOF fsync
 * instead: a connection whose output follows records this thread has not
 * yet handed to the writer is held from the start (conn_flush), and at the
 * end of the iteration the held replies get their target offset
 * (conn_durable_flush). A client.handoff, a close (CLOSE_ASAP) and output
 * that is already held skip the list and are dealt with at once. A
 * protocol error gets Redis's "-ERR Protocol error: ..." reply, then the
 * connection closes once that reply is flushed; no other connection is
 * affected. A connection from a TLS listener (k->ssl) does the same
 * through OpenSSL (tlsio.c): its handshake runs from its events first,
 * and its reads go on while OpenSSL holds bytes no socket event will
 * announce; the plaintext path only tests k->ssl. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cmd/server/acl.h"
#include "cmd/blocking.h"
#include "cmd/command.h"
#include "session/reply.h"
#include "cmd/stream.h"
#include "net/internal.h"
#include "net/net.h"
#include "session/session.h"
#include "persist/aof.h"
#include "cmd/repl/repl.h"
#include "base/config.h"
#include "base/log.h"
#include "base/tls.h"
#include "base/tstat.h"
#include "util/sockio.h"
#include "util/strutil.h"

#define READ_CHUNK (16 * 1024)
#define REPLYBUF_MAX (16 * 1024)   /* Redis's PROTO_REPLY_CHUNK_BYTES */
#define REPLYBUF_MIN 1024          /* PROTO_REPLY_MIN_BYTES */


static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The wall clock at the kernel tick's resolution: enough for CLIENT LIST's
 * idle and age (seconds) and the timeout directive. */
static int64_t coarse_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A read or a write: Redis's last interaction, for CLIENT LIST's idle,
 * and for the query buffer's idle check. */
static void conn_interacted(conn *k) {
    __atomic_store_n(&k->c.last_ms, coarse_ms(), __ATOMIC_RELAXED);
    k->qio++;
}

/* What CLIENT LIST shows of the query buffer, published by the owner:
 * qcap counts the byte kept for the parser's terminating NUL, as an sds
 * string's alloc does not. The arguments of a partial request already
 * parsed are out of qbuf and count as argv-mem, as in Redis, which moves
 * them out of its buffer. Here they stay in it, in place, until the
 * request completes: qbuf-free is the room truly left after them (Redis's
 * is larger by the parsed bytes while a request is partial). */
static void partial_of(const conn *k, size_t *parsed, size_t *argv_len) {
    *parsed = *argv_len = 0;
    if (k->proto->partial) k->proto->partial(k, parsed, argv_len);
}

/* parsed, argv_len: what partial_of says now. */
static void publish_qbuf_as(conn *k, size_t parsed, size_t argv_len) {
    if (parsed > k->qlen) parsed = k->qlen;
    __atomic_store_n(&k->c.qbuf_len, k->qlen - parsed, __ATOMIC_RELAXED);
    __atomic_store_n(&k->c.qbuf_free, k->qcap ? k->qcap - 1 - k->qlen : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&k->c.qbuf_argv, argv_len, __ATOMIC_RELAXED);
    session_client_mem_note(&k->c);
}

static void publish_qbuf(conn *k) {
    size_t parsed, argv_len;
    partial_of(k, &parsed, &argv_len);
    publish_qbuf_as(k, parsed, argv_len);
}

/* The query buffer grows as Redis 7.0's sds query buffer does, so CLIENT
 * LIST's qbuf-free reads the same: exactly what is needed (non-greedy)
 * for the first 16 KiB and for a big argument, else twice the need (up
 * to 1 MiB more). The allocator's spare bytes count, less the header an
 * sds string of that size has. */
static size_t sds_hdr(size_t n) { return n < 256 ? 3 : n < 65536 ? 5 : n < 0xffffffffULL ? 9 : 17; }

static int qbuf_room(conn *k, size_t add, int greedy) {
    if (k->qcap && k->qcap - 1 - k->qlen >= add) return 0;
    size_t len = k->qlen + add;
    if (greedy) len = len < 1024 * 1024 ? len * 2 : len + 1024 * 1024;
    size_t hdr = sds_hdr(len);
    char *nb = realloc(k->qbuf, hdr + len + 1);
    if (!nb) return -1;
    k->qbuf = nb;
    k->qcap = malloc_usable_size(nb) - hdr;
    return 0;
}

/* To exactly size bytes of data (none: freed). */
static void qbuf_resize(conn *k, size_t size) {
    if (!size) {
        free(k->qbuf);
        k->qbuf = NULL;
        k->qcap = 0;
        return;
    }
    char *nb = realloc(k->qbuf, size + 1);
    if (!nb) return;
    k->qbuf = nb;
    k->qcap = size + 1;
}

/* Redis 7.0's clientsCronResizeQueryBuffer, once per tick (Redis's hz 10
 * cron visits a client as often): a buffer wasting more than 4 KiB loses
 * its free space when nothing was read or written for more than 2 s (all
 * of it, freed when empty), or is trimmed when over 32 KiB and more than
 * twice its peak use since the last pass (not below that peak, what it
 * holds, or the argument being read). */
static void conn_qbuf_cron(conn *k, int64_t now) {
    if (k->qio != k->qio_seen) {
        k->qio_seen = k->qio;
        k->qactive_ms = now;
    }
    size_t need = k->proto->pending_hint(k);
    if (k->qcap) {
        size_t alloc = k->qcap - 1;
        if (alloc - k->qlen > 4096) {
            if (now - k->qactive_ms > 2000) {
                qbuf_resize(k, k->qlen);
            } else if (alloc > 32 * 1024 && alloc / 2 > k->qpeak) {
                size_t size = k->qlen;
                if (size < k->qpeak) size = k->qpeak;
                if (size < need) size = need;
                qbuf_resize(k, size);
            }
            publish_qbuf(k);
        }
    }
    k->qpeak = k->qlen > need ? k->qlen : need;
}

/* Redis 7.0's clientsCronResizeOutputBuffer on the figures: a buffer whose
 * peak is under half its size shrinks to the peak (at least 1 KiB); a full
 * one doubles (up to 16 KiB); the peak goes back to the buffer's current
 * use every peak reset period. */
static void conn_replybuf_cron(conn *k, int64_t now) {
    if (!__atomic_load_n(&session_replybuf_resizing, __ATOMIC_RELAXED)) return;
    size_t next = 0;
    if (k->rbs / 2 >= REPLYBUF_MIN && k->rbp < k->rbs / 2) {
        next = k->rbp + 1 > REPLYBUF_MIN ? k->rbp + 1 : REPLYBUF_MIN;
        __atomic_fetch_add(&session_stat_replybuf_shrinks, 1, __ATOMIC_RELAXED);
    } else if (k->rbs * 2 < REPLYBUF_MAX * 2 && k->rbp == k->rbs) {
        next = k->rbs * 2 < REPLYBUF_MAX ? k->rbs * 2 : REPLYBUF_MAX;
        __atomic_fetch_add(&session_stat_replybuf_expands, 1, __ATOMIC_RELAXED);
    }
    long reset = __atomic_load_n(&session_replybuf_peak_reset_ms, __ATOMIC_RELAXED);
    if (reset >= 0 && now - k->rbp_reset_ms >= reset) {
        size_t pending = k->c.olen - k->c.osent;
        k->rbp = pending < k->rbs ? pending : k->rbs;
        k->rbp_reset_ms = now;
    }
    if (next) k->rbs = next;
    __atomic_store_n(&k->c.rbs, k->rbs, __ATOMIC_RELAXED);
    __atomic_store_n(&k->c.rbp, k->rbp, __ATOMIC_RELAXED);
}

static void conn_on_read(evutil_socket_t fd, short what, void *arg);
static void conn_on_write(evutil_socket_t fd, short what, void *arg);

static void durable_unlink(conn *k) {
    conn **head = k->dwait == 1 ? &k->w->durable : &k->w->dbatch;
    if (k->dprev) k->dprev->dnext = k->dnext;
    else *head = k->dnext;
    if (k->dnext) k->dnext->dprev = k->dprev;
    k->dprev = k->dnext = NULL;
    k->dwait = 0;
}

/* The pending-write list (w->pending): intrusive, each connection at
 * most once (k->pwait). */
static void pending_add(conn *k) {
    if (k->pwait) return;
    worker *w = k->w;
    k->pwait = 1;
    k->pprev = NULL;
    k->pnext = w->pending;
    if (w->pending) w->pending->pprev = k;
    w->pending = k;
}

static void pending_unlink(conn *k) {
    if (k->pprev) k->pprev->pnext = k->pnext;
    else k->w->pending = k->pnext;
    if (k->pnext) k->pnext->pprev = k->pprev;
    k->pprev = k->pnext = NULL;
    k->pwait = 0;
}

/* The run lists, intrusive like the pending one, each connection on at
 * most one (k->rwait): --net async's w->rready (1) and conn_read_batch's
 * reads made (2); the turns to run again, w->more (3), and the pass of
 * conn_run_more running them (4). */
static _Thread_local conn *rdone_tl; /* conn_read_batch's, per worker thread */
static _Thread_local conn *mrun_tl;  /* conn_run_more's */

static void rlist_push(conn **head, conn *k, int which) {
    if (which == 1 && !*head) k->w->rready_tail = k;
    k->rwait = which;
    k->rprev = NULL;
    k->rnext = *head;
    if (*head) (*head)->rprev = k;
    *head = k;
}

static void rlist_unlink(conn *k) {
    conn **head = k->rwait == 1 ? &k->w->rready : k->rwait == 2 ? &rdone_tl : k->rwait == 3 ? &k->w->more : &mrun_tl;
    if (k->rwait == 1 && !k->rnext) k->w->rready_tail = k->rprev;
    if (k->rprev) k->rprev->rnext = k->rnext;
    else *head = k->rnext;
    if (k->rnext) k->rnext->rprev = k->rprev;
    k->rprev = k->rnext = NULL;
    k->rwait = 0;
}

/* The held list: connections CLIENT PAUSE holds, from every worker, in the
 * order they were held (Redis's postponed-clients list), each at most once
 * (k->paused). Under hold_lock: the list, its numbering (zseq from
 * hold_seq) and the release in progress. When the pause mode in force
 * becomes less restrictive, every entry numbered up to hold_seq at that
 * moment is released (release_upto): one drain job at a time walks the
 * list from its head, running each connection on its own worker and
 * posting itself to the next entry's worker, so held clients run in the
 * order they were held across workers too. A client the pause still
 * applies to is held again at the tail, past release_upto. While a
 * release is in progress (releasing), a command the released mode would
 * have held joins the tail and the release, so it does not overtake the
 * clients held before it. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static conn *hold_head, *hold_tail;
static uint64_t hold_seq, release_upto;
static int release_mode;   /* the mode being released (SESSION_PAUSE_*) */
static int release_posted; /* a drain job is posted or running */
static int releasing;      /* atomics: a release is in progress */
static _Thread_local conn *draining; /* the connection the drain runs */
static int64_t drain_wait_since;     /* hold_lock: the drain waits for retries */

static void held_link_locked(conn *k) {
    k->paused = 1;
    k->zseq = ++hold_seq;
    k->znext = NULL;
    k->zprev = hold_tail;
    if (hold_tail) hold_tail->znext = k;
    else hold_head = k;
    hold_tail = k;
}

static void held_unlink_locked(conn *k) {
    if (k->zprev) k->zprev->znext = k->znext;
    else hold_head = k->znext;
    if (k->znext) k->znext->zprev = k->zprev;
    else hold_tail = k->zprev;
    k->zprev = k->znext = NULL;
    k->paused = 0;
}

/* Hold k (pause: the pause in force holds its command; else it joins the
 * release in progress, if any). 0: not held. */
static int held_add(conn *k, int pause) {
    pthread_mutex_lock(&hold_lock);
    int in_release = hold_head && hold_head->zseq <= release_upto;
    if (!pause && !in_release) {
        pthread_mutex_unlock(&hold_lock);
        return 0;
    }
    held_link_locked(k);
    if (!pause) release_upto = k->zseq;
    pthread_mutex_unlock(&hold_lock);
    client_flag_on(&k->c, CLIENT_PAUSED);
    return 1;
}

static void held_remove(conn *k) {
    pthread_mutex_lock(&hold_lock);
    held_unlink_locked(k);
    pthread_mutex_unlock(&hold_lock);
    client_flag_off(&k->c, CLIENT_PAUSED);
}

/* The ready list (w->aready): connections that other threads queued
 * output for (net_client_send_async) or marked for closing
 * (net_client_kill) since the worker last looked, so that its drain visits
 * those and not every connection it has. The drain moves the list to
 * w->adrain and visits it from the head. Singly linked under w->qlock; a
 * connection is on at most one of the two, at most once (alisted 1 or 2):
 * one still waiting for its visit is not listed again. */
static void aready_add(conn *k) {
    worker *w = k->w;
    pthread_mutex_lock(&w->qlock);
    if (!k->alisted) {
        k->alisted = 1;
        k->anext = w->aready;
        w->aready = k;
    }
    pthread_mutex_unlock(&w->qlock);
    worker_wake(w);
}

/* Off the list before k goes (no thread can queue for it by then: it has
 * left the registries senders find clients in). */
static void aready_unlink(conn *k) {
    worker *w = k->w;
    pthread_mutex_lock(&w->qlock);
    if (k->alisted) {
        conn **pp = k->alisted == 1 ? &w->aready : &w->adrain;
        while (*pp != k) pp = &(*pp)->anext;
        *pp = k->anext;
        k->alisted = 0;
    }
    pthread_mutex_unlock(&w->qlock);
}

static void conn_free(conn *k) {
    worker *w = k->w;
    if (k->rwait) rlist_unlink(k);
    if (k->dwait) durable_unlink(k);
    if (k->pwait) pending_unlink(k);
    if (k->paused) held_remove(k);
    cmd_stream_client_gone(&k->c);
    cmd_client_gone(&k->c);
    session_unregister(&k->c);
    aready_unlink(k);
    if (k->prev) k->prev->next = k->next;
    else w->conns = k->next;
    if (k->next) k->next->prev = k->prev;
    event_free(k->rev);
    event_free(k->wev);
    if (k->tev) event_free(k->tev);
    if (k->ssl) tlsio_free(k);
    if (k->c.fd >= 0) close(k->c.fd);
    k->proto->close(k);
    free(k->qbuf);
    free(k->c.obuf);
    free(k->c.name);
    free(k->c.lib_name);
    free(k->c.lib_ver);
    free(k->abuf);
    pthread_mutex_destroy(&k->alock);
    free(k);
}

static void conn_refuse(int fd, const char *msg) {
    if (write(fd, msg, strlen(msg)) < 0) { /* best effort */
    }
    close(fd);
    __atomic_fetch_add(&session_stat_rejected, 1, __ATOMIC_RELAXED);
}

static int conn_tls_handshake(conn *k, int first);

/* A TLS connection (tls) gets its refusals as Redis sends them: the
 * maxclients one cannot go out before the handshake (the connection just
 * closes); the protected-mode one goes out through TLS once the handshake
 * is done. */
void conn_accept(worker *w, const net_proto *proto, int tls, int fd, const char *peer, const char *local,
                 int unix_sock) {
    if (cfg.maxclients > 0 && session_clients_count() >= cfg.maxclients) {
        conn_refuse(fd, tls ? "" : proto->refusal(NET_REFUSE_MAXCLIENTS));
        return;
    }
    int refused = !unix_sock && cfg.protected_mode && acl_default_nopass() && !sock_addr_is_local(peer);
    if (refused && !tls) {
        conn_refuse(fd, proto->refusal(NET_REFUSE_PROTECTED));
        return;
    }
    SSL *ssl = NULL;
    if (tls && !(ssl = tls_accept_new(fd))) {
        char eb[256];
        log_warn("Error accepting a client connection: %s", tls_error_text(SSL_ERROR_SSL, eb, sizeof(eb)));
        close(fd);
        return;
    }
    conn *k = calloc(1, sizeof(conn));
    if (!k) {
        if (ssl) SSL_free(ssl);
        close(fd);
        return;
    }
    k->ssl = ssl;
    k->tls_hs = ssl != NULL;
    k->w = w;
    k->proto = proto;
    if (proto->open(k) != 0) {
        if (ssl) SSL_free(ssl);
        free(k);
        close(fd);
        return;
    }
    k->c.fd = fd;
    k->c.conn = k;
    k->c.worker_id = w->id;
    k->c.resp = 2;
    k->c.id = session_next_client_id();
    k->c.ctime_ms = k->c.last_ms = now_ms();
    /* A new client's reply buffer: 16 KiB, peak as large; the reset time
     * is 0, so the first cron pass resets the peak (Redis stamps seconds
     * where it compares milliseconds). */
    k->rbs = k->rbp = REPLYBUF_MAX;
    k->c.rbs = k->c.rbp = REPLYBUF_MAX;
    if (acl_new_client_authenticated()) k->c.flags = CLIENT_AUTHENTICATED; /* not yet visible */
    if (unix_sock) k->c.flags |= CLIENT_UNIX_SOCKET;
    if (ssl) k->c.flags |= CLIENT_TLS;
    else k->c.send_direct = conn_send_direct;
    snprintf(k->c.addr, sizeof(k->c.addr), "%s", peer);
    snprintf(k->c.laddr, sizeof(k->c.laddr), "%s", local);
    pthread_mutex_init(&k->alock, NULL);
    k->rev = event_new(w->base, fd, EV_READ | EV_PERSIST, conn_on_read, k);
    k->wev = event_new(w->base, fd, EV_WRITE | EV_PERSIST, conn_on_write, k);
    event_add(k->rev, NULL);
    k->next = w->conns;
    if (w->conns) w->conns->prev = k;
    w->conns = k;
    session_register(&k->c);
    __atomic_fetch_add(&session_stat_connections, 1, __ATOMIC_RELAXED);
    if (refused) {
        const char *msg = proto->refusal(NET_REFUSE_PROTECTED);
        reply_raw(&k->c, msg, strlen(msg));
        client_flag_on(&k->c, CLIENT_CLOSE_AFTER_REPLY);
        __atomic_fetch_add(&session_stat_rejected, 1, __ATOMIC_RELAXED);
    }
    if (ssl) conn_tls_handshake(k, 1);
}

/* What Redis's reply buffer would hold with pending bytes of output: up
 * to its size (the rest would be in its reply list); its peak follows. */
static void conn_replybuf_use(conn *k, size_t pending) {
    size_t pos = pending < k->rbs ? pending : k->rbs;
    if (pos > k->rbp) {
        k->rbp = pos;
        __atomic_store_n(&k->c.rbp, pos, __ATOMIC_RELAXED);
    }
}

/* Before writing k's output: the counters and figures a write updates. */
static void conn_write_begin(conn *k) {
    client *c = &k->c;
    if (c->olen > c->osent) tstat_add(TSTAT_WRITES, 1);
    conn_replybuf_use(k, c->olen - c->osent);
}

static void conn_wrote(conn *k, size_t n) {
    __atomic_store_n(&k->c.osent, k->c.osent + n, __ATOMIC_RELAXED);
    tstat_add(TSTAT_NET_OUTPUT, (uint64_t)n);
}

static int conn_write_end(conn *k, size_t before);

/* The output buffer to the socket until it is empty (1) or the socket is
 * full (0); -1 on a failed write. */
static int conn_send_out(conn *k) {
    client *c = &k->c;
    while (c->osent < c->olen) {
        ssize_t n = k->ssl ? tlsio_write(k, c->obuf + c->osent, c->olen - c->osent)
                           : write(c->fd, c->obuf + c->osent, c->olen - c->osent);
        if (n > 0) {
            conn_wrote(k, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        return -1;
    }
    return 1;
}

/* Write what we can, now; -1 when the connection must be closed now. A
 * write is an interaction, as in Redis: it stamps CLIENT LIST's idle time
 * and keeps the query buffer from counting as idle. */
static int conn_write(conn *k) {
    size_t before = k->c.osent;
    conn_write_begin(k);
    if (conn_send_out(k) < 0) return -1;
    return conn_write_end(k, before);
}

/* A connection that never quite catches up (a subscriber or pipeliner
 * always a little behind) would keep every byte ever sent at the front of
 * its buffer, which only resets when all of it is out: the buffer would
 * grow with the bytes sent, not with the bytes waiting. Once the sent
 * front (at least 64 KiB) is as long as the unsent rest or a quarter of
 * the buffer, the rest moves to the front: a byte moved costs at most four
 * bytes sent, and the buffer grows only when the bytes waiting fill three
 * quarters of it. Not while the connection's commands run: offsets into
 * the buffer (reply_defer, the HTTP front-end's caught replies) are live
 * then. */
#define OBUF_COMPACT_MIN (64 * 1024)

static void conn_obuf_compact(conn *k) {
    client *c = &k->c;
    size_t rest = c->olen - c->osent;
    if (k->running || c->osent < OBUF_COMPACT_MIN || (c->osent < rest && c->osent < c->ocap / 4)) return;
    memmove(c->obuf, c->obuf + c->osent, rest);
    client_set_out(c, 0, rest);
}

/* After writing (before: osent when it began): what is written is an
 * interaction; all of it written, the buffer may shrink and a
 * CLOSE_AFTER_REPLY connection closes (-1); otherwise the rest waits for
 * the socket to take more.
 *
 * A streamed reply stops pulling chunks while its output is at or above
 * CMD_STREAM_OBUF_HIGH, and only conn_write_ready pulls again. When a
 * write from anywhere else (the pending list, the fsync hold) takes all of
 * such an output, the write event stays on for one more turn: the socket
 * is writable, so conn_write_ready runs next iteration and resumes the
 * stream, whose chunks may all be read already (no completion would wake
 * it). */
static int conn_write_end(conn *k, size_t before) {
    client *c = &k->c;
    if (c->osent != before) conn_interacted(k);
    if (c->osent == c->olen) {
        int resume = (client_flags_peek(c) & CLIENT_STREAMING) && c->olen - before >= CMD_STREAM_OBUF_HIGH;
        client_set_out(c, 0, 0);
        if (c->ocap > 64 * 1024) reply_obuf_release(c);
        if (resume) {
            if (!k->wev_on) {
                event_add(k->wev, NULL);
                k->wev_on = 1;
            }
        } else if (k->wev_on && !(k->tls_want & TLSIO_READ_WANTS_WRITE)) {
            event_del(k->wev);
            k->wev_on = 0;
        }
        if (client_flags_peek(c) & CLIENT_CLOSE_AFTER_REPLY) return -1;
    } else {
        conn_obuf_compact(k);
        if (!k->wev_on && !(k->tls_want & TLSIO_WRITE_WANTS_READ)) {
            event_add(k->wev, NULL);
            k->wev_on = 1;
        }
    }
    return 0;
}

/* 1 when k's output must wait for the AOF fsync (appendfsync always): it
 * follows records this thread appended and has not handed to the writer
 * yet, or it is held already. */
static int conn_must_hold(conn *k) {
    return k->c.osent < k->c.olen && (k->dwait || aof_durable_needed());
}

/* client.send_direct of a plain socket (session/reply.c, reply_rawv): the
 * socket takes what it can of iov now, from the caller's memory, instead
 * of the bytes going through the output buffer. Only when the output may
 * go now: nothing held for the fsync (conn_must_hold, which looks at the
 * output this would have joined) and the connection not closing. A
 * failed send takes nothing: the copy that follows meets the error. */
size_t conn_send_direct(client *c, const struct iovec *iov, int iovcnt) {
    conn *k = c->conn;
    assert(!k->ssl && c->osent == c->olen);
    if (k->dwait || aof_durable_needed() || (client_flags_peek(c) & CLIENT_CLOSE_ASAP)) return 0;
    struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
    conn_replybuf_use(k, total); /* Redis would have put it in its buffer */
    ssize_t n;
    do n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return 0;
    tstat_add(TSTAT_WRITES, 1);
    tstat_add(TSTAT_NET_OUTPUT, (uint64_t)n);
    tstat_add(TSTAT_NET_OUTPUT_DIRECT, (uint64_t)n);
    conn_interacted(k);
    return (size_t)n;
}

/* Write now, or hold; returns -1 when the connection must be closed now. */
static int conn_flush(conn *k) {
    /* appendfsync always: replies of commands this thread appended to the
     * stream go out only once their records are on disk. They are held;
     * at the end of the loop iteration they get the offset of the last
     * record as their target (conn_durable_flush), and the worker serves
     * others until the writer has fsynced that far (group commit). */
    if (conn_must_hold(k)) {
        /* New records since it got its target: it waits for a later one. */
        if (k->dwait == 2 && aof_durable_needed()) durable_unlink(k);
        if (!k->dwait) {
            worker *w = k->w;
            k->dwait = 1;
            k->dprev = NULL;
            k->dnext = w->durable;
            if (w->durable) w->durable->dprev = k;
            w->durable = k;
        }
        return 0;
    }
    return conn_write(k);
}

/* Redis fills a 16 KiB per-client buffer before it counts reply memory
 * against the limits; pending output up to that size is not counted. */
#define OBUF_UNCOUNTED (16 * 1024)

/* client-output-buffer-limit, checked whenever the output grows: 1 when
 * the pending output has reached the hard limit of the client's class, or
 * stayed at or above the soft limit for longer than its seconds (Redis's
 * checkClientOutputBufferLimits); the caller closes the connection. */
static int conn_obuf_over_limit(conn *k) {
    client *c = &k->c;
    long long hard, soft, secs;
    reply_obl_limits(c, &hard, &soft, &secs);
    if (!hard && !soft) return 0;
    /* Messages other threads queued for c: alen is stored atomically under
     * alock, so one relaxed load reads a whole value without taking it. */
    size_t queued = __atomic_load_n(&k->alen, __ATOMIC_RELAXED);
    unsigned long long used = (unsigned long long)(c->olen - c->osent) + queued;
    used = used > OBUF_UNCOUNTED ? used - OBUF_UNCOUNTED : 0;
    int over = hard && used >= (unsigned long long)hard;
    if (soft && used >= (unsigned long long)soft) {
        int64_t now = now_ms();
        if (!c->obuf_soft_since_ms) c->obuf_soft_since_ms = now;
        else if (now - c->obuf_soft_since_ms > secs * 1000) over = 1;
    } else {
        c->obuf_soft_since_ms = 0;
    }
    if (over)
        log_warn("Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
                 (unsigned long long)c->id, c->addr);
    return over;
}

/* The pause in force ends at until (unix ms, now is the time): wake the
 * worker then, unless a wake-up is armed for then already; the tick checks
 * too (a pause with no end in sight, FAILOVER's, is ended by
 * session_unpause). */
static void pause_timer_arm(worker *w, int64_t until, int64_t now) {
    if (w->pause_at == until && evtimer_pending(w->pause_ev, NULL)) return;
    w->pause_at = until;
    int64_t d = until - now + 1;
    if (d < 1) d = 1;
    if (d > 86400000) return; /* the tick retries anyway */
    struct timeval tv = {(time_t)(d / 1000), (suseconds_t)((d % 1000) * 1000)};
    evtimer_add(w->pause_ev, &tv);
}

int conn_may_run(conn *k, int argc, garg *argv) {
    client *c = &k->c;
    /* The clock is read only while a pause is in force or being released. */
    if (argc && (session_pause_mode() || __atomic_load_n(&releasing, __ATOMIC_ACQUIRE))) {
        int64_t now = now_ms(), until = 0;
        int mode = session_pause_check(now, &until);
        if (mode && cmd_pause_holds(c, argc, argv, mode == SESSION_PAUSE_WRITE)) {
            /* A held client keeps its commands queued until the pause
             * ends, and runs then in the order it was held. */
            if (!k->paused && held_add(k, 1)) pause_timer_arm(k->w, until, now);
            return 0;
        }
        if (k != draining && __atomic_load_n(&releasing, __ATOMIC_ACQUIRE) &&
            cmd_pause_holds(c, argc, argv, __atomic_load_n(&release_mode, __ATOMIC_RELAXED) == SESSION_PAUSE_WRITE) &&
            (k->paused || held_add(k, 0)))
            return 0;
    }
    /* Redis stamps the last interaction once per read; the batch's clock
     * reading is as good at CLIENT LIST's resolution. */
    __atomic_store_n(&c->last_ms, k->w->batch_ms, __ATOMIC_RELAXED);
    return 1;
}

void conn_ran(conn *k) {
    client *c = &k->c;
    if (cmd_thread_busy_us() >= k->turn_end) k->turn_over = 1;
    if (c->olen > c->osent && conn_obuf_over_limit(k)) client_flag_on(c, CLIENT_CLOSE_ASAP);
    /* CLIENT REPLY SKIP covers the whole of the next command: one that
     * blocked keeps it until its late reply (timeout, served, CLIENT
     * UNBLOCK) is made, and net_client_resume lifts it then, as Redis
     * resets the client only when it is unblocked. */
    if ((client_flags_peek(c) & (CLIENT_REPLY_SKIP | CLIENT_BLOCKED)) == CLIENT_REPLY_SKIP)
        client_flag_off(c, CLIENT_REPLY_SKIP);
    if (client_flags_peek(c) & CLIENT_REPLY_SKIP_NEXT) {
        client_flag_off(c, CLIENT_REPLY_SKIP_NEXT);
        client_flag_on(c, CLIENT_REPLY_SKIP);
    }
}

void conn_protocol_error(conn *k, const char *what) {
    client *c = &k->c;
    char msg[160];
    snprintf(msg, sizeof(msg), "ERR %s", what);
    reply_error(c, msg);
    client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
    log_verbose("Protocol error (%s) from client: id=%llu addr=%s", what, (unsigned long long)c->id, c->addr);
}

static void conn_take_async(conn *k);

/* Run the complete requests in the query buffer through the protocol, for
 * one turn: a connection has at most one turn per loop iteration, and a
 * turn ends (conn_ran; the module stops before its next request) once its
 * commands have taken NET_TURN_US. What is left runs in the next
 * iteration (w->more), after the other connections' turns. A pipeline of
 * heavy commands (MSETs, ZADDs of a thousand elements) then holds another
 * client of the worker for about a turn plus one command, not for all it
 * sent in one read. Messages other threads queued for k before these
 * requests arrived (an invalidation, a published message) precede their
 * replies, as they do in Redis's single output buffer. */
#define NET_TURN_US 500

static void conn_process(conn *k) {
    if (!k->qlen) return;
    worker *w = k->w;
    /* Turns: not for TLS (OpenSSL may hold bytes no event will announce:
     * its reads are not put off), nor while the busy pump serves clients
     * or a CLIENT PAUSE release runs the held ones in order. */
    int turns = !k->ssl && !w->busy_pump && k != draining;
    if (turns && k->turn_iter == w->iter) {
        /* It had its turn in this iteration: the rest waits for the next. */
        if (!k->rwait) rlist_push(&w->more, k, 3);
        return;
    }
    k->turn_iter = w->iter;
    w->batch_ms = coarse_ms();
    if (__atomic_load_n(&k->alen, __ATOMIC_RELAXED)) conn_take_async(k);
    k->running++;
    k->turn_end = turns ? cmd_thread_busy_us() + NET_TURN_US : UINT64_MAX;
    k->turn_over = 0;
    size_t used = k->proto->process(k);
    k->running--;
    if (k->turn_over) {
        k->turn_over = 0;
        /* Listed to run again, unless a read of it is pending (that runs
         * the rest too). */
        if (!k->rwait) rlist_push(&w->more, k, 3);
    }
    if (used) {
        memmove(k->qbuf, k->qbuf + used, k->qlen - used);
        k->qlen -= used;
    }
    /* A big argument begun: room for all of it now, as Redis's
     * processMultibulkBuffer makes it. */
    size_t hint = k->proto->pending_hint(k);
    if (hint > k->qlen) qbuf_room(k, hint - k->qlen, 0);
    publish_qbuf(k);
}

/* A command took the connection over (client.handoff): its replies go out
 * (blocking; they are short), then the socket goes to the new owner and
 * the rest of the connection is freed. */
static void conn_handoff(conn *k) {
    client *c = &k->c;
    int fd = c->fd;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    while (c->osent < c->olen) {
        ssize_t n = k->ssl ? tlsio_write(k, c->obuf + c->osent, c->olen - c->osent)
                           : write(fd, c->obuf + c->osent, c->olen - c->osent);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        c->osent += (size_t)n;
    }
    void (*fn)(int, void *, void *) = c->handoff;
    void *arg = c->handoff_arg;
    SSL *ssl = k->ssl;
    c->handoff = NULL;
    c->fd = -1; /* conn_free must not close it */
    k->ssl = NULL; /* nor end its TLS */
    conn_free(k);
    fn(fd, ssl, arg);
}

/* Flush now, or close a connection marked for closing; -1 when k was
 * freed. */
static int conn_after_io(conn *k) {
    if (k->c.handoff) {
        conn_handoff(k);
        return -1;
    }
    if ((client_flags_peek(&k->c) & CLIENT_CLOSE_ASAP) || conn_flush(k) != 0) {
        conn_free(k);
        return -1;
    }
    return 0;
}

/* After k ran commands or got output: output that can wait goes on the
 * pending-write list, written at the end of the loop iteration
 * (conn_write_pending). A handoff, a close, output held for the fsync and
 * no output at all (conn_flush does no I/O then; it closes a
 * CLOSE_AFTER_REPLY connection whose reply is out) are dealt with now.
 * -1 when k was freed. */
static int conn_after_input(conn *k) {
    client *c = &k->c;
    if (c->handoff || (client_flags_peek(c) & CLIENT_CLOSE_ASAP) || c->osent == c->olen || conn_must_hold(k))
        return conn_after_io(k);
    pending_add(k);
    return 0;
}

/* The end of a loop iteration: write the output of every connection on the
 * pending-write list. Writing runs no command, so nothing joins the list
 * meanwhile; one held for the fsync since it was listed stays held
 * (conn_durable_flush sends it). */
#define NET_BATCH 64

void conn_write_pending(worker *w) {
    conn *batch[NET_BATCH];
    nuring_op ops[NET_BATCH];
    size_t before[NET_BATCH];
    while (w->pending) {
        int n = 0;
        while (w->pending && n < NET_BATCH) {
            conn *k = w->pending;
            pending_unlink(k);
            if (k->dwait) continue;
            if (client_flags_peek(&k->c) & CLIENT_CLOSE_ASAP) {
                conn_free(k);
            } else if (w->uring && !k->ssl && k->c.osent < k->c.olen) {
                /* --net async: written with the rest of the batch. */
                conn_write_begin(k);
                before[n] = k->c.osent;
                ops[n] = (nuring_op){k->c.fd, 1, k->c.obuf + k->c.osent, k->c.olen - k->c.osent, 0};
                batch[n++] = k;
            } else if (conn_write(k) != 0) {
                conn_free(k);
            }
        }
        if (!n) continue;
        /* Nothing below runs a command: no connection of the batch can be
         * freed by another's turn. */
        nuring_run(w->uring, ops, n);
        for (int i = 0; i < n; i++) {
            conn *k = batch[i];
            int r = ops[i].res;
            if (r > 0) conn_wrote(k, (size_t)r);
            if ((r < 0 && r != -EAGAIN && r != -EINTR) || conn_write_end(k, before[i]) != 0) conn_free(k);
        }
    }
}

/* From the busy pump: the output listed before the long command began
 * (another connection's reply, run in the same loop iteration) goes out
 * now, as Redis's processEventsWhileBlocked writes pending replies; a
 * client waiting for it would otherwise wait for the script's end. Nothing
 * is freed here: a connection whose write failed is marked and stays
 * listed for conn_write_pending. */
void conn_busy_flush(worker *w) {
    for (conn *k = w->pending, *next; k; k = next) {
        next = k->pnext;
        if (k->running || k->dwait || (client_flags_peek(&k->c) & CLIENT_CLOSE_ASAP)) continue;
        if (conn_write(k) != 0) {
            client_flag_on(&k->c, CLIENT_CLOSE_ASAP);
            continue;
        }
        pending_unlink(k);
    }
}

void net_client_flush(client *c) { conn_after_input(c->conn); }

/* Waits up to timeout_ms (-1: forever) for the socket to allow the next
 * step of the last operation: `out` for a write (a read for TLS when its
 * write wanted one, and the other way). 1 ready, 0 timed out, -1 error. */
static int conn_sync_wait(conn *k, int out, int timeout_ms) {
    int want_out = out;
    if (k->ssl && (k->tls_want & (out ? TLSIO_WRITE_WANTS_READ : TLSIO_READ_WANTS_WRITE))) want_out = !out;
    struct pollfd p = {k->c.fd, (short)(want_out ? POLLOUT : POLLIN), 0};
    for (;;) {
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        return r > 0 ? 1 : 0;
    }
}

/* The Lua debugger's blocking I/O (session.h): straight on the socket, no
 * event of the loop touched, so that it also serves a forked debugging
 * session, whose process has the socket and none of the loop's threads. */
int net_client_sync_send(client *c, int timeout_ms) {
    conn *k = c->conn;
    conn_write_begin(k);
    for (;;) {
        int r = conn_send_out(k);
        if (r < 0) return -1;
        if (r > 0) break;
        if (conn_sync_wait(k, 1, timeout_ms) != 1) return -1;
    }
    client_set_out(c, 0, 0);
    return 0;
}

long net_client_sync_read(client *c, char *buf, size_t n, int timeout_ms) {
    conn *k = c->conn;
    for (;;) {
        ssize_t r = k->ssl ? tlsio_read(k, buf, n) : read(c->fd, buf, n);
        if (r >= 0) {
            if (r > 0) tstat_add(TSTAT_NET_INPUT, (uint64_t)r);
            return (long)r;
        }
        if (errno == EINTR) continue;
        if ((errno == EAGAIN || errno == EWOULDBLOCK) && conn_sync_wait(k, 0, timeout_ms) == 1) continue;
        return -1;
    }
}

static int conn_read_room(conn *k, size_t *len, size_t *parsed, size_t *argv_len);
static int conn_read_got(conn *k, ssize_t n, size_t parsed, size_t argv_len);
static void busy_ran(conn *k, int r);
static int conn_run_read(conn *k, int r);

/* Read what the socket (or OpenSSL) has: 1 when bytes came and are to be
 * run, 0 when nothing is to be done now, -1 when the connection must be
 * closed. */
static int conn_read(conn *k) {
    size_t len, parsed, argv_len;
    if (conn_read_room(k, &len, &parsed, &argv_len) != 0) return -1;
    ssize_t n = k->ssl ? tlsio_read(k, k->qbuf + k->qlen, len) : read(k->c.fd, k->qbuf + k->qlen, len);
    if (n < 0) n = -errno;
    return conn_read_got(k, n, parsed, argv_len);
}

/* Make room to read into (len bytes at qbuf + qlen) and note the figures of
 * the partial request before the read; -1 when there is no memory. */
static int conn_read_room(conn *k, size_t *len, size_t *parsed, size_t *argv_len) {
    tstat_add(TSTAT_READS, 1);
    /* Room as Redis's readQueryFromClient makes it: a big argument is read
     * to its end into a buffer of just that size; otherwise 16 KiB, into a
     * buffer that grows greedily once past 16 KiB. Once a partial request
     * has a big argument parsed, Redis's buffer is a new one (the old one
     * became that argument), so no more than 16 KiB is read then: the room
     * left here after the argument is not Redis's. */
    size_t want = READ_CHUNK;
    size_t hint = k->proto->pending_hint(k);
    int big = hint != 0;
    if (hint > k->qlen) want = hint - k->qlen;
    if (qbuf_room(k, want, !big && k->qcap > READ_CHUNK) != 0) return -1;
    /* A read adds bytes, it parses none: what is parsed now holds after it. */
    partial_of(k, parsed, argv_len);
    *len = k->qcap - k->qlen - 1;
    if ((big || *argv_len >= 32 * 1024) && *len > want) *len = want;
    return 0;
}

/* n bytes (or -errno) came into the room conn_read_room made: 1 when they
 * are to be run, 0 when nothing is to be done now, -1 when the connection
 * must be closed. */
static int conn_read_got(conn *k, ssize_t n, size_t parsed, size_t argv_len) {
    if (n == 0 || (n < 0 && n != -EAGAIN && n != -EWOULDBLOCK && n != -EINTR)) return -1;
    if (n < 0) return 0;
    tstat_add(TSTAT_NET_INPUT, (uint64_t)n);
    k->qlen += (size_t)n;
    conn_interacted(k);
    if (k->qlen > k->qpeak) k->qpeak = k->qlen;
    publish_qbuf_as(k, parsed, argv_len);
    /* The limit applies to what is not yet parsed into arguments (Redis
     * moves those out of its query buffer). */
    if (parsed > k->qlen) parsed = k->qlen;
    size_t unparsed = k->qlen - parsed;
    if ((long long)unparsed > cfg.client_query_buffer_limit) {
        char *info = client_info_dup(&k->c);
        char bytes[64 * 4 + 3];
        str_repr(bytes, k->qbuf + parsed, unparsed < 64 ? unparsed : 64);
        log_warn("Closing client that reached max query buffer length: %s (qbuf initial bytes: %s)",
                 info ? info : "", bytes);
        free(info);
        return -1;
    }
    if (client_flags_peek(&k->c) & CLIENT_CLOSE_AFTER_REPLY) {
        k->qlen = 0;
        return 0;
    }
    return 1;
}

/* Read and run the requests that completes: -1 when k was freed, 1 when
 * there was nothing to read, 0 otherwise. */
static int conn_read_run(conn *k) { return conn_run_read(k, conn_read(k)); }

/* What a read returned (r as conn_read_got says) is run: -1 when k was
 * freed, 1 when there was nothing to read, 0 otherwise. */
static int conn_run_read(conn *k, int r) {
    if (r < 0) {
        conn_free(k);
        return -1;
    }
    if (!r) return 1;
    conn_process(k);
    return conn_after_input(k);
}

void conn_busy_serve(conn *k, short revents) {
    if (k->ssl && k->tls_hs) return; /* the handshake waits for the loop */
    if ((revents & POLLOUT) && conn_write(k) != 0) {
        client_flag_on(&k->c, CLIENT_CLOSE_ASAP);
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR))) return;
    if (k->rwait == 2) return; /* conn_busy_settle runs what it read */
    busy_ran(k, conn_read(k));
}

/* The busy pump's share of a read (r as conn_read returns it): run what
 * came; an end of file or a failed write closes it once the loop is back. */
static void busy_ran(conn *k, int r) {
    if (r < 0) {
        k->busy_eof = 1;
        client_flag_on(&k->c, CLIENT_CLOSE_ASAP);
        return;
    }
    if (!r) return;
    conn_process(k);
    if (k->c.handoff) return; /* the loop deals with it later */
    if (conn_flush(k) != 0) client_flag_on(&k->c, CLIENT_CLOSE_ASAP);
}

/* --net async, from the busy pump: the reads conn_read_batch made and has
 * not run yet (the long command is one of them, or they came after it in
 * the batch) are run now, before the pump reads anything more into their
 * buffers. */
void conn_busy_settle(void) {
    for (conn *k = rdone_tl, *next; k; k = next) {
        next = k->rnext;
        if (k->running) continue;
        rlist_unlink(k);
        busy_ran(k, conn_read_got(k, k->rres, k->rparsed, k->rargv));
        next = rdone_tl; /* running commands may have changed the list */
    }
}

/* A TLS connection's reads: until OpenSSL holds no byte more (decrypted,
 * or records it read ahead), since those will not raise another read
 * event; a partial record there ends the loop with nothing to read. -1
 * when k was freed. */
static int conn_tls_read(conn *k) {
    int r;
    do {
        if ((r = conn_read_run(k)) < 0) return -1;
    } while (r == 0 && k->ssl && !(k->tls_want & TLSIO_READ_WANTS_WRITE) && tlsio_pending(k));
    return 0;
}

static int conn_write_ready(conn *k);

/* The handshake's next step; once it is done, what the peer sent with it
 * is read and what waits to go out (a protected-mode refusal) is sent.
 * -1 when k was freed. */
static int conn_tls_handshake(conn *k, int first) {
    int r = tlsio_handshake(k, first);
    if (r < 0) {
        conn_free(k);
        return -1;
    }
    if (r == 0) return 0;
    if (conn_tls_read(k) != 0) return -1;
    return k->c.osent < k->c.olen ? conn_after_input(k) : 0;
}

/* A TLS connection's socket events: the handshake first; then the read or
 * write OpenSSL wanted the other event for, then the event's own work. */
static void conn_tls_event(conn *k, short what) {
    if (k->tls_hs) {
        conn_tls_handshake(k, 0);
        return;
    }
    if (what & EV_READ) {
        if (k->tls_want & TLSIO_WRITE_WANTS_READ) {
            k->tls_want &= ~TLSIO_WRITE_WANTS_READ;
            if (conn_write_ready(k) != 0) return;
        }
        conn_tls_read(k);
        return;
    }
    if (k->tls_want & TLSIO_READ_WANTS_WRITE) {
        k->tls_want &= ~TLSIO_READ_WANTS_WRITE;
        if (conn_tls_read(k) != 0) return;
    }
    conn_write_ready(k);
}

static void conn_on_read(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    conn *k = arg;
    if (k->ssl) conn_tls_event(k, what);
    else if (k->rwait == 3) {
        /* Its next turn runs what it sent already; the socket is read once
         * that is done (the event stays on). */
    } else if (k->w->uring) {
        if (!k->rwait) rlist_push(&k->w->rready, k, 1); /* conn_read_batch reads it */
    } else {
        conn_read_run(k);
    }
}

/* --net async, after the loop's callbacks: read every connection they found
 * readable, in the order they found them (a command sent after another's
 * on a second connection does not overtake it), in batches of one system call, then run what came, connection
 * by connection, as conn_read_run does. The reads of a batch are all made
 * before any command runs; a connection a command frees (CLIENT KILL,
 * a handoff) leaves the list it is on. */
void conn_read_batch(worker *w) {
    nuring_op ops[NET_BATCH];
    conn *batch[NET_BATCH];
    while (w->rready) {
        int n = 0;
        while (w->rready && n < NET_BATCH) {
            conn *k = w->rready_tail; /* oldest first, as Redis's loop */
            rlist_unlink(k);
            size_t len;
            if (conn_read_room(k, &len, &k->rparsed, &k->rargv) != 0) {
                conn_free(k);
                continue;
            }
            ops[n] = (nuring_op){k->c.fd, 0, k->qbuf + k->qlen, len, 0};
            batch[n++] = k;
        }
        if (!n) continue;
        nuring_run(w->uring, ops, n);
        for (int i = n - 1; i >= 0; i--) {
            batch[i]->rres = ops[i].res;
            rlist_push(&rdone_tl, batch[i], 2); /* run in the order read */
        }
        while (rdone_tl) {
            conn *k = rdone_tl;
            rlist_unlink(k);
            conn_run_read(k, conn_read_got(k, k->rres, k->rparsed, k->rargv));
        }
    }
}

/* Every connection whose turn ran out runs its next one, oldest first;
 * one whose turn runs out again is listed for the next pass, which comes
 * after the events of the next iteration. */
void conn_run_more(worker *w) {
    while (w->more) {
        conn *k = w->more;
        rlist_unlink(k);
        rlist_push(&mrun_tl, k, 4);
    }
    while (mrun_tl) {
        conn *k = mrun_tl;
        rlist_unlink(k);
        conn_process(k);
        conn_after_input(k);
    }
}

/* The socket may take more output; -1 when k was freed (a stream pump
 * may free it too: 1 then, k must not be used either). */
static int conn_write_ready(conn *k) {
    if (conn_after_io(k) != 0) return -1;
    /* A streamed reply waits for its output to drain below the mark. */
    if ((client_flags_peek(&k->c) & CLIENT_STREAMING) && k->c.olen - k->c.osent < CMD_STREAM_OBUF_HIGH) {
        cmd_stream_pump(&k->c);
        return 1;
    }
    return 0;
}

static void conn_on_write(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    conn *k = arg;
    if (k->ssl) conn_tls_event(k, what);
    else conn_write_ready(k);
}

/* The end of a loop iteration. The replies held during it get the offset
 * of the last record this worker appended as their target; every held
 * reply whose target is on disk goes out (group commit: one fsync covers
 * all the workers' records up to it, and the worker never waits for it:
 * the AOF writer's notification wakes it). A reply whose records cannot
 * reach the disk is never sent: its client is disconnected. */
void conn_durable_flush(worker *w) {
    for (int pass = 0; pass < 4; pass++) {
        uint64_t need = aof_durable_take();
        if (need) w->dlast = need;
        while (w->durable) {
            conn *k = w->durable;
            durable_unlink(k);
            k->dneed = w->dlast;
            k->dwait = 2;
            k->dprev = NULL;
            k->dnext = w->dbatch;
            if (w->dbatch) w->dbatch->dprev = k;
            w->dbatch = k;
        }
        /* What may go now (collected first: flushing runs commands). */
        conn *ready[64];
        int nready = 0, more = 0;
        for (conn *k = w->dbatch; k; k = k->dnext) {
            if (!aof_durable_state(k->dneed)) continue;
            if (nready == 64) {
                more = 1;
                break;
            }
            ready[nready++] = k;
        }
        for (int i = 0; i < nready; i++) {
            conn *k = ready[i];
            int st = aof_durable_state(k->dneed);
            durable_unlink(k);
            if (st < 0) conn_free(k);
            else conn_write_ready(k);
        }
        /* The replies of what resumed clients (streams, pipelined commands)
         * ran meanwhile, unless held for the next pass. */
        conn_write_pending(w);
        aof_batch_end(); /* wake the writer for what resumed clients wrote */
        repl_batch_end();
        session_evict_pending();
        if (!more && !w->durable) break;
    }
}

/* From the AOF writer thread after each write+fsync: wake the workers that
 * hold replies. */
void conn_durable_notify(void) {
    for (int i = 0; i < net_nworkers(); i++) worker_wake(&net_workers[i]);
}

void conn_pause_check(void) {
    /* The held clients are released through session's pause_ended. */
    if (session_pause_mode()) session_pause_check(now_ms(), NULL);
}

static void drain_job(void *arg) { conn_release_drain(arg); }

void conn_release_drain(worker *w) {
    for (;;) {
        pthread_mutex_lock(&hold_lock);
        conn *k = hold_head;
        if (!k || k->zseq > release_upto) {
            release_posted = 0;
            __atomic_store_n(&releasing, 0, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&hold_lock);
            return;
        }
        /* Clients the last one woke are served first (their retries are
         * jobs, posted earlier), for 100 ms at most: other clients' retries
         * may keep coming. */
        int wait = 0;
        if (block_retries_pending()) {
            int64_t now = now_ms();
            if (!drain_wait_since) drain_wait_since = now;
            wait = now - drain_wait_since < 100;
        }
        if (k->w != w || wait) {
            /* The drain goes on there (release_posted stays set). */
            int to = k->w->id;
            pthread_mutex_unlock(&hold_lock);
            net_post(to, drain_job, &net_workers[to]);
            return;
        }
        held_unlink_locked(k);
        drain_wait_since = 0;
        pthread_mutex_unlock(&hold_lock);
        client_flag_off(&k->c, CLIENT_PAUSED);
        draining = k;
        conn_process(k);
        draining = NULL;
        conn_after_input(k);
    }
}

void conn_release_paused(int old_mode) {
    int to = -1;
    pthread_mutex_lock(&hold_lock);
    if (hold_head) {
        /* A release in progress goes on to these too; it lets through
         * what the most restrictive of the modes held. */
        int busy = hold_head->zseq <= release_upto;
        if (!busy || old_mode > release_mode) __atomic_store_n(&release_mode, old_mode, __ATOMIC_RELAXED);
        release_upto = hold_seq;
        __atomic_store_n(&releasing, 1, __ATOMIC_RELEASE);
        if (!release_posted) {
            release_posted = 1;
            to = hold_head->w->id;
        }
    }
    pthread_mutex_unlock(&hold_lock);
    if (to >= 0) net_post(to, drain_job, &net_workers[to]);
}

void conn_tick(worker *w) {
    int64_t now = now_ms();
    conn_pause_check();
    conn *k = w->conns;
    while (k) {
        conn *next = k->next;
        if (client_flags_peek(&k->c) & CLIENT_CLOSE_ASAP) {
            conn_free(k);
        } else if (k->c.obuf_soft_since_ms && conn_obuf_over_limit(k)) {
            /* Over the soft limit for its seconds with no new output to
             * check it (Redis's clientsCron checks every client too). */
            conn_free(k);
        } else if (k->paused) {
            /* Held until the pause ends. */
            conn_qbuf_cron(k, now);
            conn_replybuf_cron(k, now);
        } else if (cfg.timeout > 0 && !(client_flags_peek(&k->c) & (CLIENT_MONITOR | CLIENT_PUBSUB | CLIENT_BLOCKED)) &&
                   now - k->c.last_ms > (int64_t)cfg.timeout * 1000) {
            log_verbose("Closing idle client");
            conn_free(k);
        } else {
            conn_qbuf_cron(k, now);
            conn_replybuf_cron(k, now);
        }
        k = next;
    }
}

void net_client_kill(client *c) {
    __atomic_fetch_or(&c->flags, CLIENT_CLOSE_ASAP, __ATOMIC_RELAXED);
    aready_add(c->conn);
}

/* Output for a client from outside its commands (a message another
 * client published, a MONITOR line, an invalidation). On the client's own
 * worker, between its commands, it joins the output at once and waits for
 * the end of the loop iteration like a reply; anywhere else it is queued
 * for the worker, which one eventfd write wakes per queue that was empty
 * (the worker takes a whole queue at a time). What was queued before goes
 * first: the direct way is taken only with the queue empty. */
void net_client_send_async(client *c, const char *p, size_t n) {
    conn *k = c->conn;
    if (k->w == worker_self() && !k->running && !k->dwait && !c->handoff &&
        !__atomic_load_n(&k->alen, __ATOMIC_RELAXED) && !(client_flags_peek(c) & CLIENT_CLOSE_ASAP)) {
        reply_raw_unmuted(c, p, n);
        /* Freed, if over its limit, by the pending-write pass: the caller
         * may hold locks that freeing a client takes (Pub/Sub's). */
        if (conn_obuf_over_limit(k)) client_flag_on(c, CLIENT_CLOSE_ASAP);
        if (c->olen > c->osent || (client_flags_peek(c) & CLIENT_CLOSE_ASAP)) pending_add(k);
        return;
    }
    int signal = 0;
    pthread_mutex_lock(&k->alock);
    if (k->alen + n > k->acap) {
        size_t cap = k->acap ? k->acap : 256;
        while (cap < k->alen + n) cap *= 2;
        char *nb = realloc(k->abuf, cap);
        if (nb) {
            k->abuf = nb;
            k->acap = cap;
        }
    }
    if (k->alen + n <= k->acap) {
        memcpy(k->abuf + k->alen, p, n);
        signal = k->alen == 0;
        __atomic_store_n(&k->alen, k->alen + n, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&k->alock);
    if (signal) aready_add(k);
}

/* What other threads queued for k (pushes, MONITOR lines) joins its
 * output. */
static void conn_take_async(conn *k) {
    pthread_mutex_lock(&k->alock);
    char *b = k->abuf;
    size_t n = k->alen;
    k->abuf = NULL;
    k->acap = 0;
    __atomic_store_n(&k->alen, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&k->alock);
    reply_raw_unmuted(&k->c, b, n);
    free(b);
}

void conn_drain_async(worker *w) {
    pthread_mutex_lock(&w->qlock);
    assert(!w->adrain);
    w->adrain = w->aready;
    w->aready = NULL;
    for (conn *x = w->adrain; x; x = x->anext) x->alisted = 2;
    pthread_mutex_unlock(&w->qlock);
    for (;;) {
        pthread_mutex_lock(&w->qlock);
        conn *k = w->adrain;
        if (k) {
            w->adrain = k->anext;
            k->alisted = 0;
        }
        pthread_mutex_unlock(&w->qlock);
        if (!k) break;
        if (client_flags_peek(&k->c) & CLIENT_CLOSE_ASAP) {
            conn_free(k);
        } else if (__atomic_load_n(&k->alen, __ATOMIC_RELAXED)) {
            conn_take_async(k);
            if (conn_obuf_over_limit(k)) {
                conn_free(k);
            } else {
                conn_after_input(k);
            }
        }
    }
}

client *net_worker_find_client(int wid, uint64_t id) {
    for (conn *k = net_workers[wid].conns; k; k = k->next)
        if (k->c.id == id) return &k->c;
    return NULL;
}

void net_client_resume(client *c) {
    conn *k = c->conn;
    /* The command that waited has its reply: a SKIP it ran under ends. */
    if (!(client_flags_peek(c) & CLIENT_BLOCKED) && (client_flags_peek(c) & CLIENT_REPLY_SKIP))
        client_flag_off(c, CLIENT_REPLY_SKIP);
    conn_process(k);
    conn_after_input(k);
}

static void conn_on_timer(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    conn *k = arg;
    if (k->tfn) k->tfn(&k->c);
}

void net_client_timer(client *c, int64_t deadline_ms, void (*fn)(client *c)) {
    conn *k = c->conn;
    if (!k->tev) k->tev = evtimer_new(k->w->base, conn_on_timer, k);
    evtimer_del(k->tev);
    k->tfn = fn;
    if (deadline_ms <= 0) return;
    int64_t d = deadline_ms - now_ms();
    if (d < 0) d = 0;
    struct timeval tv = {(time_t)(d / 1000), (suseconds_t)((d % 1000) * 1000)};
    evtimer_add(k->tev, &tv);
}

void conn_free_all(worker *w) {
    while (w->conns) conn_free(w->conns);
}
