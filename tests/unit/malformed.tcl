# Malformed and hostile RESP input: a catalogue of protocol errors (bad,
# negative, huge and non-numeric lengths, missing CRLF, oversized lines),
# NUL bytes, binary garbage, a multibulk of a million empty arguments, half
# requests and disconnects, and pipelines split at every byte boundary.
# Each bad connection gets Redis's protocol error and is closed; the other
# clients never notice. (tests/unit/protocol.tcl has the basic cases.)

# Send data on a fresh connection; return {reply closed}: every byte that
# arrived within ms, and whether the server closed the connection.
proc send_raw {data {ms 300}} {
    set c [redis_client]
    $c write $data
    $c flush
    set reply [$c read_all $ms]
    set closed [$c wait_closed $ms]
    $c close
    return [list $reply $closed]
}

# The bystander: a client connected for the whole file, in the middle of a
# MULTI. After every test it must still be there and answer.
proc bystander_check {} {
    assert_equal QUEUED [$::bystander incr bystander-count]
    assert_equal PONG [r ping]
}

start_server {tags {malformed}} {
    set ::bystander [redis_client]
    $::bystander multi

    # --- Protocol errors: the reply, then the connection closes ---------------------------------

    foreach {name data err} {
        {multibulk length with a plus sign}      "*+1\r\n\$4\r\nPING\r\n"       {invalid multibulk length}
        {multibulk length with a space}          "* 1\r\n\$4\r\nPING\r\n"       {invalid multibulk length}
        {multibulk length with a leading zero}   "*01\r\n\$4\r\nPING\r\n"       {invalid multibulk length}
        {multibulk length not a number}          "*abc\r\n"                     {invalid multibulk length}
        {empty multibulk length}                 "*\r\nPING\r\n"                {invalid multibulk length}
        {multibulk length over INT_MAX}          "*2147483648\r\n"              {invalid multibulk length}
        {multibulk length over 2^64}             "*18446744073709551616\r\n"    {invalid multibulk length}
        {multibulk length with a trailing letter} "*1x\r\n"                     {invalid multibulk length}
        {bulk length with a plus sign}           "*1\r\n\$+4\r\nPING\r\n"       {invalid bulk length}
        {bulk length with a leading zero}        "*1\r\n\$04\r\nPING\r\n"       {invalid bulk length}
        {negative bulk length}                   "*1\r\n\$-1\r\n"               {invalid bulk length}
        {very negative bulk length}              "*1\r\n\$-9223372036854775808\r\n" {invalid bulk length}
        {bulk length with a trailing space}      "*1\r\n\$4 \r\nPING\r\n"       {invalid bulk length}
        {empty bulk length}                      "*1\r\n\$\r\nPING\r\n"         {invalid bulk length}
        {bulk length over 2^64}                  "*1\r\n\$99999999999999999999\r\n" {invalid bulk length}
        {bulk length over proto-max-bulk-len}    "*1\r\n\$536870913\r\n"        {invalid bulk length}
        {bulk without its dollar}                "*1\r\nPING\r\n"               {expected '$', got 'P'}
        {an integer where a bulk should be}      "*2\r\n\$4\r\nECHO\r\n:1\r\n"  {expected '$', got ':'}
        {a bare CR after the count}              "*1\r\$4\r\nPING\r\n"          {expected '$', got '4'}
        {LF-only line ends in a multibulk}       "*1\n\$4\nPING\r\n"            {invalid multibulk length}
        {unbalanced quotes inline}               "SET k \"v\r\n"                {unbalanced quotes in request}
    } {
        test "Protocol error: $name" {
            lassign [send_raw $data] reply closed
            assert_equal "-ERR Protocol error: $err\r\n" $reply
            assert_equal 1 $closed "connection closed after the error"
            bystander_check
        }
    }

    test {Commands before a protocol error run; what follows is ignored} {
        r del before after
        lassign [send_raw "SET before 1\r\n*1\r\n\$x\r\nSET after 1\r\n"] reply closed
        assert_equal "+OK\r\n-ERR Protocol error: invalid bulk length\r\n" $reply
        assert_equal 1 $closed
        assert_equal 1 [r exists before]
        assert_equal 0 [r exists after]
        bystander_check
    }

    test {Unauthenticated clients are limited to 10 arguments and 16 KiB bulks} {
        r config set requirepass secret
        lassign [send_raw "*11\r\n"] reply closed
        assert_equal "-ERR Protocol error: unauthenticated multibulk length\r\n" $reply
        assert_equal 1 $closed
        lassign [send_raw "*1\r\n\$16385\r\n"] reply closed
        assert_equal "-ERR Protocol error: unauthenticated bulk length\r\n" $reply
        assert_equal 1 $closed
        # At the limits it is only NOAUTH.
        lassign [send_raw "*2\r\n\$4\r\nECHO\r\n\$16384\r\n[string repeat a 16384]\r\n"] reply closed
        assert_match "-NOAUTH Authentication required.\r\n" $reply
        assert_equal 0 $closed
        r config set requirepass ""
        bystander_check
    }

    # --- Odd but valid ------------------------------------------------------------------------

    test {Bulk data is not checked for its CRLF: the two bytes are skipped} {
        lassign [send_raw "*1\r\n\$4\r\nPINGxx*1\r\n\$4\r\nPING\r\n"] reply closed
        assert_equal "+PONG\r\n+PONG\r\n" $reply
        assert_equal 0 $closed
    }

    test {Zero and negative multibulk counts are empty requests} {
        lassign [send_raw "*0\r\n*-1\r\n*-5\r\n*1\r\n\$4\r\nPING\r\n"] reply closed
        assert_equal "+PONG\r\n" $reply
        assert_equal 0 $closed
    }

    test {Empty inline lines between requests are ignored} {
        lassign [send_raw "*1\r\n\$4\r\nPING\r\n\r\n\n\r\n*1\r\n\$4\r\nPING\r\n"] reply closed
        assert_equal "+PONG\r\n+PONG\r\n" $reply
    }

    test {A bare CR inside an inline line separates arguments} {
        lassign [send_raw "ECHO a\rb\r\n"] reply closed
        assert_equal "-ERR wrong number of arguments for 'echo' command\r\n" $reply
        assert_equal 0 $closed
    }

    test {A dollar line on its own is an inline command} {
        lassign [send_raw "\$4\r\nPING\r\n"] reply closed
        assert_equal "-ERR unknown command '\$4', with args beginning with: \r\n+PONG\r\n" $reply
        assert_equal 0 $closed
    }

    test {Arguments with NUL, CR and LF bytes round-trip} {
        set v "a\x00b\r\nc\x00\x01\xff"
        r set binkey $v
        assert_equal $v [r get binkey]
        lassign [send_raw "*2\r\n\$3\r\nGET\r\n\$6\r\nbinkey\r\n"] reply closed
        assert_equal "\$[string length $v]\r\n$v\r\n" $reply
    }

    # --- NUL bytes in header and inline lines --------------------------------------------------

    test {A NUL byte before an inline line end keeps the request incomplete} {
        # Redis finds line ends with strchr(): the NUL hides the newline.
        set c [redis_client]
        $c write "PING\x00\r\nPING\r\n"
        $c flush
        assert_equal "" [$c read_all 300]
        # Until the line is too big to be an inline request.
        $c write [string repeat x 70000]
        $c flush
        assert_equal "-ERR Protocol error: too big inline request\r\n" [$c read_all 1000]
        assert_equal 1 [$c wait_closed 1000]
        bystander_check
    }

    test {A NUL byte in a multibulk header keeps the request incomplete} {
        set c [redis_client]
        $c write "*1\x00\r\n\$4\r\nPING\r\n"
        $c flush
        assert_equal "" [$c read_all 300]
        $c write [string repeat x 70000]
        $c flush
        assert_equal "-ERR Protocol error: too big mbulk count string\r\n" [$c read_all 1000]
        assert_equal 1 [$c wait_closed 1000]
        bystander_check
    }

    # --- Oversized lines -------------------------------------------------------------------------

    test {Inline line past 64 KiB without a newline} {
        lassign [send_raw [string repeat a 70000] 1000] reply closed
        assert_equal "-ERR Protocol error: too big inline request\r\n" $reply
        assert_equal 1 $closed
        bystander_check
    }

    test {Multibulk count line past 64 KiB} {
        lassign [send_raw "*[string repeat 1 70000]" 1000] reply closed
        assert_equal "-ERR Protocol error: too big mbulk count string\r\n" $reply
        assert_equal 1 $closed
    }

    test {Bulk count line past 64 KiB} {
        lassign [send_raw "*1\r\n\$[string repeat 1 70000]" 1000] reply closed
        assert_equal "-ERR Protocol error: too big bulk count string\r\n" $reply
        assert_equal 1 $closed
        bystander_check
    }

    # --- Big requests ------------------------------------------------------------------------------

    test {A multibulk of one million empty arguments} {
        set c [redis_client]
        $c write "*1000001\r\n\$3\r\nDEL\r\n[string repeat "\$0\r\n\r\n" 1000000]"
        $c flush
        assert_equal 0 [$c read]
        # And one whose command name is empty.
        $c write "*1000000\r\n[string repeat "\$0\r\n\r\n" 1000000]"
        $c flush
        catch {$c read} e
        assert_match "ERR unknown command '', with args beginning with: '' '' '' *" $e
        assert_equal PONG [$c ping]
        bystander_check
    }

    test {Binary garbage: errors at most, and nobody else is affected} {
        set garbage ""
        for {set i 0} {$i < 200000} {incr i} {
            append garbage [format %c [expr {int(rand() * 256)}]]
        }
        set c [redis_client]
        catch {
            $c write $garbage
            $c flush
        }
        set reply [$c read_all 500]
        # Whatever came back is error replies (or nothing).
        foreach line [split [string trimright $reply "\n"] "\n"] {
            assert_match "-*" $line
        }
        $c close
        assert_equal PONG [r ping]
        bystander_check
    }

    # --- Half requests and disconnects ------------------------------------------------------------

    test {A request cut at any byte and disconnected changes nothing} {
        r del halfkey
        set before [llength [split [string trim [r client list]] "\n"]]
        set full [::resp::encode {SET halfkey value}]
        for {set i 1} {$i < [string length $full]} {incr i} {
            set c [redis_client]
            $c write [string range $full 0 [expr {$i - 1}]]
            $c flush
            $c close
        }
        set inline "SET halfkey value"
        for {set i 1} {$i <= [string length $inline]} {incr i} {
            set c [redis_client]
            $c write [string range $inline 0 [expr {$i - 1}]]
            $c flush
            $c close
        }
        assert_equal 0 [r exists halfkey]
        # The server went through all the disconnects.
        wait_for_condition 50 20 {[llength [split [string trim [r client list]] "\n"]] == $before} else {
            fail "half-request clients are still listed: [r client list]"
        }
        bystander_check
    }

    test {A client disconnecting in the middle of a large bulk} {
        set c [redis_client]
        $c write "*3\r\n\$3\r\nSET\r\n\$7\r\nbigbulk\r\n\$10000000\r\n[string repeat z 3000000]"
        $c flush
        $c close
        assert_equal 0 [r exists bigbulk]
        bystander_check
    }

    # --- Pipelines split at every byte boundary ------------------------------------------------------

    # A mixed pipeline of n requests (multibulk and inline, binary values)
    # and the replies it must produce on an empty database.
    proc mixed_pipeline {n} {
        set req ""
        set exp ""
        for {set i 0} {$i < $n} {incr i} {
            switch [expr {$i % 5}] {
                0 {
                    set v "v$i\x00\r\n"
                    append req [::resp::encode [list SET pk$i $v]]
                    append exp "+OK\r\n"
                }
                1 {
                    set k pk[expr {$i - 1}]
                    set v "v[expr {$i - 1}]\x00\r\n"
                    append req [::resp::encode [list GET $k]]
                    append exp "\$[string length $v]\r\n$v\r\n"
                }
                2 {
                    append req "INCR counter\r\n"
                    append exp ":[expr {$i / 5 + 1}]\r\n"
                }
                3 {
                    append req [::resp::encode [list ECHO [string repeat e [expr {$i % 97}]]]]
                    append exp "\$[expr {$i % 97}]\r\n[string repeat e [expr {$i % 97}]]\r\n"
                }
                4 {
                    append req "PING\r\n"
                    append exp "+PONG\r\n"
                }
            }
        }
        return [list $req $exp]
    }

    test {1000 pipelined requests sent one byte at a time} {
        r flushall
        lassign [mixed_pipeline 1000] req exp
        set c [redis_client]
        fconfigure [$c fd] -buffering none
        for {set i 0} {$i < [string length $req]} {incr i} {
            $c write [string index $req $i]
        }
        $c flush
        assert_equal $exp [$c read_bytes [string length $exp]]
        assert_equal "" [$c read_all 50]
        bystander_check
    }

    test {1000 pipelined requests in chunks of every size from 1 to 64} {
        lassign [mixed_pipeline 1000] req exp
        for {set size 1} {$size <= 64} {incr size} {
            r flushall
            set c [redis_client]
            for {set i 0} {$i < [string length $req]} {incr i $size} {
                $c write [string range $req $i [expr {$i + $size - 1}]]
                $c flush
            }
            assert_equal $exp [$c read_bytes [string length $exp]] "chunk size $size"
            $c close
        }
        bystander_check
    }

    test {A pipeline split in two at every byte, with a pause between the parts} {
        lassign [mixed_pipeline 5] req exp
        for {set i 1} {$i < [string length $req]} {incr i} {
            r flushall
            set c [redis_client]
            $c write [string range $req 0 [expr {$i - 1}]]
            $c flush
            after 2
            $c write [string range $req $i end]
            $c flush
            assert_equal $exp [$c read_bytes [string length $exp]] "split at $i"
            $c close
        }
        bystander_check
    }

    test {The bystander's transaction ran through all of it} {
        r del bystander-count
        set res [$::bystander exec]
        assert_equal [llength $res] [lindex $res end]
        assert_morethan [llength $res] 30
    }
}
