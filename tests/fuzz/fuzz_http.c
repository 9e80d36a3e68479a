/* fuzz_http.c -- libFuzzer target for the HTTP front-end's request parser
 * (net/http_req.c over libhttp-parser).
 *
 * The first input byte seeds the read sizes and the body limit; the rest is
 * what a client sends. The stream is parsed twice, the way http_proto.c
 * drives the parser: once as a single read, once in reads of pseudo-random
 * sizes (1 up to 64 bytes), each batch parsed from the first unconsumed
 * byte and the consumed bytes dropped. Both must give the same requests
 * (method, version, keep-alive, key, range, If-None-Match, body) and the
 * same error, since a request split at any byte boundary must parse like a
 * whole one; any difference aborts, as do out-of-bounds accesses (ASan). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_req.h"

typedef struct transcript {
    uint64_t hash;
    long requests;
    int error;
} transcript;

static void mix(transcript *t, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        t->hash ^= b[i];
        t->hash *= 1099511628211ULL;
    }
}

/* Parse everything buffered; 1 after an error. */
static int drain(char *buf, size_t *len, unsigned long long max_body, transcript *t) {
    size_t start = 0;
    while (start < *len) {
        http_req r;
        size_t used = 0;
        const char *err = NULL;
        int rc = http_req_parse(buf + start, *len - start, max_body, &r, &used, &err);
        if (rc == HTTP_REQ_NEED_MORE) break;
        if (rc == HTTP_REQ_ERROR) {
            if (!err) abort();
            mix(t, "E", 1);
            t->error = 1;
            return 1;
        }
        if (used == 0 || used > *len - start) abort();
        if (r.key && r.key[r.klen] != '\0') abort();
        if (r.body && r.body[r.blen] != '\0') abort();
        if (r.blen > max_body) abort();
        mix(t, "R", 1);
        mix(t, &r.method, sizeof(r.method));
        mix(t, &r.major, sizeof(r.major));
        mix(t, &r.minor, sizeof(r.minor));
        mix(t, &r.keepalive, sizeof(r.keepalive));
        mix(t, &r.klen, sizeof(r.klen));
        if (r.key) mix(t, r.key, r.klen);
        mix(t, &r.range, sizeof(r.range));
        mix(t, &r.rfirst, sizeof(r.rfirst));
        mix(t, &r.rlast, sizeof(r.rlast));
        if (r.inm) mix(t, r.inm, strlen(r.inm));
        mix(t, &r.blen, sizeof(r.blen));
        if (r.body) mix(t, r.body, r.blen);
        http_req_free(&r);
        t->requests++;
        start += used;
    }
    memmove(buf, buf + start, *len - start);
    *len -= start;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    unsigned seed = data[0];
    unsigned long long max_body = (seed & 1) ? 16 : 1 << 20;
    data++;
    size--;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    transcript a = {1469598103934665603ULL, 0, 0}, b = {1469598103934665603ULL, 0, 0};
    size_t len = size;
    memcpy(buf, data, size);
    drain(buf, &len, max_body, &a);
    /* Split reads. */
    len = 0;
    size_t off = 0;
    uint32_t x = seed * 2654435761u + 1;
    while (off < size && !b.error) {
        x = x * 1103515245u + 12345u;
        size_t n = 1 + (x >> 16) % 64;
        if (n > size - off) n = size - off;
        memcpy(buf + len, data + off, n);
        len += n;
        off += n;
        drain(buf, &len, max_body, &b);
    }
    free(buf);
    if (a.requests != b.requests || a.error != b.error || a.hash != b.hash) abort();
    return 0;
}
