/* resppeek.c -- read-ahead over RESP requests (see resppeek.h). The scan
 * accepts only whole, plainly written requests and never writes: a request
 * it cannot read is left to the real parser, which it never replaces. */
#include "util/resppeek.h"

/* "<type><decimal>\r\n" at buf[*pos], at most 15 digits: the number, *pos
 * past the "\r\n"; -1 when it is not there whole. Inlined: it runs for
 * every argument of every request looked at. */
static inline __attribute__((always_inline)) long long peek_header(const char *buf, size_t len, size_t *pos,
                                                                   char type) {
    size_t i = *pos;
    if (len - i < 4 || buf[i] != type) return -1;
    size_t j = i + 1, e = len - 2 < i + 16 ? len - 2 : i + 16;
    long long v = 0;
    unsigned d;
    while (j < e && (d = (unsigned)(buf[j] - '0')) <= 9) {
        v = v * 10 + d;
        j++;
    }
    if (j == i + 1 || buf[j] != '\r' || buf[j + 1] != '\n') return -1;
    *pos = j + 2;
    return v;
}

int resp_peek_keys(const char *buf, size_t len, const char **k, size_t *n, int max, size_t *span) {
    size_t pos = 0;
    int found = 0, args = 0;
    *span = 0;
    while (found < max && pos < len) {
        long long argc = peek_header(buf, len, &pos, '*');
        if (argc < 1 || args + argc > RESPPEEK_ARGS) break;
        args += (int)argc;
        for (long long a = 0; a < argc; a++) {
            long long bl = peek_header(buf, len, &pos, '$');
            if (bl < 0 || len - pos < (unsigned long long)bl + 2) return found;
            if (a == 1) {
                k[found] = buf + pos;
                n[found] = (size_t)bl;
            }
            pos += (size_t)bl + 2;
        }
        if (argc >= 2) found++;
        *span = pos;
    }
    return found;
}
