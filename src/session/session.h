/* session.h -- the clients as the command layer sees them: the registry of
 * every connected client, the transport operations the command layer may
 * ask for, the CLIENT PAUSE state and the connection counters.
 *
 * The registry is a doubly linked list through client.rprev/rnext under
 * one mutex; the transport (net/) adds a client when it accepts the
 * connection and removes it before freeing it, so a walker holding the
 * lock never sees a freed client. The transport operations are a table of
 * functions that net/ installs at start-up (session_set_transport): the
 * command layer reaches workers, sockets and timers only through them and
 * never includes net/. A protocol front-end other than RESP (memcache,
 * HTTP) uses the same table. */
#ifndef GOBLIN_SESSION_SESSION_H
#define GOBLIN_SESSION_SESSION_H
#include <stddef.h>
#include <stdint.h>

#include "session/client.h"

/* ---- registry (CLIENT LIST / KILL, INFO clients) ------------------------- */
void session_registry_lock(void);
void session_registry_unlock(void);
typedef void session_client_fn(void *arg, client *c);
void session_clients_each(session_client_fn *fn, void *arg);   /* lock held */
long session_clients_count(void);
/* The registered client with this id, NULL when none (lock held; the
 * pointer is valid while it is). */
client *session_find_client(uint64_t id);
/* The transport's side: c is not yet / no longer reachable from its worker. */
void session_register(client *c);
void session_unregister(client *c);
uint64_t session_next_client_id(void);

/* ---- transport operations (installed by net/) ---------------------------- */
typedef void session_job_fn(void *arg);
typedef struct session_transport {
    int (*nworkers)(void);
    /* Run fn(arg) on worker w's loop thread, soon. */
    void (*post)(int w, session_job_fn *fn, void *arg);
    void (*request_shutdown)(void);
    /* From any thread, registry lock held: close c at its worker's next turn. */
    void (*client_kill)(client *c);
    /* Send bytes to a client owned by any worker (MONITOR, pushes). */
    void (*client_send_async)(client *c, const char *p, size_t n);
    /* The remaining four only from the client's (or worker's) own thread. */
    client *(*worker_find_client)(int w, uint64_t id);
    /* After a blocked client got its reply: run its pending input, flush. */
    void (*client_resume)(client *c);
    /* Send c's pending output now; closes c when marked CLIENT_CLOSE_ASAP
     * or when the socket failed (c may be freed). */
    void (*client_flush)(client *c);
    /* Arm (deadline_ms > 0) or clear (0) c's timer; fn(c) runs on expiry. */
    void (*client_timer)(client *c, int64_t deadline_ms, void (*fn)(client *c));
    /* From any thread: the pause mode in force became less restrictive
     * than old_mode (session_unpause, the end of a pause): the held clients
     * run again, in the order they were held. */
    void (*pause_ended)(int old_mode);
    /* From a worker's thread, in the middle of a command that cannot end
     * soon (a script past busy-reply-threshold, or one waiting behind it):
     * read and run, without blocking, what the worker's other connections
     * sent (and accept new ones), and send their replies. The connections
     * in the middle of a command are left alone; no timer, posted job or
     * close runs meanwhile. Nothing on a thread that is not a worker. */
    void (*events_while_busy)(void);
    /* From the client's own worker thread, in the middle of one of its
     * commands (the Lua debugger, which talks to its client while the
     * script runs): send c's pending output now, waiting up to timeout_ms
     * (-1: forever) for the socket each time it is full: 0, or -1 when
     * the socket failed or timed out. And read up to n bytes the same
     * way: the count, 0 at end of file, -1. No event of the loop is
     * touched (a forked process may call them). */
    int (*client_sync_send)(client *c, int timeout_ms);
    long (*client_sync_read)(client *c, char *buf, size_t n, int timeout_ms);
} session_transport;

void session_set_transport(const session_transport *t);

int session_nworkers(void);
void session_post(int w, session_job_fn *fn, void *arg);
void session_request_shutdown(void);
void session_client_kill(client *c);
void session_client_send_async(client *c, const char *p, size_t n);
client *session_worker_find_client(int w, uint64_t id);
void session_client_resume(client *c);
void session_client_flush(client *c);
void session_client_timer(client *c, int64_t deadline_ms, void (*fn)(client *c));
void session_events_while_busy(void);
int session_client_sync_send(client *c, int timeout_ms);
long session_client_sync_read(client *c, char *buf, size_t n, int timeout_ms);

/* ---- CLIENT PAUSE ------------------------------------------------------- *
 * As Redis 7.0's pauseClients: each purpose (CLIENT PAUSE, a failover, a
 * shutdown waiting for its replicas) has
 * its own mode and end; the pause in force is the most restrictive mode
 * among them, ending at the latest end of that mode. A purpose paused again
 * keeps the more restrictive mode and the later end. A pause stays in force
 * past its end until session_pause_check (or session_unpause) clears it;
 * when the mode in force becomes less restrictive, transport->pause_ended
 * gets the mode it had, and the held clients run again in order. */
enum { SESSION_PAUSE_OFF = 0, SESSION_PAUSE_WRITE = 1, SESSION_PAUSE_ALL = 2 };
enum {
    SESSION_PAUSE_BY_CLIENT = 0,
    SESSION_PAUSE_BY_FAILOVER = 1,
    SESSION_PAUSE_BY_SHUTDOWN = 2,
    SESSION_PAUSE_PURPOSES = 3
};
void session_pause(int purpose, int64_t until_ms, int mode);
void session_unpause(int purpose);
/* The mode in force (SESSION_PAUSE_*): one relaxed load, no clock. */
int session_pause_mode(void);
/* Clears the purposes whose end is before now_ms (unix ms), then returns
 * the mode in force and, when it is not OFF, its end in *until_ms. */
int session_pause_check(int64_t now_ms, int64_t *until_ms);

/* ---- counters (INFO stats; relaxed atomics) ------------------------------ *
 * Per connection. The bytes read and written are counted per thread
 * (TSTAT_NET_INPUT / TSTAT_NET_OUTPUT of base/tstat.h). */
extern uint64_t session_stat_connections;
extern uint64_t session_stat_rejected;

/* ---- maxmemory-clients (session/evict.c) --------------------------------
 * session_client_memory: what c holds, as CLIENT LIST's tot-mem (self: the
 * client asking, whose running command's arguments count too);
 * session_client_argv_memory: its argv-mem. session_client_mem_note, from
 * any thread after c's buffers changed: the total follows, and when it
 * reaches the limit a pass is due, which closes the largest clients
 * (session_evict_clients, run by session_evict_pending; a lowered limit
 * asks for one too). The limit in bytes, 0: none. */
size_t session_client_memory(const client *c, const client *self);
size_t session_client_argv_memory(const client *c, const client *self);
void session_client_mem_note(client *c);
void session_client_mem_forget(client *c); /* c leaves the registry */
void session_evict_clients(void);
/* The pass a note or a new limit asked for, if any: from a worker's loop,
 * holding no lock. */
void session_evict_pending(void);
void session_evict_request(void); /* a pass is due (CLIENT NO-EVICT off) */
long long session_client_eviction_limit(void);
void session_evict_config_register(void);
extern uint64_t session_stat_evicted_clients;
/* Redis's reply buffer sizing, as CLIENT LIST's rbs/rbp show it (net/
 * keeps the figures; DEBUG REPLYBUFFER sets these, INFO shows the counts):
 * whether the cron resizes, the peak reset period in ms (-1: never). */
extern int session_replybuf_resizing;
extern long session_replybuf_peak_reset_ms;
extern uint64_t session_stat_replybuf_shrinks, session_stat_replybuf_expands;
#define SESSION_REPLYBUF_PEAK_RESET_MS 5000
#endif
