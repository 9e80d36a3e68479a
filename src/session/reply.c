/* reply.c -- RESP2/RESP3 reply encoding into the client's output buffer.
 *
 * The output buffer is one growable byte array; net/ sends [osent, olen).
 * Deferred lengths insert their header in place when the count is known
 * (a memmove of the tail, which is small next to producing the items).
 * A large reply that nothing waits in front of may skip the buffer:
 * reply_rawv hands it to the transport's send_direct, and only the part
 * the socket did not take is copied; bytes leave in the order they were
 * replied either way. */
#include "session/reply.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/log.h"
#include "session/session.h"
#include "util/strutil.h"

static inline int reply_muted(const client *c) {
    return (client_flags_peek(c) & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) != 0;
}

/* One spare large output buffer per thread: a client whose large reply
 * went out hands its buffer back here (reply_obuf_release) instead of to
 * the allocator, and the next large reply on the thread starts in it.
 * Large allocations cost page faults and purges each time; one spare per
 * worker bounds the memory kept. */
#define SPARE_MAX (8u << 20)
static _Thread_local char *spare;
static _Thread_local size_t spare_cap;

void reply_obuf_release(client *c) {
    if (c->ocap <= SPARE_MAX && c->ocap > spare_cap) {
        free(spare);
        spare = c->obuf;
        spare_cap = c->ocap;
    } else {
        free(c->obuf);
    }
    c->obuf = NULL;
    client_set_out(c, 0, 0);
    __atomic_store_n(&c->ocap, 0, __ATOMIC_RELAXED);
    session_client_mem_note(c);
}

void reply_thread_exit(void) {
    free(spare);
    spare = NULL;
    spare_cap = 0;
}

static void obuf_grow(client *c, size_t extra) {
    if (c->olen == c->osent && spare && spare_cap >= extra && spare_cap > c->ocap) {
        free(c->obuf);
        c->obuf = spare;
        client_set_out(c, 0, 0);
        __atomic_store_n(&c->ocap, spare_cap, __ATOMIC_RELAXED);
        spare = NULL;
        spare_cap = 0;
        session_client_mem_note(c);
        return;
    }
    /* Sent bytes at the front can be dropped first. */
    if (c->osent && c->osent == c->olen) {
        /* olen/osent/ocap/obuf_peak: relaxed atomic stores, CLIENT LIST
         * and INFO read them from other threads (client.h). */
        client_set_out(c, 0, 0);
        if (extra <= c->ocap) return;
    }
    size_t cap = c->ocap ? c->ocap : 1024;
    while (cap < c->olen + extra) cap *= 2;
    char *nb = realloc(c->obuf, cap);
    if (!nb) abort();
    c->obuf = nb;
    __atomic_store_n(&c->ocap, cap, __ATOMIC_RELAXED);
    session_client_mem_note(c);
}

static inline void obuf_reserve(client *c, size_t extra) {
    if (c->olen + extra > c->ocap) obuf_grow(c, extra);
}

/* The n bytes written at obuf + olen become output. */
static inline void obuf_commit(client *c, size_t n) {
    __atomic_store_n(&c->olen, c->olen + n, __ATOMIC_RELAXED);
    if (c->olen - c->osent > c->obuf_peak) __atomic_store_n(&c->obuf_peak, c->olen - c->osent, __ATOMIC_RELAXED);
}

/* Whether n more bytes fit the buffer as it is. A reply made of pieces is
 * written in one go when they fit (no reserve, no commit per piece), and
 * piece by piece through reply_raw otherwise, so the buffer grows exactly
 * as it did piece by piece. */
static inline int obuf_fits(const client *c, size_t n) { return c->olen + n <= c->ocap; }

void reply_raw(client *c, const char *p, size_t n) {
    if (reply_muted(c)) return;
    obuf_reserve(c, n);
    if (n) memcpy(c->obuf + c->olen, p, n); /* p may be NULL when n is 0 (SCAN of an empty key name) */
    obuf_commit(c, n);
}

void reply_raw_unmuted(client *c, const char *p, size_t n) {
    uint32_t muted = client_reply_unmute(c);
    reply_raw(c, p, n);
    client_flag_on(c, muted);
}

/* Whether a reply of n bytes alone reaches c's hard output-buffer limit.
 * Redis counts a reply whole before any byte of it leaves, so such a
 * reply closes its client and nothing of it is sent: it is not handed to
 * the socket, and the output-buffer check closes the client. */
void reply_obl_limits(const client *c, long long *hard, long long *soft, long long *secs) {
    config_obl((client_flags_peek(c) & CLIENT_PUBSUB) ? CONFIG_OBL_PUBSUB : CONFIG_OBL_NORMAL, hard, soft, secs);
}

static int reply_over_hard_limit(const client *c, size_t n) {
    long long hard, soft, secs;
    reply_obl_limits(c, &hard, &soft, &secs);
    return hard > 0 && n >= (unsigned long long)hard;
}

void reply_rawv(client *c, const struct iovec *iov, int iovcnt) {
    if (reply_muted(c)) return;
    size_t total = 0, sent = 0;
    for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
    if (total >= REPLY_DIRECT_MIN && c->send_direct && c->osent == c->olen &&
        !(client_flags_peek(c) & CLIENT_CAPTURE) && !reply_over_hard_limit(c, total))
        sent = c->send_direct(c, iov, iovcnt);
    assert(sent <= total);
    for (int i = 0; i < iovcnt; i++) {
        size_t n = iov[i].iov_len;
        if (sent >= n) {
            sent -= n;
            continue;
        }
        reply_raw(c, (const char *)iov[i].iov_base + sent, n - sent);
        sent = 0;
    }
}

/* "<type><n>\r\n" into buf (32 bytes); returns its length. */
static size_t hdr_format(char *buf, char type, long long n) {
    size_t l;
    buf[0] = type;
    if ((unsigned long long)n < 10) {
        buf[1] = (char)('0' + n);
        l = 1;
    } else {
        l = (size_t)ll_to_str(buf + 1, 32 - 3, n);
    }
    buf[l + 1] = '\r';
    buf[l + 2] = '\n';
    return l + 3;
}

static void reply_hdr(client *c, char type, long long n) {
    char buf[32];
    reply_raw(c, buf, hdr_format(buf, type, n));
}

void reply_ok(client *c) { reply_raw(c, "+OK\r\n", 5); }

void reply_simple(client *c, const char *s) {
    if (reply_muted(c)) return;
    size_t n = strlen(s);
    if (!obuf_fits(c, n + 3)) {
        reply_raw(c, "+", 1);
        reply_raw(c, s, n);
        reply_raw(c, "\r\n", 2);
        return;
    }
    char *o = c->obuf + c->olen;
    o[0] = '+';
    memcpy(o + 1, s, n);
    o[n + 1] = '\r';
    o[n + 2] = '\n';
    obuf_commit(c, n + 3);
}

/* Error statistics: a small table keyed by the error code (first word). */
#define ERRSTAT_MAX 128
static struct {
    char code[32];
    uint64_t count;
} errstats[ERRSTAT_MAX];
static int nerrstats;
static uint64_t total_errors;
static pthread_mutex_t errstat_lock = PTHREAD_MUTEX_INITIALIZER;

static void errstat_count(const char *err) {
    char code[32];
    size_t i = 0;
    while (err[i] && err[i] != ' ' && i < sizeof(code) - 1) {
        code[i] = err[i];
        i++;
    }
    code[i] = '\0';
    pthread_mutex_lock(&errstat_lock);
    total_errors++;
    int k;
    for (k = 0; k < nerrstats; k++)
        if (strcmp(errstats[k].code, code) == 0) break;
    if (k == nerrstats && nerrstats < ERRSTAT_MAX) {
        memcpy(errstats[k].code, code, i + 1);
        errstats[k].count = 0;
        nerrstats++;
    }
    if (k < nerrstats) errstats[k].count++;
    pthread_mutex_unlock(&errstat_lock);
}

void reply_errorstats_each(reply_errstat_fn *fn, void *arg) {
    pthread_mutex_lock(&errstat_lock);
    for (int k = 0; k < nerrstats; k++) fn(arg, errstats[k].code, errstats[k].count);
    pthread_mutex_unlock(&errstat_lock);
}

void reply_errorstats_reset(void) {
    pthread_mutex_lock(&errstat_lock);
    nerrstats = 0;
    total_errors = 0;
    pthread_mutex_unlock(&errstat_lock);
}

uint64_t reply_total_errors(void) { return __atomic_load_n(&total_errors, __ATOMIC_RELAXED); }

/* Errors "sent" to the primary's stream or to the AOF loader: nobody reads
 * them, and they mean this dataset may differ from the one that wrote the
 * stream, so each is logged and counted (INFO's unexpected_error_replies),
 * as Redis's afterErrorReply does. */
static uint64_t unexpected_errors;
/* propagation-error-behavior: ignore (logged and counted), panic, or
 * panic-on-replicas (the primary's stream only), as Redis 7.0. */
enum { PROPAGATION_IGNORE, PROPAGATION_PANIC, PROPAGATION_PANIC_ON_REPLICAS };
static int propagation_errors;

void reply_config_register(void) {
    if (config_bind_int("propagation-error-behavior", &propagation_errors)) abort(); /* the table lost a row */
}

uint64_t reply_unexpected_errors(void) { return __atomic_load_n(&unexpected_errors, __ATOMIC_RELAXED); }
void reply_unexpected_errors_reset(void) { __atomic_store_n(&unexpected_errors, 0, __ATOMIC_RELAXED); }

static void unexpected_error(client *c, const char *err) {
    uint32_t f = client_flags_peek(c);
    if (!(f & (CLIENT_PRIMARY | CLIENT_AOF_LOADER))) return;
    __atomic_fetch_add(&unexpected_errors, 1, __ATOMIC_RELAXED);
    int aof = (f & CLIENT_AOF_LOADER) != 0;
    int cn = c->argc ? (int)(c->argv[0].n > 128 ? 128 : c->argv[0].n) : 9;
    const char *cmd = c->argc ? c->argv[0].p : "<unknown>";
    log_warn("== CRITICAL == This %s is sending an error to its %s: '%.4096s' after processing the command '%.*s'",
             aof ? "server" : "replica", aof ? "AOF-loading-client" : "master", err, cn, cmd);
    int mode = __atomic_load_n(&propagation_errors, __ATOMIC_RELAXED);
    /* As Redis: a writable replica (replica-read-only no) never panics, its
     * own writes may well clash with its primary's. Read here, on this rare
     * path. */
    int replica_ro = 1;
    if (!aof) {
        char *ro = config_value("replica-read-only");
        replica_ro = !ro || strcmp(ro, "no") != 0;
        free(ro);
    }
    int panic_replica = !aof && replica_ro && (mode == PROPAGATION_PANIC || mode == PROPAGATION_PANIC_ON_REPLICAS);
    if (panic_replica || (aof && mode == PROPAGATION_PANIC)) {
        log_warn("Guru Meditation: This %s panicked sending an error to its %s after processing the command '%.*s'",
                 aof ? "server" : "replica", aof ? "AOF-loading-client" : "master", cn, cmd);
        abort();
    }
}

/* The error's line in c's output, on one line; the call counts as failed. */
static void reply_error_text(client *c, const char *err) {
    c->cmd_failed = 1;
    reply_raw(c, "-", 1);
    /* Error strings must stay on one line. */
    size_t n = strlen(err);
    if (memchr(err, '\n', n) || memchr(err, '\r', n)) {
        char *tmp = strdup(err);
        for (size_t i = 0; i < n; i++)
            if (tmp[i] == '\r' || tmp[i] == '\n') tmp[i] = ' ';
        reply_raw(c, tmp, n);
        free(tmp);
    } else {
        reply_raw(c, err, n);
    }
    reply_raw(c, "\r\n", 2);
}

void reply_count_error(const char *err) {
    if (err[0] == '-' && memchr(err, ' ', strnlen(err, 32))) errstat_count(err + 1);
    else errstat_count("ERR");
}

void reply_error_uncounted(client *c, const char *err) {
    unexpected_error(c, err);
    reply_error_text(c, err);
}

void reply_error(client *c, const char *err) {
    errstat_count(err);
    unexpected_error(c, err);
    reply_error_text(c, err);
}

void reply_errorf(client *c, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    reply_error(c, buf);
}

void reply_int(client *c, long long v) { reply_hdr(c, ':', v); }

void reply_bulk(client *c, const char *p, size_t n) {
    if (reply_muted(c)) return;
    char hdr[32];
    size_t hl = hdr_format(hdr, '$', (long long)n);
    if (!obuf_fits(c, hl + n + 2)) {
        reply_raw(c, hdr, hl);
        reply_raw(c, p, n);
        reply_raw(c, "\r\n", 2);
        return;
    }
    char *o = c->obuf + c->olen;
    memcpy(o, hdr, hl);
    if (n) memcpy(o + hl, p, n);
    o[hl + n] = '\r';
    o[hl + n + 1] = '\n';
    obuf_commit(c, hl + n + 2);
}

void reply_bulk_cstr(client *c, const char *s) {
    if (!s) reply_null(c);
    else reply_bulk(c, s, strlen(s));
}

void reply_bulk_ll(client *c, long long v) {
    char buf[STRUTIL_LLSTR];
    int n = ll_to_str(buf, sizeof(buf), v);
    reply_bulk(c, buf, (size_t)n);
}

void reply_null(client *c) {
    if (c->resp == 3) reply_raw(c, "_\r\n", 3);
    else reply_raw(c, "$-1\r\n", 5);
}

void reply_null_array(client *c) {
    if (c->resp == 3) reply_raw(c, "_\r\n", 3);
    else reply_raw(c, "*-1\r\n", 5);
}

void reply_array(client *c, long n) { reply_hdr(c, '*', n); }
void reply_map(client *c, long n) {
    if (c->resp == 3) reply_hdr(c, '%', n);
    else reply_hdr(c, '*', 2 * (long long)n);
}
void reply_set(client *c, long n) { reply_hdr(c, c->resp == 3 ? '~' : '*', n); }
void reply_push(client *c, long n) { reply_hdr(c, c->resp == 3 ? '>' : '*', n); }

void reply_double(client *c, double d) {
    char buf[64];
    int n = double_to_str(buf, sizeof(buf), d);
    if (c->resp == 3) {
        reply_raw(c, ",", 1);
        reply_raw(c, buf, (size_t)n);
        reply_raw(c, "\r\n", 2);
    } else {
        reply_bulk(c, buf, (size_t)n);
    }
}

void reply_bool(client *c, int b) {
    if (c->resp == 3) reply_raw(c, b ? "#t\r\n" : "#f\r\n", 4);
    else reply_raw(c, b ? ":1\r\n" : ":0\r\n", 4);
}

void reply_verbatim(client *c, const char *p, size_t n, const char *ext) {
    if (c->resp == 2) {
        reply_bulk(c, p, n);
        return;
    }
    reply_hdr(c, '=', (long long)n + 4);
    reply_raw(c, ext, 3);
    reply_raw(c, ":", 1);
    reply_raw(c, p, n);
    reply_raw(c, "\r\n", 2);
}

void reply_bignum(client *c, const char *p, size_t n) {
    if (c->resp == 2) {
        reply_bulk(c, p, n);
        return;
    }
    reply_raw(c, "(", 1);
    reply_raw(c, p, n);
    reply_raw(c, "\r\n", 2);
}

/* Transcode one RESP3 value at *pp (trusted input: our own metadata). */
static void transcode(client *c, const char **pp, const char *end) {
    const char *p = *pp;
    const char *eol = memchr(p, '\r', (size_t)(end - p));
    assert(eol);
    char t = p[0];
    long long n = 0;
    if (t != '+' && t != '-' && t != ',' && t != '#' && t != '_' && t != '(') n = strtoll(p + 1, NULL, 10);
    const char *next = eol + 2;
    switch (t) {
    case '%':
    case '*':
    case '~':
        if (t == '%') reply_map(c, (long)n);
        else if (t == '~') reply_set(c, (long)n);
        else reply_array(c, (long)n);
        if (t == '%') n *= 2;
        for (long long i = 0; i < n; i++) transcode(c, &next, end);
        break;
    case '$':
        reply_raw(c, p, (size_t)(next - p) + (size_t)n + 2);
        next += n + 2;
        break;
    case '_':
        reply_null(c);
        break;
    default:
        reply_raw(c, p, (size_t)(next - p));
        break;
    }
    *pp = next;
}

void reply_resp3_blob(client *c, const char *p, size_t n) {
    if (c->resp == 3) {
        reply_raw(c, p, n);
        return;
    }
    transcode(c, &p, p + n);
}

size_t reply_defer(client *c) { return reply_muted(c) ? (size_t)-1 : c->olen; }

static void defer_set(client *c, size_t h, char type, long long n) {
    if (h == (size_t)-1 || reply_muted(c)) return;
    char buf[32];
    buf[0] = type;
    int l = ll_to_str(buf + 1, sizeof(buf) - 3, n);
    buf[l + 1] = '\r';
    buf[l + 2] = '\n';
    size_t hl = (size_t)l + 3;
    obuf_reserve(c, hl);
    assert(h >= c->osent && h <= c->olen);
    memmove(c->obuf + h + hl, c->obuf + h, c->olen - h);
    memcpy(c->obuf + h, buf, hl);
    __atomic_store_n(&c->olen, c->olen + hl, __ATOMIC_RELAXED);
}

void reply_defer_array(client *c, size_t h, long n) { defer_set(c, h, '*', n); }
void reply_defer_map(client *c, size_t h, long n) {
    if (c->resp == 3) defer_set(c, h, '%', n);
    else defer_set(c, h, '*', 2 * (long long)n);
}
void reply_defer_set(client *c, size_t h, long n) { defer_set(c, h, c->resp == 3 ? '~' : '*', n); }

void reply_err_wrongtype(client *c) {
    reply_error(c, "WRONGTYPE Operation against a key holding the wrong kind of value");
}
void reply_err_syntax(client *c) { reply_error(c, "ERR syntax error"); }
void reply_err_not_int(client *c) { reply_error(c, "ERR value is not an integer or out of range"); }
