# Hashes: the whole Redis 7.0 hash family, both encodings (listpack and
# hashtable), conversions, HSCAN under growth, big and binary data.

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}

# HSET key with n fields <prefix><i> -> v<i>, in batches.
proc fill_hash {key n {prefix f} {first 0}} {
    set args {}
    for {set i $first} {$i < $first + $n} {incr i} {
        lappend args $prefix$i v$i
        if {[llength $args] >= 2000} {
            r hset $key {*}$args
            set args {}
        }
    }
    if {[llength $args]} {r hset $key {*}$args}
}

# The dict of a flat field/value list.
proc as_dict {flat} {
    set d {}
    foreach {k v} $flat {dict set d $k $v}
    return $d
}

proc dict_sorted {d} {
    set out {}
    foreach k [lsort [dict keys $d]] {lappend out $k [dict get $d $k]}
    return $out
}

# Every field/value pair of a hash through HSCAN (COUNT n), as a dict.
proc hscan_all {key {count 10} {match ""}} {
    set cursor 0
    set d {}
    set rounds 0
    while 1 {
        set cmd [list hscan $key $cursor count $count]
        if {$match ne ""} {lappend cmd match $match}
        lassign [r {*}$cmd] cursor items
        foreach {f v} $items {dict set d $f $v}
        incr rounds
        if {$cursor eq "0"} break
        if {$rounds > 1000000} {error "HSCAN did not terminate"}
    }
    return $d
}

start_server {tags {hash}} {

    # --- HSET / HGET / HMSET / HSETNX ------------------------------------------

    test {HSET creates a hash and counts new fields} {
        r del h
        assert_equal 2 [r hset h a 1 b 2]
        assert_equal 1 [r hset h a 10 c 3]
        assert_equal 0 [r hset h a 11]
        assert_equal hash [r type h]
        assert_equal 11 [r hget h a]
        assert_equal 2 [r hget h b]
        assert_encoding listpack h
    }

    test {HSET with an odd number of arguments is an arity error} {
        assert_error "ERR wrong number of arguments for 'hset' command" {r hset h a 1 b}
        assert_error "ERR wrong number of arguments for 'hset' command" {r hset h a}
        assert_error "ERR wrong number of arguments for 'hmset' command" {r hmset h a 1 b}
        assert_equal "-ERR wrong number of arguments for 'hset' command\r\n" [r rawcall hset h]
    }

    test {HMSET replies OK} {
        r del h
        assert_equal "+OK\r\n" [r rawcall hmset h a 1 b 2]
        assert_equal {1 2} [r hmget h a b]
    }

    test {HSETNX sets only missing fields} {
        r del h
        assert_equal 1 [r hsetnx h a 1]
        assert_equal 0 [r hsetnx h a 2]
        assert_equal 1 [r hget h a]
        assert_equal 1 [r hsetnx h b 2]
        assert_equal 2 [r hlen h]
    }

    test {HGET of a missing field or key is a null bulk} {
        r del h nokey
        r hset h a 1
        assert_equal "\$-1\r\n" [r rawcall hget h nosuch]
        assert_equal "\$-1\r\n" [r rawcall hget nokey a]
        assert_equal "\$1\r\n1\r\n" [r rawcall hget h a]
    }

    test {HMGET: values and nulls, missing key} {
        r del h nokey
        r hset h a 1 b 2
        assert_equal "*3\r\n\$1\r\n1\r\n\$-1\r\n\$1\r\n2\r\n" [r rawcall hmget h a x b]
        assert_equal "*2\r\n\$-1\r\n\$-1\r\n" [r rawcall hmget nokey a b]
        assert_error "ERR wrong number of arguments for 'hmget' command" {r hmget h}
    }

    test {HLEN, HSTRLEN, HEXISTS} {
        r del h nokey
        r hset h a 1 b hello c "" d -12345
        assert_equal 4 [r hlen h]
        assert_equal 0 [r hlen nokey]
        assert_equal 5 [r hstrlen h b]
        assert_equal 0 [r hstrlen h c]
        assert_equal 6 [r hstrlen h d]
        assert_equal 0 [r hstrlen h nosuch]
        assert_equal 0 [r hstrlen nokey a]
        assert_equal 1 [r hexists h a]
        assert_equal 1 [r hexists h c]
        assert_equal 0 [r hexists h x]
        assert_equal 0 [r hexists nokey a]
        assert_equal ":1\r\n" [r rawcall hexists h a]
    }

    test {HKEYS, HVALS, HGETALL on a small hash keep insertion order} {
        r del h
        r hset h z 1 a 2 m 3
        r hset h a 20
        assert_equal {z a m} [r hkeys h]
        assert_equal {1 20 3} [r hvals h]
        assert_equal {z 1 a 20 m 3} [r hgetall h]
    }

    test {HKEYS, HVALS, HGETALL of a missing key} {
        r del nokey
        assert_equal "*0\r\n" [r rawcall hkeys nokey]
        assert_equal "*0\r\n" [r rawcall hvals nokey]
        assert_equal "*0\r\n" [r rawcall hgetall nokey]
    }

    test {HGETALL on a hashtable hash} {
        r del h
        fill_hash h 1000
        assert_encoding hashtable h
        set d [as_dict [r hgetall h]]
        assert_equal 1000 [dict size $d]
        for {set i 0} {$i < 1000} {incr i} {
            if {[dict get $d f$i] ne "v$i"} {fail "f$i is [dict get $d f$i]"}
        }
        assert_equal 1000 [llength [r hkeys h]]
        assert_equal [lsort [dict keys $d]] [lsort [r hkeys h]]
        assert_equal [lsort [dict values $d]] [lsort [r hvals h]]
    }

    # --- HDEL -------------------------------------------------------------------

    test {HDEL removes fields and counts them} {
        r del h
        r hset h a 1 b 2 c 3
        assert_equal 2 [r hdel h a b x]
        assert_equal 0 [r hdel h a]
        assert_equal 0 [r hdel nokey a]
        assert_equal {c 3} [r hgetall h]
        assert_error "ERR wrong number of arguments for 'hdel' command" {r hdel h}
    }

    test {HDEL of the last field deletes the key (both encodings)} {
        r del h
        r hset h a 1 b 2
        assert_equal 2 [r hdel h a b a]
        assert_equal 0 [r exists h]
        assert_equal none [r type h]
        fill_hash h 600
        assert_encoding hashtable h
        set fields {}
        for {set i 0} {$i < 600} {incr i} {lappend fields f$i}
        assert_equal 600 [r hdel h {*}$fields]
        assert_equal 0 [r exists h]
    }

    test {Deleting fields never converts a hashtable back} {
        r del h
        fill_hash h 600
        for {set i 0} {$i < 590} {incr i} {r hdel h f$i}
        assert_equal 10 [r hlen h]
        assert_encoding hashtable h
        r hset h new 1
        assert_encoding hashtable h
    }

    # --- WRONGTYPE --------------------------------------------------------------

    test {Hash commands against a string key} {
        r del s
        r set s v
        foreach cmd {
            {hset s a 1} {hsetnx s a 1} {hmset s a 1} {hget s a} {hmget s a}
            {hgetall s} {hdel s a} {hlen s} {hstrlen s a} {hexists s a}
            {hkeys s} {hvals s} {hincrby s a 1} {hincrbyfloat s a 1}
            {hrandfield s} {hrandfield s 2} {hrandfield s 2 withvalues} {hscan s 0}
        } {
            assert_error $::WRONGTYPE [list r {*}$cmd]
        }
        assert_equal v [r get s]
    }

    test {String commands against a hash key} {
        r del h
        r hset h a 1
        assert_error $::WRONGTYPE {r get h}
        assert_error $::WRONGTYPE {r append h x}
    }

    # --- HINCRBY ------------------------------------------------------------------

    test {HINCRBY creates the key and the field} {
        r del h
        assert_equal 5 [r hincrby h a 5]
        assert_equal 3 [r hincrby h a -2]
        assert_equal -7 [r hincrby h b -7]
        assert_equal {a 3 b -7} [r hgetall h]
    }

    test {HINCRBY on 64-bit values and overflow} {
        r del h
        r hset h big 9223372036854775806 small -9223372036854775807
        assert_equal 9223372036854775807 [r hincrby h big 1]
        assert_error "ERR increment or decrement would overflow" {r hincrby h big 1}
        assert_equal -9223372036854775808 [r hincrby h small -1]
        assert_error "ERR increment or decrement would overflow" {r hincrby h small -1}
        assert_equal 9223372036854775807 [r hget h big]
        r hset h z 0
        assert_equal -9223372036854775808 [r hincrby h z -9223372036854775808]
    }

    test {HINCRBY errors: bad increment, non-integer value} {
        r del h
        r hset h s abc f 1.5 sp " 1" pl +1 lz 007 e ""
        assert_error "ERR value is not an integer or out of range" {r hincrby h new x}
        assert_error "ERR value is not an integer or out of range" {r hincrby h new 1.0}
        assert_error "ERR value is not an integer or out of range" {r hincrby h new 9223372036854775808}
        foreach f {s f sp pl lz e} {
            assert_error "ERR hash value is not an integer" [list r hincrby h $f 1]
        }
        assert_equal 0 [r exists nokey]
        assert_error "ERR value is not an integer or out of range" {r hincrby nokey a x}
        assert_equal 0 [r exists nokey]
    }

    test {HINCRBY on both encodings} {
        r del h
        fill_hash h 600
        assert_encoding hashtable h
        assert_equal 10 [r hincrby h counter 10]
        assert_equal 11 [r hincrby h counter 1]
        assert_error "ERR hash value is not an integer" {r hincrby h f1 1}
    }

    # --- HINCRBYFLOAT -------------------------------------------------------------

    test {HINCRBYFLOAT basics and formatting} {
        r del h
        assert_equal 10.5 [r hincrbyfloat h a 10.5]
        assert_equal 10.6 [r hincrbyfloat h a 0.1]
        assert_equal 3 [r hincrbyfloat h b 3.0]
        assert_equal 5 [r hincrbyfloat h b 2]
        assert_equal 5000 [r hincrbyfloat h c 5e3]
        assert_equal 5000 [r hget h c]
        assert_equal -0.5 [r hincrbyfloat h d -0.5]
        assert_equal 0 [r hincrbyfloat h d 0.5]
        r hset h i 17
        assert_equal 17.5 [r hincrbyfloat h i 0.5]
    }

    test {HINCRBYFLOAT errors} {
        r del h
        r hset h s abc sp " 1" inf inf
        assert_error "ERR value is not a valid float" {r hincrbyfloat h a x}
        assert_error "ERR value is not a valid float" {r hincrbyfloat h a ""}
        assert_error "ERR value is not a valid float" {r hincrbyfloat h a nan}
        assert_error "ERR value is NaN or Infinity" {r hincrbyfloat h a inf}
        assert_error "ERR value is NaN or Infinity" {r hincrbyfloat h a -inf}
        assert_error "ERR hash value is not a float" {r hincrbyfloat h s 1}
        assert_error "ERR hash value is not a float" {r hincrbyfloat h sp 1}
        r hset h max 1.7976931348623157e308
        assert_error "ERR increment would produce NaN or Infinity" {r hincrbyfloat h inf 1}
        assert_equal 0 [r exists nokey]
        assert_error "ERR value is NaN or Infinity" {r hincrbyfloat nokey a inf}
        assert_equal 0 [r exists nokey]
    }

    test {HINCRBYFLOAT growing a value past 64 bytes converts to hashtable} {
        r del h
        r hset h a 1 b 2
        assert_encoding listpack h
        set v [r hincrbyfloat h a 1e70]
        assert_morethan [string length $v] 64
        assert_equal $v [r hget h a]
        assert_encoding hashtable h
        assert_equal 2 [r hget h b]
    }

    test {HINCRBY with a field past 64 bytes converts to hashtable} {
        r del h
        r hset h a 1
        r hincrby h [string repeat x 65] 1
        assert_encoding hashtable h
    }

    # --- encodings ----------------------------------------------------------------

    test {Encoding: 512 fields stay listpack, 513 convert} {
        r config set hash-max-listpack-entries 512
        r config set hash-max-listpack-value 64
        r del h
        fill_hash h 512
        assert_encoding listpack h
        r hset h f0 changed
        assert_encoding listpack h
        r hset h one-more 1
        assert_encoding hashtable h
        assert_equal 513 [r hlen h]
    }

    test {Encoding: fields and values of 64 bytes fit, 65 convert} {
        r del h1 h2 h3
        r hset h1 [string repeat a 64] [string repeat b 64]
        assert_encoding listpack h1
        r hset h2 a [string repeat b 65]
        assert_encoding hashtable h2
        r hset h3 [string repeat a 65] b
        assert_encoding hashtable h3
        r del h1
        r hset h1 a 1 b 2
        r hset h1 a [string repeat x 65]
        assert_encoding hashtable h1
        assert_equal 2 [r hget h1 b]
    }

    test {Encoding: HSETNX of an existing field never converts} {
        r del h
        r hset h a 1
        r hsetnx h a [string repeat x 100]
        assert_encoding listpack h
        r hsetnx h b [string repeat x 100]
        assert_encoding hashtable h
    }

    test {Encoding: CONFIG SET hash-max-listpack-entries both ways} {
        r config set hash-max-listpack-entries 4
        r del h1 h2
        fill_hash h1 4
        assert_encoding listpack h1
        r hset h1 x 1
        assert_encoding hashtable h1
        r config set hash-max-listpack-entries 1000
        fill_hash h2 900
        assert_encoding listpack h2
        # lowering the limit leaves the hash alone until its next write
        r config set hash-max-listpack-entries 100
        assert_encoding listpack h2
        r hset h2 f0 updated
        assert_encoding hashtable h2
        assert_equal 900 [r hlen h2]
        assert_equal updated [r hget h2 f0]
        r config set hash-max-listpack-entries 0
        r del h3
        r hset h3 a 1
        assert_encoding hashtable h3
        r config set hash-max-listpack-entries 512
    }

    test {Encoding: CONFIG SET hash-max-listpack-value both ways} {
        r config set hash-max-listpack-value 4
        r del h1 h2
        r hset h1 abcd 1234
        assert_encoding listpack h1
        r hset h1 abcde 1
        assert_encoding hashtable h1
        r config set hash-max-listpack-value 200
        r hset h2 a [string repeat x 150]
        assert_encoding listpack h2
        r config set hash-max-listpack-value 64
        r hset h2 b 1
        assert_encoding listpack h2
        r hset h2 c [string repeat x 65]
        assert_encoding hashtable h2
        assert_equal [string repeat x 150] [r hget h2 a]
    }

    test {Conversion keeps every pair} {
        r del h
        set d {}
        for {set i 0} {$i < 512} {incr i} {
            set f "field:$i:[randstring 0 10 alnum]"
            set v [randstring 0 30 binary]
            dict set d $f $v
            r hset h $f $v
        }
        assert_encoding listpack h
        r hset h trigger x
        dict set d trigger x
        assert_encoding hashtable h
        assert_equal [dict_sorted $d] [dict_sorted [as_dict [r hgetall h]]]
    }

    # --- binary safety and size ---------------------------------------------------

    foreach enc {listpack hashtable} {
        test "Binary-safe fields and values ($enc)" {
            r del h
            if {$enc eq "hashtable"} {fill_hash h 600}
            set f1 "\x00"
            set f2 "a\x00b\r\n\xff"
            r hset h "" empty-field $f1 nul $f2 bin e ""
            assert_encoding $enc h
            assert_equal empty-field [r hget h ""]
            assert_equal nul [r hget h $f1]
            assert_equal bin [r hget h $f2]
            assert_equal "\$0\r\n\r\n" [r rawcall hget h e]
            assert_equal 1 [r hexists h ""]
            assert_equal 0 [r hexists h "\x00\x00"]
            r hset h $f2 "v\x00v"
            assert_equal "v\x00v" [r hget h $f2]
            assert_equal 3 [r hstrlen h $f2]
            set d [as_dict [r hgetall h]]
            assert_equal "v\x00v" [dict get $d $f2]
            assert_equal empty-field [dict get $d ""]
            assert_equal 1 [r hdel h ""]
            assert_equal 0 [r hexists h ""]
            assert_equal nul [r hget h $f1]
        }

        test "Every byte value in fields and values ($enc)" {
            r del h
            if {$enc eq "hashtable"} {r config set hash-max-listpack-entries 0}
            set all ""
            for {set i 0} {$i < 256} {incr i} {
                r hset h [format %c $i] [format %c [expr {255 - $i}]]
                append all [format %c $i]
            }
            r config set hash-max-listpack-entries 512
            r hset h $all $all
            assert_encoding hashtable h
            assert_equal 257 [r hlen h]
            for {set i 0} {$i < 256} {incr i} {
                assert_equal [format %c [expr {255 - $i}]] [r hget h [format %c $i]]
            }
            assert_equal $all [r hget h $all]
        }
    }

    test {1 MiB values (hashtable)} {
        r del h
        set big [string repeat "0123456789abcdef" 65536]
        r hset h small 1 big $big
        assert_encoding hashtable h
        assert_equal $big [r hget h big]
        assert_equal 1048576 [r hstrlen h big]
        set big2 "x$big"
        r hset h big $big2
        assert_equal $big2 [r hget h big]
        r hset h big2 $big
        assert_equal [list $big2 $big 1] [r hmget h big big2 small]
        assert_equal 1 [r hdel h big]
        assert_equal $big [r hget h big2]
        assert_equal 2 [r hlen h]
    }

    test {1 MiB values (listpack with a raised limit)} {
        r config set hash-max-listpack-value 2000000
        r del h
        set big [string repeat "abcdefghijklmnop" 65536]
        r hset h a 1 big $big c 3
        assert_encoding listpack h
        assert_equal $big [r hget h big]
        r hset h big small
        assert_equal {a 1 big small c 3} [r hgetall h]
        r config set hash-max-listpack-value 64
    }

    # --- HRANDFIELD ------------------------------------------------------------------

    test {HRANDFIELD without count} {
        r del h nokey
        assert_equal "\$-1\r\n" [r rawcall hrandfield nokey]
        r hset h a 1 b 2 c 3
        for {set i 0} {$i < 20} {incr i} {
            assert {[lsearch -exact {a b c} [r hrandfield h]] >= 0}
        }
    }

    foreach enc {listpack hashtable} {
        test "HRANDFIELD with count ($enc)" {
            r del h
            set n [expr {$enc eq "listpack" ? 40 : 1000}]
            fill_hash h $n
            assert_encoding $enc h
            # positive: distinct, capped at the size
            foreach count [list 1 5 [expr {$n / 2}] [expr {$n - 1}] $n [expr {$n + 10}]] {
                set res [r hrandfield h $count]
                set want [expr {$count < $n ? $count : $n}]
                assert_equal $want [llength $res] "count $count"
                assert_equal $want [llength [lsort -unique $res]] "distinct for count $count"
                foreach f $res {assert_match f* $f}
            }
            # negative: exactly |count|, repetitions allowed
            set res [r hrandfield h -500]
            assert_equal 500 [llength $res]
            foreach f $res {assert_match f* $f}
            # WITHVALUES: pairs that belong together
            foreach count {3 -7 2000} {
                set res [r hrandfield h $count withvalues]
                foreach {f v} $res {
                    assert_equal "v[string range $f 1 end]" $v
                }
            }
            set res [r hrandfield h 2000 withvalues]
            assert_equal [expr {2 * $n}] [llength $res]
            # count 0 and a missing key
            assert_equal "*0\r\n" [r rawcall hrandfield h 0]
            assert_equal "*0\r\n" [r rawcall hrandfield h 0 withvalues]
            assert_equal "*0\r\n" [r rawcall hrandfield nokey 5]
            assert_equal "*0\r\n" [r rawcall hrandfield nokey -5 withvalues]
        }

        test "HRANDFIELD reaches every field ($enc)" {
            r del h
            set n [expr {$enc eq "listpack" ? 20 : 600}]
            fill_hash h $n
            assert_encoding $enc h
            set seen {}
            foreach f [r hrandfield h [expr {-$n * 30}]] {dict set seen $f 1}
            assert_equal $n [dict size $seen]
            set seen {}
            for {set i 0} {$i < 200} {incr i} {
                foreach f [r hrandfield h [expr {$n / 5}]] {dict set seen $f 1}
            }
            assert_equal $n [dict size $seen]
        }
    }

    test {HRANDFIELD RESP3 shapes} {
        set c [redis_client]
        $c hello 3
        $c del h
        $c hset h a 1
        assert_equal "*1\r\n*2\r\n\$1\r\na\r\n\$1\r\n1\r\n" [$c rawcall hrandfield h 1 withvalues]
        assert_equal "*2\r\n*2\r\n\$1\r\na\r\n\$1\r\n1\r\n*2\r\n\$1\r\na\r\n\$1\r\n1\r\n" \
            [$c rawcall hrandfield h -2 withvalues]
        assert_equal "*2\r\n\$1\r\na\r\n\$1\r\na\r\n" [$c rawcall hrandfield h -2]
        assert_equal "\$1\r\na\r\n" [$c rawcall hrandfield h]
        assert_equal "_\r\n" [$c rawcall hrandfield nokey]
        assert_equal "*0\r\n" [$c rawcall hrandfield nokey 3 withvalues]
        $c close
    }

    test {HRANDFIELD RESP2 shapes} {
        r del h
        r hset h a 1
        assert_equal "*2\r\n\$1\r\na\r\n\$1\r\n1\r\n" [r rawcall hrandfield h 1 withvalues]
        assert_equal "*4\r\n\$1\r\na\r\n\$1\r\n1\r\n\$1\r\na\r\n\$1\r\n1\r\n" [r rawcall hrandfield h -2 withvalues]
    }

    test {HRANDFIELD errors} {
        r del h
        r hset h a 1
        assert_error "ERR value is not an integer or out of range" {r hrandfield h x}
        assert_error "ERR value is not an integer or out of range" {r hrandfield nokey 1.5}
        assert_error "ERR value is not an integer or out of range" {r hrandfield h 9223372036854775808}
        assert_error "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807" \
            {r hrandfield h -9223372036854775808}
        assert_error "ERR value is out of range" {r hrandfield h -4611686018427387904 withvalues}
        assert_error "ERR value is out of range" {r hrandfield h 4611686018427387904 withvalues}
        assert_error "ERR syntax error" {r hrandfield h 1 withvalue}
        assert_error "ERR syntax error" {r hrandfield h 1 withvalues x}
        # the count is checked before the syntax, the syntax before the type
        assert_error "ERR value is not an integer or out of range" {r hrandfield h x y}
        r set s v
        assert_error "ERR syntax error" {r hrandfield s 1 x}
        assert_error $::WRONGTYPE {r hrandfield s 1}
        # a huge positive count is capped at the size
        assert_equal {a 1} [r hrandfield h 4611686018427387903 withvalues]
        assert_equal {a} [r hrandfield h 9223372036854775807]
    }

    # --- HSCAN ------------------------------------------------------------------------

    test {HSCAN of a small hash returns everything with cursor 0} {
        r del h
        r hset h a 1 b 2 c 3
        assert_equal {0 {a 1 b 2 c 3}} [r hscan h 0]
        assert_equal {0 {a 1 b 2 c 3}} [r hscan h 12345 count 1]
        assert_equal {0 {b 2}} [r hscan h 0 match b]
    }

    test {HSCAN of a missing key} {
        r del nokey
        assert_equal "*2\r\n\$1\r\n0\r\n*0\r\n" [r rawcall hscan nokey 0]
        # options are not even looked at
        assert_equal "*2\r\n\$1\r\n0\r\n*0\r\n" [r rawcall hscan nokey 0 count 0]
    }

    foreach enc {listpack hashtable} {
        test "HSCAN returns every pair ($enc)" {
            r del h
            set n [expr {$enc eq "listpack" ? 100 : 5000}]
            fill_hash h $n
            assert_encoding $enc h
            foreach count {1 10 100 1000} {
                set d [hscan_all h $count]
                assert_equal $n [dict size $d] "COUNT $count"
                for {set i 0} {$i < $n} {incr i 7} {
                    assert_equal v$i [dict get $d f$i]
                }
            }
        }

        test "HSCAN MATCH ($enc)" {
            r del h
            set n [expr {$enc eq "listpack" ? 100 : 1000}]
            fill_hash h $n
            set d [hscan_all h 20 f1*]
            set want 0
            for {set i 0} {$i < $n} {incr i} {
                if {[string match f1* f$i]} {incr want}
            }
            assert_equal $want [dict size $d]
            dict for {f v} $d {assert_match f1* $f}
            assert_equal 0 [dict size [hscan_all h 20 nomatch*]]
        }
    }

    test {HSCAN under growth reports every original field} {
        r del h
        fill_hash h 1000
        assert_encoding hashtable h
        set cursor 0
        set seen {}
        set next 1000
        while 1 {
            lassign [r hscan h $cursor count 20] cursor items
            foreach {f v} $items {dict set seen $f 1}
            # grow the hash between the calls (the index doubles several
            # times) up to 16000 fields
            if {$next < 16000} {
                fill_hash h 200 f $next
                incr next 200
            }
            if {$cursor eq "0"} break
        }
        for {set i 0} {$i < 1000} {incr i} {
            if {![dict exists $seen f$i]} {fail "f$i was never reported"}
        }
        assert_morethan [r hlen h] 2000
    }

    test {HSCAN under growth and deletes} {
        r del h
        fill_hash h 2000
        set cursor 0
        set seen {}
        set next 2000
        while 1 {
            lassign [r hscan h $cursor count 50] cursor items
            foreach {f v} $items {dict set seen $f 1}
            if {$next < 12000} {
                fill_hash h 100 f $next
                # delete some of the fields added during the scan
                for {set k 0} {$k < 30} {incr k} {r hdel h f[expr {$next + $k}]}
                incr next 100
            }
            if {$cursor eq "0"} break
        }
        for {set i 0} {$i < 2000} {incr i} {
            if {![dict exists $seen f$i]} {fail "f$i was never reported"}
        }
    }

    test {HSCAN errors} {
        r del h
        r hset h a 1
        assert_error "ERR invalid cursor" {r hscan h abc}
        assert_error "ERR invalid cursor" {r hscan h " 1"}
        assert_error "ERR invalid cursor" {r hscan h 18446744073709551616}
        assert_error "ERR syntax error" {r hscan h 0 count 0}
        assert_error "ERR syntax error" {r hscan h 0 count -1}
        assert_error "ERR value is not an integer or out of range" {r hscan h 0 count x}
        assert_error "ERR syntax error" {r hscan h 0 count}
        assert_error "ERR syntax error" {r hscan h 0 match}
        assert_error "ERR syntax error" {r hscan h 0 type hash}
        assert_error "ERR syntax error" {r hscan h 0 novalues}
        assert_error "ERR syntax error" {r hscan h 0 foo bar}
        r set s v
        assert_error "ERR invalid cursor" {r hscan s x}
        assert_error $::WRONGTYPE {r hscan s 0 count 0}
    }

    test {HSCAN of the largest cursor} {
        r del h
        fill_hash h 1000
        lassign [r hscan h 18446744073709551615] cursor items
        assert_equal 0 $cursor
    }

    # --- COPY, RENAME, TYPE ---------------------------------------------------------------

    foreach enc {listpack hashtable} {
        test "COPY of a hash is deep ($enc)" {
            r del h h2
            fill_hash h [expr {$enc eq "listpack" ? 10 : 1000}]
            assert_equal 1 [r copy h h2]
            assert_encoding $enc h2
            r hset h2 f1 changed
            r hdel h2 f2
            assert_equal v1 [r hget h f1]
            assert_equal v2 [r hget h f2]
            assert_equal changed [r hget h2 f1]
            assert_equal [expr {[r hlen h] - 1}] [r hlen h2]
            r del h
            assert_equal changed [r hget h2 f1]
        }
    }

    test {RENAME keeps the hash} {
        r del h h2
        fill_hash h 700
        r rename h h2
        assert_equal 700 [r hlen h2]
        assert_equal v5 [r hget h2 f5]
        assert_encoding hashtable h2
    }

    # --- a randomized run against a Tcl model ------------------------------------------------

    foreach {enc limit} {listpack 512 hashtable 0} {
        test "Random operations against a model ($enc)" {
            r config set hash-max-listpack-entries $limit
            r del h
            set model {}
            for {set i 0} {$i < 3000} {incr i} {
                set f "k[expr {int(rand() * 200)}]"
                set roll [expr {rand()}]
                if {$roll < 0.45} {
                    set v [randstring 0 20 binary]
                    set new [expr {![dict exists $model $f]}]
                    assert_equal $new [r hset h $f $v]
                    dict set model $f $v
                } elseif {$roll < 0.65} {
                    set had [dict exists $model $f]
                    assert_equal $had [r hdel h $f]
                    dict unset model $f
                } elseif {$roll < 0.75} {
                    set cur 0
                    if {[dict exists $model $f]} {
                        set cur [dict get $model $f]
                        if {![string is entier -strict $cur] || [string index $cur 0] eq "+" ||
                            [string trim $cur] ne $cur ||
                            ([string length $cur] > 1 && [string index $cur 0] eq "0") ||
                            [string match -0* $cur]} {
                            continue
                        }
                    }
                    set by [expr {int(rand() * 100) - 50}]
                    assert_equal [expr {$cur + $by}] [r hincrby h $f $by]
                    dict set model $f [expr {$cur + $by}]
                } else {
                    if {[dict exists $model $f]} {
                        assert_equal [dict get $model $f] [r hget h $f]
                    } else {
                        assert_equal "" [r hget h $f]
                    }
                }
            }
            assert_equal [dict size $model] [r hlen h]
            assert_equal [dict_sorted $model] [dict_sorted [as_dict [r hgetall h]]]
            if {[dict size $model]} {assert_encoding $enc h}
            r config set hash-max-listpack-entries 512
        }
    }

    # --- Goblin specifics ---------------------------------------------------------------------

    test {MEMORY USAGE counts the arena and the index} {
        r del h
        fill_hash h 20000
        set usage [r memory usage h]
        # ~8 B field + ~6 B value + prefix and index: far below Redis's ~80 B
        assert_range $usage [expr {20000 * 15}] [expr {20000 * 60}]
        r del small
        r hset small a 1
        assert_range [r memory usage small] 1 200
    } goblin_only

    # A batch of 5000 new elements for key of the given type, from n on.
    proc fill_batch {type key n} {
        set args {}
        for {set i $n} {$i < $n + 5000} {incr i} {
            switch $type {
                hash {lappend args f$i v$i}
                set {lappend args m$i}
                zset {lappend args $i m$i}
            }
        }
        switch $type {
            hash {r hset $key {*}$args}
            set {r sadd $key {*}$args}
            zset {r zadd $key {*}$args}
        }
    }

    foreach type {hash set zset} {
        test "The cron finishes the index resize of a $type left idle" {
            r del c
            # Batches until one leaves the index resizing; then nothing
            # touches the key, and the cron moves the rest and frees the
            # old table.
            set n 0
            while {$n < 400000} {
                fill_batch $type c $n
                incr n 5000
                if {[r debug resizing c]} break
            }
            assert_equal 1 [r debug resizing c]
            set before [r memory usage c]
            wait_for_condition 100 50 {[r debug resizing c] == 0} else {
                fail "the resize of an idle $type was not finished"
            }
            assert {[r memory usage c] < $before}
            assert_equal $n [r [dict get {hash hlen set scard zset zcard} $type] c]
            r del c
        } goblin_only
    }

    foreach type {hash set zset} {
        test "A $type that shrank gives its blocks back" {
            r del c
            fill_batch $type c 0
            fill_batch $type c 5000
            set full [r memory usage c]
            # Everything but the first 10 elements goes, in batches.
            for {set i 10} {$i < 10000} {incr i 500} {
                set args {}
                for {set j $i} {$j < $i + 500} {incr j} {
                    lappend args [dict get {hash f set m zset m} $type]$j
                }
                r [dict get {hash hdel set srem zset zrem} $type] c {*}$args
            }
            assert_equal 10 [r [dict get {hash hlen set scard zset zcard} $type] c]
            # Writes compact as they go; the cron finishes what an idle key left.
            wait_for_condition 50 100 {[r memory usage c] < $full / 20} else {
                fail "MEMORY USAGE of a 10-element $type: [r memory usage c] (full: $full)"
            }
            switch $type {
                hash {assert_equal v9 [r hget c f9]}
                set {assert_equal 1 [r sismember c m9]}
                zset {assert_equal 9 [r zscore c m9]}
            }
            r del c
        } goblin_only
    }

    proc count_resizing {n} {
        set c 0
        for {set h 0} {$h < $n} {incr h} {incr c [r debug resizing h:$h]}
        return $c
    }

    test "The cron finishes the index resizes of many collections left idle" {
        r flushall
        # Fields in rounds of 100 over every hash: each round leaves parts of
        # many hashes' indexes resizing at once, more than a list of a few
        # dozen could hold.
        set n 300
        set rd [redis_deferring_client]
        for {set f 0} {$f < 2000} {incr f 100} {
            set args {}
            for {set i $f} {$i < $f + 100} {incr i} {lappend args f$i v}
            for {set h 0} {$h < $n} {incr h} {$rd hset h:$h {*}$args}
            for {set h 0} {$h < $n} {incr h} {$rd read}
        }
        $rd close
        set before [s used_memory]
        wait_for_condition 100 200 {[count_resizing $n] == 0} else {
            fail "[count_resizing $n] of $n idle hashes still resizing"
        }
        assert {[s used_memory] < $before}
        for {set h 0} {$h < $n} {incr h 37} {assert_equal 2000 [r hlen h:$h]}
        r flushall
    } goblin_only
}
