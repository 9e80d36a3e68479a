/* worker.c -- worker threads, listeners and cross-thread jobs.
 *
 * Each worker binds its own SO_REUSEPORT socket for every address, so the
 * kernel spreads new connections across workers with no shared accept lock.
 * Before that, one probe bind without SO_REUSEPORT makes sure nobody else
 * holds the port (another process could otherwise silently share it). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "session/reply.h"
#include "cmd/propagate.h"
#include "cmd/stream.h"
#include "cmd/tracking.h"
#include "net/http.h"
#include "net/internal.h"
#include "persist/aof.h"
#include "cmd/repl/repl.h"
#include "net/net.h"
#include "session/session.h"
#include "base/config.h"
#include "base/log.h"
#include "base/tls.h"

worker *net_workers;
static int nworkers;
static int shutdown_requested; /* atomic: set by any thread, read by the loops */
static pthread_mutex_t listen_lock = PTHREAD_MUTEX_INITIALIZER; /* the RESP sets' swaps; refuse_connections */
static pthread_mutex_t shut_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shut_cond = PTHREAD_COND_INITIALIZER;

int net_nworkers(void) { return nworkers; }

/* The worker whose loop runs on this thread (NULL elsewhere). */
static _Thread_local worker *self;

worker *worker_self(void) { return self; }

void worker_wake(worker *w) {
    uint64_t one = 1;
    if (write(w->efd, &one, sizeof(one)) < 0) { /* counter saturated: already signalled */
    }
}

int net_resolve_binds(bind_addr *out, int max, int port_num) {
    int n = 0;
    char *copy = strdup(cfg.bind ? cfg.bind : "127.0.0.1");
    char *save = NULL;
    for (char *tok = strtok_r(copy, " ", &save); tok && n < max; tok = strtok_r(NULL, " ", &save)) {
        int optional = 0;
        if (tok[0] == '-') {
            optional = 1;
            tok++;
        }
        if (strcmp(tok, "*") == 0) tok = "0.0.0.0";
        else if (strcmp(tok, "::*") == 0) tok = "::"; /* as Redis: every IPv6 address */
        struct addrinfo hints = {0}, *res = NULL;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
        char port[16];
        snprintf(port, sizeof(port), "%d", port_num);
        if (getaddrinfo(tok, port, &hints, &res) != 0 || !res) {
            if (optional) continue;
            log_warn("Invalid bind address '%s'", tok);
            free(copy);
            return -1;
        }
        memcpy(&out[n].ss, res->ai_addr, res->ai_addrlen);
        out[n].len = res->ai_addrlen;
        out[n].optional = optional;
        snprintf(out[n].text, sizeof(out[n].text), "%s", tok);
        freeaddrinfo(res);
        n++;
    }
    free(copy);
    return n;
}

int net_make_listener(const bind_addr *a, int reuseport, int *err) {
    int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (reuseport) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (a->ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)&a->ss, a->len) != 0 || (reuseport && listen(fd, cfg.tcp_backlog) != 0)) {
        *err = errno;
        close(fd);
        return -1;
    }
    return fd;
}

/* A listener refused by refuse_connections (below) polls as hung up
 * until its loop stops: stop watching it. */
static void listener_quiet_if_refusing(listener *l) {
    if (!__atomic_load_n(&shutdown_requested, __ATOMIC_ACQUIRE) || !l->ev) return;
    /* Under listen_lock: stop_workers closes the descriptors under it. */
    pthread_mutex_lock(&listen_lock);
    event_del(l->ev);
    pthread_mutex_unlock(&listen_lock);
}

static void on_accept(evutil_socket_t lfd, short what, void *arg) {
    (void)what;
    listener *l = arg;
    worker *w = l->w;
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            listener_quiet_if_refusing(l);
            return;
        }
        char host[INET6_ADDRSTRLEN] = "?", peer[80], local[80];
        int port = 0;
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
            port = ntohs(s4->sin_port);
            snprintf(peer, sizeof(peer), "%s:%d", host, port);
        } else {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
            port = ntohs(s6->sin6_port);
            snprintf(peer, sizeof(peer), "[%s]:%d", host, port); /* as Redis's anetFormatAddr */
        }
        struct sockaddr_storage ls;
        socklen_t ll = sizeof(ls);
        local[0] = '\0';
        if (getsockname(fd, (struct sockaddr *)&ls, &ll) == 0) {
            char lh[INET6_ADDRSTRLEN] = "?";
            if (ls.ss_family == AF_INET) {
                inet_ntop(AF_INET, &((struct sockaddr_in *)&ls)->sin_addr, lh, sizeof(lh));
                snprintf(local, sizeof(local), "%s:%d", lh, ntohs(((struct sockaddr_in *)&ls)->sin_port));
            } else {
                inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ls)->sin6_addr, lh, sizeof(lh));
                snprintf(local, sizeof(local), "[%s]:%d", lh, ntohs(((struct sockaddr_in6 *)&ls)->sin6_port));
            }
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (cfg.tcp_keepalive > 0) {
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
            int idle = cfg.tcp_keepalive, intvl = cfg.tcp_keepalive / 3 ? cfg.tcp_keepalive / 3 : 1, cnt = 3;
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
        }
        conn_accept(w, l->proto, l->tls, fd, peer, local, 0);
    }
}

/* ---- the unixsocket listener ---------------------------------------------
 *
 * A Unix-domain socket has no SO_REUSEPORT spreading: one listening socket
 * exists, watched by worker 0 only (several loops polling one socket would
 * all wake for every connection). Worker 0 accepts and hands each
 * connection to the workers in turn through the job queue, so unix clients
 * spread over every worker as TCP clients do. Redis shows a unix client as
 * addr=<path>:0 laddr=<path>:0. */
static int unix_fd = -1;
static char *unix_path;
static unsigned unix_next; /* worker 0 only */

typedef struct unix_handoff {
    int fd;
    const net_proto *proto;
    int wid;
} unix_handoff;

static void unix_adopt(void *arg) {
    unix_handoff *h = arg;
    char addr[80];
    snprintf(addr, sizeof(addr), "%.70s:0", unix_path);
    conn_accept(&net_workers[h->wid], h->proto, 0, h->fd, addr, addr, 1);
    free(h);
}

static void on_accept_unix(evutil_socket_t lfd, short what, void *arg) {
    (void)what;
    listener *l = arg;
    for (int i = 0; i < 64; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            listener_quiet_if_refusing(l);
            return;
        }
        unix_handoff *h = malloc(sizeof(*h));
        if (!h) {
            close(fd);
            continue;
        }
        h->fd = fd;
        h->proto = l->proto;
        h->wid = (int)(unix_next++ % (unsigned)nworkers);
        if (h->wid == l->w->id) unix_adopt(h);
        else net_post(h->wid, unix_adopt, h);
    }
}

/* Bind cfg unixsocket (a stale file there is replaced, as Redis does) and
 * apply unixsocketperm. 0 ok or nothing to do, -1 with a log line. */
static int unix_listen(void) {
    char *path = config_value("unixsocket");
    char *perm = config_value("unixsocketperm");
    long mode = perm ? strtol(perm, NULL, 8) : 0;
    free(perm);
    if (!path || !path[0]) {
        free(path);
        return 0;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        log_warn("Failed opening Unix socket: path too long: %s", path);
        free(path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || (mode && chmod(path, (mode_t)mode) != 0) ||
        listen(fd, cfg.tcp_backlog) != 0) {
        log_warn("Failed opening Unix socket: %s", strerror(errno));
        if (fd >= 0) close(fd);
        free(path);
        return -1;
    }
    unix_fd = fd;
    unix_path = path;
    log_notice("The server is now ready to accept connections at %s", path);
    return 0;
}

static void on_jobs(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    worker *w = arg;
    uint64_t v;
    if (read(fd, &v, sizeof(v)) < 0) { /* spurious wakeup */
    }
    pthread_mutex_lock(&w->qlock);
    net_job *j = w->qhead;
    w->qhead = w->qtail = NULL;
    pthread_mutex_unlock(&w->qlock);
    while (j) {
        net_job *n = j->next;
        j->fn(j->arg);
        free(j);
        j = n;
    }
    conn_drain_async(w);
    if (__atomic_load_n(&shutdown_requested, __ATOMIC_ACQUIRE)) event_base_loopbreak(w->base);
}

/* session's pause_ended, from any thread. */
static void net_pause_ended(int old_mode) { conn_release_paused(old_mode); }

static void on_pause_end(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    (void)arg;
    conn_pause_check();
}

static void on_stream(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    (void)arg;
    cmd_stream_poll();
}

static void on_tick(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    worker *w = arg;
    conn_tick(w);
    cmd_stream_tick(); /* stream reads the kernel refused to take are retried here */
    if (__atomic_load_n(&shutdown_requested, __ATOMIC_ACQUIRE)) event_base_loopbreak(w->base);
}

void net_post(int wid, net_job_fn *fn, void *arg) {
    worker *w = &net_workers[wid];
    net_job *j = malloc(sizeof(*j));
    if (!j) abort();
    j->fn = fn;
    j->arg = arg;
    j->next = NULL;
    pthread_mutex_lock(&w->qlock);
    if (w->qtail) w->qtail->next = j;
    else w->qhead = j;
    w->qtail = j;
    pthread_mutex_unlock(&w->qlock);
    worker_wake(w);
}

/* --net async: operations per ring submission (a batch of more is split). */
#define NET_RING_ENTRIES 64

static void *worker_main(void *arg) {
    worker *w = arg;
    self = w;
    char name[16];
    snprintf(name, sizeof(name), "goblin-w%d", w->id);
    pthread_setname_np(pthread_self(), name);
    /* This thread's I/O completions (streamed replies of SSD tails). */
    struct event *sev = NULL;
    int sfd = cmd_stream_fd();
    if (sfd >= 0 && (sev = event_new(w->base, sfd, EV_READ | EV_PERSIST, on_stream, w))) event_add(sev, NULL);
    /* One iteration at a time: its callbacks read and run commands and
     * list the connections that have replies to write; after them, those
     * replies are written in one pass (conn_write_pending), the replies
     * held for the AOF fsync (appendfsync always) go out together once
     * their records are on disk, and the AOF writer and the replicas' link
     * threads are woken once for the records the iteration appended. */
    aof_batch_begin();
    repl_batch_begin();
    while (!event_base_got_break(w->base)) {
        /* The turns the last iteration left over run first, and their
         * replies go out with this iteration's: a request that came
         * meanwhile waits for one turn, not two. With turns still left,
         * or replies those turns made (a pipeline's last turn), the
         * sockets are looked at without waiting: the replies go out in
         * this iteration, not after the next event or tick. */
        w->iter++;
        conn_run_more(w);
        int now = w->more || w->pending;
        if (event_base_loop(w->base, now ? EVLOOP_ONCE | EVLOOP_NONBLOCK : EVLOOP_ONCE) != 0) break;
        if (w->uring) conn_read_batch(w);
        /* BCAST invalidations of this iteration's changes, queued before
         * the writers' replies go out (Redis's beforeSleep order). */
        if (tracking_active()) tracking_bcast_flush();
        conn_write_pending(w);
        conn_durable_flush(w);
        aof_batch_end();
        repl_batch_end();
        session_evict_pending(); /* here no lock is held */
    }
    if (sev) event_free(sev);
    mirror_thread_exit();
    cmd_stream_thread_exit();
    prop_thread_exit();
    tracking_thread_exit();
    reply_thread_exit();
    return NULL;
}

/* A command on this worker's thread cannot end soon (a script past
 * busy-reply-threshold, or a command waiting for the keyspace behind one):
 * serve the worker's other connections meanwhile, as Redis's
 * processEventsWhileBlocked does. libevent's loop is not re-entrant, so
 * one poll(2) without waiting looks at the listeners and at the
 * connections not in the middle of a command (and not held by CLIENT
 * PAUSE, blocked or streaming: those wait for the loop). Timers and posted
 * jobs wait for the loop too; nothing is freed meanwhile. */
static void net_events_while_busy(void) {
    worker *w = self;
    if (!w || w->busy_pump) return;
    w->busy_pump = 1;
    conn_busy_flush(w);
    if (w->uring) conn_busy_settle();
    size_t n = (size_t)w->nlisten + (size_t)w->nresp[0] + (size_t)w->nresp[1];
    for (conn *k = w->conns; k; k = k->next) n++;
    struct pollfd *fds = malloc(n * sizeof(*fds));
    void **who = malloc(n * sizeof(*who));
    size_t m = 0;
    if (fds && who) {
        for (int i = 0; i < w->nlisten; i++) {
            fds[m] = (struct pollfd){.fd = w->listeners[i].fd, .events = POLLIN};
            who[m++] = &w->listeners[i];
        }
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < w->nresp[s]; i++) {
                fds[m] = (struct pollfd){.fd = w->resp_sets[s][i].fd, .events = POLLIN};
                who[m++] = &w->resp_sets[s][i];
            }
        size_t nl = m;
        for (conn *k = w->conns; k; k = k->next) {
            uint32_t f = client_flags_peek(&k->c);
            if (k->running || k->paused || k->busy_eof || k->c.fd < 0 ||
                (f & (CLIENT_CLOSE_ASAP | CLIENT_BLOCKED | CLIENT_STREAMING)))
                continue;
            /* Output the socket would not take yet: sent as it drains. */
            short ev = POLLIN;
            if (k->wev_on && k->c.osent < k->c.olen) ev |= POLLOUT;
            fds[m] = (struct pollfd){.fd = k->c.fd, .events = ev};
            who[m++] = k;
        }
        if (m && poll(fds, (nfds_t)m, 0) > 0) {
            for (size_t i = 0; i < m; i++) {
                if (!fds[i].revents) continue;
                if (i < nl) {
                    listener *l = who[i];
                    if (l->fd == unix_fd) on_accept_unix(l->fd, EV_READ, l);
                    else on_accept(l->fd, EV_READ, l);
                } else {
                    conn_busy_serve(who[i], fds[i].revents);
                }
            }
        }
    }
    free(fds);
    free(who);
    w->busy_pump = 0;
}

static const session_transport net_transport = {
    .nworkers = net_nworkers,
    .post = net_post,
    .request_shutdown = net_request_shutdown,
    .client_kill = net_client_kill,
    .client_send_async = net_client_send_async,
    .worker_find_client = net_worker_find_client,
    .client_resume = net_client_resume,
    .client_flush = net_client_flush,
    .client_timer = net_client_timer,
    .pause_ended = net_pause_ended,
    .events_while_busy = net_events_while_busy,
    .client_sync_send = net_client_sync_send,
    .client_sync_read = net_client_sync_read,
};

static int held_by_set(int kind, int port, const bind_addr *a);

/* Refuse a port somebody else holds, even with SO_REUSEPORT: one bind of
 * each address without it. Addresses that are optional and missing here
 * are dropped (len 0). An address the RESP listener set `kind` holds
 * already on this port (CONFIG SET bind keeping some of them; -1: none)
 * needs no probe: the new set joins those sockets. 0 ok, -1 with a log
 * line. */
static int probe_binds(bind_addr *addrs, int na, int port, int kind) {
    if (na == 0) return 0; /* bind "": no TCP listener, as Redis */
    int bound = 0;
    for (int i = 0; i < na; i++) {
        if (kind >= 0 && held_by_set(kind, port, &addrs[i])) {
            bound++;
            continue;
        }
        int err = 0;
        int fd = net_make_listener(&addrs[i], 0, &err);
        if (fd < 0) {
            if (addrs[i].optional && (err == EADDRNOTAVAIL || err == EAFNOSUPPORT)) {
                addrs[i].len = 0;
                continue;
            }
            log_warn("Could not create server TCP listening socket %s:%d: bind: %s", addrs[i].text, port,
                     strerror(err));
            return -1;
        }
        close(fd);
        bound++;
    }
    if (!bound) {
        log_warn("Failed listening on port %d (tcp), aborting.", port);
        return -1;
    }
    return 0;
}

/* One worker's SO_REUSEPORT sockets for the probed addresses, into out
 * (events not yet made). Returns how many, -1 with a log line. */
static int open_listeners(const bind_addr *addrs, int na, int port, const net_proto *proto, int tls, listener *out) {
    int n = 0;
    for (int i = 0; i < na; i++) {
        if (!addrs[i].len) continue;
        int err = 0;
        int fd = net_make_listener(&addrs[i], 1, &err);
        if (fd < 0) {
            log_warn("Could not create server TCP listening socket %s:%d: %s", addrs[i].text, port, strerror(err));
            while (n) close(out[--n].fd);
            return -1;
        }
        out[n].fd = fd;
        out[n].proto = proto;
        out[n].tls = tls;
        n++;
    }
    return n;
}

static void arm_listeners(worker *w, listener *l, int n) {
    for (int i = 0; i < n; i++) {
        l[i].w = w;
        l[i].ev = event_new(w->base, l[i].fd, EV_READ | EV_PERSIST, on_accept, &l[i]);
        event_add(l[i].ev, NULL);
    }
}

static void close_listeners(listener *l, int n) {
    for (int i = 0; i < n; i++) {
        if (l[i].ev) event_free(l[i].ev);
        close(l[i].fd);
    }
    free(l);
}

/* ---- port and tls-port ---------------------------------------------------
 *
 * Every worker has its own RESP listeners on port and, beside them, on
 * tls-port (served through the shared TLS context, base/tls.h); the
 * memcache and HTTP front-ends have theirs in w->listeners (opened once, at
 * start-up, in net_start). CONFIG SET port or tls-port opens the new port's
 * sockets at once (so the reply tells whether it could, as Redis's
 * changeListenPort) and hands each worker its set to swap in on its own
 * loop; the old set is closed there. */
static int bound_port[2]; /* the port each set is on; config lock */
static bind_addr bound_addrs[2][16]; /* ... and its addresses (len 0: dropped) */
static int nbound[2];

static int held_by_set(int kind, int port, const bind_addr *a) {
    if (port != bound_port[kind]) return 0;
    for (int i = 0; i < nbound[kind]; i++) {
        const bind_addr *b = &bound_addrs[kind][i];
        if (b->len && b->len == a->len && !memcmp(&b->ss, &a->ss, a->len)) return 1;
    }
    return 0;
}

typedef struct set_swap {
    worker *w;
    int kind; /* NET_SET_PLAIN or NET_SET_TLS */
    listener *l;
    int n;
} set_swap;

static void set_install(void *arg) {
    set_swap *sw = arg;
    worker *w = sw->w;
    pthread_mutex_lock(&listen_lock);
    if (w->resp_sets[sw->kind]) close_listeners(w->resp_sets[sw->kind], w->nresp[sw->kind]);
    w->resp_sets[sw->kind] = sw->n ? sw->l : NULL;
    w->nresp[sw->kind] = sw->n;
    pthread_mutex_unlock(&listen_lock);
    if (sw->n) arm_listeners(w, sw->l, sw->n);
    else free(sw->l);
    free(sw);
}

/* Open a RESP listener set (port 0: none) for every worker; at start-up
 * (running 0) install them directly, else post each worker its set. 0 ok,
 * -1 with a log line. */
static int resp_listen(int kind, int port, int running) {
    bind_addr addrs[16];
    int na = 0;
    if (port) {
        na = net_resolve_binds(addrs, 16, port);
        if (na < 0 || probe_binds(addrs, na, port, running ? kind : -1) != 0) return -1;
    }
    listener **sets = calloc((size_t)nworkers, sizeof(*sets));
    int *counts = calloc((size_t)nworkers, sizeof(int));
    int ok = sets && counts;
    for (int k = 0; ok && k < nworkers; k++) {
        sets[k] = calloc((size_t)na + 1, sizeof(listener));
        counts[k] = sets[k] ? open_listeners(addrs, na, port, &resp_proto, kind == NET_SET_TLS, sets[k]) : -1;
        if (counts[k] < 0) {
            free(sets[k]);
            sets[k] = NULL;
            while (k--) close_listeners(sets[k], counts[k]);
            ok = 0;
        }
    }
    if (!ok) {
        free(sets);
        free(counts);
        return -1;
    }
    for (int k = 0; k < nworkers; k++) {
        worker *w = &net_workers[k];
        set_swap *sw = malloc(sizeof(*sw));
        if (!sw) abort();
        *sw = (set_swap){w, kind, sets[k], counts[k]};
        if (running) net_post(k, set_install, sw);
        else set_install(sw);
    }
    free(sets);
    free(counts);
    bound_port[kind] = port;
    memcpy(bound_addrs[kind], addrs, sizeof(bind_addr) * (size_t)na);
    nbound[kind] = na;
    return 0;
}

/* CONFIG SET port and tls-port, as Redis's changeListenPort and
 * applyTLSPort. */
static int port_commit(char *err, size_t errlen) {
    if (cfg.port == bound_port[NET_SET_PLAIN]) return 0;
    if (resp_listen(NET_SET_PLAIN, cfg.port, 1) != 0) {
        snprintf(err, errlen, "Unable to listen on this port. Check server logs.");
        return -1;
    }
    return 0;
}

static int tls_port_commit(char *err, size_t errlen) {
    int port = tls_port();
    if (port == bound_port[NET_SET_TLS]) return 0;
    if (!tls_configured() && tls_configure() != 0) {
        snprintf(err, errlen, "Unable to update TLS configuration. Check server logs.");
        return -1;
    }
    if (resp_listen(NET_SET_TLS, port, 1) != 0) {
        snprintf(err, errlen, "Unable to listen on this port. Check server logs.");
        return -1;
    }
    return 0;
}

/* CONFIG SET bind, as Redis 7.0's changeBindAddr: the RESP listeners
 * (port and tls-port) move to the new addresses, or stay where they are
 * with an error when one of them cannot be bound. Addresses kept from the
 * old list are never let go meanwhile; a list naming the addresses held
 * already changes nothing. The memcache and HTTP front-ends keep the
 * addresses they started on. */
static int bind_commit(char *err, size_t errlen) {
    for (int kind = NET_SET_PLAIN; kind <= NET_SET_TLS; kind++) {
        int port = bound_port[kind];
        if (!port) continue;
        bind_addr addrs[16];
        int na = net_resolve_binds(addrs, 16, port), same = na == nbound[kind];
        for (int i = 0; same && i < na; i++) same = held_by_set(kind, port, &addrs[i]);
        if (same) continue;
        if (na < 0 || resp_listen(kind, port, 1) != 0) {
            log_warn("Failed to bind, trying to restore old listening sockets.");
            snprintf(err, errlen, "Failed to bind to specified addresses.");
            return -1;
        }
    }
    return 0;
}

static const config_hook port_hook = {.commit = port_commit};
static const config_hook bind_hook = {.commit = bind_commit};
static const config_hook tls_port_hook = {.commit = tls_port_commit};

/* The addresses of a front-end's port (0: none), probed: count, or -1
 * with a log line. */
static int frontend_addrs(int port, bind_addr *out) {
    if (!port) return 0;
    int n = net_resolve_binds(out, 16, port);
    if (n < 0 || probe_binds(out, n, port, -1) != 0) return -1;
    return n;
}

/* Every listening port named once: two listener sets on one port would
 * share it through SO_REUSEPORT, each connection landing in one of them
 * at random (the probe binds cannot see it: the sets are opened after
 * them). The default memcache port yields (*mcport becomes 0, with a
 * warning); any other repeat is refused. 0 ok, -1 with a log line. */
static int ports_distinct(int hport, int htport, int *mcport, int mctport) {
    struct {
        const char *name;
        int port;
    } p[] = {{"port", cfg.port},        {"tls-port", tls_port()},       {"http-port", hport},
             {"http-tls-port", htport}, {"memcache-tls-port", mctport}, {"memcache-port", *mcport}};
    int n = (int)(sizeof(p) / sizeof(p[0]));
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            if (!p[i].port || p[i].port != p[j].port) continue;
            if (j == n - 1 && *mcport == MC_DEFAULT_PORT) {
                log_warn("The default memcache port %d is %s: serving no memcache on it", *mcport, p[i].name);
                *mcport = p[j].port = 0;
                continue;
            }
            log_warn("Port %d is given to both %s and %s", p[i].port, p[i].name, p[j].name);
            return -1;
        }
    }
    return 0;
}

const char *net_io_mode(void) { return nworkers && net_workers[0].uring ? "async" : "epoll"; }

int net_start(int n) {
    session_set_transport(&net_transport);
    /* port 0: no plaintext TCP listener (TLS or the unix socket only).
     * Probed first, so that a port taken fails the start before anything
     * else is set up; resp_listen opens it below. */
    if (cfg.port) {
        bind_addr addrs[16];
        int na = net_resolve_binds(addrs, 16, cfg.port);
        if (na < 0 || probe_binds(addrs, na, cfg.port, -1) != 0) return -1;
    }
    /* The front-ends' listeners beside RESP's: HTTP (http-port, and HTTPS
     * on http-tls-port) and memcache (memcache-port, memcache-tls-port;
     * mc_proto.c), on the same addresses. Their TLS listeners speak
     * through the context of base/tls.c, built by tls_init already. */
    int hport = http_port(), htport = tls_http_port();
    int mcport = mc_proto_port(), mctport = mc_proto_tls_port();
    if (http_setup() != 0) return -1;
    if (ports_distinct(hport, htport, &mcport, mctport) != 0) return -1;
    bind_addr haddrs[16], htaddrs[16], mcaddrs[16], mctaddrs[16];
    int nh = frontend_addrs(hport, haddrs), nht = frontend_addrs(htport, htaddrs);
    if (nh < 0 || nht < 0) return -1;
    int mcn = frontend_addrs(mcport, mcaddrs);
    if (mcn < 0) {
        /* Only a port asked for is a reason not to start. */
        if (mcport != MC_DEFAULT_PORT) return -1;
        log_warn("The default memcache port %d is taken: serving no memcache", mcport);
        mcn = mcport = 0;
    }
    int mct = frontend_addrs(mctport, mctaddrs);
    if (mct < 0) return -1;
    if (unix_listen() != 0) return -1;
    if (net_cbus_start() != 0) return -1;
    /* --net: async (each worker's reads and writes through its io_uring,
     * uring_io.c), epoll (a system call per read and write), or auto:
     * async where the kernel lets this process make a ring, else epoll. */
    char *nv = config_value("net");
    int want = nv && !strcmp(nv, "epoll") ? 0 : nv && !strcmp(nv, "async") ? 2 : 1;
    free(nv);
    nworkers = n;
    net_workers = calloc((size_t)n, sizeof(worker));
    for (int k = 0; k < n; k++) {
        worker *w = &net_workers[k];
        w->id = k;
        if (want) {
            char err[128];
            if (!(w->uring = nuring_new(NET_RING_ENTRIES, err, sizeof(err)))) {
                if (want == 2) {
                    fprintf(stderr, "goblin: --net async: %s\n", err);
                    return -1;
                }
                log_warn("--net auto: no io_uring for the connections (%s): each read and write is a system call",
                         err);
                for (int j = 0; j < k; j++) {
                    nuring_free(net_workers[j].uring);
                    net_workers[j].uring = NULL;
                }
                want = 0;
            }
        }
        w->base = event_base_new();
        pthread_mutex_init(&w->qlock, NULL);
        w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        w->efd_ev = event_new(w->base, w->efd, EV_READ | EV_PERSIST, on_jobs, w);
        event_add(w->efd_ev, NULL);
        w->tick_ev = event_new(w->base, -1, EV_PERSIST, on_tick, w);
        struct timeval tv = {0, 100000};
        event_add(w->tick_ev, &tv);
        w->pause_ev = evtimer_new(w->base, on_pause_end, w);
        size_t nl = (size_t)nh + (size_t)nht + (size_t)mcn + (size_t)mct + 1;
        w->listeners = calloc(nl, sizeof(listener));
        if (k == 0 && unix_fd >= 0) {
            listener *l = &w->listeners[w->nlisten++];
            l->fd = unix_fd;
            l->proto = &resp_proto;
            l->w = w;
            l->ev = event_new(w->base, unix_fd, EV_READ | EV_PERSIST, on_accept_unix, l);
            event_add(l->ev, NULL);
        }
        /* The front-ends' listeners (their protocol module, plaintext and
         * TLS); RESP's are the worker's resp_sets, below. */
        const struct {
            const bind_addr *a;
            int n, port;
            const net_proto *proto;
            int tls;
        } sets[] = {
            {haddrs, nh, hport, &http_proto, 0},      {htaddrs, nht, htport, &http_proto, 1},
            {mcaddrs, mcn, mcport, &mc_proto, 0},     {mctaddrs, mct, mctport, &mc_proto, 1},
        };
        for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
            int got = open_listeners(sets[i].a, sets[i].n, sets[i].port, sets[i].proto, sets[i].tls,
                                     w->listeners + w->nlisten);
            if (got < 0) return -1;
            arm_listeners(w, w->listeners + w->nlisten, got);
            w->nlisten += got;
        }
    }
    if (cfg.port && resp_listen(NET_SET_PLAIN, cfg.port, 0) != 0) return -1;
    if (tls_port() && resp_listen(NET_SET_TLS, tls_port(), 0) != 0) return -1;
    int anywhere = unix_fd >= 0 || nh + nht + mcn + mct > 0;
    for (int kind = NET_SET_PLAIN; kind <= NET_SET_TLS; kind++) anywhere |= nbound[kind] > 0;
    if (!anywhere) {
        log_warn("Configured to not listen anywhere, exiting.");
        return -1;
    }
    config_register_hook("port", &port_hook);
    config_register_hook("bind", &bind_hook);
    config_register_hook("tls-port", &tls_port_hook);
    for (int k = 0; k < n; k++) pthread_create(&net_workers[k].tid, NULL, worker_main, &net_workers[k]);
    aof_set_sync_notify(conn_durable_notify);
    return 0;
}

/* The server stops taking connections the moment its shutdown is decided,
 * as Redis closes its listening sockets before it exits: a client that
 * saw SHUTDOWN's connection close finds the port refusing, not a backlog
 * nobody serves. shutdown(2) makes a listening socket refuse new
 * connections while its descriptor stays valid for the loop that watches
 * it (closed in stop_workers). */
/* Every listening descriptor of w (front-ends' and RESP's) shut down
 * (refusing), or closed; listen_lock held. */
static void listeners_end(worker *w, int close_them) {
    for (int i = 0; i < w->nlisten; i++) {
        if (close_them) close(w->listeners[i].fd);
        else shutdown(w->listeners[i].fd, SHUT_RDWR);
    }
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < w->nresp[s]; i++) {
            if (close_them) close(w->resp_sets[s][i].fd);
            else shutdown(w->resp_sets[s][i].fd, SHUT_RDWR);
        }
}

static void refuse_connections(void) {
    pthread_mutex_lock(&listen_lock);
    for (int k = 0; k < nworkers; k++) listeners_end(&net_workers[k], 0);
    pthread_mutex_unlock(&listen_lock);
}

void net_request_shutdown(void) {
    __atomic_store_n(&shutdown_requested, 1, __ATOMIC_RELEASE);
    refuse_connections();
    pthread_mutex_lock(&shut_lock);
    pthread_cond_broadcast(&shut_cond);
    pthread_mutex_unlock(&shut_lock);
}

void net_wait(void) {
    pthread_mutex_lock(&shut_lock);
    while (!__atomic_load_n(&shutdown_requested, __ATOMIC_ACQUIRE)) pthread_cond_wait(&shut_cond, &shut_lock);
    pthread_mutex_unlock(&shut_lock);
}

static void noop_job(void *arg) { (void)arg; }

/* ms < 0: wait for every worker. */
static void stop_workers(int ms) {
    __atomic_store_n(&shutdown_requested, 1, __ATOMIC_RELEASE);
    for (int k = 0; k < nworkers; k++) {
        worker *w = &net_workers[k];
        pthread_mutex_lock(&listen_lock);
        listeners_end(w, 1);
        pthread_mutex_unlock(&listen_lock);
        net_post(k, noop_job, NULL);
    }
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += ms / 1000;
    dl.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    for (int k = 0; k < nworkers; k++) {
        if (ms < 0) pthread_join(net_workers[k].tid, NULL);
        else pthread_timedjoin_np(net_workers[k].tid, NULL, &dl);
    }
    if (unix_path) unlink(unix_path); /* Redis removes the socket file at shutdown */
}

void net_stop(void) {
    net_cbus_stop();
    stop_workers(-1);
}
void net_stop_within(int ms) { stop_workers(ms); }
