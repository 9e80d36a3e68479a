/* fuzz_glob.c -- libFuzzer target for glob_match (KEYS, SCAN MATCH, ACL
 * key and channel patterns, CONFIG GET).
 *
 * Input: byte 0 = flags (bit 0: nocase), byte 1 = pattern length (modulo
 * what is left), then the pattern, then the string. Besides memory errors
 * (ASan) and time-outs (exponential backtracking), a pattern without any
 * special character must match exactly the equal string, and "*" every
 * string but the empty one (Redis's stringmatchlen). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    int nocase = data[0] & 1;
    size_t rest = size - 2;
    size_t plen = rest ? data[1] % (rest + 1) : 0;
    /* Copies of exactly the right size, so ASan sees any overrun. */
    char *pat = malloc(plen ? plen : 1), *str = malloc(rest - plen ? rest - plen : 1);
    memcpy(pat, data + 2, plen);
    memcpy(str, data + 2 + plen, rest - plen);
    size_t slen = rest - plen;
    int m = glob_match(pat, plen, str, slen, nocase);
    if (!nocase && !memchr(pat, '*', plen) && !memchr(pat, '?', plen) && !memchr(pat, '[', plen) &&
        !memchr(pat, '\\', plen)) {
        int eq = plen == slen && memcmp(pat, str, plen) == 0;
        if (m != eq) abort();
    }
    /* As Redis's stringmatchlen, "*" matches any string but the empty one. */
    if (plen == 1 && pat[0] == '*' && m != (slen > 0)) abort();
    free(pat);
    free(str);
    return 0;
}
