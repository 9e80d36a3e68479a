#!/bin/sh
# Install the Debian packages Goblin builds against and tests with, when
# missing. Run as root (apt-get); otherwise print what to install.
# lua-cjson-dev, lua-bitop-dev: the cjson and bit libraries of scripting.
# libclang-rt-dev: the libFuzzer/ASan runtimes of clang (only "recommended"
# by clang, and recommends are not installed here) for tests/fuzz/run.sh.
# qemu-system-x86, busybox-static, cpio, xz-utils: the emulated NUMA guests
# of tests/numa/vm.sh (which fetches its guest kernel itself).
set -e
PKGS="gcc make pkg-config liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libevent-dev libjemalloc-dev libhiredis-dev libnuma-dev liburing-dev tcl tcl-dev redis-server redis-tools python3 python3-redis python3-matplotlib clang libclang-rt-dev nodejs tmux qemu-system-x86 busybox-static cpio xz-utils strace"
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
# The Debian redis-server package may start a service on 6379; the tests start
# their own servers on free ports, so stop it where it was started.
if command -v systemctl >/dev/null 2>&1; then systemctl stop redis-server >/dev/null 2>&1 || true; fi
if command -v service >/dev/null 2>&1; then service redis-server stop >/dev/null 2>&1 || true; fi
exit 0
