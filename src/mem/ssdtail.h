/* ssdtail.h -- tails of large objects in SSD extents under --ssd-dir.
 *
 * One data file (tails.dat) holds extents made of --write-io-chunk units;
 * a bitmap of units records which are in use (first fit, contiguous runs).
 * Writes use O_DIRECT in write-chunk units from an aligned bounce buffer;
 * reads are issued as --io-chunk sized io_uring reads, all submitted at
 * once and reaped together (the caller waits: a synchronous read).
 *
 * Safety: the directory holds a marker file (.goblin-pool, 23 bytes).
 * Goblin creates, uses and removes files only in a marked directory; a
 * non-empty unmarked one is refused. Tails do not survive a restart (the
 * key index is in RAM), so the data file is recreated at start.
 *
 * Pure module. One leaf mutex guards the extent map; the io_uring rings
 * are per thread. */
#ifndef GOBLIN_MEM_SSDTAIL_H
#define GOBLIN_MEM_SSDTAIL_H
#include <stddef.h>
#include <stdint.h>

#define SSDTAIL_MARKER ".goblin-pool"
#define SSDTAIL_MARKER_TEXT "goblin-ssd-pool-marker\n"

/* 0 ok; -1 with err set (unmarked non-empty dir, cannot create...). */
int ssdtail_open(const char *dir, size_t write_chunk, size_t read_chunk, char *err, size_t errlen);
int ssdtail_active(void);
void ssdtail_close(void);
/* Allocate an extent for n bytes and write them. 0 ok, -1 (errno set). */
int ssdtail_write(const char *p, size_t n, uint64_t *off, uint32_t *nchunks);
/* Read n bytes of the extent at off into dst. 0 ok, -1 on error. */
int ssdtail_read(uint64_t off, char *dst, size_t n);
void ssdtail_free(uint64_t off, uint32_t nchunks);

typedef struct ssdtail_stats {
    uint64_t chunks_used, chunks_total;
    uint64_t writes, write_bytes, write_errors;
    uint64_t reads, read_bytes, read_errors;
    int direct;      /* O_DIRECT accepted by the file system */
    int uring;       /* reads go through io_uring */
} ssdtail_stats;
void ssdtail_stats_get(ssdtail_stats *st);
/* Fault injection (tests): fail the next n writes / reads with EIO. */
void ssdtail_inject(int write_faults, int read_faults);
#endif
