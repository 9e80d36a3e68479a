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
 *  - GETKEYS answers from the dispatcher's key extraction (cmd/keyspec.c). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmdmeta.h"
#include "cmd/keyspec.h"
#include "cmd/server/admin_family.h"
#include "session/reply.h"
#include "util/strutil.h"

/* Reply the values [p, end) one by one, transcoded for the client. */
static void reply_r3_range(client *c, const char *p, const char *end) {
    while (p < end) {
        const char *q = cmdmeta_skip(p);
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
    p = cmdmeta_hdr(p, &t, &n);
    size_t h = reply_defer(c);
    long kept = 0;
    for (long long i = 0; i < n; i++) {
        const char *name;
        size_t nlen;
        const char *start = p;
        if (is_map) {
            p = cmdmeta_skip(cmdmeta_str(p, &name, &nlen));
        } else {
            char et;
            long long en;
            cmdmeta_str(cmdmeta_hdr(p, &et, &en), &name, &nlen);
            p = cmdmeta_skip(p);
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
    const char *p = cmdmeta_hdr(d->info, &t, &n);
    reply_array(c, (long)n);
    for (long long i = 0; i < n - 1; i++) {
        const char *q = cmdmeta_skip(p);
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
    const char *p = cmdmeta_hdr(d->docs, &t, &n);
    reply_map(c, (long)n);
    for (long long i = 0; i < n; i++) {
        const char *key;
        size_t klen;
        const char *start = p;
        p = cmdmeta_str(p, &key, &klen);
        reply_r3_range(c, start, p);
        if (cmdmeta_eq(key, klen, "subcommands")) {
            p = reply_filtered_subs(c, d, p, 1);
        } else {
            const char *q = cmdmeta_skip(p);
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
    keyspec *specs = keyspec_parse(d, &nspecs);
    int has_keyspec = 0;
    for (int i = 0; i < nspecs; i++)
        if (!(specs[i].flags & KF_NOT_KEY)) has_keyspec = 1;
    keyspec_native_fn *native = keyspec_native(d);
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
    int nk = keyspec_call_keys(d, specs, nspecs, argv, argc, &keys);
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
