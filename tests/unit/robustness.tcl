# Security and robustness, each checked against Redis 7.0's
# replies: an EXEC holding a denyoom command under maxmemory/noeviction is
# aborted ("EXECABORT Transaction discarded because of: OOM ...") while a
# read-only one runs, and so is one holding a write when min-replicas-to-write
# is no longer met, and one holding a read once the server is a stale replica;
# CONFIG SET requirepass/masterauth arguments are
# redacted in SLOWLOG and MONITOR; ACL SETUSER channel changes disconnect
# only the subscribers whose subscriptions are no longer allowed.

start_server {tags {robustness}} {

    test {EXEC with a queued denyoom command is aborted when over maxmemory} {
        r flushall
        r set k v
        set c [redis_client]
        assert_equal OK [$c multi]
        assert_equal QUEUED [$c set a b]
        assert_equal QUEUED [$c get k]
        # The limit is reached after queuing (queuing itself is refused then).
        r config set maxmemory-policy noeviction
        r config set maxmemory 1
        assert_equal "-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.\r\n" \
            [$c rawcall exec]
        r config set maxmemory 0
        assert_equal 0 [r exists a]
        # The transaction is gone: the client is out of MULTI.
        assert_error {ERR EXEC without MULTI} {$c exec}
        assert_match {*rejected_calls=1,*} [getInfoProperty [r info commandstats] cmdstat_exec]
        assert_match {*count=*} [getInfoProperty [r info errorstats] errorstat_EXECABORT]
        $c close
    }

    test {EXEC with a queued write is aborted when min-replicas-to-write is no longer met} {
        r set xx 1
        set c [redis_client]
        $c multi
        $c incr xx
        r config set min-replicas-to-write 2
        assert_equal "-EXECABORT Transaction discarded because of: NOREPLICAS Not enough good replicas to write.\r\n" \
            [$c rawcall exec]
        assert_equal 1 [r get xx]
        # Reads still run.
        $c multi
        $c get xx
        assert_equal 1 [$c exec]
        r config set min-replicas-to-write 0
        $c close
    }

    test {EXEC of a read is aborted with MASTERDOWN when the server became a stale replica} {
        r config set replica-serve-stale-data no
        set c [redis_client]
        r set xx 1
        $c multi
        $c get xx
        # A primary that is not there: the link never comes up.
        r replicaof 127.0.0.1 1
        assert_match "-EXECABORT Transaction discarded because of: MASTERDOWN *" [$c rawcall exec]
        assert_error {MASTERDOWN *} {$c exists xx}
        # Commands flagged stale still run in one.
        $c multi
        $c info server
        assert_match "*redis_version*" [$c exec]
        r replicaof no one
        r config set replica-serve-stale-data yes
        $c close
    }

    test {A stale replica's EXEC is aborted with MASTERDOWN at once while writes are paused} {
        r config set replica-serve-stale-data no
        r config set replica-read-only no
        set c [redis_client]
        $c multi
        $c set yy 1
        r replicaof 127.0.0.1 1
        r client pause 10000 WRITE
        set t0 [clock milliseconds]
        assert_match "-EXECABORT Transaction discarded because of: MASTERDOWN *" [$c rawcall exec]
        set took [expr {[clock milliseconds] - $t0}]
        r client unpause
        assert {$took < 5000}
        r replicaof no one
        r config set replica-read-only yes
        r config set replica-serve-stale-data yes
        assert_equal 0 [r exists yy]
        $c close
    }

    test {EXEC of reads and deletes still runs when over maxmemory} {
        r set k v
        set c [redis_client]
        $c multi
        $c get k
        $c del k
        r config set maxmemory 1
        assert_equal {v 1} [$c exec]
        r config set maxmemory 0
        assert_equal 0 [r exists k]
        $c close
    }

    test {MULTI/SET and MULTI/GET when already over maxmemory: queuing refused, EXECABORT} {
        r set k v
        r config set maxmemory 1
        r multi
        assert_error {OOM command not allowed when used memory > 'maxmemory'.} {r set a b}
        assert_equal "-EXECABORT Transaction discarded because of previous errors.\r\n" [r rawcall exec]
        r multi
        assert_error {OOM command not allowed when used memory > 'maxmemory'.} {r get k}
        assert_equal "-EXECABORT Transaction discarded because of previous errors.\r\n" [r rawcall exec]
        # DISCARD is never refused.
        r multi
        assert_equal OK [r discard]
        r config set maxmemory 0
        assert_equal OK [r set a b]
    }

    test {CONFIG SET requirepass and masterauth values are redacted in SLOWLOG} {
        r config set slowlog-log-slower-than 0
        r slowlog reset
        # masterauth takes only its default until replication lands: the
        # refusal is logged too, redacted, and never repeats the secret.
        catch {r config set masterauth secret-m1} e
        assert_no_match {*secret*} $e
        r config set maxmemory-policy noeviction requirepass secret-r1
        r config set requirepass ""
        # Failing calls are logged too, every sensitive value redacted.
        catch {r config set maxmemory-policy bad masterauth secret-m2}
        catch {r config set nosuch 1 requirepass secret-r2}
        r config set masterauth ""
        set log [r slowlog get 6]
        r config set slowlog-log-slower-than 10000
        assert_no_match {*secret*} $log
        assert_equal {config set masterauth (redacted)} [lindex $log 0 3]
        assert_equal {config set nosuch 1 requirepass (redacted)} [lindex $log 1 3]
        assert_equal {config set maxmemory-policy bad masterauth (redacted)} [lindex $log 2 3]
        assert_equal {config set requirepass (redacted)} [lindex $log 3 3]
        assert_equal {config set maxmemory-policy noeviction requirepass (redacted)} [lindex $log 4 3]
        assert_equal {config set masterauth (redacted)} [lindex $log 5 3]
        # The settings themselves took the real values.
        assert_equal {masterauth {}} [r config get masterauth]
        assert_equal {requirepass {}} [r config get requirepass]
    }

    test {CONFIG SET requirepass inside MULTI is redacted in SLOWLOG} {
        r config set slowlog-log-slower-than 0
        r slowlog reset
        r multi
        r config set requirepass secret-x
        r config set requirepass ""
        r exec
        set log [r slowlog get 3]
        r config set slowlog-log-slower-than 10000
        assert_no_match {*secret*} $log
        assert_equal {config set requirepass (redacted)} [lindex $log 1 3]
    }

    test {MONITOR never shows CONFIG SET (admin), and AUTH redacted} {
        set m [redis_client]
        assert_equal OK [$m monitor]
        catch {r config set masterauth secret-m3}
        r config set requirepass secret-r3
        r auth secret-r3
        r config set requirepass ""
        r config set masterauth ""
        r set after-config 1
        $m readraw 1
        set l1 [$m read]
        set l2 [$m read]
        assert_match {*"auth" "(redacted)"} $l1
        assert_match {*"set" "after-config" "1"} $l2
        $m close
    }
}

# An authenticated client of a user, subscribed (SUBSCRIBE / PSUBSCRIBE /
# SSUBSCRIBE kind) to the given names; the subscribe replies are consumed.
proc rb_subscriber {user pass kind names} {
    set c [redis_deferring_client]
    $c auth $user $pass
    assert_equal OK [$c read]
    $c $kind {*}$names
    foreach n $names {$c read}
    return $c
}

# Whether the server closed the client's connection (within ms), else it
# still answers PING in subscribed mode.
proc rb_closed {c {ms 300}} {
    $c wait_closed $ms
}

start_server {tags {robustness acl}} {

    test {ACL SETUSER channel change disconnects only the subscribers it revokes} {
        r acl setuser u on >p +@all ~* resetchannels &foo* &bar &sh*
        set s_glob [rb_subscriber u p subscribe {foo1}]
        set s_bar [rb_subscriber u p subscribe {bar}]
        set s_pat [rb_subscriber u p psubscribe {foo*}]
        set s_mix [rb_subscriber u p subscribe {foo2 bar}]
        set s_shard [rb_subscriber u p ssubscribe {shx}]
        set plain [redis_client]
        $plain auth u p
        # Another user's subscriber on the same channel is not concerned.
        r acl setuser other on >p +@all ~* resetchannels &foo1
        set s_other [rb_subscriber other p subscribe {foo1}]

        # Same list in another order, or a superset: nobody is disconnected.
        r acl setuser u resetchannels &bar &sh* &foo*
        r acl setuser u &extra
        foreach c [list $s_glob $s_bar $s_pat $s_mix $s_shard] {
            assert_equal 0 [rb_closed $c 100]
        }

        # foo* goes: the subscribers of foo1 / foo2 and of the pattern foo*
        # lose their connection; bar and the shard channel stay.
        r acl setuser u resetchannels &bar &sh*
        assert_equal 1 [rb_closed $s_glob 2000]
        assert_equal 1 [rb_closed $s_pat 2000]
        assert_equal 1 [rb_closed $s_mix 2000]
        assert_equal 0 [rb_closed $s_bar 100]
        assert_equal 0 [rb_closed $s_shard 100]
        assert_equal 0 [rb_closed $s_other 100]
        assert_equal PONG [$plain ping]
        assert_equal 1 [r publish bar hello]
        assert_equal {message bar hello} [$s_bar read]

        # A pattern subscription stays only if the same pattern is listed.
        r acl setuser u resetchannels &bar &sh* &news.*
        set s_news [rb_subscriber u p psubscribe {news.*}]
        set s_sport [rb_subscriber u p subscribe {news.sport}]
        r acl setuser u resetchannels &bar &sh* &news.s*
        assert_equal 1 [rb_closed $s_news 2000]
        assert_equal 0 [rb_closed $s_sport 100]

        # resetchannels: every remaining subscriber goes, the plain client stays.
        r acl setuser u resetchannels
        assert_equal 1 [rb_closed $s_bar 2000]
        assert_equal 1 [rb_closed $s_shard 2000]
        assert_equal 1 [rb_closed $s_sport 2000]
        assert_equal PONG [$plain ping]
        assert_equal 0 [rb_closed $s_other 100]
        r acl deluser u other
    }

    test {ACL SETUSER allchannels keeps every subscriber} {
        r acl setuser u2 on >p +@all ~* resetchannels &a
        set s [rb_subscriber u2 p subscribe {a}]
        r acl setuser u2 allchannels
        assert_equal 0 [rb_closed $s 100]
        r acl deluser u2
    }
}


# A crash leaves a bug report in the log (Redis's sigsegvHandler): the
# signal, the address, a stack trace, then the process ends by the signal.
set crash_test {A crash (DEBUG SEGFAULT) leaves a bug report with a stack trace in the log}
if {[is_goblin] && [string match {*san/*} $::srv::binary]} {
    ::t::record_skip $crash_test "a sanitizer build keeps the sanitizer's own crash report"
} else {
    start_server {tags {robustness}} {
        test $crash_test {
            set pid [srv pid]
            server_expect_exit
            catch {r debug segfault}
            wait_for_condition 100 50 {![::srv::alive $pid]} else {
                fail "still running after DEBUG SEGFAULT"
            }
            set log [server_log]
            assert_match "*crashed by signal: 11*" $log
            assert_match "*Accessing address: *" $log
            assert_match "*------ STACK TRACE ------*" $log
            assert_match "*BUG REPORT END. Make sure to include from START to END.*" $log
        }
    }
    start_server {tags {robustness} args {--crash-log-enabled no}} {
        test {crash-log-enabled no: a crash leaves the kernel's default handling, no report} {
            set pid [srv pid]
            server_expect_exit
            catch {r debug segfault}
            wait_for_condition 100 50 {![::srv::alive $pid]} else {
                fail "still running after DEBUG SEGFAULT"
            }
            assert_no_match "*crashed by signal*" [server_log]
        }
    }
}
