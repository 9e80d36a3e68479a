#!/bin/sh
# Client compatibility tests: the clients people already use, run
# unchanged against one goblin-core.
#
#   sh tests/clients/run.sh            # needs ./build-release/goblin-core (make -j2)
#   GOBLIN_SERVER=path sh tests/clients/run.sh
#   GOBLIN_KEEP_TMP=1 ...              # keep tests/tmp/clients.* (logs, server log)
#   CLIENT_SUITES="redis-py hiredis"   # run only these suites
#
# Suites: compat-doc, redis-cli, redis-benchmark, hiredis, redis-py, ioredis,
# node-redis. Each scenario prints "passed: SUITE/NAME" or
# "failed: SUITE/NAME: CAUSE"; a missing command is named with its family,
# e.g. "failed: redis-cli/eval: scripting (EVAL) not implemented". Nothing is
# skipped: a missing tool or feature is a failure with its cause. The last
# line is "N passed, M failed"; the exit status is non-zero when M > 0.
#
# Installs nothing except the pinned Node packages (tests/clients/node/
# package-lock.json) into tests/clients/node/node_modules when missing.
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
HERE=tests/clients
SERVER=${GOBLIN_SERVER:-./build-release/goblin-core}
PY=/usr/bin/python3 # Debian's python3, which has python3-redis
SUITES=${CLIENT_SUITES:-"compat-doc redis-cli redis-benchmark hiredis redis-py ioredis node-redis"}
start_ts=$(date +%s)

mkdir -p tests/tmp
TMP=$(mktemp -d "$ROOT/tests/tmp/clients.XXXXXX") || exit 1
RESULTS=$TMP/results
: >"$RESULTS"
SERVER_PID=""

cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    if [ -z "$GOBLIN_KEEP_TMP" ]; then rm -rf "$TMP"; else echo "clients: kept $TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

record() { echo "$1" | tee -a "$RESULTS"; }

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

ping_ok() { [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ]; }

start_server() {
    tries=0
    while [ $tries -lt 3 ]; do
        tries=$((tries + 1))
        PORT=$(free_port)
        mkdir -p "$TMP/data"
        "$SERVER" --port "$PORT" --bind 127.0.0.1 --dir "$TMP/data" --save '' --cores 2 \
            --enable-debug-command yes >>"$TMP/server.log" 2>&1 &
        SERVER_PID=$!
        i=0
        while [ $i -lt 100 ]; do
            ping_ok && return 0
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
            i=$((i + 1))
        done
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=""
    done
    return 1
}

# --- cause normalisation ---------------------------------------------------
# "ERR unknown command 'sadd', ..." becomes "sets (SADD) not implemented", the
# family taken from the compatibility document's section headings.
FAMILY_DOC=docs/compatibility.md
normalize() {
    awk -v doc="$FAMILY_DOC" '
    BEGIN {
        fam = "command"
        while ((getline line < doc) > 0) {
            if (line ~ /^## /) { fam = substr(line, 4); continue }
            if (line ~ /^\| `[A-Z]/) {
                name = substr(line, 4); name = substr(name, 1, index(name, "`") - 1)
                family[name] = fam
            }
        }
    }
    function quoted(s, marker,    i, rest) {
        i = index(s, marker); if (i == 0) return ""
        rest = substr(s, i + length(marker))
        return substr(rest, 1, index(rest, "\047") - 1)
    }
    /^failed: / {
        rest = substr($0, 9)                        # "SUITE/NAME: CAUSE"
        scen = rest; sub(/: .*/, "", scen)
        cmd = toupper(quoted($0, "unknown command \047"))
        if (cmd == "") {
            sc = quoted($0, "unknown subcommand \047")
            if (sc != "") {
                i = index($0, "Try "); c = substr($0, i + 4); sub(/ .*/, "", c)
                if (i > 0) cmd = toupper(c " " sc)
            }
        }
        if (cmd != "") {
            f = (cmd in family) ? family[cmd] : "command"
            print "failed: " scen ": " f " (" cmd ") not implemented"
            next
        }
        print; next
    }
    /^passed: / { print }
    '
}

# --- suite runner ------------------------------------------------------------
# run_suite NAME LIMIT_SECONDS SCENARIO_NAMES CMD...: runs CMD, keeps its
# passed:/failed: lines, and turns a crash, a hang or a silent exit into a
# failure. SCENARIO_NAMES are reported failed when the suite cannot start.
run_suite() {
    name=$1 limit=$2 scen=$3
    shift 3
    t0=$(date +%s)
    timeout -k 5 "$limit" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    rc=$?
    normalize <"$TMP/$name.out" >"$TMP/$name.res"
    cat "$TMP/$name.res" >>"$RESULTS"
    cat "$TMP/$name.res"
    n=$(grep -c '^[a-z]*: ' "$TMP/$name.res")
    last=$(grep -v '^ *$' "$TMP/$name.err" | tail -1 | cut -c1-200)
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        record "failed: $name: suite timed out after $limit s ($n scenarios reported)"
    elif [ "$n" -eq 0 ]; then
        for s in $scen; do record "failed: $name/$s: suite exited with status $rc before reporting: $last"; done
    elif [ $rc -ne 0 ] && ! grep -q '^failed: ' "$TMP/$name.res"; then
        record "failed: $name: exited with status $rc: $last"
    fi
    echo "  ($name: $(($(date +%s) - t0)) s)"
    if ! ping_ok; then
        record "failed: server: goblin-core stopped answering during $name (see server log); restarted"
        tail -5 "$TMP/server.log" | sed 's/^/  server: /'
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        start_server || { record "failed: server: could not restart goblin-core"; SERVER_PID=""; }
    fi
}

fail_all() { # SUITE "SCENARIOS" CAUSE
    for s in $2; do record "failed: $1/$s: $3"; done
}

# --- the suites --------------------------------------------------------------
suite_compat_doc() {
    if ! "$PY" utils/gen_compat_doc.py --goblin "$SERVER" --goblin-port "$PORT" >"$TMP/compat.md" 2>"$TMP/compat.err"; then
        fail_all compat-doc "up-to-date command-info-matches command-docs-match" "utils/gen_compat_doc.py failed: $(tail -1 "$TMP/compat.err")"
        return
    fi
    FAMILY_DOC=$TMP/compat.md
    if [ ! -f docs/compatibility.md ]; then
        record "failed: compat-doc/up-to-date: docs/compatibility.md missing; run utils/gen_compat_doc.py > docs/compatibility.md"
    elif cmp -s "$TMP/compat.md" docs/compatibility.md; then
        record "passed: compat-doc/up-to-date"
    else
        rows=$(diff docs/compatibility.md "$TMP/compat.md" | grep '^>' | grep -o '^> | `[^`]*`' | sed 's/^> | //' | head -5 | tr '\n' ' ')
        record "failed: compat-doc/up-to-date: docs/compatibility.md is stale (changed rows: ${rows:-header/summary}); regenerate: utils/gen_compat_doc.py > docs/compatibility.md"
    fi
    diffs=$(grep 'COMMAND INFO differs\|COMMAND INFO is nil' "$TMP/compat.md" | grep -o '^| `[^`]*`' | sed 's/^| //' | head -8 | tr '\n' ' ')
    if [ -z "$diffs" ]; then
        record "passed: compat-doc/command-info-matches"
    else
        record "failed: compat-doc/command-info-matches: Goblin's COMMAND INFO differs from Redis 7.0 for $diffs"
    fi
    diffs=$(grep 'COMMAND DOCS differs' "$TMP/compat.md" | grep -o '^| `[^`]*`' | sed 's/^| //' | head -8 | tr '\n' ' ')
    if [ -z "$diffs" ]; then
        record "passed: compat-doc/command-docs-match"
    else
        record "failed: compat-doc/command-docs-match: Goblin's COMMAND DOCS differs from Redis 7.0 for $diffs"
    fi
}

suite_hiredis() {
    scen="sync-api pipelined-append async-libevent"
    if ! command -v cc >/dev/null 2>&1; then fail_all hiredis "$scen" "no C compiler (cc)"; return; fi
    if ! cc -std=gnu11 -O1 -Wall -Wextra -o "$TMP/hiredis_test" "$HERE/hiredis_test.c" -lhiredis -levent >"$TMP/hiredis-build.log" 2>&1; then
        fail_all hiredis "$scen" "build failed (libhiredis-dev/libevent-dev?): $(grep -m1 -i error "$TMP/hiredis-build.log" | cut -c1-160)"
        return
    fi
    run_suite hiredis 60 "$scen" "$TMP/hiredis_test" "$PORT" 7
}

NODE_OK=""
node_setup() {
    NODE_OK=no
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        NODE_CAUSE="node/npm not installed (Debian nodejs; deps/install.sh)"
        return
    fi
    dir=$HERE/node
    # Install the pinned packages when missing or when the lock file changed.
    if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.goblin-lock-stamp" 2>/dev/null; then
        echo "clients: installing Node packages (npm ci) into $dir/node_modules"
        if ! (
            flock 9
            cmp -s "$dir/package-lock.json" "$dir/node_modules/.goblin-lock-stamp" 2>/dev/null && exit 0
            cd "$dir" && { timeout 300 npm ci --no-audit --no-fund || timeout 300 npm install --no-audit --no-fund; } &&
                cp package-lock.json node_modules/.goblin-lock-stamp
        ) 9>"$ROOT/tests/tmp/clients-npm.lock" >"$TMP/npm.log" 2>&1; then
            NODE_CAUSE="npm ci failed: $(grep -m1 -i 'err' "$TMP/npm.log" | cut -c1-160)"
            return
        fi
    fi
    NODE_OK=yes
}

IOREDIS_SCEN="strings hashes zsets lists sets pipeline-no-transaction pipeline-transaction watch-optimistic-locking pubsub-events pubsub-introspection blocking-pops scan-stream worker-threads auto-pipelining"
NODEREDIS_SCEN="strings hashes zsets lists sets pipeline-no-transaction pipeline-transaction watch-optimistic-locking pubsub-listeners pubsub-introspection blocking-pops scan-iterator isolation-pool worker-threads"
CLI_SCEN="interactive-hints scan-pattern bigkeys memkeys latency stat pipe-1M resp3 monitor eval"
BENCH_SCEN="default-q pipelined-P16-threads2"
PY_SCEN="strings hashes zsets lists sets pipeline-no-transaction pipeline-transaction watch-optimistic-locking pubsub-listen pubsub-get-message blocking-pops scan-iter connection-pool-threads"

# --- main --------------------------------------------------------------------
echo "clients: goblin-core = $SERVER"
if [ ! -x "$SERVER" ]; then
    record "failed: server: $SERVER not built (make -j2)"
elif ! command -v redis-cli >/dev/null 2>&1; then
    record "failed: server: redis-cli not installed (Debian redis-tools; deps/install.sh)"
elif ! start_server; then
    record "failed: server: goblin-core did not start: $(tail -2 "$TMP/server.log" | tr '\n' ' ')"
else
    echo "clients: goblin-core pid $SERVER_PID on port $PORT"
    for s in $SUITES; do
        [ -n "$SERVER_PID" ] || { record "failed: $s: no server"; continue; }
        echo "--- $s"
        case $s in
            compat-doc) suite_compat_doc ;;
            redis-cli) run_suite redis-cli 180 "$CLI_SCEN" sh "$HERE/cli_test.sh" "$PORT" "$TMP" cli ;;
            redis-benchmark) run_suite redis-benchmark 240 "$BENCH_SCEN" sh "$HERE/cli_test.sh" "$PORT" "$TMP" bench ;;
            hiredis) suite_hiredis ;;
            redis-py)
                if [ -x "$PY" ]; then
                    run_suite redis-py 120 "$PY_SCEN" "$PY" "$HERE/redis_py_test.py" "$PORT" 5
                else
                    fail_all redis-py "$PY_SCEN" "$PY not found (Debian python3, python3-redis)"
                fi
                ;;
            ioredis | node-redis)
                [ -n "$NODE_OK" ] || node_setup
                if [ "$s" = ioredis ]; then scen=$IOREDIS_SCEN file=ioredis_test.js db=8; else scen=$NODEREDIS_SCEN file=node_redis_test.js db=9; fi
                if [ "$NODE_OK" = yes ]; then
                    run_suite "$s" 120 "$scen" node "$HERE/node/$file" "$PORT" "$db"
                else
                    fail_all "$s" "$scen" "$NODE_CAUSE"
                fi
                ;;
            *) record "failed: $s: unknown suite" ;;
        esac
    done
fi

passed=$(grep -c '^passed: ' "$RESULTS")
failed=$(grep -c '^failed: ' "$RESULTS")
echo
if [ "$failed" -gt 0 ]; then
    echo "clients: failing scenarios:"
    grep '^failed: ' "$RESULTS" | sed 's/^failed: /  /'
fi
echo "clients: runtime $(($(date +%s) - start_ts)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
