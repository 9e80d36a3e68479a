# Expiry: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX/XX/GT/LT), TTL,
# PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, lazy and active expiry.

start_server {tags {expire}} {

    test {EXPIRE sets a TTL, TTL reads it} {
        r set k v
        assert_equal -1 [r ttl k]
        assert_equal 1 [r expire k 100]
        assert_range [r ttl k] 99 100
        assert_range [r pttl k] 99000 100000
    }

    test {TTL and PTTL of a missing key} {
        assert_equal -2 [r ttl nosuch]
        assert_equal -2 [r pttl nosuch]
    }

    test {TTL and PTTL of a key without expire} {
        r set persistent v
        assert_equal -1 [r ttl persistent]
        assert_equal -1 [r pttl persistent]
    }

    test {EXPIRE of a missing key} {
        assert_equal 0 [r expire nosuch 100]
        assert_equal 0 [r pexpire nosuch 100]
        assert_equal 0 [r expireat nosuch [expr {[clock seconds] + 100}]]
        assert_equal 0 [r pexpireat nosuch [expr {[clock milliseconds] + 100000}]]
        assert_equal 0 [r exists nosuch]
    }

    test {EXPIRE can change an existing TTL} {
        r set k v ex 100
        assert_equal 1 [r expire k 1000]
        assert_range [r ttl k] 990 1000
    }

    test {TTL rounds to the nearest second} {
        r set k v
        r pexpire k 10900
        assert_equal 11 [r ttl k]
        r pexpire k 10400
        assert_equal 10 [r ttl k]
    }

    test {PEXPIRE has millisecond precision} {
        r set k v
        assert_equal 1 [r pexpire k 5800]
        assert_range [r pttl k] 5300 5800
        # TTL rounds to the nearest second: 5.8 s -> 6
        assert_equal 6 [r ttl k]
    }

    test {EXPIREAT and PEXPIREAT} {
        r set k v
        assert_equal 1 [r expireat k [expr {[clock seconds] + 100}]]
        assert_range [r ttl k] 98 100
        assert_equal 1 [r pexpireat k [expr {[clock milliseconds] + 50000}]]
        assert_range [r pttl k] 49000 50000
    }

    test {EXPIRETIME and PEXPIRETIME} {
        r set k v
        set at [expr {[clock seconds] + 1000}]
        r expireat k $at
        assert_equal $at [r expiretime k]
        assert_equal [expr {$at * 1000}] [r pexpiretime k]
        set pat [expr {[clock milliseconds] + 123456}]
        r pexpireat k $pat
        assert_equal $pat [r pexpiretime k]
        assert_equal [expr {($pat + 500) / 1000}] [r expiretime k]
    }

    test {EXPIRETIME and PEXPIRETIME of missing and persistent keys} {
        assert_equal -2 [r expiretime nosuch]
        assert_equal -2 [r pexpiretime nosuch]
        r set p v
        assert_equal -1 [r expiretime p]
        assert_equal -1 [r pexpiretime p]
    }

    test {EXPIRE with a zero or negative time deletes the key} {
        r set k v
        assert_equal 1 [r expire k 0]
        assert_equal 0 [r exists k]
        r set k v
        assert_equal 1 [r expire k -10]
        assert_equal 0 [r exists k]
        r set k v
        assert_equal 1 [r pexpire k -1]
        assert_equal 0 [r exists k]
    }

    test {EXPIREAT in the past deletes the key} {
        r set k v
        assert_equal 1 [r expireat k 1]
        assert_equal 0 [r exists k]
        r set k v
        assert_equal 1 [r pexpireat k [expr {[clock milliseconds] - 1000}]]
        assert_equal 0 [r exists k]
    }

    test {PERSIST} {
        r set k v ex 100
        assert_equal 1 [r persist k]
        assert_equal -1 [r ttl k]
        assert_equal 0 [r persist k]
        assert_equal 0 [r persist nosuch]
        assert_equal v [r get k]
    }

    test {EXPIRE NX} {
        r set k v
        assert_equal 1 [r expire k 100 nx]
        assert_equal 0 [r expire k 200 nx]
        assert_range [r ttl k] 99 100
    }

    test {EXPIRE XX} {
        r set k v
        assert_equal 0 [r expire k 100 xx]
        assert_equal -1 [r ttl k]
        r expire k 100
        assert_equal 1 [r expire k 200 xx]
        assert_range [r ttl k] 199 200
    }

    test {EXPIRE GT} {
        r set k v
        # A key without TTL counts as an infinite TTL.
        assert_equal 0 [r expire k 100 gt]
        assert_equal -1 [r ttl k]
        r expire k 100
        assert_equal 0 [r expire k 50 gt]
        assert_equal 1 [r expire k 200 gt]
        assert_range [r ttl k] 199 200
    }

    test {EXPIRE LT} {
        r set k v
        assert_equal 1 [r expire k 100 lt]
        assert_range [r ttl k] 99 100
        assert_equal 0 [r expire k 200 lt]
        assert_equal 1 [r expire k 50 lt]
        assert_range [r ttl k] 49 50
    }

    test {EXPIRE XX GT and XX LT} {
        r set k v
        assert_equal 0 [r expire k 100 xx gt]
        assert_equal 0 [r expire k 100 xx lt]
        r expire k 100
        assert_equal 1 [r expire k 200 xx gt]
        assert_equal 1 [r expire k 50 xx lt]
        assert_range [r ttl k] 49 50
    }

    test {PEXPIRE, EXPIREAT and PEXPIREAT accept NX/XX/GT/LT} {
        r set k v
        assert_equal 1 [r pexpire k 100000 nx]
        assert_equal 0 [r pexpire k 200000 nx]
        set now [clock seconds]
        assert_equal 1 [r expireat k [expr {$now + 500}] gt]
        assert_equal 0 [r expireat k [expr {$now + 400}] gt]
        set nowms [clock milliseconds]
        assert_equal 1 [r pexpireat k [expr {$nowms + 300000}] lt]
        assert_equal 0 [r pexpireat k [expr {$nowms + 400000}] lt]
        assert_equal 1 [r pexpireat k [expr {$nowms + 300000}] xx]
    }

    test {EXPIRE options are case insensitive} {
        r set k v
        assert_equal 1 [r expire k 100 NX]
        assert_equal 1 [r expire k 200 Gt]
    }

    test {EXPIRE option errors} {
        r set k v
        assert_error {ERR NX and XX, GT or LT options at the same time are not compatible} {r expire k 100 nx xx}
        assert_error {ERR NX and XX, GT or LT options at the same time are not compatible} {r expire k 100 nx gt}
        assert_error {ERR NX and XX, GT or LT options at the same time are not compatible} {r pexpire k 100 nx lt}
        assert_error {ERR GT and LT options at the same time are not compatible} {r expire k 100 gt lt}
        assert_error {ERR Unsupported option foo} {r expire k 100 foo}
        assert_error {ERR Unsupported option bar} {r expireat k 100 nx bar}
    }

    test {EXPIRE with a non-integer time} {
        r set k v
        assert_error {ERR value is not an integer or out of range} {r expire k abc}
        assert_error {ERR value is not an integer or out of range} {r expire k 1.5}
        assert_error {ERR value is not an integer or out of range} {r pexpire k 100a}
        assert_error {ERR value is not an integer or out of range} {r expireat k ""}
    }

    test {EXPIRE overflow errors name the command} {
        r set k v
        assert_error {ERR invalid expire time in 'expire' command} {r expire k 9223372036854775807}
        assert_error {ERR invalid expire time in 'expire' command} {r expire k 9223372036854775}
        assert_error {ERR invalid expire time in 'pexpire' command} {r pexpire k 9223372036854775807}
        assert_error {ERR invalid expire time in 'expireat' command} {r expireat k 9223372036854775807}
        assert_equal -1 [r ttl k]
    }

    test {Very large but valid expire times} {
        r set k v
        assert_equal 1 [r pexpire k 92233720368547758]
        assert_morethan [r ttl k] 90000000000000
        assert_equal 1 [r pexpireat k 9223372036854775807]
        assert_equal 9223372036854775807 [r pexpiretime k]
    }

    test {EXPIRE arity} {
        assert_error {ERR wrong number of arguments for 'expire' command} {r expire k}
        assert_error {ERR wrong number of arguments for 'ttl' command} {r ttl}
        assert_error {ERR wrong number of arguments for 'persist' command} {r persist}
        assert_error {ERR wrong number of arguments for 'expiretime' command} {r expiretime a b}
    }

    test {SET without KEEPTTL clears the TTL} {
        r set k v ex 100
        r set k v2
        assert_equal -1 [r ttl k]
    }

    test {Writes that modify the value keep the TTL} {
        r set k 10 ex 100
        r incr k
        r append k 1
        r setrange k 0 9
        assert_range [r ttl k] 99 100
        assert_equal 911 [r get k]
    }

    test {GETSET clears the TTL} {
        r set k v ex 100
        r getset k w
        assert_equal -1 [r ttl k]
    }

    test {DEL of a key with TTL, then re-created without TTL} {
        r set k v ex 100
        r del k
        r set k v
        assert_equal -1 [r ttl k]
    }

    test {A key expires after its TTL} {
        r set k v px 100
        assert_equal v [r get k]
        after 250
        assert_equal {} [r get k]
        assert_equal 0 [r exists k]
        assert_equal -2 [r ttl k]
    }

    test {A key with EXPIRE 1 expires within about a second} {
        r set k v
        r expire k 1
        after 1100
        assert_equal 0 [r exists k]
    } {slow}

    test {Lazy expiry: an expired key is gone for reads before the cycle deletes it} {
        needs_feature debug:set-active-expire
        r flushdb
        r debug set-active-expire 0
        r set k v px 50
        r set other v
        after 150
        # Still stored (DBSIZE counts it) but invisible to reads.
        assert_equal 2 [r dbsize]
        assert_equal 0 [r exists k]
        assert_equal {} [r get k]
        assert_equal 1 [r dbsize]
        r debug set-active-expire 1
    }

    test {DEBUG PAUSE-CRON holds the active expiry cycle} {
        r flushdb
        r debug pause-cron 1
        set failed [catch {
            r set k v px 50
            after 300
            assert_equal 1 [r dbsize]
        } e opts]
        r debug pause-cron 0
        if {$failed} { return -options $opts $e }
        wait_for_condition 100 20 {[r dbsize] == 0} else { fail "the cycle did not resume" }
    }

    test {The active expiry cycle keeps going while shards are full of expired keys} {
        needs_feature debug:set-active-expire
        r flushdb
        r debug set-active-expire 0
        r eval {for i = 1, 200000 do redis.call('set', 't:' .. i, 'v', 'px', 1) end} 0
        after 20
        set base [s expired_keys]
        r config set hz 1
        r debug set-active-expire 1
        # A cycle a second, each with a quarter of it to spend: in 2.5 s at
        # most three cycles, which a fixed 16 samples of 20 per shard (64
        # shards) per cycle would hold to 61,440 keys.
        after 2500
        set gone [expr {[s expired_keys] - $base}]
        r config set hz 10
        assert_morethan $gone 100000
        wait_for_condition 100 100 {[r dbsize] == 0} else {
            fail "[r dbsize] expired keys left"
        }
    } goblin_only

    test {active-expire-effort is taken from 1 to 10, and the cycle expires keys at 10} {
        needs_feature debug:set-active-expire
        assert_error {*argument must be between 1 and 10 inclusive*} {r config set active-expire-effort 11}
        assert_error {*argument must be between 1 and 10 inclusive*} {r config set active-expire-effort 0}
        r config set active-expire-effort 10
        assert_equal {active-expire-effort 10} [r config get active-expire-effort]
        r flushdb
        r debug set-active-expire 0
        r eval {for i = 1, 20000 do redis.call('set', 'e:' .. i, 'v', 'px', 1) end} 0
        r set keep v
        after 20
        r debug set-active-expire 1
        wait_for_condition 50 100 {[r dbsize] == 1} else {
            fail "[r dbsize] keys left at active-expire-effort 10"
        }
        assert_equal v [r get keep]
        r config set active-expire-effort 1
    }

    test {Lazy expiry: KEYS, SCAN, TTL and STRLEN do not see expired keys} {
        needs_feature debug:set-active-expire
        r flushdb
        r debug set-active-expire 0
        r set a v px 50
        r set b v px 50
        r set c v
        after 150
        assert_equal {c} [r keys *]
        assert_equal {c} [lindex [r scan 0 count 100] 1]
        assert_equal -2 [r ttl a]
        assert_equal 0 [r strlen b]
        assert_equal 1 [r dbsize]
        r debug set-active-expire 1
    }

    test {SCAN deletes the expired keys it walks over, as Redis} {
        needs_feature debug:set-active-expire
        r flushdb
        r debug set-active-expire 0
        r set a v px 20
        r set b v px 20
        r set c v
        after 100
        set before [s expired_keys]
        assert_equal 3 [r dbsize]
        assert_equal {c} [lindex [r scan 0 count 100] 1]
        assert_equal 1 [r dbsize]
        assert_equal [expr {$before + 2}] [s expired_keys]
        r debug set-active-expire 1
    }

    test {Lazy expiry: writes treat an expired key as missing} {
        needs_feature debug:set-active-expire
        r flushdb
        r debug set-active-expire 0
        r set n 10 px 50
        r set s abc px 50
        r set nx v px 50
        after 150
        assert_equal 1 [r incr n]
        assert_equal -1 [r ttl n]
        assert_equal 3 [r append s xyz]
        assert_equal xyz [r get s]
        assert_equal OK [r set nx fresh nx]
        assert_equal -1 [r ttl nx]
        r debug set-active-expire 1
    }

    test {Lazy expiry counts expired_keys in INFO} {
        needs_feature debug:set-active-expire
        r flushdb
        r config resetstat
        r debug set-active-expire 0
        r set a v px 10
        r set b v px 10
        after 100
        r get a
        r exists b
        assert_equal 2 [s expired_keys]
        r debug set-active-expire 1
    }

    test {Active expiry removes keys nobody reads} {
        r flushdb
        for {set i 0} {$i < 100} {incr i} {
            r set short:$i v px 100
        }
        r set long v
        wait_for_condition 50 100 {
            [r dbsize] == 1
        } else {
            fail "expired keys are still counted by DBSIZE: [r dbsize]"
        }
        assert_equal v [r get long]
    }

    test {Active expiry keeps expired keys a small share of a large keyspace} {
        r flushdb
        set c [redis_client]
        set buf ""
        for {set i 0} {$i < 5000} {incr i} {
            append buf [::resp::encode [list set vol:$i v px 200]]
            append buf [::resp::encode [list set keep:$i v]]
        }
        $c write $buf
        $c flush
        for {set i 0} {$i < 10000} {incr i} {$c read}
        $c close
        # Expired keys must fall below 10% of the keyspace within a few seconds.
        wait_for_condition 50 100 {
            [r dbsize] <= 5500
        } else {
            fail "after 5 s DBSIZE is [r dbsize] (5000 keys expired, 5000 persistent)"
        }
        assert_equal 5000 [llength [lsort -unique [r keys keep:*]]]
    }

    test {DEBUG SET-ACTIVE-EXPIRE 0 stops active expiry} {
        needs_feature debug:set-active-expire
        r flushdb
        assert_equal OK [r debug set-active-expire 0]
        for {set i 0} {$i < 50} {incr i} {
            r set k:$i v px 10
        }
        after 400
        assert_equal 50 [r dbsize]
        assert_equal OK [r debug set-active-expire 1]
        wait_for_condition 50 100 {
            [r dbsize] == 0
        } else {
            fail "active expiry did not resume"
        }
    }

    test {INFO keyspace counts keys and expires} {
        r flushall
        r set a 1
        r set b 2 ex 100
        r set c 3 ex 100
        set info [r info keyspace]
        assert_match "*db0:keys=3,expires=2,avg_ttl=*" $info
        r select 1
        r set x 1
        r select 0
        assert_match "*db1:keys=1,expires=0,avg_ttl=0*" [r info keyspace]
        r select 1
        r flushdb
        r select 0
    }

    test {Expired keys in other databases expire too} {
        r select 2
        r set k v px 100
        r select 0
        wait_for_condition 50 100 {
            [string first db2: [r info keyspace]] < 0
        } else {
            fail "db2 still listed: [r info keyspace]"
        }
    }

    test {RENAME of a key with TTL keeps the deadline} {
        r set src v
        set at [expr {[clock milliseconds] + 100000}]
        r pexpireat src $at
        r rename src dst
        assert_equal $at [r pexpiretime dst]
    }

    test {MOVE and COPY keep the deadline} {
        r set src v
        set at [expr {[clock milliseconds] + 200000}]
        r pexpireat src $at
        r copy src cp
        assert_equal $at [r pexpiretime cp]
        r select 5
        r del src
        r select 0
        r move src 5
        r select 5
        assert_equal $at [r pexpiretime src]
        r flushdb
        r select 0
    }

    test {A key that expired cannot be renamed} {
        r set src v px 10
        after 100
        assert_error {ERR no such key} {r rename src dst2}
    }

    test {SET EX after expiry re-creates the key} {
        r set k v px 10
        after 100
        r set k w ex 10
        assert_equal w [r get k]
        assert_range [r ttl k] 9 10
    }

    test {A key's first TTL keeps its value, encoding and access clock} {
        r flushall
        set vals [list 1 12345 [string repeat x 44] [string repeat y 45] [string repeat z 100] \
                      [string repeat ab 100] [string repeat q 253] [string repeat w 255] [string repeat v 300] \
                      [string repeat u 70000]]
        set i 0
        foreach v $vals {
            r set k$i $v
            r hset h$i f $v
            incr i
        }
        r debug sleep 0
        set before [r debug digest]
        set enc {}
        for {set j 0} {$j < $i} {incr j} { lappend enc [r object encoding k$j] }
        for {set j 0} {$j < $i} {incr j} {
            assert_equal 1 [r expire k$j 1000]
            assert_equal 1 [r expire h$j 1000]
        }
        for {set j 0} {$j < $i} {incr j} {
            assert_equal [lindex $vals $j] [r get k$j]
            assert_equal [lindex $vals $j] [r hget h$j f]
            assert_equal [lindex $enc $j] [r object encoding k$j]
            assert_range [r ttl k$j] 990 1000
        }
        # The TTL goes and comes back without moving the entry again.
        for {set j 0} {$j < $i} {incr j} {
            assert_equal 1 [r persist k$j]
            assert_equal 1 [r persist h$j]
        }
        assert_equal $before [r debug digest]
        for {set j 0} {$j < $i} {incr j} { r pexpire k$j 500000 }
        r debug reload
        for {set j 0} {$j < $i} {incr j} {
            assert_equal [lindex $vals $j] [r get k$j]
            assert_range [r pttl k$j] 400000 500000
        }
        # Values that grow past the room their entry was made with.
        r set g1 abc
        r expire g1 100
        r append g1 [string repeat d 500]
        assert_equal [expr {3 + 500}] [r strlen g1]
        assert_range [r ttl g1] 90 100
    }

    test {Keys of 4095 bytes and more, with and without a TTL} {
        r flushall
        foreach n {4094 4095 4096 16383 70000} {
            set k [string repeat k $n]
            r set $k v$n
            assert_equal v$n [r get $k]
            assert_equal -1 [r ttl $k]
            r expire $k 100
            assert_range [r ttl $k] 90 100
            r set x$k w ex 100
            assert_equal w [r get x$k]
            r rename $k y$k
            assert_equal v$n [r get y$k]
            assert_range [r ttl y$k] 90 100
            assert_equal [expr {$n + 1}] [string length [lindex [r keys y*] 0]]
            r persist y$k
            assert_equal -1 [r ttl y$k]
            r del y$k x$k
        }
        assert_equal 0 [r dbsize]
    }

    # Key kl bytes long, its first byte telling the value length's index i.
    proc skey {kl i} { string range "[lindex {a b c d e f g h i j k} $i][string repeat k 20]" 0 [expr {$kl - 1}] }

    test {Short keys of every padding with small values: TTL, growth, RENAME, reload} {
        r flushall
        set vlens {0 1 4 5 6 7 8 9 50 254 255}
        for {set kl 1} {$kl <= 17} {incr kl} {
            foreach vl $vlens {
                set k [skey $kl [lsearch $vlens $vl]]
                set v [string repeat [format %c [expr {97 + $kl}]] $vl]
                r set $k $v
                assert_equal $v [r get $k]
                assert_equal $vl [r strlen $k]
            }
        }
        assert_equal [expr {17 * [llength $vlens]}] [r dbsize]
        # A first TTL moves each entry, a growth moves its value out.
        for {set kl 1} {$kl <= 17} {incr kl} {
            foreach vl $vlens {
                set k [skey $kl [lsearch $vlens $vl]]
                if {$kl % 2} { r expire $k 1000 }
            }
        }
        set d1 [r debug digest]
        r debug reload
        assert_equal $d1 [r debug digest]
        for {set kl 1} {$kl <= 17} {incr kl} {
            foreach vl $vlens {
                set k [skey $kl [lsearch $vlens $vl]]
                set v [string repeat [format %c [expr {97 + $kl}]] $vl]
                assert_equal $v [r get $k]
                r append $k xyz
                assert_equal "${v}xyz" [r get $k]
                r rename $k r$k
                assert_equal "${v}xyz" [r get r$k]
                if {$kl % 2} { assert_range [r ttl r$k] 900 1000 } else { assert_equal -1 [r ttl r$k] }
                r set r$k [string repeat z 300]
                assert_equal 300 [r strlen r$k]
                r set r$k ab
                assert_equal ab [r get r$k]
                r incr n$k
                r set n$k $v
                assert_equal $v [r get n$k]
            }
        }
        set d2 [r debug digest]
        r debug reload
        assert_equal $d2 [r debug digest]
    }

    test {Active expiry after many first TTLs and PERSISTs} {
        r flushall
        for {set j 0} {$j < 2000} {incr j} { r set e$j $j }
        for {set j 0} {$j < 2000} {incr j} { r pexpire e$j [expr {$j % 2 ? 50 : 100000}] }
        for {set j 0} {$j < 2000} {incr j 4} { r persist e$j }
        wait_for_condition 100 50 { [r dbsize] == 1000 } else { fail "odd keys did not expire: [r dbsize]" }
        assert_equal 500 [lindex [regexp -inline {expires=(\d+)} [r info keyspace]] 1]
    }
}
