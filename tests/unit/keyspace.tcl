# Keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY,
# RENAME, RENAMENX, MOVE, COPY, TOUCH, SELECT, SWAPDB, DBSIZE, FLUSHDB,
# FLUSHALL.

# Every key a full SCAN returns (duplicates kept), with extra SCAN options.
proc scan_all {args} {
    set cursor 0
    set keys {}
    set rounds 0
    while {1} {
        lassign [r scan $cursor {*}$args] cursor batch
        lappend keys {*}$batch
        if {$cursor == 0} break
        if {[incr rounds] > 100000} {fail "SCAN did not return to cursor 0"}
    }
    return $keys
}

proc populate {n {prefix key:} {value v}} {
    set c [redis_client]
    set buf ""
    for {set i 0} {$i < $n} {incr i} {
        append buf [::resp::encode [list set $prefix$i $value]]
    }
    $c write $buf
    $c flush
    for {set i 0} {$i < $n} {incr i} {$c read}
    $c close
}

start_server {tags {keyspace}} {

    test {DEL of one key} {
        r set foo bar
        assert_equal 1 [r del foo]
        assert_equal {} [r get foo]
        assert_equal 0 [r exists foo]
    }

    test {DEL of several keys counts only the existing ones} {
        r mset a 1 b 2 c 3
        assert_equal 2 [r del a b nosuch]
        assert_equal 1 [r del a b c]
        assert_equal 0 [r del a b c]
    }

    test {DEL of the same key twice counts once} {
        r set a 1
        assert_equal 1 [r del a a]
    }

    test {DEL arity} {
        assert_error {ERR wrong number of arguments for 'del' command} {r del}
    }

    test {UNLINK behaves like DEL} {
        r mset a 1 b 2
        assert_equal 2 [r unlink a b nosuch]
        assert_equal 0 [r exists a b]
        assert_error {ERR wrong number of arguments for 'unlink' command} {r unlink}
    }

    test {UNLINK of a large value} {
        r set big [string repeat x 1000000]
        assert_equal 1 [r unlink big]
        assert_equal 0 [r exists big]
    }

    test {EXISTS counts every argument, repeats included} {
        r flushdb
        r set x 1
        r set y 2
        assert_equal 1 [r exists x]
        assert_equal 0 [r exists nosuch]
        assert_equal 2 [r exists x y nosuch]
        assert_equal 3 [r exists x x x]
    }

    test {TYPE} {
        r set s v
        assert_equal string [r type s]
        assert_equal none [r type nosuch]
        assert_equal "+string\r\n" [r rawcall type s]
        assert_equal "+none\r\n" [r rawcall type nosuch]
    }

    test {TYPE of an integer-encoded value is string} {
        r set n 12345
        assert_equal string [r type n]
    }

    test {TYPE of a collection} {
        set type [make_nonstring_key coll]
        assert_equal $type [r type coll]
        assert_equal "+$type\r\n" [r rawcall type coll]
        r del coll
    }

    test {Binary-safe key names} {
        set k "a\x00b\r\nc"
        r set $k v
        assert_equal v [r get $k]
        assert_equal 1 [r exists $k]
        assert_equal 0 [r exists "a"]
        assert_equal 1 [r del $k]
    }

    test {The empty string is a valid key} {
        r set "" empty
        assert_equal empty [r get ""]
        assert_equal 1 [r del ""]
    }

    test {KEYS on an empty database} {
        r flushdb
        assert_equal {} [r keys *]
        assert_equal "*0\r\n" [r rawcall keys *]
    }

    test {KEYS with glob patterns} {
        r flushdb
        foreach k {foo foa fob f.o f*o f?o {f[o} hello hallo hxllo hllo heeeello
                   {a\b} {x]y} f-o f^o f!o F} {
            r set $k 1
        }
        assert_equal [lsort {F {a\b} f!o f*o f-o f.o f?o {f[o} f^o foa fob foo hallo heeeello hello hllo hxllo {x]y}}] \
            [lsort [r keys *]]
        assert_equal [lsort {f!o f*o f-o f.o f?o {f[o} f^o foa fob foo}] [lsort [r keys f*]]
        assert_equal [lsort {f!o f*o f-o f.o f?o {f[o} f^o foo}] [lsort [r keys f?o]]
        assert_equal [lsort {hallo hello hxllo}] [lsort [r keys h?llo]]
        assert_equal [lsort {hallo heeeello hello hllo hxllo}] [lsort [r keys h*llo]]
        assert_equal [lsort {hallo hello}] [lsort [r keys {h[ae]llo}]]
        assert_equal [lsort {hallo hxllo}] [lsort [r keys {h[^e]llo}]]
        assert_equal {hallo} [r keys {h[a-b]llo}]
        assert_equal {hallo} [r keys {h[b-a]llo}]
        assert_equal [lsort {f!o f*o f-o f.o f?o {f[o} f^o}] [lsort [r keys {f[^a-z]o}]]
        assert_equal {F} [r keys F]
        assert_equal {F} [r keys {[fF]}]
        assert_equal {} [r keys f]
    }

    test {KEYS escapes and special characters} {
        assert_equal {f*o} [r keys {f\*o}]
        assert_equal {f?o} [r keys {f\?o}]
        assert_equal {{f[o}} [r keys {f\[o}]
        assert_equal {{a\b}} [r keys {a\\b}]
        assert_equal {f*o} [r keys {f[*]o}]
        assert_equal {f!o} [r keys {f[!]o}]
        assert_equal {f-o} [r keys {f[-]o}]
        assert_equal [list {x]y}] [r keys {x]y}]
        assert_equal [list {x]y}] [r keys {x\]y}]
    }

    test {KEYS with unterminated brackets match nothing here} {
        assert_equal {} [r keys {f[o}]
        assert_equal {} [r keys {h[e}]
        assert_equal {} [r keys {*[}]
    }

    test {KEYS arity} {
        assert_error {ERR wrong number of arguments for 'keys' command} {r keys}
        assert_error {ERR wrong number of arguments for 'keys' command} {r keys a b}
    }

    test {SCAN returns every key (COUNT 10)} {
        r flushdb
        populate 1000
        set keys [scan_all count 10]
        assert_equal 1000 [llength [lsort -unique $keys]]
    }

    test {SCAN returns every key with the default COUNT} {
        set keys [scan_all]
        assert_equal 1000 [llength [lsort -unique $keys]]
    }

    test {SCAN returns every key (COUNT 1 and COUNT 1000)} {
        assert_equal 1000 [llength [lsort -unique [scan_all count 1]]]
        assert_equal 1000 [llength [lsort -unique [scan_all count 1000]]]
    }

    test {SCAN reply shape} {
        r flushdb
        r set onlykey 1
        assert_equal "*2\r\n\$1\r\n0\r\n*1\r\n\$7\r\nonlykey\r\n" [r rawcall scan 0 count 100]
        r del onlykey
        assert_equal "*2\r\n\$1\r\n0\r\n*0\r\n" [r rawcall scan 0]
    }

    test {SCAN MATCH} {
        r flushdb
        populate 1000
        set keys [lsort -unique [scan_all match key:1* count 50]]
        set expected {}
        for {set i 0} {$i < 1000} {incr i} {
            if {[string match 1* $i]} {lappend expected key:$i}
        }
        assert_equal [lsort $expected] $keys
    }

    test {SCAN MATCH with no matching key} {
        assert_equal {} [scan_all match nomatch* count 100]
    }

    test {SCAN TYPE string} {
        assert_equal 1000 [llength [lsort -unique [scan_all type string count 100]]]
    }

    test {SCAN TYPE of another type returns nothing} {
        assert_equal {} [scan_all type list count 100]
        assert_equal {} [scan_all type hash count 100]
    }

    test {SCAN TYPE with an unknown type name returns nothing} {
        assert_equal {} [scan_all type nosuchtype count 100]
    }

    test {SCAN TYPE filters mixed types} {
        r flushdb
        for {set i 0} {$i < 30} {incr i} {set type [make_nonstring_key l:$i]}
        populate 50 s:
        assert_equal 50 [llength [lsort -unique [scan_all type string]]]
        assert_equal 30 [llength [lsort -unique [scan_all type $type]]]
        assert_equal 30 [llength [lsort -unique [scan_all type [string toupper $type]]]]
    }

    test {SCAN MATCH and TYPE together} {
        r flushdb
        populate 100 a:
        populate 100 b:
        assert_equal 100 [llength [lsort -unique [scan_all match a:* type string count 20]]]
    }

    test {SCAN never misses keys present for the whole scan while the table grows} {
        r flushdb
        populate 200 stay:
        set cursor 0
        set seen {}
        set added 0
        while {1} {
            lassign [r scan $cursor count 10] cursor batch
            lappend seen {*}$batch
            # Grow the keyspace a lot while the scan is in progress.
            if {$added < 5000} {
                populate 500 grow$added:
                incr added 500
            }
            if {$cursor == 0} break
        }
        set missing 0
        for {set i 0} {$i < 200} {incr i} {
            if {[lsearch -exact $seen stay:$i] < 0} {incr missing}
        }
        assert_equal 0 $missing "keys present during the whole scan that SCAN missed"
    }

    test {SCAN never misses keys present for the whole scan while the table shrinks} {
        r flushdb
        populate 200 stay:
        populate 3000 gone:
        set cursor 0
        set seen {}
        set deleted 0
        while {1} {
            lassign [r scan $cursor count 20] cursor batch
            lappend seen {*}$batch
            if {$deleted < 3000} {
                set dels {}
                for {set i $deleted} {$i < $deleted + 500} {incr i} {lappend dels gone:$i}
                r del {*}$dels
                incr deleted 500
            }
            if {$cursor == 0} break
        }
        set missing 0
        for {set i 0} {$i < 200} {incr i} {
            if {[lsearch -exact $seen stay:$i] < 0} {incr missing}
        }
        assert_equal 0 $missing
    }

    test {SCAN errors} {
        assert_error {ERR invalid cursor} {r scan abc}
        assert_error {ERR syntax error} {r scan 0 count 0}
        assert_error {ERR value is not an integer or out of range} {r scan 0 count abc}
        assert_error {ERR syntax error} {r scan 0 match}
        assert_error {ERR syntax error} {r scan 0 foo bar}
        assert_error {ERR wrong number of arguments for 'scan' command} {r scan}
    }

    test {SCAN with a huge cursor does not fail} {
        set res [r scan 18446744073709551615]
        assert_equal 2 [llength $res]
    }

    test {RANDOMKEY on an empty database} {
        r flushdb
        assert_equal {} [r randomkey]
        assert_equal "\$-1\r\n" [r rawcall randomkey]
    }

    test {RANDOMKEY with one key} {
        r set only 1
        assert_equal only [r randomkey]
    }

    test {RANDOMKEY returns existing keys, and all of them eventually} {
        r flushdb
        r mset a 1 b 2 c 3
        set seen {}
        for {set i 0} {$i < 200} {incr i} {
            dict set seen [r randomkey] 1
        }
        assert_equal {a b c} [lsort [dict keys $seen]]
    }

    test {RENAME basics} {
        r flushdb
        r set src hello
        assert_equal OK [r rename src dst]
        assert_equal {} [r get src]
        assert_equal hello [r get dst]
    }

    test {RENAME overwrites the destination} {
        r set src a
        r set dst b
        r rename src dst
        assert_equal a [r get dst]
        assert_equal 0 [r exists src]
    }

    test {RENAME of a missing key} {
        assert_error {ERR no such key} {r rename nosuch dst}
    }

    test {RENAME a key onto itself} {
        r set self v
        assert_equal OK [r rename self self]
        assert_equal v [r get self]
        assert_error {ERR no such key} {r rename nosuch nosuch}
    }

    test {RENAME keeps the TTL} {
        r set src v ex 100
        r rename src dst
        assert_range [r ttl dst] 90 100
    }

    test {RENAME drops the TTL of the overwritten destination} {
        r set src v
        r set dst w ex 100
        r rename src dst
        assert_equal -1 [r ttl dst]
    }

    test {RENAMENX} {
        r flushdb
        r set src a
        assert_equal 1 [r renamenx src dst]
        assert_equal a [r get dst]
        r set src b
        assert_equal 0 [r renamenx src dst]
        assert_equal a [r get dst]
        assert_equal b [r get src]
    }

    test {RENAMENX onto itself and of a missing key} {
        r set self v
        assert_equal 0 [r renamenx self self]
        assert_error {ERR no such key} {r renamenx nosuch x}
    }

    test {MOVE to another database} {
        r select 9
        r flushdb
        r select 0
        r flushdb
        r set mykey v
        assert_equal 1 [r move mykey 9]
        assert_equal 0 [r exists mykey]
        r select 9
        assert_equal v [r get mykey]
        r select 0
    }

    test {MOVE fails when the key exists in the target} {
        r set mykey here
        assert_equal 0 [r move mykey 9]
        assert_equal here [r get mykey]
        r select 9
        assert_equal v [r get mykey]
        r flushdb
        r select 0
    }

    test {MOVE of a missing key} {
        assert_equal 0 [r move nosuch 9]
    }

    test {MOVE keeps the TTL} {
        r set ttlkey v ex 100
        assert_equal 1 [r move ttlkey 9]
        r select 9
        assert_range [r ttl ttlkey] 90 100
        r flushdb
        r select 0
    }

    test {MOVE errors} {
        assert_error {ERR source and destination objects are the same} {r move mykey 0}
        assert_error {ERR DB index is out of range} {r move mykey 16}
        assert_error {ERR DB index is out of range} {r move mykey -1}
        assert_error {ERR value is not an integer or out of range} {r move mykey abc}
    }

    test {COPY basics} {
        r flushdb
        r set src hello
        assert_equal 1 [r copy src dst]
        assert_equal hello [r get dst]
        assert_equal hello [r get src]
        # The copy is independent.
        r append dst !
        assert_equal hello [r get src]
        assert_equal hello! [r get dst]
    }

    test {COPY does not overwrite without REPLACE} {
        r set src a
        r set dst b
        assert_equal 0 [r copy src dst]
        assert_equal b [r get dst]
        assert_equal 1 [r copy src dst replace]
        assert_equal a [r get dst]
    }

    test {COPY of a missing key} {
        assert_equal 0 [r copy nosuch dst2]
        assert_equal 0 [r exists dst2]
    }

    test {COPY keeps the TTL} {
        r set src v ex 100
        r del dst
        r copy src dst
        assert_range [r ttl dst] 90 100
    }

    test {COPY to another database} {
        r select 9
        r flushdb
        r select 0
        r set src indb
        assert_equal 1 [r copy src src db 9]
        r select 9
        assert_equal indb [r get src]
        r flushdb
        r select 0
    }

    test {COPY of an integer value} {
        r set n 42
        r copy n n2
        assert_equal 43 [r incr n2]
        assert_equal 42 [r get n]
    }

    test {COPY errors} {
        assert_error {ERR source and destination objects are the same} {r copy src src}
        assert_error {ERR DB index is out of range} {r copy src x db 16}
        assert_error {ERR value is not an integer or out of range} {r copy src x db abc}
        assert_error {ERR syntax error} {r copy src x foo}
        assert_error {ERR wrong number of arguments for 'copy' command} {r copy src}
    }

    test {TOUCH counts the existing keys} {
        r flushdb
        r mset a 1 b 2
        assert_equal 2 [r touch a b c]
        assert_equal 0 [r touch nosuch]
        assert_error {ERR wrong number of arguments for 'touch' command} {r touch}
    }

    test {SELECT isolates databases} {
        r select 0
        r set k db0
        r select 1
        assert_equal {} [r get k]
        r set k db1
        r select 0
        assert_equal db0 [r get k]
        r select 1
        r flushdb
        r select 0
    }

    test {SELECT errors} {
        assert_error {ERR DB index is out of range} {r select 16}
        assert_error {ERR DB index is out of range} {r select -1}
        assert_error {ERR value is not an integer or out of range} {r select abc}
    }

    test {SELECT is per connection} {
        set c [redis_client]
        $c select 3
        $c set conn here
        assert_equal {} [r get conn]
        assert_equal here [$c get conn]
        $c flushdb
        $c close
    }

    test {SWAPDB swaps the contents of two databases} {
        r flushall
        r set k zero
        r select 1
        r set k one
        r set only1 x
        r select 0
        assert_equal OK [r swapdb 0 1]
        assert_equal one [r get k]
        assert_equal x [r get only1]
        r select 1
        assert_equal zero [r get k]
        assert_equal 1 [r dbsize]
        r select 0
        assert_equal 2 [r dbsize]
    }

    test {SWAPDB is seen by other connections on those databases} {
        set c [redis_client]
        $c select 1
        assert_equal zero [$c get k]
        r swapdb 0 1
        assert_equal one [$c get k]
        $c close
    }

    test {SWAPDB of a database with itself} {
        assert_equal OK [r swapdb 2 2]
    }

    test {SWAPDB errors} {
        assert_error {ERR invalid first DB index} {r swapdb abc 0}
        assert_error {ERR invalid second DB index} {r swapdb 0 abc}
        assert_error {ERR DB index is out of range} {r swapdb 0 16}
        assert_error {ERR DB index is out of range} {r swapdb -1 0}
        assert_error {ERR wrong number of arguments for 'swapdb' command} {r swapdb 0}
    }

    test {DBSIZE} {
        r flushall
        assert_equal 0 [r dbsize]
        r mset a 1 b 2 c 3
        assert_equal 3 [r dbsize]
        r del a
        assert_equal 2 [r dbsize]
        r select 1
        assert_equal 0 [r dbsize]
        r select 0
    }

    test {DBSIZE of many keys} {
        r flushdb
        populate 5000
        assert_equal 5000 [r dbsize]
    }

    test {FLUSHDB empties only the selected database} {
        r flushall
        r set a 1
        r select 1
        r set b 1
        r select 0
        assert_equal OK [r flushdb]
        assert_equal 0 [r dbsize]
        r select 1
        assert_equal 1 [r dbsize]
        r select 0
    }

    test {FLUSHALL empties every database} {
        r set a 1
        assert_equal OK [r flushall]
        assert_equal 0 [r dbsize]
        r select 1
        assert_equal 0 [r dbsize]
        r select 0
    }

    test {FLUSHDB and FLUSHALL with ASYNC and SYNC} {
        populate 100
        assert_equal OK [r flushdb async]
        assert_equal 0 [r dbsize]
        populate 100
        assert_equal OK [r flushdb sync]
        assert_equal 0 [r dbsize]
        populate 100
        assert_equal OK [r flushall async]
        assert_equal 0 [r dbsize]
        populate 100
        assert_equal OK [r flushall SYNC]
        assert_equal 0 [r dbsize]
    }

    # Objects freed by the lazy-free thread, once it has nothing pending.
    proc lazyfreed {} {
        wait_for_condition 200 10 {[getInfoProperty [r info memory] lazyfree_pending_objects] == 0} else {
            fail "lazy free still pending"
        }
        getInfoProperty [r info memory] lazyfreed_objects
    }

    test {UNLINK hands a large collection to the lazy-free thread, not a small one} {
        r flushall
        r config resetstat
        set before [lazyfreed]
        r del lz
        for {set i 0} {$i < 2000} {incr i 100} {
            set args {}
            for {set j $i} {$j < $i + 100} {incr j} {lappend args $j m$j}
            r zadd lz {*}$args
        }
        r sadd small a b c
        assert_equal 1 [r unlink small]
        assert_equal $before [lazyfreed]
        assert_equal 1 [r unlink lz]
        assert_equal 0 [r exists lz]
        wait_for_condition 100 20 {[lazyfreed] == $before + 1} else {fail "the zset was not freed in the background"}
        assert_equal 0 [getInfoProperty [r info memory] lazyfree_pending_objects]
        # The key is free at once for a new value.
        r zadd lz 1 a
        assert_equal {a} [r zrange lz 0 -1]
    }

    test {UNLINK frees a stream of many nodes or pending entries in the background, not a small one} {
        r flushall
        set before [lazyfreed]
        r config set stream-node-max-entries 5
        for {set i 0} {$i < 1000} {incr i} { r xadd lst * f $i }
        r xadd tiny * f 1
        r xgroup create tiny g 0
        assert_equal 1 [r unlink tiny]
        assert_equal $before [lazyfreed]
        # 200 nodes of 5 entries: more than Redis's effort threshold of 64.
        assert_equal 1 [r unlink lst]
        wait_for_condition 100 20 {[lazyfreed] == $before + 1} else {fail "the stream was not freed in the background"}
        r config set stream-node-max-entries 100
        # Few nodes, but a group with 100 pending entries.
        for {set i 0} {$i < 100} {incr i} { r xadd lpel * f $i }
        r xgroup create lpel g 0
        r xreadgroup group g c streams lpel >
        assert_equal 1 [r unlink lpel]
        wait_for_condition 100 20 {[lazyfreed] == $before + 2} else {fail "the stream's PEL was not freed in the background"}
    }

    test {DEL frees in the background under lazyfree-lazy-user-del} {
        r del lh
        for {set i 0} {$i < 1000} {incr i} {r hset lh f$i v$i}
        set before [lazyfreed]
        r config set lazyfree-lazy-user-del yes
        assert_equal 1 [r del lh]
        r config set lazyfree-lazy-user-del no
        wait_for_condition 100 20 {[lazyfreed] == $before + 1} else {fail "DEL did not free in the background"}
        for {set i 0} {$i < 1000} {incr i} {r hset lh f$i v$i}
        assert_equal 1 [r del lh]
        assert_equal [expr {$before + 1}] [lazyfreed]
    }

    test {FLUSHALL ASYNC frees every key in the background; lazyfree-lazy-user-flush} {
        r flushall
        populate 500
        r select 9
        for {set i 0} {$i < 300} {incr i} {r set k9:$i v}
        r select 0
        set before [lazyfreed]
        assert_equal OK [r flushall async]
        assert_equal 0 [r dbsize]
        r select 9
        assert_equal 0 [r dbsize]
        r select 0
        wait_for_condition 100 20 {[lazyfreed] == $before + 800} else {fail "FLUSHALL ASYNC freed [expr {[lazyfreed] - $before}] keys"}
        populate 200
        assert_equal OK [r flushdb]
        assert_equal [expr {$before + 800}] [lazyfreed]
        populate 200
        r config set lazyfree-lazy-user-flush yes
        assert_equal OK [r flushdb]
        r config set lazyfree-lazy-user-flush no
        wait_for_condition 100 20 {[lazyfreed] == $before + 1000} else {fail "FLUSHDB under lazyfree-lazy-user-flush"}
        populate 10
        assert_equal OK [r flushdb sync]
        assert_equal [expr {$before + 1000}] [lazyfreed]
    }

    test {The lazy-free thread frees in pieces, below the workers (SCHED_IDLE)} {
        r flushall
        # Values over the embedding limit: records of the small-object store.
        r debug populate 20000 lzp 300
        set before [lazyfreed]
        assert_equal OK [r flushall async]
        assert_equal 0 [r dbsize]
        wait_for_condition 200 20 {[lazyfreed] == $before + 20000} else {fail "freed [expr {[lazyfreed] - $before}] of 20000"}
        set policy ""
        foreach t [glob -nocomplain /proc/[srv pid]/task/*] {
            if {[catch {set f [open $t/comm]; set comm [string trim [read $f]]; close $f}]} continue
            if {$comm ne "goblin-lazyfree"} continue
            set f [open $t/stat]
            set stat [read $f]
            close $f
            # Field 41 (policy); the fields after the ") " that ends comm start at 3.
            set policy [lindex [string range $stat [expr {[string last ") " $stat] + 2}] end] 38]
        }
        assert_equal 5 $policy
        r set after-free v
        assert_equal v [r get after-free]
    }

    test {FLUSHDB and FLUSHALL syntax errors} {
        assert_error {ERR syntax error} {r flushdb foo}
        assert_error {ERR syntax error} {r flushall foo}
        assert_error {ERR syntax error} {r flushdb sync sync}
    }

    test {Keys written after FLUSHALL are visible} {
        r flushall
        r set after 1
        assert_equal 1 [r get after]
        assert_equal {after} [r keys *]
    }
}

start_server {tags {keyspace} overrides {databases 4}} {
    test {The databases setting limits SELECT, MOVE and SWAPDB} {
        assert_equal OK [r select 3]
        assert_error {ERR DB index is out of range} {r select 4}
        r select 0
        r set k v
        assert_error {ERR DB index is out of range} {r move k 4}
        assert_error {ERR DB index is out of range} {r swapdb 0 4}
        assert_equal {databases 4} [r config get databases]
    }
}

start_server {tags {keyspace concurrency}} {

    test {INCR from many clients at once loses no update} {
        set clients {}
        for {set i 0} {$i < 8} {incr i} {
            lappend clients [redis_deferring_client]
        }
        r del counter
        set buf [string repeat [::resp::encode {incr counter}] 2000]
        foreach c $clients {$c write $buf}
        foreach c $clients {$c flush}
        set bad 0
        foreach c $clients {
            set last 0
            for {set i 0} {$i < 2000} {incr i} {
                set v [$c read]
                if {$v <= $last} {incr bad}
                set last $v
            }
        }
        assert_equal 0 $bad "replies of one client must grow"
        assert_equal 16000 [r get counter]
        foreach c $clients {$c close}
    }

    test {MSET is atomic for concurrent readers} {
        r mset ma 0 mb 0
        set w [redis_deferring_client]
        set n 5000
        set buf ""
        for {set i 1} {$i <= $n} {incr i} {
            append buf [::resp::encode [list mset ma $i mb $i]]
        }
        $w write $buf
        $w flush
        set torn 0
        for {set i 0} {$i < 1000} {incr i} {
            lassign [r mget ma mb] a b
            if {$a ne $b} {incr torn}
        }
        for {set i 0} {$i < $n} {incr i} {$w read}
        assert_equal 0 $torn "MGET saw one key of an MSET without the other"
        assert_equal [list $n $n] [r mget ma mb]
        $w close
    }

    test {RENAME is atomic for concurrent readers} {
        r del rsrc rdst
        r set rsrc v
        set w [redis_deferring_client]
        set buf ""
        for {set i 0} {$i < 2500} {incr i} {
            append buf [::resp::encode {rename rsrc rdst}]
            append buf [::resp::encode {rename rdst rsrc}]
        }
        $w write $buf
        $w flush
        set bad 0
        for {set i 0} {$i < 1000} {incr i} {
            if {[r exists rsrc rdst] != 1} {incr bad}
        }
        set errors 0
        for {set i 0} {$i < 5000} {incr i} {
            if {[catch {$w read}]} {incr errors}
        }
        assert_equal 0 $bad "EXISTS saw both or neither of the renamed keys"
        assert_equal 0 $errors
        assert_equal 1 [r exists rsrc]
        $w close
    }

    test {MSETNX from competing clients: exactly one wins each round} {
        set c1 [redis_deferring_client]
        set c2 [redis_deferring_client]
        set rounds 500
        set b1 ""
        set b2 ""
        for {set i 0} {$i < $rounds} {incr i} {
            append b1 [::resp::encode [list msetnx x$i one y$i one]]
            append b2 [::resp::encode [list msetnx y$i two x$i two]]
        }
        $c1 write $b1
        $c2 write $b2
        $c1 flush
        $c2 flush
        set bad 0
        for {set i 0} {$i < $rounds} {incr i} {
            set r1 [$c1 read]
            set r2 [$c2 read]
            if {$r1 + $r2 != 1} {incr bad}
        }
        assert_equal 0 $bad
        set mixed 0
        for {set i 0} {$i < $rounds} {incr i} {
            lassign [r mget x$i y$i] x y
            if {$x ne $y} {incr mixed}
        }
        assert_equal 0 $mixed
        $c1 close
        $c2 close
    }

    test {Many connections at once} {
        set clients {}
        for {set i 0} {$i < 200} {incr i} {
            lappend clients [redis_client]
        }
        set i 0
        foreach c $clients {
            $c set conn:$i $i
            incr i
        }
        assert_morethan [s connected_clients] 199
        set bad 0
        set i 0
        foreach c $clients {
            if {[$c get conn:$i] ne $i} {incr bad}
            incr i
        }
        assert_equal 0 $bad
        foreach c $clients {$c close}
    }

    test {SWAPDB under concurrent writes keeps every key in one database} {
        r flushall
        set w [redis_deferring_client]
        set buf ""
        for {set i 0} {$i < 3000} {incr i} {
            append buf [::resp::encode [list set sw:$i v]]
        }
        $w write $buf
        $w flush
        for {set i 0} {$i < 20} {incr i} {
            r swapdb 0 1
        }
        for {set i 0} {$i < 3000} {incr i} {$w read}
        set total [r dbsize]
        r select 1
        incr total [r dbsize]
        r select 0
        assert_equal 3000 $total
        r flushall
        $w close
    }
}

# --- DUMP / RESTORE --------------------------------------------------------------------

start_server {tags {keyspace dump}} {
    # Every type in each of its encodings: DUMP, RESTORE under a new name,
    # same value, type and encoding.
    test {DUMP / RESTORE round trip of every type and encoding} {
        r flushall
        r set s:int 12345
        r set s:emb hello
        r set s:raw [string repeat "abc" 100]
        r set s:bin "a\x00b\r\n\xff"
        r rpush l a 1 b
        r sadd si 1 2 3
        r sadd ss a b c
        r zadd zl 1 a 2.5 b
        r hset hl f v g 1
        for {set i 0} {$i < 200} {incr i} {
            r sadd sh m$i
            r zadd zs $i m$i
            r hset hh f$i [string repeat v 80]
        }
        foreach k {s:int s:emb s:raw s:bin l si ss zl hl sh zs hh} {
            set p [r dump $k]
            assert_equal OK [r restore copy:$k 0 $p]
            assert_equal [r type $k] [r type copy:$k] $k
            assert_equal [r object encoding $k] [r object encoding copy:$k] $k
            # Hash tables iterate in their own order (in Redis too).
            if {[r object encoding $k] ni {hashtable skiplist}} {
                assert_equal [r dump $k] [r dump copy:$k] $k
            }
            assert_equal -1 [r ttl copy:$k]
        }
        assert_equal [r get s:bin] [r get copy:s:bin]
        assert_equal [r lrange l 0 -1] [r lrange copy:l 0 -1]
        assert_equal [lsort [r smembers sh]] [lsort [r smembers copy:sh]]
        assert_equal [r zrange zs 0 -1 withscores] [r zrange copy:zs 0 -1 withscores]
        assert_equal [lsort [r hgetall hl]] [lsort [r hgetall copy:hl]]
        assert_equal {} [r dump nokey]
    }

    test {RESTORE: BUSYKEY, REPLACE, TTL, ABSTTL} {
        r flushall
        r set k v
        set p [r dump k]
        assert_error {BUSYKEY Target key name already exists.} {r restore k 0 $p}
        r set k other
        assert_equal OK [r restore k 5000 $p replace]
        assert_equal v [r get k]
        assert_range [r pttl k] 4000 5000
        set at [expr {[clock milliseconds] + 100000}]
        assert_equal OK [r restore k2 $at $p absttl]
        assert_equal $at [r pexpiretime k2]
        # A TTL already past: nothing is created, a replaced key goes.
        assert_equal OK [r restore gone 1 $p absttl]
        assert_equal 0 [r exists gone]
        assert_equal OK [r restore k 1 $p absttl replace]
        assert_equal 0 [r exists k]
    }

    test {RESTORE refusals change nothing} {
        r flushall
        r set k v
        set p [r dump k]
        assert_error {ERR Invalid TTL value, must be >= 0} {r restore new -1 $p}
        assert_error {ERR value is not an integer or out of range} {r restore new abc $p}
        assert_error {ERR DUMP payload version or checksum are wrong} {r restore new 0 "[string range $p 0 end-1]x"}
        assert_error {ERR DUMP payload version or checksum are wrong} {r restore new 0 short}
        assert_error {ERR syntax error} {r restore new 0 $p bogus}
        assert_error {ERR Invalid IDLETIME value, must be >= 0} {r restore new 0 $p idletime -1}
        assert_error {ERR Invalid FREQ value, must be >= 0 and <= 255} {r restore new 0 $p freq 300}
        assert_error {ERR syntax error} {r restore new 0 $p idletime 1 freq 1}
        assert_error {ERR wrong number of arguments for 'restore' command} {r restore new 0}
        assert_error {ERR wrong number of arguments for 'dump' command} {r dump}
        assert_equal {k} [r keys *]
    }

    test {DEBUG SET-SKIP-CHECKSUM-VALIDATION, and payloads refused past the checksum} {
        r flushall
        r set k v
        set p [r dump k]
        set last [scan [string index $p end] %c]
        set bad "[string range $p 0 end-1][format %c [expr {($last + 1) % 256}]]"
        assert_error {ERR DUMP payload version or checksum are wrong} {r restore new 0 $bad}
        r debug set-skip-checksum-validation 1
        set failed [catch {
            assert_equal OK [r restore new 0 $bad]
            assert_equal v [r get new]
            # A quicklist node of no bytes; a zset score (text) that is no number.
            assert_error {ERR Bad data format} {r restore q 0 "\x12\x01\x01\x00\x0a\x00\x8f\xc6\xc0\x57\x1c\x0a\xb3\x3c"}
            assert_error {ERR Bad data format} {r restore z 0 "\x03\x01\x11\x11\x00\x00\x00\x0A\x00\x00\x00\x01\x00\x00\xD0\x07\x1A\xE9\x02\xFF\x09\x00\x1A\x06\x07\x32\x41\x28\x3A\x46"}
            assert_equal {0 0} [list [r exists q] [r exists z]]
        } e opts]
        r debug set-skip-checksum-validation 0
        if {$failed} { return -options $opts $e }
        assert_error {ERR DUMP payload version or checksum are wrong} {r restore new2 0 $bad}
    }

    test {RESTORE IDLETIME and FREQ set the access data of their policy} {
        r flushall
        r set k v
        set p [r dump k]
        assert_equal OK [r restore idle 0 $p idletime 1000]
        assert_range [r object idletime idle] 1000 1002
        r config set maxmemory-policy allkeys-lfu
        assert_equal OK [r restore hot 0 $p freq 100]
        # 99 when a minute boundary passes in between (the counter decays
        # by one per minute).
        assert_range [r object freq hot] 99 100
        r config set maxmemory-policy noeviction
    }

    test {RESTORE fires "restore", dirties WATCH and serves a blocked BLPOP} {
        r flushall
        r rpush src a b
        set p [r dump src]
        r config set notify-keyspace-events KEg
        set sub [redis_deferring_client]
        $sub subscribe __keyspace@0__:dst
        $sub read
        set w [redis_client]
        $w watch dst
        set rd [redis_deferring_client]
        $rd blpop dst 0
        wait_for_condition 100 20 {[s blocked_clients] == 1} else {fail "BLPOP not blocked"}
        assert_equal OK [r restore dst 0 $p]
        assert_equal {dst a} [$rd read]
        assert_equal {message __keyspace@0__:dst restore} [$sub read]
        $w multi
        $w ping
        assert_equal {} [$w exec]
        r config set notify-keyspace-events ""
        foreach c [list $sub $w $rd] {$c close}
    }
}

# MOVE and COPY across every type (stream groups and PEL included), with
# expiry times (absolute, so exact), expired sources and expired targets
# (active expiry off: only the lookup expires them), and every error, as
# the exact reply bytes Redis 7.0 sends.
proc keyspace_move_copy_script {} {
    return {
        {flushall} "+OK\r\n"
        {debug set-active-expire 0} "+OK\r\n"
        {rpush l a b c} ":3\r\n"
        {hset h f v g w} ":2\r\n"
        {sadd s m1 m2 3} ":3\r\n"
        {zadd z 1 a 2 b} ":2\r\n"
        {xadd x 1-1 f v} "\$3\r\n1-1\r\n"
        {xadd x 2-1 g w} "\$3\r\n2-1\r\n"
        {xgroup create x grp 0} "+OK\r\n"
        {xreadgroup group grp alice count 1 streams x >} "*1\r\n*2\r\n\$1\r\nx\r\n*1\r\n*2\r\n\$3\r\n1-1\r\n*2\r\n\$1\r\nf\r\n\$1\r\nv\r\n"
        {pfadd hll a b c} ":1\r\n"
        {set str hello} "+OK\r\n"
        {set num 12345} "+OK\r\n"
        {copy l l2} ":1\r\n"
        {lrange l2 0 -1} "*3\r\n\$1\r\na\r\n\$1\r\nb\r\n\$1\r\nc\r\n"
        {copy h h2} ":1\r\n"
        {hgetall h2} "*4\r\n\$1\r\nf\r\n\$1\r\nv\r\n\$1\r\ng\r\n\$1\r\nw\r\n"
        {copy s s2} ":1\r\n"
        {smismember s2 m1 m2 3 m4} "*4\r\n:1\r\n:1\r\n:1\r\n:0\r\n"
        {copy z z2} ":1\r\n"
        {zrange z2 0 -1 withscores} "*4\r\n\$1\r\na\r\n\$1\r\n1\r\n\$1\r\nb\r\n\$1\r\n2\r\n"
        {copy x x2} ":1\r\n"
        {xrange x2 - +} "*2\r\n*2\r\n\$3\r\n1-1\r\n*2\r\n\$1\r\nf\r\n\$1\r\nv\r\n*2\r\n\$3\r\n2-1\r\n*2\r\n\$1\r\ng\r\n\$1\r\nw\r\n"
        {xinfo groups x2} "*1\r\n*12\r\n\$4\r\nname\r\n\$3\r\ngrp\r\n\$9\r\nconsumers\r\n:1\r\n\$7\r\npending\r\n:1\r\n\$17\r\nlast-delivered-id\r\n\$3\r\n1-1\r\n\$12\r\nentries-read\r\n:1\r\n\$3\r\nlag\r\n:1\r\n"
        {xpending x2 grp} "*4\r\n:1\r\n\$3\r\n1-1\r\n\$3\r\n1-1\r\n*1\r\n*2\r\n\$5\r\nalice\r\n\$1\r\n1\r\n"
        {copy hll hll2} ":1\r\n"
        {pfcount hll2} ":3\r\n"
        {copy num num2} ":1\r\n"
        {object encoding num2} "\$3\r\nint\r\n"
        {copy str str db 1} ":1\r\n"
        {select 1} "+OK\r\n"
        {get str} "\$5\r\nhello\r\n"
        {move str 0} ":0\r\n"
        {select 0} "+OK\r\n"
        {move str 1} ":0\r\n"
        {copy str str db 1 replace} ":1\r\n"
        {move l 1} ":1\r\n"
        {move h 1} ":1\r\n"
        {move s 1} ":1\r\n"
        {move z 1} ":1\r\n"
        {move x 1} ":1\r\n"
        {move hll 1} ":1\r\n"
        {exists l h s z x hll} ":0\r\n"
        {select 1} "+OK\r\n"
        {lrange l 0 -1} "*3\r\n\$1\r\na\r\n\$1\r\nb\r\n\$1\r\nc\r\n"
        {hgetall h} "*4\r\n\$1\r\nf\r\n\$1\r\nv\r\n\$1\r\ng\r\n\$1\r\nw\r\n"
        {smismember s m1 m2 3 m4} "*4\r\n:1\r\n:1\r\n:1\r\n:0\r\n"
        {zrange z 0 -1 withscores} "*4\r\n\$1\r\na\r\n\$1\r\n1\r\n\$1\r\nb\r\n\$1\r\n2\r\n"
        {xinfo groups x} "*1\r\n*12\r\n\$4\r\nname\r\n\$3\r\ngrp\r\n\$9\r\nconsumers\r\n:1\r\n\$7\r\npending\r\n:1\r\n\$17\r\nlast-delivered-id\r\n\$3\r\n1-1\r\n\$12\r\nentries-read\r\n:1\r\n\$3\r\nlag\r\n:1\r\n"
        {xpending x grp} "*4\r\n:1\r\n\$3\r\n1-1\r\n\$3\r\n1-1\r\n*1\r\n*2\r\n\$5\r\nalice\r\n\$1\r\n1\r\n"
        {pfcount hll} ":3\r\n"
        {type x} "+stream\r\n"
        {select 0} "+OK\r\n"
        {set v 1} "+OK\r\n"
        {expireat v 4000000000} ":1\r\n"
        {move v 2} ":1\r\n"
        {select 2} "+OK\r\n"
        {expiretime v} ":4000000000\r\n"
        {select 0} "+OK\r\n"
        {set v 2} "+OK\r\n"
        {pexpireat v 4000000000123} ":1\r\n"
        {copy v v3} ":1\r\n"
        {pexpiretime v3} ":4000000000123\r\n"
        {copy v v4 db 3} ":1\r\n"
        {select 3} "+OK\r\n"
        {pexpiretime v4} ":4000000000123\r\n"
        {select 0} "+OK\r\n"
        {set gone 1 px 1} "+OK\r\n"
        {after 20} {}
        {copy gone gone2} ":0\r\n"
        {exists gone2} ":0\r\n"
        {move gone 1} ":0\r\n"
        {set d 1} "+OK\r\n"
        {select 4} "+OK\r\n"
        {set d old px 1} "+OK\r\n"
        {select 0} "+OK\r\n"
        {after 20} {}
        {move d 4} ":1\r\n"
        {select 4} "+OK\r\n"
        {get d} "\$1\r\n1\r\n"
        {select 0} "+OK\r\n"
        {set d 1} "+OK\r\n"
        {set e new} "+OK\r\n"
        {select 5} "+OK\r\n"
        {set e old px 1} "+OK\r\n"
        {select 0} "+OK\r\n"
        {after 20} {}
        {copy e e db 5} ":1\r\n"
        {select 5} "+OK\r\n"
        {get e} "\$3\r\nnew\r\n"
        {select 0} "+OK\r\n"
        {set f1 a} "+OK\r\n"
        {set f2 b px 1} "+OK\r\n"
        {after 20} {}
        {copy f1 f2} ":1\r\n"
        {get f2} "\$1\r\na\r\n"
        {move d 0} "-ERR source and destination objects are the same\r\n"
        {move nokey 0} "-ERR source and destination objects are the same\r\n"
        {move d 16} "-ERR DB index is out of range\r\n"
        {move d -1} "-ERR DB index is out of range\r\n"
        {move d 99999999999999999999} "-ERR value is not an integer or out of range\r\n"
        {move d 1.5} "-ERR value is not an integer or out of range\r\n"
        {copy d d} "-ERR source and destination objects are the same\r\n"
        {copy d d db 0} "-ERR source and destination objects are the same\r\n"
        {copy d d db 4} ":0\r\n"
        {copy d x db 16} "-ERR DB index is out of range\r\n"
        {copy d x db -1} "-ERR DB index is out of range\r\n"
        {copy d x db abc} "-ERR value is not an integer or out of range\r\n"
        {copy d x db} "-ERR syntax error\r\n"
        {copy d x replace replace} ":1\r\n"
        {copy d x db 1 db 2} ":1\r\n"
        {copy d x db 1 foo} "-ERR syntax error\r\n"
        {copy d} "-ERR wrong number of arguments for 'copy' command\r\n"
        {move d} "-ERR wrong number of arguments for 'move' command\r\n"
        {multi} "+OK\r\n"
        {move nokey 1} "+QUEUED\r\n"
        {copy nokey x} "+QUEUED\r\n"
        {exec} "*2\r\n:0\r\n:0\r\n"
        {select 9} "+OK\r\n"
        {rpush big9 a} ":1\r\n"
        {select 0} "+OK\r\n"
        {set moved-db-target 1} "+OK\r\n"
        {debug set-active-expire 1} "+OK\r\n"
    }
}

start_server {tags {keyspace}} {
    test {MOVE and COPY: every type, expiry, expired keys, errors (exact replies)} {
        set c [redis_client]
        set n 0
        foreach {cmd want} [keyspace_move_copy_script] {
            if {[lindex $cmd 0] eq "after"} {
                after [lindex $cmd 1]
                continue
            }
            assert_equal $want [$c rawcall {*}$cmd] "reply to: $cmd"
            incr n
        }
        assert_morethan $n 100
        $c close
    }

    test {COPY makes an independent stream: its groups and PEL change alone} {
        r flushall
        r xadd s 1-1 a 1
        r xadd s 2-1 b 2
        r xgroup create s g 0
        r xreadgroup group g c1 streams s >
        r copy s s2
        r xack s2 g 1-1
        r xadd s2 3-1 c 3
        assert_equal 2 [lindex [r xpending s g] 0]
        assert_equal 1 [lindex [r xpending s2 g] 0]
        assert_equal 2 [r xlen s]
        assert_equal 3 [r xlen s2]
        r xgroup destroy s2 g
        assert_equal 1 [llength [r xinfo groups s]]
    }

    test {COPY and MOVE keep big encodings and their contents} {
        r flushall
        for {set i 0} {$i < 300} {incr i} {
            r rpush bl $i
            r hset bh f$i $i
            r sadd bs m$i
            r zadd bz $i m$i
        }
        foreach k {bl bh bs bz} {
            set enc [r object encoding $k]
            assert_equal 1 [r copy $k $k.c]
            assert_equal $enc [r object encoding $k.c]
            assert_equal [r debug digest-value $k] [r debug digest-value $k.c]
            set d [r debug digest-value $k]
            assert_equal 1 [r move $k 7]
            r select 7
            assert_equal $d [r debug digest-value $k]
            assert_equal $enc [r object encoding $k]
            r select 0
        }
        r select 7
        r flushdb
        r select 0
    }
}

proc keyspace_pipeline_of_gets {rd} {
    for {set i 0} {$i < 20} {incr i} { $rd get key:[expr {$i * 3001}] }
    for {set i 0} {$i < 20} {incr i} { assert_equal value:[expr {$i * 3001}] [$rd read] }
    return 1
}

start_server {tags {keyspace}} {
    test {Pipelined commands over a large keyspace prefetch their keys and answer as without} {
        r debug populate 80000 key
        r select 1
        r set other 1
        r select 0
        set rd [redis_deferring_client]
        set before [getInfoProperty [r info goblin] keys_prefetched]
        # The cron marks the database large within a tick: pipelines of
        # reads until it has.
        wait_for_condition 50 100 {
            [keyspace_pipeline_of_gets $rd] &&
            [getInfoProperty [r info goblin] keys_prefetched] > $before
        } else {
            fail "no key was prefetched"
        }
        # Then reads, writes, misses and SELECTs mixed, in order.
        for {set round 0} {$round < 3} {incr round} {
            set want {}
            for {set i 0} {$i < 40} {incr i} {
                set n [expr {($round * 5 + $i / 8) * 613 % 80000}]
                switch [expr {$i % 8}] {
                    0 { $rd get key:$n; lappend want value:$n }
                    1 { $rd set key:$n new:$n; lappend want OK }
                    2 { $rd get key:$n; lappend want new:$n }
                    3 { $rd get nokey:$n; lappend want {} }
                    4 { $rd select 1; lappend want OK }
                    5 { $rd get other; lappend want 1 }
                    6 { $rd select 0; lappend want OK }
                    7 { $rd incr key:$n; lappend want {ERR value is not an integer or out of range} }
                }
            }
            foreach w $want {
                if {[string match ERR* $w]} {
                    assert_error "$w*" {$rd read}
                } else {
                    assert_equal $w [$rd read]
                }
            }
        }
        $rd close
        assert_equal 80001 [expr {[r dbsize] + 1}]
    } {goblin_only}

    test {Multi-key commands over a large keyspace prefetch their own keys and answer as without} {
        # The database is large (the test above): MSET, MGET, EXISTS,
        # TOUCH, DEL and MSETNX of 100 keys, some repeated, some missing,
        # one of another type, each run 16 keys at a time.
        r rpush mk:list a
        if {[is_goblin]} { set before [getInfoProperty [r info goblin] keys_prefetched] }
        set args {}
        for {set i 0} {$i < 100} {incr i} {
            set n [expr {$i * 797 % 80000}]
            if {$i % 10 == 9} {
                lappend args key:[expr {($i - 1) * 797 % 80000}] again:$i
            } elseif {$i % 3 == 0} {
                lappend args mk:new:$i fresh:$i
            } else {
                lappend args key:$n set:$i
            }
        }
        assert_equal OK [r mset {*}$args]
        set want [dict create]
        foreach {k v} $args { dict set want $k $v }
        set keys [dict keys $want]
        lappend keys mk:missing mk:list
        set got [r mget {*}$keys]
        set i 0
        foreach k [dict keys $want] {
            assert_equal [dict get $want $k] [lindex $got $i]
            incr i
        }
        assert_equal {{} {}} [lrange $got end-1 end]
        set all [concat [dict keys $want] [dict keys $want] mk:missing mk:list]
        set distinct [dict size $want]
        assert_equal [expr {2 * $distinct + 1}] [r exists {*}$all]
        assert_equal [expr {2 * $distinct + 1}] [r touch {*}$all]
        assert_equal 0 [r msetnx {*}$args]
        assert_equal [dict get $want mk:new:0] [r get mk:new:0]
        set news {}
        for {set i 0} {$i < 40} {incr i} { lappend news mk:nx:$i v$i }
        assert_equal 1 [r msetnx {*}$news]
        assert_equal v39 [r get mk:nx:39]
        assert_equal [expr {$distinct + 1}] [r del {*}$all]
        assert_equal 40 [r del {*}[dict keys [dict create {*}$news]] mk:missing]
        assert_equal 0 [r exists {*}[dict keys $want]]
        if {[is_goblin]} { assert_morethan [getInfoProperty [r info goblin] keys_prefetched] [expr {$before + 100}] }
    }

    # A key's bytes sit after its value word, or after the header when a
    # short string lives in the entry; values entering and leaving that
    # room move the key. Keys of every length around the 8-byte steps.
    test {Keys of 1-40 bytes keep their names while their values move in and out of the entry} {
        r flushdb
        set keys {}
        for {set n 1} {$n <= 40} {incr n} {
            set k [string replace [string repeat k $n] end end [format %c [expr {65 + $n % 26}]]]
            lappend keys $k
            r set $k "v$n"
        }
        foreach k $keys {
            set n [string length $k]
            assert_equal "v$n" [r get $k]
            # Grows past its room (an arena record), then past a page.
            r append $k [string repeat x 300]
            assert_equal [expr {[string length "v$n"] + 300}] [r strlen $k]
            r set $k 12345
            assert_equal 12346 [r incr $k]
            r set $k "small$n"
            r expire $k 1000
            r rename $k "$k:r"
            r copy "$k:r" "$k:c"
            r set "$k:n" [string repeat y 200]
            r setrange "$k:n" 250 z
        }
        r debug reload
        foreach k $keys {
            set n [string length $k]
            assert_equal "small$n" [r get "$k:r"]
            assert_equal "small$n" [r get "$k:c"]
            assert_range [r ttl "$k:r"] 900 1000
            assert_equal 251 [r strlen "$k:n"]
            assert_equal 0 [r exists $k]
        }
        set want {}
        foreach k $keys { lappend want "$k:r" "$k:c" "$k:n" }
        assert_equal [lsort $want] [lsort [r keys *]]
        assert_equal [lsort $want] [lsort [scan_all]]
    }
}

start_server {tags {keyspace defrag}} {
    # Entries live in their shard's slab pool: after a mass delete every
    # slab that keeps one entry stays. The cron moves the survivors out of
    # the sparsest slabs, which go back to the kernel; the moved entries
    # keep their values and TTLs (a TTL's list place moves too: active
    # expiry reaches the copy).
    proc slab_bytes {} { getInfoProperty [r info goblin] keyspace_slab_bytes }

    # Under the address sanitizer each entry is an allocation of its own
    # (no pool, nothing to compact): the test is skipped there, saying so.
    set name {A mass delete gives the entries' slabs back; the survivors keep values and TTLs}
    if {$::t::server_kind eq "goblin"} {
        r debug populate 300000 key
        set full [slab_bytes]
    } else {
        set full 1
    }
    if {$full == 0} {
        ::t::record_skip $name "this build keeps no entry pools (a sanitizer build: each entry is its own allocation)"
    } else {
    test $name {
        for {set i 0} {$i < 300000} {incr i 1000} { r expire key:$i 100000 }
        r pexpire key:500 1500
        assert_morethan $full 8000000
        set deleted [r eval {
            local n = 0
            for i = 0, tonumber(ARGV[1]) - 1 do
                if i % 100 ~= 0 then n = n + redis.call('del', 'key:' .. i) end
            end
            return n
        } 0 300000]
        assert_equal 297000 $deleted
        # 2,999 keys across 64 shards fit in a few slabs each (without the
        # moves, the 9.5 MB of slabs stay: each keeps a key or more).
        wait_for_condition 300 100 {
            [slab_bytes] < $full / 3
        } else {
            fail "[slab_bytes] bytes of slabs after the delete, $full before: [r info stats]"
        }
        assert_morethan [s active_defrag_hits] 1000
        assert_equal 0 [r eval {
            local bad = 0
            for i = 0, tonumber(ARGV[1]) - 1, 100 do
                if i ~= 500 and redis.call('get', 'key:' .. i) ~= 'value:' .. i then bad = bad + 1 end
            end
            return bad
        } 0 300000]
        assert_range [r ttl key:1000] 99000 100000
        assert_equal -1 [r ttl key:1100]
        # key:500's short TTL: the cron's expiry finds the moved entry.
        wait_for_condition 50 100 {[r dbsize] == 2999} else { fail "key:500 did not expire" }
        assert_equal 2999 [llength [r keys *]]
    } {goblin_only}
    }

    set name {activedefrag no stops the compaction, a pass under way included; yes resumes it}
    if {$full == 0} {
        ::t::record_skip $name "this build keeps no entry pools (a sanitizer build: each entry is its own allocation)"
    } else {
    test $name {
        assert_equal {activedefrag yes} [r config get activedefrag]
        r flushall
        r debug populate 300000 key
        set full [slab_bytes]
        r config set activedefrag no
        set hits [s active_defrag_hits]
        r eval {
            for i = 0, tonumber(ARGV[1]) - 1 do
                if i % 100 ~= 0 then redis.call('del', 'key:' .. i) end
            end
        } 0 300000
        after 1500
        assert_equal $hits [s active_defrag_hits]
        assert_morethan [slab_bytes] [expr {$full * 9 / 10}]
        # On: passes start (slowed to one scan step per tick, so that one
        # is seen running). Off while one runs: it ends (INFO says none
        # runs) and the slabs it had marked take entries again.
        r debug defrag-budget 0
        r config set activedefrag yes
        wait_for_condition 100 20 {[s active_defrag_running] == 1} else { fail "no pass started" }
        r config set activedefrag no
        wait_for_condition 50 20 {[s active_defrag_running] == 0} else { fail "the pass did not end" }
        set stopped [s active_defrag_hits]
        after 500
        assert_equal $stopped [s active_defrag_hits]
        r debug defrag-budget 1000
        r config set activedefrag yes
        wait_for_condition 300 100 {
            [slab_bytes] < $full / 3
        } else {
            fail "[slab_bytes] bytes of slabs after the delete, $full before"
        }
        assert_equal 0 [r eval {
            local bad = 0
            for i = 0, tonumber(ARGV[1]) - 1, 100 do
                if redis.call('get', 'key:' .. i) ~= 'value:' .. i then bad = bad + 1 end
            end
            return bad
        } 0 300000]
        assert_equal 3000 [r dbsize]
    } {goblin_only}
    }
}
