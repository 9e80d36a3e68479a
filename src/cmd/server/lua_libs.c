/* lua_libs.c -- the scripting state's libraries and its read-only globals.
 *
 * Libraries. cjson and bit are Debian's lua-cjson and lua-bitop (the same
 * upstream releases Redis 7.0 carries: cjson 2.1.0, bitop 1.0.2), struct
 * and cmsgpack are ours (lua_struct.c, lua_cmsgpack.c). cjson's encode and
 * decode are wrapped by a guard that runs the original C function in the
 * same call frame (same upvalue, so the same configuration, the same
 * function name and error positions), after refusing inputs that would
 * overflow the int lengths of the 2.1.0 buffer code: Redis patched those
 * (size_t lengths); with Debian's build a string over LCJSON_MAX_STRING
 * bytes, or an encode output bound over LCJSON_MAX_OUTPUT, is an error
 * instead. bit.tohex is guarded against the width that overflows in
 * LuaBitOp 1.0.2 (Redis patched its copy; see lbit_tohex).
 *
 * Read-only tables. Redis 7.0 patches its Lua VM with a readonly flag on
 * tables; the Debian Lua has none, so protection is built from proxies:
 * every protected table T is replaced, wherever it is referenced from
 * another protected table (and as the globals table), by an empty proxy P
 * whose metatable has __index = T and __newindex = an error. Reads go
 * through to T; any new field written to P lands in __newindex. The raw
 * primitives that would see the proxy's emptiness or write into it
 * (rawget, rawset, next, pairs, setmetatable, getmetatable, table.insert,
 * table.foreach) are wrapped to act on T, or to refuse, when given a proxy.
 * The registry maps proxy -> T (LUALIBS_RO) and T -> proxy (LUALIBS_PROXY).
 * Invariant: no protected table is reachable from a script except through
 * its proxy; T itself stays writable from C (lualibs_set_global).
 *
 * Missing globals: T_G's own metatable has an __index that raises Redis's
 * "Script attempted to access nonexistent global variable" error. */
#include "cmd/server/lua_libs.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua-bitop.h>
#include <lua-cjson.h>
#include <lualib.h>

#define LUALIBS_RO "goblin_ro"       /* proxy -> protected table */
#define LUALIBS_PROXY "goblin_proxy" /* protected table -> proxy */

#define LCJSON_MAX_STRING ((size_t)(INT_MAX - 2) / 6)
#define LCJSON_MAX_OUTPUT ((size_t)INT_MAX / 2)

/* ------------------------------------------------------------------------ */
/* cjson guard */

/* An upper bound of the encoded size of the value at idx; SIZE_MAX once
 * over LCJSON_MAX_OUTPUT. A path deeper than cjson can encode (its
 * lua_checkstack fails first) stops the walk with *deep set: cjson then
 * reports the nesting itself, and a cyclic table costs no more here than
 * there. */
static size_t lcjson_bound(lua_State *l, int idx, int depth, int *deep) {
    switch (lua_type(l, idx)) {
    case LUA_TSTRING: {
        size_t n = lua_objlen(l, idx);
        return n > LCJSON_MAX_STRING ? SIZE_MAX : n * 6 + 2;
    }
    case LUA_TTABLE: {
        if (depth > 3000 || !lua_checkstack(l, 3)) {
            *deep = 1;
            return 0;
        }
        size_t total = 2;
        int t = idx < 0 ? lua_gettop(l) + idx + 1 : idx;
        lua_pushnil(l);
        while (lua_next(l, t)) {
            size_t k = lcjson_bound(l, -2, depth + 1, deep);
            size_t v = *deep ? 0 : lcjson_bound(l, -1, depth + 1, deep);
            lua_pop(l, 1);
            if (k == SIZE_MAX || v == SIZE_MAX || *deep || (total += k + v + 2) > LCJSON_MAX_OUTPUT) {
                lua_pop(l, 1);
                return *deep ? 0 : SIZE_MAX;
            }
        }
        return total;
    }
    default:
        return 32;
    }
}

/* Upvalue 1: cjson's configuration (read by the original through
 * lua_upvalueindex(1) of the running closure), 2: the original. */
static int lcjson_encode(lua_State *l) {
    luaL_argcheck(l, lua_gettop(l) == 1, 1, "expected 1 argument");
    int deep = 0;
    if (lcjson_bound(l, 1, 0, &deep) > LCJSON_MAX_OUTPUT) return luaL_error(l, "Cannot serialise, value too large");
    return lua_tocfunction(l, lua_upvalueindex(2))(l);
}

static int lcjson_decode(lua_State *l) {
    luaL_argcheck(l, lua_gettop(l) == 1, 1, "expected 1 argument");
    size_t n;
    luaL_checklstring(l, 1, &n);
    if (n > LCJSON_MAX_OUTPUT) return luaL_error(l, "Cannot decode, input too large");
    return lua_tocfunction(l, lua_upvalueindex(2))(l);
}

static void lcjson_wrap(lua_State *l, const char *name, lua_CFunction guard);

/* cjson.new: a fresh module, its encode, decode and new guarded in turn.
 * Upvalue 2: the original. */
static int lcjson_new(lua_State *l) {
    int n = lua_tocfunction(l, lua_upvalueindex(2))(l);
    lcjson_wrap(l, "encode", lcjson_encode);
    lcjson_wrap(l, "decode", lcjson_decode);
    lcjson_wrap(l, "new", lcjson_new);
    return n;
}

/* Replace field name of the table on top by guard, keeping the upvalue. */
static void lcjson_wrap(lua_State *l, const char *name, lua_CFunction guard) {
    lua_getfield(l, -1, name);
    if (!lua_getupvalue(l, -1, 1)) lua_pushnil(l);
    lua_pushvalue(l, -2);
    lua_pushcclosure(l, guard, 2);
    lua_setfield(l, -3, name);
    lua_pop(l, 1);
}

/* ------------------------------------------------------------------------ */
/* bit guard */

/* bit.tohex with a width of -2^31: LuaBitOp 1.0.2 negates it (overflow)
 * and writes far outside its buffer; Redis's copy clamps it to -(2^31-1),
 * and so does this guard before running the original in the same frame.
 * The width is converted as LuaBitOp does: the low 32 bits of the number
 * rounded through 2^52 + 2^51. Upvalue 1: the original. */
static int lbit_tohex(lua_State *l) {
    if (!lua_isnone(l, 2) && lua_isnumber(l, 2)) {
        double d = lua_tonumber(l, 2) + 6755399441055744.0;
        uint64_t bits;
        memcpy(&bits, &d, sizeof(bits));
        if ((uint32_t)bits == 0x80000000u) {
            lua_pushnumber(l, -2147483647.0);
            lua_replace(l, 2);
        }
    }
    return lua_tocfunction(l, lua_upvalueindex(1))(l);
}

/* ------------------------------------------------------------------------ */
/* Libraries */

static void load_lib(lua_State *l, const char *name, lua_CFunction open) {
    lua_pushcfunction(l, open);
    lua_pushstring(l, name);
    lua_call(l, 1, 1);
    /* Debian's cjson does not set its global (built without
     * ENABLE_CJSON_GLOBAL); set every one here. */
    lua_setglobal(l, name);
}

void lualibs_open(lua_State *l) {
    load_lib(l, "cjson", luaopen_cjson);
    lua_getglobal(l, "cjson");
    lcjson_wrap(l, "encode", lcjson_encode);
    lcjson_wrap(l, "decode", lcjson_decode);
    lcjson_wrap(l, "new", lcjson_new);
    lua_pop(l, 1);
    load_lib(l, "struct", lstruct_open);
    load_lib(l, "cmsgpack", lmsgpack_open);
    load_lib(l, "bit", luaopen_bit);
    lua_getglobal(l, "bit");
    lua_getfield(l, -1, "tohex");
    lua_pushcclosure(l, lbit_tohex, 1);
    lua_setfield(l, -2, "tohex");
    lua_pop(l, 1);
}

/* ------------------------------------------------------------------------ */
/* Read-only tables */

/* Push the protected table behind the value at idx, or nothing (0). */
static int ro_target(lua_State *l, int idx) {
    if (!lua_istable(l, idx)) return 0;
    lua_getfield(l, LUA_REGISTRYINDEX, LUALIBS_RO);
    lua_pushvalue(l, idx < 0 && idx > LUA_REGISTRYINDEX ? idx - 1 : idx);
    lua_rawget(l, -2);
    lua_remove(l, -2);
    if (lua_istable(l, -1)) return 1;
    lua_pop(l, 1);
    return 0;
}

static int ro_error(lua_State *l) {
    lua_pushstring(l, "Attempt to modify a readonly table");
    return lua_error(l);
}

/* __newindex of a proxy: the error at the script's line, as the VM's own. */
static int ro_newindex(lua_State *l) { return luaL_error(l, "Attempt to modify a readonly table"); }

static int ro_missing_global(lua_State *l) {
    if (!lua_isstring(l, 2)) luaL_error(l, "Second argument to luaProtectedTableError must be a string or number");
    return luaL_error(l, "Script attempted to access nonexistent global variable '%s'", lua_tostring(l, 2));
}

/* Push the proxy of the table at idx, creating it (and protecting what the
 * table holds) on first sight. */
static void ro_proxy_of(lua_State *l, int idx) {
    int t = idx < 0 ? lua_gettop(l) + idx + 1 : idx;
    luaL_checkstack(l, 6, "protecting tables");
    if (ro_target(l, t)) { /* already a proxy */
        lua_pop(l, 1);
        lua_pushvalue(l, t);
        return;
    }
    lua_getfield(l, LUA_REGISTRYINDEX, LUALIBS_PROXY);
    lua_pushvalue(l, t);
    lua_rawget(l, -2);
    if (lua_istable(l, -1)) {
        lua_remove(l, -2);
        return;
    }
    lua_pop(l, 1);
    /* Stack: proxies. New proxy P with its metatable. */
    lua_newtable(l);
    lua_newtable(l);
    lua_pushvalue(l, t);
    lua_setfield(l, -2, "__index");
    lua_pushcfunction(l, ro_newindex);
    lua_setfield(l, -2, "__newindex");
    lua_setmetatable(l, -2);
    /* proxies[T] = P, ro[P] = T, before descending (cycles). */
    lua_pushvalue(l, t);
    lua_pushvalue(l, -2);
    lua_rawset(l, -4);
    lua_getfield(l, LUA_REGISTRYINDEX, LUALIBS_RO);
    lua_pushvalue(l, -2);
    lua_pushvalue(l, t);
    lua_rawset(l, -3);
    lua_pop(l, 1);
    lua_remove(l, -2);
    /* Stack: P. Tables held by T are replaced by their proxies. */
    lua_pushnil(l);
    while (lua_next(l, t)) {
        if (lua_istable(l, -1)) {
            ro_proxy_of(l, -1);
            lua_pushvalue(l, -3);
            lua_insert(l, -2);
            lua_rawset(l, t);
        }
        lua_pop(l, 1);
    }
    /* The metatable stays T's (metamethods are read raw) but is protected
     * in turn, for getmetatable to hand out its proxy. */
    if (lua_getmetatable(l, t)) {
        ro_proxy_of(l, -1);
        lua_pop(l, 2);
    }
}

static int wrap_rawget(lua_State *l) {
    luaL_checktype(l, 1, LUA_TTABLE);
    luaL_checkany(l, 2);
    if (ro_target(l, 1)) lua_replace(l, 1);
    lua_settop(l, 2);
    lua_rawget(l, 1);
    return 1;
}

static int wrap_rawset(lua_State *l) {
    luaL_checktype(l, 1, LUA_TTABLE);
    luaL_checkany(l, 2);
    luaL_checkany(l, 3);
    if (ro_target(l, 1)) return ro_error(l);
    lua_settop(l, 3);
    lua_rawset(l, 1);
    return 1;
}

static int wrap_next(lua_State *l) {
    luaL_checktype(l, 1, LUA_TTABLE);
    if (ro_target(l, 1)) lua_replace(l, 1);
    lua_settop(l, 2);
    if (lua_next(l, 1)) return 2;
    lua_pushnil(l);
    return 1;
}

/* pairs: upvalue 1 is the wrapped next. */
static int wrap_pairs(lua_State *l) {
    luaL_checktype(l, 1, LUA_TTABLE);
    lua_pushvalue(l, lua_upvalueindex(1));
    lua_pushvalue(l, 1);
    lua_pushnil(l);
    return 3;
}

static int wrap_setmetatable(lua_State *l) {
    int t = lua_type(l, 2);
    luaL_checktype(l, 1, LUA_TTABLE);
    luaL_argcheck(l, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
    if (ro_target(l, 1)) return ro_error(l);
    if (luaL_getmetafield(l, 1, "__metatable")) luaL_error(l, "cannot change a protected metatable");
    lua_settop(l, 2);
    lua_setmetatable(l, 1);
    return 1;
}

static int wrap_getmetatable(lua_State *l) {
    luaL_checkany(l, 1);
    lua_settop(l, 1);
    if (ro_target(l, 1)) lua_replace(l, 1);
    if (!lua_getmetatable(l, 1)) {
        lua_pushnil(l);
        return 1;
    }
    luaL_getmetafield(l, 1, "__metatable");
    if (lua_gettop(l) > 2) return 1;
    /* A protected table's metatable is handed out as its proxy. */
    lua_getfield(l, LUA_REGISTRYINDEX, LUALIBS_PROXY);
    lua_pushvalue(l, 2);
    lua_rawget(l, -2);
    if (lua_istable(l, -1)) return 1;
    lua_pop(l, 2);
    return 1;
}

/* table.insert and table.foreach: upvalue 1 is the original. insert
 * refuses a proxy (it writes raw); foreach walks the table behind it. */
static int wrap_tinsert(lua_State *l) {
    if (ro_target(l, 1)) {
        lua_pop(l, 1);
        /* As the original would get there: an empty table, then the raw write. */
        if (lua_gettop(l) == 3)
            (void)luaL_checkint(l, 2);
        else if (lua_gettop(l) != 2)
            return luaL_error(l, "wrong number of arguments to 'insert'");
        return ro_error(l);
    }
    return lua_tocfunction(l, lua_upvalueindex(1))(l);
}

static int wrap_tforeach(lua_State *l) {
    if (ro_target(l, 1)) lua_replace(l, 1);
    return lua_tocfunction(l, lua_upvalueindex(1))(l);
}

/* unpack with the range check of Lua 5.1's later fix (the Debian 5.1.5
 * build lacks it: a huge range overflows the count and the stack). */
static int wrap_unpack(lua_State *l) {
    luaL_checktype(l, 1, LUA_TTABLE);
    int i = luaL_optint(l, 2, 1);
    int e = luaL_opt(l, luaL_checkint, 3, (int)lua_objlen(l, 1));
    if (i > e) return 0;
    unsigned n = (unsigned)e - (unsigned)i;
    if (n >= INT_MAX || !lua_checkstack(l, (int)++n)) return luaL_error(l, "too many results to unpack");
    lua_rawgeti(l, 1, i);
    while (i++ < e) lua_rawgeti(l, 1, i);
    return (int)n;
}

/* The reader of load(): the chunk pieces come from the function at 1; a
 * first piece starting with the binary signature gets a blank before it. */
typedef struct {
    int state; /* 0: first call, 1: blank given, piece pending, 2: normal */
    const char *piece;
    size_t n;
} load_reader;

static const char *load_read(lua_State *l, void *ud, size_t *size) {
    load_reader *r = ud;
    if (r->state == 1) {
        r->state = 2;
        *size = r->n;
        return r->piece;
    }
    luaL_checkstack(l, 2, "too many nested functions");
    lua_pushvalue(l, 1);
    lua_call(l, 0, 1);
    if (lua_isnil(l, -1)) {
        *size = 0;
        return NULL;
    }
    if (!lua_isstring(l, -1)) luaL_error(l, "reader function must return a string");
    lua_replace(l, 3);
    const char *s = lua_tolstring(l, 3, size);
    if (r->state == 0 && *size > 0 && s[0] == LUA_SIGNATURE[0]) {
        r->state = 1;
        r->piece = s;
        r->n = *size;
        *size = 1;
        return " ";
    }
    r->state = 2;
    return s;
}

static int load_result(lua_State *l, int status) {
    if (status == 0) return 1;
    lua_pushnil(l);
    lua_insert(l, -2);
    return 2;
}

static int wrap_load(lua_State *l) {
    const char *name = luaL_optstring(l, 2, "=(load)");
    load_reader r = {0, NULL, 0};
    luaL_checktype(l, 1, LUA_TFUNCTION);
    lua_settop(l, 3);
    lua_pushstring(l, name); /* anchors the chunk name while parsing */
    int rc = lua_load(l, load_read, &r, name);
    lua_remove(l, -2);
    return load_result(l, rc);
}

static int wrap_loadstring(lua_State *l) {
    size_t n;
    const char *s = luaL_checklstring(l, 1, &n);
    const char *name = luaL_optstring(l, 2, s);
    return load_result(l, lualibs_load(l, s, n, name));
}

typedef struct {
    const char *buf;
    size_t n;
    int state; /* 0: blank next, 1: buffer next, 2: done */
} buf_reader;

static const char *buf_read(lua_State *l, void *ud, size_t *size) {
    (void)l;
    buf_reader *r = ud;
    if (r->state == 0) {
        r->state = 1;
        *size = 1;
        return " ";
    }
    if (r->state == 1) {
        r->state = 2;
        *size = r->n;
        return r->buf;
    }
    *size = 0;
    return NULL;
}

/* The chunk name is kept on the stack while parsing: the parser holds it
 * unanchored and a collection during a long parse could free it (the
 * use-after-free Redis fixed in its Lua; Debian's 5.1.5 is unpatched). */
int lualibs_load(lua_State *l, const char *buf, size_t n, const char *name) {
    lua_pushstring(l, name);
    int rc;
    if (n == 0 || buf[0] != LUA_SIGNATURE[0]) {
        rc = luaL_loadbuffer(l, buf, n, name);
    } else {
        buf_reader r = {buf, n, 0};
        rc = lua_load(l, buf_read, &r, name);
    }
    lua_remove(l, -2);
    return rc;
}

static void set_wrapped(lua_State *l, const char *name, lua_CFunction f, int with_original) {
    if (with_original) {
        lua_getfield(l, -1, name);
        lua_pushcclosure(l, f, 1);
    } else {
        lua_pushcfunction(l, f);
    }
    lua_setfield(l, -2, name);
}

void lualibs_protect(lua_State *l) {
    /* Not in Redis's scripting globals. */
    static const char *const gone[] = {"debug", "getfenv", "setfenv", "newproxy", NULL};
    for (const char *const *g = gone; *g; g++) {
        lua_pushnil(l);
        lua_setglobal(l, *g);
    }
    lua_newtable(l);
    lua_setfield(l, LUA_REGISTRYINDEX, LUALIBS_RO);
    lua_newtable(l);
    lua_setfield(l, LUA_REGISTRYINDEX, LUALIBS_PROXY);

    /* The primitives, replaced before the walk so that their tables are
     * protected with them. */
    lua_pushvalue(l, LUA_GLOBALSINDEX);
    set_wrapped(l, "rawget", wrap_rawget, 0);
    set_wrapped(l, "rawset", wrap_rawset, 0);
    set_wrapped(l, "next", wrap_next, 0);
    lua_getfield(l, -1, "next");
    lua_pushcclosure(l, wrap_pairs, 1);
    lua_setfield(l, -2, "pairs");
    set_wrapped(l, "setmetatable", wrap_setmetatable, 0);
    set_wrapped(l, "getmetatable", wrap_getmetatable, 0);
    set_wrapped(l, "load", wrap_load, 0);
    set_wrapped(l, "loadstring", wrap_loadstring, 0);
    set_wrapped(l, "unpack", wrap_unpack, 0);
    lua_getfield(l, -1, "table");
    set_wrapped(l, "insert", wrap_tinsert, 1);
    set_wrapped(l, "foreach", wrap_tforeach, 1);
    lua_pop(l, 1);

    /* Missing globals raise. */
    lua_newtable(l);
    lua_pushcfunction(l, ro_missing_global);
    lua_setfield(l, -2, "__index");
    lua_setmetatable(l, -2);

    /* Stack: T_G. Its proxy becomes the globals table. */
    ro_proxy_of(l, -1);
    /* Strings index their library through the proxy too, and their
     * metatable is protected like the globals (getmetatable('') hands out
     * its proxy). */
    lua_pushliteral(l, "");
    if (lua_getmetatable(l, -1)) {
        lua_getfield(l, -4, "string");
        lua_setfield(l, -2, "__index");
        ro_proxy_of(l, -1);
        lua_pop(l, 2);
    }
    lua_pop(l, 1);
    lua_replace(l, LUA_GLOBALSINDEX);
    lua_pop(l, 1);
}

void lualibs_set_global(lua_State *l, const char *name) {
    if (ro_target(l, LUA_GLOBALSINDEX)) {
        lua_insert(l, -2);
        lua_setfield(l, -2, name); /* raw: T_G has no __newindex */
        lua_pop(l, 1);
    } else {
        lua_setglobal(l, name);
    }
}

void lualibs_protect_table(lua_State *l) {
    lua_newtable(l);
    lua_pushcfunction(l, ro_missing_global);
    lua_setfield(l, -2, "__index");
    lua_setmetatable(l, -2);
    ro_proxy_of(l, -1);
    lua_replace(l, -2);
}
