/* primary.c -- the primary side of replication (see repl.h).
 *
 * State: the replication ids, master_repl_offset (bytes of the stream so
 * far), the backlog and the links to attached replicas, all under `mu`.
 * The stream reaches them through a write-stream sink (created with the
 * backlog when the first replica attaches) that runs under the stream
 * lock: it feeds the backlog and appends to every link's pending bytes.
 * Invariant: a link's pending bytes are exactly the stream from its start
 * offset (the point of its RDB snapshot, or its PSYNC offset) on, because
 * the link is registered under the keyspace write lock and the stream
 * lock at that point.
 *
 * Each link has a thread: the full sync (a fork child writes the RDB into
 * a pipe for a diskless sync, which one link's thread sends to every
 * replica that waited out the delay with it, or into a file; under
 * arena-hugetlb, where
 * fork is refused, the thread itself writes it with a fork-less versioned
 * iteration, persist/rdb_snap.h, while clients keep writing: each key's
 * value as of the offset, written by the pass or, before its first change,
 * by the command that changes it; the writers' buffer is bounded by
 * repl-backlog-size; see full_sync_forkless and docs/replication.md),
 * then it sends the pending bytes and reads the replica's REPLCONF ACKs
 * until the link fails or times out.
 *
 * The cron thread feeds PING every repl-ping-replica-period, answers WAIT
 * deadlines and frees the backlog after repl-backlog-ttl without
 * replicas. */
#include "cmd/cron.h"
#include "cmd/repl/repl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "base/process.h"
#include "base/tls.h"
#include "cmd/command.h"
#include "cmd/propagate.h"
#include "cmd/repl/backlog.h"
#include "cmd/repl/handshake.h"
#include "cmd/server/acl.h"
#include "db/db.h"
#include "mem/hugetlb.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "persist/rdb_snap.h"
#include "persist/wstream.h"
#include "session/reply.h"
#include "session/session.h"
#include "util/rand.h"
#include "util/fdio.h"
#include "util/strutil.h"

/* ---- settings ------------------------------------------------------------ */

static long long backlog_size = 1 << 20; /* repl-backlog-size */
static long long backlog_ttl = 3600;     /* repl-backlog-ttl */
static int ping_period = 10;             /* repl-ping-replica-period */
static int repl_timeout = 60;            /* repl-timeout */
static int diskless_sync = 1;            /* repl-diskless-sync */
static int diskless_delay = 5;           /* repl-diskless-sync-delay */
static int diskless_max = 0;             /* repl-diskless-sync-max-replicas */
static int min_replicas = 0;             /* min-replicas-to-write */
static int min_replicas_lag = 10;        /* min-replicas-max-lag */
static int nodelay_off;                  /* repl-disable-tcp-nodelay */

static int get(const int *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }
static long long getll(const long long *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }

#define BACKLOG_MIN_SIZE (16 * 1024)
/* The backlog's size: repl-backlog-size, at least BACKLOG_MIN_SIZE. */
static size_t backlog_bytes(void) {
    long long n = getll(&backlog_size);
    return n < BACKLOG_MIN_SIZE ? BACKLOG_MIN_SIZE : (size_t)n;
}

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- state ---------------------------------------------------------------- */

enum { LINK_WAIT_START, LINK_SYNCING, LINK_ONLINE };


typedef struct rlink {
    int fd;
    SSL *ssl;                /* a replica on tls-port: the link over TLS */
    int efd;                 /* eventfd: pending bytes arrived */
    int state;               /* mu */
    int full;                /* needs a full sync */
    int capa_eof;
    int psync;               /* 0: SYNC (no +FULLRESYNC line) */
    int filter, filter_functions; /* REPLCONF rdb-filter-only (handshake.h) */
    int rdb_only;            /* REPLCONF rdb-only: the RDB, no stream, then closed */
    char ip[64];
    int port;                /* REPLCONF listening-port */
    char *out;               /* pending stream bytes (mu) */
    size_t olen, ocap;
    /* mu: the link's thread is about to wait in poll with nothing to send;
     * only then do the stream's appends need to wake it. */
    int idle;
    int64_t soft_since;      /* over the soft output limit since (ms) */
    uint64_t ack;            /* last acknowledged offset (mu) */
    int64_t ack_ms;          /* when (mu) */
    int dead;                /* mu: the link goes away */
    /* After a diskless sync the stream waits for the replica's first ACK:
     * a replica reading the RDB up to the EOF mark may read past it (as
     * Redis's repl_start_cmd_stream_on_ack). mu. */
    int wait_ack;
    /* mu: in repl-diskless-sync-delay's wait, and released from it early
     * (repl-diskless-sync-max-replicas replicas were waiting, or another
     * link's sync took this one in). */
    int in_delay, delay_go;
    /* mu: the link whose diskless sync sends this one's RDB too (NULL:
     * none), and the outcome it leaves here (SYNC_PENDING until then). */
    struct rlink *rdb_by;
    int sync_rc;
    /* The client it was, for CLIENT LIST and KILL (flags S). */
    uint64_t cid;
    char addr[64], laddr[64];
    char *name, *user;
    int64_t ctime_ms;
    int resp;
    struct rlink *next;
} rlink;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shared_done = PTHREAD_COND_INITIALIZER; /* with mu: a shared sync's outcomes are in */
#define SYNC_PENDING 1
static char replid[41], replid2[41] = "0000000000000000000000000000000000000000";
static long long second_off = -1;
static uint64_t master_off;       /* master_repl_offset */
static repl_backlog bl;           /* buf NULL: none */
static int64_t no_replicas_since; /* ms, for repl-backlog-ttl */
static rlink *links;
static int nlinks;
static int sink_on;
static int following;             /* this node is a replica: own records are not replicated */

static void random_replid(char *out) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 40; i++) out[i] = hex[rand_below(16)];
    out[40] = '\0';
}

uint64_t repl_offset(void) {
    pthread_mutex_lock(&mu);
    uint64_t off = master_off;
    pthread_mutex_unlock(&mu);
    return off;
}

void repl_buffer_memory(size_t *backlog, size_t *replicas) {
    pthread_mutex_lock(&mu);
    *backlog = bl.buf ? bl.size : 0;
    size_t n = 0;
    for (rlink *l = links; l; l = l->next) n += l->ocap;
    *replicas = n;
    pthread_mutex_unlock(&mu);
}

void repl_replid(char id[41]) {
    pthread_mutex_lock(&mu);
    memcpy(id, replid, 41);
    pthread_mutex_unlock(&mu);
}

void repl_shift_replid(void) {
    char id[41], id2[41];
    pthread_mutex_lock(&mu);
    memcpy(replid2, replid, 41);
    second_off = (long long)master_off + 1;
    random_replid(replid);
    long long soff = second_off;
    memcpy(id, replid, 41);
    memcpy(id2, replid2, 41);
    pthread_mutex_unlock(&mu);
    log_notice("Setting secondary replication ID to %s, valid up to offset: %lld. New replication ID is %s", id2, soff,
               id);
}

void repl_set_ids(const char *id, const char *id2, long long soff, uint64_t off) {
    /* A replica keeps a backlog of its primary's stream, so that after a
     * promotion its own replicas can continue (as Redis). */
    pthread_mutex_lock(&mu);
    snprintf(replid, sizeof(replid), "%s", id);
    if (id2) snprintf(replid2, sizeof(replid2), "%s", id2);
    second_off = soff;
    if (off != master_off && bl.buf) backlog_free(&bl); /* a new history starts at off */
    if (!bl.buf && backlog_init(&bl, backlog_bytes(), off + 1) != 0) bl.buf = NULL;
    master_off = off;
    pthread_mutex_unlock(&mu);
}

static int sink_ensure(void);

void repl_primary_resume(const char id[41], long long offset, const persist_dropped_key *keys, size_t n) {
    if (sink_ensure() != 0) {
        log_warn("Can't attach to the write stream: the replication stream of the RDB is not continued");
        return;
    }
    wstream_lock(); /* between two records of the stream */
    pthread_mutex_lock(&mu);
    memcpy(replid2, id, 41);
    second_off = offset + 1;
    master_off = (uint64_t)offset;
    if (bl.buf) backlog_free(&bl);
    if (backlog_init(&bl, backlog_bytes(), master_off + 1) != 0) bl.buf = NULL;
    no_replicas_since = now_ms();
    pthread_mutex_unlock(&mu);
    wstream_force_select_locked(1);
    wstream_unlock();
    for (size_t i = 0; i < n; i++) prop_deletion(keys[i].dbid, PROP_DEL_EXPIRED, keys[i].p, keys[i].n);
    log_notice("Continuing the replication stream of the RDB: secondary replication ID %s, valid up to offset "
               "%lld; %zu expired keys deleted in it",
               id, offset + 1, n);
}

int repl_primary_save_info(char id[41], long long *offset, int *stream_db) {
    int db = wstream_repl_db();
    pthread_mutex_lock(&mu);
    int ok = bl.buf != NULL && !following;
    if (ok) {
        memcpy(id, replid, 41);
        *offset = (long long)master_off;
        *stream_db = db < 0 ? 0 : db;
    }
    pthread_mutex_unlock(&mu);
    return ok;
}

/* ---- links' pending bytes ---------------------------------------------- */

static void wake(rlink *l) {
    uint64_t one = 1;
    if (write(l->efd, &one, sizeof(one)) < 0) { /* already signalled */
    }
}

/* Wake l's thread if it is (about to be) waiting with nothing to send (mu
 * held): a thread that has bytes to send polls for the socket being
 * writable and takes the new bytes with them, no eventfd write needed. */
static void wake_idle(rlink *l) {
    if (!l->idle) return;
    l->idle = 0;
    wake(l);
}

/* A worker thread's appends wake the links once, at the end of its loop
 * iteration (repl_batch_end), not once per record. */
static _Thread_local int tl_batching, tl_kick;

/* Append to a link (mu held); a link over its output limits dies, as
 * Redis's client-output-buffer-limit replica class. */
static void link_append(rlink *l, const char *p, size_t n) {
    if (l->dead || !n) return;
    if (l->olen + n > l->ocap) {
        size_t nc = l->ocap ? l->ocap : 16384;
        while (nc < l->olen + n) nc *= 2;
        char *nb = realloc(l->out, nc);
        if (!nb) {
            l->dead = 1;
            return;
        }
        l->out = nb;
        l->ocap = nc;
    }
    int was_empty = l->olen == 0;
    memcpy(l->out + l->olen, p, n);
    l->olen += n;
    long long hard, soft, secs;
    config_obl(CONFIG_OBL_REPLICA, &hard, &soft, &secs);
    if (hard && (long long)l->olen > hard) {
        log_warn("Client id=0 addr=%s:%d flags=S scheduled to be closed ASAP for overcoming of output buffer "
                 "limits.",
                 l->ip, l->port);
        l->dead = 1;
    } else if (soft && (long long)l->olen > soft) {
        int64_t t = now_ms();
        if (!l->soft_since) l->soft_since = t;
        else if (t - l->soft_since > secs * 1000) l->dead = 1;
    } else {
        l->soft_since = 0;
    }
    if (l->dead) {
        wake(l);
    } else if (was_empty && l->idle) {
        if (tl_batching) tl_kick = 1;
        else wake_idle(l);
    }
}

void repl_batch_begin(void) { tl_batching = 1; }

void repl_batch_end(void) {
    if (!tl_kick) return;
    tl_kick = 0;
    pthread_mutex_lock(&mu);
    for (rlink *l = links; l; l = l->next)
        if (l->dead) wake(l);
        else if (l->olen) wake_idle(l);
    pthread_mutex_unlock(&mu);
}

/* The stream's bytes (mu held): backlog, links that take the stream. */
static void feed_locked(const char *p, size_t n) {
    if (!bl.buf && !links) return; /* as Redis: no backlog, no replica, no offset */
    if (bl.buf) backlog_feed(&bl, p, n);
    master_off += n;
    for (rlink *l = links; l; l = l->next)
        if (l->state != LINK_WAIT_START && !l->rdb_only) link_append(l, p, n);
}

static void sink_write(void *arg, const char *p, size_t n) {
    (void)arg;
    pthread_mutex_lock(&mu);
    if (!following) feed_locked(p, n);
    pthread_mutex_unlock(&mu);
}

static const wstream_sink sink = {sink_write, NULL, 1};

void repl_feed_from_primary(const char *p, size_t n) {
    pthread_mutex_lock(&mu);
    feed_locked(p, n);
    pthread_mutex_unlock(&mu);
}

/* A record of the primary's own (PING, REPLCONF GETACK), into the
 * replication stream only: not the AOF. */
static void feed_own(int argc, const char *const *argv) {
    char buf[256];
    size_t len = (size_t)snprintf(buf, sizeof(buf), "*%d\r\n", argc);
    for (int i = 0; i < argc; i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    wstream_lock(); /* between two records of the stream, never inside one */
    pthread_mutex_lock(&mu);
    if (!following && nlinks) feed_locked(buf, len);
    pthread_mutex_unlock(&mu);
    wstream_unlock();
}

/* The first replica: the sink joins the write stream (no lock held; it
 * stays: with no backlog and no replica it only returns). */
static pthread_mutex_t sink_mu_g = PTHREAD_MUTEX_INITIALIZER;

static int sink_ensure(void) {
    pthread_mutex_lock(&sink_mu_g);
    int rc = 0;
    if (!__atomic_load_n(&sink_on, __ATOMIC_ACQUIRE)) {
        rc = wstream_add_sink(&sink);
        if (rc == 0) __atomic_store_n(&sink_on, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sink_mu_g);
    return rc;
}

static void sink_drop(void) {
    pthread_mutex_lock(&sink_mu_g);
    if (__atomic_load_n(&sink_on, __ATOMIC_ACQUIRE)) {
        wstream_remove_sink(&sink);
        __atomic_store_n(&sink_on, 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sink_mu_g);
}

/* ... and the backlog (mu held). */
static int backlog_create_locked(void) {
    if (bl.buf) return 0;
    return backlog_init(&bl, backlog_bytes(), master_off + 1);
}

/* ---- the link thread ------------------------------------------------------ */

static void link_free(rlink *l) {
    pthread_mutex_lock(&mu);
    rlink **pp = &links;
    while (*pp && *pp != l) pp = &(*pp)->next;
    if (*pp) *pp = l->next;
    nlinks--;
    if (!nlinks) no_replicas_since = now_ms();
    pthread_mutex_unlock(&mu);
    tls_close(l->ssl);
    close(l->fd);
    close(l->efd);
    free(l->out);
    free(l->name);
    free(l->user);
    free(l);
}

/* All of p to the replica, on the blocking socket of the sync: through
 * TLS when the link has it. 0, or -1. */
static int link_write_all(rlink *l, const void *p, size_t n) {
    int rc = l->ssl ? tls_write_all(l->ssl, p, n) : fd_write_all(l->fd, p, n);
    if (rc == 0) repl_stat_bytes(REPL_BYTES_OUT, n);
    return rc;
}

static _Noreturn void sync_child(int fd, const rdb_save_opts *o) {
    sigset_t all;
    sigfillset(&all);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &all, NULL);
    /* Sockets and the parent's files are not the child's business. */
#ifdef SYS_close_range
    if (fd > 3) syscall(SYS_close_range, 3u, (unsigned)fd - 1, 0u);
    syscall(SYS_close_range, (unsigned)fd + 1, ~0u, 0u);
#endif
    /* A pipe cannot be fdatasync'ed (EINVAL): no incremental fsync, or
     * every dump past RDB_AUTOSYNC_BYTES would fail. */
    rdb_save_opts so = *o;
    so.incremental_fsync = 0;
    rdb_save_stats st;
    char err[256];
    int rc = rdb_save_fd(fd, &so, &st, err, sizeof(err));
    _exit(rc == RDB_OK ? 0 : 1);
}

/* Keep a replica waiting for its RDB from timing out (Redis sends "\n"). */
static void keepalive(rlink *l) {
    if (cron_is_paused()) return; /* Redis's replicationCron sends them: stopped with the cron */
    if (link_write_all(l, "\n", 1) < 0) { /* the next write will tell */
    }
}

/* The RDB file at path to the replica, with a $<length> header. */
static int send_file(rlink *l, const char *path) {
    int rc, fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        rc = -1;
    } else {
        char head[64];
        int k = snprintf(head, sizeof(head), "$%lld\r\n", (long long)st.st_size);
        rc = link_write_all(l, head, (size_t)k);
        off_t pos = 0;
        /* TLS: the file's bytes go through OpenSSL, read in chunks. */
        char buf[65536];
        while (rc == 0 && l->ssl && pos < st.st_size) {
            ssize_t n = pread(fd, buf, sizeof(buf), pos);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0 || link_write_all(l, buf, (size_t)n) != 0) rc = -1;
            else pos += n;
        }
        while (rc == 0 && pos < st.st_size) {
            ssize_t n = sendfile(l->fd, fd, &pos, (size_t)(st.st_size - pos));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) rc = -1;
            else repl_stat_bytes(REPL_BYTES_OUT, (size_t)n);
        }
    }
    if (fd >= 0) close(fd);
    return rc;
}

static int link_dead(rlink *l) {
    pthread_mutex_lock(&mu);
    int d = l->dead;
    pthread_mutex_unlock(&mu);
    return d;
}

/* rdb_snap_run's tick: a disk-based sync keeps the replica waiting for
 * the file alive ("\n"); either way a dead link fails the snapshot. */
typedef struct snap_tick {
    rlink *l;
    int diskless;
} snap_tick;

static int snap_tick_fn(void *arg) {
    snap_tick *t = arg;
    if (link_dead(t->l)) return -1;
    if (!t->diskless && link_write_all(t->l, "\n", 1) != 0) return -1;
    return 0;
}

/* The writers' buffer of a fork-less sync is bounded by repl-backlog-size
 * (at least 1 MiB): the memory an operator already gave the stream's
 * recent history. */
#define SNAP_BUFFER_MIN (1u << 20)

/* The point a full sync starts from, under the keyspace write lock and the
 * stream lock: the offset (returned) and the id at it, and the n links
 * start taking the stream from there; the next record names its database
 * on the replication view. */
static uint64_t sync_start_locked(rlink **ls, int n, char id[41]) {
    pthread_mutex_lock(&mu);
    uint64_t off = master_off;
    memcpy(id, replid, 41);
    for (int i = 0; i < n; i++) {
        ls[i]->state = LINK_SYNCING; /* the stream accumulates from here on */
        ls[i]->olen = 0;
    }
    pthread_mutex_unlock(&mu);
    wstream_force_select_locked(1);
    return off;
}

/* The end of l's full sync (rc 0: the RDB went out). After a diskless
 * transfer the link waits for the replica's first ACK before it streams:
 * the replica has loaded the RDB then (Redis does the same). */
static int sync_done(rlink *l, int rc, int diskless) {
    if (rc == 0) log_notice("Synchronization with replica %s:%d succeeded", l->ip, l->port);
    if (rc == 0 && diskless) {
        pthread_mutex_lock(&mu);
        l->wait_ack = 1;
        pthread_mutex_unlock(&mu);
    }
    return rc;
}

/* The full sync without fork (--arena-hugetlb: persist/rdb_snap.h). At
 * the offset, under the keyspace write lock and the stream lock, the
 * snapshot starts (a flip of the entries' marks) and the replica gets
 * +FULLRESYNC and the RDB's first bytes; the locks go at once. Then this
 * thread walks the dataset shard by shard while clients go on writing
 * (a write to a key not yet written out saves its old value first), into
 * the socket ($EOF:<mark> framing) or a file sent afterwards. One
 * snapshot at a time: a second replica waits for the first's to end. */
static int full_sync_forkless(rlink *l) {
    /* The snapshot writes into a descriptor: a TLS link gets it through a
     * file. */
    int diskless = get(&diskless_sync) && l->capa_eof && !l->ssl;
    for (int i = 0; rdb_snap_claim() != 0; i++) {
        if (link_dead(l)) return -1;
        if (i % 10 == 0) keepalive(l);
        usleep(100000);
    }
    char tmp[PATH_MAX], mark[41], err[512], line[160];
    snprintf(tmp, sizeof(tmp), "temp-repl-%ld-%d.rdb", (long)getpid(), l->fd);
    random_replid(mark);
    int fd = diskless ? l->fd : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_warn("Replica %s:%d: can't open %s for the full sync: %s", l->ip, l->port, tmp, strerror(errno));
        rdb_snap_release();
        return -1;
    }
    /* A replica that stops reading fails the sync after repl-timeout, not
     * a writer that flushes into its socket forever. */
    struct timeval tv = {get(&repl_timeout), 0};
    setsockopt(l->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    size_t limit = backlog_bytes();
    if (limit < SNAP_BUFFER_MIN) limit = SNAP_BUFFER_MIN;
    rdb_save_opts o;
    int rc = 0;
    db_wrlock_keyspace();
    persist_fill_save_opts(&o);
    o.incremental_fsync = 0;
    wstream_lock();
    char id[41];
    uint64_t off = sync_start_locked(&l, 1, id);
    int k = l->psync ? snprintf(line, sizeof(line), "+FULLRESYNC %s %llu\r\n", id, (unsigned long long)off) : 0;
    /* A few bytes into the fresh socket's empty buffer: no wait here. */
    if (diskless) k += snprintf(line + k, sizeof(line) - (size_t)k, "$EOF:%s\r\n", mark);
    if (k && link_write_all(l, line, (size_t)k) != 0) rc = -1;
    if (rc == 0 && rdb_snap_begin(fd, &o, limit, err, sizeof(err)) != RDB_OK) {
        log_warn("Replica %s:%d: the fork-less snapshot can't start: %s", l->ip, l->port, err);
        rc = -1;
    } else if (rc != 0) {
        rdb_snap_release();
    }
    wstream_unlock();
    db_unlock_keyspace();
    if (rc == 0) {
        log_notice("Starting BGSAVE for SYNC with target: %s (fork-less: versioned iteration)",
                   diskless ? "replicas sockets" : "disk");
        snap_tick t = {l, diskless};
        rdb_save_stats st;
        rc = rdb_snap_run(snap_tick_fn, &t, &st, err, sizeof(err)) == RDB_OK ? 0 : -1;
        if (rc) log_warn("Replica %s:%d: the fork-less RDB for the full sync failed: %s", l->ip, l->port, err);
        else
            log_notice("Fork-less RDB for replica %s:%d: %llu keys, %llu bytes", l->ip, l->port,
                       (unsigned long long)st.keys, (unsigned long long)st.bytes);
    }
    if (!diskless) {
        close(fd);
        if (rc == 0) rc = send_file(l, tmp);
        unlink(tmp);
    } else if (rc == 0) {
        rc = link_write_all(l, mark, 40);
    }
    tv.tv_sec = 0;
    setsockopt(l->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return sync_done(l, rc, diskless);
}

/* repl-diskless-sync-delay: wait for more replicas to arrive, but no
 * longer once repl-diskless-sync-max-replicas (if not 0) are waiting.
 * Then one fork serves them all, as in Redis: the first link whose wait
 * ends leads, and takes in every link still waiting (rdb_by), whose
 * threads wait for the outcome the leader leaves them. Returns how many
 * links the caller sends the RDB to, *grp holding them (malloc'd, the
 * caller first; left alone without memory: then the caller alone), or 0
 * when another link's sync took the caller in. */
static int diskless_wait(rlink *l, rlink ***grp) {
    int delay = get(&diskless_delay);
    pthread_mutex_lock(&mu);
    l->in_delay = 1;
    l->delay_go = 0;
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < delay * 10; i++) {
        int max = get(&diskless_max), go;
        pthread_mutex_lock(&mu);
        if (!l->delay_go && max > 0) {
            int waiting = 0;
            for (rlink *x = links; x; x = x->next) waiting += x->in_delay && !x->dead;
            if (waiting >= max) {
                for (rlink *x = links; x; x = x->next)
                    if (x->in_delay) x->delay_go = 1;
                log_notice("Starting the diskless sync early: %d replica(s) waiting, repl-diskless-sync-max-replicas "
                           "is %d",
                           waiting, max);
            }
        }
        go = l->delay_go || l->dead;
        pthread_mutex_unlock(&mu);
        if (go) break;
        if (i % 10 == 0) keepalive(l);
        usleep(100000);
    }
    pthread_mutex_lock(&mu);
    l->in_delay = 0;
    int n = 0;
    rlink **g = l->rdb_by ? NULL : malloc(sizeof(*g) * (size_t)(nlinks + 1));
    if (g) {
        g[n++] = l;
        for (rlink *x = links; x && n <= nlinks; x = x->next) {
            if (x == l || !x->in_delay || x->dead || x->rdb_by) continue;
            x->rdb_by = l;
            x->sync_rc = SYNC_PENDING;
            x->delay_go = 1;
            g[n++] = x;
        }
        *grp = g;
    } else if (!l->rdb_by) {
        n = 1;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

/* A link another link's diskless sync took in: its outcome. */
static int shared_wait(rlink *l) {
    pthread_mutex_lock(&mu);
    while (l->sync_rc == SYNC_PENDING) pthread_cond_wait(&shared_done, &mu);
    int rc = l->sync_rc;
    l->rdb_by = NULL;
    pthread_mutex_unlock(&mu);
    return sync_done(l, rc, 1);
}

/* The full sync of l (and, diskless, of the links it took in): snapshot
 * at an offset under the keyspace write lock and the stream lock,
 * +FULLRESYNC, the RDB; then each link takes the stream from that offset.
 * 0, or -1 (the link dies). */
/* REPLCONF rdb-filter-only (redis-cli --functions-rdb, --replica): the RDB
 * holds no keys, and the function libraries only when asked; small enough
 * to write here, under the locks, as a disk sync's file. The stream
 * follows from that point as after any full sync. */
static int filtered_sync(rlink *l) {
    char tmp[PATH_MAX], id[41], err[512];
    snprintf(tmp, sizeof(tmp), "temp-repl-%ld-%d.rdb", (long)getpid(), l->fd);
    rdb_save_opts o;
    rdb_save_stats st;
    db_wrlock_keyspace();
    persist_fill_save_opts(&o);
    o.no_keys = 1;
    o.no_functions = !l->filter_functions;
    wstream_lock();
    uint64_t off = sync_start_locked(&l, 1, id);
    int rc = rdb_save_file(tmp, &o, &st, err, sizeof(err)) == RDB_OK ? 0 : -1;
    wstream_unlock();
    db_unlock_keyspace();
    if (rc != 0) log_warn("Replica %s:%d: the filtered RDB failed: %s", l->ip, l->port, err);
    if (rc == 0 && l->psync) {
        char line[128];
        int k = snprintf(line, sizeof(line), "+FULLRESYNC %s %llu\r\n", id, (unsigned long long)off);
        rc = link_write_all(l, line, (size_t)k);
    }
    if (rc == 0) rc = send_file(l, tmp);
    unlink(tmp);
    return sync_done(l, rc, 0);
}

static int full_sync(rlink *l) {
    if (l->filter) return filtered_sync(l);
    if (hugetlb_bgsave_refusal()) return full_sync_forkless(l);
    int diskless = get(&diskless_sync) && l->capa_eof;
    rlink *one[1] = {l}, **grp = one;
    int ng = 1;
    if (diskless) {
        ng = diskless_wait(l, &grp);
        if (!ng) return shared_wait(l);
    }
    int *rcs = calloc((size_t)ng, sizeof(int));
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "temp-repl-%ld-%d.rdb", (long)getpid(), l->fd);
    rdb_save_opts o;
    int pfd[2] = {-1, -1};
    pid_t pid = -1;
    char err[512];
    int rc = rcs ? 0 : -1;
    uint64_t off = 0;
    char id[41] = "";
    if (rc == 0) {
        db_wrlock_keyspace();
        persist_fill_save_opts(&o);
        if (diskless && pipe2(pfd, O_CLOEXEC) != 0) rc = -1;
        wstream_lock();
        off = sync_start_locked(grp, ng, id);
        if (rc == 0) {
            pid = process_fork();
            if (pid == 0) {
                if (diskless) {
                    int fd = pfd[1];
                    sync_child(fd, &o);
                }
                signal(SIGTERM, SIG_DFL);
#ifdef SYS_close_range
                syscall(SYS_close_range, 3u, ~0u, 0u);
#endif
                rdb_save_stats st;
                _exit(rdb_save_file(tmp, &o, &st, err, sizeof(err)) == RDB_OK ? 0 : 1);
            }
            if (pid < 0) {
                log_warn("Can't fork for the replica's full sync: %s", strerror(errno));
                rc = -1;
            } else {
                obj_touch_hold(1);
                persist_repl_child(1);
            }
        }
        wstream_unlock();
        db_unlock_keyspace();
    }
    if (pfd[1] >= 0) close(pfd[1]);
    if (rc != 0) goto out;
    log_notice("Starting BGSAVE for SYNC with target: %s", diskless ? "replicas sockets" : "disk");
    if (ng > 1) log_notice("The diskless sync serves %d replicas with one RDB", ng);
    for (int i = 0; i < ng; i++) {
        if (!grp[i]->psync) continue;
        char line[128];
        int k = snprintf(line, sizeof(line), "+FULLRESYNC %s %llu\r\n", id, (unsigned long long)off);
        if (link_write_all(grp[i], line, (size_t)k) != 0) rcs[i] = -1;
    }
    char mark[41];
    if (diskless) {
        random_replid(mark);
        char head[64];
        int k = snprintf(head, sizeof(head), "$EOF:%s\r\n", mark);
        int alive = 0;
        for (int i = 0; i < ng; i++) {
            if (rcs[i] == 0) rcs[i] = link_write_all(grp[i], head, (size_t)k);
            alive += rcs[i] == 0;
        }
        /* Every link gets each piece in turn; one that fails drops out
         * and the others go on. */
        char buf[65536];
        while (alive) {
            ssize_t nr = read(pfd[0], buf, sizeof(buf));
            if (nr < 0 && errno == EINTR) continue;
            if (nr <= 0) break;
            for (int i = 0; i < ng; i++) {
                if (rcs[i] != 0) continue;
                if (link_write_all(grp[i], buf, (size_t)nr) != 0) {
                    rcs[i] = -1;
                    alive--;
                }
            }
        }
        /* A child still writing (every replica went away) gets EPIPE now. */
        close(pfd[0]);
        pfd[0] = -1;
    }
    if (pid > 0) {
        /* Disk: wait for the child, keeping the replica alive (a newline
         * every 200 ms); looked at every 10 ms, so the file goes out soon
         * after it is complete. */
        int status = 0;
        for (int i = 0;; i++) {
            pid_t w = waitpid(pid, &status, diskless ? 0 : WNOHANG);
            if (w == pid) break;
            if (w < 0 && errno != EINTR) break;
            if (w == 0) {
                if (i % 20 == 0) keepalive(l);
                usleep(10000);
            }
        }
        obj_touch_hold(-1);
        persist_repl_child(-1);
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
            if (rcs[0] == 0) log_warn("Replica %s:%d: the RDB child for the full sync failed", l->ip, l->port);
            rc = -1;
        }
    }
    /* The EOF mark only after a whole RDB: a failed child's partial one
     * ends with the connection, which the replica takes as a failed sync. */
    for (int i = 0; i < ng; i++) {
        if (rc != 0) rcs[i] = -1;
        if (rcs[i] == 0 && diskless) rcs[i] = link_write_all(grp[i], mark, 40);
    }
    if (rcs[0] == 0 && !diskless) rcs[0] = send_file(l, tmp);
out:
    if (pfd[0] >= 0) close(pfd[0]);
    unlink(tmp);
    int mine = rc != 0 ? -1 : rcs[0];
    /* The links taken in learn their outcome. */
    pthread_mutex_lock(&mu);
    for (int i = 1; i < ng; i++) grp[i]->sync_rc = rc != 0 ? -1 : rcs[i];
    pthread_cond_broadcast(&shared_done);
    pthread_mutex_unlock(&mu);
    free(rcs);
    if (grp != one) free(grp);
    return sync_done(l, mine, diskless);
}

/* REPLCONF ACK <offset> [FACK <offset>] arrays in the replica's input. */
static size_t parse_acks(rlink *l, char *p, size_t n) {
    size_t used = 0;
    while (used < n) {
        char *s = p + used;
        if (*s == '\n' || *s == '\r') {
            used++;
            continue;
        }
        if (*s != '*') return n; /* not an array: drop it */
        char *end = memchr(s, '\n', n - used);
        if (!end) break;
        int argc = atoi(s + 1);
        char *q = end + 1;
        const char *av[4] = {0};
        size_t an[4] = {0};
        int ok = 1;
        for (int i = 0; i < argc; i++) {
            if (q >= p + n || *q != '$') {
                ok = 0;
                break;
            }
            char *e = memchr(q, '\n', (size_t)(p + n - q));
            if (!e) {
                ok = 0;
                break;
            }
            long len = atol(q + 1);
            q = e + 1;
            if (q + len + 2 > p + n) {
                ok = 0;
                break;
            }
            if (i < 4) {
                av[i] = q;
                an[i] = (size_t)len;
            }
            q += len + 2;
        }
        if (!ok) break;
        if (argc >= 3 && an[0] == 8 && !strncasecmp(av[0], "replconf", 8) && an[1] == 3 && !strncasecmp(av[1], "ack", 3)) {
            long long v = 0;
            if (str_to_ll(av[2], an[2], &v)) {
                pthread_mutex_lock(&mu);
                if ((uint64_t)v > l->ack) l->ack = (uint64_t)v;
                l->ack_ms = now_ms();
                if (l->wait_ack) {
                    l->wait_ack = 0;
                    wake(l);
                }
                pthread_mutex_unlock(&mu);
                repl_wait_check();
            }
        }
        used = (size_t)(q - p);
    }
    return used;
}

/* A link's send buffers larger than this are not kept for reuse. */
#define LINK_BUF_KEEP (256 * 1024)

static void *link_main(void *arg) {
    rlink *l = arg;
    pthread_setname_np(pthread_self(), "goblin-replica");
    signal(SIGPIPE, SIG_IGN);
    if (l->full && full_sync(l) != 0) {
        log_warn("Full sync with replica %s:%d failed; closing the link", l->ip, l->port);
        link_free(l);
        return NULL;
    }
    if (l->full && l->rdb_only) {
        log_notice("RDB transfer completed, rdb only replica (%s:%d) should be disconnected asap", l->ip, l->port);
        link_free(l);
        return NULL;
    }
    pthread_mutex_lock(&mu);
    l->state = LINK_ONLINE;
    l->ack_ms = now_ms();
    pthread_mutex_unlock(&mu);
    fcntl(l->fd, F_SETFL, fcntl(l->fd, F_GETFL) | O_NONBLOCK);
    /* repl-disable-tcp-nodelay yes: the online stream goes out in fewer,
     * larger packets (Nagle), as Redis does once a replica is online. */
    int nodelay = !__atomic_load_n(&nodelay_off, __ATOMIC_RELAXED);
    setsockopt(l->fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof(nodelay));
    char in[4096];
    size_t inlen = 0;
    /* The buffer last sent, handed back to the appenders at the next take
     * (two buffers taking turns, not one malloc and free per send). */
    char *spare = NULL;
    size_t spare_cap = 0;
    for (;;) {
        pthread_mutex_lock(&mu);
        int dead = l->dead;
        size_t pending = l->wait_ack ? 0 : l->olen;
        int64_t ack_ms = l->ack_ms;
        l->idle = !pending;
        pthread_mutex_unlock(&mu);
        if (dead) break;
        if (now_ms() - ack_ms > (int64_t)get(&repl_timeout) * 1000) {
            log_warn("Disconnecting timedout replica (streaming sync): %s:%d", l->ip, l->port);
            break;
        }
        struct pollfd pf[2] = {{l->fd, (short)(POLLIN | (pending ? POLLOUT : 0)), 0}, {l->efd, POLLIN, 0}};
        /* ACK bytes OpenSSL decrypted already raise no poll event. */
        int buffered = l->ssl && SSL_pending(l->ssl) > 0;
        int r = poll(pf, 2, buffered ? 0 : 100);
        if (r < 0 && errno != EINTR) break;
        if (buffered) pf[0].revents |= POLLIN;
        if (pf[1].revents & POLLIN) {
            uint64_t v;
            if (read(l->efd, &v, sizeof(v)) < 0) { /* nothing */
            }
        }
        if (pf[0].revents & (POLLERR | POLLHUP | POLLNVAL)) break;
        if (pf[0].revents & POLLIN) {
            ssize_t n = l->ssl ? tls_read(l->ssl, in + inlen, sizeof(in) - inlen, NULL)
                               : read(l->fd, in + inlen, sizeof(in) - inlen);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
            if (n > 0) {
                inlen += (size_t)n;
                size_t used = parse_acks(l, in, inlen);
                memmove(in, in + used, inlen - used);
                inlen -= used;
                if (inlen == sizeof(in)) inlen = 0; /* garbage: drop it */
            }
        }
        if (pending) {
            /* Take the pending bytes, send them outside the lock. */
            pthread_mutex_lock(&mu);
            char *chunk = l->out;
            size_t n = l->olen, cap = l->ocap;
            l->out = spare;
            l->ocap = spare_cap;
            l->olen = 0;
            pthread_mutex_unlock(&mu);
            /* After a burst, a big buffer goes back to the allocator. */
            if (cap > LINK_BUF_KEEP) {
                spare = NULL;
                spare_cap = 0;
            } else {
                spare = chunk;
                spare_cap = cap;
            }
            size_t sent = 0;
            while (sent < n) {
                int want_read = 0;
                ssize_t w = l->ssl ? tls_write(l->ssl, chunk + sent, n - sent, &want_read)
                                   : write(l->fd, chunk + sent, n - sent);
                if (w > 0) {
                    sent += (size_t)w;
                    repl_stat_bytes(REPL_BYTES_OUT, (size_t)w);
                    continue;
                }
                if (w < 0 && errno == EINTR) continue;
                if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                    struct pollfd wp = {l->fd, (short)(want_read ? POLLIN : POLLOUT), 0};
                    if (poll(&wp, 1, 1000) < 0 && errno != EINTR) break;
                    continue;
                }
                break;
            }
            if (chunk != spare) free(chunk);
            if (sent < n) break;
        }
    }
    log_notice("Connection with replica %s:%d lost.", l->ip, l->port);
    free(spare);
    link_free(l);
    return NULL;
}

/* ---- PSYNC -------------------------------------------------------------- */

static void start_link(int fd, void *tls, void *arg) {
    rlink *l = arg;
    pthread_mutex_lock(&mu); /* CLIENT LIST reads it (repl_links_each) */
    l->fd = fd;
    pthread_mutex_unlock(&mu);
    l->ssl = tls;
    /* No reading ahead here: SSL_pending then covers all that OpenSSL
     * holds (nothing was sent after PSYNC before this). */
    if (l->ssl) SSL_set_read_ahead(l->ssl, 0);
    /* The thread may be done with l (and free it) before pthread_create
     * returns: its id goes to a local. */
    pthread_t tid;
    if (pthread_create(&tid, NULL, link_main, l) != 0) {
        log_warn("Can't start a replica thread");
        pthread_mutex_lock(&mu);
        l->dead = 1;
        pthread_mutex_unlock(&mu);
        link_free(l);
        return;
    }
    pthread_detach(tid);
}

void repl_psync(client *c, int psync) {
    int failover = psync && c->argc == 4 && arg_is(&c->argv[3], "failover");
    if (repl_is_replica() && !repl_primary_link_up() && !failover) {
        reply_error(c, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    if (client_flags_peek(c) & (CLIENT_MULTI | CLIENT_IN_EXEC)) {
        reply_error(c, "ERR Replica can't be used inside MULTI");
        return;
    }
    if (psync && c->argc == 4) {
        if (!arg_is(&c->argv[3], "failover")) {
            reply_err_syntax(c);
            return;
        }
        char id[41];
        repl_replid(id);
        if (!repl_is_replica() || strcasecmp(c->argv[1].p, id)) {
            reply_error(c, "ERR PSYNC FAILOVER replid must match my replid.");
            return;
        }
        log_notice("Failover request received for replid %s.", id);
        char err[64];
        repl_replicaof(NULL, 0, err, sizeof(err));
    }
    /* As Redis: the link starts on a connection with nothing of its own
     * left to send (a pipelined handshake's replies would be). */
    if (c->olen > c->osent) {
        reply_error(c, "ERR SYNC and PSYNC are invalid with pending output");
        return;
    }
    repl_hs *h = repl_hs_of(c);
    if (h && h->filter && !h->capa_eof) {
        reply_error(c, "ERR Filtered replica requires EOF capability");
        return;
    }
    rlink *l = calloc(1, sizeof(*l));
    if (!h || !l) {
        free(l);
        reply_error(c, "ERR out of memory");
        return;
    }
    l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    l->fd = -1;
    l->capa_eof = h->capa_eof;
    l->psync = psync;
    l->filter = h->filter;
    l->filter_functions = h->filter_functions;
    l->rdb_only = h->rdb_only;
    l->port = h->port;
    if (h->ip[0]) snprintf(l->ip, sizeof(l->ip), "%s", h->ip);
    else {
        /* ip:port, or [ip6]:port */
        const char *a = c->addr[0] == '[' ? c->addr + 1 : c->addr;
        snprintf(l->ip, sizeof(l->ip), "%s", a);
        char *colon = strrchr(l->ip, ':');
        if (colon) *colon = '\0';
        if (a != c->addr && colon > l->ip && colon[-1] == ']') colon[-1] = '\0';
    }
    pthread_mutex_lock(&mu);
    int fol = following;
    pthread_mutex_unlock(&mu);
    if (!fol && sink_ensure() != 0) {
        close(l->efd);
        free(l);
        reply_error(c, "ERR can't attach to the write stream");
        return;
    }
    /* The decision and the link's start point, with no record in between. */
    wstream_lock();
    pthread_mutex_lock(&mu);
    int partial = 0;
    uint64_t from = 0;
    if (psync && c->argc >= 3) {
        long long off;
        const char *want = c->argv[1].p;
        if (str_to_ll(c->argv[2].p, c->argv[2].n, &off) && off > 0 && bl.buf &&
            (!strcasecmp(want, replid) || (!strcasecmp(want, replid2) && off <= second_off)) &&
            backlog_has(&bl, (uint64_t)off)) {
            partial = 1;
            from = (uint64_t)off;
        }
    }
    if (!partial && backlog_create_locked() != 0) {
        pthread_mutex_unlock(&mu);
        wstream_unlock();
        close(l->efd);
        free(l);
        reply_error(c, "ERR can't create the replication backlog");
        return;
    }
    /* INFO's sync_* counters, as Redis's syncCommand counts them. */
    repl_stat_sync(partial ? REPL_SYNC_PARTIAL_OK : REPL_SYNC_FULL);
    if (!partial && psync && c->argc >= 3 && strcmp(c->argv[1].p, "?") != 0) repl_stat_sync(REPL_SYNC_PARTIAL_ERR);
    if (partial) {
        size_t n;
        char *bytes = backlog_copy_from(&bl, from, &n);
        char line[80];
        int k = h->capa_psync2 ? snprintf(line, sizeof(line), "+CONTINUE %s\r\n", replid)
                               : snprintf(line, sizeof(line), "+CONTINUE\r\n");
        reply_raw(c, line, (size_t)k);
        if (bytes) link_append(l, bytes, n);
        free(bytes);
        l->state = LINK_ONLINE;
        log_notice("Partial resynchronization request from %s:%d accepted. Sending %zu bytes of backlog starting "
                   "from offset %llu.",
                   l->ip, l->port, l->olen, (unsigned long long)from);
    } else {
        l->full = 1;
        l->state = LINK_WAIT_START;
        if (psync)
            log_notice("Replica %s:%d asks for synchronization; full resync (%s)", l->ip, l->port,
                       c->argc == 3 && strcmp(c->argv[1].p, "?") ? "replication id or offset not available"
                                                                  : "no previous history");
    }
    l->ack_ms = now_ms();
    l->cid = c->id;
    memcpy(l->addr, c->addr, sizeof(l->addr));
    memcpy(l->laddr, c->laddr, sizeof(l->laddr));
    l->name = c->name ? strdup(c->name) : NULL;
    l->user = strdup(acl_user_name(acl_client_user(c)));
    l->ctime_ms = c->ctime_ms;
    l->resp = c->resp;
    l->next = links;
    links = l;
    nlinks++;
    pthread_mutex_unlock(&mu);
    wstream_unlock();
    client_flag_on(c, CLIENT_BLOCKED); /* nothing more is read from it here */
    c->handoff = start_link;
    c->handoff_arg = l;
}

void repl_drop_replicas(void) {
    pthread_mutex_lock(&mu);
    for (rlink *l = links; l; l = l->next) {
        l->dead = 1;
        wake(l);
    }
    pthread_mutex_unlock(&mu);
}

/* ---- ACKs, WAIT, min-replicas -------------------------------------------- */

int repl_acked(uint64_t off) {
    int n = 0;
    pthread_mutex_lock(&mu);
    for (rlink *l = links; l; l = l->next)
        if (l->state == LINK_ONLINE && l->ack >= off) n++;
    pthread_mutex_unlock(&mu);
    return n;
}

void repl_request_acks(void) {
    const char *argv[3] = {"REPLCONF", "GETACK", "*"};
    feed_own(3, argv);
}

int repl_min_replicas_refuse(void) {
    int want = get(&min_replicas);
    if (!want) return 0;
    int lag = get(&min_replicas_lag), good = 0;
    int64_t t = now_ms();
    pthread_mutex_lock(&mu);
    for (rlink *l = links; l; l = l->next)
        if (l->state == LINK_ONLINE && t - l->ack_ms <= (int64_t)lag * 1000) good++;
    pthread_mutex_unlock(&mu);
    return good < want;
}

typedef struct waiter {
    uint64_t id;
    int wid;
    int n;
    uint64_t off;
    int64_t deadline;
    struct waiter *next;
} waiter;

static pthread_mutex_t wmu = PTHREAD_MUTEX_INITIALIZER;
static waiter *waiters;

/* On the waiting client's worker. */
static void wait_answer(void *arg) {
    waiter *w = arg;
    client *c = session_worker_find_client(w->wid, w->id);
    if (c && (client_flags_peek(c) & CLIENT_BLOCKED) && !c->bstate) {
        client_flag_off(c, CLIENT_BLOCKED);
        reply_int(c, repl_acked(w->off));
        session_client_resume(c);
    }
    free(w);
}

void repl_wait_check(void) {
    int64_t t = now_ms();
    pthread_mutex_lock(&wmu);
    waiter **pp = &waiters;
    while (*pp) {
        waiter *w = *pp;
        if (repl_acked(w->off) >= w->n || (w->deadline && t >= w->deadline)) {
            *pp = w->next;
            session_post(w->wid, wait_answer, w);
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&wmu);
}

void repl_wait(client *c, int n, uint64_t off, int64_t deadline_ms) {
    waiter *w = calloc(1, sizeof(*w));
    if (!w) {
        reply_error(c, "ERR out of memory");
        return;
    }
    w->id = c->id;
    w->wid = c->worker_id;
    w->n = n;
    w->off = off;
    w->deadline = deadline_ms;
    client_flag_on(c, CLIENT_BLOCKED);
    pthread_mutex_lock(&wmu);
    w->next = waiters;
    waiters = w;
    pthread_mutex_unlock(&wmu);
    repl_request_acks();
}

/* ---- INFO / ROLE ------------------------------------------------------------ */

void repl_info_replicas(strbuf *b) {
    int64_t t = now_ms();
    pthread_mutex_lock(&mu);
    int n = 0;
    for (rlink *l = links; l; l = l->next) n++;
    strbuf_addf(b, "connected_slaves:%d\r\n", n);
    int i = 0;
    for (rlink *l = links; l; l = l->next, i++) {
        const char *st = l->state == LINK_ONLINE ? "online" : l->state == LINK_SYNCING ? "send_bulk" : "wait_bgsave";
        strbuf_addf(b, "slave%d:ip=%s,port=%d,state=%s,offset=%llu,lag=%lld\r\n", i, l->ip, l->port, st,
                    (unsigned long long)l->ack, (long long)((t - l->ack_ms) / 1000));
    }
    pthread_mutex_unlock(&mu);
}

void repl_info_offsets(strbuf *b) {
    const char *fo = repl_failover_state(); /* its lock is never taken under mu */
    pthread_mutex_lock(&mu);
    strbuf_addf(b,
                "master_failover_state:%s\r\n"
                "master_replid:%s\r\n"
                "master_replid2:%s\r\n"
                "master_repl_offset:%llu\r\n"
                "second_repl_offset:%lld\r\n"
                "repl_backlog_active:%d\r\n"
                "repl_backlog_size:%lld\r\n"
                "repl_backlog_first_byte_offset:%llu\r\n"
                "repl_backlog_histlen:%llu\r\n",
                fo, replid, replid2, (unsigned long long)master_off, second_off, bl.buf != NULL,
                getll(&backlog_size),
                (unsigned long long)(bl.buf ? bl.first : 0), (unsigned long long)(bl.buf ? bl.histlen : 0));
    pthread_mutex_unlock(&mu);
    /* The fork-less full sync (this one or the last): the writers' buffer
     * (now, its peak, its bound), the keys written and how many of them a
     * writer saved before a change, the writers that flushed the buffer. */
    rdb_snap_stats ss;
    rdb_snap_get_stats(&ss);
    strbuf_addf(b,
                "forkless_sync_in_progress:%d\r\n"
                "forkless_sync_buffer_bytes:%llu\r\n"
                "forkless_sync_buffer_peak:%llu\r\n"
                "forkless_sync_buffer_limit:%llu\r\n"
                "forkless_sync_keys_saved:%llu\r\n"
                "forkless_sync_keys_saved_by_writers:%llu\r\n"
                "forkless_sync_writer_flushes:%llu\r\n"
                "forkless_sync_bytes:%llu\r\n"
                "forkless_syncs_started:%llu\r\n"
                "forkless_syncs_failed:%llu\r\n",
                ss.in_progress, (unsigned long long)ss.buffer_bytes, (unsigned long long)ss.buffer_peak,
                (unsigned long long)ss.buffer_limit, (unsigned long long)ss.keys_saved,
                (unsigned long long)ss.keys_saved_by_writers, (unsigned long long)ss.writer_flushes,
                (unsigned long long)ss.bytes, (unsigned long long)ss.started, (unsigned long long)ss.failed);
}

int repl_replicas_each(repl_replica_fn *fn, void *arg) {
    pthread_mutex_lock(&mu);
    int n = 0;
    for (rlink *l = links; l; l = l->next, n++)
        if (fn) fn(arg, l->ip, l->port, l->ack);
    pthread_mutex_unlock(&mu);
    return n;
}

void repl_links_each(repl_link_fn *fn, void *arg) {
    pthread_mutex_lock(&mu);
    for (rlink *l = links; l; l = l->next) {
        if (l->dead) continue;
        repl_link_view v = {l->cid, l->addr, l->laddr, l->name ? l->name : "", l->user ? l->user : "",
                            l->fd, l->resp, l->ctime_ms, l->ack_ms, l->olen};
        fn(arg, &v);
    }
    pthread_mutex_unlock(&mu);
}

int repl_kill_replicas(uint64_t id) {
    pthread_mutex_lock(&mu);
    int n = 0;
    for (rlink *l = links; l; l = l->next) {
        if (l->dead || (id && l->cid != id)) continue;
        l->dead = 1;
        /* The replica sees the link go now, even while its thread waits
         * for the snapshot's next bytes (as Redis closes the socket). */
        if (l->fd >= 0) shutdown(l->fd, SHUT_RDWR);
        wake(l);
        n++;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

/* ---- what FAILOVER asks (failover.c) ------------------------------------ */

int repl_failover_target(const char *host, int port, int caught_up, char *ohost, size_t ohostlen, int *oport) {
    pthread_mutex_lock(&mu);
    int found = 0;
    for (rlink *l = links; l && !found; l = l->next) {
        if (l->state != LINK_ONLINE || (caught_up && l->ack != master_off)) continue;
        if (host && (l->port != port || strcasecmp(l->ip, host))) continue;
        if (ohost) snprintf(ohost, ohostlen, "%s", l->ip);
        if (oport) *oport = l->port;
        found = 1;
    }
    pthread_mutex_unlock(&mu);
    return found;
}

int repl_replica_count(void) {
    pthread_mutex_lock(&mu);
    int n = nlinks;
    pthread_mutex_unlock(&mu);
    return n;
}

/* ---- cron ---------------------------------------------------------------- */

static int cron_run;
static pthread_t cron_tid;

static void *cron_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-repl");
    int64_t last_ping = now_ms();
    while (__atomic_load_n(&cron_run, __ATOMIC_RELAXED)) {
        usleep(100000);
        int64_t t = now_ms();
        pthread_mutex_lock(&mu);
        int n = nlinks, fol = following;
        int drop = !n && bl.buf && !fol && getll(&backlog_ttl) > 0 && t - no_replicas_since > getll(&backlog_ttl) * 1000;
        if (drop) {
            log_notice("Replication backlog freed after %lld seconds without connected replicas.",
                       getll(&backlog_ttl));
            backlog_free(&bl);
        }
        if (bl.buf && backlog_bytes() != bl.size) backlog_resize(&bl, backlog_bytes());
        pthread_mutex_unlock(&mu);
        if (n && !fol && t - last_ping >= (int64_t)get(&ping_period) * 1000) {
            const char *argv[1] = {"PING"};
            feed_own(1, argv);
            last_ping = t;
        }
        repl_wait_check();
        repl_failover_step();
    }
    return NULL;
}

/* repl-backlog-size takes any size from 1 and CONFIG SET raises a smaller
 * one to 16 KiB, as Redis's resizeReplicationBacklog (a config file's is
 * raised where it is used: backlog_bytes). */
static int backlog_size_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    long long n;
    (void)err;
    (void)errlen;
    if (config_parse_size(v, &n) != 0 || n < 1 || n >= BACKLOG_MIN_SIZE) return 0; /* the table checks the rest */
    snprintf(norm, normlen, "%d", BACKLOG_MIN_SIZE);
    return 1;
}
static const config_hook backlog_size_hook = {backlog_size_check, NULL, NULL};

void repl_primary_init(void) {
    random_replid(replid);
    if (config_register_hook("repl-backlog-size", &backlog_size_hook)) abort();
    if (config_bind_ll("repl-backlog-size", &backlog_size) || config_bind_ll("repl-backlog-ttl", &backlog_ttl) ||
        config_bind_int("repl-ping-replica-period", &ping_period) || config_bind_int("repl-timeout", &repl_timeout) ||
        config_bind_int("repl-diskless-sync", &diskless_sync) ||
        config_bind_int("repl-diskless-sync-delay", &diskless_delay) ||
        config_bind_int("repl-diskless-sync-max-replicas", &diskless_max) ||
        config_bind_int("min-replicas-to-write", &min_replicas) ||
        config_bind_int("min-replicas-max-lag", &min_replicas_lag) ||
        config_bind_int("repl-disable-tcp-nodelay", &nodelay_off))
        abort(); /* the table lost a row */
    repl_shutdown_config_register();
    no_replicas_since = now_ms();
    __atomic_store_n(&cron_run, 1, __ATOMIC_RELAXED);
    if (pthread_create(&cron_tid, NULL, cron_main, NULL) != 0) __atomic_store_n(&cron_run, 0, __ATOMIC_RELAXED);
}

void repl_primary_shutdown(void) {
    if (__atomic_exchange_n(&cron_run, 0, __ATOMIC_RELAXED)) pthread_join(cron_tid, NULL);
    repl_drop_replicas();
}

/* A replica passes its primary's bytes on and needs no sink: without it
 * the write stream does not encode the applied commands at all (unless
 * the AOF listens). A primary that was a replica gets it back before its
 * own writes start. */
void repl_set_following(int on) {
    if (!on && sink_ensure() != 0) log_warn("Can't attach the replication backlog to the write stream");
    pthread_mutex_lock(&mu);
    following = on;
    pthread_mutex_unlock(&mu);
    if (on) sink_drop();
}
