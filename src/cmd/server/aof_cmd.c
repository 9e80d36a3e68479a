/* aof_cmd.c -- the command layer's side of the append-only file: the
 * replay of AOF commands at start-up (registered with aof_set_replay) and
 * BGREWRITEAOF.
 *
 * Replay runs each command through cmd_call() on one scratch client (no
 * connection, default user, RESP2, CLIENT_AOF_LOADER: no statistics,
 * slowlog or MONITOR) with the database the file selected;
 * cmd_call takes the locks the command needs, so replay is safe while the
 * workers answer -LOADING. Replies are discarded (Redis's fake AOF client
 * ignores them too); only an unknown command or a wrong arity stops the
 * load. The loader (persist/aof_load.c) handles SELECT, MULTI and EXEC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/command.h"
#include "cmd/families.h"
#include "session/reply.h"
#include "persist/aof.h"

static client scratch;

static int aof_replay(int dbid, int argc, const char *const *p, const size_t *n, char *err, size_t errlen) {
    garg argv[64];
    garg *av = argc <= 64 ? argv : malloc(sizeof(garg) * (size_t)argc);
    if (!av) abort();
    for (int i = 0; i < argc; i++) {
        av[i].p = (char *)p[i]; /* the loader's own buffers, NUL-terminated */
        av[i].n = n[i];
    }
    int rc = 0;
    /* An AOF repeats a few command names: the last one found is kept. */
    static char last_name[32];
    static size_t last_n;
    static const cmd_def *last;
    const cmd_def *cmd;
    if (last && av[0].n == last_n && strncasecmp(av[0].p, last_name, last_n) == 0) {
        cmd = last;
    } else {
        cmd = cmd_lookup(av[0].p, av[0].n);
        if (cmd && cmd->parent) cmd = NULL;
        if (cmd && cmd->subs && !(argc == 1 && cmd->proc)) cmd = argc >= 2 ? cmd_lookup_full(av, argc) : NULL;
        else if (cmd && !cmd->subs && av[0].n < sizeof(last_name)) {
            memcpy(last_name, av[0].p, av[0].n);
            last_n = av[0].n;
            last = cmd;
        }
    }
    if (!cmd || !cmd->proc) {
        snprintf(err, errlen, "Unknown command '%.*s'", (int)(av[0].n > 128 ? 128 : av[0].n), av[0].p);
        rc = -1;
    } else if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity) {
        snprintf(err, errlen, "wrong number of arguments for '%s' command", cmd->fullname);
        rc = -1;
    } else {
        client *s = &scratch;
        s->db = dbid;
        s->resp = 2;
        s->argc = argc;
        s->argv = av;
        s->olen = s->osent = 0;
        cmd_call(s, cmd);
        s->argv = NULL;
        s->argc = 0;
        s->olen = s->osent = 0;
    }
    if (av != argv) free(av);
    return rc;
}

static void bgrewriteaofCommand(client *c) {
    if (aof_rewrite_in_progress()) {
        reply_error(c, "ERR Background append only file rewriting already in progress");
        return;
    }
    if (client_flags_peek(c) & CLIENT_IN_EXEC) {
        aof_rewrite_schedule();
        reply_simple(c, "Background append only file rewriting scheduled");
        return;
    }
    char err[600];
    int rc = aof_rewrite_start(1, err, sizeof(err));
    if (rc == AOF_RW_STARTED) reply_simple(c, "Background append only file rewriting started");
    else if (rc == AOF_RW_SCHEDULED) reply_simple(c, "Background append only file rewriting scheduled");
    else if (rc == AOF_RW_BUSY) reply_error(c, "ERR Background append only file rewriting already in progress");
    else if (rc == AOF_RW_REFUSED) reply_errorf(c, "ERR %s", err);
    else reply_error(c, "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.");
}

void aof_family_init(void) {
    client_init_internal(&scratch, CLIENT_AOF_LOADER);
    aof_set_replay(aof_replay);
}

void aof_family_shutdown(void) {
    free(scratch.obuf);
    scratch.obuf = NULL;
    scratch.ocap = 0;
}

const cmd_handler aof_handlers[] = {
    {"bgrewriteaof", bgrewriteaofCommand, CMD_LOCK_ALL},
    {NULL, NULL, 0},
};
