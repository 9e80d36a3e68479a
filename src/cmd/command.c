/* command.c -- command table and dispatch.
 *
 * The recipe every call follows (cmd_execute): look the command up (resolving
 * subcommands), check arity, check authentication, then cmd_call(): take the
 * locks the command's key positions name (keyspace read lock + shards in
 * ascending order; or the keyspace write lock for whole-keyspace commands),
 * run the handler, release, record statistics, feed the slow log and
 * MONITOR. Handlers never take locks themselves unless they say so
 * (CMD_LOCK_SELF; CMD_LOCK_READ takes the shards). */
#include "cmd/cluster/cluster.h"
#include "cmd/command.h"
#include "cmd/multi.h"
#include "cmd/propagate.h"
#include "cmd/repl/repl.h"
#include "cmd/server/pubsub.h"
#include "cmd/tracking.h"

#include <assert.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cmd/server/acl.h"
#include "cmd/server/admin_family.h"
#include "cmd/server/function.h"
#include "cmd/server/script.h"
#include "cmd/blocking.h"
#include "cmd/evict.h"
#include "session/reply.h"
#include "cmd/slowlog.h"
#include "db/mcmeta.h"
#include "db/strval.h"
#include "util/endian.h"
#include "util/lathist.h"
#include "util/monotime.h"
#include "util/strutil.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "base/config.h"
#include "base/log.h"
#include "base/tstat.h"

typedef struct cmd_meta {
    const char *name, *parent;
    int arity;
    const char *flags;
    int first, last, step;
    const char *acl, *info, *docs;
    size_t info_len, docs_len;
} cmd_meta;

#define CMD_META(n, p, a, f, fk, lk, st, acl, info, docs) \
    {n, p, a, f, fk, lk, st, acl, info, docs, sizeof(info) - 1, sizeof(docs) - 1},
static const cmd_meta meta_table[] = {
#include "cmd/command_meta.inc"
};
#undef CMD_META

#define NDEFS (sizeof(meta_table) / sizeof(meta_table[0]))

static cmd_def *defs;          /* one per meta entry */
static size_t ndefs;
static size_t ntop;
static cmd_monitor_fn *monitor_hook;

/* INFO commandstats, counted per thread: each tstat slot (base/tstat.h)
 * has an array of one cmd_tstat per defs entry (its ext), made by the
 * first thread that runs a command with that slot and kept for the slot's
 * later owners. */
typedef struct cmd_tstat {
    uint64_t calls, usec, failed;
    /* The latency histogram (util/lathist.h) of this thread's calls, made
     * on the first call counted in it: LATHIST_LEN counters, then their
     * total. hist_gen: the reset generation its counts belong to (a
     * CONFIG RESETSTAT makes every older histogram count as empty). */
    uint64_t *hist;
    uint64_t hist_gen;
} cmd_tstat;

/* Bumped by every CONFIG RESETSTAT (cmd_latency_reset). */
static uint64_t hist_gen_now = 1;

#define HIST_WORDS (LATHIST_LEN + 1)

/* Count one call of dur_us microseconds in this thread's histogram of t.
 * Only the owner writes the words (relaxed stores, as tstat_word_add);
 * readers sum them with relaxed loads. */
static void cmd_hist_add(cmd_tstat *t, long long dur_us) {
    uint64_t gen = __atomic_load_n(&hist_gen_now, __ATOMIC_RELAXED);
    uint64_t *h = t->hist;
    if (__builtin_expect(h == NULL, 0)) {
        h = calloc(HIST_WORDS, sizeof(uint64_t));
        if (!h) return;
        __atomic_store_n(&t->hist_gen, gen, __ATOMIC_RELAXED);
        __atomic_store_n(&t->hist, h, __ATOMIC_RELEASE);
    } else if (t->hist_gen != gen) {
        /* Counts of before the reset: readers already skip them. */
        for (int i = 0; i < HIST_WORDS; i++) __atomic_store_n(&h[i], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&t->hist_gen, gen, __ATOMIC_RELEASE);
    }
    int64_t ns = (int64_t)dur_us * 1000;
    if (ns < LATHIST_MIN) ns = LATHIST_MIN;
    if (ns > LATHIST_MAX) ns = LATHIST_MAX;
    tstat_word_add(&h[lathist_index(ns)], 1);
    tstat_word_add(&h[LATHIST_LEN], 1);
}

static cmd_tstat *cmd_tstat_of(tstat_slot *s) {
    cmd_tstat *t = __atomic_load_n(&s->ext, __ATOMIC_RELAXED); /* the owner's own */
    if (__builtin_expect(t != NULL, 1)) return t;
    size_t bytes = (ndefs * sizeof(cmd_tstat) + 63) & ~(size_t)63;
    t = aligned_alloc(64, bytes); /* no line shared with another slot's */
    if (!t) return NULL;
    memset(t, 0, bytes);
    __atomic_store_n(&s->ext, t, __ATOMIC_RELEASE);
    return t;
}

/* The sums over every slot of the counts of defs[i], from the start. */
static void cmd_tstat_sum(size_t i, cmd_tstat *sum) {
    memset(sum, 0, sizeof(*sum));
    for (const tstat_slot *s = tstat_first(); s; s = s->next) {
        const cmd_tstat *t = __atomic_load_n(&s->ext, __ATOMIC_ACQUIRE);
        if (!t) continue;
        sum->calls += __atomic_load_n(&t[i].calls, __ATOMIC_RELAXED);
        sum->usec += __atomic_load_n(&t[i].usec, __ATOMIC_RELAXED);
        sum->failed += __atomic_load_n(&t[i].failed, __ATOMIC_RELAXED);
    }
}

int cmd_latency_hist(const cmd_def *d, uint64_t *counts, uint64_t *total) {
    size_t i = (size_t)(d - defs);
    uint64_t gen = __atomic_load_n(&hist_gen_now, __ATOMIC_RELAXED);
    int found = 0;
    memset(counts, 0, LATHIST_LEN * sizeof(uint64_t));
    *total = 0;
    for (const tstat_slot *s = tstat_first(); s; s = s->next) {
        const cmd_tstat *t = __atomic_load_n(&s->ext, __ATOMIC_ACQUIRE);
        if (!t) continue;
        const uint64_t *h = __atomic_load_n(&t[i].hist, __ATOMIC_ACQUIRE);
        if (!h || __atomic_load_n(&t[i].hist_gen, __ATOMIC_ACQUIRE) != gen) continue;
        found = 1;
        for (int j = 0; j < LATHIST_LEN; j++) counts[j] += __atomic_load_n(&h[j], __ATOMIC_RELAXED);
    }
    if (!found) return 0;
    /* The total is the counters' own sum, so that the distribution always
     * ends at it even while owners add. */
    for (int j = 0; j < LATHIST_LEN; j++) *total += counts[j];
    return 1;
}

void cmd_latency_reset(void) { __atomic_add_fetch(&hist_gen_now, 1, __ATOMIC_RELAXED); }

static uint64_t since(uint64_t sum, const uint64_t *base) {
    uint64_t b = __atomic_load_n(base, __ATOMIC_RELAXED);
    return sum > b ? sum - b : 0; /* a reset racing with the sum may have taken a larger one */
}

void cmd_stats_get(const cmd_def *d, cmd_stats *out) {
    cmd_tstat sum;
    cmd_tstat_sum((size_t)(d - defs), &sum);
    out->calls = since(sum.calls, &d->base_calls);
    out->usec = since(sum.usec, &d->base_usec);
    out->failed = since(sum.failed, &d->base_failed);
    out->rejected = __atomic_load_n(&d->rejected, __ATOMIC_RELAXED);
}

void cmd_stats_reset(const cmd_def *d) {
    cmd_def *w = &defs[d - defs];
    cmd_tstat sum;
    cmd_tstat_sum((size_t)(d - defs), &sum);
    __atomic_store_n(&w->base_calls, sum.calls, __ATOMIC_RELAXED);
    __atomic_store_n(&w->base_usec, sum.usec, __ATOMIC_RELAXED);
    __atomic_store_n(&w->base_failed, sum.failed, __ATOMIC_RELAXED);
    __atomic_store_n(&w->rejected, 0, __ATOMIC_RELAXED);
}

/* The command-name index: a full name in any case -> its implemented
 * cmd_def. Open addressing with linear probing; a slot holds the defs[]
 * position + 1 of a command (0: empty). NAME_SLOTS is at least four times
 * the metadata rows, so the table stays under a quarter full and a lookup
 * usually reads one slot. A name is read as NAME_WORDS 64-bit words, eight
 * bytes each, zero-padded, with ASCII upper case folded to lower on the
 * whole word at once (SWAR): the hash mixes the words and a probe compares
 * the length and the words, so a lookup neither copies the name nor
 * compares it byte by byte. Full names are lowercase and at most
 * NAME_WORDS * 8 bytes (checked when added). Filled while the families
 * register, before any worker runs; read-only after. */
#define NAME_SLOTS 2048
#define NAME_SLOT_BITS 11
#define NAME_WORDS 4
_Static_assert(NDEFS * 4 <= NAME_SLOTS && NAME_SLOTS == 1 << NAME_SLOT_BITS, "the name index must stay under a quarter full");
static uint16_t name_slots[NAME_SLOTS];
static struct {
    uint64_t w[NAME_WORDS]; /* the full name, as name_words reads it */
    size_t len;
} name_keys[NDEFS];
static size_t name_max; /* the longest name in the index */

/* p[0..n), 0 <= n <= 8, as a little-endian word, zero-padded, lowercase.
 * Reads only p[0..n): from 4 bytes on, two 4-byte loads that may overlap
 * (an overlapping byte lands on the same place twice); below, the first,
 * middle and last bytes, which cover 1 to 3 bytes the same way. */
static inline uint64_t name_word(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    uint64_t w;
    if (n >= 4) w = le_get32(p) | (uint64_t)le_get32(p + n - 4) << (8 * (n - 4));
    else if (n) w = p[0] | (uint64_t)p[n / 2] << (8 * (n / 2)) | (uint64_t)p[n - 1] << (8 * (n - 1));
    else w = 0;
    /* Per byte b below 0x80: b + 0x3f carries into bit 7 iff b >= 'A',
     * b + 0x25 iff b > 'Z'; no carry crosses a byte. */
    const uint64_t ones7 = 0x7f7f7f7f7f7f7f7fULL, high = 0x8080808080808080ULL;
    uint64_t b7 = w & ones7;
    uint64_t upper = (b7 + 0x3f3f3f3f3f3f3f3fULL) & ~(b7 + 0x2525252525252525ULL) & ~w & high;
    return w | (upper >> 2);
}

#define NAME_MUL 0x9e3779b97f4a7c15ULL

static inline size_t name_slot_of(uint64_t h) { return (size_t)(h >> (64 - NAME_SLOT_BITS)); }

/* Fills w with the name's words (n <= NAME_WORDS * 8); returns the slot its
 * hash points to. The hash of a name of one word is (n ^ w[0]) * NAME_MUL,
 * which name_find computes on its own for those. */
static size_t name_words(const char *p, size_t n, uint64_t w[NAME_WORDS]) {
    w[0] = name_word(p, n < 8 ? n : 8);
    w[1] = w[2] = w[3] = 0;
    uint64_t h = (n ^ w[0]) * NAME_MUL;
    for (size_t k = 1; k < NAME_WORDS && 8 * k < n; k++) {
        size_t left = n - 8 * k;
        w[k] = name_word(p + 8 * k, left < 8 ? left : 8);
        h = (h ^ w[k]) * NAME_MUL;
    }
    return name_slot_of(h);
}

static __attribute__((noinline)) const cmd_def *name_find_long(const char *p, size_t n) {
    uint64_t w[NAME_WORDS];
    for (size_t i = name_words(p, n, w); name_slots[i]; i = (i + 1) & (NAME_SLOTS - 1)) {
        size_t k = name_slots[i] - 1u;
        const uint64_t *kw = name_keys[k].w;
        if (name_keys[k].len == n && !((w[0] ^ kw[0]) | (w[1] ^ kw[1]) | (w[2] ^ kw[2]) | (w[3] ^ kw[3])))
            return &defs[k];
    }
    return NULL;
}

/* Most names are one word (GET, HSET, ZRANGE): one load, one multiply. */
static const cmd_def *name_find(const char *p, size_t n) {
    if (n > 8) return n > name_max ? NULL : name_find_long(p, n);
    uint64_t w = name_word(p, n);
    for (size_t i = name_slot_of((n ^ w) * NAME_MUL); name_slots[i]; i = (i + 1) & (NAME_SLOTS - 1)) {
        size_t k = name_slots[i] - 1u;
        if (name_keys[k].w[0] == w && name_keys[k].len == n) return &defs[k];
    }
    return NULL;
}

static unsigned char name_indexed[NDEFS]; /* the def is in the index */
static char *name_renamed[NDEFS];         /* rename-command: found by this name ("": none), NULL: its own */

/* Puts def k in the index under name (lowercase, not there yet). */
static void name_insert(size_t k, const char *name) {
    size_t n = strlen(name);
    assert(n > 0 && n <= NAME_WORDS * 8);
    for (size_t j = 0; j < n; j++) assert(name[j] < 'A' || name[j] > 'Z');
    size_t i = name_words(name, n, name_keys[k].w);
    name_keys[k].len = n;
    while (name_slots[i]) i = (i + 1) & (NAME_SLOTS - 1);
    name_slots[i] = (uint16_t)(k + 1);
    if (n > name_max) name_max = n;
}

/* Adds d unless its name is in the index already. */
static void name_add(const cmd_def *d) {
    if (name_find(d->fullname, strlen(d->fullname))) return;
    size_t k = (size_t)(d - defs);
    name_indexed[k] = 1;
    name_insert(k, d->fullname);
}

int cmd_registered(const cmd_def *d) { return d >= defs && d < defs + ndefs && name_indexed[d - defs]; }

int cmd_rename(const char *from, const char *to, char *err, size_t errlen) {
    char t[NAME_WORDS * 8 + 1];
    size_t tn = strlen(to);
    const cmd_def *d = name_find(from, strlen(from)); /* any case */
    if (!d || d->parent) {
        snprintf(err, errlen, "No such command in rename-command");
        return -1;
    }
    for (size_t j = 0; j < tn && j < sizeof(t) - 1; j++) t[j] = (char)tolower((unsigned char)to[j]);
    t[tn < sizeof(t) ? tn : sizeof(t) - 1] = '\0';
    if (tn && (tn >= sizeof(t) || strchr(t, '|'))) {
        snprintf(err, errlen, "The new command name is longer than %d bytes or has a '|'", NAME_WORDS * 8);
        return -1;
    }
    if (tn && name_find(t, tn)) {
        snprintf(err, errlen, "Target command name already exists");
        return -1;
    }
    size_t k = (size_t)(d - defs);
    free(name_renamed[k]);
    name_renamed[k] = strdup(t);
    /* The index again, every def under the name it is found by. */
    memset(name_slots, 0, sizeof(name_slots));
    name_max = 0;
    for (size_t i = 0; i < ndefs; i++) {
        const char *name = name_renamed[i] ? name_renamed[i] : defs[i].fullname;
        if (name_indexed[i] && name[0]) name_insert(i, name);
    }
    return 0;
}

static uint32_t parse_flags(const char *s) {
    static const struct {
        const char *name;
        uint32_t bit;
    } names[] = {
        {"write", CMDF_WRITE}, {"readonly", CMDF_READONLY}, {"denyoom", CMDF_DENYOOM},
        {"admin", CMDF_ADMIN}, {"pubsub", CMDF_PUBSUB}, {"noscript", CMDF_NOSCRIPT},
        {"blocking", CMDF_BLOCKING}, {"loading", CMDF_LOADING}, {"stale", CMDF_STALE},
        {"skip_monitor", CMDF_SKIP_MONITOR}, {"skip_slowlog", CMDF_SKIP_SLOWLOG},
        {"fast", CMDF_FAST}, {"no_auth", CMDF_NO_AUTH}, {"may_replicate", CMDF_MAY_REPLICATE},
        {"no_multi", CMDF_NO_MULTI}, {"movablekeys", CMDF_MOVABLEKEYS},
        {"allow_busy", CMDF_ALLOW_BUSY}, {"no_mandatory_keys", CMDF_NO_MANDATORY_KEYS},
        {"no_async_loading", CMDF_NO_ASYNC_LOADING},
    };
    uint32_t f = 0;
    while (*s) {
        while (*s == ' ') s++;
        size_t n = strcspn(s, " ");
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (strlen(names[i].name) == n && strncmp(names[i].name, s, n) == 0) f |= names[i].bit;
        s += n;
    }
    return f;
}

static cmd_def *def_by_fullname(const char *name) {
    for (size_t i = 0; i < ndefs; i++)
        if (strcmp(defs[i].fullname, name) == 0) return &defs[i];
    return NULL;
}

/* Every signalled change dirties the clients that WATCH the key. */
/* It also signals the key to blocked clients: a stream reader of a group
 * learns that its key was deleted or overwritten (Redis signals a stream
 * key that goes); other waiters re-check and keep waiting. */
static cmd_key_observer_fn *key_observer;

void cmd_set_key_observer(cmd_key_observer_fn *fn) { key_observer = fn; }

/* Set while a whole-database change whose WATCH effect was dealt with
 * apart is signalled (cmd_db_modified_watched). */
static _Thread_local int watch_done;

static void on_key_modified(gdb *db, const char *key, size_t klen) {
    mcmeta_forget(db, key, klen); /* a new item to memcache: flags 0, new CAS */
    if (!watch_done) multi_touch(db ? db->id : -1, key, klen);
    if (key_observer) key_observer(db ? db->id : -1, key, klen);
    prop_count_change();
    if (!block_count() || !prop_in_call()) return;
    if (db && key) {
        block_signal_key(db, key, klen);
    } else if (db) {
        block_signal_db_all(db);
    } else {
        for (int i = 0; i < db_count(); i++) block_signal_db_all(db_get(i));
    }
}

/* Set on the cron thread while its active expiry cycle runs: the keys it
 * removes are signalled to blocked clients as a command's would be. */
static _Thread_local int expiring_actively;

static void on_key_added(gdb *db, const char *key, size_t klen) { cmd_notify(NULL, NOTIFY_NEW, "new", db, key, klen); }

static void on_key_missed(gdb *db, const char *key, size_t klen) {
    cmd_notify(NULL, NOTIFY_KEY_MISS, "keymiss", db, key, klen);
}

static void on_key_expired(gdb *db, const char *key, size_t klen) {
    mcmeta_forget(db, key, klen);
    /* Redis does not count expiry in the dirty counter. */
    multi_touch(db->id, key, klen);
    if (tracking_active()) tracking_key_modified(NULL, key, klen);
    prop_deletion(db->id, PROP_DEL_EXPIRED, key, klen);
    cmd_notify(NULL, NOTIFY_EXPIRED, "expired", db, key, klen);
    if (block_count() && (prop_in_call() || expiring_actively)) block_signal_key(db, key, klen);
}

size_t cmd_active_expire_cycle(long long budget_us, int effort, long long *took_us) {
    expiring_actively = 1;
    size_t n = db_active_expire_cycle(budget_us, effort, took_us);
    expiring_actively = 0;
    /* The keyspace locks are released: hand the removed keys' waiters a
     * retry (a group reader learns its stream is gone). */
    block_handle_ready();
    return n;
}

/* A load replaced the dataset: as after FLUSHALL, no cached key holds. */
static void on_dataset_replaced(void) {
    if (tracking_active()) tracking_invalidate_all();
}

/* Redis 7.0's MAY_REPLICATE commands: COMMAND INFO does not show the flag
 * (so the stored metadata lacks it), CLIENT PAUSE WRITE holds them. */
static int may_replicate(const char *name) {
    static const char *const names[] = {"publish", "spublish", "pfcount", "eval", "evalsha", "fcall", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

/* replica-ignore-disk-write-errors. A write of the primary's stream that
 * this replica cannot persist (its AOF cannot be written, or its last save
 * failed under stop-writes-on-bgsave-error): as Redis 7.0, the replica
 * panics by default, rather than go on with a dataset its own files will
 * not have after a restart; with yes it logs (every 10 s) and applies it. */
static int ignore_disk_write_errors;

static void primary_write_check(void) {
    char err[256];
    if (!persist_writes_refused() && !aof_write_error(err, sizeof(err))) return;
    if (!__atomic_load_n(&ignore_disk_write_errors, __ATOMIC_RELAXED)) {
        log_warn("Guru Meditation: Replica was unable to write command to disk.");
        abort();
    }
    static int64_t last_log_ms; /* the replication thread's */
    int64_t now = db_now_ms();
    if (now - last_log_ms > 10000) {
        last_log_ms = now;
        log_warn("Replica is applying a command even though it is unable to write to disk.");
    }
}

void cmd_table_init(void) {
    if (config_bind_int("replica-ignore-disk-write-errors", &ignore_disk_write_errors)) abort();
    reply_config_register();
    static const db_hooks hooks = {on_key_expired, on_key_modified, on_dataset_replaced, on_key_added, on_key_missed};
    db_set_hooks(&hooks);
    prop_config_register();
    ndefs = NDEFS;
    defs = calloc(ndefs, sizeof(cmd_def));
    assert(defs);
    for (size_t i = 0; i < ndefs; i++) {
        const cmd_meta *m = &meta_table[i];
        cmd_def *d = &defs[i];
        d->fullname = m->name;
        const char *bar = strchr(m->name, '|');
        d->name = bar ? bar + 1 : m->name;
        d->arity = m->arity;
        d->flags = parse_flags(m->flags);
        if (prop_no_own_record(m->name)) d->flags |= CMDF_NO_OWN_RECORD;
        if (!strcmp(m->name, "randomkey") || !strcmp(m->name, "scan")) d->flags |= CMDF_ARBITRARY_KEYS;
        if (may_replicate(m->name)) d->flags |= CMDF_MAY_REPLICATE;
        d->flags_str = m->flags;
        d->acl_str = m->acl;
        d->first = m->first;
        d->last = m->last;
        d->step = m->step;
        d->info = m->info;
        d->info_len = m->info_len;
        d->docs = m->docs;
        d->docs_len = m->docs_len;
    }
    for (size_t i = 0; i < ndefs; i++)
        if (meta_table[i].parent) defs[i].parent = def_by_fullname(meta_table[i].parent);
}

void cmd_register(const cmd_handler *h) {
    for (; h->name; h++) {
        cmd_def *d = def_by_fullname(h->name);
        if (!d) {
            fprintf(stderr, "goblin: no Redis 7.0 metadata for command '%s'\n", h->name);
            abort();
        }
        assert(!d->proc);
        d->proc = h->proc;
        d->lock = h->lock;
        name_add(d);
        if (d->parent) {
            cmd_def *p = (cmd_def *)d->parent;
            p->subs = realloc(p->subs, sizeof(cmd_def *) * (size_t)(p->nsubs + 2));
            p->subs[p->nsubs++] = d;
            p->subs[p->nsubs] = NULL;
            if (!p->proc) {
                /* A container command is implemented once any subcommand is. */
                p->proc = NULL;
                if (!name_find(p->fullname, strlen(p->fullname))) {
                    name_add(p);
                    ntop++;
                }
            }
        } else {
            ntop++;
        }
    }
}

const cmd_def *cmd_lookup(const char *name, size_t len) { return name_find(name, len); }

const cmd_def *cmd_lookup_full(garg *argv, int argc) {
    const cmd_def *d = cmd_lookup(argv[0].p, argv[0].n);
    if (!d || !d->subs || argc < 2) return d;
    char full[160];
    int n = snprintf(full, sizeof(full), "%s|%.*s", d->name, (int)(argv[1].n > 100 ? 100 : argv[1].n), argv[1].p);
    const cmd_def *s = cmd_lookup(full, (size_t)n);
    return s && s->parent == d ? s : NULL;
}

size_t cmd_count_top(void) { return ntop; }

const cmd_def *cmd_table(size_t *n) {
    *n = ndefs;
    return defs;
}

void cmd_each(cmd_each_fn *fn, void *arg) {
    for (size_t i = 0; i < ndefs; i++) {
        cmd_def *d = &defs[i];
        if (d->parent) continue;
        if (d->proc || d->subs) fn(arg, d);
    }
}

int cmd_key_positions(const cmd_def *cmd, int argc, int *idx, int max) {
    if (cmd->first <= 0) return 0;
    int last = cmd->last < 0 ? argc + cmd->last : cmd->last;
    int n = 0;
    for (int i = cmd->first; i <= last && i < argc && n < max; i += cmd->step) idx[n++] = i;
    return n;
}

gdb *cmd_db(client *c) { return db_get(c->db); }

void cmd_prefetch_run(client *c, gdb *db, int j, int first, int step) {
    if ((j - first) / step % CMD_PREFETCH_RUN != 0 || !db_prefetch_wanted(db->id)) return;
    const char *k[CMD_PREFETCH_RUN];
    size_t n[CMD_PREFETCH_RUN];
    int m = 0;
    for (int i = j; i < c->argc && m < CMD_PREFETCH_RUN; i += step, m++) {
        k[m] = c->argv[i].p;
        n[m] = c->argv[i].n;
    }
    db_prefetch_held(db, k, n, m);
}

dbentry *cmd_lookup_typed(client *c, gdb *db, const garg *key, int type, int *wrong) {
    *wrong = 0;
    dbentry *e = db_lookup(db, key->p, key->n);
    if (e && e->val.type != type) {
        reply_err_wrongtype(c);
        *wrong = 1;
        return NULL;
    }
    return e;
}

void cmd_key_modified(client *c, gdb *db, const char *key, size_t klen) {
    if (key && tracking_active()) tracking_key_modified(c, key, klen);
    db_signal_modified(db, key, klen);
}

void cmd_db_modified_watched(client *c, gdb *db) {
    watch_done = 1;
    cmd_key_modified(c, db, NULL, 0);
    watch_done = 0;
}

void cmd_dbs_swapped(client *c, int a, int b) {
    multi_touch_swapped(a, b);
    cmd_db_modified_watched(c, NULL);
    /* Clients blocked on keys that the swapped-in databases hold. */
    block_signal_db(db_get(a));
    block_signal_db(db_get(b));
}

void cmd_notify(client *c, int type, const char *event, gdb *db, const char *key, size_t klen) {
    (void)c;
    if (db && key) pubsub_notify(type, event, db->id, key, klen);
}

void cmd_set_monitor_hook(cmd_monitor_fn *fn) { monitor_hook = fn; }

void cmd_feed_monitor(client *c) {
    if (monitor_hook) monitor_hook(c, c->cur, c->db);
}

static long long now_us(void) { return (long long)monotime_us(); }

static _Thread_local uint64_t busy_us_tl;

uint64_t cmd_thread_busy_us(void) { return busy_us_tl; }

/* Lock what cmd needs; returns the shard mask taken, and in *db the
 * database whose shards those are, for unlock_for (the same database even
 * if the handler changes c->db). */
static uint64_t lock_for(client *c, const cmd_def *cmd, int *mode, gdb **db) {
    int lock = cmd->lock;
    if (db_keyspace_write_held() && lock != CMD_LOCK_SELF) {
        /* Inside EXEC: the transaction holds the whole keyspace. */
        *mode = CMD_LOCK_NONE;
        return 0;
    }
    if (lock == CMD_LOCK_KEYS && (cmd->flags & CMDF_MOVABLEKEYS)) lock = CMD_LOCK_ALL;
    const char *busy;
    if ((cmd->flags & CMDF_ALLOW_BUSY) && script_busy(&busy)) {
        /* A busy script holds the keyspace: what may run meanwhile (WATCH)
         * takes no lock; the script's own writes still dirty a WATCH. */
        *mode = CMD_LOCK_NONE;
        return 0;
    }
    *mode = lock;
    if (lock == CMD_LOCK_NONE || lock == CMD_LOCK_SELF) return 0;
    if (lock == CMD_LOCK_ALL) {
        db_wrlock_keyspace();
        return 0;
    }
    if (lock == CMD_LOCK_READ) {
        db_rdlock_keyspace();
        *db = cmd_db(c);
        return 0;
    }
    uint64_t mask = 0;
    int last = cmd->last < 0 ? c->argc + cmd->last : cmd->last;
    if (cmd->first <= 0) {
        *mode = CMD_LOCK_NONE;
        return 0;
    }
    for (int i = cmd->first; i <= last && i < c->argc; i += cmd->step)
        mask |= 1ULL << db_remember_key(c->argv[i].p, c->argv[i].n);
    db_rdlock_keyspace();
    *db = cmd_db(c);
    for (uint64_t m = mask; m; m &= m - 1) db_lock_shard(*db, (unsigned)__builtin_ctzll(m));
    return mask;
}

static void unlock_for(int mode, gdb *db, uint64_t mask) {
    if (mode == CMD_LOCK_NONE || mode == CMD_LOCK_SELF) return;
    if (mode == CMD_LOCK_KEYS)
        for (uint64_t m = mask; m; m &= m - 1) db_unlock_shard(db, (unsigned)__builtin_ctzll(m));
    db_unlock_keyspace();
}

/* cmd's commandstats row in the slot s; NULL for definitions outside the
 * table (the memcache family's), which have none, and when the slot's rows
 * could not be allocated. */
static cmd_tstat *cmd_row(tstat_slot *s, const cmd_def *cmd) {
    if ((uintptr_t)cmd < (uintptr_t)defs || (uintptr_t)cmd >= (uintptr_t)(defs + ndefs)) return NULL;
    cmd_tstat *t = cmd_tstat_of(s);
    return t ? t + (cmd - defs) : NULL;
}

void cmd_call(client *c, const cmd_def *cmd) {
    int mode;
    gdb *db = NULL;
    int retry = block_retrying(c);
    __atomic_store_n(&c->cur, cmd, __ATOMIC_RELAXED);
    c->cmd_failed = 0;
    int in_exec = (client_flags_peek(c) & CLIENT_IN_EXEC) != 0;
    if (in_exec) {
        /* Queued commands are checked again: the rules may have changed. */
        const char *denied = acl_check_call(c, cmd, 1);
        if (denied) {
            reply_error(c, denied);
            return;
        }
    }
    int counted = !(client_flags_peek(c) & CLIENT_AOF_LOADER);
    long long t0 = now_us();
    /* Client-side caching: one load when nobody tracks. A call inside EXEC
     * or a script (CLIENT_IN_EXEC) is nested in its client's call. */
    int track = tracking_active(), nested = 0;
    tracking_frame tf;
    if (track) {
        nested = in_exec;
        tracking_call_begin(c, nested, &tf);
    }
    db_freeze_time((uint64_t)t0);
    uint64_t mask = lock_for(c, cmd, &mode, &db);
    if (db_snap_running()) repl_snap_before_call(c, cmd, mode); /* a fork-less sync: old values first */
    db_count_lookups((cmd->flags & CMDF_READONLY) != 0);
    obj_set_lfu_mode(cfg.maxmemory_policy == 1 || cfg.maxmemory_policy == 5); /* volatile-lfu, allkeys-lfu */
    prop_begin();
    /* A replica's own clients' TTLs are listed (db.h); calls nest (EXEC). */
    int was_own = db_set_client_call((client_flags_peek(c) & (CLIENT_PRIMARY | CLIENT_AOF_LOADER)) ? DB_CALL_NONE
                                      : (cmd->flags & CMDF_WRITE)                               ? DB_CALL_CLIENT_WRITE
                                                                                                 : DB_CALL_CLIENT);
    cmd->proc(c);
    db_set_client_call(was_own);
    if (track) tracking_after_proc(c, cmd, nested); /* keys read, remembered while locked */
    prop_end(c, cmd); /* the records enter the stream while the keys are locked */
    if (client_flags_peek(c) & CLIENT_PRIMARY) repl_applied_locked();
    strval_end_command(); /* fold large-string views back while locked */
    db_count_lookups(0);
    unlock_for(mode, db, mask);
    db_forget_key();
    db_unfreeze_time();
    if (track) tracking_call_end(c, cmd, nested, &tf);
    if (!counted) return;
    long long dur = now_us() - t0;
    if (!in_exec) busy_us_tl += (uint64_t)dur;
    /* Counted in this thread's slot: no word every worker writes. */
    tstat_slot *ts = tstat_self();
    cmd_tstat *t = cmd_row(ts, cmd);
    if (t) {
        /* A blocked command is one call, as in Redis: its re-runs when a
         * key it waits for changes add their time, not calls. */
        if (!retry) tstat_word_add(&t->calls, 1);
        tstat_word_add(&t->usec, (uint64_t)dur);
        if (c->cmd_failed) tstat_word_add(&t->failed, 1);
    }
    if (!retry) tstat_word_add(&ts->v[TSTAT_COMMANDS], 1);
    __atomic_store_n(&c->last, cmd, __ATOMIC_RELAXED);
    c->commands_processed++;
    /* As Redis's call(): a command that blocked is logged (slow log,
     * latency) when it is served, by the run that replies. That run logs
     * before its reply can go out (at the end of the loop iteration). */
    if (!block_waiting(c)) {
        if (t && cfg.latency_tracking) cmd_hist_add(t, dur);
        if (!(cmd->flags & CMDF_SKIP_SLOWLOG)) slowlog_maybe_add(c, c->argc, block_sent_args(c), dur);
        latency_add_sample_if_needed((cmd->flags & CMDF_FAST) ? "fast-command" : "command", dur / 1000);
    } else {
        block_add_run_time(c, (uint64_t)dur);
    }
    /* Redis feeds MONITOR after the call, with the db the client has then;
     * a blocked command shows once, when it is sent, not when re-run. */
    if (monitor_hook && !retry && !(cmd->flags & (CMDF_SKIP_MONITOR | CMDF_ADMIN))) monitor_hook(c, cmd, c->db);
}

void cmd_unblocked(client *c, const garg *argv, uint64_t run_us, int failed) {
    const cmd_def *cmd = __atomic_load_n(&c->cur, __ATOMIC_RELAXED);
    cmd_tstat *t = cmd ? cmd_row(tstat_self(), cmd) : NULL;
    if (!t) return;
    if (failed) tstat_word_add(&t->failed, 1);
    if (cfg.latency_tracking) cmd_hist_add(t, (long long)run_us);
    if (!(cmd->flags & CMDF_SKIP_SLOWLOG)) slowlog_maybe_add(c, c->argc, argv, (long long)run_us);
}

static pthread_key_t redact_key;
static pthread_once_t redact_once = PTHREAD_ONCE_INIT;
static void redact_key_init(void) { pthread_key_create(&redact_key, free); }

void cmd_redact_arg(client *c, int i) {
    /* A per-thread copy of the argument array replaces c->argv for the rest
     * of the call: the arrays of the parser and of MULTI stay untouched.
     * (Freed when the thread exits.) */
    static _Thread_local garg *copy;
    static _Thread_local int cap;
    if (i < 0 || i >= c->argc) return;
    if (c->argv != copy) {
        if (cap < c->argc) {
            garg *n = malloc(sizeof(garg) * (size_t)c->argc);
            if (!n) return;
            free(copy);
            copy = n;
            cap = c->argc;
            pthread_once(&redact_once, redact_key_init);
            pthread_setspecific(redact_key, copy);
        }
        memcpy(copy, c->argv, sizeof(garg) * (size_t)c->argc);
        c->argv = copy;
    }
    copy[i].p = (char *)"(redacted)";
    copy[i].n = 10;
}

void cmd_count_rejected(const cmd_def *cmd) {
    if (cmd) __atomic_fetch_add(&((cmd_def *)cmd)->rejected, 1, __ATOMIC_RELAXED);
}

static void reject(client *c, const cmd_def *cmd) {
    (void)c;
    cmd_count_rejected(cmd);
}

/* Redis's rejectCommand: the error, counted as rejected, and a transaction
 * in progress marked dirty; a rejected EXEC discards it ("EXECABORT"). */
static void reject_with(client *c, const cmd_def *cmd, const char *err) {
    reject(c, cmd);
    if (cmd && strcmp(cmd->fullname, "exec") == 0) {
        multi_discard_state(c);
        reply_errorf(c, "EXECABORT Transaction discarded because of: %s", err);
        return;
    }
    reply_error(c, err);
    if (client_flags_peek(c) & CLIENT_MULTI) client_flag_on(c, CLIENT_DIRTY_EXEC);
}

/* Hook points filled by later families; NULL until then. */
int (*cmd_multi_queue_hook)(client *c, const cmd_def *cmd);

static void execute(client *c);

/* ASKING holds for one command (outside MULTI), as Redis's resetClient. */
static void asking_done(client *c) {
    if (!(client_flags_peek(c) & CLIENT_ASKING) || (client_flags_peek(c) & CLIENT_MULTI)) return;
    const cmd_def *cur = __atomic_load_n(&c->cur, __ATOMIC_RELAXED);
    if (cur && !strcmp(cur->fullname, "asking")) return;
    client_flag_off(c, CLIENT_ASKING);
}

/* The client whose command runs on this thread (a busy script's thread
 * runs other clients' commands inside its own: saved and restored). */
static _Thread_local client *running;

client *cmd_running_client(void) { return running; }

void cmd_execute(client *c) {
    client *outer = running;
    running = c;
    if (__builtin_expect(tracking_active(), 0)) {
        /* Invalidations for c caused before its call (tracking table
         * limit, eviction) go out before its reply, as in Redis. */
        tracking_frame tf;
        tracking_command_begin(c, &tf);
        execute(c);
        tracking_command_end(&tf);
    } else {
        execute(c);
    }
    asking_done(c);
    running = outer;
}

/* c is in MULTI and cmd is its EXEC (the refusals that judge a
 * transaction by its queue). */
static int is_exec_of_queue(client *c, const cmd_def *cmd) {
    const char *n = cmd->parent ? cmd->parent->name : cmd->name;
    return (client_flags_peek(c) & CLIENT_MULTI) && !strcmp(n, "exec");
}

/* An EXEC of a queue holding a command with one of the flags of mask. */
static int exec_queue_has(client *c, const cmd_def *cmd, uint32_t mask) {
    return is_exec_of_queue(c, cmd) && (multi_queued_flags(c) & mask);
}

/* An EXEC of a queue holding a command without one of the flags of mask. */
static int exec_queue_lacks(client *c, const cmd_def *cmd, uint32_t mask) {
    return is_exec_of_queue(c, cmd) && (multi_queued_lacking(c) & mask);
}

/* What a RESP2 connection in the Pub/Sub context may run. */
static int pubsub_context_allows(const cmd_def *cmd) {
    static const char *const ok[] = {"subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe",
                                      "sunsubscribe", "ping", "quit", "reset", NULL};
    const char *n = cmd->parent ? cmd->parent->name : cmd->name;
    for (int i = 0; ok[i]; i++)
        if (!strcmp(ok[i], n)) return 1;
    return 0;
}

static void execute(client *c) {
    if (c->argc == 0) return;
    /* Behind a running script the command waits, as behind Redis's one
     * thread: until the script ends, or turns busy (then checked below). */
    script_gate_wait(c);
    const cmd_def *cmd = cmd_lookup(c->argv[0].p, c->argv[0].n);
    if (cmd && cmd->parent) cmd = NULL; /* "config|get" is not a command name */
    __atomic_store_n(&c->cur, NULL, __ATOMIC_RELAXED);
    if (!cmd) {
        char args[512];
        size_t len = 0;
        args[0] = '\0';
        for (int i = 1; i < c->argc && len < 128; i++) {
            int room = 128 - (int)len;
            int w = snprintf(args + len, sizeof(args) - len, "'%.*s' ", room, c->argv[i].p);
            if (w > 0) len += (size_t)w;
            if (len >= sizeof(args)) len = sizeof(args) - 1;
        }
        reply_errorf(c, "ERR unknown command '%.128s', with args beginning with: %s", c->argv[0].p, args);
        if (client_flags_peek(c) & CLIENT_MULTI) client_flag_on(c, CLIENT_DIRTY_EXEC);
        return;
    }
    /* A container with its own handler (COMMAND) runs it when called bare. */
    if (cmd->subs && !(c->argc == 1 && cmd->proc)) {
        __atomic_store_n(&c->cur, cmd, __ATOMIC_RELAXED);
        if (c->argc < 2) {
            reply_err_arity(c);
            reject(c, cmd);
            if (client_flags_peek(c) & CLIENT_MULTI) client_flag_on(c, CLIENT_DIRTY_EXEC);
            return;
        }
        const cmd_def *sub = cmd_lookup_full(c->argv, c->argc);
        if (!sub) {
            /* Redis: "unknown subcommand 'x'. Try CONFIG HELP." */
            char up[64];
            size_t i;
            for (i = 0; cmd->name[i] && i < sizeof(up) - 1; i++) up[i] = (char)toupper((unsigned char)cmd->name[i]);
            up[i] = '\0';
            reply_errorf(c, "ERR unknown subcommand '%.128s'. Try %s HELP.", c->argv[1].p, up);
            reject(c, cmd);
            if (client_flags_peek(c) & CLIENT_MULTI) client_flag_on(c, CLIENT_DIRTY_EXEC);
            return;
        }
        cmd = sub;
    }
    __atomic_store_n(&c->cur, cmd, __ATOMIC_RELAXED);
    if ((cmd->arity > 0 && c->argc != cmd->arity) || (c->argc < -cmd->arity)) {
        if (strcmp(cmd->fullname, "exec") == 0) {
            reject_with(c, cmd, "wrong number of arguments for 'exec' command");
            return;
        }
        reply_err_arity(c);
        reject(c, cmd);
        if (client_flags_peek(c) & CLIENT_MULTI) client_flag_on(c, CLIENT_DIRTY_EXEC);
        return;
    }
    uint32_t cf = client_flags_peek(c);
    if (cf & CLIENT_PRIMARY) {
        /* The primary's stream: none of the checks below apply, but one. */
        if ((cmd->flags & CMDF_WRITE) || exec_queue_has(c, cmd, CMDF_WRITE)) primary_write_check();
        if (cmd_multi_queue_hook && cmd_multi_queue_hook(c, cmd)) return;
        cmd_call(c, cmd);
        return;
    }
    if (acl_auth_required(c) && !(cmd->flags & CMDF_NO_AUTH)) {
        reject_with(c, cmd, "NOAUTH Authentication required.");
        return;
    }
    const char *denied = acl_check_call(c, cmd, 0);
    if (denied) {
        reject_with(c, cmd, denied);
        return;
    }
    /* Cluster mode: a key served elsewhere is redirected (Redis checks it
     * here, before the memory and persistence refusals). */
    if (__builtin_expect(cluster_enabled(), 0) && cluster_redirect(c, cmd)) return;
    /* A script declares its own write, denyoom and stale flags. */
    uint32_t flags = (cmd->flags & CMDF_NO_OWN_RECORD) ? script_dispatch_flags(c, cmd) : cmd->flags;
    /* While a script is busy nothing is evicted (as Redis: the script
     * holds the keyspace) and nothing is refused for memory. */
    const char *busy_err = NULL;
    int busy = script_busy(&busy_err);
    if ((flags & CMDF_DENYOOM) && !busy && evict_store_bounded()) {
        size_t longest = 0; /* the largest value the command may store */
        for (int i = 1; i < c->argc; i++)
            if (c->argv[i].n > longest) longest = c->argv[i].n;
        evict_store_pressure(longest);
    }
    if (cfg.maxmemory > 0 && !busy && !repl_is_replica() && evict_perform() == EVICT_FAIL) {
        /* Over maxmemory with nothing to evict: refuse what would grow it,
         * any queuing inside MULTI (but EXEC, DISCARD, QUIT, RESET), and an
         * EXEC whose queue holds a denyoom command (reject_with turns that
         * into "EXECABORT Transaction discarded because of: OOM ..."). */
        const char *n = cmd->parent ? cmd->parent->name : cmd->name;
        int queuing = (client_flags_peek(c) & CLIENT_MULTI) && strcmp(n, "exec") && strcmp(n, "discard") && strcmp(n, "quit") &&
                      strcmp(n, "reset");
        if ((flags & CMDF_DENYOOM) || queuing || exec_queue_has(c, cmd, CMDF_DENYOOM)) {
            reject_with(c, cmd, "OOM command not allowed when used memory > 'maxmemory'.");
            return;
        }
    }
    char aof_err[256];
    const char *disk_err = persist_writes_refused()                   ? MISCONF_RDB
                           : aof_write_error(aof_err, sizeof(aof_err)) ? aof_err
                                                                       : NULL;
    if (disk_err) {
        /* As Redis: writes (and PING, and an EXEC of queued writes) are
         * refused while the last save failed or the AOF can't be written. */
        const char *n = cmd->parent ? cmd->parent->name : cmd->name;
        if ((flags & CMDF_WRITE) || exec_queue_has(c, cmd, CMDF_WRITE) || !strcmp(n, "ping")) {
            reject_with(c, cmd, disk_err);
            return;
        }
    }
    if (repl_is_replica()) {
        if (repl_read_only() && ((flags & CMDF_WRITE) || exec_queue_has(c, cmd, CMDF_WRITE))) {
            reject_with(c, cmd, "READONLY You can't write against a read only replica.");
            return;
        }
        const char *stale = repl_stale_refusal();
        if (stale && (!(flags & CMDF_STALE) || exec_queue_lacks(c, cmd, CMDF_STALE))) {
            reject_with(c, cmd, stale);
            return;
        }
    } else if (((flags & CMDF_WRITE) || exec_queue_has(c, cmd, CMDF_WRITE)) && repl_min_replicas_refuse()) {
        reject_with(c, cmd, "NOREPLICAS Not enough good replicas to write.");
        return;
    }
    /* During a replica's async load (swapdb) the old dataset is served,
     * but the commands flagged no_async_loading wait, as in Redis 7.0. */
    if ((!(cmd->flags & CMDF_LOADING) && persist_loading()) ||
        (persist_async_loading() && ((cmd->flags & CMDF_NO_ASYNC_LOADING) || exec_queue_has(c, cmd, CMDF_NO_ASYNC_LOADING)))) {
        reply_error(c, "LOADING Redis is loading the dataset in memory");
        reject(c, cmd);
        if (client_flags_peek(c) & CLIENT_MULTI) client_flag_on(c, CLIENT_DIRTY_EXEC);
        return;
    }
    if ((client_flags_peek(c) & CLIENT_PUBSUB) && c->resp == 2) {
        if (!pubsub_context_allows(cmd)) {
            reply_errorf(c,
                         "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                         "allowed in this context",
                         cmd->fullname);
            reject(c, cmd);
            if (client_flags_peek(c) & CLIENT_MULTI) client_flag_on(c, CLIENT_DIRTY_EXEC);
            return;
        }
    }
    /* A busy script: only allow_busy commands (MULTI and the queue
     * commands too, so a pipelined transaction is not half refused). */
    if (busy && !(cmd->flags & CMDF_ALLOW_BUSY)) {
        reject_with(c, cmd, busy_err);
        return;
    }
    /* A MONITOR client counts as a replica in Redis 7.0: nothing that
     * reads, writes or may replicate. */
    if ((cf & CLIENT_MONITOR) && (flags & (CMDF_READONLY | CMDF_WRITE | CMDF_MAY_REPLICATE))) {
        reject_with(c, cmd, "ERR Replica can't interact with the keyspace");
        return;
    }
    if (cmd_multi_queue_hook && cmd_multi_queue_hook(c, cmd)) return;
    cmd_call(c, cmd);
    /* Clients blocked on keys the script is writing wait for its end. */
    if (!busy) block_handle_ready();
}

/* The refusals Redis 7.0's processCommand makes before its pause check, as
 * execute() makes them (without replying or logging): 1 when one applies. */
static int refused_before_pause(client *c, const cmd_def *cmd, uint32_t flags, int argc, garg *argv) {
    uint32_t cf = client_flags_peek(c);
    if (acl_auth_required(c) && !(cmd->flags & CMDF_NO_AUTH)) return 1;
    if ((cf & CLIENT_MULTI) && (cmd->flags & CMDF_NO_MULTI)) return 1;
    if (!acl_allows(c, cmd, argv, argc)) return 1;
    const char *n = cmd->parent ? cmd->parent->name : cmd->name;
    int write = (flags & CMDF_WRITE) || exec_queue_has(c, cmd, CMDF_WRITE);
    char aof_err[256];
    if ((write || !strcmp(n, "ping")) && (persist_writes_refused() || aof_write_error(aof_err, sizeof(aof_err))))
        return 1;
    if (repl_is_replica()) {
        if (write && repl_read_only()) return 1;
        if ((!(flags & CMDF_STALE) || exec_queue_lacks(c, cmd, CMDF_STALE)) && repl_stale_refusal()) return 1;
    } else if (write && repl_min_replicas_refuse()) {
        return 1;
    }
    if (!(cmd->flags & CMDF_LOADING) && persist_loading()) return 1;
    if (persist_async_loading() && (cmd->flags & CMDF_NO_ASYNC_LOADING)) return 1;
    if ((cf & CLIENT_PUBSUB) && c->resp == 2 && !pubsub_context_allows(cmd)) return 1;
    /* -BUSY comes before the pause too. */
    const char *busy_err;
    return !(cmd->flags & CMDF_ALLOW_BUSY) && script_busy(&busy_err);
}

int cmd_pause_holds(client *c, int argc, garg *argv, int write_only) {
    if (argc == 0) return 0;
    const cmd_def *cmd = cmd_lookup(argv[0].p, argv[0].n);
    if (!cmd || cmd->parent) return 0;
    if (cmd->subs && !(argc == 1 && cmd->proc)) {
        cmd = argc < 2 ? NULL : cmd_lookup_full(argv, argc);
        if (!cmd) return 0;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || (argc < -cmd->arity)) return 0;
    uint32_t cf = client_flags_peek(c);
    uint32_t flags = cmd->flags;
    if (flags & CMDF_NO_OWN_RECORD) {
        /* A script's declared flags decide (a no-writes one passes), as
         * Redis's getCommandFlags; they are read from this request. */
        garg *sv = c->argv;
        int sa = c->argc;
        c->argv = argv;
        c->argc = argc;
        flags = script_dispatch_flags(c, cmd);
        c->argv = sv;
        c->argc = sa;
    }
    /* The primary's stream is obeyed: no refusal applies to it. */
    if (!(cf & CLIENT_PRIMARY) && refused_before_pause(c, cmd, flags, argc, argv)) return 0;
    const uint32_t w = CMDF_WRITE | CMDF_MAY_REPLICATE;
    int held = !write_only || (flags & w) || exec_queue_has(c, cmd, w);
    /* A held client shows the command it waits to run (CLIENT LIST cmd=). */
    if (held) {
        __atomic_store_n(&c->cur, cmd, __ATOMIC_RELAXED);
        __atomic_store_n(&c->last, cmd, __ATOMIC_RELAXED);
    }
    return held;
}

garg *cmd_args_copy(const garg *a, int argc) {
    garg *out = malloc(sizeof(garg) * (size_t)(argc ? argc : 1));
    if (!out) abort();
    for (int i = 0; i < argc; i++) {
        out[i].p = malloc(a[i].n + 1);
        if (!out[i].p) abort();
        memcpy(out[i].p, a[i].p, a[i].n);
        out[i].p[a[i].n] = '\0';
        out[i].n = a[i].n;
    }
    return out;
}

void cmd_args_free(garg *a, int argc) {
    if (!a) return;
    for (int i = 0; i < argc; i++) free(a[i].p);
    free(a);
}

int arg_is(const garg *a, const char *lit) {
    size_t n = strlen(lit);
    return a->n == n && strncasecmp(a->p, lit, n) == 0;
}

int arg_ll(client *c, const garg *a, long long *v) {
    if (!str_to_ll(a->p, a->n, v)) {
        reply_err_not_int(c);
        return -1;
    }
    return 0;
}

int arg_ll_range(client *c, const garg *a, long long *v, long long min, long long max, const char *err) {
    if (!str_to_ll(a->p, a->n, v) || *v < min || *v > max) {
        reply_error(c, err ? err : "ERR value is not an integer or out of range");
        return -1;
    }
    return 0;
}

int arg_double(client *c, const garg *a, double *v) {
    if (!str_to_double(a->p, a->n, v)) {
        reply_error(c, "ERR value is not a valid float");
        return -1;
    }
    return 0;
}

void reply_err_arity(client *c) {
    reply_errorf(c, "ERR wrong number of arguments for '%s' command", c->cur ? c->cur->fullname : "?");
}
void reply_err_subcommand(client *c) {
    const char *parent = c->cur && c->cur->parent ? c->cur->parent->name : c->cur ? c->cur->name : "?";
    char up[64];
    size_t i;
    for (i = 0; parent[i] && i < sizeof(up) - 1; i++) up[i] = (char)(parent[i] >= 'a' && parent[i] <= 'z' ? parent[i] - 32 : parent[i]);
    up[i] = '\0';
    reply_errorf(c, "ERR unknown subcommand '%.128s'. Try %s HELP.", c->argc > 1 ? c->argv[1].p : "", up);
}
