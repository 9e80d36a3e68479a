/* function.h -- Redis 7.0 functions: FUNCTION *, FCALL, FCALL_RO.
 *
 * Libraries of Lua functions in a Lua state of their own, kept in the RDB
 * and the AOF through persist's function hooks (persist/rdb.h). */
#ifndef GOBLIN_CMD_FUNCTION_H
#define GOBLIN_CMD_FUNCTION_H
#include <stdint.h>

#include "cmd/command.h"

/* The flags the dispatcher checks for a script command: an FCALL of a
 * function with flags, or an EVAL whose body has a "#!lua" line, has the
 * write, denyoom and stale flags its script declares (Redis's
 * fcallGetCommandFlags / evalGetCommandFlags); any other call cmd's own.
 * Called before any lock. */
uint32_t script_dispatch_flags(const client *c, const cmd_def *cmd);

/* The live libraries and functions (INFO memory), without locks. */
void function_counts(long *libs, long *funcs);
/* For INFO: the bytes of the functions' Lua states and of the libraries'
 * names and code. */
void function_memory(size_t *vm, size_t *code);
#endif
