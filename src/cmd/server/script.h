/* script.h -- Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT.
 *
 * One Lua 5.1 state for the server, used only under the keyspace write lock
 * (every script command is CMD_LOCK_ALL), so scripts are atomic like EXEC
 * and the state is never entered by two threads. redis.call runs commands
 * through cmd_call() on a scratch client and parses the RESP it produced
 * back into Lua values. */
#ifndef GOBLIN_CMD_SCRIPT_H
#define GOBLIN_CMD_SCRIPT_H
#include "cmd/command.h"

/* ---- The running script, as every worker sees it ------------------------
 *
 * One script (EVAL or FCALL) runs at a time, under the keyspace write lock.
 * Once it has run busy-reply-threshold milliseconds it is "busy" (Redis's
 * timed-out script): from then on every other client's command gets -BUSY
 * except those flagged allow_busy (AUTH, HELLO, QUIT, RESET, MULTI, DISCARD,
 * WATCH, UNWATCH, SCRIPT KILL, FUNCTION KILL, FUNCTION STATS, SHUTDOWN
 * NOSAVE, REPLCONF), which run taking no keyspace lock. Before that, other
 * clients' commands wait for it (script_gate_wait), as they would behind
 * Redis's single thread. The script's own worker keeps serving its other
 * connections from the Lua hook (script_run_interrupt); a worker waiting
 * for the keyspace lock behind a busy script does the same. */

/* On the running thread, keyspace write lock held: the script starts /
 * ends. is_eval: EVAL family (SCRIPT KILL) or a function (FUNCTION KILL);
 * name: the sha or the function's name, for the log. */
void script_run_begin(client *caller, int is_eval, const char *name);
void script_run_end(void);
/* The script is about to run a write command: it cannot be killed now. */
void script_run_wrote(void);
/* From the Lua count hook of the running script: turns the script busy
 * once past the threshold, then serves this worker's other connections.
 * 1 when SCRIPT KILL / FUNCTION KILL asked to stop it: the hook raises
 * "Script killed by user with SCRIPT KILL..." and hooks every line. */
int script_run_interrupt(void);
/* SCRIPT KILL (is_eval) / FUNCTION KILL: replies OK, NOTBUSY, UNKILLABLE or
 * BUSY (the other kind of script runs). */
void script_kill(client *c, int is_eval);
/* The running script and its start (unix ms), for FUNCTION STATS: 0 when
 * none runs. */
int script_running(int *is_eval, int64_t *start_ms);

/* For the dispatcher. A busy script runs: 1, with the -BUSY text for the
 * kind of script in *err. Also 1 on a thread serving connections while
 * busy (then allowed commands run taking no keyspace lock). */
int script_busy(const char **err);
/* Before a command of c: while a script runs and is not yet busy, wait
 * (not on the script's own thread, nor for a primary's stream). */
void script_gate_wait(const client *c);

/* From any thread: the shebang flags (SCRIPT_FLAG_*) of the cached script
 * sha (40 lowercase hex digits) into *flags, 0; -1 when it is not cached.
 * For EVALSHA's command flags before it runs (CLIENT PAUSE WRITE, ...). */
int script_cached_flags(const char *sha, int *flags);
/* From any thread, for INFO: the cached scripts, the bytes of their Lua
 * state and of their bodies and shas. */
void script_memory(long *scripts, size_t *vm, size_t *cache);

/* DEBUG SET-DISABLE-DENY-SCRIPTS: while on, scripts may call the commands
 * flagged noscript (a Redis test knob). */
void script_set_disable_deny(int on);

#endif
