/* test_wstream.c -- the write stream's encoding and ordering: records are
 * RESP arrays of bulk strings, SELECT comes exactly when the database
 * changes (and after a forced select), every sink of a kind sees the same
 * bytes, the replica-only records and their SELECTs reach the replication
 * sinks only, an idle stream appends nothing, and the offset counts what
 * was handed out to the replication sinks. */
#include <stdlib.h>
#include <string.h>

#include "persist/wstream.h"
#include "unit.h"

typedef struct capture {
    char buf[4096];
    size_t len;
} capture;

static void cap_write(void *arg, const char *p, size_t n) {
    capture *c = arg;
    if (c->len + n <= sizeof(c->buf)) memcpy(c->buf + c->len, p, n);
    c->len += n;
}

static void append(int db, int argc, const char **p) {
    size_t n[8];
    for (int i = 0; i < argc; i++) n[i] = strlen(p[i]);
    wstream_lock();
    wstream_append_locked(db, argc, p, n);
    wstream_unlock();
}

TEST(wstream, idle_appends_nothing) {
    uint64_t off = wstream_offset();
    CHECK(!wstream_active());
    const char *set[3] = {"SET", "k", "v"};
    append(0, 3, set);
    CHECK_EQ(wstream_offset(), off);
}

TEST(wstream, select_when_the_db_changes) {
    capture a = {0}, b = {0};
    wstream_sink sa = {cap_write, &a, 1}, sb = {cap_write, &b, 1};
    CHECK_EQ(wstream_add_sink(&sa), 0);
    CHECK_EQ(wstream_add_sink(&sb), 0);
    CHECK(wstream_active());
    uint64_t off = wstream_offset();
    const char *set[3] = {"SET", "k", "v"};
    const char *del[2] = {"DEL", "k"};
    const char *flush[1] = {"FLUSHALL"};
    append(3, 3, set);
    append(3, 2, del);
    append(-1, 1, flush);   /* no database: no SELECT, and the last one stays */
    append(3, 2, del);
    append(0, 2, del);
    wstream_lock();
    wstream_force_select_locked(1);
    wstream_unlock();
    append(0, 2, del);
    const char *want = "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n"
                       "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
                       "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"
                       "*1\r\n$8\r\nFLUSHALL\r\n"
                       "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"
                       "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
                       "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"
                       "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
                       "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n";
    CHECK_EQ(a.len, strlen(want));
    CHECK(memcmp(a.buf, want, a.len) == 0);
    CHECK_EQ(b.len, a.len);
    CHECK(memcmp(a.buf, b.buf, a.len) == 0);
    CHECK_EQ(wstream_offset() - off, (uint64_t)a.len);
    wstream_remove_sink(&sa);
    CHECK(wstream_active());
    wstream_remove_sink(&sb);
    CHECK(!wstream_active());
}

static void append_repl(int db, int argc, const char **p) {
    size_t n[8];
    for (int i = 0; i < argc; i++) n[i] = strlen(p[i]);
    wstream_lock();
    wstream_append_repl_locked(db, argc, p, n);
    wstream_unlock();
}

TEST(wstream, replica_only_records_and_their_selects_skip_the_other_sinks) {
    capture aof = {0}, rep = {0};
    wstream_sink sa = {cap_write, &aof, 0}, sr = {cap_write, &rep, 1};
    CHECK_EQ(wstream_add_sink(&sa), 0);
    CHECK_EQ(wstream_add_sink(&sr), 0);
    CHECK(wstream_repl_active());
    uint64_t off = wstream_offset();
    const char *set[3] = {"SET", "k", "v"};
    const char *pub[3] = {"PUBLISH", "c", "m"};
    const char *del[2] = {"DEL", "k"};
    append(0, 3, set);
    append_repl(1, 3, pub);
    append(0, 2, del);
    append(1, 2, del);
    wstream_lock();
    wstream_force_select_locked(0);
    wstream_unlock();
    append(1, 2, del);
#define SEL(d) "*2\r\n$6\r\nSELECT\r\n$1\r\n" d "\r\n"
#define SETKV "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
#define DELK "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"
    const char *want_rep = SEL("0") SETKV SEL("1") "*3\r\n$7\r\nPUBLISH\r\n$1\r\nc\r\n$1\r\nm\r\n" SEL("0") DELK
        SEL("1") DELK DELK;
    const char *want_aof = SEL("0") SETKV DELK SEL("1") DELK SEL("1") DELK;
#undef SEL
#undef SETKV
#undef DELK
    CHECK_EQ(rep.len, strlen(want_rep));
    CHECK(memcmp(rep.buf, want_rep, rep.len) == 0);
    CHECK_EQ(aof.len, strlen(want_aof));
    CHECK(memcmp(aof.buf, want_aof, aof.len) == 0);
    CHECK_EQ(wstream_offset() - off, (uint64_t)rep.len);
    wstream_remove_sink(&sa);
    wstream_remove_sink(&sr);
    CHECK(!wstream_active());
}

TEST(wstream, binary_arguments_keep_their_length) {
    capture a = {0};
    wstream_sink sa = {cap_write, &a};
    CHECK_EQ(wstream_add_sink(&sa), 0);
    const char *p[3] = {"SET", "k\r\n", "a\0b"};
    const size_t n[3] = {3, 3, 3};
    wstream_lock();
    wstream_append_locked(-1, 3, p, n);
    wstream_unlock();
    const char want[] = "*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$3\r\na\0b\r\n";
    CHECK_EQ(a.len, sizeof(want) - 1);
    CHECK(memcmp(a.buf, want, a.len) == 0);
    wstream_remove_sink(&sa);
}
