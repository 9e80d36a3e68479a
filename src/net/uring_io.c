/* uring_io.c -- a worker's socket reads and writes, many per system call
 * (--net async).
 *
 * The connections of a loop iteration that have bytes to read, and then
 * those with output to write, are served as one batch each: every recv or
 * send of the batch goes on the worker's io_uring ring and one
 * io_uring_enter submits them all and waits for all their completions.
 * Each operation carries MSG_DONTWAIT, so the kernel performs it inline and
 * completes it with -EAGAIN rather than parking it on the socket's wait
 * queue: when nuring_run returns, nothing is in flight. That is the
 * invariant the rest of net/ relies on: a query or output buffer is never
 * in the kernel's hands while the protocol and reply code run (they grow,
 * move and free those buffers freely), and a connection can be freed at
 * any point between two batches. What a batch saves is the system call per
 * connection and direction: with 50 busy connections an iteration makes
 * three calls (epoll_wait, one enter for the reads, one for the writes)
 * where it made a hundred and one.
 *
 * Readiness still comes from the worker's event loop (libevent on epoll),
 * which keeps the listeners, timers, posted jobs and TLS connections.
 * liburing (Debian's liburing-dev) is used for the ring, as for the SSD
 * tail reads. The ring belongs to one worker thread. */
#include "net/internal.h"

#include <assert.h>
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"

struct nuring {
    struct io_uring ring;
    unsigned entries;
};

nuring *nuring_new(unsigned entries, char *err, size_t errlen) {
    nuring *r = calloc(1, sizeof(nuring));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int rc = io_uring_queue_init(entries, &r->ring, 0);
    if (rc < 0) {
        snprintf(err, errlen, "io_uring_queue_init: %s", strerror(-rc));
        free(r);
        return NULL;
    }
    r->entries = entries;
    return r;
}

void nuring_free(nuring *r) {
    if (!r) return;
    io_uring_queue_exit(&r->ring);
    free(r);
}

/* Submit ops[0..n) (n <= the ring's entries) and wait for every
 * completion. */
static void run_some(nuring *r, nuring_op *ops, int n) {
    for (int i = 0; i < n; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
        assert(sqe); /* the ring is empty between batches and n fits */
        if (ops[i].send)
            io_uring_prep_send(sqe, ops[i].fd, ops[i].buf, ops[i].len, MSG_DONTWAIT | MSG_NOSIGNAL);
        else
            io_uring_prep_recv(sqe, ops[i].fd, ops[i].buf, ops[i].len, MSG_DONTWAIT);
        io_uring_sqe_set_data64(sqe, (uint64_t)i);
        ops[i].res = -EINPROGRESS;
    }
    /* Submit, then reap until all n completed. EINTR and the ring's own
     * back-pressure (EAGAIN, EBUSY) are waited out; any other failure
     * would leave operations queued on buffers the caller is about to
     * reuse, so the process stops rather than corrupt them. */
    int left = n;
    while (left > 0) {
        int rc = io_uring_submit_and_wait(&r->ring, (unsigned)left);
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
            log_warn("--net async: io_uring_submit_and_wait failed: %s", strerror(-rc));
            abort();
        }
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&r->ring, head, cqe) {
            uint64_t i = io_uring_cqe_get_data64(cqe);
            assert(i < (uint64_t)n);
            ops[i].res = cqe->res;
            seen++;
        }
        io_uring_cq_advance(&r->ring, seen);
        left -= (int)seen;
    }
}

/* The most one operation moves: the ring's length field and its result
 * are 32 bits; what is left goes with the next batch. */
#define NURING_OP_MAX ((size_t)1 << 30)

void nuring_run(nuring *r, nuring_op *ops, int n) {
    for (int i = 0; i < n; i++)
        if (ops[i].len > NURING_OP_MAX) ops[i].len = NURING_OP_MAX;
    if (n == 1) {
        /* One operation: its own system call costs less than a ring trip. */
        ssize_t got = ops[0].send ? send(ops[0].fd, ops[0].buf, ops[0].len, MSG_DONTWAIT | MSG_NOSIGNAL)
                                  : recv(ops[0].fd, ops[0].buf, ops[0].len, MSG_DONTWAIT);
        ops[0].res = got < 0 ? -errno : (int)got;
        return;
    }
    for (int at = 0; at < n; at += (int)r->entries) {
        int k = n - at < (int)r->entries ? n - at : (int)r->entries;
        run_some(r, ops + at, k);
    }
}
