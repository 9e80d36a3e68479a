/* propagate.c -- a call's records on the write stream (see propagate.h).
 *
 * State is per thread: the worker (or cron) thread running a call owns
 * it. A call level is opened by prop_begin and closed by prop_end; the
 * records of every level are collected in one list owned by the outermost
 * level, each with its database and owned copies of its arguments, and
 * appended to the stream in one piece when the outermost level closes.
 * Invariant: between prop_begin of the outermost level and its prop_end,
 * every record of the call is in `ops`, in the order it happened; a
 * level's own default record goes in when the level closes, so a queued
 * command's record follows the records its handler added with prop_also
 * (a lazily expired key's DEL comes before the command that saw it gone,
 * as in Redis). */
#include "cmd/propagate.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "persist/wstream.h"
#include "base/config.h"

typedef struct prop_op {
    int dbid;
    int to; /* WSTREAM_TO_*: the AOF, the replicas (PUBLISH) or both */
    int argc;
    char **p;
    size_t *n;
} prop_op;

enum { LEVEL_DEFAULT = 0, LEVEL_REWRITTEN = 1, LEVEL_NONE = 2 };

#define PROP_MAX_DEPTH 16

typedef struct prop_level {
    unsigned long changes_at_begin;
    int nops_at_begin;
    unsigned long child_changes;
    int state;
    int force_repl;           /* prop_force_repl */
    int to;                   /* where the level's own record may go (WSTREAM_TO_*) */
    prop_op rewrite;          /* LEVEL_REWRITTEN */
} prop_level;

static _Thread_local struct {
    int depth;
    int call_off; /* the views prop_call_targets took away (0: none) */
    unsigned long changes;
    prop_level lv[PROP_MAX_DEPTH];
    prop_op *ops;
    int nops, cap;
} T;

/* Argument i of o becomes an owned, NUL-terminated copy of p[0..n). */
static void op_set(prop_op *o, int i, const char *p, size_t n) {
    free(o->p[i]);
    o->p[i] = malloc(n + 1);
    if (!o->p[i]) abort();
    memcpy(o->p[i], p, n);
    o->p[i][n] = '\0';
    o->n[i] = n;
}

static void op_alloc(prop_op *o, int dbid, int argc) {
    o->dbid = dbid;
    o->to = WSTREAM_TO_ALL;
    o->argc = argc;
    o->p = calloc((size_t)argc, sizeof(char *));
    o->n = malloc(sizeof(size_t) * (size_t)argc);
    if (!o->p || !o->n) abort();
}

static void op_fill(prop_op *o, int dbid, int argc, const char *const *p, const size_t *n) {
    op_alloc(o, dbid, argc);
    for (int i = 0; i < argc; i++) op_set(o, i, p[i], n[i]);
}

/* The call's own arguments, as sent. */
static void op_fill_call(prop_op *o, const client *c) {
    op_alloc(o, c->db, c->argc);
    for (int i = 0; i < c->argc; i++) op_set(o, i, c->argv[i].p, c->argv[i].n);
}

static void op_free(prop_op *o) {
    for (int i = 0; i < o->argc; i++) free(o->p[i]);
    free(o->p);
    free(o->n);
    o->p = NULL;
    o->n = NULL;
    o->argc = 0;
}

/* The record array of a thread is freed when the thread exits. */
static pthread_key_t ops_key;
static pthread_once_t ops_once = PTHREAD_ONCE_INIT;
static void ops_key_init(void) { pthread_key_create(&ops_key, free); }

static prop_op *ops_push(void) {
    if (T.nops == T.cap) {
        int ncap = T.cap ? T.cap * 2 : 8;
        prop_op *n = realloc(T.ops, sizeof(prop_op) * (size_t)ncap);
        if (!n) abort();
        T.ops = n;
        T.cap = ncap;
        pthread_once(&ops_once, ops_key_init);
        pthread_setspecific(ops_key, n);
    }
    return &T.ops[T.nops++];
}

void prop_count_change(void) { T.changes++; }

static _Thread_local const char **direct_p;
static _Thread_local size_t *direct_n;
static _Thread_local int direct_cap;

void prop_thread_exit(void) {
    free(direct_p);
    free(direct_n);
    direct_p = NULL;
    direct_n = NULL;
    direct_cap = 0;
    for (int i = 0; i < T.nops; i++) op_free(&T.ops[i]);
    /* The array goes here, not again in the key's destructor. */
    if (T.ops) pthread_setspecific(ops_key, NULL);
    free(T.ops);
    if (T.ops) pthread_setspecific(ops_key, NULL); /* freed here, not again at thread exit */
    T.ops = NULL;
    T.nops = T.cap = 0;
}

int prop_in_call(void) { return T.depth > 0; }

void prop_begin(void) {
    assert(T.depth < PROP_MAX_DEPTH);
    prop_level *l = &T.lv[T.depth++];
    l->changes_at_begin = T.changes;
    l->nops_at_begin = T.nops;
    l->child_changes = 0;
    l->state = LEVEL_DEFAULT;
    l->force_repl = 0;
    /* A nested call's own record goes where the script running it says
     * (redis.set_repl); a top-level call's, everywhere. */
    l->to = T.depth > 1 ? WSTREAM_TO_ALL & ~T.call_off : WSTREAM_TO_ALL;
    l->rewrite.argc = 0;
}

int prop_call_targets(int to) {
    assert((to & ~WSTREAM_TO_ALL) == 0);
    int old = WSTREAM_TO_ALL & ~T.call_off;
    T.call_off = WSTREAM_TO_ALL & ~to;
    return old;
}

/* wrap: several records go inside MULTI/EXEC. */
static void emit_all(int wrap) {
    static const char *const multi[1] = {"MULTI"};
    static const char *const exec[1] = {"EXEC"};
    static const size_t five[1] = {5}, four[1] = {4};
    wstream_lock();
    wrap = wrap && T.nops > 1;
    if (wrap) wstream_append_locked(T.ops[0].dbid, 1, multi, five);
    for (int i = 0; i < T.nops; i++)
        wstream_append_to_locked(T.ops[i].to, T.ops[i].dbid, T.ops[i].argc, (const char *const *)T.ops[i].p,
                                 T.ops[i].n);
    if (wrap) wstream_append_locked(-1, 1, exec, four);
    wstream_unlock();
}

static void drop_all(void) {
    for (int i = 0; i < T.nops; i++) op_free(&T.ops[i]);
    T.nops = 0;
}

void prop_flush(void) {
    if (T.depth != 1 || !T.nops) return;
    if (wstream_active()) emit_all(1);
    drop_all();
}

/* EXEC and the scripts propagate only what the calls nested in them did;
 * LOAD and DEBUG (RELOAD) replace the dataset from a file, and replaying
 * them would read a file that may have changed since (the AOF rewrites
 * instead). Asked once per command when the table is built. */
int prop_no_own_record(const char *fullname) {
    static const char *const names[] = {"exec", "eval", "evalsha", "eval_ro", "evalsha_ro",
                                        "fcall", "fcall_ro", "load", "debug"};
    size_t n = strcspn(fullname, "|");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == n && !strncmp(names[i], fullname, n)) return 1;
    return 0;
}

/* The common case: a top-level call whose only record is itself, as
 * sent. Its arguments go to the stream from the client's own buffers (no
 * copy: they stay put until the call returns). */

static int emit_call_direct(const client *c) {
    if (c->argc > direct_cap) {
        int nc = c->argc < 16 ? 16 : c->argc;
        const char **np = realloc(direct_p, sizeof(char *) * (size_t)nc);
        if (np) direct_p = np;
        size_t *nn = realloc(direct_n, sizeof(size_t) * (size_t)nc);
        if (nn) direct_n = nn;
        if (!np || !nn) return -1;
        direct_cap = nc;
    }
    for (int i = 0; i < c->argc; i++) {
        direct_p[i] = c->argv[i].p;
        direct_n[i] = c->argv[i].n;
    }
    wstream_lock();
    wstream_append_locked(c->db, c->argc, direct_p, direct_n);
    wstream_unlock();
    return 0;
}

/* What prop_end does once the level is closed and the call is not one of
 * the common ones that have nothing to record (kept out of line so that
 * those return without setting up a frame for it). */
static __attribute__((noinline)) void end_level(client *c, const cmd_def *cmd, prop_level *l, unsigned long total) {
    unsigned long mine = total - l->child_changes;
    if (T.depth > 0) T.lv[T.depth - 1].child_changes += total;
    if (client_flags_peek(c) & CLIENT_AOF_LOADER) {
        /* Replayed from the AOF (DEBUG LOADAOF, nested in the DEBUG call):
         * the files hold it already, and replicas are not told, as in
         * Redis. */
        if (l->state == LEVEL_REWRITTEN) op_free(&l->rewrite);
        while (T.nops > l->nops_at_begin) op_free(&T.ops[--T.nops]);
        return;
    }
    if (T.depth == 0 && T.nops == 0 && l->state == LEVEL_DEFAULT && mine > 0 &&
        !(cmd->flags & CMDF_NO_OWN_RECORD) && wstream_active() && emit_call_direct(c) == 0)
        return;
    if (l->state == LEVEL_REWRITTEN) {
        /* A rewrite stands for the call's changes: none, nothing to say. */
        if (mine > 0 && l->to) {
            l->rewrite.to = l->to;
            *ops_push() = l->rewrite;
        } else {
            op_free(&l->rewrite);
        }
    } else if (l->state == LEVEL_DEFAULT && mine > 0 && !(cmd->flags & CMDF_NO_OWN_RECORD) && wstream_active()) {
        if (l->to) {
            prop_op *o = ops_push();
            op_fill_call(o, c);
            o->to = l->to;
        }
    } else if (l->state == LEVEL_DEFAULT && l->force_repl && wstream_repl_active() && (l->to & WSTREAM_TO_REPL)) {
        prop_op *o = ops_push();
        op_fill_call(o, c);
        o->to = WSTREAM_TO_REPL;
    }
    if (T.depth > 0) return;
    /* A command that may expire any key (RANDOMKEY, SCAN) does not make
     * its deletions one transaction, as Redis 7.0 (they are no part of
     * what it does). */
    if (T.nops && wstream_active()) emit_all(!(cmd->flags & CMDF_ARBITRARY_KEYS));
    drop_all();
}

void prop_end(client *c, const cmd_def *cmd) {
    assert(T.depth > 0);
    prop_level *l = &T.lv[--T.depth];
    unsigned long total = T.changes - l->changes_at_begin;
    /* The common top-level call with no record to put anywhere: it changed
     * nothing (a read), or nothing is listening; nor did anything nested
     * or added leave a record. end_level would find nothing to do. */
    if (T.depth == 0 && T.nops == 0 && l->state != LEVEL_REWRITTEN && (total == 0 || !wstream_active()) &&
        !(l->force_repl && wstream_repl_active()))
        return;
    end_level(c, cmd, l, total);
}

void prop_rewrite(client *c, int argc, const char *const *p, const size_t *n) {
    if (!T.depth) return;
    prop_level *l = &T.lv[T.depth - 1];
    if (l->state == LEVEL_REWRITTEN) op_free(&l->rewrite);
    if (!wstream_active()) {
        l->state = LEVEL_NONE;
        return;
    }
    l->state = LEVEL_REWRITTEN;
    op_fill(&l->rewrite, c->db, argc, p, n);
}

void prop_force_repl(client *c) {
    (void)c;
    if (T.depth) T.lv[T.depth - 1].force_repl = 1;
}

void prop_none(client *c) {
    (void)c;
    if (!T.depth) return;
    prop_level *l = &T.lv[T.depth - 1];
    if (l->state == LEVEL_REWRITTEN) op_free(&l->rewrite);
    l->state = LEVEL_NONE;
}

void prop_direct_repl(int argc, const char *const *p, const size_t *n) {
    if (!wstream_repl_active()) return;
    wstream_lock();
    wstream_append_repl_locked(-1, argc, p, n);
    wstream_unlock();
}

void prop_direct(int dbid, int argc, const char *const *p, const size_t *n) {
    if (!wstream_active()) return;
    wstream_lock();
    wstream_append_locked(dbid, argc, p, n);
    wstream_unlock();
}

void prop_also(int dbid, int argc, const char *const *p, const size_t *n) {
    if (!wstream_active()) return;
    if (!T.depth) {
        prop_direct(dbid, argc, p, n);
        return;
    }
    op_fill(ops_push(), dbid, argc, p, n);
}

void prop_key(int dbid, const char *cmd, const char *key, size_t klen) {
    const char *p[2] = {cmd, key};
    const size_t n[2] = {strlen(cmd), klen};
    prop_also(dbid, 2, p, n);
}

/* lazyfree-lazy-expire and -eviction: Goblin frees inline either way;
 * they only pick the deletion's record, as in Redis. */
static int lazy[2];

void prop_config_register(void) {
    if (config_bind_int("lazyfree-lazy-expire", &lazy[PROP_DEL_EXPIRED]) ||
        config_bind_int("lazyfree-lazy-eviction", &lazy[PROP_DEL_EVICTED]))
        abort(); /* the table lost a row */
}

void prop_deletion(int dbid, int why, const char *key, size_t klen) {
    prop_key(dbid, __atomic_load_n(&lazy[why], __ATOMIC_RELAXED) ? "UNLINK" : "DEL", key, klen);
}

void prop_pexpireat(client *c, const char *key, size_t klen, long long when_ms) {
    char num[24];
    int k = snprintf(num, sizeof(num), "%lld", when_ms);
    const char *p[3] = {"PEXPIREAT", key, num};
    const size_t n[3] = {9, klen, (size_t)k};
    prop_rewrite(c, 3, p, n);
}

/* The current call's rewrite, started from its own arguments when it has
 * none yet; NULL when nothing is recorded (no sink, or prop_none). */
static prop_op *rewrite_of_call(client *c) {
    if (!T.depth || !wstream_active()) return NULL;
    prop_level *l = &T.lv[T.depth - 1];
    if (l->state != LEVEL_REWRITTEN) {
        if (l->state == LEVEL_NONE) return NULL;
        op_fill_call(&l->rewrite, c);
        l->state = LEVEL_REWRITTEN;
    }
    return &l->rewrite;
}

void prop_rewrite_arg(client *c, int i, const char *p, size_t n) {
    prop_op *o = rewrite_of_call(c);
    if (!o) return;
    assert(i >= 0 && i <= o->argc);
    if (i == o->argc) {
        o->p = realloc(o->p, sizeof(char *) * (size_t)(o->argc + 1));
        o->n = realloc(o->n, sizeof(size_t) * (size_t)(o->argc + 1));
        if (!o->p || !o->n) abort();
        o->p[o->argc++] = NULL;
    }
    op_set(o, i, p, n);
}

void prop_rewrite_drop_arg(client *c, int i) {
    prop_op *o = rewrite_of_call(c);
    if (!o) return;
    assert(i >= 0 && i < o->argc);
    free(o->p[i]);
    memmove(o->p + i, o->p + i + 1, sizeof(char *) * (size_t)(o->argc - i - 1));
    memmove(o->n + i, o->n + i + 1, sizeof(size_t) * (size_t)(o->argc - i - 1));
    o->argc--;
}

void prop_rewrite_arg_ll(client *c, int i, long long v) {
    char num[24];
    int k = snprintf(num, sizeof(num), "%lld", v);
    prop_rewrite_arg(c, i, num, (size_t)k);
}
