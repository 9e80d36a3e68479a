/* resp.c -- see resp.h. Errors and limits follow Redis 7.0's networking.c:
 * "invalid multibulk length", "invalid bulk length", "expected '$', got 'x'",
 * "too big mbulk count string", "too big bulk count string", "too big inline
 * request", "unbalanced quotes in request", and the unauthenticated limits. */
#include "net/resp.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

#define RESP_INLINE_MAX (64 * 1024)

void resp_parser_init(resp_parser *p) {
    memset(p, 0, sizeof(*p));
    p->bulklen = -1;
}

void resp_parser_free(resp_parser *p) {
    free(p->off);
    free(p->len);
    free(p->inl);
    free(p->argv);
    memset(p, 0, sizeof(*p));
}

/* A command of more arguments than this does not leave its argument arrays
 * behind (resp_trim). */
#define RESP_KEEP_ARGS 1024

void resp_trim(resp_parser *p) {
    if (p->cap <= RESP_KEEP_ARGS || p->type != 0) return;
    free(p->off);
    free(p->len);
    free(p->argv);
    p->off = p->len = NULL;
    p->argv = NULL;
    p->cap = 0;
}

static void reset(resp_parser *p) {
    p->type = 0;
    p->mb_left = 0;
    p->bulklen = -1;
    p->pos = 0;
    p->argc = 0;
}

static int ensure_args(resp_parser *p, int n) {
    if (n <= p->cap) return 0;
    int cap = p->cap ? p->cap : 8;
    while (cap < n) cap *= 2;
    size_t *o = realloc(p->off, sizeof(size_t) * (size_t)cap);
    if (!o) return -1;
    p->off = o;
    size_t *l = realloc(p->len, sizeof(size_t) * (size_t)cap);
    if (!l) return -1;
    p->len = l;
    garg *a = realloc(p->argv, sizeof(garg) * (size_t)cap);
    if (!a) return -1;
    p->argv = a;
    p->cap = cap;
    return 0;
}

static int parse_line_ll(const char *s, size_t n, long long *v) { return str_to_ll(s, n, v); }

/* The first ch in buf[0..n), or NULL. A NUL byte ends the search: Redis
 * looks for line ends with strchr(), so a NUL before the end of a header or
 * inline line keeps the request incomplete (until the too-big limits). */
static char *find_eol(char *buf, size_t n, char ch) {
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == ch) return buf + i;
        if (buf[i] == '\0') return NULL;
    }
    return NULL;
}

/* Split an inline request the way redis-cli users expect (quotes, escapes). */
static int split_inline(resp_parser *p, const char *line, size_t n, const char **err) {
    if (p->inl_cap < n + 1) {
        char *b = realloc(p->inl, n + 1);
        if (!b) return -1;
        p->inl = b;
        p->inl_cap = n + 1;
    }
    char *out = p->inl;
    size_t o = 0, i = 0;
    p->argc = 0;
    for (;;) {
        while (i < n && isspace((unsigned char)line[i])) i++;
        if (i >= n) break;
        if (ensure_args(p, p->argc + 1) != 0) return -1;
        size_t start = o;
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            if (inq) {
                if (i >= n) goto unbalanced;
                if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && isxdigit((unsigned char)line[i + 2]) &&
                    isxdigit((unsigned char)line[i + 3])) {
                    char hex[3] = {line[i + 2], line[i + 3], 0};
                    out[o++] = (char)strtol(hex, NULL, 16);
                    i += 4;
                    continue;
                } else if (line[i] == '\\' && i + 1 < n) {
                    char c = line[++i];
                    switch (c) {
                    case 'n': c = '\n'; break;
                    case 'r': c = '\r'; break;
                    case 't': c = '\t'; break;
                    case 'b': c = '\b'; break;
                    case 'a': c = '\a'; break;
                    default: break;
                    }
                    out[o++] = c;
                } else if (line[i] == '"') {
                    /* closing quote must be followed by a space or nothing */
                    if (i + 1 < n && !isspace((unsigned char)line[i + 1])) goto unbalanced;
                    done = 1;
                } else {
                    out[o++] = line[i];
                }
            } else if (insq) {
                if (i >= n) goto unbalanced;
                if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
                    i++;
                    out[o++] = '\'';
                } else if (line[i] == '\'') {
                    if (i + 1 < n && !isspace((unsigned char)line[i + 1])) goto unbalanced;
                    done = 1;
                } else {
                    out[o++] = line[i];
                }
            } else {
                if (i >= n) break;
                switch (line[i]) {
                case ' ':
                case '\n':
                case '\r':
                case '\t':
                case '\0':
                    done = 1;
                    break;
                case '"': inq = 1; break;
                case '\'': insq = 1; break;
                default: out[o++] = line[i]; break;
                }
            }
            if (i < n) i++;
        }
        p->off[p->argc] = start;
        p->len[p->argc] = o - start;
        out[o++] = '\0';
        p->argc++;
    }
    for (int k = 0; k < p->argc; k++) {
        p->argv[k].p = p->inl + p->off[k];
        p->argv[k].n = p->len[k];
    }
    return 0;
unbalanced:
    *err = "Protocol error: unbalanced quotes in request";
    return -2;
}

/* The fast path: a whole multibulk request at buf[0], written the plain
 * way clients write it -- "*<n>\r\n" then n times "$<len>\r\n<bytes>\r\n",
 * decimal counts without sign or leading zero, 1 <= n <= RESP_FAST_ARGS,
 * lengths of at most 15 digits within the limits, all of it in the buffer.
 * Returns the bytes the request spans with p->argv[0..*argc) set, or 0 when
 * the request is anything else: then the general parser takes it from its
 * first byte, so errors, limits and partial reads stay in one place.
 * Invariant: it accepts only what the general parser accepts, with the same
 * result (the byte after each '\r' and the two after each argument are
 * skipped unread, as there), and leaves the parser state untouched. The
 * only byte it writes is the NUL over the '\r' after an argument whose
 * bytes are all in the buffer, the byte the general parser writes there
 * when the request completes and never reads. A digit loop stops at the
 * first non-digit or at its bound e, which leaves room for the '\r' and the
 * byte after it, so one comparison per digit covers the end of the buffer
 * and the digit count (15 digits: no overflow). */
#define RESP_FAST_ARGS 1024

static inline size_t parse_fast(resp_parser *p, char *buf, size_t len, const resp_limits *lim, int *argc) {
    unsigned n = (unsigned)(buf[1] - '0');
    if (n - 1 > 8) return 0; /* no digit, or a leading zero */
    size_t i = 2, e = len - 1 < 6 ? len - 1 : 6;
    for (unsigned d; i < e && (d = (unsigned)(buf[i] - '0')) <= 9; i++) n = n * 10 + d;
    if (i >= e || buf[i] != '\r' || n > RESP_FAST_ARGS || (n > 10 && !lim->authenticated)) return 0;
    if ((int)n > p->cap && ensure_args(p, (int)n) != 0) return 0;
    long long maxb = lim->max_bulk;
    if (!lim->authenticated && maxb > 16384) maxb = 16384;
    if (maxb < 0) return 0;
    size_t pos = i + 2;
    garg *a = p->argv;
    for (unsigned k = 0; k < n; k++) {
        /* pos <= len here. "$<digit>\r?" needs four bytes; a first digit
         * then a second one take the loop, which reads from the third. */
        if (len - pos < 4 || buf[pos] != '$') return 0;
        unsigned long long bl = (unsigned)(buf[pos + 1] - '0');
        if (bl > 9) return 0;
        size_t j = pos + 2;
        unsigned d = (unsigned)(buf[j] - '0');
        if (d <= 9 && bl) {
            bl = bl * 10 + d;
            e = len - 1 < pos + 17 ? len - 1 : pos + 17;
            for (j = pos + 3; j < e && (d = (unsigned)(buf[j] - '0')) <= 9; j++) bl = bl * 10 + d;
            if (j >= e) return 0;
        }
        if (buf[j] != '\r' || bl > (unsigned long long)maxb) return 0;
        pos = j + 2;
        if (len - pos < bl + 2) return 0;
        a[k].p = buf + pos;
        a[k].n = (size_t)bl;
        buf[pos + bl] = '\0'; /* a C string, over its '\r' */
        pos += (size_t)bl + 2;
    }
    *argc = (int)n;
    return pos;
}

static int parse_general(resp_parser *p, char *buf, size_t len, const resp_limits *lim, size_t *consumed, int *argc,
                         garg **argv, const char **err);


int resp_parse(resp_parser *p, char *buf, size_t len, const resp_limits *lim, size_t *consumed, int *argc,
               garg **argv, const char **err) {
    if (p->type == 0 && len >= 4 && buf[0] == '*') {
        size_t used = parse_fast(p, buf, len, lim, argc);
        if (used) {
            *consumed = used;
            *argv = p->argv;
            return RESP_COMMAND;
        }
    }
    return parse_general(p, buf, len, lim, consumed, argc, argv, err);
}

/* Everything else, and any request the fast path turned down, from where
 * the parser state says it stands. */
static __attribute__((noinline)) int parse_general(resp_parser *p, char *buf, size_t len, const resp_limits *lim,
                                                   size_t *consumed, int *argc, garg **argv, const char **err) {
    *consumed = 0;
    if (p->type == 0) {
        if (len == 0) return RESP_NEED_MORE;
        p->type = buf[0] == '*' ? 1 : 2;
    }
    if (p->type == 2) {
        char *nl = find_eol(buf, len, '\n');
        if (!nl) {
            if (len > RESP_INLINE_MAX) {
                *err = "Protocol error: too big inline request";
                return RESP_ERROR;
            }
            return RESP_NEED_MORE;
        }
        size_t linelen = (size_t)(nl - buf);
        if (linelen && buf[linelen - 1] == '\r') linelen--;
        int r = split_inline(p, buf, linelen, err);
        if (r == -2) return RESP_ERROR;
        if (r != 0) {
            *err = "Protocol error: out of memory";
            return RESP_ERROR;
        }
        *consumed = (size_t)(nl - buf) + 1;
        *argc = p->argc;
        *argv = p->argv;
        reset(p);
        return RESP_COMMAND;
    }
    /* Multibulk. */
    if (p->mb_left == 0 && p->argc == 0 && p->pos == 0) {
        char *cr = find_eol(buf, len, '\r');
        if (!cr) {
            if (len > RESP_INLINE_MAX) {
                *err = "Protocol error: too big mbulk count string";
                return RESP_ERROR;
            }
            return RESP_NEED_MORE;
        }
        if ((size_t)(cr - buf) + 1 >= len) return RESP_NEED_MORE; /* need the \n */
        long long n;
        if (!parse_line_ll(buf + 1, (size_t)(cr - buf) - 1, &n) || n > INT_MAX) {
            *err = "Protocol error: invalid multibulk length";
            return RESP_ERROR;
        }
        if (n > 10 && !lim->authenticated) {
            *err = "Protocol error: unauthenticated multibulk length";
            return RESP_ERROR;
        }
        p->pos = (size_t)(cr - buf) + 2;
        if (n <= 0) {
            *consumed = p->pos;
            reset(p);
            *argc = 0;
            return RESP_COMMAND;
        }
        p->mb_left = n;
        if (ensure_args(p, n < 1024 ? (int)n : 1024) != 0) {
            *err = "Protocol error: out of memory";
            return RESP_ERROR;
        }
    }
    while (p->mb_left) {
        if (p->bulklen == -1) {
            if (p->pos >= len) return RESP_NEED_MORE;
            char *cr = find_eol(buf + p->pos, len - p->pos, '\r');
            if (!cr) {
                if (len - p->pos > RESP_INLINE_MAX) {
                    *err = "Protocol error: too big bulk count string";
                    return RESP_ERROR;
                }
                return RESP_NEED_MORE;
            }
            if ((size_t)(cr - buf) + 1 >= len) return RESP_NEED_MORE;
            if (buf[p->pos] != '$') {
                static _Thread_local char msg[64];
                memcpy(msg, "Protocol error: expected '$', got ' '", 38);
                msg[35] = buf[p->pos];
                *err = msg;
                return RESP_ERROR;
            }
            long long bl;
            if (!parse_line_ll(buf + p->pos + 1, (size_t)(cr - buf) - p->pos - 1, &bl) || bl < 0 ||
                bl > lim->max_bulk) {
                *err = "Protocol error: invalid bulk length";
                return RESP_ERROR;
            }
            if (bl > 16384 && !lim->authenticated) {
                *err = "Protocol error: unauthenticated bulk length";
                return RESP_ERROR;
            }
            p->bulklen = bl;
            p->pos = (size_t)(cr - buf) + 2;
        }
        if (len - p->pos < (size_t)p->bulklen + 2) return RESP_NEED_MORE;
        if (p->argc >= p->cap && ensure_args(p, p->argc + 1) != 0) {
            *err = "Protocol error: out of memory";
            return RESP_ERROR;
        }
        p->off[p->argc] = p->pos;
        p->len[p->argc] = (size_t)p->bulklen;
        p->argc++;
        p->pos += (size_t)p->bulklen + 2;
        p->bulklen = -1;
        p->mb_left--;
    }
    for (int k = 0; k < p->argc; k++) {
        p->argv[k].p = buf + p->off[k];
        p->argv[k].n = p->len[k];
        buf[p->off[k] + p->len[k]] = '\0'; /* over the '\r' that follows */
    }
    *consumed = p->pos;
    *argc = p->argc;
    *argv = p->argv;
    reset(p);
    return RESP_COMMAND;
}

void resp_partial(const resp_parser *p, size_t *parsed, size_t *argv_len) {
    size_t sum = 0;
    if (p->type == 1)
        for (int k = 0; k < p->argc; k++) sum += p->len[k];
    *parsed = p->type == 1 ? p->pos : 0;
    *argv_len = sum;
}

size_t resp_pending_hint(const resp_parser *p) {
    /* Only a big argument (Redis's PROTO_MBULK_BIG_ARG, 32 KiB) is read
     * whole; smaller ones come with the ordinary reads. */
    if (p->type == 1 && p->bulklen >= 32 * 1024) return p->pos + (size_t)p->bulklen + 2;
    return 0;
}
