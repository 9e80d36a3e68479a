"""Transactions: MULTI ... EXEC / DISCARD blocks of string, hash and list
commands (with queue-time errors that abort EXEC and runtime errors that do
not), WATCH / UNWATCH with modifications made on the same connection, and
the MULTI/EXEC/DISCARD/WATCH errors.

Every block is a list of commands, so the stream driver never splits or
mutates it and the connection is never left inside MULTI at the end of a
batch; the commands queued inside are drawn from the strings, hashes and
lists families (those whose reply is compared otherwise than byte for byte
-- KEYS, TTL, HGETALL ... -- or that are iterated like SCAN are left out,
because inside EXEC their replies are compared exactly)."""

from gencore import Cmd
from families import strings, hashes, lists

NAME = "multi"

_INNER_GENS = [(w, g) for w, g in strings.GENERATORS] + \
              [(w, g) for w, g in hashes.GENERATORS] + \
              [(w, g) for w, g in lists.GENERATORS]
_INNER_TOTAL = float(sum(w for w, _ in _INNER_GENS))

# Commands never queued inside a generated transaction.
_TX = {b"MULTI", b"EXEC", b"DISCARD", b"WATCH", b"UNWATCH"}
_NOT_EXACT = {b"KEYS", b"RANDOMKEY", b"TTL", b"PTTL", b"EXPIRETIME",
              b"PEXPIRETIME", b"HELLO", b"SMEMBERS", b"SINTER", b"SUNION",
              b"SDIFF", b"HKEYS", b"HVALS", b"HGETALL", b"HRANDFIELD",
              b"SRANDMEMBER", b"SPOP", b"OBJECT", b"DEBUG", b"SELECT",
              b"SWAPDB", b"FLUSHALL", b"FLUSHDB", b"MOVE"}


def _pick_inner(ctx):
    x = ctx.rng.random() * _INNER_TOTAL
    for w, g in _INNER_GENS:
        x -= w
        if x < 0:
            return g
    return _INNER_GENS[-1][1]


def _ok(c):
    if c.raw is not None or c.scan is not None or c.compare is not None:
        return False
    if not c.args:
        return False
    n = c.args[0].upper()
    return n not in _TX and n not in _NOT_EXACT


def _inner_cmds(ctx, lo, hi):
    """lo..hi commands (roughly) fit for queueing; whole generator outputs
    are kept together (a SET with a past EXAT keeps its lookup)."""
    want = ctx.randint(lo, hi)
    out = []
    tries = 0
    while len(out) < want and tries < 4 * (want + 1):
        tries += 1
        item = _pick_inner(ctx)(ctx)
        cmds = [item] if isinstance(item, Cmd) else list(item)
        if not all(_ok(c) for c in cmds):
            continue
        if isinstance(item, Cmd) and ctx.chance(0.03):
            # arity / syntax errors: some are queue-time errors (arity),
            # most are runtime errors inside EXEC
            cmds = [ctx.mutate(item)]
        out.extend(cmds)
    return out


_UNKNOWN = [b"FOO", b"NOSUCHCMD", b"GETT", b"sett", b"x"]


def _queue_error(ctx):
    """A command refused while queueing: EXEC then answers EXECABORT."""
    r = ctx.rng.random()
    if r < 0.35:
        return Cmd(ctx.choice(_UNKNOWN), *ctx.keys(0, 2))
    if r < 0.55:
        return Cmd(b"GET")
    if r < 0.7:
        return Cmd(b"SET", ctx.key())
    if r < 0.8:
        return Cmd(b"HSET", ctx.key())
    if r < 0.9:
        return Cmd(b"LPUSH")
    return Cmd(b"INCR", ctx.key(), ctx.key())


def _end(ctx):
    return Cmd(b"DISCARD") if ctx.chance(0.1) else Cmd(b"EXEC")


def g_multi_exec(ctx):
    cmds = [Cmd(ctx.opt(b"MULTI"))] + _inner_cmds(ctx, 0, 6)
    if ctx.chance(0.12):
        cmds.insert(ctx.randint(1, len(cmds)), _queue_error(ctx))
    if ctx.chance(0.04):
        # nested MULTI / WATCH inside MULTI: errors that do not abort
        cmds.insert(ctx.randint(1, len(cmds)),
                    ctx.choice((Cmd(b"MULTI"), Cmd(b"WATCH", ctx.key()))))
    cmds.append(_end(ctx))
    return cmds


def _modify(ctx, k):
    """A same-connection command on key k made between WATCH and MULTI:
    writes (dirty the key when they change it), reads, no-op deletes."""
    r = ctx.rng.random()
    if r < 0.2:
        return Cmd(b"SET", k, ctx.small_val())
    if r < 0.3:
        return Cmd(b"DEL", k)
    if r < 0.4:
        return Cmd(b"EXPIRE", k, ctx.rel_s())
    if r < 0.45:
        return Cmd(b"PERSIST", k)
    if r < 0.55:
        return Cmd(b"HSET", k, ctx.word(1, 3), ctx.small_val())
    if r < 0.65:
        return Cmd(b"RPUSH", k, ctx.small_val())
    if r < 0.72:
        return Cmd(b"INCR", k)
    if r < 0.8:
        return Cmd(b"GET", k)
    if r < 0.85:
        return Cmd(b"EXISTS", k)
    if r < 0.9:
        return Cmd(b"TYPE", k)
    if r < 0.95:
        return Cmd(b"APPEND", k, b"")
    return Cmd(b"RENAME", k, ctx.key())


def g_watch_exec(ctx):
    watched = ctx.keys(1, 3)
    cmds = [Cmd(ctx.opt(b"WATCH"), *watched)]
    if ctx.chance(0.2):
        cmds.append(Cmd(b"WATCH", *ctx.keys(1, 2)))
    r = ctx.rng.random()
    if r < 0.45:
        cmds.append(_modify(ctx, ctx.choice(watched)))
    elif r < 0.65:
        cmds.append(_modify(ctx, ctx.key()))
    if ctx.chance(0.15):
        cmds.append(Cmd(ctx.opt(b"UNWATCH")))
    if ctx.chance(0.15):
        cmds.extend(_inner_cmds(ctx, 1, 2))
    cmds.append(Cmd(b"MULTI"))
    cmds.extend(_inner_cmds(ctx, 0, 5))
    if ctx.chance(0.06):
        cmds.insert(ctx.randint(len(cmds) - 1, len(cmds)), _queue_error(ctx))
    cmds.append(_end(ctx))
    if ctx.chance(0.3):
        # the transaction's own writes must not leave the next EXEC dirty
        cmds.extend([Cmd(b"MULTI"), Cmd(b"GET", ctx.choice(watched)),
                     Cmd(b"EXEC")])
    return cmds


def g_watch_unwatch(ctx):
    """WATCH / UNWATCH outside a transaction, alone or before an EXEC."""
    r = ctx.rng.random()
    if r < 0.4:
        return Cmd(b"WATCH", *ctx.keys(1, 4))
    if r < 0.7:
        return Cmd(b"UNWATCH")
    if r < 0.8:
        return Cmd(b"WATCH")
    return Cmd(b"UNWATCH", *ctx.keys(1, 2))


def g_tx_errors(ctx):
    return ctx.choice((
        [Cmd(b"EXEC")],
        [Cmd(b"DISCARD")],
        [Cmd(b"EXEC", b"extra")],
        [Cmd(b"MULTI", b"extra")],
        [Cmd(b"MULTI"), Cmd(b"MULTI"), Cmd(b"EXEC")],
        [Cmd(b"MULTI"), Cmd(b"EXEC", b"x"), Cmd(b"EXEC")],
        [Cmd(b"MULTI"), Cmd(b"DISCARD", b"x"), Cmd(b"DISCARD")],
        [Cmd(b"MULTI"), Cmd(b"EXEC")],
        [Cmd(b"MULTI"), Cmd(b"DISCARD"), Cmd(b"EXEC")],
        [Cmd(b"MULTI"), Cmd(b"WATCH", ctx.key()), Cmd(b"EXEC")],
        [Cmd(b"MULTI"), Cmd(b"UNWATCH"), Cmd(b"EXEC")],
        [Cmd(b"MULTI"), Cmd(b"PING"), Cmd(b"ECHO", b"x"), Cmd(b"EXEC")],
    ))


GENERATORS = [
    (10, g_multi_exec),
    (6, g_watch_exec),
    (2, g_watch_unwatch),
    (2, g_tx_errors),
]

# Keys of every type exist before the transactions touch them.
MIX = {"strings": 0.08, "hashes": 0.08, "lists": 0.08}
