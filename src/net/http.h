/* http.h -- the HTTP/1.1 cache front-end (http_proto.c) and its origin
 * client (mirror.c), for each other and for worker.c. See docs/http.md. */
#ifndef GOBLIN_NET_HTTP_H
#define GOBLIN_NET_HTTP_H
#include <stddef.h>
#include <stdint.h>

#include "net/http_req.h"
#include "net/proto.h"

struct conn;
struct worker;

extern const net_proto http_proto;

/* Start-up, before the workers run: parse --mirror and friends, register
 * the INFO section. 0 ok, -1 with a message on stderr. */
int http_setup(void);
/* The http-port setting (0: no HTTP listeners). */
int http_port(void);

/* Counters (relaxed atomics; any thread). */
typedef struct http_stats {
    uint64_t requests, hits, misses;
    uint64_t fetches, coalesced, fetch_failed;
    uint64_t bytes_in, bytes_out;
    /* First-byte latency, microseconds: count, sum, max, and a log2
     * histogram (bucket i: < 2^i us). */
    uint64_t fb_count, fb_sum, fb_max;
    uint64_t fb_hist[40];
} http_stats;
extern http_stats http_stat;
void http_stat_add(uint64_t *w, uint64_t n);
/* The first byte of the answer to a request read at t0_us went out now. */
void http_stat_first_byte(uint64_t t0_us);
uint64_t http_now_us(void);

/* What a response needs to know of its request. */
typedef struct http_want {
    int method;      /* HTTP_M_GET or HTTP_M_HEAD */
    int close;       /* close after this response */
    int http10;      /* HTTP/1.0 with keep-alive: say so */
    int range;
    long long rfirst, rlast;
    char *inm;       /* owned */
    uint64_t t0_us;  /* when the request was read */
    uint64_t mirror_seen; /* mirror_ended() before the store lookup */
} http_want;

/* The response head: status line and headers, into buf (>= 1024 bytes).
 * clen < 0: no Content-Length. etag / crange / extra may be NULL. */
size_t http_head(char *buf, size_t cap, int status, long long clen, const char *etag, const char *crange,
                 const char *extra, const http_want *w);
/* The full answer to w for a value's bytes (a hit, or an object the origin
 * gave): 200/206/304/416, appended to k's output. */
void http_answer_value(struct conn *k, const http_want *w, const char *body, size_t len);
/* A small answer with a text body (errors, 404...), appended. */
void http_answer_status(struct conn *k, const http_want *w, int status, const char *text);
/* k waits for the origin (mirror.c) / is done waiting: its pipelined
 * requests go on. */
void http_set_waiting(struct conn *k, int on);
int http_waiting(struct conn *k);
void http_resume(struct conn *k);
/* Serve a GET/HEAD for key to k again (the fetch it waited for on another
 * worker ended): a hit, or a miss with its own fetch. Not from process(). */
void http_serve_again(struct conn *k, const char *key, size_t klen, const http_want *w);
/* Store body as key's value through the command layer (SET) on k's
 * client, tag its ETag hash (http_etag_hash of body): 0 ok, -1 refused. */
int http_store(struct conn *k, const char *key, size_t klen, const char *body, size_t blen, uint64_t tag);
/* The string a value's ETag is ("\"<16 hex>\""), into buf (>= 24). */
void http_etag(const char *p, size_t n, char *buf);

/* ---- http_etag.c: ETags kept by key until the key is written ------------ */
/* With an HTTP listener: follow the command layer's key modifications. */
void http_etag_init(void);
/* The epoch to hand to http_etag_of: taken before the command that reads
 * key's value. */
uint64_t http_etag_epoch(const char *key, size_t klen);
/* The ETag of key's value body[0..len) read after epoch was taken, into
 * buf (>= 24): the kept one, or hashed now (and kept). */
void http_etag_of(const char *key, size_t klen, uint64_t epoch, const char *body, size_t len, char *buf);
/* The kept ETag of key, if the epoch is still epoch: 1 (into buf), or 0. */
int http_etag_lookup(const char *key, size_t klen, uint64_t epoch, char *buf);
/* This thread is about to write body (hashed: tag) to key through HTTP:
 * that write's modification report keeps tag as the key's ETag. _end
 * after the write, whether it happened or not. */
void http_etag_store_begin(const char *key, size_t klen, uint64_t tag);
void http_etag_store_end(void);
/* The 64-bit hash an ETag is (XXH3, seeded per process). */
uint64_t http_etag_hash(const char *p, size_t n);
/* The same hash over bytes that come in pieces: new, add each piece in
 * order, then end (the hash; frees it) or drop. NULL on no memory. */
typedef struct http_etag_acc http_etag_acc;
http_etag_acc *http_etag_acc_new(void);
void http_etag_acc_add(http_etag_acc *a, const char *p, size_t n);
uint64_t http_etag_acc_end(http_etag_acc *a);
void http_etag_acc_drop(http_etag_acc *a);

/* ---- mirror.c ---------------------------------------------------------- */
int mirror_enabled(void);
/* uring: the io_uring origin client (mirror-client uring), else sockets. */
int mirror_setup(const char *url, long long timeout_ms, int uring, char *err, size_t errlen);
/* A miss for key on k: fetch it from the origin (or join the fetch in
 * flight); the answer to w goes to k when it comes. k is waiting
 * (http_set_waiting) until then. Takes w->inm. 1 instead (w untouched):
 * a fetch ended since w->mirror_seen was read, look in the store again. */
int mirror_miss(struct conn *k, const char *key, size_t klen, http_want *w);
/* How many origin fetches have ended (left the coalescing registry). */
uint64_t mirror_ended(void);
/* k goes away: it leaves the fetch it waits on. */
void mirror_conn_gone(struct conn *k);
/* The worker's thread ends (before its loop is freed): its idle origin
 * connections are closed, its ring (mirror-client uring) let go. */
void mirror_thread_exit(void);
#endif
