/* net.h -- workers, listeners and connections.
 *
 * N workers, each a thread with its own libevent loop and its own
 * SO_REUSEPORT listening sockets; a connection stays on the worker that
 * accepted it for its whole life. Other threads reach a worker only through
 * net_post() (a mutex-guarded job queue plus an eventfd the loop watches). */
#ifndef GOBLIN_NET_NET_H
#define GOBLIN_NET_NET_H
#include <stddef.h>
#include <stdint.h>

#include "cmd/client.h"

int net_start(int nworkers);          /* bind + spawn; -1 with a message on error */
void net_stop(void);                  /* stop loops and join */
void net_wait(void);                  /* block until shutdown requested */
void net_request_shutdown(void);
int net_nworkers(void);

typedef void net_job_fn(void *arg);
void net_post(int worker, net_job_fn *fn, void *arg);

/* Client registry (CLIENT LIST / KILL / INFO clients). */
typedef void net_client_fn(void *arg, client *c);
void net_clients_each(net_client_fn *fn, void *arg);   /* under the registry lock */
long net_clients_count(void);
void net_client_kill(client *c);                        /* from any thread; registry lock held */
/* Send bytes to a client owned by any worker (MONITOR, later pub/sub). */
void net_client_send_async(client *c, const char *p, size_t n);
void net_registry_lock(void);
void net_registry_unlock(void);

/* Blocked clients (cmd/blocking.c). Worker-thread-only calls say so. */
/* Find a client of worker wid by id; only from that worker's thread. */
client *net_worker_find_client(int wid, uint64_t id);
/* After a blocked client got its reply: run its pending input and flush.
 * Only from the client's own worker thread. */
void net_client_resume(client *c);
/* Send c's pending output now (closing c when marked CLIENT_CLOSE_ASAP or
 * when the socket failed: c may be freed). Only from c's worker thread. */
void net_client_flush(client *c);
/* Arm (deadline_ms > 0) or clear (0) the client's timeout timer; when it
 * fires, fn(c) runs on the client's worker. Only from the owning worker. */
void net_client_timer(client *c, int64_t deadline_ms, void (*fn)(client *c));

/* CLIENT PAUSE state. */
void net_pause(int64_t until_ms, int write_only);
void net_unpause(void);

extern uint64_t net_stat_connections;
extern uint64_t net_stat_rejected;
extern uint64_t net_stat_net_input, net_stat_net_output;
#endif
