/* t_hll.c -- the HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG
 * and PFSELFTEST.
 *
 * An HLL is an ordinary string value (TYPE string, GET gives its bytes),
 * laid out as in Redis 7.0 (ds/hll.h), so values move between Goblin and
 * Redis through GET/SET, DUMP/RESTORE and RDB files. A command reads the
 * value's bytes through strval.h. A sparse value (whose length changes) is
 * edited in a private copy (ds/hll.c) installed as the key's new value,
 * keeping its TTL; a dense value's registers, like PFCOUNT's cache
 * write-back, change in place in the writable bytes strval_resize gives. As in Redis, a string that
 * does not look like an HLL is refused with a WRONGTYPE error of its own,
 * and a malformed sparse stream with INVALIDOBJ. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/propagate.h"
#include "session/reply.h"
#include "db/strval.h"
#include "ds/hll.h"
#include "util/strutil.h"
#include "base/config.h"

static const char err_not_hll[] = "WRONGTYPE Key is not a valid HyperLogLog string value.";
static const char err_invalid[] = "INVALIDOBJ Corrupted HLL object detected";
static const char err_oom[] = "OOM command not allowed when used memory > 'maxmemory'.";

/* ---- helpers --------------------------------------------------------------- */

/* hll-sparse-max-bytes (a CONFIG SET takes the keyspace write lock, so it
 * cannot change under a running command). */
static size_t sparse_max_bytes(void) { return (size_t)cfg.hll_sparse_max_bytes; }

static void reply_read_failed(client *c) { reply_error(c, strval_io_error() ? strval_io_error() : err_oom); }

/* Bytes of the HLL at key: *e NULL when missing; -1 after replying an error
 * (another type, a string that is not an HLL, a failed read). */
static int hll_lookup(client *c, gdb *db, const garg *key, int read, dbentry **e, const unsigned char **p,
                      size_t *len) {
    static _Thread_local char tmp[STRUTIL_LLSTR];
    *e = read ? db_lookup_read(db, key->p, key->n) : db_lookup(db, key->p, key->n);
    *p = NULL;
    *len = 0;
    if (!*e) return 0;
    if ((*e)->val.type != OBJ_STRING) {
        reply_err_wrongtype(c);
        return -1;
    }
    *p = (const unsigned char *)strval_bytes(&(*e)->val, tmp, len);
    if (!*p) {
        reply_read_failed(c);
        return -1;
    }
    if (hll_check(*p, *len) != 0) {
        reply_error(c, err_not_hll);
        return -1;
    }
    return 0;
}

/* Installs h as the value of key (replacing e's value and keeping its TTL,
 * or adding the key when e is NULL). NULL after replying an error. */
static dbentry *hll_store(client *c, gdb *db, dbentry *e, const garg *key, const hll *h) {
    gobj nv = {0};
    if (strval_set(&nv, (const char *)h->p, h->len) != 0) {
        reply_read_failed(c);
        return NULL;
    }
    nv.enc = ENC_RAW; /* Redis builds HLLs as raw strings, whatever their size */
    if (e) {
        db_replace_value(e, &nv);
        return e;
    }
    e = db_add(db, key->p, key->n);
    if (!e) {
        strval_free(&nv);
        reply_error(c, err_oom);
        return NULL;
    }
    db_entry_set_value(e, &nv);
    return e;
}

/* Redis writes an HLL only after making its value a private raw string
 * (dbUnshareStringValue), so OBJECT ENCODING says "raw" from then on. */
static void hll_unshare(dbentry *e) {
    if (e && e->val.enc == ENC_EMBSTR) e->val.enc = ENC_RAW;
}

/* A change Redis counts in server.dirty without signalling the key. */
static void count_dirty(uint64_t n) { db_dirty_add(n); }

/* What a write that changed registers tells: WATCH, one dirty per changed
 * element (PFMERGE: one), and the "pfadd" event (Redis 7.0 announces a
 * merge as "pfadd" too). */
static void hll_changed(client *c, gdb *db, const garg *key, long long changes) {
    cmd_key_modified(c, db, key->p, key->n);
    count_dirty((uint64_t)changes - 1);
    cmd_notify(c, NOTIFY_STRING, "pfadd", db, key->p, key->n);
}

/* ---- PFADD key [element ...] ------------------------------------------------ */

static void pfaddCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e;
    const unsigned char *p;
    size_t len;
    hll h;
    long long updated = 0;
    if (hll_lookup(c, db, key, 0, &e, &p, &len) != 0) return;
    hll_unshare(e);
    if (e && hll_encoding(p) == HLL_DENSE) {
        /* Dense registers change in place, as in Redis: no copy of the
         * 12 KB value per command (the length never changes). */
        unsigned char *w = (unsigned char *)strval_resize(&e->val, len);
        if (!w) {
            reply_read_failed(c);
            return;
        }
        hll d = {w, len, len};
        for (int j = 2; j < c->argc; j++)
            if (hll_add(&d, c->argv[j].p, c->argv[j].n, 0) == 1) updated++;
        if (updated) {
            hll_cache_invalidate(w);
            hll_changed(c, db, key, updated);
        }
        reply_int(c, updated ? 1 : 0);
        return;
    }
    if (e ? hll_load(&h, p, len) : hll_init_empty(&h)) {
        reply_error(c, err_oom);
        return;
    }
    if (!e) updated++;
    size_t smax = sparse_max_bytes();
    int rc = 0;
    for (int j = 2; j < c->argc && rc >= 0; j++) {
        rc = hll_add(&h, c->argv[j].p, c->argv[j].n, smax);
        if (rc == 1) updated++;
    }
    if (rc < 0) {
        /* Redis edits in place: what changed before the bad spot stays.
         * Unlike Redis 7.0 the call is then propagated (its replay makes
         * the same change and fails the same way), or the AOF would miss
         * the change. */
        if (updated && rc == HLL_ERR_INVALID) {
            if (!hll_store(c, db, e, key, &h)) {
                hll_free(&h);
                return;
            }
            cmd_key_modified(c, db, key->p, key->n);
        }
        reply_error(c, rc == HLL_ERR_INVALID ? err_invalid : err_oom);
        hll_free(&h);
        return;
    }
    if (updated) {
        hll_cache_invalidate(h.p);
        if (!hll_store(c, db, e, key, &h)) {
            hll_free(&h);
            return;
        }
        hll_changed(c, db, key, updated);
    }
    hll_free(&h);
    reply_int(c, updated ? 1 : 0);
}

/* The register-wise maximum of the HLLs at argv[1..] (missing keys add
 * nothing), malloc'd; NULL after replying an error. *dense (if given) is
 * set when one of them is dense. */
static uint8_t *union_regs(client *c, gdb *db, int *dense) {
    uint8_t *max = calloc(1, HLL_REGISTERS);
    if (!max) {
        reply_error(c, err_oom);
        return NULL;
    }
    for (int j = 1; j < c->argc; j++) {
        dbentry *e;
        const unsigned char *p;
        size_t len;
        if (hll_lookup(c, db, &c->argv[j], 1, &e, &p, &len) != 0) goto fail;
        if (!e) continue;
        if (dense && hll_encoding(p) == HLL_DENSE) *dense = 1;
        if (hll_merge_regs(max, p, len) != 0) {
            reply_error(c, err_invalid);
            goto fail;
        }
    }
    return max;
fail:
    free(max);
    return NULL;
}

/* ---- PFCOUNT key [key ...] --------------------------------------------------- */

static void pfcountCommand(client *c) {
    gdb *db = cmd_db(c);
    dbentry *e;
    const unsigned char *p;
    size_t len;
    if (c->argc > 2) {
        /* The union's registers, counted without writing anything. */
        uint8_t *max = union_regs(c, db, NULL);
        if (max) reply_int(c, (long long)hll_count_regs(max));
        free(max);
        return;
    }
    if (hll_lookup(c, db, &c->argv[1], 1, &e, &p, &len) != 0) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    hll_unshare(e);
    uint64_t card;
    if (!hll_cache_get(p, &card)) {
        int invalid = 0;
        card = hll_count(p, len, &invalid);
        if (invalid) {
            reply_error(c, err_invalid);
            return;
        }
        /* Store the count back into the value (a change of the key for
         * WATCH and the dirty counter, but no keyspace event). */
        unsigned char *w = (unsigned char *)strval_resize(&e->val, len);
        if (!w) {
            reply_read_failed(c);
            return;
        }
        hll_cache_set(w, card);
        cmd_key_modified(c, db, c->argv[1].p, c->argv[1].n);
    }
    reply_int(c, (long long)card);
}

/* ---- PFMERGE destkey [sourcekey ...] ------------------------------------------ */

static void pfmergeCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *key = &c->argv[1];
    dbentry *e;
    const unsigned char *p;
    size_t len;
    int use_dense = 0;
    hll h = {0};
    /* The destination is a source too. */
    uint8_t *max = union_regs(c, db, &use_dense);
    if (!max) return;
    if (hll_lookup(c, db, key, 0, &e, &p, &len) != 0) goto out;
    hll_unshare(e);
    if (e ? hll_load(&h, p, len) : hll_init_empty(&h)) {
        reply_error(c, err_oom);
        goto out;
    }
    /* Dense as soon as one input is dense: no conversion midway. */
    int rc = use_dense ? hll_to_dense(&h) : 0;
    size_t smax = sparse_max_bytes();
    for (long i = 0; i < HLL_REGISTERS && rc >= 0; i++)
        if (max[i]) rc = hll_set(&h, i, max[i], smax);
    if (rc < 0) {
        reply_error(c, rc == HLL_ERR_INVALID ? err_invalid : err_oom);
        goto out;
    }
    hll_cache_invalidate(h.p);
    if (!hll_store(c, db, e, key, &h)) goto out;
    hll_changed(c, db, key, 1);
    reply_ok(c);
out:
    hll_free(&h);
    free(max);
}

/* ---- PFDEBUG subcommand key ----------------------------------------------------- */

/* Makes the HLL at e dense (stored back): 1 converted, 0 already dense,
 * -1 after replying an error. */
static int pfdebug_todense(client *c, gdb *db, dbentry *e, const unsigned char *p, size_t len) {
    if (hll_encoding(p) == HLL_DENSE) return 0;
    hll h;
    if (hll_load(&h, p, len) != 0) {
        reply_error(c, err_oom);
        return -1;
    }
    int rc = hll_to_dense(&h);
    if (rc != 0) {
        reply_error(c, rc == HLL_ERR_INVALID ? err_invalid : err_oom);
        hll_free(&h);
        return -1;
    }
    dbentry *ok = hll_store(c, db, e, &c->argv[2], &h);
    hll_free(&h);
    if (!ok) return -1;
    count_dirty(1); /* Redis counts it without signalling the key */
    prop_count_change(); /* and so propagates the PFDEBUG: the value changed */
    return 1;
}

static void pfdebug_decode(client *c, const unsigned char *p, size_t len) {
    const unsigned char *q = p + HLL_HDR_SIZE, *end = p + len;
    /* Each opcode prints at most "v:32,4 " or "Z:16384 " (8 bytes). */
    size_t cap = 8 * (len - HLL_HDR_SIZE) + 1, n = 0;
    char *out = malloc(cap);
    if (!out) {
        reply_error(c, err_oom);
        return;
    }
    while (q < end) {
        int kind, run, val;
        hll_sparse_op(&q, end, &kind, &run, &val);
        if (kind == 'v') n += (size_t)snprintf(out + n, cap - n, "v:%d,%d ", val, run);
        else n += (size_t)snprintf(out + n, cap - n, "%c:%d ", kind, run);
    }
    if (n) n--; /* the last separator */
    reply_bulk(c, out, n);
    free(out);
}

static void pfdebugCommand(client *c) {
    gdb *db = cmd_db(c);
    const garg *sub = &c->argv[1];
    dbentry *e;
    const unsigned char *p;
    size_t len;
    if (hll_lookup(c, db, &c->argv[2], 0, &e, &p, &len) != 0) return;
    if (!e) {
        reply_error(c, "ERR The specified key does not exist");
        return;
    }
    hll_unshare(e);
    if (arg_is(sub, "getreg")) {
        if (pfdebug_todense(c, db, e, p, len) < 0) return;
        static _Thread_local char tmp[STRUTIL_LLSTR];
        if (!(p = (const unsigned char *)strval_bytes(&e->val, tmp, &len))) {
            reply_read_failed(c);
            return;
        }
        reply_array(c, HLL_REGISTERS);
        for (long i = 0; i < HLL_REGISTERS; i++) reply_int(c, hll_dense_get(p + HLL_HDR_SIZE, i));
    } else if (arg_is(sub, "decode")) {
        if (hll_encoding(p) != HLL_SPARSE) reply_error(c, "ERR HLL encoding is not sparse");
        else pfdebug_decode(c, p, len);
    } else if (arg_is(sub, "encoding")) {
        reply_simple(c, hll_encoding(p) == HLL_DENSE ? "dense" : "sparse");
    } else if (arg_is(sub, "todense")) {
        int rc = pfdebug_todense(c, db, e, p, len);
        if (rc >= 0) reply_int(c, rc);
    } else {
        /* Redis's error formatting turns line breaks into spaces. */
        char name[128];
        size_t n = sub->n < sizeof(name) - 1 ? sub->n : sizeof(name) - 1;
        memcpy(name, sub->p, n);
        name[n] = 0;
        for (size_t i = 0; i < n; i++)
            if (name[i] == '\r' || name[i] == '\n') name[i] = ' ';
        reply_errorf(c, "ERR Unknown PFDEBUG subcommand '%s'", name);
    }
}

/* ---- PFSELFTEST -------------------------------------------------------------------- */

/* The dense register packing, then sparse and dense HLLs fed the same
 * elements, which must give the same count within the expected error. */
static const char *hll_selftest(void) {
    static char msg[128];
    unsigned char *regs = calloc(1, HLL_DENSE_SIZE);
    uint8_t *want = malloc(HLL_REGISTERS);
    hll s = {0}, d = {0};
    const char *err = NULL;
    if (!regs || !want) {
        err = "TESTFAILED out of memory";
        goto out;
    }
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int round = 0; round < 100 && !err; round++) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            want[i] = (uint8_t)((seed >> 33) & 63);
            hll_dense_put(regs + HLL_HDR_SIZE, i, want[i]);
        }
        for (long i = 0; i < HLL_REGISTERS; i++)
            if (hll_dense_get(regs + HLL_HDR_SIZE, i) != want[i]) {
                snprintf(msg, sizeof(msg), "TESTFAILED Register error at %ld", i);
                err = msg;
                break;
            }
    }
    if (err) goto out;
    if (hll_init_empty(&s) || hll_init_empty(&d) || hll_to_dense(&d)) {
        err = "TESTFAILED out of memory";
        goto out;
    }
    double relerr = 1.04 / 128.0; /* 1.04 / sqrt(registers) */
    uint64_t checkpoint = 1;
    for (uint64_t j = 1; j <= 1000000; j++) {
        unsigned char ele[8];
        for (int b = 0; b < 8; b++) ele[b] = (unsigned char)((j ^ seed) >> (8 * b));
        if (hll_add(&s, ele, 8, HLL_SPARSE_DEFAULT_MAX_BYTES) < 0 || hll_add(&d, ele, 8, 0) < 0) {
            err = "TESTFAILED add failed";
            break;
        }
        if (j != checkpoint) continue;
        checkpoint *= 10;
        int inv = 0;
        uint64_t cs = hll_count(s.p, s.len, &inv), cd = hll_count(d.p, d.len, &inv);
        double maxerr = j < 10 ? 1 : relerr * 6 * (double)j + 1;
        double diff = cd > j ? (double)(cd - j) : (double)(j - cd);
        if (inv || cs != cd || diff > maxerr) {
            snprintf(msg, sizeof(msg), "TESTFAILED too big error. card:%llu error:%llu", (unsigned long long)j,
                     (unsigned long long)diff);
            err = msg;
            break;
        }
    }
out:
    hll_free(&s);
    hll_free(&d);
    free(regs);
    free(want);
    return err;
}

static void pfselftestCommand(client *c) {
    const char *err = hll_selftest();
    if (err) reply_error(c, err);
    else reply_ok(c);
}

const cmd_handler hll_handlers[] = {
    {"pfadd", pfaddCommand, CMD_LOCK_KEYS},
    {"pfcount", pfcountCommand, CMD_LOCK_KEYS},
    {"pfmerge", pfmergeCommand, CMD_LOCK_KEYS},
    {"pfdebug", pfdebugCommand, CMD_LOCK_KEYS},
    {"pfselftest", pfselftestCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
