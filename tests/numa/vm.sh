#!/usr/bin/env bash
# tests/numa/vm.sh -- run one program as root in an emulated NUMA machine.
#
#   bash tests/numa/vm.sh --setup
#   bash tests/numa/vm.sh [--nodes 2|4] [--append STR] [--extra SRC[:DEST]]...
#                         [--timeout SEC] [--log FILE] [--quiet] PROGRAM [ARGS...]
#
# The guest is QEMU under TCG (no KVM needed) booting Debian's stock kernel
# with a throw-away initramfs that holds busybox, PROGRAM and the --extra
# files. Its /init mounts proc, sysfs, devtmpfs, hugetlbfs and a tmpfs on
# /dev/shm, brings up lo, runs PROGRAM ARGS, prints "GOBLIN_VM_EXIT=<status>"
# on the serial console and powers the guest off. Placement (mbind,
# move_pages, per-node HugeTLB pools, numa_maps, the SLIT) is real in the
# guest kernel; speed is not, so no latency or bandwidth can be measured.
#
# --setup checks the host tools (qemu-system-x86, busybox-static, cpio,
# xz-utils: deps/install.sh installs them) and, once, fetches the kernel:
# the linux-image-amd64 .deb is downloaded with `apt-get download`, only its
# vmlinuz is kept, and the uncompressed ELF vmlinux is extracted from it so
# that QEMU boots it directly through the PVH entry point (the guest does not
# spend seconds of emulated CPU decompressing itself). The kernel is cached
# in $GOBLIN_VM_CACHE (default ${TMPDIR:-/tmp}/goblin-numa-vm).
#
# Options:
#   --nodes 2|4       2: one CPU and 1 GiB per node, distances 10 20 / 20 10
#                     (default); 4: one CPU and 512 MiB per node, the ring of
#                     a 4-socket machine, 10 20 30 20 / 20 10 20 30 /
#                     30 20 10 20 / 20 30 20 10
#   --append STR      more kernel command line (e.g. "hugepagesz=2M
#                     hugepages=0:2,1:4" for per-node HugeTLB pools)
#   --extra SRC[:DEST] put the file SRC in the guest at DEST (default: the
#                     same path); a dynamic executable brings its shared
#                     libraries and ld.so along. Repeatable.
#   --timeout SEC     stop the guest after SEC seconds (default 300)
#   --log FILE        keep the serial console in FILE
#   --quiet           do not copy the console to stdout
#
# Exit status: PROGRAM's exit status in the guest; 124 when the guest timed
# out; 125 when it never reported a status (no boot, a panic, PROGRAM not
# runnable); 126 on bad usage or a missing setup.
set -u -o pipefail

CACHE=${GOBLIN_VM_CACHE:-${TMPDIR:-/tmp}/goblin-numa-vm}
MEM_MIB=2048

die() {
    echo "vm.sh: $*" >&2
    exit 126
}

# ---------------------------------------------------------------- setup ---

missing_tools() {
    local t missing=""
    for t in qemu-system-x86_64 cpio xz timeout; do
        command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
    done
    [ -x /bin/busybox ] || missing="$missing /bin/busybox"
    echo "$missing"
}

# The newest cached kernel: the extracted vmlinux when there is one, else
# the vmlinuz it came from.
cached_kernel() {
    local k
    k=$(ls "$CACHE"/kernel/vmlinux-* 2>/dev/null | sort -V | tail -n 1)
    [ -n "$k" ] || k=$(ls "$CACHE"/kernel/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)
    [ -n "$k" ] && echo "$k"
}

# The ELF image inside a bzImage: the first compressed stream (xz, zstd,
# gzip or lz4, found by its magic) that decompresses to an ELF file.
extract_vmlinux() {
    local src=$1 out=$2 entry magic tool off
    for entry in 'xz -dcq:\xfd7zXZ\x00' 'zstd -dcq:\x28\xb5\x2f\xfd' \
        'gzip -dcq:\x1f\x8b\x08' 'lz4 -dcq:\x02\x21\x4c\x18'; do
        tool=${entry%%:*}
        magic=${entry#*:}
        command -v "${tool%% *}" >/dev/null 2>&1 || continue
        for off in $(LC_ALL=C grep -obUaP "$magic" "$src" 2>/dev/null | cut -d: -f1 | head -n 3); do
            tail -c +$((off + 1)) "$src" | $tool >"$out.tmp" 2>/dev/null
            if [ "$(head -c 4 "$out.tmp" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; then
                mv "$out.tmp" "$out"
                return 0
            fi
        done
    done
    rm -f "$out.tmp"
    return 1
}

fetch_kernel() {
    local dir=$CACHE/kernel pkg deb vmlinuz
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
    if [ -z "$pkg" ]; then
        apt-get update -qq >&2 || true
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
    fi
    [ -n "$pkg" ] || die "apt-cache does not know linux-image-amd64"
    mkdir -p "$dir/deb" || die "cannot create $dir"
    rm -f "$dir"/deb/*.deb
    # The download sandbox user (_apt) may not be able to write to $dir.
    (cd "$dir/deb" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) ||
        die "apt-get download $pkg failed"
    deb=$(ls "$dir"/deb/*.deb | head -n 1)
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/deb" --wildcards './boot/vmlinuz-*' ||
        die "no vmlinuz in $deb"
    vmlinuz=$(ls "$dir"/deb/boot/vmlinuz-* | head -n 1)
    mv "$vmlinuz" "$dir/" && rm -rf "$dir/deb"
    vmlinuz=$dir/$(basename "$vmlinuz")
    extract_vmlinux "$vmlinuz" "$dir/vmlinux-${vmlinuz##*/vmlinuz-}" ||
        echo "vm.sh: no ELF vmlinux in $vmlinuz; the guest boots the bzImage (slower)" >&2
}

setup() {
    local missing
    missing=$(missing_tools)
    [ -z "$missing" ] || die "missing:$missing (install qemu-system-x86 busybox-static cpio xz-utils: sh deps/install.sh)"
    cached_kernel >/dev/null || fetch_kernel
    echo "kernel: $(cached_kernel)"
}

# ------------------------------------------------------------- options ---

NODES=2 APPEND="" TIMEOUT=300 LOG="" QUIET=0
EXTRAS=()
while [ $# -gt 0 ]; do
    case $1 in
    --setup) setup; exit 0 ;;
    --nodes) NODES=${2:?}; shift 2 ;;
    --append) APPEND=${2?}; shift 2 ;;
    --extra) EXTRAS+=("${2:?}"); shift 2 ;;
    --timeout) TIMEOUT=${2:?}; shift 2 ;;
    --log) LOG=${2:?}; shift 2 ;;
    --quiet) QUIET=1; shift ;;
    --) shift; break ;;
    -*) die "unknown option $1" ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || die "usage: vm.sh [--setup | options PROGRAM [ARGS...]]"
PROG=$1
shift
[ -f "$PROG" ] && [ -x "$PROG" ] || die "$PROG is not an executable file"
missing=$(missing_tools)
[ -z "$missing" ] || die "missing:$missing (run vm.sh --setup)"
KERNEL=$(cached_kernel) || die "no kernel in $CACHE/kernel (run vm.sh --setup)"

case $NODES in
2) DIST=("10 20" "20 10") ;;
4) DIST=("10 20 30 20" "20 10 20 30" "30 20 10 20" "20 30 20 10") ;;
*) die "--nodes is 2 or 4" ;;
esac

# ----------------------------------------------------------- initramfs ---

mkdir -p "$CACHE" || die "cannot create $CACHE"
WORK=$(mktemp -d "$CACHE/guest.XXXXXX") || die "cannot create a directory in $CACHE"
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/root
mkdir -p "$ROOT"/bin "$ROOT"/dev "$ROOT"/proc "$ROOT"/sys "$ROOT"/tmp "$ROOT"/test "$ROOT"/root

# put SRC DEST: copy SRC to DEST in the image; for a dynamic executable also
# every shared library ldd names (by its absolute path, ld.so included).
put() {
    local lib
    mkdir -p "$ROOT$(dirname "$2")" && cp -L "$1" "$ROOT$2" || die "cannot copy $1"
    for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do
        [ -e "$ROOT$lib" ] && continue
        mkdir -p "$ROOT$(dirname "$lib")" && cp -L "$lib" "$ROOT$lib" || die "cannot copy $lib"
    done
}

put /bin/busybox /bin/busybox
NAME=$(basename "$PROG")
put "$PROG" "/test/$NAME"
for e in ${EXTRAS[@]+"${EXTRAS[@]}"}; do
    src=${e%%:*}
    dst=${e#*:}
    [ "$dst" = "$e" ] && dst=$(readlink -m "$src")
    [ -f "$src" ] || die "--extra $src is not a file"
    put "$src" "$dst"
done
for a in "$@"; do printf '%s\n' "$a"; done >"$ROOT/test/.args"

cat >"$ROOT/init" <<EOF
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
export PATH=/test:/usr/local/bin:/usr/bin:/bin HOME=/root
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t sysfs sysfs /sys
mkdir -p /dev/hugepages /dev/shm
mount -t hugetlbfs hugetlbfs /dev/hugepages
mount -t tmpfs tmpfs /dev/shm
ip link set lo up
echo "vm: \$(nproc) CPUs, nodes \$(cat /sys/devices/system/node/online), up \$(cut -d' ' -f1 /proc/uptime) s"
set --
while IFS= read -r a; do set -- "\$@" "\$a"; done </test/.args
cd /test
"/test/$NAME" "\$@"
rc=\$?
echo "GOBLIN_VM_EXIT=\$rc"
poweroff -f
EOF
chmod 755 "$ROOT/init"
(cd "$ROOT" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$WORK/initramfs" ||
    die "cpio failed"

# ------------------------------------------------------------------ run ---

NUMA=()
per_node=$((MEM_MIB / NODES))
for ((i = 0; i < NODES; i++)); do
    NUMA+=(-object "memory-backend-ram,id=mem$i,size=${per_node}M")
    NUMA+=(-numa "node,nodeid=$i,cpus=$i,memdev=mem$i")
done
# QEMU wants every node declared before the first distance.
for ((i = 0; i < NODES; i++)); do
    read -r -a row <<<"${DIST[$i]}"
    for ((j = 0; j < NODES; j++)); do
        [ "$i" = "$j" ] || NUMA+=(-numa "dist,src=$i,dst=$j,val=${row[$j]}")
    done
done
QEMU=(qemu-system-x86_64 -machine pc -accel tcg,thread=multi -cpu max
    -smp "$NODES,sockets=$NODES,cores=1,threads=1" -m "${MEM_MIB}M" "${NUMA[@]}"
    -kernel "$KERNEL" -initrd "$WORK/initramfs"
    -append "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off $APPEND"
    -nodefaults -no-user-config -display none -no-reboot -monitor none -serial stdio)

CONSOLE=${LOG:-$WORK/console}
if [ "$QUIET" = 1 ]; then
    timeout -k 5 "$TIMEOUT" "${QEMU[@]}" </dev/null 2>&1 | tr -d '\r' >"$CONSOLE"
else
    timeout -k 5 "$TIMEOUT" "${QEMU[@]}" </dev/null 2>&1 | tr -d '\r' | tee "$CONSOLE"
fi
qemu_rc=${PIPESTATUS[0]}
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
    echo "vm.sh: the guest did not finish in $TIMEOUT s" >&2
    exit 124
fi
rc=$(sed -n 's/^GOBLIN_VM_EXIT=\([0-9]*\)$/\1/p' "$CONSOLE" | tail -n 1)
if [ -z "$rc" ]; then
    echo "vm.sh: the guest reported no exit status (qemu exit $qemu_rc)" >&2
    exit 125
fi
exit "$rc"
