# DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis 7.0's SHA-1 signatures of the
# whole dataset and of single values. Signatures of a few values as
# redis-server 7.0 gives them; what changes a signature (a value, element
# order in a list, the key name and database for DEBUG DIGEST, having a TTL)
# and what does not (insertion order in sets, hashes and sorted sets, the
# encoding, the TTL's time, SAVE + DEBUG RELOAD, a restart). Large strings
# with tails on an SSD directory sign like any other. The comparison with a
# live redis-server over every type and encoding is tests/persist/test_digest.py.

set ::digest_zero [string repeat 0 40]

proc digest_value {key} { lindex [r debug digest-value $key] 0 }

# Signatures redis-server 7.0 gives for these values.
proc digest_known_values {} {
    r set str hello
    r set int 12345
    r rpush list a 1 b
    r sadd iset 3 1 2
    r sadd sset x y 1
    r zadd zset 1 a 2.5 b -inf c
    r hset hash f v n 1
    r set ttl v
    r pexpireat ttl 4102444800123
}
set ::digest_known {
    str 36b23a1456b2dce2c3ed252c456761301dba8060
    int e1cf90774e995ae03de66e8109dc5cb9d9c2dc83
    list d5f44352f6226abea9252dad248ef5de0d964396
    iset 2a462a3f51a1db89738ebbeef0c47ce1bbc85246
    sset 03ee76a1ebe8db27d61b3ea784011d5acc537675
    zset f2ad7cda97b68291b8199d655f83d19f6e41e93c
    hash ad9a818d75d51dd3c55d5905f22259a91bbc4b14
    ttl 311b17018163335616e089f6b951c82c477335ac
}

proc digest_big_value {n} { string range [string repeat "goblin:" [expr {$n / 7 + 1}]] 0 [expr {$n - 1}] }
set ::digest_big_known {
    16383 077963b5795c0d341150eb267720a79531ad8ae9
    16384 00b644f554e3cf98cbfce58ea69ede3ea941f87c
    16385 187b64a0ec5cfe0d35691438e93ec6e7ede94620
    49159 336e18219d01005c0c7640d63fa3bcb720285d58
    1000000 76a3b66ba819d51d284e79082d41dadd707a8180
}

# A dataset of every type in small and large forms, over two databases.
proc digest_fill {} {
    r select 0
    r set s:int 42
    r set s:raw [string repeat x 100]
    r set s:embstr abc
    r rpush l:small a b 3
    set big {}
    for {set i 0} {$i < 300} {incr i} { lappend big el$i }
    r rpush l:big {*}$big
    r sadd set:int 1 2 3
    r sadd set:str a b c
    r sadd set:big {*}$big
    r zadd z:small 1 a 2 b
    set zargs {}
    for {set i 0} {$i < 200} {incr i} { lappend zargs [expr {$i * 0.5}] m$i }
    r zadd z:big {*}$zargs
    r hset h:small f v g w
    set hargs {}
    for {set i 0} {$i < 200} {incr i} { lappend hargs f$i v$i }
    r hset h:big {*}$hargs
    r pfadd hll a b c
    r set ttl:str v
    r pexpireat ttl:str 4102444800123
    r select 1
    r set other v
    r select 9
    r hset h9 a b
    r select 0
}

start_server {tags {debug digest}} {

    test {DEBUG DIGEST of an empty dataset is all zeros} {
        assert_equal $::digest_zero [r debug digest]
    }

    test {DEBUG DIGEST-VALUE: missing keys are all zeros, no key gives an empty array} {
        assert_equal [list $::digest_zero $::digest_zero] [r debug digest-value nosuch other]
        assert_equal {} [r debug digest-value]
    }

    test {DEBUG DIGEST with an argument is a syntax error} {
        assert_error {*unknown subcommand*'digest'*} {r debug digest extra}
    }

    test {DEBUG HELP lists DIGEST and DIGEST-VALUE} {
        set help [r debug help]
        assert {[lsearch -exact $help DIGEST] >= 0}
        assert {[lsearch -glob $help {DIGEST-VALUE <key>*}] >= 0}
    }

    test {DEBUG DIGEST-VALUE of each type is Redis 7.0's} {
        r flushall
        digest_known_values
        dict for {k d} $::digest_known {
            assert_equal $d [digest_value $k] "DIGEST-VALUE $k"
        }
        set keys [dict keys $::digest_known]
        assert_equal [dict values $::digest_known] [r debug digest-value {*}$keys]
    }

    test {DEBUG DIGEST of a known dataset is Redis 7.0's} {
        assert_equal d87a20d6d29e6f6209bd3cd89af92a1c08bc4c64 [r debug digest]
        r select 3
        r set str hello
        r select 0
        assert_equal afcb02a931272051c3eed914c0cf31759fe52f88 [r debug digest]
        r flushall
        assert_equal $::digest_zero [r debug digest]
    }

    test {A digest changes when a value changes, and back} {
        r flushall
        digest_fill
        set all [r debug digest]
        foreach {key change undo} {
            s:int {r incr s:int} {r decr s:int}
            s:raw {r setrange s:raw 50 y} {r setrange s:raw 50 x}
            l:small {r lset l:small 1 B} {r lset l:small 1 b}
            l:big {r rpush l:big extra} {r rpop l:big}
            set:int {r sadd set:int 4} {r srem set:int 4}
            set:big {r srem set:big el7} {r sadd set:big el7}
            z:small {r zincrby z:small 1 a} {r zincrby z:small -1 a}
            z:big {r zadd z:big 1000 m3} {r zadd z:big 1.5 m3}
            h:small {r hset h:small f V} {r hset h:small f v}
            h:big {r hdel h:big f9} {r hset h:big f9 v9}
            hll {r pfadd hll d} {r del hll; r pfadd hll a b c}
        } {
            set before [digest_value $key]
            eval $change
            assert {[digest_value $key] ne $before}
            assert {[r debug digest] ne $all}
            eval $undo
            assert_equal $before [digest_value $key] "$key after the undo"
        }
        assert_equal $all [r debug digest]
    }

    test {Sets, hashes and sorted sets: insertion order does not change the digest} {
        r flushall
        r sadd a 1 2 3 4
        r sadd b 4 3 2 1
        r sadd c x y z 5
        r sadd d 5 z y x
        r hset h1 f1 v1 f2 v2 f3 v3
        r hset h2 f3 v3 f1 v1 f2 v2
        r zadd z1 1 a 2 b 3 c
        r zadd z2 3 c 1 a 2 b
        foreach {x y} {a b c d h1 h2 z1 z2} {
            assert_equal [digest_value $x] [digest_value $y] "$x and $y"
        }
        # Swapped pairs are other values.
        r hset h3 f1 v2 f2 v1 f3 v3
        assert {[digest_value h3] ne [digest_value h1]}
        r zadd z3 2 a 1 b 3 c
        assert {[digest_value z3] ne [digest_value z1]}
    }

    test {Lists: element order changes the digest} {
        r rpush l1 a b c
        r rpush l2 c b a
        r lpush l3 c b a
        assert {[digest_value l1] ne [digest_value l2]}
        assert_equal [digest_value l1] [digest_value l3]
        # Elements are separate pieces: a+bc is not ab+c.
        r rpush l4 a bc
        r rpush l5 ab c
        assert {[digest_value l4] ne [digest_value l5]}
    }

    test {The encoding does not change the digest} {
        r flushall
        # int / embstr / raw strings of the same bytes
        r set s1 123
        r set s2 12
        r append s2 3
        assert_equal int [r object encoding s1]
        assert {[r object encoding s2] ne "int"}
        assert_equal [digest_value s1] [digest_value s2]
        # intset / hashtable
        r sadd i1 1 2 3
        r sadd i2 1 2 3 x
        r srem i2 x
        assert_equal intset [r object encoding i1]
        assert_equal hashtable [r object encoding i2]
        assert_equal [digest_value i1] [digest_value i2]
        # listpack / skiplist
        r zadd z1 1 a 2.5 b
        r zadd z2 1 a 2.5 b 3 [string repeat m 100]
        r zrem z2 [string repeat m 100]
        assert_equal listpack [r object encoding z1]
        assert_equal skiplist [r object encoding z2]
        assert_equal [digest_value z1] [digest_value z2]
        # listpack / hashtable
        r hset h1 f v n 1
        r hset h2 f v n 1 big [string repeat v 100]
        r hdel h2 big
        assert_equal listpack [r object encoding h1]
        assert_equal hashtable [r object encoding h2]
        assert_equal [digest_value h1] [digest_value h2]
    }

    test {The key name and the database are part of DEBUG DIGEST only} {
        r flushall
        r set k v
        set d0 [r debug digest]
        set v0 [digest_value k]
        r rename k k2
        assert {[r debug digest] ne $d0}
        assert_equal $v0 [digest_value k2]
        r rename k2 k
        assert_equal $d0 [r debug digest]
        r move k 1
        assert {[r debug digest] ne $d0}
        r select 1
        assert_equal $v0 [digest_value k]
        r move k 0
        r select 0
        assert_equal $d0 [r debug digest]
    }

    test {A TTL is part of the digest, its time is not} {
        r flushall
        r set k v
        set d0 [r debug digest]
        set v0 [digest_value k]
        r pexpireat k 4102444800123
        set d1 [r debug digest]
        set v1 [digest_value k]
        assert {$d1 ne $d0}
        assert {$v1 ne $v0}
        r pexpireat k 4102444899999
        assert_equal $d1 [r debug digest]
        assert_equal $v1 [digest_value k]
        r persist k
        assert_equal $d0 [r debug digest]
        assert_equal $v0 [digest_value k]
    }

    test {SAVE and DEBUG RELOAD keep the digest} {
        r flushall
        digest_fill
        set d [r debug digest]
        set keys {s:int s:raw s:embstr l:small l:big set:int set:str set:big z:small z:big h:small h:big hll ttl:str}
        set v [r debug digest-value {*}$keys]
        assert {$d ne $::digest_zero}
        assert_equal OK [r save]
        assert_equal OK [r debug reload]
        assert_equal $d [r debug digest]
        assert_equal $v [r debug digest-value {*}$keys]
    }

    test {A restart keeps the digest} {
        set d [r debug digest]
        assert_equal OK [r save]
        restart_server
        assert_equal $d [r debug digest]
    }
}

file mkdir [file join [pwd] tests tmp]
set ::digest_ssd [file join [pwd] tests tmp digest-ssd-[pid]]
file delete -force $::digest_ssd
start_server [list tags {debug digest goblin_only} args [list --ram-head 16K --ssd-dir $::digest_ssd]] {

    test {Large strings with tails on the SSD sign as in Redis 7.0} {
        dict for {n d} $::digest_big_known {
            r set big$n [digest_big_value $n]
            assert_equal $d [digest_value big$n] "DIGEST-VALUE of $n bytes"
        }
        assert_match {*objstore_ssd:active=1*} [r info goblin]
    }

    test {Large strings: APPEND, SETRANGE and DEBUG RELOAD} {
        set d [r debug digest]
        r append big16384 x
        assert {[digest_value big16384] ne [dict get $::digest_big_known 16384]}
        r set big16384 [digest_big_value 16384]
        assert_equal $d [r debug digest]
        r setrange big1000000 500000 "#"
        set changed [digest_value big1000000]
        assert {$changed ne [dict get $::digest_big_known 1000000]}
        r setrange big1000000 500000 [string index [digest_big_value 1000000] 500000]
        assert_equal [dict get $::digest_big_known 1000000] [digest_value big1000000]
        assert_equal $d [r debug digest]
        assert_equal OK [r debug reload]
        assert_equal $d [r debug digest]
        dict for {n dv} $::digest_big_known {
            assert_equal $dv [digest_value big$n] "after DEBUG RELOAD, $n bytes"
        }
    }

    test {A tail read error fails DEBUG DIGEST with an error, not a wrong signature} {
        assert_equal OK [r debug ssd-fault 0 1]
        catch {r debug digest} err
        assert_match {*I/O error*} $err
        set d [r debug digest]
        assert_equal $d [r debug digest]
        assert_equal [dict get $::digest_big_known 49159] [digest_value big49159]
    }
}
file delete -force $::digest_ssd
