/* test_resppeek.c -- util/resppeek: the keys of whole, plainly written
 * requests, and nothing past the first request it cannot read. */
#include <stdio.h>
#include <string.h>

#include "util/resppeek.h"
#include "unit.h"

static int peek(const char *buf, const char **k, size_t *n, int max, size_t *span) {
    return resp_peek_keys(buf, strlen(buf), k, n, max, span);
}

TEST(resppeek, keys_of_whole_requests) {
    const char *k[8];
    size_t n[8], span;
    const char *b = "*2\r\n$3\r\nGET\r\n$3\r\nabc\r\n*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$0\r\n\r\n$1\r\nv\r\n";
    CHECK(peek(b, k, n, 8, &span) == 2);
    CHECK(n[0] == 3 && memcmp(k[0], "abc", 3) == 0);
    CHECK(n[1] == 0 && k[1] == b + strlen("*2\r\n$3\r\nGET\r\n$3\r\nabc\r\n*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$0\r\n"));
    CHECK(span == strlen(b));
    /* max bounds the keys; span ends after the last request looked at. */
    CHECK(peek(b, k, n, 1, &span) == 1 && span == strlen("*2\r\n$3\r\nGET\r\n$3\r\nabc\r\n"));
}

TEST(resppeek, stops_at_what_it_cannot_read) {
    const char *k[8];
    size_t n[8], span;
    const char *whole = "*2\r\n$3\r\nGET\r\n$1\r\na\r\n";
    char buf[256];
    /* Every cut of a second request: the first one's key only. */
    const char *second = "*2\r\n$3\r\nGET\r\n$2\r\nbc\r\n";
    for (size_t cut = 0; cut < strlen(second); cut++) {
        snprintf(buf, sizeof(buf), "%s%.*s", whole, (int)cut, second);
        CHECK_MSG(peek(buf, k, n, 8, &span) == 1 && span == strlen(whole), "cut %zu", cut);
    }
    /* Inline requests, other types, bad digits, a count of 0: nothing. */
    const char *bad[] = {"GET a\r\n", "$3\r\nabc\r\n", "*x\r\n", "*0\r\n", "*2\r\n$-1\r\n", "*2\r\n$3\rxGET\r\n",
                         "*2\n$3\r\nGET\r\n$1\r\na\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nab\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int got = peek(bad[i], k, n, 8, &span);
        /* The last one is read as "ab" not fitting "$1": its key is "a" only if whole. */
        CHECK_MSG(got == 0 || (i == 7 && got == 1 && n[0] == 1), "\"%s\" gave %d", bad[i], got);
    }
    /* A request of many arguments stops the scan at RESPPEEK_ARGS. */
    char big[8192];
    size_t o = (size_t)snprintf(big, sizeof(big), "*%d\r\n", RESPPEEK_ARGS + 1);
    for (int i = 0; i <= RESPPEEK_ARGS && o + 8 < sizeof(big); i++) o += (size_t)snprintf(big + o, sizeof(big) - o, "$1\r\nx\r\n");
    CHECK(resp_peek_keys(big, o, k, n, 8, &span) == 0 && span == 0);
}
