/* strbuf.h -- a growable byte buffer filled with printf-style appends (the
 * INFO text, and any report built in pieces). p is NUL-terminated after
 * every append; the owner frees p. Out of memory aborts, like every
 * allocation on the server's paths that cannot be refused. */
#ifndef GOBLIN_UTIL_STRBUF_H
#define GOBLIN_UTIL_STRBUF_H
#include <stddef.h>

typedef struct strbuf {
    char *p;
    size_t len, cap;
} strbuf;

void strbuf_addf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* n bytes of p (any bytes; p stays NUL-terminated after them). */
void strbuf_add(strbuf *b, const char *p, size_t n);
#endif
