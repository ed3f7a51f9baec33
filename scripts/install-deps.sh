#!/usr/bin/env bash
# Installs what building and testing dtrace needs on Debian 12, if missing:
# clang (compiles bpf/*.bpf.c at build time), libelf/zlib headers and make
# (the vendored libbpf), pkg-config, mandoc and man-db (man page checks),
# dpkg-dev (cargo-deb's dependency computation), lintian (the package test), libc6-dbg (glibc's
# static functions, which ustack() names from its debug file), iproute2 and iputils-ping
# (the ip provider's tests make network namespaces and ping), gcc,
# systemtap-sdt-dev (<sys/sdt.h>) and python3 (the USDT tests build C
# programs with probes and trace Debian's python3), prometheus (promtool
# checks the metrics file) and prometheus-node-exporter (its textfile
# collector publishes the metrics file in a test) and cargo-deb
# (builds the Debian package; compiled once, a few minutes, then skipped),
# bpftool (the soak test checks that nothing stays loaded), qemu-system-x86,
# busybox-static, cpio, xz-utils and zstd (the kernel matrix boots Debian's
# kernels under qemu with a busybox initramfs).
set -euo pipefail
need=()
for pkg in bpftool clang llvm libelf-dev zlib1g-dev pkg-config make mandoc man-db dpkg-dev iproute2 iputils-ping gcc libc6-dev libc6-dbg systemtap-sdt-dev python3 lintian prometheus prometheus-node-exporter qemu-system-x86 busybox-static cpio xz-utils zstd; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need+=("$pkg")
done
if ((${#need[@]})); then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${need[@]}"
fi
command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }
cargo deb --version >/dev/null 2>&1 || cargo install cargo-deb --locked
