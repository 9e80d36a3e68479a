# Lists: the whole Redis 7.0 list family, every error, the chunked storage
# under different list-max-listpack-size settings (checked against a Tcl
# model), and the blocking commands: several keys per client, timeouts,
# disconnects, FIFO wake order, MULTI/EXEC, CLIENT UNBLOCK, type changes
# under a waiter, and waiters on different worker threads (--cores 2).

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}

# Goblin runs the blocking tests with two workers so that waiters and
# pushers live on different threads; redis-server (when the suite itself is
# validated against it) has one thread anyway.
if {[is_goblin]} {
    set ::list_server_args {--cores 2}
} else {
    set ::list_server_args {}
}

proc wait_for_blocked_clients_count {n {tries 200} {delay 10}} {
    wait_for_condition $tries $delay {
        [s blocked_clients] == $n
    } else {
        fail "expected $n blocked clients, INFO says [s blocked_clients]"
    }
}

# A client that connects, blocks with the given command and waits until
# the server counts one more blocked client (so FIFO order is established).
proc blocked_client {args} {
    set before [s blocked_clients]
    set rd [redis_deferring_client]
    $rd {*}$args
    wait_for_blocked_clients_count [expr {$before + 1}]
    return $rd
}

proc client_id {c} {
    $c deferred 0
    set id [$c client id]
    $c deferred 1
    return $id
}

# RPUSH key with n elements <prefix><i>, in batches.
proc fill_list {key n {prefix e} {first 0}} {
    set args {}
    for {set i $first} {$i < $first + $n} {incr i} {
        lappend args $prefix$i
        if {[llength $args] >= 2000} {
            r rpush $key {*}$args
            set args {}
        }
    }
    if {[llength $args]} {r rpush $key {*}$args}
}

proc model_lrange {l start end} {
    set len [llength $l]
    if {$start < 0} {set start [expr {$len + $start}]}
    if {$end < 0} {set end [expr {$len + $end}]}
    if {$start < 0} {set start 0}
    if {$start > $end || $start >= $len} {return {}}
    if {$end >= $len} {set end [expr {$len - 1}]}
    return [lrange $l $start $end]
}

proc rint {min max} {
    expr {$min + int(rand() * ($max - $min + 1))}
}

# Values that exercise every element form: small pool, integers of every
# width, text that only looks like an integer, binary, long strings.
proc rand_elem {} {
    set r [rint 0 99]
    if {$r < 35} {return [lindex {a b c d 1 -1 0 x {}} [rint 0 8]]}
    if {$r < 50} {return [lindex {31 32 127 128 -128 -129 32767 32768 2147483648 9223372036854775807 -9223372036854775808} [rint 0 10]]}
    if {$r < 55} {return [lindex {007 -0 +1 { 1} 9223372036854775808 1e3 0x10} [rint 0 6]]}
    if {$r < 70} {return [randstring 0 20 binary]}
    if {$r < 97} {return [randstring 1 40 alnum]}
    return [string repeat [randstring 1 1 alpha] [rint 100 20000]]
}

start_server [list tags {list} args $::list_server_args] {

    # --- push / pop / length -------------------------------------------------

    test {DEBUG QUICKLIST-PACKED-THRESHOLD: checked, and lists of big elements work either way} {
        assert_error {*argument must be a memory value bigger than 1 and smaller than 4gb*} \
            {r debug quicklist-packed-threshold 5gb}
        assert_error {*argument must be a memory value*} {r debug quicklist-packed-threshold abc}
        assert_equal OK [r debug quicklist-packed-threshold 1b]
        r del biglist
        r rpush biglist [string repeat x 20000] small 7 [string repeat y 300]
        r linsert biglist before small [string repeat z 17000]
        assert_equal 5 [r llen biglist]
        assert_equal [string repeat z 17000] [r lindex biglist 1]
        assert_equal {small 7} [r lrange biglist 2 3]
        assert_equal [string repeat y 300] [r rpop biglist]
        assert_equal OK [r debug quicklist-packed-threshold 0]
        r del biglist
    }

    test {LPUSH, RPUSH, LLEN, LINDEX, LPOP, RPOP basics} {
        r del mylist
        assert_equal 1 [r lpush mylist a]
        assert_equal 2 [r rpush mylist b]
        assert_equal 3 [r rpush mylist c]
        assert_equal 4 [r lpush mylist 0]
        assert_equal 4 [r llen mylist]
        assert_equal {0 a b c} [r lrange mylist 0 -1]
        assert_equal 0 [r lindex mylist 0]
        assert_equal a [r lindex mylist 1]
        assert_equal c [r lindex mylist 3]
        assert_equal c [r lindex mylist -1]
        assert_equal 0 [r lindex mylist -4]
        assert_equal 0 [r lpop mylist]
        assert_equal c [r rpop mylist]
        assert_equal a [r lpop mylist]
        assert_equal b [r rpop mylist]
        assert_equal 0 [r exists mylist]
        assert_equal 0 [r llen mylist]
    }

    test {LPUSH and RPUSH with several values keep argument order} {
        r del l1 l2
        assert_equal 3 [r lpush l1 a b c]
        assert_equal {c b a} [r lrange l1 0 -1]
        assert_equal 3 [r rpush l2 a b c]
        assert_equal {a b c} [r lrange l2 0 -1]
    }

    test {Lists are reported as quicklist with TYPE list (Redis 7.0)} {
        r del l
        r rpush l a
        assert_equal list [r type l]
        assert_encoding quicklist l
        fill_list l 5000
        assert_encoding quicklist l
    }

    test {Integers, text that looks like integers and binary values round-trip} {
        r del l
        set vals {0 1 -1 31 32 127 128 -128 -129 32767 32768 -32768 8388608 2147483647 -2147483648
            4294967296 9223372036854775807 -9223372036854775808 9223372036854775808
            -9223372036854775809 007 -0 +1 { 1} {1 } 1e3 0x10 1.5 {}}
        foreach v $vals {r rpush l $v}
        lappend vals "\x00\xff\r\n" [string repeat x 127] [string repeat y 128] [string repeat z 16383] \
            [string repeat w 16384] [string repeat v 70000]
        foreach v [lrange $vals end-5 end] {r rpush l $v}
        assert_equal $vals [r lrange l 0 -1]
        for {set i 0} {$i < [llength $vals]} {incr i} {
            assert_equal [lindex $vals $i] [r lindex l $i]
        }
        assert_equal [lreverse $vals] [r rpop l [llength $vals]]
    }

    test {Empty string elements} {
        r del l
        r rpush l {} {} x {}
        assert_equal 4 [r llen l]
        assert_equal {{} {} x {}} [r lrange l 0 -1]
        assert_equal 3 [r lrem l 0 {}]
        assert_equal x [r lpop l]
    }

    test {LPUSHX, RPUSHX: only existing lists} {
        r del xlist
        assert_equal 0 [r lpushx xlist a]
        assert_equal 0 [r rpushx xlist a b]
        assert_equal 0 [r exists xlist]
        r rpush xlist b c
        assert_equal 4 [r rpushx xlist d e]
        assert_equal 6 [r lpushx xlist a 0]
        assert_equal {0 a b c d e} [r lrange xlist 0 -1]
    }

    test {Push and pop against a key of another type} {
        r set str foo
        foreach cmd {lpush rpush lpushx rpushx} {
            assert_error "$::WRONGTYPE" {r $cmd str x}
        }
        foreach cmd {lpop rpop llen} {
            assert_error "$::WRONGTYPE" {r $cmd str}
        }
        assert_error "$::WRONGTYPE" {r lpop str 2}
        assert_equal foo [r get str]
    }

    test {LPOP/RPOP with COUNT} {
        r del l
        r rpush l a b c d e
        assert_equal {a b} [r lpop l 2]
        assert_equal {e d} [r rpop l 2]
        assert_equal {} [r lpop l 0]
        assert_equal "*0\r\n" [r rawcall lpop l 0]
        assert_equal {c} [r rpop l 10]
        assert_equal 0 [r exists l]
    }

    test {LPOP/RPOP with COUNT on a missing key is a null array (RESP2 and RESP3)} {
        r del nokey
        assert_equal "*-1\r\n" [r rawcall lpop nokey 2]
        assert_equal "*-1\r\n" [r rawcall rpop nokey 0]
        assert_equal "\$-1\r\n" [r rawcall lpop nokey]
        r hello 3
        assert_equal "_\r\n" [r rawcall lpop nokey 2]
        assert_equal "_\r\n" [r rawcall rpop nokey]
        r hello 2
    }

    test {LPOP/RPOP COUNT errors} {
        r rpush l a
        assert_error {ERR value is out of range, must be positive} {r lpop l -1}
        assert_error {ERR value is out of range, must be positive} {r rpop l abc}
        assert_error {ERR value is out of range, must be positive} {r lpop nokey -1}
        assert_error {ERR wrong number of arguments for 'lpop' command} {r lpop l 1 2}
        assert_error {ERR wrong number of arguments for 'rpop' command} {r rpop l 1 2}
        assert_error {ERR wrong number of arguments for 'lpush' command} {r lpush l}
    }

    # --- LINDEX / LSET / LRANGE / LTRIM ----------------------------------------

    test {LINDEX out of range, missing key, bad index} {
        r del l
        r rpush l a b c
        assert_equal {} [r lindex l 3]
        assert_equal {} [r lindex l -4]
        assert_equal "\$-1\r\n" [r rawcall lindex l 100]
        assert_equal "\$-1\r\n" [r rawcall lindex nokey abc]
        assert_error {ERR value is not an integer or out of range} {r lindex l abc}
        assert_error {ERR value is not an integer or out of range} {r lindex l 9223372036854775808}
        assert_equal {} [r lindex l 9223372036854775807]
        assert_equal {} [r lindex l -9223372036854775808]
        r set str foo
        assert_error "$::WRONGTYPE" {r lindex str 0}
    }

    test {LSET and its errors} {
        r del l
        r rpush l a b c
        assert_equal OK [r lset l 0 x]
        assert_equal OK [r lset l -1 z]
        assert_equal OK [r lset l 1 12345]
        assert_equal {x 12345 z} [r lrange l 0 -1]
        assert_error {ERR index out of range} {r lset l 3 q}
        assert_error {ERR index out of range} {r lset l -4 q}
        assert_error {ERR no such key} {r lset nokey 0 q}
        assert_error {ERR no such key} {r lset nokey abc q}
        assert_error {ERR value is not an integer or out of range} {r lset l abc q}
        r set str foo
        assert_error "$::WRONGTYPE" {r lset str 0 q}
    }

    test {LSET with big values in a long list (chunk splits)} {
        r del l
        fill_list l 3000
        set big [string repeat B 20000]
        assert_equal OK [r lset l 1500 $big]
        assert_equal OK [r lset l 10 [string repeat C 5000]]
        assert_equal $big [r lindex l 1500]
        assert_equal e1499 [r lindex l 1499]
        assert_equal e1501 [r lindex l 1501]
        assert_equal [string repeat C 5000] [r lindex l 10]
        assert_equal OK [r lset l 1500 small]
        assert_equal small [r lindex l 1500]
        assert_equal 3000 [r llen l]
    }

    test {LRANGE basics and edges} {
        r del l
        r rpush l 0 1 2 3 4 5 6 7 8 9
        assert_equal {1 2 3 4 5 6 7 8} [r lrange l 1 -2]
        assert_equal {7 8 9} [r lrange l -3 -1]
        assert_equal {4} [r lrange l 4 4]
        assert_equal {} [r lrange l 5 4]
        assert_equal {} [r lrange l 10 20]
        assert_equal {0 1 2 3 4 5 6 7 8 9} [r lrange l -100 100]
        assert_equal {} [r lrange l -1 -2]
        assert_equal {0} [r lrange l -100 0]
        assert_equal "*0\r\n" [r rawcall lrange l 20 30]
        assert_equal "*0\r\n" [r rawcall lrange nokey 0 -1]
        assert_equal {0 1} [r lrange l -9223372036854775808 1]
        assert_equal {9} [r lrange l 9 9223372036854775807]
        assert_error {ERR value is not an integer or out of range} {r lrange l a 1}
        assert_error {ERR value is not an integer or out of range} {r lrange nokey 0 b}
        r set str foo
        assert_error "$::WRONGTYPE" {r lrange str 0 -1}
    }

    test {LTRIM basics, emptying deletes the key, missing key} {
        r del l
        r rpush l 0 1 2 3 4 5 6 7 8 9
        assert_equal OK [r ltrim l 1 -2]
        assert_equal {1 2 3 4 5 6 7 8} [r lrange l 0 -1]
        assert_equal OK [r ltrim l -3 100]
        assert_equal {6 7 8} [r lrange l 0 -1]
        assert_equal OK [r ltrim l 0 0]
        assert_equal {6} [r lrange l 0 -1]
        assert_equal OK [r ltrim l 5 1]
        assert_equal 0 [r exists l]
        assert_equal OK [r ltrim nokey 0 1]
        assert_error {ERR value is not an integer or out of range} {r ltrim l x 1}
        r set str foo
        assert_error "$::WRONGTYPE" {r ltrim str 0 1}
    }

    test {LTRIM on a long list keeps the right window} {
        r del l
        fill_list l 20000
        r ltrim l 5000 -5001
        assert_equal 10000 [r llen l]
        assert_equal e5000 [r lindex l 0]
        assert_equal e14999 [r lindex l -1]
        assert_equal {e9999 e10000} [r lrange l 4999 5000]
    }

    # --- LINSERT / LREM / LPOS ---------------------------------------------------

    test {LINSERT before, after, pivot not found, missing key} {
        r del l
        r rpush l a b c d
        assert_equal 5 [r linsert l before c zz]
        assert_equal {a b zz c d} [r lrange l 0 -1]
        assert_equal 6 [r linsert l after c yy]
        assert_equal {a b zz c yy d} [r lrange l 0 -1]
        assert_equal 7 [r linsert l after d dd]
        assert_equal 8 [r linsert l BEFORE a aa]
        assert_equal {aa a b zz c yy d dd} [r lrange l 0 -1]
        assert_equal -1 [r linsert l before nosuch x]
        assert_equal 0 [r linsert nokey before a x]
        assert_equal 0 [r exists nokey]
    }

    test {LINSERT matches integers by value text} {
        r del l
        r rpush l 1 2 3 007
        assert_equal 5 [r linsert l after 2 x]
        assert_equal 6 [r linsert l before 007 y]
        assert_equal -1 [r linsert l before 7 z]
        assert_equal {1 2 x 3 y 007} [r lrange l 0 -1]
    }

    test {LINSERT errors} {
        r del l
        r rpush l a
        assert_error {ERR syntax error} {r linsert l middle a b}
        assert_error {ERR syntax error} {r linsert nokey middle a b}
        r set str foo
        assert_error "$::WRONGTYPE" {r linsert str before a b}
    }

    test {LINSERT into the middle of a long list many times} {
        r del l
        fill_list l 2000
        set model {}
        for {set i 0} {$i < 2000} {incr i} {lappend model e$i}
        for {set i 0} {$i < 500} {incr i} {
            set p [rint 0 [expr {[llength $model] - 1}]]
            set pivot [lindex $model $p]
            set v "ins-$i-[randstring 0 30 alnum]"
            r linsert l after $pivot $v
            set model [linsert $model [expr {$p + 1}] $v]
        }
        assert_equal $model [r lrange l 0 -1]
    }

    test {LREM from the head, from the tail, all} {
        r del l
        r rpush l a b a c a d a
        assert_equal 2 [r lrem l 2 a]
        assert_equal {b c a d a} [r lrange l 0 -1]
        assert_equal 1 [r lrem l -1 a]
        assert_equal {b c a d} [r lrange l 0 -1]
        assert_equal 1 [r lrem l 0 a]
        assert_equal 0 [r lrem l 0 nosuch]
        assert_equal {b c d} [r lrange l 0 -1]
        assert_equal 1 [r lrem l -9223372036854775808 c]
        assert_equal 1 [r lrem l 0 b]
        assert_equal 0 [r lrem l 0 b]
        assert_equal 1 [r lrem l 1 d]
        assert_equal 0 [r exists l]
        assert_equal 0 [r lrem nokey 0 a]
        assert_error {ERR value is not an integer or out of range} {r lrem l x a}
        r set str foo
        assert_error "$::WRONGTYPE" {r lrem str 0 a}
    }

    test {LREM with integers and on a long list} {
        r del l
        set vals {}
        for {set i 0} {$i < 3000} {incr i} {lappend vals [expr {$i % 7}]}
        r rpush l {*}$vals
        assert_equal 429 [r lrem l 0 3]
        assert_equal 10 [r lrem l 10 5]
        assert_equal 10 [r lrem l -10 6]
        assert_equal 0 [r lrem l 0 03]
        assert_equal [expr {3000 - 449}] [r llen l]
        set got [r lrange l 0 -1]
        assert_equal -1 [lsearch $got 3]
    }

    test {LPOS basics, RANK, COUNT, MAXLEN} {
        r del l
        r rpush l a b c 1 2 3 c c
        assert_equal 2 [r lpos l c]
        assert_equal 6 [r lpos l c rank 2]
        assert_equal 7 [r lpos l c rank -1]
        assert_equal 6 [r lpos l c rank -2]
        assert_equal {} [r lpos l c rank 4]
        assert_equal {2 6} [r lpos l c count 2]
        assert_equal {2 6 7} [r lpos l c count 0]
        assert_equal {7 6 2} [r lpos l c count 0 rank -1]
        assert_equal {6 7} [r lpos l c count 0 rank 2]
        assert_equal {2} [r lpos l c count 0 maxlen 6]
        assert_equal {} [r lpos l c maxlen 2]
        assert_equal {7} [r lpos l c rank -1 maxlen 1]
        assert_equal 3 [r lpos l 1]
        assert_equal {} [r lpos l 01]
        assert_equal {} [r lpos l x]
        assert_equal "\$-1\r\n" [r rawcall lpos l x]
        assert_equal "*0\r\n" [r rawcall lpos l x count 3]
        assert_equal "\$-1\r\n" [r rawcall lpos nokey x]
        assert_equal "*0\r\n" [r rawcall lpos nokey x count 0]
    }

    test {LPOS RANK -9223372036854775808 behaves as Redis (first match from the tail)} {
        r del l
        r rpush l a b a
        assert_equal 2 [r lpos l a rank -9223372036854775808]
        assert_equal {2 0} [r lpos l a rank -9223372036854775808 count 1]
    }

    test {LPOS errors} {
        r del l
        r rpush l a
        assert_error {ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list} {r lpos l a rank 0}
        assert_error {ERR value is not an integer or out of range} {r lpos l a rank x}
        assert_error {ERR COUNT can't be negative} {r lpos l a count -1}
        assert_error {ERR COUNT can't be negative} {r lpos l a count x}
        assert_error {ERR MAXLEN can't be negative} {r lpos l a maxlen -1}
        assert_error {ERR syntax error} {r lpos l a rank}
        assert_error {ERR syntax error} {r lpos l a foo 1}
        assert_error {ERR syntax error} {r lpos nokey a foo}
        r set str foo
        assert_error "$::WRONGTYPE" {r lpos str a}
    }

    # --- LMOVE / RPOPLPUSH / LMPOP -------------------------------------------------

    foreach {from to} {left left left right right left right right} {
        test "LMOVE $from $to" {
            r del src dst
            r rpush src a b c
            r rpush dst x y
            set e [r lmove src dst $from $to]
            assert_equal [expr {$from eq "left" ? "a" : "c"}] $e
            assert_equal 2 [r llen src]
            if {$to eq "left"} {
                assert_equal $e [r lindex dst 0]
            } else {
                assert_equal $e [r lindex dst -1]
            }
        }
    }

    test {LMOVE creates the destination and deletes an emptied source} {
        r del src dst
        r rpush src 42
        assert_equal 42 [r lmove src dst right left]
        assert_equal 0 [r exists src]
        assert_equal {42} [r lrange dst 0 -1]
        assert_equal list [r type dst]
    }

    test {LMOVE on the same list rotates it} {
        r del l
        r rpush l a b c
        assert_equal a [r lmove l l left right]
        assert_equal {b c a} [r lrange l 0 -1]
        assert_equal a [r lmove l l right left]
        assert_equal {a b c} [r lrange l 0 -1]
        assert_equal a [r lmove l l left left]
        assert_equal {a b c} [r lrange l 0 -1]
        r del one
        r rpush one [string repeat x 100]
        assert_equal [string repeat x 100] [r rpoplpush one one]
        assert_equal 1 [r llen one]
    }

    test {RPOPLPUSH base case and missing source} {
        r del src dst
        r rpush src a b c d
        assert_equal d [r rpoplpush src dst]
        assert_equal c [r rpoplpush src dst]
        assert_equal {a b} [r lrange src 0 -1]
        assert_equal {c d} [r lrange dst 0 -1]
        assert_equal {} [r rpoplpush nokey dst]
        assert_equal "\$-1\r\n" [r rawcall lmove nokey dst left left]
        assert_equal 0 [r exists nokey]
    }

    test {LMOVE / RPOPLPUSH errors and wrong types} {
        r del src dst
        r set str foo
        r rpush src a
        assert_error {ERR syntax error} {r lmove src dst up left}
        assert_error {ERR syntax error} {r lmove src dst left down}
        assert_error "$::WRONGTYPE" {r lmove str dst left left}
        assert_error "$::WRONGTYPE" {r rpoplpush src str}
        assert_equal {a} [r lrange src 0 -1]
        assert_equal foo [r get str]
        assert_equal {} [r lmove nokey str left left]
    }

    test {LMPOP single key, several keys, COUNT, reply shape} {
        r del k1 k2 k3
        r rpush k2 a b c d
        r rpush k3 x
        assert_equal {k2 a} [r lmpop 3 k1 k2 k3 left]
        assert_equal {k2 {d c}} [r lmpop 3 k1 k2 k3 right count 2]
        assert_equal {k2 b} [r lmpop 2 k2 k3 left count 10]
        assert_equal 0 [r exists k2]
        assert_equal "*2\r\n\$2\r\nk3\r\n*1\r\n\$1\r\nx\r\n" [r rawcall lmpop 1 k3 LEFT COUNT 1]
        assert_equal "*-1\r\n" [r rawcall lmpop 2 k1 k3 left]
        r hello 3
        assert_equal "_\r\n" [r rawcall lmpop 2 k1 k3 left]
        r hello 2
    }

    test {LMPOP errors} {
        r del k1
        r rpush k1 a
        assert_error {ERR numkeys should be greater than 0} {r lmpop 0 k1 left}
        assert_error {ERR numkeys should be greater than 0} {r lmpop -1 k1 left}
        assert_error {ERR numkeys should be greater than 0} {r lmpop abc k1 left}
        assert_error {ERR syntax error} {r lmpop 2 k1 left}
        assert_error {ERR syntax error} {r lmpop 9223372036854775807 k1 left}
        assert_error {ERR syntax error} {r lmpop 1 k1 middle}
        assert_error {ERR syntax error} {r lmpop 1 k1 left count}
        assert_error {ERR syntax error} {r lmpop 1 k1 left count 1 count 2}
        assert_error {ERR syntax error} {r lmpop 1 k1 left foo}
        assert_error {ERR count should be greater than 0} {r lmpop 1 k1 left count 0}
        assert_error {ERR count should be greater than 0} {r lmpop 1 k1 left count x}
        r set str foo
        assert_error "$::WRONGTYPE" {r lmpop 2 nokey str left}
        assert_equal {k1 a} [r lmpop 2 k1 str left]
    }

    # --- a model check under every chunk geometry ---------------------------------------

    foreach fill {-2 -1 -5 1 3 128} {
        test "Random operations against a Tcl model, list-max-listpack-size $fill" {
            r config set list-max-listpack-size $fill
            try {
            r del l
            set model {}
            for {set i 0} {$i < 1500} {incr i} {
                set op [rint 0 99]
                set len [llength $model]
                if {$op < 30} {
                    set v [rand_elem]
                    if {[rint 0 1]} {r lpush l $v; set model [linsert $model 0 $v]} else {r rpush l $v; lappend model $v}
                } elseif {$op < 40 && $len} {
                    set n [rint 1 5]
                    if {[rint 0 1]} {
                        assert_equal [lrange $model 0 [expr {$n - 1}]] [r lpop l $n]
                        set model [lrange $model $n end]
                    } else {
                        assert_equal [lreverse [lrange $model end-[expr {$n - 1}] end]] [r rpop l $n]
                        set model [lrange $model 0 end-$n]
                    }
                } elseif {$op < 50 && $len} {
                    set idx [rint 0 [expr {$len - 1}]]
                    set v [rand_elem]
                    r lset l $idx $v
                    lset model $idx $v
                } elseif {$op < 60 && $len} {
                    set idx [rint 0 [expr {$len - 1}]]
                    set pivot [lindex $model $idx]
                    set first [lsearch -exact $model $pivot]
                    set v [rand_elem]
                    if {[rint 0 1]} {
                        r linsert l before $pivot $v
                        set model [linsert $model $first $v]
                    } else {
                        r linsert l after $pivot $v
                        set model [linsert $model [expr {$first + 1}] $v]
                    }
                } elseif {$op < 65 && $len} {
                    set v [lindex $model [rint 0 [expr {$len - 1}]]]
                    set cnt [rint -2 2]
                    set removed 0
                    if {$cnt >= 0} {
                        set out {}
                        foreach e $model {
                            if {$e eq $v && ($cnt == 0 || $removed < $cnt)} {incr removed} else {lappend out $e}
                        }
                    } else {
                        set out {}
                        foreach e [lreverse $model] {
                            if {$e eq $v && $removed < -$cnt} {incr removed} else {lappend out $e}
                        }
                        set out [lreverse $out]
                    }
                    assert_equal $removed [r lrem l $cnt $v]
                    set model $out
                } elseif {$op < 68 && $len} {
                    set a [rint -5 5]
                    set b [rint -5 -1]
                    r ltrim l $a $b
                    set model [model_lrange $model $a $b]
                } elseif {$op < 80} {
                    set a [rint -20 20]
                    set b [rint -20 20]
                    assert_equal [model_lrange $model $a $b] [r lrange l $a $b]
                } elseif {$op < 90} {
                    set idx [rint [expr {-$len - 2}] [expr {$len + 1}]]
                    if {$idx < -$len} {
                        set want {}
                    } elseif {$idx < 0} {
                        set want [lindex $model end-[expr {-$idx - 1}]]
                    } else {
                        set want [lindex $model $idx]
                    }
                    assert_equal $want [r lindex l $idx]
                } else {
                    assert_equal [llength $model] [r llen l]
                }
                if {$i % 100 == 0} {
                    assert_equal $model [r lrange l 0 -1]
                }
            }
            assert_equal $model [r lrange l 0 -1]
            } finally {
                r config set list-max-listpack-size -2
            }
        }
    }

    test {Big list: 100000 pushes on both ends, LINDEX, pops} {
        r del big
        for {set i 0} {$i < 50000} {incr i 1000} {
            set args {}
            for {set j $i} {$j < $i + 1000} {incr j} {lappend args $j}
            r rpush big {*}$args
            set args {}
            for {set j $i} {$j < $i + 1000} {incr j} {lappend args -[expr {$j + 1}]}
            r lpush big {*}$args
        }
        assert_equal 100000 [r llen big]
        assert_equal -50000 [r lindex big 0]
        assert_equal 0 [r lindex big 50000]
        assert_equal 49999 [r lindex big -1]
        assert_equal 12345 [r lindex big 62345]
        assert_equal {-1 0 1} [r lrange big 49999 50001]
        assert_equal -50000 [r lpop big]
        assert_equal 49999 [r rpop big]
        r ltrim big 1000 -1001
        assert_equal 97998 [r llen big]
        assert_equal -48999 [r lindex big 0]
    }

    test {MEMORY USAGE of a list grows with it; OBJECT ENCODING stays quicklist} {
        needs_feature command:memory|usage
        r del l
        r rpush l a
        set small [r memory usage l]
        fill_list l 10000
        set big [r memory usage l]
        assert_morethan $big [expr {$small + 10000 * 5}]
        assert_lessthan $big [expr {$small + 10000 * 20}]
    }

    foreach {pop side} {rpop tail lpop head} {
        test "A list drained from its $side gives its memory back" {
            r del l
            fill_list l 10000
            set full [r memory usage l]
            for {set i 0} {$i < 99} {incr i} {r $pop l 100}
            r $pop l 90
            assert_equal 10 [r llen l]
            # The 8 KiB chunk and its offset cache shrink with the pops.
            assert_lessthan [r memory usage l] 1024
            assert_lessthan [r memory usage l] [expr {$full / 50}]
        } goblin_only
    }

    test {COPY of a list is a deep copy} {
        needs_feature command:copy
        r del l c
        r rpush l a b c
        fill_list l 3000
        assert_equal 1 [r copy l c]
        r lpush c new
        r lset c 1 changed
        assert_equal a [r lindex l 0]
        assert_equal b [r lindex l 1]
        assert_equal new [r lindex c 0]
        assert_equal changed [r lindex c 1]
        assert_equal 3003 [r llen l]
        assert_equal 3004 [r llen c]
    }

    test {Keyspace notifications of the list commands} {
        needs_feature config:notify-keyspace-events
        r del l l2
        r config set notify-keyspace-events KElg
        set sub [redis_deferring_client]
        $sub psubscribe __keyevent@*
        $sub read
        r rpush l a b c
        r lpush l z
        r lpop l
        r rpop l
        r lset l 0 q
        r linsert l after q w
        r lrem l 0 w
        r ltrim l 0 0
        r lmove l l2 left right
        set events {}
        for {set i 0} {$i < 11} {incr i} {lappend events [lindex [$sub read] 2]}
        set want {}
        foreach e {rpush lpush lpop rpop lset linsert lrem ltrim rpush lpop del} {
            lappend want __keyevent@0__:$e
        }
        assert_equal $want $events
        r config set notify-keyspace-events ""
        $sub close
    }

    # --- blocking: immediate service and errors -----------------------------------------

    test {BLPOP/BRPOP serve at once when a key has elements} {
        r del b1 b2
        r rpush b2 a b c
        assert_equal {b2 a} [r blpop b1 b2 0]
        assert_equal {b2 c} [r brpop b1 b2 1]
        assert_equal {b2 b} [r blpop b2 b2 0]
        assert_equal 0 [r exists b2]
    }

    test {BLPOP/BLMOVE/BLMPOP timeout errors} {
        assert_error {ERR timeout is negative} {r blpop l -1}
        assert_error {ERR timeout is not a float or out of range} {r blpop l abc}
        assert_error {ERR timeout is not a float or out of range} {r brpop l nan}
        assert_error {ERR timeout is negative} {r blmove l d left left -0.5}
        assert_error {ERR timeout is negative} {r brpoplpush l d -1}
        assert_error {ERR timeout is not a float or out of range} {r blmpop x 1 l left}
        assert_error {ERR numkeys should be greater than 0} {r blmpop 0 0 l left}
        assert_error {ERR syntax error} {r blmpop 0 1 l middle}
        assert_error {ERR count should be greater than 0} {r blmpop 0 1 l left count 0}
        assert_error {ERR syntax error} {r blmove l d up left 0}
    }

    test {Blocking commands against a key of another type} {
        r del l
        r set str foo
        assert_error "$::WRONGTYPE" {r blpop l str 0}
        assert_error "$::WRONGTYPE" {r brpop str 0}
        assert_error "$::WRONGTYPE" {r blmove str l left left 0}
        assert_error "$::WRONGTYPE" {r brpoplpush str l 0}
        assert_error "$::WRONGTYPE" {r blmpop 0 2 l str left}
        r rpush l a
        assert_error "$::WRONGTYPE" {r blmove l str left left 0}
        assert_equal {a} [r lrange l 0 -1]
    }

    test {Blocking commands inside MULTI answer at once} {
        r del l
        r multi
        r blpop l 0
        r brpop l 0
        r blmove l d left left 0
        r brpoplpush l d 0
        r blmpop 0 1 l left
        assert_equal "*5\r\n*-1\r\n*-1\r\n\$-1\r\n\$-1\r\n*-1\r\n" [r rawcall exec]
        r rpush l a
        r multi
        r blpop l 0
        assert_equal {{l a}} [r exec]
    }

    # --- blocking: waiting, timeouts, disconnects --------------------------------------------

    test {BLPOP blocks until an LPUSH from another client} {
        r del bl
        set rd [blocked_client blpop bl 0]
        r lpush bl foo
        assert_equal {bl foo} [$rd read]
        wait_for_blocked_clients_count 0
        assert_equal 0 [r exists bl]
        $rd close
    }

    test {BRPOP with several keys is served by whichever key gets data} {
        r del k1 k2 k3
        set rd [blocked_client brpop k1 k2 k3 0]
        r rpush k2 x y
        assert_equal {k2 y} [$rd read]
        assert_equal {x} [r lrange k2 0 -1]
        $rd close
    }

    test {BLPOP with the same key several times} {
        r del l1 l2
        set rd [blocked_client blpop l1 l2 l2 l1 0]
        r lpush l1 a
        assert_equal {l1 a} [$rd read]
        $rd blpop l1 l2 l2 l1 0
        wait_for_blocked_clients_count 1
        r lpush l2 b
        assert_equal {l2 b} [$rd read]
        $rd close
    }

    test {BLPOP with variadic LPUSH gets the head element} {
        r del bl
        set rd [blocked_client blpop bl 0]
        assert_equal 2 [r lpush bl foo bar]
        assert_equal {bl bar} [$rd read]
        assert_equal {foo} [r lrange bl 0 -1]
        $rd close
    }

    test {BLPOP timeout replies a null array} {
        r del nokey
        set rd [redis_deferring_client]
        set start [clock milliseconds]
        $rd blpop nokey 0.2
        assert_equal "*-1\r\n" [$rd read_raw_reply]
        set took [expr {[clock milliseconds] - $start}]
        assert_range $took 150 3000
        $rd brpoplpush nokey dst 0.1
        assert_equal "*-1\r\n" [$rd read_raw_reply]
        $rd blmove nokey dst left right 0.1
        assert_equal "*-1\r\n" [$rd read_raw_reply]
        $rd blmpop 0.1 2 nokey other left count 2
        assert_equal "*-1\r\n" [$rd read_raw_reply]
        $rd hello 3
        $rd read
        $rd blpop nokey 0.05
        assert_equal "_\r\n" [$rd read_raw_reply]
        $rd close
        wait_for_blocked_clients_count 0
    }

    test {BLPOP with 0.001 timeout does not block forever} {
        set rd [redis_deferring_client]
        $rd blpop nokey 0.001
        assert_equal {} [$rd read]
        $rd close
    }

    test {A blocked BLPOP served after other pushes counts one call} {
        r del bl
        r config resetstat
        set rd [blocked_client blpop bl 0]
        r rpush other x
        r rpush bl a
        assert_equal {bl a} [$rd read]
        $rd close
        assert_match {*cmdstat_blpop:calls=1,*} [r info commandstats]
        r del other
    }

    test {BLPOP with timeout 0 blocks until served} {
        r del bl
        set rd [blocked_client blpop bl 0]
        after 300
        assert_equal 1 [s blocked_clients]
        r rpush bl late
        assert_equal {bl late} [$rd read]
        $rd close
    }

    test {A disconnected waiter is forgotten and does not eat elements} {
        r del bl
        set rd [blocked_client blpop bl 0]
        $rd close
        wait_for_blocked_clients_count 0
        r rpush bl kept
        after 100
        assert_equal {kept} [r lrange bl 0 -1]
    }

    test {A waiter that disconnects does not stop the one behind it} {
        r del bl
        set rd1 [blocked_client blpop bl 0]
        set rd2 [blocked_client blpop bl 0]
        $rd1 close
        wait_for_blocked_clients_count 1
        r rpush bl x
        assert_equal {bl x} [$rd2 read]
        $rd2 close
    }

    # --- blocking: order and fairness -------------------------------------------------------

    test {Waiters on one key are served in FIFO order} {
        r del q
        set clients {}
        for {set i 1} {$i <= 5} {incr i} {
            lappend clients [blocked_client blpop q 0]
        }
        r rpush q e1 e2 e3 e4 e5
        set i 1
        foreach rd $clients {
            assert_equal [list q e$i] [$rd read]
            incr i
        }
        foreach rd $clients {$rd close}
        assert_equal 0 [r exists q]
    }

    test {FIFO order holds across single pushes} {
        r del q
        set a [blocked_client brpop q 0]
        set b [blocked_client brpop q 0]
        set c [blocked_client brpop q 0]
        r lpush q 1
        assert_equal {q 1} [$a read]
        r lpush q 2
        assert_equal {q 2} [$b read]
        r lpush q 3
        assert_equal {q 3} [$c read]
        foreach rd [list $a $b $c] {$rd close}
    }

    test {A push inside MULTI/EXEC serves waiters after EXEC} {
        r del bl
        set rd [blocked_client blpop bl 0]
        r multi
        r lpush bl a
        r lpush bl b
        r lpush bl c
        r exec
        assert_equal {bl c} [$rd read]
        assert_equal {b a} [r lrange bl 0 -1]
        $rd close
    }

    test {LPUSH + DEL inside MULTI does not wake the waiter} {
        r del bl
        set rd [blocked_client blpop bl 0]
        r multi
        r lpush bl a
        r del bl
        r exec
        after 100
        assert_equal 1 [s blocked_clients]
        r rpush bl b
        assert_equal {bl b} [$rd read]
        $rd close
    }

    test {A key of another type under a waiter keeps it blocked} {
        r del bl
        set rd [blocked_client blpop bl 0]
        r multi
        r lpush bl a
        r del bl
        r set bl foo
        r exec
        after 100
        assert_equal 1 [s blocked_clients]
        r del bl
        r rpush bl ok
        assert_equal {bl ok} [$rd read]
        $rd close
    }

    test {A waiter on two keys is not disturbed by the other key's wrong type} {
        r del k1 k2
        set rd [blocked_client blpop k1 k2 0]
        r set k1 str
        r rpush k2 v
        assert_equal {k2 v} [$rd read]
        r del k1
        $rd close
    }

    # --- blocking moves --------------------------------------------------------------------------

    test {BLMOVE blocks and moves once the source gets an element} {
        r del src dst
        set rd [blocked_client blmove src dst right left 0]
        r rpush src a b
        assert_equal b [$rd read]
        assert_equal {a} [r lrange src 0 -1]
        assert_equal {b} [r lrange dst 0 -1]
        $rd close
    }

    foreach {from to} {left left left right right left right right} {
        test "BLMOVE $from $to with a client BLPOPing the destination" {
            r del src dst
            set rd1 [blocked_client blpop dst 0]
            set rd2 [blocked_client blmove src dst $from $to 0]
            r rpush src a b
            set moved [expr {$from eq "left" ? "a" : "b"}]
            assert_equal $moved [$rd2 read]
            assert_equal [list dst $moved] [$rd1 read]
            assert_equal 0 [r exists dst]
            $rd1 close
            $rd2 close
        }
    }

    test {BRPOPLPUSH with a wrong destination type answers WRONGTYPE and keeps the element} {
        r del src dst
        set rd [blocked_client brpoplpush src dst 0]
        r set dst nolist
        r rpush src foo
        assert_error "$::WRONGTYPE" {$rd read}
        assert_equal {foo} [r lrange src 0 -1]
        assert_equal nolist [r get dst]
        $rd close
    }

    test {BRPOPLPUSH keeps order after a failed waiter} {
        r del src dst1 dst2
        r set dst1 nolist
        set rd1 [blocked_client brpoplpush src dst1 0]
        set rd2 [blocked_client brpoplpush src dst2 0]
        r rpush src a
        assert_error "$::WRONGTYPE" {$rd1 read}
        assert_equal a [$rd2 read]
        assert_equal {a} [r lrange dst2 0 -1]
        $rd1 close
        $rd2 close
    }

    test {Linked BLMOVEs} {
        r del l1 l2 l3
        set rd1 [blocked_client blmove l1 l2 right left 0]
        set rd2 [blocked_client blmove l2 l3 left right 0]
        r rpush l1 foo
        assert_equal foo [$rd1 read]
        assert_equal foo [$rd2 read]
        assert_equal {} [r lrange l1 0 -1]
        assert_equal {} [r lrange l2 0 -1]
        assert_equal {foo} [r lrange l3 0 -1]
        $rd1 close
        $rd2 close
    }

    test {Circular BRPOPLPUSH} {
        r del l1 l2
        set rd1 [blocked_client brpoplpush l1 l2 0]
        set rd2 [blocked_client brpoplpush l2 l1 0]
        r rpush l1 foo
        assert_equal foo [$rd1 read]
        assert_equal foo [$rd2 read]
        assert_equal {foo} [r lrange l1 0 -1]
        assert_equal {} [r lrange l2 0 -1]
        $rd1 close
        $rd2 close
    }

    test {Self-referential BRPOPLPUSH} {
        r del bl
        set rd [blocked_client brpoplpush bl bl 0]
        r rpush bl foo
        assert_equal foo [$rd read]
        assert_equal {foo} [r lrange bl 0 -1]
        $rd close
    }

    test {BRPOPLPUSH does not touch a WATCHed key while blocked; its push does} {
        r del src dst
        set rd [blocked_client brpoplpush src dst 0]
        set w [redis_client]
        $w watch dst
        $w multi
        $w ping
        assert_equal {PONG} [$w exec]
        $w watch dst
        r rpush src x
        assert_equal x [$rd read]
        $w multi
        $w ping
        assert_equal {} [$w exec]
        $rd close
        $w close
    }

    # --- BLMPOP ------------------------------------------------------------------------------------

    test {BLMPOP serves at once, with COUNT, from the first non-empty key} {
        r del k1 k2
        r rpush k2 a b c
        assert_equal {k2 {c b}} [r blmpop 0 2 k1 k2 right count 2]
        assert_equal {k2 a} [r blmpop 0 2 k1 k2 left count 5]
        assert_equal 0 [r exists k2]
    }

    test {BLMPOP blocks and is served with COUNT} {
        r del k1 k2
        set rd [blocked_client blmpop 0 2 k1 k2 left count 3]
        r rpush k2 a b c d
        assert_equal {k2 {a b c}} [$rd read]
        assert_equal {d} [r lrange k2 0 -1]
        set rd2 [blocked_client blmpop 0 1 k1 right]
        r rpush k1 x y
        assert_equal {k1 y} [$rd2 read]
        $rd close
        $rd2 close
    }

    # --- CLIENT UNBLOCK and INFO -------------------------------------------------------------------

    test {CLIENT UNBLOCK a blocked BLPOP: TIMEOUT and ERROR} {
        r del bl
        set rd [redis_deferring_client]
        set id [client_id $rd]
        $rd blpop bl 0
        wait_for_blocked_clients_count 1
        assert_equal 1 [r client unblock $id]
        assert_equal "*-1\r\n" [$rd read_raw_reply]
        $rd blmove bl dst left left 0
        wait_for_blocked_clients_count 1
        assert_equal 1 [r client unblock $id error]
        assert_error {UNBLOCKED client unblocked via CLIENT UNBLOCK} {$rd read}
        wait_for_blocked_clients_count 0
        assert_equal 0 [r client unblock $id]
        r rpush bl kept
        after 50
        assert_equal {kept} [r lrange bl 0 -1]
        $rd close
    }

    test {INFO blocked_clients counts waiters} {
        r del a1 a2
        set r1 [blocked_client blpop a1 0]
        set r2 [blocked_client blmpop 0 2 a1 a2 left]
        r rpush a2 x
        assert_equal {a2 x} [$r2 read]
        wait_for_blocked_clients_count 1
        r rpush a1 y
        assert_equal {a1 y} [$r1 read]
        wait_for_blocked_clients_count 0
        $r1 close
        $r2 close
    }

    # --- many waiters on several workers -------------------------------------------------------------

    test {Many waiters on many connections (both workers) each get one element} {
        r del q
        set n 12
        set clients {}
        for {set i 1} {$i <= $n} {incr i} {
            lappend clients [blocked_client blpop q 0]
        }
        set pusher [redis_client]
        for {set i 1} {$i <= $n} {incr i} {$pusher rpush q v$i}
        set i 1
        foreach rd $clients {
            assert_equal [list q v$i] [$rd read]
            incr i
        }
        foreach rd $clients {$rd close}
        $pusher close
        wait_for_blocked_clients_count 0
    }

    test {Waiters on different keys are served by pushes from other connections} {
        set n 8
        set clients {}
        for {set i 1} {$i <= $n} {incr i} {
            r del wk$i
            lappend clients [blocked_client brpop wk$i 0]
        }
        set pushers {}
        for {set i 1} {$i <= 4} {incr i} {lappend pushers [redis_client]}
        for {set i $n} {$i >= 1} {incr i -1} {
            [lindex $pushers [expr {$i % 4}]] lpush wk$i x$i
        }
        for {set i 1} {$i <= $n} {incr i} {
            assert_equal [list wk$i x$i] [[lindex $clients [expr {$i - 1}]] read]
        }
        foreach c [concat $clients $pushers] {$c close}
    }

    test {Producers and consumers on several connections lose and duplicate nothing} {
        r del pc
        set consumers {}
        for {set i 0} {$i < 6} {incr i} {lappend consumers [redis_deferring_client]}
        set producers {}
        for {set i 0} {$i < 3} {incr i} {lappend producers [redis_client]}
        foreach c $consumers {$c blpop pc 1}
        wait_for_blocked_clients_count 6
        set total 300
        for {set i 0} {$i < $total} {incr i} {
            [lindex $producers [expr {$i % 3}]] rpush pc item$i
        }
        set got {}
        set outstanding [llength $consumers]
        array set busy {}
        foreach c $consumers {set busy($c) 1}
        while {$outstanding > 0} {
            foreach c $consumers {
                if {!$busy($c)} continue
                set rep [$c read]
                set busy($c) 0
                incr outstanding -1
                if {$rep ne {}} {
                    lappend got [lindex $rep 1]
                    $c blpop pc 1
                    set busy($c) 1
                    incr outstanding
                }
            }
        }
        assert_equal $total [llength $got]
        assert_equal $total [llength [lsort -unique $got]]
        assert_equal 0 [r exists pc]
        foreach c [concat $consumers $producers] {$c close}
    }
}
