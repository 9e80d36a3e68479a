/* script_ldb.h -- the Lua debugger (Redis 7.0's LDB, redis-cli --ldb).
 *
 * SCRIPT DEBUG YES|SYNC|NO sets a client's mode for its next EVAL. That
 * EVAL becomes a debugging session: the script runs with a line hook that
 * stops where the client asked (step, breakpoints, redis.breakpoint(), a
 * loop running past the busy threshold) and then reads the debugger's
 * commands from the client's socket itself, answering each with an array
 * of status lines, until one lets the script go on. YES forks: the child
 * runs the session on its copy of the dataset (nothing reaches the AOF or
 * the replicas, and every change goes with the child), the server goes on
 * and closes its side of the connection. SYNC runs it in the server,
 * which waits meanwhile, and keeps its changes. Either way the connection
 * closes after the EVAL's reply.
 *
 * One session at a time exists in a process (scripts run one at a time),
 * on the thread that runs the EVAL. */
#ifndef GOBLIN_CMD_SERVER_SCRIPT_LDB_H
#define GOBLIN_CMD_SERVER_SCRIPT_LDB_H
#include <stddef.h>

#include <lua.h>

#include "session/client.h"

/* client.lua_debug */
enum { LDB_OFF = 0, LDB_FORKED = 1, LDB_SYNC = 2 };

/* SCRIPT DEBUG YES|SYNC|NO: sets c's mode, replies. */
void ldb_script_debug(client *c);

/* EVAL by a client in debug mode, before anything else: 1, the session
 * is set up (body is the script, split into its lines for the listing)
 * and the EVAL runs in it (in the forked child for YES); 0, the EVAL is
 * over for this process (the parent of a forked session, whose side of
 * the connection closes; or a failure, replied). */
int ldb_start(client *c, const char *body, size_t n);
/* After the EVAL (its reply in c's output, or an error): <endsession>
 * before that reply; the connection then closes. A forked child exits
 * here, after the reply is out. */
void ldb_end(client *c);

/* A session runs on this thread. */
int ldb_active(void);
/* For the run: the hook a debugged script runs under (script_run). */
void ldb_line_hook(lua_State *l, lua_Debug *ar);
/* redis.call while the session steps: the command, its reply (RESP, made
 * readable) and the errors scripts get are logged. */
int ldb_logging(void);
void ldb_log_command(int argc, const garg *argv);
void ldb_log_reply(const char *resp, size_t n);
void ldb_log_error(const char *err);
/* redis.debug(...) and redis.breakpoint(): no effect outside a session. */
int ldb_lua_debug(lua_State *l);
int ldb_lua_breakpoint(lua_State *l);

/* The forked sessions: the ended ones are collected (cron), all of them
 * are killed (shutdown). */
void ldb_reap_children(void);
void ldb_kill_children(void);
#endif
