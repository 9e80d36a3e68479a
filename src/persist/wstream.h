/* wstream.h -- the write stream: every change to the dataset as a command
 * in effect form (RESP bytes, as Redis 7.0 propagates them), in the order
 * the changes were applied. The append-only file and, later, replication
 * consume it.
 *
 * Producers are the command layer (one command's records at a time, while
 * it still holds the shards of its keys) and the db layer's own changes
 * (active expiry, eviction). Invariant: a producer appends while it holds
 * the locks that serialise the change it describes (its key shards, or the
 * keyspace write lock), and a command's records are appended under one
 * wstream_lock(); so for every key the stream's order is the order in
 * which its changes were applied, and a command's records are contiguous.
 *
 * SELECT is emitted by the stream itself when a record's database differs
 * from the previous record's (and at the first record after
 * wstream_force_select()): apart for the sinks with `repl`, which take
 * every record, and the others, which do not take the replica-only ones.
 *
 * Consumers register a sink: write() is called under the stream lock with
 * each piece of bytes, in stream order, and must only copy them (it runs on
 * the producer's thread, inside its locks). With no sink registered the
 * stream is idle: wstream_active() is 0 and producers skip the work. */
#ifndef GOBLIN_PERSIST_WSTREAM_H
#define GOBLIN_PERSIST_WSTREAM_H
#include <stddef.h>
#include <stdint.h>

typedef struct wstream_sink {
    void (*write)(void *arg, const char *p, size_t n);
    void *arg;
    int repl;   /* also takes the records meant for replicas only (PUBLISH) */
} wstream_sink;

#define WSTREAM_MAX_SINKS 8

/* 0 ok, -1 when all slots are taken. The sink's storage must outlive its
 * registration. */
int wstream_add_sink(const wstream_sink *s);
void wstream_remove_sink(const wstream_sink *s);
/* In a forked child that runs commands of its own (a Lua debugging
 * session): no sink takes anything from now on (they are the parent's). */
void wstream_forget_sinks(void);
/* Whether any sink listens (relaxed; a producer that sees 0 appends
 * nothing). */
int wstream_active(void);
/* Whether a sink with `repl` listens (a primary's replication, once it had
 * a replica, as Redis keeps its backlog): replica-only records are made
 * only then, as Redis's shouldPropagate. */
int wstream_repl_active(void);

void wstream_lock(void);
void wstream_unlock(void);
/* One command for database dbid (< 0: no SELECT, e.g. FLUSHALL), as argc
 * arguments p[i] of n[i] bytes. Stream lock held. */
void wstream_append_locked(int dbid, int argc, const char *const *p, const size_t *n);
/* The same for a record only the sinks with `repl` take (Redis propagates
 * PUBLISH to replicas, not to the AOF). Stream lock held. */
void wstream_append_repl_locked(int dbid, int argc, const char *const *p, const size_t *n);
/* The same for the views in `to` (a mask of WSTREAM_TO_*; 0: none): the
 * sinks without `repl` (the AOF), those with it (the replicas), or both
 * (a script's records under redis.set_repl). Stream lock held. */
enum { WSTREAM_TO_AOF = 1, WSTREAM_TO_REPL = 2, WSTREAM_TO_ALL = 3 };
void wstream_append_to_locked(int to, int dbid, int argc, const char *const *p, const size_t *n);
/* The next record a sink with (repl) or without `repl` takes emits SELECT
 * whatever the database (a replica that starts mid-stream, a new AOF
 * file). Stream lock held. */
void wstream_force_select_locked(int repl);
/* The database of the last record the sinks with `repl` took, -1: none
 * since the last forced SELECT (Redis's slaveseldb). Takes the lock. */
int wstream_repl_db(void);
/* Bytes the sinks with `repl` were handed since start-up (the stream
 * offset). */
uint64_t wstream_offset(void);
#endif
