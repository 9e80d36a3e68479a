# Exact Redis 7.0 behaviour of corner cases, checked byte for byte where
# the protocol matters: CLIENT REPLY OFF/SKIP/ON with pushes and
# transactions, CLIENT PAUSE WRITE/ALL, query buffer limits and resizing,
# RESET, SWAPDB and blocked clients, commands that do not touch a key's
# access time, MOVE/COPY, scores at the edge of the double range, COMMAND
# introspection, SLOWLOG of blocking commands served later.
#
# Every test here runs against redis-server 7.0 too (--server
# /usr/bin/redis-server); the expected bytes were taken from it.

# pipe_bytes (helpers/util.tcl) with this file's 250 ms of silence.
proc exact_pipe {cmds {ms 250} {hello3 0}} { pipe_bytes $cmds $ms $hello3 }

proc exact_client_field {name field} {
    foreach l [split [r client list] "\n"] {
        if {[string match "* name=$name *" $l]} {
            foreach kv [split [string trim $l] " "] {
                set i [string first = $kv]
                if {[string range $kv 0 [expr {$i - 1}]] eq $field} {
                    return [string range $kv [expr {$i + 1}] end]
                }
            }
        }
    }
    return ""
}

# A redis-server 7.0 to compare with (the binary under test when it is one);
# "" when none is installed (the caller's test then passes vacuously, with
# the reason printed).
proc exact_reference_redis {} {
    if {![is_goblin]} {return [redis_client]}
    set bin ""
    foreach b {/usr/bin/redis-server /usr/local/bin/redis-server} {
        if {[file executable $b]} {set bin $b; break}
    }
    if {$bin eq ""} {
        ::t::emit "    \[skip-body\]: no redis-server installed to compare with"
        return ""
    }
    set port [::srv::free_port]
    set dir [file join $::srv::tmproot "exact-ref.[pid]"]
    file mkdir $dir
    set pid [exec $bin --port $port --bind 127.0.0.1 --save "" --appendonly no --dir $dir \
                 --logfile [file join $dir log] >/dev/null 2>/dev/null &]
    ::t::control "server $pid"
    set ::exact_ref_pid $pid
    for {set i 0} {$i < 200} {incr i} {
        if {![catch {::resp::client -port $port -timeout 5000} c]} {
            if {![catch {$c ping}]} {return $c}
            $c close
        }
        after 20
    }
    error "reference redis-server did not start"
}

start_server {tags {exact}} {

    # --- CLIENT REPLY ------------------------------------------------------

    test {CLIENT REPLY SKIP then ON answers +OK (ON clears the skip)} {
        assert_equal "+OK\r\n+PONG\r\n" [exact_pipe {{client reply skip} {client reply on} {ping}}]
    }

    test {CLIENT REPLY SKIP twice skips the second SKIP and the next command} {
        assert_equal "+PONG\r\n" [exact_pipe {{client reply skip} {client reply skip} {ping} {ping}}]
    }

    test {CLIENT REPLY OFF / SKIP / ON combinations} {
        assert_equal "+OK\r\n+PONG\r\n" [exact_pipe {{client reply off} {ping} {client reply on} {ping}}]
        assert_equal "" [exact_pipe {{client reply off} {client reply skip} {ping} {ping}}]
        assert_equal "+OK\r\n" [exact_pipe {{client reply skip} {client reply off} {ping} {client reply on}}]
        assert_equal "+OK\r\n" [exact_pipe {{client reply off} {foo} {get} {client reply on}}]
        assert_equal "+PONG\r\n" [exact_pipe {{client reply skip} {foo} {ping}}]
        assert_equal "-ERR syntax error\r\n-ERR wrong number of arguments for 'client|reply' command\r\n+PONG\r\n" \
            [exact_pipe {{client reply foo} {client reply} {ping}}]
    }

    test {CLIENT REPLY and MULTI/EXEC} {
        r del a
        assert_equal "+OK\r\n\$1\r\n1\r\n" \
            [exact_pipe {{client reply off} {multi} {set a 1} {exec} {client reply on} {get a}}]
        assert_equal "+QUEUED\r\n*1\r\n+OK\r\n\$1\r\n2\r\n" \
            [exact_pipe {{client reply skip} {multi} {set a 2} {exec} {get a}}]
        # SKIP inside EXEC: the reply of the command after EXEC is skipped.
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n" \
            [exact_pipe {{multi} {client reply skip} {set a 2} {exec} {get a}}]
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n\$1\r\n3\r\n" \
            [exact_pipe {{multi} {client reply off} {set a 3} {exec} {get a} {client reply on} {get a}}]
        # ON inside EXEC does not cancel a SKIP queued before it.
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+PONG\r\n" \
            [exact_pipe {{multi} {client reply skip} {client reply on} {exec} {ping} {ping}}]
        assert_equal "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n" \
            [exact_pipe {{multi} {set a 1} {client reply skip} {exec} {ping}}]
    }

    test {CLIENT REPLY and scripts} {
        r del b
        assert_equal "+OK\r\n\$1\r\n1\r\n" \
            [exact_pipe {{client reply off} {eval "redis.call('set','b',1) return 5" 0} {client reply on} {get b}}]
        assert_equal "+PONG\r\n" [exact_pipe {{client reply skip} {eval "return 5" 0} {ping}}]
        set got [exact_pipe {{eval "return redis.call('client','reply','off')" 0} {ping}}]
        assert_match "-ERR This Redis command is not allowed from script*\r\n+PONG\r\n" $got
    }

    foreach resp {2 3} {
        test "Pub/Sub confirmations are sent under CLIENT REPLY OFF and SKIP (RESP$resp)" {
            set h [expr {$resp == 3}]
            assert_equal [push_bytes $resp subscribe ch :1] \
                [exact_pipe {{client reply off} {subscribe ch}} 250 $h]
            set pong [expr {$resp == 3 ? "+PONG\r\n" : "*2\r\n\$4\r\npong\r\n\$0\r\n\r\n"}]
            assert_equal "[push_bytes $resp subscribe ch :1]$pong" \
                [exact_pipe {{client reply skip} {subscribe ch} {ping}} 250 $h]
            assert_equal "[push_bytes $resp psubscribe a :1][push_bytes $resp psubscribe b :2]$pong" \
                [exact_pipe {{client reply skip} {psubscribe a b} {ping}} 250 $h]
            assert_equal "[push_bytes $resp ssubscribe s1 :1][push_bytes $resp psubscribe q* :1]" \
                [exact_pipe {{client reply off} {ssubscribe s1} {psubscribe q*}} 250 $h]
            assert_equal "[push_bytes $resp unsubscribe (nil) :0][push_bytes $resp punsubscribe (nil) :0][push_bytes $resp sunsubscribe (nil) :0]+OK\r\n" \
                [exact_pipe {{client reply off} {unsubscribe} {punsubscribe} {sunsubscribe} {client reply on}} 250 $h]
        }

        foreach mode {off skip} {
            test "Published messages reach a client under CLIENT REPLY $mode (RESP$resp)" {
                set c [redis_deferring_client]
                if {$resp == 3} {$c hello 3; $c read}
                # RESP2 allows no CLIENT REPLY once subscribed: set it first.
                $c client reply $mode
                $c subscribe ch
                $c psubscribe p*
                $c flush
                assert_equal "[push_bytes $resp subscribe ch :1][push_bytes $resp psubscribe p* :2]" [$c read_all 150]
                r publish ch hi
                assert_equal [push_bytes $resp message ch hi] [$c read_all 200]
                $c close
            }
        }
    }

    test {SUBSCRIBE inside MULTI under CLIENT REPLY OFF (RESP3)} {
        assert_equal "[push_bytes 3 subscribe m1 :1]+OK\r\n" \
            [exact_pipe {{client reply off} {multi} {subscribe m1} {exec} {client reply on}} 250 1]
    }

    foreach mode {off skip} {
        test "Tracking invalidations reach a client under CLIENT REPLY $mode" {
            set c [redis_deferring_client]
            $c hello 3
            $c read
            $c client tracking on
            $c read
            $c get tk
            $c read
            $c client reply $mode
            $c flush
            assert_equal "" [$c read_all 100]
            r set tk 1
            assert_equal ">2\r\n\$10\r\ninvalidate\r\n*1\r\n\$2\r\ntk\r\n" [$c read_all 200]
            $c close
        }
    }

    # --- CLIENT PAUSE ------------------------------------------------------

    # Sends cmds on a fresh client while the server is paused (WRITE or
    # ALL); returns {bytes answered during the pause} {bytes after UNPAUSE}.
    # Under ALL the pausing client is held too (CLIENT UNPAUSE included):
    # that pause ends by its timeout.
    proc paused_replies {mode cmds} {
        r client pause [expr {$mode eq "all" ? 600 : 100000}] $mode
        set c [redis_client]
        set out ""
        foreach cmd $cmds {append out [::resp::encode $cmd]}
        $c write $out
        $c flush
        set during [$c read_all 250]
        if {$mode eq "all"} {
            after 400
        } else {
            r client unpause
        }
        set after [$c read_all 250]
        $c close
        list $during $after
    }

    test {CLIENT PAUSE WRITE: reads pass, writes wait} {
        r set x 1
        assert_equal [list "\$1\r\n1\r\n" ""] [paused_replies write {{get x}}]
        assert_equal [list "" "+OK\r\n"] [paused_replies write {{set x 2}}]
        assert_equal [list "+PONG\r\n" ""] [paused_replies write {{ping}}]
        assert_equal [list "+string\r\n" ""] [paused_replies write {{type x}}]
        assert_equal [list "" ":1\r\n"] [paused_replies write {{del x}}]
        assert_equal [list "" ":0\r\n"] [paused_replies write {{expire nokey 10}}]
    }

    test {CLIENT PAUSE WRITE holds may-replicate commands (PUBLISH, PFCOUNT, EVAL)} {
        r del h
        r pfadd h a
        assert_equal [list "" ":0\r\n"] [paused_replies write {{publish c m}}]
        assert_equal [list "" ":1\r\n"] [paused_replies write {{pfcount h}}]
        assert_equal [list "" ":1\r\n"] [paused_replies write {{eval "return 1" 0}}]
        assert_equal [list ":1\r\n" ""] [paused_replies write {{eval_ro "return 1" 0}}]
    }

    test {CLIENT PAUSE WRITE lets scripts flagged no-writes run} {
        assert_equal [list ":1\r\n" ""] [paused_replies write [list [list eval "#!lua flags=no-writes\nreturn 1" 0]]]
        assert_equal [list "" ":1\r\n"] [paused_replies write [list [list eval "#!lua\nreturn 1" 0]]]
        r function load replace "#!lua name=pauselib\nredis.register_function{function_name='ro', callback=function() return 1 end, flags={'no-writes'}}\nredis.register_function('rw', function() return 2 end)"
        assert_equal [list ":1\r\n" ""] [paused_replies write {{fcall ro 0}}]
        assert_equal [list "" ":2\r\n"] [paused_replies write {{fcall rw 0}}]
        r function delete pauselib
    }

    test {CLIENT PAUSE WRITE and transactions} {
        r set x 1
        assert_equal [list "+OK\r\n+QUEUED\r\n*1\r\n\$1\r\n1\r\n" ""] \
            [paused_replies write {{multi} {get x} {exec}}]
        # A write command waits before it is queued.
        assert_equal [list "+OK\r\n" "+QUEUED\r\n*1\r\n+OK\r\n"] \
            [paused_replies write {{multi} {set x 2} {exec}}]
        assert_equal [list "+OK\r\n+OK\r\n" "+QUEUED\r\n*1\r\n+OK\r\n"] \
            [paused_replies write {{watch x} {multi} {set x 2} {exec}}]
        # Errors found before queueing are answered at once.
        assert_equal [list "+OK\r\n-ERR wrong number of arguments for 'set' command\r\n-EXECABORT Transaction discarded because of previous errors.\r\n" ""] \
            [paused_replies write {{multi} {set x} {exec}}]
    }

    test {CLIENT PAUSE: unknown commands and arity errors are answered at once} {
        foreach mode {write all} {
            assert_equal [list "-ERR wrong number of arguments for 'set' command\r\n" ""] [paused_replies $mode {{set x}}]
            assert_equal [list "-ERR wrong number of arguments for 'get' command\r\n" ""] [paused_replies $mode {{get}}]
            assert_equal [list "-ERR unknown command 'FOOBAR', with args beginning with: \r\n" ""] [paused_replies $mode {{FOOBAR}}]
        }
        # Errors of the command itself come when it runs.
        assert_equal [list "" "-ERR syntax error\r\n"] [paused_replies write {{set x 1 badopt}}]
        r del lst
        r lpush lst a
        assert_equal [list "" "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"] \
            [paused_replies write {{incr lst}}]
    }

    test {CLIENT PAUSE ALL holds reads too} {
        r set x 1
        assert_equal [list "" "\$1\r\n1\r\n"] [paused_replies all {{get x}}]
        assert_equal [list "" "+PONG\r\n"] [paused_replies all {{ping}}]
    }

    test {CLIENT PAUSE WRITE: held clients run in order at CLIENT UNPAUSE} {
        r del ord
        r client pause 100000 write
        set cs {}
        for {set i 0} {$i < 4} {incr i} {
            set c [redis_deferring_client]
            $c rpush ord $i
            lappend cs $c
            # Let the server see each one before the next.
            after 50
        }
        r client unpause
        set n 0
        foreach c $cs {assert_equal [incr n] [$c read]}
        assert_equal {0 1 2 3} [r lrange ord 0 -1]
    }

    test {CLIENT PAUSE WRITE ends by itself after its timeout} {
        r set t 0
        r client pause 400 write
        set c [redis_deferring_client]
        $c incr t
        $c flush
        assert_equal "" [$c read_all 150]
        assert_equal 1 [$c read]
        assert_equal 1 [r get t]
    }

    test {CLIENT PAUSE WRITE suspends expiry: expired keys stay until the pause ends} {
        r flushall
        r set e 1 px 100
        r set e2 1 px 100
        r client pause 100000 write
        try {
            after 300
            # Reads see them missing; nothing deletes them meanwhile (no
            # RANDOMKEY here: Redis 7.0 loops forever on it in this state).
            assert_equal {} [r get e]
            assert_equal 0 [r exists e]
            assert_equal -2 [r ttl e]
            assert_equal -2 [r pttl e]
            assert_equal none [r type e]
            assert_equal {} [r keys *]
            assert_equal 2 [r dbsize]
            assert_match "*db0:keys=2,expires=2,*" [r info keyspace]
            after 300
            assert_equal 2 [r dbsize]
        } finally {
            r client unpause
        }
        wait_for_condition 50 20 {[r dbsize] == 0} else {
            fail "expired keys were not deleted after the pause"
        }
        assert_equal 0 [r exists e]
    }

    test {CLIENT PAUSE WRITE suspends eviction} {
        r flushall
        r config set maxmemory-policy allkeys-random
        for {set i 0} {$i < 200} {incr i} {r set k$i [string repeat x 1000]}
        set used [s used_memory]
        r client pause 100000 write
        try {
            r config set maxmemory [expr {$used - 100000}]
            # A read while paused does not evict.
            r get k1
            after 200
            assert_equal 200 [r dbsize]
        } finally {
            r client unpause
            r config set maxmemory 0
            r config set maxmemory-policy noeviction
        }
        r flushall
    }

    # --- query buffer --------------------------------------------------------

    test {client-query-buffer-limit closes a client whose query buffer outgrows it} {
        assert_error {*argument must be between 1048576 and*} {r config set client-query-buffer-limit 1000}
        r config set client-query-buffer-limit 1mb
        set c [redis_client]
        $c write "*2\r\n\$3\r\nGET\r\n\$2000000\r\n[string repeat B 1100000]"
        catch {$c flush}
        assert_equal 1 [$c wait_closed 3000]
        r config set client-query-buffer-limit 1gb
        wait_for_condition 50 20 {
            [string match "*Closing client that reached max query buffer length*" [::srv::tail_file [srv stdout] 50]]
        } else {
            fail "no 'Closing client that reached max query buffer length' in the log"
        }
    }

    test {An idle client's query buffer shrinks back (CLIENT LIST qbuf-free)} {
        set c [redis_client]
        $c client setname qq
        $c set big [string repeat A 400000]
        wait_for_condition 100 50 {
            [exact_client_field qq qbuf] == 0 && [exact_client_field qq qbuf-free] == 0
        } else {
            fail "query buffer not released: qbuf=[exact_client_field qq qbuf] qbuf-free=[exact_client_field qq qbuf-free]"
        }
        # Idle in the middle of a large argument: the spare room goes, the
        # bytes read so far stay, and the command completes later.
        $c write "*3\r\n\$3\r\nSET\r\n\$3\r\nbig\r\n\$400000\r\nAAAA"
        $c flush
        wait_for_condition 100 50 {
            [exact_client_field qq qbuf] > 0 && [exact_client_field qq qbuf-free] == 0
        } else {
            fail "query buffer not shrunk: qbuf=[exact_client_field qq qbuf] qbuf-free=[exact_client_field qq qbuf-free]"
        }
        $c write "[string repeat A 399996]\r\n"
        $c flush
        assert_equal OK [$c read]
        assert_equal 400000 [r strlen big]
        r del big
        $c close
    }

    # --- RESET -------------------------------------------------------------

    test {RESET clears the connection state} {
        set got [exact_pipe {{select 3} {client setname foo} {client reply skip} {ping} {multi} {reset}
            {client info} {ping} {multi} {exec}} 250 1]
        assert_match "*+OK\r\n+RESET\r\n\$*\r\nid=* name= * flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 *resp=2\n\r\n+PONG\r\n+OK\r\n*0\r\n" $got
        assert_equal "[push_bytes 2 subscribe a :1][push_bytes 2 psubscribe b* :2]+RESET\r\n+PONG\r\n:0\r\n" \
            [exact_pipe {{subscribe a} {psubscribe b*} {reset} {ping} {publish a x}}]
        assert_equal "+OK\r\n+RESET\r\n+OK\r\n*0\r\n" [exact_pipe {{watch k} {reset} {multi} {exec}}]
        assert_equal "+RESET\r\n+PONG\r\n" [exact_pipe {{client reply off} {reset} {ping}}]
        r acl setuser u1 on >pw +@all ~*
        assert_equal "+OK\r\n\$2\r\nu1\r\n+RESET\r\n\$7\r\ndefault\r\n" [exact_pipe {{auth u1 pw} {acl whoami} {reset} {acl whoami}}]
        r acl deluser u1
    }

    test {RESET keeps CLIENT NO-EVICT (as Redis 7.0 does)} {
        set got [exact_pipe {{client no-evict on} {reset} {client info}}]
        assert_match "+OK\r\n+RESET\r\n*flags=e *" $got
    }

    test {RESET answers +RESET inside a transaction and ends it} {
        assert_equal "+OK\r\n+QUEUED\r\n+RESET\r\n-ERR EXEC without MULTI\r\n" [exact_pipe {{multi} {ping} {reset} {exec}}]
    }

    # --- SWAPDB ------------------------------------------------------------

    test {SWAPDB wakes clients blocked on keys of the swapped-in database} {
        r flushall
        r select 1
        r rpush wl x
        r select 0
        set c [redis_deferring_client]
        $c blpop wl 0
        $c flush
        after 100
        r swapdb 0 1
        assert_equal {wl x} [$c read]
        r select 1
        r zadd wz 1 m
        r select 0
        $c bzpopmin wz 0
        $c flush
        after 100
        r swapdb 1 0
        assert_equal {wz m 1} [$c read]
        # A key of the wrong type does not serve the client.
        r flushall
        r select 1
        r set wl str
        r select 0
        $c blpop wl 1
        $c flush
        after 100
        r swapdb 0 1
        assert_equal "*-1\r\n" [$c read_raw_reply]
        $c close
        r flushall
    }

    # --- no-touch commands -------------------------------------------------

    test {TTL, TYPE, EXISTS, OBJECT and friends do not touch the access time} {
        r flushall
        r config set maxmemory-policy allkeys-lru
        r set nt abc
        r rpush nl a b
        after 2100
        foreach cmd {{ttl nt} {pttl nt} {type nt} {exists nt} {object encoding nt} {object refcount nt}
                     {expiretime nt} {pexpiretime nt} {object idletime nt} {memory usage nt} {memory usage nl}
                     {type nl} {object encoding nl}} {
            r {*}$cmd
        }
        assert_morethan [r object idletime nt] 1
        assert_morethan [r object idletime nl] 1
        r get nt
        assert_lessthan [r object idletime nt] 2
        r touch nl
        assert_lessthan [r object idletime nl] 2
        r config set maxmemory-policy noeviction
    }

    test {TTL, TYPE, EXISTS, OBJECT do not change the LFU counter} {
        r flushall
        r config set maxmemory-policy allkeys-lfu
        r set f abc
        for {set i 0} {$i < 20} {incr i} {r get f}
        set freq [r object freq f]
        foreach cmd {{ttl f} {pttl f} {type f} {exists f} {object encoding f} {object idletime f}} {
            catch {r {*}$cmd}
        }
        for {set i 0} {$i < 20} {incr i} {r ttl f; r type f; r exists f}
        assert_equal $freq [r object freq f]
        r config set maxmemory-policy noeviction
    }

    # --- MOVE / COPY -------------------------------------------------------

    test {MOVE replies} {
        r flushall
        r set m 1
        assert_error {ERR source and destination objects are the same} {r move m 0}
        assert_equal 1 [r move m 1]
        assert_equal 0 [r move m 1]
        assert_equal 0 [r move nokey 1]
        assert_error {ERR DB index is out of range} {r move m 16}
        assert_error {ERR DB index is out of range} {r move m -1}
        assert_error {ERR value is not an integer or out of range} {r move m x}
        r select 1
        assert_equal 1 [r get m]
        r set m2 1
        r select 0
        r set m2 2
        r select 1
        assert_equal 0 [r move m2 0]
        r select 0
        assert_equal 2 [r get m2]
    }

    test {COPY replies} {
        r flushall
        r set a 1
        assert_equal 1 [r copy a b]
        assert_equal 0 [r copy a b]
        assert_equal 1 [r copy a b replace]
        assert_error {ERR source and destination objects are the same} {r copy a a}
        assert_equal 1 [r copy a c db 1]
        assert_error {ERR DB index is out of range} {r copy a c db 16}
        assert_error {ERR value is not an integer or out of range} {r copy a c db x}
        assert_error {ERR syntax error} {r copy a c foo}
        assert_equal 0 [r copy nokey d]
        assert_equal 1 [r copy a b db 0 replace]
        assert_error {ERR source and destination objects are the same} {r copy a a db 0}
        assert_equal 1 [r copy a a db 1]
    }

    # --- scores at the edge of the double range ----------------------------

    test {ZADD / ZINCRBY near DBL_MAX and with infinities} {
        r del z
        set max 1.7976931348623157e308
        assert_equal 1 [r zadd z $max a]
        assert_equal inf [r zincrby z $max a]
        assert_equal 1 [r zadd z inf b]
        assert_error {ERR resulting score is not a number (NaN)} {r zincrby z -inf b}
        assert_equal 2 [r zadd z -inf c +inf d]
        assert_equal {c -inf a inf b inf d inf} [r zrange z 0 -1 withscores]
        assert_error {ERR value is not a valid float} {r zadd z nan e}
        assert_equal 1 [r zincrby z 1 nosuch]
        assert_equal {c nosuch a b d} [r zrangebyscore z -inf +inf]
        assert_equal {} [r zrangebyscore z (inf +inf]
        assert_equal {nosuch} [r zrangebyscore z (-inf (inf]
        assert_equal {a inf b inf d inf} [r zrangebyscore z 1e308 +inf withscores]
        assert_equal inf [r zadd z incr inf d]
        assert_error {ERR resulting score is not a number (NaN)} {r zadd z incr -inf d}
        assert_equal inf [r zscore z d]
        assert_equal 1 [r zadd z -$max f]
        assert_equal -inf [r zincrby z -$max f]
        assert_error {ERR value is not a valid float} {r zadd z 1e309 g}
        assert_error {ERR value is not a valid float} {r zadd z 1.8e308 g}
        assert_equal 1 [r zadd z -0 h]
        assert_equal 0 [r zscore z h]
        assert_equal 1 [r zadd z 1e-320 i]
        assert_equal 9.9998886718268301e-321 [r zscore z i]
        assert_error {ERR min or max is not a float} {r zrangebyscore z nan inf}
        assert_equal 8 [r zcount z -inf inf]
        assert_error {ERR min or max is not a float} {r zrangebyscore z 1 x}
        assert_equal inf [r zadd z incr inf nw]
        assert_error {ERR resulting score is not a number (NaN)} {r zadd z incr -inf nw}
    }

    test {ZUNIONSTORE with infinite scores and zero weights} {
        r del z2 z3 z4 z5
        r zadd z2 inf a
        assert_equal inf [r zincrby z2 +inf a]
        assert_error {ERR resulting score is not a number (NaN)} {r zincrby z2 -inf a}
        assert_equal 1 [r zunionstore z3 2 z2 z2]
        assert_equal {a inf} [r zrange z3 0 -1 withscores]
        assert_equal 1 [r zunionstore z3 1 z2 weights 0]
        assert_equal {a 0} [r zrange z3 0 -1 withscores]
        r zadd z4 -inf a
        assert_equal 1 [r zunionstore z5 2 z2 z4]
        assert_equal {a 0} [r zrange z5 0 -1 withscores]
        assert_error {ERR value is not a valid float} {r zincrby z2 1e400 a}
        set c [redis_client]
        $c hello 3
        assert_equal ",inf\r\n" [$c rawcall zscore z2 a]
        $c zadd z6 1.7976931348623157e308 a
        assert_equal ",inf\r\n" [$c rawcall zincrby z6 1.7976931348623157e308 a]
        $c zadd z7 -0.0 m
        assert_equal ",0\r\n" [$c rawcall zscore z7 m]
        $c close
    }

    # --- COMMAND introspection ---------------------------------------------

    test {COMMAND LIST FILTERBY PATTERN includes subcommands} {
        set l [r command list filterby pattern config*]
        assert {[lsearch -exact $l config] >= 0}
        foreach sc {config|get config|set config|resetstat config|rewrite config|help} {
            assert {[lsearch -exact $l $sc] >= 0} "$sc in COMMAND LIST FILTERBY PATTERN config*"
        }
        assert_equal {config|get} [r command list filterby pattern config|get]
        assert_equal {} [r command list filterby pattern nosuchcmd*]
    }

    test {COMMAND GETKEYS and movablekeys} {
        set cases {
            {get k} {k}
            {set k v} {k}
            {mset a 1 b 2} {a b}
            {zunionstore d 2 a b} {d a b}
            {zunion 2 a b} {a b}
            {eval "return 1" 2 a b x} {a b}
            {sort k store d} {k d}
            {lmpop 2 a b left} {a b}
            {blmpop 0 2 a b left} {a b}
            {sintercard 2 a b} {a b}
            {migrate h 1 "" 0 5 keys a b} {a b}
            {xread streams a b 0 0} {a b}
            {georadius k 0 0 1 m store d} {k d}
            {object encoding k} {k}
            {memory usage k} {k}
            {copy a b} {a b}
            {lmove a b left right} {a b}
            {bitop and d a b} {d a b}
            {pfcount a b} {a b}
            {rename a b} {a b}
        }
        foreach {argv keys} $cases {
            set name [lindex $argv 0]
            if {[catch {r command getkeys {*}$argv} got]} {
                # Commands the server lacks.
                assert_match {*Invalid command specified*} $got
                continue
            }
            assert_equal $keys $got "COMMAND GETKEYS $argv"
        }
        assert_error {ERR Invalid number of arguments specified for command} {r command getkeys set k}
        assert_error {ERR Invalid arguments specified for command} {r command getkeys zunionstore d 0 a}
        assert_error {ERR The command has no key arguments} {r command getkeys ping x}
        assert_error {ERR wrong number of arguments for 'command|getkeys' command} {r command getkeys get}
        assert_error {*Invalid command specified*} {r command getkeys nosuch k}
        assert_error {ERR Invalid command specified} {r command getkeys config|get x}
        foreach {cmd movable} {zunionstore 1 eval 1 sort 1 get 0 mset 0 lmpop 1 migrate 1} {
            set info [lindex [r command info $cmd] 0]
            if {$info eq ""} continue
            assert_equal $movable [expr {[lsearch -exact [lindex $info 2] movablekeys] >= 0}] "movablekeys of $cmd"
        }
    }

    test {COMMAND INFO agrees with redis-server 7.0 for every shared command} {
        set ref [exact_reference_redis]
        if {$ref eq ""} return
        set mine [r command list]
        set theirs [$ref command list]
        set n 0
        foreach name $theirs {
            if {[lsearch -exact $mine $name] < 0} continue
            set a [lindex [$ref command info $name] 0]
            set b [lindex [r command info $name] 0]
            # Subcommands are compared one by one (their order is a hash order).
            set asub [lindex $a 9]
            set bsub [lindex $b 9]
            assert_equal [lrange $a 0 8] [lrange $b 0 8] "COMMAND INFO $name"
            foreach s $asub {
                foreach t $bsub {
                    if {[lindex $t 0] eq [lindex $s 0]} {
                        assert_equal $s $t "COMMAND INFO of subcommand [lindex $s 0]"
                    }
                }
            }
            incr n
        }
        assert_morethan $n 150
        # COMMAND LIST FILTERBY PATTERN for a few patterns, restricted to
        # the commands both have.
        foreach pat {config* *|get client|* x* *store} {
            set a {}
            foreach x [$ref command list filterby pattern $pat] {
                if {[lsearch -exact $mine $x] >= 0 || [catch {r command info $x} i] == 0 && [lindex $i 0] ne ""} {lappend a $x}
            }
            set b {}
            foreach x [r command list filterby pattern $pat] {
                if {[lsearch -exact $theirs $x] >= 0 || [lindex [$ref command info $x] 0] ne ""} {lappend b $x}
            }
            assert_equal [lsort $a] [lsort $b] "COMMAND LIST FILTERBY PATTERN $pat"
        }
    }

    # --- SLOWLOG -------------------------------------------------------------

    test {SLOWLOG records a served blocking command as the client sent it} {
        r config set slowlog-log-slower-than 0
        r del q q2
        set c [redis_deferring_client]
        $c blpop q 0
        $c flush
        after 100
        r slowlog reset
        r rpush q v
        assert_equal {q v} [$c read]
        set cmds {}
        foreach e [r slowlog get 10] {lappend cmds [lindex $e 3]}
        assert {[lsearch -exact $cmds {blpop q 0}] >= 0 || [lsearch -exact $cmds {BLPOP q 0}] >= 0} "slowlog: $cmds"
        assert {[lsearch -exact $cmds {lpop q}] < 0} "slowlog: $cmds"
        $c blmove q q2 left right 0
        $c flush
        after 100
        r slowlog reset
        r rpush q w
        assert_equal w [$c read]
        set cmds {}
        foreach e [r slowlog get 10] {lappend cmds [string tolower [lindex $e 3]]}
        assert {[lsearch -exact $cmds {blmove q q2 left right 0}] >= 0} "slowlog: $cmds"
        r config set slowlog-log-slower-than 10000
        $c close
    }

    test {SLOWLOG has a served blocking command once, when its reply arrives} {
        r config set slowlog-log-slower-than 0
        set c [redis_deferring_client]
        set p [redis_client]
        for {set i 0} {$i < 20} {incr i} {
            r del q
            r slowlog reset
            $c blpop q 0
            $c flush
            # Blocking logs nothing: the entry comes when it is served.
            wait_for_condition 50 10 {[s blocked_clients] == 1} else {fail "BLPOP did not block"}
            set cmds {}
            foreach e [r slowlog get 10] {lappend cmds [string tolower [lindex $e 3]]}
            assert {[lsearch -exact $cmds {blpop q 0}] < 0} "slowlog while blocked: $cmds"
            # The served client asks right after its reply: the entry is there.
            $p rpush q v$i
            assert_equal [list q v$i] [$c read]
            $c slowlog get 10
            set cmds {}
            foreach e [$c read] {lappend cmds [string tolower [lindex $e 3]]}
            assert_equal 1 [llength [lsearch -all -exact $cmds {blpop q 0}]] "slowlog after the reply: $cmds"
        }
        r config set slowlog-log-slower-than 10000
        $c close
        $p close
    }
}

if {[info exists ::exact_ref_pid]} {
    catch {exec kill -TERM $::exact_ref_pid}
    ::t::control "serverdone $::exact_ref_pid"
}
