# Redis 7.0 functions: FUNCTION LOAD / LIST / DELETE / FLUSH / DUMP /
# RESTORE / STATS / KILL / HELP, FCALL and FCALL_RO; redis.register_function
# (positional and named), the function flags and their enforcement, the
# load-time environment and global protection; the EVAL shebang and its
# flags. After the ideas of Redis's own tests/unit/functions.tcl.

proc fcode {lib fname body} {
    return "#!lua name=$lib\nredis.register_function('$fname', function(KEYS, ARGV)\n $body \nend)"
}

proc fcode_flags {lib fname body flags} {
    set f {}
    foreach fl $flags {lappend f "'$fl'"}
    return "#!lua name=$lib\nredis.register_function{function_name='$fname', callback=function(KEYS, ARGV)\n $body \nend, flags={[join $f ,]}}"
}

# FUNCTION LIST with the libraries sorted by name (Redis lists them in
# hash order).
proc sorted_list {args} {
    set l [r function list {*}$args]
    return [lsort -index 1 $l]
}

if {[is_goblin]} {
    set ::functions_server_args {--cores 4}
} else {
    set ::functions_server_args {}
}

start_server [list tags {scripting} args $::functions_server_args] {

    test {FUNCTION LOAD and FCALL} {
        assert_equal test [r function load [fcode test test {return 'hello'}]]
        assert_equal hello [r fcall test 0]
        assert_equal hello [r fcall TEST 0]
        assert_error {ERR Can not execute a script with write flag using \*_ro command.} {r fcall_ro test 0 k}
    }

    test {FUNCTION LOAD errors} {
        assert_error {ERR Unknown option given: foo} {r function load foo bar [fcode test test {return 1}]}
        assert_error {ERR Library 'test' already exists} {r function load [fcode test test {return 1}]}
        assert_error {ERR Library names can only contain letters, numbers, or underscores(_)*} \
            {r function load [fcode {bad-name} test {return 1}]}
        assert_error {ERR Engine 'bad_engine' not found} \
            {r function load "#!bad_engine name=x\nredis.register_function('x', function() return 1 end)"}
        assert_error {ERR Error compiling function:*} {r function load replace [fcode test test {bad script}]}
        assert_error {ERR Missing library metadata} {r function load {return 1}}
        assert_error {ERR Missing library metadata} {r function load replace}
        assert_error {ERR Invalid library metadata} {r function load "#!lua name=x"}
        assert_error {ERR Library name was not given} {r function load "#!lua\nreturn 1"}
        assert_error {ERR Invalid metadata value given: foo=bar} {r function load "#!lua name=x foo=bar\nreturn 1"}
        assert_error {ERR Invalid metadata value, name argument was given multiple times} \
            {r function load "#!lua name=x name=y\nreturn 1"}
        assert_error {ERR Engine '' not found} {r function load "#! name=x\nreturn 1"}
        assert_error {ERR No functions registered} {r function load "#!lua name=x\nreturn 1"}
        assert_equal foo [r function load "#!lua name=\"foo\"\nredis.register_function('foo', function() return 1 end)"]
        r function delete foo
        # A failed REPLACE keeps the old library.
        catch {r function load replace [fcode test test {error}]}
        assert_equal hello [r fcall test 0]
    }

    test {FUNCTION LOAD REPLACE} {
        assert_equal test [r function load REPLACE [fcode test test {return 'hello1'}]]
        assert_equal hello1 [r fcall test 0]
    }

    test {FCALL argument errors} {
        assert_error {ERR Function not found} {r fcall nosuch 0}
        assert_error {ERR Bad number of keys provided} {r fcall test bad_arg}
        assert_error {ERR Number of keys can't be greater than number of args} {r fcall test 10 key1}
        assert_error {ERR Number of keys can't be negative} {r fcall test -1 key1}
        assert_error {ERR wrong number of arguments for 'fcall' command} {r fcall test}
    }

    test {FUNCTION DELETE} {
        assert_equal OK [r function delete test]
        assert_error {ERR Function not found} {r fcall test 0}
        assert_error {ERR Library not found} {r function delete test}
        assert_error {ERR wrong number of arguments for 'function|delete' command} {r function delete}
    }

    test {FUNCTION KILL and subcommand errors} {
        assert_error {NOTBUSY No scripts in execution right now.} {r function kill}
        assert_error {ERR unknown subcommand 'bad_subcommand'. Try FUNCTION HELP.} {r function bad_subcommand}
        set help [r function help]
        assert_equal {FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:} [lindex $help 0]
        assert_equal 40 [llength $help]
    }

    test {keys and arguments are the callback's two tables} {
        r function load [fcode kv kv {return {KEYS, ARGV}}]
        assert_equal {{a b} c} [r fcall kv 2 a b c]
        assert_equal {{} {}} [r fcall kv 0]
        r function load replace [fcode kv kv {return redis.call('set', KEYS[1], ARGV[1])}]
        assert_equal OK [r fcall kv 1 x foo]
        assert_equal foo [r get x]
        assert_equal {x} [r command getkeys fcall kv 1 x foo]
        assert_equal {x} [r command getkeys fcall_ro kv 1 x foo]
        r function delete kv
    }

    test {runtime errors name the function and its line} {
        r function load [fcode err f1 {return 1 + nil}]
        assert_error {ERR user_function:3: attempt to perform arithmetic on a nil value script: f1, on @user_function:3.} \
            {r fcall f1 0}
        r function load replace "#!lua name=err\nredis.register_function('f1', function() return redis.call('nosuch') end)\nredis.register_function('f2', function() return KEYS end)\nredis.register_function('f3', function() return redis.error_reply('MY err') end)"
        assert_error {ERR Unknown Redis command called from script script: f1, on @user_function:2.} {r fcall f1 0}
        assert_error {ERR user_function:3: Script attempted to access nonexistent global variable 'KEYS' script: f2, on @user_function:3.} \
            {r fcall f2 0}
        assert_error {MY err} {r fcall f3 0}
        r function delete err
    }

    test {FLUSHALL and FLUSHDB leave the functions} {
        r function flush
        r function load [fcode test test {return redis.call('set', 'x', '1')}]
        r flushall
        r flushdb
        r function list
    } {{library_name test engine LUA functions {{name test description {} flags {}}}}}

    test {FUNCTION LIST shapes, WITHCODE, LIBRARYNAME} {
        r function flush
        r function load "#!lua name=library1\nredis.register_function('f6', function(keys, args) return 7 end)"
        assert_equal {{library_name library1 engine LUA functions {{name f6 description {} flags {}}} library_code {#!lua name=library1
redis.register_function('f6', function(keys, args) return 7 end)}}} [r function list withcode]
        r function load "#!lua name=lib1\nredis.register_function('f7', function(keys, args) return 7 end)"
        assert_equal {{library_name library1 engine LUA functions {{name f6 description {} flags {}}}}} \
            [r function list libraryname library*]
        assert_equal {} [r function list libraryname nomatch*]
        assert_equal {lib1 library1} [lmap l [sorted_list] {lindex $l 1}]
        assert_error {ERR Unknown argument bad_argument} {r function list bad_argument}
        assert_error {ERR library name argument was not given} {r function list libraryname}
        assert_error {ERR Unknown argument withcode} {r function list withcode withcode}
        assert_error {ERR Unknown argument libraryname} {r function list withcode libraryname foo libraryname foo}
    }

    test {FUNCTION LIST in RESP3: maps, sets of flags, null description} {
        r function flush
        r function load [fcode_flags lib f1 {return 1} {no-writes allow-stale}]
        r hello 3
        set raw [r rawcall function list]
        r hello 2
        assert_match {*%3*$12*library_name*$3*lib*$6*engine*$3*LUA*$9*functions*\*1*%3*$4*name*$2*f1*$11*description*_*$5*flags*~2*+no-writes*+allow-stale*} $raw
    }

    test {FUNCTION DUMP and RESTORE} {
        r function flush
        r function load [fcode test test {return 'hello'}]
        set e [r function dump]
        r function delete test
        assert_equal {} [r function list]
        assert_equal OK [r function restore $e]
        assert_equal hello [r fcall test 0]
        # FLUSH
        r function flush
        r function load [fcode other other {return 1}]
        assert_equal OK [r function restore $e FLUSH]
        assert_equal {{library_name test engine LUA functions {{name test description {} flags {}}}}} [r function list]
        # APPEND refuses a library that exists, REPLACE replaces it.
        r function flush
        r function load [fcode test test {return 'hello1'}]
        assert_error {ERR Library test already exists} {r function restore $e APPEND}
        assert_equal hello1 [r fcall test 0]
        assert_equal OK [r function restore $e REPLACE]
        assert_equal hello [r fcall test 0]
        r function flush
        r function load [fcode test1 test1 {return 'hello1'}]
        assert_equal OK [r function restore $e append]
        assert_equal hello [r fcall test 0]
        assert_equal hello1 [r fcall test1 0]
    }

    test {FUNCTION RESTORE errors keep the libraries} {
        r function flush
        r function load [fcode test test {return 'hello'}]
        assert_error {ERR DUMP payload version or checksum are wrong} {r function restore bad_payload}
        assert_error {ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.} \
            {r function restore bad_payload bad_policy}
        assert_error {ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP.} \
            {r function restore arg1 args2 arg3}
        # A string DUMP payload is no function payload.
        r set s v
        assert_error {ERR given type is not a function} {r function restore [r dump s]}
        r function list
    } {{library_name test engine LUA functions {{name test description {} flags {}}}}}

    test {FUNCTION RESTORE with a function name collision changes nothing} {
        r function flush
        r function load "#!lua name=lib1\nredis.register_function('f1', function() return 2 end)\nredis.register_function('f3', function() return 4 end)"
        set e [r function dump]
        r function flush
        r function load "#!lua name=lib1\nredis.register_function('f6', function() return 7 end)"
        r function load "#!lua name=lib2\nredis.register_function('f3', function() return 5 end)"
        assert_error {ERR Library lib1 already exists} {r function restore $e}
        assert_error {ERR Function f3 already exists} {r function restore $e replace}
        assert_equal 5 [r fcall f3 0]
        assert_equal 7 [r fcall f6 0]
        assert_error {ERR Function not found} {r fcall f1 0}
    }

    test {FUNCTION FLUSH} {
        r function load replace [fcode test test {return 1}]
        assert_equal OK [r function flush]
        assert_equal {} [r function list]
        r function load [fcode test test {return 1}]
        assert_equal OK [r function flush async]
        assert_equal {} [r function list]
        r function load [fcode test test {return 1}]
        assert_equal OK [r function flush sync]
        assert_equal {} [r function list]
        assert_error {ERR FUNCTION FLUSH only supports SYNC|ASYNC option} {r function flush bad_arg}
        assert_error {ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP.} \
            {r function flush sync extra_arg}
    }

    test {FUNCTION STATS} {
        r function flush
        r function load "#!lua name=test1\nredis.register_function('f1', function() return 1 end)\nredis.register_function('f2', function() return 1 end)"
        r function load "#!lua name=test2\nredis.register_function('f3', function() return 1 end)"
        assert_equal {running_script {} engines {LUA {libraries_count 2 functions_count 3}}} [r function stats]
        assert_equal 3 [s number_of_functions]
        assert_equal 2 [s number_of_libraries]
        r function delete test1
        assert_equal {running_script {} engines {LUA {libraries_count 1 functions_count 1}}} [r function stats]
        catch {r function load "#!lua name=test2\nredis.register_function('f4', function() return 1 end)"}
        assert_equal {running_script {} engines {LUA {libraries_count 1 functions_count 1}}} [r function stats]
        r function flush
        assert_equal {running_script {} engines {LUA {libraries_count 0 functions_count 0}}} [r function stats]
    }

    test {libraries survive DEBUG RELOAD} {
        r function flush
        r function load "#!lua name=test1\nredis.register_function('f1', function() return 1 end)\nredis.register_function{function_name='f2', callback=function() return 2 end, flags={'no-writes'}, description='two'}"
        r debug reload
        assert_equal 1 [r fcall f1 0]
        assert_equal 2 [r fcall_ro f2 0]
        assert_equal {running_script {} engines {LUA {libraries_count 1 functions_count 2}}} [r function stats]
        assert_equal {{name f1 description {} flags {}} {name f2 description two flags no-writes}} \
            [lsort [lindex [r function list] 0 5]]
    }
}

start_server [list tags {scripting} args $::functions_server_args] {

    test {functions see cjson, cmsgpack, bit and struct} {
        r function load replace [fcode libs flibs {return {cjson.encode({1,2,3}), cmsgpack.unpack(cmsgpack.pack({1,2,'a'})), bit.band(7,3), struct.pack('>I', 5), bit.tohex(65535)}}]
        assert_equal [list {[1,2,3]} {1 2 a} 3 "\x00\x00\x00\x05" 0000ffff] [r fcall flibs 0]
        r function delete libs
    }

    test {functions: redis, string, math, cjson and the globals are read-only} {
        foreach {body err} {
            {redis.x = 1} {ERR user_function:3: Attempt to modify a readonly table script: fro, on @user_function:3.}
            {string.x = 1} {ERR user_function:3: Attempt to modify a readonly table script: fro, on @user_function:3.}
            {math.x = 1} {ERR user_function:3: Attempt to modify a readonly table script: fro, on @user_function:3.}
            {cjson.x = 1} {ERR user_function:3: Attempt to modify a readonly table script: fro, on @user_function:3.}
            {x = 1} {ERR user_function:3: Attempt to modify a readonly table script: fro, on @user_function:3.}
            {_G.x = 1} {ERR user_function:3: Attempt to modify a readonly table script: fro, on @user_function:3.}
            {local z = y} {ERR user_function:3: Script attempted to access nonexistent global variable 'y' script: fro, on @user_function:3.}
            {rawset(redis, 'x', 1)} {ERR Attempt to modify a readonly table script: fro, on @user_function:3.}
            {setmetatable(redis, {})} {ERR Attempt to modify a readonly table script: fro, on @user_function:3.}
        } {
            r function load replace [fcode ro fro "$body return 1"]
            assert_error $err {r fcall fro 0}
        }
        r function delete ro
    }

    test {MONITOR shows FCALL, then its commands as lua} {
        r function load replace [fcode mon fmon {redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])}]
        set rd [redis_deferring_client]
        $rd monitor
        assert_equal OK [$rd read]
        assert_equal v [r fcall fmon 1 monkey v]
        assert_error {*Function not found*} {r fcall nosuch 0}
        assert_match {*"fcall" "fmon" "1" "monkey" "v"} [$rd read]
        assert_match {*\[0 lua\] "set" "monkey" "v"} [$rd read]
        assert_match {*\[0 lua\] "get" "monkey"} [$rd read]
        assert_match {*"fcall" "nosuch" "0"} [$rd read]
        $rd close
        r function delete mon
    }

    test {library code shares local helpers and sees the globals when called} {
        r function load "#!lua name=lib1\nlocal function add1(a) return a + 1 end\nredis.register_function('f1', function(keys, args) return add1(1) end)\nredis.register_function('f2', function(keys, args) return add1(2) end)\nredis.register_function('f3', function(keys, args) return redis.call('ping') end)"
        assert_equal 2 [r fcall f1 0]
        assert_equal 3 [r fcall f2 0]
        assert_equal PONG [r fcall f3 0]
    }

    test {a failed registration reverts the whole load} {
        assert_error {*second argument to redis.register_function must be a function*} {
            r function load replace "#!lua name=lib1\nredis.register_function('f1', function() return 9 end)\nredis.register_function('f2', 'not a function')"
        }
        assert_equal 2 [r fcall f1 0]
        assert_error {ERR Function f1 already exists} {
            r function load "#!lua name=lib2\nredis.register_function('f1', function() return 1 end)"
        }
        assert_equal 2 [r fcall f1 0]
    }

    test {redis.register_function argument errors} {
        foreach {code err} {
            {redis.register_function('f1', function() return 1 end)
             redis.register_function('f1', function() return 1 end)} {Function already exists in the library}
            {redis.register_function()} {wrong number of arguments to redis.register_function}
            {redis.register_function('f1')} {calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).}
            {redis.register_function('f1', function() return 1 end, {}, 'x')} {wrong number of arguments to redis.register_function}
            {redis.register_function(nil, function() return 1 end)} {first argument to redis.register_function must be a string}
            {redis.register_function('test-test', function() return 1 end)} {Library names can only contain letters, numbers, or underscores(_) and must be at least one character long}
            {redis.register_function('', function() return 1 end)} {Library names can only contain letters, numbers, or underscores(_) and must be at least one character long}
            {redis.register_function('test\0test', function() return 1 end)} {Library names can only contain letters, numbers, or underscores(_) and must be at least one character long}
            {redis.register_function{function_name='a\0b', callback=function() return 1 end}} {Library names can only contain letters, numbers, or underscores(_) and must be at least one character long}
            {redis.register_function{function_name=function() return 1 end, callback=function() return 1 end}} {function_name argument given to redis.register_function must be a string}
            {redis.register_function{function_name='f1', callback='bad'}} {callback argument given to redis.register_function must be a function}
            {redis.register_function{function_name='f1', callback=function() return 1 end, description=function() return 1 end}} {description argument given to redis.register_function must be a string}
            {redis.register_function{function_name='f1', callback=function() return 1 end, some_unknown='unknown'}} {unknown argument given to redis.register_function}
            {redis.register_function{callback=function() return 1 end}} {redis.register_function must get a function name argument}
            {redis.register_function{function_name='f1'}} {redis.register_function must get a callback argument}
            {redis.register_function{function_name='f1', callback=function() return 1 end, flags='bad flags type'}} {flags argument to redis.register_function must be a table representing function flags}
            {redis.register_function{function_name='f1', callback=function() return 1 end, flags={function() return 1 end}}} {unknown flag given}
            {redis.register_function{function_name='f1', callback=function() return 1 end, flags={'unknown'}}} {unknown flag given}
        } {
            assert_error "ERR Error registering functions: ERR $err" [list r function load replace "#!lua name=lib2\n$code"]
        }
    }

    test {the load-time environment has only redis.register_function and redis.log} {
        foreach {code err} {
            {return math.random()} {ERR user_function:2: Script attempted to access nonexistent global variable 'math'}
            {return redis.call('ping')} {ERR user_function:2: Script attempted to access nonexistent global variable 'call'}
            {return redis.setresp(3)} {ERR user_function:2: Script attempted to access nonexistent global variable 'setresp'}
            {return redis.set_repl(redis.REPL_NONE)} {ERR user_function:2: Script attempted to access nonexistent global variable 'set_repl'}
            {error('x')} {ERR user_function:2: Script attempted to access nonexistent global variable 'error'}
            {a = 1} {ERR user_function:2: Attempt to modify a readonly table}
            {mt = getmetatable(_G)} {ERR user_function:2: Script attempted to access nonexistent global variable 'getmetatable'}
            {redis.math.random()} {ERR user_function:2: Script attempted to access nonexistent global variable 'math'}
            {local a = 1 + nil} {ERR user_function:2: attempt to perform arithmetic on a nil value}
        } {
            assert_error "ERR Error registering functions: $err" [list r function load replace "#!lua name=lib2\n$code"]
        }
        assert_equal lib2 [r function load "#!lua name=lib2\nredis.log(redis.LOG_NOTICE, 'loading', redis.REDIS_VERSION)\nredis.register_function('v', function() return redis.REDIS_VERSION end)"]
        assert_match {7.*} [r fcall v 0]
        r function delete lib2
    }

    test {the library API cannot be reached from a function, nor changed} {
        r function load replace "#!lua name=lib1\nlocal lib = redis\nlib.register_function('f1', function() lib.redis = redis return {ok='OK'} end)\nlib.register_function('f2', function() lib.register_function('f1', function() return 1 end) end)\nredis.register_function('f3', function() redis.register_function('f4', function() return 2 end) return 1 end)\nredis.register_function('f5', function() mt = getmetatable(_G) end)\nredis.register_function('f6', function() return debug end)"
        assert_error {*Attempt to modify a readonly table*} {r fcall f1 0}
        assert_error {*redis.register_function can only be called on FUNCTION LOAD command*} {r fcall f2 0}
        assert_error {*attempt to call field 'register_function' (a nil value)*} {r fcall f3 0}
        assert_error {*Attempt to modify a readonly table*} {r fcall f5 0}
        assert_error {*Script attempted to access nonexistent global variable 'debug'*} {r fcall f6 0}
        r function delete lib1
    }

    test {FUNCTION LOAD timeout} {
        assert_error {*FUNCTION LOAD timeout*} {r function load "#!lua name=lib\nlocal a = 1\nwhile 1 do a = a + 1 end"}
    }

    test {named arguments and description} {
        r function flush
        r function load "#!lua name=lib\nredis.register_function{function_name='f1', callback=function() return 'hello' end, description='some desc'}"
        r function list
    } {{library_name lib engine LUA functions {{name f1 description {some desc} flags {}}}}}

    test {flags: FCALL_RO and writes} {
        r function flush
        r function load replace [fcode_flags test f1 {return redis.call('set', 'x', '1')} {}]
        assert_error {ERR Can not execute a script with write flag using \*_ro command.} {r fcall_ro f1 0}
        r function load replace [fcode_flags test f1 {return redis.call('set', 'x', '1')} {no-writes}]
        assert_error {ERR Write commands are not allowed from read-only scripts. script: f1, on @user_function:*.} {r fcall f1 0}
        assert_error {ERR Write commands are not allowed from read-only scripts.*} {r fcall_ro f1 0}
        r set x 1
        r function load replace [fcode_flags test f1 {return redis.call('get', 'x')} {no-writes}]
        assert_equal 1 [r fcall_ro f1 0]
        # Flags are case-insensitive, listed in Redis's order.
        r function load replace [fcode_flags test f1 {return 1} {ALLOW-CROSS-SLOT-KEYS no-cluster allow-stale allow-oom no-writes}]
        assert_equal {no-writes allow-oom allow-stale no-cluster allow-cross-slot-keys} [lindex [r function list] 0 5 0 5]
    }

    test {flags: deny-oom and allow-oom under maxmemory} {
        r function load replace [fcode_flags test f1 {return redis.call('set', 'x', '1')} {}]
        r function load replace "#!lua name=test\nredis.register_function('f1', function() return redis.call('set', 'x', '1') end)\nredis.register_function{function_name='f2', callback=function() return 'hello' end, flags={'no-writes'}}\nredis.register_function{function_name='f3', callback=function() return redis.call('set', 'x', '2') end, flags={'allow-oom'}}"
        r config set maxmemory 1
        assert_error {OOM command not allowed when used memory > 'maxmemory'.} {r fcall f1 1 x}
        assert_equal hello [r fcall f2 1 k]
        assert_equal hello [r fcall_ro f2 1 k]
        assert_equal OK [r fcall f3 1 x]
        # FUNCTION LOAD and RESTORE are denyoom.
        set payload [r function dump]
        assert_error {OOM *} {r function load replace [fcode test f1 {return 1}]}
        assert_error {OOM *} {r function restore $payload REPLACE}
        r config set maxmemory 0
        assert_equal 2 [r get x]
    }

    test {flags: allow-stale on a stale replica} {
        r function load replace "#!lua name=test\nredis.register_function{function_name='f1', callback=function() return 'hello' end, flags={'no-writes'}}\nredis.register_function{function_name='f2', callback=function() return 'hello' end, flags={'allow-stale', 'no-writes'}}\nredis.register_function{function_name='f3', callback=function() return redis.call('get', 'x') end, flags={'allow-stale', 'no-writes'}}\nredis.register_function{function_name='f4', callback=function() return redis.call('info', 'server') end, flags={'allow-stale', 'no-writes'}}"
        r config set replica-serve-stale-data no
        r replicaof 127.0.0.1 1
        assert_error {MASTERDOWN *} {r fcall f1 0}
        assert_equal hello [r fcall f2 0]
        assert_error {ERR Can not execute the command on a stale replica script: f3, on @user_function:*} {r fcall f3 0}
        assert_match {*redis_version*} [r fcall f4 0]
        r replicaof no one
        r config set replica-serve-stale-data yes
    }

    test {flags: writes on a read-only replica} {
        r function load replace "#!lua name=test\nredis.register_function('w', function() return redis.call('set', 'x', '1') end)\nredis.register_function{function_name='r', callback=function() return redis.call('get', 'x') end, flags={'no-writes'}}"
        r set x 5
        r replicaof 127.0.0.1 1
        assert_error {READONLY You can't write against a read only replica.} {r fcall w 0}
        assert_error {READONLY You can't write against a read only replica.} {r function load replace [fcode test f {return 1}]}
        assert_equal 5 [r fcall r 0]
        r replicaof no one
    }
}

start_server [list tags {scripting} args $::functions_server_args] {

    test {EVAL shebang: flags and errors} {
        assert_equal 1 [r eval "#!lua\nreturn 1" 0]
        assert_equal 1 [r eval "#!lua flags=no-writes,allow-oom\nreturn 1" 0]
        assert_error {ERR Unexpected flag in script shebang: bad} {r eval "#!lua flags=bad\nreturn 1" 0}
        assert_error {ERR Unknown lua shebang option: name=x} {r eval "#!lua name=x\nreturn 1" 0}
        assert_error {ERR Unexpected engine in script shebang: #!luax} {r eval "#!luax\nreturn 1" 0}
        assert_error {ERR Invalid script shebang} {r eval "#!lua" 0}
        assert_error {ERR Write commands are not allowed from read-only scripts. script: *, on @user_script:2.} \
            {r eval "#!lua flags=no-writes\nreturn redis.call('set','x','1')" 0}
        assert_error {ERR user_script:2: attempt to perform arithmetic on a nil value script: *, on @user_script:2.} \
            {r eval "#!lua flags=no-writes\nreturn 1 + nil" 0}
        # Without no-writes a shebang script is a writer: not on EVAL_RO.
        assert_error {ERR Can not execute a script with write flag using \*_ro command.} {r eval_ro "#!lua\nreturn 1" 0}
        assert_equal 1 [r eval_ro "#!lua flags=no-writes\nreturn 1" 0]
        set sha [r script load "#!lua flags=no-writes\nreturn 2"]
        assert_equal 2 [r evalsha_ro $sha 0]
        assert_error {ERR Unexpected flag in script shebang: x} {r script load "#!lua flags=x\nreturn 2"}
    }

    test {EVAL shebang: OOM and the implicit allow-oom of a script without one} {
        r config set maxmemory 1
        # Without a shebang the script runs; its first denyoom write fails.
        assert_equal 1 [r eval {return 1} 0]
        assert_error {OOM command not allowed when used memory > 'maxmemory'.*} {r eval {return redis.call('set','x','1')} 0}
        # A shebang without allow-oom is refused as a whole.
        assert_error {OOM command not allowed when used memory > 'maxmemory'.} {r eval "#!lua\nreturn 1" 0}
        assert_equal 1 [r eval "#!lua flags=no-writes\nreturn 1" 0]
        assert_equal OK [r eval "#!lua flags=allow-oom\nreturn redis.call('set','x','1')" 0]
        r config set maxmemory 0
    }

    test {EVAL shebang: allow-stale} {
        r config set replica-serve-stale-data no
        r replicaof 127.0.0.1 1
        assert_error {MASTERDOWN *} {r eval {return 1} 0}
        assert_error {MASTERDOWN *} {r eval "#!lua flags=no-writes\nreturn 1" 0}
        assert_equal 1 [r eval "#!lua flags=no-writes,allow-stale\nreturn 1" 0]
        r replicaof no one
        r config set replica-serve-stale-data yes
    }
}

# A busy function: with several workers, some of the clients share the
# function's worker (served from its Lua hook), some do not.
if {[is_goblin]} {
    set ::fbusy_server_args {--cores 2}
} else {
    set ::fbusy_server_args {}
}
set ::fbusy_err {BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.}
set ::ebusy_err {BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.}

proc fbusy_wait {} {
    wait_for_condition 200 10 {
        [catch {r ping} e] && [string match {BUSY*} $e]
    } else {
        fail "the script never turned busy"
    }
}

start_server [list tags {scripting slow} args $::fbusy_server_args] {

    test {FUNCTION KILL and FUNCTION STATS of a busy function} {
        r function load "#!lua name=test\nredis.register_function('test', function() local a = 1 while true do a = a + 1 end end)"
        set rd [redis_deferring_client]
        $rd fcall test 0
        # The default busy-reply-threshold: 5 seconds.
        after 5500
        set st [r function stats]
        assert_match {running_script {name test command {fcall test 0} duration_ms *} engines {LUA {libraries_count 1 functions_count 1}}} $st
        assert_error $::fbusy_err {r script kill}
        assert_equal OK [r function kill]
        assert_error {*killed by user*} {$rd read}
        $rd close
        assert_equal PONG [r ping]
        assert_equal {running_script {} engines {LUA {libraries_count 1 functions_count 1}}} [r function stats]
    }

    test {A busy function: -BUSY naming FUNCTION KILL for every other client} {
        r config set busy-reply-threshold 100
        set cs {}
        for {set i 0} {$i < 6} {incr i} {lappend cs [redis_client]}
        r set x 1
        set rd [redis_deferring_client]
        $rd fcall test 0
        fbusy_wait
        foreach c $cs {
            assert_error $::fbusy_err {$c get x}
            assert_error $::fbusy_err {$c fcall test 0}
            assert_error $::fbusy_err {$c eval {return 1} 0}
            assert_error $::fbusy_err {$c function list}
            assert_equal OK [$c multi]
            assert_equal OK [$c discard]
            assert_match {running_script {name test *} engines *} [$c function stats]
            assert_error $::fbusy_err {$c script kill}
        }
        assert_equal OK [r function kill]
        assert_error {ERR Script killed by user with SCRIPT KILL... script: *} {$rd read}
        assert_error {NOTBUSY No scripts in execution right now.} {r function kill}
        foreach c $cs {
            assert_equal 1 [$c get x]
            $c close
        }
        $rd close
    }

    test {A busy EVAL script: FUNCTION KILL and FUNCTION STATS answer -BUSY naming SCRIPT KILL} {
        set rd [redis_deferring_client]
        $rd eval {while true do end} 0
        fbusy_wait
        assert_error $::ebusy_err {r function kill}
        assert_error $::ebusy_err {r function stats}
        assert_equal OK [r script kill]
        assert_error {ERR Script killed by user with SCRIPT KILL... script: *} {$rd read}
        $rd close
        assert_equal PONG [r ping]
    }

    test {A function that wrote cannot be killed} {
        r function load replace "#!lua name=test\nredis.register_function('test', function() redis.call('set', 'x', 2) local t = redis.call('time') local e = t\[1\] + 1 while tonumber(redis.call('time')\[1\]) <= e do end return 'done' end)"
        set rd [redis_deferring_client]
        $rd fcall test 0
        fbusy_wait
        assert_error {UNKILLABLE Sorry the script already executed write commands*} {r function kill}
        assert_error {UNKILLABLE Sorry the script already executed write commands*} {r script kill}
        assert_equal done [$rd read]
        $rd close
        assert_equal 2 [r get x]
        r config set busy-reply-threshold 5000
    }
}
