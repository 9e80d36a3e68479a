# CLIENT PAUSE / CLIENT UNPAUSE. Under WRITE, write and may-replicate
# commands (PUBLISH, SPUBLISH, PFCOUNT, scripts not flagged no-writes) and
# EXEC of a transaction holding one wait; reads, read-only scripts and
# read-only transactions pass. ALL holds every command of a normal client.
# Errors found before the pause check (unknown command, arity, NOPERM,
# READONLY) come at once. Held clients count as blocked (INFO
# blocked_clients, CLIENT LIST flag b and the held command) and run in the
# order they were held when the pause ends (CLIENT UNPAUSE or its timeout),
# after the clients a released write woke. A second CLIENT PAUSE keeps the
# more restrictive mode and the later end. Expiry and eviction are
# suspended meanwhile; on a replica the primary's stream is read but not
# applied. goblin runs this with several workers, so held clients sit on
# different ones.

proc pause_wait_blocked {n} {
    wait_for_condition 300 10 {
        [s blocked_clients] == $n
    } else {
        fail "expected $n blocked clients, INFO says [s blocked_clients]"
    }
}

# A failed test must not leave the server paused (nor the default client
# waiting for a reply that comes later): unpause from a fresh client and
# reconnect the default one.
proc pause_recover {} {
    set u [redis_client]
    catch {$u client unpause}
    $u close
    ::srv::connect_default [::srv::current]
}

proc pause_test {name body} {
    uplevel 1 [list test $name "try {$body} on error {e o} {pause_recover; return -options \$o \$e}"]
}

proc pause_tests {} {
    pause_test {CLIENT PAUSE argument errors} {
        assert_error {ERR timeout is not an integer or out of range} {r client pause abc}
        assert_error {ERR timeout is negative} {r client pause -1}
        assert_error {ERR timeout is negative} {r client pause -1 write}
        # The mode is checked before the timeout.
        assert_error {ERR CLIENT PAUSE mode must be WRITE or ALL} {r client pause 10 foo}
        assert_error {ERR CLIENT PAUSE mode must be WRITE or ALL} {r client pause abc foo}
        assert_error {ERR unknown subcommand or wrong number of arguments for 'pause'*} {r client pause 10 write x}
        assert_error {ERR wrong number of arguments for 'client|pause' command} {r client pause}
        assert_error {ERR wrong number of arguments for 'client|unpause' command} {r client unpause x}
        assert_equal OK [r client unpause]
        # A zero timeout is a pause that is over at once.
        assert_equal OK [r client pause 0 write]
        assert_equal OK [r set zero 1]
        # An end past the clock's range wraps to a time long gone.
        assert_equal OK [r client pause 9223372036854775807 write]
        assert_equal OK [r set zero 2]
    }

    pause_test {CLIENT PAUSE WRITE: reads pass} {
        r set foo bar
        r client pause 100000 write
        set rd [redis_deferring_client]
        $rd get foo
        $rd ping
        $rd exists foo
        $rd ttl foo
        assert_equal bar [$rd read]
        assert_equal PONG [$rd read]
        assert_equal 1 [$rd read]
        assert_equal -1 [$rd read]
        assert_equal 0 [s blocked_clients]
        r client unpause
        $rd close
    }

    pause_test {CLIENT PAUSE WRITE holds writes; a held client is blocked (INFO, CLIENT LIST)} {
        r del foo
        r client pause 100000 write
        set rd [redis_deferring_client]
        $rd client setname held
        assert_equal OK [$rd read]
        $rd set foo bar
        pause_wait_blocked 1
        set line [lsearch -inline [split [r client list] "\n"] "*name=held *"]
        assert_match {* flags=b *} $line
        assert_match {* cmd=set *} $line
        assert_equal {} [r get foo]
        r client unpause
        assert_equal OK [$rd read]
        assert_equal bar [r get foo]
        pause_wait_blocked 0
        $rd close
    }

    pause_test {CLIENT PAUSE WRITE holds may-replicate commands: PFCOUNT, PUBLISH, SPUBLISH} {
        r del hll
        r pfadd hll a b
        r client pause 100000 write
        set rd [redis_deferring_client]
        $rd pfcount hll
        set rd2 [redis_deferring_client]
        $rd2 publish ch msg
        set rd3 [redis_deferring_client]
        $rd3 spublish ch msg
        pause_wait_blocked 3
        # PFCOUNT is also a read: an ALL-free read of the key passes.
        assert_equal 1 [r exists hll]
        r client unpause
        assert_equal 2 [$rd read]
        assert_equal 0 [$rd2 read]
        assert_equal 0 [$rd3 read]
        $rd close
        $rd2 close
        $rd3 close
    }

    pause_test {CLIENT PAUSE WRITE: read-only transactions pass} {
        r set foo bar
        r client pause 100000 write
        set rr [redis_client]
        assert_equal OK [$rr multi]
        assert_equal QUEUED [$rr ping]
        assert_equal QUEUED [$rr get foo]
        assert_equal {PONG bar} [$rr exec]
        assert_equal 0 [s blocked_clients]
        r client unpause
        $rr close
    }

    pause_test {CLIENT PAUSE WRITE holds EXEC of a transaction with a write} {
        r del foo
        set rd [redis_deferring_client]
        $rd multi
        assert_equal OK [$rd read]
        $rd set foo bar
        assert_equal QUEUED [$rd read]
        r client pause 100000 write
        $rd exec
        pause_wait_blocked 1
        assert_equal {} [r get foo]
        r client unpause
        assert_equal OK [$rd read]
        assert_equal bar [r get foo]
        $rd close
    }

    pause_test {CLIENT PAUSE WRITE holds a write command before it is queued} {
        r del foo
        r client pause 100000 write
        set rd [redis_deferring_client]
        $rd multi
        assert_equal OK [$rd read]
        $rd get foo
        assert_equal QUEUED [$rd read]
        $rd set foo bar
        pause_wait_blocked 1
        # A command after it waits behind it.
        $rd get foo
        after 100
        r client unpause
        assert_equal QUEUED [$rd read]
        assert_equal QUEUED [$rd read]
        $rd exec
        assert_equal {{} OK bar} [$rd read]
        $rd close
    }

    pause_test {CLIENT PAUSE WRITE holds scripts not flagged no-writes} {
        r function load replace {#!lua name=pauselib
            redis.register_function('rw', function() return 2 end)
        }
        r client pause 100000 write
        set rd [redis_deferring_client]
        $rd eval {return 1} 0
        set rd2 [redis_deferring_client]
        $rd2 eval "#!lua\nreturn 1" 0
        set rd3 [redis_deferring_client]
        $rd3 fcall rw 0
        pause_wait_blocked 3
        r client unpause
        assert_equal 1 [$rd read]
        assert_equal 1 [$rd2 read]
        assert_equal 2 [$rd3 read]
        $rd close
        $rd2 close
        $rd3 close
        r function delete pauselib
    }

    pause_test {CLIENT PAUSE WRITE lets read-only scripts run} {
        r set x y
        r function load replace {#!lua name=pauselib
            redis.register_function{function_name='ro', callback=function() return 'hello' end, flags={'no-writes'}}
        }
        r client pause 100000 write
        set rr [redis_client]
        # Not yet in the script cache, then cached.
        assert_equal {unique one} [$rr eval "#!lua flags=no-writes\nreturn 'unique one'" 0]
        assert_equal {unique one} [$rr eval "#!lua flags=no-writes\nreturn 'unique one'" 0]
        assert_equal {y two} [$rr eval_ro "return redis.call('GeT', KEYS\[1\])..' two'" 1 x]
        set sha [$rr script load "#!lua flags=no-writes\nreturn 3"]
        assert_equal 3 [$rr evalsha $sha 0]
        assert_equal 3 [$rr evalsha_ro $sha 0]
        assert_equal hello [$rr fcall ro 0]
        assert_equal hello [$rr fcall_ro ro 0]
        assert_equal 0 [s blocked_clients]
        r client unpause
        $rr close
        r function delete pauselib
    }

    pause_test {CLIENT PAUSE WRITE: scripts inside transactions} {
        r client pause 100000 write
        set rr [redis_client]
        assert_equal OK [$rr multi]
        assert_equal QUEUED [$rr eval "#!lua flags=no-writes\nreturn 12" 0]
        assert_equal QUEUED [$rr eval "#!lua flags=no-writes\nreturn 13" 0]
        assert_equal {12 13} [$rr exec]
        r client unpause
        $rr close

        set rd [redis_deferring_client]
        $rd multi
        assert_equal OK [$rd read]
        $rd eval "#!lua\nreturn 12" 0
        assert_equal QUEUED [$rd read]
        set rd2 [redis_deferring_client]
        $rd2 multi
        assert_equal OK [$rd2 read]
        $rd2 eval {return 13} 0
        assert_equal QUEUED [$rd2 read]
        r client pause 100000 write
        $rd exec
        $rd2 exec
        pause_wait_blocked 2
        r client unpause
        assert_equal 12 [$rd read]
        assert_equal 13 [$rd2 read]
        $rd close
        $rd2 close
    }

    pause_test {May-replicate commands are refused in read-only scripts} {
        assert_error {ERR Write commands are not allowed from read-only scripts*} {
            r eval_ro {return redis.call('publish','ch','msg')} 0
        }
        assert_error {ERR Write commands are not allowed from read-only scripts*} {
            r eval "#!lua flags=no-writes\nreturn redis.call('publish','ch','msg')" 0
        }
        assert_equal 0 [r eval {return redis.call('publish','ch','msg')} 0]
    }

    pause_test {Errors found before the pause check are answered at once} {
        foreach mode {write all} {
            # Under ALL this client is held too: that pause ends by itself.
            r client pause [expr {$mode eq "all" ? 500 : 100000}] $mode
            set rr [redis_client]
            assert_error {ERR wrong number of arguments for 'set' command} {$rr set foo}
            assert_error {ERR wrong number of arguments for 'get' command} {$rr get}
            assert_error {ERR unknown command 'foobar', with args beginning with: 'x' } {$rr foobar x}
            assert_error {ERR unknown subcommand 'nope'. Try CLIENT HELP.} {$rr client nope}
            r client unpause
            $rr close
        }
        # So do NOPERM (no log entry is made twice) and NOAUTH.
        r acl setuser pauser on nopass +get +set ~*
        r acl setuser pauser -set
        r acl log reset
        r set foo bar
        r client pause 100000 write
        set rr [redis_client]
        $rr auth pauser x
        assert_error {NOPERM this user has no permissions to run the 'set' command} {$rr set foo bar}
        assert_equal bar [$rr get foo]
        r client unpause
        assert_equal 1 [dict get [lindex [r acl log] 0] count]
        $rr close
        r acl deluser pauser
        r acl log reset
        # Errors of the command itself come when it runs.
        r client pause 100000 write
        set rd [redis_deferring_client]
        $rd set foo bar badopt
        pause_wait_blocked 1
        r client unpause
        assert_error {ERR syntax error} {$rd read}
        $rd close
    }

    pause_test {Held clients run in the order they were held at CLIENT UNPAUSE} {
        r del ord
        r client pause 100000 write
        set cs {}
        for {set i 0} {$i < 8} {incr i} {
            set c [redis_deferring_client]
            $c rpush ord $i
            lappend cs $c
            pause_wait_blocked [expr {$i + 1}]
        }
        r client unpause
        set n 0
        foreach c $cs {
            assert_equal [incr n] [$c read]
            $c close
        }
        assert_equal {0 1 2 3 4 5 6 7} [r lrange ord 0 -1]
    }

    pause_test {Held clients run in order when the pause times out; pipelines keep their order} {
        r del ord
        r client pause 1000 write
        set cs {}
        for {set i 0} {$i < 6} {incr i} {
            set c [redis_deferring_client]
            $c rpush ord a$i
            $c get foo
            $c rpush ord b$i
            lappend cs $c
            pause_wait_blocked [expr {$i + 1}]
        }
        foreach c $cs {
            set n [$c read]
            $c read
            assert_equal [expr {$n + 1}] [$c read]
            $c close
        }
        assert_equal {a0 b0 a1 b1 a2 b2 a3 b3 a4 b4 a5 b5} [r lrange ord 0 -1]
    }

    pause_test {CLIENT PAUSE ALL (the default mode) holds reads too, and ends by itself} {
        r set foo bar
        set rd [redis_deferring_client]
        r client pause 500
        $rd get foo
        $rd ping
        set t0 [clock milliseconds]
        assert_equal {} [$rd read_all 200]
        assert_equal bar [$rd read]
        assert_equal PONG [$rd read]
        assert_morethan [expr {[clock milliseconds] - $t0}] 250
        $rd close
    }

    pause_test {CLIENT PAUSE ALL holds MULTI and queued commands} {
        set rd [redis_deferring_client]
        r client pause 400 all
        $rd multi
        $rd ping
        $rd exec
        assert_equal {} [$rd read_all 200]
        assert_equal OK [$rd read]
        assert_equal QUEUED [$rd read]
        assert_equal PONG [$rd read]
        $rd close
    }

    pause_test {A second CLIENT PAUSE keeps the later end} {
        r del foo
        r client pause 1000 write
        r client pause 10 write
        set rd [redis_deferring_client]
        $rd set foo bar
        assert_equal {} [$rd read_all 300]
        assert_equal 1 [s blocked_clients]
        r client unpause
        assert_equal OK [$rd read]
        $rd close
    }

    pause_test {A second CLIENT PAUSE keeps the more restrictive mode} {
        r set foo bar
        set rd [redis_deferring_client]
        r client pause 500 write
        # ALL wins over WRITE; the end stays the later one.
        r client pause 0 all
        $rd get foo
        assert_equal {} [$rd read_all 200]
        assert_equal bar [$rd read]
        # The pause is over: a later WRITE pause replaces nothing.
        r client pause 100000 write
        $rd get foo
        assert_equal bar [$rd read]
        r client unpause
        $rd close
    }

    pause_test {CLIENT PAUSE inside a transaction starts after EXEC} {
        r del foo1 foo2 foo3
        r multi
        r set foo1 bar
        r client pause 100000 write
        r set foo2 bar
        assert_equal {OK OK OK} [r exec]
        set rd [redis_deferring_client]
        $rd set foo3 bar
        pause_wait_blocked 1
        assert_equal bar [r get foo1]
        assert_equal bar [r get foo2]
        assert_equal {} [r get foo3]
        r client unpause
        assert_equal OK [$rd read]
        $rd close
    }

    pause_test {CLIENT PAUSE: a client blocked on a key before the pause is served after it} {
        r del blist
        set rd [redis_deferring_client]
        $rd blpop blist 0
        pause_wait_blocked 1
        r client pause 100000 write
        set rd2 [redis_deferring_client]
        $rd2 lpush blist x
        pause_wait_blocked 2
        # A blocking command is a write: held before it blocks.
        set rd3 [redis_deferring_client]
        $rd3 blpop blist 0.2
        pause_wait_blocked 3
        after 400
        r client unpause
        assert_equal 1 [$rd2 read]
        assert_equal {blist x} [$rd read]
        # Its timeout starts when it runs.
        assert_equal {} [$rd3 read]
        $rd close
        $rd2 close
        $rd3 close
    }

    pause_test {CLIENT PAUSE: a blocked client times out while paused} {
        r del blist
        set rd [redis_deferring_client]
        $rd blpop blist 0.3
        pause_wait_blocked 1
        r client pause 100000 write
        assert_equal {} [$rd read]
        r client unpause
        $rd close
    }

    pause_test {CLIENT PAUSE WRITE suspends active and lazy expiry} {
        r flushall
        set expired [s expired_keys]
        r multi
        r set e1 v px 10
        r set e2 v px 10
        r client pause 100000 write
        r exec
        wait_for_condition 20 50 {
            [r get e1] eq {} && [r get e2] eq {}
        } else {
            fail "the keys never expired logically"
        }
        after 200
        assert_equal 0 [r exists e1]
        assert_equal 2 [r dbsize]
        assert_equal $expired [s expired_keys]
        r client unpause
        r get e1
        r get e2
        assert_equal [expr {$expired + 2}] [s expired_keys]
        assert_equal 0 [r dbsize]
    }

    pause_test {CLIENT PAUSE WRITE suspends eviction} {
        r flushall
        r config set maxmemory-policy allkeys-random
        for {set i 0} {$i < 200} {incr i} {r set k$i [string repeat x 1000]}
        set used [s used_memory]
        r client pause 100000 write
        try {
            r config set maxmemory [expr {$used - 100000}]
            r get k1
            after 200
            assert_equal 200 [r dbsize]
            assert_equal 0 [s evicted_keys]
        } finally {
            r client unpause
            r config set maxmemory 0
            r config set maxmemory-policy noeviction
        }
        r flushall
    }

    pause_test {A closed held client leaves the others in order} {
        r del ord
        r client pause 100000 write
        set a [redis_deferring_client]
        $a rpush ord a
        pause_wait_blocked 1
        set b [redis_deferring_client]
        $b rpush ord b
        pause_wait_blocked 2
        set c [redis_deferring_client]
        $c rpush ord c
        pause_wait_blocked 3
        $b close
        pause_wait_blocked 2
        r client unpause
        assert_equal 1 [$a read]
        assert_equal 2 [$c read]
        assert_equal {a c} [r lrange ord 0 -1]
        $a close
        $c close
    }

    r client unpause
}

# On a replica the primary's stream is held too: it is read, not applied.
proc pause_replica_tests {} {
    start_server {tags {pause}} {
        set primary [srv -1 client]
        $primary config set repl-ping-replica-period 3600
        r replicaof 127.0.0.1 [srv -1 port]
        # A full sync of what the tests before left, on a machine that may
        # run this under a sanitizer: up to 20 s.
        wait_for_condition 200 100 {[s master_link_status] eq {up}} else {
            fail "replication did not start"
        }

        pause_test {CLIENT PAUSE WRITE on a replica holds the primary's writes} {
            $primary set foo bar
            set applied [getInfoProperty [$primary info replication] master_repl_offset]
            wait_for_condition 100 20 {[s slave_repl_offset] == $applied} else {
                fail "the replica did not catch up"
            }
            r client pause 100000 write
            $primary set foo2 bar2
            wait_for_condition 100 20 {
                [s slave_read_repl_offset] == [getInfoProperty [$primary info replication] master_repl_offset]
            } else {
                fail "the replica did not read the stream"
            }
            after 100
            assert_equal $applied [s slave_repl_offset]
            # The refusal of a read-only replica comes before the pause.
            assert_error {READONLY You can't write against a read only replica.} {r set foo3 bar}
            assert_equal {} [r get foo2]
            r client unpause
            wait_for_condition 100 20 {
                [s slave_repl_offset] == [getInfoProperty [$primary info replication] master_repl_offset]
            } else {
                fail "the replica did not apply the stream after the pause"
            }
            assert_equal bar2 [r get foo2]
        }
        r replicaof no one
    }
}

if {[is_goblin]} {
    foreach cores {2 4} {
        start_server [list tags {pause} args [list --cores $cores]] {
            pause_tests
            pause_replica_tests
        }
    }
} else {
    start_server {tags {pause}} {
        pause_tests
        pause_replica_tests
    }
}
