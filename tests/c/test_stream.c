/* test_stream.c -- ds/stream against a reference array of entries.
 *
 * Randomized runs (fixed seeds) append entries with growing IDs and a mix
 * of repeated and changing field sets, delete random IDs, trim by MAXLEN
 * and MINID (exact and approximate, with limits), and walk ranges forwards
 * and backwards, comparing with a plain array and checking the invariant
 * (stream_check) as they go; run boundaries are checked against the Redis
 * rule for small node limits, consumer-group PELs against their counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/stream.h"
#include "unit.h"

typedef struct rent {
    stream_id id;
    int nf;
    char f[3][24], v[3][48];
    int live;
} rent;

static void mk_entry(rent *e, uint64_t ms, uint64_t seq, unsigned r) {
    e->id.ms = ms;
    e->id.seq = seq;
    e->nf = 1 + (int)(r % 3);
    for (int i = 0; i < e->nf; i++) {
        snprintf(e->f[i], sizeof(e->f[i]), (r & 8) ? "g%d" : "f%d", i);
        if (r & 16) snprintf(e->v[i], sizeof(e->v[i]), "%u", r * 7 + (unsigned)i);
        else snprintf(e->v[i], sizeof(e->v[i]), "val-%u-%d", r, i);
    }
    e->live = 1;
}

static void append(gstream *s, rent *e, const stream_limits *lim) {
    stream_str fv[6];
    for (int i = 0; i < e->nf; i++) {
        fv[2 * i].p = e->f[i];
        fv[2 * i].n = strlen(e->f[i]);
        fv[2 * i + 1].p = e->v[i];
        fv[2 * i + 1].n = strlen(e->v[i]);
    }
    CHECK_EQ(stream_append(s, &e->id, fv, (size_t)e->nf, lim), STREAM_OK);
}

/* Walk [a, b] both ways and compare with the live reference entries. */
static void check_range(gstream *s, rent *ref, size_t n, const stream_id *a, const stream_id *b) {
    for (int rev = 0; rev < 2; rev++) {
        stream_iter it;
        stream_iter_init(&it, s, a, b, rev);
        stream_id id;
        size_t nf;
        long k = rev ? (long)n - 1 : 0;
        for (;;) {
            while (k >= 0 && (size_t)k < n &&
                   (!ref[k].live || (a && stream_id_cmp(&ref[k].id, a) < 0) || (b && stream_id_cmp(&ref[k].id, b) > 0)))
                k += rev ? -1 : 1;
            int have = k >= 0 && (size_t)k < n;
            int got = stream_iter_next(&it, &id, &nf);
            CHECK_EQ(got, have);
            if (!got) break;
            CHECK(stream_id_cmp(&id, &ref[k].id) == 0);
            CHECK_EQ(nf, (size_t)ref[k].nf);
            for (size_t i = 0; i < nf; i++) {
                stream_str f, v;
                stream_iter_field(&it, &f, &v);
                CHECK(f.n == strlen(ref[k].f[i]) && memcmp(f.p, ref[k].f[i], f.n) == 0);
                CHECK(v.n == strlen(ref[k].v[i]) && memcmp(v.p, ref[k].v[i], v.n) == 0);
            }
            k += rev ? -1 : 1;
        }
        stream_iter_done(&it);
    }
}

static uint64_t live_count(rent *ref, size_t n) {
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++) c += (uint64_t)ref[i].live;
    return c;
}

TEST(stream, random_ops) {
    unsigned seed = 12345;
    size_t N = (size_t)unit_scaled(3000, 300);
    for (int round = 0; round < 3; round++) {
        stream_limits lim = {round == 0 ? 4096 : round == 1 ? 200 : 0, round == 2 ? 7 : 100};
        gstream *s = stream_new();
        rent *ref = calloc(N, sizeof(*ref));
        size_t n = 0;
        uint64_t ms = 1;
        for (size_t step = 0; step < N; step++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = seed >> 8;
            if (r % 10 < 7 || n == 0) {
                uint64_t seq = 0;
                if (r % 3 == 0 && n) {
                    ms = ref[n - 1].id.ms;
                    seq = ref[n - 1].id.seq + 1;
                } else {
                    ms += 1 + r % 5;
                }
                mk_entry(&ref[n], ms, seq, r);
                append(s, &ref[n], &lim);
                n++;
            } else if (r % 10 < 9) {
                size_t k = (r >> 4) % n;
                int was = ref[k].live;
                CHECK_EQ(stream_delete(s, &ref[k].id), was);
                ref[k].live = 0;
            } else if (r % 20 == 9) {
                uint64_t maxlen = (r >> 5) % 50;
                stream_trim_args t = {STREAM_TRIM_MAXLEN, 0, 0, maxlen, {0, 0}};
                stream_trim(s, &t);
                uint64_t live = live_count(ref, n);
                for (size_t k = 0; k < n && live > maxlen; k++)
                    if (ref[k].live) {
                        ref[k].live = 0;
                        live--;
                    }
            } else {
                size_t k = (r >> 4) % n;
                stream_trim_args t = {STREAM_TRIM_MINID, 0, 0, 0, ref[k].id};
                stream_trim(s, &t);
                for (size_t j = 0; j < k; j++) ref[j].live = 0;
            }
            CHECK_EQ(stream_len(s), live_count(ref, n));
            if (step % 50 == 0 || n < 100) {
                CHECK_EQ(stream_check(s), 0);
                size_t a = (r >> 3) % n, b = (r >> 11) % n;
                if (a > b) {
                    size_t t = a;
                    a = b;
                    b = t;
                }
                check_range(s, ref, n, &ref[a].id, &ref[b].id);
                check_range(s, ref, n, NULL, NULL);
                gstream *d = stream_dup(s);
                CHECK(d);
                CHECK_EQ(stream_check(d), 0);
                check_range(d, ref, n, NULL, NULL);
                stream_free(d);
            }
            stream_id first;
            if (stream_edge_id(s, 1, &first)) CHECK(stream_id_cmp(&first, &s->first_id) == 0);
        }
        free(ref);
        stream_free(s);
    }
}

TEST(stream, node_boundaries_follow_redis) {
    /* 100 entries a node by default; 4096 bytes */
    gstream *s = stream_new();
    stream_limits lim = {4096, 100};
    rent e;
    for (uint64_t i = 1; i <= 250; i++) {
        mk_entry(&e, i, 0, 0);
        append(s, &e, &lim);
    }
    CHECK_EQ(stream_nruns(s), (size_t)3);
    /* approximate trim removes whole nodes only */
    stream_trim_args t = {STREAM_TRIM_MAXLEN, 1, 0, 120, {0, 0}};
    CHECK_EQ(stream_trim(s, &t), 100);
    CHECK_EQ(stream_len(s), (uint64_t)150);
    stream_free(s);
    /* byte limit: lp size + new entry's bytes >= max starts a node */
    s = stream_new();
    stream_limits lb = {200, 0};
    for (uint64_t i = 1; i <= 40; i++) {
        mk_entry(&e, i, 0, 0);
        append(s, &e, &lb);
    }
    CHECK(stream_nruns(s) > 1);
    CHECK_EQ(stream_check(s), 0);
    stream_free(s);
}

TEST(stream, deleted_entry_above_later_ids) {
    /* XDEL of the top entry, then XSETID back below it: later appends go
     * into the same run after the deleted entry with smaller IDs, which a
     * walk must still find (Redis bounds only live entries). */
    gstream *s = stream_new();
    stream_limits lim = {4096, 100};
    rent ref[4];
    mk_entry(&ref[0], 1, 0, 0);
    mk_entry(&ref[1], 100, 0, 1);
    mk_entry(&ref[2], 60, 0, 2);
    mk_entry(&ref[3], 70, 5, 3);
    append(s, &ref[0], &lim);
    append(s, &ref[1], &lim);
    CHECK_EQ(stream_delete(s, &ref[1].id), 1);
    ref[1].live = 0;
    append(s, &ref[2], &lim);
    append(s, &ref[3], &lim);
    CHECK_EQ(stream_nruns(s), (size_t)1);
    CHECK_EQ(stream_check(s), 0);
    stream_id end = {80, 0};
    check_range(s, ref, 4, NULL, &end);
    check_range(s, ref, 4, &ref[2].id, &ref[2].id);
    check_range(s, ref, 4, NULL, NULL);
    CHECK_EQ(stream_delete(s, &ref[2].id), 1);
    ref[2].live = 0;
    CHECK_EQ(stream_len(s), (uint64_t)2);
    check_range(s, ref, 4, NULL, &end);
    CHECK_EQ(stream_check(s), 0);
    stream_free(s);
}

TEST(stream, groups_and_pel) {
    gstream *s = stream_new();
    stream_id z = {0, 0};
    stream_group *g = stream_group_create(s, "g1", 2, &z, 0);
    CHECK(g);
    CHECK(!stream_group_create(s, "g1", 2, &z, 0));
    CHECK(stream_group_create(s, "a", 1, &z, 0));
    CHECK(s->groups[0] != g);
    stream_consumer *c1 = stream_consumer_create(g, "alice", 5, 10);
    stream_consumer *c2 = stream_consumer_create(g, "bob", 3, 10);
    for (uint64_t i = 1; i <= 100; i++) {
        stream_id id = {i * 3 % 101, 0};
        stream_nack *na = stream_nack_add(g, i % 2 ? c1 : c2, &id, 5);
        CHECK(na);
    }
    CHECK_EQ(stream_check(s), 0);
    CHECK_EQ(g->pel.n, (size_t)100);
    stream_id id = {3, 0};
    stream_nack *na = stream_pel_find(&g->pel, &id);
    CHECK(na && na->consumer == c1);
    stream_nack_move(na, c2);
    CHECK_EQ(stream_check(s), 0);
    stream_nack_del(g, na);
    CHECK_EQ(g->pel.n, (size_t)99);
    CHECK_EQ(stream_consumer_delete(g, c1), (size_t)49);
    CHECK_EQ(stream_check(s), 0);
    gstream *d = stream_dup(s);
    CHECK_EQ(stream_check(d), 0);
    CHECK_EQ(stream_group_find(d, "g1", 2)->pel.n, (size_t)50);
    stream_free(d);
    CHECK(stream_group_destroy(s, "g1", 2));
    CHECK(!stream_group_find(s, "g1", 2));
    stream_free(s);
}

TEST(stream, lp_sizes) {
    CHECK_EQ(stream_lp_int_size(0), (size_t)2);
    CHECK_EQ(stream_lp_int_size(127), (size_t)2);
    CHECK_EQ(stream_lp_int_size(128), (size_t)3);
    CHECK_EQ(stream_lp_int_size(-1), (size_t)3);
    CHECK_EQ(stream_lp_str_size("abc", 3), (size_t)5);
    CHECK_EQ(stream_lp_str_size("12", 2), (size_t)2);
    CHECK_EQ(stream_lp_str_size("012", 3), (size_t)5);
}
