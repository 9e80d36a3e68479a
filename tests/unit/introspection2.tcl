# Introspection that must read as Redis 7.0's: lookups that leave a key's
# access time and LFU counter alone (Redis's LOOKUP_NOTOUCH: EXISTS, TYPE,
# TTL & co., OBJECT, SCAN's TYPE check), the keyspace hits and misses they
# count, COMMAND LIST's filters, and every command's COMMAND INFO and key
# extraction (COMMAND GETKEYS / GETKEYSANDFLAGS) against tables taken from
# Redis 7.0.15.

# Commands that read a key without touching it ({key} stands for the key).
set NOTOUCH_CMDS {
    {exists {key}} {type {key}} {ttl {key}} {pttl {key}} {expiretime {key}} {pexpiretime {key}}
    {object encoding {key}} {object refcount {key}} {object idletime {key}} {object freq {key}}
    {scan 0 type string} {scan 0 match {key} type string} {memory usage {key}} {debug object {key}}
    {randomkey} {keys *} {scan 0}
}
# Commands that touch it.
set TOUCH_CMDS {
    {get {key}} {strlen {key}} {touch {key}} {dump {key}} {getrange {key} 0 1} {append {key} x}
    {expire {key} 100} {persist {key}} {set {key} v keepttl} {getex {key}} {copy {key} {key}.copy}
}

# The CLIENT LIST line of the client called name.
proc ci2_line {name} {
    foreach line [split [r client list] "\r\n"] {
        if {[string match "* name=$name *" $line]} {return $line}
    }
    return ""
}

proc ntc_cmd {tpl key} {
    string map [list "{key}" $key] $tpl
}

# --- COMMAND INFO of every command: name arity flags first-key last-key
# step ACL-categories tips, as Redis 7.0.15 answers (subcommands too) ---
proc introspection_command_table {} {
    return {
        {acl -2 {} 0 0 0 @slow {}}
        {acl|cat -2 {noscript loading stale} 0 0 0 @slow {}}
        {acl|deluser -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|dryrun -4 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|genpass -2 {noscript loading stale} 0 0 0 @slow {}}
        {acl|getuser 3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|help 2 {loading stale} 0 0 0 @slow {}}
        {acl|list 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|load 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|log -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|save 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|setuser -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|users 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|whoami 2 {noscript loading stale} 0 0 0 @slow {}}
        {acl|cat -2 {noscript loading stale} 0 0 0 @slow {}}
        {acl|deluser -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|dryrun -4 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|genpass -2 {noscript loading stale} 0 0 0 @slow {}}
        {acl|getuser 3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|help 2 {loading stale} 0 0 0 @slow {}}
        {acl|list 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|load 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|log -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|save 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|setuser -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|users 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {acl|whoami 2 {noscript loading stale} 0 0 0 @slow {}}
        {append 3 {write denyoom fast} 1 1 1 {@write @string @fast} {}}
        {asking 1 fast 0 0 0 {@fast @connection} {}}
        {auth -2 {noscript loading stale fast no_auth allow_busy} 0 0 0 {@fast @connection} {}}
        {bgrewriteaof 1 {admin noscript no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {bgsave -1 {admin noscript no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {bitcount -2 readonly 1 1 1 {@read @bitmap @slow} {}}
        {bitfield -2 {write denyoom} 1 1 1 {@write @bitmap @slow} {}}
        {bitfield_ro -2 {readonly fast} 1 1 1 {@read @bitmap @fast} {}}
        {bitop -4 {write denyoom} 2 -1 1 {@write @bitmap @slow} {}}
        {bitpos -3 readonly 1 1 1 {@read @bitmap @slow} {}}
        {blmove 6 {write denyoom noscript blocking} 1 2 1 {@write @list @slow @blocking} {}}
        {blmpop -5 {write blocking movablekeys} 0 0 0 {@write @list @slow @blocking} {}}
        {blpop -3 {write noscript blocking} 1 -2 1 {@write @list @slow @blocking} {}}
        {brpop -3 {write noscript blocking} 1 -2 1 {@write @list @slow @blocking} {}}
        {brpoplpush 4 {write denyoom noscript blocking} 1 2 1 {@write @list @slow @blocking} {}}
        {bzmpop -5 {write blocking movablekeys} 0 0 0 {@write @sortedset @slow @blocking} {}}
        {bzpopmax -3 {write noscript blocking fast} 1 -2 1 {@write @sortedset @fast @blocking} {}}
        {bzpopmin -3 {write noscript blocking fast} 1 -2 1 {@write @sortedset @fast @blocking} {}}
        {client -2 {} 0 0 0 @slow {}}
        {client|caching 3 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|getname 2 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|getredir 2 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|help 2 {loading stale} 0 0 0 {@slow @connection} {}}
        {client|id 2 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|info 2 {noscript loading stale} 0 0 0 {@slow @connection} nondeterministic_output}
        {client|kill -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|list -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} nondeterministic_output}
        {client|no-evict 3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|pause -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|reply 3 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|setname 3 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|tracking -3 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|trackinginfo 2 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|unblock -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|unpause 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|caching 3 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|getname 2 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|getredir 2 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|help 2 {loading stale} 0 0 0 {@slow @connection} {}}
        {client|id 2 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|info 2 {noscript loading stale} 0 0 0 {@slow @connection} nondeterministic_output}
        {client|kill -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|list -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} nondeterministic_output}
        {client|no-evict 3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|pause -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|reply 3 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|setname 3 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|tracking -3 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|trackinginfo 2 {noscript loading stale} 0 0 0 {@slow @connection} {}}
        {client|unblock -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {client|unpause 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous @connection} {}}
        {cluster -2 {} 0 0 0 @slow {}}
        {cluster|addslots -3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|addslotsrange -4 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|bumpepoch 2 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} nondeterministic_output}
        {cluster|count-failure-reports 3 {admin stale} 0 0 0 {@admin @slow @dangerous} nondeterministic_output}
        {cluster|countkeysinslot 3 stale 0 0 0 @slow {}}
        {cluster|delslots -3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|delslotsrange -4 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|failover -2 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|flushslots 2 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|forget 3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|getkeysinslot 4 stale 0 0 0 @slow nondeterministic_output}
        {cluster|help 2 {loading stale} 0 0 0 @slow {}}
        {cluster|info 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|keyslot 3 stale 0 0 0 @slow {}}
        {cluster|links 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|meet -4 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|myid 2 stale 0 0 0 @slow {}}
        {cluster|nodes 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|replicas 3 {admin stale} 0 0 0 {@admin @slow @dangerous} nondeterministic_output}
        {cluster|replicate 3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|reset -2 {admin noscript stale} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|saveconfig 2 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|set-config-epoch 3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|setslot -4 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|shards 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|slaves 3 {admin stale} 0 0 0 {@admin @slow @dangerous} nondeterministic_output}
        {cluster|slots 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|addslots -3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|addslotsrange -4 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|bumpepoch 2 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} nondeterministic_output}
        {cluster|count-failure-reports 3 {admin stale} 0 0 0 {@admin @slow @dangerous} nondeterministic_output}
        {cluster|countkeysinslot 3 stale 0 0 0 @slow {}}
        {cluster|delslots -3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|delslotsrange -4 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|failover -2 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|flushslots 2 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|forget 3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|getkeysinslot 4 stale 0 0 0 @slow nondeterministic_output}
        {cluster|help 2 {loading stale} 0 0 0 @slow {}}
        {cluster|info 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|keyslot 3 stale 0 0 0 @slow {}}
        {cluster|links 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|meet -4 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|myid 2 stale 0 0 0 @slow {}}
        {cluster|nodes 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|replicas 3 {admin stale} 0 0 0 {@admin @slow @dangerous} nondeterministic_output}
        {cluster|replicate 3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|reset -2 {admin noscript stale} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|saveconfig 2 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|set-config-epoch 3 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|setslot -4 {admin stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {cluster|shards 2 stale 0 0 0 @slow nondeterministic_output}
        {cluster|slaves 3 {admin stale} 0 0 0 {@admin @slow @dangerous} nondeterministic_output}
        {cluster|slots 2 stale 0 0 0 @slow nondeterministic_output}
        {command -1 {loading stale} 0 0 0 {@slow @connection} nondeterministic_output_order}
        {command|count 2 {loading stale} 0 0 0 {@slow @connection} {}}
        {command|docs -2 {loading stale} 0 0 0 {@slow @connection} nondeterministic_output_order}
        {command|getkeys -4 {loading stale} 0 0 0 {@slow @connection} {}}
        {command|getkeysandflags -4 {loading stale} 0 0 0 {@slow @connection} {}}
        {command|help 2 {loading stale} 0 0 0 {@slow @connection} {}}
        {command|info -2 {loading stale} 0 0 0 {@slow @connection} nondeterministic_output_order}
        {command|list -2 {loading stale} 0 0 0 {@slow @connection} nondeterministic_output_order}
        {command|count 2 {loading stale} 0 0 0 {@slow @connection} {}}
        {command|docs -2 {loading stale} 0 0 0 {@slow @connection} nondeterministic_output_order}
        {command|getkeys -4 {loading stale} 0 0 0 {@slow @connection} {}}
        {command|getkeysandflags -4 {loading stale} 0 0 0 {@slow @connection} {}}
        {command|help 2 {loading stale} 0 0 0 {@slow @connection} {}}
        {command|info -2 {loading stale} 0 0 0 {@slow @connection} nondeterministic_output_order}
        {command|list -2 {loading stale} 0 0 0 {@slow @connection} nondeterministic_output_order}
        {config -2 {} 0 0 0 @slow {}}
        {config|get -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {config|help 2 {loading stale} 0 0 0 @slow {}}
        {config|resetstat 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {config|rewrite 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {config|set -4 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes response_policy:all_succeeded}}
        {config|get -3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {config|help 2 {loading stale} 0 0 0 @slow {}}
        {config|resetstat 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {config|rewrite 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {config|set -4 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes response_policy:all_succeeded}}
        {copy -3 {write denyoom} 1 2 1 {@keyspace @write @slow} {}}
        {dbsize 1 {readonly fast} 0 0 0 {@keyspace @read @fast} {request_policy:all_shards response_policy:agg_sum}}
        {debug -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {decr 2 {write denyoom fast} 1 1 1 {@write @string @fast} {}}
        {decrby 3 {write denyoom fast} 1 1 1 {@write @string @fast} {}}
        {del -2 write 1 -1 1 {@keyspace @write @slow} {request_policy:multi_shard response_policy:agg_sum}}
        {discard 1 {noscript loading stale fast allow_busy} 0 0 0 {@fast @transaction} {}}
        {dump 2 readonly 1 1 1 {@keyspace @read @slow} nondeterministic_output}
        {echo 2 {loading stale fast} 0 0 0 {@fast @connection} {}}
        {eval -3 {noscript stale skip_monitor no_mandatory_keys movablekeys} 0 0 0 {@slow @scripting} {}}
        {eval_ro -3 {readonly noscript stale skip_monitor no_mandatory_keys movablekeys} 0 0 0 {@slow @scripting} {}}
        {evalsha -3 {noscript stale skip_monitor no_mandatory_keys movablekeys} 0 0 0 {@slow @scripting} {}}
        {evalsha_ro -3 {readonly noscript stale skip_monitor no_mandatory_keys movablekeys} 0 0 0 {@slow @scripting} {}}
        {exec 1 {noscript loading stale skip_slowlog} 0 0 0 {@slow @transaction} {}}
        {exists -2 {readonly fast} 1 -1 1 {@keyspace @read @fast} {request_policy:multi_shard response_policy:agg_sum}}
        {expire -3 {write fast} 1 1 1 {@keyspace @write @fast} {}}
        {expireat -3 {write fast} 1 1 1 {@keyspace @write @fast} {}}
        {expiretime 2 {readonly fast} 1 1 1 {@keyspace @read @fast} {}}
        {failover -1 {admin noscript stale} 0 0 0 {@admin @slow @dangerous} {}}
        {fcall -3 {noscript stale skip_monitor no_mandatory_keys movablekeys} 0 0 0 {@slow @scripting} {}}
        {fcall_ro -3 {readonly noscript stale skip_monitor no_mandatory_keys movablekeys} 0 0 0 {@slow @scripting} {}}
        {flushall -1 write 0 0 0 {@keyspace @write @slow @dangerous} {request_policy:all_shards response_policy:all_succeeded}}
        {flushdb -1 write 0 0 0 {@keyspace @write @slow @dangerous} {request_policy:all_shards response_policy:all_succeeded}}
        {function -2 {} 0 0 0 @slow {}}
        {function|delete 3 {write noscript} 0 0 0 {@write @slow @scripting} {request_policy:all_shards response_policy:all_succeeded}}
        {function|dump 2 noscript 0 0 0 {@slow @scripting} {}}
        {function|flush -2 {write noscript} 0 0 0 {@write @slow @scripting} {request_policy:all_shards response_policy:all_succeeded}}
        {function|help 2 {loading stale} 0 0 0 {@slow @scripting} {}}
        {function|kill 2 {noscript allow_busy} 0 0 0 {@slow @scripting} {request_policy:all_shards response_policy:one_succeeded}}
        {function|list -2 noscript 0 0 0 {@slow @scripting} nondeterministic_output_order}
        {function|load -3 {write denyoom noscript} 0 0 0 {@write @slow @scripting} {request_policy:all_shards response_policy:all_succeeded}}
        {function|restore -3 {write denyoom noscript} 0 0 0 {@write @slow @scripting} {request_policy:all_shards response_policy:all_succeeded}}
        {function|stats 2 {noscript allow_busy} 0 0 0 {@slow @scripting} {nondeterministic_output request_policy:all_shards response_policy:special}}
        {function|delete 3 {write noscript} 0 0 0 {@write @slow @scripting} {request_policy:all_shards response_policy:all_succeeded}}
        {function|dump 2 noscript 0 0 0 {@slow @scripting} {}}
        {function|flush -2 {write noscript} 0 0 0 {@write @slow @scripting} {request_policy:all_shards response_policy:all_succeeded}}
        {function|help 2 {loading stale} 0 0 0 {@slow @scripting} {}}
        {function|kill 2 {noscript allow_busy} 0 0 0 {@slow @scripting} {request_policy:all_shards response_policy:one_succeeded}}
        {function|list -2 noscript 0 0 0 {@slow @scripting} nondeterministic_output_order}
        {function|load -3 {write denyoom noscript} 0 0 0 {@write @slow @scripting} {request_policy:all_shards response_policy:all_succeeded}}
        {function|restore -3 {write denyoom noscript} 0 0 0 {@write @slow @scripting} {request_policy:all_shards response_policy:all_succeeded}}
        {function|stats 2 {noscript allow_busy} 0 0 0 {@slow @scripting} {nondeterministic_output request_policy:all_shards response_policy:special}}
        {geoadd -5 {write denyoom} 1 1 1 {@write @geo @slow} {}}
        {geodist -4 readonly 1 1 1 {@read @geo @slow} {}}
        {geohash -2 readonly 1 1 1 {@read @geo @slow} {}}
        {geopos -2 readonly 1 1 1 {@read @geo @slow} {}}
        {georadius -6 {write denyoom movablekeys} 1 1 1 {@write @geo @slow} {}}
        {georadius_ro -6 readonly 1 1 1 {@read @geo @slow} {}}
        {georadiusbymember -5 {write denyoom movablekeys} 1 1 1 {@write @geo @slow} {}}
        {georadiusbymember_ro -5 readonly 1 1 1 {@read @geo @slow} {}}
        {geosearch -7 readonly 1 1 1 {@read @geo @slow} {}}
        {geosearchstore -8 {write denyoom} 1 2 1 {@write @geo @slow} {}}
        {get 2 {readonly fast} 1 1 1 {@read @string @fast} {}}
        {getbit 3 {readonly fast} 1 1 1 {@read @bitmap @fast} {}}
        {getdel 2 {write fast} 1 1 1 {@write @string @fast} {}}
        {getex -2 {write fast} 1 1 1 {@write @string @fast} {}}
        {getrange 4 readonly 1 1 1 {@read @string @slow} {}}
        {getset 3 {write denyoom fast} 1 1 1 {@write @string @fast} {}}
        {hdel -3 {write fast} 1 1 1 {@write @hash @fast} {}}
        {hello -1 {noscript loading stale fast no_auth allow_busy} 0 0 0 {@fast @connection} {}}
        {hexists 3 {readonly fast} 1 1 1 {@read @hash @fast} {}}
        {hget 3 {readonly fast} 1 1 1 {@read @hash @fast} {}}
        {hgetall 2 readonly 1 1 1 {@read @hash @slow} nondeterministic_output_order}
        {hincrby 4 {write denyoom fast} 1 1 1 {@write @hash @fast} {}}
        {hincrbyfloat 4 {write denyoom fast} 1 1 1 {@write @hash @fast} {}}
        {hkeys 2 readonly 1 1 1 {@read @hash @slow} nondeterministic_output_order}
        {hlen 2 {readonly fast} 1 1 1 {@read @hash @fast} {}}
        {hmget -3 {readonly fast} 1 1 1 {@read @hash @fast} {}}
        {hmset -4 {write denyoom fast} 1 1 1 {@write @hash @fast} {}}
        {hrandfield -2 readonly 1 1 1 {@read @hash @slow} nondeterministic_output}
        {hscan -3 readonly 1 1 1 {@read @hash @slow} nondeterministic_output}
        {hset -4 {write denyoom fast} 1 1 1 {@write @hash @fast} {}}
        {hsetnx 4 {write denyoom fast} 1 1 1 {@write @hash @fast} {}}
        {hstrlen 3 {readonly fast} 1 1 1 {@read @hash @fast} {}}
        {hvals 2 readonly 1 1 1 {@read @hash @slow} nondeterministic_output_order}
        {incr 2 {write denyoom fast} 1 1 1 {@write @string @fast} {}}
        {incrby 3 {write denyoom fast} 1 1 1 {@write @string @fast} {}}
        {incrbyfloat 3 {write denyoom fast} 1 1 1 {@write @string @fast} {}}
        {info -1 {loading stale} 0 0 0 {@slow @dangerous} {nondeterministic_output request_policy:all_shards response_policy:special}}
        {keys 2 readonly 0 0 0 {@keyspace @read @slow @dangerous} {request_policy:all_shards nondeterministic_output_order}}
        {lastsave 1 {loading stale fast} 0 0 0 {@admin @fast @dangerous} nondeterministic_output}
        {latency -2 {} 0 0 0 @slow {}}
        {latency|doctor 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|graph 3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|help 2 {loading stale} 0 0 0 @slow {}}
        {latency|histogram -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|history 3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|latest 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|reset -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes response_policy:all_succeeded}}
        {latency|doctor 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|graph 3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|help 2 {loading stale} 0 0 0 @slow {}}
        {latency|histogram -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|history 3 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|latest 2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {nondeterministic_output request_policy:all_nodes response_policy:special}}
        {latency|reset -2 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes response_policy:all_succeeded}}
        {lcs -3 readonly 1 2 1 {@read @string @slow} {}}
        {lindex 3 readonly 1 1 1 {@read @list @slow} {}}
        {linsert 5 {write denyoom} 1 1 1 {@write @list @slow} {}}
        {llen 2 {readonly fast} 1 1 1 {@read @list @fast} {}}
        {lmove 5 {write denyoom} 1 2 1 {@write @list @slow} {}}
        {lmpop -4 {write movablekeys} 0 0 0 {@write @list @slow} {}}
        {lolwut -1 {readonly fast} 0 0 0 {@read @fast} {}}
        {lpop -2 {write fast} 1 1 1 {@write @list @fast} {}}
        {lpos -3 readonly 1 1 1 {@read @list @slow} {}}
        {lpush -3 {write denyoom fast} 1 1 1 {@write @list @fast} {}}
        {lpushx -3 {write denyoom fast} 1 1 1 {@write @list @fast} {}}
        {lrange 4 readonly 1 1 1 {@read @list @slow} {}}
        {lrem 4 write 1 1 1 {@write @list @slow} {}}
        {lset 4 {write denyoom} 1 1 1 {@write @list @slow} {}}
        {ltrim 4 write 1 1 1 {@write @list @slow} {}}
        {memory -2 {} 0 0 0 @slow {}}
        {memory|doctor 2 {} 0 0 0 @slow {nondeterministic_output request_policy:all_shards response_policy:special}}
        {memory|help 2 {loading stale} 0 0 0 @slow {}}
        {memory|malloc-stats 2 {} 0 0 0 @slow {nondeterministic_output request_policy:all_shards response_policy:special}}
        {memory|purge 2 {} 0 0 0 @slow {request_policy:all_shards response_policy:all_succeeded}}
        {memory|stats 2 {} 0 0 0 @slow {nondeterministic_output request_policy:all_shards response_policy:special}}
        {memory|usage -3 readonly 2 2 1 {@read @slow} {}}
        {memory|doctor 2 {} 0 0 0 @slow {nondeterministic_output request_policy:all_shards response_policy:special}}
        {memory|help 2 {loading stale} 0 0 0 @slow {}}
        {memory|malloc-stats 2 {} 0 0 0 @slow {nondeterministic_output request_policy:all_shards response_policy:special}}
        {memory|purge 2 {} 0 0 0 @slow {request_policy:all_shards response_policy:all_succeeded}}
        {memory|stats 2 {} 0 0 0 @slow {nondeterministic_output request_policy:all_shards response_policy:special}}
        {memory|usage -3 readonly 2 2 1 {@read @slow} {}}
        {mget -2 {readonly fast} 1 -1 1 {@read @string @fast} request_policy:multi_shard}
        {migrate -6 {write movablekeys} 3 3 1 {@keyspace @write @slow @dangerous} nondeterministic_output}
        {module -2 {} 0 0 0 @slow {}}
        {module|help 2 {loading stale} 0 0 0 @slow {}}
        {module|list 2 {admin noscript} 0 0 0 {@admin @slow @dangerous} nondeterministic_output_order}
        {module|load -3 {admin noscript no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {module|loadex -3 {admin noscript no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {module|unload 3 {admin noscript no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {module|help 2 {loading stale} 0 0 0 @slow {}}
        {module|list 2 {admin noscript} 0 0 0 {@admin @slow @dangerous} nondeterministic_output_order}
        {module|load -3 {admin noscript no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {module|loadex -3 {admin noscript no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {module|unload 3 {admin noscript no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {monitor 1 {admin noscript loading stale} 0 0 0 {@admin @slow @dangerous} {}}
        {move 3 {write fast} 1 1 1 {@keyspace @write @fast} {}}
        {mset -3 {write denyoom} 1 -1 2 {@write @string @slow} {request_policy:multi_shard response_policy:all_succeeded}}
        {msetnx -3 {write denyoom} 1 -1 2 {@write @string @slow} {request_policy:multi_shard response_policy:agg_min}}
        {multi 1 {noscript loading stale fast allow_busy} 0 0 0 {@fast @transaction} {}}
        {object -2 {} 0 0 0 @slow {}}
        {object|encoding 3 readonly 2 2 1 {@keyspace @read @slow} nondeterministic_output}
        {object|freq 3 readonly 2 2 1 {@keyspace @read @slow} nondeterministic_output}
        {object|help 2 {loading stale} 0 0 0 {@keyspace @slow} {}}
        {object|idletime 3 readonly 2 2 1 {@keyspace @read @slow} nondeterministic_output}
        {object|refcount 3 readonly 2 2 1 {@keyspace @read @slow} nondeterministic_output}
        {object|encoding 3 readonly 2 2 1 {@keyspace @read @slow} nondeterministic_output}
        {object|freq 3 readonly 2 2 1 {@keyspace @read @slow} nondeterministic_output}
        {object|help 2 {loading stale} 0 0 0 {@keyspace @slow} {}}
        {object|idletime 3 readonly 2 2 1 {@keyspace @read @slow} nondeterministic_output}
        {object|refcount 3 readonly 2 2 1 {@keyspace @read @slow} nondeterministic_output}
        {persist 2 {write fast} 1 1 1 {@keyspace @write @fast} {}}
        {pexpire -3 {write fast} 1 1 1 {@keyspace @write @fast} {}}
        {pexpireat -3 {write fast} 1 1 1 {@keyspace @write @fast} {}}
        {pexpiretime 2 {readonly fast} 1 1 1 {@keyspace @read @fast} {}}
        {pfadd -2 {write denyoom fast} 1 1 1 {@write @hyperloglog @fast} {}}
        {pfcount -2 readonly 1 -1 1 {@read @hyperloglog @slow} {}}
        {pfdebug 3 {write denyoom admin} 2 2 1 {@write @hyperloglog @admin @slow @dangerous} {}}
        {pfmerge -2 {write denyoom} 1 -1 1 {@write @hyperloglog @slow} {}}
        {pfselftest 1 admin 0 0 0 {@hyperloglog @admin @slow @dangerous} {}}
        {ping -1 fast 0 0 0 {@fast @connection} {request_policy:all_shards response_policy:all_succeeded}}
        {psetex 4 {write denyoom} 1 1 1 {@write @string @slow} {}}
        {psubscribe -2 {pubsub noscript loading stale} 0 0 0 {@pubsub @slow} {}}
        {psync -3 {admin noscript no_async_loading no_multi} 0 0 0 {@admin @slow @dangerous} {}}
        {pttl 2 {readonly fast} 1 1 1 {@keyspace @read @fast} nondeterministic_output}
        {publish 3 {pubsub loading stale fast} 0 0 0 {@pubsub @fast} {}}
        {pubsub -2 {} 0 0 0 @slow {}}
        {pubsub|channels -2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|help 2 {loading stale} 0 0 0 @slow {}}
        {pubsub|numpat 2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|numsub -2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|shardchannels -2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|shardnumsub -2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|channels -2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|help 2 {loading stale} 0 0 0 @slow {}}
        {pubsub|numpat 2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|numsub -2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|shardchannels -2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {pubsub|shardnumsub -2 {pubsub loading stale} 0 0 0 {@pubsub @slow} {}}
        {punsubscribe -1 {pubsub noscript loading stale} 0 0 0 {@pubsub @slow} {}}
        {quit -1 {noscript loading stale fast no_auth allow_busy} 0 0 0 {@fast @connection} {}}
        {randomkey 1 readonly 0 0 0 {@keyspace @read @slow} {request_policy:all_shards nondeterministic_output}}
        {readonly 1 {loading stale fast} 0 0 0 {@fast @connection} {}}
        {readwrite 1 {loading stale fast} 0 0 0 {@fast @connection} {}}
        {rename 3 write 1 2 1 {@keyspace @write @slow} {}}
        {renamenx 3 {write fast} 1 2 1 {@keyspace @write @fast} {}}
        {replconf -1 {admin noscript loading stale allow_busy} 0 0 0 {@admin @slow @dangerous} {}}
        {replicaof 3 {admin noscript stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {reset 1 {noscript loading stale fast no_auth allow_busy} 0 0 0 {@fast @connection} {}}
        {restore -4 {write denyoom} 1 1 1 {@keyspace @write @slow @dangerous} {}}
        {restore-asking -4 {write denyoom asking} 1 1 1 {@keyspace @write @slow @dangerous} {}}
        {role 1 {noscript loading stale fast} 0 0 0 {@admin @fast @dangerous} {}}
        {rpop -2 {write fast} 1 1 1 {@write @list @fast} {}}
        {rpoplpush 3 {write denyoom} 1 2 1 {@write @list @slow} {}}
        {rpush -3 {write denyoom fast} 1 1 1 {@write @list @fast} {}}
        {rpushx -3 {write denyoom fast} 1 1 1 {@write @list @fast} {}}
        {sadd -3 {write denyoom fast} 1 1 1 {@write @set @fast} {}}
        {save 1 {admin noscript no_async_loading no_multi} 0 0 0 {@admin @slow @dangerous} {}}
        {scan -2 readonly 0 0 0 {@keyspace @read @slow} {nondeterministic_output request_policy:special}}
        {scard 2 {readonly fast} 1 1 1 {@read @set @fast} {}}
        {script -2 {} 0 0 0 @slow {}}
        {script|debug 3 noscript 0 0 0 {@slow @scripting} {}}
        {script|exists -3 noscript 0 0 0 {@slow @scripting} {request_policy:all_shards response_policy:agg_logical_and}}
        {script|flush -2 noscript 0 0 0 {@slow @scripting} {request_policy:all_nodes response_policy:all_succeeded}}
        {script|help 2 {loading stale} 0 0 0 {@slow @scripting} {}}
        {script|kill 2 {noscript allow_busy} 0 0 0 {@slow @scripting} {request_policy:all_shards response_policy:one_succeeded}}
        {script|load 3 {noscript stale} 0 0 0 {@slow @scripting} {request_policy:all_nodes response_policy:all_succeeded}}
        {script|debug 3 noscript 0 0 0 {@slow @scripting} {}}
        {script|exists -3 noscript 0 0 0 {@slow @scripting} {request_policy:all_shards response_policy:agg_logical_and}}
        {script|flush -2 noscript 0 0 0 {@slow @scripting} {request_policy:all_nodes response_policy:all_succeeded}}
        {script|help 2 {loading stale} 0 0 0 {@slow @scripting} {}}
        {script|kill 2 {noscript allow_busy} 0 0 0 {@slow @scripting} {request_policy:all_shards response_policy:one_succeeded}}
        {script|load 3 {noscript stale} 0 0 0 {@slow @scripting} {request_policy:all_nodes response_policy:all_succeeded}}
        {sdiff -2 readonly 1 -1 1 {@read @set @slow} nondeterministic_output_order}
        {sdiffstore -3 {write denyoom} 1 -1 1 {@write @set @slow} {}}
        {select 2 {loading stale fast} 0 0 0 {@fast @connection} {}}
        {set -3 {write denyoom} 1 1 1 {@write @string @slow} {}}
        {setbit 4 {write denyoom} 1 1 1 {@write @bitmap @slow} {}}
        {setex 4 {write denyoom} 1 1 1 {@write @string @slow} {}}
        {setnx 3 {write denyoom fast} 1 1 1 {@write @string @fast} {}}
        {setrange 4 {write denyoom} 1 1 1 {@write @string @slow} {}}
        {shutdown -1 {admin noscript loading stale no_multi allow_busy} 0 0 0 {@admin @slow @dangerous} {}}
        {sinter -2 readonly 1 -1 1 {@read @set @slow} nondeterministic_output_order}
        {sintercard -3 {readonly movablekeys} 0 0 0 {@read @set @slow} {}}
        {sinterstore -3 {write denyoom} 1 -1 1 {@write @set @slow} {}}
        {sismember 3 {readonly fast} 1 1 1 {@read @set @fast} {}}
        {slaveof 3 {admin noscript stale no_async_loading} 0 0 0 {@admin @slow @dangerous} {}}
        {slowlog -2 {} 0 0 0 @slow {}}
        {slowlog|get -2 {admin loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes nondeterministic_output}}
        {slowlog|help 2 {loading stale} 0 0 0 @slow {}}
        {slowlog|len 2 {admin loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes response_policy:agg_sum nondeterministic_output}}
        {slowlog|reset 2 {admin loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes response_policy:all_succeeded}}
        {slowlog|get -2 {admin loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes nondeterministic_output}}
        {slowlog|help 2 {loading stale} 0 0 0 @slow {}}
        {slowlog|len 2 {admin loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes response_policy:agg_sum nondeterministic_output}}
        {slowlog|reset 2 {admin loading stale} 0 0 0 {@admin @slow @dangerous} {request_policy:all_nodes response_policy:all_succeeded}}
        {smembers 2 readonly 1 1 1 {@read @set @slow} nondeterministic_output_order}
        {smismember -3 {readonly fast} 1 1 1 {@read @set @fast} {}}
        {smove 4 {write fast} 1 2 1 {@write @set @fast} {}}
        {sort -2 {write denyoom movablekeys} 1 1 1 {@write @set @sortedset @list @slow @dangerous} {}}
        {sort_ro -2 {readonly movablekeys} 1 1 1 {@read @set @sortedset @list @slow @dangerous} {}}
        {spop -2 {write fast} 1 1 1 {@write @set @fast} nondeterministic_output}
        {spublish 3 {pubsub loading stale fast} 1 1 1 {@pubsub @fast} {}}
        {srandmember -2 readonly 1 1 1 {@read @set @slow} nondeterministic_output}
        {srem -3 {write fast} 1 1 1 {@write @set @fast} {}}
        {sscan -3 readonly 1 1 1 {@read @set @slow} nondeterministic_output}
        {ssubscribe -2 {pubsub noscript loading stale} 1 -1 1 {@pubsub @slow} {}}
        {strlen 2 {readonly fast} 1 1 1 {@read @string @fast} {}}
        {subscribe -2 {pubsub noscript loading stale} 0 0 0 {@pubsub @slow} {}}
        {substr 4 readonly 1 1 1 {@read @string @slow} {}}
        {sunion -2 readonly 1 -1 1 {@read @set @slow} nondeterministic_output_order}
        {sunionstore -3 {write denyoom} 1 -1 1 {@write @set @slow} {}}
        {sunsubscribe -1 {pubsub noscript loading stale} 1 -1 1 {@pubsub @slow} {}}
        {swapdb 3 {write fast} 0 0 0 {@keyspace @write @fast @dangerous} {}}
        {sync 1 {admin noscript no_async_loading no_multi} 0 0 0 {@admin @slow @dangerous} {}}
        {time 1 {loading stale fast} 0 0 0 @fast nondeterministic_output}
        {touch -2 {readonly fast} 1 -1 1 {@keyspace @read @fast} {request_policy:multi_shard response_policy:agg_sum}}
        {ttl 2 {readonly fast} 1 1 1 {@keyspace @read @fast} nondeterministic_output}
        {type 2 {readonly fast} 1 1 1 {@keyspace @read @fast} {}}
        {unlink -2 {write fast} 1 -1 1 {@keyspace @write @fast} {request_policy:multi_shard response_policy:agg_sum}}
        {unsubscribe -1 {pubsub noscript loading stale} 0 0 0 {@pubsub @slow} {}}
        {unwatch 1 {noscript loading stale fast allow_busy} 0 0 0 {@fast @transaction} {}}
        {wait 3 noscript 0 0 0 {@slow @connection} {request_policy:all_shards response_policy:agg_min}}
        {watch -2 {noscript loading stale fast allow_busy} 1 -1 1 {@fast @transaction} {}}
        {xack -4 {write fast} 1 1 1 {@write @stream @fast} {}}
        {xadd -5 {write denyoom fast} 1 1 1 {@write @stream @fast} nondeterministic_output}
        {xautoclaim -6 {write fast} 1 1 1 {@write @stream @fast} nondeterministic_output}
        {xclaim -6 {write fast} 1 1 1 {@write @stream @fast} nondeterministic_output}
        {xdel -3 {write fast} 1 1 1 {@write @stream @fast} {}}
        {xgroup -2 {} 0 0 0 @slow {}}
        {xgroup|create -5 {write denyoom} 2 2 1 {@write @stream @slow} {}}
        {xgroup|createconsumer 5 {write denyoom} 2 2 1 {@write @stream @slow} {}}
        {xgroup|delconsumer 5 write 2 2 1 {@write @stream @slow} {}}
        {xgroup|destroy 4 write 2 2 1 {@write @stream @slow} {}}
        {xgroup|help 2 {loading stale} 0 0 0 {@stream @slow} {}}
        {xgroup|setid -5 write 2 2 1 {@write @stream @slow} {}}
        {xgroup|create -5 {write denyoom} 2 2 1 {@write @stream @slow} {}}
        {xgroup|createconsumer 5 {write denyoom} 2 2 1 {@write @stream @slow} {}}
        {xgroup|delconsumer 5 write 2 2 1 {@write @stream @slow} {}}
        {xgroup|destroy 4 write 2 2 1 {@write @stream @slow} {}}
        {xgroup|help 2 {loading stale} 0 0 0 {@stream @slow} {}}
        {xgroup|setid -5 write 2 2 1 {@write @stream @slow} {}}
        {xinfo -2 {} 0 0 0 @slow {}}
        {xinfo|consumers 4 readonly 2 2 1 {@read @stream @slow} nondeterministic_output}
        {xinfo|groups 3 readonly 2 2 1 {@read @stream @slow} {}}
        {xinfo|help 2 {loading stale} 0 0 0 {@stream @slow} {}}
        {xinfo|stream -3 readonly 2 2 1 {@read @stream @slow} {}}
        {xinfo|consumers 4 readonly 2 2 1 {@read @stream @slow} nondeterministic_output}
        {xinfo|groups 3 readonly 2 2 1 {@read @stream @slow} {}}
        {xinfo|help 2 {loading stale} 0 0 0 {@stream @slow} {}}
        {xinfo|stream -3 readonly 2 2 1 {@read @stream @slow} {}}
        {xlen 2 {readonly fast} 1 1 1 {@read @stream @fast} {}}
        {xpending -3 readonly 1 1 1 {@read @stream @slow} nondeterministic_output}
        {xrange -4 readonly 1 1 1 {@read @stream @slow} {}}
        {xread -4 {readonly blocking movablekeys} 0 0 0 {@read @stream @slow @blocking} {}}
        {xreadgroup -7 {write blocking movablekeys} 0 0 0 {@write @stream @slow @blocking} {}}
        {xrevrange -4 readonly 1 1 1 {@read @stream @slow} {}}
        {xsetid -3 {write denyoom fast} 1 1 1 {@write @stream @fast} {}}
        {xtrim -4 write 1 1 1 {@write @stream @slow} nondeterministic_output}
        {zadd -4 {write denyoom fast} 1 1 1 {@write @sortedset @fast} {}}
        {zcard 2 {readonly fast} 1 1 1 {@read @sortedset @fast} {}}
        {zcount 4 {readonly fast} 1 1 1 {@read @sortedset @fast} {}}
        {zdiff -3 {readonly movablekeys} 0 0 0 {@read @sortedset @slow} {}}
        {zdiffstore -4 {write denyoom movablekeys} 1 1 1 {@write @sortedset @slow} {}}
        {zincrby 4 {write denyoom fast} 1 1 1 {@write @sortedset @fast} {}}
        {zinter -3 {readonly movablekeys} 0 0 0 {@read @sortedset @slow} {}}
        {zintercard -3 {readonly movablekeys} 0 0 0 {@read @sortedset @slow} {}}
        {zinterstore -4 {write denyoom movablekeys} 1 1 1 {@write @sortedset @slow} {}}
        {zlexcount 4 {readonly fast} 1 1 1 {@read @sortedset @fast} {}}
        {zmpop -4 {write movablekeys} 0 0 0 {@write @sortedset @slow} {}}
        {zmscore -3 {readonly fast} 1 1 1 {@read @sortedset @fast} {}}
        {zpopmax -2 {write fast} 1 1 1 {@write @sortedset @fast} {}}
        {zpopmin -2 {write fast} 1 1 1 {@write @sortedset @fast} {}}
        {zrandmember -2 readonly 1 1 1 {@read @sortedset @slow} nondeterministic_output}
        {zrange -4 readonly 1 1 1 {@read @sortedset @slow} {}}
        {zrangebylex -4 readonly 1 1 1 {@read @sortedset @slow} {}}
        {zrangebyscore -4 readonly 1 1 1 {@read @sortedset @slow} {}}
        {zrangestore -5 {write denyoom} 1 2 1 {@write @sortedset @slow} {}}
        {zrank 3 {readonly fast} 1 1 1 {@read @sortedset @fast} {}}
        {zrem -3 {write fast} 1 1 1 {@write @sortedset @fast} {}}
        {zremrangebylex 4 write 1 1 1 {@write @sortedset @slow} {}}
        {zremrangebyrank 4 write 1 1 1 {@write @sortedset @slow} {}}
        {zremrangebyscore 4 write 1 1 1 {@write @sortedset @slow} {}}
        {zrevrange -4 readonly 1 1 1 {@read @sortedset @slow} {}}
        {zrevrangebylex -4 readonly 1 1 1 {@read @sortedset @slow} {}}
        {zrevrangebyscore -4 readonly 1 1 1 {@read @sortedset @slow} {}}
        {zrevrank 3 {readonly fast} 1 1 1 {@read @sortedset @fast} {}}
        {zscan -3 readonly 1 1 1 {@read @sortedset @slow} nondeterministic_output}
        {zscore 3 {readonly fast} 1 1 1 {@read @sortedset @fast} {}}
        {zunion -3 {readonly movablekeys} 0 0 0 {@read @sortedset @slow} {}}
        {zunionstore -4 {write denyoom movablekeys} 1 1 1 {@write @sortedset @slow} {}}
    }
}

# --- COMMAND GETKEYSANDFLAGS on a representative argument vector of each
# command with keys (built from its COMMAND DOCS arguments, optional key
# arguments included), and on the hard cases of the movable-key commands:
# argv, then {ok reply} or {err message}, as Redis 7.0.15 answers ---
proc introspection_getkeys_table {} {
    return {
    {append k1 s} {ok {{k1 {RW insert}}}}
    {bitcount k1} {ok {{k1 {RO access}}}}
    {bitfield k1} {ok {{k1 {RO access}}}}
    {bitfield_ro k1} {ok {{k1 {RO access}}}}
    {bitop s k1 k2 k3} {ok {{k1 {OW update}} {k2 {RO access}} {k3 {RO access}}}}
    {bitpos k1 1} {ok {{k1 {RO access}}}}
    {blmove k1 k2 LEFT LEFT 1} {ok {{k1 {RW access delete}} {k2 {RW insert}}}}
    {blmpop 1 2 k1 k2 LEFT} {ok {{k1 {RW access delete}} {k2 {RW access delete}}}}
    {blpop k1 k2 1} {ok {{k1 {RW access delete}} {k2 {RW access delete}}}}
    {brpop k1 k2 1} {ok {{k1 {RW access delete}} {k2 {RW access delete}}}}
    {brpoplpush k1 k2 1} {ok {{k1 {RW access delete}} {k2 {RW insert}}}}
    {bzmpop 1 2 k1 k2 MIN} {ok {{k1 {RW access delete}} {k2 {RW access delete}}}}
    {bzpopmax k1 k2 1} {ok {{k1 {RW access delete}} {k2 {RW access delete}}}}
    {bzpopmin k1 k2 1} {ok {{k1 {RW access delete}} {k2 {RW access delete}}}}
    {copy k1 k2} {ok {{k1 {RO access}} {k2 {OW update}}}}
    {decr k1} {ok {{k1 {RW access update}}}}
    {decrby k1 1} {ok {{k1 {RW access update}}}}
    {del k1 k2} {ok {{k1 {RM delete}} {k2 {RM delete}}}}
    {dump k1} {ok {{k1 {RO access}}}}
    {eval s 2 k1 k2} {ok {{k1 {RW access update}} {k2 {RW access update}}}}
    {eval_ro s 2 k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {evalsha s 2 k1 k2} {ok {{k1 {RW access update}} {k2 {RW access update}}}}
    {evalsha_ro s 2 k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {exists k1 k2} {ok {{k1 RO} {k2 RO}}}
    {expire k1 1} {ok {{k1 {RW update}}}}
    {expireat k1 1} {ok {{k1 {RW update}}}}
    {expiretime k1} {ok {{k1 {RO access}}}}
    {fcall s 2 k1 k2} {ok {{k1 {RW access update}} {k2 {RW access update}}}}
    {fcall_ro s 2 k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {geoadd k1 1 1 s 1 1 s} {ok {{k1 {RW update}}}}
    {geodist k1 s s} {ok {{k1 {RO access}}}}
    {geohash k1 s s} {ok {{k1 {RO access}}}}
    {geopos k1 s s} {ok {{k1 {RO access}}}}
    {georadius k1 1 1 1 M STORE k2 STOREDIST k3} {ok {{k1 {RO access}} {k2 {OW update}} {k3 {OW update}}}}
    {georadius_ro k1 1 1 1 M} {ok {{k1 {RO access}}}}
    {georadiusbymember k1 s 1 M STORE k2 STOREDIST k3} {ok {{k1 {RO access}} {k2 {OW update}} {k3 {OW update}}}}
    {georadiusbymember_ro k1 s 1 M} {ok {{k1 {RO access}}}}
    {geosearch k1 FROMMEMBER s BYRADIUS 1 M} {ok {{k1 {RO access}}}}
    {geosearchstore k1 k2 FROMMEMBER s BYRADIUS 1 M} {ok {{k1 {OW update}} {k2 {RO access}}}}
    {get k1} {ok {{k1 {RO access}}}}
    {getbit k1 1} {ok {{k1 {RO access}}}}
    {getdel k1} {ok {{k1 {RW access delete}}}}
    {getex k1} {ok {{k1 {RW access update}}}}
    {getrange k1 1 1} {ok {{k1 {RO access}}}}
    {getset k1 s} {ok {{k1 {RW access update}}}}
    {hdel k1 s s} {ok {{k1 {RW delete}}}}
    {hexists k1 s} {ok {{k1 RO}}}
    {hget k1 s} {ok {{k1 {RO access}}}}
    {hgetall k1} {ok {{k1 {RO access}}}}
    {hincrby k1 s 1} {ok {{k1 {RW access update}}}}
    {hincrbyfloat k1 s 1} {ok {{k1 {RW access update}}}}
    {hkeys k1} {ok {{k1 {RO access}}}}
    {hlen k1} {ok {{k1 RO}}}
    {hmget k1 s s} {ok {{k1 {RO access}}}}
    {hmset k1 s s s s} {ok {{k1 {RW update}}}}
    {hrandfield k1} {ok {{k1 {RO access}}}}
    {hscan k1 1} {ok {{k1 {RO access}}}}
    {hset k1 s s s s} {ok {{k1 {RW update}}}}
    {hsetnx k1 s s} {ok {{k1 {RW insert}}}}
    {hstrlen k1 s} {ok {{k1 RO}}}
    {hvals k1} {ok {{k1 {RO access}}}}
    {incr k1} {ok {{k1 {RW access update}}}}
    {incrby k1 1} {ok {{k1 {RW access update}}}}
    {incrbyfloat k1 1} {ok {{k1 {RW access update}}}}
    {lcs k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {lindex k1 1} {ok {{k1 {RO access}}}}
    {linsert k1 BEFORE s s} {ok {{k1 {RW insert}}}}
    {llen k1} {ok {{k1 RO}}}
    {lmove k1 k2 LEFT LEFT} {ok {{k1 {RW access delete}} {k2 {RW insert}}}}
    {lmpop 2 k1 k2 LEFT} {ok {{k1 {RW access delete}} {k2 {RW access delete}}}}
    {lpop k1} {ok {{k1 {RW access delete}}}}
    {lpos k1 s} {ok {{k1 {RO access}}}}
    {lpush k1 s s} {ok {{k1 {RW insert}}}}
    {lpushx k1 s s} {ok {{k1 {RW insert}}}}
    {lrange k1 1 1} {ok {{k1 {RO access}}}}
    {lrem k1 1 s} {ok {{k1 {RW delete}}}}
    {lset k1 1 s} {ok {{k1 {RW update}}}}
    {ltrim k1 1 1} {ok {{k1 {RW delete}}}}
    {memory usage k1} {ok {{k1 RO}}}
    {mget k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {migrate s 1 k1 1 1 KEYS k2 k3} {err {Invalid arguments specified for command}}
    {move k1 1} {ok {{k1 {RW access update}}}}
    {mset k1 s k2 s} {ok {{k1 {OW update}} {k2 {OW update}}}}
    {msetnx k1 s k2 s} {ok {{k1 {OW insert}} {k2 {OW insert}}}}
    {object encoding k1} {ok {{k1 RO}}}
    {object freq k1} {ok {{k1 RO}}}
    {object idletime k1} {ok {{k1 RO}}}
    {object refcount k1} {ok {{k1 RO}}}
    {persist k1} {ok {{k1 {RW update}}}}
    {pexpire k1 1} {ok {{k1 {RW update}}}}
    {pexpireat k1 1} {ok {{k1 {RW update}}}}
    {pexpiretime k1} {ok {{k1 {RO access}}}}
    {pfadd k1} {ok {{k1 {RW insert}}}}
    {pfcount k1 k2} {ok {{k1 {RW access}} {k2 {RW access}}}}
    {pfdebug s k1} {ok {{k1 {RW access}}}}
    {pfmerge k1 k2 k3} {ok {{k1 {RW access insert}} {k2 {RO access}} {k3 {RO access}}}}
    {psetex k1 1 s} {ok {{k1 {OW update}}}}
    {pttl k1} {ok {{k1 {RO access}}}}
    {rename k1 k2} {ok {{k1 {RW access delete}} {k2 {OW update}}}}
    {renamenx k1 k2} {ok {{k1 {RW access delete}} {k2 {OW insert}}}}
    {restore k1 1 s} {ok {{k1 {OW update}}}}
    {restore-asking k1 1 s} {ok {{k1 {OW update}}}}
    {rpop k1} {ok {{k1 {RW access delete}}}}
    {rpoplpush k1 k2} {ok {{k1 {RW access delete}} {k2 {RW insert}}}}
    {rpush k1 s s} {ok {{k1 {RW insert}}}}
    {rpushx k1 s s} {ok {{k1 {RW insert}}}}
    {sadd k1 s s} {ok {{k1 {RW insert}}}}
    {scard k1} {ok {{k1 RO}}}
    {sdiff k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {sdiffstore k1 k2 k3} {ok {{k1 {OW update}} {k2 {RO access}} {k3 {RO access}}}}
    {set k1 s} {ok {{k1 {OW update}}}}
    {setbit k1 1 1} {ok {{k1 {RW access update}}}}
    {setex k1 1 s} {ok {{k1 {OW update}}}}
    {setnx k1 s} {ok {{k1 {OW insert}}}}
    {setrange k1 1 s} {ok {{k1 {RW update}}}}
    {sinter k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {sintercard 2 k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {sinterstore k1 k2 k3} {ok {{k1 {RW update}} {k2 {RO access}} {k3 {RO access}}}}
    {sismember k1 s} {ok {{k1 RO}}}
    {smembers k1} {ok {{k1 {RO access}}}}
    {smismember k1 s s} {ok {{k1 {RO access}}}}
    {smove k1 k2 s} {ok {{k1 {RW access delete}} {k2 {RW insert}}}}
    {sort k1 STORE k2} {ok {{k1 {RO access}} {k2 {OW update}}}}
    {sort_ro k1} {ok {{k1 {RO access}}}}
    {spop k1} {ok {{k1 {RW access delete}}}}
    {spublish s s} {err {The command has no key arguments}}
    {srandmember k1} {ok {{k1 {RO access}}}}
    {srem k1 s s} {ok {{k1 {RW delete}}}}
    {sscan k1 1} {ok {{k1 {RO access}}}}
    {ssubscribe s s} {err {The command has no key arguments}}
    {strlen k1} {ok {{k1 RO}}}
    {substr k1 1 1} {ok {{k1 {RO access}}}}
    {sunion k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {sunionstore k1 k2 k3} {ok {{k1 {OW update}} {k2 {RO access}} {k3 {RO access}}}}
    sunsubscribe {err {wrong number of arguments for 'command|getkeysandflags' command}}
    {touch k1 k2} {ok {{k1 RO} {k2 RO}}}
    {ttl k1} {ok {{k1 {RO access}}}}
    {type k1} {ok {{k1 RO}}}
    {unlink k1 k2} {ok {{k1 {RM delete}} {k2 {RM delete}}}}
    {watch k1 k2} {ok {{k1 RO} {k2 RO}}}
    {xack k1 s s s} {ok {{k1 {RW update}}}}
    {xadd k1 * s s s s} {ok {{k1 {RW update}}}}
    {xautoclaim k1 s s s s} {ok {{k1 {RW delete}}}}
    {xclaim k1 s s s s s} {ok {{k1 {RW update}}}}
    {xdel k1 s s} {ok {{k1 {RW delete}}}}
    {xgroup create k1 s s} {ok {{k1 {RW insert}}}}
    {xgroup createconsumer k1 s s} {ok {{k1 {RW insert}}}}
    {xgroup delconsumer k1 s s} {ok {{k1 {RW delete}}}}
    {xgroup destroy k1 s} {ok {{k1 {RW delete}}}}
    {xgroup setid k1 s s} {ok {{k1 {RW update}}}}
    {xinfo consumers k1 s} {ok {{k1 {RO access}}}}
    {xinfo groups k1} {ok {{k1 {RO access}}}}
    {xinfo stream k1} {ok {{k1 {RO access}}}}
    {xlen k1} {ok {{k1 RO}}}
    {xpending k1 s} {ok {{k1 {RO access}}}}
    {xrange k1 s s} {ok {{k1 {RO access}}}}
    {xread STREAMS k1 k2 s s} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {xreadgroup GROUP s s STREAMS k1 k2 s s} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {xrevrange k1 s s} {ok {{k1 {RO access}}}}
    {xsetid k1 s} {ok {{k1 {RW update}}}}
    {xtrim k1 MAXLEN s} {ok {{k1 {RW delete}}}}
    {zadd k1 1 s 1 s} {ok {{k1 {RW update}}}}
    {zcard k1} {ok {{k1 RO}}}
    {zcount k1 1 1} {ok {{k1 {RO access}}}}
    {zdiff 2 k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {zdiffstore k1 3 k2 k3} {err {Invalid arguments specified for command}}
    {zincrby k1 1 s} {ok {{k1 {RW access update}}}}
    {zinter 2 k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {zintercard 2 k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {zinterstore k1 3 k2 k3} {err {Invalid arguments specified for command}}
    {zlexcount k1 s s} {ok {{k1 {RO access}}}}
    {zmpop 2 k1 k2 MIN} {ok {{k1 {RW access delete}} {k2 {RW access delete}}}}
    {zmscore k1 s s} {ok {{k1 {RO access}}}}
    {zpopmax k1} {ok {{k1 {RW access delete}}}}
    {zpopmin k1} {ok {{k1 {RW access delete}}}}
    {zrandmember k1} {ok {{k1 {RO access}}}}
    {zrange k1 s s} {ok {{k1 {RO access}}}}
    {zrangebylex k1 s s} {ok {{k1 {RO access}}}}
    {zrangebyscore k1 1 1} {ok {{k1 {RO access}}}}
    {zrangestore k1 k2 s s} {ok {{k1 {OW update}} {k2 {RO access}}}}
    {zrank k1 s} {ok {{k1 {RO access}}}}
    {zrem k1 s s} {ok {{k1 {RW delete}}}}
    {zremrangebylex k1 s s} {ok {{k1 {RW delete}}}}
    {zremrangebyrank k1 1 1} {ok {{k1 {RW delete}}}}
    {zremrangebyscore k1 1 1} {ok {{k1 {RW delete}}}}
    {zrevrange k1 1 1} {ok {{k1 {RO access}}}}
    {zrevrangebylex k1 s s} {ok {{k1 {RO access}}}}
    {zrevrangebyscore k1 1 1} {ok {{k1 {RO access}}}}
    {zrevrank k1 s} {ok {{k1 {RO access}}}}
    {zscan k1 1} {ok {{k1 {RO access}}}}
    {zscore k1 s} {ok {{k1 {RO access}}}}
    {zunion 2 k1 k2} {ok {{k1 {RO access}} {k2 {RO access}}}}
    {zunionstore k1 3 k2 k3} {err {Invalid arguments specified for command}}
    {sort k1} {ok {{k1 {RO access}}}}
    {sort k1 STORE k2} {ok {{k1 {RO access}} {k2 {OW update}}}}
    {sort k1 BY nosort GET {#} STORE k2 LIMIT 0 1} {ok {{k1 {RO access}} {k2 {OW update}}}}
    {sort k1 STORE} {ok {{k1 {RO access}}}}
    {sort_ro k1 BY x} {ok {{k1 {RO access}}}}
    {migrate h 1 {} 0 5 KEYS a b} {ok {{a {RW access delete}} {b {RW access delete}}}}
    {migrate h 1 k 0 5} {ok {{k {RW access delete}}}}
    {migrate h 1 k 0 5 COPY REPLACE AUTH pw KEYS a} {err {Invalid arguments specified for command}}
    {migrate h 1 {} 0 5 AUTH2 u p KEYS a b c} {ok {{a {RW access delete}} {b {RW access delete}} {c {RW access delete}}}}
    {migrate h 1 {} 0 5} {ok {{{} {RW access delete}}}}
    {zunionstore d 2 a b weights 1 2} {ok {{d {OW update}} {a {RO access}} {b {RO access}}}}
    {zunionstore d 5 a b} {err {Invalid arguments specified for command}}
    {zunionstore d 0 a} {err {Invalid arguments specified for command}}
    {zunionstore d -1 a} {err {Invalid arguments specified for command}}
    {zunionstore d x a} {err {Invalid arguments specified for command}}
    {zinterstore d 1 a} {ok {{d {OW update}} {a {RO access}}}}
    {zdiffstore d 2 a b} {ok {{d {OW update}} {a {RO access}} {b {RO access}}}}
    {zunion 2 a b withscores} {ok {{a {RO access}} {b {RO access}}}}
    {zinter 1 a} {ok {{a {RO access}}}}
    {zdiff 3 a b c} {ok {{a {RO access}} {b {RO access}} {c {RO access}}}}
    {zintercard 2 a b limit 1} {ok {{a {RO access}} {b {RO access}}}}
    {sintercard 2 a b} {ok {{a {RO access}} {b {RO access}}}}
    {sintercard 3 a b} {err {Invalid arguments specified for command}}
    {lmpop 2 a b left count 2} {ok {{a {RW access delete}} {b {RW access delete}}}}
    {zmpop 1 a min} {ok {{a {RW access delete}}}}
    {blmpop 0 2 a b right} {ok {{a {RW access delete}} {b {RW access delete}}}}
    {bzmpop 0 1 a max count 3} {ok {{a {RW access delete}}}}
    {eval s 0} {ok {}}
    {eval s 1 a b c} {ok {{a {RW access update}}}}
    {eval s 3 a} {ok {}}
    {eval s -1} {ok {}}
    {evalsha_ro s 2 a b} {ok {{a {RO access}} {b {RO access}}}}
    {fcall f 0} {ok {}}
    {fcall f 1 a} {ok {{a {RW access update}}}}
    {fcall_ro f 2 a b x} {ok {{a {RO access}} {b {RO access}}}}
    {xread count 1 block 0 streams a b 1 2} {ok {{a {RO access}} {b {RO access}}}}
    {xread streams a 1} {ok {{a {RO access}}}}
    {xread streams a b 1} {ok {{a {RO access}}}}
    {xread streams} {err {Invalid number of arguments specified for command}}
    {xreadgroup group g c count 1 noack streams a b > >} {ok {{a {RO access}} {b {RO access}}}}
    {xreadgroup group g c streams a} {err {Invalid number of arguments specified for command}}
    {georadius k 0 0 1 m store d} {ok {{k {RO access}} {d {OW update}}}}
    {georadius k 0 0 1 m storedist d} {ok {{k {RO access}} {d {OW update}}}}
    {georadius k 0 0 1 m store d storedist e} {ok {{k {RO access}} {d {OW update}} {e {OW update}}}}
    {georadius k 0 0 1 m} {ok {{k {RO access}}}}
    {georadiusbymember k m 1 m store d} {ok {{k {RO access}} {d {OW update}}}}
    {geosearchstore d s frommember m byradius 1 m storedist} {ok {{d {OW update}} {s {RO access}}}}
    {bitop and d a b c} {ok {{d {OW update}} {a {RO access}} {b {RO access}} {c {RO access}}}}
    {bitfield_ro k get u8 0} {ok {{k {RO access}}}}
    {set k v} {ok {{k {OW update}}}}
    {set k v get} {ok {{k {RW access update}}}}
    {mset a 1} {ok {{a {OW update}}}}
    {mset a 1 b} {ok {{a {OW update}} {b {OW update}}}}
    {del a b c d} {ok {{a {RM delete}} {b {RM delete}} {c {RM delete}} {d {RM delete}}}}
    ping {err {wrong number of arguments for 'command|getkeysandflags' command}}
    {nosuch a b} {err {Invalid command specified}}
    get {err {wrong number of arguments for 'command|getkeysandflags' command}}
    {get a b} {err {Invalid number of arguments specified for command}}
    {config get x} {err {The command has no key arguments}}
    {command count} {err {The command has no key arguments}}
    {object help} {err {The command has no key arguments}}
    {xinfo help} {err {The command has no key arguments}}
    {memory usage} {err {Invalid number of arguments specified for command}}
    {lcs a b} {ok {{a {RO access}} {b {RO access}}}}
    }
}

# COMMAND replies byte for byte, RESP2 then RESP3 (flags are sets there).
proc introspection_exact_resp2 {} {
    return {
        {command getkeysandflags set a b} "*1\r\n*2\r\n\$1\r\na\r\n*2\r\n+OW\r\n+update\r\n"
        {command getkeysandflags lmove a b left right} "*2\r\n*2\r\n\$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n*2\r\n\$1\r\nb\r\n*2\r\n+RW\r\n+insert\r\n"
        {command getkeysandflags eval s 2 a b} "*2\r\n*2\r\n\$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+update\r\n*2\r\n\$1\r\nb\r\n*3\r\n+RW\r\n+access\r\n+update\r\n"
        {command info get} "*1\r\n*10\r\n\$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n\$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n*2\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n*6\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n*0\r\n"
        {command info set lmove sort xread nosuch} "*5\r\n*10\r\n\$3\r\nset\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@string\r\n+@slow\r\n*0\r\n*1\r\n*8\r\n\$5\r\nnotes\r\n\$48\r\nRW and ACCESS due to the optional `GET` argument\r\n\$5\r\nflags\r\n*4\r\n+RW\r\n+access\r\n+update\r\n+variable_flags\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n*2\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n*6\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n*0\r\n*10\r\n\$5\r\nlmove\r\n:5\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:2\r\n:1\r\n*3\r\n+@write\r\n+@list\r\n+@slow\r\n*0\r\n*2\r\n*6\r\n\$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n*2\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n*6\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n*6\r\n\$5\r\nflags\r\n*2\r\n+RW\r\n+insert\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n*2\r\n\$5\r\nindex\r\n:2\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n*6\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n*0\r\n*10\r\n\$4\r\nsort\r\n:-2\r\n*3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n:1\r\n:1\r\n:1\r\n*6\r\n+@write\r\n+@set\r\n+@sortedset\r\n+@list\r\n+@slow\r\n+@dangerous\r\n*0\r\n*3\r\n*6\r\n\$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n*2\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n*6\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n*8\r\n\$5\r\nnotes\r\n\$120\r\nFor the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort\r\n\$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$7\r\nunknown\r\n\$4\r\nspec\r\n*0\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$7\r\nunknown\r\n\$4\r\nspec\r\n*0\r\n*8\r\n\$5\r\nnotes\r\n\$116\r\nFor the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array\r\n\$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$7\r\nunknown\r\n\$4\r\nspec\r\n*0\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$7\r\nunknown\r\n\$4\r\nspec\r\n*0\r\n*0\r\n*10\r\n\$5\r\nxread\r\n:-4\r\n*3\r\n+readonly\r\n+blocking\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*4\r\n+@read\r\n+@stream\r\n+@slow\r\n+@blocking\r\n*0\r\n*1\r\n*6\r\n\$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n*4\r\n\$4\r\ntype\r\n\$7\r\nkeyword\r\n\$4\r\nspec\r\n*4\r\n\$7\r\nkeyword\r\n\$7\r\nSTREAMS\r\n\$9\r\nstartfrom\r\n:1\r\n\$9\r\nfind_keys\r\n*4\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n*6\r\n\$7\r\nlastkey\r\n:-1\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:2\r\n*0\r\n\$-1\r\n"
        {command info config|get} "*1\r\n*10\r\n\$10\r\nconfig|get\r\n:-3\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n"
        {command getkeys get a} "*1\r\n\$1\r\na\r\n"
        {command docs get} "*2\r\n\$3\r\nget\r\n*10\r\n\$7\r\nsummary\r\n\$22\r\nGet the value of a key\r\n\$5\r\nsince\r\n\$5\r\n1.0.0\r\n\$5\r\ngroup\r\n\$6\r\nstring\r\n\$10\r\ncomplexity\r\n\$4\r\nO(1)\r\n\$9\r\narguments\r\n*1\r\n*6\r\n\$4\r\nname\r\n\$3\r\nkey\r\n\$4\r\ntype\r\n\$3\r\nkey\r\n\$14\r\nkey_spec_index\r\n:0\r\n"
        {command docs config|set} "*2\r\n\$10\r\nconfig|set\r\n*12\r\n\$7\r\nsummary\r\n\$48\r\nSet configuration parameters to the given values\r\n\$5\r\nsince\r\n\$5\r\n2.0.0\r\n\$5\r\ngroup\r\n\$6\r\nserver\r\n\$10\r\ncomplexity\r\n\$62\r\nO(N) when N is the number of configuration parameters provided\r\n\$7\r\nhistory\r\n*1\r\n*2\r\n\$5\r\n7.0.0\r\n\$57\r\nAdded the ability to set multiple parameters in one call.\r\n\$9\r\narguments\r\n*1\r\n*8\r\n\$4\r\nname\r\n\$15\r\nparameter_value\r\n\$4\r\ntype\r\n\$5\r\nblock\r\n\$5\r\nflags\r\n*1\r\n+multiple\r\n\$9\r\narguments\r\n*2\r\n*4\r\n\$4\r\nname\r\n\$9\r\nparameter\r\n\$4\r\ntype\r\n\$6\r\nstring\r\n*4\r\n\$4\r\nname\r\n\$5\r\nvalue\r\n\$4\r\ntype\r\n\$6\r\nstring\r\n"
    }
}

proc introspection_exact_resp3 {} {
    return {
        {command getkeysandflags set a b} "*1\r\n*2\r\n\$1\r\na\r\n~2\r\n+OW\r\n+update\r\n"
        {command getkeysandflags lmove a b left right} "*2\r\n*2\r\n\$1\r\na\r\n~3\r\n+RW\r\n+access\r\n+delete\r\n*2\r\n\$1\r\nb\r\n~2\r\n+RW\r\n+insert\r\n"
        {command getkeysandflags eval s 2 a b} "*2\r\n*2\r\n\$1\r\na\r\n~3\r\n+RW\r\n+access\r\n+update\r\n*2\r\n\$1\r\nb\r\n~3\r\n+RW\r\n+access\r\n+update\r\n"
        {command info get} "*1\r\n*10\r\n\$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n\$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n%1\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n%3\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n~0\r\n"
        {command info set lmove sort xread nosuch} "*5\r\n*10\r\n\$3\r\nset\r\n:-3\r\n~2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@write\r\n+@string\r\n+@slow\r\n~0\r\n~1\r\n%4\r\n\$5\r\nnotes\r\n\$48\r\nRW and ACCESS due to the optional `GET` argument\r\n\$5\r\nflags\r\n~4\r\n+RW\r\n+access\r\n+update\r\n+variable_flags\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n%1\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n%3\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n~0\r\n*10\r\n\$5\r\nlmove\r\n:5\r\n~2\r\n+write\r\n+denyoom\r\n:1\r\n:2\r\n:1\r\n~3\r\n+@write\r\n+@list\r\n+@slow\r\n~0\r\n~2\r\n%3\r\n\$5\r\nflags\r\n~3\r\n+RW\r\n+access\r\n+delete\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n%1\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n%3\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n%3\r\n\$5\r\nflags\r\n~2\r\n+RW\r\n+insert\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n%1\r\n\$5\r\nindex\r\n:2\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n%3\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n~0\r\n*10\r\n\$4\r\nsort\r\n:-2\r\n~3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n:1\r\n:1\r\n:1\r\n~6\r\n+@write\r\n+@set\r\n+@sortedset\r\n+@list\r\n+@slow\r\n+@dangerous\r\n~0\r\n~3\r\n%3\r\n\$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nindex\r\n\$4\r\nspec\r\n%1\r\n\$5\r\nindex\r\n:1\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n%3\r\n\$7\r\nlastkey\r\n:0\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:0\r\n%4\r\n\$5\r\nnotes\r\n\$120\r\nFor the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort\r\n\$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$7\r\nunknown\r\n\$4\r\nspec\r\n%0\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$7\r\nunknown\r\n\$4\r\nspec\r\n%0\r\n%4\r\n\$5\r\nnotes\r\n\$116\r\nFor the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array\r\n\$5\r\nflags\r\n~2\r\n+OW\r\n+update\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$7\r\nunknown\r\n\$4\r\nspec\r\n%0\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$7\r\nunknown\r\n\$4\r\nspec\r\n%0\r\n~0\r\n*10\r\n\$5\r\nxread\r\n:-4\r\n~3\r\n+readonly\r\n+blocking\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n~4\r\n+@read\r\n+@stream\r\n+@slow\r\n+@blocking\r\n~0\r\n~1\r\n%3\r\n\$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n\$12\r\nbegin_search\r\n%2\r\n\$4\r\ntype\r\n\$7\r\nkeyword\r\n\$4\r\nspec\r\n%2\r\n\$7\r\nkeyword\r\n\$7\r\nSTREAMS\r\n\$9\r\nstartfrom\r\n:1\r\n\$9\r\nfind_keys\r\n%2\r\n\$4\r\ntype\r\n\$5\r\nrange\r\n\$4\r\nspec\r\n%3\r\n\$7\r\nlastkey\r\n:-1\r\n\$7\r\nkeystep\r\n:1\r\n\$5\r\nlimit\r\n:2\r\n~0\r\n_\r\n"
        {command info config|get} "*1\r\n*10\r\n\$10\r\nconfig|get\r\n:-3\r\n~4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n~3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n~0\r\n~0\r\n~0\r\n"
        {command getkeys get a} "*1\r\n\$1\r\na\r\n"
        {command docs get} "%1\r\n\$3\r\nget\r\n%5\r\n\$7\r\nsummary\r\n\$22\r\nGet the value of a key\r\n\$5\r\nsince\r\n\$5\r\n1.0.0\r\n\$5\r\ngroup\r\n\$6\r\nstring\r\n\$10\r\ncomplexity\r\n\$4\r\nO(1)\r\n\$9\r\narguments\r\n*1\r\n%3\r\n\$4\r\nname\r\n\$3\r\nkey\r\n\$4\r\ntype\r\n\$3\r\nkey\r\n\$14\r\nkey_spec_index\r\n:0\r\n"
        {command docs config|set} "%1\r\n\$10\r\nconfig|set\r\n%6\r\n\$7\r\nsummary\r\n\$48\r\nSet configuration parameters to the given values\r\n\$5\r\nsince\r\n\$5\r\n2.0.0\r\n\$5\r\ngroup\r\n\$6\r\nserver\r\n\$10\r\ncomplexity\r\n\$62\r\nO(N) when N is the number of configuration parameters provided\r\n\$7\r\nhistory\r\n~1\r\n*2\r\n\$5\r\n7.0.0\r\n\$57\r\nAdded the ability to set multiple parameters in one call.\r\n\$9\r\narguments\r\n*1\r\n%4\r\n\$4\r\nname\r\n\$15\r\nparameter_value\r\n\$4\r\ntype\r\n\$5\r\nblock\r\n\$5\r\nflags\r\n~1\r\n+multiple\r\n\$9\r\narguments\r\n*2\r\n%2\r\n\$4\r\nname\r\n\$9\r\nparameter\r\n\$4\r\ntype\r\n\$6\r\nstring\r\n%2\r\n\$4\r\nname\r\n\$5\r\nvalue\r\n\$4\r\ntype\r\n\$6\r\nstring\r\n"
    }
}

start_server {tags {introspection}} {
    test {CLIENT LIST shows a client's unsent output beyond its 16 KiB buffer as omem in oll blocks, as Redis} {
        r set v [string repeat x 10000]
        set rd [redis_deferring_client]
        $rd client setname slowreader
        assert_equal OK [$rd read]
        for {set i 0} {$i < 3000} {incr i} { $rd get v }
        $rd flush
        wait_for_condition 100 20 {
            [regexp {name=slowreader [^\n]*obl=([0-9]+) oll=([0-9]+) omem=([0-9]+)} [r client list] -> obl oll omem] && $omem > 0
        } else {
            fail "no output pending: [r client list]"
        }
        assert {$obl <= 16384}
        assert_morethan $oll 0
        assert_morethan $omem 100000
        $rd close
    }

    proc client_list_ids {} {
        set ids {}
        foreach line [split [string trim [r client list]] "\n"] {
            regexp {^id=([0-9]+)} $line -> id
            lappend ids $id
        }
        return $ids
    }

    test {CLIENT LIST lists the clients oldest first, as Redis} {
        set a [redis_client]
        set b [redis_client]
        set c [redis_client]
        set ids [client_list_ids]
        assert_equal [lsort -integer $ids] $ids
        assert_equal 4 [llength $ids]
        $b close
        set d [redis_client]
        set ids [client_list_ids]
        assert_equal [lsort -integer $ids] $ids
        $a close
        $c close
        $d close
    }

    foreach {proto script} {2 introspection_exact_resp2 3 introspection_exact_resp3} {
        test "COMMAND INFO, DOCS, GETKEYS and GETKEYSANDFLAGS reply bytes (RESP$proto)" {
            set c [redis_client]
            if {$proto == 3} {$c hello 3}
            foreach {cmd want} [$script] {
                assert_equal $want [$c rawcall {*}$cmd] "reply to: $cmd"
            }
            $c close
        }
    }


    test {LFU: reads that do not touch leave OBJECT FREQ alone} {
        r config set maxmemory-policy allkeys-lfu
        # No decay: a minute boundary crossed mid-test would lower the counter.
        r config set lfu-decay-time 0
        set i 0
        foreach tpl $::NOTOUCH_CMDS {
            set k "nt[incr i]"
            r flushall
            r set $k v
            set before [r object freq $k]
            catch {r {*}[ntc_cmd $tpl $k]}
            assert_equal $before [r object freq $k] "OBJECT FREQ after: [ntc_cmd $tpl $k]"
        }
        # A new key's counter is 5, and the first access always raises it.
        foreach tpl $::TOUCH_CMDS {
            set k "t[incr i]"
            r flushall
            r set $k v
            assert_equal 5 [r object freq $k]
            r {*}[ntc_cmd $tpl $k]
            assert_equal 6 [r object freq $k] "OBJECT FREQ after: [ntc_cmd $tpl $k]"
        }
        r config set maxmemory-policy noeviction
        r config set lfu-decay-time 1
    }

    test {LRU: reads that do not touch leave OBJECT IDLETIME growing} {
        r flushall
        r config set maxmemory-policy allkeys-lru
        r set idle v
        r set busy v
        after 2100
        foreach tpl $::NOTOUCH_CMDS {
            catch {r {*}[ntc_cmd $tpl idle]}
        }
        r get busy
        assert_morethan [r object idletime idle] 1
        assert_lessthan [r object idletime busy] 2
        r config set maxmemory-policy noeviction
        r config set lfu-decay-time 1
    }

    test {rdb-key-save-delay is a hidden config: only its exact name shows it} {
        assert_equal {rdb-key-save-delay 0} [r config get rdb-key-save-delay]
        assert_equal {} [r config get rdb-key-save-*]
        assert_equal -1 [lsearch [r config get *] rdb-key-save-delay]
        r config set rdb-key-save-delay -5
        assert_equal {rdb-key-save-delay -5} [r config get rdb-key-save-delay]
        r config set rdb-key-save-delay 0
    }

    test {While a BGSAVE child runs, lookups do not touch (no copy-on-write)} {
        r flushall
        r config set maxmemory-policy allkeys-lfu
        # No decay: a minute boundary crossed mid-test would lower the counter.
        r config set lfu-decay-time 0
        r set k v
        r config set rdb-key-save-delay 1500000
        r bgsave
        wait_for_condition 100 10 {[getInfoProperty [r info persistence] rdb_bgsave_in_progress] == 1} else {
            fail "no BGSAVE running"
        }
        r get k
        r get k
        assert_equal 5 [r object freq k]
        r config set rdb-key-save-delay 0
        wait_for_condition 300 20 {[getInfoProperty [r info persistence] rdb_bgsave_in_progress] == 0} else {
            fail "BGSAVE did not end"
        }
        # The child is gone: the first access raises the counter again.
        r get k
        assert_equal 6 [r object freq k]
        r config set maxmemory-policy noeviction
        r config set lfu-decay-time 1
    }

    test {NOTOUCH lookups still count keyspace hits and misses} {
        r flushall
        r set k v
        foreach {cmd hits misses} {
            {exists k} 1 0   {exists nokey} 0 1   {type k} 1 0   {type nokey} 0 1
            {ttl k} 1 0      {pttl nokey} 0 1     {expiretime k} 1 0   {pexpiretime nokey} 0 1
            {object encoding k} 1 0   {object freq nokey} 0 1
            {memory usage k} 0 0      {debug object k} 0 0   {scan 0} 0 0
        } {
            r config resetstat
            catch {r {*}$cmd}
            set info [r info stats]
            assert_equal $hits [getInfoProperty $info keyspace_hits] "hits after: $cmd"
            assert_equal $misses [getInfoProperty $info keyspace_misses] "misses after: $cmd"
        }
    }

    test {SCAN with TYPE looks each key up: a hit, or a miss for an expired key} {
        r flushall
        r debug set-active-expire 0
        r mset k1 v k2 v
        r rpush zl a
        r set k3 v px 1
        after 20
        r config resetstat
        # Every key MATCH lets through is looked up, whatever its type.
        assert_equal {0 {}} [r scan 0 type hash]
        set info [r info stats]
        assert_equal 3 [getInfoProperty $info keyspace_hits]
        assert_equal 1 [getInfoProperty $info keyspace_misses]
        assert_equal 1 [getInfoProperty $info expired_keys]
        r set k3 v px 1
        after 20
        r config resetstat
        assert_equal {0 zl} [r scan 0 match z* type list]
        set info [r info stats]
        assert_equal 1 [getInfoProperty $info keyspace_hits]
        assert_equal 0 [getInfoProperty $info keyspace_misses]
        # An expired key MATCH leaves out is left for later.
        assert_equal 0 [getInfoProperty $info expired_keys]
        assert_equal {0 zl} [r scan 0 match z*]
        assert_equal 0 [getInfoProperty [r info stats] expired_keys]
        assert_equal [lsort {k1 k2}] [lsort [lindex [r scan 0 match k*] 1]]
        assert_equal 1 [getInfoProperty [r info stats] expired_keys]
        # TYPE none: the check deletes an expired key, then names its type
        # "none", so the key it expired is listed (and only that one).
        r set k4 v px 1
        after 20
        assert_equal {0 k4} [r scan 0 type none]
        assert_equal 0 [r exists k4]
        assert_equal {0 {}} [r scan 0 type none]
        r debug set-active-expire 1
    }

    test {CLIENT LIST: multi counts the queued commands, multi-mem their arguments} {
        set c [redis_client]
        $c client setname tx1
        assert_match {* multi=-1 * multi-mem=0 *} [ci2_line tx1]
        $c multi
        assert_match {* flags=x * multi=0 * multi-mem=0 *} [ci2_line tx1]
        # Redis's argv_len_sums: the arguments' bytes and a pointer for each.
        $c set a b
        assert_match {* multi=1 * multi-mem=29 *} [ci2_line tx1]
        $c set abc defgh
        assert_match {* multi=2 * multi-mem=64 *} [ci2_line tx1]
        $c get a
        $c ping
        assert_match {* multi=4 * multi-mem=96 *} [ci2_line tx1]
        $c exec
        assert_match {* flags=N * multi=-1 * multi-mem=0 *} [ci2_line tx1]
        $c multi
        $c set a b
        $c discard
        assert_match {* multi=-1 * multi-mem=0 *} [ci2_line tx1]
        # Inside EXEC the client still shows x and its count, and argv-mem
        # is EXEC's own (4), as Redis leaves them.
        $c multi
        $c set a b
        $c client info
        set info [lindex [$c exec] 1]
        assert_match {* flags=x * multi=2 * argv-mem=4 multi-mem=55 *} $info
        $c close
    }

    test {CLIENT LIST: sub, psub, ssub and the P flag} {
        set c [redis_deferring_client]
        $c client setname ps1
        $c read
        assert_match {* flags=N * sub=0 psub=0 ssub=0 *} [ci2_line ps1]
        $c subscribe a b c
        for {set i 0} {$i < 3} {incr i} {$c read}
        assert_match {* flags=P * sub=3 psub=0 ssub=0 *} [ci2_line ps1]
        $c psubscribe x* y*
        $c read
        $c read
        $c ssubscribe s1
        $c read
        assert_match {* flags=P * sub=3 psub=2 ssub=1 *} [ci2_line ps1]
        $c unsubscribe a
        $c read
        $c punsubscribe
        $c read
        $c read
        assert_match {* flags=P * sub=2 psub=0 ssub=1 *} [ci2_line ps1]
        $c sunsubscribe
        $c read
        $c unsubscribe
        $c read
        $c read
        assert_match {* flags=N * sub=0 psub=0 ssub=0 *} [ci2_line ps1]
        $c close
    }

    test {CLIENT INFO and CLIENT LIST show a name of any length whole} {
        set name [string repeat n 5000]
        set c [redis_client]
        $c client setname $name
        assert_match "* name=$name age=*" [$c client info]
        set others [string repeat o 3000]
        r client setname $others
        set list [$c client list]
        assert_match "* name=$name age=*" $list
        assert_match "* name=$others age=*" $list
        assert_equal 2 [llength [split [string trim $list] "\n"]]
        r client setname {}
        $c close
    }

    test {INFO stats: pubsub_channels, pubsub_patterns and pubsubshard_channels} {
        proc ci2_pubsub {} {
            set i [r info stats]
            list [getInfoProperty $i pubsub_channels] [getInfoProperty $i pubsub_patterns] \
                [getInfoProperty $i pubsubshard_channels]
        }
        assert_equal {0 0 0} [ci2_pubsub]
        set a [redis_deferring_client]
        set b [redis_deferring_client]
        $a subscribe c1 c2
        $a read
        $a read
        $b subscribe c2 c3
        $b read
        $b read
        $a psubscribe p*
        $a read
        $b psubscribe p* q*
        $b read
        $b read
        $a ssubscribe s1
        $a read
        # Channels and patterns, each counted once however many subscribe.
        wait_for_condition 50 20 {[ci2_pubsub] eq {3 2 1}} else {
            fail "counts: [ci2_pubsub]"
        }
        $a close
        wait_for_condition 50 20 {[ci2_pubsub] eq {2 2 0}} else {
            fail "counts after a subscriber left: [ci2_pubsub]"
        }
        $b close
        wait_for_condition 50 20 {[ci2_pubsub] eq {0 0 0}} else {
            fail "counts after both left: [ci2_pubsub]"
        }
    }

    test {INFO stats: a BGSAVE's fork counts in total_forks and latest_fork_usec} {
        r config resetstat
        assert_equal 0 [s total_forks]
        assert_equal 0 [s latest_fork_usec]
        r set forkkey v
        r bgsave
        wait_for_condition 200 50 {[s rdb_bgsave_in_progress] == 0} else {
            fail "the BGSAVE did not end"
        }
        assert_equal 1 [s total_forks]
        assert {[s latest_fork_usec] > 0}
        r config resetstat
        assert_equal 0 [s total_forks]
        assert_equal 0 [s latest_fork_usec]
    }

    test {CONFIG RESETSTAT clears rdb_saves, aof_rewrites, lazyfreed_objects and the instantaneous rates} {
        r config set lazyfree-lazy-user-del yes
        # More than 64 members, not an intset: freed in the background.
        for {set i 0} {$i < 200} {incr i} { r sadd lazyset m$i }
        r del lazyset
        wait_for_condition 50 20 {[s lazyfree_pending_objects] == 0} else { fail "lazyfree did not end" }
        assert_morethan [s lazyfreed_objects] 0
        r save
        assert_morethan [s rdb_saves] 0
        r bgrewriteaof
        wait_for_condition 200 50 {[s aof_rewrite_in_progress] == 0 && [s aof_rewrites] > 0} else {
            fail "the rewrite did not end"
        }
        for {set i 0} {$i < 2000} {incr i} { r ping }
        after 1100
        r config resetstat
        assert_equal 0 [s lazyfreed_objects]
        assert_equal 0 [s rdb_saves]
        assert_equal 0 [s aof_rewrites]
        assert_equal 0 [s aof_rewrites_consecutive_failures]
        assert_equal 0 [s instantaneous_ops_per_sec]
        r config set lazyfree-lazy-user-del no
    }

    test {INFO stats: expire_cycle_cpu_milliseconds counts the active expiry's time} {
        r flushall
        r config resetstat
        assert_equal 0 [s expire_cycle_cpu_milliseconds]
        assert_equal 0 [s expired_time_cap_reached_count]
        set rd [redis_deferring_client]
        for {set i 0} {$i < 50000} {incr i} {
            $rd set ecyc:$i v px 10
        }
        for {set i 0} {$i < 50000} {incr i} {
            $rd read
        }
        $rd close
        # Only the active cycle expires them: nothing looks them up.
        wait_for_condition 200 50 {[s expired_keys] == 50000} else {
            fail "expired: [s expired_keys]"
        }
        assert {[s expire_cycle_cpu_milliseconds] > 0}
        # The cycles found expired keys in their samples.
        assert {[s expired_stale_perc] > 0}
        r config resetstat
        assert_equal 0 [s expire_cycle_cpu_milliseconds]
        assert_equal 0.00 [s expired_stale_perc]
    }

    test {INFO stats: eviction exceeded time while used memory is over maxmemory} {
        r flushall
        r config resetstat
        assert_equal 0 [s total_eviction_exceeded_time]
        r set filler [string repeat x 100000]
        r config set maxmemory-policy noeviction
        r config set maxmemory 1
        assert_error {OOM *} {r set k v}
        after 1100
        set info [r info stats]
        set cur [getInfoProperty $info current_eviction_exceeded_time]
        assert {$cur >= 1000}
        assert {[getInfoProperty $info total_eviction_exceeded_time] >= $cur}
        # The next write's eviction check finds memory under the limit.
        r config set maxmemory 1gb
        r set k v
        assert_equal 0 [s current_eviction_exceeded_time]
        set total [s total_eviction_exceeded_time]
        assert {$total >= 1000}
        after 100
        assert_equal $total [s total_eviction_exceeded_time]
        r config resetstat
        assert_equal 0 [s total_eviction_exceeded_time]
        r config set maxmemory 0
        r del filler
    }

    test {INFO stats: total_reads_processed and total_writes_processed} {
        set c [redis_client]
        r config resetstat
        foreach i {1 2 3} {assert_equal PONG [$c ping]}
        set info [r info stats]
        # Three reads by c and INFO's own (and maybe the end of a client an
        # earlier test closed); CONFIG RESETSTAT's reply and three PONGs.
        assert_range [getInfoProperty $info total_reads_processed] 4 6
        assert_equal 4 [getInfoProperty $info total_writes_processed]
        $c close
    }

    test {COMMAND LIST FILTERBY PATTERN matches commands and subcommands} {
        assert_equal {config config|get config|help config|resetstat config|rewrite config|set} \
            [lsort [r command list filterby pattern config*]]
        assert_equal {config config|get config|help config|resetstat config|rewrite config|set} \
            [lsort [r command list filterby pattern CONFIG*]]
        assert_equal {config|get slowlog|get} [lsort [r command list filterby pattern *|get]]
        assert_equal {client|no-evict} [r command list FILTERBY PATTERN client|no*]
        assert_equal {xinfo xinfo|consumers xinfo|groups xinfo|help xinfo|stream} \
            [lsort [r command list filterby pattern xinfo*]]
        assert_equal {object|freq} [r command list filterby pattern ob?ect|fr*]
        assert_equal {} [r command list filterby pattern nosuch*]
        # Every subcommand has a | in its name, and COMMAND LIST names the
        # commands and their subcommands.
        set subs [r command list filterby pattern *|*]
        assert_morethan [llength $subs] 100
        set all [r command list]
        foreach s $subs {
            assert_match *|* $s
            assert {[lsearch -exact $all $s] >= 0}
        }
        assert_equal [r command count] [expr {[llength $all] - [llength $subs]}]
    }

    test {COMMAND LIST FILTERBY ACLCAT and MODULE} {
        assert_equal {pfadd pfcount pfdebug pfmerge pfselftest} [lsort [r command list filterby aclcat hyperloglog]]
        assert_equal {pfadd pfcount pfdebug pfmerge pfselftest} [lsort [r command list filterby aclcat HyperLogLog]]
        assert_equal {} [r command list filterby aclcat @hyperloglog]
        assert_equal {} [r command list filterby aclcat nosuch]
        assert_equal {} [r command list filterby module foo]
        # Subcommands are listed under their own categories.
        set conn [r command list filterby aclcat connection]
        assert {[lsearch $conn client|id] >= 0 && [lsearch $conn auth] >= 0 && [lsearch $conn client] < 0}
        set geo [lsort [r command list filterby aclcat geo]]
        assert_equal {geoadd geodist geohash geopos georadius georadius_ro georadiusbymember georadiusbymember_ro geosearch geosearchstore} $geo
    }

    test {COMMAND LIST FILTERBY errors} {
        assert_error {ERR syntax error*} {r command list filterby pattern}
        assert_error {ERR syntax error*} {r command list filterby foo bar}
        assert_error {ERR syntax error*} {r command list filterby}
        assert_error {ERR syntax error*} {r command list x}
        assert_error {ERR syntax error*} {r command list filterby pattern a b}
    }

    test {COMMAND INFO of every command is Redis 7.0's (flags, movablekeys, key range, categories)} {
        set listed [r command list]
        set n 0
        foreach row [introspection_command_table] {
            set name [lindex $row 0]
            set got [lindex [r command info $name] 0]
            assert_equal $row [lrange $got 0 7] "COMMAND INFO $name"
            if {![string match *|* $name]} {
                assert {[lsearch -exact $listed $name] >= 0}
            }
            incr n
        }
        assert_morethan $n 480
        # COMMAND with no arguments describes every command, COMMAND COUNT
        # counts them.
        assert_equal [r command count] [llength [r command]]
    }

    test {COMMAND GETKEYS and GETKEYSANDFLAGS for every command with keys} {
        set n 0
        foreach {argv want} [introspection_getkeys_table] {
            if {[catch {r command getkeysandflags {*}$argv} got]} {
                set got [list err [string range $got 4 end]]
            } else {
                set got [list ok $got]
            }
            assert_equal $want $got "COMMAND GETKEYSANDFLAGS $argv"
            # GETKEYS names the same keys, or fails the same way.
            if {[catch {r command getkeys {*}$argv} keys]} {
                assert_equal err [lindex $want 0] "COMMAND GETKEYS $argv: $keys"
            } else {
                assert_equal [lmap kf [lindex $want 1] {lindex $kf 0}] $keys "COMMAND GETKEYS $argv"
            }
            incr n
        }
        assert_morethan $n 250
    }

    test {movablekeys: exactly the commands whose keys need their arguments} {
        set movable {}
        foreach row [introspection_command_table] {
            if {[lsearch [lindex $row 2] movablekeys] >= 0} {lappend movable [lindex $row 0]}
        }
        assert_equal {blmpop bzmpop eval eval_ro evalsha evalsha_ro fcall fcall_ro georadius georadiusbymember lmpop migrate sintercard sort sort_ro xread xreadgroup zdiff zdiffstore zinter zintercard zinterstore zmpop zunion zunionstore} [lsort $movable]
        foreach name $movable {
            assert_equal 1 [expr {[lsearch [lindex [lindex [r command info $name] 0] 2] movablekeys] >= 0}] $name
        }
    }
}
