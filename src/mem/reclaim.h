/* reclaim.h -- big mappings given back to the kernel by a background thread.
 *
 * munmap of a mapping whose pages were touched costs the caller about 60 ms
 * per GiB of 4 KiB pages (the kernel frees every page): deleting a hash of
 * 10M fields unmapped ~340 MB of arena blocks and index tables inside the
 * DEL, 20 ms during which the worker answered nobody. reclaim_unmap() hands
 * the mapping to a thread that unmaps it a moment later. That thread runs
 * SCHED_IDLE, so a worker that wakes up (a request arrives) takes the CPU
 * back at once, also when both share one CPU.
 *
 * The caller forgets the mapping at once: whatever counts mapped bytes
 * (used_memory) drops it at the hand-over; only the resident set follows
 * a moment later. The queue lives in the mappings themselves (a link in
 * each one's first bytes), so handing over never allocates and never fails.
 * In a forked child, or when the thread cannot be started, reclaim_unmap()
 * unmaps in place. Thread-safe. */
#ifndef GOBLIN_MEM_RECLAIM_H
#define GOBLIN_MEM_RECLAIM_H

#include <stddef.h>

/* Mappings smaller than this are unmapped in place (a page or two costs
 * less than the hand-over). */
#define RECLAIM_MIN ((size_t)64 << 10)

/* Unmap p (len bytes, page-aligned, writable, mapped by mmap) in the
 * background; p must not be touched again by the caller. */
void reclaim_unmap(void *p, size_t len);

/* Bytes handed over and not yet unmapped; bytes ever handed over. */
size_t reclaim_pending_bytes(void);
size_t reclaim_handed_bytes(void);

/* Wait until everything handed over so far is unmapped (tests). */
void reclaim_drain(void);

#endif
