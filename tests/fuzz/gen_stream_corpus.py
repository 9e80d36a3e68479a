#!/usr/bin/env python3
"""gen_stream_corpus.py -- the seed corpus of the stream fuzz target.

    python3 tests/fuzz/gen_stream_corpus.py --port PORT [--out tests/fuzz/corpus/stream]

PORT is a redis-server 7.0 (the reference; it is flushed). Builds varied
streams (empty, deleted entries, trimmed, several nodes, integer and binary
values, groups with pending entries, consumers with and without pending
entries, claimed entries, XSETID), DUMPs each and writes the payload's body
(type byte and value, without the RDB version and CRC footer, as
fuzz_stream.c takes it) to OUT/<sha1>. Redis 7.0 writes type 19
(STREAM_LISTPACKS_2); each payload is also parsed and written again,
uncompressed, as type 15 (Redis 5-6: no first/max-deleted IDs, entries
added nor entries read) and as type 21 (Redis 7.2: consumers carry an
active time), so that every loader variant has valid seeds.
"""
import argparse
import hashlib
import os
import sys

import redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "persist"))
import rdbgen  # noqa: E402


def streams(r):
    """Fills keys s0.. on r; returns their names."""
    names = []

    def key():
        k = "s%d" % len(names)
        names.append(k)
        return k

    k = key()  # empty, never had an entry
    r.xgroup_create(k, "g", "$", mkstream=True)
    r.xgroup_destroy(k, "g")
    k = key()  # empty after deletion
    r.xadd(k, {"f": "v"}, id="5-1")
    r.xdel(k, "5-1")
    k = key()  # one entry
    r.xadd(k, {"field": "value"}, id="1-1")
    k = key()  # same fields (master-field flag), integers, negatives
    for i in range(20):
        r.xadd(k, {"a": i, "b": -i * 1000003, "c": "x" * (i % 5)}, id="%d-%d" % (1000 + i, i))
    k = key()  # fields that differ, binary and long values
    r.xadd(k, {"f1": "v1"})
    r.xadd(k, {"f2": b"\x00\xff\x01" * 10, "f3": "y" * 300})
    r.xadd(k, {"f1": "9223372036854775807", "g": "-9223372036854775808"})
    r.xadd(k, {"f1": "12345678901234567890"})
    k = key()  # deleted entries in the middle and at the ends
    for i in range(30):
        r.xadd(k, {"n": i}, id="%d-0" % (i + 1))
    r.xdel(k, "1-0", "10-0", "11-0", "30-0")
    k = key()  # several nodes, trimmed
    for i in range(350):
        r.xadd(k, {"k": i, "v": "val%d" % i}, id="%d-0" % (i + 1))
    r.xtrim(k, maxlen=250, approximate=False)
    r.xdel(k, "200-0")
    k = key()  # a group with pending entries, two consumers, an ack, a claim
    for i in range(10):
        r.xadd(k, {"f": i}, id="%d-0" % (i + 1))
    r.xgroup_create(k, "grp", "0")
    r.xreadgroup("grp", "alice", {k: ">"}, count=4)
    r.xreadgroup("grp", "bob", {k: ">"}, count=3)
    r.xack(k, "grp", "2-0")
    r.xclaim(k, "grp", "bob", 0, ["1-0"])
    r.xreadgroup("grp", "alice", {k: "0"})
    k = key()  # several groups: at $, in the middle, empty consumer, deleted pending entry
    for i in range(8):
        r.xadd(k, {"f": i}, id="%d-0" % (i + 1))
    r.xgroup_create(k, "g1", "$")
    r.xgroup_create(k, "g2", "3-0")
    r.xgroup_createconsumer(k, "g1", "idle")
    r.xreadgroup("g2", "c", {k: ">"}, count=2)
    r.xdel(k, "4-0")
    r.xgroup_create(k, "g3", "0", entries_read=2)
    r.xreadgroup("g3", "c1", {k: ">"}, count=1)
    r.xreadgroup("g3", "c2", {k: ">"}, count=1, noack=True)
    k = key()  # XSETID with entries added and max deleted ID
    r.xadd(k, {"a": "b"}, id="10-0")
    r.execute_command("XSETID", k, "100-5", "ENTRIESADDED", 50, "MAXDELETEDID", "90-0")
    r.xgroup_create(k, "g", "0")
    k = key()  # a stream of many small entries with group lag
    for i in range(120):
        r.xadd(k, {"t": "%d" % (i * 7)}, id="%d-%d" % (50000 + i // 3, i % 3))
    r.xgroup_create(k, "lag", "0")
    r.xreadgroup("lag", "w", {k: ">"}, count=50)
    r.xack(k, "lag", *["%d-%d" % (50000 + i // 3, i % 3) for i in range(0, 50, 2)])
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--out", default="tests/fuzz/corpus/stream")
    a = ap.parse_args()
    r = redis.Redis(port=a.port)
    r.flushall()
    os.makedirs(a.out, exist_ok=True)
    bodies = []
    for compress in ("yes", "no"):
        r.config_set("rdbcompression", compress)
        r.config_set("stream-node-max-entries", 100)
        r.flushall()
        for k in streams(r):
            bodies.append(r.dump(k)[:-10])
        r.config_set("stream-node-max-entries", 10)
        r.flushall()
        for k in streams(r):
            bodies.append(r.dump(k)[:-10])
    r.config_set("rdbcompression", "yes")
    r.config_set("stream-node-max-entries", 100)
    out = set(bodies)
    for b in bodies:
        s = rdbgen.stream_parse19(b)
        out.add(rdbgen.stream_payload(s, 15))
        out.add(rdbgen.stream_payload(s, 21))
    for b in sorted(out):
        with open(os.path.join(a.out, hashlib.sha1(b).hexdigest()), "wb") as f:
            f.write(b)
    print("%d seeds in %s" % (len(out), a.out), file=sys.stderr)


if __name__ == "__main__":
    main()
