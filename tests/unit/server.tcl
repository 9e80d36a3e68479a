# Connection and server commands: PING, ECHO, QUIT, HELLO, AUTH, CLIENT,
# INFO, CONFIG, TIME, LASTSAVE, DEBUG, MONITOR, SLOWLOG, LATENCY, MEMORY,
# OBJECT, COMMAND, SHUTDOWN.

# Keys of a CLIENT LIST / CLIENT INFO line, in order.
proc client_fields {line} {
    set keys {}
    foreach kv [split [string trim $line] " "] {
        lappend keys [lindex [split $kv =] 0]
    }
    return $keys
}

proc client_field {line name} {
    foreach kv [split [string trim $line] " "] {
        set i [string first = $kv]
        if {[string range $kv 0 [expr {$i - 1}]] eq $name} {
            return [string range $kv [expr {$i + 1}] end]
        }
    }
    return ""
}

# The line of CLIENT LIST describing the client with this id.
proc client_line {id} {
    foreach l [split [r client list] "\n"] {
        if {[client_field $l id] eq $id} {return $l}
    }
    return ""
}

# CONFIG SET maxmemory-policy allkeys-lfu is accepted (eviction policies).
register_feature lfu-policy {
    if {[catch {r config set maxmemory-policy allkeys-lfu} err]} {
        set err "CONFIG SET maxmemory-policy allkeys-lfu: $err"
    } else {
        set err ""
        r config set maxmemory-policy noeviction
    }
    set err
}

set CLIENT_LIST_FIELDS {id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp}

start_server {tags {server}} {

    # --- PING / ECHO / QUIT ----------------------------------------------------

    test {PING} {
        assert_equal PONG [r ping]
        assert_equal "+PONG\r\n" [r rawcall ping]
    }

    test {PING with a message} {
        assert_equal "\$5\r\nhello\r\n" [r rawcall ping hello]
        assert_equal "x y" [r ping "x y"]
        assert_error {ERR wrong number of arguments for 'ping' command} {r ping a b}
    }

    test {ECHO} {
        assert_equal "\$5\r\nhello\r\n" [r rawcall echo hello]
        assert_equal "a\x00b" [r echo "a\x00b"]
        assert_equal "\$0\r\n\r\n" [r rawcall echo ""]
        assert_error {ERR wrong number of arguments for 'echo' command} {r echo}
        assert_error {ERR wrong number of arguments for 'echo' command} {r echo a b}
    }

    test {QUIT replies OK and closes the connection} {
        set c [redis_client]
        assert_equal "+OK\r\n" [$c rawcall quit]
        assert_equal 1 [$c wait_closed 3000]
        $c close
    }

    test {QUIT after pipelined commands answers them first} {
        set c [redis_client]
        $c write "PING\r\nECHO hi\r\nQUIT\r\nPING\r\n"
        $c flush
        assert_equal "+PONG\r\n\$2\r\nhi\r\n+OK\r\n" [$c read_all 3000]
        $c close
    }

    # --- HELLO -------------------------------------------------------------------

    test {HELLO 3 map fields} {
        set c [redis_client]
        set reply [$c hello 3]
        assert_equal {server version proto id mode role modules} [dict keys [kv $reply]]
        set d [kv $reply]
        assert_match {?*} [dict get $d server]
        assert_match {[0-9]*.[0-9]*.[0-9]*} [dict get $d version]
        assert_equal 3 [dict get $d proto]
        assert_equal [$c client id] [dict get $d id]
        assert_equal standalone [dict get $d mode]
        assert_equal master [dict get $d role]
        assert_equal {} [dict get $d modules]
        $c close
    }

    test {HELLO reports the same version as INFO} {
        set d [kv [r hello 2]]
        assert_equal [s redis_version] [dict get $d version]
    }

    test {HELLO 3 SETNAME} {
        set c [redis_client]
        $c hello 3 setname myname
        assert_equal myname [$c client getname]
        $c close
    }

    test {HELLO SETNAME with an invalid name} {
        set c [redis_client]
        assert_error {ERR Client names cannot contain spaces, newlines or special characters.} {$c hello 3 setname "a b"}
        $c close
    }

    test {HELLO AUTH without a configured password} {
        set c [redis_client]
        # The default user has no password: any password is accepted.
        assert_equal 3 [dict get [kv [$c hello 3 auth default anything]] proto]
        $c close
    }

    test {HELLO AUTH with a wrong user} {
        set c [redis_client]
        assert_error {WRONGPASS invalid username-password pair or user is disabled.} {$c hello 3 auth nosuchuser pass}
        $c close
    }

    # --- AUTH / requirepass ----------------------------------------------------------

    test {AUTH without a configured password} {
        assert_error {ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?} {r auth foo}
    }

    test {AUTH syntax} {
        assert_error {ERR syntax error} {r auth a b c}
        assert_error {ERR wrong number of arguments for 'auth' command} {r auth}
    }

    test {requirepass via CONFIG SET} {
        r config set requirepass secret
        set c [redis_client]
        assert_error {NOAUTH Authentication required.} {$c ping}
        assert_error {NOAUTH Authentication required.} {$c get foo}
        assert_error {WRONGPASS invalid username-password pair or user is disabled.} {$c auth wrong}
        assert_error {WRONGPASS invalid username-password pair or user is disabled.} {$c auth default wrong}
        assert_equal OK [$c auth secret]
        assert_equal PONG [$c ping]
        $c close
        set c [redis_client]
        assert_equal OK [$c auth default secret]
        assert_equal PONG [$c ping]
        $c close
        # The connection that set the password stays authenticated.
        assert_equal PONG [r ping]
        r config set requirepass ""
    }

    test {HELLO with requirepass} {
        r config set requirepass secret
        set c [redis_client]
        set noauth {NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time}
        assert_error $noauth {$c hello 3}
        assert_error $noauth {$c hello}
        assert_error {WRONGPASS invalid username-password pair or user is disabled.} {$c hello 3 auth default wrong}
        set d [kv [$c hello 3 auth default secret setname authed]]
        assert_equal 3 [dict get $d proto]
        assert_equal authed [$c client getname]
        assert_equal PONG [$c ping]
        $c close
        r config set requirepass ""
    }

    test {QUIT and AUTH work before authentication} {
        r config set requirepass secret
        set c [redis_client]
        assert_equal OK [$c quit]
        $c close
        r config set requirepass ""
    }

    test {CONFIG SET requirepass "" turns authentication off} {
        r config set requirepass secret
        r config set requirepass ""
        set c [redis_client]
        assert_equal PONG [$c ping]
        $c close
    }

    # --- CLIENT ------------------------------------------------------------------

    test {CLIENT ID is an integer that grows with each connection} {
        set c1 [redis_client]
        set c2 [redis_client]
        set id1 [$c1 client id]
        set id2 [$c2 client id]
        assert {[string is integer -strict $id1] && $id1 > 0}
        assert_morethan $id2 $id1
        assert_equal $id1 [$c1 client id]
        $c1 close
        $c2 close
    }

    test {CLIENT SETNAME and GETNAME} {
        set c [redis_client]
        assert_equal "\$-1\r\n" [$c rawcall client getname]
        assert_equal OK [$c client setname myconn]
        assert_equal myconn [$c client getname]
        assert_equal OK [$c client setname ""]
        assert_equal "\$-1\r\n" [$c rawcall client getname]
        $c close
    }

    test {CLIENT SETNAME rejects invalid names} {
        foreach name {"a b" "a\nb" "a\x01"} {
            assert_error {ERR Client names cannot contain spaces, newlines or special characters.} {r client setname $name}
        }
        assert_error {ERR wrong number of arguments for 'client|setname' command} {r client setname a b}
    }

    test {CLIENT LIST format} {
        set c [redis_client]
        set id [$c client id]
        $c client setname lister
        set line [client_line $id]
        assert_equal $CLIENT_LIST_FIELDS [client_fields $line]
        assert_match {127.0.0.1:[0-9]*} [client_field $line addr]
        assert_equal 127.0.0.1:[srv port] [client_field $line laddr]
        assert_equal lister [client_field $line name]
        assert_equal N [client_field $line flags]
        assert_equal 0 [client_field $line db]
        assert_equal -1 [client_field $line multi]
        assert_equal default [client_field $line user]
        assert_equal 2 [client_field $line resp]
        assert_equal client|setname [client_field $line cmd]
        $c close
    }

    test {CLIENT LIST lines end with a newline} {
        set list [r client list]
        assert_equal "\n" [string index $list end]
        set own [lindex [split [string trim [r client info]] "\n"] 0]
        assert_equal $CLIENT_LIST_FIELDS [client_fields $own]
        assert_equal client|list [client_field [client_line [r client id]] cmd]
    }

    test {CLIENT LIST shows db and resp of each connection} {
        set c [redis_client]
        set id [$c client id]
        $c select 5
        $c hello 3
        set line [client_line $id]
        assert_equal 5 [client_field $line db]
        assert_equal 3 [client_field $line resp]
        assert_equal hello [client_field $line cmd]
        $c close
    }

    test {CLIENT LIST ID and TYPE} {
        set c [redis_client]
        set id [$c client id]
        set line [r client list id $id]
        assert_equal $id [client_field $line id]
        assert_equal 1 [llength [split [string trim $line] "\n"]]
        assert_equal "" [r client list id 999999999]
        assert_match "*id=$id *" [r client list type normal]
        assert_error {ERR Unknown client type 'foo'} {r client list type foo}
        assert_error {ERR syntax error} {r client list foo}
        $c close
    }

    test {CLIENT INFO} {
        set info [r client info]
        assert_equal [r client id] [client_field $info id]
        assert_equal client|info [client_field $info cmd]
        assert_equal $CLIENT_LIST_FIELDS [client_fields $info]
        assert_equal "\n" [string index $info end]
    }

    test {CLIENT KILL ID} {
        set c [redis_client]
        set id [$c client id]
        assert_equal 1 [r client kill id $id]
        assert_equal 1 [$c wait_closed 3000]
        $c close
        assert_equal "" [client_line $id]
        assert_equal 0 [r client kill id $id]
    }

    test {CLIENT KILL ADDR and the old form} {
        set c [redis_client]
        set addr [client_field [client_line [$c client id]] addr]
        assert_equal 1 [r client kill addr $addr]
        assert_equal 1 [$c wait_closed 3000]
        $c close
        set c [redis_client]
        set addr [client_field [client_line [$c client id]] addr]
        assert_equal OK [r client kill $addr]
        assert_equal 1 [$c wait_closed 3000]
        $c close
    }

    test {CLIENT KILL errors} {
        assert_error {ERR No such client} {r client kill 127.0.0.1:1}
        assert_equal 0 [r client kill addr 127.0.0.1:1]
        assert_error {ERR client-id should be greater than 0} {r client kill id abc}
        assert_error {ERR syntax error} {r client kill foo bar}
    }

    test {CLIENT KILL skips the caller by default} {
        set me [r client id]
        set addr [client_field [client_line $me] addr]
        assert_equal 0 [r client kill addr $addr]
        assert_equal PONG [r ping]
    }

    test {CLIENT PAUSE WRITE blocks writes, not reads} {
        r set pk before
        set rd [redis_deferring_client]
        set rd2 [redis_deferring_client]
        assert_equal OK [r client pause 100000 write]
        $rd set pk after
        $rd2 get pk
        assert_equal before [$rd2 read]
        after 200
        # The write is still held.
        $rd timeout 100
        assert_error {timeout*} {$rd read}
        assert_equal OK [r client unpause]
        $rd timeout 5000
        assert_equal OK [$rd read]
        assert_equal after [r get pk]
    }

    test {CLIENT PAUSE ALL blocks reads too, and ends by itself} {
        set rd [redis_deferring_client]
        set start [clock milliseconds]
        assert_equal OK [r client pause 300 all]
        $rd ping
        assert_equal PONG [$rd read]
        assert_morethan [expr {[clock milliseconds] - $start}] 200
    }

    test {CLIENT PAUSE errors} {
        assert_error {ERR timeout is not an integer or out of range} {r client pause abc}
        assert_error {ERR CLIENT PAUSE mode must be WRITE or ALL} {r client pause 10 foo}
        assert_equal OK [r client unpause]
    }

    test {CLIENT REPLY OFF and ON} {
        set c [redis_client]
        $c write [::resp::encode {client reply off}]
        $c write [::resp::encode {set replyoff 1}]
        $c write [::resp::encode {get replyoff}]
        $c write [::resp::encode {client reply on}]
        $c flush
        assert_equal OK [$c read]
        assert_equal 1 [$c get replyoff]
        $c close
    }

    test {CLIENT REPLY SKIP} {
        set c [redis_client]
        $c write [::resp::encode {client reply skip}]
        $c write [::resp::encode {set skipped 1}]
        $c write [::resp::encode {ping}]
        $c flush
        assert_equal "+PONG\r\n" [$c read_raw_reply]
        assert_equal 1 [$c get skipped]
        $c close
    }

    test {CLIENT REPLY errors} {
        assert_error {ERR syntax error} {r client reply foo}
        assert_equal OK [r client reply on]
    }

    test {CLIENT NO-EVICT} {
        assert_equal OK [r client no-evict on]
        assert_match {*e*} [client_field [r client info] flags]
        assert_equal OK [r client no-evict off]
        assert_error {ERR syntax error} {r client no-evict foo}
    }

    test {CLIENT errors} {
        assert_error {ERR unknown subcommand 'foo'. Try CLIENT HELP.} {r client foo}
        assert_error {ERR wrong number of arguments for 'client' command} {r client}
    }

    # --- INFO --------------------------------------------------------------------------

    test {INFO default sections} {
        set info [r info]
        foreach section {Server Clients Memory Persistence Stats CPU Keyspace} {
            assert_match "*# $section\r\n*" $info
        }
        assert_no_match "*# Commandstats*" $info
        # Every line ends with CRLF.
        assert_equal [regexp -all "\n" $info] [regexp -all "\r\n" $info]
    }

    test {INFO layout: headers, field:value lines, blank lines between sections} {
        set info [r info everything]
        foreach line [split [string trimright $info "\r\n"] "\n"] {
            set line [string trimright $line "\r"]
            if {$line eq "" || [string match "# *" $line]} continue
            assert {[regexp {^[a-zA-Z0-9_|-]+:} $line]} "line '$line'"
        }
        assert_match "# Server\r\n*" $info
        assert_match "*\r\n" $info
    }

    test {INFO server fields} {
        set info [r info server]
        foreach f {redis_version redis_mode os arch_bits process_id run_id tcp_port
                   uptime_in_seconds uptime_in_days hz configured_hz executable config_file} {
            assert_match "*\r\n$f:*" $info "field $f"
        }
        assert_equal [srv port] [getInfoProperty $info tcp_port]
        assert_equal [srv pid] [getInfoProperty $info process_id]
        assert_match {[0-9a-f]*} [getInfoProperty $info run_id]
        assert_equal 40 [string length [getInfoProperty $info run_id]]
        assert_equal standalone [getInfoProperty $info redis_mode]
        assert_no_match "*# Clients*" $info
    }

    test {INFO clients fields} {
        set info [r info clients]
        foreach f {connected_clients maxclients blocked_clients
                   client_recent_max_input_buffer client_recent_max_output_buffer} {
            assert_match "*\r\n$f:*" $info "field $f"
        }
        set before [getInfoProperty $info connected_clients]
        set c [redis_client]
        $c ping
        assert_equal [expr {$before + 1}] [s connected_clients]
        $c close
        wait_for_condition 50 20 {[s connected_clients] == $before} else {
            fail "connected_clients did not go back to $before"
        }
    }

    test {INFO memory fields} {
        set info [r info memory]
        foreach f {used_memory used_memory_human used_memory_rss used_memory_peak
                   used_memory_peak_human maxmemory maxmemory_human maxmemory_policy
                   mem_fragmentation_ratio mem_allocator} {
            assert_match "*\r\n$f:*" $info "field $f"
        }
        assert_morethan [getInfoProperty $info used_memory] 0
        assert_equal noeviction [getInfoProperty $info maxmemory_policy]
    }

    test {INFO persistence fields} {
        set info [r info persistence]
        foreach f {loading rdb_changes_since_last_save rdb_bgsave_in_progress
                   rdb_last_save_time rdb_last_bgsave_status aof_enabled} {
            assert_match "*\r\n$f:*" $info "field $f"
        }
        assert_equal 0 [getInfoProperty $info loading]
        set before [getInfoProperty $info rdb_changes_since_last_save]
        r set changes 1
        r set changes 2
        assert_equal [expr {$before + 2}] [s rdb_changes_since_last_save]
    }

    test {INFO stats fields} {
        set info [r info stats]
        foreach f {total_connections_received total_commands_processed
                   instantaneous_ops_per_sec total_net_input_bytes total_net_output_bytes
                   rejected_connections expired_keys evicted_keys keyspace_hits
                   keyspace_misses total_error_replies} {
            assert_match "*\r\n$f:*" $info "field $f"
        }
    }

    test {INFO cpu fields} {
        set info [r info cpu]
        foreach f {used_cpu_sys used_cpu_user used_cpu_sys_children used_cpu_user_children} {
            assert_match "*\r\n$f:*" $info "field $f"
            assert {[string is double -strict [getInfoProperty $info $f]]}
        }
    }

    test {INFO keyspace} {
        r flushall
        assert_equal "# Keyspace\r\n" [r info keyspace]
        r set a 1
        r set b 2 ex 100
        assert_match "# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=*\r\n" [r info keyspace]
    }

    test {INFO keyspace hits and misses} {
        r config resetstat
        r set hit 1
        r get hit
        r get hit
        r get nosuch
        assert_equal 2 [s keyspace_hits]
        assert_equal 1 [s keyspace_misses]
    }

    # Redis counts read lookups (lookupKeyRead), also those of write
    # commands that read a key; write lookups (APPEND, INCR, ZPOPMIN, the
    # STORE forms' destination) count nothing. Figures taken from Redis 7.0.
    test {Keyspace hits and misses of write commands that read keys} {
        foreach {cmd hits misses} {
            {getdel s} 1 0
            {getdel nokey} 0 1
            {getex s persist} 1 0
            {getset nokey x} 0 1
            {set s x get} 1 0
            {set s x} 0 0
            {append s x} 0 0
            {incr n} 0 0
            {copy s s3} 1 0
            {copy nokey s3} 0 1
            {sinterstore d st st2} 2 0
            {sunionstore d st nokey} 1 1
            {sinter st st} 2 0
            {zunionstore d 2 z nokey} 1 1
            {zrangestore d z 0 -1} 1 0
            {zpopmin z} 0 0
            {bitop and d bits nokey} 1 1
            {bitfield bits get u8 0} 1 0
            {bitfield bits get u8 0 set u8 0 1} 0 0
            {sort l alpha store d} 1 0
            {sort l by w_* get h_*} 2 3
            {object encoding s} 1 0
            {object encoding nokey} 0 1
            {lpush l x} 0 0
            {exists s s nokey} 2 1
        } {
            r flushall
            r set s v
            r set n 5
            r set bits ab
            r rpush l a b
            r set w_a 1
            r sadd st a b
            r sadd st2 b
            r zadd z 1 a 2 b
            r config resetstat
            catch {r {*}$cmd}
            assert_equal [list $hits $misses] [list [s keyspace_hits] [s keyspace_misses]] $cmd
        }
    }

    test {INFO commandstats} {
        r config resetstat
        r set a b
        r get a
        r get a
        catch {r get}
        catch {r incr a}
        set info [r info commandstats]
        assert_match "# Commandstats\r\n*" $info
        assert_match {calls=2,usec=*,usec_per_call=*,rejected_calls=1,failed_calls=0} [getInfoProperty $info cmdstat_get]
        assert_match {calls=1,usec=*,usec_per_call=*,rejected_calls=0,failed_calls=0} [getInfoProperty $info cmdstat_set]
        assert_match {calls=1,usec=*,usec_per_call=*,rejected_calls=0,failed_calls=1} [getInfoProperty $info cmdstat_incr]
        assert_match {calls=1,*} [getInfoProperty $info cmdstat_config|resetstat]
    }

    test {INFO errorstats} {
        r config resetstat
        catch {r get}
        catch {r nosuchcmd}
        r set a b
        catch {r incr a}
        set info [r info errorstats]
        assert_equal "# Errorstats\r\nerrorstat_ERR:count=3\r\n" $info
        assert_equal 3 [s total_error_replies]
    }

    test {CLIENT UNBLOCK counts the blocked command as a failed call and logs it; its own timeout does neither} {
        r config resetstat
        r slowlog reset
        r config set slowlog-log-slower-than 0
        r del bl
        set rd [redis_deferring_client]
        $rd client id
        set id [$rd read]
        $rd blpop bl 0
        wait_for_blocked_clients 1
        assert_equal 1 [r client unblock $id error]
        assert_error {UNBLOCKED*} {$rd read}
        assert_match {calls=1,*,rejected_calls=0,failed_calls=1} [getInfoProperty [r info commandstats] cmdstat_blpop]
        assert_match {*count=1*} [getInfoProperty [r info errorstats] errorstat_UNBLOCKED]
        # As Redis 7.0: UNBLOCK TIMEOUT (a null reply) counts a failed call too.
        $rd blpop bl 0
        wait_for_blocked_clients 1
        assert_equal 1 [r client unblock $id timeout]
        assert_equal {} [$rd read]
        assert_match {calls=2,*,rejected_calls=0,failed_calls=2} [getInfoProperty [r info commandstats] cmdstat_blpop]
        $rd blpop bl 0.05
        assert_equal {} [$rd read]
        assert_match {calls=3,*,rejected_calls=0,failed_calls=2} [getInfoProperty [r info commandstats] cmdstat_blpop]
        # The two unblocked calls are in the slow log, the timed-out one is
        # not. (Redis 7.0 logs them with no arguments, having reset the
        # client first; Goblin shows the command.)
        regexp {addr=([^ ]+)} [r client list id $id] -> addr
        set logged 0
        foreach e [r slowlog get -1] {
            if {[lindex $e 4] eq $addr && [string tolower [lindex $e 3 0]] ne "client"} {incr logged}
        }
        assert_equal 2 $logged
        r config set slowlog-log-slower-than 10000
        $rd close
    }

    test {INFO errorstats counts WRONGTYPE separately} {
        make_nonstring_key l
        r config resetstat
        catch {r get l}
        assert_equal count=1 [getInfoProperty [r info errorstats] errorstat_WRONGTYPE]
    }

    test {INFO with several sections} {
        set info [r info server clients]
        assert_match "# Server\r\n*# Clients\r\n*" $info
        assert_no_match "*# Memory*" $info
    }

    test {INFO all and everything include commandstats} {
        assert_match "*# Commandstats\r\n*" [r info all]
        assert_match "*# Commandstats\r\n*" [r info everything]
        assert_match "*# Keyspace\r\n*" [r info everything]
    }

    test {INFO section names are case insensitive} {
        assert_match "# Server\r\n*" [r info SERVER]
    }

    test {INFO of an unknown section is empty} {
        assert_equal "\$0\r\n\r\n" [r rawcall info nosuchsection]
    }

    test {INFO total_commands_processed counts commands} {
        set before [s total_commands_processed]
        r ping
        r ping
        r ping
        # Three PINGs plus the first INFO.
        assert_equal [expr {$before + 4}] [s total_commands_processed]
    }

    # --- CONFIG --------------------------------------------------------------------------

    test {CONFIG GET and SET} {
        assert_equal OK [r config set maxmemory 10mb]
        assert_equal {maxmemory 10485760} [r config get maxmemory]
        r config set maxmemory 0
        assert_equal {maxmemory 0} [r config get maxmemory]
    }

    test {CONFIG GET with a glob} {
        set res [kv [r config get maxmemory*]]
        assert_equal [lsort {maxmemory maxmemory-clients maxmemory-eviction-tenacity maxmemory-policy maxmemory-samples}] \
            [lsort [dict keys $res]]
        assert_equal noeviction [dict get $res maxmemory-policy]
    }

    test {CONFIG GET with a glob lists the aliases that match} {
        set res [kv [r config get slave*]]
        foreach k {slave-read-only slave-serve-stale-data slave-priority slave-lazy-flush slaveof} {
            assert {[dict exists $res $k]}
        }
        assert_equal [dict get [kv [r config get replica-read-only]] replica-read-only] [dict get $res slave-read-only]
        set z [kv [r config get *ziplist*]]
        assert_equal [lsort {hash-max-ziplist-entries hash-max-ziplist-value list-max-ziplist-size zset-max-ziplist-entries zset-max-ziplist-value}] \
            [lsort [dict keys $z]]
        set all [kv [r config get *]]
        foreach k {replica-read-only slave-read-only hash-max-listpack-entries hash-max-ziplist-entries lua-time-limit busy-reply-threshold} {
            assert {[dict exists $all $k]}
        }
    }

    test {CONFIG GET of several parameters} {
        set res [kv [r config get maxmemory port]]
        assert_equal [srv port] [dict get $res port]
        assert_equal 0 [dict get $res maxmemory]
    }

    test {CONFIG GET of an unknown parameter} {
        assert_equal "*0\r\n" [r rawcall config get nosuchparameter]
    }

    test {CONFIG GET of common parameters} {
        # The usual redis.conf directives with the values the test servers
        # run with (Redis defaults, plus --bind 127.0.0.1 --save "").
        foreach {p v} {port {} bind 127.0.0.1 protected-mode yes requirepass {}
                       databases 16 save {} dbfilename dump.rdb maxmemory 0
                       maxmemory-policy noeviction timeout 0 tcp-keepalive 300
                       loglevel notice logfile {} daemonize no pidfile {}
                       hash-max-listpack-entries 512 hash-max-listpack-value 64
                       zset-max-listpack-entries 128 set-max-intset-entries 512
                       list-max-listpack-size -2 maxclients 10000
                       slowlog-log-slower-than 10000 slowlog-max-len 128
                       proto-max-bulk-len 536870912 hz 10} {
            set res [r config get $p]
            assert_equal 2 [llength $res] "CONFIG GET $p"
            assert_equal $p [lindex $res 0]
            if {$p eq "port"} {set v [srv port]}
            assert_equal $v [lindex $res 1] "CONFIG GET $p"
        }
    }

    test {CONFIG GET dir is the absolute working directory} {
        assert_equal [file normalize [srv dir]] [lindex [r config get dir] 1]
    }

    test {CONFIG SET of several parameters at once} {
        assert_equal OK [r config set maxmemory 20mb slowlog-max-len 64]
        assert_equal {maxmemory 20971520} [r config get maxmemory]
        assert_equal {slowlog-max-len 64} [r config get slowlog-max-len]
        r config set maxmemory 0 slowlog-max-len 128
    }

    test {CONFIG SET memory values accept units} {
        foreach {v bytes} {1k 1000 1kb 1024 1m 1000000 1mb 1048576 1gb 1073741824 100 100} {
            r config set maxmemory $v
            assert_equal $bytes [lindex [r config get maxmemory] 1] "maxmemory $v"
        }
        r config set maxmemory 0
    }

    test {CONFIG SET hz is clamped} {
        r config set hz 0
        assert_equal {hz 1} [r config get hz]
        r config set hz 100000
        assert_equal {hz 500} [r config get hz]
        r config set hz 10
    }

    test {At hz 1 the server is idle between its once-a-second tasks} {
        r config set hz 1
        set cpu0 [expr {[s used_cpu_user] + [s used_cpu_sys]}]
        after 1500
        set cpu [expr {[s used_cpu_user] + [s used_cpu_sys] - $cpu0}]
        r config set hz 10
        # The cron may be in its one-second sleep, and its next cycle has the
        # hz 1 budget: let it pass before the tests that time the cron.
        after 1100
        # A timer of a whole second must not turn into a busy loop.
        assert_lessthan $cpu 0.5
    }

    test {CONFIG SET errors} {
        assert_error {ERR Unknown option or number of arguments for CONFIG SET - 'nosuchparameter'} {r config set nosuchparameter 1}
        assert_error {ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value} {r config set maxmemory abc}
        assert_error {ERR CONFIG SET failed (possibly related to argument 'maxmemory') - duplicate parameter} {r config set maxmemory 10mb maxmemory 20mb}
        assert_error {ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer} {r config set hz abc}
        assert_error {ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following:*} {r config set maxmemory-policy foo}
        assert_error {ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config} {r config set daemonize yes}
        assert_error {ERR wrong number of arguments for 'config|set' command} {r config set maxmemory}
        assert_error {ERR wrong number of arguments for 'config|get' command} {r config get}
    }

    test {CONFIG SET save with an invalid value} {
        assert_error {ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters} {r config set save foo}
        assert_error {ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters} {r config set save "100"}
    }

    test {CONFIG SET with an error changes nothing} {
        r config set maxmemory 0
        catch {r config set maxmemory 10mb hz abc}
        assert_equal {maxmemory 0} [r config get maxmemory]
    }

    test {CONFIG RESETSTAT} {
        r get a
        r ping
        assert_equal OK [r config resetstat]
        set info [r info all]
        assert_equal 0 [getInfoProperty $info keyspace_hits]
        assert_equal 0 [getInfoProperty $info keyspace_misses]
        assert_equal 0 [getInfoProperty $info total_error_replies]
        assert_equal 1 [getInfoProperty $info total_commands_processed]
        assert_equal "" [getInfoProperty $info cmdstat_ping]
        assert_equal "" [getInfoProperty $info errorstat_ERR]
    }

    test {CONFIG errors} {
        assert_error {ERR unknown subcommand 'foo'. Try CONFIG HELP.} {r config foo}
    }

    # --- TIME / LASTSAVE ---------------------------------------------------------------

    test {TIME} {
        set t [r time]
        assert_equal 2 [llength $t]
        lassign $t secs usecs
        assert_range $secs [expr {[clock seconds] - 2}] [expr {[clock seconds] + 2}]
        assert_range $usecs 0 999999
        assert_match "\\*2\r\n\$10\r\n*\r\n\$*\r\n*\r\n" [r rawcall time]
    }

    test {TIME advances} {
        lassign [r time] s1 u1
        after 20
        lassign [r time] s2 u2
        assert_morethan [expr {($s2 - $s1) * 1000000 + $u2 - $u1}] 15000
    }

    test {LASTSAVE} {
        set t [r lastsave]
        assert {[string is integer -strict $t]}
        assert {$t <= [clock seconds] + 1}
        assert_match ":*\r\n" [r rawcall lastsave]
    }

    # --- DEBUG ---------------------------------------------------------------------------

    test {DEBUG SLEEP} {
        set start [clock milliseconds]
        assert_equal OK [r debug sleep 0.2]
        assert_morethan [expr {[clock milliseconds] - $start}] 180
        assert_equal OK [r debug sleep 0]
    }

    test {DEBUG OBJECT} {
        r set dbgkey value
        assert_match {Value at:* refcount:1 encoding:embstr serializedlength:* lru:* lru_seconds_idle:*} [r debug object dbgkey]
        r set dbgint 12345
        assert_match {*encoding:int*} [r debug object dbgint]
        assert_error {ERR no such key} {r debug object nosuchkey}
    }

    test {DEBUG SET-ACTIVE-EXPIRE} {
        assert_equal OK [r debug set-active-expire 0]
        assert_equal OK [r debug set-active-expire 1]
    }

    test {DEBUG with an unknown subcommand} {
        assert_error {ERR unknown subcommand or wrong number of arguments for 'foo'. Try DEBUG HELP.} {r debug foo}
    }

    # --- MONITOR -----------------------------------------------------------------------

    test {MONITOR output format} {
        set c [redis_client]
        set port [client_field [client_line [$c client id]] addr]
        set m [redis_client]
        assert_equal OK [$m monitor]
        $c set foo bar
        $c select 3
        $c get foo
        $c select 0
        $m readraw 1
        set l1 [$m read]
        set l2 [$m read]
        set l3 [$m read]
        set l4 [$m read]
        assert {[regexp {^\+[0-9]+\.[0-9]{6} \[0 127\.0\.0\.1:[0-9]+\] "set" "foo" "bar"$} $l1]} "monitor line $l1"
        assert_match "* \\\[0 $port\\\] *" $l1
        # Commands are fed to monitors after they ran: SELECT shows its new db.
        assert {[regexp {^\+[0-9]+\.[0-9]{6} \[3 127\.0\.0\.1:[0-9]+\] "select" "3"$} $l2]} "monitor line $l2"
        assert {[regexp {^\+[0-9]+\.[0-9]{6} \[3 127\.0\.0\.1:[0-9]+\] "get" "foo"$} $l3]} "monitor line $l3"
        assert {[regexp {^\+[0-9]+\.[0-9]{6} \[0 127\.0\.0\.1:[0-9]+\] "select" "0"$} $l4]} "monitor line $l4"
        $m close
        $c close
    }

    test {MONITOR escapes binary arguments} {
        set m [redis_client]
        $m monitor
        r set "k\x00" "a \"q\" \\ \x01\xff\n"
        $m readraw 1
        set l [$m read]
        set args [string range $l [expr {[string first "\] " $l] + 2}] end]
        assert_equal {"set" "k\x00" "a \"q\" \\ \x01\xff\n"} $args
        $m close
    }

    test {MONITOR timestamps are current} {
        set m [redis_client]
        $m monitor
        r ping
        $m readraw 1
        set l [$m read]
        regexp {^\+([0-9]+)\.} $l -> secs
        assert_range $secs [expr {[clock seconds] - 2}] [expr {[clock seconds] + 2}]
        $m close
    }

    # --- SLOWLOG -------------------------------------------------------------------------

    test {SLOWLOG records commands slower than the threshold} {
        r config set slowlog-log-slower-than 0
        assert_equal OK [r slowlog reset]
        r set foo bar
        set entry [lindex [r slowlog get 1] 0]
        assert_equal 6 [llength $entry]
        lassign $entry id ts duration args addr name
        assert {[string is integer -strict $id]}
        assert_range $ts [expr {[clock seconds] - 5}] [expr {[clock seconds] + 5}]
        assert {[string is integer -strict $duration] && $duration >= 0}
        assert_equal {set foo bar} $args
        assert_match {127.0.0.1:*} $addr
        assert_equal "" $name
        # SLOWLOG RESET, SET and SLOWLOG GET itself are logged.
        assert_equal 3 [r slowlog len]
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG entries are newest first with growing ids} {
        r config set slowlog-log-slower-than 0
        r slowlog reset
        r set a 1
        r set b 2
        set log [r slowlog get 3]
        assert_equal {set b 2} [lindex $log 0 3]
        assert_equal {set a 1} [lindex $log 1 3]
        assert_morethan [lindex $log 0 0] [lindex $log 1 0]
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG records the client name} {
        r config set slowlog-log-slower-than 0
        r client setname slowname
        r slowlog reset
        r ping
        assert_equal slowname [lindex [r slowlog get 1] 0 5]
        r client setname ""
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG truncates many arguments and long strings} {
        r config set slowlog-log-slower-than 0
        r slowlog reset
        set args {}
        for {set i 0} {$i < 40} {incr i} {lappend args a$i}
        r del {*}$args
        r set big [string repeat x 200]
        set log [r slowlog get 2]
        set bigargs [lindex $log 0 3]
        assert_equal "[string repeat x 128]... (72 more bytes)" [lindex $bigargs 2]
        set delargs [lindex $log 1 3]
        assert_equal 32 [llength $delargs]
        assert_equal del [lindex $delargs 0]
        assert_equal a29 [lindex $delargs 30]
        assert_equal "... (10 more arguments)" [lindex $delargs 31]
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG max length} {
        r config set slowlog-log-slower-than 0
        r config set slowlog-max-len 10
        for {set i 0} {$i < 30} {incr i} {r ping}
        assert_equal 10 [r slowlog len]
        assert_equal 10 [llength [r slowlog get -1]]
        r config set slowlog-max-len 128
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG with a real threshold catches DEBUG SLEEP only} {
        r config set slowlog-log-slower-than 100000
        r slowlog reset
        r ping
        r debug sleep 0.15
        r ping
        set log [r slowlog get]
        assert_equal 1 [llength $log]
        assert_equal {debug sleep 0.15} [lindex $log 0 3]
        assert_morethan [lindex $log 0 2] 140000
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG GET default count and errors} {
        r config set slowlog-log-slower-than 0
        r slowlog reset
        for {set i 0} {$i < 20} {incr i} {r ping}
        assert_equal 10 [llength [r slowlog get]]
        assert_equal 0 [llength [r slowlog get 0]]
        assert_error {ERR count should be greater than or equal to -1} {r slowlog get -2}
        assert_error {ERR count should be greater than or equal to -1} {r slowlog get abc}
        assert_error {ERR unknown subcommand 'foo'. Try SLOWLOG HELP.} {r slowlog foo}
        r config set slowlog-log-slower-than 10000
    }

    test {SLOWLOG is off with a negative threshold} {
        r config set slowlog-log-slower-than -1
        r slowlog reset
        r debug sleep 0.01
        assert_equal 0 [r slowlog len]
        r config set slowlog-log-slower-than 10000
    }

    # --- LATENCY -------------------------------------------------------------------------

    test {LATENCY LATEST is empty with the monitor off} {
        r latency reset
        assert_equal "*0\r\n" [r rawcall latency latest]
    }

    test {LATENCY LATEST and HISTORY record a slow command} {
        r config set latency-monitor-threshold 50
        r latency reset
        r debug sleep 0.1
        set latest [r latency latest]
        assert_equal 1 [llength $latest]
        lassign [lindex $latest 0] event ts last max
        assert_equal command $event
        assert_range $ts [expr {[clock seconds] - 5}] [expr {[clock seconds] + 5}]
        assert_range $last 95 1000
        assert_equal $last $max
        set hist [r latency history command]
        assert_equal 1 [llength $hist]
        assert_equal $last [lindex $hist 0 1]
        assert_equal "*0\r\n" [r rawcall latency history nosuchevent]
        r config set latency-monitor-threshold 0
    }

    test {LATENCY RESET} {
        r config set latency-monitor-threshold 50
        r debug sleep 0.06
        assert_equal 1 [r latency reset]
        assert_equal {} [r latency latest]
        assert_equal 0 [r latency reset command]
        assert_error {ERR unknown subcommand 'foo'. Try LATENCY HELP.} {r latency foo}
        r config set latency-monitor-threshold 0
    }

    test {LATENCY records the cron's expiry cycles as expire-cycle} {
        r flushall
        r debug set-active-expire 0
        r eval {for i = 1, 200000 do redis.call('set', 'lat:' .. i, 'x', 'px', 1) end} 0
        after 20
        r config set latency-monitor-threshold 1
        r latency reset
        r debug set-active-expire 1
        wait_for_condition 100 50 {[r dbsize] == 0} else { fail "the keys were not expired" }
        set events {}
        foreach e [r latency latest] { dict set events [lindex $e 0] [lindex $e 3] }
        assert {[dict exists $events expire-cycle]}
        assert {[dict get $events expire-cycle] >= 1}
        assert {[llength [r latency history expire-cycle]] >= 1}
        r config set latency-monitor-threshold 0
        r latency reset
    }

    test {The expire-cycle event does not count the cycle's wait for a whole-keyspace command} {
        # DEBUG SLEEP holds the keyspace; the cron wakes up twice or more
        # meanwhile and waits for it. What it waited is not its cycle's.
        r flushall
        r set lat:ttl x px 100000
        r config set latency-monitor-threshold 20
        r latency reset
        r debug sleep 0.4
        after 300
        set events {}
        foreach e [r latency latest] { dict set events [lindex $e 0] [lindex $e 3] }
        assert {[dict exists $events command]}
        assert {![dict exists $events expire-cycle]}
        r config set latency-monitor-threshold 0
        r latency reset
    }

    # --- LATENCY HISTOGRAM and INFO latencystats ------------------------------------------

    # {command {calls N histogram_usec {bucket cumulative ...}} ...} -> dict
    proc latency_hist {args} {
        set out [dict create]
        foreach {name body} [r latency histogram {*}$args] {
            dict set out $name $body
        }
        return $out
    }

    test {LATENCY HISTOGRAM counts every call of a command} {
        r config resetstat
        for {set i 0} {$i < 25} {incr i} {r set lh:$i x}
        r get lh:1
        set h [latency_hist set get nosuchcommand]
        assert_equal {get set} [lsort [dict keys $h]]
        assert_equal 25 [dict get $h set calls]
        assert_equal 1 [dict get $h get calls]
        # Cumulative counts at increasing power-of-two bounds, ending at calls.
        set prev_us -1
        set prev_n 0
        foreach {us n} [dict get $h set histogram_usec] {
            assert {$us > $prev_us}
            assert {$n > $prev_n}
            set prev_us $us
            set prev_n $n
        }
        assert_equal 25 $prev_n
    }

    test {LATENCY HISTOGRAM takes subcommands and containers, skips commands never called} {
        r config resetstat
        r config get maxmemory
        r config get maxmemory
        set h [latency_hist config|get]
        assert_equal {config|get} [dict keys $h]
        assert_equal 2 [dict get $h config|get calls]
        # A container brings its subcommands that have a histogram (the
        # RESETSTAT is counted after it ran).
        set h [latency_hist CONFIG]
        assert_equal {config|get config|resetstat} [lsort [dict keys $h]]
        assert_equal {} [r latency histogram lpush]
        # Without names: every command with a histogram (here CONFIG GET and
        # the LATENCY HISTOGRAM calls themselves).
        set all [latency_hist]
        assert_equal 2 [dict get $all config|get calls]
        assert {[dict exists $all latency|histogram]}
    }

    test {LATENCY HISTOGRAM in RESP3 is a map of maps} {
        r config resetstat
        r set lh x
        r hello 3
        set raw [r rawcall latency histogram set]
        r hello 2
        assert_match "%1\r\n\$3\r\nset\r\n%2\r\n\$5\r\ncalls\r\n:1\r\n\$14\r\nhistogram_usec\r\n%1\r\n:*\r\n:1\r\n" $raw
    }

    test {CONFIG RESETSTAT empties the histograms; latency-tracking no stops counting} {
        r set lh x
        r config resetstat
        assert_equal {} [r latency histogram set]
        r config set latency-tracking no
        r set lh y
        assert_equal {} [r latency histogram set]
        r config set latency-tracking yes
        r set lh z
        assert_equal 1 [dict get [latency_hist set] set calls]
    }

    test {INFO latencystats prints the configured percentiles} {
        r config resetstat
        for {set i 0} {$i < 10} {incr i} {r incr lhc}
        set info [r info latencystats]
        assert_match "*# Latencystats\r\n*" $info
        assert {[regexp {latency_percentiles_usec_incr:p50=([0-9.]+),p99=([0-9.]+),p99.9=([0-9.]+)\r\n} $info -> p50 p99 p999]}
        assert {$p50 > 0 && $p50 <= $p99 && $p99 <= $p999}
        # Three decimals, as Redis prints them.
        assert_match {*.???} $p50
        assert_no_match "*latencystats*" [string tolower [r info]]
        assert_match "*latency_percentiles_usec_incr:*" [r info all]
        r config set latency-tracking-info-percentiles "0 50.5 100.0"
        assert_equal {latency-tracking-info-percentiles {0 50.5 100}} [r config get latency-tracking-info-percentiles]
        assert_match "*latency_percentiles_usec_incr:p0=*,p50.5=*,p100=*\r\n*" [r info latencystats]
        r config set latency-tracking-info-percentiles ""
        assert_match "*latency_percentiles_usec_incr:\r\n*" [r info latencystats]
        assert_error {*Invalid latency-tracking-info-percentiles parameters*} {
            r config set latency-tracking-info-percentiles "50 abc"
        }
        assert_error {*should sit between \[0.0,100.0\]*} {
            r config set latency-tracking-info-percentiles "101"
        }
        r config set latency-tracking-info-percentiles "50 99 99.9"
        assert_equal {latency-tracking-info-percentiles {50 99 99.9}} [r config get latency-tracking-info-percentiles]
    }

    test {LATENCY HELP lists HISTOGRAM} {
        assert {[lsearch -exact [r latency help] {HISTOGRAM [COMMAND ...]}] >= 0}
    }

    # --- LOLWUT, MODULE, SCRIPT DEBUG -----------------------------------------------------

    test {LOLWUT answers the version line; VERSION 5 and 6 draw} {
        assert_equal "Redis ver. 7.0.15\n" [r lolwut]
        assert_equal "Redis ver. 7.0.15\n" [r lolwut version 7]
        assert_equal "Redis ver. 7.0.15\n" [r lolwut 5]
        assert_error {ERR value is not an integer or out of range} {r lolwut version x}
        assert_error {ERR value is not an integer or out of range} {r lolwut version 5 x}
        set art [encoding convertfrom utf-8 [r lolwut version 5 10 2 3]]
        set lines [split [string trimright $art "\n"] "\n"]
        # 20x(16*3/2+4 = 28) pixels: 7 rows of 10 braille characters.
        assert_equal 9 [llength $lines]
        foreach l [lrange $lines 0 6] {
            assert_equal 10 [string length $l]
            foreach ch [split $l ""] {
                scan $ch %c code
                assert {$code >= 0x2800 && $code <= 0x28FF}
            }
        }
        assert_equal "Georg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15" [lindex $lines end]
        set art [r lolwut version 6 30 5]
        assert_match "*\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. 7.0.15\n" $art
        assert_equal 7 [llength [split [string trimright $art "\n"] "\n"]]
    }

    test {MODULE: nothing loaded, loading refused as with enable-module-command no} {
        assert_equal {} [r module list]
        assert_error {ERR MODULE command not allowed*} {r module load /tmp/nosuch.so}
        assert_error {ERR MODULE command not allowed*} {r module loadex /tmp/nosuch.so}
        assert_error {ERR MODULE command not allowed*} {r module unload nosuch}
        assert_match "MODULE <subcommand>*LIST*LOADEX*UNLOAD*HELP*" [join [r module help] "\n"]
        assert_error {ERR wrong number of arguments for 'module' command} {r module}
    }

    test {SCRIPT DEBUG NO and argument errors} {
        assert_equal OK [r script debug no]
        assert_error {ERR Use SCRIPT DEBUG YES/SYNC/NO} {r script debug maybe}
    }

    # --- MEMORY ----------------------------------------------------------------------------

    test {MEMORY USAGE} {
        r set small foo
        set u [r memory usage small]
        assert {[string is integer -strict $u] && $u > 0}
        r set large [string repeat x 10000]
        assert_morethan [r memory usage large] 10000
        assert_equal "\$-1\r\n" [r rawcall memory usage nosuchkey]
        assert {[string is integer -strict [r memory usage small samples 0]]}
    }

    test {MEMORY USAGE errors} {
        assert_error {ERR syntax error} {r memory usage small foo}
        assert_error {ERR value is not an integer or out of range} {r memory usage small samples abc}
        assert_error {ERR unknown subcommand 'foo'. Try MEMORY HELP.} {r memory foo}
    }

    test {MEMORY STATS} {
        set st [kv [r memory stats]]
        foreach f {peak.allocated total.allocated startup.allocated keys.count dataset.bytes} {
            assert {[dict exists $st $f]} "MEMORY STATS has $f"
        }
    }

    # --- OBJECT ------------------------------------------------------------------------------

    test {OBJECT ENCODING of strings} {
        r set e 12345
        assert_equal int [r object encoding e]
        r set e -12345
        assert_equal int [r object encoding e]
        r set e foo
        assert_equal embstr [r object encoding e]
        r set e [string repeat a 44]
        assert_equal embstr [r object encoding e]
        r set e [string repeat a 45]
        assert_equal raw [r object encoding e]
        r set e 12345678901234567890
        assert_equal embstr [r object encoding e]
        r set e -0
        assert_equal embstr [r object encoding e]
        r set e 01
        assert_equal embstr [r object encoding e]
    }

    test {OBJECT ENCODING after APPEND and SETRANGE is raw} {
        r set e 1
        r append e 2
        assert_equal raw [r object encoding e]
        r set e abc
        r setrange e 0 x
        assert_equal raw [r object encoding e]
    }

    test {OBJECT ENCODING after INCR is int} {
        r set e 10
        r incr e
        assert_equal int [r object encoding e]
        r set e 1.5
        r incrbyfloat e 1
        assert_equal embstr [r object encoding e]
    }

    test {OBJECT ENCODING of a missing key} {
        assert_equal "\$-1\r\n" [r rawcall object encoding nosuchkey]
    }

    test {OBJECT REFCOUNT} {
        r set rc [string repeat a 20]
        assert_equal 1 [r object refcount rc]
        r set rc 100
        assert {[string is integer -strict [r object refcount rc]]}
        assert_equal "\$-1\r\n" [r rawcall object refcount nosuchkey]
    }

    test {OBJECT IDLETIME} {
        r set idle v
        assert_range [r object idletime idle] 0 1
        assert_equal "\$-1\r\n" [r rawcall object idletime nosuchkey]
    }

    test {OBJECT FREQ without an LFU policy} {
        r set f v
        assert_error {ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.} {r object freq f}
    }

    test {OBJECT FREQ and IDLETIME with an LFU policy} {
        needs_feature lfu-policy
        r set f v
        r config set maxmemory-policy allkeys-lfu
        assert {[string is integer -strict [r object freq f]]}
        assert_error {ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.} {r object idletime f}
        r config set maxmemory-policy noeviction
    }

    test {OBJECT FREQ grows with accesses} {
        needs_feature lfu-policy
        r config set maxmemory-policy allkeys-lfu
        r set hot v
        for {set i 0} {$i < 100} {incr i} {r get hot}
        assert_morethan [r object freq hot] 1
        r config set maxmemory-policy noeviction
    }

    test {OBJECT HELP and errors} {
        set help [r object help]
        assert_match {OBJECT <subcommand> *} [lindex $help 0]
        assert_error {ERR unknown subcommand 'foo'. Try OBJECT HELP.} {r object foo x}
        assert_error {ERR wrong number of arguments for 'object|encoding' command} {r object encoding}
    }

    # --- COMMAND -------------------------------------------------------------------------------

    test {COMMAND COUNT matches COMMAND and COMMAND LIST} {
        set count [r command count]
        assert {[string is integer -strict $count] && $count > 0}
        assert_equal $count [llength [r command]]
        set top 0
        foreach name [r command list] {
            if {[string first | $name] < 0} {incr top}
        }
        assert_equal $count $top
    }

    test {COMMAND INFO of the foundation commands} {
        set bad {}
        foreach expected {
        {get 2 {readonly fast} 1 1 1 {@read @string @fast}}
        {set -3 {write denyoom} 1 1 1 {@write @string @slow}}
        {setnx 3 {write denyoom fast} 1 1 1 {@write @string @fast}}
        {setex 4 {write denyoom} 1 1 1 {@write @string @slow}}
        {psetex 4 {write denyoom} 1 1 1 {@write @string @slow}}
        {getset 3 {write denyoom fast} 1 1 1 {@write @string @fast}}
        {getdel 2 {write fast} 1 1 1 {@write @string @fast}}
        {getex -2 {write fast} 1 1 1 {@write @string @fast}}
        {mget -2 {readonly fast} 1 -1 1 {@read @string @fast}}
        {mset -3 {write denyoom} 1 -1 2 {@write @string @slow}}
        {msetnx -3 {write denyoom} 1 -1 2 {@write @string @slow}}
        {append 3 {write denyoom fast} 1 1 1 {@write @string @fast}}
        {strlen 2 {readonly fast} 1 1 1 {@read @string @fast}}
        {getrange 4 readonly 1 1 1 {@read @string @slow}}
        {setrange 4 {write denyoom} 1 1 1 {@write @string @slow}}
        {substr 4 readonly 1 1 1 {@read @string @slow}}
        {incr 2 {write denyoom fast} 1 1 1 {@write @string @fast}}
        {decr 2 {write denyoom fast} 1 1 1 {@write @string @fast}}
        {incrby 3 {write denyoom fast} 1 1 1 {@write @string @fast}}
        {decrby 3 {write denyoom fast} 1 1 1 {@write @string @fast}}
        {incrbyfloat 3 {write denyoom fast} 1 1 1 {@write @string @fast}}
        {setbit 4 {write denyoom} 1 1 1 {@write @bitmap @slow}}
        {getbit 3 {readonly fast} 1 1 1 {@read @bitmap @fast}}
        {bitcount -2 readonly 1 1 1 {@read @bitmap @slow}}
        {bitpos -3 readonly 1 1 1 {@read @bitmap @slow}}
        {bitop -4 {write denyoom} 2 -1 1 {@write @bitmap @slow}}
        {bitfield -2 {write denyoom} 1 1 1 {@write @bitmap @slow}}
        {bitfield_ro -2 {readonly fast} 1 1 1 {@read @bitmap @fast}}
        {lcs -3 readonly 1 2 1 {@read @string @slow}}
        {del -2 write 1 -1 1 {@keyspace @write @slow}}
        {unlink -2 {write fast} 1 -1 1 {@keyspace @write @fast}}
        {exists -2 {readonly fast} 1 -1 1 {@keyspace @read @fast}}
        {type 2 {readonly fast} 1 1 1 {@keyspace @read @fast}}
        {keys 2 readonly 0 0 0 {@keyspace @read @slow @dangerous}}
        {scan -2 readonly 0 0 0 {@keyspace @read @slow}}
        {randomkey 1 readonly 0 0 0 {@keyspace @read @slow}}
        {rename 3 write 1 2 1 {@keyspace @write @slow}}
        {renamenx 3 {write fast} 1 2 1 {@keyspace @write @fast}}
        {move 3 {write fast} 1 1 1 {@keyspace @write @fast}}
        {copy -3 {write denyoom} 1 2 1 {@keyspace @write @slow}}
        {touch -2 {readonly fast} 1 -1 1 {@keyspace @read @fast}}
        {expire -3 {write fast} 1 1 1 {@keyspace @write @fast}}
        {pexpire -3 {write fast} 1 1 1 {@keyspace @write @fast}}
        {expireat -3 {write fast} 1 1 1 {@keyspace @write @fast}}
        {pexpireat -3 {write fast} 1 1 1 {@keyspace @write @fast}}
        {ttl 2 {readonly fast} 1 1 1 {@keyspace @read @fast}}
        {pttl 2 {readonly fast} 1 1 1 {@keyspace @read @fast}}
        {expiretime 2 {readonly fast} 1 1 1 {@keyspace @read @fast}}
        {pexpiretime 2 {readonly fast} 1 1 1 {@keyspace @read @fast}}
        {persist 2 {write fast} 1 1 1 {@keyspace @write @fast}}
        {select 2 {loading stale fast} 0 0 0 {@fast @connection}}
        {swapdb 3 {write fast} 0 0 0 {@keyspace @write @fast @dangerous}}
        {dbsize 1 {readonly fast} 0 0 0 {@keyspace @read @fast}}
        {flushdb -1 write 0 0 0 {@keyspace @write @slow @dangerous}}
        {flushall -1 write 0 0 0 {@keyspace @write @slow @dangerous}}
        {ping -1 fast 0 0 0 {@fast @connection}}
        {echo 2 {loading stale fast} 0 0 0 {@fast @connection}}
        {quit -1 {noscript loading stale fast no_auth allow_busy} 0 0 0 {@fast @connection}}
        {auth -2 {noscript loading stale fast no_auth allow_busy} 0 0 0 {@fast @connection}}
        {hello -1 {noscript loading stale fast no_auth allow_busy} 0 0 0 {@fast @connection}}
        {client -2 {} 0 0 0 @slow}
        {config -2 {} 0 0 0 @slow}
        {info -1 {loading stale} 0 0 0 {@slow @dangerous}}
        {time 1 {loading stale fast} 0 0 0 @fast}
        {lastsave 1 {loading stale fast} 0 0 0 {@admin @fast @dangerous}}
        {debug -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous}}
        {monitor 1 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous}}
        {slowlog -2 {} 0 0 0 @slow}
        {latency -2 {} 0 0 0 @slow}
        {memory -2 {} 0 0 0 @slow}
        {object -2 {} 0 0 0 @slow}
        {command -1 {loading stale} 0 0 0 {@slow @connection}}
        {shutdown -1 {admin noscript loading stale no_multi allow_busy} 0 0 0 {@admin @slow @dangerous}}
        } {
            set name [lindex $expected 0]
            set got [lrange [lindex [r command info $name] 0] 0 6]
            if {$got ne $expected} {
                lappend bad "$name: expected {$expected} got {$got}"
            }
        }
        assert_equal {} [join $bad "\n"]
    }

    test {COMMAND INFO exact reply for GET (RESP2 and RESP3)} {
        assert_equal "*1\r\n*10\r\n\$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n\$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n*2\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n*6\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n*0\r\n" \
            [r rawcall command info get]
        set c [redis_client]
        $c hello 3
        assert_equal "*1\r\n*10\r\n\$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n\$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n%1\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n%3\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n~0\r\n" \
            [$c rawcall command info get]
        $c close
    }

    test {COMMAND INFO of several and unknown commands} {
        set res [r command info get nosuchcommand set]
        assert_equal 3 [llength $res]
        assert_equal get [lindex $res 0 0]
        assert_equal {} [lindex $res 1]
        assert_equal set [lindex $res 2 0]
        assert_equal "*1\r\n\$-1\r\n" [r rawcall command info nosuchcommand]
    }

    test {COMMAND INFO is case insensitive} {
        assert_equal get [lindex [r command info GET] 0 0]
    }

    test {COMMAND INFO of a container lists its subcommands} {
        set info [lindex [r command info config] 0]
        assert_equal config [lindex $info 0]
        set subs {}
        foreach sub [lindex $info 9] {lappend subs [lindex $sub 0]}
        foreach s {config|get config|set config|resetstat} {
            assert {[lsearch -exact $subs $s] >= 0} "subcommand $s of CONFIG"
        }
    }

    test {COMMAND DOCS exact reply for GET (RESP2 and RESP3)} {
        assert_equal "*2\r\n\$3\r\nget\r\n*10\r\n\$7\r\nsummary\r\n\$22\r\nGet the value of a key\r\n\$5\r\nsince\r\n\$5\r\n1.0.0\r\n\$5\r\ngroup\r\n\$6\r\nstring\r\n\$10\r\ncomplexity\r\n\$4\r\nO(1)\r\n\$9\r\narguments\r\n*1\r\n*6\r\n\$4\r\nname\r\n\$3\r\nkey\r\n\$4\r\ntype\r\n\$3\r\nkey\r\n\$14\r\nkey_spec_index\r\n:0\r\n" \
            [r rawcall command docs get]
        set c [redis_client]
        $c hello 3
        assert_equal "%1\r\n\$3\r\nget\r\n%5\r\n\$7\r\nsummary\r\n\$22\r\nGet the value of a key\r\n\$5\r\nsince\r\n\$5\r\n1.0.0\r\n\$5\r\ngroup\r\n\$6\r\nstring\r\n\$10\r\ncomplexity\r\n\$4\r\nO(1)\r\n\$9\r\narguments\r\n*1\r\n%3\r\n\$4\r\nname\r\n\$3\r\nkey\r\n\$4\r\ntype\r\n\$3\r\nkey\r\n\$14\r\nkey_spec_index\r\n:0\r\n" \
            [$c rawcall command docs get]
        $c close
    }

    test {COMMAND DOCS of SET lists its history and arguments} {
        set d [kv [lindex [r command docs set] 1]]
        assert_equal {Set the string value of a key} [dict get $d summary]
        assert_equal string [dict get $d group]
        assert_equal 4 [llength [dict get $d history]]
        set names {}
        foreach a [dict get $d arguments] {lappend names [dict get [kv $a] name]}
        assert_equal {key value condition get expiration} $names
    }

    test {COMMAND DOCS of an unknown command is empty} {
        assert_equal "*0\r\n" [r rawcall command docs nosuchcommand]
    }

    test {COMMAND DOCS without arguments documents every command} {
        set docs [r command docs]
        assert_equal [expr {2 * [r command count]}] [llength $docs]
    }

    test {COMMAND LIST FILTERBY} {
        assert_equal [lsort {getbit getdel getset getrange getex get}] [lsort [r command list filterby pattern get*]]
        assert_equal [lsort {setnx incrby set psetex incrbyfloat incr getdel decr lcs decrby setex mset getset substr append msetnx getrange mget setrange getex get strlen}] \
            [lsort [r command list filterby aclcat string]]
        assert_equal {} [r command list filterby module nosuchmodule]
        assert_error {ERR syntax error} {r command list filterby foo x}
        assert_error {ERR syntax error} {r command list filterby}
    }

    test {COMMAND GETKEYS} {
        assert_equal {a} [r command getkeys set a b]
        assert_equal {a} [r command getkeys get a]
        assert_equal {a b} [r command getkeys mset a 1 b 2]
        assert_equal {a b c} [r command getkeys mget a b c]
        assert_equal {a b} [r command getkeys copy a b]
        assert_equal {a b} [r command getkeys rename a b]
        assert_equal {a b} [r command getkeys lcs a b]
        assert_equal {d a b} [r command getkeys bitop and d a b]
        assert_equal {a b c} [r command getkeys del a b c]
    }

    test {COMMAND GETKEYS errors} {
        assert_error {ERR Invalid command specified} {r command getkeys nosuchcommand a}
        assert_error {ERR Invalid number of arguments specified for command} {r command getkeys get a b}
        assert_error {ERR The command has no key arguments} {r command getkeys config get x}
        assert_error {ERR wrong number of arguments for 'command|getkeys' command} {r command getkeys get}
    }

    test {COMMAND errors} {
        assert_error {ERR unknown subcommand 'foo'. Try COMMAND HELP.} {r command foo}
    }

    # --- Goblin-specific ------------------------------------------------------------------------

    test {INFO goblin section} {
        set info [r info goblin]
        assert_match "# Goblin\r\n*" $info
        assert {[llength [split [string trim $info] "\n"]] > 1} "INFO goblin has fields"
    } {goblin_only}

    test {CONFIG GET of Goblin flags} {
        foreach p {cores ram-head block arena-hugetlb} {
            set res [r config get $p]
            assert_equal 2 [llength $res] "CONFIG GET $p"
        }
    } {goblin_only}
}

start_server {tags {server} overrides {requirepass startpass}} {
    test {requirepass given at start-up} {
        set c [redis_client]
        assert_error {NOAUTH Authentication required.} {$c ping}
        assert_error {WRONGPASS invalid username-password pair or user is disabled.} {$c auth nope}
        assert_equal OK [$c auth startpass]
        assert_equal PONG [$c ping]
        assert_equal {requirepass startpass} [$c config get requirepass]
        $c close
    }

    test {HELLO AUTH with the start-up password} {
        set c [redis_client]
        assert_equal 2 [dict get [kv [$c hello 2 auth default startpass]] proto]
        assert_equal PONG [$c ping]
        $c close
    }
}

start_server {tags {server}} {
    test {SHUTDOWN with a bad argument} {
        assert_error {ERR syntax error} {r shutdown foo}
        assert_error {ERR syntax error} {r shutdown nosave save}
        assert_equal PONG [r ping]
    }

    test {SHUTDOWN NOSAVE stops the server} {
        server_expect_exit
        r set k v
        set pid [srv pid]
        # The server closes the connection without a reply.
        assert_error {*closed*} {r shutdown nosave}
        wait_for_condition 100 50 {![::srv::alive $pid]} else {
            fail "server $pid still running after SHUTDOWN NOSAVE"
        }
        assert_equal 0 [llength [glob -nocomplain [file join [srv dir] *.rdb]]]
    }
}

# Start-up errors: a bad command line or config file stops the server with
# exit code 1 and a message that names the culprit. No start_server here:
# the binary is run directly.
tags {server startup} {
    test {An unknown option on the command line is refused} {
        lassign [run_server_binary {--port 0 --nosuchoption 1}] status out
        assert_equal 1 $status "exit status; output: $out"
        assert_match "*nosuchoption*" $out
    }

    test {A bad value on the command line is refused} {
        lassign [run_server_binary {--port 0 --databases notanumber}] status out
        assert_equal 1 $status "exit status; output: $out"
        assert_match "*databases*" $out
    }

    # The server's exit status and output, started with a config file of text.
    proc run_with_conf {text} {
        set f [file join $::srv::tmproot conf-[pid].conf]
        set fh [open $f w]
        puts $fh $text
        close $fh
        set r [run_server_binary [list $f]]
        file delete $f
        return $r
    }

    test {An unknown directive in the config file names its line} {
        lassign [run_with_conf "port 0\nnosuchdirective yes\n"] status out
        assert_equal 1 $status "exit status; output: $out"
        assert_match "*line 2*" $out
        assert_match "*nosuchdirective*" $out
    }

    test {A bare multi-argument directive (save) is taken as empty, as Redis} {
        lassign [run_with_conf "port 0\nsave\nclient-output-buffer-limit\nnosuchdirective yes\n"] status out
        assert_equal 1 $status "exit status; output: $out"
        assert_match "*line 4*" $out
    }

    # A server started with a config file: its pid, port and a client.
    proc start_with_conf {f port} {
        set pid [exec $::srv::binary $f >> $f.out 2>@1 &]
        for {set i 0} {$i < 200} {incr i} {
            if {![catch {::resp::client -port $port} c]} {
                if {![catch {$c ping}]} {return [list $pid $c]}
                $c close
            }
            after 25
        }
        catch {exec kill -9 $pid}
        error "the server with $f did not start: [exec cat $f.out]"
    }

    proc stop_conf_server {pid c} {
        catch {$c shutdown nosave}
        catch {$c close}
        wait_for_condition 200 25 {![::srv::alive $pid]} else { fail "server $pid still running" }
    }

    test {DEBUG CONFIG-REWRITE-FORCE-ALL writes every setting and the server starts from it with the same configuration} {
        set dir [file join $::srv::tmproot rewrite-[pid]]
        file mkdir $dir
        set f [file join $dir server.conf]
        set port [::srv::free_port]
        set fh [open $f w]
        puts $fh "port $port\nbind 127.0.0.1\nsave \"\"\ndir $dir\nenable-debug-command yes\nmaxmemory 12345678\nappendonly no"
        if {[is_goblin]} {puts $fh "memcache-port 0"}
        close $fh
        lassign [start_with_conf $f $port] pid c
        set before [$c config get *]
        set lines [llength [split [string trim [exec cat $f]] "\n"]]
        assert_equal OK [$c debug config-rewrite-force-all]
        set after_lines [llength [split [string trim [exec cat $f]] "\n"]]
        assert_morethan $after_lines [expr {$lines + 50}]
        stop_conf_server $pid $c
        lassign [start_with_conf $f $port] pid c
        set after [$c config get *]
        stop_conf_server $pid $c
        file delete -force $dir
        set diffs {}
        foreach {k v} $before {
            if {[dict get $after $k] ne $v} {lappend diffs "$k: '$v' -> '[dict get $after $k]'"}
        }
        assert_equal {} $diffs
    }

    test {An argument "-" reads directives from standard input, as Redis} {
        set f [file join $::srv::tmproot stdin-[pid].conf]
        set fh [open $f w]
        puts $fh "port 0\nnosuchdirective yes\n"
        close $fh
        foreach argv [list [list - < $f] [list --port 0 - < $f]] {
            lassign [run_server_binary $argv] status out
            assert_equal 1 $status "exit status; output: $out"
            assert_match "*line 2*" $out
            assert_match "*nosuchdirective*" $out
        }
        file delete $f
    }

    test {--ram-head must be a power of two dividing --block} {
        lassign [run_server_binary {--port 0 --ram-head 3K}] status out
        assert_equal 1 $status "exit status; output: $out"
        assert_match "*ram-head*" $out
    } {goblin_only}

    test {--block must be a power of two} {
        lassign [run_server_binary {--port 0 --block 3M}] status out
        assert_equal 1 $status "exit status; output: $out"
        assert_match "*block*" $out
    } {goblin_only}
}

# The counters of INFO stats and commandstats are kept per thread (goblin
# --cores 2: the clients below land on both workers) and added up by INFO.
if {[is_goblin]} {
    set ::stats_server_args {--cores 2}
} else {
    set ::stats_server_args {}
}

start_server [list tags {server} args $::stats_server_args] {
    test {INFO counters add up the commands of clients on every worker} {
        set clients {}
        for {set i 0} {$i < 8} {incr i} {lappend clients [redis_client]}
        set dirty0 [getInfoProperty [r info persistence] rdb_changes_since_last_save]
        r config resetstat
        set in0 [s total_net_input_bytes]
        set i 0
        foreach c $clients {
            for {set k 0} {$k < 25} {incr k} {
                $c incr cnt:$i
                $c get cnt:$i
            }
            $c get nokey:$i
            incr i
        }
        set info [r info commandstats]
        assert_match {calls=200,*} [getInfoProperty $info cmdstat_incr]
        assert_match {calls=208,*} [getInfoProperty $info cmdstat_get]
        set st [r info stats]
        # resetstat, info stats, the commands above and info commandstats.
        assert_equal [expr {1 + 1 + 408 + 1}] [getInfoProperty $st total_commands_processed]
        assert_equal 200 [getInfoProperty $st keyspace_hits]
        assert_equal 8 [getInfoProperty $st keyspace_misses]
        assert_morethan [getInfoProperty $st total_net_input_bytes] [expr {$in0 + 408 * 20}]
        assert_equal [expr {$dirty0 + 200}] [getInfoProperty [r info persistence] rdb_changes_since_last_save]
        r config resetstat
        set st [r info stats]
        assert_equal 1 [getInfoProperty $st total_commands_processed]
        assert_equal 0 [getInfoProperty $st keyspace_hits]
        assert_no_match {*cmdstat_incr*} [r info commandstats]
        # Not a statistic: the changes since the last save stay.
        assert_equal [expr {$dirty0 + 200}] [getInfoProperty [r info persistence] rdb_changes_since_last_save]
    }
}

start_server {tags {server} overrides {bind {127.0.0.1 -::1}}} {
    test {CLIENT LIST writes an IPv6 address in brackets, as Redis} {
        if {[catch {redis_client -host ::1} c]} {
            puts "    skipped: no IPv6 loopback here ($c)"
        } else {
            set line [$c client info]
            assert_match {\[::1\]:[0-9]*} [client_field $line addr]
            assert_equal "\[::1\]:[srv port]" [client_field $line laddr]
            # The loopback is trusted as Redis trusts it (protected mode).
            assert_equal PONG [$c ping]
            set addr [client_field $line addr]
            assert_equal 1 [r client kill addr $addr]
            $c close
        }
    }
}
