#!/usr/bin/python3
"""redis-py scenarios against a running goblin-core.

Usage: /usr/bin/python3 tests/clients/redis_py_test.py PORT [DB]
Uses Debian's python3-redis (the python3 first on PATH may lack it).
Prints one line per scenario: "passed: redis-py/NAME" or
"failed: redis-py/NAME: CAUSE". Every scenario asserts its results.
"""
import json
import sys
import threading
import time
import traceback

SUITE = "redis-py"
PORT = int(sys.argv[1])
DB = int(sys.argv[2]) if len(sys.argv) > 2 else 5

try:
    import redis
except ImportError as e:  # reported, not skipped
    print(f"failed: {SUITE}/import: python3-redis not importable ({e}); "
          "install the Debian package python3-redis (deps/install.sh)")
    sys.exit(1)

SCENARIOS = []


def scenario(fn):
    SCENARIOS.append(fn)
    return fn


def client(**kw):
    opts = dict(host="127.0.0.1", port=PORT, db=DB, decode_responses=True,
                socket_timeout=10, socket_connect_timeout=5)
    opts.update(kw)
    return redis.Redis(**opts)


def eq(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, expected {want!r}")


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def raises(exc, fn, what):
    try:
        fn()
    except exc as e:
        return e
    raise AssertionError(f"{what}: no {exc.__name__} raised")


def run_thread(fn, *args):
    """Start fn in a thread; join() re-raises what it raised."""
    box = {}

    def body():
        try:
            box["result"] = fn(*args)
        except BaseException as e:  # noqa: B902 - handed to the joiner
            box["error"] = e

    t = threading.Thread(target=body, daemon=True)
    t.start()

    def join(timeout=15):
        t.join(timeout)
        check(not t.is_alive(), f"thread {fn.__name__} still running after {timeout}s")
        if "error" in box:
            raise box["error"]
        return box.get("result")
    return join


def clean(r, prefix):
    keys = list(r.scan_iter(match=prefix + "*", count=1000))
    if keys:
        r.delete(*keys)


# ------------------------------------------------------------------ strings
@scenario
def strings():
    r = client()
    clean(r, "py:str:")
    eq(r.set("py:str:a", "hello"), True, "SET")
    eq(r.get("py:str:a"), "hello", "GET")
    eq(r.get("py:str:missing"), None, "GET missing")
    eq(r.set("py:str:a", "x", nx=True), None, "SET NX on existing")
    eq(r.set("py:str:b", "x", xx=True), None, "SET XX on missing")
    eq(r.set("py:str:a", "old", get=True), "hello", "SET GET")
    eq(r.append("py:str:a", "er"), 5, "APPEND")
    eq(r.strlen("py:str:a"), 5, "STRLEN")
    eq(r.getrange("py:str:a", 1, 3), "lde", "GETRANGE")
    eq(r.setrange("py:str:a", 0, "C"), 5, "SETRANGE")
    eq(r.get("py:str:a"), "Clder", "GET after SETRANGE")
    eq(r.mset({"py:str:m1": "1", "py:str:m2": "2"}), True, "MSET")
    eq(r.mget("py:str:m1", "py:str:missing", "py:str:m2"), ["1", None, "2"], "MGET")
    eq(r.incr("py:str:n"), 1, "INCR")
    eq(r.incrby("py:str:n", 41), 42, "INCRBY")
    eq(r.decr("py:str:n"), 41, "DECR")
    eq(r.incrbyfloat("py:str:n", 0.5), 41.5, "INCRBYFLOAT")
    e = raises(redis.ResponseError, lambda: r.incr("py:str:a"), "INCR on non-integer")
    check("not an integer" in str(e), f"INCR error text: {e}")
    eq(r.setex("py:str:ttl", 100, "v"), True, "SETEX")
    check(95 <= r.ttl("py:str:ttl") <= 100, "TTL after SETEX")
    check(0 < r.pttl("py:str:ttl") <= 100000, "PTTL")
    eq(r.set("py:str:px", "v", px=50000), True, "SET PX")
    eq(r.getex("py:str:px", persist=True), "v", "GETEX PERSIST")
    eq(r.ttl("py:str:px"), -1, "TTL after PERSIST")
    eq(r.getdel("py:str:px"), "v", "GETDEL")
    eq(r.exists("py:str:px"), 0, "EXISTS after GETDEL")
    eq(r.getset("py:str:m1", "one"), "1", "GETSET")
    raw = client(decode_responses=False)
    blob = bytes(range(256)) * 4
    raw.set(b"py:str:bin\x00key", blob)
    eq(raw.get(b"py:str:bin\x00key"), blob, "binary-safe key and value")
    eq(r.delete("py:str:a", "py:str:m1", "py:str:nothing"), 2, "DEL count")
    eq(r.type("py:str:m2"), "string", "TYPE")


# ------------------------------------------------------------------- hashes
@scenario
def hashes():
    r = client()
    clean(r, "py:hash:")
    k = "py:hash:h"
    eq(r.hset(k, mapping={"a": "1", "b": "2", "c": "3"}), 3, "HSET mapping")
    eq(r.hset(k, "a", "10"), 0, "HSET existing field")
    eq(r.hget(k, "a"), "10", "HGET")
    eq(r.hget(k, "zz"), None, "HGET missing field")
    eq(r.hgetall(k), {"a": "10", "b": "2", "c": "3"}, "HGETALL")
    eq(r.hmget(k, ["a", "zz", "c"]), ["10", None, "3"], "HMGET")
    eq(r.hlen(k), 3, "HLEN")
    eq(sorted(r.hkeys(k)), ["a", "b", "c"], "HKEYS")
    eq(sorted(r.hvals(k)), ["10", "2", "3"], "HVALS")
    eq(r.hexists(k, "b"), True, "HEXISTS")
    eq(r.hincrby(k, "b", 5), 7, "HINCRBY")
    eq(r.hincrbyfloat(k, "c", 1.25), 4.25, "HINCRBYFLOAT")
    eq(r.hsetnx(k, "a", "x"), False, "HSETNX existing")
    eq(r.hsetnx(k, "d", "x"), True, "HSETNX new")
    eq(r.hstrlen(k, "d"), 1, "HSTRLEN")
    eq(r.hdel(k, "a", "zz"), 1, "HDEL")
    eq(r.type(k), "hash", "TYPE")
    big = {f"f{i}": str(i) for i in range(1000)}
    r.hset("py:hash:big", mapping=big)
    eq(r.hgetall("py:hash:big"), big, "HGETALL of 1000 fields")
    eq(dict(r.hscan_iter("py:hash:big", count=100)), big, "hscan_iter")
    r.set("py:hash:str", "x")
    e = raises(redis.ResponseError, lambda: r.hget("py:hash:str", "f"), "HGET on a string")
    check(str(e).startswith("WRONGTYPE"), f"WRONGTYPE error: {e}")


# -------------------------------------------------------------------- zsets
@scenario
def zsets():
    r = client()
    clean(r, "py:zset:")
    k = "py:zset:z"
    eq(r.zadd(k, {"a": 1, "b": 2, "c": 3.5}), 3, "ZADD")
    eq(r.zadd(k, {"a": 5}, nx=True), 0, "ZADD NX")
    eq(r.zadd(k, {"a": 0.5}, xx=True, ch=True), 1, "ZADD XX CH")
    eq(r.zadd(k, {"a": 0.1}, gt=True), 0, "ZADD GT lower")
    eq(r.zscore(k, "a"), 0.5, "ZSCORE")
    eq(r.zincrby(k, 2, "a"), 2.5, "ZINCRBY")
    eq(r.zrange(k, 0, -1, withscores=True), [("b", 2.0), ("a", 2.5), ("c", 3.5)], "ZRANGE WITHSCORES")
    eq(r.zrevrange(k, 0, 0), ["c"], "ZREVRANGE")
    eq(r.zrangebyscore(k, 2, "+inf", start=1, num=5), ["a", "c"], "ZRANGEBYSCORE LIMIT")
    eq(r.zrank(k, "c"), 2, "ZRANK")
    eq(r.zrevrank(k, "c"), 0, "ZREVRANK")
    eq(r.zcount(k, "(2", 4), 2, "ZCOUNT")
    eq(r.zcard(k), 3, "ZCARD")
    eq(r.zmscore(k, ["a", "nope"]), [2.5, None], "ZMSCORE")
    eq(r.zrem(k, "b", "nope"), 1, "ZREM")
    r.zadd("py:zset:o", {"a": 10, "x": 1})
    eq(r.zunionstore("py:zset:u", [k, "py:zset:o"]), 3, "ZUNIONSTORE")
    eq(r.zrange("py:zset:u", 0, -1, withscores=True), [("x", 1.0), ("c", 3.5), ("a", 12.5)], "union result")
    eq(r.zinterstore("py:zset:i", {k: 1, "py:zset:o": 2}), 1, "ZINTERSTORE weights")
    eq(r.zscore("py:zset:i", "a"), 22.5, "weighted intersection score")
    eq(r.zpopmin(k), [("a", 2.5)], "ZPOPMIN")
    eq(r.zpopmax("py:zset:u", 2), [("a", 12.5), ("c", 3.5)], "ZPOPMAX count")
    r.zadd("py:zset:lex", {m: 0 for m in "abcdefg"})
    eq(r.zrangebylex("py:zset:lex", "[b", "(e"), ["b", "c", "d"], "ZRANGEBYLEX")
    members = {f"m{i}": float(i) for i in range(600)}
    r.zadd("py:zset:big", members)
    eq(dict(r.zscan_iter("py:zset:big", count=50)), members, "zscan_iter")


# -------------------------------------------------------------------- lists
@scenario
def lists():
    r = client()
    clean(r, "py:list:")
    k = "py:list:l"
    eq(r.rpush(k, "a", "b", "c"), 3, "RPUSH")
    eq(r.lpush(k, "z"), 4, "LPUSH")
    eq(r.lrange(k, 0, -1), ["z", "a", "b", "c"], "LRANGE")
    eq(r.llen(k), 4, "LLEN")
    eq(r.lindex(k, -1), "c", "LINDEX")
    eq(r.lset(k, 1, "A"), True, "LSET")
    eq(r.linsert(k, "before", "b", "ins"), 5, "LINSERT")
    eq(r.lpos(k, "b"), 3, "LPOS")
    eq(r.lrem(k, 0, "ins"), 1, "LREM")
    eq(r.lpop(k), "z", "LPOP")
    eq(r.rpop(k, 2), ["c", "b"], "RPOP count")
    r.rpush(k, *[str(i) for i in range(100)])
    eq(r.ltrim(k, 0, 9), True, "LTRIM")
    eq(r.llen(k), 10, "LLEN after LTRIM")
    eq(r.lmove(k, "py:list:dst", "LEFT", "RIGHT"), "A", "LMOVE")
    eq(r.rpoplpush(k, "py:list:dst"), "8", "RPOPLPUSH")
    eq(r.lrange("py:list:dst", 0, -1), ["8", "A"], "destination list (RPOPLPUSH pushes to the head)")
    eq(r.lpushx("py:list:nope", "x"), 0, "LPUSHX on missing")
    eq(r.type(k), "list", "TYPE")


# --------------------------------------------------------------------- sets
@scenario
def sets():
    r = client()
    clean(r, "py:set:")
    eq(r.sadd("py:set:a", "x", "y", "z", "x"), 3, "SADD")
    r.sadd("py:set:b", "y", "z", "w")
    eq(r.smembers("py:set:a"), {"x", "y", "z"}, "SMEMBERS")
    eq(r.sismember("py:set:a", "x"), True, "SISMEMBER")
    eq(r.smismember("py:set:a", ["x", "q"]), [True, False], "SMISMEMBER")
    eq(r.scard("py:set:a"), 3, "SCARD")
    eq(r.sinter("py:set:a", "py:set:b"), {"y", "z"}, "SINTER")
    eq(r.sunion("py:set:a", "py:set:b"), {"x", "y", "z", "w"}, "SUNION")
    eq(r.sdiff("py:set:a", "py:set:b"), {"x"}, "SDIFF")
    eq(r.sinterstore("py:set:i", ["py:set:a", "py:set:b"]), 2, "SINTERSTORE")
    eq(r.smove("py:set:a", "py:set:b", "x"), True, "SMOVE")
    eq(r.srem("py:set:b", "x", "nope"), 1, "SREM")
    popped = r.spop("py:set:b")
    check(popped in {"y", "z", "w"}, f"SPOP returned {popped!r}")
    check(r.srandmember("py:set:a") in {"y", "z"}, "SRANDMEMBER")
    members = {f"m{i}" for i in range(700)}
    r.sadd("py:set:big", *members)
    eq(set(r.sscan_iter("py:set:big", count=50)), members, "sscan_iter")
    eq(r.type("py:set:big"), "set", "TYPE")


# ---------------------------------------------------------------- pipelines
@scenario
def pipeline_no_transaction():
    r = client()
    clean(r, "py:pipe:")
    pipe = r.pipeline(transaction=False)
    for i in range(200):
        pipe.set(f"py:pipe:{i}", i)
    for i in range(200):
        pipe.incr(f"py:pipe:{i}")
    pipe.get("py:pipe:199")
    res = pipe.execute()
    eq(len(res), 401, "number of replies")
    eq(res[:200], [True] * 200, "SET replies")
    eq(res[200:400], list(range(1, 201)), "INCR replies")
    eq(res[400], "200", "last GET")
    # An error reply inside a pipeline is returned in place.
    pipe = r.pipeline(transaction=False)
    pipe.set("py:pipe:s", "x").lpush("py:pipe:s", "y").get("py:pipe:s")
    res = pipe.execute(raise_on_error=False)
    eq(res[0], True, "SET in pipeline")
    check(isinstance(res[1], redis.ResponseError) and str(res[1]).startswith("WRONGTYPE"),
          f"WRONGTYPE in place, got {res[1]!r}")
    eq(res[2], "x", "command after the error")


@scenario
def pipeline_transaction():
    r = client()
    clean(r, "py:multi:")
    pipe = r.pipeline()  # MULTI/EXEC
    pipe.set("py:multi:a", 1).incr("py:multi:a").incrby("py:multi:a", 10).get("py:multi:a")
    eq(pipe.execute(), [True, 2, 12, "12"], "MULTI/EXEC replies")
    # A runtime error inside EXEC does not roll back the others.
    pipe = r.pipeline()
    pipe.set("py:multi:s", "x").lpush("py:multi:s", "y").set("py:multi:t", "after")
    e = raises(redis.ResponseError, pipe.execute, "EXEC with a WRONGTYPE command")
    check("WRONGTYPE" in str(e), f"error names WRONGTYPE: {e}")
    eq(r.get("py:multi:t"), "after", "commands after the failing one ran")
    # A command rejected while queueing aborts the whole transaction.
    pipe = r.pipeline()
    pipe.set("py:multi:u", "never")
    pipe.execute_command("INCRBY", "py:multi:u")  # wrong arity
    raises(redis.ResponseError, pipe.execute, "EXEC after a queueing error")
    eq(r.exists("py:multi:u"), 0, "EXECABORT discarded the transaction")


@scenario
def watch_optimistic_locking():
    r = client()
    other = client()
    k = "py:watch:balance"
    r.set(k, 100)
    go_modify = threading.Event()
    modified = threading.Event()

    def modifier():
        check(go_modify.wait(10), "modifier was never released")
        other.incrby(k, 5)  # a concurrent client changes the watched key
        modified.set()

    join = run_thread(modifier)
    attempts = []

    def txn(pipe):
        attempts.append(1)
        bal = int(pipe.get(k))  # immediate mode after WATCH
        if len(attempts) == 1:
            go_modify.set()
            check(modified.wait(10), "modifier did not run")
        pipe.multi()
        pipe.set(k, bal * 2)

    r.transaction(txn, k)
    join()
    eq(len(attempts), 2, "transaction attempts (first must hit WatchError)")
    eq(r.get(k), "210", "value after the retried transaction")

    # Explicit WATCH/MULTI/EXEC: the concurrent write makes EXEC fail.
    with r.pipeline() as pipe:
        pipe.watch(k)
        other.set(k, 1)
        pipe.multi()
        pipe.set(k, 999)
        raises(redis.WatchError, pipe.execute, "EXEC after the watched key changed")
    eq(r.get(k), "1", "aborted transaction wrote nothing")

    # Contention: 4 threads x 25 optimistic increments, each retried until it commits.
    r.set("py:watch:ctr", 0)
    retries = []

    def worker():
        c = client()
        for _ in range(25):
            while True:
                with c.pipeline() as p:
                    try:
                        p.watch("py:watch:ctr")
                        v = int(p.get("py:watch:ctr"))
                        p.multi()
                        p.set("py:watch:ctr", v + 1)
                        p.execute()
                        break
                    except redis.WatchError:
                        retries.append(1)

    joins = [run_thread(worker) for _ in range(4)]
    for j in joins:
        j(60)
    eq(r.get("py:watch:ctr"), "100", f"counter after contended transactions ({len(retries)} retries)")


# ------------------------------------------------------------------ pub/sub
@scenario
def pubsub_listen():
    r = client()
    p = r.pubsub()
    p.subscribe("py:chan:news")
    p.psubscribe("py:pat:*")
    got = []
    it = p.listen()
    # The two confirmations come first.
    for _ in range(2):
        got.append(next(it))
    eq([(m["type"], m["channel"], m["data"]) for m in got],
       [("subscribe", "py:chan:news", 1), ("psubscribe", "py:pat:*", 2)], "confirmations")

    def publisher():
        pub = client()
        n1 = pub.publish("py:chan:news", "hello")
        n2 = pub.publish("py:pat:one", "world")
        n3 = pub.publish("py:chan:other", "nobody")
        pub.publish("py:chan:news", "bye")
        return n1, n2, n3

    join = run_thread(publisher)
    msgs = [next(it) for _ in range(3)]
    eq(join(), (1, 1, 0), "PUBLISH receiver counts")
    eq(msgs[0], {"type": "message", "pattern": None, "channel": "py:chan:news", "data": "hello"}, "message")
    eq(msgs[1], {"type": "pmessage", "pattern": "py:pat:*", "channel": "py:pat:one", "data": "world"}, "pmessage")
    eq(msgs[2]["data"], "bye", "third message")
    p.unsubscribe("py:chan:news")
    m = next(it)
    eq((m["type"], m["channel"], m["data"]), ("unsubscribe", "py:chan:news", 1), "unsubscribe confirmation")
    p.close()


@scenario
def pubsub_get_message():
    r = client()
    p = r.pubsub()
    p.subscribe("py:gm:a", "py:gm:b")
    confirms = [p.get_message(timeout=2) for _ in range(2)]
    eq([(m["type"], m["channel"]) for m in confirms],
       [("subscribe", "py:gm:a"), ("subscribe", "py:gm:b")], "subscribe confirmations")
    t0 = time.monotonic()
    eq(p.get_message(timeout=0.3), None, "get_message with nothing published")
    check(time.monotonic() - t0 >= 0.25, "get_message(timeout=0.3) returned early")
    eq(r.pubsub_numsub("py:gm:a"), [("py:gm:a", 1)], "PUBSUB NUMSUB")
    eq(r.publish("py:gm:b", "payload"), 1, "PUBLISH count")
    m = p.get_message(timeout=2)
    eq((m["type"], m["channel"], m["data"]), ("message", "py:gm:b", "payload"), "message")
    p.close()
    # ignore_subscribe_messages + a handler thread (run_in_thread).
    received = []
    done = threading.Event()
    p2 = r.pubsub(ignore_subscribe_messages=True)

    def handler(msg):
        received.append(msg["data"])
        if len(received) == 3:
            done.set()

    p2.subscribe(**{"py:gm:h": handler})
    th = p2.run_in_thread(sleep_time=0.05, daemon=True)
    deadline = time.monotonic() + 5
    while r.pubsub_numsub("py:gm:h")[0][1] < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    for i in range(3):
        r.publish("py:gm:h", f"m{i}")
    ok = done.wait(5)
    th.stop()
    th.join(5)
    check(ok, f"handler got {received}")
    eq(received, ["m0", "m1", "m2"], "handler messages in order")


# ----------------------------------------------------------- blocking pops
@scenario
def blocking_pops():
    r = client()
    clean(r, "py:block:")
    t0 = time.monotonic()
    eq(r.blpop("py:block:empty", timeout=1), None, "BLPOP timeout on empty list")
    el = time.monotonic() - t0
    check(0.9 <= el < 3, f"BLPOP timeout 1 s took {el:.2f} s")
    r.rpush("py:block:b", "x", "y")
    eq(r.blpop(["py:block:a", "py:block:b"], timeout=1), ("py:block:b", "x"), "BLPOP on ready key")
    eq(r.brpop("py:block:b", timeout=1), ("py:block:b", "y"), "BRPOP")

    def pusher():
        time.sleep(0.3)
        return client().rpush("py:block:late", "arrived")

    join = run_thread(pusher)
    t0 = time.monotonic()
    eq(r.blpop("py:block:late", timeout=5), ("py:block:late", "arrived"), "BLPOP woken by a push")
    el = time.monotonic() - t0
    eq(join(), 1, "RPUSH reply")
    check(0.2 <= el < 3, f"BLPOP woke after {el:.2f} s")
    # Fractional timeout (Redis 6+).
    t0 = time.monotonic()
    eq(r.brpop("py:block:empty", timeout=0.2), None, "BRPOP timeout 0.2")
    check(time.monotonic() - t0 < 1.5, "fractional BRPOP timeout")
    eq(r.blmove("py:block:empty", "py:block:dst", 0.2, "LEFT", "RIGHT"), None, "BLMOVE timeout")
    r.rpush("py:block:src", "m")
    eq(r.brpoplpush("py:block:src", "py:block:dst", 1), "m", "BRPOPLPUSH")
    eq(r.bzpopmin("py:block:zempty", timeout=0.2), None, "BZPOPMIN timeout")

    def zadder():
        time.sleep(0.2)
        client().zadd("py:block:z", {"low": 1, "high": 2})

    join = run_thread(zadder)
    eq(r.bzpopmin("py:block:z", timeout=5), ("py:block:z", "low", 1.0), "BZPOPMIN woken by ZADD")
    join()
    eq(r.bzpopmax("py:block:z", timeout=1), ("py:block:z", "high", 2.0), "BZPOPMAX")


# ---------------------------------------------------------------- scan_iter
@scenario
def scan_iter():
    r = client()
    clean(r, "py:scan:")
    pipe = r.pipeline(transaction=False)
    for i in range(1500):
        pipe.set(f"py:scan:k:{i}", i)
    for i in range(100):
        pipe.hset(f"py:scan:h:{i}", "f", i)
    pipe.execute()
    got = set(r.scan_iter(match="py:scan:k:*", count=100))
    eq(len(got), 1500, "scan_iter match count")
    eq(got, {f"py:scan:k:{i}" for i in range(1500)}, "scan_iter keys")
    eq(set(r.scan_iter(match="py:scan:*", _type="hash")), {f"py:scan:h:{i}" for i in range(100)},
       "scan_iter _type=hash")
    eq(list(r.scan_iter(match="py:scan:nothing:*")), [], "scan_iter with no match")


# --------------------------------------------------- connection pool/threads
@scenario
def connection_pool_threads():
    pool = redis.BlockingConnectionPool(host="127.0.0.1", port=PORT, db=DB, max_connections=4,
                                        timeout=20, decode_responses=True, socket_timeout=10)
    shared = redis.Redis(connection_pool=pool)
    shared.delete("py:pool:ctr", "py:pool:list")
    errors = []

    def worker(n):
        try:
            for i in range(150):
                shared.incr("py:pool:ctr")
                if i % 50 == 0:
                    shared.rpush("py:pool:list", f"{n}:{i}")
            # A pipeline checks a connection out for its whole run.
            with shared.pipeline() as p:
                p.incr("py:pool:ctr").get("py:pool:ctr")
                v = p.execute()
                check(int(v[1]) >= v[0] >= 1, f"pipeline reply {v}")
        except Exception as e:  # collected and reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    check(not errors, f"worker errors: {errors[:2]}")
    eq(shared.get("py:pool:ctr"), str(8 * 151), "counter after 8 threads")
    eq(shared.llen("py:pool:list"), 8 * 3, "list length")
    created = len(pool._connections)
    check(1 <= created <= 4, f"pool created {created} connections, limit 4")
    in_db = [c for c in shared.client_list() if c.get("db") == str(DB)]
    check(len(in_db) >= created, f"CLIENT LIST shows {len(in_db)} connections in db {DB}, pool has {created}")
    pool.disconnect()


@scenario
def client_tracking_redirect():
    # redis-py 4.3.4 speaks RESP2 only and has no client-side cache; its
    # client_tracking_on / client_trackinginfo / client_getredir commands
    # drive the RESP2 form of tracking: invalidations redirected to a
    # connection subscribed to __redis__:invalidate.
    print("note: redis-py 4.3.4 has no client-side cache API (RESP2 only, added in 5.x): "
          "CLIENT TRACKING with REDIRECT is exercised instead", flush=True)
    sub_conn = client(client_name="py-csc-sub")
    ps = sub_conn.pubsub()
    ps.subscribe("__redis__:invalidate")
    msg = ps.get_message(timeout=5)
    eq(msg["type"], "subscribe", "subscribe confirmation")
    writer = client()
    redir = int(next(c["id"] for c in writer.client_list() if c.get("name") == "py-csc-sub"))
    tracker = client(single_connection_client=True)
    eq(tracker.client_tracking_on(clientid=redir), "OK", "CLIENT TRACKING ON REDIRECT")
    eq(tracker.client_getredir(), redir, "CLIENT GETREDIR")
    info = tracker.client_trackinginfo()
    check("on" in info[1] and info[3] == redir, f"CLIENT TRACKINGINFO {info!r}")
    writer.set("py:csc:k", "1")
    eq(tracker.get("py:csc:k"), "1", "tracked GET")
    writer.set("py:csc:k", "2")
    got = None
    deadline = time.time() + 5
    while time.time() < deadline and got is None:
        m = ps.get_message(timeout=1)
        if m and m["type"] == "message":
            got = m
    check(got is not None, "no invalidation message")
    eq(got["channel"], "__redis__:invalidate", "channel")
    eq(got["data"], ["py:csc:k"], "invalidated keys")
    # FLUSHDB: a null invalidation (all keys).
    tracker.get("py:csc:k")
    writer.flushdb()
    got = None
    deadline = time.time() + 5
    while time.time() < deadline and got is None:
        m = ps.get_message(timeout=1)
        if m and m["type"] == "message":
            got = m
    check(got is not None and got["data"] is None, f"flush invalidation {got!r}")
    eq(tracker.client_tracking_off(), "OK", "CLIENT TRACKING OFF")
    eq(tracker.client_getredir(), -1, "GETREDIR after OFF")
    tracker.close()
    ps.close()


@scenario
def lua_job_queue():
    """A BullMQ-like add-job script: options packed with MessagePack by the
    client, job data as JSON, both read by the script (cmsgpack.unpack,
    cjson.decode), run through a registered Script (EVALSHA, then EVAL)."""
    r = client(decode_responses=False)
    clean(r, "pyjob:")

    def mp(v):  # the MessagePack subset the options use
        if isinstance(v, bool):
            return b"\xc3" if v else b"\xc2"
        if isinstance(v, int):
            return bytes([v]) if 0 <= v < 128 else b"\xce" + v.to_bytes(4, "big")
        if isinstance(v, str):
            b = v.encode()
            return bytes([0xa0 | len(b)]) + b if len(b) < 32 else b"\xd9" + bytes([len(b)]) + b
        if isinstance(v, dict):
            return bytes([0x80 | len(v)]) + b"".join(mp(k) + mp(x) for k, x in v.items())
        raise TypeError(v)

    add = r.register_script(
        "local opts = cmsgpack.unpack(ARGV[2]) "
        "local data = cjson.decode(ARGV[1]) "
        "local id = redis.call('incr', KEYS[1]) "
        "local key = KEYS[2] .. id "
        "redis.call('hset', key, 'name', data.name, 'data', ARGV[1], 'attempts', opts.attempts, "
        "'delay', opts.delay, 'lifo', tostring(opts.lifo)) "
        "if opts.lifo then redis.call('lpush', KEYS[3], id) else redis.call('rpush', KEYS[3], id) end "
        "return {id, data.name, cjson.encode(data.payload.items), opts.attempts + opts.delay}")
    job = json.dumps({"name": "email", "payload": {"to": "a@b.c", "items": [1, 2, 3]}})
    opts = mp({"attempts": 3, "delay": 70000, "lifo": False, "jobId": "x"})
    got = add(keys=["pyjob:id", "pyjob:job:", "pyjob:wait"], args=[job, opts])
    eq(got, [1, b"email", b"[1,2,3]", 70003], "first job")
    got = add(keys=["pyjob:id", "pyjob:job:", "pyjob:wait"],
              args=[job, mp({"attempts": 1, "delay": 0, "lifo": True})])
    eq(got[0], 2, "second job id")
    eq(r.lrange("pyjob:wait", 0, -1), [b"2", b"1"], "LIFO job first")
    eq(r.hget("pyjob:job:1", "attempts"), b"3", "attempts stored")
    eq(json.loads(r.hget("pyjob:job:1", "data")), json.loads(job), "job data stored")
    raises(redis.ResponseError, lambda: add(keys=["pyjob:id", "pyjob:job:", "pyjob:wait"], args=["{bad", opts]),
           "invalid JSON is a script error")
    clean(r, "pyjob:")


def main():
    try:
        client().ping()
    except Exception as e:
        for fn in SCENARIOS:
            print(f"failed: {SUITE}/{fn.__name__.replace('_', '-')}: cannot connect: {e}", flush=True)
        return 1
    failed = 0
    for fn in SCENARIOS:
        name = fn.__name__.replace("_", "-")
        try:
            fn()
            print(f"passed: {SUITE}/{name}", flush=True)
        except Exception as e:
            failed += 1
            cause = f"{type(e).__name__}: {e}" if not isinstance(e, (AssertionError, redis.ResponseError)) else str(e)
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"{__file__.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(tb) if f.name == fn.__name__ and f.filename == __file__), "")
            cause = " ".join(cause.split())
            print(f"failed: {SUITE}/{name}: {cause} ({where})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
