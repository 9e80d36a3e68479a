/* backlog.c -- the replication backlog ring (see backlog.h). */
#include "cmd/repl/backlog.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int backlog_init(repl_backlog *b, size_t size, uint64_t next_off) {
    memset(b, 0, sizeof(*b));
    b->buf = malloc(size);
    if (!b->buf) return -1;
    b->size = size;
    b->first = next_off;
    return 0;
}

void backlog_free(repl_backlog *b) {
    free(b->buf);
    memset(b, 0, sizeof(*b));
}

void backlog_feed(repl_backlog *b, const char *p, size_t n) {
    if (n >= b->size) {
        /* Only the last size bytes stay. */
        p += n - b->size;
        b->first += b->histlen + (n - b->size);
        memcpy(b->buf, p, b->size);
        b->idx = 0;
        b->histlen = b->size;
        return;
    }
    size_t tail = b->size - b->idx;
    size_t k = n < tail ? n : tail;
    memcpy(b->buf + b->idx, p, k);
    if (n > k) memcpy(b->buf, p + k, n - k);
    b->idx = (b->idx + n) % b->size;
    b->histlen += n;
    if (b->histlen > b->size) {
        b->first += b->histlen - b->size;
        b->histlen = b->size;
    }
    assert(b->histlen <= b->size);
}

int backlog_has(const repl_backlog *b, uint64_t off) {
    return b->buf && off >= b->first && off <= b->first + b->histlen;
}

char *backlog_copy_from(const repl_backlog *b, uint64_t off, size_t *n) {
    assert(backlog_has(b, off));
    size_t len = (size_t)(b->first + b->histlen - off);
    char *out = malloc(len ? len : 1);
    if (!out) return NULL;
    /* The oldest byte sits at idx - histlen (mod size). */
    size_t start = (b->idx + b->size - (size_t)b->histlen + (size_t)(off - b->first)) % b->size;
    size_t k = b->size - start < len ? b->size - start : len;
    memcpy(out, b->buf + start, k);
    if (len > k) memcpy(out + k, b->buf, len - k);
    *n = len;
    return out;
}

int backlog_resize(repl_backlog *b, size_t size) {
    if (!b->buf || size == b->size) return 0;
    size_t n;
    uint64_t keep_from = b->first + b->histlen - (b->histlen < size ? b->histlen : size);
    char *old = backlog_copy_from(b, keep_from, &n);
    if (!old) return -1;
    repl_backlog nb;
    if (backlog_init(&nb, size, keep_from) != 0) {
        free(old);
        return -1;
    }
    backlog_feed(&nb, old, n);
    free(old);
    backlog_free(b);
    *b = nb;
    return 0;
}
