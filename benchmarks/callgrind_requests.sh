#!/bin/bash
# Instructions the whole server spends on a fixed request mix, under
# valgrind's callgrind (repeatable where wall clock is not):
#   benchmarks/callgrind_requests.sh BIN PORT OUT [redis-benchmark args...]
# starts BIN (goblin-core or redis-server) on PORT under callgrind, runs
# redis-benchmark (default: -n 100000 -P 16 -c 10 -r 100000 -t set,get),
# stops it with SHUTDOWN NOSAVE and prints callgrind's summary line.
set -e
BIN=$1 PORT=$2 OUT=$3
shift 3 || { echo "usage: $0 BIN PORT OUT [redis-benchmark args]" >&2; exit 2; }
[ $# -gt 0 ] || set -- -n 100000 -P 16 -c 10 -r 100000 -t set,get
EXTRA=()
case "$(basename "$BIN")" in goblin-*) EXTRA=(--cores 1 --no-memcache yes) ;; esac
rm -f "$OUT"
valgrind --tool=callgrind --callgrind-out-file="$OUT" "$BIN" --port "$PORT" --save '' --appendonly no "${EXTRA[@]}" \
    >/dev/null 2>&1 &
for _ in $(seq 1 120); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.5; done
redis-benchmark -p "$PORT" -q "$@" >/dev/null
redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
wait
grep -h '^summary:' "$OUT"
