/* script_lua.c -- the Lua side EVAL scripts and functions share (see
 * script_lua.h): the redis.* API, RESP <-> Lua conversions, script flags
 * and the run of one script.
 *
 * redis.call / redis.pcall build an argv, check the command the way Redis's
 * scriptCall does (unknown, arity, noscript, stale replica, read-only
 * scripts, writes refused, OOM), run it with cmd_call() on a scratch
 * client (CLIENT_IN_EXEC: no blocking, no locks since the write lock is
 * held), and parse the RESP2/RESP3 bytes the handler wrote back into Lua
 * values. The script's return value is turned into a reply on the calling
 * client with Redis's conversion rules.
 *
 * A long script (script.h): the Lua count hook calls script_run_interrupt
 * every 100000 instructions; past busy-reply-threshold the script is busy,
 * other clients get -BUSY, and the hook serves this worker's other
 * connections. SCRIPT KILL / FUNCTION KILL raise a flag the hook turns
 * into an error; a script that wrote cannot be killed. */
#include "cmd/server/script_lua.h"

#include <assert.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cluster/cluster.h"
#include "cmd/evict.h"
#include "cmd/propagate.h"
#include "cmd/repl/repl.h"
#include "cmd/server/acl.h"
#include "cmd/server/lua_libs.h"
#include "cmd/server/script.h"
#include "cmd/server/script_ldb.h"
#include "session/reply.h"
#include "session/session.h"
#include "util/monotime.h"
#include "util/sha1.h"
#include "util/strutil.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "base/config.h"
#include "base/log.h"
#include "base/process.h"

/* Run flags (Redis's scriptRunCtx flags). */
enum { RUN_READ_ONLY = 1 << 0, RUN_ALLOW_OOM = 1 << 1 };

/* The running script: its caller, run flags, whether the caller must be
 * obeyed (the primary's stream, the AOF), whether memory was over
 * maxmemory when it began, the RESP version used for redis.call replies
 * (redis.setresp) and the scratch client. */
static struct {
    client *caller;
    int flags;
    int obey;
    int pre_oom;
    int resp;
    int slot;          /* cluster mode: the slot of the keys it touches */
    int cross_slot_ok; /* allow-cross-slot-keys */
    client scratch;
} run;

/* The running script, shared with every worker (script.h). run_state
 * moves IDLE -> RUNNING -> (BUSY ->) IDLE under gate_mu, which waiters of
 * script_gate_wait sleep on; it and the other run_* words are read with
 * atomics. run_name and run_caller change under gate_mu only (FUNCTION
 * STATS reads them under it); the running thread alone reads
 * run_start_us. */
enum { RUN_IDLE, RUN_RUNNING, RUN_BUSY };
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static _Alignas(64) int run_state;
static int run_is_eval, run_from_primary, run_wrote, run_killed;
static int64_t run_start_ms;
static uint64_t run_start_us;
static char run_name[64];
static const client *run_caller;
static long long busy_threshold = 5000; /* busy-reply-threshold (lua-time-limit) */
static _Thread_local int tl_running;    /* this thread runs the script */
static _Thread_local int tl_pumping;    /* this thread serves connections while busy */
static _Thread_local int tl_kill_logged;

#define BUSY_EVAL "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
#define BUSY_FUNCTION "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."

static void run_set_state(int st) {
    pthread_mutex_lock(&gate_mu);
    __atomic_store_n(&run_state, st, __ATOMIC_RELEASE);
    if (st == RUN_IDLE) run_caller = NULL;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

void script_run_begin(client *caller, int is_eval, const char *name) {
    assert(!tl_running);
    pthread_mutex_lock(&gate_mu);
    assert(__atomic_load_n(&run_state, __ATOMIC_RELAXED) == RUN_IDLE);
    __atomic_store_n(&run_is_eval, is_eval, __ATOMIC_RELAXED);
    __atomic_store_n(&run_from_primary, (client_flags_peek(caller) & CLIENT_PRIMARY) != 0, __ATOMIC_RELAXED);
    __atomic_store_n(&run_wrote, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&run_killed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&run_start_ms, db_now_ms(), __ATOMIC_RELAXED);
    snprintf(run_name, sizeof(run_name), "%s", name);
    run_caller = caller;
    __atomic_store_n(&run_state, RUN_RUNNING, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&gate_mu);
    tl_running = 1;
    tl_kill_logged = 0;
    run_start_us = monotime_us();
}

void script_run_end(void) {
    assert(tl_running);
    tl_running = 0;
    run_set_state(RUN_IDLE);
}

void script_run_wrote(void) { __atomic_store_n(&run_wrote, 1, __ATOMIC_RELAXED); }

static int run_has_written(void) { return __atomic_load_n(&run_wrote, __ATOMIC_RELAXED); }

/* Serve this worker's connections while busy (nothing off a worker). */
static void serve_while_busy(void) {
    tl_pumping = 1;
    session_events_while_busy();
    tl_pumping = 0;
}

int script_run_interrupt(void) {
    assert(tl_running);
    if (__atomic_load_n(&run_state, __ATOMIC_RELAXED) != RUN_BUSY) {
        /* Read under the keyspace write lock, as CONFIG SET writes it. */
        long long limit = busy_threshold;
        uint64_t elapsed = (monotime_us() - run_start_us) / 1000;
        if (limit <= 0 || elapsed < (uint64_t)limit) return 0;
        int is_eval = __atomic_load_n(&run_is_eval, __ATOMIC_RELAXED);
        log_warn("Slow script detected: still in execution after %llu milliseconds. You can try killing the script "
                 "using the %s command. Script name is: %s.",
                 (unsigned long long)elapsed, is_eval ? "SCRIPT KILL" : "FUNCTION KILL", run_name);
        run_set_state(RUN_BUSY);
    }
    serve_while_busy();
    if (!__atomic_load_n(&run_killed, __ATOMIC_RELAXED)) return 0;
    if (!tl_kill_logged) log_warn("Lua script killed by user with SCRIPT KILL.");
    tl_kill_logged = 1;
    return 1;
}

/* The keyspace wait hook: a worker waiting for the lock a busy script
 * holds serves its other connections. */
static void wait_hook(void) {
    if (tl_running || tl_pumping || __atomic_load_n(&run_state, __ATOMIC_ACQUIRE) != RUN_BUSY) return;
    serve_while_busy();
}

int script_busy(const char **err) {
    if (!tl_pumping && __atomic_load_n(&run_state, __ATOMIC_ACQUIRE) != RUN_BUSY) return 0;
    *err = __atomic_load_n(&run_is_eval, __ATOMIC_RELAXED) ? BUSY_EVAL : BUSY_FUNCTION;
    return 1;
}

void script_gate_wait(const client *c) {
    if (__atomic_load_n(&run_state, __ATOMIC_ACQUIRE) != RUN_RUNNING) return;
    if (tl_running || tl_pumping || (client_flags_peek(c) & (CLIENT_PRIMARY | CLIENT_AOF_LOADER))) return;
    pthread_mutex_lock(&gate_mu);
    while (__atomic_load_n(&run_state, __ATOMIC_RELAXED) == RUN_RUNNING) pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
}

int script_running(int *is_eval, int64_t *start_ms) {
    pthread_mutex_lock(&gate_mu);
    int on = __atomic_load_n(&run_state, __ATOMIC_RELAXED) != RUN_IDLE;
    *is_eval = __atomic_load_n(&run_is_eval, __ATOMIC_RELAXED);
    *start_ms = __atomic_load_n(&run_start_ms, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&gate_mu);
    return on;
}

/* Under gate_mu: the script cannot end and another begin meanwhile. */
void script_kill(client *c, int is_eval) {
    pthread_mutex_lock(&gate_mu);
    int on = __atomic_load_n(&run_state, __ATOMIC_RELAXED) != RUN_IDLE;
    int eval = __atomic_load_n(&run_is_eval, __ATOMIC_RELAXED);
    if (!on) {
        reply_error(c, "NOTBUSY No scripts in execution right now.");
    } else if (__atomic_load_n(&run_from_primary, __ATOMIC_RELAXED)) {
        reply_error(c, "UNKILLABLE The busy script was sent by a master instance in the context of replication and "
                       "cannot be killed.");
    } else if (__atomic_load_n(&run_wrote, __ATOMIC_RELAXED)) {
        reply_error(c, "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
                       "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
                       "NOSAVE command.");
    } else if (is_eval && !eval) {
        reply_error(c, BUSY_FUNCTION);
    } else if (!is_eval && eval) {
        reply_error(c, BUSY_EVAL);
    } else {
        __atomic_store_n(&run_killed, 1, __ATOMIC_RELAXED);
        reply_ok(c);
    }
    pthread_mutex_unlock(&gate_mu);
}

/* Under gate_mu: the caller's argv stays while its script runs. */
void script_reply_running(client *c) {
    pthread_mutex_lock(&gate_mu);
    if (__atomic_load_n(&run_state, __ATOMIC_RELAXED) == RUN_IDLE || !run_caller ||
        __atomic_load_n(&run_is_eval, __ATOMIC_RELAXED)) {
        pthread_mutex_unlock(&gate_mu);
        reply_null(c);
        return;
    }
    reply_map(c, 3);
    reply_bulk(c, "name", 4);
    reply_bulk(c, run_name, strlen(run_name));
    reply_bulk(c, "command", 7);
    reply_array(c, run_caller->argc);
    for (int i = 0; i < run_caller->argc; i++) reply_bulk(c, run_caller->argv[i].p, run_caller->argv[i].n);
    reply_bulk(c, "duration_ms", 11);
    reply_int(c, db_now_ms() - __atomic_load_n(&run_start_ms, __ATOMIC_RELAXED));
    pthread_mutex_unlock(&gate_mu);
}

long long script_busy_threshold_ms(void) { return __atomic_load_n(&busy_threshold, __ATOMIC_RELAXED); }

void script_lua_init(void) {
    config_bind_ll("busy-reply-threshold", &busy_threshold);
    db_set_keyspace_wait_hook(wait_hook);
}

/* Lua's allocator (luaL_newstate's, realloc and free) that also keeps the
 * state's byte count in *ud: INFO reads it from any thread, where
 * lua_gc(LUA_GCCOUNT) may only be asked on the state's own. Lua gives the
 * old block's size in osize (0 for a new block). */
static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    size_t *bytes = ud;
    if (nsize == 0) {
        free(ptr);
        if (ptr) __atomic_sub_fetch(bytes, osize, __ATOMIC_RELAXED);
        return NULL;
    }
    void *n = realloc(ptr, nsize);
    if (n) {
        if (ptr) __atomic_sub_fetch(bytes, osize, __ATOMIC_RELAXED);
        __atomic_add_fetch(bytes, nsize, __ATOMIC_RELAXED);
    }
    return n;
}

/* An error outside any protected call: as luaL_newstate's panic. */
static int lua_panic(lua_State *l) {
    log_warn("PANIC: unprotected error in call to Lua API (%s)", lua_tostring(l, -1) ? lua_tostring(l, -1) : "?");
    return 0;
}

lua_State *script_lua_newstate(size_t *bytes) {
    lua_State *l = lua_newstate(counting_alloc, bytes);
    if (l) lua_atpanic(l, lua_panic);
    return l;
}

/* ------------------------------------------------------------------------ */
/* RESP -> Lua */

/* Parse one RESP value at *pp (bounded by end) and push it. Returns 0 on
 * success, -1 on malformed input (pushes nothing). */
static int resp_to_lua(lua_State *l, const char **pp, const char *end);
static void reply_error_cstr(client *c, const char *s, int counted);

/* The error table on top of the stack was counted in errorstats already:
 * the script's reply of it is not counted again (Redis's
 * ignore_error_stats_update field). */
static void mark_error_counted(lua_State *l) {
    lua_pushstring(l, "ignore_error_stats_update");
    lua_pushboolean(l, 1);
    lua_rawset(l, -3);
}

static int error_counted(lua_State *l, int idx) {
    if (idx < 0) idx = lua_gettop(l) + idx + 1; /* before the key is pushed */
    lua_pushstring(l, "ignore_error_stats_update");
    lua_rawget(l, idx);
    int yes = lua_toboolean(l, -1);
    lua_pop(l, 1);
    return yes;
}


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
        script_push_error(l, lua_tostring(l, -1));
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

/* The entries of the table on top of the stack (its array part and its
 * hash part alike). */
static long table_count(lua_State *l) {
    long n = 0;
    lua_pushnil(l);
    while (lua_next(l, -2)) {
        n++;
        lua_pop(l, 1);
    }
    return n;
}

/* The first n bytes of the string on top of l's stack, each CR and LF
 * made a space (what a status or big number line can carry), in a buffer
 * of n + 1 bytes the caller frees. */
static char *lua_copy_no_crlf(lua_State *l, size_t n) {
    const char *s = lua_tostring(l, -1);
    char *tmp = malloc(n + 1);
    if (!tmp) abort(); /* as the allocator's own failure */
    for (size_t i = 0; i < n; i++) tmp[i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
    tmp[n] = '\0';
    return tmp;
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
            reply_error_cstr(c, lua_tostring(l, -1), error_counted(l, -2));
            lua_pop(l, 1);
            break;
        }
        if (table_field(l, -1, "ok", LUA_TSTRING)) {
            /* A status line cannot hold CR/LF: Redis replaces them. */
            size_t n = strlen(lua_tostring(l, -1));
            char *tmp = lua_copy_no_crlf(l, n);
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
            /* Nor a big number's line (Redis replaces them there too). */
            size_t n;
            lua_tolstring(l, -1, &n);
            char *tmp = lua_copy_no_crlf(l, n);
            reply_bignum(c, tmp, n);
            free(tmp);
            lua_pop(l, 1);
            break;
        }
        if (table_field(l, -1, "map", LUA_TTABLE)) {
            long n = table_count(l);
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
            long n = table_count(l);
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
void script_push_error(lua_State *l, const char *err) {
    if (ldb_logging()) ldb_log_error(err);
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
static void reply_error_cstr(client *c, const char *s, int counted) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\r' || s[n - 1] == '\n')) n--;
    char *tmp = malloc(n + 1);
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    if (counted) reply_error_uncounted(c, tmp);
    else reply_error(c, tmp);
    free(tmp);
}

static int raise_error(lua_State *l) { return lua_error(l); }

/* Why the script's first write may not run (Redis's
 * scriptVerifyWriteCommandAllow), or NULL. */
static const char *write_refusal(void) {
    static _Thread_local char aof_err[256];
    if (repl_is_replica() && repl_read_only() && !run.obey) return "-READONLY You can't write against a read only replica.";
    if (persist_writes_refused()) return "-" MISCONF_RDB;
    if (aof_write_error(aof_err + 1, sizeof(aof_err) - 1)) {
        aof_err[0] = '-';
        return aof_err;
    }
    if (!repl_is_replica() && repl_min_replicas_refuse()) return "-NOREPLICAS Not enough good replicas to write.";
    return NULL;
}

static void free_argv(garg *argv, int argc) {
    for (int j = 0; j < argc; j++) free(argv[j].p);
    free(argv);
}

/* The arguments of a redis lib call as an argv (numbers as %.17g), or NULL
 * with the error table pushed. */
static garg *script_argv(lua_State *l, int argc) {
    if (argc == 0) {
        script_push_error(l, "Please specify at least one argument for this redis lib call");
        return NULL;
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
            free_argv(argv, i);
            script_push_error(l, "Lua redis lib command arguments must be strings or integers");
            return NULL;
        }
        argv[i].p = malloc(n + 1);
        memcpy(argv[i].p, s, n);
        argv[i].p[n] = '\0';
        argv[i].n = n;
    }
    return argv;
}

static int disable_deny; /* atomics: script_set_disable_deny */
void script_set_disable_deny(int on) { __atomic_store_n(&disable_deny, on, __ATOMIC_RELAXED); }

/* A redis.call refused before it ran: a rejected call of cmd and an error
 * reply, as Redis counts them; the error table goes to the script marked
 * counted (its own reply of it is not counted again). */
static int refuse_call(lua_State *l, const cmd_def *cmd, garg *argv, int argc, const char *err, int raise) {
    cmd_count_rejected(cmd);
    reply_count_error(err);
    free_argv(argv, argc);
    script_push_error(l, err);
    mark_error_counted(l);
    return raise ? raise_error(l) : 1;
}

static int redis_generic_call(lua_State *l, int raise) {
    int argc = lua_gettop(l);
    garg *argv = script_argv(l, argc);
    if (!argv) return raise ? raise_error(l) : 1;
    const char *err = NULL;
    const cmd_def *cmd = cmd_lookup(argv[0].p, argv[0].n);
    if (cmd && cmd->parent) cmd = NULL;
    if (cmd && cmd->subs && argc >= 2 && !(argc == 1 && cmd->proc)) cmd = cmd_lookup_full(argv, argc);
    if (!cmd || (!cmd->proc && !cmd->subs)) {
        err = "Unknown Redis command called from script";
    } else if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity || (cmd->subs && !cmd->proc)) {
        err = "Wrong number of args calling Redis command from script";
    } else if ((cmd->flags & CMDF_NOSCRIPT) && !__atomic_load_n(&disable_deny, __ATOMIC_RELAXED)) {
        err = "This Redis command is not allowed from script";
    } else if (!(cmd->flags & CMDF_STALE) && repl_stale_refusal()) {
        err = "Can not execute the command on a stale replica";
    } else if ((run.flags & RUN_READ_ONLY) && (cmd->flags & (CMDF_WRITE | CMDF_MAY_REPLICATE))) {
        err = "Write commands are not allowed from read-only scripts.";
    } else if ((cmd->flags & CMDF_WRITE) && !run_has_written()) {
        err = write_refusal();
    }
    if (!err && !(run.flags & RUN_ALLOW_OOM) && !run.obey && run.pre_oom && (cmd->flags & CMDF_DENYOOM) &&
        !run_has_written())
        err = "-OOM command not allowed when used memory > 'maxmemory'.";
    if (err) return refuse_call(l, cmd, argv, argc, err, raise);
    if (cmd->flags & CMDF_WRITE) script_run_wrote();
    /* After the write is counted, as Redis: a refused write still makes
     * the script unkillable. */
    if (cluster_enabled() && !run.obey &&
        (err = cluster_script_check(run.caller, cmd, argc, argv, &run.slot, run.cross_slot_ok)))
        return refuse_call(l, cmd, argv, argc, err, raise);
    client *s = &run.scratch;
    s->argc = argc;
    s->argv = argv;
    s->olen = s->osent = 0;
    s->resp = run.resp;
    if (ldb_logging()) ldb_log_command(argc, argv);
    cmd_call(s, cmd);
    if (ldb_logging()) ldb_log_reply(s->obuf, s->olen);
    free_argv(argv, argc);
    s->argv = NULL;
    s->argc = 0;
    const char *p = s->obuf, *end = s->obuf + s->olen;
    if (s->olen == 0 || resp_to_lua(l, &p, end)) {
        script_push_error(l, "ERR reply of the command could not be converted");
        return raise ? raise_error(l) : 1;
    }
    if (lua_istable(l, -1)) {
        lua_pushstring(l, "err");
        lua_rawget(l, -2);
        int is_err = lua_isstring(l, -1);
        lua_pop(l, 1);
        if (is_err) {
            mark_error_counted(l); /* the command's own reply counted it */
            if (raise) return raise_error(l);
        }
    }
    return 1;
}

static int redis_call(lua_State *l) { return redis_generic_call(l, 1); }
static int redis_pcall(lua_State *l) { return redis_generic_call(l, 0); }

/* redis.acl_check_cmd: may the caller's user run this command? */
static int redis_acl_check_cmd(lua_State *l) {
    int argc = lua_gettop(l);
    garg *argv = script_argv(l, argc);
    if (!argv) return raise_error(l);
    const cmd_def *cmd = cmd_lookup(argv[0].p, argv[0].n);
    if (cmd && cmd->parent) cmd = NULL; /* "config|get" names nothing */
    if (cmd) cmd = cmd_lookup_full(argv, argc);
    int ok = cmd ? acl_allows(run.caller, cmd, argv, argc) : -1;
    free_argv(argv, argc);
    if (ok < 0) {
        script_push_error(l, "Invalid command passed to redis.acl_check_cmd()");
        return raise_error(l);
    }
    lua_pushboolean(l, ok);
    return 1;
}

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
        script_push_error(l, "wrong number or type of arguments");
        return 1;
    }
    const char *e = lua_tostring(l, -1);
    if (e[0] == '-') {
        script_push_error(l, e);
    } else {
        lua_pushfstring(l, "-%s", e);
        script_push_error(l, lua_tostring(l, -1));
    }
    return 1;
}

static int redis_status_reply(lua_State *l) {
    if (lua_gettop(l) != 1 || lua_type(l, -1) != LUA_TSTRING) {
        script_push_error(l, "wrong number or type of arguments");
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

static int redis_set_repl(lua_State *l) {
    if (lua_gettop(l) != 1) {
        lua_pushstring(l, "redis.set_repl() requires two arguments.");
        return lua_error(l);
    }
    int flags = (int)lua_tonumber(l, -1);
    if (flags & ~3) { /* REPL_AOF | REPL_REPLICA */
        lua_pushstring(l, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
        return lua_error(l);
    }
    /* The script's next calls are recorded for the AOF, the replicas, both
     * or neither (REPL_AOF and REPL_REPLICA are the stream's own bits). */
    prop_call_targets(flags);
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

/* Every 100000 instructions: turn busy past the threshold, serve the
 * worker's other connections, stop the script if a kill asked. */
void script_kill_hook(lua_State *l, lua_Debug *ar) {
    (void)ar;
    /* The flag stays up until the script ends, and the hook then fires on
     * every line: a pcall cannot swallow the kill (as Redis). */
    if (script_run_interrupt()) {
        lua_sethook(l, script_kill_hook, LUA_MASKLINE, 0);
        script_push_error(l, "Script killed by user with SCRIPT KILL...");
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

/* ------------------------------------------------------------------------ */
/* Shared setup */

/* redis.REDIS_VERSION and REDIS_VERSION_NUM (0x00MMmmpp). */
static void set_version(lua_State *l) {
    int ma = 0, mi = 0, pa = 0;
    sscanf(GOBLIN_REDIS_VERSION, "%d.%d.%d", &ma, &mi, &pa);
    set_num(l, "REDIS_VERSION_NUM", (ma << 16) | (mi << 8) | pa);
    lua_pushstring(l, GOBLIN_REDIS_VERSION);
    lua_setfield(l, -2, "REDIS_VERSION");
}

void script_lua_set_log(lua_State *l) {
    set_func(l, "log", redis_log);
    set_num(l, "LOG_DEBUG", LOG_DEBUG_L);
    set_num(l, "LOG_VERBOSE", LOG_VERBOSE_L);
    set_num(l, "LOG_NOTICE", LOG_NOTICE_L);
    set_num(l, "LOG_WARNING", LOG_WARNING_L);
    set_version(l);
}

void script_lua_open(lua_State *l, int eval) {
    static const luaL_Reg libs[] = {{"", luaopen_base},         {LUA_TABLIBNAME, luaopen_table},
                                    {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_DBLIBNAME, luaopen_debug},   {NULL, NULL}};
    for (const luaL_Reg *r = libs; r->func; r++) {
        lua_pushcfunction(l, r->func);
        lua_pushstring(l, r->name);
        lua_call(l, 1, 0);
    }
    lualibs_open(l);
    lua_pushnil(l);
    lua_setglobal(l, "loadfile");
    lua_pushnil(l);
    lua_setglobal(l, "dofile");
    lua_pushnil(l);
    lua_setglobal(l, "print");
    lua_pushcfunction(l, script_pcall);
    lua_setglobal(l, "pcall");
    lua_getglobal(l, "math");
    set_func(l, "random", math_random);
    set_func(l, "randomseed", math_randomseed);
    lua_pop(l, 1);

    lua_newtable(l);
    set_func(l, "call", redis_call);
    set_func(l, "pcall", redis_pcall);
    set_func(l, "sha1hex", redis_sha1hex);
    set_func(l, "error_reply", redis_error_reply);
    set_func(l, "status_reply", redis_status_reply);
    set_func(l, "setresp", redis_setresp);
    set_func(l, "set_repl", redis_set_repl);
    if (eval) {
        /* The debugger's and the old replication API: EVAL scripts only. */
        set_func(l, "replicate_commands", redis_replicate_commands);
        set_func(l, "breakpoint", ldb_lua_breakpoint);
        set_func(l, "debug", ldb_lua_debug);
    }
    script_lua_set_log(l);
    set_num(l, "REPL_NONE", 0);
    set_num(l, "REPL_AOF", 1);
    set_num(l, "REPL_SLAVE", 2);
    set_num(l, "REPL_REPLICA", 2);
    set_num(l, "REPL_ALL", 3);
    set_func(l, "acl_check_cmd", redis_acl_check_cmd);
    lua_setglobal(l, "redis");
}

void script_lua_shutdown(void) {
    free(run.scratch.obuf);
    run.scratch.obuf = NULL;
    run.scratch.ocap = 0;
}

/* ------------------------------------------------------------------------ */
/* Flags */

const script_flag_name script_flag_names[] = {
    {"no-writes", SCRIPT_FLAG_NO_WRITES},   {"allow-oom", SCRIPT_FLAG_ALLOW_OOM},
    {"allow-stale", SCRIPT_FLAG_ALLOW_STALE}, {"no-cluster", SCRIPT_FLAG_NO_CLUSTER},
    {"allow-cross-slot-keys", SCRIPT_FLAG_ALLOW_CROSS_SLOT}, {NULL, 0},
};

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

void script_split_free(char **argv, int argc) {
    for (int i = 0; i < argc; i++) free(argv[i]);
    free(argv);
}

/* Split line[0..n) into words as Redis's sdssplitargs: blanks separate,
 * "..." (with \n \r \t \b \a \xHH and \c escapes) and '...' (with \')
 * quote, and a closing quote must end its word. Words are NUL-terminated
 * (the C string ends at an embedded NUL, as in Redis). -1 on bad quotes. */
int script_split_args(const char *line, size_t n, char ***out, int *outc) {
    char *tmp = malloc(n + 1);
    memcpy(tmp, line, n);
    tmp[n] = '\0';
    char **argv = NULL;
    int argc = 0;
    const char *p = tmp;
    for (;;) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == '\f' || *p == '\v') p++;
        if (!*p) break;
        size_t cap = strlen(p) + 1, o = 0;
        char *w = malloc(cap);
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            if (inq) {
                if (p[0] == '\\' && p[1] == 'x' && hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
                    w[o++] = (char)(hexval(p[2]) * 16 + hexval(p[3]));
                    p += 3;
                } else if (p[0] == '\\' && p[1]) {
                    p++;
                    char c = *p;
                    w[o++] = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c == 'b' ? '\b' : c == 'a' ? '\a' : c;
                } else if (*p == '"') {
                    if (p[1] && !strchr(" \n\r\t\f\v", p[1])) goto fail;
                    done = 1;
                } else if (!*p) {
                    goto fail;
                } else {
                    w[o++] = *p;
                }
            } else if (insq) {
                if (p[0] == '\\' && p[1] == '\'') {
                    p++;
                    w[o++] = '\'';
                } else if (*p == '\'') {
                    if (p[1] && !strchr(" \n\r\t\f\v", p[1])) goto fail;
                    done = 1;
                } else if (!*p) {
                    goto fail;
                } else {
                    w[o++] = *p;
                }
            } else {
                switch (*p) {
                case ' ': case '\n': case '\r': case '\t': case '\0':
                    done = 1;
                    break;
                case '"': inq = 1; break;
                case '\'': insq = 1; break;
                default: w[o++] = *p;
                }
            }
            if (*p) p++;
        }
        w[o] = '\0';
        argv = realloc(argv, sizeof(char *) * (size_t)(argc + 1));
        argv[argc++] = w;
        continue;
    fail:
        free(w);
        script_split_free(argv, argc);
        free(tmp);
        return -1;
    }
    free(tmp);
    *out = argv;
    *outc = argc;
    return 0;
}

int script_flag_lookup(const char *name) {
    for (const script_flag_name *f = script_flag_names; f->name; f++)
        if (!strcmp(f->name, name)) return f->flag;
    return 0;
}

int script_shebang_flags(const char *body, size_t n, int *flags, size_t *shebang_len, char *err, size_t errlen) {
    *flags = SCRIPT_FLAG_EVAL_COMPAT;
    *shebang_len = 0;
    if (n < 2 || body[0] != '#' || body[1] != '!') return 0;
    const char *nl = memchr(body, '\n', n);
    if (!nl) {
        snprintf(err, errlen, "ERR Invalid script shebang");
        return -1;
    }
    char **argv;
    int argc;
    if (script_split_args(body, (size_t)(nl - body), &argv, &argc) || argc == 0) {
        if (argc == 0 && argv) script_split_free(argv, argc);
        snprintf(err, errlen, "ERR Invalid engine in script shebang");
        return -1;
    }
    int rc = 0;
    int f = 0;
    if (strcmp(argv[0], "#!lua")) {
        snprintf(err, errlen, "ERR Unexpected engine in script shebang: %.200s", argv[0]);
        rc = -1;
    }
    for (int i = 1; i < argc && !rc; i++) {
        if (strncmp(argv[i], "flags=", 6)) {
            snprintf(err, errlen, "ERR Unknown lua shebang option: %.200s", argv[i]);
            rc = -1;
            break;
        }
        /* Comma separated, empty names included (as sdssplitlen): an
         * empty list is no flag at all. */
        const char *q = argv[i] + 6;
        if (!*q) continue;
        for (;;) {
            const char *comma = strchr(q, ',');
            size_t len = comma ? (size_t)(comma - q) : strlen(q);
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), q);
            int fl = len < 63 ? script_flag_lookup(name) : 0;
            if (!fl) {
                snprintf(err, errlen, "ERR Unexpected flag in script shebang: %.*s", (int)(len < 200 ? len : 200), q);
                rc = -1;
                break;
            }
            f |= fl;
            if (!comma) break;
            q = comma + 1;
        }
    }
    script_split_free(argv, argc);
    if (rc) return -1;
    *flags = f;
    *shebang_len = (size_t)(nl - body);
    return 0;
}

/* Redis 7.0's error handler of scripts and functions, in Lua: it gives
 * every error a code, and the source and line of the first Lua frame that
 * is not a C function. */
static const char err_handler_src[] =
    "local dbg = debug\n"
    "return function(err)\n"
    "  local lvl = 2\n"
    "  local i = dbg.getinfo(lvl,'nSl')\n"
    "  while i and i.what == 'C' and lvl < 6 do\n"
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

void script_lua_push_err_handler(lua_State *l) {
    if (luaL_loadbuffer(l, err_handler_src, sizeof(err_handler_src) - 1, "@err_handler_def") || lua_pcall(l, 0, 1, 0))
        abort();
}

uint32_t script_cmd_flags(uint32_t cmd_flags, int script_flags) {
    if (script_flags & SCRIPT_FLAG_EVAL_COMPAT) return cmd_flags;
    cmd_flags &= ~(uint32_t)(CMDF_STALE | CMDF_DENYOOM | CMDF_WRITE | CMDF_MAY_REPLICATE);
    if (!(script_flags & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES))) cmd_flags |= CMDF_DENYOOM;
    if (!(script_flags & SCRIPT_FLAG_NO_WRITES)) cmd_flags |= CMDF_WRITE;
    if (script_flags & SCRIPT_FLAG_ALLOW_STALE) cmd_flags |= CMDF_STALE;
    return cmd_flags;
}

/* ------------------------------------------------------------------------ */
/* The run */

static int obeyed(const client *c) { return (client_flags_peek(c) & (CLIENT_PRIMARY | CLIENT_AOF_LOADER)) != 0; }

/* Redis's scriptPrepareForRun: reply the reason and return -1 when the
 * script may not run. */
static int prepare_checks(client *c, int flags, int ro, int obey, int pre_oom) {
    const char *stale = repl_stale_refusal();
    if (flags & SCRIPT_FLAG_EVAL_COMPAT) {
        if (stale) {
            reply_error(c, stale);
            return -1;
        }
        return 0;
    }
    if ((flags & SCRIPT_FLAG_NO_CLUSTER) && cluster_enabled()) {
        reply_error(c, "ERR Can not run script on cluster, 'no-cluster' flag is set.");
        return -1;
    }
    if (stale && !(flags & SCRIPT_FLAG_ALLOW_STALE)) {
        reply_error(c, "MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to 'no' and "
                       "'allow-stale' flag is not set on the script.");
        return -1;
    }
    if (!(flags & SCRIPT_FLAG_NO_WRITES)) {
        if (repl_is_replica() && repl_read_only() && !obey) {
            reply_error(c, "READONLY Can not run script with write flag on readonly replica");
            return -1;
        }
        char aof_err[256];
        if (!obey && persist_writes_refused()) {
            reply_error(c, "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist "
                           "to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.");
            return -1;
        }
        if (!obey && aof_write_error(aof_err, sizeof(aof_err))) {
            const char *why = strstr(aof_err, ": ");
            reply_errorf(c,
                         "MISCONF Redis is configured to persist data to AOF, but it's currently unable to persist "
                         "to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts. AOF "
                         "error: %s",
                         why ? why + 2 : aof_err);
            return -1;
        }
        if (ro) {
            reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
            return -1;
        }
        if (!repl_is_replica() && repl_min_replicas_refuse()) {
            reply_error(c, "NOREPLICAS Not enough good replicas to write.");
            return -1;
        }
    }
    if (pre_oom && !(flags & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES))) {
        reply_error(c, "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'");
        return -1;
    }
    return 0;
}

int script_run(client *c, lua_State *l, int base, int nargs, const char *name, const char *source, int flags,
               int ro, int is_eval) {
    int obey = obeyed(c);
    int pre_oom = cfg.maxmemory > 0 && !repl_is_replica() && evict_used_memory() > (uint64_t)cfg.maxmemory;
    if (prepare_checks(c, flags, ro, obey, pre_oom)) {
        lua_settop(l, base - 1);
        return -1;
    }
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
    s->flags = CLIENT_IN_EXEC | CLIENT_SCRIPT | (client_flags_peek(c) & (CLIENT_AUTHENTICATED | CLIENT_PRIMARY | CLIENT_AOF_LOADER));
    s->mstate = s->bstate = s->pstate = NULL;
    s->cur = s->last = NULL;
    run.caller = c;
    run.flags = 0;
    if (ro || (!(flags & SCRIPT_FLAG_EVAL_COMPAT) && (flags & SCRIPT_FLAG_NO_WRITES))) run.flags |= RUN_READ_ONLY;
    if (!(flags & SCRIPT_FLAG_EVAL_COMPAT) && (flags & SCRIPT_FLAG_ALLOW_OOM)) run.flags |= RUN_ALLOW_OOM;
    run.obey = obey;
    run.pre_oom = pre_oom;
    run.resp = 2;
    run.slot = cluster_declared_slot(c->argc, c->argv);
    /* A script without a shebang may cross slots, as before 7.0. */
    run.cross_slot_ok = (flags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_ALLOW_CROSS_SLOT)) != 0;

    const cmd_def *self = c->cur;
    script_run_begin(c, is_eval, name);
    prop_call_targets(WSTREAM_TO_ALL);
    /* A debugging session's EVAL stops where its client says. */
    if (is_eval && ldb_active()) lua_sethook(l, ldb_line_hook, LUA_MASKLINE | LUA_MASKCOUNT, 100000);
    int rc = lua_pcall(l, nargs, 1, base);
    prop_call_targets(WSTREAM_TO_ALL);
    script_run_end();
    lua_sethook(l, script_kill_hook, LUA_MASKCOUNT, 100000);
    c->cur = self;
    if (rc) {
        /* The error value: a table {err, source, line} from the handler. */
        if (lua_istable(l, -1)) {
            const char *msg = NULL, *src = NULL;
            lua_getfield(l, -1, "err");
            msg = lua_tostring(l, -1);
            lua_getfield(l, -2, "source");
            src = lua_tostring(l, -1);
            lua_getfield(l, -3, "line");
            long line = (long)lua_tonumber(l, -1);
            if (!msg) msg = "ERR unknown error";
            lua_pushfstring(l, "%s script: %s, on %s:%d.", msg, name, src ? src : "?", (int)line);
            reply_error_cstr(c, lua_tostring(l, -1), error_counted(l, -5)); /* -5: the error table */
            lua_pop(l, 1);
            lua_pop(l, 3);
        } else {
            reply_errorf(c, "ERR Error running script (call to %s): %s: %s", name, source,
                         lua_tostring(l, -1) ? lua_tostring(l, -1) : "?");
        }
        lua_pop(l, 1);
    } else {
        lua_to_reply(c, l, 0);
    }
    lua_settop(l, base - 1);
    run.caller = NULL;
    /* Release a large scratch buffer. */
    if (s->ocap > (1 << 20)) {
        free(s->obuf);
        s->obuf = NULL;
        s->ocap = 0;
    }
    s->olen = s->osent = 0;
    lua_gc(l, LUA_GCSTEP, 1);
    return 0;
}
