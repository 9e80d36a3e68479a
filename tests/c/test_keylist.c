/* test_keylist.c -- db/keylist: one entry per name, order kept across a
 * take and give back, names put meanwhile appended without repeats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/keylist.h"
#include "unit.h"

static void put(keylist *l, int dbid, const char *k) {
    size_t n = strlen(k);
    char *c = malloc(n);
    memcpy(c, k, n);
    keylist_put(l, (keyname){dbid, keylist_hash(dbid, k, n), n, c});
}

static int is(const keyname *x, int dbid, const char *k) {
    return x->dbid == dbid && x->n == strlen(k) && memcmp(x->k, k, x->n) == 0;
}

TEST(keylist, listed_once_in_order_across_take_and_give_back) {
    keylist l = {0};
    char k[32];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 5000; i++) {
            snprintf(k, sizeof(k), "key:%d", i);
            put(&l, i % 3, k);
        }
    put(&l, 1, "key:0"); /* another database: another name */
    CHECK_EQ(l.n, 5001);
    CHECK(is(&l.v[0], 0, "key:0") && is(&l.v[4999], 4999 % 3, "key:4999") && is(&l.v[5000], 1, "key:0"));
    keylist w;
    keylist_take(&l, &w);
    CHECK_EQ(l.n, 0);
    CHECK_EQ(w.n, 5001);
    /* Meanwhile: one repeat of a taken name, one new name. */
    put(&l, 0, "key:3");
    put(&l, 2, "new");
    /* The first 10 were worked through; the rest go back. */
    for (int i = 0; i < 10; i++) free(w.v[i].k);
    memmove(w.v, w.v + 10, (w.n - 10) * sizeof(*w.v));
    keylist_give_back(&l, w.v, w.n - 10, w.cap);
    CHECK_EQ(l.n, 5001 - 10 + 2); /* key:3 was worked through: listed again */
    CHECK(is(&l.v[0], 10 % 3, "key:10"));
    CHECK(is(&l.v[l.n - 2], 0, "key:3") && is(&l.v[l.n - 1], 2, "new"));
    put(&l, 2, "new");
    put(&l, 11 % 3, "key:11");
    CHECK_EQ(l.n, 5001 - 10 + 2);
    /* Emptied: no memory kept. */
    keylist_take(&l, &w);
    for (size_t i = 0; i < w.n; i++) free(w.v[i].k);
    keylist_give_back(&l, w.v, 0, w.cap);
    CHECK(l.n == 0 && l.v == NULL && l.slot == NULL && l.nslot == 0);
}

/* Every taken name worked through (none goes back) while names were put
 * meanwhile: the index must forget the cells those puts made, which point
 * into the array now given back (its names are freed). Before, the first
 * of them read as already listed and was dropped. */
TEST(keylist, names_put_meanwhile_survive_an_empty_give_back) {
    keylist l = {0}, w;
    put(&l, 0, "a");
    put(&l, 0, "b");
    keylist_take(&l, &w);
    put(&l, 0, "a"); /* a cell pointing at index 0 */
    put(&l, 0, "c");
    for (size_t i = 0; i < w.n; i++) {
        free(w.v[i].k);
        w.v[i].k = NULL;
    }
    /* The worked array still says "a" at index 0, as a freed name would
     * until its memory is reused. */
    char *stale = malloc(1);
    memcpy(stale, "a", 1);
    w.v[0].k = stale;
    keylist_give_back(&l, w.v, 0, w.cap);
    free(stale);
    CHECK_EQ(l.n, 2);
    CHECK(is(&l.v[0], 0, "a") && is(&l.v[1], 0, "c"));
    keylist_take(&l, &w);
    for (size_t i = 0; i < w.n; i++) free(w.v[i].k);
    keylist_give_back(&l, w.v, 0, w.cap);
}
