/* mc_get_driver: a memcache text-protocol GET load generator for
 * benchmarks/cache_bench.py.
 *
 *   mc-get-driver PORT CONNS DEPTH SECONDS KEYFMT LENGTHS_FILE SEED
 *
 * One thread, CONNS non-blocking connections on 127.0.0.1:PORT driven by
 * epoll. Each connection sends DEPTH pipelined "get KEY\r\n" (KEY =
 * printf(KEYFMT, i), i uniform in [0, N) where N is the number of lines of
 * LENGTHS_FILE, line i being value i's length), reads the DEPTH replies,
 * then sends the next batch, until SECONDS have passed. Every reply must be
 * "VALUE KEY FLAGS LEN\r\n<LEN bytes>\r\nEND\r\n" with LEN equal to the
 * expected length; anything else counts as bad. Invariant: a connection's
 * buffer holds the unparsed tail of its replies, never a parsed byte.
 * Prints one JSON line: gets, bad, bytes (values), wall seconds, cpu
 * seconds of this process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    char *buf;
    size_t len, cap;
    int pending;        /* replies still expected for the batch in flight */
    int *want;          /* expected key index per pending reply, in order */
    int head;           /* next reply's position in want */
} mconn;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long long rng_state;
static unsigned rnd(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng_state >> 33);
}

static int *lens;
static int nkeys, depth;
static const char *keyfmt;
static unsigned long long gets, bad, bytes;

static int send_batch(mconn *c) {
    char out[64 * 1024];
    size_t o = 0;
    for (int i = 0; i < depth; i++) {
        int k = (int)(rnd() % (unsigned)nkeys);
        c->want[i] = k;
        o += (size_t)snprintf(out + o, sizeof(out) - o, "get ");
        o += (size_t)snprintf(out + o, sizeof(out) - o, keyfmt, k);
        o += (size_t)snprintf(out + o, sizeof(out) - o, "\r\n");
    }
    size_t s = 0;
    while (s < o) {
        ssize_t n = send(c->fd, out + s, o - s, 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) continue;
            return -1;
        }
        s += (size_t)n;
    }
    c->pending = depth;
    c->head = 0;
    return 0;
}

/* Parse as many whole replies as the buffer holds. */
static void parse(mconn *c) {
    size_t p = 0;
    while (c->pending > 0) {
        char *nl = memmem(c->buf + p, c->len - p, "\r\n", 2);
        if (!nl) break;
        size_t ll = (size_t)(nl - (c->buf + p));
        if (ll == 3 && memcmp(c->buf + p, "END", 3) == 0) {
            bad++;
            gets++;
            p += 5;
            c->pending--;
            c->head++;
            continue;
        }
        if (ll < 6 || memcmp(c->buf + p, "VALUE ", 6) != 0) {
            fprintf(stderr, "bad reply line: %.*s\n", (int)(ll > 80 ? 80 : ll), c->buf + p);
            exit(2);
        }
        /* VALUE key flags len */
        char *q = c->buf + p + ll;
        while (q > c->buf + p && q[-1] != ' ') q--;
        long vlen = strtol(q, NULL, 10);
        size_t need = ll + 2 + (size_t)vlen + 2 + 5;
        if (c->len - p < need) {
            if (need > c->cap) {
                c->cap = need * 2;
                char *nb = malloc(c->cap);
                memcpy(nb, c->buf + p, c->len - p);
                free(c->buf);
                c->buf = nb;
                c->len -= p;
                p = 0;
            }
            break;
        }
        if (memcmp(c->buf + p + ll + 2 + vlen, "\r\nEND\r\n", 7) != 0) {
            fprintf(stderr, "no END after a value\n");
            exit(2);
        }
        gets++;
        if (vlen == lens[c->want[c->head]]) {
            bytes += (unsigned long long)vlen;
        } else {
            bad++;
        }
        p += need;
        c->pending--;
        c->head++;
    }
    if (p) {
        memmove(c->buf, c->buf + p, c->len - p);
        c->len -= p;
    }
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: mc-get-driver PORT CONNS DEPTH SECONDS KEYFMT LENGTHS_FILE SEED\n");
        return 2;
    }
    int port = atoi(argv[1]), nconns = atoi(argv[2]);
    depth = atoi(argv[3]);
    double seconds = atof(argv[4]);
    keyfmt = argv[5];
    rng_state = strtoull(argv[7], NULL, 10) * 2654435761ULL + 1;
    FILE *f = fopen(argv[6], "r");
    if (!f) return perror("lengths"), 2;
    int cap = 1024;
    lens = malloc(sizeof(int) * (size_t)cap);
    int v;
    while (fscanf(f, "%d", &v) == 1) {
        if (nkeys == cap) lens = realloc(lens, sizeof(int) * (size_t)(cap *= 2));
        lens[nkeys++] = v;
    }
    fclose(f);
    if (nkeys == 0 || depth < 1 || depth > 1000) return 2;

    int ep = epoll_create1(0);
    mconn *cs = calloc((size_t)nconns, sizeof(mconn));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                             .sin_addr.s_addr = htonl(0x7f000001)};
    for (int i = 0; i < nconns; i++) {
        mconn *c = &cs[i];
        c->fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) return perror("connect"), 2;
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c->cap = 4 << 20;
        c->buf = malloc(c->cap);
        c->want = malloc(sizeof(int) * (size_t)depth);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
    }
    double t0 = now(), end = t0 + seconds;
    for (int i = 0; i < nconns; i++)
        if (send_batch(&cs[i]) < 0) return perror("send"), 2;
    int stopping = 0, inflight = nconns;
    struct epoll_event evs[64];
    while (inflight > 0) {
        int n = epoll_wait(ep, evs, 64, 1000);
        if (n < 0 && errno != EINTR) return perror("epoll"), 2;
        if (!stopping && now() >= end) stopping = 1;
        for (int i = 0; i < n; i++) {
            mconn *c = evs[i].data.ptr;
            for (;;) {
                if (c->cap - c->len < 65536) {
                    c->cap *= 2;
                    c->buf = realloc(c->buf, c->cap);
                }
                ssize_t r = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
                if (r < 0) {
                    if (errno == EAGAIN || errno == EINTR) break;
                    return perror("recv"), 2;
                }
                if (r == 0) {
                    fprintf(stderr, "server closed a connection\n");
                    return 2;
                }
                c->len += (size_t)r;
                parse(c);
                if (c->pending == 0) break;
            }
            if (c->pending == 0) {
                if (stopping) {
                    inflight--;
                    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                } else if (send_batch(c) < 0) {
                    return perror("send"), 2;
                }
            }
        }
    }
    double wall = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    printf("{\"gets\": %llu, \"bad\": %llu, \"bytes\": %llu, \"wall\": %.6f, \"cpu\": %.6f}\n", gets, bad, bytes,
           wall, cpu);
    return 0;
}
