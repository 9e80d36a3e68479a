#!/bin/sh
# numa_remote_bytes.sh -- remote bytes per GiB of GET payload served, for a
# node-local layout (every 256 KiB head in the serving node's pool) and a
# spread one (half of them on the other node), measured by goblin-core's
# own accounting (INFO numa_get_head_bytes_local/remote) inside the 2-node
# QEMU guest of tests/numa. This shows placement, never speed: the guest's
# NUMA nodes are emulated.
#
#   sh benchmarks/numa_remote_bytes.sh
cd "$(dirname "$0")/.." || exit 1
sh tests/numa/run.sh -v 2>&1 | grep -a 'remote-bytes' | sed 's/^ *\[[^]]*\] *//'
