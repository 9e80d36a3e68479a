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
        # SAVE, then DEBUG RELOAD where the persistence family has it.
        assert_equal OK [r save]
        if {[catch {r debug reload} e]} {
            assert_match {*not supported yet*} $e
        }
        set after {}
        foreach n [objstore_sizes $h] { lappend after [r get k$n] }
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
