/* session.c -- the client registry, the transport table and the pause
 * state; see session.h for the contract. */
#include "session/session.h"

#include "db/db.h"
#include "ds/swiss.h"
#include "util/hashfn.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>

uint64_t session_stat_connections;
int session_replybuf_resizing = 1;
long session_replybuf_peak_reset_ms = SESSION_REPLYBUF_PEAK_RESET_MS;
uint64_t session_stat_replybuf_shrinks, session_stat_replybuf_expands;
uint64_t session_stat_rejected;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
/* Every client, oldest first (CLIENT LIST's order, as Redis's list of
 * clients): registered at the tail. */
static client *registry, *registry_tail;
static long registry_count;
static uint64_t next_client_id = 1;

static const session_transport *transport;

/* The registry's index by client id (slots hold client pointers), under
 * registry_lock like the list. */
static uint64_t id_slot_hash(void *ctx, const void *slot) {
    (void)ctx;
    return hash_u64((*(client *const *)slot)->id);
}
static int id_slot_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    return (*(client *const *)slot)->id == *(const uint64_t *)key;
}
static const swiss_type id_type = {sizeof(client *), id_slot_hash, id_slot_match, 0};
static swiss by_id;
static int by_id_ready;

static void by_id_add(client *c) {
    if (!by_id_ready) {
        swiss_init(&by_id, &id_type, NULL);
        by_id_ready = 1;
    }
    void *slot = swiss_insert(&by_id, hash_u64(c->id));
    if (slot) memcpy(slot, &c, sizeof(c));
}

static void by_id_del(client *c) {
    if (!by_id_ready) return;
    void *slot = swiss_find(&by_id, hash_u64(c->id), &c->id);
    if (slot && *(client **)slot == c) swiss_delete(&by_id, slot);
}

client *session_find_client(uint64_t id) {
    if (!by_id_ready || !swiss_size(&by_id)) return NULL;
    void *slot = swiss_find(&by_id, hash_u64(id), &id);
    return slot ? *(client **)slot : NULL;
}

/* The pause purposes, under pause_lock; the mode in force and its end are
 * published with relaxed atomics for the workers' per-command check. */
typedef struct pause_event {
    int mode; /* SESSION_PAUSE_OFF: unused */
    int64_t end;
} pause_event;
static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static pause_event pauses[SESSION_PAUSE_PURPOSES];
static int pause_mode;
static int64_t pause_end;

void session_registry_lock(void) { pthread_mutex_lock(&registry_lock); }
void session_registry_unlock(void) { pthread_mutex_unlock(&registry_lock); }

void session_clients_each(session_client_fn *fn, void *arg) {
    for (client *c = registry; c; c = c->rnext) fn(arg, c);
}

long session_clients_count(void) { return __atomic_load_n(&registry_count, __ATOMIC_RELAXED); }

uint64_t session_next_client_id(void) { return __atomic_fetch_add(&next_client_id, 1, __ATOMIC_RELAXED); }

void session_register(client *c) {
    pthread_mutex_lock(&registry_lock);
    c->rnext = NULL;
    c->rprev = registry_tail;
    if (registry_tail) registry_tail->rnext = c;
    else registry = c;
    registry_tail = c;
    by_id_add(c);
    __atomic_fetch_add(&registry_count, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&registry_lock);
}

void session_unregister(client *c) {
    session_client_mem_forget(c);
    pthread_mutex_lock(&registry_lock);
    if (c->rprev) c->rprev->rnext = c->rnext;
    else registry = c->rnext;
    if (c->rnext) c->rnext->rprev = c->rprev;
    else registry_tail = c->rprev;
    c->rprev = c->rnext = NULL;
    by_id_del(c);
    __atomic_fetch_sub(&registry_count, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&registry_lock);
}

void session_set_transport(const session_transport *t) { transport = t; }

/* Every operation needs the transport: the command layer runs only once
 * net/ has started and installed it. */
#define T() (assert(transport != NULL), transport)

int session_nworkers(void) { return transport ? transport->nworkers() : 0; }
void session_post(int w, session_job_fn *fn, void *arg) { T()->post(w, fn, arg); }
void session_request_shutdown(void) { T()->request_shutdown(); }
void session_client_kill(client *c) { T()->client_kill(c); }
void session_client_send_async(client *c, const char *p, size_t n) { T()->client_send_async(c, p, n); }
client *session_worker_find_client(int w, uint64_t id) { return T()->worker_find_client(w, id); }
void session_client_resume(client *c) { T()->client_resume(c); }
void session_client_flush(client *c) { T()->client_flush(c); }
void session_client_timer(client *c, int64_t deadline_ms, void (*fn)(client *c)) {
    T()->client_timer(c, deadline_ms, fn);
}
void session_events_while_busy(void) {
    if (transport && transport->events_while_busy) transport->events_while_busy();
}
int session_client_sync_send(client *c, int timeout_ms) {
    return transport && transport->client_sync_send ? transport->client_sync_send(c, timeout_ms) : -1;
}
long session_client_sync_read(client *c, char *buf, size_t n, int timeout_ms) {
    return transport && transport->client_sync_read ? transport->client_sync_read(c, buf, n, timeout_ms) : -1;
}

/* Recomputes the mode in force from the purposes (pause_lock held);
 * returns the mode it replaced when that was more restrictive, else OFF. */
static int pause_update_locked(int64_t now_ms) {
    int old = __atomic_load_n(&pause_mode, __ATOMIC_RELAXED);
    int mode = SESSION_PAUSE_OFF;
    int64_t end = 0;
    for (int i = 0; i < SESSION_PAUSE_PURPOSES; i++) {
        if (pauses[i].mode != SESSION_PAUSE_OFF && pauses[i].end < now_ms) pauses[i].mode = SESSION_PAUSE_OFF;
        if (pauses[i].mode > mode) mode = pauses[i].mode;
    }
    for (int i = 0; i < SESSION_PAUSE_PURPOSES; i++)
        if (mode != SESSION_PAUSE_OFF && pauses[i].mode == mode && pauses[i].end > end) end = pauses[i].end;
    __atomic_store_n(&pause_end, end, __ATOMIC_RELAXED);
    __atomic_store_n(&pause_mode, mode, __ATOMIC_RELEASE);
    /* Expired keys stay while any pause is in force. */
    db_hold_expiry(mode != SESSION_PAUSE_OFF ? INT64_MAX : 0);
    return mode < old ? old : SESSION_PAUSE_OFF;
}

static void pause_changed(int old) {
    if (old != SESSION_PAUSE_OFF && transport && transport->pause_ended) transport->pause_ended(old);
}

void session_pause(int purpose, int64_t until_ms, int mode) {
    assert(purpose >= 0 && purpose < SESSION_PAUSE_PURPOSES);
    assert(mode == SESSION_PAUSE_WRITE || mode == SESSION_PAUSE_ALL);
    pthread_mutex_lock(&pause_lock);
    pause_event *p = &pauses[purpose];
    if (p->mode == SESSION_PAUSE_OFF) {
        p->mode = mode;
        p->end = until_ms;
    } else {
        if (mode > p->mode) p->mode = mode;
        if (until_ms > p->end) p->end = until_ms;
    }
    int old = pause_update_locked(db_now_ms());
    pthread_mutex_unlock(&pause_lock);
    pause_changed(old);
}

void session_unpause(int purpose) {
    assert(purpose >= 0 && purpose < SESSION_PAUSE_PURPOSES);
    pthread_mutex_lock(&pause_lock);
    int old = SESSION_PAUSE_OFF;
    if (pauses[purpose].mode != SESSION_PAUSE_OFF) {
        pauses[purpose].mode = SESSION_PAUSE_OFF;
        old = pause_update_locked(db_now_ms());
    }
    pthread_mutex_unlock(&pause_lock);
    pause_changed(old);
}

int session_pause_mode(void) { return __atomic_load_n(&pause_mode, __ATOMIC_RELAXED); }

int session_pause_check(int64_t now_ms, int64_t *until_ms) {
    int mode = __atomic_load_n(&pause_mode, __ATOMIC_ACQUIRE);
    if (mode == SESSION_PAUSE_OFF) return mode;
    int64_t end = __atomic_load_n(&pause_end, __ATOMIC_RELAXED);
    if (end < now_ms) {
        pthread_mutex_lock(&pause_lock);
        int old = pause_update_locked(now_ms);
        mode = __atomic_load_n(&pause_mode, __ATOMIC_RELAXED);
        end = __atomic_load_n(&pause_end, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&pause_lock);
        pause_changed(old);
    }
    if (until_ms) *until_ms = end;
    return mode;
}
