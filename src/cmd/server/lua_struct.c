/* lua_struct.c -- the `struct` library of the scripting state: pack,
 * unpack and size of C-like binary records, with the format characters and
 * the error texts Redis 7.0 scripts see.
 *
 * A format is read left to right, one option at a time:
 *   '>' '<'   big / little endian from here on (native, i.e. little, first)
 *   '!n'      maximum alignment n (a power of two; '!' alone: 8)
 *   'x'       one zero byte              ' '  ignored
 *   b B h H l L T   integers of 1, 1, 2, 2, 8, 8, 8 bytes (lower case signed)
 *   i I [n]   integers of n bytes (default 4, at most 32)
 *   f d       float, double
 *   c [n]     n chars (default 1); n == 0: the whole string when packing,
 *             the previously unpacked number as the length when unpacking
 *   s         a zero-terminated string
 * Each item is aligned to min(its size, the maximum alignment), counted
 * from the start of the record; 'c' is never aligned. Unknown characters
 * are an error in pack and unpack, and skipped by size.
 *
 * Integers travel through a 64-bit unsigned word: packing converts the Lua
 * number with the C conversions (signed for negative numbers), wider sizes
 * get zero bytes above the word; unpacking keeps the last 8 bytes read and
 * sign-extends from the item's top bit (the shift taken modulo 64, as the
 * machine instruction does). Both are what the reference build does on
 * x86-64 and the fuzz comparison checks them byte for byte. */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cmd/server/lua_libs.h"

#define LSTRUCT_MAXINT 32 /* widest integer item, in bytes */
#define LSTRUCT_MAXALIGN 8

typedef struct {
    int little; /* byte order of the following items */
    int align;  /* maximum alignment */
} lstruct_opts;

/* An optional decimal count at *fmt, or dflt. */
static int lstruct_count(lua_State *l, const char **fmt, int dflt) {
    if (!isdigit((unsigned char)**fmt)) return dflt;
    int a = 0;
    while (isdigit((unsigned char)**fmt)) {
        int d = **fmt - '0';
        if (a > INT_MAX / 10 || a * 10 > INT_MAX - d) luaL_error(l, "integral size overflow");
        a = a * 10 + d;
        (*fmt)++;
    }
    return a;
}

/* The size in bytes of option opt (its count read from *fmt), 0 for the
 * options that hold no data. */
static size_t lstruct_size(lua_State *l, int opt, const char **fmt) {
    switch (opt) {
    case 'b':
    case 'B':
    case 'x':
        return 1;
    case 'h':
    case 'H':
        return 2;
    case 'f':
        return 4;
    case 'l':
    case 'L':
    case 'T':
    case 'd':
        return 8;
    case 'c':
        return (size_t)lstruct_count(l, fmt, 1);
    case 'i':
    case 'I': {
        int n = lstruct_count(l, fmt, 4);
        if (n > LSTRUCT_MAXINT) luaL_error(l, "integral size %d is larger than limit of %d", n, LSTRUCT_MAXINT);
        return (size_t)n;
    }
    default:
        return 0;
    }
}

/* Padding that aligns an item of size at offset pos. */
static size_t lstruct_pad(size_t pos, const lstruct_opts *o, int opt, size_t size) {
    if (size == 0 || opt == 'c') return 0;
    if (size > (size_t)o->align) size = (size_t)o->align;
    return (size - (pos & (size - 1))) & (size - 1);
}

/* The options that only change state: byte order, alignment, blanks. */
static void lstruct_control(lua_State *l, int opt, const char **fmt, lstruct_opts *o) {
    if (opt == ' ') return;
    if (opt == '>' || opt == '<') {
        o->little = opt == '<';
        return;
    }
    if (opt == '!') {
        int a = lstruct_count(l, fmt, LSTRUCT_MAXALIGN);
        if (a <= 0 || (a & (a - 1))) luaL_error(l, "alignment %d is not a power of 2", a);
        o->align = a;
        return;
    }
    luaL_argerror(l, 1, lua_pushfstring(l, "invalid format option '%c'", opt));
}

static void lstruct_put_int(lua_State *l, luaL_Buffer *b, int arg, int little, size_t size) {
    lua_Number n = luaL_checknumber(l, arg);
    uint64_t v = n < 0 ? (uint64_t)(int64_t)n : (uint64_t)n;
    char out[LSTRUCT_MAXINT];
    for (size_t i = 0; i < size; i++) {
        out[little ? i : size - 1 - i] = (char)(v & 0xff);
        v >>= 8;
    }
    luaL_addlstring(b, out, size);
}

/* Copy size bytes of a native (little-endian) value in the wanted order. */
static void lstruct_order(char *dst, const void *src, size_t size, int little) {
    const char *s = src;
    for (size_t i = 0; i < size; i++) dst[i] = little ? s[i] : s[size - 1 - i];
}

static int lstruct_pack(lua_State *l) {
    const char *fmt = luaL_checkstring(l, 1);
    lstruct_opts o = {1, 1};
    int arg = 2;
    size_t total = 0;
    luaL_Buffer b;
    lua_pushnil(l); /* keeps the arguments below the buffer's stack use */
    luaL_buffinit(l, &b);
    while (*fmt) {
        int opt = (unsigned char)*fmt++;
        size_t size = lstruct_size(l, opt, &fmt);
        size_t pad = lstruct_pad(total, &o, opt, size);
        total += pad;
        while (pad--) luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I':
            lstruct_put_int(l, &b, arg++, o.little, size);
            break;
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float f = (float)luaL_checknumber(l, arg++);
            char out[4];
            lstruct_order(out, &f, 4, o.little);
            luaL_addlstring(&b, out, 4);
            break;
        }
        case 'd': {
            double d = luaL_checknumber(l, arg++);
            char out[8];
            lstruct_order(out, &d, 8, o.little);
            luaL_addlstring(&b, out, 8);
            break;
        }
        case 'c':
        case 's': {
            size_t len;
            const char *s = luaL_checklstring(l, arg++, &len);
            if (size == 0) size = len;
            /* The argument named is the one after the string. */
            luaL_argcheck(l, len >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            lstruct_control(l, opt, &fmt, &o);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number lstruct_get_int(const char *p, int little, int is_signed, size_t size) {
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++) {
        v <<= 8;
        v |= (unsigned char)p[little ? size - 1 - i : i];
    }
    if (!is_signed) return (lua_Number)v;
    uint64_t mask = ~(uint64_t)0 << ((size * 8 - 1) & 63);
    if (v & mask) v |= mask;
    return (lua_Number)(int64_t)v;
}

static int lstruct_unpack(lua_State *l) {
    const char *fmt = luaL_checkstring(l, 1);
    size_t ld;
    const char *data = luaL_checklstring(l, 2, &ld);
    size_t pos = (size_t)luaL_optinteger(l, 3, 1);
    luaL_argcheck(l, pos > 0, 3, "offset must be 1 or greater");
    pos--;
    lstruct_opts o = {1, 1};
    int n = 0;
    while (*fmt) {
        int opt = (unsigned char)*fmt++;
        size_t size = lstruct_size(l, opt, &fmt);
        pos += lstruct_pad(pos, &o, opt, size);
        luaL_argcheck(l, size <= ld && pos <= ld - size, 2, "data string too short");
        luaL_checkstack(l, 2, "too many results");
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I':
            lua_pushnumber(l, lstruct_get_int(data + pos, o.little, islower(opt), size));
            n++;
            break;
        case 'x':
            break;
        case 'f': {
            float f;
            char in[4];
            lstruct_order(in, data + pos, 4, o.little);
            memcpy(&f, in, 4);
            lua_pushnumber(l, f);
            n++;
            break;
        }
        case 'd': {
            double d;
            char in[8];
            lstruct_order(in, data + pos, 8, o.little);
            memcpy(&d, in, 8);
            lua_pushnumber(l, d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(l, -1)) luaL_error(l, "format 'c0' needs a previous size");
                size = (size_t)lua_tonumber(l, -1);
                lua_pop(l, 1);
                n--;
                luaL_argcheck(l, size <= ld && pos <= ld - size, 2, "data string too short");
            }
            lua_pushlstring(l, data + pos, size);
            n++;
            break;
        case 's': {
            const char *z = memchr(data + pos, '\0', ld - pos);
            if (!z) luaL_error(l, "unfinished string in data");
            size = (size_t)(z - (data + pos)) + 1;
            lua_pushlstring(l, data + pos, size - 1);
            n++;
            break;
        }
        default:
            lstruct_control(l, opt, &fmt, &o);
        }
        pos += size;
    }
    lua_pushinteger(l, (lua_Integer)(pos + 1));
    return n + 1;
}

static int lstruct_sizeof(lua_State *l) {
    const char *fmt = luaL_checkstring(l, 1);
    lstruct_opts o = {1, 1};
    size_t pos = 0;
    while (*fmt) {
        int opt = (unsigned char)*fmt++;
        size_t size = lstruct_size(l, opt, &fmt);
        pos += lstruct_pad(pos, &o, opt, size);
        if (opt == 's') luaL_argerror(l, 1, "option 's' has no fixed size");
        if (opt == 'c' && size == 0) luaL_argerror(l, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt)) lstruct_control(l, opt, &fmt, &o);
        pos += size;
    }
    lua_pushinteger(l, (lua_Integer)pos);
    return 1;
}

int lstruct_open(lua_State *l) {
    static const luaL_Reg funcs[] = {
        {"pack", lstruct_pack},
        {"unpack", lstruct_unpack},
        {"size", lstruct_sizeof},
        {NULL, NULL},
    };
    luaL_register(l, "struct", funcs);
    return 1;
}
