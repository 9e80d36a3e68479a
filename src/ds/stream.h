/* stream.h -- the stream type: entries ordered by ID in packed runs, plus
 * consumer groups with their pending entries (see stream.c for the design).
 *
 * Pure data structure: no server types. IDs are 128-bit (ms, seq) pairs
 * compared as unsigned numbers. Entries are appended with strictly growing
 * IDs; deleting marks an entry and never moves another. Not thread-safe:
 * the owning shard serialises calls. */
#ifndef GOBLIN_DS_STREAM_H
#define GOBLIN_DS_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "ds/arena.h"

typedef struct stream_id {
    uint64_t ms, seq;
} stream_id;

static inline int stream_id_cmp(const stream_id *a, const stream_id *b) {
    if (a->ms != b->ms) return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return 0;
}
/* id + 1 / id - 1 with carry; -1 (id unchanged) past the end. */
int stream_id_incr(stream_id *id);
int stream_id_decr(stream_id *id);

#define STREAM_OK 0
#define STREAM_ENOMEM (-1)
#define STREAM_EFULL (-2)

/* Run limits (stream-node-max-bytes, stream-node-max-entries; 0: none). */
typedef struct stream_limits {
    size_t max_bytes;
    long long max_entries;
} stream_limits;

/* A run of entries: in the arena when sealed, the open tail in `open`. */
typedef struct stream_run {
    stream_id first;       /* master ID: the ID of the run's first entry */
    arena_ref ref;         /* ARENA_REF_NONE for the open run */
    uint32_t live, dead;   /* entries not deleted / marked deleted */
    uint32_t lp_fixed;     /* Redis listpack size, its two counters excluded */
    uint32_t len;          /* bytes of the run */
} stream_run;

struct stream_group;

typedef struct gstream {
    arena a;
    stream_run *runs;
    size_t nruns, caprun;
    unsigned char *open;   /* bytes of the last run while it is open */
    size_t open_cap;
    uint64_t length;
    stream_id last_id, first_id, max_deleted_id;
    uint64_t entries_added;
    struct stream_group **groups;   /* sorted by name */
    size_t ngroups, capgroups;
} gstream;

/* A byte string argument. */
typedef struct stream_str {
    const void *p;
    size_t n;
} stream_str;

gstream *stream_new(void);
void stream_free(gstream *s);
gstream *stream_dup(const gstream *s);
static inline uint64_t stream_len(const gstream *s) { return s->length; }
size_t stream_mem_bytes(const gstream *s);

/* Append an entry with id (> last_id, checked by the caller) and nfields
 * (field, value) pairs fv[0..2*nfields). Starts a new run when the tail
 * run is full under lim, as Redis starts a new listpack node. */
int stream_append(gstream *s, const stream_id *id, const stream_str *fv, size_t nfields, const stream_limits *lim);
/* Append an entry to a run being loaded (RDB): new_run starts one with
 * master fields mf[0..nmaster) and master ID first; deleted marks it. */
int stream_load_entry(gstream *s, int new_run, const stream_id *first, const stream_str *mf, size_t nmaster,
                      const stream_id *id, const stream_str *fv, size_t nfields, int deleted);
/* A loaded run whose entries are all deleted goes (a run always has a
 * live entry). */
void stream_load_end_run(gstream *s);
/* Seal the open run (loading ends, or before a dump). */
int stream_seal(gstream *s);

/* Iteration over live entries in [start, end] (NULL: unbounded), forwards
 * or backwards. The iterator sees the stream as of each step: deleting the
 * current entry (stream_iter_delete) is allowed, other changes are not. */
typedef struct stream_iter {
    gstream *s;
    stream_id start, end;
    int rev;
    size_t run;            /* current run index */
    int in_run;
    const unsigned char *base;
    uint32_t *offs;        /* entry offsets of the current run */
    size_t noffs, capoffs;
    long pos;              /* index into offs of the current entry */
    stream_str *master;    /* master fields of the current run */
    size_t nmaster, capmaster;
    /* current entry */
    const unsigned char *ep;   /* after its header */
    size_t nfields;
    int same;
    size_t fi;
    stream_id cur;
} stream_iter;

void stream_iter_init(stream_iter *it, gstream *s, const stream_id *start, const stream_id *end, int rev);
/* 1 with the next entry's ID and field count, 0 at the end. */
int stream_iter_next(stream_iter *it, stream_id *id, size_t *nfields);
/* The next field/value pair of the current entry. */
void stream_iter_field(stream_iter *it, stream_str *field, stream_str *value);
/* Delete the current entry (XDEL through an iterator). */
void stream_iter_delete(stream_iter *it);
void stream_iter_done(stream_iter *it);

/* Delete one entry: 1 when it existed. Updates length, first_id. */
int stream_delete(gstream *s, const stream_id *id);
/* The first / last live entry ID; 0 when empty. */
int stream_edge_id(gstream *s, int first, stream_id *id);

enum { STREAM_TRIM_NONE = 0, STREAM_TRIM_MAXLEN = 1, STREAM_TRIM_MINID = 2 };
typedef struct stream_trim {
    int strategy;
    int approx;
    long long limit;       /* 0: none */
    uint64_t maxlen;
    stream_id minid;
} stream_trim_args;
/* Redis 7.0's streamTrim: whole runs, then (exact) entries in one run. */
int64_t stream_trim(gstream *s, const stream_trim_args *t);

/* Number of runs (XINFO's radix-tree-keys). */
static inline size_t stream_nruns(const gstream *s) { return s->nruns; }

/* Redis listpack size of an element (string, stored as an integer when
 * canonical) and of an integer element, back length included. */
size_t stream_lp_str_size(const void *p, size_t n);
size_t stream_lp_int_size(int64_t v);

/* Walk the runs as Redis's listpack nodes (RDB writer): for run i, its
 * master ID, master fields and every entry (deleted ones too). */
typedef struct stream_run_view {
    stream_id first;
    uint32_t live, dead;
    stream_str *master;
    size_t nmaster;
} stream_run_view;
typedef void stream_entry_fn(void *arg, const stream_id *id, int deleted, int same, const stream_str *fv,
                             size_t nfields);
/* Calls fn for every entry of run i; fills *v. fv: fields and values
 * interleaved (for same-field entries, the master fields). */
int stream_run_walk(gstream *s, size_t i, stream_run_view *v, stream_entry_fn *fn, void *arg);

/* ---- consumer groups ---------------------------------------------------- */

typedef struct stream_consumer stream_consumer;

typedef struct stream_nack {
    stream_id id;
    int64_t delivery_time;
    uint64_t delivery_count;
    stream_consumer *consumer;
} stream_nack;

/* Pending entries, sorted by ID. The group's PEL owns the nacks; each
 * consumer's PEL refers to the same ones. */
typedef struct stream_pel {
    stream_nack **v;
    size_t n, cap;
} stream_pel;

struct stream_consumer {
    char *name;
    size_t nlen;
    int64_t seen_time;
    stream_pel pel;
};

#define STREAM_ENTRIES_READ_INVALID (-1)

typedef struct stream_group {
    char *name;
    size_t nlen;
    stream_id last_id;
    long long entries_read;
    stream_pel pel;
    stream_consumer **cons;   /* sorted by name */
    size_t ncons, capcons;
} stream_group;

stream_group *stream_group_find(gstream *s, const void *name, size_t n);
/* NULL when it exists (or no memory). */
stream_group *stream_group_create(gstream *s, const void *name, size_t n, const stream_id *last_id,
                                  long long entries_read);
int stream_group_destroy(gstream *s, const void *name, size_t n);

stream_consumer *stream_consumer_find(stream_group *g, const void *name, size_t n);
stream_consumer *stream_consumer_create(stream_group *g, const void *name, size_t n, int64_t now);
/* Removes the consumer and its pending entries; returns how many it had. */
size_t stream_consumer_delete(stream_group *g, stream_consumer *c);

/* Position of the first nack with ID >= id. */
size_t stream_pel_lower(const stream_pel *p, const stream_id *id);
stream_nack *stream_pel_find(const stream_pel *p, const stream_id *id);
int stream_pel_insert(stream_pel *p, stream_nack *na);
void stream_pel_remove(stream_pel *p, const stream_id *id);

/* A new nack owned by c's group PEL and c's PEL (id must not be pending). */
stream_nack *stream_nack_add(stream_group *g, stream_consumer *c, const stream_id *id, int64_t now);
/* Drop a nack from both PELs and free it. */
void stream_nack_del(stream_group *g, stream_nack *na);
/* Move na to consumer c. */
void stream_nack_move(stream_nack *na, stream_consumer *c);

/* entries_read / lag (Redis 7.0's streamEstimateDistanceFromFirstEverEntry
 * and streamRangeHasTombstones). */
int stream_range_has_tombstones(gstream *s, const stream_id *start, const stream_id *end);
long long stream_estimate_distance(gstream *s, const stream_id *id);

/* Invariant check (tests): 0 when consistent. */
int stream_check(gstream *s);
#endif
