/* lua_libs.h -- what the scripting state holds besides the redis API: the
 * cjson, bit, struct and cmsgpack libraries as Redis 7.0 exposes them, the
 * read-only protection of the globals and of every table reachable from
 * them, and a chunk loader that refuses precompiled (binary) chunks. */
#ifndef GOBLIN_CMD_LUA_LIBS_H
#define GOBLIN_CMD_LUA_LIBS_H
#include <stddef.h>

#include <lua.h>

/* The `struct` and `cmsgpack` libraries: each sets its global and leaves
 * its table on the stack (lua_struct.c, lua_cmsgpack.c). */
int lstruct_open(lua_State *l);
int lmsgpack_open(lua_State *l);

/* Load cjson, struct, cmsgpack and bit as globals (after the base libraries). */
void lualibs_open(lua_State *l);

/* Make the globals table and every table reachable from it read-only, as
 * Redis 7.0 does once the state is set up: a write, rawset or setmetatable
 * on one of them raises "Attempt to modify a readonly table", reading a
 * missing global raises "Script attempted to access nonexistent global
 * variable 'NAME'". Removes the `debug` global. Call last, once. */
void lualibs_protect(lua_State *l);

/* The table on top, as lualibs_protect protects the globals (after it, on
 * the same state): a missing name raises the nonexistent-global error, the
 * table and the tables it holds become read-only, and the table on top is
 * replaced by its proxy (a function library's load-time globals). */
void lualibs_protect_table(lua_State *l);

/* Set global name to the value on top (popped), through the protection
 * (KEYS, ARGV). */
void lualibs_set_global(lua_State *l, const char *name);

/* luaL_loadbuffer, except that a chunk starting with the binary signature
 * is parsed as source text (and so fails to compile), as Redis's Lua does:
 * precompiled chunks could break out of the sandbox. */
int lualibs_load(lua_State *l, const char *buf, size_t n, const char *name);

#endif
