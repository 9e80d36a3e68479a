# Streams: the Redis 7.0 stream family (XADD, XRANGE, XREVRANGE, XLEN,
# XDEL, XTRIM, XSETID, XREAD with BLOCK) and consumer groups (XGROUP,
# XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO): every error, ID
# forms, trimming by whole nodes (XTRIM ~ depends on where runs end),
# random ranges against a Tcl model, blocking readers woken in order on
# other workers (--cores 2), unblocked with an error when their group or
# key goes, notifications, WATCH, DEBUG DIGEST-VALUE and persistence.

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}
set BADID {ERR Invalid stream ID specified as stream command argument}

if {[is_goblin]} {
    set ::stream_server_args {--cores 2}
} else {
    set ::stream_server_args {}
}

proc wait_blocked {n} {
    wait_for_condition 200 10 {
        [s blocked_clients] == $n
    } else {
        fail "expected $n blocked clients, INFO says [s blocked_clients]"
    }
}

proc blocked_client {args} {
    set before [s blocked_clients]
    set rd [redis_deferring_client]
    $rd {*}$args
    wait_blocked [expr {$before + 1}]
    return $rd
}

# Field/value pairs of XRANGE's entries as a flat list of IDs.
proc ids_of {entries} {
    set out {}
    foreach e $entries {lappend out [lindex $e 0]}
    return $out
}

proc stream_info {key field} {
    set info [r xinfo stream $key]
    return [dict get $info $field]
}

# XPENDING's extended form without the idle times.
proc pending_view {key group} {
    set out {}
    foreach p [r xpending $key $group - + 1000] {
        lappend out [list [lindex $p 0] [lindex $p 1] [lindex $p 3]]
    }
    return $out
}

# XADD n entries with IDs 1-0 .. n-0.
proc fill_stream {key n {from 1}} {
    for {set i $from} {$i < $from + $n} {incr i} {
        r xadd $key $i-0 item $i
    }
}

start_server [list tags {stream} args $::stream_server_args] {
    test {XADD with explicit IDs, ms-* and ms, XLEN, TYPE, OBJECT ENCODING} {
        r del s
        assert_equal 1-1 [r xadd s 1-1 a 1 b 2]
        assert_equal 1-2 [r xadd s 1-* a 3]
        assert_equal 2-0 [r xadd s 2 a 4]
        assert_equal 5-0 [r xadd s 5-* a 5]
        assert_equal 5-1 [r xadd s 5-* a 6]
        assert_equal 5 [r xlen s]
        assert_equal stream [r type s]
        assert_equal stream [r object encoding s]
        assert_equal {{1-1 {a 1 b 2}} {1-2 {a 3}}} [r xrange s - 1]
    }

    test {XADD ID errors} {
        r del s
        r xadd s 5-5 a 1
        assert_error {ERR The ID specified in XADD is equal or smaller than the target stream top item} {r xadd s 5-5 a 1}
        assert_error {ERR The ID specified in XADD is equal or smaller than the target stream top item} {r xadd s 4-9 a 1}
        assert_error {ERR The ID specified in XADD is equal or smaller than the target stream top item} {r xadd s 5 a 1}
        assert_error {ERR The ID specified in XADD must be greater than 0-0} {r xadd s2 0-0 a 1}
        assert_equal 0-1 [r xadd s2 0-* a 1]
        foreach bad {abc 1-x -1 1- 1--2 18446744073709551616 + - {} 1-1-1} {
            assert_error $::BADID [list r xadd s $bad a 1]
        }
        assert_error {ERR wrong number of arguments for 'xadd' command} {r xadd s 9-0 a}
        assert_error {ERR wrong number of arguments for 'xadd' command} {r xadd s 9-0 a 1 b}
        r xadd s 18446744073709551615-18446744073709551614 a 1
        assert_equal 18446744073709551615-18446744073709551615 [r xadd s 18446744073709551615-* a 1]
        assert_error {ERR The stream has exhausted the last possible ID, unable to add more items} {r xadd s * a 1}
        r set str x
        assert_error $::WRONGTYPE {r xadd str 1-1 a 1}
    }

    test {XADD with * is after the top item, NOMKSTREAM} {
        r del s
        set id [r xadd s * a 1]
        assert_match {*-0} $id
        r xadd s 99999999999999-5 a 2
        assert_equal 99999999999999-6 [r xadd s * a 3]
        assert_equal {} [r xadd nokey nomkstream * a 1]
        assert_equal 0 [r exists nokey]
        assert_equal 100-0 [r xadd s2 100-0 a 1]
        assert_equal 101-0 [r xadd s2 NOMKSTREAM 101-0 a 1]
    }

    test {XADD with MAXLEN and MINID, exact and approximate, LIMIT} {
        r del s
        for {set i 1} {$i <= 10} {incr i} {r xadd s maxlen 5 $i-0 x $i}
        assert_equal {6-0 7-0 8-0 9-0 10-0} [ids_of [r xrange s - +]]
        r xadd s maxlen = 3 11-0 x 11
        assert_equal 3 [r xlen s]
        r xadd s minid 10 12-0 x 12
        assert_equal {10-0 11-0 12-0} [ids_of [r xrange s - +]]
        assert_error {ERR syntax error, MAXLEN and MINID options at the same time are not compatible} {r xadd s maxlen 1 minid 1 13-0 a 1}
        assert_error {ERR The MAXLEN argument must be >= 0.} {r xadd s maxlen -1 13-0 a 1}
        assert_error {ERR value is not an integer or out of range} {r xadd s maxlen x 13-0 a 1}
        assert_error {ERR syntax error, LIMIT cannot be used without the special ~ option} {r xadd s maxlen 1 limit 10 13-0 a 1}
        assert_error {ERR The LIMIT argument must be >= 0.} {r xadd s maxlen ~ 1 limit -1 13-0 a 1}
        assert_error {ERR syntax error, LIMIT cannot be used without specifying a trimming strategy} {r xadd s limit 10 13-0 a 1}
        # MAXLEN 0 leaves an empty stream key
        r xadd s maxlen 0 13-0 a 1
        assert_equal 0 [r xlen s]
        assert_equal 1 [r exists s]
    }

    test {XTRIM ~ removes whole nodes only (stream-node-max-entries)} {
        r del s
        r config set stream-node-max-entries 10
        fill_stream s 95
        assert_equal 10 [stream_info s radix-tree-keys]
        assert_equal 0 [r xtrim s maxlen ~ 88]
        assert_equal 0 [r xtrim s maxlen ~ 86]
        assert_equal 10 [r xtrim s maxlen ~ 85]
        assert_equal 85 [r xlen s]
        assert_equal 20 [r xtrim s minid ~ 36]
        assert_equal {31-0} [lindex [ids_of [r xrange s - + count 1]] 0]
        assert_equal 5 [r xtrim s minid 36]
        assert_equal 36-0 [lindex [ids_of [r xrange s - + count 1]] 0]
        # LIMIT caps the entries one approximate trim removes
        # the first node has 5 live entries left, the next ones 10
        assert_equal 0 [r xtrim s maxlen ~ 0 limit 4]
        assert_equal 5 [r xtrim s maxlen ~ 0 limit 5]
        assert_equal 10 [r xtrim s maxlen ~ 0 limit 15]
        r config set stream-node-max-entries 100
    }

    test {XTRIM errors and missing keys} {
        assert_error {ERR syntax error, LIMIT cannot be used without specifying a trimming strategy} {r xtrim s limit 1}
        assert_error {ERR syntax error, XTRIM must be called with a trimming strategy} {r xtrim s limit 0}
        assert_error {ERR wrong number of arguments for 'xtrim' command} {r xtrim s}
        assert_error {ERR syntax error} {r xtrim s maxlen 1 foo}
        assert_equal 0 [r xtrim nokey maxlen 1]
        assert_error $::BADID {r xtrim s minid x}
        r set str x
        assert_error $::WRONGTYPE {r xtrim str maxlen 1}
    }

    test {XTRIM by bytes: stream-node-max-bytes starts new nodes} {
        r del s
        r config set stream-node-max-bytes 200
        for {set i 1} {$i <= 30} {incr i} {r xadd s $i-0 field [string repeat v 20]}
        set keys [stream_info s radix-tree-keys]
        assert {$keys > 3}
        r config set stream-node-max-bytes 4096
        assert_equal 30 [r xlen s]
    }

    test {XRANGE and XREVRANGE: bounds, COUNT, exclusive ranges} {
        r del s
        fill_stream s 10
        assert_equal {1-0 2-0 3-0} [ids_of [r xrange s - 3]]
        assert_equal {3-0 2-0 1-0} [ids_of [r xrevrange s 3 -]]
        assert_equal {2-0 3-0} [ids_of [r xrange s (1-0 3]]
        assert_equal {2-0} [ids_of [r xrange s (1-0 (3-0]]
        assert_equal {9-0 8-0} [ids_of [r xrevrange s (10-0 - count 2]]
        assert_equal {1-0 2-0} [ids_of [r xrange s - + count 2]]
        assert_equal {} [r xrange s - + count 0]
        assert_equal "*-1\r\n" [r rawcall xrange s - + count 0]
        assert_equal "*-1\r\n" [r rawcall xrange s - + count -5]
        assert_equal {} [r xrange s 5 4]
        assert_equal "*0\r\n" [r rawcall xrange nokey - +]
        assert_error $::BADID {r xrange s (- +}
        assert_error $::BADID {r xrange s - (+}
        assert_error {ERR invalid start ID for the interval} {r xrange s (18446744073709551615-18446744073709551615 +}
        assert_error {ERR invalid end ID for the interval} {r xrange s - (0-0}
        assert_error {ERR syntax error} {r xrange s - + count}
        assert_error {ERR value is not an integer or out of range} {r xrange s - + count x}
        r set str x
        assert_error $::WRONGTYPE {r xrange str - +}
    }

    test {XRANGE and XREVRANGE against a model, with deletions} {
        r del s
        set model {}
        set ms 0
        for {set i 0} {$i < 400} {incr i} {
            incr ms [expr {int(rand() * 3)}]
            set id [r xadd s $ms-* f $i [expr {$i % 3 ? "g" : "h"}] x]
            lappend model $id
        }
        for {set i 0} {$i < 80} {incr i} {
            set k [expr {int(rand() * [llength $model])}]
            set id [lindex $model $k]
            r xdel s $id
            set model [lreplace $model $k $k]
        }
        assert_equal [llength $model] [r xlen s]
        assert_equal $model [ids_of [r xrange s - +]]
        assert_equal [lreverse $model] [ids_of [r xrevrange s + -]]
        for {set j 0} {$j < 50} {incr j} {
            set a [lindex $model [expr {int(rand() * [llength $model])}]]
            set b [lindex $model [expr {int(rand() * [llength $model])}]]
            set want {}
            foreach id $model {
                lassign [split $id -] ms seq
                lassign [split $a -] ams aseq
                lassign [split $b -] bms bseq
                if {($ms > $ams || ($ms == $ams && $seq >= $aseq)) && ($ms < $bms || ($ms == $bms && $seq <= $bseq))} {
                    lappend want $id
                }
            }
            assert_equal $want [ids_of [r xrange s $a $b]]
            assert_equal [lreverse $want] [ids_of [r xrevrange s $b $a]]
        }
    }

    test {XDEL: count, missing IDs, first entry and max deleted ID} {
        r del s
        fill_stream s 5
        assert_equal 2 [r xdel s 1-0 3-0 9-9]
        assert_equal 0 [r xdel s 1-0]
        assert_equal 3 [r xlen s]
        assert_equal 2-0 [stream_info s recorded-first-entry-id]
        assert_equal 3-0 [stream_info s max-deleted-entry-id]
        assert_equal 0 [r xdel nokey bad]
        assert_error $::BADID {r xdel s bad}
        assert_equal 2 [r xdel s 2-0 4-0]
        assert_equal 1 [r xdel s 5-0]
        assert_equal 0 [r xlen s]
        assert_equal 1 [r exists s]
        assert_equal 0-0 [stream_info s recorded-first-entry-id]
    }

    test {XSETID with ENTRIESADDED and MAXDELETEDID} {
        r del s
        fill_stream s 3
        assert_equal OK [r xsetid s 10-0]
        assert_equal 10-0 [stream_info s last-generated-id]
        assert_error {ERR The ID specified in XADD is equal or smaller than the target stream top item} {r xadd s 9-0 a 1}
        assert_error {ERR The ID specified in XSETID is smaller than the target stream top item} {r xsetid s 2-0}
        assert_error {ERR The entries_added specified in XSETID is smaller than the target stream length} {r xsetid s 10-0 entriesadded 2}
        assert_error {ERR entries_added must be positive} {r xsetid s 10-0 entriesadded -1}
        assert_error {ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id} {r xsetid s 10-0 maxdeletedid 11-0}
        assert_equal OK [r xsetid s 20-0 entriesadded 50 maxdeletedid 15-0]
        assert_equal 50 [stream_info s entries-added]
        assert_equal 15-0 [stream_info s max-deleted-entry-id]
        assert_error {ERR no such key} {r xsetid nokey 1-0}
        assert_error {ERR syntax error} {r xsetid s 30-0 foo}
        assert_error $::BADID {r xsetid s +}
    }

    test {XSETID below a deleted top entry: later entries stay in ranges} {
        # 100-0 stays in its node as a deleted entry ahead of 60-0, whose ID
        # is smaller: it must not end a walk; 70-0 starts the next node,
        # whose key is below 100-0 too.
        r del s s2
        r config set stream-node-max-entries 3
        r xadd s 1-0 f a
        r xadd s 100-0 f b
        assert_equal 1 [r xdel s 100-0]
        assert_equal OK [r xsetid s 50-0]
        assert_equal 60-0 [r xadd s 60-0 f c]
        assert_equal 70-0 [r xadd s 70-0 f d]
        r config set stream-node-max-entries 100
        assert_equal 2 [stream_info s radix-tree-keys]
        assert_equal {{1-0 {f a}} {60-0 {f c}}} [r xrange s - 65]
        assert_equal {{1-0 {f a}} {60-0 {f c}}} [r xrange s - (70-0]
        assert_equal {{60-0 {f c}}} [r xrange s 60 60]
        assert_equal {{70-0 {f d}} {60-0 {f c}} {1-0 {f a}}} [r xrevrange s 80 -]
        assert_equal {{s {{60-0 {f c}} {70-0 {f d}}}}} [r xread streams s 1-0]
        # the loaders take it as Redis does
        set all [r xrange s - +]
        r restore s2 0 [r dump s]
        assert_equal $all [r xrange s2 - +]
        r debug reload
        assert_equal $all [r xrange s - 80]
        assert_equal 1 [r xdel s 60-0]
        assert_equal {{1-0 {f a}} {70-0 {f d}}} [r xrange s - +]
        assert_equal 2 [r xlen s]
    }

    test {XREAD: several streams, $, COUNT, errors} {
        r del s1 s2
        fill_stream s1 3
        r xadd s2 5-0 f v
        assert_equal {{s1 {{2-0 {item 2}} {3-0 {item 3}}}} {s2 {{5-0 {f v}}}}} [r xread streams s1 s2 1-0 0]
        assert_equal {{s1 {{1-0 {item 1}}}}} [r xread count 1 streams s1 nokey 0 0]
        assert_equal {} [r xread streams s1 $]
        assert_equal "*-1\r\n" [r rawcall xread streams s1 $]
        assert_error {ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.} {r xread streams s1 s2 0}
        assert_error {ERR wrong number of arguments for 'xread' command} {r xread streams s1}
        assert_error {ERR syntax error} {r xread count 1 foo streams s1 0}
        assert_error {ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.} {r xread group g c streams s1 0}
        assert_error {ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.} {r xread noack streams s1 0}
        assert_error {ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.} {r xread streams s1 >}
        assert_error {ERR timeout is negative} {r xread block -1 streams s1 0}
        assert_error {ERR timeout is not an integer or out of range} {r xread block 1.5 streams s1 0}
        assert_error $::BADID {r xread streams s1 +}
        r set str x
        assert_error $::WRONGTYPE {r xread streams str 0}
    }

    test {XREAD BLOCK: served by XADD, timeout, RESP3 null, $ means after now} {
        r del s
        r xadd s 1-0 a 1
        set rd [blocked_client xread block 0 streams s $]
        r xadd s 2-0 b 2
        assert_equal {{s {{2-0 {b 2}}}}} [$rd read]
        assert_equal {} [r xread block 30 streams s $]
        set c [redis_client]
        $c hello 3
        assert_equal "_\r\n" [$c rawcall xread block 20 streams s $]
        assert_equal {s {{1-0 {a 1}} {2-0 {b 2}}}} [$c xread streams s 0]
        $c close
    }

    test {XREAD BLOCK: a waiter whose ID is not reached stays, the next one is served} {
        r del s
        r xadd s 1-0 a 1
        set rd1 [blocked_client xread block 0 streams s 100-0]
        set rd2 [blocked_client xread block 0 streams s $]
        r xadd s 2-0 b 2
        assert_equal {{s {{2-0 {b 2}}}}} [$rd2 read]
        assert_equal 1 [s blocked_clients]
        r xadd s 101-0 c 3
        assert_equal {{s {{101-0 {c 3}}}}} [$rd1 read]
    }

    test {XREAD BLOCK: every reader of a key gets the new entry, COUNT caps it} {
        r del s
        set rds {}
        for {set i 0} {$i < 4} {incr i} {lappend rds [blocked_client xread block 0 count 1 streams s $]}
        r multi
        r xadd s 1-0 a 1
        r xadd s 2-0 a 2
        r exec
        foreach rd $rds {assert_equal {{s {{1-0 {a 1}}}}} [$rd read]}
    }

    test {XREAD BLOCK is served when the script that adds ends} {
        r del s
        set rd [blocked_client xread block 0 streams s $]
        r eval {redis.call('xadd', KEYS[1], '1-0', 'a', '1'); return redis.call('xadd', KEYS[1], '2-0', 'b', '2')} 1 s
        assert_equal {{s {{1-0 {a 1}} {2-0 {b 2}}}}} [$rd read]
    }

    test {XREAD BLOCK inside MULTI and from scripts} {
        r del s
        r multi
        r xread block 0 streams s $
        assert_equal {{}} [r exec]
        assert_error {*xread command is not allowed with BLOCK option from scripts*} {r eval {return redis.call('xread','block','0','streams','s','$')} 0}
    }

    test {XREAD BLOCK on a key of another type keeps waiting} {
        r del s
        set rd [blocked_client xread block 0 streams s $]
        r set s string
        r del s
        r xadd s 1-0 a 1
        assert_equal {{s {{1-0 {a 1}}}}} [$rd read]
    }

    test {XGROUP CREATE, MKSTREAM, ENTRIESREAD, errors} {
        r del s
        assert_error {ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.} {r xgroup create s g 0}
        assert_equal OK [r xgroup create s g $ mkstream]
        assert_equal 0 [r xlen s]
        assert_error {BUSYGROUP Consumer Group name already exists} {r xgroup create s g 0}
        assert_equal OK [r xgroup create s g2 0 entriesread 5]
        assert_error {ERR value for ENTRIESREAD must be positive or -1} {r xgroup create s g3 0 entriesread -2}
        assert_error $::BADID {r xgroup create s g3 x}
        assert_error {*unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP.} {r xgroup create s g3 0 foo}
        assert_error {NOGROUP No such consumer group 'nog' for key name 's'} {r xgroup setid s nog 0}
        r set str x
        assert_error $::WRONGTYPE {r xgroup create str g 0}
        set groups [r xinfo groups s]
        assert_equal 2 [llength $groups]
        assert_equal {name g consumers 0 pending 0 last-delivered-id 0-0 entries-read {} lag 0} [lindex $groups 0]
        assert_equal 5 [dict get [lindex $groups 1] entries-read]
        assert_match {*XGROUP <subcommand>*} [r xgroup help]
    }

    test {XREADGROUP: new entries, history, NOACK, PEL} {
        r del s
        r xadd s 1-0 a 1
        r xadd s 2-0 a 2
        r xadd s 3-0 a 3
        r xgroup create s g 0
        assert_equal {{s {{1-0 {a 1}}}}} [r xreadgroup group g alice count 1 streams s >]
        assert_equal {{s {{2-0 {a 2}} {3-0 {a 3}}}}} [r xreadgroup group g bob streams s >]
        assert_equal {} [r xreadgroup group g bob streams s >]
        assert_equal {{s {{1-0 {a 1}}}}} [r xreadgroup group g alice streams s 0]
        assert_equal {{s {}}} [r xreadgroup group g carol streams s 0]
        assert_equal {3 1-0 3-0 {{alice 1} {bob 2}}} [r xpending s g]
        r xadd s 4-0 a 4
        assert_equal {{s {{4-0 {a 4}}}}} [r xreadgroup group g dave noack streams s >]
        assert_equal 3 [lindex [r xpending s g] 0]
        assert_error {NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option} {r xreadgroup group nog c streams s >}
        assert_error {NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option} {r xreadgroup group g c streams nokey >}
        assert_error {ERR The $ ID is meaningless in the context of XREADGROUP*} {r xreadgroup group g c streams s $}
        assert_error {ERR Missing GROUP option for XREADGROUP} {r xreadgroup count 1 noack streams s >}
    }

    test {XREADGROUP: a deleted entry in the history replies a null body} {
        r del s
        r xadd s 1-0 a 1
        r xadd s 2-0 a 2
        r xgroup create s g 0
        r xreadgroup group g c streams s >
        r xdel s 1-0
        assert_equal {{s {{1-0 {}} {2-0 {a 2}}}}} [r xreadgroup group g c streams s 0]
        assert_equal "*1\r\n*2\r\n\$1\r\ns\r\n*2\r\n*2\r\n\$3\r\n1-0\r\n*-1\r\n*2\r\n\$3\r\n2-0\r\n*2\r\n\$1\r\na\r\n\$1\r\n2\r\n" [r rawcall xreadgroup group g c streams s 0]
    }

    test {XREADGROUP BLOCK: served by XADD, competing consumers in order} {
        r del s
        r xgroup create s g $ mkstream
        set rd1 [blocked_client xreadgroup group g c1 block 0 streams s >]
        set rd2 [blocked_client xreadgroup group g c2 block 0 streams s >]
        r xadd s 1-0 a 1
        assert_equal {{s {{1-0 {a 1}}}}} [$rd1 read]
        r xadd s 2-0 a 2
        assert_equal {{s {{2-0 {a 2}}}}} [$rd2 read]
        assert_equal {2 1-0 2-0 {{c1 1} {c2 1}}} [r xpending s g]
    }

    test {XREADGROUP BLOCK: the group destroyed, the key deleted or overwritten} {
        r del s
        r xgroup create s g $ mkstream
        set rd [blocked_client xreadgroup group g c block 0 streams s >]
        assert_equal 1 [r xgroup destroy s g]
        assert_error {NOGROUP the consumer group this client was blocked on no longer exists} {$rd read}
        r xgroup create s g $
        set rd [blocked_client xreadgroup group g c block 0 streams s >]
        r del s
        assert_error {UNBLOCKED the stream key no longer exists} {$rd read}
        r xgroup create s g $ mkstream
        set rd [blocked_client xreadgroup group g c block 0 streams s >]
        r set s overwritten
        assert_error {UNBLOCKED the stream key no longer exists} {$rd read}
        r del s
        r xgroup create s g $ mkstream
        set rd [blocked_client xreadgroup group g c block 0 streams s >]
        r flushall
        assert_error {UNBLOCKED the stream key no longer exists} {$rd read}
        assert_equal 0 [s blocked_clients]
    }

    test {Blocked XREADGROUP is unblocked when active expiry removes its stream; XREAD keeps waiting} {
        r del s s2
        r xgroup create s g $ mkstream
        set rd [blocked_client xreadgroup group g c block 0 streams s >]
        r xadd s2 1-0 f v
        set rd2 [blocked_client xread block 0 streams s2 $]
        r pexpire s 50
        r pexpire s2 50
        # No command touches the keys again: only the background cycle removes them.
        wait_for_condition 200 20 {[r dbsize] == 0} else {
            fail "the keys were not removed by active expiry"
        }
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {
            fail "XREADGROUP was not unblocked"
        }
        assert_error {UNBLOCKED the stream key no longer exists} {$rd read}
        $rd close
        r xadd s2 2-0 f w
        assert_equal {{s2 {{2-0 {f w}}}}} [$rd2 read]
        $rd2 close
        assert_equal 0 [s blocked_clients]
    }

    test {XREADGROUP BLOCK times out with a null reply} {
        r del s
        r xgroup create s g $ mkstream
        assert_equal {} [r xreadgroup group g c block 20 streams s >]
    }

    test {XACK} {
        r del s
        fill_stream s 3
        r xgroup create s g 0
        r xreadgroup group g c streams s >
        assert_equal 2 [r xack s g 1-0 2-0 9-9]
        assert_equal 0 [r xack s g 1-0]
        assert_equal 0 [r xack s nog 1-0]
        assert_equal 0 [r xack nokey g 1-0]
        assert_error $::BADID {r xack s g bad}
        assert_equal 1 [lindex [r xpending s g] 0]
    }

    test {XPENDING extended form, IDLE, consumer, errors} {
        r del s
        fill_stream s 5
        r xgroup create s g 0
        r xreadgroup group g alice count 2 streams s >
        r xreadgroup group g bob streams s >
        set p [r xpending s g - + 10]
        assert_equal 5 [llength $p]
        assert_equal {1-0 alice} [lrange [lindex $p 0] 0 1]
        assert_equal 1 [lindex [lindex $p 0] 3]
        assert_equal {3-0 4-0 5-0} [ids_of [r xpending s g - + 10 bob]]
        assert_equal {2-0 3-0} [ids_of [r xpending s g (1-0 + 2]]
        assert_equal {} [r xpending s g - + 10 nobody]
        assert_equal {} [r xpending s g idle 100000000 - + 10]
        assert_equal 5 [llength [r xpending s g idle 0 - + 10]]
        assert_error {ERR syntax error} {r xpending s g - +}
        assert_error {ERR syntax error} {r xpending s g idle 10 - +}
        assert_error {ERR value is not an integer or out of range} {r xpending s g - + x}
        assert_error {NOGROUP No such key 's' or consumer group 'nog'} {r xpending s nog}
        r xgroup create s empty $
        assert_equal {0 {} {} {}} [r xpending s empty]
        assert_equal "*4\r\n:0\r\n\$-1\r\n\$-1\r\n*-1\r\n" [r rawcall xpending s empty]
    }

    test {XGROUP CREATECONSUMER, DELCONSUMER, SETID, DESTROY} {
        r del s
        fill_stream s 3
        r xgroup create s g 0
        assert_equal 1 [r xgroup createconsumer s g alice]
        assert_equal 0 [r xgroup createconsumer s g alice]
        r xreadgroup group g bob streams s >
        assert_equal 3 [r xgroup delconsumer s g bob]
        assert_equal 0 [r xgroup delconsumer s g nobody]
        assert_equal {0 {} {} {}} [r xpending s g]
        assert_equal OK [r xgroup setid s g 0]
        assert_equal {{s {{1-0 {item 1}} {2-0 {item 2}} {3-0 {item 3}}}}} [r xreadgroup group g c streams s >]
        assert_equal OK [r xgroup setid s g $ entriesread 3]
        assert_equal 0 [dict get [lindex [r xinfo groups s] 0] lag]
        assert_equal 1 [r xgroup destroy s g]
        assert_equal 0 [r xgroup destroy s g]
        assert_error {NOGROUP No such consumer group 'g' for key name 's'} {r xgroup createconsumer s g x}
    }

    test {XCLAIM: ownership, JUSTID, RETRYCOUNT, FORCE, LASTID, deleted entries} {
        r del s
        fill_stream s 4
        r xgroup create s g 0
        r xreadgroup group g alice streams s >
        assert_equal {{1-0 {item 1}}} [r xclaim s g bob 0 1-0]
        assert_equal bob [lindex [lindex [r xpending s g 1-0 1-0 1] 0] 1]
        assert_equal 2 [lindex [lindex [r xpending s g 1-0 1-0 1] 0] 3]
        assert_equal {1-0} [r xclaim s g carol 0 1-0 justid]
        assert_equal 2 [lindex [lindex [r xpending s g 1-0 1-0 1] 0] 3]
        assert_equal {2-0} [r xclaim s g carol 0 2-0 retrycount 7 justid]
        assert_equal 7 [lindex [lindex [r xpending s g 2-0 2-0 1] 0] 3]
        assert_equal {} [r xclaim s g carol 100000000 3-0]
        r xadd s 5-0 item 5
        assert_equal {} [r xclaim s g carol 0 5-0]
        assert_equal {{5-0 {item 5}}} [r xclaim s g carol 0 5-0 force]
        r xdel s 4-0
        assert_equal {} [r xclaim s g carol 0 4-0]
        assert_equal 4 [lindex [r xpending s g] 0]
        assert_equal {} [r xclaim s g carol 0 99-0 lastid 100-0 justid]
        assert_equal 100-0 [dict get [lindex [r xinfo groups s] 0] last-delivered-id]
        assert_error {ERR Invalid min-idle-time argument for XCLAIM} {r xclaim s g c x 1-0}
        assert_error {ERR Unrecognized XCLAIM option 'foo'} {r xclaim s g c 0 1-0 foo}
        assert_error {ERR Invalid IDLE option argument for XCLAIM} {r xclaim s g c 0 1-0 idle x}
        assert_error {NOGROUP No such key 's' or consumer group 'nog'} {r xclaim s nog c 0 1-0}
    }

    test {XAUTOCLAIM: cursor, COUNT, JUSTID and the deleted IDs of 7.0} {
        r del s
        fill_stream s 5
        r xgroup create s g 0
        r xreadgroup group g alice streams s >
        r xdel s 2-0
        set r1 [r xautoclaim s g bob 0 0 count 2]
        assert_equal [list 3-0 {{1-0 {item 1}}} [list 2-0]] $r1
        assert_equal {0-0 {3-0 4-0 5-0} {}} [r xautoclaim s g bob 0 3-0 justid]
        assert_equal {0-0 {} {}} [r xautoclaim s g bob 100000000 0]
        assert_error {ERR COUNT must be > 0} {r xautoclaim s g bob 0 0 count 0}
        assert_error {ERR Invalid min-idle-time argument for XAUTOCLAIM} {r xautoclaim s g bob x 0}
        assert_error {ERR syntax error} {r xautoclaim s g bob 0 0 foo}
        assert_error {NOGROUP No such key 's' or consumer group 'nog'} {r xautoclaim s nog bob 0 0}
    }

    test {XINFO STREAM, FULL, GROUPS lag and entries-read, CONSUMERS} {
        r del s
        fill_stream s 5
        r xgroup create s g 0
        r xreadgroup group g alice count 2 streams s >
        set info [r xinfo stream s]
        assert_equal 5 [dict get $info length]
        assert_equal 1 [dict get $info radix-tree-keys]
        assert_equal 2 [dict get $info radix-tree-nodes]
        assert_equal 5-0 [dict get $info last-generated-id]
        assert_equal 5 [dict get $info entries-added]
        assert_equal 1 [dict get $info groups]
        assert_equal {1-0 {item 1}} [dict get $info first-entry]
        assert_equal {5-0 {item 5}} [dict get $info last-entry]
        set g [lindex [r xinfo groups s] 0]
        assert_equal 2 [dict get $g entries-read]
        assert_equal 3 [dict get $g lag]
        r xdel s 4-0
        assert_equal {} [dict get [lindex [r xinfo groups s] 0] lag]
        set c [lindex [r xinfo consumers s g] 0]
        assert_equal {alice 2} [list [dict get $c name] [dict get $c pending]]
        set full [r xinfo stream s full count 1]
        assert_equal 1 [llength [dict get $full entries]]
        set fg [lindex [dict get $full groups] 0]
        assert_equal 2 [dict get $fg pel-count]
        assert_equal 1 [llength [dict get $fg pending]]
        assert_error {ERR no such key} {r xinfo stream nokey}
        assert_error {NOGROUP No such consumer group 'nog' for key name 's'} {r xinfo consumers s nog}
        assert_error {ERR unknown subcommand 'foo'. Try XINFO HELP.} {r xinfo foo s}
        assert_error {*unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.} {r xinfo stream s foo}
        r del e
        r xgroup create e g $ mkstream
        assert_equal {} [dict get [r xinfo stream e] first-entry]
    }

    test {XINFO STREAM radix-tree-nodes as Redis's rax counts them} {
        r del s
        r config set stream-node-max-entries 2
        foreach id {1-0 2-0 256-0 257-0 65536-0 65537-0 65538-0} {r xadd s $id a 1}
        assert_equal 4 [stream_info s radix-tree-keys]
        # keys 1, 256, 65536, 65538: a compressed root over 5 zero
        # bytes, a branch, then (1, 256) branch at once and (65536,
        # 65538) after one more shared byte; each key ends in a node
        assert_equal 13 [stream_info s radix-tree-nodes]
        r config set stream-node-max-entries 100
    }

    test {Keyspace notifications of stream commands} {
        r del s
        r config set notify-keyspace-events KEA
        set sub [event_subscriber mark __keyevent@*__:*]
        r xadd s 1-0 a 1
        r xadd s maxlen 1 2-0 a 2
        r xdel s 2-0
        r xtrim s maxlen 0
        r xsetid s 5-0
        r xgroup create s g 0
        r xgroup createconsumer s g c
        r xgroup delconsumer s g c
        r xgroup setid s g 0
        r xreadgroup group g c2 streams s >
        r xgroup destroy s g
        r del s
        set ev {}
        foreach e [events_until_marker $sub mark] {lappend ev [lindex [split [lindex $e 0] :] end]}
        assert_equal {xadd xadd xtrim xdel xsetid xgroup-create xgroup-createconsumer xgroup-delconsumer xgroup-setid xgroup-destroy del} $ev
        r config set notify-keyspace-events ""
    }

    test {WATCH: XADD touches the key, XREADGROUP does not} {
        r del s
        r xadd s 1-0 a 1
        r xgroup create s g 0
        r watch s
        set c [redis_client]
        $c xreadgroup group g c streams s >
        r multi
        r ping
        assert_equal PONG [r exec]
        r watch s
        $c xadd s 2-0 a 2
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {COPY, RENAME and DEBUG DIGEST-VALUE of streams} {
        r del s s2
        fill_stream s 3
        r xgroup create s g 0
        r xreadgroup group g c streams s >
        assert_equal 1 [r copy s s2]
        assert_equal [r debug digest-value s] [r debug digest-value s2]
        r xadd s2 4-0 a 1
        assert_equal 3 [r xlen s]
        assert_equal {3 1-0 3-0 {{c 3}}} [r xpending s2 g]
        r rename s2 s3
        assert_equal 4 [r xlen s3]
        assert_not_equal [r debug digest-value s] [r debug digest-value s3]
        assert {[r memory usage s] > 0}
    }

    test {Streams survive DEBUG RELOAD and a restart, groups included} {
        r flushall
        r config set stream-node-max-entries 4
        fill_stream s 30
        r xdel s 5-0 6-0 7-0 8-0 20-0
        r xgroup create s g 0 entriesread 0
        r xreadgroup group g alice count 10 streams s >
        r xack s g 2-0
        r xgroup create s g2idle $
        r xgroup createconsumer s g2idle bob
        r xadd empty 1-0 a 1
        r xdel empty 1-0
        r config set stream-node-max-entries 100
        set d1 [r debug digest]
        set before [list [r xrange s - +] [pending_view s g] [r xinfo groups s] [stream_info s radix-tree-keys] [r xinfo stream empty]]
        r debug reload
        assert_equal $d1 [r debug digest]
        assert_equal $before [list [r xrange s - +] [pending_view s g] [r xinfo groups s] [stream_info s radix-tree-keys] [r xinfo stream empty]]
        r save
        restart_server
        assert_equal $d1 [r debug digest]
        assert_equal [lindex $before 1] [pending_view s g]
    }

    test {DUMP / RESTORE of a stream} {
        r del s s2
        fill_stream s 10
        r xgroup create s g 0
        r xreadgroup group g c count 3 streams s >
        set payload [r dump s]
        r restore s2 0 $payload
        assert_equal [r xrange s - +] [r xrange s2 - +]
        assert_equal [r xpending s g] [r xpending s2 g]
        assert_equal [r debug digest-value s] [r debug digest-value s2]
    }
}
