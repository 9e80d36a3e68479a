#!/bin/sh
# tests/fuzz/run.sh -- the short fuzzing pass of `make test`.
#
#   sh tests/fuzz/run.sh [--seconds N] [--seed S] [--jobs J]
#
# Builds the libFuzzer targets (`make fuzz-build`: tests/fuzz/fuzz_*.c with
# clang, ASan+UBSan, against the server objects) and runs each one for N
# seconds (default 15, FUZZ_SECONDS) from its committed seed corpus
# tests/fuzz/corpus/<target>, J targets at a time (default JOBS or 2).
# Invariant: a target passes only when libFuzzer exits 0 -- no crash, ASan/
# UBSan report, leak, per-input timeout (10 s) or out-of-memory; any of those
# is a failure, and the reproducer is kept in build-fuzz/crashes/. Inputs
# that grow coverage go to build-fuzz/corpus/<target> (not the tree; copy
# the useful ones into the seed corpus by hand). A build failure (e.g. clang
# missing) fails every target. The last line is "fuzz: N passed, M failed"
# where N + M is the number of targets.
cd "$(dirname "$0")/../.." || exit 1
SECONDS_PER=${FUZZ_SECONDS:-15}
SEED=0
JOBS=${JOBS:-2}
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) SECONDS_PER=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--seed S] [--jobs J]" >&2; exit 2 ;;
    esac
done

targets=""
for f in tests/fuzz/fuzz_*.c; do
    t=${f#tests/fuzz/fuzz_}
    targets="$targets ${t%.c}"
done
ntargets=$(echo $targets | wc -w)
logs=build-fuzz/logs
mkdir -p "$logs" build-fuzz/crashes

if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1; then
    echo "fuzz: ${FUZZ_CC:-clang} not found (deps/install.sh installs clang)"
    echo "fuzz: 0 passed, $ntargets failed"
    exit 1
fi
if ! make -j"$JOBS" fuzz-build >"$logs/build.log" 2>&1; then
    tail -20 "$logs/build.log"
    echo "fuzz: build failed, see $logs/build.log"
    echo "fuzz: 0 passed, $ntargets failed"
    exit 1
fi

# Runs one target in the background; its exit status lands in $logs/<t>.rc.
start_target() {
    t=$1
    opts=""
    # The config parser reports errors on stderr; libFuzzer keeps its own.
    [ "$t" = config ] && opts="-close_fd_mask=2"
    mkdir -p "build-fuzz/corpus/$t"
    rm -f "$logs/$t.rc"
    (
        timeout -k 10 $((SECONDS_PER + 120)) ./build-fuzz/fuzz-"$t" \
            -max_total_time="$SECONDS_PER" -timeout=10 -seed="$SEED" \
            -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$t-" $opts \
            "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" >"$logs/$t.log" 2>&1
        echo $? >"$logs/$t.rc"
    ) &
}

pass=0
fail=0
set -- $targets
while [ $# -gt 0 ]; do
    batch=""
    i=0
    while [ $# -gt 0 ] && [ $i -lt "$JOBS" ]; do
        echo "fuzz-$1: $SECONDS_PER s from tests/fuzz/corpus/$1 (seed $SEED)"
        start_target "$1"
        batch="$batch $1"
        i=$((i + 1))
        shift
    done
    wait
    for t in $batch; do
        rc=$(cat "$logs/$t.rc" 2>/dev/null || echo missing)
        runs=$(grep -E '^stat::number_of_executed_units:' "$logs/$t.log" | awk '{print $2}')
        cov=$(grep -E '^#[0-9]+.*(DONE|cov:)' "$logs/$t.log" | tail -1 | grep -oE 'cov: [0-9]+' )
        if [ "$rc" = 0 ]; then
            pass=$((pass + 1))
            echo "PASS fuzz-$t: ${runs:-?} runs, ${cov:-cov: ?}"
        else
            fail=$((fail + 1))
            echo "FAIL fuzz-$t: exit status $rc; log $logs/$t.log; reproducer in build-fuzz/crashes/$t-*"
            grep -E 'ERROR: |SUMMARY: |runtime error:|Test unit written' "$logs/$t.log" | head -8
        fi
    done
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
