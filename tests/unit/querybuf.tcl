# Query buffers as CLIENT LIST shows them (qbuf, qbuf-free, argv-mem,
# tot-mem) and as the server manages them: the arguments of a partial
# request already parsed leave qbuf for argv-mem, an idle client's spare
# room is released after two seconds, a busy one is trimmed towards its
# recent peak, and client-query-buffer-limit closes a client whose
# unparsed input outgrows it (with a log line naming it).

# One field of the CLIENT LIST line of the client called name ("" when
# there is none).
proc qb_field {name field} {
    foreach line [split [r client list] "\r\n"] {
        if {[string match "* name=$name *" $line] && [regexp "(?:^| )$field=(\[^ \]*)" $line - v]} {
            return $v
        }
    }
    return ""
}

# The server's whole log (its stdout).
proc qb_log {} {
    set f [open [srv stdout] r]
    set data [read $f]
    close $f
    return $data
}

# qbuf + qbuf-free: what the query buffer has allocated.
proc qb_alloc {name} {
    expr {[qb_field $name qbuf] + [qb_field $name qbuf-free]}
}

# A client named name that has sent the bytes of data (and nothing else
# after its CLIENT SETNAME reply).
proc qb_partial_client {name data} {
    set c [redis_client]
    $c client setname $name
    $c write $data
    $c flush
    return $c
}

start_server {tags {querybuf}} {

    test {CLIENT INFO counts the running command's arguments as argv-mem} {
        set info [r client info]
        assert_match {* qbuf=26 qbuf-free=* argv-mem=10 multi-mem=0 *} $info
        assert_match {* cmd=client|info *} $info
        # tot-mem counts the arguments too.
        regexp {tot-mem=([0-9]+)} $info - tot
        regexp {qbuf-free=([0-9]+)} $info - free
        assert_morethan $tot [expr {26 + $free + 10}]
    }

    test {A partial request: parsed arguments leave qbuf for argv-mem} {
        # "set" and "x" are parsed, so is the header of the third argument:
        # only its 3 bytes are left in the buffer.
        set c [qb_partial_client part1 "*3\r\n\$3\r\nset\r\n\$1\r\nx\r\n\$10\r\nabc"]
        wait_for_condition 100 10 {[qb_field part1 qbuf] == 3} else {
            fail "qbuf=[qb_field part1 qbuf]"
        }
        assert_equal 4 [qb_field part1 argv-mem]
        set alloc [qb_alloc part1]
        assert_morethan $alloc 16000
        # The rest completes the command; argv-mem is back to 0.
        $c write "defghij\r\n"
        $c flush
        assert_equal OK [$c read]
        assert_equal abcdefghij [r get x]
        assert_equal 0 [qb_field part1 qbuf]
        assert_equal 0 [qb_field part1 argv-mem]
        assert {[qb_alloc part1] >= $alloc}
        $c close
    }

    test {A partial request: each step of the multibulk header} {
        set cases {
            "*3\r\n"                                  0 0
            "*3\r\n\$3\r\nset\r\n\$1\r\nx"            1 3
            "*3\r\n\$3\r\nset\r\n\$1\r\nx\r\n"        0 4
            "*3\r\n\$3\r\nset\r\n\$1\r\nx\r\n\$1"     2 4
            "set x"                                   5 0
        }
        set i 0
        foreach {data qbuf argv} $cases {
            set name "step[incr i]"
            set c [qb_partial_client $name $data]
            wait_for_condition 100 10 {[qb_field $name qbuf] == $qbuf && [qb_field $name argv-mem] == $argv} else {
                fail "[string map {"\r\n" \\r\\n} $data]: qbuf=[qb_field $name qbuf] argv-mem=[qb_field $name argv-mem], expected $qbuf and $argv"
            }
            $c close
        }
    }

    test {A blocked client's command counts as argv-mem} {
        set c [redis_deferring_client]
        $c client setname blk1
        $c read
        $c blpop qb-nolist 0
        $c flush
        wait_for_condition 100 10 {[qb_field blk1 cmd] eq "blpop"} else {
            fail "not blocked: [qb_field blk1 cmd]"
        }
        # blpop, qb-nolist, 0
        assert_equal 15 [qb_field blk1 argv-mem]
        r rpush qb-nolist v
        assert_equal {qb-nolist v} [$c read]
        assert_equal 0 [qb_field blk1 argv-mem]
        $c close
    }

    test {A big argument being read is in qbuf, the arguments before it in argv-mem} {
        set c [qb_partial_client big1 "*3\r\n\$3\r\nset\r\n\$1\r\ny\r\n\$40000\r\nabc"]
        wait_for_condition 100 10 {[qb_field big1 qbuf] == 3} else {
            fail "qbuf=[qb_field big1 qbuf]"
        }
        assert_equal 4 [qb_field big1 argv-mem]
        # Room for the whole argument is made at once.
        assert_morethan [qb_alloc big1] 39999
        $c write "[string repeat d 39997]\r\n"
        $c flush
        assert_equal OK [$c read]
        assert_equal 40000 [r strlen y]
        assert_equal 0 [qb_field big1 argv-mem]
        $c close
    }

    test {INFO clients: client_recent_max_input_buffer sees a partial big argument} {
        set c [qb_partial_client big2 "*3\r\n\$3\r\nset\r\n\$1\r\nz\r\n\$400000\r\n[string repeat z 1000]"]
        wait_for_condition 100 10 {[qb_field big2 qbuf] == 1000} else {
            fail "qbuf=[qb_field big2 qbuf]"
        }
        # Redis samples it from its cron: wait for a pass.
        wait_for_condition 100 20 {
            [getInfoProperty [r info clients] client_recent_max_input_buffer] >= 400000
        } else {
            fail "client_recent_max_input_buffer=[getInfoProperty [r info clients] client_recent_max_input_buffer]"
        }
        $c close
    }

    test {A command of 40000 arguments does not leave its argument arrays behind} {
        r exists a b
        r exists a b
        set before [s used_memory]
        r exists {*}[lrepeat 40000 k]
        set after [s used_memory]
        # Kept, the arrays of 40000 arguments would take 2 MB (32 B each, in
        # powers of two); the query buffer that read the command holds about
        # 1 MB until the cron trims it.
        assert {$after - $before < 1800000}
    }

    test {The initial query buffer is sized as Redis's (16 KiB to 32 KiB)} {
        set c [redis_client]
        $c client setname fresh
        set a [qb_alloc fresh]
        assert {$a >= 16384 && $a < 32768}
        $c close
    }

    test {An idle client's query buffer is released after two seconds} {
        set c [redis_client]
        $c client setname idle1
        assert_morethan [qb_alloc idle1] 0
        wait_for_condition 100 50 {
            [qb_field idle1 idle] >= 3 && [qb_alloc idle1] == 0
        } else {
            fail "not released: idle=[qb_field idle1 idle] qbuf=[qb_field idle1 qbuf] qbuf-free=[qb_field idle1 qbuf-free]"
        }
        # Still usable: the next request gets a new buffer.
        assert_equal PONG [$c ping]
        assert_morethan [qb_alloc idle1] 0
        $c close
    }

    test {Writes count as interaction: a subscriber that gets messages is not idle} {
        set c [redis_deferring_client]
        $c client setname sub1
        $c read
        $c subscribe qb-ch
        $c read
        set t [clock milliseconds]
        while {[clock milliseconds] - $t < 3500} {
            r publish qb-ch x
            $c read
            after 250
        }
        # Redis stamps the last interaction on every write too.
        assert_lessthan [qb_field sub1 idle] 2
        assert_morethan [qb_alloc sub1] 0
        $c close
    }

    test {Reads count as interaction: a client sending a request slowly is not idle} {
        set c [qb_partial_client slow1 "*2\r\n\$4\r\necho\r\n\$40\r\n"]
        for {set i 0} {$i < 8} {incr i} {
            after 400
            $c write "abcde"
            $c flush
        }
        assert_lessthan [qb_field slow1 idle] 2
        assert_equal 40 [qb_field slow1 qbuf]
        assert_equal 4 [qb_field slow1 argv-mem]
        $c write "\r\n"
        $c flush
        assert_equal [string repeat abcde 8] [$c read]
        $c close
    }

    test {A busy client's large query buffer shrinks towards its recent peak} {
        set c [redis_client]
        $c client setname busy1
        $c set x [string repeat A 400000]
        set orig [qb_alloc busy1]
        assert_morethan $orig 32768
        set t [clock milliseconds]
        while {[clock milliseconds] - $t < 1500} {
            $c set x [string repeat A 100]
            if {[qb_alloc busy1] < $orig} break
            after 10
        }
        set now [qb_alloc busy1]
        assert {$now > 0 && $now < $orig}
        $c close
    }

    test {client-query-buffer-limit: default, bounds, CONFIG SET} {
        assert_equal {client-query-buffer-limit 1073741824} [r config get client-query-buffer-limit]
        assert_error {*argument must be between 1048576 and *} {r config set client-query-buffer-limit 1048575}
        assert_error {*argument must be a memory value*} {r config set client-query-buffer-limit abc}
        r config set client-query-buffer-limit 2mb
        assert_equal {client-query-buffer-limit 2097152} [r config get client-query-buffer-limit]
        r config set client-query-buffer-limit 1gb
        # Redis 7.0 keeps no counter of these disconnections.
        assert_no_match {*client_query_buffer_limit_disconnections*} [r info stats]
    }

    test {client-query-buffer-limit closes the client with a log line naming it} {
        r config set client-query-buffer-limit 1mb
        set other [redis_client]
        set c [redis_client]
        $c client setname qlimit
        $c write "*3\r\n\$3\r\nset\r\n\$4\r\nbigk\r\n\$2000000\r\n[string repeat B 1100000]"
        catch {$c flush}
        assert_equal 1 [$c wait_closed 3000]
        assert_equal PONG [$other ping]
        assert_equal 0 [r exists bigk]
        r config set client-query-buffer-limit 1gb
        set pat {*Closing client that reached max query buffer length: id=* addr=* name=qlimit * qbuf=* argv-mem=7 * cmd=client|setname * (qbuf initial bytes: "BBBBBBBBBBBBBBBB*")*}
        wait_for_condition 50 20 {
            [string match $pat [qb_log]]
        } else {
            fail "no such line in the log:\n[::srv::tail_file [srv stdout] 5]"
        }
        $other close
    }

    test {client-query-buffer-limit counts only what is not yet parsed into arguments} {
        # Two arguments of 700 KB each: 1.4 MB in all, but never more
        # than one of them unparsed at a time.
        r config set client-query-buffer-limit 1mb
        set c [redis_client]
        assert_equal OK [$c mset qa [string repeat a 700000] qb [string repeat b 700000]]
        assert_equal 700000 [r strlen qa]
        assert_equal 700000 [r strlen qb]
        r config set client-query-buffer-limit 1gb
        r del qa qb
        $c close
    }
}

# Reply buffer figures (rbs, rbp) as Redis 7.0's cron sizes its reply
# buffer: 16 KiB for a new client, down to 1 KiB when idle, doubling back
# while replies fill it; DEBUG REPLYBUFFER tunes the cron.
start_server {tags {querybuf}} {

    test {Reply buffer: an idle client's shrinks to 1 KiB, a busy one's grows back to 16 KiB} {
        r config resetstat
        r debug replybuffer peak-reset-time 100
        set c [redis_client]
        $c client setname rb1
        wait_for_condition 20 100 {
            [qb_field rb1 rbs] >= 1024 && [qb_field rb1 rbs] < 2048
        } else {
            fail "idle client's reply buffer is [qb_field rb1 rbs]"
        }
        assert_morethan [getInfoProperty [r info stats] reply_buffer_shrinks] 0
        r set bigval [string repeat x 32768]
        r debug replybuffer peak-reset-time never
        wait_for_condition 20 100 {
            [string length [$c get bigval]] == 32768 && [qb_field rb1 rbs] >= 16384 && [qb_field rb1 rbs] < 32768
        } else {
            fail "busy client's reply buffer is [qb_field rb1 rbs]"
        }
        # A full buffer's peak is its size; it never goes past 16 KiB.
        assert_equal 16384 [qb_field rb1 rbp]
        assert_morethan [getInfoProperty [r info stats] reply_buffer_expands] 3
        r debug replybuffer peak-reset-time reset
        r config resetstat
        assert_equal 0 [getInfoProperty [r info stats] reply_buffer_shrinks]
        assert_equal 0 [getInfoProperty [r info stats] reply_buffer_expands]
        $c close
    }

    test {Reply buffer: RESIZING 0 freezes it} {
        r debug replybuffer resizing 0
        r debug replybuffer peak-reset-time 100
        set c [redis_client]
        $c client setname rb2
        after 500
        assert_equal 16384 [qb_field rb2 rbs]
        r debug replybuffer resizing 1
        wait_for_condition 20 100 {[qb_field rb2 rbs] == 1024} else {
            fail "reply buffer is [qb_field rb2 rbs]"
        }
        r debug replybuffer peak-reset-time reset
        $c close
    }

    test {DEBUG REPLYBUFFER errors} {
        assert_error {ERR unknown subcommand or wrong number of arguments for 'replybuffer'. Try DEBUG HELP.} \
            {r debug replybuffer foo 1}
        assert_error {ERR value is not an integer or out of range} {r debug replybuffer peak-reset-time x}
        assert_equal OK [r debug replybuffer peak-reset-time never]
        assert_equal OK [r debug replybuffer peak-reset-time reset]
    }
}
