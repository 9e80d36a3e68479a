/* aof_manifest.c -- the AOF manifest, as Redis 7.0 reads and writes it:
 * one line per file, "file <name> seq <n> type <b|h|i>", base first, then
 * history, then incr files in sequence order; names that need it are
 * quoted with C escapes (sdscatrepr), and the reader splits lines the way
 * sdssplitargs does (quotes and escapes, pairs of keyword and value, extra
 * pairs ignored). A write is a temp file, fsync, rename over the manifest
 * and an fsync of the directory, so a crash leaves the old manifest or the
 * new one, never a mix. */
#include "persist/aof_internal.h"

#include <ctype.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/fdio.h"
#include "util/strbuf.h"

#define MANIFEST_MAX_LINE 1024

void aofm_init(aof_manifest *m) { memset(m, 0, sizeof(*m)); }

void aofm_free(aof_manifest *m) {
    free(m->hist);
    free(m->incr);
    aofm_init(m);
}

int aofm_copy(aof_manifest *dst, const aof_manifest *src) {
    *dst = *src;
    dst->hist = dst->incr = NULL;
    if (src->nhist) {
        dst->hist = malloc(sizeof(aof_file) * (size_t)src->nhist);
        if (!dst->hist) return -1;
        memcpy(dst->hist, src->hist, sizeof(aof_file) * (size_t)src->nhist);
    }
    if (src->nincr) {
        dst->incr = malloc(sizeof(aof_file) * (size_t)src->nincr);
        if (!dst->incr) {
            free(dst->hist);
            return -1;
        }
        memcpy(dst->incr, src->incr, sizeof(aof_file) * (size_t)src->nincr);
    }
    return 0;
}

static aof_file *push(aof_file **arr, int *n) {
    aof_file *na = realloc(*arr, sizeof(aof_file) * (size_t)(*n + 1));
    if (!na) abort();
    *arr = na;
    memset(&na[*n], 0, sizeof(aof_file));
    return &na[(*n)++];
}

aof_file *aofm_new_incr(aof_manifest *m, const char *fname) {
    aof_file *f = push(&m->incr, &m->nincr);
    f->seq = ++m->incr_seq;
    f->type = 'i';
    snprintf(f->name, sizeof(f->name), "%s.%lld.incr.aof", fname, f->seq);
    return f;
}

aof_file *aofm_new_base(aof_manifest *m, const char *fname, int rdb) {
    if (m->has_base) {
        /* The old base goes to the head of the history list. */
        push(&m->hist, &m->nhist);
        memmove(&m->hist[1], &m->hist[0], sizeof(aof_file) * (size_t)(m->nhist - 1));
        m->hist[0] = m->base;
        m->hist[0].type = 'h';
    }
    memset(&m->base, 0, sizeof(m->base));
    m->base.seq = ++m->base_seq;
    m->base.type = 'b';
    snprintf(m->base.name, sizeof(m->base.name), "%s.%lld.base.%s", fname, m->base.seq, rdb ? "rdb" : "aof");
    m->has_base = 1;
    return &m->base;
}

void aofm_incr_to_history(aof_manifest *m, int n) {
    assert(n >= 0 && n <= m->nincr);
    if (!n) return;
    /* Redis walks the incr list from its tail, adding each at the history's
     * head: the files keep their order, before the older history. */
    aof_file *nh = realloc(m->hist, sizeof(aof_file) * (size_t)(m->nhist + n));
    if (!nh) abort();
    m->hist = nh;
    memmove(&m->hist[n], &m->hist[0], sizeof(aof_file) * (size_t)m->nhist);
    for (int i = 0; i < n; i++) {
        m->hist[i] = m->incr[i];
        m->hist[i].type = 'h';
    }
    m->nhist += n;
    memmove(&m->incr[0], &m->incr[n], sizeof(aof_file) * (size_t)(m->nincr - n));
    m->nincr -= n;
}

void aof_path(char *buf, size_t len, const char *dir, const char *name) {
    snprintf(buf, len, "%s/%s", dir, name);
}

int aof_fsync_dir(const char *dir) { return fsync_path(dir, O_RDONLY | O_DIRECTORY); }

/* ---- reading ---------------------------------------------------------------- */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* sdssplitargs: tokens into tok[] (each NUL-terminated, at most
 * AOF_NAME_MAX bytes); returns the count, or -1 on unbalanced quotes. */
static int split_args(const char *p, char tok[][AOF_NAME_MAX], int max) {
    int n = 0;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) return n;
        if (n == max) return n;
        char *o = tok[n];
        size_t len = 0;
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            char c = *p;
            char out = 0;
            int emit = 0;
            if (inq) {
                if (!c) return -1;
                if (c == '\\' && p[1] == 'x' && hexval((unsigned char)p[2]) >= 0 && hexval((unsigned char)p[3]) >= 0) {
                    out = (char)(hexval((unsigned char)p[2]) * 16 + hexval((unsigned char)p[3]));
                    emit = 1;
                    p += 3;
                } else if (c == '\\' && p[1]) {
                    p++;
                    switch (*p) {
                    case 'n': out = '\n'; break;
                    case 'r': out = '\r'; break;
                    case 't': out = '\t'; break;
                    case 'b': out = '\b'; break;
                    case 'a': out = '\a'; break;
                    default: out = *p; break;
                    }
                    emit = 1;
                } else if (c == '"') {
                    if (p[1] && !isspace((unsigned char)p[1])) return -1;
                    done = 1;
                } else {
                    out = c;
                    emit = 1;
                }
            } else if (insq) {
                if (!c) return -1;
                if (c == '\\' && p[1] == '\'') {
                    p++;
                    out = '\'';
                    emit = 1;
                } else if (c == '\'') {
                    if (p[1] && !isspace((unsigned char)p[1])) return -1;
                    done = 1;
                } else {
                    out = c;
                    emit = 1;
                }
            } else {
                switch (c) {
                case ' ': case '\n': case '\r': case '\t': case '\0': done = 1; break;
                case '"': inq = 1; break;
                case '\'': insq = 1; break;
                default: out = c; emit = 1; break;
                }
            }
            if (emit && len + 1 < AOF_NAME_MAX) o[len++] = out;
            if (*p) p++;
        }
        o[len] = 0;
        n++;
    }
}

static void trim(char *s) {
    size_t n = strlen(s);
    while (n && strchr(" \t\r\n", s[n - 1])) s[--n] = 0;
    size_t k = strspn(s, " \t\r\n");
    if (k) memmove(s, s + k, n - k + 1);
}

int aofm_read(const char *path, aof_manifest *m, char *err, size_t errlen) {
    aofm_init(m);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, errlen, "Fatal error: can't open the AOF manifest file %s for reading: %s", path,
                 strerror(errno));
        return -1;
    }
    char buf[MANIFEST_MAX_LINE + 1];
    static char tok[16][AOF_NAME_MAX];
    int linenum = 0;
    long long maxseq = 0;
    const char *why = NULL;
    for (;;) {
        if (!fgets(buf, sizeof(buf), fp)) {
            if (feof(fp)) {
                if (linenum == 0) why = "Found an empty AOF manifest";
            } else {
                why = "Read AOF manifest failed";
            }
            break;
        }
        linenum++;
        if (buf[0] == '#') continue;
        if (!strchr(buf, '\n')) {
            why = "The AOF manifest file contains too long line";
            break;
        }
        trim(buf);
        int argc = buf[0] ? split_args(buf, tok, 16) : -1;
        if (argc < 6 || (argc % 2)) {
            why = "Invalid AOF manifest file format";
            break;
        }
        aof_file f;
        memset(&f, 0, sizeof(f));
        for (int i = 0; i < argc; i += 2) {
            if (!strcasecmp(tok[i], "file")) {
                if (strchr(tok[i + 1], '/')) {
                    why = "File can't be a path, just a filename";
                    break;
                }
                snprintf(f.name, sizeof(f.name), "%s", tok[i + 1]);
            } else if (!strcasecmp(tok[i], "seq")) {
                f.seq = atoll(tok[i + 1]);
            } else if (!strcasecmp(tok[i], "type")) {
                f.type = tok[i + 1][0];
            }
        }
        if (why) break;
        if (!f.name[0] || !f.seq || !f.type) {
            why = "Invalid AOF manifest file format";
            break;
        }
        if (f.type == 'b') {
            if (m->has_base) {
                why = "Found duplicate base file information";
                break;
            }
            m->base = f;
            m->has_base = 1;
            m->base_seq = f.seq;
        } else if (f.type == 'h') {
            *push(&m->hist, &m->nhist) = f;
        } else if (f.type == 'i') {
            if (f.seq <= maxseq) {
                why = "Found a non-monotonic sequence number";
                break;
            }
            *push(&m->incr, &m->nincr) = f;
            m->incr_seq = maxseq = f.seq;
        } else {
            why = "Unknown AOF file type";
            break;
        }
    }
    fclose(fp);
    if (!why) return 0;
    if (linenum && buf[0]) snprintf(err, errlen, "AOF manifest %s, line %d ('%.200s'): %s", path, linenum, buf, why);
    else snprintf(err, errlen, "AOF manifest %s: %s", path, why);
    aofm_free(m);
    return -1;
}

/* ---- writing ------------------------------------------------------------------ */

static int needs_repr(const char *s) {
    for (; *s; s++)
        if (*s == '\\' || *s == '"' || !isprint((unsigned char)*s) || isspace((unsigned char)*s)) return 1;
    return 0;
}

static void add_line(strbuf *b, const aof_file *f) {
    strbuf_addf(b, "file ");
    if (!needs_repr(f->name)) {
        strbuf_addf(b, "%s", f->name);
    } else {
        strbuf_addf(b, "\"");
        for (const unsigned char *p = (const unsigned char *)f->name; *p; p++) {
            switch (*p) {
            case '\\': case '"': strbuf_addf(b, "\\%c", *p); break;
            case '\n': strbuf_addf(b, "\\n"); break;
            case '\r': strbuf_addf(b, "\\r"); break;
            case '\t': strbuf_addf(b, "\\t"); break;
            case '\a': strbuf_addf(b, "\\a"); break;
            case '\b': strbuf_addf(b, "\\b"); break;
            default:
                if (isprint(*p)) strbuf_addf(b, "%c", *p);
                else strbuf_addf(b, "\\x%02x", *p);
            }
        }
        strbuf_addf(b, "\"");
    }
    strbuf_addf(b, " seq %lld type %c\n", f->seq, f->type);
}

int aofm_write(const char *dir, const char *fname, const aof_manifest *m, char *err, size_t errlen) {
    strbuf b = {0};
    strbuf_addf(&b, "%s", "");
    if (m->has_base) add_line(&b, &m->base);
    for (int i = 0; i < m->nhist; i++) add_line(&b, &m->hist[i]);
    for (int i = 0; i < m->nincr; i++) add_line(&b, &m->incr[i]);
    char path[1024], tmp[1024], name[600];
    snprintf(name, sizeof(name), "%s.manifest", fname);
    aof_path(path, sizeof(path), dir, name);
    snprintf(name, sizeof(name), "temp-%s.manifest", fname);
    aof_path(tmp, sizeof(tmp), dir, name);
    int rc = -1;
    int fd = open(tmp, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "Can't open the AOF manifest file %s: %s", name, strerror(errno));
        goto out;
    }
    for (size_t off = 0; off < b.len;) {
        ssize_t w = write(fd, b.p + off, b.len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            snprintf(err, errlen, "Error trying to write the temporary AOF manifest file %s: %s", name,
                     strerror(errno));
            goto out;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0) {
        snprintf(err, errlen, "Fail to fsync the temp AOF file %s: %s.", name, strerror(errno));
        goto out;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "Error trying to rename the temporary AOF manifest file %s into %s.manifest: %s", name,
                 fname, strerror(errno));
        goto out;
    }
    if (aof_fsync_dir(dir) != 0) {
        snprintf(err, errlen, "Fail to fsync AOF directory %s: %s.", path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (fd >= 0) close(fd);
    if (rc != 0) unlink(tmp);
    free(b.p);
    return rc;
}
