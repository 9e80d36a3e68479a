/* t_set.c -- the set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER,
 * SCARD, SPOP, SRANDMEMBER, SMOVE, SINTER, SINTERCARD, SINTERSTORE, SUNION,
 * SUNIONSTORE, SDIFF, SDIFFSTORE and SSCAN, with Redis 7.0's replies and
 * errors.
 *
 * The structure lives in ds/set (a sorted int64 array reported as "intset",
 * a packed block and an arena + swiss index, both reported as "hashtable");
 * this file reads set-max-intset-entries, passes it down on every write, and
 * mirrors the form into gobj.enc after each write so OBJECT ENCODING answers
 * like Redis. Every command runs under the shard locks of its keys (the
 * dispatcher takes them; SINTERCARD, whose keys are counted by an argument,
 * runs under the keyspace write lock) and follows one recipe: look up (or
 * create) the key, check the type, do the work, reply, signal the change.
 * A set never stays empty: the write that removes its last member deletes
 * the key.
 *
 * Where Redis's algorithm is observable, it is followed: *STORE results are
 * built from an empty intset by adds (so they are intsets when they fit),
 * and SDIFF chooses between "test every member of the first set" and "copy
 * the first set, remove the others" with Redis's cost estimate, because the
 * second way can pass set-max-intset-entries on the way and leave a
 * hashtable. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "cmd/propagate.h"
#include "persist/wstream.h"
#include "cmd/families.h"
#include "cmd/types/scan.h"
#include "cmd/types/tcommon.h"
#include "session/reply.h"
#include "util/rand.h"
#include "ds/set.h"
#include "util/strutil.h"
#include "base/config.h"

/* ---- object glue ---- */

TC_VALUE_TYPE_RESIZING(set, OBJ_SET, set_free, set_dup, set_mem_usage, set_card, set_rehash_step)

static set_limits set_cfg_limits(void) { return (set_limits){.max_intset = tc_cfg_size(cfg.set_max_intset_entries)}; }

static inline gset *obj_set(dbentry *e) { return e->val.u.p; }

static inline int set_encoding(const gset *s) { return set_is_intset(s) ? ENC_INTSET : ENC_HASHTABLE; }

static inline void sync_encoding(dbentry *e) { e->val.enc = (uint8_t)set_encoding(obj_set(e)); }

/* A new, empty set key (an intset until a member says otherwise), filled by
 * the caller before the command ends; NULL after replying OOM. */
static dbentry *create_set(client *c, gdb *db, const garg *key) {
    return tc_add_key(c, db, key, OBJ_SET, ENC_INTSET, set_new());
}

static void reply_add_error(client *c, int rc) { tc_reply_write_error(c, rc == SET_EFULL, "set"); }

static void reply_elem(void *arg, const set_elem *e) { reply_bulk(arg, e->p, e->n); }

/* Every member of s as a set reply ('~' in RESP3). */
static void reply_members(client *c, gset *s) {
    set_iter it;
    set_elem e;
    reply_set(c, (long)set_card(s));
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) reply_bulk(c, e.p, e.n);
    set_iter_done(&it);
}

/* ---- SADD / SREM ---- */

/* Add members[0..n) to the set of e (keeping e->val in step) until one is
 * refused; *added counts the new ones. The refusal is replied (and a key
 * left empty deleted) and its code returned; else 0. */
static int add_members(client *c, gdb *db, dbentry *e, const garg *members, int n, long long *added) {
    set_limits lim = set_cfg_limits();
    int rc = 0;
    for (int i = 0; i < n && rc >= 0; i++) {
        tc_prefetch_elems(&e->val, members, n, i, 1);
        gset *s = obj_set(e);
        rc = set_add(&s, members[i].p, members[i].n, &lim);
        e->val.u.p = s;
        if (rc > 0) *added += rc;
    }
    sync_encoding(e);
    if (rc >= 0) return 0;
    tc_drop_if_empty(db, e);
    reply_add_error(c, rc);
    return rc;
}

static void saddCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_SET, &wrong);
    if (wrong || (!e && !(e = create_set(c, db, key)))) return;
    long long added = 0;
    if (add_members(c, db, e, &c->argv[2], c->argc - 2, &added) == 0) reply_int(c, added);
    if (added) tc_changed(c, db, key, OBJ_SET, "sadd");
}

/* SREM's step (tc_remove_args) and SMOVE's removal from the source. */
static int set_remove_member(dbentry *e, const garg *m) {
    gset *s = obj_set(e);
    int d = set_remove(&s, m->p, m->n);
    e->val.u.p = s;
    return d;
}

static void sremCommand(client *c) { tc_remove_args(c, OBJ_SET, "srem", set_remove_member); }

/* ---- reads ---- */

static void smembersCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_SET, &wrong);
    if (wrong) return;
    if (!e) reply_set(c, 0);
    else reply_members(c, obj_set(e));
}

static void sismemberCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_SET, &wrong);
    if (wrong) return;
    reply_int(c, e && set_contains(obj_set(e), c->argv[2].p, c->argv[2].n));
}

static void smismemberCommand(client *c) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_SET, &wrong);
    if (wrong) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        if (e) tc_prefetch_elems(&e->val, c->argv, c->argc, i, 1);
        reply_int(c, e && set_contains(obj_set(e), c->argv[i].p, c->argv[i].n));
    }
}

static void scardCommand(client *c) { tc_reply_len(c, OBJ_SET); }

/* ---- SPOP / SRANDMEMBER ---- */

/* SPOP and SRANDMEMBER key [count]: the count form runs with_count, more
 * arguments are a syntax error. 1 when the command was dealt with here. */
static int count_form(client *c, void (*with_count)(client *c)) {
    if (c->argc == 3) with_count(c);
    else if (c->argc > 3) reply_err_syntax(c);
    return c->argc >= 3;
}

/* Popped members are replied and, for the write stream, sent as SREM key
 * m1 .. mk in batches of SPOP_PROP_BATCH, as Redis propagates SPOP. The
 * batch exists only while somebody listens to the stream. */
#define SPOP_PROP_BATCH 1024

typedef struct spop_batch {
    const garg *key;
    int nb;
    const char *bp[SPOP_PROP_BATCH + 2];
    size_t bn[SPOP_PROP_BATCH + 2];
    char *own[SPOP_PROP_BATCH];
} spop_batch;

typedef struct pop_reply {
    client *c;
    long n;
    spop_batch *b;            /* NULL: the stream is idle */
} pop_reply;

static void pop_flush(pop_reply *pr) {
    spop_batch *b = pr->b;
    if (!b || !b->nb) return;
    b->bp[0] = "SREM";
    b->bn[0] = 4;
    b->bp[1] = b->key->p;
    b->bn[1] = b->key->n;
    prop_also(pr->c->db, b->nb + 2, b->bp, b->bn);
    for (int i = 0; i < b->nb; i++) free(b->own[i]);
    b->nb = 0;
}

static void pop_reply_init(pop_reply *pr, client *c, const garg *key) {
    pr->c = c;
    pr->n = 0;
    pr->b = NULL;
    if (!wstream_active()) return;
    if (!(pr->b = malloc(sizeof(*pr->b)))) abort();
    pr->b->key = key;
    pr->b->nb = 0;
}

/* The last batch out, the batch freed. */
static void pop_reply_done(pop_reply *pr) {
    pop_flush(pr);
    free(pr->b);
}

static void reply_popped(void *arg, const set_elem *e) {
    pop_reply *pr = arg;
    reply_bulk(pr->c, e->p, e->n);
    pr->n++;
    spop_batch *b = pr->b;
    if (!b) return;
    /* The element's bytes may be a formatted integer of the callback's:
     * keep a copy until the batch is out. */
    char *m = malloc(e->n + 1);
    if (!m) abort();
    memcpy(m, e->p, e->n);
    b->own[b->nb] = m;
    b->bp[b->nb + 2] = m;
    b->bn[b->nb + 2] = e->n;
    if (++b->nb == SPOP_PROP_BATCH) pop_flush(pr);
}

static void spopWithCount(client *c) {
    long long count;
    if (arg_ll_range(c, &c->argv[2], &count, 0, LLONG_MAX, "ERR value is out of range, must be positive") != 0) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_SET, &wrong);
    if (wrong) return;
    if (!e || count == 0) {
        reply_set(c, 0);
        return;
    }
    gset *s = obj_set(e);
    size_t size = set_card(s);
    cmd_notify(c, NOTIFY_SET, "spop", db, key->p, key->n);
    if ((unsigned long long)count >= size) {
        /* The whole set: reply it and delete the key. */
        reply_members(c, s);
        tc_delete_entry(c, db, e, key);
        cmd_key_modified(c, db, key->p, key->n);
        prop_none(c);
        prop_key(c->db, "DEL", key->p, key->n); /* DEL whatever lazyfree says, as Redis 7.0 */
        return;
    }
    pop_reply pr;
    pop_reply_init(&pr, c, key);
    reply_set(c, (long)count);
    set_pop_many(&s, (size_t)count, rand_next, reply_popped, &pr);
    pop_reply_done(&pr);
    e->val.u.p = s;
    sync_encoding(e);
    cmd_key_modified(c, db, key->p, key->n);
    prop_none(c);
}

static void spopCommand(client *c) {
    if (count_form(c, spopWithCount)) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_SET, reply_null);
    if (!e) return;
    gset *s = obj_set(e);
    pop_reply pr;
    pop_reply_init(&pr, c, key);
    set_pop(&s, rand_next, reply_popped, &pr);
    pop_reply_done(&pr); /* SREM key member */
    prop_none(c);
    e->val.u.p = s;
    cmd_notify(c, NOTIFY_SET, "spop", db, key->p, key->n);
    tc_delete_if_empty(c, db, e, key);
    cmd_key_modified(c, db, key->p, key->n);
}

static void srandmemberWithCount(client *c) {
    long long l;
    unsigned long long count;
    int uniq;
    if (tc_parse_rand_count(c, &c->argv[2], &l) != 0 || tc_rand_count(c, l, &count, &uniq) != 0) return;
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_SET, &wrong);
    if (wrong) return;
    if (!e || count == 0) {
        reply_array(c, 0);
        return;
    }
    gset *s = obj_set(e);
    size_t size = set_card(s);
    if (uniq && count > size) count = size;
    reply_array(c, (long)count);
    if (uniq) set_random_unique(s, (size_t)count, rand_next, reply_elem, c);
    else set_random_members(s, (size_t)count, rand_next, reply_elem, c);
}

static void srandmemberCommand(client *c) {
    if (count_form(c, srandmemberWithCount)) return;
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_SET, &wrong);
    if (wrong) return;
    set_elem el;
    if (e && set_random(obj_set(e), rand_next, &el)) reply_bulk(c, el.p, el.n);
    else reply_null(c);
}

/* ---- SMOVE ---- */

static void smoveCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *src = &c->argv[1], *dst = &c->argv[2], *m = &c->argv[3];
    int same = src->n == dst->n && memcmp(src->p, dst->p, src->n) == 0;
    dbentry *se = db_lookup(db, src->p, src->n);
    dbentry *de = same ? se : db_lookup(db, dst->p, dst->n); /* one lookup: see lookup_sets */
    if (!se) {
        reply_int(c, 0);
        return;
    }
    if (se->val.type != OBJ_SET || (de && de->val.type != OBJ_SET)) {
        reply_err_wrongtype(c);
        return;
    }
    if (se == de) {
        reply_int(c, set_contains(obj_set(se), m->p, m->n));
        return;
    }
    gset *ss = obj_set(se);
    if (!set_contains(ss, m->p, m->n)) {
        reply_int(c, 0);
        return;
    }
    /* Add to the destination first: it is the step that can run out of
     * memory, and then nothing has changed yet. */
    /* Add to the destination first: it is the step that can run out of
     * memory, and then nothing has changed yet. */
    long long added = 0;
    if ((!de && !(de = create_set(c, db, dst))) || add_members(c, db, de, m, 1, &added) != 0) return;
    set_remove_member(se, m);
    cmd_notify(c, NOTIFY_SET, "srem", db, src->p, src->n);
    tc_delete_if_empty(c, db, se, src);
    cmd_key_modified(c, db, src->p, src->n);
    if (added) tc_changed(c, db, dst, OBJ_SET, "sadd");
    reply_int(c, 1);
}

/* ---- multi-key operations ---- */

/* The sets named by keys (NULL for missing keys); NULL with WRONGTYPE
 * replied when one of them holds another type (or with OOM replied). */
static gset **lookup_sets(client *c, gdb *db, const garg *keys, int n, int *missing) {
    gset **sets = malloc((size_t)n * sizeof(*sets));
    if (!sets) {
        tc_reply_oom(c);
        return NULL;
    }
    *missing = 0;
    for (int j = 0; j < n; j++) {
        /* A key named twice is looked up once: a second lookup could
         * expire it (the clock moves on) and free the set already taken. */
        int dup = -1;
        for (int i = 0; i < j && dup < 0; i++)
            if (keys[i].n == keys[j].n && memcmp(keys[i].p, keys[j].p, keys[j].n) == 0) dup = i;
        if (dup >= 0) {
            sets[j] = sets[dup];
            if (!sets[j]) (*missing)++;
            db_count_read_key(db, keys[j].p, keys[j].n, sets[j] != NULL); /* Redis looks it up again */
            continue;
        }
        /* Sources are read, also by the STORE forms: hits and misses. */
        dbentry *e = db_lookup_read(db, keys[j].p, keys[j].n);
        if (!e) {
            sets[j] = NULL;
            (*missing)++;
            continue;
        }
        if (e->val.type != OBJ_SET) {
            free(sets);
            reply_err_wrongtype(c);
            return NULL;
        }
        sets[j] = obj_set(e);
    }
    return sets;
}

/* Store res (owned) as the set at dst, or delete dst when res is empty (or
 * NULL); replies the cardinality. */
static void store_result(client *c, gdb *db, const garg *dst, gset *res, const char *event) {
    tc_store(c, db, dst, OBJ_SET, res ? set_encoding(res) : ENC_INTSET, res, res ? set_card(res) : 0, event);
}

/* By cardinality; NULL (a missing key) counts as empty. */
static int cmp_card_asc(const void *a, const void *b) {
    const gset *sa = *(gset *const *)a, *sb = *(gset *const *)b;
    size_t x = sa ? set_card(sa) : 0, y = sb ? set_card(sb) : 0;
    return x < y ? -1 : x > y;
}

static int cmp_card_desc(const void *a, const void *b) { return cmp_card_asc(b, a); }

enum { INTER_MEMBERS = 0, INTER_CARD = 1, INTER_STORE = 2 };

/* SINTER, SINTERCARD and SINTERSTORE: walk the smallest set and keep the
 * members every other set has. limit (SINTERCARD) 0 means none. */
static void sinterGeneric(client *c, const garg *keys, int n, const garg *dst, int mode, unsigned long long limit) {
    gdb *db = cmd_db(c);
    int missing;
    gset **sets = lookup_sets(c, db, keys, n, &missing);
    if (!sets) return;
    if (missing) {
        /* An intersection with an empty set is empty. */
        free(sets);
        if (mode == INTER_STORE) store_result(c, db, dst, NULL, "sinterstore");
        else if (mode == INTER_CARD) reply_int(c, 0);
        else reply_set(c, 0);
        return;
    }
    qsort(sets, (size_t)n, sizeof(*sets), cmp_card_asc);
    gset *res = mode == INTER_STORE ? set_new() : NULL;
    if (mode == INTER_STORE && !res) {
        free(sets);
        tc_reply_oom(c);
        return;
    }
    set_limits lim = set_cfg_limits();
    size_t handle = mode == INTER_MEMBERS ? reply_defer(c) : 0;
    unsigned long long card = 0;
    int rc = 0;
    set_iter it;
    set_elem e;
    set_iter_init(&it, sets[0]);
    while (rc >= 0 && set_iter_next(&it, &e)) {
        int j;
        for (j = 1; j < n; j++)
            if (sets[j] != sets[0] && !set_contains_elem(sets[j], &e)) break;
        if (j < n) continue;
        card++;
        if (mode == INTER_MEMBERS) reply_bulk(c, e.p, e.n);
        else if (mode == INTER_STORE) rc = set_add_elem(&res, &e, &lim);
        else if (limit && card >= limit) break;
    }
    set_iter_done(&it);
    free(sets);
    if (mode == INTER_MEMBERS) {
        reply_defer_set(c, handle, (long)card);
    } else if (mode == INTER_CARD) {
        reply_int(c, (long long)card);
    } else if (rc < 0) {
        set_free(res);
        reply_add_error(c, rc);
    } else {
        store_result(c, db, dst, res, "sinterstore");
    }
}

static void sinterCommand(client *c) { sinterGeneric(c, c->argv + 1, c->argc - 1, NULL, INTER_MEMBERS, 0); }

static void sinterstoreCommand(client *c) {
    sinterGeneric(c, c->argv + 2, c->argc - 2, &c->argv[1], INTER_STORE, 0);
}

static void sintercardCommand(client *c) {
    long long numkeys, limit = 0;
    if (arg_ll_range(c, &c->argv[1], &numkeys, 1, LLONG_MAX, "ERR numkeys should be greater than 0") != 0) return;
    if (numkeys > c->argc - 2) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        int moreargs = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "limit") && moreargs) {
            j++;
            if (arg_ll_range(c, &c->argv[j], &limit, 0, LLONG_MAX, "ERR LIMIT can't be negative") != 0) return;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    sinterGeneric(c, c->argv + 2, (int)numkeys, NULL, INTER_CARD, (unsigned long long)limit);
}

enum { OP_UNION = 0, OP_DIFF = 1 };

/* Add every member of src to *res; 0 or an add error. */
static int add_all(gset **res, gset *src, const set_limits *lim) {
    set_iter it;
    set_elem e;
    int rc = 0;
    set_iter_init(&it, src);
    while (rc >= 0 && set_iter_next(&it, &e)) rc = set_add_elem(res, &e, lim);
    set_iter_done(&it);
    return rc < 0 ? rc : 0;
}

/* SDIFF into *res. Redis's cost model picks the algorithm: walking the
 * first set costs |first| per other set (halved: it stops at the first
 * set that has the member); copying it and removing the others costs the
 * sum of all sizes. */
static int sdiff_into(gset **res, gset **sets, int n, const set_limits *lim) {
    unsigned long long walk = 0, copy = 0;
    for (int j = 0; j < n; j++) {
        if (!sets[j]) continue;
        walk += set_card(sets[0]);
        copy += set_card(sets[j]);
    }
    walk /= 2;
    if (walk <= copy) {
        /* Test each member of the first set against the others, larger
         * sets first (more likely to drop the member early). */
        if (n > 2) qsort(sets + 1, (size_t)n - 1, sizeof(*sets), cmp_card_desc);
        set_iter it;
        set_elem e;
        int rc = 0;
        set_iter_init(&it, sets[0]);
        while (rc >= 0 && set_iter_next(&it, &e)) {
            int j;
            for (j = 1; j < n; j++) {
                if (!sets[j]) continue;
                if (sets[j] == sets[0] || set_contains_elem(sets[j], &e)) break;
            }
            if (j == n) rc = set_add_elem(res, &e, lim);
        }
        set_iter_done(&it);
        return rc < 0 ? rc : 0;
    }
    int rc = add_all(res, sets[0], lim);
    if (rc < 0) return rc;
    for (int j = 1; j < n && set_card(*res) > 0; j++) {
        if (!sets[j]) continue;
        set_iter it;
        set_elem e;
        set_iter_init(&it, sets[j]);
        while (set_iter_next(&it, &e)) set_remove_elem(res, &e);
        set_iter_done(&it);
    }
    return 0;
}

static void sunionDiffGeneric(client *c, const garg *keys, int n, const garg *dst, int op) {
    gdb *db = cmd_db(c);
    int missing;
    gset **sets = lookup_sets(c, db, keys, n, &missing);
    if (!sets) return;
    gset *res = set_new();
    if (!res) {
        free(sets);
        tc_reply_oom(c);
        return;
    }
    set_limits lim = set_cfg_limits();
    int rc = 0;
    if (op == OP_UNION) {
        for (int j = 0; j < n && rc == 0; j++)
            if (sets[j]) rc = add_all(&res, sets[j], &lim);
    } else if (sets[0]) {
        rc = sdiff_into(&res, sets, n, &lim);
    }
    free(sets);
    if (rc < 0) {
        set_free(res);
        reply_add_error(c, rc);
        return;
    }
    if (dst) {
        store_result(c, db, dst, res, op == OP_UNION ? "sunionstore" : "sdiffstore");
        return;
    }
    reply_members(c, res);
    set_free(res);
}

static void sunionCommand(client *c) { sunionDiffGeneric(c, c->argv + 1, c->argc - 1, NULL, OP_UNION); }
static void sdiffCommand(client *c) { sunionDiffGeneric(c, c->argv + 1, c->argc - 1, NULL, OP_DIFF); }

static void sunionstoreCommand(client *c) {
    sunionDiffGeneric(c, c->argv + 2, c->argc - 2, &c->argv[1], OP_UNION);
}

static void sdiffstoreCommand(client *c) { sunionDiffGeneric(c, c->argv + 2, c->argc - 2, &c->argv[1], OP_DIFF); }

/* ---- SSCAN ---- */

/* Intset members are formatted into the set_elem: scan_push copies them. */
static void scan_member(void *arg, const set_elem *e) { scan_push(arg, e->p, e->n); }

static uint64_t set_scan_step(void *s, uint64_t cursor, scan_acc *a) { return set_scan(s, cursor, scan_member, a); }

static const scan_kind set_scan_kind = {OBJ_SET, 1, set_scan_step};

static void sscanCommand(client *c) { scan_command(c, &set_scan_kind); }

const cmd_handler set_handlers[] = {
    {"sadd", saddCommand, CMD_LOCK_KEYS},
    {"srem", sremCommand, CMD_LOCK_KEYS},
    {"smembers", smembersCommand, CMD_LOCK_KEYS},
    {"sismember", sismemberCommand, CMD_LOCK_KEYS},
    {"smismember", smismemberCommand, CMD_LOCK_KEYS},
    {"scard", scardCommand, CMD_LOCK_KEYS},
    {"spop", spopCommand, CMD_LOCK_KEYS},
    {"srandmember", srandmemberCommand, CMD_LOCK_KEYS},
    {"smove", smoveCommand, CMD_LOCK_KEYS},
    {"sinter", sinterCommand, CMD_LOCK_KEYS},
    {"sintercard", sintercardCommand, CMD_LOCK_KEYS},
    {"sinterstore", sinterstoreCommand, CMD_LOCK_KEYS},
    {"sunion", sunionCommand, CMD_LOCK_KEYS},
    {"sunionstore", sunionstoreCommand, CMD_LOCK_KEYS},
    {"sdiff", sdiffCommand, CMD_LOCK_KEYS},
    {"sdiffstore", sdiffstoreCommand, CMD_LOCK_KEYS},
    {"sscan", sscanCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
