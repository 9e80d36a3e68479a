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
static client *registry;
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

static int64_t pause_until_ms;
static int pause_write_only;

void session_registry_lock(void) { pthread_mutex_lock(&registry_lock); }
void session_registry_unlock(void) { pthread_mutex_unlock(&registry_lock); }

void session_clients_each(session_client_fn *fn, void *arg) {
    for (client *c = registry; c; c = c->rnext) fn(arg, c);
}

long session_clients_count(void) { return __atomic_load_n(&registry_count, __ATOMIC_RELAXED); }

uint64_t session_next_client_id(void) { return __atomic_fetch_add(&next_client_id, 1, __ATOMIC_RELAXED); }

void session_register(client *c) {
    pthread_mutex_lock(&registry_lock);
    c->rprev = NULL;
    c->rnext = registry;
    if (registry) registry->rprev = c;
    registry = c;
    by_id_add(c);
    __atomic_fetch_add(&registry_count, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&registry_lock);
}

void session_unregister(client *c) {
    pthread_mutex_lock(&registry_lock);
    if (c->rprev) c->rprev->rnext = c->rnext;
    else registry = c->rnext;
    if (c->rnext) c->rnext->rprev = c->rprev;
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

/* Set by CLIENT PAUSE on one worker, read by every worker before it runs
 * a command: relaxed atomics, the end time written last. */
void session_pause(int64_t until_ms, int write_only) {
    __atomic_store_n(&pause_write_only, write_only, __ATOMIC_RELAXED);
    __atomic_store_n(&pause_until_ms, until_ms, __ATOMIC_RELEASE);
    db_hold_expiry(until_ms);
}

void session_unpause(void) {
    __atomic_store_n(&pause_until_ms, 0, __ATOMIC_RELAXED);
    db_hold_expiry(0);
    /* As Redis's unpauseClients: the held clients run now, not at a tick. */
    if (transport && transport->pause_ended) transport->pause_ended();
}

int session_pause_pending(void) { return __atomic_load_n(&pause_until_ms, __ATOMIC_RELAXED) != 0; }

int64_t session_paused(int64_t now_ms, int *write_only) {
    int64_t until = __atomic_load_n(&pause_until_ms, __ATOMIC_ACQUIRE);
    if (!until) return 0;
    if (now_ms >= until) {
        __atomic_compare_exchange_n(&pause_until_ms, &until, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        return 0;
    }
    *write_only = __atomic_load_n(&pause_write_only, __ATOMIC_RELAXED);
    return until;
}
