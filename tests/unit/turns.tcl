# A connection's turn: a worker runs one connection's requests for about
# half a millisecond of command time, then serves its other connections
# before it runs the rest. A pipeline of slow commands on one connection
# does not hold another client of the same worker until it ends, and the
# pipeline itself loses nothing and keeps its order. One worker, so every
# client shares it.

proc turns_sleeps {n} {
    string repeat "*3\r\n\$5\r\ndebug\r\n\$5\r\nsleep\r\n\$4\r\n0.01\r\n" $n
}

start_server {tags {goblin_only turns} args {--cores 1}} {
    test {A PING waits for one turn of another client's pipeline, not for all of it} {
        set rd [redis_deferring_client]
        # A hundred commands of 10 ms in one write: a second of work.
        set t0 [clock milliseconds]
        $rd write [turns_sleeps 100]
        $rd flush
        after 50
        set p0 [clock milliseconds]
        assert_equal PONG [r ping]
        set ping_ms [expr {[clock milliseconds] - $p0}]
        for {set i 0} {$i < 100} {incr i} { assert_equal OK [$rd read] }
        set all_ms [expr {[clock milliseconds] - $t0}]
        $rd close
        assert_morethan $all_ms 900
        assert_lessthan $ping_ms 300
    }

    test {A pipeline whose turns are cut keeps its order with what it sends meanwhile} {
        r del turns:n
        set rd [redis_deferring_client]
        set one "*2\r\n\$4\r\nincr\r\n\$7\r\nturns:n\r\n"
        set batch ""
        for {set i 0} {$i < 30} {incr i} { append batch [turns_sleeps 1] $one }
        $rd write $batch
        $rd flush
        after 100
        # Sent while the first batch still runs: it comes after all of it.
        set batch ""
        for {set i 0} {$i < 30} {incr i} { append batch $one [turns_sleeps 1] }
        $rd write $batch
        $rd flush
        for {set i 1} {$i <= 30} {incr i} {
            assert_equal OK [$rd read]
            assert_equal $i [$rd read]
        }
        for {set i 31} {$i <= 60} {incr i} {
            assert_equal $i [$rd read]
            assert_equal OK [$rd read]
        }
        assert_equal 60 [r get turns:n]
        $rd close
    }

    test {A MULTI whose queue runs long is one turn: nothing runs inside it} {
        r del turns:m
        set rd [redis_deferring_client]
        set q "*1\r\n\$5\r\nmulti\r\n"
        for {set i 0} {$i < 20} {incr i} {
            append q [turns_sleeps 1] "*3\r\n\$6\r\nappend\r\n\$7\r\nturns:m\r\n\$1\r\nx\r\n"
        }
        append q "*1\r\n\$4\r\nexec\r\n"
        $rd write $q
        $rd flush
        # Every GET sees none or all of the transaction's appends.
        set seen {}
        for {set i 0} {$i < 10} {incr i} {
            lappend seen [string length [r get turns:m]]
            after 20
        }
        assert_equal OK [$rd read]
        for {set i 0} {$i < 40} {incr i} { assert_equal QUEUED [$rd read] }
        set res [$rd read]
        assert_equal 40 [llength $res]
        foreach len $seen { assert {$len == 0 || $len == 20} }
        assert_equal 20 [string length [r get turns:m]]
        $rd close
    }

    test {The rest of a cut turn answers at once, not at the worker's next tick} {
        # A 2 ms sleep ends the turn; the PING after it runs in the next
        # one, and its reply goes out then, not when the loop next wakes
        # for its 100 ms tick (eight rounds of that took 792 ms).
        set rd [redis_deferring_client]
        set sleep "*3\r\n\$5\r\ndebug\r\n\$5\r\nsleep\r\n\$5\r\n0.002\r\n"
        set total 0
        for {set i 0} {$i < 8} {incr i} {
            set t0 [clock milliseconds]
            $rd write "${sleep}*1\r\n\$4\r\nping\r\n"
            $rd flush
            assert_equal OK [$rd read]
            assert_equal PONG [$rd read]
            incr total [expr {[clock milliseconds] - $t0}]
        }
        $rd close
        assert_lessthan $total 150
    }
}
