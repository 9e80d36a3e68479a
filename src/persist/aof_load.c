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
 * goes to the replay callback the command layer registered. */
#include "persist/aof_internal.h"

#include <errno.h>
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

typedef struct cmdbuf {
    int argc;
    char **p;
    size_t *n;
} cmdbuf;

static void cmd_free(cmdbuf *c) {
    for (int i = 0; i < c->argc; i++) free(c->p[i]);
    free(c->p);
    free(c->n);
    memset(c, 0, sizeof(*c));
}

typedef struct loadctx {
    const char *name;         /* file name, for the log */
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

/* One whole command read from the file; takes ownership of c. */
static int apply(loadctx *x, cmdbuf *c) {
    int rc = 0;
    if (is(c, "select") && c->argc == 2 && !x->inmulti) {
        x->db = atoi(c->p[1]);
        if (x->db < 0 || x->db >= db_count()) {
            snprintf(x->err, x->errlen, "Bad SELECT %s in the append only file %s", c->p[1], x->name);
            rc = -1;
        }
        cmd_free(c);
        return rc;
    }
    if (is(c, "multi")) {
        drop_queue(x);
        x->inmulti = 1;
        cmd_free(c);
        return 0;
    }
    if (is(c, "exec") && x->inmulti) {
        for (int i = 0; i < x->nqueued && rc == 0; i++) {
            cmdbuf *q = &x->queued[i];
            if (is(q, "select") && q->argc == 2) x->db = atoi(q->p[1]);
            else rc = run(x, q);
        }
        drop_queue(x);
        cmd_free(c);
        return rc;
    }
    if (x->inmulti) {
        cmdbuf *nq = realloc(x->queued, sizeof(cmdbuf) * (size_t)(x->nqueued + 1));
        if (!nq) abort();
        x->queued = nq;
        x->queued[x->nqueued++] = *c;
        memset(c, 0, sizeof(*c));
        return 0;
    }
    rc = run(x, c);
    cmd_free(c);
    return rc;
}

/* The commands of fp from its current position. */
static int load_commands(loadctx *x, FILE *fp, const char *path, int load_truncated) {
    off_t valid_up_to = ftello(fp), valid_before_multi = 0;
    char buf[AOF_LINE_MAX];
    cmdbuf c = {0};
    int ret = LD_OK;
    for (;;) {
        if (!fgets(buf, sizeof(buf), fp)) {
            if (feof(fp)) break;
            goto readerr;
        }
        if (buf[0] == '#') continue;
        if (buf[0] != '*') goto fmterr;
        if (buf[1] == '\0') goto readerr;
        int argc = atoi(buf + 1);
        if (argc < 1) goto fmterr;
        c.p = calloc((size_t)argc, sizeof(char *));
        c.n = calloc((size_t)argc, sizeof(size_t));
        if (!c.p || !c.n) abort();
        for (int j = 0; j < argc; j++) {
            char *r = fgets(buf, sizeof(buf), fp);
            if (!r || buf[0] != '$') {
                if (!r) goto readerr;
                goto fmterr;
            }
            size_t len = (size_t)strtol(buf + 1, NULL, 10);
            c.p[j] = malloc(len + 1);
            if (!c.p[j]) abort();
            c.argc = j + 1;
            c.n[j] = len;
            c.p[j][len] = 0;
            if (len && fread(c.p[j], len, 1, fp) == 0) goto readerr;
            if (fread(buf, 2, 1, fp) == 0) goto readerr;
        }
        if (is(&c, "multi")) valid_before_multi = valid_up_to;
        if (apply(x, &c) != 0) {
            cmd_free(&c);
            return LD_FAILED;
        }
        valid_up_to = ftello(fp);
    }
    if (x->inmulti) {
        log_warn("Revert incomplete MULTI/EXEC transaction in AOF file %s", x->name);
        valid_up_to = valid_before_multi;
        drop_queue(x);
        goto uxeof;
    }
    return ret;

readerr:
    cmd_free(&c);
    if (!feof(fp)) {
        log_warn("Unrecoverable error reading the append only file %s: %s", x->name, strerror(errno));
        snprintf(x->err, x->errlen, "Unrecoverable error reading the append only file %s: %s", x->name,
                 strerror(errno));
        return LD_FAILED;
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
            return LD_TRUNCATED;
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
    return LD_FAILED;

fmterr:
    cmd_free(&c);
    drop_queue(x);
    log_warn("Bad file format reading the append only file %s: make a backup of your AOF file, then use "
             "./redis-check-aof --fix <filename.manifest>",
             x->name);
    snprintf(x->err, x->errlen,
             "Bad file format reading the append only file %s: make a backup of your AOF file, then use "
             "./redis-check-aof --fix <filename.manifest>",
             x->name);
    return LD_FAILED;
}

static int load_one(const char *dir, const char *name, int load_truncated, replay_fn *fn, char *err, size_t errlen) {
    char path[1024];
    aof_path(path, sizeof(path), dir, name);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, errlen, "Fatal error: can't open the append log file %s for reading: %s", name, strerror(errno));
        log_warn("%s", err);
        return LD_FAILED;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && st.st_size == 0) {
        fclose(fp);
        return LD_EMPTY;
    }
    char sig[5];
    loadctx x = {name, fn, 0, NULL, 0, 0, err, errlen};
    if (fread(sig, 1, 5, fp) == 5 && memcmp(sig, "REDIS", 5) == 0) {
        /* An RDB base: read it whole, then swap it in. */
        fclose(fp);
        log_notice("Reading RDB base file on AOF loading...");
        rdb_loaded ld;
        char msg[512];
        /* Keys whose TTL has passed stay: a later incr command may extend
         * or remove the TTL (they expire once the load is over). */
        static const rdb_load_opts base_opts = {.keep_expired = 1};
        int rc = rdb_load_file(path, &base_opts, &ld, msg, sizeof(msg));
        if (rc == RDB_OK) {
            db_wrlock_keyspace();
            rdb_load_commit(&ld);
            db_unlock_keyspace();
        }
        rdb_load_discard(&ld);
        if (rc != RDB_OK) {
            log_warn("Error reading the RDB base file %s, AOF loading aborted", name);
            snprintf(err, errlen, "Error reading the RDB base file %s, AOF loading aborted: %s", name, msg);
            return LD_FAILED;
        }
        return LD_OK;
    }
    if (fseek(fp, 0, SEEK_SET) != 0) {
        fclose(fp);
        snprintf(err, errlen, "Unrecoverable error reading the append only file %s: %s", name, strerror(errno));
        return LD_FAILED;
    }
    int rc = load_commands(&x, fp, path, load_truncated);
    fclose(fp);
    return rc;
}

static double secs_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

int aof_load_files(const char *dir, const aof_manifest *m, int load_truncated, replay_fn *fn, uint64_t *base_size,
                   uint64_t *total_size, char *err, size_t errlen) {
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
    for (int i = -1; i < m->nincr; i++) {
        if (i < 0 && !m->has_base) continue;
        const char *name = i < 0 ? m->base.name : m->incr[i].name;
        int last = ++num == total;
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = load_one(dir, name, load_truncated, fn, err, errlen);
        if (rc == LD_OK || (rc == LD_TRUNCATED && last))
            log_notice("DB loaded from %s file %s: %.3f seconds", i < 0 ? "base" : "incr", name, secs_since(&t0));
        if (rc == LD_TRUNCATED && !last) {
            log_warn("Fatal error: the truncated file is not the last file");
            snprintf(err, errlen, "Fatal error: the truncated file %s is not the last file", name);
            return -1;
        }
        if (rc == LD_FAILED) return -1;
    }
    return 0;
}
