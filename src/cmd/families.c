/* families.c -- the list of command families compiled into the server. */
#include "cmd/families.h"

static const cmd_handler *const all_families[] = {
    connection_handlers, client_handlers, keys_handlers, string_handlers,
    bitops_handlers,     admin_handlers,  info_handlers,
};

void families_register(void) {
    for (size_t i = 0; i < sizeof(all_families) / sizeof(all_families[0]); i++) cmd_register(all_families[i]);
}

void families_shutdown(void) {}
