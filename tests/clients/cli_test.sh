#!/bin/sh
# redis-cli and redis-benchmark scenarios against a running goblin-core.
# Usage: sh tests/clients/cli_test.sh PORT TMPDIR [cli|bench|all]
# Prints one line per scenario: "passed: SUITE/NAME" or "failed: SUITE/NAME: CAUSE".
# Every scenario asserts what it gets; nothing is skipped. Databases used:
# 1 (general), 2 (--pipe), 3 (--bigkeys/--memkeys), 4 (redis-benchmark).
PORT=$1
TMP=$2
WHAT=${3:-all}
[ -n "$PORT" ] && [ -d "$TMP" ] || { echo "usage: $0 PORT TMPDIR [cli|bench|all]" >&2; exit 2; }
SUITE=redis-cli

pass() { echo "passed: $SUITE/$1"; }
fail() { echo "failed: $SUITE/$1: $2"; }
cli() { redis-cli -p "$PORT" "$@"; }
# First error reply in a file (redis-cli prints "(error) ..." or "ERR ..." in raw mode).
first_error() { grep -m1 -E '^(\(error\) )?(ERR|WRONGTYPE|NOSCRIPT|NOPERM|EXECABORT|Error|Could not)' "$1"; }
# Run redis-cli on a list of commands read from stdin (one per line) and
# report the first error reply, if any, on stdout.
setup() {
    db=$1
    cli -n "$db" >"$TMP/setup.out" 2>&1
    first_error "$TMP/setup.out"
}
have() { command -v "$1" >/dev/null 2>&1; }

# ---------------------------------------------------------------- redis-cli
cli_interactive_hints() {
    name=interactive-hints
    have tmux || { fail $name "tmux not installed (deps/install.sh)"; return; }
    sock=goblin-clients-$$
    tm() { tmux -L "$sock" "$@"; }
    pane() { tm capture-pane -p -t cli 2>/dev/null; }
    # Wait until the pane's text matches a fixed string (grep -F), up to ~5 s.
    wait_for() {
        i=0
        while [ $i -lt 50 ]; do
            pane | grep -qF -- "$1" && return 0
            sleep 0.1
            i=$((i + 1))
        done
        return 1
    }
    cli -n 1 del cli:interactive >/dev/null
    if ! tm -f /dev/null new-session -d -s cli -x 200 -y 40 \
        "env REDISCLI_HISTFILE=/dev/null TERM=xterm redis-cli -p $PORT -n 1"; then
        fail $name "could not start tmux"
        return
    fi
    prompt="127.0.0.1:$PORT[1]>"
    cause=""
    if ! wait_for "$prompt"; then
        cause="no prompt '$prompt' (pane: $(pane | tr -s '\n' ' ' | cut -c1-120))"
    else
        tm send-keys -t cli -l "SET cli:interactive \"hello world\""
        tm send-keys -t cli Enter
        if ! wait_for "OK"; then
            cause="SET reply OK not shown (pane: $(pane | tr -s '\n' ' ' | cut -c1-160))"
        else
            tm send-keys -t cli -l "GET cli:interactive"
            tm send-keys -t cli Enter
            if ! wait_for '"hello world"'; then
                cause="GET reply not shown (pane: $(pane | tr -s '\n' ' ' | cut -c1-160))"
            else
                tm send-keys -t cli -l "SET "
                hint='key value [NX|XX] [GET] [EX seconds|PX milliseconds'
                if ! wait_for "$hint"; then
                    cause="typing 'SET ' shows no hint '$hint...' (pane: $(pane | tail -3 | tr -s '\n' ' '))"
                else
                    tm send-keys -t cli C-u
                    tm send-keys -t cli -l "HSET"
                    hint2='key field value [field value ...]'
                    if ! wait_for "HSET $hint2"; then
                        cause="typing 'HSET' shows no hint '$hint2'"
                    fi
                    tm send-keys -t cli C-u
                fi
            fi
        fi
    fi
    tm send-keys -t cli -l "QUIT" 2>/dev/null
    tm send-keys -t cli Enter 2>/dev/null
    sleep 0.2
    tm kill-server 2>/dev/null
    if [ -z "$cause" ]; then
        got=$(cli -n 1 get cli:interactive)
        [ "$got" = "hello world" ] || cause="value set interactively reads back as '$got'"
    fi
    if [ -z "$cause" ]; then pass $name; else fail $name "$cause"; fi
}

cli_scan_pattern() {
    name=scan-pattern
    cli -n 1 --scan --pattern 'cli:scan:*' | sed 's/^/DEL /' | cli -n 1 >/dev/null
    i=0
    : >"$TMP/scan.expected"
    {
        while [ $i -lt 400 ]; do
            echo "SET cli:scan:user:$i v"
            echo "cli:scan:user:$i" >>"$TMP/scan.expected"
            [ $((i % 4)) -eq 0 ] && echo "SET cli:scan:other:$i v"
            i=$((i + 1))
        done
    } | setup 1 >"$TMP/err"
    if [ -s "$TMP/err" ]; then fail $name "setup: $(cat "$TMP/err")"; return; fi
    if ! cli -n 1 --scan --pattern 'cli:scan:user:*' >"$TMP/scan.got" 2>&1; then
        fail $name "redis-cli --scan exited non-zero: $(head -1 "$TMP/scan.got")"
        return
    fi
    sort "$TMP/scan.expected" >"$TMP/scan.e"
    sort "$TMP/scan.got" >"$TMP/scan.g"
    if ! cmp -s "$TMP/scan.e" "$TMP/scan.g"; then
        fail $name "--scan --pattern 'cli:scan:user:*' returned $(wc -l <"$TMP/scan.got") keys ($(sort -u "$TMP/scan.got" | wc -l) distinct), expected 400"
        return
    fi
    # A second pattern in the same keyspace: every key, and only those.
    cli -n 1 --scan --pattern 'cli:scan:other:*' | sort -u >"$TMP/scan.o"
    n=$(wc -l <"$TMP/scan.o")
    [ "$n" -eq 100 ] || { fail $name "--scan --pattern 'cli:scan:other:*' found $n distinct keys, expected 100"; return; }
    pass $name
}

big_setup() {
    cli -n 3 flushdb >/dev/null
    # 1000 random hex digits: Goblin stores compressible small strings LZF
    # compressed, and --memkeys below wants the full size in MEMORY USAGE.
    big=$(head -c 600 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 1000)
    {
        echo "SET big:str $big"
        echo "SET small:str a"
        # 500 items: clearly bigger than small:list however memory is accounted.
        echo "RPUSH big:list $(seq -s ' ' 1 500)"
        echo "RPUSH small:list a"
        echo "HSET big:hash f1 v1 f2 v2 f3 v3"
        echo "ZADD big:zset 1 a 2 b 3 c 4 d 5 e"
        echo "SADD big:set a b c d e f g h i"
    } | setup 3
}

cli_bigkeys() {
    name=bigkeys
    err=$(big_setup)
    [ -n "$err" ] && { fail $name "setup: $err"; return; }
    if ! cli -n 3 --bigkeys >"$TMP/big.out" 2>&1; then
        fail $name "redis-cli --bigkeys exited non-zero: $(first_error "$TMP/big.out")"
        return
    fi
    for want in \
        "Sampled 7 keys in the keyspace!" \
        "Biggest string found '\"big:str\"' has 1000 bytes" \
        "Biggest   list found '\"big:list\"' has 500 items" \
        "Biggest   hash found '\"big:hash\"' has 3 fields" \
        "Biggest   zset found '\"big:zset\"' has 5 members" \
        "Biggest    set found '\"big:set\"' has 9 members" \
        "2 strings with 1001 bytes"; do
        grep -qF -- "$want" "$TMP/big.out" || { fail $name "output lacks \"$want\" ($(grep -m1 -E 'ERR|rror' "$TMP/big.out"))"; return; }
    done
    pass $name
}

cli_memkeys() {
    name=memkeys
    err=$(big_setup)
    [ -n "$err" ] && { fail $name "setup: $err"; return; }
    if ! cli -n 3 --memkeys >"$TMP/mem.out" 2>&1; then
        fail $name "redis-cli --memkeys exited non-zero: $(first_error "$TMP/mem.out")"
        return
    fi
    grep -qF "Sampled 7 keys in the keyspace!" "$TMP/mem.out" || { fail $name "no 'Sampled 7 keys' summary ($(grep -m1 -E 'ERR|rror' "$TMP/mem.out"))"; return; }
    line=$(grep -F "Biggest string found" "$TMP/mem.out" | tail -1)
    case $line in
        *"'\"big:str\"' has "*" bytes") ;;
        *) fail $name "biggest string by memory is not big:str: '$line'"; return ;;
    esac
    n=$(echo "$line" | sed -E 's/.* has ([0-9]+) bytes/\1/')
    [ "$n" -ge 1000 ] || { fail $name "MEMORY USAGE of a 1000-byte string reported as $n bytes"; return; }
    for t in list hash zset set; do
        grep -qE "Biggest +$t found '\"big:$t\"' has [0-9]+ bytes" "$TMP/mem.out" ||
            { fail $name "biggest $t by memory is not big:$t: '$(grep -E "Biggest +$t found" "$TMP/mem.out" | tail -1)'"; return; }
    done
    pass $name
}

cli_latency() {
    name=latency
    # Without a tty redis-cli prints one "min max avg samples" line after the
    # -i interval and exits; timeout only guards against a hang.
    out=$(timeout 10 redis-cli -p "$PORT" --latency -i 1 2>&1)
    rc=$?
    [ $rc -eq 0 ] || { fail $name "redis-cli --latency exited $rc: $out"; return; }
    if ! echo "$out" | grep -qE '^[0-9]+ [0-9]+ [0-9]+\.[0-9]+ [0-9]+$'; then
        fail $name "unexpected --latency output '$out'"
        return
    fi
    samples=$(echo "$out" | awk '{print $4}')
    [ "$samples" -gt 10 ] || { fail $name "only $samples PING samples in 1 s"; return; }
    # --latency-history keeps going; bound it and check it printed samples.
    out=$(timeout 1.5 stdbuf -oL redis-cli -p "$PORT" --latency-history -i 1 2>&1)
    n=$(echo "$out" | grep -cE '^[0-9]+ [0-9]+ [0-9]+\.[0-9]+ [0-9]+$')
    [ "$n" -gt 5 ] || { fail $name "--latency-history printed $n sample lines in 1.5 s"; return; }
    pass $name
}

cli_stat() {
    name=stat
    keys=$(cli info keyspace | awk -F'[=:,]' '/^db[0-9]+:keys=/ {s += $3} END {print s + 0}')
    # --stat runs until killed; line-buffer it so the rows survive the kill.
    timeout 1.7 stdbuf -oL redis-cli -p "$PORT" --stat -i 0.5 >"$TMP/stat.out" 2>&1
    grep -qF -- '------- data ------' "$TMP/stat.out" || { fail $name "no header: $(head -2 "$TMP/stat.out" | tr '\n' ' ')"; return; }
    rows=$(grep -cE '^[0-9]+ +[0-9.]+[BKMG]? +[0-9]+ +[0-9]+ +[0-9]+ \(\+[0-9]+\)' "$TMP/stat.out")
    [ "$rows" -ge 3 ] || { fail $name "only $rows stat rows in 1.7 s: $(tail -2 "$TMP/stat.out" | tr '\n' ' ')"; return; }
    k=$(grep -E '^[0-9]+ ' "$TMP/stat.out" | tail -1 | awk '{print $1}')
    [ "$k" = "$keys" ] || { fail $name "keys column $k, INFO keyspace says $keys"; return; }
    pass $name
}

cli_pipe() {
    name=pipe-1M
    cli -n 2 flushdb >/dev/null
    # 1,000,000 SET commands in RESP, generated and streamed straight in.
    awk 'BEGIN {
        for (i = 0; i < 1000000; i++) {
            k = "pipe:" i; v = "value:" i
            printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v
        }
    }' | timeout 120 redis-cli -p "$PORT" -n 2 --pipe >"$TMP/pipe.out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { fail $name "redis-cli --pipe exited $rc: $(tail -1 "$TMP/pipe.out")"; return; }
    grep -qx 'errors: 0, replies: 1000000' "$TMP/pipe.out" || { fail $name "summary is '$(tail -1 "$TMP/pipe.out")', expected 'errors: 0, replies: 1000000'"; return; }
    n=$(cli -n 2 dbsize)
    [ "$n" = 1000000 ] || { fail $name "DBSIZE after --pipe is $n"; return; }
    v=$(cli -n 2 get pipe:765432)
    [ "$v" = "value:765432" ] || { fail $name "GET pipe:765432 = '$v'"; return; }
    cli -n 2 flushdb >/dev/null
    pass $name
}

cli_resp3() {
    name=resp3
    err=$({
        echo "DEL r3:hash r3:zset"
        echo "HSET r3:hash f1 v1 f2 v2"
        echo "ZADD r3:zset 1 a 2.5 b"
    } | setup 1)
    [ -n "$err" ] && { fail $name "setup: $err"; return; }
    r3() { redis-cli -p "$PORT" -n 1 -3 --no-raw "$@" 2>&1; }
    check() {
        got=$(r3 "$@")
        if [ "$got" != "$want" ]; then
            fail $name "redis-cli -3 $*: got '$(echo "$got" | tr '\n' '|')', expected '$(echo "$want" | tr '\n' '|')'"
            return 1
        fi
    }
    want=$(printf '1# "f1" => "v1"\n2# "f2" => "v2"'); check hgetall r3:hash || return
    want='(double) 2.5'; check zscore r3:zset b || return
    want='(nil)'; check get r3:missing || return
    want=$(printf '1) 1) "a"\n   2) (double) 1\n2) 1) "b"\n   2) (double) 2.5'); check zrange r3:zset 0 -1 withscores || return
    got=$(r3 hello 3)
    echo "$got" | grep -qxF '3# "proto" => (integer) 3' || { fail $name "HELLO 3 reply lacks proto 3: $(echo "$got" | head -3 | tr '\n' '|')"; return; }
    pass $name
}

cli_monitor() {
    name=monitor
    timeout 10 stdbuf -oL redis-cli -p "$PORT" monitor >"$TMP/mon.out" 2>&1 &
    mpid=$!
    i=0
    while [ $i -lt 50 ] && ! grep -qx OK "$TMP/mon.out"; do sleep 0.1; i=$((i + 1)); done
    if ! grep -qx OK "$TMP/mon.out"; then
        kill $mpid 2>/dev/null; wait $mpid 2>/dev/null
        fail $name "MONITOR did not reply OK: $(head -1 "$TMP/mon.out")"
        return
    fi
    cli -n 1 set cli:monitor "two words" >/dev/null
    i=0
    while [ $i -lt 50 ] && ! grep -q 'cli:monitor' "$TMP/mon.out"; do sleep 0.1; i=$((i + 1)); done
    kill $mpid 2>/dev/null
    wait $mpid 2>/dev/null
    line=$(grep -F 'cli:monitor' "$TMP/mon.out" | head -1)
    [ -n "$line" ] || { fail $name "a second client's SET did not appear in MONITOR output"; return; }
    echo "$line" | grep -qE '^[0-9]{10}\.[0-9]{6} \[1 127\.0\.0\.1:[0-9]+\] "set" "cli:monitor" "two words"$' ||
        { fail $name "MONITOR line not in Redis format: '$line'"; return; }
    pass $name
}

cli_eval() {
    name=eval
    cat >"$TMP/script.lua" <<'EOF'
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])
EOF
    cli -n 1 del cli:eval >/dev/null
    got=$(cli -n 1 --eval "$TMP/script.lua" cli:eval , "from lua" 2>&1)
    case $got in
        *"unknown command"*) fail $name "$got"; return ;;
    esac
    [ "$got" = "from lua" ] || { fail $name "--eval returned '$got', expected 'from lua'"; return; }
    v=$(cli -n 1 get cli:eval)
    [ "$v" = "from lua" ] || { fail $name "key written by the script reads '$v'"; return; }
    pass $name
}

# ---------------------------------------------------------- redis-benchmark
# Expected tests of `redis-benchmark -q` (the 7.0 default set), one a line.
BENCH_TESTS='PING_INLINE
PING_MBULK
SET
GET
INCR
LPUSH
RPUSH
LPOP
RPOP
SADD
HSET
SPOP
ZADD
ZPOPMIN
LPUSH (needed to benchmark LRANGE)
LRANGE_100 (first 100 elements)
LRANGE_300 (first 300 elements)
LRANGE_500 (first 500 elements)
LRANGE_600 (first 600 elements)
MSET (10 keys)'

bench() {
    name=$1
    shift
    cli -n 4 flushdb >/dev/null
    timeout 150 redis-benchmark -p "$PORT" --dbnum 4 -q "$@" >"$TMP/bench.raw" 2>&1
    rc=$?
    # -q rewrites a progress line with \r; keep only what ends each line.
    tr '\r' '\n' <"$TMP/bench.raw" | grep -v '^ *$' >"$TMP/bench.out"
    [ $rc -eq 124 ] && { fail $name "redis-benchmark $* timed out after 150 s"; return; }
    # redis-benchmark 7.0 stops at the first error reply and prints it.
    err=$(grep -m1 -E 'Error from server|ERR|WRONGTYPE|Connection refused' "$TMP/bench.out")
    [ -n "$err" ] && { fail $name "$err"; return; }
    [ $rc -eq 0 ] || { fail $name "redis-benchmark $* exited $rc: $(tail -1 "$TMP/bench.out")"; return; }
    missing=$(echo "$BENCH_TESTS" | while IFS= read -r label; do
        grep -F -- "$label: " "$TMP/bench.out" | grep -qE ': [0-9]+\.[0-9]+ requests per second' || echo "$label"
    done | head -1)
    [ -n "$missing" ] && { fail $name "no 'requests per second' line for $missing"; return; }
    n=$(grep -c 'requests per second' "$TMP/bench.out")
    [ "$n" -eq 20 ] || { fail $name "$n result lines, expected 20"; return; }
    pass $name
}

if [ "$WHAT" = cli ] || [ "$WHAT" = all ]; then
    if ! have redis-cli; then
        for s in interactive-hints scan-pattern bigkeys memkeys latency stat pipe-1M resp3 monitor eval; do
            fail $s "redis-cli not installed (Debian redis-tools; deps/install.sh)"
        done
    else
        cli_interactive_hints
        cli_scan_pattern
        cli_bigkeys
        cli_memkeys
        cli_latency
        cli_stat
        cli_pipe
        cli_resp3
        cli_monitor
        cli_eval
    fi
fi
if [ "$WHAT" = bench ] || [ "$WHAT" = all ]; then
    SUITE=redis-benchmark
    if ! have redis-benchmark; then
        fail default-q "redis-benchmark not installed (Debian redis-tools; deps/install.sh)"
        fail pipelined-P16-threads2 "redis-benchmark not installed (Debian redis-tools; deps/install.sh)"
    else
        bench default-q -n 20000
        bench pipelined-P16-threads2 -n 20000 -P 16 --threads 2
    fi
fi
exit 0
