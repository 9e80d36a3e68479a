/* acl_rules.c -- ACL rules: the command table as ACLs see it, selectors,
 * users and the user set, rule parsing (Redis 7.0's ACL SETUSER syntax) and
 * describing rules back (ACL LIST, GETUSER, SAVE).
 *
 * A user has flags (on/off, nopass, sanitize-payload), SHA-256 password
 * hashes and one or more selectors: the root selector, plus one for each
 * "(...)" rule. A selector allows
 *   - commands through a bitmap indexed by the command's position in the
 *     full Redis 7.0 table (cmd_table(): implemented or not, so that rules
 *     written for Redis load unchanged), plus first-argument exceptions of
 *     otherwise denied commands (+select|0);
 *   - keys through glob patterns with read and/or write permission;
 *   - Pub/Sub channels through glob patterns.
 *
 * The rule strings are not kept. ACL LIST and ACL GETUSER describe the
 * bitmap the way Redis 7.0 does: start from +@all or -@all, greedily add the
 * category that explains most of what is left with the fewest exceptions,
 * then name the single commands that still differ (in table order, where
 * Redis follows its hash table order).
 *
 * Invariants: the user set (acl_set) is sorted by name, bytewise, and holds
 * one reference on each user; the default user is static, always in the
 * set and never freed. Everything here that touches a user in the set runs
 * under acl_lock (written by changes, read by checks); acl_user_derive()
 * refreshes, under the write lock, what is read without it. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/server/acl_internal.h"
#include "util/sha256.h"
#include "base/config.h"
#include "base/log.h"

/* ---- Names ---------------------------------------------------------------- */

const char *acl_op_error(int e) {
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

const char *const acl_cat_names[] = {
    "keyspace", "read",      "write",  "set",     "sortedset", "list",       "hash",
    "string",   "bitmap",    "hyperloglog", "geo", "stream",   "pubsub",     "admin",
    "fast",     "slow",      "blocking", "dangerous", "connection", "transaction", "scripting",
};

const acl_flag_name acl_user_flags[] = {
    {"on", U_ENABLED}, {"off", U_DISABLED}, {"nopass", U_NOPASS},
    {"skip-sanitize-payload", U_SKIP_SANITIZE}, {"sanitize-payload", U_SANITIZE},
};

/* ---- The user set ------------------------------------------------------------- */

pthread_rwlock_t acl_lock = PTHREAD_RWLOCK_INITIALIZER;
acl_user acl_default_user;
acl_user **acl_set;
int acl_nset, acl_capset;
int acl_def_requires_auth, acl_def_nopass;

/* ---- The command table as ACLs see it -------------------------------------- */

const cmd_def *acl_ctab;
int acl_ncmds;
uint32_t acl_cmd_cats[ACL_MAX_CMDS];
static int *kid_list[ACL_MAX_CMDS];   /* subcommands of a container */
static int kid_count[ACL_MAX_CMDS];
static int *by_name;                  /* command ids sorted by full name */
int acl_id_publish = -1, acl_id_spublish = -1, acl_id_subscribe = -1, acl_id_ssubscribe = -1, acl_id_psubscribe = -1;

int acl_cat_index(const char *p, size_t n) {
    for (int i = 0; i < ACL_NCATS; i++)
        if (strlen(acl_cat_names[i]) == n && strncasecmp(acl_cat_names[i], p, n) == 0) return i;
    return -1;
}

static int name_cmp(const char *a, const char *b, size_t bn) {
    size_t an = strlen(a);
    int r = strncasecmp(a, b, an < bn ? an : bn);
    if (r) return r;
    return an < bn ? -1 : an > bn;
}

static int by_name_cmp(const void *x, const void *y) {
    const char *b = acl_ctab[*(const int *)y].fullname;
    return name_cmp(acl_ctab[*(const int *)x].fullname, b, strlen(b));
}

/* Id of the command named exactly (case-insensitive, "config|get"), or -1. */
static int lookup_cmd(const char *p, size_t n) {
    int lo = 0, hi = acl_ncmds - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int r = name_cmp(acl_ctab[by_name[mid]].fullname, p, n);
        if (r == 0) return by_name[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

void acl_cmd_index_init(void) {
    size_t n;
    acl_ctab = cmd_table(&n);
    if (n > ACL_MAX_CMDS) {
        fprintf(stderr, "goblin: %zu commands exceed the ACL bitmap (%d)\n", n, ACL_MAX_CMDS);
        abort();
    }
    acl_ncmds = (int)n;
    by_name = malloc(sizeof(int) * n);
    if (!by_name) abort();
    for (int i = 0; i < acl_ncmds; i++) {
        by_name[i] = i;
        const char *s = acl_ctab[i].acl_str ? acl_ctab[i].acl_str : "";
        while (*s) {
            while (*s == ' ') s++;
            size_t l = strcspn(s, " ");
            if (l > 1 && s[0] == '@') {
                int c = acl_cat_index(s + 1, l - 1);
                if (c >= 0) acl_cmd_cats[i] |= 1u << c;
            }
            s += l;
        }
        if (acl_ctab[i].parent) {
            int p = acl_cmd_id(acl_ctab[i].parent);
            kid_list[p] = realloc(kid_list[p], sizeof(int) * (size_t)(kid_count[p] + 1));
            if (!kid_list[p]) abort();
            kid_list[p][kid_count[p]++] = i;
        }
    }
    qsort(by_name, n, sizeof(int), by_name_cmp);
    acl_id_publish = lookup_cmd("publish", 7);
    acl_id_spublish = lookup_cmd("spublish", 8);
    acl_id_subscribe = lookup_cmd("subscribe", 9);
    acl_id_ssubscribe = lookup_cmd("ssubscribe", 10);
    acl_id_psubscribe = lookup_cmd("psubscribe", 10);
}

/* ---- Bitmaps ------------------------------------------------------------------ */

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
    for (int id = 0; id < acl_ncmds; id++)
        if (acl_cmd_cats[id] & (1u << cat)) perm_bits(b, id, v);
}

static void cat_count(const uint64_t *b, int cat, unsigned long *on, unsigned long *off) {
    *on = *off = 0;
    for (int id = 0; id < acl_ncmds; id++)
        if (acl_cmd_cats[id] & (1u << cat)) {
            if (acl_bit_get(b, id)) (*on)++;
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
    for (int id = 0; id < acl_ncmds; id++) strv_free(s->firstargs[id]);
    free(s->firstargs);
    s->firstargs = NULL;
}

static void sel_add_firstarg(acl_sel *s, int id, const char *arg) {
    if (!s->firstargs) {
        s->firstargs = calloc((size_t)acl_ncmds, sizeof(char **));
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
        for (int id = 0; id < acl_ncmds; id++)
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
    for (int id = 0; id < acl_ncmds; id++)
        if (acl_cmd_cats[id] & (1u << cat)) sel_change_perm(s, id, v);
}

int acl_has_space(const char *p, size_t n) {
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
        if (acl_has_space(op + off, n - off)) return OPE_SYNTAX;
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
        if (acl_has_space(op + 1, n - 1)) return OPE_SYNTAX;
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
        if (acl_ctab[id].parent) return OPE_CHILD;
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
        int cat = acl_cat_index(op + 2, n - 2);
        if (cat < 0) return OPE_NOENT;
        sel_change_cat(s, cat, op[0] == '+');
    } else {
        return OPE_SYNTAX;
    }
    return OPE_OK;
}

/* ---- Splitting "(...)" rules and ACL file lines --------------------------------- */

void acl_argv_push(argv_t *a, const char *p, size_t n) {
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

void acl_argv_free(argv_t *a) {
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
        acl_argv_push(out, buf, o);
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
int acl_merge_selectors(char **v, const size_t *l, int n, argv_t *out, int *bad) {
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
                acl_argv_push(out, acc, acclen);
                free(acc);
                acc = NULL;
                open = -1;
            }
            continue;
        }
        acl_argv_push(out, v[i], l[i]);
    }
    if (open >= 0) {
        free(acc);
        acl_argv_free(out);
        *bad = open;
        return -1;
    }
    return 0;
}

/* ---- Users ---------------------------------------------------------------------- */

void acl_user_init(acl_user *u, const char *name, size_t len) {
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
void acl_user_copy_rules(acl_user *dst, const acl_user *src) {
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
void acl_user_temp_free(acl_user *u) {
    user_free_rules(u);
    free(u->name);
}

static int is_hash(const char *p, size_t n) {
    if (n != SHA256_HEX_LEN) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

/* The hash a password rule names: that of the password after '>' or '<',
 * or the one given after '#' or '!' (OPE_BADHASH when malformed). */
static int rule_hash(const char *op, size_t n, char *h) {
    if (op[0] == '>' || op[0] == '<') {
        sha256_hex(op + 1, n - 1, h);
        return OPE_OK;
    }
    if (!is_hash(op + 1, n - 1)) return OPE_BADHASH;
    memcpy(h, op + 1, SHA256_HEX_LEN);
    h[SHA256_HEX_LEN] = '\0';
    return OPE_OK;
}

static int pw_find(const acl_user *u, const char *h) {
    for (int i = 0; i < u->npw; i++)
        if (memcmp(u->pw[i], h, SHA256_HEX_LEN) == 0) return i;
    return -1;
}

static void user_set_flag(acl_user *u, uint32_t on, uint32_t off) {
    u->flags |= on;
    u->flags &= ~off;
}

int acl_user_op(acl_user *u, const char *op, size_t n) {
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
        if (rule_hash(op, n, h) != OPE_OK) return OPE_BADHASH;
        if (pw_find(u, h) < 0) {
            void *np = realloc(u->pw, sizeof(*u->pw) * (size_t)(u->npw + 1));
            if (!np) abort();
            u->pw = np;
            memcpy(u->pw[u->npw++], h, SHA256_HEX_LEN + 1);
        }
        u->flags &= ~(uint32_t)U_NOPASS;
    } else if (op[0] == '<' || op[0] == '!') {
        char h[SHA256_HEX_LEN + 1];
        if (rule_hash(op, n, h) != OPE_OK) return OPE_BADHASH;
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
        acl_argv_free(&a);
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
        acl_user_op(u, "resetpass", 9);
        acl_user_op(u, "resetkeys", 9);
        acl_user_op(u, "resetchannels", 13);
        if (cfg.acl_pubsub_default == CONFIG_ACL_PUBSUB_ALLCHANNELS) acl_user_op(u, "allchannels", 11);
        acl_user_op(u, "off", 3);
        acl_user_op(u, "sanitize-payload", 16);
        acl_user_op(u, "clearselectors", 14);
        acl_user_op(u, "-@all", 5);
    } else {
        return sel_op(&u->sel[0], op, n);
    }
    return OPE_OK;
}

/* Refresh what is read without the lock. Under the write lock. */
void acl_user_derive(acl_user *u) {
    const uint32_t all = SEL_ALLCOMMANDS | SEL_ALLKEYS | SEL_ALLCHANNELS;
    __atomic_store_n(&u->unrestricted, (u->sel[0].flags & all) == all, __ATOMIC_RELEASE);
    if (u == &acl_default_user) {
        int nopass = (u->flags & U_NOPASS) != 0;
        __atomic_store_n(&acl_def_nopass, nopass, __ATOMIC_RELEASE);
        __atomic_store_n(&acl_def_requires_auth, !nopass || (u->flags & U_DISABLED), __ATOMIC_RELEASE);
    }
}

void acl_user_ref(acl_user *u) {
    if (u != &acl_default_user) __atomic_fetch_add(&u->refs, 1, __ATOMIC_RELAXED);
}

void acl_user_unref(acl_user *u) {
    if (!u || u == &acl_default_user) return;
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
int acl_user_pos(const char *name, size_t len) {
    int lo = 0, hi = acl_nset - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int r = user_name_cmp(acl_set[mid], name, len);
        if (r == 0) return mid;
        if (r < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -lo - 1;
}

acl_user *acl_user_find(const char *name, size_t len) {
    int i = acl_user_pos(name, len);
    return i >= 0 ? acl_set[i] : NULL;
}

void acl_set_insert(acl_user *u) {
    int i = acl_user_pos(u->name, u->namelen);
    if (i >= 0) return;
    i = -i - 1;
    if (acl_nset == acl_capset) {
        acl_capset = acl_capset ? acl_capset * 2 : 8;
        acl_set = realloc(acl_set, sizeof(acl_user *) * (size_t)acl_capset);
        if (!acl_set) abort();
    }
    memmove(acl_set + i + 1, acl_set + i, sizeof(acl_user *) * (size_t)(acl_nset - i));
    acl_set[i] = u;
    acl_nset++;
}

void acl_set_remove(int i) {
    memmove(acl_set + i, acl_set + i + 1, sizeof(acl_user *) * (size_t)(acl_nset - i - 1));
    acl_nset--;
}

acl_user *acl_user_new(const char *name, size_t len) {
    acl_user *u = malloc(sizeof(*u));
    if (!u) abort();
    acl_user_init(u, name, len);
    u->refs = 1; /* the set's */
    acl_user_derive(u);
    return u;
}

void acl_default_user_reset(acl_user *u) {
    acl_user_op(u, "+@all", 5);
    acl_user_op(u, "~*", 2);
    acl_user_op(u, "&*", 2);
    acl_user_op(u, "on", 2);
    acl_user_op(u, "nopass", 6);
}

/* Apply rules (already merged) to u; the first error and its index. */
int acl_user_apply(acl_user *u, char **v, const size_t *l, int n, int *bad) {
    for (int i = 0; i < n; i++) {
        int e = acl_user_op(u, v[i], l[i]);
        if (e) {
            *bad = i;
            return e;
        }
    }
    return OPE_OK;
}

/* ---- Description (ACL LIST, GETUSER, SAVE) -------------------------------------- */

void acl_sb_add(sbuf *b, const char *p, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void acl_sb_cat(sbuf *b, const char *s) { acl_sb_add(b, s, strlen(s)); }

static void sb_trim_space(sbuf *b) {
    if (b->len && b->p[b->len - 1] == ' ') b->p[--b->len] = '\0';
}

static void describe_single(const acl_sel *s, uint64_t *fake, int id, sbuf *b) {
    int ubit = acl_bit_get(s->bits, id), fbit = acl_bit_get(fake, id);
    if (ubit != fbit) {
        acl_sb_cat(b, ubit ? "+" : "-");
        acl_sb_cat(b, acl_ctab[id].fullname);
        acl_sb_cat(b, " ");
        perm_bits(fake, id, ubit);
    }
    for (int k = 0; k < kid_count[id]; k++) describe_single(s, fake, kid_list[id][k], b);
    if (!ubit && s->firstargs && s->firstargs[id])
        for (int j = 0; s->firstargs[id][j]; j++) {
            acl_sb_cat(b, "+");
            acl_sb_cat(b, acl_ctab[id].fullname);
            acl_sb_cat(b, "|");
            acl_sb_cat(b, s->firstargs[id][j]);
            acl_sb_cat(b, " ");
        }
}

/* The command rules of a selector, as Redis 7.0's
 * ACLDescribeSelectorCommandRules builds them. */
void acl_describe_rules(const acl_sel *s, sbuf *b) {
    uint64_t fake[ACL_WORDS], temp[ACL_WORDS];
    int additive = !s->future;
    memset(fake, additive ? 0 : 0xff, sizeof(fake));
    memcpy(temp, s->bits, sizeof(temp));
    acl_sb_cat(b, additive ? "-@all " : "+@all ");
    char applied[ACL_NCATS] = {0};
    for (;;) {
        int best = -1;
        unsigned long mindiff = ULONG_MAX, maxsame = 0;
        for (int j = 0; j < ACL_NCATS; j++) {
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
        acl_sb_cat(b, additive ? "+@" : "-@");
        acl_sb_cat(b, acl_cat_names[best]);
        acl_sb_cat(b, " ");
        applied[best] = 1;
    }
    for (int id = 0; id < acl_ncmds; id++)
        if (!acl_ctab[id].parent) describe_single(s, fake, id, b);
    sb_trim_space(b);
}

void acl_describe_pattern(const keypat *k, sbuf *b) {
    acl_sb_cat(b, k->flags == KP_ALL ? "~" : k->flags == KP_READ ? "%R~" : "%W~");
    acl_sb_cat(b, k->p);
}

static void describe_sel(const acl_sel *s, sbuf *b) {
    if (s->flags & SEL_ALLKEYS) {
        acl_sb_cat(b, "~* ");
    } else {
        for (int i = 0; i < s->npats; i++) {
            acl_describe_pattern(&s->pats[i], b);
            acl_sb_cat(b, " ");
        }
    }
    if (s->flags & SEL_ALLCHANNELS) {
        acl_sb_cat(b, "&* ");
    } else {
        acl_sb_cat(b, "resetchannels ");
        for (int i = 0; i < s->nchans; i++) {
            acl_sb_cat(b, "&");
            acl_sb_cat(b, s->chans[i]);
            acl_sb_cat(b, " ");
        }
    }
    acl_describe_rules(s, b);
}

/* "user <name> <rules>" as ACL LIST and the ACL file show it. */
void acl_describe_user(const acl_user *u, sbuf *b) {
    acl_sb_cat(b, "user ");
    acl_sb_add(b, u->name, u->namelen);
    acl_sb_cat(b, " ");
    for (int i = 0; i < ACL_NUSERFLAGS; i++)
        if (u->flags & acl_user_flags[i].flag) {
            acl_sb_cat(b, acl_user_flags[i].name);
            acl_sb_cat(b, " ");
        }
    for (int i = 0; i < u->npw; i++) {
        acl_sb_cat(b, "#");
        acl_sb_cat(b, u->pw[i]);
        acl_sb_cat(b, " ");
    }
    for (int i = 0; i < u->nsel; i++) {
        if (i) acl_sb_cat(b, " (");
        describe_sel(&u->sel[i], b);
        if (i) acl_sb_cat(b, ")");
    }
}
