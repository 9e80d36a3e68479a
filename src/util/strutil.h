/* strutil.h -- number <-> text conversions with Redis's exact rules, and the
 * glob matcher used by KEYS, SCAN MATCH and friends. */
#ifndef GOBLIN_UTIL_STRUTIL_H
#define GOBLIN_UTIL_STRUTIL_H
#include <stddef.h>
#include <stdint.h>

#define STRUTIL_LLSTR 21           /* room for any int64 and the NUL */
#define STRUTIL_LDSTR (5 * 1024)   /* room for a long double in %.17Lf */

/* Canonical decimal int64 (no '+', no leading zeros, no "-0", no spaces).
 * Returns 1 and sets *out on success, 0 otherwise. */
int str_to_ll(const char *s, size_t len, long long *out);
/* Same but unsigned 64-bit. */
int str_to_ull(const char *s, size_t len, unsigned long long *out);
int ll_to_str(char *dst, size_t cap, long long v);
/* strtod with Redis's rules: no leading space, the whole string, not NaN. */
int str_to_double(const char *s, size_t len, double *out);
int str_to_ldouble(const char *s, size_t len, long double *out);
/* %.17Lf with trailing zeros removed (INCRBYFLOAT style). Returns length
 * or 0 when the value is not finite / does not fit. */
int ld_to_str_human(char *dst, size_t cap, long double v);
/* %.17g as Redis 7.0 replies doubles; inf/-inf spelled out. */
int double_to_str(char *dst, size_t cap, double v);

/* Bytes quoted as Redis's sdscatrepr quotes them: in double quotes, with
 * \\ \" \n \r \t \a \b escapes and \xHH for other unprintable bytes.
 * out needs room for n * 4 + 3 bytes; returns the length written (a NUL
 * follows). */
size_t str_repr(char *out, const char *p, size_t n);

/* Glob match with Redis's semantics: * ? [abc] [^a-z] and \ escapes. */
int glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase);
#endif
