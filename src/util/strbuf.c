/* strbuf.c -- see strbuf.h. Each append formats into the room left and,
 * when that was too small, grows the buffer to twice what is needed and
 * formats again. */
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_add(strbuf *b, const char *p, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void strbuf_addf(strbuf *b, const char *fmt, ...) {
    for (;;) {
        size_t room = b->cap - b->len;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
}
