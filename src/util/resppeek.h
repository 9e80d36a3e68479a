/* resppeek.h -- read-ahead over RESP requests for key prefetching.
 *
 * The RESP module and a replica's stream loop look at the requests waiting
 * in their buffers before running them, to start loading what the keys'
 * lookups will read (db_prefetch_keys). Pure: no server types. */
#ifndef GOBLIN_UTIL_RESPPEEK_H
#define GOBLIN_UTIL_RESPPEEK_H
#include <stddef.h>

/* The second argument (the key of most commands) of each whole multibulk
 * request at the start of buf[0..len), written the plain way ("*<n>\r\n"
 * then "$<len>\r\n<bytes>\r\n" per argument), for up to max requests;
 * stops at the first request not of that form or not all in the buffer,
 * and after RESPPEEK_ARGS arguments in all, so a large request arriving in
 * pieces is not scanned again and again. Reads only. Returns how many keys
 * it found (a request of one argument gives none); *span: the bytes of the
 * whole requests it went through. */
#define RESPPEEK_ARGS 512
int resp_peek_keys(const char *buf, size_t len, const char **k, size_t *n, int max, size_t *span);
#endif
