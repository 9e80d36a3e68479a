/* sockio.c -- blocking TCP client sockets with deadlines (see sockio.h).
 * Each step waits in poll() for the time left until its deadline, so a
 * peer that stops answering costs at most the timeout, never a hang. */
#include "util/sockio.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long sock_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on fd until deadline (-1: none): 1 ready, 0 timed out
 * (errno ETIMEDOUT), -1 error. */
static int sock_wait(int fd, short events, long long deadline) {
    for (;;) {
        int ms = -1;
        if (deadline >= 0) {
            long long left = deadline - sock_now_ms();
            if (left <= 0) {
                errno = ETIMEDOUT;
                return 0;
            }
            ms = left > 1000000000 ? 1000000000 : (int)left;
        }
        struct pollfd pf = {fd, events, 0};
        int r = poll(&pf, 1, ms);
        if (r > 0) return 1;
        if (r == 0) {
            errno = ETIMEDOUT;
            return 0;
        }
        if (errno != EINTR) return -1;
    }
}

static long long sock_deadline(long timeout_ms) { return timeout_ms > 0 ? sock_now_ms() + timeout_ms : -1; }

int sock_bind_source(int fd, int family, const char *source, char *err, size_t errlen) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    int rc = getaddrinfo(source, NULL, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "bind: %s", gai_strerror(rc));
        errno = EADDRNOTAVAIL;
        return -1;
    }
    int ok = 0;
    for (struct addrinfo *a = res; a && !ok; a = a->ai_next) ok = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    int e = errno;
    freeaddrinfo(res);
    if (ok) return 0;
    snprintf(err, errlen, "bind: %s", strerror(e));
    errno = e;
    return -1;
}

int sock_connect(const char *host, int port, long timeout_ms, char *err, size_t errlen) {
    return sock_connect_from(host, port, NULL, timeout_ms, err, errlen);
}

int sock_connect_from(const char *host, int port, const char *source, long timeout_ms, char *err, size_t errlen) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "%s", gai_strerror(rc));
        errno = EHOSTUNREACH;
        return -1;
    }
    long long deadline = sock_deadline(timeout_ms);
    int fd = -1, late = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) continue;
        /* A source address that cannot be bound keeps its own message. */
        int bound = !(source && *source) || sock_bind_source(fd, a->ai_family, source, err, errlen) == 0;
        int ok = bound && connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        late = 0;
        if (bound && !ok && errno == EINPROGRESS && sock_wait(fd, POLLOUT, deadline) == 1) {
            int soerr = 0;
            socklen_t sl = sizeof(soerr);
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0) ok = 1;
            else errno = soerr ? soerr : errno;
            late = !ok;
        }
        if (ok) break;
        int e = errno;
        if (bound) snprintf(err, errlen, "%s", strerror(e));
        close(fd);
        fd = -1;
        errno = e;
        if (e == ETIMEDOUT) break;
    }
    freeaddrinfo(res);
    if (fd < 0) return late ? -2 : -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

ssize_t sock_write(int fd, const void *p, size_t n, long timeout_ms) {
    const char *s = p;
    size_t done = 0;
    long long deadline = sock_deadline(timeout_ms);
    while (done < n) {
        ssize_t w = send(fd, s + done, n - done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (sock_wait(fd, POLLOUT, deadline) == 1) continue;
            break;
        }
        if (w == 0) errno = EIO;
        break;
    }
    return (ssize_t)done;
}

ssize_t sock_read_line(int fd, char *buf, size_t size, long timeout_ms) {
    size_t len = 0;
    long long deadline = sock_deadline(timeout_ms);
    for (;;) {
        char ch;
        ssize_t r = recv(fd, &ch, 1, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (sock_wait(fd, POLLIN, deadline) == 1) continue;
            return -1;
        }
        if (r == 0) errno = ECONNRESET; /* EOF */
        if (r <= 0) return -1;
        if (ch == '\n') break;
        if (len + 1 < size) buf[len++] = ch;
    }
    if (len && buf[len - 1] == '\r') len--;
    if (size) buf[len] = '\0';
    return (ssize_t)len;
}

int sock_addr_text(int fd, int peer, char *buf, size_t n) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int rc = peer ? getpeername(fd, (struct sockaddr *)&ss, &sl) : getsockname(fd, (struct sockaddr *)&ss, &sl);
    char host[INET6_ADDRSTRLEN];
    if (rc == 0 && ss.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        if (inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host))) {
            snprintf(buf, n, "%s:%d", host, ntohs(a->sin_port));
            return 0;
        }
    } else if (rc == 0 && ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        if (inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host))) {
            snprintf(buf, n, "[%s]:%d", host, ntohs(a->sin6_port));
            return 0;
        }
    }
    if (n) buf[0] = '\0';
    return -1;
}

int sock_addr_is_local(const char *addr) {
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : strlen(addr);
    return (hl == 9 && strncmp(addr, "127.0.0.1", 9) == 0) || (hl == 5 && strncmp(addr, "[::1]", 5) == 0);
}
