/* families.h -- the command families: each defines its handler table
 * (`const cmd_handler <name>_handlers[]`) and, when it owns state or a
 * value type, `<name>_family_init` / `<name>_family_shutdown`.
 * families.c lists them in registration order; a new family adds its
 * declarations here and its row there. */
#ifndef GOBLIN_CMD_FAMILIES_H
#define GOBLIN_CMD_FAMILIES_H
#include "cmd/command.h"

/* cmd/: the dispatch core's own commands */
extern const cmd_handler multi_handlers[];      /* multi.c: MULTI/EXEC/WATCH */
extern const cmd_handler blocking_handlers[];   /* blocking.c: BLPOP & co helpers */
void multi_family_init(void);
void evict_family_init(void);                   /* evict.c: maxmemory eviction */
void evict_family_shutdown(void);

/* cmd/types/: the keyspace and the value types */
extern const cmd_handler keys_handlers[];
void keys_family_init(void);                     /* keys.c: lazyfree-lazy-user-del */
int keys_lazy_user_del(void);                    /* its value (GETDEL propagates as DEL or UNLINK) */
extern const cmd_handler string_handlers[];
extern const cmd_handler bitops_handlers[];
extern const cmd_handler hash_handlers[];
extern const cmd_handler list_handlers[];
extern const cmd_handler stream_handlers[];
extern const cmd_handler stream_cg_handlers[];
extern const cmd_handler set_handlers[];
extern const cmd_handler zset_handlers[];
extern const cmd_handler geo_handlers[];          /* t_geo.c: positions kept in zsets */
extern const cmd_handler hll_handlers[];
extern const cmd_handler sort_handlers[];
void hash_family_init(void);
void list_family_init(void);
void stream_family_init(void);
void set_family_init(void);
void zset_family_init(void);

/* cmd/server/: server commands */
extern const cmd_handler connection_handlers[];
extern const cmd_handler client_handlers[];
extern const cmd_handler admin_handlers[];
void admin_family_init(void);                    /* admin_latency.c: the latency directives */
extern const cmd_handler info_handlers[];
extern const cmd_handler pubsub_handlers[];
extern const cmd_handler persist_handlers[];
extern const cmd_handler acl_handlers[];
extern const cmd_handler script_handlers[];
void pubsub_family_init(void);
void persist_family_init(void);
void persist_family_shutdown(void);
void meminfo_family_init(void);                 /* meminfo.c: INFO lines of the memory engine */
void acl_family_init(void);
void acl_family_shutdown(void);
void objstore_family_init(void);                /* numa_info.c: INFO lines of the object store */
void objstore_family_shutdown(void);
void script_family_init(void);
void script_family_shutdown(void);
extern const cmd_handler migrate_handlers[];    /* cluster/migrate.c: MIGRATE */
extern const cmd_handler cluster_handlers[];    /* cluster/ccmd.c: CLUSTER, ASKING, READONLY, READWRITE */
extern const cmd_handler function_handlers[];   /* function.c: FUNCTION, FCALL, FCALL_RO */
void function_family_init(void);
void function_family_shutdown(void);
extern const cmd_handler repl_handlers[];       /* repl/repl_cmd.c: REPLICAOF, PSYNC, ROLE, WAIT, ... */
void repl_family_init(void);
void repl_family_shutdown(void);
extern const cmd_handler aof_handlers[];        /* aof_cmd.c: AOF replay, BGREWRITEAOF */
void aof_family_init(void);
void aof_family_shutdown(void);

void families_register(void);
void families_shutdown(void);
#endif
