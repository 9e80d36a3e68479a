/* stream.h -- streamed replies of large string values (GET of a value
 * whose tail is on SSD). See stream.c. */
#ifndef GOBLIN_CMD_STREAM_H
#define GOBLIN_CMD_STREAM_H
#include "session/client.h"
#include "db/object.h"

/* Start a streamed bulk reply of o for c: 1 when the header and the head
 * are in c's output (or sent: reply_rawv) and the tail follows (c is
 * CLIENT_STREAMING until the reply is complete); 0 when o must be replied
 * the ordinary way. A client's value sink (client.h) may frame it instead
 * of the bulk string's header; the stream then carries the bytes alone. */
int cmd_stream_reply(client *c, const gobj *o);
/* The same with the protocol's own framing: hdr[0..hdrlen) before the
 * value (it must state the value's length itself, strval_len) and the
 * static string trailer after it (memcache: "\r\nEND\r\n"). */
int cmd_stream_reply_framed(client *c, const gobj *o, const char *hdr, size_t hdrlen, const char *trailer);

/* For net/: the calling worker thread's I/O completion fd (-1: none; make
 * it once on each worker thread before its loop runs), what to call when
 * it is readable, what to call when c's output drained below the mark,
 * and what to call when c goes away. */
int cmd_stream_fd(void);
void cmd_stream_poll(void);
/* For the worker's tick: polls only when reads the kernel refused wait. */
void cmd_stream_tick(void);
void cmd_stream_pump(client *c);
void cmd_stream_client_gone(client *c);
/* A worker thread ends: its streams, tables and I/O ring go. */
void cmd_stream_thread_exit(void);
/* Output pending above this many bytes pauses the stream (back-pressure). */
#define CMD_STREAM_OBUF_HIGH (1u << 20)
#endif
