/* packed.c -- listpack, ziplist, intset and zipmap: validating readers and
 * the listpack / intset builders (layouts in packed.h).
 *
 * The readers never trust a length before checking it against the bytes
 * that remain, so a corrupt blob ends the walk with -1 instead of reading
 * outside it. Multi-byte integers are little-endian except the ziplist's
 * 14- and 32-bit string lengths, which are big-endian. */
#include "persist/packed.h"

#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"


const unsigned char *pk_elem_text(const pk_elem *e, char *buf, size_t *n) {
    if (!e->isint) {
        *n = e->n;
        return e->s;
    }
    *n = (size_t)ll_to_str(buf, STRUTIL_LLSTR, e->v);
    return (const unsigned char *)buf;
}

/* ---- listpack ------------------------------------------------------------ */

#define LP_HDR 6
#define LP_EOF 0xFF

/* The back length of an entry of l bytes, written forwards into buf. */
static size_t lp_backlen(size_t l, unsigned char *buf) {
    if (l <= 127) {
        buf[0] = (unsigned char)l;
        return 1;
    }
    if (l < 16383) {
        buf[0] = (unsigned char)(l >> 7);
        buf[1] = (unsigned char)((l & 127) | 128);
        return 2;
    }
    if (l < 2097151) {
        buf[0] = (unsigned char)(l >> 14);
        buf[1] = (unsigned char)(((l >> 7) & 127) | 128);
        buf[2] = (unsigned char)((l & 127) | 128);
        return 3;
    }
    if (l < 268435455) {
        buf[0] = (unsigned char)(l >> 21);
        buf[1] = (unsigned char)(((l >> 14) & 127) | 128);
        buf[2] = (unsigned char)(((l >> 7) & 127) | 128);
        buf[3] = (unsigned char)((l & 127) | 128);
        return 4;
    }
    buf[0] = (unsigned char)(l >> 28);
    buf[1] = (unsigned char)(((l >> 21) & 127) | 128);
    buf[2] = (unsigned char)(((l >> 14) & 127) | 128);
    buf[3] = (unsigned char)(((l >> 7) & 127) | 128);
    buf[4] = (unsigned char)((l & 127) | 128);
    return 5;
}

int lp_iter_init(lp_iter *it, const unsigned char *blob, size_t n) {
    if (n < LP_HDR + 1 || le_get32(blob) != n || blob[n - 1] != LP_EOF) return -1;
    it->p = blob + LP_HDR;
    it->end = blob + n - 1;
    it->declared = le_get16(blob + 4);
    it->seen = 0;
    return 0;
}

static inline int64_t sext(uint64_t u, int bits) {
    uint64_t m = 1ULL << (bits - 1);
    u &= (bits == 64) ? ~0ULL : ((1ULL << bits) - 1);
    return (int64_t)((u ^ m) - m);
}

int lp_iter_next(lp_iter *it, pk_elem *e) {
    const unsigned char *p = it->p;
    size_t left = (size_t)(it->end - p);
    if (left == 0) {
        /* At the terminator: the count must agree (65535 = not kept). */
        if (it->declared != 65535 && it->declared != it->seen) return -1;
        return 0;
    }
    unsigned b = p[0];
    size_t hdr, dlen = 0;
    e->isint = 1;
    e->s = NULL;
    e->n = 0;
    if ((b & 0x80) == 0) {
        hdr = 1;
        e->v = b;
    } else if ((b & 0xC0) == 0x80) {
        hdr = 1;
        dlen = b & 0x3F;
        e->isint = 0;
    } else if ((b & 0xE0) == 0xC0) {
        if (left < 2) return -1;
        hdr = 2;
        e->v = sext((uint64_t)(b & 0x1F) << 8 | p[1], 13);
    } else if ((b & 0xF0) == 0xE0) {
        if (left < 2) return -1;
        hdr = 2;
        dlen = (size_t)(b & 0x0F) << 8 | p[1];
        e->isint = 0;
    } else {
        switch (b) {
        case 0xF0:
            if (left < 5) return -1;
            hdr = 5;
            dlen = le_get32(p + 1);
            e->isint = 0;
            break;
        case 0xF1:
            if (left < 3) return -1;
            hdr = 3;
            e->v = sext(le_get16(p + 1), 16);
            break;
        case 0xF2:
            if (left < 4) return -1;
            hdr = 4;
            e->v = sext((uint64_t)p[1] | (uint64_t)p[2] << 8 | (uint64_t)p[3] << 16, 24);
            break;
        case 0xF3:
            if (left < 5) return -1;
            hdr = 5;
            e->v = sext(le_get32(p + 1), 32);
            break;
        case 0xF4:
            if (left < 9) return -1;
            hdr = 9;
            e->v = (int64_t)le_get64(p + 1);
            break;
        default: return -1; /* 0xF5..0xFE are unused, 0xFF cannot be here */
        }
    }
    if (dlen > left - hdr) return -1;
    size_t l = hdr + dlen;
    if (l <= 127) {
        /* The common case: a one-byte back length. */
        if (left - l < 1 || p[l] != l) return -1;
        it->p = p + l + 1;
    } else {
        unsigned char bl[5];
        size_t bn = lp_backlen(l, bl);
        if (bn > left - l || memcmp(p + l, bl, bn) != 0) return -1;
        it->p = p + l + bn;
    }
    if (!e->isint) {
        e->s = p + hdr;
        e->n = dlen;
    }
    it->seen++;
    return 1;
}

void lpb_init(lp_builder *b) {
    memset(b, 0, sizeof(*b));
    b->len = LP_HDR;
}

void lpb_reset(lp_builder *b) {
    b->len = LP_HDR;
    b->count = 0;
    b->oom = 0;
}

void lpb_free(lp_builder *b) {
    free(b->p);
    memset(b, 0, sizeof(*b));
}

/* Room for `more` bytes past len (plus the terminator); 0 on failure. */
static int lpb_room(lp_builder *b, size_t more) {
    if (b->oom) return 0;
    size_t need = b->len + more + 1;
    if (need <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap *= 2;
    unsigned char *np = realloc(b->p, cap);
    if (!np) {
        b->oom = 1;
        return 0;
    }
    b->p = np;
    b->cap = cap;
    return 1;
}

static void lpb_entry_end(lp_builder *b, size_t l) {
    b->len += l;
    b->len += lp_backlen(l, b->p + b->len);
    b->count++;
}

void lpb_add_int(lp_builder *b, int64_t v) {
    if (!lpb_room(b, 9 + 1)) return;
    unsigned char *p = b->p + b->len;
    size_t l;
    if (v >= 0 && v <= 127) {
        p[0] = (unsigned char)v;
        l = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint64_t u = (uint64_t)v & 0x1FFF;
        p[0] = (unsigned char)(0xC0 | (u >> 8));
        p[1] = (unsigned char)(u & 0xFF);
        l = 2;
    } else if (v >= -32768 && v <= 32767) {
        p[0] = 0xF1;
        le_put16(p + 1, (uint16_t)v);
        l = 3;
    } else if (v >= -8388608 && v <= 8388607) {
        uint32_t u = (uint32_t)v;
        p[0] = 0xF2;
        p[1] = (unsigned char)u;
        p[2] = (unsigned char)(u >> 8);
        p[3] = (unsigned char)(u >> 16);
        l = 4;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        p[0] = 0xF3;
        le_put32(p + 1, (uint32_t)v);
        l = 5;
    } else {
        p[0] = 0xF4;
        le_put32(p + 1, (uint32_t)(uint64_t)v);
        le_put32(p + 5, (uint32_t)((uint64_t)v >> 32));
        l = 9;
    }
    lpb_entry_end(b, l);
}

void lpb_add_str(lp_builder *b, const void *s, size_t n) {
    long long v;
    if (n <= 20 && n > 0 && str_to_ll(s, n, &v)) {
        lpb_add_int(b, v);
        return;
    }
    if (!lpb_room(b, n + 5 + 5)) return;
    unsigned char *p = b->p + b->len;
    size_t hdr;
    if (n < 64) {
        p[0] = (unsigned char)(0x80 | n);
        hdr = 1;
    } else if (n < 4096) {
        p[0] = (unsigned char)(0xE0 | (n >> 8));
        p[1] = (unsigned char)(n & 0xFF);
        hdr = 2;
    } else {
        p[0] = 0xF0;
        le_put32(p + 1, (uint32_t)n);
        hdr = 5;
    }
    memcpy(p + hdr, s, n);
    lpb_entry_end(b, hdr + n);
}

const unsigned char *lpb_finish(lp_builder *b, size_t *n) {
    if (!lpb_room(b, 0)) return NULL;
    b->p[b->len] = LP_EOF;
    size_t total = b->len + 1;
    le_put32(b->p, (uint32_t)total);
    le_put16(b->p + 4, b->count < 65535 ? (uint16_t)b->count : 65535);
    *n = total;
    return b->p;
}

/* ---- ziplist ------------------------------------------------------------- */

#define ZL_HDR 10
#define ZL_END 0xFF
#define ZL_BIGPREV 254

int zl_iter_init(zl_iter *it, const unsigned char *blob, size_t n) {
    if (n < ZL_HDR + 1 || le_get32(blob) != n || blob[n - 1] != ZL_END) return -1;
    it->base = blob;
    it->p = blob + ZL_HDR;
    it->end = blob + n - 1;
    it->lastoff = le_get32(blob + 4);
    it->declared = le_get16(blob + 8);
    it->prevsize = 0;
    it->seen = 0;
    return 0;
}

int zl_iter_next(zl_iter *it, pk_elem *e) {
    const unsigned char *p = it->p;
    size_t left = (size_t)(it->end - p);
    if (left == 0) {
        if (it->declared != 65535 && it->declared != it->seen) return -1;
        /* The tail offset names the last entry (the header end when empty). */
        size_t want = it->seen ? (size_t)(p - it->base) - it->prevsize : ZL_HDR;
        if (it->lastoff != want) return -1;
        return 0;
    }
    size_t off = 0, prev;
    if (p[0] < ZL_BIGPREV) {
        prev = p[0];
        off = 1;
    } else if (p[0] == ZL_BIGPREV) {
        if (left < 5) return -1;
        prev = le_get32(p + 1);
        off = 5;
    } else {
        return -1;
    }
    if (prev != it->prevsize) return -1;
    if (off >= left) return -1;
    unsigned b = p[off];
    size_t hdr, dlen = 0;
    e->isint = 1;
    e->s = NULL;
    e->n = 0;
    switch (b >> 6) {
    case 0:
        hdr = 1;
        dlen = b & 0x3F;
        e->isint = 0;
        break;
    case 1:
        if (left - off < 2) return -1;
        hdr = 2;
        dlen = (size_t)(b & 0x3F) << 8 | p[off + 1];
        e->isint = 0;
        break;
    case 2:
        if (b != 0x80 || left - off < 5) return -1;
        hdr = 5;
        dlen = (size_t)p[off + 1] << 24 | (size_t)p[off + 2] << 16 | (size_t)p[off + 3] << 8 | p[off + 4];
        e->isint = 0;
        break;
    default:
        hdr = 1;
        switch (b) {
        case 0xC0: dlen = 2; break;
        case 0xD0: dlen = 4; break;
        case 0xE0: dlen = 8; break;
        case 0xF0: dlen = 3; break;
        case 0xFE: dlen = 1; break;
        default:
            if (b >= 0xF1 && b <= 0xFD) {
                e->v = (int64_t)(b & 0x0F) - 1;
                dlen = 0;
                break;
            }
            return -1;
        }
    }
    if (hdr > left - off || dlen > left - off - hdr) return -1;
    const unsigned char *d = p + off + hdr;
    if (e->isint) {
        switch (b) {
        case 0xC0: e->v = sext(le_get16(d), 16); break;
        case 0xD0: e->v = sext(le_get32(d), 32); break;
        case 0xE0: e->v = (int64_t)le_get64(d); break;
        case 0xF0: e->v = sext((uint64_t)d[0] | (uint64_t)d[1] << 8 | (uint64_t)d[2] << 16, 24); break;
        case 0xFE: e->v = (int8_t)d[0]; break;
        default: break;
        }
    } else {
        e->s = d;
        e->n = dlen;
    }
    size_t size = off + hdr + dlen;
    it->prevsize = size;
    it->p = p + size;
    it->seen++;
    return 1;
}

/* ---- intset -------------------------------------------------------------- */

int is_iter_init(is_iter *it, const unsigned char *blob, size_t n) {
    if (n < 8) return -1;
    uint32_t w = le_get32(blob), c = le_get32(blob + 4);
    if (w != 2 && w != 4 && w != 8) return -1;
    if ((uint64_t)w * c + 8 != n) return -1;
    it->p = blob + 8;
    it->width = w;
    it->count = c;
    it->i = 0;
    it->prev = 0;
    return 0;
}

int is_iter_next(is_iter *it, int64_t *v) {
    if (it->i == it->count) return 0;
    const unsigned char *p = it->p + (size_t)it->i * it->width;
    int64_t x = it->width == 2 ? sext(le_get16(p), 16) : it->width == 4 ? sext(le_get32(p), 32) : (int64_t)le_get64(p);
    if (it->i > 0 && x <= it->prev) return -1;
    it->prev = x;
    it->i++;
    *v = x;
    return 1;
}

unsigned char *is_build(const int64_t *v, size_t n, size_t *blob_len) {
    uint32_t w = 2;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < INT32_MIN || v[i] > INT32_MAX) {
            w = 8;
            break;
        }
        if (v[i] < INT16_MIN || v[i] > INT16_MAX) w = 4;
    }
    size_t len = 8 + (size_t)w * n;
    unsigned char *b = malloc(len);
    if (!b) return NULL;
    le_put32(b, w);
    le_put32(b + 4, (uint32_t)n);
    unsigned char *p = b + 8;
    for (size_t i = 0; i < n; i++, p += w) {
        uint64_t u = (uint64_t)v[i];
        for (uint32_t k = 0; k < w; k++) p[k] = (unsigned char)(u >> (8 * k));
    }
    *blob_len = len;
    return b;
}

/* ---- zipmap -------------------------------------------------------------- */

#define ZM_BIGLEN 254
#define ZM_END 255

int zm_iter_init(zm_iter *it, const unsigned char *blob, size_t n) {
    if (n < 2 || blob[n - 1] != ZM_END) return -1;
    it->p = blob + 1;
    it->end = blob + n - 1;
    it->want_value = 0;
    it->free_after = 0;
    return 0;
}

/* A zipmap length at p: 1 or 5 bytes; -1 when it does not fit. */
static int zm_len(const unsigned char *p, size_t left, size_t *len, size_t *used) {
    if (left < 1) return -1;
    if (p[0] < ZM_BIGLEN) {
        *len = p[0];
        *used = 1;
        return 0;
    }
    if (p[0] != ZM_BIGLEN || left < 5) return -1;
    *len = le_get32(p + 1);
    *used = 5;
    return 0;
}

int zm_iter_next(zm_iter *it, pk_elem *e) {
    const unsigned char *p = it->p;
    size_t left = (size_t)(it->end - p);
    if (!it->want_value && left == 0) return 0;
    size_t len, used;
    if (zm_len(p, left, &len, &used) != 0) return -1;
    p += used;
    left -= used;
    unsigned freeb = 0;
    if (it->want_value) {
        if (left < 1) return -1;
        freeb = *p++;
        left--;
    }
    if (len > left || freeb > left - len) return -1;
    e->isint = 0;
    e->s = p;
    e->n = len;
    it->p = p + len + freeb;
    it->want_value = !it->want_value;
    return 1;
}
