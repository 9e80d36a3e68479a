/* families.c -- the list of command families, in registration order: each
 * family's init runs before its handlers are registered, and shutdown runs
 * in the same order. */
#include "cmd/families.h"
#include "cmd/tracking.h"

#include <stddef.h>

static const struct {
    const cmd_handler *handlers;
    void (*init)(void);
    void (*shutdown)(void);
} all_families[] = {
    {connection_handlers, NULL, NULL},
    {client_handlers, NULL, NULL},
    {keys_handlers, keys_family_init, NULL},
    {string_handlers, NULL, NULL},
    {bitops_handlers, NULL, NULL},
    {admin_handlers, admin_family_init, NULL},
    {info_handlers, NULL, NULL},
    {hash_handlers, hash_family_init, NULL},
    {zset_handlers, zset_family_init, NULL},
    {geo_handlers, NULL, NULL},
    {list_handlers, list_family_init, NULL},
    {set_handlers, set_family_init, NULL},
    {stream_handlers, stream_family_init, NULL},
    {stream_cg_handlers, NULL, NULL},
    {multi_handlers, multi_family_init, NULL},
    {pubsub_handlers, pubsub_family_init, NULL},
    {blocking_handlers, NULL, NULL},
    {sort_handlers, NULL, NULL},
    {persist_handlers, persist_family_init, persist_family_shutdown},
    {NULL, meminfo_family_init, NULL},
    {acl_handlers, acl_family_init, acl_family_shutdown},
    {NULL, evict_family_init, evict_family_shutdown},
    {NULL, objstore_family_init, objstore_family_shutdown},
    {script_handlers, script_family_init, script_family_shutdown},
    {function_handlers, function_family_init, function_family_shutdown},
    {hll_handlers, NULL, NULL},
    {aof_handlers, aof_family_init, aof_family_shutdown},
    {repl_handlers, repl_family_init, repl_family_shutdown},
    {cluster_handlers, NULL, NULL},
    {migrate_handlers, NULL, NULL},
    {tracking_handlers, tracking_init, NULL}, /* after the scripts: it looks EVAL_RO up */
};

#define NFAMILIES (sizeof(all_families) / sizeof(all_families[0]))

void families_register(void) {
    for (size_t i = 0; i < NFAMILIES; i++) {
        if (all_families[i].init) all_families[i].init();
        if (all_families[i].handlers) cmd_register(all_families[i].handlers);
    }
}

/* In the reverse order of their start: a family stops before those it
 * uses (the replication thread, still loading a sync, reads the function
 * family's RDB hooks). */
void families_shutdown(void) {
    for (size_t i = NFAMILIES; i-- > 0;)
        if (all_families[i].shutdown) all_families[i].shutdown();
}
