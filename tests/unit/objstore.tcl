# Head/tail object store: every string command over values around the
# small/large boundary (0, 1, 15/16/17 B, head-1, head, head+1, 3*head+7),
# with tails in RAM and on an SSD directory; capacity (--memory) refusals
# change nothing; SAVE/DEBUG RELOAD keep large values. A 16K head keeps the
# values small enough to be quick.

proc objstore_sizes {h} { list 0 1 15 16 17 [expr {$h-1}] $h [expr {$h+1}] [expr {3*$h+7}] }

proc objstore_val {n seed} {
    set s ""
    set chunk [string repeat [format "%c%c%c" [expr {65 + $seed % 26}] 0 255] 1]
    while {[string length $s] < $n} { append s "$seed:[string length $s]|$chunk" }
    string range $s 0 [expr {$n-1}]
}

proc objstore_suite {label} {
    set h 16384
    foreach n [objstore_sizes $h] {
        test "objstore $label: SET/GET/STRLEN/APPEND/SETRANGE/GETRANGE at $n bytes" {
            r del k
            set v [objstore_val $n $n]
            r set k $v
            assert_equal $v [r get k]
            assert_equal $n [r strlen k]
            assert_equal [expr {$n+3}] [r append k xyz]
            append v xyz
            assert_equal $v [r get k]
            set off [expr {$h-2}]
            set len [r setrange k $off ABCD]
            if {[string length $v] < $off+4} {
                append v [string repeat "\x00" [expr {$off+4-[string length $v]}]]
            }
            set v [string replace $v $off [expr {$off+3}] ABCD]
            assert_equal [string length $v] $len
            assert_equal $v [r get k]
            assert_equal [string range $v [expr {$h-5}] [expr {$h+5}]] [r getrange k [expr {$h-5}] [expr {$h+5}]]
            assert_equal [string range $v end-9 end] [r getrange k -10 -1]
            r set k$n $v
            assert_equal $v [r getset k$n $v]
            assert_equal $v [r getdel k$n]
            r set k$n $v
        }
    }
    test "objstore $label: MSET/MGET, SETBIT/GETBIT and BITCOUNT across the head" {
        set a [objstore_val [expr {$h+100}] 1]
        set b [objstore_val [expr {3*$h+7}] 2]
        r mset ma $a mb $b
        assert_equal [list $a $b] [r mget ma mb]
        r setbit ma [expr {8*$h+3}] 1
        assert_equal 1 [r getbit ma [expr {8*$h+3}]]
        assert_equal [r bitcount ma] [r bitcount ma 0 -1]
        r copy mb mc
        assert_equal $b [r get mc]
    }
    test "objstore $label: DEBUG RELOAD keeps every size" {
        set before {}
        foreach n [objstore_sizes $h] { lappend before [r get k$n] }
        # SAVE, then DEBUG RELOAD (save and load back in place).
        assert_equal OK [r save]
        assert_equal OK [r debug reload]
        set after {}
        foreach n [objstore_sizes $h] { lappend after [r get k$n] }
        assert_equal $before $after
    }
    test "objstore $label: a restart loads every size back from the dump" {
        set before {}
        foreach k [concat [lmap n [objstore_sizes $h] {set _ k$n}] ma mb mc] { lappend before [r get $k] }
        assert_equal OK [r save]
        restart_server
        set after {}
        foreach k [concat [lmap n [objstore_sizes $h] {set _ k$n}] ma mb mc] { lappend after [r get $k] }
        assert_equal $before $after
    }
    test "objstore $label: INFO shows the pool" {
        set info [r info goblin]
        assert_match {*objstore_ram_head:16384*} $info
        assert_match {*objstore_pool0:node_requested=*hugetlb=*blocks_used=*} $info
        assert_match {*numa_get_head_bytes_local:*} $info
    }
}

start_server {tags {objstore} args {--ram-head 16K}} {
    objstore_suite ram

    test "objstore ram: large replies go out from the store, in order, the rest copied when the socket is full" {
        set big [objstore_val [expr {3 << 20}] 11]
        set big2 [objstore_val 200001 12]
        r set big $big
        r set big2 $big2
        r set n 1
        set before [getInfoProperty [r info goblin] net_output_direct_bytes]
        set rd [redis_deferring_client]
        # Not read for a while: the first replies fill the socket and the
        # rest of them waits in the output buffer.
        for {set i 0} {$i < 8} {incr i} { $rd get big; $rd incr n; $rd get big2 }
        after 300
        # The key changes and goes meanwhile: what is still to be sent was
        # copied when its GET ran.
        r set big [objstore_val [expr {3 << 20}] 13]
        r del big
        for {set i 0} {$i < 8} {incr i} {
            assert_equal $big [$rd read]
            assert_equal [expr {$i + 2}] [$rd read]
            assert_equal $big2 [$rd read]
        }
        $rd close
        set after [getInfoProperty [r info goblin] net_output_direct_bytes]
        assert {$after - $before >= (3 << 20)}
    }
}

start_server {tags {objstore}} {
    test "objstore: a large small-object value goes out from the store; MULTI and CLIENT REPLY keep theirs" {
        set v [objstore_val 100000 14]
        r set v $v
        set before [getInfoProperty [r info goblin] net_output_direct_bytes]
        assert_equal $v [r get v]
        set mid [getInfoProperty [r info goblin] net_output_direct_bytes]
        assert {$mid - $before >= 100000}
        r multi
        r get v
        r get v
        assert_equal [list $v $v] [r exec]
        set rd [redis_deferring_client]
        $rd client reply skip
        $rd get v
        $rd ping
        assert_equal PONG [$rd read]
        $rd close
        # The transaction's replies and the skipped one went nowhere direct
        # (only the INFO replies were counted, and they are small).
        set after [getInfoProperty [r info goblin] net_output_direct_bytes]
        assert_equal $mid $after
    }
}

file mkdir [file join [pwd] tests tmp]
set ::objstore_ssd [file join [pwd] tests tmp objstore-ssd-[pid]]
file delete -force $::objstore_ssd
start_server [list tags {objstore} args [list --ram-head 16K --write-io-chunk 64K --io-chunk 16K --ssd-dir $::objstore_ssd]] {
    objstore_suite ssd
    test "objstore ssd: the pool directory holds the marker and the tails" {
        assert {[file exists [file join $::objstore_ssd .goblin-pool]]}
        assert_equal 23 [file size [file join $::objstore_ssd .goblin-pool]]
        assert_match {*objstore_ssd:active=1*} [r info goblin]
    }
}
file delete -force $::objstore_ssd

proc ssd_field {r name} {
    regexp "objstore_ssd:\[^\r\n\]*$name=(\[0-9\]+)" [$r info goblin] -> v
    return $v
}
proc info_field {r name} {
    regexp "$name:(\[0-9\]+)" [$r info goblin] -> v
    return $v
}

# Streamed GETs, pinning and I/O faults. A 16K head and 16K reads make a
# 16 MiB value 1023 reads, far more than the socket buffers hold.
set ::objstore_ssd [file join [pwd] tests tmp objstore-ssd2-[pid]]
file delete -force $::objstore_ssd
start_server [list tags {objstore} args [list --ram-head 16K --write-io-chunk 64K --io-chunk 16K --ssd-dir $::objstore_ssd]] {
    test "objstore ssd: DUMP and RESTORE of values with tails on SSD" {
        foreach {n seed} {20000 21 1000003 22 3000000 23} {
            set v [objstore_val $n $seed]
            r set d:$n $v
            set p [r dump d:$n]
            assert_equal OK [r restore copy:$n 0 $p replace]
            assert_equal $v [r get copy:$n]
            assert_equal [r dump d:$n] [r dump copy:$n]
            r del d:$n copy:$n
        }
    }

    test "objstore ssd: GET streams the tail and pipelined replies keep their order" {
        set a [objstore_val 1000003 3]
        set b [objstore_val 300001 4]
        r set a $a
        r set b $b
        r set n 1
        set before [ssd_field r streams]
        set rd [redis_deferring_client]
        foreach cmd {{get a} {ping} {get b} {incr n} {get a} {strlen b}} { $rd {*}$cmd }
        assert_equal $a [$rd read]
        assert_equal PONG [$rd read]
        assert_equal $b [$rd read]
        assert_equal 2 [$rd read]
        assert_equal $a [$rd read]
        assert_equal 300001 [$rd read]
        assert_equal [expr {$before + 3}] [ssd_field r streams]
        assert_equal 0 [ssd_field r streams_open]
    }

    test "objstore ssd: other clients are served while a streamed GET waits for its reader" {
        set big [objstore_val [expr {16 << 20}] 5]
        r set big $big
        set rd [redis_deferring_client]
        # Not read yet: the stream stalls on the full socket, the worker does not.
        $rd get big
        # A second reader on the same worker streams too: they do not queue.
        set rd2 [redis_deferring_client]
        $rd2 get big
        # Both streams open at once (waited for: a slow host may take a
        # while to start the second).
        wait_for_condition 250 20 {[ssd_field r streams_open] == 2} else {
            fail "two streams not open at once: [ssd_field r streams_open]"
        }
        assert_equal PONG [r ping]
        assert_equal 300001 [r strlen b]
        assert_equal [objstore_val 300001 4] [r get b]
        # The value changes and goes while it is being sent; its extent is
        # pinned, so the reader still gets the bytes GET saw.
        r set big [objstore_val [expr {16 << 20}] 6]
        r del big
        r set other [objstore_val [expr {8 << 20}] 7]
        assert {[ssd_field r pinned_frees] >= 1}
        assert_equal $big [$rd read]
        assert_equal $big [$rd2 read]
        wait_for_condition 250 20 {[ssd_field r streams_open] == 0} else { fail "stream not closed" }
        assert_equal [objstore_val [expr {8 << 20}] 7] [r get other]
    }

    test "objstore ssd: a tail read error closes the streaming client only" {
        set v [objstore_val 500000 8]
        r set victim $v
        r set small hello
        set errs [info_field r objstore_tail_read_errors]
        # Failing at the first read: nothing was sent yet, an error reply.
        r debug ssd-fault 0 1
        assert_error {*I/O error reading the value's tail*} {r get victim}
        assert_equal [expr {$errs + 1}] [info_field r objstore_tail_read_errors]
        assert_equal $v [r get victim]
        assert_equal PONG [r ping]
        assert_equal hello [r get small]
    }

    test "objstore ssd: a refused submission of a stream's reads is retried" {
        set v [objstore_val 300000 9]
        r set refused $v
        set errs [info_field r objstore_tail_read_errors]
        set streams [ssd_field r streams]
        # The stream's first reads and the ones after them wait in the ring.
        r debug ssd-fault 0 0 2
        assert_equal $v [r get refused]
        r debug ssd-fault 0 0 1
        set rd [redis_deferring_client]
        $rd get refused
        assert_equal $v [$rd read]
        $rd close
        assert_equal $errs [info_field r objstore_tail_read_errors]
        # Both GETs streamed (through the ring) rather than read in one go.
        assert_equal [expr {$streams + 2}] [ssd_field r streams]
    }

    test "objstore ssd: refusals past the first few are retried at the worker's tick, not at once" {
        set v [objstore_val 300000 11]
        r set refusedmore $v
        set refused [ssd_field r submit_refusals]
        # Three refusals are retried at once; the next ones wait for a tick
        # (100 ms) each, and the value still arrives whole.
        r debug ssd-fault 0 0 6
        set t0 [clock milliseconds]
        assert_equal $v [r get refusedmore]
        set ms [expr {[clock milliseconds] - $t0}]
        assert_equal [expr {$refused + 6}] [ssd_field r submit_refusals]
        assert {$ms >= 150}
        assert_equal 0 [ssd_field r streams_open]
    }

    test "objstore ssd: commands that read a whole tail answer an I/O error and change nothing" {
        set v [r get victim]
        r debug ssd-fault 0 1
        assert_error {*I/O error reading the value's tail*} {r getrange victim 0 20000}
        r debug ssd-fault 0 1
        assert_error {*I/O error reading the value's tail*} {r append victim xyz}
        r debug ssd-fault 0 1
        assert_error {*I/O error reading the value's tail*} {r setrange victim 100000 abc}
        r debug ssd-fault 0 1
        assert_error {*I/O error reading the value's tail*} {r getdel victim}
        r debug ssd-fault 0 1
        assert_error {*} {r save}
        r debug ssd-fault 0 1
        r multi
        r get victim
        r ping
        set res [r exec]
        assert_match {*I/O error reading*} [lindex $res 0]
        assert_equal PONG [lindex $res 1]
        assert_equal [string length $v] [r strlen victim]
        assert_equal $v [r get victim]
    }

    test "objstore ssd: a tail write error refuses the write and keeps the old value" {
        set v [r get victim]
        set errs [info_field r objstore_tail_write_errors]
        r debug ssd-fault 1 0
        assert_error {*I/O error writing the value's tail*} {r set fresh [objstore_val 100000 9]}
        assert_equal 0 [r exists fresh]
        r debug ssd-fault 1 0
        assert_error {*I/O error writing the value's tail*} {r set victim [objstore_val 100000 9]}
        assert_equal $v [r get victim]
        assert_equal [expr {$errs + 2}] [info_field r objstore_tail_write_errors]
        assert_equal OK [r set fresh [objstore_val 100000 9]]
        assert_equal [objstore_val 100000 9] [r get fresh]
    }

    test "objstore ssd: a truncated pool file gives errors, small values live on" {
        r set small hello
        r set big2 [objstore_val 200000 10]
        set errs [info_field r objstore_tail_read_errors]
        # Failing later (the pool file cut short under a 16 MiB value): the
        # header and head went out, the rest cannot, the connection closes.
        r set huge [objstore_val [expr {16 << 20}] 12]
        set rd [redis_deferring_client]
        $rd get huge
        after 50
        set f [open [file join $::objstore_ssd tails.dat] r+]
        chan truncate $f 0
        close $f
        assert_error {*} {$rd read}
        assert {[info_field r objstore_tail_read_errors] >= $errs + 1}
        assert_error {*I/O error reading the value's tail*} {r getrange big2 0 -1}
        set rd [redis_deferring_client]
        $rd get big2
        assert_error {*} {$rd read}
        assert_equal hello [r get small]
        assert_equal PONG [r ping]
        # New large values are written again.
        r set big3 [objstore_val 200000 11]
        assert_equal [objstore_val 200000 11] [r get big3]
    }
}
file delete -force $::objstore_ssd

test "objstore: a full tmpfs pool refuses writes with an error and loses nothing" {
    set d [file join [pwd] tests tmp objstore-tmpfs-[pid]]
    file mkdir $d
    if {[catch {exec mount -t tmpfs -o size=512k tmpfs $d} e]} {
        file delete -force $d
        puts "    (skipped: cannot mount a tmpfs here: $e)"
        return
    }
    set ::objstore_tmpfs $d
    start_server [list tags {objstore} args [list --ram-head 16K --write-io-chunk 64K --io-chunk 16K --ssd-dir $d]] {
        set stored {}
        set refused 0
        for {set i 0} {$i < 10} {incr i} {
            if {[catch {r set v$i [objstore_val 100000 $i]} e]} {
                assert_match {*I/O error writing the value's tail*} $e
                incr refused
            } else {
                lappend stored $i
            }
        }
        assert {$refused > 0 && [llength $stored] > 0}
        foreach i $stored { assert_equal [objstore_val 100000 $i] [r get v$i] }
        # Space comes back when a value goes.
        r del v[lindex $stored 0]
        assert_equal OK [r set again [objstore_val 100000 42]]
        assert_equal [objstore_val 100000 42] [r get again]
    }
    catch {exec umount $d}
    file delete -force $d
}

start_server {tags {objstore} args {--small-memory 2M --small-sub-memory 2M --numa 0}} {
    test "objstore: a full small-object pool refuses with OOM and changes nothing" {
        assert_match {*objstore_small_pool0:node=0,segments=0,capacity=2097152*} [r info goblin]
        # Random bytes: compressible values would take far less room.
        set v [binary format c* [lmap x [lrepeat 1000 0] {expr {int(rand() * 256) - 128}}]]
        set ok 0
        for {set i 0} {$i < 5000} {incr i} {
            if {[catch {r set s$i $v$i} e]} break
            incr ok
        }
        assert_match {OOM command not allowed*} $e
        assert_equal 0 [r exists s$i]
        # One 2 MiB pool per node (this machine may have one node); records
        # of 1,012 bytes (8-byte header and value, to 4 bytes).
        set pools [regexp -all {objstore_small_pool[0-9]+:} [r info goblin]]
        assert {$ok >= 2064 * $pools && $ok <= 2080 * $pools}
        assert_equal $v[expr {$ok - 1}] [r get s[expr {$ok - 1}]]
        r del s0
        assert_equal OK [r set again $v]
    }
}

start_server {tags {objstore} args {--memory 2M --maxmemory-policy allkeys-lru}} {
    test "objstore: a full head pool evicts large strings by maxmemory-policy" {
        set v [string repeat x 262144]
        r set small hello
        r sadd aset a b c
        for {set i 0} {$i < 12} {incr i} {
            assert_equal OK [r set b$i $v$i]
            after 5
        }
        set present 0
        for {set i 0} {$i < 12} {incr i} { incr present [r exists b$i] }
        assert_equal 8 $present
        regexp {evicted_keys:([0-9]+)} [r info stats] -> ev
        assert_equal 4 $ev
        # Only large strings were evicted; the newest value is there.
        assert_equal hello [r get small]
        assert_equal 3 [r scard aset]
        assert_equal "${v}11" [r get b11]
    }
}

start_server {tags {objstore} args {--small-memory 2M --maxmemory-policy allkeys-random}} {
    test "objstore: a full small-object pool evicts small strings by maxmemory-policy" {
        set v [binary format c* [lmap x [lrepeat 1000 0] {expr {int(rand() * 256) - 128}}]]
        for {set i 0} {$i < 3000} {incr i} { assert_equal OK [r set s$i $v$i] }
        assert {[r dbsize] < 3000 && [r dbsize] > 1500}
        regexp {evicted_keys:([0-9]+)} [r info stats] -> ev
        assert_equal 3000 [expr {[r dbsize] + $ev}]
        assert_equal "${v}2999" [r get s2999]
    }

    test "objstore: a full small-object pool keeps taking values of mixed sizes" {
        # Evicted records are of other sizes than the new ones: the writes
        # need their neighbours' space merged or split, or more evicted.
        r flushall
        r config resetstat
        set blob [binary format c* [lmap x [lrepeat 3000 0] {expr {int(rand() * 256) - 128}}]]
        for {set i 0} {$i < 4000} {incr i} {
            set n [expr {300 + ($i * 7919) % 2700}]
            assert_equal OK [r set m$i [string range $blob 0 $n]]
        }
        regexp {evicted_keys:([0-9]+)} [r info stats] -> ev
        assert {$ev > 0}
        assert_equal 4000 [expr {[r dbsize] + $ev}]
        assert_equal [string range $blob 0 [expr {300 + (3999 * 7919) % 2700}]] [r get m3999]
    }
}

proc small_field {r name} {
    regexp "objstore_small:\[^\r\n\]*$name=(\[0-9\]+)" [$r info goblin] -> v
    return $v
}

start_server {tags {objstore}} {
    test "objstore: sparse small-object segments are compacted and given back" {
        set blob [binary format c* [lmap x [lrepeat 500 0] {expr {int(rand() * 256) - 128}}]]
        set rd [redis_deferring_client]
        for {set i 0} {$i < 40000} {incr i} { $rd set v$i $i$blob }
        for {set i 0} {$i < 40000} {incr i} { $rd read }
        set before [small_field r segments]
        assert {$before >= 9}
        for {set i 0} {$i < 40000} {incr i} { if {$i % 10} { $rd del v$i } }
        for {set i 0} {$i < 40000} {incr i} { if {$i % 10} { $rd read } }
        wait_for_condition 100 50 {[small_field r segments] <= 3} else {
            fail "segments: [small_field r segments] (was $before)"
        }
        assert {[small_field r released] > 0 && [small_field r moved] > 0}
        for {set i 0} {$i < 40000} {incr i 10} { assert_equal $i$blob [r get v$i] }
    }
}

test "objstore: --small-sub-memory needs --small-memory" {
    set r [run_server_binary {--small-sub-memory 2M --numa 0 --port 0}]
    assert_match {*--small-sub-memory needs --small-memory*} [lindex $r 1]
}

start_server {tags {objstore} args {--numa-decay-interval 1500}} {
    test "objstore: numa-decay-interval sets the promotion decay period" {
        assert_equal {numa-decay-interval 1500} [r config get numa-decay-interval]
        assert_match {*numa_promotion_decay_interval_ms:1500*} [r info goblin]
        r config set numa-decay-interval 60000
        assert_match {*numa_promotion_decay_interval_ms:60000*} [r info goblin]
        assert_error {*} {r config set numa-decay-interval 0}
    }
}

test "objstore: a non-empty unmarked --ssd-dir is refused" {
    set d [file join [pwd] tests tmp objstore-unmarked-[pid]]
    file mkdir $d
    close [open [file join $d stranger] w]
    catch {exec [file join [pwd] build-release goblin-core] --port 0 --ssd-dir $d} out
    file delete -force $d
    assert_match {*not empty and has no .goblin-pool marker*} $out
}

test "objstore: start-up constraints exit with a clear error" {
    set bin [file join [pwd] build-release goblin-core]
    catch {exec $bin --ram-head 3K} out
    assert_match {*--ram-head*power of two*} $out
    catch {exec $bin --block 1M} out
    assert_match {*--block*HugeTLB page size*} $out
    catch {exec $bin --numa 999} out
    assert_match {*not an online NUMA node*} $out
    catch {exec $bin --memory 100000G} out
    assert_match {*refused before allocating anything*} $out
}

start_server {tags {objstore} args {--memory 2M}} {
    test "objstore: a full head pool refuses and changes nothing" {
        set v [string repeat x 262144]
        for {set i 0} {$i < 8} {incr i} { r set b$i $v }
        catch {r set b8 $v} e
        assert_match {OOM command not allowed*} $e
        assert_equal 0 [r exists b8]
        r set b0 small
        assert_equal OK [r set b8 $v]
        assert_equal 262144 [r strlen b8]
        assert_equal $v [r get b1]
    }
}
