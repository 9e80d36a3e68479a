/* objstore.c -- head pools and tails (see objstore.h).
 *
 * A pool is an array of blocks; slot i of a pool is at
 * blocks[i / spb] + (i % spb) * ram_head. Free slots are a stack of
 * indices, so alloc and free are O(1). A fixed pool (--memory) is one
 * mapping cut into blocks at start; a growing pool (no --memory) maps one
 * block at a time. Pool 0 is the preferred pool (the serving node, or the
 * farthest node under --perverse); the others are tried in order. */
#include "mem/objstore.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mem/hugetlb.h"
#include "mem/numa.h"
#include "mem/smallobj.h"
#include "mem/ssdtail.h"

objstore_config objstore_cfg = {
    .block = 2 << 20, .ram_head = 256 << 10, .io_chunk = 256 << 10, .write_io_chunk = 1 << 20, .numa = -1,
    .numa_decay_ms = 60000};

#define MAXPOOLS 16

typedef struct pool {
    int node;          /* requested node, -1 unbound */
    int huge;
    int fixed;         /* capacity fixed at start */
    char *base;        /* fixed: the mapping */
    size_t map_bytes;
    char **blocks;
    uint32_t nblocks, capblocks;
    uint32_t *blk_used;   /* used slots per block */
    uint32_t *free_idx;   /* stack of free slot indices */
    uint32_t nfree, capfree;
    size_t slots_used;
    uint64_t served;      /* GET head bytes served from this pool */
    /* fixed pools only (their slot count never changes): */
    uint32_t *score;      /* per slot, atomics: raised by GETs, halved by decay */
    objhead **owner;      /* per slot: the objhead holding it (re-pointed on exchange) */
} pool;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pool pools[MAXPOOLS];
static int npools;
/* Head slots in use in every pool (the sum of slots_used), kept apart for
 * objstore_heads_used, which reads it without the lock. */
static size_t heads_used;
static int inited;
static size_t head_sz, block_sz, spb;
static int serving_node = -1;
static uint64_t alloc_fail, ram_tail_bytes, ram_tails;

static int pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

int objstore_validate(const objstore_config *c, char *err, size_t errlen) {
    size_t hp = hugetlb_page_size();
    if (!pow2(c->block) || (size_t)c->block % hp != 0) {
        snprintf(err, errlen,
                 "--block %lld must be a power of two and a multiple of the HugeTLB page size (%zu bytes)",
                 c->block, hp);
        return -1;
    }
    if (!pow2(c->ram_head) || c->block % c->ram_head != 0 || c->ram_head < 4096) {
        snprintf(err, errlen, "--ram-head %lld must be a power of two (>= 4K) that divides --block %lld",
                 c->ram_head, c->block);
        return -1;
    }
    if (c->block / c->ram_head > 65536) {
        snprintf(err, errlen, "--block / --ram-head must be at most 65536 heads per block");
        return -1;
    }
    if (c->io_chunk <= 0 || c->io_chunk % 4096 || c->write_io_chunk <= 0 || c->write_io_chunk % 4096) {
        snprintf(err, errlen, "--io-chunk and --write-io-chunk must be positive multiples of 4096");
        return -1;
    }
    if (c->numa >= 0 && !gnuma_node_online((int)c->numa)) {
        snprintf(err, errlen, "--numa %lld is not an online NUMA node (this machine has %d node(s))", c->numa,
                 gnuma_nodes());
        return -1;
    }
    int node = c->numa >= 0 ? (int)c->numa : 0;
    int pnode = c->perverse ? gnuma_farthest(node) : node;
    long long have = gnuma_node_bytes(pnode);
    if (have > 0 && c->memory + c->small_memory > have) {
        snprintf(err, errlen,
                 "--memory %lld + --small-memory %lld exceed the %lld bytes of NUMA node %d: refused before "
                 "allocating anything",
                 c->memory, c->small_memory, have, pnode);
        return -1;
    }
    if (c->sub_memory > 0 || c->small_sub_memory > 0) {
        for (int n = 0; n < gnuma_nodes(); n++) {
            if (n == pnode || !gnuma_node_online(n)) continue;
            long long h = gnuma_node_bytes(n);
            if (h > 0 && c->sub_memory + c->small_sub_memory > h) {
                snprintf(err, errlen, "--sub-memory %lld exceeds the %lld bytes of NUMA node %d", c->sub_memory,
                         h, n);
                return -1;
            }
        }
    }
    if (c->perverse && c->numa < 0) {
        snprintf(err, errlen, "--perverse needs --numa NODE (the serving node)");
        return -1;
    }
    return 0;
}

static int pool_add_fixed(int node, size_t bytes, char *err, size_t errlen) {
    pool *p = &pools[npools];
    size_t nb = bytes / block_sz;
    if (nb == 0) return 0;
    size_t sz = nb * block_sz;
    int huge = 0;
    char *base = gnuma_pool_map(sz, node, 1, &huge);
    if (!base) {
        snprintf(err, errlen, "cannot map a %zu byte head pool on node %d: %s", sz, node, strerror(errno));
        return -1;
    }
    memset(p, 0, sizeof(*p));
    p->node = node;
    p->huge = huge;
    p->fixed = 1;
    p->base = base;
    p->map_bytes = sz;
    p->nblocks = p->capblocks = (uint32_t)nb;
    p->blocks = calloc(nb, sizeof(char *));
    p->blk_used = calloc(nb, sizeof(uint32_t));
    p->capfree = p->nfree = (uint32_t)(nb * spb);
    p->free_idx = malloc(sizeof(uint32_t) * p->capfree);
    p->score = calloc((size_t)p->capfree, sizeof(uint32_t));
    p->owner = calloc((size_t)p->capfree, sizeof(objhead *));
    if (!p->blocks || !p->blk_used || !p->free_idx || !p->score || !p->owner) {
        snprintf(err, errlen, "out of memory building the head pool");
        return -1;
    }
    for (size_t b = 0; b < nb; b++) p->blocks[b] = base + b * block_sz;
    /* Lowest index on top: fill blocks in order, so blocks fill up. */
    for (uint32_t i = 0; i < p->nfree; i++) p->free_idx[i] = p->nfree - 1 - i;
    npools++;
    return 0;
}

/* The online nodes other than pref, nearest to the serving node first
 * (farthest first under --perverse, which inverts preference). */
static int other_nodes(int serving, int pref, int perverse, int order[64]) {
    int no = 0;
    for (int n = 0; n < gnuma_nodes() && no < 64; n++)
        if (n != pref && gnuma_node_online(n)) order[no++] = n;
    for (int i = 0; i < no; i++)
        for (int j = i + 1; j < no; j++) {
            int di = gnuma_distance(serving, order[i]), dj = gnuma_distance(serving, order[j]);
            if (perverse ? dj > di : dj < di) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
    return no;
}

int objstore_init(char *err, size_t errlen) {
    if (inited) return 0;
    objstore_config *c = &objstore_cfg;
    head_sz = (size_t)c->ram_head;
    block_sz = (size_t)c->block;
    spb = block_sz / head_sz;
    serving_node = c->numa >= 0 ? (int)c->numa : -1;
    if (serving_node >= 0 && gnuma_bind_thread(serving_node) != 0) {
        snprintf(err, errlen, "cannot bind to NUMA node %d", serving_node);
        return -1;
    }
    int pref = serving_node < 0 ? -1 : (c->perverse ? gnuma_farthest(serving_node) : serving_node);
    if (c->memory > 0) {
        if ((size_t)c->memory < block_sz) {
            snprintf(err, errlen, "--memory %lld is smaller than one --block (%zu bytes)", c->memory, block_sz);
            return -1;
        }
        if (pool_add_fixed(pref, (size_t)c->memory, err, errlen) != 0) return -1;
        if (c->sub_memory > 0 && serving_node >= 0) {
            /* Local first: other nodes by distance from the serving node
             * (farthest first under --perverse, which inverts preference). */
            int order[64];
            int no = other_nodes(serving_node, pref, c->perverse, order);
            for (int i = 0; i < no && npools < MAXPOOLS; i++)
                if (pool_add_fixed(order[i], (size_t)c->sub_memory, err, errlen) != 0) return -1;
        }
    } else {
        memset(&pools[0], 0, sizeof(pools[0]));
        pools[0].node = pref;
        npools = 1;
    }
    if (smallobj_init((size_t)c->small_memory, block_sz, head_sz, pref) != 0) {
        snprintf(err, errlen, "cannot set up the small-object arena");
        return -1;
    }
    if (c->small_sub_memory > 0 && serving_node >= 0) {
        if ((size_t)c->small_sub_memory < block_sz) {
            snprintf(err, errlen, "--small-sub-memory %lld is smaller than one --block (%zu bytes)",
                     c->small_sub_memory, block_sz);
            return -1;
        }
        if (c->small_memory <= 0) {
            snprintf(err, errlen, "--small-sub-memory needs --small-memory (the local pool is used first)");
            return -1;
        }
        /* The same order as the head pools: nearest other node first. */
        int order[64];
        int no = other_nodes(serving_node, pref, c->perverse, order);
        for (int i = 0; i < no; i++)
            if (smallobj_add_pool(order[i], (size_t)c->small_sub_memory) != 0) {
                snprintf(err, errlen, "cannot add the small-object pool of node %d", order[i]);
                return -1;
            }
    }
    if (c->ssd_dir && c->ssd_dir[0] &&
        ssdtail_open(c->ssd_dir, (size_t)c->write_io_chunk, (size_t)c->io_chunk, err, errlen) != 0)
        return -1;
    inited = 1;
    return 0;
}

void objstore_ensure_init(void) {
    if (__atomic_load_n(&inited, __ATOMIC_ACQUIRE)) return;
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    char err[256];
    if (!inited && objstore_init(err, sizeof(err)) != 0) {
        fprintf(stderr, "objstore: %s\n", err);
        abort();
    }
    pthread_mutex_unlock(&once);
}

void objstore_promotion_stop(void);
void objstore_shutdown(void) {
    objstore_promotion_stop();
    ssdtail_close();
}

size_t objstore_ram_head(void) {
    objstore_ensure_init();
    return head_sz;
}

/* A growing pool maps one more block. Caller holds lock. */
static int pool_grow(pool *p) {
    if (p->nblocks == p->capblocks) {
        uint32_t nc = p->capblocks ? p->capblocks * 2 : 16;
        char **nb = realloc(p->blocks, nc * sizeof(char *));
        if (!nb) return -1;
        p->blocks = nb;
        uint32_t *nu = realloc(p->blk_used, nc * sizeof(uint32_t));
        if (!nu) return -1;
        p->blk_used = nu;
        p->capblocks = nc;
    }
    /* The free list must hold every slot of every block: all of them can
     * be freed at once. */
    if (p->capfree < (p->nblocks + 1) * (uint32_t)spb) {
        uint32_t nc = (p->nblocks + 1) * (uint32_t)spb * 2;
        uint32_t *nf = realloc(p->free_idx, nc * sizeof(uint32_t));
        if (!nf) return -1;
        p->free_idx = nf;
        p->capfree = nc;
    }
    int huge = 0;
    char *b = gnuma_pool_map(block_sz, p->node, hugetlb_enabled(), &huge);
    if (!b) return -1;
    uint32_t bi = p->nblocks++;
    p->blocks[bi] = b;
    p->blk_used[bi] = 0;
    p->huge = huge;
    for (size_t s = spb; s-- > 0;) p->free_idx[p->nfree++] = (uint32_t)(bi * spb + s);
    return 0;
}

int objstore_heads_exhausted(void) {
    if (!__atomic_load_n(&inited, __ATOMIC_ACQUIRE)) return 0;
    pthread_mutex_lock(&lock);
    int full = npools > 0;
    for (int i = 0; i < npools && full; i++) full = pools[i].fixed && pools[i].nfree == 0;
    pthread_mutex_unlock(&lock);
    return full;
}

int objstore_head_alloc(objhead *h) {
    objstore_ensure_init();
    pthread_mutex_lock(&lock);
    for (int i = 0; i < npools; i++) {
        pool *p = &pools[i];
        if (p->nfree == 0 && (p->fixed || pool_grow(p) != 0)) continue;
        uint32_t idx = p->free_idx[--p->nfree];
        p->blk_used[idx / spb]++;
        p->slots_used++;
        __atomic_add_fetch(&heads_used, 1, __ATOMIC_RELAXED);
        h->pool = (uint16_t)i;
        h->idx = idx;
        h->p = p->blocks[idx / spb] + (idx % spb) * head_sz;
        if (p->owner) {
            p->owner[idx] = h;
            __atomic_store_n(&p->score[idx], 0, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&lock);
        return 0;
    }
    alloc_fail++;
    pthread_mutex_unlock(&lock);
    return -1;
}

void objstore_head_free(objhead *h) {
    if (!h->p) return;
    pthread_mutex_lock(&lock);
    pool *p = &pools[h->pool];
    p->blk_used[h->idx / spb]--;
    p->slots_used--;
    __atomic_sub_fetch(&heads_used, 1, __ATOMIC_RELAXED);
    p->free_idx[p->nfree++] = h->idx;
    if (p->owner) {
        p->owner[h->idx] = NULL;
        __atomic_store_n(&p->score[h->idx], 0, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
    h->p = NULL;
}

int objstore_tail_write(objtail *t, const char *src, size_t n) {
    memset(t, 0, sizeof(*t));
    t->len = n;
    if (n == 0) return 0;
    if (ssdtail_active()) return ssdtail_write(src, n, &t->off, &t->nchunks);
    t->ram = malloc(n);
    if (!t->ram) return -1;
    memcpy(t->ram, src, n);
    __atomic_fetch_add(&ram_tail_bytes, n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ram_tails, 1, __ATOMIC_RELAXED);
    return 0;
}

int objstore_tail_read(const objtail *t, char *dst) {
    if (t->len == 0) return 0;
    if (t->ram) {
        memcpy(dst, t->ram, t->len);
        return 0;
    }
    return ssdtail_read(t->off, dst, t->len);
}

void objstore_tail_free(objtail *t) {
    if (t->ram) {
        free(t->ram);
        __atomic_fetch_sub(&ram_tail_bytes, t->len, __ATOMIC_RELAXED);
        __atomic_fetch_sub(&ram_tails, 1, __ATOMIC_RELAXED);
    } else if (t->nchunks) {
        ssdtail_free(t->off, t->nchunks);
    }
    memset(t, 0, sizeof(*t));
}

void objstore_count_served(const objhead *h, size_t head_bytes) {
    if (!h->p || h->pool >= npools) return;
    __atomic_fetch_add(&pools[h->pool].served, head_bytes, __ATOMIC_RELAXED);
    /* The caller holds the key's shard, so h cannot be re-pointed now. */
    if (pools[h->pool].score) {
        uint32_t *sc = &pools[h->pool].score[h->idx];
        if (__atomic_load_n(sc, __ATOMIC_RELAXED) < UINT32_MAX / 2) __atomic_fetch_add(sc, 1, __ATOMIC_RELAXED);
    }
}

size_t objstore_heads_used(void) { return __atomic_load_n(&heads_used, __ATOMIC_RELAXED); }

void objstore_stats_get(objstore_stats *st) {
    memset(st, 0, sizeof(*st));
    pthread_mutex_lock(&lock);
    st->npools = npools;
    st->serving_node = serving_node;
    for (int i = 0; i < npools; i++) {
        pool *p = &pools[i];
        objstore_pool_info *pi = &st->pool[i];
        pi->node_req = p->node;
        pi->huge = p->huge;
        pi->bytes = (size_t)p->nblocks * block_sz;
        pi->blocks = p->nblocks;
        for (uint32_t b = 0; b < p->nblocks; b++) pi->blocks_used += p->blk_used[b] > 0;
        pi->slots = (size_t)p->nblocks * spb;
        pi->slots_used = p->slots_used;
        char *probe = p->fixed ? p->base : (p->nblocks ? p->blocks[0] : NULL);
        size_t psz = p->fixed ? p->map_bytes : block_sz;
        pi->node_obs = probe ? gnuma_observed_node(probe, psz, 64, &pi->obs_agree, &pi->obs_probed) : -1;
        uint64_t s = __atomic_load_n(&p->served, __ATOMIC_RELAXED);
        int local = serving_node < 0 || p->node == serving_node;
        if (local) st->served_local += s;
        else st->served_remote += s;
    }
    st->head_alloc_fail = alloc_fail;
    pthread_mutex_unlock(&lock);
    st->ram_tail_bytes = __atomic_load_n(&ram_tail_bytes, __ATOMIC_RELAXED);
    st->ram_tails = __atomic_load_n(&ram_tails, __ATOMIC_RELAXED);
}

/* ---- Promotion (see objstore.h) ---- */

static uint64_t promo_exchanges, promo_bytes, promo_longest_ns, promo_decays, promo_considered;
static pthread_t promo_thread;
static int promo_running;
static pthread_mutex_t promo_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t promo_cv = PTHREAD_COND_INITIALIZER;
static int promo_stop;
static objstore_lock_fn promo_lock, promo_unlock;

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t objstore_head_score(const objhead *h) {
    if (!h->p || h->pool >= npools || !pools[h->pool].score) return 0;
    return __atomic_load_n(&pools[h->pool].score[h->idx], __ATOMIC_RELAXED);
}

void objstore_decay(void) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < npools; i++) {
        pool *p = &pools[i];
        if (!p->score) continue;
        size_t n = (size_t)p->nblocks * spb;
        for (size_t s = 0; s < n; s++) {
            uint32_t v = __atomic_load_n(&p->score[s], __ATOMIC_RELAXED);
            if (v) __atomic_store_n(&p->score[s], v / 2, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&lock);
    __atomic_fetch_add(&promo_decays, 1, __ATOMIC_RELAXED);
}

static uint64_t block_score(const pool *p, uint32_t b) {
    uint64_t t = 0;
    for (size_t s = 0; s < spb; s++) t += __atomic_load_n(&p->score[(size_t)b * spb + s], __ATOMIC_RELAXED);
    return t;
}

/* Hottest full foreign block and coldest full block of pool 0. Caller
 * holds lock. 0 when an exchange is worth it. */
static int pick(int *hp, uint32_t *hb, uint32_t *cb) {
    if (npools < 2 || !pools[0].score) return -1;
    uint64_t hot = 0, cold = UINT64_MAX;
    int hpool = -1;
    for (int i = 1; i < npools; i++) {
        pool *p = &pools[i];
        if (!p->score) continue;
        for (uint32_t b = 0; b < p->nblocks; b++) {
            if (p->blk_used[b] != spb) continue;
            uint64_t sc = block_score(p, b);
            if (sc > hot) hot = sc, hpool = i, *hb = b;
        }
    }
    pool *l = &pools[0];
    for (uint32_t b = 0; b < l->nblocks; b++) {
        if (l->blk_used[b] != spb) continue;
        uint64_t sc = block_score(l, b);
        if (sc < cold) cold = sc, *cb = b;
    }
    if (hpool < 0 || cold == UINT64_MAX || hot <= cold) return -1;
    *hp = hpool;
    return 0;
}

/* Swap block fb of pool f with block lb of pool 0: bytes, owners, scores.
 * Caller holds the keyspace write lock (nobody reads a head) and lock. */
static void exchange(int f, uint32_t fb, uint32_t lb) {
    pool *fp = &pools[f], *lp = &pools[0];
    char *tmp = malloc(head_sz);
    for (size_t s = 0; s < spb; s++) {
        uint32_t fi = (uint32_t)(fb * spb + s), li = (uint32_t)(lb * spb + s);
        char *a = fp->blocks[fb] + s * head_sz, *b = lp->blocks[lb] + s * head_sz;
        if (tmp) {
            memcpy(tmp, a, head_sz);
            memcpy(a, b, head_sz);
            memcpy(b, tmp, head_sz);
        } else {
            for (size_t k = 0; k < head_sz; k++) {
                char t = a[k];
                a[k] = b[k];
                b[k] = t;
            }
        }
        objhead *ho = fp->owner[fi], *lo = lp->owner[li];
        fp->owner[fi] = lo;
        lp->owner[li] = ho;
        if (lo) lo->pool = (uint16_t)f, lo->idx = fi, lo->p = a;
        if (ho) ho->pool = 0, ho->idx = li, ho->p = b;
        uint32_t fs = __atomic_load_n(&fp->score[fi], __ATOMIC_RELAXED);
        uint32_t ls = __atomic_load_n(&lp->score[li], __ATOMIC_RELAXED);
        __atomic_store_n(&fp->score[fi], ls, __ATOMIC_RELAXED);
        __atomic_store_n(&lp->score[li], fs, __ATOMIC_RELAXED);
    }
    free(tmp);
}

int objstore_promote_once(objstore_lock_fn klock, objstore_lock_fn kunlock) {
    if (!inited || objstore_cfg.no_numa_promotion) return 0;
    int f;
    uint32_t fb, lb;
    pthread_mutex_lock(&lock);
    int ok = pick(&f, &fb, &lb);
    pthread_mutex_unlock(&lock);
    __atomic_fetch_add(&promo_considered, 1, __ATOMIC_RELAXED);
    if (ok != 0) return 0;
    /* Lock order: keyspace (level 1) before the store's leaf mutex. */
    if (klock) klock();
    pthread_mutex_lock(&lock);
    int done = 0;
    /* Re-check: the blocks may have changed while no lock was held. */
    int f2;
    uint32_t fb2, lb2;
    if (pick(&f2, &fb2, &lb2) == 0) {
        uint64_t t0 = mono_ns();
        exchange(f2, fb2, lb2);
        uint64_t dt = mono_ns() - t0;
        __atomic_fetch_add(&promo_exchanges, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&promo_bytes, 2 * (uint64_t)block_sz, __ATOMIC_RELAXED);
        if (dt > __atomic_load_n(&promo_longest_ns, __ATOMIC_RELAXED))
            __atomic_store_n(&promo_longest_ns, dt, __ATOMIC_RELAXED);
        done = 1;
    }
    pthread_mutex_unlock(&lock);
    if (kunlock) kunlock();
    return done;
}

static long long decay_ms(void) {
    long long ms = __atomic_load_n(&objstore_cfg.numa_decay_ms, __ATOMIC_RELAXED);
    return ms > 0 ? ms : 60000;
}

/* The coordinator: rescoring has priority -- when a decay is due it runs
 * first and that pass makes no exchange; otherwise at most one exchange
 * per tick (a tenth of the decay interval, between 10 ms and 1 s). */
static void *promo_main(void *arg) {
    (void)arg;
    uint64_t next_decay = mono_ns() + (uint64_t)decay_ms() * 1000000ull;
    pthread_mutex_lock(&promo_mu);
    while (!promo_stop) {
        long long tick = decay_ms() / 10;
        if (tick < 10) tick = 10;
        if (tick > 1000) tick = 1000;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (tick % 1000) * 1000000L;
        ts.tv_sec += tick / 1000 + ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&promo_cv, &promo_mu, &ts);
        if (promo_stop) break;
        pthread_mutex_unlock(&promo_mu);
        uint64_t now = mono_ns();
        if (now >= next_decay) {
            objstore_decay();
            next_decay = now + (uint64_t)decay_ms() * 1000000ull;
        } else {
            objstore_promote_once(promo_lock, promo_unlock);
        }
        pthread_mutex_lock(&promo_mu);
    }
    pthread_mutex_unlock(&promo_mu);
    return NULL;
}

int objstore_promotion_start(objstore_lock_fn klock, objstore_lock_fn kunlock) {
    if (!inited || objstore_cfg.no_numa_promotion || npools < 2 || promo_running) return 0;
    promo_lock = klock;
    promo_unlock = kunlock;
    promo_stop = 0;
    if (pthread_create(&promo_thread, NULL, promo_main, NULL) != 0) return -1;
    promo_running = 1;
    return 0;
}

void objstore_promotion_stop(void) {
    if (!promo_running) return;
    pthread_mutex_lock(&promo_mu);
    promo_stop = 1;
    pthread_cond_signal(&promo_cv);
    pthread_mutex_unlock(&promo_mu);
    pthread_join(promo_thread, NULL);
    promo_running = 0;
}

void objstore_promo_stats_get(objstore_promo_stats *st) {
    st->enabled = !objstore_cfg.no_numa_promotion;
    st->running = promo_running;
    st->exchanges = __atomic_load_n(&promo_exchanges, __ATOMIC_RELAXED);
    st->bytes_copied = __atomic_load_n(&promo_bytes, __ATOMIC_RELAXED);
    st->longest_ns = __atomic_load_n(&promo_longest_ns, __ATOMIC_RELAXED);
    st->decays = __atomic_load_n(&promo_decays, __ATOMIC_RELAXED);
    st->considered = __atomic_load_n(&promo_considered, __ATOMIC_RELAXED);
    st->decay_ms = decay_ms();
}
