/* http_req.h -- one HTTP/1.x request out of a byte buffer (http_req.c).
 *
 * The parsing itself is Debian's libhttp-parser (http_parser 2.9.4, the
 * parser Node.js used for years, well kept and fuzzed upstream); this file
 * only collects what the cache front-end needs from it: method, version,
 * keep-alive, the key (the percent-decoded path without its leading '/',
 * the query string left out), the Range, If-None-Match and Expect headers,
 * and the body. Nothing here touches sockets or the keyspace, so the fuzz
 * target runs it alone. */
#ifndef GOBLIN_NET_HTTP_REQ_H
#define GOBLIN_NET_HTTP_REQ_H
#include <stddef.h>

enum { HTTP_REQ_NEED_MORE = 0, HTTP_REQ_OK = 1, HTTP_REQ_ERROR = -1 };
/* Methods the front-end knows (anything else: HTTP_M_OTHER). */
/* HTTP_M_OTHER: a method of plain HTTP the front-end does not allow
 * (405); HTTP_M_UNKNOWN: one it does not implement at all (501). */
enum { HTTP_M_GET, HTTP_M_HEAD, HTTP_M_PUT, HTTP_M_DELETE, HTTP_M_OTHER, HTTP_M_UNKNOWN };
/* Range: none, a satisfiable-or-not single range, or one to ignore
 * (several ranges, another unit, bad syntax: the whole value is sent). */
enum { HTTP_RANGE_NONE, HTTP_RANGE_ONE };

typedef struct http_req {
    int method;
    int major, minor;
    int keepalive;
    char *key;               /* malloc'd, NUL-terminated */
    size_t klen;
    int range;               /* HTTP_RANGE_* */
    long long rfirst, rlast; /* rfirst -1: suffix of rlast bytes; rlast -1: to the end */
    char *inm;               /* If-None-Match value, malloc'd, or NULL */
    int expect_continue;
    int headers_done;        /* (NEED_MORE) the headers were read */
    unsigned long long content_length; /* from the headers, 0 when none */
    char *body;              /* malloc'd (NUL-terminated), or NULL */
    size_t blen;
} http_req;

/* Parse one request from p[0..n): HTTP_REQ_OK with *used bytes and r
 * filled (free it with http_req_free), HTTP_REQ_NEED_MORE (r holds what
 * the headers said so far, freed already: headers_done, expect_continue,
 * content_length), or HTTP_REQ_ERROR with *err a short reason. max_body
 * caps the body length. */
int http_req_parse(const char *p, size_t n, unsigned long long max_body, http_req *r, size_t *used,
                   const char **err);
void http_req_free(http_req *r);
#endif
