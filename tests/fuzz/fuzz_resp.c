/* fuzz_resp.c -- libFuzzer target for the RESP/inline request parser.
 *
 * The first input byte picks the limits (bit 0: unauthenticated) and seeds
 * the read sizes; the rest is what a client sends. The stream is parsed
 * twice, the way net/conn.c drives the parser: once as a single read, once
 * in reads of pseudo-random sizes (1 byte up to 64), moving the unconsumed
 * tail to the front of the buffer after each batch. Both must produce the
 * same commands (argument bytes included) and the same error, since a
 * request split at any byte boundary must parse like a whole one; any
 * difference aborts, as do out-of-bounds accesses (ASan). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/resp.h"

typedef struct transcript {
    uint64_t hash;      /* FNV-1a over every command and error */
    long commands;
    int error;
} transcript;

static void mix(transcript *t, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        t->hash ^= b[i];
        t->hash *= 1099511628211ULL;
    }
}

/* Parse everything buffered; returns 0 to go on, 1 after an error. */
static int drain(resp_parser *p, char *buf, size_t *len, const resp_limits *lim, transcript *t) {
    size_t start = 0;
    while (start < *len) {
        size_t used = 0;
        int argc = 0;
        garg *argv = NULL;
        const char *err = NULL;
        int r = resp_parse(p, buf + start, *len - start, lim, &used, &argc, &argv, &err);
        if (r == RESP_NEED_MORE) break;
        if (r == RESP_ERROR) {
            if (!err || strncmp(err, "Protocol error: ", 16) != 0) abort();
            mix(t, "E", 1);
            mix(t, err, strlen(err));
            t->error = 1;
            return 1;
        }
        if (used == 0 || used > *len - start) abort();
        mix(t, "C", 1);
        mix(t, &argc, sizeof(argc));
        for (int i = 0; i < argc; i++) {
            if (argv[i].p[argv[i].n] != '\0') abort(); /* arguments are C strings */
            mix(t, &argv[i].n, sizeof(argv[i].n));
            mix(t, argv[i].p, argv[i].n);
        }
        t->commands++;
        start += used;
    }
    memmove(buf, buf + start, *len - start);
    *len -= start;
    return 0;
}

static void run(const uint8_t *data, size_t size, const resp_limits *lim, unsigned seed, int chunked,
                transcript *t) {
    resp_parser p;
    resp_parser_init(&p);
    memset(t, 0, sizeof(*t));
    t->hash = 1469598103934665603ULL;
    char *buf = malloc(size + 1);
    size_t len = 0, off = 0;
    while (off < size) {
        size_t n = size - off;
        if (chunked) {
            seed = seed * 1103515245u + 12345u;
            size_t want = 1 + (seed >> 16) % 64;
            if (want < n) n = want;
        }
        memcpy(buf + len, data + off, n);
        len += n;
        off += n;
        if (drain(&p, buf, &len, lim, t)) break;
    }
    free(buf);
    resp_parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    resp_limits lim = {1 << 20, !(data[0] & 1)};
    unsigned seed = data[0];
    transcript whole, pieces;
    run(data + 1, size - 1, &lim, seed, 0, &whole);
    run(data + 1, size - 1, &lim, seed, 1, &pieces);
    /* As in Redis, a line over the 64 KiB inline limit is accepted when its
     * newline arrives in the same read: past that size, reads matter. */
    if (size - 1 > 64 * 1024) return 0;
    if (whole.hash != pieces.hash || whole.commands != pieces.commands || whole.error != pieces.error) {
        fprintf(stderr, "split parse differs: %ld/%d vs %ld/%d commands/error\n", whole.commands, whole.error,
                pieces.commands, pieces.error);
        abort();
    }
    return 0;
}
