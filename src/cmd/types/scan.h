/* scan.h -- the one body of SCAN, HSCAN, SSCAN and ZSCAN.
 *
 * scan_command() parses `cursor [MATCH pattern] [COUNT count]` (and TYPE,
 * for SCAN only) with Redis 7.0's errors, looks up and type-checks the key
 * of HSCAN & co., runs the iteration until COUNT items were visited (at
 * most 10*COUNT steps), filters by MATCH and builds the two-element reply.
 * A type provides only the iteration: a step function that collects one
 * step's items with scan_push() and returns the next cursor. */
#ifndef GOBLIN_CMD_TYPES_SCAN_H
#define GOBLIN_CMD_TYPES_SCAN_H
#include <stddef.h>
#include <stdint.h>

#include "cmd/command.h"

/* SCAN's TYPE filter (scan_acc.type): no TYPE option, or a name that no
 * type has (nothing passes), or "none" (only keys the scan expires pass,
 * as in Redis, whose TYPE check deletes them and then names their type
 * "none"); else the OBJ_* type wanted. */
enum { SCAN_ANY_TYPE = -1, SCAN_NO_TYPE = -2, SCAN_TYPE_NONE = -3 };

typedef struct scan_item {
    size_t off, n; /* bytes buf[off .. off + n) */
} scan_item;

/* The items of one call: copies (a key; a member; a field and its value; a
 * member and its score), back to back in one buffer. */
typedef struct scan_acc {
    char *buf;
    size_t len, cap;
    scan_item *items;
    size_t nitems, capitems;
    size_t seen;  /* items visited, including those left out (scan_skip) */
    int type;     /* SCAN's TYPE: SCAN_ANY_TYPE, SCAN_NO_TYPE or OBJ_* */
    const garg *pat; /* SCAN's MATCH pattern (NULL: none), for the TYPE check */
    int oom;
} scan_acc;

/* Copy one item into a (sets a->oom when out of memory). */
void scan_push(scan_acc *a, const char *p, size_t n);
/* An item visited but left out (a key of another TYPE, an expired key): it
 * counts towards COUNT like Redis's collected-then-filtered keys. */
void scan_skip(scan_acc *a);

/* One step of a type's iteration of obj from cursor: collects the step's
 * items into a, returns the next cursor (0 when the iteration is done). */
typedef uint64_t scan_step_fn(void *obj, uint64_t cursor, scan_acc *a);

typedef struct scan_kind {
    int type;           /* OBJ_* of the key HSCAN & co. scan; SCAN_KEYSPACE */
    int group;          /* items per element: 1, or 2 (and MATCH tests the first) */
    scan_step_fn *step; /* obj: the key's value, or the gdb for SCAN */
} scan_kind;

/* scan_kind.type of SCAN: the selected database, argv[1] is the cursor. */
#define SCAN_KEYSPACE (-1)

/* SCAN cursor [MATCH p] [COUNT n] [TYPE t], or HSCAN/SSCAN/ZSCAN key cursor
 * [MATCH p] [COUNT n]: the whole command, k's iteration aside. */
void scan_command(client *c, const scan_kind *k);
#endif
