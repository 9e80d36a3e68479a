/* rdb_kbuild.h -- the RDB loader's key builder (persist-internal).
 *
 * Inserting keys into the key index is about half the work of loading many
 * small keys, and it is independent of parsing: the parser (the calling
 * thread) reads, checks and builds each value and queues finished records
 * in a batch; a builder thread inserts whole batches into the detached
 * databases. Two batches alternate, so each side works while the other
 * does. Only the builder touches the databases' key indexes once it runs;
 * the parser only creates missing databases before queuing records for
 * them (the hand-over under mu orders the two). A file too small to fill
 * one batch never starts the thread. */
#ifndef GOBLIN_PERSIST_RDB_KBUILD_H
#define GOBLIN_PERSIST_RDB_KBUILD_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "db/object.h"
#include "persist/rdb.h"

#define BATCH_RECS 4096
#define BATCH_KEYBYTES (1u << 20)
#define BATCH_KEYBYTES_FIRST 4096u /* a batch's first key buffer; it doubles */

typedef struct krec {
    gobj val;
    int64_t expire;
    uint64_t off;          /* file offset after the record, for messages */
    uint32_t koff, klen;
    int dbid;
} krec;

typedef struct kbatch {
    krec *r;
    size_t n, cap;
    unsigned char *keys;
    size_t klen, kcap;
} kbatch;

typedef struct kbuilder {
    rdb_loaded *ld;
    kbatch bufs[2];
    int cur;               /* parser's batch */
    pthread_t tid;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    kbatch *todo;          /* handed to the builder; NULL when it is idle */
    int stop;
    int err;               /* first failure of an insert */
    char msg[512];
} kbuilder;

void kb_init(kbuilder *kb, rdb_loaded *ld);
/* The next record's key, copied into the parser's batch. */
int kb_key(kbuilder *kb, const unsigned char *k, size_t n);
/* Queue the record whose key kb_key took: 1 when the batch is full (then
 * kb_flush), 0, or -1 out of memory. */
int kb_push(kbuilder *kb, size_t klen, int dbid, const gobj *v, int64_t expire, uint64_t off);
/* Hand the batch over (final: and wait until everything is in). */
int kb_flush(kbuilder *kb, int final);
void kb_done(kbuilder *kb);

/* A key as shown in messages: printable bytes as they are, others as \xNN,
 * at most 64 bytes. */
void rdb_key_shown(char *out, size_t cap, const unsigned char *k, size_t kn);
#endif
