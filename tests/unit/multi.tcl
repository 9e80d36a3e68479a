# Transactions: MULTI/EXEC/DISCARD/WATCH/UNWATCH replies and errors,
# EXECABORT after queue-time errors, runtime errors inside EXEC, WATCH
# dirtied by writes/DEL/EXPIRE/FLUSHDB/FLUSHALL/SWAPDB/expiry, blocking
# commands inside MULTI, and atomicity against concurrent clients on
# several workers (goblin runs with --cores 2).

if {[is_goblin]} {
    set ::multi_server_args {--cores 2}
} else {
    set ::multi_server_args {}
}

start_server [list tags {multi} args $::multi_server_args] {

    test {MULTI / EXEC basics} {
        r del mylist
        r rpush mylist a b c
        assert_equal OK [r multi]
        assert_equal QUEUED [r lrange mylist 0 -1]
        assert_equal QUEUED [r ping]
        assert_equal {{a b c} PONG} [r exec]
    }

    test {EXEC of an empty transaction is an empty array} {
        r multi
        assert_equal "*0\r\n" [r rawcall exec]
    }

    test {DISCARD drops the queue} {
        r del x
        r set x 1
        r multi
        r incr x
        assert_equal OK [r discard]
        assert_equal 1 [r get x]
        assert_equal PONG [r ping]
    }

    test {Nested MULTI is an error and does not abort the transaction} {
        r multi
        assert_error {ERR MULTI calls can not be nested} {r multi}
        r set nx 1
        assert_equal {OK} [r exec]
    }

    test {EXEC and DISCARD without MULTI} {
        assert_error {ERR EXEC without MULTI} {r exec}
        assert_error {ERR DISCARD without MULTI} {r discard}
    }

    test {WATCH inside MULTI is not allowed} {
        r multi
        assert_error {ERR WATCH inside MULTI is not allowed} {r watch x}
        assert_equal {} [r exec]
    }

    test {Unknown command while queueing aborts EXEC (EXECABORT)} {
        r del x
        r multi
        r set x 1
        catch {r nosuchcommand a b} e
        assert_match {ERR unknown command*} $e
        assert_error {EXECABORT Transaction discarded because of previous errors.} {r exec}
        assert_equal 0 [r exists x]
        assert_error {ERR EXEC without MULTI} {r exec}
    }

    test {Wrong arity while queueing aborts EXEC} {
        r del x
        r multi
        r set x 1
        assert_error {ERR wrong number of arguments for 'get' command} {r get}
        assert_error {EXECABORT*} {r exec}
        assert_equal 0 [r exists x]
    }

    # These two use their own connection: a server that keeps the
    # transaction open would otherwise break every later test.
    test {EXEC with wrong arity discards the transaction (EXECABORT)} {
        set c [redis_client]
        $c del x
        $c multi
        $c set x 1
        assert_error {EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command} {$c exec extra}
        assert_error {ERR EXEC without MULTI} {$c exec}
        assert_equal 0 [$c exists x]
        assert_equal PONG [$c ping]
        $c close
    }

    test {EXEC with wrong arity outside MULTI} {
        set c [redis_client]
        assert_error {EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command} {$c exec extra}
        assert_error {ERR wrong number of arguments for 'discard' command} {$c discard extra}
        assert_error {ERR wrong number of arguments for 'multi' command} {$c multi extra}
        assert_equal PONG [$c ping]
        $c close
    }

    test {DISCARD after a queue-time error} {
        r multi
        catch {r nosuchcommand}
        assert_equal OK [r discard]
        assert_equal PONG [r ping]
    }

    test {Runtime errors inside EXEC do not abort the transaction} {
        r del x y
        r set x foo
        r multi
        r set y 1
        r lpush x a
        r incr y
        r incr x
        set res [r exec]
        assert_equal 4 [llength $res]
        assert_equal OK [lindex $res 0]
        assert_match {WRONGTYPE*} [lindex $res 1]
        assert_equal 2 [lindex $res 2]
        assert_match {ERR value is not an integer*} [lindex $res 3]
        assert_equal 2 [r get y]
    }

    test {EXEC raw reply with an embedded error} {
        r del s
        r set s foo
        r multi
        r incr s
        r ping
        assert_equal "*2\r\n-ERR value is not an integer or out of range\r\n+PONG\r\n" [r rawcall exec]
    }

    test {WATCH / EXEC with no change succeeds} {
        r del x
        r set x 1
        assert_equal OK [r watch x]
        r multi
        r incr x
        assert_equal {2} [r exec]
    }

    test {WATCH dirtied by another client's write} {
        set c [redis_client]
        r set x 1
        r watch x
        $c set x 2
        r multi
        r set x 3
        assert_equal "*-1\r\n" [r rawcall exec]
        assert_equal 2 [r get x]
        $c close
    }

    test {WATCH dirtied by the same connection's write before MULTI} {
        r set x 1
        r watch x
        r set x 5
        r multi
        r ping
        assert_equal {} [r exec]
        assert_equal 5 [r get x]
    }

    test {WATCH on a missing key dirtied by its creation} {
        set c [redis_client]
        r del nokey
        r watch nokey
        $c set nokey 1
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {WATCH dirtied by DEL} {
        set c [redis_client]
        r set x 1
        r watch x
        $c del x
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {WATCH dirtied by EXPIRE} {
        set c [redis_client]
        r set x 1
        r watch x
        $c expire x 100
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {WATCH not dirtied by a write to another key or by reads} {
        set c [redis_client]
        r set x 1
        r set y 1
        r watch x
        $c set y 2
        $c get x
        $c exists x
        $c ttl x
        r get x
        r multi
        r ping
        assert_equal {PONG} [r exec]
        $c close
    }

    test {WATCH not dirtied by DEL of a missing key} {
        set c [redis_client]
        r del nokey
        r watch nokey
        $c del nokey
        r multi
        r ping
        assert_equal {PONG} [r exec]
        $c close
    }

    test {WATCH dirtied by FLUSHDB} {
        set c [redis_client]
        r set x 1
        r watch x
        $c flushdb
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {WATCH dirtied by FLUSHALL} {
        set c [redis_client]
        r set x 1
        r watch x
        $c flushall
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {WATCH dirtied by SWAPDB} {
        set c [redis_client]
        r flushall
        r set x 1
        r select 1
        r set x 2
        r select 0
        r watch x
        $c swapdb 0 1
        r multi
        r ping
        assert_equal {} [r exec]
        r flushall
        $c close
    }

    test {WATCH dirtied by key expiry} {
        r del x
        r set x 1
        r watch x
        r pexpire x 1
        after 20
        r multi
        r ping
        assert_equal {} [r exec]
    }

    test {WATCH on a key that expires after WATCH (set before)} {
        set c [redis_client]
        r del x
        r set x 1 px 50
        r watch x
        after 100
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {UNWATCH forgets the watched keys} {
        set c [redis_client]
        r set x 1
        r watch x
        $c set x 2
        assert_equal OK [r unwatch]
        r multi
        r ping
        assert_equal {PONG} [r exec]
        $c close
    }

    test {EXEC clears the watched keys} {
        set c [redis_client]
        r set x 1
        r watch x
        r multi
        r ping
        r exec
        $c set x 2
        r multi
        r ping
        assert_equal {PONG} [r exec]
        $c close
    }

    test {DISCARD clears the watched keys} {
        set c [redis_client]
        r set x 1
        r watch x
        r multi
        r discard
        $c set x 2
        r multi
        r ping
        assert_equal {PONG} [r exec]
        $c close
    }

    test {WATCH of several keys, one dirtied} {
        set c [redis_client]
        r mset a 1 b 2 c 3
        r watch a b
        r watch c
        $c incr c
        r multi
        r get a
        assert_equal {} [r exec]
        $c close
    }

    test {WATCH dirtied by writes from many connections (any worker)} {
        for {set i 0} {$i < 8} {incr i} {
            set c [redis_client]
            r set wk$i 1
            r watch wk$i
            $c incr wk$i
            r multi
            r get wk$i
            assert_equal {} [r exec] "client $i"
            # and a fresh WATCH on an untouched key still succeeds
            r watch wk$i
            r multi
            r get wk$i
            assert_equal {2} [r exec] "client $i"
            $c close
        }
    }

    test {WATCH dirtied by another client's transaction} {
        set c [redis_client]
        r set x 1
        r watch x
        $c multi
        $c incr x
        $c exec
        r multi
        r incr x
        assert_equal {} [r exec]
        assert_equal 2 [r get x]
        $c close
    }

    test {WATCH dirtied by RENAME into the watched key} {
        set c [redis_client]
        r del x src
        r set src v
        r watch x
        $c rename src x
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {WATCH is per database} {
        set c [redis_client]
        r flushall
        r set x 1
        r watch x
        $c select 1
        $c set x 2
        r multi
        r ping
        assert_equal {PONG} [r exec]
        $c flushall
        $c close
    }

    test {EXEC is atomic w.r.t. concurrent plain writers} {
        r del ak
        set ws {}
        for {set i 0} {$i < 4} {incr i} {
            set w [redis_deferring_client]
            for {set j 0} {$j < 300} {incr j} {$w set ak "w$i"}
            lappend ws $w
        }
        set bad 0
        for {set j 0} {$j < 200} {incr j} {
            r multi
            r set ak mine
            r append ak -x
            r get ak
            set res [r exec]
            if {[lindex $res 2] ne "mine-x"} {incr bad}
        }
        foreach w $ws {
            for {set j 0} {$j < 300} {incr j} {$w read}
            $w close
        }
        assert_equal 0 $bad
    }

    test {BLPOP inside MULTI does not block} {
        r del blist
        r multi
        r blpop blist 0
        r brpop blist 0
        r blmove blist other left right 0
        set res [r rawcall exec]
        assert_equal "*3\r\n*-1\r\n*-1\r\n\$-1\r\n" $res
    }

    test {BLPOP inside MULTI pops an existing element} {
        r del blist
        r rpush blist a
        r multi
        r blpop blist 0
        assert_equal {{blist a}} [r exec]
    }

    test {MULTI with keys on many slots/workers} {
        r del k1 k2 k3 k4 k5 k6 k7 k8
        r multi
        foreach k {k1 k2 k3 k4 k5 k6 k7 k8} {r set $k $k}
        foreach k {k1 k2 k3 k4 k5 k6 k7 k8} {r incrby cnt 1}
        r mget k1 k2 k3 k4 k5 k6 k7 k8
        set res [r exec]
        assert_equal {k1 k2 k3 k4 k5 k6 k7 k8} [lindex $res end]
    }

    test {EXEC is atomic w.r.t. concurrent INCR clients} {
        r del ca cb
        set n 8
        set per 150
        set clients {}
        for {set i 0} {$i < $n} {incr i} {
            lappend clients [redis_deferring_client]
        }
        # Each client: MULTI; INCR ca; INCR cb; EXEC -- pipelined.
        foreach c $clients {
            for {set j 0} {$j < $per} {incr j} {
                $c multi
                $c incr ca
                $c incr cb
                $c exec
            }
        }
        # Meanwhile, a checker reads both counters in a transaction: they
        # must always be equal.
        set bad 0
        for {set j 0} {$j < 100} {incr j} {
            r multi
            r get ca
            r get cb
            set v [r exec]
            if {[lindex $v 0] ne [lindex $v 1]} {incr bad}
        }
        foreach c $clients {
            for {set j 0} {$j < $per} {incr j} {
                assert_equal OK [$c read]
                assert_equal QUEUED [$c read]
                assert_equal QUEUED [$c read]
                set r [$c read]
                assert_equal 2 [llength $r]
                assert_equal [lindex $r 0] [lindex $r 1]
            }
            $c close
        }
        assert_equal 0 $bad
        assert_equal [expr {$n * $per}] [r get ca]
        assert_equal [expr {$n * $per}] [r get cb]
    }

    test {MULTI with RESP3} {
        r hello 3
        r del h
        r multi
        r hset h f v
        r hgetall h
        assert_equal "*2\r\n:1\r\n%1\r\n\$1\r\nf\r\n\$1\r\nv\r\n" [r rawcall exec]
        r multi
        r get nokey
        assert_equal "*1\r\n_\r\n" [r rawcall exec]
        r hello 2
    }

    test {Commands queued across SELECT} {
        r flushall
        r multi
        r select 1
        r set x one
        r select 0
        r set x zero
        r exec
        assert_equal zero [r get x]
        r select 1
        assert_equal one [r get x]
        r select 0
        r flushall
    }
}
