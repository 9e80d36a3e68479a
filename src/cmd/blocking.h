/* blocking.h -- clients parked on keys (BLPOP, BZPOPMIN, BLMOVE, ...).
 *
 * A handler that cannot serve now calls block_on_keys() instead of
 * replying; the client stops processing input and waits. Any command that
 * makes a key able to serve a waiter (push, zadd, rename onto it, ...) calls
 * block_signal_key(). After that command completes (after EXEC for a
 * transaction), each signalled key's waiters are retried in FIFO order on
 * their own workers: the blocked command runs again from the top, with its
 * locks, and either replies (and is unblocked) or blocks again. A timeout
 * replies with the command's timeout reply (null array by default).
 *
 * Invariant: a client is in the waiter queue of every key it blocks on, or
 * of none; waiter queues live with the key's database and are guarded by
 * the blocking mutex (never by shard locks, so signalling is cheap). */
#ifndef GOBLIN_CMD_BLOCKING_H
#define GOBLIN_CMD_BLOCKING_H
#include <stdint.h>

#include "session/client.h"
#include "db/db.h"

/* Parse a blocking timeout argument (seconds, fractional allowed) into an
 * absolute unix ms deadline, 0 meaning forever. Replies the Redis error and
 * returns -1 on a bad value ("ERR timeout is not a float or out of range",
 * "ERR timeout is negative"). */
int block_parse_timeout(client *c, const garg *a, int64_t *deadline_ms);

/* Park c on keys[0..n) of its selected db until deadline (0 = forever).
 * The caller must not reply. Inside MULTI (or a script) blocking commands
 * must not block: callers check block_allowed(c) first and reply the
 * timeout reply immediately when it is 0. */
void block_on_keys(client *c, const garg *keys, int nkeys, int64_t deadline_ms);
int block_allowed(const client *c);

/* After block_on_keys: a signal on one of the keys gives every waiter of
 * the key a turn, in FIFO order, whether or not the ones before it were
 * served (Redis serves all the stream readers of a key at once); without
 * it the turns stop at the first waiter that cannot be served (the pops). */
void block_pass_on(client *c);
/* After block_on_keys: argument i of the re-run command becomes p[0..n)
 * (XREAD's "$" becomes the ID it stood for). */
void block_set_arg(client *c, int i, const char *p, size_t n);

/* Non-zero while a blocked client's command is being re-run after a
 * signal. A key of the wrong type must then keep the client blocked
 * (block_on_keys again) instead of replying WRONGTYPE, as Redis 7.0 serves
 * blocked clients only from keys of the type they wait for. */
int block_retrying(const client *c);

/* The arguments of the command c runs as the client sent them (the
 * slow log shows these): c->argv, except in a re-run whose arguments
 * block_set_arg changed. */
const garg *block_sent_args(const client *c);

/* Non-zero when the command just run left c blocked (it blocked, or its
 * re-run blocked again): Redis logs it in the slow log when it is served. */
int block_waiting(const client *c);

/* A run of c's blocked command that left it waiting took us microseconds:
 * counted into the command's time when it ends without being served. */
void block_add_run_time(client *c, uint64_t us);

/* A key may now serve waiters; cheap when nobody waits. */
void block_signal_key(gdb *db, const char *key, size_t klen);

/* Every key of db that has waiters is signalled, existing or not
 * (FLUSHDB, SWAPDB: a stream reader of a group learns its key went). */
void block_signal_db_all(gdb *db);

/* Every key of db that has waiters and exists now is signalled (SWAPDB:
 * the database under an index changed at once). The caller holds the
 * keyspace write lock. */
void block_signal_db(gdb *db);

/* Called by the dispatcher after each top-level command (and after EXEC):
 * hands signalled keys' waiters a retry. */
void block_handle_ready(void);

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if the client was blocked. */
int block_unblock_client(uint64_t id, int with_error);

/* The client is going away or reset: drop it from every queue. */
void block_forget_client(client *c);

/* Retries of woken blocked clients posted and not yet run (any thread). */
long block_retries_pending(void);

/* Number of blocked clients (INFO clients: blocked_clients). */
long block_count(void);

/* Cluster mode, once a second: the blocked clients whose keys' slot moved
 * to another node (or whose cluster failed) get -MOVED (-CLUSTERDOWN) and
 * are unblocked, on their workers. */
void block_cluster_cron(void);
#endif
