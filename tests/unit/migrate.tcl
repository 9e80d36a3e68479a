# MIGRATE to a second server (the outer one, level -1) and RESTORE-ASKING
# outside cluster mode.

# Clients of the target other than the test's own (the MIGRATE links).
proc migrate_links {} {
    set n 0
    foreach l [split [string trim [r -1 client list]] "\n"] {
        if {![string match {*cmd=client|list*} $l]} {incr n}
    }
    return $n
}

# Close the target's MIGRATE links from its side (the source's cached link
# is then dead without knowing it).
proc migrate_kill_links {} {
    foreach l [split [string trim [r -1 client list]] "\n"] {
        if {[string match {*cmd=client|list*} $l]} continue
        regexp {id=([0-9]+)} $l -> id
        r -1 client kill id $id
    }
    # A killed client is freed by its worker a moment later.
    wait_for_condition 100 10 {[migrate_links] == 0} else {fail "killed links still listed"}
}

start_server {tags {migrate}} {
start_server {} {
    set tport [srv -1 port]

    test {MIGRATE moves a key and deletes it here} {
        r -1 flushall
        r set k hello
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000]
        assert_equal 0 [r exists k]
        assert_equal hello [r -1 get k]
    }

    test {MIGRATE of a missing key replies NOKEY} {
        assert_equal NOKEY [r migrate 127.0.0.1 $tport nosuch 0 5000]
        assert_equal NOKEY [r migrate 127.0.0.1 $tport "" 0 5000 KEYS a b c]
    }

    test {MIGRATE keeps the TTL as the time left} {
        r -1 flushall
        r set k v px 100000
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000]
        assert_range [r -1 pttl k] 90000 100000
        r set p v
        assert_equal OK [r migrate 127.0.0.1 $tport p 0 5000]
        assert_equal -1 [r -1 pttl p]
    }

    test {MIGRATE carries every type} {
        r -1 flushall
        r hset h a 1 b 2
        r rpush l x y z
        r sadd s m1 m2
        r zadd z 1 one 2 two
        r xadd x 1-1 f v
        foreach k {h l z x} {
            set d [r dump $k]
            assert_equal OK [r migrate 127.0.0.1 $tport $k 0 5000]
            assert_equal $d [r -1 dump $k]
        }
        assert_equal OK [r migrate 127.0.0.1 $tport s 0 5000]
        assert_equal {m1 m2} [lsort [r -1 smembers s]]
        assert_equal {x y z} [r -1 lrange l 0 -1]
        assert_equal {one 1 two 2} [r -1 zrange z 0 -1 withscores]
    }

    test {MIGRATE COPY leaves the key here} {
        r -1 flushall
        r set k v
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000 COPY]
        assert_equal v [r get k]
        assert_equal v [r -1 get k]
    }

    test {MIGRATE onto an existing key without REPLACE: BUSYKEY from the target} {
        r -1 set k old
        r set k new
        assert_error {ERR Target instance replied with error: BUSYKEY Target key name already exists.} \
            {r migrate 127.0.0.1 $tport k 0 5000}
        assert_equal new [r get k]
        assert_equal old [r -1 get k]
    }

    test {MIGRATE REPLACE overwrites the target's key} {
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000 REPLACE]
        assert_equal 0 [r exists k]
        assert_equal new [r -1 get k]
        r set k newer
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000 COPY REPLACE]
        assert_equal newer [r get k]
        assert_equal newer [r -1 get k]
    }

    test {MIGRATE KEYS moves the keys that exist} {
        r -1 flushall
        r mset a 1 b 2
        assert_equal OK [r migrate 127.0.0.1 $tport "" 0 5000 KEYS a nosuch b]
        assert_equal 0 [r exists a b]
        assert_equal {1 2} [r -1 mget a b]
    }

    test {MIGRATE KEYS: one key already there fails, the others move} {
        r -1 flushall
        r -1 set b old
        r mset a 1 b 2 c 3
        assert_error {ERR Target instance replied with error: BUSYKEY*} \
            {r migrate 127.0.0.1 $tport "" 0 5000 KEYS a b c}
        assert_equal {0 1 0} [list [r exists a] [r exists b] [r exists c]]
        assert_equal {1 old 3} [r -1 mget a b c]
    }

    test {MIGRATE argument errors} {
        r set k v
        assert_error {ERR When using MIGRATE KEYS option, the key argument must be set to the empty string} \
            {r migrate 127.0.0.1 $tport k 0 5000 KEYS k}
        assert_error {ERR syntax error} {r migrate 127.0.0.1 $tport k 0 5000 AUTH}
        assert_error {ERR syntax error} {r migrate 127.0.0.1 $tport k 0 5000 AUTH2 u}
        assert_error {ERR syntax error} {r migrate 127.0.0.1 $tport k 0 5000 BOGUS}
        assert_error {ERR value is not an integer or out of range} {r migrate 127.0.0.1 $tport k 0 abc}
        assert_error {ERR value is not an integer or out of range} {r migrate 127.0.0.1 $tport k x 5000}
        assert_error {ERR wrong number of arguments for 'migrate' command} {r migrate 127.0.0.1 $tport k 0}
        assert_equal v [r get k]
    }

    test {MIGRATE to another database, and back to 0} {
        r -1 flushall
        r set k5 v5
        assert_equal OK [r migrate 127.0.0.1 $tport k5 5 5000]
        r set k0 v0
        assert_equal OK [r migrate 127.0.0.1 $tport k0 0 5000]
        r -1 select 5
        set in5 [r -1 get k5]
        set none0 [r -1 exists k0]
        r -1 select 0
        assert_equal {v5 0} [list $in5 $none0]
        assert_equal v0 [r -1 get k0]
        assert_equal 0 [r -1 exists k5]
    }

    test {MIGRATE to a database the target does not have} {
        r -1 flushall
        r set k v
        assert_error {ERR Target instance replied with error: ERR DB index is out of range} \
            {r migrate 127.0.0.1 $tport k 99 5000}
        assert_equal v [r get k]
        # The failed SELECT left the link in database 0, where the RESTORE
        # of the same batch went; the key stays here all the same.
        assert_equal v [r -1 get k]
        # The link selects again next time.
        r set k v2
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000 REPLACE]
        assert_equal v2 [r -1 get k]
        assert_equal 0 [r exists k]
    }

    test {MIGRATE reuses one cached link to the target} {
        r -1 flushall
        for {set i 0} {$i < 5} {incr i} {
            r set k$i $i
            assert_equal OK [r migrate 127.0.0.1 $tport k$i [expr {$i % 2}] 5000]
        }
        assert_equal 1 [migrate_links]
        assert_match {*migrate_cached_sockets:1*} [r info stats]
    }

    test {MIGRATE opens a new link when the cached one was closed by the target} {
        migrate_kill_links
        assert_equal 0 [migrate_links]
        r set k again
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000 REPLACE]
        assert_equal again [r -1 get k]
        assert_equal 1 [migrate_links]
    }

    test {MIGRATE AUTH to a target with requirepass} {
        r -1 config set requirepass secret
        migrate_kill_links
        r set k v
        set err ""
        catch {r migrate 127.0.0.1 $tport k 0 5000 REPLACE} err
        assert_match {ERR Target instance replied with error: NOAUTH Authentication required.} $err
        catch {r migrate 127.0.0.1 $tport k 0 5000 REPLACE AUTH wrong} err
        assert_match {ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled.} $err
        assert_equal v [r get k]
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000 REPLACE AUTH secret]
        assert_equal 0 [r exists k]
        r -1 config set requirepass ""
        assert_equal v [r -1 get k]
    }

    test {MIGRATE AUTH2 with an ACL user} {
        r -1 flushall
        r -1 acl setuser mig on >pw ~* +@all
        r -1 config set requirepass secret
        migrate_kill_links
        r set k2 v2
        set err ""
        catch {r migrate 127.0.0.1 $tport k2 0 5000 AUTH2 mig nope} err
        assert_match {ERR Target instance replied with error: WRONGPASS*} $err
        assert_equal OK [r migrate 127.0.0.1 $tport k2 0 5000 AUTH2 mig pw]
        r -1 config set requirepass ""
        assert_equal v2 [r -1 get k2]
        assert_equal 0 [r exists k2]
        r -1 acl deluser mig
        migrate_kill_links
    }

    test {MIGRATE to a port nobody listens on: IOERR} {
        # The refusal comes after the connect started: Redis finds it when
        # it writes (and tries once more).
        set port [::srv::free_port]
        r set k v
        assert_error {IOERR error or timeout writing to target instance} \
            {r migrate 127.0.0.1 $port k 0 1000}
        assert_equal v [r get k]
    }

    test {MIGRATE to a host that does not resolve: IOERR connecting} {
        r set k v
        assert_error {IOERR error or timeout connecting to the client} \
            {r migrate no-such-host.invalid 6379 k 0 1000}
        assert_equal v [r get k]
    }

    test {MIGRATE to a target that never answers: IOERR after the timeout} {
        set ls [socket -server {apply {{ch addr port} {}}} -myaddr 127.0.0.1 0]
        set port [lindex [fconfigure $ls -sockname] 2]
        r set k v
        set t0 [clock milliseconds]
        assert_error {IOERR error or timeout reading to target instance} \
            {r migrate 127.0.0.1 $port k 0 300}
        set dt [expr {[clock milliseconds] - $t0}]
        close $ls
        assert_range $dt 250 2000
        assert_equal v [r get k]
    }

    test {RESTORE-ASKING outside cluster mode is RESTORE} {
        r set src v
        set d [r dump src]
        r del k
        assert_equal OK [r restore-asking k 0 $d]
        assert_equal v [r get k]
        assert_error {BUSYKEY*} {r restore-asking k 0 $d}
        assert_equal OK [r restore-asking k 5000 $d REPLACE]
        assert_range [r pttl k] 4000 5000
    }

    test {MIGRATE closes cached links idle for more than 10 seconds} {
        r -1 flushall
        r set k v
        assert_equal OK [r migrate 127.0.0.1 $tport k 0 5000]
        assert_match {*migrate_cached_sockets:1*} [r info stats]
        wait_for_condition 160 100 {
            [string match {*migrate_cached_sockets:0*} [r info stats]]
        } else {
            fail "the idle link stayed cached"
        }
        wait_for_condition 20 100 {[migrate_links] == 0} else {
            fail "the target still sees the link"
        }
    }
}
}
