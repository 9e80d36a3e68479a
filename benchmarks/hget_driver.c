/* hget_driver.c -- time-bounded, pipelined random-HGET load generator.
 *
 * Used by benchmarks/tlb_arena_benchmark.py (built by `make bench-tools` as
 * build-release/hget-driver). Not a test.
 *
 * It opens C connections to one server and keeps each one busy with batches
 * of P pipelined HGET KEY <prefix><n> commands, n uniform in [0, RANGE) and
 * written zero-padded to 12 digits -- the same field names redis-benchmark
 * produces for "field:__rand_int__" with -r RANGE. A connection sends its
 * next batch as soon as every reply of the previous one has been parsed
 * (hiredis' reply reader), so at most C*P requests are in flight. After T
 * seconds no new batch is sent, the outstanding replies are drained, and one
 * line is printed:
 *
 *   requests=N seconds=S rps=R misses=M errors=E
 *
 * misses counts nil replies (a field that does not exist), errors error
 * replies; both should be 0 on a correctly loaded hash. Single-threaded and
 * poll()-driven: the cost per request is one formatted field and one parsed
 * reply, well below what a server spends on a HGET, so the server (not this
 * client) is the bottleneck when the two run on different CPUs.
 *
 *   hget-driver -p PORT -r RANGE [-h 127.0.0.1] [-k KEY] [-x PREFIX]
 *               [-c CONNS] [-P PIPELINE] [-t SECONDS] [-s SEED]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct conn {
    int fd;
    char *out;          /* one batch of P commands */
    size_t outlen, outoff;
    unsigned pending;   /* replies still expected for the batch */
    redisReader *rd;
} conn;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static inline uint64_t rng_next(void) { /* xorshift64* */
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void) {
    fprintf(stderr,
            "usage: hget-driver -p PORT -r RANGE [-h HOST] [-k KEY] [-x FIELD_PREFIX]\n"
            "                   [-c CONNS] [-P PIPELINE] [-t SECONDS] [-s SEED]\n"
            "Random HGET KEY <prefix><12-digit n>, n in [0,RANGE), pipelined; prints\n"
            "requests=N seconds=S rps=R misses=M errors=E\n"
            "defaults: -h 127.0.0.1 -k myhash -x field: -c 4 -P 32 -t 10 -s 1\n");
    exit(2);
}

static int connect_to(const char *host, int port) {
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "hget-driver: bad IPv4 address %s\n", host);
        exit(2);
    }
    for (int tries = 0; tries < 50; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) break;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
            return fd;
        }
        close(fd);
        usleep(100000);
    }
    fprintf(stderr, "hget-driver: cannot connect to %s:%d: %s\n", host, port, strerror(errno));
    exit(1);
}

/* Writes P commands into c->out; every command has the same length. */
static void fill_batch(conn *c, unsigned P, const char *head, size_t headlen, uint64_t range) {
    char *p = c->out;
    for (unsigned i = 0; i < P; i++) {
        memcpy(p, head, headlen);
        p += headlen;
        uint64_t n = rng_next() % range;
        for (int d = 11; d >= 0; d--) {
            p[d] = (char)('0' + n % 10);
            n /= 10;
        }
        p += 12;
        *p++ = '\r';
        *p++ = '\n';
    }
    c->outlen = (size_t)(p - c->out);
    c->outoff = 0;
    c->pending = P;
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *key = "myhash", *prefix = "field:";
    int port = 0, conns = 4, opt;
    unsigned P = 32;
    double seconds = 10;
    uint64_t range = 0, seed = 1;
    while ((opt = getopt(argc, argv, "h:p:k:x:c:P:t:r:s:")) != -1) {
        switch (opt) {
        case 'h': host = optarg; break;
        case 'p': port = atoi(optarg); break;
        case 'k': key = optarg; break;
        case 'x': prefix = optarg; break;
        case 'c': conns = atoi(optarg); break;
        case 'P': P = (unsigned)atoi(optarg); break;
        case 't': seconds = atof(optarg); break;
        case 'r': range = strtoull(optarg, NULL, 10); break;
        case 's': seed = strtoull(optarg, NULL, 10); break;
        default: usage();
        }
    }
    if (port <= 0 || range == 0 || conns <= 0 || P == 0 || seconds <= 0) usage();
    rng_state ^= seed * 0xD1B54A32D192ED03ull;
    if (!rng_state) rng_state = 1;

    /* "*3\r\n$4\r\nHGET\r\n$<klen>\r\n<key>\r\n$<flen>\r\n<prefix>" then 12 digits */
    size_t plen = strlen(prefix), klen = strlen(key);
    size_t headcap = 64 + klen + plen;
    char *head = malloc(headcap);
    int hl = snprintf(head, headcap, "*3\r\n$4\r\nHGET\r\n$%zu\r\n%s\r\n$%zu\r\n%s", klen, key,
                      plen + 12, prefix);
    size_t headlen = (size_t)hl;
    size_t cmdlen = headlen + 14;

    conn *cs = calloc((size_t)conns, sizeof *cs);
    struct pollfd *pf = calloc((size_t)conns, sizeof *pf);
    for (int i = 0; i < conns; i++) {
        cs[i].fd = connect_to(host, port);
        cs[i].out = malloc(cmdlen * P);
        cs[i].rd = redisReaderCreate();
    }

    uint64_t done = 0, misses = 0, errors = 0;
    char buf[65536];
    double t0 = now_s(), deadline = t0 + seconds;
    int stopping = 0;
    for (int i = 0; i < conns; i++) fill_batch(&cs[i], P, head, headlen, range);

    for (;;) {
        int active = 0;
        if (!stopping && now_s() >= deadline) stopping = 1;
        for (int i = 0; i < conns; i++) {
            conn *c = &cs[i];
            if (c->pending == 0 && !stopping) fill_batch(c, P, head, headlen, range);
            pf[i].fd = c->fd;
            pf[i].events = 0;
            pf[i].revents = 0;
            if (c->outoff < c->outlen) pf[i].events |= POLLOUT;
            if (c->pending) pf[i].events |= POLLIN;
            if (pf[i].events) active++;
            else pf[i].fd = -1;
        }
        if (!active) break;
        int n = poll(pf, (nfds_t)conns, 1000);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("poll");
            return 1;
        }
        for (int i = 0; i < conns; i++) {
            conn *c = &cs[i];
            if (pf[i].revents & (POLLERR | POLLHUP | POLLNVAL)) {
                if (!(pf[i].revents & POLLIN)) {
                    fprintf(stderr, "hget-driver: connection %d closed by the server\n", i);
                    return 1;
                }
            }
            if ((pf[i].revents & POLLOUT) && c->outoff < c->outlen) {
                ssize_t w = write(c->fd, c->out + c->outoff, c->outlen - c->outoff);
                if (w > 0) c->outoff += (size_t)w;
                else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                    perror("hget-driver: write");
                    return 1;
                }
            }
            if (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                ssize_t r = read(c->fd, buf, sizeof buf);
                if (r == 0) {
                    fprintf(stderr, "hget-driver: connection %d closed by the server\n", i);
                    return 1;
                }
                if (r < 0) {
                    if (errno == EAGAIN || errno == EINTR) continue;
                    perror("hget-driver: read");
                    return 1;
                }
                if (redisReaderFeed(c->rd, buf, (size_t)r) != REDIS_OK) {
                    fprintf(stderr, "hget-driver: reader: %s\n", c->rd->errstr);
                    return 1;
                }
                void *rep;
                while (c->pending) {
                    if (redisReaderGetReply(c->rd, &rep) != REDIS_OK) {
                        fprintf(stderr, "hget-driver: protocol error: %s\n", c->rd->errstr);
                        return 1;
                    }
                    if (!rep) break;
                    redisReply *rr = rep;
                    if (rr->type == REDIS_REPLY_NIL) misses++;
                    else if (rr->type == REDIS_REPLY_ERROR) {
                        if (errors == 0) fprintf(stderr, "hget-driver: first error: %s\n", rr->str);
                        errors++;
                    }
                    freeReplyObject(rep);
                    c->pending--;
                    done++;
                }
            }
        }
    }
    double el = now_s() - t0;
    printf("requests=%llu seconds=%.3f rps=%.1f misses=%llu errors=%llu\n", (unsigned long long)done, el,
           (double)done / el, (unsigned long long)misses, (unsigned long long)errors);
    for (int i = 0; i < conns; i++) {
        close(cs[i].fd);
        redisReaderFree(cs[i].rd);
        free(cs[i].out);
    }
    free(cs);
    free(pf);
    free(head);
    return 0;
}
