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

#include "session/client.h"

int net_start(int nworkers);          /* bind + spawn; -1 with a message on error */
/* After net_start: "async" (the workers' io_uring rings) or "epoll". */
const char *net_io_mode(void);
void net_stop(void);                  /* stop loops and join */
/* Leaving while a worker may never return (a script that never ends): as
 * net_stop, but joins only the workers that end within ms. */
void net_stop_within(int ms);
void net_wait(void);                  /* block until shutdown requested */
void net_request_shutdown(void);
int net_nworkers(void);

typedef void net_job_fn(void *arg);
void net_post(int worker, net_job_fn *fn, void *arg);

/* The transport operations of session/session.h, installed by net_start
 * (see there for their contracts). */
void net_client_kill(client *c);
void net_client_send_async(client *c, const char *p, size_t n);
client *net_worker_find_client(int wid, uint64_t id);
void net_client_resume(client *c);
void net_client_flush(client *c);
void net_client_timer(client *c, int64_t deadline_ms, void (*fn)(client *c));
int net_client_sync_send(client *c, int timeout_ms);
long net_client_sync_read(client *c, char *buf, size_t n, int timeout_ms);
#endif
