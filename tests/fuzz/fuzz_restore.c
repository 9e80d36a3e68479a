/* fuzz_restore.c -- libFuzzer target for RESTORE's payload reader.
 *
 * The input is a DUMP payload's body (type byte and value); the target
 * appends the RDB version and the right CRC-64, so the fuzzer's bytes reach
 * the value loader instead of stopping at the checksum. rdb_restore_value()
 * must load it or refuse it: never crash, leak or read out of bounds. A
 * value it accepts must DUMP again, and that payload must RESTORE to a
 * value that DUMPs to the same bytes (DUMP of a restored value is stable). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/object.h"
#include "util/crc64.h"
#include "fuzz_server.h"
#include "persist/rdb.h"

static unsigned char *with_footer(const uint8_t *data, size_t size, size_t *n) {
    unsigned char *p = malloc(size + 10);
    if (!p) return NULL;
    if (size) memcpy(p, data, size);
    p[size] = RDB_VERSION_WRITTEN & 255;
    p[size + 1] = RDB_VERSION_WRITTEN >> 8;
    uint64_t crc = crc64_update(0, p, size + 2);
    for (int i = 0; i < 8; i++) p[size + 2 + i] = (unsigned char)(crc >> (8 * i));
    *n = size + 10;
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_server_setup();
    size_t n;
    unsigned char *p = with_footer(data, size, &n);
    if (!p) return 0;
    char err[512];
    gobj v;
    if (rdb_restore_value(p, n, &v, err, sizeof(err)) == RDB_OK) {
        unsigned char *d1, *d2;
        size_t n1, n2;
        int rc = rdb_dump_value(&v, 0, &d1, &n1);
        assert(rc == RDB_OK);
        gobj w;
        rc = rdb_restore_value(d1, n1, &w, err, sizeof(err));
        assert(rc == RDB_OK);
        rc = rdb_dump_value(&w, 0, &d2, &n2);
        assert(rc == RDB_OK);
        /* Hash tables may iterate in another order once rebuilt: compare
         * lengths for them, bytes for the rest. */
        assert(n1 == n2);
        if (w.enc != ENC_HASHTABLE && w.enc != ENC_SKIPLIST) assert(memcmp(d1, d2, n1) == 0);
        free(d1);
        free(d2);
        obj_free(&w);
        obj_free(&v);
    }
    free(p);
    return 0;
}
