/* proctitle.c -- the process title, as Redis 7.0's set-proc-title and
 * proc-title-template ("{title} {listen-addr} {server-mode}": ps shows
 * "goblin-core 127.0.0.1:6379").
 *
 * Linux gives a process no call to change the command line ps reads from
 * /proc/PID/cmdline: the title is written over the memory that held argv
 * and, after it, the environment strings (one contiguous block the kernel
 * set up at exec). The environment is copied to the heap first, so that
 * getenv and setenv keep working, and glibc's program_invocation_name is
 * pointed at a copy of argv[0].
 *
 * The kernel shows the whole argv block when its last byte is NUL, and a
 * single string up to its first NUL when it is not (a rewritten title).
 * Invariant after proctitle_set: the title is NUL-terminated inside the
 * block, every byte after it is NUL, and the byte that ended the original
 * argv is not NUL unless the title runs past it (then it is title text). */
#include "base/proctitle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"

extern char **environ;

static char *area;          /* the argv and environment block */
static size_t area_len;
static size_t argv_end;     /* offset of the NUL that ended the last argv string */
static char *program;       /* argv[0], copied */
static char tmpl[1024] = "{title} {listen-addr} {server-mode}";

/* The value of a template variable into out; -1 when unknown. */
static int variable(const char *name, size_t n, const char *title, char *out, size_t outlen) {
#define IS(s) (n == sizeof(s) - 1 && !memcmp(name, s, n))
    char *v = NULL;
    int rc = 0;
    if (IS("title")) {
        snprintf(out, outlen, "%s", title);
    } else if (IS("listen-addr")) {
        char *port = config_value_locked("port"), *tport = config_value_locked("tls-port");
        char *bind = config_value_locked("bind"), *sock = config_value_locked("unixsocket");
        int p = port ? atoi(port) : 0, tp = tport ? atoi(tport) : 0;
        char first[256] = "*";
        if (bind && bind[0]) sscanf(bind, "%255s", first);
        if (p || tp) snprintf(out, outlen, "%s:%d", first, p ? p : tp);
        else snprintf(out, outlen, "unixsocket:%s", sock ? sock : "");
        free(port);
        free(tport);
        free(bind);
        free(sock);
    } else if (IS("server-mode")) {
        v = config_value_locked("cluster-enabled");
        snprintf(out, outlen, "%s", v && !strcmp(v, "yes") ? "[cluster]" : "");
    } else if (IS("config-file")) {
        snprintf(out, outlen, "%s", cfg.config_file ? cfg.config_file : "-");
    } else if (IS("port") || IS("tls-port") || IS("unixsocket")) {
        char key[16];
        snprintf(key, sizeof(key), "%.*s", (int)n, name);
        v = config_value_locked(key);
        snprintf(out, outlen, "%s", v ? v : "");
    } else {
        rc = -1;
    }
    free(v);
    return rc;
#undef IS
}

int proctitle_expand(const char *t, const char *title, char *out, size_t outlen) {
    size_t o = 0;
    char val[1024];
    out[0] = '\0';
    /* "{{" is a '{'; "{name}" a variable; anything else is copied. */
    for (const char *p = t; *p;) {
        const char *add = p;
        size_t addn = 1;
        if (*p == '{') {
            if (!p[1]) return -1;
            if (p[1] == '{') {
                p += 2;
            } else {
                const char *e = strchr(p + 1, '}');
                if (!e || variable(p + 1, (size_t)(e - p - 1), title, val, sizeof(val)) != 0) return -1;
                add = val;
                addn = strlen(val);
                p = e + 1;
            }
        } else {
            p++;
        }
        if (o + addn >= outlen) addn = outlen - 1 - o;
        memcpy(out + o, add, addn);
        o += addn;
        out[o] = '\0';
    }
    /* Trimmed of spaces at both ends, as Redis. */
    size_t s = strspn(out, " ");
    memmove(out, out + s, o - s + 1);
    o -= s;
    while (o && out[o - 1] == ' ') out[--o] = '\0';
    return 0;
}

void proctitle_set(const char *title) {
    if (!area) return;
    char buf[2048];
    if (proctitle_expand(tmpl, title ? title : program, buf, sizeof(buf)) != 0) return;
    size_t n = strlen(buf);
    if (n > area_len - 1) n = area_len - 1;
    memset(area, 0, area_len);
    memcpy(area, buf, n);
    if (n < argv_end) {
        area[argv_end] = '.'; /* not NUL: the kernel shows the title alone */
    } else if (n == argv_end && n + 1 < area_len) {
        area[n] = ' ';
        area[n + 1] = '\0';
    }
}

static int tmpl_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    (void)norm;
    (void)normlen;
    char out[2048];
    if (strlen(v) >= sizeof(tmpl) || proctitle_expand(v, "", out, sizeof(out)) != 0 || !out[0]) {
        snprintf(err, errlen, "template format is invalid or contains unknown variables");
        return -1;
    }
    return 0;
}

static void tmpl_apply(const char *v) {
    snprintf(tmpl, sizeof(tmpl), "%s", v);
    proctitle_set(NULL);
}

void proctitle_config_register(void) {
    static const config_hook hook = {tmpl_check, tmpl_apply, NULL};
    if (config_register_hook("proc-title-template", &hook) != 0) abort();
}

void proctitle_init(int argc, char **argv) {
    char *on = config_value("set-proc-title");
    int enabled = on && !strcmp(on, "yes");
    free(on);
    if (!enabled || argc < 1 || !argv[0]) return;
    program = strdup(argv[0]);
    if (!program) return;
    /* The block: argv's strings, then the environment's, while contiguous. */
    char *end = argv[0] + strlen(argv[0]) + 1;
    for (int i = 1; i < argc && argv[i] == end; i++) end += strlen(argv[i]) + 1;
    size_t aend = (size_t)(end - argv[0]) - 1;
    int nenv = 0;
    while (environ[nenv]) nenv++;
    char **env = calloc((size_t)nenv + 1, sizeof(char *));
    if (!env) return;
    for (int i = 0; i < nenv; i++) {
        if (environ[i] == end) end += strlen(environ[i]) + 1;
        env[i] = strdup(environ[i]);
        if (!env[i]) return; /* the copies so far leak: out of memory at start-up */
    }
    environ = env;
    program_invocation_name = program;
    const char *slash = strrchr(program, '/');
    program_invocation_short_name = (char *)(slash ? slash + 1 : program);
    area = argv[0];
    area_len = (size_t)(end - argv[0]);
    argv_end = aend;
    proctitle_set(NULL);
}
