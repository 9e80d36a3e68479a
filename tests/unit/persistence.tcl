# Persistence: SAVE, BGSAVE, LASTSAVE, DEBUG RELOAD, start-up load, save
# points, SHUTDOWN saving, INFO persistence, and Goblin's LOAD command.
# The heavier cases (redis-server interchange, crashes, a full disk,
# corrupt files, fuzzing) live in tests/persist/test_persist.py.

proc wait_bgsave_done {} {
    wait_for_condition 200 50 {[s rdb_bgsave_in_progress] == 0} else {
        fail "BGSAVE still in progress"
    }
}

proc fill_every_type {} {
    r flushall
    r set str hello
    r set int 12345
    r set bigint 123456789012345
    r set long [string repeat abc 300]
    r rpush list a b 1 2 [string repeat x 100]
    r sadd intset 1 2 3 -100000
    r sadd set a b c
    r zadd zset 1 a 2.5 b -inf c
    r hset hash f1 v1 f2 2
    for {set i 0} {$i < 600} {incr i} {
        r hset bighash field:$i value:$i
        r sadd bigset member:$i
        r zadd bigzset $i m:$i
    }
    r set withttl v
    r pexpireat withttl 4102444800123
    r select 3
    r set in3 three
    r select 0
}

proc dataset_dump {} {
    set out {}
    foreach db {0 3} {
        r select $db
        foreach k [lsort [r keys *]] {
            set t [r type $k]
            switch $t {
                string {set v [r get $k]}
                list {set v [r lrange $k 0 -1]}
                set {set v [lsort [r smembers $k]]}
                zset {set v [r zrange $k 0 -1 withscores]}
                hash {set v [lsort [r hgetall $k]]}
                default {set v ?}
            }
            lappend out $db $k $t $v [r pexpiretime $k] [r object encoding $k]
        }
    }
    r select 0
    return $out
}

start_server {tags {persistence}} {

    test {SAVE writes the dump and moves LASTSAVE} {
        r set k v
        set before [r lastsave]
        after 1100
        assert_equal OK [r save]
        assert {[r lastsave] > $before}
        assert {[file exists [file join [srv dir] dump.rdb]]}
        assert_equal 0 [s rdb_changes_since_last_save]
        assert_equal ok [s rdb_last_bgsave_status]
    }

    test {BGSAVE runs in the background and reports in INFO} {
        r set k v2
        assert_equal {Background saving started} [r bgsave]
        wait_bgsave_done
        assert_equal ok [s rdb_last_bgsave_status]
        assert_equal 0 [s rdb_changes_since_last_save]
        assert {[s rdb_last_bgsave_time_sec] >= 0}
    }

    test {BGSAVE syntax} {
        assert_error {ERR syntax error} {r bgsave now}
        assert_error {ERR syntax error} {r bgsave schedule extra}
        wait_bgsave_done
    }

    test {SAVE is refused inside MULTI} {
        r multi
        assert_error {*not allowed*} {r save}
        r discard
    }

    test {INFO persistence fields} {
        set info [r info persistence]
        foreach f {loading async_loading current_save_keys_processed current_save_keys_total
                   rdb_changes_since_last_save rdb_bgsave_in_progress rdb_last_save_time
                   rdb_last_bgsave_status rdb_last_bgsave_time_sec rdb_current_bgsave_time_sec
                   rdb_saves rdb_last_cow_size rdb_last_load_keys_expired rdb_last_load_keys_loaded} {
            assert {[string match "*$f:*" $info]} "INFO persistence lacks $f"
        }
        assert_equal -1 [s rdb_current_bgsave_time_sec]
    }

    test {Every type survives a restart (start-up load)} {
        fill_every_type
        set before [dataset_dump]
        assert_equal OK [r save]
        restart_server
        assert_equal $before [dataset_dump]
    }

    test {DEBUG RELOAD keeps every type} {
        fill_every_type
        set before [dataset_dump]
        assert_equal OK [r debug reload]
        assert_equal $before [dataset_dump]
        assert_equal OK [r debug reload nosave]
        assert_equal $before [dataset_dump]
        assert_equal OK [r debug reload merge]
        assert_equal $before [dataset_dump]
    }

    test {DEBUG RELOAD NOFLUSH is refused before anything is saved or loaded} {
        # Redis loads the file into the dataset as it is; Goblin's reload
        # replaces the dataset, which would drop the keys the file lacks.
        r set notsaved 1
        set saves [s rdb_saves]
        assert_error {ERR DEBUG RELOAD NOFLUSH is not supported*} {r debug reload nosave noflush merge}
        assert_equal 1 [r get notsaved]
        assert_equal $saves [s rdb_saves]
        r del notsaved
    } {goblin_only}

    test {Save points start a BGSAVE} {
        set saves [s rdb_saves]
        r config set save "1 1"
        r set trigger 1
        wait_for_condition 100 100 {[s rdb_saves] > $saves} else {
            fail "no save after the save point"
        }
        wait_bgsave_done
        r config set save ""
    }

    test {FLUSHALL with save points writes the empty dataset} {
        r set a b
        r config set save "3600 1"
        r flushall
        r config set save ""
        restart_server
        assert_equal 0 [r dbsize]
    }
}

start_server {tags {persistence}} {
    test {LOAD replaces the dataset with a dump} {
        needs_feature command:load
        fill_every_type
        set before [dataset_dump]
        r save
        file copy -force [file join [srv dir] dump.rdb] [file join [srv dir] copy.rdb]
        r flushall
        r set other 1
        assert_equal OK [r load]
        assert_equal $before [dataset_dump]
        r flushall
        assert_equal OK [r load [file join [srv dir] copy.rdb]]
        assert_equal $before [dataset_dump]
    } {goblin_only}

    test {A failed LOAD names the problem and keeps the dataset} {
        needs_feature command:load
        r flushall
        r set keep me
        assert_error {ERR Error loading*no such file*} {r load [file join [srv dir] nosuch.rdb]}
        set f [file join [srv dir] bad.rdb]
        set fd [open $f w]
        fconfigure $fd -translation binary
        puts -nonewline $fd "not a dump"
        close $fd
        assert_error {ERR Error loading*bad magic*} {r load $f}
        r save
        set fd [open [file join [srv dir] dump.rdb] r]
        fconfigure $fd -translation binary
        set good [read $fd]
        close $fd
        set fd [open $f w]
        fconfigure $fd -translation binary
        puts -nonewline $fd [string range $good 0 end-12]
        close $fd
        assert_error {ERR Error loading*truncated*} {r load $f}
        set flipped [string replace $good 20 20 [format %c [expr {[scan [string index $good 20] %c] ^ 1}]]]
        set fd [open $f w]
        fconfigure $fd -translation binary
        puts -nonewline $fd $flipped
        close $fd
        assert_error {ERR Error loading*checksum*} {r load $f}
        assert_equal me [r get keep]
        assert_equal 1 [r dbsize]
    } {goblin_only}

    test {LOAD arity and MULTI} {
        needs_feature command:load
        assert_error {ERR syntax error} {r load a b}
        r multi
        assert_error {*not allowed*} {r load}
        r discard
    } {goblin_only}
}

start_server {tags {persistence goblin_only} args {--arena-hugetlb yes}} {
    test {arena-hugetlb refuses BGSAVE; SAVE still works} {
        r set k v
        assert_error {ERR BGSAVE is disabled while arena-hugetlb is on (copy-on-write would copy whole 2 MiB pages); use SAVE} {r bgsave}
        assert_equal OK [r save]
        assert_equal 0 [s rdb_bgsave_in_progress]
    } {goblin_only}

    test {arena-hugetlb: INFO persistence says why} {
        assert_equal 1 [s rdb_bgsave_disabled]
        assert_match {*arena-hugetlb*} [s rdb_bgsave_disabled_reason]
    } {goblin_only}
}

start_server {tags {persistence}} {
    test {SHUTDOWN saves when save points are configured} {
        r config set save "3600 1"
        r set survivor yes
        server_expect_exit
        catch {r shutdown}
        set pid [srv pid]
        wait_for_condition 100 50 {![::srv::alive $pid]} else {
            fail "server still running after SHUTDOWN"
        }
        assert {[file exists [file join [srv dir] dump.rdb]]}
        start_server_again
        assert_equal yes [r get survivor]
    }
}

start_server {tags {persistence}} {
    test {shutdown-on-sigterm: its words add up to SHUTDOWN's options, shown in one order} {
        foreach {given shown} {{nosave now} {nosave now} {now nosave} {nosave now} {default save} save
                               {SAVE force} {save force} {force now save} {save now force} default default} {
            r config set shutdown-on-sigterm $given
            assert_equal $shown [lindex [r config get shutdown-on-sigterm] 1]
        }
        assert_error {*SAVE and NOSAVE can't be used simultaneously*} {r config set shutdown-on-sigint "save nosave"}
        assert_error {*must be one of the following: default, save, nosave, now, force*} {
            r config set shutdown-on-sigint bogus
        }
        assert_error {*must be one of the following*} {r config set shutdown-on-sigint ""}
        assert_equal default [lindex [r config get shutdown-on-sigint] 1]
        r config set shutdown-on-sigterm default
    }

    test {shutdown-on-sigterm save saves without save points; nosave does not save with them} {
        r set kept 1
        r config set shutdown-on-sigterm save
        restart_server
        assert_equal 1 [r get kept]
        r config set save "3600 1"
        r config set shutdown-on-sigterm nosave
        r set lost 1
        restart_server
        assert_equal {1 0} [list [r exists kept] [r exists lost]]
    }

    test {SIGTERM: a failed save keeps the server running; shutdown-on-sigterm force exits anyway} {
        # A directory where the dump goes: the save fails at its rename.
        file delete -force [file join [srv dir] dump.rdb]
        file mkdir [file join [srv dir] dump.rdb in-the-way]
        r config set save "3600 1"
        r set k 1
        set pid [srv pid]
        exec kill -TERM $pid
        after 1000
        assert {[::srv::alive $pid]}
        assert_equal 1 [r get k]
        r config set shutdown-on-sigterm force
        server_expect_exit
        exec kill -TERM $pid
        wait_for_condition 100 50 {![::srv::alive $pid]} else {
            fail "server still running after SIGTERM with force"
        }
        file delete -force [file join [srv dir] dump.rdb]
        start_server_again
        assert_equal 0 [r dbsize]
    }
}

start_server {tags {persistence}} {
    test {Once SHUTDOWN's connection closes, the port refuses connections} {
        r set k v
        r config set rdb-key-save-delay 100000
        r bgsave
        server_expect_exit
        catch {r shutdown nosave}
        # The listening socket is gone before the connection closes, as in
        # Redis (whose process has exited by then), not left with a backlog
        # nobody serves.
        assert_error {*connection refused*} {socket 127.0.0.1 [srv port]}
        set pid [srv pid]
        wait_for_condition 100 50 {![::srv::alive $pid]} else {
            fail "server still running after SHUTDOWN"
        }
    }
}

start_server {tags {persistence}} {
    test {A signal's shutdown waits while DEBUG PAUSE-CRON holds the cron; SHUTDOWN ABORT drops it} {
        assert_error {ERR No shutdown in progress.} {r shutdown abort}
        r debug pause-cron 1
        exec kill -TERM [srv pid]
        wait_for_condition 100 10 {[string match "*Received SIGTERM scheduling shutdown*" [server_log]]} else {
            fail "SIGTERM not logged"
        }
        assert_equal OK [r shutdown abort]
        assert_match "*Shutdown manually aborted*" [server_log]
        r debug pause-cron 0
        after 100
        assert_equal PONG [r ping]
        assert_error {ERR No shutdown in progress.} {r shutdown abort}
    }

    test {A second SIGINT during a signal's shutdown exits at once, its temp dump removed} {
        for {set i 0} {$i < 20} {incr i} {r set $i $i}
        r config set save "3600 1"
        r config set rdb-key-save-delay 100000
        set pid [srv pid]
        set temp [file join [lindex [r config get dir] 1] temp-$pid.rdb]
        server_expect_exit
        exec kill -INT $pid
        wait_for_condition 100 10 {[file exists $temp]} else {
            fail "the shutdown's save did not begin"
        }
        exec kill -INT $pid
        wait_for_condition 100 10 {![::srv::alive $pid]} else {
            fail "still running after the second SIGINT"
        }
        assert {![file exists $temp]}
        assert_match "*You insist... exiting now.*" [server_log]
        assert {![file exists [file join [srv dir] dump.rdb]]}
    }
}

start_server {tags {persistence}} {
    test {key-load-delay slows the load of every key (a hidden Redis test knob)} {
        assert_equal {key-load-delay 0} [r config get key-load-delay]
        assert_equal 0 [dict exists [r config get *] key-load-delay]
        r debug populate 2000
        r save
        r config set key-load-delay 200
        set t0 [clock milliseconds]
        r debug reload
        assert_morethan [expr {[clock milliseconds] - $t0}] 390
        assert_equal 2000 [r dbsize]
        r config set key-load-delay 0
    }

    test {loading-process-events-interval-bytes: hidden, 1024 and up} {
        assert_equal {loading-process-events-interval-bytes 2097152} [r config get loading-process-events-interval-bytes]
        assert_equal 0 [dict exists [r config get *] loading-process-events-interval-bytes]
        assert_error {*argument must be between 1024 and 2147483647*} {
            r config set loading-process-events-interval-bytes 1023
        }
        r config set loading-process-events-interval-bytes 1024
        assert_equal 1024 [lindex [r config get loading-process-events-interval-bytes] 1]
        r debug reload
        r config set loading-process-events-interval-bytes 2097152
    }
}

start_server {tags {persistence}} {
    test {CONFIG SET during a start-up load: -LOADING for dir and appendonly, other settings change} {
        r debug populate 20000
        r save
        # A second server loads that dump slowly; ours stays as it is.
        set port [::srv::free_port]
        set argv [list --port $port --bind 127.0.0.1 --dir [srv dir] --save "" --key-load-delay 200 \
                      --loading-process-events-interval-bytes 1024 \
                      --enable-protected-configs yes]
        if {![is_goblin]} { lappend argv --appendonly no --logfile "" }
        set pid [exec $::srv::binary {*}$argv >@ stdout 2>@ stderr &]
        try {
            set c ""
            wait_for_condition 200 20 {
                ![catch {set c [::resp::client -port $port -timeout 2000]}]
            } else { fail "the loading server does not answer" }
            wait_for_condition 200 10 {[getInfoProperty [$c info persistence] loading] == 1} else {
                fail "the server is not loading"
            }
            assert_error {LOADING*} {$c config set dir [srv dir]}
            assert_error {LOADING*} {$c config set appendonly yes}
            assert_error {LOADING*} {$c config set loglevel notice dir [srv dir]}
            assert_equal OK [$c config set loglevel debug]
            assert_equal debug [lindex [$c config get loglevel] 1]
            assert_equal 1 [getInfoProperty [$c info persistence] loading]
            $c close
        } finally {
            catch {exec kill -9 $pid}
        }
    }
}

start_server {tags {persistence startup}} {
    test {A corrupt dump stops start-up with exit code 1} {
        set dir [file join $::srv::tmproot "corrupt-dump.[pid]"]
        file mkdir $dir
        set fd [open [file join $dir dump.rdb] w]
        fconfigure $fd -translation binary
        puts -nonewline $fd "REDIS0010\xfa\x09redis-ver"
        close $fd
        lassign [run_server_binary [list --port [::srv::free_port] --bind 127.0.0.1 --dir $dir]] status out
        file delete -force $dir
        assert_equal 1 $status
        if {[is_goblin] && [string match "*Fatal error loading*" $out]} {
            assert_match {*truncated*} $out
        }
    }
}
