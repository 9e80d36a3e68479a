/* t_stream.c -- the stream commands on entries: XADD, XLEN, XRANGE,
 * XREVRANGE, XDEL, XTRIM, XSETID and XREAD / XREADGROUP (with BLOCK), with
 * Redis 7.0's replies, errors, notifications and propagation.
 *
 * The entries live in ds/stream (packed runs in the stream's arena); this
 * file reads stream-node-max-bytes / -entries on every append, so CONFIG
 * SET applies to the next XADD. Every command follows the family recipe:
 * parse, look up (or create) the key, check the type, do the work, reply,
 * signal the change. A stream key may be empty (XADD with MAXLEN 0, XDEL
 * of every entry): it stays until deleted, as in Redis.
 *
 * Propagation is Redis's: XADD with an automatic ID (or "ms-*") goes out
 * with the ID it generated, "~" trimming (XADD, XTRIM) as "=" with the
 * threshold the approximate trim reached (the length, or the first ID
 * left), so replicas and the AOF end with the same entries; XREADGROUP
 * puts nothing of its own on the stream but one XCLAIM per delivered entry
 * (or XGROUP SETID under NOACK) and XGROUP CREATECONSUMER when needed.
 *
 * Blocking. XREAD / XREADGROUP BLOCK that cannot serve park with
 * block_on_keys (cmd/blocking.c) in "pass on" mode: a signalled key gives
 * every waiter a turn in FIFO order (a waiter whose IDs are not reached
 * yet stays and the next one is tried), as Redis serves all the stream
 * waiters of a key. The re-run is the command itself, with "$" replaced
 * by the last ID seen when it blocked and COUNT defaulting to 1000 as in
 * Redis's blocked serve. Deleting (or overwriting) the key signals it too:
 * a re-run XREADGROUP then answers "-UNBLOCKED the stream key no longer
 * exists", and one whose group went "-NOGROUP the consumer group this
 * client was blocked on no longer exists"; XREAD keeps waiting. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "cmd/blocking.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/propagate.h"
#include "cmd/types/t_stream.h"
#include "cmd/types/tcommon.h"
#include "session/reply.h"
#include "util/strutil.h"

TC_VALUE_TYPE(stream, OBJ_STREAM, stream_free, stream_dup, stream_mem_bytes, stream_len)

/* ---- shared helpers ---- */

static int parse_u64(const char *p, size_t n, uint64_t *v) {
    unsigned long long u;
    if (!str_to_ull(p, n, &u)) return 0;
    *v = u;
    return 1;
}

static int parse_id_core(const garg *a, stream_id *id, uint64_t missing_seq, int strict, int *seq_given) {
    if (a->n > 127) return -1;
    if (seq_given) *seq_given = 1;
    if (a->n == 1 && (a->p[0] == '-' || a->p[0] == '+')) {
        if (strict) return -1;
        if (a->p[0] == '-') id->ms = id->seq = 0;
        else id->ms = id->seq = UINT64_MAX;
        return 0;
    }
    const char *dash = memchr(a->p, '-', a->n);
    size_t msn = dash ? (size_t)(dash - a->p) : a->n;
    if (!parse_u64(a->p, msn, &id->ms)) return -1;
    if (dash) {
        const char *s = dash + 1;
        size_t sn = a->n - msn - 1;
        if (seq_given && sn == 1 && s[0] == '*') {
            id->seq = 0;
            *seq_given = 0;
        } else if (!parse_u64(s, sn, &id->seq)) {
            return -1;
        }
    } else {
        id->seq = missing_seq;
    }
    return 0;
}

int xs_parse_id(client *c, const garg *a, stream_id *id, uint64_t missing_seq, int strict, int *seq_given) {
    if (parse_id_core(a, id, missing_seq, strict, seq_given) != 0) {
        reply_error(c, "ERR Invalid stream ID specified as stream command argument");
        return -1;
    }
    return 0;
}

int xs_parse_id_quiet(const garg *a, stream_id *id, int strict) { return parse_id_core(a, id, 0, strict, NULL); }

size_t xs_id_fmt(char *buf, const stream_id *id) {
    return (size_t)snprintf(buf, 48, "%llu-%llu", (unsigned long long)id->ms, (unsigned long long)id->seq);
}

void xs_reply_id(client *c, const stream_id *id) {
    char buf[48];
    size_t n = xs_id_fmt(buf, id);
    reply_bulk(c, buf, n);
}

void xs_reply_entry_fields(client *c, stream_iter *it, size_t nfields) {
    reply_array(c, (long)(nfields * 2));
    for (size_t i = 0; i < nfields; i++) {
        stream_str f, v;
        stream_iter_field(it, &f, &v);
        reply_bulk(c, f.p, f.n);
        reply_bulk(c, v.p, v.n);
    }
}

void xs_dirty(uint64_t n) {
    db_dirty_add(n);
    prop_count_change();
}

int xs_must_obey(const client *c) { return (client_flags_peek(c) & (CLIENT_PRIMARY | CLIENT_AOF_LOADER)) != 0; }

void xs_reply_nogroup(client *c, const garg *key, const garg *group, const char *tail) {
    reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s'%s", (int)key->n, key->p, (int)group->n,
                 group->p, tail);
}

stream_consumer *xs_consumer_lookup(stream_group *g, const garg *name, int refresh) {
    stream_consumer *cons = stream_consumer_find(g, name->p, name->n);
    if (cons && refresh) cons->seen_time = db_now_ms();
    return cons;
}

stream_consumer *xs_consumer_create(client *c, gdb *db, const garg *key, stream_group *g, const garg *name) {
    stream_consumer *cons = stream_consumer_create(g, name->p, name->n, db_now_ms());
    if (!cons) return NULL;
    xs_dirty(1);
    cmd_notify(c, NOTIFY_STREAM, "xgroup-createconsumer", db, key->p, key->n);
    return cons;
}

static void prop_record(client *c, int argc, const char *const *p, const size_t *n) {
    prop_also(c->db, argc, p, n);
}

void xs_prop_xclaim(client *c, const garg *key, const garg *groupname, stream_group *g, const stream_nack *na) {
    char id[48], t[24], cnt[24], last[48];
    size_t idn = xs_id_fmt(id, &na->id), lastn = xs_id_fmt(last, &g->last_id);
    size_t tn = (size_t)snprintf(t, sizeof(t), "%lld", (long long)na->delivery_time);
    size_t cn = (size_t)snprintf(cnt, sizeof(cnt), "%llu", (unsigned long long)na->delivery_count);
    const char *p[14] = {"XCLAIM", key->p, groupname->p, na->consumer->name, "0", id, "TIME", t,
                         "RETRYCOUNT", cnt, "FORCE", "JUSTID", "LASTID", last};
    size_t n[14] = {6, key->n, groupname->n, na->consumer->nlen, 1, idn, 4, tn, 10, cn, 5, 6, 6, lastn};
    prop_record(c, 14, p, n);
}

void xs_prop_setid(client *c, const garg *key, const garg *groupname, stream_group *g) {
    char id[48], er[24];
    size_t idn = xs_id_fmt(id, &g->last_id);
    size_t ern = (size_t)snprintf(er, sizeof(er), "%lld", g->entries_read);
    const char *p[7] = {"XGROUP", "SETID", key->p, groupname->p, id, "ENTRIESREAD", er};
    size_t n[7] = {6, 5, key->n, groupname->n, idn, 11, ern};
    prop_record(c, 7, p, n);
}

void xs_prop_createconsumer(client *c, const garg *key, const garg *groupname, const stream_consumer *cons) {
    const char *p[5] = {"XGROUP", "CREATECONSUMER", key->p, groupname->p, cons->name};
    size_t n[5] = {6, 14, key->n, groupname->n, cons->nlen};
    prop_record(c, 5, p, n);
}

/* The consumer's own pending entries in [start, end] (Redis's
 * streamReplyWithRangeFromConsumerPEL): entries since deleted reply a
 * null body; delivered ones count one more delivery. */
static size_t reply_consumer_pel(client *c, gstream *s, const stream_id *start, const stream_id *end, size_t count,
                                 stream_consumer *cons) {
    size_t h = reply_defer(c), n = 0;
    int64_t now = db_now_ms();
    for (size_t i = stream_pel_lower(&cons->pel, start); i < cons->pel.n && (!count || n < count); i++) {
        stream_nack *na = cons->pel.v[i];
        if (end && stream_id_cmp(&na->id, end) > 0) break;
        stream_iter it;
        stream_iter_init(&it, s, &na->id, &na->id, 0);
        stream_id id;
        size_t nf;
        reply_array(c, 2);
        xs_reply_id(c, &na->id);
        if (stream_iter_next(&it, &id, &nf)) {
            xs_reply_entry_fields(c, &it, nf);
            na->delivery_time = now;
            na->delivery_count++;
        } else {
            reply_null_array(c);
        }
        stream_iter_done(&it);
        n++;
    }
    reply_defer_array(c, h, (long)n);
    return n;
}

size_t xs_reply_range(client *c, gstream *s, const stream_id *start, const stream_id *end, size_t count, int rev,
                      stream_group *g, stream_consumer *cons, int flags, const garg *key, const garg *groupname) {
    if (g && (flags & XS_HISTORY)) return reply_consumer_pel(c, s, start, end, count, cons);
    int noack = flags & XS_NOACK, propagate_last = 0;
    size_t h = reply_defer(c), n = 0;
    int64_t now = db_now_ms();
    stream_iter it;
    stream_iter_init(&it, s, start, end, rev);
    stream_id id;
    size_t nf;
    while (stream_iter_next(&it, &id, &nf)) {
        if (g && stream_id_cmp(&id, &g->last_id) > 0) {
            if (g->entries_read != STREAM_ENTRIES_READ_INVALID && !stream_range_has_tombstones(s, &id, NULL))
                g->entries_read++;
            else if (s->entries_added)
                g->entries_read = stream_estimate_distance(s, &id);
            g->last_id = id;
            if (noack) propagate_last = 1;
        }
        reply_array(c, 2);
        xs_reply_id(c, &id);
        xs_reply_entry_fields(c, &it, nf);
        if (g && !noack) {
            stream_nack *na = stream_pel_find(&g->pel, &id);
            if (na) {
                stream_nack_move(na, cons);
                na->delivery_time = now;
                na->delivery_count = 1;
            } else if (!(na = stream_nack_add(g, cons, &id, now))) {
                abort(); /* out of memory */
            }
            if (key) xs_prop_xclaim(c, key, groupname, g, na);
        }
        n++;
        if (count && n == count) break;
    }
    stream_iter_done(&it);
    if (key && propagate_last) xs_prop_setid(c, key, groupname, g);
    reply_defer_array(c, h, (long)n);
    return n;
}

/* ---- XADD / XTRIM arguments ---- */

typedef struct trim_args {
    stream_trim_args t;
    int arg_idx;        /* index of the threshold argument */
    int id_given, seq_given, no_mkstream;
    stream_id id;
} trim_args;

static stream_limits cfg_limits(void) {
    stream_limits l = {tc_cfg_size(cfg.stream_node_max_bytes), cfg.stream_node_max_entries};
    return l;
}

/* Redis's streamParseAddOrTrimArgsOrReply: the index of the ID (XADD) or
 * past the options; -1 after replying. */
static int parse_add_trim(client *c, trim_args *a, int xadd) {
    memset(a, 0, sizeof(*a));
    int i = 2, limit_given = 0;
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        const garg *o = &c->argv[i];
        if (xadd && o->n == 1 && o->p[0] == '*') break;
        int maxlen = arg_is(o, "maxlen"), minid = arg_is(o, "minid");
        if ((maxlen || minid) && more) {
            if (a->t.strategy != STREAM_TRIM_NONE) {
                reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->t.approx = 0;
            const garg *next = &c->argv[i + 1];
            if (more >= 2 && next->n == 1 && next->p[0] == '~') {
                a->t.approx = 1;
                i++;
            } else if (more >= 2 && next->n == 1 && next->p[0] == '=') {
                i++;
            }
            if (maxlen) {
                long long v;
                if (arg_ll(c, &c->argv[i + 1], &v) != 0) return -1;
                if (v < 0) {
                    reply_error(c, "ERR The MAXLEN argument must be >= 0.");
                    return -1;
                }
                a->t.maxlen = (uint64_t)v;
                a->t.strategy = STREAM_TRIM_MAXLEN;
            } else {
                if (xs_parse_id(c, &c->argv[i + 1], &a->t.minid, 0, 1, NULL) != 0) return -1;
                a->t.strategy = STREAM_TRIM_MINID;
            }
            i++;
            a->arg_idx = i;
        } else if (arg_is(o, "limit") && more) {
            if (arg_ll(c, &c->argv[i + 1], &a->t.limit) != 0) return -1;
            if (a->t.limit < 0) {
                reply_error(c, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = 1;
            i++;
        } else if (xadd && arg_is(o, "nomkstream")) {
            a->no_mkstream = 1;
        } else if (xadd) {
            if (xs_parse_id(c, o, &a->id, 0, 1, &a->seq_given) != 0) return -1;
            a->id_given = 1;
            break;
        } else {
            reply_err_syntax(c);
            return -1;
        }
    }
    if (a->t.limit && a->t.strategy == STREAM_TRIM_NONE) {
        reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && a->t.strategy == STREAM_TRIM_NONE) {
        reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (xs_must_obey(c)) {
        a->t.limit = 0;
    } else if (limit_given) {
        if (!a->t.approx) {
            reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (a->t.approx) {
        long long lim = 100 * cfg.stream_node_max_entries;
        if (cfg.stream_node_max_entries > LLONG_MAX / 100 || lim <= 0) lim = 10000;
        if (lim > 1000000) lim = 1000000;
        a->t.limit = lim;
    } else {
        a->t.limit = 0;
    }
    return i;
}

/* Propagate an approximate trim as the exact one it did. */
static void rewrite_trim(client *c, gstream *s, const trim_args *a) {
    prop_rewrite_arg(c, a->arg_idx - 1, "=", 1);
    if (a->t.strategy == STREAM_TRIM_MAXLEN) {
        prop_rewrite_arg_ll(c, a->arg_idx, (long long)s->length);
    } else {
        stream_id first = {UINT64_MAX, UINT64_MAX};
        if (s->nruns) first = s->runs[0].first; /* the first entry, deleted or not */
        char buf[48];
        size_t n = xs_id_fmt(buf, &first);
        prop_rewrite_arg(c, a->arg_idx, buf, n);
    }
}

/* ---- XADD ---- */

static void xaddCommand(client *c) {
    trim_args a;
    int idpos = parse_add_trim(c, &a, 1);
    if (idpos < 0) return;
    int fpos = idpos + 1;
    if (c->argc - fpos < 2 || (c->argc - fpos) % 2 == 1) {
        reply_err_arity(c);
        return;
    }
    if (a.id_given && a.seq_given && a.id.ms == 0 && a.id.seq == 0) {
        reply_error(c, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_STREAM, &wrong);
    if (wrong) return;
    int created = 0;
    if (!e) {
        if (a.no_mkstream) {
            reply_null(c);
            return;
        }
        if (!(e = tc_add_key(c, db, key, OBJ_STREAM, ENC_STREAM, stream_new()))) return;
        created = 1;
    }
    gstream *s = xs_of(e);
    if (s->last_id.ms == UINT64_MAX && s->last_id.seq == UINT64_MAX) {
        reply_error(c, "ERR The stream has exhausted the last possible ID, unable to add more items");
        goto undo;
    }
    stream_id id;
    if (a.id_given) {
        if (a.seq_given) {
            id = a.id;
        } else if (s->last_id.ms == a.id.ms) {
            if (s->last_id.seq == UINT64_MAX) goto smaller;
            id = s->last_id;
            id.seq++;
        } else {
            id = a.id;
        }
    } else {
        uint64_t ms = (uint64_t)db_now_ms();
        if (ms > s->last_id.ms) {
            id.ms = ms;
            id.seq = 0;
        } else {
            id = s->last_id;
            if (stream_id_incr(&id) != 0) goto smaller;
        }
    }
    if (stream_id_cmp(&id, &s->last_id) <= 0) goto smaller;
    size_t nf = (size_t)(c->argc - fpos) / 2;
    size_t tot = 0;
    for (int i = fpos; i < c->argc; i++) tot += c->argv[i].n;
    if (tot > ((size_t)1 << 30)) {
        reply_error(c, "ERR Elements are too large to be stored");
        goto undo;
    }
    stream_str *fv = malloc(sizeof(*fv) * nf * 2);
    if (!fv) {
        tc_reply_oom(c);
        goto undo;
    }
    for (size_t i = 0; i < nf * 2; i++) {
        fv[i].p = c->argv[fpos + (int)i].p;
        fv[i].n = c->argv[fpos + (int)i].n;
    }
    stream_limits lim = cfg_limits();
    int rc = stream_append(s, &id, fv, nf, &lim);
    free(fv);
    if (rc != STREAM_OK) {
        tc_reply_write_error(c, rc == STREAM_EFULL, "stream");
        goto undo;
    }
    char buf[48];
    size_t idn = xs_id_fmt(buf, &id);
    reply_bulk(c, buf, idn);
    cmd_key_modified(c, db, key->p, key->n);
    cmd_notify(c, NOTIFY_STREAM, "xadd", db, key->p, key->n);
    if (a.t.strategy != STREAM_TRIM_NONE) {
        if (stream_trim(s, &a.t)) cmd_notify(c, NOTIFY_STREAM, "xtrim", db, key->p, key->n);
        if (a.t.approx) rewrite_trim(c, s, &a);
    }
    if (!a.id_given || !a.seq_given) prop_rewrite_arg(c, idpos, buf, idn);
    block_signal_key(db, key->p, key->n);
    return;
smaller:
    reply_error(c, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
undo:
    if (created) db_delete_entry(db, e);
}

/* ---- reads ---- */

static void xlenCommand(client *c) { tc_reply_len(c, OBJ_STREAM); }

/* An interval bound: "(" makes it exclusive. */
static int parse_interval(client *c, const garg *a, stream_id *id, int *excl, uint64_t missing_seq) {
    *excl = a->n > 1 && a->p[0] == '(';
    if (*excl) {
        garg t = {a->p + 1, a->n - 1};
        return xs_parse_id(c, &t, id, missing_seq, 1, NULL);
    }
    return xs_parse_id(c, a, id, missing_seq, 0, NULL);
}

static void range_generic(client *c, int rev) {
    const garg *sa = rev ? &c->argv[3] : &c->argv[2], *ea = rev ? &c->argv[2] : &c->argv[3];
    stream_id start, end;
    int sx, ex;
    long long count = -1;
    if (parse_interval(c, sa, &start, &sx, 0) != 0) return;
    if (sx && stream_id_incr(&start) != 0) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    if (parse_interval(c, ea, &end, &ex, UINT64_MAX) != 0) return;
    if (ex && stream_id_decr(&end) != 0) {
        reply_error(c, "ERR invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            if (arg_ll(c, &c->argv[++j], &count) != 0) return;
            if (count < 0) count = 0;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    dbentry *e = tc_lookup_or_reply(c, cmd_db(c), &c->argv[1], OBJ_STREAM, tc_reply_empty_array);
    if (!e) return;
    if (count == 0) {
        reply_null_array(c);
        return;
    }
    xs_reply_range(c, xs_of(e), &start, &end, count < 0 ? 0 : (size_t)count, rev, NULL, NULL, 0, NULL, NULL);
}

static void xrangeCommand(client *c) { range_generic(c, 0); }
static void xrevrangeCommand(client *c) { range_generic(c, 1); }

/* ---- XDEL / XTRIM / XSETID ---- */

static void xdelCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_STREAM, tc_reply_zero);
    if (!e) return;
    gstream *s = xs_of(e);
    int nids = c->argc - 2;
    stream_id *ids = malloc(sizeof(*ids) * (size_t)nids);
    if (!ids) {
        tc_reply_oom(c);
        return;
    }
    for (int j = 0; j < nids; j++)
        if (xs_parse_id(c, &c->argv[j + 2], &ids[j], 0, 1, NULL) != 0) {
            free(ids);
            return;
        }
    long long deleted = 0;
    for (int j = 0; j < nids; j++) {
        if (stream_delete(s, &ids[j])) {
            if (stream_id_cmp(&ids[j], &s->max_deleted_id) > 0) s->max_deleted_id = ids[j];
            deleted++;
        }
    }
    free(ids);
    if (deleted) {
        cmd_key_modified(c, db, key->p, key->n);
        cmd_notify(c, NOTIFY_STREAM, "xdel", db, key->p, key->n);
        db_dirty_add((uint64_t)deleted - 1);
    }
    reply_int(c, deleted);
}

static void xtrimCommand(client *c) {
    trim_args a;
    if (parse_add_trim(c, &a, 0) < 0) return;
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e = tc_lookup_or_reply(c, db, key, OBJ_STREAM, tc_reply_zero);
    if (!e) return;
    gstream *s = xs_of(e);
    int64_t deleted = stream_trim(s, &a.t);
    if (deleted) {
        cmd_notify(c, NOTIFY_STREAM, "xtrim", db, key->p, key->n);
        if (a.t.approx) rewrite_trim(c, s, &a);
        cmd_key_modified(c, db, key->p, key->n);
        db_dirty_add((uint64_t)deleted - 1);
    }
    reply_int(c, deleted);
}

static void xsetidCommand(client *c) {
    stream_id id, maxdel = {0, 0};
    long long added = -1;
    if (xs_parse_id(c, &c->argv[2], &id, 0, 1, NULL) != 0) return;
    for (int i = 3; i < c->argc;) {
        int more = c->argc - 1 - i;
        if (arg_is(&c->argv[i], "entriesadded") && more) {
            if (arg_ll(c, &c->argv[i + 1], &added) != 0) return;
            if (added < 0) {
                reply_error(c, "ERR entries_added must be positive");
                return;
            }
            i += 2;
        } else if (arg_is(&c->argv[i], "maxdeletedid") && more) {
            if (xs_parse_id(c, &c->argv[i + 1], &maxdel, 0, 1, NULL) != 0) return;
            if (stream_id_cmp(&id, &maxdel) < 0) {
                reply_error(c, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
            i += 2;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    int wrong;
    dbentry *e = cmd_lookup_typed(c, db, key, OBJ_STREAM, &wrong);
    if (wrong) return;
    if (!e) {
        reply_error(c, "ERR no such key");
        return;
    }
    gstream *s = xs_of(e);
    if (s->length > 0) {
        stream_id maxid;
        stream_edge_id(s, 0, &maxid);
        if (stream_id_cmp(&id, &maxid) < 0) {
            reply_error(c, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (added != -1 && s->length > (uint64_t)added) {
            reply_error(c, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    s->last_id = id;
    if (added != -1) s->entries_added = (uint64_t)added;
    if (maxdel.ms || maxdel.seq) s->max_deleted_id = maxdel;
    reply_ok(c);
    xs_dirty(1);
    cmd_notify(c, NOTIFY_STREAM, "xsetid", db, key->p, key->n);
}

/* ---- XREAD / XREADGROUP ---- */

#define XREAD_BLOCKED_DEFAULT_COUNT 1000

/* BLOCK milliseconds: Redis's getTimeoutFromObjectOrReply in ms. */
static int parse_block_ms(client *c, const garg *a, int64_t *deadline) {
    long long t;
    if (!str_to_ll(a->p, a->n, &t)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return -1;
    }
    if (t < 0) {
        reply_error(c, "ERR timeout is negative");
        return -1;
    }
    int64_t now = db_now_ms();
    if (t > 0 && t > INT64_MAX - now) {
        reply_error(c, "ERR timeout is out of range");
        return -1;
    }
    *deadline = t > 0 ? now + t : 0;
    return 0;
}

static void xread_generic(client *c, int group_form) {
    int64_t deadline = 0;
    int block = 0, noack = 0, streams_arg = 0, nstreams = 0;
    long long count = 0;
    const garg *groupname = NULL, *consname = NULL;
    int retry = block_retrying(c);
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        const garg *o = &c->argv[i];
        if (arg_is(o, "block") && more) {
            if (client_flags_peek(c) & CLIENT_SCRIPT) {
                reply_errorf(c, "ERR %.*s command is not allowed with BLOCK option from scripts", (int)c->argv[0].n,
                             c->argv[0].p);
                return;
            }
            i++;
            if (parse_block_ms(c, &c->argv[i], &deadline) != 0) return;
            block = 1;
        } else if (arg_is(o, "count") && more) {
            if (arg_ll(c, &c->argv[++i], &count) != 0) return;
            if (count < 0) count = 0;
        } else if (arg_is(o, "streams") && more) {
            streams_arg = i + 1;
            nstreams = c->argc - streams_arg;
            if (nstreams % 2) {
                reply_error(c, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
                               "specified.");
                return;
            }
            nstreams /= 2;
            break;
        } else if (arg_is(o, "group") && more >= 2) {
            if (!group_form) {
                reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return;
            }
            groupname = &c->argv[i + 1];
            consname = &c->argv[i + 2];
            i += 2;
        } else if (arg_is(o, "noack")) {
            if (!group_form) {
                reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return;
            }
            noack = 1;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (!streams_arg) {
        reply_err_syntax(c);
        return;
    }
    if (group_form && !groupname) {
        reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return;
    }
    prop_none(c);
    gdb *db = cmd_db(c);
    stream_id *ids = malloc(sizeof(*ids) * (size_t)nstreams);
    stream_group **groups = groupname ? calloc((size_t)nstreams, sizeof(*groups)) : NULL;
    if (!ids || (groupname && !groups)) {
        free(ids);
        free(groups);
        tc_reply_oom(c);
        return;
    }
    for (int k = 0; k < nstreams; k++) {
        const garg *key = &c->argv[streams_arg + k], *ida = &c->argv[streams_arg + nstreams + k];
        dbentry *e = db_lookup_read(db, key->p, key->n);
        if (e && e->val.type != OBJ_STREAM) {
            if (retry && !groupname) { /* Redis serves waiters from streams only */
                e = NULL;
            } else if (retry) {
                reply_error(c, "UNBLOCKED the stream key no longer exists");
                goto done;
            } else {
                reply_err_wrongtype(c);
                goto done;
            }
        }
        if (groupname) {
            stream_group *g = e ? stream_group_find(xs_of(e), groupname->p, groupname->n) : NULL;
            if (!g) {
                if (retry && !e) reply_error(c, "UNBLOCKED the stream key no longer exists");
                else if (retry) reply_error(c, "NOGROUP the consumer group this client was blocked on no longer exists");
                else xs_reply_nogroup(c, key, groupname, " in XREADGROUP with GROUP option");
                goto done;
            }
            groups[k] = g;
        }
        if (ida->n == 1 && ida->p[0] == '$') {
            if (group_form) {
                reply_error(c, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
                               "history of this consumer by specifying a proper ID, or use the > ID to get new "
                               "messages. The $ ID would just return an empty result set.");
                goto done;
            }
            if (e) ids[k] = xs_of(e)->last_id;
            else ids[k].ms = ids[k].seq = 0;
            continue;
        }
        if (ida->n == 1 && ida->p[0] == '>') {
            if (!group_form) {
                reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                               "<group> <consumer> option.");
                goto done;
            }
            ids[k].ms = ids[k].seq = UINT64_MAX;
            continue;
        }
        if (xs_parse_id(c, ida, &ids[k], 0, 1, NULL) != 0) goto done;
    }
    if (retry && !count) count = XREAD_BLOCKED_DEFAULT_COUNT;
    size_t served = 0, h = 0;
    for (int k = 0; k < nstreams; k++) {
        const garg *key = &c->argv[streams_arg + k];
        dbentry *e = db_lookup_raw(db, key->p, key->n);
        if (!e || e->val.type != OBJ_STREAM) continue;
        gstream *s = xs_of(e);
        stream_id *gt = &ids[k];
        int now = 0, history = 0;
        if (groups) {
            if (gt->ms != UINT64_MAX || gt->seq != UINT64_MAX) {
                now = history = 1;
            } else if (s->length) {
                stream_id maxid;
                stream_edge_id(s, 0, &maxid);
                now = stream_id_cmp(&maxid, &groups[k]->last_id) > 0;
            }
        } else if (s->length) {
            stream_id maxid;
            stream_edge_id(s, 0, &maxid);
            now = stream_id_cmp(&maxid, gt) > 0;
        }
        if (!now) continue;
        if (served++ == 0) h = reply_defer(c);
        stream_id start = groups && !history ? groups[k]->last_id : *gt;
        stream_id_incr(&start);
        if (c->resp == 2) reply_array(c, 2);
        reply_bulk(c, key->p, key->n);
        stream_consumer *cons = NULL;
        if (groups) {
            cons = xs_consumer_lookup(groups[k], consname, 1);
            if (!cons) {
                cons = xs_consumer_create(c, db, key, groups[k], consname);
                if (!cons) abort();
                if (noack) xs_prop_createconsumer(c, key, groupname, cons);
            }
        }
        xs_reply_range(c, s, &start, NULL, (size_t)count, 0, groups ? groups[k] : NULL, cons,
                       (noack ? XS_NOACK : 0) | (history ? XS_HISTORY : 0), key, groupname);
        if (groups) xs_dirty(1);
    }
    if (served) {
        if (c->resp == 2) reply_defer_array(c, h, (long)served);
        else reply_defer_map(c, h, (long)served);
        goto done;
    }
    if (block) {
        if (!block_allowed(c)) {
            reply_null_array(c);
            goto done;
        }
        int was_retry = retry;
        block_on_keys(c, &c->argv[streams_arg], nstreams, deadline);
        if (!was_retry) {
            block_pass_on(c);
            /* "$" waits for what comes after the last ID seen now */
            for (int k = 0; k < nstreams; k++) {
                const garg *ida = &c->argv[streams_arg + nstreams + k];
                if (ida->n == 1 && ida->p[0] == '$') {
                    char buf[48];
                    size_t n = xs_id_fmt(buf, &ids[k]);
                    block_set_arg(c, streams_arg + nstreams + k, buf, n);
                }
            }
        }
        goto done;
    }
    reply_null_array(c);
done:
    free(ids);
    free(groups);
}

static void xreadCommand(client *c) { xread_generic(c, 0); }
static void xreadgroupCommand(client *c) { xread_generic(c, 1); }

const cmd_handler stream_handlers[] = {
    {"xadd", xaddCommand, CMD_LOCK_KEYS},
    {"xlen", xlenCommand, CMD_LOCK_KEYS},
    {"xrange", xrangeCommand, CMD_LOCK_KEYS},
    {"xrevrange", xrevrangeCommand, CMD_LOCK_KEYS},
    {"xdel", xdelCommand, CMD_LOCK_KEYS},
    {"xtrim", xtrimCommand, CMD_LOCK_KEYS},
    {"xsetid", xsetidCommand, CMD_LOCK_KEYS},
    {"xread", xreadCommand, CMD_LOCK_KEYS},
    {"xreadgroup", xreadgroupCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
