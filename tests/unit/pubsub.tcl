# Pub/Sub: SUBSCRIBE/UNSUBSCRIBE/PSUBSCRIBE/PUNSUBSCRIBE/PUBLISH replies and
# counts, message and pmessage frames, RESP2 subscribed-mode rules, RESP3
# push messages, PUBSUB introspection, sharded Pub/Sub, and publishers and
# subscribers on different connections (goblin runs with --cores 2, so they
# live on different workers).

if {[is_goblin]} {
    set ::pubsub_server_args {--cores 2}
} else {
    set ::pubsub_server_args {}
}

proc ps_read_n {c n} {
    set out {}
    for {set i 0} {$i < $n} {incr i} {lappend out [$c read]}
    return $out
}

proc ps_subscribe {c cmd args} {
    $c $cmd {*}$args
    set counts {}
    foreach ch $args {
        set m [$c read]
        lappend counts [lindex $m 2]
    }
    return $counts
}

# Wait until PUBSUB NUMSUB / NUMPAT see the subscriptions (they are set up
# asynchronously from the point of view of another connection).
proc ps_wait_numsub {ch n} {
    wait_for_condition 200 10 {
        [lindex [r pubsub numsub $ch] 1] == $n
    } else {
        fail "numsub of $ch never reached $n"
    }
}

# Closed subscribers of earlier tests are dropped asynchronously.
proc ps_wait_clean {} {
    wait_for_condition 200 10 {
        [llength [r pubsub channels]] == 0 && [r pubsub numpat] == 0 &&
        [llength [r pubsub shardchannels]] == 0
    } else {
        fail "subscriptions of earlier tests still present"
    }
}

start_server [list tags {pubsub} args $::pubsub_server_args] {

    test {SUBSCRIBE replies and counts} {
        set c [redis_deferring_client]
        $c subscribe ch1 ch2 ch3
        assert_equal {{subscribe ch1 1} {subscribe ch2 2} {subscribe ch3 3}} [ps_read_n $c 3]
        # subscribing again to the same channel does not change the count
        $c subscribe ch1
        assert_equal {subscribe ch1 3} [$c read]
        $c unsubscribe ch2
        assert_equal {unsubscribe ch2 2} [$c read]
        $c unsubscribe nosuch
        assert_equal {unsubscribe nosuch 2} [$c read]
        $c unsubscribe
        assert_same_elements {{unsubscribe ch1 0} {unsubscribe ch3 1}} \
            [lmap m [ps_read_n $c 2] {lreplace $m 2 2 [expr {[lindex $m 1] eq "ch1" ? 0 : 1}]}]
        $c close
    }

    test {UNSUBSCRIBE / PUNSUBSCRIBE with no args when subscribed to none} {
        set c [redis_client]
        assert_equal "*3\r\n\$11\r\nunsubscribe\r\n\$-1\r\n:0\r\n" [$c rawcall unsubscribe]
        assert_equal "*3\r\n\$12\r\npunsubscribe\r\n\$-1\r\n:0\r\n" [$c rawcall punsubscribe]
        # still not in subscribed mode
        assert_equal OK [$c set pskey 1]
        $c close
    }

    test {PUBLISH returns the number of receivers; message frame} {
        set c [redis_deferring_client]
        ps_subscribe $c subscribe news
        ps_wait_numsub news 1
        assert_equal 1 [r publish news hello]
        assert_equal {message news hello} [$c read]
        assert_equal 0 [r publish other x]
        $c unsubscribe news
        assert_equal {unsubscribe news 0} [$c read]
        $c close
    }

    test {message frame raw bytes (RESP2)} {
        set c [redis_deferring_client]
        ps_subscribe $c subscribe rawch
        ps_wait_numsub rawch 1
        $c readraw 1
        r publish rawch "a b"
        set lines {}
        for {set i 0} {$i < 7} {incr i} {lappend lines [$c read]}
        assert_equal [list *3 {$7} message {$5} rawch {$3} {a b}] $lines
        $c close
    }

    test {PSUBSCRIBE / PUNSUBSCRIBE and pmessage frames} {
        set c [redis_deferring_client]
        $c psubscribe news.* h?llo
        assert_equal {{psubscribe news.* 1} {psubscribe h?llo 2}} [ps_read_n $c 2]
        wait_for_condition 200 10 {[r pubsub numpat] == 2} else {fail "numpat"}
        assert_equal 1 [r publish news.it ciao]
        assert_equal {pmessage news.* news.it ciao} [$c read]
        assert_equal 1 [r publish hello x]
        assert_equal {pmessage h?llo hello x} [$c read]
        assert_equal 0 [r publish news nope]
        $c punsubscribe news.*
        assert_equal {punsubscribe news.* 1} [$c read]
        $c punsubscribe
        assert_equal {punsubscribe h?llo 0} [$c read]
        $c close
    }

    test {Channel and pattern subscriptions share the count} {
        set c [redis_deferring_client]
        $c subscribe a1
        assert_equal {subscribe a1 1} [$c read]
        $c psubscribe a*
        assert_equal {psubscribe a* 2} [$c read]
        ps_wait_numsub a1 1
        # both match: the subscriber receives two frames
        assert_equal 2 [r publish a1 m]
        assert_same_elements {{message a1 m} {pmessage a* a1 m}} [ps_read_n $c 2]
        $c unsubscribe a1
        assert_equal {unsubscribe a1 1} [$c read]
        $c punsubscribe a*
        assert_equal {punsubscribe a* 0} [$c read]
        $c close
    }

    test {RESP2 subscribed mode rejects other commands} {
        set c [redis_deferring_client]
        ps_subscribe $c subscribe ch
        $c get foo
        catch {$c read} e
        assert_match {ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context} $e
        $c set foo bar
        catch {$c read} e
        assert_match {ERR Can't execute 'set'*} $e
        $c close
    }

    test {PING in RESP2 subscribed mode} {
        set c [redis_deferring_client]
        ps_subscribe $c subscribe ch
        $c readraw 1
        $c ping
        assert_equal [list *2 {$4} pong {$0} {}] [ps_read_n $c 5]
        $c ping hi
        assert_equal [list *2 {$4} pong {$2} hi] [ps_read_n $c 5]
        $c close
    }

    test {UNSUBSCRIBE of the last channel leaves subscribed mode} {
        set c [redis_deferring_client]
        ps_subscribe $c subscribe ch
        $c unsubscribe ch
        assert_equal {unsubscribe ch 0} [$c read]
        $c ping
        assert_equal PONG [$c read]
        $c set k v
        assert_equal OK [$c read]
        $c close
    }

    test {RESET leaves subscribed mode} {
        set c [redis_deferring_client]
        ps_subscribe $c subscribe ch
        $c reset
        assert_equal RESET [$c read]
        $c ping
        assert_equal PONG [$c read]
        $c close
    }

    test {RESP3: push messages and regular commands in subscribed mode} {
        set c [redis_deferring_client]
        $c hello 3
        $c read
        $c subscribe r3
        assert_equal {subscribe r3 1} [$c read]
        ps_wait_numsub r3 1
        r publish r3 hi
        $c readraw 1
        assert_equal [list >3 {$7} message {$2} r3 {$2} hi] [ps_read_n $c 7]
        # other commands are allowed in RESP3
        $c set k v
        assert_equal {+OK} [$c read]
        $c ping
        assert_equal {+PONG} [$c read]
        $c unsubscribe r3
        assert_equal [list >3 {$11} unsubscribe {$2} r3 :0] [ps_read_n $c 6]
        $c close
    }

    test {RESP3: subscribe confirmation is a push} {
        set c [redis_client]
        $c hello 3
        assert_equal ">3\r\n\$9\r\nsubscribe\r\n\$2\r\nzz\r\n:1\r\n" [$c rawcall subscribe zz]
        $c close
    }

    test {PUBSUB CHANNELS / NUMSUB / NUMPAT} {
        ps_wait_clean
        set c1 [redis_deferring_client]
        set c2 [redis_deferring_client]
        ps_subscribe $c1 subscribe foo bar
        ps_subscribe $c2 subscribe foo baz.x
        ps_subscribe $c2 psubscribe p*
        wait_for_condition 200 10 {
            [lindex [r pubsub numsub foo] 1] == 2 && [r pubsub numpat] == 1
        } else {fail "subscriptions not visible"}
        assert_equal {bar baz.x foo} [lsort [r pubsub channels]]
        assert_equal {baz.x} [r pubsub channels baz*]
        assert_equal {} [r pubsub channels nomatch*]
        assert_equal {foo 2 bar 1 baz.x 1 none 0} [r pubsub numsub foo bar baz.x none]
        assert_equal {} [r pubsub numsub]
        assert_equal 1 [r pubsub numpat]
        $c1 close
        $c2 close
        wait_for_condition 200 10 {
            [r pubsub numpat] == 0 && [llength [r pubsub channels]] == 0
        } else {fail "subscriptions not dropped on close"}
    }

    test {PUBSUB errors} {
        assert_error {ERR unknown subcommand*} {r pubsub nosuch}
        assert_error {ERR wrong number of arguments for 'publish' command} {r publish onlychannel}
        assert_error {ERR wrong number of arguments for 'subscribe' command} {r subscribe}
        assert_error {ERR wrong number of arguments for 'psubscribe' command} {r psubscribe}
        assert_error {ERR wrong number of arguments for 'pubsub|numpat' command} {r pubsub numpat x}
    }

    test {SSUBSCRIBE / SPUBLISH / SUNSUBSCRIBE} {
        ps_wait_clean
        set c [redis_deferring_client]
        $c ssubscribe sa sb
        assert_equal {{ssubscribe sa 1} {ssubscribe sb 2}} [ps_read_n $c 2]
        wait_for_condition 200 10 {
            [lindex [r pubsub shardnumsub sa] 1] == 1
        } else {fail "shard subscription not visible"}
        assert_equal {sa sb} [lsort [r pubsub shardchannels]]
        assert_equal {sa} [r pubsub shardchannels sa*]
        assert_equal {sa 1 sb 1 sc 0} [r pubsub shardnumsub sa sb sc]
        # sharded and classic channels are separate namespaces
        assert_equal 0 [r publish sa x]
        assert_equal {} [r pubsub channels]
        assert_equal 1 [r spublish sa hello]
        assert_equal {smessage sa hello} [$c read]
        $c sunsubscribe sa
        assert_equal {sunsubscribe sa 1} [$c read]
        $c sunsubscribe
        assert_equal {sunsubscribe sb 0} [$c read]
        assert_equal 0 [r spublish sa y]
        $c ping
        assert_equal PONG [$c read]
        $c close
    }

    test {SSUBSCRIBE count is separate from SUBSCRIBE count} {
        set c [redis_deferring_client]
        $c subscribe x1
        assert_equal {subscribe x1 1} [$c read]
        $c ssubscribe y1
        assert_equal {ssubscribe y1 1} [$c read]
        $c unsubscribe x1
        assert_equal {unsubscribe x1 0} [$c read]
        # still in subscribed mode because of the shard channel
        $c get foo
        catch {$c read} e
        assert_match {ERR Can't execute 'get'*} $e
        $c close
    }

    test {SUNSUBSCRIBE with no args when subscribed to none} {
        set c [redis_client]
        assert_equal "*3\r\n\$12\r\nsunsubscribe\r\n\$-1\r\n:0\r\n" [$c rawcall sunsubscribe]
        $c close
    }

    test {Publishers and subscribers on many connections} {
        set subs {}
        for {set i 0} {$i < 6} {incr i} {
            set c [redis_deferring_client]
            ps_subscribe $c subscribe multi
            lappend subs $c
        }
        ps_wait_numsub multi 6
        set pubs {}
        for {set i 0} {$i < 3} {incr i} {lappend pubs [redis_client]}
        set n 0
        for {set i 0} {$i < 50} {incr i} {
            set p [lindex $pubs [expr {$i % 3}]]
            assert_equal 6 [$p publish multi "m$i"]
        }
        foreach c $subs {
            for {set i 0} {$i < 50} {incr i} {
                assert_equal [list message multi "m$i"] [$c read]
            }
            $c close
        }
        foreach p $pubs {$p close}
    }

    test {Many subscribers get every message in order (pipelined publish)} {
        ps_wait_clean
        set subs {}
        for {set i 0} {$i < 10} {incr i} {
            set c [redis_deferring_client]
            ps_subscribe $c psubscribe ord.*
            lappend subs $c
        }
        # NUMPAT counts distinct patterns
        assert_equal 1 [r pubsub numpat]
        set p [redis_deferring_client]
        for {set i 0} {$i < 500} {incr i} {$p publish ord.x $i}
        for {set i 0} {$i < 500} {incr i} {assert_equal 10 [$p read]}
        foreach c $subs {
            for {set i 0} {$i < 500} {incr i} {
                assert_equal [list pmessage ord.* ord.x $i] [$c read]
            }
            $c close
        }
        $p close
    }

    test {A subscriber that stays behind keeps a buffer the size of its backlog} {
        # 12 MiB behind, then in step for 48 MiB more: the output buffer
        # holds what waits, not every byte sent since it was last empty.
        ps_wait_clean
        r config set client-output-buffer-limit {pubsub 0 0 0}
        set c [redis_deferring_client]
        $c client setname lagger
        assert_equal OK [$c read]
        ps_subscribe $c subscribe lag
        ps_wait_numsub lag 1
        set payload [string repeat x 16384]
        set p [redis_deferring_client]
        for {set i 0} {$i < 768} {incr i} {$p publish lag $payload}
        ps_read_n $p 768
        set peak 0
        for {set i 0} {$i < 3072} {incr i 64} {
            for {set j 0} {$j < 64} {incr j} {$p publish lag $payload}
            ps_read_n $p 64
            ps_read_n $c 64
            if {[is_goblin] && $i % 512 == 0} {
                regexp {tot-mem=([0-9]+)} [lsearch -inline [split [r client list] "\n"] *name=lagger*] -> mem
                if {$mem > $peak} {set peak $mem}
            }
        }
        for {set i 0} {$i < 768} {incr i} {assert_equal [list message lag $payload] [$c read]}
        $c close
        $p close
        r config set client-output-buffer-limit {pubsub 32mb 8mb 60}
        if {[is_goblin]} { assert_range $peak 1 [expr {32 << 20}] }
    }

    test {PUBLISH inside MULTI} {
        set c [redis_deferring_client]
        ps_subscribe $c subscribe tx
        ps_wait_numsub tx 1
        r multi
        r publish tx a
        r publish tx b
        assert_equal {1 1} [r exec]
        assert_equal {{message tx a} {message tx b}} [ps_read_n $c 2]
        $c close
    }

    test {Binary channel names and payloads} {
        set c [redis_deferring_client]
        set ch "b\x00in\r\n"
        ps_subscribe $c subscribe $ch
        ps_wait_numsub $ch 1
        assert_equal 1 [r publish $ch "\x00\xff\r\n"]
        assert_equal [list message $ch "\x00\xff\r\n"] [$c read]
        $c close
    }
}

# Publishers and subscribers on one worker: a message goes straight into the
# subscriber's output rather than through the worker's queue.
if {[is_goblin]} {
    set ::pubsub_one_worker {--cores 1}
} else {
    set ::pubsub_one_worker {}
}

start_server [list tags {pubsub} args $::pubsub_one_worker] {

    test {One worker: every publisher's messages arrive in its order, channel before pattern} {
        set c [redis_deferring_client]
        ps_subscribe $c subscribe one
        ps_subscribe $c psubscribe o*
        ps_wait_numsub one 1
        set p1 [redis_deferring_client]
        set p2 [redis_deferring_client]
        for {set i 0} {$i < 200} {incr i} {
            $p1 publish one a$i
            $p2 publish one b$i
        }
        for {set i 0} {$i < 200} {incr i} {
            assert_equal 2 [$p1 read]
            assert_equal 2 [$p2 read]
        }
        set next(a) 0
        set next(b) 0
        for {set i 0} {$i < 400} {incr i} {
            set m [$c read]
            assert_equal message [lindex $m 0]
            set body [lindex $m 2]
            set who [string index $body 0]
            assert_equal $who$next($who) $body
            assert_equal [list pmessage o* one $body] [$c read]
            incr next($who)
        }
        # The subscriber's own commands are answered after what came before.
        $p1 publish one last
        assert_equal 2 [$p1 read]
        $c ping
        assert_equal {message one last} [$c read]
        assert_equal {pmessage o* one last} [$c read]
        assert_equal {pong {}} [$c read]
        foreach x [list $c $p1 $p2] {$x close}
    }

    test {One worker: a subscriber over its hard limit is closed, the others are served} {
        ps_wait_clean
        r config set client-output-buffer-limit {pubsub 256kb 0 0}
        set slow [redis_deferring_client]
        ps_subscribe $slow subscribe full
        set fast [redis_deferring_client]
        ps_subscribe $fast subscribe full
        ps_wait_numsub full 2
        set p [redis_deferring_client]
        set msg [string repeat m 10000]
        for {set i 0} {$i < 500} {incr i 10} {
            for {set j 0} {$j < 10} {incr j} {$p publish full $msg}
            ps_read_n $p 10
            for {set j 0} {$j < 10} {incr j} {assert_equal [list message full $msg] [$fast read]}
        }
        assert_equal 1 [$slow wait_closed 3000]
        $p publish full last
        assert_equal 1 [$p read]
        assert_equal {message full last} [$fast read]
        $fast close
        $p close
        r config set client-output-buffer-limit {pubsub 32mb 8mb 60}
    }
}
