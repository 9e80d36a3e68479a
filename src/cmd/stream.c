/* stream.c -- streamed replies of large string values.
 *
 * A GET of a value whose tail is an SSD extent answers "$<len>\r\n" and the
 * head at once and opens a tail stream (mem/ssdtail.h): --io-chunk reads
 * submitted together on the worker's own io_uring, whose completions wake
 * the worker's loop (cmd_stream_poll). Completed chunks go to the client in
 * order as they arrive (reply_rawv: straight from the read buffer to the
 * socket while nothing waits in the output before them, else through the
 * output), then "\r\n"; meanwhile the client
 * is CLIENT_STREAMING, so its pipelined commands wait (replies stay in
 * order), while every other client on the worker is served. Many streams on
 * one worker proceed together: each keeps up to SSDTAIL_WINDOW reads in
 * flight. A client whose unsent output passes CMD_STREAM_OBUF_HIGH stops
 * pulling chunks until net/ drains it (cmd_stream_pump), so a slow reader
 * costs a bounded buffer.
 *
 * The stream pins its extent, so the key may change or go during the reply
 * and the bytes sent are still the value GET saw. A read error after the
 * header went out cannot become an error reply (RESP has no way to cut a
 * bulk string short): the error is counted and logged and that client's
 * connection is closed; nothing else is affected. Commands that read the
 * whole value synchronously (GETRANGE, APPEND...) answer STRVAL_READ_ERR.
 *
 * Invariant: a client is CLIENT_STREAMING exactly while it has an entry in
 * its worker's table. Everything here runs on that worker's thread. */
#include "cmd/stream.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "session/reply.h"
#include "db/strval.h"
#include "mem/ssdtail.h"
#include "session/session.h"
#include "base/log.h"

typedef struct vstream {
    client *c;
    ssdtail_stream *s;
    const char *trailer; /* after the value: "\r\n", or a protocol's own */
} vstream;

static _Thread_local vstream *tab;
static _Thread_local size_t ntab, captab;
static void drop(size_t i);
static _Thread_local client **snap;
static _Thread_local size_t capsnap;

void cmd_stream_thread_exit(void) {
    while (ntab) drop(ntab - 1);
    free(tab);
    free(snap);
    tab = NULL;
    snap = NULL;
    captab = capsnap = 0;
    ssdtail_thread_exit();
}

static long find(const client *c) {
    for (size_t i = 0; i < ntab; i++)
        if (tab[i].c == c) return (long)i;
    return -1;
}

static void drop(size_t i) {
    ssdtail_stream_close(tab[i].s);
    tab[i] = tab[--ntab];
}

int cmd_stream_fd(void) { return ssdtail_async_fd(); }

static int stream_start(client *c, const gobj *o, const char *hdr, size_t hdrlen, const char *trailer) {
    if (!c->conn || (client_flags_peek(c) & (CLIENT_IN_EXEC | CLIENT_MULTI | CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) ||
        cmd_stream_fd() < 0 || find(c) >= 0)
        return 0;
    if (ntab == captab) {
        size_t nc = captab ? captab * 2 : 16;
        vstream *nt = realloc(tab, nc * sizeof(*nt));
        if (!nt) return 0;
        tab = nt;
        captab = nc;
    }
    const char *head;
    size_t headlen, total;
    ssdtail_stream *s;
    if (!strval_stream_open(o, &head, &headlen, &total, &s)) return 0;
    const char *p;
    if (ssdtail_stream_peek(s, &p) < 0) {
        /* Failed before a byte went out: a plain error reply. */
        ssdtail_stream_close(s);
        strval_count_read_error();
        reply_error(c, STRVAL_READ_ERR);
        return 1;
    }
    char bulk[32];
    struct iovec v[2] = {{NULL, 0}, {(void *)head, headlen}};
    if (!hdr && c->value_sink && c->value_sink(c, v + 1, 1, total, 1)) {
        trailer = ""; /* the sink framed it: the value's bytes alone follow */
    } else {
        if (!hdr) {
            int n = snprintf(bulk, sizeof(bulk), "$%zu\r\n", total);
            hdr = bulk;
            hdrlen = (size_t)n;
        }
        v[0] = (struct iovec){(void *)hdr, hdrlen};
        reply_rawv(c, v, 2);
    }
    tab[ntab++] = (vstream){c, s, trailer};
    client_flag_on(c, CLIENT_STREAMING);
    return 1;
}

int cmd_stream_reply(client *c, const gobj *o) { return stream_start(c, o, NULL, 0, "\r\n"); }

int cmd_stream_reply_framed(client *c, const gobj *o, const char *hdr, size_t hdrlen, const char *trailer) {
    return stream_start(c, o, hdr, hdrlen, trailer);
}

/* Move what is ready into c's output and send it. c may be gone after. */
static void pump(client *c) {
    long i = find(c);
    if (i < 0) return;
    ssdtail_stream *s = tab[i].s;
    for (;;) {
        if (c->olen - c->osent >= CMD_STREAM_OBUF_HIGH) break;
        const char *p;
        long n = ssdtail_stream_peek(s, &p);
        if (n < 0) {
            strval_count_read_error();
            log_warn("Tail read error while streaming a value to client id=%llu addr=%s: closing the connection",
                     (unsigned long long)c->id, c->addr);
            drop((size_t)i);
            client_flag_off(c, CLIENT_STREAMING);
            client_flag_on(c, CLIENT_CLOSE_ASAP);
            session_client_flush(c);
            return;
        }
        if (n == 0) break;
        struct iovec v = {(void *)p, (size_t)n};
        reply_rawv(c, &v, 1);
        ssdtail_stream_consume(s);
    }
    if (ssdtail_stream_done(s)) {
        reply_raw(c, tab[i].trailer, strlen(tab[i].trailer));
        drop((size_t)i);
        client_flag_off(c, CLIENT_STREAMING);
        session_client_resume(c); /* the commands it pipelined meanwhile */
        return;
    }
    session_client_flush(c);
}

void cmd_stream_pump(client *c) { pump(c); }

void cmd_stream_tick(void) {
    if (ssdtail_async_stalled()) cmd_stream_poll();
}

void cmd_stream_poll(void) {
    ssdtail_async_reap();
    if (!ntab) return;
    /* pump() can end streams, free clients and start new streams: walk a
     * snapshot of the clients and look each one up again. */
    if (capsnap < ntab) {
        client **ns = realloc(snap, ntab * sizeof(*ns));
        if (!ns) return;
        snap = ns;
        capsnap = ntab;
    }
    size_t k = ntab;
    for (size_t j = 0; j < k; j++) snap[j] = tab[j].c;
    for (size_t j = 0; j < k; j++) pump(snap[j]);
}

void cmd_stream_client_gone(client *c) {
    long i = find(c);
    if (i >= 0) drop((size_t)i);
    client_flag_off(c, CLIENT_STREAMING);
}
