/* strval.c -- interim string storage: int64 inline or a malloc'd buffer
 * {len, cap, bytes}. Invariant: ENC_INT values are exactly the canonical
 * decimal strings str_to_ll accepts, so GET of an int round-trips. */
#include "strval.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ds/strutil.h"

typedef struct strbuf {
    size_t len;
    size_t cap;
    char data[];
} strbuf;

static strbuf *sb_alloc(size_t cap) {
    strbuf *b = malloc(sizeof(strbuf) + cap + 1);
    if (!b) return NULL;
    b->len = 0;
    b->cap = cap;
    return b;
}

void strval_set_int(gobj *o, int64_t v) {
    o->type = OBJ_STRING;
    o->enc = ENC_INT;
    o->u.i = v;
}

int strval_set(gobj *o, const char *p, size_t n) {
    long long v;
    o->type = OBJ_STRING;
    if (n <= 20 && str_to_ll(p, n, &v)) {
        strval_set_int(o, v);
        return 0;
    }
    return strval_set_str(o, p, n);
}

int strval_set_str(gobj *o, const char *p, size_t n) {
    o->type = OBJ_STRING;
    strbuf *b = sb_alloc(n);
    if (!b) return -1;
    memcpy(b->data, p, n);
    b->data[n] = '\0';
    b->len = n;
    o->enc = n <= STRVAL_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW;
    o->u.p = b;
    return 0;
}

const char *strval_bytes(const gobj *o, char *tmp, size_t *len) {
    assert(o->type == OBJ_STRING);
    if (o->enc == ENC_INT) {
        *len = (size_t)ll_to_str(tmp, STRUTIL_LLSTR, o->u.i);
        return tmp;
    }
    const strbuf *b = o->u.p;
    *len = b->len;
    return b->data;
}

size_t strval_len(const gobj *o) {
    char tmp[STRUTIL_LLSTR];
    size_t n;
    if (o->enc != ENC_INT) return ((const strbuf *)o->u.p)->len;
    strval_bytes(o, tmp, &n);
    return n;
}

int strval_get_int(const gobj *o, int64_t *v) {
    if (o->enc == ENC_INT) {
        *v = o->u.i;
        return 1;
    }
    const strbuf *b = o->u.p;
    long long x;
    if (b->len > 20 || !str_to_ll(b->data, b->len, &x)) return 0;
    *v = x;
    return 1;
}

char *strval_resize(gobj *o, size_t newlen) {
    strbuf *b;
    if (o->enc == ENC_INT) {
        char tmp[STRUTIL_LLSTR];
        size_t n;
        strval_bytes(o, tmp, &n);
        b = sb_alloc(newlen > n ? newlen : n);
        if (!b) return NULL;
        memcpy(b->data, tmp, n);
        b->len = n;
    } else {
        b = o->u.p;
    }
    assert(newlen >= b->len);
    if (newlen > b->cap) {
        /* Grow geometrically like an append-heavy value needs, up to 1 MiB
         * of slack. */
        size_t cap = newlen < (1u << 20) ? newlen * 2 : newlen + (1u << 20);
        strbuf *nb = realloc(b, sizeof(strbuf) + cap + 1);
        if (!nb) {
            if (o->enc == ENC_INT) free(b);
            return NULL;
        }
        b = nb;
        b->cap = cap;
    }
    memset(b->data + b->len, 0, newlen - b->len);
    b->len = newlen;
    b->data[newlen] = '\0';
    o->enc = ENC_RAW;
    o->u.p = b;
    return b->data;
}

void strval_free(gobj *o) {
    if (o->enc != ENC_INT) free(o->u.p);
    o->u.p = NULL;
}

int strval_dup(gobj *dst, const gobj *src) {
    *dst = *src;
    if (src->enc == ENC_INT) return 0;
    const strbuf *b = src->u.p;
    strbuf *nb = sb_alloc(b->len);
    if (!nb) return -1;
    memcpy(nb->data, b->data, b->len + 1);
    nb->len = b->len;
    dst->u.p = nb;
    return 0;
}

size_t strval_mem_usage(const gobj *o) {
    if (o->enc == ENC_INT) return 0;
    const strbuf *b = o->u.p;
    return sizeof(strbuf) + b->cap + 1;
}
