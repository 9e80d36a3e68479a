/* script_lua.h -- what EVAL scripts (script.c) and functions (function.c)
 * share: the redis.* API and the conversions between RESP and Lua, the
 * script flags, and the one running script.
 *
 * EVAL and functions each own a Lua state; both are entered only under the
 * keyspace write lock (their commands are CMD_LOCK_ALL), so at most one
 * script runs at a time. The run's busy state (script.h) is kept here and
 * read by SCRIPT KILL, FUNCTION KILL and FUNCTION STATS on other workers,
 * without the keyspace lock. */
#ifndef GOBLIN_CMD_SCRIPT_LUA_H
#define GOBLIN_CMD_SCRIPT_LUA_H
#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/command.h"

/* Redis 7.0's script flags: a function's flags, and an EVAL script's
 * shebang flags (#!lua flags=...). COMPAT: an EVAL script without a
 * shebang (Redis's eval compatibility mode). */
enum {
    SCRIPT_FLAG_NO_WRITES = 1 << 0,
    SCRIPT_FLAG_ALLOW_OOM = 1 << 1,
    SCRIPT_FLAG_ALLOW_STALE = 1 << 2,
    SCRIPT_FLAG_NO_CLUSTER = 1 << 3,
    SCRIPT_FLAG_ALLOW_CROSS_SLOT = 1 << 4,
    SCRIPT_FLAG_EVAL_COMPAT = 1 << 5,
};

/* Names in Redis's order (FUNCTION LIST shows them so); ends with NULL. */
typedef struct script_flag_name {
    const char *name;
    int flag;
} script_flag_name;
extern const script_flag_name script_flag_names[];

/* The flags of an EVAL body: SCRIPT_FLAG_EVAL_COMPAT without a "#!"
 * line, else the line's flags; *shebang_len is the line's length (the
 * newline excluded), 0 without one. -1 with Redis's error in err. */
int script_shebang_flags(const char *body, size_t n, int *flags, size_t *shebang_len, char *err, size_t errlen);

/* A command's flags as a script's declared flags make them (Redis's
 * scriptFlagsToCmdFlags): write, denyoom and stale from the script. */
uint32_t script_cmd_flags(uint32_t cmd_flags, int script_flags);

/* Bind busy-reply-threshold and the keyspace wait hook (once, at start). */
void script_lua_init(void);
/* A new Lua state (as luaL_newstate) whose allocations are counted in
 * *bytes (atomics; the count must outlive the state). */
lua_State *script_lua_newstate(size_t *bytes);
/* busy-reply-threshold, in milliseconds. */
long long script_busy_threshold_ms(void);

/* Open the libraries and the shared redis.* API (call, pcall, log, ...)
 * in l, as the global table "redis"; eval: with the EVAL-only part
 * (replicate_commands, breakpoint, debug), as Redis's scriptingInit. */
void script_lua_open(lua_State *l, int eval);
/* Push the error handler scripts and functions run under (before the
 * state's debug library is removed). */
void script_lua_push_err_handler(lua_State *l);

/* Push {err="CODE msg"} as Redis's luaPushError. */
void script_push_error(lua_State *l, const char *err);

/* The kill hook both states run every 100000 instructions. */
void script_kill_hook(lua_State *l, lua_Debug *ar);

/* Run the function on top of l's stack (above it nargs arguments; at
 * base the error handler) as the script `name` of caller c: the checks of
 * Redis's scriptPrepareForRun (which reply and return -1 when the script
 * may not run), the scratch client for redis.call, the busy state, the
 * call, and its result or error as c's reply. The stack is left at
 * base - 1. is_eval: an EVAL script (SCRIPT KILL), else a function
 * (FUNCTION KILL); source is the chunk name errors show. */
int script_run(client *c, lua_State *l, int base, int nargs, const char *name, const char *source, int flags,
               int ro, int is_eval);

/* FUNCTION STATS' running_script: NULL reply when no function runs, else
 * its name, command and duration. Without locks. */
void script_reply_running(client *c);

/* Set log, the LOG_* levels and REDIS_VERSION(_NUM) on the table on top
 * of l's stack (what a function library sees of redis while loading). */
void script_lua_set_log(lua_State *l);

/* Redis's sdssplitargs on line[0..n): *out holds *outc malloc'd words
 * (script_split_free). -1 on unbalanced quotes. */
int script_split_args(const char *line, size_t n, char ***out, int *outc);
void script_split_free(char **argv, int argc);
/* The flag named name exactly ("no-writes"), 0 when none is. */
int script_flag_lookup(const char *name);

/* The scratch client's buffer is freed at shutdown. */
void script_lua_shutdown(void);
#endif
