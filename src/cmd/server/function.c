/* function.c -- Redis 7.0 functions: FUNCTION LOAD / LIST / DELETE /
 * FLUSH / DUMP / RESTORE / STATS / KILL / HELP, FCALL and FCALL_RO.
 *
 * A library set is one Lua state (apart from the EVAL state, as Redis)
 * and the libraries compiled in it; each library keeps its code (what the
 * RDB, FUNCTION DUMP and the AOF rewrite carry) and its functions, each a
 * callback held in the state's registry with its flags and description.
 * The live set changes only under the keyspace write lock (every command
 * here that touches it is CMD_LOCK_ALL), and also under set_lock, which
 * the dispatcher takes to read a function's flags before any lock
 * (fcall_cmd_flags). A set built from an RDB lives in its own state,
 * made on the loading thread, and replaces the live one at commit.
 *
 * The state's globals are an empty table whose metatable looks names up
 * in one of two tables: while a library loads, only {redis = {register_
 * function, log, LOG_*, REDIS_VERSION*}}; when a function runs, the usual
 * globals (redis.call and friends, the Lua libraries). Both are read-only
 * through and through (lua_libs.c) and refuse writes and unknown names
 * with Redis's errors, as does the empty table itself. */
#include "cmd/server/function.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/propagate.h"
#include "cmd/server/admin_family.h"
#include "cmd/server/lua_libs.h"
#include "cmd/server/script.h"
#include "cmd/server/script_lua.h"
#include "persist/rdb.h"
#include "session/reply.h"
#include "util/monotime.h"
#include "util/strutil.h"
#include "base/config.h"
#include "base/tstat.h"

#define LOAD_TIMEOUT_MS 500
#define REG_GLOBALS_MT "goblin_fn_globals_mt" /* its __index: the load or the run API */
#define REG_LOAD_API "goblin_fn_load_api"
#define REG_RUN_API "goblin_fn_run_api"
#define REG_ERRH "goblin_fn_err_handler"
#define REG_LOADING "goblin_fn_loading" /* light userdata: the load in progress */

typedef struct fn_lib fn_lib;

typedef struct fn_func {
    char *name;
    char *desc;   /* NULL: none */
    int flags;    /* SCRIPT_FLAG_* */
    int ref;      /* the callback, in the state's registry */
    fn_lib *lib;
} fn_func;

struct fn_lib {
    char *name;
    char *code;
    size_t code_len;
    fn_func **funcs;
    int nfuncs;
};

typedef struct fn_set {
    lua_State *L;
    fn_lib **libs;
    int nlibs;
} fn_set;

/* A library being loaded: where redis.register_function adds. */
typedef struct fn_loading {
    fn_lib *lib;
    int64_t start_ms;   /* monotime_ms, not db_now_ms (it stands still while one command runs) */
    int64_t timeout_ms; /* 0: none (the primary's stream, the AOF) */
} fn_loading;

static fn_set *live;
static pthread_rwlock_t set_lock = PTHREAD_RWLOCK_INITIALIZER;
/* FUNCTION STATS and INFO read these without locks. */
static long stat_libs, stat_funcs;
static size_t stat_code_bytes; /* the live libraries' names and code */
static size_t vm_bytes;        /* every function state's allocations (atomics) */

/* ------------------------------------------------------------------------ */
/* Libraries */

static void func_free(lua_State *l, fn_func *f) {
    if (!f) return;
    if (l && f->ref != LUA_NOREF) luaL_unref(l, LUA_REGISTRYINDEX, f->ref);
    free(f->name);
    free(f->desc);
    free(f);
}

static void lib_free(lua_State *l, fn_lib *lib) {
    if (!lib) return;
    for (int i = 0; i < lib->nfuncs; i++) func_free(l, lib->funcs[i]);
    free(lib->funcs);
    free(lib->name);
    free(lib->code);
    free(lib);
}

static fn_lib *set_find_lib(const fn_set *s, const char *name) {
    for (int i = 0; i < s->nlibs; i++)
        if (!strcmp(s->libs[i]->name, name)) return s->libs[i];
    return NULL;
}

/* Function names compare without case (Redis's functions dict). */
static fn_func *set_find_func(const fn_set *s, const char *name, size_t n) {
    for (int i = 0; i < s->nlibs; i++)
        for (int j = 0; j < s->libs[i]->nfuncs; j++) {
            fn_func *f = s->libs[i]->funcs[j];
            if (strlen(f->name) == n && !strncasecmp(f->name, name, n)) return f;
        }
    return NULL;
}

static void count_stats(void) {
    long nl = live ? live->nlibs : 0, nf = 0;
    size_t code = 0;
    for (int i = 0; i < nl; i++) {
        nf += live->libs[i]->nfuncs;
        code += live->libs[i]->code_len + strlen(live->libs[i]->name) + 1;
    }
    __atomic_store_n(&stat_libs, nl, __ATOMIC_RELAXED);
    __atomic_store_n(&stat_funcs, nf, __ATOMIC_RELAXED);
    __atomic_store_n(&stat_code_bytes, code, __ATOMIC_RELAXED);
}

static void set_link(fn_set *s, fn_lib *lib) {
    fn_lib **n = realloc(s->libs, sizeof(*n) * (size_t)(s->nlibs + 1));
    if (!n) abort();
    s->libs = n;
    s->libs[s->nlibs++] = lib;
}

static void set_unlink(fn_set *s, fn_lib *lib) {
    for (int i = 0; i < s->nlibs; i++)
        if (s->libs[i] == lib) {
            memmove(s->libs + i, s->libs + i + 1, sizeof(*s->libs) * (size_t)(s->nlibs - i - 1));
            s->nlibs--;
            return;
        }
}

/* Redis's functionsVerifyName: [a-zA-Z0-9_]+. */
static int name_ok(const char *p, size_t n) {
    if (!n) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') ||
              p[i] == '_'))
            return 0;
    return 1;
}

#define BAD_NAME                                                                                                    \
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

/* ------------------------------------------------------------------------ */
/* The Lua state */

static fn_loading *loading_get(lua_State *l) {
    lua_getfield(l, LUA_REGISTRYINDEX, REG_LOADING);
    fn_loading *ld = lua_touserdata(l, -1);
    lua_pop(l, 1);
    return ld;
}

/* Every 100000 instructions of a load: Redis's 500 ms limit. */
static void load_hook(lua_State *l, lua_Debug *ar) {
    (void)ar;
    fn_loading *ld = loading_get(l);
    if (ld && ld->timeout_ms > 0 && monotime_ms() - ld->start_ms > ld->timeout_ms) {
        lua_sethook(l, load_hook, LUA_MASKLINE, 0);
        script_push_error(l, "FUNCTION LOAD timeout");
        lua_error(l);
    }
}

/* redis.register_function's flags table on top of the stack. */
static int read_flags(lua_State *l, int *flags) {
    int f = 0;
    for (int j = 1;; j++) {
        lua_pushnumber(l, j);
        lua_gettable(l, -2);
        int t = lua_type(l, -1);
        if (t == LUA_TNIL) {
            lua_pop(l, 1);
            break;
        }
        if (!lua_isstring(l, -1)) {
            lua_pop(l, 1);
            return -1;
        }
        const char *s = lua_tostring(l, -1);
        int found = 0;
        for (const script_flag_name *fl = script_flag_names; fl->name; fl++)
            if (!strcasecmp(fl->name, s)) {
                f |= fl->flag;
                found = 1;
                break;
            }
        lua_pop(l, 1);
        if (!found) return -1;
    }
    *flags = f;
    return 0;
}

/* A copy of the string at idx, NUL-terminated; its length (which counts
 * any NUL inside) in *len when len is not NULL. */
static char *dup_lua_string(lua_State *l, int idx, size_t *len) {
    if (!lua_isstring(l, idx)) return NULL;
    size_t n;
    const char *s = lua_tolstring(l, idx, &n);
    char *d = malloc(n + 1);
    if (!d) abort();
    if (len) *len = n;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int raise(lua_State *l, const char *msg) {
    script_push_error(l, msg);
    return lua_error(l);
}

/* redis.register_function(name, callback) or
 * redis.register_function{function_name=, callback=, flags=, description=}. */
static int register_function(lua_State *l) {
    fn_loading *ld = loading_get(l);
    if (!ld) return raise(l, "redis.register_function can only be called on FUNCTION LOAD command");
    int argc = lua_gettop(l);
    if (argc < 1 || argc > 2) return raise(l, "wrong number of arguments to redis.register_function");
    char *name = NULL, *desc = NULL;
    size_t nlen = 0; /* the name's length: a NUL inside makes it a bad name */
    int ref = LUA_NOREF, flags = 0;
    const char *err = NULL;
    if (argc == 2) {
        if (!(name = dup_lua_string(l, 1, &nlen))) {
            err = "first argument to redis.register_function must be a string";
        } else if (!lua_isfunction(l, 2)) {
            err = "second argument to redis.register_function must be a function";
        } else {
            ref = luaL_ref(l, LUA_REGISTRYINDEX);
        }
    } else if (!lua_istable(l, 1)) {
        err = "calling redis.register_function with a single argument is only applicable to Lua table (representing "
              "named arguments).";
    } else {
        lua_pushnil(l);
        while (!err && lua_next(l, -2)) {
            if (!lua_isstring(l, -2)) {
                err = "named argument key given to redis.register_function is not a string";
                break;
            }
            const char *key = lua_tostring(l, -2);
            if (!strcasecmp(key, "function_name")) {
                free(name);
                if (!(name = dup_lua_string(l, -1, &nlen)))
                    err = "function_name argument given to redis.register_function must be a string";
            } else if (!strcasecmp(key, "description")) {
                free(desc);
                if (!(desc = dup_lua_string(l, -1, NULL)))
                    err = "description argument given to redis.register_function must be a string";
            } else if (!strcasecmp(key, "callback")) {
                if (!lua_isfunction(l, -1)) {
                    err = "callback argument given to redis.register_function must be a function";
                } else {
                    if (ref != LUA_NOREF) luaL_unref(l, LUA_REGISTRYINDEX, ref);
                    ref = luaL_ref(l, LUA_REGISTRYINDEX);
                    continue; /* luaL_ref popped the value */
                }
            } else if (!strcasecmp(key, "flags")) {
                if (!lua_istable(l, -1))
                    err = "flags argument to redis.register_function must be a table representing function flags";
                else if (read_flags(l, &flags))
                    err = "unknown flag given";
            } else {
                err = "unknown argument given to redis.register_function";
            }
            lua_pop(l, 1);
        }
        if (!err && !name) err = "redis.register_function must get a function name argument";
        if (!err && ref == LUA_NOREF) err = "redis.register_function must get a callback argument";
    }
    if (!err && !name_ok(name, nlen)) err = BAD_NAME;
    if (!err)
        for (int i = 0; i < ld->lib->nfuncs; i++)
            if (!strcmp(ld->lib->funcs[i]->name, name)) err = "Function already exists in the library";
    if (err) {
        if (ref != LUA_NOREF) luaL_unref(l, LUA_REGISTRYINDEX, ref);
        free(name);
        free(desc);
        return raise(l, err);
    }
    fn_func *f = calloc(1, sizeof(*f));
    fn_func **nf = realloc(ld->lib->funcs, sizeof(*nf) * (size_t)(ld->lib->nfuncs + 1));
    if (!f || !nf) abort();
    f->name = name;
    f->desc = desc;
    f->flags = flags;
    f->ref = ref;
    f->lib = ld->lib;
    ld->lib->funcs = nf;
    ld->lib->funcs[ld->lib->nfuncs++] = f;
    return 0;
}

static int guarded_newindex(lua_State *l) { return luaL_error(l, "Attempt to modify a readonly table"); }

static lua_State *state_new(void) {
    lua_State *l = script_lua_newstate(&vm_bytes);
    if (!l) return NULL;
    script_lua_open(l, 0);
    script_lua_push_err_handler(l);
    lua_setfield(l, LUA_REGISTRYINDEX, REG_ERRH);
    /* The run-time API: the globals, read-only (no debug library). */
    lualibs_protect(l);
    lua_pushvalue(l, LUA_GLOBALSINDEX);
    lua_setfield(l, LUA_REGISTRYINDEX, REG_RUN_API);

    /* The load-time API: redis = {register_function, log, ...}. */
    lua_newtable(l); /* api */
    lua_newtable(l); /* its redis */
    lua_pushcfunction(l, register_function);
    lua_setfield(l, -2, "register_function");
    script_lua_set_log(l);
    lualibs_protect_table(l);
    lua_setfield(l, -2, "redis");
    lualibs_protect_table(l);
    lua_setfield(l, LUA_REGISTRYINDEX, REG_LOAD_API);

    /* The globals: an empty table reading through to one API. */
    lua_newtable(l);
    lua_newtable(l);
    lua_getfield(l, LUA_REGISTRYINDEX, REG_RUN_API);
    lua_setfield(l, -2, "__index");
    lua_pushcfunction(l, guarded_newindex);
    lua_setfield(l, -2, "__newindex");
    lua_pushboolean(l, 0);
    lua_setfield(l, -2, "__metatable");
    lua_pushvalue(l, -1);
    lua_setfield(l, LUA_REGISTRYINDEX, REG_GLOBALS_MT);
    lua_setmetatable(l, -2);
    lua_replace(l, LUA_GLOBALSINDEX);
    lua_sethook(l, script_kill_hook, LUA_MASKCOUNT, 100000);
    return l;
}

static void use_api(lua_State *l, const char *which) {
    lua_getfield(l, LUA_REGISTRYINDEX, REG_GLOBALS_MT);
    lua_getfield(l, LUA_REGISTRYINDEX, which);
    lua_setfield(l, -2, "__index");
    lua_pop(l, 1);
}

static fn_set *set_new(void) {
    fn_set *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    if (!(s->L = state_new())) {
        free(s);
        return NULL;
    }
    return s;
}

static void set_free(fn_set *s) {
    if (!s) return;
    for (int i = 0; i < s->nlibs; i++) lib_free(NULL, s->libs[i]);
    free(s->libs);
    if (s->L) lua_close(s->L);
    free(s);
}

/* ------------------------------------------------------------------------ */
/* Creating a library (Redis's functionsCreateWithLibraryCtx) */

/* The "#!<engine> name=<name>" line: *name malloc'd, *body the code after
 * the line (its newline included). -1 with Redis's error. */
static int parse_meta(const char *code, size_t n, char **name, size_t *body_off, char *err, size_t errlen) {
    *name = NULL;
    if (n < 2 || code[0] != '#' || code[1] != '!') {
        snprintf(err, errlen, "Missing library metadata");
        return -1;
    }
    /* Redis reads the code as a C string. */
    size_t cn = strnlen(code, n);
    const char *nl = memchr(code, '\n', cn);
    if (!nl) {
        snprintf(err, errlen, "Invalid library metadata");
        return -1;
    }
    char **parts;
    int np;
    if (script_split_args(code, (size_t)(nl - code), &parts, &np) || np == 0) {
        if (np == 0 && parts) script_split_free(parts, 0);
        snprintf(err, errlen, "Invalid library metadata");
        return -1;
    }
    int rc = 0;
    for (int i = 1; i < np; i++) {
        if (!strncasecmp(parts[i], "name=", 5)) {
            if (*name) {
                snprintf(err, errlen, "Invalid metadata value, name argument was given multiple times");
                rc = -1;
                break;
            }
            *name = strdup(parts[i] + 5);
            continue;
        }
        snprintf(err, errlen, "Invalid metadata value given: %.200s", parts[i]);
        rc = -1;
        break;
    }
    if (!rc && !*name) {
        snprintf(err, errlen, "Library name was not given");
        rc = -1;
    }
    if (!rc && !name_ok(*name, strlen(*name))) {
        snprintf(err, errlen, BAD_NAME);
        rc = -1;
    }
    if (!rc && strcasecmp(parts[0] + 2, "lua")) {
        snprintf(err, errlen, "Engine '%.200s' not found", parts[0] + 2);
        rc = -1;
    }
    script_split_free(parts, np);
    if (rc) {
        free(*name);
        *name = NULL;
        return -1;
    }
    *body_off = (size_t)(nl - code);
    return 0;
}

/* Compile code and run it to register its functions, into set s (whose
 * state must not be running a script). timeout_ms 0: no limit. On success
 * the library is linked and its name returned in *out_name (borrowed from
 * the library); on failure s is as before and err says why. */
static int lib_create(fn_set *s, const char *code, size_t n, int replace, int64_t timeout_ms, const char **out_name,
                      char *err, size_t errlen) {
    char *name;
    size_t off;
    if (parse_meta(code, n, &name, &off, err, errlen)) return -1;
    fn_lib *old = set_find_lib(s, name);
    if (old && !replace) {
        snprintf(err, errlen, "Library '%s' already exists", name);
        free(name);
        return -1;
    }
    if (old) set_unlink(s, old);
    fn_lib *lib = calloc(1, sizeof(*lib));
    if (!lib) abort();
    lib->name = name;
    lib->code = malloc(n + 1);
    if (!lib->code) abort();
    memcpy(lib->code, code, n);
    lib->code[n] = '\0';
    lib->code_len = n;
    lua_State *l = s->L;
    int rc = -1;
    if (lualibs_load(l, code + off, strnlen(code, n) - off, "@user_function")) {
        snprintf(err, errlen, "Error compiling function: %s", lua_tostring(l, -1));
        lua_pop(l, 1);
        goto done;
    }
    fn_loading ld = {lib, monotime_ms(), timeout_ms};
    lua_pushlightuserdata(l, &ld);
    lua_setfield(l, LUA_REGISTRYINDEX, REG_LOADING);
    use_api(l, REG_LOAD_API);
    lua_sethook(l, load_hook, LUA_MASKCOUNT, 100000);
    int prc = lua_pcall(l, 0, 0, 0);
    lua_sethook(l, script_kill_hook, LUA_MASKCOUNT, 100000);
    use_api(l, REG_RUN_API);
    lua_pushnil(l);
    lua_setfield(l, LUA_REGISTRYINDEX, REG_LOADING);
    if (prc) {
        const char *msg = NULL;
        if (lua_istable(l, -1)) {
            lua_getfield(l, -1, "err");
            msg = lua_tostring(l, -1);
            snprintf(err, errlen, "Error registering functions: %s", msg ? msg : "?");
            lua_pop(l, 1);
        } else {
            msg = lua_tostring(l, -1);
            snprintf(err, errlen, "Error registering functions: ERR %s", msg ? msg : "?");
        }
        lua_pop(l, 1);
        goto done;
    }
    if (lib->nfuncs == 0) {
        snprintf(err, errlen, "No functions registered");
        goto done;
    }
    for (int i = 0; i < lib->nfuncs; i++) {
        fn_func *f = set_find_func(s, lib->funcs[i]->name, strlen(lib->funcs[i]->name));
        if (f) {
            snprintf(err, errlen, "Function %s already exists", lib->funcs[i]->name);
            goto done;
        }
    }
    rc = 0;
done:
    if (rc) {
        lib_free(l, lib);
        if (old) set_link(s, old);
        return -1;
    }
    set_link(s, lib);
    if (old) lib_free(l, old);
    if (out_name) *out_name = lib->name;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* persist's hooks */

static void hook_each(rdb_func_emit_fn *emit, void *arg) {
    if (!live) return;
    for (int i = 0; i < live->nlibs; i++) emit(arg, live->libs[i]->code, live->libs[i]->code_len);
}

static int hook_build(char *const *codes, const size_t *lens, int n, void **out, char *err, size_t errlen) {
    *out = NULL;
    fn_set *s = set_new();
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (lib_create(s, codes[i], lens[i], 0, 0, NULL, err, errlen)) {
            set_free(s);
            return -1;
        }
    *out = s;
    return 0;
}

static void *hook_swap(void *set) {
    fn_set *s = set ? set : set_new();
    pthread_rwlock_wrlock(&set_lock);
    fn_set *old = live;
    live = s;
    pthread_rwlock_unlock(&set_lock);
    count_stats();
    return old;
}

static void hook_release(void *set) { set_free(set); }

static const rdb_func_hooks hooks = {hook_each, hook_build, hook_swap, hook_release};

void function_family_init(void) {
    live = set_new();
    if (!live) abort();
    rdb_set_func_hooks(&hooks);
}

void function_family_shutdown(void) {
    rdb_set_func_hooks(NULL);
    set_free(live);
    live = NULL;
}

uint32_t script_dispatch_flags(const client *c, const cmd_def *cmd) {
    uint32_t flags = cmd->flags;
    if (c->argc < 2) return flags;
    int sf = -1;
    if (!strcmp(cmd->fullname, "fcall") || !strcmp(cmd->fullname, "fcall_ro")) {
        pthread_rwlock_rdlock(&set_lock);
        fn_func *f = live ? set_find_func(live, c->argv[1].p, c->argv[1].n) : NULL;
        if (f) sf = f->flags;
        pthread_rwlock_unlock(&set_lock);
    } else if (!strcmp(cmd->fullname, "eval") || !strcmp(cmd->fullname, "eval_ro")) {
        size_t skip;
        char err[256];
        if (script_shebang_flags(c->argv[1].p, c->argv[1].n, &sf, &skip, err, sizeof(err))) sf = -1;
    } else if ((!strcmp(cmd->fullname, "evalsha") || !strcmp(cmd->fullname, "evalsha_ro")) && c->argv[1].n == 40) {
        char sha[41];
        for (int i = 0; i < 40; i++) {
            char ch = c->argv[1].p[i];
            sha[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        sha[40] = '\0';
        if (script_cached_flags(sha, &sf)) sf = -1;
    }
    return sf < 0 ? flags : script_cmd_flags(flags, sf);
}

void function_counts(long *libs, long *funcs) {
    *libs = __atomic_load_n(&stat_libs, __ATOMIC_RELAXED);
    *funcs = __atomic_load_n(&stat_funcs, __ATOMIC_RELAXED);
}

void function_memory(size_t *vm, size_t *code) {
    *vm = __atomic_load_n(&vm_bytes, __ATOMIC_RELAXED);
    *code = __atomic_load_n(&stat_code_bytes, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------ */
/* Commands */

/* A change of the libraries: counted for save points and propagated as
 * the command was sent (Redis's server.dirty++). */
static void changed(void) {
    tstat_add(TSTAT_DIRTY, 1);
    prop_count_change();
}

static int obeyed(const client *c) { return (client_flags_peek(c) & (CLIENT_PRIMARY | CLIENT_AOF_LOADER)) != 0; }

static void functionLoadCommand(client *c) {
    int replace = 0, i = 2;
    for (; i < c->argc - 1; i++) {
        if (arg_is(&c->argv[i], "replace")) {
            replace = 1;
            continue;
        }
        reply_errorf(c, "ERR Unknown option given: %s", c->argv[i].p);
        return;
    }
    if (i >= c->argc) {
        reply_error(c, "ERR Function code is missing");
        return;
    }
    char err[1024];
    const char *name;
    pthread_rwlock_wrlock(&set_lock);
    int rc = lib_create(live, c->argv[i].p, c->argv[i].n, replace, obeyed(c) ? 0 : LOAD_TIMEOUT_MS, &name, err,
                        sizeof(err));
    pthread_rwlock_unlock(&set_lock);
    if (rc) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    count_stats();
    changed();
    reply_bulk(c, name, strlen(name));
}

static void functionDeleteCommand(client *c) {
    fn_lib *lib = set_find_lib(live, c->argv[2].p);
    if (!lib || strlen(lib->name) != c->argv[2].n) {
        reply_error(c, "ERR Library not found");
        return;
    }
    pthread_rwlock_wrlock(&set_lock);
    set_unlink(live, lib);
    pthread_rwlock_unlock(&set_lock);
    lib_free(live->L, lib);
    count_stats();
    changed();
    reply_ok(c);
}

static void flush_live(void) {
    fn_set *fresh = set_new();
    if (!fresh) abort();
    set_free(hook_swap(fresh));
}

static void functionFlushCommand(client *c) {
    if (c->argc > 3) {
        admin_reply_subcommand_syntax(c, "FUNCTION");
        return;
    }
    if (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async")) {
        reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    flush_live();
    changed();
    reply_ok(c);
}

static void reply_flags(client *c, int flags) {
    long n = 0;
    for (const script_flag_name *f = script_flag_names; f->name; f++) n += (flags & f->flag) != 0;
    reply_set(c, n);
    for (const script_flag_name *f = script_flag_names; f->name; f++)
        if (flags & f->flag) reply_simple(c, f->name);
}

static void functionListCommand(client *c) {
    int with_code = 0;
    const garg *pattern = NULL;
    for (int i = 2; i < c->argc; i++) {
        if (!with_code && arg_is(&c->argv[i], "withcode")) {
            with_code = 1;
            continue;
        }
        if (!pattern && arg_is(&c->argv[i], "libraryname")) {
            if (i >= c->argc - 1) {
                reply_error(c, "ERR library name argument was not given");
                return;
            }
            pattern = &c->argv[++i];
            continue;
        }
        reply_errorf(c, "ERR Unknown argument %s", c->argv[i].p);
        return;
    }
    size_t h = reply_defer(c);
    long n = 0;
    for (int i = 0; i < live->nlibs; i++) {
        fn_lib *lib = live->libs[i];
        if (pattern && !glob_match(pattern->p, pattern->n, lib->name, strlen(lib->name), 1)) continue;
        n++;
        reply_map(c, with_code ? 4 : 3);
        reply_bulk_cstr(c, "library_name");
        reply_bulk_cstr(c, lib->name);
        reply_bulk_cstr(c, "engine");
        reply_bulk_cstr(c, "LUA");
        reply_bulk_cstr(c, "functions");
        reply_array(c, lib->nfuncs);
        for (int j = 0; j < lib->nfuncs; j++) {
            fn_func *f = lib->funcs[j];
            reply_map(c, 3);
            reply_bulk_cstr(c, "name");
            reply_bulk_cstr(c, f->name);
            reply_bulk_cstr(c, "description");
            if (f->desc)
                reply_bulk_cstr(c, f->desc);
            else
                reply_null(c);
            reply_bulk_cstr(c, "flags");
            reply_flags(c, f->flags);
        }
        if (with_code) {
            reply_bulk_cstr(c, "library_code");
            reply_bulk(c, lib->code, lib->code_len);
        }
    }
    reply_defer_array(c, h, n);
}

/* Without locks: it may run while a function runs on another worker. */
static void functionStatsCommand(client *c) {
    int is_eval;
    int64_t since;
    if (script_running(&is_eval, &since) && is_eval) {
        reply_error(c, "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
        return;
    }
    reply_map(c, 2);
    reply_bulk_cstr(c, "running_script");
    script_reply_running(c);
    reply_bulk_cstr(c, "engines");
    reply_map(c, 1);
    reply_bulk_cstr(c, "LUA");
    reply_map(c, 2);
    reply_bulk_cstr(c, "libraries_count");
    reply_int(c, __atomic_load_n(&stat_libs, __ATOMIC_RELAXED));
    reply_bulk_cstr(c, "functions_count");
    reply_int(c, __atomic_load_n(&stat_funcs, __ATOMIC_RELAXED));
}

static void functionKillCommand(client *c) { script_kill(c, 0); }

static void functionDumpCommand(client *c) {
    unsigned char *p;
    size_t n;
    char *v = config_value("rdbcompression");
    int compress = !v || !strcmp(v, "yes");
    free(v);
    if (rdb_dump_functions(compress, &p, &n) != RDB_OK) {
        reply_error(c, "ERR out of memory");
        return;
    }
    reply_bulk(c, (const char *)p, n);
    free(p);
}

enum { RESTORE_APPEND, RESTORE_REPLACE, RESTORE_FLUSH };

static void functionRestoreCommand(client *c) {
    if (c->argc > 4) {
        admin_reply_subcommand_syntax(c, "FUNCTION");
        return;
    }
    int policy = RESTORE_APPEND;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "append"))
            policy = RESTORE_APPEND;
        else if (arg_is(&c->argv[3], "replace"))
            policy = RESTORE_REPLACE;
        else if (arg_is(&c->argv[3], "flush"))
            policy = RESTORE_FLUSH;
        else {
            reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    char **codes;
    size_t *lens;
    int n;
    char err[1024];
    int rc = rdb_restore_functions((const unsigned char *)c->argv[2].p, c->argv[2].n, &codes, &lens, &n, err,
                                   sizeof(err));
    if (rc == RDB_ERR_CHECKSUM) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    if (rc != RDB_OK) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    /* The payload's libraries compile into a set of their own (names may
     * not repeat within it), then join the live ones. */
    fn_set *tmp = NULL;
    if (hook_build(codes, lens, n, (void **)&tmp, err, sizeof(err))) {
        rdb_free_codes(codes, lens, n);
        reply_errorf(c, "ERR %s", err);
        return;
    }
    if (policy == RESTORE_FLUSH) {
        set_free(hook_swap(tmp));
        rdb_free_codes(codes, lens, n);
        changed();
        reply_ok(c);
        return;
    }
    set_free(tmp);
    /* As Redis's libraryJoin: library collisions (unless REPLACE), then
     * function collisions with what stays, and only then the change. */
    err[0] = '\0';
    fn_lib **replaced = calloc((size_t)n + 1, sizeof(*replaced));
    int nrep = 0;
    pthread_rwlock_wrlock(&set_lock);
    for (int i = 0; i < n && !err[0]; i++) {
        char *name;
        size_t off;
        if (parse_meta(codes[i], lens[i], &name, &off, err, sizeof(err))) break;
        fn_lib *old = set_find_lib(live, name);
        if (old && policy != RESTORE_REPLACE) snprintf(err, sizeof(err), "Library %s already exists", name);
        else if (old) {
            set_unlink(live, old);
            replaced[nrep++] = old;
        }
        free(name);
    }
    int added = 0;
    for (int i = 0; i < n && !err[0]; i++) {
        if (lib_create(live, codes[i], lens[i], 0, 0, NULL, err, sizeof(err))) break;
        added++;
    }
    if (err[0]) {
        /* Undo: the libraries added go, the replaced ones come back. */
        for (int i = 0; i < added; i++) {
            fn_lib *lib = live->libs[live->nlibs - 1];
            set_unlink(live, lib);
            lib_free(live->L, lib);
        }
        for (int i = 0; i < nrep; i++) set_link(live, replaced[i]);
    } else {
        for (int i = 0; i < nrep; i++) lib_free(live->L, replaced[i]);
    }
    pthread_rwlock_unlock(&set_lock);
    free(replaced);
    rdb_free_codes(codes, lens, n);
    if (err[0]) {
        /* lib_create names a function collision as "Function f already
         * exists", as libraryJoin. */
        reply_errorf(c, "ERR %s", err);
        return;
    }
    count_stats();
    changed();
    reply_ok(c);
}

static void functionHelpCommand(client *c) {
    static const char *const lines[] = {
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION "
        "RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
        NULL,
    };
    admin_reply_help(c, "FUNCTION", lines);
}

static void fcall_generic(client *c, int ro) {
    /* FCALL is skip_monitor: fed here, before the calls it makes. */
    cmd_feed_monitor(c);
    fn_func *f = set_find_func(live, c->argv[1].p, c->argv[1].n);
    if (!f) {
        reply_error(c, "ERR Function not found");
        return;
    }
    long long numkeys;
    if (!str_to_ll(c->argv[2].p, c->argv[2].n, &numkeys)) {
        reply_error(c, "ERR Bad number of keys provided");
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
    lua_State *l = live->L;
    lua_getfield(l, LUA_REGISTRYINDEX, REG_ERRH);
    int base = lua_gettop(l);
    lua_rawgeti(l, LUA_REGISTRYINDEX, f->ref);
    for (int part = 0; part < 2; part++) {
        garg *a = c->argv + 3 + (part ? numkeys : 0);
        int cnt = part ? c->argc - 3 - (int)numkeys : (int)numkeys;
        lua_createtable(l, cnt, 0);
        for (int i = 0; i < cnt; i++) {
            lua_pushlstring(l, a[i].p, a[i].n);
            lua_rawseti(l, -2, i + 1);
        }
    }
    script_run(c, l, base, 2, f->name, "@user_function", f->flags, ro, 0);
}

static void fcallCommand(client *c) { fcall_generic(c, 0); }
static void fcallRoCommand(client *c) { fcall_generic(c, 1); }

const cmd_handler function_handlers[] = {
    {"fcall", fcallCommand, CMD_LOCK_ALL},
    {"fcall_ro", fcallRoCommand, CMD_LOCK_ALL},
    {"function|load", functionLoadCommand, CMD_LOCK_ALL},
    {"function|delete", functionDeleteCommand, CMD_LOCK_ALL},
    {"function|flush", functionFlushCommand, CMD_LOCK_ALL},
    {"function|list", functionListCommand, CMD_LOCK_ALL},
    {"function|dump", functionDumpCommand, CMD_LOCK_ALL},
    {"function|restore", functionRestoreCommand, CMD_LOCK_ALL},
    {"function|stats", functionStatsCommand, CMD_LOCK_NONE},
    {"function|kill", functionKillCommand, CMD_LOCK_NONE},
    {"function|help", functionHelpCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
