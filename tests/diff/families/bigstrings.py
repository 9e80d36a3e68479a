"""Strings around the object store's boundaries: the strings family's
commands over values of 0, 1, 15/16/17 bytes, head-1, head, head+1 and
3*head+7 bytes for a 16 KiB --ram-head (small records, compressed small
records, one head slot, head + tail). Meant to run against a goblin-core
started with --ram-head 16K and an --ssd-dir (tests/run_all.sh does, with
--server-arg), so APPEND and SETRANGE cross the head/tail boundary, GETRANGE
spans it, and tails come back from the SSD extent, streamed by GET.
LCS and BITOP stay in the strings family (quadratic on these sizes)."""

from gencore import Cmd
import families.strings as S

NAME = "bigstrings"
HEAD = 16384
SIZES = (0, 1, 15, 16, 17, 33, 100, HEAD - 1, HEAD, HEAD + 1, 3 * HEAD + 7)
WORDS = (b"head", b"tail", b"goblin", b"\x00\xff", b"0123456789abcdef")


def big_val(ctx):
    n = ctx.choice(SIZES)
    if ctx.chance(0.5):
        # Compressible: a short word repeated.
        w = ctx.choice(WORDS)
        return (w * (n // len(w) + 1))[:n]
    return bytes(ctx.rng.randrange(256) for _ in range(n))


def _big(gen):
    def g(ctx):
        saved = ctx.__dict__.get("val")
        ctx.val = lambda: big_val(ctx)
        try:
            return gen(ctx)
        finally:
            if saved is None:
                del ctx.val
            else:
                ctx.val = saved
    g.__name__ = gen.__name__
    return g


def g_setrange_far(ctx):
    """SETRANGE at offsets around the head boundary."""
    off = ctx.choice((0, HEAD - 3, HEAD - 1, HEAD, HEAD + 5, 2 * HEAD, 3 * HEAD + 1))
    return Cmd(b"SETRANGE", ctx.key(), b"%d" % off, ctx.choice(WORDS))


def g_getrange_span(ctx):
    lo = ctx.choice((0, HEAD - 10, HEAD - 1, HEAD, HEAD + 1, -HEAD - 5, -10))
    hi = ctx.choice((HEAD + 10, HEAD, HEAD - 1, -1, 3 * HEAD + 100, -HEAD + 3))
    return Cmd(b"GETRANGE", ctx.key(), b"%d" % lo, b"%d" % hi)


GENERATORS = [
    (10, S.g_get),
    (12, _big(S.g_set)),
    (2, _big(S.g_getset)),
    (2, S.g_getdel),
    (3, S.g_getex),
    (3, S.g_mget),
    (3, _big(S.g_mset)),
    (4, _big(S.g_append)),
    (3, S.g_strlen),
    (4, S.g_getrange),
    (4, g_getrange_span),
    (3, S.g_setrange),
    (4, g_setrange_far),
    (2, S.g_incr),
    (3, S.g_setbit),
    (3, S.g_getbit),
    (3, S.g_bitcount),
    (2, S.g_bitpos),
    (2, S.g_bitfield_ro),
]

CREATORS = []
MIX = {"keyspace": 0.08}
