#!/bin/sh
# Differential test: goblin-core against redis-server 7.0, reply by reply.
#   tests/diff/run.sh [--server ./build-release/goblin-core]
#                     [--reference /usr/bin/redis-server]
#                     [--commands-per-family 20000] [--seed N] [--family F]
# See tests/diff/difftest.py --help for the other options.
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/difftest.py" "$@"
