/* repl.h -- replication as Redis 7.0 speaks it (PSYNC2), both sides.
 *
 * Primary side (primary.c): the replication stream is the write stream
 * (persist/wstream.h) plus the primary's PINGs; every byte goes to the
 * backlog and to each attached replica. A replica that sent PSYNC is
 * handed its socket (client.handoff) and served by a thread of its own:
 * the full sync (an RDB from a fork child, through a pipe or a file, or
 * written in the foreground when fork is refused), then the stream, while
 * it reads the replica's REPLCONF ACKs.
 *
 * Replica side (replica.c): one thread connects to the primary, does the
 * handshake, loads the RDB of a full sync (swapping the dataset in at
 * once) and applies the stream through a client of its own; it passes the
 * primary's bytes on unchanged to its own replicas and backlog, so chains
 * share one replication id and offsets.
 *
 * The state (replication ids, offsets, the backlog, the links) is under
 * one mutex, taken after the write stream's lock when both are held. */
#ifndef GOBLIN_CMD_REPL_REPL_H
#define GOBLIN_CMD_REPL_REPL_H
#include <stddef.h>
#include <stdint.h>

#include "session/client.h"
#include "util/strbuf.h"

struct cmd_def;

/* ---- primary.c ---------------------------------------------------------- */

/* Bind the repl-* directives; start the replication cron thread. */
void repl_primary_init(void);
void repl_primary_shutdown(void);

/* The handshake state a client collected with REPLCONF before PSYNC. */
void repl_client_gone(client *c);
int repl_replconf(client *c);       /* 0 handled (reply sent) */
/* PSYNC replid offset / SYNC (psync 0): reply and take the connection. */
void repl_psync(client *c, int psync);

/* This node's offset (master_repl_offset) and replication id. */
uint64_t repl_offset(void);
void repl_replid(char id[41]);
/* Replace the ids: a new random replid, the old one kept as replid2 valid
 * up to the current offset (promotion, as Redis's shiftReplicationId). */
void repl_shift_replid(void);
/* A primary's start-up from a dump that names its stream (Redis 7.0):
 * that id becomes replid2, valid up to offset + 1, the offset goes on
 * from there in a fresh backlog, and the deletions of the keys the load
 * dropped as expired enter it first, so replicas continue with PSYNC. */
struct persist_dropped_key;
void repl_primary_resume(const char id[41], long long offset, const struct persist_dropped_key *keys, size_t n);
/* What a primary's dump records of its stream (its id, offset and
 * database); 0 while it has no backlog. */
int repl_primary_save_info(char id[41], long long *offset, int *stream_db);
/* Bytes the replication stream holds: the backlog's ring and the
 * replicas' links' pending output (INFO's mem_replication_backlog and
 * mem_clients_slaves; their sum is mem_total_replication_buffers). */
void repl_buffer_memory(size_t *backlog, size_t *replicas);
/* A replica took the primary's ids and offset (a full sync or +CONTINUE). */
void repl_set_ids(const char *replid, const char *replid2, long long second_off, uint64_t offset);
/* Bytes of the primary's stream a replica applied: to the backlog and its
 * own replicas, unchanged. */
void repl_feed_from_primary(const char *p, size_t n);
/* A worker thread calls repl_batch_begin once: from then on the stream
 * bytes it appends wake the replicas' link threads only when it calls
 * repl_batch_end, after each loop iteration (as Redis writes to its
 * replicas once per event-loop iteration). Other threads wake them at
 * once. */
void repl_batch_begin(void);
void repl_batch_end(void);
/* This node follows a primary: its own records are not replicated (the
 * primary's bytes are, through repl_feed_from_primary). */
void repl_set_following(int on);
/* A replica acknowledged: answer the WAITs it satisfies. */
void repl_wait_check(void);
/* Disconnect every attached replica (this node becomes a replica). */
void repl_drop_replicas(void);
/* Attached replicas that acknowledged offset >= off. */
int repl_acked(uint64_t off);
/* Ask the replicas for an ACK now (REPLCONF GETACK * into the stream). */
void repl_request_acks(void);
/* min-replicas-to-write: nonzero when writes must be refused (NOREPLICAS). */
int repl_min_replicas_refuse(void);
/* WAIT: park c until n replicas acked off or the deadline (0: none). */
void repl_wait(client *c, int n, uint64_t off, int64_t deadline_ms);

/* A fork-less full sync runs (db_snap_running()): save the keys cmd may
 * change before it runs (cmd/repl/forkless.c). After lock_for; mode is
 * the lock it took. */
void repl_snap_before_call(client *c, const struct cmd_def *cmd, int mode);

/* INFO replication's lines after role/connected_slaves (both sides). */
void repl_info_replicas(strbuf *b);
void repl_info_offsets(strbuf *b);
/* ROLE's replica list: each replica's ip, port and acked offset. */
typedef void repl_replica_fn(void *arg, const char *ip, int port, uint64_t ack);
int repl_replicas_each(repl_replica_fn *fn, void *arg);
/* replstat.c: INFO stats' sync_full, sync_partial_ok, sync_partial_err
 * and total_net_repl_input/output_bytes since the last CONFIG RESETSTAT;
 * repl_bytes_raw counts from the start (for the cron's rates). */
enum { REPL_SYNC_FULL, REPL_SYNC_PARTIAL_OK, REPL_SYNC_PARTIAL_ERR };
enum { REPL_BYTES_IN, REPL_BYTES_OUT };
void repl_stat_sync(int which);
void repl_stat_bytes(int dir, size_t n);
unsigned long long repl_sync_stat(int which);
unsigned long long repl_bytes_stat(int dir);
uint64_t repl_bytes_raw(int dir);
void repl_stats_reset(void);
/* The replica links as CLIENT LIST shows them (the client each was when
 * it sent PSYNC). fn runs under the links' lock: it must not call back. */
typedef struct repl_link_view {
    uint64_t id;
    const char *addr, *laddr, *name, *user;
    int fd, resp;
    int64_t ctime_ms, last_ms; /* wall clock: attached, last ACK */
    size_t obuf;               /* stream bytes not yet sent */
} repl_link_view;
typedef void repl_link_fn(void *arg, const repl_link_view *v);
void repl_links_each(repl_link_fn *fn, void *arg);
/* CLIENT KILL of replicas: the link with client id `id` (0: every one)
 * closes (the replica reconnects as it would in Redis); the number of
 * links closed. */
int repl_kill_replicas(uint64_t id);
/* CLIENT KILL of the primary's client on a replica: the link to the
 * primary closes and is made again (PSYNC); 1, or 0 when there is none
 * streaming. */
int repl_kill_primary_link(void);
/* On a replica streaming from its primary: fn(arg, the primary's client),
 * the client CLIENT LIST shows with flags M (its id, addresses and age are
 * those of the current link). fn runs under the replication lock: it must
 * not call back into replication (repl_kill_primary_link). */
void repl_primary_client_each(void (*fn)(void *arg, client *c), void *arg);

/* shutdown.c: the grace period before a shutdown (shutdown-timeout).
 * repl_shutdown_grace: when some replica lags behind the stream, pause
 * writes, ask for ACKs and wait until every replica caught up or the
 * timeout passed, calling pump (may be NULL) every millisecond: 0, go on
 * with the shutdown (writes stay paused until it is over or
 * repl_shutdown_grace_end); -1, SHUTDOWN ABORT arrived (writes resumed) or
 * another shutdown is under way (the SHUTDOWN command joins it first).
 * repl_shutdown_abort: 0, the waiting shutdown (or a signal's, pending)
 * will stop; -1, none waits.
 * A signal's shutdown: repl_shutdown_signal_begin when the signal arrives
 * gives its ticket (0: one is under way already); repl_shutdown_signal_wait
 * keeps it pending while held() (the cron paused), then 0 to go on, or -1
 * when SHUTDOWN ABORT dropped it; repl_shutdown_signal_end when it did not
 * stop the server; repl_shutdown_signal_active between begin and end (or
 * an abort). */
void repl_shutdown_config_register(void);
int repl_shutdown_grace(void (*pump)(void));
/* repl_shutdown_join: while a shutdown waits for its replicas or finishes,
 * c (a SHUTDOWN client) is blocked until it is over: 1; the error reaches
 * c if the server keeps running. 0: no shutdown is under way. */
int repl_shutdown_join(client *c);
void repl_shutdown_grace_end(void);
int repl_shutdown_abort(void);
unsigned repl_shutdown_signal_begin(void);
int repl_shutdown_signal_wait(unsigned ticket, int (*held)(void));
void repl_shutdown_signal_end(unsigned ticket);
int repl_shutdown_signal_active(void);
/* While a shutdown waits for its replicas: the milliseconds left until
 * shutdown-timeout (INFO's shutdown_in_milliseconds); -1 otherwise. */
long long repl_shutdown_in_ms(void);
/* The last step before a shutdown saves and exits: each replica still
 * behind is logged, then how many of them are in sync (Redis's
 * finishShutdown). */
void repl_shutdown_report(void);

/* FAILOVER [TO host port [FORCE]] [TIMEOUT ms]: 0, or -1 with err (Redis's
 * text). repl_failover_abort: -1 when none runs. The replica side calls
 * repl_failover_done when its PSYNC FAILOVER was answered (ok) or refused
 * (why: the reason the abort logs). */
int repl_failover_start(const char *host, int port, long long timeout_ms, int force, char *err, size_t errlen);
int repl_failover_abort(void);
void repl_failover_done(int ok, const char *why);
const char *repl_failover_state(void);
/* The cron's step of a FAILOVER under way: go on once the target caught
 * up, or time out. */
void repl_failover_step(void);
/* For FAILOVER: whether an online replica at host:port (host NULL: any)
 * is there, and with caught_up, has acknowledged the whole stream; the
 * first one found is written to ohost/oport (when not NULL). */
int repl_failover_target(const char *host, int port, int caught_up, char *ohost, size_t ohostlen, int *oport);
/* How many replicas are linked to this primary. */
int repl_replica_count(void);

/* ---- replica.c ---------------------------------------------------------- */

void repl_replica_init(void);        /* replicaof in the config file */
void repl_replicaof_config_register(void); /* before the config is read: its check */
/* Start-up is over (the dataset is loaded): a configured replica starts
 * following its primary. */
void repl_start(void);
void repl_replica_shutdown(void);
/* REPLICAOF host port (host NULL: NO ONE). 0, or -1 with err. */
int repl_replicaof(const char *host, int port, char *err, size_t errlen);
/* REPLICAOF host port whose PSYNC carries FAILOVER (the target promotes
 * itself first). */
int repl_replicaof_failover(const char *host, int port, char *err, size_t errlen);
/* This node follows a primary. */
int repl_is_replica(void);
/* ... with replica-read-only yes. */
int repl_read_only(void);
/* ... and its link to the primary is up. */
int repl_primary_link_up(void);
/* A replica: milliseconds since the last byte from its primary (link up)
 * or since the link went down; 0 on a primary. */
long long repl_data_age_ms(void);
/* INFO's replication section. */
void repl_info(strbuf *b);
/* The client applying the primary's stream runs this command. */
int repl_is_primary_client(const client *c);
/* cmd_call, for the primary's client, while the command holds its locks:
 * the dataset now includes the command (see replica.c). */
void repl_applied_locked(void);
/* INFO replication / ROLE of a replica. */
void repl_info_replica(strbuf *b);
void repl_role_replica(client *c);
/* replica-serve-stale-data no and the link is down: the error for c's
 * command, else NULL. */
const char *repl_stale_refusal(void);
#endif
