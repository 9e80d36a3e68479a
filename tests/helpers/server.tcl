# Goblin test harness -- server processes.
#
#   start_server {tags {t1 t2} overrides {maxmemory 10mb} args {--extra v}} {
#       test ... ;# `r CMD ...` talks to this server's default client
#   }
#
# start_server launches the server under test (goblin-core, or redis-server
# with --server) on a free loopback port with a fresh temporary dir, passing
# its configuration as `--name value` flags, waits until it answers PING,
# runs the body and always stops the server afterwards (also when the body
# raises an error). Its stdout/stderr go to files in the temp dir. A server
# that dies during a test fails that test and is restarted; a server that is
# dead at the end of the block fails the block. Servers start with no save
# points (--save "") unless the block says `keep_save 1`.

namespace eval ::srv {
    variable binary ""
    variable extra_args {}   ;# test_helper's --server-args (goblin only)
    variable tmproot ""
    variable keep_tmp 0
    variable port_base 21000
    variable port_span 4000
    variable start_timeout 20000
    variable nextid 0
    variable stack {}
    variable S
    array set S {}
}

proc ::srv::kind {} {
    return $::t::server_kind
}

proc ::srv::alive {pid} {
    if {$pid eq "" || ![file exists /proc/$pid/stat]} {return 0}
    if {[catch {
        set f [open /proc/$pid/stat r]
        set s [read $f]
        close $f
    }]} {return 0}
    set i [string last ")" $s]
    set state [string index $s [expr {$i + 2}]]
    return [expr {$state ne "Z" && $state ne "X" && $state ne ""}]
}

proc ::srv::free_port {} {
    variable port_base
    variable port_span
    for {set i 0} {$i < 200} {incr i} {
        # Not only rand(): test files seed it, and must not all pick the
        # same ports.
        set p [expr {$port_base + (int(rand() * $port_span) + [pid] + [clock clicks]) % $port_span}]
        if {[catch {socket -server {apply {args {}}} -myaddr 127.0.0.1 $p} s]} {
            continue
        }
        close $s
        # Something may listen on another address of the same port.
        if {![catch {socket 127.0.0.1 $p} c]} {
            close $c
            continue
        }
        return $p
    }
    error "no free port found in $port_base..[expr {$port_base + $port_span}]"
}

proc ::srv::tail_file {path {n 15}} {
    if {[catch {
        set f [open $path r]
        fconfigure $f -translation binary
        set data [read $f]
        close $f
    }]} {return ""}
    set lines {}
    foreach l [lrange [split [string trimright $data "\n"] "\n"] end-[expr {$n - 1}] end] {
        if {[string length $l] > 200} {set l "[string range $l 0 199]..."}
        lappend lines $l
    }
    return [join $lines "\n"]
}

proc ::srv::log_tail {sid {n 15}} {
    variable S
    set out ""
    foreach which {stdout stderr} {
        set t [tail_file $S($sid,$which) $n]
        if {$t ne ""} {
            append out "--- server $which ($S($sid,$which)), last lines:\n$t\n"
        }
    }
    return [string trimright $out]
}

# Lines of the server's output where a sanitizer reported an error.
proc ::srv::sanitizer_report {sid} {
    variable S
    set out ""
    foreach which {stderr stdout} {
        if {[catch {
            set f [open $S($sid,$which) r]
            fconfigure $f -translation binary
            set data [read $f]
            close $f
        }]} continue
        set n 0
        foreach l [split $data "\n"] {
            if {[regexp {ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|runtime error: |ERROR: ThreadSanitizer} $l]} {
                if {[incr n] <= 10} {append out "[string range $l 0 300]\n"}
            }
        }
        if {$n > 10} {append out "... ([expr {$n - 10}] more in $S($sid,$which))\n"}
    }
    return [string trimright $out]
}

proc ::srv::cmdline {sid port} {
    variable S
    variable extra_args
    # No save points unless the block keeps the server's own (keep_save).
    set argv [list --port $port --bind 127.0.0.1 --dir $S($sid,dir)]
    if {!$S($sid,keep_save)} {lappend argv --save ""}
    lappend argv --enable-debug-command yes {*}$extra_args
    if {[kind] eq "redis"} {
        lappend argv --daemonize no \
            --appendonly no --logfile ""
    }
    foreach {k v} $S($sid,overrides) {
        lappend argv --$k $v
    }
    foreach a $S($sid,args) {lappend argv $a}
    return $argv
}

# Launch (or relaunch) server sid; fills S(sid,port/pid). Raises an error
# with the server's log when it cannot be started.
proc ::srv::launch {sid} {
    variable S
    variable binary
    variable start_timeout
    set lasterr ""
    for {set attempt 0} {$attempt < 5} {incr attempt} {
        set port [free_port]
        set argv [cmdline $sid $port]
        set S($sid,port) $port
        set S($sid,argv) $argv
        set S($sid,pid) ""
        set cmd [list exec $binary {*}$argv >>$S($sid,stdout) 2>>$S($sid,stderr) &]
        if {[catch {eval $cmd} pid]} {
            error "cannot execute $binary: $pid"
        }
        set S($sid,pid) $pid
        ::t::control "server $pid"
        set res [wait_ready $sid]
        if {$res eq "ok"} {return}
        set lasterr $res
        stop $sid
        set log [log_tail $sid 30]
        if {![string match -nocase "*in use*" $log] &&
            ![string match "wrong-server*" $res]} {
            break
        }
    }
    set shown {}
    foreach a $S($sid,argv) {
        lappend shown [expr {$a eq "" ? {""} : $a}]
    }
    error "server did not start: $lasterr\n  command: $binary [join $shown]\n[log_tail $sid]"
}

proc ::srv::wait_ready {sid} {
    variable S
    variable start_timeout
    set deadline [expr {[clock milliseconds] + $start_timeout}]
    set pid $S($sid,pid)
    while {[clock milliseconds] < $deadline} {
        if {![alive $pid]} {
            return "process $pid exited during start-up"
        }
        if {[catch {::resp::client -port $S($sid,port) -timeout 2000} c]} {
            after 20
            continue
        }
        set ok [catch {$c ping} reply]
        if {$ok == 0 || [string match {NOAUTH*} $reply]} {
            # Make sure the server answering is ours (the port may have been
            # taken by someone else between the probe and the bind): its
            # INFO names our process. -NOAUTH answers neither.
            set who ""
            if {$ok == 0 && [catch {$c info server} info] == 0} {
                set who [getInfoProperty $info process_id]
            }
            $c close
            if {$ok == 0 && $who eq ""} {
                # An answer that is no server's INFO: whatever it was,
                # it is not ours yet.
                after 20
                continue
            }
            if {$ok == 0 && $who != $pid} {
                return "wrong-server: port $S($sid,port) answered by process $who"
            }
            return ok
        }
        $c close
        if {[string match {LOADING*} $reply] || [string match {*closed*} $reply]} {
            after 20
            continue
        }
        return "PING answered '$reply'"
    }
    return "no PONG within $start_timeout ms"
}

# "" when the server answers PING on new connections within ms
# milliseconds in all (-NOAUTH and -LOADING count: it answered), else what
# went wrong. Several connections, one after the other: a server with
# several workers (Goblin's --cores) hands each to one of them, and a
# worker that hangs (a sleep, a stuck command) must be found too.
proc ::srv::answers_ping {sid {ms 5000} {conns 8}} {
    variable S
    set saved $::resp::deadline
    set ::resp::deadline ""
    set deadline [expr {[clock milliseconds] + $ms}]
    try {
        for {set i 0} {$i < $conns} {incr i} {
            set left [expr {max(1, $deadline - [clock milliseconds])}]
            if {[catch {::resp::client -port $S($sid,port) -timeout $left} c]} {
                return "no connection to the server at the end of the block: $c"
            }
            set code [catch {$c ping} reply]
            catch {$c close}
            if {$code == 0 && $reply eq "PONG"} continue
            if {$code != 0 && ([string match {NOAUTH*} $reply] || [string match {LOADING*} $reply])} continue
            return "PING at the end of the block answered '$reply' (within $ms ms, connection [expr {$i + 1}] of $conns)"
        }
        return ""
    } finally {
        set ::resp::deadline $saved
    }
}

proc ::srv::stop {sid} {
    variable S
    set pid $S($sid,pid)
    if {$pid eq ""} return
    if {[alive $pid]} {
        catch {exec kill -TERM $pid}
        set deadline [expr {[clock milliseconds] + 5000}]
        while {[alive $pid] && [clock milliseconds] < $deadline} {after 10}
        if {[alive $pid]} {
            catch {exec kill -KILL $pid}
            set deadline [expr {[clock milliseconds] + 5000}]
            while {[alive $pid] && [clock milliseconds] < $deadline} {after 10}
        }
    }
    ::t::control "serverdone $pid"
    set S($sid,pid) ""
}

# Level 0 is the innermost server, -1 the one around it, and so on.
proc ::srv::current {{level 0}} {
    variable stack
    if {![llength $stack]} {
        error "no server is running here (use start_server)"
    }
    set sid [lindex $stack [expr {[llength $stack] - 1 + $level}]]
    if {$sid eq ""} {error "no server at level $level"}
    return $sid
}

proc ::srv::connect_default {sid} {
    variable S
    set S($sid,client) [::resp::client -port $S($sid,port)]
}

proc ::srv::close_clients {sid} {
    variable S
    foreach c $S($sid,clients) {
        catch {$c close}
    }
    set S($sid,clients) {}
    catch {$S($sid,client) close}
}

# Called after every test: "" when all servers of the stack are fine (or
# expected to be gone), else a description of the death; the server is
# restarted so that the following tests still run.
proc ::srv::check_after_test {} {
    variable stack
    variable S
    set msg ""
    foreach sid $stack {
        if {$S($sid,expect_exit)} continue
        if {[alive $S($sid,pid)]} continue
        append msg "server exited during the test (pid $S($sid,pid), port $S($sid,port))\n[log_tail $sid]\n"
        set S($sid,pid) ""
        close_clients $sid
        if {[catch {launch $sid; connect_default $sid} err]} {
            append msg "restart failed: $err\n"
        } else {
            append msg "(server restarted for the remaining tests, pid $S($sid,pid))\n"
        }
    }
    return [string trimright $msg]
}

proc start_server {options body} {
    set tg {}
    set overrides {}
    set extra {}
    set keep_save 0
    foreach {k v} $options {
        switch -exact -- $k {
            tags {set tg $v}
            overrides {set overrides $v}
            args {set extra $v}
            keep_save {set keep_save $v}
            default {error "start_server: unknown option '$k'"}
        }
    }
    lappend ::t::tags $tg
    try {
        set all [::t::current_tags]
        if {[llength $::t::exclude]} {
            set why [::t::tag_filter $all]
            if {[string match {*excluded} $why]} {
                ::t::vlog "\[filtered\]: server block in $::t::file ($why)"
                return
            }
        }
        set why [::t::kind_skip $all]
        if {$why ne ""} {
            ::t::record_skip "server block {$tg} in $::t::file" $why
            return
        }
        set sid [incr ::srv::nextid]
        set ::srv::S($sid,overrides) $overrides
        set ::srv::S($sid,args) $extra
        set ::srv::S($sid,keep_save) $keep_save
        set ::srv::S($sid,expect_exit) 0
        set ::srv::S($sid,clients) {}
        set ::srv::S($sid,client) ""
        set ::srv::S($sid,pid) ""
        set base [file rootname [string map {/ _} $::t::file]]
        set dir [file join $::srv::tmproot "[file tail $base].[pid].$sid"]
        file mkdir $dir
        set ::srv::S($sid,dir) [file normalize $dir]
        set ::srv::S($sid,stdout) [file join $::srv::S($sid,dir) stdout]
        set ::srv::S($sid,stderr) [file join $::srv::S($sid,dir) stderr]
        set failed_before $::t::failed
        if {[catch {::srv::launch $sid; ::srv::connect_default $sid} err]} {
            ::t::record_err "start_server {$tg} in $::t::file" $err
            ::srv::stop $sid
            return
        }
        ::t::vlog "\[server\]: started pid $::srv::S($sid,pid) port $::srv::S($sid,port) dir $::srv::S($sid,dir)"
        lappend ::srv::stack $sid
        try {
            set code [catch {uplevel 1 $body} msg opts]
            if {$code == 1} {
                ::t::record_err "(exception in the server block {$tg})" \
                    [dict get $opts -errorinfo]
            }
            if {!$::srv::S($sid,expect_exit) && ![::srv::alive $::srv::S($sid,pid)]} {
                ::t::record_err "server alive after $::t::file {$tg}" \
                    "server is not running at the end of the file\n[::srv::log_tail $sid]"
            } elseif {!$::srv::S($sid,expect_exit)} {
                # Liveness: a running server must still answer PING (a hung
                # one fails the block instead of hanging the suite).
                set why [::srv::answers_ping $sid]
                if {$why ne ""} {
                    ::t::record_err "server answers PING after $::t::file {$tg}" \
                        "$why\n[::srv::log_tail $sid]"
                }
            }
        } finally {
            set ::srv::stack [lrange $::srv::stack 0 end-1]
            ::srv::close_clients $sid
            ::srv::stop $sid
            # Sanitizer builds (make asan/tsan) report problems in the log,
            # sometimes without stopping the server: they fail the block.
            set rep [::srv::sanitizer_report $sid]
            if {$rep ne ""} {
                ::t::record_err "sanitizer report from the server {$tg} of $::t::file" $rep
            }
            if {$::t::failed == $failed_before && !$::srv::keep_tmp} {
                catch {file delete -force $::srv::S($sid,dir)}
            } elseif {$::t::failed != $failed_before} {
                ::t::log "    (server files kept in $::srv::S($sid,dir))"
            }
            array unset ::srv::S $sid,*
        }
    } finally {
        set ::t::tags [lrange $::t::tags 0 end-1]
    }
}

# r ?level? cmd args: call a command on the current server's default client.
proc r {args} {
    set level 0
    if {[regexp {^-?[0-9]+$} [lindex $args 0]]} {
        set level [lindex $args 0]
        set args [lrange $args 1 end]
    }
    set sid [::srv::current $level]
    $::srv::S($sid,client) {*}$args
}

# srv ?level? property: host, port, pid, dir, stdout, stderr, client.
proc srv {args} {
    set level 0
    if {[llength $args] == 2} {
        set level [lindex $args 0]
        set args [lrange $args 1 end]
    }
    set sid [::srv::current $level]
    set p [lindex $args 0]
    if {$p eq "host"} {return 127.0.0.1}
    return $::srv::S($sid,$p)
}

# A new client connected to the current server (closed at the end of the
# server block). Options as for ::resp::client (-defer, -timeout...).
proc redis_client {args} {
    set sid [::srv::current]
    set c [::resp::client -port $::srv::S($sid,port) {*}$args]
    lappend ::srv::S($sid,clients) $c
    return $c
}

# A deferring client subscribed to the patterns and to a marker channel;
# events_until_marker publishes on the marker and returns every
# {channel payload} pair the client got before it (so every event sent
# earlier has been seen).
proc event_subscriber {marker args} {
    set c [redis_deferring_client]
    $c psubscribe {*}$args
    foreach p $args {$c read}
    $c subscribe $marker
    $c read
    return $c
}

proc events_until_marker {c marker} {
    r publish $marker end
    set out {}
    while 1 {
        set m [$c read]
        if {[lindex $m 0] eq "message" && [lindex $m 1] eq $marker} break
        lappend out [list [lindex $m 2] [lindex $m 3]]
    }
    return $out
}

proc redis_deferring_client {args} {
    redis_client -defer 1 {*}$args
}

# Declare that the current server is going to exit (SHUTDOWN tests).
proc server_expect_exit {} {
    set ::srv::S([::srv::current],expect_exit) 1
}

# Stop the current server and start it again on the same directory with
# the same arguments (a start-up load of its dump, if any).
proc restart_server {} {
    set sid [::srv::current]
    ::srv::close_clients $sid
    ::srv::stop $sid
    ::srv::launch $sid
    ::srv::connect_default $sid
}

# Start the current server again after it exited as a test expected
# (server_expect_exit): same directory and arguments, a new default client.
proc start_server_again {} {
    set sid [::srv::current]
    set ::srv::S($sid,expect_exit) 0
    ::srv::close_clients $sid
    ::srv::launch $sid
    ::srv::connect_default $sid
}

proc server_is_alive {} {
    ::srv::alive [srv pid]
}

# The current server's log (its standard output) so far.
proc server_log {} {
    set f [open [srv stdout] r]
    set data [read $f]
    close $f
    return $data
}

proc is_goblin {} {
    expr {$::t::server_kind eq "goblin"}
}

# Run the server binary with these arguments and no start_server around it
# (start-up error tests). Returns {status output}: status is the exit code,
# "signal" when it died of a signal, or "timeout" when it was still running
# after ms milliseconds (it is then killed). Output is stdout and stderr.
proc run_server_binary {argv {ms 10000}} {
    set cmd [list | $::srv::binary {*}$argv 2>@1]
    set fd [open $cmd r]
    fconfigure $fd -blocking 0 -translation binary
    set pids [pid $fd]
    set ::srv::runout ""
    set ::srv::rundone 0
    fileevent $fd readable [list apply {{fd} {
        append ::srv::runout [read $fd]
        if {[eof $fd]} {set ::srv::rundone 1}
    }} $fd]
    set aid [after $ms {set ::srv::rundone timeout}]
    vwait ::srv::rundone
    after cancel $aid
    if {$::srv::rundone eq "timeout"} {
        foreach p $pids {catch {exec kill -KILL $p}}
        catch {close $fd}
        return [list timeout $::srv::runout]
    }
    fconfigure $fd -blocking 1
    set status 0
    if {[catch {close $fd} err opts]} {
        set ec [dict get $opts -errorcode]
        if {[lindex $ec 0] eq "CHILDSTATUS"} {
            set status [lindex $ec 2]
        } elseif {[lindex $ec 0] eq "CHILDKILLED"} {
            set status signal
        }
    }
    return [list $status $::srv::runout]
}
