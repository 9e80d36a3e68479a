/* tcommon.c -- the glue the value-type families share (see tcommon.h),
 * each piece written once for t_hash.c, t_set.c, t_zset.c, t_list.c and
 * sort.c: the registry of element counts, key creation and replacement,
 * STORE endings, change signalling and emptied-key deletion, write errors,
 * HLEN & co., the HDEL/SREM/ZREM loop, the RAND* count and range clamping. */
#include <assert.h>
#include <limits.h>

#include "cmd/types/tcommon.h"
#include "ds/hash.h"
#include "ds/lform.h"
#include "ds/set.h"
#include "ds/zset.h"
#include "session/reply.h"
#include "util/strutil.h"

int tc_obj_dup(gobj *dst, const gobj *src, void *copy) {
    if (!copy) return -1;
    *dst = *src;
    dst->u.p = copy;
    return 0;
}

static size_t (*len_of[OBJ_NTYPES])(const gobj *v);

void tc_register_len(int type, size_t (*len)(const gobj *v)) {
    assert(type >= 0 && type < OBJ_NTYPES);
    len_of[type] = len;
}

size_t tc_value_len(const gobj *v) {
    assert(v->type < OBJ_NTYPES && len_of[v->type]);
    return len_of[v->type](v);
}

size_t tc_cfg_size(long long v) { return v < 0 ? 0 : (size_t)v; }

dbentry *tc_lookup_or_reply(client *c, gdb *db, const garg *key, int type, void (*missing)(client *c)) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, type, &wrong);
    if (!e && !wrong) missing(c);
    return e;
}

void tc_reply_zero(client *c) { reply_int(c, 0); }

void tc_reply_empty_array(client *c) { reply_array(c, 0); }

void tc_reply_oom(client *c) { reply_error(c, "ERR out of memory"); }

void tc_reply_write_error(client *c, int full, const char *what) {
    if (full) reply_errorf(c, "ERR %s is too large (its arena's reference space is exhausted)", what);
    else tc_reply_oom(c);
}

/* A value no key took (v may be NULL). */
static void free_value(int type, void *v) {
    gobj o = {.type = (uint8_t)type, .u.p = v};
    if (v) obj_free(&o);
}

dbentry *tc_add_key(client *c, gdb *db, const garg *key, int type, int enc, void *v) {
    dbentry *e = v ? db_add(db, key->p, key->n) : NULL;
    if (!e) {
        free_value(type, v);
        tc_reply_oom(c);
        return NULL;
    }
    e->val.type = (uint8_t)type;
    e->val.enc = (uint8_t)enc;
    e->val.u.p = v;
    return e;
}

dbentry *tc_set_key(client *c, gdb *db, const garg *key, int type, int enc, void *v) {
    assert(v);
    dbentry *e = db_lookup(db, key->p, key->n);
    if (!e) return tc_add_key(c, db, key, type, enc, v);
    gobj nv = e->val;
    nv.type = (uint8_t)type;
    nv.enc = (uint8_t)enc;
    nv.u.p = v;
    db_replace_value(e, &nv);
    if (db_entry_expire(e) != -1) db_persist(db, e);
    return e;
}

static int notify_class(int type) {
    switch (type) {
    case OBJ_STRING: return NOTIFY_STRING;
    case OBJ_LIST: return NOTIFY_LIST;
    case OBJ_SET: return NOTIFY_SET;
    case OBJ_ZSET: return NOTIFY_ZSET;
    case OBJ_HASH: return NOTIFY_HASH;
    case OBJ_STREAM: return NOTIFY_STREAM;
    default: assert(0 && "not a value type"); return NOTIFY_GENERIC;
    }
}

void tc_changed(client *c, gdb *db, const garg *key, int type, const char *event) {
    /* A write that started an index resize: the cron finishes it if the
     * collection then sits idle. */
    if (lf_take_resize_started()) db_note_resize(db, key->p, key->n);
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, notify_class(type), event, db, key->p, key->n);
}

int tc_delete_key(client *c, gdb *db, const garg *key) {
    if (!db_delete(db, key->p, key->n)) return 0;
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_GENERIC, "del", db, key->p, key->n);
    return 1;
}

void tc_delete_entry(client *c, gdb *db, dbentry *e, const garg *key) {
    db_delete_entry(db, e);
    cmd_notify(c, NOTIFY_GENERIC, "del", db, key->p, key->n);
}

int tc_delete_if_empty(client *c, gdb *db, dbentry *e, const garg *key) {
    if (tc_value_len(&e->val) != 0) return 0;
    tc_delete_entry(c, db, e, key);
    return 1;
}

void tc_drop_if_empty(gdb *db, dbentry *e) {
    if (tc_value_len(&e->val) == 0) db_delete_entry(db, e);
}

dbentry *tc_store(client *c, gdb *db, const garg *key, int type, int enc, void *v, size_t n, const char *event) {
    if (n == 0) {
        free_value(type, v);
        reply_int(c, 0);
        tc_delete_key(c, db, key);
        return NULL;
    }
    dbentry *e = tc_set_key(c, db, key, type, enc, v);
    if (!e) return NULL;
    reply_int(c, (long long)n);
    tc_changed(c, db, key, type, event);
    return e;
}

void tc_reply_len(client *c, int type) {
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), &c->argv[1], type, &wrong);
    if (wrong) return;
    reply_int(c, e ? (long long)tc_value_len(&e->val) : 0);
}

static void prefetch_elem(const gobj *o, const garg *a, int stage) {
    switch (o->type) {
    case OBJ_HASH: hash_prefetch(o->u.p, a->p, a->n, stage); break;
    case OBJ_SET: set_prefetch(o->u.p, a->p, a->n, stage); break;
    case OBJ_ZSET: zset_prefetch(o->u.p, a->p, a->n, stage); break;
    default: break;
    }
}

void tc_prefetch_elems(const gobj *o, const garg *argv, int argc, int j, int step) {
    int near = j + TC_AHEAD / 2 * step, far = j + TC_AHEAD * step;
    if (far < argc) prefetch_elem(o, &argv[far], 0);
    if (near < argc) prefetch_elem(o, &argv[near], 1);
}

void tc_remove_args(client *c, int type, const char *event, tc_remove_fn *remove) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, type, tc_reply_zero);
    if (!e) return;
    long long deleted = 0;
    for (int i = 2; i < c->argc; i++) {
        tc_prefetch_elems(&e->val, c->argv, c->argc, i, 1);
        if (!remove(e, &c->argv[i])) continue;
        deleted++;
        if (tc_value_len(&e->val) == 0) break;
    }
    if (deleted) {
        tc_changed(c, db, key, type, event);
        tc_delete_if_empty(c, db, e, key);
    }
    reply_int(c, deleted);
}

int tc_parse_rand_count(client *c, const garg *a, long long *l) {
    if (!str_to_ll(a->p, a->n, l)) {
        reply_err_not_int(c);
        return -1;
    }
    if (*l < -LLONG_MAX) {
        reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and "
                       "9223372036854775807");
        return -1;
    }
    return 0;
}

int tc_rand_count(client *c, long long l, unsigned long long *count, int *uniq) {
    *uniq = l >= 0;
    *count = *uniq ? (unsigned long long)l : (unsigned long long)-l;
    if (!*uniq && *count > TC_RAND_MAX_REPEATED) {
        reply_error(c, "ERR value is out of range");
        return -1;
    }
    return 0;
}

int tc_clamp_range(long long start, long long end, uint64_t len, uint64_t *s, uint64_t *n) {
    long long llen = (long long)len;
    if (start < 0) start = llen + start;
    if (end < 0) end = llen + end;
    if (start < 0) start = 0;
    if (start > end || start >= llen) return 0;
    if (end >= llen) end = llen - 1;
    *s = (uint64_t)start;
    *n = (uint64_t)(end - start) + 1;
    return 1;
}
