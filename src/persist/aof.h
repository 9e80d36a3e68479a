/* aof.h -- the append-only file, Redis 7.0's multi-part layout: a directory
 * (appenddirname) holding a manifest (<appendfilename>.manifest), one base
 * file (<appendfilename>.<seq>.base.rdb, an RDB snapshot, or .base.aof)
 * and incremental files (<appendfilename>.<seq>.incr.aof) of commands in
 * RESP form, loaded in manifest order.
 *
 * Writing: a write-stream sink (wstream.h) copies every record into a
 * buffer under the stream lock; one writer thread writes the buffer to the
 * current incr file. appendfsync no: never fsync; everysec: fsync at most
 * once a second, on the writer thread; always: a worker holds the replies
 * of commands that appended until their bytes are written and fsynced
 * (aof_durable_take / aof_durable_state), serving others meanwhile; one
 * write+fsync covers every record that arrived before it (group commit).
 *
 * Entry points (lock needs stated at each):
 *   aof_load_at_startup / aof_open_at_startup
 *   aof_durable_take + aof_durable_state replies after fsync (always)
 *   aof_write_error                      the dispatcher's MISCONF check
 *   aof_rewrite_start / aof_cron         BGREWRITEAOF and its child
 *   aof_info / aof_stop */
#ifndef GOBLIN_PERSIST_AOF_H
#define GOBLIN_PERSIST_AOF_H
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

enum { AOF_FSYNC_NO = 0, AOF_FSYNC_ALWAYS = 1, AOF_FSYNC_EVERYSEC = 2 };

/* The command layer replays the commands of AOF files through this
 * callback: one command for database dbid, argc arguments p[i] of n[i]
 * bytes. 0 ok (a command's error reply is not a failure), -1 when the
 * command cannot be replayed at all (unknown command: err says why). */
typedef int aof_replay_fn(int dbid, int argc, const char *const *p, const size_t *n, char *err, size_t errlen);
void aof_set_replay(aof_replay_fn *fn);

/* Bind the directives (appendonly, appendfsync, ...); before config_load. */
void aof_config_register(void);
/* appendonly as configured now. */
int aof_enabled(void);
/* Start-up is over (the dataset is loaded): from now on CONFIG SET
 * appendonly yes|no starts and stops the AOF. aof_open_at_startup calls it
 * itself. */
void aof_set_live(void);
/* appendonly was turned on at run time and its first base is not written
 * yet (SHUTDOWN refuses meanwhile, as Redis). */
int aof_first_base_pending(void);

/* Start-up, appendonly yes (the caller serves -LOADING until both ran).
 * aof_load_at_startup: load manifest, base and incr files into the live
 * dataset (takes its own locks); 0 ok (loaded, or nothing to load), -1
 * with err (a damaged manifest, a missing file, a torn tail with
 * aof-load-truncated no), logged already, as Redis logs it: the server
 * must not start. Then
 * aof_open_at_startup creates the directory, a base when there is none, an
 * incr file and the manifest, and starts writing; -1 with err on failure. */
int aof_load_at_startup(char *err, size_t errlen);
int aof_open_at_startup(char *err, size_t errlen);

/* The dataset was replaced (a replica's full sync): when the AOF is on it
 * starts over from a new base of the new dataset, as CONFIG SET appendonly
 * no then yes would. Takes the keyspace write lock. 0, or -1 with err (the
 * AOF is then off). */
int aof_restart(char *err, size_t errlen);

/* DEBUG LOADAOF, as Redis 7.0: what the writer holds reaches the file, the
 * manifest is read again from disk (its history files are deleted), the
 * dataset is emptied and the files are replayed. The caller holds the
 * keyspace write lock, so replayed commands take no lock of their own.
 * 0; -1 with err when the manifest cannot be read or names no file
 * (nothing changed). A load that fails once the dataset is emptied ends
 * the process, as in Redis. */
int aof_debug_load(char *err, size_t errlen);

/* While on (the calling thread runs EXEC), CONFIG SET appendonly yes
 * schedules the first rewrite instead of starting it, as Redis does
 * inside a transaction. */
void aof_defer_rewrites(int on);

/* Flush what is buffered, fsync, stop the writer; kills a rewrite child. */
void aof_stop(void);
/* A shutdown decided: a rewrite that runs is killed now (its temp files
 * removed), as Redis's finishShutdown does, so that it cannot finish and
 * swap the files while the server stops; the AOF there is complete. */
void aof_rewrite_abort_for_shutdown(void);
/* CONFIG RESETSTAT: aof_rewrites and aof_rewrites_consecutive_failures
 * from 0. */
void aof_stats_reset(void);

/* Group commit without waiting: a worker takes the offset its held
 * replies need (aof_durable_take: aof_durable_needed, then forgotten),
 * keeps serving, and sends them once aof_durable_state(offset) is 1 (on
 * disk); -1: they never will be (a write error, or the AOF was turned
 * off): not acknowledged. The writer thread calls the notify function
 * (installed once by the transport) after every write+fsync, so waiting
 * workers look again. */
uint64_t aof_durable_take(void);
int aof_durable_state(uint64_t offset);
void aof_set_sync_notify(void (*fn)(void));

/* Group commit. The AOF offset after the records the calling thread has
 * appended since its last aof_durable_take, when appendfsync is always;
 * 0 when nothing needs waiting for. */
uint64_t aof_durable_needed(void);
/* A worker thread calls aof_batch_begin once: from then on its records
 * wake the writer only when it calls aof_batch_end, at the end of each
 * loop iteration (one wake-up and one write for the iteration, not one per
 * record, as Redis writes once in beforeSleep). Other threads' records
 * wake it at once. */
void aof_batch_begin(void);
void aof_batch_end(void);
/* Fault injection (DEBUG AOF-FAULT): the writer's next `writes` writes and
 * `fsyncs` fsyncs fail with EIO. */
void aof_inject_faults(int writes, int fsyncs);
/* DEBUG AOF-FLUSH-SLEEP: the writer sleeps us microseconds before each
 * write (0: none), a Redis test knob. */
void aof_set_flush_sleep(int us);

/* Nonzero while writes must be refused because the last write to the AOF
 * failed: buf receives "MISCONF Errors writing to the AOF file: <reason>". */
int aof_write_error(char *buf, size_t n);

/* Bytes held by the pending and write buffers. As in Redis they do not
 * count against maxmemory: evicting keys cannot shrink them, and a slow
 * fsync lets them grow by megabytes under write load. */
size_t aof_buffer_bytes(void);

/* BGREWRITEAOF. The caller holds the keyspace write lock (the child's copy
 * is a point in time). Returns 0 (started), 1 (scheduled: another child
 * runs), or -1 with err: AOF_RW_BUSY (a rewrite runs), AOF_RW_REFUSED
 * (arena-hugetlb: err is the refusal), AOF_RW_FAILED. */
enum { AOF_RW_STARTED = 0, AOF_RW_SCHEDULED = 1 };
enum { AOF_RW_BUSY = -2, AOF_RW_REFUSED = -3, AOF_RW_FAILED = -1 };
int aof_rewrite_start(int may_schedule, char *err, size_t errlen);
int aof_rewrite_in_progress(void);
void aof_rewrite_schedule(void);
/* Reap the rewrite child, start a scheduled rewrite, retry a failed
 * write, the everysec fsync when idle. The persistence thread calls it. */
void aof_cron(void);

/* The aof_* lines of INFO persistence, in Redis's order (the tail lines
 * only when AOF is on). */
void aof_info(strbuf *b);
void aof_info_tail(strbuf *b);
#endif
