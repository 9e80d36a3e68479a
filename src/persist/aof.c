/* aof.c -- the append-only file: the write-stream sink, the writer thread
 * with its fsync policies and group commit, start-up (load, then create or
 * reopen the files), BGREWRITEAOF and INFO (see aof.h).
 *
 * The sink runs on the producer's thread under the stream lock: it copies
 * the bytes into `pend` and advances `recv_off` (the AOF offset: bytes the
 * sink has received), and wakes the writer (a worker thread: once, at the
 * end of its loop iteration, aof_batch_end). The writer thread takes the
 * whole of `pend` at once, writes it to the current incr file, fsyncs when
 * the policy says so, then publishes `written_off` / `synced_off` and wakes
 * the waiters. So any number of records that arrived while one write+fsync
 * ran go out in the next single write+fsync (group commit). Invariant: synced_off <=
 * written_off <= recv_off, and bytes reach the file in stream order.
 *
 * Gathering (appendfsync always): the clients a write+fsync acknowledges
 * send their next writes a round trip later, while the next write+fsync
 * would already be running with only what came in meanwhile. Left alone,
 * the clients split into two groups that take turns, each fsync carrying
 * half of them (Redis's beforeSleep fsync does the same). So after each
 * fsync the writer waits for about as many bytes as were pending plus the
 * ones it just acknowledged, at most half the last fsync's duration (and
 * never more than GATHER_MAX_US): one group, one fsync per round trip.
 * With one client, or when the writes stop, the wait ends at once or after
 * that bound; under everysec and no nothing waits. Nor after an fsync
 * shorter than GATHER_MIN_FSYNC_US: a disk that flushes that fast leaves
 * less than the clients' round trip to gain, and the wait would only add
 * to it.
 *
 * Lock order: stream lock -> mu (the sink); man_mu (the manifest) is taken
 * before the stream lock, never under mu. The writer thread never takes
 * the stream lock.
 *
 * BGREWRITEAOF: under the keyspace write lock, the writer is drained and
 * switched to a new incr file (manifest written), then a child forks and
 * writes the new base as an RDB to a temp file; when it succeeds, the
 * persistence thread renames it into place, writes the manifest (new base,
 * the incr files opened since the rewrite started) and deletes the files
 * that became history. A failed rewrite leaves the manifest as it was plus
 * the new incr file, so nothing is lost either way. */
#include "persist/aof.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/memusage.h"
#include "mem/hugetlb.h"
#include "persist/aof_internal.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "persist/wstream.h"
#include "base/config.h"
#include "base/log.h"
#include "base/process.h"

/* ---- settings --------------------------------------------------------------- */

static int fsync_mode = AOF_FSYNC_EVERYSEC; /* atomics: follows CONFIG SET */
static int on;                              /* the writer runs */
/* appendonly turned on at run time: the incr file being written is a temp
 * file outside the manifest until the first rewrite has written a base
 * (Redis's AOF_WAIT_REWRITE). man_mu; read relaxed for INFO. */
static int wait_rw;
static int live;                            /* start-up is over */
static aof_replay_fn *replay;

/* Bound to their directives (config_bind_*), so the code that runs inside
 * CONFIG SET (under the config lock) reads them without that lock. */
static int use_preamble = 1;                /* aof-use-rdb-preamble */
static int load_truncated = 1;              /* aof-load-truncated */
static int rw_incr_fsync = 1;               /* aof-rewrite-incremental-fsync */
static int no_fsync_on_rw;                  /* no-appendfsync-on-rewrite */
static int ts_enabled;                      /* aof-timestamp-enabled */
static int auto_perc = 100;                 /* auto-aof-rewrite-percentage */
static int no_auto_gc;                      /* aof-disable-auto-gc */
static long long auto_min = 64LL << 20;     /* auto-aof-rewrite-min-size */
static char *dirname_, *fname_;             /* appenddirname, appendfilename (start-up only) */

void aof_set_replay(aof_replay_fn *fn) { replay = fn; }

static int setting(const int *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }

static void fsync_apply(const char *v) {
    int m = !strcmp(v, "always") ? AOF_FSYNC_ALWAYS : !strcmp(v, "no") ? AOF_FSYNC_NO : AOF_FSYNC_EVERYSEC;
    __atomic_store_n(&fsync_mode, m, __ATOMIC_RELAXED);
}
static const config_hook fsync_hook = {NULL, fsync_apply};

static int turn_on(char *err, size_t errlen);
static void turn_off(const char *why);

/* CONFIG SET appendonly: runs under the config lock and the keyspace write
 * lock (CONFIG SET takes both), so no write is applied while the AOF
 * starts or stops. */
static int appendonly_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    (void)norm;
    (void)normlen;
    if (!__atomic_load_n(&live, __ATOMIC_ACQUIRE)) {
        if (!persist_loading()) return 0; /* the config file, before start-up reads it */
        snprintf(err, errlen, "appendonly can't be changed while the dataset is loading");
        return -1;
    }
    int want = strcmp(v, "yes") == 0;
    if (want == __atomic_load_n(&on, __ATOMIC_RELAXED)) return 0;
    if (!want) {
        turn_off("by CONFIG SET");
        return 0;
    }
    char why[600];
    if (turn_on(why, sizeof(why)) == 0) return 0;
    log_warn("%s", why);
    snprintf(err, errlen, "Unable to turn on AOF. Check server logs.");
    return -1;
}
static const config_hook appendonly_hook = {appendonly_check, NULL};

static void auto_gc_apply(const char *v); /* below, with the manifest */
static const config_hook auto_gc_hook = {NULL, auto_gc_apply};

void aof_config_register(void) {
    config_register_hook("appendfsync", &fsync_hook);
    config_register_hook("aof-disable-auto-gc", &auto_gc_hook);
    config_register_hook("appendonly", &appendonly_hook);
    if (config_bind_int("aof-use-rdb-preamble", &use_preamble) || config_bind_int("aof-load-truncated", &load_truncated) ||
        config_bind_int("aof-rewrite-incremental-fsync", &rw_incr_fsync) ||
        config_bind_int("no-appendfsync-on-rewrite", &no_fsync_on_rw) ||
        config_bind_int("aof-timestamp-enabled", &ts_enabled) ||
        config_bind_int("auto-aof-rewrite-percentage", &auto_perc) ||
        config_bind_ll("auto-aof-rewrite-min-size", &auto_min) || config_bind_int("aof-disable-auto-gc", &no_auto_gc) ||
        config_bind_string("appenddirname", &dirname_) ||
        config_bind_string("appendfilename", &fname_))
        abort(); /* the table lost a row */
}

int aof_enabled(void) {
    char *v = config_value("appendonly");
    int y = v && strcmp(v, "yes") == 0;
    free(v);
    return y;
}

void aof_set_live(void) { __atomic_store_n(&live, 1, __ATOMIC_RELEASE); }

int aof_first_base_pending(void) { return __atomic_load_n(&wait_rw, __ATOMIC_RELAXED); }

/* ---- the writer ------------------------------------------------------------------ */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_work = PTHREAD_COND_INITIALIZER; /* the writer waits */
static pthread_cond_t cv_done = PTHREAD_COND_INITIALIZER; /* drain_locked waits for a write */
static char *pend;
static size_t plen, pcap;
static size_t pcap_pub, wcap_pub; /* atomics: pcap and the writer's wcap */
static uint64_t recv_off, written_off, synced_off;
static int wfd = -1;               /* the current incr file */
static int busy;                   /* the writer is between take and publish */
static int stop_req;
static int write_ok = 1, write_errno; /* atomics */
static int64_t last_fsync_ms, last_err_ms;
static uint64_t cur_size, base_size, incr_size; /* atomics: INFO */
static pthread_t writer_tid;
static _Thread_local uint64_t tl_need;
static _Thread_local int tl_batching, tl_kick;

/* Pending and write buffers a burst made bigger than this are given back
 * once written, as Redis frees its AOF buffer: kept, they would count
 * against maxmemory for good. */
#define AOF_BUF_KEEP (64 * 1024)

/* The longest a write+fsync waits for the writes of the clients the last
 * one acknowledged (see Gathering above). */
#define GATHER_MAX_US 2000
#define GATHER_MIN_FSYNC_US 1000

static int64_t mono_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int64_t mono_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Wait on cv (mu held) for at most us microseconds. */
static void cond_wait_us(pthread_cond_t *cv, int64_t us) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += us / 1000000;
    ts.tv_nsec += (us % 1000000) * 1000;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cv, &mu, &ts);
}

/* Room for n more pending bytes (mu held). */
static void pend_reserve(size_t n) {
    if (plen + n <= pcap) return;
    size_t nc = pcap ? pcap : 16384;
    while (nc < plen + n) nc *= 2;
    char *np = realloc(pend, nc);
    if (!np) abort();
    pend = np;
    pcap = nc;
    __atomic_store_n(&pcap_pub, pcap, __ATOMIC_RELAXED);
}

/* Gathering: the writer waits for gather_want pending bytes until
 * gather_until (mono_us); producers wake it only once that many are
 * there (0: at once). mu. */
static size_t gather_want;
static int64_t gather_until;

static int64_t ts_last; /* unix second of the last #TS annotation (mu) */

/* One record of the stream (with its SELECT, if any). Under
 * aof-timestamp-enabled a "#TS:<unix time>" annotation line goes before the
 * first record of every second, as Redis 7.0 writes it; loaders skip it. */
static void sink_write(void *arg, const char *p, size_t n) {
    (void)arg;
    pthread_mutex_lock(&mu);
    if (setting(&ts_enabled)) {
        int64_t now = (int64_t)time(NULL);
        if (now > ts_last) {
            char ts[40];
            int k = snprintf(ts, sizeof(ts), "#TS:%lld\r\n", (long long)now);
            pend_reserve((size_t)k);
            memcpy(pend + plen, ts, (size_t)k);
            plen += (size_t)k;
            recv_off += (size_t)k;
            ts_last = now;
        }
    }
    pend_reserve(n);
    memcpy(pend + plen, p, n);
    plen += n;
    recv_off += n;
    tl_need = recv_off;
    if (tl_batching) tl_kick = 1;
    else if (plen >= gather_want) pthread_cond_signal(&cv_work);
    pthread_mutex_unlock(&mu);
}

static const wstream_sink sink = {sink_write, NULL, 0}; /* no replica-only records */

void aof_batch_begin(void) { tl_batching = 1; }

void aof_batch_end(void) {
    if (!tl_kick) return;
    tl_kick = 0;
    pthread_mutex_lock(&mu);
    if (plen >= gather_want) pthread_cond_signal(&cv_work);
    pthread_mutex_unlock(&mu);
}

static uint64_t synced_pub;              /* atomics: synced_off, for readers without mu */
static void (*sync_notify)(void);        /* set once at start-up */

void aof_set_sync_notify(void (*fn)(void)) { __atomic_store_n(&sync_notify, fn, __ATOMIC_RELEASE); }

uint64_t aof_durable_take(void) {
    uint64_t need = aof_durable_needed();
    tl_need = 0;
    return need;
}

int aof_durable_state(uint64_t offset) {
    if (__atomic_load_n(&synced_pub, __ATOMIC_ACQUIRE) >= offset) return 1;
    if (!__atomic_load_n(&on, __ATOMIC_RELAXED) || !__atomic_load_n(&write_ok, __ATOMIC_RELAXED)) {
        static int64_t last_log;
        int64_t t = mono_ms();
        if (t - __atomic_load_n(&last_log, __ATOMIC_RELAXED) > 10000) {
            __atomic_store_n(&last_log, t, __ATOMIC_RELAXED);
            log_warn("AOF write failed with appendfsync always: closing the connections whose writes are not on "
                     "disk");
        }
        return -1;
    }
    return 0;
}

uint64_t aof_durable_needed(void) {
    if (!tl_need) return 0;
    if (__atomic_load_n(&fsync_mode, __ATOMIC_RELAXED) != AOF_FSYNC_ALWAYS || !__atomic_load_n(&on, __ATOMIC_RELAXED)) {
        tl_need = 0;
        return 0;
    }
    return tl_need;
}

size_t aof_buffer_bytes(void) {
    return __atomic_load_n(&pcap_pub, __ATOMIC_RELAXED) + __atomic_load_n(&wcap_pub, __ATOMIC_RELAXED);
}

int aof_write_error(char *buf, size_t n) {
    if (!__atomic_load_n(&on, __ATOMIC_RELAXED) || __atomic_load_n(&write_ok, __ATOMIC_RELAXED)) return 0;
    snprintf(buf, n, "MISCONF Errors writing to the AOF file: %s",
             strerror(__atomic_load_n(&write_errno, __ATOMIC_RELAXED)));
    return 1;
}

/* Write n bytes at the end of fd (size: the file's size before). Returns 0,
 * or -1 with errno and *done the bytes that stay in the file. */
static int write_all(int fd, const char *p, size_t n, uint64_t size, size_t *done) {
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, p + off, n - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        int e = w < 0 ? errno : ENOSPC;
        if (w == 0 || off) log_warn("Short write while writing to the AOF file: (nwritten=%lld, expected=%lld)",
                                    (long long)off, (long long)n);
        /* Take the partial record back out; when that fails, keep it. */
        if (off && ftruncate(fd, (off_t)size) != 0) {
            log_warn("Could not remove short write from the append-only file. Redis may refuse to load the AOF the "
                     "next time it starts.  ftruncate: %s",
                     strerror(errno));
            *done = off;
        } else {
            *done = 0;
        }
        errno = e;
        return -1;
    }
    *done = n;
    return 0;
}

/* mu held. The writer retries a second after the last failure. */
static void set_error(int e) {
    static int64_t last_log;
    int64_t t = mono_ms();
    last_err_ms = t;
    if (__atomic_load_n(&write_ok, __ATOMIC_RELAXED) || t - last_log > 30000) {
        log_warn("Error writing to the AOF file: %s", strerror(e));
        last_log = t;
    }
    __atomic_store_n(&write_errno, e, __ATOMIC_RELAXED);
    __atomic_store_n(&write_ok, 0, __ATOMIC_RELAXED);
}

static int rw_running; /* atomics: a rewrite child exists (mirrors rw_pid) */

/* DEBUG AOF-FAULT: the next writes / fsyncs of the writer fail with EIO. */
static int fault_writes, fault_fsyncs;

static int flush_sleep_us; /* atomics: aof_set_flush_sleep */
void aof_set_flush_sleep(int us) { __atomic_store_n(&flush_sleep_us, us, __ATOMIC_RELAXED); }

void aof_inject_faults(int writes, int fsyncs) {
    __atomic_store_n(&fault_writes, writes, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_fsyncs, fsyncs, __ATOMIC_RELAXED);
}

static int take_fault(int *counter) {
    int v = __atomic_load_n(counter, __ATOMIC_RELAXED);
    while (v > 0 && !__atomic_compare_exchange_n(counter, &v, v - 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return v > 0;
}

/* A fork child (BGSAVE or rewrite) is writing a snapshot. */
static int child_running(void) {
    return __atomic_load_n(&rw_running, __ATOMIC_RELAXED) || persist_bgsave_in_progress();
}

static void *writer_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-aof");
    char *wbuf = NULL;
    size_t wcap = 0;
    /* The gathering waits are under 2 ms: 1 us of timer slack, not 50. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    pthread_mutex_lock(&mu);
    for (;;) {
        int mode = __atomic_load_n(&fsync_mode, __ATOMIC_RELAXED);
        int ok = __atomic_load_n(&write_ok, __ATOMIC_RELAXED);
        int64_t now = mono_ms();
        int fsync_due = mode == AOF_FSYNC_EVERYSEC && written_off > synced_off && now - last_fsync_ms >= 1000;
        int retry_due = !ok && now - last_err_ms >= 1000;
        /* After a failed fsync nothing may be pending, but the written
         * bytes still need one (appendfsync always). */
        int resync_due = retry_due && written_off > synced_off;
        if (stop_req && !plen) break;
        if (gather_want && mode == AOF_FSYNC_ALWAYS && ok && !stop_req && plen < gather_want) {
            int64_t left = gather_until - mono_us();
            if (left > 0) {
                cond_wait_us(&cv_work, left);
                continue;
            }
        }
        gather_want = 0;
        if ((!plen || (!ok && !retry_due && !stop_req)) && !fsync_due && !resync_due) {
            cond_wait_us(&cv_work, 250000);
            continue;
        }
        /* Take everything pending: one write (and one fsync) for all. */
        size_t n = plen;
        if (n > wcap) {
            free(wbuf);
            wcap = pcap;
            wbuf = malloc(wcap);
            __atomic_store_n(&wcap_pub, wcap, __ATOMIC_RELAXED);
            if (!wbuf) abort();
        }
        if (n) memcpy(wbuf, pend, n); /* pend and wbuf may be NULL (given back) */
        plen = 0;
        uint64_t target = recv_off;
        int fd = wfd;
        busy = 1;
        uint64_t size = __atomic_load_n(&incr_size, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&mu);

        size_t done = 0;
        int rc, e;
        int64_t fsync_t0 = 0;
        int nap = __atomic_load_n(&flush_sleep_us, __ATOMIC_RELAXED);
        if (n && nap > 0) usleep((useconds_t)nap); /* DEBUG AOF-FLUSH-SLEEP */
        if (n && take_fault(&fault_writes)) {
            rc = -1;
            e = EIO;
        } else {
            rc = n ? write_all(fd, wbuf, n, size, &done) : 0;
            e = errno;
        }
        int synced = 0;
        if (rc == 0 && mode != AOF_FSYNC_NO && setting(&no_fsync_on_rw) && child_running()) {
            /* no-appendfsync-on-rewrite: while a child writes its snapshot,
             * no fsync; as in Redis, appendfsync always then acknowledges
             * written, not synced, bytes. */
            synced = 1;
            last_fsync_ms = mono_ms();
        } else if (rc == 0 &&
                   (mode == AOF_FSYNC_ALWAYS || (mode == AOF_FSYNC_EVERYSEC && mono_ms() - last_fsync_ms >= 1000))) {
            fsync_t0 = mono_us();
            if (take_fault(&fault_fsyncs) ? (errno = EIO, 1) : fdatasync(fd) != 0) {
                rc = -1;
                e = errno;
                log_warn("Can't persist AOF for fsync error when the AOF fsync policy is '%s': %s",
                         mode == AOF_FSYNC_ALWAYS ? "always" : "everysec", strerror(e));
            } else {
                synced = 1;
                last_fsync_ms = mono_ms();
            }
        }
        pthread_mutex_lock(&mu);
        int64_t t1 = fsync_t0 ? mono_us() : 0, half = (t1 - fsync_t0) / 2;
        if (fsync_t0 && synced && mode == AOF_FSYNC_ALWAYS && t1 - fsync_t0 >= GATHER_MIN_FSYNC_US) {
            gather_want = plen + n - n / 8; /* stragglers go with the next group */
            gather_until = t1 + (half < GATHER_MAX_US ? half : GATHER_MAX_US);
        }
        busy = 0;
        __atomic_fetch_add(&incr_size, done, __ATOMIC_RELAXED);
        __atomic_fetch_add(&cur_size, done, __ATOMIC_RELAXED);
        if (rc == 0) {
            written_off = target;
            if (synced) {
                synced_off = target;
                __atomic_store_n(&synced_pub, target, __ATOMIC_RELEASE);
            }
            if (!__atomic_load_n(&write_ok, __ATOMIC_RELAXED))
                log_warn("AOF write error looks solved, Redis can write again.");
            __atomic_store_n(&write_ok, 1, __ATOMIC_RELAXED);
            if (!plen && pcap > AOF_BUF_KEEP) {
                free(pend);
                pend = NULL;
                pcap = 0;
                __atomic_store_n(&pcap_pub, 0, __ATOMIC_RELAXED);
            }
        } else {
            /* Put back what did not reach the file, ahead of what came since. */
            size_t left = n - done;
            if (left) {
                pend_reserve(left);
                memmove(pend + left, pend, plen);
                memcpy(pend, wbuf + done, left);
                plen += left;
            }
            written_off = target - left;
            if (done == n) written_off = target; /* only the fsync failed */
            set_error(e);
            if (stop_req) break;
        }
        if (wcap > AOF_BUF_KEEP) {
            free(wbuf);
            wbuf = NULL;
            wcap = 0;
            __atomic_store_n(&wcap_pub, 0, __ATOMIC_RELAXED);
        }
        pthread_cond_broadcast(&cv_done);
        void (*notify)(void) = __atomic_load_n(&sync_notify, __ATOMIC_ACQUIRE);
        if (notify) notify(); /* replies held for this fsync may go */
    }
    pthread_cond_broadcast(&cv_done);
    pthread_mutex_unlock(&mu);
    free(wbuf);
    __atomic_store_n(&wcap_pub, 0, __ATOMIC_RELAXED);
    return NULL;
}

/* Wait until the writer has written everything received and is idle; mu
 * held. With a write error the bytes stay pending (they go to the next
 * file). */
static void drain_locked(void) {
    while ((plen || busy) && __atomic_load_n(&write_ok, __ATOMIC_RELAXED)) {
        pthread_cond_signal(&cv_work);
        pthread_cond_wait(&cv_done, &mu);
    }
    while (busy) pthread_cond_wait(&cv_done, &mu);
}

/* ---- files and the manifest ------------------------------------------------------- */

static pthread_mutex_t man_mu = PTHREAD_MUTEX_INITIALIZER;
static aof_manifest man;           /* man_mu */

static uint64_t file_size(const char *name) {
    char path[1024];
    struct stat st;
    aof_path(path, sizeof(path), dirname_, name);
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int dir_exists(const char *d) {
    struct stat st;
    return stat(d, &st) == 0 && S_ISDIR(st.st_mode);
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* An old-style single AOF file in dir: move it into the directory as the
 * base, as Redis 7.0 upgrades. */
static int upgrade_old_style(char *err, size_t errlen) {
    if (mkdir(dirname_, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "Can't open or create append-only dir %s: %s", dirname_, strerror(errno));
        return -1;
    }
    aofm_free(&man);
    snprintf(man.base.name, sizeof(man.base.name), "%s", fname_);
    man.base.seq = man.base_seq = 1;
    man.base.type = 'b';
    man.has_base = 1;
    if (aofm_write(dirname_, fname_, &man, err, errlen) != 0) return -1;
    char to[1024];
    aof_path(to, sizeof(to), dirname_, fname_);
    if (rename(fname_, to) != 0) {
        snprintf(err, errlen, "Error trying to move the old AOF file %s into dir %s: %s", fname_, dirname_,
                 strerror(errno));
        return -1;
    }
    log_notice("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", fname_, dirname_);
    return 0;
}

/* The manifest's path: appenddirname/appendfilename.manifest. */
static void manifest_path(char *buf, size_t len) {
    char name[AOF_NAME_MAX + 16];
    snprintf(name, sizeof(name), "%s.manifest", fname_);
    aof_path(buf, len, dirname_, name);
}

/* Replay man's files into the dataset (man_mu held), nothing expiring
 * meanwhile; the base's size is kept for the automatic rewrite. */
static int replay_manifest(char *err, size_t errlen) {
    uint64_t bs = 0, ts = 0;
    db_pause_expiry(1);
    int rc = aof_load_files(dirname_, &man, setting(&load_truncated), replay, persist_loading_progress, &bs, &ts, err,
                            errlen);
    db_pause_expiry(0);
    if (rc == 0) __atomic_store_n(&base_size, bs, __ATOMIC_RELAXED);
    return rc;
}

int aof_load_at_startup(char *err, size_t errlen) {
    pthread_mutex_lock(&man_mu);
    aofm_free(&man);
    char path[1024];
    manifest_path(path, sizeof(path));
    int rc = 0;
    if (dir_exists(dirname_) && file_exists(path)) {
        char msg[900];
        if (aofm_read(path, &man, msg, sizeof(msg)) != 0) {
            log_warn("*** FATAL AOF MANIFEST FILE ERROR ***");
            log_warn("%s", msg);
            snprintf(err, errlen, "Fatal error loading the AOF: %s", msg);
            rc = -1;
        }
    }
    /* An old-style AOF in dir (Redis before 7.0) is moved into the
     * directory when there is no manifest yet, or when the manifest names
     * it alone as the base while it is still outside (an upgrade cut short
     * before its rename), as Redis 7.0's loadAppendOnlyFiles decides. */
    if (rc == 0 && file_exists(fname_)) {
        char inside[1024];
        aof_path(inside, sizeof(inside), dirname_, fname_);
        int upgrade = (!man.has_base && !man.nincr) ||
                      (man.has_base && !man.nincr && !strcmp(man.base.name, fname_) && !file_exists(inside));
        if (upgrade) {
            rc = upgrade_old_style(err, errlen);
            if (rc != 0) log_warn("%s", err);
        }
    }
    if (rc == 0 && (man.has_base || man.nincr)) {
        if (!replay) {
            snprintf(err, errlen, "no command replay registered for AOF loading");
            log_warn("%s", err);
            rc = -1;
        } else {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            rc = replay_manifest(err, errlen);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (rc == 0)
                log_notice("DB loaded from append only file: %.3f seconds",
                           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        }
    }
    pthread_mutex_unlock(&man_mu);
    return rc;
}

/* Delete the manifest's history files and write it without them; man_mu
 * held. */
static void delete_history_locked(void) {
    if (!man.nhist || setting(&no_auto_gc)) return;
    char err[600];
    for (int i = 0; i < man.nhist; i++) {
        char hp[1024];
        log_notice("Removing the history file %s in the background", man.hist[i].name);
        aof_path(hp, sizeof(hp), dirname_, man.hist[i].name);
        unlink(hp);
    }
    free(man.hist);
    man.hist = NULL;
    man.nhist = 0;
    if (aofm_write(dirname_, fname_, &man, err, sizeof(err)) != 0) log_warn("%s", err);
}

/* aof-disable-auto-gc set back to no: the history files go now. */
static void auto_gc_apply(const char *v) {
    if (strcmp(v, "no") != 0 || !__atomic_load_n(&live, __ATOMIC_ACQUIRE)) return;
    pthread_mutex_lock(&man_mu);
    delete_history_locked();
    pthread_mutex_unlock(&man_mu);
}

int aof_debug_load(char *err, size_t errlen) {
    assert(db_keyspace_write_held());
    if (__atomic_load_n(&on, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&mu);
        drain_locked();
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_lock(&man_mu);
    aof_manifest nm;
    aofm_init(&nm);
    char path[1024], msg[900];
    manifest_path(path, sizeof(path));
    if (file_exists(path) && aofm_read(path, &nm, msg, sizeof(msg)) != 0) {
        snprintf(err, errlen, "Can't read the AOF manifest: %s", msg);
        aofm_free(&nm);
        pthread_mutex_unlock(&man_mu);
        return -1;
    }
    if (!nm.has_base && !nm.nincr) {
        snprintf(err, errlen, "no append-only file to load: no manifest naming one in %s", dirname_);
        aofm_free(&nm);
        pthread_mutex_unlock(&man_mu);
        return -1;
    }
    if (!replay) abort(); /* registered before the server serves */
    aofm_free(&man);
    man = nm;
    delete_history_locked();
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
    if (replay_manifest(msg, sizeof(msg)) != 0) {
        /* The dataset is gone and the files cannot give it back. */
        log_warn("%s", msg);
        log_warn("DEBUG LOADAOF could not load the AOF after emptying the dataset: exiting");
        exit(1);
    }
    pthread_mutex_unlock(&man_mu);
    log_warn("Append Only File loaded by DEBUG LOADAOF");
    return 0;
}

static void fill_opts(rdb_save_opts *o) {
    persist_fill_save_opts(o);
    o->repl_id[0] = '\0'; /* an AOF base carries no replication info, as Redis */
    o->aof_base = 1;
    o->incremental_fsync = setting(&rw_incr_fsync);
}

/* Write the dataset as a new base at path: an RDB (aof-use-rdb-preamble
 * yes) or commands. The caller holds the keyspace write lock or is the
 * rewrite child. */
static int write_base_now(const char *path, int rdb, char *err, size_t errlen) {
    rdb_save_opts o;
    fill_opts(&o);
    if (rdb) {
        rdb_save_stats st;
        return rdb_save_file(path, &o, &st, err, errlen) == RDB_OK ? 0 : -1;
    }
    return aof_rewrite_commands(path, o.incremental_fsync, setting(&ts_enabled), err, errlen);
}

static int open_incr(const char *name, char *err, size_t errlen) {
    char path[1024];
    aof_path(path, sizeof(path), dirname_, name);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) snprintf(err, errlen, "Can't open the append-only file %s: %s", name, strerror(errno));
    return fd;
}

static void writer_stop(void);

/* Start the writer on fd (an incr file of size bytes) and attach the sink;
 * no write may be applied meanwhile (start-up, or the keyspace write lock).
 * 0, or -1 with err (fd closed). */
static int writer_start(int fd, uint64_t size, char *err, size_t errlen) {
    pthread_mutex_lock(&mu);
    wfd = fd;
    plen = 0; /* bytes left from a stop with a write error belong to no file now */
    stop_req = 0;
    busy = 0;
    ts_last = 0;
    last_fsync_ms = mono_ms();
    __atomic_store_n(&incr_size, size, __ATOMIC_RELAXED);
    __atomic_store_n(&write_ok, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mu);
    if (pthread_create(&writer_tid, NULL, writer_main, NULL) != 0) {
        snprintf(err, errlen, "Can't start the AOF writer thread");
        pthread_mutex_lock(&mu);
        wfd = -1;
        pthread_mutex_unlock(&mu);
        close(fd);
        return -1;
    }
    __atomic_store_n(&on, 1, __ATOMIC_RELAXED);
    if (wstream_add_sink(&sink) != 0) {
        snprintf(err, errlen, "Can't attach the AOF to the write stream: every sink slot is taken");
        writer_stop();
        return -1;
    }
    wstream_lock();
    wstream_force_select_locked(0);
    wstream_unlock();
    return 0;
}

int aof_open_at_startup(char *err, size_t errlen) {
    pthread_mutex_lock(&man_mu);
    int rc = -1;
    if (mkdir(dirname_, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "Can't open or create append-only dir %s: %s", dirname_, strerror(errno));
        goto out;
    }
    int had_incr = man.nincr > 0;
    if (!man.has_base && !man.nincr) {
        int rdb = setting(&use_preamble);
        aof_file *b = aofm_new_base(&man, fname_, rdb);
        char path[1024];
        aof_path(path, sizeof(path), dirname_, b->name);
        db_wrlock_keyspace();
        int wr = write_base_now(path, rdb, err, errlen);
        db_unlock_keyspace();
        if (wr != 0) goto out;
        log_notice("Creating AOF base file %s on server start", b->name);
        __atomic_store_n(&base_size, file_size(b->name), __ATOMIC_RELAXED);
    }
    if (!man.nincr) aofm_new_incr(&man, fname_);
    const char *incr = man.incr[man.nincr - 1].name;
    int fd = open_incr(incr, err, errlen);
    if (fd < 0) goto out;
    if (aofm_write(dirname_, fname_, &man, err, errlen) != 0) {
        close(fd);
        goto out;
    }
    uint64_t total = man.has_base ? file_size(man.base.name) : 0;
    for (int i = 0; i < man.nincr; i++) total += file_size(man.incr[i].name);
    __atomic_store_n(&cur_size, total, __ATOMIC_RELAXED);
    __atomic_store_n(&base_size, total, __ATOMIC_RELAXED); /* auto rewrites grow from here */
    log_notice("%s AOF incr file %s on server start", had_incr ? "Opening" : "Creating", incr);
    rc = writer_start(fd, file_size(incr), err, errlen);
    if (rc == 0) aof_set_live();
out:
    pthread_mutex_unlock(&man_mu);
    return rc;
}

/* ---- stopping ------------------------------------------------------------------------ */

static void rewrite_kill(void);

/* Stop the writer: what is pending is written (unless the disk refuses it)
 * and fsynced, the file closed. */
static void writer_stop(void) {
    if (!__atomic_load_n(&on, __ATOMIC_RELAXED)) return;
    wstream_remove_sink(&sink);
    pthread_mutex_lock(&mu);
    stop_req = 1;
    pthread_cond_signal(&cv_work);
    pthread_mutex_unlock(&mu);
    pthread_join(writer_tid, NULL);
    pthread_mutex_lock(&mu);
    __atomic_store_n(&on, 0, __ATOMIC_RELAXED);
    if (wfd >= 0) {
        if (fsync(wfd) != 0) log_warn("Fail to fsync the AOF file: %s", strerror(errno));
        close(wfd);
        wfd = -1;
    }
    synced_off = written_off;
    __atomic_store_n(&synced_pub, synced_off, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&cv_done);
    void (*notify)(void) = __atomic_load_n(&sync_notify, __ATOMIC_ACQUIRE);
    if (notify) notify();
    pthread_mutex_unlock(&mu);
}

void aof_stop(void) {
    rewrite_kill();
    writer_stop();
}

/* ---- BGREWRITEAOF ---------------------------------------------------------------------- */

static pid_t rw_pid = -1;          /* man_mu */
static long long rw_base_seq;      /* incr files before this seq become history */
static int64_t rw_start;           /* unix seconds (atomics) */
static int64_t rw_failed_at;       /* monotonic ms of the last failure (man_mu) */
static int rw_rdb;                 /* the running rewrite writes an RDB base (man_mu) */
static int rw_scheduled;           /* atomics below */
static int rw_last_ok = 1;
static long long rw_last_secs = -1;
static long long rw_count, rw_failures;
static int rw_hugetlb_logged;

int aof_rewrite_in_progress(void) { return __atomic_load_n(&rw_running, __ATOMIC_RELAXED); }

void aof_rewrite_schedule(void) {
    __atomic_store_n(&rw_scheduled, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&rw_failures, 0, __ATOMIC_RELAXED);
}

static void tmp_base_path(char *buf, size_t len, long pid) {
    char name[64];
    snprintf(name, sizeof(name), "temp-rewriteaof-bg-%ld.aof", pid);
    aof_path(buf, len, dirname_, name);
}

/* The incr file of an AOF turned on at run time, until its first base. */
static void temp_incr_path(char *buf, size_t len) {
    char name[AOF_NAME_MAX + 16];
    snprintf(name, sizeof(name), "temp-%s.incr", fname_);
    aof_path(buf, len, dirname_, name);
}

static _Noreturn void rw_child(int rdb) {
    sigset_t all;
    sigfillset(&all);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &all, NULL);
    /* Sockets and the parent's files are not the child's business. */
#ifdef SYS_close_range
    syscall(SYS_close_range, 3u, ~0u, 0u);
#endif
    char path[1024], err[256];
    tmp_base_path(path, sizeof(path), (long)getpid());
    _exit(write_base_now(path, rdb, err, sizeof(err)) == 0 ? 0 : 1);
}

/* The writer goes on in fd (the stream lock and mu held, the writer
 * drained): the next record starts with SELECT. Returns the old one. */
static int writer_swap_fd_locked(int fd) {
    int old = wfd;
    wfd = fd;
    __atomic_store_n(&incr_size, 0, __ATOMIC_RELAXED);
    wstream_force_select_locked(0);
    return old;
}

/* Switch the writer to a new incr file; man_mu held. */
static int switch_incr(char *err, size_t errlen) {
    aof_manifest nm;
    if (aofm_copy(&nm, &man) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    aof_file *f = aofm_new_incr(&nm, fname_);
    int fd = open_incr(f->name, err, errlen);
    if (fd < 0) {
        aofm_free(&nm);
        return -1;
    }
    wstream_lock();
    pthread_mutex_lock(&mu);
    drain_locked();
    if (aofm_write(dirname_, fname_, &nm, err, errlen) != 0) {
        pthread_mutex_unlock(&mu);
        wstream_unlock();
        close(fd);
        aofm_free(&nm);
        return -1;
    }
    int old = writer_swap_fd_locked(fd);
    pthread_mutex_unlock(&mu);
    wstream_unlock();
    if (old >= 0) {
        if (fdatasync(old) != 0) log_warn("Fail to fsync the AOF file: %s", strerror(errno));
        close(old);
    }
    aofm_free(&man);
    man = nm;
    return 0;
}

/* Waiting for the first base: the temp incr file starts again empty, so it
 * holds exactly the writes after the snapshot about to be taken (man_mu
 * and the keyspace write lock held). What the writer still had pending is
 * in that snapshot. */
static int restart_temp_incr(char *err, size_t errlen) {
    char tp[1024];
    temp_incr_path(tp, sizeof(tp));
    unlink(tp);
    int fd = open(tp, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "Can't open the append-only file %s: %s", tp, strerror(errno));
        return -1;
    }
    wstream_lock();
    pthread_mutex_lock(&mu);
    drain_locked();
    plen = 0;
    int old = writer_swap_fd_locked(fd);
    pthread_mutex_unlock(&mu);
    wstream_unlock();
    if (old >= 0) close(old);
    log_notice("Creating AOF incr file temp-%s.incr on background rewrite", fname_);
    return 0;
}

static void rw_failed(void) {
    __atomic_store_n(&rw_last_ok, 0, __ATOMIC_RELAXED);
    __atomic_fetch_add(&rw_failures, 1, __ATOMIC_RELAXED);
    rw_failed_at = mono_ms();
    /* An AOF turned on at run time has no base yet: try again (cron). Its
     * temp incr file goes, as Redis deletes it: the next rewrite's
     * snapshot holds what it had, and the writer goes on into the unlinked
     * file until that rewrite opens a new one. */
    if (wait_rw) {
        char tp[1024];
        temp_incr_path(tp, sizeof(tp));
        log_notice("Removing the temp incr aof file temp-%s.incr in the background", fname_);
        unlink(tp);
        __atomic_store_n(&rw_scheduled, 1, __ATOMIC_RELAXED);
    }
}

/* man_mu held; the keyspace write lock held. */
static int rewrite_start_locked(int may_schedule, char *err, size_t errlen) {
    if (rw_pid != -1) {
        snprintf(err, errlen, "Background append only file rewriting already in progress");
        return AOF_RW_BUSY;
    }
    const char *refusal = hugetlb_bgsave_refusal();
    if (refusal) {
        snprintf(err, errlen, "BGREWRITEAOF is disabled while arena-hugetlb is on (copy-on-write would copy whole "
                              "2 MiB pages)");
        return AOF_RW_REFUSED;
    }
    if (persist_bgsave_in_progress()) {
        if (may_schedule) {
            aof_rewrite_schedule();
            return AOF_RW_SCHEDULED;
        }
        snprintf(err, errlen, "a background save is in progress");
        return AOF_RW_FAILED;
    }
    if (mkdir(dirname_, 0755) != 0 && errno != EEXIST) {
        log_warn("Can't open or create append-only dir %s: %s", dirname_, strerror(errno));
        __atomic_store_n(&rw_last_ok, 0, __ATOMIC_RELAXED);
        snprintf(err, errlen, "Can't open or create append-only dir %s: %s", dirname_, strerror(errno));
        return AOF_RW_FAILED;
    }
    if (__atomic_load_n(&on, __ATOMIC_RELAXED) &&
        (wait_rw ? restart_temp_incr(err, errlen) : switch_incr(err, errlen)) != 0) {
        log_warn("%s", err);
        __atomic_store_n(&rw_last_ok, 0, __ATOMIC_RELAXED);
        return AOF_RW_FAILED;
    }
    rw_base_seq = man.incr_seq;
    rw_rdb = setting(&use_preamble);
    pid_t pid = process_fork();
    if (pid == 0) rw_child(rw_rdb);
    if (pid < 0) {
        __atomic_store_n(&rw_last_ok, 0, __ATOMIC_RELAXED);
        snprintf(err, errlen, "Can't rewrite append only file in background: fork: %s", strerror(errno));
        log_warn("%s", err);
        return AOF_RW_FAILED;
    }
    rw_pid = pid;
    obj_touch_hold(1);
    __atomic_store_n(&rw_running, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&rw_count, 1, __ATOMIC_RELAXED); /* after rw_running: INFO never shows one done that runs */
    __atomic_store_n(&rw_start, (int64_t)time(NULL), __ATOMIC_RELAXED);
    __atomic_store_n(&rw_scheduled, 0, __ATOMIC_RELAXED);
    log_notice("Background append only file rewriting started by pid %ld", (long)pid);
    return AOF_RW_STARTED;
}

int aof_rewrite_start(int may_schedule, char *err, size_t errlen) {
    pthread_mutex_lock(&man_mu);
    int rc = rewrite_start_locked(may_schedule, err, errlen);
    pthread_mutex_unlock(&man_mu);
    return rc;
}

/* A complete new base is at tmp: make it the base in the manifest; man_mu
 * held. Incr files older than the one opened when the rewrite started are
 * in it and become history; waiting for a first base, the temp incr file
 * becomes the only incr file and everything from before becomes history.
 * 0, or -1 (logged) with the manifest and the files as they were. */
static int install_base(const char *tmp, int rdb) {
    aof_manifest nm;
    char err[600], path[1024], incr_tmp[1024] = "", incr_path[1024] = "";
    if (aofm_copy(&nm, &man) != 0) abort();
    aof_file *b = aofm_new_base(&nm, fname_, rdb);
    aof_path(path, sizeof(path), dirname_, b->name);
    if (wait_rw) {
        aof_file *f = aofm_new_incr(&nm, fname_);
        temp_incr_path(incr_tmp, sizeof(incr_tmp));
        aof_path(incr_path, sizeof(incr_path), dirname_, f->name);
        aofm_incr_to_history(&nm, nm.nincr - 1);
    } else {
        int keep = 0;
        while (keep < nm.nincr && nm.incr[keep].seq < rw_base_seq) keep++;
        if (!__atomic_load_n(&on, __ATOMIC_RELAXED)) keep = nm.nincr;
        aofm_incr_to_history(&nm, keep);
    }
    if (rename(tmp, path) != 0) {
        log_warn("Error trying to rename the temporary AOF base file %s into %s: %s", tmp, b->name, strerror(errno));
        unlink(tmp);
        aofm_free(&nm);
        return -1;
    }
    if (incr_tmp[0] && rename(incr_tmp, incr_path) != 0) {
        log_warn("Error trying to rename the temporary AOF incr file %s into %s: %s", incr_tmp, incr_path,
                 strerror(errno));
        unlink(path);
        aofm_free(&nm);
        return -1;
    }
    if (aofm_write(dirname_, fname_, &nm, err, sizeof(err)) != 0) {
        log_warn("%s", err);
        if (incr_tmp[0] && rename(incr_path, incr_tmp) != 0) log_warn("Can't rename %s back: %s", incr_path, strerror(errno));
        unlink(path);
        aofm_free(&nm);
        return -1;
    }
    aofm_free(&man);
    man = nm;
    delete_history_locked();
    uint64_t total = file_size(man.base.name);
    for (int i = 0; i < man.nincr; i++) total += file_size(man.incr[i].name);
    __atomic_store_n(&base_size, total, __ATOMIC_RELAXED);
    __atomic_store_n(&cur_size, total, __ATOMIC_RELAXED);
    if (wait_rw)
        log_notice("Successfully renamed the temporary AOF incr file temp-%s.incr into %s", fname_,
                   man.incr[man.nincr - 1].name);
    __atomic_store_n(&wait_rw, 0, __ATOMIC_RELAXED);
    return 0;
}

/* The child exited; man_mu held. */
static void rewrite_done(int status) {
    char tmp[1024];
    tmp_base_path(tmp, sizeof(tmp), (long)rw_pid);
    __atomic_store_n(&rw_last_secs, (long long)(time(NULL) - rw_start), __ATOMIC_RELAXED);
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    rw_pid = -1;
    obj_touch_hold(-1);
    /* INFO says the rewrite runs until its base is installed. */
    if (!ok) {
        unlink(tmp);
        if (WIFSIGNALED(status)) log_warn("Background AOF rewrite terminated by signal %d", WTERMSIG(status));
        else log_warn("Background AOF rewrite terminated with error");
        rw_failed();
        __atomic_store_n(&rw_running, 0, __ATOMIC_RELAXED);
        return;
    }
    if (install_base(tmp, rw_rdb) != 0) {
        rw_failed();
        __atomic_store_n(&rw_running, 0, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&rw_running, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&rw_last_ok, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&rw_failures, 0, __ATOMIC_RELAXED);
    log_notice("Background AOF rewrite terminated with success");
    log_notice("Successfully renamed the temporary AOF base file %s into %s", tmp, man.base.name);
    log_notice("Background AOF rewrite finished successfully");
}

/* man_mu held. */
static void rewrite_kill_locked(void) {
    if (rw_pid == -1) return;
    log_notice("Killing running AOF rewrite child: %ld", (long)rw_pid);
    kill(rw_pid, SIGKILL);
    int status;
    while (waitpid(rw_pid, &status, 0) < 0 && errno == EINTR) {
    }
    char tmp[1024], tmp2[1100];
    tmp_base_path(tmp, sizeof(tmp), (long)rw_pid);
    rdb_temp_path(tmp2, sizeof(tmp2), tmp, (long)rw_pid);
    unlink(tmp);
    unlink(tmp2);
    rw_pid = -1;
    obj_touch_hold(-1);
    __atomic_store_n(&rw_running, 0, __ATOMIC_RELAXED);
}

static void rewrite_kill(void) {
    pthread_mutex_lock(&man_mu);
    rewrite_kill_locked();
    pthread_mutex_unlock(&man_mu);
}

void aof_rewrite_abort_for_shutdown(void) {
    pthread_mutex_lock(&man_mu);
    if (rw_pid != -1) log_warn("There is a child rewriting the AOF. Killing it!");
    rewrite_kill_locked();
    pthread_mutex_unlock(&man_mu);
}

/* ---- appendonly at run time -------------------------------------------------------------- */

static _Thread_local int defer_tl; /* aof_defer_rewrites */

void aof_defer_rewrites(int on) { defer_tl = on; }

/* CONFIG SET appendonly yes (config lock and keyspace write lock held), as
 * Redis 7.0's startAppendOnly: the writer starts at once on a temp incr
 * file, a rewrite writes the first base (scheduled when a BGSAVE runs),
 * and only then does the manifest name them; until then the files on disk
 * stay what they were, so a crash meanwhile loses nothing they held.
 * Under arena-hugetlb there is no fork: the base is written now, under the
 * lock, as SAVE does. 0, or -1 with err (the AOF stays off). */
static int turn_on(char *err, size_t errlen) {
    pthread_mutex_lock(&man_mu);
    int rc = -1;
    err[0] = '\0';
    char path[1024], msg[900];
    if (mkdir(dirname_, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "Can't open or create append-only dir %s: %s", dirname_, strerror(errno));
        goto out;
    }
    /* The manifest on disk, so file sequence numbers go on from it and its
     * files become history once the new base is in. */
    aofm_free(&man);
    manifest_path(path, sizeof(path));
    if (file_exists(path) && aofm_read(path, &man, msg, sizeof(msg)) != 0) {
        snprintf(err, errlen, "Can't turn on the AOF: %.400s", msg);
        aofm_free(&man);
        goto out;
    }
    if (rw_pid != -1) {
        log_notice("AOF was enabled but there is already an AOF rewriting in background. Stopping background AOF "
                   "and starting a rewrite now.");
        rewrite_kill_locked();
    }
    temp_incr_path(path, sizeof(path));
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "Can't open the append-only file %.400s: %s", path, strerror(errno));
        goto out;
    }
    __atomic_store_n(&wait_rw, 1, __ATOMIC_RELAXED);
    if (writer_start(fd, 0, err, errlen) != 0) goto fail;
    __atomic_store_n(&cur_size, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&base_size, 0, __ATOMIC_RELAXED);
    if (hugetlb_bgsave_refusal()) {
        char tmp[1024];
        tmp_base_path(tmp, sizeof(tmp), (long)getpid());
        int rdb = setting(&use_preamble);
        if (write_base_now(tmp, rdb, err, errlen) != 0 || install_base(tmp, rdb) != 0) {
            if (!err[0]) snprintf(err, errlen, "Can't install the first AOF base file");
            unlink(tmp);
            goto fail;
        }
        rc = 0;
        goto out;
    }
    int r;
    if (defer_tl) {
        aof_rewrite_schedule();
        r = AOF_RW_SCHEDULED;
    } else {
        r = rewrite_start_locked(1, err, errlen);
    }
    if (r == AOF_RW_SCHEDULED)
        log_notice("AOF was enabled but there is already another background operation. An AOF background was "
                   "scheduled to start when possible.");
    if (r == AOF_RW_STARTED || r == AOF_RW_SCHEDULED) {
        rc = 0;
        goto out;
    }
fail:
    writer_stop();
    temp_incr_path(path, sizeof(path));
    unlink(path);
    __atomic_store_n(&wait_rw, 0, __ATOMIC_RELAXED);
out:
    pthread_mutex_unlock(&man_mu);
    return rc;
}

/* CONFIG SET appendonly no, as Redis's stopAppendOnly: what is buffered is
 * written and fsynced, a rewrite child is killed; the files stay. */
static void turn_off(const char *why) {
    pthread_mutex_lock(&man_mu);
    rewrite_kill_locked();
    writer_stop();
    if (wait_rw) {
        char tp[1024];
        temp_incr_path(tp, sizeof(tp));
        unlink(tp);
        __atomic_store_n(&wait_rw, 0, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&rw_scheduled, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&man_mu);
    log_notice("AOF turned off %s", why);
}

int aof_restart(char *err, size_t errlen) {
    if (!__atomic_load_n(&on, __ATOMIC_RELAXED)) return 0;
    db_wrlock_keyspace();
    turn_off("to start over from the new dataset");
    int rc = turn_on(err, errlen);
    db_unlock_keyspace();
    return rc;
}

/* ---- the persistence thread's tick -------------------------------------------------------- */

/* After 3 failed rewrites in a row, automatic and scheduled ones wait 1
 * minute, doubling up to an hour, as Redis 7.0's aofRewriteLimited. */
static int rewrite_limited(long long fails, int64_t failed_at) {
    if (fails < 3) return 0;
    int64_t delay = 60000LL << (fails - 3 > 6 ? 6 : fails - 3);
    if (delay > 3600000) delay = 3600000;
    if (mono_ms() - failed_at >= delay) return 0;
    /* Said once per failure, when a rewrite is due and held back, as
     * Redis's aofRewriteLimited says it. */
    static long long said_for = -1;
    if (said_for != fails) {
        said_for = fails;
        log_warn("Background AOF rewrite has repeatedly failed and triggered the limit, will retry in %lld minutes",
                 (long long)(delay / 60000));
    }
    return 1;
}

/* auto-aof-rewrite-percentage / -min-size: the growth (in %) over the size
 * after the last rewrite (or start-up) when it is due, else -1. */
static long long auto_rewrite_growth(void) {
    int perc = setting(&auto_perc);
    if (!perc || !__atomic_load_n(&on, __ATOMIC_RELAXED) || __atomic_load_n(&wait_rw, __ATOMIC_RELAXED)) return -1;
    uint64_t cur = __atomic_load_n(&cur_size, __ATOMIC_RELAXED);
    if ((long long)cur <= __atomic_load_n(&auto_min, __ATOMIC_RELAXED)) return -1;
    uint64_t base = __atomic_load_n(&base_size, __ATOMIC_RELAXED);
    long long growth = (long long)(cur * 100 / (base ? base : 1)) - 100;
    return growth >= perc ? growth : -1;
}

void aof_cron(void) {
    pthread_mutex_lock(&man_mu);
    if (rw_pid != -1) {
        int status;
        if (waitpid(rw_pid, &status, WNOHANG) == rw_pid) rewrite_done(status);
    }
    int idle = rw_pid == -1;
    long long fails = __atomic_load_n(&rw_failures, __ATOMIC_RELAXED);
    int64_t failed_at = rw_failed_at;
    pthread_mutex_unlock(&man_mu);
    if (!idle || persist_bgsave_in_progress()) return;
    int scheduled = __atomic_load_n(&rw_scheduled, __ATOMIC_RELAXED);
    long long growth = scheduled ? 0 : auto_rewrite_growth();
    if (!scheduled && growth < 0) return;
    if (rewrite_limited(fails, failed_at)) return;
    if (hugetlb_bgsave_refusal()) {
        if (!__atomic_exchange_n(&rw_hugetlb_logged, 1, __ATOMIC_RELAXED))
            log_warn("AOF rewrite skipped: BGREWRITEAOF is disabled while arena-hugetlb is on");
        __atomic_store_n(&rw_scheduled, 0, __ATOMIC_RELAXED);
        return;
    }
    if (!scheduled) log_notice("Starting automatic rewriting of AOF on %lld%% growth", growth);
    char err[600];
    db_wrlock_keyspace();
    int rc = aof_rewrite_start(0, err, sizeof(err));
    db_unlock_keyspace();
    if (rc != AOF_RW_STARTED && rc != AOF_RW_BUSY) {
        log_warn("%s AOF rewrite: %s", scheduled ? "Scheduled" : "Automatic", err);
        pthread_mutex_lock(&man_mu);
        rw_failed();
        pthread_mutex_unlock(&man_mu);
    }
}

/* ---- INFO --------------------------------------------------------------------------------- */

void aof_stats_reset(void) {
    __atomic_store_n(&rw_count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&rw_failures, 0, __ATOMIC_RELAXED);
}

void aof_info(strbuf *b) {
    /* Not man_mu: the start-up load holds it while INFO must answer. */
    int inprog = __atomic_load_n(&rw_running, __ATOMIC_RELAXED);
    int64_t start = __atomic_load_n(&rw_start, __ATOMIC_RELAXED);
    strbuf_addf(b,
                "aof_enabled:%d\r\n"
                "aof_rewrite_in_progress:%d\r\n"
                "aof_rewrite_scheduled:%d\r\n"
                "aof_last_rewrite_time_sec:%lld\r\n"
                "aof_current_rewrite_time_sec:%lld\r\n"
                "aof_last_bgrewrite_status:%s\r\n"
                "aof_rewrites:%lld\r\n"
                "aof_rewrites_consecutive_failures:%lld\r\n"
                "aof_last_write_status:%s\r\n"
                "aof_last_cow_size:0\r\n",
                __atomic_load_n(&on, __ATOMIC_RELAXED), inprog, __atomic_load_n(&rw_scheduled, __ATOMIC_RELAXED),
                __atomic_load_n(&rw_last_secs, __ATOMIC_RELAXED), inprog ? (long long)(time(NULL) - start) : -1LL,
                __atomic_load_n(&rw_last_ok, __ATOMIC_RELAXED) ? "ok" : "err",
                __atomic_load_n(&rw_count, __ATOMIC_RELAXED), __atomic_load_n(&rw_failures, __ATOMIC_RELAXED),
                __atomic_load_n(&write_ok, __ATOMIC_RELAXED) ? "ok" : "err");
}

void aof_info_tail(strbuf *b) {
    if (!__atomic_load_n(&on, __ATOMIC_RELAXED)) return;
    pthread_mutex_lock(&mu);
    size_t pending = plen;
    pthread_mutex_unlock(&mu);
    strbuf_addf(b,
                "aof_current_size:%llu\r\n"
                "aof_base_size:%llu\r\n"
                "aof_pending_rewrite:%d\r\n"
                "aof_buffer_length:%zu\r\n"
                "aof_pending_bio_fsync:0\r\n"
                "aof_delayed_fsync:0\r\n",
                (unsigned long long)__atomic_load_n(&cur_size, __ATOMIC_RELAXED),
                (unsigned long long)__atomic_load_n(&base_size, __ATOMIC_RELAXED),
                __atomic_load_n(&rw_scheduled, __ATOMIC_RELAXED), pending);
}
