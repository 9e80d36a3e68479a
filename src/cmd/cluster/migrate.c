/* migrate.c -- MIGRATE: move keys to another instance as DUMP payloads,
 * Redis 7.0's way.
 *
 * MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw]
 *         [AUTH2 user pw] [KEYS key ...]
 * One pipelined batch goes to the target: AUTH when asked, SELECT when the
 * link's database differs, then one RESTORE (RESTORE-ASKING in cluster
 * mode) per key with its remaining TTL and payload, REPLACE when asked.
 * Every reply is read; a key the target accepted is deleted here unless
 * COPY, and the call propagates as DEL of exactly those keys.
 *
 * With tls-cluster yes the link is TLS (base/tls.c's client context, the
 * handshake within the connect's timeout), as Redis's MIGRATE.
 *
 * Links are cached per "host:port" (at most MIG_CACHE_MAX), with the
 * database last selected on them; the cron closes those idle for more than
 * MIG_CACHE_TTL_S seconds, and an I/O error closes the link. When the
 * error came before any reply was read (a cached link the peer had
 * dropped), the batch is tried once more on a new link, unless it timed
 * out. Invariant: a link is either in the cache or checked out by exactly
 * one MIGRATE, never both, so the cron never closes a link in use.
 *
 * Locking: the keys are named by a movable spec, so the dispatcher runs
 * MIGRATE under the keyspace write lock; the I/O blocks under it up to
 * the timeout, as Redis's single thread does. */
#include "cmd/cluster/migrate.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/tls.h"
#include "cmd/cluster/cluster.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/propagate.h"
#include "db/db.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "session/reply.h"
#include "util/rand.h"
#include "util/sockio.h"
#include "util/strutil.h"

#define MIG_CACHE_MAX 64
#define MIG_CACHE_TTL_S 10
#define MIG_CHUNK (64 * 1024)

typedef struct mig_link {
    char *name;     /* "host:port" as given */
    int fd;
    SSL *ssl;       /* tls-cluster: the link over TLS */
    long last_db;   /* -1: unknown, SELECT next time */
    time_t last_use;
} mig_link;

static pthread_mutex_t mig_mu = PTHREAD_MUTEX_INITIALIZER;
static mig_link *mig_cache[MIG_CACHE_MAX]; /* mig_mu */
static int mig_ncache;                     /* mig_mu */

static void mig_link_free(mig_link *l) {
    if (!l) return;
    tls_close(l->ssl);
    if (l->fd >= 0) close(l->fd);
    free(l->name);
    free(l);
}

/* Take the cached link for name out of the cache, or NULL. */
static mig_link *mig_checkout(const char *name) {
    mig_link *l = NULL;
    pthread_mutex_lock(&mig_mu);
    for (int i = 0; i < mig_ncache; i++)
        if (strcmp(mig_cache[i]->name, name) == 0) {
            l = mig_cache[i];
            mig_cache[i] = mig_cache[--mig_ncache];
            break;
        }
    pthread_mutex_unlock(&mig_mu);
    return l;
}

/* Put a link back; a full cache drops one at random, as Redis does. */
static void mig_checkin(mig_link *l) {
    if (l->fd < 0) {
        mig_link_free(l);
        return;
    }
    mig_link *drop = NULL;
    pthread_mutex_lock(&mig_mu);
    if (mig_ncache == MIG_CACHE_MAX) {
        int i = (int)rand_below(MIG_CACHE_MAX);
        drop = mig_cache[i];
        mig_cache[i] = l;
    } else {
        mig_cache[mig_ncache++] = l;
    }
    pthread_mutex_unlock(&mig_mu);
    mig_link_free(drop);
}

void migrate_close_idle(void) {
    time_t now = time(NULL);
    mig_link *gone[MIG_CACHE_MAX];
    int n = 0;
    pthread_mutex_lock(&mig_mu);
    for (int i = 0; i < mig_ncache;) {
        if (now - mig_cache[i]->last_use > MIG_CACHE_TTL_S) {
            gone[n++] = mig_cache[i];
            mig_cache[i] = mig_cache[--mig_ncache];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&mig_mu);
    for (int i = 0; i < n; i++) mig_link_free(gone[i]);
}

int migrate_cached_links(void) {
    pthread_mutex_lock(&mig_mu);
    int n = mig_ncache;
    pthread_mutex_unlock(&mig_mu);
    return n;
}

/* The cached link to host:port or a new one; NULL when the connect failed.
 * A connect refused after it started gives a link without a socket
 * (fd -1): as in Redis, the failure shows at the first write. */
static mig_link *mig_get(const char *name, const char *host, int port, long timeout) {
    mig_link *l = mig_checkout(name);
    if (!l) {
        char err[128];
        int fd = sock_connect(host, port, timeout, err, sizeof(err));
        if (fd == -1) return NULL;
        SSL *ssl = NULL;
        if (tls_cluster()) {
            /* As Redis's TLS blocking connect: the handshake is part of
             * the connect, within the same timeout. */
            if (fd < 0) return NULL;
            if (!(ssl = tls_connect_new(fd))) {
                close(fd);
                return NULL;
            }
            tls_sync_timeout(ssl, timeout);
            if (tls_connect_blocking(ssl, err, sizeof(err)) != 0) {
                SSL_free(ssl);
                close(fd);
                return NULL;
            }
        }
        if (fd < 0) fd = -1;
        l = calloc(1, sizeof(*l));
        if (!l || !(l->name = strdup(name))) abort();
        l->fd = fd;
        l->ssl = ssl;
        l->last_db = -1;
    }
    l->last_use = time(NULL);
    return l;
}

static ssize_t mig_write(mig_link *l, const void *p, size_t n, long timeout) {
    return l->ssl ? tls_sync_write(l->ssl, p, n, timeout) : sock_write(l->fd, p, n, timeout);
}

static ssize_t mig_read_line(mig_link *l, char *buf, size_t size, long timeout) {
    return l->ssl ? tls_sync_read_line(l->ssl, buf, size, timeout) : sock_read_line(l->fd, buf, size, timeout);
}

/* ---- the outgoing batch ------------------------------------------------- */

typedef struct mig_buf {
    char *p;
    size_t len, cap;
} mig_buf;

static void mig_put(mig_buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) abort();
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void mig_put_hdr(mig_buf *b, char mark, long long n) {
    char h[32];
    int k = snprintf(h, sizeof(h), "%c%lld\r\n", mark, n);
    mig_put(b, h, (size_t)k);
}

static void mig_put_bulk(mig_buf *b, const char *p, size_t n) {
    mig_put_hdr(b, '$', (long long)n);
    mig_put(b, p, n);
    mig_put(b, "\r\n", 2);
}

static void mig_put_bulk_ll(mig_buf *b, long long v) {
    char s[32];
    int k = snprintf(s, sizeof(s), "%lld", v);
    mig_put_bulk(b, s, (size_t)k);
}

/* ---- the command ---------------------------------------------------------- */

static void migrateCommand(client *c) {
    int copy = 0, replace = 0, first = 3, nkeys = 1;
    const garg *user = NULL, *pass = NULL;
    garg user_v, pass_v;
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "copy")) {
            copy = 1;
        } else if (arg_is(&c->argv[j], "replace")) {
            replace = 1;
        } else if (arg_is(&c->argv[j], "auth")) {
            if (!more) {
                reply_err_syntax(c);
                return;
            }
            pass_v = c->argv[++j];
            pass = &pass_v;
            cmd_redact_arg(c, j);
        } else if (arg_is(&c->argv[j], "auth2")) {
            if (more < 2) {
                reply_err_syntax(c);
                return;
            }
            user_v = c->argv[++j];
            user = &user_v;
            cmd_redact_arg(c, j);
            pass_v = c->argv[++j];
            pass = &pass_v;
            cmd_redact_arg(c, j);
        } else if (arg_is(&c->argv[j], "keys")) {
            if (c->argv[3].n != 0) {
                reply_error(c, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
                return;
            }
            first = j + 1;
            nkeys = c->argc - j - 1;
            break;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    long long timeout, dbid;
    if (!str_to_ll(c->argv[5].p, c->argv[5].n, &timeout) || timeout < LONG_MIN || timeout > LONG_MAX ||
        !str_to_ll(c->argv[4].p, c->argv[4].n, &dbid) || dbid < LONG_MIN || dbid > LONG_MAX) {
        reply_err_not_int(c);
        return;
    }
    if (timeout <= 0) timeout = 1000;

    /* The keys that exist; none: +NOKEY (often a key that just expired). */
    gdb *db = cmd_db(c);
    int *kidx = malloc(sizeof(int) * (size_t)(nkeys ? nkeys : 1));
    if (!kidx) abort();
    int n = 0;
    for (int j = 0; j < nkeys; j++)
        if (db_lookup_read(db, c->argv[first + j].p, c->argv[first + j].n)) kidx[n++] = first + j;
    if (n == 0) {
        free(kidx);
        reply_simple(c, "NOKEY");
        return;
    }

    char host[256], name[300];
    snprintf(host, sizeof(host), "%.*s", (int)(c->argv[1].n < 255 ? c->argv[1].n : 255), c->argv[1].p);
    snprintf(name, sizeof(name), "%s:%.*s", host, (int)(c->argv[2].n < 32 ? c->argv[2].n : 32), c->argv[2].p);
    int port = atoi(name + strlen(host) + 1);
    const char *restore = cluster_enabled() ? "RESTORE-ASKING" : "RESTORE";

    int may_retry = 1;
    for (;;) {
        int write_error = 0;
        mig_link *l = mig_get(name, host, port, (long)timeout);
        if (!l) {
            free(kidx);
            reply_error(c, "IOERR error or timeout connecting to the client");
            return;
        }
        mig_buf b = {0};
        if (pass) {
            mig_put_hdr(&b, '*', user ? 3 : 2);
            mig_put_bulk(&b, "AUTH", 4);
            if (user) mig_put_bulk(&b, user->p, user->n);
            mig_put_bulk(&b, pass->p, pass->n);
        }
        int select = l->last_db != dbid;
        if (select) {
            mig_put_hdr(&b, '*', 2);
            mig_put_bulk(&b, "SELECT", 6);
            mig_put_bulk_ll(&b, dbid);
        }
        /* Keys that expired since the first look are left out. */
        int live = 0;
        for (int j = 0; j < n; j++) {
            const garg *k = &c->argv[kidx[j]];
            dbentry *e = db_lookup_notouch(db, k->p, k->n);
            if (!e) continue;
            long long ttl = 0;
            if (db_entry_expire(e) != -1) {
                ttl = db_entry_expire(e) - db_now_ms();
                if (ttl < 0) continue;
                if (ttl < 1) ttl = 1;
            }
            unsigned char *p;
            size_t plen;
            if (rdb_dump_value(&e->val, persist_compress(), &p, &plen) != RDB_OK) continue;
            kidx[live++] = kidx[j];
            mig_put_hdr(&b, '*', replace ? 5 : 4);
            mig_put_bulk(&b, restore, strlen(restore));
            mig_put_bulk(&b, k->p, k->n);
            mig_put_bulk_ll(&b, ttl);
            mig_put_bulk(&b, (const char *)p, plen);
            free(p);
            if (replace) mig_put_bulk(&b, "REPLACE", 7);
        }
        n = live;

        errno = 0;
        int socket_error = 0, target_error = 0, j = 0;
        char line0[1024], line1[1024], line2[1024];
        for (size_t pos = 0; pos < b.len;) {
            size_t len = b.len - pos > MIG_CHUNK ? MIG_CHUNK : b.len - pos;
            if (mig_write(l, b.p + pos, len, (long)timeout) != (ssize_t)len) {
                write_error = socket_error = 1;
                break;
            }
            pos += len;
        }
        free(b.p);
        if (!socket_error && pass && mig_read_line(l, line0, sizeof(line0), (long)timeout) <= 0) socket_error = 1;
        if (!socket_error && select && mig_read_line(l, line1, sizeof(line1), (long)timeout) <= 0) socket_error = 1;
        if (socket_error) {
            /* Nothing was answered: the keys all stay here. */
            mig_link_free(l);
            if (errno != ETIMEDOUT && may_retry) {
                may_retry = 0;
                continue;
            }
            free(kidx);
            reply_errorf(c, "IOERR error or timeout %s to target instance", write_error ? "writing" : "reading");
            return;
        }

        /* The replies, one per RESTORE; the DEL to propagate names the
         * keys the target took. */
        const char **dp = NULL;
        size_t *dn = NULL;
        int ndel = 0;
        if (!copy) {
            dp = malloc(sizeof(*dp) * (size_t)(n + 1));
            dn = malloc(sizeof(*dn) * (size_t)(n + 1));
            if (!dp || !dn) abort();
            dp[0] = "DEL";
            dn[0] = 3;
            ndel = 1;
        }
        for (j = 0; j < n; j++) {
            if (mig_read_line(l, line2, sizeof(line2), (long)timeout) <= 0) {
                socket_error = 1;
                break;
            }
            const char *errline = pass && line0[0] == '-' ? line0 : select && line1[0] == '-' ? line1
                                  : line2[0] == '-'                               ? line2
                                                                                  : NULL;
            if (errline) {
                if (!target_error) {
                    l->last_db = -1;
                    target_error = 1;
                    reply_errorf(c, "ERR Target instance replied with error: %s", errline + 1);
                }
            } else if (!copy) {
                const garg *k = &c->argv[kidx[j]];
                if (db_delete(db, k->p, k->n)) {
                    cmd_key_modified(c, db, k->p, k->n);
                    cmd_notify(c, NOTIFY_GENERIC, "del", db, k->p, k->n);
                }
                dp[ndel] = k->p;
                dn[ndel++] = k->n;
            }
        }
        /* A link that failed before its first RESTORE reply: once more on
         * a new one, as nothing was taken yet. */
        int retry = !target_error && socket_error && j == 0 && may_retry && errno != ETIMEDOUT;
        if (ndel > 1) prop_rewrite(c, ndel, dp, dn);
        free(dp);
        free(dn);
        if (socket_error) {
            mig_link_free(l);
            if (retry) {
                may_retry = 0;
                continue;
            }
            if (!target_error) reply_error(c, "IOERR error or timeout reading to target instance");
            free(kidx);
            return;
        }
        if (!target_error) {
            l->last_db = (long)dbid;
            reply_ok(c);
        }
        mig_checkin(l);
        free(kidx);
        return;
    }
}

const cmd_handler migrate_handlers[] = {
    {"migrate", migrateCommand, CMD_LOCK_KEYS}, /* movable keys: the keyspace write lock */
    {NULL, NULL, 0},
};
