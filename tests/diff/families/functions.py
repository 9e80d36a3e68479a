"""Functions: FUNCTION LOAD [REPLACE] / DELETE / LIST [LIBRARYNAME]
[WITHCODE] / STATS / RESTORE errors / HELP, FCALL and FCALL_RO over
strings and lists, the function flags (no-writes, FCALL_RO of a writer,
a no-writes function that writes), redis.register_function's errors, the
load-time environment, runtime error texts; the EVAL shebang.

Keys: fk0..fk2 (strings), fl0 (list), only written here. Libraries each
register one function (FUNCTION LIST orders libraries and a library's
functions by hash in Redis): lists go through LIBRARYNAME of one name.
FUNCTION DUMP is not generated (LZF may pick other matches than Redis's).
"""

from gencore import Cmd

NAME = "functions"

SKEYS = [b"fk0", b"fk1", b"fk2"]
LKEY = b"fl0"

# name -> (flags, body); each its own library "l_<name>".
FUNCS = {
    b"fget": (b"'no-writes'", b"return redis.call('get', keys[1])"),
    b"fset": (b"", b"return redis.call('set', keys[1], args[1])"),
    b"fincr": (b"'allow-oom'", b"return redis.call('incrby', keys[1], args[1])"),
    b"fpush": (b"", b"return redis.call('rpush', 'fl0', args[1])"),
    b"frange": (b"'no-writes', 'allow-stale'", b"return redis.call('lrange', 'fl0', 0, -1)"),
    b"fbadw": (b"'no-writes'", b"return redis.call('set', keys[1], 'x')"),
    b"fargs": (b"'no-writes'", b"return {keys, args, #keys, #args}"),
    b"ferr": (b"'no-writes'", b"return 1 + nil"),
    b"fpcall": (b"'no-writes'", b"return redis.pcall('incr', 'fl0')"),
    b"ftypes": (b"'no-writes'", b"return {1, 'two', {ok='fine'}, 3.7, true, false, {double=2.5}}"),
    b"fnokeys": (b"'no-writes'", b"return KEYS"),
    b"fstatus": (b"'no-writes'", b"return redis.error_reply('MY custom')"),
}


def lib_code(name, desc=None):
    flags, body = FUNCS[name]
    d = b", description='%s'" % desc if desc else b""
    return (b"#!lua name=l_" + name + b"\nredis.register_function{function_name='" + name +
            b"', callback=function(keys, args)\n" + body + b"\nend, flags={" + flags + b"}" + d + b"}")


def _args(ctx):
    return ctx.choice([b"%d" % ctx.randint(-20, 20), b"abc", b"", b"1.5", ctx.small_val()])


def g_load_call(ctx):
    name = ctx.choice(sorted(FUNCS))
    cmds = [Cmd(b"FUNCTION", ctx.opt(b"LOAD"), ctx.opt(b"REPLACE"), lib_code(name, ctx.choice([None, b"d"])))]
    nk = ctx.randint(0, 2)
    keys = [ctx.choice(SKEYS) for _ in range(nk)]
    cmd = ctx.choice([b"FCALL", b"FCALL_RO", b"fcall"])
    fname = name.upper() if ctx.chance(0.2) else name
    cmds.append(Cmd(cmd, fname, b"%d" % nk, *keys, *[_args(ctx) for _ in range(ctx.randint(1, 2))]))
    return cmds


def g_list(ctx):
    name = ctx.choice(sorted(FUNCS))
    lib = b"l_" + name
    args = [b"FUNCTION", b"LIST", ctx.opt(b"LIBRARYNAME"), lib]
    if ctx.chance(0.5):
        args.append(ctx.opt(b"WITHCODE"))
    return [Cmd(b"FUNCTION", b"LOAD", b"REPLACE", lib_code(name)), Cmd(*args)]


def g_delete(ctx):
    name = ctx.choice(sorted(FUNCS))
    return [Cmd(b"FUNCTION", b"DELETE", b"l_" + name), Cmd(b"FCALL", name, b"0"),
            Cmd(b"FUNCTION", b"DELETE", b"l_" + name), Cmd(b"FUNCTION", b"LIST", b"LIBRARYNAME", b"l_" + name)]


def g_load_errors(ctx):
    body = ctx.choice([
        b"#!lua name=bad\nreturn math.random()",
        b"#!lua name=bad\nreturn redis.call('ping')",
        b"#!lua name=bad\na = 1",
        b"#!lua name=bad\nreturn 1",
        b"#!lua name=bad\nredis.register_function()",
        b"#!lua name=bad\nredis.register_function('f')",
        b"#!lua name=bad\nredis.register_function('b-d', function() end)",
        b"#!lua name=bad\nredis.register_function{function_name='x', callback=1}",
        b"#!lua name=bad\nredis.register_function{function_name='x', callback=function() end, flags={'nope'}}",
        b"#!lua name=bad\nredis.register_function{function_name='x', callback=function() end, bogus=1}",
        b"#!lua name=bad\nredis.register_function('fget', function() end)",
        b"#!lua name=bad\nthis is not lua",
        b"#!lua name=b-d\nreturn 1",
        b"#!lua\nreturn 1",
        b"#!lua name=a name=b\nreturn 1",
        b"#!lua name=a x=y\nreturn 1",
        b"#!js name=a\nreturn 1",
        b"#!lua name=a",
        b"return 1",
    ])
    return Cmd(b"FUNCTION", b"LOAD", b"REPLACE", body)


def g_errors(ctx):
    bad = ctx.choice([
        [b"FCALL", b"nosuchfunction", b"0"],
        [b"FCALL", b"fget", b"x"],
        [b"FCALL", b"fget", b"3", b"a"],
        [b"FCALL", b"fget", b"-1"],
        [b"FCALL", b"fget"],
        [b"FUNCTION", b"DELETE", b"nosuchlib"],
        [b"FUNCTION", b"LOAD"],
        [b"FUNCTION", b"LOAD", b"BOGUS", b"x"],
        [b"FUNCTION", b"FLUSH", b"bogus"],
        [b"FUNCTION", b"FLUSH", b"sync", b"more"],
        [b"FUNCTION", b"LIST", b"bogus"],
        [b"FUNCTION", b"LIST", b"LIBRARYNAME"],
        [b"FUNCTION", b"LIST", b"WITHCODE", b"WITHCODE"],
        [b"FUNCTION", b"RESTORE", b"garbage"],
        [b"FUNCTION", b"RESTORE", b"garbage", b"bogus"],
        [b"FUNCTION", b"RESTORE", b"a", b"b", b"c"],
        [b"FUNCTION", b"KILL"],
        [b"FUNCTION", b"NOSUCH"],
        [b"FUNCTION", b"HELP"],
        [b"FUNCTION", b"STATS"],
    ])
    return Cmd(*bad)


def g_shebang(ctx):
    script = ctx.choice([
        b"#!lua\nreturn redis.call('get', KEYS[1])",
        b"#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
        b"#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')",
        b"#!lua flags=allow-oom,no-writes\nreturn 1",
        b"#!lua flags=no-writes,bogus\nreturn 1",
        b"#!lua name=x\nreturn 1",
        b"#!perl\nreturn 1",
        b"#!lua flags=no-writes\nreturn 1 + nil",
        b"#!lua",
    ])
    return Cmd(ctx.choice([b"EVAL", b"EVAL_RO"]), script, b"1", ctx.choice(SKEYS))


def g_fill(ctx):
    return [Cmd(b"SET", ctx.choice(SKEYS), b"%d" % ctx.randint(0, 99)), Cmd(b"RPUSH", LKEY, ctx.small_val())]


GENERATORS = [
    (20, g_load_call),
    (4, g_list),
    (3, g_delete),
    (4, g_load_errors),
    (3, g_errors),
    (4, g_shebang),
    (2, g_fill),
]
