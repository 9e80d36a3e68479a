/* replica.c -- the replica side of replication (see repl.h).
 *
 * One thread follows the primary named by REPLICAOF (or `replicaof`):
 * connect, PING, AUTH (masterauth/masteruser), REPLCONF listening-port and
 * capa eof psync2, then PSYNC with the id and offset it has (a partial
 * resync when the primary still holds them, "? -1" the first time). A full
 * sync's RDB (sized "$<len>" or diskless "$EOF:<mark>") is loaded into a
 * new, detached dataset that replaces the old one at once, either from a
 * temp file (repl-diskless-load disabled, or on-empty-db with keys here;
 * readers see the old data meanwhile) or straight from the socket (swapdb:
 * readers see the old data meanwhile, INFO says async_loading;
 * on-empty-db with no key: -LOADING meanwhile, INFO says loading). A
 * failed transfer leaves the old dataset. Then the stream: each command is
 * run through the dispatcher by the primary's client (no READONLY, no
 * MISCONF, no ACL), and its bytes go on unchanged to this node's backlog
 * and replicas; REPLCONF GETACK is answered and an ACK is sent every
 * second. When the link drops, the id and offset stay for the next PSYNC.
 *
 * Invariant: `reploff` is the offset of the last byte of the primary's
 * stream that was applied here; the bytes passed on to this node's
 * replicas are exactly those, in order. */
#include "cmd/repl/repl.h"
#include "cmd/tracking.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "base/oomscore.h"
#include "base/tls.h"
#include "cmd/command.h"
#include "cmd/propagate.h"
#include "db/db.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "session/reply.h"
#include "session/session.h"
#include "util/fdio.h"
#include "util/resppeek.h"
#include "util/sockio.h"
#include "util/strutil.h"

static pthread_mutex_t rmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rcv = PTHREAD_COND_INITIALIZER;
static char *mhost;            /* rmu: the primary, NULL: this node is a primary */
static int mport;
static unsigned gen;           /* bumped by every REPLICAOF, under rmu; atomics */
static int thread_on;          /* rmu */
static pthread_t rtid;
static int stop_all;           /* set under rmu; atomics */
static int started;            /* rmu: start-up is over, the thread may run */
static int psync_failover;     /* rmu: the next PSYNC asks the primary to take over (FAILOVER) */
/* rmu: the thread is between two checks of gen in the stream loop (it may
 * be applying a command of the primary). A promotion waits for it to be
 * out before this node's own writes may start. */
static int applying;

enum { RS_CONNECT, RS_CONNECTING, RS_HANDSHAKE, RS_SYNC, RS_CONNECTED };
static int rstate = RS_CONNECT;  /* rmu */
static int64_t last_io_ms;       /* rmu: last byte from the primary */
static int link_fd = -1;         /* rmu: the streaming link's socket, -1: none */
static int64_t down_since_ms;    /* rmu */
static int sync_in_progress;     /* rmu */
static long long sync_total, sync_read; /* rmu: bytes of the RDB being received (total 0: EOF framing) */
static uint64_t reploff;         /* applied; written by the thread (or while it is not
                                    applying) under rmu or alone, with atomics */
static int have_history;         /* rmu: replid/reploff are worth a PSYNC */
static int serve_stale = 1;      /* replica-serve-stale-data */
static int repl_timeout_s = 60;  /* read through config_value */
static client mc;                /* the primary's client, only on the thread */
/* The offset the dataset is at: published by cmd_call while the applied
 * command still holds its locks (repl_applied_locked), so a snapshot taken
 * under the keyspace write lock reads the offset that matches it. */
static uint64_t pending_off;     /* the thread's: the offset after the command running */
static uint64_t applied_off;     /* atomics */
/* Read from the primary while its commands are held by CLIENT PAUSE
 * (slave_read_repl_offset); below reploff: nothing held. Atomics. */
static uint64_t read_off;

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int replica_flag;         /* atomics: mhost != NULL, for the dispatcher */
static int read_only = 1;        /* replica-read-only */

int repl_is_replica(void) { return __atomic_load_n(&replica_flag, __ATOMIC_RELAXED); }

int repl_read_only(void) {
    return __atomic_load_n(&replica_flag, __ATOMIC_RELAXED) && __atomic_load_n(&read_only, __ATOMIC_RELAXED);
}

int repl_is_primary_client(const client *c) { return c == &mc; }

int repl_primary_link_up(void) {
    pthread_mutex_lock(&rmu);
    int up = rstate == RS_CONNECTED;
    pthread_mutex_unlock(&rmu);
    return up;
}

const char *repl_stale_refusal(void) {
    if (!__atomic_load_n(&replica_flag, __ATOMIC_RELAXED) || __atomic_load_n(&serve_stale, __ATOMIC_RELAXED))
        return NULL;
    pthread_mutex_lock(&rmu);
    int down = mhost && rstate != RS_CONNECTED;
    pthread_mutex_unlock(&rmu);
    return down ? "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'." : NULL;
}

/* ---- the connection ------------------------------------------------------ */

typedef struct mconn {
    int fd;
    SSL *ssl;                /* tls-replication: the link over TLS */
    char *buf;               /* grows to hold the largest command */
    size_t len, pos, cap;
} mconn;

static int settings_int(const char *name, int dflt) {
    char *v = config_value(name);
    int r = v ? atoi(v) : dflt;
    free(v);
    return r;
}

/* A blocking link to the primary: the connect and every later read and
 * write bounded by repl-timeout. */
static int dial(const char *host, int port, char *err, size_t errlen) {
    char *src = config_value("bind-source-addr"); /* as Redis's connectWithMaster */
    int fd = sock_connect_from(host, port, src, (long)repl_timeout_s * 1000, err, errlen);
    free(src);
    if (fd < 0) return -1;
    struct timeval tv = {repl_timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return fd;
}

/* The link's bytes: the socket's, or TLS over it. */
static ssize_t link_read(mconn *m, void *buf, size_t n) {
    ssize_t r = m->ssl ? tls_read(m->ssl, buf, n, NULL) : read(m->fd, buf, n);
    if (r > 0) repl_stat_bytes(REPL_BYTES_IN, (size_t)r);
    return r;
}

static int send_cmd(mconn *m, int argc, const char *const *argv) {
    char buf[1024];
    size_t len = (size_t)snprintf(buf, sizeof(buf), "*%d\r\n", argc);
    for (int i = 0; i < argc && len < sizeof(buf); i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    if (len >= sizeof(buf)) return -1;
    return m->ssl ? tls_write_all(m->ssl, buf, len) : fd_write_all(m->fd, buf, len);
}

/* More bytes into the buffer; -1 on EOF, error or timeout. */
static int fill(mconn *m) {
    if (m->pos) {
        memmove(m->buf, m->buf + m->pos, m->len - m->pos);
        m->len -= m->pos;
        m->pos = 0;
    }
    if (m->len == m->cap) {
        /* A command longer than the buffer: room for it (Redis takes
         * arguments up to proto-max-bulk-len). */
        char *nb = realloc(m->buf, m->cap * 2);
        if (!nb) return -1;
        m->buf = nb;
        m->cap *= 2;
    }
    ssize_t n;
    do n = link_read(m, m->buf + m->len, m->cap - m->len);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { /* SO_RCVTIMEO: repl-timeout, Redis's words */
        pthread_mutex_lock(&rmu);
        int st = rstate;
        pthread_mutex_unlock(&rmu);
        if (st == RS_CONNECTING || st == RS_HANDSHAKE) log_warn("Timeout connecting to the MASTER...");
    }
    if (n <= 0) return -1;
    m->len += (size_t)n;
    pthread_mutex_lock(&rmu);
    last_io_ms = now_ms();
    __atomic_store_n(&mc.last_ms, last_io_ms, __ATOMIC_RELAXED); /* CLIENT LIST's idle */
    pthread_mutex_unlock(&rmu);
    return 0;
}

/* One reply line without CRLF into out; empty lines (keepalives) skipped
 * when skip_empty. */
static int read_line(mconn *m, char *out, size_t cap, int skip_empty) {
    for (;;) {
        char *s = m->buf + m->pos;
        char *nl = memchr(s, '\n', m->len - m->pos);
        if (nl) {
            size_t n = (size_t)(nl - s);
            if (n && s[n - 1] == '\r') n--;
            m->pos = (size_t)(nl - m->buf) + 1;
            if (!n && skip_empty) continue;
            if (n >= cap) n = cap - 1;
            memcpy(out, s, n);
            out[n] = '\0';
            return 0;
        }
        if (m->len - m->pos > 65536) return -1; /* no reply line is that long */
        if (fill(m) != 0) return -1;
    }
}

static int command_reply(mconn *m, int argc, const char *const *argv, char *line, size_t cap) {
    if (send_cmd(m, argc, argv) != 0) return -1;
    return read_line(m, line, cap, 1);
}

/* ---- full sync -------------------------------------------------------------- */

/* The "$<len>" or "$EOF:<mark>" line before the RDB (keepalive newlines
 * skipped). 0 with *size (-1 for EOF framing) and mark, or -1. */
static int read_bulk_header(mconn *m, long long *size, char mark[41]) {
    char line[256];
    if (read_line(m, line, sizeof(line), 1) != 0) return -1;
    if (line[0] == '-') {
        log_warn("MASTER aborted replication with an error: %s", line + 1);
        return -1;
    }
    if (line[0] != '$') {
        log_warn("Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host and "
                 "port are right?",
                 line);
        return -1;
    }
    if (!strncmp(line + 1, "EOF:", 4) && strlen(line + 5) == 40) {
        memcpy(mark, line + 5, 41);
        *size = -1;
    } else {
        mark[0] = '\0';
        *size = atoll(line + 1);
        if (*size < 0) {
            log_warn("Bad RDB size from MASTER: '%s'", line);
            return -1;
        }
    }
    pthread_mutex_lock(&rmu);
    sync_total = *size < 0 ? 0 : *size;
    sync_read = 0;
    pthread_mutex_unlock(&rmu);
    return 0;
}

/* The RDB after its header (size -1: up to the mark), into path. 0, or -1. */
static int receive_rdb(mconn *m, const char *path, long long size, const char *mark) {
    int eofmark = size < 0;
    if (eofmark) log_notice("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
    else log_notice("MASTER <-> REPLICA sync: receiving %lld bytes from master to disk", size);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_warn("Opening the temp file needed for MASTER <-> REPLICA synchronization: %s", strerror(errno));
        return -1;
    }
    long long got = 0;
    int rc = 0;
    char tail[40];
    size_t tlen = 0; /* the last bytes written (the mark ends the payload) */
    for (;;) {
        if (!eofmark && got == size) break;
        if (m->pos == m->len && fill(m) != 0) {
            rc = -1;
            break;
        }
        size_t avail = m->len - m->pos;
        if (!eofmark && (long long)avail > size - got) avail = (size_t)(size - got);
        if (write(fd, m->buf + m->pos, avail) != (ssize_t)avail) {
            rc = -1;
            break;
        }
        /* Keep the last 40 bytes to spot the mark. */
        if (avail >= 40) {
            memcpy(tail, m->buf + m->pos + avail - 40, 40);
            tlen = 40;
        } else {
            size_t keep = tlen + avail > 40 ? 40 - avail : tlen;
            memmove(tail, tail + tlen - keep, keep);
            memcpy(tail + keep, m->buf + m->pos, avail);
            tlen = keep + avail;
        }
        m->pos += avail;
        got += (long long)avail;
        pthread_mutex_lock(&rmu);
        sync_read = got;
        pthread_mutex_unlock(&rmu);
        if (eofmark && tlen == 40 && !memcmp(tail, mark, 40)) {
            if (ftruncate(fd, got - 40) != 0) rc = -1;
            break;
        }
    }
    if (rc == 0 && fsync(fd) != 0) rc = -1;
    close(fd);
    return rc;
}

/* ---- full sync straight from the socket (repl-diskless-load) ------------------ */

/* The loader's input: the connection's buffered bytes, then the socket;
 * a sized payload ends after its size (the stream follows it at once).
 * A REPLICAOF meanwhile stops the load. */
typedef struct sockin {
    mconn *m;
    long long left;          /* bytes of a sized payload not yet handed out; -1: EOF framing */
    long long got;
    unsigned gen;
    char mark[41];
} sockin;

static long sock_read(void *arg, void *buf, size_t n) {
    sockin *si = arg;
    mconn *m = si->m;
    pthread_mutex_lock(&rmu);
    int stale = gen != si->gen || stop_all;
    pthread_mutex_unlock(&rmu);
    if (stale) {
        errno = ECANCELED;
        return -1;
    }
    if (si->left == 0) return 0;
    if (si->left > 0 && (long long)n > si->left) n = (size_t)si->left;
    ssize_t r;
    if (m->pos < m->len) {
        r = (ssize_t)(m->len - m->pos < n ? m->len - m->pos : n);
        memcpy(buf, m->buf + m->pos, (size_t)r);
        m->pos += (size_t)r;
    } else {
        do r = link_read(m, buf, n);
        while (r < 0 && errno == EINTR);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) errno = ETIMEDOUT; /* SO_RCVTIMEO: repl-timeout */
        if (r <= 0) return r;
    }
    if (si->left > 0) si->left -= r;
    si->got += r;
    pthread_mutex_lock(&rmu);
    last_io_ms = now_ms();
    sync_read = si->got;
    pthread_mutex_unlock(&rmu);
    return r;
}

/* After the RDB: the rest of a sized payload is skipped; an EOF-framed
 * one must end with exactly the mark (the primary sends nothing after it
 * before our first ACK). */
static int sock_verify(void *arg, const rdb_loaded *ld, char *err, size_t errlen) {
    sockin *si = arg;
    if (si->left >= 0) {
        char junk[4096];
        while (si->left > 0)
            if (sock_read(si, junk, sizeof(junk)) <= 0) {
                snprintf(err, errlen, "the link failed after the RDB: %s", strerror(errno));
                return -1;
            }
        return 0;
    }
    if (ld->ntail > 40) {
        snprintf(err, errlen, "%zu bytes after the RDB's checksum, expected the 40-byte EOF mark", ld->ntail);
        return -1;
    }
    char got[40];
    memcpy(got, ld->tail, ld->ntail);
    for (size_t have = ld->ntail; have < 40;) {
        long r = sock_read(si, got + have, 40 - have);
        if (r <= 0) {
            snprintf(err, errlen, "the link failed before the EOF mark: %s", r < 0 ? strerror(errno) : "closed");
            return -1;
        }
        have += (size_t)r;
    }
    if (memcmp(got, si->mark, 40) != 0) {
        snprintf(err, errlen, "the RDB is not followed by the EOF mark");
        return -1;
    }
    /* Anything buffered after the mark: none expected (see above). */
    si->m->pos = si->m->len;
    return 0;
}

/* repl-diskless-load as configured now: 0 disabled, 1 on-empty-db, 2 swapdb. */
static int diskless_load_mode(void) {
    char *v = config_value("repl-diskless-load");
    int mode = v && !strcmp(v, "swapdb") ? 2 : v && !strcmp(v, "on-empty-db") ? 1 : 0;
    free(v);
    return mode;
}

static int dataset_empty(void) {
    db_rdlock_keyspace();
    int empty = 1;
    for (int i = 0; i < db_count() && empty; i++)
        if (db_size(db_get(i))) empty = 0;
    db_unlock_keyspace();
    return empty;
}

/* The full sync's RDB after +FULLRESYNC, loaded: from the socket
 * (repl-diskless-load swapdb, or on-empty-db with no key here) or through
 * a temporary file. same_history: the primary keeps the replication id
 * this replica has, so the old dataset is an earlier point of the same
 * data and swapdb serves it while the new one loads (async_loading, as
 * Redis 7.0); otherwise clients get -LOADING meanwhile. 0, or -1 (the old
 * dataset stays). */
static int receive_and_load(mconn *m, unsigned mygen, int same_history) {
    long long size;
    char mark[41];
    if (read_bulk_header(m, &size, mark) != 0) return -1;
    int mode = diskless_load_mode();
    int socket_load = mode == 2 || (mode == 1 && dataset_empty());
    char lerr[600];
    if (socket_load) {
        if (size < 0)
            log_notice("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to parser");
        else
            log_notice("MASTER <-> REPLICA sync: receiving %lld bytes from master to parser", size);
        int async = mode == 2 && same_history;
        log_notice("MASTER <-> REPLICA sync: Loading DB in memory%s",
                   async ? " (a new dataset; the old one is served meanwhile)" : "");
        sockin si = {m, size, 0, mygen, ""};
        memcpy(si.mark, mark, sizeof(si.mark));
        uint64_t keys = 0;
        int rc = persist_stream_load(sock_read, &si, async, size, sock_verify, &si, &keys, lerr, sizeof(lerr));
        if (rc != RDB_OK) {
            /* Redis's two lines: what broke in the RDB, then the failure. */
            log_warn("Internal error in RDB reading the master's stream -> %s", lerr);
            log_warn("Failed trying to load the MASTER synchronization DB from socket: %s", lerr);
            if (mode == 2) log_notice("MASTER <-> REPLICA sync: the old dataset stays (the new one is discarded)");
            return -1;
        }
        return 0;
    }
    if (mode == 1) log_notice("MASTER <-> REPLICA sync: the dataset is not empty: loading through a file");
    char path[256];
    snprintf(path, sizeof(path), "temp-%ld.%lld.rdb", (long)getpid(), (long long)now_ms());
    int rc = receive_rdb(m, path, size, mark);
    if (rc == 0) {
        log_notice("MASTER <-> REPLICA sync: Loading DB in memory");
        uint64_t keys = 0;
        rc = persist_load(path, &keys, lerr, sizeof(lerr)) == RDB_OK ? 0 : -1;
        if (rc != 0) log_warn("Failed trying to load the MASTER synchronization DB from disk: %s", lerr);
    }
    unlink(path);
    return rc;
}

/* ---- the stream -------------------------------------------------------------- */

static void send_ack(mconn *m) {
    char off[32];
    pthread_mutex_lock(&rmu);
    snprintf(off, sizeof(off), "%llu", (unsigned long long)__atomic_load_n(&reploff, __ATOMIC_RELAXED));
    pthread_mutex_unlock(&rmu);
    const char *argv[3] = {"REPLCONF", "ACK", off};
    send_cmd(m, 3, argv);
}

/* Parse one command at m->pos (RESP array, or an inline PING/newline the
 * primary may send). Returns its length in bytes and fills argv, 0 when
 * incomplete, -1 on a protocol error. */
static long parse_command(mconn *m, garg **argvp, int *cap, int *argc) {
    const char *s = m->buf + m->pos, *end = m->buf + m->len;
    if (s == end) return 0;
    if (*s == '\n' || *s == '\r') {
        *argc = 0;
        return 1;
    }
    if (*s != '*') return -1;
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    if (!nl) return 0;
    int n = atoi(s + 1);
    if (n < 1 || n > 1024 * 1024) return -1; /* Redis's limit for a multibulk */
    if (n > *cap) {
        garg *na = realloc(*argvp, sizeof(garg) * (size_t)n);
        if (!na) return -1;
        *argvp = na;
        *cap = n;
    }
    garg *argv = *argvp;
    const char *q = nl + 1;
    for (int i = 0; i < n; i++) {
        if (q >= end) return 0;
        if (*q != '$') return -1;
        const char *e = memchr(q, '\n', (size_t)(end - q));
        if (!e) return 0;
        long len = atol(q + 1);
        q = e + 1;
        if (len < 0) return -1;
        if (end - q < len + 2) return 0;
        argv[i].p = (char *)q;
        argv[i].n = (size_t)len;
        ((char *)q)[len] = '\0'; /* over the CR */
        q += len + 2;
    }
    *argc = n;
    return (long)(q - s);
}

/* Commands of the stream whose keys are prefetched together. */
#define REPLICA_PREFETCH_BATCH 16

/* Apply the stream until the link fails. */
static void stream_loop(mconn *m, unsigned mygen) {
    int cap = 64;
    garg *argv = malloc(sizeof(garg) * (size_t)cap);
    if (!argv) return;
    int64_t last_ack = 0;
    /* applying stays set from here to the end of the loop: a promotion
     * that bumps gen waits for the loop to see it at its next check, so no
     * command of the old primary runs after the promotion's wait. The
     * checks themselves are atomic loads: no lock per command. */
    pthread_mutex_lock(&rmu);
    applying = 1;
    pthread_mutex_unlock(&rmu);
    /* Only this thread writes reploff while the loop runs. */
    uint64_t off = __atomic_load_n(&reploff, __ATOMIC_RELAXED), pf_upto = 0;
    __atomic_store_n(&read_off, 0, __ATOMIC_RELAXED);
    for (;;) {
        if (__atomic_load_n(&gen, __ATOMIC_ACQUIRE) != mygen || __atomic_load_n(&stop_all, __ATOMIC_ACQUIRE)) break;
        int64_t t = now_ms();
        if (t - last_ack >= 1000) {
            send_ack(m);
            last_ack = t;
        }
        if (off >= pf_upto && db_prefetch_wanted(__atomic_load_n(&mc.db, __ATOMIC_RELAXED))) {
            /* The commands waiting in the buffer: their keys' index groups
             * and entries start loading before the first of them runs. */
            const char *key[REPLICA_PREFETCH_BATCH];
            size_t klen[REPLICA_PREFETCH_BATCH], span;
            int nk = resp_peek_keys(m->buf + m->pos, m->len - m->pos, key, klen, REPLICA_PREFETCH_BATCH, &span);
            pf_upto = off + (span ? span : 1);
            db_prefetch_keys(__atomic_load_n(&mc.db, __ATOMIC_RELAXED), key, klen, nk);
        }
        int argc;
        long used = parse_command(m, &argv, &cap, &argc);
        if (used < 0) {
            log_warn("Protocol error from the master; closing the link");
            break;
        }
        if (used == 0) {
            /* Bytes OpenSSL decrypted already raise no poll event. */
            struct pollfd pf = {m->fd, POLLIN, 0};
            int r = m->ssl && SSL_pending(m->ssl) > 0 ? 1 : poll(&pf, 1, 200);
            if (r < 0 && errno != EINTR) break;
            if (r == 0) {
                pthread_mutex_lock(&rmu);
                int64_t idle = now_ms() - last_io_ms;
                pthread_mutex_unlock(&rmu);
                if (idle > (int64_t)repl_timeout_s * 1000) {
                    log_warn("MASTER timeout: no data nor PING received...");
                    break;
                }
                continue;
            }
            if (fill(m) != 0) {
                log_notice("Connection with master lost.");
                break;
            }
            continue;
        }
        const char *raw = m->buf + m->pos;
        if (argc > 0) {
            if (argc == 3 && argv[0].n == 8 && !strncasecmp(argv[0].p, "replconf", 8) && argv[1].n == 6 &&
                !strncasecmp(argv[1].p, "getack", 6)) {
                /* Counted before the answer, as Redis: the ACK includes it. */
                off += (uint64_t)used;
                __atomic_store_n(&reploff, off, __ATOMIC_RELAXED);
                __atomic_store_n(&applied_off, off, __ATOMIC_RELAXED);
                repl_feed_from_primary(raw, (size_t)used);
                send_ack(m);
                m->pos += (size_t)used;
                continue;
            }
            /* CLIENT PAUSE holds the primary's commands too (Redis 7.0
             * pauses the master client, not replicas): what comes is read
             * (slave_read_repl_offset grows), nothing is applied. */
            int pm = session_pause_mode() ? session_pause_check(now_ms(), NULL) : SESSION_PAUSE_OFF;
            if (pm && cmd_pause_holds(&mc, argc, argv, pm == SESSION_PAUSE_WRITE)) {
                for (int i = 0; i < argc; i++) argv[i].p[argv[i].n] = '\r';
                struct pollfd pf = {m->fd, POLLIN, 0};
                int r = m->ssl && SSL_pending(m->ssl) > 0 ? 1 : poll(&pf, 1, 10);
                if (r < 0 && errno != EINTR) break;
                if (r > 0 && fill(m) != 0) {
                    log_notice("Connection with master lost.");
                    break;
                }
                __atomic_store_n(&read_off, off + (uint64_t)(m->len - m->pos), __ATOMIC_RELAXED);
                continue;
            }
            mc.argc = argc;
            mc.argv = argv;
            mc.olen = mc.osent = 0;
            pending_off = off + (uint64_t)used;
            cmd_execute(&mc);
            mc.olen = mc.osent = 0;
            mc.argv = NULL;
            mc.argc = 0;
        }
        /* The raw bytes before the buffer moves on (argv pointed into them;
         * the NUL written over each CR is put back for the copy). */
        for (int i = 0; i < argc; i++) argv[i].p[argv[i].n] = '\r';
        repl_feed_from_primary(raw, (size_t)used);
        off += (uint64_t)used;
        __atomic_store_n(&reploff, off, __ATOMIC_RELAXED);
        if (!argc) __atomic_store_n(&applied_off, off, __ATOMIC_RELAXED); /* a newline changes nothing */
        m->pos += (size_t)used;
    }
    pthread_mutex_lock(&rmu);
    applying = 0;
    pthread_cond_broadcast(&rcv);
    pthread_mutex_unlock(&rmu);
    free(argv);
}

/* ---- the thread ------------------------------------------------------------------ */

static void set_state(int s) {
    pthread_mutex_lock(&rmu);
    if (rstate == RS_CONNECTED && s != RS_CONNECTED) down_since_ms = now_ms();
    rstate = s;
    pthread_mutex_unlock(&rmu);
}

/* One attempt: handshake, sync, stream. */
static void follow_once(const char *host, int port, unsigned mygen) {
    char err[256] = "", line[512];
    set_state(RS_CONNECTING);
    log_notice("Connecting to MASTER %s:%d", host, port);
    mconn *m = calloc(1, sizeof(*m));
    if (m && !(m->buf = malloc(1 << 16))) {
        free(m->buf);
        free(m);
        m = NULL;
    }
    if (!m) return;
    m->cap = 1 << 16;
    m->fd = dial(host, port, err, sizeof(err));
    if (m->fd >= 0 && tls_replication()) {
        /* tls-replication: the handshake first, as Redis's TLS
         * connection does before the replication handshake. */
        if (!(m->ssl = tls_connect_new(m->fd))) snprintf(err, sizeof(err), "TLS is not configured");
        else if (tls_connect_blocking(m->ssl, err, sizeof(err)) != 0) {
            SSL_free(m->ssl);
            m->ssl = NULL;
        }
        if (!m->ssl) {
            close(m->fd);
            m->fd = -1;
        }
    }
    if (m->fd < 0) {
        log_warn("Error condition on socket for SYNC: %s", err);
        free(m->buf);
        free(m);
        return;
    }
    log_notice("MASTER <-> REPLICA sync started");
    set_state(RS_HANDSHAKE);
    const char *ping[1] = {"PING"};
    if (command_reply(m, 1, ping, line, sizeof(line)) != 0) goto out;
    if (line[0] == '-' && strncmp(line, "-NOAUTH", 7) && strncmp(line, "-NOPERM", 7) && strncmp(line, "-ERR operation not permitted", 28)) {
        log_warn("Error reply to PING from master: '%s'", line);
        goto out;
    }
    log_notice("Master replied to PING, replication can continue...");
    char *auth = config_value("masterauth"), *user = config_value("masteruser");
    if (auth && auth[0]) {
        const char *a2[3] = {"AUTH", user && user[0] ? user : auth, auth};
        int rc = user && user[0] ? command_reply(m, 3, a2, line, sizeof(line))
                                 : command_reply(m, 2, (const char *const[]){"AUTH", auth}, line, sizeof(line));
        if (rc != 0 || line[0] == '-') {
            log_warn("Unable to AUTH to MASTER: %s", line);
            free(auth);
            free(user);
            goto out;
        }
    }
    free(auth);
    free(user);
    char portstr[16];
    char *ann = config_value("replica-announce-port");
    int aport = ann ? atoi(ann) : 0;
    free(ann);
    snprintf(portstr, sizeof(portstr), "%d", aport ? aport : cfg.port);
    const char *lp[3] = {"REPLCONF", "listening-port", portstr};
    if (command_reply(m, 3, lp, line, sizeof(line)) != 0) goto out;
    char *aip = config_value("replica-announce-ip");
    if (aip && aip[0]) {
        const char *ip[3] = {"REPLCONF", "ip-address", aip};
        command_reply(m, 3, ip, line, sizeof(line));
    }
    free(aip);
    const char *capa[5] = {"REPLCONF", "capa", "eof", "capa", "psync2"};
    if (command_reply(m, 5, capa, line, sizeof(line)) != 0) goto out;
    /* PSYNC with what we have. */
    char id[41], off[32];
    repl_replid(id);
    pthread_mutex_lock(&rmu);
    int hist = have_history;
    uint64_t ro = __atomic_load_n(&reploff, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rmu);
    snprintf(off, sizeof(off), "%llu", (unsigned long long)ro + 1);
    pthread_mutex_lock(&rmu);
    int fo = psync_failover;
    pthread_mutex_unlock(&rmu);
    const char *ps[4] = {"PSYNC", hist ? id : "?", hist ? off : "-1", "FAILOVER"};
    if (hist) log_notice("Trying a partial resynchronization (request %s:%s).", id, off);
    else log_notice("Partial resynchronization not possible (no cached master)");
    if (command_reply(m, fo ? 4 : 3, ps, line, sizeof(line)) != 0) goto out;
    if (fo) {
        pthread_mutex_lock(&rmu);
        psync_failover = 0;
        pthread_mutex_unlock(&rmu);
        if (line[0] == '-') {
            log_warn("Failover target refused PSYNC FAILOVER: %s", line);
            tls_close(m->ssl);
            close(m->fd);
            free(m->buf);
            free(m);
            set_state(RS_CONNECT);
            char e[64];
            repl_replicaof(NULL, 0, e, sizeof(e));
            repl_failover_done(0, "Failover target rejected psync request");
            return;
        }
        repl_failover_done(1, NULL);
    }
    int full = 0; /* a full sync: the primary's client is a new one */
    if (!strncmp(line, "+FULLRESYNC", 11)) {
        full = 1;
        char newid[64] = "";
        unsigned long long moff = 0;
        if (sscanf(line, "+FULLRESYNC %63s %llu", newid, &moff) != 2 || strlen(newid) != 40) {
            log_warn("Bad +FULLRESYNC from master: %s", line);
            goto out;
        }
        log_notice("Full resync from master: %s:%llu", newid, moff);
        set_state(RS_SYNC);
        pthread_mutex_lock(&rmu);
        sync_in_progress = 1;
        pthread_mutex_unlock(&rmu);
        char cur[41];
        repl_replid(cur);
        int rc = receive_and_load(m, mygen, strcmp(cur, newid) == 0);
        pthread_mutex_lock(&rmu);
        sync_in_progress = 0;
        pthread_mutex_unlock(&rmu);
        if (rc != 0) goto out;
        char aerr[600];
        if (aof_restart(aerr, sizeof(aerr)) != 0) log_warn("Can't restart the AOF after the full sync: %s", aerr);
        repl_set_ids(newid, "0000000000000000000000000000000000000000", -1, moff);
        repl_drop_replicas(); /* they follow a history that is gone */
        pthread_mutex_lock(&rmu);
        __atomic_store_n(&reploff, moff, __ATOMIC_RELAXED);
        __atomic_store_n(&applied_off, moff, __ATOMIC_RELAXED);
        have_history = 1;
        pthread_mutex_unlock(&rmu);
        mc.db = 0;
        log_notice("MASTER <-> REPLICA sync: Finished with success");
    } else if (!strncmp(line, "+CONTINUE", 9)) {
        char newid[64] = "";
        if (sscanf(line, "+CONTINUE %63s", newid) == 1 && strlen(newid) == 40 && strcasecmp(newid, id)) {
            /* The primary's history goes on under a new id: ours becomes
             * the second id, valid up to here. */
            repl_set_ids(newid, id, (long long)ro + 1, ro);
            repl_drop_replicas();
            log_notice("Master replication ID changed to %s", newid);
        }
        log_notice("Successful partial resynchronization with master.");
    } else {
        log_warn("Unexpected reply to PSYNC from master: %s", line);
        goto out;
    }
    set_state(RS_CONNECTED);
    pthread_mutex_lock(&rmu);
    link_fd = m->fd;
    /* The primary's client, as CLIENT LIST shows it. As in Redis, a full
     * sync makes a new one (a new id and age); a partial resync brings the
     * same one back on the new socket. */
    if (full || !mc.id) {
        mc.id = session_next_client_id();
        mc.ctime_ms = now_ms();
        __atomic_store_n(&mc.last, NULL, __ATOMIC_RELAXED);
    }
    mc.fd = m->fd;
    sock_addr_text(m->fd, 1, mc.addr, sizeof(mc.addr));
    sock_addr_text(m->fd, 0, mc.laddr, sizeof(mc.laddr));
    __atomic_store_n(&mc.last_ms, now_ms(), __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rmu);
    stream_loop(m, mygen);
out:
    pthread_mutex_lock(&rmu);
    link_fd = -1;
    mc.fd = -1;
    pthread_mutex_unlock(&rmu);
    set_state(RS_CONNECT);
    tls_close(m->ssl);
    close(m->fd);
    free(m->buf);
    free(m);
}

void repl_primary_client_each(void (*fn)(void *arg, client *c), void *arg) {
    pthread_mutex_lock(&rmu);
    if (link_fd >= 0) fn(arg, &mc);
    pthread_mutex_unlock(&rmu);
}

int repl_kill_primary_link(void) {
    pthread_mutex_lock(&rmu);
    /* The link's thread sees its socket end and connects again (PSYNC). */
    int n = link_fd >= 0 && shutdown(link_fd, SHUT_RDWR) == 0;
    pthread_mutex_unlock(&rmu);
    return n;
}

void repl_applied_locked(void) { __atomic_store_n(&applied_off, pending_off, __ATOMIC_RELAXED); }

/* The persistence layer's question when it writes a dump (keyspace write
 * lock held): a replica's dump says where in its primary's stream it is,
 * so that after a restart it can continue with PSYNC (as Redis). */
static int save_repl_info(char id[41], long long *off, int *db) {
    pthread_mutex_lock(&rmu);
    int replica = mhost != NULL, ok = replica && have_history;
    pthread_mutex_unlock(&rmu);
    if (!replica) return repl_primary_save_info(id, off, db);
    if (!ok) return 0;
    repl_replid(id);
    *off = (long long)__atomic_load_n(&applied_off, __ATOMIC_RELAXED);
    *db = __atomic_load_n(&mc.db, __ATOMIC_RELAXED);
    return 1;
}

/* The start-up load found a dump that names a stream: a primary continues
 * it; a replica takes it up when it first connects (replica_main). */
static void resume_at_start(const char id[41], long long offset, const persist_dropped_key *keys, size_t n) {
    pthread_mutex_lock(&rmu);
    int replica = mhost != NULL;
    pthread_mutex_unlock(&rmu);
    if (!replica) repl_primary_resume(id, offset, keys, n);
}

static void *replica_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "goblin-follow");
    db_set_primary_context(1);
    /* The start-up load is over (repl_start): the dump may say where this
     * replica was in its primary's stream. */
    char lid[41];
    long long loff;
    int ldb;
    pthread_mutex_lock(&rmu);
    int fresh = !have_history;
    pthread_mutex_unlock(&rmu);
    if (fresh && persist_loaded_repl_info(lid, &loff, &ldb)) {
        repl_set_ids(lid, "0000000000000000000000000000000000000000", -1, (uint64_t)loff);
        pthread_mutex_lock(&rmu);
        __atomic_store_n(&reploff, (uint64_t)loff, __ATOMIC_RELAXED);
        __atomic_store_n(&applied_off, (uint64_t)loff, __ATOMIC_RELAXED);
        have_history = 1;
        pthread_mutex_unlock(&rmu);
        mc.db = ldb >= 0 ? ldb : 0;
        log_notice("Using the replication id %s and offset %lld of the RDB to try a partial resync", lid, loff);
    }
    pthread_mutex_lock(&rmu);
    for (;;) {
        if (!mhost || stop_all) break;
        char host[256];
        snprintf(host, sizeof(host), "%s", mhost);
        int port = mport;
        unsigned mygen = gen;
        pthread_mutex_unlock(&rmu);
        repl_timeout_s = settings_int("repl-timeout", 60);
        follow_once(host, port, mygen);
        pthread_mutex_lock(&rmu);
        if (gen == mygen && mhost && !stop_all) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&rcv, &rmu, &ts);
        }
    }
    thread_on = 0;
    pthread_mutex_unlock(&rmu);
    prop_thread_exit();
    tracking_thread_exit();
    reply_thread_exit();
    return NULL;
}

/* The role changed. CONFIG GET replicaof and CONFIG REWRITE follow it (Sentinel
 * rewrites the config of a node it reconfigured, so that a restart keeps
 * it); in cluster mode the config holds no replicaof, as in Redis. */
static void note_replicaof(const char *host, int port) {
    oomscore_set_role(host != NULL); /* oom-score-adj-values: a replica's */
    char *ce = config_value("cluster-enabled");
    int cluster = ce && !strcmp(ce, "yes");
    free(ce);
    if (cluster) return;
    char v[300];
    if (host) snprintf(v, sizeof(v), "%s %d", host, port);
    else v[0] = '\0';
    config_note("replicaof", v);
}

/* cache_self: a primary turning replica offers its own history to PSYNC
 * (Redis's replicationCacheMasterUsingMyself). */
static int replicaof(const char *host, int port, int cache_self, char *err, size_t errlen) {
    pthread_mutex_lock(&rmu);
    if (!host) {
        if (!mhost) {
            pthread_mutex_unlock(&rmu);
            return 0;
        }
        free(mhost);
        mhost = NULL;
        __atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
        rstate = RS_CONNECT;
        pthread_cond_broadcast(&rcv);
        /* No command of the old primary may be half applied when this
         * node's own writes (and their records) start. */
        while (applying) pthread_cond_wait(&rcv, &rmu);
        pthread_mutex_unlock(&rmu);
        repl_set_following(0);
        repl_shift_replid();
        db_set_replica_mode(0);
        __atomic_store_n(&replica_flag, 0, __ATOMIC_RELAXED);
        note_replicaof(NULL, 0);
        log_notice("MASTER MODE enabled (user request)");
        return 0;
    }
    int same = mhost && !strcasecmp(mhost, host) && mport == port;
    if (same) {
        pthread_mutex_unlock(&rmu);
        return 1; /* already */
    }
    char *h = strdup(host);
    if (!h) {
        pthread_mutex_unlock(&rmu);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int was_primary = mhost == NULL;
    free(mhost);
    mhost = h;
    __atomic_store_n(&replica_flag, 1, __ATOMIC_RELAXED);
    mport = port;
    __atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
    rstate = RS_CONNECT;
    down_since_ms = now_ms();
    if (was_primary && cache_self) {
        /* Our own history is where a PSYNC starts (Redis caches itself as
         * the master). */
        __atomic_store_n(&reploff, repl_offset(), __ATOMIC_RELAXED);
        have_history = 1;
    }
    pthread_cond_broadcast(&rcv);
    int start = !thread_on && started;
    if (start) thread_on = 1;
    pthread_mutex_unlock(&rmu);
    note_replicaof(host, port);
    repl_set_following(1);
    db_set_replica_mode(1);
    repl_drop_replicas();
    log_notice("REPLICAOF %s:%d enabled (user request from the configuration or a client)", host, port);
    if (start) {
        if (pthread_create(&rtid, NULL, replica_main, NULL) != 0) {
            pthread_mutex_lock(&rmu);
            thread_on = 0;
            pthread_mutex_unlock(&rmu);
            snprintf(err, errlen, "can't start the replication thread");
            return -1;
        }
        pthread_detach(rtid);
    }
    return 0;
}

int repl_replicaof(const char *host, int port, char *err, size_t errlen) {
    return replicaof(host, port, 1, err, errlen);
}

int repl_replicaof_failover(const char *host, int port, char *err, size_t errlen) {
    pthread_mutex_lock(&rmu);
    psync_failover = 1;
    pthread_mutex_unlock(&rmu);
    int rc = replicaof(host, port, 1, err, errlen);
    if (rc != 0) {
        pthread_mutex_lock(&rmu);
        psync_failover = 0;
        pthread_mutex_unlock(&rmu);
        if (rc > 0) snprintf(err, errlen, "already a replica of the target");
        return -1;
    }
    return 0;
}

long long repl_data_age_ms(void) {
    pthread_mutex_lock(&rmu);
    long long age = 0;
    if (mhost) age = (long long)(now_ms() - (rstate == RS_CONNECTED ? last_io_ms : down_since_ms));
    pthread_mutex_unlock(&rmu);
    return age < 0 ? 0 : age;
}

/* ---- INFO / ROLE --------------------------------------------------------------- */

static uint64_t read_offset(void) {
    uint64_t applied = __atomic_load_n(&reploff, __ATOMIC_RELAXED), rd = __atomic_load_n(&read_off, __ATOMIC_RELAXED);
    return rd > applied ? rd : applied;
}

void repl_info_replica(strbuf *b) {
    pthread_mutex_lock(&rmu);
    int64_t t = now_ms();
    strbuf_addf(b,
                "master_host:%s\r\n"
                "master_port:%d\r\n"
                "master_link_status:%s\r\n"
                "master_last_io_seconds_ago:%lld\r\n"
                "master_sync_in_progress:%d\r\n"
                "slave_read_repl_offset:%llu\r\n"
                "slave_repl_offset:%llu\r\n",
                mhost, mport, rstate == RS_CONNECTED ? "up" : "down",
                rstate == RS_CONNECTED ? (long long)((t - last_io_ms) / 1000) : -1LL, sync_in_progress,
                (unsigned long long)read_offset(),
                (unsigned long long)__atomic_load_n(&reploff, __ATOMIC_RELAXED));
    if (sync_in_progress)
        strbuf_addf(b,
                    "master_sync_total_bytes:%lld\r\n"
                    "master_sync_read_bytes:%lld\r\n"
                    "master_sync_left_bytes:%lld\r\n"
                    "master_sync_perc:%.2f\r\n"
                    "master_sync_last_io_seconds_ago:%lld\r\n",
                    sync_total, sync_read, sync_total - sync_read,
                    sync_total ? (double)sync_read * 100 / (double)sync_total : 0.0,
                    (long long)((t - last_io_ms) / 1000));
    if (rstate != RS_CONNECTED)
        strbuf_addf(b, "master_link_down_since_seconds:%lld\r\n", (long long)((t - down_since_ms) / 1000));
    pthread_mutex_unlock(&rmu);
    char *prio = config_value("replica-priority");
    char *ro = config_value("replica-read-only");
    char *ann = config_value("replica-announced");
    strbuf_addf(b, "slave_priority:%s\r\nslave_read_only:%d\r\nreplica_announced:%d\r\n", prio ? prio : "100",
                ro && !strcmp(ro, "yes"), !ann || !strcmp(ann, "yes"));
    free(prio);
    free(ro);
    free(ann);
}

void repl_role_replica(client *c) {
    pthread_mutex_lock(&rmu);
    const char *st = rstate == RS_CONNECTED    ? "connected"
                     : rstate == RS_SYNC      ? "sync"
                     : rstate == RS_HANDSHAKE ? "handshake"
                     : rstate == RS_CONNECTING ? "connecting"
                                               : "connect";
    char host[256];
    snprintf(host, sizeof(host), "%s", mhost ? mhost : "");
    int port = mport;
    long long off = rstate == RS_CONNECTED ? (long long)__atomic_load_n(&reploff, __ATOMIC_RELAXED) : -1;
    pthread_mutex_unlock(&rmu);
    reply_array(c, 5);
    reply_bulk_cstr(c, "slave");
    reply_bulk_cstr(c, host);
    reply_int(c, port);
    reply_bulk_cstr(c, st);
    reply_int(c, off);
}

/* replicaof in the config file, as Redis 7.0 reads it: a host and a port
 * of 0-65535, or "no one" (none). */
static int replicaof_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    char host[256], port[32], extra;
    if (!v[0]) return 0;
    if (sscanf(v, "%255s %31s %c", host, port, &extra) != 2) {
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    }
    if (!strcasecmp(host, "no") && !strcasecmp(port, "one")) {
        snprintf(norm, normlen, "%s", "");
        return 1;
    }
    char *end;
    errno = 0;
    long p = strtol(port, &end, 10);
    if (*end || errno || p < 0 || p > 65535) {
        snprintf(err, errlen, "Invalid master port");
        return -1;
    }
    return 0;
}

void repl_replicaof_config_register(void) {
    static const config_hook hook = {replicaof_check, NULL, NULL};
    if (config_register_hook("replicaof", &hook) != 0) abort();
}

void repl_replica_init(void) {
    client_init_internal(&mc, CLIENT_PRIMARY);
    snprintf(mc.addr, sizeof(mc.addr), "master");
    if (config_bind_int("replica-serve-stale-data", &serve_stale) || config_bind_int("replica-read-only", &read_only))
        abort();
    persist_set_repl_info(save_repl_info);
    persist_set_repl_resume(resume_at_start);
    char *v = config_value("replicaof");
    if (v && v[0]) {
        char host[256];
        int port;
        if (sscanf(v, "%255s %d", host, &port) == 2) {
            char err[128];
            /* At start-up there is no history to continue from (Redis
             * would take it from the RDB's replication fields). */
            if (replicaof(host, port, 0, err, sizeof(err)) < 0) log_warn("replicaof %s: %s", v, err);
        }
    }
    free(v);
}

void repl_start(void) {
    pthread_mutex_lock(&rmu);
    started = 1;
    int start = mhost && !thread_on;
    if (start) thread_on = 1;
    pthread_mutex_unlock(&rmu);
    if (start && pthread_create(&rtid, NULL, replica_main, NULL) == 0) {
        pthread_detach(rtid);
    } else if (start) {
        log_warn("Can't start the replication thread");
        pthread_mutex_lock(&rmu);
        thread_on = 0;
        pthread_mutex_unlock(&rmu);
    }
}

void repl_replica_shutdown(void) {
    pthread_mutex_lock(&rmu);
    __atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&rcv);
    pthread_mutex_unlock(&rmu);
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&rmu);
        int on = thread_on;
        pthread_mutex_unlock(&rmu);
        if (!on) break;
        usleep(20000);
    }
}
