/* t_list.c -- the list commands: LPUSH/RPUSH(X), LPOP/RPOP, LLEN, LINDEX,
 * LSET, LRANGE, LTRIM, LINSERT, LREM, LPOS, LMOVE/RPOPLPUSH, LMPOP and the
 * blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, with Redis 7.0's
 * replies and errors.
 *
 * The elements live in ds/list (a deque of packed chunks); this file reads
 * list-max-listpack-size on every write and passes it down, so CONFIG SET
 * applies to the next write. Redis 7.0 keeps every list in a quicklist, so
 * OBJECT ENCODING always answers "quicklist" (listpack-encoded lists only
 * arrived in 7.2). Every command runs under its keys' shard locks (LMPOP
 * and BLMPOP, with movable keys, under the keyspace write lock) and follows
 * one recipe: parse, look up (or create) the key, check the type, do the
 * work, reply, signal the change. A list never stays empty: the command
 * that removes its last element deletes the key.
 *
 * Blocking. A blocking pop that finds nothing parks the client with
 * block_on_keys() (cmd/blocking.c) and replies nothing. Creating a list key
 * (the only way an empty key becomes servable, as in Redis's dbAdd) calls
 * block_signal_key(); after the creating command (or EXEC) completes, the
 * first waiter of the key re-runs its command from the top on its own
 * worker and either replies or stays parked in place. During such a re-run
 * a key of another type is skipped rather than answered with WRONGTYPE,
 * because Redis 7.0 serves blocked clients only from keys of their type.
 * Inside MULTI a blocking command that cannot serve answers at once with
 * the timeout reply. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/blocking.h"
#include "cmd/command.h"
#include "cmd/propagate.h"
#include "cmd/families.h"
#include "cmd/types/tcommon.h"
#include "session/reply.h"
#include "ds/list.h"
#include "util/strutil.h"
#include "base/config.h"

/* ---- object glue ---- */

TC_VALUE_TYPE(list, OBJ_LIST, list_free, list_dup, list_mem_bytes, list_len)

static inline glist *obj_list(dbentry *e) { return e->val.u.p; }

static list_limit list_cfg_limit(void) {
    list_limit lim;
    list_limit_from_fill(&lim, cfg.list_max_listpack_size);
    return lim;
}

/* A new, empty list key, filled by the caller before the command ends. The
 * key may now serve blocked clients. NULL (OOM replied) on no memory. */
static dbentry *create_list(client *c, gdb *db, const garg *key) {
    dbentry *e = tc_add_key(c, db, key, OBJ_LIST, ENC_QUICKLIST, list_new());
    if (e) block_signal_key(db, key->p, key->n);
    return e;
}

static void reply_push_error(client *c, int rc) {
    if (rc == LIST_ETOOBIG) reply_error(c, "ERR Element too large");
    else tc_reply_oom(c);
}

static void reply_elem(client *c, const list_elem *el) {
    if (el->isint) reply_bulk_ll(c, el->v);
    else reply_bulk(c, el->p, el->n);
}

/* n elements from index start walking towards dir, as an array. */
static void reply_walk(client *c, glist *l, uint64_t start, uint64_t n, int dir) {
    reply_array(c, (long)n);
    list_iter it;
    list_iter_init(&it, l, start, dir);
    list_elem el;
    for (uint64_t i = 0; i < n && list_iter_next(&it, &el); i++) reply_elem(c, &el);
    list_iter_release(&it);
}

/* After elements left one end: notify, delete the key when it became
 * empty, count the change (Redis's listElementsRemoved). */
static void elements_removed(client *c, gdb *db, dbentry *e, const garg *key, int where) {
    cmd_notify(c, NOTIFY_LIST, where == LIST_HEAD ? "lpop" : "rpop", db, key->p, key->n);
    tc_delete_if_empty(c, db, e, key);
    cmd_key_modified(c, db, key->p, key->n);
}

/* Pop from the non-empty list of e at where and reply: one element when
 * count < 0, else up to count (>= 1) as an array (first popped first); then
 * elements_removed(). */
static void pop_reply(client *c, gdb *db, dbentry *e, const garg *key, int where, long long count) {
    glist *l = obj_list(e);
    if (count < 0) {
        list_elem el;
        list_peek(l, where, &el);
        reply_elem(c, &el);
        list_pop(l, where, 1);
    } else {
        uint64_t len = list_len(l), n = (uint64_t)count > len ? len : (uint64_t)count;
        reply_walk(c, l, where == LIST_HEAD ? 0 : len - 1, n, where == LIST_HEAD ? LIST_TAIL : LIST_HEAD);
        list_pop(l, where, n);
    }
    elements_removed(c, db, e, key, where);
}

/* Parse a position argument: LEFT or RIGHT. */
static int parse_where(client *c, const garg *a, int *where) {
    if (arg_is(a, "left")) *where = LIST_HEAD;
    else if (arg_is(a, "right")) *where = LIST_TAIL;
    else {
        reply_err_syntax(c);
        return -1;
    }
    return 0;
}

/* A non-negative integer, else the given error (Redis's
 * getPositiveLongFromObjectOrReply with a message: one error for both). */
static int parse_nonneg(client *c, const garg *a, long long *v, const char *err) {
    if (!str_to_ll(a->p, a->n, v) || *v < 0) {
        reply_error(c, err);
        return -1;
    }
    return 0;
}

/* A positive integer, else the given error. */
static int parse_positive(client *c, const garg *a, long long *v, const char *err) {
    if (!str_to_ll(a->p, a->n, v) || *v < 1) {
        reply_error(c, err);
        return -1;
    }
    return 0;
}

/* ---- push ---- */

static void push_generic(client *c, int where, int only_existing) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_LIST, &wrong);
    if (wrong) return;
    if (!e) {
        if (only_existing) {
            reply_int(c, 0);
            return;
        }
        if (!(e = create_list(c, db, key))) return;
    }
    list_limit lim = list_cfg_limit();
    glist *l = obj_list(e);
    int pushed = 0, rc = LIST_OK;
    for (int j = 2; j < c->argc; j++) {
        list_val v;
        list_val_init(&v, c->argv[j].p, c->argv[j].n);
        if ((rc = list_push(l, where, &v, &lim)) != LIST_OK) break;
        pushed++;
    }
    if (rc != LIST_OK) {
        reply_push_error(c, rc);
        if (!pushed) {
            tc_drop_if_empty(db, e);
            return;
        }
    } else {
        reply_int(c, (long long)list_len(l));
    }
    tc_changed(c, db, key, OBJ_LIST, where == LIST_HEAD ? "lpush" : "rpush");
}

static void lpushCommand(client *c) { push_generic(c, LIST_HEAD, 0); }
static void rpushCommand(client *c) { push_generic(c, LIST_TAIL, 0); }
static void lpushxCommand(client *c) { push_generic(c, LIST_HEAD, 1); }
static void rpushxCommand(client *c) { push_generic(c, LIST_TAIL, 1); }

/* ---- pop ---- */

static void pop_generic(client *c, int where) {
    int hascount = c->argc == 3;
    long long count = 0;
    if (c->argc > 3) {
        reply_err_arity(c);
        return;
    }
    if (hascount && parse_nonneg(c, &c->argv[2], &count, "ERR value is out of range, must be positive") != 0) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_LIST, hascount ? reply_null_array : reply_null);
    if (!e) return;
    if (hascount && count == 0) {
        reply_array(c, 0);
        return;
    }
    pop_reply(c, db, e, key, where, hascount ? count : -1);
}

static void lpopCommand(client *c) { pop_generic(c, LIST_HEAD); }
static void rpopCommand(client *c) { pop_generic(c, LIST_TAIL); }

/* ---- reads ---- */

static void llenCommand(client *c) { tc_reply_len(c, OBJ_LIST); }

static void lindexCommand(client *c) {
    dbentry *e = tc_lookup_or_reply(c, cmd_db(c), &c->argv[1], OBJ_LIST, reply_null);
    if (!e) return;
    long long index;
    if (arg_ll(c, &c->argv[2], &index) != 0) return;
    list_elem el;
    if (list_index(obj_list(e), index, &el)) reply_elem(c, &el);
    else reply_null(c);
}

static void lrangeCommand(client *c) {
    long long start, end;
    if (arg_ll(c, &c->argv[2], &start) != 0 || arg_ll(c, &c->argv[3], &end) != 0) return;
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], OBJ_LIST, &wrong);
    if (wrong) return;
    uint64_t s, n;
    if (!e || !tc_clamp_range(start, end, list_len(obj_list(e)), &s, &n)) {
        reply_array(c, 0);
        return;
    }
    reply_walk(c, obj_list(e), s, n, LIST_TAIL);
}

static void lposCommand(client *c) {
    long long rank = 1, count = -1, maxlen = 0;
    for (int j = 3; j < c->argc; j++) {
        int more = j + 1 < c->argc;
        if (arg_is(&c->argv[j], "rank") && more) {
            if (arg_ll(c, &c->argv[++j], &rank) != 0) return;
            if (rank == 0) {
                reply_error(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
                               "or use negative to start from the end of the list");
                return;
            }
        } else if (arg_is(&c->argv[j], "count") && more) {
            if (parse_nonneg(c, &c->argv[++j], &count, "ERR COUNT can't be negative") != 0) return;
        } else if (arg_is(&c->argv[j], "maxlen") && more) {
            if (parse_nonneg(c, &c->argv[++j], &maxlen, "ERR MAXLEN can't be negative") != 0) return;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    int dir = LIST_TAIL;
    int unbounded = 0;   /* RANK LLONG_MIN: Redis's negation wraps, every match counts, COUNT never stops */
    if (rank < 0) {
        dir = LIST_HEAD;
        if (rank == LLONG_MIN) {
            rank = 1;
            unbounded = 1;
        } else {
            rank = -rank;
        }
    }
    dbentry *e =
        tc_lookup_or_reply(c, cmd_db(c), &c->argv[1], OBJ_LIST, count != -1 ? tc_reply_empty_array : reply_null);
    if (!e) return;
    glist *l = obj_list(e);
    uint64_t len = list_len(l);
    list_val want;
    list_val_init(&want, c->argv[2].p, c->argv[2].n);
    size_t handle = 0;
    if (count != -1) handle = reply_defer(c);
    list_iter it;
    list_iter_init(&it, l, dir == LIST_TAIL ? 0 : len - 1, dir);
    list_elem el;
    long long index = 0, matches = 0, found = -1, arraylen = 0;
    while ((maxlen == 0 || index < maxlen) && list_iter_next(&it, &el)) {
        if (list_elem_eq(&el, &want)) {
            matches++;
            long long at = dir == LIST_TAIL ? index : (long long)len - index - 1;
            if (matches >= rank) {
                if (count != -1) {
                    arraylen++;
                    reply_int(c, at);
                    if (count && !unbounded && matches - rank + 1 >= count) break;
                } else {
                    found = at;
                    break;
                }
            }
        }
        index++;
    }
    list_iter_release(&it);
    if (count != -1) reply_defer_array(c, handle, arraylen);
    else if (found != -1) reply_int(c, found);
    else reply_null(c);
}

/* ---- middle edits ---- */

static void reply_no_such_key(client *c) { reply_error(c, "ERR no such key"); }

static void lsetCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_LIST, reply_no_such_key);
    if (!e) return;
    long long index;
    if (arg_ll(c, &c->argv[2], &index) != 0) return;
    list_limit lim = list_cfg_limit();
    list_val v;
    list_val_init(&v, c->argv[3].p, c->argv[3].n);
    int rc = list_set(obj_list(e), index, &v, &lim);
    if (rc == LIST_ERANGE) {
        reply_error(c, "ERR index out of range");
        return;
    }
    if (rc != LIST_OK) {
        reply_push_error(c, rc);
        return;
    }
    reply_ok(c);
    tc_changed(c, db, key, OBJ_LIST, "lset");
}

static void linsertCommand(client *c) {
    int after;
    if (arg_is(&c->argv[2], "after")) after = 1;
    else if (arg_is(&c->argv[2], "before")) after = 0;
    else {
        reply_err_syntax(c);
        return;
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_LIST, tc_reply_zero);
    if (!e) return;
    glist *l = obj_list(e);
    list_val pivot;
    list_val_init(&pivot, c->argv[3].p, c->argv[3].n);
    list_iter it;
    list_iter_init(&it, l, 0, LIST_TAIL);
    list_elem el;
    uint64_t idx = 0;
    int found = 0;
    while (list_iter_next(&it, &el)) {
        if (list_elem_eq(&el, &pivot)) {
            found = 1;
            break;
        }
        idx++;
    }
    list_iter_release(&it);
    if (!found) {
        reply_int(c, -1);
        return;
    }
    list_limit lim = list_cfg_limit();
    list_val v;
    list_val_init(&v, c->argv[4].p, c->argv[4].n);
    int rc = list_insert(l, idx + (uint64_t)after, &v, &lim);
    if (rc != LIST_OK) {
        reply_push_error(c, rc);
        return;
    }
    tc_changed(c, db, key, OBJ_LIST, "linsert");
    reply_int(c, (long long)list_len(l));
}

static void lremCommand(client *c) {
    long long count;
    if (arg_ll(c, &c->argv[2], &count) != 0) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_LIST, tc_reply_zero);
    if (!e) return;
    list_limit lim = list_cfg_limit();
    list_val v;
    list_val_init(&v, c->argv[3].p, c->argv[3].n);
    uint64_t removed = list_remove(obj_list(e), &v, count, &lim);
    if (removed) {
        tc_changed(c, db, key, OBJ_LIST, "lrem");
    }
    tc_delete_if_empty(c, db, e, key);
    reply_int(c, (long long)removed);
}

static void ltrimCommand(client *c) {
    long long start, end;
    if (arg_ll(c, &c->argv[2], &start) != 0 || arg_ll(c, &c->argv[3], &end) != 0) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_LIST, reply_ok);
    if (!e) return;
    glist *l = obj_list(e);
    uint64_t len = list_len(l), s, n;
    if (tc_clamp_range(start, end, len, &s, &n)) {
        list_pop(l, LIST_TAIL, len - s - n);
        list_pop(l, LIST_HEAD, s);
    } else {
        list_pop(l, LIST_HEAD, len);
    }
    cmd_notify(c, NOTIFY_LIST, "ltrim", db, key->p, key->n);
    tc_delete_if_empty(c, db, e, key);
    cmd_key_modified(c, db, key->p, key->n);
    reply_ok(c);
}

/* ---- moves ---- */

/* The element at `from` of the non-empty list of se goes to `to` of dst
 * (created when missing) and is replied; Redis's lmoveGenericCommand once
 * the source is known to have elements. */
static void move_element(client *c, gdb *db, dbentry *se, const garg *src, const garg *dst, int from, int to) {
    int wrong;
    dbentry *de = cmd_lookup_typed(c, db, dst, OBJ_LIST, &wrong);
    if (wrong) return;
    glist *sl = obj_list(se);
    list_elem el;
    list_peek(sl, from, &el);
    list_val v;
    list_val_from_elem(&v, &el);
    char *copy = NULL;
    if (de == se && !v.isint) {
        /* Pushing onto the same list may move the bytes we read from. */
        copy = malloc(v.n ? v.n : 1);
        if (!copy) {
            tc_reply_oom(c);
            return;
        }
        memcpy(copy, v.p, v.n);
        v.p = copy;
    }
    int created = 0;
    if (!de) {
        if (!(de = create_list(c, db, dst))) return;
        created = 1;
    }
    list_limit lim = list_cfg_limit();
    int rc = list_push(obj_list(de), to, &v, &lim);
    if (rc != LIST_OK) {
        if (created) tc_drop_if_empty(db, de);
        free(copy);
        reply_push_error(c, rc);
        return;
    }
    tc_changed(c, db, dst, OBJ_LIST, to == LIST_HEAD ? "lpush" : "rpush");
    if (v.isint) reply_bulk_ll(c, v.v);
    else reply_bulk(c, v.p, v.n);
    free(copy);
    list_pop(sl, from, 1);
    elements_removed(c, db, se, src, from);
}

/* LMOVE / RPOPLPUSH: nil when the source is missing. */
static void lmove_generic(client *c, int from, int to) {
    gdb *db = cmd_db(c);
    dbentry *se = tc_lookup_or_reply(c, db, &c->argv[1], OBJ_LIST, reply_null);
    if (!se) return;
    move_element(c, db, se, &c->argv[1], &c->argv[2], from, to);
}

static void lmoveCommand(client *c) {
    int from, to;
    if (parse_where(c, &c->argv[3], &from) != 0 || parse_where(c, &c->argv[4], &to) != 0) return;
    lmove_generic(c, from, to);
}

static void rpoplpushCommand(client *c) { lmove_generic(c, LIST_TAIL, LIST_HEAD); }

/* ---- LMPOP and the blocking pops ---- */

/* Serve a pop from the first of keys[0..n) holding elements: count < 0 is
 * the BLPOP shape ([key, element]), else the LMPOP shape ([key, [elements]]).
 * Returns 1 when served, 0 when no key could serve, -1 after an error. */
static int serve_pop(client *c, const garg *keys, int n, int where, long long count) {
    gdb *db = cmd_db(c);
    for (int j = 0; j < n; j++) {
        const garg *key = &keys[j];
        dbentry *e = db_lookup(db, key->p, key->n);
        if (!e) continue;
        if (e->val.type != OBJ_LIST) {
            if (block_retrying(c)) continue;
            reply_err_wrongtype(c);
            return -1;
        }
        reply_array(c, 2);
        reply_bulk(c, key->p, key->n);
        uint64_t len = list_len(obj_list(e));
        pop_reply(c, db, e, key, where, count);
        /* Propagated as the pop it did: [LR]POP key [n], as Redis does. */
        const char *p[3] = {where == LIST_HEAD ? "LPOP" : "RPOP", key->p, NULL};
        size_t pn[3] = {4, key->n, 0};
        char num[24];
        if (count >= 0) {
            pn[2] = (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)((uint64_t)count < len ? (uint64_t)count : len));
            p[2] = num;
        }
        prop_rewrite(c, count >= 0 ? 3 : 2, p, pn);
        return 1;
    }
    return 0;
}

static void bpop_generic(client *c, int where) {
    int64_t deadline;
    if (block_parse_timeout(c, &c->argv[c->argc - 1], &deadline) != 0) return;
    const garg *keys = &c->argv[1];
    int n = c->argc - 2;
    if (serve_pop(c, keys, n, where, -1) != 0) return;
    if (!block_allowed(c)) {
        reply_null_array(c);
        return;
    }
    block_on_keys(c, keys, n, deadline);
}

static void blpopCommand(client *c) { bpop_generic(c, LIST_HEAD); }
static void brpopCommand(client *c) { bpop_generic(c, LIST_TAIL); }

static void blmove_generic(client *c, int from, int to, const garg *timeout) {
    int64_t deadline;
    if (block_parse_timeout(c, timeout, &deadline) != 0) return;
    gdb *db = cmd_db(c);
    dbentry *se = db_lookup(db, c->argv[1].p, c->argv[1].n);
    if (se && se->val.type != OBJ_LIST) {
        if (!block_retrying(c)) {
            reply_err_wrongtype(c);
            return;
        }
        se = NULL;   /* keep waiting for a list */
    }
    if (se) {
        move_element(c, db, se, &c->argv[1], &c->argv[2], from, to);
        /* Propagated without the blocking, as Redis: RPOPLPUSH src dst;
         * LMOVE with the directions as given, or (served after blocking)
         * as Redis's shared "left" and "right". */
        int retried = block_retrying(c), brpoplpush = c->argc == 4;
        const char *p[5] = {brpoplpush ? "RPOPLPUSH" : "LMOVE", c->argv[1].p, c->argv[2].p,
                            retried ? (from == LIST_HEAD ? "left" : "right") : c->argv[3].p,
                            retried ? (to == LIST_HEAD ? "left" : "right") : c->argv[4].p};
        const size_t pn[5] = {brpoplpush ? 9u : 5u, c->argv[1].n, c->argv[2].n,
                              retried ? (from == LIST_HEAD ? 4u : 5u) : c->argv[3].n,
                              retried ? (to == LIST_HEAD ? 4u : 5u) : c->argv[4].n};
        prop_rewrite(c, brpoplpush ? 3 : 5, p, pn);
        return;
    }
    if (!block_allowed(c)) {
        reply_null(c);
        return;
    }
    block_on_keys(c, &c->argv[1], 1, deadline);
}

static void blmoveCommand(client *c) {
    int from, to;
    if (parse_where(c, &c->argv[3], &from) != 0 || parse_where(c, &c->argv[4], &to) != 0) return;
    blmove_generic(c, from, to, &c->argv[5]);
}

static void brpoplpushCommand(client *c) { blmove_generic(c, LIST_TAIL, LIST_HEAD, &c->argv[3]); }

/* LMPOP numkeys key... LEFT|RIGHT [COUNT n] and BLMPOP timeout numkeys ...:
 * numkeys sits at argv[nk]. */
static void mpop_generic(client *c, int nk, int blocking) {
    long long numkeys, count = -1;
    if (parse_positive(c, &c->argv[nk], &numkeys, "ERR numkeys should be greater than 0") != 0) return;
    if (numkeys >= (long long)c->argc - nk - 1) {   /* no room left for LEFT|RIGHT */
        reply_err_syntax(c);
        return;
    }
    int where_idx = nk + (int)numkeys + 1, where;
    if (parse_where(c, &c->argv[where_idx], &where) != 0) return;
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (count == -1 && arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            if (parse_positive(c, &c->argv[++j], &count, "ERR count should be greater than 0") != 0) return;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (count == -1) count = 1;
    int64_t deadline = 0;
    if (blocking && block_parse_timeout(c, &c->argv[1], &deadline) != 0) return;
    const garg *keys = &c->argv[nk + 1];
    if (serve_pop(c, keys, (int)numkeys, where, count) != 0) return;
    if (!blocking || !block_allowed(c)) {
        reply_null_array(c);
        return;
    }
    block_on_keys(c, keys, (int)numkeys, deadline);
}

static void lmpopCommand(client *c) { mpop_generic(c, 1, 0); }
static void blmpopCommand(client *c) { mpop_generic(c, 2, 1); }

const cmd_handler list_handlers[] = {
    {"lpush", lpushCommand, CMD_LOCK_KEYS},
    {"rpush", rpushCommand, CMD_LOCK_KEYS},
    {"lpushx", lpushxCommand, CMD_LOCK_KEYS},
    {"rpushx", rpushxCommand, CMD_LOCK_KEYS},
    {"lpop", lpopCommand, CMD_LOCK_KEYS},
    {"rpop", rpopCommand, CMD_LOCK_KEYS},
    {"llen", llenCommand, CMD_LOCK_KEYS},
    {"lindex", lindexCommand, CMD_LOCK_KEYS},
    {"lset", lsetCommand, CMD_LOCK_KEYS},
    {"lrange", lrangeCommand, CMD_LOCK_KEYS},
    {"ltrim", ltrimCommand, CMD_LOCK_KEYS},
    {"linsert", linsertCommand, CMD_LOCK_KEYS},
    {"lrem", lremCommand, CMD_LOCK_KEYS},
    {"lpos", lposCommand, CMD_LOCK_KEYS},
    {"lmove", lmoveCommand, CMD_LOCK_KEYS},
    {"rpoplpush", rpoplpushCommand, CMD_LOCK_KEYS},
    {"lmpop", lmpopCommand, CMD_LOCK_KEYS},
    {"blpop", blpopCommand, CMD_LOCK_KEYS},
    {"brpop", brpopCommand, CMD_LOCK_KEYS},
    {"blmove", blmoveCommand, CMD_LOCK_KEYS},
    {"brpoplpush", brpoplpushCommand, CMD_LOCK_KEYS},
    {"blmpop", blmpopCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
