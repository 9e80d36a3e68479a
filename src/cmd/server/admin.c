/* admin.c -- server administration: CONFIG, DBSIZE, FLUSHDB, FLUSHALL, TIME,
 * LASTSAVE and SHUTDOWN, the family's shared helpers and its handler table
 * (COMMAND lives in admin_command.c, OBJECT/MEMORY/DEBUG in admin_inspect.c,
 * SLOWLOG and LATENCY in admin_latency.c, INFO in info.c).
 *
 * Locking: these commands touch no key, except FLUSHDB/FLUSHALL, which take
 * the keyspace write lock, and DBSIZE, which counts shard by shard under the
 * keyspace read lock (CMD_LOCK_SELF).
 * CONFIG GET/SET/REWRITE additionally serialize on config_lock(), because a
 * string setting is freed and replaced when it is set; CONFIG SET also takes
 * the keyspace write lock, so no data command runs while thresholds change. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "cmd/server/admin_family.h"
#include "cmd/server/script.h"
#include "cmd/cron.h"
#include "cmd/evict.h"
#include "cmd/families.h"
#include "cmd/multi.h"
#include "cmd/propagate.h"
#include "cmd/repl/repl.h"
#include "cmd/tracking.h"
#include "db/lazyfree.h"
#include "session/reply.h"
#include "session/session.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "base/config.h"
#include "base/log.h"
#include "base/process.h"
#include "base/tstat.h"
#include "util/sockio.h"

#ifndef GOBLIN_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

/* ---- Shared helpers ---------------------------------------------------- */

void admin_reply_help(client *c, const char *cmd, const char *const *lines) {
    long n = 0;
    while (lines[n]) n++;
    reply_array(c, n + 3);
    char head[128];
    snprintf(head, sizeof(head), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", cmd);
    reply_simple(c, head);
    for (long i = 0; i < n; i++) reply_simple(c, lines[i]);
    reply_simple(c, "HELP");
    reply_simple(c, "    Prints this help.");
}

int admin_protected_allowed(const client *c, const char *directive) {
    char *v = config_value(directive);
    int ok = v && strcasecmp(v, "yes") == 0;
    if (v && strcasecmp(v, "local") == 0)
        ok = (client_flags_peek(c) & CLIENT_UNIX_SOCKET) || sock_addr_is_local(c->addr);
    free(v);
    return ok;
}

void admin_reply_subcommand_syntax(client *c, const char *cmd) {
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.", c->argv[1].p,
                 cmd);
}

void admin_bytes_human(char *s, size_t len, unsigned long long n) {
    static const char units[] = "KMGTP";
    if (n < 1024) {
        snprintf(s, len, "%lluB", n);
        return;
    }
    double d = (double)n / 1024;
    for (int u = 0; u < 5; u++, d /= 1024) {
        if (d < 1024) {
            snprintf(s, len, "%.2f%c", d, units[u]);
            return;
        }
    }
    snprintf(s, len, "%lluB", n);
}

void admin_alloc_stats_get(admin_alloc_stats *st) {
    memset(st, 0, sizeof(*st));
#ifndef GOBLIN_NO_JEMALLOC
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    mallctl("epoch", &epoch, &sz, &epoch, sz);
    sz = sizeof(size_t);
    mallctl("stats.allocated", &st->allocated, &sz, NULL, 0);
    sz = sizeof(size_t);
    mallctl("stats.active", &st->active, &sz, NULL, 0);
    sz = sizeof(size_t);
    mallctl("stats.resident", &st->resident, &sz, NULL, 0);
#endif
}

/* c may run on another worker: ocap is read atomically (client.h). */
static void clients_mem_cb(void *arg, client *c) {
    *(size_t *)arg += __atomic_load_n(&c->ocap, __ATOMIC_RELAXED) + __atomic_load_n(&c->qbuf_len, __ATOMIC_RELAXED) +
                      __atomic_load_n(&c->qbuf_free, __ATOMIC_RELAXED) + __atomic_load_n(&c->qbuf_argv, __ATOMIC_RELAXED) +
                      __atomic_load_n(&c->argv_blocked, __ATOMIC_RELAXED);
}

size_t admin_clients_memory(void) {
    size_t total = 0;
    session_registry_lock();
    session_clients_each(clients_mem_cb, &total);
    session_registry_unlock();
    return total;
}

/* ---- CONFIG ------------------------------------------------------------ */

typedef struct config_pairs {
    char **names, **values;
    size_t n, cap;
    const char *as_name;    /* exact (non-glob) request: answer under it */
} config_pairs;

static int pairs_has(const config_pairs *cp, const char *name) {
    for (size_t i = 0; i < cp->n; i++)
        if (strcasecmp(cp->names[i], name) == 0) return 1;
    return 0;
}

static void config_get_cb(void *arg, const char *name, const char *value) {
    config_pairs *cp = arg;
    if (cp->as_name) name = cp->as_name;
    if (pairs_has(cp, name)) return;
    if (cp->n == cp->cap) {
        cp->cap = cp->cap ? cp->cap * 2 : 32;
        cp->names = realloc(cp->names, cp->cap * sizeof(char *));
        cp->values = realloc(cp->values, cp->cap * sizeof(char *));
        if (!cp->names || !cp->values) abort();
    }
    cp->names[cp->n] = strdup(name);
    cp->values[cp->n] = strdup(value);
    cp->n++;
}

/* CONFIG GET pattern [pattern ...]: the union of the matches, each setting
 * once; a name given without glob characters answers under that spelling. */
static void configGetCommand(client *c) {
    config_pairs cp = {0};
    config_lock();
    for (int i = 2; i < c->argc; i++) {
        const char *pat = c->argv[i].p;
        if (!strpbrk(pat, "[*?")) {
            if (pairs_has(&cp, pat)) continue;
            cp.as_name = pat;
        } else {
            cp.as_name = NULL;
        }
        config_get(pat, config_get_cb, &cp);
    }
    config_unlock();
    reply_map(c, (long)cp.n);
    for (size_t i = 0; i < cp.n; i++) {
        reply_bulk_cstr(c, cp.names[i]);
        reply_bulk_cstr(c, cp.values[i]);
        free(cp.names[i]);
        free(cp.values[i]);
    }
    free(cp.names);
    free(cp.values);
}

static char *lowercase_dup(const char *s) {
    char *d = strdup(s);
    for (char *p = d; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
    return d;
}

/* CONFIG SET name value [name value ...], all or nothing. As Redis does, the
 * names are checked first (unknown, immutable, given twice) and the first
 * problem is reported; then the values are set in order and, if one is
 * refused, the ones already set get their previous values back. The value
 * of every sensitive parameter (requirepass, masterauth) is redacted for
 * SLOWLOG and MONITOR whatever the outcome, as in Redis 7.0; the values are
 * read through val[], taken before any redaction. */
static void configSetCommand(client *c) {
    if (c->argc & 1) {
        reply_err_syntax(c);
        return;
    }
    int n = (c->argc - 2) / 2;
    char **lname = calloc((size_t)n, sizeof(char *));
    char **old = calloc((size_t)n, sizeof(char *));
    const char **val = calloc((size_t)n, sizeof(char *));
    if (!lname || !old || !val) abort();
    int has_nul = 0; /* the first value holding a NUL byte, + 1 (before a redaction) */
    for (int i = 0; i < n; i++) {
        val[i] = c->argv[3 + 2 * i].p;
        if (!has_nul && memchr(val[i], '\0', c->argv[3 + 2 * i].n)) has_nul = i + 1;
    }
    char err[600], why[512];
    err[0] = '\0';
    const char *unknown = NULL;
    int bad = 0, deny_loading = 0;
    int protected_ok = admin_protected_allowed(c, "enable-protected-configs"); /* reads the table: before its lock */
    config_lock();
    for (int i = 0; i < n; i++) {
        const char *name = c->argv[2 + 2 * i].p;
        if (!config_exists(name)) {
            if (!bad) unknown = name;
            bad = 1;
            continue;
        }
        if (config_is_sensitive(name)) cmd_redact_arg(c, 3 + 2 * i);
        if (bad) continue;
        lname[i] = lowercase_dup(name);
        old[i] = config_value_locked(lname[i]);
        /* An immutable setting is told apart before any value is touched. */
        if (config_is_immutable(lname[i])) {
            snprintf(err, sizeof(err),
                     "ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config", name);
            bad = 1;
            continue;
        }
        if (!protected_ok && config_is_protected(lname[i])) {
            snprintf(err, sizeof(err),
                     "ERR CONFIG SET failed (possibly related to argument '%s') - can't set protected config", name);
            bad = 1;
            continue;
        }
        /* A load under way refuses some settings with -LOADING, which goes
         * before any other error (clients may wait and retry). */
        if ((persist_loading() || persist_async_loading()) && config_denied_while_loading(lname[i])) {
            deny_loading = bad = 1;
            continue;
        }
        /* Settings are kept as text: a NUL byte would cut the value short
         * (a requirepass "abc\0def" would take "abc"), so it is refused. */
        if (has_nul == i + 1) {
            snprintf(err, sizeof(err),
                     "ERR CONFIG SET failed (possibly related to argument '%s') - the value must not contain NUL bytes",
                     name);
            bad = 1;
            continue;
        }
        for (int j = 0; j < i; j++) {
            if (strcasecmp(c->argv[2 + 2 * j].p, name) == 0) {
                snprintf(err, sizeof(err),
                         "ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter", name);
                bad = 1;
                break;
            }
        }
    }
    /* Inside EXEC, turning the AOF on schedules its first rewrite rather
     * than forking in the middle of the transaction, as Redis does. */
    int in_exec = (client_flags_peek(c) & CLIENT_IN_EXEC) != 0;
    if (in_exec) aof_defer_rewrites(1);
    if (!bad) {
        for (int i = 0; i < n; i++) {
            if (config_set(lname[i], val[i], why, sizeof(why)) == 0) continue;
            snprintf(err, sizeof(err), "ERR %s", why);
            for (int j = 0; j < i; j++) {
                char ignored[256];
                if (old[j]) config_set(lname[j], old[j], ignored, sizeof(ignored));
            }
            bad = 1;
            break;
        }
        /* Settings that take effect together (the TLS context) now. */
        if (!bad && config_commit((const char *const *)lname, n, why, sizeof(why)) != 0) {
            snprintf(err, sizeof(err), "ERR %s", why);
            char ignored[256];
            for (int j = 0; j < n; j++)
                if (old[j]) config_set(lname[j], old[j], ignored, sizeof(ignored));
            config_commit((const char *const *)lname, n, ignored, sizeof(ignored));
            bad = 1;
        }
    }
    if (in_exec) aof_defer_rewrites(0);
    config_unlock();
    if (deny_loading) reply_error(c, "LOADING Redis is loading the dataset in memory");
    else if (unknown) reply_errorf(c, "ERR Unknown option or number of arguments for CONFIG SET - '%s'", unknown);
    else if (bad) reply_error(c, err);
    else reply_ok(c);
    for (int i = 0; i < n; i++) {
        free(lname[i]);
        free(old[i]);
    }
    free(lname);
    free(old);
    free(val);
}

static void reset_stats_cb(void *arg, const cmd_def *d) {
    (void)arg;
    cmd_stats_reset(d);
    for (int i = 0; i < d->nsubs; i++) cmd_stats_reset(d->subs[i]);
}

static void configResetstatCommand(client *c) {
    cmd_each(reset_stats_cb, NULL);
    cmd_latency_reset();
    reply_errorstats_reset();
    reply_unexpected_errors_reset();
    tstat_reset(TSTAT_COMMANDS);
    __atomic_store_n(&db_stat_expired_keys, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&db_stat_expire_cycle_us, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&db_stat_expire_time_cap, 0, __ATOMIC_RELAXED);
    db_defrag_stats_reset();
    double zero = 0;
    __atomic_store(&db_stat_expired_stale_perc, &zero, __ATOMIC_RELAXED);
    evict_exceeded_reset();
    __atomic_store_n(&evict_stat_evicted_keys, 0, __ATOMIC_RELAXED);
    tstat_reset(TSTAT_KEYSPACE_HITS);
    tstat_reset(TSTAT_KEYSPACE_MISSES);
    __atomic_store_n(&session_stat_connections, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&session_stat_rejected, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&session_stat_replybuf_shrinks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&session_stat_replybuf_expands, 0, __ATOMIC_RELAXED);
    tstat_reset(TSTAT_NET_INPUT);
    tstat_reset(TSTAT_NET_OUTPUT);
    tstat_reset(TSTAT_READS);
    tstat_reset(TSTAT_WRITES);
    repl_stats_reset();
    persist_stats_reset();
    lazyfree_stats_reset();
    cron_rates_reset(); /* Redis clears its samples too */
    __atomic_store_n(&srv.total_forks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&srv.latest_fork_usec, 0, __ATOMIC_RELAXED);
    reply_ok(c);
}

static void configRewriteCommand(client *c) {
    char err[512];
    config_lock();
    int rc = config_rewrite(0, err, sizeof(err));
    config_unlock();
    if (rc != 0) {
        log_warn("CONFIG REWRITE failed: %s", err);
        reply_errorf(c, "ERR %s", err);
        return;
    }
    log_notice("CONFIG REWRITE executed with success.");
    reply_ok(c);
}

static void configHelpCommand(client *c) {
    static const char *const help[] = {
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        NULL,
    };
    admin_reply_help(c, "CONFIG", help);
}

/* ---- DBSIZE, FLUSHDB, FLUSHALL, TIME, LASTSAVE ------------------------- */

/* Shards are counted one at a time: a key renamed across shards during the
 * count may be seen twice or not at all, a transient no single client can
 * observe. (Holding all 64 shard locks at once would also exceed what
 * ThreadSanitizer's deadlock detector tracks.) */
static void dbsizeCommand(client *c) {
    admin_db_overhead o;
    db_rdlock_keyspace();
    admin_db_overhead_get(cmd_db(c), &o);
    db_unlock_keyspace();
    reply_int(c, (long long)o.keys);
}

/* [ASYNC|SYNC]: 1 async (the lazy-free thread frees the entries), 0 sync,
 * -1 after a syntax error reply. Without either, lazyfree-lazy-user-flush
 * decides, as in Redis. */
static int lazy_user_flush;
static int flush_mode(client *c) {
    if (c->argc == 1) return __atomic_load_n(&lazy_user_flush, __ATOMIC_RELAXED) != 0;
    if (c->argc == 2 && arg_is(&c->argv[1], "sync")) return 0;
    if (c->argc == 2 && arg_is(&c->argv[1], "async")) return 1;
    reply_err_syntax(c);
    return -1;
}

/* Empty db; as in Redis the dirty counter grows by the number of keys
 * removed, and the watchers of the keys it held are touched. Keyspace
 * write lock held (CMD_LOCK_ALL). */
static void flush_db(client *c, gdb *db, int async) {
    size_t removed = db_size(db);
    if (!removed) return;
    multi_touch_emptied(db->id);
    if (async) db_flush_async(db);
    else db_flush(db);
    db_dirty_add(removed - 1);
    cmd_db_modified_watched(c, db); /* the last one */
}

void admin_flush_config_register(void) { config_bind_int("lazyfree-lazy-user-flush", &lazy_user_flush); }

/* As Redis: every tracking client hears that all its keys are invalid,
 * once per command, even when nothing was removed. */
static void flush_tracking(void) {
    if (tracking_active()) tracking_invalidate_all();
}

static void flushdbCommand(client *c) {
    int async = flush_mode(c);
    if (async < 0) return;
    flush_tracking();
    flush_db(c, cmd_db(c), async);
    prop_count_change(); /* as Redis 7.0: propagated even when there was nothing to remove */
    reply_ok(c);
}

static void flushallCommand(client *c) {
    int async = flush_mode(c);
    if (async < 0) return;
    flush_tracking();
    for (int i = 0; i < db_count(); i++) flush_db(c, db_get(i), async);
    prop_count_change(); /* as FLUSHDB */
    /* As Redis: kill a BGSAVE child, and snapshot the empty dataset when
     * save points are configured. */
    persist_after_flushall();
    reply_ok(c);
}

static void timeCommand(client *c) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    reply_array(c, 2);
    reply_bulk_ll(c, tv.tv_sec);
    reply_bulk_ll(c, tv.tv_usec);
}

static void lastsaveCommand(client *c) { reply_int(c, srv.lastsave); }

/* ---- SHUTDOWN ---------------------------------------------------------- */

static void shutdownCommand(client *c) {
    int nosave = 0, save = 0, now = 0, force = 0, abort_ = 0;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "nosave")) nosave = 1;
        else if (arg_is(&c->argv[i], "save")) save = 1;
        else if (arg_is(&c->argv[i], "now")) now = 1;
        else if (arg_is(&c->argv[i], "force")) force = 1;
        else if (arg_is(&c->argv[i], "abort")) abort_ = 1;
        else {
            reply_err_syntax(c);
            return;
        }
    }
    if ((abort_ && (nosave || save || now || force)) || (nosave && save)) {
        reply_err_syntax(c);
        return;
    }
    if (abort_) {
        /* Only a shutdown waiting for its replicas can be stopped. */
        if (repl_shutdown_abort() != 0) reply_error(c, "ERR No shutdown in progress.");
        else reply_ok(c);
        return;
    }
    /* A busy script: only SHUTDOWN NOSAVE may stop the server. */
    const char *busy_err;
    if (!nosave && script_busy(&busy_err)) {
        reply_error(c, busy_err);
        return;
    }
    /* Another client's shutdown under way: this one waits for its outcome
     * (with its options, as Redis's second SHUTDOWN). */
    if (repl_shutdown_join(c)) return;
    /* Replicas behind the stream catch up first (shutdown-timeout), unless
     * NOW; SHUTDOWN ABORT from another client stops the wait. Meanwhile the
     * client counts as blocked, as Redis's BLOCKED_SHUTDOWN. */
    if (!now) {
        client_flag_on(c, CLIENT_BLOCKED);
        int rc = repl_shutdown_grace(session_events_while_busy);
        client_flag_off(c, CLIENT_BLOCKED);
        if (rc != 0) {
            if (!repl_shutdown_join(c)) reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
            return;
        }
    }
    repl_shutdown_report();
    char err[600];
    int how = save ? PERSIST_SHUTDOWN_SAVE : nosave ? PERSIST_SHUTDOWN_NOSAVE : PERSIST_SHUTDOWN_DEFAULT;
    if (persist_shutdown(how, err, sizeof(err)) != 0 && !force) {
        persist_shutdown_cancelled();
        repl_shutdown_grace_end();
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    /* No reply: the connection closes, as with Redis. */
    client_flag_on(c, CLIENT_CLOSE_ASAP);
    session_request_shutdown();
}

/* ---- The family -------------------------------------------------------- */

/* ---- MODULE ------------------------------------------------------------ */

/* Goblin has no module API. MODULE answers as Redis 7.0 does with its
 * default enable-module-command no (which Goblin's table fixes): nothing
 * loaded, and loading or unloading refused with Redis's error. */
static void moduleListCommand(client *c) { reply_array(c, 0); }

static void moduleRefusedCommand(client *c) {
    reply_error(c, "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you "
                   "can run it from a local connection, otherwise you need to set this option in the configuration "
                   "file, and then restart the server.");
}

static void moduleHelpCommand(client *c) {
    static const char *const help[] = {
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        NULL,
    };
    admin_reply_help(c, "MODULE", help);
}

const cmd_handler admin_handlers[] = {
    /* "command" itself first: it is a container with its own handler. */
    {"command", commandCommand, CMD_LOCK_NONE},
    {"command|count", commandCountCommand, CMD_LOCK_NONE},
    {"command|info", commandInfoCommand, CMD_LOCK_NONE},
    {"command|docs", commandDocsCommand, CMD_LOCK_NONE},
    {"command|list", commandListCommand, CMD_LOCK_NONE},
    {"command|getkeys", commandGetkeysCommand, CMD_LOCK_NONE},
    {"command|getkeysandflags", commandGetkeysandflagsCommand, CMD_LOCK_NONE},
    {"command|help", commandHelpCommand, CMD_LOCK_NONE},
    {"config|get", configGetCommand, CMD_LOCK_NONE},
    /* Data commands read encoding thresholds under their key locks. */
    {"config|set", configSetCommand, CMD_LOCK_ALL},
    {"config|resetstat", configResetstatCommand, CMD_LOCK_NONE},
    {"config|rewrite", configRewriteCommand, CMD_LOCK_NONE},
    {"config|help", configHelpCommand, CMD_LOCK_NONE},
    {"dbsize", dbsizeCommand, CMD_LOCK_SELF},
    {"flushdb", flushdbCommand, CMD_LOCK_ALL},
    {"flushall", flushallCommand, CMD_LOCK_ALL},
    {"time", timeCommand, CMD_LOCK_NONE},
    {"lastsave", lastsaveCommand, CMD_LOCK_NONE},
    {"shutdown", shutdownCommand, CMD_LOCK_NONE},
    {"debug", debugCommand, CMD_LOCK_SELF},
    {"object|encoding", objectEncodingCommand, CMD_LOCK_KEYS},
    {"object|freq", objectFreqCommand, CMD_LOCK_KEYS},
    {"object|idletime", objectIdletimeCommand, CMD_LOCK_KEYS},
    {"object|refcount", objectRefcountCommand, CMD_LOCK_KEYS},
    {"object|help", objectHelpCommand, CMD_LOCK_NONE},
    {"memory|usage", memoryUsageCommand, CMD_LOCK_KEYS},
    {"memory|stats", memoryStatsCommand, CMD_LOCK_SELF},
    {"memory|doctor", memoryDoctorCommand, CMD_LOCK_SELF},
    {"memory|malloc-stats", memoryMallocStatsCommand, CMD_LOCK_NONE},
    {"memory|purge", memoryPurgeCommand, CMD_LOCK_NONE},
    {"memory|help", memoryHelpCommand, CMD_LOCK_NONE},
    {"slowlog|get", slowlogGetCommand, CMD_LOCK_NONE},
    {"slowlog|len", slowlogLenCommand, CMD_LOCK_NONE},
    {"slowlog|reset", slowlogResetCommand, CMD_LOCK_NONE},
    {"slowlog|help", slowlogHelpCommand, CMD_LOCK_NONE},
    {"latency|latest", latencyLatestCommand, CMD_LOCK_NONE},
    {"latency|history", latencyHistoryCommand, CMD_LOCK_NONE},
    {"latency|graph", latencyGraphCommand, CMD_LOCK_NONE},
    {"latency|reset", latencyResetCommand, CMD_LOCK_NONE},
    {"latency|doctor", latencyDoctorCommand, CMD_LOCK_NONE},
    {"latency|help", latencyHelpCommand, CMD_LOCK_NONE},
    {"latency|histogram", latencyHistogramCommand, CMD_LOCK_NONE},
    {"lolwut", lolwutCommand, CMD_LOCK_NONE},
    {"module|list", moduleListCommand, CMD_LOCK_NONE},
    {"module|load", moduleRefusedCommand, CMD_LOCK_NONE},
    {"module|loadex", moduleRefusedCommand, CMD_LOCK_NONE},
    {"module|unload", moduleRefusedCommand, CMD_LOCK_NONE},
    {"module|help", moduleHelpCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
