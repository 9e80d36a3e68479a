#!/bin/sh
# Run the Tcl test suite: sh tests/run_tcl.sh [--server PATH] [--single FILE] [--tags -slow] ...
# Default server: ./build-release/goblin-core (see tests/test_helper.tcl).
cd "$(dirname "$0")/.." || exit 1
exec tclsh tests/test_helper.tcl "$@"
