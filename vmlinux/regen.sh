#!/bin/bash
# Regenerates the CO-RE headers that the BPF C programs are compiled against.
#
#   x86_64/vmlinux.h   from this machine's kernel BTF (/sys/kernel/btf/vmlinux);
#                      run it on an x86_64 host.
#   aarch64/vmlinux.h  from Debian's arm64 kernel package
#                      linux-image-<abi>-arm64-unsigned: its /boot/vmlinuz-* is a
#                      raw arm64 Image (not compressed, not ELF, no section
#                      headers), so the .BTF blob is located by its header
#                      (magic 0xeB9F, version 1, hdr_len 24) and cut out by the
#                      lengths in that header.
#
# Needs: root (apt, and to enable the arm64 dpkg architecture temporarily),
# bpftool, apt-get, dpkg-deb, od, grep -P.
#
# Usage: vmlinux/regen.sh [x86_64] [aarch64]      (default: both)
#   ARM64_PKG=linux-image-6.1.0-56-arm64-unsigned  pins the arm64 package; by
#   default the one the linux-image-arm64 meta-package currently depends on.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
targets=${*:-x86_64 aarch64}
tmp=$(mktemp -d)
added_arch=
cleanup() {
  rm -rf "$tmp"
  if [ -n "$added_arch" ]; then dpkg --remove-architecture arm64 || true; apt-get update -qq || true; fi
}
trap cleanup EXIT

gen_x86_64() {
  [ "$(uname -m)" = x86_64 ] || { echo "x86_64: run on an x86_64 host" >&2; return 1; }
  bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$tmp/x86_64.h"
  mv "$tmp/x86_64.h" "$here/x86_64/vmlinux.h"
  echo "x86_64/vmlinux.h: from running kernel $(uname -r)" >&2
}

# extract_btf <image> <out>: the largest well-formed BTF blob inside <image>
extract_btf() {
  local img=$1 out=$2 best=0 bestoff= off hl toff tlen soff slen total
  for off in $(LC_ALL=C grep -obUaP '\x9f\xeb\x01\x00\x18\x00\x00\x00' "$img" | cut -d: -f1); do
    read -r hl toff tlen soff slen < <(od -An -v -w20 -tu4 -j $((off + 4)) -N 20 "$img")
    [ "$hl" = 24 ] && [ "$toff" = 0 ] && [ "$soff" = "$tlen" ] || continue
    total=$((hl + soff + slen))
    if [ "$total" -gt "$best" ]; then best=$total; bestoff=$off; fi
  done
  [ -n "$bestoff" ] || { echo "no BTF found in $img" >&2; return 1; }
  dd if="$img" of="$out" iflag=skip_bytes,count_bytes skip="$bestoff" count="$best" bs=1M status=none
  [ "$(stat -c %s "$out")" = "$best" ] || { echo "short BTF read" >&2; return 1; }
  echo "BTF at offset $bestoff, $best bytes" >&2
}

gen_aarch64() {
  if ! dpkg --print-foreign-architectures | grep -qx arm64 && [ "$(dpkg --print-architecture)" != arm64 ]; then
    dpkg --add-architecture arm64; added_arch=1
  fi
  apt-get update -qq
  local pkg=${ARM64_PKG:-}
  if [ -z "$pkg" ]; then
    pkg=$(apt-cache depends linux-image-arm64:arm64 | sed -n 's/^ *Depends: \(linux-image-[0-9.]*-[0-9]*-arm64\)\(:arm64\)\?$/\1-unsigned/p' | head -1)
  fi
  [ -n "$pkg" ] || { echo "cannot resolve the arm64 kernel package" >&2; return 1; }
  (cd "$tmp" && apt-get download -q "$pkg:arm64" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
  local deb; deb=$(ls "$tmp"/"$pkg"_*_arm64.deb)
  dpkg-deb -x "$deb" "$tmp/root"
  local img; img=$(ls "$tmp"/root/boot/vmlinuz-*)
  if [ "$(head -c2 "$img" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
    zcat "$img" > "$tmp/Image"; img=$tmp/Image
  fi
  extract_btf "$img" "$tmp/vmlinux.btf"
  bpftool btf dump file "$tmp/vmlinux.btf" format c > "$tmp/aarch64.h"
  mv "$tmp/aarch64.h" "$here/aarch64/vmlinux.h"
  echo "aarch64/vmlinux.h: from $(basename "$deb")" >&2
}

for t in $targets; do "gen_$t"; done
