# Per-connection state, byte for byte as Redis 7.0: CLIENT REPLY OFF / SKIP
# / ON with every kind of reply that is not a push (plain replies, a
# blocked command's late reply, QUIT, RESET, MONITOR lines) and with the
# pushes that go out regardless (Pub/Sub confirmations and messages in
# RESP2 and RESP3, keyspace events, client-side caching invalidations as
# RESP3 pushes and as RESP2 redirected messages), inside MULTI/EXEC and
# scripts; what RESET clears and what it keeps; SWAPDB serving clients
# blocked on keys of the swapped-in database; which whole-database changes
# (SWAPDB, FLUSHDB) and expiries dirty WATCH; SLOWLOG showing a command as
# the client sent it (not as propagated or re-run); and the harness's own
# end-of-block liveness check.
#
# Goblin runs with --cores 2, so that the clients of a test sit on
# different workers (pushes cross threads). Every test runs against
# redis-server 7.0 too.

if {[is_goblin]} {
    set ::cs_server_args {--cores 2}
} else {
    set ::cs_server_args {}
}

# How long the first byte of an expected reply may take (ms): the machine
# may be loaded. Output expected to be empty costs this much each time.
set ::cs_patience 600

# pipe_bytes (helpers/util.tcl), the first byte waited for cs_patience.
proc cs_pipe {cmds {ms 200} {hello3 0}} { pipe_bytes $cmds $ms $hello3 $::cs_patience }

# Send cmds on the deferring client c, return what arrives until ms of silence.
proc cs_send {c cmds {ms 150}} {
    set out ""
    foreach cmd $cmds {append out [::resp::encode $cmd]}
    $c write $out
    $c flush
    $c read_all $ms $::cs_patience
}

proc cs_bulk {s} { return "\$[string length $s]\r\n$s\r\n" }

# A RESP3 invalidation push for keys (none: a flush).
proc cs_inv {args} {
    set out ">2\r\n\$10\r\ninvalidate\r\n"
    if {![llength $args]} {return "${out}_\r\n"}
    append out "*[llength $args]\r\n"
    foreach k $args {append out [cs_bulk $k]}
    return $out
}

proc cs_wait_blocked {n} {
    wait_for_condition 100 10 {[s blocked_clients] == $n} else {
        fail "blocked_clients did not reach $n ([s blocked_clients])"
    }
}

# The MONITOR lines in bytes, without their timestamps and addresses.
proc cs_monitor_lines {bytes} {
    set out {}
    foreach l [split $bytes "\n"] {
        set l [string trimright $l "\r"]
        if {[regexp {^\+[0-9.]+ \[[0-9]+ [^]]+\] (.*)$} $l -> rest]} {lappend out $rest}
    }
    return $out
}

# The arguments of every SLOWLOG GET entry, newest first.
proc cs_slowlog_cmds {{n 50}} {
    set out {}
    foreach e [r slowlog get $n] {lappend out [lindex $e 3]}
    return $out
}

start_server [list tags {client_state} args $::cs_server_args] {

    # --- CLIENT REPLY: plain replies ------------------------------------------

    test {CLIENT REPLY SKIP then ON: ON answers +OK (it lifts the skip)} {
        assert_equal "+OK\r\n+PONG\r\n" [cs_pipe {{client reply skip} {client reply on} {ping}}]
        # The same, one command at a time (the SKIP in force between reads).
        set c [redis_deferring_client]
        assert_equal "" [cs_send $c {{client reply skip}}]
        assert_equal "+OK\r\n" [cs_send $c {{client reply on}}]
        assert_equal "+PONG\r\n" [cs_send $c {{ping}}]
        $c close
    }

    test {CLIENT REPLY OFF / SKIP / ON combinations} {
        assert_equal "+PONG\r\n" [cs_pipe {{client reply skip} {ping a} {ping}}]
        assert_equal "+PONG\r\n" [cs_pipe {{client reply skip} {client reply skip} {ping a} {ping}}]
        assert_equal "+OK\r\n+PONG\r\n" [cs_pipe {{client reply off} {ping a} {client reply on} {ping}}]
        # SKIP under OFF is a no-op; OFF after SKIP stays.
        assert_equal "+OK\r\n" [cs_pipe {{client reply off} {client reply skip} {ping a} {client reply on}}]
        assert_equal "+OK\r\n" [cs_pipe {{client reply skip} {client reply off} {ping a} {client reply on}}]
        # Errors are replies too.
        assert_equal "+OK\r\n" [cs_pipe {{client reply off} {nosuchcmd} {get} {client reply on}}]
        assert_equal "+PONG\r\n" [cs_pipe {{client reply skip} {nosuchcmd} {ping}}]
        assert_equal "-ERR syntax error\r\n-ERR wrong number of arguments for 'client|reply' command\r\n+PONG\r\n" \
            [cs_pipe {{client reply foo} {client reply} {ping}}]
        # HELLO's reply is skipped, and the protocol still changes.
        assert_equal "_\r\n" [cs_pipe {{client reply skip} {hello 3} {get nosuchkey}}]
    }

    test {QUIT under CLIENT REPLY OFF or SKIP sends no +OK} {
        assert_equal "+OK\r\n" [cs_pipe {{quit}}]
        assert_equal "" [cs_pipe {{client reply off} {quit} {ping}}]
        assert_equal "" [cs_pipe {{client reply skip} {quit} {ping}}]
    }

    # --- CLIENT REPLY and blocked commands ------------------------------------

    test {CLIENT REPLY SKIP covers a blocked command's late reply (served)} {
        r del bl
        set c [redis_deferring_client]
        assert_equal "" [cs_send $c {{client reply skip} {blpop bl 0}}]
        cs_wait_blocked 1
        r rpush bl x
        cs_wait_blocked 0
        assert_equal "+PONG\r\n" [cs_send $c {{ping}}]
        assert_equal 0 [r exists bl]
        $c close
    }

    test {CLIENT REPLY SKIP covers a blocked command's timeout and CLIENT UNBLOCK} {
        set c [redis_deferring_client]
        $c client id
        set id [$c read]
        assert_equal "" [cs_send $c {{client reply skip} {blpop nosuch 0.05}} 300]
        assert_equal "+PONG\r\n" [cs_send $c {{ping}}]
        assert_equal "" [cs_send $c {{client reply skip} {xread block 50 streams nosuchs $}} 300]
        assert_equal "+PONG\r\n" [cs_send $c {{ping}}]
        assert_equal "" [cs_send $c {{client reply skip} {bzpopmin nosuchz 0}}]
        cs_wait_blocked 1
        assert_equal 1 [r client unblock $id error]
        cs_wait_blocked 0
        assert_equal "+PONG\r\n" [cs_send $c {{ping}}]
        # Without SKIP the same reply arrives.
        assert_equal "*-1\r\n" [cs_send $c {{blpop nosuch 0.05}} 300]
        $c close
    }

    test {CLIENT REPLY OFF and a blocked command, then ON} {
        r del bl
        set c [redis_deferring_client]
        assert_equal "" [cs_send $c {{client reply off} {blmove bl bl2 left right 0}}]
        cs_wait_blocked 1
        r rpush bl y
        cs_wait_blocked 0
        assert_equal "+OK\r\n" [cs_send $c {{client reply on}}]
        assert_equal y [r lpop bl2]
        $c close
    }

    # --- CLIENT REPLY and pushes ----------------------------------------------

    foreach resp {2 3} {
        set h [expr {$resp == 3}]
        set pong [expr {$resp == 3 ? "+PONG\r\n" : "*2\r\n\$4\r\npong\r\n\$0\r\n\r\n"}]

        test "Pub/Sub confirmations go out under CLIENT REPLY OFF and SKIP (RESP$resp)" {
            assert_equal [push_bytes $resp subscribe ch :1] [cs_pipe {{client reply off} {subscribe ch}} 200 $h]
            assert_equal "[push_bytes $resp subscribe ch :1]$pong" \
                [cs_pipe {{client reply skip} {subscribe ch} {ping}} 200 $h]
            assert_equal "[push_bytes $resp psubscribe a* :1][push_bytes $resp psubscribe b* :2]$pong" \
                [cs_pipe {{client reply skip} {psubscribe a* b*} {ping}} 200 $h]
            assert_equal "[push_bytes $resp ssubscribe s1 :1][push_bytes $resp subscribe c1 :1]" \
                [cs_pipe {{client reply off} {ssubscribe s1} {subscribe c1}} 200 $h]
            # PING in the subscribed state is a reply, not a push.
            assert_equal "[push_bytes $resp subscribe c1 :1][push_bytes $resp unsubscribe c1 :0]" \
                [cs_pipe {{client reply off} {subscribe c1} {ping} {unsubscribe c1}} 200 $h]
            assert_equal "[push_bytes $resp unsubscribe (nil) :0][push_bytes $resp punsubscribe (nil) :0][push_bytes $resp sunsubscribe (nil) :0]+OK\r\n" \
                [cs_pipe {{client reply off} {unsubscribe} {punsubscribe} {sunsubscribe} {client reply on}} 200 $h]
        }

        foreach mode {off skip} {
            test "Published messages reach a client under CLIENT REPLY $mode (RESP$resp)" {
                set c [redis_deferring_client]
                if {$resp == 3} {$c hello 3; $c read}
                # RESP2 takes no CLIENT REPLY once subscribed: set it first.
                assert_equal "[push_bytes $resp subscribe ch :1][push_bytes $resp psubscribe p* :2][push_bytes $resp ssubscribe sh :1]" \
                    [cs_send $c [list [list client reply $mode] {subscribe ch} {psubscribe p*} {ssubscribe sh}]]
                r publish ch hi
                r publish pq ho
                r spublish sh hu
                assert_equal "[push_bytes $resp message ch hi][push_bytes $resp pmessage p* pq ho][push_bytes $resp smessage sh hu]" \
                    [$c read_all 200 $::cs_patience]
                $c close
            }
        }
    }

    test {PUBLISH to itself under CLIENT REPLY OFF / SKIP (RESP3): the message, not the count} {
        # A channel per connection: a connection closed just before may
        # still be subscribed when the next one publishes (another worker
        # may not have seen its end yet), and PUBLISH would count it.
        assert_equal "[push_bytes 3 subscribe me1 :1][push_bytes 3 message me1 x]+OK\r\n" \
            [cs_pipe {{subscribe me1} {client reply off} {publish me1 x} {client reply on}} 200 1]
        assert_equal "[push_bytes 3 subscribe me2 :1][push_bytes 3 message me2 x]+PONG\r\n" \
            [cs_pipe {{subscribe me2} {client reply skip} {publish me2 x} {ping}} 200 1]
        # Unmuted, the message comes before PUBLISH's own reply.
        assert_equal "[push_bytes 3 subscribe me3 :1][push_bytes 3 message me3 x]:1\r\n" \
            [cs_pipe {{subscribe me3} {publish me3 x}} 200 1]
    }

    test {A script's PUBLISH to its caller comes before the script's reply, muted or not (RESP3)} {
        set s {redis.call('publish','me','y') return 7}
        assert_equal "[push_bytes 3 subscribe me :1][push_bytes 3 message me y]:7\r\n" \
            [cs_pipe [list {subscribe me} [list eval $s 0]] 200 1]
        assert_equal "[push_bytes 3 subscribe me :1][push_bytes 3 message me y]+OK\r\n" \
            [cs_pipe [list {subscribe me} {client reply off} [list eval $s 0] {client reply on}] 200 1]
        assert_equal "[push_bytes 3 subscribe me :1][push_bytes 3 message me y]+PONG\r\n" \
            [cs_pipe [list {subscribe me} {client reply skip} [list eval $s 0] {ping}] 200 1]
    }

    test {A keyspace event a client causes for itself precedes its reply; OFF/SKIP keep the event (RESP3)} {
        r config set notify-keyspace-events KA
        set ev [push_bytes 3 message __keyspace@0__:ke set]
        assert_equal "[push_bytes 3 subscribe __keyspace@0__:ke :1]$ev+OK\r\n" \
            [cs_pipe {{subscribe __keyspace@0__:ke} {set ke 1}} 200 1]
        assert_equal "[push_bytes 3 subscribe __keyspace@0__:ke :1]$ev+PONG\r\n" \
            [cs_pipe {{subscribe __keyspace@0__:ke} {client reply skip} {set ke 2} {ping}} 200 1]
        assert_equal "[push_bytes 3 subscribe __keyspace@0__:ke :1]$ev+OK\r\n" \
            [cs_pipe {{subscribe __keyspace@0__:ke} {client reply off} {set ke 3} {client reply on}} 200 1]
        r config set notify-keyspace-events ""
        r del ke
    }

    foreach mode {off skip} {
        test "Tracking invalidations (RESP3 push) reach a client under CLIENT REPLY $mode" {
            r del tk
            set c [redis_deferring_client]
            $c hello 3
            $c read
            assert_equal "+OK\r\n_\r\n" [cs_send $c {{client tracking on} {get tk}}]
            assert_equal "" [cs_send $c [list [list client reply $mode]]]
            r set tk 1
            assert_equal [cs_inv tk] [$c read_all 200 $::cs_patience]
            $c close
        }
    }

    test {Tracking: a client's own write under OFF / SKIP gives the push, not the reply} {
        r del tk
        set got [cs_pipe {{client tracking on} {get tk} {client reply off} {set tk 1} {get tk} {client reply on}} 200 1]
        assert_equal "+OK\r\n_\r\n[cs_inv tk]+OK\r\n" $got
        set got [cs_pipe {{client tracking on} {get tk} {client reply skip} {set tk 2} {get tk}} 200 1]
        assert_equal "+OK\r\n\$1\r\n1\r\n[cs_inv tk]\$1\r\n2\r\n" $got
        # BCAST and a flush (null invalidation).
        set c [redis_deferring_client]
        $c hello 3
        $c read
        assert_equal "+OK\r\n" [cs_send $c {{client tracking on bcast prefix bc:}}]
        assert_equal "" [cs_send $c {{client reply off}}]
        r set bc:1 v
        assert_equal [cs_inv bc:1] [$c read_all 200 $::cs_patience]
        r flushall
        assert_equal [cs_inv] [$c read_all 200 $::cs_patience]
        $c close
    }

    foreach mode {off skip} {
        test "Tracking redirected to a RESP2 Pub/Sub client under CLIENT REPLY $mode" {
            r del rk
            set t [redis_deferring_client]
            $t client id
            set tid [$t read]
            assert_equal [push_bytes 2 subscribe __redis__:invalidate :1] \
                [cs_send $t [list [list client reply $mode] {subscribe __redis__:invalidate}]]
            set a [redis_client]
            $a client tracking on redirect $tid
            $a get rk
            r set rk 1
            assert_equal "*3\r\n\$7\r\nmessage\r\n\$20\r\n__redis__:invalidate\r\n*1\r\n\$2\r\nrk\r\n" [$t read_all 200 $::cs_patience]
            $a close
            $t close
        }
    }

    test {Tracking redirection gone: the tracking-redir-broken push goes out under CLIENT REPLY OFF} {
        r del rb
        set t [redis_client]
        set tid [$t client id]
        set c [redis_deferring_client]
        $c hello 3
        $c read
        assert_equal "+OK\r\n_\r\n" [cs_send $c [list [list client tracking on redirect $tid] {get rb}]]
        $t close
        wait_for_condition 50 20 {![string match "*id=$tid *" [r client list]]} else {fail "redirection client still listed"}
        assert_equal "" [cs_send $c {{client reply off}}]
        r set rb 1
        assert_equal ">2\r\n\$21\r\ntracking-redir-broken\r\n:$tid\r\n" [$c read_all 200 $::cs_patience]
        $c close
    }

    # --- CLIENT REPLY, MULTI/EXEC and scripts ---------------------------------

    test {CLIENT REPLY and MULTI/EXEC} {
        r del mx
        # SKIP before MULTI skips MULTI's +OK only.
        assert_equal "+QUEUED\r\n*1\r\n+OK\r\n\$1\r\n2\r\n" [cs_pipe {{client reply skip} {multi} {set mx 2} {exec} {get mx}}]
        assert_equal "+OK\r\n\$1\r\n1\r\n" [cs_pipe {{client reply off} {multi} {set mx 1} {exec} {client reply on} {get mx}}]
        # SKIP queued in the transaction: EXEC's array lacks that element
        # and the command after EXEC is skipped.
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n" [cs_pipe {{multi} {client reply skip} {set mx 3} {exec} {get mx}}]
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n\$1\r\n4\r\n\$1\r\n5\r\n" \
            [cs_pipe {{multi} {client reply skip} {ping 4} {exec} {ping 1} {ping 5}}]
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n\$1\r\n4\r\n" \
            [cs_pipe {{multi} {client reply off} {set mx 4} {exec} {get mx} {client reply on} {get mx}}]
        # ON inside EXEC does not cancel a SKIP queued before it.
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+PONG\r\n" \
            [cs_pipe {{multi} {client reply skip} {client reply on} {exec} {ping} {ping}}]
        # CLIENT REPLY inside MULTI is queued like any command.
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n" [cs_pipe {{multi} {set mx 9} {client reply skip} {exec} {get mx}}]
        # A transaction that fails (WATCH) after SKIP: MULTI's +OK is skipped, EXEC's null is not.
        r set wx 0
        set c [redis_deferring_client]
        assert_equal "+OK\r\n+QUEUED\r\n" [cs_send $c {{watch wx} {client reply skip} {multi} {ping}}]
        r set wx 1
        assert_equal "*-1\r\n+PONG\r\n" [cs_send $c {{exec} {ping}}]
        $c close
        # SUBSCRIBE inside MULTI under OFF: the confirmation is a push.
        assert_equal "[push_bytes 3 subscribe m1 :1]+OK\r\n" \
            [cs_pipe {{client reply off} {multi} {subscribe m1} {exec} {client reply on}} 200 1]
    }

    test {CLIENT REPLY and scripts} {
        r del sx
        assert_equal "+OK\r\n\$1\r\n1\r\n" \
            [cs_pipe {{client reply off} {eval "redis.call('set','sx',1) return 5" 0} {client reply on} {get sx}}]
        assert_equal "+PONG\r\n" [cs_pipe {{client reply skip} {eval "return 5" 0} {ping}}]
        assert_equal "+PONG\r\n" [cs_pipe {{client reply skip} {eval "return redis.call('nosuch')" 0} {ping}}]
        assert_equal "+OK\r\n" [cs_pipe {{client reply off} {eval "return redis.error_reply('x')" 0} {client reply on}}]
        assert_match "-ERR This Redis command is not allowed from script*\r\n+PONG\r\n" \
            [cs_pipe {{eval "return redis.call('client','reply','off')" 0} {ping}}]
    }

    # --- MONITOR --------------------------------------------------------------

    test {MONITOR lines: held back under CLIENT REPLY OFF and SKIP, a monitor sees its own commands} {
        set m [redis_deferring_client]
        assert_equal "+OK\r\n" [cs_send $m {{monitor}}]
        set got [cs_send $m {{ping}}]
        assert_match "+PONG\r\n*" $got
        assert_equal {{"ping"}} [cs_monitor_lines $got]
        # OFF: its own CLIENT REPLY OFF and what others run meanwhile are not shown.
        assert_equal "" [cs_send $m {{client reply off}}]
        r set mon 1
        assert_equal "" [$m read_all 150 $::cs_patience]
        set got [cs_send $m {{client reply on}}]
        assert_match "+OK\r\n*" $got
        assert_equal {{"client" "reply" "on"}} [cs_monitor_lines $got]
        # SKIP: shown itself, then nothing until the monitor's next command.
        set got [cs_send $m {{client reply skip}}]
        assert_equal {{"client" "reply" "skip"}} [cs_monitor_lines $got]
        r set mon 2
        assert_equal "" [$m read_all 150 $::cs_patience]
        # That next command is skipped whole: its reply and its own line.
        assert_equal "" [cs_send $m {{ping}}]
        r set mon 3
        assert_equal {{"set" "mon" "3"}} [cs_monitor_lines [$m read_all 150 $::cs_patience]]
        $m close
    }

    test {A MONITOR client may not read or write keys (it counts as a replica)} {
        set err "-ERR Replica can't interact with the keyspace\r\n"
        set got [cs_pipe {{monitor} {get k} {set k v} {publish ch m} {eval "return 1" 0} {ping} {client reply on}}]
        assert_match "+OK\r\n$err$err$err$err+PONG\r\n*+OK\r\n*" $got
        set got [cs_pipe {{monitor} {multi} {set k v} {exec}}]
        assert_match "+OK\r\n+OK\r\n*$err*-EXECABORT Transaction discarded because of previous errors.\r\n*" $got
        assert_equal 0 [r exists k]
    }

    test {MONITOR shows a blocked command once, as sent, not when it is served} {
        r del mb ms
        set m [redis_deferring_client]
        assert_equal "+OK\r\n" [cs_send $m {{monitor}}]
        set c [redis_deferring_client]
        $c blpop mb 0
        $c xread block 0 streams ms $
        $c flush
        cs_wait_blocked 1
        r rpush mb x
        assert_equal {mb x} [$c read]
        cs_wait_blocked 1
        r xadd ms 1-1 f v
        assert_equal {{ms {{1-1 {f v}}}}} [$c read]
        set lines {}
        foreach l [cs_monitor_lines [$m read_all 200 $::cs_patience]] {
            if {![string match {"info"*} $l]} {lappend lines $l}
        }
        assert_equal {{"blpop" "mb" "0"} {"rpush" "mb" "x"} {"xread" "block" "0" "streams" "ms" "$"} {"xadd" "ms" "1-1" "f" "v"}} $lines
        $c close
        $m close
    }

    # --- RESET ----------------------------------------------------------------

    test {RESET: selected database back to 0} {
        r select 0
        r set rdb zero
        r select 5
        r set rdb five
        assert_equal "+OK\r\n+RESET\r\n[cs_bulk zero]" [cs_pipe {{select 5} {reset} {get rdb}}]
        r select 5
        r del rdb
        r select 0
        r del rdb
    }

    test {RESET: a transaction is discarded, WATCH is cleared} {
        r del rk1
        assert_equal "+OK\r\n+QUEUED\r\n+RESET\r\n-ERR EXEC without MULTI\r\n\$-1\r\n" \
            [cs_pipe {{multi} {set rk1 v} {reset} {exec} {get rk1}}]
        set c [redis_deferring_client]
        assert_equal "+OK\r\n+RESET\r\n" [cs_send $c {{watch rk1} {reset}}]
        r set rk1 changed
        assert_equal "+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n" [cs_send $c {{multi} {ping} {exec}}]
        $c close
        r del rk1
    }

    test {RESET: client-side caching is switched off} {
        set got [cs_pipe {{client tracking on bcast prefix rp:} {reset} {client trackinginfo}} 200 1]
        assert_equal "+OK\r\n+RESET\r\n*6\r\n\$5\r\nflags\r\n*1\r\n\$3\r\noff\r\n\$8\r\nredirect\r\n:-1\r\n\$8\r\nprefixes\r\n*0\r\n" $got
        set c [redis_deferring_client]
        $c hello 3
        $c read
        assert_equal "+OK\r\n_\r\n+RESET\r\n" [cs_send $c {{client tracking on} {get rt} {reset}}]
        r set rt 1
        assert_equal "" [$c read_all 150 $::cs_patience]
        $c close
        r del rt
    }

    test {RESET: CLIENT REPLY back to ON; a SKIP in force skips +RESET itself} {
        assert_equal "+RESET\r\n+PONG\r\n" [cs_pipe {{client reply off} {ping} {reset} {ping}}]
        assert_equal "+PONG\r\n" [cs_pipe {{client reply skip} {reset} {ping}}]
        # A SKIP set inside EXEC is in force for RESET after it.
        assert_equal "+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n" \
            [cs_pipe {{multi} {client reply skip} {exec} {reset} {ping}}]
    }

    test {RESET: the name is cleared} {
        assert_equal "+OK\r\n+RESET\r\n\$-1\r\n" [cs_pipe {{client setname rn} {reset} {client getname}}]
    }

    test {RESET: the protocol goes back to RESP2} {
        set got [cs_pipe {{reset} {hget nosuchhash f} {ping}} 200 1]
        assert_equal "+RESET\r\n\$-1\r\n+PONG\r\n" $got
    }

    test {RESET: Pub/Sub subscriptions end, without unsubscribe messages} {
        foreach resp {2 3} {
            set h [expr {$resp == 3}]
            assert_equal "[push_bytes $resp subscribe a :1][push_bytes $resp psubscribe b* :2][push_bytes $resp ssubscribe s :1]+RESET\r\n+PONG\r\n:0\r\n" \
                [cs_pipe {{subscribe a} {psubscribe b*} {ssubscribe s} {reset} {ping} {publish a x}} 200 $h]
        }
        assert_equal {a 0} [r pubsub numsub a]
        assert_equal 0 [r pubsub numpat]
        assert_equal {s 0} [r pubsub shardnumsub s]
    }

    test {RESET: back to the default user, authenticated when it has nopass} {
        r acl setuser rsu on >pw +@all ~* &*
        assert_equal "+OK\r\n\$3\r\nrsu\r\n+RESET\r\n\$7\r\ndefault\r\n" \
            [cs_pipe {{auth rsu pw} {acl whoami} {reset} {acl whoami}}]
        # The default user needs a password: RESET leaves the client
        # unauthenticated.
        r config set requirepass defpw
        set got [cs_pipe {{auth defpw} {ping} {reset} {ping} {auth defpw} {ping}}]
        assert_match "+OK\r\n+PONG\r\n+RESET\r\n-NOAUTH *\r\n+OK\r\n+PONG\r\n" $got
        set got [cs_pipe {{auth rsu pw} {reset} {get k}}]
        assert_match "+OK\r\n+RESET\r\n-NOAUTH *\r\n" $got
        r auth defpw
        r config set requirepass ""
        # The default user disabled: RESET leaves the client unauthenticated.
        assert_equal "+OK\r\n+OK\r\n+RESET\r\n-NOAUTH Authentication required.\r\n+OK\r\n+OK\r\n" \
            [cs_pipe {{auth rsu pw} {acl setuser default off} {reset} {ping} {auth rsu pw} {acl setuser default on}}]
        r acl deluser rsu
    }

    test {RESET keeps CLIENT NO-EVICT (as Redis 7.0)} {
        assert_match "+OK\r\n+RESET\r\n*flags=e *" [cs_pipe {{client no-evict on} {reset} {client info}}]
        assert_match "+RESET\r\n*flags=N *" [cs_pipe {{reset} {client info}}]
    }

    test {RESET ends MONITOR} {
        set m [redis_deferring_client]
        assert_equal "+OK\r\n+RESET\r\n" [cs_send $m {{monitor} {reset}}]
        r set rm 1
        assert_equal "" [$m read_all 150 $::cs_patience]
        assert_equal "+PONG\r\n" [cs_send $m {{ping}}]
        $m close
        r del rm
    }

    test {RESET: the whole CLIENT INFO of a busy client back to a fresh one} {
        set got [cs_pipe {{hello 3 setname zz} {select 2} {client tracking on} {subscribe q} {multi} {reset} {client info}}]
        assert_match "*+RESET\r\n\$*\r\nid=* name= * flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 * redir=-1 resp=2\n\r\n" $got
    }

    # --- SWAPDB and blocked clients -------------------------------------------

    # Fill database 1 with setup (a list of commands), block a client on
    # database 0 with block, SWAPDB 0 1; returns the blocked client's reply
    # bytes (nothing within ms: "").
    proc swap_serve {setup block {ms 300}} {
        r flushall
        r select 1
        foreach cmd $setup {r {*}$cmd}
        r select 0
        set c [redis_deferring_client]
        $c write [::resp::encode $block]
        $c flush
        cs_wait_blocked 1
        r swapdb 0 1
        set got [$c read_all $ms $::cs_patience]
        $c close
        return $got
    }

    test {SWAPDB serves clients blocked on lists of the swapped-in database} {
        assert_equal "*2\r\n[cs_bulk l][cs_bulk x]" [swap_serve {{rpush l x y}} {blpop l 0}]
        assert_equal "*2\r\n[cs_bulk l][cs_bulk y]" [swap_serve {{rpush l x y}} {brpop l 0}]
        assert_equal "*2\r\n[cs_bulk l][cs_bulk x]" [swap_serve {{rpush l x}} {blpop nothere l 0}]
        assert_equal [cs_bulk x] [swap_serve {{rpush l x y}} {blmove l d left right 0}]
        assert_equal [cs_bulk y] [swap_serve {{rpush l x y}} {brpoplpush l d 0}]
        assert_equal "*2\r\n[cs_bulk l]*2\r\n[cs_bulk x][cs_bulk y]" [swap_serve {{rpush l x y}} {blmpop 0 1 l left count 5}]
        r flushall
    }

    test {SWAPDB serves clients blocked on sorted sets of the swapped-in database} {
        assert_equal "*3\r\n[cs_bulk z][cs_bulk a][cs_bulk 1]" [swap_serve {{zadd z 1 a 2 b}} {bzpopmin z 0}]
        assert_equal "*3\r\n[cs_bulk z][cs_bulk b][cs_bulk 2]" [swap_serve {{zadd z 1 a 2 b}} {bzpopmax z 0}]
        assert_equal "*2\r\n[cs_bulk z]*2\r\n*2\r\n[cs_bulk b][cs_bulk 2]*2\r\n[cs_bulk a][cs_bulk 1]" \
            [swap_serve {{zadd z 1 a 2 b}} {bzmpop 0 1 z max count 5}]
        r flushall
    }

    test {SWAPDB serves clients blocked on streams of the swapped-in database} {
        set entry "*1\r\n*2\r\n[cs_bulk 1-1]*2\r\n[cs_bulk f][cs_bulk v]"
        assert_equal "*1\r\n*2\r\n[cs_bulk x]$entry" [swap_serve {{xadd x 1-1 f v}} {xread block 0 streams x $}]
        assert_equal "*1\r\n*2\r\n[cs_bulk x]$entry" [swap_serve {{xadd x 1-1 f v}} {xread block 0 streams x 0-0}]
        # XREADGROUP: the group of the swapped-in stream.
        r flushall
        r select 1
        r xadd x 1-1 f v
        r xgroup create x g 0
        r select 0
        r xadd x 1-1 f v
        r xgroup create x g $
        set c [redis_deferring_client]
        $c xreadgroup group g c block 0 streams x >
        $c flush
        cs_wait_blocked 1
        r swapdb 0 1
        assert_equal "*1\r\n*2\r\n[cs_bulk x]$entry" [$c read_all 300 $::cs_patience]
        $c close
        r flushall
    }

    test {SWAPDB: a key of another type, or no key, keeps the client blocked} {
        r flushall
        r select 1
        r set l str
        r select 0
        set c [redis_deferring_client]
        $c blpop l nokey 0
        $c flush
        cs_wait_blocked 1
        r swapdb 0 1
        after 150
        assert_equal 1 [s blocked_clients]
        # It is served once the key it waits for arrives in its database.
        r rpush nokey w
        assert_equal {nokey w} [$c read]
        $c close
        r flushall
    }

    test {SWAPDB serves a client blocked in database 1 from what database 0 held} {
        r flushall
        r rpush l from0
        set c [redis_deferring_client]
        $c select 1
        $c read
        $c blpop l 0
        $c flush
        cs_wait_blocked 1
        r swapdb 0 1
        assert_equal {l from0} [$c read]
        $c close
        r flushall
    }

    # --- WATCH and whole-database changes -------------------------------------

    # WATCH key on a fresh client (in database db), run change on the
    # default client, then MULTI/PING/EXEC: 1 when the transaction ran.
    proc watch_survives {key change {db 0}} {
        set c [redis_client]
        $c select $db
        $c watch $key
        foreach cmd $change {r {*}$cmd}
        $c multi
        $c ping
        set res [$c exec]
        $c close
        r select 0
        expr {$res eq "PONG"}
    }

    test {SWAPDB dirties WATCH only for keys that exist in one of the two databases} {
        r flushall
        assert_equal 1 [watch_survives w {{swapdb 0 1}}]
        r select 1
        r set w 1
        r select 0
        assert_equal 0 [watch_survives w {{swapdb 0 1}}]
        assert_equal 0 [watch_survives w {{swapdb 0 1}}]
        assert_equal 1 [watch_survives w {{swapdb 0 0}}]
        assert_equal 1 [watch_survives w {{swapdb 2 3}}]
        assert_equal 0 [watch_survives w {{swapdb 1 0}} 1]
        assert_equal 1 [watch_survives other {{swapdb 0 1}}]
        r flushall
    }

    test {FLUSHDB / FLUSHALL dirty WATCH only for keys the database held} {
        r flushall
        r set other 1
        assert_equal 1 [watch_survives w {{flushdb}}]
        r set w 1
        assert_equal 0 [watch_survives w {{flushdb}}]
        r set w 1
        assert_equal 0 [watch_survives w {{flushall async}}]
        r select 1
        r set w 1
        r select 0
        r set other 1
        assert_equal 1 [watch_survives w {{flushdb}} 1]
        assert_equal 0 [watch_survives w {{flushall}} 1]
    }

    test {WATCH of a key already expired: its removal is no change, a new value is} {
        r flushall
        r debug set-active-expire 0
        foreach {change survives} {
            {} 1
            {{get w}} 1
            {{del w}} 1
            {{flushdb}} 1
            {{get w} {set w 3}} 0
            {{set w 2}} 0
            {{swapdb 0 1}} 1
        } {
            r set w 1 px 1
            after 5
            assert_equal $survives [watch_survives w $change] "after {$change}"
            r flushall
        }
        # An expired key arriving by SWAPDB where there was none: no change.
        r select 1
        r set w 1 px 1
        r select 0
        after 5
        assert_equal 1 [watch_survives w {{swapdb 0 1}}]
        r debug set-active-expire 1
        r flushall
    }

    # --- SLOWLOG: a command as the client sent it ----------------------------

    test {SLOWLOG shows commands as sent, not as propagated} {
        r config set slowlog-log-slower-than 0
        r flushall
        r sadd ss a b c d
        r set gx v
        r slowlog reset
        r set sk v ex 100
        r set sk v px 100000 get
        r setex sk 100 v
        r psetex sk 100000 v
        r getex gx ex 100
        r getex gx persist
        r expire gx 100
        r spop ss
        r spop ss 2
        r incrbyfloat fl 1.5
        r hincrbyfloat hf f 2.5
        r getdel gx
        set got [lrange [cs_slowlog_cmds] 0 end-1]
        assert_equal [list {getdel gx} {hincrbyfloat hf f 2.5} {incrbyfloat fl 1.5} {spop ss 2} {spop ss} \
                          {expire gx 100} {getex gx persist} {getex gx ex 100} {psetex sk 100000 v} \
                          {setex sk 100 v} {set sk v px 100000 get} {set sk v ex 100}] $got
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG shows a served blocking command as the client sent it, once} {
        r config set slowlog-log-slower-than 0
        r del q q2 xs
        set c [redis_deferring_client]
        foreach {block feed result} {
            {blpop q 0} {rpush q v} {q v}
            {brpop q 0} {rpush q v} {q v}
            {blmove q q2 left right 0} {rpush q w} w
            {bzpopmin zq 0} {zadd zq 1 m} {zq m 1}
            {xread block 0 streams xs $} {xadd xs 1-1 f v} {{xs {{1-1 {f v}}}}}
        } {
            $c {*}$block
            $c flush
            cs_wait_blocked 1
            r slowlog reset
            r {*}$feed
            assert_equal $result [$c read]
            set cmds [lrange [cs_slowlog_cmds] 0 end-1]
            assert_equal [lsort [list [list {*}$block] [list {*}$feed]]] [lsort $cmds]
        }
        $c close
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG of a script's calls: the script client's address ?:0 and no name} {
        r config set slowlog-log-slower-than 0
        r client setname scriptcaller
        r slowlog reset
        r eval {redis.call('set','sl','v','ex','100') return 1} 0
        set entries [r slowlog get 3]
        set e [lindex $entries 0]
        assert_equal {eval {redis.call('set','sl','v','ex','100') return 1} 0} [lindex $e 3]
        assert_match {127.0.0.1:*} [lindex $e 4]
        assert_equal scriptcaller [lindex $e 5]
        set e [lindex $entries 1]
        assert_equal {set sl v ex 100} [lindex $e 3]
        assert_equal {?:0} [lindex $e 4]
        assert_equal {} [lindex $e 5]
        r client setname ""
        r config set slowlog-log-slower-than 10000
    }

    # --- the harness's liveness check -----------------------------------------

    test {The end-of-block liveness check fails for a server held by CLIENT PAUSE ALL} {
        set sid [::srv::current]
        assert_equal "" [::srv::answers_ping $sid 2000]
        set c [redis_client]
        $c client pause 700 all
        $c close
        set why [::srv::answers_ping $sid 300]
        assert_match "*PING*" $why
        # The pause ends by itself: the check passes again.
        wait_for_condition 50 50 {[::srv::answers_ping $sid 300] eq ""} else {fail "server still paused"}
        # A pause of writes only leaves PING answered.
        r client pause 500 write
        assert_equal "" [::srv::answers_ping $sid 300]
        r client unpause
    }

    test {A run whose file leaves its server paused ends with that file's failure counted} {
        # A nested run of the harness on two files of its own: its counts
        # stay its own (this test reads them).
        set dir [srv dir]
        set paused [file join $dir leaves_pause.tcl]
        set fine [file join $dir leaves_nothing.tcl]
        set fd [open $paused w]
        puts $fd {start_server {tags {selftest}} { test {pauses and returns} { r client pause 30000 all } }}
        close $fd
        set fd [open $fine w]
        puts $fd {start_server {tags {selftest}} { test {pings} { assert_equal PONG [r ping] } }}
        close $fd
        catch {exec [info nameofexecutable] [file join $::testdir test_helper.tcl] --server $::srv::binary \
                   --kind $::t::server_kind --single $paused --single $fine --timeout 120 2>@1} out
        # The nested run keeps the failed server's files: not needed here.
        foreach d [glob -nocomplain -directory $::srv::tmproot *[file tail $dir]_leaves_pause.*] {
            file delete -force $d
        }
        assert_match {*\[err\]: server answers PING after */leaves_pause.tcl *} $out
        assert {[regexp {\n2 passed, 1 failed(\n|$)} $out]} "the nested run did not end with 2 passed, 1 failed"
        assert_no_match {*answers PING after */leaves_nothing.tcl*} $out
    }
}
