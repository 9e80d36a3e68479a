/* acl_check.c -- what the rest of the server asks of ACLs: the permission
 * check the dispatcher runs before every call, AUTH, the client's user
 * (RESET, disconnection), requirepass, and the ACL log (ACL LOG).
 *
 * A call is allowed when any selector of the user allows it; otherwise the
 * most specific failure is reported (channel > key > command), as Redis
 * 7.0 does. A user allowed everything is recognised by an atomic flag
 * without taking acl_lock; others are checked under its read lock.
 *
 * Invariants: every client authenticated as a user holds a reference on it
 * (client.acl_user, NULL meaning the default user), swapped under the
 * client registry lock. The ACL log is newest first, at most
 * acllog-max-len entries, under its own leaf lock (log_lock), never taken
 * with acl_lock held. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cmd/server/acl_internal.h"
#include "cmd/server/admin_family.h"
#include "session/reply.h"
#include "util/sha256.h"
#include "util/strutil.h"
#include "base/config.h"

#define LOG_GROUP_MS 60000

/* ---- Permission checks ------------------------------------------------------------ */

typedef struct keycache {
    int init, n;
    cmd_keyacc *k;
} keycache;

static int sel_check_key(const acl_sel *s, const char *key, size_t klen, int access) {
    if (s->flags & SEL_ALLKEYS) return ACL_OK;
    int need = ((access & CMD_KEY_READ) ? KP_READ : 0) | ((access & CMD_KEY_WRITE) ? KP_WRITE : 0);
    for (int i = 0; i < s->npats; i++) {
        if ((s->pats[i].flags & need) != need) continue;
        if (glob_match(s->pats[i].p, strlen(s->pats[i].p), key, klen, 0)) return ACL_OK;
    }
    return ACL_DENIED_KEY;
}

/* Redis's ACLCheckChannelAgainstList: a channel against each glob of pats,
 * a PSUBSCRIBE pattern (literal) compared as a string. */
int acl_chan_matches(char *const *pats, size_t npats, const char *ch, size_t n, int literal) {
    for (size_t i = 0; i < npats; i++) {
        size_t pl = strlen(pats[i]);
        if (literal ? (pl == n && memcmp(pats[i], ch, n) == 0) : glob_match(pats[i], pl, ch, n, 0)) return 1;
    }
    return 0;
}

static int chan_allowed(const acl_sel *s, const char *ch, size_t n, int literal) {
    return acl_chan_matches(s->chans, (size_t)s->nchans, ch, n, literal);
}

static int sel_check(const acl_sel *s, const cmd_def *cmd, garg *argv, int argc, int *pos, keycache *kc) {
    int id = acl_cmd_id(cmd);
    if (!(s->flags & SEL_ALLCOMMANDS) && !(cmd->flags & CMDF_NO_AUTH) && !acl_bit_get(s->bits, id)) {
        int idx = cmd->parent ? 2 : 1;
        if (argc <= idx || !s->firstargs || !s->firstargs[id]) return ACL_DENIED_CMD;
        int j;
        for (j = 0; s->firstargs[id][j]; j++)
            if (strcasecmp(argv[idx].p, s->firstargs[id][j]) == 0) break;
        if (!s->firstargs[id][j]) return ACL_DENIED_CMD;
    }
    if (!(s->flags & SEL_ALLKEYS)) {
        if (!kc->init) {
            kc->n = cmd_call_keys(cmd, argv, argc, &kc->k);
            kc->init = 1;
        }
        for (int j = 0; j < kc->n; j++) {
            const garg *k = &argv[kc->k[j].pos];
            if (sel_check_key(s, k->p, k->n, kc->k[j].access) != ACL_OK) {
                *pos = kc->k[j].pos;
                return ACL_DENIED_KEY;
            }
        }
    }
    if (!(s->flags & SEL_ALLCHANNELS)) {
        int first = 1, last = 0, literal = 0;
        if (id == acl_id_publish || id == acl_id_spublish) last = 1;
        else if (id == acl_id_subscribe || id == acl_id_ssubscribe) last = argc - 1;
        else if (id == acl_id_psubscribe) last = argc - 1, literal = 1;
        for (int j = first; j <= last && j < argc; j++)
            if (!chan_allowed(s, argv[j].p, argv[j].n, literal)) {
                *pos = j;
                return ACL_DENIED_CHANNEL;
            }
    }
    return ACL_OK;
}

/* Redis's ACLCheckAllUserCommandPerm: allowed if any selector allows; else
 * the most specific failure (channel > key > command), the later argument
 * on a tie. Under the read lock. */
int acl_user_check(const acl_user *u, const cmd_def *cmd, garg *argv, int argc, int *pos) {
    int relevant = ACL_DENIED_CMD, last = 0, local = 0;
    keycache kc = {0};
    for (int i = 0; i < u->nsel; i++) {
        int r = sel_check(&u->sel[i], cmd, argv, argc, &local, &kc);
        if (r == ACL_OK) {
            free(kc.k);
            return ACL_OK;
        }
        if (r > relevant || (r == relevant && local > last)) {
            relevant = r;
            last = local;
        }
    }
    free(kc.k);
    *pos = last;
    return relevant;
}

/* ---- The ACL log ------------------------------------------------------------------ */

typedef struct log_entry {
    uint64_t count;
    int reason, context;
    char *object, *user, *cinfo;
    size_t objlen, userlen;
    int64_t ctime;
} log_entry;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static log_entry **alog;   /* newest first */
static int nlog, caplog;

int64_t acl_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void log_entry_free(log_entry *e) {
    free(e->object);
    free(e->user);
    free(e->cinfo);
    free(e);
}

static char *dupn(const char *p, size_t n) {
    char *d = malloc(n + 1);
    if (!d) abort();
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static void log_trim(long max) {
    while (nlog > 0 && nlog > max) log_entry_free(alog[--nlog]);
}

/* Record a denial; a similar entry of the last minute among the ten newest
 * is bumped and moved to the front instead. */
static void acl_log_add(client *c, int reason, int context, const char *obj, size_t objlen, const char *user,
                        size_t userlen) {
    log_entry *e = calloc(1, sizeof(*e));
    if (!e) abort();
    e->count = 1;
    e->reason = reason;
    e->context = context;
    e->object = dupn(obj, objlen);
    e->objlen = objlen;
    e->user = dupn(user, userlen);
    e->userlen = userlen;
    e->ctime = acl_wall_ms();
    e->cinfo = client_info_dup(c);
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < nlog && i < 10; i++) {
        log_entry *o = alog[i];
        int64_t d = o->ctime - e->ctime;
        if (d < 0) d = -d;
        if (o->reason == e->reason && o->context == e->context && d <= LOG_GROUP_MS && o->objlen == e->objlen &&
            memcmp(o->object, e->object, e->objlen) == 0 && o->userlen == e->userlen &&
            memcmp(o->user, e->user, e->userlen) == 0) {
            free(o->cinfo);
            o->cinfo = e->cinfo;
            e->cinfo = NULL;
            o->ctime = e->ctime;
            o->count++;
            memmove(alog + 1, alog, sizeof(log_entry *) * (size_t)i);
            alog[0] = o;
            pthread_mutex_unlock(&log_lock);
            log_entry_free(e);
            return;
        }
    }
    if (nlog == caplog) {
        caplog = caplog ? caplog * 2 : 16;
        alog = realloc(alog, sizeof(log_entry *) * (size_t)caplog);
        if (!alog) abort();
    }
    memmove(alog + 1, alog, sizeof(log_entry *) * (size_t)nlog);
    alog[0] = e;
    nlog++;
    log_trim(cfg.acllog_max_len);
    pthread_mutex_unlock(&log_lock);
}

void aclLogCommand(client *c) {
    long long count = 10;
    if (c->argc > 3) {
        admin_reply_subcommand_syntax(c, "ACL");
        return;
    }
    if (c->argc == 3) {
        if (arg_is(&c->argv[2], "reset")) {
            pthread_mutex_lock(&log_lock);
            log_trim(0);
            pthread_mutex_unlock(&log_lock);
            reply_ok(c);
            return;
        }
        if (arg_ll(c, &c->argv[2], &count) != 0) return;
        if (count < 0) count = 0;
    }
    pthread_mutex_lock(&log_lock);
    if (count > nlog) count = nlog;
    int64_t now = acl_wall_ms();
    reply_array(c, count);
    for (long long i = 0; i < count; i++) {
        const log_entry *e = alog[i];
        static const char *const reasons[] = {"unknown", "command", "key", "auth", "channel"};
        reply_map(c, 7);
        reply_bulk_cstr(c, "count");
        reply_int(c, (long long)e->count);
        reply_bulk_cstr(c, "reason");
        reply_bulk_cstr(c, reasons[e->reason]);
        reply_bulk_cstr(c, "context");
        static const char *const contexts[] = {"toplevel", "multi", "lua"};
        reply_bulk_cstr(c, contexts[e->context]);
        reply_bulk_cstr(c, "object");
        reply_bulk(c, e->object, e->objlen);
        reply_bulk_cstr(c, "username");
        reply_bulk(c, e->user, e->userlen);
        reply_bulk_cstr(c, "age-seconds");
        reply_double(c, (double)(now - e->ctime) / 1000);
        reply_bulk_cstr(c, "client-info");
        reply_bulk_cstr(c, e->cinfo);
    }
    pthread_mutex_unlock(&log_lock);
}

/* The log's memory, at shutdown. */
void acl_log_free(void) {
    pthread_mutex_lock(&log_lock);
    log_trim(0);
    free(alog);
    alog = NULL;
    caplog = 0;
    pthread_mutex_unlock(&log_lock);
}

/* ---- Public entry points ---------------------------------------------------------- */

int acl_auth_required(const client *c) {
    return !(client_flags_peek(c) & CLIENT_AUTHENTICATED) &&
           __atomic_load_n(&acl_def_requires_auth, __ATOMIC_ACQUIRE);
}

int acl_default_nopass(void) { return __atomic_load_n(&acl_def_nopass, __ATOMIC_ACQUIRE); }

int acl_new_client_authenticated(void) { return !__atomic_load_n(&acl_def_requires_auth, __ATOMIC_ACQUIRE); }

struct acl_user *acl_client_user(const client *c) {
    acl_user *u = __atomic_load_n(&c->acl_user, __ATOMIC_ACQUIRE);
    return u ? u : &acl_default_user;
}

const char *acl_user_name(const struct acl_user *u) { return u->name; }

const char *acl_check_call(client *c, const cmd_def *cmd, int in_exec) {
    acl_user *u = acl_client_user(c);
    if (__atomic_load_n(&u->unrestricted, __ATOMIC_ACQUIRE)) return NULL;
    int pos = 0;
    pthread_rwlock_rdlock(&acl_lock);
    int r = acl_user_check(u, cmd, c->argv, c->argc, &pos);
    pthread_rwlock_unlock(&acl_lock);
    if (r == ACL_OK) return NULL;
    uint32_t fl = client_flags_peek(c);
    int ctx = (fl & CLIENT_SCRIPT) ? CTX_LUA : (in_exec || (fl & CLIENT_MULTI)) ? CTX_MULTI : CTX_TOPLEVEL;
    if (r == ACL_DENIED_CMD) acl_log_add(c, r, ctx, cmd->fullname, strlen(cmd->fullname), u->name, u->namelen);
    else acl_log_add(c, r, ctx, c->argv[pos].p, c->argv[pos].n, u->name, u->namelen);
    static _Thread_local char msg[512];
    if (in_exec) {
        snprintf(msg, sizeof(msg),
                 "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. "
                 "This command is no longer allowed for the following reason: %s",
                 r == ACL_DENIED_CMD   ? "no permission to execute the command or subcommand"
                 : r == ACL_DENIED_KEY ? "no permission to touch the specified keys"
                                       : "no permission to access one of the channels used as arguments");
    } else if (r == ACL_DENIED_CMD) {
        snprintf(msg, sizeof(msg), "NOPERM this user has no permissions to run the '%s' command", cmd->fullname);
    } else if (r == ACL_DENIED_KEY) {
        snprintf(msg, sizeof(msg), "NOPERM this user has no permissions to access one of the keys used as arguments");
    } else {
        snprintf(msg, sizeof(msg),
                 "NOPERM this user has no permissions to access one of the channels used as arguments");
    }
    return msg;
}

int acl_allows(client *c, const cmd_def *cmd, garg *argv, int argc) {
    acl_user *u = acl_client_user(c);
    if (__atomic_load_n(&u->unrestricted, __ATOMIC_ACQUIRE)) return 1;
    int pos = 0;
    pthread_rwlock_rdlock(&acl_lock);
    int r = acl_user_check(u, cmd, argv, argc, &pos);
    pthread_rwlock_unlock(&acl_lock);
    return r == ACL_OK;
}

static int sel_reads_any_key(const acl_sel *s) {
    if (s->flags & SEL_ALLKEYS) return 1;
    for (int i = 0; i < s->npats; i++)
        if ((s->pats[i].flags & KP_READ) && strcmp(s->pats[i].p, "*") == 0) return 1;
    return 0;
}

int acl_allows_any_key(client *c, const cmd_def *cmd) {
    acl_user *u = acl_client_user(c);
    if (__atomic_load_n(&u->unrestricted, __ATOMIC_ACQUIRE)) return 1;
    int ok = 0, pos = 0;
    keycache kc = {0};
    pthread_rwlock_rdlock(&acl_lock);
    for (int i = 0; i < u->nsel && !ok; i++)
        ok = sel_check(&u->sel[i], cmd, c->argv, c->argc, &pos, &kc) == ACL_OK && sel_reads_any_key(&u->sel[i]);
    pthread_rwlock_unlock(&acl_lock);
    free(kc.k);
    return ok;
}

/* Make u (already referenced by the caller) c's user. */
static void client_become(client *c, acl_user *u) {
    acl_user *old = client_swap_user(c, u == &acl_default_user ? NULL : u);
    acl_user_unref(old);
}

int acl_authenticate(client *c, const char *user, size_t ulen, const char *pass, size_t plen) {
    char h[SHA256_HEX_LEN + 1];
    sha256_hex(pass, plen, h);
    int ok = 0;
    pthread_rwlock_rdlock(&acl_lock);
    acl_user *u = acl_user_find(user, ulen);
    if (u && !(u->flags & U_DISABLED)) {
        if (u->flags & U_NOPASS) {
            ok = 1;
        } else {
            /* Every stored hash is compared in full: the time taken does not
             * depend on which one matches, or how much of it. */
            for (int i = 0; i < u->npw; i++) {
                unsigned char diff = 0;
                for (int k = 0; k < SHA256_HEX_LEN; k++) diff |= (unsigned char)(u->pw[i][k] ^ h[k]);
                ok |= diff == 0;
            }
        }
        if (ok) acl_user_ref(u);
    }
    pthread_rwlock_unlock(&acl_lock);
    if (!ok) {
        int ctx = (client_flags_peek(c) & (CLIENT_MULTI | CLIENT_IN_EXEC)) ? CTX_MULTI : CTX_TOPLEVEL;
        acl_log_add(c, ACL_DENIED_AUTH, ctx, c->argv[0].p, c->argv[0].n, user, ulen);
        return -1;
    }
    client_become(c, u);
    client_flag_on(c, CLIENT_AUTHENTICATED);
    return 0;
}

void acl_client_reset(client *c) {
    client_become(c, &acl_default_user);
    if (acl_new_client_authenticated()) client_flag_on(c, CLIENT_AUTHENTICATED);
    else client_flag_off(c, CLIENT_AUTHENTICATED);
}

void acl_client_gone(client *c) { acl_user_unref(client_swap_user(c, NULL)); }

struct acl_user *acl_user_get(const char *name, size_t len) {
    pthread_rwlock_rdlock(&acl_lock);
    acl_user *u = acl_user_find(name, len);
    if (u) acl_user_ref(u);
    pthread_rwlock_unlock(&acl_lock);
    return u;
}

void acl_user_release(struct acl_user *u) { acl_user_unref(u); }

/* The default user follows requirepass: resetpass, then >pass or nopass. */
void acl_requirepass_apply(const char *pass) {
    pthread_rwlock_wrlock(&acl_lock);
    acl_user_op(&acl_default_user, "resetpass", 9);
    if (pass && pass[0]) {
        size_t n = strlen(pass);
        char *op = malloc(n + 2);
        if (!op) abort();
        op[0] = '>';
        memcpy(op + 1, pass, n + 1);
        acl_user_op(&acl_default_user, op, n + 1);
        free(op);
    } else {
        acl_user_op(&acl_default_user, "nopass", 6);
    }
    acl_user_derive(&acl_default_user);
    pthread_rwlock_unlock(&acl_lock);
}
