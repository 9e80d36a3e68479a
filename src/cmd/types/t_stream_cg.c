/* t_stream_cg.c -- the consumer-group commands of streams: XGROUP (CREATE,
 * SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP), XACK, XPENDING,
 * XCLAIM, XAUTOCLAIM and XINFO (STREAM [FULL], GROUPS, CONSUMERS, HELP),
 * with Redis 7.0.15's replies, errors and propagation.
 *
 * Groups, consumers and pending entries are ds/stream's. As in Redis, only
 * XGROUP CREATE ... MKSTREAM touches WATCHed keys (it creates the key);
 * the other group changes count in the dirty counter and reach the write
 * stream without touching WATCH (xs_dirty). XCLAIM and XAUTOCLAIM put no
 * record of their own on the stream: each claimed (or dropped) entry goes
 * out as Redis's XCLAIM ... FORCE JUSTID LASTID form, and a LASTID that
 * moved the group without a claim as XGROUP SETID. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/blocking.h"
#include "cmd/command.h"
#include "cmd/propagate.h"
#include "cmd/server/admin_family.h"
#include "cmd/types/t_stream.h"
#include "cmd/types/tcommon.h"
#include "session/reply.h"
#include "util/strutil.h"

static void reply_nogroup_for_key(client *c, const garg *group, const garg *key) {
    reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)group->n, group->p,
                 (int)key->n, key->p);
}

/* ---- XGROUP ---- */

static void xgroupCommand(client *c) {
    const garg *opt = &c->argv[1];
    gdb *db = cmd_db(c);
    gstream *s = NULL;
    stream_group *g = NULL;
    int mkstream = 0;
    long long entries_read = STREAM_ENTRIES_READ_INVALID;
    int create = arg_is(opt, "create"), setid = arg_is(opt, "setid");
    if (c->argc >= 4) {
        for (int i = 5; i < c->argc;) {
            if (create && arg_is(&c->argv[i], "mkstream")) {
                mkstream = 1;
                i++;
            } else if ((create || setid) && arg_is(&c->argv[i], "entriesread") && i + 1 < c->argc) {
                if (arg_ll(c, &c->argv[i + 1], &entries_read) != 0) return;
                if (entries_read < 0 && entries_read != STREAM_ENTRIES_READ_INVALID) {
                    reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
                    return;
                }
                i += 2;
            } else {
                admin_reply_subcommand_syntax(c, "XGROUP");
                return;
            }
        }
        int wrong;
        dbentry *e = cmd_lookup_typed(c, db, &c->argv[2], OBJ_STREAM, &wrong);
        if (wrong) return;
        if (e) s = xs_of(e);
    }
    if (c->argc >= 4 && !mkstream) {
        if (!s) {
            reply_error(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
                           "to use the MKSTREAM option to create an empty stream automatically.");
            return;
        }
        g = stream_group_find(s, c->argv[3].p, c->argv[3].n);
        if (!g && (setid || arg_is(opt, "createconsumer") || arg_is(opt, "delconsumer"))) {
            reply_nogroup_for_key(c, &c->argv[3], &c->argv[2]);
            return;
        }
    }
    const garg *key = c->argc >= 3 ? &c->argv[2] : NULL;
    if (c->argc == 2 && arg_is(opt, "help")) {
        static const char *const help[] = {
            "CREATE <key> <groupname> <id|$> [option]",
            "    Create a new consumer group. Options are:",
            "    * MKSTREAM",
            "      Create the empty stream if it does not exist.",
            "    * ENTRIESREAD entries_read",
            "      Set the group's entries_read counter (internal use).",
            "CREATECONSUMER <key> <groupname> <consumer>",
            "    Create a new consumer in the specified group.",
            "DELCONSUMER <key> <groupname> <consumer>",
            "    Remove the specified consumer.",
            "DESTROY <key> <groupname>",
            "    Remove the specified group.",
            "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
            "    Set the current group ID and entries_read counter.",
            NULL};
        admin_reply_help(c, "XGROUP", help);
    } else if (create && c->argc >= 5 && c->argc <= 8) {
        stream_id id;
        const garg *ida = &c->argv[4];
        if (ida->n == 1 && ida->p[0] == '$') {
            if (s) id = s->last_id;
            else id.ms = id.seq = 0;
        } else if (xs_parse_id(c, ida, &id, 0, 1, NULL) != 0) {
            return;
        }
        if (!s) {
            dbentry *e = tc_add_key(c, db, key, OBJ_STREAM, ENC_STREAM, stream_new());
            if (!e) return;
            s = xs_of(e);
            cmd_key_modified(c, db, key->p, key->n);
        }
        if (stream_group_find(s, c->argv[3].p, c->argv[3].n)) {
            reply_error(c, "BUSYGROUP Consumer Group name already exists");
            return;
        }
        if (!stream_group_create(s, c->argv[3].p, c->argv[3].n, &id, entries_read)) {
            tc_reply_oom(c);
            return;
        }
        reply_ok(c);
        xs_dirty(1);
        cmd_notify(c, NOTIFY_STREAM, "xgroup-create", db, key->p, key->n);
    } else if (setid && (c->argc == 5 || c->argc == 7)) {
        stream_id id;
        const garg *ida = &c->argv[4];
        if (ida->n == 1 && ida->p[0] == '$') id = s->last_id;
        else if (xs_parse_id(c, ida, &id, 0, 0, NULL) != 0) return;
        g->last_id = id;
        g->entries_read = entries_read;
        reply_ok(c);
        xs_dirty(1);
        cmd_notify(c, NOTIFY_STREAM, "xgroup-setid", db, key->p, key->n);
    } else if (arg_is(opt, "destroy") && c->argc == 4) {
        if (g) {
            stream_group_destroy(s, c->argv[3].p, c->argv[3].n);
            reply_int(c, 1);
            xs_dirty(1);
            cmd_notify(c, NOTIFY_STREAM, "xgroup-destroy", db, key->p, key->n);
            block_signal_key(db, key->p, key->n);
        } else {
            reply_int(c, 0);
        }
    } else if (arg_is(opt, "createconsumer") && c->argc == 5) {
        stream_consumer *cons = stream_consumer_find(g, c->argv[4].p, c->argv[4].n);
        if (!cons && !xs_consumer_create(c, db, key, g, &c->argv[4])) {
            tc_reply_oom(c);
            return;
        }
        reply_int(c, cons ? 0 : 1);
    } else if (arg_is(opt, "delconsumer") && c->argc == 5) {
        long long pending = 0;
        stream_consumer *cons = stream_consumer_find(g, c->argv[4].p, c->argv[4].n);
        if (cons) {
            pending = (long long)stream_consumer_delete(g, cons);
            xs_dirty(1);
            cmd_notify(c, NOTIFY_STREAM, "xgroup-delconsumer", db, key->p, key->n);
        }
        reply_int(c, pending);
    } else {
        admin_reply_subcommand_syntax(c, "XGROUP");
    }
}

/* ---- XACK ---- */

static void xackCommand(client *c) {
    gdb *db = cmd_db(c);
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, &c->argv[1], OBJ_STREAM, &wrong);
    if (wrong) return;
    stream_group *g = e ? stream_group_find(xs_of(e), c->argv[2].p, c->argv[2].n) : NULL;
    if (!g) {
        reply_int(c, 0);
        return;
    }
    int n = c->argc - 3;
    stream_id *ids = malloc(sizeof(*ids) * (size_t)n);
    if (!ids) {
        tc_reply_oom(c);
        return;
    }
    for (int j = 0; j < n; j++)
        if (xs_parse_id(c, &c->argv[j + 3], &ids[j], 0, 1, NULL) != 0) {
            free(ids);
            return;
        }
    long long acked = 0;
    for (int j = 0; j < n; j++) {
        stream_nack *na = stream_pel_find(&g->pel, &ids[j]);
        if (na) {
            stream_nack_del(g, na);
            acked++;
        }
    }
    free(ids);
    if (acked) xs_dirty((uint64_t)acked);
    reply_int(c, acked);
}

/* ---- XPENDING ---- */

static void xpendingCommand(client *c) {
    int justinfo = c->argc == 3;
    const garg *key = &c->argv[1], *groupname = &c->argv[2], *consname = NULL;
    stream_id start = {0, 0}, end = {0, 0};
    long long count = 0, minidle = 0;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_err_syntax(c);
        return;
    }
    if (c->argc >= 6) {
        int si = 3, sx, ex;
        if (arg_is(&c->argv[3], "idle")) {
            if (arg_ll(c, &c->argv[4], &minidle) != 0) return;
            if (c->argc < 8) {
                reply_err_syntax(c);
                return;
            }
            si += 2;
        }
        if (arg_ll(c, &c->argv[si + 2], &count) != 0) return;
        if (count < 0) count = 0;
        garg sa = c->argv[si], ea = c->argv[si + 1];
        sx = sa.n > 1 && sa.p[0] == '(';
        if (sx) {
            garg t = {sa.p + 1, sa.n - 1};
            if (xs_parse_id(c, &t, &start, 0, 1, NULL) != 0) return;
        } else if (xs_parse_id(c, &sa, &start, 0, 0, NULL) != 0) {
            return;
        }
        if (sx && stream_id_incr(&start) != 0) {
            reply_error(c, "ERR invalid start ID for the interval");
            return;
        }
        ex = ea.n > 1 && ea.p[0] == '(';
        if (ex) {
            garg t = {ea.p + 1, ea.n - 1};
            if (xs_parse_id(c, &t, &end, UINT64_MAX, 1, NULL) != 0) return;
        } else if (xs_parse_id(c, &ea, &end, UINT64_MAX, 0, NULL) != 0) {
            return;
        }
        if (ex && stream_id_decr(&end) != 0) {
            reply_error(c, "ERR invalid end ID for the interval");
            return;
        }
        if (si + 3 < c->argc) consname = &c->argv[si + 3];
    }
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), key, OBJ_STREAM, &wrong);
    if (wrong) return;
    stream_group *g = e ? stream_group_find(xs_of(e), groupname->p, groupname->n) : NULL;
    if (!g) {
        xs_reply_nogroup(c, key, groupname, "");
        return;
    }
    if (justinfo) {
        reply_array(c, 4);
        reply_int(c, (long long)g->pel.n);
        if (!g->pel.n) {
            reply_null(c);
            reply_null(c);
            reply_null_array(c);
            return;
        }
        xs_reply_id(c, &g->pel.v[0]->id);
        xs_reply_id(c, &g->pel.v[g->pel.n - 1]->id);
        size_t h = reply_defer(c);
        long n = 0;
        for (size_t i = 0; i < g->ncons; i++) {
            stream_consumer *cons = g->cons[i];
            if (!cons->pel.n) continue;
            reply_array(c, 2);
            reply_bulk(c, cons->name, cons->nlen);
            reply_bulk_ll(c, (long long)cons->pel.n);
            n++;
        }
        reply_defer_array(c, h, n);
        return;
    }
    stream_pel *pel = &g->pel;
    if (consname) {
        stream_consumer *cons = stream_consumer_find(g, consname->p, consname->n);
        if (!cons) {
            reply_array(c, 0);
            return;
        }
        pel = &cons->pel;
    }
    int64_t now = db_now_ms();
    size_t h = reply_defer(c);
    long n = 0;
    for (size_t i = stream_pel_lower(pel, &start); count && i < pel->n; i++) {
        stream_nack *na = pel->v[i];
        if (stream_id_cmp(&na->id, &end) > 0) break;
        if (minidle && now - na->delivery_time < minidle) continue;
        n++;
        count--;
        reply_array(c, 4);
        xs_reply_id(c, &na->id);
        reply_bulk(c, na->consumer->name, na->consumer->nlen);
        int64_t el = now - na->delivery_time;
        reply_int(c, el < 0 ? 0 : el);
        reply_int(c, (long long)na->delivery_count);
    }
    reply_defer_array(c, h, n);
}

/* ---- XCLAIM / XAUTOCLAIM ---- */

static int entry_exists(gstream *s, const stream_id *id) {
    stream_iter it;
    stream_id cur;
    size_t nf;
    stream_iter_init(&it, s, id, id, 0);
    int found = stream_iter_next(&it, &cur, &nf);
    stream_iter_done(&it);
    return found;
}

static void reply_one_entry(client *c, gstream *s, const stream_id *id) {
    stream_iter it;
    stream_id cur;
    size_t nf;
    stream_iter_init(&it, s, id, id, 0);
    if (stream_iter_next(&it, &cur, &nf)) {
        reply_array(c, 2);
        xs_reply_id(c, &cur);
        xs_reply_entry_fields(c, &it, nf);
    }
    stream_iter_done(&it);
}

static int parse_ll_msg(client *c, const garg *a, long long *v, const char *msg) {
    if (!str_to_ll(a->p, a->n, v)) {
        reply_error(c, msg);
        return -1;
    }
    return 0;
}

static void xclaimCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1], *groupname = &c->argv[2];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_STREAM, &wrong);
    if (wrong) return;
    stream_group *g = e ? stream_group_find(xs_of(e), groupname->p, groupname->n) : NULL;
    if (!g) {
        xs_reply_nogroup(c, key, groupname, "");
        return;
    }
    gstream *s = xs_of(e);
    long long minidle, retrycount = -1, deliverytime = -1;
    int force = 0, justid = 0;
    if (parse_ll_msg(c, &c->argv[4], &minidle, "ERR Invalid min-idle-time argument for XCLAIM") != 0) return;
    if (minidle < 0) minidle = 0;
    stream_id *ids = malloc(sizeof(*ids) * (size_t)(c->argc - 5));
    if (!ids) {
        tc_reply_oom(c);
        return;
    }
    int j;
    for (j = 5; j < c->argc; j++)
        if (xs_parse_id_quiet(&c->argv[j], &ids[j - 5], 1) != 0) break;
    int last_arg = j - 1;
    int64_t now = db_now_ms();
    stream_id last_id = {0, 0};
    int propagate_last = 0;
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const garg *o = &c->argv[j];
        if (arg_is(o, "force")) {
            force = 1;
        } else if (arg_is(o, "justid")) {
            justid = 1;
        } else if (arg_is(o, "idle") && more) {
            if (parse_ll_msg(c, &c->argv[++j], &deliverytime, "ERR Invalid IDLE option argument for XCLAIM") != 0)
                goto done;
            deliverytime = now - deliverytime;
        } else if (arg_is(o, "time") && more) {
            if (parse_ll_msg(c, &c->argv[++j], &deliverytime, "ERR Invalid TIME option argument for XCLAIM") != 0)
                goto done;
        } else if (arg_is(o, "retrycount") && more) {
            if (parse_ll_msg(c, &c->argv[++j], &retrycount, "ERR Invalid RETRYCOUNT option argument for XCLAIM") !=
                0)
                goto done;
        } else if (arg_is(o, "lastid") && more) {
            if (xs_parse_id(c, &c->argv[++j], &last_id, 0, 1, NULL) != 0) goto done;
        } else {
            reply_errorf(c, "ERR Unrecognized XCLAIM option '%.*s'", (int)o->n, o->p);
            goto done;
        }
    }
    prop_none(c);
    if (stream_id_cmp(&last_id, &g->last_id) > 0) {
        g->last_id = last_id;
        propagate_last = 1;
    }
    if (deliverytime != -1) {
        if (deliverytime < 0 || deliverytime > now) deliverytime = now;
    } else {
        deliverytime = now;
    }
    stream_consumer *cons = NULL;
    const garg *name = &c->argv[3];
    size_t h = reply_defer(c);
    long n = 0;
    for (int k = 5; k <= last_arg; k++) {
        stream_id id = ids[k - 5];
        stream_nack *na = stream_pel_find(&g->pel, &id);
        if (!entry_exists(s, &id)) {
            if (na) {
                xs_prop_xclaim(c, key, groupname, g, na);
                propagate_last = 0;
                xs_dirty(1);
                stream_nack_del(g, na);
            }
            continue;
        }
        int fresh = 0;
        if (!na && !force) continue;
        if (!na) fresh = 1;
        if (!fresh && minidle && now - na->delivery_time < minidle) continue;
        if (!cons && !(cons = xs_consumer_lookup(g, name, 1)) && !(cons = xs_consumer_create(c, db, key, g, name)))
            abort();
        if (fresh) {
            if (!(na = stream_nack_add(g, cons, &id, now))) abort();
        } else {
            stream_nack_move(na, cons);
        }
        na->delivery_time = deliverytime;
        if (retrycount >= 0) na->delivery_count = (uint64_t)retrycount;
        else if (!justid) na->delivery_count++;
        if (justid) xs_reply_id(c, &id);
        else reply_one_entry(c, s, &id);
        n++;
        xs_prop_xclaim(c, key, groupname, g, na);
        propagate_last = 0;
        xs_dirty(1);
    }
    if (propagate_last) {
        xs_prop_setid(c, key, groupname, g);
        xs_dirty(1);
    }
    reply_defer_array(c, h, n);
done:
    free(ids);
}

static void xautoclaimCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1], *groupname = &c->argv[2];
    long long minidle, count = 100;
    int justid = 0;
    if (parse_ll_msg(c, &c->argv[4], &minidle, "ERR Invalid min-idle-time argument for XAUTOCLAIM") != 0) return;
    if (minidle < 0) minidle = 0;
    stream_id start;
    const garg *sa = &c->argv[5];
    int sx = sa->n > 1 && sa->p[0] == '(';
    if (sx) {
        garg t = {sa->p + 1, sa->n - 1};
        if (xs_parse_id(c, &t, &start, 0, 1, NULL) != 0) return;
    } else if (xs_parse_id(c, sa, &start, 0, 0, NULL) != 0) {
        return;
    }
    if (sx && stream_id_incr(&start) != 0) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "count") && more) {
            long long maxc = LONG_MAX / 16;
            if (arg_ll_range(c, &c->argv[j + 1], &count, 1, maxc, "ERR COUNT must be > 0") != 0) return;
            j++;
        } else if (arg_is(&c->argv[j], "justid")) {
            justid = 1;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_STREAM, &wrong);
    if (wrong) return;
    stream_group *g = e ? stream_group_find(xs_of(e), groupname->p, groupname->n) : NULL;
    if (!g) {
        xs_reply_nogroup(c, key, groupname, "");
        return;
    }
    if ((unsigned long long)count > (1ULL << 40) / sizeof(stream_id)) {
        reply_error(c, "ERR Insufficient memory, failed allocating transient memory, COUNT too high.");
        return;
    }
    gstream *s = xs_of(e);
    prop_none(c);
    stream_consumer *cons = NULL;
    long long attempts = count * 10;
    /* the claims are made first, then replied: the reply starts with
     * the cursor the scan ends on */
    stream_id *claimed = NULL, *deleted = NULL;
    size_t nclaimed = 0, ndel = 0, cap = 0;
    int64_t now = db_now_ms();
    const garg *name = &c->argv[3];
    size_t i = stream_pel_lower(&g->pel, &start);
    while (attempts-- && count && i < g->pel.n) {
        stream_nack *na = g->pel.v[i];
        stream_id id = na->id;
        if (nclaimed + ndel == cap) {
            cap = cap ? cap * 2 : 8;
            stream_id *a1 = realloc(claimed, cap * sizeof(*a1));
            if (!a1) abort();
            claimed = a1;
            stream_id *a2 = realloc(deleted, cap * sizeof(*a2));
            if (!a2) abort();
            deleted = a2;
        }
        if (!entry_exists(s, &id)) {
            xs_prop_xclaim(c, key, groupname, g, na);
            xs_dirty(1);
            stream_nack_del(g, na);
            deleted[ndel++] = id;
            count--;
            continue; /* i now names the next nack */
        }
        i++;
        if (minidle && now - na->delivery_time < minidle) continue;
        if (!cons && !(cons = xs_consumer_lookup(g, name, 1)) && !(cons = xs_consumer_create(c, db, key, g, name)))
            abort();
        stream_nack_move(na, cons);
        na->delivery_time = now;
        if (!justid) na->delivery_count++;
        claimed[nclaimed++] = id;
        count--;
        xs_prop_xclaim(c, key, groupname, g, na);
        xs_dirty(1);
    }
    stream_id endid = {0, 0};
    if (i < g->pel.n) endid = g->pel.v[i]->id;
    reply_array(c, 3);
    xs_reply_id(c, &endid);
    reply_array(c, (long)nclaimed);
    for (size_t k = 0; k < nclaimed; k++) {
        if (justid) xs_reply_id(c, &claimed[k]);
        else reply_one_entry(c, s, &claimed[k]);
    }
    reply_array(c, (long)ndel);
    for (size_t k = 0; k < ndel; k++) xs_reply_id(c, &deleted[k]);
    free(claimed);
    free(deleted);
}

/* ---- XINFO ---- */

static void reply_lag(client *c, gstream *s, stream_group *g) {
    long long lag;
    if (!s->entries_added) {
        reply_int(c, 0);
        return;
    }
    if (g->entries_read != STREAM_ENTRIES_READ_INVALID && !stream_range_has_tombstones(s, &g->last_id, NULL)) {
        lag = (long long)s->entries_added - g->entries_read;
    } else {
        long long er = stream_estimate_distance(s, &g->last_id);
        if (er == STREAM_ENTRIES_READ_INVALID) {
            reply_null(c);
            return;
        }
        lag = (long long)s->entries_added - er;
    }
    reply_int(c, lag);
}

static void reply_entries_read(client *c, stream_group *g) {
    if (g->entries_read != STREAM_ENTRIES_READ_INVALID) reply_int(c, g->entries_read);
    else reply_null(c);
}

/* XINFO's radix-tree-nodes: the nodes Redis's rax has for the runs' master
 * IDs (16-byte big-endian keys) in its canonical compressed shape: a node
 * that all keys below share a next byte with is a compressed node over the
 * common bytes, a node where they differ branches, and each key ends in a
 * node of its own. Keys [lo, hi) share their first d bytes. */
static unsigned char key_byte(const gstream *s, size_t i, int d) {
    const stream_id *id = &s->runs[i].first;
    return (unsigned char)(d < 8 ? id->ms >> (56 - 8 * d) : id->seq >> (56 - 8 * (d - 8)));
}

static long long rax_nodes(const gstream *s, size_t lo, size_t hi, int d) {
    if (d == 16) return 1;
    int e = d;
    while (e < 16 && key_byte(s, lo, e) == key_byte(s, hi - 1, e)) e++; /* sorted: first and last bound it */
    if (e > d) return 1 + rax_nodes(s, lo, hi, e);
    long long n = 1;
    for (size_t i = lo; i < hi;) {
        size_t j = i + 1;
        while (j < hi && key_byte(s, j, d) == key_byte(s, i, d)) j++;
        n += rax_nodes(s, i, j, d + 1);
        i = j;
    }
    return n;
}

static long long rax_nodes_of(const gstream *s) { return s->nruns ? rax_nodes(s, 0, s->nruns, 0) : 1; }

static void xinfo_stream(client *c, gstream *s) {
    int full = 1;
    long long count = 10;
    int optc = c->argc - 3;
    if (optc == 0) {
        full = 0;
    } else {
        if ((optc != 1 && optc != 3) || !arg_is(&c->argv[3], "full")) {
            admin_reply_subcommand_syntax(c, "XINFO");
            return;
        }
        if (optc == 3) {
            if (!arg_is(&c->argv[4], "count")) {
                admin_reply_subcommand_syntax(c, "XINFO");
                return;
            }
            if (arg_ll(c, &c->argv[5], &count) != 0) return;
            if (count < 0) count = 10;
        }
    }
    reply_map(c, full ? 9 : 10);
    reply_bulk_cstr(c, "length");
    reply_int(c, (long long)s->length);
    reply_bulk_cstr(c, "radix-tree-keys");
    reply_int(c, (long long)stream_nruns(s));
    reply_bulk_cstr(c, "radix-tree-nodes");
    reply_int(c, rax_nodes_of(s));
    reply_bulk_cstr(c, "last-generated-id");
    xs_reply_id(c, &s->last_id);
    reply_bulk_cstr(c, "max-deleted-entry-id");
    xs_reply_id(c, &s->max_deleted_id);
    reply_bulk_cstr(c, "entries-added");
    reply_int(c, (long long)s->entries_added);
    reply_bulk_cstr(c, "recorded-first-entry-id");
    xs_reply_id(c, &s->first_id);
    if (!full) {
        reply_bulk_cstr(c, "groups");
        reply_int(c, (long long)s->ngroups);
        for (int rev = 0; rev < 2; rev++) {
            reply_bulk_cstr(c, rev ? "last-entry" : "first-entry");
            stream_iter it;
            stream_id id;
            size_t nf;
            stream_iter_init(&it, s, NULL, NULL, rev);
            if (stream_iter_next(&it, &id, &nf)) {
                reply_array(c, 2);
                xs_reply_id(c, &id);
                xs_reply_entry_fields(c, &it, nf);
            } else {
                reply_null(c);
            }
            stream_iter_done(&it);
        }
        return;
    }
    reply_bulk_cstr(c, "entries");
    xs_reply_range(c, s, NULL, NULL, (size_t)count, 0, NULL, NULL, 0, NULL, NULL);
    reply_bulk_cstr(c, "groups");
    reply_array(c, (long)s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) {
        stream_group *g = s->groups[i];
        reply_map(c, 7);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, g->name, g->nlen);
        reply_bulk_cstr(c, "last-delivered-id");
        xs_reply_id(c, &g->last_id);
        reply_bulk_cstr(c, "entries-read");
        reply_entries_read(c, g);
        reply_bulk_cstr(c, "lag");
        reply_lag(c, s, g);
        reply_bulk_cstr(c, "pel-count");
        reply_int(c, (long long)g->pel.n);
        reply_bulk_cstr(c, "pending");
        size_t np = g->pel.n;
        if (count && (size_t)count < np) np = (size_t)count;
        reply_array(c, (long)np);
        for (size_t k = 0; k < np; k++) {
            stream_nack *na = g->pel.v[k];
            reply_array(c, 4);
            xs_reply_id(c, &na->id);
            reply_bulk(c, na->consumer->name, na->consumer->nlen);
            reply_int(c, na->delivery_time);
            reply_int(c, (long long)na->delivery_count);
        }
        reply_bulk_cstr(c, "consumers");
        reply_array(c, (long)g->ncons);
        for (size_t k = 0; k < g->ncons; k++) {
            stream_consumer *cons = g->cons[k];
            reply_map(c, 4);
            reply_bulk_cstr(c, "name");
            reply_bulk(c, cons->name, cons->nlen);
            reply_bulk_cstr(c, "seen-time");
            reply_int(c, cons->seen_time);
            reply_bulk_cstr(c, "pel-count");
            reply_int(c, (long long)cons->pel.n);
            reply_bulk_cstr(c, "pending");
            size_t cp = cons->pel.n;
            if (count && (size_t)count < cp) cp = (size_t)count;
            reply_array(c, (long)cp);
            for (size_t m = 0; m < cp; m++) {
                stream_nack *na = cons->pel.v[m];
                reply_array(c, 3);
                xs_reply_id(c, &na->id);
                reply_int(c, na->delivery_time);
                reply_int(c, (long long)na->delivery_count);
            }
        }
    }
}

static void xinfoCommand(client *c) {
    if (arg_is(&c->argv[1], "help")) {
        if (c->argc != 2) {
            admin_reply_subcommand_syntax(c, "XINFO");
            return;
        }
        static const char *const help[] = {"CONSUMERS <key> <groupname>",
                                           "    Show consumers of <groupname>.",
                                           "GROUPS <key>",
                                           "    Show the stream consumer groups.",
                                           "STREAM <key> [FULL [COUNT <count>]",
                                           "    Show information about the stream.",
                                           NULL};
        admin_reply_help(c, "XINFO", help);
        return;
    }
    if (c->argc < 3) {
        admin_reply_subcommand_syntax(c, "XINFO");
        return;
    }
    const garg *opt = &c->argv[1], *key = &c->argv[2];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, cmd_db(c), key, OBJ_STREAM, &wrong);
    if (wrong) return;
    if (!e) {
        reply_error(c, "ERR no such key");
        return;
    }
    gstream *s = xs_of(e);
    if (arg_is(opt, "consumers") && c->argc == 4) {
        stream_group *g = stream_group_find(s, c->argv[3].p, c->argv[3].n);
        if (!g) {
            reply_nogroup_for_key(c, &c->argv[3], key);
            return;
        }
        reply_array(c, (long)g->ncons);
        int64_t now = db_now_ms();
        for (size_t i = 0; i < g->ncons; i++) {
            stream_consumer *cons = g->cons[i];
            int64_t idle = now - cons->seen_time;
            reply_map(c, 3);
            reply_bulk_cstr(c, "name");
            reply_bulk(c, cons->name, cons->nlen);
            reply_bulk_cstr(c, "pending");
            reply_int(c, (long long)cons->pel.n);
            reply_bulk_cstr(c, "idle");
            reply_int(c, idle < 0 ? 0 : idle);
        }
    } else if (arg_is(opt, "groups") && c->argc == 3) {
        reply_array(c, (long)s->ngroups);
        for (size_t i = 0; i < s->ngroups; i++) {
            stream_group *g = s->groups[i];
            reply_map(c, 6);
            reply_bulk_cstr(c, "name");
            reply_bulk(c, g->name, g->nlen);
            reply_bulk_cstr(c, "consumers");
            reply_int(c, (long long)g->ncons);
            reply_bulk_cstr(c, "pending");
            reply_int(c, (long long)g->pel.n);
            reply_bulk_cstr(c, "last-delivered-id");
            xs_reply_id(c, &g->last_id);
            reply_bulk_cstr(c, "entries-read");
            reply_entries_read(c, g);
            reply_bulk_cstr(c, "lag");
            reply_lag(c, s, g);
        }
    } else if (arg_is(opt, "stream")) {
        xinfo_stream(c, s);
    } else {
        admin_reply_subcommand_syntax(c, "XINFO");
    }
}

const cmd_handler stream_cg_handlers[] = {
    {"xgroup|create", xgroupCommand, CMD_LOCK_KEYS},
    {"xgroup|setid", xgroupCommand, CMD_LOCK_KEYS},
    {"xgroup|destroy", xgroupCommand, CMD_LOCK_KEYS},
    {"xgroup|createconsumer", xgroupCommand, CMD_LOCK_KEYS},
    {"xgroup|delconsumer", xgroupCommand, CMD_LOCK_KEYS},
    {"xgroup|help", xgroupCommand, CMD_LOCK_NONE},
    {"xack", xackCommand, CMD_LOCK_KEYS},
    {"xpending", xpendingCommand, CMD_LOCK_KEYS},
    {"xclaim", xclaimCommand, CMD_LOCK_KEYS},
    {"xautoclaim", xautoclaimCommand, CMD_LOCK_KEYS},
    {"xinfo|stream", xinfoCommand, CMD_LOCK_KEYS},
    {"xinfo|groups", xinfoCommand, CMD_LOCK_KEYS},
    {"xinfo|consumers", xinfoCommand, CMD_LOCK_KEYS},
    {"xinfo|help", xinfoCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
