/* scan.c -- the one body of SCAN, HSCAN, SSCAN and ZSCAN (see scan.h): the
 * cursor and option parsing with Redis 7.0's errors, the COUNT-bounded
 * iteration loop, the MATCH filter and the reply. The types bring only
 * their step functions (keys.c, t_hash.c, t_set.c, t_zset.c). */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/types/scan.h"
#include "session/reply.h"
#include "util/strutil.h"

void scan_push(scan_acc *a, const char *p, size_t n) {
    a->seen++;
    if (a->oom) return;
    if (a->nitems == a->capitems) {
        size_t cap = a->capitems ? a->capitems * 2 : 32;
        scan_item *it = realloc(a->items, cap * sizeof(*it));
        if (!it) {
            a->oom = 1;
            return;
        }
        a->items = it;
        a->capitems = cap;
    }
    if (a->len + n > a->cap) {
        size_t cap = a->cap ? a->cap : 256;
        while (cap < a->len + n) cap *= 2;
        char *b = realloc(a->buf, cap);
        if (!b) {
            a->oom = 1;
            return;
        }
        a->buf = b;
        a->cap = cap;
    }
    if (n) memcpy(a->buf + a->len, p, n);
    a->items[a->nitems++] = (scan_item){a->len, n};
    a->len += n;
}

void scan_skip(scan_acc *a) { a->seen++; }

/* Parse a SCAN-family cursor as Redis 7.0 does (strtoull): "", "-1",
 * "+5" and "007" are accepted; leading space, junk and overflow are not.
 * argv is NUL-terminated, so parsing stops at an embedded NUL like Redis. */
int scan_parse_cursor(client *c, const garg *a, uint64_t *cursor) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(a->p, &end, 10);
    if (isspace((unsigned char)a->p[0]) || *end != '\0' || errno == ERANGE) {
        reply_error(c, "ERR invalid cursor");
        return -1;
    }
    *cursor = v;
    return 0;
}

/* Redis's order: COUNT must be an integer (its own error) and at least 1
 * (a syntax error); an option without its argument, or TYPE for a key's
 * scan, is a syntax error. */
int scan_parse_options(client *c, int first, long long *count, const garg **pat, const garg **type) {
    *count = 10;
    *pat = NULL;
    if (type) *type = NULL;
    for (int i = first; i < c->argc; i += 2) {
        int has_arg = c->argc - i >= 2;
        if (has_arg && arg_is(&c->argv[i], "count")) {
            if (arg_ll(c, &c->argv[i + 1], count) != 0) return -1;
            if (*count < 1) {
                reply_err_syntax(c);
                return -1;
            }
        } else if (has_arg && arg_is(&c->argv[i], "match")) {
            *pat = &c->argv[i + 1];
        } else if (has_arg && type && arg_is(&c->argv[i], "type")) {
            *type = &c->argv[i + 1];
        } else {
            reply_err_syntax(c);
            return -1;
        }
    }
    /* A lone "*" matches everything, the empty string too (as Redis). */
    if (*pat && (*pat)->n == 1 && (*pat)->p[0] == '*') *pat = NULL;
    return 0;
}

void scan_reply_empty(client *c) {
    reply_array(c, 2);
    reply_bulk(c, "0", 1);
    reply_array(c, 0);
}

/* The OBJ_* type TYPE names (case-insensitively, as Redis compares). */
static int type_by_name(const garg *a) {
    for (int t = OBJ_STRING; t <= OBJ_HASH; t++)
        if (arg_is(a, obj_type_name(t))) return t;
    if (arg_is(a, "stream")) return OBJ_STREAM;
    if (arg_is(a, "none")) return SCAN_TYPE_NONE;
    return SCAN_NO_TYPE;
}

void scan_command(client *c, const scan_kind *k) {
    assert(k->group == 1 || k->group == 2);
    int keyspace = k->type == SCAN_KEYSPACE;
    int cursor_at = keyspace ? 1 : 2;
    uint64_t cursor;
    if (scan_parse_cursor(c, &c->argv[cursor_at], &cursor) != 0) return;
    gdb *db = cmd_db(c);
    void *obj = db;
    if (!keyspace) {
        /* Like Redis: the key before the options, and a missing key
         * answers an empty scan whatever follows. */
        int wrong;
        dbentry *e = cmd_lookup_typed(c, db, &c->argv[1], k->type, &wrong);
        if (wrong) return;
        if (!e) {
            scan_reply_empty(c);
            return;
        }
        obj = e->val.u.p;
    }
    long long count;
    const garg *pat, *type;
    if (scan_parse_options(c, cursor_at + 1, &count, &pat, keyspace ? &type : NULL) != 0) return;
    scan_acc a = {0};
    a.type = keyspace && type ? type_by_name(type) : SCAN_ANY_TYPE;
    a.pat = pat;
    /* Like Redis: up to 10*COUNT steps, until COUNT items were visited
     * (a field and its value, a member and its score count two). */
    long long maxiter = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = k->step(obj, cursor, &a);
    } while (cursor && maxiter-- && a.seen < (unsigned long long)count && !a.oom);
    if (a.oom) {
        free(a.buf);
        free(a.items);
        reply_error(c, "ERR out of memory");
        return;
    }
    assert(a.nitems % (size_t)k->group == 0);
    size_t keep = 0;
    for (size_t i = 0; i < a.nitems; i += (size_t)k->group) {
        if (pat && !glob_match(pat->p, pat->n, a.buf + a.items[i].off, a.items[i].n, 0)) continue;
        for (int g = 0; g < k->group; g++) a.items[keep++] = a.items[i + (size_t)g];
    }
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)cursor);
    reply_array(c, (long)keep);
    for (size_t i = 0; i < keep; i++) reply_bulk(c, a.buf + a.items[i].off, a.items[i].n);
    free(a.buf);
    free(a.items);
}
