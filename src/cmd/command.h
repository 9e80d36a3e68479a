/* command.h -- the command table and the one path every command takes.
 *
 * Interface metadata (arity, flags, key range, ACL categories, COMMAND INFO
 * and COMMAND DOCS entries) comes from command_meta.inc, generated from
 * Redis 7.0 (utils/gen_command_meta.py). A command exists in Goblin when a
 * family file registers a handler for its name; COMMAND and friends list
 * exactly those. */
#ifndef GOBLIN_CMD_COMMAND_H
#define GOBLIN_CMD_COMMAND_H
#include <stddef.h>
#include <stdint.h>

#include "session/client.h"
#include "db/db.h"

typedef void cmd_proc(client *c);

enum {
    CMDF_WRITE = 1 << 0,
    CMDF_READONLY = 1 << 1,
    CMDF_DENYOOM = 1 << 2,
    CMDF_ADMIN = 1 << 3,
    CMDF_PUBSUB = 1 << 4,
    CMDF_NOSCRIPT = 1 << 5,
    CMDF_BLOCKING = 1 << 6,
    CMDF_LOADING = 1 << 7,
    CMDF_STALE = 1 << 8,
    CMDF_SKIP_MONITOR = 1 << 9,
    CMDF_SKIP_SLOWLOG = 1 << 10,
    CMDF_FAST = 1 << 11,
    CMDF_NO_AUTH = 1 << 12,
    CMDF_MAY_REPLICATE = 1 << 13,
    CMDF_NO_MULTI = 1 << 14,
    CMDF_MOVABLEKEYS = 1 << 15,
    CMDF_ALLOW_BUSY = 1 << 16,
    CMDF_NO_MANDATORY_KEYS = 1 << 17,
    /* Goblin's own, not in Redis's metadata: the call puts nothing of its
     * own on the write stream (cmd/propagate.c decides which). */
    CMDF_NO_OWN_RECORD = 1 << 18,
    /* Redis 7.0's CMD_TOUCHES_ARBITRARY_KEYS (RANDOMKEY, SCAN): run at top
     * level, the keys it expires go to the stream without MULTI/EXEC. */
    CMDF_ARBITRARY_KEYS = 1 << 19,
    CMDF_NO_ASYNC_LOADING = 1 << 20,
};

/* How the dispatcher locks the keyspace around a handler. */
enum {
    CMD_LOCK_KEYS = 0,   /* default: shards of the key arguments (none if keyless) */
    CMD_LOCK_NONE = 1,   /* touches no keyspace state */
    CMD_LOCK_ALL = 2,    /* keyspace write lock: whole-keyspace or cross-db */
    CMD_LOCK_SELF = 3,   /* handler takes its own locks */
    CMD_LOCK_READ = 4,   /* keyspace read lock; the handler locks the shards it touches */
};

typedef struct cmd_handler {
    const char *name;    /* "get", "config|get" */
    cmd_proc *proc;
    int lock;
} cmd_handler;

typedef struct cmd_def {
    const char *name;        /* subcommand part only for subcommands */
    const char *fullname;    /* "config|get" */
    const struct cmd_def *parent;
    int arity;
    uint32_t flags;
    int first, last, step;
    const char *flags_str, *acl_str;
    const char *info;        /* RESP3 COMMAND INFO entry */
    size_t info_len;
    const char *docs;        /* RESP3 COMMAND DOCS value */
    size_t docs_len;
    cmd_proc *proc;
    int lock;
    struct cmd_def **subs;   /* NULL-terminated, implemented ones only */
    int nsubs;
    /* INFO commandstats: rejected calls (counted before a call, atomic
     * adds); calls, usec and failed calls are counted per thread
     * (cmd_stats_get). base_*: the per-thread sums at the last CONFIG
     * RESETSTAT, read and written with relaxed atomics. */
    uint64_t rejected;
    uint64_t base_calls, base_usec, base_failed;
    /* Its key specs parsed from info, made on first use and published with
     * an atomic compare-and-swap (keyspec.c); never freed. */
    void *kspecs;
} cmd_def;

void cmd_table_init(void);
void cmd_register(const cmd_handler *handlers);
const cmd_def *cmd_lookup(const char *name, size_t len);
/* rename-command, once every family is registered: the top-level command
 * from is found by the name to from now on ("": by none). 0, or -1 with
 * Redis's message in err (no such command, the name is taken). */
int cmd_rename(const char *from, const char *to, char *err, size_t errlen);
/* d is served (registered by its family), whatever name finds it. */
int cmd_registered(const cmd_def *d);
const cmd_def *cmd_lookup_full(garg *argv, int argc);  /* resolves subcommands */
size_t cmd_count_top(void);
typedef void cmd_each_fn(void *arg, const cmd_def *cmd);
void cmd_each(cmd_each_fn *fn, void *arg);            /* top-level only */
/* Every command Redis 7.0 defines, implemented or not (ACL rules may name
 * any of them), in table order: a container precedes its subcommands. */
const cmd_def *cmd_table(size_t *n);
/* Key positions of a command call (legacy range). Returns count; fills idx. */
int cmd_key_positions(const cmd_def *cmd, int argc, int *idx, int max);

/* Show argument i of the running call as "(redacted)" to SLOWLOG and
 * MONITOR (passwords), as Redis does; the command itself has its value. */
void cmd_redact_arg(client *c, int i);

/* Redis 7.0's shared.bgsaveerr, word for word. */
#define MISCONF_RDB                                                                                                   \
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that " \
    "may modify the data set are disabled, because this instance is configured to report errors during writes if "  \
    "RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the " \
    "RDB error."

/* Owned, NUL-terminated copies of argc arguments (a queued or blocked
 * command's); aborts without memory. cmd_args_free(NULL, n) does nothing. */
garg *cmd_args_copy(const garg *a, int argc);
void cmd_args_free(garg *a, int argc);

/* Execute argv of c: lookup, arity, auth, lock, call, statistics. */
void cmd_execute(client *c);
/* The client whose cmd_execute runs on this thread (the caller, during
 * its script's or transaction's calls); NULL outside commands. Bytes for
 * it go straight to its output, in order with its reply. */
client *cmd_running_client(void);
/* One active expiry cycle (db_active_expire_cycle) of the cron thread; the
 * clients blocked on the keys it removed are then retried. */
size_t cmd_active_expire_cycle(long long budget_us, int effort, long long *took_us);
/* Under CLIENT PAUSE (write_only: WRITE, else ALL): 1 when this request
 * must wait for the pause to end. As Redis 7.0's processCommand, errors
 * found before the pause check (unknown command, arity, NOAUTH, the RESP2
 * Pub/Sub context) are answered at once; WRITE holds write and
 * may-replicate commands and an EXEC whose queue holds one (a script by
 * its own flags). The primary's stream is held too, as Redis's master
 * client. When it holds, c's current command shows as the held one. */
int cmd_pause_holds(client *c, int argc, garg *argv, int write_only);
/* Run a resolved command with locks (used by EXEC for queued commands). */
void cmd_call(client *c, const cmd_def *cmd);

/* c's blocked command (c->cur) ends without a run that replies (CLIENT
 * UNBLOCK). As Redis's updateStatsOnUnblock: the time its
 * runs took (run_us; already in its usec) goes to its latency histogram
 * and the slow log (with argv, the arguments as sent); an error reply
 * (failed) counts a failed call. */
void cmd_unblocked(client *c, const garg *argv, uint64_t run_us, int failed);
/* Microseconds the calling thread has spent in commands since it started
 * (each outermost call's duration, as INFO commandstats counts it; a
 * transaction's or script's inner calls are inside their EXEC or EVAL).
 * Read twice, it says how long the commands between the readings took
 * without reading the clock again. */
uint64_t cmd_thread_busy_us(void);

/* Keyspace notification classes (notify-keyspace-events letters). */
enum {
    NOTIFY_KEYSPACE = 1 << 0,  /* K */
    NOTIFY_KEYEVENT = 1 << 1,  /* E */
    NOTIFY_GENERIC = 1 << 2,   /* g */
    NOTIFY_STRING = 1 << 3,    /* $ */
    NOTIFY_LIST = 1 << 4,      /* l */
    NOTIFY_SET = 1 << 5,       /* s */
    NOTIFY_HASH = 1 << 6,      /* h */
    NOTIFY_ZSET = 1 << 7,      /* z */
    NOTIFY_EXPIRED = 1 << 8,   /* x */
    NOTIFY_EVICTED = 1 << 9,   /* e */
    NOTIFY_NEW = 1 << 10,      /* n */
    NOTIFY_STREAM = 1 << 11,   /* t */
    NOTIFY_KEY_MISS = 1 << 12, /* m */
    NOTIFY_MODULE = 1 << 13,   /* d (not generated) */
};

/* The selected database of c. */
gdb *cmd_db(client *c);
/* A multi-key command's loop over its keys argv[first], argv[first + step],
 * ... calls this with each key's index j: at every CMD_PREFETCH_RUN-th key
 * it starts loading that key's and the next ones' index groups and
 * entries (db_prefetch_held: the command holds their shards), so the
 * lookups' cache misses overlap instead of coming one key at a time. */
#define CMD_PREFETCH_RUN 16
void cmd_prefetch_run(client *c, gdb *db, int j, int first, int step);
/* Per-change bookkeeping: db_signal_modified (dirty counter, WATCH). */
void cmd_key_modified(client *c, gdb *db, const char *key, size_t klen);
/* A change to every key of db (NULL: of every db) whose WATCH effect the
 * caller dealt with (multi_touch_emptied, multi_touch_swapped):
 * cmd_key_modified(c, db, NULL, 0) without touching the watchers. */
void cmd_db_modified_watched(client *c, gdb *db);
/* SWAPDB a b was done (keyspace write lock held): every database changed
 * as for a flush, WATCH dirtied as Redis 7.0 does (multi_touch_swapped),
 * and clients blocked on keys the swapped-in databases hold are served. */
void cmd_dbs_swapped(client *c, int a, int b);
void cmd_notify(client *c, int type, const char *event, gdb *db, const char *key, size_t klen);

/* INFO commandstats of one command: the per-thread counts added up, since
 * the last cmd_stats_reset. */
typedef struct cmd_stats {
    uint64_t calls, usec, rejected, failed;
} cmd_stats;
void cmd_stats_get(const cmd_def *d, cmd_stats *out);
void cmd_stats_reset(const cmd_def *d);
/* The latency histogram of d's calls since the last cmd_latency_reset
 * (latency-tracking): every thread's counts added into counts
 * (LATHIST_LEN words, util/lathist.h) and their sum into total. Returns 0
 * when no call was counted (Redis then has no histogram for it). */
int cmd_latency_hist(const cmd_def *d, uint64_t *counts, uint64_t *total);
void cmd_latency_reset(void);

/* Hooks for later families (monitor, multi) */
typedef void cmd_monitor_fn(client *c, const cmd_def *cmd, int dbid);
void cmd_set_monitor_hook(cmd_monitor_fn *fn);
/* Told of every key modification (the WATCH hook), from the writing
 * command with the key's shard held: dbid -1 every database, key NULL
 * every key of it. Set once at start-up. */
typedef void cmd_key_observer_fn(int dbid, const char *key, size_t klen);
void cmd_set_key_observer(cmd_key_observer_fn *fn);
/* Feed MONITOR with c's current command now: EVAL is skip_monitor and shows
 * itself before its script's commands, as Redis does. */
void cmd_feed_monitor(client *c);
/* One rejected call of cmd (INFO commandstats' rejected_calls): refused
 * before it ran (a script's redis.call refused by the script's checks). */
void cmd_count_rejected(const cmd_def *cmd);

/* The key's entry when it holds a value of type; NULL when absent. When it
 * holds another type, WRONGTYPE is replied and *wrong set. */
dbentry *cmd_lookup_typed(client *c, gdb *db, const garg *key, int type, int *wrong);

/* SCAN-family cursor, parsed as Redis does; replies the error itself. */
int scan_parse_cursor(client *c, const garg *a, uint64_t *cursor);
/* COUNT / MATCH (and TYPE when type != NULL) from argv[first..]; replies
 * the error and returns -1. *pat is NULL for no pattern or a lone "*". */
int scan_parse_options(client *c, int first, long long *count, const garg **pat, const garg **type);
/* The reply to a SCAN-family call on a missing key: cursor 0, no items. */
void scan_reply_empty(client *c);

/* Case-insensitive equality of an argument with a literal. */
int arg_is(const garg *a, const char *lit);
/* Parse helpers that reply the Redis error themselves and return -1. */
int arg_ll(client *c, const garg *a, long long *v);
int arg_ll_range(client *c, const garg *a, long long *v, long long min, long long max, const char *err);
int arg_double(client *c, const garg *a, double *v);
/* Errors that name the command being run (c->cur): wrong arity, unknown
 * subcommand (with the parent's "Try X HELP."). */
/* A client goes away (or RESET ends MONITOR): forget its blocking,
 * subscriptions, MONITOR slot, transaction and ACL state. */
void cmd_client_gone(client *c);
void reply_err_arity(client *c);
void reply_err_subcommand(client *c);
#endif
