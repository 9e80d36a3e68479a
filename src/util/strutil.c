/* strutil.c -- see strutil.h. The parsers take explicit lengths because
 * arguments are binary-safe; callers may still rely on a trailing NUL where
 * the C library needs one (strtod, strtold). */
#include "util/strutil.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int str_to_ull(const char *s, size_t len, unsigned long long *out) {
    if (len == 0 || len > 20) return 0;
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    if (s[0] < '1' || s[0] > '9') return 0;
    unsigned long long v = 0;
    if (len <= 19) {
        /* Under 10^19 < 2^64: no digit can overflow, so no check per digit
         * (the common case: RESP lengths, counts, scores' integer parts). */
        for (size_t i = 0; i < len; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (d > 9) return 0;
            v = v * 10 + d;
        }
        *out = v;
        return 1;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int str_to_ll(const char *s, size_t len, long long *out) {
    unsigned long long v;
    if (len == 0) return 0;
    if (s[0] == '-') {
        if (!str_to_ull(s + 1, len - 1, &v) || v == 0) return 0;
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        *out = (long long)(0 - v);
        return 1;
    }
    if (!str_to_ull(s, len, &v) || v > (unsigned long long)LLONG_MAX) return 0;
    *out = (long long)v;
    return 1;
}

/* "00" "01" ... "99": two digits per division by 100. */
static const char digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of u. */
static int u64_digits(unsigned long long u) {
    int n = 1;
    for (;;) {
        if (u < 10) return n;
        if (u < 100) return n + 1;
        if (u < 1000) return n + 2;
        if (u < 10000) return n + 3;
        u /= 10000;
        n += 4;
    }
}

/* The length is known first, so the digits are written in place from the
 * end, two per step (integer replies are on the hot path of INCR, LPUSH,
 * SADD...). */
int ll_to_str(char *dst, size_t cap, long long v) {
    unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
    int n = u64_digits(u) + (v < 0);
    if ((size_t)n + 1 > cap) return 0;
    char *p = dst + n;
    *p = '\0';
    while (u >= 100) {
        const char *d = digit_pairs + (u % 100) * 2;
        u /= 100;
        *--p = d[1];
        *--p = d[0];
    }
    if (u >= 10) {
        const char *d = digit_pairs + u * 2;
        *--p = d[1];
        *--p = d[0];
    } else {
        *--p = (char)('0' + u);
    }
    if (v < 0) *--p = '-';
    assert(p == dst);
    return n;
}

int str_to_double(const char *s, size_t len, double *out) {
    /* No length limit, as Redis's getDoubleFromObject (1e308 written out
     * in full is 309 digits): a long one is copied to the heap. */
    char small[256], *buf = small;
    if (len == 0 || isspace((unsigned char)s[0])) return 0;
    if (len >= sizeof(small) && !(buf = malloc(len + 1))) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    int ok = (size_t)(end - buf) == len && !isnan(v) &&
             !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO));
    if (buf != small) free(buf);
    if (ok) *out = v;
    return ok;
}

int str_to_ldouble(const char *s, size_t len, long double *out) {
    char buf[STRUTIL_LDSTR];
    if (len == 0 || len >= sizeof(buf) || isspace((unsigned char)s[0])) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long double v = strtold(buf, &end);
    if ((size_t)(end - buf) != len || isnan(v)) return 0;
    /* Like Redis: overflow and underflow to zero are errors, a subnormal
     * result (also ERANGE) is a value. */
    if (errno == ERANGE && (isinf(v) || fpclassify(v) == FP_ZERO)) return 0;
    *out = v;
    return 1;
}

int ld_to_str_human(char *dst, size_t cap, long double v) {
    if (!isfinite(v)) return 0;
    int l = snprintf(dst, cap, "%.17Lf", v);
    if (l < 0 || (size_t)l + 1 > cap) return 0;
    if (strchr(dst, '.')) {
        char *p = dst + l - 1;
        while (*p == '0') {
            p--;
            l--;
        }
        if (*p == '.') l--;
    }
    if (l == 2 && dst[0] == '-' && dst[1] == '0') {
        dst[0] = '0';
        l = 1;
    }
    dst[l] = '\0';
    return l;
}

int double_to_str(char *dst, size_t cap, double v) {
    if (isinf(v)) return snprintf(dst, cap, "%s", v > 0 ? "inf" : "-inf");
    return snprintf(dst, cap, "%.17g", v);
}

size_t str_repr(char *out, const char *p, size_t n) {
    static const char hex[] = "0123456789abcdef";
    char *o = out;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        const char *esc = NULL;
        switch (ch) {
        case '\\': esc = "\\\\"; break;
        case '"': esc = "\\\""; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\a': esc = "\\a"; break;
        case '\b': esc = "\\b"; break;
        default: break;
        }
        if (esc) {
            *o++ = esc[0];
            *o++ = esc[1];
        } else if (isprint(ch)) {
            *o++ = (char)ch;
        } else {
            *o++ = '\\';
            *o++ = 'x';
            *o++ = hex[ch >> 4];
            *o++ = hex[ch & 15];
        }
    }
    *o++ = '"';
    *o = '\0';
    return (size_t)(o - out);
}

/* ASCII-only folding: what Redis gets from tolower() in the C locale, and
 * safe for the negative values of the class ranges below. */
static inline int glob_fold(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }
static inline int glob_lower(int c, int nocase) { return nocase ? glob_fold(c) : c; }

/* Recursive matcher. *stop is set once a '*' has tried every suffix of the
 * string: a later '*' cannot succeed either, which keeps "a*a*a*b" linear. */
static int glob_rec(const unsigned char *p, size_t pl, const unsigned char *s, size_t sl, int nocase,
                    int *stop, int depth) {
    if (depth > 1000) return 0;
    while (pl && sl) {
        switch (p[0]) {
        case '*':
            while (pl > 1 && p[1] == '*') {
                p++;
                pl--;
            }
            if (pl == 1) return 1;
            while (sl) {
                if (glob_rec(p + 1, pl - 1, s, sl, nocase, stop, depth + 1)) return 1;
                if (*stop) return 0;
                s++;
                sl--;
            }
            *stop = 1;
            return 0;
        case '?':
            s++;
            sl--;
            break;
        case '[': {
            p++;
            pl--;
            int neg = pl && p[0] == '^';
            if (neg) {
                p++;
                pl--;
            }
            int match = 0;
            for (;;) {
                if (pl >= 2 && p[0] == '\\') {
                    p++;
                    pl--;
                    if (p[0] == s[0]) match = 1;
                } else if (pl && p[0] == ']') {
                    break;
                } else if (pl == 0) {
                    /* Unterminated class: step back so the advance below
                     * lands exactly at the end of the pattern. */
                    p--;
                    pl++;
                    break;
                } else if (pl >= 3 && p[1] == '-') {
                    /* Redis compares plain (signed) chars here, so a bound
                     * >= 0x80 is negative: [a-\xff] is the range -1..'a'. */
                    int a = (signed char)p[0], b = (signed char)p[2], c = (signed char)s[0];
                    if (a > b) {
                        int t = a;
                        a = b;
                        b = t;
                    }
                    if (nocase) {
                        a = glob_fold(a);
                        b = glob_fold(b);
                        c = glob_fold(c);
                    }
                    p += 2;
                    pl -= 2;
                    if (c >= a && c <= b) match = 1;
                } else if (glob_lower(p[0], nocase) == glob_lower(s[0], nocase)) {
                    match = 1;
                }
                p++;
                pl--;
            }
            if (neg) match = !match;
            if (!match) return 0;
            s++;
            sl--;
            break;
        }
        case '\\':
            if (pl >= 2) {
                p++;
                pl--;
            }
            /* fall through */
        default:
            if (glob_lower(p[0], nocase) != glob_lower(s[0], nocase)) return 0;
            s++;
            sl--;
            break;
        }
        p++;
        pl--;
        if (sl == 0) {
            while (pl && p[0] == '*') {
                p++;
                pl--;
            }
            break;
        }
    }
    return pl == 0 && sl == 0;
}

int glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase) {
    int stop = 0;
    return glob_rec((const unsigned char *)pat, plen, (const unsigned char *)str, slen, nocase, &stop, 0);
}
