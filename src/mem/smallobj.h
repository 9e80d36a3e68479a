/* smallobj.h -- compact arena for objects smaller than --ram-head.
 *
 * Records are byte-aligned: an 8-byte header {handle, cap} and the bytes,
 * at least 32 bytes in all, so a 1 KiB object costs 1,032 bytes and a
 * 30-byte one 38. The owner keeps the length it uses (the arena knows
 * only the room; there is no NUL after it). Records
 * live in segments of --block bytes; a freed record merges with free
 * neighbours, and free records are reused (whole or split) before the
 * segments grow (smallobj.c); compaction empties sparse segments and gives
 * them back. Owners never hold a record's address across
 * commands: they hold a handle, a 32-bit index of a stable cell in a
 * handle table whose 6 bytes are the record's address, which is what lets
 * smallobj_compact() slide live records together and re-point the cells.
 * A record costs its owner SMALLOBJ_CELL_BYTES more.
 *
 * Pure module. One leaf mutex guards the arena; reading a record's bytes
 * needs no lock (records only move in smallobj_compact, whose caller
 * guarantees nobody is reading). */
#ifndef GOBLIN_MEM_SMALLOBJ_H
#define GOBLIN_MEM_SMALLOBJ_H
#include <stddef.h>
#include <stdint.h>

/* A record at any byte address: its header is two 32-bit words, read and
 * written bytewise: the arena's (the handle and a bit of its own) and the
 * cap, the data room in bytes (smallobj_cap), which stays as allocated. */
typedef struct smallrec {
    unsigned char hdr[8];
    char data[];       /* at offset 8 */
} smallrec;
#define SMALLOBJ_NONE 0u        /* no handle: allocation failed */
#define SMALLOBJ_CELL_BYTES 6   /* a handle cell */
/* The room for data in r. */
size_t smallobj_cap(const smallrec *r);

/* capacity 0: unbounded. seg: segment size; maxobj: records are < maxobj.
 * node: where segments are mapped (-1: anywhere). */
int smallobj_init(size_t capacity, size_t seg, size_t maxobj, int node);
/* Another pool (--small-sub-memory): segments on node, up to capacity
 * bytes, used once the pools added before it are full. 0 ok, -1 refused. */
int smallobj_add_pool(int node, size_t capacity);
/* A record with room for n bytes (or a few more: its cap says). Returns
 * its handle, or SMALLOBJ_NONE when the arena is full (or 2^31 - 1
 * handles are in use). */
uint32_t smallobj_alloc(size_t n);
/* The record of handle h: valid until the next compaction step. Needs no
 * lock. smallobj_free(SMALLOBJ_NONE) does nothing. */
smallrec *smallobj_rec(uint32_t h);
void smallobj_free(uint32_t h);
/* Every pool has a capacity, and fewer than need bytes are left in them
 * (free records, unbumped room, unmapped capacity) or (rec > 0) no place
 * is left for a record of rec bytes (free records too small or scattered
 * for it). */
int smallobj_exhausted(size_t need, size_t rec);
/* Bytes a record takes in the arena (header and padding included). */
size_t smallobj_record_size(const smallrec *r);
/* Bytes a new record for n bytes takes. */
size_t smallobj_size_for(size_t n);
/* Compaction evacuates sparse segments (live records copied elsewhere,
 * handles re-pointed, the segment handed to the reclaim thread to unmap).
 * The caller guarantees that no thread reads a record meanwhile.
 * smallobj_wants_compaction: a step would do something (cheap check);
 * smallobj_compact_step: evacuate one segment, returns the bytes given back
 * (0: nothing, or it could not finish); smallobj_compact: steps until
 * nothing is left to do. */
int smallobj_wants_compaction(void);
size_t smallobj_compact_step(void);
size_t smallobj_compact(void);

/* Walks every segment and free list against the invariants of
 * smallobj.c: 0 when they hold, a negative code for the first that does
 * not (tests). */
int smallobj_check(void);

typedef struct smallobj_stats {
    size_t segments, seg_bytes, capacity;
    size_t live_records, live_bytes;   /* record bytes incl. headers */
    size_t free_bytes;                 /* dead records on free lists */
    uint64_t alloc_fail, compactions, moved, released;
    int npools;
    struct {
        int node;
        size_t segments, capacity;
    } pool[16];
} smallobj_stats;
void smallobj_stats_get(smallobj_stats *st);
/* Live record bytes, read without the allocator's lock: used memory (INFO,
 * the eviction check) must not wait for a thread that allocates or frees
 * (the lazy-free thread freeing millions of records holds the lock most of
 * the time). */
size_t smallobj_live_bytes(void);
#endif
