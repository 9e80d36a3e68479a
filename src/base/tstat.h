/* tstat.h -- per-thread counters of the command path.
 *
 * Counters that every command adds to (bytes read and written, commands
 * processed, keyspace hits and misses, the dirty counter) are not one
 * shared word that all workers write: each thread adds to its own slot, a
 * 64-byte-aligned struct of a static array, and readers (INFO, the cron,
 * the save points) add the slots up. The owner writes its slot with a
 * relaxed atomic store of the incremented value (no lock prefix: nobody
 * else writes it); readers load each word with a relaxed atomic load.
 *
 * A thread takes a slot on its first add and gives it back when it exits;
 * the next thread to take that slot adds on top of what it holds, so the
 * sums never go back. Past TSTAT_SLOTS live threads, the others share one
 * more slot with atomic adds. A reset (CONFIG RESETSTAT) does not touch
 * the slots: it records the current sum as the counter's zero. Sums are
 * taken slot by slot while others add: each is a value the counter had or
 * lies between two such values, as a relaxed load of one shared counter
 * would be. */
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
    TSTAT_N
};

#define TSTAT_SLOTS 128

typedef struct tstat_slot {
    _Alignas(64) uint64_t v[TSTAT_N];
    int index;  /* 0 .. TSTAT_SLOTS - 1, or TSTAT_SLOTS: the shared slot */
    int shared; /* several threads add here: atomic adds */
} tstat_slot;

extern _Thread_local tstat_slot *tstat_self_slot;
tstat_slot *tstat_claim(void);

/* This thread's slot (taken on first use). */
static inline tstat_slot *tstat_self(void) {
    tstat_slot *s = tstat_self_slot;
    return s ? s : tstat_claim();
}

/* Add n to one of this thread's counters. For a word of a slot: a plain
 * add when the slot is this thread's alone. */
static inline void tstat_word_add(const tstat_slot *s, uint64_t *w, uint64_t n) {
    if (__builtin_expect(s->shared, 0)) __atomic_fetch_add(w, n, __ATOMIC_RELAXED);
    else __atomic_store_n(w, *w + n, __ATOMIC_RELAXED);
}

static inline void tstat_add(int id, uint64_t n) {
    tstat_slot *s = tstat_self();
    tstat_word_add(s, &s->v[id], n);
}

/* How many slots have ever been taken (the shared one not included): the
 * slots a sum must read are 0 .. tstat_slots_used() - 1 and the shared
 * one. */
int tstat_slots_used(void);
/* Slot i (0 .. TSTAT_SLOTS, the last being the shared one). */
const tstat_slot *tstat_slot_at(int i);

/* The counter's value since its last reset. */
uint64_t tstat_sum(int id);
/* Its value counting from the start (what a reset does not change). */
uint64_t tstat_sum_raw(int id);
/* Start counting it from zero again. */
void tstat_reset(int id);
#endif
