/* propagate.h -- what a command puts on the write stream (persist/wstream).
 *
 * Redis 7.0's rules, kept per call of cmd_call():
 *  - a call that changed the dataset (it signalled db_signal_modified) is
 *    propagated as it was sent, unless its handler rewrote it
 *    (prop_rewrite: a relative expire as PEXPIREAT, SPOP as SREM, a
 *    blocking pop as the pop it did, ...) or asked for nothing
 *    (prop_none);
 *  - a handler may add records (prop_also: the DEL of a key it expired
 *    lazily, a second effect);
 *  - calls nested in another (EXEC's queued commands, a script's
 *    redis.call) add their records to the outermost call's; EXEC and the
 *    script commands themselves propagate nothing of their own (their
 *    effects are what their nested calls propagated);
 *  - when the outermost call ends with more than one record they are
 *    wrapped in MULTI ... EXEC, so a transaction or a script stays atomic
 *    in the stream.
 * The outermost call appends while it still holds its key shards (or the
 * keyspace write lock), which keeps wstream's order invariant; a command
 * that takes locks of its own (EXEC the keyspace write lock, SCAN one
 * shard at a time) appends with prop_flush before it lets them go. Changes
 * made outside any call (active expiry, eviction) go straight to the
 * stream with prop_direct, under the shard lock of the key they change. */
#ifndef GOBLIN_CMD_PROPAGATE_H
#define GOBLIN_CMD_PROPAGATE_H
#include <stddef.h>

#include "persist/wstream.h"
#include "session/client.h"

struct cmd_def;

/* Whether a command (its full name, "debug|reload" or "exec") puts no
 * record of its own on the stream; the table marks it CMDF_NO_OWN_RECORD. */
int prop_no_own_record(const char *fullname);

/* Non-zero while the calling thread runs a command (cmd_call). */
int prop_in_call(void);
/* Around the handler in cmd_call (prop_end before the locks go). */
void prop_begin(void);
void prop_end(client *c, const struct cmd_def *cmd);
/* The records the outermost call collected so far enter the stream now,
 * as prop_end would put them (more than one: inside MULTI ... EXEC), for a
 * handler that is about to release locks it took itself. Inside a nested
 * call it does nothing: the outermost call holds its locks still. */
void prop_flush(void);
/* Where the own records of the calls nested in the running one go from
 * now on (a mask of WSTREAM_TO_*: redis.set_repl in a script; the records
 * a handler adds, such as a lazily expired key's DEL, go everywhere, as in
 * Redis); returns the mask before. A script sets WSTREAM_TO_ALL when it
 * starts and ends. */
int prop_call_targets(int to);
/* Counted by the db layer's modified hook. */
void prop_count_change(void);

/* For handlers. */
void prop_rewrite(client *c, int argc, const char *const *p, const size_t *n);
void prop_none(client *c);
/* The call goes to the replicas (not the AOF) as sent, though it changed
 * nothing: PUBLISH, as Redis's forceCommandPropagation(PROPAGATE_REPL). */
void prop_force_repl(client *c);
void prop_also(int dbid, int argc, const char *const *p, const size_t *n);
/* A one-key command (DEL key, UNLINK key) outside or inside a call. */
void prop_key(int dbid, const char *cmd, const char *key, size_t klen);
/* A key the server deleted: DEL, or UNLINK when the lazyfree option for
 * why says so (Redis's propagateDeletion). */
enum { PROP_DEL_EXPIRED = 0, PROP_DEL_EVICTED = 1 };
void prop_deletion(int dbid, int why, const char *key, size_t klen);
/* Bind the lazyfree options prop_deletion reads. */
void prop_config_register(void);
/* A thread that ran calls ends: its record list goes. */
void prop_thread_exit(void);
/* Outside any call: one record, straight to the stream. */
void prop_direct(int dbid, int argc, const char *const *p, const size_t *n);
/* One record for the replicas only, with no SELECT before it (DEBUG
 * REPLICATE, which lets them diverge). */
void prop_direct_repl(int argc, const char *const *p, const size_t *n);

/* The call's own arguments with argument i replaced by p[0..n) (i equal
 * to the argument count appends one); repeated calls edit the rewrite. */
void prop_rewrite_arg(client *c, int i, const char *p, size_t n);
void prop_rewrite_arg_ll(client *c, int i, long long v);
/* The call's own arguments (or its rewrite so far) without argument i. */
void prop_rewrite_drop_arg(client *c, int i);
/* Absolute-time forms handlers rewrite to: PEXPIREAT key ms. */
void prop_pexpireat(client *c, const char *key, size_t klen, long long when_ms);
#endif
