/* tstat.h -- per-thread counters of the command path.
 *
 * Counters that every command adds to (bytes read and written, commands
 * processed, keyspace hits and misses, the dirty counter) are not one
 * shared word that all workers write: each thread adds to its own slot, a
 * 64-byte-aligned struct that no other thread writes, and readers (INFO,
 * the cron, the save points) add the slots up. The owner writes its slot
 * with a relaxed atomic store of the incremented value (no lock prefix:
 * nobody else writes it); readers load each word with a relaxed atomic
 * load.
 *
 * A thread gets a slot on its first add and gives it back when it exits;
 * the next thread to get that slot adds on top of what it holds, so the
 * sums never go back. Slots are never freed: they are all on one list,
 * which readers walk. A reset (CONFIG RESETSTAT) does not touch the slots:
 * it records the current sum as the counter's zero. Sums are taken slot by
 * slot while others add: each is a value the counter had or lies between
 * two such values, as a relaxed load of one shared counter would be. */
#ifndef GOBLIN_BASE_TSTAT_H
#define GOBLIN_BASE_TSTAT_H
#include <stdint.h>

enum {
    TSTAT_NET_INPUT,       /* bytes read from clients (total_net_input_bytes) */
    TSTAT_NET_OUTPUT,      /* bytes written to clients (total_net_output_bytes) */
    TSTAT_COMMANDS,        /* commands processed (total_commands_processed) */
    TSTAT_KEYSPACE_HITS,   /* keyspace_hits */
    TSTAT_KEYSPACE_MISSES, /* keyspace_misses */
    TSTAT_DIRTY,           /* changes since start (db_dirty_now; never reset) */
    TSTAT_READS,           /* client read events served (total_reads_processed) */
    TSTAT_WRITES,          /* client output flushes (total_writes_processed) */
    TSTAT_NET_OUTPUT_DIRECT, /* of NET_OUTPUT, sent from the caller's memory (reply_rawv) */
    TSTAT_KEYS_PREFETCHED, /* keys whose lookups were prefetched (db_prefetch_keys) */
    TSTAT_SLAB_LIVE,       /* bytes of live slab slots (mem/slab.c); frees add -size:
                              only the sum over slots (mod 2^64) means anything */
    TSTAT_SLAB_REF_POOLS,  /* slabs held by pools with references (mem/slab.c), as
                              TSTAT_SLAB_LIVE: only the sum means anything */
    TSTAT_N
};

typedef struct tstat_slot {
    _Alignas(64) uint64_t v[TSTAT_N];
    /* The command layer's per-slot counters (cmd/command.c): set once by
     * an owner with a release store, read by others with acquire loads. */
    void *ext;
    struct tstat_slot *next; /* every slot made, newest first */
} tstat_slot;

extern _Thread_local tstat_slot *tstat_self_slot;
tstat_slot *tstat_claim(void);

/* This thread's slot (taken on first use). */
static inline tstat_slot *tstat_self(void) {
    tstat_slot *s = tstat_self_slot;
    return s ? s : tstat_claim();
}

/* Add n to a word of this thread's slot (or of what hangs from it). */
static inline void tstat_word_add(uint64_t *w, uint64_t n) { __atomic_store_n(w, *w + n, __ATOMIC_RELAXED); }

static inline void tstat_add(int id, uint64_t n) { tstat_word_add(&tstat_self()->v[id], n); }

/* The first slot of the list of all (NULL: none yet); then s->next. */
const tstat_slot *tstat_first(void);

/* The counter's value since its last reset. */
uint64_t tstat_sum(int id);
/* Its value counting from the start (what a reset does not change). */
uint64_t tstat_sum_raw(int id);
/* Start counting it from zero again. */
void tstat_reset(int id);
#endif
