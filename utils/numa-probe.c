/* numa-probe -- read bandwidth and pointer-chase latency for every
 * (CPU node, memory node) pair, with a guard against cosmetic NUMA.
 *
 *   numa-probe [-s MiB] [-i ITERS] [-c STEPS] [-t THREADS] [-p GBPS] [-q]
 *
 * For each node with CPUs, the probe pins itself (and -t threads) there and
 * for each memory node maps a buffer bound to that node (mbind MPOL_BIND,
 * prefaulted, placement checked with move_pages), then measures
 *   - read bandwidth: best of ITERS sequential read passes, GB/s (all
 *     threads together; each reads its own slice);
 *   - latency: a pointer chase over a random cyclic permutation of cache
 *     lines, ns per dependent load (one thread).
 * It also measures an interleaved buffer (MPOL_INTERLEAVE over all memory
 * nodes) from each CPU node.
 *
 * A remote/local ratio is only printed when binding demonstrably confines
 * something (seed 003: a hypervisor can present nodes whose pages are spread
 * over both sockets whatever the guest asks, and every placement check still
 * passes). The probe refuses when, for any CPU node,
 *   - the local bind and the interleaved buffer agree within 10% in
 *     bandwidth or in latency, or
 *   - the local bind is not better than interleave, or
 *   - a one-node bind measures more than one node can deliver (-p GBPS, the
 *     per-node peak from the datasheet: channels x rate x 8 bytes), or
 *   - pages were not observed on the node that was asked for.
 * Exit status: 0 measured (ratio reported, or a one-node machine),
 * 2 refused (no ratio), 1 error.
 *
 * On a one-node machine it says so, measures that node, and prints no ratio. */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define LINE 64
#define MAXN 64

static size_t opt_size = 64u << 20;
static int opt_iters = 3;
static long opt_steps = 1 << 21;
static int opt_threads = 1;
static double opt_peak = 0;
static int opt_quiet = 0;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Map size bytes with policy mode over mask (nodes), prefaulted. */
static void *map_policy(size_t size, int mode, const unsigned long *mask, unsigned long maxnode) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    madvise(p, size, MADV_NOHUGEPAGE); /* place 4K pages; a THP spans nodes poorly */
    if (mbind(p, size, mode, mask, maxnode, 0) != 0) {
        munmap(p, size);
        return NULL;
    }
    if (madvise(p, size, MADV_POPULATE_WRITE) != 0) memset(p, 1, size);
    return p;
}

static void *map_on(size_t size, int node) {
    unsigned long mask[MAXN / (8 * sizeof(unsigned long)) + 1] = {0};
    mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
    return map_policy(size, MPOL_BIND, mask, sizeof(mask) * 8 + 1);
}

static void *map_interleave(size_t size, const int *mnodes, int nm) {
    unsigned long mask[MAXN / (8 * sizeof(unsigned long)) + 1] = {0};
    for (int i = 0; i < nm; i++)
        mask[mnodes[i] / (8 * sizeof(unsigned long))] |= 1UL << (mnodes[i] % (8 * sizeof(unsigned long)));
    return map_policy(size, MPOL_INTERLEAVE, mask, sizeof(mask) * 8 + 1);
}

/* Fraction of 64 sampled pages that sit on node (move_pages query). */
static int pages_on(void *p, size_t size, int node, int *probed) {
    enum { S = 64 };
    void *pages[S];
    int status[S];
    long pg = sysconf(_SC_PAGESIZE);
    size_t np = size / (size_t)pg;
    for (int i = 0; i < S; i++) pages[i] = (char *)p + (np * (size_t)i / S) * (size_t)pg;
    *probed = 0;
    if (move_pages(0, S, pages, NULL, status, 0) != 0) return -1;
    int on = 0;
    for (int i = 0; i < S; i++) {
        if (status[i] >= 0) (*probed)++;
        if (status[i] == node) on++;
    }
    return on;
}

/* ---- bandwidth ---- */
typedef struct bw_job {
    const uint64_t *p;
    size_t n;
    int cpu_node;
    pthread_barrier_t *bar;
    double t0, t1;
    uint64_t sink;
} bw_job;

static uint64_t read_pass(const uint64_t *p, size_t n) {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        a += p[i] ^ p[i + 4];
        b += p[i + 1] ^ p[i + 5];
        c += p[i + 2] ^ p[i + 6];
        d += p[i + 3] ^ p[i + 7];
    }
    return a + b + c + d;
}

static void *bw_thread(void *arg) {
    bw_job *j = arg;
    numa_run_on_node(j->cpu_node);
    pthread_barrier_wait(j->bar);
    j->t0 = now();
    j->sink = read_pass(j->p, j->n);
    j->t1 = now();
    return NULL;
}

static double measure_bw(void *buf, size_t size, int cpu_node) {
    int nt = opt_threads;
    size_t words = size / 8, per = words / (size_t)nt;
    double best = 0;
    for (int it = 0; it < opt_iters; it++) {
        pthread_t th[256];
        bw_job jobs[256];
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)nt);
        for (int t = 0; t < nt; t++) {
            jobs[t] = (bw_job){.p = (const uint64_t *)buf + per * (size_t)t, .n = per, .cpu_node = cpu_node, .bar = &bar};
            pthread_create(&th[t], NULL, bw_thread, &jobs[t]);
        }
        double t0 = 1e300, t1 = 0;
        uint64_t sink = 0;
        for (int t = 0; t < nt; t++) {
            pthread_join(th[t], NULL);
            if (jobs[t].t0 < t0) t0 = jobs[t].t0;
            if (jobs[t].t1 > t1) t1 = jobs[t].t1;
            sink += jobs[t].sink;
        }
        pthread_barrier_destroy(&bar);
        if (sink == 42) fputc(' ', stderr); /* keep the reads */
        double gbs = (double)(per * (size_t)nt * 8) / (t1 - t0) / 1e9;
        if (gbs > best) best = gbs;
    }
    return best;
}

/* ---- latency: chase a random cycle through every cache line ---- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void build_chase(void *buf, size_t size) {
    size_t n = size / LINE;
    size_t *perm = malloc(n * sizeof(size_t));
    if (!perm) {
        perror("malloc");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) perm[i] = i;
    for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle over all lines */
        size_t j = (size_t)(rnd() % i);
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    char *b = buf;
    for (size_t i = 0; i < n; i++) *(void **)(b + perm[i] * LINE) = b + perm[(i + 1) % n] * LINE;
    free(perm);
}

static double measure_lat(void *buf) {
    double best = 1e300;
    for (int it = 0; it < opt_iters; it++) {
        void **q = buf;
        double t0 = now();
        for (long s = 0; s < opt_steps; s++) q = *q;
        double dt = now() - t0;
        if (q == NULL) fputc(' ', stderr);
        double ns = dt * 1e9 / (double)opt_steps;
        if (ns < best) best = ns;
    }
    return best;
}

static void usage(void) {
    fprintf(stderr,
            "usage: numa-probe [-s MiB] [-i ITERS] [-c STEPS] [-t THREADS] [-p GBPS] [-q]\n"
            "  -s MiB     buffer per measurement (default 64)\n"
            "  -i ITERS   repetitions, best is kept (default 3)\n"
            "  -c STEPS   dependent loads per latency run (default 2097152)\n"
            "  -t THREADS bandwidth threads pinned to the CPU node (default 1)\n"
            "  -p GBPS    what one node's memory can deliver at most (datasheet);\n"
            "             a one-node bind above it refuses the ratio\n"
            "  -q         only the verdict lines\n"
            "exit: 0 measured, 2 refused (binding confines nothing), 1 error\n");
    exit(1);
}

static int differs(double a, double b) {
    double hi = a > b ? a : b;
    return hi > 0 && (a > b ? a - b : b - a) / hi > 0.10;
}

int main(int argc, char **argv) {
    int c;
    while ((c = getopt(argc, argv, "s:i:c:t:p:qh")) != -1) {
        switch (c) {
        case 's': opt_size = (size_t)strtoull(optarg, NULL, 10) << 20; break;
        case 'i': opt_iters = atoi(optarg); break;
        case 'c': opt_steps = atol(optarg); break;
        case 't': opt_threads = atoi(optarg); break;
        case 'p': opt_peak = atof(optarg); break;
        case 'q': opt_quiet = 1; break;
        default: usage();
        }
    }
    if (opt_size < (1u << 20) || opt_iters < 1 || opt_steps < 1 || opt_threads < 1 || opt_threads > 256) usage();

    if (numa_available() < 0) {
        printf("numa-probe: libnuma reports no NUMA support: one memory node; no (CPU node, memory node) ratio to report\n");
        return 0;
    }
    int cpu_nodes[MAXN], mem_nodes[MAXN], ncpu = 0, nmem = 0;
    struct bitmask *cpus = numa_allocate_cpumask();
    for (int n = 0; n <= numa_max_node() && n < MAXN; n++) {
        if (!numa_bitmask_isbitset(numa_nodes_ptr, (unsigned)n)) continue;
        long long fr;
        if (numa_node_size64(n, &fr) > 0) mem_nodes[nmem++] = n;
        if (numa_node_to_cpus(n, cpus) == 0 && numa_bitmask_weight(cpus) > 0) cpu_nodes[ncpu++] = n;
    }
    numa_free_cpumask(cpus);
    printf("numa-probe: %d memory node(s), %d node(s) with CPUs; %zu MiB buffers, %d iteration(s), %ld chase steps, %d thread(s)\n",
           nmem, ncpu, opt_size >> 20, opt_iters, opt_steps, opt_threads);

    static double bw[MAXN][MAXN], lat[MAXN][MAXN], ibw[MAXN], ilat[MAXN];
    int placement_ok = 1;
    for (int ci = 0; ci < ncpu; ci++) {
        int cn = cpu_nodes[ci];
        if (numa_run_on_node(cn) != 0) {
            fprintf(stderr, "numa-probe: cannot run on node %d: %s\n", cn, strerror(errno));
            return 1;
        }
        for (int mi = 0; mi <= nmem; mi++) { /* mi == nmem: interleaved */
            int il = mi == nmem;
            if (il && nmem < 2) break;
            void *buf = il ? map_interleave(opt_size, mem_nodes, nmem) : map_on(opt_size, mem_nodes[mi]);
            if (!buf) {
                fprintf(stderr, "numa-probe: cannot map %zu MiB %s%d: %s\n", opt_size >> 20,
                        il ? "interleaved" : "on node ", il ? nmem : mem_nodes[mi], strerror(errno));
                return 1;
            }
            if (!il) {
                int probed, on = pages_on(buf, opt_size, mem_nodes[mi], &probed);
                if (on < probed || probed == 0) {
                    placement_ok = 0;
                    printf("numa-probe: cpu node %d, memory node %d: only %d of %d probed pages on the node\n", cn,
                           mem_nodes[mi], on, probed);
                }
            }
            double b = measure_bw(buf, opt_size, cn);
            build_chase(buf, opt_size);
            double l = measure_lat(buf);
            munmap(buf, opt_size);
            if (il) {
                ibw[cn] = b;
                ilat[cn] = l;
            } else {
                bw[cn][mem_nodes[mi]] = b;
                lat[cn][mem_nodes[mi]] = l;
            }
            if (!opt_quiet) {
                if (il)
                    printf("cpu node %2d  memory interleaved  read %8.2f GB/s  chase %8.1f ns\n", cn, b, l);
                else
                    printf("cpu node %2d  memory node %2d       read %8.2f GB/s  chase %8.1f ns\n", cn, mem_nodes[mi], b, l);
            }
        }
    }

    if (nmem < 2 || ncpu < 1) {
        printf("numa-probe: one NUMA node on this machine: nothing is remote, no remote/local ratio to report\n");
        return 0;
    }

    /* The guard: does binding confine anything? */
    int refuse = !placement_ok;
    for (int ci = 0; ci < ncpu; ci++) {
        int cn = cpu_nodes[ci];
        int local = numa_bitmask_isbitset(numa_nodes_ptr, (unsigned)cn) ? cn : -1;
        double lb = 0, ll = 0;
        for (int mi = 0; mi < nmem; mi++)
            if (mem_nodes[mi] == local) lb = bw[cn][cn], ll = lat[cn][cn];
        if (lb == 0) continue; /* CPU node without memory */
        if (!differs(lb, ibw[cn]) || !differs(ll, ilat[cn])) {
            printf("numa-probe: REFUSED: cpu node %d: bind to node %d (%.2f GB/s, %.1f ns) and interleave (%.2f GB/s, %.1f ns) "
                   "agree within 10%%: binding confines nothing\n",
                   cn, cn, lb, ll, ibw[cn], ilat[cn]);
            refuse = 1;
        } else if (lb < ibw[cn] || ll > ilat[cn]) {
            printf("numa-probe: REFUSED: cpu node %d: local bind (%.2f GB/s, %.1f ns) is not better than interleave "
                   "(%.2f GB/s, %.1f ns)\n",
                   cn, lb, ll, ibw[cn], ilat[cn]);
            refuse = 1;
        }
        for (int mi = 0; mi < nmem && opt_peak > 0; mi++) {
            double b = bw[cn][mem_nodes[mi]];
            if (b > opt_peak) {
                printf("numa-probe: REFUSED: cpu node %d reads %.2f GB/s from node %d alone, more than one node can "
                       "deliver (%.2f GB/s): the bind is not confined to one node\n",
                       cn, b, mem_nodes[mi], opt_peak);
                refuse = 1;
            }
        }
    }
    if (opt_peak <= 0)
        printf("numa-probe: note: no -p GBPS given, the one-node-peak check was skipped\n");
    if (refuse) {
        printf("numa-probe: no ratio reported: the numbers above measure one undivided pool, not NUMA\n");
        return 2;
    }
    for (int ci = 0; ci < ncpu; ci++) {
        int cn = cpu_nodes[ci];
        if (bw[cn][cn] == 0) continue;
        for (int mi = 0; mi < nmem; mi++) {
            int mn = mem_nodes[mi];
            if (mn == cn) continue;
            printf("ratio cpu node %d -> memory node %d (distance %d): bandwidth local/remote %.3fx, latency remote/local %.3fx\n",
                   cn, mn, numa_distance(cn, mn), bw[cn][cn] / bw[cn][mn], lat[cn][mn] / lat[cn][cn]);
        }
    }
    return 0;
}
