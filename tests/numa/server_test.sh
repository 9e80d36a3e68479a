#!/bin/sh
# server_test.sh -- guest side (busybox sh, as root in the guest of tests/numa/vm.sh):
# drives goblin-core over loopback with redis-cli (both copied in with
# --extra by tests/numa/run.sh).
#   server_test.sh 2|4
# 2 nodes: a hot set placed on node 1 moves to node 0 with promotion on
# (INFO counts one exchange, every value intact) and stays with
# --no-numa-promotion. 4 nodes: --perverse --numa 0 maps the preferred pool
# on node 2, the farthest of the 10/20/30/20 ring (INFO requested and
# observed). Ends with "server_test: N passed, M failed".
#   server_test.sh NODES [PLACEMENT_TEST_ARGS...]
# With more arguments it first runs /usr/local/bin/placement_test with them
# (one VM boot for both).
NODES=${1:-2}
shift
if [ $# -gt 0 ]; then
    /usr/local/bin/placement_test "$@"
fi
G=/usr/local/bin/goblin-core
PORT=6390
C="/usr/local/bin/redis-cli -p $PORT"
pass=0
fail=0
ok() {
    if [ "$1" = 0 ]; then
        echo "PASS: server: $2"
        pass=$((pass + 1))
    else
        echo "FAIL: server: $2"
        fail=$((fail + 1))
    fi
}
# INFO once into a file (redis-cli runs are slow under TCG), then fields.
snap() { $C info | tr -d '\r' >/tmp/info; }
info() { grep "^$1:" /tmp/info | cut -d: -f2-; }
# One redis-cli run for many commands (one per line on stdin).
batch() { $C; }

start() {
    $G --port $PORT --save "" "$@" >/tmp/goblin.log 2>&1 &
    GPID=$!
    i=0
    while [ $i -lt 100 ]; do
        [ "$($C ping 2>/dev/null)" = PONG ] && return 0
        kill -0 $GPID 2>/dev/null || break
        sleep 0.2
        i=$((i + 1))
    done
    echo "goblin-core did not start: $*"
    tail -5 /tmp/goblin.log
    return 1
}
stop() {
    kill $GPID 2>/dev/null
    wait $GPID 2>/dev/null
}

mkdir -p /tmp/v
: >/tmp/sets.resp
i=0
while [ $i -lt 16 ]; do
    yes "value-$i-" | head -c 270000 >/tmp/v/$i
    k="k$i"
    printf '*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$270000\r\n' ${#k} "$k" >>/tmp/sets.resp
    cat /tmp/v/$i >>/tmp/sets.resp
    printf '\r\n' >>/tmp/sets.resp
    i=$((i + 1))
done
expect_md5() { # md5 of GET k$1..k$2 as redis-cli prints them
    i=$1
    while [ $i -le $2 ]; do
        cat /tmp/v/$i
        echo
        i=$((i + 1))
    done | md5sum | cut -d' ' -f1
}
gets() { # GET k$1..k$2, $3 rounds, one redis-cli run
    r=0
    while [ $r -lt "$3" ]; do
        i=$1
        while [ $i -le $2 ]; do
            echo "GET k$i"
            i=$((i + 1))
        done
        r=$((r + 1))
    done | batch
}

# Start goblin-core with these flags and load k0..k15; fails (counted) when
# it does not start.
start_loaded() { # label, flags...
    sl_label=$1
    shift
    if ! start "$@"; then
        ok 1 "$sl_label: server starts"
        return 1
    fi
    $C --pipe </tmp/sets.resp >/dev/null 2>&1
}

promo_case() { # label, extra flags...; want exchanges
    label=$1
    want=$2
    shift 2
    start_loaded "$label" --numa 0 --memory 2097152 --sub-memory 2097152 "$@" || return
    snap
    p0=$(info objstore_pool0)
    p1=$(info objstore_pool1)
    echo "INFO: $label: before: pool0 $p0"
    echo "INFO: $label: before: pool1 $p1"
    echo "$p0" | grep -q "node_requested=0,node_observed=0,.*heads_used=8" &&
        echo "$p1" | grep -q "node_requested=1,node_observed=1,.*heads_used=8"
    ok $? "$label: k0-k7 fill pool0 on node 0, k8-k15 pool1 on node 1"
    gets 8 15 5 >/dev/null
    snap
    rem=$(info numa_get_head_bytes_remote)
    [ "${rem:-0}" -gt 0 ]
    ok $? "$label: GETs of the hot set were served remotely (numa_get_head_bytes_remote=$rem)"
    t=0
    ex=0
    while [ $t -lt 15 ]; do # the coordinator ticks once a second by default
        snap
        ex=$(info numa_promotion_exchanges)
        [ "$want" -gt 0 ] && [ "${ex:-0}" -ge "$want" ] && break
        [ "$want" = 0 ] && [ $t -ge 5 ] && break
        sleep 0.2
        t=$((t + 1))
    done
    echo "INFO: $label: numa_promotion:$(info numa_promotion) exchanges=$ex bytes_copied=$(info numa_promotion_bytes_copied) longest_us=$(info numa_promotion_longest_exchange_us)"
    [ "${ex:-x}" = "$want" ]
    ok $? "$label: numa_promotion_exchanges=$ex (want $want)"
    [ "$(gets 0 15 1 | md5sum | cut -d' ' -f1)" = "$(expect_md5 0 15)" ]
    ok $? "$label: all 16 values intact"
    snap
    before=$(info numa_get_head_bytes_local)
    gets 8 15 1 >/dev/null
    snap
    after=$(info numa_get_head_bytes_local)
    p0=$(info objstore_pool0)
    echo "INFO: $label: after: pool0 $p0"
    if [ "$want" -gt 0 ]; then
        [ $((after - before)) -eq $((8 * 262144)) ]
        ok $? "$label: the hot set is now served from node 0 ($((after - before)) local bytes for 8 GETs)"
    else
        [ $((after - before)) -eq 0 ]
        ok $? "$label: frozen: the hot set is still served remotely ($((after - before)) local bytes for 8 GETs)"
    fi
    stop
}

# Remote bytes per GiB of GET payload served (the software accounting of
# INFO numa_get_head_bytes_*), for a node-local layout (every head in the
# serving node's pool) and a spread one (half the heads on node 1).
# Placement, not speed: benchmarks/numa_remote_bytes.sh prints these.
remote_case() { # label, want_remote (0: none, 1: some), flags...
    label=$1
    want=$2
    shift 2
    start_loaded "remote-bytes $label" --numa 0 --no-numa-promotion "$@" || return
    snap
    l0=$(info numa_get_head_bytes_local)
    r0=$(info numa_get_head_bytes_remote)
    gets 0 15 4 >/dev/null
    snap
    l=$(($(info numa_get_head_bytes_local) - l0))
    r=$(($(info numa_get_head_bytes_remote) - r0))
    per=$((r * 1024 / ((l + r) / 1048576)))
    echo "INFO: remote-bytes: $label: local=$l remote=$r remote_bytes_per_GiB=$per"
    if [ "$want" = 0 ]; then
        [ "$r" = 0 ] && [ "$l" -eq $((64 * 262144)) ]
    else
        [ "$r" -eq $((32 * 262144)) ] && [ "$l" -eq $((32 * 262144)) ]
    fi
    ok $? "remote-bytes $label: local=$l remote=$r for 64 GETs of 16 values"
    stop
}

if [ "$NODES" = 2 ]; then
    promo_case "promotion on" 1
    promo_case "--no-numa-promotion" 0 --no-numa-promotion
    remote_case node-local 0 --memory 8388608 --sub-memory 2097152
    remote_case spread 1 --memory 2097152 --sub-memory 2097152
else
    if start --numa 0 --perverse --memory 2097152 --sub-memory 2097152; then
        snap
        p0=$(info objstore_pool0)
        echo "INFO: perverse: pool0 $p0"
        echo "$p0" | grep -q "node_requested=2,node_observed=2,observed_pages=64/64"
        ok $? "--perverse --numa 0: preferred pool on node 2, the farthest of the ring"
        $C -x set k0 </tmp/v/0 >/dev/null
        snap
        p0=$(info objstore_pool0)
        echo "$p0" | grep -q "heads_used=1"
        ok $? "--perverse: the first large value goes to the farthest node's pool"
        [ "$(info numa_serving_node)" = 0 ] && [ "$(info numa_perverse)" = 1 ]
        ok $? "--perverse: serving node 0"
        stop
    else
        ok 1 "--perverse server starts"
    fi
fi
echo "server_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
