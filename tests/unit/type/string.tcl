# Strings: the whole Redis 7.0 string family with its error cases.

# A key of another type for WRONGTYPE checks (collection types arrive after
# the foundation; see make_nonstring_key in helpers/util.tcl).
proc make_list_key {key} {
    make_nonstring_key $key
}

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}

start_server {tags {string}} {

    # --- GET / SET -----------------------------------------------------------

    test {SET and GET} {
        assert_equal OK [r set foo bar]
        assert_equal bar [r get foo]
        assert_equal "+OK\r\n" [r rawcall set foo bar]
        assert_equal "\$3\r\nbar\r\n" [r rawcall get foo]
    }

    test {GET of a missing key is a null bulk} {
        assert_equal "\$-1\r\n" [r rawcall get nosuchkey]
    }

    test {SET overwrites, empty value} {
        r set foo ""
        assert_equal "\$0\r\n\r\n" [r rawcall get foo]
        assert_equal 0 [r strlen foo]
    }

    test {SET and GET of binary values with NUL bytes} {
        set v "\x00\x01\x02\xff\xfe\r\n\x00end"
        r set bin $v
        assert_equal $v [r get bin]
        assert_equal [string length $v] [r strlen bin]
    }

    test {SET and GET of every byte value} {
        set v ""
        for {set i 0} {$i < 256} {incr i} {append v [format %c $i]}
        r set allbytes $v
        assert_equal $v [r get allbytes]
    }

    test {SET and GET of a 1 MB value} {
        set v [string repeat "0123456789abcdef" 65536]
        r set big $v
        assert_equal $v [r get big]
        r del big
    }

    test {SET and GET of many random keys} {
        set c [redis_client]
        set expected {}
        for {set i 0} {$i < 1000} {incr i} {
            set k "rand:[randstring 1 20 alnum]"
            set v [randstring 0 100 binary]
            dict set expected $k $v
            $c set $k $v
        }
        set bad 0
        dict for {k v} $expected {
            if {[$c get $k] ne $v} {incr bad}
        }
        assert_equal 0 $bad
        $c close
    }

    test {SET EX} {
        r set k v ex 100
        assert_range [r ttl k] 99 100
    }

    test {SET PX} {
        r set k v px 100000
        assert_range [r pttl k] 99000 100000
    }

    test {SET EXAT and PXAT} {
        set at [expr {[clock seconds] + 200}]
        r set k v exat $at
        assert_equal $at [r expiretime k]
        set pat [expr {[clock milliseconds] + 300000}]
        r set k v pxat $pat
        assert_equal $pat [r pexpiretime k]
    }

    test {SET EXAT in the past} {
        assert_equal OK [r set k v exat 1]
        assert_equal 0 [r exists k]
    }

    test {SET NX} {
        r del k
        assert_equal OK [r set k a nx]
        assert_equal {} [r set k b nx]
        assert_equal "\$-1\r\n" [r rawcall set k b nx]
        assert_equal a [r get k]
    }

    test {SET XX} {
        r del k
        assert_equal {} [r set k a xx]
        assert_equal 0 [r exists k]
        r set k a
        assert_equal OK [r set k b xx]
        assert_equal b [r get k]
    }

    test {SET KEEPTTL} {
        r set k v ex 100
        r set k w keepttl
        assert_range [r ttl k] 99 100
        assert_equal w [r get k]
        r set k x
        assert_equal -1 [r ttl k]
    }

    test {SET GET returns the old value} {
        r del k
        assert_equal "\$-1\r\n" [r rawcall set k a get]
        assert_equal a [r set k b get]
        assert_equal b [r get k]
    }

    test {SET NX GET and XX GET} {
        r del k
        assert_equal {} [r set k a nx get]
        assert_equal a [r get k]
        assert_equal a [r set k b nx get]
        assert_equal a [r get k]
        assert_equal a [r set k c xx get]
        assert_equal c [r get k]
        r del k
        assert_equal {} [r set k d xx get]
        assert_equal 0 [r exists k]
    }

    test {SET GET with EX and KEEPTTL} {
        r set k a
        assert_equal a [r set k b get ex 100]
        assert_range [r ttl k] 99 100
        assert_equal b [r set k c keepttl get]
        assert_range [r ttl k] 99 100
    }

    test {SET options are case insensitive} {
        r del k
        assert_equal OK [r set k v Ex 10 nX]
        assert_range [r ttl k] 9 10
    }

    test {SET option errors} {
        assert_error {ERR syntax error} {r set k v nx xx}
        assert_error {ERR syntax error} {r set k v ex 10 px 100}
        assert_error {ERR syntax error} {r set k v ex 10 exat 100}
        assert_error {ERR syntax error} {r set k v px 10 pxat 100}
        assert_error {ERR syntax error} {r set k v keepttl ex 10}
        assert_error {ERR syntax error} {r set k v ex 10 keepttl}
        assert_error {ERR syntax error} {r set k v ex}
        assert_error {ERR syntax error} {r set k v foo}
        assert_error {ERR syntax error} {r set k v get get foo}
    }

    test {SET invalid expire times} {
        assert_error {ERR invalid expire time in 'set' command} {r set k v ex 0}
        assert_error {ERR invalid expire time in 'set' command} {r set k v ex -1}
        assert_error {ERR invalid expire time in 'set' command} {r set k v px 0}
        assert_error {ERR invalid expire time in 'set' command} {r set k v exat 0}
        assert_error {ERR invalid expire time in 'set' command} {r set k v pxat -5}
        assert_error {ERR invalid expire time in 'set' command} {r set k v ex 9223372036854775807}
        assert_error {ERR invalid expire time in 'set' command} {r set k v px 9223372036854775807}
        assert_error {ERR invalid expire time in 'set' command} {r set k v exat 9223372036854775807}
        assert_error {ERR value is not an integer or out of range} {r set k v ex abc}
        assert_error {ERR value is not an integer or out of range} {r set k v px 1.5}
    }

    test {SET with a failing option does not change the key} {
        r set k orig
        catch {r set k new ex 0}
        catch {r set k new nx xx}
        assert_equal orig [r get k]
        assert_equal -1 [r ttl k]
    }

    test {SET and GET arity} {
        assert_error {ERR wrong number of arguments for 'set' command} {r set k}
        assert_error {ERR wrong number of arguments for 'get' command} {r get}
    }

    # --- SETNX / SETEX / PSETEX / GETSET / GETDEL / GETEX --------------------

    test {SETNX} {
        r del k
        assert_equal 1 [r setnx k a]
        assert_equal 0 [r setnx k b]
        assert_equal a [r get k]
    }

    test {SETNX against an expired key} {
        r set k v px 10
        after 50
        assert_equal 1 [r setnx k fresh]
        assert_equal fresh [r get k]
    }

    test {SETNX does not touch the TTL of an existing key} {
        r set k v ex 100
        assert_equal 0 [r setnx k w]
        assert_range [r ttl k] 99 100
    }

    test {SETEX} {
        assert_equal OK [r setex k 100 v]
        assert_equal v [r get k]
        assert_range [r ttl k] 99 100
    }

    test {SETEX errors} {
        assert_error {ERR invalid expire time in 'setex' command} {r setex k 0 v}
        assert_error {ERR invalid expire time in 'setex' command} {r setex k -1 v}
        assert_error {ERR value is not an integer or out of range} {r setex k abc v}
        assert_error {ERR wrong number of arguments for 'setex' command} {r setex k 10}
    }

    test {PSETEX} {
        assert_equal OK [r psetex k 100000 v]
        assert_range [r pttl k] 99000 100000
        assert_error {ERR invalid expire time in 'psetex' command} {r psetex k 0 v}
        assert_error {ERR invalid expire time in 'psetex' command} {r psetex k -10 v}
    }

    test {GETSET} {
        r del k
        assert_equal {} [r getset k a]
        assert_equal a [r getset k b]
        assert_equal b [r get k]
    }

    test {GETDEL} {
        r set k v
        assert_equal v [r getdel k]
        assert_equal 0 [r exists k]
        assert_equal "\$-1\r\n" [r rawcall getdel k]
    }

    test {GETDEL of a key with TTL} {
        r set k v ex 100
        assert_equal v [r getdel k]
        assert_equal -2 [r ttl k]
    }

    test {GETEX without options is GET} {
        r set k v ex 100
        assert_equal v [r getex k]
        assert_range [r ttl k] 99 100
    }

    test {GETEX EX, PX, EXAT, PXAT} {
        r set k v
        assert_equal v [r getex k ex 100]
        assert_range [r ttl k] 99 100
        assert_equal v [r getex k px 200000]
        assert_range [r pttl k] 199000 200000
        set at [expr {[clock seconds] + 300}]
        assert_equal v [r getex k exat $at]
        assert_equal $at [r expiretime k]
        set pat [expr {[clock milliseconds] + 400000}]
        assert_equal v [r getex k pxat $pat]
        assert_equal $pat [r pexpiretime k]
    }

    test {GETEX PERSIST} {
        r set k v ex 100
        assert_equal v [r getex k persist]
        assert_equal -1 [r ttl k]
    }

    test {GETEX of a missing key} {
        assert_equal "\$-1\r\n" [r rawcall getex nosuchkey ex 10]
        assert_equal 0 [r exists nosuchkey]
    }

    test {GETEX with a past time deletes the key} {
        r set k v
        assert_equal v [r getex k exat 1]
        assert_equal 0 [r exists k]
    }

    test {GETEX errors} {
        r set k v
        assert_error {ERR invalid expire time in 'getex' command} {r getex k ex 0}
        assert_error {ERR invalid expire time in 'getex' command} {r getex k px -1}
        assert_error {ERR invalid expire time in 'getex' command} {r getex k exat 0}
        assert_error {ERR value is not an integer or out of range} {r getex k ex abc}
        assert_error {ERR syntax error} {r getex k ex 10 px 10}
        assert_error {ERR syntax error} {r getex k persist ex 10}
        assert_error {ERR syntax error} {r getex k foo}
        assert_error {ERR syntax error} {r getex k ex}
    }

    # --- MGET / MSET / MSETNX --------------------------------------------------

    test {MGET} {
        r flushdb
        r mset a 1 b 2
        assert_equal {1 2 {}} [r mget a b c]
        assert_equal "*3\r\n\$1\r\n1\r\n\$-1\r\n\$1\r\n2\r\n" [r rawcall mget a nosuch b]
    }

    test {MGET of a non-string key returns null} {
        make_list_key lk
        r set a 1
        assert_equal "*2\r\n\$1\r\n1\r\n\$-1\r\n" [r rawcall mget a lk]
    }

    test {MSET} {
        assert_equal OK [r mset x 1 y 2 z 3]
        assert_equal {1 2 3} [r mget x y z]
    }

    test {MSET with a repeated key keeps the last value} {
        r mset dup 1 dup 2
        assert_equal 2 [r get dup]
    }

    test {MSET clears TTLs} {
        r set x 1 ex 100
        r mset x 2
        assert_equal -1 [r ttl x]
    }

    test {MSET with binary values} {
        r mset b1 "a\x00b" b2 "\xff"
        assert_equal [list "a\x00b" "\xff"] [r mget b1 b2]
    }

    test {MSET and MSETNX arity} {
        assert_error {ERR wrong number of arguments for 'mset' command} {r mset a}
        assert_error {ERR wrong number of arguments for 'mset' command} {r mset a 1 b}
        assert_error {ERR wrong number of arguments for 'msetnx' command} {r msetnx a 1 b}
        assert_error {ERR wrong number of arguments for 'mget' command} {r mget}
    }

    test {MSETNX sets all or nothing} {
        r del m1 m2 m3
        assert_equal 1 [r msetnx m1 a m2 b]
        assert_equal {a b} [r mget m1 m2]
        assert_equal 0 [r msetnx m2 x m3 y]
        assert_equal {b {}} [r mget m2 m3]
    }

    test {MSETNX with a repeated new key} {
        r del m4
        assert_equal 1 [r msetnx m4 a m4 b]
        assert_equal b [r get m4]
    }

    # --- APPEND / STRLEN / GETRANGE / SETRANGE / SUBSTR ------------------------

    test {APPEND creates and extends} {
        r del k
        assert_equal 3 [r append k foo]
        assert_equal 6 [r append k bar]
        assert_equal foobar [r get k]
    }

    test {APPEND to an integer value} {
        r set n 12345
        assert_equal 6 [r append n 6]
        assert_equal 123456 [r get n]
        assert_equal 123457 [r incr n]
    }

    test {APPEND binary and empty} {
        r set k "a\x00"
        assert_equal 2 [r append k ""]
        assert_equal 4 [r append k "\x00b"]
        assert_equal "a\x00\x00b" [r get k]
    }

    test {APPEND many times} {
        r del k
        set expected ""
        for {set i 0} {$i < 1000} {incr i} {
            r append k $i
            append expected $i
        }
        assert_equal $expected [r get k]
    }

    test {STRLEN} {
        r set k hello
        assert_equal 5 [r strlen k]
        assert_equal 0 [r strlen nosuch]
        r set n -12345
        assert_equal 6 [r strlen n]
        r set n 0
        assert_equal 1 [r strlen n]
    }

    test {GETRANGE} {
        r set k ohmytext
        assert_equal ohmytext [r getrange k 0 -1]
        assert_equal ext [r getrange k -3 -1]
        assert_equal o [r getrange k 0 0]
        assert_equal "" [r getrange k 5 2]
        assert_equal ohmytext [r getrange k -100 100]
        assert_equal "" [r getrange k 100 200]
        assert_equal "" [r getrange k -1 -5]
        assert_equal "\$0\r\n\r\n" [r rawcall getrange nosuch 0 -1]
    }

    test {GETRANGE of an integer value} {
        r set n 12345
        assert_equal 23 [r getrange n 1 2]
        assert_equal 5 [r getrange n -1 -1]
    }

    test {GETRANGE of an empty value} {
        r set e ""
        assert_equal "" [r getrange e 0 -1]
    }

    test {GETRANGE of binary data} {
        r set k "a\x00b\x00c"
        assert_equal "\x00b\x00" [r getrange k 1 3]
    }

    test {GETRANGE errors} {
        assert_error {ERR value is not an integer or out of range} {r getrange k a b}
        assert_error {ERR wrong number of arguments for 'getrange' command} {r getrange k 0}
    }

    test {SUBSTR is GETRANGE} {
        r set k ohmytext
        assert_equal oh [r substr k 0 1]
        assert_equal text [r substr k -4 -1]
    }

    test {SETRANGE inside, at the end and past the end} {
        r set k hello
        assert_equal 5 [r setrange k 1 EL]
        assert_equal hELlo [r get k]
        assert_equal 7 [r setrange k 5 !!]
        assert_equal hELlo!! [r get k]
        assert_equal 10 [r setrange k 9 x]
        assert_equal "hELlo!!\x00\x00x" [r get k]
    }

    test {SETRANGE of a missing key pads with zero bytes} {
        r del k
        assert_equal 4 [r setrange k 2 ab]
        assert_equal "\x00\x00ab" [r get k]
    }

    test {A key SETRANGE or SETBIT creates holds its length, not room to grow} {
        r del sr sb
        r setrange sr 100000 x
        r setbit sb 800000 1
        # As Redis allocates a new key's value exactly (appends to it
        # later get room to grow).
        assert_range [r memory usage sr] 100001 [expr {100001 * 6 / 5}]
        assert_range [r memory usage sb] 100001 [expr {100001 * 6 / 5}]
        r append sr y
        assert_equal 100002 [r strlen sr]
        r del sr sb
    }

    test {SETRANGE with an empty value} {
        r del k
        assert_equal 0 [r setrange k 5 ""]
        assert_equal 0 [r exists k]
        r set k abc
        assert_equal 3 [r setrange k 10 ""]
        assert_equal abc [r get k]
    }

    test {SETRANGE of an integer value} {
        r set n 1234
        assert_equal 4 [r setrange n 1 9]
        assert_equal 1934 [r get n]
        assert_equal 1935 [r incr n]
    }

    test {SETRANGE errors} {
        assert_error {ERR offset is out of range} {r setrange k -1 x}
        assert_error {ERR value is not an integer or out of range} {r setrange k abc x}
    }

    test {SETRANGE beyond 512 MB} {
        r del k
        assert_error {ERR string exceeds maximum allowed size (proto-max-bulk-len)} {r setrange k 536870912 x}
        assert_error {ERR string exceeds maximum allowed size (proto-max-bulk-len)} {r setrange k 536870911 xx}
        assert_equal 0 [r exists k]
        # An empty value never grows the string, so no error.
        assert_equal 0 [r setrange k 536870912 ""]
    }

    test {SETRANGE and APPEND honour a lowered proto-max-bulk-len} {
        r config set proto-max-bulk-len 1048576
        r del k
        assert_error {ERR string exceeds maximum allowed size (proto-max-bulk-len)} {r setrange k 1048576 x}
        assert_equal 1048576 [r setrange k 1048575 x]
        assert_error {ERR string exceeds maximum allowed size (proto-max-bulk-len)} {r append k x}
        assert_equal 1048576 [r strlen k]
        r config set proto-max-bulk-len 536870912
        r del k
    }

    # --- INCR family ----------------------------------------------------------

    test {INCR of a missing key} {
        r del n
        assert_equal 1 [r incr n]
        assert_equal 2 [r incr n]
        assert_equal ":3\r\n" [r rawcall incr n]
    }

    test {INCR, DECR, INCRBY, DECRBY} {
        r set n 10
        assert_equal 9 [r decr n]
        assert_equal 109 [r incrby n 100]
        assert_equal 9 [r decrby n 100]
        assert_equal -91 [r incrby n -100]
        assert_equal 9 [r decrby n -100]
        assert_equal 9 [r get n]
    }

    test {INCR of a value stored as a string} {
        r set n 17179869184
        assert_equal 17179869185 [r incr n]
        r set n -1
        assert_equal 0 [r incr n]
    }

    test {INCR of values that are not canonical integers} {
        foreach v {abc 1.5 " 1" "1 " 01 +1 "" 0x10 1e3 --1} {
            r set n $v
            assert_error {ERR value is not an integer or out of range} {r incr n}
            assert_equal $v [r get n]
        }
    }

    test {INCR of an integer too big for 64 bits} {
        r set n 9223372036854775808
        assert_error {ERR value is not an integer or out of range} {r incr n}
    }

    test {INCR and DECR overflow} {
        r set n 9223372036854775807
        assert_error {ERR increment or decrement would overflow} {r incr n}
        assert_error {ERR increment or decrement would overflow} {r incrby n 1}
        assert_equal 9223372036854775807 [r get n]
        r set n -9223372036854775808
        assert_error {ERR increment or decrement would overflow} {r decr n}
        assert_error {ERR increment or decrement would overflow} {r incrby n -1}
        assert_error {ERR increment or decrement would overflow} {r decrby n 1}
        assert_equal -9223372036854775808 [r get n]
    }

    test {DECRBY of the smallest integer} {
        r set n 5
        assert_error {ERR decrement would overflow} {r decrby n -9223372036854775808}
        assert_equal 5 [r get n]
    }

    test {INCRBY limits} {
        r set n 0
        assert_equal 9223372036854775807 [r incrby n 9223372036854775807]
        r set n 0
        assert_equal -9223372036854775808 [r incrby n -9223372036854775808]
        assert_error {ERR value is not an integer or out of range} {r incrby n 9223372036854775808}
    }

    test {INCRBY and DECRBY with a bad increment} {
        r set n 1
        assert_error {ERR value is not an integer or out of range} {r incrby n abc}
        assert_error {ERR value is not an integer or out of range} {r incrby n 1.5}
        assert_error {ERR value is not an integer or out of range} {r decrby n ""}
    }

    test {INCR keeps the TTL and the value stays a string} {
        r set n 5 ex 100
        r incr n
        assert_range [r ttl n] 99 100
        assert_equal string [r type n]
        assert_equal 6 [r get n]
    }

    test {INCRBYFLOAT} {
        r del f
        assert_equal 1.5 [r incrbyfloat f 1.5]
        assert_equal "\$1\r\n3\r\n" [r rawcall incrbyfloat f 1.5]
        r set f 10.5
        assert_equal 10.6 [r incrbyfloat f 0.1]
        r set f 3
        assert_equal 3.01 [r incrbyfloat f 1.0e-2]
        r set f 5
        assert_equal 0 [r incrbyfloat f -5]
        r set f 10
        assert_equal 7.5 [r incrbyfloat f -2.5]
    }

    test {INCRBYFLOAT output uses long double precision} {
        # Redis 7.0 computes with long double and prints with %.17Lf,
        # trimming trailing zeros (x86-64 80-bit long double).
        r set f 10.6
        assert_equal 5010.60000000000000009 [r incrbyfloat f 5.0e3]
        r set f 1e2
        assert_equal 200 [r incrbyfloat f 100]
    }

    test {INCRBYFLOAT of an integer value} {
        r set f 17179869184
        assert_equal 17179869185.5 [r incrbyfloat f 1.5]
    }

    test {INCRBYFLOAT errors} {
        r set f 1
        assert_error {ERR value is not a valid float} {r incrbyfloat f abc}
        assert_error {ERR value is not a valid float} {r incrbyfloat f nan}
        assert_error {ERR increment would produce NaN or Infinity} {r incrbyfloat f inf}
        assert_error {ERR increment would produce NaN or Infinity} {r incrbyfloat f -inf}
        assert_error {ERR value is not a valid float} {r incrbyfloat f ""}
        assert_error {ERR value is not a valid float} {r incrbyfloat f "1 "}
        r set f abc
        assert_error {ERR value is not a valid float} {r incrbyfloat f 1}
        r set f 1.0e4932
        assert_error {ERR increment would produce NaN or Infinity} {r incrbyfloat f 1.0e4932}
        assert_equal 1.0e4932 [r get f]
    }

    # --- bits -------------------------------------------------------------------

    test {SETBIT and GETBIT} {
        r del b
        assert_equal 0 [r setbit b 7 1]
        assert_equal "\x01" [r get b]
        assert_equal 1 [r getbit b 7]
        assert_equal 0 [r getbit b 6]
        assert_equal 1 [r setbit b 7 0]
        assert_equal "\x00" [r get b]
        assert_equal 0 [r setbit b 0 1]
        assert_equal "\x80" [r get b]
    }

    test {SETBIT grows the string with zero bytes} {
        r del b
        r setbit b 23 1
        assert_equal "\x00\x00\x01" [r get b]
        assert_equal 3 [r strlen b]
    }

    test {GETBIT past the end and of a missing key} {
        r set b a
        assert_equal 0 [r getbit b 1000]
        assert_equal 0 [r getbit nosuch 100]
    }

    test {SETBIT and GETBIT of an integer value} {
        r set n 1
        # "1" is 0x31 = 00110001
        assert_equal 1 [r getbit n 2]
        assert_equal 0 [r getbit n 0]
        assert_equal 0 [r setbit n 6 1]
        assert_equal 3 [r get n]
    }

    test {SETBIT and GETBIT errors} {
        assert_error {ERR bit offset is not an integer or out of range} {r setbit b 4294967296 1}
        assert_error {ERR bit offset is not an integer or out of range} {r setbit b -1 1}
        assert_error {ERR bit offset is not an integer or out of range} {r setbit b abc 1}
        assert_error {ERR bit is not an integer or out of range} {r setbit b 0 2}
        assert_error {ERR bit is not an integer or out of range} {r setbit b 0 abc}
        assert_error {ERR bit offset is not an integer or out of range} {r getbit b 4294967296}
        assert_error {ERR bit offset is not an integer or out of range} {r getbit b -1}
    }

    test {SETBIT offset limited by proto-max-bulk-len} {
        r config set proto-max-bulk-len 1048576
        r del b
        assert_error {ERR bit offset is not an integer or out of range} {r setbit b 8388608 1}
        assert_equal 0 [r setbit b 8388607 1]
        assert_equal 1048576 [r strlen b]
        r config set proto-max-bulk-len 536870912
        r del b
    }

    test {BITCOUNT} {
        r set s foobar
        assert_equal 26 [r bitcount s]
        assert_equal 4 [r bitcount s 0 0]
        assert_equal 6 [r bitcount s 1 1]
        assert_equal 26 [r bitcount s 0 -1]
        assert_equal 26 [r bitcount s -100 -1]
        assert_equal 0 [r bitcount s 1 0]
        assert_equal 0 [r bitcount nosuch]
        assert_equal 0 [r bitcount nosuch 0 -1]
    }

    test {BITCOUNT BYTE and BIT} {
        r set s foobar
        assert_equal 26 [r bitcount s 0 -1 byte]
        assert_equal 6 [r bitcount s 1 1 BYTE]
        assert_equal 26 [r bitcount s 0 -1 bit]
        assert_equal 17 [r bitcount s 5 30 bit]
        assert_equal 1 [r bitcount s 1 1 bit]
        assert_equal 4 [r bitcount s -8 -1 BIT]
    }

    test {BITCOUNT of many random strings} {
        for {set i 0} {$i < 50} {incr i} {
            set v [randstring 0 300 binary]
            r set s $v
            binary scan $v b* bits
            set expected [llength [regexp -all -inline 1 $bits]]
            assert_equal $expected [r bitcount s]
        }
    }

    test {BITCOUNT errors} {
        r set s foobar
        assert_error {ERR syntax error} {r bitcount s 0}
        assert_error {ERR syntax error} {r bitcount s 0 -1 foo}
        assert_error {ERR syntax error} {r bitcount s 0 -1 bit foo}
        assert_error {ERR value is not an integer or out of range} {r bitcount s a b}
    }

    test {BITPOS} {
        r set s foobar
        assert_equal 1 [r bitpos s 1]
        assert_equal 0 [r bitpos s 0]
        assert_equal 17 [r bitpos s 1 2]
        assert_equal 16 [r bitpos s 0 2]
        assert_equal 1 [r bitpos s 1 0 -1]
    }

    test {BITPOS BYTE and BIT} {
        r set s foobar
        assert_equal 2 [r bitpos s 1 2 -1 bit]
        assert_equal 9 [r bitpos s 1 7 15 bit]
        assert_equal 17 [r bitpos s 1 2 -1 byte]
    }

    test {BITPOS of a missing key} {
        assert_equal -1 [r bitpos nosuch 1]
        assert_equal 0 [r bitpos nosuch 0]
    }

    test {BITPOS looking for 0 in all-ones} {
        r set ff "\xff\xff\xff"
        # No end given: the string is taken as padded with zeros.
        assert_equal 24 [r bitpos ff 0]
        assert_equal 24 [r bitpos ff 0 1]
        # An explicit end means "not found".
        assert_equal -1 [r bitpos ff 0 0 -1]
        assert_equal -1 [r bitpos ff 0 0 -1 bit]
    }

    test {BITPOS looking for 1 in all-zeros} {
        r set zz "\x00\x00\x00"
        assert_equal -1 [r bitpos zz 1]
        assert_equal -1 [r bitpos zz 1 0 -1]
    }

    test {BITPOS with start past the end} {
        r set s foobar
        assert_equal -1 [r bitpos s 1 100]
        assert_equal -1 [r bitpos s 0 100]
    }

    test {BITPOS errors} {
        r set s foobar
        assert_error {ERR The bit argument must be 1 or 0.} {r bitpos s 2}
        assert_error {ERR value is not an integer or out of range} {r bitpos s 1 a}
        assert_error {ERR syntax error} {r bitpos s 1 0 -1 foo}
        assert_error {ERR syntax error} {r bitpos s 0 1 2 3}
    }

    test {BITOP AND, OR, XOR} {
        r set a "\xff\x0f"
        r set b "\x0f\xff\xaa"
        assert_equal 3 [r bitop and dest a b]
        assert_equal "\x0f\x0f\x00" [r get dest]
        assert_equal 3 [r bitop or dest a b]
        assert_equal "\xff\xff\xaa" [r get dest]
        assert_equal 3 [r bitop xor dest a b]
        assert_equal "\xf0\xf0\xaa" [r get dest]
    }

    test {BITOP NOT} {
        r set a "\xff\x0f\x00"
        assert_equal 3 [r bitop not dest a]
        assert_equal "\x00\xf0\xff" [r get dest]
    }

    test {BITOP with a single source copies it} {
        r set a "abc"
        assert_equal 3 [r bitop and dest a]
        assert_equal abc [r get dest]
        assert_equal 3 [r bitop or dest a]
        assert_equal abc [r get dest]
    }

    test {BITOP with missing sources} {
        r set a "\xff"
        assert_equal 1 [r bitop and dest a nosuch]
        assert_equal "\x00" [r get dest]
        assert_equal 1 [r bitop or dest a nosuch]
        assert_equal "\xff" [r get dest]
    }

    test {BITOP where every source is missing deletes the destination} {
        r set dest x
        assert_equal 0 [r bitop or dest nosuch1 nosuch2]
        assert_equal 0 [r exists dest]
    }

    test {BITOP with the destination among the sources} {
        r set a "\x01"
        r set b "\x02"
        assert_equal 1 [r bitop or a a b]
        assert_equal "\x03" [r get a]
    }

    test {BITOP of integer values} {
        r set a 1
        r set b 2
        r bitop xor dest a b
        assert_equal "\x03" [r get dest]
    }

    test {BITOP against random strings} {
        for {set i 0} {$i < 20} {incr i} {
            set x [randstring 1 40 binary]
            set y [randstring 1 40 binary]
            r set x $x
            r set y $y
            r bitop xor dest x y
            set lx [string length $x]
            set ly [string length $y]
            set n [expr {max($lx, $ly)}]
            set expected ""
            for {set j 0} {$j < $n} {incr j} {
                set cx [expr {$j < $lx ? [scan [string index $x $j] %c] : 0}]
                set cy [expr {$j < $ly ? [scan [string index $y $j] %c] : 0}]
                append expected [format %c [expr {$cx ^ $cy}]]
            }
            assert_equal $expected [r get dest]
        }
    }

    test {BITOP errors} {
        assert_error {ERR BITOP NOT must be called with a single source key.} {r bitop not dest a b}
        assert_error {ERR syntax error} {r bitop nand dest a b}
        assert_error {ERR wrong number of arguments for 'bitop' command} {r bitop and dest}
        r set a 1
    }

    test {BITFIELD SET and GET} {
        r del bf
        assert_equal {0} [r bitfield bf set u8 0 255]
        assert_equal {255} [r bitfield bf get u8 0]
        assert_equal "\xff" [r get bf]
        assert_equal {255 -1} [r bitfield bf get u8 0 get i8 0]
    }

    test {BITFIELD signed and unsigned at unaligned offsets} {
        r del bf
        r bitfield bf set u4 2 15
        assert_equal "\x3c" [r get bf]
        assert_equal {15 -1 0} [r bitfield bf get u4 2 get i4 2 get u2 0]
        assert_equal {1 0 -1} [r bitfield bf get u1 2 get u1 1 get i1 2]
    }

    test {BITFIELD # offsets are multiplied by the type width} {
        r del bf
        assert_equal {0 0} [r bitfield bf set u8 #0 1 set u8 #2 3]
        assert_equal "\x01\x00\x03" [r get bf]
        assert_equal {1 0 3} [r bitfield bf get u8 #0 get u8 #1 get u8 #2]
        # bits 16..31 hold the bytes 03 00
        assert_equal {768} [r bitfield bf set i16 #1 -2]
        assert_equal {-2} [r bitfield bf get i16 16]
    }

    test {BITFIELD INCRBY with WRAP} {
        r del bf
        r bitfield bf set u8 0 250
        assert_equal {4} [r bitfield bf incrby u8 0 10]
        assert_equal {4 -27} [r bitfield bf set i8 0 -27 incrby i8 0 0]
        r bitfield bf set i8 0 100
        assert_equal {-56} [r bitfield bf overflow wrap incrby i8 0 100]
    }

    test {BITFIELD INCRBY with SAT} {
        r del bf
        r bitfield bf set u8 0 250
        assert_equal {255} [r bitfield bf overflow sat incrby u8 0 10]
        assert_equal {0} [r bitfield bf overflow sat incrby u8 0 -300]
        r bitfield bf set i8 0 100
        assert_equal {127} [r bitfield bf overflow sat incrby i8 0 100]
        assert_equal {-128} [r bitfield bf overflow sat incrby i8 0 -1000]
    }

    test {BITFIELD INCRBY with FAIL returns null and keeps the value} {
        r del bf
        r bitfield bf set u8 0 250
        assert_equal "*1\r\n\$-1\r\n" [r rawcall bitfield bf overflow fail incrby u8 0 10]
        assert_equal {250} [r bitfield bf get u8 0]
        assert_equal {255} [r bitfield bf overflow fail incrby u8 0 5]
    }

    test {BITFIELD OVERFLOW applies to the following operations only} {
        r del bf
        r bitfield bf set u8 0 255
        # wrap: 255+1 -> 0; then sat: 0-1 -> 0, 0+1000 -> 255
        assert_equal {0 0 255} [r bitfield bf incrby u8 0 1 overflow sat incrby u8 0 -1 incrby u8 0 1000]
    }

    test {BITFIELD SET with SAT and WRAP} {
        r del bf
        assert_equal {0} [r bitfield bf overflow sat set i8 0 300]
        assert_equal {127} [r bitfield bf get i8 0]
        assert_equal {127} [r bitfield bf overflow sat set i8 0 -300]
        assert_equal {-128} [r bitfield bf get i8 0]
        r bitfield bf set i8 0 300
        assert_equal {44} [r bitfield bf get i8 0]
    }

    test {BITFIELD 63 and 64 bit fields} {
        r del bf
        assert_equal {0 9223372036854775807} [r bitfield bf set i64 0 9223372036854775807 get i64 0]
        assert_equal {-9223372036854775808} [r bitfield bf overflow wrap incrby i64 0 1]
        r del bf
        assert_equal {0 9223372036854775807} [r bitfield bf set u63 0 9223372036854775807 get u63 0]
    }

    test {BITFIELD of a missing key} {
        assert_equal {0} [r bitfield nosuch get u8 0]
        assert_equal 0 [r exists nosuch]
        assert_equal {} [r bitfield nosuch]
        assert_equal "*0\r\n" [r rawcall bitfield nosuch]
    }

    test {BITFIELD errors} {
        r set bf x
        set typeerr {ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.}
        assert_error $typeerr {r bitfield bf get u64 0}
        assert_error $typeerr {r bitfield bf get i65 0}
        assert_error $typeerr {r bitfield bf get x8 0}
        assert_error $typeerr {r bitfield bf get u0 0}
        assert_error {ERR bit offset is not an integer or out of range} {r bitfield bf get u8 -1}
        assert_error {ERR bit offset is not an integer or out of range} {r bitfield bf get u8 abc}
        assert_error {ERR bit offset is not an integer or out of range} {r bitfield bf set u8 4294967296 1}
        assert_error {ERR value is not an integer or out of range} {r bitfield bf set u8 0 abc}
        assert_error {ERR value is not an integer or out of range} {r bitfield bf incrby u8 0 abc}
        assert_error {ERR Invalid OVERFLOW type specified} {r bitfield bf overflow foo}
        assert_error {ERR syntax error} {r bitfield bf foo}
        assert_error {ERR syntax error} {r bitfield bf get u8}
    }

    test {BITFIELD: an error leaves the value unchanged} {
        r set bf "\x00"
        catch {r bitfield bf set u8 0 255 get u64 0}
        assert_equal "\x00" [r get bf]
    }

    test {BITFIELD_RO} {
        r del bf
        r bitfield bf set u8 0 200
        assert_equal {200 -56} [r bitfield_ro bf get u8 0 get i8 0]
        assert_equal {0} [r bitfield_ro nosuch get u8 0]
        assert_error {ERR BITFIELD_RO only supports the GET subcommand} {r bitfield_ro bf set u8 0 1}
        assert_error {ERR BITFIELD_RO only supports the GET subcommand} {r bitfield_ro bf incrby u8 0 1}
        assert_equal {200} [r bitfield bf get u8 0]
    }

    # --- LCS ------------------------------------------------------------------

    test {LCS} {
        r mset key1 ohmytext key2 mynewtext
        assert_equal mytext [r lcs key1 key2]
        assert_equal 6 [r lcs key1 key2 len]
    }

    test {LCS IDX} {
        r mset key1 ohmytext key2 mynewtext
        assert_equal {matches {{{4 7} {5 8}} {{2 3} {0 1}}} len 6} [r lcs key1 key2 idx]
    }

    test {LCS IDX MINMATCHLEN} {
        assert_equal {matches {{{4 7} {5 8}}} len 6} [r lcs key1 key2 idx minmatchlen 4]
        assert_equal {matches {{{4 7} {5 8}} {{2 3} {0 1}}} len 6} [r lcs key1 key2 idx minmatchlen -5]
    }

    test {LCS IDX WITHMATCHLEN} {
        assert_equal {matches {{{4 7} {5 8} 4} {{2 3} {0 1} 2}} len 6} [r lcs key1 key2 idx withmatchlen]
        assert_equal {matches {{{4 7} {5 8} 4}} len 6} [r lcs key1 key2 idx minmatchlen 4 withmatchlen]
    }

    test {LCS IDX raw reply shape} {
        r mset ka abc kb xbz
        assert_equal "*4\r\n\$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:1\r\n:1\r\n*2\r\n:1\r\n:1\r\n\$3\r\nlen\r\n:1\r\n" \
            [r rawcall lcs ka kb idx]
        set c [redis_client]
        $c hello 3
        assert_equal "%2\r\n\$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:1\r\n:1\r\n*2\r\n:1\r\n:1\r\n\$3\r\nlen\r\n:1\r\n" \
            [$c rawcall lcs ka kb idx]
        $c close
    }

    test {LCS with missing keys} {
        r set key1 ohmytext
        assert_equal "\$0\r\n\r\n" [r rawcall lcs key1 nosuch]
        assert_equal 0 [r lcs nosuch nosuch2 len]
        assert_equal {matches {} len 0} [r lcs nosuch nosuch2 idx]
    }

    test {LCS of longer strings} {
        r set a [string repeat "abcde" 200]
        r set b [string repeat "aXcYe" 200]
        assert_equal 600 [r lcs a b len]
        assert_equal [string repeat "ace" 200] [r lcs a b]
    }

    test {LCS WITHMATCHLEN without IDX is ignored} {
        r mset key1 ohmytext key2 mynewtext
        assert_equal mytext [r lcs key1 key2 withmatchlen]
        assert_equal 6 [r lcs key1 key2 len withmatchlen]
    }

    test {LCS errors} {
        assert_error {ERR If you want both the length and indexes, please just use IDX.} {r lcs key1 key2 len idx}
        assert_error {ERR value is not an integer or out of range} {r lcs key1 key2 minmatchlen abc}
        assert_error {ERR syntax error} {r lcs key1 key2 foo}
        assert_error {ERR wrong number of arguments for 'lcs' command} {r lcs key1}
    }

    # --- WRONGTYPE ---------------------------------------------------------------

    test {String commands against a list key} {
        make_list_key lk
        r set key1 ohmytext
        r set a 1
        assert_error $WRONGTYPE {r set lk v get}
        assert_error $WRONGTYPE {r get lk}
        assert_error $WRONGTYPE {r getset lk v}
        assert_error $WRONGTYPE {r getdel lk}
        assert_error $WRONGTYPE {r getex lk}
        assert_error $WRONGTYPE {r append lk x}
        assert_error $WRONGTYPE {r strlen lk}
        assert_error $WRONGTYPE {r getrange lk 0 -1}
        assert_error $WRONGTYPE {r setrange lk 0 x}
        assert_error $WRONGTYPE {r incr lk}
        assert_error $WRONGTYPE {r decrby lk 2}
        assert_error $WRONGTYPE {r incrbyfloat lk 1.5}
        assert_error $WRONGTYPE {r setbit lk 0 1}
        assert_error $WRONGTYPE {r getbit lk 0}
        assert_error $WRONGTYPE {r bitcount lk}
        assert_error $WRONGTYPE {r bitpos lk 1}
        assert_error $WRONGTYPE {r bitop and dest a lk}
        assert_error $WRONGTYPE {r bitfield lk get u8 0}
        assert_error $WRONGTYPE {r bitfield_ro lk get u8 0}
        assert_error {ERR The specified keys must contain string values} {r lcs key1 lk}
        assert_not_equal string [r type lk]
    }

    # --- encodings ------------------------------------------------------------

    test {Integer-looking values round-trip exactly} {
        foreach v {0 -1 1 123 -123 9223372036854775807 -9223372036854775808 007 -0 1.0 " 5"} {
            r set iv $v
            assert_equal $v [r get iv]
            assert_equal [string length $v] [r strlen iv]
        }
    }
}

# --- randomized checks against a Tcl model of Redis 7.0 semantics ------------

# Redis index normalisation for GETRANGE / BITCOUNT: "" (empty range) or
# {start end} clamped to [0, len-1].
proc model_range {start end len} {
    if {$start < 0 && $end < 0 && $start > $end} {return ""}
    if {$start < 0} {set start [expr {$len + $start}]}
    if {$end < 0} {set end [expr {$len + $end}]}
    if {$start < 0} {set start 0}
    if {$end < 0} {set end 0}
    if {$end >= $len} {set end [expr {$len - 1}]}
    if {$start > $end || $len == 0} {return ""}
    return [list $start $end]
}

proc model_getrange {s start end} {
    set r [model_range $start $end [string length $s]]
    if {$r eq ""} {return ""}
    return [string range $s {*}$r]
}

proc model_setrange {s offset v} {
    if {$v eq ""} {return $s}
    set need [expr {$offset + [string length $v]}]
    while {[string length $s] < $need} {append s "\x00"}
    return [string replace $s $offset [expr {$need - 1}] $v]
}

proc bits_of {s} {
    binary scan $s B* bits
    return $bits
}

proc model_bitcount {s start end isbit} {
    set bits [bits_of $s]
    set len [string length $s]
    if {$isbit} {set len [expr {$len * 8}]}
    set r [model_range $start $end $len]
    if {$r eq ""} {return 0}
    lassign $r a b
    if {!$isbit} {
        set a [expr {$a * 8}]
        set b [expr {$b * 8 + 7}]
    }
    return [llength [regexp -all -inline 1 [string range $bits $a $b]]]
}

proc model_bitpos {s bit start end endgiven isbit} {
    set bits [bits_of $s]
    set len [string length $s]
    set tot [expr {$isbit ? $len * 8 : $len}]
    if {!$endgiven} {set end [expr {$tot - 1}]}
    if {$start < 0} {set start [expr {$tot + $start}]}
    if {$end < 0} {set end [expr {$tot + $end}]}
    if {$start < 0} {set start 0}
    if {$end < 0} {set end 0}
    if {$end >= $tot} {set end [expr {$tot - 1}]}
    if {$start > $end} {return -1}
    if {!$isbit} {
        set a [expr {$start * 8}]
        set b [expr {$end * 8 + 7}]
    } else {
        set a $start
        set b $end
    }
    set i [string first $bit [string range $bits $a $b]]
    if {$i >= 0} {return [expr {$a + $i}]}
    if {$bit == 0 && !$endgiven} {
        # Not found: the first bit after the last byte of the range.
        return [expr {(($b >> 3) + 1) * 8}]
    }
    return -1
}

proc lcs_len {a b} {
    set la [string length $a]
    set lb [string length $b]
    set prev [lrepeat [expr {$lb + 1}] 0]
    for {set i 1} {$i <= $la} {incr i} {
        set cur [list 0]
        set ca [string index $a [expr {$i - 1}]]
        for {set j 1} {$j <= $lb} {incr j} {
            if {$ca eq [string index $b [expr {$j - 1}]]} {
                lappend cur [expr {[lindex $prev [expr {$j - 1}]] + 1}]
            } else {
                set x [lindex $prev $j]
                set y [lindex $cur [expr {$j - 1}]]
                lappend cur [expr {$x > $y ? $x : $y}]
            }
        }
        set prev $cur
    }
    return [lindex $prev $lb]
}

proc is_subsequence {sub s} {
    set j 0
    set n [string length $s]
    foreach c [split $sub ""] {
        while {$j < $n && [string index $s $j] ne $c} {incr j}
        if {$j >= $n} {return 0}
        incr j
    }
    return 1
}

proc rint {min max} {
    expr {$min + int(rand() * ($max - $min + 1))}
}

start_server {tags {string fuzz}} {

    test {SETRANGE and GETRANGE against a model} {
        set model ""
        r del fz
        for {set i 0} {$i < 500} {incr i} {
            set off [rint 0 300]
            set v [randstring 0 20 binary]
            set model [model_setrange $model $off $v]
            set len [r setrange fz $off $v]
            assert_equal [string length $model] $len "SETRANGE fz $off (round $i)"
            set a [rint -400 400]
            set b [rint -400 400]
            assert_equal [model_getrange $model $a $b] [r getrange fz $a $b] "GETRANGE fz $a $b (round $i)"
        }
        assert_equal $model [r get fz]
    }

    test {APPEND and STRLEN against a model} {
        set model ""
        r del fz
        for {set i 0} {$i < 300} {incr i} {
            set v [randstring 0 30 binary]
            append model $v
            assert_equal [string length $model] [r append fz $v]
        }
        assert_equal [string length $model] [r strlen fz]
        assert_equal $model [r get fz]
    }

    test {SETBIT and GETBIT against a model} {
        r del fz
        set model ""
        for {set i 0} {$i < 500} {incr i} {
            set off [rint 0 2000]
            set bit [rint 0 1]
            set bits [bits_of $model]
            set old [expr {$off < [string length $bits] ? [string index $bits $off] : 0}]
            assert_equal $old [r setbit fz $off $bit]
            set nbytes [expr {max([string length $model], $off / 8 + 1)}]
            while {[string length $bits] < $nbytes * 8} {append bits 0}
            set bits [string replace $bits $off $off $bit]
            set model [binary format B* $bits]
            set probe [rint 0 2100]
            set pbits [bits_of $model]
            set expected [expr {$probe < [string length $pbits] ? [string index $pbits $probe] : 0}]
            assert_equal $expected [r getbit fz $probe] "GETBIT fz $probe"
        }
        assert_equal $model [r get fz]
    }

    test {BITCOUNT with random ranges against a model} {
        for {set i 0} {$i < 300} {incr i} {
            set s [randstring 1 40 binary]
            r set fz $s
            set isbit [rint 0 1]
            set lim [expr {$isbit ? 400 : 50}]
            set a [rint -$lim $lim]
            set b [rint -$lim $lim]
            set unit [expr {$isbit ? "BIT" : "BYTE"}]
            assert_equal [model_bitcount $s $a $b $isbit] [r bitcount fz $a $b $unit] \
                "BITCOUNT of [::t::show $s] $a $b $unit"
        }
    }

    test {BITPOS with random ranges against a model} {
        for {set i 0} {$i < 500} {incr i} {
            # Long runs of 0x00 and 0xff make "not found" cases common.
            set s ""
            foreach _ [lrepeat [rint 1 8] x] {
                switch [rint 0 2] {
                    0 {append s [string repeat "\x00" [rint 1 3]]}
                    1 {append s [string repeat "\xff" [rint 1 3]]}
                    2 {append s [randstring 1 2 binary]}
                }
            }
            r set fz $s
            set bit [rint 0 1]
            set isbit [rint 0 1]
            set lim [expr {$isbit ? 200 : 30}]
            set form [rint 0 3]
            set a [rint -$lim $lim]
            set b [rint -$lim $lim]
            switch $form {
                0 {
                    set expected [model_bitpos $s $bit 0 0 0 0]
                    set got [r bitpos fz $bit]
                    set what "BITPOS $bit"
                }
                1 {
                    set expected [model_bitpos $s $bit $a 0 0 0]
                    set got [r bitpos fz $bit $a]
                    set what "BITPOS $bit $a"
                }
                2 {
                    set expected [model_bitpos $s $bit $a $b 1 0]
                    set got [r bitpos fz $bit $a $b]
                    set what "BITPOS $bit $a $b"
                }
                3 {
                    set unit [expr {$isbit ? "BIT" : "BYTE"}]
                    set expected [model_bitpos $s $bit $a $b 1 $isbit]
                    set got [r bitpos fz $bit $a $b $unit]
                    set what "BITPOS $bit $a $b $unit"
                }
            }
            assert_equal $expected $got "$what of [::t::show $s]"
        }
    }

    test {BITOP AND/OR/XOR/NOT against a model} {
        for {set i 0} {$i < 100} {incr i} {
            set n [rint 1 4]
            set keys {}
            set vals {}
            for {set j 0} {$j < $n} {incr j} {
                set v [randstring 0 20 binary]
                r set src$j $v
                lappend keys src$j
                lappend vals $v
            }
            set op [lindex {and or xor not} [rint 0 3]]
            if {$op eq "not"} {
                set keys [lrange $keys 0 0]
                set vals [lrange $vals 0 0]
            }
            set maxlen 0
            foreach v $vals {set maxlen [expr {max($maxlen, [string length $v])}]}
            set expected ""
            for {set p 0} {$p < $maxlen} {incr p} {
                set acc ""
                foreach v $vals {
                    set c [expr {$p < [string length $v] ? [scan [string index $v $p] %c] : 0}]
                    if {$acc eq ""} {
                        set acc $c
                    } else {
                        switch $op {
                            and {set acc [expr {$acc & $c}]}
                            or {set acc [expr {$acc | $c}]}
                            xor {set acc [expr {$acc ^ $c}]}
                        }
                    }
                }
                if {$op eq "not"} {set acc [expr {~$acc & 0xff}]}
                append expected [format %c $acc]
            }
            assert_equal $maxlen [r bitop $op dest {*}$keys]
            if {$maxlen == 0} {
                assert_equal 0 [r exists dest]
            } else {
                assert_equal $expected [r get dest] "BITOP $op of [llength $vals] keys"
            }
        }
    }

    test {BITFIELD u8/i8/u16/i5 SET and GET against a model} {
        r del fz
        set model [string repeat "\x00" 16]
        for {set i 0} {$i < 300} {incr i} {
            set type [lindex {u8 i8 u16 i5 u3 i16} [rint 0 5]]
            set signed [string match i* $type]
            set width [string range $type 1 end]
            set off [rint 0 [expr {16 * 8 - $width}]]
            set bits [bits_of $model]
            set field [string range $bits $off [expr {$off + $width - 1}]]
            set old 0
            foreach b [split $field ""] {set old [expr {$old * 2 + $b}]}
            if {$signed && [string index $field 0] == 1} {
                set old [expr {$old - (1 << $width)}]
            }
            set v [rint 0 [expr {(1 << $width) - 1}]]
            assert_equal $old [r bitfield fz set $type $off $v] "BITFIELD SET $type $off"
            set nb ""
            for {set k [expr {$width - 1}]} {$k >= 0} {incr k -1} {
                append nb [expr {($v >> $k) & 1}]
            }
            set bits [string replace $bits $off [expr {$off + $width - 1}] $nb]
            set model [binary format B* $bits]
            set got [r getrange fz 0 15]
            set got [string range "$got[string repeat "\x00" 16]" 0 15]
            assert_equal $model $got
        }
    }

    test {INCRBY and DECRBY against a model} {
        r set fz 0
        set model 0
        for {set i 0} {$i < 500} {incr i} {
            set d [rint -1000000 1000000]
            if {[rint 0 1]} {
                incr model $d
                assert_equal $model [r incrby fz $d]
            } else {
                incr model [expr {-$d}]
                assert_equal $model [r decrby fz $d]
            }
        }
        assert_equal $model [r get fz]
    }

    test {LCS of random strings against a model} {
        for {set i 0} {$i < 40} {incr i} {
            set a [randstring 0 40 compr]
            set b [randstring 0 40 compr]
            r mset la $a lb $b
            set n [lcs_len $a $b]
            assert_equal $n [r lcs la lb len]
            set sub [r lcs la lb]
            assert_equal $n [string length $sub]
            assert {[is_subsequence $sub $a] && [is_subsequence $sub $b]} "LCS '$sub' of '$a' and '$b'"
            set idx [kv [r lcs la lb idx]]
            assert_equal $n [dict get $idx len]
            # The matched ranges are equal in both strings and sum to the length.
            set total 0
            foreach m [dict get $idx matches] {
                lassign $m ra rb
                assert_equal [string range $a {*}$ra] [string range $b {*}$rb]
                incr total [expr {[lindex $ra 1] - [lindex $ra 0] + 1}]
            }
            assert_equal $n $total
        }
    }
}
