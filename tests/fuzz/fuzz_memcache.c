/* fuzz_memcache.c -- libFuzzer target for the memcache protocol module.
 *
 * The input is what a memcache client sends; the first byte seeds the read
 * sizes. The bytes are fed to mc_proto's process() on an in-process
 * connection (no socket: the transport's part is done here) in reads of
 * pseudo-random sizes (1 to 64 bytes), the unconsumed tail moved to the
 * front after each batch, as net/conn.c does; the requests run through the
 * command layer on a real keyspace. Invariants: process() never consumes
 * more than it was given, every reply ends with "\r\n", and nothing
 * crashes or reads out of bounds (ASan/UBSan). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_server.h"
#include "net/internal.h"
#include "net/proto.h"
#include "session/reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_server_setup();
    if (size < 1) return 0;
    unsigned seed = data[0];
    data++;
    size--;
    static worker w;
    conn *k = calloc(1, sizeof(conn));
    if (!k) return 0;
    k->w = &w;
    k->proto = &mc_proto;
    if (mc_proto.open(k) != 0) {
        free(k);
        return 0;
    }
    k->c.resp = 2;
    k->c.flags = CLIENT_AUTHENTICATED;
    char *buf = malloc(size + 1);
    size_t len = 0, off = 0;
    while (off < size && !(client_flags_peek(&k->c) & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP))) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 1 + (seed >> 16) % 64;
        if (n > size - off) n = size - off;
        memcpy(buf + len, data + off, n);
        len += n;
        off += n;
        k->qbuf = buf;
        k->qlen = len;
        size_t used = mc_proto.process(k);
        if (used > len) abort();
        memmove(buf, buf + used, len - used);
        len -= used;
        client *c = &k->c;
        if (c->olen && (c->olen < 2 || memcmp(c->obuf + c->olen - 2, "\r\n", 2) != 0)) abort();
        c->olen = c->osent = 0;
    }
    k->qbuf = NULL;
    k->qlen = 0;
    mc_proto.close(k);
    reply_obuf_release(&k->c);
    free(buf);
    free(k);
    /* Each input starts from an empty keyspace. */
    db_flush(db_get(0));
    return 0;
}
