/* tstat.c -- per-thread counters of the command path (see tstat.h). */
#include "base/tstat.h"

#include <pthread.h>

static tstat_slot slots[TSTAT_SLOTS + 1]; /* the last one is shared */
static int used;                          /* slots ever taken; atomic */
static int free_list[TSTAT_SLOTS];        /* given back, to be taken again */
static int nfree;
static uint64_t zero[TSTAT_N];            /* the sums at the last reset; atomic */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

_Thread_local tstat_slot *tstat_self_slot;

/* At thread exit: the slot goes back. Anything the thread still counts
 * from a later destructor goes to the shared slot. */
static void slot_release(void *arg) {
    tstat_slot *s = arg;
    tstat_self_slot = &slots[TSTAT_SLOTS];
    if (s->shared) return;
    pthread_mutex_lock(&lock);
    free_list[nfree++] = s->index;
    pthread_mutex_unlock(&lock);
}

static void key_init(void) {
    pthread_key_create(&exit_key, slot_release);
    slots[TSTAT_SLOTS].index = TSTAT_SLOTS;
    slots[TSTAT_SLOTS].shared = 1;
}

tstat_slot *tstat_claim(void) {
    pthread_once(&key_once, key_init);
    tstat_slot *s;
    pthread_mutex_lock(&lock);
    int n = __atomic_load_n(&used, __ATOMIC_RELAXED);
    if (nfree) {
        s = &slots[free_list[--nfree]];
    } else if (n < TSTAT_SLOTS) {
        s = &slots[n];
        s->index = n;
        __atomic_store_n(&used, n + 1, __ATOMIC_RELEASE);
    } else {
        s = &slots[TSTAT_SLOTS];
    }
    pthread_mutex_unlock(&lock);
    if (!s->shared) pthread_setspecific(exit_key, s);
    tstat_self_slot = s;
    return s;
}

int tstat_slots_used(void) { return __atomic_load_n(&used, __ATOMIC_ACQUIRE); }

const tstat_slot *tstat_slot_at(int i) { return &slots[i]; }

uint64_t tstat_sum_raw(int id) {
    int n = tstat_slots_used();
    uint64_t sum = __atomic_load_n(&slots[TSTAT_SLOTS].v[id], __ATOMIC_RELAXED);
    for (int i = 0; i < n; i++) sum += __atomic_load_n(&slots[i].v[id], __ATOMIC_RELAXED);
    return sum;
}

uint64_t tstat_sum(int id) {
    uint64_t z = __atomic_load_n(&zero[id], __ATOMIC_RELAXED);
    uint64_t sum = tstat_sum_raw(id);
    /* A reset that raced with this sum may have taken a larger one. */
    return sum > z ? sum - z : 0;
}

void tstat_reset(int id) { __atomic_store_n(&zero[id], tstat_sum_raw(id), __ATOMIC_RELAXED); }
