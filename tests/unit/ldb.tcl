# The Lua debugger (SCRIPT DEBUG YES|SYNC|NO, what redis-cli --ldb drives):
# a debugging session's answers line by line (step, print, eval, redis,
# list, break, maxlen, trace, help, abort), redis.debug and
# redis.breakpoint, the protocol errors, a client that leaves, a loop
# stopped by the busy threshold; SYNC keeps the script's changes, YES (a
# forked session) loses them while the server goes on serving.

# A client in debug mode (SYNC or YES) whose EVAL of body was sent; returns
# it, deferred: every answer is read with `$c read`. It is closed after the
# test whatever happens (ldb_test): a SYNC session left waiting would hold
# the server.
set ::ldb_clients {}
proc ldb_session {mode body args} {
    set c [redis_client]
    lappend ::ldb_clients $c
    assert_equal OK [$c script debug $mode]
    $c deferred 1
    $c eval $body {*}$args
    return $c
}

proc ldb_cmd {c args} {
    $c {*}$args
    return [$c read]
}

# The answer's lines, compared as a list (the expected one may span lines).
proc assert_lines {expected actual} {
    assert_equal [list {*}$expected] $actual
}

proc ldb_test {name body} {
    uplevel 1 [list test $name "try {$body} finally { foreach c \$::ldb_clients { catch {\$c close} }; set ::ldb_clients {} }"]
}

start_server {tags {scripting ldb}} {

    test {SCRIPT DEBUG: its arguments, EVALSHA refused, NO turns it off} {
        assert_error {ERR Use SCRIPT DEBUG YES/SYNC/NO} {r script debug maybe}
        set c [redis_client]
        assert_equal OK [$c script debug sync]
        set sha [$c script load {return 1}]
        assert_error {ERR Please use EVAL instead of EVALSHA for debugging} {$c evalsha $sha 0}
        assert_equal OK [$c script debug no]
        assert_equal 1 [$c eval {return 1} 0]
        assert_equal 1 [$c evalsha $sha 0]
        $c close
    }

    test {SCRIPT DEBUG in a pipeline is refused} {
        set c [redis_client]
        $c deferred 1
        # One write: both commands reach the server in one read.
        $c write "*1\r\n\$4\r\nPING\r\n*3\r\n\$6\r\nSCRIPT\r\n\$5\r\nDEBUG\r\n\$4\r\nSYNC\r\n"
        $c flush
        assert_equal PONG [$c read]
        assert_error {ERR SCRIPT DEBUG must be called outside a pipeline} {$c read}
        $c close
    }

    ldb_test {A SYNC session: step, print, eval, redis, list, continue; its changes stay} {
        r del ldbkey
        set c [ldb_session sync "local a = 10\nredis.call('set', KEYS\[1\], ARGV\[1\])\nlocal b = a + 1\nreturn b" 1 ldbkey v1]
        assert_equal {{* Stopped at 1, stop reason = step over} {-> 1   local a = 10}} [$c read]
        assert_equal {{* Stopped at 2, stop reason = step over} {-> 2   redis.call('set', KEYS[1], ARGV[1])}} \
            [ldb_cmd $c step]
        assert_equal {{<value> a = 10}} [ldb_cmd $c print]
        assert_equal {{<value> 10}} [ldb_cmd $c p a]
        assert_equal {{<value> {"ldbkey"}}} [ldb_cmd $c print KEYS]
        assert_equal {{No such variable.}} [ldb_cmd $c print nosuch]
        # eval runs in a frame of its own: the script's locals are not there.
        assert_equal {{<retval> 12}} [ldb_cmd $c eval 10 + 2]
        assert_equal {{<error> ldb_eval:1: Script attempted to access nonexistent global variable 'oops'}} \
            [ldb_cmd $c eval oops]
        assert_equal {{<error> ldb_eval:1: unexpected symbol near ')'}} [ldb_cmd $c eval )]
        assert_equal {{<redis> get ldbkey} {<reply> NULL}} [ldb_cmd $c redis get ldbkey]
        assert_lines {{<redis> set ldbkey v1} {<reply> "+OK"}
            {* Stopped at 3, stop reason = step over} {-> 3   local b = a + 1}} [ldb_cmd $c next]
        assert_lines {{   2   redis.call('set', KEYS[1], ARGV[1])} {-> 3   local b = a + 1}
            {   4   return b}} [ldb_cmd $c list 3 1]
        assert_lines {{   1   local a = 10} {   2   redis.call('set', KEYS[1], ARGV[1])}
            {-> 3   local b = a + 1} {   4   return b}} [ldb_cmd $c whole]
        assert_equal {{<error> Unknown Redis Lua debugger command or wrong number of arguments.}} [ldb_cmd $c frobnicate]
        assert_equal {<endsession>} [ldb_cmd $c continue]
        assert_equal 11 [$c read]
        assert_equal 1 [$c wait_closed 2000]
        assert_equal v1 [r get ldbkey]
    }

    ldb_test {Breakpoints: set, listed, removed; continue stops at them; redis.breakpoint and redis.debug} {
        set body "local x = 1\nx = x + 1\nredis.debug('x is', x, {1, 2}, {a = 'b'})\nx = x + 1\nredis.breakpoint()\nx = x + 1\nreturn x"
        set c [ldb_session sync $body 0]
        $c read
        assert_equal {{No breakpoints set. Use 'b <line>' to add one.}} [ldb_cmd $c break]
        assert_lines {{   3   redis.debug('x is', x, {1, 2}, {a = 'b'})} {  #4   x = x + 1}
            {   5   redis.breakpoint()}} [ldb_cmd $c break 4]
        assert_equal {{  #2   x = x + 1} {   3   redis.debug('x is', x, {1, 2}, {a = 'b'})}} [lrange [ldb_cmd $c b 2] 1 end]
        assert_equal {{2 breakpoints set:} {  #4   x = x + 1} {  #2   x = x + 1}} [ldb_cmd $c break]
        assert_equal {{Breakpoint removed.}} [ldb_cmd $c break -2]
        assert_equal {{No breakpoint in the specified line.}} [ldb_cmd $c break -2]
        assert_equal {{Wrong line number.}} [ldb_cmd $c break 99]
        assert_equal {{Invalid argument:'x'}} [ldb_cmd $c break x]
        assert_lines {{<debug> line 3: "x is", 2, {1; 2}, {["a"]="b"}}
            {* Stopped at 4, stop reason = break point} {->#4   x = x + 1}} [ldb_cmd $c continue]
        assert_equal {{* Stopped at 6, stop reason = redis.breakpoint() called} {-> 6   x = x + 1}} [ldb_cmd $c c]
        assert_equal {{<value> 3}} [ldb_cmd $c print x]
        assert_equal {{All breakpoints removed.}} [ldb_cmd $c break 0]
        assert_equal {<endsession>} [ldb_cmd $c continue]
        assert_equal 4 [$c read]
        $c close
    }

    ldb_test {maxlen trims the logged replies (with a hint, once); trace; help} {
        r set ldbbig [string repeat x 500]
        set c [ldb_session sync "local v = redis.call('get', 'ldbbig')\nreturn 1" 0]
        $c read
        set out [ldb_cmd $c redis get ldbbig]
        assert_equal 3 [llength $out]
        assert_equal "<reply> \"[string repeat x 247] ..." [lindex $out 1]
        assert_equal {<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.} [lindex $out 2]
        assert_equal {{<value> replies are truncated at 256 bytes.}} [ldb_cmd $c maxlen]
        assert_equal {{<value> replies are truncated at 60 bytes.}} [ldb_cmd $c maxlen 10]
        assert_equal {{<value> replies are unlimited.}} [ldb_cmd $c maxlen 0]
        assert_equal "<reply> \"[string repeat x 500]\"" [lindex [ldb_cmd $c redis get ldbbig] 1]
        assert_equal {{In top level:} {-> 1   local v = redis.call('get', 'ldbbig')}} [ldb_cmd $c trace]
        set help [ldb_cmd $c help]
        assert_equal {Redis Lua debugger help:} [lindex $help 0]
        assert_equal {[a]bort              Stop the execution of the script. In sync} [lindex $help 23]
        assert_equal 30 [llength $help]
        $c close
    }

    ldb_test {abort ends the script with an error; a SYNC session keeps what it wrote} {
        r del ldbabort
        set c [ldb_session sync "redis.call('set', 'ldbabort', 1)\nredis.call('set', 'ldbabort', 2)\nreturn 3" 0]
        $c read
        ldb_cmd $c step
        assert_equal {<endsession>} [ldb_cmd $c abort]
        assert_error {ERR script aborted for user request script: *} {$c read}
        assert_equal 1 [$c wait_closed 2000]
        assert_equal 1 [r get ldbabort]
    }

    ldb_test {The debugger's protocol: unknown commands, a redis command of 100 arguments} {
        set c [ldb_session sync {return 'hello'} 0]
        $c read
        $c write "*1\r\n\$12\r\nhello\0world!\r\n"
        $c flush
        assert_match {*Unknown Redis Lua debugger command*} [$c read]
        set cmd "*101\r\n\$5\r\nredis\r\n"
        append cmd [string repeat "\$4\r\ntest\r\n" 100]
        $c write $cmd
        $c flush
        assert_match {*Unknown Redis command called from script*} [$c read]
        $c close
        assert_equal PONG [r ping]
    }

    ldb_test {A client that leaves mid-session: the script runs to its end, the server serves on} {
        r del ldbleft
        set c [ldb_session sync "redis.call('set', 'ldbleft', 1)\nredis.call('incr', 'ldbleft')\nreturn 1" 0]
        $c read
        $c close
        wait_for_condition 50 20 {[r get ldbleft] eq 2} else { fail "the script did not finish" }
    }

    ldb_test {A loop past busy-reply-threshold stops the script for the debugger} {
        r config set busy-reply-threshold 100
        set c [ldb_session sync "local i = 0\nwhile true do\n  i = i + 1\nend" 0]
        $c read
        set stop [ldb_cmd $c continue]
        assert_match {{* Stopped at * stop reason = timeout reached, infinite loop?} *} $stop
        assert_equal {<endsession>} [ldb_cmd $c abort]
        assert_error {*script aborted for user request*} {$c read}
        $c close
        r config set busy-reply-threshold 5000
    }

    ldb_test {A forked session (YES): the server serves meanwhile, the session's changes are lost} {
        r set ldbfork before
        set c [ldb_session yes "redis.call('set', 'ldbfork', 'inside')\nreturn redis.call('get', 'ldbfork')" 0]
        assert_equal {{* Stopped at 1, stop reason = step over} {-> 1   redis.call('set', 'ldbfork', 'inside')}} [$c read]
        # The session waits for its client; the server does not.
        assert_equal before [r get ldbfork]
        assert_lines {{<redis> set ldbfork inside} {<reply> "+OK"}
            {* Stopped at 2, stop reason = step over} {-> 2   return redis.call('get', 'ldbfork')}} [ldb_cmd $c step]
        assert_equal {<endsession>} [ldb_cmd $c continue]
        assert_equal inside [$c read]
        assert_equal 1 [$c wait_closed 2000]
        assert_equal before [r get ldbfork]
        assert_equal PONG [r ping]
    }
}

# Values with tails on SSD: a forked session would write and free tails in
# the server's own file, so only SYNC is offered.
set ::ldb_ssd [file join [pwd] tests tmp ldb-ssd-[pid]]
file delete -force $::ldb_ssd
start_server [list tags {scripting ldb goblin_only} args [list --ram-head 16K --ssd-dir $::ldb_ssd]] {
    ldb_test {With --ssd-dir, SCRIPT DEBUG YES is refused and SYNC works on values with tails} {
        r set ldbtail [string repeat t 40000]
        assert_error {ERR SCRIPT DEBUG YES is not available while values have tails on SSD*} {r script debug yes}
        set c [ldb_session sync "return #redis.call('get', 'ldbtail')" 0]
        $c read
        set out [ldb_cmd $c redis get ldbtail]
        assert_equal {<redis> get ldbtail} [lindex $out 0]
        assert_match {<reply> "tttt* ...} [lindex $out 1]
        assert_equal {<endsession>} [ldb_cmd $c continue]
        assert_equal 40000 [$c read]
    }
}
file delete -force $::ldb_ssd
