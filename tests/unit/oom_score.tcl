# oom-score-adj and oom-score-adj-values: the kernel's OOM-killer score of
# the server (/proc/PID/oom_score_adj) by role, as Redis 7.0.

proc oom_score {pid} {
    set f [open /proc/$pid/oom_score_adj r]
    set v [string trim [read $f]]
    close $f
    return $v
}

proc set_oom_score {pid v} {
    set f [open /proc/$pid/oom_score_adj w]
    puts $f $v
    close $f
}

# The pid of a child of pid, or "" (read from /proc: no ps needed).
proc child_of {pid} {
    foreach d [glob -nocomplain -directory /proc {[0-9]*}] {
        if {[catch {set f [open $d/status r]; set s [read $f]; close $f}]} continue
        if {[regexp {\nPPid:\s+(\d+)} $s -> pp] && $pp == $pid} { return [file tail $d] }
    }
    return ""
}

start_server {tags {oom_score}} {
    test {oom-score-adj: a primary's, a replica's and a forked child's score} {
        set pid [srv pid]
        r config set oom-score-adj no
        set base [oom_score $pid]
        r config set oom-score-adj-values "10 20 30"
        r config set oom-score-adj yes
        assert_equal [expr {$base + 10}] [oom_score $pid]
        r config set oom-score-adj-values "15 20 30"
        assert_equal [expr {$base + 15}] [oom_score $pid]
        r replicaof 127.0.0.1 1
        assert_equal [expr {$base + 20}] [oom_score $pid]
        r replicaof no one
        assert_equal [expr {$base + 15}] [oom_score $pid]
        r set k v
        r config set rdb-key-save-delay 1000000
        r bgsave
        wait_for_condition 100 20 {[set child [child_of $pid]] ne ""} else { fail "no BGSAVE child" }
        wait_for_condition 100 20 {[oom_score $child] == $base + 30} else {
            fail "the child's score is [oom_score $child], not [expr {$base + 30}]"
        }
        r config set rdb-key-save-delay 0
        catch {exec kill -9 $child}
        wait_for_condition 100 50 {[s rdb_bgsave_in_progress] == 0} else { fail "BGSAVE child still running" }
    }

    test {oom-score-adj no: the score from before comes back, and the values leave it alone} {
        set pid [srv pid]
        r config set oom-score-adj no
        set_oom_score $pid 22
        r config set oom-score-adj-values "9 9 9" oom-score-adj yes
        assert_equal 31 [oom_score $pid]
        r config set oom-score-adj no
        assert_equal 22 [oom_score $pid]
        r config set oom-score-adj-values "1 1 1"
        assert_equal 22 [oom_score $pid]
    }

    test {oom-score-adj relative and absolute; relative shows as yes} {
        set pid [srv pid]
        r config set oom-score-adj no
        set base [oom_score $pid]
        r config set oom-score-adj-values "9 9 9" oom-score-adj relative
        assert_equal [expr {$base + 9}] [oom_score $pid]
        assert_equal yes [lindex [r config get oom-score-adj] 1]
        r config set oom-score-adj absolute
        assert_equal 9 [oom_score $pid]
        r config set oom-score-adj no
        assert_equal $base [oom_score $pid]
    }

    test {oom-score-adj-values: three integers of -2000..2000} {
        assert_error {ERR *must be between -2000 and 2000*} {r config set oom-score-adj-values "-2001 -2001 -2001"}
        assert_error {ERR *must be between -2000 and 2000*} {r config set oom-score-adj-values "2001 2001 2001"}
        assert_error {ERR *must be between -2000 and 2000*} {r config set oom-score-adj-values "1 2 x"}
        assert_error {ERR *wrong number of arguments*} {r config set oom-score-adj-values "1 2"}
        assert_equal {9 9 9} [lindex [r config get oom-score-adj-values] 1]
        r config set oom-score-adj-values "0 200 800"
    }
}
