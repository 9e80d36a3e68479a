/* test_strval.c -- string values embedded in their key's entry. */
#include <stdlib.h>
#include <string.h>

#include "db/strval.h"
#include "mem/objstore.h"
#include "mem/smallobj.h"
#include "unit.h"

static size_t live_records(void) {
    smallobj_stats st;
    smallobj_stats_get(&st);
    return st.live_records;
}

/* A key's entry as db_add_room makes it: the value (a gobj) whose room
 * starts at its u and has at least 8 bytes; scribbled past the room so a
 * read past the value shows. */
static gobj *entry_for(size_t room) {
    size_t n = sizeof(gobj) + (room > 8 ? room - 8 : 0);
    gobj *o = malloc(n + 8);
    memset(o, 0x5a, n + 8);
    memset(o, 0, sizeof(*o));
    return o;
}

static void check_value(const gobj *o, const char *p, size_t n) {
    char tmp[32];
    size_t len;
    const char *b = strval_bytes(o, tmp, &len);
    CHECK(b && len == n && memcmp(b, p, n) == 0);
    CHECK(!strval_is_embedded(o) || b[n] == '\0'); /* an arena record has no NUL */
    CHECK(strval_len(o) == n);
}

TEST(strval, embedded_set_read_and_free) {
    objstore_ensure_init();
    size_t before = live_records();
    CHECK(strval_embed_size("12345", 5) == 0); /* an integer: in the gobj */
    char big[300];
    memset(big, 'q', sizeof(big));
    CHECK(strval_embed_size(big, sizeof(big)) == 0); /* over the limit */
    size_t need = strval_embed_size("hello", 5);
    CHECK(need >= 5 + 1);
    gobj *o = entry_for(need);
    strval_set_embedded(o, &o->u, "hello", 5);
    CHECK(strval_is_embedded(o) && o->enc == ENC_EMBSTR && strval_embedded_room(o) == need);
    check_value(o, "hello", 5);
    CHECK(live_records() == before); /* nothing in the arena */
    int64_t v;
    CHECK(!strval_get_int(o, &v));
    strval_free(o); /* the room is the entry's: nothing to free */
    CHECK(live_records() == before && !strval_is_embedded(o));
    free(o);
}

TEST(strval, embedded_overwrite_in_place_or_not) {
    objstore_ensure_init();
    const char *first = "a value of some length";
    size_t n = strlen(first);
    gobj *o = entry_for(strval_embed_size(first, n));
    strval_set_embedded(o, &o->u, first, n);
    CHECK(strval_set_in_place(o, "shorter", 7) == 1);
    check_value(o, "shorter", 7);
    CHECK(strval_set_in_place(o, first, n) == 1); /* the room's full size */
    check_value(o, first, n);
    const char *longer = "a value longer than the room it was given";
    CHECK(strval_set_in_place(o, longer, strlen(longer)) == 0);
    check_value(o, first, n); /* unchanged */
    CHECK(strval_set_in_place(o, "42", 2) == 0); /* integers go inline */
    gobj i = {0};
    strval_set_int(&i, 7);
    CHECK(strval_set_in_place(&i, "x", 1) == 0); /* not embedded */
    strval_free(o);
    free(o);
}

TEST(strval, embedded_compressed) {
    objstore_ensure_init();
    char p[200];
    for (size_t k = 0; k < sizeof(p); k++) p[k] = "0123456789abcdef"[k % 16];
    size_t need = 0;
    /* Compression attempts thin out after failures: a few tries. */
    for (int t = 0; t < 70 && !(need && need < sizeof(p)); t++) need = strval_embed_size(p, sizeof(p));
    CHECK(need > 0 && need < sizeof(p));
    gobj *o = entry_for(need);
    strval_set_embedded(o, &o->u, p, sizeof(p));
    CHECK(o->enc == ENC_RAW);
    const char *c;
    size_t clen, len;
    CHECK(strval_lzf(o, &c, &clen, &len) == 1 && len == sizeof(p) && clen < len);
    check_value(o, p, sizeof(p));
    strval_end_command();
    strval_free(o);
    free(o);
}

TEST(strval, embedded_grows_into_the_arena) {
    objstore_ensure_init();
    size_t before = live_records();
    gobj *o = entry_for(strval_embed_size("abc", 3));
    strval_set_embedded(o, &o->u, "abc", 3);
    char *w = strval_resize(o, 3); /* fits: stays */
    CHECK(w && strval_is_embedded(o));
    w = strval_resize(o, 50); /* APPEND-like growth: moves out */
    CHECK(w && !strval_is_embedded(o) && memcmp(w, "abc", 3) == 0 && w[3] == 0 && w[49] == 0);
    gobj moved = *o; /* out of the room: a copy is the value now */
    memset(o, 0x77, sizeof(*o)); /* the old room no longer matters */
    CHECK(live_records() == before + 1);
    CHECK(strval_len(&moved) == 50);
    strval_free(&moved);
    CHECK(live_records() == before);
    free(o);
}

TEST(strval, unembed_copies_out) {
    objstore_ensure_init();
    size_t before = live_records();
    const char *s = "moves with RENAME";
    gobj *e = entry_for(strval_embed_size(s, strlen(s)));
    strval_set_embedded(e, &e->u, s, strlen(s));
    CHECK(strval_unembed(e) == 0);
    CHECK(!strval_is_embedded(e) && live_records() == before + 1);
    gobj o = *e; /* leaves its entry */
    memset(e, 0x11, sizeof(*e));
    free(e);
    check_value(&o, s, strlen(s));
    CHECK(strval_unembed(&o) == 0); /* not embedded: nothing to do */
    strval_free(&o);
    CHECK(live_records() == before);
}

TEST(strval, embed_a_loaded_value) {
    objstore_ensure_init();
    size_t before = live_records();
    gobj v = {0};
    CHECK(strval_set(&v, "from a snapshot", 15) == 0); /* in the arena */
    CHECK(!strval_is_embedded(&v) && live_records() == before + 1);
    size_t need = strval_embed_size_of(&v);
    CHECK(need >= 15 + 1);
    gobj *o = entry_for(need);
    *o = v; /* the entry's value first, then into its room */
    strval_embed(o, &o->u);
    CHECK(strval_is_embedded(o) && live_records() == before);
    check_value(o, "from a snapshot", 15);
    CHECK(strval_embed_size_of(o) == 0); /* already embedded */
    gobj i = {0};
    strval_set_int(&i, 12);
    CHECK(strval_embed_size_of(&i) == 0);
    strval_free(o);
    free(o);
}

/* An arena value's length is in its word beside the record's handle: the
 * record holds the bytes alone, grows in place within its room and moves
 * when it outgrows it; a copy of the word keeps the length it had. */
TEST(strval, arena_value_length_in_its_word) {
    objstore_ensure_init();
    size_t before = live_records();
    char v[600];
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < sizeof(v); i++) { /* xorshift: nothing for LZF to find */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v[i] = (char)(x >> 24);
    }
    gobj o = {0};
    CHECK(strval_set(&o, v, 300) == 0);
    CHECK(!strval_is_embedded(&o) && live_records() == before + 1);
    check_value(&o, v, 300);
    /* The header, the bytes and the cell (a freed record up to 12 bytes
     * bigger may be reused whole). */
    size_t m0 = strval_mem_usage(&o);
    CHECK(m0 >= 8 + 300 + SMALLOBJ_CELL_BYTES && m0 <= 8 + 300 + 12 + SMALLOBJ_CELL_BYTES);
    char *w = strval_resize(&o, 310); /* outgrows its room: a record with room to grow */
    CHECK(w && memcmp(w, v, 300) == 0 && w[309] == 0 && strval_len(&o) == 310);
    memcpy(w + 300, v + 300, 10);
    gobj copy = o;
    size_t mem = strval_mem_usage(&o);
    w = strval_resize(&o, 400); /* within the room: in place */
    CHECK(w && strval_mem_usage(&o) == mem && live_records() == before + 1);
    memcpy(w + 310, v + 310, 90);
    check_value(&o, v, 400);
    CHECK(strval_len(&copy) == 310);
    strval_free(&o);
    CHECK(live_records() == before);
}
