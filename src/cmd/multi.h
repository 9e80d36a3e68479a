/* multi.h -- MULTI/EXEC state and WATCH, as the rest of cmd/ reaches them:
 * the dispatcher (EXEC refusals, RESET), key changes that dirty watchers
 * (writes, expiry, eviction, DEBUG), and a client that goes away. */
#ifndef GOBLIN_CMD_MULTI_H
#define GOBLIN_CMD_MULTI_H
#include <stddef.h>
#include <stdint.h>

#include "session/client.h"

/* Mark the clients watching key of db dbid dirty; key NULL: every key of
 * the db; dbid < 0: every db. Cheap when nobody watches. */
void multi_touch(int dbid, const char *key, size_t klen);
/* Before db dbid is emptied (FLUSHDB, FLUSHALL; keyspace write lock
 * held): as Redis 7.0, the watchers of the keys it holds are dirty. */
void multi_touch_emptied(int dbid);
/* After SWAPDB a b (keyspace write lock held): as Redis 7.0, a key
 * watched in a or b dirties its watchers when it exists in either
 * database, unless only an expired key took the place of none. */
void multi_touch_swapped(int a, int b);
/* Drop c's queued transaction and its watched keys. */
void multi_discard_state(client *c);
/* The union of the queued commands' flags (CMDF_*). */
uint32_t multi_queued_flags(const client *c);
/* The flags some queued command lacks (the OR of their complements). */
uint32_t multi_queued_lacking(const client *c);
/* Calls fn for each queued command of c, in order (the cluster's
 * redirection check of EXEC). */
struct cmd_def;
typedef void multi_each_fn(void *arg, const struct cmd_def *cmd, int argc, garg *argv);
void multi_queued_each(const client *c, multi_each_fn *fn, void *arg);
#endif
