/* keylist.c -- a list of distinct key names (keylist.h).
 *
 * An array in listing order and an open-addressing index over it (linear
 * probing on the stored hash). Invariant: v[0..n) are distinct (dbid, k);
 * slot has exactly one cell i + 1 for each v[i], found by probing from
 * v[i].h, and at most half of its cells are used. Taking the list moves the
 * array out and clears the index; giving it back re-indexes it by the
 * hashes it keeps (no key is hashed again) and puts what came meanwhile
 * behind it. An emptied list keeps no memory. */
#include "db/keylist.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashfn.h"

uint64_t keylist_hash(int dbid, const char *k, size_t n) {
    return hash_bytes(k, n) ^ ((uint64_t)(unsigned)dbid * 0x9e3779b97f4a7c15ull);
}

/* The cell of (dbid, k) in the index, or the empty cell where it goes. */
static uint32_t *cell(keylist *l, int dbid, uint64_t h, const char *k, size_t n) {
    size_t mask = l->nslot - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t c = l->slot[i];
        if (!c) return &l->slot[i];
        const keyname *r = &l->v[c - 1];
        if (r->h == h && r->dbid == dbid && r->n == n && memcmp(r->k, k, n) == 0) return &l->slot[i];
    }
}

/* An index of at least 2 * want cells over v[0..n). */
static int reindex(keylist *l, size_t want) {
    size_t ns = l->nslot ? l->nslot : 64;
    while (ns < 2 * want) ns *= 2;
    if (ns != l->nslot) {
        uint32_t *t = malloc(ns * sizeof(*t));
        if (!t) return -1;
        free(l->slot);
        l->slot = t;
        l->nslot = ns;
    }
    memset(l->slot, 0, l->nslot * sizeof(*l->slot));
    for (size_t i = 0; i < l->n; i++) *cell(l, l->v[i].dbid, l->v[i].h, l->v[i].k, l->v[i].n) = (uint32_t)(i + 1);
    return 0;
}

void keylist_put(keylist *l, keyname x) {
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        keyname *t = nc < UINT32_MAX ? realloc(l->v, nc * sizeof(*t)) : NULL;
        if (!t) {
            free(x.k);
            return;
        }
        l->v = t;
        l->cap = nc;
    }
    if (2 * (l->n + 1) > l->nslot && reindex(l, l->n + 1) != 0) {
        free(x.k);
        return;
    }
    uint32_t *c = cell(l, x.dbid, x.h, x.k, x.n);
    if (*c) {
        free(x.k);
        return;
    }
    l->v[l->n] = x;
    *c = (uint32_t)(++l->n);
}

void keylist_put_name(keylist *l, int dbid, const char *k, size_t n) {
    char *copy = malloc(n ? n : 1);
    if (!copy) return;
    memcpy(copy, k, n);
    keylist_put(l, (keyname){dbid, keylist_hash(dbid, k, n), n, copy});
}

void keylist_take(keylist *l, keylist *out) {
    *out = (keylist){l->v, l->n, l->cap, NULL, 0};
    l->v = NULL;
    l->n = l->cap = 0;
    if (l->nslot) memset(l->slot, 0, l->nslot * sizeof(*l->slot));
}

void keylist_give_back(keylist *l, keyname *names, size_t n, size_t cap) {
    keyname *fresh = l->v;
    size_t nfresh = l->n;
    l->v = names;
    l->n = n;
    l->cap = cap;
    if (n && reindex(l, n) != 0) {
        /* No memory for an index: the names go (their collections' own
         * operations still move their resizes). */
        for (size_t i = 0; i < n; i++) free(names[i].k);
        l->n = 0;
    }
    /* The cells of the names put meanwhile point into fresh, not names:
     * with nothing given back no reindex dropped them. */
    if (!l->n && l->nslot) memset(l->slot, 0, l->nslot * sizeof(*l->slot));
    for (size_t i = 0; i < nfresh; i++) keylist_put(l, fresh[i]);
    free(fresh);
    if (!l->n) {
        free(l->v);
        free(l->slot);
        *l = (keylist){0};
    }
}
