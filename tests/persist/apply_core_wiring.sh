#!/bin/sh
# apply_core_wiring.sh -- the persistence hooks in the core files, for the
# lead to apply once (the persistence engineer may not edit these files):
#
#   src/cmd/command_meta.inc  the LOAD command's metadata line
#   src/main.c                start-up load (-LOADING meanwhile, exit 1 on a
#                             corrupt dump), SIGTERM/SIGINT save like SHUTDOWN
#   src/cmd/admin.c           SHUTDOWN [SAVE|NOSAVE] saving, FLUSHALL snapshot
#   src/cmd/admin_inspect.c   DEBUG RELOAD [NOSAVE]
#   src/cmd/info.c            INFO persistence from persist_info()
#   src/cmd/command.c         -LOADING for commands without the loading flag
#   src/server/config.c       `save` accepts save points
#
#   sh tests/persist/apply_core_wiring.sh [REPO_ROOT]
#
# Every edit is anchored on the exact current text and refused (nothing
# written for that file) when the anchor is not found exactly once.
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
exec python3 - "$ROOT" <<'PYEOF'
"""Apply the persistence core wiring to a Goblin tree (argv[1])."""
import sys, os
root = sys.argv[1]
META = r"""CMD_META("load", NULL, -1, "admin noscript no_async_loading no_multi", 0, 0, 0, "@admin @slow @dangerous", "*10\015\012$4\015\012load\015\012:-1\015\012~4\015\012+admin\015\012+noscript\015\012+no_async_loading\015\012+no_multi\015\012:0\015\012:0\015\012:0\015\012~3\015\012+@admin\015\012+@slow\015\012+@dangerous\015\012~0\015\012~0\015\012~0\015\012", "%5\015\012$7\015\012summary\015\012$71\015\012Replace the dataset with the contents of an RDB file (a Goblin command)\015\012$5\015\012since\015\012$5\015\0120.1.0\015\012$5\015\012group\015\012$6\015\012server\015\012$10\015\012complexity\015\012$52\015\012O(N) where N is the total number of keys in the file\015\012$9\015\012arguments\015\012*1\015\012%3\015\012$4\015\012name\015\012$4\015\012path\015\012$4\015\012type\015\012$6\015\012string\015\012$5\015\012flags\015\012~1\015\012+optional\015\012")"""

def edit(rel, pairs):
    p = os.path.join(root, rel)
    s = open(p).read()
    for old, new in pairs:
        if s.count(old) != 1:
            sys.exit("%s: anchor found %d times:\n%s" % (rel, s.count(old), old))
        s = s.replace(old, new)
    open(p, "w").write(s)

meta = META
p = os.path.join(root, "src/cmd/command_meta.inc")
lines = open(p).read().split("\n")
if not any(l.startswith('CMD_META("load"') for l in lines):
    i = next(i for i, l in enumerate(lines) if l.startswith('CMD_META("lolwut"'))
    lines.insert(i, meta.strip())
    open(p, "w").write("\n".join(lines))

edit("src/main.c", [
    ('#include "net/net.h"\n', '#include "net/net.h"\n#include "persist/persist.h"\n'),
    ('''        log_warn("Received %s scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
        net_request_shutdown();
        return NULL;''',
     '''        log_warn("Received %s scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
        /* Like SHUTDOWN: save when save points are configured; a failed
         * save keeps the server running, as Redis does. */
        char err[600];
        if (persist_shutdown(PERSIST_SHUTDOWN_DEFAULT, err, sizeof(err)) != 0) {
            log_warn("%s received but errors trying to shut down the server, check the logs for more "
                     "information",
                     sig == SIGINT ? "SIGINT" : "SIGTERM");
            persist_shutdown_cancelled();
            continue;
        }
        net_request_shutdown();
        return NULL;'''),
    ('''    if (net_start(cfg.cores) != 0) return 1;
''', '''    /* A dump to load: -LOADING from the first command the workers get. */
    persist_loading_begin();
    if (net_start(cfg.cores) != 0) return 1;
'''),
    ('''    log_notice("Ready to accept connections tcp on port %d with %d worker(s)", cfg.port, cfg.cores);
    server_cron_start();
    pthread_t st;
    pthread_create(&st, NULL, signal_thread, &set);
    pthread_detach(st);
''',
     '''    log_notice("Ready to accept connections tcp on port %d with %d worker(s)", cfg.port, cfg.cores);
    pthread_t st;
    pthread_create(&st, NULL, signal_thread, &set);
    pthread_detach(st);
    /* Load dir/dbfilename while the workers answer -LOADING; a corrupt
     * file stops start-up (never silently start empty). */
    char lerr[1400];
    if (persist_load_at_startup(lerr, sizeof(lerr)) < 0) {
        log_warn("%s", lerr);
        fprintf(stderr, "goblin-core: %s\\n", lerr);
        families_shutdown();
        net_stop();
        return 1;
    }
    server_cron_start();
'''),
])

edit("src/cmd/admin.c", [
    ('#include "net/net.h"\n', '#include "net/net.h"\n#include "persist/persist.h"\n'),
    ('''    for (int i = 0; i < db_count(); i++) flush_db(c, db_get(i));
    /* Redis also snapshots here when save points are configured; save points
     * are refused until RDB persistence exists. */
    reply_ok(c);''',
     '''    for (int i = 0; i < db_count(); i++) flush_db(c, db_get(i));
    /* As Redis: kill a BGSAVE child, and snapshot the empty dataset when
     * save points are configured. */
    persist_after_flushall();
    reply_ok(c);'''),
    ('''    int want_save = save || (!nosave && cfg.save && cfg.save[0]);
    if (want_save) {
        if (!force) {
            log_warn("SHUTDOWN SAVE refused: RDB snapshots are not supported yet.");
            reply_error(c, "ERR Errors trying to SHUTDOWN: RDB snapshots are not supported yet "
                           "(use SHUTDOWN NOSAVE, or add FORCE to exit without saving)");
            return;
        }
        log_warn("SHUTDOWN SAVE FORCE: RDB snapshots are not supported yet, exiting without saving.");
    }''',
     '''    char err[600];
    int how = save ? PERSIST_SHUTDOWN_SAVE : nosave ? PERSIST_SHUTDOWN_NOSAVE : PERSIST_SHUTDOWN_DEFAULT;
    if (persist_shutdown(how, err, sizeof(err)) != 0 && !force) {
        persist_shutdown_cancelled();
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }'''),
])

edit("src/cmd/admin_inspect.c", [
    ('#include "cmd/server/admin_family.h"\n', '#include "cmd/admin_family.h"\n#include "persist/persist.h"\n'),
    ('"    Save the RDB on disk and reload it back to memory (not supported yet).",',
     '"    Save the RDB on disk and reload it back to memory. By default it will save",\n'
     '        "    the RDB file and load it back. With NOSAVE the file is only loaded.",'),
    ('''    } else if (arg_is(sub, "reload")) {
        for (int j = 2; j < c->argc; j++) {
            if (!arg_is(&c->argv[j], "merge") && !arg_is(&c->argv[j], "noflush") && !arg_is(&c->argv[j], "nosave")) {
                reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
                return;
            }
        }
        reply_error(c, "ERR DEBUG RELOAD is not supported yet (it arrives with RDB persistence)");''',
     '''    } else if (arg_is(sub, "reload")) {
        int nosave = 0;
        for (int j = 2; j < c->argc; j++) {
            if (!arg_is(&c->argv[j], "merge") && !arg_is(&c->argv[j], "noflush") && !arg_is(&c->argv[j], "nosave")) {
                reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
                return;
            }
            if (arg_is(&c->argv[j], "nosave")) nosave = 1;
        }
        char err[1024];
        if (persist_debug_reload(nosave, err, sizeof(err)) != 0) {
            reply_errorf(c, "ERR Error trying to load the RDB dump: %s", err);
            return;
        }
        reply_ok(c);'''),
])

p = os.path.join(root, "src/cmd/info.c")
s = open(p).read()
i = s.index("static void info_persistence(info_buf *b) {")
j = s.index("\n}\n", i) + 3
s = s[:i] + "static void info_persistence(info_buf *b) { persist_info(b); }\n" + s[j:]
s = s.replace('#include "cmd/server/admin_family.h"\n', '#include "cmd/admin_family.h"\n#include "persist/persist.h"\n', 1)
open(p, "w").write(s)

edit("src/cmd/command.c", [
    ('#include "ds/swiss.h"\n', '#include "ds/swiss.h"\n#include "persist/persist.h"\n'),
    ('''    if ((c->flags & CLIENT_PUBSUB) && c->resp == 2) {''',
     '''    if (!(cmd->flags & CMDF_LOADING) && persist_loading()) {
        reply_error(c, "LOADING Redis is loading the dataset in memory");
        reject(c, cmd);
        if (c->flags & CLIENT_MULTI) c->flags |= CLIENT_DIRTY_EXEC;
        return;
    }
    if ((c->flags & CLIENT_PUBSUB) && c->resp == 2) {'''),
])

edit("src/server/config.c", [
    ('{"save", NULL, T_STRING, F_MULTIARG, &cfg.save, "", 0, 0, NULL, "SAVE/BGSAVE (RDB snapshots)"},',
     '{"save", NULL, T_STRING, F_MULTIARG, &cfg.save, "", 0, 0, NULL, NULL},'),
])
print("core wiring applied to", root)
PYEOF
