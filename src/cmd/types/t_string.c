/* t_string.c -- the string commands: GET/SET and their variants, the
 * multi-key MGET/MSET(NX), APPEND/SETRANGE/GETRANGE, the counters and LCS.
 *
 * Every body follows the same recipe: parse every argument first (so a bad
 * argument never leaves a half-done write), look the key up (db_lookup
 * applies lazy expiry), check its type, do the work, reply, then signal the
 * change (cmd_key_modified + cmd_notify). String bytes are reached only
 * through strval.h, so the storage behind it can change without touching
 * this file. All keys a command touches are inside its declared key range,
 * so the dispatcher holds their shard locks for the whole body.
 *
 * Expiry follows Redis 7.0: EX/PX/EXAT/PXAT must be positive and must not
 * overflow once turned into absolute milliseconds; a SET whose absolute time
 * is already past still stores the key with that time (the next access or
 * the active cycle removes it), while GETEX with a past EXAT/PXAT deletes
 * the key at once. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/command.h"
#include "cmd/propagate.h"
#include "cmd/families.h"
#include "session/reply.h"
#include "cmd/stream.h"
#include "db/strval.h"
#include "util/strutil.h"
#include "base/config.h"

/* Options of SET and GETEX, as Redis's shared parser knows them. */
enum {
    SO_NX = 1 << 0,
    SO_XX = 1 << 1,
    SO_GET = 1 << 2,
    SO_KEEPTTL = 1 << 3,
    SO_PERSIST = 1 << 4,
    SO_EX = 1 << 5,
    SO_PX = 1 << 6,
    SO_EXAT = 1 << 7,
    SO_PXAT = 1 << 8,
};
#define SO_EXPIRE (SO_EX | SO_PX | SO_EXAT | SO_PXAT)

/* How set_generic answers: +OK / nil (SET, SETEX), or :1 / :0 (SETNX). */
enum { SET_REPLY_OK, SET_REPLY_INT };

static void reply_oom(client *c) { reply_error(c, "OOM command not allowed when used memory > 'maxmemory'."); }

/* Live entry of key, or NULL when missing. A value of another type gets
 * -WRONGTYPE and *bad = 1. `read`: the command replies the value, so the
 * lookup is a keyspace hit or miss even under a write command (GETDEL,
 * GETSET, GETEX; Redis's lookupKeyRead), unlike APPEND's or INCR's. */
static dbentry *string_lookup(client *c, gdb *db, const garg *key, int read, int *bad) {
    dbentry *e = read ? db_lookup_read(db, key->p, key->n) : db_lookup(db, key->p, key->n);
    *bad = 0;
    if (e && e->val.type != OBJ_STRING) {
        reply_err_wrongtype(c);
        *bad = 1;
        return NULL;
    }
    return e;
}

/* Replies the value; -1 after replying an error when a large value's tail
 * cannot be read (nothing may change then). The value's bytes are read
 * where they are (a large value in RAM: its head and tail) and handed to
 * the client's value sink, or framed as a bulk string and sent through
 * reply_rawv, which sends a large one straight from the store. */
static int reply_strval(client *c, const gobj *o) {
    char tmp[STRUTIL_LLSTR];
    struct iovec v[4];
    int nv = 1;
    size_t len;
    const char *h, *t;
    size_t hl, tl;
    if (strval_ram_parts(o, &h, &hl, &t, &tl)) {
        v[1] = (struct iovec){(void *)h, hl};
        v[2] = (struct iovec){(void *)t, tl};
        nv = tl ? 3 : 2;
        len = hl + tl;
    } else {
        const char *p = strval_bytes(o, tmp, &len);
        if (!p) {
            reply_error(c, strval_io_error() ? strval_io_error() : "OOM command not allowed when used memory > 'maxmemory'.");
            return -1;
        }
        if (!c->value_sink && len < REPLY_DIRECT_MIN) {
            reply_bulk(c, p, len);
            return 0;
        }
        v[1] = (struct iovec){(void *)p, len};
        nv = 2;
    }
    if (c->value_sink && c->value_sink(c, v + 1, nv - 1, len, 0)) return 0;
    char hdr[32];
    v[0] = (struct iovec){hdr, (size_t)snprintf(hdr, sizeof(hdr), "$%zu\r\n", len)};
    v[nv++] = (struct iovec){(void *)"\r\n", 2};
    reply_rawv(c, v, nv);
    return 0;
}

/* A strval call failed: a tail I/O error, or no memory. */
static void reply_resize_failed(client *c) {
    if (strval_io_error()) reply_error(c, strval_io_error());
    else reply_oom(c);
}

/* Installs the fresh value *nv as the value of key (db_install). Returns
 * the entry, or NULL after freeing *nv and replying an error. */
static dbentry *string_install(client *c, gdb *db, dbentry *e, const garg *key, gobj *nv, int how) {
    if (!(e = db_install(db, e, key->p, key->n, nv, how))) reply_oom(c);
    return e;
}

/* Makes bytes p[0..n) the value of key (db_set_string). Returns the entry,
 * or NULL after replying an error. */
static dbentry *string_store(client *c, gdb *db, dbentry *e, const garg *key, const char *p, size_t n,
                             int how) {
    if (!(e = db_set_string(db, e, key->p, key->n, p, n, how))) reply_resize_failed(c);
    return e;
}

/* Same for the counters' integer results; they keep the TTL. */
static dbentry *string_store_int(client *c, gdb *db, dbentry *e, const garg *key, int64_t v) {
    gobj nv = {0};
    strval_set_int(&nv, v);
    return string_install(c, db, e, key, &nv, DB_KEEPTTL);
}

/* Redis's limit on a string built by APPEND/SETRANGE: size + append bytes
 * must stay within proto-max-bulk-len (and must not overflow). */
static int check_string_length(client *c, unsigned long long size, unsigned long long append) {
    unsigned long long total = size + append;
    if (total < size || total > (unsigned long long)cfg.proto_max_bulk_len) {
        reply_error(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return -1;
    }
    return 0;
}

/* ---- SET family --------------------------------------------------------- */

/* Parses SET options (is_set) or GETEX options from argv[first..]. Repeating
 * an option is allowed, combining incompatible ones is a syntax error, and an
 * expire keyword takes the next argument (the last one given wins). Option
 * names compare as C strings, as in Redis. */
static int parse_set_options(client *c, int first, int is_set, int *flags, const garg **exp) {
    static const struct {
        const char *name;
        int flag;
    } units[] = {{"ex", SO_EX}, {"px", SO_PX}, {"exat", SO_EXAT}, {"pxat", SO_PXAT}};
    int f = 0;
    for (int j = first; j < c->argc; j++) {
        const char *opt = c->argv[j].p;
        int more = j + 1 < c->argc;
        int unit = 0;
        for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
            if (!strcasecmp(opt, units[u].name)) unit = units[u].flag;
        if (is_set && !strcasecmp(opt, "nx") && !(f & SO_XX)) {
            f |= SO_NX;
        } else if (is_set && !strcasecmp(opt, "xx") && !(f & SO_NX)) {
            f |= SO_XX;
        } else if (is_set && !strcasecmp(opt, "get")) {
            f |= SO_GET;
        } else if (is_set && !strcasecmp(opt, "keepttl") && !(f & (SO_PERSIST | SO_EXPIRE))) {
            f |= SO_KEEPTTL;
        } else if (!is_set && !strcasecmp(opt, "persist") && !(f & (SO_KEEPTTL | SO_EXPIRE))) {
            f |= SO_PERSIST;
        } else if (unit && more && !(f & (SO_KEEPTTL | SO_PERSIST | (SO_EXPIRE & ~unit)))) {
            f |= unit;
            *exp = &c->argv[++j];
        } else {
            reply_err_syntax(c);
            return -1;
        }
    }
    *flags = f;
    return 0;
}

/* Absolute unix ms of an EX/PX/EXAT/PXAT argument. The value must be a
 * positive integer whose conversion does not overflow. */
static int expire_arg_ms(client *c, const garg *arg, int unit, int64_t *when) {
    long long v;
    if (arg_ll(c, arg, &v) != 0) return -1;
    int secs = (unit & (SO_EX | SO_EXAT)) != 0;
    if (v <= 0 || (secs && v > LLONG_MAX / 1000)) goto bad;
    if (secs) v *= 1000;
    if (unit & (SO_EX | SO_PX)) {
        int64_t now = db_now_ms();
        if (v > LLONG_MAX - now) goto bad;
        v += now;
    }
    *when = v;
    return 0;
bad:
    reply_errorf(c, "ERR invalid expire time in '%s' command", c->cur->fullname);
    return -1;
}

/* The body shared by SET, SETNX, SETEX and PSETEX. */
static void set_generic(client *c, int flags, const garg *key, const garg *val, const garg *exp, int replies) {
    int64_t when = 0;
    if (exp && expire_arg_ms(c, exp, flags & SO_EXPIRE, &when) != 0) return;
    gdb *db = cmd_db(c);
    /* SET ... GET reads the old value: a keyspace hit or miss, as in Redis. */
    dbentry *e = (flags & SO_GET) ? db_lookup_read(db, key->p, key->n) : db_lookup(db, key->p, key->n);
    if (flags & SO_GET) {
        if (!e) {
            reply_null(c);
        } else if (e->val.type != OBJ_STRING) {
            reply_err_wrongtype(c);
            return;
        } else if (reply_strval(c, &e->val) != 0) {
            return;
        }
    }
    if (((flags & SO_NX) && e) || ((flags & SO_XX) && !e)) {
        if (flags & SO_GET) return;
        if (replies == SET_REPLY_INT) reply_int(c, 0);
        else reply_null(c);
        return;
    }
    e = string_store(c, db, e, key, val->p, val->n, ((flags & SO_KEEPTTL) ? DB_KEEPTTL : 0) | (exp ? DB_TTL : 0));
    if (!e) return;
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_STRING, "set", db, key->p, key->n);
    if (exp) {
        e = db_set_expire(db, e, when);
        cmd_notify(c, NOTIFY_GENERIC, "expire", db, key->p, key->n);
        /* As Redis: SET key value PXAT ms, whatever the options. */
        const char *p[5] = {"SET", key->p, val->p, "PXAT", NULL};
        size_t n[5] = {3, key->n, val->n, 4, 0};
        char num[24];
        n[4] = (size_t)snprintf(num, sizeof(num), "%lld", (long long)when);
        p[4] = num;
        prop_rewrite(c, 5, p, n);
    } else if (flags & SO_GET) {
        /* As Redis: propagated without its GET (a replica has no one to
         * answer; GET may be repeated). */
        for (int j = c->argc - 1; j >= 3; j--)
            if (arg_is(&c->argv[j], "get")) prop_rewrite_drop_arg(c, j);
    }
    if (flags & SO_GET) return;
    if (replies == SET_REPLY_INT) reply_int(c, 1);
    else reply_ok(c);
}

static void setCommand(client *c) {
    int flags;
    const garg *exp = NULL;
    if (parse_set_options(c, 3, 1, &flags, &exp) != 0) return;
    set_generic(c, flags, &c->argv[1], &c->argv[2], exp, SET_REPLY_OK);
}

static void setnxCommand(client *c) { set_generic(c, SO_NX, &c->argv[1], &c->argv[2], NULL, SET_REPLY_INT); }
static void setexCommand(client *c) { set_generic(c, SO_EX, &c->argv[1], &c->argv[3], &c->argv[2], SET_REPLY_OK); }
static void psetexCommand(client *c) { set_generic(c, SO_PX, &c->argv[1], &c->argv[3], &c->argv[2], SET_REPLY_OK); }

/* ---- GET family ---------------------------------------------------------- */

/* Replies the value of argv[1] (nil when missing); returns its entry, or
 * NULL when missing or after -WRONGTYPE (then *bad = 1). */
static dbentry *get_generic(client *c, gdb *db, int *bad) {
    dbentry *e = string_lookup(c, db, &c->argv[1], 1, bad);
    if (*bad) return NULL;
    if (!e) {
        reply_null(c);
    } else if (reply_strval(c, &e->val) != 0) {
        *bad = 1;
        return NULL;
    }
    return e;
}

/* GET streams a value whose tail is on SSD (cmd_stream_reply): the head
 * goes out at once and the tail follows as its reads complete. */
static void getCommand(client *c) {
    int bad;
    dbentry *e = string_lookup(c, cmd_db(c), &c->argv[1], 1, &bad);
    if (bad) return;
    if (!e) reply_null(c);
    else if (!cmd_stream_reply(c, &e->val)) reply_strval(c, &e->val);
}

static void getsetCommand(client *c) {
    gdb *db = cmd_db(c);
    int bad;
    dbentry *e = get_generic(c, db, &bad);
    if (bad) return;
    const garg *key = &c->argv[1];
    if (!string_store(c, db, e, key, c->argv[2].p, c->argv[2].n, 0)) return;
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_STRING, "set", db, key->p, key->n);
    prop_rewrite_arg(c, 0, "SET", 3); /* as Redis */
}

static void getdelCommand(client *c) {
    gdb *db = cmd_db(c);
    int bad;
    dbentry *e = get_generic(c, db, &bad);
    if (!e) return;
    db_delete_entry(db, e);
    cmd_key_modified(c, db, c->argv[1].p, c->argv[1].n);
    cmd_notify(c, NOTIFY_GENERIC, "del", db, c->argv[1].p, c->argv[1].n);
    /* As Redis: propagated as DEL, or UNLINK with lazyfree-lazy-user-del. */
    int lazy = keys_lazy_user_del();
    const char *p[2] = {lazy ? "UNLINK" : "DEL", c->argv[1].p};
    const size_t n[2] = {lazy ? 6u : 3u, c->argv[1].n};
    prop_rewrite(c, 2, p, n);
}

static void getexCommand(client *c) {
    int flags;
    const garg *exp = NULL;
    int64_t when = 0;
    if (parse_set_options(c, 2, 0, &flags, &exp) != 0) return;
    gdb *db = cmd_db(c);
    int bad;
    const garg *key = &c->argv[1];
    /* Redis 7.0 order: a missing key answers nil before the time is checked. */
    dbentry *e = string_lookup(c, db, key, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_null(c);
        return;
    }
    if (exp && expire_arg_ms(c, exp, flags & SO_EXPIRE, &when) != 0) return;
    if (reply_strval(c, &e->val) != 0) return;
    /* Propagated as what it did: DEL, PEXPIREAT key ms or PERSIST key. */
    if ((flags & (SO_EXAT | SO_PXAT)) && db_time_passed(when)) {
        db_delete_entry(db, e);
        cmd_key_modified(c, db, key->p, key->n);
        cmd_notify(c, NOTIFY_GENERIC, "del", db, key->p, key->n);
        prop_none(c);
        prop_deletion(c->db, PROP_DEL_EXPIRED, key->p, key->n);
    } else if (exp) {
        e = db_set_expire(db, e, when);
        cmd_key_modified(c, db, key->p, key->n);
        cmd_notify(c, NOTIFY_GENERIC, "expire", db, key->p, key->n);
        prop_pexpireat(c, key->p, key->n, when);
    } else if ((flags & SO_PERSIST) && db_entry_expire(e) != -1) {
        db_persist(db, e);
        cmd_key_modified(c, db, key->p, key->n);
        cmd_notify(c, NOTIFY_GENERIC, "persist", db, key->p, key->n);
        const char *p[2] = {"PERSIST", key->p};
        const size_t n[2] = {7, key->n};
        prop_rewrite(c, 2, p, n);
    }
}

static void mgetCommand(client *c) {
    gdb *db = cmd_db(c);
    reply_array(c, c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        cmd_prefetch_run(c, db, j, 1, 1);
        dbentry *e = db_lookup(db, c->argv[j].p, c->argv[j].n);
        if (!e || e->val.type != OBJ_STRING) reply_null(c);
        else reply_strval(c, &e->val);
    }
}

/* MSET and MSETNX: pairs are set in order, so a repeated key keeps its last
 * value; every key loses its TTL. */
static void mset_generic(client *c, int nx) {
    if (c->argc % 2 == 0) {
        reply_err_arity(c);
        return;
    }
    gdb *db = cmd_db(c);
    if (nx) {
        for (int j = 1; j < c->argc; j += 2) {
            cmd_prefetch_run(c, db, j, 1, 2);
            if (db_lookup(db, c->argv[j].p, c->argv[j].n)) {
                reply_int(c, 0);
                return;
            }
        }
    }
    for (int j = 1; j < c->argc; j += 2) {
        cmd_prefetch_run(c, db, j, 1, 2);
        const garg *key = &c->argv[j];
        dbentry *e = db_lookup(db, key->p, key->n);
        if (!string_store(c, db, e, key, c->argv[j + 1].p, c->argv[j + 1].n, 0)) return;
        cmd_key_modified(c, db, key->p, key->n);
        cmd_notify(c, NOTIFY_STRING, "set", db, key->p, key->n);
    }
    if (nx) reply_int(c, 1);
    else reply_ok(c);
}

static void msetCommand(client *c) { mset_generic(c, 0); }
static void msetnxCommand(client *c) { mset_generic(c, 1); }

/* ---- byte ranges ---------------------------------------------------------- */

static void appendCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1], *add = &c->argv[2];
    int bad;
    dbentry *e = string_lookup(c, db, key, 0, &bad);
    if (bad) return;
    size_t total;
    if (!e) {
        if (!string_store(c, db, NULL, key, add->p, add->n, 0)) return;
        total = add->n;
    } else {
        size_t old = strval_len(&e->val);
        if (check_string_length(c, old, add->n) != 0) return;
        char *p = strval_resize(&e->val, old + add->n);
        if (!p) {
            reply_resize_failed(c);
            return;
        }
        memcpy(p + old, add->p, add->n);
        total = old + add->n;
    }
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_STRING, "append", db, key->p, key->n);
    reply_int(c, (long long)total);
}

static void strlenCommand(client *c) {
    int bad;
    dbentry *e = string_lookup(c, cmd_db(c), &c->argv[1], 1, &bad);
    if (bad) return;
    reply_int(c, e ? (long long)strval_len(&e->val) : 0);
}

/* GETRANGE and SUBSTR: inclusive byte range, negative indexes count from the
 * end; an empty or inverted range (or a missing key) is an empty string. */
static void getrangeCommand(client *c) {
    long long start, end;
    if (arg_ll(c, &c->argv[2], &start) != 0 || arg_ll(c, &c->argv[3], &end) != 0) return;
    int bad;
    dbentry *e = string_lookup(c, cmd_db(c), &c->argv[1], 1, &bad);
    if (bad) return;
    if (!e) {
        reply_bulk(c, "", 0);
        return;
    }
    char tmp[STRUTIL_LLSTR];
    size_t n;
    const char *p = strval_bytes(&e->val, tmp, &n);
    if (!p) {
        reply_resize_failed(c);
        return;
    }
    long long len = (long long)n;
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(c, "", 0);
        return;
    }
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= len) end = len - 1;
    if (len == 0 || start > end) reply_bulk(c, "", 0);
    else reply_bulk(c, p + start, (size_t)(end - start + 1));
}

static void setrangeCommand(client *c) {
    const garg *key = &c->argv[1], *val = &c->argv[3];
    long long offset;
    if (arg_ll(c, &c->argv[2], &offset) != 0) return;
    if (offset < 0) {
        reply_error(c, "ERR offset is out of range");
        return;
    }
    gdb *db = cmd_db(c);
    int bad;
    dbentry *e = string_lookup(c, db, key, 0, &bad);
    if (bad) return;
    size_t old = e ? strval_len(&e->val) : 0;
    /* Writing nothing changes nothing, not even a missing key. */
    if (val->n == 0) {
        reply_int(c, (long long)old);
        return;
    }
    if (check_string_length(c, (unsigned long long)offset, val->n) != 0) return;
    int created = 0;
    if (!e) {
        if (!(e = string_store(c, db, NULL, key, "", 0, 0))) return;
        created = 1;
    }
    size_t need = (size_t)offset + val->n;
    char *p = strval_resize(&e->val, need > old ? need : old);
    if (!p) {
        if (created) db_delete_entry(db, e);
        reply_resize_failed(c);
        return;
    }
    memcpy(p + offset, val->p, val->n);
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_STRING, "setrange", db, key->p, key->n);
    reply_int(c, (long long)strval_len(&e->val));
}

/* ---- counters ------------------------------------------------------------- */

static void incr_generic(client *c, long long incr) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int bad;
    dbentry *e = string_lookup(c, db, key, 0, &bad);
    if (bad) return;
    int64_t v = 0;
    if (e && !strval_get_int(&e->val, &v)) {
        reply_err_not_int(c);
        return;
    }
    if ((incr < 0 && v < 0 && incr < LLONG_MIN - v) || (incr > 0 && v > 0 && incr > LLONG_MAX - v)) {
        reply_error(c, "ERR increment or decrement would overflow");
        return;
    }
    v += incr;
    if (!string_store_int(c, db, e, key, v)) return;
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_STRING, "incrby", db, key->p, key->n);
    reply_int(c, v);
}

static void incrCommand(client *c) { incr_generic(c, 1); }
static void decrCommand(client *c) { incr_generic(c, -1); }

static void incrbyCommand(client *c) {
    long long incr;
    if (arg_ll(c, &c->argv[2], &incr) != 0) return;
    incr_generic(c, incr);
}

static void decrbyCommand(client *c) {
    long long incr;
    if (arg_ll(c, &c->argv[2], &incr) != 0) return;
    if (incr == LLONG_MIN) {
        reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, -incr);
}

/* INCRBYFLOAT: long double arithmetic, the result stored as its text in
 * %.17Lf form without trailing zeros (the form replication would send). */
static void incrbyfloatCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int bad;
    dbentry *e = string_lookup(c, db, key, 0, &bad);
    if (bad) return;
    long double value = 0, incr;
    if (e) {
        char tmp[STRUTIL_LLSTR];
        size_t n;
        const char *p = strval_bytes(&e->val, tmp, &n);
        if (!p) {
            reply_resize_failed(c);
            return;
        }
        if (!str_to_ldouble(p, n, &value)) {
            reply_error(c, "ERR value is not a valid float");
            return;
        }
    }
    if (!str_to_ldouble(c->argv[2].p, c->argv[2].n, &incr)) {
        reply_error(c, "ERR value is not a valid float");
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[STRUTIL_LDSTR];
    int n = ld_to_str_human(buf, sizeof(buf), value);
    {
        /* INCRBYFLOAT results stay strings even when they look integral. */
        gobj nv = {0};
        if (strval_set_str(&nv, buf, (size_t)n) != 0) {
            reply_oom(c);
            return;
        }
        if (!string_install(c, db, e, key, &nv, DB_KEEPTTL)) return;
    }
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_STRING, "incrbyfloat", db, key->p, key->n);
    {
        /* The result, not the increment: float arithmetic may differ where
         * the stream is replayed. */
        const char *p[4] = {"SET", key->p, buf, "KEEPTTL"};
        const size_t pn[4] = {3, key->n, (size_t)n, 7};
        prop_rewrite(c, 4, p, pn);
    }
    reply_bulk(c, buf, (size_t)n);
}

/* ---- LCS ------------------------------------------------------------------ */

/* One match range of the LCS traceback, in both strings (inclusive). */
typedef struct lcs_range {
    uint32_t a0, a1, b0, b1;
} lcs_range;

static void lcs_reply_range(client *c, const lcs_range *r, int withlen) {
    reply_array(c, 2 + withlen);
    reply_array(c, 2);
    reply_int(c, r->a0);
    reply_int(c, r->a1);
    reply_array(c, 2);
    reply_int(c, r->b0);
    reply_int(c, r->b1);
    if (withlen) reply_int(c, (long long)r->a1 - r->a0 + 1);
}

/* LCS by the classic dynamic-programming table T[i][j] = LCS length of
 * a[0..i) and b[0..j). The traceback walks from the end: equal bytes extend
 * the current range backwards, otherwise it steps towards the larger
 * neighbour (preferring j-- on a tie) and closes the range, which is how
 * Redis orders and delimits the IDX ranges. */
static void lcsCommand(client *c) {
    gdb *db = cmd_db(c);
    dbentry *ea = db_lookup(db, c->argv[1].p, c->argv[1].n);
    dbentry *eb = db_lookup(db, c->argv[2].p, c->argv[2].n);
    if ((ea && ea->val.type != OBJ_STRING) || (eb && eb->val.type != OBJ_STRING)) {
        reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    int getlen = 0, getidx = 0, withlen = 0;
    long long minlen = 0;
    for (int j = 3; j < c->argc; j++) {
        const char *opt = c->argv[j].p;
        if (!strcasecmp(opt, "idx")) {
            getidx = 1;
        } else if (!strcasecmp(opt, "len")) {
            getlen = 1;
        } else if (!strcasecmp(opt, "withmatchlen")) {
            withlen = 1;
        } else if (!strcasecmp(opt, "minmatchlen") && j + 1 < c->argc) {
            if (arg_ll(c, &c->argv[++j], &minlen) != 0) return;
            if (minlen < 0) minlen = 0;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (getidx && getlen) {
        reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    char ta[STRUTIL_LLSTR], tb[STRUTIL_LLSTR];
    size_t an = 0, bn = 0;
    const char *a = ea ? strval_bytes(&ea->val, ta, &an) : "";
    const char *b = eb ? strval_bytes(&eb->val, tb, &bn) : "";
    if (!a || !b) {
        reply_resize_failed(c);
        return;
    }
    if (an >= UINT32_MAX - 1 || bn >= UINT32_MAX - 1) {
        reply_error(c, "ERR String too long for LCS");
        return;
    }
    uint64_t cols = bn + 1, cells = (uint64_t)(an + 1) * cols;
    uint32_t *t = NULL;
    if (cells <= SIZE_MAX / sizeof(uint32_t)) {
        if (cells * sizeof(uint32_t) > (uint64_t)cfg.proto_max_bulk_len) {
            reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
            return;
        }
        t = malloc(cells * sizeof(uint32_t));
    }
    if (!t) {
        reply_error(c, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return;
    }
#define T(i, j) t[(uint64_t)(i) * cols + (j)]
    for (size_t j = 0; j <= bn; j++) T(0, j) = 0;
    for (size_t i = 1; i <= an; i++) {
        T(i, 0) = 0;
        for (size_t j = 1; j <= bn; j++) {
            if (a[i - 1] == b[j - 1]) T(i, j) = T(i - 1, j - 1) + 1;
            else T(i, j) = T(i - 1, j) > T(i, j - 1) ? T(i - 1, j) : T(i, j - 1);
        }
    }
    uint32_t total = T(an, bn);
    if (getlen) {
        reply_int(c, total);
        free(t);
        return;
    }
    char *res = malloc(total + 1);
    if (!res) {
        free(t);
        reply_oom(c);
        return;
    }
    size_t handle = 0;
    long nranges = 0;
    if (getidx) {
        reply_map(c, 2);
        reply_bulk(c, "matches", 7);
        handle = reply_defer(c);
    }
    uint32_t i = (uint32_t)an, j = (uint32_t)bn, k = total;
    lcs_range cur = {0, 0, 0, 0};
    int open = 0;
    while (i > 0 && j > 0) {
        int close = 0;
        if (a[i - 1] == b[j - 1]) {
            res[--k] = a[i - 1];
            if (!open) {
                cur.a0 = cur.a1 = i - 1;
                cur.b0 = cur.b1 = j - 1;
                open = 1;
            } else if (cur.a0 == i && cur.b0 == j) {
                cur.a0--;
                cur.b0--;
            } else {
                close = 1;
            }
            if (cur.a0 == 0 || cur.b0 == 0) close = 1;
            i--;
            j--;
        } else {
            if (T(i - 1, j) > T(i, j - 1)) i--;
            else j--;
            if (open) close = 1;
        }
        if (close) {
            if (getidx && (minlen == 0 || (long long)cur.a1 - cur.a0 + 1 >= minlen)) {
                lcs_reply_range(c, &cur, withlen);
                nranges++;
            }
            open = 0;
        }
    }
#undef T
    free(t);
    if (getidx) {
        reply_defer_array(c, handle, nranges);
        reply_bulk(c, "len", 3);
        reply_int(c, total);
    } else {
        reply_bulk(c, res, total);
    }
    free(res);
}

const cmd_handler string_handlers[] = {
    {"get", getCommand, CMD_LOCK_KEYS},
    {"set", setCommand, CMD_LOCK_KEYS},
    {"setnx", setnxCommand, CMD_LOCK_KEYS},
    {"setex", setexCommand, CMD_LOCK_KEYS},
    {"psetex", psetexCommand, CMD_LOCK_KEYS},
    {"getset", getsetCommand, CMD_LOCK_KEYS},
    {"getdel", getdelCommand, CMD_LOCK_KEYS},
    {"getex", getexCommand, CMD_LOCK_KEYS},
    {"mget", mgetCommand, CMD_LOCK_KEYS},
    {"mset", msetCommand, CMD_LOCK_KEYS},
    {"msetnx", msetnxCommand, CMD_LOCK_KEYS},
    {"append", appendCommand, CMD_LOCK_KEYS},
    {"strlen", strlenCommand, CMD_LOCK_KEYS},
    {"getrange", getrangeCommand, CMD_LOCK_KEYS},
    {"substr", getrangeCommand, CMD_LOCK_KEYS},
    {"setrange", setrangeCommand, CMD_LOCK_KEYS},
    {"incr", incrCommand, CMD_LOCK_KEYS},
    {"decr", decrCommand, CMD_LOCK_KEYS},
    {"incrby", incrbyCommand, CMD_LOCK_KEYS},
    {"decrby", decrbyCommand, CMD_LOCK_KEYS},
    {"incrbyfloat", incrbyfloatCommand, CMD_LOCK_KEYS},
    {"lcs", lcsCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
