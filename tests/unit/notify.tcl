# Keyspace notifications: notify-keyspace-events class letters (K E g $ l s
# h z x n m A), the event names of SET, DEL, EXPIRE, expired, RENAME, LPUSH/RPOP,
# HSET, SADD, ZADD, INCR, and the subscriber on another connection (another
# worker with goblin --cores 2).

if {[is_goblin]} {
    set ::notify_server_args {--cores 2}
} else {
    set ::notify_server_args {}
}

# A subscriber to every keyspace and keyevent channel of db 0, and what it
# got (tests/helpers/server.tcl: event_subscriber, events_until_marker).
proc nt_subscriber {} { event_subscriber nt-marker __keyspace@0__:* __keyevent@0__:* }
proc nt_collect {c} { events_until_marker $c nt-marker }

start_server [list tags {notify} args $::notify_server_args] {

    test {Notifications are off by default} {
        assert_equal {notify-keyspace-events {}} [r config get notify-keyspace-events]
        set c [nt_subscriber]
        r set foo bar
        r del foo
        assert_equal {} [nt_collect $c]
        $c close
    }

    test {CONFIG SET notify-keyspace-events rejects an unknown letter} {
        r config set notify-keyspace-events ""
        assert_error {ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character*} \
            {r config set notify-keyspace-events KQ}
        # the value is unchanged
        assert_equal {notify-keyspace-events {}} [r config get notify-keyspace-events]
    }

    test {CONFIG GET notify-keyspace-events shows the normalised letters} {
        foreach {in out} {KEA AKE K$g g$K Eh hE gA A AKE AKE} {
            r config set notify-keyspace-events $in
            assert_equal [list notify-keyspace-events $out] [r config get notify-keyspace-events] "set $in"
        }
        r config set notify-keyspace-events ""
        assert_equal {notify-keyspace-events {}} [r config get notify-keyspace-events]
    }

    test {SET / DEL with KEA: keyspace and keyevent frames} {
        r del foo
        r config set notify-keyspace-events KEA
        set c [nt_subscriber]
        r set foo bar
        r del foo
        assert_equal [list \
            {__keyspace@0__:foo set} {__keyevent@0__:set foo} \
            {__keyspace@0__:foo del} {__keyevent@0__:del foo}] [nt_collect $c]
        $c close
    }

    test {n: a new key, first, and only when the key is new (SET, RPUSH, RENAME, COPY); not part of A} {
        r del foo bar l
        r config set notify-keyspace-events KEA
        assert_equal {AKE} [lindex [r config get notify-keyspace-events] 1]
        r config set notify-keyspace-events KE\$n
        set c [nt_subscriber]
        r set foo bar
        r set foo baz
        r rpush l a
        r rename foo bar
        r copy bar foo
        assert_equal [list \
            {__keyspace@0__:foo new} {__keyevent@0__:new foo} {__keyspace@0__:foo set} {__keyevent@0__:set foo} \
            {__keyspace@0__:foo set} {__keyevent@0__:set foo} \
            {__keyspace@0__:l new} {__keyevent@0__:new l} \
            {__keyspace@0__:bar new} {__keyevent@0__:new bar} \
            {__keyspace@0__:foo new} {__keyevent@0__:new foo}] [nt_collect $c]
        $c close
        r config set notify-keyspace-events ""
    }

    test {m: keymiss for the read lookups that miss (GET, MGET, EXISTS, TYPE, SINTER), not for writes or OBJECT; not part of A} {
        r del foo nokey
        r set foo bar
        r config set notify-keyspace-events KEA
        set c [nt_subscriber]
        r get nokey
        assert_equal {} [nt_collect $c]
        $c close
        r config set notify-keyspace-events KEm
        set c [nt_subscriber]
        r get foo
        r get nokey
        r mget foo nokey
        r exists nokey
        r type nokey
        r sinter nokey
        r object encoding nokey
        r set nokey v
        r del nokey
        assert_equal [lrepeat 5 {__keyspace@0__:nokey keymiss} {__keyevent@0__:keymiss nokey}] [nt_collect $c]
        $c close
        r config set notify-keyspace-events ""
    }

    test {pmessage frame of a keyevent notification} {
        r config set notify-keyspace-events E\$
        set c [redis_deferring_client]
        $c psubscribe __keyevent@*__:set
        $c read
        r set foo bar
        assert_equal {pmessage __keyevent@*__:set __keyevent@0__:set foo} [$c read]
        $c close
    }

    test {K only: keyspace channel only} {
        r config set notify-keyspace-events K\$
        set c [nt_subscriber]
        r set foo 1
        assert_equal {{__keyspace@0__:foo set}} [nt_collect $c]
        $c close
    }

    test {E only: keyevent channel only} {
        r config set notify-keyspace-events E\$
        set c [nt_subscriber]
        r set foo 1
        assert_equal {{__keyevent@0__:set foo}} [nt_collect $c]
        $c close
    }

    test {Class letter without K or E delivers nothing} {
        r config set notify-keyspace-events g\$
        set c [nt_subscriber]
        r set foo 1
        r del foo
        assert_equal {} [nt_collect $c]
        $c close
    }

    test {Class filtering: g only} {
        r config set notify-keyspace-events Eg
        set c [nt_subscriber]
        r set foo 1
        r expire foo 100
        r lpush l a
        r del foo l
        assert_equal {{__keyevent@0__:expire foo} {__keyevent@0__:del foo} {__keyevent@0__:del l}} [nt_collect $c]
        $c close
    }

    test {String events: SET, INCR and DECR (incrby), INCRBY, INCRBYFLOAT, APPEND, SETRANGE} {
        r del s
        r config set notify-keyspace-events E\$
        set c [nt_subscriber]
        r set s 1
        r incr s
        r incrby s 5
        r decr s
        r incrbyfloat s 1.5
        r append s x
        r setrange s 0 y
        assert_equal [list {__keyevent@0__:set s} {__keyevent@0__:incrby s} \
            {__keyevent@0__:incrby s} {__keyevent@0__:incrby s} \
            {__keyevent@0__:incrbyfloat s} {__keyevent@0__:append s} \
            {__keyevent@0__:setrange s}] [nt_collect $c]
        $c close
    }

    test {EXPIRE and expired events} {
        r del e
        r config set notify-keyspace-events Egx\$
        set c [nt_subscriber]
        r set e v
        r pexpire e 50
        assert_equal {{__keyevent@0__:set e} {__keyevent@0__:expire e}} [nt_collect $c]
        after 200
        # lookups make sure the key is reclaimed; the active cycle may also
        wait_for_condition 100 20 {[r exists e] == 0} else {fail "key did not expire"}
        assert_equal {{__keyevent@0__:expired e}} [nt_collect $c]
        $c close
    }

    test {EXPIRE with a past time is a del event} {
        r del e
        r config set notify-keyspace-events Eg\$
        set c [nt_subscriber]
        r set e v
        r expire e -1
        assert_equal {{__keyevent@0__:set e} {__keyevent@0__:del e}} [nt_collect $c]
        $c close
    }

    test {x without g: expired only} {
        r del e
        r config set notify-keyspace-events Ex
        set c [nt_subscriber]
        r set e v px 30
        after 100
        wait_for_condition 100 20 {[r exists e] == 0} else {fail "key did not expire"}
        assert_equal {{__keyevent@0__:expired e}} [nt_collect $c]
        $c close
    }

    test {RENAME: rename_from and rename_to} {
        r del a b
        r config set notify-keyspace-events KEg
        set c [nt_subscriber]
        r set a 1
        r rename a b
        assert_equal [list {__keyspace@0__:a rename_from} {__keyevent@0__:rename_from a} \
            {__keyspace@0__:b rename_to} {__keyevent@0__:rename_to b}] [nt_collect $c]
        $c close
        r del b
    }

    test {List events: LPUSH, RPUSH, RPOP, LPOP, and del when emptied} {
        r del l
        r config set notify-keyspace-events Elg
        set c [nt_subscriber]
        r lpush l a b
        r rpush l c
        r rpop l
        r lpop l
        r rpop l
        assert_equal [list {__keyevent@0__:lpush l} {__keyevent@0__:rpush l} \
            {__keyevent@0__:rpop l} {__keyevent@0__:lpop l} \
            {__keyevent@0__:rpop l} {__keyevent@0__:del l}] [nt_collect $c]
        $c close
    }

    test {l without g: no del event when the list is emptied} {
        r del l
        r config set notify-keyspace-events El
        set c [nt_subscriber]
        r lpush l a
        r rpop l
        assert_equal {{__keyevent@0__:lpush l} {__keyevent@0__:rpop l}} [nt_collect $c]
        $c close
    }

    test {Hash events: HSET, HINCRBY, HDEL} {
        r del h
        r config set notify-keyspace-events Eh
        set c [nt_subscriber]
        r hset h f v g w
        r hincrby h n 1
        r hdel h f
        assert_equal {{__keyevent@0__:hset h} {__keyevent@0__:hincrby h} {__keyevent@0__:hdel h}} [nt_collect $c]
        $c close
    }

    test {Set events: SADD, SREM (no event when nothing changes)} {
        r del st
        r config set notify-keyspace-events Es
        set c [nt_subscriber]
        r sadd st a b
        r sadd st a
        r srem st a
        r srem st zz
        assert_equal {{__keyevent@0__:sadd st} {__keyevent@0__:srem st}} [nt_collect $c]
        $c close
    }

    test {Sorted set events: ZADD, ZINCRBY, ZREM} {
        r del z
        r config set notify-keyspace-events Ez
        set c [nt_subscriber]
        r zadd z 1 a 2 b
        r zincrby z 1 a
        r zrem z a
        assert_equal {{__keyevent@0__:zadd z} {__keyevent@0__:zincr z} {__keyevent@0__:zrem z}} [nt_collect $c]
        $c close
    }

    test {Class filtering across types with KA and without a class} {
        r del s l h st z
        r config set notify-keyspace-events Eh
        set c [nt_subscriber]
        r set s 1
        r lpush l a
        r hset h f v
        r sadd st a
        r zadd z 1 a
        assert_equal {{__keyevent@0__:hset h}} [nt_collect $c]
        $c close
        r del s l h st z
    }

    test {A is all classes} {
        r del s l h st z
        r config set notify-keyspace-events EA
        set c [nt_subscriber]
        r set s 1
        r lpush l a
        r hset h f v
        r sadd st a
        r zadd z 1 a
        r del s
        assert_equal [list {__keyevent@0__:set s} {__keyevent@0__:lpush l} \
            {__keyevent@0__:hset h} {__keyevent@0__:sadd st} \
            {__keyevent@0__:zadd z} {__keyevent@0__:del s}] [nt_collect $c]
        $c close
    }

    test {Notifications from a transaction} {
        r del t1 t2
        r config set notify-keyspace-events E\$g
        set c [nt_subscriber]
        r multi
        r set t1 a
        r set t2 b
        r del t1
        r exec
        assert_equal {{__keyevent@0__:set t1} {__keyevent@0__:set t2} {__keyevent@0__:del t1}} [nt_collect $c]
        $c close
    }

    test {Keyspace channel of another db} {
        r config set notify-keyspace-events KEA
        set c [redis_deferring_client]
        $c psubscribe __keyspace@1__:*
        $c read
        r select 1
        r set dbkey 1
        r select 0
        assert_equal {pmessage __keyspace@1__:* __keyspace@1__:dbkey set} [$c read]
        $c close
        r select 1
        r flushdb
        r select 0
    }

    test {Writes from many connections are all notified} {
        r config set notify-keyspace-events E\$
        set c [nt_subscriber]
        set ws {}
        for {set i 0} {$i < 4} {incr i} {lappend ws [redis_client]}
        set exp {}
        for {set i 0} {$i < 40} {incr i} {
            [lindex $ws [expr {$i % 4}]] set "w$i" 1
            lappend exp [list __keyevent@0__:set "w$i"]
        }
        assert_equal $exp [nt_collect $c]
        foreach w $ws {$w close}
        $c close
        r config set notify-keyspace-events ""
    }
}

start_server [list tags {notify} overrides {notify-keyspace-events KEg$} args $::notify_server_args] {
    test {notify-keyspace-events given at start-up} {
        assert_equal [list notify-keyspace-events {g$KE}] [r config get notify-keyspace-events]
        set c [nt_subscriber]
        r set su 1
        r lpush sl a
        r del su
        assert_equal [list {__keyspace@0__:su set} {__keyevent@0__:set su} \
            {__keyspace@0__:su del} {__keyevent@0__:del su}] [nt_collect $c]
        $c close
    }
}
