/* lua_cmsgpack.c -- the `cmsgpack` library of the scripting state:
 * MessagePack pack, unpack, unpack_one and unpack_limit, producing and
 * accepting exactly what Redis 7.0 scripts do.
 *
 * Packing. A number equal to its int64 conversion (and not infinite) is an
 * integer in its smallest encoding (fixint, u8..u64 for positives, i8..i64
 * for negatives); other numbers are a float32 when the float converts back
 * to the same double, else a float64. Strings use fixstr/str8/str16/str32
 * (never bin). A table whose keys are exactly the numbers 1..N (each an
 * int-sized positive integer) is an array of N elements read with the
 * ordinary index (so __index applies), the empty table included; any other
 * table is a map in lua_next order. Tables nested 16 deep, and every value
 * that is not a string, number, boolean or table, pack as nil. Each
 * argument of pack is packed in turn and the results are concatenated.
 *
 * Unpacking. Integers become Lua numbers (u64 through the signed Lua
 * integer, so values above 2^63 wrap negative); arrays are tables indexed
 * from 1; maps are tables (a nil or NaN key is Lua's own error); bin, ext
 * and 0xc1 are "Bad data format in input.", a truncated value "Missing
 * bytes in input.". The decoder uses the Lua stack as the reference does
 * (one slot per open container and one per pending key or index, checked
 * with luaL_checkstack), so deep or very long inputs fail at the same point
 * with the same "stack overflow" error. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cmd/server/lua_libs.h"

#define LMP_MAX_NESTING 16

/* ------------------------------------------------------------------------ */
/* Packing into a luaL_Buffer-like growable buffer of the Lua allocator */

typedef struct {
    unsigned char *p;
    size_t len, cap;
    lua_State *l;
} lmp_buf;

static void lmp_put(lmp_buf *b, const void *s, size_t n) {
    if (b->cap - b->len < n) {
        size_t want = b->len + n;
        if (want < b->len || want >= SIZE_MAX / 2) abort();
        want *= 2;
        void *ud;
        lua_Alloc f = lua_getallocf(b->l, &ud);
        unsigned char *np = f(ud, b->p, b->cap, want);
        if (!np) abort();
        b->p = np;
        b->cap = want;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* tag followed by the low nbytes of v, big endian. */
static void lmp_put_tagged(lmp_buf *b, unsigned char tag, uint64_t v, int nbytes) {
    unsigned char out[9];
    out[0] = tag;
    for (int i = 0; i < nbytes; i++) out[1 + i] = (unsigned char)(v >> (8 * (nbytes - 1 - i)));
    lmp_put(b, out, (size_t)nbytes + 1);
}

static void lmp_put_str(lmp_buf *b, const char *s, size_t n) {
    if (n < 32)
        lmp_put_tagged(b, (unsigned char)(0xa0 | n), 0, 0);
    else if (n <= 0xff)
        lmp_put_tagged(b, 0xd9, n, 1);
    else if (n <= 0xffff)
        lmp_put_tagged(b, 0xda, n, 2);
    else
        lmp_put_tagged(b, 0xdb, n, 4);
    lmp_put(b, s, n);
}

static void lmp_put_int(lmp_buf *b, int64_t n) {
    if (n >= 0) {
        if (n <= 127)
            lmp_put_tagged(b, (unsigned char)n, 0, 0);
        else if (n <= 0xff)
            lmp_put_tagged(b, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff)
            lmp_put_tagged(b, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL)
            lmp_put_tagged(b, 0xce, (uint64_t)n, 4);
        else
            lmp_put_tagged(b, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32)
            lmp_put_tagged(b, (unsigned char)(int8_t)n, 0, 0);
        else if (n >= -128)
            lmp_put_tagged(b, 0xd0, (uint64_t)n, 1);
        else if (n >= -32768)
            lmp_put_tagged(b, 0xd1, (uint64_t)n, 2);
        else if (n >= -2147483648LL)
            lmp_put_tagged(b, 0xd2, (uint64_t)n, 4);
        else
            lmp_put_tagged(b, 0xd3, (uint64_t)n, 8);
    }
}

static void lmp_put_number(lmp_buf *b, lua_Number n) {
    if (!isinf(n) && (lua_Number)(int64_t)n == n) {
        lmp_put_int(b, (int64_t)n);
        return;
    }
    float f = (float)n;
    if ((double)f == n) {
        uint32_t u;
        memcpy(&u, &f, 4);
        lmp_put_tagged(b, 0xca, u, 4);
    } else {
        uint64_t u;
        memcpy(&u, &n, 8);
        lmp_put_tagged(b, 0xcb, u, 8);
    }
}

static void lmp_put_count(lmp_buf *b, unsigned char fix, unsigned char tag16, size_t n) {
    if (n <= 15)
        lmp_put_tagged(b, (unsigned char)(fix | n), 0, 0);
    else if (n <= 65535)
        lmp_put_tagged(b, tag16, n, 2);
    else
        lmp_put_tagged(b, (unsigned char)(tag16 + 1), n, 4);
}

/* Whether the table on top has exactly the keys 1..N. */
static int lmp_is_array(lua_State *l) {
    int top = lua_gettop(l);
    int count = 0, max = 0;
    luaL_checkstack(l, 2, "in function table_is_an_array");
    lua_pushnil(l);
    while (lua_next(l, -2)) {
        lua_pop(l, 1);
        lua_Number k;
        if (lua_type(l, -1) != LUA_TNUMBER || (k = lua_tonumber(l, -1)) <= 0 || isinf(k) || (lua_Number)(int)k != k) {
            lua_settop(l, top);
            return 0;
        }
        if (k > max) max = (int)k;
        count++;
    }
    lua_settop(l, top);
    return max == count;
}

static void lmp_put_value(lua_State *l, lmp_buf *b, int level);

static void lmp_put_table(lua_State *l, lmp_buf *b, int level) {
    if (lmp_is_array(l)) {
        size_t n = lua_objlen(l, -1);
        lmp_put_count(b, 0x90, 0xdc, n);
        luaL_checkstack(l, 1, "in function mp_encode_lua_table_as_array");
        for (size_t j = 1; j <= n; j++) {
            lua_pushnumber(l, (lua_Number)j);
            lua_gettable(l, -2);
            lmp_put_value(l, b, level + 1);
        }
        return;
    }
    size_t n = 0;
    luaL_checkstack(l, 3, "in function mp_encode_lua_table_as_map");
    lua_pushnil(l);
    while (lua_next(l, -2)) {
        lua_pop(l, 1);
        n++;
    }
    lmp_put_count(b, 0x80, 0xde, n);
    lua_pushnil(l);
    while (lua_next(l, -2)) {
        lua_pushvalue(l, -2);
        lmp_put_value(l, b, level + 1); /* the key */
        lmp_put_value(l, b, level + 1); /* the value */
    }
}

/* Pack the value on top and pop it. */
static void lmp_put_value(lua_State *l, lmp_buf *b, int level) {
    int t = lua_type(l, -1);
    if (t == LUA_TTABLE && level == LMP_MAX_NESTING) t = LUA_TNIL;
    switch (t) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(l, -1, &n);
        lmp_put_str(b, s, n);
        break;
    }
    case LUA_TBOOLEAN:
        lmp_put_tagged(b, lua_toboolean(l, -1) ? 0xc3 : 0xc2, 0, 0);
        break;
    case LUA_TNUMBER:
        lmp_put_number(b, lua_tonumber(l, -1));
        break;
    case LUA_TTABLE:
        lmp_put_table(l, b, level);
        break;
    default:
        lmp_put_tagged(b, 0xc0, 0, 0);
    }
    lua_pop(l, 1);
}

static int lmp_pack(lua_State *l) {
    int nargs = lua_gettop(l);
    if (nargs == 0) return luaL_argerror(l, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(l, nargs)) return luaL_argerror(l, 0, "Too many arguments for MessagePack pack.");
    lmp_buf b = {NULL, 0, 0, l};
    for (int i = 1; i <= nargs; i++) {
        luaL_checkstack(l, 1, "in function mp_check");
        lua_pushvalue(l, i);
        lmp_put_value(l, &b, 0);
        lua_pushlstring(l, (const char *)b.p, b.len);
        b.len = 0;
    }
    void *ud;
    lua_Alloc f = lua_getallocf(l, &ud);
    f(ud, b.p, b.cap, 0);
    lua_concat(l, nargs);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Unpacking */

enum { LMP_OK, LMP_EOF, LMP_BADFMT };

typedef struct {
    const unsigned char *p;
    size_t left;
    int err;
} lmp_cur;

static uint64_t lmp_be(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

/* Whether n more bytes are there; sets EOF otherwise. */
static int lmp_need(lmp_cur *c, size_t n) {
    if (c->left >= n) return 1;
    c->err = LMP_EOF;
    return 0;
}

static void lmp_skip(lmp_cur *c, size_t n) {
    c->p += n;
    c->left -= n;
}

static void lmp_get_value(lua_State *l, lmp_cur *c);

static void lmp_get_array(lua_State *l, lmp_cur *c, size_t n) {
    lua_Number idx = 1;
    lua_newtable(l);
    luaL_checkstack(l, 1, "in function mp_decode_to_lua_array");
    while (n--) {
        lua_pushnumber(l, idx++);
        lmp_get_value(l, c);
        if (c->err) return;
        lua_settable(l, -3);
    }
}

static void lmp_get_map(lua_State *l, lmp_cur *c, size_t n) {
    lua_newtable(l);
    while (n--) {
        lmp_get_value(l, c);
        if (c->err) return;
        lmp_get_value(l, c);
        if (c->err) return;
        lua_settable(l, -3);
    }
}

/* A string of the length held in the lenbytes after the tag. */
static void lmp_get_str(lua_State *l, lmp_cur *c, int lenbytes) {
    if (!lmp_need(c, (size_t)lenbytes + 1)) return;
    size_t n = (size_t)lmp_be(c->p + 1, lenbytes);
    lmp_skip(c, (size_t)lenbytes + 1);
    if (!lmp_need(c, n)) return;
    lua_pushlstring(l, (const char *)c->p, n);
    lmp_skip(c, n);
}

/* A container whose count is held in the lenbytes after the tag. */
static void lmp_get_container(lua_State *l, lmp_cur *c, int lenbytes, int is_map) {
    if (!lmp_need(c, (size_t)lenbytes + 1)) return;
    size_t n = (size_t)lmp_be(c->p + 1, lenbytes);
    lmp_skip(c, (size_t)lenbytes + 1);
    if (is_map)
        lmp_get_map(l, c, n);
    else
        lmp_get_array(l, c, n);
}

/* A fixed-size scalar: tag plus n bytes, as a big-endian word in *v. */
static int lmp_get_word(lmp_cur *c, int n, uint64_t *v) {
    if (!lmp_need(c, (size_t)n + 1)) return 0;
    *v = lmp_be(c->p + 1, n);
    lmp_skip(c, (size_t)n + 1);
    return 1;
}

/* Decode one value at the cursor and push it (nothing on error). */
static void lmp_get_value(lua_State *l, lmp_cur *c) {
    if (!lmp_need(c, 1)) return;
    luaL_checkstack(l, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
    unsigned char t = c->p[0];
    uint64_t v;
    switch (t) {
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
        if (lmp_get_word(c, 1 << (t - 0xcc), &v)) lua_pushinteger(l, (lua_Integer)v);
        return;
    case 0xd0:
        if (lmp_get_word(c, 1, &v)) lua_pushinteger(l, (int8_t)v);
        return;
    case 0xd1:
        if (lmp_get_word(c, 2, &v)) lua_pushinteger(l, (int16_t)v);
        return;
    case 0xd2:
        if (lmp_get_word(c, 4, &v)) lua_pushinteger(l, (int32_t)v);
        return;
    case 0xd3:
        if (lmp_get_word(c, 8, &v)) lua_pushnumber(l, (lua_Number)(int64_t)v);
        return;
    case 0xc0:
        lua_pushnil(l);
        lmp_skip(c, 1);
        return;
    case 0xc2:
    case 0xc3:
        lua_pushboolean(l, t == 0xc3);
        lmp_skip(c, 1);
        return;
    case 0xca:
        if (lmp_get_word(c, 4, &v)) {
            uint32_t u = (uint32_t)v;
            float f;
            memcpy(&f, &u, 4);
            lua_pushnumber(l, f);
        }
        return;
    case 0xcb:
        if (lmp_get_word(c, 8, &v)) {
            double d;
            memcpy(&d, &v, 8);
            lua_pushnumber(l, d);
        }
        return;
    case 0xd9:
        lmp_get_str(l, c, 1);
        return;
    case 0xda:
        lmp_get_str(l, c, 2);
        return;
    case 0xdb:
        lmp_get_str(l, c, 4);
        return;
    case 0xdc:
    case 0xdd:
        lmp_get_container(l, c, t == 0xdc ? 2 : 4, 0);
        return;
    case 0xde:
    case 0xdf:
        lmp_get_container(l, c, t == 0xde ? 2 : 4, 1);
        return;
    default:
        break;
    }
    if (t < 0x80) {
        lua_pushinteger(l, t);
        lmp_skip(c, 1);
    } else if (t >= 0xe0) {
        lua_pushinteger(l, (int8_t)t);
        lmp_skip(c, 1);
    } else if ((t & 0xe0) == 0xa0) {
        size_t n = t & 0x1f;
        if (!lmp_need(c, 1 + n)) return;
        lua_pushlstring(l, (const char *)c->p + 1, n);
        lmp_skip(c, 1 + n);
    } else if ((t & 0xf0) == 0x90) {
        lmp_skip(c, 1);
        lmp_get_array(l, c, t & 0xf);
    } else if ((t & 0xf0) == 0x80) {
        lmp_skip(c, 1);
        lmp_get_map(l, c, t & 0xf);
    } else {
        c->err = LMP_BADFMT;
    }
}

/* Decode up to limit values from offset (both 0: everything, and no
 * offset is returned); otherwise the next offset (-1 at the end) comes
 * first, then the values. */
static int lmp_unpack_from(lua_State *l, lua_Integer limit, lua_Integer offset) {
    size_t len;
    const char *s = luaL_checklstring(l, 1, &len);
    int all = !limit && !offset;
    if (offset < 0 || limit < 0)
        return luaL_error(l, "Invalid request to unpack with offset of %d and limit of %d.", (int)offset, (int)len);
    if ((size_t)offset > len)
        return luaL_error(l, "Start offset %d greater than input length %d.", (int)offset, (int)len);
    if (all) limit = INT_MAX;
    lmp_cur c = {(const unsigned char *)s + offset, len - (size_t)offset, LMP_OK};
    int cnt;
    for (cnt = 0; c.left > 0 && cnt < limit; cnt++) {
        lmp_get_value(l, &c);
        if (c.err == LMP_EOF) return luaL_error(l, "Missing bytes in input.");
        if (c.err == LMP_BADFMT) return luaL_error(l, "Bad data format in input.");
    }
    if (all) return cnt;
    luaL_checkstack(l, 1, "in function mp_unpack_full");
    lua_pushinteger(l, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
    lua_insert(l, 2);
    return cnt + 1;
}

static int lmp_unpack(lua_State *l) { return lmp_unpack_from(l, 0, 0); }

static int lmp_unpack_one(lua_State *l) {
    lua_Integer offset = luaL_optinteger(l, 2, 0);
    lua_pop(l, lua_gettop(l) - 1); /* none left when called with none */
    return lmp_unpack_from(l, 1, offset);
}

static int lmp_unpack_limit(lua_State *l) {
    lua_Integer limit = luaL_checkinteger(l, 2);
    lua_Integer offset = luaL_optinteger(l, 3, 0);
    lua_pop(l, lua_gettop(l) - 1);
    return lmp_unpack_from(l, limit, offset);
}

int lmsgpack_open(lua_State *l) {
    static const luaL_Reg funcs[] = {
        {"pack", lmp_pack},
        {"unpack", lmp_unpack},
        {"unpack_one", lmp_unpack_one},
        {"unpack_limit", lmp_unpack_limit},
        {NULL, NULL},
    };
    lua_newtable(l);
    for (const luaL_Reg *r = funcs; r->name; r++) {
        lua_pushcfunction(l, r->func);
        lua_setfield(l, -2, r->name);
    }
    lua_pushliteral(l, "cmsgpack");
    lua_setfield(l, -2, "_NAME");
    lua_pushliteral(l, "lua-cmsgpack 0.4.0");
    lua_setfield(l, -2, "_VERSION");
    lua_pushliteral(l, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(l, -2, "_COPYRIGHT");
    lua_pushliteral(l, "MessagePack C implementation for Lua");
    lua_setfield(l, -2, "_DESCRIPTION");
    lua_pushvalue(l, -1);
    lua_setglobal(l, "cmsgpack");
    return 1;
}
