/* tracking.h -- client-side caching (CLIENT TRACKING): which clients may
 * hold which keys, and the invalidation messages they get when those keys
 * change (see tracking.c for the tables and their invariant).
 *
 * Every entry point is cheap to skip: tracking_active() is one relaxed
 * load, zero until the first CLIENT TRACKING ON and again once nothing is
 * tracked, and callers test it before calling in. */
#ifndef GOBLIN_CMD_TRACKING_H
#define GOBLIN_CMD_TRACKING_H
#include <stddef.h>
#include <stdint.h>

#include "cmd/command.h"

extern int tracking_live;
static inline int tracking_active(void) { return __atomic_load_n(&tracking_live, __ATOMIC_RELAXED); }

void tracking_init(void);

/* The dispatcher's hooks. command_begin/end bracket cmd_execute: commands
 * of c run on this thread meanwhile (the tracking-table-max-keys limit is
 * enforced first, its invalidations for c go out before the reply).
 * call_begin/call_end bracket cmd_call (nested: a call inside EXEC or a
 * script); after_proc runs while the call's locks are held and remembers
 * the keys a read-only command read. Invalidations of c's own tracked keys
 * caused during a top-level call go out after its reply (call_end). */
typedef struct tracking_frame {
    client *top;
    int in_call;
} tracking_frame;
void tracking_command_begin(client *c, tracking_frame *save);
void tracking_command_end(const tracking_frame *save);
void tracking_call_begin(client *c, int nested, tracking_frame *save);
void tracking_after_proc(client *c, const cmd_def *cmd, int nested);
void tracking_call_end(client *c, const cmd_def *cmd, int nested, const tracking_frame *save);

/* key changed; by: the client whose command changed it (NULL for expiry
 * and eviction), for BCAST NOLOOP. Callable from any thread, with the
 * key's shard locked. */
void tracking_key_modified(const client *by, const char *key, size_t klen);
/* FLUSHALL / FLUSHDB / a dataset load: every tracking client is told that
 * all its keys are invalid (a null), and the table is emptied. */
void tracking_invalidate_all(void);
/* BCAST: send the keys that changed since the last call (the end of a
 * worker's loop iteration, the end of an expiry cycle); any thread. */
void tracking_bcast_flush(void);
/* Housekeeping from the cron thread: the tracking-table-max-keys limit. */
void tracking_cron(void);

/* The client goes away or RESETs: tracking off. */
void tracking_client_gone(client *c);

/* INFO. */
typedef struct tracking_stats {
    long long clients, keys, items, prefixes;
} tracking_stats;
void tracking_stats_get(tracking_stats *st);

extern const cmd_handler tracking_handlers[];
/* The thread is ending: free its buffer of pending invalidations. */
void tracking_thread_exit(void);
#endif
