# Scripts that run long: busy-reply-threshold (alias lua-time-limit); -BUSY
# for every other client once a script is past it, allow_busy commands
# answering, a command sent before the threshold answered at it; SCRIPT
# KILL (NOTBUSY, killed script's error, UNKILLABLE after a write); MULTI /
# EXEC, pipelines and RESP3 while busy; SHUTDOWN without NOSAVE refused,
# SHUTDOWN NOSAVE stopping the server. With several workers, several
# connections: some share the script's worker, some do not.

if {[is_goblin]} {
    set ::busy_server_args {--cores 2}
} else {
    set ::busy_server_args {}
}

set ::busy_err {BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.}

# Eight clients: spread over the workers by the kernel.
proc busy_clients {} {
    set cs {}
    for {set i 0} {$i < 8} {incr i} {lappend cs [redis_client]}
    return $cs
}

# Wait until a script started on $rd is busy (the default client sees it).
proc busy_wait {} {
    wait_for_condition 200 10 {
        [catch {r ping} e] && [string match {BUSY*} $e]
    } else {
        fail "the script never turned busy"
    }
}

proc busy_kill {rd} {
    assert_equal OK [r script kill]
    assert_error {ERR Script killed by user with SCRIPT KILL... script: *, on @user_script:1.} {$rd read}
}

start_server [list tags {scripting busy} args $::busy_server_args] {

    test {busy-reply-threshold and its alias lua-time-limit} {
        assert_equal {busy-reply-threshold 5000} [r config get busy-reply-threshold]
        r config set lua-time-limit 100
        assert_equal {busy-reply-threshold 100} [r config get busy-reply-threshold]
        assert_equal {lua-time-limit 100} [r config get lua-time-limit]
        assert_error {*argument*} {r config set busy-reply-threshold -1}
    }

    test {SCRIPT KILL with no script running: NOTBUSY} {
        assert_error {NOTBUSY No scripts in execution right now.} {r script kill}
    }

    test {Every other client gets -BUSY from a busy script; allowed commands answer} {
        set cs [busy_clients]
        r set x 1
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        busy_wait
        foreach c $cs {
            assert_error $::busy_err {$c get x}
            assert_error $::busy_err {$c ping}
            assert_error $::busy_err {$c set x 2}
            assert_error $::busy_err {$c eval {return 1} 0}
            assert_error $::busy_err {$c info}
            assert_error $::busy_err {$c client id}
            assert_error $::busy_err {$c config set busy-reply-threshold 10}
            # Errors found before the busy check come first.
            assert_error {ERR unknown command*} {$c nosuchcommand}
            assert_error {ERR wrong number of arguments for 'get' command} {$c get}
            # allow_busy commands run.
            assert_equal OK [$c multi]
            assert_equal OK [$c discard]
            assert_equal OK [$c watch x]
            assert_equal OK [$c unwatch]
            assert_error {ERR AUTH <password> called without any password configured*} {$c auth foo}
            assert_equal RESET [$c reset]
            assert_equal 2 [dict get [$c hello 2] proto]
        }
        busy_kill $rd
        foreach c $cs {
            assert_equal 1 [$c get x]
            assert_equal PONG [$c ping]
        }
        assert_equal 1 [r get x]
        assert_equal 1 [r eval {return 1} 0]
    }

    test {A command sent before the threshold gets -BUSY at the threshold} {
        r config set busy-reply-threshold 400
        set rd [redis_deferring_client]
        set cs [busy_clients]
        $rd eval {while true do end} 0
        after 50
        set t0 [clock milliseconds]
        foreach c $cs {
            assert_error $::busy_err {$c get x}
        }
        assert_morethan [expr {[clock milliseconds] - $t0}] 200
        busy_kill $rd
        r config set busy-reply-threshold 100
        assert_equal 1 [r get x]
    }

    test {SCRIPT KILL sent before the threshold kills the script at it} {
        r config set busy-reply-threshold 300
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        after 30
        busy_kill $rd
        r config set busy-reply-threshold 100
        assert_equal PONG [r ping]
    }

    test {A script killed inside pcall stays killed} {
        set rd [redis_deferring_client]
        $rd eval {local ok = pcall(function() while true do end end) while true do end} 0
        busy_wait
        busy_kill $rd
    }

    test {A pipeline sent while busy: one -BUSY per command, MULTI queue refused} {
        set cs [busy_clients]
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        busy_wait
        foreach c $cs {
            $c write "PING\r\n*2\r\n\$3\r\nGET\r\n\$1\r\nx\r\nMULTI\r\nSET a b\r\nEXEC\r\n"
            $c flush
            assert_equal "-$::busy_err\r\n-$::busy_err\r\n+OK\r\n-$::busy_err\r\n-EXECABORT Transaction discarded because of: $::busy_err\r\n" \
                [$c read_all 150]
        }
        busy_kill $rd
    }

    test {MULTI while busy: queued commands refused, the transaction aborted} {
        set c [redis_client]
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        busy_wait
        assert_equal OK [$c multi]
        assert_error $::busy_err {$c incr counter}
        busy_kill $rd
        assert_error {EXECABORT Transaction discarded because of previous errors.} {$c exec}
        # A transaction opened before: EXEC refused while busy.
        assert_equal OK [$c multi]
        assert_equal QUEUED [$c incr counter]
        $rd eval {while true do end} 0
        busy_wait
        assert_error "EXECABORT Transaction discarded because of: $::busy_err" {$c exec}
        busy_kill $rd
        assert_equal {} [r get counter]
    }

    test {RESP3 clients get the same -BUSY} {
        set c [redis_client]
        $c hello 3
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        busy_wait
        assert_equal "-$::busy_err\r\n" [$c rawcall get x]
        assert_equal 3 [dict get [$c hello 3] proto]
        busy_kill $rd
        assert_equal 1 [$c get x]
    }

    test {WATCH while busy: the script's later write dirties the transaction} {
        r set w 0
        set c [redis_client]
        set rd [redis_deferring_client]
        $rd eval {local n, i = tonumber(ARGV[1]), 0 while i < n do i = i + 1 end redis.call('set','w','2') return i} 0 200000000
        busy_wait
        assert_equal OK [$c watch w]
        assert_equal 200000000 [$rd read]
        assert_equal OK [$c multi]
        assert_equal QUEUED [$c set w 3]
        assert_equal {} [$c exec]
        assert_equal 2 [r get w]
    }

    test {A script that wrote cannot be killed; it ends on its own} {
        set rd [redis_deferring_client]
        $rd eval {redis.call('set','k','v') local n, i = tonumber(ARGV[1]), 0 while i < n do i = i + 1 end return i} 0 100000000
        busy_wait
        assert_error {UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.} {r script kill}
        assert_equal 100000000 [$rd read]
        assert_equal v [r get k]
        assert_error {NOTBUSY*} {r script kill}
    }

    test {A blocked client times out only once the script has ended} {
        r del nolist
        set cs {}
        for {set i 0} {$i < 4} {incr i} {
            set bl [redis_deferring_client]
            $bl blpop nolist 0.2
            lappend cs $bl
        }
        wait_for_condition 100 5 {[s blocked_clients] == 4} else {fail "clients not blocked"}
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        busy_wait
        after 500
        foreach bl $cs {
            assert_equal {} [$bl read_all 20]
        }
        busy_kill $rd
        foreach bl $cs {
            assert_equal "*-1\r\n" [$bl read_all 300]
        }
    }

    test {Connections opened while busy are served: -BUSY, allowed commands} {
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        busy_wait
        set cs [busy_clients]
        foreach c $cs {
            assert_error $::busy_err {$c get x}
            assert_equal OK [$c multi]
            assert_equal OK [$c discard]
        }
        busy_kill $rd
        foreach c $cs {assert_equal 1 [$c get x]}
    }

    test {CLIENT PAUSE: -BUSY comes first while busy} {
        set c [redis_client]
        r client pause 5000 write
        set rd [redis_deferring_client]
        $rd eval_ro {while true do end} 0
        busy_wait
        assert_error $::busy_err {$c set x 2}
        assert_error $::busy_err {$c client unpause}
        assert_equal OK [$c multi]
        assert_equal OK [$c discard]
        busy_kill $rd
        r client unpause
        assert_equal OK [$c set x 1]
    }

    test {A short script is never busy} {
        assert_equal 10 [r eval {local i = 0 while i < 10 do i = i + 1 end return i} 0]
        assert_error {NOTBUSY*} {r script kill}
    }
}

start_server [list tags {scripting busy} args $::busy_server_args] {
    test {SHUTDOWN refused while busy, SHUTDOWN NOSAVE stops the server} {
        r config set busy-reply-threshold 100
        set cs [busy_clients]
        set rd [redis_deferring_client]
        $rd eval {redis.call('set','k','v') while true do end} 0
        busy_wait
        assert_error {UNKILLABLE*} {r script kill}
        foreach c $cs {
            assert_error $::busy_err {$c shutdown}
            assert_error $::busy_err {$c shutdown save}
            assert_error {ERR No shutdown in progress.} {$c shutdown abort}
            assert_error $::busy_err {$c get k}
        }
        server_expect_exit
        catch {r shutdown nosave}
        wait_for_condition 100 50 {
            ![server_is_alive]
        } else {
            fail "the server did not exit"
        }
    }
}

# One worker: every connection shares the script's thread, which serves
# them from the script's hook.
if {[is_goblin]} {
    set ::busy_one_worker {--cores 1}
} else {
    set ::busy_one_worker {}
}

start_server [list tags {scripting busy} args $::busy_one_worker] {
    test {A reply left to write when a script turned busy still goes out} {
        r config set busy-reply-threshold 100
        # Both commands held by a pause, run in one go when it ends, PING first:
        # its reply waits to be written when the script begins.
        set a [redis_deferring_client]
        set rd [redis_deferring_client]
        r client pause 300 all
        $a ping
        $a flush
        after 50
        $rd eval {while true do end} 0
        $rd flush
        assert_equal "+PONG\r\n" [$a read_all 2000]
        busy_wait
        busy_kill $rd
    }

    test {A large reply keeps going out while a script is busy} {
        r set big [string repeat x 33554432]
        set a [redis_deferring_client]
        $a timeout 10000
        $a get big
        $a flush
        after 100
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        busy_wait
        # The whole reply arrives while the script still runs.
        assert_equal 33554432 [string length [$a read]]
        assert_error $::busy_err {r get big}
        busy_kill $rd
        r del big
    }
}
