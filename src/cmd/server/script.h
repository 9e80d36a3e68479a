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

#endif
