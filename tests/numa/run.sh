#!/bin/sh
# tests/numa/run.sh -- real placement of the object store's head pools in
# emulated 2- and 4-node QEMU guests.
#
#   sh tests/numa/run.sh [-v]
#
# Builds tests/numa/placement_test.c statically with src/mem/{objstore,numa,
# hugetlb,smallobj,ssdtail}.c (-lnuma -luring) and runs it as root in the
# guests of tests/numa/vm.sh:
#   1. 2 nodes, no reserved HugeTLB pool        (ordinary-page fallback)
#   2. 2 nodes, hugepagesz=2M hugepages=0:2,1:4 (per-node HugeTLB, a short pool)
#   3. 4 nodes, the 10/20/30/20 ring            (sub-pool order, --perverse)
#   4. 4 nodes, ring, hugepages=0:2,2:4         (HugeTLB on some nodes only)
# placement_test also checks promotion (block exchange, scores, decay, the
# coordinator thread, --no-numa-promotion). In guests 1 and 3,
# tests/numa/server_test.sh then drives build-release/goblin-core over
# loopback with redis-cli: a hot set on node 1 moves to node 0 (INFO
# numa_promotion_exchanges, values intact) and stays with
# --no-numa-promotion; --perverse --numa 0 maps the pool on node 2.
# Each guest checks pools with move_pages and /proc/self/numa_maps; see
# placement_test.c. The host packages (qemu-system-x86, busybox-static,
# cpio) come from deps/install.sh; `vm.sh --setup` fetches the guest kernel
# once (apt-get download). If the setup cannot be done, that is reported and
# counted as a failure. Ends with "numa: N passed, M failed" (checks of all
# guests, plus one failure per VM that did not report); exit 1 on any failure.
# -v prints every PASS line too (default: FAIL lines and per-VM summaries).
cd "$(dirname "$0")/../.." || exit 1
VERBOSE=0
[ "${1:-}" = -v ] && VERBOSE=1
OUT=tests/tmp/numa
mkdir -p "$OUT"
VM=tests/numa/vm.sh
pass=0
fail=0

finish() {
    echo "numa: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}
give_up() {
    echo "numa: FAIL: $*"
    fail=$((fail + 1))
    finish
}

# --- one-time VM setup (host tools, the guest kernel) -------------------
if ! bash "$VM" --setup >"$OUT/setup.log" 2>&1; then
    tail -3 "$OUT/setup.log"
    give_up "VM setup failed (log: $OUT/setup.log)"
fi
[ -f /usr/lib/x86_64-linux-gnu/libnuma.a ] || give_up "libnuma.a missing (apt-get install libnuma-dev)"
[ -f /usr/lib/x86_64-linux-gnu/liburing.a ] || give_up "liburing.a missing (apt-get install liburing-dev)"

# --- build ---------------------------------------------------------------
CC=${CC:-gcc}
if ! $CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wno-missing-field-initializers -Isrc -static \
    -o "$OUT/placement_test" tests/numa/placement_test.c src/mem/objstore.c src/mem/numa.c src/mem/hugetlb.c src/mem/reclaim.c \
    src/mem/smallobj.c src/mem/ssdtail.c -lnuma -luring -lpthread >"$OUT/build.log" 2>&1; then
    grep -v -e getaddrinfo -e 'affinity' "$OUT/build.log" | head -20
    give_up "cannot build the static placement_test (log: $OUT/build.log)"
fi

# --- guests --------------------------------------------------------------
RING="10 20 30 20 / 20 10 20 30 / 30 20 10 20 / 20 30 20 10"
# vm NAME NSUMMARIES vm.sh-args... : one guest; NSUMMARIES is how many
# "<x>_test: N passed, M failed" lines the guest must print.
vm() {
    name=$1
    want_lines=$2
    shift 2
    log=$OUT/$name.log
    start=$(date +%s)
    timeout 170 bash "$VM" --quiet --timeout 150 --log "$log" "$@" >"$OUT/$name.host" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    [ -f "$log" ] || : >"$log"
    if [ "$VERBOSE" = 1 ]; then
        grep -a -e '^PASS:' -e '^FAIL:' -e '^INFO: ' "$log" | sed "s/^/  [$name] /"
    else
        grep -a -e '^FAIL:' "$log" | sed "s/^/  [$name] /"
    fi
    lines=$(grep -a -E '^(placement|server)_test: [0-9]+ passed, [0-9]+ failed' "$log")
    n=$(printf '%s\n' "$lines" | grep -c passed)
    p=0
    f=0
    for x in $(printf '%s\n' "$lines" | sed -E 's/^[a-z_]+: ([0-9]+) passed, ([0-9]+) failed.*/\1:\2/'); do
        p=$((p + ${x%:*}))
        f=$((f + ${x#*:}))
    done
    pass=$((pass + p))
    fail=$((fail + f))
    if [ "$n" -lt "$want_lines" ]; then
        echo "numa: $name: FAIL: the guest reported $n of $want_lines results (vm.sh exit $rc, ${secs}s):"
        tail -5 "$OUT/$name.host" "$log" 2>/dev/null | sed 's/^/    /'
        fail=$((fail + 1))
    elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
        echo "numa: $name: FAIL: VM exit status $rc with no failed check"
        fail=$((fail + 1))
    fi
    echo "numa: $name: $p passed, $f failed (VM exit $rc, ${secs}s)"
}

# The server part drives goblin-core over loopback with redis-cli.
[ -x build-release/goblin-core ] || make -j2 release >"$OUT/make.log" 2>&1 ||
    give_up "cannot build build-release/goblin-core (log: $OUT/make.log)"
CLI=$(command -v redis-cli) || give_up "redis-cli missing (apt-get install redis-tools; deps/install.sh)"
SRV="--extra build-release/goblin-core:/usr/local/bin/goblin-core --extra $CLI:/usr/local/bin/redis-cli"
SRV="$SRV --extra $OUT/placement_test:/usr/local/bin/placement_test"

vm 2node 2 --nodes 2 $SRV tests/numa/server_test.sh 2 --nodes 2 --dist "10 20 / 20 10"
vm 2node-huge 1 --nodes 2 --append "hugepagesz=2M hugepages=0:2,1:4" \
    "$OUT/placement_test" --nodes 2 --hugepages 0:2,1:4
vm 4node-ring 2 --nodes 4 $SRV tests/numa/server_test.sh 4 --nodes 4 --dist "$RING"
vm 4node-ring-huge 1 --nodes 4 --append "hugepagesz=2M hugepages=0:2,2:4" \
    "$OUT/placement_test" --nodes 4 --dist "$RING" --hugepages 0:2,2:4
finish
