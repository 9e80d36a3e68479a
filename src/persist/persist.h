/* persist.h -- SAVE, BGSAVE, LOAD, start-up load, save points and shutdown
 * saves: the lifecycle around the RDB reader and writer (rdb.h).
 *
 * Entry points for the rest of the server (each says which lock it wants):
 *
 *   persist_start / persist_stop      the persistence thread: reaps the
 *                                     BGSAVE child, fires save points and
 *                                     scheduled BGSAVEs (persist_cron)
 *   persist_load_at_startup           dir/dbfilename into memory, with
 *                                     -LOADING served meanwhile
 *   persist_loading                   for the dispatcher's -LOADING check
 *   persist_shutdown                  SHUTDOWN [SAVE|NOSAVE] and SIGTERM
 *   persist_info                      the INFO persistence section
 *
 * Lock order: the keyspace lock comes first; pst_lock (this module's
 * state) is a leaf taken under it, never the other way round. */
#ifndef GOBLIN_PERSIST_PERSIST_H
#define GOBLIN_PERSIST_PERSIST_H
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"
#include "persist/rdb.h"
#include "persist/rdb_format.h"

/* rdbcompression as configured now (SAVE's and DUMP's LZF strings). */
int persist_compress(void);
/* Replication info for a dump (a replica's replication id, the offset its
 * dataset is at and the stream's database), from the command layer; the
 * caller holds the keyspace write lock, so it matches the snapshot. 1 when
 * there is something to write. */
typedef int persist_repl_info_fn(char id[41], long long *offset, int *stream_db);
void persist_set_repl_info(persist_repl_info_fn *fn);
/* Start-up, once the dump with replication info is loaded and before any
 * client writes: the command layer may take up the stream it names from
 * offset (a primary does, as Redis 7.0); keys[0..n) are the keys the load
 * dropped as expired (their deletions belong to that stream). */
typedef struct persist_dropped_key {
    int dbid;
    size_t n;
    char *p;
} persist_dropped_key;
typedef void persist_repl_resume_fn(const char id[41], long long offset, const persist_dropped_key *keys, size_t n);
void persist_set_repl_resume(persist_repl_resume_fn *fn);
/* What the dump loaded at start-up said about replication (0: nothing). */
int persist_loaded_repl_info(char id[41], long long *offset, int *stream_db);
/* The options of a dump as configured now (compression, checksum,
 * incremental fsync, used-mem); safe under the config lock. */
void persist_fill_save_opts(rdb_save_opts *o);
/* Write commands (and PING) are refused with -MISCONF: the last BGSAVE
 * failed, save points are set and stop-writes-on-bgsave-error is yes. */
int persist_writes_refused(void);
void persist_start(void);
void persist_stop(void);            /* also kills a running BGSAVE child */
/* CONFIG RESETSTAT: rdb_saves and the AOF's rewrite counts from 0. */
void persist_stats_reset(void);

/* SAVE: write dir/dbfilename synchronously. The caller holds the keyspace
 * write lock. RDB_OK, or an error code with a message. */
int persist_save(char *err, size_t errlen);

/* BGSAVE: fork a child that writes the file. The caller holds the keyspace
 * write lock. Returns RDB_OK (started), RDB_ERR_REFUSED (arena-hugetlb;
 * err is the exact refusal), RDB_ERR_BUSY (a BGSAVE child is running),
 * RDB_ERR_OTHER_CHILD (an AOF rewrite child is: err is Redis's reply) or
 * another error. With schedule set and a child running... see persist_bgsave_schedule. */
int persist_bgsave(char *err, size_t errlen);
/* Ask the persistence thread to start a BGSAVE as soon as none runs. */
void persist_bgsave_schedule(void);
int persist_bgsave_in_progress(void);

/* LOAD path: read and verify path completely (no lock held meanwhile;
 * clients keep being served from the old dataset), then swap it in under
 * the keyspace write lock. On error the old dataset is untouched and err
 * names the problem. *keys receives the keys loaded. Takes its own locks. */
int persist_load(const char *path, uint64_t *keys, char *err, size_t errlen);

/* A replica's load from the socket (repl-diskless-load): the RDB from rd
 * into a detached dataset; verify (may be NULL) checks what follows it
 * (the EOF mark) before the swap; then the new dataset replaces the old
 * one under the keyspace write lock. async 1 (swapdb): clients keep
 * reading the old data meanwhile and INFO says async_loading; 0: INFO
 * says loading and commands get -LOADING. total: the payload's size when
 * known (else 0). On any error the old dataset stays. Takes its locks. */
typedef int persist_verify_fn(void *arg, const rdb_loaded *ld, char *err, size_t errlen);
int persist_stream_load(rdb_read_fn *rd, void *arg, int async, long long total, persist_verify_fn *verify,
                        void *varg, uint64_t *keys, char *err, size_t errlen);

/* Start-up: load dir/dbfilename when it exists. 0 (loaded or no file),
 * PERSIST_LOAD_FAILED on a corrupt or unreadable file (err says why; the
 * caller logs it and exits 1), PERSIST_LOAD_FAILED_LOGGED when the loader
 * logged why already, as Redis's AOF loader does (err says it again for
 * stderr), 1 when a shutdown request interrupted the load. Clients get
 * -LOADING while it runs. */
enum { PERSIST_LOAD_FAILED = -1, PERSIST_LOAD_FAILED_LOGGED = -2 };
int persist_load_at_startup(char *err, size_t errlen);
/* Call before the workers accept connections: when there is a dump to
 * load, -LOADING starts with the very first command (no window in which an
 * empty dataset is served). persist_load_at_startup ends the state. */
void persist_loading_begin(void);
int persist_loading(void);
/* A replica's swapdb load of the same history is under way: the old
 * dataset is served, but CONFIG SET of some settings and the commands
 * flagged no_async_loading are answered -LOADING (INFO async_loading). */
int persist_async_loading(void);
/* Progress of the start-up load for INFO (loading_loaded_bytes ...): the
 * AOF loader reports bytes read of total. */
void persist_loading_progress(uint64_t loaded, uint64_t total);
/* A shutdown signal during start-up loading: stop it. */
void persist_abort_loading(void);

/* Shutdown saving. how: PERSIST_SHUTDOWN_DEFAULT saves when save points
 * are configured (SHUTDOWN, SIGTERM), _SAVE always, _NOSAVE never. A
 * running BGSAVE child is killed first; nothing is saved while loading.
 * Takes the keyspace write lock itself. 0, or -1 when the save failed (err
 * says why; Redis then refuses to shut down unless FORCE). */
enum { PERSIST_SHUTDOWN_DEFAULT = 0, PERSIST_SHUTDOWN_SAVE = 1, PERSIST_SHUTDOWN_NOSAVE = 2 };
int persist_shutdown(int how, char *err, size_t errlen);
/* A shutdown that was refused after persist_shutdown failed: logged as
 * Redis logs it; save points and BGSAVE are allowed again. */
void persist_shutdown_cancelled(void);
/* A shutdown is in persist_shutdown or past it, and was not cancelled:
 * the server is saving to exit, or exiting. */
int persist_shutdown_decided(void);
/* A replication full sync's RDB child started (+1) or ended (-1): INFO
 * shows rdb_bgsave_in_progress:1 meanwhile, as Redis shows its RDB child
 * of a diskless or disk sync. */
void persist_repl_child(int delta);

/* FLUSHALL: Redis kills a BGSAVE child and, when save points are set,
 * saves the empty dataset at once. Keyspace write lock held. */
void persist_after_flushall(void);

/* DEBUG RELOAD [NOSAVE]: save (unless nosave), then load the file back.
 * Takes the keyspace write lock itself. */
int persist_debug_reload(int nosave, char *err, size_t errlen);

/* DEBUG LOADAOF: the dataset replaced by a replay of the AOF files
 * (aof_debug_load) while other clients are answered -LOADING. Takes the
 * keyspace write lock itself. 0, or -1 with err (nothing changed). */
int persist_debug_loadaof(char *err, size_t errlen);

/* One round of housekeeping: reap the child, read its progress, fire
 * scheduled BGSAVEs and save points. The persistence thread calls it every
 * 100 ms; exposed for a server cron that would rather drive it. */
void persist_cron(void);

/* The whole "# Persistence" section of INFO. */
void persist_info(strbuf *b);

/* Changes since the last successful save (rdb_changes_since_last_save). */
uint64_t persist_dirty(void);

#endif
