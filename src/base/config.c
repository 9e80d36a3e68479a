/* config.c -- one table drives every way a setting is given or read:
 * command-line flags (--name value), the config file (redis.conf syntax),
 * CONFIG GET/SET/REWRITE and INFO. Each entry names its storage, its type,
 * its default, and whether it is mutable at run time. Goblin flags that
 * arrive with a later capability are in the table already and refuse with
 * "not supported yet" so nothing is ever silently ignored.
 *
 * base/ knows nothing above it. A module above that acts on a directive
 * attaches a hook to it (config_register_hook: check and normalise a new
 * value, follow the stored one), and a module that keeps a directive's value
 * itself binds its storage (config_bind_*); until then, and in programs that
 * never bind it, the value lives in the table entry. */
#include "base/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/log.h"
#include "util/strutil.h"

goblin_config cfg;

enum { T_BOOL, T_INT, T_LL, T_SIZE, T_GSIZE, T_STRING, T_ENUM };
enum {
    F_IMMUTABLE = 1,     /* start-up only */
    F_NOTYET = 2,        /* refused: arrives with a later capability */
    F_FLAGONLY = 4,      /* boolean goblin flag that may appear without a value */
    F_SENSITIVE = 8,     /* never shown in logs */
    F_MULTIARG = 16,     /* value is the rest of the line (save, bind) */
    F_PASSTHRU = 32,     /* Redis directive stored for CONFIG GET; no effect here */
    F_DEFONLY = 64,      /* only the default value is accepted; notyet says why */
    F_NOPLAN = 128,      /* with F_DEFONLY: notyet is a reason, not a coming capability */
    F_OCTAL = 256,       /* T_INT given and shown in octal (unixsocketperm) */
    F_HIDDEN = 512,      /* a Redis test knob: CONFIG GET shows it only by its exact name */
    F_PROTECTED = 1024,  /* CONFIG SET only as enable-protected-configs allows (dir, dbfilename) */
    F_OMIT_EMPTY = 2048, /* CONFIG REWRITE drops its lines while the value is empty (replicaof) */
    F_ACCUMULATE = 4096, /* F_MULTIARG whose lines at load add up (save); see load_accumulate */
    F_DENY_LOADING = 8192, /* CONFIG SET answers -LOADING during a load (dir, appendonly) */
};

typedef struct config_entry {
    const char *name;
    const char *alias;
    int type;
    int flags;
    void *ptr;            /* int*, long long*, char**; NULL: own, until bound */
    const char *def;
    long long min, max;
    const char *const *enums;
    const char *notyet;   /* which capability brings it */
    const config_hook *hook; /* config_register_hook */
    union {
        int i;
        long long ll;
        char *s;
    } own;                /* the value of an entry without outside storage */
} config_entry;

static const char *const loglevels[] = {"debug", "verbose", "notice", "warning", NULL};
static const char *const acl_pubsub_defaults[] = {"allchannels", "resetchannels", NULL};
static const char *const policies[] = {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                                       "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction", NULL};

static const char *const aof_fsyncs[] = {"no", "always", "everysec", NULL};
static const char *const mirror_clients[] = {"socket", "uring", NULL};
static const char *const nets[] = {"auto", "async", "epoll", NULL};
static const char *const diskless_loads[] = {"disabled", "on-empty-db", "swapdb", NULL};

#define NOTYET_REPL "replication"

static const char *const syslog_facilities[] = {"user",   "local0", "local1", "local2", "local3",
                                                "local4", "local5", "local6", "local7", NULL};
static const char *const supervised_modes[] = {"upstart", "systemd", "auto", "no", NULL};
static const char *const protected_actions[] = {"no", "yes", "local", NULL};
static const char *const sanitize_modes[] = {"no", "yes", "clients", NULL};
static const char *const propagation_error_modes[] = {"ignore", "panic", "panic-on-replicas", NULL};
static const char *const endpoint_types[] = {"ip", "hostname", "unknown-endpoint", NULL};
static const char *const oom_score_modes[] = {"no", "yes", "relative", "absolute", NULL};
/* tls-auth-clients, in the order of base/tls.h TLS_AUTH_*. */
static const char *const tls_auth_modes[] = {"no", "yes", "optional", NULL};

static config_entry table[] = {
    {"port", NULL, T_INT, 0, &cfg.port, "6379", 0, 65535, NULL, NULL},
    {"bind", "listen-address", T_STRING, F_MULTIARG, &cfg.bind, "* -::*", 0, 0, NULL, NULL},
    {"protected-mode", NULL, T_BOOL, 0, &cfg.protected_mode, "yes", 0, 0, NULL, NULL},
    {"tcp-backlog", NULL, T_INT, F_IMMUTABLE, &cfg.tcp_backlog, "511", 0, INT_MAX, NULL, NULL},
    {"timeout", NULL, T_INT, 0, &cfg.timeout, "0", 0, INT_MAX, NULL, NULL},
    {"tcp-keepalive", NULL, T_INT, 0, &cfg.tcp_keepalive, "300", 0, INT_MAX, NULL, NULL},
    {"maxclients", NULL, T_INT, 0, &cfg.maxclients, "10000", 1, INT_MAX, NULL, NULL},
    {"proto-max-bulk-len", NULL, T_SIZE, 0, &cfg.proto_max_bulk_len, "536870912", 1024 * 1024, LLONG_MAX, NULL, NULL},
    {"client-query-buffer-limit", NULL, T_SIZE, 0, &cfg.client_query_buffer_limit, "1073741824", 1024 * 1024,
     LLONG_MAX, NULL, NULL},
    {"cores", NULL, T_INT, F_IMMUTABLE, &cfg.cores, "1", 1, 1024, NULL, NULL},
    {"databases", NULL, T_INT, F_IMMUTABLE, &cfg.databases, "16", 1, 64, NULL, NULL},
    {"daemonize", NULL, T_BOOL, F_IMMUTABLE, &cfg.daemonize, "no", 0, 0, NULL, NULL},
    {"pidfile", NULL, T_STRING, F_IMMUTABLE, &cfg.pidfile, "", 0, 0, NULL, NULL},
    {"logfile", NULL, T_STRING, F_IMMUTABLE, &cfg.logfile, "", 0, 0, NULL, NULL},
    {"loglevel", NULL, T_ENUM, 0, &cfg.loglevel, "notice", 0, 0, loglevels, NULL},
    {"hz", NULL, T_INT, 0, &cfg.hz, "10", INT_MIN, INT_MAX, NULL, NULL},
    {"requirepass", NULL, T_STRING, F_SENSITIVE, &cfg.requirepass, "", 0, 0, NULL, NULL},
    {"aclfile", NULL, T_STRING, F_IMMUTABLE, &cfg.aclfile, "", 0, 0, NULL, NULL},
    {"acllog-max-len", NULL, T_LL, 0, &cfg.acllog_max_len, "128", 0, LLONG_MAX, NULL, NULL},
    {"acl-pubsub-default", NULL, T_ENUM, 0, &cfg.acl_pubsub_default, "resetchannels", 0, 0, acl_pubsub_defaults,
     NULL},
    {"dir", NULL, T_STRING, F_PROTECTED | F_DENY_LOADING, &cfg.dir, "", 0, 0, NULL, NULL},
    {"dbfilename", NULL, T_STRING, F_PROTECTED, &cfg.dbfilename, "dump.rdb", 0, 0, NULL, NULL},
    {"save", NULL, T_STRING, F_MULTIARG | F_ACCUMULATE, &cfg.save, "3600 1 300 100 60 10000", 0, 0, NULL, NULL},
    {"maxmemory", NULL, T_SIZE, 0, &cfg.maxmemory, "0", 0, LLONG_MAX, NULL, NULL},
    {"maxmemory-policy", NULL, T_ENUM, 0, &cfg.maxmemory_policy, "noeviction", 0, 0, policies, NULL},
    {"maxmemory-samples", NULL, T_INT, 0, &cfg.maxmemory_samples, "5", 1, 64, NULL, NULL},
    {"slowlog-log-slower-than", NULL, T_LL, 0, &cfg.slowlog_log_slower_than, "10000", -1, LLONG_MAX, NULL, NULL},
    {"slowlog-max-len", NULL, T_LL, 0, &cfg.slowlog_max_len, "128", 0, LONG_MAX, NULL, NULL},
    {"latency-monitor-threshold", NULL, T_LL, 0, &cfg.latency_monitor_threshold, "0", 0, LLONG_MAX, NULL, NULL},
    {"notify-keyspace-events", NULL, T_STRING, 0, &cfg.notify_keyspace_events, "", 0, 0, NULL, NULL},
    {"hash-max-listpack-entries", "hash-max-ziplist-entries", T_LL, 0, &cfg.hash_max_listpack_entries, "512", 0,
     LLONG_MAX, NULL, NULL},
    {"hash-max-listpack-value", "hash-max-ziplist-value", T_LL, 0, &cfg.hash_max_listpack_value, "64", 0,
     LLONG_MAX, NULL, NULL},
    {"zset-max-listpack-entries", "zset-max-ziplist-entries", T_LL, 0, &cfg.zset_max_listpack_entries, "128", 0,
     LLONG_MAX, NULL, NULL},
    {"zset-max-listpack-value", "zset-max-ziplist-value", T_LL, 0, &cfg.zset_max_listpack_value, "64", 0,
     LLONG_MAX, NULL, NULL},
    {"set-max-intset-entries", NULL, T_LL, 0, &cfg.set_max_intset_entries, "512", 0, LLONG_MAX, NULL, NULL},
    {"list-max-listpack-size", "list-max-ziplist-size", T_LL, 0, &cfg.list_max_listpack_size, "-2", LLONG_MIN,
     LLONG_MAX, NULL, NULL},
    {"list-compress-depth", NULL, T_LL, 0, &cfg.list_compress_depth, "0", 0, LLONG_MAX, NULL, NULL},
    /* Goblin flags (DESIGN.md). */
    {"arena-hugetlb", NULL, T_BOOL, F_IMMUTABLE | F_FLAGONLY, &cfg.arena_hugetlb, "no", 0, 0, NULL, NULL},
    {"arena-chunk", NULL, T_GSIZE, F_IMMUTABLE, &cfg.arena_chunk, "2M", 2 << 20, 1LL << 30, NULL, NULL},
    /* The object store's settings: it keeps them and binds their storage. */
    {"memory", NULL, T_GSIZE, F_IMMUTABLE, NULL, "0", 0, LLONG_MAX, NULL, NULL},
    {"sub-memory", NULL, T_GSIZE, F_IMMUTABLE, NULL, "0", 0, LLONG_MAX, NULL, NULL},
    {"small-memory", NULL, T_GSIZE, F_IMMUTABLE, NULL, "0", 0, LLONG_MAX, NULL, NULL},
    {"small-sub-memory", NULL, T_GSIZE, F_IMMUTABLE, NULL, "0", 0, LLONG_MAX, NULL, NULL},
    {"block", NULL, T_GSIZE, F_IMMUTABLE, NULL, "2M", 0, LLONG_MAX, NULL, NULL},
    {"ram-head", NULL, T_GSIZE, F_IMMUTABLE, NULL, "256K", 0, LLONG_MAX, NULL, NULL},
    {"io-chunk", NULL, T_GSIZE, F_IMMUTABLE, NULL, "256K", 0, LLONG_MAX, NULL, NULL},
    {"write-io-chunk", NULL, T_GSIZE, F_IMMUTABLE, NULL, "1M", 0, LLONG_MAX, NULL, NULL},
    {"ssd-dir", NULL, T_STRING, F_IMMUTABLE, NULL, "", 0, 0, NULL, NULL},
    {"numa", NULL, T_LL, F_IMMUTABLE, NULL, "-1", -1, 1024, NULL, NULL},
    {"no-numa-promotion", NULL, T_BOOL, F_IMMUTABLE | F_FLAGONLY, NULL, "no", 0, 0, NULL, NULL},
    {"perverse", NULL, T_BOOL, F_IMMUTABLE | F_FLAGONLY, NULL, "no", 0, 0, NULL, NULL},
    /* Promotion score decay period in ms (the seed: once a minute); tests
     * shorten it. Read by the coordinator at every wait, so CONFIG SET works. */
    {"numa-decay-interval", NULL, T_LL, 0, NULL, "60000", 1, 86400000LL, NULL, NULL},
    /* The HTTP cache front-end (net/http_proto.c, net/mirror.c; docs/http.md). */
    {"http-port", NULL, T_LL, F_IMMUTABLE, NULL, "0", 0, 65535, NULL, NULL},
    /* HTTPS on its own port, through the TLS context of tls-port (base/tls.c
     * binds it and the memcache one; docs/tls.md). */
    {"http-tls-port", NULL, T_LL, F_IMMUTABLE, NULL, "0", 0, 65535, NULL, NULL},
    {"http-admin", NULL, T_BOOL, F_IMMUTABLE | F_FLAGONLY, NULL, "no", 0, 0, NULL, NULL},
    {"mirror-timeout", NULL, T_LL, F_IMMUTABLE, NULL, "10000", 1, 86400000LL, NULL, NULL},
    /* The memcache front-end (net/mc_proto.c, cmd/mcache/): its port on
     * the bind addresses (0: none) and the largest item a set stores. */
    {"no-memcache", NULL, T_BOOL, F_IMMUTABLE | F_FLAGONLY, NULL, "no", 0, 0, NULL, NULL},
    {"memcache-port", NULL, T_LL, F_IMMUTABLE, NULL, "11211", 0, 65535, NULL, NULL},
    {"memcache-tls-port", NULL, T_LL, F_IMMUTABLE, NULL, "0", 0, 65535, NULL, NULL},
    {"memcache-max-item-size", NULL, T_GSIZE, 0, NULL, "1M", 1024, 1LL << 30, NULL, NULL},
    {"mirror", NULL, T_STRING, F_IMMUTABLE, NULL, "", 0, 0, NULL, NULL},
    {"mirror-client", NULL, T_ENUM, F_IMMUTABLE, NULL, "socket", 0, 0, mirror_clients, NULL},
    {"net", NULL, T_ENUM, F_IMMUTABLE, NULL, "auto", 0, 0, nets, NULL},
    /* Redis directives. Each one works, or accepts only its default value
     * (F_DEFONLY: any other is refused with the reason in the entry) until
     * the capability that gives it meaning arrives. docs/configuration.md
     * lists them all with their status. */
    {"appendonly", NULL, T_BOOL, F_DENY_LOADING, NULL, "no", 0, 0, NULL, NULL},
    {"appendfilename", NULL, T_STRING, F_IMMUTABLE, NULL, "appendonly.aof", 0, 0, NULL, NULL},
    {"appendfsync", NULL, T_ENUM, 0, NULL, "everysec", 0, 0, aof_fsyncs, NULL},
    {"aof-load-truncated", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"no-appendfsync-on-rewrite", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"auto-aof-rewrite-percentage", NULL, T_INT, 0, NULL, "100", 0, INT_MAX, NULL, NULL},
    {"auto-aof-rewrite-min-size", NULL, T_SIZE, 0, NULL, "64mb", 0, LLONG_MAX, NULL, NULL},
    {"aof-timestamp-enabled", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"aof-rewrite-incremental-fsync", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"rdb-save-incremental-fsync", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"always-show-logo", NULL, T_BOOL, F_IMMUTABLE, NULL, "no", 0, 0, NULL, NULL},
    {"set-proc-title", NULL, T_BOOL, F_IMMUTABLE, NULL, "yes", 0, 0, NULL, NULL}, /* base/proctitle.c */
    {"stop-writes-on-bgsave-error", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"rdbcompression", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"rdbchecksum", NULL, T_BOOL, F_IMMUTABLE, NULL, "yes", 0, 0, NULL, NULL},
    {"rdb-key-save-delay", NULL, T_INT, F_HIDDEN, NULL, "0", INT_MIN, INT_MAX, NULL, NULL},
    {"use-exit-on-panic", NULL, T_BOOL, F_HIDDEN, NULL, "no", 0, 0, NULL, NULL}, /* base/crash.c */
    {"key-load-delay", NULL, T_INT, F_HIDDEN, NULL, "0", INT_MIN, INT_MAX, NULL, NULL},
    /* Redis serves its clients between chunks of a load this large; Goblin's
     * workers answer (-LOADING) throughout, so the value changes nothing. */
    {"loading-process-events-interval-bytes", NULL, T_LL, F_HIDDEN, NULL, "2097152", 1024, INT_MAX, NULL, NULL},
    /* The lazyfree switches choose which thread returns memory, never a
     * reply: -user-del and -user-flush hand large values and flushed
     * databases to the lazy-free thread (db/lazyfree.c); -expire and
     * -eviction pick DEL or UNLINK in the write stream. */
    {"lazyfree-lazy-eviction", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"lazyfree-lazy-expire", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"lazyfree-lazy-server-del", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"lazyfree-lazy-user-del", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"lazyfree-lazy-user-flush", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"activerehashing", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"supervised", NULL, T_ENUM, F_IMMUTABLE, NULL, "no", 0, 0, supervised_modes, NULL},
    {"unixsocket", NULL, T_STRING, F_IMMUTABLE, NULL, "", 0, 0, NULL, NULL},
    {"unixsocketperm", NULL, T_INT, F_IMMUTABLE | F_OCTAL, NULL, "0", 0, 0777, NULL, NULL},
    {"replica-serve-stale-data", "slave-serve-stale-data", T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"replica-read-only", "slave-read-only", T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"replicaof", "slaveof", T_STRING, F_IMMUTABLE | F_MULTIARG | F_OMIT_EMPTY, NULL, "", 0, 0, NULL, NULL},
    {"repl-backlog-size", NULL, T_SIZE, 0, NULL, "1mb", 1, LLONG_MAX, NULL, NULL},
    {"repl-backlog-ttl", NULL, T_LL, 0, NULL, "3600", 0, LONG_MAX, NULL, NULL},
    {"repl-ping-replica-period", "repl-ping-slave-period", T_INT, 0, NULL, "10", 1, INT_MAX, NULL, NULL},
    {"repl-timeout", NULL, T_INT, 0, NULL, "60", 1, INT_MAX, NULL, NULL},
    {"repl-diskless-sync", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"repl-diskless-sync-delay", NULL, T_INT, 0, NULL, "5", 0, INT_MAX, NULL, NULL},
    {"repl-diskless-sync-max-replicas", NULL, T_INT, 0, NULL, "0", 0, INT_MAX, NULL, NULL},
    {"repl-diskless-load", NULL, T_ENUM, F_DENY_LOADING, NULL, "disabled", 0, 0, diskless_loads, NULL},
    {"min-replicas-to-write", "min-slaves-to-write", T_INT, 0, NULL, "0", 0, INT_MAX, NULL, NULL},
    {"min-replicas-max-lag", "min-slaves-max-lag", T_INT, 0, NULL, "10", 0, INT_MAX, NULL, NULL},
    {"replica-priority", "slave-priority", T_INT, 0, NULL, "100", 0, INT_MAX, NULL, NULL},
    {"replica-announce-ip", "slave-announce-ip", T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"replica-announce-port", "slave-announce-port", T_INT, 0, NULL, "0", 0, 65535, NULL, NULL},
    {"replica-lazy-flush", "slave-lazy-flush", T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"replica-ignore-maxmemory", "slave-ignore-maxmemory", T_BOOL, F_DEFONLY, NULL, "yes", 0, 0, NULL,
     "a replica never evicts: its primary's DELs keep it equal"},
    {"client-output-buffer-limit", NULL, T_STRING, F_MULTIARG, &cfg.client_output_buffer_limit,
     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", 0, 0, NULL, NULL},
    {"busy-reply-threshold", "lua-time-limit", T_LL, 0, NULL, "5000", 0, LONG_MAX, NULL, NULL},
    /* On by default, unlike Redis: the compaction is incremental and cheap
     * (docs/configuration.md); 'no' stops it. */
    {"activedefrag", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"jemalloc-bg-thread", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"dynamic-hz", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"aof-use-rdb-preamble", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"rdb-del-sync-files", NULL, T_BOOL, F_DEFONLY, NULL, "no", 0, 0, NULL, NOTYET_REPL},
    {"lfu-log-factor", NULL, T_INT, 0, NULL, "10", 0, INT_MAX, NULL, NULL},
    {"lfu-decay-time", NULL, T_INT, 0, NULL, "1", 0, INT_MAX, NULL, NULL},
    {"stream-node-max-bytes", NULL, T_SIZE, 0, &cfg.stream_node_max_bytes, "4096", 0, LLONG_MAX, NULL, NULL},
    {"stream-node-max-entries", NULL, T_LL, 0, &cfg.stream_node_max_entries, "100", 0, LLONG_MAX, NULL, NULL},
    {"tracking-table-max-keys", NULL, T_LL, 0, &cfg.tracking_table_max_keys, "1000000", 0, LONG_MAX, NULL, NULL},
    {"hll-sparse-max-bytes", NULL, T_SIZE, 0, &cfg.hll_sparse_max_bytes, "3000", 0, LLONG_MAX, NULL, NULL},
    {"syslog-enabled", NULL, T_BOOL, F_IMMUTABLE, &cfg.syslog_enabled, "no", 0, 0, NULL, NULL},
    {"enable-debug-command", NULL, T_ENUM, F_IMMUTABLE, NULL, "no", 0, 0, protected_actions, NULL},
    {"appenddirname", NULL, T_STRING, F_IMMUTABLE, NULL, "appendonlydir", 0, 0, NULL, NULL},
    {"io-threads", NULL, T_INT, F_IMMUTABLE, &cfg.io_threads, "1", 1, 128, NULL, NULL},
    {"oom-score-adj", NULL, T_ENUM, 0, NULL, "no", 0, 0, oom_score_modes, NULL}, /* base/oomscore.c */
    {"crash-log-enabled", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL}, /* base/crash.c */
    {"enable-protected-configs", NULL, T_ENUM, F_IMMUTABLE, NULL, "no", 0, 0, protected_actions, NULL},
    {"enable-module-command", NULL, T_ENUM, F_IMMUTABLE | F_DEFONLY | F_NOPLAN, NULL, "no", 0, 0,
     protected_actions, "Goblin loads no modules"},
    {"maxmemory-clients", NULL, T_STRING, 0, NULL, "0", 0, 0, NULL, NULL}, /* session/evict.c */
    {"maxmemory-eviction-tenacity", NULL, T_INT, F_DEFONLY | F_NOPLAN, NULL, "10", 0, 100, NULL,
     "Goblin's eviction has no time budget to tune"},
    /* The rest of Redis 7.0's directives (a stock redis.conf names some of
     * them): what they ask is done, or only the default is accepted. */
    {"disable-thp", NULL, T_BOOL, F_IMMUTABLE, NULL, "yes", 0, 0, NULL, NULL},
    {"repl-disable-tcp-nodelay", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"replica-announced", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"sanitize-dump-payload", NULL, T_ENUM, 0, NULL, "no", 0, 0, sanitize_modes, NULL},
    {"proc-title-template", NULL, T_STRING, 0, NULL, "{title} {listen-addr} {server-mode}", 0, 0, NULL,
     NULL}, /* base/proctitle.c */
    {"oom-score-adj-values", NULL, T_STRING, F_MULTIARG, NULL, "0 200 800", 0, 0, NULL, NULL}, /* base/oomscore.c */
    {"crash-memcheck-enabled", NULL, T_BOOL, F_DEFONLY | F_NOPLAN, NULL, "no", 0, 0, NULL,
     "Goblin's bug report runs no memory test (Redis's default is yes)"},
    {"active-expire-effort", NULL, T_INT, 0, &cfg.active_expire_effort, "1", 1, 10, NULL, NULL},
    {"active-defrag-ignore-bytes", NULL, T_SIZE, F_DEFONLY | F_NOPLAN, NULL, "104857600", 1, LLONG_MAX, NULL,
     "the compaction keeps its own thresholds and budget (activedefrag turns it on and off)"},
    {"active-defrag-threshold-lower", NULL, T_INT, F_DEFONLY | F_NOPLAN, NULL, "10", 0, 1000, NULL,
     "the compaction keeps its own thresholds and budget (activedefrag turns it on and off)"},
    {"active-defrag-threshold-upper", NULL, T_INT, F_DEFONLY | F_NOPLAN, NULL, "100", 0, 1000, NULL,
     "the compaction keeps its own thresholds and budget (activedefrag turns it on and off)"},
    {"active-defrag-cycle-min", NULL, T_INT, F_DEFONLY | F_NOPLAN, NULL, "1", 1, 99, NULL,
     "the compaction keeps its own thresholds and budget (activedefrag turns it on and off)"},
    {"active-defrag-cycle-max", NULL, T_INT, F_DEFONLY | F_NOPLAN, NULL, "25", 1, 99, NULL,
     "the compaction keeps its own thresholds and budget (activedefrag turns it on and off)"},
    {"active-defrag-max-scan-fields", NULL, T_LL, F_DEFONLY | F_NOPLAN, NULL, "1000", 1, LONG_MAX, NULL,
     "the compaction keeps its own thresholds and budget (activedefrag turns it on and off)"},
    {"aof-disable-auto-gc", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL}, /* persist/aof.c */
    {"bind-source-addr", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"ignore-warnings", NULL, T_STRING, F_DEFONLY | F_NOPLAN, NULL, "", 0, 0, NULL,
     "Goblin prints none of the warnings it silences"},
    {"io-threads-do-reads", NULL, T_BOOL, F_IMMUTABLE, NULL, "no", 0, 0, NULL, NULL},
    {"propagation-error-behavior", NULL, T_ENUM, 0, NULL, "ignore", 0, 0, propagation_error_modes, NULL},
    {"socket-mark-id", NULL, T_LL, F_DEFONLY | F_NOPLAN, NULL, "0", 0, UINT32_MAX, NULL,
     "Goblin sets no SO_MARK on its sockets"},
    {"syslog-ident", NULL, T_STRING, F_IMMUTABLE, &cfg.syslog_ident, "redis", 0, 0, NULL, NULL},
    {"syslog-facility", NULL, T_ENUM, F_IMMUTABLE, &cfg.syslog_facility, "local0", 0, 0, syslog_facilities, NULL},
    {"server_cpulist", NULL, T_STRING, F_IMMUTABLE | F_DEFONLY | F_NOPLAN, NULL, "", 0, 0, NULL,
     "Goblin does not pin its threads (taskset or numactl do)"},
    {"bio_cpulist", NULL, T_STRING, F_IMMUTABLE | F_DEFONLY | F_NOPLAN, NULL, "", 0, 0, NULL,
     "Goblin does not pin its threads (taskset or numactl do)"},
    {"aof_rewrite_cpulist", NULL, T_STRING, F_IMMUTABLE | F_DEFONLY | F_NOPLAN, NULL, "", 0, 0, NULL,
     "Goblin does not pin its threads (taskset or numactl do)"},
    {"bgsave_cpulist", NULL, T_STRING, F_IMMUTABLE | F_DEFONLY | F_NOPLAN, NULL, "", 0, 0, NULL,
     "Goblin does not pin its threads (taskset or numactl do)"},
    {"replica-ignore-disk-write-errors", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"shutdown-timeout", NULL, T_INT, 0, NULL, "10", 0, INT_MAX, NULL, NULL},
    {"shutdown-on-sigint", NULL, T_STRING, F_MULTIARG, NULL, "default", 0, 0, NULL, NULL}, /* main.c */
    {"shutdown-on-sigterm", NULL, T_STRING, F_MULTIARG, NULL, "default", 0, 0, NULL, NULL}, /* main.c */
    {"latency-tracking", NULL, T_BOOL, 0, &cfg.latency_tracking, "yes", 0, 0, NULL, NULL},
    {"latency-tracking-info-percentiles", NULL, T_STRING, F_MULTIARG, &cfg.latency_tracking_info_percentiles,
     "50 99 99.9", 0, 0, NULL, NULL},
    /* Redis Cluster (cmd/cluster/): read through config_value, followed by
     * the cluster's hooks. */
    {"cluster-enabled", NULL, T_BOOL, F_IMMUTABLE, NULL, "no", 0, 0, NULL, NULL},
    {"cluster-config-file", NULL, T_STRING, F_IMMUTABLE, NULL, "nodes.conf", 0, 0, NULL, NULL},
    {"cluster-node-timeout", NULL, T_LL, 0, NULL, "15000", 0, LLONG_MAX, NULL, NULL},
    {"cluster-port", NULL, T_INT, F_IMMUTABLE, NULL, "0", 0, 65535, NULL, NULL},
    {"cluster-announce-ip", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"cluster-announce-port", NULL, T_INT, 0, NULL, "0", 0, 65535, NULL, NULL},
    {"cluster-announce-bus-port", NULL, T_INT, 0, NULL, "0", 0, 65535, NULL, NULL},
    {"cluster-announce-tls-port", NULL, T_INT, 0, NULL, "0", 0, 65535, NULL, NULL},
    {"cluster-announce-hostname", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"cluster-preferred-endpoint-type", NULL, T_ENUM, 0, NULL, "ip", 0, 0, endpoint_types, NULL},
    {"cluster-require-full-coverage", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"cluster-allow-reads-when-down", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"cluster-allow-pubsubshard-when-down", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"cluster-replica-validity-factor", "cluster-slave-validity-factor", T_INT, 0, NULL, "10", 0, INT_MAX, NULL,
     NULL},
    {"cluster-migration-barrier", NULL, T_INT, 0, NULL, "1", 0, INT_MAX, NULL, NULL},
    {"cluster-allow-replica-migration", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"cluster-replica-no-failover", "cluster-slave-no-failover", T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"cluster-link-sendbuf-limit", NULL, T_SIZE, 0, NULL, "0", 0, LLONG_MAX, NULL, NULL},
    /* Replication credentials: sensitive, as in Redis. */
    {"masterauth", NULL, T_STRING, F_SENSITIVE, NULL, "", 0, 0, NULL, NULL},
    {"masteruser", NULL, T_STRING, F_SENSITIVE, NULL, "", 0, 0, NULL, NULL},
    /* TLS (base/tls.c binds them). The certificate, key, CA and cipher
     * settings take effect together once a CONFIG SET stored them all
     * (base/tls.c's commit hook rebuilds the context; a failure keeps the
     * old one and restores the old values). */
    {"tls-port", NULL, T_INT, 0, NULL, "0", 0, 65535, NULL, NULL},
    {"tls-cert-file", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-key-file", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-key-file-pass", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-client-cert-file", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-client-key-file", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-client-key-file-pass", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-dh-params-file", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-ca-cert-file", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-ca-cert-dir", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-auth-clients", NULL, T_ENUM, 0, NULL, "yes", 0, 0, tls_auth_modes, NULL},
    {"tls-protocols", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-ciphers", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-ciphersuites", NULL, T_STRING, 0, NULL, "", 0, 0, NULL, NULL},
    {"tls-prefer-server-ciphers", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"tls-session-caching", NULL, T_BOOL, 0, NULL, "yes", 0, 0, NULL, NULL},
    {"tls-session-cache-size", NULL, T_INT, 0, NULL, "20480", 0, INT_MAX, NULL, NULL},
    {"tls-session-cache-timeout", NULL, T_INT, 0, NULL, "300", 0, INT_MAX, NULL, NULL},
    {"tls-replication", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
    {"tls-cluster", NULL, T_BOOL, 0, NULL, "no", 0, 0, NULL, NULL},
};

#define NTABLE (sizeof(table) / sizeof(table[0]))

static config_entry *find_entry(const char *name) {
    for (size_t i = 0; i < NTABLE; i++)
        if (strcasecmp(table[i].name, name) == 0 || (table[i].alias && strcasecmp(table[i].alias, name) == 0))
            return &table[i];
    return NULL;
}

int config_exists(const char *name) { return find_entry(name) != NULL; }

int config_is_sensitive(const char *name) {
    const config_entry *e = find_entry(name);
    return e && (e->flags & F_SENSITIVE);
}

int config_is_immutable(const char *name) {
    const config_entry *e = find_entry(name);
    return e && (e->flags & F_IMMUTABLE);
}

int config_is_protected(const char *name) {
    const config_entry *e = find_entry(name);
    return e && (e->flags & F_PROTECTED);
}

int config_denied_while_loading(const char *name) {
    const config_entry *e = find_entry(name);
    return e && (e->flags & F_DENY_LOADING);
}

/* Redis memtoll: k=1000, kb=1024, m, mb, g, gb. Goblin sizes (binary=1):
 * K/M/G mean KiB/MiB/GiB, as the seeds write them (256K, 2M, 4G). */
static int parse_size(const char *s, long long *out, int binary) {
    size_t n = strlen(s);
    if (n == 0) return -1;
    size_t i = 0;
    if (s[0] == '-') i = 1;
    while (i < n && isdigit((unsigned char)s[i])) i++;
    if (i == 0 || (i == 1 && s[0] == '-')) return -1;
    const char *u = s + i;
    long long mul = 1;
    if (!*u || strcasecmp(u, "b") == 0) mul = 1;
    else if (strcasecmp(u, "k") == 0) mul = binary ? 1024 : 1000;
    else if (strcasecmp(u, "kb") == 0 || strcasecmp(u, "kib") == 0) mul = 1024;
    else if (strcasecmp(u, "m") == 0) mul = binary ? 1024 * 1024 : 1000 * 1000;
    else if (strcasecmp(u, "mb") == 0 || strcasecmp(u, "mib") == 0) mul = 1024 * 1024;
    else if (strcasecmp(u, "g") == 0) mul = binary ? 1024LL * 1024 * 1024 : 1000LL * 1000 * 1000;
    else if (strcasecmp(u, "gb") == 0 || strcasecmp(u, "gib") == 0) mul = 1024LL * 1024 * 1024;
    else return -1;
    long long v;
    if (!str_to_ll(s, i, &v)) return -1;
    if (v != 0 && (v > LLONG_MAX / mul || v < LLONG_MIN / mul)) return -1;
    *out = v * mul;
    return 0;
}

int config_parse_size(const char *s, long long *out) { return parse_size(s, out, 1); }

/* client-output-buffer-limit "<class> <hard> <soft> <seconds> ...": the
 * classes given change, the others keep their limits; the stored string
 * always lists all three, as CONFIG GET shows it. */
static int obl_set(const char *v, char *err, size_t errlen) {
    static const char *const classes[] = {"normal", "slave", "pubsub"};
    long long hard[3], soft[3], secs[3];
    memcpy(hard, cfg.obl_hard, sizeof(hard));
    memcpy(soft, cfg.obl_soft, sizeof(soft));
    memcpy(secs, cfg.obl_soft_secs, sizeof(secs));
    char *copy = strdup(v), *save = NULL, *w[64];
    int n = 0;
    for (char *t = strtok_r(copy, " ", &save); t && n < 64; t = strtok_r(NULL, " ", &save)) w[n++] = t;
    int rc = 0;
    if (n % 4) {
        snprintf(err, errlen, "Wrong number of arguments in buffer limit configuration.");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i += 4) {
        int cl = strcasecmp(w[i], "normal") == 0                                      ? CONFIG_OBL_NORMAL
                 : strcasecmp(w[i], "slave") == 0 || strcasecmp(w[i], "replica") == 0 ? CONFIG_OBL_REPLICA
                 : strcasecmp(w[i], "pubsub") == 0                                     ? CONFIG_OBL_PUBSUB
                                                                                       : -1;
        if (cl < 0) {
            snprintf(err, errlen, "Invalid client class specified in buffer limit configuration.");
            rc = -1;
            break;
        }
        long long h, so, se;
        if (parse_size(w[i + 1], &h, 0) != 0 || parse_size(w[i + 2], &so, 0) != 0 ||
            !str_to_ll(w[i + 3], strlen(w[i + 3]), &se) || h < 0 || so < 0 || se < 0) {
            snprintf(err, errlen, "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
            rc = -1;
            break;
        }
        hard[cl] = h;
        soft[cl] = so;
        secs[cl] = se;
    }
    free(copy);
    if (rc) return rc;
    /* Workers read the limits while they serve (config_obl): relaxed
     * atomic stores, one value at a time. */
    for (int cl = 0; cl < 3; cl++) {
        __atomic_store_n(&cfg.obl_hard[cl], hard[cl], __ATOMIC_RELAXED);
        __atomic_store_n(&cfg.obl_soft[cl], soft[cl], __ATOMIC_RELAXED);
        __atomic_store_n(&cfg.obl_soft_secs[cl], secs[cl], __ATOMIC_RELAXED);
    }
    char buf[256];
    size_t len = 0;
    for (int cl = 0; cl < 3; cl++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s %lld %lld %lld", cl ? " " : "", classes[cl],
                                hard[cl], soft[cl], secs[cl]);
    free(cfg.client_output_buffer_limit);
    cfg.client_output_buffer_limit = strdup(buf);
    return 0;
}

/* Parse v by the entry's type and store it. */
static int store_value(config_entry *e, const char *v, char *err, size_t errlen) {
    long long n;
    switch (e->type) {
    case T_BOOL:
        if (strcasecmp(v, "yes") == 0) __atomic_store_n((int *)e->ptr, 1, __ATOMIC_RELAXED);
        else if (strcasecmp(v, "no") == 0) __atomic_store_n((int *)e->ptr, 0, __ATOMIC_RELAXED);
        else {
            snprintf(err, errlen, "argument must be 'yes' or 'no'");
            return -1;
        }
        return 0;
    case T_INT:
    case T_LL:
        if (e->flags & F_OCTAL) {
            char *end;
            errno = 0;
            long o = strtol(v, &end, 8);
            if (!*v || *end || errno || o < e->min || o > e->max) {
                snprintf(err, errlen, "argument must be an octal number between 0 and %llo", (unsigned long long)e->max);
                return -1;
            }
            __atomic_store_n((int *)e->ptr, (int)o, __ATOMIC_RELAXED);
            return 0;
        }
        if (e->ptr == &cfg.hz && str_to_ll(v, strlen(v), &n)) { /* Redis clamps hz to 1..500 */
            if (n > 500) v = "500";
            if (n < 1) v = "1";
        }
        if (!str_to_ll(v, strlen(v), &n)) {
            snprintf(err, errlen, "argument couldn't be parsed into an integer");
            return -1;
        }
        if (n < e->min || n > e->max) {
            snprintf(err, errlen, "argument must be between %lld and %lld inclusive", e->min, e->max);
            return -1;
        }
        /* Relaxed atomic stores: other threads (the cron reads hz) read
         * numbers without a lock. */
        if (e->type == T_LL) __atomic_store_n((long long *)e->ptr, n, __ATOMIC_RELAXED);
        else __atomic_store_n((int *)e->ptr, (int)n, __ATOMIC_RELAXED);
        return 0;
    case T_SIZE:
    case T_GSIZE:
        /* A negative size is no memory value (Redis's memtoull). */
        if (v[0] == '-' || parse_size(v, &n, e->type == T_GSIZE) != 0) {
            snprintf(err, errlen, "argument must be a memory value");
            return -1;
        }
        if (n < e->min || n > e->max) {
            snprintf(err, errlen, "argument must be between %lld and %lld inclusive", e->min, e->max);
            return -1;
        }
        __atomic_store_n((long long *)e->ptr, n, __ATOMIC_RELAXED);
        return 0;
    case T_STRING: {
        if (e->ptr == &cfg.client_output_buffer_limit) return obl_set(v, err, errlen);
        char **sp = e->ptr;
        free(*sp);
        *sp = strdup(v);
        return 0;
    }
    case T_ENUM:
        for (int i = 0; e->enums[i]; i++)
            if (strcasecmp(e->enums[i], v) == 0) {
                *(int *)e->ptr = i;
                return 0;
            }
        snprintf(err, errlen, "argument(s) must be one of the following: ");
        for (int i = 0; e->enums[i]; i++) {
            strncat(err, e->enums[i], errlen - strlen(err) - 1);
            if (e->enums[i + 1]) strncat(err, ", ", errlen - strlen(err) - 1);
        }
        return -1;
    }
    return -1;
}

static void format_value(const config_entry *e, char *buf, size_t len) {
    if (!e->ptr) { /* before the defaults are loaded (a fuzz target, a unit): the default */
        snprintf(buf, len, "%s", e->def ? e->def : "");
        return;
    }
    switch (e->type) {
    case T_BOOL: snprintf(buf, len, "%s", *(int *)e->ptr ? "yes" : "no"); break;
    case T_INT: snprintf(buf, len, (e->flags & F_OCTAL) ? "%o" : "%d", *(int *)e->ptr); break;
    case T_LL: snprintf(buf, len, "%lld", *(long long *)e->ptr); break;
    case T_SIZE:
    case T_GSIZE: snprintf(buf, len, "%lld", *(long long *)e->ptr); break;
    case T_STRING: snprintf(buf, len, "%s", *(char **)e->ptr ? *(char **)e->ptr : ""); break;
    case T_ENUM: snprintf(buf, len, "%s", e->enums[*(int *)e->ptr]); break;
    }
}

/* The value as CONFIG GET shows it: a string as stored (whatever its
 * length), other types formatted into buf. */
static const char *shown_value(const config_entry *e, char *buf, size_t len) {
    if (e->type == T_STRING) return *(char **)e->ptr ? *(char **)e->ptr : "";
    format_value(e, buf, len);
    return buf;
}

/* Every value goes through here: the owner's check (which may normalise
 * it), the store, then the owner's apply. */
static int set_value(config_entry *e, const char *v, char *err, size_t errlen) {
    const config_hook *h = e->hook;
    char norm[4096], buf[4096];
    if (h && h->check) {
        int r = h->check(v, norm, sizeof(norm), err, errlen);
        if (r < 0) return -1;
        if (r > 0) v = norm;
    }
    if (store_value(e, v, err, errlen) != 0) return -1;
    if (h && h->apply) h->apply(shown_value(e, buf, sizeof(buf)));
    return 0;
}

static void format_value(const config_entry *e, char *buf, size_t len);
static char *def_formatted[NTABLE];

/* F_DEFONLY: the value, parsed as the entry's type into scratch storage,
 * must read back as the default. A malformed value gets the type's own
 * error; a well-formed other value is refused with the entry's reason. */
static int check_default_only(config_entry *e, const char *v, char *err, size_t errlen) {
    config_entry probe = *e;
    probe.own.s = NULL;
    probe.ptr = &probe.own;
    if (store_value(&probe, v, err, errlen) != 0) return -1;
    char buf[4096];
    format_value(&probe, buf, sizeof(buf));
    if (probe.type == T_STRING) free(probe.own.s);
    const char *def = def_formatted[e - table];
    if (!def) def = e->def;
    if (def && strcmp(buf, def) == 0) return 0;
    /* A secret (masterauth) is never echoed; an empty default reads "". */
    char given[300], dflt[300];
    if (e->flags & F_SENSITIVE) snprintf(given, sizeof(given), "'%s <value>'", e->name);
    else snprintf(given, sizeof(given), "'%s %.200s'", e->name, v);
    snprintf(dflt, sizeof(dflt), "'%s %s'", e->name, def[0] ? def : "\"\"");
    if (e->flags & F_NOPLAN)
        snprintf(err, errlen, "%.150s is not supported (%.120s); only the default %.100s is accepted", given,
                 e->notyet, dflt);
    else
        snprintf(err, errlen, "%.150s is not supported yet (it arrives with %.120s); only the default %.100s is accepted", given,
                 e->notyet, dflt);
    return -1;
}

/* Capability checks made when a value is given explicitly. */
static int check_supported(config_entry *e, const char *v, char *err, size_t errlen) {
    if (e->flags & F_NOTYET) {
        snprintf(err, errlen, "'%s' is not supported yet (it arrives with %s)", e->name, e->notyet);
        return -1;
    }
    if (e->ptr == &cfg.save && v[0]) {
        /* Redis's validation first: pairs of non-negative integers. */
        char *copy = strdup(v), *save = NULL;
        int n = 0, ok = 1;
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save), n++) {
            long long x;
            if (!str_to_ll(t, strlen(t), &x) || x < 0) ok = 0;
        }
        free(copy);
        if (!ok || n % 2) {
            snprintf(err, errlen, "Invalid save parameters");
            return -1;
        }
    }
    if (e->flags & F_DEFONLY) return check_default_only(e, v, err, errlen);
    if (e->notyet && v[0]) {
        snprintf(err, errlen, "'%s %s' is not supported yet (it arrives with %s); use '%s \"\"'", e->name, v,
                 e->notyet, e->name);
        return -1;
    }
    if (e->ptr == &cfg.arena_chunk) {
        long long n;
        if (parse_size(v, &n, 1) == 0 && (n & (n - 1))) {
            snprintf(err, errlen, "'arena-chunk' must be a power of two multiple of 2M");
            return -1;
        }
    }
    return 0;
}

static int have_values; /* config_defaults ran: every entry holds a value */

static void config_defaults(void) {
    char err[256], buf[4096];
    for (size_t i = 0; i < NTABLE; i++) {
        if (!table[i].ptr) table[i].ptr = &table[i].own;
        if (set_value(&table[i], table[i].def, err, sizeof(err)) != 0) {
            fprintf(stderr, "goblin: bad default for %s: %s\n", table[i].name, err);
            exit(1);
        }
        format_value(&table[i], buf, sizeof(buf));
        free(def_formatted[i]); /* loaded again (tests, fuzzing) */
        def_formatted[i] = strdup(buf);
    }
    have_values = 1;
}

int config_register_hook(const char *name, const config_hook *hook) {
    config_entry *e = find_entry(name);
    if (!e) return -1;
    e->hook = hook;
    if (have_values && hook->apply) {
        char buf[4096];
        hook->apply(shown_value(e, buf, sizeof(buf)));
    }
    return 0;
}

/* The C type of an entry's storage: T_INT (int), T_LL (long long) or
 * T_STRING (char *). */
static int storage_type(const config_entry *e) {
    switch (e->type) {
    case T_BOOL:
    case T_INT:
    case T_ENUM: return T_INT;
    case T_LL:
    case T_SIZE:
    case T_GSIZE: return T_LL;
    default: return T_STRING;
    }
}

/* Point the entry at storage of the C type ctype; a value already held
 * moves there. */
static int bind_storage(const char *name, int ctype, void *storage) {
    config_entry *e = find_entry(name);
    if (!e || storage_type(e) != ctype) return -1;
    if (!have_values) {
        e->ptr = storage;
        return 0;
    }
    char buf[4096], err[256];
    const char *v = shown_value(e, buf, sizeof(buf));
    char *held = e->type == T_STRING ? *(char **)e->ptr : NULL;
    e->ptr = storage;
    if (e->type == T_STRING) *(char **)storage = NULL;
    int rc = store_value(e, v, err, sizeof(err));
    free(held);
    return rc;
}

int config_bind_int(const char *name, int *storage) { return bind_storage(name, T_INT, storage); }
int config_bind_ll(const char *name, long long *storage) { return bind_storage(name, T_LL, storage); }
int config_bind_string(const char *name, char **storage) { return bind_storage(name, T_STRING, storage); }

/* Split a config line the way redis.conf is read (quotes and escapes).
 * -1 (nothing allocated) on unbalanced quotes or more than max words. */
static int split_line(const char *line, char **argv, int max) {
    int argc = 0;
    const char *p = line;
    while (*p) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        if (argc == max) goto fail;
        char buf[4096];
        size_t o = 0;
        int inq = 0, insq = 0;
        for (;;) {
            char ch = *p;
            if (inq) {
                if (!ch) goto fail;
                if (ch == '\\' && p[1]) {
                    p++;
                    ch = *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p == 't' ? '\t' : *p;
                    if (o < sizeof(buf) - 1) buf[o++] = ch;
                } else if (ch == '"') {
                    if (p[1] && !isspace((unsigned char)p[1])) goto fail;
                    p++;
                    break;
                } else if (o < sizeof(buf) - 1) {
                    buf[o++] = ch;
                }
            } else if (insq) {
                if (!ch) goto fail;
                if (ch == '\'') {
                    if (p[1] && !isspace((unsigned char)p[1])) goto fail;
                    p++;
                    break;
                }
                if (o < sizeof(buf) - 1) buf[o++] = ch;
            } else {
                if (!ch || isspace((unsigned char)ch)) break;
                if (ch == '"') inq = 1;
                else if (ch == '\'') insq = 1;
                else if (o < sizeof(buf) - 1) buf[o++] = ch;
            }
            p++;
        }
        buf[o] = '\0';
        argv[argc++] = strdup(buf);
    }
    return argc;
fail:
    /* The words split so far are not returned: free them. */
    while (argc) free(argv[--argc]);
    return -1;
}

/* The lines of an F_ACCUMULATE setting in the config file and the flags
 * add up, as Redis's setConfigSaveOption while reading "save" lines: the
 * first one replaces the default, each later one appends its words, an
 * empty one clears them. */
static char accumulate_seen[NTABLE];

static void load_accumulate(const config_entry *e, char *val, size_t size) {
    if (!(e->flags & F_ACCUMULATE)) return;
    size_t idx = (size_t)(e - table);
    char cur[4096];
    format_value(e, cur, sizeof(cur));
    if (accumulate_seen[idx] && val[0] && cur[0]) {
        char joined[8192];
        int n = snprintf(joined, sizeof(joined), "%s %s", cur, val);
        size_t len = n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
        memcpy(val, joined, len);
        val[len] = '\0';
    }
    accumulate_seen[idx] = 1;
}

static int apply_directive(int argc, char **argv, char *err, size_t errlen) {
    if (strcasecmp(argv[0], "rename-command") == 0) {
        /* Kept for the command table, which applies them once it is built. */
        if (argc != 3) {
            snprintf(err, errlen, "Bad directive or wrong number of arguments");
            return -1;
        }
        char **nr = realloc(cfg.renames, sizeof(char *) * (size_t)(2 * cfg.nrenames + 2));
        if (!nr) abort();
        cfg.renames = nr;
        cfg.renames[2 * cfg.nrenames] = strdup(argv[1]);
        cfg.renames[2 * cfg.nrenames + 1] = strdup(argv[2]);
        cfg.nrenames++;
        return 0;
    }
    if (strcasecmp(argv[0], "user") == 0) {
        /* Kept for the ACL subsystem, which validates and applies it. */
        if (argc < 2) {
            snprintf(err, errlen, "wrong number of arguments for 'user'");
            return -1;
        }
        /* A name given twice is refused here, with its line, as Redis
         * refuses it while it reads the configuration. */
        for (int k = 0; k < cfg.nacl_users; k++)
            if (cfg.acl_users[k].argc && strcmp(cfg.acl_users[k].argv[0], argv[1]) == 0) {
                snprintf(err, errlen,
                         "Error in user declaration '%.200s': Duplicate user found. A user can only be defined once "
                         "in config files",
                         argv[1]);
                return -1;
            }
        config_user *nu = realloc(cfg.acl_users, sizeof(config_user) * (size_t)(cfg.nacl_users + 1));
        if (!nu) abort();
        cfg.acl_users = nu;
        config_user *u = &cfg.acl_users[cfg.nacl_users++];
        u->argc = argc - 1;
        u->argv = malloc(sizeof(char *) * (size_t)argc);
        if (!u->argv) abort();
        for (int i = 1; i < argc; i++) u->argv[i - 1] = strdup(argv[i]);
        return 0;
    }
    config_entry *e = find_entry(argv[0]);
    if (!e) {
        snprintf(err, errlen, "Bad directive or wrong number of arguments");
        return -1;
    }
    char val[4096] = "";
    if (argc == 1 && (e->flags & F_MULTIARG)) {
        /* No value: as Redis's multi-argument directives (a bare "save"
         * line turns saving off). */
    } else if (argc == 1) {
        if (!(e->flags & F_FLAGONLY)) {
            snprintf(err, errlen, "wrong number of arguments");
            return -1;
        }
        strcpy(val, "yes");
    } else if (argc > 2 && !(e->flags & F_MULTIARG)) {
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    } else {
        for (int i = 1; i < argc; i++) {
            if (i > 1) strncat(val, " ", sizeof(val) - strlen(val) - 1);
            strncat(val, argv[i], sizeof(val) - strlen(val) - 1);
        }
    }
    load_accumulate(e, val, sizeof(val));
    if (check_supported(e, val, err, errlen) != 0) return -1;
    return set_value(e, val, err, errlen);
}

void config_report_error(int lineno, const char *line, const char *err) {
    fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (goblin-core) ***\n");
    if (lineno > 0) fprintf(stderr, "Reading the configuration file, at line %d\n", lineno);
    fprintf(stderr, ">>> '%s'\n%s\n", line, err);
}

static int load_stream(FILE *f, int *lines);

/* An included file's lines are numbered on their own, as in Redis. */
static int load_file(const char *path, int *lines) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "goblin-core: can't open config file '%s': %s\n", path, strerror(errno));
        return -1;
    }
    int rc = load_stream(f, lines);
    fclose(f);
    return rc;
}

/* The directives of f, one per line. As Redis reads a config file and
 * then standard input as one text, line numbers in errors go on from
 * *lines (the newlines before f's first line), which is left at the
 * newlines read so far. */
static int load_stream(FILE *f, int *lines) {
    char line[8192];
    int lineno = *lines;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') *lines += 1;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        char *p = line;
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') continue;
        char *argv[64];
        int argc = split_line(p, argv, 64);
        char err[512];
        int bad = argc <= 0;
        if (!bad) {
            if (strcasecmp(argv[0], "include") == 0 && argc == 2) {
                int own = 0;
                bad = load_file(argv[1], &own) != 0;
            }
            else bad = apply_directive(argc, argv, err, sizeof(err)) != 0;
        } else {
            snprintf(err, sizeof(err), "Unbalanced quotes in configuration line");
        }
        for (int i = 0; i < argc; i++) free(argv[i]);
        if (bad) {
            config_report_error(lineno, p, err);
            return -1;
        }
    }
    return 0;
}

int config_set_default(const char *name, const char *def) {
    config_entry *e = find_entry(name);
    if (!e || have_values) return -1;
    e->def = def;
    return 0;
}

/* ---- the command line's flags -------------------------------------------
 *
 * As Redis 7.0 reads them: each argument that begins with "--" starts a
 * directive line (the name, or the name and values in one argument:
 * "--maxmemory 700mb"); the arguments after it are its values, whatever
 * they begin with when the name came alone (--proc-title-template --x--),
 * until the next "--" argument. A --save or a flag-only setting
 * (--no-memcache) followed by another "--" argument, or last, has no value
 * (--save: the empty one). Words before the first "--" are a line of their
 * own. Errors name the line as Redis shows it, its values quoted. */
typedef struct flag_line {
    char *argv[64];
    int argc;
    int bad;          /* 1: the name argument's quotes do not balance; 2: over 64 words */
    char shown[1024]; /* the line as an error shows it */
} flag_line;

static void flag_word(flag_line *l, const char *w) {
    if (l->argc < 64) l->argv[l->argc++] = strdup(w);
    else l->bad = 2;
}

/* w appended to the shown line, quoted as Redis's sdscatrepr. */
static void flag_shown_value(flag_line *l, const char *w) {
    size_t n = strlen(l->shown), cap = sizeof(l->shown);
#define SHOWN(...) (n += (size_t)snprintf(l->shown + n, n < cap ? cap - n : 0, __VA_ARGS__), n = n < cap ? n : cap - 1)
    SHOWN("%s\"", n ? " " : "");
    for (const unsigned char *p = (const unsigned char *)w; *p; p++) {
        switch (*p) {
        case '\\': SHOWN("\\\\"); break;
        case '"': SHOWN("\\\""); break;
        case '\n': SHOWN("\\n"); break;
        case '\r': SHOWN("\\r"); break;
        case '\t': SHOWN("\\t"); break;
        case '\a': SHOWN("\\a"); break;
        case '\b': SHOWN("\\b"); break;
        default:
            if (isprint(*p)) SHOWN("%c", *p);
            else SHOWN("\\x%02x", *p);
        }
    }
    SHOWN("\"");
#undef SHOWN
}

/* Apply the gathered line (none: nothing) and start a new one. */
static int flag_line_end(flag_line *l, int lineno) {
    char err[512] = "";
    int rc = 0;
    if (l->bad) {
        snprintf(err, sizeof(err), "%s",
                 l->bad == 1 ? "Unbalanced quotes in configuration line" : "Too many arguments in a configuration line");
        rc = -1;
    } else if (l->argc > 0) {
        rc = apply_directive(l->argc, l->argv, err, sizeof(err));
    }
    if (rc != 0) config_report_error(lineno, l->shown, err);
    for (int i = 0; i < l->argc; i++) free(l->argv[i]);
    l->argc = l->bad = 0;
    l->shown[0] = '\0';
    return rc;
}

/* first_line: the number of the flags' first line (Redis numbers them
 * after the config file's and standard input's lines and a line break). */
static int load_flags(int argc, char **argv, int first_line) {
    flag_line l = {0};
    int lineno = first_line - 1, named = 1; /* named: the line's name came with a value, or needs none */
    for (int j = 0; j < argc; j++) {
        const char *a = argv[j];
        if (!(named && a[0] == '-' && a[1] == '-')) {
            flag_word(&l, a);
            flag_shown_value(&l, a);
            named = 1;
            continue;
        }
        if ((l.argc || l.bad) && flag_line_end(&l, ++lineno) != 0) return -1;
        snprintf(l.shown, sizeof(l.shown), "%s", a + 2);
        char *w[64];
        int n = split_line(a + 2, w, 64);
        if (n < 0) {
            l.bad = 1;
            continue;
        }
        for (int k = 0; k < n; k++) {
            flag_word(&l, w[k]);
            free(w[k]);
        }
        if (n != 1) continue;
        named = 0;
        const config_entry *e = find_entry(l.argv[0]);
        int next_named = j + 1 < argc && argv[j + 1][0] == '-' && argv[j + 1][1] == '-';
        int bare = next_named || j + 1 == argc;
        if (bare && !strcasecmp(a, "--save")) {
            flag_word(&l, "");
            flag_shown_value(&l, "");
            named = next_named;
        } else if (next_named && e && (e->flags & F_FLAGONLY)) {
            named = 1;
        }
    }
    if ((l.argc || l.bad) && flag_line_end(&l, ++lineno) != 0) return -1;
    return 0;
}

int config_load(int argc, char **argv) {
    config_defaults();
    int i = 1;
    /* As Redis: a config file, then the directives on standard input when
     * an argument "-" follows it or ends the command line, then the flags. */
    int from_stdin = 0, lines = 0;
    if (argc > 1 && !strcmp(argv[argc - 1], "-")) {
        from_stdin = 1;
        argc--;
    }
    if (argc > 1 && !strcmp(argv[1], "-")) {
        from_stdin = 1;
        i = 2;
    } else if (argc > 1 && strncmp(argv[1], "--", 2) != 0) {
        char *abs = realpath(argv[1], NULL);
        free(cfg.config_file);
        cfg.config_file = abs ? abs : strdup(argv[1]);
        if (load_file(argv[1], &lines) != 0) return -1;
        i = 2;
    }
    if (from_stdin && load_stream(stdin, &lines) != 0) return -1;
    if (load_flags(argc - i, argv + i, lines + 2) != 0) return -1;
    /* Cross-setting constraints. */
    if (cfg.arena_chunk % (2 << 20) != 0) {
        fprintf(stderr, "goblin-core: --arena-chunk must be a multiple of the 2 MiB HugeTLB page\n");
        return -1;
    }
    if (!cfg.dir || !cfg.dir[0]) {
        char cwd[4096];
        free(cfg.dir);
        cfg.dir = strdup(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
    } else if (chdir(cfg.dir) != 0) {
        fprintf(stderr, "goblin-core: can't chdir to '%s': %s\n", cfg.dir, strerror(errno));
        return -1;
    } else {
        char cwd[4096];
        if (getcwd(cwd, sizeof(cwd))) {
            free(cfg.dir);
            cfg.dir = strdup(cwd);
        }
    }
    return 0;
}

void config_get(const char *pattern, config_get_fn *fn, void *arg) {
    char buf[4096];
    for (size_t i = 0; i < NTABLE; i++) {
        config_entry *e = &table[i];
        /* A setting answers under its name and, as in Redis 7.0, under its
         * alias (slave-read-only, hash-max-ziplist-entries, ...) when that
         * matches too; a hidden one only when asked for by name. */
        int hidden = (e->flags & F_HIDDEN) != 0;
        int m = glob_match(pattern, strlen(pattern), e->name, strlen(e->name), 1) &&
                (!hidden || strcasecmp(pattern, e->name) == 0);
        int ma = e->alias && glob_match(pattern, strlen(pattern), e->alias, strlen(e->alias), 1) &&
                 (!hidden || strcasecmp(pattern, e->alias) == 0);
        if (!m && !ma) continue;
        format_value(e, buf, sizeof(buf));
        if (m) fn(arg, e->name, buf);
        if (ma) fn(arg, e->alias, buf);
    }
}

int config_note(const char *name, const char *value) {
    char why[400];
    config_lock();
    config_entry *e = find_entry(name);
    int rc = e ? store_value(e, value, why, sizeof(why)) : -1;
    config_unlock();
    return rc;
}

int config_set(const char *name, const char *value, char *err, size_t errlen) {
    config_entry *e = find_entry(name);
    if (!e) {
        snprintf(err, errlen, "Unknown option or number of arguments for CONFIG SET - '%s'", name);
        return -1;
    }
    if (e->flags & F_IMMUTABLE) {
        snprintf(err, errlen, "CONFIG SET failed (possibly related to argument '%s') - can't set immutable config",
                 name);
        return -1;
    }
    char why[400];
    if (check_supported(e, value, why, sizeof(why)) != 0 || set_value(e, value, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "CONFIG SET failed (possibly related to argument '%s') - %s", name, why);
        return -1;
    }
    return 0;
}

int config_commit(const char *const *names, int n, char *err, size_t errlen) {
    for (int i = 0; i < n; i++) {
        const config_entry *e = names[i] ? find_entry(names[i]) : NULL;
        if (!e || !e->hook || !e->hook->commit) continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            const config_entry *f = names[j] ? find_entry(names[j]) : NULL;
            seen = f && f->hook && f->hook->commit == e->hook->commit;
        }
        if (seen) continue;
        char why[400];
        if (e->hook->commit(why, sizeof(why)) != 0) {
            log_warn("Failed applying new configuration. Possibly related to new %s setting. Restoring previous "
                     "settings.",
                     e->name);
            snprintf(err, errlen, "CONFIG SET failed (possibly related to argument '%s') - %s", e->name, why);
            return -1;
        }
    }
    return 0;
}

/* One setting's line in a rewritten file: a multi-word value as its words,
 * any other quoted; a setting whose empty value means "none" has no line. */
static void write_setting(FILE *out, const config_entry *e, const char *val) {
    if ((e->flags & F_OMIT_EMPTY) && !val[0]) return;
    if (e->flags & F_MULTIARG) fprintf(out, "%s %s\n", e->name, val[0] ? val : "\"\"");
    else fprintf(out, "%s \"%s\"\n", e->name, val);
}

int config_rewrite(int force_all, char *err, size_t errlen) {
    if (!cfg.config_file) {
        snprintf(err, errlen, "The server is running without a config file");
        return -1;
    }
    /* Keep comments and unknown lines; replace the lines of known settings
     * with their current values; append settings that differ from default. */
    FILE *in = fopen(cfg.config_file, "r");
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", cfg.config_file, (int)getpid());
    FILE *out = fopen(tmp, "w");
    if (!out) {
        if (in) fclose(in);
        snprintf(err, errlen, "Rewriting config file: %s", strerror(errno));
        return -1;
    }
    char seen[NTABLE];
    memset(seen, 0, sizeof(seen));
    char line[8192], val[4096];
    while (in && fgets(line, sizeof(line), in)) {
        char *argv[64];
        char *p = line;
        while (*p && isspace((unsigned char)*p)) p++;
        int argc = (*p && *p != '#') ? split_line(p, argv, 64) : 0;
        config_entry *e = argc > 0 ? find_entry(argv[0]) : NULL;
        for (int i = 0; i < argc; i++) free(argv[i]);
        if (!e) {
            fputs(line, out);
            continue;
        }
        size_t idx = (size_t)(e - table);
        if (seen[idx]) continue;
        seen[idx] = 1;
        format_value(e, val, sizeof(val));
        write_setting(out, e, val);
    }
    for (size_t i = 0; i < NTABLE; i++) {
        config_entry *e = &table[i];
        if (seen[i] || (e->flags & F_NOTYET)) continue;
        format_value(e, val, sizeof(val));
        if (!force_all && strcmp(val, def_formatted[i]) == 0) continue;
        write_setting(out, e, val);
    }
    if (in) fclose(in);
    if (fflush(out) != 0 || fsync(fileno(out)) != 0) {
        fclose(out);
        unlink(tmp);
        snprintf(err, errlen, "Rewriting config file: %s", strerror(errno));
        return -1;
    }
    fclose(out);
    if (rename(tmp, cfg.config_file) != 0) {
        unlink(tmp);
        snprintf(err, errlen, "Rewriting config file: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- serialized reads ---------------------------------------------------- */

static pthread_mutex_t config_mutex = PTHREAD_MUTEX_INITIALIZER;

void config_lock(void) { pthread_mutex_lock(&config_mutex); }
void config_unlock(void) { pthread_mutex_unlock(&config_mutex); }

static void config_value_cb(void *arg, const char *name, const char *value) {
    (void)name;
    char **out = arg;
    if (!*out) *out = strdup(value);
}

char *config_value_locked(const char *name) {
    /* A plain name: one entry, found without matching every name as a
     * pattern (the cluster's cron reads its settings ten times a second). */
    if (!strpbrk(name, "*?[\\")) {
        config_entry *e = find_entry(name);
        if (!e) return NULL;
        char buf[4096];
        format_value(e, buf, sizeof(buf));
        return strdup(buf);
    }
    char *v = NULL;
    config_get(name, config_value_cb, &v);
    return v;
}

char *config_value(const char *name) {
    config_lock();
    char *v = config_value_locked(name);
    config_unlock();
    return v;
}
