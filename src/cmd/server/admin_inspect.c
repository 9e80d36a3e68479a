/* admin_inspect.c -- looking inside the server: OBJECT, MEMORY and DEBUG.
 *
 * OBJECT and MEMORY USAGE read one key under the shard lock the dispatcher
 * took for them; MEMORY STATS/DOCTOR and DEBUG lock what they read
 * themselves (CMD_LOCK_SELF): the keyspace read lock, then one shard at a
 * time; DEBUG DIGEST and DIGEST-VALUE take the keyspace write lock. DEBUG
 * is refused unless enable-debug-command allows it, as in Redis 7.0 (whose
 * default is "no"). */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#include "cmd/server/admin_family.h"
#include "cmd/server/function.h"
#include "cmd/server/script.h"
#include "cmd/cluster/cluster.h"
#include "cmd/repl/repl.h"
#include "cmd/cron.h"
#include "cmd/propagate.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "session/reply.h"
#include "db/digest.h"
#include "db/memusage.h"
#include "db/strval.h"
#include "util/strutil.h"
#include "mem/slab.h"
#include "mem/ssdtail.h"
#include "session/session.h"
#include "base/config.h"
#include "base/log.h"
#include "base/process.h"
#include "cmd/multi.h"

#ifndef GOBLIN_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

static int lfu_policy(void) {
    char *v = config_value("maxmemory-policy");
    int lfu = v && strstr(v, "lfu") != NULL;
    free(v);
    return lfu;
}

/* ---- OBJECT ------------------------------------------------------------ */

/* Redis shares the string objects of the integers 0..9999, and says so with
 * refcount INT_MAX; it stops sharing them when maxmemory evicts by LRU/LFU
 * (every key then needs its own access clock). */
static int shared_int_value(const gobj *o) {
    if (o->type != OBJ_STRING || o->enc != ENC_INT || o->u.i < 0 || o->u.i >= 10000) return 0;
    if (cfg.maxmemory == 0) return 1;
    char *v = config_value("maxmemory-policy");
    int shared = !v || (!strstr(v, "lru") && !strstr(v, "lfu"));
    free(v);
    return shared;
}

static long long obj_idle_seconds(const gobj *o) {
    uint32_t now = obj_clock();
    return now >= o->lru ? (long long)(now - o->lru) : 0;
}

/* The key argv[2] without touching its access clock (lazy expiry applies).
 * The dispatcher holds its shard. */
static dbentry *object_lookup(client *c) {
    gdb *db = cmd_db(c);
    dbentry *e = db_lookup_raw(db, c->argv[2].p, c->argv[2].n);
    if (e && db_expire_if_needed(db, e)) e = NULL;
    db_count_read(e != NULL); /* Redis: lookupKeyReadWithFlags(NOTOUCH) */
    if (!e) reply_null(c);
    return e;
}

void objectEncodingCommand(client *c) {
    dbentry *e = object_lookup(c);
    if (e) reply_bulk_cstr(c, obj_encoding_name(&e->val));
}

void objectFreqCommand(client *c) {
    dbentry *e = object_lookup(c);
    if (!e) return;
    if (!lfu_policy()) {
        reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that "
                       "when switching between policies at runtime LRU and LFU data will take some time to adjust.");
        return;
    }
    reply_int(c, obj_lfu_freq(&e->val));
}

void objectIdletimeCommand(client *c) {
    dbentry *e = object_lookup(c);
    if (!e) return;
    if (lfu_policy()) {
        reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
                       "switching between policies at runtime LRU and LFU data will take some time to adjust.");
        return;
    }
    reply_int(c, obj_idle_seconds(&e->val));
}

void objectRefcountCommand(client *c) {
    dbentry *e = object_lookup(c);
    if (e) reply_int(c, shared_int_value(&e->val) ? INT_MAX : 1);
}

void objectHelpCommand(client *c) {
    static const char *const help[] = {
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        NULL,
    };
    admin_reply_help(c, "OBJECT", help);
}

/* ---- MEMORY ------------------------------------------------------------ */

/* Bytes one key costs: its entry (key bytes included), its index slot and
 * control byte, and its value. */
static size_t key_mem_usage(const dbentry *e) {
    return db_entry_size(e) + sizeof(dbentry *) + 1 + obj_mem_usage(&e->val);
}

void memoryUsageCommand(client *c) {
    for (int j = 3; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "samples") && j + 1 < c->argc) {
            long long samples;
            if (arg_ll(c, &c->argv[j + 1], &samples) != 0) return;
            if (samples < 0) {
                reply_err_syntax(c);
                return;
            }
            /* Values are measured exactly; SAMPLES is accepted and ignored. */
            j++;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    /* Like Redis, a logically expired key still present is measured. */
    dbentry *e = db_lookup_raw(cmd_db(c), c->argv[2].p, c->argv[2].n);
    if (!e) {
        reply_null(c);
        return;
    }
    reply_int(c, (long long)key_mem_usage(e));
}

void admin_db_overhead_get(gdb *db, admin_db_overhead *o) {
    memset(o, 0, sizeof(*o));
    for (unsigned s = 0; s < DB_NSHARDS; s++) {
        db_lock_shard(db, s);
        shard *sh = &db->shards[s];
        o->keys += swiss_size(&sh->keys);
        o->expires += sh->nvol;
        o->main += swiss_mem_bytes(&sh->keys);
        o->vol += sh->capvol * sizeof(dbentry *);
        db_unlock_shard(db, s);
    }
}

void admin_mem_overview_get(admin_mem_overview *m, admin_db_fn *per_db, void *arg) {
    memset(m, 0, sizeof(*m));
    m->used = memusage_used();
    uint64_t peak = __atomic_load_n(&srv.stat_peak_memory, __ATOMIC_RELAXED);
    m->peak = peak > m->used ? peak : m->used;
    m->rss = memusage_rss();
    m->clients = admin_clients_memory();
    admin_alloc_stats_get(&m->alloc);
    m->startup = srv.used_memory_startup;
    m->overhead = m->startup + m->clients;
    db_rdlock_keyspace();
    for (int i = 0; i < db_count(); i++) {
        admin_db_overhead o;
        admin_db_overhead_get(db_get(i), &o);
        if (!o.keys) continue;
        m->keys += o.keys;
        m->overhead += o.main + o.vol + sizeof(gdb);
        if (per_db) per_db(arg, i, &o);
    }
    db_unlock_keyspace();
    m->dataset = m->used > m->overhead ? m->used - m->overhead : 0;
}

typedef struct db_stat_line {
    int id;
    admin_db_overhead o;
} db_stat_line;

typedef struct db_stat_lines {
    db_stat_line v[DB_MAX];
    int n;
} db_stat_lines;

static void collect_db_line(void *arg, int id, const admin_db_overhead *o) {
    db_stat_lines *l = arg;
    l->v[l->n].id = id;
    l->v[l->n].o = *o;
    l->n++;
}

static double ratio(size_t a, size_t b) { return b ? (double)a / (double)b : 0; }

void memoryStatsCommand(client *c) {
    admin_mem_overview m;
    db_stat_lines dbs;
    dbs.n = 0;
    admin_mem_overview_get(&m, collect_db_line, &dbs);
    size_t backlog, replicas, vm, scripts_eval, funcs_vm, funcs_mem;
    long nscripts;
    repl_buffer_memory(&backlog, &replicas);
    script_memory(&nscripts, &vm, &scripts_eval);
    function_memory(&funcs_vm, &funcs_mem);
    reply_map(c, 27 + dbs.n);
    reply_bulk_cstr(c, "peak.allocated");
    reply_int(c, (long long)m.peak);
    reply_bulk_cstr(c, "total.allocated");
    reply_int(c, (long long)m.used);
    reply_bulk_cstr(c, "startup.allocated");
    reply_int(c, (long long)m.startup);
    reply_bulk_cstr(c, "replication.backlog");
    reply_int(c, (long long)backlog);
    reply_bulk_cstr(c, "clients.slaves");
    reply_int(c, (long long)replicas);
    reply_bulk_cstr(c, "clients.normal");
    reply_int(c, (long long)m.clients);
    reply_bulk_cstr(c, "cluster.links");
    reply_int(c, (long long)cluster_links_memory());
    reply_bulk_cstr(c, "aof.buffer");
    reply_int(c, (long long)aof_buffer_bytes());
    reply_bulk_cstr(c, "lua.caches");
    reply_int(c, (long long)scripts_eval);
    reply_bulk_cstr(c, "functions.caches");
    reply_int(c, (long long)funcs_mem);
    for (int i = 0; i < dbs.n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "db.%d", dbs.v[i].id);
        reply_bulk_cstr(c, name);
        reply_map(c, 3);
        reply_bulk_cstr(c, "overhead.hashtable.main");
        reply_int(c, (long long)dbs.v[i].o.main);
        reply_bulk_cstr(c, "overhead.hashtable.expires");
        reply_int(c, (long long)dbs.v[i].o.vol);
        reply_bulk_cstr(c, "overhead.hashtable.slot-to-keys");
        reply_int(c, 0);
    }
    reply_bulk_cstr(c, "overhead.total");
    reply_int(c, (long long)m.overhead);
    reply_bulk_cstr(c, "keys.count");
    reply_int(c, (long long)m.keys);
    reply_bulk_cstr(c, "keys.bytes-per-key");
    reply_int(c, m.keys ? (long long)((m.used - m.startup) / m.keys) : 0);
    reply_bulk_cstr(c, "dataset.bytes");
    reply_int(c, (long long)m.dataset);
    reply_bulk_cstr(c, "dataset.percentage");
    reply_double(c, m.used > m.startup ? 100.0 * (double)m.dataset / (double)(m.used - m.startup) : 0);
    reply_bulk_cstr(c, "peak.percentage");
    reply_double(c, 100.0 * ratio(m.used, m.peak));
    reply_bulk_cstr(c, "allocator.allocated");
    reply_int(c, (long long)m.alloc.allocated);
    reply_bulk_cstr(c, "allocator.active");
    reply_int(c, (long long)m.alloc.active);
    reply_bulk_cstr(c, "allocator.resident");
    reply_int(c, (long long)m.alloc.resident);
    reply_bulk_cstr(c, "allocator-fragmentation.ratio");
    reply_double(c, ratio(m.alloc.active, m.alloc.allocated));
    reply_bulk_cstr(c, "allocator-fragmentation.bytes");
    reply_int(c, (long long)m.alloc.active - (long long)m.alloc.allocated);
    reply_bulk_cstr(c, "allocator-rss.ratio");
    reply_double(c, ratio(m.alloc.resident, m.alloc.active));
    reply_bulk_cstr(c, "allocator-rss.bytes");
    reply_int(c, (long long)m.alloc.resident - (long long)m.alloc.active);
    reply_bulk_cstr(c, "rss-overhead.ratio");
    reply_double(c, ratio(m.rss, m.alloc.resident));
    reply_bulk_cstr(c, "rss-overhead.bytes");
    reply_int(c, (long long)m.rss - (long long)m.alloc.resident);
    reply_bulk_cstr(c, "fragmentation");
    reply_double(c, ratio(m.rss, m.used));
    reply_bulk_cstr(c, "fragmentation.bytes");
    reply_int(c, (long long)m.rss - (long long)m.used);
}

/* MEMORY DOCTOR: Redis's checks, for the parts Goblin has. */
void memoryDoctorCommand(client *c) {
    admin_mem_overview m;
    admin_mem_overview_get(&m, NULL, NULL);
    int empty = 0, big_peak = 0, high_frag = 0, high_alloc_frag = 0, high_alloc_rss = 0, high_proc_rss = 0;
    int big_client_buf = 0, reports = 0;
    const long long mb10 = 10 << 20;
    if (m.used < 5 * 1024 * 1024) {
        empty = 1;
        reports++;
    } else {
        if (ratio(m.peak, m.used) > 1.5) big_peak = 1, reports++;
        if (ratio(m.rss, m.used) > 1.4 && (long long)m.rss - (long long)m.used > mb10) high_frag = 1, reports++;
        if (ratio(m.alloc.active, m.alloc.allocated) > 1.1 &&
            (long long)m.alloc.active - (long long)m.alloc.allocated > mb10)
            high_alloc_frag = 1, reports++;
        if (ratio(m.alloc.resident, m.alloc.active) > 1.1 &&
            (long long)m.alloc.resident - (long long)m.alloc.active > mb10)
            high_alloc_rss = 1, reports++;
        if (ratio(m.rss, m.alloc.resident) > 1.1 && (long long)m.rss - (long long)m.alloc.resident > mb10)
            high_proc_rss = 1, reports++;
        long nclients = session_clients_count();
        if (nclients > 0 && m.clients / (size_t)nclients > 1024 * 200) big_client_buf = 1, reports++;
    }
    char *s;
    size_t len;
    FILE *f = open_memstream(&s, &len);
    if (!f) abort();
    if (reports == 0) {
        fputs("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this "
              "base.\n",
              f);
    } else if (empty) {
        fputs("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in "
              "these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam "
              "and I will be back to our programming as soon as I finished rebooting.\n",
              f);
    } else {
        fputs("Sam, I detected a few issues in this Redis instance memory implants:\n\n", f);
        if (big_peak)
            fputs(" * Peak memory: In the past this instance used more than 150% the memory that is currently "
                  "using. The allocator is normally not able to release memory after a peak, so you can expect to "
                  "see a big fragmentation ratio, however this is actually harmless and is only due to the memory "
                  "peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the "
                  "memory will be used as soon as you fill the Redis instance with more data. If the memory peak "
                  "was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, "
                  "otherwise the only other option is to shutdown and restart the instance.\n\n",
                  f);
        if (high_frag)
            fprintf(f,
                    " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 "
                    "(this means that the Resident Set Size of the Redis process is much larger than the sum of the "
                    "logical allocations Redis performed). This problem is usually due either to a large peak "
                    "memory (check if there is a peak memory entry above in the report) or may result from a "
                    "workload that causes the allocator to fragment memory a lot. If the problem is a large peak "
                    "memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and "
                    "not the default libc malloc. Note: The currently used allocator is \"%s\".\n\n",
#ifndef GOBLIN_NO_JEMALLOC
                    "jemalloc-" JEMALLOC_VERSION
#else
                    "libc"
#endif
            );
        if (high_alloc_frag)
            fputs(" * High allocator fragmentation: This instance has an allocator external fragmentation greater "
                  "than 1.1. This problem is usually due either to a large peak memory (check if there is a peak "
                  "memory entry above in the report) or may result from a workload that causes the allocator to "
                  "fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n",
                  f);
        if (high_alloc_rss)
            fputs(" * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 "
                  "(this means that the Resident Set Size of the allocator is much larger than the sum what the "
                  "allocator actually holds). This problem is usually due to a large peak memory (check if there "
                  "is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim "
                  "it.\n\n",
                  f);
        if (high_proc_rss)
            fputs(" * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater "
                  "than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS "
                  "the allocator holds). This problem may be due to Lua scripts or Modules.\n\n",
                  f);
        if (big_client_buf)
            fputs(" * Big client buffers: The clients output buffers in this instance are greater than 200K per "
                  "client (on average). This may result from different causes, like Pub/Sub clients subscribed to "
                  "channels bot not receiving data fast enough, so that data piles on the Redis instance output "
                  "buffer, or clients sending commands with large replies or very large sequences of commands in "
                  "the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it "
                  "causes problems in your instance, or to understand better why certain clients are using a big "
                  "amount of memory.\n\n",
                  f);
        fputs("I'm here to keep you safe, Sam. I want to help you.\n", f);
    }
    fclose(f);
    reply_verbatim(c, s, len, "txt");
    free(s);
}

#ifndef GOBLIN_NO_JEMALLOC
static void malloc_stats_cb(void *arg, const char *s) { fputs(s, (FILE *)arg); }
#endif

void memoryMallocStatsCommand(client *c) {
#ifndef GOBLIN_NO_JEMALLOC
    char *s;
    size_t len;
    FILE *f = open_memstream(&s, &len);
    if (!f) abort();
    malloc_stats_print(malloc_stats_cb, f, NULL);
    fclose(f);
    reply_verbatim(c, s, len, "txt");
    free(s);
#else
    const char *msg = "Stats not supported for the current allocator";
    reply_verbatim(c, msg, strlen(msg), "txt");
#endif
}

void memoryPurgeCommand(client *c) {
    slab_purge();
#ifndef GOBLIN_NO_JEMALLOC
    char cmd[64];
    mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
    snprintf(cmd, sizeof(cmd), "arena.%d.purge", MALLCTL_ARENAS_ALL);
    if (mallctl(cmd, NULL, NULL, NULL, 0) != 0) {
        reply_error(c, "ERR Error purging dirty pages");
        return;
    }
#endif
    reply_ok(c);
}

void memoryHelpCommand(client *c) {
    static const char *const help[] = {
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        NULL,
    };
    admin_reply_help(c, "MEMORY", help);
}

/* ---- DEBUG ------------------------------------------------------------- */

/* Length of the value in an RDB file, for string values (as rdbSavedObjectLen
 * counts it, without LZF compression). */
static size_t rdb_len_header(size_t n) { return n < 64 ? 1 : n < 16384 ? 2 : n <= UINT32_MAX ? 5 : 9; }

static size_t serialized_length(const gobj *o) {
    if (o->type != OBJ_STRING) return obj_mem_usage(o);
    if (o->enc == ENC_INT) {
        int64_t v = o->u.i;
        if (v >= -128 && v <= 127) return 2;
        if (v >= -32768 && v <= 32767) return 3;
        if (v >= INT32_MIN && v <= INT32_MAX) return 5;
    }
    size_t n = strval_len(o);
    return rdb_len_header(n) + n;
}

/* fn on the entry of key argv[2] (raw: no expiry, no access), under the
 * keyspace read lock and the key's shard, or "ERR no such key". */
static void debug_on_key(client *c, void (*fn)(client *c, dbentry *e)) {
    unsigned s = db_shard_of(c->argv[2].p, c->argv[2].n);
    db_rdlock_keyspace();
    gdb *db = cmd_db(c); /* under the lock: SWAPDB renumbers under the write lock */
    db_lock_shard(db, s);
    dbentry *e = db_lookup_raw(db, c->argv[2].p, c->argv[2].n);
    if (!e) reply_error(c, "ERR no such key");
    else fn(c, e);
    db_unlock_shard(db, s);
    db_unlock_keyspace();
}

static void debug_object(client *c, dbentry *e) {
    char buf[256];
    snprintf(buf, sizeof(buf), "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%lld",
             (void *)&e->val, shared_int_value(&e->val) ? INT_MAX : 1, obj_encoding_name(&e->val),
             serialized_length(&e->val), e->val.lru & 0xffffff, obj_idle_seconds(&e->val));
    reply_simple(c, buf);
}

/* Goblin: 1 while the index of the collection at key has a resize in
 * flight (the cron finishes those of idle collections), else 0. */
static void debug_resizing(client *c, dbentry *e) { reply_int(c, obj_rehash_step(&e->val, 0)); }

/* DEBUG SLEEP blocks the whole server in Redis; holding the keyspace write
 * lock blocks every command that touches keys here. */
static void debug_sleep(client *c) {
    double secs = strtod(c->argv[2].p, NULL);
    if (!(secs > 0)) secs = 0;     /* also NaN */
    if (secs > 1e9) secs = 1e9;
    long long us = (long long)(secs * 1000000);
    /* Redis stops whole: no command, and no cron (the keep-alive newlines
     * a replica waiting for its sync gets come from there). */
    int held = cron_is_paused();
    cron_pause(1);
    db_wrlock_keyspace();
    if (us > 0) {
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    db_unlock_keyspace();
    cron_pause(held);
    reply_ok(c);
}

static void debug_protocol(client *c) {
    const garg *t = &c->argv[2];
    if (arg_is(t, "string")) {
        reply_bulk_cstr(c, "Hello World");
    } else if (arg_is(t, "integer")) {
        reply_int(c, 12345);
    } else if (arg_is(t, "double")) {
        reply_double(c, 3.141);
    } else if (arg_is(t, "bignum")) {
        reply_bignum(c, "1234567999999999999999999999999999999", 37);
    } else if (arg_is(t, "null")) {
        reply_null(c);
    } else if (arg_is(t, "array") || arg_is(t, "set")) {
        if (arg_is(t, "array")) reply_array(c, 3);
        else reply_set(c, 3);
        for (int j = 0; j < 3; j++) reply_int(c, j);
    } else if (arg_is(t, "map")) {
        reply_map(c, 3);
        for (int j = 0; j < 3; j++) {
            reply_int(c, j);
            reply_bool(c, j == 1);
        }
    } else if (arg_is(t, "attrib")) {
        if (c->resp >= 3) {
            reply_raw(c, "|1\r\n", 4);
            reply_bulk_cstr(c, "key-popularity");
            reply_array(c, 2);
            reply_bulk_cstr(c, "key:123");
            reply_int(c, 90);
        }
        reply_bulk_cstr(c, "Some real reply following the attribute");
    } else if (arg_is(t, "push")) {
        if (c->resp < 3) {
            reply_error(c, "ERR RESP2 is not supported by this command");
            return;
        }
        reply_push(c, 2);
        reply_bulk_cstr(c, "server-cpu-usage");
        reply_int(c, 42);
        reply_bulk_cstr(c, "Some real reply following the push reply");
    } else if (arg_is(t, "true")) {
        reply_bool(c, 1);
    } else if (arg_is(t, "false")) {
        reply_bool(c, 0);
    } else if (arg_is(t, "verbatim")) {
        reply_verbatim(c, "This is a verbatim\nstring", 25, "txt");
    } else {
        reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
}

static int positive_arg(client *c, const garg *a, long long *v) {
    if (!str_to_ll(a->p, a->n, v) || *v < 0) {
        reply_error(c, "ERR value is out of range, must be positive");
        return -1;
    }
    return 0;
}


/* DEBUG POPULATE count [prefix] [size]: string keys prefix:N = "value:N"
 * (padded with zero bytes or cut to size); existing keys are left alone. */
static void debug_populate(client *c) {
    long long count, size = 0;
    if (positive_arg(c, &c->argv[2], &count) != 0) return;
    if (c->argc == 5 && positive_arg(c, &c->argv[4], &size) != 0) return;
    const char *prefix = c->argc >= 4 ? c->argv[3].p : "key";
    char *val = size ? calloc(1, (size_t)size) : NULL;
    if (size && !val) {
        reply_error(c, "ERR out of memory");
        return;
    }
    db_wrlock_keyspace();
    gdb *db = cmd_db(c);
    for (long long j = 0; j < count; j++) {
        char key[128], v[64];
        int kl = snprintf(key, sizeof(key), "%s:%lld", prefix, j);
        if (kl >= (int)sizeof(key)) kl = (int)sizeof(key) - 1;
        if (db_lookup(db, key, (size_t)kl)) continue;
        int vl = snprintf(v, sizeof(v), "value:%lld", j);
        dbentry *e = db_add(db, key, (size_t)kl);
        if (!e) break;
        int rc;
        if (size) {
            memset(val, 0, (size_t)size);
            memcpy(val, v, (size_t)(size < vl ? size : vl));
            rc = strval_set(&e->val, val, (size_t)size);
        } else {
            rc = strval_set(&e->val, v, (size_t)vl);
        }
        if (rc != 0) {
            db_delete_entry(db, e);
            break;
        }
        /* WATCHers see the new key; the dirty counter does not (as Redis). */
        multi_touch(db->id, key, (size_t)kl);
    }
    db_unlock_keyspace();
    free(val);
    reply_ok(c);
}

/* DEBUG DIGEST and DIGEST-VALUE run under the keyspace write lock, so the
 * dataset (or the set of keys) they sign is one consistent state, as
 * Redis's single thread sees it. Signatures are status replies. */
static void reply_digest_error(client *c) {
    reply_error(c, strval_io_error() ? strval_io_error() : "OOM command not allowed when used memory > 'maxmemory'.");
}

static void debug_digest(client *c) {
    unsigned char d[DIGEST_BYTES];
    db_wrlock_keyspace();
    int rc = digest_dataset(d);
    db_unlock_keyspace();
    if (rc != 0) {
        reply_digest_error(c);
        return;
    }
    char hex[DIGEST_HEX];
    digest_hex(d, hex);
    reply_simple(c, hex);
}

/* One signature per key of the selected database; a missing key signs as
 * all zeros. Keys are looked up without lazy expiry (as Redis: a debug
 * command sees logically expired keys). All are computed before the reply
 * starts, so a tail read error replies one error instead of the array. */
static void debug_digest_value(client *c) {
    int nkeys = c->argc - 2;
    unsigned char *d = calloc(nkeys ? (size_t)nkeys : 1, DIGEST_BYTES);
    if (!d) {
        reply_error(c, "ERR out of memory");
        return;
    }
    int rc = 0;
    db_wrlock_keyspace();
    gdb *db = cmd_db(c);
    for (int j = 0; j < nkeys && rc == 0; j++) {
        dbentry *e = db_lookup_raw(db, c->argv[j + 2].p, c->argv[j + 2].n);
        if (e) rc = digest_entry(e, d + (size_t)j * DIGEST_BYTES);
    }
    db_unlock_keyspace();
    if (rc != 0) {
        reply_digest_error(c);
    } else {
        reply_array(c, nkeys);
        for (int j = 0; j < nkeys; j++) {
            char hex[DIGEST_HEX];
            digest_hex(d + (size_t)j * DIGEST_BYTES, hex);
            reply_simple(c, hex);
        }
    }
    free(d);
}

static void debug_help(client *c) {
    static const char *const help[] = {
        "AOF-FLUSH-SLEEP <microsec>",
        "    Server will sleep before flushing the AOF, this is used for testing.",
        "ASSERT",
        "    Crash by assertion failed.",
        "DIGEST",
        "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]",
        "    Output a hex signature of the values of all the specified keys.",
        "ERROR <string>",
        "    Return a Redis protocol error with <string> as message. Useful for clients",
        "    unit tests to simulate Redis errors.",
        "LOG <message>",
        "    Write <message> to the server log.",
        "LOADAOF",
        "    Flush the AOF buffers on disk and reload the AOF in memory.",
        "REPLICATE <string>",
        "    Replicates the provided string to replicas, allowing data divergence.",
#ifndef GOBLIN_NO_JEMALLOC
        "MALLCTL <key> [<val>]",
        "    Get or set a malloc tuning integer.",
        "MALLCTL-STR <key> [<val>]",
        "    Get or set a malloc tuning string.",
#endif
        "OBJECT <key>",
        "    Show low level info about `key` and associated value.",
        "POPULATE <count> [<prefix>] [<size>]",
        "    Create <count> string keys named key:<num>. If <prefix> is specified then",
        "    it is used instead of the 'key' prefix.",
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
        "    true, false.",
        "RELOAD [option ...]",
        "    Save the RDB on disk and reload it back to memory. By default it will save",
        "    the RDB file and load it back. With NOSAVE the file is only loaded.",
        "SEGFAULT",
        "    Crash the server with sigsegv.",
        "QUICKLIST-PACKED-THRESHOLD <size>",
        "    Sets the threshold for elements to be inserted as plain vs packed nodes",
        "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
        "    (Goblin: checked and accepted; its lists have no plain nodes to choose.)",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "CONFIG-REWRITE-FORCE-ALL",
        "    Like CONFIG REWRITE but writes all configuration options, including",
        "    keywords not listed in original configuration file or default values.",
        "PAUSE-CRON <0|1>",
        "    Stop periodic cron job processing.",
        "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
        "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
        "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
        "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
        "    In case NEVER is provided the last observed peak will never be reset",
        "    In case RESET is provided the peak reset time will be restored to the default value",
        "REPLYBUFFER RESIZING <0|1>",
        "    Enable or disable the reply buffer resize cron job",
        "AOF-FAULT <writes> <fsyncs>",
        "    (Goblin) Fail the AOF writer's next <writes> writes and <fsyncs> fsyncs",
        "    with an I/O error.",
        "RESIZING <key>",
        "    (Goblin) 1 while the index of the collection at <key> has a resize in",
        "    flight (the cron finishes the resizes of idle collections), else 0.",
        "SSD-FAULT <writes> <reads> [<submits>]",
        "    (Goblin) Fail the next <writes> SSD tail writes and <reads> tail reads",
        "    with an I/O error, and refuse the next <submits> submissions of",
        "    streamed tail reads to the kernel (they are retried).",
        NULL,
    };
    admin_reply_help(c, "DEBUG", help);
}

#ifndef GOBLIN_NO_JEMALLOC
/* DEBUG MALLCTL <key> [<val>]: a jemalloc control read (and written) as an
 * integer. Its width is not known from its name: 8 bytes are tried, then
 * 4, 2 and 1 while jemalloc answers EINVAL (a size mismatch); a control
 * that can only be written (EPERM on the read) is written alone. */
static void debug_mallctl_int(client *c) {
    const char *name = c->argv[2].p;
    int set = c->argc > 3;
    long long v = 0;
    if (set && arg_ll(c, &c->argv[3], &v) != 0) return;
    for (size_t sz = 8; sz > 0; sz /= 2) {
        unsigned char old[8] = {0}, val[8];
        /* The low sz bytes of v (little-endian, as this build's targets). */
        memcpy(val, &v, sizeof(val));
        size_t osz = sz;
        int rc = mallctl(name, old, &osz, set ? val : NULL, set ? sz : 0);
        if (rc == EPERM && set) rc = mallctl(name, NULL, NULL, val, sz);
        else if (rc == 0) {
            int64_t o = 0;
            memcpy(&o, old, sz);
            if (sz < 8 && (old[sz - 1] & 0x80) && sz != 1) o |= (int64_t)(~(uint64_t)0 << (8 * sz));
            reply_int(c, (long long)o);
            return;
        }
        if (rc == 0) {
            reply_ok(c);
            return;
        }
        if (rc != EINVAL) {
            reply_errorf(c, "ERR %s", strerror(rc));
            return;
        }
    }
    reply_errorf(c, "ERR %s", strerror(EINVAL));
}

/* DEBUG MALLCTL-STR <key> [<val>]: a jemalloc control read (and written)
 * as a string; the value VOID writes nothing but calls the control (as
 * thread.tcache.flush wants). */
static void debug_mallctl_str(client *c) {
    const char *name = c->argv[2].p;
    const char *old = NULL;
    size_t sz = sizeof(old);
    int rrc = mallctl(name, &old, &sz, NULL, 0);
    if (rrc && !(rrc == EPERM && c->argc > 3)) {
        reply_errorf(c, "ERR %s", strerror(rrc));
        return;
    }
    int wrc = 0;
    if (c->argc > 3) {
        const char *val = c->argv[3].p;
        wrc = strcmp(val, "VOID") == 0 ? mallctl(name, NULL, NULL, NULL, 0) : mallctl(name, NULL, NULL, &val, sizeof(val));
    }
    if (!rrc) reply_bulk(c, old ? old : "", old ? strlen(old) : 0);
    else if (wrc) reply_errorf(c, "ERR %s", strerror(wrc));
    else reply_ok(c);
}
#endif

/* DEBUG REPLYBUFFER PEAK-RESET-TIME <NEVER|RESET|ms> | RESIZING <0|1>. */
static void debug_replybuffer(client *c) {
    const garg *what = &c->argv[2], *v = &c->argv[3];
    if (arg_is(what, "peak-reset-time")) {
        long long ms = SESSION_REPLYBUF_PEAK_RESET_MS;
        if (arg_is(v, "never")) {
            ms = -1;
        } else if (!arg_is(v, "reset") && !str_to_ll(v->p, v->n, &ms)) {
            reply_error(c, "ERR value is not an integer or out of range");
            return;
        }
        __atomic_store_n(&session_replybuf_peak_reset_ms, (long)ms, __ATOMIC_RELAXED);
    } else if (arg_is(what, "resizing")) {
        __atomic_store_n(&session_replybuf_resizing, atoi(v->p), __ATOMIC_RELAXED);
    } else {
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.128s'. Try DEBUG HELP.",
                     c->argv[1].p);
        return;
    }
    reply_ok(c);
}

void debugCommand(client *c) {
    if (!admin_protected_allowed(c, "enable-debug-command")) {
        reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
                       "can run it from a local connection, otherwise you need to set this option in the "
                       "configuration file, and then restart the server.");
        return;
    }
    const garg *sub = &c->argv[1];
    if (c->argc == 2 && arg_is(sub, "help")) {
        debug_help(c);
    } else if (c->argc == 3 && arg_is(sub, "sleep")) {
        debug_sleep(c);
    } else if (arg_is(sub, "reload")) {
        int nosave = 0, noflush = 0;
        for (int j = 2; j < c->argc; j++) {
            if (!arg_is(&c->argv[j], "merge") && !arg_is(&c->argv[j], "noflush") && !arg_is(&c->argv[j], "nosave")) {
                reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
                return;
            }
            if (arg_is(&c->argv[j], "nosave")) nosave = 1;
            if (arg_is(&c->argv[j], "noflush")) noflush = 1;
        }
        /* Redis loads the file into the dataset as it is with NOFLUSH
         * (MERGE: its keys replace the ones there). Goblin's reload always
         * replaces the dataset, so NOFLUSH is refused before anything is
         * saved or loaded rather than dropping what the file lacks; MERGE
         * alone changes nothing in Redis either. */
        if (noflush) {
            reply_error(c, "ERR DEBUG RELOAD NOFLUSH is not supported: the reload replaces the dataset");
            return;
        }
        char err[1024];
        if (persist_debug_reload(nosave, err, sizeof(err)) != 0) {
            reply_errorf(c, "ERR Error trying to load the RDB dump: %s", err);
            return;
        }
        reply_ok(c);
    } else if (c->argc == 2 && arg_is(sub, "loadaof")) {
        char err[1024];
        if (persist_debug_loadaof(err, sizeof(err)) != 0) {
            reply_errorf(c, "ERR %s", err);
            return;
        }
        reply_ok(c);
    } else if (c->argc == 2 && arg_is(sub, "digest")) {
        debug_digest(c);
    } else if (arg_is(sub, "digest-value")) {
        debug_digest_value(c);
    } else if (c->argc == 3 && arg_is(sub, "object")) {
        debug_on_key(c, debug_object);
    } else if (c->argc == 3 && arg_is(sub, "resizing")) {
        debug_on_key(c, debug_resizing);
    } else if (c->argc == 3 && arg_is(sub, "set-active-expire")) {
        int on = atoi(c->argv[2].p);
        __atomic_store_n(&db_active_expire_enabled, on, __ATOMIC_RELAXED); /* read by the cron thread */
        cfg.active_expire = on;
        reply_ok(c);
#ifndef GOBLIN_NO_JEMALLOC
    } else if (c->argc >= 3 && arg_is(sub, "mallctl")) {
        debug_mallctl_int(c);
    } else if (c->argc >= 3 && arg_is(sub, "mallctl-str")) {
        debug_mallctl_str(c);
#endif
    } else if (c->argc == 2 && arg_is(sub, "segfault")) {
        /* A write to a read-only page: a real SIGSEGV, as Redis's. */
        volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) *p = 'x';
        reply_error(c, "ERR could not map a read-only page");
    } else if (c->argc == 2 && arg_is(sub, "assert")) {
        log_warn("=== ASSERTION FAILED ===");
        log_warn("==> DEBUG ASSERT: crashing on purpose");
        abort();
    } else if (c->argc == 3 && arg_is(sub, "aof-flush-sleep")) {
        long long us;
        if (arg_ll(c, &c->argv[2], &us) != 0) return;
        aof_set_flush_sleep(us < 0 ? 0 : us > 10000000 ? 10000000 : (int)us);
        reply_ok(c);
    } else if (c->argc >= 3 && arg_is(sub, "replicate")) {
        int n = c->argc - 2;
        const char **p = malloc(sizeof(char *) * (size_t)n);
        size_t *l = malloc(sizeof(size_t) * (size_t)n);
        if (!p || !l) abort();
        for (int i = 0; i < n; i++) {
            p[i] = c->argv[2 + i].p;
            l[i] = c->argv[2 + i].n;
        }
        prop_direct_repl(n, p, l);
        free(p);
        free(l);
        reply_ok(c);
    } else if (c->argc == 3 && arg_is(sub, "quicklist-packed-threshold")) {
        /* Redis stores a list element above the threshold in a node of its
         * own. A Goblin list chunk already holds any element whole (one
         * larger than a chunk gets a chunk of its size), so there is no
         * choice to make: the size is checked as Redis checks it, no more. */
        long long sz;
        if (config_parse_size(c->argv[2].p, &sz) != 0 || sz < 0 || sz > (1LL << 32) - (1LL << 20))
            reply_error(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        else
            reply_ok(c);
    } else if (c->argc == 3 && arg_is(sub, "set-disable-deny-scripts")) {
        script_set_disable_deny(atoi(c->argv[2].p));
        reply_ok(c);
    } else if (c->argc == 2 && arg_is(sub, "config-rewrite-force-all")) {
        char err[512];
        config_lock();
        int rc = config_rewrite(1, err, sizeof(err));
        config_unlock();
        if (rc != 0) reply_errorf(c, "ERR CONFIG-REWRITE-FORCE-ALL failed: %s", err);
        else reply_ok(c);
    } else if (c->argc == 3 && arg_is(sub, "pause-cron")) {
        cron_pause(atoi(c->argv[2].p) != 0);
        reply_ok(c);
    } else if (c->argc == 3 && arg_is(sub, "set-skip-checksum-validation")) {
        rdb_set_skip_checksum(atoi(c->argv[2].p) != 0);
        reply_ok(c);
    } else if (c->argc == 3 && arg_is(sub, "defrag-budget")) {
        /* Goblin: the entry pools' compaction time per cron tick, in
         * microseconds (tests slow a pass down to see it run). */
        long long us;
        if (arg_ll(c, &c->argv[2], &us) != 0) return;
        if (us < 0 || us > 1000000) {
            reply_error(c, "ERR budget must be between 0 and 1000000 microseconds");
            return;
        }
        db_defrag_budget_set((unsigned)us);
        reply_ok(c);
    } else if (c->argc == 4 && arg_is(sub, "replybuffer")) {
        debug_replybuffer(c);
    } else if (c->argc == 3 && arg_is(sub, "protocol")) {
        debug_protocol(c);
    } else if (c->argc == 3 && arg_is(sub, "error")) {
        /* Sent as is: not counted as an error reply, as in Redis. */
        reply_raw(c, "-", 1);
        for (size_t i = 0; i < c->argv[2].n; i++) {
            char ch = c->argv[2].p[i];
            reply_raw(c, ch == '\r' || ch == '\n' ? " " : &ch, 1);
        }
        reply_raw(c, "\r\n", 2);
    } else if (c->argc == 3 && arg_is(sub, "log")) {
        log_warn("DEBUG LOG: %s", c->argv[2].p);
        reply_ok(c);
    } else if (c->argc == 4 && arg_is(sub, "aof-fault")) {
        long long w, f;
        if (arg_ll(c, &c->argv[2], &w) != 0 || arg_ll(c, &c->argv[3], &f) != 0) return;
        if (w < 0 || f < 0 || w > INT_MAX || f > INT_MAX) {
            reply_error(c, "ERR fault counts must be between 0 and 2147483647");
            return;
        }
        aof_inject_faults((int)w, (int)f);
        reply_ok(c);
    } else if ((c->argc == 4 || c->argc == 5) && arg_is(sub, "ssd-fault")) {
        /* Goblin: fail the next <writes> tail writes and <reads> tail reads
         * with EIO, and refuse the next [<submits>] submissions of streamed
         * reads (fault tests of the SSD pool). */
        long long w, r, q = 0;
        if (arg_ll(c, &c->argv[2], &w) != 0 || arg_ll(c, &c->argv[3], &r) != 0) return;
        if (c->argc == 5 && arg_ll(c, &c->argv[4], &q) != 0) return;
        if (w < 0 || r < 0 || q < 0 || w > INT_MAX || r > INT_MAX || q > INT_MAX) {
            reply_error(c, "ERR fault counts must be between 0 and 2147483647");
            return;
        }
        ssdtail_inject((int)w, (int)r);
        ssdtail_inject_submit((int)q);
        reply_ok(c);
    } else if (c->argc >= 3 && c->argc <= 5 && arg_is(sub, "populate")) {
        debug_populate(c);
    } else {
        admin_reply_subcommand_syntax(c, "DEBUG");
    }
}
