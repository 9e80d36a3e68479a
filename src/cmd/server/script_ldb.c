/* script_ldb.c -- the Lua debugger (see script_ldb.h), Redis 7.0's LDB.
 *
 * The protocol is Redis's, so that redis-cli --ldb drives it: the client
 * sends commands as RESP arrays of bulk strings (read here, straight from
 * the socket, while the script is stopped in the line hook); every answer
 * is one array of status lines ("* Stopped at 3, stop reason = step over",
 * "-> 3   redis.call('set',...)", "<redis> set k v", "<reply> \"OK\"",
 * "<value> ..."), each CR or LF in a line made a space. The session ends
 * with "<endsession>" ahead of the EVAL's own reply.
 *
 * Invariant: ldb.active exactly between ldb_start returning 1 and ldb_end,
 * on the thread that runs the EVAL (under the keyspace write lock, as
 * every script); the output buffer of the client holds nothing older than
 * the session while it is active (ldb_start sends it first), so the
 * session's lines go out in order and ldb_end can put <endsession> before
 * the EVAL's reply. */
#include "cmd/server/script_ldb.h"

#include <errno.h>
#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/command.h"
#include "cmd/server/script_lua.h"
#include "mem/ssdtail.h"
#include "persist/wstream.h"
#include "session/reply.h"
#include "session/session.h"
#include "util/monotime.h"
#include "util/strbuf.h"
#include "util/strutil.h"
#include "base/log.h"
#include "base/process.h"
#include "base/tls.h"

#define LDB_BREAKPOINTS_MAX 64
#define LDB_MAX_LEN_DEFAULT 256 /* a logged reply or value is cut there */
#define LDB_CMD_BUF_MAX (1 << 20)
#define LDB_SEND_TIMEOUT_MS 5000

static struct {
    client *c;
    int active, forked;
    int step;        /* stop at the next line */
    int luabp;       /* redis.breakpoint() was called: stop at the next line */
    int currentline;
    int bp[LDB_BREAKPOINTS_MAX], bpcount;
    char **src;      /* the script's lines */
    int lines;
    char **logs;     /* what the next answer holds */
    int nlogs, caplogs;
    char *cbuf;      /* the client's unparsed command bytes */
    size_t clen, ccap;
    size_t maxlen;
    int maxlen_hint_sent;
    int64_t since_ms; /* monotonic: the script runs on its own since (a stop restarts it) */
} ldb;

/* ---- the log: the lines of the next answer -------------------------------- */

static void log_add(char *line) {
    if (ldb.nlogs == ldb.caplogs) {
        int cap = ldb.caplogs ? ldb.caplogs * 2 : 16;
        char **n = realloc(ldb.logs, sizeof(char *) * (size_t)cap);
        if (!n) abort();
        ldb.logs = n;
        ldb.caplogs = cap;
    }
    ldb.logs[ldb.nlogs++] = line;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) abort();
    va_end(ap);
    return s;
}

#define LOGF(...) log_add(str_printf(__VA_ARGS__))

/* A line cut at maxlen (" ..." after it), with the hint the first time. */
static void log_maxlen(char *line) {
    int cut = 0;
    if (ldb.maxlen && strlen(line) > ldb.maxlen) {
        char *n = realloc(line, ldb.maxlen + 5);
        if (!n) abort();
        line = n;
        memcpy(line + ldb.maxlen, " ...", 5);
        cut = 1;
    }
    log_add(line);
    if (cut && !ldb.maxlen_hint_sent) {
        ldb.maxlen_hint_sent = 1;
        LOGF("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
    }
}

static void logs_drop(void) {
    for (int i = 0; i < ldb.nlogs; i++) free(ldb.logs[i]);
    ldb.nlogs = 0;
}

/* The log as one array of status lines, sent now (a dead socket is
 * noticed by the next read). */
static void logs_send(void) {
    client *c = ldb.c;
    char head[32];
    int k = snprintf(head, sizeof(head), "*%d\r\n", ldb.nlogs);
    reply_raw(c, head, (size_t)k);
    for (int i = 0; i < ldb.nlogs; i++) {
        char *s = ldb.logs[i];
        for (char *p = s; *p; p++)
            if (*p == '\r' || *p == '\n') *p = ' ';
        reply_raw(c, "+", 1);
        reply_raw(c, s, strlen(s));
        reply_raw(c, "\r\n", 2);
    }
    logs_drop();
    session_client_sync_send(c, LDB_SEND_TIMEOUT_MS);
}

/* ---- growing strings (util/strbuf) ------------------------------------------ */

static void sb_str(strbuf *b, const char *s) { strbuf_add(b, s, strlen(s)); }

static void sb_repr(strbuf *b, const char *p, size_t n) {
    char *tmp = malloc(n * 4 + 3);
    if (!tmp) abort();
    size_t k = str_repr(tmp, p, n);
    strbuf_add(b, tmp, k);
    free(tmp);
}

/* The buffer's string, the caller's to free. */
static char *sb_take(strbuf *b) {
    if (!b->p) strbuf_add(b, "", 0);
    return b->p;
}

/* ---- Lua values made readable (Redis's ldbCatStackValue) --------------------- */

#define LDB_MAX_VALUES_DEPTH (LUA_MINSTACK / 2)

static void cat_value(strbuf *b, lua_State *l, int idx, int level) {
    int t = lua_type(l, idx);
    if (level++ == LDB_MAX_VALUES_DEPTH) {
        sb_str(b, "<max recursion level reached! Nested table?>");
        return;
    }
    char num[64];
    switch (t) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(l, idx, &n);
        sb_repr(b, s, n);
        break;
    }
    case LUA_TBOOLEAN: sb_str(b, lua_toboolean(l, idx) ? "true" : "false"); break;
    case LUA_TNUMBER:
        snprintf(num, sizeof(num), "%g", (double)lua_tonumber(l, idx));
        sb_str(b, num);
        break;
    case LUA_TNIL: sb_str(b, "nil"); break;
    case LUA_TTABLE: {
        /* Both forms at once, an array's and a map's; the keys say which. */
        int expected = 1, is_array = 1;
        strbuf arr = {0}, map = {0};
        lua_pushnil(l);
        while (lua_next(l, idx - 1)) {
            if (is_array && (lua_type(l, -2) != LUA_TNUMBER || lua_tonumber(l, -2) != expected)) is_array = 0;
            cat_value(&arr, l, -1, level);
            sb_str(&arr, "; ");
            sb_str(&map, "[");
            cat_value(&map, l, -2, level);
            sb_str(&map, "]=");
            cat_value(&map, l, -1, level);
            sb_str(&map, "; ");
            lua_pop(l, 1);
            expected++;
        }
        strbuf *pick = is_array ? &arr : &map;
        sb_str(b, "{");
        if (pick->len >= 2) strbuf_add(b, pick->p, pick->len - 2);
        sb_str(b, "}");
        free(arr.p);
        free(map.p);
        break;
    }
    case LUA_TFUNCTION:
    case LUA_TUSERDATA:
    case LUA_TTHREAD:
    case LUA_TLIGHTUSERDATA: {
        const char *name = t == LUA_TFUNCTION   ? "function"
                           : t == LUA_TUSERDATA ? "userdata"
                           : t == LUA_TTHREAD   ? "thread"
                                                : "light-userdata";
        char tmp[96];
        snprintf(tmp, sizeof(tmp), "\"%s@%p\"", name, lua_topointer(l, idx));
        sb_str(b, tmp);
        break;
    }
    default: sb_str(b, "\"<unknown-lua-type>\""); break;
    }
}

/* The value on top of the stack, logged after prefix (not popped). */
static void log_value(lua_State *l, const char *prefix) {
    strbuf b = {0};
    sb_str(&b, prefix);
    cat_value(&b, l, -1, 0);
    log_maxlen(sb_take(&b));
}

/* ---- RESP made readable (Redis's ldbRedisProtocolToHuman) -------------------- */

/* One reply at p (bounded by end) appended to b; returns what follows it,
 * or end when the reply is cut short. */
static const char *resp_human(strbuf *b, const char *p, const char *end) {
    if (p >= end) return end;
    const char *eol = memchr(p, '\r', (size_t)(end - p));
    if (!eol || eol + 1 >= end) return end;
    const char *next = eol + 2;
    long long n = 0;
    char type = *p;
    if (strchr("$*~%", type) && !str_to_ll(p + 1, (size_t)(eol - p - 1), &n)) return end;
    switch (type) {
    case ':': strbuf_add(b, p + 1, (size_t)(eol - p - 1)); return next;
    case '+':
    case '-': sb_repr(b, p, (size_t)(eol - p)); return next;
    case '$':
        if (n < 0) {
            sb_str(b, "NULL");
            return next;
        }
        if ((long long)(end - next) < n + 2) return end;
        sb_repr(b, next, (size_t)n);
        return next + n + 2;
    case '*':
    case '~':
        if (n < 0) {
            sb_str(b, "NULL");
            return next;
        }
        sb_str(b, type == '*' ? "[" : "~(");
        for (long long i = 0; i < n; i++) {
            next = resp_human(b, next, end);
            if (i != n - 1) sb_str(b, ",");
        }
        sb_str(b, type == '*' ? "]" : ")");
        return next;
    case '%':
        sb_str(b, "{");
        for (long long i = 0; i < n; i++) {
            next = resp_human(b, next, end);
            sb_str(b, " => ");
            next = resp_human(b, next, end);
            if (i != n - 1) sb_str(b, ",");
        }
        sb_str(b, "}");
        return next;
    case '_': sb_str(b, "(null)"); return next;
    case '#': sb_str(b, p[1] == 't' ? "#true" : "#false"); return next;
    case ',':
        sb_str(b, "(double) ");
        strbuf_add(b, p + 1, (size_t)(eol - p - 1));
        return next;
    default: return end;
    }
}

/* ---- source lines and breakpoints ---------------------------------------------- */

static const char *source_line(int line) {
    if (line < 1 || line > ldb.lines) return "<out of range source code line>";
    return ldb.src[line - 1];
}

static int is_breakpoint(int line) {
    for (int i = 0; i < ldb.bpcount; i++)
        if (ldb.bp[i] == line) return 1;
    return 0;
}

static void log_source_line(int line) {
    int bp = is_breakpoint(line), cur = ldb.currentline == line;
    const char *prefix = cur && bp ? "->#" : cur ? "-> " : bp ? "  #" : "   ";
    LOGF("%s%-3d %s", prefix, line, source_line(line));
}

static void list_lines(int around, int context) {
    for (int j = 1; j <= ldb.lines; j++) {
        if (around != 0 && abs(around - j) > context) continue;
        log_source_line(j);
    }
}

/* ---- the debugger's commands ----------------------------------------------------- */

typedef struct ldb_cmd {
    char **argv;
    size_t *len;
    int argc;
} ldb_cmd;

static void cmd_free(ldb_cmd *m) {
    for (int i = 0; i < m->argc; i++) free(m->argv[i]);
    free(m->argv);
    free(m->len);
    memset(m, 0, sizeof(*m));
}

/* One command from ldb.cbuf, as Redis's ldbReplParseCommand reads it (a
 * forgiving reader: whatever precedes the '*' is skipped, each argument is
 * 1 to 1024 bytes): 1 parsed (its bytes leave the buffer), 0 more bytes
 * needed, -1 a protocol error. */
static int parse_command(ldb_cmd *m) {
    memset(m, 0, sizeof(*m));
    if (!ldb.clen) return 0;
    const char *buf = ldb.cbuf, *end = ldb.cbuf + ldb.clen;
    const char *p = memchr(buf, '*', ldb.clen);
    if (!p) return -1;
    const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
    if (!eol) return 0;
    int argc = atoi(p + 1); /* stops at the CR */
    if (argc <= 0 || argc > 1024) return -1;
    p = eol + 2;
    m->argv = calloc((size_t)argc, sizeof(char *));
    m->len = calloc((size_t)argc, sizeof(size_t));
    if (!m->argv || !m->len) abort();
    while (m->argc < argc) {
        if (p >= end) goto more;
        if (*p != '$') goto bad;
        eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (!eol) goto more;
        int n = atoi(p + 1);
        if (n <= 0 || n > 1024) goto bad;
        p = eol + 2;
        if (end - p < n + 2) goto more;
        m->argv[m->argc] = malloc((size_t)n + 1);
        if (!m->argv[m->argc]) abort();
        memcpy(m->argv[m->argc], p, (size_t)n);
        m->argv[m->argc][n] = '\0';
        m->len[m->argc++] = (size_t)n;
        p += n;
        if (p[0] != '\r' || p[1] != '\n') goto bad;
        p += 2;
    }
    return 1;
more:
    cmd_free(m);
    return 0;
bad:
    cmd_free(m);
    return -1;
}

static int is(const ldb_cmd *m, const char *a, const char *b) {
    return !strcasecmp(m->argv[0], a) || !strcasecmp(m->argv[0], b);
}

static void cmd_help(void) {
    static const char *const lines[] = {
        "Redis Lua debugger help:",
        "[h]elp               Show this help.",
        "[s]tep               Run current line and stop again.",
        "[n]ext               Alias for step.",
        "[c]ontinue           Run till next breakpoint.",
        "[l]ist               List source code around current line.",
        "[l]ist [line]        List source code around [line].",
        "                     line = 0 means: current position.",
        "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
        "                     to show before/after [line].",
        "[w]hole              List all source code. Alias for 'list 1 1000000'.",
        "[p]rint              Show all the local variables.",
        "[p]rint <var>        Show the value of the specified variable.",
        "                     Can also show global vars KEYS and ARGV.",
        "[b]reak              Show all breakpoints.",
        "[b]reak <line>       Add a breakpoint to the specified line.",
        "[b]reak -<line>      Remove breakpoint from the specified line.",
        "[b]reak 0            Remove all breakpoints.",
        "[t]race              Show a backtrace.",
        "[e]val <code>        Execute some Lua code (in a different callframe).",
        "[r]edis <cmd>        Execute a Redis command.",
        "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
        "                     Specifying zero as <len> means unlimited.",
        "[a]bort              Stop the execution of the script. In sync",
        "                     mode dataset changes will be retained.",
        "",
        "Debugger functions you can call from Lua scripts:",
        "redis.debug()        Produce logs in the debugger console.",
        "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
        "                     next line of code.",
        NULL,
    };
    for (int i = 0; lines[i]; i++) LOGF("%s", lines[i]);
}

static void cmd_print(lua_State *l, const char *name) {
    lua_Debug ar;
    for (int level = 0; lua_getstack(l, level, &ar); level++) {
        const char *n;
        for (int i = 1; (n = lua_getlocal(l, &ar, i)) != NULL; i++) {
            if (!strcmp(name, n)) {
                log_value(l, "<value> ");
                lua_pop(l, 1);
                return;
            }
            lua_pop(l, 1);
        }
    }
    if (!strcmp(name, "ARGV") || !strcmp(name, "KEYS")) {
        lua_getglobal(l, name);
        log_value(l, "<value> ");
        lua_pop(l, 1);
    } else {
        LOGF("No such variable.");
    }
}

static void cmd_print_all(lua_State *l) {
    lua_Debug ar;
    int vars = 0;
    if (lua_getstack(l, 0, &ar)) {
        const char *n;
        for (int i = 1; (n = lua_getlocal(l, &ar, i)) != NULL; i++) {
            if (!strstr(n, "(*temporary)")) {
                char *prefix = str_printf("<value> %s = ", n);
                log_value(l, prefix);
                free(prefix);
                vars++;
            }
            lua_pop(l, 1);
        }
    }
    if (!vars) LOGF("No local variables in the current context.");
}

static void cmd_break(const ldb_cmd *m) {
    if (m->argc == 1) {
        if (!ldb.bpcount) {
            LOGF("No breakpoints set. Use 'b <line>' to add one.");
            return;
        }
        LOGF("%d breakpoints set:", ldb.bpcount);
        for (int j = 0; j < ldb.bpcount; j++) log_source_line(ldb.bp[j]);
        return;
    }
    for (int j = 1; j < m->argc; j++) {
        long long line;
        if (!str_to_ll(m->argv[j], m->len[j], &line)) {
            LOGF("Invalid argument:'%s'", m->argv[j]);
        } else if (line == 0) {
            ldb.bpcount = 0;
            LOGF("All breakpoints removed.");
        } else if (line > 0) {
            if (ldb.bpcount == LDB_BREAKPOINTS_MAX) {
                LOGF("Too many breakpoints set.");
            } else if (line <= ldb.lines && !is_breakpoint((int)line)) {
                ldb.bp[ldb.bpcount++] = (int)line;
                list_lines((int)line, 1);
            } else {
                LOGF("Wrong line number.");
            }
        } else {
            int found = 0;
            for (int i = 0; i < ldb.bpcount; i++)
                if (ldb.bp[i] == -line) {
                    memmove(ldb.bp + i, ldb.bp + i + 1, sizeof(int) * (size_t)(ldb.bpcount - i - 1));
                    ldb.bpcount--;
                    found = 1;
                    break;
                }
            LOGF(found ? "Breakpoint removed." : "No breakpoint in the specified line.");
        }
    }
}

/* eval <code>: as an expression first ("return " prepended), then as a
 * statement; its value is logged. */
static void cmd_eval(lua_State *l, const ldb_cmd *m) {
    strbuf code = {0};
    for (int j = 1; j < m->argc; j++) {
        if (j > 1) sb_str(&code, " ");
        strbuf_add(&code, m->argv[j], m->len[j]);
    }
    strbuf expr = {0};
    sb_str(&expr, "return ");
    strbuf_add(&expr, code.p, code.len);
    if (luaL_loadbuffer(l, expr.p, expr.len, "@ldb_eval")) {
        lua_pop(l, 1);
        if (luaL_loadbuffer(l, code.p, code.len, "@ldb_eval")) {
            LOGF("<error> %s", lua_tostring(l, -1));
            lua_pop(l, 1);
            free(code.p);
            free(expr.p);
            return;
        }
    }
    free(code.p);
    free(expr.p);
    if (lua_pcall(l, 0, 1, 0)) {
        LOGF("<error> %s", lua_tostring(l, -1));
        lua_pop(l, 1);
        return;
    }
    log_value(l, "<retval> ");
    lua_pop(l, 1);
}

/* redis <cmd>: redis.call itself, stepping, so that it logs the command
 * and its reply (or error). */
static void cmd_redis(lua_State *l, const ldb_cmd *m) {
    if (!lua_checkstack(l, m->argc + 1)) {
        LOGF("<reply> \"max lua stack reached\"");
        return;
    }
    lua_getglobal(l, "redis");
    lua_pushstring(l, "call");
    lua_gettable(l, -2);
    for (int j = 1; j < m->argc; j++) lua_pushlstring(l, m->argv[j], m->len[j]);
    ldb.step = 1;
    lua_pcall(l, m->argc - 1, 1, 0);
    ldb.step = 0;
    lua_pop(l, 2);
}

static void cmd_trace(lua_State *l) {
    lua_Debug ar;
    int level = 0;
    while (lua_getstack(l, level, &ar)) {
        lua_getinfo(l, "Snl", &ar);
        if (strstr(ar.short_src, "user_script")) {
            LOGF("%s %s:", level == 0 ? "In" : "From", ar.name ? ar.name : "top level");
            log_source_line(ar.currentline);
        }
        level++;
    }
    if (!level) LOGF("<error> Can't retrieve Lua stack.");
}

static void cmd_maxlen(const ldb_cmd *m) {
    if (m->argc == 2) {
        int v = atoi(m->argv[1]);
        ldb.maxlen_hint_sent = 1; /* the user knows about it */
        if (v != 0 && v <= 60) v = 60;
        ldb.maxlen = v < 0 ? 0 : (size_t)v;
    }
    if (ldb.maxlen) LOGF("<value> replies are truncated at %d bytes.", (int)ldb.maxlen);
    else LOGF("<value> replies are unlimited.");
}

/* The debugger's prompt: commands are read and answered until one lets
 * the script go on (0), or the client is gone (-1: the script then runs
 * to its end without stopping). */
static int repl(lua_State *l) {
    for (;;) {
        ldb_cmd m;
        int rc;
        while ((rc = parse_command(&m)) != 1) {
            if (rc < 0) {
                script_push_error(l, "protocol error");
                lua_error(l);
            }
            char buf[1024];
            long n = session_client_sync_read(ldb.c, buf, sizeof(buf), -1);
            if (n <= 0) {
                ldb.step = 0;
                ldb.bpcount = 0;
                return -1;
            }
            if (ldb.clen + (size_t)n > ldb.ccap) {
                size_t cap = ldb.ccap ? ldb.ccap * 2 : 4096;
                while (cap < ldb.clen + (size_t)n) cap *= 2;
                char *nb = realloc(ldb.cbuf, cap);
                if (!nb) abort();
                ldb.cbuf = nb;
                ldb.ccap = cap;
            }
            memcpy(ldb.cbuf + ldb.clen, buf, (size_t)n);
            ldb.clen += (size_t)n;
            if (ldb.clen > LDB_CMD_BUF_MAX) {
                ldb.clen = 0;
                script_push_error(l, "max client buffer reached");
                lua_error(l);
            }
        }
        ldb.clen = 0; /* the rest of what was read goes, as in Redis */
        int go = 0;
        if (is(&m, "h", "help")) {
            cmd_help();
        } else if (is(&m, "s", "step") || is(&m, "n", "next")) {
            ldb.step = 1;
            go = 1;
        } else if (is(&m, "c", "continue")) {
            go = 1;
        } else if (is(&m, "t", "trace")) {
            cmd_trace(l);
        } else if (is(&m, "m", "maxlen")) {
            cmd_maxlen(&m);
        } else if (is(&m, "b", "break")) {
            cmd_break(&m);
        } else if (is(&m, "e", "eval")) {
            cmd_eval(l, &m);
        } else if (is(&m, "a", "abort")) {
            cmd_free(&m);
            script_push_error(l, "script aborted for user request");
            lua_error(l);
        } else if (m.argc > 1 && is(&m, "r", "redis")) {
            cmd_redis(l, &m);
        } else if (is(&m, "p", "print")) {
            if (m.argc == 2) cmd_print(l, m.argv[1]);
            else cmd_print_all(l);
        } else if (is(&m, "l", "list")) {
            int around = ldb.currentline, ctx = 5;
            if (m.argc > 1 && atoi(m.argv[1]) > 0) around = atoi(m.argv[1]);
            if (m.argc > 2) ctx = atoi(m.argv[2]);
            list_lines(around, ctx);
        } else if (is(&m, "w", "whole")) {
            list_lines(1, 1000000);
        } else {
            LOGF("<error> Unknown Redis Lua debugger command or wrong number of arguments.");
        }
        cmd_free(&m);
        if (go) return 0;
        logs_send();
    }
}

/* ---- the hook ---------------------------------------------------------------------- */

void ldb_line_hook(lua_State *l, lua_Debug *ar) {
    lua_getstack(l, 0, ar);
    lua_getinfo(l, "Sl", ar);
    ldb.currentline = ar->currentline;
    int bp = is_breakpoint(ldb.currentline) || ldb.luabp;
    int timeout = 0;
    if (!strstr(ar->short_src, "user_script")) return; /* not the script's own code */
    if (ar->event == LUA_HOOKCOUNT && !ldb.step && !bp) {
        long long limit = script_busy_threshold_ms();
        if (monotime_ms() - ldb.since_ms < (limit > 0 ? limit : 5000)) return;
        timeout = 1;
        ldb.step = 1;
    }
    if (!ldb.step && !bp) return;
    const char *reason = bp ? (ldb.luabp ? "redis.breakpoint() called" : "break point")
                         : timeout ? "timeout reached, infinite loop?"
                                   : "step over";
    ldb.step = 0;
    ldb.luabp = 0;
    LOGF("* Stopped at %d, stop reason = %s", ldb.currentline, reason);
    log_source_line(ldb.currentline);
    logs_send();
    if (repl(l) < 0 && timeout) {
        /* No client to stop an endless loop: the script ends here. */
        script_push_error(l, "timeout during Lua debugging with client closing connection");
        lua_error(l);
    }
    ldb.since_ms = monotime_ms();
}

/* ---- what redis.call and the script log -------------------------------------------- */

int ldb_active(void) { return ldb.active; }
int ldb_logging(void) { return ldb.active && ldb.step; }

void ldb_log_command(int argc, const garg *argv) {
    strbuf b = {0};
    sb_str(&b, "<redis>");
    for (int j = 0; j < argc; j++) {
        if (j == 10) {
            char tmp[48];
            snprintf(tmp, sizeof(tmp), " ... (%d more)", argc - j - 1);
            sb_str(&b, tmp);
            break;
        }
        sb_str(&b, " ");
        strbuf_add(&b, argv[j].p, argv[j].n);
    }
    log_add(sb_take(&b));
}

void ldb_log_reply(const char *resp, size_t n) {
    strbuf b = {0};
    sb_str(&b, "<reply> ");
    resp_human(&b, resp, resp + n);
    log_maxlen(sb_take(&b));
}

void ldb_log_error(const char *err) { LOGF("<error> %s", err); }

int ldb_lua_debug(lua_State *l) {
    if (!ldb.active) return 0;
    int argc = lua_gettop(l);
    strbuf b = {0};
    char head[48];
    snprintf(head, sizeof(head), "<debug> line %d: ", ldb.currentline);
    sb_str(&b, head);
    while (argc--) {
        cat_value(&b, l, -1 - argc, 0);
        if (argc) sb_str(&b, ", ");
    }
    log_add(sb_take(&b));
    return 0;
}

int ldb_lua_breakpoint(lua_State *l) {
    if (ldb.active) ldb.luabp = 1;
    lua_pushboolean(l, ldb.active);
    return 1;
}

/* ---- the session ---------------------------------------------------------------------- */

static pthread_mutex_t children_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *children;
static int nchildren, capchildren;

static void child_add(pid_t pid) {
    pthread_mutex_lock(&children_lock);
    if (nchildren == capchildren) {
        int cap = capchildren ? capchildren * 2 : 4;
        pid_t *n = realloc(children, sizeof(pid_t) * (size_t)cap);
        if (!n) abort();
        children = n;
        capchildren = cap;
    }
    children[nchildren++] = pid;
    pthread_mutex_unlock(&children_lock);
}

void ldb_reap_children(void) {
    pthread_mutex_lock(&children_lock);
    for (int i = 0; i < nchildren;) {
        int status;
        pid_t w = waitpid(children[i], &status, WNOHANG);
        if (w == children[i] || (w < 0 && errno == ECHILD)) {
            children[i] = children[--nchildren];
            continue;
        }
        i++;
    }
    pthread_mutex_unlock(&children_lock);
}

void ldb_kill_children(void) {
    pthread_mutex_lock(&children_lock);
    for (int i = 0; i < nchildren; i++) {
        log_warn("Killing debugging session %ld", (long)children[i]);
        kill(children[i], SIGKILL);
        waitpid(children[i], NULL, 0);
    }
    nchildren = 0;
    pthread_mutex_unlock(&children_lock);
}

/* The server's side of a connection a forked session took: closed with no
 * byte sent (no TLS close_notify), the child's side stays open. */
static void drop_socket(int fd, void *tls, void *arg) {
    (void)arg;
    if (tls) tls_free_silently((SSL *)tls);
    close(fd);
}

void ldb_script_debug(client *c) {
    if (c->olen > c->osent) {
        reply_error(c, "ERR SCRIPT DEBUG must be called outside a pipeline");
        return;
    }
    if (arg_is(&c->argv[2], "no")) {
        c->lua_debug = LDB_OFF;
    } else if (arg_is(&c->argv[2], "yes")) {
        /* A forked session would write and free its copy's tails in the
         * server's own SSD file. */
        if (ssdtail_active()) {
            reply_error(c, "ERR SCRIPT DEBUG YES is not available while values have tails on SSD (--ssd-dir): "
                           "use SCRIPT DEBUG SYNC");
            return;
        }
        c->lua_debug = LDB_FORKED;
    } else if (arg_is(&c->argv[2], "sync")) {
        c->lua_debug = LDB_SYNC;
    } else {
        reply_error(c, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
        return;
    }
    reply_ok(c);
}

int ldb_start(client *c, const char *body, size_t n) {
    ldb.forked = c->lua_debug == LDB_FORKED;
    if (ldb.forked) {
        pid_t pid = process_fork();
        if (pid < 0) {
            c->lua_debug = LDB_OFF;
            reply_errorf(c, "ERR Fork() failed: can't run EVAL in debugging mode: %s", strerror(errno));
            return 0;
        }
        if (pid > 0) {
            child_add(pid);
            log_warn("Lua debugging session forked (child %ld)", (long)pid);
            c->lua_debug = LDB_OFF;
            c->handoff = drop_socket;
            c->handoff_arg = NULL;
            return 0;
        }
        /* The child: its changes stay in its copy of the dataset. It
         * writes no log (another thread may have held the log's lock at
         * the fork). */
        wstream_forget_sinks();
    } else {
        log_warn("Redis synchronous debugging eval session started");
    }
    ldb.c = c;
    ldb.active = 1;
    ldb.step = 1;
    ldb.luabp = 0;
    ldb.bpcount = 0;
    ldb.clen = 0;
    ldb.maxlen = LDB_MAX_LEN_DEFAULT;
    ldb.maxlen_hint_sent = 0;
    ldb.currentline = 0;
    ldb.since_ms = monotime_ms();
    logs_drop();
    /* The script's lines, its trailing newlines left out. */
    while (n && (body[n - 1] == '\n' || body[n - 1] == '\r')) n--;
    ldb.lines = 0;
    for (size_t i = 0, start = 0; i <= n; i++) {
        if (i < n && body[i] != '\n') continue;
        char **s = realloc(ldb.src, sizeof(char *) * (size_t)(ldb.lines + 1));
        if (!s) abort();
        ldb.src = s;
        ldb.src[ldb.lines] = malloc(i - start + 1);
        if (!ldb.src[ldb.lines]) abort();
        memcpy(ldb.src[ldb.lines], body + start, i - start);
        ldb.src[ldb.lines++][i - start] = '\0';
        start = i + 1;
    }
    /* Older output first: the session's lines follow it on the socket. */
    session_client_sync_send(c, LDB_SEND_TIMEOUT_MS);
    return 1;
}

void ldb_end(client *c) {
    /* The EVAL's reply waits while <endsession> goes first. */
    size_t n = c->olen - c->osent;
    char *reply = malloc(n ? n : 1);
    if (!reply) abort();
    memcpy(reply, c->obuf + c->osent, n);
    client_set_out(c, 0, 0);
    LOGF("<endsession>");
    logs_send();
    reply_raw(c, reply, n);
    free(reply);
    if (ldb.forked) {
        session_client_sync_send(c, LDB_SEND_TIMEOUT_MS);
        _exit(0);
    }
    log_warn("Redis synchronous debugging eval session ended");
    client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
    c->lua_debug = LDB_OFF;
    for (int i = 0; i < ldb.lines; i++) free(ldb.src[i]);
    free(ldb.src);
    ldb.src = NULL;
    ldb.lines = 0;
    free(ldb.cbuf);
    ldb.cbuf = NULL;
    ldb.clen = ldb.ccap = 0;
    ldb.active = 0;
    ldb.c = NULL;
}
