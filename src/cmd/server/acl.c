/* acl.c -- ACL users, permission checks, AUTH and the ACL command, with
 * Redis 7.0's semantics and replies.
 *
 * A user has flags (on/off, nopass, sanitize-payload), SHA-256 password
 * hashes and one or more selectors: the root selector, plus one for each
 * "(...)" rule. A call is allowed when any selector allows it. A selector
 * allows
 *   - commands through a bitmap indexed by the command's position in the
 *     full Redis 7.0 table (cmd_table(): implemented or not, so that rules
 *     written for Redis load unchanged), plus first-argument exceptions of
 *     otherwise denied commands (+select|0);
 *   - keys through glob patterns with read and/or write permission, checked
 *     against the keys of the call and how the key specs say each is used;
 *   - Pub/Sub channels through glob patterns (PSUBSCRIBE patterns must be
 *     listed literally).
 *
 * The rule strings are not kept. ACL LIST and ACL GETUSER describe the
 * bitmap the way Redis 7.0 does: start from +@all or -@all, greedily add the
 * category that explains most of what is left with the fewest exceptions,
 * then name the single commands that still differ (in table order, where
 * Redis follows its hash table order).
 *
 * Concurrency (docs/locking.md): users, their rules and the user set are
 * guarded by acl_lock, a leaf rwlock: read by AUTH and by the permission
 * check of users that are not allowed everything (those are recognised by
 * an atomic flag without the lock), written by the ACL command. Every client
 * authenticated as a user holds a reference on it, and the user set holds
 * one, so a deleted user stays valid until its clients (which are killed)
 * are gone. The default user is static and never freed; ACL LOAD copies the
 * new default rules into it. The ACL log has its own leaf lock. */
#include "cmd/server/acl.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cmd/server/admin_family.h"
#include "cmd/families.h"
#include "session/reply.h"
#include "util/sha256.h"
#include "util/strutil.h"
#include "base/config.h"
#include "base/log.h"

/* ---- Flags and limits ---------------------------------------------------- */

enum { SEL_ROOT = 1, SEL_ALLKEYS = 2, SEL_ALLCHANNELS = 4, SEL_ALLCOMMANDS = 8 };
enum { U_ENABLED = 1, U_DISABLED = 2, U_NOPASS = 4, U_SKIP_SANITIZE = 8, U_SANITIZE = 16 };
enum { KP_READ = 1, KP_WRITE = 2, KP_ALL = 3 };
enum { CTX_TOPLEVEL = 0, CTX_MULTI = 1 };

#define ACL_MAX_CMDS 1024
#define ACL_WORDS (ACL_MAX_CMDS / 64)
#define GENPASS_MAX_BITS 4096
#define LOG_GROUP_MS 60000

/* Errors of a single rule; messages as Redis's ACLSetUserStringError. */
enum { OPE_OK, OPE_SYNTAX, OPE_NOENT, OPE_KEYSTAR, OPE_CHANSTAR, OPE_NOPASS, OPE_BADHASH, OPE_CHILD };

static const char *op_error(int e) {
    switch (e) {
    case OPE_NOENT: return "Unknown command or category name in ACL";
    case OPE_SYNTAX: return "Syntax error";
    case OPE_KEYSTAR:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
               "effect. Try 'resetkeys' to start with an empty list of patterns";
    case OPE_CHANSTAR:
        return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any "
               "effect. Try 'resetchannels' to start with an empty list of channels";
    case OPE_NOPASS: return "The password you are trying to remove from the user does not exist";
    case OPE_BADHASH:
        return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
    case OPE_CHILD: return "Allowing first-arg of a subcommand is not supported";
    default: return "Wrong format";
    }
}

/* In Redis's order: ACL CAT lists them so, and the describer tries them so. */
static const char *const cat_names[] = {
    "keyspace", "read",      "write",  "set",     "sortedset", "list",       "hash",
    "string",   "bitmap",    "hyperloglog", "geo", "stream",   "pubsub",     "admin",
    "fast",     "slow",      "blocking", "dangerous", "connection", "transaction", "scripting",
};
#define NCATS ((int)(sizeof(cat_names) / sizeof(cat_names[0])))

static const struct {
    const char *name;
    uint32_t flag;
} user_flag_names[] = {
    {"on", U_ENABLED}, {"off", U_DISABLED}, {"nopass", U_NOPASS},
    {"skip-sanitize-payload", U_SKIP_SANITIZE}, {"sanitize-payload", U_SANITIZE},
};
#define NUSERFLAGS ((int)(sizeof(user_flag_names) / sizeof(user_flag_names[0])))

/* ---- Users and selectors -------------------------------------------------- */

typedef struct keypat {
    char *p;
    int flags;  /* KP_* */
} keypat;

typedef struct acl_sel {
    uint32_t flags;
    int future;                /* +@all was the last all-rule: may run any command */
    uint64_t bits[ACL_WORDS];
    char ***firstargs;         /* NULL, or per command NULL or a NULL-terminated list */
    keypat *pats;
    int npats;
    char **chans;
    int nchans;
} acl_sel;

typedef struct acl_user {
    char *name;                /* immutable while the user exists */
    size_t namelen;
    uint32_t flags;
    char (*pw)[SHA256_HEX_LEN + 1];
    int npw;
    acl_sel *sel;              /* sel[0] is the root selector */
    int nsel;
    int refs;                  /* atomic: the user set + authenticated clients */
    int unrestricted;          /* atomic: every command, key and channel allowed */
} acl_user;

static pthread_rwlock_t acl_lock = PTHREAD_RWLOCK_INITIALIZER;
static acl_user default_user;
static acl_user **users;       /* sorted by name, bytewise */
static int nusers, capusers;
/* Default-user state read on every connection and command without a lock. */
static int def_requires_auth, def_nopass;

/* ---- The command table as ACLs see it -------------------------------------- */

static const cmd_def *ctab;
static int ncmds;
static uint32_t cmd_cats[ACL_MAX_CMDS];
static int *kid_list[ACL_MAX_CMDS];   /* subcommands of a container */
static int kid_count[ACL_MAX_CMDS];
static int *by_name;                  /* command ids sorted by full name */
static int id_publish = -1, id_spublish = -1, id_subscribe = -1, id_ssubscribe = -1, id_psubscribe = -1;

static int cmd_id(const cmd_def *d) { return (int)(d - ctab); }

static int cat_index(const char *p, size_t n) {
    for (int i = 0; i < NCATS; i++)
        if (strlen(cat_names[i]) == n && strncasecmp(cat_names[i], p, n) == 0) return i;
    return -1;
}

static int name_cmp(const char *a, const char *b, size_t bn) {
    size_t an = strlen(a);
    int r = strncasecmp(a, b, an < bn ? an : bn);
    if (r) return r;
    return an < bn ? -1 : an > bn;
}

static int by_name_cmp(const void *x, const void *y) {
    const char *b = ctab[*(const int *)y].fullname;
    return name_cmp(ctab[*(const int *)x].fullname, b, strlen(b));
}

/* Id of the command named exactly (case-insensitive, "config|get"), or -1. */
static int lookup_cmd(const char *p, size_t n) {
    int lo = 0, hi = ncmds - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int r = name_cmp(ctab[by_name[mid]].fullname, p, n);
        if (r == 0) return by_name[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static void cmd_index_init(void) {
    size_t n;
    ctab = cmd_table(&n);
    if (n > ACL_MAX_CMDS) {
        fprintf(stderr, "goblin: %zu commands exceed the ACL bitmap (%d)\n", n, ACL_MAX_CMDS);
        abort();
    }
    ncmds = (int)n;
    by_name = malloc(sizeof(int) * n);
    if (!by_name) abort();
    for (int i = 0; i < ncmds; i++) {
        by_name[i] = i;
        const char *s = ctab[i].acl_str ? ctab[i].acl_str : "";
        while (*s) {
            while (*s == ' ') s++;
            size_t l = strcspn(s, " ");
            if (l > 1 && s[0] == '@') {
                int c = cat_index(s + 1, l - 1);
                if (c >= 0) cmd_cats[i] |= 1u << c;
            }
            s += l;
        }
        if (ctab[i].parent) {
            int p = cmd_id(ctab[i].parent);
            kid_list[p] = realloc(kid_list[p], sizeof(int) * (size_t)(kid_count[p] + 1));
            if (!kid_list[p]) abort();
            kid_list[p][kid_count[p]++] = i;
        }
    }
    qsort(by_name, n, sizeof(int), by_name_cmp);
    id_publish = lookup_cmd("publish", 7);
    id_spublish = lookup_cmd("spublish", 8);
    id_subscribe = lookup_cmd("subscribe", 9);
    id_ssubscribe = lookup_cmd("ssubscribe", 10);
    id_psubscribe = lookup_cmd("psubscribe", 10);
}

static int implemented(const cmd_def *d) { return cmd_lookup(d->fullname, strlen(d->fullname)) == d; }

/* ---- Bitmaps ------------------------------------------------------------------ */

static int bit_get(const uint64_t *b, int id) { return (int)((b[id >> 6] >> (id & 63)) & 1); }

static void bit_put(uint64_t *b, int id, int v) {
    if (v) b[id >> 6] |= 1ULL << (id & 63);
    else b[id >> 6] &= ~(1ULL << (id & 63));
}

/* A command and, for a container, all its subcommands. */
static void perm_bits(uint64_t *b, int id, int v) {
    bit_put(b, id, v);
    for (int k = 0; k < kid_count[id]; k++) bit_put(b, kid_list[id][k], v);
}

static void cat_bits(uint64_t *b, int cat, int v) {
    for (int id = 0; id < ncmds; id++)
        if (cmd_cats[id] & (1u << cat)) perm_bits(b, id, v);
}

static void cat_count(const uint64_t *b, int cat, unsigned long *on, unsigned long *off) {
    *on = *off = 0;
    for (int id = 0; id < ncmds; id++)
        if (cmd_cats[id] & (1u << cat)) {
            if (bit_get(b, id)) (*on)++;
            else (*off)++;
        }
}

/* ---- Selectors ----------------------------------------------------------------- */

static void strv_free(char **v) {
    if (!v) return;
    for (char **p = v; *p; p++) free(*p);
    free(v);
}

static void sel_reset_firstargs_of(acl_sel *s, int id) {
    if (s->firstargs && s->firstargs[id]) {
        strv_free(s->firstargs[id]);
        s->firstargs[id] = NULL;
    }
}

static void sel_reset_firstargs(acl_sel *s) {
    if (!s->firstargs) return;
    for (int id = 0; id < ncmds; id++) strv_free(s->firstargs[id]);
    free(s->firstargs);
    s->firstargs = NULL;
}

static void sel_add_firstarg(acl_sel *s, int id, const char *arg) {
    if (!s->firstargs) {
        s->firstargs = calloc((size_t)ncmds, sizeof(char **));
        if (!s->firstargs) abort();
    }
    int n = 0;
    if (s->firstargs[id])
        for (; s->firstargs[id][n]; n++)
            if (strcasecmp(s->firstargs[id][n], arg) == 0) return;
    char **v = realloc(s->firstargs[id], sizeof(char *) * (size_t)(n + 2));
    if (!v) abort();
    v[n] = strdup(arg);
    v[n + 1] = NULL;
    s->firstargs[id] = v;
}

static void sel_init(acl_sel *s, uint32_t flags) {
    memset(s, 0, sizeof(*s));
    s->flags = flags | (cfg.acl_pubsub_default == CONFIG_ACL_PUBSUB_ALLCHANNELS ? SEL_ALLCHANNELS : 0);
}

static void sel_clear_keys(acl_sel *s) {
    for (int i = 0; i < s->npats; i++) free(s->pats[i].p);
    free(s->pats);
    s->pats = NULL;
    s->npats = 0;
}

static void sel_clear_chans(acl_sel *s) {
    for (int i = 0; i < s->nchans; i++) free(s->chans[i]);
    free(s->chans);
    s->chans = NULL;
    s->nchans = 0;
}

static void sel_free(acl_sel *s) {
    sel_clear_keys(s);
    sel_clear_chans(s);
    sel_reset_firstargs(s);
}

static void sel_copy(acl_sel *dst, const acl_sel *src) {
    *dst = *src;
    dst->pats = src->npats ? malloc(sizeof(keypat) * (size_t)src->npats) : NULL;
    for (int i = 0; i < src->npats; i++) {
        dst->pats[i].p = strdup(src->pats[i].p);
        dst->pats[i].flags = src->pats[i].flags;
    }
    dst->chans = src->nchans ? malloc(sizeof(char *) * (size_t)src->nchans) : NULL;
    for (int i = 0; i < src->nchans; i++) dst->chans[i] = strdup(src->chans[i]);
    dst->firstargs = NULL;
    if (src->firstargs)
        for (int id = 0; id < ncmds; id++)
            for (int j = 0; src->firstargs[id] && src->firstargs[id][j]; j++)
                sel_add_firstarg(dst, id, src->firstargs[id][j]);
}

static void sel_set_bit(acl_sel *s, int id, int v) {
    bit_put(s->bits, id, v);
    if (!v) s->flags &= ~(uint32_t)SEL_ALLCOMMANDS;
}

static void sel_change_perm(acl_sel *s, int id, int v) {
    sel_set_bit(s, id, v);
    sel_reset_firstargs_of(s, id);
    for (int k = 0; k < kid_count[id]; k++) sel_set_bit(s, kid_list[id][k], v);
}

static void sel_change_cat(acl_sel *s, int cat, int v) {
    for (int id = 0; id < ncmds; id++)
        if (cmd_cats[id] & (1u << cat)) sel_change_perm(s, id, v);
}

static int has_space(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == 0) return 1;
    return 0;
}

static int op_is(const char *op, size_t n, const char *lit) {
    return strlen(lit) == n && strncasecmp(op, lit, n) == 0;
}

/* One selector rule (keys, channels, commands). */
static int sel_op(acl_sel *s, const char *op, size_t n) {
    if (op_is(op, n, "allkeys") || op_is(op, n, "~*")) {
        s->flags |= SEL_ALLKEYS;
        sel_clear_keys(s);
    } else if (op_is(op, n, "resetkeys")) {
        s->flags &= ~(uint32_t)SEL_ALLKEYS;
        sel_clear_keys(s);
    } else if (op_is(op, n, "allchannels") || op_is(op, n, "&*")) {
        s->flags |= SEL_ALLCHANNELS;
        sel_clear_chans(s);
    } else if (op_is(op, n, "resetchannels")) {
        s->flags &= ~(uint32_t)SEL_ALLCHANNELS;
        sel_clear_chans(s);
    } else if (op_is(op, n, "allcommands") || op_is(op, n, "+@all")) {
        memset(s->bits, 0xff, sizeof(s->bits));
        s->flags |= SEL_ALLCOMMANDS;
        s->future = 1;
        sel_reset_firstargs(s);
    } else if (op_is(op, n, "nocommands") || op_is(op, n, "-@all")) {
        memset(s->bits, 0, sizeof(s->bits));
        s->flags &= ~(uint32_t)SEL_ALLCOMMANDS;
        s->future = 0;
        sel_reset_firstargs(s);
    } else if (n && (op[0] == '~' || op[0] == '%')) {
        if (s->flags & SEL_ALLKEYS) return OPE_KEYSTAR;
        int flags = 0;
        size_t off = 1;
        if (op[0] == '%') {
            for (; off < n; off++) {
                char ch = (char)toupper((unsigned char)op[off]);
                if (ch == 'R' && !(flags & KP_READ)) {
                    flags |= KP_READ;
                } else if (ch == 'W' && !(flags & KP_WRITE)) {
                    flags |= KP_WRITE;
                } else if (op[off] == '~') {
                    off++;
                    break;
                } else {
                    return OPE_SYNTAX;
                }
            }
            if (!flags) return OPE_SYNTAX;
        } else {
            flags = KP_ALL;
        }
        if (has_space(op + off, n - off)) return OPE_SYNTAX;
        for (int i = 0; i < s->npats; i++)
            if (strlen(s->pats[i].p) == n - off && memcmp(s->pats[i].p, op + off, n - off) == 0) {
                s->pats[i].flags |= flags;
                return OPE_OK;
            }
        keypat *np = realloc(s->pats, sizeof(keypat) * (size_t)(s->npats + 1));
        if (!np) abort();
        s->pats = np;
        s->pats[s->npats].p = strndup(op + off, n - off);
        s->pats[s->npats].flags = flags;
        s->npats++;
    } else if (n && op[0] == '&') {
        if (s->flags & SEL_ALLCHANNELS) return OPE_CHANSTAR;
        if (has_space(op + 1, n - 1)) return OPE_SYNTAX;
        for (int i = 0; i < s->nchans; i++)
            if (strlen(s->chans[i]) == n - 1 && memcmp(s->chans[i], op + 1, n - 1) == 0) return OPE_OK;
        char **nc = realloc(s->chans, sizeof(char *) * (size_t)(s->nchans + 1));
        if (!nc) abort();
        s->chans = nc;
        s->chans[s->nchans++] = strndup(op + 1, n - 1);
    } else if (n && op[0] == '+' && (n < 2 || op[1] != '@')) {
        const char *bar = memrchr(op + 1, '|', n - 1);
        if (!bar) {
            int id = lookup_cmd(op + 1, n - 1);
            if (id < 0) return OPE_NOENT;
            sel_change_perm(s, id, 1);
            return OPE_OK;
        }
        int id = lookup_cmd(op + 1, (size_t)(bar - op - 1));
        if (id < 0) return OPE_NOENT;
        if (ctab[id].parent) return OPE_CHILD;
        size_t sublen = n - (size_t)(bar - op) - 1;
        if (sublen == 0) return OPE_SYNTAX;
        if (kid_count[id]) {
            int sub = lookup_cmd(op + 1, n - 1);
            if (sub < 0) return OPE_NOENT;
            sel_change_perm(s, sub, 1);
        } else {
            char *arg = strndup(bar + 1, sublen);
            log_warn("Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of "
                     "ACL and may get disabled in the future (offender: %.*s)",
                     (int)n, op);
            sel_add_firstarg(s, id, arg);
            free(arg);
        }
    } else if (n && op[0] == '-' && (n < 2 || op[1] != '@')) {
        int id = lookup_cmd(op + 1, n - 1);
        if (id < 0) return OPE_NOENT;
        sel_change_perm(s, id, 0);
    } else if (n >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@') {
        int cat = cat_index(op + 2, n - 2);
        if (cat < 0) return OPE_NOENT;
        sel_change_cat(s, cat, op[0] == '+');
    } else {
        return OPE_SYNTAX;
    }
    return OPE_OK;
}

/* ---- Splitting "(...)" rules and ACL file lines --------------------------------- */

typedef struct argv_t {
    char **v;
    size_t *l;
    int n, cap;
} argv_t;

static void argv_push(argv_t *a, const char *p, size_t n) {
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->v = realloc(a->v, sizeof(char *) * (size_t)a->cap);
        a->l = realloc(a->l, sizeof(size_t) * (size_t)a->cap);
        if (!a->v || !a->l) abort();
    }
    a->v[a->n] = malloc(n + 1);
    if (!a->v[a->n]) abort();
    memcpy(a->v[a->n], p, n);
    a->v[a->n][n] = '\0';
    a->l[a->n++] = n;
}

static void argv_free(argv_t *a) {
    for (int i = 0; i < a->n; i++) free(a->v[i]);
    free(a->v);
    free(a->l);
    memset(a, 0, sizeof(*a));
}

/* Words of s with quotes and escapes, as redis-cli and Redis's
 * sdssplitargs read them. -1 on unbalanced quotes. */
static int split_args(const char *s, size_t n, argv_t *out) {
    size_t i = 0;
    char *buf = malloc(n + 1);
    if (!buf) abort();
    for (;;) {
        while (i < n && isspace((unsigned char)s[i])) i++;
        if (i >= n) break;
        size_t o = 0;
        int inq = 0, insq = 0;
        for (;;) {
            if (inq) {
                if (i >= n) goto bad;
                if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && isxdigit((unsigned char)s[i + 2]) &&
                    isxdigit((unsigned char)s[i + 3])) {
                    char hex[3] = {s[i + 2], s[i + 3], 0};
                    buf[o++] = (char)strtol(hex, NULL, 16);
                    i += 3;
                } else if (s[i] == '\\' && i + 1 < n) {
                    char ch = s[++i];
                    buf[o++] = ch == 'n' ? '\n' : ch == 'r' ? '\r' : ch == 't' ? '\t' : ch == 'b' ? '\b'
                               : ch == 'a' ? '\a' : ch;
                } else if (s[i] == '"') {
                    if (i + 1 < n && !isspace((unsigned char)s[i + 1])) goto bad;
                    i++;
                    break;
                } else {
                    buf[o++] = s[i];
                }
            } else if (insq) {
                if (i >= n) goto bad;
                if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\'') {
                    buf[o++] = '\'';
                    i++;
                } else if (s[i] == '\'') {
                    if (i + 1 < n && !isspace((unsigned char)s[i + 1])) goto bad;
                    i++;
                    break;
                } else {
                    buf[o++] = s[i];
                }
            } else {
                if (i >= n || isspace((unsigned char)s[i])) break;
                if (s[i] == '"') inq = 1;
                else if (s[i] == '\'') insq = 1;
                else buf[o++] = s[i];
            }
            i++;
        }
        argv_push(out, buf, o);
    }
    free(buf);
    return 0;
bad:
    free(buf);
    return -1;
}

/* Rules spread over several words ("(+get", "~k)") joined into one "(...)"
 * rule, as Redis's ACLMergeSelectorArguments. -1 (and *bad the index of the
 * opening word) when a parenthesis is not closed. */
static int merge_selectors(char **v, const size_t *l, int n, argv_t *out, int *bad) {
    int open = -1;
    char *acc = NULL;
    size_t acclen = 0;
    for (int i = 0; i < n; i++) {
        if (open < 0 && l[i] && v[i][0] == '(' && v[i][l[i] - 1] != ')') {
            open = i;
            acc = malloc(l[i] + 1);
            memcpy(acc, v[i], l[i]);
            acclen = l[i];
            continue;
        }
        if (open >= 0) {
            acc = realloc(acc, acclen + l[i] + 2);
            acc[acclen++] = ' ';
            memcpy(acc + acclen, v[i], l[i]);
            acclen += l[i];
            if (l[i] && v[i][l[i] - 1] == ')') {
                argv_push(out, acc, acclen);
                free(acc);
                acc = NULL;
                open = -1;
            }
            continue;
        }
        argv_push(out, v[i], l[i]);
    }
    if (open >= 0) {
        free(acc);
        argv_free(out);
        *bad = open;
        return -1;
    }
    return 0;
}

/* ---- Users ---------------------------------------------------------------------- */

static void user_init(acl_user *u, const char *name, size_t len) {
    memset(u, 0, sizeof(*u));
    u->name = malloc(len + 1);
    if (!u->name) abort();
    memcpy(u->name, name, len);
    u->name[len] = '\0';
    u->namelen = len;
    u->flags = U_DISABLED;
    u->sel = malloc(sizeof(acl_sel));
    if (!u->sel) abort();
    u->nsel = 1;
    sel_init(&u->sel[0], SEL_ROOT);
}

static void user_free_rules(acl_user *u) {
    for (int i = 0; i < u->nsel; i++) sel_free(&u->sel[i]);
    free(u->sel);
    free(u->pw);
    u->sel = NULL;
    u->pw = NULL;
    u->nsel = u->npw = 0;
}

/* dst gets src's flags, passwords and selectors (its name stays). */
static void user_copy_rules(acl_user *dst, const acl_user *src) {
    user_free_rules(dst);
    dst->flags = src->flags;
    dst->npw = src->npw;
    dst->pw = src->npw ? malloc(sizeof(*dst->pw) * (size_t)src->npw) : NULL;
    if (src->npw) memcpy(dst->pw, src->pw, sizeof(*dst->pw) * (size_t)src->npw);
    dst->nsel = src->nsel;
    dst->sel = malloc(sizeof(acl_sel) * (size_t)src->nsel);
    if (!dst->sel) abort();
    for (int i = 0; i < src->nsel; i++) sel_copy(&dst->sel[i], &src->sel[i]);
}

/* A user not in the set (validation, staging): rules only. */
static void user_temp_free(acl_user *u) {
    user_free_rules(u);
    free(u->name);
}

static int is_hash(const char *p, size_t n) {
    if (n != SHA256_HEX_LEN) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

static int pw_find(const acl_user *u, const char *h) {
    for (int i = 0; i < u->npw; i++)
        if (memcmp(u->pw[i], h, SHA256_HEX_LEN) == 0) return i;
    return -1;
}

static int user_op(acl_user *u, const char *op, size_t n);

static void user_set_flag(acl_user *u, uint32_t on, uint32_t off) {
    u->flags |= on;
    u->flags &= ~off;
}

static int user_op(acl_user *u, const char *op, size_t n) {
    if (n == 0) return OPE_OK;
    if (op_is(op, n, "on")) {
        user_set_flag(u, U_ENABLED, U_DISABLED);
    } else if (op_is(op, n, "off")) {
        user_set_flag(u, U_DISABLED, U_ENABLED);
    } else if (op_is(op, n, "skip-sanitize-payload")) {
        user_set_flag(u, U_SKIP_SANITIZE, U_SANITIZE);
    } else if (op_is(op, n, "sanitize-payload")) {
        user_set_flag(u, U_SANITIZE, U_SKIP_SANITIZE);
    } else if (op_is(op, n, "nopass")) {
        u->flags |= U_NOPASS;
        u->npw = 0;
    } else if (op_is(op, n, "resetpass")) {
        u->flags &= ~(uint32_t)U_NOPASS;
        u->npw = 0;
    } else if (op[0] == '>' || op[0] == '#') {
        char h[SHA256_HEX_LEN + 1];
        if (op[0] == '>') {
            sha256_hex(op + 1, n - 1, h);
        } else {
            if (!is_hash(op + 1, n - 1)) return OPE_BADHASH;
            memcpy(h, op + 1, SHA256_HEX_LEN);
            h[SHA256_HEX_LEN] = '\0';
        }
        if (pw_find(u, h) < 0) {
            void *np = realloc(u->pw, sizeof(*u->pw) * (size_t)(u->npw + 1));
            if (!np) abort();
            u->pw = np;
            memcpy(u->pw[u->npw++], h, SHA256_HEX_LEN + 1);
        }
        u->flags &= ~(uint32_t)U_NOPASS;
    } else if (op[0] == '<' || op[0] == '!') {
        char h[SHA256_HEX_LEN + 1];
        if (op[0] == '<') {
            sha256_hex(op + 1, n - 1, h);
        } else {
            if (!is_hash(op + 1, n - 1)) return OPE_BADHASH;
            memcpy(h, op + 1, SHA256_HEX_LEN);
            h[SHA256_HEX_LEN] = '\0';
        }
        int i = pw_find(u, h);
        if (i < 0) return OPE_NOPASS;
        memmove(u->pw[i], u->pw[i + 1], sizeof(*u->pw) * (size_t)(u->npw - i - 1));
        u->npw--;
    } else if (op[0] == '(' && op[n - 1] == ')') {
        acl_sel s;
        sel_init(&s, 0);
        argv_t a = {0};
        int err = OPE_OK;
        if (n < 2 || split_args(op + 1, n - 2, &a) != 0) err = OPE_SYNTAX;
        for (int i = 0; i < a.n && !err; i++) err = sel_op(&s, a.v[i], a.l[i]);
        argv_free(&a);
        if (err) {
            sel_free(&s);
            return err;
        }
        acl_sel *ns = realloc(u->sel, sizeof(acl_sel) * (size_t)(u->nsel + 1));
        if (!ns) abort();
        u->sel = ns;
        u->sel[u->nsel++] = s;
    } else if (op_is(op, n, "clearselectors")) {
        for (int i = 1; i < u->nsel; i++) sel_free(&u->sel[i]);
        u->nsel = 1;
    } else if (op_is(op, n, "reset")) {
        user_op(u, "resetpass", 9);
        user_op(u, "resetkeys", 9);
        user_op(u, "resetchannels", 13);
        if (cfg.acl_pubsub_default == CONFIG_ACL_PUBSUB_ALLCHANNELS) user_op(u, "allchannels", 11);
        user_op(u, "off", 3);
        user_op(u, "sanitize-payload", 16);
        user_op(u, "clearselectors", 14);
        user_op(u, "-@all", 5);
    } else {
        return sel_op(&u->sel[0], op, n);
    }
    return OPE_OK;
}

/* Refresh what is read without the lock. Under the write lock. */
static void user_derive(acl_user *u) {
    const uint32_t all = SEL_ALLCOMMANDS | SEL_ALLKEYS | SEL_ALLCHANNELS;
    __atomic_store_n(&u->unrestricted, (u->sel[0].flags & all) == all, __ATOMIC_RELEASE);
    if (u == &default_user) {
        int nopass = (u->flags & U_NOPASS) != 0;
        __atomic_store_n(&def_nopass, nopass, __ATOMIC_RELEASE);
        __atomic_store_n(&def_requires_auth, !nopass || (u->flags & U_DISABLED), __ATOMIC_RELEASE);
    }
}

static void user_ref(acl_user *u) {
    if (u != &default_user) __atomic_fetch_add(&u->refs, 1, __ATOMIC_RELAXED);
}

static void user_unref(acl_user *u) {
    if (!u || u == &default_user) return;
    if (__atomic_sub_fetch(&u->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        user_free_rules(u);
        free(u->name);
        free(u);
    }
}

static int user_name_cmp(const acl_user *u, const char *name, size_t len) {
    int r = memcmp(u->name, name, u->namelen < len ? u->namelen : len);
    if (r) return r;
    return u->namelen < len ? -1 : u->namelen > len;
}

/* Position of name in the set, or -(insertion point)-1. Under the lock. */
static int user_pos(const char *name, size_t len) {
    int lo = 0, hi = nusers - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int r = user_name_cmp(users[mid], name, len);
        if (r == 0) return mid;
        if (r < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -lo - 1;
}

static acl_user *user_find(const char *name, size_t len) {
    int i = user_pos(name, len);
    return i >= 0 ? users[i] : NULL;
}

static void set_insert(acl_user *u) {
    int i = user_pos(u->name, u->namelen);
    if (i >= 0) return;
    i = -i - 1;
    if (nusers == capusers) {
        capusers = capusers ? capusers * 2 : 8;
        users = realloc(users, sizeof(acl_user *) * (size_t)capusers);
        if (!users) abort();
    }
    memmove(users + i + 1, users + i, sizeof(acl_user *) * (size_t)(nusers - i));
    users[i] = u;
    nusers++;
}

static void set_remove(int i) {
    memmove(users + i, users + i + 1, sizeof(acl_user *) * (size_t)(nusers - i - 1));
    nusers--;
}

static acl_user *user_new(const char *name, size_t len) {
    acl_user *u = malloc(sizeof(*u));
    if (!u) abort();
    user_init(u, name, len);
    u->refs = 1; /* the set's */
    user_derive(u);
    return u;
}

static void default_user_reset(acl_user *u) {
    user_op(u, "+@all", 5);
    user_op(u, "~*", 2);
    user_op(u, "&*", 2);
    user_op(u, "on", 2);
    user_op(u, "nopass", 6);
}

/* ---- Description (ACL LIST, GETUSER, SAVE) -------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *p, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_cat(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_trim_space(sbuf *b) {
    if (b->len && b->p[b->len - 1] == ' ') b->p[--b->len] = '\0';
}

static void describe_single(const acl_sel *s, uint64_t *fake, int id, sbuf *b) {
    int ubit = bit_get(s->bits, id), fbit = bit_get(fake, id);
    if (ubit != fbit) {
        sb_cat(b, ubit ? "+" : "-");
        sb_cat(b, ctab[id].fullname);
        sb_cat(b, " ");
        perm_bits(fake, id, ubit);
    }
    for (int k = 0; k < kid_count[id]; k++) describe_single(s, fake, kid_list[id][k], b);
    if (!ubit && s->firstargs && s->firstargs[id])
        for (int j = 0; s->firstargs[id][j]; j++) {
            sb_cat(b, "+");
            sb_cat(b, ctab[id].fullname);
            sb_cat(b, "|");
            sb_cat(b, s->firstargs[id][j]);
            sb_cat(b, " ");
        }
}

/* The command rules of a selector, as Redis 7.0's
 * ACLDescribeSelectorCommandRules builds them. */
static void describe_rules(const acl_sel *s, sbuf *b) {
    uint64_t fake[ACL_WORDS], temp[ACL_WORDS];
    int additive = !s->future;
    memset(fake, additive ? 0 : 0xff, sizeof(fake));
    memcpy(temp, s->bits, sizeof(temp));
    sb_cat(b, additive ? "-@all " : "+@all ");
    char applied[NCATS] = {0};
    for (;;) {
        int best = -1;
        unsigned long mindiff = ULONG_MAX, maxsame = 0;
        for (int j = 0; j < NCATS; j++) {
            if (applied[j]) continue;
            unsigned long on, off;
            cat_count(temp, j, &on, &off);
            unsigned long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) break;
        cat_bits(fake, best, additive);
        cat_bits(temp, best, !additive);
        sb_cat(b, additive ? "+@" : "-@");
        sb_cat(b, cat_names[best]);
        sb_cat(b, " ");
        applied[best] = 1;
    }
    for (int id = 0; id < ncmds; id++)
        if (!ctab[id].parent) describe_single(s, fake, id, b);
    sb_trim_space(b);
}

static void describe_pattern(const keypat *k, sbuf *b) {
    sb_cat(b, k->flags == KP_ALL ? "~" : k->flags == KP_READ ? "%R~" : "%W~");
    sb_cat(b, k->p);
}

static void describe_sel(const acl_sel *s, sbuf *b) {
    if (s->flags & SEL_ALLKEYS) {
        sb_cat(b, "~* ");
    } else {
        for (int i = 0; i < s->npats; i++) {
            describe_pattern(&s->pats[i], b);
            sb_cat(b, " ");
        }
    }
    if (s->flags & SEL_ALLCHANNELS) {
        sb_cat(b, "&* ");
    } else {
        sb_cat(b, "resetchannels ");
        for (int i = 0; i < s->nchans; i++) {
            sb_cat(b, "&");
            sb_cat(b, s->chans[i]);
            sb_cat(b, " ");
        }
    }
    describe_rules(s, b);
}

/* "user <name> <rules>" as ACL LIST and the ACL file show it. */
static void describe_user(const acl_user *u, sbuf *b) {
    sb_cat(b, "user ");
    sb_add(b, u->name, u->namelen);
    sb_cat(b, " ");
    for (int i = 0; i < NUSERFLAGS; i++)
        if (u->flags & user_flag_names[i].flag) {
            sb_cat(b, user_flag_names[i].name);
            sb_cat(b, " ");
        }
    for (int i = 0; i < u->npw; i++) {
        sb_cat(b, "#");
        sb_cat(b, u->pw[i]);
        sb_cat(b, " ");
    }
    for (int i = 0; i < u->nsel; i++) {
        if (i) sb_cat(b, " (");
        describe_sel(&u->sel[i], b);
        if (i) sb_cat(b, ")");
    }
}

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
static int chan_matches(char *const *pats, size_t npats, const char *ch, size_t n, int literal) {
    for (size_t i = 0; i < npats; i++) {
        size_t pl = strlen(pats[i]);
        if (literal ? (pl == n && memcmp(pats[i], ch, n) == 0) : glob_match(pats[i], pl, ch, n, 0)) return 1;
    }
    return 0;
}

static int chan_allowed(const acl_sel *s, const char *ch, size_t n, int literal) {
    return chan_matches(s->chans, (size_t)s->nchans, ch, n, literal);
}

static int sel_check(const acl_sel *s, const cmd_def *cmd, garg *argv, int argc, int *pos, keycache *kc) {
    int id = cmd_id(cmd);
    if (!(s->flags & SEL_ALLCOMMANDS) && !(cmd->flags & CMDF_NO_AUTH) && !bit_get(s->bits, id)) {
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
        if (id == id_publish || id == id_spublish) last = 1;
        else if (id == id_subscribe || id == id_ssubscribe) last = argc - 1;
        else if (id == id_psubscribe) last = argc - 1, literal = 1;
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
static int user_check(const acl_user *u, const cmd_def *cmd, garg *argv, int argc, int *pos) {
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

static int64_t wall_ms(void) {
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
    e->ctime = wall_ms();
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

/* ---- Public entry points ---------------------------------------------------------- */

int acl_auth_required(const client *c) {
    return !(client_flags_peek(c) & CLIENT_AUTHENTICATED) && __atomic_load_n(&def_requires_auth, __ATOMIC_ACQUIRE);
}

int acl_default_nopass(void) { return __atomic_load_n(&def_nopass, __ATOMIC_ACQUIRE); }

int acl_new_client_authenticated(void) { return !__atomic_load_n(&def_requires_auth, __ATOMIC_ACQUIRE); }

struct acl_user *acl_client_user(const client *c) {
    acl_user *u = __atomic_load_n(&c->acl_user, __ATOMIC_ACQUIRE);
    return u ? u : &default_user;
}

const char *acl_user_name(const struct acl_user *u) { return u->name; }

const char *acl_check_call(client *c, const cmd_def *cmd, int in_exec) {
    acl_user *u = acl_client_user(c);
    if (__atomic_load_n(&u->unrestricted, __ATOMIC_ACQUIRE)) return NULL;
    int pos = 0;
    pthread_rwlock_rdlock(&acl_lock);
    int r = user_check(u, cmd, c->argv, c->argc, &pos);
    pthread_rwlock_unlock(&acl_lock);
    if (r == ACL_OK) return NULL;
    int ctx = in_exec || (client_flags_peek(c) & CLIENT_MULTI) ? CTX_MULTI : CTX_TOPLEVEL;
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

/* Make u (already referenced by the caller) c's user. */
static void client_become(client *c, acl_user *u) {
    acl_user *old = client_swap_user(c, u == &default_user ? NULL : u);
    user_unref(old);
}

int acl_authenticate(client *c, const char *user, size_t ulen, const char *pass, size_t plen) {
    char h[SHA256_HEX_LEN + 1];
    sha256_hex(pass, plen, h);
    int ok = 0;
    pthread_rwlock_rdlock(&acl_lock);
    acl_user *u = user_find(user, ulen);
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
        if (ok) user_ref(u);
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
    client_become(c, &default_user);
    if (acl_new_client_authenticated()) client_flag_on(c, CLIENT_AUTHENTICATED);
    else client_flag_off(c, CLIENT_AUTHENTICATED);
}

void acl_client_gone(client *c) { user_unref(client_swap_user(c, NULL)); }

struct acl_user *acl_user_get(const char *name, size_t len) {
    pthread_rwlock_rdlock(&acl_lock);
    acl_user *u = user_find(name, len);
    if (u) user_ref(u);
    pthread_rwlock_unlock(&acl_lock);
    return u;
}

void acl_user_release(struct acl_user *u) { user_unref(u); }

/* The default user follows requirepass: resetpass, then >pass or nopass. */
static void requirepass_apply(const char *pass) {
    pthread_rwlock_wrlock(&acl_lock);
    user_op(&default_user, "resetpass", 9);
    if (pass && pass[0]) {
        size_t n = strlen(pass);
        char *op = malloc(n + 2);
        if (!op) abort();
        op[0] = '>';
        memcpy(op + 1, pass, n + 1);
        user_op(&default_user, op, n + 1);
        free(op);
    } else {
        user_op(&default_user, "nopass", 6);
    }
    user_derive(&default_user);
    pthread_rwlock_unlock(&acl_lock);
}

/* ---- Loading users: config "user" lines and the ACL file ---------------------------- */

/* Apply rules (already merged) to u; the first error and its index. */
static int user_apply(acl_user *u, char **v, const size_t *l, int n, int *bad) {
    for (int i = 0; i < n; i++) {
        int e = user_op(u, v[i], l[i]);
        if (e) {
            *bad = i;
            return e;
        }
    }
    return OPE_OK;
}

/* Parse an ACL file into a new user set. NULL and *out filled, or the
 * error text (caller frees), Redis's wording, with nothing changed. */
static char *aclfile_parse(const char *path, acl_user ***out, int *nout, acl_user **newdef) {
    FILE *f = fopen(path, "r");
    sbuf err = {0};
    if (!f) {
        sb_cat(&err, "Error loading ACLs, opening file '");
        sb_cat(&err, path);
        sb_cat(&err, "': ");
        sb_cat(&err, strerror(errno));
        return err.p;
    }
    sbuf all = {0};
    char chunk[4096];
    size_t r;
    while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0) sb_add(&all, chunk, r);
    fclose(f);
    acl_user **set = NULL;
    int nset = 0;
    acl_user *def = NULL;
    char line_err[1024];
    size_t pos = 0;
    for (int linenum = 1; all.p && pos <= all.len; linenum++) {
        size_t end = pos;
        while (end < all.len && all.p[end] != '\n') end++;
        const char *s = all.p + pos;
        size_t n = end - pos;
        pos = end + 1;
        while (n && strchr(" \t\r\n", s[0])) s++, n--;
        while (n && strchr(" \t\r\n", s[n - 1])) n--;
        if (n == 0) {
            if (end >= all.len) break;
            continue;
        }
        /* Words are separated by single spaces, as Redis splits them. */
        argv_t w = {0};
        for (size_t i = 0, st = 0; i <= n; i++)
            if (i == n || s[i] == ' ') {
                argv_push(&w, s + st, i - st);
                st = i + 1;
            }
        if (w.n < 2 || strcmp(w.v[0], "user") != 0) {
            snprintf(line_err, sizeof(line_err), "%s:%d should start with user keyword followed by the username. ",
                     cfg.aclfile, linenum);
            sb_cat(&err, line_err);
            argv_free(&w);
            continue;
        }
        if (has_space(w.v[1], w.l[1])) {
            snprintf(line_err, sizeof(line_err), "'%s:%d: username '%s' contains invalid characters. ", cfg.aclfile,
                     linenum, w.v[1]);
            sb_cat(&err, line_err);
            argv_free(&w);
            continue;
        }
        int dup = 0;
        for (int i = 0; i < nset; i++)
            if (set[i]->namelen == w.l[1] && memcmp(set[i]->name, w.v[1], w.l[1]) == 0) dup = 1;
        if (dup) {
            snprintf(line_err, sizeof(line_err), "WARNING: Duplicate user '%s' found on line %d. ", w.v[1], linenum);
            sb_cat(&err, line_err);
            argv_free(&w);
            continue;
        }
        acl_user *u = user_new(w.v[1], w.l[1]);
        set = realloc(set, sizeof(acl_user *) * (size_t)(nset + 1));
        set[nset++] = u;
        argv_t m = {0};
        int badidx;
        if (merge_selectors(w.v + 2, w.l + 2, w.n - 2, &m, &badidx) != 0) {
            snprintf(line_err, sizeof(line_err), "%s:%d: Unmatched parenthesis in selector definition.",
                     cfg.aclfile, linenum);
            sb_cat(&err, line_err);
        }
        for (int i = 0; i < m.n; i++) {
            const char *op = m.v[i];
            size_t ol = m.l[i];
            while (ol && strchr("\t\r\n", op[0])) op++, ol--;
            while (ol && strchr("\t\r\n", op[ol - 1])) ol--;
            int e = user_op(u, op, ol);
            if (e) {
                snprintf(line_err, sizeof(line_err), "%s:%d: %s. ", cfg.aclfile, linenum, op_error(e));
                sb_cat(&err, line_err);
            }
        }
        argv_free(&m);
        argv_free(&w);
    }
    free(all.p);
    if (err.len) {
        for (int i = 0; i < nset; i++) user_unref(set[i]);
        free(set);
        sb_cat(&err, "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
        return err.p;
    }
    for (int i = 0; i < nset; i++)
        if (set[i]->namelen == 7 && memcmp(set[i]->name, "default", 7) == 0) def = set[i];
    *out = set;
    *nout = nset;
    *newdef = def;
    return NULL;
}

/* Replace the user set by a parsed one. Clients of the old users (but the
 * default user, whose rules are replaced in place) are disconnected. Takes
 * the write lock. */
static void users_replace(acl_user **set, int nset, acl_user *newdef, client *self) {
    pthread_rwlock_wrlock(&acl_lock);
    acl_user **old = users;
    int nold = nusers;
    users = NULL;
    nusers = capusers = 0;
    if (newdef) {
        user_copy_rules(&default_user, newdef);
    } else {
        acl_user tmp;
        user_init(&tmp, "default", 7);
        default_user_reset(&tmp);
        user_copy_rules(&default_user, &tmp);
        user_temp_free(&tmp);
    }
    user_derive(&default_user);
    set_insert(&default_user);
    for (int i = 0; i < nset; i++) {
        if (set[i] == newdef) continue;
        user_derive(set[i]);
        set_insert(set[i]);
    }
    pthread_rwlock_unlock(&acl_lock);
    if (newdef) user_unref(newdef);
    for (int i = 0; i < nold; i++) {
        if (old[i] == &default_user) continue;
        client_kill_user(old[i], self, 0);
        user_unref(old[i]);
    }
    free(old);
    free(set);
}

static void load_at_startup(void) {
    if (cfg.aclfile && cfg.aclfile[0] && cfg.nacl_users) {
        log_warn("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is "
                 "invalid. This setup is very likely to lead to configuration errors and security holes, please "
                 "define either an ACL file or declare users directly in your redis.conf, but not both.");
        fprintf(stderr, "goblin-core: both 'user' directives and an 'aclfile' are configured; use one of them\n");
        exit(1);
    }
    for (int k = 0; k < cfg.nacl_users; k++) {
        const config_user *cu = &cfg.acl_users[k];
        size_t *lens = malloc(sizeof(size_t) * (size_t)(cu->argc + 1));
        for (int i = 0; i < cu->argc; i++) lens[i] = strlen(cu->argv[i]);
        const char *why = NULL;
        const char *what = cu->argc ? cu->argv[0] : "";
        if (cu->argc < 1) {
            why = "wrong number of arguments";
        } else if (has_space(cu->argv[0], lens[0])) {
            why = "Spaces not allowed in ACL usernames";
        } else {
            argv_t m = {0};
            int bad;
            if (merge_selectors(cu->argv + 1, lens + 1, cu->argc - 1, &m, &bad) != 0) {
                why = "Unmatched parenthesis in selector definition";
                what = cu->argv[1 + bad];
            } else {
                acl_user *u = user_find(cu->argv[0], lens[0]);
                if (!u) {
                    u = user_new(cu->argv[0], lens[0]);
                    set_insert(u);
                } else if (u == &default_user) {
                    user_op(u, "reset", 5);
                } else {
                    why = "Duplicate user found. A user can only be defined once in config files";
                }
                int e = why ? OPE_OK : user_apply(u, m.v, m.l, m.n, &bad);
                if (e) {
                    why = op_error(e);
                    what = m.v[bad];
                }
                user_derive(u);
                if (!why && (u->flags & U_DISABLED))
                    log_notice("The user '%s' is disabled (there is no 'on' modifier in the user description). "
                               "Make sure this is not a configuration error.",
                               u->name);
            }
            argv_free(&m);
        }
        free(lens);
        if (why) {
            fprintf(stderr, "goblin-core: error in user declaration '%s': %s\n", what, why);
            exit(1);
        }
    }
    if (cfg.aclfile && cfg.aclfile[0]) {
        acl_user **set;
        int nset;
        acl_user *def;
        char *err = aclfile_parse(cfg.aclfile, &set, &nset, &def);
        if (err) {
            log_warn("Aborting Redis startup because of ACL errors: %s", err);
            fprintf(stderr, "goblin-core: aborting start-up because of ACL errors: %s\n", err);
            free(err);
            exit(1);
        }
        users_replace(set, nset, def, NULL);
    }
}

void acl_family_init(void) {
    cmd_index_init();
    user_init(&default_user, "default", 7);
    default_user_reset(&default_user);
    user_derive(&default_user);
    set_insert(&default_user);
    /* Applies the value loaded from the config file and flags at once. */
    static const config_hook requirepass_hook = {NULL, requirepass_apply};
    config_register_hook("requirepass", &requirepass_hook);
    load_at_startup();
}

void acl_family_shutdown(void) {
    pthread_mutex_lock(&log_lock);
    log_trim(0);
    free(alog);
    alog = NULL;
    caplog = 0;
    pthread_mutex_unlock(&log_lock);
}

/* ---- The ACL command ------------------------------------------------------------ */


/* A copy of a user's channel patterns (checked by chan_matches). */
typedef struct chan_list {
    char **v;
    size_t n;
} chan_list;

static int chan_list_allows(void *arg, const char *name, size_t n, int is_pattern) {
    const chan_list *l = arg;
    return chan_matches(l->v, l->n, name, n, is_pattern);
}
static void aclSetuserCommand(client *c) {
    garg namearg = c->argv[2];
    const garg *name = &namearg;
    int nops = c->argc - 3;
    char **v = malloc(sizeof(char *) * (size_t)(nops + 1));
    size_t *l = malloc(sizeof(size_t) * (size_t)(nops + 1));
    for (int i = 0; i < nops; i++) {
        v[i] = c->argv[3 + i].p;
        l[i] = c->argv[3 + i].n;
    }
    /* Rules carry passwords: SLOWLOG and MONITOR never see them. */
    for (int i = 2; i < c->argc; i++) cmd_redact_arg(c, i);
    if (has_space(name->p, name->n)) {
        reply_error(c, "ERR Usernames can't contain spaces or null characters");
        free(v);
        free(l);
        return;
    }
    argv_t m = {0};
    int bad;
    int merged = merge_selectors(v, l, nops, &m, &bad);
    if (merged != 0) reply_errorf(c, "ERR Unmatched parenthesis in acl selector starting at '%s'.", v[bad]);
    free(v);
    free(l);
    if (merged != 0) return;
    acl_user tmp;
    user_init(&tmp, name->p, name->n);
    pthread_rwlock_wrlock(&acl_lock);
    acl_user *u = user_find(name->p, name->n);
    if (u) user_copy_rules(&tmp, u);
    int e = user_apply(&tmp, m.v, m.l, m.n, &bad);
    if (e) {
        pthread_rwlock_unlock(&acl_lock);
        reply_errorf(c, "ERR Error in ACL SETUSER modifier '%s': %s", m.v[bad], op_error(e));
        user_temp_free(&tmp);
        argv_free(&m);
        return;
    }
    /* Redis 7.0's ACLKillPubsubClientsIfNeeded: when the new channel
     * patterns (of all selectors) are not allchannels nor a superset of the
     * old ones, the user's subscribers whose current subscriptions are no
     * longer allowed lose their connection; the others stay. The new list
     * is copied (up) to be checked after acl_lock is released. */
    int revoke = 0;
    chan_list up = {0};
    if (u) {
        int all = 0;
        for (int i = 0; i < tmp.nsel; i++) all |= (tmp.sel[i].flags & SEL_ALLCHANNELS) != 0;
        for (int i = 0; i < u->nsel && !all && !revoke; i++) {
            if (u->sel[i].flags & SEL_ALLCHANNELS) revoke = 1;
            for (int j = 0; j < u->sel[i].nchans && !revoke; j++) {
                int found = 0;
                for (int a = 0; a < tmp.nsel && !found; a++)
                    for (int b = 0; b < tmp.sel[a].nchans && !found; b++)
                        found = strcmp(tmp.sel[a].chans[b], u->sel[i].chans[j]) == 0;
                if (!found) revoke = 1;
            }
        }
        if (revoke) {
            for (int a = 0; a < tmp.nsel; a++) up.n += tmp.sel[a].nchans;
            up.v = malloc(sizeof(char *) * (up.n ? up.n : 1));
            if (!up.v) abort();
            up.n = 0;
            for (int a = 0; a < tmp.nsel; a++)
                for (int b = 0; b < tmp.sel[a].nchans; b++) up.v[up.n++] = strdup(tmp.sel[a].chans[b]);
        }
    } else {
        u = user_new(name->p, name->n);
        set_insert(u);
    }
    user_copy_rules(u, &tmp);
    user_derive(u);
    if (revoke) user_ref(u);
    pthread_rwlock_unlock(&acl_lock);
    user_temp_free(&tmp);
    argv_free(&m);
    if (revoke) {
        uint64_t *ids = NULL;
        size_t n = pubsub_denied_clients(u, chan_list_allows, &up, &ids);
        client_kill_user_ids(u, c, ids, n);
        free(ids);
        for (size_t i = 0; i < up.n; i++) free(up.v[i]);
        free(up.v);
        user_unref(u);
    }
    reply_ok(c);
}

/* commands, keys and channels of a selector, as GETUSER shows them. */
static void reply_selector(client *c, const acl_sel *s) {
    sbuf b = {0};
    describe_rules(s, &b);
    reply_bulk_cstr(c, "commands");
    reply_bulk(c, b.p, b.len);
    b.len = 0;
    sb_cat(&b, "");
    if (s->flags & SEL_ALLKEYS) {
        sb_cat(&b, "~*");
    } else {
        for (int k = 0; k < s->npats; k++) {
            if (k) sb_cat(&b, " ");
            describe_pattern(&s->pats[k], &b);
        }
    }
    reply_bulk_cstr(c, "keys");
    reply_bulk(c, b.p, b.len);
    b.len = 0;
    sb_cat(&b, "");
    if (s->flags & SEL_ALLCHANNELS) {
        sb_cat(&b, "&*");
    } else {
        for (int k = 0; k < s->nchans; k++) {
            if (k) sb_cat(&b, " ");
            sb_cat(&b, "&");
            sb_cat(&b, s->chans[k]);
        }
    }
    reply_bulk_cstr(c, "channels");
    reply_bulk(c, b.p, b.len);
    free(b.p);
}

static void aclGetuserCommand(client *c) {
    pthread_rwlock_rdlock(&acl_lock);
    acl_user *u = user_find(c->argv[2].p, c->argv[2].n);
    if (!u) {
        pthread_rwlock_unlock(&acl_lock);
        reply_null(c);
        return;
    }
    reply_map(c, 6);
    reply_bulk_cstr(c, "flags");
    int nf = 0;
    for (int i = 0; i < NUSERFLAGS; i++) nf += (u->flags & user_flag_names[i].flag) != 0;
    reply_set(c, nf);
    for (int i = 0; i < NUSERFLAGS; i++)
        if (u->flags & user_flag_names[i].flag) reply_bulk_cstr(c, user_flag_names[i].name);
    reply_bulk_cstr(c, "passwords");
    reply_array(c, u->npw);
    for (int i = 0; i < u->npw; i++) reply_bulk(c, u->pw[i], SHA256_HEX_LEN);
    for (int i = 0; i < u->nsel; i++) {
        /* The root selector at the top level, then the others. */
        if (i == 1) {
            reply_bulk_cstr(c, "selectors");
            reply_array(c, u->nsel - 1);
        }
        if (i) reply_map(c, 3);
        reply_selector(c, &u->sel[i]);
    }
    if (u->nsel == 1) {
        reply_bulk_cstr(c, "selectors");
        reply_array(c, 0);
    }
    pthread_rwlock_unlock(&acl_lock);
}

static void aclDeluserCommand(client *c) {
    for (int i = 2; i < c->argc; i++)
        if (c->argv[i].n == 7 && memcmp(c->argv[i].p, "default", 7) == 0) {
            reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    acl_user **gone = malloc(sizeof(acl_user *) * (size_t)c->argc);
    int ngone = 0;
    pthread_rwlock_wrlock(&acl_lock);
    for (int i = 2; i < c->argc; i++) {
        int p = user_pos(c->argv[i].p, c->argv[i].n);
        if (p < 0) continue;
        gone[ngone++] = users[p];
        set_remove(p);
    }
    pthread_rwlock_unlock(&acl_lock);
    /* The set's references keep the users valid while their clients go. */
    for (int i = 0; i < ngone; i++) {
        client_kill_user(gone[i], c, 0);
        user_unref(gone[i]);
    }
    free(gone);
    reply_int(c, ngone);
}

static void list_users(client *c, int names_only) {
    pthread_rwlock_rdlock(&acl_lock);
    reply_array(c, nusers);
    for (int i = 0; i < nusers; i++) {
        if (names_only) {
            reply_bulk(c, users[i]->name, users[i]->namelen);
            continue;
        }
        sbuf b = {0};
        describe_user(users[i], &b);
        reply_bulk(c, b.p, b.len);
        free(b.p);
    }
    pthread_rwlock_unlock(&acl_lock);
}

static void aclListCommand(client *c) { list_users(c, 0); }
static void aclUsersCommand(client *c) { list_users(c, 1); }

static void aclWhoamiCommand(client *c) { reply_bulk_cstr(c, acl_client_user(c)->name); }

static void aclCatCommand(client *c) {
    if (c->argc == 2) {
        reply_array(c, NCATS);
        for (int i = 0; i < NCATS; i++) reply_bulk_cstr(c, cat_names[i]);
        return;
    }
    if (c->argc != 3) {
        admin_reply_subcommand_syntax(c, "ACL");
        return;
    }
    int cat = cat_index(c->argv[2].p, c->argv[2].n);
    if (cat < 0) {
        reply_errorf(c, "ERR Unknown category '%.128s'", c->argv[2].p);
        return;
    }
    size_t h = reply_defer(c);
    long n = 0;
    for (int id = 0; id < ncmds; id++)
        if ((cmd_cats[id] & (1u << cat)) && implemented(&ctab[id])) {
            reply_bulk_cstr(c, ctab[id].fullname);
            n++;
        }
    reply_defer_array(c, h, n);
}

static void aclGenpassCommand(client *c) {
    long long bits = 256;
    if (c->argc > 3) {
        admin_reply_subcommand_syntax(c, "ACL");
        return;
    }
    if (c->argc == 3 && arg_ll(c, &c->argv[2], &bits) != 0) return;
    if (bits <= 0 || bits > GENPASS_MAX_BITS) {
        reply_errorf(c,
                     "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
                     "number up to %d",
                     GENPASS_MAX_BITS);
        return;
    }
    static const char hexd[] = "0123456789abcdef";
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[GENPASS_MAX_BITS / 8];
    char out[GENPASS_MAX_BITS / 4];
    size_t need = (chars + 1) / 2, got = 0;
    while (got < need) {
        ssize_t r = getrandom(raw + got, need - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            reply_error(c, "ERR Unable to read random bytes");
            return;
        }
        got += (size_t)r;
    }
    for (size_t i = 0; i < chars; i++) out[i] = hexd[(raw[i / 2] >> ((i & 1) ? 0 : 4)) & 15];
    reply_bulk(c, out, chars);
}

static void aclLogCommand(client *c) {
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
    int64_t now = wall_ms();
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
        reply_bulk_cstr(c, e->context == CTX_MULTI ? "multi" : "toplevel");
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

static int aclfile_configured(client *c) {
    if (cfg.aclfile && cfg.aclfile[0]) return 1;
    reply_error(c, "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via "
                   "the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration "
                   "file set) in order to store users in the Redis configuration.");
    return 0;
}

static void aclSaveCommand(client *c) {
    if (!aclfile_configured(c)) return;
    sbuf b = {0};
    sb_cat(&b, "");
    pthread_rwlock_rdlock(&acl_lock);
    for (int i = 0; i < nusers; i++) {
        describe_user(users[i], &b);
        sb_cat(&b, "\n");
    }
    pthread_rwlock_unlock(&acl_lock);
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d-%lld", cfg.aclfile, (int)getpid(), (long long)wall_ms());
    int ok = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        log_warn("Opening temp ACL file for ACL SAVE: %s", strerror(errno));
    } else if (write(fd, b.p, b.len) != (ssize_t)b.len) {
        log_warn("Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else if (fsync(fd) != 0 || close(fd) != 0) {
        fd = -1;
        log_warn("Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else {
        fd = -1;
        if (rename(tmp, cfg.aclfile) != 0) log_warn("Renaming ACL file for ACL SAVE: %s", strerror(errno));
        else ok = 1;
    }
    if (fd >= 0) close(fd);
    if (!ok) unlink(tmp);
    free(b.p);
    if (ok) reply_ok(c);
    else
        reply_error(c, "ERR There was an error trying to save the ACLs. Please check the server logs for more "
                       "information");
}

static void aclLoadCommand(client *c) {
    if (!aclfile_configured(c)) return;
    acl_user **set;
    int nset;
    acl_user *def;
    char *err = aclfile_parse(cfg.aclfile, &set, &nset, &def);
    if (err) {
        reply_errorf(c, "ERR %s", err);
        free(err);
        return;
    }
    users_replace(set, nset, def, c);
    reply_ok(c);
}

static void aclDryrunCommand(client *c) {
    acl_user *u = acl_user_get(c->argv[2].p, c->argv[2].n);
    if (!u) {
        reply_errorf(c, "ERR User '%s' not found", c->argv[2].p);
        return;
    }
    garg *argv = c->argv + 3;
    int argc = c->argc - 3;
    const cmd_def *cmd = cmd_lookup(argv[0].p, argv[0].n);
    if (cmd && cmd->parent) cmd = NULL;
    if (cmd && cmd->subs && argc >= 2) cmd = cmd_lookup_full(argv, argc);
    if (!cmd) {
        reply_errorf(c, "ERR Command '%s' not found", argv[0].p);
        acl_user_release(u);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        acl_user_release(u);
        return;
    }
    int pos = 0;
    pthread_rwlock_rdlock(&acl_lock);
    int r = user_check(u, cmd, argv, argc, &pos);
    pthread_rwlock_unlock(&acl_lock);
    acl_user_release(u);
    char msg[512];
    if (r == ACL_OK) {
        reply_ok(c);
        return;
    } else if (r == ACL_DENIED_CMD) {
        snprintf(msg, sizeof(msg), "This user has no permissions to run the '%s' command", cmd->fullname);
    } else {
        snprintf(msg, sizeof(msg), "This user has no permissions to access the '%.*s' %s", (int)argv[pos].n,
                 argv[pos].p, r == ACL_DENIED_KEY ? "key" : "channel");
    }
    reply_bulk_cstr(c, msg);
}

static void aclHelpCommand(client *c) {
    static const char *const help[] = {
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        NULL,
    };
    admin_reply_help(c, "ACL", help);
}

const cmd_handler acl_handlers[] = {
    {"acl|cat", aclCatCommand, CMD_LOCK_NONE},         {"acl|deluser", aclDeluserCommand, CMD_LOCK_NONE},
    {"acl|dryrun", aclDryrunCommand, CMD_LOCK_NONE},   {"acl|genpass", aclGenpassCommand, CMD_LOCK_NONE},
    {"acl|getuser", aclGetuserCommand, CMD_LOCK_NONE}, {"acl|help", aclHelpCommand, CMD_LOCK_NONE},
    {"acl|list", aclListCommand, CMD_LOCK_NONE},       {"acl|load", aclLoadCommand, CMD_LOCK_NONE},
    {"acl|log", aclLogCommand, CMD_LOCK_NONE},         {"acl|save", aclSaveCommand, CMD_LOCK_NONE},
    {"acl|setuser", aclSetuserCommand, CMD_LOCK_NONE}, {"acl|users", aclUsersCommand, CMD_LOCK_NONE},
    {"acl|whoami", aclWhoamiCommand, CMD_LOCK_NONE},   {NULL, NULL, 0},
};
