/* ssdtail.h -- tails of large objects in SSD extents under --ssd-dir.
 *
 * One data file (tails.dat) holds extents made of --write-io-chunk units;
 * a bitmap of units records which are in use (first fit, contiguous runs).
 * Writes use O_DIRECT in write-chunk units, from the caller's bytes where
 * they are aligned, else from an aligned bounce buffer;
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

/* ---- Streamed reads ----
 * A stream reads one extent in --io-chunk units through the calling
 * thread's own asynchronous ring (separate from the synchronous one), at
 * most SSDTAIL_WINDOW chunks ahead of the consumer; chunks complete in any
 * order and are handed out in order. The thread's event loop watches
 * ssdtail_async_fd() and calls ssdtail_async_reap() when it is readable.
 * An open stream pins its extent: ssdtail_free() of a pinned extent is
 * deferred until the last stream on it closes, so the bytes a stream reads
 * are never overwritten under it. Streams belong to the thread that opened
 * them. */
#define SSDTAIL_WINDOW 4
typedef struct ssdtail_stream ssdtail_stream;
/* The eventfd of this thread's ring (created on first use); -1 when
 * io_uring is unavailable (then callers read synchronously). */
int ssdtail_async_fd(void);
/* Open a stream over n bytes of the extent at off and start its reads.
 * NULL on no memory or without an asynchronous ring. */
ssdtail_stream *ssdtail_stream_open(uint64_t off, size_t n);
/* Reap this thread's completions and submit further reads. */
void ssdtail_async_reap(void);
/* Whether this thread has reads the kernel refused more times in a row
 * than are retried at once: they wait for a reap (the worker's tick). */
int ssdtail_async_stalled(void);
/* The next in-order bytes: >0 with *p set (valid until consume), 0 when
 * nothing is ready yet or everything was handed out, -1 on a read error. */
long ssdtail_stream_peek(ssdtail_stream *s, const char **p);
void ssdtail_stream_consume(ssdtail_stream *s);
/* Every byte handed out and consumed. */
int ssdtail_stream_done(const ssdtail_stream *s);
/* Close (at any point); reads in flight finish before the memory goes. */
void ssdtail_stream_close(ssdtail_stream *s);
/* The calling thread is done with I/O: wait for its reads in flight, free
 * its streams and close its rings. */
void ssdtail_thread_exit(void);

typedef struct ssdtail_stats {
    uint64_t chunks_used, chunks_total;
    uint64_t writes, write_bytes, write_errors;
    uint64_t reads, read_bytes, read_errors;
    int direct;      /* O_DIRECT accepted by the file system */
    int uring;       /* reads go through io_uring */
    uint64_t streams, streams_open, pinned_frees;
    uint64_t submit_refusals; /* submissions of stream reads the kernel refused */
} ssdtail_stats;
void ssdtail_stats_get(ssdtail_stats *st);
/* ---- Tails written while their bytes arrive ----
 * A writer takes an extent for n bytes at once (in --write-io-chunk
 * units) and writes it piece by piece, in order, through the calling
 * thread's asynchronous ring as the caller's bytes come in; a piece the
 * ring has no room for is written synchronously. After the last piece,
 * ssdtail_writer_finish waits for the writes still in flight (by then,
 * usually the last one or two); the extent then goes to a value through
 * ssdtail_offer (the store's ssdtail_write of exactly those bytes takes
 * it instead of writing them) or back with ssdtail_writer_drop. The bytes
 * given to put stay the caller's and must stay unchanged until the writes
 * complete; a caller that goes earlier hands its buffer to
 * ssdtail_writer_drop, which frees it after them. Writers belong to the
 * thread that opened them; their completions are reaped by
 * ssdtail_async_reap (and _finish). */
typedef struct ssdtail_writer ssdtail_writer;
/* NULL: no extent (no room, an injected fault) or no asynchronous ring. */
ssdtail_writer *ssdtail_writer_open(size_t n);
/* Bytes [pos, pos + len) of the tail from src: in order (pos is where
 * the last put ended), src and pos ALIGN (4 KiB) aligned, len too unless
 * they end the tail; then the write goes up to the next 4 KiB boundary,
 * and this zeroes the bytes past len (src has room for them). 0 submitted
 * or written, -1 failed (the writer is failed: it ends not ok). */
int ssdtail_writer_put(ssdtail_writer *w, size_t pos, size_t len, char *src);
/* Every byte was put: wait for the writes in flight. 1 every byte is
 * written, 0 not (the writer is still the caller's to drop). */
int ssdtail_writer_finish(ssdtail_writer *w);
/* Give the extent up (and free buf, which may be NULL), now or once the
 * writes in flight complete; w is gone for the caller. */
void ssdtail_writer_drop(ssdtail_writer *w, void *buf);
/* The next ssdtail_write on this thread of exactly n bytes at src takes
 * w's extent (w finished, ok) instead of writing. _end after that write,
 * whether it happened or not: 1 w was taken (it is gone), 0 it is still
 * the caller's. */
void ssdtail_offer(ssdtail_writer *w, const char *src, size_t n);
int ssdtail_offer_end(void);

/* Fault injection (tests): fail the next n writes / reads with EIO. */
void ssdtail_inject(int write_faults, int read_faults);
/* Refuse the next n submissions of stream reads as the kernel may (-EAGAIN),
 * leaving the reads queued in the ring. */
void ssdtail_inject_submit(int refusals);
#endif
