"""Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT LOAD / EXISTS,
redis.call / redis.pcall over strings, lists and hashes, the conversions of
every Lua and Redis type, the error texts (runtime errors, unknown
commands, wrong arity, noscript and write commands in read-only scripts,
numkeys), redis.sha1hex, redis.error_reply / status_reply, setresp.

Keys: lk0..lk3 (strings), ll0, ll1 (lists), lh0 (hash), only written here.
SCRIPT FLUSH is not generated: streams run side by side and a flush would
make another stream's EVALSHA depend on timing. EVALSHA follows its SCRIPT
LOAD in the same command group.
"""

from gencore import Cmd

NAME = "scripting"

SKEYS = [b"lk0", b"lk1", b"lk2", b"lk3"]
LKEYS = [b"ll0", b"ll1"]
HKEY = b"lh0"

# Scripts with a fixed result shape, run with random keys and arguments.
SCRIPTS = [
    b"return redis.call('get', KEYS[1])",
    b"return redis.call('set', KEYS[1], ARGV[1])",
    b"redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])",
    b"return redis.call('incrby', KEYS[1], ARGV[1])",
    b"return redis.pcall('incrby', KEYS[1], ARGV[1])",
    b"return redis.call('append', KEYS[1], ARGV[1])",
    b"return {KEYS[1], ARGV[1]}",
    b"return #ARGV + 100 * #KEYS",
    b"return tonumber(ARGV[1])",
    b"return type(redis.call('get', KEYS[1]))",
    b"return redis.call('exists', KEYS[1]) == 1",
    b"return redis.call('del', KEYS[1])",
    b"return redis.call('rpush', 'll0', ARGV[1])",
    b"return redis.call('lrange', 'll0', 0, -1)",
    b"return redis.call('lpop', 'll0')",
    b"return redis.call('blmpop', 0, 1, 'll1', 'left')",
    b"return redis.call('hset', 'lh0', KEYS[1], ARGV[1])",
    b"local t = redis.call('hgetall', 'lh0') table.sort(t) return t",
    b"redis.setresp(3) local m = redis.call('hgetall', 'lh0')['map'] "
    b"local out = {} for k, v in pairs(m) do out[#out+1] = k .. '=' .. v end "
    b"table.sort(out) return out",
    b"redis.setresp(3) return redis.call('get', KEYS[1]) == nil",
    b"return redis.call('get', KEYS[1]) == false",
    b"return redis.sha1hex(ARGV[1])",
    b"return redis.status_reply(ARGV[1])",
    b"return redis.error_reply(ARGV[1])",
    b"return {ok = 'fine'}",
    b"return {err = 'MYERR custom'}",
    b"return {1, 2, nil, 4}",
    b"return {1, 'two', {3, {ok = 'x'}}, {err = 'E nested'}, true, false}",
    b"return 3.99",
    b"return -2.5",
    b"return true",
    b"return false",
    b"return nil",
    b"return {double = 2.5}",
    b"return 1 + nil",
    b"error('boom')",
    b"error({err = 'CODE from table'})",
    b"return redis.call('nosuchcommand')",
    b"return redis.pcall('nosuchcommand')",
    b"return redis.call('get')",
    b"return redis.call()",
    b"return redis.call('multi')",
    b"return redis.call('blpop', 'll1', 0)",
    b"return redis.call('get', {})",
    b"return redis.pcall('incr', 'lh0')",
    b"return redis.call('incr', 'lh0')",
    b"return redis.pcall('incr', 'lh0')['err']",
    b"return redis.call('set', KEYS[1], ARGV[1])['ok']",
    b"return undefined_global",
    b"x = 1",
    b"return redis.setresp(5)",
    b"return redis.sha1hex()",
    b"return redis.log(redis.LOG_DEBUG, 'diff')",
    b"this is not lua",
]


def _args(ctx):
    r = ctx.rng.random()
    if r < 0.5:
        return b"%d" % ctx.randint(-50, 50)
    if r < 0.6:
        return ctx.choice([b"abc", b"", b"1.5", b"9223372036854775807", b"x y"])
    return ctx.small_val()


def _eval_args(ctx, script):
    nk = ctx.randint(0, 1) if ctx.chance(0.2) else 1
    keys = [ctx.choice(SKEYS) for _ in range(nk)]
    argv = [_args(ctx) for _ in range(ctx.randint(1, 2))]
    return [script, b"%d" % nk] + keys + argv


def g_eval(ctx):
    script = ctx.choice(SCRIPTS)
    return Cmd(ctx.choice([b"EVAL", b"eval"]), *_eval_args(ctx, script))


def g_eval_ro(ctx):
    script = ctx.choice(SCRIPTS)
    return Cmd(b"EVAL_RO", *_eval_args(ctx, script))


def g_evalsha(ctx):
    import hashlib
    script = ctx.choice(SCRIPTS)
    sha = hashlib.sha1(script).hexdigest().encode()
    if ctx.chance(0.3):
        sha = sha.upper()
    cmds = [Cmd(b"SCRIPT", ctx.opt(b"LOAD"), script),
            Cmd(ctx.choice([b"EVALSHA", b"EVALSHA_RO"]), sha, *_eval_args(ctx, script)[1:])]
    if ctx.chance(0.3):
        cmds.append(Cmd(b"SCRIPT", b"EXISTS", sha, b"0" * 40, b"abc"))
    return cmds


def g_errors(ctx):
    bad = ctx.choice([
        [b"EVAL", b"return 1", b"2", b"a"],
        [b"EVAL", b"return 1", b"-1"],
        [b"EVAL", b"return 1", b"x"],
        [b"EVAL", b"return 1"],
        [b"EVALSHA", b"f" * 40, b"0"],
        [b"EVALSHA", b"short", b"0"],
        [b"SCRIPT", b"LOAD", b"x x"],
        [b"SCRIPT", b"KILL"],
        [b"SCRIPT", b"FLUSH", b"bogus"],
        [b"SCRIPT", b"NOSUCH"],
        [b"SCRIPT", b"HELP"],
    ])
    return Cmd(*bad)


def g_fill(ctx):
    return [Cmd(b"SET", ctx.choice(SKEYS), ctx.small_val()),
            Cmd(b"RPUSH", ctx.choice(LKEYS), ctx.small_val())]


GENERATORS = [
    (20, g_eval),
    (4, g_eval_ro),
    (5, g_evalsha),
    (2, g_errors),
    (2, g_fill),
]
