/* slowlog.c -- a bounded list of slow commands, newest first, as Redis keeps
 * it: at most 32 arguments (the last says how many more), each argument at
 * most 128 bytes (with "... (N more bytes)"). Guarded by one mutex: entries
 * are added only by slow commands, which are rare by definition. */
#include "cmd/slowlog.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/reply.h"
#include "base/config.h"

#define SLOWLOG_MAX_ARGC 32
#define SLOWLOG_MAX_ARGLEN 128

typedef struct slowentry {
    struct slowentry *next;
    long long id, time, duration;
    int argc;
    char **argv;
    size_t *argl;
    char *peer, *name;
} slowentry;

static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
static slowentry *head;
static long nentries;
static long long next_id;

static void entry_free(slowentry *e) {
    for (int i = 0; i < e->argc; i++) free(e->argv[i]);
    free(e->argv);
    free(e->argl);
    free(e->peer);
    free(e->name);
    free(e);
}

static void trim_locked(long max) {
    if (max < 0) max = 0;
    slowentry **pp = &head;
    long i = 0;
    while (*pp && i < max) {
        pp = &(*pp)->next;
        i++;
    }
    slowentry *e = *pp;
    *pp = NULL;
    while (e) {
        slowentry *n = e->next;
        entry_free(e);
        nentries--;
        e = n;
    }
}

void slowlog_maybe_add(const client *c, int cargc, const garg *cargv, long long dur) {
    if (cfg.slowlog_log_slower_than < 0 || dur < cfg.slowlog_log_slower_than) return;
    slowentry *e = calloc(1, sizeof(*e));
    int argc = cargc > SLOWLOG_MAX_ARGC ? SLOWLOG_MAX_ARGC : cargc;
    e->argc = argc;
    e->argv = calloc((size_t)argc, sizeof(char *));
    e->argl = calloc((size_t)argc, sizeof(size_t));
    for (int i = 0; i < argc; i++) {
        char buf[256];
        if (argc != cargc && i == argc - 1) {
            int n = snprintf(buf, sizeof(buf), "... (%d more arguments)", cargc - argc + 1);
            e->argv[i] = strndup(buf, (size_t)n);
            e->argl[i] = (size_t)n;
        } else if (cargv[i].n > SLOWLOG_MAX_ARGLEN) {
            int n = snprintf(buf, sizeof(buf), "... (%zu more bytes)", cargv[i].n - SLOWLOG_MAX_ARGLEN);
            e->argl[i] = SLOWLOG_MAX_ARGLEN + (size_t)n;
            e->argv[i] = malloc(e->argl[i]);
            memcpy(e->argv[i], cargv[i].p, SLOWLOG_MAX_ARGLEN);
            memcpy(e->argv[i] + SLOWLOG_MAX_ARGLEN, buf, (size_t)n);
        } else {
            e->argv[i] = malloc(cargv[i].n + 1);
            memcpy(e->argv[i], cargv[i].p, cargv[i].n);
            e->argl[i] = cargv[i].n;
        }
    }
    e->time = (long long)time(NULL);
    e->duration = dur;
    int script = (client_flags_peek(c) & CLIENT_SCRIPT) != 0;
    e->peer = strdup(script ? "?:0" : c->addr);
    e->name = strdup(!script && c->name ? c->name : "");
    pthread_mutex_lock(&slow_lock);
    e->id = next_id++;
    e->next = head;
    head = e;
    nentries++;
    trim_locked((long)cfg.slowlog_max_len);
    pthread_mutex_unlock(&slow_lock);
}

void slowlog_reply(client *c, long count) {
    pthread_mutex_lock(&slow_lock);
    long n = count < 0 || count > nentries ? nentries : count;
    reply_array(c, n);
    slowentry *e = head;
    for (long i = 0; i < n; i++, e = e->next) {
        reply_array(c, 6);
        reply_int(c, e->id);
        reply_int(c, e->time);
        reply_int(c, e->duration);
        reply_array(c, e->argc);
        for (int j = 0; j < e->argc; j++) reply_bulk(c, e->argv[j], e->argl[j]);
        reply_bulk_cstr(c, e->peer);
        reply_bulk_cstr(c, e->name);
    }
    pthread_mutex_unlock(&slow_lock);
}

long slowlog_len(void) {
    pthread_mutex_lock(&slow_lock);
    long n = nentries;
    pthread_mutex_unlock(&slow_lock);
    return n;
}

void slowlog_reset(void) {
    pthread_mutex_lock(&slow_lock);
    trim_locked(0);
    pthread_mutex_unlock(&slow_lock);
}
