/* bitops.c -- the bitmap commands on string values: SETBIT, GETBIT,
 * BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO.
 *
 * A string is a bit array numbered from the most significant bit of its
 * first byte; reading past the end gives zeros, and a write past the end
 * grows the string with zero bytes first (so a write makes the value a raw
 * byte buffer, as in Redis). Offsets are limited so that the byte they fall
 * in stays below proto-max-bulk-len. Bytes are reached only through
 * strval.h. The keys of every command are in its declared key range (BITOP:
 * destination and sources), so the dispatcher holds their shards. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/command.h"
#include "cmd/families.h"
#include "session/reply.h"
#include "db/strval.h"
#include "util/strutil.h"
#include "base/config.h"

static const char err_offset[] = "ERR bit offset is not an integer or out of range";

/* ---- bit helpers (no server types) --------------------------------------- */

static inline int bit_at(const unsigned char *p, size_t len, uint64_t pos) {
    return (pos >> 3) < len ? (p[pos >> 3] >> (7 - (pos & 7))) & 1 : 0;
}

/* Number of set bits in p[0..n). */
static long long bit_popcount(const unsigned char *p, size_t n) {
    long long count = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        count += __builtin_popcountll(w);
    }
    for (; i < n; i++) count += __builtin_popcount(p[i]);
    return count;
}

/* Set bits of p in the bit range [from, to] (to < 8 * len). */
static long long bit_count_range(const unsigned char *p, uint64_t from, uint64_t to) {
    uint64_t b0 = from >> 3, b1 = to >> 3;
    long long count = bit_popcount(p + b0, (size_t)(b1 - b0 + 1));
    /* Take back the bits of the edge bytes that are outside the range. */
    unsigned head = (unsigned)(from & 7), tail = (unsigned)(7 - (to & 7));
    if (head) count -= __builtin_popcount(p[b0] & (0xffu << (8 - head) & 0xffu));
    if (tail) count -= __builtin_popcount(p[b1] & ((1u << tail) - 1));
    return count;
}

/* First bit equal to want in the bit range [from, to] of p (to < 8 * len),
 * or -1 when there is none. */
static long long bit_find(const unsigned char *p, uint64_t from, uint64_t to, int want) {
    unsigned char skip = want ? 0x00 : 0xff;  /* a byte with nothing to find */
    uint64_t pos = from;
    while (pos <= to) {
        if ((pos & 7) == 0 && to - pos >= 7) {
            /* Whole bytes: skip words, then bytes, that hold no candidate. */
            uint64_t b = pos >> 3, last = to >> 3;
            if ((to & 7) != 7) last--;
            uint64_t wskip = want ? 0 : UINT64_MAX;
            while (b + 8 <= last + 1) {
                uint64_t w;
                memcpy(&w, p + b, 8);
                if (w != wskip) break;
                b += 8;
            }
            while (b <= last && p[b] == skip) b++;
            pos = b << 3;
            if (b > last) continue;
        }
        if (((p[pos >> 3] >> (7 - (pos & 7))) & 1) == want) return (long long)pos;
        pos++;
    }
    return -1;
}

/* Unsigned value of the `bits` bits at bit offset off (bits past len read
 * as zero). */
static uint64_t bits_get(const unsigned char *p, size_t len, uint64_t off, int bits) {
    uint64_t v = 0;
    for (int i = 0; i < bits; i++) v = (v << 1) | (uint64_t)bit_at(p, len, off + (uint64_t)i);
    return v;
}

/* Stores the low `bits` bits of v at bit offset off (inside p). */
static void bits_set(unsigned char *p, uint64_t off, int bits, uint64_t v) {
    for (int i = 0; i < bits; i++) {
        uint64_t pos = off + (uint64_t)i;
        unsigned char mask = (unsigned char)(1u << (7 - (pos & 7)));
        if ((v >> (bits - 1 - i)) & 1) p[pos >> 3] |= mask;
        else p[pos >> 3] &= (unsigned char)~mask;
    }
}

static int64_t sign_extend(uint64_t v, int bits) {
    if (bits < 64 && ((v >> (bits - 1)) & 1)) v |= UINT64_MAX << bits;
    return (int64_t)v;
}

/* ---- argument parsing ----------------------------------------------------- */

/* A bit offset: a non-negative integer, or with hash "#N" meaning N * bits
 * (BITFIELD), whose byte is below proto-max-bulk-len. The multiplication
 * wraps like Redis's, and a wrapped negative value is out of range. */
static int bit_offset_arg(client *c, const garg *a, int hash, int bits, uint64_t *off) {
    int usehash = hash && bits > 0 && a->p[0] == '#';
    long long v;
    if (!str_to_ll(a->p + usehash, a->n - (size_t)usehash, &v)) goto bad;
    if (usehash) v = (long long)((uint64_t)v * (uint64_t)bits);
    if (v < 0 || (v >> 3) >= cfg.proto_max_bulk_len) goto bad;
    *off = (uint64_t)v;
    return 0;
bad:
    reply_error(c, err_offset);
    return -1;
}

/* A BITFIELD type: i1..i64 or u1..u63, lowercase only (the width read as a
 * C string). */
static int bitfield_type_arg(client *c, const garg *a, int *sign, int *bits) {
    const char *p = a->p;
    long long v;
    if (p[0] == 'i') *sign = 1;
    else if (p[0] == 'u') *sign = 0;
    else goto bad;
    if (!str_to_ll(p + 1, strlen(p + 1), &v) || v < 1 || v > (*sign ? 64 : 63)) goto bad;
    *bits = (int)v;
    return 0;
bad:
    reply_error(c, "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    return -1;
}

/* BYTE or BIT unit argument: 1 for BIT, 0 for BYTE, -1 after a syntax error. */
static int unit_arg(client *c, const garg *a) {
    if (!strcasecmp(a->p, "bit")) return 1;
    if (!strcasecmp(a->p, "byte")) return 0;
    reply_err_syntax(c);
    return -1;
}

/* ---- key access ----------------------------------------------------------- */

/* Readable bytes of the string at key: *e NULL when missing; -1 after
 * -WRONGTYPE. tmp holds integer-encoded values. A read lookup (a keyspace
 * hit or miss) also for BITOP's sources and a GET-only BITFIELD. */
static int bit_read(client *c, const garg *key, dbentry **e, char *tmp, const unsigned char **p, size_t *len) {
    *e = db_lookup_read(cmd_db(c), key->p, key->n);
    *p = NULL;
    *len = 0;
    if (!*e) return 0;
    if ((*e)->val.type != OBJ_STRING) {
        reply_err_wrongtype(c);
        return -1;
    }
    *p = (const unsigned char *)strval_bytes(&(*e)->val, tmp, len);
    if (!*p) {
        reply_error(c, strval_io_error() ? strval_io_error() : "OOM command not allowed when used memory > 'maxmemory'.");
        return -1;
    }
    return 0;
}

/* Writable bytes of the string at key, created or grown with zeros so that
 * byte maxbyte exists. *grew tells whether the key was created or grew.
 * NULL after replying an error. */
static unsigned char *bit_write(client *c, const garg *key, uint64_t maxbyte, size_t *len, int *grew) {
    gdb *db = cmd_db(c);
    dbentry *e = db_lookup(db, key->p, key->n);
    int created = 0;
    if (e && e->val.type != OBJ_STRING) {
        reply_err_wrongtype(c);
        return NULL;
    }
    if (!e) {
        e = db_add(db, key->p, key->n);
        if (!e || strval_set(&e->val, "", 0) != 0) {
            if (e) db_delete_entry(db, e);
            reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
            return NULL;
        }
        created = 1;
    }
    size_t old = strval_len(&e->val);
    size_t need = (size_t)maxbyte + 1;
    char *p = strval_resize(&e->val, need > old ? need : old);
    if (!p) {
        if (created) db_delete_entry(db, e);
        reply_error(c, strval_io_error() ? strval_io_error() : "OOM command not allowed when used memory > 'maxmemory'.");
        return NULL;
    }
    *len = need > old ? need : old;
    *grew = created || need > old;
    return (unsigned char *)p;
}

/* ---- SETBIT / GETBIT ------------------------------------------------------- */

static void setbitCommand(client *c) {
    uint64_t off;
    long long on;
    if (bit_offset_arg(c, &c->argv[2], 0, 0, &off) != 0) return;
    if (arg_ll_range(c, &c->argv[3], &on, 0, 1, "ERR bit is not an integer or out of range") != 0) return;
    size_t len;
    int grew;
    unsigned char *p = bit_write(c, &c->argv[1], off >> 3, &len, &grew);
    if (!p) return;
    int old = bit_at(p, len, off);
    if (grew || old != on) {
        bits_set(p, off, 1, (uint64_t)on);
        gdb *db = cmd_db(c);
        cmd_key_modified(c, db, c->argv[1].p, c->argv[1].n);
        cmd_notify(c, NOTIFY_STRING, "setbit", db, c->argv[1].p, c->argv[1].n);
    }
    reply_int(c, old);
}

static void getbitCommand(client *c) {
    uint64_t off;
    if (bit_offset_arg(c, &c->argv[2], 0, 0, &off) != 0) return;
    dbentry *e;
    char tmp[STRUTIL_LLSTR];
    const unsigned char *p;
    size_t len;
    if (bit_read(c, &c->argv[1], &e, tmp, &p, &len) != 0) return;
    reply_int(c, e ? bit_at(p, len, off) : 0);
}

/* ---- BITCOUNT / BITPOS ------------------------------------------------------ */

/* Turns user indexes [start, end] (negative from the end) in units of
 * bytes or bits into a clamped bit range; returns 0 when it is empty. */
static int bit_range(long long start, long long end, int isbit, size_t len, uint64_t *from, uint64_t *to) {
    long long total = isbit ? (long long)len * 8 : (long long)len;
    if (start < 0) start += total;
    if (end < 0) end += total;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= total) end = total - 1;
    if (start > end) return 0;
    *from = isbit ? (uint64_t)start : (uint64_t)start * 8;
    *to = isbit ? (uint64_t)end : (uint64_t)end * 8 + 7;
    return 1;
}

/* BITCOUNT key [start end [BYTE|BIT]]. A missing key counts 0 before the
 * arguments are even looked at (Redis 7.0 order). */
static void bitcountCommand(client *c) {
    dbentry *e;
    char tmp[STRUTIL_LLSTR];
    const unsigned char *p;
    size_t len;
    if (bit_read(c, &c->argv[1], &e, tmp, &p, &len) != 0) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    uint64_t from = 0, to = 0;
    int nonempty;
    if (c->argc == 4 || c->argc == 5) {
        long long start, end;
        int isbit = 0;
        if (arg_ll(c, &c->argv[2], &start) != 0 || arg_ll(c, &c->argv[3], &end) != 0) return;
        if (start < 0 && end < 0 && start > end) {
            reply_int(c, 0);
            return;
        }
        if (c->argc == 5 && (isbit = unit_arg(c, &c->argv[4])) < 0) return;
        nonempty = bit_range(start, end, isbit, len, &from, &to);
    } else if (c->argc == 2) {
        nonempty = len > 0;
        to = (uint64_t)len * 8 - 1;
    } else {
        reply_err_syntax(c);
        return;
    }
    reply_int(c, nonempty ? bit_count_range(p, from, to) : 0);
}

/* BITPOS key bit [start [end [BYTE|BIT]]]. A missing key is an endless run
 * of zeros. Looking for 0 without an explicit end finds the first bit past
 * the string when the range holds no 0; with an explicit end, -1. */
static void bitposCommand(client *c) {
    long long want;
    if (arg_ll(c, &c->argv[2], &want) != 0) return;
    if (want != 0 && want != 1) {
        reply_error(c, "ERR The bit argument must be 1 or 0.");
        return;
    }
    dbentry *e;
    char tmp[STRUTIL_LLSTR];
    const unsigned char *p;
    size_t len;
    if (bit_read(c, &c->argv[1], &e, tmp, &p, &len) != 0) return;
    if (!e) {
        reply_int(c, want ? -1 : 0);
        return;
    }
    uint64_t from = 0, to = 0;
    int nonempty, end_given = 0;
    if (c->argc >= 4 && c->argc <= 6) {
        long long start, end = -1;
        int isbit = 0;
        if (arg_ll(c, &c->argv[3], &start) != 0) return;
        if (c->argc == 6 && (isbit = unit_arg(c, &c->argv[5])) < 0) return;
        if (c->argc >= 5) {
            if (arg_ll(c, &c->argv[4], &end) != 0) return;
            end_given = 1;
        }
        nonempty = bit_range(start, end, isbit, len, &from, &to);
    } else if (c->argc == 3) {
        nonempty = len > 0;
        to = (uint64_t)len * 8 - 1;
    } else {
        reply_err_syntax(c);
        return;
    }
    if (!nonempty) {
        reply_int(c, -1);
        return;
    }
    long long pos = bit_find(p, from, to, (int)want);
    if (pos < 0 && !want && !end_given) pos = (long long)to + 1;
    reply_int(c, pos);
}

/* ---- BITOP ------------------------------------------------------------------ */

enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

/* BITOP op dest src...: shorter sources count as zero-padded; the result is
 * as long as the longest source; an all-empty result deletes dest. */
static void bitopCommand(client *c) {
    const char *opname = c->argv[1].p;
    int op;
    if (!strcasecmp(opname, "and")) op = BITOP_AND;
    else if (!strcasecmp(opname, "or")) op = BITOP_OR;
    else if (!strcasecmp(opname, "xor")) op = BITOP_XOR;
    else if (!strcasecmp(opname, "not")) op = BITOP_NOT;
    else {
        reply_err_syntax(c);
        return;
    }
    if (op == BITOP_NOT && c->argc != 4) {
        reply_error(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    gdb *db = cmd_db(c);
    int nsrc = c->argc - 3;
    const unsigned char **src = malloc(sizeof(*src) * (size_t)nsrc);
    size_t *lens = malloc(sizeof(*lens) * (size_t)nsrc);
    char (*tmps)[STRUTIL_LLSTR] = malloc(sizeof(*tmps) * (size_t)nsrc);
    if (!src || !lens || !tmps) {
        reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        goto done;
    }
    size_t maxlen = 0;
    for (int k = 0; k < nsrc; k++) {
        dbentry *e;
        if (bit_read(c, &c->argv[3 + k], &e, tmps[k], &src[k], &lens[k]) != 0) goto done;
        if (lens[k] > maxlen) maxlen = lens[k];
    }
    const garg *dest = &c->argv[2];
    dbentry *de = db_lookup(db, dest->p, dest->n);
    if (maxlen == 0) {
        if (de) {
            db_delete_entry(db, de);
            cmd_key_modified(c, db, dest->p, dest->n);
            cmd_notify(c, NOTIFY_GENERIC, "del", db, dest->p, dest->n);
        }
        reply_int(c, 0);
        goto done;
    }
    /* Built in a fresh value: a source may be the destination itself. */
    gobj nv = {0};
    unsigned char *out = NULL;
    if (strval_set(&nv, "", 0) == 0 && !(out = (unsigned char *)strval_resize(&nv, maxlen))) strval_free(&nv);
    if (!out) {
        reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        goto done;
    }
    for (size_t i = 0; i < maxlen; i++) {
        unsigned char v = i < lens[0] ? src[0][i] : 0;
        if (op == BITOP_NOT) v = (unsigned char)~v;
        for (int k = 1; k < nsrc; k++) {
            unsigned char s = i < lens[k] ? src[k][i] : 0;
            if (op == BITOP_AND) v &= s;
            else if (op == BITOP_OR) v |= s;
            else v ^= s;
        }
        out[i] = v;
    }
    if (de) {
        db_replace_value(de, &nv);
        if (db_entry_expire(de) != -1) db_persist(db, de);
    } else {
        de = db_add(db, dest->p, dest->n);
        if (!de) {
            strval_free(&nv);
            reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
            goto done;
        }
        db_entry_set_value(de, &nv);
    }
    cmd_key_modified(c, db, dest->p, dest->n);
    cmd_notify(c, NOTIFY_STRING, "set", db, dest->p, dest->n);
    reply_int(c, (long long)maxlen);
done:
    free(src);
    free(lens);
    free(tmps);
}

/* ---- BITFIELD ------------------------------------------------------------- */

enum { BF_GET, BF_SET, BF_INCRBY };
enum { BF_WRAP, BF_SAT, BF_FAIL };

typedef struct bf_op {
    uint64_t offset;
    int64_t value;   /* SET value or INCRBY increment */
    int op, overflow, sign, bits;
} bf_op;

/* value + incr in a signed field of `bits`. Returns 1 on overflow with *res
 * the wrapped or saturated value (untouched for FAIL). The range tests are
 * Redis's, including their two's-complement wrap of max-value and min-value:
 * for a SET value far below the range that wrap reports an overflow upwards
 * (SAT gives the maximum), and the reply must match. */
static int bf_signed_add(int64_t value, int64_t incr, int bits, int ow, int64_t *res) {
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
    int64_t min = -max - 1;
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int up = value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr);
    int down = !up && (value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr));
    if (!up && !down) {
        *res = value + incr;
        return 0;
    }
    if (ow == BF_WRAP) {
        uint64_t sum = (uint64_t)value + (uint64_t)incr;
        if (bits < 64) sum &= (UINT64_C(1) << bits) - 1;
        *res = sign_extend(sum, bits);
    } else if (ow == BF_SAT) {
        *res = up ? max : min;
    }
    return 1;
}

/* The same for an unsigned field (bits <= 63); value may be any uint64 (a
 * SET of a negative number is a huge value, so it overflows upwards). */
static int bf_unsigned_add(uint64_t value, int64_t incr, int bits, int ow, uint64_t *res) {
    uint64_t max = (UINT64_C(1) << bits) - 1;
    int64_t maxincr = (int64_t)(max - value);
    int64_t minincr = (int64_t)(0 - value);
    int up = value > max || (incr > 0 && incr > maxincr);
    int down = !up && incr < 0 && incr < minincr;
    if (!up && !down) {
        *res = value + (uint64_t)incr;
        return 0;
    }
    if (ow == BF_WRAP) *res = (value + (uint64_t)incr) & max;
    else if (ow == BF_SAT) *res = up ? max : 0;
    return 1;
}

/* Runs one SET/INCRBY on p and replies its result (nil when FAIL stops it).
 * Returns whether it counts as a change: it wrote, and either the string
 * was created or grown (grew) or the field's value differs. */
static int bitfield_write_op(client *c, unsigned char *p, size_t len, const bf_op *o, int grew) {
    int overflow;
    if (o->sign) {
        int64_t old = sign_extend(bits_get(p, len, o->offset, o->bits), o->bits), nv;
        if (o->op == BF_INCRBY) overflow = bf_signed_add(old, o->value, o->bits, o->overflow, &nv);
        else overflow = bf_signed_add(o->value, 0, o->bits, o->overflow, &nv);
        if (overflow && o->overflow == BF_FAIL) {
            reply_null(c);
            return 0;
        }
        reply_int(c, o->op == BF_INCRBY ? nv : old);
        bits_set(p, o->offset, o->bits, (uint64_t)nv);
        return grew || nv != old;
    } else {
        uint64_t old = bits_get(p, len, o->offset, o->bits), nv;
        if (o->op == BF_INCRBY) overflow = bf_unsigned_add(old, o->value, o->bits, o->overflow, &nv);
        else overflow = bf_unsigned_add((uint64_t)o->value, 0, o->bits, o->overflow, &nv);
        if (overflow && o->overflow == BF_FAIL) {
            reply_null(c);
            return 0;
        }
        reply_int(c, (long long)(o->op == BF_INCRBY ? nv : old));
        bits_set(p, o->offset, o->bits, nv);
        return grew || nv != old;
    }
}

/* BITFIELD and BITFIELD_RO: all operations are parsed (and every argument
 * error reported) before the key is touched; OVERFLOW applies to the
 * operations after it. Writes first grow the string to the farthest bit any
 * SET/INCRBY reaches, even when they then fail on overflow. */
static void bitfield_generic(client *c, int readonly_cmd) {
    bf_op *ops = malloc(sizeof(bf_op) * (size_t)c->argc);
    if (!ops) {
        reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    int nops = 0, overflow = BF_WRAP, writes = 0;
    uint64_t highest = 0;
    for (int j = 2; j < c->argc; j++) {
        int rem = c->argc - j - 1;
        const char *sub = c->argv[j].p;
        bf_op o = {0};
        if (!strcasecmp(sub, "get") && rem >= 2) {
            o.op = BF_GET;
        } else if (!strcasecmp(sub, "set") && rem >= 3) {
            o.op = BF_SET;
        } else if (!strcasecmp(sub, "incrby") && rem >= 3) {
            o.op = BF_INCRBY;
        } else if (!strcasecmp(sub, "overflow") && rem >= 1) {
            const char *ow = c->argv[++j].p;
            if (!strcasecmp(ow, "wrap")) overflow = BF_WRAP;
            else if (!strcasecmp(ow, "sat")) overflow = BF_SAT;
            else if (!strcasecmp(ow, "fail")) overflow = BF_FAIL;
            else {
                reply_error(c, "ERR Invalid OVERFLOW type specified");
                goto done;
            }
            continue;
        } else {
            reply_err_syntax(c);
            goto done;
        }
        if (bitfield_type_arg(c, &c->argv[j + 1], &o.sign, &o.bits) != 0) goto done;
        if (bit_offset_arg(c, &c->argv[j + 2], 1, o.bits, &o.offset) != 0) goto done;
        if (o.op != BF_GET) {
            long long v;
            writes = 1;
            if (o.offset + (uint64_t)o.bits - 1 > highest) highest = o.offset + (uint64_t)o.bits - 1;
            if (arg_ll(c, &c->argv[j + 3], &v) != 0) goto done;
            o.value = v;
        }
        o.overflow = overflow;
        ops[nops++] = o;
        j += o.op == BF_GET ? 2 : 3;
    }
    unsigned char *wp = NULL;
    const unsigned char *rp = NULL;
    size_t len = 0;
    int grew = 0;
    char tmp[STRUTIL_LLSTR];
    if (!writes) {
        dbentry *e;
        if (bit_read(c, &c->argv[1], &e, tmp, &rp, &len) != 0) goto done;
    } else {
        if (readonly_cmd) {
            reply_error(c, "ERR BITFIELD_RO only supports the GET subcommand");
            goto done;
        }
        if (!(wp = bit_write(c, &c->argv[1], highest >> 3, &len, &grew))) goto done;
        rp = wp;
    }
    reply_array(c, nops);
    int changes = 0;
    for (int k = 0; k < nops; k++) {
        const bf_op *o = &ops[k];
        if (o->op != BF_GET) {
            changes += bitfield_write_op(c, wp, len, o, grew);
        } else {
            uint64_t v = bits_get(rp, len, o->offset, o->bits);
            reply_int(c, o->sign ? sign_extend(v, o->bits) : (long long)v);
        }
    }
    /* Every write failed on OVERFLOW FAIL but the string was created or
     * grown: that is a change too, or the AOF (and a replica) would miss it
     * (Redis 7.0 leaves it out of its AOF). */
    if (!changes && grew) changes = 1;
    if (changes) {
        gdb *db = cmd_db(c);
        /* One dirty count per write that happened, as Redis counts them. */
        for (int k = 0; k < changes; k++) cmd_key_modified(c, db, c->argv[1].p, c->argv[1].n);
        cmd_notify(c, NOTIFY_STRING, "setbit", db, c->argv[1].p, c->argv[1].n);
    }
done:
    free(ops);
}

static void bitfieldCommand(client *c) { bitfield_generic(c, 0); }
static void bitfieldroCommand(client *c) { bitfield_generic(c, 1); }

const cmd_handler bitops_handlers[] = {
    {"setbit", setbitCommand, CMD_LOCK_KEYS},
    {"getbit", getbitCommand, CMD_LOCK_KEYS},
    {"bitcount", bitcountCommand, CMD_LOCK_KEYS},
    {"bitpos", bitposCommand, CMD_LOCK_KEYS},
    {"bitop", bitopCommand, CMD_LOCK_KEYS},
    {"bitfield", bitfieldCommand, CMD_LOCK_KEYS},
    {"bitfield_ro", bitfieldroCommand, CMD_LOCK_KEYS},
    {NULL, NULL, 0},
};
