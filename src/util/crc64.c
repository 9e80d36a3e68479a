/* crc64.c -- CRC-64/Jones: carry-less-multiply folding, table slicing.
 *
 * The bitwise definition (one shift-and-xor per bit of input) costs ~8
 * cycles a byte. Slicing by eight processes a 64-bit word per step with
 * eight lookup tables: table k maps a byte to the CRC contribution of that
 * byte followed by k zero bytes, so the eight bytes of a word are folded
 * independently and xored together. Invariant: tab[0] is the one-byte
 * table of the reflected polynomial, tab[k][b] = (tab[k-1][b] >> 8) ^
 * tab[0][tab[k-1][b] & 0xff]. The tables (16 KiB) are built once.
 *
 * Long inputs on CPUs with PCLMULQDQ (checked once at run time) are folded
 * instead, at ~0.1 cycle a byte. The CRC is linear: with a zero initial
 * state, CRC(M) = M(x) * x^64 mod P, where bit p of an L-bit message is the
 * coefficient of x^(L-1-p) (reflected order). A 16-byte block A followed,
 * D bits later, by more data contributes the same as the 128-bit value
 * clmul(A.lo, K1) ^ clmul(A.hi, K2) placed where the later block starts,
 * with K1 = rev64(x^(D+63) mod P) and K2 = rev64(x^(D-1) mod P) (rev64:
 * bit j holds the coefficient of x^(63-j)); the constants are computed at
 * start-up from P. The state enters by xoring it into the first 8 bytes
 * (exactly what the table loop does), four accumulators fold 64 bytes per
 * step (D = 512), they are folded into one (D = 128), and the CRC of that
 * last 16-byte value, then of the tail, comes from the tables. Invariant
 * of the loop: CRC(state, consumed bytes) == CRC(0, acc0 || acc1 || acc2 ||
 * acc3) for the 64 bytes held in the accumulators. */
#include "util/crc64.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CRC64_CLMUL 1
#endif

/* 0xad93d23594c935a9 with its bits reversed (the reflected form). */
#define CRC64_POLY_REFLECTED 0x95ac9329ac4bc9b5ULL
#define CRC64_POLY 0xad93d23594c935a9ULL

static uint64_t tab[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

#ifdef CRC64_CLMUL
static int have_clmul;
static uint64_t k512[2], k128[2]; /* {K1, K2} for D = 512 and D = 128 bits */

/* x^n mod P (normal bit order: bit i is the coefficient of x^i). */
static uint64_t xpow_mod(unsigned n) {
    uint64_t r = 1;
    for (unsigned i = 0; i < n; i++) r = (r & (1ULL << 63)) ? (r << 1) ^ CRC64_POLY : r << 1;
    return r;
}

static uint64_t rev64(uint64_t v) {
    uint64_t r = 0;
    for (int i = 0; i < 64; i++) r |= ((v >> i) & 1) << (63 - i);
    return r;
}
#endif

static void tab_build(void) {
    for (int b = 0; b < 256; b++) {
        uint64_t c = (uint64_t)b;
        for (int i = 0; i < 8; i++) c = (c & 1) ? (c >> 1) ^ CRC64_POLY_REFLECTED : c >> 1;
        tab[0][b] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int b = 0; b < 256; b++) tab[k][b] = (tab[k - 1][b] >> 8) ^ tab[0][tab[k - 1][b] & 0xff];
#ifdef CRC64_CLMUL
    k512[0] = rev64(xpow_mod(512 + 63));
    k512[1] = rev64(xpow_mod(512 - 1));
    k128[0] = rev64(xpow_mod(128 + 63));
    k128[1] = rev64(xpow_mod(128 - 1));
    __builtin_cpu_init();
    have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}

static uint64_t crc64_table(uint64_t crc, const unsigned char *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        crc ^= w;
        crc = tab[7][crc & 0xff] ^ tab[6][(crc >> 8) & 0xff] ^ tab[5][(crc >> 16) & 0xff] ^
              tab[4][(crc >> 24) & 0xff] ^ tab[3][(crc >> 32) & 0xff] ^ tab[2][(crc >> 40) & 0xff] ^
              tab[1][(crc >> 48) & 0xff] ^ tab[0][crc >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) crc = tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#ifdef CRC64_CLMUL
__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold(__m128i a, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

/* n >= 64. */
__attribute__((target("pclmul,sse4.1"))) static uint64_t crc64_clmul(uint64_t crc, const unsigned char *p,
                                                                      size_t n) {
    const __m128i kw = _mm_set_epi64x((long long)k512[1], (long long)k512[0]);
    const __m128i k1 = _mm_set_epi64x((long long)k128[1], (long long)k128[0]);
    __m128i a0 = _mm_loadu_si128((const __m128i *)p);
    __m128i a1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i a2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i a3 = _mm_loadu_si128((const __m128i *)(p + 48));
    a0 = _mm_xor_si128(a0, _mm_cvtsi64_si128((long long)crc));
    p += 64;
    n -= 64;
    while (n >= 64) {
        a0 = _mm_xor_si128(fold(a0, kw), _mm_loadu_si128((const __m128i *)p));
        a1 = _mm_xor_si128(fold(a1, kw), _mm_loadu_si128((const __m128i *)(p + 16)));
        a2 = _mm_xor_si128(fold(a2, kw), _mm_loadu_si128((const __m128i *)(p + 32)));
        a3 = _mm_xor_si128(fold(a3, kw), _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        n -= 64;
    }
    __m128i a = _mm_xor_si128(fold(a0, k1), a1);
    a = _mm_xor_si128(fold(a, k1), a2);
    a = _mm_xor_si128(fold(a, k1), a3);
    while (n >= 16) {
        a = _mm_xor_si128(fold(a, k1), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
    unsigned char last[16];
    _mm_storeu_si128((__m128i *)last, a);
    return crc64_table(crc64_table(0, last, 16), p, n);
}
#endif

uint64_t crc64_update(uint64_t crc, const void *data, size_t n) {
    pthread_once(&tab_once, tab_build);
#ifdef CRC64_CLMUL
    if (n >= 64 && have_clmul) return crc64_clmul(crc, data, n);
#endif
    return crc64_table(crc, data, n);
}
