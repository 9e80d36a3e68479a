# Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT LOAD / EXISTS /
# FLUSH / KILL / HELP; KEYS and ARGV; redis.call and redis.pcall; the
# conversions both ways (RESP2 and RESP3); redis.error_reply, status_reply,
# sha1hex, log, setresp; pcall, math.random; the error texts of Redis 7.0;
# atomicity.

proc script_err {msg} {
    # Redis 7.0 appends " script: <sha>, on @user_script:<line>." to errors
    # raised out of a script.
    return "$msg script: *, on @user_script:*."
}

if {[is_goblin]} {
    set ::scripting_server_args {--cores 4}
} else {
    set ::scripting_server_args {}
}

start_server [list tags {scripting} args $::scripting_server_args] {

    test {EVAL returns the Lua types converted to RESP} {
        assert_equal 1 [r eval {return 1} 0]
        assert_equal hello [r eval {return 'hello'} 0]
        assert_equal 3 [r eval {return 3.99} 0]
        assert_equal -3 [r eval {return -3.99} 0]
        assert_equal {1 2 3 ciao {1 2}} [r eval {return {1,2,3,'ciao',{1,2}}} 0]
        assert_equal {1 2} [r eval {return {1,2,nil,4}} 0]
        assert_equal 1 [r eval {return true} 0]
        assert_equal {} [r eval {return false} 0]
        assert_equal "\$-1\r\n" [r rawcall eval {return false} 0]
        assert_equal "\$-1\r\n" [r rawcall eval {return nil} 0]
        assert_equal "+FOO\r\n" [r rawcall eval {return {ok='FOO'}} 0]
        assert_equal "+FOO\r\n" [r rawcall eval {return redis.status_reply('FOO')} 0]
        assert_equal "\$3\r\n3.5\r\n" [r rawcall eval {return {double=3.5}} 0]
        assert_equal "*0\r\n" [r rawcall eval {return {}} 0]
    }

    test {KEYS and ARGV} {
        assert_equal {k1 k2 a1 a2} [r eval {return {KEYS[1], KEYS[2], ARGV[1], ARGV[2]}} 2 k1 k2 a1 a2]
        assert_equal 3 [r eval {return #ARGV} 0 a b c]
        assert_equal 3 [r eval {return #KEYS} 3 a b c]
        assert_equal 0 [r eval {return #KEYS} 0]
    }

    test {numkeys errors} {
        assert_error {ERR Number of keys can't be greater than number of args} {r eval {return 1} 2 a}
        assert_error {ERR Number of keys can't be negative} {r eval {return 1} -1}
        assert_error {ERR value is not an integer or out of range} {r eval {return 1} x}
    }

    test {redis.call reads and writes the keyspace} {
        r del mykey
        assert_equal myval [r eval {redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])} 1 mykey myval]
        assert_equal myval [r get mykey]
        assert_equal 1 [r eval {return redis.call('get', KEYS[1]) == 'myval'} 1 mykey]
    }

    test {Redis replies converted to Lua} {
        r del h cnt nolist
        assert_equal number [r eval {return type(redis.call('incr','cnt'))} 0]
        assert_equal 1 [r eval {return redis.call('get','nokey') == false} 0]
        assert_equal OK [r eval {return redis.call('set','x','y')['ok']} 0]
        assert_equal 0 [r eval {return #redis.call('lrange','nolist',0,-1)} 0]
        r hset h a 1
        assert_equal {a 1} [r eval {return redis.call('hgetall','h')} 0]
        assert_equal "ERR value is not an integer or out of range" \
            [r eval {redis.call('set','s','x'); return redis.pcall('incr','s')['err']} 0]
        r set 1.5 number-key
        assert_equal number-key [r eval {return redis.call('get', 1.5)} 0]
    }

    test {redis.setresp(3) gives RESP3 types to Lua} {
        r del h zz
        r hset h a 1
        r zadd zz 1.5 m
        assert_equal 1 [r eval {redis.setresp(3); return redis.call('hgetall','h')['map']['a']} 0]
        assert_equal 1 [r eval {redis.setresp(3); return redis.call('get','nokey') == nil} 0]
        assert_equal 1 [r eval {redis.setresp(3); return redis.call('zscore','zz','m')['double'] == 1.5} 0]
        assert_error [script_err {ERR RESP version must be 2 or 3.}] {r eval {redis.setresp(4)} 0}
    }

    test {A big number with CR or LF reaches a RESP2 client with spaces} {
        assert_equal "123  123" [r eval {return {big_number='123\r\n123'}} 0]
    }

    test {RESP3 client: booleans, maps, sets, doubles} {
        set c [redis_client]
        $c hello 3
        assert_equal "%1\r\n\$1\r\na\r\n:1\r\n" [$c rawcall eval {return {map={a=1}}} 0]
        assert_equal "~1\r\n\$1\r\na\r\n" [$c rawcall eval {return {set={a=true}}} 0]
        assert_equal ",1.5\r\n" [$c rawcall eval {return {double=1.5}} 0]
        assert_equal "(12345678901234567890\r\n" [$c rawcall eval {return {big_number='12345678901234567890'}} 0]
        # A big number's line, as a status line, cannot carry CR or LF: spaces.
        assert_equal "(123  123\r\n" [$c rawcall eval {return {big_number='123\r\n123'}} 0]
        assert_equal "+a  b\r\n" [$c rawcall eval {return {ok='a\r\nb'}} 0]
        assert_equal "#t\r\n" [$c rawcall eval {redis.setresp(3); return true} 0]
        assert_equal "#f\r\n" [$c rawcall eval {redis.setresp(3); return false} 0]
        assert_equal "_\r\n" [$c rawcall eval {return false} 0]
        assert_equal ":1\r\n" [$c rawcall eval {return true} 0]
        $c close
    }

    test {Errors raised by scripts} {
        assert_error [script_err {ERR user_script:1: attempt to perform arithmetic on a nil value}] {r eval {return 1 + nil} 0}
        assert_error [script_err {ERR user_script:1: xx}] {r eval {error('xx')} 0}
        assert_error [script_err {MY custom}] {r eval {error({err='MY custom'})} 0}
        assert_error {ERR Error compiling script (new function): user_script:1: '=' expected near 'error'} {r eval {syntax error here} 0}
        assert_error {My Error} {r eval {return redis.error_reply('My Error')} 0}
        assert_error {bad thing} {r eval {return {err='bad thing'}} 0}
        # error_reply gives a code-less message the code ERR; a returned
        # table is sent as it is; CR/LF at the ends are trimmed.
        assert_equal "-ERR oneword\r\n" [r rawcall eval {return redis.error_reply('oneword')} 0]
        assert_equal "-X Y\r\n" [r rawcall eval {return redis.error_reply('-X Y')} 0]
        assert_equal "--x\r\n" [r rawcall eval {return {err='-x'}} 0]
        assert_equal "-ERR ab\r\n" [r rawcall eval {return redis.error_reply(ARGV[1])} 0 "\r\nab\n"]
        assert_equal "+a b\r\n" [r rawcall eval {return {ok=ARGV[1]}} 0 "a\nb"]
        assert_error {ERR wrong number or type of arguments} {r eval {return redis.error_reply()} 0}
    }

    test {redis.call errors} {
        assert_error [script_err {ERR Unknown Redis command called from script}] {r eval {return redis.call('nosuch')} 0}
        assert_error [script_err {ERR Please specify at least one argument for this redis lib call}] {r eval {return redis.call()} 0}
        assert_error [script_err {ERR Wrong number of args calling Redis command from script}] {r eval {return redis.call('get')} 0}
        assert_error [script_err {ERR This Redis command is not allowed from script}] {r eval {return redis.call('multi')} 0}
        assert_error [script_err {ERR This Redis command is not allowed from script}] {r eval {return redis.call('eval','return 1',0)} 0}
        assert_error [script_err {ERR Lua redis lib command arguments must be strings or integers}] {r eval {return redis.call('get', {})} 0}
        r set s x
        assert_error [script_err {ERR value is not an integer or out of range}] {r eval {return redis.call('incr','s')} 0}
        assert_error {ERR Unknown Redis command called from script} {r eval {return redis.pcall('nosuch')} 0}
        assert_error {ERR value is not an integer or out of range} {r eval {return redis.pcall('incr','s')} 0}
        assert_error {ERR Please specify at least one argument for this redis lib call} {r eval {return redis.pcall()} 0}
    }

    test {pcall hands a Redis error to the script as its message} {
        assert_equal {false {ERR Unknown Redis command called from script}} \
            [r eval {local ok, e = pcall(function() redis.call('nosuch') end) return {tostring(ok), e}} 0]
        assert_equal x [r eval {local ok, e = pcall(function() error({err='x'}) end) return e} 0]
        assert_equal {user_script:1: attempt to perform arithmetic on a nil value} \
            [r eval {local ok, e = pcall(function() local x = nil + 1 end) return e} 0]
        assert_equal {1 1 2} [r eval {return {pcall(function() return 1, 2 end)}} 0]
    }

    test {math.random is Redis's deterministic generator} {
        assert_equal 525 [r eval {math.randomseed(5) return math.random(1000)} 0]
        assert_equal {0 1} [r eval {local r = math.random() return {r < 0 and 1 or 0, r < 1 and 1 or 0}} 0]
    }

    test {Globals are protected} {
        assert_error [script_err {ERR user_script:1: Attempt to modify a readonly table}] {r eval {x = 5 return 1} 0}
        assert_error [script_err {ERR user_script:1: Script attempted to access nonexistent global variable 'y'}] {r eval {return y} 0}
    }

    test {EVAL_RO and EVALSHA_RO refuse writes} {
        r set rokey v
        assert_equal v [r eval_ro {return redis.call('get', KEYS[1])} 1 rokey]
        assert_error [script_err {ERR Write commands are not allowed from read-only scripts.}] {r eval_ro {return redis.call('set','a','b')} 0}
        set sha [r script load {return redis.call('set','a','b')}]
        assert_error [script_err {ERR Write commands are not allowed from read-only scripts.}] {r evalsha_ro $sha 0}
    }

    test {SCRIPT LOAD, EXISTS, EVALSHA and FLUSH} {
        set sha [r script load {return 'hello'}]
        assert_equal 1b936e3fe509bcbc9cd0664897bbe8fd0cac101b $sha
        assert_equal hello [r evalsha $sha 0]
        assert_equal hello [r evalsha [string toupper $sha] 0]
        assert_equal {1 0 0} [r script exists $sha ffffffffffffffffffffffffffffffffffffffff abc]
        assert_equal OK [r script flush]
        assert_equal {0} [r script exists $sha]
        assert_error {NOSCRIPT No matching script. Please use EVAL.} {r evalsha $sha 0}
        r eval {return 'hello'} 0
        assert_equal {1} [r script exists $sha]
        assert_equal OK [r script flush async]
        assert_equal OK [r script flush sync]
        assert_error {ERR SCRIPT FLUSH only support SYNC|ASYNC option} {r script flush foo}
        assert_error {ERR Error compiling script*} {r script load {x x}}
    }

    test {SCRIPT KILL, HELP} {
        assert_error {NOTBUSY No scripts in execution right now.} {r script kill}
        assert_match {SCRIPT <subcommand>*} [lindex [r script help] 0]
    }

    test {redis.sha1hex} {
        assert_equal da39a3ee5e6b4b0d3255bfef95601890afd80709 [r eval {return redis.sha1hex('')} 0]
        assert_equal a9993e364706816aba3e25717850c26c9cd0d89d [r eval {return redis.sha1hex('abc')} 0]
        assert_equal 84983e441c3bd26ebaae4aa1f95129e5e54670f1 \
            [r eval {return redis.sha1hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')} 0]
        assert_error [script_err {ERR wrong number of arguments}] {r eval {return redis.sha1hex()} 0}
    }

    test {redis.log} {
        assert_equal {} [r eval {return redis.log(redis.LOG_WARNING, 'from', 'lua')} 0]
        assert_error [script_err {ERR redis.log() requires two arguments or more.}] {r eval {return redis.log(redis.LOG_WARNING)} 0}
    }

    test {Blocking commands do not block inside scripts} {
        r del l1 l2
        assert_equal {} [r eval {return redis.call('blmpop',0,1,'l1','left')} 0]
        r rpush l1 a
        assert_equal {l1 a} [r eval {return redis.call('blmpop',0,1,'l1','left')} 0]
        assert_error [script_err {ERR This Redis command is not allowed from script}] {r eval {return redis.call('blpop','l1',0)} 0}
    }

    test {SELECT inside a script does not change the caller's database} {
        r select 9
        r del x
        r eval {redis.call('select', 1); redis.call('set', 'x', 'db1')} 0
        assert_equal 0 [r exists x]
        r select 1
        assert_equal db1 [r get x]
        r del x
        r select 9
    }

    test {EVAL inside MULTI/EXEC} {
        r del cnt
        r multi
        r eval {return redis.call('incr', KEYS[1])} 1 cnt
        r eval {return redis.call('incr', KEYS[1])} 1 cnt
        assert_equal {1 2} [r exec]
    }

    test {Scripts are atomic with respect to other clients} {
        set clients {}
        for {set i 0} {$i < 8} {incr i} {lappend clients [redis_deferring_client]}
        set script {local v = tonumber(redis.call('get', KEYS[1]) or '0'); redis.call('set', KEYS[1], v + 1); return v + 1}
        foreach c $clients {$c select 9}
        foreach c $clients {$c read}
        r select 9
        r del counter
        foreach c $clients {
            for {set j 0} {$j < 200} {incr j} {$c eval $script 1 counter}
        }
        foreach c $clients {
            for {set j 0} {$j < 200} {incr j} {$c read}
        }
        assert_equal 1600 [r get counter]
    }
}

# The scripting state's libraries and its read-only globals, as Redis 7.0.
proc script_error_of {script args} {
    # The full error text of a script, with the sha Redis appends.
    set sha [r script load $script]
    catch {r eval $script 0 {*}$args} e
    return [string map [list $sha SHA] $e]
}

start_server {tags {scripting}} {
    test {cjson, cmsgpack, struct and bit are loaded as in Redis} {
        assert_equal {{}} [r eval {return cjson.encode({})} 0]
        assert_equal {[1,2,null,4]} [r eval {return cjson.encode({1,2,nil,4})} 0]
        assert_equal {1e+20 0.1 9.007199254741e+15} [r eval {return {cjson.encode(1e20), cjson.encode(0.1), cjson.encode(2^53)}} 0]
        assert_equal {1000 1000 14} [r eval {return {cjson.encode_max_depth(), cjson.decode_max_depth(), cjson.encode_number_precision()}} 0]
        assert_equal 1 [r eval {return cjson.decode('null') == cjson.null} 0]
        assert_equal "\x93\x01\xa1\x61\xc3" [r eval {return cmsgpack.pack({1, 'a', true})} 0]
        assert_equal "\x90" [r eval {return cmsgpack.pack({})} 0]
        assert_equal "\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a" [r eval {return cmsgpack.pack(0.1)} 0]
        assert_equal {7 -1} [r eval {return {cmsgpack.unpack('\7\255')}} 0]
        assert_equal {-1 2} [r eval {return {cmsgpack.unpack_one('\1\2', 1)}} 0]
        assert_equal "\x00\x07" [r eval {return struct.pack('>I2', 7)} 0]
        assert_equal {258 3} [r eval {return {struct.unpack('<H', '\2\1')}} 0]
        assert_equal 12 [r eval {return struct.size('!4bi8')} 0]
        assert_equal {1 ffffffff 000000FF} [r eval {return {bit.band(3, 5), bit.tohex(-1), bit.tohex(255, -2147483648)}} 0]
    }

    test {cjson and cmsgpack errors are Redis's} {
        assert_equal {ERR user_script:1: Cannot serialise table: excessively sparse array script: SHA, on @user_script:1.} \
            [script_error_of {return cjson.encode({[1]=1, [20]=2})}]
        assert_equal {ERR user_script:1: Cannot serialise, excessive nesting (1001) script: SHA, on @user_script:1.} \
            [script_error_of {local t = {} t[1] = t return cjson.encode(t)}]
        assert_equal {ERR user_script:1: Found too many nested data structures (1001) at character 1001 script: SHA, on @user_script:1.} \
            [script_error_of {return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))}]
        assert_equal {ERR user_script:1: Cannot serialise number: must not be NaN or Inf script: SHA, on @user_script:1.} \
            [script_error_of {return cjson.encode(0/0)}]
        assert_equal {ERR user_script:1: Missing bytes in input. script: SHA, on @user_script:1.} \
            [script_error_of {return cmsgpack.unpack('\146\1')}]
        assert_equal {ERR user_script:1: Bad data format in input. script: SHA, on @user_script:1.} \
            [script_error_of {return cmsgpack.unpack('\196\1a')}]
        assert_equal {ERR user_script:1: bad argument #1 to 'pack' (invalid format option 'z') script: SHA, on @user_script:1.} \
            [script_error_of {return struct.pack('z')}]
        assert_equal {ERR user_script:1: bad argument #3 to 'pack' (string too short) script: SHA, on @user_script:1.} \
            [script_error_of {return struct.pack('c5', 'ab')}]
    }

    test {The globals and the library tables are read-only} {
        foreach s {{x = 1} {redis.call = 1} {string.x = 1} {cjson.encode = nil} {getmetatable('').__index = nil}} {
            assert_equal {ERR user_script:1: Attempt to modify a readonly table script: SHA, on @user_script:1.} [script_error_of $s]
        }
        foreach s {{rawset(_G, 'a', 1)} {setmetatable(_G, nil)} {table.insert(redis, 1)}} {
            assert_equal {ERR Attempt to modify a readonly table script: SHA, on @user_script:1.} [script_error_of $s]
        }
        foreach g {y debug getfenv setfenv newproxy print dofile loadfile} {
            assert_equal "ERR user_script:1: Script attempted to access nonexistent global variable '$g' script: SHA, on @user_script:1." \
                [script_error_of "return $g"]
        }
        assert_equal 35 [r eval {local n = 0 for k in pairs(_G) do n = n + 1 end return n} 0]
        assert_equal 1 [r eval {return rawget(_G, 'redis') == redis and _G._G == _G} 0]
        # A local table stays writable.
        assert_equal 1 [r eval {local t = {} t.x = 1 return t.x} 0]
    }

    test {Precompiled chunks are refused and unpack checks its range} {
        assert_equal {} [r eval {return loadstring(string.dump(function() return 1 end))} 0]
        assert_equal {ERR user_script:1: too many results to unpack script: SHA, on @user_script:1.} \
            [script_error_of {return unpack({1, 2, 3}, -2147483648, 2147483647)}]
        assert_equal {2 3} [r eval {return {unpack({1, 2, 3}, 2)}} 0]
    }

    test {redis.REDIS_VERSION, set_repl, acl_check_cmd} {
        assert_equal {7.0.15 458767} [r eval {return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}} 0]
        assert_equal {ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE. script: SHA, on @user_script:1.} \
            [script_error_of {redis.set_repl(10)}]
        assert_equal 1 [r eval {return redis.replicate_commands()} 0]
        assert_equal 1 [r eval {return redis.acl_check_cmd('get', 'x')} 0]
        assert_equal {ERR Invalid command passed to redis.acl_check_cmd() script: SHA, on @user_script:1.} \
            [script_error_of {return redis.acl_check_cmd('nosuch')}]
        r acl setuser lualimited on nopass +eval +get ~x*
        r auth lualimited pass
        assert_equal {1 {} {}} [r eval {return {redis.acl_check_cmd('get', 'x1'), redis.acl_check_cmd('get', 'y'), redis.acl_check_cmd('set', 'x1', 'v')}} 0]
        r auth default pass
        r acl deluser lualimited
    }

    test {INFO and MEMORY STATS count the cached scripts, the libraries and their Lua memory} {
        r script flush
        r function flush
        for {set j 0} {$j < 100} {incr j} {
            r script load "return $j"
        }
        r eval {return 'one more'} 0
        assert_equal 101 [s number_of_cached_scripts]
        assert_morethan [s used_memory_scripts_eval] 2000
        assert_morethan [s used_memory_vm_eval] 10000
        assert_equal [s used_memory_vm_eval] [s used_memory_lua]
        set stats [kv [r memory stats]]
        assert_equal [s used_memory_scripts_eval] [dict get $stats lua.caches]
        r function load "#!lua name=memlib\nredis.register_function('memf', function() return 1 end)"
        assert_equal 1 [s number_of_libraries]
        assert_morethan [s used_memory_functions] 0
        assert_morethan [s used_memory_vm_functions] 10000
        assert_equal [expr {[s used_memory_vm_eval] + [s used_memory_vm_functions]}] [s used_memory_vm_total]
        assert_equal [expr {[s used_memory_scripts_eval] + [s used_memory_functions]}] [s used_memory_scripts]
        assert_equal [s used_memory_functions] [dict get [kv [r memory stats]] functions.caches]
        set with_lib [s used_memory_functions]
        r script flush async
        assert_equal 0 [s number_of_cached_scripts]
        assert_equal 0 [s used_memory_scripts_eval]
        r function flush
        assert_lessthan [s used_memory_functions] $with_lib
    }

    test {A redis.call refused by the script's checks: a rejected call and one error reply} {
        r config resetstat
        r config set maxmemory 1
        assert_error {OOM command not allowed when used memory > 'maxmemory'*} {r eval {return redis.call('set','x','y')} 1 x}
        assert_match {*calls=0,*rejected_calls=1,failed_calls=0*} [getInfoProperty [r info commandstats] cmdstat_set]
        assert_match {*errorstat_OOM:count=1*} [r info errorstats]
        assert_equal 1 [s total_error_replies]
        # Caught by pcall: counted all the same; returned: not counted again.
        assert_equal 1 [r eval {local t = redis.pcall('set','x','y') return 1} 1 x]
        assert_error {OOM command not allowed*} {r eval {return redis.pcall('set','x','y')} 1 x}
        assert_match {*errorstat_OOM:count=3*} [r info errorstats]
        assert_equal 3 [s total_error_replies]
        r config set maxmemory 0
        # A command's own error reply raised out of the script: once.
        r config resetstat
        assert_error {ERR DB index is out of range*} {r eval {return redis.call('select',99)} 0}
        assert_match {*errorstat_ERR:count=1*} [r info errorstats]
        assert_equal 1 [s total_error_replies]
        assert_match {*calls=1,*rejected_calls=0,failed_calls=1*} [getInfoProperty [r info commandstats] cmdstat_eval]
    }

    test {MONITOR shows EVAL, then its commands as lua} {
        set rd [redis_deferring_client]
        $rd monitor
        assert_equal OK [$rd read]
        r eval {redis.call('set', KEYS[1], 'v') return redis.call('get', KEYS[1])} 1 monkey
        assert_match {*"eval" "redis.call('set', KEYS\[1\], 'v') return redis.call('get', KEYS\[1\])" "1" "monkey"} [$rd read]
        assert_match {*\[0 lua\] "set" "monkey" "v"} [$rd read]
        assert_match {*\[0 lua\] "get" "monkey"} [$rd read]
        $rd close
    }
}
