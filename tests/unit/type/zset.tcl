# Sorted sets: the whole Redis 7.0 zset family, both encodings (listpack
# and skiplist), conversions between them, exact RESP2/RESP3 replies, the
# error strings, blocking pops and ZSCAN.

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}

# ZADD key with n members <prefix><i> scored i, in batches.
proc fill_zset {key n {prefix m} {first 0}} {
    set args {}
    for {set i $first} {$i < $first + $n} {incr i} {
        lappend args $i $prefix$i
        if {[llength $args] >= 2000} {
            r zadd $key {*}$args
            set args {}
        }
    }
    if {[llength $args]} {r zadd $key {*}$args}
}

# Every (member, score) pair through ZSCAN, as a dict.
proc zscan_all {key {count 10} {match ""}} {
    set cursor 0
    set d {}
    set rounds 0
    while 1 {
        set cmd [list zscan $key $cursor count $count]
        if {$match ne ""} {lappend cmd match $match}
        lassign [r {*}$cmd] cursor items
        foreach {m s} $items {dict set d $m $s}
        incr rounds
        if {$cursor eq "0"} break
        if {$rounds > 1000000} {error "ZSCAN did not terminate"}
    }
    return $d
}

# A model of a zset: sorted list of {score member} using Redis's order.
proc zmodel_sort {pairs} {
    lsort -command zmodel_cmp $pairs
}
proc zmodel_cmp {a b} {
    lassign $a sa ma
    lassign $b sb mb
    if {$sa < $sb} {return -1}
    if {$sa > $sb} {return 1}
    return [string compare $ma $mb]
}

# Runs the shared tests with zsets in the given encoding: listpack keeps
# the default limits; skiplist sets zset-max-listpack-entries to 0.
proc zset_basic_tests {enc} {
    global WRONGTYPE
    if {$enc eq "skiplist"} {
        r config set zset-max-listpack-entries 0
    } else {
        r config set zset-max-listpack-entries 128
    }

    test "ZADD basics and encoding - $enc" {
        r del z
        assert_equal 3 [r zadd z 1 a 2 b 3 c]
        assert_encoding $enc z
        assert_equal zset [r type z]
        assert_equal 0 [r zadd z 1 a]
        assert_equal 0 [r zadd z 10 a]
        assert_equal 10 [r zscore z a]
        assert_equal 3 [r zcard z]
        assert_equal {b c a} [r zrange z 0 -1]
    }

    test "ZADD NX / XX / CH / GT / LT - $enc" {
        r del z
        r zadd z 1 a 2 b
        assert_equal 1 [r zadd z nx 5 a 3 c]
        assert_equal 1 [r zscore z a]
        assert_equal 0 [r zadd z xx 7 a 4 d]
        assert_equal 7 [r zscore z a]
        assert_equal {} [r zscore z d]
        assert_equal 2 [r zadd z ch 8 a 9 e 9 e]
        assert_equal 1 [r zadd z ch 8 a 1 f 1 f]
        assert_equal 0 [r zadd z gt 5 a]
        assert_equal 8 [r zscore z a]
        assert_equal 1 [r zadd z gt ch 12 a]
        assert_equal 12 [r zscore z a]
        assert_equal 1 [r zadd z lt ch 11 a]
        assert_equal 0 [r zadd z lt ch 11 a]
        assert_equal 1 [r zadd z gt 5 newgt]
        assert_equal 1 [r zadd z lt 5 newlt]
        assert_equal 0 [r zadd z xx gt 1 a]
        assert_equal 11 [r zscore z a]
        assert_equal 1 [r zadd z xx lt ch 1 a]
    }

    test "ZADD option errors - $enc" {
        r del z
        assert_error {ERR XX and NX options at the same time are not compatible} {r zadd z nx xx 1 a}
        assert_error {ERR GT, LT, and/or NX options at the same time are not compatible} {r zadd z gt lt 1 a}
        assert_error {ERR GT, LT, and/or NX options at the same time are not compatible} {r zadd z nx gt 1 a}
        assert_error {ERR GT, LT, and/or NX options at the same time are not compatible} {r zadd z lt nx 1 a}
        assert_error {ERR INCR option supports a single increment-element pair} {r zadd z incr 1 a 2 b}
        assert_error {ERR syntax error} {r zadd z 1 a 2}
        assert_error {ERR syntax error} {r zadd z nx ch 1}
        assert_error {ERR syntax error} {r zadd z nx xx ch incr}
        assert_error {ERR value is not a valid float} {r zadd z abc a}
        assert_error {ERR value is not a valid float} {r zadd z 1 a nan b}
        assert_error {ERR value is not a valid float} {r zadd z " 1" a}
        assert_error {ERR value is not a valid float} {r zadd z "" a}
        assert_error {ERR wrong number of arguments for 'zadd' command} {r zadd z 1}
        # nothing was created by the failed calls
        assert_equal 0 [r exists z]
        # syntax is checked before compatibility
        assert_error {ERR syntax error} {r zadd z nx xx 1}
    }

    test "ZADD INCR and ZINCRBY - $enc" {
        r del z
        assert_equal 5 [r zadd z incr 5 a]
        assert_equal 7.5 [r zadd z incr 2.5 a]
        assert_equal 8.5 [r zincrby z 1 a]
        assert_equal -1.5 [r zincrby z -10 a]
        assert_equal 3 [r zincrby z 3 b]
        assert_equal {} [r zadd z nx incr 1 a]
        assert_equal "\$-1\r\n" [r rawcall zadd z nx incr 1 a]
        assert_equal {} [r zadd z xx incr 1 nosuch]
        assert_equal {} [r zadd z gt incr -1 a]
        assert_equal -0.5 [r zadd z gt incr 1 a]
        assert_equal {} [r zadd nokey xx incr 1 a]
        assert_equal 0 [r exists nokey]
        assert_error {ERR value is not a valid float} {r zincrby z abc a}
        assert_error {ERR syntax error} {r zincrby z nx a}
    }

    test "ZADD/ZINCRBY to NaN is refused, inf is fine - $enc" {
        r del z
        r zadd z inf a -inf b
        assert_error {ERR resulting score is not a number (NaN)} {r zincrby z -inf a}
        assert_error {ERR resulting score is not a number (NaN)} {r zadd z incr +inf b}
        assert_equal inf [r zscore z a]
        assert_equal -inf [r zscore z b]
        assert_equal inf [r zincrby z 1 a]
        assert_equal {b -inf a inf} [r zrange z 0 -1 withscores]
    }

    test "ZADD on a wrong type - $enc" {
        r del s
        r set s x
        assert_error $WRONGTYPE {r zadd s 1 a}
        assert_error $WRONGTYPE {r zincrby s 1 a}
        assert_equal x [r get s]
        # option errors come first
        assert_error {ERR XX and NX*} {r zadd s nx xx 1 a}
    }

    test "Scores: 17 digits in RESP2, doubles in RESP3 - $enc" {
        r del z
        r zadd z 0.1 a 1 b 1e300 c -0.5 d 123456789012345678 e
        assert_equal "\$19\r\n0.10000000000000001\r\n" [r rawcall zscore z a]
        assert_equal "\$1\r\n1\r\n" [r rawcall zscore z b]
        assert_equal "\$23\r\n1.0000000000000001e+300\r\n" [r rawcall zscore z c]
        assert_equal "\$22\r\n1.2345678901234568e+17\r\n" [r rawcall zscore z e]
        set c [redis_client]
        $c hello 3
        assert_equal ",0.10000000000000001\r\n" [$c rawcall zscore z a]
        assert_equal ",-0.5\r\n" [$c rawcall zscore z d]
        assert_equal "_\r\n" [$c rawcall zscore z nosuch]
        r zadd z inf f
        assert_equal ",inf\r\n" [$c rawcall zscore z f]
        assert_equal "\$3\r\ninf\r\n" [r rawcall zscore z f]
        $c close
    }

    test "ZREM - $enc" {
        r del z
        r zadd z 1 a 2 b 3 c
        assert_equal 2 [r zrem z a b nosuch a]
        assert_equal 0 [r zrem z nosuch]
        assert_equal 0 [r zrem nokey a]
        assert_equal 1 [r zrem z c]
        assert_equal 0 [r exists z]
        r set s x
        assert_error $WRONGTYPE {r zrem s a}
    }

    test "ZCARD / ZSCORE / ZMSCORE - $enc" {
        r del z
        r zadd z 1 a 2 b
        assert_equal 2 [r zcard z]
        assert_equal 0 [r zcard nokey]
        assert_equal "\$-1\r\n" [r rawcall zscore z nosuch]
        assert_equal "\$-1\r\n" [r rawcall zscore nokey a]
        assert_equal "*3\r\n\$1\r\n1\r\n\$-1\r\n\$1\r\n2\r\n" [r rawcall zmscore z a x b]
        assert_equal "*2\r\n\$-1\r\n\$-1\r\n" [r rawcall zmscore nokey a b]
        assert_error {ERR wrong number of arguments for 'zmscore' command} {r zmscore z}
        assert_error $WRONGTYPE {r zcard s}
        assert_error $WRONGTYPE {r zscore s a}
        assert_error $WRONGTYPE {r zmscore s a}
        set c [redis_client]
        $c hello 3
        assert_equal "*3\r\n,1\r\n_\r\n,2\r\n" [$c rawcall zmscore z a x b]
        $c close
    }

    test "ZRANK / ZREVRANK - $enc" {
        r del z
        r zadd z 1 a 2 b 3 c 3 d
        assert_equal 0 [r zrank z a]
        assert_equal 3 [r zrank z d]
        assert_equal 3 [r zrevrank z a]
        assert_equal 0 [r zrevrank z d]
        assert_equal "\$-1\r\n" [r rawcall zrank z nosuch]
        assert_equal "\$-1\r\n" [r rawcall zrevrank nokey a]
        assert_error $WRONGTYPE {r zrank s a}
        assert_error {ERR wrong number of arguments for 'zrank' command} {r zrank z a withscore}
    }

    test "Ties are ordered by member bytes - $enc" {
        r del z
        r zadd z 1 b 1 a 1 ab 1 "" 1 "\xff" 1 "\x00" 1 B 0 zz 2 aa
        assert_equal [list zz "" "\x00" B a ab b "\xff" aa] [r zrange z 0 -1]
        assert_equal 1 [r zrank z ""]
        assert_equal 4 [r zrank z a]
        # -0 and 0 are the same score
        r del z
        r zadd z 0 b -0 a
        assert_equal {a b} [r zrange z 0 -1]
    }

    test "ZRANGE by rank, ZREVRANGE, WITHSCORES - $enc" {
        r del z
        r zadd z 1 a 2 b 3 c 4 d
        assert_equal {a b c d} [r zrange z 0 -1]
        assert_equal {a b} [r zrange z 0 1]
        assert_equal {c d} [r zrange z -2 -1]
        assert_equal {d} [r zrange z 3 100]
        assert_equal {} [r zrange z 2 1]
        assert_equal {} [r zrange z 4 10]
        assert_equal {a b c d} [r zrange z -100 100]
        assert_equal {d c b a} [r zrevrange z 0 -1]
        assert_equal {d 4 c 3} [r zrevrange z 0 1 withscores]
        assert_equal {d c} [r zrange z 0 1 rev]
        assert_equal {a 1 b 2} [r zrange z 0 1 withscores]
        assert_equal "*0\r\n" [r rawcall zrange nokey 0 -1]
        assert_equal "*0\r\n" [r rawcall zrange z 5 6]
        assert_equal "*4\r\n\$1\r\na\r\n\$1\r\n1\r\n\$1\r\nb\r\n\$1\r\n2\r\n" [r rawcall zrange z 0 1 withscores]
        assert_equal {a b c d} [r zrange z 0 9223372036854775807]
        assert_equal {} [r zrange z -9223372036854775808 -9223372036854775808]
        assert_error {ERR value is not an integer or out of range} {r zrange z a 1}
        assert_error {ERR value is not an integer or out of range} {r zrange z 0 1.5}
        assert_error $WRONGTYPE {r zrange s 0 -1}
    }

    test "ZRANGE RESP3 WITHSCORES is an array of pairs - $enc" {
        set c [redis_client]
        $c hello 3
        assert_equal "*2\r\n*2\r\n\$1\r\na\r\n,1\r\n*2\r\n\$1\r\nb\r\n,2\r\n" [$c rawcall zrange z 0 1 withscores]
        assert_equal "*2\r\n\$1\r\na\r\n\$1\r\nb\r\n" [$c rawcall zrange z 0 1]
        assert_equal "*1\r\n*2\r\n\$1\r\nd\r\n,4\r\n" [$c rawcall zrangebyscore z (3 +inf withscores]
        assert_equal "*0\r\n" [$c rawcall zrange z 0 1 byscore withscores limit 0 0]
        $c close
    }

    test "ZRANGE option errors - $enc" {
        assert_error {ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX} {r zrange z 0 1 limit 0 1}
        assert_equal {a b} [r zrange z 0 1 limit 0 -1]
        assert_error {ERR syntax error, WITHSCORES not supported in combination with BYLEX} {r zrange z - + bylex withscores}
        assert_error {ERR syntax error} {r zrange z 0 1 foo}
        assert_error {ERR syntax error} {r zrange z 0 1 byscore bylex}
        assert_error {ERR syntax error} {r zrange z 0 1 limit 0}
        assert_error {ERR syntax error} {r zrevrange z 0 1 rev}
        assert_error {ERR syntax error} {r zrangebyscore z 0 1 byscore}
        assert_error {ERR syntax error} {r zrangebyscore z 0 1 rev}
        assert_error {ERR value is not an integer or out of range} {r zrange z 0 1 byscore limit x 1}
        assert_error {ERR min or max is not a float} {r zrange z a b byscore}
        assert_error {ERR min or max not valid string range item} {r zrange z a b bylex}
        assert_error {ERR syntax error, LIMIT*} {r zrevrange z 0 1 limit 0 1}
        # options are read before the key
        assert_error {ERR syntax error} {r zrange s 0 1 foo}
    }

    test "ZRANGEBYSCORE / ZREVRANGEBYSCORE / ZCOUNT - $enc" {
        r del z
        r zadd z -inf ninf 1 a 2 b 3 c 4 d 5 e inf pinf
        assert_equal {a b c} [r zrangebyscore z 1 3]
        assert_equal {b} [r zrangebyscore z (1 (3]
        assert_equal {ninf a} [r zrangebyscore z -inf 1]
        assert_equal {e pinf} [r zrangebyscore z (4 +inf]
        assert_equal {pinf} [r zrangebyscore z inf inf]
        assert_equal {} [r zrangebyscore z (inf inf]
        assert_equal {} [r zrangebyscore z 3 1]
        assert_equal {} [r zrangebyscore z (2 2]
        assert_equal {b} [r zrangebyscore z 2 2]
        assert_equal {c b a} [r zrevrangebyscore z 3 1]
        assert_equal {c 3 b 2} [r zrevrangebyscore z (4 (1 withscores]
        assert_equal {b c} [r zrangebyscore z 1 5 limit 1 2]
        assert_equal {b c d e} [r zrangebyscore z 1 5 limit 1 -1]
        assert_equal {} [r zrangebyscore z 1 5 limit 1 0]
        assert_equal {} [r zrangebyscore z 1 5 limit -1 10]
        assert_equal {} [r zrangebyscore z -inf +inf limit 7 1]
        assert_equal {pinf} [r zrangebyscore z -inf +inf limit 6 1]
        assert_equal {d c} [r zrevrangebyscore z 5 1 limit 1 2]
        assert_equal {d c} [r zrange z 5 1 byscore rev limit 1 2]
        assert_equal {b 2 c 3} [r zrange z (1 3 byscore withscores]
        assert_equal 3 [r zcount z 1 3]
        assert_equal 1 [r zcount z (1 (3]
        assert_equal 7 [r zcount z -inf +inf]
        assert_equal 0 [r zcount z 3 1]
        assert_equal 0 [r zcount nokey 1 3]
        assert_error {ERR min or max is not a float} {r zcount z a 1}
        assert_error {ERR min or max is not a float} {r zrangebyscore z 1 nan}
        assert_error {ERR min or max is not a float} {r zrangebyscore z ((1 2}
        assert_error $WRONGTYPE {r zcount s 1 2}
        # the range is parsed before the key is looked at
        assert_error {ERR min or max is not a float} {r zcount s a 1}
    }

    test "Score bounds follow strtod - $enc" {
        r del z
        r zadd z -1 a 0 b 1 c 16 d
        # an empty bound is 0, "(" alone is an exclusive 0
        assert_equal {b} [r zrangebyscore z "" 0]
        assert_equal {c d} [r zrangebyscore z ( +inf]
        assert_equal {d} [r zrangebyscore z 0x10 0x10]
        assert_equal {c} [r zrangebyscore z " 1" 1]
        assert_equal {d} [r zrangebyscore z 2 1e400]
        assert_equal 4 [r zcount z -1e400 +1e400]
    }

    test "ZRANGEBYLEX / ZREVRANGEBYLEX / ZLEXCOUNT - $enc" {
        r del z
        r zadd z 0 a 0 b 0 c 0 d 0 e 0 f 0 g
        assert_equal {a b c d e f g} [r zrangebylex z - +]
        assert_equal {} [r zrangebylex z + -]
        assert_equal {} [r zrangebylex z - -]
        assert_equal {a b c} [r zrangebylex z - \[c]
        assert_equal {a b} [r zrangebylex z - (c]
        assert_equal {c d e} [r zrangebylex z \[c \[e]
        assert_equal {d} [r zrangebylex z (c (e]
        assert_equal {} [r zrangebylex z (c (c]
        assert_equal {c} [r zrangebylex z \[c \[c]
        assert_equal {} [r zrangebylex z \[e \[c]
        assert_equal {e d c} [r zrevrangebylex z \[e \[c]
        assert_equal {g f e d c b a} [r zrevrangebylex z + -]
        assert_equal {b c} [r zrangebylex z - + limit 1 2]
        assert_equal {f e} [r zrevrangebylex z + - limit 1 2]
        assert_equal {f e} [r zrange z + - bylex rev limit 1 2]
        assert_equal {c d e f g} [r zrangebylex z \[c +]
        assert_equal 7 [r zlexcount z - +]
        assert_equal 3 [r zlexcount z \[c \[e]
        assert_equal 1 [r zlexcount z (c (e]
        assert_equal 0 [r zlexcount z + -]
        assert_equal 0 [r zlexcount nokey - +]
        assert_error {ERR min or max not valid string range item} {r zrangebylex z a +}
        assert_error {ERR min or max not valid string range item} {r zrangebylex z - c}
        assert_error {ERR min or max not valid string range item} {r zrangebylex z "" +}
        assert_error {ERR min or max not valid string range item} {r zlexcount z -- +}
        assert_error {ERR min or max not valid string range item} {r zlexcount z - ++}
        assert_error {ERR syntax error, WITHSCORES not supported in combination with BYLEX} {r zrangebylex z - + withscores}
        assert_error $WRONGTYPE {r zlexcount s - +}
        # binary members and bounds
        r del z
        r zadd z 0 "\x00" 0 "a\x00b" 0 "a" 0 "\xff"
        assert_equal [list "a" "a\x00b"] [r zrangebylex z "\[a" "(b"]
        assert_equal 2 [r zlexcount z "(\x00" "(\xff"]
    }

    test "ZREMRANGEBYRANK / BYSCORE / BYLEX - $enc" {
        r del z
        r zadd z 1 a 2 b 3 c 4 d 5 e
        assert_equal 2 [r zremrangebyrank z 0 1]
        assert_equal {c d e} [r zrange z 0 -1]
        assert_equal 0 [r zremrangebyrank z 5 10]
        assert_equal 0 [r zremrangebyrank z 2 1]
        assert_equal 1 [r zremrangebyrank z -1 -1]
        assert_equal 2 [r zremrangebyscore z -inf (5]
        assert_equal 0 [r exists z]
        r zadd z 1 a 2 b 3 c 4 d 5 e
        assert_equal 2 [r zremrangebyscore z (2 4]
        assert_equal {a b e} [r zrange z 0 -1]
        assert_equal 0 [r zremrangebyscore z 10 20]
        assert_equal 3 [r zremrangebyrank z 0 -1]
        assert_equal 0 [r exists z]
        r zadd z 0 a 0 b 0 c 0 d
        assert_equal 2 [r zremrangebylex z (a \[c]
        assert_equal {a d} [r zrange z 0 -1]
        assert_equal 2 [r zremrangebylex z - +]
        assert_equal 0 [r exists z]
        assert_equal 0 [r zremrangebyrank nokey 0 -1]
        assert_error {ERR value is not an integer or out of range} {r zremrangebyrank z a 1}
        assert_error {ERR min or max is not a float} {r zremrangebyscore z a 1}
        assert_error {ERR min or max not valid string range item} {r zremrangebylex z a +}
        assert_error $WRONGTYPE {r zremrangebyrank s 0 1}
    }

    test "ZPOPMIN / ZPOPMAX - $enc" {
        r del z
        r zadd z 1 a 2 b 3 c 4 d
        assert_equal {a 1} [r zpopmin z]
        assert_equal {d 4} [r zpopmax z]
        assert_equal {b 2 c 3} [r zpopmin z 10]
        assert_equal 0 [r exists z]
        assert_equal "*0\r\n" [r rawcall zpopmin z]
        assert_equal "*0\r\n" [r rawcall zpopmin z 3]
        r zadd z 1 a 2 b 3 c
        assert_equal "*0\r\n" [r rawcall zpopmax z 0]
        assert_equal {c 3 b 2} [r zpopmax z 2]
        assert_error {ERR value is out of range, must be positive} {r zpopmin z -1}
        assert_error {ERR value is out of range, must be positive} {r zpopmin z abc}
        assert_error {ERR syntax error} {r zpopmin z 1 2}
        assert_error $WRONGTYPE {r zpopmin s}
        set c [redis_client]
        $c hello 3
        r del z
        r zadd z 1 a 2 b
        assert_equal "*2\r\n\$1\r\na\r\n,1\r\n" [$c rawcall zpopmin z]
        assert_equal "*1\r\n*2\r\n\$1\r\nb\r\n,2\r\n" [$c rawcall zpopmin z 1]
        assert_equal "*0\r\n" [$c rawcall zpopmin z 1]
        $c close
    }

    test "ZMPOP - $enc" {
        r del z z2
        r zadd z2 1 a 2 b 3 c
        assert_equal {z2 {{a 1}}} [r zmpop 2 z z2 min]
        assert_equal {z2 {{c 3} {b 2}}} [r zmpop 2 z z2 max count 10]
        assert_equal 0 [r exists z2]
        assert_equal "*-1\r\n" [r rawcall zmpop 2 z z2 min]
        assert_error {ERR numkeys should be greater than 0} {r zmpop 0 z min}
        assert_error {ERR numkeys should be greater than 0} {r zmpop x z min}
        assert_error {ERR syntax error} {r zmpop 2 z min}
        assert_error {ERR syntax error} {r zmpop 1 z foo}
        assert_error {ERR syntax error} {r zmpop 1 z min count}
        assert_error {ERR syntax error} {r zmpop 1 z min count 1 count 1}
        assert_error {ERR count should be greater than 0} {r zmpop 1 z min count 0}
        assert_error {ERR count should be greater than 0} {r zmpop 1 z min count x}
        r set s x
        assert_error $WRONGTYPE {r zmpop 2 s z min}
        r zadd z 1 a
        set c [redis_client]
        $c hello 3
        assert_equal "*2\r\n\$1\r\nz\r\n*1\r\n*2\r\n\$1\r\na\r\n,1\r\n" [$c rawcall zmpop 1 z min]
        assert_equal "_\r\n" [$c rawcall zmpop 1 z min]
        $c close
    }

    test "ZRANDMEMBER - $enc" {
        r del z
        r zadd z 1 a 2 b 3 c 4 d 5 e
        assert_match {[abcde]} [r zrandmember z]
        assert_equal "\$-1\r\n" [r rawcall zrandmember nokey]
        assert_equal "*0\r\n" [r rawcall zrandmember nokey 5]
        assert_equal "*0\r\n" [r rawcall zrandmember z 0]
        # count >= size: the whole zset, from the top
        assert_equal {e d c b a} [r zrandmember z 10]
        assert_equal {e 5 d 4 c 3 b 2 a 1} [r zrandmember z 5 withscores]
        # positive count: distinct members
        for {set i 0} {$i < 20} {incr i} {
            set res [r zrandmember z 3]
            assert_equal 3 [llength $res]
            assert_equal 3 [llength [lsort -unique $res]]
            set res [r zrandmember z 4 withscores]
            assert_equal 8 [llength $res]
            foreach {m s} $res {assert_equal $s [r zscore z $m]}
        }
        # negative count: repetitions allowed, exactly |count| of them
        set res [r zrandmember z -20]
        assert_equal 20 [llength $res]
        foreach m $res {assert_match {[abcde]} $m}
        assert_equal 40 [llength [r zrandmember z -20 withscores]]
        assert_error {ERR syntax error} {r zrandmember z 1 foo}
        assert_error {ERR syntax error} {r zrandmember z 1 withscores x}
        assert_error {ERR value is not an integer or out of range} {r zrandmember z x}
        assert_error {ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807} {r zrandmember z -9223372036854775808}
        assert_error {ERR value is out of range} {r zrandmember z -9223372036854775807 withscores}
        assert_error $WRONGTYPE {r zrandmember s}
        set c [redis_client]
        $c hello 3
        r del z1
        r zadd z1 5 e
        assert_equal "*1\r\n*2\r\n\$1\r\ne\r\n,5\r\n" [$c rawcall zrandmember z1 1 withscores]
        assert_equal "*1\r\n*2\r\n\$1\r\ne\r\n,5\r\n" [$c rawcall zrandmember z1 -1 withscores]
        assert_equal "*2\r\n\$1\r\ne\r\n\$1\r\n5\r\n" [r rawcall zrandmember z1 1 withscores]
        $c close
    }

    test "ZRANGESTORE - $enc" {
        r del z dst
        r zadd z 1 a 2 b 3 c 4 d
        assert_equal 2 [r zrangestore dst z 1 2]
        assert_equal {b 2 c 3} [r zrange dst 0 -1 withscores]
        assert_equal 3 [r zrangestore dst z (1 +inf byscore]
        assert_equal {b c d} [r zrange dst 0 -1]
        assert_equal 2 [r zrangestore dst z +inf -inf byscore rev limit 1 2]
        assert_equal {b c} [r zrange dst 0 -1]
        assert_equal 1 [r zrangestore dst z 0 0 rev]
        assert_equal {d} [r zrange dst 0 -1]
        # an empty result deletes the destination
        assert_equal 0 [r zrangestore dst z 10 20]
        assert_equal 0 [r exists dst]
        r set dst x
        assert_equal 0 [r zrangestore dst nokey 0 -1]
        assert_equal 0 [r exists dst]
        # the destination is overwritten whatever it held, TTL gone
        r set dst x
        r expire dst 100
        assert_equal 4 [r zrangestore dst z 0 -1]
        assert_equal -1 [r ttl dst]
        assert_equal zset [r type dst]
        # in place
        assert_equal 2 [r zrangestore z z 0 1]
        assert_equal {a b} [r zrange z 0 -1]
        r zadd zl 0 a 0 b 0 c
        assert_equal 2 [r zrangestore dst zl \[b + bylex]
        assert_equal {b c} [r zrange dst 0 -1]
        assert_error {ERR syntax error} {r zrangestore dst z 0 -1 withscores}
        assert_error $WRONGTYPE {r zrangestore dst s 0 -1}
    }

    test "ZSCAN - $enc" {
        r del z
        r zadd z 1 a 2 b 1.5 c
        set d [zscan_all z]
        assert_equal {a 1 b 2 c 1.5} [dict_sorted_z $d]
        assert_equal {a 1} [dict_sorted_z [zscan_all z 10 a*]]
        assert_equal "*2\r\n\$1\r\n0\r\n*0\r\n" [r rawcall zscan nokey 0]
        assert_error {ERR invalid cursor} {r zscan z x}
        assert_error {ERR syntax error} {r zscan z 0 count 0}
        assert_error {ERR syntax error} {r zscan z 0 foo 1}
        assert_error {ERR syntax error} {r zscan z 0 count}
        assert_error {ERR value is not an integer or out of range} {r zscan z 0 count x}
        assert_error $WRONGTYPE {r zscan s 0}
    }
}

proc dict_sorted_z {d} {
    set out {}
    foreach k [lsort [dict keys $d]] {lappend out $k [dict get $d $k]}
    return $out
}

start_server {tags {zset}} {
    r set s x

    foreach enc {listpack skiplist} {
        zset_basic_tests $enc
    }
    r config set zset-max-listpack-entries 128
    r config set zset-max-listpack-value 64

    # --- encodings and conversions ------------------------------------------------

    test {Listpack until 128 entries, skiplist after} {
        r del z
        fill_zset z 128
        assert_encoding listpack z
        r zadd z 1000 extra
        assert_encoding skiplist z
        assert_equal 129 [r zcard z]
        # removing members does not convert back
        r zremrangebyrank z 0 100
        assert_encoding skiplist z
        assert_equal 28 [r zcard z]
    }

    test {A member longer than 64 bytes converts at once} {
        r del z
        r zadd z 1 a
        assert_encoding listpack z
        r zadd z 2 [string repeat x 64]
        assert_encoding listpack z
        r zadd z 3 [string repeat x 65]
        assert_encoding skiplist z
        r del z
        r zadd z 1 [string repeat y 65]
        assert_encoding skiplist z
        # an update of a long member that exists is not an insertion
        r del z
        r zadd z 1 a
        r zadd z xx 2 [string repeat y 65]
        assert_encoding listpack z
    }

    test {CONFIG SET of the listpack limits is honoured} {
        r config set zset-max-listpack-entries 4
        r del z
        r zadd z 1 a 2 b 3 c 4 d
        assert_encoding listpack z
        r zadd z 5 e
        assert_encoding skiplist z
        r config set zset-max-listpack-entries 128
        r config set zset-max-listpack-value 3
        r del z
        r zadd z 1 abc
        assert_encoding listpack z
        r zadd z 1 abcd
        assert_encoding skiplist z
        r config set zset-max-listpack-value 64
    }

    test {Store commands pick the encoding from the result} {
        r del big small dst
        fill_zset big 200
        assert_encoding skiplist big
        assert_equal 10 [r zrangestore dst big 0 9]
        assert_encoding listpack dst
        assert_equal 150 [r zrangestore dst big 0 149]
        assert_encoding skiplist dst
        assert_equal 5 [r zrangestore dst big (194 +inf byscore]
        assert_encoding listpack dst
        assert_equal 200 [r zunionstore dst 1 big]
        assert_encoding skiplist dst
        assert_equal 200 [r zinterstore dst 2 big big weights 0 0 aggregate min]
        assert_equal {m0 0 m1 0} [r zrange dst 0 1 withscores]
        assert_encoding skiplist dst
        r zadd small 1 m1 2 m2
        assert_equal 2 [r zinterstore dst 2 big small]
        assert_encoding listpack dst
        assert_equal {m1 2 m2 4} [r zrange dst 0 -1 withscores]
        assert_equal 198 [r zdiffstore dst 2 big small]
        assert_encoding skiplist dst
        r zadd long 1 [string repeat z 70]
        assert_equal 1 [r zunionstore dst 1 long]
        assert_encoding skiplist dst
    }

    test {-0 is kept by a skiplist and stored as 0 by a listpack} {
        r del a b
        r zadd a -0 x
        assert_equal 0 [r zscore a x]
        r config set zset-max-listpack-entries 0
        r zadd b -0 x
        assert_equal -0 [r zscore b x]
        assert_equal {x -0} [r zrange b 0 -1 withscores]
        r config set zset-max-listpack-entries 128
        # the result fits a listpack again
        r zunionstore c 1 b
        assert_encoding listpack c
        assert_equal 0 [r zscore c x]
    }

    test {ZSCAN prints listpack scores as Redis stores them} {
        r del lp sk
        r zadd lp 123456789012345678 a 0.1 b 1e300 c -0 d
        set d [zscan_all lp]
        assert_equal 123456789012345680 [dict get $d a]
        assert_equal 0.10000000000000001 [dict get $d b]
        assert_equal 1.0000000000000001e+300 [dict get $d c]
        assert_equal 0 [dict get $d d]
        r config set zset-max-listpack-entries 0
        r zadd sk 123456789012345678 a 0.1 b
        r config set zset-max-listpack-entries 128
        set d [zscan_all sk]
        assert_equal 1.2345678901234568e+17 [dict get $d a]
        assert_equal 0.10000000000000001 [dict get $d b]
    }

    test {ZSCAN of a big zset sees every member once and stays consistent} {
        r del z
        fill_zset z 5000
        set d [zscan_all z 37]
        assert_equal 5000 [dict size $d]
        assert_equal 4999 [dict get $d m4999]
        set d [zscan_all z 100 m42*]
        assert_equal 111 [dict size $d]
    }

    test {A listpack zset with mixed scores walks lex ranges as Redis's listpack} {
        r del z
        r zadd z 1 c 2 a 3 d 4 b
        assert_encoding listpack z
        # the first member >= "b" is c; the walk stops at the first > "c"
        assert_equal {c a} [r zrangebylex z \[b \[c]
        assert_equal 2 [r zlexcount z \[b \[c]
        assert_equal 2 [r zremrangebylex z \[b \[c]
        assert_equal {d b} [r zrange z 0 -1]
        r del z
        r zadd z 1 c 2 a 3 d 4 b
        # backwards: from the last member <= "c" while >= "b"
        assert_equal {b d} [r zrevrangebylex z \[c \[b]
        assert_equal {c a d b} [r zrangebylex z - +]
    }

    # --- big zsets: ranks and ranges against a model --------------------------------

    test {Big zset: ranks, ranges and removals against a model} {
        r del z
        set pairs {}
        set args {}
        for {set i 0} {$i < 3000} {incr i} {
            set s [expr {int(rand() * 500) - 250}]
            set m "m[expr {int(rand() * 2500)}]"
            if {[dict exists $args $m]} continue
            dict set args $m $s
        }
        dict for {m s} $args {
            r zadd z $s $m
            lappend pairs [list $s $m]
        }
        set model [zmodel_sort $pairs]
        assert_encoding skiplist z
        assert_equal [llength $model] [r zcard z]
        set flat {}
        foreach p $model {lappend flat [lindex $p 1]}
        assert_equal $flat [r zrange z 0 -1]
        for {set k 0} {$k < 200} {incr k} {
            set i [expr {int(rand() * [llength $model])}]
            lassign [lindex $model $i] s m
            assert_equal $i [r zrank z $m]
            assert_equal [expr {[llength $model] - 1 - $i}] [r zrevrank z $m]
            assert_equal $m [lindex [r zrange z $i $i] 0]
            assert_equal $s [r zscore z $m]
        }
        # score ranges
        for {set k 0} {$k < 50} {incr k} {
            set a [expr {int(rand() * 500) - 250}]
            set b [expr {$a + int(rand() * 100)}]
            set want {}
            foreach p $model {
                lassign $p s m
                if {$s > $a && $s <= $b} {lappend want $m}
            }
            assert_equal $want [r zrangebyscore z ($a $b]
            assert_equal [llength $want] [r zcount z ($a $b]
            assert_equal [lreverse $want] [r zrevrangebyscore z $b ($a]
            assert_equal [lrange $want 3 7] [r zrangebyscore z ($a $b limit 3 5]
        }
        # removals keep ranks right
        assert_equal 100 [r zremrangebyrank z 1000 1099]
        set model [lreplace $model 1000 1099]
        set m [lindex [lindex $model 1500] 1]
        assert_equal 1500 [r zrank z $m]
        set n [r zremrangebyscore z -10 10]
        set model2 {}
        foreach p $model {if {[lindex $p 0] < -10 || [lindex $p 0] > 10} {lappend model2 $p}}
        assert_equal [expr {[llength $model] - [llength $model2]}] $n
        set flat {}
        foreach p $model2 {lappend flat [lindex $p 1]}
        assert_equal $flat [r zrange z 0 -1]
    }

    test {Big zset: updates move members and keep ranks} {
        r del z
        fill_zset z 2000
        for {set i 0} {$i < 500} {incr i} {
            r zincrby z 10000 m$i
        }
        assert_equal 0 [r zrank z m500]
        assert_equal 1999 [r zrank z m499]
        assert_equal 1500 [r zrank z m0]
        assert_equal {m499 10499} [r zrange z -1 -1 withscores]
        assert_equal 500 [r zcount z 10000 +inf]
        for {set i 0} {$i < 500} {incr i} {
            r zadd z [expr {$i + 0.5}] m$i
        }
        assert_equal {m0 0.5 m1 1.5} [r zrange z 0 1 withscores]
        assert_equal 499 [r zrank z m499]
        assert_equal 500 [r zrank z m500]
        assert_equal 1999 [r zrank z m1999]
    }

    test {Big zset: ZRANGE at an offset} {
        r del z
        fill_zset z 20000
        assert_equal {m10000 m10001} [r zrange z 10000 10001]
        assert_equal {m9999 m9998} [r zrange z 10000 10001 rev]
        assert_equal {m15000 m15001} [r zrangebyscore z 10000 +inf limit 5000 2]
        assert_equal {m4999 m4998} [r zrevrangebyscore z 10000 -inf limit 5001 2]
        assert_equal 10000 [r zcount z 10000 +inf]
    }

    test {Big zset: popping and deleting everything} {
        r del z
        fill_zset z 1000
        set got [r zpopmin z 300]
        assert_equal {m0 0} [lrange $got 0 1]
        assert_equal {m299 299} [lrange $got end-1 end]
        assert_equal {m999 999} [r zpopmax z]
        assert_equal 699 [r zcard z]
        assert_equal 699 [r zremrangebyscore z -inf +inf]
        assert_equal 0 [r exists z]
    }

    test {Big zset: ZREM of many members and re-adding them} {
        r del z
        fill_zset z 3000
        set args {}
        for {set i 0} {$i < 3000} {incr i 2} {lappend args m$i}
        assert_equal 1500 [r zrem z {*}$args]
        assert_equal 1500 [r zcard z]
        assert_equal 0 [r zrank z m1]
        assert_equal {m2999} [r zrange z -1 -1]
        fill_zset z 3000
        assert_equal 3000 [r zcard z]
        assert_equal 1234 [r zrank z m1234]
    }

    test {Big zset: lex ranges on equal scores} {
        r del z
        set words {}
        for {set i 0} {$i < 1000} {incr i} {lappend words [format w%04d $i]}
        set args {}
        foreach w $words {lappend args 0 $w}
        r zadd z {*}$args
        assert_encoding skiplist z
        assert_equal [lrange $words 100 199] [r zrangebylex z \[w0100 (w0200]
        assert_equal 100 [r zlexcount z \[w0100 (w0200]
        assert_equal [lreverse [lrange $words 101 200]] [r zrevrangebylex z \[w0200 (w0100]
        assert_equal {w0500 w0501} [r zrangebylex z \[w0100 + limit 400 2]
        assert_equal 100 [r zremrangebylex z \[w0100 (w0200]
        assert_equal 900 [r zcard z]
        assert_equal 100 [r zrank z w0200]
    }

    # --- set operations ---------------------------------------------------------------

    test {ZUNION / ZUNIONSTORE with WEIGHTS and AGGREGATE} {
        r del a b c dst
        r zadd a 1 x 2 y 3 z
        r zadd b 10 y 20 z 30 w
        assert_equal {x 1 y 12 z 23 w 30} [r zunion 2 a b withscores]
        assert_equal {x 1 y 10 z 20 w 30} [r zunion 2 a b aggregate max withscores]
        assert_equal {x 1 y 2 z 3 w 30} [r zunion 2 a b aggregate min withscores]
        assert_equal {x 2 y 14 z 26 w 30} [r zunion 2 a b weights 2 1 withscores]
        assert_equal {x 1 y 2 z 3} [r zunion 2 a nokey withscores]
        assert_equal 4 [r zunionstore dst 2 a b]
        assert_equal {x 1 y 12 z 23 w 30} [r zrange dst 0 -1 withscores]
        assert_equal 0 [r zunionstore dst 1 nokey]
        assert_equal 0 [r exists dst]
        # inf * 0 is 0, inf + -inf is 0
        r del p q
        r zadd p inf x
        r zadd q -inf x
        assert_equal {x 0} [r zunion 2 p q withscores]
        assert_equal {x 0} [r zunion 1 p weights 0 withscores]
        set c [redis_client]
        $c hello 3
        assert_equal "*1\r\n*2\r\n\$1\r\nx\r\n,0\r\n" [$c rawcall zunion 2 p q withscores]
        $c close
    }

    test {ZINTER / ZINTERSTORE / ZINTERCARD} {
        r del a b dst
        r zadd a 1 x 2 y 3 z
        r zadd b 10 y 20 z 30 w
        assert_equal {y 12 z 23} [r zinter 2 a b withscores]
        assert_equal {y 2 z 3} [r zinter 2 a b aggregate min withscores]
        assert_equal {y 10 z 20} [r zinter 2 a b weights 0 1 aggregate max withscores]
        assert_equal {} [r zinter 2 a nokey]
        assert_equal {x 2 y 4 z 6} [r zinter 2 a a withscores]
        assert_equal 2 [r zinterstore dst 2 a b]
        assert_equal {y 12 z 23} [r zrange dst 0 -1 withscores]
        assert_equal 2 [r zintercard 2 a b]
        assert_equal 1 [r zintercard 2 a b limit 1]
        assert_equal 2 [r zintercard 2 a b limit 0]
        assert_equal 0 [r zintercard 2 a nokey]
        assert_error {ERR LIMIT can't be negative} {r zintercard 2 a b limit -1}
        assert_error {ERR LIMIT can't be negative} {r zintercard 2 a b limit x}
        assert_error {ERR syntax error} {r zintercard 2 a b weights 1 1}
        assert_error {ERR syntax error} {r zintercard 2 a b withscores}
        assert_error {ERR at least 1 input key is needed for 'zintercard' command} {r zintercard 0 a}
    }

    test {ZDIFF / ZDIFFSTORE} {
        r del a b dst
        r zadd a 1 x 2 y 3 z
        r zadd b 10 y
        assert_equal {x 1 z 3} [r zdiff 2 a b withscores]
        assert_equal {x y z} [r zdiff 2 a nokey]
        assert_equal {} [r zdiff 2 a a]
        assert_equal {} [r zdiff 2 nokey a]
        assert_equal 2 [r zdiffstore dst 2 a b]
        assert_equal {x 1 z 3} [r zrange dst 0 -1 withscores]
        assert_equal 0 [r zdiffstore dst 2 a a]
        assert_equal 0 [r exists dst]
        assert_error {ERR syntax error} {r zdiff 2 a b weights 1 2}
        assert_error {ERR syntax error} {r zdiff 2 a b aggregate sum}
        assert_error {ERR syntax error} {r zdiffstore dst 2 a b withscores}
    }

    test {Set operation errors} {
        assert_error {ERR at least 1 input key is needed for 'zunionstore' command} {r zunionstore dst 0 a}
        assert_error {ERR at least 1 input key is needed for 'zunion' command} {r zunion 0 a}
        assert_error {ERR at least 1 input key is needed for 'zdiff' command} {r zdiff -1 a}
        assert_error {ERR value is not an integer or out of range} {r zunion x a}
        assert_error {ERR syntax error} {r zunion 3 a b}
        assert_error {ERR syntax error} {r zunion 2 a b weights 1}
        assert_error {ERR weight value is not a float} {r zunion 2 a b weights 1 x}
        assert_error {ERR syntax error} {r zunion 2 a b aggregate avg}
        assert_error {ERR syntax error} {r zunion 2 a b aggregate}
        assert_error {ERR syntax error} {r zunionstore dst 2 a b withscores}
        assert_error $WRONGTYPE {r zunion 2 a s}
        # keys are checked before the options
        assert_error $WRONGTYPE {r zunion 2 a s weights x y}
    }

    test {Set operations accept plain sets (score 1)} {
        needs_feature command:sadd
        r del a st dst
        r zadd a 1 x 5 y
        r sadd st y z
        assert_equal {x 1 z 1 y 6} [r zunion 2 a st withscores]
        assert_equal {y 6} [r zinter 2 a st withscores]
        assert_equal {x 1} [r zdiff 2 a st withscores]
        assert_equal {z 1} [r zdiff 2 st a withscores]
        assert_equal 1 [r zintercard 2 st a]
        assert_equal {y 2 z 2} [r zunion 1 st weights 2 withscores]
    }

    # --- blocking pops -----------------------------------------------------------

    test {BZPOPMIN / BZPOPMAX serve at once when data is there} {
        r del z z2
        r zadd z2 1 a 2 b
        assert_equal {z2 a 1} [r bzpopmin z z2 0]
        assert_equal {z2 b 2} [r bzpopmax z z2 0]
        assert_equal 0 [r exists z2]
        set c [redis_client]
        $c hello 3
        r zadd z 3 c
        assert_equal "*3\r\n\$1\r\nz\r\n\$1\r\nc\r\n,3\r\n" [$c rawcall bzpopmin z 0]
        $c close
    }

    test {BZPOPMIN times out with a null array} {
        r del z
        set t0 [clock milliseconds]
        assert_equal "*-1\r\n" [r rawcall bzpopmin z 0.1]
        assert_morethan [expr {[clock milliseconds] - $t0}] 80
        assert_error {ERR timeout is not a float or out of range} {r bzpopmin z abc}
        assert_error {ERR timeout is negative} {r bzpopmin z -1}
        r set s x
        assert_error $WRONGTYPE {r bzpopmin s 0}
    }

    test {BZPOPMIN wakes when a zset arrives} {
        r del z
        set rd [redis_deferring_client]
        $rd bzpopmin z 5
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {fail "client not blocked"}
        r zadd z 1 a 2 b
        assert_equal {z a 1} [$rd read]
        assert_equal {b} [r zrange z 0 -1]
    }

    test {BZPOPMAX wakes on ZUNIONSTORE and ZRANGESTORE results} {
        r del z src
        r zadd src 1 a 2 b
        set rd [redis_deferring_client]
        $rd bzpopmax z 5
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {fail "client not blocked"}
        r zunionstore z 1 src
        assert_equal {z b 2} [$rd read]
        r del z
        $rd bzpopmin z 5
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {fail "client not blocked"}
        r zrangestore z src 0 0
        assert_equal {z a 1} [$rd read]
    }

    test {Blocked clients are served in FIFO order} {
        r del z
        set rd1 [redis_deferring_client]
        set rd2 [redis_deferring_client]
        $rd1 bzpopmin z 5
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {fail "client 1 not blocked"}
        $rd2 bzpopmin z 5
        wait_for_condition 100 10 {[s blocked_clients] == 2} else {fail "client 2 not blocked"}
        r zadd z 1 a 2 b
        assert_equal {z a 1} [$rd1 read]
        assert_equal {z b 2} [$rd2 read]
    }

    test {BZMPOP serves, blocks and wakes} {
        r del z z2
        r zadd z2 1 a 2 b 3 c
        assert_equal {z2 {{c 3} {b 2}}} [r bzmpop 0 2 z z2 max count 2]
        set rd [redis_deferring_client]
        $rd bzmpop 5 1 z min count 5
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {fail "client not blocked"}
        r zadd z 5 x 6 y
        assert_equal {z {{x 5} {y 6}}} [$rd read]
        assert_equal "*-1\r\n" [r rawcall bzmpop 0.05 1 z min]
        assert_error {ERR numkeys should be greater than 0} {r bzmpop 0 0 z min}
        assert_error {ERR syntax error} {r bzmpop 0 1 z foo}
        assert_error {ERR count should be greater than 0} {r bzmpop 0 1 z min count 0}
        assert_error {ERR timeout is negative} {r bzmpop -1 1 z min}
    }

    test {Blocking pops inside MULTI do not block} {
        r del z
        r multi
        r bzpopmin z 0
        r bzmpop 0 1 z min
        assert_equal {{} {}} [r exec]
        r zadd z 1 a
        r multi
        r bzpopmin z 0
        assert_equal {{z a 1}} [r exec]
    }

    test {A blocked client ignores a key of the wrong type} {
        r del z
        set rd [redis_deferring_client]
        $rd bzpopmin z 5
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {fail "client not blocked"}
        r set z notazset
        r del z
        r zadd z 7 q
        assert_equal {z q 7} [$rd read]
    }

    # --- misc ----------------------------------------------------------------------

    test {MEMORY USAGE of a zset grows with it} {
        needs_feature command:memory
        r del z
        r zadd z 1 a
        set small [r memory usage z]
        fill_zset z 10000
        set big [r memory usage z]
        assert_morethan $big [expr {$small * 10}]
        # honest: at least the member bytes
        assert_morethan $big 60000
    }

    test {Keyspace commands see zsets: TYPE, COPY, RENAME} {
        r del z z2
        r zadd z 1 a 2 b
        assert_equal zset [r type z]
        needs_feature command:copy
        assert_equal 1 [r copy z z2]
        r zadd z2 3 c
        assert_equal {a b} [r zrange z 0 -1]
        assert_equal {a b c} [r zrange z2 0 -1]
        r config set zset-max-listpack-entries 0
        r del big
        r zadd big 1 a 2 b
        r config set zset-max-listpack-entries 128
        assert_equal 1 [r copy big big2]
        assert_encoding skiplist big2
        assert_equal {a 1 b 2} [r zrange big2 0 -1 withscores]
        r rename big2 big3
        assert_equal 0 [r zrank big3 a]
    }

    test {Random operations against a model (both encodings)} {
        foreach limit {128 0} {
            r config set zset-max-listpack-entries $limit
            r del z
            array unset zm
            array set zm {}
            for {set i 0} {$i < 2000} {incr i} {
                set m "e[expr {int(rand() * 150)}]"
                set op [expr {int(rand() * 10)}]
                if {$op < 5} {
                    set s [expr {int(rand() * 40) - 20}]
                    r zadd z $s $m
                    set zm($m) $s
                } elseif {$op < 7} {
                    r zrem z $m
                    unset -nocomplain zm($m)
                } elseif {$op < 9} {
                    set inc [expr {int(rand() * 5) - 2}]
                    set got [r zincrby z $inc $m]
                    if {[info exists zm($m)]} {
                        set zm($m) [expr {$zm($m) + $inc}]
                    } else {
                        set zm($m) $inc
                    }
                    assert_equal $zm($m) $got
                } else {
                    set pairs {}
                    foreach k [array names zm] {lappend pairs [list $zm($k) $k]}
                    set flat {}
                    foreach p [zmodel_sort $pairs] {lappend flat [lindex $p 1] [lindex $p 0]}
                    assert_equal $flat [r zrange z 0 -1 withscores]
                }
            }
        }
        r config set zset-max-listpack-entries 128
    }
}

# Scores at the edge of the double range: ±DBL_MAX, inf spelled every way,
# overflow to inf, NaN results refused, and the exact bytes of huge, tiny
# and inexact scores in RESP2 and RESP3 replies (as Redis 7.0 sends them).
proc zset_edge_script {} {
    return {
        {flushall} "+OK\r\n"
        {zadd z 1.7976931348623157e308 max -1.7976931348623157e308 min} ":2\r\n"
        {zscore z max} "\$23\r\n1.7976931348623157e+308\r\n"
        {zscore z min} "\$24\r\n-1.7976931348623157e+308\r\n"
        {zadd z 2e308 big} "-ERR value is not a valid float\r\n"
        {zscore z big} "\$-1\r\n"
        {zadd z 1e309 big2} "-ERR value is not a valid float\r\n"
        {zadd z inf pinf -inf ninf} ":2\r\n"
        {zadd z +inf pinf2} ":1\r\n"
        {zadd z nan n} "-ERR value is not a valid float\r\n"
        {zadd z NaN n} "-ERR value is not a valid float\r\n"
        {zadd z abc n} "-ERR value is not a valid float\r\n"
        {zadd z incr inf pinf} "\$3\r\ninf\r\n"
        {zadd z incr -inf pinf} "-ERR resulting score is not a number (NaN)\r\n"
        {zincrby z -inf pinf} "-ERR resulting score is not a number (NaN)\r\n"
        {zincrby z inf ninf} "-ERR resulting score is not a number (NaN)\r\n"
        {zincrby z 1.7976931348623157e308 max} "\$3\r\ninf\r\n"
        {zscore z max} "\$3\r\ninf\r\n"
        {zincrby z -1.7976931348623157e308 min} "\$4\r\n-inf\r\n"
        {zincrby z -1e308 min} "\$4\r\n-inf\r\n"
        {zincrby z nan min} "-ERR value is not a valid float\r\n"
        {zincrby z 1 nosuchscore} "\$1\r\n1\r\n"
        {zrange z 0 -1 withscores} "*12\r\n\$3\r\nmin\r\n\$4\r\n-inf\r\n\$4\r\nninf\r\n\$4\r\n-inf\r\n\$11\r\nnosuchscore\r\n\$1\r\n1\r\n\$3\r\nmax\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n"
        {zrangebyscore z -inf +inf withscores} "*12\r\n\$3\r\nmin\r\n\$4\r\n-inf\r\n\$4\r\nninf\r\n\$4\r\n-inf\r\n\$11\r\nnosuchscore\r\n\$1\r\n1\r\n\$3\r\nmax\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n"
        {zrangebyscore z (-inf (+inf withscores} "*2\r\n\$11\r\nnosuchscore\r\n\$1\r\n1\r\n"
        {zrangebyscore z (inf inf} "*0\r\n"
        {zrangebyscore z inf inf} "*3\r\n\$3\r\nmax\r\n\$4\r\npinf\r\n\$5\r\npinf2\r\n"
        {zrangebyscore z -inf -inf} "*2\r\n\$3\r\nmin\r\n\$4\r\nninf\r\n"
        {zrangebyscore z (-inf -inf} "*0\r\n"
        {zrangebyscore z (1.7976931348623157e308 +inf} "*3\r\n\$3\r\nmax\r\n\$4\r\npinf\r\n\$5\r\npinf2\r\n"
        {zrangebyscore z 1.7976931348623157e308 1.7976931348623157e308} "*0\r\n"
        {zrangebyscore z nan inf} "-ERR min or max is not a float\r\n"
        {zrangebyscore z 0 (nan} "-ERR min or max is not a float\r\n"
        {zrevrangebyscore z +inf -inf withscores limit 0 2} "*4\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n"
        {zcount z -inf +inf} ":6\r\n"
        {zcount z (-inf (+inf} ":1\r\n"
        {zcount z -1.7976931348623157e308 1.7976931348623157e308} ":1\r\n"
        {zcount z (-1.7976931348623157e308 (1.7976931348623157e308} ":1\r\n"
        {zcount z inf -inf} ":0\r\n"
        {zcount z 1e309 2e309} ":3\r\n"
        {zrangestore d z (-inf +inf byscore} ":4\r\n"
        {zrange d 0 -1 withscores} "*8\r\n\$11\r\nnosuchscore\r\n\$1\r\n1\r\n\$3\r\nmax\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n"
        {zrangestore d z -inf (inf byscore limit 1 2} ":2\r\n"
        {zrange d 0 -1 withscores} "*4\r\n\$4\r\nninf\r\n\$4\r\n-inf\r\n\$11\r\nnosuchscore\r\n\$1\r\n1\r\n"
        {zrange z +inf -inf byscore rev withscores} "*12\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n\$3\r\nmax\r\n\$3\r\ninf\r\n\$11\r\nnosuchscore\r\n\$1\r\n1\r\n\$4\r\nninf\r\n\$4\r\n-inf\r\n\$3\r\nmin\r\n\$4\r\n-inf\r\n"
        {zadd y 1e300 a 123456789012345678 b 0.1 c 1.5e-320 d -0.0 e 3.0000000000000004 f 1e15 g 1e16 h 1e17 i} ":9\r\n"
        {zrange y 0 -1 withscores} "*18\r\n\$1\r\ne\r\n\$1\r\n0\r\n\$1\r\nd\r\n\$23\r\n1.4999833007740245e-320\r\n\$1\r\nc\r\n\$19\r\n0.10000000000000001\r\n\$1\r\nf\r\n\$18\r\n3.0000000000000004\r\n\$1\r\ng\r\n\$16\r\n1000000000000000\r\n\$1\r\nh\r\n\$17\r\n10000000000000000\r\n\$1\r\ni\r\n\$5\r\n1e+17\r\n\$1\r\nb\r\n\$22\r\n1.2345678901234568e+17\r\n\$1\r\na\r\n\$23\r\n1.0000000000000001e+300\r\n"
        {zscore y a} "\$23\r\n1.0000000000000001e+300\r\n"
        {zscore y b} "\$22\r\n1.2345678901234568e+17\r\n"
        {zscore y d} "\$23\r\n1.4999833007740245e-320\r\n"
        {zscore y e} "\$1\r\n0\r\n"
        {zincrby y 1e300 a} "\$23\r\n2.0000000000000001e+300\r\n"
        {zincrby y 1e308 a} "\$15\r\n1.00000002e+308\r\n"
        {zincrby y 1e308 a} "\$3\r\ninf\r\n"
        {zscore y a} "\$3\r\ninf\r\n"
        {zincrby y -inf a} "-ERR resulting score is not a number (NaN)\r\n"
        {zmscore z max min pinf ninf nosuch} "*5\r\n\$3\r\ninf\r\n\$4\r\n-inf\r\n\$3\r\ninf\r\n\$4\r\n-inf\r\n\$-1\r\n"
        {zunionstore u 2 z y weights 1 -1} ":15\r\n"
        {zrange u 0 -1 withscores} "*30\r\n\$1\r\na\r\n\$4\r\n-inf\r\n\$3\r\nmin\r\n\$4\r\n-inf\r\n\$4\r\nninf\r\n\$4\r\n-inf\r\n\$1\r\nb\r\n\$23\r\n-1.2345678901234568e+17\r\n\$1\r\ni\r\n\$6\r\n-1e+17\r\n\$1\r\nh\r\n\$18\r\n-10000000000000000\r\n\$1\r\ng\r\n\$17\r\n-1000000000000000\r\n\$1\r\nf\r\n\$19\r\n-3.0000000000000004\r\n\$1\r\nc\r\n\$20\r\n-0.10000000000000001\r\n\$1\r\nd\r\n\$24\r\n-1.4999833007740245e-320\r\n\$1\r\ne\r\n\$1\r\n0\r\n\$11\r\nnosuchscore\r\n\$1\r\n1\r\n\$3\r\nmax\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n"
        {zunionstore u2 2 z z} ":6\r\n"
        {zrange u2 0 -1 withscores} "*12\r\n\$3\r\nmin\r\n\$4\r\n-inf\r\n\$4\r\nninf\r\n\$4\r\n-inf\r\n\$11\r\nnosuchscore\r\n\$1\r\n2\r\n\$3\r\nmax\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n"
        {zinterstore u3 2 z z weights 0 1} ":6\r\n"
        {zrange u3 0 -1 withscores} "*12\r\n\$3\r\nmin\r\n\$4\r\n-inf\r\n\$4\r\nninf\r\n\$4\r\n-inf\r\n\$11\r\nnosuchscore\r\n\$1\r\n1\r\n\$3\r\nmax\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n"
        {zunionstore u4 2 z z weights inf -inf} ":6\r\n"
        {zunionstore u5 1 z weights 0} ":6\r\n"
        {zrange u5 0 -1 withscores} "*12\r\n\$3\r\nmax\r\n\$1\r\n0\r\n\$3\r\nmin\r\n\$1\r\n0\r\n\$4\r\nninf\r\n\$1\r\n0\r\n\$11\r\nnosuchscore\r\n\$1\r\n0\r\n\$4\r\npinf\r\n\$1\r\n0\r\n\$5\r\npinf2\r\n\$1\r\n0\r\n"
        {zadd zz 0 a} ":1\r\n"
        {zunionstore u6 2 z zz weights inf 0 aggregate sum} ":7\r\n"
        {zrange u6 0 -1 withscores} "*14\r\n\$3\r\nmin\r\n\$4\r\n-inf\r\n\$4\r\nninf\r\n\$4\r\n-inf\r\n\$1\r\na\r\n\$1\r\n0\r\n\$3\r\nmax\r\n\$3\r\ninf\r\n\$11\r\nnosuchscore\r\n\$3\r\ninf\r\n\$4\r\npinf\r\n\$3\r\ninf\r\n\$5\r\npinf2\r\n\$3\r\ninf\r\n"
        {del zq} ":0\r\n"
        {zadd zq INF a Inf b infinity c -Infinity d +INF e 4.9e-324 f 1e308 g -0 h +0 i .5 j 5. k} ":11\r\n"
        {zadd zq 1e-400 x} "-ERR value is not a valid float\r\n"
        {zadd zq 0x10 x} ":1\r\n"
        {zadd zq { 1} x} "-ERR value is not a valid float\r\n"
        {zadd zq {1 } x} "-ERR value is not a valid float\r\n"
        {zadd zq {} x} "-ERR value is not a valid float\r\n"
        {zadd zq - x} "-ERR value is not a valid float\r\n"
        {zadd zq 1e x} "-ERR value is not a valid float\r\n"
        {zadd zq 1_0 x} "-ERR value is not a valid float\r\n"
        {zadd zq (inf x} "-ERR value is not a valid float\r\n"
        {zrange zq 0 -1 withscores} "*24\r\n\$1\r\nd\r\n\$4\r\n-inf\r\n\$1\r\nh\r\n\$1\r\n0\r\n\$1\r\ni\r\n\$1\r\n0\r\n\$1\r\nf\r\n\$23\r\n4.9406564584124654e-324\r\n\$1\r\nj\r\n\$3\r\n0.5\r\n\$1\r\nk\r\n\$1\r\n5\r\n\$1\r\nx\r\n\$2\r\n16\r\n\$1\r\ng\r\n\$6\r\n1e+308\r\n\$1\r\na\r\n\$3\r\ninf\r\n\$1\r\nb\r\n\$3\r\ninf\r\n\$1\r\nc\r\n\$3\r\ninf\r\n\$1\r\ne\r\n\$3\r\ninf\r\n"
        {zcount zq (1e-400 +inf} ":9\r\n"
        {zcount zq (0x10 +inf} ":5\r\n"
        {zcount zq {( 1} +inf} ":7\r\n"
        {zcount zq ((1 +inf} "-ERR min or max is not a float\r\n"
        {zcount zq ( +inf} ":9\r\n"
        {zcount zq {[1} +inf} "-ERR min or max is not a float\r\n"
        {zcount zq infinity +inf} ":4\r\n"
        {zcount zq (Infinity +inf} ":0\r\n"
        {zcount zq (-Infinity (4.9e-324} ":2\r\n"
        {zadd zq gt inf h} ":0\r\n"
        {zadd zq lt -inf i} ":0\r\n"
        {zadd zq gt incr -inf h} "-ERR resulting score is not a number (NaN)\r\n"
        {zadd zq nx incr inf h} "\$-1\r\n"
        {zadd zq xx incr inf nosuch} "\$-1\r\n"
        {zadd zq xx incr -inf i} "\$4\r\n-inf\r\n"
        {zadd zq xx ch incr 1 i} "\$4\r\n-inf\r\n"
        {zrangestore zd zq 4.9e-324 (inf byscore} ":5\r\n"
        {zrange zd 0 -1 withscores} "*10\r\n\$1\r\nf\r\n\$23\r\n4.9406564584124654e-324\r\n\$1\r\nj\r\n\$3\r\n0.5\r\n\$1\r\nk\r\n\$1\r\n5\r\n\$1\r\nx\r\n\$2\r\n16\r\n\$1\r\ng\r\n\$6\r\n1e+308\r\n"
        {zrangestore zd zq (+inf -inf byscore rev limit 0 3} ":3\r\n"
        {zrange zd 0 -1 withscores} "*6\r\n\$1\r\nk\r\n\$1\r\n5\r\n\$1\r\nx\r\n\$2\r\n16\r\n\$1\r\ng\r\n\$6\r\n1e+308\r\n"
    }
}

proc zset_edge_script3 {} {
    return {
        {flushall} "+OK\r\n"
        {zadd z 1.7976931348623157e308 max -1.7976931348623157e308 min} ":2\r\n"
        {zscore z max} ",1.7976931348623157e+308\r\n"
        {zscore z min} ",-1.7976931348623157e+308\r\n"
        {zadd z 2e308 big} "-ERR value is not a valid float\r\n"
        {zscore z big} "_\r\n"
        {zadd z 1e309 big2} "-ERR value is not a valid float\r\n"
        {zadd z inf pinf -inf ninf} ":2\r\n"
        {zadd z +inf pinf2} ":1\r\n"
        {zadd z nan n} "-ERR value is not a valid float\r\n"
        {zadd z NaN n} "-ERR value is not a valid float\r\n"
        {zadd z abc n} "-ERR value is not a valid float\r\n"
        {zadd z incr inf pinf} ",inf\r\n"
        {zadd z incr -inf pinf} "-ERR resulting score is not a number (NaN)\r\n"
        {zincrby z -inf pinf} "-ERR resulting score is not a number (NaN)\r\n"
        {zincrby z inf ninf} "-ERR resulting score is not a number (NaN)\r\n"
        {zincrby z 1.7976931348623157e308 max} ",inf\r\n"
        {zscore z max} ",inf\r\n"
        {zincrby z -1.7976931348623157e308 min} ",-inf\r\n"
        {zincrby z -1e308 min} ",-inf\r\n"
        {zincrby z nan min} "-ERR value is not a valid float\r\n"
        {zincrby z 1 nosuchscore} ",1\r\n"
        {zrange z 0 -1 withscores} "*6\r\n*2\r\n\$3\r\nmin\r\n,-inf\r\n*2\r\n\$4\r\nninf\r\n,-inf\r\n*2\r\n\$11\r\nnosuchscore\r\n,1\r\n*2\r\n\$3\r\nmax\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n"
        {zrangebyscore z -inf +inf withscores} "*6\r\n*2\r\n\$3\r\nmin\r\n,-inf\r\n*2\r\n\$4\r\nninf\r\n,-inf\r\n*2\r\n\$11\r\nnosuchscore\r\n,1\r\n*2\r\n\$3\r\nmax\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n"
        {zrangebyscore z (-inf (+inf withscores} "*1\r\n*2\r\n\$11\r\nnosuchscore\r\n,1\r\n"
        {zrangebyscore z (inf inf} "*0\r\n"
        {zrangebyscore z inf inf} "*3\r\n\$3\r\nmax\r\n\$4\r\npinf\r\n\$5\r\npinf2\r\n"
        {zrangebyscore z -inf -inf} "*2\r\n\$3\r\nmin\r\n\$4\r\nninf\r\n"
        {zrangebyscore z (-inf -inf} "*0\r\n"
        {zrangebyscore z (1.7976931348623157e308 +inf} "*3\r\n\$3\r\nmax\r\n\$4\r\npinf\r\n\$5\r\npinf2\r\n"
        {zrangebyscore z 1.7976931348623157e308 1.7976931348623157e308} "*0\r\n"
        {zrangebyscore z nan inf} "-ERR min or max is not a float\r\n"
        {zrangebyscore z 0 (nan} "-ERR min or max is not a float\r\n"
        {zrevrangebyscore z +inf -inf withscores limit 0 2} "*2\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n"
        {zcount z -inf +inf} ":6\r\n"
        {zcount z (-inf (+inf} ":1\r\n"
        {zcount z -1.7976931348623157e308 1.7976931348623157e308} ":1\r\n"
        {zcount z (-1.7976931348623157e308 (1.7976931348623157e308} ":1\r\n"
        {zcount z inf -inf} ":0\r\n"
        {zcount z 1e309 2e309} ":3\r\n"
        {zrangestore d z (-inf +inf byscore} ":4\r\n"
        {zrange d 0 -1 withscores} "*4\r\n*2\r\n\$11\r\nnosuchscore\r\n,1\r\n*2\r\n\$3\r\nmax\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n"
        {zrangestore d z -inf (inf byscore limit 1 2} ":2\r\n"
        {zrange d 0 -1 withscores} "*2\r\n*2\r\n\$4\r\nninf\r\n,-inf\r\n*2\r\n\$11\r\nnosuchscore\r\n,1\r\n"
        {zrange z +inf -inf byscore rev withscores} "*6\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n*2\r\n\$3\r\nmax\r\n,inf\r\n*2\r\n\$11\r\nnosuchscore\r\n,1\r\n*2\r\n\$4\r\nninf\r\n,-inf\r\n*2\r\n\$3\r\nmin\r\n,-inf\r\n"
        {zadd y 1e300 a 123456789012345678 b 0.1 c 1.5e-320 d -0.0 e 3.0000000000000004 f 1e15 g 1e16 h 1e17 i} ":9\r\n"
        {zrange y 0 -1 withscores} "*9\r\n*2\r\n\$1\r\ne\r\n,0\r\n*2\r\n\$1\r\nd\r\n,1.4999833007740245e-320\r\n*2\r\n\$1\r\nc\r\n,0.10000000000000001\r\n*2\r\n\$1\r\nf\r\n,3.0000000000000004\r\n*2\r\n\$1\r\ng\r\n,1000000000000000\r\n*2\r\n\$1\r\nh\r\n,10000000000000000\r\n*2\r\n\$1\r\ni\r\n,1e+17\r\n*2\r\n\$1\r\nb\r\n,1.2345678901234568e+17\r\n*2\r\n\$1\r\na\r\n,1.0000000000000001e+300\r\n"
        {zscore y a} ",1.0000000000000001e+300\r\n"
        {zscore y b} ",1.2345678901234568e+17\r\n"
        {zscore y d} ",1.4999833007740245e-320\r\n"
        {zscore y e} ",0\r\n"
        {zincrby y 1e300 a} ",2.0000000000000001e+300\r\n"
        {zincrby y 1e308 a} ",1.00000002e+308\r\n"
        {zincrby y 1e308 a} ",inf\r\n"
        {zscore y a} ",inf\r\n"
        {zincrby y -inf a} "-ERR resulting score is not a number (NaN)\r\n"
        {zmscore z max min pinf ninf nosuch} "*5\r\n,inf\r\n,-inf\r\n,inf\r\n,-inf\r\n_\r\n"
        {zunionstore u 2 z y weights 1 -1} ":15\r\n"
        {zrange u 0 -1 withscores} "*15\r\n*2\r\n\$1\r\na\r\n,-inf\r\n*2\r\n\$3\r\nmin\r\n,-inf\r\n*2\r\n\$4\r\nninf\r\n,-inf\r\n*2\r\n\$1\r\nb\r\n,-1.2345678901234568e+17\r\n*2\r\n\$1\r\ni\r\n,-1e+17\r\n*2\r\n\$1\r\nh\r\n,-10000000000000000\r\n*2\r\n\$1\r\ng\r\n,-1000000000000000\r\n*2\r\n\$1\r\nf\r\n,-3.0000000000000004\r\n*2\r\n\$1\r\nc\r\n,-0.10000000000000001\r\n*2\r\n\$1\r\nd\r\n,-1.4999833007740245e-320\r\n*2\r\n\$1\r\ne\r\n,0\r\n*2\r\n\$11\r\nnosuchscore\r\n,1\r\n*2\r\n\$3\r\nmax\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n"
        {zunionstore u2 2 z z} ":6\r\n"
        {zrange u2 0 -1 withscores} "*6\r\n*2\r\n\$3\r\nmin\r\n,-inf\r\n*2\r\n\$4\r\nninf\r\n,-inf\r\n*2\r\n\$11\r\nnosuchscore\r\n,2\r\n*2\r\n\$3\r\nmax\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n"
        {zinterstore u3 2 z z weights 0 1} ":6\r\n"
        {zrange u3 0 -1 withscores} "*6\r\n*2\r\n\$3\r\nmin\r\n,-inf\r\n*2\r\n\$4\r\nninf\r\n,-inf\r\n*2\r\n\$11\r\nnosuchscore\r\n,1\r\n*2\r\n\$3\r\nmax\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n"
        {zunionstore u4 2 z z weights inf -inf} ":6\r\n"
        {zunionstore u5 1 z weights 0} ":6\r\n"
        {zrange u5 0 -1 withscores} "*6\r\n*2\r\n\$3\r\nmax\r\n,0\r\n*2\r\n\$3\r\nmin\r\n,0\r\n*2\r\n\$4\r\nninf\r\n,0\r\n*2\r\n\$11\r\nnosuchscore\r\n,0\r\n*2\r\n\$4\r\npinf\r\n,0\r\n*2\r\n\$5\r\npinf2\r\n,0\r\n"
        {zadd zz 0 a} ":1\r\n"
        {zunionstore u6 2 z zz weights inf 0 aggregate sum} ":7\r\n"
        {zrange u6 0 -1 withscores} "*7\r\n*2\r\n\$3\r\nmin\r\n,-inf\r\n*2\r\n\$4\r\nninf\r\n,-inf\r\n*2\r\n\$1\r\na\r\n,0\r\n*2\r\n\$3\r\nmax\r\n,inf\r\n*2\r\n\$11\r\nnosuchscore\r\n,inf\r\n*2\r\n\$4\r\npinf\r\n,inf\r\n*2\r\n\$5\r\npinf2\r\n,inf\r\n"
        {del zq} ":0\r\n"
        {zadd zq INF a Inf b infinity c -Infinity d +INF e 4.9e-324 f 1e308 g -0 h +0 i .5 j 5. k} ":11\r\n"
        {zadd zq 1e-400 x} "-ERR value is not a valid float\r\n"
        {zadd zq 0x10 x} ":1\r\n"
        {zadd zq { 1} x} "-ERR value is not a valid float\r\n"
        {zadd zq {1 } x} "-ERR value is not a valid float\r\n"
        {zadd zq {} x} "-ERR value is not a valid float\r\n"
        {zadd zq - x} "-ERR value is not a valid float\r\n"
        {zadd zq 1e x} "-ERR value is not a valid float\r\n"
        {zadd zq 1_0 x} "-ERR value is not a valid float\r\n"
        {zadd zq (inf x} "-ERR value is not a valid float\r\n"
        {zrange zq 0 -1 withscores} "*12\r\n*2\r\n\$1\r\nd\r\n,-inf\r\n*2\r\n\$1\r\nh\r\n,0\r\n*2\r\n\$1\r\ni\r\n,0\r\n*2\r\n\$1\r\nf\r\n,4.9406564584124654e-324\r\n*2\r\n\$1\r\nj\r\n,0.5\r\n*2\r\n\$1\r\nk\r\n,5\r\n*2\r\n\$1\r\nx\r\n,16\r\n*2\r\n\$1\r\ng\r\n,1e+308\r\n*2\r\n\$1\r\na\r\n,inf\r\n*2\r\n\$1\r\nb\r\n,inf\r\n*2\r\n\$1\r\nc\r\n,inf\r\n*2\r\n\$1\r\ne\r\n,inf\r\n"
        {zcount zq (1e-400 +inf} ":9\r\n"
        {zcount zq (0x10 +inf} ":5\r\n"
        {zcount zq {( 1} +inf} ":7\r\n"
        {zcount zq ((1 +inf} "-ERR min or max is not a float\r\n"
        {zcount zq ( +inf} ":9\r\n"
        {zcount zq {[1} +inf} "-ERR min or max is not a float\r\n"
        {zcount zq infinity +inf} ":4\r\n"
        {zcount zq (Infinity +inf} ":0\r\n"
        {zcount zq (-Infinity (4.9e-324} ":2\r\n"
        {zadd zq gt inf h} ":0\r\n"
        {zadd zq lt -inf i} ":0\r\n"
        {zadd zq gt incr -inf h} "-ERR resulting score is not a number (NaN)\r\n"
        {zadd zq nx incr inf h} "_\r\n"
        {zadd zq xx incr inf nosuch} "_\r\n"
        {zadd zq xx incr -inf i} ",-inf\r\n"
        {zadd zq xx ch incr 1 i} ",-inf\r\n"
        {zrangestore zd zq 4.9e-324 (inf byscore} ":5\r\n"
        {zrange zd 0 -1 withscores} "*5\r\n*2\r\n\$1\r\nf\r\n,4.9406564584124654e-324\r\n*2\r\n\$1\r\nj\r\n,0.5\r\n*2\r\n\$1\r\nk\r\n,5\r\n*2\r\n\$1\r\nx\r\n,16\r\n*2\r\n\$1\r\ng\r\n,1e+308\r\n"
        {zrangestore zd zq (+inf -inf byscore rev limit 0 3} ":3\r\n"
        {zrange zd 0 -1 withscores} "*3\r\n*2\r\n\$1\r\nk\r\n,5\r\n*2\r\n\$1\r\nx\r\n,16\r\n*2\r\n\$1\r\ng\r\n,1e+308\r\n"
    }
}

start_server {tags {zset}} {
    foreach {proto script} {2 zset_edge_script 3 zset_edge_script3} {
        test "Scores at the edge of the double range (RESP$proto)" {
            set c [redis_client]
            if {$proto == 3} {$c hello 3}
            set n 0
            foreach {cmd want} [$script] {
                set got [$c rawcall {*}$cmd]
                assert_equal $want $got "reply to: $cmd"
                incr n
            }
            assert_morethan $n 90
            $c close
        }
    }

    test {ZADD and ZINCRBY take a score written out in full (DBL_MAX, 327 characters)} {
        set dblmax [format %.17f 1.7976931348623157e308]
        r del zz
        assert_equal 1 [r zadd zz $dblmax dblmax]
        assert_equal 1.7976931348623157e+308 [r zscore zz dblmax]
        assert_equal 1.7976931348623157e+308 [r zincrby zz $dblmax other]
        assert_error {*not a valid float*} {r zadd zz ${dblmax}x bad}
    }
}
