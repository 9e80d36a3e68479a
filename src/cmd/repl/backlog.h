/* backlog.h -- the replication backlog: the last `size` bytes of the
 * replication stream in a ring, so a replica that lost its link can go on
 * from where it stopped (PSYNC) instead of a full sync.
 *
 * Offsets are Redis's: the stream's bytes are numbered from 1 on; after n
 * bytes were fed, master_repl_offset is n. The ring holds bytes
 * [first, first + histlen). Invariant: histlen <= size and
 * first + histlen - 1 == the offset of the last byte fed. Not thread-safe:
 * the replication state's lock guards it. */
#ifndef GOBLIN_CMD_REPL_BACKLOG_H
#define GOBLIN_CMD_REPL_BACKLOG_H
#include <stddef.h>
#include <stdint.h>

typedef struct repl_backlog {
    char *buf;
    size_t size;        /* ring capacity */
    size_t idx;         /* where the next byte goes */
    uint64_t histlen;   /* valid bytes (<= size) */
    uint64_t first;     /* offset of the oldest byte held */
} repl_backlog;

/* A ring of size bytes whose next byte will have offset next_off. 0, or -1
 * out of memory. */
int backlog_init(repl_backlog *b, size_t size, uint64_t next_off);
void backlog_free(repl_backlog *b);
void backlog_feed(repl_backlog *b, const char *p, size_t n);
/* Whether the bytes from offset off on are all held (off may be one past
 * the last byte: nothing to send). */
int backlog_has(const repl_backlog *b, uint64_t off);
/* Copy the bytes from offset off to the end into a new buffer (*n bytes;
 * caller frees). backlog_has(b, off) must hold. */
char *backlog_copy_from(const repl_backlog *b, uint64_t off, size_t *n);
/* repl-backlog-size changed: keep what fits of the newest bytes. */
int backlog_resize(repl_backlog *b, size_t size);
#endif
