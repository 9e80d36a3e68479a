/* forkless.c -- the command side of the fork-less full sync.
 *
 * While a snapshot without fork runs (persist/rdb_snap.h, started by a
 * full sync under --arena-hugetlb), a command that may change keys saves
 * the value each of its keys had when the snapshot started, before its
 * handler runs: cmd_call calls repl_snap_before_call right after taking
 * the command's locks. The keys are the ones the locks were taken for
 * (the command table's key positions), or for a movable-key command (run
 * under the keyspace write lock) those its key specs name. The commands
 * inside EXEC and scripts pass through cmd_call one by one and are
 * handled the same way (in the database each one runs in). Whole-dataset
 * changes name no keys: FLUSHDB/FLUSHALL and a dataset replaced by a load
 * complete the snapshot first (db_flush, rdb_load_commit); SWAPDB needs
 * nothing, the snapshot numbers the databases as they were at its start;
 * keys removed by the db layer itself (expiry, eviction) are saved by its
 * own hook. */
#include <stdlib.h>

#include "cmd/command.h"
#include "cmd/keyspec.h"
#include "cmd/repl/repl.h"
#include "db/db.h"
#include "persist/rdb_snap.h"

static void save_key(gdb *db, const garg *k) {
    dbentry *e = db_lookup_raw(db, k->p, k->n);
    if (e && db_entry_unsaved(e)) rdb_snap_save(db, e, 1);
}

void repl_snap_before_call(client *c, const struct cmd_def *cmd, int mode) {
    if (!(cmd->flags & (CMDF_WRITE | CMDF_MAY_REPLICATE))) return;
    /* The keys are locked: by lock_for (KEYS, ALL), or by an EXEC or a
     * script holding the keyspace write lock. A command that takes its
     * own locks names no key here (none of them writes a key). */
    if (!db_keyspace_write_held() && mode != CMD_LOCK_KEYS) return;
    gdb *db = cmd_db(c);
    if (!db) return;
    if (cmd->flags & CMDF_MOVABLEKEYS) {
        cmd_keyacc *k;
        int n = cmd_call_keys(cmd, c->argv, c->argc, &k);
        for (int i = 0; i < n; i++)
            if (k[i].pos > 0 && k[i].pos < c->argc) save_key(db, &c->argv[k[i].pos]);
        free(k);
        return;
    }
    if (cmd->first <= 0) return;
    int last = cmd->last < 0 ? c->argc + cmd->last : cmd->last;
    for (int i = cmd->first; i <= last && i < c->argc; i += cmd->step) save_key(db, &c->argv[i]);
}
