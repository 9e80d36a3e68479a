#!/usr/bin/env python3
"""Self-test of the differential tester's own parts (no server needed):
the RESP reader, the comparators and generator determinism.

    python3 tests/diff/selftest.py      -> last line `N passed, M failed`
"""

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "helpers"))

import families  # noqa: E402
import gencore  # noqa: E402
import normalize  # noqa: E402
import resp  # noqa: E402

passed = failed = 0


def check(name, cond):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + name)


def one(data):
    node, pos = resp.parse(bytearray(data), 0)
    assert pos == len(data), (pos, len(data))
    return node


def test_parser():
    samples = [
        b"+OK\r\n", b"-ERR x\r\n", b":-12\r\n", b"$3\r\na\r\n\r\n", b"$0\r\n\r\n",
        b"$-1\r\n", b"*-1\r\n", b"*0\r\n", b"_\r\n", b",1.5\r\n", b",inf\r\n",
        b"#t\r\n", b"(123456789012345678901234567890\r\n",
        b"=15\r\ntxt:Some string\r\n", b"!5\r\nERR x\r\n",
        b"*3\r\n:1\r\n$1\r\nx\r\n*1\r\n_\r\n",
        b"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*0\r\n",
        b"~2\r\n$1\r\na\r\n$1\r\nb\r\n", b">2\r\n$7\r\nmessage\r\n$1\r\nx\r\n",
        b"|1\r\n+key\r\n+val\r\n*1\r\n:1\r\n",
    ]
    for s in samples:
        n = one(s)
        check("raw round trip %r" % s, n.raw == s)
        # every strict prefix is incomplete
        for i in range(len(s)):
            try:
                resp.parse(bytearray(s[:i]), 0)
                check("prefix %d of %r incomplete" % (i, s), False)
            except resp.Incomplete:
                pass
    n = one(b"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*0\r\n")
    check("map flattened", n.t == "%" and len(n.v) == 4 and n.v[1].v == 1)
    n = one(b"|1\r\n+key\r\n+val\r\n*1\r\n:1\r\n")
    check("attribute skipped", n.t == "*" and n.v[0].v == 1)
    for bad in (b"?x\r\n", b"$3\r\nabcde\r\n", b":x\r\n", b"$-2\r\n"):
        try:
            resp.parse(bytearray(bad), 0)
            check("protocol error for %r" % bad, False)
        except resp.ProtocolError:
            check("protocol error for %r" % bad, True)
        except resp.Incomplete:
            check("protocol error for %r" % bad, False)
    # consecutive replies
    buf = bytearray(b"+OK\r\n:1\r\n$-1\r\n")
    pos = 0
    out = []
    while pos < len(buf):
        n, pos = resp.parse(buf, pos)
        out.append(n.raw)
    check("consecutive", out == [b"+OK\r\n", b":1\r\n", b"$-1\r\n"])
    check("encode", resp.encode([b"SET", "k", 12]) ==
          b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n12\r\n")


def test_comparators():
    a = one(b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n")
    b = one(b"*3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n")
    c = one(b"*3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nd\r\n")
    check("sorted equal", normalize.sorted_elements(a, b))
    check("sorted differ", not normalize.sorted_elements(a, c))
    check("exact differ", not normalize.exact(a, b))
    s3 = one(b"~3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n")
    check("set vs array differ", not normalize.sorted_elements(a, s3))
    m1 = one(b"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n")
    m2 = one(b"%2\r\n$1\r\nb\r\n:2\r\n$1\r\na\r\n:1\r\n")
    m3 = one(b"%2\r\n$1\r\nb\r\n:1\r\n$1\r\na\r\n:2\r\n")
    check("pairs equal", normalize.sorted_pairs(m1, m2))
    check("pairs differ", not normalize.sorted_pairs(m1, m3))
    t = normalize.tolerance(1)
    check("ttl close", t(one(b":100\r\n"), one(b":101\r\n")))
    check("ttl far", not t(one(b":100\r\n"), one(b":102\r\n")))
    check("ttl negative exact", not t(one(b":-1\r\n"), one(b":0\r\n")))
    check("ttl error", not t(one(b"-ERR x\r\n"), one(b":1\r\n")))
    check("shape bulk", normalize.shape(one(b"$1\r\na\r\n"), one(b"$2\r\nbb\r\n")))
    check("shape null", not normalize.shape(one(b"$1\r\na\r\n"), one(b"$-1\r\n")))
    h1 = one(b"%2\r\n$6\r\nserver\r\n$5\r\nredis\r\n$2\r\nid\r\n:5\r\n")
    h2 = one(b"%2\r\n$6\r\nserver\r\n$5\r\nredis\r\n$2\r\nid\r\n:9\r\n")
    h3 = one(b"%2\r\n$6\r\nserver\r\n$6\r\ngoblin\r\n$2\r\nid\r\n:9\r\n")
    check("hello ignores id", normalize.hello(h1, h2))
    check("hello compares server", not normalize.hello(h1, h3))


def test_generators():
    fams = families.load_all()
    for name, mod in fams.items():
        check("%s has generators" % name, bool(mod.GENERATORS))

        def stream(seed):
            rng = random.Random("%d/%s" % (seed, name))
            ctx = gencore.Ctx(rng, 1700000000)
            out = []
            ok = True
            for _ in range(500):
                w = gencore.Picker(mod.GENERATORS).pick(rng)(ctx)
                for c in (w if isinstance(w, list) else [w]):
                    ok = ok and isinstance(c, gencore.Cmd) and bool(c.args)
                    out.append(resp.encode(c.args) if c.raw is None else c.raw)
            check("%s yields commands" % name, ok)
            return out
        check("%s deterministic" % name, stream(1) == stream(1))
        check("%s seed matters" % name, stream(1) != stream(2))


if __name__ == "__main__":
    test_parser()
    test_comparators()
    test_generators()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
