# Commands of a thousand elements on collections past the size where a
# lookup misses the caches (Goblin prefetches the elements ahead of each
# one there): HSET, SADD and ZADD with repeated and existing elements,
# HMGET, SMISMEMBER and ZMSCORE, then HDEL, SREM and ZREM with missing
# ones. Every reply and the final contents are checked against a model.

proc bw_field {i} { format f%07d $i }

start_server {tags {hash set zset}} {
    test {Thousand-element writes and removals on big collections answer as the model} {
        foreach k {bw:h bw:s bw:z} { r del $k }
        set h [dict create]
        set s [dict create]
        set z [dict create]
        set seed 1
        for {set round 0} {$round < 45} {incr round} {
            set hargs {}
            set sargs {}
            set zargs {}
            set hnew 0
            set snew 0
            set znew 0
            set seen [dict create]
            for {set i 0} {$i < 1000} {incr i} {
                set seed [expr {($seed * 1103515245 + 12345) % 2147483648}]
                # Mostly new elements, some already there, some repeated
                # within the command (the last value or score wins).
                if {$i % 50 == 49} {
                    set n [lindex $hargs end-1]
                    set n [string range $n 1 end]
                    scan $n %d n
                } elseif {$i % 7 == 0} {
                    set n [expr {$seed % ($round * 1000 + 1)}]
                } else {
                    set n [expr {$round * 1000 + $i}]
                }
                set f [bw_field $n]
                if {![dict exists $h $f] && ![dict exists $seen $f]} {
                    incr hnew
                    incr snew
                    incr znew
                }
                dict set seen $f 1
                lappend hargs $f v$round.$i
                lappend sargs $f
                lappend zargs [expr {$seed % 100000}] $f
                dict set h $f v$round.$i
                dict set s $f 1
                dict set z $f [expr {$seed % 100000}]
            }
            assert_equal $hnew [r hset bw:h {*}$hargs]
            assert_equal $snew [r sadd bw:s {*}$sargs]
            assert_equal $znew [r zadd bw:z {*}$zargs]
        }
        assert_equal [dict size $h] [r hlen bw:h]
        assert_equal [dict size $s] [r scard bw:s]
        assert_equal [dict size $z] [r zcard bw:z]
        # Reads of a thousand elements, a third of them missing.
        set probe {}
        for {set i 0} {$i < 1000} {incr i} { lappend probe [bw_field [expr {$i * 67}]] }
        set hwant {}
        set swant {}
        set zwant {}
        foreach f $probe {
            lappend hwant [expr {[dict exists $h $f] ? [dict get $h $f] : ""}]
            lappend swant [dict exists $s $f]
            lappend zwant [expr {[dict exists $z $f] ? [dict get $z $f] : ""}]
        }
        assert_equal $hwant [r hmget bw:h {*}$probe]
        assert_equal $swant [r smismember bw:s {*}$probe]
        assert_equal $zwant [r zmscore bw:z {*}$probe]
        # Removals of a thousand, with missing and repeated elements.
        set gone 0
        set seen [dict create]
        set del {}
        foreach f $probe {
            lappend del $f
            if {[dict exists $h $f] && ![dict exists $seen $f]} { incr gone }
            dict set seen $f 1
        }
        lappend del [lindex $probe 3] nosuch
        assert_equal $gone [r hdel bw:h {*}$del]
        assert_equal $gone [r srem bw:s {*}$del]
        assert_equal $gone [r zrem bw:z {*}$del]
        foreach f $probe {
            dict unset h $f
            dict unset s $f
            dict unset z $f
        }
        assert_equal [dict size $h] [r hlen bw:h]
        assert_equal [dict size $s] [r scard bw:s]
        assert_equal [dict size $z] [r zcard bw:z]
        # A sample of what is left.
        set i 0
        dict for {f v} $h {
            if {[incr i] % 97 != 0} continue
            assert_equal $v [r hget bw:h $f]
            assert_equal 1 [r sismember bw:s $f]
            assert_equal [dict get $z $f] [r zscore bw:z $f]
        }
        foreach k {bw:h bw:s bw:z} { r del $k }
    }
}
