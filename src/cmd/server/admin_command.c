/* admin_command.c -- COMMAND, COMMAND COUNT/INFO/DOCS/LIST/GETKEYS/
 * GETKEYSANDFLAGS/HELP.
 *
 * Every answer comes from the command table, whose metadata is Redis 7.0's
 * own COMMAND INFO / COMMAND DOCS output stored as RESP3 (command_meta.inc).
 * Two things are computed rather than copied:
 *
 *  - A container command (CONFIG, OBJECT, ...) lists its subcommands inside
 *    its INFO entry and its DOCS map. Goblin lists only the subcommands it
 *    implements, so those two parts are rebuilt with the unimplemented
 *    entries left out (in the stored order, so a fully implemented container
 *    answers byte for byte what Redis answers).
 *
 *  - GETKEYS reads the key specs of the INFO entry and walks them exactly as
 *    Redis's getKeysUsingKeySpecs does; the few commands whose specs are not
 *    enough (variable flags, keys "anywhere") have a native extractor here,
 *    as they have a getkeys_proc in Redis. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/server/admin_family.h"
#include "session/reply.h"
#include "util/strutil.h"

/* ---- Reading our own RESP3 metadata (trusted input) --------------------- */

/* Header of the value at p: its type byte, its count or length, and where
 * the payload starts. */
static const char *r3_hdr(const char *p, char *type, long long *n) {
    const char *eol = strchr(p, '\r');
    *type = p[0];
    *n = 0;
    if (strchr("$=!*~>%|:", p[0])) *n = strtoll(p + 1, NULL, 10);
    return eol + 2;
}

/* The value after the one at p. */
static const char *r3_skip(const char *p) {
    char t;
    long long n;
    const char *q = r3_hdr(p, &t, &n);
    switch (t) {
    case '$':
    case '=':
    case '!':
        return q + n + 2;
    case '%':
    case '|':
        n *= 2;
        /* fall through */
    case '*':
    case '~':
    case '>':
        for (long long i = 0; i < n; i++) q = r3_skip(q);
        return q;
    default:
        return q;
    }
}

/* A string value ('$' or '+') at p: sets *s and *len, returns the next value. */
static const char *r3_str(const char *p, const char **s, size_t *len) {
    char t;
    long long n;
    const char *q = r3_hdr(p, &t, &n);
    if (t == '$') {
        *s = q;
        *len = (size_t)n;
        return q + n + 2;
    }
    *s = p + 1;
    *len = (size_t)(q - 2 - (p + 1));
    return q;
}

static int r3_eq(const char *s, size_t n, const char *lit) { return strlen(lit) == n && memcmp(s, lit, n) == 0; }

/* Reply the values [p, end) one by one, transcoded for the client. */
static void reply_r3_range(client *c, const char *p, const char *end) {
    while (p < end) {
        const char *q = r3_skip(p);
        reply_resp3_blob(c, p, (size_t)(q - p));
        p = q;
    }
}

/* ---- INFO and DOCS entries --------------------------------------------- */

static int sub_implemented(const cmd_def *parent, const char *name, size_t len) {
    const cmd_def *s = cmd_lookup(name, len);
    return s && s->parent == parent;
}

/* A map or array of subcommand entries at p, keeping implemented ones.
 * is_map: DOCS (name -> docs); otherwise INFO (entries whose 1st element is
 * the name). Returns the value after it. */
static const char *reply_filtered_subs(client *c, const cmd_def *d, const char *p, int is_map) {
    char t;
    long long n;
    p = r3_hdr(p, &t, &n);
    size_t h = reply_defer(c);
    long kept = 0;
    for (long long i = 0; i < n; i++) {
        const char *name;
        size_t nlen;
        const char *start = p;
        if (is_map) {
            p = r3_skip(r3_str(p, &name, &nlen));
        } else {
            char et;
            long long en;
            r3_str(r3_hdr(p, &et, &en), &name, &nlen);
            p = r3_skip(p);
        }
        if (!sub_implemented(d, name, nlen)) continue;
        reply_r3_range(c, start, p);
        kept++;
    }
    if (is_map) reply_defer_map(c, h, kept);
    else reply_defer_array(c, h, kept);
    return p;
}

static void reply_info_entry(client *c, const cmd_def *d) {
    if (!d) {
        reply_null(c);
        return;
    }
    if (!d->subs) {
        reply_resp3_blob(c, d->info, d->info_len);
        return;
    }
    char t;
    long long n;
    const char *p = r3_hdr(d->info, &t, &n);
    reply_array(c, (long)n);
    for (long long i = 0; i < n - 1; i++) {
        const char *q = r3_skip(p);
        reply_resp3_blob(c, p, (size_t)(q - p));
        p = q;
    }
    reply_filtered_subs(c, d, p, 0);
}

static void reply_docs_entry(client *c, const cmd_def *d) {
    if (!d->subs) {
        reply_resp3_blob(c, d->docs, d->docs_len);
        return;
    }
    char t;
    long long n;
    const char *p = r3_hdr(d->docs, &t, &n);
    reply_map(c, (long)n);
    for (long long i = 0; i < n; i++) {
        const char *key;
        size_t klen;
        const char *start = p;
        p = r3_str(p, &key, &klen);
        reply_r3_range(c, start, p);
        if (r3_eq(key, klen, "subcommands")) {
            p = reply_filtered_subs(c, d, p, 1);
        } else {
            const char *q = r3_skip(p);
            reply_resp3_blob(c, p, (size_t)(q - p));
            p = q;
        }
    }
}

/* ---- Collecting commands ----------------------------------------------- */

typedef struct cmd_vec {
    const cmd_def **v;
    size_t n, cap;
} cmd_vec;

static void vec_push(cmd_vec *cv, const cmd_def *d) {
    if (cv->n == cv->cap) {
        cv->cap = cv->cap ? cv->cap * 2 : 256;
        cv->v = realloc(cv->v, cv->cap * sizeof(*cv->v));
        if (!cv->v) abort();
    }
    cv->v[cv->n++] = d;
}

static void collect_top(void *arg, const cmd_def *d) { vec_push(arg, d); }

static void collect_top_commands(cmd_vec *cv) {
    memset(cv, 0, sizeof(*cv));
    cmd_each(collect_top, cv);
}

/* A command name as COMMAND INFO / DOCS accept it: "get", "config|get". */
static const cmd_def *lookup_by_fullname(const garg *a) { return cmd_lookup(a->p, a->n); }

void commandCommand(client *c) {
    cmd_vec cv;
    collect_top_commands(&cv);
    reply_array(c, (long)cv.n);
    for (size_t i = 0; i < cv.n; i++) reply_info_entry(c, cv.v[i]);
    free(cv.v);
}

void commandCountCommand(client *c) { reply_int(c, (long long)cmd_count_top()); }

void commandInfoCommand(client *c) {
    if (c->argc == 2) {
        commandCommand(c);
        return;
    }
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) reply_info_entry(c, lookup_by_fullname(&c->argv[i]));
}

void commandDocsCommand(client *c) {
    if (c->argc == 2) {
        cmd_vec cv;
        collect_top_commands(&cv);
        reply_map(c, (long)cv.n);
        for (size_t i = 0; i < cv.n; i++) {
            reply_bulk_cstr(c, cv.v[i]->fullname);
            reply_docs_entry(c, cv.v[i]);
        }
        free(cv.v);
        return;
    }
    size_t h = reply_defer(c);
    long n = 0;
    for (int i = 2; i < c->argc; i++) {
        const cmd_def *d = lookup_by_fullname(&c->argv[i]);
        if (!d) continue;
        reply_bulk_cstr(c, d->fullname);
        reply_docs_entry(c, d);
        n++;
    }
    reply_defer_map(c, h, n);
}

/* ---- COMMAND LIST ------------------------------------------------------ */

enum { LIST_ALL, LIST_MODULE, LIST_ACLCAT, LIST_PATTERN };

/* Whether the space-separated "@cat @cat" list holds category cat. */
static int has_aclcat(const char *acl, const garg *cat) {
    const char *s = acl;
    while (*s) {
        while (*s == ' ') s++;
        size_t n = strcspn(s, " ");
        if (n == cat->n + 1 && s[0] == '@' && strncasecmp(s + 1, cat->p, cat->n) == 0) return 1;
        s += n;
    }
    return 0;
}

static int list_match(const cmd_def *d, int type, const garg *arg) {
    switch (type) {
    case LIST_MODULE: return 0; /* no modules */
    case LIST_ACLCAT: return has_aclcat(d->acl_str, arg);
    case LIST_PATTERN: return glob_match(arg->p, arg->n, d->fullname, strlen(d->fullname), 1);
    default: return 1;
    }
}

void commandListCommand(client *c) {
    int type = LIST_ALL;
    const garg *arg = NULL;
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "filterby") && c->argc - 1 - i == 2) {
            const garg *ft = &c->argv[i + 1];
            if (arg_is(ft, "module")) type = LIST_MODULE;
            else if (arg_is(ft, "aclcat")) type = LIST_ACLCAT;
            else if (arg_is(ft, "pattern")) type = LIST_PATTERN;
            else {
                reply_err_syntax(c);
                return;
            }
            arg = &c->argv[i + 2];
            i += 2;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    cmd_vec cv;
    collect_top_commands(&cv);
    size_t h = reply_defer(c);
    long n = 0;
    for (size_t i = 0; i < cv.n; i++) {
        const cmd_def *d = cv.v[i];
        if (list_match(d, type, arg)) {
            reply_bulk_cstr(c, d->fullname);
            n++;
        }
        for (int j = 0; j < d->nsubs; j++) {
            if (!list_match(d->subs[j], type, arg)) continue;
            reply_bulk_cstr(c, d->subs[j]->fullname);
            n++;
        }
    }
    reply_defer_array(c, h, n);
    free(cv.v);
}

/* ---- Key specs and key extraction -------------------------------------- */

enum {
    KF_RO = 1 << 0,
    KF_RW = 1 << 1,
    KF_OW = 1 << 2,
    KF_RM = 1 << 3,
    KF_ACCESS = 1 << 4,
    KF_UPDATE = 1 << 5,
    KF_INSERT = 1 << 6,
    KF_DELETE = 1 << 7,
    KF_NOT_KEY = 1 << 8,
    KF_INCOMPLETE = 1 << 9,
    KF_VARIABLE_FLAGS = 1 << 10,
};
/* In the order Redis prints them. */
static const char *const keyflag_names[] = {"RO",     "RW",     "OW",      "RM",         "access",        "update",
                                            "insert", "delete", "not_key", "incomplete", "variable_flags"};
#define NKEYFLAGS (sizeof(keyflag_names) / sizeof(keyflag_names[0]))

enum { BS_UNKNOWN, BS_INDEX, BS_KEYWORD };
enum { FK_UNKNOWN, FK_RANGE, FK_KEYNUM };

typedef struct keyspec {
    unsigned flags;
    int bs;
    long long index;                 /* BS_INDEX */
    const char *kw;                  /* BS_KEYWORD */
    size_t kwlen;
    long long startfrom;
    int fk;
    long long lastkey, keystep, limit;  /* FK_RANGE (keystep shared) */
    long long keynumidx, firstkey;      /* FK_KEYNUM */
} keyspec;

typedef struct keyref {
    int pos;
    unsigned flags;
} keyref;

/* Fill the fields named in a spec map ("index", "keyword", ...). */
static const char *parse_spec_fields(const char *p, keyspec *ks) {
    char t;
    long long n;
    p = r3_hdr(p, &t, &n);
    for (long long i = 0; i < n; i++) {
        const char *k;
        size_t kl;
        p = r3_str(p, &k, &kl);
        char vt;
        long long v;
        const char *q = r3_hdr(p, &vt, &v);
        if (vt == ':') {
            if (r3_eq(k, kl, "index")) ks->index = v;
            else if (r3_eq(k, kl, "startfrom")) ks->startfrom = v;
            else if (r3_eq(k, kl, "lastkey")) ks->lastkey = v;
            else if (r3_eq(k, kl, "keystep")) ks->keystep = v;
            else if (r3_eq(k, kl, "limit")) ks->limit = v;
            else if (r3_eq(k, kl, "keynumidx")) ks->keynumidx = v;
            else if (r3_eq(k, kl, "firstkey")) ks->firstkey = v;
            p = q;
        } else if (r3_eq(k, kl, "keyword")) {
            p = r3_str(p, &ks->kw, &ks->kwlen);
        } else {
            p = r3_skip(p);
        }
    }
    return p;
}

/* {type: ..., spec: {...}} of begin_search / find_keys. Returns the type. */
static const char *parse_search(const char *p, keyspec *ks, int *type, int is_fk) {
    char t;
    long long n;
    p = r3_hdr(p, &t, &n);
    *type = 0;
    for (long long i = 0; i < n; i++) {
        const char *k, *v;
        size_t kl, vl;
        p = r3_str(p, &k, &kl);
        if (r3_eq(k, kl, "type")) {
            p = r3_str(p, &v, &vl);
            if (!is_fk) *type = r3_eq(v, vl, "index") ? BS_INDEX : r3_eq(v, vl, "keyword") ? BS_KEYWORD : BS_UNKNOWN;
            else *type = r3_eq(v, vl, "range") ? FK_RANGE : r3_eq(v, vl, "keynum") ? FK_KEYNUM : FK_UNKNOWN;
        } else if (r3_eq(k, kl, "spec")) {
            p = parse_spec_fields(p, ks);
        } else {
            p = r3_skip(p);
        }
    }
    return p;
}

/* The key specs of d's INFO entry; *n set to their count. Caller frees. */
static keyspec *cmd_keyspecs(const cmd_def *d, int *nspecs) {
    char t;
    long long n;
    const char *p = r3_hdr(d->info, &t, &n);
    for (int i = 0; i < 8; i++) p = r3_skip(p);
    p = r3_hdr(p, &t, &n);
    keyspec *ks = calloc((size_t)n + 1, sizeof(*ks));
    if (!ks) abort();
    for (long long i = 0; i < n; i++) {
        long long m;
        p = r3_hdr(p, &t, &m);
        for (long long j = 0; j < m; j++) {
            const char *k;
            size_t kl;
            p = r3_str(p, &k, &kl);
            if (r3_eq(k, kl, "flags")) {
                long long nf;
                p = r3_hdr(p, &t, &nf);
                for (long long f = 0; f < nf; f++) {
                    const char *fs;
                    size_t fl;
                    p = r3_str(p, &fs, &fl);
                    for (size_t b = 0; b < NKEYFLAGS; b++)
                        if (r3_eq(fs, fl, keyflag_names[b])) ks[i].flags |= 1u << b;
                }
            } else if (r3_eq(k, kl, "begin_search")) {
                p = parse_search(p, &ks[i], &ks[i].bs, 0);
            } else if (r3_eq(k, kl, "find_keys")) {
                p = parse_search(p, &ks[i], &ks[i].fk, 1);
            } else {
                p = r3_skip(p);
            }
        }
    }
    *nspecs = (int)n;
    return ks;
}

/* Redis's getKeysUsingKeySpecs: -1 when a spec cannot be followed
 * (unknown, incomplete, or out of range), else the number of keys. */
static int keys_from_specs(const cmd_def *d, const keyspec *specs, int nspecs, garg *argv, int argc,
                           keyref *out) {
    int nk = 0;
    for (int j = 0; j < nspecs; j++) {
        const keyspec *ks = &specs[j];
        if (ks->flags & KF_NOT_KEY) continue;
        long long first = 0, last, step;
        if (ks->bs == BS_INDEX) {
            first = ks->index;
        } else if (ks->bs == BS_KEYWORD) {
            long long start = ks->startfrom > 0 ? ks->startfrom : argc + ks->startfrom;
            long long end = ks->startfrom > 0 ? argc - 1 : 1;
            for (long long i = start; i != end; i = start <= end ? i + 1 : i - 1) {
                if (i >= argc || i < 1) break;
                if (argv[i].n == ks->kwlen && strncasecmp(argv[i].p, ks->kw, ks->kwlen) == 0) {
                    first = i + 1;
                    break;
                }
            }
            if (!first) continue;
        } else {
            return -1;
        }
        if (ks->fk == FK_RANGE) {
            step = ks->keystep;
            if (ks->lastkey >= 0) last = first + ks->lastkey;
            else if (!ks->limit) last = argc + ks->lastkey;
            else last = first + ((argc - first) / ks->limit + ks->lastkey);
        } else if (ks->fk == FK_KEYNUM) {
            step = ks->keystep;
            if (ks->keynumidx >= argc - first) {
                if (d->arity < 0) continue;
                return -1;
            }
            long long numkeys;
            const garg *a = &argv[first + ks->keynumidx];
            if (!str_to_ll(a->p, a->n, &numkeys) || numkeys < 0) return -1;
            first += ks->firstkey;
            last = first + numkeys - 1;
        } else {
            return -1;
        }
        if (last >= argc || last < first || first >= argc) return -1;
        if (step <= 0) step = 1;
        for (long long i = first; i <= last; i += step) {
            if (i >= argc) continue;
            out[nk].pos = (int)i;
            out[nk].flags = ks->flags;
            nk++;
        }
        if (ks->flags & KF_INCOMPLETE) return -1;
    }
    return nk;
}

/* Native extractors, as Redis's setGetKeys / bitfieldGetKeys / sortGetKeys. */
static int set_getkeys(garg *argv, int argc, keyref *out) {
    out[0].pos = 1;
    out[0].flags = KF_OW | KF_UPDATE;
    for (int i = 3; i < argc; i++)
        if (arg_is(&argv[i], "get")) {
            out[0].flags = KF_RW | KF_ACCESS | KF_UPDATE;
            break;
        }
    return 1;
}

static int bitfield_getkeys(garg *argv, int argc, keyref *out) {
    int readonly = 1;
    for (int i = 2; i < argc; i++) {
        int remargs = argc - i - 1;
        if (arg_is(&argv[i], "get") && remargs >= 2) {
            i += 2;
        } else if ((arg_is(&argv[i], "set") || arg_is(&argv[i], "incrby")) && remargs >= 3) {
            readonly = 0;
            break;
        } else if (arg_is(&argv[i], "overflow") && remargs >= 1) {
            i += 1;
        } else {
            readonly = 0;
            break;
        }
    }
    out[0].pos = 1;
    out[0].flags = readonly ? KF_RO | KF_ACCESS : KF_RW | KF_ACCESS | KF_UPDATE;
    return 1;
}

static int sort_getkeys(garg *argv, int argc, keyref *out) {
    static const struct {
        const char *name;
        int skip;
    } skiplist[] = {{"limit", 2}, {"get", 1}, {"by", 1}};
    int found_store = 0;
    out[0].pos = 1;
    out[0].flags = KF_RO | KF_ACCESS;
    for (int i = 2; i < argc; i++) {
        for (size_t j = 0; j < sizeof(skiplist) / sizeof(skiplist[0]); j++) {
            if (arg_is(&argv[i], skiplist[j].name)) {
                i += skiplist[j].skip;
                break;
            } else if (arg_is(&argv[i], "store") && i + 1 < argc) {
                /* The last STORE wins, as SORT itself does. */
                found_store = 1;
                out[1].pos = i + 1;
                out[1].flags = KF_OW | KF_UPDATE;
                break;
            }
        }
    }
    return 1 + found_store;
}

static int sort_ro_getkeys(garg *argv, int argc, keyref *out) {
    (void)argv;
    (void)argc;
    out[0].pos = 1;
    out[0].flags = KF_RO | KF_ACCESS;
    return 1;
}

/* MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw]
 * [AUTH2 user pw] [KEYS key ...] */
static int migrate_getkeys(garg *argv, int argc, keyref *out) {
    static const struct {
        const char *name;
        int skip;
    } options[] = {{"copy", 0}, {"replace", 0}, {"auth", 1}, {"auth2", 2}};
    int first = 3, num = 1;
    for (int i = 6; i < argc; i++) {
        if (arg_is(&argv[i], "keys")) {
            if (argv[3].n > 0) return 0; /* KEYS needs the empty key form */
            first = i + 1;
            num = argc - first;
            break;
        }
        for (size_t j = 0; j < sizeof(options) / sizeof(options[0]); j++) {
            if (arg_is(&argv[i], options[j].name)) {
                i += options[j].skip;
                break;
            }
        }
    }
    for (int i = 0; i < num; i++) {
        out[i].pos = first + i;
        out[i].flags = KF_RW | KF_ACCESS | KF_DELETE;
    }
    return num;
}

typedef int native_getkeys_fn(garg *argv, int argc, keyref *out);
static native_getkeys_fn *native_getkeys(const cmd_def *d) {
    static const struct {
        const char *name;
        native_getkeys_fn *fn;
    } natives[] = {
        {"set", set_getkeys},         {"bitfield", bitfield_getkeys}, {"sort", sort_getkeys},
        {"sort_ro", sort_ro_getkeys}, {"migrate", migrate_getkeys},
    };
    for (size_t i = 0; i < sizeof(natives) / sizeof(natives[0]); i++)
        if (strcmp(d->fullname, natives[i].name) == 0) return natives[i].fn;
    return NULL;
}

/* Keys of a call, as Redis's getKeysFromCommandWithSpecs: the key specs
 * when they can be followed and their flags are fixed, else the native
 * extractor. *out (caller frees) holds the returned number of keys. */
static int call_keys(const cmd_def *d, const keyspec *specs, int nspecs, garg *argv, int argc, keyref **out) {
    int has_keyspec = 0, has_varflags = 0;
    for (int i = 0; i < nspecs; i++) {
        if (!(specs[i].flags & KF_NOT_KEY)) has_keyspec = 1;
        if (specs[i].flags & KF_VARIABLE_FLAGS) has_varflags = 1;
    }
    native_getkeys_fn *native = native_getkeys(d);
    keyref *keys = malloc(sizeof(keyref) * ((size_t)argc * (size_t)(nspecs + 1) + 2));
    if (!keys) abort();
    int nk = -1;
    if (has_keyspec && !has_varflags) nk = keys_from_specs(d, specs, nspecs, argv, argc, keys);
    if (nk < 0) nk = native ? native(argv, argc, keys) : 0;
    *out = keys;
    return nk;
}

int cmd_call_keys(const cmd_def *d, garg *argv, int argc, cmd_keyacc **out) {
    int nspecs;
    keyspec *specs = cmd_keyspecs(d, &nspecs);
    keyref *keys;
    int nk = call_keys(d, specs, nspecs, argv, argc, &keys);
    free(specs);
    cmd_keyacc *acc = malloc(sizeof(cmd_keyacc) * (size_t)(nk + 1));
    if (!acc) abort();
    for (int i = 0; i < nk; i++) {
        acc[i].pos = keys[i].pos;
        acc[i].access = ((keys[i].flags & KF_ACCESS) ? CMD_KEY_READ : 0) |
                        ((keys[i].flags & (KF_INSERT | KF_DELETE | KF_UPDATE)) ? CMD_KEY_WRITE : 0);
    }
    free(keys);
    *out = acc;
    return nk;
}

static void getkeys(client *c, int with_flags) {
    garg *argv = c->argv + 2;
    int argc = c->argc - 2;
    const cmd_def *d = NULL;
    if (!memchr(argv[0].p, '|', argv[0].n)) {
        d = cmd_lookup(argv[0].p, argv[0].n);
        if (d && d->subs && argc >= 2) d = cmd_lookup_full(argv, argc);
    }
    if (!d) {
        reply_error(c, "ERR Invalid command specified");
        return;
    }
    int nspecs;
    keyspec *specs = cmd_keyspecs(d, &nspecs);
    int has_keyspec = 0;
    for (int i = 0; i < nspecs; i++)
        if (!(specs[i].flags & KF_NOT_KEY)) has_keyspec = 1;
    native_getkeys_fn *native = native_getkeys(d);
    if (!native && !has_keyspec) {
        reply_error(c, "ERR The command has no key arguments");
        free(specs);
        return;
    }
    if ((d->arity > 0 && d->arity != argc) || argc < -d->arity) {
        reply_error(c, "ERR Invalid number of arguments specified for command");
        free(specs);
        return;
    }
    keyref *keys;
    int nk = call_keys(d, specs, nspecs, argv, argc, &keys);
    if (nk == 0) {
        if (d->flags & CMDF_NO_MANDATORY_KEYS) reply_array(c, 0);
        else reply_error(c, "ERR Invalid arguments specified for command");
    } else {
        reply_array(c, nk);
        for (int i = 0; i < nk; i++) {
            const garg *k = &argv[keys[i].pos];
            if (!with_flags) {
                reply_bulk(c, k->p, k->n);
                continue;
            }
            reply_array(c, 2);
            reply_bulk(c, k->p, k->n);
            reply_set(c, __builtin_popcount(keys[i].flags));
            for (size_t b = 0; b < NKEYFLAGS; b++)
                if (keys[i].flags & (1u << b)) reply_simple(c, keyflag_names[b]);
        }
    }
    free(keys);
    free(specs);
}

void commandGetkeysCommand(client *c) { getkeys(c, 0); }
void commandGetkeysandflagsCommand(client *c) { getkeys(c, 1); }

void commandHelpCommand(client *c) {
    static const char *const help[] = {
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        NULL,
    };
    admin_reply_help(c, "COMMAND", help);
}
