/* tcommon.h -- the glue the value-type families share (t_hash.c, t_set.c,
 * t_zset.c, t_list.c, and SORT's STORE), written once: the obj_type_ops
 * and element count of a value held as a ds/ structure (TC_VALUE_TYPE),
 * size settings read from the configuration, lookups with a type check and
 * a reply for a missing key, adding and replacing a key's value, the ending
 * of the STORE forms, the signalling of a change, deleting emptied keys,
 * the errors of a refused write, the length commands (HLEN & co.), the
 * removal loop of HDEL, SREM and ZREM, the count argument of HRANDFIELD,
 * SRANDMEMBER and ZRANDMEMBER, and the clamping of an index range. */
#ifndef GOBLIN_CMD_TYPES_TCOMMON_H
#define GOBLIN_CMD_TYPES_TCOMMON_H
#include <stddef.h>
#include <stdint.h>

#include "cmd/command.h"

/* Defines <name>_family_init(), which registers the obj_type_ops of objtype
 * and its element count (tc_value_len): the value is the ds/ structure at
 * gobj.u.p, freed by freefn, copied by dupfn (NULL when out of memory),
 * measured by memfn and counted by lenfn. */
#define TC_VALUE_TYPE(name, objtype, freefn, dupfn, memfn, lenfn) \
    TC_VALUE_TYPE_RESIZING(name, objtype, freefn, dupfn, memfn, lenfn, tc_no_rehash)
/* The same for a structure whose index resizes (rehashfn: its
 * obj_type_ops.rehash_step on the structure). */
#define TC_VALUE_TYPE_RESIZING(name, objtype, freefn, dupfn, memfn, lenfn, rehashfn)                 \
    static void name##_obj_free(gobj *o) {                                                          \
        freefn(o->u.p);                                                                             \
        o->u.p = NULL;                                                                              \
    }                                                                                               \
    static int name##_obj_dup(gobj *dst, const gobj *src) {                                         \
        return tc_obj_dup(dst, src, dupfn(src->u.p));                                               \
    }                                                                                               \
    static size_t name##_obj_mem_usage(const gobj *o) { return memfn(o->u.p); }                     \
    static size_t name##_obj_len(const gobj *o) { return (size_t)lenfn(o->u.p); }                   \
    static int name##_obj_rehash(gobj *o, size_t groups) { return rehashfn(o->u.p, groups); }        \
    static const obj_type_ops name##_ops = {name##_obj_free, name##_obj_dup, name##_obj_mem_usage,   \
                                            name##_obj_len, name##_obj_rehash};                     \
    void name##_family_init(void) {                                                                 \
        obj_register_type(objtype, &name##_ops);                                                    \
        tc_register_len(objtype, name##_obj_len);                                                   \
    }

/* TC_VALUE_TYPE's rehash_step: nothing to move. */
static inline int tc_no_rehash(const void *p, size_t groups) {
    (void)p;
    (void)groups;
    return 0;
}

/* obj_type_ops.dup's ending: *dst is src holding copy; -1 when copy is NULL. */
int tc_obj_dup(gobj *dst, const gobj *src, void *copy);

void tc_register_len(int type, size_t (*len)(const gobj *v));
/* The number of elements of a value of a registered type. */
size_t tc_value_len(const gobj *v);

/* A size setting (hash-max-listpack-entries & co.): negative counts as 0. */
size_t tc_cfg_size(long long v);

/* The entry of key when it holds type; NULL after replying WRONGTYPE or,
 * when the key is missing, what missing replies (Redis's
 * lookupKeyReadOrReply with its shared reply). */
dbentry *tc_lookup_or_reply(client *c, gdb *db, const garg *key, int type, void (*missing)(client *c));
/* Replies for missing keys: 0, an empty array. */
void tc_reply_zero(client *c);
void tc_reply_empty_array(client *c);

/* A new key holding v, a value of type in form enc, which the key then
 * owns. NULL after replying "out of memory" when v is NULL or the key could
 * not be added (v is then freed). */
dbentry *tc_add_key(client *c, gdb *db, const garg *key, int type, int enc, void *v);
/* Redis's setKey: key holds v (type, enc) whatever it held before, and no
 * TTL. NULL after replying "out of memory" (v freed). */
dbentry *tc_set_key(client *c, gdb *db, const garg *key, int type, int enc, void *v);

/* The ending of a STORE form, as Redis's: with n > 0 elements key holds v
 * (tc_set_key), n is replied and the change signalled as event; with none,
 * v is freed, 0 replied and key deleted (signalled as "del") if it existed.
 * Returns the entry holding v, NULL when nothing was stored. */
dbentry *tc_store(client *c, gdb *db, const garg *key, int type, int enc, void *v, size_t n, const char *event);

/* HLEN, SCARD, ZCARD and LLEN key: the number of elements, 0 when the key
 * is missing. */
void tc_reply_len(client *c, int type);

/* A loop over the elements argv[j], argv[j + step], ... of a hash, set or
 * sorted set o calls this before element j: it starts loading what the
 * lookups of the elements TC_AHEAD and TC_AHEAD / 2 places further will
 * read (their index groups, then the entries their tags match). A big
 * collection's index and entries no longer fit the caches, and the
 * misses of a many-element HSET, SADD, ZADD, HMGET, SMISMEMBER, ZMSCORE
 * or removal were most of its cost; now they overlap. Small collections:
 * nothing. */
#define TC_AHEAD 8
void tc_prefetch_elems(const gobj *o, const garg *argv, int argc, int j, int step);

/* Removes elem from the value of e: 1 when it was there. */
typedef int tc_remove_fn(dbentry *e, const garg *elem);
/* HDEL, SREM and ZREM key elem...: removes each elem with remove until the
 * value is empty, replies the count, signals event (and "del" when the key
 * went). */
void tc_remove_args(client *c, int type, const char *event, tc_remove_fn *remove);

/* key changed (dirty, WATCH) and its event, of type's notification class. */
void tc_changed(client *c, gdb *db, const garg *key, int type, const char *event);
/* A STORE form with an empty result deletes key: 1 (signalled as "del")
 * when it existed. */
int tc_delete_key(client *c, gdb *db, const garg *key);
/* e's key goes (signalled as "del"). */
void tc_delete_entry(client *c, gdb *db, dbentry *e, const garg *key);
/* After a write that removed elements: an emptied value's key goes
 * (tc_delete_entry). 1 when it went. */
int tc_delete_if_empty(client *c, gdb *db, dbentry *e, const garg *key);
/* A write that failed on a key it created must not leave it empty: the
 * key goes, unsignalled (it never existed for clients). */
void tc_drop_if_empty(gdb *db, dbentry *e);

void tc_reply_oom(client *c);
/* A write the ds/ structure refused: its arena's reference space is full
 * ("ERR <what> is too large ..."), else out of memory. */
void tc_reply_write_error(client *c, int full, const char *what);

/* The count of HRANDFIELD, SRANDMEMBER and ZRANDMEMBER: an integer in
 * [-LLONG_MAX, LLONG_MAX]; -1 after replying Redis's error. */
int tc_parse_rand_count(client *c, const garg *a, long long *l);
/* A count l >= 0 asks for distinct picks (*uniq), a negative one for -l
 * picks with repetitions, refused past TC_RAND_MAX_REPEATED (Redis 7.0
 * runs out of memory trying); -1 after replying that error. */
int tc_rand_count(client *c, long long l, unsigned long long *count, int *uniq);
#define TC_RAND_MAX_REPEATED ((unsigned long long)1 << 32)

/* Clamp the inclusive range [start, end] (negative: from the end) to len
 * elements: 0 when it selects nothing, else 1 with the first index in *s
 * and the number of elements in *n (LRANGE, LTRIM, ZRANGE by rank...). */
int tc_clamp_range(long long start, long long end, uint64_t len, uint64_t *s, uint64_t *n);
#endif
