/* aof_load.c -- loading the files of an AOF manifest at start-up, as Redis
 * 7.0's loadAppendOnlyFiles: every listed file must exist; the base is an
 * RDB snapshot (it starts with "REDIS": read by the RDB reader and swapped
 * in) or commands; then each incr file's commands, in order.
 *
 * Commands are parsed exactly as Redis reads them (a "*<argc>" line, then
 * "$<len>" lines and payloads with their CRLF; '#' lines are annotations),
 * so a torn tail is cut at the same offset Redis would cut it. SELECT sets
 * the database here; MULTI queues the following commands and EXEC applies
 * them, so a transaction torn off at the end of the file is never half
 * applied (its MULTI is where the file is truncated). Every other command
 * goes to the replay callback the command layer registered.
 *
 * The file is read through one buffer of 1 MB reads and parsed in place:
 * no stdio line reads, no allocation per argument (only the commands
 * queued inside MULTI are copied). */
#include "persist/aof_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "persist/rdb.h"
#include "base/log.h"

#define AOF_LINE_MAX 1024

enum { LD_OK = 0, LD_EMPTY = 1, LD_TRUNCATED = 2, LD_FAILED = -1 };

typedef int replay_fn(int, int, const char *const *, const size_t *, char *, size_t);

typedef void progress_fn(uint64_t loaded, uint64_t total);

/* Bytes of the whole load, for INFO's loading_* fields. */
typedef struct loadprog {
    progress_fn *fn;          /* NULL: nobody watches */
    uint64_t before, total;   /* bytes of the files already loaded; of all */
} loadprog;

/* One command: argc arguments p[i] of n[i] bytes, each NUL-terminated.
 * Borrowed (pointing into the read buffer) while it is parsed and run;
 * owned (malloc'd copies) once queued inside MULTI. */
typedef struct cmdbuf {
    int argc;
    char **p;
    size_t *n;
    int owned;
} cmdbuf;

static void cmd_free(cmdbuf *c) {
    if (c->owned)
        for (int i = 0; i < c->argc; i++) free(c->p[i]);
    free(c->p);
    free(c->n);
    memset(c, 0, sizeof(*c));
}

/* An owned copy of c (queued inside MULTI: the buffer moves on). */
static void cmd_copy(cmdbuf *dst, const cmdbuf *c) {
    dst->argc = c->argc;
    dst->owned = 1;
    dst->p = malloc(sizeof(char *) * (size_t)c->argc);
    dst->n = malloc(sizeof(size_t) * (size_t)c->argc);
    if (!dst->p || !dst->n) abort();
    for (int i = 0; i < c->argc; i++) {
        dst->p[i] = malloc(c->n[i] + 1);
        if (!dst->p[i]) abort();
        memcpy(dst->p[i], c->p[i], c->n[i] + 1);
        dst->n[i] = c->n[i];
    }
}

typedef struct loadctx {
    const char *name;         /* file name, for the log */
    loadprog *prog;
    replay_fn *fn;
    int db;
    cmdbuf *queued;           /* inside MULTI */
    int nqueued, inmulti;
    char *err;
    size_t errlen;
} loadctx;

static int is(const cmdbuf *c, const char *lit) { return c->n[0] == strlen(lit) && !strcasecmp(c->p[0], lit); }

static int run(loadctx *x, cmdbuf *c) {
    char e[256];
    e[0] = 0;
    if (x->fn((x->db), c->argc, (const char *const *)c->p, c->n, e, sizeof(e)) != 0) {
        log_warn("Unknown command '%s' reading the append only file %s", c->p[0], x->name);
        snprintf(x->err, x->errlen, "Unknown command '%s' reading the append only file %s", c->p[0], x->name);
        return -1;
    }
    return 0;
}

static void drop_queue(loadctx *x) {
    for (int i = 0; i < x->nqueued; i++) cmd_free(&x->queued[i]);
    free(x->queued);
    x->queued = NULL;
    x->nqueued = 0;
    x->inmulti = 0;
}

/* One whole command read from the file (borrowed: c stays the caller's). */
static int apply(loadctx *x, cmdbuf *c) {
    int rc = 0;
    if (is(c, "select") && c->argc == 2 && !x->inmulti) {
        x->db = atoi(c->p[1]);
        if (x->db < 0 || x->db >= db_count()) {
            snprintf(x->err, x->errlen, "Bad SELECT %s in the append only file %s", c->p[1], x->name);
            rc = -1;
        }
        return rc;
    }
    if (is(c, "multi")) {
        drop_queue(x);
        x->inmulti = 1;
        return 0;
    }
    if (is(c, "exec") && x->inmulti) {
        for (int i = 0; i < x->nqueued && rc == 0; i++) {
            cmdbuf *q = &x->queued[i];
            if (is(q, "select") && q->argc == 2) x->db = atoi(q->p[1]);
            else rc = run(x, q);
        }
        drop_queue(x);
        return rc;
    }
    if (x->inmulti) {
        cmdbuf *nq = realloc(x->queued, sizeof(cmdbuf) * (size_t)(x->nqueued + 1));
        if (!nq) abort();
        x->queued = nq;
        cmd_copy(&x->queued[x->nqueued++], c);
        return 0;
    }
    return run(x, c);
}

/* ---- reading ---------------------------------------------------------------- */

/* The file through one growing buffer: b[0..len) holds the file's bytes
 * from offset base on; pos is where parsing stands. Commands are parsed
 * in place (an argument is terminated by writing NUL over its CR), so a
 * command must be whole in the buffer before it runs. */
#define RB_CHUNK (1u << 20)

typedef struct rbuf {
    int fd;
    char *b;
    size_t len, cap, pos;
    off_t base;
    int eof, err;             /* err: errno of a failed read */
} rbuf;

/* Read more, keeping b[keep..len) (the command being parsed) and moving
 * it to the front. 0, or -1 at the end of the file or on a read error. */
static int rb_fill(rbuf *r, size_t *keep) {
    if (r->eof) return -1;
    if (*keep) {
        memmove(r->b, r->b + *keep, r->len - *keep);
        r->len -= *keep;
        r->pos -= *keep;
        r->base += (off_t)*keep;
        *keep = 0;
    }
    if (r->cap - r->len < RB_CHUNK) {
        size_t nc = r->cap ? r->cap * 2 : 4 * RB_CHUNK;
        while (nc - r->len < RB_CHUNK) nc *= 2;
        char *nb = realloc(r->b, nc);
        if (!nb) abort();
        r->b = nb;
        r->cap = nc;
    }
    for (;;) {
        ssize_t n = read(r->fd, r->b + r->len, r->cap - r->len - 1);
        if (n > 0) {
            r->len += (size_t)n;
            return 0;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) r->err = errno;
        r->eof = 1;
        return -1;
    }
}

/* The line at pos ("*3", "$5", ...) without its CRLF: its offset in b and
 * length, pos moved past it. -1 when the file ends first. Lines are capped
 * as Redis's reader caps them; a longer one is a format error later. */
static int rb_line(rbuf *r, size_t *keep, size_t *at, size_t *len) {
    for (;;) {
        char *s = r->b + r->pos;
        char *nl = memchr(s, '\n', r->len - r->pos);
        if (nl) {
            *at = r->pos;
            *len = (size_t)(nl - s);
            if (*len && s[*len - 1] == '\r') (*len)--;
            r->pos = (size_t)(nl - r->b) + 1;
            return 0;
        }
        if (rb_fill(r, keep) != 0) return -1;
    }
}

/* Decimal digits after the type byte of a line (Redis uses strtol: an
 * empty or non-numeric count reads as 0). */
static long long rb_num(const char *s, size_t n) {
    long long v = 0;
    int neg = n && s[0] == '-';
    for (size_t i = neg; i < n && s[i] >= '0' && s[i] <= '9'; i++) v = v * 10 + (s[i] - '0');
    return neg ? -v : v;
}

/* The commands of the file from r's position. */
static int load_commands(loadctx *x, rbuf *r, const char *path, int load_truncated) {
    off_t valid_up_to = r->base + (off_t)r->pos, valid_before_multi = 0;
    cmdbuf c = {0};
    size_t *off = NULL;       /* argument offsets from the command's start */
    int cap = 0, ret = LD_OK;
    unsigned ncmds = 0;
    for (;;) {
        size_t keep = r->pos, at, ln;
        if (r->pos == r->len && rb_fill(r, &keep) != 0) {
            if (r->err) goto readerr;
            break; /* a clean end of file */
        }
        if (rb_line(r, &keep, &at, &ln) != 0) goto readerr;
        const char *line = r->b + at;
        if (line[0] == '#') continue;
        if (line[0] != '*') goto fmterr;
        long long argc = rb_num(line + 1, ln - 1);
        if (argc < 1 || argc > INT_MAX / 2) goto fmterr;
        if (argc > cap) {
            cap = (int)argc;
            c.p = realloc(c.p, sizeof(char *) * (size_t)cap);
            c.n = realloc(c.n, sizeof(size_t) * (size_t)cap);
            off = realloc(off, sizeof(size_t) * (size_t)cap);
            if (!c.p || !c.n || !off) abort();
        }
        for (long long j = 0; j < argc; j++) {
            if (rb_line(r, &keep, &at, &ln) != 0) goto readerr;
            if (r->b[at] != '$') goto fmterr;
            long long len = rb_num(r->b + at + 1, ln - 1);
            if (len < 0) goto fmterr;
            while (r->len - r->pos < (size_t)len + 2)
                if (rb_fill(r, &keep) != 0) goto readerr;
            off[j] = r->pos - keep;
            c.n[j] = (size_t)len;
            r->pos += (size_t)len + 2;
        }
        /* The command is whole: point at its arguments, NUL-terminated. */
        c.argc = (int)argc;
        for (int j = 0; j < c.argc; j++) {
            c.p[j] = r->b + keep + off[j];
            c.p[j][c.n[j]] = '\0';
        }
        if (is(&c, "multi")) valid_before_multi = valid_up_to;
        if (apply(x, &c) != 0) {
            ret = LD_FAILED;
            goto out;
        }
        valid_up_to = r->base + (off_t)r->pos;
        if (!(++ncmds & 1023)) {
            if (x->prog->fn) x->prog->fn(x->prog->before + (uint64_t)valid_up_to, x->prog->total);
            long slow = rdb_load_slow_us;
            if (slow > 0) usleep((useconds_t)slow);
        }
    }
    if (x->inmulti) {
        log_warn("Revert incomplete MULTI/EXEC transaction in AOF file %s", x->name);
        valid_up_to = valid_before_multi;
        drop_queue(x);
        goto uxeof;
    }
    goto out;

readerr:
    if (r->err) {
        log_warn("Unrecoverable error reading the append only file %s: %s", x->name, strerror(r->err));
        snprintf(x->err, x->errlen, "Unrecoverable error reading the append only file %s: %s", x->name,
                 strerror(r->err));
        ret = LD_FAILED;
        goto out;
    }
    drop_queue(x);
uxeof:
    if (load_truncated) {
        log_warn("!!! Warning: short read while loading the AOF file %s!!!", x->name);
        log_warn("!!! Truncating the AOF %s at offset %llu !!!", x->name, (unsigned long long)valid_up_to);
        if (truncate(path, valid_up_to) == -1) {
            log_warn("Error truncating the AOF file %s: %s", x->name, strerror(errno));
        } else {
            log_warn("AOF %s loaded anyway because aof-load-truncated is enabled", x->name);
            ret = LD_TRUNCATED;
            goto out;
        }
    }
    log_warn("Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF file, "
             "then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the "
             "'aof-load-truncated' configuration option to yes and restart the server.",
             x->name);
    snprintf(x->err, x->errlen,
             "Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF file, "
             "then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the "
             "'aof-load-truncated' configuration option to yes and restart the server.",
             x->name);
    ret = LD_FAILED;
    goto out;

fmterr:
    drop_queue(x);
    log_warn("Bad file format reading the append only file %s: make a backup of your AOF file, then use "
             "./redis-check-aof --fix <filename.manifest>",
             x->name);
    snprintf(x->err, x->errlen,
             "Bad file format reading the append only file %s: make a backup of your AOF file, then use "
             "./redis-check-aof --fix <filename.manifest>",
             x->name);
    ret = LD_FAILED;
out:
    free(c.p);
    free(c.n);
    free(off);
    return ret;
}

static void rdb_progress(void *arg, uint64_t keys, uint64_t bytes) {
    (void)keys;
    loadprog *p = arg;
    p->fn(p->before + bytes, p->total);
}

/* One file: commands, or an RDB (a base) and, after it, any commands (an
 * AOF with an RDB preamble, as Redis before 7.0 wrote one file; old_style:
 * that file, named as the AOF itself, only for the log lines). */
static int load_one(const char *dir, const char *name, int old_style, int load_truncated, replay_fn *fn,
                    loadprog *prog, char *err, size_t errlen) {
    char path[1024];
    aof_path(path, sizeof(path), dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "Fatal error: can't open the append log file %s for reading: %s", name, strerror(errno));
        log_warn("%s", err);
        return LD_FAILED;
    }
    struct stat st = {0};
    if (fstat(fd, &st) == 0 && st.st_size == 0) {
        close(fd);
        return LD_EMPTY;
    }
    rbuf r = {fd, NULL, 0, 0, 0, 0, 0, 0};
    size_t keep = 0;
    while (r.len < 5 && rb_fill(&r, &keep) == 0) {
    }
    if (r.len >= 5 && memcmp(r.b, "REDIS", 5) == 0) {
        /* An RDB: read it whole, then swap it in. fd stays open for the
         * commands that may follow it. */
        free(r.b);
        log_notice(old_style ? "Reading RDB preamble from AOF file..." : "Reading RDB base file on AOF loading...");
        rdb_loaded ld;
        char msg[512];
        /* Keys whose TTL has passed stay: a later incr command may extend
         * or remove the TTL (they expire once the load is over). */
        rdb_load_opts o = {.progress = prog->fn ? rdb_progress : NULL, .progress_arg = prog, .keep_expired = 1};
        int rc = rdb_load_file(path, &o, &ld, msg, sizeof(msg));
        if (rc == RDB_OK) {
            db_wrlock_keyspace();
            rdb_load_commit(&ld);
            db_unlock_keyspace();
        }
        uint64_t end = ld.end;
        rdb_load_discard(&ld);
        if (rc != RDB_OK) {
            const char *what = old_style ? "the RDB preamble of the AOF file" : "the RDB base file";
            log_warn("Error reading %s %s, AOF loading aborted", what, name);
            snprintf(err, errlen, "Error reading %s %s, AOF loading aborted: %s", what, name, msg);
            close(fd);
            return LD_FAILED;
        }
        if (end >= (uint64_t)st.st_size) {
            close(fd);
            return LD_OK;
        }
        /* Commands after the RDB. */
        if (old_style) log_notice("Reading the remaining AOF tail...");
        if (lseek(fd, (off_t)end, SEEK_SET) != (off_t)end) {
            snprintf(err, errlen, "Fatal error: can't read the AOF file %s after its RDB: %s", name, strerror(errno));
            log_warn("%s", err);
            close(fd);
            return LD_FAILED;
        }
        r = (rbuf){fd, NULL, 0, 0, 0, (off_t)end, 0, 0};
    }
    /* Not an RDB: commands from the start (a read error shows up again). */
    r.eof = 0;
    loadctx x = {name, prog, fn, 0, NULL, 0, 0, err, errlen};
    int rc = load_commands(&x, &r, path, load_truncated);
    free(r.b);
    close(fd);
    return rc;
}

static double secs_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

int aof_load_files(const char *dir, const aof_manifest *m, int load_truncated, replay_fn *fn, progress_fn *progress,
                   uint64_t *base_size, uint64_t *total_size, char *err, size_t errlen) {
    *base_size = *total_size = 0;
    int total = m->has_base + m->nincr, num = 0;
    /* Every listed file must exist. */
    for (int i = -1; i < m->nincr; i++) {
        if (i < 0 && !m->has_base) continue;
        const char *name = i < 0 ? m->base.name : m->incr[i].name;
        char path[1024];
        aof_path(path, sizeof(path), dir, name);
        struct stat st;
        if (stat(path, &st) != 0) {
            log_warn("Unable to obtain the AOF file %s length. stat: %s", name, strerror(errno));
            snprintf(err, errlen, "The AOF file %s listed in the manifest can't be read: %s", name, strerror(errno));
            return -1;
        }
        *total_size += (uint64_t)st.st_size;
        if (i < 0) *base_size = (uint64_t)st.st_size;
    }
    if (*total_size == 0) return 0;
    loadprog prog = {progress, 0, *total_size};
    if (progress) progress(0, *total_size);
    for (int i = -1; i < m->nincr; i++) {
        if (i < 0 && !m->has_base) continue;
        const char *name = i < 0 ? m->base.name : m->incr[i].name;
        int last = ++num == total;
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = load_one(dir, name, i < 0 && !strstr(name, ".base."), load_truncated, fn, &prog, err, errlen);
        if (rc == LD_OK || (rc == LD_TRUNCATED && last))
            log_notice("DB loaded from %s file %s: %.3f seconds", i < 0 ? "base" : "incr", name, secs_since(&t0));
        if (rc == LD_TRUNCATED && !last) {
            log_warn("Fatal error: the truncated file is not the last file");
            snprintf(err, errlen, "Fatal error: the truncated file %s is not the last file", name);
            return -1;
        }
        if (rc == LD_FAILED) return -1;
        char path[1024];
        struct stat st;
        aof_path(path, sizeof(path), dir, name);
        if (stat(path, &st) == 0) prog.before += (uint64_t)st.st_size;
        if (progress) progress(prog.before, prog.total);
    }
    return 0;
}
