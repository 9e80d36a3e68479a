/* client_cmd.c -- CLIENT subcommands and MONITOR.
 *
 * Clients live on their own workers; CLIENT LIST and KILL walk the global
 * registry under its lock (session_registry_lock), and KILL only flags the
 * victim and wakes its worker, which frees it. MONITOR lines are formatted
 * by the executing thread and queued to each monitor's worker. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/server/acl.h"
#include "cmd/blocking.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/server/admin_family.h"
#include "session/reply.h"
#include "util/strutil.h"
#include "session/session.h"
#include "base/config.h"
#include "cmd/multi.h"
#include "cmd/repl/repl.h"
#include "cmd/server/client_cmd.h"
#include "cmd/server/pubsub.h"
#include "cmd/tracking.h"

static pthread_mutex_t monitor_lock = PTHREAD_MUTEX_INITIALIZER;
static client **monitors;
static int nmonitors, capmonitors;

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void client_set_name(client *c, const char *p, size_t n) {
    session_registry_lock();
    free(c->name);
    c->name = n ? strndup(p, n) : NULL;
    session_registry_unlock();
}

void client_reset_state(client *c) {
    multi_discard_state(c);
    __atomic_store_n(&c->db, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->resp, 2, __ATOMIC_RELAXED);
    /* CLIENT NO-EVICT survives RESET, as in Redis 7.0; so does a SKIP in
     * force (RESET's own +RESET is skipped), while OFF and a SKIP asked
     * for by the command before are lifted. */
    client_flag_off(c, CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP_NEXT | CLIENT_MULTI | CLIENT_DIRTY_EXEC |
                           CLIENT_DIRTY_CAS);
    if (client_flags_peek(c) & CLIENT_MONITOR) {
        cmd_client_gone(c);
        client_flag_off(c, CLIENT_MONITOR);
    }
    client_set_name(c, NULL, 0);
    block_forget_client(c);
    pubsub_client_gone(c);
    tracking_client_gone(c);
    acl_client_reset(c);
}

void cmd_client_gone(client *c) {
    block_forget_client(c);
    pubsub_client_gone(c);
    tracking_client_gone(c);
    pthread_mutex_lock(&monitor_lock);
    for (int i = 0; i < nmonitors; i++)
        if (monitors[i] == c) {
            monitors[i] = monitors[nmonitors - 1];
            /* Read without the lock by monitor_feed's early exit. */
            __atomic_store_n(&nmonitors, nmonitors - 1, __ATOMIC_RELAXED);
            break;
        }
    pthread_mutex_unlock(&monitor_lock);
    multi_discard_state(c);
    acl_client_gone(c);
    repl_client_gone(c);
}

/* Quote an argument the way Redis's MONITOR does (sdscatrepr). */
static void repr(char **buf, size_t *len, size_t *cap, const char *p, size_t n) {
    if (*cap - *len < n * 4 + 8) {
        *cap = (*len + n * 4 + 8) * 2;
        *buf = realloc(*buf, *cap);
    }
    *len += str_repr(*buf + *len, p, n);
}

static void monitor_feed(client *c, const cmd_def *cmd, int dbid) {
    (void)cmd;
    if (!__atomic_load_n(&nmonitors, __ATOMIC_RELAXED)) return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    size_t cap = 256, len = 0;
    char *buf = malloc(cap);
    len = (size_t)snprintf(buf, cap, "+%ld.%06ld [%d %s]", (long)ts.tv_sec, ts.tv_nsec / 1000, dbid,
                           (client_flags_peek(c) & CLIENT_SCRIPT) ? "lua" : c->addr);
    for (int i = 0; i < c->argc; i++) {
        if (cap - len < 2) buf = realloc(buf, cap *= 2);
        buf[len++] = ' ';
        repr(&buf, &len, &cap, c->argv[i].p, c->argv[i].n);
    }
    if (cap - len < 3) buf = realloc(buf, cap + 3);
    buf[len++] = '\r';
    buf[len++] = '\n';
    pthread_mutex_lock(&monitor_lock);
    /* Every monitor sees the line, its own commands' too, unless CLIENT
     * REPLY OFF or SKIP holds its output back (MONITOR lines are not
     * pushes): the state when the line is made decides, as in Redis 7.0. */
    for (int i = 0; i < nmonitors; i++) {
        if (monitors[i] == c) reply_raw(c, buf, len); /* after its reply, muted with it */
        else if (!(client_flags_peek(monitors[i]) & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)))
            session_client_send_async(monitors[i], buf, len);
    }
    pthread_mutex_unlock(&monitor_lock);
    free(buf);
}

static void monitorCommand(client *c) {
    if (client_flags_peek(c) & CLIENT_MONITOR) return;
    if (client_flags_peek(c) & CLIENT_MULTI) {
        reply_error(c, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    pthread_mutex_lock(&monitor_lock);
    if (nmonitors == capmonitors) {
        capmonitors = capmonitors ? capmonitors * 2 : 4;
        monitors = realloc(monitors, sizeof(client *) * (size_t)capmonitors);
    }
    monitors[nmonitors] = c;
    __atomic_store_n(&nmonitors, nmonitors + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&monitor_lock);
    client_flag_on(c, CLIENT_MONITOR);
    cmd_set_monitor_hook(monitor_feed);
    reply_ok(c);
}

static const char *client_type(const client *c) {
    uint32_t f = client_flags_peek(c);
    return (f & CLIENT_PRIMARY) ? "master" : (f & CLIENT_PUBSUB) ? "pubsub" : "normal";
}

/* The client may belong to another worker: its fields are read with
 * relaxed atomic loads (see client.h). */
static void flags_str(const client *c, char *out) {
    char *p = out;
    uint32_t f = client_flags_peek(c);
    if (f & CLIENT_PRIMARY) *p++ = 'M';
    if (f & CLIENT_MONITOR) *p++ = 'O';
    if (f & CLIENT_PUBSUB) *p++ = 'P';
    if (f & (CLIENT_MULTI | CLIENT_IN_EXEC)) *p++ = 'x'; /* Redis keeps it set while EXEC runs */
    if (f & (CLIENT_BLOCKED | CLIENT_PAUSED)) *p++ = 'b';
    if (f & CLIENT_TRACKING) *p++ = 't';
    if (f & CLIENT_TRACKING_BROKEN_REDIR) *p++ = 'R';
    if (f & CLIENT_TRACKING_BCAST) *p++ = 'B';
    if (__atomic_load_n(&c->cas_dirty, __ATOMIC_RELAXED)) *p++ = 'd';
    if (f & CLIENT_CLOSE_AFTER_REPLY) *p++ = 'c';
    if (f & CLIENT_CLOSE_ASAP) *p++ = 'A';
    if (f & CLIENT_UNIX_SOCKET) *p++ = 'U';
    if (f & CLIENT_NO_EVICT) *p++ = 'e';
    if (p == out) *p++ = 'N';
    *p = '\0';
}

#define CLIENT_OBUF_CHUNK (16 * 1024) /* Redis's PROTO_REPLY_CHUNK_BYTES */

static size_t client_info_line(const client *c, const client *self, char *buf, size_t cap) {
    char fl[16];
    flags_str(c, fl);
    int64_t now = wall_ms();
    const struct cmd_def *last = __atomic_load_n(&c->last, __ATOMIC_RELAXED);
    const struct cmd_def *cur = __atomic_load_n(&c->cur, __ATOMIC_RELAXED);
    const char *cmd = last ? last->fullname : "NULL";
    if (cur && cur->fullname) cmd = cur->fullname;
    uint32_t f = client_flags_peek(c);
    size_t olen = __atomic_load_n(&c->olen, __ATOMIC_RELAXED), osent = __atomic_load_n(&c->osent, __ATOMIC_RELAXED);
    size_t qlen = __atomic_load_n(&c->qbuf_len, __ATOMIC_RELAXED), qfree = __atomic_load_n(&c->qbuf_free, __ATOMIC_RELAXED);
    size_t amem = session_client_argv_memory(c, self);
    size_t mmem = __atomic_load_n(&c->multi_mem, __ATOMIC_RELAXED);
    int multi = (f & (CLIENT_MULTI | CLIENT_IN_EXEC)) ? __atomic_load_n(&c->multi_count, __ATOMIC_RELAXED) : -1;
    /* The output not sent yet, in Redis's terms: its first 16 KiB are the
     * client's buffer (obl), the rest its reply list (omem, in oll blocks
     * of 16 KiB), which is what client-output-buffer-limit and the tools
     * that look for clients with big output buffers read. */
    size_t unsent = olen > osent ? olen - osent : 0;
    size_t obl = unsent < CLIENT_OBUF_CHUNK ? unsent : CLIENT_OBUF_CHUNK, omem = unsent - obl;
    size_t oll = (omem + CLIENT_OBUF_CHUNK - 1) / CLIENT_OBUF_CHUNK;
    return (size_t)snprintf(
        buf, cap,
        "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%d psub=%d ssub=%d "
        "multi=%d qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu obl=%zu oll=%zu omem=%zu "
        "tot-mem=%zu events=r cmd=%s user=%s redir=%lld resp=%d\n",
        (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "",
        (long long)((now - c->ctime_ms) / 1000),
        (long long)((now - __atomic_load_n(&c->last_ms, __ATOMIC_RELAXED)) / 1000), fl,
        __atomic_load_n(&c->db, __ATOMIC_RELAXED), __atomic_load_n(&c->sub_count, __ATOMIC_RELAXED),
        __atomic_load_n(&c->psub_count, __ATOMIC_RELAXED), __atomic_load_n(&c->ssub_count, __ATOMIC_RELAXED), multi,
        qlen, qfree, amem, mmem, __atomic_load_n(&c->rbs, __ATOMIC_RELAXED), __atomic_load_n(&c->rbp, __ATOMIC_RELAXED),
        obl, oll, omem, session_client_memory(c, self), cmd,
        (f & CLIENT_PRIMARY) ? "(superuser)" : acl_user_name(acl_client_user(c)),
        (f & CLIENT_TRACKING) ? (long long)__atomic_load_n(&c->track_redir, __ATOMIC_RELAXED) : -1LL,
        __atomic_load_n(&c->resp, __ATOMIC_RELAXED));
}

char *client_info_dup(const client *c) {
    char buf[2048];
    size_t n = client_info_line(c, c, buf, sizeof(buf));
    if (n >= sizeof(buf)) n = sizeof(buf) - 1; /* cut: a diagnostic line */
    while (n && buf[n - 1] == '\n') n--;
    return strndup(buf, n);
}

struct acl_user *client_swap_user(client *c, struct acl_user *u) {
    session_registry_lock();
    struct acl_user *old = c->acl_user;
    __atomic_store_n(&c->acl_user, u, __ATOMIC_RELEASE);
    session_registry_unlock();
    return old;
}

typedef struct kill_user_ctx {
    const struct acl_user *u;
    client *self;
    int pubsub_only;
    long killed;
} kill_user_ctx;

/* Disconnect c for an ACL change made by self: self after its reply. */
static void kill_for_acl(client *c, client *self) {
    if (c == self) client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
    else session_client_kill(c);
}

static void kill_user_one(void *arg, client *c) {
    kill_user_ctx *k = arg;
    if (acl_client_user(c) != k->u) return;
    if (k->pubsub_only && !(client_flags_peek(c) & CLIENT_PUBSUB)) return;
    kill_for_acl(c, k->self);
    k->killed++;
}

long client_kill_user(const struct acl_user *u, client *self, int pubsub_only) {
    kill_user_ctx k = {u, self, pubsub_only, 0};
    session_registry_lock();
    session_clients_each(kill_user_one, &k);
    session_registry_unlock();
    return k.killed;
}

typedef struct kill_ids_ctx {
    const struct acl_user *u;
    client *self;
    const uint64_t *ids;
    size_t n;
    long killed;
} kill_ids_ctx;

static void kill_ids_one(void *arg, client *c) {
    kill_ids_ctx *k = arg;
    if (acl_client_user(c) != k->u) return;
    size_t i = 0;
    while (i < k->n && k->ids[i] != c->id) i++;
    if (i == k->n) return;
    kill_for_acl(c, k->self);
    k->killed++;
}

long client_kill_user_ids(const struct acl_user *u, client *self, const uint64_t *ids, size_t n) {
    if (!n) return 0;
    kill_ids_ctx k = {u, self, ids, n, 0};
    session_registry_lock();
    session_clients_each(kill_ids_one, &k);
    session_registry_unlock();
    return k.killed;
}

typedef struct list_ctx {
    char *buf;
    size_t len, cap;
    const char *type;
    unsigned long long *ids;
    int nids;
    const client *self; /* the client asking */
} list_ctx;

static int list_wants(const list_ctx *lc, const char *type, unsigned long long id) {
    if (lc->type && strcmp(lc->type, type) != 0) return 0;
    if (!lc->nids) return 1;
    for (int i = 0; i < lc->nids; i++)
        if (lc->ids[i] == id) return 1;
    return 0;
}

/* Room for n more bytes and a NUL: 0, or -1 (no memory; the list ends). */
static int list_room(list_ctx *lc, size_t n) {
    if (lc->cap - lc->len > n) return 0;
    size_t cap = lc->cap * 2 + n + 1024;
    char *b = realloc(lc->buf, cap);
    if (!b) return -1;
    lc->buf = b;
    lc->cap = cap;
    return 0;
}

static void list_one(void *arg, client *c) {
    list_ctx *lc = arg;
    if (!list_wants(lc, client_type(c), c->id)) return;
    /* A line has no fixed bound (a client name is any length). */
    for (;;) {
        size_t n = client_info_line(c, lc->self, lc->buf ? lc->buf + lc->len : NULL, lc->cap - lc->len);
        if (n < lc->cap - lc->len) {
            lc->len += n;
            return;
        }
        if (list_room(lc, n) != 0) return;
    }
}

/* A replication link, as Redis lists a replica's client. */
static void list_link(void *arg, const repl_link_view *v) {
    list_ctx *lc = arg;
    if (!list_wants(lc, "replica", v->id)) return;
    int64_t now = wall_ms();
    for (;;) {
        size_t avail = lc->cap - lc->len;
        size_t n = (size_t)snprintf(
            lc->buf ? lc->buf + lc->len : NULL, avail,
            "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=S db=0 sub=0 psub=0 ssub=0 "
            "multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=%zu tot-mem=%zu "
            "events=r cmd=replconf user=%s redir=-1 resp=%d\n",
            (unsigned long long)v->id, v->addr, v->laddr, v->fd, v->name, (long long)((now - v->ctime_ms) / 1000),
            (long long)((now - v->last_ms) / 1000), v->obuf, v->obuf + sizeof(client), v->user, v->resp);
        if (n < avail) {
            lc->len += n;
            return;
        }
        if (list_room(lc, n) != 0) return;
    }
}

static int parse_type(client *c, const garg *a, const char **out) {
    if (arg_is(a, "normal")) *out = "normal";
    else if (arg_is(a, "pubsub")) *out = "pubsub";
    else if (arg_is(a, "master")) *out = "master";
    else if (arg_is(a, "replica") || arg_is(a, "slave")) *out = "replica";
    else {
        reply_errorf(c, "ERR Unknown client type '%.128s'", a->p);
        return -1;
    }
    return 0;
}

static void clientListCommand(client *c) {
    list_ctx lc = {0};
    unsigned long long ids[64];
    if (c->argc == 4 && arg_is(&c->argv[2], "type")) {
        if (parse_type(c, &c->argv[3], &lc.type) != 0) return;
    } else if (c->argc > 3 && arg_is(&c->argv[2], "id")) {
        for (int i = 3; i < c->argc && lc.nids < 64; i++) {
            long long v;
            if (!str_to_ll(c->argv[i].p, c->argv[i].n, &v) || v <= 0) {
                reply_error(c, "ERR Invalid client ID");
                return;
            }
            ids[lc.nids++] = (unsigned long long)v;
        }
        lc.ids = ids;
    } else if (c->argc != 2) {
        reply_err_syntax(c);
        return;
    }
    session_registry_lock();
    lc.self = c;
    session_clients_each(list_one, &lc);
    session_registry_unlock();
    /* The replicas' links left the registry for the replication threads;
     * a replica's primary is a client of its replication thread. */
    repl_links_each(list_link, &lc);
    repl_primary_client_each(list_one, &lc);
    reply_verbatim(c, lc.buf ? lc.buf : "", lc.len, "txt");
    free(lc.buf);
}

static void clientInfoCommand(client *c) {
    list_ctx lc = {0};
    lc.self = c;
    session_registry_lock();
    list_one(&lc, c); /* a line of any length (a long name) */
    session_registry_unlock();
    reply_verbatim(c, lc.buf ? lc.buf : "", lc.len, "txt");
    free(lc.buf);
}

static void clientIdCommand(client *c) { reply_int(c, (long long)c->id); }

static int valid_name_chars(const garg *a) {
    for (size_t i = 0; i < a->n; i++)
        if (a->p[i] < '!' || a->p[i] > '~') return 0;
    return 1;
}

static void clientSetnameCommand(client *c) {
    if (!valid_name_chars(&c->argv[2])) {
        reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    client_set_name(c, c->argv[2].p, c->argv[2].n);
    reply_ok(c);
}

static void clientGetnameCommand(client *c) {
    if (c->name) reply_bulk_cstr(c, c->name);
    else reply_null(c);
}

typedef struct kill_ctx {
    client *self;
    int old_style;
    const char *addr, *laddr, *type;
    struct acl_user *user;
    unsigned long long id;
    int skipme;
    long long maxage;
    long killed;
    unsigned long long links[64]; /* replication links to close */
    int nlinks;
    int primary; /* the link to the primary is to close */
} kill_ctx;

static void kill_one(void *arg, client *c) {
    kill_ctx *k = arg;
    if (k->addr && strcmp(k->addr, c->addr) != 0) return;
    if (k->laddr && strcmp(k->laddr, c->laddr) != 0) return;
    if (k->type && strcmp(k->type, client_type(c)) != 0) return;
    /* A replica's primary runs as no user (Redis's superuser): no USER
     * filter names it. */
    if (k->user && ((client_flags_peek(c) & CLIENT_PRIMARY) || acl_client_user(c) != k->user)) return;
    if (k->id && k->id != c->id) return;
    if (k->maxage && (wall_ms() - c->ctime_ms) / 1000 < k->maxage) return;
    if (c == k->self && k->skipme) return;
    if (client_flags_peek(c) & CLIENT_PRIMARY) k->primary = 1; /* closed after the walk */
    else if (c == k->self) client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
    else session_client_kill(c);
    k->killed++;
}

/* A replication link the filters name (a replica's client, flags S). */
static void kill_link(void *arg, const repl_link_view *v) {
    kill_ctx *k = arg;
    if (k->type && strcmp(k->type, "replica") != 0) return;
    if (k->addr && strcmp(k->addr, v->addr) != 0) return;
    if (k->laddr && strcmp(k->laddr, v->laddr) != 0) return;
    if (k->user && strcmp(acl_user_name(k->user), v->user) != 0) return;
    if (k->id && k->id != v->id) return;
    if (k->maxage && (wall_ms() - v->ctime_ms) / 1000 < k->maxage) return;
    if (k->nlinks < (int)(sizeof(k->links) / sizeof(k->links[0]))) k->links[k->nlinks++] = v->id;
}

static void clientKillCommand(client *c) {
    kill_ctx k = {0};
    k.self = c;
    k.skipme = 1;
    if (c->argc == 3) {
        k.old_style = 1;
        k.skipme = 0;
        k.addr = c->argv[2].p;
    } else if (c->argc > 3 && (c->argc % 2) == 0) {
        for (int i = 2; i < c->argc; i += 2) {
            const garg *o = &c->argv[i], *v = &c->argv[i + 1];
            if (arg_is(o, "id")) {
                long long id;
                if (!str_to_ll(v->p, v->n, &id) || id <= 0) {
                    reply_error(c, "ERR client-id should be greater than 0");
                    goto out;
                }
                k.id = (unsigned long long)id;
            } else if (arg_is(o, "type")) {
                if (parse_type(c, v, &k.type) != 0) goto out;
            } else if (arg_is(o, "addr")) {
                k.addr = v->p;
            } else if (arg_is(o, "laddr")) {
                k.laddr = v->p;
            } else if (arg_is(o, "user")) {
                if (k.user) acl_user_release(k.user);
                k.user = acl_user_get(v->p, v->n);
                if (!k.user) {
                    reply_errorf(c, "ERR No such user '%s'", v->p);
                    goto out;
                }
            } else if (arg_is(o, "skipme")) {
                if (arg_is(v, "yes")) k.skipme = 1;
                else if (arg_is(v, "no")) k.skipme = 0;
                else {
                    reply_err_syntax(c);
                    goto out;
                }
            } else {
                reply_err_syntax(c);
                goto out;
            }
        }
    } else {
        reply_err_syntax(c);
        goto out;
    }
    session_registry_lock();
    session_clients_each(kill_one, &k);
    session_registry_unlock();
    /* Replication links are not in the client registry (they left their
     * worker for the replication thread), nor is a replica's primary. */
    repl_links_each(kill_link, &k);
    for (int i = 0; i < k.nlinks; i++) k.killed += repl_kill_replicas(k.links[i]);
    repl_primary_client_each(kill_one, &k);
    if (k.primary && !repl_kill_primary_link()) k.killed--; /* gone meanwhile */
    if (k.old_style) {
        if (k.killed == 0) reply_error(c, "ERR No such client");
        else reply_ok(c);
    } else {
        reply_int(c, k.killed);
    }
out:
    if (k.user) acl_user_release(k.user);
}

/* CLIENT PAUSE <timeout> [WRITE|ALL]: the mode is checked before the
 * timeout, as Redis does; a zero timeout is a pause already over. */
static void clientPauseCommand(client *c) {
    int mode = SESSION_PAUSE_ALL;
    if (c->argc > 4) {
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLIENT HELP.",
                     (int)(c->argv[1].n > 128 ? 128 : c->argv[1].n), c->argv[1].p);
        return;
    }
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "write")) mode = SESSION_PAUSE_WRITE;
        else if (!arg_is(&c->argv[3], "all")) {
            reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    long long ms;
    if (!str_to_ll(c->argv[2].p, c->argv[2].n, &ms)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return;
    }
    /* As Redis, an end past the range of the clock wraps (to a time long
     * gone: the pause is over at once). */
    int64_t end = ms == 0 ? 0 : (int64_t)((uint64_t)wall_ms() + (uint64_t)ms);
    session_pause(SESSION_PAUSE_BY_CLIENT, end, mode);
    reply_ok(c);
}

static void clientUnpauseCommand(client *c) {
    session_unpause(SESSION_PAUSE_BY_CLIENT);
    reply_ok(c);
}

static void clientReplyCommand(client *c) {
    if (arg_is(&c->argv[2], "on")) {
        /* As Redis 7.0: ON lifts OFF and a SKIP in force (this reply goes
         * out), but not a SKIP requested earlier in the same EXEC. */
        client_flag_off(c, CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP);
        reply_ok(c);
    } else if (arg_is(&c->argv[2], "off")) {
        client_flag_on(c, CLIENT_REPLY_OFF);
    } else if (arg_is(&c->argv[2], "skip")) {
        if (!(client_flags_peek(c) & CLIENT_REPLY_OFF)) client_flag_on(c, CLIENT_REPLY_SKIP_NEXT);
    } else {
        reply_err_syntax(c);
    }
}

static void clientNoEvictCommand(client *c) {
    if (arg_is(&c->argv[2], "on")) client_flag_on(c, CLIENT_NO_EVICT);
    else if (arg_is(&c->argv[2], "off")) {
        client_flag_off(c, CLIENT_NO_EVICT);
        session_evict_request(); /* it may be the one over the limit */
    } else {
        reply_err_syntax(c);
        return;
    }
    reply_ok(c);
}

static void clientHelpCommand(client *c) {
    static const char *const lines[] = {
        "CACHING (YES|NO)",
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR",
        "    Return the client ID we are redirecting to when tracking is enabled.",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes).",
        "LIST [options ...]",
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Return clients of specified type.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching.",
        "TRACKINGINFO",
        "    Report tracking status for the current connection.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        NULL,
    };
    admin_reply_help(c, "CLIENT", lines);
}

const cmd_handler client_handlers[] = {
    {"client|id", clientIdCommand, CMD_LOCK_NONE},
    {"client|setname", clientSetnameCommand, CMD_LOCK_NONE},
    {"client|getname", clientGetnameCommand, CMD_LOCK_NONE},
    {"client|list", clientListCommand, CMD_LOCK_NONE},
    {"client|info", clientInfoCommand, CMD_LOCK_NONE},
    {"client|kill", clientKillCommand, CMD_LOCK_NONE},
    {"client|pause", clientPauseCommand, CMD_LOCK_NONE},
    {"client|unpause", clientUnpauseCommand, CMD_LOCK_NONE},
    {"client|reply", clientReplyCommand, CMD_LOCK_NONE},
    {"client|no-evict", clientNoEvictCommand, CMD_LOCK_NONE},
    {"client|help", clientHelpCommand, CMD_LOCK_NONE},
    {"monitor", monitorCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
