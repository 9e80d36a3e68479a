/* families.h -- every command family registers its handlers here.
 *
 * Families that are not compiled in yet are weak symbols: a family file
 * defines `const cmd_handler <name>_handlers[]` and, when it owns a value
 * type, `void <name>_family_init(void)` (registering obj_type_ops); nothing
 * else needs editing. */
#ifndef GOBLIN_CMD_FAMILIES_H
#define GOBLIN_CMD_FAMILIES_H
#include "cmd/command.h"

#define FAMILY(name)                                                      \
    extern const cmd_handler name##_handlers[] __attribute__((weak));     \
    void name##_family_init(void) __attribute__((weak));                  \
    void name##_family_shutdown(void) __attribute__((weak));

FAMILY(connection)  /* cmd/connection.c */
FAMILY(client)      /* cmd/client_cmd.c */
FAMILY(keys)        /* cmd/keys.c */
FAMILY(string)      /* cmd/t_string.c */
FAMILY(bitops)      /* cmd/bitops.c */
FAMILY(admin)       /* cmd/admin.c */
FAMILY(info)        /* cmd/info.c */
FAMILY(hash)        /* cmd/t_hash.c */
FAMILY(zset)        /* cmd/t_zset.c */
FAMILY(list)        /* cmd/t_list.c */
FAMILY(set)         /* cmd/t_set.c */
FAMILY(multi)       /* cmd/multi.c */
FAMILY(pubsub)      /* cmd/pubsub.c */
FAMILY(blocking)    /* cmd/blocking.c */
FAMILY(sort)        /* cmd/sort.c */
FAMILY(persist)     /* persist/ commands */
FAMILY(meminfo)     /* cmd/meminfo.c: INFO lines of the memory engine */
FAMILY(acl)         /* cmd/acl.c: ACL users, AUTH checks */
FAMILY(evict)       /* cmd/evict.c: maxmemory eviction */
FAMILY(objstore)    /* cmd/numa_info.c: INFO lines of the object store */
FAMILY(script)      /* cmd/script.c: Lua scripting (EVAL, SCRIPT) */
FAMILY(hll)         /* cmd/t_hll.c: HyperLogLog (PFADD, PFCOUNT, PFMERGE) */
#undef FAMILY

void families_register(void);
void families_shutdown(void);
#endif
