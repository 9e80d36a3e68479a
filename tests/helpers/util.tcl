# Goblin test harness -- tests, assertions, tags and reporting.
#
# A test file is run by a child tclsh (see test_helper.tcl). Every result is
# printed as a "record" (lines ended by "@@end") so that the parent can print
# records of parallel files without mixing their lines, and is announced by
# a "@@result ok|err|skip NAME" line that the parent counts.

namespace eval ::t {
    variable tags {}          ;# stack of tags from start_server / tags blocks
    variable include {}       ;# --tags tag
    variable exclude {}       ;# --tags -tag
    variable only {}          ;# --only glob patterns on test names
    variable verbose 0
    variable file ""          ;# the test file being run
    variable server_kind goblin  ;# goblin | redis
    variable passed 0
    variable failed 0
    variable skipped 0
    variable filtered 0
    variable current_test ""
    variable test_timeout 90   ;# seconds; --test-timeout
}

# --- output ----------------------------------------------------------------

proc ::t::emit {text} {
    puts "$text\n@@end"
    flush stdout
}

proc ::t::control {line} {
    puts "@@$line"
    flush stdout
}

proc ::t::indent {text} {
    set out {}
    foreach l [split [string trimright $text] "\n"] {
        lappend out "    $l"
    }
    return [join $out "\n"]
}

proc ::t::record_ok {name ms} {
    variable passed
    incr passed
    control "result ok $name"
    emit "\[ok\]: $name ($ms ms)"
}

proc ::t::record_err {name detail} {
    variable failed
    variable file
    incr failed
    control "result err $name"
    emit "\[err\]: $name in $file\n[indent $detail]"
}

proc ::t::record_skip {name reason} {
    variable skipped
    incr skipped
    control "result skip $name"
    emit "\[skip\]: $name ($reason)"
}

proc ::t::log {text} {
    emit $text
}

proc ::t::vlog {text} {
    variable verbose
    if {$verbose} {emit $text}
}

# --- tags ------------------------------------------------------------------

proc ::t::current_tags {{extra {}}} {
    variable tags
    set all {}
    foreach level $tags {
        foreach tg $level {lappend all $tg}
    }
    foreach tg $extra {lappend all $tg}
    return $all
}

# Empty result: run. Otherwise the reason the tags filter the test out.
proc ::t::tag_filter {taglist} {
    variable include
    variable exclude
    foreach tg $taglist {
        if {[lsearch -exact $exclude $tg] >= 0} {
            return "tag '$tg' excluded"
        }
    }
    if {[llength $include]} {
        foreach tg $taglist {
            if {[lsearch -exact $include $tg] >= 0} {return ""}
        }
        return "none of the tags {$include}"
    }
    return ""
}

# Tests for Goblin-specific behaviour carry the goblin_only tag; against
# redis-server they are skipped with a printed reason (never silently).
proc ::t::kind_skip {taglist} {
    variable server_kind
    if {$server_kind eq "redis" && [lsearch -exact $taglist goblin_only] >= 0} {
        return "goblin_only: not applicable to redis-server"
    }
    # Redis 7.0 behaviour Goblin does not have yet: the test checks it
    # against redis-server and is skipped, with this reason, against Goblin.
    if {$server_kind eq "goblin" && [lsearch -exact $taglist goblin_pending] >= 0} {
        return "goblin_pending: Goblin does not match Redis 7.0 here yet"
    }
    return ""
}

proc tags {taglist body} {
    lappend ::t::tags $taglist
    try {
        uplevel 1 $body
    } finally {
        set ::t::tags [lrange $::t::tags 0 end-1]
    }
}

# --- tests -----------------------------------------------------------------

proc test {name body {testtags {}}} {
    set all [::t::current_tags $testtags]
    if {[llength $::t::only]} {
        set match 0
        foreach pat $::t::only {
            if {[string match $pat $name]} {set match 1}
        }
        if {!$match} {
            incr ::t::filtered
            return
        }
    }
    set why [::t::tag_filter $all]
    if {$why ne ""} {
        incr ::t::filtered
        ::t::vlog "\[filtered\]: $name ($why)"
        return
    }
    set why [::t::kind_skip $all]
    if {$why ne ""} {
        ::t::record_skip $name $why
        return
    }
    set ::t::current_test $name
    ::t::control "running $name"
    set start [clock milliseconds]
    set ::resp::deadline [expr {$start + 1000 * $::t::test_timeout}]
    set code [catch {uplevel 1 $body} msg opts]
    set ::resp::deadline ""
    set ms [expr {[clock milliseconds] - $start}]
    set ::t::current_test ""
    # A test that leaves the server dead fails, and the server is restarted
    # so that the rest of the file still runs.
    set death [::srv::check_after_test]
    if {$code == 1} {
        set ec [dict get $opts -errorcode]
        if {[lindex $ec 0] eq "ASSERTION"} {
            set detail $msg
        } elseif {[lindex $ec 0] eq "NEEDS_FEATURE"} {
            set detail $msg
        } else {
            set detail "exception: $msg"
            if {$::t::verbose} {
                append detail "\n[dict get $opts -errorinfo]"
            } else {
                set tr [::t::short_trace [dict get $opts -errorinfo]]
                if {$tr ne ""} {append detail "\n$tr"}
            }
        }
        if {$death ne ""} {append detail "\n$death"}
        ::t::record_err $name $detail
    } elseif {$code == 0 || $code == 2} {
        if {$death ne ""} {
            ::t::record_err $name $death
        } else {
            ::t::record_ok $name $ms
        }
    } else {
        ::t::record_err $name "test body ended with [expr {$code == 3 ? "break" : "continue"}]"
    }
    return
}

# The command of the test body that raised the error, from errorInfo.
proc ::t::short_trace {info} {
    set lines [split $info "\n"]
    set cmd ""
    set out ""
    for {set i 0} {$i < [llength $lines]} {incr i} {
        set l [lindex $lines $i]
        if {[regexp {^\s*\("uplevel" body line (\d+)\)} $l -> n]} {
            # The lines before hold 'invoked from within' and the command.
            set j [expr {$i - 1}]
            set c {}
            while {$j >= 0 && ![string match {*invoked from within*} [lindex $lines $j]]} {
                set c [linsert $c 0 [lindex $lines $j]]
                incr j -1
            }
            set out "at body line $n: [string range [string trim [join $c " "]] 0 200]"
            break
        }
    }
    return $out
}

# --- assertions ------------------------------------------------------------

proc fail {msg} {
    return -code error -errorcode ASSERTION "assertion failed: $msg"
}

proc ::t::show {v} {
    # Show control and non-ASCII bytes escaped so that protocol bytes are
    # readable in failure messages.
    set limit 600
    if {[string length $v] > $limit} {
        set v "[string range $v 0 $limit]...([string length $v] bytes)"
    }
    set out ""
    foreach c [split $v ""] {
        scan $c %c n
        if {$c eq "\r"} {append out {\r}} elseif {$c eq "\n"} {append out {\n}} \
        elseif {$c eq "\t"} {append out {\t}} \
        elseif {$n < 32 || $n > 126} {append out [format {\x%02x} [expr {$n & 0xff}]]} \
        else {append out $c}
    }
    return "'$out'"
}

proc ::t::where {} {
    # The assertion's caller inside the test body, for the failure message.
    set f [info frame -2]
    if {[dict exists $f line] && [dict exists $f file]} {
        return " ([file tail [dict get $f file]]:[dict get $f line])"
    }
    if {[dict exists $f cmd]} {
        set c [string range [dict get $f cmd] 0 120]
        return "\n    in: $c"
    }
    return ""
}

proc assert {condition {detail {}}} {
    if {![uplevel 1 [list expr $condition]]} {
        set msg "expected \[$condition\] to be true"
        if {$detail ne ""} {append msg " ($detail)"}
        return -code error -errorcode ASSERTION "assertion failed: $msg[::t::where]"
    }
}

proc assert_equal {expected value {detail {}}} {
    if {$expected ne $value} {
        set msg "expected [::t::show $expected] but got [::t::show $value]"
        if {$detail ne ""} {append msg " ($detail)"}
        return -code error -errorcode ASSERTION "assertion failed: $msg[::t::where]"
    }
}

proc assert_not_equal {unexpected value {detail {}}} {
    if {$unexpected eq $value} {
        set msg "expected something other than [::t::show $value]"
        if {$detail ne ""} {append msg " ($detail)"}
        return -code error -errorcode ASSERTION "assertion failed: $msg[::t::where]"
    }
}

proc assert_match {pattern value {detail {}}} {
    if {![string match $pattern $value]} {
        set msg "expected [::t::show $value] to match [::t::show $pattern]"
        if {$detail ne ""} {append msg " ($detail)"}
        return -code error -errorcode ASSERTION "assertion failed: $msg[::t::where]"
    }
}

proc assert_no_match {pattern value} {
    if {[string match $pattern $value]} {
        return -code error -errorcode ASSERTION \
            "assertion failed: expected [::t::show $value] not to match [::t::show $pattern][::t::where]"
    }
}

# assert_error pattern body: body must raise an error whose message matches
# the glob pattern (error replies have no leading '-').
proc assert_error {pattern body} {
    set code [catch {uplevel 1 $body} msg]
    if {$code != 1} {
        return -code error -errorcode ASSERTION \
            "assertion failed: expected an error matching [::t::show $pattern] but got the reply [::t::show $msg][::t::where]"
    }
    if {![string match $pattern $msg]} {
        return -code error -errorcode ASSERTION \
            "assertion failed: expected an error matching [::t::show $pattern] but got the error [::t::show $msg][::t::where]"
    }
}

proc assert_range {value min max {detail {}}} {
    if {![string is double -strict $value] || $value < $min || $value > $max} {
        set msg "expected [::t::show $value] to be within \[$min, $max\]"
        if {$detail ne ""} {append msg " ($detail)"}
        return -code error -errorcode ASSERTION "assertion failed: $msg[::t::where]"
    }
}

proc assert_morethan {value min} {
    if {![string is double -strict $value] || !($value > $min)} {
        return -code error -errorcode ASSERTION \
            "assertion failed: expected [::t::show $value] > $min[::t::where]"
    }
}

proc assert_lessthan {value max} {
    if {![string is double -strict $value] || !($value < $max)} {
        return -code error -errorcode ASSERTION \
            "assertion failed: expected [::t::show $value] < $max[::t::where]"
    }
}

proc assert_type {type key} {
    assert_equal $type [r type $key] "TYPE $key"
}

proc assert_encoding {enc key} {
    assert_equal $enc [r object encoding $key] "OBJECT ENCODING $key"
}

# Lists compared as sets.
proc assert_same_elements {expected value {detail {}}} {
    assert_equal [lsort $expected] [lsort $value] $detail
}

# wait_for_condition maxtries delay_ms {condition} else {script}
proc wait_for_condition {maxtries delay condition else elsescript} {
    if {$else ne "else"} {
        error "wait_for_condition: expected 'else', got '$else'"
    }
    while {[incr maxtries -1] >= 0} {
        if {[uplevel 1 [list expr $condition]]} return
        after $delay
    }
    uplevel 1 $elsescript
    # The else script is expected to fail; make sure it does.
    return -code error -errorcode ASSERTION \
        "assertion failed: condition never became true: $condition"
}

# Wait until the current server counts n blocked clients (INFO clients).
proc wait_for_blocked_clients {n} {
    wait_for_condition 200 10 {[s blocked_clients] == $n} else {
        fail "blocked_clients did not reach $n ([s blocked_clients])"
    }
}

# --- feature checks ----------------------------------------------------------
#
# needs_feature NAME makes the current test fail with a named cause when the
# server lacks a capability the test depends on (never a silent skip).
#   command:NAME        COMMAND INFO knows the command (NAME may be "a|b")
#   config:NAME         CONFIG GET returns the parameter
#   info:SECTION        INFO SECTION is not empty
#   debug:SUBCOMMAND    DEBUG HELP mentions the subcommand
# Other names may be registered with `register_feature name script`, where
# script returns "" when the feature is present or the reason it is not.

namespace eval ::t { variable probes; array set probes {} }

proc register_feature {name script} {
    set ::t::probes($name) $script
}

proc needs_feature {name} {
    set why ""
    if {[info exists ::t::probes($name)]} {
        set why [uplevel #0 $::t::probes($name)]
    } elseif {[string match command:* $name]} {
        set c [string range $name 8 end]
        if {[catch {r command info $c} res]} {
            set why "COMMAND INFO $c failed: $res"
        } elseif {[llength $res] == 0 || [lindex $res 0] eq ""} {
            set why "COMMAND INFO $c knows no such command"
        }
    } elseif {[string match config:* $name]} {
        set c [string range $name 7 end]
        if {[catch {r config get $c} res]} {
            set why "CONFIG GET $c failed: $res"
        } elseif {[llength $res] == 0} {
            set why "CONFIG GET $c returned nothing"
        }
    } elseif {[string match info:* $name]} {
        set c [string range $name 5 end]
        if {[catch {r info $c} res]} {
            set why "INFO $c failed: $res"
        } elseif {[string trim $res] eq ""} {
            set why "INFO $c is empty"
        }
    } elseif {[string match debug:* $name]} {
        set c [string range $name 6 end]
        if {[catch {r debug help} res]} {
            set why "DEBUG HELP failed: $res"
        } elseif {![string match -nocase "*$c*" [join $res "\n"]]} {
            set why "DEBUG HELP does not list $c"
        }
    } else {
        error "needs_feature: unknown feature '$name'"
    }
    if {$why ne ""} {
        return -code error -errorcode [list NEEDS_FEATURE $name] \
            "needs feature '$name': $why"
    }
}

# --- misc helpers -------------------------------------------------------------

proc randstring {min max {type binary}} {
    set len [expr {$min + int(rand() * ($max - $min + 1))}]
    set out ""
    switch -exact -- $type {
        alpha {set lo 97; set hi 122}
        alnum {set lo 48; set hi 122}
        compr {set lo 48; set hi 52}
        default {set lo 0; set hi 255}
    }
    for {set i 0} {$i < $len} {incr i} {
        set n [expr {$lo + int(rand() * ($hi - $lo + 1))}]
        if {$type eq "alnum" && $n > 57 && $n < 97} {set n [expr {97 + $n % 26}]}
        append out [format %c $n]
    }
    return $out
}

# Field from an INFO reply ("field:value" lines).
proc getInfoProperty {infostr property} {
    foreach l [split $infostr "\r\n"] {
        if {[string match "$property:*" $l]} {
            return [string range $l [expr {[string length $property] + 1}] end]
        }
    }
    return ""
}

proc s {property} {
    getInfoProperty [r info] $property
}

# Dictionary form of a flat key/value reply (RESP3 map or RESP2 pairs).
proc kv {reply} {
    set d {}
    foreach {k v} $reply {dict set d $k $v}
    return $d
}

proc debug_sleep_ms {ms} {
    after $ms
}

# Create `key` holding a value that is not a string (for WRONGTYPE checks),
# with whichever collection type the server has: list, hash, set or zset.
# Returns the TYPE name; the test fails with a named cause when none exists.
register_feature nonstring-type {
    foreach c {lpush hset sadd zadd} {
        if {![catch {r command info $c} res] && [lindex $res 0] ne ""} {return ""}
    }
    return "none of LPUSH, HSET, SADD, ZADD is known (COMMAND INFO)"
}

proc make_nonstring_key {key} {
    needs_feature nonstring-type
    r del $key
    foreach {c args type} {lpush {a} list hset {f v} hash sadd {m} set zadd {1 m} zset} {
        if {![catch {r command info $c} res] && [lindex $res 0] ne ""} {
            r $c $key {*}$args
            return $type
        }
    }
}

# On a fresh connection (HELLO 3 first with hello3): every command of cmds
# (a list of argument lists) in one write, then every byte that arrives
# until ms of silence, the first byte waited for up to first ms ("": ms).
proc pipe_bytes {cmds ms hello3 {first {}}} {
    set c [redis_client]
    if {$hello3} {$c hello 3}
    set out ""
    foreach cmd $cmds {append out [::resp::encode $cmd]}
    $c write $out
    $c flush
    set got [$c read_all $ms $first]
    $c close
    return $got
}

# The RESP bytes of a Pub/Sub confirmation or message (a push in RESP3):
# arguments are bulk strings, ":N" an integer, "(nil)" a null.
proc push_bytes {resp args} {
    set out [expr {$resp == 3 ? ">" : "*"}][llength $args]\r\n
    foreach a $args {
        if {$a eq "(nil)"} {
            append out [expr {$resp == 3 ? "_\r\n" : "\$-1\r\n"}]
        } elseif {[regexp {^:-?[0-9]+$} $a]} {
            append out $a\r\n
        } else {
            append out "\$[string length $a]\r\n$a\r\n"
        }
    }
    return $out
}
