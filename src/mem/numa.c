/* numa.c -- topology, binding and verified placement (see numa.h).
 *
 * Placement is requested with mbind(MPOL_BIND) before the first touch and
 * then checked with move_pages(): a bind the kernel did not honour shows up
 * as observed != requested in INFO instead of being assumed. */
#include "mem/numa.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem/hugetlb.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static int have_numa(void) { return numa_available() >= 0; }

int gnuma_nodes(void) { return have_numa() ? numa_max_node() + 1 : 1; }

int gnuma_node_online(int node) {
    if (node < 0) return 0;
    if (!have_numa()) return node == 0;
    if (node > numa_max_node()) return 0;
    return numa_bitmask_isbitset(numa_nodes_ptr, (unsigned)node) != 0;
}

long long gnuma_node_bytes(int node) {
    if (!have_numa()) return 0;
    long long fr;
    long long sz = numa_node_size64(node, &fr);
    return sz < 0 ? 0 : sz;
}

int gnuma_distance(int a, int b) {
    if (!have_numa()) return a == b ? 10 : -1;
    int d = numa_distance(a, b);
    return d == 0 ? -1 : d;
}

int gnuma_farthest(int from) {
    int best = from, bestd = -1;
    for (int n = 0; n < gnuma_nodes(); n++) {
        if (!gnuma_node_online(n)) continue;
        int d = gnuma_distance(from, n);
        if (d > bestd) {
            bestd = d;
            best = n;
        }
    }
    return best;
}

int gnuma_bind_thread(int node) {
    if (node < 0 || !have_numa()) return 0;
    if (numa_run_on_node(node) != 0) return -1;
    struct bitmask *bm = numa_allocate_nodemask();
    numa_bitmask_setbit(bm, (unsigned)node);
    numa_set_membind(bm);
    numa_free_nodemask(bm);
    return 0;
}

static int bind_range(void *p, size_t size, int node) {
    if (node < 0 || !have_numa()) return 0;
    unsigned long mask[16] = {0};
    if (node >= (int)(sizeof(mask) * 8)) return -1;
    mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
    return mbind(p, size, MPOL_BIND, mask, sizeof(mask) * 8 + 1, 0) == 0 ? 0 : -1;
}

/* The kernel checks a MAP_HUGETLB reservation against the free huge pages
 * of the calling thread's MPOL_BIND nodes, not the range's later mbind: a
 * thread bound to the serving node (gnuma_bind_thread) would be refused a
 * foreign pool whenever the serving node's own HugeTLB pool is short (found
 * by tests/numa in the VM). So the mapping is made with the thread's policy
 * switched to the target node, and the policy is restored afterwards. */
typedef struct saved_policy {
    int mode, valid;
    unsigned long mask[16];
} saved_policy;

static void policy_push(int node, saved_policy *sv) {
    sv->valid = 0;
    if (node < 0 || !have_numa() || node >= (int)(sizeof(sv->mask) * 8)) return;
    memset(sv->mask, 0, sizeof(sv->mask));
    if (get_mempolicy(&sv->mode, sv->mask, sizeof(sv->mask) * 8, NULL, 0) != 0) return;
    unsigned long m[16] = {0};
    m[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
    if (set_mempolicy(MPOL_BIND, m, sizeof(m) * 8 + 1) == 0) sv->valid = 1;
}

static void policy_pop(const saved_policy *sv) {
    if (!sv->valid) return;
    int mode = sv->mode & 0xff; /* without the MPOL_F_* flag bits */
    if (mode == MPOL_DEFAULT || mode == MPOL_LOCAL) set_mempolicy(mode, NULL, 0);
    else set_mempolicy(sv->mode, sv->mask, sizeof(sv->mask) * 8 + 1);
}

void *gnuma_pool_map(size_t size, int node, int try_huge, int *huge) {
    *huge = 0;
    size_t hp = hugetlb_page_size();
    if (try_huge && size % hp == 0) {
        saved_policy sv;
        policy_push(node, &sv);
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
        if (p != MAP_FAILED) {
            if (bind_range(p, size, node) == 0 && madvise(p, size, MADV_POPULATE_WRITE) == 0) {
                policy_pop(&sv);
                *huge = 1;
                return p;
            }
            munmap(p, size);
        }
        policy_pop(&sv);
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return NULL;
    madvise(p, size, MADV_NOHUGEPAGE);
    if (bind_range(p, size, node) != 0 && node >= 0) {
        munmap(p, size);
        return NULL;
    }
    /* Prefault so placement is decided (and verifiable) now; an error here
     * means the node cannot hold the pool. */
    if (node >= 0 && madvise(p, size, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
        munmap(p, size);
        return NULL;
    }
    return p;
}

int gnuma_observed_node(void *p, size_t size, int samples, int *agree, int *probed) {
    *agree = *probed = 0;
    if (!p || size == 0 || samples <= 0) return -1;
    long pg = sysconf(_SC_PAGESIZE);
    size_t npages = size / (size_t)pg;
    if (npages == 0) npages = 1;
    if ((size_t)samples > npages) samples = (int)npages;
    if (samples > 256) samples = 256;
    void *pages[256];
    int status[256];
    for (int i = 0; i < samples; i++) {
        size_t idx = npages * (size_t)i / (size_t)samples;
        pages[i] = (char *)p + idx * (size_t)pg;
    }
    if (move_pages(0, (unsigned long)samples, pages, NULL, status, 0) != 0) return -1;
    int counts[64] = {0}, best = -1;
    for (int i = 0; i < samples; i++) {
        if (status[i] < 0 || status[i] >= 64) continue;
        counts[status[i]]++;
        (*probed)++;
    }
    for (int n = 0; n < 64; n++)
        if (counts[n] > 0 && (best < 0 || counts[n] > counts[best])) best = n;
    if (best >= 0) *agree = counts[best];
    return best;
}
