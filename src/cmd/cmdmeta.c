/* cmdmeta.c -- reading the command table's metadata: Redis 7.0's own
 * COMMAND INFO / COMMAND DOCS output, stored as RESP3 text in
 * command_meta.inc. The input is ours and trusted (generated, checked by
 * make test), so these readers do no bounds checks: every value is well
 * formed and every line ends in CRLF. */
#include "cmd/cmdmeta.h"

#include <stdlib.h>
#include <string.h>

/* Header of the value at p: its type byte, its count or length, and where
 * the payload starts. */
const char *cmdmeta_hdr(const char *p, char *type, long long *n) {
    const char *eol = strchr(p, '\r');
    *type = p[0];
    *n = 0;
    if (strchr("$=!*~>%|:", p[0])) *n = strtoll(p + 1, NULL, 10);
    return eol + 2;
}

/* The value after the one at p. */
const char *cmdmeta_skip(const char *p) {
    char t;
    long long n;
    const char *q = cmdmeta_hdr(p, &t, &n);
    switch (t) {
    case '$':
    case '=':
    case '!':
        return q + n + 2;
    case '%':
    case '|':
        n *= 2;
        /* fall through */
    case '*':
    case '~':
    case '>':
        for (long long i = 0; i < n; i++) q = cmdmeta_skip(q);
        return q;
    default:
        return q;
    }
}

/* A string value ('$' or '+') at p: sets *s and *len, returns the next value. */
const char *cmdmeta_str(const char *p, const char **s, size_t *len) {
    char t;
    long long n;
    const char *q = cmdmeta_hdr(p, &t, &n);
    if (t == '$') {
        *s = q;
        *len = (size_t)n;
        return q + n + 2;
    }
    *s = p + 1;
    *len = (size_t)(q - 2 - (p + 1));
    return q;
}

int cmdmeta_eq(const char *s, size_t n, const char *lit) { return strlen(lit) == n && memcmp(s, lit, n) == 0; }
