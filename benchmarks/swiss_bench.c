/* swiss_bench.c -- micro-benchmark of the swiss index (not a test).
 *
 *   make bench-tools && ./build-release/swiss-bench [N ...] [--reps R]
 *
 * For each N (default 1M and 10M) it builds, side by side and interleaved
 * (swiss, chained, swiss, chained, ...; the machines are shared and noisy),
 *
 *   swiss4   ds/swiss with 4-byte slots holding an index into a key array,
 *            the way a member index holds arena references (a lookup
 *            compares by touching the key storage);
 *   chained  a plain chained hash table: power-of-two bucket array of
 *            pointers, one malloc'd {next, index} node per entry, load
 *            factor 1, doubled by a full rehash.
 *
 * and prints the median over R repetitions of inserts/s (build from empty,
 * growth included), hit and miss lookups/s (random keys), index bytes per
 * entry (key storage excluded for both: it is the arena), and, from one
 * extra timed build, the slowest single insert in thread CPU time (what a
 * client waits while the index grows, minus the preemption that dominates
 * wall time on a shared machine). */
#include <jemalloc/jemalloc.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/hashfn.h"
#include "ds/swiss.h"

static uint64_t *keys;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Thread CPU time (includes page faults, excludes preemption). */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ---- swiss with 4-byte slots ---- */

static uint64_t sw_hash_slot(void *ctx, const void *slot) {
    (void)ctx;
    uint32_t i;
    memcpy(&i, slot, 4);
    return hash_u64(keys[i]);
}

static int sw_match(void *ctx, const void *slot, const void *key) {
    (void)ctx;
    uint32_t i;
    memcpy(&i, slot, 4);
    return keys[i] == *(const uint64_t *)key;
}

static const swiss_type sw_type = {4, sw_hash_slot, sw_match};

/* ---- chained baseline ---- */

typedef struct cnode {
    struct cnode *next;
    uint32_t idx;
} cnode;

typedef struct chained {
    cnode **b;
    size_t mask, n;
} chained;

static void ch_init(chained *c) {
    c->mask = 15;
    c->n = 0;
    c->b = calloc(c->mask + 1, sizeof(cnode *));
}

static void ch_grow(chained *c) {
    size_t nm = c->mask * 2 + 1;
    cnode **nb = calloc(nm + 1, sizeof(cnode *));
    for (size_t i = 0; i <= c->mask; i++) {
        cnode *e = c->b[i];
        while (e) {
            cnode *nx = e->next;
            size_t j = hash_u64(keys[e->idx]) & nm;
            e->next = nb[j];
            nb[j] = e;
            e = nx;
        }
    }
    free(c->b);
    c->b = nb;
    c->mask = nm;
}

static void ch_insert(chained *c, uint32_t idx, uint64_t h) {
    if (c->n + 1 > c->mask + 1) ch_grow(c);
    cnode *e = malloc(sizeof(*e));
    size_t j = h & c->mask;
    e->idx = idx;
    e->next = c->b[j];
    c->b[j] = e;
    c->n++;
}

static cnode *ch_find(const chained *c, uint64_t key, uint64_t h) {
    for (cnode *e = c->b[h & c->mask]; e; e = e->next)
        if (keys[e->idx] == key) return e;
    return NULL;
}

static size_t ch_bytes(const chained *c) {
    size_t node = c->n ? malloc_usable_size(c->b[hash_u64(keys[0]) & c->mask]) : 0;
    return (c->mask + 1) * sizeof(cnode *) + c->n * node;
}

static void ch_free(chained *c) {
    for (size_t i = 0; i <= c->mask; i++) {
        cnode *e = c->b[i];
        while (e) {
            cnode *nx = e->next;
            free(e);
            e = nx;
        }
    }
    free(c->b);
}

/* ---- measurements ---- */

/* ops per second for R_INS, R_HIT, R_MISS; index bytes per entry (steady
 * state) for R_BYTES */
enum { R_INS, R_HIT, R_MISS, R_BYTES, R_N };
typedef struct result {
    double v[R_N];
} result;

static uint64_t sink;

static void run_swiss(uint32_t n, uint64_t seed, result *r) {
    swiss s;
    swiss_init(&s, &sw_type, NULL);
    double t0 = now();
    for (uint32_t i = 0; i < n; i++) {
        void *slot = swiss_insert(&s, hash_u64(keys[i]));
        memcpy(slot, &i, 4);
    }
    r->v[R_INS] = n / (now() - t0);
    while (swiss_rehash_step(&s, 1 << 16)) {
    }
    r->v[R_BYTES] = (double)swiss_mem_bytes(&s) / n;
    uint64_t found = 0;
    t0 = now();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = keys[mix(seed + i) % n];
        found += swiss_find(&s, hash_u64(k), &k) != NULL;
    }
    r->v[R_HIT] = n / (now() - t0);
    if (found != n) fprintf(stderr, "swiss: %llu of %u found\n", (unsigned long long)found, n);
    t0 = now();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = mix(~(seed + i)) | 1; /* keys[] are even, see main */
        found += swiss_find(&s, hash_u64(k), &k) != NULL;
    }
    r->v[R_MISS] = n / (now() - t0);
    sink += found;
    swiss_free(&s);
}

static void run_chained(uint32_t n, uint64_t seed, result *r) {
    chained c;
    ch_init(&c);
    double t0 = now();
    for (uint32_t i = 0; i < n; i++) ch_insert(&c, i, hash_u64(keys[i]));
    r->v[R_INS] = n / (now() - t0);
    r->v[R_BYTES] = (double)ch_bytes(&c) / n;
    uint64_t found = 0;
    t0 = now();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = keys[mix(seed + i) % n];
        found += ch_find(&c, k, hash_u64(k)) != NULL;
    }
    r->v[R_HIT] = n / (now() - t0);
    if (found != n) fprintf(stderr, "chained: %llu of %u found\n", (unsigned long long)found, n);
    t0 = now();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = mix(~(seed + i)) | 1;
        found += ch_find(&c, k, hash_u64(k)) != NULL;
    }
    r->v[R_MISS] = n / (now() - t0);
    sink += found;
    ch_free(&c);
}

/* Slowest single insert while building n entries, and how many took > 1 ms. */
static void latency_swiss(uint32_t n, double *worst, uint64_t *over1ms) {
    swiss s;
    swiss_init(&s, &sw_type, NULL);
    *worst = 0;
    *over1ms = 0;
    for (uint32_t i = 0; i < n; i++) {
        double t0 = cpu_now();
        void *slot = swiss_insert(&s, hash_u64(keys[i]));
        memcpy(slot, &i, 4);
        double dt = cpu_now() - t0;
        if (dt > *worst) *worst = dt;
        *over1ms += dt > 1e-3;
    }
    swiss_free(&s);
}

static void latency_chained(uint32_t n, double *worst, uint64_t *over1ms) {
    chained c;
    ch_init(&c);
    *worst = 0;
    *over1ms = 0;
    for (uint32_t i = 0; i < n; i++) {
        double t0 = cpu_now();
        ch_insert(&c, i, hash_u64(keys[i]));
        double dt = cpu_now() - t0;
        if (dt > *worst) *worst = dt;
        *over1ms += dt > 1e-3;
    }
    ch_free(&c);
}

/* Bytes per entry of the swiss index over a sweep of sizes, not mid-resize
 * (steady state), plus the peak while two tables coexist. */
static void sweep_swiss(uint32_t n) {
    swiss s;
    swiss_init(&s, &sw_type, NULL);
    double lo = 1e9, hi = 0, sum = 0, peak = 0;
    uint64_t samples = 0;
    for (uint32_t i = 0; i < n; i++) {
        void *slot = swiss_insert(&s, hash_u64(keys[i]));
        memcpy(slot, &i, 4);
        if ((i + 1) % 10000 || i + 1 < n / 10) continue;
        double b = (double)swiss_mem_bytes(&s) / (i + 1);
        if (b > peak) peak = b;
        if (swiss_is_rehashing(&s)) continue;
        if (b < lo) lo = b;
        if (b > hi) hi = b;
        sum += b;
        samples++;
    }
    printf("swiss4 index bytes/entry, %u..%u entries, steady state: min %.2f  mean %.2f  max %.2f;"
           "  mid-resize peak %.2f\n",
           n / 10, n, lo, sum / (double)samples, hi, peak);
    swiss_free(&s);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    uint32_t sizes[16];
    int nsizes = 0, reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (nsizes < 16)
            sizes[nsizes++] = (uint32_t)strtoul(argv[i], NULL, 10);
    }
    if (nsizes == 0) {
        sizes[nsizes++] = 1000000;
        sizes[nsizes++] = 10000000;
    }
    if (reps < 1 || reps > 15) reps = 3;
    /* As goblin-core does at start-up (server_cron_start): jemalloc purges
     * freed pages in a background thread. Without it the purge of the
     * previous runs' tables lands on whichever insert allocates next and
     * shows up as a multi-ms "slowest insert" that the server never sees. */
    _Bool bg = 1;
    mallctl("background_thread", NULL, NULL, &bg, sizeof(bg));
    uint32_t maxn = 0;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > maxn) maxn = sizes[i];
    keys = malloc((size_t)maxn * sizeof(uint64_t));
    if (!keys) return 1;
    for (uint32_t i = 0; i < maxn; i++) keys[i] = mix(i) & ~1ULL; /* even: misses use odd keys */

    printf("swiss_bench: %d reps, medians; ops/s in millions (M/s)\n", reps);
    for (int si = 0; si < nsizes; si++) {
        uint32_t n = sizes[si];
        double v[2][R_N][15];
        for (int r = 0; r < reps; r++) {
            result a, b;
            run_swiss(n, 1000 + (uint64_t)r, &a);
            run_chained(n, 1000 + (uint64_t)r, &b);
            for (int k = 0; k < R_N; k++) {
                v[0][k][r] = a.v[k];
                v[1][k][r] = b.v[k];
            }
        }
        double m[2][R_N];
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < R_N; k++) m[t][k] = median(v[t][k], reps);
        double ws, wc;
        uint64_t os, oc;
        latency_swiss(n, &ws, &os);
        latency_chained(n, &wc, &oc);
        printf("\nN = %u\n", n);
        printf("  %-8s %10s %10s %10s %12s %16s\n", "index", "insert", "hit", "miss", "bytes/entry",
               "slowest insert (CPU)");
        printf("  %-8s %8.2f/s %8.2f/s %8.2f/s %12.2f %10.2f ms (%llu > 1 ms)\n", "swiss4", m[0][0] / 1e6,
               m[0][1] / 1e6, m[0][2] / 1e6, m[0][3], ws * 1e3, (unsigned long long)os);
        printf("  %-8s %8.2f/s %8.2f/s %8.2f/s %12.2f %10.2f ms (%llu > 1 ms)\n", "chained", m[1][0] / 1e6,
               m[1][1] / 1e6, m[1][2] / 1e6, m[1][3], wc * 1e3, (unsigned long long)oc);
        printf("  %-8s %9.2fx %9.2fx %9.2fx %11.2fx\n", "ratio", m[0][0] / m[1][0], m[0][1] / m[1][1],
               m[0][2] / m[1][2], m[0][3] / m[1][3]);
    }
    printf("\n");
    sweep_swiss(maxn);
    if (sink == 42) printf(" \n");
    free(keys);
    return 0;
}
