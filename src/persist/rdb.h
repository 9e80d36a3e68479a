/* rdb.h -- writing and reading whole datasets in the RDB format.
 *
 * The writer walks the live databases through db/ and the ds/ iterators
 * and streams records into a file descriptor; rdb_save_file() adds the
 * crash-safe file protocol (temp file in the target's directory, fsync,
 * rename, fsync of the directory), so the previous file survives any
 * failure or kill in between.
 *
 * The reader never touches the live databases: rdb_load_file() builds a
 * complete new dataset (one detached database per index the file uses) and
 * verifies everything, the checksum included, before it returns.
 * rdb_load_commit() then exchanges it with the live one under the keyspace
 * write lock, which is the only moment clients wait; rdb_load_discard()
 * frees whatever is left (the old dataset after a commit, the new one after
 * an error). So a failed load leaves the live dataset untouched. */
#ifndef GOBLIN_PERSIST_RDB_H
#define GOBLIN_PERSIST_RDB_H
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "persist/rdb_format.h"

/* Progress reports: called every few thousand keys with the running totals
 * (bytes are file bytes written or read). */
typedef void rdb_progress_fn(void *arg, uint64_t keys, uint64_t bytes);

typedef struct rdb_save_opts {
    int compress;             /* LZF for strings longer than 20 bytes */
    int no_checksum;          /* rdbchecksum no: a file ends with a zero CRC */
    uint64_t used_mem;        /* the used-mem aux field */
    int aof_base;             /* the aof-base aux field: 1 in an AOF base file */
    int incremental_fsync;    /* fdatasync every RDB_AUTOSYNC_BYTES written, so the
                                 kernel never holds a whole dump in dirty pages */
    /* Replication info (the repl-stream-db, repl-id and repl-offset aux
     * fields of a replica's dump, as Redis): written when repl_id[0]. */
    char repl_id[41];
    long long repl_offset;
    int repl_stream_db;
    rdb_progress_fn *progress;
    void *progress_arg;
    /* rdb-key-save-delay (a Redis test knob): microseconds to sleep after
     * each key; negative n sleeps 1 us after one key in -n, at random. */
    int key_delay_us;
    /* REPLCONF rdb-filter-only: no keys (no_keys), no function libraries
     * (no_functions). */
    int no_keys, no_functions;
} rdb_save_opts;

/* rdb-save-incremental-fsync / aof-rewrite-incremental-fsync: Redis's 4 MB. */
#define RDB_AUTOSYNC_BYTES (4u << 20)

typedef struct rdb_save_stats {
    uint64_t keys;            /* keys written */
    uint64_t bytes;           /* file size */
} rdb_save_stats;

/* Write every database to fd (a fresh file). The caller holds the keyspace
 * write lock, or is a forked child (then no lock is needed). Returns RDB_OK
 * or an error code with a message in err. Does not fsync. */
int rdb_save_fd(int fd, const rdb_save_opts *opt, rdb_save_stats *st, char *err, size_t errlen);

/* The whole crash-safe save to path: temp file "temp-<pid>.rdb" in path's
 * directory, rdb_save_fd, fsync, rename over path, fsync the directory. On
 * any failure the temp file is removed and path is untouched. */
int rdb_save_file(const char *path, const rdb_save_opts *opt, rdb_save_stats *st, char *err, size_t errlen);
/* The temp file name rdb_save_file uses for process pid (for cleaning up
 * after a killed child). */
void rdb_temp_path(char *buf, size_t len, const char *path, long pid);

/* Records in memory, for writers that interleave them in one RDB (the
 * fork-less snapshot, persist/rdb_snap.c): the caller writes the bytes
 * (rdb_membuf_take) to the file and keeps its checksum. Each buffer starts
 * with SELECTDB before its first record, and again after each take, so
 * the chunks taken from several buffers may be written in any order. The
 * caller holds what rdb_membuf_entry's entry needs (its shard lock). NULL
 * when out of memory. */
typedef struct rdb_membuf rdb_membuf;
rdb_membuf *rdb_membuf_new(int compress);
void rdb_membuf_free(rdb_membuf *b);
void rdb_membuf_header(rdb_membuf *b, const rdb_save_opts *opt); /* magic and aux fields */
void rdb_membuf_db(rdb_membuf *b, int dbid, uint64_t size, uint64_t expires); /* SELECTDB, RESIZEDB */
/* fold: the thread holds no string bytes from strval (between commands,
 * or before one runs); else large-string views wait for the command's end. */
void rdb_membuf_entry(rdb_membuf *b, int dbid, const dbentry *e, int fold);
size_t rdb_membuf_len(const rdb_membuf *b);
/* The bytes so far (malloc'd, the caller frees; NULL and *n 0 when none). */
unsigned char *rdb_membuf_take(rdb_membuf *b, size_t *n);
/* RDB_OK, or the error that spoiled the buffer (a value that could not be
 * read, no memory) with a message. */
int rdb_membuf_error(const rdb_membuf *b, char *err, size_t errlen);

/* Test hook: when set, every write(2) of the saver is cut to at most this
 * many bytes and the saver sleeps that many microseconds between writes
 * (to make a save slow enough to be killed in the middle); the pass of a
 * fork-less snapshot (rdb_snap.h) sleeps that long after each step, with
 * no lock held. 0: off. */
extern volatile long rdb_save_slow_us;
/* Test hook: the loader sleeps this many microseconds after every 4096
 * keys, and the AOF loader after every 1024 commands (to observe -LOADING
 * and the loading INFO fields). 0: off. */
extern volatile long rdb_load_slow_us;

typedef struct rdb_load_opts {
    rdb_progress_fn *progress;
    void *progress_arg;
    const int *abort;         /* non-zero (read atomically): stop with RDB_ERR_ABORTED */
    int keep_expired;         /* keep keys whose TTL has passed (an AOF base, as Redis) */
    /* Called with each key dropped because its TTL has passed (NULL:
     * none; the key's bytes are valid during the call). */
    void (*expired)(void *arg, int dbid, const void *key, size_t klen);
    void *expired_arg;
    /* key-load-delay (a Redis test knob): as key_delay_us of the save. */
    int key_delay_us;
} rdb_load_opts;

/* Sleep us microseconds after a key (us < 0: 1 us after one key in -us, at
 * random), for rdb-key-save-delay and key-load-delay. */
void rdb_key_delay(int us);

/* Function libraries (Redis 7.0 FUNCTION LOAD): an RDB holds each one as
 * RDB_OPCODE_FUNCTION2 and its code, after the aux fields. The command
 * layer owns the live libraries and compiles them; it lends persist these
 * hooks (none set: a file's libraries are read and dropped, none saved). */
typedef void rdb_func_emit_fn(void *arg, const char *code, size_t n);
typedef struct rdb_func_hooks {
    /* Every live library's code, to emit (the saver: under the keyspace
     * write lock, or in a forked child). */
    void (*each)(rdb_func_emit_fn *emit, void *arg);
    /* A new library set from a file's codes, on the loading thread and
     * touching nothing shared: 0 with *set (NULL for none), or -1 with
     * the reason in err. */
    int (*build)(char *const *codes, const size_t *lens, int n, void **set, char *err, size_t errlen);
    /* Under the keyspace write lock: set becomes the live libraries (NULL:
     * none); returns the previous set. */
    void *(*swap)(void *set);
    /* Free a set swap returned or build made (NULL: nothing). */
    void (*release)(void *set);
} rdb_func_hooks;
void rdb_set_func_hooks(const rdb_func_hooks *h);
const rdb_func_hooks *rdb_func_hooks_get(void);

/* FUNCTION DUMP's payload, as Redis's: each library as in a file, then
 * the RDB version and the CRC-64 (the DUMP footer). *out is malloc'd. */
int rdb_dump_functions(int compress, unsigned char **out, size_t *outlen);
/* FUNCTION RESTORE: verify the footer (RDB_ERR_CHECKSUM when version or
 * checksum are wrong), then read the libraries' codes into *codes / *lens
 * (*n of them; free with rdb_free_codes). Other errors carry Redis's
 * message in err. */
int rdb_restore_functions(const unsigned char *p, size_t len, char ***codes, size_t **lens, int *n, char *err,
                          size_t errlen);
void rdb_free_codes(char **codes, size_t *lens, int n);

typedef struct rdb_loaded {
    gdb *dbs[DB_MAX];         /* detached databases (NULL: none yet) */
    int ndbs;
    uint64_t keys;            /* keys loaded */
    uint64_t expired;         /* keys skipped because their TTL had passed */
    uint64_t empty;           /* empty collections skipped */
    uint64_t bytes;           /* file size */
    int version;
    char redis_ver[32];       /* the redis-ver aux field, if any */
    char repl_id[41];         /* repl-id aux field ("" when absent) */
    long long repl_offset;    /* repl-offset, -1 when absent */
    int repl_stream_db;       /* repl-stream-db, -1 when absent */
    char *mcmeta;             /* the goblin-mcmeta aux field (malloc'd), if any */
    size_t mcmeta_len;
    uint64_t snap_gen;        /* db_snap_generation() when the load began */
    /* Bytes read past the RDB's end (its checksum), which a reader load
     * may take with the last read: ntail of them, the first
     * min(ntail, sizeof tail) kept (a replica's $EOF: mark). */
    size_t ntail;
    unsigned char tail[64];
    /* The file offset just past the RDB (its checksum): an AOF that Redis
     * before 7.0 wrote with aof-use-rdb-preamble goes on with commands
     * there. */
    uint64_t end;
    /* The file's function libraries: their codes while reading, then the
     * set built from them (rdb_func_hooks), which commit makes live. */
    char **fcodes;
    size_t *flens;
    int nfuncs;
    void *funcs;
} rdb_loaded;

/* Read and verify path into ld (zeroed by the call); opt may be NULL (no
 * progress calls, no abort). Safe to run while other threads serve the
 * live dataset: nothing shared is touched. */
int rdb_load_file(const char *path, const rdb_load_opts *opt, rdb_loaded *ld, char *err, size_t errlen);
/* The same from a stream (a replica's socket): rd reads up to n bytes
 * into buf like read(2) (0: the end, -1 with errno: an error). Bytes past
 * the RDB's end are left in ld->tail. Nothing but the checksum guards
 * against damage: a stream has no trailer to diagnose from. */
typedef long rdb_read_fn(void *arg, void *buf, size_t n);
int rdb_load_reader(rdb_read_fn *rd, void *arg, const rdb_load_opts *opt, rdb_loaded *ld, char *err,
                    size_t errlen);
/* Make ld the live dataset, and leave the previous one in ld. The caller
 * holds the keyspace write lock. */
void rdb_load_commit(rdb_loaded *ld);
/* Free the datasets held by ld (call without the keyspace lock). */
void rdb_load_discard(rdb_loaded *ld);

/* DUMP / RESTORE payloads (one value, Redis's layout: type byte, body,
 * 2-byte RDB version, CRC-64). dump: *out is malloc'd. restore: verifies
 * version (at most the one written, as Redis 7.0) and checksum
 * (RDB_ERR_CHECKSUM when wrong), then loads the value with the file
 * loader's checks; o is the new value, zeroed on error. The caller holds
 * the key's locks (a string may be read from or written to SSD). */
int rdb_dump_value(const gobj *v, int compress, unsigned char **out, size_t *outlen);
int rdb_restore_value(const unsigned char *p, size_t n, gobj *o, char *err, size_t errlen);
/* DEBUG SET-SKIP-CHECKSUM-VALIDATION (Redis's hook for testing corrupt
 * payloads): RESTORE, FUNCTION RESTORE and the file loader take what they
 * read without checking its CRC-64. */
void rdb_set_skip_checksum(int on);
#endif
