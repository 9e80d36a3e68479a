/* hiredis scenarios against a running goblin-core (Debian libhiredis-dev).
 *
 * Build: cc -std=gnu11 -O1 -Wall -o hiredis_test tests/clients/hiredis_test.c -lhiredis -levent
 * Run:   ./hiredis_test PORT [DB]
 * Prints one line per scenario: "passed: hiredis/NAME" or
 * "failed: hiredis/NAME: CAUSE". Covers the synchronous API, pipelining with
 * redisAppendCommand/redisGetReply, and the async API on libevent. */
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static int port;
static int db = 7;
static int failures;
static char cause[512];

/* Record the first failure of the current scenario. */
static int failf(const char *fmt, ...) {
    if (cause[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cause, sizeof cause, fmt, ap);
        va_end(ap);
        for (char *p = cause; *p; p++)
            if (*p == '\n' || *p == '\r') *p = ' ';
    }
    return 0;
}

static const char *type_name(int t) {
    switch (t) {
    case REDIS_REPLY_STRING: return "string";
    case REDIS_REPLY_ARRAY: return "array";
    case REDIS_REPLY_INTEGER: return "integer";
    case REDIS_REPLY_NIL: return "nil";
    case REDIS_REPLY_STATUS: return "status";
    case REDIS_REPLY_ERROR: return "error";
    default: return "?";
    }
}

/* Check a reply's type and (for string/status/error) its text. Frees nothing. */
static int expect(redisReply *r, int type, const char *str, const char *what) {
    if (r == NULL) return failf("%s: no reply", what);
    if (r->type != type) {
        if (r->type == REDIS_REPLY_ERROR) return failf("%s: %s", what, r->str);
        return failf("%s: %s reply, expected %s", what, type_name(r->type), type_name(type));
    }
    if (str && (size_t)r->len != strlen(str)) return failf("%s: got '%.*s', expected '%s'", what, (int)r->len, r->str, str);
    if (str && memcmp(r->str, str, r->len) != 0) return failf("%s: got '%.*s', expected '%s'", what, (int)r->len, r->str, str);
    return 1;
}

static int expect_int(redisReply *r, long long v, const char *what) {
    if (!expect(r, REDIS_REPLY_INTEGER, NULL, what)) return 0;
    if (r->integer != v) return failf("%s: got %lld, expected %lld", what, r->integer, v);
    return 1;
}

/* Run a command, check it, free it. */
#define CMD_EXPECT(c, type, str, what, ...)                    \
    do {                                                       \
        redisReply *r_ = redisCommand((c), __VA_ARGS__);       \
        int ok_ = expect(r_, (type), (str), (what));           \
        if (r_) freeReplyObject(r_);                           \
        if (!ok_) return;                                      \
    } while (0)
#define CMD_INT(c, v, what, ...)                               \
    do {                                                       \
        redisReply *r_ = redisCommand((c), __VA_ARGS__);       \
        int ok_ = expect_int(r_, (v), (what));                 \
        if (r_) freeReplyObject(r_);                           \
        if (!ok_) return;                                      \
    } while (0)

static redisContext *sync_connect(void) {
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c == NULL || c->err) {
        failf("connect: %s", c ? c->errstr : "out of memory");
        if (c) redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    redisReply *r = redisCommand(c, "SELECT %d", db);
    int ok = expect(r, REDIS_REPLY_STATUS, "OK", "SELECT");
    if (r) freeReplyObject(r);
    if (!ok) {
        redisFree(c);
        return NULL;
    }
    return c;
}

/* ------------------------------------------------------------ sync API */
static void sync_api_body(redisContext *c) {
    CMD_EXPECT(c, REDIS_REPLY_STATUS, "PONG", "PING", "PING");
    CMD_EXPECT(c, REDIS_REPLY_INTEGER, NULL, "DEL", "DEL hi:str hi:bin hi:n hi:list hi:m1 hi:m2");
    CMD_EXPECT(c, REDIS_REPLY_STATUS, "OK", "SET", "SET hi:str %s", "hello world");
    CMD_EXPECT(c, REDIS_REPLY_STRING, "hello world", "GET", "GET hi:str");
    CMD_EXPECT(c, REDIS_REPLY_NIL, NULL, "GET missing", "GET hi:missing");
    /* Binary-safe arguments with %b: NUL bytes and CRLF inside. */
    const char bin[] = "a\0b\r\nc\xff";
    CMD_EXPECT(c, REDIS_REPLY_STATUS, "OK", "SET %b", "SET hi:bin %b", bin, sizeof bin - 1);
    {
        redisReply *r = redisCommand(c, "GET hi:bin");
        int ok = expect(r, REDIS_REPLY_STRING, NULL, "GET binary");
        if (ok && (r->len != (int)(sizeof bin - 1) || memcmp(r->str, bin, r->len) != 0))
            ok = failf("GET binary: %d bytes back, not the %d sent", (int)r->len, (int)(sizeof bin - 1));
        if (r) freeReplyObject(r);
        if (!ok) return;
    }
    CMD_INT(c, 1, "INCR", "INCR hi:n");
    CMD_INT(c, 101, "INCRBY", "INCRBY hi:n %d", 100);
    CMD_EXPECT(c, REDIS_REPLY_ERROR, "ERR value is not an integer or out of range", "INCR on text", "INCR hi:str");
    CMD_EXPECT(c, REDIS_REPLY_ERROR,
               "WRONGTYPE Operation against a key holding the wrong kind of value", "LPUSH on a string",
               "LPUSH hi:str x");
    CMD_EXPECT(c, REDIS_REPLY_STATUS, "OK", "MSET", "MSET hi:m1 one hi:m2 two");
    {
        redisReply *r = redisCommand(c, "MGET hi:m1 hi:nope hi:m2");
        int ok = expect(r, REDIS_REPLY_ARRAY, NULL, "MGET");
        if (ok && r->elements != 3) ok = failf("MGET: %zu elements", r->elements);
        if (ok) ok = expect(r->element[0], REDIS_REPLY_STRING, "one", "MGET[0]") &&
                     expect(r->element[1], REDIS_REPLY_NIL, NULL, "MGET[1]") &&
                     expect(r->element[2], REDIS_REPLY_STRING, "two", "MGET[2]");
        if (r) freeReplyObject(r);
        if (!ok) return;
    }
    /* redisCommandArgv with explicit lengths. */
    {
        const char *argv[] = {"RPUSH", "hi:list", "a", "b", "c"};
        size_t lens[] = {5, 7, 1, 1, 1};
        redisReply *r = redisCommandArgv(c, 5, argv, lens);
        int ok = expect_int(r, 3, "RPUSH via redisCommandArgv");
        if (r) freeReplyObject(r);
        if (!ok) return;
    }
    {
        redisReply *r = redisCommand(c, "LRANGE hi:list 0 -1");
        int ok = expect(r, REDIS_REPLY_ARRAY, NULL, "LRANGE");
        if (ok && r->elements != 3) ok = failf("LRANGE: %zu elements", r->elements);
        if (ok) ok = expect(r->element[2], REDIS_REPLY_STRING, "c", "LRANGE[2]");
        if (r) freeReplyObject(r);
        if (!ok) return;
    }
    CMD_EXPECT(c, REDIS_REPLY_ERROR, NULL, "unknown command", "NOSUCHCOMMAND x");
}

static void scenario_sync_api(void) {
    redisContext *c = sync_connect();
    if (!c) return;
    sync_api_body(c);
    redisFree(c);
}

/* ---------------------------------------------------- pipelined append */
static void pipeline_body(redisContext *c) {
    enum { N = 10000 };
    if (redisAppendCommand(c, "DEL hi:pipe:ctr") != REDIS_OK) { failf("append: %s", c->errstr); return; }
    for (int i = 0; i < N; i++) {
        if (redisAppendCommand(c, "SET hi:pipe:%d %d", i, i) != REDIS_OK ||
            redisAppendCommand(c, "INCR hi:pipe:ctr") != REDIS_OK) {
            failf("append: %s", c->errstr);
            return;
        }
    }
    redisAppendCommand(c, "GET hi:pipe:%d", N - 1);
    redisAppendCommand(c, "MGET hi:pipe:0 hi:pipe:1 hi:pipe:2");
    redisReply *r;
    if (redisGetReply(c, (void **)&r) != REDIS_OK) { failf("read: %s", c->errstr); return; }
    int ok = expect(r, REDIS_REPLY_INTEGER, NULL, "DEL");
    freeReplyObject(r);
    if (!ok) return;
    for (int i = 0; i < N; i++) {
        if (redisGetReply(c, (void **)&r) != REDIS_OK) { failf("read SET #%d: %s", i, c->errstr); return; }
        ok = expect(r, REDIS_REPLY_STATUS, "OK", "pipelined SET");
        freeReplyObject(r);
        if (!ok) return;
        if (redisGetReply(c, (void **)&r) != REDIS_OK) { failf("read INCR #%d: %s", i, c->errstr); return; }
        ok = expect_int(r, i + 1, "pipelined INCR (replies in order)");
        freeReplyObject(r);
        if (!ok) return;
    }
    char last[16];
    snprintf(last, sizeof last, "%d", N - 1);
    if (redisGetReply(c, (void **)&r) != REDIS_OK) { failf("read GET: %s", c->errstr); return; }
    ok = expect(r, REDIS_REPLY_STRING, last, "pipelined GET");
    freeReplyObject(r);
    if (!ok) return;
    if (redisGetReply(c, (void **)&r) != REDIS_OK) { failf("read MGET: %s", c->errstr); return; }
    ok = expect(r, REDIS_REPLY_ARRAY, NULL, "pipelined MGET");
    if (ok && r->elements != 3) ok = failf("MGET: %zu elements", r->elements);
    if (ok) ok = expect(r->element[2], REDIS_REPLY_STRING, "2", "MGET[2]");
    freeReplyObject(r);
}

static void scenario_pipeline(void) {
    redisContext *c = sync_connect();
    if (!c) return;
    pipeline_body(c);
    redisFree(c);
}

/* ------------------------------------------------- async API on libevent */
struct async_state {
    struct event_base *base;
    redisAsyncContext *sub, *cmd;
    int subscribed;      /* subscribe confirmations seen */
    int messages;        /* messages received on the subscriber */
    int incr_replies;    /* INCR replies in order */
    int published;       /* PUBLISH replies that counted one receiver */
    int get_ok;
    int disconnected;    /* contexts whose disconnect callback ran */
    int finishing;       /* disconnects requested */
};

enum { ASYNC_INCRS = 1000, ASYNC_MESSAGES = 3 };

static void on_timeout(evutil_socket_t fd, short what, void *arg) {
    (void)fd, (void)what;
    struct async_state *st = arg;
    failf("timed out: %d/%d subscribe, %d/%d messages, %d/%d INCR replies, %d/%d publishes",
          st->subscribed, 1, st->messages, ASYNC_MESSAGES, st->incr_replies, ASYNC_INCRS, st->published,
          ASYNC_MESSAGES);
    event_base_loopbreak(st->base);
}

static void maybe_finish(struct async_state *st) {
    if (st->messages == ASYNC_MESSAGES && st->incr_replies == ASYNC_INCRS && st->get_ok &&
        st->published == ASYNC_MESSAGES && !st->finishing) {
        st->finishing = 1;
        if (st->sub) redisAsyncDisconnect(st->sub);
        if (st->cmd) redisAsyncDisconnect(st->cmd);
    }
}

static void on_get(redisAsyncContext *ac, void *reply, void *priv) {
    (void)ac;
    struct async_state *st = priv;
    if (reply && expect(reply, REDIS_REPLY_STRING, "async-value", "async GET")) st->get_ok = 1;
    maybe_finish(st);
}

static void on_incr(redisAsyncContext *ac, void *reply, void *priv) {
    (void)ac;
    struct async_state *st = priv;
    if (reply && expect_int(reply, st->incr_replies + 1, "async INCR (callbacks in order)")) st->incr_replies++;
    maybe_finish(st);
}

static void on_publish(redisAsyncContext *ac, void *reply, void *priv) {
    (void)ac;
    struct async_state *st = priv;
    if (reply && expect_int(reply, 1, "PUBLISH receivers")) st->published++;
    maybe_finish(st);
}

static void on_status(redisAsyncContext *ac, void *reply, void *priv) {
    (void)ac, (void)priv;
    if (reply) expect(reply, REDIS_REPLY_STATUS, "OK", "async status reply");
}

static void on_del(redisAsyncContext *ac, void *reply, void *priv) {
    (void)ac, (void)priv;
    if (reply) expect(reply, REDIS_REPLY_INTEGER, NULL, "async DEL");
}

static void on_message(redisAsyncContext *ac, void *reply, void *priv) {
    (void)ac;
    struct async_state *st = priv;
    redisReply *r = reply;
    if (r == NULL) return; /* disconnecting */
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        failf("subscriber got a %s reply with %zu elements", type_name(r->type), r->elements);
        return;
    }
    const char *kind = r->element[0]->str;
    if (strcmp(kind, "subscribe") == 0) {
        if (!expect(r->element[1], REDIS_REPLY_STRING, "hi:async:chan", "subscribe channel")) return;
        st->subscribed++;
        /* Subscribed: now publish from the other connection. */
        for (int i = 0; i < ASYNC_MESSAGES; i++)
            redisAsyncCommand(st->cmd, on_publish, st, "PUBLISH hi:async:chan msg-%d", i);
    } else if (strcmp(kind, "message") == 0) {
        char want[32];
        snprintf(want, sizeof want, "msg-%d", st->messages);
        if (!expect(r->element[2], REDIS_REPLY_STRING, want, "message payload (in order)")) return;
        st->messages++;
        maybe_finish(st);
    } else {
        failf("unexpected push '%s'", kind);
    }
}

static void on_connect(const redisAsyncContext *ac, int status) {
    struct async_state *st = ac->data;
    if (status == REDIS_OK) return;
    failf("async connect: %s", ac->errstr);
    /* hiredis frees the context without a disconnect callback. */
    if (ac == st->sub) st->sub = NULL;
    if (ac == st->cmd) st->cmd = NULL;
    if (++st->disconnected == 2) event_base_loopbreak(st->base);
}

static void on_disconnect(const redisAsyncContext *ac, int status) {
    struct async_state *st = ac->data;
    if (status != REDIS_OK) failf("async disconnect: %s", ac->errstr);
    /* hiredis frees a context after its disconnect callback. */
    if (ac == st->sub) st->sub = NULL;
    if (ac == st->cmd) st->cmd = NULL;
    if (++st->disconnected == 2) event_base_loopbreak(st->base);
}

static redisAsyncContext *async_connect(struct async_state *st) {
    redisAsyncContext *ac = redisAsyncConnect("127.0.0.1", port);
    if (ac == NULL || ac->err) {
        failf("async connect: %s", ac ? ac->errstr : "out of memory");
        return NULL;
    }
    ac->data = st;
    redisLibeventAttach(ac, st->base);
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    return ac;
}

static void scenario_async(void) {
    struct async_state st;
    memset(&st, 0, sizeof st);
    st.base = event_base_new();
    st.cmd = async_connect(&st);
    st.sub = st.cmd ? async_connect(&st) : NULL;
    if (!st.cmd || !st.sub) {
        event_base_free(st.base);
        return;
    }
    /* Commands queued before the connection completes are sent on connect. */
    redisAsyncCommand(st.cmd, on_status, &st, "SELECT %d", db);
    redisAsyncCommand(st.cmd, on_del, &st, "DEL hi:async:ctr");
    redisAsyncCommand(st.cmd, on_status, &st, "SET hi:async:key %s", "async-value");
    redisAsyncCommand(st.cmd, on_get, &st, "GET hi:async:key");
    for (int i = 0; i < ASYNC_INCRS; i++) redisAsyncCommand(st.cmd, on_incr, &st, "INCR hi:async:ctr");
    redisAsyncCommand(st.sub, on_message, &st, "SUBSCRIBE hi:async:chan");

    struct event *timer = evtimer_new(st.base, on_timeout, &st);
    struct timeval tv = {10, 0};
    evtimer_add(timer, &tv);
    event_base_dispatch(st.base);
    event_free(timer);
    if (cause[0] == '\0' && !(st.messages == ASYNC_MESSAGES && st.incr_replies == ASYNC_INCRS && st.get_ok))
        failf("loop ended early: %d messages, %d INCR replies", st.messages, st.incr_replies);
    /* After a timeout the contexts may still be connected. */
    if (st.sub) redisAsyncFree(st.sub);
    if (st.cmd) redisAsyncFree(st.cmd);
    event_base_free(st.base);
}

static void run(const char *name, void (*fn)(void)) {
    cause[0] = '\0';
    fn();
    if (cause[0] == '\0') {
        printf("passed: hiredis/%s\n", name);
    } else {
        printf("failed: hiredis/%s: %s\n", name, cause);
        failures++;
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PORT [DB]\n", argv[0]);
        return 2;
    }
    port = atoi(argv[1]);
    if (argc > 2) db = atoi(argv[2]);
    run("sync-api", scenario_sync_api);
    run("pipelined-append", scenario_pipeline);
    run("async-libevent", scenario_async);
    return failures ? 1 : 0;
}
