# RESP protocol: inline and multibulk requests, pipelining, RESP3 shapes,
# protocol errors, unknown command and arity errors (Redis 7.0 replies).

# Send raw bytes on a fresh connection; the server must answer exactly the
# expected bytes (and nothing more within a short while).
proc assert_proto_reply {data expected} {
    set c [redis_client]
    $c write $data
    $c flush
    if {[catch {$c read_bytes [string length $expected]} reply]} {
        set reply "$reply; received so far: [::t::show [$c read_all 10]]"
    } else {
        append reply [$c read_all 30]
    }
    $c close
    assert_equal $expected $reply
}

# A protocol error is answered with one error line and the connection closed.
proc assert_proto_error {data expected} {
    set c [redis_client]
    $c write $data
    $c flush
    set reply [$c read_all 3000]
    set closed [$c wait_closed 3000]
    $c close
    assert_equal "-ERR Protocol error: $expected\r\n" $reply
    assert_equal 1 $closed "connection closed after the protocol error"
}

start_server {tags {protocol}} {

    test {Inline PING} {
        assert_proto_reply "PING\r\n" \
            "+PONG\r\n"
    }

    test {Inline command terminated by a bare newline} {
        assert_proto_reply "PING\n" \
            "+PONG\r\n"
    }

    test {Inline commands with arguments} {
        assert_proto_reply "SET foo bar\r\nGET foo\r\n" \
            "+OK\r\n\$3\r\nbar\r\n"
    }

    test {Inline: empty lines are ignored} {
        assert_proto_reply "\r\n\r\n\nPING\r\n" \
            "+PONG\r\n"
    }

    test {Inline: several spaces between arguments} {
        assert_proto_reply "  set    k1     v  \r\nget k1\r\n" \
            "+OK\r\n\$1\r\nv\r\n"
    }

    test {Inline: double quotes group words} {
        assert_proto_reply "set k2 \"hello world\"\r\nget k2\r\n" \
            "+OK\r\n\$11\r\nhello world\r\n" 
    }

    test {Inline: single quotes group words} {
        assert_proto_reply "set k3 'a b'\r\nget k3\r\n" \
            "+OK\r\n\$3\r\na b\r\n"
    }

    test {Inline: escapes inside double quotes} {
        # \x41 is 'A', \n a newline, \" a quote
        assert_proto_reply "set k4 \"a\\x41\\n\\\"z\"\r\nget k4\r\n" \
            "+OK\r\n\$5\r\naA\n\"z\r\n"
    }

    test {Inline: empty quoted argument} {
        assert_proto_reply "set k5 \"\"\r\nget k5\r\n" \
            "+OK\r\n\$0\r\n\r\n"
    }

    test {Inline: unbalanced double quotes} {
        assert_proto_error "set \"\"\"test-key\"\"\" test-value\r\nping\r\n" \
            "unbalanced quotes in request"
    }

    test {Inline: unbalanced single quotes} {
        assert_proto_error "set 'foo bar\r\n" "unbalanced quotes in request"
    }

    test {Inline: closing quote must be followed by a space} {
        assert_proto_error "set \"foo\"bar x\r\n" "unbalanced quotes in request"
    }

    test {Inline: too big inline request} {
        assert_proto_error [string repeat a 70000] "too big inline request"
    }

    test {Multibulk request} {
        assert_proto_reply "*3\r\n\$3\r\nSET\r\n\$2\r\nmk\r\n\$5\r\nvalue\r\n" \
            "+OK\r\n"
        assert_equal value [r get mk]
    }

    test {Multibulk: command name is case insensitive} {
        assert_proto_reply "*1\r\n\$4\r\npInG\r\n" \
            "+PONG\r\n"
    }

    test {Multibulk: empty and zero-length arguments} {
        assert_proto_reply "*3\r\n\$3\r\nSET\r\n\$0\r\n\r\n\$0\r\n\r\n*2\r\n\$3\r\nGET\r\n\$0\r\n\r\n" \
            "+OK\r\n\$0\r\n\r\n" 
        assert_equal 1 [r exists ""]
        r del ""
    }

    test {Multibulk: count of zero or below is ignored} {
        assert_proto_reply "*0\r\n*-10\r\nPING\r\n" \
            "+PONG\r\n"
    }

    test {Multibulk: binary argument with NUL and CRLF bytes} {
        set v "a\x00b\r\nc\xff"
        set c [redis_client]
        $c write "*3\r\n\$3\r\nSET\r\n\$3\r\nbin\r\n\$[string length $v]\r\n$v\r\n"
        $c flush
        assert_equal OK [$c read]
        assert_equal "\$7\r\n$v\r\n" [$c rawcall get bin]
        $c close
    }

    test {Multibulk: command sent one byte at a time} {
        set c [redis_client]
        set cmd "*3\r\n\$3\r\nSET\r\n\$4\r\nslow\r\n\$6\r\nbyte!!\r\n"
        foreach ch [split $cmd ""] {
            $c write $ch
            $c flush
        }
        assert_equal OK [$c read]
        assert_equal byte!! [$c get slow]
        $c close
    }

    test {Protocol error: invalid multibulk length (too large)} {
        assert_proto_error "*3000000000\r\n" "invalid multibulk length"
    }

    test {Protocol error: invalid multibulk length (not a number)} {
        assert_proto_error "*blabla\r\n" "invalid multibulk length"
    }

    test {Protocol error: too big mbulk count string} {
        assert_proto_error "*[string repeat 1 70000]" "too big mbulk count string"
    }

    test {Protocol error: invalid bulk length (too large)} {
        assert_proto_error "*1\r\n\$10000000000\r\n" "invalid bulk length"
    }

    test {Protocol error: invalid bulk length (negative)} {
        assert_proto_error "*1\r\n\$-1\r\n" "invalid bulk length"
    }

    test {Protocol error: invalid bulk length (not a number)} {
        assert_proto_error "*1\r\n\$blabla\r\n" "invalid bulk length"
    }

    test {Protocol error: bulk longer than proto-max-bulk-len} {
        assert_proto_error "*3\r\n\$3\r\nSET\r\n\$1\r\nx\r\n\$536870913\r\n" "invalid bulk length"
    }

    test {Protocol error: bulk length beyond a lowered proto-max-bulk-len} {
        r config set proto-max-bulk-len 1048576
        assert_proto_error "*3\r\n\$3\r\nSET\r\n\$1\r\nx\r\n\$1048577\r\n" "invalid bulk length"
        r config set proto-max-bulk-len 536870912
    }

    test {Protocol error: too big bulk count string} {
        assert_proto_error "*1\r\n\$[string repeat 1 70000]" "too big bulk count string"
    }

    test {Protocol error: expected '$'} {
        assert_proto_error "*1\r\nfoo\r\n" "expected '\$', got 'f'"
    }

    test {Protocol error: expected '$' on a later argument} {
        assert_proto_error "*2\r\n\$4\r\nPING\r\n:12\r\n" "expected '\$', got ':'"
    }

    test {Commands before a protocol error are answered} {
        set c [redis_client]
        $c write "PING\r\n*1\r\n\$-5\r\n"
        $c flush
        assert_equal "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n" [$c read_all 3000]
        $c close
    }

    test {The server still works after protocol errors} {
        assert_equal PONG [r ping]
    }

    test {Unknown command} {
        assert_error {ERR unknown command 'nosuchcommand', with args beginning with: } {
            r nosuchcommand
        }
        assert_equal "-ERR unknown command 'nosuchcommand', with args beginning with: \r\n" \
            [r rawcall nosuchcommand]
    }

    test {Unknown command with arguments lists them} {
        assert_equal "-ERR unknown command 'foo', with args beginning with: 'a' 'b c' \r\n" \
            [r rawcall foo a "b c"]
    }

    test {Unknown command: long names and arguments are truncated} {
        set name [string repeat x 200]
        set reply [r rawcall $name [string repeat y 200]]
        assert_equal "-ERR unknown command '[string repeat x 128]', with args beginning with: '[string repeat y 128]' \r\n" $reply
    }

    test {Unknown command over inline protocol} {
        assert_proto_reply "foo bar\r\n" \
            "-ERR unknown command 'foo', with args beginning with: 'bar' \r\n" 
    }

    test {Wrong number of arguments} {
        assert_error {ERR wrong number of arguments for 'get' command} {r get}
        assert_error {ERR wrong number of arguments for 'get' command} {r get a b}
        assert_error {ERR wrong number of arguments for 'set' command} {r set a}
        assert_error {ERR wrong number of arguments for 'echo' command} {r echo}
        assert_error {ERR wrong number of arguments for 'mset' command} {r mset a}
    }

    test {Wrong number of arguments names the command in lower case} {
        assert_equal "-ERR wrong number of arguments for 'get' command\r\n" [r rawcall GeT]
    }

    test {Wrong number of arguments for a subcommand} {
        assert_error {ERR wrong number of arguments for 'config|get' command} {r config get}
        assert_error {ERR wrong number of arguments for 'client|setname' command} {r client setname}
    }

    test {Unknown subcommand} {
        assert_error {ERR unknown subcommand 'foo'. Try CONFIG HELP.} {r config foo}
        assert_error {ERR unknown subcommand 'foo'. Try CLIENT HELP.} {r client foo}
        assert_error {ERR unknown subcommand 'foo'. Try OBJECT HELP.} {r object foo bar}
    }

    test {Pipelining 10000 multibulk commands in one write} {
        set n 10000
        set buf ""
        for {set i 0} {$i < $n} {incr i} {
            append buf [::resp::encode [list set pipe:$i val:$i]]
        }
        set c [redis_client]
        $c write $buf
        $c flush
        set ok 0
        for {set i 0} {$i < $n} {incr i} {
            if {[$c read] eq "OK"} {incr ok}
        }
        assert_equal $n $ok
        set buf ""
        for {set i 0} {$i < $n} {incr i} {
            append buf [::resp::encode [list get pipe:$i]]
        }
        $c write $buf
        $c flush
        set good 0
        for {set i 0} {$i < $n} {incr i} {
            if {[$c read] eq "val:$i"} {incr good}
        }
        assert_equal $n $good
        $c close
    }

    test {Pipelining 5000 inline commands in one write} {
        set c [redis_client]
        $c write [string repeat "PING\r\n" 5000]
        $c flush
        set expected [string repeat "+PONG\r\n" 5000]
        assert_equal $expected [$c read_bytes [string length $expected]]
        $c close
    }

    test {Pipelining: replies keep the order of mixed commands} {
        set c [redis_client]
        set buf ""
        for {set i 0} {$i < 2000} {incr i} {
            append buf [::resp::encode [list incr pipectr]]
            append buf "ECHO e$i\r\n"
            append buf [::resp::encode [list nosuchcmd]]
        }
        $c write $buf
        $c flush
        set bad 0
        for {set i 0} {$i < 2000} {incr i} {
            if {[$c read] != $i + 1} {incr bad}
            if {[$c read] ne "e$i"} {incr bad}
            if {![catch {$c read} e] || ![string match {ERR unknown command*} $e]} {incr bad}
        }
        assert_equal 0 $bad
        $c close
    }

    test {Pipelining: a request split across writes} {
        set c [redis_client]
        $c write "*3\r\n\$3\r\nSET\r\n\$5\r\nsplit"
        $c flush
        after 50
        $c write "\r\n\$5\r\nvalue\r\n*2\r\n\$3\r\nGET"
        $c flush
        after 50
        $c write "\r\n\$5\r\nsplit\r\n"
        $c flush
        assert_equal OK [$c read]
        assert_equal value [$c read]
        $c close
    }

    test {A client that disconnects in the middle of a command} {
        foreach partial [list "*3\r\n\$3\r\nSET\r\n\$1\r\na" "*3\r\n\$3\r\nSET\r\n\$100\r\nxyz" "SET a b" "*2"] {
            set c [redis_client]
            $c write $partial
            $c flush
            $c close
        }
        assert_equal PONG [r ping]
        assert_equal 0 [r exists a]
    }

    test {A client that closes without reading large replies} {
        r set bigval [string repeat x 100000]
        for {set k 0} {$k < 3} {incr k} {
            set c [redis_client]
            $c write [string repeat [::resp::encode {get bigval}] 200]
            $c flush
            $c read_bytes 1000
            $c close
        }
        assert_equal PONG [r ping]
        assert_equal 100000 [r strlen bigval]
        r del bigval
    }

    test {A slow reader still gets every byte of large pipelined replies} {
        r set bigval [string repeat y 50000]
        set c [redis_client]
        $c write [string repeat [::resp::encode {get bigval}] 100]
        $c flush
        after 300
        set bad 0
        for {set i 0} {$i < 100} {incr i} {
            if {[string length [$c read]] != 50000} {incr bad}
        }
        assert_equal 0 $bad
        $c close
        r del bigval
    }

    test {Inline and multibulk requests mixed in one write} {
        set buf "SET mix1 a\r\n[::resp::encode {set mix2 b}]GET mix1\r\n[::resp::encode {get mix2}]"
        assert_proto_reply $buf "+OK\r\n+OK\r\n\$1\r\na\r\n\$1\r\nb\r\n"
    }

    test {A large multibulk count is accepted while arguments arrive} {
        set c [redis_client]
        $c write "*20000000\r\n"
        $c flush
        after 100
        assert_equal 0 [$c wait_closed 100]
        $c close
        assert_equal PONG [r ping]
    }

    test {Large argument of 4 MB} {
        set v [string repeat abcdefgh 524288]
        r set big $v
        assert_equal 4194304 [r strlen big]
        assert_equal $v [r get big]
        r del big
    }

    test {RESP2 null bulk} {
        assert_equal "\$-1\r\n" [r rawcall get nosuchkey]
    }

    test {RESP2 null inside an array} {
        r set a 1
        assert_equal "*2\r\n\$1\r\n1\r\n\$-1\r\n" [r rawcall mget a nosuchkey]
    }

    test {HELLO 3 reply is a map with the server fields} {
        set c [redis_client]
        set raw [$c rawcall hello 3]
        set re {^%7\r\n\$6\r\nserver\r\n\$[0-9]+\r\n[^\r]+\r\n\$7\r\nversion\r\n\$[0-9]+\r\n[0-9]+\.[0-9]+\.[0-9]+\r\n\$5\r\nproto\r\n:3\r\n\$2\r\nid\r\n:[0-9]+\r\n\$4\r\nmode\r\n\$10\r\nstandalone\r\n\$4\r\nrole\r\n\$6\r\nmaster\r\n\$7\r\nmodules\r\n\*0\r\n$}
        assert {[regexp $re $raw]} "HELLO 3 raw reply [::t::show $raw]"
        $c close
    }

    test {HELLO 2 reply is a flat array} {
        set c [redis_client]
        set raw [$c rawcall hello 2]
        assert_match "\\*14\r\n\$6\r\nserver\r\n*\$5\r\nproto\r\n:2\r\n*\$7\r\nmodules\r\n\\*0\r\n" $raw
        $c close
    }

    test {HELLO 3: null} {
        set c [redis_client]
        $c hello 3
        assert_equal "_\r\n" [$c rawcall get nosuchkey]
        $c close
    }

    test {HELLO 3: null inside an array} {
        set c [redis_client]
        $c hello 3
        r set a 1
        assert_equal "*2\r\n\$1\r\n1\r\n_\r\n" [$c rawcall mget a nosuchkey]
        $c close
    }

    test {HELLO 3: CONFIG GET replies a map} {
        set c [redis_client]
        r config set maxmemory 0
        assert_equal "*2\r\n\$9\r\nmaxmemory\r\n\$1\r\n0\r\n" [$c rawcall config get maxmemory]
        $c hello 3
        assert_equal "%1\r\n\$9\r\nmaxmemory\r\n\$1\r\n0\r\n" [$c rawcall config get maxmemory]
        $c close
    }

    test {HELLO 3: INCRBYFLOAT still replies a bulk string} {
        set c [redis_client]
        $c hello 3
        r del fl
        assert_equal "\$3\r\n1.5\r\n" [$c rawcall incrbyfloat fl 1.5]
        $c close
    }

    test {HELLO 3: INFO and CLIENT INFO reply verbatim strings} {
        set c [redis_client]
        $c hello 3
        assert_match "=*\r\ntxt:# Server\r\n*" [$c rawcall info server]
        assert_match "=*\r\ntxt:id=*resp=3\n\r\n" [$c rawcall client info]
        $c close
    }

    test {HELLO 3: errors keep the simple error shape} {
        set c [redis_client]
        $c hello 3
        assert_equal "-ERR wrong number of arguments for 'get' command\r\n" [$c rawcall get]
        $c close
    }

    test {HELLO 3: doubles} {
        needs_feature command:zadd
        set c [redis_client]
        r del z
        r zadd z 1.5 a inf b -inf c
        assert_equal "\$3\r\n1.5\r\n" [$c rawcall zscore z a]
        $c hello 3
        assert_equal ",1.5\r\n" [$c rawcall zscore z a]
        assert_equal ",inf\r\n" [$c rawcall zscore z b]
        assert_equal ",-inf\r\n" [$c rawcall zscore z c]
        assert_equal 1.5 [$c zscore z a]
        $c close
        r del z
    }

    test {HELLO 3: push messages} {
        needs_feature command:subscribe
        set c [redis_client]
        $c hello 3
        assert_equal ">3\r\n\$9\r\nsubscribe\r\n\$2\r\nch\r\n:1\r\n" [$c rawcall subscribe ch]
        $c close
    }

    test {HELLO 3 then HELLO 2 goes back to RESP2} {
        set c [redis_client]
        $c hello 3
        assert_equal "_\r\n" [$c rawcall get nosuchkey]
        $c hello 2
        assert_equal "\$-1\r\n" [$c rawcall get nosuchkey]
        $c close
    }

    test {HELLO without a version reports the current protocol} {
        set c [redis_client]
        assert_equal 2 [dict get [kv [$c hello]] proto]
        $c hello 3
        assert_equal 3 [dict get [kv [$c hello]] proto]
        $c close
    }

    test {HELLO with an unsupported protocol version} {
        assert_error {NOPROTO unsupported protocol version} {r hello 4}
        assert_error {NOPROTO unsupported protocol version} {r hello 1}
    }

    test {HELLO with a version that is not a number} {
        assert_error {ERR Protocol version is not an integer or out of range} {r hello abc}
    }

    test {HELLO syntax errors name the option} {
        assert_error {ERR Syntax error in HELLO option 'FOO'} {r hello 3 FOO}
        assert_error {ERR Syntax error in HELLO option 'SETNAME'} {r hello 3 SETNAME}
        assert_error {ERR Syntax error in HELLO option 'AUTH'} {r hello 3 AUTH onlyuser}
    }

    test {RESP3 client can still talk after a protocol error on another client} {
        set c [redis_client]
        $c hello 3
        assert_proto_error "*1\r\nfoo\r\n" "expected '\$', got 'f'"
        assert_equal PONG [$c ping]
        $c close
    }

    test {Requests that arrive together on two connections run in the order they arrived} {
        # A worker busy in DEBUG SLEEP finds both connections readable at
        # once; the one whose request came first runs first, as in Redis's
        # event loop.
        set a [redis_deferring_client]
        set b [redis_deferring_client]
        set blocker [redis_deferring_client]
        foreach c [list $a $b $blocker] { $c ping; assert_equal PONG [$c read] }
        r del order
        for {set i 0} {$i < 5} {incr i} {
            $blocker debug sleep 0.1
            after 30
            $a rpush order a
            after 2
            $b rpush order b
            assert_equal OK [$blocker read]
            $a read
            $b read
        }
        assert_equal {a b a b a b a b a b} [r lrange order 0 -1]
        foreach c [list $a $b $blocker] { $c close }
    }
}
