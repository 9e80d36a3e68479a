# Sets: the whole Redis 7.0 set family, both encodings (intset and
# hashtable; Goblin's internal packed form for small hashtable sets is
# exercised too, it answers "hashtable"), conversions, the multi-key
# operations and their STORE forms, SSCAN under growth, RESP3 set replies,
# keyspace notifications, uniformity of SRANDMEMBER and SPOP (chi-square),
# and SMOVE between clients on different workers (--cores 2).

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}

if {[is_goblin]} {
    set ::set_server_args {--cores 2}
} else {
    set ::set_server_args {}
}

# SADD key with n members <prefix><i>, in batches.
proc fill_set {key n {prefix m} {first 0}} {
    set args {}
    for {set i $first} {$i < $first + $n} {incr i} {
        lappend args $prefix$i
        if {[llength $args] >= 2000} {
            r sadd $key {*}$args
            set args {}
        }
    }
    if {[llength $args]} {r sadd $key {*}$args}
}

# Every member of a set through SSCAN (COUNT n), as a sorted list.
proc sscan_all {key {count 10} {match ""}} {
    set cursor 0
    set seen {}
    set rounds 0
    while 1 {
        set cmd [list sscan $key $cursor count $count]
        if {$match ne ""} {lappend cmd match $match}
        lassign [r {*}$cmd] cursor items
        foreach m $items {dict set seen $m 1}
        incr rounds
        if {$cursor eq "0"} break
        if {$rounds > 1000000} {error "SSCAN did not terminate"}
    }
    return [lsort [dict keys $seen]]
}

# Chi-square statistic of observed counts against a uniform expectation.
proc chi_square {counts total} {
    set cells [llength $counts]
    set e [expr {double($total) / $cells}]
    set chi 0.0
    foreach o $counts {set chi [expr {$chi + ($o - $e) * ($o - $e) / $e}]}
    return $chi
}

# A generous bound for `cells` cells: the mean (cells-1) plus 8 standard
# deviations (sqrt(2(cells-1))). A biased picker (say, one member twice as
# likely) lands far above it at these sample sizes.
proc chi_bound {cells} {
    set k [expr {$cells - 1}]
    return [expr {$k + 8 * sqrt(2.0 * $k)}]
}

start_server [list tags {set} args $::set_server_args] {

    # --- SADD / SREM / encodings ---------------------------------------------------

    test {SADD creates an intset and counts new members} {
        r del s
        assert_equal 3 [r sadd s 1 2 3]
        assert_equal 1 [r sadd s 3 4]
        assert_equal 0 [r sadd s 1 1 1]
        assert_equal set [r type s]
        assert_encoding intset s
        assert_equal 4 [r scard s]
        assert_equal {1 2 3 4} [r smembers s]
    }

    test {SADD a non-integer converts to hashtable} {
        r del s
        r sadd s 1 2 3
        assert_equal 1 [r sadd s a]
        assert_encoding hashtable s
        assert_equal {1 2 3 a} [lsort [r smembers s]]
        # removing the word does not bring the intset back
        r srem s a
        assert_encoding hashtable s
        r del s
        r sadd s a 1
        assert_encoding hashtable s
    }

    test {Only canonical int64 members make an intset} {
        foreach m {007 +1 -0 " 1" "1 " 1.0 9223372036854775808 -9223372036854775809 0x10 ""} {
            r del s
            r sadd s $m
            assert_encoding hashtable s
            assert_equal 1 [r sismember s $m]
        }
        r del s
        r sadd s 0 -1 9223372036854775807 -9223372036854775808
        assert_encoding intset s
        assert_equal {-9223372036854775808 -1 0 9223372036854775807} [r smembers s]
        assert_equal 0 [r sismember s 00]
        assert_equal 0 [r sismember s -0]
        assert_equal 1 [r sismember s -1]
    }

    test {An intset converts past set-max-intset-entries} {
        r del s
        fill_set s 512 ""
        assert_encoding intset s
        r sadd s 512
        assert_encoding hashtable s
        assert_equal 513 [r scard s]
        r config set set-max-intset-entries 5
        r del s
        r sadd s 1 2 3 4 5
        assert_encoding intset s
        r sadd s 6
        assert_encoding hashtable s
        # a lowered limit converts only on an add that adds
        r config set set-max-intset-entries 512
        r del s
        r sadd s 1 2 3 4 5 6 7
        r config set set-max-intset-entries 3
        r sadd s 1
        assert_encoding intset s
        r sadd s 8
        assert_encoding hashtable s
        r config set set-max-intset-entries 0
        r del s
        r sadd s 1
        assert_encoding hashtable s
        r config set set-max-intset-entries 512
    }

    test {SADD with many short and some long members (packed and indexed forms)} {
        r del s
        fill_set s 60 w
        assert_encoding hashtable s
        r sadd s [string repeat x 100]
        fill_set s 100 w 60
        assert_equal 161 [r scard s]
        assert_equal 1 [r sismember s w159]
        assert_equal 1 [r sismember s [string repeat x 100]]
        assert_equal 0 [r sismember s w160]
    }

    test {SADD binary members} {
        r del s
        assert_equal 3 [r sadd s "a\x00b" "\xff\r\n" ""]
        assert_equal 1 [r sismember s "a\x00b"]
        assert_equal 1 [r sismember s ""]
        assert_equal 0 [r sismember s "a"]
        assert_equal [lsort [list "a\x00b" "\xff\r\n" ""]] [lsort [r smembers s]]
    }

    test {SREM counts removed members and deletes an emptied set} {
        r del s
        r sadd s a b c 1
        assert_equal 2 [r srem s a x b y]
        assert_equal 0 [r srem s a]
        assert_equal 0 [r srem nokey a]
        assert_equal 2 [r srem s c 1 c]
        assert_equal 0 [r exists s]
        r sadd s 1 2 3
        assert_equal 1 [r srem s 2]
        assert_encoding intset s
        assert_equal 2 [r srem s 1 3 4]
        assert_equal 0 [r exists s]
    }

    test {SADD and SREM arity} {
        assert_error "ERR wrong number of arguments for 'sadd' command" {r sadd s}
        assert_error "ERR wrong number of arguments for 'srem' command" {r srem s}
    }

    # --- reads -------------------------------------------------------------------

    test {SMEMBERS, SISMEMBER, SMISMEMBER, SCARD} {
        r del s nokey
        r sadd s a b 1
        assert_equal {1 a b} [lsort [r smembers s]]
        assert_equal "*0\r\n" [r rawcall smembers nokey]
        assert_equal 1 [r sismember s a]
        assert_equal 0 [r sismember s z]
        assert_equal 0 [r sismember nokey a]
        assert_equal {1 0 1 1} [r smismember s a z b 1]
        assert_equal "*2\r\n:0\r\n:0\r\n" [r rawcall smismember nokey a b]
        assert_equal 3 [r scard s]
        assert_equal 0 [r scard nokey]
        assert_error "ERR wrong number of arguments for 'smismember' command" {r smismember s}
    }

    test {Set replies in RESP3} {
        set c [redis_client]
        $c hello 3
        $c del s nokey
        $c sadd s 3 1 2
        assert_equal "~3\r\n\$1\r\n1\r\n\$1\r\n2\r\n\$1\r\n3\r\n" [$c rawcall smembers s]
        assert_equal "~0\r\n" [$c rawcall smembers nokey]
        assert_equal "~3\r\n\$1\r\n1\r\n\$1\r\n2\r\n\$1\r\n3\r\n" [$c rawcall sunion s nokey]
        assert_equal "~3\r\n\$1\r\n1\r\n\$1\r\n2\r\n\$1\r\n3\r\n" [$c rawcall sinter s]
        assert_equal "~0\r\n" [$c rawcall sinter s nokey]
        assert_equal "~3\r\n\$1\r\n1\r\n\$1\r\n2\r\n\$1\r\n3\r\n" [$c rawcall sdiff s nokey]
        assert_equal "~0\r\n" [$c rawcall sdiff nokey s]
        assert_equal "*2\r\n:1\r\n:0\r\n" [$c rawcall smismember s 1 9]
        assert_equal "*2\r\n\$1\r\n0\r\n*3\r\n\$1\r\n1\r\n\$1\r\n2\r\n\$1\r\n3\r\n" [$c rawcall sscan s 0]
        # SPOP with a count is a set, SRANDMEMBER with a count an array
        assert_equal "~0\r\n" [$c rawcall spop nokey 3]
        assert_equal "~0\r\n" [$c rawcall spop s 0]
        assert_equal "*0\r\n" [$c rawcall srandmember nokey 3]
        assert_equal "*3\r\n\$1\r\n1\r\n\$1\r\n2\r\n\$1\r\n3\r\n" [$c rawcall srandmember s 5]
        assert_equal "_\r\n" [$c rawcall spop nokey]
        assert_equal "_\r\n" [$c rawcall srandmember nokey]
        assert_equal "~3\r\n\$1\r\n1\r\n\$1\r\n2\r\n\$1\r\n3\r\n" [$c rawcall spop s 3]
        assert_equal 0 [$c exists s]
        $c close
    }

    # --- SPOP -------------------------------------------------------------------------

    foreach {enc n} {intset 100 hashtable 30 hashtable 3000} {
        test "SPOP pops distinct members until the set is gone ($enc, $n)" {
            r del s
            if {$enc eq "intset"} {fill_set s $n ""} else {fill_set s $n}
            assert_encoding $enc s
            set seen {}
            for {set i 0} {$i < $n} {incr i} {
                set m [r spop s]
                assert {![dict exists $seen $m]}
                dict set seen $m 1
            }
            assert_equal 0 [r exists s]
            assert_equal "\$-1\r\n" [r rawcall spop s]
        }

        test "SPOP with a count ($enc, $n)" {
            r del s
            if {$enc eq "intset"} {fill_set s $n ""} else {fill_set s $n}
            set all [lsort [r smembers s]]
            set got {}
            foreach k [list 1 [expr {$n / 3}] [expr {$n / 2}]] {
                set p [r spop s $k]
                assert_equal $k [llength $p]
                lappend got {*}$p
            }
            assert_equal [llength $got] [llength [lsort -unique $got]]
            set rest [r smembers s]
            assert_equal $all [lsort [concat $got $rest]]
            assert_encoding $enc s
            # the whole rest: the key goes
            set p [r spop s [llength $rest]]
            assert_equal [lsort $rest] [lsort $p]
            assert_equal 0 [r exists s]
        }
    }

    test {SPOP with a count that keeps few members (large set)} {
        r del s
        fill_set s 2000
        set p [r spop s 1990]
        assert_equal 1990 [llength $p]
        assert_equal 1990 [llength [lsort -unique $p]]
        set rest [r smembers s]
        assert_equal 10 [llength $rest]
        assert_equal 2000 [llength [lsort -unique [concat $p $rest]]]
        assert_encoding hashtable s
        r sadd s 1 2 3
        assert_encoding hashtable s
    }

    test {SPOP count larger than the set returns it all} {
        r del s
        r sadd s a b c
        assert_equal {a b c} [lsort [r spop s 100]]
        assert_equal 0 [r exists s]
        r sadd s 1 2
        assert_equal {1 2} [r spop s 9223372036854775807]
    }

    test {SPOP errors} {
        r del s
        r sadd s a b
        assert_error "ERR value is out of range, must be positive" {r spop s -1}
        assert_error "ERR value is out of range, must be positive" {r spop s 1.5}
        assert_error "ERR value is out of range, must be positive" {r spop s x}
        assert_error "ERR value is out of range, must be positive" {r spop s 9223372036854775808}
        assert_error "ERR syntax error" {r spop s 1 2}
        assert_equal "*0\r\n" [r rawcall spop s 0]
        assert_equal "*0\r\n" [r rawcall spop nokey 0]
        assert_equal "*0\r\n" [r rawcall spop nokey 3]
        r set str x
        assert_error "ERR value is out of range, must be positive" {r spop str -1}
        assert_error $::WRONGTYPE {r spop str 1}
        assert_error $::WRONGTYPE {r spop str}
        assert_equal 2 [r scard s]
    }

    # --- SRANDMEMBER --------------------------------------------------------------------

    foreach {enc n} {intset 50 hashtable 50 hashtable 1000} {
        test "SRANDMEMBER with every kind of count ($enc, $n)" {
            r del s
            if {$enc eq "intset"} {fill_set s $n ""} else {fill_set s $n}
            assert_encoding $enc s
            set all [lsort [r smembers s]]
            foreach k [list 1 2 [expr {$n / 10}] [expr {$n / 3}] [expr {$n / 2}] [expr {$n - 1}]] {
                set p [r srandmember s $k]
                assert_equal $k [llength $p] "count $k"
                assert_equal $k [llength [lsort -unique $p]] "count $k: distinct"
                foreach m $p {assert {[lsearch -sorted $all $m] >= 0}}
            }
            assert_equal $all [lsort [r srandmember s $n]]
            assert_equal $all [lsort [r srandmember s [expr {$n * 2}]]]
            set p [r srandmember s [expr {-$n * 3}]]
            assert_equal [expr {$n * 3}] [llength $p]
            foreach m $p {assert {[lsearch -sorted $all $m] >= 0}}
            # reads only
            assert_equal $n [r scard s]
            assert {[lsearch -sorted $all [r srandmember s]] >= 0}
        }
    }

    test {SRANDMEMBER of a one-member set and of a missing key} {
        r del s nokey
        r sadd s only
        assert_equal only [r srandmember s]
        assert_equal {only only only} [r srandmember s -3]
        assert_equal {only} [r srandmember s 3]
        assert_equal "\$-1\r\n" [r rawcall srandmember nokey]
        assert_equal "*0\r\n" [r rawcall srandmember nokey 3]
        assert_equal "*0\r\n" [r rawcall srandmember nokey -3]
        assert_equal "*0\r\n" [r rawcall srandmember s 0]
    }

    test {SRANDMEMBER errors} {
        r del s
        r sadd s a
        assert_error "ERR value is not an integer or out of range" {r srandmember s x}
        assert_error "ERR value is not an integer or out of range" {r srandmember s 1.5}
        assert_error "ERR value is not an integer or out of range" {r srandmember s 9223372036854775808}
        assert_error "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807" \
            {r srandmember s -9223372036854775808}
        assert_error "ERR syntax error" {r srandmember s 1 2}
        assert_error "ERR syntax error" {r srandmember s a b}
        r set str x
        assert_error "ERR value is not an integer or out of range" {r srandmember str x}
        assert_error $::WRONGTYPE {r srandmember str 1}
        assert_error $::WRONGTYPE {r srandmember str 0}
        assert_error $::WRONGTYPE {r srandmember str}
        assert_equal {a} [r srandmember s 9223372036854775807]
    }

    # --- uniformity (chi-square) ----------------------------------------------------------

    # Uniform picks are a Goblin guarantee. redis-server meets it
    # for intsets only: its hashtable picks (dictGetFairRandomKey) fail
    # these bounds, so the hashtable cases are goblin_only.
    foreach {enc n} {intset 40 hashtable 40 hashtable 300} {
        set utags [expr {$enc eq "hashtable" ? "goblin_only" : ""}]
        test "SRANDMEMBER is uniform ($enc, $n members)" {
            r del s
            if {$enc eq "intset"} {fill_set s $n ""} else {fill_set s $n}
            assert_encoding $enc s
            set draws [expr {$n * 200}]
            # repeated picks (negative count)
            set counts {}
            foreach m [r smembers s] {dict set counts $m 0}
            foreach m [r srandmember s -$draws] {dict incr counts $m}
            set chi [chi_square [dict values $counts] $draws]
            assert_lessthan $chi [chi_bound $n]
            # distinct picks (positive count): each member equally often
            set counts {}
            foreach m [r smembers s] {dict set counts $m 0}
            set k [expr {$n / 4}]
            set reps [expr {$draws / $k}]
            set total 0
            for {set i 0} {$i < $reps} {incr i} {
                foreach m [r srandmember s $k] {dict incr counts $m; incr total}
            }
            set chi [chi_square [dict values $counts] $total]
            assert_lessthan $chi [chi_bound $n]
            # single picks
            set counts {}
            foreach m [r smembers s] {dict set counts $m 0}
            set single [expr {$n * 50}]
            set buf [string repeat [::resp::encode [list srandmember s]] $single]
            set c [redis_client]
            $c write $buf
            $c flush
            for {set i 0} {$i < $single} {incr i} {dict incr counts [$c read]}
            $c close
            set chi [chi_square [dict values $counts] $single]
            assert_lessthan $chi [chi_bound $n]
        } $utags
    }

    foreach {enc n} {intset 20 hashtable 20} {
        set utags [expr {$enc eq "hashtable" ? "goblin_only" : ""}]
        test "SPOP is uniform ($enc, $n members)" {
            set members {}
            for {set i 0} {$i < $n} {incr i} {
                lappend members [expr {$enc eq "intset" ? $i : "m$i"}]
            }
            set trials [expr {$n * 150}]
            set one "[::resp::encode [concat sadd s $members]][::resp::encode {spop s}][::resp::encode {del s}]"
            set c [redis_client]
            $c del s
            $c write [string repeat $one $trials]
            $c flush
            set counts {}
            foreach m $members {dict set counts $m 0}
            for {set i 0} {$i < $trials} {incr i} {
                $c read
                dict incr counts [$c read]
                $c read
            }
            $c close
            set chi [chi_square [dict values $counts] $trials]
            assert_lessthan $chi [chi_bound $n]
            # SPOP with a count: each member equally likely to be in the subset
            set counts {}
            foreach m $members {dict set counts $m 0}
            set one "[::resp::encode [concat sadd s $members]][::resp::encode {spop s 5}][::resp::encode {del s}]"
            set c [redis_client]
            $c write [string repeat $one $trials]
            $c flush
            set total 0
            for {set i 0} {$i < $trials} {incr i} {
                $c read
                foreach m [$c read] {dict incr counts $m; incr total}
                $c read
            }
            $c close
            set chi [chi_square [dict values $counts] $total]
            assert_lessthan $chi [chi_bound $n]
        } $utags
    }

    # --- SMOVE ----------------------------------------------------------------------

    test {SMOVE moves a member and creates the destination} {
        r del src dst
        r sadd src 1 2 a
        assert_equal 1 [r smove src dst 1]
        assert_equal {2 a} [lsort [r smembers src]]
        assert_equal {1} [r smembers dst]
        assert_encoding intset dst
        assert_equal 1 [r smove src dst a]
        assert_encoding hashtable dst
        assert_equal 0 [r smove src dst nosuch]
        # a member already in the destination still moves (1), once
        r sadd src 1
        assert_equal 1 [r smove src dst 1]
        assert_equal {1 a} [lsort [r smembers dst]]
        # the emptied source goes
        assert_equal 1 [r smove src dst 2]
        assert_equal 0 [r exists src]
        assert_equal {1 2 a} [lsort [r smembers dst]]
    }

    test {SMOVE corner cases} {
        r del src dst str
        r set str x
        r sadd src a
        # a missing source answers 0 whatever the destination
        assert_equal 0 [r smove nokey str a]
        assert_equal 0 [r smove nokey dst a]
        assert_equal 0 [r exists dst]
        assert_error $::WRONGTYPE {r smove str src a}
        assert_error $::WRONGTYPE {r smove src str a}
        # same key: 1 when the member is there, nothing changes
        assert_equal 1 [r smove src src a]
        assert_equal 0 [r smove src src b]
        assert_equal {a} [r smembers src]
        # a member missing from the source does not create the destination
        assert_equal 0 [r smove src dst b]
        assert_equal 0 [r exists dst]
        assert_error "ERR wrong number of arguments for 'smove' command" {r smove src dst}
    }

    # --- SINTER / SUNION / SDIFF and their STORE forms ----------------------------------

    test {SINTER, SUNION, SDIFF of mixed encodings} {
        r del a b c
        r sadd a 1 2 3 4 x
        r sadd b 2 3 4 5 y
        r sadd c 3 4 5 6
        assert_equal {3 4} [lsort [r sinter a b c]]
        assert_equal {1 2 3 4 5 6 x y} [lsort [r sunion a b c]]
        assert_equal {1 x} [lsort [r sdiff a b c]]
        assert_equal {1 2 x} [lsort [r sdiff a c]]
        assert_equal {} [r sdiff a a]
        assert_equal {1 2 3 4 x} [lsort [r sinter a a]]
        assert_equal {3 4 5 6} [lsort [r sinter c]]
        assert_equal {} [r sinter a nokey]
        assert_equal {} [r sdiff nokey a]
        assert_equal {1 2 3 4 x} [lsort [r sdiff a nokey]]
        assert_equal {3 4 5 6} [lsort [r sunion nokey c]]
    }

    test {Results that are small integer sets come back in ascending order} {
        r del a b
        r sadd a 5 3 9 1
        r sadd b 9 8 7
        assert_equal {1 3 5 7 8 9} [r sunion a b]
        assert_equal {1 3 5} [r sdiff a b]
    }

    test {Multi-key errors: WRONGTYPE anywhere, even after a missing key} {
        r del a str
        r sadd a 1
        r set str x
        foreach cmd {sinter sunion sdiff} {
            assert_error $::WRONGTYPE {r $cmd a str}
            assert_error $::WRONGTYPE {r $cmd nokey str}
            assert_error $::WRONGTYPE {r $cmd str nokey}
            assert_error $::WRONGTYPE {r ${cmd}store d nokey str}
        }
        assert_error $::WRONGTYPE {r sintercard 2 nokey str}
    }

    test {*STORE writes the result, replacing any type, dropping the TTL} {
        r del a b d
        r sadd a 1 2 3 x
        r sadd b 2 3 4
        r set d string
        r expire d 1000
        assert_equal 2 [r sinterstore d a b]
        assert_equal {2 3} [r smembers d]
        assert_encoding intset d
        assert_equal -1 [r ttl d]
        assert_equal 5 [r sunionstore d a b]
        assert_encoding hashtable d
        assert_equal 2 [r sdiffstore d a b]
        assert_equal {1 x} [lsort [r smembers d]]
        # the destination may be a source
        assert_equal 5 [r sunionstore a a b d]
        assert_equal {1 2 3 4 x} [lsort [r smembers a]]
    }

    test {*STORE of an empty result deletes the destination} {
        r del a b d
        r sadd a 1
        r sadd b 2
        foreach {cmd args} {sinterstore {a b} sinterstore {a nokey} sdiffstore {a a} sdiffstore {nokey a} sunionstore {nokey nokey2}} {
            r set d x
            assert_equal 0 [r $cmd d {*}$args]
            assert_equal 0 [r exists d]
        }
    }

    test {*STORE results follow set-max-intset-entries} {
        r del a b d
        fill_set a 600 ""
        r sadd b 1
        assert_equal 599 [r sdiffstore d a b]
        assert_encoding hashtable d
        assert_equal 1 [r sinterstore d a b]
        assert_encoding intset d
        r del a
        r sadd a 1 2 3
        assert_equal 3 [r sunionstore d a]
        assert_encoding intset d
    }

    test {SDIFFSTORE encoding follows Redis's choice of algorithm} {
        # Walking the first set is chosen when |first| * sets / 2 <= the
        # sum of the sizes; otherwise the first set is copied and the others
        # removed, which passes the intset limit on the way.
        r config set set-max-intset-entries 7
        r del a b d
        r sadd a 1 2 3 4 5 6 7 8 9 10
        r sadd b 1 2 3 4
        assert_equal 6 [r sdiffstore d a b b b b b]
        assert_encoding intset d
        assert_equal 6 [r sdiffstore d a b b b b b b]
        assert_encoding hashtable d
        r config set set-max-intset-entries 512
    }

    test {SINTERCARD} {
        r del a b c
        r sadd a 1 2 3 4 5 x
        r sadd b 2 3 4 5 6 x
        r sadd c 3 4 5 x
        assert_equal 4 [r sintercard 3 a b c]
        assert_equal 2 [r sintercard 3 a b c limit 2]
        assert_equal 4 [r sintercard 3 a b c limit 0]
        assert_equal 4 [r sintercard 3 a b c LIMIT 100]
        assert_equal 0 [r sintercard 2 a nokey]
        assert_equal 6 [r sintercard 1 a]
        assert_equal 6 [r sintercard 2 a a]
        assert_equal 3 [r sintercard 1 a limit 3 limit 0 limit 3]
    }

    test {SINTERCARD errors} {
        r del a
        r sadd a 1
        assert_error "ERR numkeys should be greater than 0" {r sintercard 0 a}
        assert_error "ERR numkeys should be greater than 0" {r sintercard -1 a}
        assert_error "ERR numkeys should be greater than 0" {r sintercard x a}
        assert_error "ERR Number of keys can't be greater than number of args" {r sintercard 2 a}
        assert_error "ERR Number of keys can't be greater than number of args" {r sintercard 9223372036854775807 a}
        assert_error "ERR syntax error" {r sintercard 1 a limit}
        assert_error "ERR syntax error" {r sintercard 1 a foo 1}
        assert_error "ERR LIMIT can't be negative" {r sintercard 1 a limit -1}
        assert_error "ERR LIMIT can't be negative" {r sintercard 1 a limit x}
        assert_error "ERR wrong number of arguments for 'sintercard' command" {r sintercard 1}
    }

    test {Big operands: SINTER/SUNION/SDIFF of hashtable sets} {
        r del a b d
        fill_set a 5000
        fill_set b 5000 m 2500
        assert_equal 2500 [llength [r sinter a b]]
        assert_equal 7500 [r sunionstore d a b]
        assert_equal 2500 [r sdiffstore d a b]
        assert_equal 0 [r sismember d m2500]
        assert_equal 1 [r sismember d m2499]
        assert_equal 2500 [r sintercard 2 a b]
        assert_equal 10 [r sintercard 2 a b limit 10]
    }

    # --- SSCAN ---------------------------------------------------------------------

    test {SSCAN of an intset returns everything with cursor 0} {
        r del s
        r sadd s 3 1 2
        assert_equal {0 {1 2 3}} [r sscan s 0]
        assert_equal {0 {1 2 3}} [r sscan s 0 count 1]
        assert_equal {0 2} [r sscan s 0 match 2]
    }

    test {SSCAN of a missing key} {
        r del nokey
        assert_equal "*2\r\n\$1\r\n0\r\n*0\r\n" [r rawcall sscan nokey 0]
        assert_equal "*2\r\n\$1\r\n0\r\n*0\r\n" [r rawcall sscan nokey 0 count 0]
    }

    foreach {enc n} {intset 400 hashtable 40 hashtable 5000} {
        test "SSCAN returns every member ($enc, $n)" {
            r del s
            if {$enc eq "intset"} {fill_set s $n ""} else {fill_set s $n}
            assert_encoding $enc s
            set want [lsort [r smembers s]]
            foreach count {1 10 100 1000} {
                assert_equal $want [sscan_all s $count] "COUNT $count"
            }
            set m [sscan_all s 20 *1*]
            foreach x $m {assert_match *1* $x}
            set w 0
            foreach x $want {if {[string match *1* $x]} {incr w}}
            assert_equal $w [llength $m]
        }
    }

    test {SSCAN under growth and deletes reports every original member} {
        r del s
        fill_set s 2000
        set cursor 0
        set seen {}
        set next 2000
        while 1 {
            lassign [r sscan s $cursor count 50] cursor items
            foreach m $items {dict set seen $m 1}
            if {$next < 14000} {
                fill_set s 200 m $next
                for {set k 0} {$k < 30} {incr k} {r srem s m[expr {$next + $k}]}
                incr next 200
            }
            if {$cursor eq "0"} break
        }
        for {set i 0} {$i < 2000} {incr i} {
            if {![dict exists $seen m$i]} {fail "m$i was never reported"}
        }
    }

    test {SSCAN errors} {
        r del s
        r sadd s a
        assert_error "ERR invalid cursor" {r sscan s abc}
        assert_error "ERR syntax error" {r sscan s 0 count 0}
        assert_error "ERR value is not an integer or out of range" {r sscan s 0 count x}
        assert_error "ERR syntax error" {r sscan s 0 count}
        assert_error "ERR syntax error" {r sscan s 0 type set}
        assert_error "ERR syntax error" {r sscan s 0 foo bar}
        r set str x
        assert_error "ERR invalid cursor" {r sscan str x}
        assert_error $::WRONGTYPE {r sscan str 0}
    }

    # --- WRONGTYPE everywhere -----------------------------------------------------------

    test {Set commands on a key of another type} {
        r del str
        r set str x
        foreach cmd {
            {sadd str a} {srem str a} {smembers str} {sismember str a} {smismember str a}
            {scard str} {spop str} {spop str 2} {srandmember str} {srandmember str 2}
            {sinter str} {sunion str} {sdiff str} {sintercard 1 str} {sscan str 0}
        } {
            assert_error $::WRONGTYPE {r {*}$cmd}
        }
        assert_equal x [r get str]
        r del l
        r rpush l a
        assert_error $::WRONGTYPE {r sadd l a}
    }

    # --- copies, renames, transactions, notifications -----------------------------------

    foreach {enc n} {intset 10 hashtable 10 hashtable 1000} {
        test "COPY of a set is deep ($enc, $n)" {
            r del s s2
            if {$enc eq "intset"} {fill_set s $n ""} else {fill_set s $n}
            assert_equal 1 [r copy s s2]
            assert_encoding $enc s2
            set m [lindex [r smembers s] 0]
            r srem s2 $m
            r sadd s2 new
            assert_equal 1 [r sismember s $m]
            assert_equal 0 [r sismember s new]
            assert_equal $n [r scard s]
            assert_equal $n [r scard s2]
        }
    }

    test {WATCH sees SADD, SREM, SPOP, SMOVE and *STORE} {
        r del s d
        r sadd s a b c
        foreach change {{sadd s z} {srem s a} {spop s} {smove s d b} {sunionstore s s d}} {
            r sadd s a b c
            r watch s
            r {*}$change
            r multi
            r ping
            assert_equal {} [r exec] $change
        }
        # a write that changes nothing does not touch the key
        r watch s
        r sadd s c
        r srem s nosuch
        r multi
        r ping
        assert_equal {PONG} [r exec]
    }

    test {Keyspace notifications of the set commands} {
        needs_feature config:notify-keyspace-events
        r del s s2 d
        r config set notify-keyspace-events KEsg
        set sub [redis_deferring_client]
        $sub psubscribe __keyevent@*
        $sub read
        r sadd s a b c d
        r sadd s a
        r srem s a
        r srem s nosuch
        r spop s
        r smove s s2 [lindex [r smembers s] 0]
        r sinterstore d s s2
        r sunionstore d s s2
        r sdiffstore d s s2
        r sinterstore d nokey
        r spop s 10
        # No event for the SADD and SREM that change nothing, nor for the
        # SINTERSTORE of disjoint sets into an absent key; SMOVE reports srem
        # then sadd; SPOP of everything reports spop, then del.
        set want {}
        foreach e {sadd srem spop srem sadd sunionstore sdiffstore del spop del} {
            lappend want __keyevent@0__:$e
        }
        set events {}
        foreach e $want {lappend events [lindex [$sub read] 2]}
        assert_equal $want $events
        r config set notify-keyspace-events ""
        $sub close
    }

    # --- concurrency ---------------------------------------------------------------

    test {SMOVE back and forth from concurrent clients conserves members} {
        r del a b
        fill_set a 200
        set clients {}
        for {set i 0} {$i < 4} {incr i} {lappend clients [redis_deferring_client]}
        set k 0
        foreach c $clients {
            set buf ""
            for {set j 0} {$j < 500} {incr j} {
                set m m[expr {($j * 7 + $k * 13) % 200}]
                if {($j + $k) % 2} {
                    append buf [::resp::encode [list smove a b $m]]
                } else {
                    append buf [::resp::encode [list smove b a $m]]
                }
            }
            $c write $buf
            incr k
        }
        foreach c $clients {$c flush}
        foreach c $clients {for {set j 0} {$j < 500} {incr j} {$c read}}
        foreach c $clients {$c close}
        assert_equal 200 [expr {[r scard a] + [r scard b]}]
        assert_equal 200 [llength [lsort -unique [concat [r smembers a] [r smembers b]]]]
    }

    test {SPOP from concurrent clients never returns a member twice} {
        r del s
        fill_set s 4000
        set clients {}
        for {set i 0} {$i < 4} {incr i} {lappend clients [redis_deferring_client]}
        foreach c $clients {
            $c write [string repeat [::resp::encode {spop s 3}] 300]
            $c flush
        }
        set all {}
        foreach c $clients {for {set j 0} {$j < 300} {incr j} {lappend all {*}[$c read]}}
        foreach c $clients {$c close}
        assert_equal 3600 [llength $all]
        assert_equal 3600 [llength [lsort -unique $all]]
        assert_equal 400 [r scard s]
    }

    # --- Goblin specifics -----------------------------------------------------------

    test {MEMORY USAGE counts the arena and the index} {
        r del s
        fill_set s 20000
        set usage [r memory usage s]
        # ~6 B members, a 1 B prefix and 5-10 B of index: far below Redis's ~60 B
        assert_range $usage [expr {20000 * 8}] [expr {20000 * 30}]
        r del s
        fill_set s 100 ""
        assert_range [r memory usage s] 800 2000
    } {goblin_only}
}
