/* placement_test.c -- real placement of the object store's head pools,
 * run as root inside the multi-node QEMU guest (tests/numa/run.sh).
 *
 * Links src/mem/{objstore,numa,hugetlb,smallobj,ssdtail}.c statically. Each
 * case runs objstore_init() in a forked child (the store is initialized
 * once per process) and checks, independently of the store's own INFO
 * figures, where the kernel put the pages:
 *   - move_pages() on every page of every head slot the pool hands out;
 *   - the pool's line in /proc/self/numa_maps (bind:N, only N<node>=, and
 *     "huge" when HugeTLB backs it);
 *   - per-node free_hugepages before and after, so "HugeTLB on node N" is
 *     the node's own pool and not just a global reservation.
 *
 *   placement_test --nodes N [--hugepages "0:2,1:4"] [--dist "ROWS"]
 *
 * --hugepages states the boot-time per-node reservation (kernel cmdline)
 * so the test knows which pools must come out HugeTLB and which must fall
 * back to ordinary pages with the same capacity and geometry. Prints PASS:/
 * FAIL: lines and ends with "placement_test: N passed, M failed"; exit 1 on
 * any failure. */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mem/hugetlb.h"
#include "mem/numa.h"
#include "mem/objstore.h"
#include "mem/smallobj.h"

#define MB (1LL << 20)
#define MAXN 8

static int fails, passes;
static int nnodes;
static long reserved[MAXN]; /* boot-time huge pages per node (--hugepages) */

static void check(int ok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%s: ", ok ? "PASS" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    if (ok) passes++;
    else fails++;
}

static long node_huge(int node, const char *what) {
    char path[256];
    snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/%s", node, what);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

/* The numa_maps line of the mapping that starts at addr ("" if none). */
static void numa_maps_line(void *addr, char *out, size_t outlen) {
    out[0] = 0;
    FILE *f = fopen("/proc/self/numa_maps", "r");
    if (!f) return;
    char line[1024], want[32];
    snprintf(want, sizeof(want), "%lx ", (unsigned long)(uintptr_t)addr);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, want, strlen(want)) == 0) {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, outlen, "%s", line);
            break;
        }
    }
    fclose(f);
}

/* Count of "N<k>=" entries in a numa_maps line and whether N<node>= is one. */
static int maps_only_on(const char *line, int node) {
    int others = 0, mine = 0;
    for (const char *p = line; (p = strstr(p, " N")) != NULL; p += 2) {
        int k;
        if (sscanf(p + 2, "%d=", &k) == 1) {
            if (k == node) mine = 1;
            else others++;
        }
    }
    return mine && others == 0;
}

/* Every 4K page of [p, p+len) on node? Returns pages not on it (-1: error). */
static long pages_off_node(char *p, size_t len, int node) {
    size_t n = len / 4096;
    void **pages = malloc(n * sizeof(void *));
    int *status = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++) pages[i] = p + i * 4096;
    long bad = -1;
    if (move_pages(0, n, pages, NULL, status, 0) == 0) {
        bad = 0;
        for (size_t i = 0; i < n; i++) bad += status[i] != node;
    }
    free(pages);
    free(status);
    return bad;
}

typedef struct poolwant {
    int node;  /* expected node */
    int huge;  /* expected HugeTLB backing */
    long long bytes;
} poolwant;

/* Configure the store, init it, check pools against want[0..nwant). */
static void run_case(const char *name, int numa, int perverse, long long memory, long long sub_memory,
                     const poolwant *want, int nwant) {
    objstore_cfg.numa = numa;
    objstore_cfg.perverse = perverse;
    objstore_cfg.memory = memory;
    objstore_cfg.sub_memory = sub_memory;
    objstore_cfg.block = 2 * MB;
    objstore_cfg.ram_head = 256 << 10;
    long free_before[MAXN];
    for (int n = 0; n < nnodes; n++) free_before[n] = node_huge(n, "free_hugepages");

    char err[256];
    if (objstore_validate(&objstore_cfg, err, sizeof(err)) != 0) {
        check(0, "%s: validate: %s", name, err);
        return;
    }
    if (objstore_init(err, sizeof(err)) != 0) {
        check(0, "%s: init: %s", name, err);
        return;
    }
    objstore_stats st;
    objstore_stats_get(&st);
    check(st.npools == nwant, "%s: %d pools (want %d)", name, st.npools, nwant);
    if (st.npools != nwant) return;
    char order[128] = "", worder[128] = "";
    for (int i = 0; i < nwant; i++) {
        snprintf(order + strlen(order), sizeof(order) - strlen(order), "%s%d", i ? "," : "", st.pool[i].node_req);
        snprintf(worder + strlen(worder), sizeof(worder) - strlen(worder), "%s%d", i ? "," : "", want[i].node);
    }
    check(strcmp(order, worder) == 0, "%s: pool nodes in preference order [%s] (want [%s])", name, order, worder);

    /* The serving node keeps the thread and ordinary allocations. */
    if (numa >= 0) {
        int cpu = sched_getcpu();
        char *heap = malloc(1 << 20);
        memset(heap, 1, 1 << 20);
        int hn = -1;
        get_mempolicy(&hn, NULL, 0, heap, MPOL_F_NODE | MPOL_F_ADDR);
        int cn = cpu >= 0 ? numa_node_of_cpu(cpu) : -1;
        check(cn == numa && hn == numa,
              "%s: serving thread on cpu %d of node %d, ordinary allocation on node %d (want %d)", name, cpu, cn, hn,
              numa);
        free(heap);
    }

    /* Fill every pool, slot by slot: allocation order follows the pools. */
    size_t head = objstore_ram_head();
    for (int i = 0; i < nwant; i++) {
        const objstore_pool_info *pi = &st.pool[i];
        check(pi->node_obs == want[i].node && pi->obs_agree == pi->obs_probed && pi->obs_probed > 0,
              "%s: pool%d INFO node_requested=%d node_observed=%d pages=%d/%d", name, i, pi->node_req, pi->node_obs,
              pi->obs_agree, pi->obs_probed);
        check(pi->huge == want[i].huge, "%s: pool%d hugetlb=%d (want %d)", name, i, pi->huge, want[i].huge);
        check((long long)pi->bytes == want[i].bytes && pi->blocks == (size_t)(want[i].bytes / (2 * MB)),
              "%s: pool%d capacity %zu bytes in %zu blocks (want %lld, same geometry with or without HugeTLB)",
              name, i, pi->bytes, pi->blocks, want[i].bytes);
        size_t slots = pi->slots;
        char *base = NULL;
        long off = 0, wrongpool = 0;
        for (size_t s = 0; s < slots; s++) {
            objhead h;
            if (objstore_head_alloc(&h) != 0) {
                wrongpool++;
                break;
            }
            if (h.pool != i) wrongpool++;
            if (s == 0) base = h.p;
            memset(h.p, (int)s, head);
            long b = pages_off_node(h.p, head, want[i].node);
            off += b < 0 ? (long)(head / 4096) : b;
        }
        check(wrongpool == 0, "%s: pool%d's %zu heads handed out in preference order", name, i, slots);
        check(off == 0, "%s: move_pages on every page of pool%d's %zu heads: %ld not on node %d", name, i, slots, off,
              want[i].node);
        char line[1024];
        numa_maps_line(base, line, sizeof(line));
        char bind[16];
        snprintf(bind, sizeof(bind), "bind:%d ", want[i].node);
        int ok = line[0] && strstr(line, bind) && maps_only_on(line, want[i].node) &&
                 (strstr(line, " huge ") != NULL) == want[i].huge;
        check(ok, "%s: numa_maps pool%d: %s", name, i, line[0] ? line : "(no line)");
        if (want[i].huge) {
            long used = free_before[want[i].node] - node_huge(want[i].node, "free_hugepages");
            check(used == want[i].bytes / (2 * MB), "%s: node%d's own HugeTLB pool gave %ld pages (want %lld)", name,
                  want[i].node, used, want[i].bytes / (2 * MB));
        }
    }
    objhead extra;
    check(objstore_head_alloc(&extra) != 0, "%s: every pool full -> allocation refused", name);
    /* A fallback must have given every huge page back. */
    for (int n = 0; n < nnodes; n++) {
        int used_here = 0;
        for (int i = 0; i < nwant; i++) used_here |= want[i].node == n && want[i].huge;
        if (!used_here && free_before[n] >= 0)
            check(node_huge(n, "free_hugepages") == free_before[n], "%s: node%d free_hugepages unchanged (%ld)", name,
                  n, free_before[n]);
    }
}

/* Promotion: a hot set on the last (farthest preferred) foreign pool and a
 * cold set filling pool 0. With promotion on, one exchange brings the hot
 * block to the serving node (bytes, owners and scores follow); with
 * --no-numa-promotion nothing moves. use_thread: the coordinator thread
 * does it (decay interval 200 ms), else objstore_promote_once(). */
static int promo_nopromo, promo_thread;
static void run_promo(const char *name, int numa) {
    objstore_cfg.numa = numa;
    objstore_cfg.perverse = 0;
    objstore_cfg.memory = 2 * MB;
    objstore_cfg.sub_memory = 2 * MB;
    objstore_cfg.block = 2 * MB;
    objstore_cfg.ram_head = 256 << 10;
    objstore_cfg.no_numa_promotion = promo_nopromo;
    objstore_cfg.numa_decay_ms = 200;
    char err[256];
    if (objstore_init(err, sizeof(err)) != 0) {
        check(0, "%s: init: %s", name, err);
        return;
    }
    objstore_stats st;
    objstore_stats_get(&st);
    int np = st.npools, hotpool = np - 1, hotnode = st.pool[hotpool].node_req;
    size_t head = objstore_ram_head(), per = (size_t)st.pool[0].slots;
    objhead *h = calloc((size_t)np * per, sizeof(objhead));
    for (size_t i = 0; i < (size_t)np * per; i++) {
        if (objstore_head_alloc(&h[i]) != 0) {
            check(0, "%s: cannot fill the pools", name);
            return;
        }
        for (size_t k = 0; k < head; k += 8) memcpy(h[i].p + k, &(uint64_t){i * 1000003u + k}, 8);
    }
    objhead *hot = h + (size_t)hotpool * per, *cold = h;
    for (size_t i = 0; i < per; i++)
        for (int g = 0; g < 40; g++) objstore_count_served(&hot[i], head);
    check(hot[0].pool == hotpool && cold[0].pool == 0 && objstore_head_score(&hot[0]) == 40,
          "%s: hot set (score 40) on pool%d node %d, cold set on pool0 node %d", name, hotpool, hotnode, numa);
    int r;
    if (promo_thread) {
        objstore_promotion_start(NULL, NULL);
        objstore_promo_stats ps;
        for (int t = 0; t < 300; t++) {
            objstore_promo_stats_get(&ps);
            if (ps.exchanges > 0 && ps.decays > 0) break;
            usleep(10000);
        }
        objstore_promotion_stop();
        objstore_promo_stats_get(&ps);
        r = (int)ps.exchanges;
        check(promo_nopromo ? ps.decays == 0 : ps.decays > 0, "%s: coordinator decays %llu", name,
              (unsigned long long)ps.decays);
    } else {
        r = objstore_promote_once(NULL, NULL);
    }
    objstore_promo_stats ps;
    objstore_promo_stats_get(&ps);
    if (promo_nopromo) {
        check(r == 0 && ps.exchanges == 0, "%s: --no-numa-promotion: no exchange (%llu)", name,
              (unsigned long long)ps.exchanges);
    } else {
        check(r == 1 && ps.exchanges == 1 && ps.bytes_copied == 4 * MB && ps.longest_ns > 0,
              "%s: one exchange, %llu bytes copied, longest %llu us", name, (unsigned long long)ps.bytes_copied,
              (unsigned long long)(ps.longest_ns / 1000));
    }
    int want_hot = promo_nopromo ? hotnode : numa, want_cold = promo_nopromo ? numa : hotnode;
    long off_hot = 0, off_cold = 0, bad_bytes = 0, bad_meta = 0;
    for (size_t i = 0; i < (size_t)np * per; i++)
        for (size_t k = 0; k < head; k += 8) {
            uint64_t v;
            memcpy(&v, h[i].p + k, 8);
            if (v != i * 1000003u + k) {
                bad_bytes++;
                break;
            }
        }
    for (size_t i = 0; i < per; i++) {
        long b = pages_off_node(hot[i].p, head, want_hot);
        off_hot += b < 0 ? 1 : b;
        b = pages_off_node(cold[i].p, head, want_cold);
        off_cold += b < 0 ? 1 : b;
        if (hot[i].pool != (promo_nopromo ? hotpool : 0) || cold[i].pool != (promo_nopromo ? 0 : hotpool)) bad_meta++;
    }
    check(bad_bytes == 0, "%s: every head's bytes intact (%ld differ)", name, bad_bytes);
    check(off_hot == 0 && bad_meta == 0, "%s: hot heads on node %d by move_pages (%ld pages off), pools re-pointed",
          name, want_hot, off_hot);
    check(off_cold == 0, "%s: cold heads on node %d by move_pages (%ld pages off)", name, want_cold, off_cold);
    if (!promo_nopromo) {
        uint32_t sc = objstore_head_score(&hot[0]);
        check(sc > 0 && sc <= 40, "%s: score followed the hot head (%u)", name, sc);
        check(objstore_promote_once(NULL, NULL) == 0, "%s: no second exchange (no ping-pong)", name);
        objstore_decay();
        check(objstore_head_score(&hot[0]) == sc / 2, "%s: decay halves scores (%u -> %u)", name, sc,
              objstore_head_score(&hot[0]));
    }
    /* Freed heads leave the pools consistent. */
    for (size_t i = 0; i < (size_t)np * per; i++) objstore_head_free(&h[i]);
    objstore_stats_get(&st);
    size_t used = 0;
    for (int i = 0; i < np; i++) used += st.pool[i].slots_used;
    check(used == 0, "%s: all heads freed after the exchange (%zu used)", name, used);
}

/* --small-memory / --small-sub-memory: 1 KiB records fill the serving
 * node's 2 MiB small pool first, then one 2 MiB pool on every other node,
 * nearest first; then allocation fails. Placement by move_pages. */
static void run_small(const char *name, int numa) {
    objstore_cfg.numa = numa;
    objstore_cfg.perverse = 0;
    objstore_cfg.memory = 0;
    objstore_cfg.sub_memory = 0;
    objstore_cfg.block = 2 * MB;
    objstore_cfg.ram_head = 256 << 10;
    objstore_cfg.small_memory = 2 * MB;
    objstore_cfg.small_sub_memory = 2 * MB;
    char err[256];
    if (objstore_validate(&objstore_cfg, err, sizeof(err)) != 0 || objstore_init(err, sizeof(err)) != 0) {
        check(0, "%s: init: %s", name, err);
        return;
    }
    smallobj_stats ss;
    smallobj_stats_get(&ss);
    check(ss.npools == nnodes && ss.pool[0].node == numa, "%s: %d small pools (want %d), pool0 on node %d", name,
          ss.npools, nnodes, ss.pool[0].node);
    enum { MAXR = 20000 };
    static uint32_t r[MAXR];
    int n = 0;
    while (n < MAXR && (r[n] = smallobj_alloc(1000))) {
        memset(smallobj_rec(r[n])->data, 'x', 1000);
        n++;
    }
    int per[MAXN] = {0}, last = -1, order_ok = 1, first_node = -1;
    for (int i = 0; i < n; i++) {
        void *pg = (void *)((uintptr_t)smallobj_rec(r[i]) & ~(uintptr_t)4095);
        int st = -1;
        if (move_pages(0, 1, &pg, NULL, &st, 0) != 0 || st < 0 || st >= MAXN) {
            order_ok = 0;
            continue;
        }
        if (i == 0) first_node = st;
        per[st]++;
        /* Pools are used one after another: a node never comes back. */
        if (st != last) {
            if (last >= 0 && per[st] > 1) order_ok = 0;
            last = st;
        }
    }
    int per_pool = (int)(2 * MB / smallobj_size_for(1000)); /* 1000 bytes and the header: 1,008 */
    int nodes_full = 0;
    for (int k = 0; k < nnodes; k++) nodes_full += per[k] >= per_pool - 2 && per[k] <= per_pool;
    check(first_node == numa && order_ok && nodes_full == nnodes && n < MAXR,
          "%s: %d records until full: first on node %d, node by node, ~%d per node (node0 %d, node1 %d)", name, n,
          first_node, per_pool, per[0], per[1]);
    smallobj_stats_get(&ss);
    int segs_ok = 1;
    for (int k = 0; k < ss.npools; k++) segs_ok &= ss.pool[k].segments == 1;
    check(segs_ok && ss.alloc_fail >= 1, "%s: one segment per pool, then a refusal (%llu)", name,
          (unsigned long long)ss.alloc_fail);
    for (int i = 0; i < n; i++) smallobj_free(r[i]);
}

/* Each case in its own process: the store initializes once. */
static void fork_case(const char *name, int numa, int perverse, long long memory, long long sub, const poolwant *w,
                      int nw) {
    fflush(stdout);
    int pfd[2];
    if (pipe(pfd) != 0) exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        fails = passes = 0;
        if (memory == -2)
            run_small(name, numa);
        else if (memory < 0)
            run_promo(name, numa);
        else
            run_case(name, numa, perverse, memory, sub, w, nw);
        int r[2] = {passes, fails};
        if (write(pfd[1], r, sizeof(r)) != (ssize_t)sizeof(r)) _exit(3);
        _exit(0);
    }
    close(pfd[1]);
    int r[2] = {0, 0}, status = 0;
    ssize_t got = read(pfd[0], r, sizeof(r));
    close(pfd[0]);
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof(r) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        check(0, "%s: case process died (status 0x%x)", name, status);
        return;
    }
    passes += r[0];
    fails += r[1];
}

static int farthest_expected(int from, int dist[MAXN][MAXN]) {
    int best = from, bd = -1;
    for (int n = 0; n < nnodes; n++)
        if (dist[from][n] > bd) bd = dist[from][n], best = n;
    return best;
}

int main(int argc, char **argv) {
    int want_nodes = 0;
    const char *dist_s = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc) want_nodes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dist") && i + 1 < argc) dist_s = argv[++i];
        else if (!strcmp(argv[i], "--hugepages") && i + 1 < argc) {
            char *s = argv[++i], *tok, *save = NULL;
            for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                int n;
                long c;
                if (sscanf(tok, "%d:%ld", &n, &c) == 2 && n >= 0 && n < MAXN) reserved[n] = c;
            }
        } else {
            fprintf(stderr, "usage: placement_test --nodes N [--dist ROWS] [--hugepages 0:2,1:4]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    nnodes = gnuma_nodes();
    check(nnodes == want_nodes, "topology: %d nodes online (want %d)", nnodes, want_nodes);
    if (nnodes != want_nodes || nnodes < 2 || nnodes > MAXN) goto out;

    int dist[MAXN][MAXN];
    char got[256] = "";
    for (int a = 0; a < nnodes; a++)
        for (int b = 0; b < nnodes; b++) {
            dist[a][b] = gnuma_distance(a, b);
            snprintf(got + strlen(got), sizeof(got) - strlen(got), "%d%s", dist[a][b],
                     b + 1 < nnodes ? " " : (a + 1 < nnodes ? " / " : ""));
        }
    if (dist_s) check(strcmp(got, dist_s) == 0, "distance table \"%s\" (want \"%s\")", got, dist_s);
    for (int n = 0; n < nnodes; n++) {
        long nr = node_huge(n, "nr_hugepages");
        check(nr == reserved[n], "node%d reserved HugeTLB pages %ld (want %ld from the kernel cmdline)", n, nr,
              reserved[n]);
    }

    /* 1. A pool on each node as the serving node, sub-pools on the others
     * (nearest first), HugeTLB only where the node's own pool covers it. */
    for (int s = 0; s < nnodes; s++) {
        poolwant w[MAXN];
        int nw = 0;
        const long *avail = reserved;
        long long mem = 4 * MB, sub = 4 * MB;
        w[nw++] = (poolwant){s, avail[s] >= mem / (2 * MB), mem};
        int order[MAXN], no = 0;
        for (int n = 0; n < nnodes; n++)
            if (n != s) order[no++] = n;
        for (int i = 0; i < no; i++) /* nearest first, ties by id */
            for (int j = i + 1; j < no; j++)
                if (dist[s][order[j]] < dist[s][order[i]]) {
                    int t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
        for (int i = 0; i < no; i++) w[nw++] = (poolwant){order[i], avail[order[i]] >= sub / (2 * MB), sub};
        char name[64];
        snprintf(name, sizeof(name), "numa=%d", s);
        fork_case(name, s, 0, mem, sub, w, nw);
    }

    /* 2. A pool bigger than its node's HugeTLB pool while another node has
     * enough free pages (the global reservation succeeds): it must fall
     * back to ordinary pages on the same node, same capacity. */
    {
        int s = 0;
        long long mem = (reserved[0] + 2) * 2 * MB;
        poolwant w[1] = {{s, 0, mem}};
        fork_case("short HugeTLB pool on node0", s, 0, mem, 0, w, 1);
    }

    /* 3. --perverse: the preferred pool on the farthest node, preference
     * inverted (farthest first, the serving node last). */
    for (int s = 0; s < nnodes; s++) {
        int far = farthest_expected(s, dist);
        poolwant w[MAXN];
        int nw = 0;
        long long mem = 2 * MB, sub = 2 * MB;
        w[nw++] = (poolwant){far, reserved[far] >= 1, mem};
        int order[MAXN], no = 0;
        for (int n = 0; n < nnodes; n++)
            if (n != far) order[no++] = n;
        for (int i = 0; i < no; i++)
            for (int j = i + 1; j < no; j++)
                if (dist[s][order[j]] > dist[s][order[i]]) {
                    int t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
        for (int i = 0; i < no; i++) w[nw++] = (poolwant){order[i], reserved[order[i]] >= 1, sub};
        char name[64];
        snprintf(name, sizeof(name), "perverse numa=%d (farthest %d)", s, far);
        fork_case(name, s, 1, mem, sub, w, nw);
    }

    /* 4. Promotion: on (direct and by the coordinator thread), and frozen. */
    for (int mode = 0; mode < 3; mode++) {
        promo_nopromo = mode == 2;
        promo_thread = mode != 0;
        char name[64];
        snprintf(name, sizeof(name), "promotion %s", mode == 0 ? "once" : mode == 1 ? "thread" : "--no-numa-promotion");
        fork_case(name, 0, 0, -1, 0, NULL, 0);
    }

    /* 5. Small-object pools per node. */
    fork_case("small pools numa=0", 0, 0, -2, 0, NULL, 0);
    fork_case("small pools numa=1", 1, 0, -2, 0, NULL, 0);
out:
    printf("placement_test: %d passed, %d failed\n", passes, fails);
    return fails ? 1 : 0;
}
