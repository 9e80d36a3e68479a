# Goblin test harness -- a small RESP2/RESP3 client written in Tcl.
#
#   set r [redis_client -host 127.0.0.1 -port 6379 ?-defer 0|1? ?-timeout ms?]
#   $r set foo bar            ;# send a command and read its reply
#   $r rawcall get foo        ;# send a command, return the exact reply bytes
#   $r write $bytes; $r flush ;# raw protocol writes
#   $r read                   ;# read one reply (deferred clients, pipelines)
#   $r readraw 1              ;# from now on `read` returns one raw line
#   $r read_bytes N           ;# exactly N bytes from the socket
#   $r read_all ?ms? ?first?  ;# every byte that arrives until ms of silence/EOF
#                             ;# (the first byte waited for up to first ms)
#   $r wait_closed ?ms?       ;# 1 when the server closed the connection
#   $r close
#
# Reply mapping (RESP2 and RESP3):
#   simple string, integer, double, big number, verbatim text -> Tcl string
#   bulk string -> the bytes (one char per byte, binary safe)
#   null bulk, null array, RESP3 null                        -> {} (empty)
#   array, set, push                                        -> Tcl list
#   map                                                     -> flat key/value list
#   boolean                                                 -> 1 or 0
#   error reply at top level -> Tcl error whose message is the error text
#       (without the leading '-') and whose errorCode is {RESP ERR}
#   error inside an aggregate -> the error text as a plain element
#   attribute -> stored (`$r attributes`), the following reply is returned
# Use `rawcall` when a test must tell null from empty or check exact bytes.

namespace eval ::resp {
    variable nextid 0
    variable st
    variable ev
    variable default_timeout 30000
    # When set (clock milliseconds), commands sent after it fail: the test
    # harness sets it so that a test looping on commands cannot run forever.
    variable deadline ""
    # Methods handled by the client itself; anything else is a server command.
    variable methods {read write flush close readraw rawcall read_bytes
        read_all wait_closed deferred timeout fd attributes pending
        read_raw_reply}
}

proc ::resp::client {args} {
    variable nextid
    variable st
    variable default_timeout
    set host 127.0.0.1
    set port 6379
    set defer 0
    set timeout $default_timeout
    foreach {k v} $args {
        switch -exact -- $k {
            -host {set host $v}
            -port {set port $v}
            -defer {set defer $v}
            -timeout {set timeout $v}
            default {error "redis_client: unknown option $k"}
        }
    }
    set fd [socket $host $port]
    # Nothing listening on a loopback port, and the kernel picking that
    # same port for this socket's end: TCP's simultaneous open connects the
    # socket to itself, and it would read its own commands back as replies.
    # That is a refused connection.
    set me [fconfigure $fd -sockname]
    set peer [fconfigure $fd -peername]
    if {[lindex $me 0] eq [lindex $peer 0] && [lindex $me 2] == [lindex $peer 2]} {
        close $fd
        error "couldn't open socket: connection refused (the socket connected to itself: nothing listens on $host:$port)"
    }
    fconfigure $fd -translation binary -encoding binary -blocking 0 \
        -buffering full -buffersize 262144
    set id [incr nextid]
    set st($id,fd) $fd
    set st($id,buf) ""
    set st($id,pos) 0
    set st($id,defer) $defer
    set st($id,readraw) 0
    set st($id,timeout) $timeout
    set st($id,attrib) {}
    set st($id,host) $host
    set st($id,port) $port
    set name ::resp::client_$id
    proc $name {args} "::resp::dispatch $id {*}\$args"
    return $name
}

proc ::resp::encode {argv} {
    set out "*[llength $argv]\r\n"
    foreach a $argv {
        append out "\$[string length $a]\r\n$a\r\n"
    }
    return $out
}

proc ::resp::dispatch {id args} {
    variable st
    variable methods
    if {![info exists st($id,fd)]} {
        error "client $id is closed"
    }
    set m [lindex $args 0]
    if {[lsearch -exact $methods $m] >= 0} {
        return [::resp::m_$m $id {*}[lrange $args 1 end]]
    }
    # A server command.
    variable deadline
    if {$deadline ne "" && [clock milliseconds] > $deadline} {
        return -code error -errorcode {RESP DEADLINE} \
            "test timeout: the test ran past its time limit ($::t::test_timeout s, --test-timeout)"
    }
    send $id [encode $args]
    if {$st($id,defer)} {return}
    return [top_read $id]
}

proc ::resp::send {id data} {
    variable st
    set fd $st($id,fd)
    if {[catch {
        fconfigure $fd -blocking 1
        puts -nonewline $fd $data
        flush $fd
        fconfigure $fd -blocking 0
    } err]} {
        catch {fconfigure $fd -blocking 0}
        return -code error -errorcode {RESP IO} "I/O error writing to server: $err"
    }
}

# --- client methods ------------------------------------------------------

proc ::resp::m_write {id data} {
    variable st
    if {[catch {puts -nonewline $st($id,fd) $data} err]} {
        return -code error -errorcode {RESP IO} "I/O error writing to server: $err"
    }
    return
}

proc ::resp::m_flush {id} {
    send $id ""
}

proc ::resp::m_read {id} {
    top_read $id
}

proc ::resp::m_readraw {id on} {
    variable st
    set st($id,readraw) $on
    return
}

proc ::resp::m_deferred {id on} {
    variable st
    set st($id,defer) $on
    return
}

proc ::resp::m_timeout {id ms} {
    variable st
    set old $st($id,timeout)
    set st($id,timeout) $ms
    return $old
}

proc ::resp::m_fd {id} {
    variable st
    return $st($id,fd)
}

proc ::resp::m_attributes {id} {
    variable st
    return $st($id,attrib)
}

# Bytes already received but not yet consumed.
proc ::resp::m_pending {id} {
    variable st
    return [expr {[string length $st($id,buf)] - $st($id,pos)}]
}

proc ::resp::m_close {id} {
    variable st
    catch {close $st($id,fd)}
    array unset st $id,*
    catch {rename ::resp::client_$id {}}
    return
}

# Send a command; return its reply as the exact bytes the server sent.
proc ::resp::m_rawcall {id args} {
    send $id [encode $args]
    return [m_read_raw_reply $id]
}

# Read one complete reply and return its exact bytes.
proc ::resp::m_read_raw_reply {id} {
    variable st
    compact $id
    set start $st($id,pos)
    parse $id 0
    return [string range $st($id,buf) $start [expr {$st($id,pos) - 1}]]
}

proc ::resp::m_read_bytes {id n} {
    variable st
    while {[string length $st($id,buf)] - $st($id,pos) < $n} {
        fill $id
    }
    set p $st($id,pos)
    set st($id,pos) [expr {$p + $n}]
    return [string range $st($id,buf) $p [expr {$p + $n - 1}]]
}

# Everything that arrives until `ms` milliseconds pass without new data or
# the server closes the connection; the first byte is waited for up to
# `first` ms (default: ms).
proc ::resp::m_read_all {id {ms 200} {first {}}} {
    variable st
    if {$first eq ""} {set first $ms}
    set wait $first
    while {1} {
        if {[catch {fill $id $wait} err]} {
            break
        }
        set wait $ms
    }
    set p $st($id,pos)
    set st($id,pos) [string length $st($id,buf)]
    return [string range $st($id,buf) $p end]
}

# Wait up to ms for the server to close the connection (unread data is
# consumed). Returns 1 when it closed, 0 when it is still open.
proc ::resp::m_wait_closed {id {ms 2000}} {
    variable st
    set deadline [expr {[clock milliseconds] + $ms}]
    while {1} {
        set left [expr {$deadline - [clock milliseconds]}]
        if {$left <= 0} {return 0}
        if {[catch {fill $id $left} err]} {
            if {[lindex $::errorCode 1] eq "EOF"} {return 1}
            if {[lindex $::errorCode 1] eq "TIMEOUT"} {return 0}
            # A reset connection counts as closed.
            return 1
        }
        set st($id,pos) [string length $st($id,buf)]
    }
}

# --- reading -------------------------------------------------------------

proc ::resp::compact {id} {
    variable st
    set p $st($id,pos)
    if {$p > 0 && ($p > 65536 || 2 * $p > [string length $st($id,buf)])} {
        set st($id,buf) [string range $st($id,buf) $p end]
        set st($id,pos) 0
    }
}

# Append whatever is available on the socket to the buffer, waiting up to
# timeout ms for something to arrive.
proc ::resp::fill {id {timeout {}}} {
    variable st
    variable ev
    set fd $st($id,fd)
    if {$timeout eq ""} {set timeout $st($id,timeout)}
    if {[catch {read $fd} data]} {
        return -code error -errorcode {RESP IO} "I/O error reading reply: $data"
    }
    if {$data ne ""} {
        append st($id,buf) $data
        return
    }
    if {[eof $fd]} {
        return -code error -errorcode {RESP EOF} "connection closed by server"
    }
    set ev($id) ""
    fileevent $fd readable [list set ::resp::ev($id) r]
    set aid [after $timeout [list set ::resp::ev($id) t]]
    vwait ::resp::ev($id)
    after cancel $aid
    catch {fileevent $fd readable {}}
    if {$ev($id) eq "t"} {
        return -code error -errorcode {RESP TIMEOUT} \
            "timeout: no reply from server within $timeout ms"
    }
    if {[catch {read $fd} data]} {
        return -code error -errorcode {RESP IO} "I/O error reading reply: $data"
    }
    if {$data eq "" && [eof $fd]} {
        return -code error -errorcode {RESP EOF} "connection closed by server"
    }
    append st($id,buf) $data
}

proc ::resp::line {id} {
    variable st
    while {[set i [string first "\r\n" $st($id,buf) $st($id,pos)]] < 0} {
        fill $id
    }
    set l [string range $st($id,buf) $st($id,pos) [expr {$i - 1}]]
    set st($id,pos) [expr {$i + 2}]
    return $l
}

proc ::resp::bulk {id len} {
    variable st
    while {[string length $st($id,buf)] - $st($id,pos) < $len + 2} {
        fill $id
    }
    set p $st($id,pos)
    set v [string range $st($id,buf) $p [expr {$p + $len - 1}]]
    if {[string range $st($id,buf) [expr {$p + $len}] [expr {$p + $len + 1}]] ne "\r\n"} {
        error "protocol error: bulk string of $len bytes not followed by CRLF"
    }
    set st($id,pos) [expr {$p + $len + 2}]
    return $v
}

proc ::resp::top_read {id} {
    variable st
    compact $id
    if {$st($id,readraw)} {
        return [line $id]
    }
    set st($id,attrib) {}
    return [parse $id 1]
}

proc ::resp::checklen {l} {
    set n [string range $l 1 end]
    if {![string is integer -strict $n]} {
        error "protocol error: bad length in reply line '$l'"
    }
    return $n
}

# Parse one reply. `top` is 1 for a top-level reply: error replies raise a
# Tcl error there, and are returned as text inside aggregates.
proc ::resp::parse {id top} {
    variable st
    set l [line $id]
    set t [string index $l 0]
    set p [string range $l 1 end]
    switch -exact -- $t {
        + - : - , - ( {
            return $p
        }
        - {
            if {$top} {
                return -code error -errorcode {RESP ERR} $p
            }
            return $p
        }
        $ {
            set n [checklen $l]
            if {$n < 0} {return {}}
            return [bulk $id $n]
        }
        = {
            set n [checklen $l]
            set v [bulk $id $n]
            return [string range $v 4 end]
        }
        ! {
            set n [checklen $l]
            set v [bulk $id $n]
            if {$top} {
                return -code error -errorcode {RESP ERR} $v
            }
            return $v
        }
        * - ~ - > {
            set n [checklen $l]
            if {$n < 0} {return {}}
            set out {}
            for {set i 0} {$i < $n} {incr i} {
                lappend out [parse $id 0]
            }
            return $out
        }
        % {
            set n [checklen $l]
            set out {}
            for {set i 0} {$i < 2 * $n} {incr i} {
                lappend out [parse $id 0]
            }
            return $out
        }
        | {
            set n [checklen $l]
            set a {}
            for {set i 0} {$i < 2 * $n} {incr i} {
                lappend a [parse $id 0]
            }
            lappend st($id,attrib) $a
            return [parse $id $top]
        }
        _ {
            return {}
        }
        # {
            if {$p eq "t"} {return 1}
            if {$p eq "f"} {return 0}
            error "protocol error: bad boolean '$l'"
        }
        default {
            error "protocol error: unexpected reply line '[string range $l 0 80]'"
        }
    }
}
