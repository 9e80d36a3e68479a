/* hll.c -- HyperLogLog values (layout and invariant in hll.h).
 *
 * Every routine works on a struct hll or on read-only bytes. The command
 * layer hands in a private copy of a sparse value (its length changes) and
 * writes it back; a dense value's updates never reallocate, so its struct
 * may view the stored bytes themselves. Sparse updates edit the opcode
 * stream in place, splitting the run that covers the register into at
 * most three opcodes and then joining equal neighbouring VAL runs, in the
 * same order as Redis 7.0, so that a stream of PFADDs leaves the same
 * bytes as Redis would. */
#include "ds/hll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HLL_MAX_ENCODING 1
#define HLL_REG_MASK ((1 << HLL_BITS) - 1)
#define ZERO_MAX_LEN 64
#define XZERO_MAX_LEN 16384
#define VAL_MAX_LEN 4
#define ALPHA_INF 0.721347520444481703680 /* 0.5 / ln(2) */

/* ---- sparse opcodes -------------------------------------------------------- */

static inline int op_is_zero(unsigned char b) { return (b & 0xc0) == 0; }
static inline int op_is_xzero(unsigned char b) { return (b & 0xc0) == 0x40; }
static inline int op_is_val(unsigned char b) { return (b & 0x80) != 0; }
static inline int zero_len(unsigned char b) { return (b & 0x3f) + 1; }
static inline int val_value(unsigned char b) { return ((b >> 2) & 0x1f) + 1; }
static inline int val_len(unsigned char b) { return (b & 0x3) + 1; }
/* Second byte of an XZERO at p: zero past end. */
static inline int xzero_len(const unsigned char *p, const unsigned char *end) {
    int lo = p + 1 < end ? p[1] : 0;
    return (((p[0] & 0x3f) << 8) | lo) + 1;
}
static inline unsigned char op_zero(int len) { return (unsigned char)(len - 1); }
static inline void op_xzero(unsigned char *p, int len) {
    len--;
    p[0] = (unsigned char)((len >> 8) | 0x40);
    p[1] = (unsigned char)(len & 0xff);
}
static inline unsigned char op_val(int val, int len) {
    return (unsigned char)(((val - 1) << 2 | (len - 1)) | 0x80);
}

void hll_sparse_op(const unsigned char **pp, const unsigned char *end, int *kind, int *runlen, int *val) {
    const unsigned char *p = *pp;
    if (op_is_zero(*p)) {
        *kind = 'z';
        *runlen = zero_len(*p);
        *val = 0;
        *pp = p + 1;
    } else if (op_is_xzero(*p)) {
        *kind = 'Z';
        *runlen = xzero_len(p, end);
        *val = 0;
        *pp = p + 2;
    } else {
        *kind = 'v';
        *runlen = val_len(*p);
        *val = val_value(*p);
        *pp = p + 1;
    }
}

/* ---- header ------------------------------------------------------------------ */

int hll_check(const unsigned char *p, size_t len) {
    if (len < HLL_HDR_SIZE || memcmp(p, "HYLL", 4) != 0) return -1;
    if (p[4] > HLL_MAX_ENCODING) return -1;
    if (p[4] == HLL_DENSE && len != HLL_DENSE_SIZE) return -1;
    return 0;
}

int hll_cache_get(const unsigned char *p, uint64_t *card) {
    if (p[15] & 0x80) return 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[8 + i];
    *card = v;
    return 1;
}

void hll_cache_set(unsigned char *p, uint64_t card) {
    for (int i = 0; i < 8; i++) p[8 + i] = (unsigned char)(card >> (8 * i));
}

void hll_cache_invalidate(unsigned char *p) { p[15] |= 0x80; }

/* ---- buffers ------------------------------------------------------------------ */

static int hll_reserve(hll *h, size_t need) {
    if (need <= h->cap) return 0;
    size_t cap = need < HLL_DENSE_SIZE ? HLL_DENSE_SIZE : need;
    unsigned char *np = realloc(h->p, cap);
    if (!np) return HLL_ERR_NOMEM;
    h->p = np;
    h->cap = cap;
    return 0;
}

int hll_load(hll *h, const unsigned char *p, size_t len) {
    h->p = NULL;
    h->len = h->cap = 0;
    if (hll_reserve(h, len + 8) != 0) return HLL_ERR_NOMEM;
    memcpy(h->p, p, len);
    h->len = len;
    return 0;
}

int hll_init_empty(hll *h) {
    unsigned char e[HLL_HDR_SIZE + 2] = {'H', 'Y', 'L', 'L', HLL_SPARSE};
    /* One XZERO covers all 16384 registers. */
    op_xzero(e + HLL_HDR_SIZE, HLL_REGISTERS);
    return hll_load(h, e, sizeof(e));
}

void hll_free(hll *h) {
    free(h->p);
    h->p = NULL;
    h->len = h->cap = 0;
}

/* ---- hashing ------------------------------------------------------------------ */

uint64_t hll_murmur64a(const void *key, size_t n, uint64_t seed) {
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    const unsigned char *d = key;
    /* Redis passes the length as an int; the multiplication is 64-bit. */
    uint64_t h = seed ^ ((uint64_t)(int64_t)(int)n * m);
    size_t whole = n & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t k = 0;
        for (int b = 7; b >= 0; b--) k = (k << 8) | d[i + (size_t)b]; /* little endian word */
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    const unsigned char *t = d + whole;
    switch (n & 7) {
    case 7: h ^= (uint64_t)t[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)t[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)t[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)t[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)t[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)t[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)t[0];
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int hll_pattern(const void *ele, size_t n, long *index) {
    uint64_t hash = hll_murmur64a(ele, n, 0xadc83b19ULL);
    *index = (long)(hash & (HLL_REGISTERS - 1));
    hash >>= HLL_P;
    hash |= (uint64_t)1 << HLL_Q; /* bounds the count at HLL_Q + 1 */
    return __builtin_ctzll(hash) + 1;
}

/* ---- dense ---------------------------------------------------------------------- */

int hll_dense_get(const unsigned char *regs, long i) {
    size_t bit = (size_t)i * HLL_BITS, byte = bit >> 3;
    unsigned fb = bit & 7;
    unsigned v = regs[byte] >> fb;
    if (fb > 8 - HLL_BITS) v |= (unsigned)regs[byte + 1] << (8 - fb);
    return (int)(v & HLL_REG_MASK);
}

void hll_dense_put(unsigned char *regs, long i, int val) {
    size_t bit = (size_t)i * HLL_BITS, byte = bit >> 3;
    unsigned fb = bit & 7, v = (unsigned)val & HLL_REG_MASK;
    regs[byte] = (unsigned char)((regs[byte] & ~(HLL_REG_MASK << fb)) | (v << fb));
    if (fb > 8 - HLL_BITS) {
        unsigned fb8 = 8 - fb;
        regs[byte + 1] = (unsigned char)((regs[byte + 1] & ~(HLL_REG_MASK >> fb8)) | (v >> fb8));
    }
}

static int dense_set(unsigned char *regs, long index, int count) {
    if (count <= hll_dense_get(regs, index)) return 0;
    hll_dense_put(regs, index, count);
    return 1;
}

int hll_to_dense(hll *h) {
    if (h->p[4] == HLL_DENSE) return 0;
    unsigned char *d = calloc(1, HLL_DENSE_SIZE + 8);
    if (!d) return HLL_ERR_NOMEM;
    memcpy(d, h->p, HLL_HDR_SIZE); /* magic, unused bytes and cached count */
    d[4] = HLL_DENSE;
    const unsigned char *p = h->p + HLL_HDR_SIZE, *end = h->p + h->len;
    long idx = 0;
    while (p < end) {
        int kind, run, val;
        hll_sparse_op(&p, end, &kind, &run, &val);
        if (kind != 'v') {
            idx += run;
            continue;
        }
        if (idx + run > HLL_REGISTERS) {
            idx = -1; /* a VAL past the last register: invalid (Redis 7.0.15) */
            break;
        }
        while (run--) hll_dense_put(d + HLL_HDR_SIZE, idx++, val);
    }
    if (idx != HLL_REGISTERS) {
        free(d);
        return HLL_ERR_INVALID;
    }
    free(h->p);
    h->p = d;
    h->len = HLL_DENSE_SIZE;
    h->cap = HLL_DENSE_SIZE + 8;
    return 0;
}

/* ---- sparse update --------------------------------------------------------------- */

/* Writes a run of len zero registers at n: ZERO when it fits, else XZERO.
 * Returns the bytes written. */
static int put_zeros(unsigned char *n, int len) {
    if (len > ZERO_MAX_LEN) {
        op_xzero(n, len);
        return 2;
    }
    n[0] = op_zero(len);
    return 1;
}

static int promote(hll *h, long index, int count) {
    int rc = hll_to_dense(h);
    if (rc != 0) return rc;
    /* The register needed a change, so the dense update must make one. */
    return dense_set(h->p + HLL_HDR_SIZE, index, count);
}

static int sparse_set(hll *h, long index, int count, size_t sparse_max) {
    if (count > HLL_SPARSE_VAL_MAX) return promote(h, index, count);
    /* A split grows the stream by at most 3 bytes (XZERO -> XZERO VAL XZERO). */
    if (hll_reserve(h, h->len + 3) != 0) return HLL_ERR_NOMEM;

    /* Step 1: the opcode covering index, its first register and neighbours. */
    unsigned char *sparse = h->p + HLL_HDR_SIZE, *p = sparse, *end = h->p + h->len, *prev = NULL;
    long first = 0, span = 0;
    while (p < end) {
        long oplen = 1;
        if (op_is_zero(*p)) {
            span = zero_len(*p);
        } else if (op_is_val(*p)) {
            span = val_len(*p);
        } else {
            span = xzero_len(p, end);
            oplen = 2;
        }
        if (index <= first + span - 1) break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end) return HLL_ERR_INVALID;
    unsigned char *next = op_is_xzero(*p) ? p + 2 : p + 1;
    if (next >= end) next = NULL;
    int is_zero = op_is_zero(*p), is_xzero = op_is_xzero(*p), is_val = op_is_val(*p);
    long runlen = is_zero ? zero_len(*p) : is_xzero ? xzero_len(p, end) : val_len(*p);

    /* Step 2: the easy cases in place, else the split sequence. */
    if (is_val) {
        if (val_value(*p) >= count) return 0;
        if (runlen == 1) {
            *p = op_val(count, 1);
            goto updated;
        }
    }
    if (is_zero && runlen == 1) {
        *p = op_val(count, 1);
        goto updated;
    }
    unsigned char seq[5], *n = seq;
    long last = first + span - 1;
    if (is_zero || is_xzero) {
        if (index != first) n += put_zeros(n, (int)(index - first));
        *n++ = op_val(count, 1);
        if (index != last) n += put_zeros(n, (int)(last - index));
    } else {
        int cur = val_value(*p);
        if (index != first) *n++ = op_val(cur, (int)(index - first));
        *n++ = op_val(count, 1);
        if (index != last) *n++ = op_val(cur, (int)(last - index));
    }

    /* Step 3: replace the old opcode with the sequence. */
    long seqlen = n - seq, oldlen = is_xzero ? 2 : 1, delta = seqlen - oldlen;
    if (delta > 0 && h->len + (size_t)delta > sparse_max) return promote(h, index, count);
    if (delta && next) memmove(next + delta, next, (size_t)(end - next));
    h->len = (size_t)((long)h->len + delta);
    memcpy(p, seq, (size_t)seqlen);
    end += delta;

updated:
    /* Step 4: join equal adjacent VAL runs, looking at up to 5 opcodes
     * from the one before the change. */
    p = prev ? prev : sparse;
    for (int scan = 5; p < end && scan--;) {
        if (op_is_xzero(*p)) {
            p += 2;
            continue;
        }
        if (op_is_zero(*p)) {
            p++;
            continue;
        }
        if (p + 1 < end && op_is_val(p[1]) && val_value(p[0]) == val_value(p[1])) {
            int len = val_len(p[0]) + val_len(p[1]);
            if (len <= VAL_MAX_LEN) {
                p[1] = op_val(val_value(p[0]), len);
                memmove(p, p + 1, (size_t)(end - p - 1));
                h->len--;
                end--;
                continue; /* try the joined run with its right neighbour */
            }
        }
        p++;
    }
    hll_cache_invalidate(h->p);
    return 1;
}

int hll_set(hll *h, long index, int count, size_t sparse_max) {
    switch (h->p[4]) {
    case HLL_DENSE: return dense_set(h->p + HLL_HDR_SIZE, index, count);
    case HLL_SPARSE: return sparse_set(h, index, count, sparse_max);
    default: return HLL_ERR_INVALID;
    }
}

int hll_add(hll *h, const void *ele, size_t n, size_t sparse_max) {
    long index;
    int count = hll_pattern(ele, n, &index);
    return hll_set(h, index, count, sparse_max);
}

/* ---- merge and count -------------------------------------------------------------- */

int hll_merge_regs(uint8_t *max, const unsigned char *v, size_t len) {
    if (v[4] == HLL_DENSE) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            int r = hll_dense_get(v + HLL_HDR_SIZE, i);
            if (r > max[i]) max[i] = (uint8_t)r;
        }
        return 0;
    }
    const unsigned char *p = v + HLL_HDR_SIZE, *end = v + len;
    long i = 0;
    while (p < end) {
        int kind, run, val;
        hll_sparse_op(&p, end, &kind, &run, &val);
        if (kind != 'v') {
            i += run;
            continue;
        }
        if (i + run > HLL_REGISTERS) return HLL_ERR_INVALID; /* VAL past the end */
        for (; run; run--, i++)
            if (val > max[i]) max[i] = (uint8_t)val;
    }
    return i == HLL_REGISTERS ? 0 : HLL_ERR_INVALID;
}

/* Ertl's tau and sigma series ("New cardinality estimation algorithms for
 * HyperLogLog sketches"), iterated until the sum stops changing. */
static double hll_tau(double x) {
    if (x == 0. || x == 1.) return 0.;
    double zp, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        zp = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (zp != z);
    return z / 3;
}

static double hll_sigma(double x) {
    if (x == 1.) return INFINITY;
    double zp, y = 1, z = x;
    do {
        x *= x;
        zp = z;
        z += x * y;
        y += y;
    } while (zp != z);
    return z;
}

static uint64_t count_histo(const long long *histo) {
    double m = HLL_REGISTERS;
    double z = m * hll_tau((m - histo[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += histo[j];
        z *= 0.5;
    }
    z += m * hll_sigma(histo[0] / m);
    return (uint64_t)llroundl(ALPHA_INF * m * m / z);
}

uint64_t hll_count(const unsigned char *v, size_t len, int *invalid) {
    long long histo[64] = {0};
    if (v[4] == HLL_DENSE) {
        for (long i = 0; i < HLL_REGISTERS; i++) histo[hll_dense_get(v + HLL_HDR_SIZE, i)]++;
    } else {
        const unsigned char *p = v + HLL_HDR_SIZE, *end = v + len;
        long idx = 0;
        while (p < end) {
            int kind, run, val;
            hll_sparse_op(&p, end, &kind, &run, &val);
            idx += run;
            histo[val] += run;
        }
        if (idx != HLL_REGISTERS && invalid) *invalid = 1;
    }
    return count_histo(histo);
}

uint64_t hll_count_regs(const uint8_t *regs) {
    long long histo[64] = {0};
    for (long i = 0; i < HLL_REGISTERS; i++) histo[regs[i] & 63]++;
    return count_histo(histo);
}
