/* http_req.c -- one HTTP/1.x request from a buffer, through libhttp-parser.
 *
 * Each call parses from the request's first byte: the parser is set up
 * fresh, fed the whole buffer, and paused by on_message_complete so it
 * stops exactly at the end of one request (pipelined ones stay for the
 * next call). An incomplete request is parsed again when more bytes came;
 * the caller sizes its reads by content_length so a large body arrives in
 * few reads. Header and URL pieces are collected into growing buffers, so
 * a field split across callbacks is whole here. Invariant: on HTTP_REQ_OK
 * every pointer in the request is owned by it; on any other result
 * nothing is left allocated. */
#include "net/http_req.h"

#include <ctype.h>
#include <limits.h>
#include <http_parser.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define URL_MAX 60000   /* http_parser_parse_url keeps 16-bit offsets */
#define HDRV_MAX 8192

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static int sbuf_add(sbuf *b, const char *p, size_t n, size_t max) {
    if (b->n + n > max) return -1;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 64;
        while (nc < b->n + n + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) return -1;
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

enum { H_NONE, H_RANGE, H_INM, H_EXPECT };

typedef struct pstate {
    http_req *r;
    sbuf url, field, value, body, range, inm;
    int in_value; /* the last piece was a value: a new field begins */
    int which;    /* the header being read */
    int complete;
    unsigned long long max_body;
    const char *err;
} pstate;

static int end_header(pstate *s) {
    if (s->which == H_RANGE) {
        s->range.n = 0;
        if (sbuf_add(&s->range, s->value.p ? s->value.p : "", s->value.n, HDRV_MAX)) return -1;
    } else if (s->which == H_INM) {
        if (s->inm.n && sbuf_add(&s->inm, ",", 1, HDRV_MAX * 4)) return -1;
        if (sbuf_add(&s->inm, s->value.p ? s->value.p : "", s->value.n, HDRV_MAX * 4)) return -1;
    } else if (s->which == H_EXPECT) {
        if (s->value.n == 12 && strncasecmp(s->value.p, "100-continue", 12) == 0) s->r->expect_continue = 1;
    }
    s->which = H_NONE;
    s->value.n = 0;
    return 0;
}

static int on_url(http_parser *hp, const char *p, size_t n) {
    pstate *s = hp->data;
    return sbuf_add(&s->url, p, n, URL_MAX);
}

static int on_header_field(http_parser *hp, const char *p, size_t n) {
    pstate *s = hp->data;
    if (s->in_value) {
        if (end_header(s)) return -1;
        s->in_value = 0;
        s->field.n = 0;
    }
    /* A name over 256 bytes is none the front-end looks at. */
    if (sbuf_add(&s->field, p, n, 256) != 0) s->field.n = 0;
    return 0;
}

static int on_header_value(http_parser *hp, const char *p, size_t n) {
    pstate *s = hp->data;
    if (!s->in_value) {
        s->in_value = 1;
        s->value.n = 0;
        const char *f = s->field.p ? s->field.p : "";
        s->which = strcasecmp(f, "range") == 0           ? H_RANGE
                   : strcasecmp(f, "if-none-match") == 0 ? H_INM
                   : strcasecmp(f, "expect") == 0        ? H_EXPECT
                                                          : H_NONE;
    }
    if (s->which == H_NONE) return 0;
    return sbuf_add(&s->value, p, n, HDRV_MAX);
}

static int on_headers_complete(http_parser *hp) {
    pstate *s = hp->data;
    if (s->in_value && end_header(s)) return -1;
    s->in_value = 0;
    s->r->headers_done = 1;
    if (hp->flags & F_CONTENTLENGTH) {
        s->r->content_length = hp->content_length;
        if (hp->content_length > s->max_body) {
            s->err = "request body too large";
            return -1;
        }
    }
    return 0;
}

static int on_body(http_parser *hp, const char *p, size_t n) {
    pstate *s = hp->data;
    if (s->body.n + n > s->max_body) {
        s->err = "request body too large";
        return -1;
    }
    return sbuf_add(&s->body, p, n, (size_t)s->max_body);
}

static int on_message_complete(http_parser *hp) {
    pstate *s = hp->data;
    s->complete = 1;
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings settings = {
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* The key: the path's percent-decoded bytes after its leading '/'. */
static int decode_key(const char *p, size_t n, http_req *r) {
    if (n && p[0] == '/') {
        p++;
        n--;
    }
    char *k = malloc(n + 1);
    if (!k) return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '%') {
            int h, l;
            if (i + 2 >= n || (h = hexval((unsigned char)p[i + 1])) < 0 || (l = hexval((unsigned char)p[i + 2])) < 0) {
                free(k);
                return -1;
            }
            k[o++] = (char)(h * 16 + l);
            i += 2;
        } else {
            k[o++] = p[i];
        }
    }
    k[o] = '\0';
    r->key = k;
    r->klen = o;
    return 0;
}

static int parse_num(const char **pp, const char *end, long long *v) {
    const char *p = *pp;
    if (p >= end || !isdigit((unsigned char)*p)) return -1;
    long long x = 0;
    while (p < end && isdigit((unsigned char)*p)) {
        if (x > LLONG_MAX / 10 - 1) return -1;
        x = x * 10 + (*p - '0');
        p++;
    }
    *v = x;
    *pp = p;
    return 0;
}

/* "bytes=a-b", "bytes=a-", "bytes=-n", one range only: anything else is
 * ignored (the whole value is sent, as RFC 9110 allows). */
static void parse_range(const char *v, size_t n, http_req *r) {
    const char *p = v, *end = v + n;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if ((size_t)(end - p) < 6 || strncasecmp(p, "bytes=", 6) != 0) return;
    p += 6;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
    long long a = -1, b = -1;
    if (p < end && *p == '-') {
        p++;
        if (parse_num(&p, end, &b) || p != end) return;
    } else {
        if (parse_num(&p, end, &a) || p >= end || *p != '-') return;
        p++;
        if (p < end && (parse_num(&p, end, &b) || b < a)) return;
        if (p != end) return;
    }
    r->range = HTTP_RANGE_ONE;
    r->rfirst = a;
    r->rlast = b;
}

static void ps_free(pstate *s) {
    free(s->url.p);
    free(s->field.p);
    free(s->value.p);
    free(s->body.p);
    free(s->range.p);
    free(s->inm.p);
}

void http_req_free(http_req *r) {
    free(r->key);
    free(r->inm);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

int http_req_parse(const char *p, size_t n, unsigned long long max_body, http_req *r, size_t *used,
                   const char **err) {
    memset(r, 0, sizeof(*r));
    *err = NULL;
    http_parser hp;
    http_parser_init(&hp, HTTP_REQUEST);
    pstate s;
    memset(&s, 0, sizeof(s));
    s.r = r;
    s.max_body = max_body;
    hp.data = &s;
    size_t got = http_parser_execute(&hp, &settings, p, n);
    enum http_errno e = HTTP_PARSER_ERRNO(&hp);
    if (!s.complete) {
        ps_free(&s);
        if (e != HPE_OK) {
            *err = s.err ? s.err : http_errno_description(e);
            memset(r, 0, sizeof(*r));
            return HTTP_REQ_ERROR;
        }
        return HTTP_REQ_NEED_MORE;
    }
    (void)got;
    *used = got;
    switch (hp.method) {
    case HTTP_GET: r->method = HTTP_M_GET; break;
    case HTTP_HEAD: r->method = HTTP_M_HEAD; break;
    case HTTP_PUT: r->method = HTTP_M_PUT; break;
    case HTTP_DELETE: r->method = HTTP_M_DELETE; break;
    case HTTP_POST:
    case HTTP_PATCH:
    case HTTP_OPTIONS:
    case HTTP_TRACE:
    case HTTP_CONNECT: r->method = HTTP_M_OTHER; break;
    default: r->method = HTTP_M_UNKNOWN; break;
    }
    r->major = hp.http_major;
    r->minor = hp.http_minor;
    r->keepalive = http_should_keep_alive(&hp);
    /* The path of an origin-form or absolute-form target. */
    struct http_parser_url u;
    http_parser_url_init(&u);
    int bad = 0;
    if (r->method < HTTP_M_OTHER) {
        if (!s.url.n || http_parser_parse_url(s.url.p, s.url.n, 0, &u) != 0 || !(u.field_set & (1 << UF_PATH))) {
            bad = 1;
        } else if (decode_key(s.url.p + u.field_data[UF_PATH].off, u.field_data[UF_PATH].len, r) != 0) {
            bad = 1;
        }
    }
    if (bad) {
        ps_free(&s);
        http_req_free(r);
        *err = "invalid request target";
        return HTTP_REQ_ERROR;
    }
    if (s.range.n) parse_range(s.range.p, s.range.n, r);
    if (s.inm.n) {
        r->inm = s.inm.p;
        s.inm.p = NULL;
    }
    if (s.body.n || r->method == HTTP_M_PUT) {
        if (!s.body.p && sbuf_add(&s.body, "", 0, 1) != 0) {
            ps_free(&s);
            http_req_free(r);
            *err = "out of memory";
            return HTTP_REQ_ERROR;
        }
        r->body = s.body.p;
        r->blen = s.body.n;
        s.body.p = NULL;
    }
    ps_free(&s);
    return HTTP_REQ_OK;
}
