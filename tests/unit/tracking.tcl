# Client-side caching: CLIENT TRACKING (default mode, BCAST with prefixes,
# OPTIN/OPTOUT with CLIENT CACHING, NOLOOP, REDIRECT to a RESP2 Pub/Sub
# client or a RESP3 client), the RESP3 invalidate push and its place
# relative to replies, broken redirections, the tracking-table-max-keys
# limit, FLUSHALL/FLUSHDB null invalidations, expiry and eviction,
# CLIENT TRACKINGINFO / GETREDIR / LIST and INFO fields. Goblin runs with
# --cores 2: the writers, the tracking clients and the redirection targets
# live on different workers (several writer connections make sure of it).

if {[is_goblin]} {
    set ::tracking_server_args {--cores 2}
} else {
    set ::tracking_server_args {}
}

# The exact bytes of a RESP3 invalidate push for keys (none: a flush).
proc inv_push {args} {
    set out ">2\r\n\$10\r\ninvalidate\r\n"
    if {[llength $args] == 0} {return "${out}_\r\n"}
    append out "*[llength $args]\r\n"
    foreach k $args {append out "\$[string length $k]\r\n$k\r\n"}
    return $out
}

# The exact bytes of the RESP2 message on __redis__:invalidate.
proc inv_message {args} {
    set out "*3\r\n\$7\r\nmessage\r\n\$20\r\n__redis__:invalidate\r\n"
    if {[llength $args] == 0} {return "$out\$-1\r\n"}
    append out "*[llength $args]\r\n"
    foreach k $args {append out "\$[string length $k]\r\n$k\r\n"}
    return $out
}

# A RESP2 client subscribed to __redis__:invalidate; returns {client id}.
proc redirection_client {} {
    set c [redis_deferring_client]
    $c client id
    set id [$c read]
    $c subscribe __redis__:invalidate
    $c read
    list $c $id
}

# A RESP3 client with tracking on (extra: CLIENT TRACKING options).
proc tracking_client {args} {
    set c [redis_deferring_client]
    $c hello 3
    $c read
    $c client tracking on {*}$args
    assert_equal OK [$c read]
    return $c
}

start_server [list tags {tracking} args $::tracking_server_args] {
    lassign [redirection_client] rd_redirection redir_id
    set rd [redis_deferring_client]
    set rd_sg [redis_client]

    # Back to a clean state: tracking off, fresh redirection client.
    proc clean_all {} {
        uplevel {
            r CLIENT TRACKING off
            r HELLO 2
            $rd close
            $rd_redirection close
            set rd [redis_deferring_client]
            lassign [redirection_client] rd_redirection redir_id
            r FLUSHALL
            r config set tracking-table-max-keys 1000000
        }
    }

    test {Clients are able to enable tracking and redirect it} {
        r CLIENT TRACKING on REDIRECT $redir_id
    } {OK}

    test {The other connection is able to get invalidations} {
        r SET a{t} 1
        r SET b{t} 1
        r GET a{t}
        r INCR b{t} ; # not fetched: no notification
        r INCR a{t}
        set keys [lindex [$rd_redirection read] 2]
        assert_equal {a{t}} $keys
    }

    test {The client is now able to disable tracking} {
        r MGET a{t} b{t} c{t} d{t} e{t} f{t} g{t}
        r CLIENT TRACKING off
    } {OK}

    test {Clients can enable the BCAST mode with the empty prefix} {
        r CLIENT TRACKING on BCAST REDIRECT $redir_id
    } {OK}

    test {The connection gets invalidation messages about all the keys} {
        r MSET a{t} 1 b{t} 2 c{t} 3
        assert_equal {a{t} b{t} c{t}} [lindex [$rd_redirection read] 2]
    }

    test {Clients can enable the BCAST mode with prefixes} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on BCAST REDIRECT $redir_id PREFIX a: PREFIX b:
        r MULTI
        r INCR a:1{t}
        r INCR a:2{t}
        r INCR b:1{t}
        r INCR b:2{t}
        r INCR c:1{t}
        r EXEC
        # One message per prefix, in prefix order, keys sorted.
        assert_equal {a:1{t} a:2{t}} [lindex [$rd_redirection read] 2]
        assert_equal {b:1{t} b:2{t}} [lindex [$rd_redirection read] 2]
    }

    test {Adding prefixes to BCAST mode works} {
        r CLIENT TRACKING on BCAST REDIRECT $redir_id PREFIX c:
        r INCR c:1234
        assert_equal {c:1234} [lindex [$rd_redirection read] 2]
    }

    test {Tracking NOLOOP mode in standard mode works} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on REDIRECT $redir_id NOLOOP
        r MGET otherkey1{t} loopkey{t} otherkey2{t}
        $rd_sg SET otherkey1{t} 1
        r SET loopkey{t} 1 ; # not notified
        $rd_sg SET otherkey2{t} 1
        assert_equal {otherkey1{t}} [lindex [$rd_redirection read] 2]
        assert_equal {otherkey2{t}} [lindex [$rd_redirection read] 2]
    }

    test {Tracking NOLOOP mode in BCAST mode works} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on BCAST REDIRECT $redir_id NOLOOP
        $rd_sg SET otherkey1 1
        r SET loopkey 1 ; # not notified
        $rd_sg SET otherkey2 1
        assert_equal {otherkey1} [lindex [$rd_redirection read] 2]
        assert_equal {otherkey2} [lindex [$rd_redirection read] 2]
    }

    test {Tracking gets notification of expired keys} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on BCAST REDIRECT $redir_id NOLOOP
        r SET mykey myval px 1
        r SET mykeyotherkey myval ; # not notified: NOLOOP
        after 1000
        assert_equal {mykey} [lindex [$rd_redirection read] 2]
    }

    test {Tracking gets notification of lazy expired keys} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on BCAST REDIRECT $redir_id NOLOOP
        r DEBUG SET-ACTIVE-EXPIRE 0
        r SET mykey{t} myval px 1
        r SET mykeyotherkey{t} myval ; # not notified: NOLOOP
        after 20
        assert_equal {} [r GET mykey{t}]
        r DEBUG SET-ACTIVE-EXPIRE 1
        assert_equal {mykey{t}} [lindex [$rd_redirection read] 2]
    }

    test {HELLO 3 reply is correct} {
        set reply [r HELLO 3]
        assert_equal 3 [dict get $reply proto]
    }

    test {RESP3 based basic invalidation} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on
        $rd_sg SET key1 1
        r GET key1
        $rd_sg SET key1 2
        r read
    } {invalidate key1}

    test {RESP3 tracking redirection} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg SET key1 1
        r GET key1
        $rd_sg SET key1 2
        assert_equal {key1} [lindex [$rd_redirection read] 2]
    }

    test {Invalidations of previous keys can be redirected after switching to RESP3} {
        r HELLO 2
        $rd_sg SET key1 1
        r GET key1
        r HELLO 3
        $rd_sg SET key1 2
        assert_equal {key1} [lindex [$rd_redirection read] 2]
    }

    test {Invalidations of new keys can be redirected after switching to RESP3} {
        r HELLO 3
        $rd_sg SET key1 1
        r GET key1
        $rd_sg SET key1 2
        assert_equal {key1} [lindex [$rd_redirection read] 2]
    }

    test {Invalid keys should not be tracked for scripts in NOLOOP mode} {
        $rd_sg CLIENT TRACKING off
        $rd_sg CLIENT TRACKING on NOLOOP
        $rd_sg HELLO 3
        $rd_sg SET key1 1
        assert_equal 1 [$rd_sg GET key1]
        $rd_sg eval "return redis.call('set', 'key1', '2')" 1 key1
        assert_equal 2 [$rd_sg GET key1]
        $rd_sg CLIENT TRACKING off
        $rd_sg HELLO 2
        assert_equal PONG [$rd_sg PING]
    }

    test {Tracking only occurs for scripts when a command calls a read-only command} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on
        $rd_sg MSET key2{t} 1 key2{t} 1
        # A script that reads nothing tracks nothing.
        r EVAL "redis.call('set', 'key3{t}', 'bar')" 2 key1{t} key2{t}
        $rd_sg MSET key2{t} 2 key1{t} 2
        # A script that reads tracks all its declared keys.
        r EVAL "redis.call('get', 'key3{t}')" 2 key1{t} key2{t}
        $rd_sg MSET key2{t} 2 key1{t} 2
        assert_equal {invalidate key2{t}} [r read]
        assert_equal {invalidate key1{t}} [r read]
        # The RO variants work like the others.
        r EVAL_RO "redis.call('ping')" 2 key1{t} key2{t}
        $rd_sg MSET key2{t} 2 key1{t} 2
        r EVAL_RO "redis.call('get', 'key1{t}')" 2 key1{t} key2{t}
        $rd_sg MSET key2{t} 3 key1{t} 3
        assert_equal {invalidate key2{t}} [r read]
        assert_equal {invalidate key1{t}} [r read]
        assert_equal PONG [r ping]
    }

    test {RESP3 client gets tracking-redir-broken after a cached key changed and its redirection client went away} {
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg SET key1 1
        r GET key1
        $rd_redirection QUIT
        assert_equal OK [$rd_redirection read]
        $rd_sg SET key1 2
        set res -1
        for {set i 0} {$i <= 100 && $res < 0} {incr i} {
            set res [lsearch -exact [r PING] tracking-redir-broken]
        }
        assert {$res >= 0}
        assert_equal PONG [r read]
        lassign [redirection_client] rd_redirection redir_id
    }

    test {Different clients can redirect to the same connection} {
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd CLIENT TRACKING on REDIRECT $redir_id
        assert_equal OK [$rd read]
        $rd_sg MSET key1{t} 1 key2{t} 1
        r GET key1{t}
        $rd GET key2{t}
        assert_equal 1 [$rd read]
        $rd_sg INCR key1{t}
        $rd_sg INCR key2{t}
        assert_equal {key1{t}} [lindex [$rd_redirection read] 2]
        assert_equal {key2{t}} [lindex [$rd_redirection read] 2]
    }

    test {Different clients using different protocols can track the same key} {
        $rd HELLO 3
        assert_equal 3 [dict get [$rd read] proto]
        $rd CLIENT TRACKING on
        assert_equal OK [$rd read]
        $rd_sg set key1 1
        r GET key1
        $rd GET key1
        assert_equal 1 [$rd read]
        $rd_sg INCR key1
        assert_equal {key1} [lindex [$rd_redirection read] 2]
        $rd PING
        assert_equal {invalidate key1} [$rd read]
        assert_equal PONG [$rd read]
    }

    test {No invalidation message when using OPTIN option} {
        r CLIENT TRACKING on OPTIN REDIRECT $redir_id
        $rd_sg SET key1 1
        r GET key1 ; # OPTIN without CLIENT CACHING yes: not tracked
        $rd_sg SET key1 2
        r CLIENT TRACKING off
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg SET key2 1
        r GET key2
        $rd_sg SET key2 2
        assert_equal {key2} [lindex [$rd_redirection read] 2]
    }

    test {Invalidation message sent when using OPTIN option with CLIENT CACHING yes} {
        r CLIENT TRACKING on OPTIN REDIRECT $redir_id
        $rd_sg SET key1 3
        r CLIENT CACHING yes
        r GET key1
        $rd_sg SET key1 4
        assert_equal {key1} [lindex [$rd_redirection read] 2]
    }

    test {CLIENT CACHING yes applies to the next command only} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on OPTIN REDIRECT $redir_id
        $rd_sg MSET k1 1 k2 2
        r CLIENT CACHING yes
        r GET k1
        r GET k2 ; # not tracked
        $rd_sg MSET k2 3 k1 3
        assert_equal {k1} [lindex [$rd_redirection read] 2]
        # In a transaction it covers every queued command.
        r CLIENT CACHING yes
        r MULTI
        r GET k1
        r GET k2
        r EXEC
        r GET k1 ; # the flag is gone after EXEC
        $rd_sg MSET k2 4 k1 4
        assert_equal {k2} [lindex [$rd_redirection read] 2]
        assert_equal {k1} [lindex [$rd_redirection read] 2]
        $rd_sg SET k1 5
        $rd_redirection ping
        assert_equal {pong {}} [$rd_redirection read]
    }

    test {Invalidation message sent when using OPTOUT option} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on OPTOUT REDIRECT $redir_id
        $rd_sg SET key1 1
        r GET key1
        $rd_sg SET key1 2
        assert_equal {key1} [lindex [$rd_redirection read] 2]
    }

    test {No invalidation message when using OPTOUT option with CLIENT CACHING no} {
        $rd_sg SET key1 1
        r CLIENT CACHING no
        r GET key1 ; # not tracked
        $rd_sg SET key1 2
        $rd_sg SET key2 1
        r GET key2
        $rd_sg SET key2 2
        assert_equal {key2} [lindex [$rd_redirection read] 2]
    }

    test {Able to redirect to a RESP3 client} {
        $rd_redirection UNSUBSCRIBE __redis__:invalidate
        assert_equal {__redis__:invalidate} [lindex [$rd_redirection read] 1]
        $rd_redirection HELLO 3
        assert_equal 3 [dict get [$rd_redirection read] proto]
        $rd_redirection SUBSCRIBE __redis__:invalidate
        assert_equal {__redis__:invalidate} [lindex [$rd_redirection read] 1]
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg SET key1 1
        r GET key1
        $rd_sg INCR key1
        # A RESP3 target gets the push, not a Pub/Sub message.
        assert_equal {invalidate key1} [$rd_redirection read]
        $rd_redirection HELLO 2
        assert_equal 2 [dict get [$rd_redirection read] proto]
    }

    test {After switching from normal tracking to BCAST mode, no invalidation message is produced for pre-BCAST keys} {
        r CLIENT TRACKING off
        r HELLO 3
        r CLIENT TRACKING on
        $rd_sg SET key1 1
        r GET key1
        r CLIENT TRACKING off
        r CLIENT TRACKING on BCAST
        $rd_sg INCR key1
        assert_equal {invalidate key1} [r PING]
        assert_equal PONG [r read]
    }

    test {BCAST with prefix collisions throw errors} {
        set c [redis_client]
        catch {$c CLIENT TRACKING ON BCAST PREFIX FOOBAR PREFIX FOO} output
        assert_equal {ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. Prefixes for a single client must not overlap.} $output
        catch {$c CLIENT TRACKING ON BCAST PREFIX FOO PREFIX FOOBAR} output
        assert_match {ERR Prefix 'FOO'*'FOOBAR'*} $output
        $c CLIENT TRACKING ON BCAST PREFIX FOO PREFIX BAR
        catch {$c CLIENT TRACKING ON BCAST PREFIX FO} output
        assert_equal {ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. Prefixes for a single client must not overlap.} $output
        catch {$c CLIENT TRACKING ON BCAST PREFIX BARB} output
        assert_match {ERR Prefix 'BARB'*'BAR'*} $output
        $c CLIENT TRACKING OFF
        $c close
    }

    test {An overlap among later prefixes is an error reply followed by OK (as Redis 7.0)} {
        set c [redis_deferring_client]
        $c write [::resp::encode {client tracking on bcast prefix a prefix b prefix bc}]
        $c flush
        assert_equal "-ERR Prefix 'b' overlaps with another provided prefix 'bc'. Prefixes for a single client must not overlap.\r\n+OK\r\n" \
            [$c read_all 200]
        $c client trackinginfo
        assert_equal {flags {on bcast} redirect 0 prefixes {a b bc}} [$c read]
        $c client tracking off
        $c read
        $c close
    }

    test {CLIENT TRACKING errors} {
        set c [redis_client]
        assert_error {ERR The client ID you want redirect to does not exist} {$c client tracking on redirect 987654}
        assert_error {ERR The client ID you want redirect to does not exist} {$c client tracking on redirect 0}
        assert_error {ERR value is not an integer or out of range} {$c client tracking on redirect abc}
        set myid [$c client id]
        assert_error {ERR A client can only redirect to a single other client} {$c client tracking on redirect $myid redirect $myid}
        assert_error {ERR syntax error} {$c client tracking on redirect}
        assert_error {ERR syntax error} {$c client tracking on prefix}
        assert_error {ERR syntax error} {$c client tracking on foo}
        assert_error {ERR syntax error} {$c client tracking maybe}
        assert_error {ERR syntax error} {$c client tracking off foo}
        assert_error {ERR PREFIX option requires BCAST mode to be enabled} {$c client tracking on prefix a}
        assert_error {ERR OPTIN and OPTOUT are not compatible with BCAST} {$c client tracking on bcast optin}
        assert_error {ERR You can't specify both OPTIN mode and OPTOUT mode} {$c client tracking on optin optout}
        assert_error {ERR wrong number of arguments for 'client|tracking' command} {$c client tracking}
        assert_equal OK [$c client tracking on optin]
        assert_error {ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.} {$c client tracking on optout}
        assert_error {ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.} {$c client tracking on bcast}
        assert_error {ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.} {$c client caching no}
        assert_error {ERR syntax error} {$c client caching maybe}
        assert_error {ERR wrong number of arguments for 'client|caching' command} {$c client caching yes now}
        assert_equal OK [$c client caching yes]
        assert_equal OK [$c client tracking off]
        assert_error {ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled} {$c client caching yes}
        assert_equal OK [$c client tracking on]
        assert_error {ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.} {$c client caching yes}
        assert_error {ERR wrong number of arguments for 'client|getredir' command} {$c client getredir x}
        assert_error {ERR wrong number of arguments for 'client|trackinginfo' command} {$c client trackinginfo x}
        # Tracking on to itself is allowed.
        assert_equal OK [$c client tracking on redirect $myid]
        $c close
    }

    test {HDEL delivers the invalidate message after the reply on the same connection} {
        r CLIENT TRACKING off
        r HELLO 3
        r CLIENT TRACKING on
        r HSET myhash f 1
        r HGET myhash f
        assert_equal 1 [r HDEL myhash f]
        r read
    } {invalidate myhash}

    test {Own write: the exact bytes, reply first} {
        set c [tracking_client]
        $c get ownkey
        $c read
        $c set ownkey 1
        $c flush
        assert_equal "+OK\r\n[inv_push ownkey]" [$c read_all 200]
        $c close
    }

    test {Tracking invalidation message is not interleaved with multiple keys response} {
        r CLIENT TRACKING off
        r HELLO 3
        r CLIENT TRACKING on
        r DEBUG SET-ACTIVE-EXPIRE 0
        r MULTI
        r MSET x{t} 1 y{t} 2
        r PEXPIRE y{t} 100
        r GET y{t}
        r EXEC
        after 110
        assert_equal {1 {}} [r MGET x{t} y{t}]
        assert_equal {invalidate y{t}} [r read]
        r DEBUG SET-ACTIVE-EXPIRE 1
    } {OK}

    test {Tracking invalidation message is not interleaved with transaction response} {
        r CLIENT TRACKING off
        r HELLO 3
        r CLIENT TRACKING on
        r MSET a{t} 1 b{t} 2
        r GET a{t}
        r MULTI
        r INCR a{t}
        r GET b{t}
        assert_equal {2 2} [r EXEC]
        assert_equal {invalidate a{t}} [r read]
    }

    test {Unblocked BLMOVE gets notification after response} {
        r RPUSH list2{t} a
        $rd HELLO 3
        $rd read
        $rd CLIENT TRACKING on
        $rd read
        $rd LRANGE list2{t} 0 -1
        $rd read
        $rd BLMOVE list1{t} list2{t} left left 0
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {fail "not blocked"}
        r rpush list1{t} foo
        assert_equal {foo} [$rd read]
        assert_equal {invalidate list2{t}} [$rd read]
    }

    test {Tracking gets notification on tracking table key eviction} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on REDIRECT $redir_id NOLOOP
        r MSET key1{t} 1 key2{t} 2
        r MGET key1{t} key2{t}
        r config set tracking-table-max-keys 1
        while 1 {
            set keys [lindex [$rd_redirection read] 2]
            if {$keys eq {key1{t}} || $keys eq {key2{t}}} break
        }
        assert {$keys eq {key1{t}} || $keys eq {key2{t}}}
        r config set tracking-table-max-keys 1000000
    }

    test {Invalidation message received for flushall} {
        clean_all
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg SET key1 1
        r GET key1
        $rd_sg FLUSHALL
        set msg [$rd_redirection read]
        assert_equal {message __redis__:invalidate {}} $msg
    }

    test {Invalidation message received for flushdb} {
        clean_all
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg SET key1 1
        r GET key1
        $rd_sg FLUSHDB
        assert_equal {message __redis__:invalidate {}} [$rd_redirection read]
    }

    test {FLUSHDB of an empty database still sends the null invalidation, exact bytes} {
        clean_all
        set c [tracking_client]
        $rd_sg select 9
        $rd_sg flushdb
        $rd_sg select 0
        assert_equal [inv_push] [$c read_all 200]
        # RESP2 tracker redirecting to a RESP2 Pub/Sub client: the RESP2 null.
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg flushall
        $rd_redirection flush
        assert_equal [inv_message] [$rd_redirection read_all 200]
        # FLUSHALL sends one message, whatever the number of databases.
        assert_equal [inv_push] [$c read_all 200]
        $c close
    }

    test {Test ASYNC flushall} {
        clean_all
        r CLIENT TRACKING on REDIRECT $redir_id
        r GET key1
        r GET key2
        assert_equal 2 [s tracking_total_keys]
        $rd_sg FLUSHALL ASYNC
        assert_equal 0 [s tracking_total_keys]
        assert_equal {} [lindex [$rd_redirection read] 2]
    }

    test {flushdb tracking invalidation message is not interleaved with transaction response} {
        clean_all
        r HELLO 3
        r CLIENT TRACKING on
        r SET a{t} 1
        r GET a{t}
        r MULTI
        r FLUSHDB
        assert_equal {OK} [r EXEC]
        r read
    } {invalidate {}}

    test {SWAPDB sends no invalidation (as Redis 7.0)} {
        clean_all
        set c [tracking_client]
        $rd_sg set swk 1
        $c get swk
        $c read
        $rd_sg swapdb 0 1
        $rd_sg swapdb 0 1
        $c ping
        assert_equal PONG [$c read]
        # The key is still tracked: a write invalidates it.
        $rd_sg set swk 2
        assert_equal {invalidate swk} [$c read]
        $c close
    }

    test {Keys are tracked by name across databases} {
        set c [tracking_client]
        $c select 3
        $c read
        $c get dbk
        $c read
        $rd_sg select 5
        $rd_sg set dbk 1
        $rd_sg select 0
        assert_equal {invalidate dbk} [$c read]
        $c close
    }

    test {Server is able to evacuate enough keys when num of keys surpasses limit by more than defined initial effort} {
        clean_all
        set n 250
        r CLIENT TRACKING on REDIRECT $redir_id
        for {set i 0} {$i < $n} {incr i} {
            $rd_sg SET key$i $i
            r GET key$i
        }
        r config set tracking-table-max-keys 1
        for {set i 0} {$i < $n - 1} {incr i} {
            $rd_redirection read
        }
        $rd_redirection PING
        assert_equal {pong {}} [$rd_redirection read]
        r config set tracking-table-max-keys 1000000
    }

    test {Tracking info is correct} {
        clean_all
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg SET key1 1
        $rd_sg SET key2 2
        r GET key1
        r GET key2
        $rd CLIENT TRACKING on BCAST PREFIX prefix:
        assert_equal OK [$rd read]
        $rd_sg SET prefix:key1 1
        $rd_sg SET prefix:key2 2
        assert_equal 2 [s tracking_total_items]
        assert_equal 2 [s tracking_total_keys]
        assert_equal 1 [s tracking_total_prefixes]
        assert_equal 2 [s tracking_clients]
        # A second reader of key1 adds an item, not a key.
        set c [redis_client]
        $c client tracking on
        $c get key1
        assert_equal 3 [s tracking_total_items]
        assert_equal 2 [s tracking_total_keys]
        assert_equal 3 [s tracking_clients]
        $c close
        wait_for_condition 100 10 {[s tracking_clients] == 2} else {fail "tracking_clients"}
    }

    test {CLIENT GETREDIR provides correct client id} {
        assert_equal $redir_id [r CLIENT GETREDIR]
        r CLIENT TRACKING off
        assert_equal -1 [r CLIENT GETREDIR]
        r CLIENT TRACKING on
        assert_equal 0 [r CLIENT GETREDIR]
    }

    test {CLIENT TRACKINGINFO provides reasonable results when tracking off} {
        r CLIENT TRACKING off
        r client trackinginfo
    } {flags off redirect -1 prefixes {}}

    test {CLIENT TRACKINGINFO provides reasonable results when tracking on} {
        r CLIENT TRACKING on
        r client trackinginfo
    } {flags on redirect 0 prefixes {}}

    test {CLIENT TRACKINGINFO provides reasonable results when tracking on with options} {
        r CLIENT TRACKING on REDIRECT $redir_id noloop
        set res [r client trackinginfo]
        assert_equal {on noloop} [dict get $res flags]
        assert_equal $redir_id [dict get $res redirect]
        assert_equal {} [dict get $res prefixes]
    }

    test {CLIENT TRACKINGINFO provides reasonable results when tracking optin} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on optin
        assert_equal {flags {on optin} redirect 0 prefixes {}} [r client trackinginfo]
        r CLIENT CACHING yes
        assert_equal {on optin caching-yes} [dict get [r client trackinginfo] flags]
    }

    test {CLIENT TRACKINGINFO provides reasonable results when tracking optout} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on optout
        assert_equal {flags {on optout} redirect 0 prefixes {}} [r client trackinginfo]
        r CLIENT CACHING no
        assert_equal {on optout caching-no} [dict get [r client trackinginfo] flags]
    }

    test {CLIENT TRACKINGINFO provides reasonable results when tracking bcast mode} {
        r CLIENT TRACKING off
        r CLIENT TRACKING on BCAST PREFIX foo PREFIX bar
        assert_equal {flags {on bcast} redirect 0 prefixes {bar foo}} [r client trackinginfo]
        r CLIENT TRACKING off
        r CLIENT TRACKING on BCAST
        assert_equal {{}} [dict get [r client trackinginfo] prefixes]
    }

    test {CLIENT TRACKINGINFO reply shapes in RESP2 and RESP3} {
        set c [redis_client]
        $c client tracking on bcast prefix p1 noloop
        assert_equal "*6\r\n\$5\r\nflags\r\n*3\r\n\$2\r\non\r\n\$5\r\nbcast\r\n\$6\r\nnoloop\r\n\$8\r\nredirect\r\n:0\r\n\$8\r\nprefixes\r\n*1\r\n\$2\r\np1\r\n" \
            [$c rawcall client trackinginfo]
        $c hello 3
        assert_equal "%3\r\n\$5\r\nflags\r\n~3\r\n\$2\r\non\r\n\$5\r\nbcast\r\n\$6\r\nnoloop\r\n\$8\r\nredirect\r\n:0\r\n\$8\r\nprefixes\r\n*1\r\n\$2\r\np1\r\n" \
            [$c rawcall client trackinginfo]
        $c close
    }

    test {CLIENT TRACKINGINFO provides reasonable results when tracking redir broken} {
        clean_all
        r HELLO 3
        r CLIENT TRACKING on REDIRECT $redir_id
        $rd_sg SET key1 1
        r GET key1
        set old_id $redir_id
        $rd_redirection QUIT
        assert_equal OK [$rd_redirection read]
        $rd_sg SET key1 2
        assert_equal [list tracking-redir-broken $old_id] [r read]
        set res [r client trackinginfo]
        assert_equal {on broken_redirect} [dict get $res flags]
        assert_equal $old_id [dict get $res redirect]
        assert_equal {} [dict get $res prefixes]
        # CLIENT LIST: flags t and R, redir the old id.
        assert_match "*flags=tR *redir=$old_id *" [r client info]
        lassign [redirection_client] rd_redirection redir_id
    }

    test {CLIENT LIST shows the tracking flags and the redirection} {
        set c [redis_client]
        assert_match {*flags=N *redir=-1 *} [$c client info]
        $c client tracking on redirect $redir_id
        assert_match "*flags=t *redir=$redir_id *" [$c client info]
        $c client tracking off
        $c client tracking on bcast prefix x
        assert_match {*flags=tB *redir=0 *} [$c client info]
        set myid [$c client id]
        assert_match "*id=$myid *flags=tB *" [r client list id $myid]
        $c client tracking off
        $c close
    }

    test {RESET turns tracking off} {
        set c [redis_client]
        $c client tracking on bcast prefix r:
        assert_equal 1 [expr {[s tracking_clients] >= 1}]
        set before [s tracking_total_prefixes]
        $c reset
        assert_equal {flags off redirect -1 prefixes {}} [$c client trackinginfo]
        assert_equal [expr {$before - 1}] [s tracking_total_prefixes]
        assert_match {*flags=N *redir=-1 *} [$c client info]
        $c close
    }

    test {Regression test for #11715 (limit enforced before a queued command)} {
        clean_all
        r config set tracking-table-max-keys 2
        $rd HELLO 3
        $rd read
        $rd CLIENT TRACKING on
        assert_equal OK [$rd read]
        $rd mget "1{tag}" "2{tag}"
        assert_equal {{} {}} [$rd read]
        $rd multi
        assert_equal OK [$rd read]
        r config set tracking-table-max-keys 1
        $rd ping
        $rd exec
        assert_match "invalidate *{tag}" [$rd read]
        assert_equal QUEUED [$rd read]
        assert_equal PONG [$rd read]
        r config set tracking-table-max-keys 1000000
    }

    foreach resp {3 2} {
        test "RESP$resp based basic invalidation with client reply off" {
            clean_all
            $rd hello $resp
            $rd read
            $rd client tracking on
            $rd read
            $rd_sg set foo bar
            $rd get foo
            $rd read
            $rd client reply off
            $rd_sg set foo bar2
            if {$resp == 3} {
                assert_equal {invalidate foo} [$rd read]
            }
            $rd client reply on
            assert_equal OK [$rd read]
            $rd ping
            assert_equal PONG [$rd read]
        }
    }

    test {RESP3 based basic redirect invalidation with client reply off} {
        clean_all
        set rd_redir [redis_deferring_client]
        $rd_redir hello 3
        $rd_redir read
        $rd_redir client id
        set rd_redir_id [$rd_redir read]
        $rd client tracking on redirect $rd_redir_id
        $rd read
        $rd_sg set foo bar
        $rd get foo
        $rd read
        $rd_redir client reply off
        $rd_sg set foo bar2
        assert_equal {invalidate foo} [$rd_redir read]
        $rd_redir client reply on
        assert_equal OK [$rd_redir read]
        $rd_redir ping
        assert_equal PONG [$rd_redir read]
        $rd_redir close
    }

    test {RESP3 based basic tracking-redir-broken with client reply off} {
        clean_all
        $rd hello 3
        $rd read
        $rd client tracking on redirect $redir_id
        $rd read
        $rd_sg set foo bar
        $rd get foo
        $rd read
        $rd client reply off
        $rd_redirection quit
        $rd_redirection read
        $rd_sg set foo bar2
        assert {[lsearch -exact [$rd read] tracking-redir-broken] >= 0}
        $rd client reply on
        assert_equal OK [$rd read]
        $rd ping
        assert_equal PONG [$rd read]
        lassign [redirection_client] rd_redirection redir_id
    }

    test {Writers on every worker invalidate a tracking client on another one} {
        clean_all
        set c [tracking_client]
        set writers {}
        for {set i 0} {$i < 8} {incr i} {lappend writers [redis_client]}
        set i 0
        foreach w $writers {
            $c get wk$i
            $c read
            $w set wk$i $i
            assert_equal [list invalidate [list wk$i]] [$c read]
            incr i
        }
        # And the invalidation precedes the reply of the tracking client's
        # next command.
        $c get wk0
        $c read
        [lindex $writers 3] set wk0 x
        $c ping
        assert_equal {invalidate wk0} [$c read]
        assert_equal PONG [$c read]
        foreach w $writers {$w close}
        $c close
    }

    test {RESP2 redirection from several workers to one Pub/Sub client, exact bytes} {
        set trackers {}
        for {set i 0} {$i < 6} {incr i} {
            set t [redis_client]
            $t client tracking on redirect $redir_id
            $t get rk$i
            lappend trackers $t
        }
        for {set i 0} {$i < 6} {incr i} {
            $rd_sg set rk$i 1
            $rd_redirection flush
            assert_equal [inv_message rk$i] [$rd_redirection read_all 300]
        }
        foreach t $trackers {$t close}
    }

    test {Invalidations reach tracking clients for keys changed by EXEC and scripts on other connections} {
        set c [tracking_client]
        $c mget ek1{t} ek2{t} ek3{t}
        $c read
        $rd_sg set ek2{t} 0
        assert_equal {invalidate ek2{t}} [$c read]
        $c get ek2{t}
        $c read
        $rd_sg multi
        $rd_sg set ek1{t} 1
        $rd_sg del ek2{t}
        $rd_sg exec
        assert_equal {invalidate ek1{t}} [$c read]
        assert_equal {invalidate ek2{t}} [$c read]
        $rd_sg eval {redis.call('set', KEYS[1], 'v')} 1 ek3{t}
        assert_equal {invalidate ek3{t}} [$c read]
        $c close
    }

    test {Expired and evicted keys are invalidated} {
        set c [tracking_client]
        r debug set-active-expire 1
        $rd_sg set exk v px 50
        $c get exk
        $c read
        assert_equal {invalidate exk} [$c read]
        $c close
    }

    # tracking_clients once the clients clean_all closed are gone on the
    # server too (a close is asynchronous): the same count twice, 50 ms apart.
    proc settled_tracking_clients {} {
        set prev -1
        for {set i 0} {$i < 100} {incr i} {
            set n [s tracking_clients]
            if {$n == $prev} {return $n}
            set prev $n
            after 50
        }
        return $prev
    }

    test {Tracked keys of a client that went away stay until they change} {
        clean_all
        set before [settled_tracking_clients]
        set c [redis_client]
        $c client tracking on
        $c get gonekey
        assert_equal 1 [s tracking_total_keys]
        assert_equal [expr {$before + 1}] [s tracking_clients]
        $c close
        wait_for_condition 100 10 {[s tracking_clients] == $before} else {fail "tracking_clients"}
        assert_equal 1 [s tracking_total_keys]
        $rd_sg set gonekey 1
        assert_equal 0 [s tracking_total_keys]
        assert_equal 0 [s tracking_total_items]
    }

    test {tracking-table-max-keys is a CONFIG parameter} {
        assert_equal {tracking-table-max-keys 1000000} [r config get tracking-table-max-keys]
        assert_error {*argument must be between 0 and 9223372036854775807 inclusive*} {r config set tracking-table-max-keys -1}
        r config set tracking-table-max-keys 0
        assert_equal {tracking-table-max-keys 0} [r config get tracking-table-max-keys]
        r config set tracking-table-max-keys 1000000
    } {OK}

    $rd_redirection close
    $rd_sg close
    $rd close
}
