/* lazyfree.h -- values and whole keyspaces freed by a background thread.
 *
 * UNLINK of a large collection and FLUSHALL/FLUSHDB ASYNC detach what they
 * remove from the keyspace at once (under the locks their command holds)
 * and hand it here; one thread frees it, so the command's own time does
 * not grow with the size of what it removed. What is handed over is no
 * longer reachable by any command: the thread is its only user. */
#ifndef GOBLIN_DB_LAZYFREE_H
#define GOBLIN_DB_LAZYFREE_H
#include <stdint.h>

#include "db/db.h"

/* Whether freeing e's value is worth the hand-over (Redis's free effort
 * above 64: a collection in a table, tree or chunked encoding). */
int lazyfree_worth(const dbentry *e);
/* Free the value v (a detached entry's, moved from: the caller frees only
 * the entry's memory) in the background. */
void lazyfree_value(const gobj *v);
/* Free every entry of a detached shard index and the index (with what its
 * entries live in, its db_space) and vol (the shard's TTL array, may be
 * NULL), in the background. keys is moved from: the caller re-initialises
 * its own copy. */
void lazyfree_index(swiss *keys, dbentry **vol);
/* Objects handed over and not freed yet; objects freed since start-up
 * (INFO lazyfree_pending_objects, lazyfreed_objects). */
uint64_t lazyfree_pending(void);
uint64_t lazyfree_freed(void);
/* CONFIG RESETSTAT: lazyfreed_objects from 0. */
void lazyfree_stats_reset(void);
/* Wait until everything handed over is freed (tests, shutdown). */
void lazyfree_drain(void);
#endif
