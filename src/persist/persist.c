/* persist.c -- the snapshot lifecycle: SAVE, BGSAVE (fork), LOAD, start-up
 * load, save points, shutdown saves, INFO persistence.
 *
 * BGSAVE forks while the keyspace write lock is held, so the child's copy
 * of the dataset is a consistent point in time: no command is half-way
 * through a change. The parent releases the lock as soon as fork()
 * returns and keeps serving; the child writes the file through the
 * crash-safe protocol of rdb_save_file() and reports progress and its
 * result over a pipe ("P keys bytes", "R rc keys bytes cow", "E message").
 * The child never takes a lock and never logs (another thread may have held
 * the log lock at fork time): the parent logs for it.
 *
 * The persistence thread (persist_cron, every 100 ms) reaps the child,
 * relays its progress, starts scheduled BGSAVEs and fires save points with
 * Redis's rule: after `seconds` with at least `changes` changes, and after
 * a failed BGSAVE only once 5 seconds have passed. While --arena-hugetlb is
 * on, save points are skipped (logged once) because copy-on-write would
 * copy whole huge pages.
 *
 * State below is guarded by pst_lock, a leaf lock; counters read by INFO
 * are atomics. */
#include "persist/persist.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/memusage.h"
#include "mem/hugetlb.h"
#include "util/crc64.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "base/config.h"
#include "base/log.h"
#include "base/process.h"

#define BGSAVE_RETRY_DELAY 5 /* seconds, as Redis's CONFIG_BGSAVE_RETRY_DELAY */
#define PROGRESS_LOG_MS 2000

static pthread_mutex_t pst_lock = PTHREAD_MUTEX_INITIALIZER;

/* BGSAVE child (pst_lock). */
static pid_t child_pid = -1;
static int child_fd = -1;
static int64_t child_start_ms;
static uint64_t child_dirty_start;
static char child_buf[1024];
static size_t child_buflen;
static int child_rc = -1;
static uint64_t child_keys, child_bytes, child_cow;
static char child_err[512];

/* Outcomes (atomics). */
static int bgsave_scheduled;
static int last_bgsave_ok = 1;
static int64_t last_bgsave_try;       /* unix seconds */
static long long last_bgsave_secs = -1;
static uint64_t dirty_at_save;        /* db_dirty_now() at the last successful save */
static uint64_t stat_saves;
static uint64_t stat_last_cow;
static uint64_t cur_keys_done, cur_keys_total;
static int hugetlb_logged;
static int shutting_down;

/* Loading (atomics). */
static int loading;
static int async_loading;             /* a replica's swapdb load: the old data is served meanwhile */
static int load_abort;
static int load_busy;
static int64_t loading_start_ms;
static uint64_t loading_total, loading_loaded;
static uint64_t last_load_keys, last_load_expired;

static pthread_t cron_tid;
static int cron_run;

static int64_t now_ms(void) { return db_now_ms(); }

static uint64_t dirty_now(void) { return db_dirty_now(); }

uint64_t persist_dirty(void) {
    uint64_t d = dirty_now(), base = __atomic_load_n(&dirty_at_save, __ATOMIC_RELAXED);
    return d > base ? d - base : 0;
}

static void set_lastsave(int64_t secs) { __atomic_store_n(&srv.lastsave, secs, __ATOMIC_RELAXED); }

/* A setting read through the config lock (safe against CONFIG SET). */
static int config_is_yes(const char *name, int dflt) {
    char *v = config_value(name);
    if (!v) return dflt;
    int yes = strcmp(v, "yes") == 0;
    free(v);
    return yes;
}

/* rdbcompression, rdbchecksum, rdb-save-incremental-fsync, rdb-key-save-delay, key-load-delay: bound in
 * persist_start, read without the config lock (an AOF turned on by CONFIG
 * SET fills its save options while CONFIG SET holds that lock). */
static int rdb_compress = 1, rdb_checksum = 1, rdb_incr_fsync = 1, rdb_key_save_delay, rdb_key_load_delay;

int persist_compress(void) { return __atomic_load_n(&rdb_compress, __ATOMIC_RELAXED); }

/* Redis's writeCommandsDeniedByDiskError for RDB: the last BGSAVE failed,
 * save points are set and stop-writes-on-bgsave-error is yes. The common
 * case (the last save went well) costs one atomic load. */
int persist_writes_refused(void) {
    if (__atomic_load_n(&last_bgsave_ok, __ATOMIC_RELAXED)) return 0;
    if (!config_is_yes("stop-writes-on-bgsave-error", 1)) return 0;
    char *save = config_value("save");
    int points = save && save[0];
    free(save);
    return points;
}

static persist_repl_info_fn *repl_info_fn;
static char loaded_repl_id[41];
static long long loaded_repl_offset = -1;
static int loaded_repl_db = -1;

void persist_set_repl_info(persist_repl_info_fn *fn) { repl_info_fn = fn; }

static persist_repl_resume_fn *repl_resume_fn;
void persist_set_repl_resume(persist_repl_resume_fn *fn) { repl_resume_fn = fn; }

/* The keys the start-up load dropped as expired, kept for repl_resume_fn. */
typedef struct dropped_list {
    persist_dropped_key *k;
    size_t n, cap;
} dropped_list;

static void dropped_add(void *arg, int dbid, const void *key, size_t klen) {
    dropped_list *d = arg;
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 64;
        d->k = realloc(d->k, d->cap * sizeof(*d->k));
        if (!d->k) abort();
    }
    persist_dropped_key *e = &d->k[d->n++];
    e->dbid = dbid;
    e->n = klen;
    e->p = malloc(klen ? klen : 1);
    if (!e->p) abort();
    memcpy(e->p, key, klen);
}

static void dropped_free(dropped_list *d) {
    for (size_t i = 0; i < d->n; i++) free(d->k[i].p);
    free(d->k);
    d->k = NULL;
    d->n = d->cap = 0;
}

int persist_loaded_repl_info(char id[41], long long *offset, int *stream_db) {
    if (!loaded_repl_id[0] || loaded_repl_offset < 0) return 0;
    memcpy(id, loaded_repl_id, 41);
    *offset = loaded_repl_offset;
    *stream_db = loaded_repl_db;
    return 1;
}

void persist_fill_save_opts(rdb_save_opts *o) {
    memset(o, 0, sizeof(*o));
    if (repl_info_fn && !repl_info_fn(o->repl_id, &o->repl_offset, &o->repl_stream_db)) o->repl_id[0] = '\0';
    o->compress = persist_compress();
    o->no_checksum = !__atomic_load_n(&rdb_checksum, __ATOMIC_RELAXED);
    o->used_mem = memusage_used();
    o->incremental_fsync = __atomic_load_n(&rdb_incr_fsync, __ATOMIC_RELAXED);
    o->key_delay_us = __atomic_load_n(&rdb_key_save_delay, __ATOMIC_RELAXED);
}

static uint64_t total_keys(void) {
    uint64_t n = 0;
    for (int i = 0; i < db_count(); i++) n += db_size(db_get(i));
    return n;
}

static double mb(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

/* ---- SAVE ------------------------------------------------------------------ */

typedef struct progress_log {
    const char *what;
    int64_t start, last;
    uint64_t total_keys, total_bytes;
} progress_log;

static void progress_cb(void *arg, uint64_t keys, uint64_t bytes) {
    progress_log *pl = arg;
    __atomic_store_n(&cur_keys_done, keys, __ATOMIC_RELAXED);
    int64_t t = now_ms();
    if (t - pl->last < PROGRESS_LOG_MS) return;
    pl->last = t;
    double secs = (double)(t - pl->start) / 1000.0;
    if (pl->total_keys)
        log_notice("%s: %llu of %llu keys (%.0f%%), %.1f MB in %.1f s (%.1f MB/s)", pl->what,
                   (unsigned long long)keys, (unsigned long long)pl->total_keys, 100.0 * (double)keys / (double)pl->total_keys,
                   mb(bytes), secs, secs > 0 ? mb(bytes) / secs : 0);
    else
        log_notice("%s: %llu keys, %.1f MB of %.1f MB (%.0f%%) in %.1f s (%.1f MB/s)", pl->what,
                   (unsigned long long)keys, mb(bytes), mb(pl->total_bytes),
                   pl->total_bytes ? 100.0 * (double)bytes / (double)pl->total_bytes : 0, secs,
                   secs > 0 ? mb(bytes) / secs : 0);
}

/* The save itself; keyspace write lock held. */
static int do_save(const char *why, char *err, size_t errlen) {
    rdb_save_opts o;
    rdb_save_stats st;
    persist_fill_save_opts(&o);
    progress_log pl = {why, now_ms(), now_ms(), total_keys(), 0};
    o.progress = progress_cb;
    o.progress_arg = &pl;
    __atomic_store_n(&cur_keys_total, pl.total_keys, __ATOMIC_RELAXED);
    __atomic_store_n(&cur_keys_done, 0, __ATOMIC_RELAXED);
    uint64_t dirty = dirty_now();
    int rc = rdb_save_file(cfg.dbfilename, &o, &st, err, errlen);
    __atomic_store_n(&cur_keys_total, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&cur_keys_done, 0, __ATOMIC_RELAXED);
    if (rc != RDB_OK) {
        log_warn("%s: error saving DB on disk: %s", why, err);
        return rc;
    }
    double secs = (double)(now_ms() - pl.start) / 1000.0;
    __atomic_store_n(&dirty_at_save, dirty, __ATOMIC_RELAXED);
    set_lastsave(time(NULL));
    __atomic_store_n(&last_bgsave_ok, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&stat_saves, 1, __ATOMIC_RELAXED);
    log_notice("DB saved on disk (%llu keys, %.1f MB in %.3f s, %.1f MB/s)", (unsigned long long)st.keys,
               mb(st.bytes), secs, secs > 0 ? mb(st.bytes) / secs : 0);
    return RDB_OK;
}

int persist_bgsave_in_progress(void) {
    pthread_mutex_lock(&pst_lock);
    int r = child_pid != -1;
    pthread_mutex_unlock(&pst_lock);
    return r;
}

int persist_save(char *err, size_t errlen) {
    if (persist_bgsave_in_progress()) {
        snprintf(err, errlen, "Background save already in progress");
        return RDB_ERR_BUSY;
    }
    return do_save("SAVE", err, errlen);
}

/* ---- BGSAVE ----------------------------------------------------------------- */

static void child_write(int fd, const char *s) {
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

typedef struct child_progress {
    int fd;
    int64_t last;
} child_progress;

static void child_progress_cb(void *arg, uint64_t keys, uint64_t bytes) {
    child_progress *cp = arg;
    int64_t t = now_ms();
    if (t - cp->last < 250) return;
    cp->last = t;
    char line[96];
    snprintf(line, sizeof(line), "P %llu %llu\n", (unsigned long long)keys, (unsigned long long)bytes);
    child_write(cp->fd, line);
}

/* Private_Dirty of this process: what copy-on-write has cost the child. */
static uint64_t child_private_dirty(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return 0;
    char line[256];
    uint64_t kb = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long v;
        if (sscanf(line, "Private_Dirty: %llu kB", &v) == 1) kb += v;
    }
    fclose(f);
    return kb * 1024;
}

static void child_close_fds(int keep) {
    /* Keep 0-2 and the pipe: listening sockets and client connections must
     * not outlive the parent in the child. */
    if (keep != 3) {
        dup2(keep, 3);
        close(keep);
    }
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 4u, ~0u, 0u) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (long fd = 4; fd < max; fd++) close((int)fd);
}

static _Noreturn void child_main(int fd, const char *path, const rdb_save_opts *base) {
    sigset_t all;
    sigfillset(&all);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    pthread_sigmask(SIG_UNBLOCK, &all, NULL);
    child_close_fds(fd);
    fd = 3;
    rdb_save_opts o = *base;
    child_progress cp = {fd, now_ms()};
    o.progress = child_progress_cb;
    o.progress_arg = &cp;
    rdb_save_stats st;
    char err[480];
    err[0] = 0;
    int rc = rdb_save_file(path, &o, &st, err, sizeof(err));
    char line[600];
    snprintf(line, sizeof(line), "R %d %llu %llu %llu\n", rc, (unsigned long long)st.keys,
             (unsigned long long)st.bytes, (unsigned long long)child_private_dirty());
    child_write(fd, line);
    if (rc != RDB_OK) {
        for (char *p = err; *p; p++)
            if (*p == '\n') *p = ' ';
        snprintf(line, sizeof(line), "E %s\n", err);
        child_write(fd, line);
    }
    _exit(rc == RDB_OK ? 0 : 1);
}

/* pst_lock held, keyspace write lock held. */
static int do_bgsave(char *err, size_t errlen) {
    const char *refusal = hugetlb_bgsave_refusal();
    if (refusal) {
        snprintf(err, errlen, "%s", refusal);
        return RDB_ERR_REFUSED;
    }
    if (child_pid != -1) {
        snprintf(err, errlen, "Background save already in progress");
        return RDB_ERR_BUSY;
    }
    if (shutting_down) {
        snprintf(err, errlen, "the server is shutting down");
        return RDB_ERR_BUSY;
    }
    if (aof_rewrite_in_progress()) {
        snprintf(err, errlen, "Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE "
                              "in order to schedule a BGSAVE whenever possible.");
        return RDB_ERR_OTHER_CHILD;
    }
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "can't create a pipe for the child: %s", strerror(errno));
        return RDB_ERR_IO;
    }
    rdb_save_opts o;
    persist_fill_save_opts(&o);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s", cfg.dbfilename);
    uint64_t keys = total_keys();
    __atomic_store_n(&last_bgsave_try, (int64_t)time(NULL), __ATOMIC_RELAXED);
    pid_t pid = process_fork();
    if (pid == 0) {
        close(pfd[0]);
        child_main(pfd[1], path, &o);
    }
    close(pfd[1]);
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        __atomic_store_n(&last_bgsave_ok, 0, __ATOMIC_RELAXED);
        snprintf(err, errlen, "Can't save in background: fork: %s", strerror(e));
        log_warn("%s", err);
        return RDB_ERR_IO;
    }
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    child_pid = pid;
    obj_touch_hold(1);
    child_fd = pfd[0];
    child_start_ms = now_ms();
    child_dirty_start = dirty_now();
    child_buflen = 0;
    child_rc = -1;
    child_keys = child_bytes = child_cow = 0;
    child_err[0] = 0;
    __atomic_store_n(&cur_keys_total, keys, __ATOMIC_RELAXED);
    __atomic_store_n(&cur_keys_done, 0, __ATOMIC_RELAXED);
    log_notice("Background saving started by pid %d", (int)pid);
    return RDB_OK;
}

int persist_bgsave(char *err, size_t errlen) {
    pthread_mutex_lock(&pst_lock);
    int rc = do_bgsave(err, errlen);
    pthread_mutex_unlock(&pst_lock);
    return rc;
}

void persist_bgsave_schedule(void) { __atomic_store_n(&bgsave_scheduled, 1, __ATOMIC_RELAXED); }

/* Parse the child's lines; pst_lock held. */
static void child_read(void) {
    for (;;) {
        if (child_buflen == sizeof(child_buf) - 1) child_buflen = 0; /* a runaway line: drop it */
        ssize_t r = read(child_fd, child_buf + child_buflen, sizeof(child_buf) - 1 - child_buflen);
        if (r <= 0) break;
        child_buflen += (size_t)r;
        child_buf[child_buflen] = 0;
        char *line = child_buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = 0;
            unsigned long long a = 0, b = 0, c = 0;
            int rc;
            if (line[0] == 'P' && sscanf(line, "P %llu %llu", &a, &b) == 2) {
                __atomic_store_n(&cur_keys_done, a, __ATOMIC_RELAXED);
                child_bytes = b;
            } else if (line[0] == 'R' && sscanf(line, "R %d %llu %llu %llu", &rc, &a, &b, &c) == 4) {
                child_rc = rc;
                child_keys = a;
                child_bytes = b;
                child_cow = c;
            } else if (line[0] == 'E' && line[1] == ' ') {
                snprintf(child_err, sizeof(child_err), "%s", line + 2);
            }
            line = nl + 1;
        }
        child_buflen = strlen(line);
        memmove(child_buf, line, child_buflen + 1);
    }
}

/* The child has exited with status; pst_lock held. */
static void child_done(int status) {
    child_read();
    close(child_fd);
    double secs = (double)(now_ms() - child_start_ms) / 1000.0;
    __atomic_store_n(&last_bgsave_secs, (long long)(secs + 0.5), __ATOMIC_RELAXED);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && child_rc == RDB_OK) {
        __atomic_store_n(&dirty_at_save, child_dirty_start, __ATOMIC_RELAXED);
        set_lastsave(time(NULL));
        __atomic_store_n(&last_bgsave_ok, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&stat_saves, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&stat_last_cow, child_cow, __ATOMIC_RELAXED);
        log_notice("Background saving terminated with success (%llu keys, %.1f MB in %.3f s, %.1f MB/s; "
                   "%.1f MB of memory used by copy-on-write)",
                   (unsigned long long)child_keys, mb(child_bytes), secs, secs > 0 ? mb(child_bytes) / secs : 0,
                   mb(child_cow));
    } else {
        __atomic_store_n(&last_bgsave_ok, 0, __ATOMIC_RELAXED);
        if (WIFSIGNALED(status)) {
            char tmp[PATH_MAX];
            rdb_temp_path(tmp, sizeof(tmp), cfg.dbfilename, (long)child_pid);
            unlink(tmp);
            log_warn("Background saving terminated by signal %d", WTERMSIG(status));
        } else {
            log_warn("Background saving error: %s", child_err[0] ? child_err : "the child failed");
        }
    }
    child_pid = -1;
    obj_touch_hold(-1);
    child_fd = -1;
    __atomic_store_n(&cur_keys_total, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&cur_keys_done, 0, __ATOMIC_RELAXED);
}

/* Kill a running child and wait for it; pst_lock held. */
static void child_kill(const char *why) {
    if (child_pid == -1) return;
    log_warn("There is a child saving an .rdb (%s). Killing it!", why);
    kill(child_pid, SIGKILL);
    int status;
    while (waitpid(child_pid, &status, 0) < 0 && errno == EINTR) {
    }
    child_done(status);
    /* A killed BGSAVE is a failure only when something went wrong. */
    __atomic_store_n(&last_bgsave_ok, 1, __ATOMIC_RELAXED);
}

/* ---- save points --------------------------------------------------------------- */

/* The "seconds changes" pairs of the save setting; returns how many. */
static int save_points(long long *secs, long long *changes, int max) {
    char *v = config_value("save");
    int n = 0;
    if (!v) return 0;
    char *save_ptr = NULL;
    for (char *tok = strtok_r(v, " ", &save_ptr); tok && n < max; tok = strtok_r(NULL, " ", &save_ptr)) {
        char *tok2 = strtok_r(NULL, " ", &save_ptr);
        if (!tok2) break;
        secs[n] = atoll(tok);
        changes[n] = atoll(tok2);
        n++;
    }
    free(v);
    return n;
}

static void check_save_points(void) {
    long long secs[16], changes[16];
    int n = save_points(secs, changes, 16);
    if (!n) return;
    uint64_t dirty = persist_dirty();
    int64_t now = time(NULL);
    int64_t last = __atomic_load_n(&srv.lastsave, __ATOMIC_RELAXED);
    int ok = __atomic_load_n(&last_bgsave_ok, __ATOMIC_RELAXED);
    int64_t tried = __atomic_load_n(&last_bgsave_try, __ATOMIC_RELAXED);
    for (int i = 0; i < n; i++) {
        if (dirty < (uint64_t)changes[i] || now - last <= secs[i]) continue;
        if (!ok && now - tried <= BGSAVE_RETRY_DELAY) continue;
        if (aof_rewrite_in_progress()) return; /* one child at a time, as Redis */
        const char *refusal = hugetlb_bgsave_refusal();
        if (refusal) {
            if (!__atomic_exchange_n(&hugetlb_logged, 1, __ATOMIC_RELAXED))
                log_warn("Save point %lld %lld reached but skipped: %s", secs[i], changes[i], refusal);
            return;
        }
        log_notice("%lld changes in %lld seconds. Saving...", changes[i], secs[i]);
        char err[512];
        db_wrlock_keyspace();
        pthread_mutex_lock(&pst_lock);
        if (child_pid == -1 && do_bgsave(err, sizeof(err)) != RDB_OK && !shutting_down)
            log_warn("Save point: %s", err);
        pthread_mutex_unlock(&pst_lock);
        db_unlock_keyspace();
        return;
    }
}

void persist_cron(void) {
    aof_cron();
    pthread_mutex_lock(&pst_lock);
    if (child_pid != -1) {
        child_read();
        int status;
        pid_t r = waitpid(child_pid, &status, WNOHANG);
        if (r == child_pid) {
            child_done(status);
        } else {
            int64_t t = now_ms();
            static int64_t last_log;
            if (t - child_start_ms >= PROGRESS_LOG_MS && t - last_log >= PROGRESS_LOG_MS) {
                last_log = t;
                uint64_t total = __atomic_load_n(&cur_keys_total, __ATOMIC_RELAXED);
                uint64_t done = __atomic_load_n(&cur_keys_done, __ATOMIC_RELAXED);
                double s = (double)(t - child_start_ms) / 1000.0;
                log_notice("BGSAVE: %llu of %llu keys (%.0f%%), %.1f MB in %.1f s (%.1f MB/s)",
                           (unsigned long long)done, (unsigned long long)total,
                           total ? 100.0 * (double)done / (double)total : 100.0, mb(child_bytes), s,
                           s > 0 ? mb(child_bytes) / s : 0);
            }
        }
    }
    int idle = child_pid == -1 && !shutting_down;
    pthread_mutex_unlock(&pst_lock);
    if (!idle || __atomic_load_n(&loading, __ATOMIC_RELAXED)) return;
    if (__atomic_load_n(&bgsave_scheduled, __ATOMIC_RELAXED)) {
        char err[512];
        db_wrlock_keyspace();
        pthread_mutex_lock(&pst_lock);
        int rc = do_bgsave(err, sizeof(err));
        pthread_mutex_unlock(&pst_lock);
        db_unlock_keyspace();
        int wait = rc == RDB_ERR_BUSY || rc == RDB_ERR_OTHER_CHILD;
        if (!wait) __atomic_store_n(&bgsave_scheduled, 0, __ATOMIC_RELAXED);
        if (rc != RDB_OK && !wait) log_warn("Scheduled BGSAVE: %s", err);
        return;
    }
    check_save_points();
}

static void *cron_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-persist");
    while (__atomic_load_n(&cron_run, __ATOMIC_RELAXED)) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
        persist_cron();
    }
    return NULL;
}

void persist_start(void) {
    /* Build the CRC tables now: a forked child must never be the one to
     * wait on a pthread_once another thread was inside at fork time. */
    crc64_update(0, "", 0);
    /* Fault injection for the persistence tests (tests/persist): slow
     * saves to kill them half-way, slow loads to watch -LOADING. */
    const char *slow = getenv("GOBLIN_TEST_RDB_SAVE_SLOW_US");
    if (slow && *slow) rdb_save_slow_us = atol(slow);
    slow = getenv("GOBLIN_TEST_RDB_LOAD_SLOW_US");
    if (slow && *slow) rdb_load_slow_us = atol(slow);
    __atomic_store_n(&dirty_at_save, dirty_now(), __ATOMIC_RELAXED);
    if (config_bind_int("rdbcompression", &rdb_compress) || config_bind_int("rdbchecksum", &rdb_checksum) ||
        config_bind_int("rdb-save-incremental-fsync", &rdb_incr_fsync) ||
        config_bind_int("rdb-key-save-delay", &rdb_key_save_delay) ||
        config_bind_int("key-load-delay", &rdb_key_load_delay))
        abort(); /* the table lost a row */
    aof_config_register();
    __atomic_store_n(&cron_run, 1, __ATOMIC_RELAXED);
    if (pthread_create(&cron_tid, NULL, cron_main, NULL) != 0) {
        __atomic_store_n(&cron_run, 0, __ATOMIC_RELAXED);
        log_warn("persistence: can't start the persistence thread; save points are off");
    }
}

void persist_stop(void) {
    if (__atomic_exchange_n(&cron_run, 0, __ATOMIC_RELAXED)) pthread_join(cron_tid, NULL);
    pthread_mutex_lock(&pst_lock);
    child_kill("shutdown");
    pthread_mutex_unlock(&pst_lock);
    aof_stop();
}

/* ---- loading --------------------------------------------------------------------- */

int persist_loading(void) { return __atomic_load_n(&loading, __ATOMIC_RELAXED); }
int persist_async_loading(void) { return __atomic_load_n(&async_loading, __ATOMIC_RELAXED); }

void persist_loading_progress(uint64_t loaded, uint64_t total) {
    __atomic_store_n(&loading_total, total, __ATOMIC_RELAXED);
    __atomic_store_n(&loading_loaded, loaded, __ATOMIC_RELAXED);
}

void persist_abort_loading(void) { __atomic_store_n(&load_abort, 1, __ATOMIC_RELAXED); }

static void load_progress_cb(void *arg, uint64_t keys, uint64_t bytes) {
    __atomic_store_n(&loading_loaded, bytes, __ATOMIC_RELAXED);
    progress_cb(arg, keys, bytes);
}

/* Read path into ld with progress; no lock held. dropped (or NULL) gets
 * the keys dropped as expired. */
static int load_into(const char *path, const char *what, rdb_loaded *ld, dropped_list *dropped, char *err,
                     size_t errlen) {
    struct stat st;
    uint64_t size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    progress_log pl = {what, now_ms(), now_ms(), 0, size};
    rdb_load_opts o = {load_progress_cb, &pl, &load_abort, 0, dropped ? dropped_add : NULL, dropped,
                       __atomic_load_n(&rdb_key_load_delay, __ATOMIC_RELAXED)};
    __atomic_store_n(&loading_total, size, __ATOMIC_RELAXED);
    __atomic_store_n(&loading_loaded, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&loading_start_ms, pl.start, __ATOMIC_RELAXED);
    int rc = rdb_load_file(path, &o, ld, err, errlen);
    if (rc == RDB_OK) {
        double secs = (double)(now_ms() - pl.start) / 1000.0;
        log_notice("%s: done loading RDB%s%s, keys loaded: %llu, keys expired: %llu, empty keys skipped: %llu (%.1f MB "
                   "in %.3f s, %.1f MB/s)",
                   what, ld->redis_ver[0] ? " produced by version " : "", ld->redis_ver,
                   (unsigned long long)ld->keys, (unsigned long long)ld->expired, (unsigned long long)ld->empty,
                   mb(ld->bytes), secs, secs > 0 ? mb(ld->bytes) / secs : 0);
        __atomic_store_n(&last_load_keys, ld->keys, __ATOMIC_RELAXED);
        __atomic_store_n(&last_load_expired, ld->expired, __ATOMIC_RELAXED);
    }
    return rc;
}

static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int persist_load(const char *path, uint64_t *keys, char *err, size_t errlen) {
    if (__atomic_exchange_n(&load_busy, 1, __ATOMIC_ACQUIRE)) {
        snprintf(err, errlen, "another LOAD is in progress");
        return RDB_ERR_BUSY;
    }
    rdb_loaded ld;
    int rc = load_into(path, "LOAD", &ld, NULL, err, errlen);
    if (rc == RDB_OK) {
        db_wrlock_keyspace();
        rdb_load_commit(&ld);
        db_signal_replaced(); /* every WATCHed key changed */
        /* The dataset now equals the dump when it came from it; otherwise
         * it is as many changes as keys, so save points notice. */
        if (same_file(path, cfg.dbfilename)) __atomic_store_n(&dirty_at_save, dirty_now(), __ATOMIC_RELAXED);
        else db_dirty_add(ld.keys);
        db_unlock_keyspace();
        *keys = ld.keys;
    } else {
        log_warn("LOAD %s failed: %s", path, err);
    }
    rdb_load_discard(&ld); /* the old dataset, or what was built */
    __atomic_store_n(&load_busy, 0, __ATOMIC_RELEASE);
    return rc;
}

int persist_stream_load(rdb_read_fn *rd, void *arg, int async, long long total, persist_verify_fn *verify,
                        void *varg, uint64_t *keys, char *err, size_t errlen) {
    if (__atomic_exchange_n(&load_busy, 1, __ATOMIC_ACQUIRE)) {
        snprintf(err, errlen, "another LOAD is in progress");
        return RDB_ERR_BUSY;
    }
    progress_log pl = {"MASTER <-> REPLICA sync", now_ms(), now_ms(), 0, total > 0 ? (uint64_t)total : 0};
    rdb_load_opts o = {load_progress_cb, &pl, NULL, 0, NULL, NULL, __atomic_load_n(&rdb_key_load_delay, __ATOMIC_RELAXED)};
    __atomic_store_n(&loading_total, pl.total_bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&loading_loaded, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&loading_start_ms, pl.start, __ATOMIC_RELAXED);
    __atomic_store_n(async ? &async_loading : &loading, 1, __ATOMIC_RELAXED);
    rdb_loaded ld;
    int rc = rdb_load_reader(rd, arg, &o, &ld, err, errlen);
    if (rc == RDB_OK && verify && verify(varg, &ld, err, errlen) != 0) {
        rc = RDB_ERR_TRUNCATED;
        rdb_load_discard(&ld);
    }
    if (rc == RDB_OK) {
        double secs = (double)(now_ms() - pl.start) / 1000.0;
        log_notice("MASTER <-> REPLICA sync: done loading RDB%s%s from the socket, keys loaded: %llu, keys expired: "
                   "%llu (%.1f MB in %.3f s)",
                   ld.redis_ver[0] ? " produced by version " : "", ld.redis_ver, (unsigned long long)ld.keys,
                   (unsigned long long)ld.expired, mb(ld.bytes), secs);
        __atomic_store_n(&last_load_keys, ld.keys, __ATOMIC_RELAXED);
        __atomic_store_n(&last_load_expired, ld.expired, __ATOMIC_RELAXED);
        db_wrlock_keyspace();
        rdb_load_commit(&ld);
        db_signal_replaced(); /* every WATCHed key changed */
        db_dirty_add(ld.keys);
        /* The loading state ends with the swap, under the lock: no client
         * sees neither the old data nor -LOADING in between. */
        __atomic_store_n(async ? &async_loading : &loading, 0, __ATOMIC_RELAXED);
        db_unlock_keyspace();
        *keys = ld.keys;
        rdb_load_discard(&ld); /* the old dataset */
    }
    __atomic_store_n(async ? &async_loading : &loading, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&load_busy, 0, __ATOMIC_RELEASE);
    return rc;
}

/* Whether persist_loading_begin found a dump to load: the start-up load
 * decides on what was there before clients were served (a client's SAVE
 * meanwhile must not be loaded over what it did). */
static int startup_dump_found;

void persist_loading_begin(void) {
    if (aof_enabled()) {
        /* With appendonly yes the AOF is the dataset, not the dump. Even a
         * first start (nothing to load) answers -LOADING until the AOF is
         * open: a write served before its sink is registered would be
         * acknowledged and never logged. */
        __atomic_store_n(&loading_start_ms, now_ms(), __ATOMIC_RELAXED);
        __atomic_store_n(&loading, 1, __ATOMIC_RELAXED);
        return;
    }
    struct stat st;
    int found = stat(cfg.dbfilename, &st) == 0;
    if (found || errno != ENOENT) {
        startup_dump_found = 1;
        __atomic_store_n(&loading_start_ms, now_ms(), __ATOMIC_RELAXED);
        __atomic_store_n(&loading_total, found ? (uint64_t)st.st_size : 0, __ATOMIC_RELAXED);
        __atomic_store_n(&loading, 1, __ATOMIC_RELAXED);
    }
}

/* appendonly yes: load the AOF, then open it for writing; the dump is not
 * read (as Redis 7.0). aof_load_at_startup logs why it failed. */
static int aof_startup(char *err, size_t errlen) {
    char msg[1200];
    int logged = 0;
    int rc = aof_load_at_startup(msg, sizeof(msg));
    if (rc == 0) {
        __atomic_store_n(&dirty_at_save, dirty_now(), __ATOMIC_RELAXED);
        rc = aof_open_at_startup(msg, sizeof(msg));
    } else {
        logged = 1; /* the loader logged why, once, as Redis */
    }
    __atomic_store_n(&loading, 0, __ATOMIC_RELAXED);
    if (rc != 0) {
        snprintf(err, errlen, "%s. Exiting.", msg);
        return logged ? PERSIST_LOAD_FAILED_LOGGED : PERSIST_LOAD_FAILED;
    }
    return 0;
}

int persist_load_at_startup(char *err, size_t errlen) {
    if (aof_enabled()) return aof_startup(err, errlen);
    const char *path = cfg.dbfilename;
    struct stat st;
    if (!startup_dump_found || (stat(path, &st) != 0 && errno == ENOENT)) {
        __atomic_store_n(&loading, 0, __ATOMIC_RELAXED);
        log_notice("No RDB file %s/%s: starting with an empty dataset", cfg.dir, path);
        aof_set_live();
        return 0;
    }
    __atomic_store_n(&loading, 1, __ATOMIC_RELAXED);
    rdb_loaded ld;
    char msg[1024];
    dropped_list dropped = {0};
    int rc = load_into(path, "Loading", &ld, repl_resume_fn ? &dropped : NULL, msg, sizeof(msg));
    if (rc == RDB_OK) {
        memcpy(loaded_repl_id, ld.repl_id, sizeof(loaded_repl_id));
        loaded_repl_offset = ld.repl_offset;
        loaded_repl_db = ld.repl_stream_db;
        db_wrlock_keyspace();
        rdb_load_commit(&ld);
        __atomic_store_n(&dirty_at_save, dirty_now(), __ATOMIC_RELAXED);
        db_unlock_keyspace();
        /* Before any client writes: the stream the dump names goes on
         * from its offset (Redis 7.0 requires a stream database too). */
        if (repl_resume_fn && loaded_repl_id[0] && loaded_repl_offset >= 0 && loaded_repl_db >= 0)
            repl_resume_fn(loaded_repl_id, loaded_repl_offset, dropped.k, dropped.n);
    }
    dropped_free(&dropped);
    rdb_load_discard(&ld);
    __atomic_store_n(&loading, 0, __ATOMIC_RELAXED);
    if (rc == RDB_ERR_ABORTED) return 1;
    if (rc != RDB_OK) {
        snprintf(err, errlen, "Fatal error loading the DB from %s/%s: %s: %s. Exiting.", cfg.dir, path, rdb_err_name(rc),
                 msg);
        /* The reason, then Redis's own last line, which its tooling and
         * tests look for. */
        log_warn("%s", err);
        log_warn("Terminating server after rdb file reading failure.");
        return PERSIST_LOAD_FAILED_LOGGED;
    }
    aof_set_live();
    log_notice("DB loaded from disk: %.3f seconds",
               (double)(now_ms() - __atomic_load_n(&loading_start_ms, __ATOMIC_RELAXED)) / 1000.0);
    return 0;
}

/* ---- shutdown, FLUSHALL, DEBUG RELOAD ------------------------------------------------ */

int persist_shutdown(int how, char *err, size_t errlen) {
    if (aof_first_base_pending()) {
        /* The AOF turned on at run time has no base yet: exiting now would
         * leave a directory without the dataset (Redis refuses too). */
        log_warn("Writing initial AOF, can't exit.");
        snprintf(err, errlen, "Writing initial AOF, can't exit.");
        return -1;
    }
    pthread_mutex_lock(&pst_lock);
    shutting_down = 1;
    child_kill("shutdown");
    pthread_mutex_unlock(&pst_lock);
    aof_rewrite_abort_for_shutdown();
    if (persist_loading()) {
        persist_abort_loading();
        log_warn("Shutdown during loading: not saving");
        return 0;
    }
    int want = how == PERSIST_SHUTDOWN_SAVE;
    if (how == PERSIST_SHUTDOWN_DEFAULT) {
        long long s[1], c[1];
        want = save_points(s, c, 1) > 0;
    }
    if (!want) return 0;
    log_notice("Saving the final RDB snapshot before exiting.");
    db_wrlock_keyspace();
    int rc = do_save("SHUTDOWN", err, errlen);
    db_unlock_keyspace();
    if (rc != RDB_OK) {
        log_warn("Error trying to save the DB, can't exit.");
        return -1;
    }
    return 0;
}

int persist_shutdown_decided(void) {
    pthread_mutex_lock(&pst_lock);
    int on = shutting_down;
    pthread_mutex_unlock(&pst_lock);
    return on;
}

void persist_shutdown_cancelled(void) {
    log_warn("Errors trying to shut down the server. Check the logs for more information.");
    pthread_mutex_lock(&pst_lock);
    shutting_down = 0;
    pthread_mutex_unlock(&pst_lock);
}

void persist_after_flushall(void) {
    pthread_mutex_lock(&pst_lock);
    child_kill("FLUSHALL");
    pthread_mutex_unlock(&pst_lock);
    long long s[1], c[1];
    if (save_points(s, c, 1) == 0) return;
    char err[512];
    do_save("FLUSHALL", err, sizeof(err));
}

int persist_debug_reload(int nosave, char *err, size_t errlen) {
    int rc = RDB_OK;
    db_wrlock_keyspace();
    if (!nosave) rc = persist_save(err, errlen);
    rdb_loaded ld;
    memset(&ld, 0, sizeof(ld));
    if (rc == RDB_OK) rc = load_into(cfg.dbfilename, "DEBUG RELOAD", &ld, NULL, err, errlen);
    if (rc == RDB_OK) {
        rdb_load_commit(&ld);
        db_signal_replaced();
        __atomic_store_n(&dirty_at_save, dirty_now(), __ATOMIC_RELAXED);
    }
    db_unlock_keyspace();
    rdb_load_discard(&ld);
    return rc;
}

int persist_debug_loadaof(char *err, size_t errlen) {
    db_wrlock_keyspace();
    __atomic_store_n(&loading_start_ms, now_ms(), __ATOMIC_RELAXED);
    __atomic_store_n(&loading, 1, __ATOMIC_RELAXED);
    int rc = aof_debug_load(err, errlen);
    if (rc == 0) {
        db_signal_replaced();
        /* What was replayed is no change to save (Redis: dirty = 0). */
        __atomic_store_n(&dirty_at_save, dirty_now(), __ATOMIC_RELAXED);
    }
    __atomic_store_n(&loading, 0, __ATOMIC_RELAXED);
    db_unlock_keyspace();
    return rc;
}

/* ---- INFO ------------------------------------------------------------------------------ */

/* RDB children of replication's full syncs running now (persist_repl_child). */
static int repl_children;

void persist_repl_child(int delta) { __atomic_add_fetch(&repl_children, delta, __ATOMIC_RELAXED); }

void persist_stats_reset(void) {
    __atomic_store_n(&stat_saves, 0, __ATOMIC_RELAXED);
    aof_stats_reset();
}

void persist_info(strbuf *b) {
    pthread_mutex_lock(&pst_lock);
    int in_progress = child_pid != -1 || __atomic_load_n(&repl_children, __ATOMIC_RELAXED) > 0;
    int64_t started = child_start_ms;
    pthread_mutex_unlock(&pst_lock);
    int64_t now = now_ms();
    uint64_t total = __atomic_load_n(&cur_keys_total, __ATOMIC_RELAXED);
    uint64_t done = __atomic_load_n(&cur_keys_done, __ATOMIC_RELAXED);
    int is_loading = persist_loading();
    int is_async = __atomic_load_n(&async_loading, __ATOMIC_RELAXED);
    strbuf_addf(b,
              "# Persistence\r\n"
              "loading:%d\r\n"
              "async_loading:%d\r\n"
              "current_cow_peak:0\r\n"
              "current_cow_size:0\r\n"
              "current_cow_size_age:0\r\n"
              "current_fork_perc:%.2f\r\n"
              "current_save_keys_processed:%llu\r\n"
              "current_save_keys_total:%llu\r\n"
              "rdb_changes_since_last_save:%llu\r\n"
              "rdb_bgsave_in_progress:%d\r\n"
              "rdb_last_save_time:%lld\r\n"
              "rdb_last_bgsave_status:%s\r\n"
              "rdb_last_bgsave_time_sec:%lld\r\n"
              "rdb_current_bgsave_time_sec:%lld\r\n"
              "rdb_saves:%llu\r\n"
              "rdb_last_cow_size:%llu\r\n"
              "rdb_last_load_keys_expired:%llu\r\n"
              "rdb_last_load_keys_loaded:%llu\r\n",
              is_loading, is_async, total ? 100.0 * (double)done / (double)total : 0.0, (unsigned long long)done,
              (unsigned long long)total, (unsigned long long)persist_dirty(), in_progress,
              (long long)__atomic_load_n(&srv.lastsave, __ATOMIC_RELAXED),
              __atomic_load_n(&last_bgsave_ok, __ATOMIC_RELAXED) ? "ok" : "err",
              __atomic_load_n(&last_bgsave_secs, __ATOMIC_RELAXED),
              in_progress ? (long long)((now - started) / 1000) : -1LL,
              (unsigned long long)__atomic_load_n(&stat_saves, __ATOMIC_RELAXED),
              (unsigned long long)__atomic_load_n(&stat_last_cow, __ATOMIC_RELAXED),
              (unsigned long long)__atomic_load_n(&last_load_expired, __ATOMIC_RELAXED),
              (unsigned long long)__atomic_load_n(&last_load_keys, __ATOMIC_RELAXED));
    aof_info(b);
    strbuf_addf(b, "module_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n");
    aof_info_tail(b);
    if (is_loading || is_async) {
        int64_t start = __atomic_load_n(&loading_start_ms, __ATOMIC_RELAXED);
        uint64_t tot = __atomic_load_n(&loading_total, __ATOMIC_RELAXED);
        uint64_t got = __atomic_load_n(&loading_loaded, __ATOMIC_RELAXED);
        double elapsed = (double)(now - start) / 1000.0;
        double perc = tot ? 100.0 * (double)got / (double)tot : 0.0;
        long long eta = got && tot > got ? (long long)(elapsed * (double)(tot - got) / (double)got) : (got ? 0 : 1);
        strbuf_addf(b,
                  "loading_start_time:%lld\r\n"
                  "loading_total_bytes:%llu\r\n"
                  "loading_rdb_used_mem:0\r\n"
                  "loading_loaded_bytes:%llu\r\n"
                  "loading_loaded_perc:%.2f\r\n"
                  "loading_eta_seconds:%lld\r\n",
                  (long long)(start / 1000), (unsigned long long)tot, (unsigned long long)got, perc, eta);
    }
    const char *refusal = hugetlb_bgsave_refusal();
    if (refusal) strbuf_addf(b, "rdb_bgsave_disabled:1\r\nrdb_bgsave_disabled_reason:%s\r\n", refusal);
}
