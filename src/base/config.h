/* config.h -- the one configuration table: flags, config file, CONFIG GET/SET
 * and INFO read the same entries. Values live in the global `cfg`, in the
 * storage a module bound (config_bind_*), or in the table.
 *
 * Configuration is base/: it names no module above it. A module that acts on
 * a directive registers a hook; one that keeps a directive's value binds its
 * storage. Both happen at start-up, before workers run. */
#ifndef GOBLIN_BASE_CONFIG_H
#define GOBLIN_BASE_CONFIG_H
#include <stddef.h>
#include <stdint.h>

typedef struct goblin_config {
    /* network */
    int port;
    char *bind;               /* space-separated, "-" prefix = optional */
    int protected_mode;
    int tcp_backlog;
    int timeout;              /* seconds, 0 = never */
    int tcp_keepalive;
    int maxclients;
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    /* server */
    int cores;
    int io_threads;           /* a Redis config's io-threads: workers when cores is left at 1 */
    int databases;
    int daemonize;
    char *pidfile;
    char *logfile;
    int loglevel;             /* 0 debug, 1 verbose, 2 notice, 3 warning */
    int syslog_enabled;       /* log lines go to syslog(3) too */
    char *syslog_ident;
    int syslog_facility;      /* 0 user, 1-8 local0-local7 */
    int hz;
    char *requirepass;
    char *dir;
    char *dbfilename;
    char *save;               /* "" when no save points */
    long long maxmemory;
    int maxmemory_policy;
    int maxmemory_samples;
    int active_expire;        /* DEBUG SET-ACTIVE-EXPIRE */
    int active_expire_effort; /* 1..10, as Redis's */
    long long slowlog_log_slower_than;
    long long slowlog_max_len;
    long long latency_monitor_threshold;
    int latency_tracking;     /* per-command latency histograms */
    char *latency_tracking_info_percentiles;
    char *notify_keyspace_events;
    /* encodings (honoured by the data types) */
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long zset_max_listpack_entries, zset_max_listpack_value;
    long long set_max_intset_entries, set_max_listpack_entries, set_max_listpack_value;
    long long list_max_listpack_size;
    long long list_compress_depth;
    long long stream_node_max_bytes, stream_node_max_entries;
    long long hll_sparse_max_bytes;
    /* goblin */
    int arena_hugetlb;
    long long arena_chunk;
    char *config_file;        /* absolute path or NULL */
    /* ACLs */
    char *aclfile;
    long long acllog_max_len;
    int acl_pubsub_default;   /* CONFIG_ACL_PUBSUB_* */
    struct config_user *acl_users;  /* "user" directives, in order */
    int nacl_users;
    /* "rename-command FROM TO" directives, in order: renames[2i] FROM,
     * renames[2i+1] TO ("" removes it); applied by the command table. */
    char **renames;
    int nrenames;
    /* client-output-buffer-limit, per CONFIG_OBL_* class; 0 = no limit */
    char *client_output_buffer_limit;
    long long obl_hard[3], obl_soft[3], obl_soft_secs[3];  /* read with config_obl() */
    long long tracking_table_max_keys; /* relaxed atomic: CONFIG SET, read by any thread */
} goblin_config;

enum { CONFIG_ACL_PUBSUB_ALLCHANNELS = 0, CONFIG_ACL_PUBSUB_RESETCHANNELS = 1 };
enum { CONFIG_OBL_NORMAL = 0, CONFIG_OBL_REPLICA = 1, CONFIG_OBL_PUBSUB = 2 };

/* A "user <name> <rules...>" directive (config file or --user flag). */
typedef struct config_user {
    int argc;
    char **argv;              /* name, then the rules */
} config_user;

extern goblin_config cfg;

/* Load defaults, then the config file (argv[1] if it does not start with
 * "--"), then the flags. On error prints a clear message and returns -1. */
int config_load(int argc, char **argv);
/* Before config_load: name's default becomes def (a static string), as if
 * the table said so (CONFIG REWRITE and DEFONLY checks included). 0 ok, -1
 * unknown directive or too late. */
int config_set_default(const char *name, const char *def);
/* CONFIG GET: calls fn for each parameter matching the glob pattern. */
typedef void config_get_fn(void *arg, const char *name, const char *value);
void config_get(const char *pattern, config_get_fn *fn, void *arg);
/* The server changed a start-up setting itself (REPLICAOF changes
 * replicaof): the value CONFIG GET shows and CONFIG REWRITE writes from
 * now on, stored without checks. Takes the config lock. 0, or -1 (no such
 * setting, or a value its type cannot hold). */
int config_note(const char *name, const char *value);
/* CONFIG SET one parameter: 0 ok, -1 with *err set (static or malloc'd into errbuf). */
int config_set(const char *name, const char *value, char *errbuf, size_t errlen);
/* Whether a name is a settable/known parameter (for CONFIG SET validation). */
int config_exists(const char *name);
/* Whether its value is a secret (requirepass, masterauth): CONFIG SET shows
 * it as "(redacted)" to SLOWLOG and MONITOR. */
int config_is_sensitive(const char *name);
/* Whether a setting is fixed at start-up (CONFIG SET refuses it). */
int config_is_immutable(const char *name);
/* Whether CONFIG SET may change it only as enable-protected-configs allows
 * (dir, dbfilename: where the server writes files). */
int config_is_protected(const char *name);
/* CONFIG SET of name is refused with -LOADING while a dataset loads, as
 * Redis's DENY_LOADING_CONFIG (dir, appendonly, repl-diskless-load). */
int config_denied_while_loading(const char *name);
/* A directive that stops the start, as Redis reports it on stderr: the
 * line's number (0: none; the flags' lines go on from the config file's,
 * as in Redis), the line, and why. */
void config_report_error(int lineno, const char *line, const char *err);
/* CONFIG REWRITE: the config file keeps its comments and unknown lines,
 * its settings' lines get their current values, and the settings that
 * differ from their default are appended (force_all: every setting, as
 * Redis's DEBUG CONFIG-REWRITE-FORCE-ALL). Config lock held. */
int config_rewrite(int force_all, char *errbuf, size_t errlen);
/* Parse "256K", "2M", "4G", "1gb" into bytes. */
int config_parse_size(const char *s, long long *out);
/* CONFIG GET/SET/REWRITE and every read of a setting's text serialize on
 * this lock: setting a string parameter frees its previous value. */
void config_lock(void);
void config_unlock(void);
/* The value CONFIG GET shows for name (malloc'd, caller frees), NULL when
 * there is none; takes the lock. */
char *config_value(const char *name);
/* The same with the lock already held. */
char *config_value_locked(const char *name);

/* A directive's owner checks and follows its value. Both members optional. */
typedef struct config_hook {
    /* A new value, before it is stored: -1 refuses it with err set (the old
     * value stays), 0 accepts it as given, 1 accepts the normalised form
     * written into norm (normlen bytes) instead. */
    int (*check)(const char *value, char *norm, size_t normlen, char *err, size_t errlen);
    /* The value was stored (default, config file, flag, CONFIG SET): value
     * is how CONFIG GET shows it. */
    void (*apply)(const char *value);
    /* Settings that take effect together (TLS certificate and key): after a
     * CONFIG SET stored every value it was given, each distinct commit of
     * the directives it set runs once (config_commit); -1 refuses the whole
     * CONFIG SET with err set, and the caller sets the old values back and
     * commits them. Not run for the config file and flags: the owner reads
     * its values once at start-up. */
    int (*commit)(char *err, size_t errlen);
} config_hook;
/* Run the commit hooks of the n directives names (each distinct hook once,
 * in the order of first appearance). 0 ok; -1 with err set to Redis's
 * "CONFIG SET failed (possibly related to argument '<name>') - <why>" and a
 * log line naming the first directive of the failed hook. */
int config_commit(const char *const *names, int n, char *err, size_t errlen);
/* Attach hook (static storage; one per directive, a later one replaces it)
 * to the directive name (or alias). Once values are loaded, apply runs at
 * once with the current value, so an owner registering after config_load()
 * still follows what the config file and the flags set; check only judges
 * values given after it is registered, so an owner with one registers
 * before config_load(). 0 ok, -1 unknown directive. */
int config_register_hook(const char *name, const config_hook *hook);

/* A module keeps the value of directive name itself: the table stores it
 * there from now on (a value already loaded moves there). The storage's C
 * type must be the directive's: int for yes/no, int and enum directives,
 * long long for 64-bit integers and sizes, char * (NULL or malloc'd) for
 * strings. 0 ok, -1 unknown directive or another type. */
int config_bind_int(const char *name, int *storage);
int config_bind_ll(const char *name, long long *storage);
int config_bind_string(const char *name, char **storage);
/* client-output-buffer-limit of class cl (CONFIG_OBL_*), as one thread
 * reads it while CONFIG SET may change it on another. */
static inline void config_obl(int cl, long long *hard, long long *soft, long long *secs) {
    *hard = __atomic_load_n(&cfg.obl_hard[cl], __ATOMIC_RELAXED);
    *soft = __atomic_load_n(&cfg.obl_soft[cl], __ATOMIC_RELAXED);
    *secs = __atomic_load_n(&cfg.obl_soft_secs[cl], __ATOMIC_RELAXED);
}

#endif
