/* mcmeta.h -- memcache metadata of string keys (client flags, CAS unique).
 *
 * A side table, so a plain string key costs nothing: only a key that a
 * memcache write stored, or whose CAS unique a memcache client asked for,
 * has an entry. Entries are per shard of database 0 (the memcache
 * keyspace), each guarded by its own mutex (taken inside the key's shard
 * lock, or alone by the forget calls). An entry remembers the dbentry it
 * describes: it holds only while the key still has that entry, and any
 * signalled change of the key (the modified hook) forgets it, so a RESP
 * write gives the key flags 0 and a new CAS, as a new memcached item. */
#ifndef GOBLIN_DB_MCMETA_H
#define GOBLIN_DB_MCMETA_H
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

/* state bits (meta protocol, not persisted): a win token was handed out
 * for the item (mg shows Z after it), the item is stale (md I: X). */
enum { MCMETA_TOKEN = 1, MCMETA_STALE = 2 };

typedef struct mcmeta {
    uint32_t flags;
    uint32_t state;
    uint64_t cas;
} mcmeta;

/* The next CAS unique (never 0). */
uint64_t mcmeta_next_cas(void);
/* Raise the counter so the next unique is above cas (after a load). */
void mcmeta_see_cas(uint64_t cas);
/* Metadata of key whose current entry is e (key's shard held): 1 with
 * *out; 0 when none is kept (flags 0, no CAS yet). */
int mcmeta_get(gdb *db, const dbentry *e, mcmeta *out);
/* Set (replace) the metadata of key with entry e. 0 ok, -1 no memory. */
int mcmeta_set(gdb *db, const dbentry *e, const mcmeta *m);
/* The metadata of e, given a new CAS unique (flags 0) when it had none:
 * what gets/gats show. Items of flags 0 are stored without an entry, so
 * this is where their unique is made; concurrent callers for one key all
 * get the same one. */
void mcmeta_ensure(gdb *db, const dbentry *e, mcmeta *out);
/* Forget key of db (key NULL: every key of db; db NULL: of every db). */
void mcmeta_forget(gdb *db, const char *key, size_t klen);
/* The entry of a key of db moved from from to to (db_set_expire): its
 * metadata follows. */
void mcmeta_moved(gdb *db, const dbentry *from, const dbentry *to);
/* Keys with metadata (for INFO). */
uint64_t mcmeta_count(void);
/* Persistence (an RDB AUX field): every entry as a blob of records
 * [u32 klen][u32 flags][u64 cas][key] (host order, malloc'd; NULL with
 * *len 0 when there is none). */
char *mcmeta_dump(size_t *len);
/* After a load replaced the dataset (keyspace write lock held): forget
 * everything, then give the keys of database 0 the blob's metadata (NULL:
 * none). The blob is kept for one more forget-everything (the load's
 * replaced signal follows the commit) and applied again after it. */
void mcmeta_load(const char *blob, size_t len);
#endif
