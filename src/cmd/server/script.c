/* script.c -- Lua scripting (Redis 7.0 EVAL family and SCRIPT).
 *
 * One Lua 5.1 state. Every command here is CMD_LOCK_ALL: the keyspace write
 * lock makes a script atomic with respect to every client (as EXEC), and it
 * is also what serializes use of the Lua state and of the script cache
 * (a Lua table sha -> function in the registry, and sha -> shebang flags).
 *
 * The redis.* API, the conversions and the run itself are shared with the
 * functions (script_lua.c). A script may start with a "#!lua flags=..."
 * line: it then runs with those flags and without the implicit ones of a
 * script without it (Redis's eval compatibility mode). The state holds
 * the Lua libraries Redis ships and its globals are read-only
 * (lua_libs.c); a long script turns busy (script.h, script_lua.c). */
#include "cmd/server/script.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/server/lua_libs.h"
#include "cmd/server/script_ldb.h"
#include "cmd/server/script_lua.h"
#include "cmd/server/admin_family.h"
#include "session/reply.h"
#include "util/sha1.h"
#include "util/strutil.h"

static lua_State *L;
static size_t vm_bytes;     /* L's allocations (atomics) */
static size_t cache_bytes;  /* the cached scripts' bodies and shas (under flags_lock) */

#define SCRIPTS_KEY "goblin_scripts"
#define FLAGS_KEY "goblin_script_flags"


static void lua_setup(void) {
    L = script_lua_newstate(&vm_bytes);
    script_lua_open(L, 1);

    script_lua_push_err_handler(L); /* a global, as in Redis */
    lua_setglobal(L, "__redis__err__handler");

    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, SCRIPTS_KEY);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, FLAGS_KEY);
    lua_pushnil(L);
    lua_setglobal(L, "KEYS");
    lua_sethook(L, script_kill_hook, LUA_MASKCOUNT, 100000);
    lualibs_protect(L);
}

void script_family_init(void) {
    script_lua_init();
    lua_setup();
}

void script_family_shutdown(void) {
    ldb_kill_children();
    if (L) lua_close(L);
    L = NULL;
    script_lua_shutdown();
}

/* ------------------------------------------------------------------------ */
/* The script cache */

/* The cached scripts' flags by sha, beside the Lua registry's copy, for
 * readers on any thread (script_cached_flags); under flags_lock. Scripts
 * are few: a linear table. */
typedef struct sha_flags {
    char sha[41];
    int flags;
} sha_flags;
static pthread_mutex_t flags_lock = PTHREAD_MUTEX_INITIALIZER;
static sha_flags *flags_tab;
static size_t flags_n, flags_cap;

static void flags_remember(const char *sha, int flags, size_t body_len) {
    pthread_mutex_lock(&flags_lock);
    if (flags_n == flags_cap) {
        size_t cap = flags_cap ? flags_cap * 2 : 16;
        sha_flags *t = realloc(flags_tab, cap * sizeof(*t));
        if (!t) {
            pthread_mutex_unlock(&flags_lock);
            return;
        }
        flags_tab = t;
        flags_cap = cap;
    }
    memcpy(flags_tab[flags_n].sha, sha, 41);
    flags_tab[flags_n++].flags = flags;
    cache_bytes += body_len + 41;
    pthread_mutex_unlock(&flags_lock);
}

static void flags_forget_all(void) {
    pthread_mutex_lock(&flags_lock);
    flags_n = 0;
    cache_bytes = 0;
    pthread_mutex_unlock(&flags_lock);
}

void script_memory(long *scripts, size_t *vm, size_t *cache) {
    pthread_mutex_lock(&flags_lock);
    *scripts = (long)flags_n;
    *cache = cache_bytes;
    pthread_mutex_unlock(&flags_lock);
    *vm = __atomic_load_n(&vm_bytes, __ATOMIC_RELAXED);
}

int script_cached_flags(const char *sha, int *flags) {
    int rc = -1;
    pthread_mutex_lock(&flags_lock);
    for (size_t i = 0; i < flags_n; i++)
        if (!memcmp(flags_tab[i].sha, sha, 40)) {
            *flags = flags_tab[i].flags;
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&flags_lock);
    return rc;
}

/* Push the cached function of sha (40 hex), or return 0. */
static int cache_get(const char *sha) {
    lua_getfield(L, LUA_REGISTRYINDEX, SCRIPTS_KEY);
    lua_getfield(L, -1, sha);
    lua_remove(L, -2);
    if (lua_isfunction(L, -1)) return 1;
    lua_pop(L, 1);
    return 0;
}

/* The shebang flags of the cached script sha (cache_get found it). */
static int cache_flags(const char *sha) {
    lua_getfield(L, LUA_REGISTRYINDEX, FLAGS_KEY);
    lua_getfield(L, -1, sha);
    int f = lua_isnumber(L, -1) ? (int)lua_tonumber(L, -1) : SCRIPT_FLAG_EVAL_COMPAT;
    lua_pop(L, 2);
    return f;
}

/* Compile body into the cache under its sha (computed into sha[41]), the
 * shebang line left out (its newline kept, so line numbers hold). On
 * failure replies the error to c and returns -1. Leaves nothing on the
 * stack. */
static int cache_add(client *c, const char *body, size_t n, char sha[41]) {
    sha1_hex(body, n, sha);
    if (cache_get(sha)) {
        lua_pop(L, 1);
        return 0;
    }
    int flags;
    size_t skip;
    char err[256];
    if (script_shebang_flags(body, n, &flags, &skip, err, sizeof(err))) {
        if (c) reply_error(c, err);
        return -1;
    }
    if (lualibs_load(L, body + skip, n - skip, "@user_script")) {
        if (c) reply_errorf(c, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, SCRIPTS_KEY);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, sha);
    lua_pop(L, 2);
    lua_getfield(L, LUA_REGISTRYINDEX, FLAGS_KEY);
    lua_pushnumber(L, flags);
    lua_setfield(L, -2, sha);
    lua_pop(L, 1);
    flags_remember(sha, flags, n);
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
    lualibs_set_global(L, name);
}

static void eval_generic(client *c, int by_sha, int ro) {
    long long numkeys;
    cmd_feed_monitor(c);
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

    script_run(c, L, base, 0, sha, "@user_script", cache_flags(sha), ro, 1);
}

/* A client in debug mode (SCRIPT DEBUG YES|SYNC): its EVAL runs as a
 * debugging session, which is over when the EVAL is; EVALSHA is refused,
 * as Redis does. */
static void eval_command(client *c, int by_sha, int ro) {
    if (!c->lua_debug) {
        eval_generic(c, by_sha, ro);
    } else if (by_sha) {
        reply_error(c, "ERR Please use EVAL instead of EVALSHA for debugging");
    } else if (ldb_start(c, c->argv[1].p, c->argv[1].n)) {
        eval_generic(c, 0, ro);
        ldb_end(c);
    }
}

static void evalCommand(client *c) { eval_command(c, 0, 0); }
static void evalshaCommand(client *c) { eval_command(c, 1, 0); }
static void evalRoCommand(client *c) { eval_command(c, 0, 1); }
static void evalshaRoCommand(client *c) { eval_command(c, 1, 1); }

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
    flags_forget_all();
    reply_ok(c);
}

/* Runs without locks, usually while the script runs on another worker or
 * further up this worker's stack. */
static void scriptKillCommand(client *c) { script_kill(c, 1); }

static void scriptHelpCommand(client *c) {
    static const char *const lines[] = {
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
        NULL,
    };
    admin_reply_help(c, "SCRIPT", lines);
}

/* SCRIPT DEBUG YES|SYNC|NO: the Lua debugger (script_ldb.c). */
static void scriptDebugCommand(client *c) { ldb_script_debug(c); }

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
    {"script|debug", scriptDebugCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
