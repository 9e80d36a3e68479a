/* script.c -- Lua scripting (Redis 7.0 EVAL family and SCRIPT).
 *
 * One Lua 5.1 state. Every command here is CMD_LOCK_ALL: the keyspace write
 * lock makes a script atomic with respect to every client (as EXEC), and it
 * is also what serializes use of the Lua state and of the script cache
 * (a Lua table sha -> function in the registry).
 *
 * redis.call / redis.pcall build an argv, check the command the way Redis's
 * scriptCall does (unknown, arity, noscript, read-only scripts), run it with
 * cmd_call() on a scratch client (CLIENT_IN_EXEC: no blocking, no locks
 * since the write lock is held), and parse the RESP2/RESP3 bytes the
 * handler wrote back into Lua values. The script's return value is turned
 * into a reply on the calling client with Redis's conversion rules. */
#include "cmd/server/script.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "session/reply.h"
#include "util/sha1.h"
#include "util/strutil.h"
#include "base/config.h"
#include "base/log.h"

static lua_State *L;

/* The running script: its caller, sha, read-only mode, RESP version used
 * for redis.call replies (redis.setresp) and the scratch client. */
static struct {
    client *caller;
    const char *sha;
    int ro;
    int resp;
    client scratch;
} run;

#define SCRIPTS_KEY "goblin_scripts"

/* SCRIPT KILL arrives on another worker while a script runs (the script's
 * own worker is busy running it): these are shared through atomics. A
 * script counts as busy after BUSY_MS (busy-reply-threshold's default), as
 * Redis only reads SCRIPT KILL then; one that wrote cannot be killed. */
#define BUSY_MS 5000
static int64_t busy_since_ms; /* 0: no script running */
static int script_wrote;
static int kill_requested;

/* ------------------------------------------------------------------------ */
/* RESP -> Lua */

/* Parse one RESP value at *pp (bounded by end) and push it. Returns 0 on
 * success, -1 on malformed input (pushes nothing). */
static int resp_to_lua(lua_State *l, const char **pp, const char *end);
static void push_error(lua_State *l, const char *msg);
static void reply_error_cstr(client *c, const char *s);

static const char *line_end(const char *p, const char *end) {
    const char *q = memchr(p, '\r', (size_t)(end - p));
    return q && q + 1 < end ? q : NULL;
}

static int parse_count(const char *p, const char *e, long long *v) { return str_to_ll(p, (size_t)(e - p), v) ? 0 : -1; }

static void push_field_table(lua_State *l, const char *field, const char *p, size_t n) {
    lua_newtable(l);
    lua_pushstring(l, field);
    lua_pushlstring(l, p, n);
    lua_rawset(l, -3);
}

static int resp_to_lua(lua_State *l, const char **pp, const char *end) {
    const char *p = *pp;
    if (p >= end) return -1;
    char t = *p++;
    const char *e = line_end(p, end);
    if (!e) return -1;
    const char *next = e + 2;
    long long n;
    lua_checkstack(l, 8);
    switch (t) {
    case '+':
        push_field_table(l, "ok", p, (size_t)(e - p));
        break;
    case '-': {
        lua_pushlstring(l, p - 1, (size_t)(e - p) + 1); /* "-CODE msg" */
        push_error(l, lua_tostring(l, -1));
        lua_remove(l, -2);
        break;
    }
    case ':':
        if (parse_count(p, e, &n)) return -1;
        lua_pushnumber(l, (lua_Number)n);
        break;
    case '$':
    case '=':
        if (parse_count(p, e, &n)) return -1;
        if (n < 0) {
            lua_pushboolean(l, 0);
            break;
        }
        if (next + n + 2 > end) return -1;
        if (t == '$') {
            lua_pushlstring(l, next, (size_t)n);
        } else {
            /* Verbatim: "txt:" prefix then the string. */
            lua_newtable(l);
            lua_pushstring(l, "verbatim_string");
            lua_newtable(l);
            lua_pushstring(l, "format");
            lua_pushlstring(l, next, n >= 3 ? 3 : (size_t)n);
            lua_rawset(l, -3);
            lua_pushstring(l, "string");
            if (n >= 4)
                lua_pushlstring(l, next + 4, (size_t)n - 4);
            else
                lua_pushlstring(l, "", 0);
            lua_rawset(l, -3);
            lua_rawset(l, -3);
        }
        next += n + 2;
        break;
    case '*':
    case '>':
    case '~':
    case '%': {
        if (parse_count(p, e, &n)) return -1;
        if (n < 0) {
            lua_pushboolean(l, 0);
            break;
        }
        if (t == '~' || t == '%') {
            lua_newtable(l);
            lua_pushstring(l, t == '~' ? "set" : "map");
        }
        lua_newtable(l);
        for (long long i = 0; i < n; i++) {
            if (t == '%') {
                if (resp_to_lua(l, &next, end) || resp_to_lua(l, &next, end)) return -1;
                lua_settable(l, -3);
            } else if (t == '~') {
                if (resp_to_lua(l, &next, end)) return -1;
                lua_pushboolean(l, 1);
                lua_settable(l, -3);
            } else {
                lua_pushnumber(l, (lua_Number)(i + 1));
                if (resp_to_lua(l, &next, end)) return -1;
                lua_settable(l, -3);
            }
        }
        if (t == '~' || t == '%') lua_rawset(l, -3);
        break;
    }
    case '_':
        lua_pushnil(l);
        break;
    case '#':
        lua_pushboolean(l, p < e && *p == 't');
        break;
    case ',': {
        char buf[128];
        size_t len = (size_t)(e - p) < sizeof(buf) - 1 ? (size_t)(e - p) : sizeof(buf) - 1;
        memcpy(buf, p, len);
        buf[len] = '\0';
        lua_newtable(l);
        lua_pushstring(l, "double");
        lua_pushnumber(l, strtod(buf, NULL));
        lua_rawset(l, -3);
        break;
    }
    case '(':
        push_field_table(l, "big_number", p, (size_t)(e - p));
        break;
    case '|': {
        /* Attributes are skipped; the value follows. */
        if (parse_count(p, e, &n)) return -1;
        for (long long i = 0; i < 2 * n; i++) {
            if (resp_to_lua(l, &next, end)) return -1;
            lua_pop(l, 1);
        }
        *pp = next;
        return resp_to_lua(l, pp, end);
    }
    default:
        return -1;
    }
    *pp = next;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Lua -> reply */

static int table_field(lua_State *l, int idx, const char *field, int type) {
    lua_pushstring(l, field);
    lua_rawget(l, idx < 0 ? idx - 1 : idx);
    if (lua_type(l, -1) == type) return 1;
    lua_pop(l, 1);
    return 0;
}

static void lua_to_reply(client *c, lua_State *l, int depth) {
    int t = lua_type(l, -1);
    if (!lua_checkstack(l, 4) || depth > 1000) {
        reply_error(c, "ERR reached lua stack limit");
        lua_pop(l, 1);
        return;
    }
    switch (t) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(l, -1, &n);
        reply_bulk(c, s, n);
        break;
    }
    case LUA_TBOOLEAN:
        if (run.resp == 2) {
            if (lua_toboolean(l, -1))
                reply_int(c, 1);
            else
                reply_null(c);
        } else {
            reply_bool(c, lua_toboolean(l, -1));
        }
        break;
    case LUA_TNUMBER:
        reply_int(c, (long long)lua_tonumber(l, -1));
        break;
    case LUA_TTABLE: {
        if (table_field(l, -1, "err", LUA_TSTRING)) {
            const char *err = lua_tostring(l, -1);
            reply_error_cstr(c, err);
            lua_pop(l, 1);
            break;
        }
        if (table_field(l, -1, "ok", LUA_TSTRING)) {
            /* A status line cannot hold CR/LF: Redis replaces them. */
            const char *s = lua_tostring(l, -1);
            size_t n = strlen(s);
            char *tmp = malloc(n + 1);
            for (size_t i = 0; i < n; i++) tmp[i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
            tmp[n] = '\0';
            reply_raw(c, "+", 1);
            reply_raw(c, tmp, n);
            reply_raw(c, "\r\n", 2);
            free(tmp);
            lua_pop(l, 1);
            break;
        }
        if (table_field(l, -1, "double", LUA_TNUMBER)) {
            reply_double(c, lua_tonumber(l, -1));
            lua_pop(l, 1);
            break;
        }
        if (table_field(l, -1, "big_number", LUA_TSTRING)) {
            size_t n;
            const char *s = lua_tolstring(l, -1, &n);
            reply_bignum(c, s, n);
            lua_pop(l, 1);
            break;
        }
        if (table_field(l, -1, "map", LUA_TTABLE)) {
            long n = 0;
            lua_pushnil(l);
            while (lua_next(l, -2)) {
                n++;
                lua_pop(l, 1);
            }
            reply_map(c, n);
            lua_pushnil(l);
            while (lua_next(l, -2)) {
                lua_pushvalue(l, -2); /* key copy on top */
                lua_to_reply(c, l, depth + 1);
                lua_to_reply(c, l, depth + 1); /* value */
            }
            lua_pop(l, 1);
            break;
        }
        if (table_field(l, -1, "set", LUA_TTABLE)) {
            long n = 0;
            lua_pushnil(l);
            while (lua_next(l, -2)) {
                n++;
                lua_pop(l, 1);
            }
            reply_set(c, n);
            lua_pushnil(l);
            while (lua_next(l, -2)) {
                lua_pop(l, 1);
                lua_pushvalue(l, -1);
                lua_to_reply(c, l, depth + 1);
            }
            lua_pop(l, 1);
            break;
        }
        if (table_field(l, -1, "verbatim_string", LUA_TTABLE)) {
            if (table_field(l, -1, "format", LUA_TSTRING)) {
                if (table_field(l, -2, "string", LUA_TSTRING)) {
                    size_t n;
                    const char *s = lua_tolstring(l, -1, &n);
                    char ext[4] = {0};
                    strncpy(ext, lua_tostring(l, -2), 3);
                    reply_verbatim(c, s, n, ext);
                    lua_pop(l, 3);
                    break;
                }
                lua_pop(l, 1);
            }
            lua_pop(l, 1);
        }
        /* An array, up to the first nil. */
        size_t h = reply_defer(c);
        long n = 0;
        for (int j = 1;; j++) {
            lua_rawgeti(l, -1, j);
            if (lua_isnil(l, -1)) {
                lua_pop(l, 1);
                break;
            }
            lua_to_reply(c, l, depth + 1);
            n++;
        }
        reply_defer_array(c, h, n);
        break;
    }
    default:
        reply_null(c);
    }
    lua_pop(l, 1);
}

/* ------------------------------------------------------------------------ */
/* The redis library */

/* Push {err="CODE msg"} as Redis 7.0's luaPushError: "-CODE msg" is split
 * at its first space (no space: the code is ERR), "msg" gets the code ERR,
 * and the message loses CR/LF at both ends. C strings, as Redis's sds. */
static void push_error(lua_State *l, const char *err) {
    const char *code = "ERR", *msg = err;
    size_t codelen = 3;
    if (err[0] == '-') {
        const char *sp = strchr(err, ' ');
        if (sp) {
            code = err + 1;
            codelen = (size_t)(sp - code);
            msg = sp + 1;
        } else {
            msg = err + 1;
        }
    }
    size_t mlen = strlen(msg);
    while (mlen && (*msg == '\r' || *msg == '\n')) msg++, mlen--;
    while (mlen && (msg[mlen - 1] == '\r' || msg[mlen - 1] == '\n')) mlen--;
    lua_newtable(l);
    lua_pushstring(l, "err");
    luaL_Buffer b;
    luaL_buffinit(l, &b);
    luaL_addlstring(&b, code, codelen);
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, msg, mlen);
    luaL_pushresult(&b);
    lua_rawset(l, -3);
}

/* An error reply from a C string, as Redis replies "-%s": CR/LF trimmed at
 * the end only (the leading '-' shields the front); the ones left become
 * spaces in reply_error. No length limit. */
static void reply_error_cstr(client *c, const char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\r' || s[n - 1] == '\n')) n--;
    char *tmp = malloc(n + 1);
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    reply_error(c, tmp);
    free(tmp);
}

static int raise_error(lua_State *l) { return lua_error(l); }

static int redis_generic_call(lua_State *l, int raise) {
    int argc = lua_gettop(l);
    if (argc == 0) {
        push_error(l, "Please specify at least one argument for this redis lib call");
        return raise ? raise_error(l) : 1;
    }
    garg *argv = calloc((size_t)argc, sizeof(garg));
    for (int i = 0; i < argc; i++) {
        int t = lua_type(l, i + 1);
        char nbuf[64];
        const char *s = NULL;
        size_t n = 0;
        if (t == LUA_TNUMBER) {
            n = (size_t)snprintf(nbuf, sizeof(nbuf), "%.17g", (double)lua_tonumber(l, i + 1));
            s = nbuf;
        } else if (t == LUA_TSTRING) {
            s = lua_tolstring(l, i + 1, &n);
        } else {
            for (int j = 0; j < i; j++) free(argv[j].p);
            free(argv);
            push_error(l, "Lua redis lib command arguments must be strings or integers");
            return raise ? raise_error(l) : 1;
        }
        argv[i].p = malloc(n + 1);
        memcpy(argv[i].p, s, n);
        argv[i].p[n] = '\0';
        argv[i].n = n;
    }
    const char *err = NULL;
    const cmd_def *cmd = cmd_lookup(argv[0].p, argv[0].n);
    if (cmd && cmd->parent) cmd = NULL;
    if (cmd && cmd->subs && argc >= 2 && !(argc == 1 && cmd->proc)) cmd = cmd_lookup_full(argv, argc);
    if (!cmd || (!cmd->proc && !cmd->subs)) {
        err = "Unknown Redis command called from script";
    } else if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity || (cmd->subs && !cmd->proc)) {
        err = "Wrong number of args calling Redis command from script";
    } else if (cmd->flags & CMDF_NOSCRIPT) {
        err = "This Redis command is not allowed from script";
    } else if (run.ro && (cmd->flags & CMDF_WRITE)) {
        err = "Write commands are not allowed from read-only scripts.";
    }
    if (err) {
        for (int j = 0; j < argc; j++) free(argv[j].p);
        free(argv);
        push_error(l, err);
        return raise ? raise_error(l) : 1;
    }
    if (cmd->flags & CMDF_WRITE) __atomic_store_n(&script_wrote, 1, __ATOMIC_RELAXED);
    client *s = &run.scratch;
    s->argc = argc;
    s->argv = argv;
    s->olen = s->osent = 0;
    s->resp = run.resp;
    cmd_call(s, cmd);
    for (int j = 0; j < argc; j++) free(argv[j].p);
    free(argv);
    s->argv = NULL;
    s->argc = 0;
    const char *p = s->obuf, *end = s->obuf + s->olen;
    if (s->olen == 0 || resp_to_lua(l, &p, end)) {
        push_error(l, "ERR reply of the command could not be converted");
        return raise ? raise_error(l) : 1;
    }
    if (raise && lua_istable(l, -1)) {
        lua_pushstring(l, "err");
        lua_rawget(l, -2);
        int is_err = lua_isstring(l, -1);
        lua_pop(l, 1);
        if (is_err) return raise_error(l);
    }
    return 1;
}

static int redis_call(lua_State *l) { return redis_generic_call(l, 1); }
static int redis_pcall(lua_State *l) { return redis_generic_call(l, 0); }

static int redis_sha1hex(lua_State *l) {
    if (lua_gettop(l) != 1) {
        lua_pushstring(l, "wrong number of arguments");
        return lua_error(l);
    }
    size_t n;
    const char *s = lua_tolstring(l, 1, &n);
    char hex[41];
    sha1_hex(s ? s : "", s ? n : 0, hex);
    lua_pushstring(l, hex);
    return 1;
}

static int redis_error_reply(lua_State *l) {
    if (lua_gettop(l) != 1 || lua_type(l, -1) != LUA_TSTRING) {
        push_error(l, "wrong number or type of arguments");
        return 1;
    }
    const char *e = lua_tostring(l, -1);
    if (e[0] == '-') {
        push_error(l, e);
    } else {
        lua_pushfstring(l, "-%s", e);
        push_error(l, lua_tostring(l, -1));
    }
    return 1;
}

static int redis_status_reply(lua_State *l) {
    if (lua_gettop(l) != 1 || lua_type(l, -1) != LUA_TSTRING) {
        push_error(l, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(l);
    lua_pushstring(l, "ok");
    lua_pushvalue(l, -3);
    lua_rawset(l, -3);
    return 1;
}

static int redis_log(lua_State *l) {
    int argc = lua_gettop(l);
    if (argc < 2) {
        lua_pushstring(l, "redis.log() requires two arguments or more.");
        return lua_error(l);
    }
    if (!lua_isnumber(l, 1)) {
        lua_pushstring(l, "First argument must be a number (log level).");
        return lua_error(l);
    }
    int level = (int)lua_tonumber(l, 1);
    if (level < LOG_DEBUG_L || level > LOG_WARNING_L) {
        lua_pushstring(l, "Invalid debug level.");
        return lua_error(l);
    }
    luaL_Buffer b;
    luaL_buffinit(l, &b);
    for (int i = 2; i <= argc; i++) {
        size_t n;
        const char *s = lua_tolstring(l, i, &n);
        if (!s) continue;
        if (i > 2) luaL_addchar(&b, ' ');
        luaL_addlstring(&b, s, n);
    }
    luaL_pushresult(&b);
    log_msg(level, "%s", lua_tostring(l, -1));
    return 0;
}

static int redis_setresp(lua_State *l) {
    if (lua_gettop(l) != 1) {
        lua_pushstring(l, "redis.setresp() requires one argument.");
        return lua_error(l);
    }
    int v = (int)lua_tonumber(l, 1);
    if (v != 2 && v != 3) {
        lua_pushstring(l, "RESP version must be 2 or 3.");
        return lua_error(l);
    }
    run.resp = v;
    return 0;
}

static int redis_noop(lua_State *l) {
    (void)l;
    return 0;
}

static int redis_set_repl(lua_State *l) {
    if (lua_gettop(l) != 1) {
        lua_pushstring(l, "redis.set_repl() requires one argument.");
        return lua_error(l);
    }
    return 0;
}

static int redis_replicate_commands(lua_State *l) {
    lua_pushboolean(l, 1);
    return 1;
}

/* math.random and math.randomseed as in Redis: a 48-bit linear congruential
 * generator (the lrand48 recurrence) whose sequence runs on across scripts
 * (Redis 7.0 does not reseed per script); math.randomseed reseeds it. */
static uint64_t rand48_state = 0x1234ABCD330EULL; /* lrand48's initial state */
#define RAND48_MAX 2147483647

static void rand48_seed(int32_t seed) { rand48_state = ((uint64_t)(uint32_t)seed << 16) | 0x330E; }

static int32_t rand48_next(void) {
    rand48_state = (rand48_state * 0x5DEECE66DULL + 0xB) & ((1ULL << 48) - 1);
    return (int32_t)(rand48_state >> 17);
}

static int math_random(lua_State *l) {
    lua_Number r = (lua_Number)(rand48_next() % RAND48_MAX) / (lua_Number)RAND48_MAX;
    switch (lua_gettop(l)) {
    case 0:
        lua_pushnumber(l, r);
        break;
    case 1: {
        int u = luaL_checkint(l, 1);
        luaL_argcheck(l, 1 <= u, 1, "interval is empty");
        lua_pushnumber(l, floor(r * u) + 1);
        break;
    }
    case 2: {
        int lo = luaL_checkint(l, 1);
        int up = luaL_checkint(l, 2);
        luaL_argcheck(l, lo <= up, 2, "interval is empty");
        lua_pushnumber(l, floor(r * (up - lo + 1)) + lo);
        break;
    }
    default:
        return luaL_error(l, "wrong number of arguments");
    }
    return 1;
}

static int math_randomseed(lua_State *l) {
    rand48_seed(luaL_checkint(l, 1));
    return 0;
}

/* pcall as Redis 7.0 replaces it: an error table {err=...} is handed to
 * the script as its err string. */
static int script_pcall(lua_State *l) {
    int argc = lua_gettop(l);
    if (argc == 0) {
        /* Redis calls its result placeholder then. */
        lua_pushboolean(l, 0);
        lua_pushstring(l, "attempt to call a boolean value");
        return 2;
    }
    lua_pushboolean(l, 1);
    lua_insert(l, 1);
    if (lua_pcall(l, argc - 1, LUA_MULTRET, 0)) {
        lua_remove(l, 1);
        if (lua_istable(l, -1)) {
            lua_getfield(l, -1, "err");
            if (lua_isstring(l, -1))
                lua_replace(l, -2);
            else
                lua_pop(l, 1);
        }
        lua_pushboolean(l, 0);
        lua_insert(l, 1);
    }
    return lua_gettop(l);
}

/* Every 100000 instructions: stop the script if SCRIPT KILL asked. */
static void kill_hook(lua_State *l, lua_Debug *ar) {
    (void)ar;
    /* The flag stays up until the script ends, and the hook then fires on
     * every line: a pcall cannot swallow the kill (as Redis). */
    if (__atomic_load_n(&kill_requested, __ATOMIC_RELAXED)) {
        lua_sethook(l, kill_hook, LUA_MASKLINE, 0);
        push_error(l, "Script killed by user with SCRIPT KILL...");
        lua_error(l);
    }
}

static void set_func(lua_State *l, const char *name, lua_CFunction f) {
    lua_pushstring(l, name);
    lua_pushcfunction(l, f);
    lua_settable(l, -3);
}

static void set_num(lua_State *l, const char *name, int v) {
    lua_pushstring(l, name);
    lua_pushnumber(l, v);
    lua_settable(l, -3);
}

/* Lua helpers, in Lua: the error handler that gives every error a code, a
 * source and a line (as Redis 7.0's), and the globals protection. */
static const char lua_prelude[] =
    "local dbg = debug\n"
    "__redis__err__handler = function(err)\n"
    "  local lvl = 2\n"
    "  local i = dbg.getinfo(lvl,'nSl')\n"
    "  while i and (i.what == 'C' or i.source == '=goblin_protect') and lvl < 6 do\n"
    "    lvl = lvl + 1\n"
    "    i = dbg.getinfo(lvl,'nSl')\n"
    "  end\n"
    "  if type(err) ~= 'table' then\n"
    "    err = {err='ERR ' .. tostring(err)}\n"
    "  end\n"
    "  if i then\n"
    "    err['source'] = i.source\n"
    "    err['line'] = i.currentline\n"
    "  end\n"
    "  return err\n"
    "end\n";

static const char lua_protect[] =
    "setmetatable(_G, {\n"
    "  __newindex = function(t, k, v) error('Attempt to modify a readonly table', 2) end,\n"
    "  __index = function(t, k) error(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2) end,\n"
    "})\n";

static void lua_setup(void) {
    L = luaL_newstate();
    static const luaL_Reg libs[] = {{"", luaopen_base},         {LUA_TABLIBNAME, luaopen_table},
                                    {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_DBLIBNAME, luaopen_debug},   {NULL, NULL}};
    for (const luaL_Reg *r = libs; r->func; r++) {
        lua_pushcfunction(L, r->func);
        lua_pushstring(L, r->name);
        lua_call(L, 1, 0);
    }
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "print");
    lua_pushcfunction(L, script_pcall);
    lua_setglobal(L, "pcall");
    lua_getglobal(L, "math");
    set_func(L, "random", math_random);
    set_func(L, "randomseed", math_randomseed);
    lua_pop(L, 1);

    lua_newtable(L);
    set_func(L, "call", redis_call);
    set_func(L, "pcall", redis_pcall);
    set_func(L, "log", redis_log);
    set_func(L, "sha1hex", redis_sha1hex);
    set_func(L, "error_reply", redis_error_reply);
    set_func(L, "status_reply", redis_status_reply);
    set_func(L, "setresp", redis_setresp);
    set_func(L, "set_repl", redis_set_repl);
    set_func(L, "replicate_commands", redis_replicate_commands);
    set_func(L, "breakpoint", redis_noop);
    set_func(L, "debug", redis_noop);
    set_num(L, "LOG_DEBUG", LOG_DEBUG_L);
    set_num(L, "LOG_VERBOSE", LOG_VERBOSE_L);
    set_num(L, "LOG_NOTICE", LOG_NOTICE_L);
    set_num(L, "LOG_WARNING", LOG_WARNING_L);
    set_num(L, "REPL_NONE", 0);
    set_num(L, "REPL_AOF", 1);
    set_num(L, "REPL_SLAVE", 2);
    set_num(L, "REPL_REPLICA", 2);
    set_num(L, "REPL_ALL", 3);
    lua_setglobal(L, "redis");

    if (luaL_dostring(L, lua_prelude)) abort();

    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, SCRIPTS_KEY);
    lua_pushnil(L);
    lua_setglobal(L, "KEYS");
    lua_sethook(L, kill_hook, LUA_MASKCOUNT, 100000);
    if (luaL_loadbuffer(L, lua_protect, sizeof(lua_protect) - 1, "=goblin_protect") || lua_pcall(L, 0, 0, 0)) abort();
}

void script_family_init(void) { lua_setup(); }

void script_family_shutdown(void) {
    if (L) lua_close(L);
    L = NULL;
    free(run.scratch.obuf);
    run.scratch.obuf = NULL;
}

/* ------------------------------------------------------------------------ */
/* The script cache */

/* Push the cached function of sha (40 hex), or return 0. */
static int cache_get(const char *sha) {
    lua_getfield(L, LUA_REGISTRYINDEX, SCRIPTS_KEY);
    lua_getfield(L, -1, sha);
    lua_remove(L, -2);
    if (lua_isfunction(L, -1)) return 1;
    lua_pop(L, 1);
    return 0;
}

/* Compile body into the cache under its sha (computed into sha[41]).
 * On failure replies the error to c and returns -1. Leaves nothing on the
 * stack. */
static int cache_add(client *c, const char *body, size_t n, char sha[41]) {
    sha1_hex(body, n, sha);
    if (cache_get(sha)) {
        lua_pop(L, 1);
        return 0;
    }
    if (luaL_loadbuffer(L, body, n, "@user_script")) {
        if (c) reply_errorf(c, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, SCRIPTS_KEY);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, sha);
    lua_pop(L, 2);
    return 0;
}

static void lower_sha(const garg *a, char out[41]) {
    size_t n = a->n < 40 ? a->n : 40;
    for (size_t i = 0; i < n; i++) out[i] = (char)((a->p[i] >= 'A' && a->p[i] <= 'Z') ? a->p[i] + 32 : a->p[i]);
    out[n] = '\0';
}

/* ------------------------------------------------------------------------ */
/* EVAL and friends */

static void set_array_global(const char *name, garg *a, int n) {
    lua_newtable(L);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, a[i].p, a[i].n);
        lua_rawseti(L, -2, i + 1);
    }
    /* rawset: the globals table refuses ordinary assignments. */
    lua_pushstring(L, name);
    lua_insert(L, -2);
    lua_rawset(L, LUA_GLOBALSINDEX);
}

static void eval_generic(client *c, int by_sha, int ro) {
    long long numkeys;
    if (by_sha && c->argv[1].n != 40) {
        reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        return;
    }
    if (!str_to_ll(c->argv[2].p, c->argv[2].n, &numkeys)) {
        reply_err_not_int(c);
        return;
    }
    if (numkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    char sha[41];
    if (by_sha) {
        lower_sha(&c->argv[1], sha);
        if (c->argv[1].n != 40 || !cache_get(sha)) {
            reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
            return;
        }
    } else {
        if (cache_add(c, c->argv[1].p, c->argv[1].n, sha)) return;
        cache_get(sha);
    }
    /* Stack: function. */
    lua_getglobal(L, "__redis__err__handler");
    lua_insert(L, -2);
    int base = lua_gettop(L) - 1; /* the error handler */
    set_array_global("KEYS", c->argv + 3, (int)numkeys);
    set_array_global("ARGV", c->argv + 3 + numkeys, c->argc - 3 - (int)numkeys);

    /* The scratch client: the caller's identity, its own output and state. */
    client *s = &run.scratch;
    char *obuf = s->obuf;
    size_t ocap = s->ocap;
    /* Field by field, not *s = *c: the registry links of c change under
     * the registry lock on other threads (a new connection). */
    memset(s, 0, sizeof(*s));
    s->id = c->id;
    s->fd = c->fd;
    s->conn = c->conn;
    s->worker_id = c->worker_id;
    s->db = c->db;
    s->resp = c->resp;
    s->argc = c->argc;
    s->argv = c->argv;
    s->name = c->name;
    s->lib_name = c->lib_name;
    s->lib_ver = c->lib_ver;
    memcpy(s->addr, c->addr, sizeof(s->addr));
    memcpy(s->laddr, c->laddr, sizeof(s->laddr));
    s->ctime_ms = c->ctime_ms;
    s->last_ms = c->last_ms;
    s->user = c->user;
    s->acl_user = c->acl_user;
    s->commands_processed = c->commands_processed;
    s->obuf = obuf;
    s->ocap = ocap;
    s->olen = s->osent = 0;
    s->obuf_peak = 0;
    s->flags = CLIENT_IN_EXEC | CLIENT_SCRIPT | (client_flags_peek(c) & CLIENT_AUTHENTICATED);
    s->mstate = s->bstate = s->pstate = NULL;
    s->cur = s->last = NULL;
    run.caller = c;
    run.sha = sha;
    run.ro = ro;
    run.resp = 2;

    const cmd_def *self = c->cur;
    __atomic_store_n(&script_wrote, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&kill_requested, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&busy_since_ms, db_now_ms(), __ATOMIC_RELEASE);
    int rc = lua_pcall(L, 0, 1, base);
    __atomic_store_n(&busy_since_ms, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&kill_requested, 0, __ATOMIC_RELAXED);
    lua_sethook(L, kill_hook, LUA_MASKCOUNT, 100000);
    c->cur = self;
    if (rc) {
        /* The error value: a table {err, source, line} from the handler. */
        if (lua_istable(L, -1)) {
            const char *msg = NULL, *src = NULL;
            lua_getfield(L, -1, "err");
            msg = lua_tostring(L, -1);
            lua_getfield(L, -2, "source");
            src = lua_tostring(L, -1);
            lua_getfield(L, -3, "line");
            long line = (long)lua_tonumber(L, -1);
            if (!msg) msg = "ERR unknown error";
            lua_pushfstring(L, "%s script: %s, on %s:%d.", msg, sha, src ? src : "?", (int)line);
            reply_error_cstr(c, lua_tostring(L, -1));
            lua_pop(L, 1);
            lua_pop(L, 3);
        } else {
            reply_errorf(c, "ERR Error running script (call to f_%s): @user_script: %s", sha,
                         lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        }
        lua_pop(L, 1);
    } else {
        lua_to_reply(c, L, 0);
    }
    lua_settop(L, base - 1);
    run.caller = NULL;
    run.sha = NULL;
    /* Release a large scratch buffer. */
    if (s->ocap > (1 << 20)) {
        free(s->obuf);
        s->obuf = NULL;
        s->ocap = 0;
    }
    s->olen = s->osent = 0;
    lua_gc(L, LUA_GCSTEP, 1);
}

static void evalCommand(client *c) { eval_generic(c, 0, 0); }
static void evalshaCommand(client *c) { eval_generic(c, 1, 0); }
static void evalRoCommand(client *c) { eval_generic(c, 0, 1); }
static void evalshaRoCommand(client *c) { eval_generic(c, 1, 1); }

/* ------------------------------------------------------------------------ */
/* SCRIPT */

static void scriptLoadCommand(client *c) {
    char sha[41];
    if (cache_add(c, c->argv[2].p, c->argv[2].n, sha)) return;
    reply_bulk(c, sha, 40);
}

static void scriptExistsCommand(client *c) {
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        char sha[41];
        lower_sha(&c->argv[i], sha);
        int ok = c->argv[i].n == 40 && cache_get(sha);
        if (ok) lua_pop(L, 1);
        reply_int(c, ok);
    }
}

static void scriptFlushCommand(client *c) {
    if (c->argc > 3) {
        reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    if (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async")) {
        reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    lua_close(L);
    lua_setup();
    reply_ok(c);
}

/* Runs without locks, usually while another worker runs the script. */
static void scriptKillCommand(client *c) {
    int64_t since = __atomic_load_n(&busy_since_ms, __ATOMIC_ACQUIRE);
    if (!since || db_now_ms() - since < BUSY_MS) {
        reply_error(c, "NOTBUSY No scripts in execution right now.");
        return;
    }
    if (__atomic_load_n(&script_wrote, __ATOMIC_RELAXED)) {
        reply_error(c, "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
                       "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
                       "NOSAVE command.");
        return;
    }
    __atomic_store_n(&kill_requested, 1, __ATOMIC_RELAXED);
    reply_ok(c);
}

static void scriptHelpCommand(client *c) {
    static const char *const lines[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof(lines) / sizeof(lines[0]);
    reply_array(c, (long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, lines[i]);
}

const cmd_handler script_handlers[] = {
    {"eval", evalCommand, CMD_LOCK_ALL},
    {"evalsha", evalshaCommand, CMD_LOCK_ALL},
    {"eval_ro", evalRoCommand, CMD_LOCK_ALL},
    {"evalsha_ro", evalshaRoCommand, CMD_LOCK_ALL},
    {"script|load", scriptLoadCommand, CMD_LOCK_ALL},
    {"script|exists", scriptExistsCommand, CMD_LOCK_ALL},
    {"script|flush", scriptFlushCommand, CMD_LOCK_ALL},
    {"script|kill", scriptKillCommand, CMD_LOCK_NONE},
    {"script|help", scriptHelpCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
