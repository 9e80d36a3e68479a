/* ssdtail.c -- SSD extents for object tails (see ssdtail.h).
 *
 * Invariant: bit i of `used` is set exactly when write chunk i of the data
 * file belongs to a live tail. An extent is written completely before its
 * offset is handed out, so a failed write leaves no extent behind. */
#include "mem/ssdtail.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA_FILE "tails.dat"
#define ALIGN 4096
#define QD 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static char *dirpath;
static size_t wchunk, rchunk;
static uint64_t *used;
static uint64_t nbits;   /* chunks tracked (file size / wchunk, grows) */
static ssdtail_stats st;
static int inj_write, inj_read;
static int inj_submit; /* atomic: submissions of stream reads to refuse */

static _Thread_local struct io_uring ring;
static _Thread_local int ring_state; /* 0 untried, 1 ok, -1 unavailable */

static int dir_check(const char *dir, char *err, size_t errlen) {
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        if (errno != ENOENT || mkdir(dir, 0700) != 0) {
            snprintf(err, errlen, "--ssd-dir %s: %s", dir, strerror(errno));
            return -1;
        }
    } else if (!S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "--ssd-dir %s is not a directory", dir);
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, SSDTAIL_MARKER);
    if (access(path, F_OK) == 0) return 0;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "--ssd-dir %s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    int other = 0;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) other = 1;
    closedir(d);
    if (other) {
        snprintf(err, errlen,
                 "--ssd-dir %s is not empty and has no %s marker: refusing to use it (Goblin only writes in an "
                 "empty or Goblin-marked directory)",
                 dir, SSDTAIL_MARKER);
        return -1;
    }
    int mfd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (mfd < 0 || write(mfd, SSDTAIL_MARKER_TEXT, strlen(SSDTAIL_MARKER_TEXT)) != (ssize_t)strlen(SSDTAIL_MARKER_TEXT)) {
        snprintf(err, errlen, "--ssd-dir %s: cannot write the marker: %s", dir, strerror(errno));
        if (mfd >= 0) close(mfd);
        return -1;
    }
    fsync(mfd);
    close(mfd);
    return 0;
}

int ssdtail_open(const char *dir, size_t write_chunk, size_t read_chunk, char *err, size_t errlen) {
    if (write_chunk == 0 || write_chunk % ALIGN || read_chunk == 0 || read_chunk % ALIGN) {
        snprintf(err, errlen, "--write-io-chunk and --io-chunk must be positive multiples of %d", ALIGN);
        return -1;
    }
    if (dir_check(dir, err, errlen) != 0) return -1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, DATA_FILE);
    unlink(path); /* tails of a previous run are unreachable */
    st.direct = 1;
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    if (fd < 0 && errno == EINVAL) {
        st.direct = 0;
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    }
    if (fd < 0) {
        snprintf(err, errlen, "--ssd-dir %s: cannot create %s: %s", dir, DATA_FILE, strerror(errno));
        return -1;
    }
    dirpath = strdup(dir);
    wchunk = write_chunk;
    rchunk = read_chunk;
    return 0;
}

int ssdtail_active(void) { return __atomic_load_n(&fd, __ATOMIC_ACQUIRE) >= 0; }

void ssdtail_close(void) {
    pthread_mutex_lock(&lock);
    int f = fd;
    __atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
    if (f >= 0) {
        close(f);
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dirpath, DATA_FILE);
        unlink(path);
        free(dirpath);
        dirpath = NULL;
        free(used);
        used = NULL;
        nbits = 0;
    }
    pthread_mutex_unlock(&lock);
}

static int bit(uint64_t i) { return (used[i >> 6] >> (i & 63)) & 1; }
static void setbits(uint64_t from, uint32_t n, int v) {
    for (uint64_t i = from; i < from + n; i++) {
        if (v) used[i >> 6] |= 1ULL << (i & 63);
        else used[i >> 6] &= ~(1ULL << (i & 63));
    }
}

/* First fit run of n free chunks; grows the map. Caller holds lock. */
static int64_t extent_alloc(uint32_t n) {
    uint64_t run = 0;
    for (uint64_t i = 0; i < nbits; i++) {
        run = bit(i) ? 0 : run + 1;
        if (run == n) {
            setbits(i + 1 - n, n, 1);
            return (int64_t)(i + 1 - n);
        }
    }
    uint64_t start = nbits - run;
    uint64_t need = start + n;
    uint64_t words = (need + 63) / 64, have = (nbits + 63) / 64;
    if (words > have) {
        uint64_t nw = words > have * 2 ? words : have * 2;
        uint64_t *nu = realloc(used, nw * 8);
        if (!nu) return -1;
        memset(nu + have, 0, (nw - have) * 8);
        used = nu;
        nbits = nw * 64;
    } else if (need > nbits) {
        nbits = need;
    }
    if (nbits < need) nbits = need;
    setbits(start, n, 1);
    return (int64_t)start;
}

/* This thread's ssdtail_offer: the writer, and the bytes it wrote. */
static _Thread_local ssdtail_writer *offered;
static _Thread_local const char *offered_src;
static _Thread_local size_t offered_n;
static int offer_take(const char *p, size_t n, uint64_t *off, uint32_t *nchunks);

int ssdtail_write(const char *p, size_t n, uint64_t *off, uint32_t *nchunks) {
    if (offered && offer_take(p, n, off, nchunks)) return 0;
    uint32_t k = (uint32_t)((n + wchunk - 1) / wchunk);
    if (k == 0) k = 1;
    pthread_mutex_lock(&lock);
    int fault = inj_write > 0 ? inj_write-- : 0;
    int64_t c = extent_alloc(k);
    pthread_mutex_unlock(&lock);
    if (c < 0) {
        errno = ENOMEM;
        return -1;
    }
    /* A whole chunk at an aligned address is written from where it is;
     * the others (a last partial chunk, unaligned bytes) through buf. A
     * last partial chunk is written up to the next ALIGN boundary only,
     * padded with zeros: readers never read past it (ssdtail_read and the
     * streams read an extent's n bytes rounded up to ALIGN). */
    char *buf = NULL;
    size_t written = 0;
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < k; i++) {
        const char *src = p + (size_t)i * wchunk;
        size_t part = n - (size_t)i * wchunk < wchunk ? n - (size_t)i * wchunk : wchunk;
        if (part < wchunk || ((uintptr_t)src & (ALIGN - 1))) {
            if (!buf && !(buf = aligned_alloc(ALIGN, wchunk))) {
                rc = -1;
                break;
            }
            memcpy(buf, src, part);
            size_t span = (part + ALIGN - 1) / ALIGN * ALIGN;
            if (span > part) memset(buf + part, 0, span - part);
            part = span;
            src = buf;
        }
        off_t pos = (off_t)((uint64_t)(c + i) * wchunk);
        ssize_t w = fault ? (errno = EIO, -1) : pwrite(fd, src, part, pos);
        written += part;
        if (w != (ssize_t)part) {
            if (w >= 0) errno = ENOSPC;
            rc = -1;
        }
    }
    int saved = errno;
    free(buf);
    pthread_mutex_lock(&lock);
    if (rc == 0) {
        st.writes++;
        st.write_bytes += written;
        st.chunks_used += k;
    } else {
        st.write_errors++;
        setbits((uint64_t)c, k, 0);
    }
    pthread_mutex_unlock(&lock);
    if (rc != 0) {
        errno = saved;
        return -1;
    }
    *off = (uint64_t)c * wchunk;
    *nchunks = k;
    return 0;
}

static int ring_get(void) {
    if (ring_state == 0) ring_state = io_uring_queue_init(QD, &ring, 0) == 0 ? 1 : -1;
    return ring_state == 1;
}

int ssdtail_read(uint64_t off, char *dst, size_t n) {
    pthread_mutex_lock(&lock);
    int fault = inj_read > 0 ? inj_read-- : 0;
    pthread_mutex_unlock(&lock);
    size_t span = (n + ALIGN - 1) / ALIGN * ALIGN;
    size_t batch = rchunk * QD;
    char *buf = aligned_alloc(ALIGN, span < batch ? span : batch);
    int rc = (buf && !fault) ? 0 : -1;
    int uring = ring_get();
    for (size_t done = 0; rc == 0 && done < span;) {
        size_t this = span - done < batch ? span - done : batch;
        int nreq = 0;
        for (size_t o = 0; o < this; o += rchunk) {
            size_t len = this - o < rchunk ? this - o : rchunk;
            if (uring) {
                struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                io_uring_prep_read(sqe, fd, buf + o, (unsigned)len, off + done + o);
                io_uring_sqe_set_data64(sqe, len);
                nreq++;
            } else if (pread(fd, buf + o, len, (off_t)(off + done + o)) != (ssize_t)len) {
                rc = -1;
            }
        }
        if (uring && nreq) {
            if (io_uring_submit_and_wait(&ring, (unsigned)nreq) < 0) rc = -1;
            for (int i = 0; i < nreq; i++) {
                struct io_uring_cqe *cqe;
                if (io_uring_wait_cqe(&ring, &cqe) != 0) {
                    rc = -1;
                    break;
                }
                if (cqe->res < 0 || (uint64_t)cqe->res != io_uring_cqe_get_data64(cqe)) rc = -1;
                io_uring_cqe_seen(&ring, cqe);
            }
        }
        size_t copy = n - done < this ? n - done : this;
        if (rc == 0) memcpy(dst + done, buf, copy);
        done += this;
    }
    free(buf);
    pthread_mutex_lock(&lock);
    st.uring = uring;
    if (rc == 0) {
        st.reads++;
        st.read_bytes += n;
    } else {
        st.read_errors++;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---- Pins: extents that open streams read ------------------------------ */

typedef struct pin {
    uint64_t off;
    uint32_t nchunks;   /* set when the extent was freed while pinned */
    uint32_t refs;
} pin;
static pin *pins;       /* under lock; few (one per stream in flight) */
static size_t npins, cappins;

static pin *pin_find(uint64_t off) {
    for (size_t i = 0; i < npins; i++)
        if (pins[i].off == off) return &pins[i];
    return NULL;
}

static int pin_add(uint64_t off) {
    pin *p = pin_find(off);
    if (p) {
        p->refs++;
        return 0;
    }
    if (npins == cappins) {
        size_t nc = cappins ? cappins * 2 : 16;
        pin *np = realloc(pins, nc * sizeof(*np));
        if (!np) return -1;
        pins = np;
        cappins = nc;
    }
    pins[npins++] = (pin){off, 0, 1};
    return 0;
}

/* Caller holds lock. */
static void release_chunks(uint64_t off, uint32_t nchunks) {
    if (!used) return;
    setbits(off / wchunk, nchunks, 0);
    st.chunks_used -= nchunks;
}

static void pin_drop(uint64_t off) {
    pin *p = pin_find(off);
    assert(p && p->refs > 0);
    if (--p->refs) return;
    if (p->nchunks) release_chunks(p->off, p->nchunks);
    *p = pins[--npins];
}

void ssdtail_free(uint64_t off, uint32_t nchunks) {
    pthread_mutex_lock(&lock);
    pin *p = pin_find(off);
    if (p) {
        /* A stream still reads it: the chunks go when the last one closes. */
        p->nchunks = nchunks;
        st.pinned_frees++;
    } else {
        release_chunks(off, nchunks);
    }
    pthread_mutex_unlock(&lock);
}

/* ---- Streams ------------------------------------------------------------- */

enum { SL_FREE, SL_FLIGHT, SL_READY, SL_ERROR };

struct ssdtail_stream {
    uint64_t off;
    size_t n;                       /* bytes to hand out */
    uint64_t nchunks;               /* io-chunk reads it takes */
    uint64_t next_submit, next_give;
    int inflight, closed, failed, listed;
    int state[SSDTAIL_WINDOW];
    char *buf[SSDTAIL_WINDOW];      /* rchunk bytes each, ALIGN aligned */
};

/* A completion's user data: a stream and its slot (0..SSDTAIL_WINDOW-1),
 * or a writer with WRITE_TAG (structures are 8-byte aligned). */
#define WRITE_TAG 4u
_Static_assert(SSDTAIL_WINDOW <= WRITE_TAG, "stream slots and the write tag share the low bits");

struct ssdtail_writer {
    uint64_t off;        /* the extent */
    uint32_t nchunks;
    size_t n;
    size_t covered;      /* bytes [0, covered) of the tail were put */
    uint64_t want, got;  /* bytes written or submitted, and written */
    int inflight, failed, dropped;
    void *owned;         /* a dropped writer's caller buffer */
};
static void writer_free(ssdtail_writer *w);

#define AQD 64
static _Thread_local struct io_uring aring;
static _Thread_local int aring_state; /* 0 untried, 1 ok, -1 unavailable */
static _Thread_local int aring_fd = -1;
static _Thread_local int aring_inflight;
static _Thread_local ssdtail_stream **streams; /* open or draining, this thread */
static _Thread_local size_t nstreams, capstreams;

int ssdtail_async_fd(void) {
    if (aring_state == 0) {
        aring_state = -1;
        if (io_uring_queue_init(AQD, &aring, 0) == 0) {
            aring_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
            if (aring_fd >= 0 && io_uring_register_eventfd(&aring, aring_fd) == 0) {
                aring_state = 1;
            } else {
                if (aring_fd >= 0) close(aring_fd);
                aring_fd = -1;
                io_uring_queue_exit(&aring);
            }
        }
    }
    return aring_state == 1 ? aring_fd : -1;
}

static void stream_free(ssdtail_stream *s) {
    for (int i = 0; i < SSDTAIL_WINDOW; i++) free(s->buf[i]);
    pthread_mutex_lock(&lock);
    pin_drop(s->off);
    st.streams_open--;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < nstreams; i++)
        if (streams[i] == s) {
            streams[i] = streams[--nstreams];
            break;
        }
    free(s);
}

/* Hand the reads queued in the ring to the kernel. One it refuses (-EAGAIN:
 * short of memory; -EBUSY: completions to reap first) stays queued in the
 * ring and counted in flight, and no completion may come to submit it again.
 * The first ARING_RETRY_NOW refusals in a row write the ring's eventfd, so
 * the worker's loop calls ssdtail_async_reap at once, which submits what is
 * still queued; after those the reads wait for the next reap the worker
 * makes anyway (a completion, or its tick: cmd_stream_poll, every 100 ms),
 * so a kernel that keeps refusing does not spin the worker. */
#define ARING_RETRY_NOW 3
static _Thread_local int aring_refused; /* refusals in a row */

static void aring_submit(void) {
    int refuse = __atomic_load_n(&inj_submit, __ATOMIC_RELAXED) > 0 &&
                 __atomic_fetch_sub(&inj_submit, 1, __ATOMIC_RELAXED) > 0;
    int r = refuse ? -EAGAIN : io_uring_submit(&aring);
    if (r >= 0) {
        aring_refused = 0;
        return;
    }
    pthread_mutex_lock(&lock);
    st.submit_refusals++;
    pthread_mutex_unlock(&lock);
    if (++aring_refused > ARING_RETRY_NOW) return;
    uint64_t one = 1;
    if (write(aring_fd, &one, sizeof(one)) < 0) { /* counter saturated: already signalled */
    }
}

int ssdtail_async_stalled(void) { return aring_refused > ARING_RETRY_NOW; }

/* Submit reads while the window, the ring and the extent allow. */
static void stream_submit(ssdtail_stream *s) {
    int queued = 0;
    while (!s->closed && !s->failed && s->next_submit < s->nchunks &&
           s->next_submit < s->next_give + SSDTAIL_WINDOW && aring_inflight < AQD) {
        int slot = (int)(s->next_submit % SSDTAIL_WINDOW);
        assert(s->state[slot] == SL_FREE);
        if (!s->buf[slot] && !(s->buf[slot] = aligned_alloc(ALIGN, rchunk))) {
            s->failed = 1;
            break;
        }
        struct io_uring_sqe *sqe = io_uring_get_sqe(&aring);
        if (!sqe) break;
        uint64_t pos = s->next_submit * rchunk;
        size_t want = s->n - pos < rchunk ? s->n - pos : rchunk;
        size_t len = (want + ALIGN - 1) / ALIGN * ALIGN; /* O_DIRECT units */
        io_uring_prep_read(sqe, fd, s->buf[slot], (unsigned)len, s->off + pos);
        io_uring_sqe_set_data(sqe, (void *)((uintptr_t)s | (uintptr_t)slot));
        s->state[slot] = SL_FLIGHT;
        s->inflight++;
        aring_inflight++;
        s->next_submit++;
        queued++;
    }
    if (queued) aring_submit();
}

ssdtail_stream *ssdtail_stream_open(uint64_t off, size_t n) {
    if (fd < 0 || ssdtail_async_fd() < 0) return NULL;
    _Static_assert(SSDTAIL_WINDOW <= 8, "slot index lives in the pointer's low bits");
    ssdtail_stream *s = aligned_alloc(8, sizeof(*s));
    if (!s) return NULL;
    memset(s, 0, sizeof(*s));
    if (nstreams == capstreams) {
        size_t nc = capstreams ? capstreams * 2 : 16;
        ssdtail_stream **ns = realloc(streams, nc * sizeof(*ns));
        if (!ns) {
            free(s);
            return NULL;
        }
        streams = ns;
        capstreams = nc;
    }
    pthread_mutex_lock(&lock);
    int fault = inj_read > 0 ? inj_read-- : 0;
    int rc = pin_add(off);
    if (rc == 0) {
        st.streams++;
        st.streams_open++;
    }
    pthread_mutex_unlock(&lock);
    if (rc != 0) {
        free(s);
        return NULL;
    }
    s->off = off;
    s->n = n;
    s->nchunks = (n + rchunk - 1) / rchunk;
    s->listed = 1;
    streams[nstreams++] = s;
    if (fault) {
        s->failed = 1;
        pthread_mutex_lock(&lock);
        st.read_errors++;
        pthread_mutex_unlock(&lock);
    }
    stream_submit(s);
    return s;
}

/* Every completion the ring has: streams' chunks, writers' writes (a
 * dropped writer goes with its last one); then the reads still to submit. */
static void reap_cqes(void) {
    struct io_uring_cqe *cqe;
    uint64_t ok_bytes = 0, errors = 0, reads = 0;
    while (io_uring_peek_cqe(&aring, &cqe) == 0) {
        uintptr_t ud = (uintptr_t)io_uring_cqe_get_data(cqe);
        int res = cqe->res;
        if (ud & WRITE_TAG) {
            io_uring_cqe_seen(&aring, cqe);
            aring_inflight--;
            ssdtail_writer *w = (ssdtail_writer *)(ud & ~(uintptr_t)7);
            w->inflight--;
            if (res < 0) w->failed = 1;
            else w->got += (uint64_t)res;
            if (w->inflight == 0 && w->dropped) writer_free(w);
            continue;
        }
        ssdtail_stream *s = (ssdtail_stream *)(ud & ~(uintptr_t)7);
        int slot = (int)(ud & 7);
        io_uring_cqe_seen(&aring, cqe);
        aring_inflight--;
        s->inflight--;
        /* Which chunk this slot holds: the oldest submitted one in it. */
        uint64_t chunk = s->next_give + (uint64_t)((slot - (int)(s->next_give % SSDTAIL_WINDOW) + SSDTAIL_WINDOW) %
                                                   SSDTAIL_WINDOW);
        uint64_t pos = chunk * rchunk;
        size_t want = s->n - pos < rchunk ? s->n - pos : rchunk;
        if (res < 0 || (size_t)res < want) {
            s->state[slot] = SL_ERROR;
            if (!s->failed) errors++;
            s->failed = 1;
        } else {
            s->state[slot] = SL_READY;
            ok_bytes += want;
            reads++;
        }
        if (s->closed && s->inflight == 0) stream_free(s);
    }
    if (ok_bytes || errors) {
        pthread_mutex_lock(&lock);
        st.read_bytes += ok_bytes;
        st.reads += reads;
        st.read_errors += errors;
        st.uring = 1;
        pthread_mutex_unlock(&lock);
    }
    if (io_uring_sq_ready(&aring)) aring_submit();
    for (size_t i = 0; i < nstreams; i++) stream_submit(streams[i]);
}

void ssdtail_async_reap(void) {
    if (aring_state != 1) return;
    uint64_t v;
    if (read(aring_fd, &v, sizeof(v)) < 0) { /* nothing signalled: fine */
    }
    reap_cqes();
}

long ssdtail_stream_peek(ssdtail_stream *s, const char **p) {
    if (s->failed) return -1;
    if (s->next_give >= s->nchunks) return 0;
    int slot = (int)(s->next_give % SSDTAIL_WINDOW);
    if (s->state[slot] != SL_READY) return 0;
    uint64_t pos = s->next_give * rchunk;
    *p = s->buf[slot];
    return (long)(s->n - pos < rchunk ? s->n - pos : rchunk);
}

void ssdtail_stream_consume(ssdtail_stream *s) {
    int slot = (int)(s->next_give % SSDTAIL_WINDOW);
    assert(s->state[slot] == SL_READY);
    s->state[slot] = SL_FREE;
    s->next_give++;
    stream_submit(s);
}

int ssdtail_stream_done(const ssdtail_stream *s) { return !s->failed && s->next_give >= s->nchunks; }

void ssdtail_stream_close(ssdtail_stream *s) {
    s->closed = 1;
    if (s->inflight == 0) stream_free(s);
}

/* ---- Writers --------------------------------------------------------------- */

ssdtail_writer *ssdtail_writer_open(size_t n) {
    if (fd < 0 || n == 0 || ssdtail_async_fd() < 0) return NULL;
    ssdtail_writer *w = aligned_alloc(8, sizeof(*w));
    if (!w) return NULL;
    memset(w, 0, sizeof(*w));
    uint32_t k = (uint32_t)((n + wchunk - 1) / wchunk);
    pthread_mutex_lock(&lock);
    int fault = inj_write > 0 ? inj_write-- : 0;
    int64_t c = fault ? -1 : extent_alloc(k);
    if (fault) st.write_errors++;
    pthread_mutex_unlock(&lock);
    if (c < 0) {
        free(w);
        return NULL;
    }
    w->off = (uint64_t)c * wchunk;
    w->nchunks = k;
    w->n = n;
    return w;
}

int ssdtail_writer_put(ssdtail_writer *w, size_t pos, size_t len, char *src) {
    assert(!w->dropped && pos + len <= w->n);
    if (w->failed) return -1;
    if (((uintptr_t)src | pos) & (ALIGN - 1) || pos != w->covered || (pos + len < w->n && len % ALIGN)) {
        w->failed = 1;
        return -1;
    }
    w->covered = pos + len;
    size_t span = (len + ALIGN - 1) / ALIGN * ALIGN;
    if (span > len) memset(src + len, 0, span - len);
    struct io_uring_sqe *sqe = aring_inflight < AQD ? io_uring_get_sqe(&aring) : NULL;
    if (!sqe) {
        if (pwrite(fd, src, span, (off_t)(w->off + pos)) != (ssize_t)span) {
            w->failed = 1;
            return -1;
        }
        w->want += span;
        w->got += span;
        return 0;
    }
    io_uring_prep_write(sqe, fd, src, (unsigned)span, w->off + pos);
    io_uring_sqe_set_data(sqe, (void *)((uintptr_t)w | WRITE_TAG));
    w->inflight++;
    w->want += span;
    aring_inflight++;
    aring_submit();
    return 0;
}

static int writer_ok(const ssdtail_writer *w) {
    return w->inflight == 0 && !w->failed && w->got == w->want && w->covered == w->n;
}

int ssdtail_writer_finish(ssdtail_writer *w) {
    /* The other completions that come meanwhile are reaped as the
     * worker's loop would (without its eventfd: the loop still looks). */
    while (w->inflight > 0) {
        struct io_uring_cqe *cqe;
        int r = io_uring_sq_ready(&aring) ? io_uring_submit_and_wait(&aring, 1) : io_uring_wait_cqe(&aring, &cqe);
        if (r < 0 && r != -EINTR && r != -EBUSY) break; /* cannot wait: the store writes the tail itself */
        reap_cqes();
    }
    int ok = writer_ok(w);
    if (!ok) {
        pthread_mutex_lock(&lock);
        st.write_errors++;
        pthread_mutex_unlock(&lock);
    }
    return ok;
}

static void writer_free(ssdtail_writer *w) {
    pthread_mutex_lock(&lock);
    setbits(w->off / wchunk, w->nchunks, 0);
    pthread_mutex_unlock(&lock);
    free(w->owned);
    free(w);
}

void ssdtail_writer_drop(ssdtail_writer *w, void *buf) {
    if (!w) {
        free(buf);
        return;
    }
    w->owned = buf;
    if (w->inflight == 0) writer_free(w);
    else w->dropped = 1;
}

void ssdtail_offer(ssdtail_writer *w, const char *src, size_t n) {
    assert(!offered && writer_ok(w) && n == w->n);
    offered = w;
    offered_src = src;
    offered_n = n;
}

static int offer_take(const char *p, size_t n, uint64_t *off, uint32_t *nchunks) {
    ssdtail_writer *w = offered;
    if (p != offered_src || n != offered_n) return 0;
    *off = w->off;
    *nchunks = w->nchunks;
    pthread_mutex_lock(&lock);
    st.writes++;
    st.write_bytes += w->got;
    st.chunks_used += w->nchunks;
    pthread_mutex_unlock(&lock);
    free(w);
    offered = NULL;
    return 1;
}

int ssdtail_offer_end(void) {
    int taken = offered == NULL;
    offered = NULL;
    return taken;
}

void ssdtail_thread_exit(void) {
    for (size_t i = nstreams; i-- > 0;) streams[i]->closed = 1;
    if (aring_state == 1 && io_uring_sq_ready(&aring)) io_uring_submit(&aring);
    /* Closed streams and dropped writers go with their last completion;
     * a writer still open is its owner's to drop. */
    while (aring_state == 1 && aring_inflight > 0) {
        struct io_uring_cqe *cqe;
        if (io_uring_wait_cqe(&aring, &cqe) != 0) break;
        reap_cqes();
    }
    while (nstreams) stream_free(streams[nstreams - 1]);
    free(streams);
    streams = NULL;
    capstreams = 0;
    if (aring_state == 1) {
        io_uring_queue_exit(&aring);
        close(aring_fd);
        aring_fd = -1;
    }
    aring_state = 0;
    if (ring_state == 1) io_uring_queue_exit(&ring);
    ring_state = 0;
}

void ssdtail_stats_get(ssdtail_stats *out) {
    pthread_mutex_lock(&lock);
    *out = st;
    out->chunks_total = nbits;
    pthread_mutex_unlock(&lock);
}

void ssdtail_inject(int write_faults, int read_faults) {
    pthread_mutex_lock(&lock);
    inj_write = write_faults;
    inj_read = read_faults;
    pthread_mutex_unlock(&lock);
}

void ssdtail_inject_submit(int refusals) { __atomic_store_n(&inj_submit, refusals, __ATOMIC_RELAXED); }
