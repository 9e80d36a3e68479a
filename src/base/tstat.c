/* tstat.c -- per-thread counters of the command path (see tstat.h). */
#include "base/tstat.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tstat_slot *all;              /* every slot made; atomic (release / acquire) */
static tstat_slot **free_slots;      /* given back by exited threads */
static size_t nfree, capfree;
static uint64_t zero[TSTAT_N];       /* the sums at the last reset; atomic */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

_Thread_local tstat_slot *tstat_self_slot;

/* At thread exit: the slot goes back for the next thread. */
static void slot_release(void *arg) {
    tstat_slot *s = arg;
    tstat_self_slot = NULL;
    pthread_mutex_lock(&lock);
    if (nfree == capfree) {
        size_t nc = capfree ? capfree * 2 : 16;
        tstat_slot **nf = realloc(free_slots, nc * sizeof(*nf));
        if (!nf) { /* kept by nobody: its counts still add up */
            pthread_mutex_unlock(&lock);
            return;
        }
        free_slots = nf;
        capfree = nc;
    }
    free_slots[nfree++] = s;
    pthread_mutex_unlock(&lock);
}

static void key_init(void) {
    if (pthread_key_create(&exit_key, slot_release) != 0) abort();
}

tstat_slot *tstat_claim(void) {
    pthread_once(&key_once, key_init);
    tstat_slot *s = NULL;
    pthread_mutex_lock(&lock);
    if (nfree) s = free_slots[--nfree];
    pthread_mutex_unlock(&lock);
    if (!s) {
        s = aligned_alloc(64, sizeof(*s));
        if (!s) {
            fprintf(stderr, "tstat: out of memory\n");
            abort();
        }
        memset(s, 0, sizeof(*s));
        pthread_mutex_lock(&lock);
        s->next = all;
        __atomic_store_n(&all, s, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&lock);
    }
    pthread_setspecific(exit_key, s);
    tstat_self_slot = s;
    return s;
}

const tstat_slot *tstat_first(void) { return __atomic_load_n(&all, __ATOMIC_ACQUIRE); }

uint64_t tstat_sum_raw(int id) {
    uint64_t sum = 0;
    for (const tstat_slot *s = tstat_first(); s; s = s->next) sum += __atomic_load_n(&s->v[id], __ATOMIC_RELAXED);
    return sum;
}

uint64_t tstat_sum(int id) {
    uint64_t z = __atomic_load_n(&zero[id], __ATOMIC_RELAXED);
    uint64_t sum = tstat_sum_raw(id);
    /* A reset that raced with this sum may have taken a larger one. */
    return sum > z ? sum - z : 0;
}

void tstat_reset(int id) { __atomic_store_n(&zero[id], tstat_sum_raw(id), __ATOMIC_RELAXED); }
