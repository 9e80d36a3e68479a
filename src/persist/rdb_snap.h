/* rdb_snap.h -- a point-in-time RDB without fork: versioned iteration.
 *
 * Where fork is refused (--arena-hugetlb), a replica's full sync still
 * gets the dataset as it was at one instant (the offset of its stream)
 * while clients go on writing:
 *
 *   rdb_snap_begin     under the keyspace write lock (with the stream lock,
 *                      where the offset is taken): flips the entries' mark
 *                      (db.h), so every entry is "unsaved", and writes the
 *                      RDB header. O(number of databases).
 *   rdb_snap_run       on the caller's thread, no lock held: a pass over
 *                      every database and shard in cursor steps (the
 *                      keyspace read lock and one shard lock per step)
 *                      writes each unsaved entry and marks it; then the
 *                      trailer (EOF, CRC-64). The snapshot then ends.
 *   rdb_snap_save      before a change to an unsaved entry (the dispatcher
 *                      for a write command's keys, the db layer before it
 *                      removes an entry or changes a TTL): its value goes
 *                      into the writers' buffer first and it is marked.
 *
 * Invariant: every entry present at the start is written exactly once,
 * with the value it had at the start: before its first change (by the
 * writer that changes it) or, if it never changes, by the pass (a cursor
 * scan reports every entry present for the whole scan). Entries created
 * after the start carry the mark already and are left to the stream.
 * Records of several writers and of the pass interleave in the file in
 * chunks, each starting with its SELECTDB (a loader takes SELECTDB
 * anywhere; the order of keys in an RDB does not matter).
 *
 * Memory: the writers' buffer is bounded (the limit given to
 * rdb_snap_begin); the pass drains it after every step, and a writer that
 * finds it over the limit writes it to the output itself: a bounded pause
 * for that writer (the time to write the buffer) instead of unbounded
 * memory. The pass's own chunk is at most about 1 MiB plus one value.
 *
 * A failed output (the replica went away) ends the snapshot the same way,
 * with a pass that only marks, so the next snapshot's flip makes every
 * entry unsaved again. One snapshot at a time (rdb_snap_claim).
 *
 * Lock order: keyspace lock, shard locks, then out_mu (the output: held
 * while writing to it, never while waiting for any other lock but
 * state_mu), then state_mu (the writers' buffer and the counters). */
#ifndef GOBLIN_PERSIST_RDB_SNAP_H
#define GOBLIN_PERSIST_RDB_SNAP_H
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "persist/rdb.h"

/* 0: the caller owns the next snapshot; -1: one runs (try again later). */
int rdb_snap_claim(void);
/* Give back a claim without starting. */
void rdb_snap_release(void);
/* Start the claimed snapshot; the caller holds the keyspace write lock.
 * fd (blocking) receives the RDB from its first byte; limit bounds the
 * writers' buffer. RDB_OK, or an error (the claim is given back). */
int rdb_snap_begin(int fd, const rdb_save_opts *opt, size_t limit, char *err, size_t errlen);
/* Called about once a second during rdb_snap_run (no lock held); a
 * non-zero return fails the snapshot (the output's reader is gone). */
typedef int rdb_snap_tick_fn(void *arg);
/* The pass and the trailer; the snapshot has ended when it returns (the
 * claim too). RDB_OK, or an error with a message. */
int rdb_snap_run(rdb_snap_tick_fn *tick, void *arg, rdb_save_stats *st, char *err, size_t errlen);
/* The rest of the pass, now, on the calling thread: for changes that
 * cannot name their keys (a whole dataset replaced or flushed). The
 * keyspace write lock is held. */
void rdb_snap_finish_locked(void);
/* Save e (unsaved: its shard lock or the keyspace write lock is held)
 * before a change; fold as for rdb_membuf_entry. */
void rdb_snap_save(gdb *db, dbentry *e, int fold);

typedef struct rdb_snap_stats {
    int in_progress;
    uint64_t buffer_bytes;            /* the writers' buffer now */
    uint64_t buffer_peak;             /* its largest size in this (or the last) snapshot */
    uint64_t buffer_limit;
    uint64_t keys_saved;              /* keys written so far by this (or the last) snapshot */
    uint64_t keys_saved_by_writers;   /* of which before a change */
    uint64_t writer_flushes;          /* writers that found the buffer full and wrote it */
    uint64_t bytes;                   /* RDB bytes written */
    uint64_t started, failed;         /* snapshots since start-up */
} rdb_snap_stats;
void rdb_snap_get_stats(rdb_snap_stats *st);
#endif
