/* families.c -- the list of command families; absent ones are skipped. */
#include "cmd/families.h"

#define F(name) {name##_handlers, name##_family_init, name##_family_shutdown}

static const struct {
    const cmd_handler *handlers;
    void (*init)(void);
    void (*shutdown)(void);
} all_families[] = {
    F(connection), F(client), F(keys),  F(string), F(bitops), F(admin), F(info),    F(hash),
    F(zset),       F(list),   F(set),   F(multi),  F(pubsub), F(blocking), F(sort), F(persist), F(meminfo),
    F(acl),        F(evict),   F(objstore), F(script), F(hll),
};

#define NFAMILIES (sizeof(all_families) / sizeof(all_families[0]))

void families_register(void) {
    for (size_t i = 0; i < NFAMILIES; i++) {
        if (all_families[i].init) all_families[i].init();
        if (all_families[i].handlers) cmd_register(all_families[i].handlers);
    }
}

void families_shutdown(void) {
    for (size_t i = 0; i < NFAMILIES; i++)
        if (all_families[i].shutdown) all_families[i].shutdown();
}
