# SORT and SORT_RO: lists, sets and sorted sets; numeric and ALPHA order;
# BY patterns (string keys, hash fields, missing weights, "nosort"); GET
# patterns ('#', strings, hash fields, missing keys); LIMIT at and past the
# edges; STORE (type, TTL, deletion, waking a blocked client on another
# worker); the errors; and a randomized comparison with Tcl's lsort.

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}

if {[is_goblin]} {
    set ::sort_server_args {--cores 2}
} else {
    set ::sort_server_args {}
}

start_server [list tags {sort} args $::sort_server_args] {

    # --- plain sorts ---------------------------------------------------------------

    test {SORT a list numerically, both directions} {
        r del l
        r rpush l 3 1 2 10 -5 1.5 0x10 " 7" inf -inf
        assert_equal {-inf -5 1 1.5 2 3 { 7} 10 0x10 inf} [r sort l]
        assert_equal {inf 0x10 10 { 7} 3 2 1.5 1 -5 -inf} [r sort l desc]
        assert_equal {-inf -5 1 1.5 2 3 { 7} 10 0x10 inf} [r sort_ro l asc]
    }

    test {Equal scores are ordered by the elements' bytes} {
        r del l
        r rpush l 3 1.0 1 01 3 2e0 2
        assert_equal {01 1 1.0 2 2e0 3 3} [r sort l]
        assert_equal {3 3 2e0 2 1.0 1 01} [r sort l desc]
    }

    test {SORT of a set and of a sorted set} {
        r del s z
        r sadd s 5 3 1 4 20
        assert_equal {1 3 4 5 20} [r sort s]
        assert_equal {20 5 4 3 1} [r sort s desc]
        r sadd s x
        assert_error "ERR One or more scores can't be converted into double" {r sort s}
        r zadd z 3 c 1 a 2 b
        assert_equal {a b c} [r sort z alpha]
        assert_equal {c b a} [r sort z alpha desc]
    }

    test {SORT ALPHA} {
        r del l
        r rpush l banana apple Cherry "" apple2 10 9
        assert_equal [list "" 10 9 Cherry apple apple2 banana] [r sort l alpha]
        assert_equal [list banana apple2 apple Cherry 9 10 ""] [r sort l alpha desc]
        assert_error "ERR One or more scores can't be converted into double" {r sort l}
    }

    test {SORT of a missing key is empty} {
        r del nokey
        assert_equal "*0\r\n" [r rawcall sort nokey]
        assert_equal "*0\r\n" [r rawcall sort nokey by x_* get # alpha limit 0 10]
    }

    test {Numeric parsing follows strtod} {
        r del l
        r rpush l "" 1
        assert_equal [list "" 1] [r sort l]
        foreach bad {nan abc "1 " 1x} {
            r del l
            r rpush l 1 $bad
            assert_error "ERR One or more scores can't be converted into double" {r sort l}
        }
        r del l
        r rpush l " 2" 1e3 -0 +5 .5
        assert_equal {-0 .5 { 2} +5 1e3} [r sort l]
    }

    # --- LIMIT ---------------------------------------------------------------------

    test {SORT LIMIT} {
        r del l
        r rpush l 5 3 1 4 2
        assert_equal {2 3} [r sort l limit 1 2]
        assert_equal {4 3} [r sort l desc limit 1 2]
        assert_equal {1 2} [r sort l limit -5 2]
        assert_equal {2 3 4 5} [r sort l limit 1 -1]
        assert_equal {} [r sort l limit 0 0]
        assert_equal {} [r sort l limit 5 1]
        assert_equal {} [r sort l limit 9223372036854775807 9223372036854775807]
        assert_equal {3 4 5} [r sort l limit 2 9223372036854775807]
        assert_equal {1 2} [r sort l limit -9223372036854775808 2]
        assert_equal {5} [r sort l limit 4 100]
        # the last LIMIT wins
        assert_equal {3} [r sort l limit 0 1 limit 2 1]
    }

    # --- BY ------------------------------------------------------------------------

    test {SORT BY string keys, missing weights count as 0} {
        r del l w_a w_b w_c w_d
        r rpush l a b c d
        r mset w_a 3 w_b 1 w_c 2
        assert_equal {d b c a} [r sort l by w_*]
        assert_equal {a c b d} [r sort l by w_* desc]
        assert_equal {b c} [r sort l by w_* limit 1 2]
        r set w_d x
        assert_error "ERR One or more scores can't be converted into double" {r sort l by w_*}
        r del w_d
        r hset w_d f 1
        # a weight key of another type is no weight
        assert_equal {d b c a} [r sort l by w_*]
    }

    test {SORT BY hash fields} {
        r del l h_a h_b h_c
        r rpush l a b c
        r hset h_a f 30 g z
        r hset h_b f 10 g x
        r hset h_c f 20
        assert_equal {b c a} [r sort l by h_*->f]
        assert_equal {a c b} [r sort l by h_*->f desc]
        # ALPHA BY: a missing weight sorts first
        assert_equal {c b a} [r sort l by h_*->g alpha]
        assert_equal {a b c} [r sort l by h_*->g alpha desc]
        # no field name after "->": the key "h_<el>->" as a string
        r set h_a-> 2
        r set h_b-> 1
        assert_equal {c b a} [r sort l by h_*->]
    }

    test {SORT BY ALPHA compares the weights} {
        r del l w_a w_b w_c
        r rpush l a b c
        r mset w_a pear w_b apple w_c fig
        assert_equal {b c a} [r sort l by w_* alpha]
        assert_equal {a c b} [r sort l by w_* alpha desc]
        assert_equal {c} [r sort l by w_* alpha limit 1 1]
    }

    test {SORT BY a pattern without '*' does not sort} {
        r del l z s
        r rpush l 3 1 2
        assert_equal {3 1 2} [r sort l by nosort]
        assert_equal {2 1 3} [r sort l by nosort desc]
        assert_equal {1 2} [r sort l by nosort limit 1 5]
        assert_equal {1} [r sort l by nosort desc limit 1 1]
        assert_equal {} [r sort l by nosort limit 3 1]
        # "#" has no '*' either
        assert_equal {3 1 2} [r sort l by #]
        r zadd z 3 c 1 a 2 b 10 d
        assert_equal {a b c d} [r sort z by nosort]
        assert_equal {d c b a} [r sort z by nosort desc]
        assert_equal {b c} [r sort z by nosort limit 1 2]
        assert_equal {c b} [r sort z by nosort desc limit 1 2]
        # a set keeps its own order (intsets: ascending)...
        r sadd s 30 10 20
        assert_equal {10 20 30} [r sort s by nosort]
        assert_equal {10 20 30} [r sort s by nosort desc]
        # ... but a stored result is sorted ALPHA
        assert_equal 3 [r sort s by nosort desc store dst]
        assert_equal {30 20 10} [r lrange dst 0 -1]
        r sadd s 9
        assert_equal 4 [r sort s by nosort store dst]
        assert_equal {10 20 30 9} [r lrange dst 0 -1]
    }

    # --- GET -----------------------------------------------------------------------

    test {SORT GET} {
        r del l w_a w_b w_c h_a h_b h_c
        r rpush l b a c
        r mset w_a 1 w_b 2
        r hset h_a f A
        r hset h_b f B
        assert_equal {a 1 A b 2 B c {} {}} [r sort l alpha get # get w_* get h_*->f]
        assert_equal "*3\r\n\$1\r\n1\r\n\$1\r\n2\r\n\$-1\r\n" [r rawcall sort l alpha get w_*]
        # a GET pattern without '*' names nothing
        assert_equal "*3\r\n\$-1\r\n\$-1\r\n\$-1\r\n" [r rawcall sort l alpha get constant]
        assert_equal {1 2} [r sort l alpha limit 0 2 get w_*]
        assert_equal {b a c} [r sort l by nosort get #]
    }

    test {SORT GET and BY with binary elements and patterns} {
        r del l
        r rpush l "a\x00b" b
        r set "k_a\x00b" 1
        r set "k_b" 2
        assert_equal [list 1 2] [r sort l alpha get k_*]
        assert_equal [list "a\x00b" b] [r sort l by k_*]
        # a NUL byte ends the part of the pattern searched for '*' and "->"
        assert_equal "*2\r\n\$-1\r\n\$-1\r\n" [r rawcall sort l alpha get "k\x00_*"]
        assert_equal [list "a\x00b" b] [r sort l alpha get "#\x00junk"]
    }

    # --- STORE ---------------------------------------------------------------------

    test {SORT STORE writes a list and replies its length} {
        r del l dst
        r rpush l 3 1 2
        r set dst old
        r expire dst 1000
        assert_equal 3 [r sort l store dst]
        assert_equal list [r type dst]
        assert_equal {1 2 3} [r lrange dst 0 -1]
        assert_equal -1 [r ttl dst]
        assert_encoding quicklist dst
        # GET values; missing ones are stored as empty strings
        r set w_1 one
        assert_equal 6 [r sort l get # get w_* store dst]
        assert_equal {1 one 2 {} 3 {}} [r lrange dst 0 -1]
        # the source itself may be the destination
        assert_equal 3 [r sort l desc store l]
        assert_equal {3 2 1} [r lrange l 0 -1]
    }

    test {SORT STORE of nothing deletes the destination} {
        r del l dst
        r rpush l 1 2
        r set dst x
        assert_equal 0 [r sort l limit 0 0 store dst]
        assert_equal 0 [r exists dst]
        r set dst x
        assert_equal 0 [r sort nokey store dst]
        assert_equal 0 [r exists dst]
    }

    test {SORT STORE with a conversion error stores nothing} {
        r del l dst
        r rpush l 1 x
        r set dst keep
        assert_error "ERR One or more scores can't be converted into double" {r sort l store dst}
        assert_equal keep [r get dst]
    }

    test {SORT STORE ALPHA compares bytes} {
        r del l dst
        r rpush l "a\x00b" "a\x00a" a ab
        assert_equal 4 [r sort l alpha store dst]
        assert_equal [list a "a\x00a" "a\x00b" ab] [r lrange dst 0 -1]
    }

    test {SORT STORE wakes a client blocked on the destination} {
        r del l dst
        r rpush l 2 1
        set rd [redis_deferring_client]
        $rd blpop dst 5
        wait_for_condition 100 10 {[s blocked_clients] == 1} else {fail "client did not block"}
        assert_equal 2 [r sort l store dst]
        assert_equal {dst 1} [$rd read]
        assert_equal {2} [r lrange dst 0 -1]
        $rd close
    }

    # --- encodings and types --------------------------------------------------------

    test {SORT converts a listpack sorted set to skiplist (as Redis does)} {
        r del z
        r zadd z 1 a 2 b
        assert_encoding listpack z
        assert_equal {a b} [r sort_ro z alpha]
        assert_encoding skiplist z
        assert_equal {a b} [r zrange z 0 -1]
        assert_equal 2 [r zscore z b]
    }

    test {SORT of a big set, list and sorted set agrees with lsort} {
        r del l s z
        set vals {}
        for {set i 0} {$i < 3000} {incr i} {
            lappend vals [expr {int(rand() * 100000) - 50000}]
        }
        set uniq [lsort -integer -unique $vals]
        r rpush l {*}$vals
        r sadd s {*}$vals
        set zargs {}
        foreach v $uniq {lappend zargs [expr {rand()}] $v}
        r zadd z {*}$zargs
        assert_encoding hashtable s
        assert_equal [lsort -integer $vals] [r sort l]
        assert_equal [lsort -integer -decreasing $vals] [r sort l desc]
        assert_equal $uniq [r sort s]
        assert_equal $uniq [r sort z]
        assert_equal [lrange $uniq 100 199] [r sort s limit 100 100]
        assert_equal [lsort -ascii $uniq] [r sort s alpha]
        assert_equal [lsort -ascii -decreasing $vals] [r sort l alpha desc]
    }

    # --- errors -------------------------------------------------------------------

    test {SORT errors} {
        r del l str
        r rpush l 1
        r set str x
        assert_error $::WRONGTYPE {r sort str}
        assert_error $::WRONGTYPE {r sort_ro str}
        assert_error "ERR syntax error" {r sort l limit 0}
        assert_error "ERR syntax error" {r sort l limit}
        assert_error "ERR syntax error" {r sort l by}
        assert_error "ERR syntax error" {r sort l get}
        assert_error "ERR syntax error" {r sort l store}
        assert_error "ERR syntax error" {r sort l foo}
        assert_error "ERR syntax error" {r sort_ro l store dst}
        assert_error "ERR value is not an integer or out of range" {r sort l limit x 1}
        assert_error "ERR value is not an integer or out of range" {r sort l limit 0 1.5}
        assert_error "ERR value is not an integer or out of range" {r sort l limit 0 99999999999999999999}
        # options are checked before the type
        assert_error "ERR syntax error" {r sort str foo}
        assert_error "ERR value is not an integer or out of range" {r sort str limit x 1}
        assert_error "ERR wrong number of arguments for 'sort' command" {r sort}
    }

    test {Keyspace notification of SORT STORE} {
        needs_feature config:notify-keyspace-events
        r del l dst
        r rpush l 1 2
        r config set notify-keyspace-events KElg
        set sub [redis_deferring_client]
        $sub psubscribe __keyevent@*
        $sub read
        r sort l store dst
        r sort l limit 0 0 store dst
        assert_equal __keyevent@0__:sortstore [lindex [$sub read] 2]
        assert_equal __keyevent@0__:del [lindex [$sub read] 2]
        r config set notify-keyspace-events ""
        $sub close
    }

    test {SORT BY a pattern and GET need a selector that reads any key} {
        r del l
        r rpush l 2 1
        r mset w1 1 w2 2
        r acl setuser sorter on nopass (+sort ~l)
        set u [redis_client]
        $u auth sorter x
        assert_error {ERR BY option of SORT denied due to insufficient ACL permissions.} {$u sort l by w*}
        assert_error {ERR GET option of SORT denied due to insufficient ACL permissions.} {$u sort l get #}
        # A BY without '*' sorts nothing and reads nothing: allowed.
        assert_equal {2 1} [$u sort l by nosort]
        r acl setuser sorter (+sort ~l ~w*)
        assert_error {ERR BY option*} {$u sort l by w*}
        r acl setuser sorter (+sort ~l %W~*)
        assert_error {ERR GET option*} {$u sort l get w*}
        r acl setuser sorter (+sort ~l %R~*)
        assert_equal {1 2} [$u sort l by w*]
        assert_equal {1 2} [$u sort l get w*]
        # The root selector counts as any other.
        r acl setuser sorter reset on nopass +sort allkeys
        assert_equal {1 2} [$u sort l by w*]
        $u close
        r acl deluser sorter
        r del l w1 w2
    }

    # Last in the file on purpose: redis-server does not clear errno before
    # its strtod, so after an overflow it keeps refusing valid numbers in
    # later SORTs until some other call resets errno. Goblin clears it.
    test {Numeric overflow and underflow are conversion errors} {
        foreach bad {1e400 -1e400 1e-400} {
            r del l
            r rpush l 1 $bad
            assert_error "ERR One or more scores can't be converted into double" {r sort l}
        }
    }
}
