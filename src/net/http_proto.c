/* http_proto.c -- HTTP/1.1 as a protocol module (proto.h): a cache
 * front-end over database 0's string values.
 *
 * Each request is parsed by http_req.c (libhttp-parser) and served through
 * the command layer on the connection's client, as a RESP client's GET,
 * SET or DEL would be: the same locks, ACL (the default user), statistics,
 * write stream, WATCH and eviction. A GET hands the value it finds to this
 * module's value sink (client.value_sink, http_value_sink) while it holds
 * the key: the HTTP head and the body go out from there, a large body
 * straight from the store to the socket (reply_rawv), with no RESP framing
 * in between. A value whose tail is on the SSD is streamed as GET streams
 * it (cmd/stream.c), the head and the bytes alone, so its body follows its
 * head as the reads complete. Other replies (errors, misses, SET, DEL,
 * the few GETs the sink leaves) are caught in the output
 * (CLIENT_CAPTURE) and rewritten in place into the HTTP answer. Requests
 * pipelined on a connection are answered in order: the module stops while
 * a streamed body or an origin fetch (mirror.c) is in progress, and goes
 * on when it ends.
 *
 * Key mapping: the request target's path, percent-decoded, without its
 * leading '/', is the key (the query string is not part of it). ETag: a
 * 64-bit hash of the value's bytes, in hex (strong), computed when the
 * value is stored through HTTP or on its first GET and kept until the key
 * is written (http_etag.c), so a hit costs a table lookup, not a pass over
 * the value; a value streamed from the SSD has one only if it was stored
 * through HTTP (its bytes are never all read at once). A malformed request gets 400 and the
 * connection closes. PUT and DELETE only with http-admin yes (else 405). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/config.h"
#include "base/log.h"
#include "base/tls.h"
#include "cmd/command.h"
#include "cmd/server/admin_family.h"
#include "cmd/stream.h"
#include "net/http.h"
#include "net/internal.h"
#include "net/net.h"
#include "session/reply.h"
#include "util/monotime.h"
#include "util/strbuf.h"

http_stats http_stat;
static int http_admin;

/* A GET being served: what the value sink needs to answer it. */
typedef struct hget {
    const http_req *r;
    const http_want *w;
    uint64_t epoch;
    int answered;       /* the sink appended the answer (a streamed body follows) */
    size_t bytes;       /* the answer's length */
} hget;

typedef struct hstate {
    int waiting;        /* an origin fetch answers the request being served */
    int sent_continue;  /* "100 Continue" went out for the request being read */
    int closing;        /* answered a Connection: close: read nothing more */
    size_t hint;
    hget *get;          /* set while serve_get runs its GET */
} hstate;

void http_stat_add(uint64_t *w, uint64_t n) { __atomic_fetch_add(w, n, __ATOMIC_RELAXED); }

uint64_t http_now_us(void) { return monotime_us(); }

void http_stat_first_byte(uint64_t t0_us) {
    uint64_t now = monotime_us();
    uint64_t d = now > t0_us ? now - t0_us : 0;
    http_stat_add(&http_stat.fb_count, 1);
    http_stat_add(&http_stat.fb_sum, d);
    uint64_t m = __atomic_load_n(&http_stat.fb_max, __ATOMIC_RELAXED);
    while (d > m && !__atomic_compare_exchange_n(&http_stat.fb_max, &m, d, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    int b = 0;
    while (b < 39 && (1ULL << b) <= d) b++;
    http_stat_add(&http_stat.fb_hist[b], 1);
}

/* ---- Response heads ------------------------------------------------------ */

static const char *reason(int status) {
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 416: return "Range Not Satisfiable";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
    }
}

/* The Date header's value, formatted once a second per thread. */
static const char *http_date(void) {
    static _Thread_local char buf[64];
    static _Thread_local time_t last;
    time_t now = time(NULL);
    if (now != last) {
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        last = now;
    }
    return buf;
}

size_t http_head(char *buf, size_t cap, int status, long long clen, const char *etag, const char *crange,
                 const char *extra, const http_want *w) {
    int n = snprintf(buf, cap, "HTTP/1.1 %d %s\r\nDate: %s\r\nServer: goblin\r\n", status, reason(status),
                     http_date());
    size_t o = (size_t)n;
#define ADDF(...)                                                                   \
    do {                                                                            \
        int m_ = snprintf(buf + o, o < cap ? cap - o : 0, __VA_ARGS__);             \
        if (m_ > 0) o += (size_t)m_;                                                \
    } while (0)
    if (clen >= 0) ADDF("Content-Length: %lld\r\n", clen);
    if (status == 200 || status == 206 || status == 304 || status == 416) ADDF("Accept-Ranges: bytes\r\n");
    if (status == 200 || status == 206) ADDF("Content-Type: application/octet-stream\r\n");
    if (etag) ADDF("ETag: %s\r\n", etag);
    if (crange) ADDF("Content-Range: %s\r\n", crange);
    if (extra) ADDF("%s", extra);
    if (w && w->close) ADDF("Connection: close\r\n");
    else if (w && w->http10) ADDF("Connection: keep-alive\r\n");
    ADDF("\r\n");
#undef ADDF
    if (o >= cap) o = cap - 1;
    return o;
}

void http_etag(const char *p, size_t n, char *buf) {
    snprintf(buf, 24, "\"%016llx\"", (unsigned long long)http_etag_hash(p, n));
}

/* If-None-Match lists etag (weak comparison, as RFC 9110 asks) or is "*". */
static int inm_matches(const char *inm, const char *etag) {
    if (!inm) return 0;
    const char *p = inm;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) break;
        const char *s = p;
        while (*p && *p != ',') p++;
        const char *e = p;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e - s == 1 && *s == '*') return 1;
        if (e - s > 2 && s[0] == 'W' && s[1] == '/') s += 2;
        if ((size_t)(e - s) == strlen(etag) && memcmp(s, etag, (size_t)(e - s)) == 0) return 1;
    }
    return 0;
}

/* What answers w for a value of len bytes whose ETag is et: the status,
 * the head (into head), and the part of the value that follows it. */
static size_t plan(const http_want *w, size_t len, const char *et, char *head, size_t cap, size_t *off,
                   size_t *n) {
    char cr[96];
    *off = 0;
    *n = 0;
    if (et && inm_matches(w->inm, et)) return http_head(head, cap, 304, -1, et, NULL, NULL, w);
    if (w->range == HTTP_RANGE_ONE) {
        long long first = w->rfirst, last = w->rlast, L = (long long)len;
        if (first < 0) { /* suffix */
            if (last == 0 || L == 0) {
                snprintf(cr, sizeof(cr), "bytes */%lld", L);
                return http_head(head, cap, 416, 0, NULL, cr, NULL, w);
            }
            first = last >= L ? 0 : L - last;
            last = L - 1;
        } else {
            if (first >= L) {
                snprintf(cr, sizeof(cr), "bytes */%lld", L);
                return http_head(head, cap, 416, 0, NULL, cr, NULL, w);
            }
            if (last < 0 || last >= L) last = L - 1;
        }
        snprintf(cr, sizeof(cr), "bytes %lld-%lld/%lld", first, last, L);
        if (w->method == HTTP_M_GET) {
            *off = (size_t)first;
            *n = (size_t)(last - first + 1);
        }
        return http_head(head, cap, 206, last - first + 1, et, cr, NULL, w);
    }
    if (w->method == HTTP_M_GET) *n = len;
    return http_head(head, cap, 200, (long long)len, et, NULL, NULL, w);
}

void http_answer_value(conn *k, const http_want *w, const char *body, size_t len) {
    char head[1024];
    size_t off, n;
    char et[24];
    http_etag(body, len, et);
    size_t hl = plan(w, len, et, head, sizeof(head), &off, &n);
    struct iovec v[2] = {{head, hl}, {(void *)(body + off), n}};
    reply_rawv(&k->c, v, 2);
    http_stat_add(&http_stat.bytes_out, hl + n);
}

void http_answer_status(conn *k, const http_want *w, int status, const char *text) {
    char head[1024];
    size_t tl = text ? strlen(text) : 0;
    const char *extra = status == 405 ? "Allow: GET, HEAD, PUT, DELETE\r\nContent-Type: text/plain\r\n"
                        : tl          ? "Content-Type: text/plain\r\n"
                                      : NULL;
    if (status == 405 && !http_admin) extra = "Allow: GET, HEAD\r\nContent-Type: text/plain\r\n";
    int nobody = status == 204 || status == 304 || (w && w->method == HTTP_M_HEAD);
    size_t hl = http_head(head, sizeof(head), status, status == 204 ? -1 : (long long)(tl + (tl ? 1 : 0)), NULL,
                          NULL, extra, w);
    reply_raw(&k->c, head, hl);
    if (!nobody && tl) {
        reply_raw(&k->c, text, tl);
        reply_raw(&k->c, "\n", 1);
        hl += tl + 1;
    }
    http_stat_add(&http_stat.bytes_out, hl);
    if (w) http_stat_first_byte(w->t0_us);
}

/* ---- Commands, their RESP replies caught ---------------------------------- */

/* Where the reply of the command about to run begins in c's output. */
static size_t cap_begin(client *c) {
    if (c->olen == c->osent) client_set_out(c, 0, 0);
    return c->olen;
}

/* The command's reply stays in the output to be read back and rewritten
 * (CLIENT_CAPTURE), except what the value sink answers itself. */
static void run_cmd(client *c, garg *argv, int argc) {
    c->argc = argc;
    c->argv = argv;
    client_flag_on(c, CLIENT_CAPTURE);
    cmd_execute(c);
    client_flag_off(c, CLIENT_CAPTURE);
    c->argc = 0;
    c->argv = NULL;
}

/* An error reply's status. */
static int error_status(const char *p, size_t n) {
    if (n >= 8 && memcmp(p, "-NOAUTH ", 8) == 0) return 401;
    if (n >= 8 && memcmp(p, "-NOPERM ", 8) == 0) return 403;
    if (n >= 10 && memcmp(p, "-WRONGTYPE", 10) == 0) return 409;
    if (n >= 4 && (memcmp(p, "-OOM", 4) == 0 || memcmp(p, "-LOA", 4) == 0 || memcmp(p, "-BUS", 4) == 0 ||
                   memcmp(p, "-MIS", 4) == 0 || memcmp(p, "-REA", 4) == 0 || memcmp(p, "-NOR", 4) == 0))
        return 503;
    return 500;
}

/* The caught reply (from olen0) becomes an error answer. */
static void caught_error(conn *k, const http_want *w, size_t olen0) {
    client *c = &k->c;
    char msg[256];
    size_t n = c->olen - olen0;
    const char *p = c->obuf + olen0;
    int st = error_status(p, n);
    size_t m = 0;
    for (size_t i = 1; i < n && p[i] != '\r' && m < sizeof(msg) - 1; i++) msg[m++] = p[i];
    msg[m] = '\0';
    client_set_out(c, c->osent, olen0);
    http_answer_status(k, w, st, msg);
}

/* Replace c's output from olen0 on by head followed by the n bytes at
 * olen0 + src (already in the buffer). */
static void rewrite(client *c, size_t olen0, const char *head, size_t hl, size_t src, size_t n) {
    static const char pad[1024];
    size_t have = c->olen - olen0, need = hl + n;
    while (need > have) {
        size_t add = need - have > sizeof(pad) ? sizeof(pad) : need - have;
        reply_raw(c, pad, add);
        have += add;
    }
    memmove(c->obuf + olen0 + hl, c->obuf + olen0 + src, n);
    memcpy(c->obuf + olen0, head, hl);
    client_set_out(c, c->osent, olen0 + need);
}

/* "$<len>\r\n" at p: its length and the header's, or -1 (a null / not a
 * bulk string). */
static long long bulk_len(const char *p, size_t n, size_t *pfx) {
    if (n < 4 || p[0] != '$' || p[1] == '-') return -1;
    long long v = 0;
    size_t i = 1;
    while (i < n && p[i] >= '0' && p[i] <= '9') v = v * 10 + (p[i++] - '0');
    if (i + 1 >= n || p[i] != '\r') return -1;
    *pfx = i + 2;
    return v;
}

int http_store(conn *k, const char *key, size_t klen, const char *body, size_t blen, uint64_t tag) {
    client *c = &k->c;
    garg argv[3] = {{(char *)"SET", 3}, {(char *)key, klen}, {(char *)body, blen}};
    int saved_db = c->db;
    c->db = 0;
    size_t olen0 = cap_begin(c);
    http_etag_store_begin(key, klen, tag);
    run_cmd(c, argv, 3);
    http_etag_store_end();
    c->db = saved_db;
    int ok = c->olen > olen0 && c->obuf[olen0] == '+';
    if (!ok) {
        size_t n = c->olen - olen0 > 120 ? 120 : c->olen - olen0;
        log_verbose("HTTP: storing a fetched object was refused: %.*s", (int)n, c->obuf + olen0);
    }
    client_set_out(c, c->osent, olen0);
    return ok ? 0 : -1;
}

/* ---- Serving --------------------------------------------------------------- */

/* client.value_sink while serve_get runs its GET: the value, where GET
 * found it, becomes the HTTP answer with no RESP framing to rewrite, and
 * reply_rawv sends a large body straight from the store. A streamed value
 * (its tail on the SSD) is taken only for a plain GET that is not a 304:
 * the head and the first part of the body now, the rest from the stream.
 * A value in RAM is taken whole unless its ETag must be computed and its
 * bytes are in two parts (head and tail); serve_get answers the rest from
 * the RESP reply, as before. */
static int http_value_sink(client *c, const struct iovec *parts, int nparts, size_t len, int streamed) {
    hstate *hs = ((conn *)c->conn)->pstate;
    hget *g = hs->get;
    if (!g) return 0;
    const http_want *w = g->w;
    char head[1024], etb[24];
    const char *et = http_etag_lookup(g->r->key, g->r->klen, g->epoch, etb) ? etb : NULL;
    struct iovec v[4];
    size_t hl, off = 0, n = len;
    int nv = 1;
    if (streamed) {
        if (w->method != HTTP_M_GET || w->range != HTTP_RANGE_NONE || (et && inm_matches(w->inm, et))) return 0;
        hl = http_head(head, sizeof(head), 200, (long long)len, et, NULL, NULL, w);
        for (int i = 0; i < nparts; i++) v[nv++] = parts[i];
    } else {
        if (!et) {
            if (nparts > 1) return 0;
            http_etag_of(g->r->key, g->r->klen, g->epoch, parts[0].iov_base, parts[0].iov_len, etb);
            et = etb;
        }
        hl = plan(w, len, et, head, sizeof(head), &off, &n);
        /* The body: [off, off + n) of the parts. */
        size_t skip = off, want = n;
        for (int i = 0; i < nparts && want; i++) {
            if (skip >= parts[i].iov_len) {
                skip -= parts[i].iov_len;
                continue;
            }
            size_t take = parts[i].iov_len - skip < want ? parts[i].iov_len - skip : want;
            v[nv++] = (struct iovec){(char *)parts[i].iov_base + skip, take};
            want -= take;
            skip = 0;
        }
    }
    v[0] = (struct iovec){head, hl};
    client_flag_off(c, CLIENT_CAPTURE); /* this answer is final */
    reply_rawv(c, v, nv);
    client_flag_on(c, CLIENT_CAPTURE);
    g->answered = 1;
    g->bytes = hl + n;
    return 1;
}

static void serve_get(conn *k, http_req *r, http_want *w) {
    client *c = &k->c;
    garg argv[4] = {{(char *)"GET", 3}, {r->key, r->klen}, {NULL, 0}, {NULL, 0}};
    hstate *hs = k->pstate;
again:;
    hget g = {r, w, http_etag_epoch(r->key, r->klen), 0, 0};
    size_t olen0 = cap_begin(c);
    if (mirror_enabled()) w->mirror_seen = mirror_ended();
    hs->get = &g;
    c->value_sink = http_value_sink;
    run_cmd(c, argv, 2);
    c->value_sink = NULL;
    hs->get = NULL;
    if (g.answered) {
        http_stat_add(&http_stat.hits, 1);
        http_stat_add(&http_stat.bytes_out, g.bytes);
        http_stat_first_byte(w->t0_us);
        return;
    }
    uint64_t epoch = g.epoch;
    size_t n = c->olen - olen0;
    const char *p = c->obuf + olen0;
    if (n && p[0] == '-') {
        caught_error(k, w, olen0);
        return;
    }
    size_t pfx = 0;
    long long len = bulk_len(p, n, &pfx);
    if (len < 0) {
        client_set_out(c, c->osent, olen0);
        /* A fetch of it may have ended meanwhile: then it looks again. */
        if (mirror_enabled() && mirror_miss(k, r->key, r->klen, w)) goto again;
        http_stat_add(&http_stat.misses, 1);
        if (mirror_enabled()) return;
        http_answer_status(k, w, 404, "Not Found");
        return;
    }
    http_stat_add(&http_stat.hits, 1);
    char head[1024];
    if (client_flags_peek(c) & CLIENT_STREAMING) {
        /* The head is in the output, the tail follows from the SSD. Its
         * ETag is known if it was stored through HTTP. */
        char etb[24];
        const char *et = http_etag_lookup(r->key, r->klen, epoch, etb) ? etb : NULL;
        if (et && inm_matches(w->inm, et)) {
            cmd_stream_client_gone(c);
            client_set_out(c, c->osent, olen0);
            size_t hl = http_head(head, sizeof(head), 304, -1, et, NULL, NULL, w);
            reply_raw(c, head, hl);
            http_stat_add(&http_stat.bytes_out, hl);
            http_stat_first_byte(w->t0_us);
            return;
        }
        cmd_stream_client_gone(c);
        client_set_out(c, c->osent, olen0);
        if (w->range == HTTP_RANGE_NONE || w->method == HTTP_M_HEAD) {
            /* HEAD: the length is all it needs. A Range on HEAD: as GET's head. */
            if (w->range == HTTP_RANGE_NONE) {
                size_t hl = http_head(head, sizeof(head), 200, len, et, NULL, NULL, w);
                reply_raw(c, head, hl);
                http_stat_add(&http_stat.bytes_out, hl);
            } else {
                char cr[96];
                long long f = w->rfirst, l = w->rlast;
                if (f < 0) {
                    f = l >= len ? 0 : len - l;
                    l = len - 1;
                } else if (l < 0 || l >= len) {
                    l = len - 1;
                }
                size_t hl;
                if ((w->rfirst >= 0 && w->rfirst >= len) || (w->rfirst < 0 && w->rlast == 0)) {
                    snprintf(cr, sizeof(cr), "bytes */%lld", len);
                    hl = http_head(head, sizeof(head), 416, 0, NULL, cr, NULL, w);
                } else {
                    snprintf(cr, sizeof(cr), "bytes %lld-%lld/%lld", f, l, len);
                    hl = http_head(head, sizeof(head), 206, l - f + 1, et, cr, NULL, w);
                }
                reply_raw(c, head, hl);
                http_stat_add(&http_stat.bytes_out, hl);
            }
            http_stat_first_byte(w->t0_us);
            return;
        }
        /* GET with a Range: GETRANGE reads just that part. */
        long long f = w->rfirst, l = w->rlast;
        char cr[96];
        if ((f >= 0 && f >= len) || (f < 0 && l == 0)) {
            snprintf(cr, sizeof(cr), "bytes */%lld", len);
            size_t hl = http_head(head, sizeof(head), 416, 0, NULL, cr, NULL, w);
            reply_raw(c, head, hl);
            http_stat_add(&http_stat.bytes_out, hl);
            http_stat_first_byte(w->t0_us);
            return;
        }
        if (f < 0) {
            f = l >= len ? 0 : len - l;
            l = len - 1;
        } else if (l < 0 || l >= len) {
            l = len - 1;
        }
        char fs[24], ls[24];
        snprintf(fs, sizeof(fs), "%lld", f);
        snprintf(ls, sizeof(ls), "%lld", l);
        garg gr[4] = {{(char *)"GETRANGE", 8}, {r->key, r->klen}, {fs, strlen(fs)}, {ls, strlen(ls)}};
        olen0 = cap_begin(c);
        run_cmd(c, gr, 4);
        n = c->olen - olen0;
        p = c->obuf + olen0;
        long long got = bulk_len(p, n, &pfx);
        if (got < 0 || got != l - f + 1) {
            if (n && p[0] == '-') {
                caught_error(k, w, olen0);
                return;
            }
            client_set_out(c, c->osent, olen0);
            http_answer_status(k, w, 503, "value changed while read");
            return;
        }
        snprintf(cr, sizeof(cr), "bytes %lld-%lld/%lld", f, l, len);
        /* The part was read by a second command: its ETag only if no
         * write came between. */
        if (et && !http_etag_lookup(r->key, r->klen, epoch, etb)) et = NULL;
        size_t hl = http_head(head, sizeof(head), 206, got, et, cr, NULL, w);
        rewrite(c, olen0, head, hl, pfx, (size_t)got);
        http_stat_add(&http_stat.bytes_out, hl + (uint64_t)got);
        http_stat_first_byte(w->t0_us);
        return;
    }
    /* The whole value is in the output: a value in two parts whose ETag
     * the sink could not compute without joining them. */
    size_t off, m;
    char et[24];
    http_etag_of(r->key, r->klen, epoch, p + pfx, (size_t)len, et);
    size_t hl = plan(w, (size_t)len, et, head, sizeof(head), &off, &m);
    rewrite(c, olen0, head, hl, pfx + off, m);
    http_stat_add(&http_stat.bytes_out, hl + m);
    http_stat_first_byte(w->t0_us);
}

static void serve_put(conn *k, http_req *r, http_want *w) {
    client *c = &k->c;
    garg argv[3] = {{(char *)"SET", 3}, {r->key, r->klen}, {r->body, r->blen}};
    size_t olen0 = cap_begin(c);
    http_etag_store_begin(r->key, r->klen, http_etag_hash(r->body, r->blen));
    run_cmd(c, argv, 3);
    http_etag_store_end();
    if (c->olen > olen0 && c->obuf[olen0] == '-') {
        caught_error(k, w, olen0);
        return;
    }
    client_set_out(c, c->osent, olen0);
    http_answer_status(k, w, 204, NULL);
}

static void serve_delete(conn *k, http_req *r, http_want *w) {
    client *c = &k->c;
    garg argv[2] = {{(char *)"DEL", 3}, {r->key, r->klen}};
    size_t olen0 = cap_begin(c);
    run_cmd(c, argv, 2);
    if (c->olen > olen0 && c->obuf[olen0] == '-') {
        caught_error(k, w, olen0);
        return;
    }
    int gone = c->olen > olen0 + 1 && c->obuf[olen0] == ':' && c->obuf[olen0 + 1] != '0';
    client_set_out(c, c->osent, olen0);
    http_answer_status(k, w, gone ? 204 : 404, gone ? NULL : "Not Found");
}

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The connection's timer (an HTTP client never blocks, so it is free):
 * once the streamed body is all in the output, close after sending it. */
static void close_when_streamed(client *c) {
    if (client_flags_peek(c) & CLIENT_STREAMING) {
        net_client_timer(c, wall_ms() + 10, close_when_streamed);
        return;
    }
    client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
    net_client_flush(c); /* may free the connection */
}

/* Connection: close. Not while the answer is still to come: a waiting or
 * streaming connection would be closed as soon as its output is out. A
 * streamed answer is closed after by the connection's timer, and the
 * requests after it are not read; a waiting one by mirror.c. */
static void after_answer(conn *k, const http_want *w) {
    hstate *h = k->pstate;
    if (!w->close) return;
    if (client_flags_peek(&k->c) & CLIENT_STREAMING) {
        h->closing = 1;
        net_client_timer(&k->c, wall_ms() + 10, close_when_streamed);
    } else if (!h->waiting) {
        client_flag_on(&k->c, CLIENT_CLOSE_AFTER_REPLY);
    }
}

static void serve(conn *k, http_req *r, uint64_t t0) {
    client *c = &k->c;
    http_want w = {0};
    w.method = r->method;
    w.close = !r->keepalive;
    w.http10 = r->keepalive && r->major == 1 && r->minor == 0;
    w.range = r->range;
    w.rfirst = r->rfirst;
    w.rlast = r->rlast;
    w.inm = r->inm;
    r->inm = NULL;
    w.t0_us = t0;
    /* Database 0, whatever a RESP SELECT would say (it cannot be sent here). */
    c->db = 0;
    switch (r->method) {
    case HTTP_M_GET:
    case HTTP_M_HEAD: serve_get(k, r, &w); break;
    case HTTP_M_PUT:
        if (http_admin) serve_put(k, r, &w);
        else http_answer_status(k, &w, 405, "Method Not Allowed");
        break;
    case HTTP_M_DELETE:
        if (http_admin) serve_delete(k, r, &w);
        else http_answer_status(k, &w, 405, "Method Not Allowed");
        break;
    case HTTP_M_OTHER: http_answer_status(k, &w, 405, "Method Not Allowed"); break;
    default: http_answer_status(k, &w, 501, "Not Implemented"); break;
    }
    free(w.inm);
    after_answer(k, &w);
}

void http_serve_again(conn *k, const char *key, size_t klen, const http_want *w) {
    http_req r = {0};
    r.key = (char *)key;
    r.klen = klen;
    r.method = w->method;
    http_want w2 = *w;
    w2.inm = w->inm ? strdup(w->inm) : NULL;
    k->c.db = 0;
    serve_get(k, &r, &w2);
    free(w2.inm);
    after_answer(k, &w2);
}

/* ---- The protocol module ------------------------------------------------- */

static const char *http_refusal(int why) {
    if (why == NET_REFUSE_MAXCLIENTS)
        return "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    return "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 50\r\nConnection: close\r\n\r\n"
           "protected mode: only loopback clients are served.\n";
}

static int http_open(conn *k) {
    hstate *h = calloc(1, sizeof(*h));
    if (!h) return -1;
    k->pstate = h;
    return 0;
}

static void http_close(conn *k) {
    if (!k->pstate) return;
    mirror_conn_gone(k);
    free(k->pstate);
    k->pstate = NULL;
}

void http_set_waiting(conn *k, int on) {
    hstate *h = k->pstate;
    if (h) h->waiting = on;
}

int http_waiting(conn *k) {
    hstate *h = k->pstate;
    return h && h->waiting;
}

void http_resume(conn *k) {
    http_set_waiting(k, 0);
    net_client_resume(&k->c);
}

static size_t http_process(conn *k) {
    client *c = &k->c;
    hstate *h = k->pstate;
    size_t start = 0;
    unsigned long long max_body = cfg.proto_max_bulk_len > 0 ? (unsigned long long)cfg.proto_max_bulk_len : 0;
    const uint32_t stop = CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_BLOCKED | CLIENT_STREAMING;
    while (!(client_flags_peek(c) & stop) && start < k->qlen && !k->paused && !k->turn_over && !h->waiting) {
        if (h->closing) {
            start = k->qlen;
            break;
        }
        http_req r;
        size_t used = 0;
        const char *err = NULL;
        int rc = http_req_parse(k->qbuf + start, k->qlen - start, max_body, &r, &used, &err);
        if (rc == HTTP_REQ_NEED_MORE) {
            h->hint = r.headers_done && r.content_length ? (size_t)r.content_length + 16384 : 0;
            if (r.headers_done && r.expect_continue && !h->sent_continue) {
                reply_raw(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
                h->sent_continue = 1;
            }
            break;
        }
        h->hint = 0;
        h->sent_continue = 0;
        if (rc == HTTP_REQ_ERROR) {
            http_want w = {0};
            w.close = 1;
            w.t0_us = monotime_us();
            http_stat_add(&http_stat.requests, 1);
            int big = err && strstr(err, "too large");
            http_answer_status(k, &w, big ? 413 : 400, err ? err : "Bad Request");
            client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
            log_verbose("HTTP protocol error (%s) from client: id=%llu addr=%s", err ? err : "?",
                        (unsigned long long)c->id, c->addr);
            start = k->qlen;
            break;
        }
        garg pa[2] = {{(char *)(r.method == HTTP_M_PUT ? "SET" : r.method == HTTP_M_DELETE ? "DEL" : "GET"), 3},
                      {r.key ? r.key : (char *)"", r.klen}};
        if (!conn_may_run(k, 2, pa)) {
            http_req_free(&r);
            break;
        }
        start += used;
        http_stat_add(&http_stat.requests, 1);
        http_stat_add(&http_stat.bytes_in, used);
        serve(k, &r, monotime_us());
        http_req_free(&r);
        conn_ran(k);
    }
    return start;
}

static size_t http_hint(const conn *k) {
    const hstate *h = k->pstate;
    return h ? h->hint : 0;
}

const net_proto http_proto = {
    .name = "http",
    .refusal = http_refusal,
    .open = http_open,
    .close = http_close,
    .process = http_process,
    .pending_hint = http_hint,
};

/* ---- INFO and set-up ------------------------------------------------------ */

static uint64_t ld(const uint64_t *w) { return __atomic_load_n(w, __ATOMIC_RELAXED); }

/* The first-byte latency quantile q (0..1) from the histogram: the upper
 * bound of its bucket, in microseconds. */
static uint64_t fb_quantile(double q) {
    uint64_t tot = 0, h[40];
    for (int i = 0; i < 40; i++) tot += h[i] = ld(&http_stat.fb_hist[i]);
    if (!tot) return 0;
    uint64_t want = (uint64_t)(q * (double)tot + 0.5), acc = 0;
    if (!want) want = 1;
    for (int i = 0; i < 40; i++) {
        acc += h[i];
        if (acc >= want) return 1ULL << i;
    }
    return 1ULL << 39;
}

static void http_info(strbuf *b) {
    uint64_t cnt = ld(&http_stat.fb_count);
    strbuf_addf(b,
                "\r\n# Http\r\n"
                "http_requests:%llu\r\nhttp_hits:%llu\r\nhttp_misses:%llu\r\n"
                "http_origin_fetches:%llu\r\nhttp_origin_coalesced:%llu\r\nhttp_origin_failed:%llu\r\n"
                "http_bytes_in:%llu\r\nhttp_bytes_out:%llu\r\n"
                "http_first_byte_count:%llu\r\nhttp_first_byte_avg_us:%llu\r\n"
                "http_first_byte_p50_us:%llu\r\nhttp_first_byte_p99_us:%llu\r\nhttp_first_byte_max_us:%llu\r\n",
                (unsigned long long)ld(&http_stat.requests), (unsigned long long)ld(&http_stat.hits),
                (unsigned long long)ld(&http_stat.misses), (unsigned long long)ld(&http_stat.fetches),
                (unsigned long long)ld(&http_stat.coalesced), (unsigned long long)ld(&http_stat.fetch_failed),
                (unsigned long long)ld(&http_stat.bytes_in), (unsigned long long)ld(&http_stat.bytes_out),
                (unsigned long long)cnt, (unsigned long long)(cnt ? ld(&http_stat.fb_sum) / cnt : 0),
                (unsigned long long)fb_quantile(0.5), (unsigned long long)fb_quantile(0.99),
                (unsigned long long)ld(&http_stat.fb_max));
}

static long long conf_ll(const char *name) {
    char *v = config_value(name);
    long long x = v ? atoll(v) : 0;
    free(v);
    return x;
}

int http_port(void) { return (int)conf_ll("http-port"); }

int http_setup(void) {
    char *adm = config_value("http-admin");
    http_admin = adm && strcmp(adm, "yes") == 0;
    free(adm);
    char *m = config_value("mirror");
    char *mc = config_value("mirror-client");
    int uring = mc && strcmp(mc, "uring") == 0;
    free(mc);
    char err[256];
    int rc = 0;
    if (m && m[0] && mirror_setup(m, conf_ll("mirror-timeout"), uring, err, sizeof(err)) != 0) {
        fprintf(stderr, "goblin: --mirror %s: %s\n", m, err);
        rc = -1;
    }
    free(m);
    info_register_goblin(http_info);
    if (http_port() > 0 || tls_http_port() > 0) http_etag_init();
    return rc;
}
