/* fuzz_server.h -- what the targets that build values need of the server:
 * the databases, the command table and the value types' ops, set up once,
 * as at start-up. */
#ifndef GOBLIN_FUZZ_SERVER_H
#define GOBLIN_FUZZ_SERVER_H
#include "cmd/families.h"
#include "db/db.h"

static inline void fuzz_server_setup(void) {
    static int done;
    if (done) return;
    done = 1;
    db_init_all(16);
    cmd_table_init();
    families_register();
}
#endif
