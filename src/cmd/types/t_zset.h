/* t_zset.h -- what the sorted-set family (t_zset.c) lends to the other
 * families that keep their values in zsets: the geo commands (t_geo.c)
 * store positions as scores and write through the same settings, forms
 * and STORE ending as ZADD and ZRANGESTORE. */
#ifndef GOBLIN_CMD_TYPES_T_ZSET_H
#define GOBLIN_CMD_TYPES_T_ZSET_H
#include <stddef.h>

#include "cmd/command.h"
#include "ds/zset.h"

/* The encoding limits of the zset-max-listpack-* settings, as every write
 * passes them down. */
zset_limits zset_cmd_limits(void);
/* After a write to e's zset: gobj.enc mirrors its form (listpack or
 * skiplist, as OBJECT ENCODING reports it). */
void zset_cmd_sync(dbentry *e);
/* The ending of the STORE forms (tc_store): z, of n members, is stored at
 * key (replying n, signalled as event) or, with none, key is deleted; a
 * stored zset may serve clients blocked on key. z may be NULL when n is 0. */
void zset_cmd_store(client *c, gdb *db, const garg *key, zset *z, size_t n, const char *event);
#endif
