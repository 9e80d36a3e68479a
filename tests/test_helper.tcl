# Goblin Tcl test suite -- entry point.
#
#   tclsh tests/test_helper.tcl [options]
#
#   --server PATH     server binary (default ./build-release/goblin-core);
#                     a binary named redis-server* is run as Redis, which is
#                     how the suites themselves are validated
#   --kind KIND       goblin or redis, when the binary's name does not tell
#   --server-args A   more flags for every goblin-core the tests start (a
#                     list, e.g. "--net async"); a test's own flags follow
#   --single FILE     run only this test file (repeatable); a path, or a
#                     name like "keyspace" or "type/string.tcl"
#   --tags LIST       "slow" runs only tests tagged slow, "-slow" leaves them
#                     out (repeatable; a list may hold several tags)
#   --only GLOB       run only tests whose name matches (repeatable)
#   --jobs N          test files run in parallel (default 2)
#   --timeout SECS    a test file running longer is killed (default 300)
#   --test-timeout S  a test still sending commands after S seconds fails
#                     (default 90)
#   --seed N          seed of the randomized tests (printed at the start)
#   --verbose         more detail (filtered tests, server start-up, traces)
#   --dont-clean      keep every server's temp dir (tests/tmp/...)
#   --list            list the test files and exit
#
# Every file of tests/unit (recursively) runs in its own tclsh with its own
# server(s). The run ends with the line "N passed, M failed" and exits 1
# when anything failed.

set ::testdir [file normalize [file dirname [info script]]]
set ::rootdir [file dirname $::testdir]

proc usage {} {
    puts {usage: tclsh tests/test_helper.tcl [--server PATH] [--kind goblin|redis] [--single FILE]...
       [--server-args ARGS] [--tags TAGS]... [--only GLOB]... [--jobs N] [--timeout SECS] [--test-timeout SECS]
       [--seed N] [--verbose] [--dont-clean] [--list]}
}

# --- options ---------------------------------------------------------------

set opt(server) [file join $::rootdir build-release goblin-core]
set opt(single) {}
set opt(tags) {}
set opt(only) {}
set opt(jobs) 2
set opt(timeout) 300
set opt(test_timeout) 90
set opt(verbose) 0
set opt(dont_clean) 0
set opt(list) 0
set opt(child) ""
set opt(port_base) 21000
set opt(kind) ""
set opt(seed) ""
set opt(server_args) {}

for {set i 0} {$i < [llength $argv]} {incr i} {
    set a [lindex $argv $i]
    set v [lindex $argv [expr {$i + 1}]]
    switch -exact -- $a {
        --server {set opt(server) $v; incr i}
        --single {lappend opt(single) $v; incr i}
        --tags {foreach tg $v {lappend opt(tags) $tg}; incr i}
        --only {lappend opt(only) $v; incr i}
        --jobs {set opt(jobs) $v; incr i}
        --timeout {set opt(timeout) $v; incr i}
        --test-timeout {set opt(test_timeout) $v; incr i}
        --verbose {set opt(verbose) 1}
        --dont-clean {set opt(dont_clean) 1}
        --list {set opt(list) 1}
        --child {set opt(child) $v; incr i}
        --port-base {set opt(port_base) $v; incr i}
        --kind {set opt(kind) $v; incr i}
        --server-args {set opt(server_args) $v; incr i}
        --seed {set opt(seed) $v; incr i}
        --help - -h {usage; exit 0}
        default {
            puts stderr "test_helper: unknown option $a"
            usage
            exit 2
        }
    }
}

if {$opt(kind) eq ""} {
    if {[string match redis-server* [file tail $opt(server)]]} {
        set opt(kind) redis
    } else {
        set opt(kind) goblin
    }
}

# --- child: run one test file ---------------------------------------------------

proc run_child {} {
    global opt
    source [file join $::testdir helpers resp.tcl]
    source [file join $::testdir helpers util.tcl]
    source [file join $::testdir helpers server.tcl]
    set ::srv::binary $opt(server)
    if {$opt(kind) eq "goblin"} {set ::srv::extra_args $opt(server_args)}
    set ::srv::tmproot [file join $::testdir tmp]
    set ::srv::keep_tmp $opt(dont_clean)
    set ::srv::port_base $opt(port_base)
    set ::t::server_kind $opt(kind)
    set ::t::verbose $opt(verbose)
    set ::t::test_timeout $opt(test_timeout)
    set ::t::only $opt(only)
    foreach tg $opt(tags) {
        if {[string index $tg 0] eq "-"} {
            lappend ::t::exclude [string range $tg 1 end]
        } else {
            lappend ::t::include $tg
        }
    }
    if {$opt(seed) eq ""} {set opt(seed) [expr {[pid] ^ [clock clicks]}]}
    expr {srand($opt(seed))}
    file mkdir $::srv::tmproot
    set file $opt(child)
    if {[string first $::testdir/ $file] == 0} {
        set ::t::file tests/[string range $file [expr {[string length $::testdir] + 1}] end]
    } else {
        set ::t::file $file
    }
    set code [catch {uplevel #0 [list source $file]} msg opts]
    if {$code == 1} {
        ::t::record_err "(exception while running the file)" [dict get $opts -errorinfo]
    }
    # Whatever happened, no server started here survives this process.
    foreach sid $::srv::stack {catch {::srv::stop $sid}}
    ::t::control "done $::t::passed $::t::failed $::t::skipped $::t::filtered"
    exit 0
}

if {$opt(child) ne ""} {
    run_child
}

# --- parent: find files, run them, count --------------------------------------

proc find_tests {dir} {
    set out {}
    foreach f [lsort [glob -nocomplain -directory $dir -types f *.tcl]] {
        lappend out $f
    }
    foreach d [lsort [glob -nocomplain -directory $dir -types d *]] {
        lappend out {*}[find_tests $d]
    }
    return $out
}

proc resolve_test_file {f} {
    foreach cand [list $f [file join $::rootdir $f] [file join $::testdir $f] \
                      [file join $::testdir unit $f] [file join $::testdir unit $f.tcl]] {
        if {[file isfile $cand]} {return [file normalize $cand]}
    }
    # A bare name: any test file of that name under tests/unit.
    foreach cand [find_tests [file join $::testdir unit]] {
        if {[file tail $cand] eq $f || [file tail $cand] eq "$f.tcl"} {
            return [file normalize $cand]
        }
    }
    puts stderr "test_helper: no such test file: $f"
    puts "0 passed, 1 failed"
    exit 1
}

if {[llength $opt(single)]} {
    set files {}
    foreach f $opt(single) {lappend files [resolve_test_file $f]}
} else {
    set files [find_tests [file join $::testdir unit]]
}

proc relname {f} {
    if {[string first $::testdir/ $f] == 0} {
        return tests/[string range $f [expr {[string length $::testdir] + 1}] end]
    }
    return $f
}

if {$opt(list)} {
    foreach f $files {puts [relname $f]}
    exit 0
}

if {![file executable $opt(server)]} {
    puts "test_helper: server binary $opt(server) not found or not executable (build it with `make`, or pass --server PATH)"
    puts "0 passed, 1 failed"
    exit 1
}
set opt(server) [file normalize $opt(server)]

if {$opt(seed) eq ""} {
    set opt(seed) [expr {[clock milliseconds] % 1000000000}]
}
puts "Testing $opt(server) (as $opt(kind)), [llength $files] test file(s), $opt(jobs) job(s), seed $opt(seed)"
flush stdout

set ::passed 0
set ::failed 0
set ::skipped 0
set ::filtered 0
set ::failures {}
set ::queue $files
set ::running 0
set ::slots {}
for {set i 0} {$i < $opt(jobs)} {incr i} {lappend ::slots $i}

# Each job's servers take ports from a block of its own (4000 ports), all
# below the kernel's ephemeral range: a port in that range can be the one
# the kernel picks for some client socket's own end (ours or another
# process's) between the probe and the server's bind, and the harness's own
# connection to a port nobody listens on yet can land on itself. Two runs
# at once (of different parities of pid) use different blocks.
proc port_block {slot} {
    set low 32768
    catch {
        set f [open /proc/sys/net/ipv4/ip_local_port_range r]
        set low [lindex [read $f] 0]
        close $f
    }
    set blocks [expr {max(1, ($low - 10000) / 4000)}]
    return [expr {10000 + 4000 * (($slot + $::opt(jobs) * ([pid] % 2)) % $blocks)}]
}
set ::start [clock milliseconds]

# Output of the parent: when stdout goes away (a closed pipe), stop the
# children and their servers and exit.
proc out {text} {
    if {[catch {puts $text; flush stdout}]} {
        abort_all
        exit 1
    }
}

proc abort_all {} {
    foreach k [array names ::job *,pid] {
        foreach p $::job($k) {kill_pid $p}
    }
    foreach k [array names ::job *,servers] {
        foreach p $::job($k) {kill_pid $p}
    }
}

proc bgerror {msg} {
    catch {puts stderr "test_helper: internal error: $msg\n$::errorInfo"}
    abort_all
    catch {puts "$::passed passed, [expr {$::failed + 1}] failed"}
    exit 1
}

proc kill_pid {pid} {
    catch {exec kill -KILL $pid}
}

proc start_next {} {
    global opt
    while {$::running < $opt(jobs) && [llength $::queue]} {
        set f [lindex $::queue 0]
        set ::queue [lrange $::queue 1 end]
        set slot [lindex $::slots 0]
        set ::slots [lrange $::slots 1 end]
        set args [list --child $f --server $opt(server) --kind $opt(kind) --seed $opt(seed) \
                      --port-base [port_block $slot]]
        foreach tg $opt(tags) {lappend args --tags $tg}
        foreach o $opt(only) {lappend args --only $o}
        if {[llength $opt(server_args)]} {lappend args --server-args $opt(server_args)}
        lappend args --test-timeout $opt(test_timeout)
        if {$opt(verbose)} {lappend args --verbose}
        if {$opt(dont_clean)} {lappend args --dont-clean}
        set cmd [list | [info nameofexecutable] [info script] {*}$args 2>@1]
        set fd [open $cmd r]
        fconfigure $fd -blocking 0 -buffering line -translation auto
        set ::job($fd,file) $f
        set ::job($fd,slot) $slot
        set ::job($fd,record) {}
        set ::job($fd,servers) {}
        set ::job($fd,done) 0
        set ::job($fd,running) ""
        set ::job($fd,pid) [pid $fd]
        set ::job($fd,start) [clock milliseconds]
        set ::job($fd,timer) [after [expr {$opt(timeout) * 1000}] [list job_timeout $fd]]
        fileevent $fd readable [list job_read $fd]
        incr ::running
    }
    if {$::running == 0 && ![llength $::queue]} {
        set ::all_done 1
    }
}

proc job_line {fd line} {
    if {[string match @@* $line]} {
        set rest [string range $line 2 end]
        set word [lindex [split $rest " "] 0]
        set arg [string range $rest [expr {[string length $word] + 1}] end]
        switch -exact -- $word {
            end {
                if {[llength $::job($fd,record)]} {
                    out [join $::job($fd,record) "\n"]
                }
                set ::job($fd,record) {}
            }
            server {lappend ::job($fd,servers) $arg}
            running {set ::job($fd,running) $arg}
            serverdone {
                set i [lsearch -exact $::job($fd,servers) $arg]
                if {$i >= 0} {set ::job($fd,servers) [lreplace $::job($fd,servers) $i $i]}
            }
            result {
                set ::job($fd,running) ""
                set kind [lindex [split $arg " "] 0]
                set name [string range $arg [expr {[string length $kind] + 1}] end]
                switch -exact -- $kind {
                    ok {incr ::passed}
                    err {
                        incr ::failed
                        lappend ::failures "$name ([relname $::job($fd,file)])"
                    }
                    skip {incr ::skipped}
                }
            }
            done {
                set ::job($fd,done) 1
                incr ::filtered [lindex $arg 3]
            }
        }
        return
    }
    lappend ::job($fd,record) $line
}

proc job_read {fd} {
    while {[gets $fd line] >= 0} {
        job_line $fd $line
    }
    if {[eof $fd]} {
        job_finish $fd
    }
}

proc job_timeout {fd} {
    global opt
    set ::job($fd,timedout) 1
    foreach p $::job($fd,pid) {kill_pid $p}
}

proc job_finish {fd {why ""}} {
    after cancel $::job($fd,timer)
    fileevent $fd readable {}
    fconfigure $fd -blocking 1
    set status ""
    if {[catch {close $fd} err]} {set status $err}
    # No server started by a test file outlives it.
    foreach p $::job($fd,servers) {kill_pid $p}
    set f [relname $::job($fd,file)]
    set leftover [string trim [join $::job($fd,record) "\n"]]
    if {!$::job($fd,done)} {
        incr ::failed
        set why "test file did not finish"
        if {[info exists ::job($fd,timedout)]} {
            set why "test file killed after $::opt(timeout) s"
        }
        if {$::job($fd,running) ne ""} {
            append why " (in test: $::job($fd,running))"
        }
        lappend ::failures "$f: $why"
        set msg "\[err\]: $f: $why"
        if {$status ne ""} {append msg "\n    exit: [string range $status 0 400]"}
        if {$leftover ne ""} {append msg "\n    last output:\n$leftover"}
        out $msg
    } elseif {$leftover ne ""} {
        out $leftover
    }
    set secs [format %.1f [expr {([clock milliseconds] - $::job($fd,start)) / 1000.0}]]
    out "\[done\]: $f ($secs s)"
    lappend ::slots $::job($fd,slot)
    array unset ::job $fd,*
    incr ::running -1
    start_next
}

start_next
if {![info exists ::all_done]} {
    vwait ::all_done
}

set secs [format %.1f [expr {([clock milliseconds] - $::start) / 1000.0}]]
out ""
if {[llength $::failures]} {
    out "!!! The following tests failed:"
    foreach f $::failures {puts "    $f"}
    out "(randomized tests used --seed $opt(seed))"
    out ""
}
if {$::skipped} {
    out "$::skipped test(s) skipped (see the \[skip\] lines for the reason)"
}
if {$::filtered} {
    out "$::filtered test(s) left out by --tags/--only"
}
out "All test files ran in $secs s against $opt(server)"
out "$::passed passed, $::failed failed"
exit [expr {$::failed ? 1 : 0}]
