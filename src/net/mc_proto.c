/* mc_proto.c -- the memcache text and meta protocols as a protocol module
 * (proto.h), answering as memcached 1.6.18 does.
 *
 * A request is a line (ended by "\n", an "\r" before it dropped) of
 * space-separated tokens; storage commands (set/add/replace/append/
 * prepend/cas, ms) are followed by <bytes> of data and "\r\n". The parser
 * works in place on the query buffer: it consumes a request only once the
 * whole of it (line and data) is there, so a client that goes away in the
 * middle of a value leaves nothing behind. Data over the item size limit
 * is swallowed as it arrives (never buffered) and answered with
 * "SERVER_ERROR object too large for cache". Each request becomes an
 * mc_req and an argv (argv[0] a Redis command of its class that takes
 * any number of keys -- mget for reads, getex for writes, del, flushdb --
 * so CLIENT PAUSE WRITE holds memcache writes as RESP ones; argv[1..] the
 * keys) run by cmd/mcache (mc_run). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/process.h"
#include "cmd/mcache/mcache.h"
#include "net/internal.h"
#include "net/proto.h"
#include "session/reply.h"

#define MC_KEY_MAX 250
#define MC_LINE_MAX 16384
#define MC_TOKENS_MAX (1 << 24)
/* memcached's item header, CAS and "\r\n": what an item needs beside its
 * key and value (its -I limit counts them). */
#define MC_ITEM_OVERHEAD 59

typedef struct mcp {
    size_t swallow;  /* data bytes still to discard */
    size_t need;     /* bytes the request being read needs (hint) */
} mcp;

static const char *mc_refusal(int why) {
    if (why == NET_REFUSE_MAXCLIENTS) return "SERVER_ERROR too many open connections\r\n";
    return "SERVER_ERROR protected mode is on (no password is set): only loopback clients are accepted\r\n";
}

static int mc_open(conn *k) {
    mcp *p = calloc(1, sizeof(*p));
    if (!p) return -1;
    k->pstate = p;
    mc_stat_add(MCS_CURR_CONN, 1);
    mc_stat_add(MCS_TOTAL_CONN, 1);
    return 0;
}

static void mc_close(conn *k) {
    if (!k->pstate) return;
    free(k->pstate);
    k->pstate = NULL;
    mc_stat_add(MCS_CURR_CONN, -1);
}

static size_t mc_hint(const conn *k) {
    const mcp *p = k->pstate;
    return p ? p->need : 0;
}

#define OUT(c, lit) reply_raw((c), lit, sizeof(lit) - 1)

typedef struct tok {
    const char *p;
    size_t n;
} tok;

static int tok_is(const tok *t, const char *s) { return t->n == strlen(s) && memcmp(t->p, s, t->n) == 0; }

/* memcached's safe_strto* on a token: the whole token a number. */
static int tok_ull(const tok *t, unsigned long long *v) {
    char b[32];
    if (!t->n || t->n >= sizeof(b)) return -1;
    memcpy(b, t->p, t->n);
    b[t->n] = '\0';
    char *end;
    errno = 0;
    unsigned long long x = strtoull(b, &end, 10);
    if (errno || *end || end == b) return -1;
    if (strchr(b, '-') && (long long)x < 0) return -1;
    *v = x;
    return 0;
}

static int tok_ll(const tok *t, long long *v) {
    char b[32];
    if (!t->n || t->n >= sizeof(b)) return -1;
    memcpy(b, t->p, t->n);
    b[t->n] = '\0';
    char *end;
    errno = 0;
    long long x = strtoll(b, &end, 10);
    if (errno || *end || end == b) return -1;
    *v = x;
    return 0;
}

static int tok_u32(const tok *t, uint32_t *v) {
    unsigned long long x;
    if (tok_ull(t, &x) != 0 || x > UINT32_MAX) return -1;
    *v = (uint32_t)x;
    return 0;
}

/* Run r with argv {name, keys...} on k. 0 ran; -1 CLIENT PAUSE holds it
 * (nothing consumed). */
static int run(conn *k, mc_req *r, const char *name, const tok *keys, int nkeys, const tok *extra) {
    client *c = &k->c;
    garg stackv[8];
    int argc = 1 + nkeys + (extra ? 1 : 0);
    garg *argv = argc <= 8 ? stackv : malloc(sizeof(garg) * (size_t)argc);
    if (!argv) {
        OUT(c, "SERVER_ERROR out of memory\r\n");
        return 0;
    }
    argv[0] = (garg){(char *)name, strlen(name)};
    for (int i = 0; i < nkeys; i++) argv[1 + i] = (garg){(char *)keys[i].p, keys[i].n};
    if (extra) argv[argc - 1] = (garg){(char *)extra->p, extra->n};
    if (!conn_may_run(k, argc, argv)) {
        if (argv != stackv) free(argv);
        return -1;
    }
    size_t before = c->olen;
    c->argc = argc;
    c->argv = argv;
    mc_run(c, r);
    c->argc = 0;
    c->argv = NULL;
    if (c->olen > before) mc_stat_add(MCS_BYTES_WRITTEN, (int64_t)(c->olen - before));
    if (argv != stackv) free(argv);
    conn_ran(k);
    return 0;
}

static void client_error(client *c) { OUT(c, "CLIENT_ERROR bad command line format\r\n"); }

/* ---- meta flags ---------------------------------------------------- */

/* Parse meta flags tokens t[0..n) of a request of op into r; the flag
 * letters in request order into order (NUL-terminated). Letters outside
 * memcached 1.6.18's meta set, repeats, and bad numbers are refused with
 * its messages. -1 after replying an error. */
static int meta_flags(client *c, int op, mc_req *r, const tok *t, int n, char *order, size_t ocap) {
    size_t no = 0;
    int md_ma = op == MC_MD || op == MC_MA;
    for (int i = 0; i < n; i++) {
        char f = t[i].p[0];
        tok v = {t[i].p + 1, t[i].n - 1};
        int known = f && strchr(md_ma ? "cfhklqstuvCDFIJLMNOPRT" : "bcfhklqstuvCDFIJLMNOPRT", f) != NULL;
        if (!known || (r->mflags & MC_MF(f))) {
            if (md_ma) OUT(c, "CLIENT_ERROR invalid or duplicate flag\r\n");
            else if (!known) OUT(c, "CLIENT_ERROR invalid flag\r\n");
            else OUT(c, "CLIENT_ERROR duplicate flag\r\n");
            return -1;
        }
        r->mflags |= MC_MF(f);
        int bad = 0;
        switch (f) {
        case 'q': r->noreply = 1; break;
        case 'O':
            if (v.n > 32) {
                OUT(c, "CLIENT_ERROR opaque token too long\r\n");
                return -1;
            }
            r->opaque = v.p;
            r->olen = v.n;
            break;
        case 'T':
            bad = tok_ll(&v, &r->exptime) != 0;
            r->has_exp = 1;
            break;
        case 'N': bad = tok_ll(&v, &r->vivify_ttl) != 0; break;
        case 'F': bad = tok_u32(&v, &r->flags) != 0; break;
        case 'C': {
            unsigned long long x;
            bad = tok_ull(&v, &x) != 0;
            r->cas = x;
            break;
        }
        case 'D': {
            unsigned long long x;
            bad = tok_ull(&v, &x) != 0;
            r->delta = x;
            break;
        }
        case 'J': bad = tok_ll(&v, &r->init) != 0; break;
        case 'M':
            r->mode = v.n ? v.p[0] : 0;
            if (op == MC_MS && (v.n != 1 || !strchr("EeAaPpRrSs", v.p[0]))) {
                OUT(c, "CLIENT_ERROR invalid mode for ms M token\r\n");
                return -1;
            }
            if (op == MC_MA && (v.n != 1 || !strchr("Ii+Dd-", v.p[0]))) {
                OUT(c, "CLIENT_ERROR invalid mode for ma M token\r\n");
                return -1;
            }
            break;
        case 'b': r->base64 = 1; break;
        default: break;
        }
        if (bad) {
            OUT(c, "CLIENT_ERROR bad token in command line format\r\n");
            return -1;
        }
        if (no + 1 < ocap) order[no++] = f;
    }
    order[no] = '\0';
    return 0;
}

/* ---- one request ------------------------------------------------------ */

enum { REQ_DONE, REQ_MORE, REQ_HELD };

/* Handle the request starting at q[0..avail) whose line is t[0..nt) and
 * ends at line_end (bytes of the line with its "\n"). *used: bytes
 * consumed when REQ_DONE. */
static int request(conn *k, mcp *st, const char *q, size_t avail, size_t line_end, tok *t, int nt, size_t *used) {
    client *c = &k->c;
    mc_req r;
    memset(&r, 0, sizeof(r));
    *used = line_end;
    if (nt == 0) {
        OUT(c, "ERROR\r\n");
        return REQ_DONE;
    }
    const tok *cmd = &t[0];
    int op = -1;
    static const struct {
        const char *name;
        int op;
    } store[] = {{"set", MC_SET}, {"add", MC_ADD}, {"replace", MC_REPLACE}, {"append", MC_APPEND},
                 {"prepend", MC_PREPEND}, {"cas", MC_CAS}};
    for (size_t i = 0; i < sizeof(store) / sizeof(store[0]); i++)
        if (tok_is(cmd, store[i].name)) op = store[i].op;
    if (op >= 0 || tok_is(cmd, "ms")) {
        int meta = op < 0;
        int base = meta ? 3 : (op == MC_CAS ? 6 : 5);
        if (meta && nt < 3) {
            client_error(c);
            return REQ_DONE;
        }
        if (nt < base || (!meta && nt > base + 1)) {
            OUT(c, "ERROR\r\n");
            return REQ_DONE;
        }
        long long vlen = -1;
        char order[64] = "";
        if (t[1].n > MC_KEY_MAX) {
            client_error(c);
            return REQ_DONE;
        }
        if (meta) {
            r.op = MC_MS;
            if (tok_ll(&t[2], &vlen) != 0 || vlen < 0) {
                client_error(c);
                return REQ_DONE;
            }
            if (meta_flags(c, MC_MS, &r, t + 3, nt - 3, order, sizeof(order)) != 0 ||
                (r.base64 && (OUT(c, "CLIENT_ERROR error decoding key\r\n"), 1))) {
                /* The data that follows is not a command. */
                mc_stat_add(MCS_BYTES_READ, (int64_t)line_end);
                st->swallow = (size_t)vlen + 2;
                return REQ_DONE;
            }
        } else {
            r.op = op;
            unsigned long long cas = 0;
            if (tok_u32(&t[2], &r.flags) != 0 || tok_ll(&t[3], &r.exptime) != 0 || tok_ll(&t[4], &vlen) != 0 ||
                (op == MC_CAS && tok_ull(&t[5], &cas) != 0)) {
                client_error(c);
                return REQ_DONE;
            }
            if (vlen < 0 || vlen > (long long)INT32_MAX - 2) {
                client_error(c);
                return REQ_DONE;
            }
            r.cas = cas;
            r.has_exp = 1;
            r.noreply = nt == base + 1 && tok_is(&t[base], "noreply");
        }
        size_t total = line_end + (size_t)vlen + 2;
        if ((long long)(vlen + (long long)t[1].n + MC_ITEM_OVERHEAD) > mc_max_item_size()) {
            /* Too large: swallow the data, and a set drops the old item. */
            mc_stat_add(MCS_BYTES_READ, (int64_t)line_end);
            st->swallow = (size_t)vlen + 2;
            if (op == MC_SET || (meta && r.mode == 0)) {
                mc_req d;
                memset(&d, 0, sizeof(d));
                d.op = MC_DELETE;
                d.noreply = 1;
                if (run(k, &d, "del", &t[1], 1, NULL) != 0) {
                    st->swallow = 0;
                    return REQ_HELD;
                }
            }
            OUT(c, "SERVER_ERROR object too large for cache\r\n");
            return REQ_DONE;
        }
        if (avail < total) {
            st->need = total;
            return REQ_MORE;
        }
        st->need = 0;
        *used = total;
        const char *data = q + line_end;
        if (data[vlen] != '\r' || data[vlen + 1] != '\n') {
            OUT(c, "CLIENT_ERROR bad data chunk\r\n");
            return REQ_DONE;
        }
        r.data = data;
        r.dlen = (size_t)vlen;
        mc_stat_add(MCS_BYTES_READ, (int64_t)total);
        tok ord = {order, strlen(order)};
        if (run(k, &r, "getex", &t[1], 1, meta ? &ord : NULL) != 0) return REQ_HELD;
        return REQ_DONE;
    }
    mc_stat_add(MCS_BYTES_READ, (int64_t)line_end);
    if (tok_is(cmd, "get") || tok_is(cmd, "gets") || tok_is(cmd, "gat") || tok_is(cmd, "gats")) {
        int touch = cmd->p[1] == 'a';
        r.op = touch ? (cmd->n == 4 ? MC_GATS : MC_GAT) : (cmd->n == 4 ? MC_GETS : MC_GET);
        int first = touch ? 2 : 1;
        if (nt <= first) {
            OUT(c, "ERROR\r\n");
            return REQ_DONE;
        }
        if (touch && tok_ll(&t[1], &r.exptime) != 0) {
            OUT(c, "CLIENT_ERROR invalid exptime argument\r\n");
            return REQ_DONE;
        }
        for (int i = first; i < nt; i++)
            if (t[i].n > MC_KEY_MAX) {
                client_error(c);
                return REQ_DONE;
            }
        return run(k, &r, touch ? "getex" : "mget", &t[1], nt - 1, NULL) ? REQ_HELD : REQ_DONE;
    }
    if (tok_is(cmd, "delete")) {
        r.op = MC_DELETE;
        if (nt < 2) {
            OUT(c, "ERROR\r\n");
            return REQ_DONE;
        }
        if (nt > 2) {
            int zero = tok_is(&t[2], "0");
            int nr = tok_is(&t[nt - 1], "noreply");
            int valid = (nt == 3 && (zero || nr)) || (nt == 4 && zero && nr);
            if (!valid) {
                OUT(c, "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n");
                return REQ_DONE;
            }
            r.noreply = nr;
        }
        if (t[1].n > MC_KEY_MAX) {
            client_error(c);
            return REQ_DONE;
        }
        return run(k, &r, "del", &t[1], 1, NULL) ? REQ_HELD : REQ_DONE;
    }
    if (tok_is(cmd, "incr") || tok_is(cmd, "decr")) {
        r.op = cmd->p[0] == 'i' ? MC_INCR : MC_DECR;
        if (nt != 3 && nt != 4) {
            OUT(c, "ERROR\r\n");
            return REQ_DONE;
        }
        r.noreply = nt == 4 && tok_is(&t[3], "noreply");
        if (t[1].n > MC_KEY_MAX) {
            client_error(c);
            return REQ_DONE;
        }
        unsigned long long d;
        if (tok_ull(&t[2], &d) != 0) {
            OUT(c, "CLIENT_ERROR invalid numeric delta argument\r\n");
            return REQ_DONE;
        }
        r.delta = d;
        return run(k, &r, "getex", &t[1], 1, NULL) ? REQ_HELD : REQ_DONE;
    }
    if (tok_is(cmd, "touch")) {
        r.op = MC_TOUCH;
        if (nt != 3 && nt != 4) {
            OUT(c, "ERROR\r\n");
            return REQ_DONE;
        }
        r.noreply = nt == 4 && tok_is(&t[3], "noreply");
        if (t[1].n > MC_KEY_MAX) {
            client_error(c);
            return REQ_DONE;
        }
        if (tok_ll(&t[2], &r.exptime) != 0) {
            OUT(c, "CLIENT_ERROR invalid exptime argument\r\n");
            return REQ_DONE;
        }
        return run(k, &r, "getex", &t[1], 1, NULL) ? REQ_HELD : REQ_DONE;
    }
    if (tok_is(cmd, "flush_all")) {
        r.op = MC_FLUSH;
        if (nt > 3) {
            OUT(c, "ERROR\r\n");
            return REQ_DONE;
        }
        r.noreply = tok_is(&t[nt - 1], "noreply");
        if (nt - r.noreply == 2) {
            if (tok_ll(&t[1], &r.exptime) != 0) {
                OUT(c, "CLIENT_ERROR invalid exptime argument\r\n");
                return REQ_DONE;
            }
            r.has_exp = r.exptime > 0;
        }
        return run(k, &r, "flushdb", NULL, 0, NULL) ? REQ_HELD : REQ_DONE;
    }
    if (tok_is(cmd, "mg") || tok_is(cmd, "md") || tok_is(cmd, "ma")) {
        r.op = cmd->p[1] == 'g' ? MC_MG : cmd->p[1] == 'd' ? MC_MD : MC_MA;
        if (nt < 2) {
            OUT(c, "ERROR\r\n");
            return REQ_DONE;
        }
        if (t[1].n > MC_KEY_MAX) {
            client_error(c);
            return REQ_DONE;
        }
        char order[64];
        if (meta_flags(c, r.op, &r, t + 2, nt - 2, order, sizeof(order)) != 0) return REQ_DONE;
        if (r.base64) {
            /* Base64 keys are not supported. */
            OUT(c, "CLIENT_ERROR error decoding key\r\n");
            return REQ_DONE;
        }
        tok ord = {order, strlen(order)};
        const char *name = r.op == MC_MG ? ((r.mflags & (MC_MF('T') | MC_MF('N'))) ? "getex" : "mget") : r.op == MC_MD ? "del" : "getex";
        return run(k, &r, name, &t[1], 1, &ord) ? REQ_HELD : REQ_DONE;
    }
    if (tok_is(cmd, "mn")) {
        OUT(c, "MN\r\n");
        return REQ_DONE;
    }
    if (tok_is(cmd, "version")) {
        OUT(c, "VERSION " GOBLIN_VERSION "\r\n");
        return REQ_DONE;
    }
    if (tok_is(cmd, "verbosity")) {
        if (nt < 2 || nt > 3) {
            OUT(c, "ERROR\r\n");
            return REQ_DONE;
        }
        if (!tok_is(&t[nt - 1], "noreply")) OUT(c, "OK\r\n");
        return REQ_DONE;
    }
    if (tok_is(cmd, "quit")) {
        client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
        return REQ_DONE;
    }
    if (tok_is(cmd, "stats")) {
        if (nt == 1) {
            size_t before = c->olen;
            mc_reply_stats(c);
            mc_stat_add(MCS_BYTES_WRITTEN, (int64_t)(c->olen - before));
        } else if (tok_is(&t[1], "reset")) {
            OUT(c, "RESET\r\n");
        } else if (tok_is(&t[1], "settings") || tok_is(&t[1], "items") || tok_is(&t[1], "slabs") ||
                   tok_is(&t[1], "sizes") || tok_is(&t[1], "conns")) {
            OUT(c, "END\r\n"); /* sections of memcached's own memory: none here */
        } else {
            OUT(c, "ERROR\r\n");
        }
        return REQ_DONE;
    }
    OUT(c, "ERROR\r\n");
    return REQ_DONE;
}

/* Text commands whose last token "noreply" silences every reply they
 * make, errors included (memcached's set_noreply_maybe). */
static int text_noreply(const tok *t, int nt) {
    static const char *const cmds[] = {"set", "add", "replace", "append", "prepend", "cas", "incr", "decr",
                                       "delete", "touch", "flush_all", "verbosity", NULL};
    if (nt < 2 || !tok_is(&t[nt - 1], "noreply")) return 0;
    for (int i = 0; cmds[i]; i++)
        if (tok_is(&t[0], cmds[i])) return 1;
    return 0;
}

static size_t mc_process(conn *k) {
    client *c = &k->c;
    mcp *st = k->pstate;
    size_t start = 0;
    tok stackt[32];
    while (!(client_flags_peek(c) & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_BLOCKED | CLIENT_STREAMING)) &&
           start < k->qlen && !k->paused && !k->turn_over) {
        const char *q = k->qbuf + start;
        size_t avail = k->qlen - start;
        if (st->swallow) {
            size_t n = avail < st->swallow ? avail : st->swallow;
            st->swallow -= n;
            start += n;
            mc_stat_add(MCS_BYTES_READ, (int64_t)n);
            continue;
        }
        const char *nl = memchr(q, '\n', avail);
        if (!nl) {
            /* A retrieval line may be as long as its keys need (as in
             * memcached); any other over MC_LINE_MAX closes. */
            int retrieval = avail >= 4 && (memcmp(q, "get", 3) == 0 || memcmp(q, "gat", 3) == 0) &&
                            (q[3] == ' ' || (q[3] == 's' && avail >= 5 && q[4] == ' '));
            if (avail >= MC_LINE_MAX && !retrieval) {
                OUT(c, "CLIENT_ERROR line too long\r\n");
                client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
                start = k->qlen;
            }
            break;
        }
        size_t line_end = (size_t)(nl - q) + 1;
        size_t ll = line_end - 1;
        if (ll && q[ll - 1] == '\r') ll--;
        /* Tokens (runs of non-spaces). */
        int nt = 0, cap = 32;
        tok *t = stackt;
        for (size_t i = 0; i < ll;) {
            while (i < ll && q[i] == ' ') i++;
            if (i == ll) break;
            size_t s = i;
            while (i < ll && q[i] != ' ') i++;
            if (nt == cap) {
                if (cap >= MC_TOKENS_MAX) break;
                tok *nt2 = malloc(sizeof(tok) * (size_t)cap * 2);
                if (!nt2) break;
                memcpy(nt2, t, sizeof(tok) * (size_t)nt);
                if (t != stackt) free(t);
                t = nt2;
                cap *= 2;
            }
            t[nt++] = (tok){q + s, i - s};
        }
        size_t used = 0;
        int quiet = text_noreply(t, nt);
        if (quiet) client_flag_on(c, CLIENT_REPLY_OFF);
        int rc = request(k, st, q, avail, line_end, t, nt, &used);
        if (quiet) client_flag_off(c, CLIENT_REPLY_OFF);
        if (t != stackt) free(t);
        if (rc != REQ_DONE) break;
        start += used;
    }
    return start;
}

#include "base/config.h"
#include "base/tls.h"

static int no_memcache;
static long long memcache_port;

int mc_proto_port(void) {
    mc_config_init();
    config_bind_int("no-memcache", &no_memcache);
    config_bind_ll("memcache-port", &memcache_port);
    return no_memcache ? 0 : (int)memcache_port;
}

int mc_proto_tls_port(void) { return no_memcache ? 0 : tls_memcache_port(); }

const net_proto mc_proto = {
    .name = "memcache",
    .refusal = mc_refusal,
    .open = mc_open,
    .close = mc_close,
    .process = mc_process,
    .pending_hint = mc_hint,
};
