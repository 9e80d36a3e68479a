/* wstream.c -- the write stream (see wstream.h). One mutex orders every
 * append; each record is encoded once into a per-call scratch buffer as a
 * RESP array of bulk strings, prefixed by SELECT when the database
 * changes for the sinks it changes for, and handed to every registered
 * sink that takes it. */
#include "persist/wstream.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

static pthread_mutex_t ws_lock = PTHREAD_MUTEX_INITIALIZER;
static const wstream_sink *sinks[WSTREAM_MAX_SINKS];
static int nsinks;          /* written under ws_lock, peeked relaxed */
static int nrepl;           /* of them with `repl`; the same */
/* The database of the previous record each view took, -1: none (the next
 * one is prefixed by SELECT): [1] the sinks with `repl` (the whole stream),
 * [0] the others (without the replica-only records), as Redis keeps
 * slaveseldb and aof_selected_db apart. */
static int last_db[2] = {-1, -1};
static uint64_t offset;
static char *buf;           /* encoding scratch, under ws_lock */
static size_t cap;

int wstream_add_sink(const wstream_sink *s) {
    pthread_mutex_lock(&ws_lock);
    int rc = -1;
    if (nsinks < WSTREAM_MAX_SINKS) {
        sinks[nsinks] = s;
        __atomic_store_n(&nsinks, nsinks + 1, __ATOMIC_RELAXED);
        if (s->repl) __atomic_store_n(&nrepl, nrepl + 1, __ATOMIC_RELAXED);
        rc = 0;
    }
    pthread_mutex_unlock(&ws_lock);
    return rc;
}

void wstream_remove_sink(const wstream_sink *s) {
    pthread_mutex_lock(&ws_lock);
    for (int i = 0; i < nsinks; i++)
        if (sinks[i] == s) {
            sinks[i] = sinks[nsinks - 1];
            __atomic_store_n(&nsinks, nsinks - 1, __ATOMIC_RELAXED);
            if (s->repl) __atomic_store_n(&nrepl, nrepl - 1, __ATOMIC_RELAXED);
            break;
        }
    if (!nsinks) last_db[0] = last_db[1] = -1;
    pthread_mutex_unlock(&ws_lock);
}

void wstream_forget_sinks(void) {
    __atomic_store_n(&nsinks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&nrepl, 0, __ATOMIC_RELAXED);
}

int wstream_active(void) { return __atomic_load_n(&nsinks, __ATOMIC_RELAXED) > 0; }

int wstream_repl_active(void) { return __atomic_load_n(&nrepl, __ATOMIC_RELAXED) > 0; }

void wstream_lock(void) { pthread_mutex_lock(&ws_lock); }
void wstream_unlock(void) { pthread_mutex_unlock(&ws_lock); }

static void reserve(size_t more) {
    if (cap >= more) return;
    size_t ncap = cap ? cap : 256;
    while (ncap < more) ncap *= 2;
    char *nb = realloc(buf, ncap);
    if (!nb) abort();
    buf = nb;
    cap = ncap;
}

/* "<c><v>\r\n" at d (room for 24 bytes); its length. (sprintf was a
 * visible share of a write's cost: every record has argc + 1 of these.) */
static size_t put_head(char *d, char c, size_t v) {
    d[0] = c;
    size_t k = (size_t)ll_to_str(d + 1, STRUTIL_LLSTR, (long long)v);
    d[1 + k] = '\r';
    d[2 + k] = '\n';
    return k + 3;
}

static size_t put_array(size_t len, int argc, const char *const *p, const size_t *n) {
    size_t need = len + 24;
    for (int i = 0; i < argc; i++) need += n[i] + 24;
    reserve(need);
    len += put_head(buf + len, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        len += put_head(buf + len, '$', n[i]);
        memcpy(buf + len, p[i], n[i]);
        len += n[i];
        buf[len++] = '\r';
        buf[len++] = '\n';
    }
    return len;
}

static void append(int dbid, int argc, const char *const *p, const size_t *n, int to) {
    assert(argc > 0);
    assert((to & ~WSTREAM_TO_ALL) == 0);
    if (!nsinks || !to) return;
    /* Which views need a SELECT first; it is encoded once, before the
     * record, and a sink that does not need it is handed the record only. */
    int need[2] = {(to & WSTREAM_TO_AOF) && dbid >= 0 && dbid != last_db[0],
                   (to & WSTREAM_TO_REPL) && dbid >= 0 && dbid != last_db[1]};
    size_t sel = 0;
    if (need[0] || need[1]) {
        char num[16];
        int k = snprintf(num, sizeof(num), "%d", dbid);
        const char *sp[2] = {"SELECT", num};
        const size_t sn[2] = {6, (size_t)k};
        sel = put_array(0, 2, sp, sn);
    }
    size_t len = put_array(sel, argc, p, n);
    for (int i = 0; i < nsinks; i++) {
        int r = sinks[i]->repl != 0;
        if (!(to & (r ? WSTREAM_TO_REPL : WSTREAM_TO_AOF))) continue;
        if (need[r]) sinks[i]->write(sinks[i]->arg, buf, len);
        else sinks[i]->write(sinks[i]->arg, buf + sel, len - sel);
    }
    if (need[0]) last_db[0] = dbid;
    if (need[1]) last_db[1] = dbid;
    if (to & WSTREAM_TO_REPL) __atomic_store_n(&offset, offset + (need[1] ? len : len - sel), __ATOMIC_RELAXED);
}

void wstream_append_locked(int dbid, int argc, const char *const *p, const size_t *n) {
    append(dbid, argc, p, n, WSTREAM_TO_ALL);
}

void wstream_append_repl_locked(int dbid, int argc, const char *const *p, const size_t *n) {
    append(dbid, argc, p, n, WSTREAM_TO_REPL);
}

void wstream_append_to_locked(int to, int dbid, int argc, const char *const *p, const size_t *n) {
    append(dbid, argc, p, n, to);
}

int wstream_repl_db(void) {
    pthread_mutex_lock(&ws_lock);
    int db = last_db[1];
    pthread_mutex_unlock(&ws_lock);
    return db;
}

void wstream_force_select_locked(int repl) { last_db[repl != 0] = -1; }

uint64_t wstream_offset(void) { return __atomic_load_n(&offset, __ATOMIC_RELAXED); }
