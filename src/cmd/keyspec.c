/* keyspec.c -- which arguments of a call are keys, and how each is used.
 *
 * The dispatcher locks a command's key shards, ACL checks its keys and
 * COMMAND GETKEYS lists them: all three ask here. The answer comes from the
 * key specs of the command's Redis 7.0 metadata (command_meta.inc), walked
 * exactly as Redis's getKeysUsingKeySpecs does (begin search by index or
 * keyword, then find keys by range or by a key count); the few commands
 * whose specs are not enough (variable flags, keys "anywhere": SET with
 * GET, BITFIELD, SORT, SORT_RO, MIGRATE) have a native extractor, as they
 * have a getkeys_proc in Redis. */
#include "cmd/keyspec.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmdmeta.h"
#include "util/strutil.h"

const char *const keyflag_names[NKEYFLAGS] = {"RO",     "RW",     "OW",      "RM",         "access",        "update",
                                              "insert", "delete", "not_key", "incomplete", "variable_flags"};

/* Fill the fields named in a spec map ("index", "keyword", ...). */
static const char *parse_spec_fields(const char *p, keyspec *ks) {
    char t;
    long long n;
    p = cmdmeta_hdr(p, &t, &n);
    for (long long i = 0; i < n; i++) {
        const char *k;
        size_t kl;
        p = cmdmeta_str(p, &k, &kl);
        char vt;
        long long v;
        const char *q = cmdmeta_hdr(p, &vt, &v);
        if (vt == ':') {
            if (cmdmeta_eq(k, kl, "index")) ks->index = v;
            else if (cmdmeta_eq(k, kl, "startfrom")) ks->startfrom = v;
            else if (cmdmeta_eq(k, kl, "lastkey")) ks->lastkey = v;
            else if (cmdmeta_eq(k, kl, "keystep")) ks->keystep = v;
            else if (cmdmeta_eq(k, kl, "limit")) ks->limit = v;
            else if (cmdmeta_eq(k, kl, "keynumidx")) ks->keynumidx = v;
            else if (cmdmeta_eq(k, kl, "firstkey")) ks->firstkey = v;
            p = q;
        } else if (cmdmeta_eq(k, kl, "keyword")) {
            p = cmdmeta_str(p, &ks->kw, &ks->kwlen);
        } else {
            p = cmdmeta_skip(p);
        }
    }
    return p;
}

/* {type: ..., spec: {...}} of begin_search / find_keys. Returns the type. */
static const char *parse_search(const char *p, keyspec *ks, int *type, int is_fk) {
    char t;
    long long n;
    p = cmdmeta_hdr(p, &t, &n);
    *type = 0;
    for (long long i = 0; i < n; i++) {
        const char *k, *v;
        size_t kl, vl;
        p = cmdmeta_str(p, &k, &kl);
        if (cmdmeta_eq(k, kl, "type")) {
            p = cmdmeta_str(p, &v, &vl);
            if (!is_fk) *type = cmdmeta_eq(v, vl, "index") ? BS_INDEX : cmdmeta_eq(v, vl, "keyword") ? BS_KEYWORD : BS_UNKNOWN;
            else *type = cmdmeta_eq(v, vl, "range") ? FK_RANGE : cmdmeta_eq(v, vl, "keynum") ? FK_KEYNUM : FK_UNKNOWN;
        } else if (cmdmeta_eq(k, kl, "spec")) {
            p = parse_spec_fields(p, ks);
        } else {
            p = cmdmeta_skip(p);
        }
    }
    return p;
}

/* The key specs of d's INFO entry; *n set to their count. Caller frees. */
keyspec *keyspec_parse(const cmd_def *d, int *nspecs) {
    char t;
    long long n;
    const char *p = cmdmeta_hdr(d->info, &t, &n);
    for (int i = 0; i < 8; i++) p = cmdmeta_skip(p);
    p = cmdmeta_hdr(p, &t, &n);
    keyspec *ks = calloc((size_t)n + 1, sizeof(*ks));
    if (!ks) abort();
    for (long long i = 0; i < n; i++) {
        long long m;
        p = cmdmeta_hdr(p, &t, &m);
        for (long long j = 0; j < m; j++) {
            const char *k;
            size_t kl;
            p = cmdmeta_str(p, &k, &kl);
            if (cmdmeta_eq(k, kl, "flags")) {
                long long nf;
                p = cmdmeta_hdr(p, &t, &nf);
                for (long long f = 0; f < nf; f++) {
                    const char *fs;
                    size_t fl;
                    p = cmdmeta_str(p, &fs, &fl);
                    for (size_t b = 0; b < NKEYFLAGS; b++)
                        if (cmdmeta_eq(fs, fl, keyflag_names[b])) ks[i].flags |= 1u << b;
                }
            } else if (cmdmeta_eq(k, kl, "begin_search")) {
                p = parse_search(p, &ks[i], &ks[i].bs, 0);
            } else if (cmdmeta_eq(k, kl, "find_keys")) {
                p = parse_search(p, &ks[i], &ks[i].fk, 1);
            } else {
                p = cmdmeta_skip(p);
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

keyspec_native_fn *keyspec_native(const cmd_def *d) {
    static const struct {
        const char *name;
        keyspec_native_fn *fn;
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
int keyspec_call_keys(const cmd_def *d, const keyspec *specs, int nspecs, garg *argv, int argc, keyref **out) {
    int has_keyspec = 0, has_varflags = 0;
    for (int i = 0; i < nspecs; i++) {
        if (!(specs[i].flags & KF_NOT_KEY)) has_keyspec = 1;
        if (specs[i].flags & KF_VARIABLE_FLAGS) has_varflags = 1;
    }
    keyspec_native_fn *native = keyspec_native(d);
    keyref *keys = malloc(sizeof(keyref) * ((size_t)argc * (size_t)(nspecs + 1) + 2));
    if (!keys) abort();
    int nk = -1;
    if (has_keyspec && !has_varflags) nk = keys_from_specs(d, specs, nspecs, argv, argc, keys);
    if (nk < 0) nk = native ? native(argv, argc, keys) : 0;
    *out = keys;
    return nk;
}

/* A command's parsed specs, kept on its cmd_def: parsing the metadata text
 * for every call would cost more than the command (cluster redirections
 * extract every command's keys). Two threads may both parse on first use;
 * one publishes, the other frees its copy. */
typedef struct kscache {
    int n;
    keyspec ks[];
} kscache;

static const kscache *specs_of(const cmd_def *d) {
    kscache *c = __atomic_load_n((kscache **)&d->kspecs, __ATOMIC_ACQUIRE);
    if (c) return c;
    int n;
    keyspec *ks = keyspec_parse(d, &n);
    c = malloc(sizeof(*c) + sizeof(keyspec) * (size_t)(n + 1));
    if (!c) abort();
    c->n = n;
    memcpy(c->ks, ks, sizeof(keyspec) * (size_t)(n + 1));
    free(ks);
    void *expected = NULL;
    if (!__atomic_compare_exchange_n((void **)&((cmd_def *)d)->kspecs, &expected, c, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(c);
        c = expected;
    }
    return c;
}

int cmd_call_keys(const cmd_def *d, garg *argv, int argc, cmd_keyacc **out) {
    const kscache *sc = specs_of(d);
    keyref *keys;
    int nk = keyspec_call_keys(d, sc->ks, sc->n, argv, argc, &keys);
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
