#!/bin/sh
# Install the Debian packages Goblin builds against and tests with, when
# missing. Run as root (apt-get); otherwise print what to install.
# lua-cjson-dev, lua-bitop-dev: the cjson and bit libraries of scripting.
# libclang-rt-dev: the libFuzzer/ASan runtimes of clang (only "recommended"
# by clang, and recommends are not installed here) for tests/fuzz/run.sh.
# qemu-system-x86, busybox-static, cpio, xz-utils: the emulated NUMA guests
# of tests/numa/vm.sh (which fetches its guest kernel itself).
# memcached, varnish, nginx, wrk, curl: the peers and the origin of the
# memcache and HTTP front-ends (their differential tests and benchmarks);
# libhttp-parser-dev: the HTTP/1.1 parser of the HTTP front-end.
# libxxhash-dev: XXH3, the hash of the HTTP front-end's ETags.
# libfuse3-dev, fuse3: benchmarks/slowflush_fs.c, the slow-flush file system
# of aof_bench.py --flush-delay-us.
set -e
PKGS="gcc make pkg-config liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libevent-dev libjemalloc-dev libhiredis-dev libnuma-dev liburing-dev libssl-dev tcl tcl-dev redis-server redis-tools python3 python3-redis python3-matplotlib clang libclang-rt-dev nodejs tmux qemu-system-x86 busybox-static cpio xz-utils strace memcached varnish nginx wrk curl libhttp-parser-dev libxxhash-dev libfuse3-dev fuse3"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "goblin: missing Debian packages:$missing" >&2
    echo "goblin: run as root, or: sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "goblin: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
apt-get install -y -qq --no-install-recommends $missing >/dev/null
# The Debian packages may start services (redis-server on 6379, memcached on
# 11211, nginx on 80, varnish on 6081); the tests start their own servers on
# free ports, so stop them where they were started.
for s in redis-server memcached nginx varnish varnishncsa; do
    if command -v systemctl >/dev/null 2>&1; then systemctl stop "$s" >/dev/null 2>&1 || true; fi
    if command -v service >/dev/null 2>&1; then service "$s" stop >/dev/null 2>&1 || true; fi
done
exit 0
