/* keylist.h -- a list of distinct key names, in the order first listed.
 *
 * What the cron finishes for idle collections (db.c: the collections left
 * resizing): a name is listed once however often it is put, and the list
 * is handed over whole to be worked through outside its owner's lock, then
 * given back with what is left. Not thread-safe: the owner serialises. */
#ifndef GOBLIN_DB_KEYLIST_H
#define GOBLIN_DB_KEYLIST_H
#include <stddef.h>
#include <stdint.h>

typedef struct keyname {
    int dbid;
    uint64_t h;    /* keylist_hash of (dbid, k) */
    size_t n;
    char *k;       /* owned by the list */
} keyname;

typedef struct keylist {
    keyname *v;
    size_t n, cap;
    uint32_t *slot; /* open addressing: 0 empty, else an index into v plus one */
    size_t nslot;   /* a power of two, or 0 */
} keylist;

uint64_t keylist_hash(int dbid, const char *k, size_t n);
/* Lists x unless its name is listed; the list takes x.k or frees it (also
 * when out of memory: the name is then not listed). */
void keylist_put(keylist *l, keyname x);
/* keylist_put of a copy of (dbid, k[0..n)); nothing listed out of memory. */
void keylist_put_name(keylist *l, int dbid, const char *k, size_t n);
/* Moves every name out, in order, into *out (which the caller then owns
 * and gives back); l is left empty. */
void keylist_take(keylist *l, keylist *out);
/* l becomes names[0..n) (an array from keylist_take, cap entries, names
 * distinct) followed by what was put into l meanwhile, less repeats; the
 * arrays are the list's again. */
void keylist_give_back(keylist *l, keyname *names, size_t n, size_t cap);
#endif
