# Limits: protected mode, client-output-buffer-limit (normal and pubsub
# classes, hard and soft limits), maxclients, timeout, the query buffer
# limit. A client that breaks a limit is disconnected; the others are not.

set DENIED {-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.}

# Field f of the client named name in CLIENT LIST.
proc client_field {name f} {
    foreach line [split [string trim [r client list]] "\n"] {
        if {[string match "*name=$name *" $line] && [regexp " $f=(\[^ \]*)" $line -> v]} { return $v }
    }
    error "no client named $name"
}

# The sum of every client's tot-mem but the asking one's: that one holds
# this very reply while CLIENT LIST runs. Given another client, the asking
# one is added as that client sees it, idle: then the sum is the server's
# own total, whatever the asking client held before. Without it the sum is
# below the total by the asking client, which only raises how far over a
# limit taken from it the server is.
proc clients_sum {{other {}}} {
    set sum 0
    foreach line [split [string trim [r client list]] "\n"] {
        if {[string match {*cmd=client|list*} $line]} continue
        if {[regexp { tot-mem=([0-9]+)} $line -> v]} { incr sum $v }
    }
    # The asking client, seen idle through another one: the server counts it too.
    if {$other ne {}} {
        set line [$other client list id [r client id]]
        if {[regexp { tot-mem=([0-9]+)} $line -> v]} { incr sum $v }
    }
    return $sum
}

# Read from c until the server closes it or ms pass; returns what arrived.
proc read_until_closed {c ms} {
    set out [$c read_all $ms]
    return $out
}

# Publish n messages of size bytes on channel; returns the sum of receivers.
proc publish_many {c channel n size} {
    set msg [string repeat m $size]
    set sum 0
    for {set i 0} {$i < $n} {incr i} {
        incr sum [$c publish $channel $msg]
    }
    return $sum
}

start_server {tags {limits}} {

    # --- client-output-buffer-limit ------------------------------------------------------------

    test {client-output-buffer-limit: CONFIG GET/SET} {
        assert_equal {client-output-buffer-limit {normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60}} \
            [r config get client-output-buffer-limit]
        r config set client-output-buffer-limit "pubsub 1mb 512kb 10"
        assert_equal {normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 10} \
            [lindex [r config get client-output-buffer-limit] 1]
        r config set client-output-buffer-limit "replica 1 2 3 normal 4 5 6"
        assert_equal {normal 4 5 6 slave 1 2 3 pubsub 1048576 524288 10} \
            [lindex [r config get client-output-buffer-limit] 1]
        set pre {ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - }
        assert_error "${pre}Wrong number of arguments in buffer limit configuration." \
            {r config set client-output-buffer-limit "normal 1 2"}
        assert_error "${pre}Invalid client class specified in buffer limit configuration." \
            {r config set client-output-buffer-limit "foo 1 2 3"}
        assert_error "${pre}Error in hard, soft or soft_seconds setting in buffer limit configuration." \
            {r config set client-output-buffer-limit "normal x 2 3"}
        assert_error "${pre}Error in hard, soft or soft_seconds setting in buffer limit configuration." \
            {r config set client-output-buffer-limit "normal 1 2 -3"}
        # A failed SET changes nothing.
        assert_equal {normal 4 5 6 slave 1 2 3 pubsub 1048576 524288 10} \
            [lindex [r config get client-output-buffer-limit] 1]
        r config set client-output-buffer-limit "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    }

    test {A reply larger than the normal hard limit closes its client and nothing of it is sent} {
        # The value is large enough to go to the socket straight from the
        # store: Redis counts a reply whole before any byte leaves.
        r set big [string repeat v 600000]
        r config set client-output-buffer-limit "normal 500000 0 0"
        set rd [redis_client]
        $rd client setname biggetter
        assert_error {*} {$rd get big}
        wait_for_condition 50 20 {![string match "*name=biggetter*" [r client list]]} else {
            fail "the client is still connected"
        }
        # A reply under the limit goes out whole.
        set rd [redis_client]
        r set small [string repeat s 400000]
        assert_equal 400000 [string length [$rd get small]]
        $rd close
        r config set client-output-buffer-limit "normal 0 0 0"
        r del big small
    }

    test {A subscriber that does not read is disconnected at the pubsub hard limit} {
        r config set client-output-buffer-limit "pubsub 1mb 0 0"
        set sub [redis_client]
        $sub subscribe slowchan
        set other [redis_client]
        $other subscribe slowchan
        set pub [redis_client]
        # The other subscriber reads as it goes; the slow one never does.
        set msg [string repeat m 10000]
        for {set i 0} {$i < 3000} {incr i} {
            $pub publish slowchan $msg
            if {$i % 10 == 0} {$other read_all 1}
        }
        $other read_all 20
        # Only the reading subscriber is left, and it still gets messages.
        assert_equal 1 [$pub publish slowchan last]
        assert_equal {message slowchan last} [$other read]
        assert_equal 1 [$sub wait_closed 3000]
        r config set client-output-buffer-limit "pubsub 33554432 8388608 60"
    }

    test {A subscriber above the pubsub soft limit for longer than its seconds is disconnected} {
        r config set client-output-buffer-limit "pubsub 0 100kb 2"
        set sub [redis_client]
        $sub subscribe softchan
        set pub [redis_client]
        set msg [string repeat m 10000]
        # Fill the socket buffers and then some.
        set t0 [clock milliseconds]
        for {set i 0} {$i < 3000} {incr i} {$pub publish softchan $msg}
        # Over the soft limit for less than its seconds: still subscribed.
        # (A slow machine may take the whole period filling; then only
        # the disconnection below is checked.)
        if {[clock milliseconds] - $t0 < 1500} {
            assert_equal 1 [$pub publish softchan $msg]
        }
        after 2100
        # Over the soft limit for more than a second: the next growth closes it.
        $pub publish softchan $msg
        wait_for_condition 50 20 {[$pub publish softchan x] == 0} else {
            fail "the slow subscriber is still subscribed"
        }
        assert_equal 1 [$sub wait_closed 3000]
        r config set client-output-buffer-limit "pubsub 33554432 8388608 60"
    }

    test {A subscriber above the soft limit is disconnected when its seconds pass with no more output} {
        r config set client-output-buffer-limit "pubsub 0 100kb 1"
        set sub [redis_client]
        $sub client setname quietsub
        $sub subscribe quietchan
        set pub [redis_client]
        set msg [string repeat m 10000]
        # Publish until its output held beyond the socket is over the soft
        # limit, then nothing more: the server's periodic check closes it.
        wait_for_condition 2000 0 {
            [$pub publish quietchan $msg] == 0 ||
            ([regexp {name=quietsub [^\n]*omem=([0-9]+)} [r client list] -> omem] && $omem > 120000)
        } else {
            fail "the subscriber's output never passed the soft limit"
        }
        wait_for_condition 100 50 {![string match *name=quietsub* [r client list]]} else {
            fail "the subscriber over its soft limit is still connected: [r client list]"
        }
        assert_equal 1 [$sub wait_closed 3000]
        r config set client-output-buffer-limit "pubsub 33554432 8388608 60"
    }

    test {A client pipelining large replies without reading is disconnected at the normal hard limit} {
        r config set client-output-buffer-limit "normal 1mb 0 0"
        r set big [string repeat x 100000]
        set slow [redis_client]
        set buf ""
        for {set i 0} {$i < 400} {incr i} {append buf [::resp::encode {get big}]}
        $slow write $buf
        $slow flush
        # Everyone else is served; the slow client goes away.
        wait_for_condition 100 20 {![string match "*cmd=get*" [r client list]]} else {
            fail "the pipelining client was not disconnected"
        }
        assert_equal 100000 [r strlen big]
        r config set client-output-buffer-limit "normal 0 0 0"
    }

    test {Without a normal-class limit large outputs are delivered} {
        set c [redis_client]
        set buf ""
        for {set i 0} {$i < 200} {incr i} {append buf [::resp::encode {get big}]}
        $c write $buf
        $c flush
        for {set i 0} {$i < 200} {incr i} {
            assert_equal 100000 [string length [$c read]]
        }
        r del big
    }

    # --- maxclients, timeout ------------------------------------------------------------------

    test {maxclients refuses the connection over the limit} {
        set n [llength [split [string trim [r client list]] "\n"]]
        r config set maxclients [expr {$n + 1}]
        set c1 [redis_client]
        assert_equal PONG [$c1 ping]
        set c2 [redis_client]
        catch {$c2 ping} err
        assert_match {*max number of clients reached*} $err
        r config set maxclients 10000
    }

    test {client-query-buffer-limit closes only the offending client} {
        r config set client-query-buffer-limit 1mb
        set c [redis_client]
        # One incomplete bulk argument of 2 MB.
        $c write "*2\r\n\$3\r\nget\r\n\$2000000\r\n[string repeat a 1200000]"
        $c flush
        assert_equal 1 [$c wait_closed 3000]
        assert_equal PONG [r ping]
        r config set client-query-buffer-limit 1gb
    }

    # --- maxmemory-clients: client eviction ----------------------------------------------------

    test {maxmemory-clients: CONFIG GET/SET, memory values and percentages} {
        assert_equal {maxmemory-clients 0} [r config get maxmemory-clients]
        r config set maxmemory-clients 3mb
        assert_equal {maxmemory-clients 3145728} [r config get maxmemory-clients]
        r config set maxmemory-clients 10%
        assert_equal {maxmemory-clients 10%} [r config get maxmemory-clients]
        assert_error {*percentage argument must be less or equal to 100*} {r config set maxmemory-clients 101%}
        assert_error {*argument must be a memory or percent value*} {r config set maxmemory-clients -1}
        assert_error {*argument must be a memory or percent value*} {r config set maxmemory-clients 1.5%}
        assert_equal {maxmemory-clients 10%} [r config get maxmemory-clients]
        r config set maxmemory-clients 0
    }

    test {maxmemory-clients: the client over the limit is evicted, the others stay} {
        set before [s evicted_clients]
        r config set maxmemory-clients 1mb
        set small [redis_client]
        $small client setname small
        set big [redis_client]
        $big client setname big
        # One incomplete bulk argument of 1.2 MB: its query buffer passes 1 MB.
        # (The write itself may fail: the server closes while it reads.)
        catch {
            $big write "*2\r\n\$3\r\nget\r\n\$2000000\r\n[string repeat a 1200000]"
            $big flush
        }
        assert_equal 1 [$big wait_closed 3000]
        assert_equal small [$small client getname]
        assert_equal [expr {$before + 1}] [s evicted_clients]
        if {[is_goblin]} { assert_match {*Evicting client: *name=big*} [::srv::log_tail [::srv::current] 40] }
        $small close
        r config set maxmemory-clients 0
    }

    test {maxmemory-clients: the largest evictable client goes first; CLIENT NO-EVICT protects until turned off} {
        r client no-evict on
        set a [redis_client]
        $a client setname a
        $a client no-evict on
        set b [redis_client]
        $b client setname b
        set c [redis_client]
        $c client setname c
        # Watched keys count, as in Redis.
        set m0 [client_field a tot-mem]
        set keys {}
        for {set i 0} {$i < 8000} {incr i} { lappend keys [string repeat k 90]:$i }
        $a watch {*}$keys
        assert_morethan [client_field a tot-mem] [expr {$m0 + 8000 * 40}]
        $b watch {*}[lrange $keys 0 2999]
        set ma [client_field a tot-mem]
        set mb [client_field b tot-mem]
        assert_morethan $mb [client_field c tot-mem]
        # Half of b's memory over the limit: b, the largest that may go, goes.
        r config set maxmemory-clients [expr {[clients_sum $c] - $mb / 2}]
        assert_equal 1 [$b wait_closed 3000]
        assert_equal c [$c client getname]
        # Under the limit now: turning a's protection off evicts nothing.
        $a client no-evict off
        assert_equal a [$a client getname]
        # A lower limit: a goes, c stays.
        r config set maxmemory-clients [expr {[clients_sum $c] - $ma / 2}]
        assert_equal 1 [$a wait_closed 3000]
        assert_equal c [$c client getname]
        $c close
        r config set maxmemory-clients 0
        r client no-evict off
    }

    test {maxmemory-clients: turning CLIENT NO-EVICT off evicts a client over the limit} {
        r client no-evict on
        set a [redis_client]
        $a client setname a
        $a client no-evict on
        set keys {}
        for {set i 0} {$i < 8000} {incr i} { lappend keys [string repeat k 90]:$i }
        $a watch {*}$keys
        set ma [client_field a tot-mem]
        r config set maxmemory-clients [expr {[clients_sum] - $ma / 2}]
        assert_equal PONG [$a ping]
        $a client no-evict off
        assert_equal 1 [$a wait_closed 3000]
        r config set maxmemory-clients 0
        r client no-evict off
    }
}

# --- maxmemory and eviction ---------------------------------------------------------------------

proc used_memory {} {
    getInfoProperty [r info memory] used_memory
}

# Set maxmemory to the current usage plus extra bytes, with a policy.
proc set_maxmemory {extra policy} {
    r config set maxmemory 0
    r config set maxmemory-policy $policy
    r config set maxmemory [expr {[used_memory] + $extra}]
}

# Keys evicted since the count was before, and the keys left, in one
# snapshot: any command may evict before it runs, EXEC's body not.
proc evicted_and_dbsize {before} {
    r multi
    r dbsize
    r info stats
    lassign [r exec] dbsize info
    list [expr {[getInfoProperty $info evicted_keys] - $before}] $dbsize
}

proc reset_maxmemory {} {
    r config set maxmemory 0
    r config set maxmemory-policy noeviction
    r flushall
}

# Write n keys prefix:i of size bytes (with a TTL when ttl > 0); returns
# how many writes succeeded. Pipelined for speed, replies checked.
proc fill_keys {prefix n size {ttl 0}} {
    set v [string repeat v $size]
    set ok 0
    set c [redis_client]
    for {set i 0} {$i < $n} {incr i} {
        if {$ttl > 0} {
            set cmd [list set $prefix:$i $v ex [expr {$ttl + $i}]]
        } else {
            set cmd [list set $prefix:$i $v]
        }
        if {![catch {$c {*}$cmd}]} {incr ok}
    }
    $c close
    return $ok
}

proc present {prefix n} {
    set k 0
    for {set i 0} {$i < $n} {incr i} {
        if {[r exists $prefix:$i]} {incr k}
    }
    return $k
}

start_server {tags {limits maxmemory}} {
    test {maxmemory-policy accepts every Redis policy with a limit set} {
        foreach p {volatile-lru volatile-lfu volatile-random volatile-ttl allkeys-lru allkeys-lfu allkeys-random noeviction} {
            r config set maxmemory 100mb
            r config set maxmemory-policy $p
            assert_equal $p [lindex [r config get maxmemory-policy] 1]
        }
        assert_error {*argument(s) must be one of the following*} {r config set maxmemory-policy nosuch}
        r config set maxmemory 0
    }

    test {noeviction: denyoom commands get -OOM and change nothing} {
        r flushall
        set_maxmemory 2000000 noeviction
        set ok [fill_keys k 1000 10000]
        assert_range $ok 20 999
        # Well over the limit whatever the client buffers freed meanwhile.
        r config set maxmemory [expr {[used_memory] - 500000}]
        assert_error {OOM command not allowed when used memory > 'maxmemory'.} {r set newkey v}
        assert_equal 0 [r exists newkey]
        assert_error {OOM command not allowed when used memory > 'maxmemory'.} {r lpush newlist a}
        assert_equal 0 [r exists newlist]
        assert_error {OOM command not allowed when used memory > 'maxmemory'.} {r append k:0 x}
        assert_equal 10000 [r strlen k:0]
        # Reads, deletes and other non-denyoom commands still work.
        assert_equal 10000 [r strlen k:1]
        assert_equal 1 [r del k:1]
        assert_equal PONG [r ping]
        assert_equal 0 [getInfoProperty [r info stats] evicted_keys]
        # Queuing in MULTI is refused; EXEC then aborts.
        r multi
        assert_error {OOM command not allowed when used memory > 'maxmemory'.} {r get k:2}
        assert_error {EXECABORT*} {r exec}
        reset_maxmemory
        assert_equal OK [r set newkey v]
    }

    test {allkeys-random evicts to stay under maxmemory} {
        r flushall
        set before [getInfoProperty [r info stats] evicted_keys]
        set_maxmemory 2000000 allkeys-random
        assert_equal 1000 [fill_keys k 1000 10000]
        lassign [evicted_and_dbsize $before] evicted dbsize
        assert_range $evicted 100 999
        assert_equal [expr {1000 - $evicted}] $dbsize
        assert_lessthan [used_memory] [expr {[lindex [r config get maxmemory] 1] + 500000}]
        reset_maxmemory
    }

    test {CONFIG SET maxmemory under the memory in use evicts at once, with no command to run first} {
        r flushall
        r config set notify-keyspace-events Ee
        set sub [redis_deferring_client]
        $sub timeout 3000
        $sub psubscribe *
        $sub read
        r set foo bar
        r config set maxmemory-policy allkeys-lru
        r config set maxmemory 1
        # No command follows: the eviction comes on its own, as Redis's.
        assert_equal {pmessage * __keyevent@0__:evicted foo} [$sub read]
        assert_match "*WARNING: the new maxmemory value set via CONFIG SET (1) is smaller than the current memory usage*" [server_log]
        reset_maxmemory
        r config set notify-keyspace-events ""
        $sub close
    }

    test {Evicting small keys frees memory key by key} {
        # 60000 keys of 100 bytes: many share each 16 KiB slab of their
        # shard's pool, so used memory must drop by an entry's bytes when
        # one goes, not when its whole slab empties.
        r flushall
        set v [string repeat v 100]
        for {set i 0} {$i < 60} {incr i} {
            set kv {}
            for {set j 0} {$j < 1000} {incr j} { lappend kv s:[expr {$i * 1000 + $j}] $v }
            r mset {*}$kv
        }
        set before [getInfoProperty [r info stats] evicted_keys]
        set_maxmemory 50000 allkeys-random
        set n [fill_keys t 20000 100]
        assert_equal 20000 $n
        lassign [evicted_and_dbsize $before] evicted dbsize
        # 20000 more keys over a 50 KB margin: about as many go, not most
        # of the 80000.
        assert_range $evicted 1000 30000
        assert_equal [expr {80000 - $evicted}] $dbsize
        assert_lessthan [used_memory] [expr {[lindex [r config get maxmemory] 1] + 500000}]
        reset_maxmemory
    }

    test {allkeys-lru keeps recently used keys} {
        r flushall
        set_maxmemory 4000000 allkeys-lru
        assert_equal 200 [fill_keys old 200 10000]
        # The LRU clock counts seconds.
        after 2100
        # Keep the hot keys as fresh as the newest writes: on a slow machine
        # writing 400 keys spans seconds, and hot keys touched only once would
        # be older than most new keys (so rightly evicted right after the cold).
        set written 0
        for {set b 0} {$b < 8} {incr b} {
            for {set i 0} {$i < 100} {incr i} {r get old:$i}
            incr written [fill_keys new$b 50 10000]
        }
        assert_equal 400 $written
        set hot [present old 100]
        set cold [expr {[present old 200] - $hot}]
        assert_morethan $hot [expr {$cold + 30}]
        reset_maxmemory
    }

    test {allkeys-lfu keeps frequently used keys} {
        r flushall
        set_maxmemory 4000000 allkeys-lfu
        assert_equal 200 [fill_keys f 200 10000]
        for {set round 0} {$round < 30} {incr round} {
            for {set i 0} {$i < 100} {incr i} {r get f:$i}
        }
        assert_equal 400 [fill_keys n 400 10000]
        set hot [present f 100]
        set cold [expr {[present f 200] - $hot}]
        assert_morethan $hot [expr {$cold + 30}]
        reset_maxmemory
    }

    test {volatile-ttl evicts the keys closest to expiry first} {
        r flushall
        set_maxmemory 3000000 volatile-ttl
        # TTLs grow with the index: low indexes expire first.
        assert_equal 600 [fill_keys t 600 10000 10000]
        assert_lessthan [present t 100] 20
        assert_morethan [present t 600] 150
        set last [expr {[present t 600] - [present t 500]}]
        assert_morethan $last 80
        reset_maxmemory
    }

    test {volatile policies never evict keys without a TTL} {
        foreach p {volatile-lru volatile-lfu volatile-random volatile-ttl} {
            r flushall
            set_maxmemory 2000000 $p
            assert_equal 100 [fill_keys persist 100 1000]
            set ok [fill_keys vol 1000 10000 100000]
            assert_equal 100 [present persist 100] "policy $p"
            assert_morethan [getInfoProperty [r info stats] evicted_keys] 0
            # Without volatile keys left to evict, writes are refused.
            r config set maxmemory 1
            foreach k [r keys vol:*] {r del $k}
            assert_error {OOM*} {r set another v}
            assert_equal 100 [present persist 100] "policy $p"
            reset_maxmemory
        }
    }

    test {Evicted keys fire "evicted" keyspace events and dirty WATCH} {
        r flushall
        r config set notify-keyspace-events Ee
        set sub [redis_client]
        $sub psubscribe __keyevent@*__:evicted
        set w [redis_client]
        r config set maxmemory-policy allkeys-random
        r set watched v
        $w watch watched
        $w multi
        r config set maxmemory 1
        catch {r set trigger v}
        r config set maxmemory 0
        assert_equal 0 [r dbsize]
        set msg [$sub read]
        assert_equal pmessage [lindex $msg 0]
        assert_equal evicted [lindex [split [lindex $msg 2] :] end]
        $w ping
        assert_equal {} [$w exec]
        r config set notify-keyspace-events ""
        reset_maxmemory
    }
}

# The default client would be idle too: a server of its own.
start_server {tags {limits}} {
    test {timeout closes idle clients but not subscribers} {
        set idle [redis_client]
        set sub [redis_client]
        $sub subscribe tchan
        r config set timeout 1
        assert_equal 1 [$idle wait_closed 4000]
        set c [redis_client]
        $c config set timeout 0
        assert_equal 1 [$c publish tchan hi]
        assert_equal {message tchan hi} [$sub read]
    }

}

# --- protected mode ---------------------------------------------------------------------------
#
# A non-loopback peer is made inside a network namespace of our own: a veth
# pair with two addresses, both inside the namespace. The server and the
# clients run in it (clients are small Python scripts run by ip netns exec).

set pm_script {
import socket, sys
host, src, port, send = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = socket.socket()
if src != '-':
    s.bind((src, 0))
s.settimeout(3)
s.connect((host, port))
if send != '-':
    s.sendall(send.encode().replace(b'\\n', b'\r\n'))
out = b''
try:
    while True:
        d = s.recv(65536)
        if not d:
            out += b'<EOF>'
            break
        out += d
        if send != '-' and out.count(b'\r\n') >= send.count('\n'):
            break
except socket.timeout:
    out += b'<TIMEOUT>'
except ConnectionResetError:
    out += b'<RESET>'
sys.stdout.write(out.decode('latin1'))
}

proc pm_setup {} {
    if {[catch {exec id -u} uid] || $uid != 0} {return "needs root for ip netns"}
    if {[auto_execok ip] eq "" || [auto_execok python3] eq ""} {return "needs ip and python3"}
    set ::pm_ns "goblin-pm-[pid]"
    set ns $::pm_ns
    if {[catch {
        exec ip netns add $ns
        exec ip netns exec $ns ip link set lo up
        exec ip netns exec $ns ip link add gbpm0 type veth peer name gbpm1
        exec ip netns exec $ns ip addr add 10.251.0.1/30 dev gbpm0
        exec ip netns exec $ns ip addr add 10.251.0.2/30 dev gbpm1
        exec ip netns exec $ns ip link set gbpm0 up
        exec ip netns exec $ns ip link set gbpm1 up
    } err]} {
        catch {exec ip netns del $ns}
        return "cannot create a network namespace: $err"
    }
    return ""
}

proc pm_teardown {} {
    catch {exec ip netns del $::pm_ns}
}

# Connect inside the namespace from src (or "-") to host:6379, optionally
# send a line, and return what came back.
proc pm_client {host src {send -}} {
    set fd [open |[list ip netns exec $::pm_ns python3 -c $::pm_script $host $src 6379 $send] r]
    fconfigure $fd -translation binary
    set out [read $fd]
    close $fd
    return $out
}

# -defaultbind first: no bind given, the server's default applies.
proc pm_start_server {args} {
    set dir [file normalize [file join $::srv::tmproot "pm-[pid]"]]
    file mkdir $dir
    set argv [list --port 6379 --dir $dir --save ""]
    if {[lindex $args 0] eq "-defaultbind"} {
        set args [lrange $args 1 end]
    } else {
        lappend argv --bind "10.251.0.1 127.0.0.1"
    }
    if {[::srv::kind] eq "redis"} {lappend argv --daemonize no --appendonly no}
    lappend argv {*}$args
    set ::pm_pid [exec ip netns exec $::pm_ns $::srv::binary {*}$argv >& [file join $dir log] &]
    for {set i 0} {$i < 200} {incr i} {
        if {![catch {pm_client 127.0.0.1 - "PING\n"} r] && [string match "+PONG*" $r]} return
        after 20
    }
    error "server in the namespace did not start: [exec cat [file join $dir log]]"
}

proc pm_stop_server {} {
    catch {exec kill $::pm_pid}
    for {set i 0} {$i < 200 && [file exists /proc/$::pm_pid]} {incr i} {after 10}
    catch {exec kill -9 $::pm_pid}
    catch {file delete -force [file join $::srv::tmproot "pm-[pid]"]}
}

tags {limits protected-mode} {
    set why [pm_setup]
    if {$why ne ""} {
        ::t::record_skip {Protected mode (network namespace)} $why
    } else {
        try {
            pm_start_server
            test {Protected mode: a non-loopback client gets DENIED and is closed} {
                set out [pm_client 10.251.0.1 10.251.0.2]
                assert_equal "$::DENIED\r\n<EOF>" $out
            }

            test {Protected mode: loopback clients are served} {
                assert_equal "+PONG\r\n" [pm_client 127.0.0.1 - "PING\n"]
            }

            test {Protected mode: only 127.0.0.1 and ::1 are local, not the rest of 127/8} {
                assert_equal "$::DENIED\r\n<EOF>" [pm_client 127.0.0.1 127.0.0.2]
            }

            test {Protected mode does not apply once the default user has a password} {
                pm_client 127.0.0.1 - "CONFIG SET requirepass secret\n"
                assert_equal "-NOAUTH Authentication required.\r\n" [pm_client 10.251.0.1 10.251.0.2 "PING\n"]
                assert_equal "+OK\r\n" [pm_client 10.251.0.1 10.251.0.2 "AUTH secret\n"]
                pm_client 127.0.0.1 - "AUTH secret\nCONFIG SET requirepass \"\"\n"
                assert_match "-DENIED*<EOF>" [pm_client 10.251.0.1 10.251.0.2]
            }

            test {CONFIG SET protected-mode no lets remote clients in} {
                pm_client 127.0.0.1 - "CONFIG SET protected-mode no\n"
                assert_equal "+PONG\r\n" [pm_client 10.251.0.1 10.251.0.2 "PING\n"]
                pm_client 127.0.0.1 - "CONFIG SET protected-mode yes\n"
                assert_match "-DENIED*" [pm_client 10.251.0.1 10.251.0.2]
            }
            pm_stop_server

            pm_start_server --protected-mode no
            test {--protected-mode no at start-up} {
                assert_equal "+PONG\r\n" [pm_client 10.251.0.1 10.251.0.2 "PING\n"]
            }
            pm_stop_server

            pm_start_server -defaultbind
            test {The default bind (* -::*) listens on every interface, guarded by protected mode} {
                assert_equal "*2\r\n\$4\r\nbind\r\n\$6\r\n* -::*\r\n" [pm_client 127.0.0.1 - "CONFIG GET bind\n"]
                assert_equal "$::DENIED\r\n<EOF>" [pm_client 10.251.0.1 10.251.0.2]
                # With a password (the usual remote set-up) the other
                # interface serves, as Redis 7.0 does out of the box.
                pm_client 127.0.0.1 - "CONFIG SET requirepass secret\n"
                assert_equal "+OK\r\n+PONG\r\n" [pm_client 10.251.0.1 10.251.0.2 "AUTH secret\nPING\n"]
            }
            pm_stop_server
        } finally {
            pm_stop_server
            pm_teardown
        }
    }
}
