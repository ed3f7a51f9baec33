#!/bin/bash
# Kernel matrix: boot Debian's 5.10, 6.1 and 6.12 kernels under qemu (TCG, -smp 1) and run
# smoke tests with target/release/dtrace inside each guest.
#
# Usage: tests/kernel-matrix/run.sh [kernel-release-or-prefix ...]
#   With no arguments: the newest Debian 5.10 (bullseye), 6.1 (bookworm) and 6.12 (trixie)
#   cloud-amd64 kernels. Needs: qemu-system-x86 busybox-static cpio gcc systemtap-sdt-dev
#   xz-utils zstd (scripts/install-deps.sh installs them).
# env: GUEST_TIMEOUT (s, default 360: a guest runs 100-150 s on our machine, of which 6.1's
#   fbt-many, 662 fentry trampolines one by one, ~40 s; CI machines can be slower), MEM (default
#   512M), EXTRA_APPEND (more kernel command line; NAME=value words reach the guest's /init as
#   environment variables, e.g.
#   EXTRA_APPEND="DTMATRIX_EXTRA=1 DTRACE_DEBUG_LIBBPF=1" for diagnostic tests and libbpf logs),
#   GUEST_INIT (the guest's /init, default guest-init.sh), GUEST_FILES (a directory whose tree is
#   copied onto the guest's root: bench/fbt.sh brings bpftrace and the floor this way), LOGS
#   (the output directory, default target/kernel-matrix/logs)
# Output: $LOGS/<krel>.log (serial console), $LOGS/summary.txt (one line per test).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
W=$TARGET/kernel-matrix
LOGS=${LOGS:-$W/logs}
mkdir -p "$W"/{debs,k,build} "$LOGS"
cd "$ROOT"

# --- 1. the release binary (build only when missing or older than the sources) -------------
BIN=$TARGET/release/dtrace
if [ ! -x "$BIN" ] || [ -n "$(find src bpf d-library vmlinux build.rs Cargo.toml Cargo.lock -newer "$BIN" -print -quit)" ]; then
  echo "== cargo build --release --locked"
  cargo build --release --locked
fi

# --- 2. kernels: Debian packages unpacked under target/kernel-matrix/k/ ----------------------
# bookworm (6.1) comes from the configured archive, bullseye (5.10) and trixie (6.12) through a
# private apt configuration that reuses the archive URI of this machine.
fetch_kernels() {
  local URI APTOPT B O T
  URI=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  URI=${URI:-http://deb.debian.org/debian}
  mkdir -p "$W"/apt/etc "$W"/apt/lists/partial "$W"/apt/cache/archives/partial
  printf 'deb %s bullseye main\ndeb %s trixie main\n' "$URI" "$URI" > "$W"/apt/etc/sources.list
  APTOPT="-o Dir::Etc::sourcelist=$W/apt/etc/sources.list -o Dir::Etc::sourceparts=/nonexistent \
 -o Dir::State::Lists=$W/apt/lists -o Dir::Cache=$W/apt/cache -o Dir::State::status=/dev/null"
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get $APTOPT update -qq
  newest() { apt-cache $2 search "^linux-image-$1" 2>/dev/null | awk '{print $1}' \
      | grep -v -- '-dbg$\|-unsigned$' | sort -V | tail -1; }
  B=$(newest '6\.1\.[0-9-]*-cloud-amd64$' "")
  O=$(newest '5\.10\.[0-9-]*-cloud-amd64$' "$APTOPT")
  T=$(newest '6\.12\.[0-9.+a-z-]*-cloud-amd64$' "$APTOPT")
  echo "== kernels: $O $B $T"
  (cd "$W"/debs && apt-get download "$B" && apt-get $APTOPT download "$O" "$T")
}
if [ -z "$(ls "$W"/debs/*.deb 2>/dev/null)" ]; then fetch_kernels; fi
for f in "$W"/debs/*.deb; do
  d=$(basename "$f" | cut -d_ -f1)
  [ -d "$W/k/$d" ] || { mkdir -p "$W/k/$d.tmp"; dpkg-deb -x "$f" "$W/k/$d.tmp"; mv "$W/k/$d.tmp" "$W/k/$d"; }
done
mapfile -t KERNELS < <(ls "$W"/k | sed -n 's/^linux-image-//p' | grep -v '\.tmp$' | sort -V)
if [ $# -gt 0 ]; then
  # a release, or the first (oldest) one that starts with the argument: 6.1.0, 6.12
  WANTED=()
  for a in "$@"; do
    k=
    for c in "${KERNELS[@]}"; do case $c in "$a"*) k=$c; break ;; esac; done
    [ -n "$k" ] || { echo "no kernel $a among: ${KERNELS[*]}" >&2; exit 1; }
    WANTED+=("$k")
  done
  KERNELS=("${WANTED[@]}")
fi

# --- 3. a small disk for block I/O (sysinfo bread) -----------------------------------------
[ -f "$W"/build/disk.img ] || { truncate -s 64M "$W"/build/disk.img;
  dd if=/dev/urandom of="$W"/build/disk.img bs=1M count=8 conv=notrunc status=none; }

# A second disk whose every read fails (qemu's blkdebug): io:::done's B_ERROR and b_error.
[ -f "$W"/build/err.img ] || truncate -s 8M "$W"/build/err.img
printf '[inject-error]\nevent = "read_aio"\nerrno = "5"\n' > "$W"/build/blkdebug.conf

# --- 4. initramfs per kernel ---------------------------------------------------------------
mkinitrd() {
  local KREL=$1 KDIR MODROOT R f m lib
  KDIR=$W/k/linux-image-$KREL
  MODROOT=$(ls -d "$KDIR"/lib/modules/"$KREL" "$KDIR"/usr/lib/modules/"$KREL" 2>/dev/null | head -1 || true)
  R=$W/build/rootfs-$KREL
  rm -rf "$R"; mkdir -p "$R"/{bin,proc,sys,dev,tmp,lib/modules}
  cp /bin/busybox "$R"/bin/busybox
  cp "$BIN" "$R"/bin/dtrace
  # the dynamic loader and every shared library dtrace needs, at the same paths
  for lib in $(ldd "$BIN" | grep -o '/[^ ]*'); do
    mkdir -p "$R$(dirname "$lib")"; cp -L "$lib" "$R$lib"
  done
  : > "$R"/lib/modules/order
  for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk; do
    f=$(find "$MODROOT"/kernel/drivers -name "$m.ko*" 2>/dev/null | head -1)
    [ -n "$f" ] || continue   # built in or absent
    case $f in
      *.xz)  xz -dc "$f" > "$R"/lib/modules/$m.ko ;;
      *.zst) zstd -qdc "$f" > "$R"/lib/modules/$m.ko ;;
      *)     cp "$f" "$R"/lib/modules/$m.ko ;;
    esac
    echo $m >> "$R"/lib/modules/order
  done
  # a static program with USDT probes (<sys/sdt.h>, from systemtap-sdt-dev)
  gcc -O2 -static -o "$R"/bin/usdtprog "$HERE"/usdt-prog.c
  cp "${GUEST_INIT:-$HERE/guest-init.sh}" "$R"/init; chmod +x "$R"/init
  [ -z "${GUEST_FILES:-}" ] || cp -a "$GUEST_FILES"/. "$R"/
  (cd "$R" && find . | cpio -o -H newc --quiet) | gzip -1 > "$W"/build/initrd-$KREL.cpio.gz
  echo "   initrd $(stat -c %s "$W"/build/initrd-$KREL.cpio.gz) bytes, modules: $(tr '\n' ' ' < "$R"/lib/modules/order)"
}

# --- 5. one guest at a time ----------------------------------------------------------------
SUMMARY=$LOGS/summary.txt
: > "$SUMMARY"
FAILS=0
for KREL in "${KERNELS[@]}"; do
  echo "== $KREL"
  mkinitrd "$KREL"
  LOG=$LOGS/$KREL.log
  T0=$(date +%s.%N)
  set +e
  timeout "${GUEST_TIMEOUT:-360}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max \
    -m "${MEM:-512M}" -smp 1 -nographic -no-reboot \
    -kernel "$W/k/linux-image-$KREL/boot/vmlinuz-$KREL" -initrd "$W/build/initrd-$KREL.cpio.gz" \
    -append "console=ttyS0 panic=-1 quiet loglevel=4 ${EXTRA_APPEND:-}" \
    -drive file="$W"/build/disk.img,if=virtio,format=raw,cache=none \
    -drive if=virtio,format=raw,cache=none,file.driver=blkdebug,file.config="$W"/build/blkdebug.conf,file.image.filename="$W"/build/err.img \
    -nic none > "$LOG" 2>&1
  RC=$?
  set -e
  T1=$(date +%s.%N)
  sed -i 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\r$//' "$LOG"
  WALL=$(awk "BEGIN{printf \"%.1f\", $T1 - $T0}")
  grep -E '^(=== |RESULT )' "$LOG" || true
  grep '^RESULT ' "$LOG" | sed "s/^RESULT /$KREL /" >> "$SUMMARY" || true
  n=$(grep -c '^RESULT .* PASS' "$LOG" || true)
  f=$(grep -c '^RESULT .* FAIL' "$LOG" || true)
  [ "$n" -eq 0 ] && [ "$f" -eq 0 ] && f=1
  grep -q '^=== DONE' "$LOG" || { echo "$KREL guest did not finish (qemu rc=$RC)" | tee -a "$SUMMARY"; f=$((f+1)); }
  FAILS=$((FAILS + f))
  echo "$KREL: qemu_rc=$RC wall=${WALL}s pass=$n fail=$f log=$LOG" | tee -a "$SUMMARY"
done
echo "== summary ($SUMMARY)"; cat "$SUMMARY"
[ "$FAILS" -eq 0 ]
