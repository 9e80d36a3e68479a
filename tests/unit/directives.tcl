# Redis directives that work: unixsocket / unixsocketperm,
# stop-writes-on-bgsave-error (-MISCONF), rdbchecksum.

set ::misconf "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

# The error text of a command that must fail ("" when it succeeded).
proc err_of {args} {
    if {[catch {r {*}$args} e]} {return $e}
    return ""
}

proc wait_bgsave_done {} {
    wait_for_condition 200 50 {[s rdb_bgsave_in_progress] == 0} else {
        fail "BGSAVE still in progress"
    }
}

set ::sock "/tmp/goblin-directives-[pid].sock"
file delete -force $::sock

start_server [list tags {directives unixsocket} args [list --unixsocket $::sock --unixsocketperm 700 --protected-mode yes]] {

    test {unixsocket: redis-cli -s serves RESP} {
        assert_equal PONG [exec redis-cli -s $::sock ping]
        assert_equal OK [exec redis-cli -s $::sock set unixkey v]
        assert_equal v [r get unixkey]
    }

    test {unixsocket: CLIENT LIST shows addr=<path>:0 laddr=<path>:0 and flag U} {
        set line [exec redis-cli -s $::sock client list]
        assert_match "*addr=$::sock:0 laddr=$::sock:0 *" $line
        assert_match "* flags=U *" $line
        # a TCP client is not flagged U
        assert_match "* flags=N *" [r client info]
    }

    test {unixsocket: many connections spread over the workers all work} {
        for {set i 0} {$i < 8} {incr i} {
            assert_equal $i [exec redis-cli -s $::sock echo $i]
        }
    }

    test {unixsocketperm applies (octal) and both are immutable} {
        file stat $::sock st
        assert_equal 700 [format %o [expr {$st(mode) & 0o777}]]
        assert_equal [list unixsocketperm 700] [r config get unixsocketperm]
        assert_equal [list unixsocket $::sock] [r config get unixsocket]
        assert_match {*can't set immutable config*} [err_of config set unixsocketperm 777]
        assert_match {*can't set immutable config*} [err_of config set unixsocket /tmp/other.sock]
    }

    test {unixsocket: the socket file is removed at shutdown} {
        assert {[file exists $::sock]}
        server_expect_exit
        catch {exec redis-cli -s $::sock shutdown nosave}
        wait_for_condition 50 100 {![file exists $::sock]} else {
            fail "the socket file is still there after SHUTDOWN"
        }
    }
}

start_server {tags {directives misconf} overrides {save {900 1}}} {

    test {a failed BGSAVE refuses writes and PING with -MISCONF} {
        r set a 1
        file mkdir [file join [srv dir] dump.rdb] ;# rename() onto a directory fails
        r bgsave
        wait_bgsave_done
        assert_equal err [s rdb_last_bgsave_status]
        assert_equal $::misconf [err_of set a 2]
        assert_equal $::misconf [err_of ping]
        assert_equal 1 [r get a]
        assert_equal 1 [r exists a]
    }

    test {MISCONF inside MULTI discards the transaction} {
        r multi
        assert_equal $::misconf [err_of set a 3]
        assert_match {EXECABORT*} [err_of exec]
        assert_equal 1 [r get a]
    }

    test {stop-writes-on-bgsave-error no lifts the refusal, yes brings it back} {
        r config set stop-writes-on-bgsave-error no
        assert_equal OK [r set a 4]
        assert_equal PONG [r ping]
        r config set stop-writes-on-bgsave-error yes
        assert_equal $::misconf [err_of set a 5]
    }

    test {without save points writes are not refused} {
        r config set save ""
        assert_equal OK [r set a 6]
        r config set save "900 1"
        assert_equal $::misconf [err_of set a 7]
    }

    test {a successful SAVE lifts the refusal} {
        file delete [file join [srv dir] dump.rdb]
        assert_equal OK [r save]
        assert_equal ok [s rdb_last_bgsave_status]
        assert_equal OK [r set a 8]
        assert_equal PONG [r ping]
    }
}

proc dump_tail {} {
    set f [open [file join [srv dir] dump.rdb] rb]
    set data [read $f]
    close $f
    string range $data end-7 end
}

start_server {tags {directives rdbchecksum} args {--rdbchecksum no}} {

    test {rdbchecksum no writes a zero CRC, and the file loads back} {
        assert_match {*can't set immutable config*} [err_of config set rdbchecksum yes]
        r set k v
        r save
        assert_equal [string repeat \x00 8] [dump_tail]
        r debug reload
        assert_equal v [r get k]
    }
}

start_server {tags {directives rdbchecksum}} {

    test {rdbchecksum yes (the default) writes the CRC} {
        r set k v
        r save
        assert {[dump_tail] ne [string repeat \x00 8]}
    }
}

# enable-protected-configs: CONFIG SET dir and dbfilename (where the server
# writes files) only as it allows; "no" is Redis's default.
start_server {tags {directives protected} args {--enable-protected-configs no}} {
    test {enable-protected-configs no: CONFIG SET dir and dbfilename are refused, all or nothing} {
        set dir [lindex [r config get dir] 1]
        assert_equal "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config" \
            [err_of config set dir /tmp]
        assert_equal "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config" \
            [err_of config set dbfilename evil.rdb]
        assert_match "*can't set protected config" [err_of config set maxmemory 12345 dir /tmp]
        assert_equal 0 [lindex [r config get maxmemory] 1]
        assert_equal $dir [lindex [r config get dir] 1]
        assert_equal dump.rdb [lindex [r config get dbfilename] 1]
        assert_equal "ERR CONFIG SET failed (possibly related to argument 'enable-protected-configs') - can't set immutable config" \
            [err_of config set enable-protected-configs yes]
        assert_equal OK [r config set maxmemory 0]
    }
}

set ::psock "/tmp/goblin-protected-[pid].sock"
file delete -force $::psock
start_server [list tags {directives protected} args [list --unixsocket $::psock --unixsocketperm 700 \
                  --enable-protected-configs local --enable-debug-command local]] {
    test {enable-protected-configs and enable-debug-command local: loopback and unix socket clients may} {
        set dir [lindex [r config get dir] 1]
        assert_equal OK [r config set dbfilename other.rdb]
        assert_equal OK [r config set dir $dir dbfilename dump.rdb]
        assert_equal OK [exec redis-cli -s $::psock config set dbfilename viasock.rdb]
        assert_equal viasock.rdb [lindex [r config get dbfilename] 1]
        assert_equal OK [exec redis-cli -s $::psock debug sleep 0]
        assert_equal OK [r debug sleep 0]
        r config set dbfilename dump.rdb
    }
}
file delete -force $::psock

# CONFIG SET port moves the RESP listener at once (Redis's changeListenPort):
# a port somebody holds is refused and nothing changes; connections made
# before stay.
start_server {tags {directives port}} {
    test {CONFIG SET port listens on the new port, refuses a taken one, keeps the clients} {
        set old [srv port]
        set taken [::srv::free_port]
        set holder [socket -server {apply {args {}}} -myaddr 127.0.0.1 $taken]
        assert_equal "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs." \
            [err_of config set port $taken maxmemory 12345]
        close $holder
        assert_equal $old [lindex [r config get port] 1]
        assert_equal 0 [lindex [r config get maxmemory] 1]
        set new [::srv::free_port]
        assert_equal OK [r config set port $new]
        assert_equal PONG [exec redis-cli -p $new ping]
        assert_equal PONG [r ping]
        assert {[catch {exec redis-cli -p $old ping} e] || ![string match PONG $e]}
        assert_equal $new [lindex [r config get port] 1]
        assert_match "*tcp_port:$new*" [r info server]
        assert_equal OK [r config set port $old]
        assert_equal PONG [exec redis-cli -p $old ping]
    }

    # As Redis's changeBindAddr: the listeners move to the new addresses;
    # an address that cannot be bound keeps the old ones; connections made
    # before stay.
    test {CONFIG SET bind moves the listeners, refuses an address it cannot bind, keeps the clients} {
        set port [srv port]
        set msg "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses."
        assert_equal $msg [err_of config set bind 999.999.999.999]
        set holder [socket -server {apply {args {}}} -myaddr 127.0.0.3 $port]
        assert_equal $msg [err_of config set bind "127.0.0.1 127.0.0.3"]
        close $holder
        assert_equal 127.0.0.1 [lindex [r config get bind] 1]
        assert_equal PONG [exec redis-cli -h 127.0.0.1 -p $port ping]
        assert_equal OK [r config set bind "127.0.0.1 127.0.0.2"]
        assert_equal PONG [exec redis-cli -h 127.0.0.2 -p $port ping]
        assert_equal PONG [exec redis-cli -h 127.0.0.1 -p $port ping]
        assert_equal OK [r config set bind 127.0.0.2]
        assert {[catch {exec redis-cli -h 127.0.0.1 -p $port ping} e] || ![string match PONG $e]}
        assert_equal PONG [exec redis-cli -h 127.0.0.2 -p $port ping]
        assert_equal PONG [r ping]
        assert_equal OK [r config set bind 127.0.0.1]
        assert_equal PONG [exec redis-cli -h 127.0.0.1 -p $port ping]
        assert {[catch {exec redis-cli -h 127.0.0.2 -p $port ping} e] || ![string match PONG $e]}
    }

    test {CONFIG SET bind "" closes the TCP listeners; the clients stay, and another bind opens them again} {
        set port [srv port]
        assert_equal OK [r config set bind ""]
        assert_equal {bind {}} [r config get bind]
        assert {[catch {exec redis-cli -h 127.0.0.1 -p $port ping} e] || ![string match PONG $e]}
        assert_equal PONG [r ping]
        assert_equal OK [r config set bind 127.0.0.1]
        assert_equal PONG [exec redis-cli -h 127.0.0.1 -p $port ping]
    }

    test {CONFIG SET repl-backlog-size takes any size from 1 and holds at least 16 KiB} {
        set old [lindex [r config get repl-backlog-size] 1]
        assert_equal OK [r config set repl-backlog-size 1]
        assert_equal 16384 [lindex [r config get repl-backlog-size] 1]
        assert_error {*argument must be between 1 and*} {r config set repl-backlog-size 0}
        assert_equal OK [r config set repl-backlog-size 100000]
        assert_equal 100000 [lindex [r config get repl-backlog-size] 1]
        r config set repl-backlog-size $old
    }
}

# bind-source-addr: the replica's link to its primary leaves from that
# address (Redis 7.0's connectWithMaster); one that cannot be bound keeps
# the link down.
start_server {tags {directives repl}} {
    start_server {tags {directives repl}} {
        test {bind-source-addr: a replica connects to its primary from that address} {
            set primary [srv -1 client]
            # 127.0.0.2 is no local client to protected mode.
            $primary config set protected-mode no
            r config set bind-source-addr 127.0.0.2
            assert_equal 127.0.0.2 [lindex [r config get bind-source-addr] 1]
            r replicaof 127.0.0.1 [srv -1 port]
            wait_for_condition 200 100 {[s master_link_status] eq {up}} else {
                fail "replication did not start"
            }
            assert_match {*ip=127.0.0.2,*} [getInfoProperty [$primary info replication] slave0]
            r replicaof no one
            r config set bind-source-addr 192.0.2.1
            r replicaof 127.0.0.1 [srv -1 port]
            after 1500
            assert_equal down [s master_link_status]
            r replicaof no one
            r config set bind-source-addr ""
        }
    }
}

# The command line, read as Redis 7.0 reads it: each "--" argument starts a
# directive line, the arguments after it are its values.
test {command line: an error names the directive line the flags made, its values quoted} {
    foreach {argv want} {
        {--port} {*'port'*wrong number of arguments*}
        {--port 6380 --loglevel} {*'loglevel'*wrong number of arguments*}
        {--port 6379 6380} {*'port "6379" "6380"'*wrong number of arguments*}
        {--port --loglevel verbose} {*'port "--loglevel" "verbose"'*wrong number of arguments*}
        {--port --bla --loglevel verbose} {*'port "--bla"'*argument couldn't be parsed into an integer*}
        {--shutdown-on-sigint} {*'shutdown-on-sigint'*argument(s) must be one of the following*}
        {--shutdown-on-sigint {now force} --shutdown-on-sigterm} {*'shutdown-on-sigterm'*argument(s) must be one of the following*}
        {--replicaof 127.0.0.1 abc} {*'replicaof "127.0.0.1" "abc"'*Invalid master port*}
        {--replicaof --127.0.0.1 abc} {*'replicaof "--127.0.0.1" "abc"'*Invalid master port*}
        {--replicaof --127.0.0.1 --abc} {*'replicaof "--127.0.0.1"'*wrong number of arguments*}
    } {
        lassign [run_server_binary $argv 5000] status out
        assert_equal 1 $status "$argv: $out"
        assert_match $want $out
    }
}

test {start-up errors number lines as Redis: the flags go on after the config file's lines and a break} {
    set conf [file join $::srv::tmproot "lines-[pid].conf"]
    set fd [open $conf w]
    puts $fd "# a comment"
    puts $fd "hz 10"
    close $fd
    foreach {argv want} [list \
        {--port abc} {*at line 2*'port "abc"'*} \
        [list $conf --port abc] {*at line 4*'port "abc"'*} \
        {--user foo --port 0 --user foo} {*at line 4*'user "foo"'*Error in user declaration 'foo': Duplicate user found. A user can only be defined once in config files*} \
        {--user default --user default} {*at line 3*Error in user declaration 'default': Duplicate user found*} \
    ] {
        lassign [run_server_binary $argv 5000] status out
        assert_equal 1 $status "$argv: $out"
        assert_match $want $out
    }
    set fd [open $conf a]
    puts $fd "maxmemory x"
    close $fd
    lassign [run_server_binary [list $conf --port 0] 5000] status out
    assert_equal 1 $status
    assert_match {*at line 3*'maxmemory x'*} $out
    file delete $conf
}

start_server {tags {directives} args {"--maxmemory 700mb" "--maxmemory-policy 'volatile-lru'" --masteruser --my--user --save --loglevel verbose}} {
    test {command line: a name and its value in one argument; a value beginning with --; --save with no value} {
        assert_equal 734003200 [lindex [r config get maxmemory] 1]
        assert_equal volatile-lru [lindex [r config get maxmemory-policy] 1]
        assert_equal --my--user [lindex [r config get masteruser] 1]
        assert_equal {} [lindex [r config get save] 1]
        assert_equal verbose [lindex [r config get loglevel] 1]
    }
}

# Without a save directive, the save points are Redis 7.0's defaults.
start_server {tags {directives} keep_save 1} {
    test {without a save directive the save points are Redis 7.0's defaults} {
        assert_equal {3600 1 300 100 60 10000} [lindex [r config get save] 1]
        assert_match {*rdb_changes_since_last_save:0*} [r info persistence]
        r config set save ""
    }
}

# Save lines add up while the configuration is read (the harness passes
# --save "" first), as Redis's: each appends its pairs, an empty one clears.
start_server {tags {directives} args {--save {900 1} --save {100 100}}} {
    test {save directives of the command line add up} {
        assert_equal {900 1 100 100} [lindex [r config get save] 1]
        r config set save "5 5"
        assert_equal {5 5} [lindex [r config get save] 1]
        r config set save ""
    }
}
start_server {tags {directives} args {--save {900 1} --save {} --save {100 100}}} {
    test {an empty save directive clears the ones before it} {
        assert_equal {100 100} [lindex [r config get save] 1]
        r config set save ""
    }
}

start_server {tags {directives} args {--always-show-logo yes}} {
    test {always-show-logo yes shows the logo with the mode, port and pid at start-up; it cannot change at run time} {
        set f [open [srv stdout] r]
        set log [read $f]
        close $f
        assert_match "*Running in standalone mode*Port: [srv port]*PID: [srv pid]*" $log
        assert_equal yes [lindex [r config get always-show-logo] 1]
        assert_error {*immutable*} {r config set always-show-logo no}
    }
}

# The process title ps shows (/proc/PID/cmdline), as Redis's setproctitle.
proc proc_title {pid} {
    set f [open /proc/$pid/cmdline r]
    fconfigure $f -translation binary
    set s [read $f]
    close $f
    return [lindex [split $s "\0"] 0]
}

start_server {tags {directives}} {
    test {proc-title-template: the title ps shows; a malformed template is refused} {
        assert_equal "$::srv::binary 127.0.0.1:[srv port]" [proc_title [srv pid]]
        # A doubled brace in a template is one brace (\x7b: written so, to keep this body balanced).
        set tpl "TEST {title} {listen-addr} {port} {tls-port} {config-file} \x7b\x7bx\x7d"
        r config set proc-title-template $tpl
        assert_equal "TEST $::srv::binary 127.0.0.1:[srv port] [srv port] 0 - \x7bx\x7d" [proc_title [srv pid]]
        assert_equal PONG [r ping]
        foreach bad [list "\x7binvalid-var\x7d" "   " "\x7b" "x \x7bport"] {
            assert_error {*template format is invalid or contains unknown variables*} {
                r config set proc-title-template $bad
            }
        }
        assert_equal $tpl [lindex [r config get proc-title-template] 1]
        r config set proc-title-template "{title} {listen-addr} {server-mode}"
        assert_equal "$::srv::binary 127.0.0.1:[srv port]" [proc_title [srv pid]]
    }
}

start_server {tags {directives} args {--set-proc-title no}} {
    test {set-proc-title no leaves the command line as it was started} {
        assert_match "$::srv::binary --port [srv port] *" [string map [list "\0" " "] [exec cat /proc/[srv pid]/cmdline]]
        assert_equal "$::srv::binary" [proc_title [srv pid]]
    }
}

start_server {tags {directives} args {--rename-command flushdb badger --rename-command FLUSHALL {}}} {
    test {rename-command: a command is found by its new name, or by none} {
        r set a 1
        assert_error {*unknown command*} {r flushdb}
        assert_error {*unknown command*} {r flushall}
        assert_equal OK [r BADGER]
        assert_equal 0 [r dbsize]
        # ACL rules and categories keep the commands' own names.
        assert_match {*flushdb*} [r acl cat keyspace]
        assert_error {*Unknown command or category name in ACL*} {r acl setuser renamed +badger}
        r acl setuser renamed on nopass +flushdb
        assert_match {*+flushdb*} [r acl getuser renamed]
    }
}

test {bind "": a server with no listener at all does not start} {
    set argv [list --port [::srv::free_port] --bind "" --save ""]
    if {[is_goblin]} { lappend argv --memcache-port 0 }
    lassign [run_server_binary $argv 5000] status out
    assert_equal 1 $status
    assert_match {*Configured to not listen anywhere, exiting.*} $out
}

test {rename-command: an unknown command, or a name taken, stops the start} {
    lassign [run_server_binary {--port 0 --rename-command nope x} 5000] status out
    assert_equal 1 $status
    assert_match {*No such command in rename-command*} $out
    lassign [run_server_binary {--port 0 --rename-command get set} 5000] status out
    assert_equal 1 $status
    assert_match {*Target command name already exists*} $out
}
