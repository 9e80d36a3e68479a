/* replttl.c -- the keys a writable replica's own clients gave a TTL
 * (db.h), Redis's slaveKeysWithExpire.
 *
 * A keylist of (db, name) under its own lock, a leaf: names are put under a
 * shard lock (db_set_expire). The cron takes the whole list, walks it from
 * the front under the keyspace read lock, each name under its shard's lock,
 * while its budget lasts: an expired key is deleted (the expired hook
 * records its DEL for the AOF; a replica sends its own replicas nothing of
 * its own), a name whose key is gone or has no TTL leaves the list, the
 * others stay. Invariant: after each walk the list holds the names kept,
 * then those not reached, then those put meanwhile, each once. As in Redis
 * the name is what is listed: a TTL the primary later gives a listed key
 * is expired here too, and the primary's DEL then finds nothing. */
#include "db/db.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "db/keylist.h"
#include "util/monotime.h"

static keylist listed;
static size_t nlisted; /* listed.n, read without the lock by the cron */
static pthread_mutex_t listed_lock = PTHREAD_MUTEX_INITIALIZER;

void db_replica_ttl_note(gdb *db, const char *k, size_t n) {
    pthread_mutex_lock(&listed_lock);
    keylist_put_name(&listed, db->id, k, n); /* out of memory: the key waits for a DEL */
    __atomic_store_n(&nlisted, listed.n, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&listed_lock);
}

void db_replica_ttl_clear(void) {
    keylist all;
    pthread_mutex_lock(&listed_lock);
    keylist_take(&listed, &all);
    for (size_t i = 0; i < all.n; i++) free(all.v[i].k);
    keylist_give_back(&listed, all.v, 0, all.cap); /* an empty list keeps no memory */
    __atomic_store_n(&nlisted, listed.n, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&listed_lock);
}

size_t db_replica_ttl_cycle(long long budget_us) {
    if (!__atomic_load_n(&nlisted, __ATOMIC_RELAXED)) return 0;
    keylist work;
    pthread_mutex_lock(&listed_lock);
    keylist_take(&listed, &work);
    __atomic_store_n(&nlisted, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&listed_lock);
    size_t expired = 0, kept = 0, i = 0;
    db_rdlock_keyspace();
    uint64_t t0 = monotime_us();
    int ndbs = db_count();
    for (; i < work.n; i++) {
        if (i % 16 == 0 && (long long)(monotime_us() - t0) > budget_us) break;
        keyname *x = &work.v[i];
        int keep = 0;
        if (x->dbid < ndbs) {
            gdb *db = db_get(x->dbid);
            unsigned s = db_shard_of(x->k, x->n);
            db_lock_shard(db, s);
            dbentry *e = db_lookup_raw(db, x->k, x->n);
            if (e && db_entry_expire(e) != -1) {
                if (db_expire_listed(db, e)) expired++;
                else keep = 1;
            }
            db_unlock_shard(db, s);
        }
        if (keep) work.v[kept++] = *x;
        else free(x->k);
    }
    db_unlock_keyspace();
    if (i < work.n) {
        memmove(work.v + kept, work.v + i, (work.n - i) * sizeof(*work.v));
        kept += work.n - i;
    }
    pthread_mutex_lock(&listed_lock);
    keylist_give_back(&listed, work.v, kept, work.cap);
    __atomic_store_n(&nlisted, listed.n, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&listed_lock);
    return expired;
}
