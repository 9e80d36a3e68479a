/* reply.h -- building replies in the client's protocol (RESP2 or RESP3).
 *
 * Every command replies through these functions, so the RESP2/RESP3 shape of
 * each reply kind is decided in exactly one place (reply.c). */
#ifndef GOBLIN_SESSION_REPLY_H
#define GOBLIN_SESSION_REPLY_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "session/client.h"

/* The output-buffer limits of c's class (pubsub or normal), as
 * client-output-buffer-limit sets them. */
void reply_obl_limits(const client *c, long long *hard, long long *soft, long long *secs);

void reply_raw(client *c, const char *p, size_t n);
/* reply_raw of bytes that CLIENT REPLY OFF/SKIP does not hold back:
 * messages and pushes made outside c's own reply (Pub/Sub, invalidations,
 * what other threads queued for c). */
void reply_raw_unmuted(client *c, const char *p, size_t n);
/* reply_raw of iov[0..iovcnt) in order. A large reply (REPLY_DIRECT_MIN
 * bytes or more) that nothing waits in front of goes to the socket
 * straight from the caller's memory where the transport can send it now
 * (client.send_direct, not under CLIENT_CAPTURE); only what the socket did
 * not take is copied into the output buffer. For a reply that is final as
 * appended: none of it can be taken back. */
#define REPLY_DIRECT_MIN (32 * 1024)
void reply_rawv(client *c, const struct iovec *iov, int iovcnt);
/* net/: c's output was all sent and its buffer is large: drop it (kept as
 * this thread's spare for the next large reply). reply_thread_exit frees
 * the spare when a worker ends. */
void reply_obuf_release(client *c);
void reply_thread_exit(void);
void reply_ok(client *c);
void reply_simple(client *c, const char *s);            /* +s */
/* An error counted in INFO errorstats where no client gets it (a script's
 * redis.call refused before it ran: "-CODE msg", or a bare message, ERR),
 * and an error reply counted already that way (not again). */
void reply_count_error(const char *err);
void reply_error_uncounted(client *c, const char *err);
void reply_error(client *c, const char *err);           /* "ERR ..." or "WRONGTYPE ..." */
void reply_errorf(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_int(client *c, long long v);
void reply_bulk(client *c, const char *p, size_t n);
void reply_bulk_cstr(client *c, const char *s);
void reply_bulk_ll(client *c, long long v);
void reply_null(client *c);          /* $-1 / _ */
void reply_null_array(client *c);    /* *-1 / _ */
void reply_array(client *c, long n);
void reply_map(client *c, long n);   /* n pairs; RESP2: array of 2n */
void reply_set(client *c, long n);   /* RESP2: array */
void reply_push(client *c, long n);  /* RESP3 push; RESP2: array */
void reply_double(client *c, double d);
void reply_bool(client *c, int b);   /* RESP2: :1 / :0 */
void reply_verbatim(client *c, const char *p, size_t n, const char *ext); /* RESP2: bulk */
void reply_bignum(client *c, const char *p, size_t n);
/* A RESP3-encoded value (e.g. command metadata), transcoded for RESP2. */
void reply_resp3_blob(client *c, const char *p, size_t n);

/* Deferred aggregate length, for replies whose size is known at the end. */
size_t reply_defer(client *c);
void reply_defer_array(client *c, size_t handle, long n);
void reply_defer_map(client *c, size_t handle, long n);
void reply_defer_set(client *c, size_t handle, long n);

/* The common errors, spelled exactly as Redis 7.0. */
void reply_err_wrongtype(client *c);
void reply_err_syntax(client *c);
void reply_err_not_int(client *c);

/* Error statistics (INFO errorstats). */
typedef void reply_errstat_fn(void *arg, const char *code, uint64_t count);
void reply_errorstats_each(reply_errstat_fn *fn, void *arg);
void reply_errorstats_reset(void);
uint64_t reply_total_errors(void);
/* Error replies to the primary's stream or to the AOF loader (INFO's
 * unexpected_error_replies; CONFIG RESETSTAT zeroes it). */
uint64_t reply_unexpected_errors(void);
void reply_unexpected_errors_reset(void);
/* Binds propagation-error-behavior (after the configuration is loaded):
 * panic, or panic-on-replicas, stops the server at such an error. */
void reply_config_register(void);
#endif
