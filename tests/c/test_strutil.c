/* test_strutil.c -- ds/strutil edge cases. Expected values were checked
 * against redis-server 7.0.15 (INCRBY, INCRBYFLOAT, KEYS) where Redis
 * exposes the function. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/strutil.h"
#include "unit.h"

static int ll_ok(const char *s, long long want) {
    long long v = 12345;
    return str_to_ll(s, strlen(s), &v) && v == want;
}

static int ll_bad(const char *s) {
    long long v = 12345;
    return !str_to_ll(s, strlen(s), &v) && v == 12345;
}

TEST(strutil, str_to_ll) {
    CHECK(ll_ok("0", 0));
    CHECK(ll_ok("1", 1));
    CHECK(ll_ok("-1", -1));
    CHECK(ll_ok("1234567890", 1234567890));
    CHECK(ll_ok("9223372036854775807", LLONG_MAX));
    CHECK(ll_ok("-9223372036854775808", LLONG_MIN));
    const char *bad[] = {"",   "-",   "-0",  "+1",  "+0",  "01",  "00",  "-01", " 1",  "1 ",
                         "1a", "a1",  "--1", "0x1", "1e3", "1.0", "1,0", "\t1", "-+1", "+-1",
                         "9223372036854775808",  "-9223372036854775809", "18446744073709551615",
                         "18446744073709551616", "99999999999999999999", "123456789012345678901",
                         "-99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) CHECK_MSG(ll_bad(bad[i]), "accepted \"%s\"", bad[i]);
    /* Binary safe: the length decides, not a NUL. */
    long long v;
    CHECK(str_to_ll("123", 2, &v) && v == 12);
    CHECK(!str_to_ll("1\0", 2, &v));
    CHECK(!str_to_ll("12", 0, &v));
}

TEST(strutil, str_to_ull_and_back) {
    unsigned long long u;
    CHECK(str_to_ull("18446744073709551615", 20, &u) && u == ULLONG_MAX);
    CHECK(!str_to_ull("18446744073709551616", 20, &u));
    CHECK(!str_to_ull("-1", 2, &u));
    CHECK(!str_to_ull("01", 2, &u));
    CHECK(str_to_ull("0", 1, &u) && u == 0);
    char buf[STRUTIL_LLSTR];
    CHECK_EQ(ll_to_str(buf, sizeof(buf), LLONG_MIN), 20);
    CHECK_STR(buf, "-9223372036854775808");
    CHECK_EQ(ll_to_str(buf, sizeof(buf), 0), 1);
    CHECK_STR(buf, "0");
    CHECK_EQ(ll_to_str(buf, 3, 123), 0); /* no room for the NUL */
    CHECK_EQ(ll_to_str(buf, 4, -12), 3);
    CHECK_STR(buf, "-12");
    unit_rng r = {77};
    for (int i = 0; i < 200000; i++) {
        long long x = (long long)unit_rand(&r) >> (unit_rand(&r) % 64);
        int n = ll_to_str(buf, sizeof(buf), x);
        CHECK(n > 0);
        long long y;
        CHECK_MSG(str_to_ll(buf, (size_t)n, &y) && y == x, "round trip of %lld", x);
        char want[32];
        CHECK_EQ(n, snprintf(want, sizeof(want), "%lld", x));
        CHECK_STR(buf, want);
    }
    /* Every length, both signs, at the edges of each power of ten. */
    for (long long p = 1; p <= 1000000000000000000LL; p *= 10) {
        long long xs[] = {p - 1, p, p + 1, -(p - 1), -p, -(p + 1)};
        for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
            char want[32];
            int n = ll_to_str(buf, sizeof(buf), xs[i]);
            CHECK_EQ(n, snprintf(want, sizeof(want), "%lld", xs[i]));
            CHECK_STR(buf, want);
            /* exactly room for it and the NUL, and one byte less */
            CHECK_EQ(ll_to_str(buf, (size_t)n + 1, xs[i]), n);
            CHECK_EQ(ll_to_str(buf, (size_t)n, xs[i]), 0);
        }
    }
    CHECK_EQ(ll_to_str(buf, sizeof(buf), LLONG_MAX), 19);
    CHECK_STR(buf, "9223372036854775807");
}

TEST(strutil, str_to_double) {
    double d;
    CHECK(str_to_double("1.5", 3, &d) && d == 1.5);
    CHECK(str_to_double("-0", 2, &d) && d == 0 && signbit(d));
    CHECK(str_to_double("inf", 3, &d) && isinf(d) && d > 0);
    CHECK(str_to_double("-inf", 4, &d) && isinf(d) && d < 0);
    CHECK(str_to_double("1e308", 5, &d));
    CHECK(str_to_double("4e-320", 6, &d) && d > 0); /* subnormal: a value */
    CHECK(!str_to_double("1e309", 5, &d));          /* overflow */
    CHECK(!str_to_double("1e-400", 6, &d));         /* underflow to zero */
    CHECK(!str_to_double("nan", 3, &d));
    CHECK(!str_to_double(" 1", 2, &d));
    CHECK(!str_to_double("1 ", 2, &d));
    CHECK(!str_to_double("", 0, &d));
    CHECK(!str_to_double("1.5x", 4, &d));
    CHECK(!str_to_double("1\0", 2, &d));
    /* No length limit: DBL_MAX written out in full, 327 characters. */
    char big[400];
    int n = snprintf(big, sizeof(big), "%.17f", DBL_MAX);
    CHECK(n > 300 && str_to_double(big, (size_t)n, &d) && d == DBL_MAX);
    big[n - 1] = 'x';
    CHECK(!str_to_double(big, (size_t)n, &d));
}

TEST(strutil, str_to_ldouble) {
    long double v;
    CHECK(str_to_ldouble("10.5", 4, &v) && v == 10.5L);
    CHECK(str_to_ldouble("3.0e3", 5, &v) && v == 3000.0L);
    /* Redis accepts a subnormal result (INCRBYFLOAT x 1e-4940 works) but
     * refuses overflow and underflow to zero ("not a valid float"). */
    CHECK(str_to_ldouble("1e-4940", 7, &v) && v > 0);
    CHECK(!str_to_ldouble("1e-4960", 7, &v));
    CHECK(!str_to_ldouble("1e5000", 6, &v));
    CHECK(!str_to_ldouble("nan", 3, &v));
    CHECK(!str_to_ldouble(" 1", 2, &v));
    CHECK(!str_to_ldouble("", 0, &v));
}

static const char *human(long double v) {
    static char buf[STRUTIL_LDSTR];
    int n = ld_to_str_human(buf, sizeof(buf), v);
    if (n <= 0) return "<err>";
    CHECK_EQ((size_t)n, strlen(buf));
    return buf;
}

static long double ld(const char *s) {
    long double v;
    CHECK_MSG(str_to_ldouble(s, strlen(s), &v), "parse %s", s);
    return v;
}

TEST(strutil, ld_to_str_human) {
    /* Each line is an INCRBYFLOAT observed on redis-server 7.0.15. */
    CHECK_STR(human(ld("10.5") + ld("3.0e3")), "3010.5");
    CHECK_STR(human(ld("0.1") + ld("0.2")), "0.3");
    CHECK_STR(human(ld("5") + ld("-5")), "0");
    CHECK_STR(human(ld("1") + ld("1e-18")), "1");
    CHECK_STR(human(ld("0") + ld("-1e-18")), "0"); /* "-0" is spelled "0" */
    CHECK_STR(human(ld("1e20") + ld("0")), "100000000000000000000");
    CHECK_STR(human(ld("3") + ld("0.5")), "3.5");
    CHECK_STR(human(ld("1.1") + ld("0")), "1.1");
    CHECK_STR(human(-2.25L), "-2.25");
    CHECK_STR(human(-0.0L), "0");
    CHECK_STR(human(100.0L), "100");
    CHECK_STR(human(INFINITY), "<err>");
    CHECK_STR(human(-INFINITY), "<err>");
    CHECK_STR(human(NAN), "<err>");
    char small[4];
    CHECK_EQ(ld_to_str_human(small, sizeof(small), 1.5L), 0); /* "1.50000000000000000" does not fit */
    CHECK_EQ(ld_to_str_human(small, sizeof(small), LDBL_MAX), 0);
}

TEST(strutil, double_to_str) {
    char buf[64];
    double_to_str(buf, sizeof(buf), 1.5);
    CHECK_STR(buf, "1.5");
    double_to_str(buf, sizeof(buf), 0.1);
    CHECK_STR(buf, "0.10000000000000001");
    double_to_str(buf, sizeof(buf), INFINITY);
    CHECK_STR(buf, "inf");
    double_to_str(buf, sizeof(buf), -INFINITY);
    CHECK_STR(buf, "-inf");
    double_to_str(buf, sizeof(buf), 1e300);
    CHECK_STR(buf, "1.0000000000000001e+300");
    double_to_str(buf, sizeof(buf), 3.0);
    CHECK_STR(buf, "3");
}

static int gm(const char *p, const char *s) { return glob_match(p, strlen(p), s, strlen(s), 0); }
static int gmi(const char *p, const char *s) { return glob_match(p, strlen(p), s, strlen(s), 1); }

TEST(strutil, glob_basics) {
    CHECK(gm("*", "anything"));
    CHECK(gm("h?llo", "hello") && gm("h?llo", "hallo") && !gm("h?llo", "hllo"));
    CHECK(gm("h*llo", "hllo") && gm("h*llo", "heeeello") && !gm("h*llo", "hell"));
    CHECK(gm("h[ae]llo", "hello") && gm("h[ae]llo", "hallo") && !gm("h[ae]llo", "hillo"));
    CHECK(gm("h[^e]llo", "hallo") && gm("h[^e]llo", "hbllo") && !gm("h[^e]llo", "hello"));
    CHECK(gm("h[a-b]llo", "hallo") && gm("h[a-b]llo", "hbllo") && !gm("h[a-b]llo", "hcllo"));
    CHECK(gm("h\\*llo", "h*llo") && !gm("h\\*llo", "hello"));
    CHECK(gm("a*", "a") && gm("a**", "a") && gm("*a", "a") && !gm("a?", "a"));
    CHECK(gm("", "") && !gm("", "a") && !gm("a", ""));
    CHECK(gm("user:*:name", "user:42:name") && !gm("user:*:name", "user:42:names"));
    CHECK(gmi("HELLO", "hello") && gmi("h[A-C]llo", "hbllo") && gmi("H*O", "hello"));
    CHECK(!gm("HELLO", "hello") && !gm("h[A-C]llo", "hbllo"));
    /* Binary safe: lengths, not NULs. */
    CHECK(glob_match("a?c", 3, "a\0c", 3, 0));
    CHECK(!glob_match("a*", 2, "b\0", 2, 0));
}

TEST(strutil, glob_redis_quirks) {
    /* Observed with KEYS on redis-server 7.0.15 (keys: "" a b A ^ - [ a]). */
    CHECK(!gm("**", ""));               /* KEYS * is special-cased by the command */
    CHECK(!gm("*", ""));                /* ... and so is SCAN MATCH * */
    CHECK(gm("**", "a"));
    CHECK(!gm("?", "") && !gm("?", "\xc3\xa9"));
    CHECK(gm("[c-a]", "a") && gm("[c-a]", "b") && !gm("[c-a]", "A"));
    CHECK(!gm("[", "[") && !gm("[", "a"));
    CHECK(gm("[^", "a") && gm("[^", "[") && gm("[^", "^") && !gm("[^", ""));
    CHECK(gm("[a-]", "a") && gm("[a-]", "^") && !gm("[a-]", "-") && !gm("[a-]", "b"));
    CHECK(gm("[a", "a") && !gm("[a", "b"));
    CHECK(gm("a]", "a]"));
    CHECK(gm("[-]", "-") && gm("[\\-]", "-"));
    CHECK(gm("[\\]]", "]") && !gm("[]", "]"));
    CHECK(gm("*\\", "ab\\") && gm("a\\", "a\\") && !gm("a\\", "a"));
    CHECK(gm("ab\\\\", "ab\\"));
    /* Ranges compare signed chars: [a-\xff] is -1..'a'. */
    CHECK(gm("[a-\xff]", "a") && gm("[a-\xff]", "^") && gm("[a-\xff]", "A") && gm("[a-\xff]", "-"));
    CHECK(!gm("[a-\xff]", "b") && !gm("[a-\xff]", "\x80"));
    CHECK(gm("[\x01-\xff]", "\xff") && gm("[\x01-\xff]", "\x01") && !gm("[\x01-\xff]", "a"));
    CHECK(gm("[\x80-\x90]", "\x80") && !gm("[\x80-\x90]", "\xff"));
    CHECK(gm("[\x7f-\x80]", "\xff") && gm("[\x7f-\x80]", "\x01") && gm("[\x7f-\x80]", "z"));
    CHECK(glob_match("[\x01-\xff]", 5, "\0", 1, 0));
}

TEST(strutil, glob_pathological) {
    char s[4096], p[4096];
    memset(s, 'a', 3000);
    s[3000] = '\0';
    strcpy(p, "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b");
    double t0 = unit_now();
    CHECK(!gm(p, s));
    CHECK_MSG(unit_now() - t0 < 1.0, "a*a*...b takes %.2f s", unit_now() - t0);
    /* Nesting: Redis gives up past 1000 levels of '*' (no match). */
    size_t n = 0;
    for (int i = 0; i < 900; i++) p[n++] = '*', p[n++] = 'a';
    p[n] = '\0';
    s[1100] = '\0';
    CHECK(gm(p, s));
    n = 0;
    for (int i = 0; i < 1100; i++) p[n++] = '*', p[n++] = 'a';
    p[n] = '\0';
    CHECK(!gm(p, s));
    /* Random patterns never read out of bounds (ASan watches) and agree
     * with themselves under case folding of lowercase-only input. */
    unit_rng r = {99};
    const char alpha[] = "ab*?[]^-\\";
    for (int i = 0; i < 200000; i++) {
        size_t pl = (size_t)unit_below(&r, 12), sl = (size_t)unit_below(&r, 12);
        char pp[16], ss[16];
        for (size_t k = 0; k < pl; k++) pp[k] = alpha[unit_below(&r, sizeof(alpha) - 1)];
        for (size_t k = 0; k < sl; k++) ss[k] = alpha[unit_below(&r, 3)];
        int a = glob_match(pp, pl, ss, sl, 0), b = glob_match(pp, pl, ss, sl, 1);
        CHECK(a == b);
    }
}

TEST(strutil, str_repr) {
    char out[64 * 4 + 3];
    CHECK(str_repr(out, "", 0) == 2 && strcmp(out, "\"\"") == 0);
    CHECK(str_repr(out, "abc", 3) == 5 && strcmp(out, "\"abc\"") == 0);
    /* sdscatrepr's escapes, and \xHH (lowercase) for the other bytes. */
    const char in[] = "\\\"\n\r\t\a\b\x01\xff z";
    size_t n = str_repr(out, in, sizeof(in) - 1);
    CHECK_MSG(strcmp(out, "\"\\\\\\\"\\n\\r\\t\\a\\b\\x01\\xff z\"") == 0, "got %s", out);
    CHECK(n == strlen(out));
    /* The worst case fits the documented room: 4 bytes each, 3 more. */
    char bin[64];
    memset(bin, 0x80, sizeof(bin));
    CHECK(str_repr(out, bin, sizeof(bin)) == 64 * 4 + 2);
}
