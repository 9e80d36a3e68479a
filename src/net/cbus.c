/* cbus.c -- the cluster bus transport: one thread, one poll() loop.
 *
 * It listens on the bus port (cluster-port, or port + 10000) at the bind
 * addresses, accepts and opens links, cuts the byte stream of each link
 * into messages (cluster_bus_frame_len) and hands them whole to the
 * cluster (cluster_bus_message), and writes what the cluster queued. It
 * knows nothing of what a message says. Every 100 ms it calls
 * cluster_bus_tick.
 *
 * Handles are slot indexes with a generation in the high bits, so a handle
 * the cluster still holds after a close never names a reused slot. The
 * table (output buffers, states) is guarded by mu: the cluster may send or
 * close from any thread; a pipe wakes the loop. Callbacks into the cluster
 * run with mu released (the cluster holds its own lock while it calls back
 * into send/close).
 *
 * With tls-cluster yes the links speak TLS (base/tls.c's contexts: the
 * server one for accepted links, which must show a certificate whatever
 * tls-auth-clients says, as Redis's bus; the client one, else the server
 * one, for the links this node opens). The socket stays non-blocking and
 * in the poll loop: the handshake advances one step per event (hs, with
 * the direction OpenSSL waits for in want_write); an accepted link is
 * given to the cluster and an outgoing one reported connected only once
 * it is done. Reads go on while OpenSSL holds decrypted bytes or records
 * read ahead (SSL_has_pending); writes are partial (the context's
 * SSL_MODE_ENABLE_PARTIAL_WRITE) and a read or write that needs the other
 * direction (a renegotiation, a TLS 1.3 key update) is retried from that
 * direction's event. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>

#include "base/config.h"
#include "base/log.h"
#include "base/tls.h"
#include "cmd/cluster/cluster.h"
#include "net/internal.h"
#include "util/sockio.h"

#define MAXLINKS 4096
#define MAXLISTEN 16

typedef struct blink {
    int fd;                /* -1: free slot */
    unsigned gen;
    int connecting;        /* outbound, connect() in progress */
    int closing;           /* closed by the cluster: drop without callback */
    SSL *ssl;              /* tls-cluster: the link's TLS, else NULL */
    int hs;                /* the TLS handshake is running */
    int hs_write;          /* ... and waits for the socket to take bytes */
    int rd_wants_write;    /* the last SSL_read wants POLLOUT */
    int wr_wants_read;     /* the last SSL_write wants POLLIN */
    void *link;            /* the cluster's link */
    unsigned char *in;
    size_t inlen, incap;
    unsigned char *out;
    size_t outlen, outcap, outoff;
} blink;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static blink links[MAXLINKS];
static int lfds[MAXLISTEN], nlfds;
static int wake[2] = {-1, -1};
static pthread_t tid;
static int running, stop_flag;

static int h_make(int i) { return (int)(links[i].gen << 12 | (unsigned)i); }
static blink *h_get(int h) {
    if (h < 0) return NULL;
    int i = h & (MAXLINKS - 1);
    blink *b = &links[i];
    if (b->fd < 0 || (int)(b->gen << 12 | (unsigned)i) != h || b->closing) return NULL;
    return b;
}

static void poke(void) {
    char c = 1;
    if (write(wake[1], &c, 1) < 0) { /* the loop is awake already */
    }
}

static int slot_new(int fd, void *link, int connecting, SSL *ssl) {
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAXLINKS; i++)
        if (links[i].fd < 0) {
            blink *b = &links[i];
            b->gen = (b->gen + 1) & 0x7ffff;
            b->fd = fd;
            b->connecting = connecting;
            b->closing = 0;
            b->link = link;
            b->ssl = ssl;
            b->hs = ssl != NULL;
            b->hs_write = b->rd_wants_write = b->wr_wants_read = 0;
            b->inlen = b->outlen = b->outoff = 0;
            int h = h_make(i);
            pthread_mutex_unlock(&mu);
            return h;
        }
    pthread_mutex_unlock(&mu);
    return -1;
}

/* mu held. */
static void slot_free(blink *b) {
    if (b->ssl) {
        if (b->hs) SSL_free(b->ssl);
        else tls_close(b->ssl); /* close_notify, best effort */
        b->ssl = NULL;
    }
    close(b->fd);
    b->fd = -1;
    b->link = NULL;
    free(b->in);
    free(b->out);
    b->in = b->out = NULL;
    b->incap = b->outcap = b->inlen = b->outlen = b->outoff = 0;
}

static int tp_connect(const char *ip, int port, void *link) {
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof(ss));
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        sl = sizeof(*a4);
    } else if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        sl = sizeof(*a6);
    } else {
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* bind-source-addr, as Redis's clusterCron connect. */
    char *src = config_value("bind-source-addr"), why[128];
    int bad = src && *src && sock_bind_source(fd, ss.ss_family, src, why, sizeof(why)) != 0;
    if (bad) log_verbose("Cluster bus: connecting to %s:%d from bind-source-addr %s: %s", ip, port, src, why);
    free(src);
    if (bad) {
        close(fd);
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&ss, sl) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    int h = slot_new(fd, link, 1, NULL);
    if (h < 0) close(fd);
    else poke();
    return h;
}

static void tp_send(int h, const void *p, size_t n) {
    pthread_mutex_lock(&mu);
    blink *b = h_get(h);
    if (b) {
        if (b->outlen + n > b->outcap) {
            size_t cap = b->outcap ? b->outcap : 4096;
            while (cap < b->outlen + n) cap *= 2;
            unsigned char *nb = realloc(b->out, cap);
            if (!nb) abort();
            b->out = nb;
            b->outcap = cap;
        }
        memcpy(b->out + b->outlen, p, n);
        b->outlen += n;
    }
    pthread_mutex_unlock(&mu);
    if (b) poke();
}

static void tp_close(int h) {
    pthread_mutex_lock(&mu);
    blink *b = h_get(h);
    if (b) b->closing = 1;
    pthread_mutex_unlock(&mu);
    if (b) poke();
}

static int addr_text(struct sockaddr_storage *ss, char *buf, size_t n, int *port) {
    if (ss->ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        if (port) *port = ntohs(a->sin_port);
        return inet_ntop(AF_INET, &a->sin_addr, buf, (socklen_t)n) ? 0 : -1;
    }
    if (ss->ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        if (port) *port = ntohs(a->sin6_port);
        return inet_ntop(AF_INET6, &a->sin6_addr, buf, (socklen_t)n) ? 0 : -1;
    }
    return -1;
}

static int tp_local_ip(int h, char *buf, size_t n) {
    pthread_mutex_lock(&mu);
    blink *b = h_get(h);
    int fd = b ? b->fd : -1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int rc = fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 ? addr_text(&ss, buf, n, NULL) : -1;
    pthread_mutex_unlock(&mu);
    return rc;
}

static int tp_peer_ip(int h, char *buf, size_t n, int *port) {
    pthread_mutex_lock(&mu);
    blink *b = h_get(h);
    int fd = b ? b->fd : -1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int rc = fd >= 0 && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0 ? addr_text(&ss, buf, n, port) : -1;
    pthread_mutex_unlock(&mu);
    return rc;
}

static size_t tp_pending(int h) {
    pthread_mutex_lock(&mu);
    blink *b = h_get(h);
    size_t n = b ? b->outlen - b->outoff : 0;
    pthread_mutex_unlock(&mu);
    return n;
}

static const cluster_transport transport = {tp_connect, tp_send, tp_close, tp_local_ip, tp_peer_ip, tp_pending};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A link failed: tell the cluster (unless it closed it) and free it. */
static void link_lost(int i) {
    pthread_mutex_lock(&mu);
    blink *b = &links[i];
    void *link = b->closing ? NULL : b->link;
    int connecting = b->connecting;
    slot_free(b);
    pthread_mutex_unlock(&mu);
    if (!link) return;
    if (connecting) cluster_bus_connected(link, 0);
    else cluster_bus_closed(link);
}

/* One read from link b: bytes (> 0), 0 when nothing more can be read
 * now, -1 when the link is lost. */
static ssize_t link_recv(blink *b, void *buf, size_t n) {
    if (!b->ssl) {
        ssize_t r = read(b->fd, buf, n);
        if (r > 0) return r;
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
        return -1;
    }
    int other = 0;
    ssize_t r = tls_read(b->ssl, buf, n, &other);
    b->rd_wants_write = 0;
    if (r > 0) return r;
    if (r < 0 && errno == EAGAIN) {
        b->rd_wants_write = other;
        return 0;
    }
    return -1;
}

/* Hand every whole message in link i's input to the cluster: 0, or -1
 * when the link is gone (lost, freed or closed by the cluster). */
static int link_deliver(int i, unsigned gen) {
    blink *b = &links[i];
    size_t off = 0;
    while (b->fd >= 0 && b->gen == gen && !b->closing) {
        ssize_t len = cluster_bus_frame_len(b->in + off, b->inlen - off);
        if (len < 0) {
            link_lost(i);
            return -1;
        }
        if (len == 0 || (size_t)len > b->inlen - off) break;
        /* The message is handed over as is; the buffer stays put while the
         * cluster reads it (only this thread grows it). */
        int rc = cluster_bus_message(b->link, b->in + off, (size_t)len);
        off += (size_t)len;
        if (rc < 0) break;
    }
    if (b->fd < 0 || b->gen != gen) return -1;
    memmove(b->in, b->in + off, b->inlen - off);
    b->inlen -= off;
    return b->closing ? -1 : 0;
}

/* Read what arrived on link i and deliver every whole message. A TLS link
 * reads until OpenSSL waits for the socket, so nothing it holds (read
 * ahead or decrypted) is left behind without a socket event to come. */
static void link_read(int i) {
    blink *b = &links[i];
    unsigned gen = b->gen;
    for (;;) {
        if (b->incap - b->inlen < 16384) {
            size_t cap = b->incap ? b->incap * 2 : 32768;
            unsigned char *nb = realloc(b->in, cap);
            if (!nb) abort();
            b->in = nb;
            b->incap = cap;
        }
        ssize_t r = link_recv(b, b->in + b->inlen, b->incap - b->inlen);
        if (r < 0) {
            link_lost(i);
            return;
        }
        if (r == 0) break;
        b->inlen += (size_t)r;
        if (link_deliver(i, gen) != 0) return;
        if (!b->ssl && (size_t)r < 16384) break;
    }
}

static void link_write(int i) {
    pthread_mutex_lock(&mu);
    blink *b = &links[i];
    if (b->ssl) b->wr_wants_read = 0;
    while (b->outoff < b->outlen) {
        ssize_t w;
        int again, other = 0;
        if (b->ssl) {
            w = tls_write(b->ssl, b->out + b->outoff, b->outlen - b->outoff, &other);
            again = w < 0 && errno == EAGAIN;
        } else {
            w = write(b->fd, b->out + b->outoff, b->outlen - b->outoff);
            again = w < 0 && (errno == EAGAIN || errno == EINTR);
        }
        if (w <= 0) {
            if (again) {
                b->wr_wants_read = other;
                break;
            }
            pthread_mutex_unlock(&mu);
            link_lost(i);
            return;
        }
        b->outoff += (size_t)w;
    }
    if (b->outoff == b->outlen) b->outoff = b->outlen = 0;
    pthread_mutex_unlock(&mu);
}

/* One step of link i's TLS handshake. Once it is done an accepted link
 * goes to the cluster and an outgoing one is reported connected; a failed
 * one is dropped (an outgoing one reported failed). */
static void link_handshake(int i) {
    blink *b = &links[i];
    ERR_clear_error();
    int r = SSL_do_handshake(b->ssl);
    if (r == 1) {
        b->hs = b->hs_write = 0;
        if (b->connecting) {
            b->connecting = 0;
            cluster_bus_connected(b->link, 1);
        } else {
            void *link = cluster_bus_accepted(h_make(i));
            pthread_mutex_lock(&mu);
            b->link = link;
            pthread_mutex_unlock(&mu);
        }
        /* The last handshake read may have taken records that came after
         * it (the peer's first message): no socket event announces them. */
        if (b->fd >= 0 && !b->closing) link_read(i);
        return;
    }
    int e = SSL_get_error(b->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        b->hs_write = e == SSL_ERROR_WANT_WRITE;
        return;
    }
    char eb[256];
    if (b->connecting) log_verbose("Cluster bus link TLS handshake failed: %s", tls_error_text(e, eb, sizeof(eb)));
    else log_verbose("Error accepting cluster node connection: %s", tls_error_text(e, eb, sizeof(eb)));
    ERR_clear_error();
    link_lost(i);
}

/* The TCP connect of outgoing link i is done: with tls-cluster the
 * handshake starts, else the cluster hears of it. */
static void link_tcp_connected(int i) {
    blink *b = &links[i];
    if (!tls_cluster()) {
        b->connecting = 0;
        cluster_bus_connected(b->link, 1);
        return;
    }
    SSL *ssl = tls_connect_new(b->fd);
    if (!ssl) {
        log_warn("Cluster bus: TLS is not configured");
        link_lost(i);
        return;
    }
    pthread_mutex_lock(&mu);
    b->ssl = ssl;
    b->hs = 1;
    pthread_mutex_unlock(&mu);
    link_handshake(i);
}

static void accept_all(int lfd) {
    for (int k = 0; k < 64; k++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        SSL *ssl = NULL;
        if (tls_cluster()) {
            if (!(ssl = tls_accept_new(fd))) {
                log_verbose("Error creating an accepting connection for cluster node: TLS is not configured");
                close(fd);
                continue;
            }
            /* A bus peer shows a certificate, whatever tls-auth-clients. */
            SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        }
        int h = slot_new(fd, NULL, 0, ssl);
        if (h < 0) {
            if (ssl) SSL_free(ssl);
            close(fd);
            continue;
        }
        if (ssl) {
            link_handshake(h & (MAXLINKS - 1));
            continue;
        }
        void *link = cluster_bus_accepted(h);
        pthread_mutex_lock(&mu);
        links[h & (MAXLINKS - 1)].link = link;
        pthread_mutex_unlock(&mu);
    }
}

/* The events link b waits for. */
static short link_events(const blink *b) {
    if (b->hs) return b->hs_write ? POLLOUT : POLLIN;
    if (b->connecting) return POLLOUT;
    short ev = POLLIN;
    if (b->outlen > b->outoff || b->rd_wants_write) ev |= POLLOUT;
    return ev;
}

static void *cbus_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-cbus");
    static struct pollfd pfd[MAXLINKS + MAXLISTEN + 1];
    static int idx[MAXLINKS + MAXLISTEN + 1];
    int64_t next_tick = now_ms();
    while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
        int64_t now = now_ms();
        if (now >= next_tick) {
            cluster_bus_tick();
            next_tick = now + 100;
        }
        int n = 0;
        pfd[n].fd = wake[0];
        pfd[n].events = POLLIN;
        idx[n++] = -1;
        for (int i = 0; i < nlfds; i++) {
            pfd[n].fd = lfds[i];
            pfd[n].events = POLLIN;
            idx[n++] = -2;
        }
        pthread_mutex_lock(&mu);
        for (int i = 0; i < MAXLINKS; i++) {
            blink *b = &links[i];
            if (b->fd < 0) continue;
            if (b->closing) {
                slot_free(b);
                continue;
            }
            pfd[n].fd = b->fd;
            pfd[n].events = link_events(b);
            idx[n++] = i;
        }
        pthread_mutex_unlock(&mu);
        int timeout = (int)(next_tick - now_ms());
        if (timeout < 0) timeout = 0;
        if (poll(pfd, (nfds_t)n, timeout) <= 0) continue;
        for (int k = 0; k < n; k++) {
            if (!pfd[k].revents) continue;
            if (idx[k] == -1) {
                char buf[256];
                while (read(wake[0], buf, sizeof(buf)) > 0) {
                }
                continue;
            }
            if (idx[k] == -2) {
                accept_all(pfd[k].fd);
                continue;
            }
            int i = idx[k];
            blink *b = &links[i];
            if (b->fd != pfd[k].fd || b->closing) continue;
            if (b->hs) {
                link_handshake(i);
                continue;
            }
            if (b->connecting) {
                int err = 0;
                socklen_t el = sizeof(err);
                getsockopt(b->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                if (err || (pfd[k].revents & (POLLERR | POLLHUP))) {
                    link_lost(i);
                    continue;
                }
                link_tcp_connected(i);
                continue;
            }
            short rev = pfd[k].revents;
            /* A TLS read that waits to write retries on POLLOUT, a write
             * that waits to read on POLLIN. */
            if ((rev & (POLLIN | POLLERR | POLLHUP)) || (b->rd_wants_write && (rev & POLLOUT))) link_read(i);
            if (b->fd == pfd[k].fd && !b->closing && ((rev & POLLOUT) || (b->wr_wants_read && (rev & POLLIN))))
                link_write(i);
        }
        /* Write what the messages just handled queued, without waiting for
         * the next poll round. */
        for (int i = 0; i < MAXLINKS; i++)
            if (links[i].fd >= 0 && !links[i].connecting && !links[i].hs && !links[i].closing &&
                links[i].outlen > links[i].outoff)
                link_write(i);
    }
    return NULL;
}

int net_cbus_start(void) {
    if (!cluster_enabled()) return 0;
    for (int i = 0; i < MAXLINKS; i++) links[i].fd = -1;
    int port = cluster_bus_port();
    bind_addr addrs[MAXLISTEN];
    int na = net_resolve_binds(addrs, MAXLISTEN, port);
    if (na <= 0) {
        log_warn("No bind address is configured, but it is required for the Cluster bus.");
        return -1;
    }
    for (int i = 0; i < na; i++) {
        int err = 0, fd = net_make_listener(&addrs[i], 0, &err);
        if (fd >= 0 && listen(fd, cfg.tcp_backlog) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
        if (fd < 0) {
            if (addrs[i].optional && (err == EADDRNOTAVAIL || err == EAFNOSUPPORT)) continue;
            log_warn("Failed listening on port %u (cluster), aborting.", (unsigned)port);
            return -1;
        }
        lfds[nlfds++] = fd;
    }
    if (pipe2(wake, O_NONBLOCK | O_CLOEXEC) != 0) return -1;
    cluster_set_transport(&transport);
    if (pthread_create(&tid, NULL, cbus_main, NULL) != 0) return -1;
    running = 1;
    return 0;
}

void net_cbus_stop(void) {
    if (!running) return;
    __atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
    poke();
    pthread_join(tid, NULL);
    running = 0;
}
