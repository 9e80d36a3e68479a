/* fuzz_stream.c -- libFuzzer target for the stream value loader.
 *
 * The input is a DUMP payload's body whose type byte is a stream type: 15
 * (Redis 5-6), 19 (Redis 7.0) or 21 (Redis 7.2); other inputs are skipped.
 * The seed corpus (tests/fuzz/corpus/stream, made by gen_stream_corpus.py
 * from redis-server 7.0's DUMP) holds streams with deleted entries, several
 * nodes, consumer groups, PELs and consumers. Each input goes through both
 * ways a value is loaded: RESTORE's rdb_restore_value() (after the RDB
 * version and the right CRC-64 are appended, so the bytes reach the
 * loader) and, as the value of key "k" in db 0 of an RDB file on a memfd,
 * rdb_load_file() (DEBUG RELOAD, start-up). Either must load it or refuse
 * it: never crash, leak or read out of bounds. A stream it accepts must
 * pass stream_check(), iterate both ways to its length, and DUMP to a
 * payload that RESTOREs to a value that DUMPs to the same bytes. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "db/object.h"
#include "ds/stream.h"
#include "fuzz_server.h"
#include "persist/rdb.h"
#include "persist/rdb_format.h"
#include "util/crc64.h"

static void put_crc(unsigned char *p, size_t n) {
    uint64_t crc = crc64_update(0, p, n);
    for (int i = 0; i < 8; i++) p[n + i] = (unsigned char)(crc >> (8 * i));
}

/* The body with the DUMP footer (RDB version, CRC-64). */
static unsigned char *as_payload(const uint8_t *data, size_t size, size_t *n) {
    unsigned char *p = malloc(size + 10);
    if (!p) return NULL;
    memcpy(p, data, size);
    p[size] = RDB_VERSION_WRITTEN & 255;
    p[size + 1] = RDB_VERSION_WRITTEN >> 8;
    put_crc(p, size + 2);
    *n = size + 10;
    return p;
}

/* An RDB file holding the body as key "k" of db 0. */
static unsigned char *as_file(const uint8_t *data, size_t size, size_t *n) {
    static const char head[] = "REDIS0010\xfe\x00";
    size_t hl = sizeof(head) - 1;
    unsigned char *p = malloc(hl + size + 2 + 1 + 8);
    if (!p) return NULL;
    memcpy(p, head, hl);
    size_t o = hl;
    p[o++] = data[0];
    p[o++] = 1;
    p[o++] = 'k';
    memcpy(p + o, data + 1, size - 1);
    o += size - 1;
    p[o++] = 0xff;
    put_crc(p, o);
    *n = o + 8;
    return p;
}

static void walk(gstream *s, int rev) {
    stream_iter it;
    stream_id id, prev;
    size_t nf;
    uint64_t count = 0;
    stream_iter_init(&it, s, NULL, NULL, rev);
    while (stream_iter_next(&it, &id, &nf)) {
        if (count) assert(rev ? stream_id_cmp(&id, &prev) < 0 : stream_id_cmp(&id, &prev) > 0);
        for (size_t i = 0; i < nf; i++) {
            stream_str f, v;
            stream_iter_field(&it, &f, &v);
            assert(f.n == 0 || f.p);
            assert(v.n == 0 || v.p);
        }
        prev = id;
        count++;
    }
    stream_iter_done(&it);
    assert(count == stream_len(s));
}

static void check_value(gobj *v) {
    char err[512];
    assert(v->type == OBJ_STREAM);
    gstream *s = v->u.p;
    assert(stream_check(s) == 0);
    walk(s, 0);
    walk(s, 1);
    unsigned char *d1, *d2;
    size_t n1, n2;
    int rc = rdb_dump_value(v, 0, &d1, &n1);
    assert(rc == RDB_OK);
    gobj w;
    rc = rdb_restore_value(d1, n1, &w, err, sizeof(err));
    assert(rc == RDB_OK);
    rc = rdb_dump_value(&w, 0, &d2, &n2);
    assert(rc == RDB_OK);
    assert(n1 == n2 && memcmp(d1, d2, n1) == 0);
    free(d1);
    free(d2);
    obj_free(&w);
}

static void via_restore(const uint8_t *data, size_t size) {
    size_t n;
    unsigned char *p = as_payload(data, size, &n);
    if (!p) return;
    char err[512];
    gobj v;
    if (rdb_restore_value(p, n, &v, err, sizeof(err)) == RDB_OK) {
        check_value(&v);
        obj_free(&v);
    }
    free(p);
}

static void via_file(const uint8_t *data, size_t size) {
    size_t n;
    unsigned char *p = as_file(data, size, &n);
    if (!p) return;
    int fd = memfd_create("rdb", 0);
    if (fd < 0) {
        free(p);
        return;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, p + off, n - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    free(p);
    char path[64], err[1400];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    rdb_loaded ld;
    rdb_load_opts opt;
    memset(&opt, 0, sizeof(opt));
    (void)rdb_load_file(path, &opt, &ld, err, sizeof(err));
    rdb_load_discard(&ld);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || (data[0] != 15 && data[0] != 19 && data[0] != 21)) return 0;
    fuzz_server_setup();
    via_restore(data, size);
    via_file(data, size);
    return 0;
}
