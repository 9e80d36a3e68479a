/* resp.h -- incremental request parser (RESP multibulk and inline).
 *
 * The parser works on the connection's query buffer in place: bulk
 * arguments are not copied, only located, and each gets a NUL written over
 * the '\r' that follows it, so argv entries are C strings for the length of
 * one command. Inline arguments (which need unquoting) are copied into the
 * parser's own buffer. State survives across reads, so a command split at
 * any byte boundary parses exactly like a whole one. */
#ifndef GOBLIN_NET_RESP_H
#define GOBLIN_NET_RESP_H
#include <stddef.h>

#include "session/client.h"

typedef struct resp_parser {
    int type;            /* 0 = not started, 1 = multibulk, 2 = inline */
    long long mb_left;   /* bulk arguments still to read */
    long long bulklen;   /* length of the bulk being read, -1 if header next */
    size_t pos;          /* parse position relative to the command start */
    int argc, cap;
    size_t *off, *len;   /* arguments as offsets into the buffer */
    char *inl;           /* inline argument storage */
    size_t inl_cap;
    garg *argv;          /* filled when a command completes */
    unsigned peek_rest;  /* resp_proto.c: reads to skip before reading ahead again */
} resp_parser;

typedef struct resp_limits {
    long long max_bulk;      /* proto-max-bulk-len */
    int authenticated;       /* else multibulk > 10 / bulk > 16384 refused */
} resp_limits;

enum { RESP_NEED_MORE = 0, RESP_COMMAND = 1, RESP_ERROR = -1 };

void resp_parser_init(resp_parser *p);
void resp_parser_free(resp_parser *p);
/* After the command of the last resp_parse has run (its argv is no longer
 * used): argument arrays grown for more than 1024 arguments are freed, as
 * Redis frees a command's argv after every call, so a connection that once
 * sent a million-argument MSET does not keep 32 MB. */
void resp_trim(resp_parser *p);
/* Parse from buf[0..len). RESP_COMMAND: argc and argv set, *consumed bytes
 * belong to the command. RESP_NEED_MORE: *consumed bytes may be dropped
 * (only when nothing is pending); RESP_ERROR: *err is the Redis message. */
int resp_parse(resp_parser *p, char *buf, size_t len, const resp_limits *lim, size_t *consumed, int *argc,
               garg **argv, const char **err);
/* Of the partial multibulk command being read: the bytes already parsed
 * (its count and complete arguments, and the header of the argument being
 * read) and the sum of the complete arguments' lengths; both 0 between
 * commands and for inline requests (parsed once whole). */
void resp_partial(const resp_parser *p, size_t *parsed, size_t *argv_len);
/* Total bytes the current partial command still needs, if known (for reads). */
size_t resp_pending_hint(const resp_parser *p);
#endif
