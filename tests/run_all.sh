#!/bin/sh
# The whole suite, as `make test` runs it. Each runner prints its own
# "N passed, M failed" line; this script adds them up and ends with the total.
# GOBLIN_TEST_QUICK=1 skips the sanitizer pass and the fuzzing (for a fast
# local loop). Fuzzing: each libFuzzer target of tests/fuzz for FUZZ_SECONDS
# (20); soak: tests/soak/soak.py for SOAK_SECONDS (60) on the release build
# and SOAK_SAN_SECONDS (45) on the ASan and TSan builds.
cd "$(dirname "$0")/.." || exit 1
JOBS=${JOBS:-2}
# Randomized runners take this seed (printed, reproducible); set
# GOBLIN_SEED=random for a fresh one.
SEED=${GOBLIN_SEED:-20261129}
[ "$SEED" = random ] && SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "seed: $SEED"
total_pass=0
total_fail=0
failed_runners=""
log_dir=tests/tmp/logs
mkdir -p "$log_dir"

# Each stage's wall time is printed after it ("=== name done: N s"), and the
# whole suite's at the end: the suite is to stay under 30 minutes.
suite_t0=$(date +%s)
stage_t0=$suite_t0
stage_done() { t=$(date +%s); echo "=== $1 done: $((t - stage_t0)) s"; stage_t0=$t; }

run() {
    name=$1
    shift
    stage_t0=$(date +%s)
    echo "=== $name: $*"
    "$@" 2>&1 | tee "$log_dir/$name.log"
    rc=$?
    stage_done "$name"
    # tee hides the exit code in POSIX sh: read the runner's closing line.
    line=$(grep -E '^([A-Za-z_-]+: )?[0-9]+ passed, [0-9]+ failed' "$log_dir/$name.log" | tail -1)
    if [ -z "$line" ]; then
        echo "$name: no result line (runner crashed?)"
        total_fail=$((total_fail + 1))
        failed_runners="$failed_runners $name"
        return
    fi
    p=$(echo "$line" | sed -E 's/^([A-Za-z_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2/')
    f=$(echo "$line" | sed -E 's/^([A-Za-z_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\3/')
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    [ "$f" -gt 0 ] && failed_runners="$failed_runners $name"
}

set -e
make -j"$JOBS" release build-release/unit-tests
set +e
stage_done build

# The folder layering of src/ (and, first, that the check can fail).
run layers-selftest python3 tests/layers/check_layers.py --selftest
run layers python3 tests/layers/check_layers.py --dot tests/tmp/layers.dot
run directives python3 tests/config/check_directives.py
run unit ./build-release/unit-tests
run tcl tclsh tests/test_helper.tcl --server ./build-release/goblin-core --seed "$SEED"
# The files that exercise the transport again, with a read and a write system call per
# connection (--net epoll) instead of the workers' io_uring batches (--net auto's choice
# on this kernel): connections, pipelining, blocking, pauses, limits, streamed and
# direct replies, pushes. The data-type and exactness files do not depend on it.
EPOLL_FILES=""
for f in client_state pause limits querybuf busy_script malformed objstore tracking introspection2 \
         server protocol robustness multi pubsub; do
    EPOLL_FILES="$EPOLL_FILES --single $f"
done
# shellcheck disable=SC2086
run tcl-epoll tclsh tests/test_helper.tcl --server ./build-release/goblin-core --seed "$SEED" --server-args "--net epoll" $EPOLL_FILES
run diff sh tests/diff/run.sh --server ./build-release/goblin-core --seed "$SEED"
# The same commands over values around a 16 KiB head, tails on an SSD dir.
run diff-objstore sh tests/diff/run.sh --server ./build-release/goblin-core --seed "$SEED" --family bigstrings \
    --server-arg=--ram-head --server-arg=16K --server-arg=--io-chunk --server-arg=16K \
    --server-arg=--write-io-chunk --server-arg=64K --server-arg=--ssd-dir --server-arg='{dir}/ssd'
run persist python3 tests/persist/test_persist.py
# The HTTP/1.1 front-end and its origin fill (--http-port, --mirror).
run http /usr/bin/python3 tests/http/test_http.py
# The memcache front-end: differential against memcached, cross-protocol, limits, SSD tails.
run memcache /usr/bin/python3 tests/memcache/test_memcache.py --server ./build-release/goblin-core --seed "$SEED"
# The multi-part AOF: files, loading, torn tails, BGREWRITEAOF, against redis-server 7.0.
run aof python3 tests/persist/test_aof.py
# kill -9 under load, a full disk, EIO, rewrites under load and random load, each restarted from its AOF.
run aof-durability python3 tests/persist/test_aof_durability.py --seed "$SEED"
# DEBUG DIGEST / DIGEST-VALUE byte for byte against redis-server 7.0.
run digest python3 tests/persist/test_digest.py --seed "$SEED"
run numa sh tests/numa/run.sh
if [ -x tests/clients/run.sh ]; then run clients sh tests/clients/run.sh; fi
# Replication both ways with redis-server 7.0: full and partial syncs, chains, promotion,
# WAIT, FAILOVER, Sentinel (after the clients: its ioredis check uses their Node packages).
run repl python3 tests/repl/test_repl.py
# Redis Cluster: CLUSTER commands and redirections against redis-server in cluster mode,
# redis-cli --cluster create/check/add-node, mixed goblin/redis clusters, failover.
run cluster python3 tests/cluster/test_cluster.py
# TLS against redis-server 7.0 with the same options: clients (redis-cli, redis-py, node-redis,
# ioredis), certificates, reloading, hostile peers, replication over TLS.
run tls python3 tests/tls/test_tls.py
# The soak (120 clients, a quarter of them over TLS, --cores 2, every family, then a model check) runs
# on the release build here and on the ASan and TSan builds below.
run soak python3 tests/soak/soak.py --server ./build-release/goblin-core --duration "${SOAK_SECONDS:-60}" --seed "$SEED" \
    --tls-fraction 0.25

# build NAME TARGETS...: make them; a failure counts as one and names its log.
build() {
    name=$1
    shift
    stage_t0=$(date +%s)
    make -j"$JOBS" "$@" >"$log_dir/$name.log" 2>&1 && stage_done "$name" && return 0
    stage_done "$name"
    echo "$name failed; see $log_dir/$name.log"
    total_fail=$((total_fail + 1))
    failed_runners="$failed_runners $name"
    return 1
}

if [ -z "$GOBLIN_TEST_QUICK" ]; then
    run fuzz sh tests/fuzz/run.sh --seconds "${FUZZ_SECONDS:-20}" --seed "$SEED" --jobs "$JOBS"
    if build asan-build asan build-asan/unit-tests; then
        run unit-asan ./build-asan/unit-tests
        ASAN_OPTIONS=detect_leaks=1 run tcl-asan tclsh tests/test_helper.tcl --server ./build-asan/goblin-core --tags -slow --seed "$SEED"
        ASAN_OPTIONS=detect_leaks=1 run soak-asan python3 tests/soak/soak.py --server ./build-asan/goblin-core \
            --duration "${SOAK_SAN_SECONDS:-45}" --seed "$SEED"
    fi
    # ThreadSanitizer: the soak must report no data race. TSan's own
    # deadlock detector cannot follow more than 64 mutexes held at once
    # (a DEL of many keys holds many shard locks): it is turned off.
    if build tsan-build tsan; then
        TSAN_OPTIONS=detect_deadlocks=0 run soak-tsan python3 tests/soak/soak.py --server ./build-tsan/goblin-core \
            --duration "${SOAK_SAN_SECONDS:-45}" --seed "$SEED"
    fi
fi

# A failing runner's own lines that name what failed, repeated here so the
# last lines of the output (all a CI summary may keep) say which test it was.
echo
for name in $failed_runners; do
    f="$log_dir/$name.log"
    [ -f "$f" ] || continue
    echo "--- $name: what failed (whole log: $f)"
    grep -a -E -A3 '^\[err\]|FAIL|^failed: |=== MISMATCH|ERROR: (Address|Leak|Thread)Sanitizer|runtime error: ' "$f" | cut -c1-300 | head -16
done
[ -n "$failed_runners" ] && echo "failing runners:$failed_runners"
echo "suite: $(( $(date +%s) - suite_t0 )) s"
echo "all: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
