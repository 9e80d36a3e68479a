/* numa.h -- NUMA topology and placement for the object store's pools.
 *
 * numa_pool_map() maps a fixed pool on one node: it first tries an explicit
 * HugeTLB mapping bound to the node (mbind MPOL_BIND) and prefaults it with
 * MADV_POPULATE_WRITE, so a short or wrong-sized per-node pool is an error
 * we handle rather than a SIGBUS; on any failure it falls back to ordinary
 * pages bound to the same node, with the same size. numa_observed_node()
 * asks the kernel (move_pages) where pages really are, so INFO can show the
 * requested and the observed node side by side.
 *
 * Pure module: no server types. node -1 means "no binding". */
#ifndef GOBLIN_MEM_NUMA_H
#define GOBLIN_MEM_NUMA_H
#include <stddef.h>

/* Number of configured nodes (>= 1), and whether node n is online. */
int gnuma_nodes(void);
int gnuma_node_online(int node);
/* MemTotal of a node in bytes, 0 when unknown. */
long long gnuma_node_bytes(int node);
/* SLIT distance, or -1. */
int gnuma_distance(int a, int b);
/* The online node farthest from `from` (ties: lowest id); from itself on a
 * one-node machine. */
int gnuma_farthest(int from);
/* Bind the calling thread's CPUs and its future allocations to node. 0 ok. */
int gnuma_bind_thread(int node);

/* Map size bytes for a pool on node (or -1: anywhere). *huge is set to 1
 * when HugeTLB pages back it. The memory is prefaulted. NULL on failure.
 * Given back with munmap; a plain one (not huge) also with reclaim_unmap. */
void *gnuma_pool_map(size_t size, int node, int try_huge, int *huge);
/* Node that holds the page at p (move_pages query), -1 when unknown.
 * Samples up to `samples` pages over [p, p+size) and returns the node most
 * of them are on; *agree gets how many of the samples were on it. */
int gnuma_observed_node(void *p, size_t size, int samples, int *agree, int *probed);
#endif
