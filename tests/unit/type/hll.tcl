# HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST with their
# error cases. Values are ordinary strings laid out as Redis 7.0 lays them
# out: the bytes below were read from a Redis 7.0 server (GET after PFADD).

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}
set NOTHLL {WRONGTYPE Key is not a valid HyperLogLog string value.}
set INVALID {INVALIDOBJ Corrupted HLL object detected}

# Header: magic, encoding, 3 unused bytes, 8 bytes of cached count.
proc hll_header {enc {card "\x00\x00\x00\x00\x00\x00\x00\x00"}} {
    return "HYLL[binary format c $enc]\x00\x00\x00$card"
}
set STALE "\x00\x00\x00\x00\x00\x00\x00\x80"
# PFADD h a b c d (cache made stale by the PFADD).
set ABCD "[hll_header 1 $STALE]\x5c\x7b\x80\x44\x76\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a"

# A subscriber to the key events of db 0 and a marker channel.
proc hll_subscriber {} { event_subscriber hll-marker __keyevent@0__:* }
proc hll_events {c} { events_until_marker $c hll-marker }

proc hll_seq {from to} {
    set l {}
    for {set i $from} {$i <= $to} {incr i} {lappend l $i}
    return $l
}

start_server {tags {hll}} {

    # --- PFADD --------------------------------------------------------------

    test {PFADD creates the key and answers whether a register changed} {
        r del h
        assert_equal 1 [r pfadd h a b c]
        assert_equal 0 [r pfadd h a b c]
        assert_equal 1 [r pfadd h d]
        assert_equal 0 [r pfadd h a]
        assert_equal string [r type h]
    }

    test {PFADD without elements creates an empty HLL once} {
        r del h
        assert_equal 1 [r pfadd h]
        assert_equal 0 [r pfadd h]
        assert_equal 1 [r exists h]
        assert_equal "[hll_header 1 $::STALE]\x7f\xff" [r get h]
        assert_equal 0 [r pfcount h]
        assert_equal "[hll_header 1]\x7f\xff" [r get h]
    }

    test {PFADD leaves the bytes Redis 7.0 leaves} {
        r del h
        r pfadd h a b c d
        assert_equal $::ABCD [r get h]
        assert_equal raw [r object encoding h]
    }

    test {PFADD keeps the TTL} {
        r del h
        r pfadd h a
        r expire h 1000
        r pfadd h b c d e f
        assert_range [r ttl h] 990 1000
    }

    test {PFADD arity} {
        assert_error {ERR wrong number of arguments for 'pfadd' command} {r pfadd}
    }

    # --- PFCOUNT -------------------------------------------------------------

    test {PFCOUNT of a missing key is 0} {
        r del nosuch
        assert_equal 0 [r pfcount nosuch]
        assert_equal 0 [r exists nosuch]
    }

    test {PFCOUNT stores the count in the header, PFADD makes it stale} {
        r del h
        r pfadd h a b c d
        assert_equal 4 [r pfcount h]
        set v [r get h]
        assert_equal "\x04\x00\x00\x00\x00\x00\x00\x00" [string range $v 8 15]
        assert_equal 4 [r pfcount h]
        # no change: the cache stays valid
        assert_equal 0 [r pfadd h a]
        assert_equal "\x04\x00\x00\x00\x00\x00\x00\x00" [string range [r get h] 8 15]
        r pfadd h e
        assert_equal "\x80" [string index [r get h] 15]
        assert_equal 5 [r pfcount h]
    }

    test {PFCOUNT answers the cached count as it is} {
        r set h "[hll_header 1 "\x39\x05\x00\x00\x00\x00\x00\x00"]\x7f\xff"
        assert_equal 1337 [r pfcount h]
    }

    test {PFCOUNT counts like Redis 7.0, sparse and dense} {
        r del h
        r pfadd h {*}[hll_seq 1 1000]
        assert_equal sparse [r pfdebug encoding h]
        assert_equal 1922 [r strlen h]
        assert_equal 1001 [r pfcount h]
        r pfadd h {*}[hll_seq 1001 5000]
        assert_equal dense [r pfdebug encoding h]
        assert_equal 12304 [r strlen h]
        assert_equal 4985 [r pfcount h]
    }

    test {PFCOUNT of several keys counts the union and writes nothing} {
        r del h1 h2 h3
        r pfadd h1 a b c
        r pfadd h2 c d e
        set b1 [r get h1]
        set b2 [r get h2]
        assert_equal 5 [r pfcount h1 h2]
        assert_equal 5 [r pfcount h1 h2 h3]
        assert_equal 0 [r exists h3]
        assert_equal $b1 [r get h1]
        assert_equal $b2 [r get h2]
    }

    test {PFCOUNT arity} {
        assert_error {ERR wrong number of arguments for 'pfcount' command} {r pfcount}
    }

    # --- values that are not HLLs ---------------------------------------------

    test {PF commands on another type: WRONGTYPE} {
        make_nonstring_key l
        assert_error $::WRONGTYPE {r pfadd l a}
        assert_error $::WRONGTYPE {r pfcount l}
        assert_error $::WRONGTYPE {r pfcount h l}
        assert_error $::WRONGTYPE {r pfmerge l}
        assert_error $::WRONGTYPE {r pfmerge h l}
        assert_error $::WRONGTYPE {r pfdebug encoding l}
    }

    test {PF commands on a string that is not an HLL} {
        foreach v [list foo 12345 "" HYLL "HYLL\x02[string repeat \x00 11]" \
                       "hyll\x01[string repeat \x00 11]\x7f\xff" \
                       "[hll_header 0][string repeat \x00 100]"] {
            r set s $v
            assert_error $::NOTHLL {r pfadd s a}
            assert_error $::NOTHLL {r pfcount s}
            assert_error $::NOTHLL {r pfcount h s}
            assert_error $::NOTHLL {r pfmerge s}
            assert_error $::NOTHLL {r pfmerge h s}
            assert_error $::NOTHLL {r pfdebug getreg s}
            assert_equal $v [r get s]
        }
    }

    test {A header alone is a (corrupt) sparse HLL} {
        r set s [hll_header 1 $::STALE]
        assert_error $::INVALID {r pfcount s}
        assert_error $::INVALID {r pfadd s a}
    }

    test {Corrupt sparse values: INVALIDOBJ} {
        # runs short of 16384 registers, past them, a VAL after the end
        foreach body [list "\x7f\xfe" "\x7f\xff\x00" "\x7f\xff\x80" "\x7f" "\x80\x80"] {
            r set s "[hll_header 1 $::STALE]$body"
            assert_error $::INVALID {r pfcount s}
            assert_error $::INVALID {r pfcount s h}
            assert_error $::INVALID {r pfmerge d s}
            assert_error $::INVALID {r pfdebug todense s}
        }
        # a cached count is answered without looking at the registers
        r set s "[hll_header 1]\x7f\xfe"
        assert_equal 0 [r pfcount s]
    }

    test {PFADD on a corrupt value: INVALIDOBJ once the bad run is reached} {
        r set s "[hll_header 1 $::STALE]\x00"
        assert_error $::INVALID {r pfadd s {*}[hll_seq 1 200]}
    }

    test {SET of Redis-made HLL bytes, then PF commands} {
        r set h $::ABCD
        assert_equal 4 [r pfcount h]
        assert_equal 0 [r pfadd h a b c d]
        assert_equal 1 [r pfadd h e]
        assert_equal 5 [r pfcount h]
        # an embstr-sized HLL becomes raw once a PF command touches it
        r set h2 "[hll_header 1]\x7f\xff"
        assert_equal embstr [r object encoding h2]
        r pfcount h2
        assert_equal raw [r object encoding h2]
    }

    # --- promotion --------------------------------------------------------------

    test {hll-sparse-max-bytes is a memory value} {
        assert_error {*argument must be a memory value*} {r config set hll-sparse-max-bytes abc}
        assert_error {*argument must be a memory value*} {r config set hll-sparse-max-bytes -1}
        assert_equal OK [r config set hll-sparse-max-bytes 3kb]
        assert_equal {hll-sparse-max-bytes 3072} [r config get hll-sparse-max-bytes]
        r config set hll-sparse-max-bytes 3000
    }

    test {Sparse turns dense past hll-sparse-max-bytes} {
        r config set hll-sparse-max-bytes 30
        r del h
        r pfadd h a b c
        assert_equal sparse [r pfdebug encoding h]
        r pfadd h {*}[hll_seq 1 20]
        assert_equal dense [r pfdebug encoding h]
        assert_equal 12304 [r strlen h]
        r config set hll-sparse-max-bytes 3000
    }

    test {PFMERGE into a dense destination keeps it dense} {
        # (a register above 32, the other way to dense, needs an element
        # with 32 zero hash bits; tests/c/test_hll.c covers it)
        r del h d
        r pfadd h {*}[hll_seq 1 100]
        assert_equal sparse [r pfdebug encoding h]
        r pfadd d x
        r pfdebug todense d
        r pfmerge d h
        assert_equal dense [r pfdebug encoding d]
        assert_equal [r pfcount h d] [r pfcount d]
    }

    # --- PFMERGE ------------------------------------------------------------------

    test {PFMERGE into a missing key, sparse stays sparse} {
        r del h1 h2 d
        r pfadd h1 a b c
        r pfadd h2 c d e
        assert_equal OK [r pfmerge d h1 h2]
        assert_equal sparse [r pfdebug encoding d]
        assert_equal "\x80" [string index [r get d] 15]
        assert_equal 5 [r pfcount d]
    }

    test {PFMERGE without sources makes an empty HLL} {
        r del d
        assert_equal OK [r pfmerge d]
        assert_equal "[hll_header 1 $::STALE]\x7f\xff" [r get d]
        r del d
        assert_equal OK [r pfmerge d nosuch1 nosuch2]
        assert_equal 0 [r pfcount d]
    }

    test {PFMERGE includes the destination's own registers} {
        r del d h1
        r pfadd d x y
        r pfadd h1 a
        r pfmerge d h1
        assert_equal 3 [r pfcount d]
    }

    test {PFMERGE result is dense when an input is dense} {
        r del h1 h2 d
        r pfadd h1 a b c
        r pfadd h2 {*}[hll_seq 1 5000]
        assert_equal dense [r pfdebug encoding h2]
        r pfmerge d h1
        assert_equal sparse [r pfdebug encoding d]
        r pfmerge d h2
        assert_equal dense [r pfdebug encoding d]
        assert_equal [r pfcount h1 h2] [r pfcount d]
    }

    test {PFMERGE keeps the destination's TTL} {
        r del d h1
        r pfadd d a
        r expire d 1000
        r pfadd h1 b
        r pfmerge d h1
        assert_range [r ttl d] 990 1000
    }

    test {PFMERGE arity} {
        assert_error {ERR wrong number of arguments for 'pfmerge' command} {r pfmerge}
    }

    # --- PFDEBUG --------------------------------------------------------------------

    test {PFDEBUG ENCODING and DECODE} {
        r del h
        r pfadd h a b c d
        assert_equal sparse [r pfdebug encoding h]
        assert_equal {Z:7292 v:1,1 Z:1143 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603} [r pfdebug decode h]
        r set s "[hll_header 1]\x00\x41\x00\x80\x7f\xff"
        assert_equal {z:1 Z:257 v:1,1 Z:16384} [r pfdebug decode s]
    }

    test {PFDEBUG TODENSE converts once} {
        r del h
        r pfadd h a b c d
        set before [r pfcount h]
        assert_equal 1 [r pfdebug todense h]
        assert_equal 0 [r pfdebug todense h]
        assert_equal dense [r pfdebug encoding h]
        assert_equal $before [r pfcount h]
        assert_error {ERR HLL encoding is not sparse} {r pfdebug decode h}
    }

    test {PFDEBUG GETREG answers every register (and makes the value dense)} {
        r del h
        r pfadd h a b c d
        set regs [r pfdebug getreg h]
        assert_equal 16384 [llength $regs]
        assert_equal 2 [lindex $regs 12711]
        assert_equal 1 [lindex $regs 15780]
        assert_equal 1 [lindex $regs 8436]
        assert_equal 1 [lindex $regs 7292]
        assert_equal 5 [expr [join $regs +]]
        assert_equal dense [r pfdebug encoding h]
    }

    test {PFDEBUG errors} {
        r del nosuch
        assert_error {ERR The specified key does not exist} {r pfdebug encoding nosuch}
        assert_error {ERR The specified key does not exist} {r pfdebug foo nosuch}
        r pfadd h a
        assert_error {ERR Unknown PFDEBUG subcommand 'foo'} {r pfdebug foo h}
        assert_error {ERR wrong number of arguments for 'pfdebug' command} {r pfdebug encoding}
        assert_error {ERR wrong number of arguments for 'pfdebug' command} {r pfdebug encoding h x}
    }

    test {PFSELFTEST} {
        assert_equal OK [r pfselftest]
        assert_error {ERR wrong number of arguments for 'pfselftest' command} {r pfselftest x}
    }

    # --- notifications, WATCH --------------------------------------------------------

    test {Keyspace events: pfadd for PFADD and PFMERGE, none for PFCOUNT} {
        r config set notify-keyspace-events E$
        r del h h1
        set c [hll_subscriber]
        r pfadd h a
        r pfadd h a
        r pfcount h
        r pfcount h
        r pfadd h1 b
        r pfmerge h h1
        r pfcount h h1
        assert_equal {{__keyevent@0__:pfadd h} {__keyevent@0__:pfadd h1} {__keyevent@0__:pfadd h}} [hll_events $c]
        $c close
        r config set notify-keyspace-events ""
    }

    test {WATCH: PFADD that changes a register, PFMERGE, PFCOUNT that writes the cache} {
        set c [redis_client]
        r del h h1
        r pfadd h a
        r pfcount h
        # no register changes: EXEC runs
        r watch h
        $c pfadd h a
        r multi
        r ping
        assert_equal PONG [r exec]
        # a change aborts
        r watch h
        $c pfadd h b
        r multi
        r ping
        assert_equal {} [r exec]
        # PFCOUNT writing the cache aborts, a cached PFCOUNT does not
        r watch h
        $c pfcount h
        r multi
        r ping
        assert_equal {} [r exec]
        r watch h
        $c pfcount h
        r multi
        r ping
        assert_equal PONG [r exec]
        r watch h
        $c pfmerge h h1
        r multi
        r ping
        assert_equal {} [r exec]
        $c close
    }

    test {Big random streams: sparse, dense and merge agree} {
        r del h1 h2 d
        set all {}
        for {set i 0} {$i < 3000} {incr i} {
            lappend all "e:[expr {int(rand() * 2000)}]"
        }
        r pfadd h1 {*}[lrange $all 0 1499]
        r pfadd h2 {*}[lrange $all 1500 end]
        r pfmerge d h1 h2
        set c [r pfcount d]
        assert_equal $c [r pfcount h1 h2]
        r pfdebug todense h1
        r pfdebug todense h2
        assert_equal $c [r pfcount h1 h2]
        r del d2
        r pfadd d2 {*}$all
        assert_equal $c [r pfcount d2]
        # within the HLL error of the true count
        set n [llength [lsort -unique $all]]
        assert_range $c [expr {$n * 0.95}] [expr {$n * 1.05}]
    }
}
