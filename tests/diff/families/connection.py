"""Connection: PING, ECHO, HELLO, unknown commands, inline commands, and the
HELP texts of the commands with subcommands."""

from gencore import Cmd

NAME = "connection"


def g_ping(ctx):
    r = ctx.rng.random()
    if r < 0.5:
        return Cmd(b"PING")
    if r < 0.9:
        return Cmd(b"PING", ctx.val())
    return Cmd(b"PING", ctx.val(), ctx.val())


def g_echo(ctx):
    if ctx.chance(0.9):
        return Cmd(b"ECHO", ctx.val())
    return Cmd(b"ECHO", *([ctx.val()] * ctx.choice((0, 2, 3))))


_UNKNOWN = [b"FOO", b"foo", b"", b"GETT", b"SET2", b"\x00", b"hello world",
            b"x" * 200, b"get\r\n", b"CLUSTERX", b"'", b"%s%n"]


def g_unknown(ctx):
    args = [ctx.choice(_UNKNOWN)]
    for _ in range(ctx.randint(0, 5)):
        r = ctx.rng.random()
        if r < 0.6:
            args.append(ctx.small_val())
        elif r < 0.8:
            args.append(ctx.binary())
        else:
            args.append(b"y" * ctx.randint(50, 300))
    return Cmd(*args)


def g_hello(ctx):
    r = ctx.rng.random()
    if r < 0.35:
        return Cmd(b"HELLO", ctx.choice((b"2", b"3")))
    if r < 0.45:
        return Cmd(b"HELLO")
    if r < 0.6:
        return Cmd(b"HELLO", ctx.choice((b"2", b"3")), ctx.opt(b"SETNAME"),
                   ctx.choice((b"conn-a", b"b", b"with space", b"")))
    if r < 0.7:
        return Cmd(b"HELLO", ctx.choice((b"2", b"3")), ctx.opt(b"AUTH"),
                   ctx.choice((b"default", b"nobody")),
                   ctx.choice((b"", b"secret")))
    return Cmd(b"HELLO", *ctx.choice((
        [b"4"], [b"1"], [b"0"], [b"-1"], [b"abc"], [b""], [b"3", b"FOO"],
        [b"3", b"AUTH"], [b"3", b"AUTH", b"default"], [b"2", b"SETNAME"],
        [b"3", b"SETNAME", b"a", b"b"], [b"9223372036854775808"])))


_INLINE_TOKENS = [b"a", b"b1", b"hello", b"123", b"-5", b"x:y", b"k0", b"k1",
                  b'"quoted word"', b'"esc\\x41\\n"', b"'single q'",
                  b'""', b"''"]


def g_inline(ctx):
    """Inline (telnet-style) commands on safe, balanced tokens."""
    r = ctx.rng.random()
    if r < 0.3:
        words = [ctx.choice((b"PING", b"ping"))]
        if ctx.chance(0.5):
            words.append(ctx.choice(_INLINE_TOKENS))
    elif r < 0.55:
        words = [b"ECHO", ctx.choice(_INLINE_TOKENS)]
    elif r < 0.75:
        words = [b"SET", ctx.choice((b"k0", b"k1", b"ik")),
                 ctx.choice(_INLINE_TOKENS)]
    elif r < 0.9:
        words = [ctx.choice((b"GET", b"STRLEN", b"EXISTS", b"TYPE")),
                 ctx.choice((b"k0", b"k1", b"ik"))]
    else:
        words = [ctx.choice((b"NOPE", b"GET", b"ECHO"))] + \
            [ctx.choice(_INLINE_TOKENS) for _ in range(ctx.randint(0, 3))]
    sep = ctx.choice((b" ", b"  ", b"\t", b" \t "))
    line = sep.join(words)
    if ctx.chance(0.2):
        line = b" " + line + b" "
    eol = b"\r\n" if ctx.chance(0.8) else b"\n"
    return Cmd(*[w for w in words], raw=line + eol)


def g_get_set(ctx):
    """A few plain commands on the keys that the inline commands use."""
    if ctx.chance(0.5):
        return Cmd(b"GET", ctx.choice((b"k0", b"k1", b"ik")))
    return Cmd(b"SET", ctx.choice((b"k0", b"k1", b"ik")), ctx.small_val())


_HELPFUL = [b"CLIENT", b"CONFIG", b"OBJECT", b"MEMORY", b"LATENCY", b"SLOWLOG",
            b"ACL", b"COMMAND", b"XINFO", b"XGROUP", b"SCRIPT", b"FUNCTION",
            b"PUBSUB", b"CLUSTER", b"MODULE", b"DEBUG"]


def g_help(ctx):
    cmd = ctx.choice(_HELPFUL)
    if ctx.chance(0.5):
        cmd = cmd.lower()
    sub = ctx.choice((b"HELP", b"help", b"Help"))
    if ctx.chance(0.15):
        return Cmd(cmd, sub, ctx.small_val())
    if cmd.upper() == b"COMMAND":
        # Not mutated: COMMAND alone lists the commands in the order of
        # the server's own table (Redis's is a hash's, seeded per process).
        return [Cmd(cmd, sub)]
    return Cmd(cmd, sub)


GENERATORS = [
    (10, g_ping),
    (8, g_echo),
    (6, g_unknown),
    (3, g_hello),
    (6, g_inline),
    (3, g_get_set),
    (3, g_help),
]
