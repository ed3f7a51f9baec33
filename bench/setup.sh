# Sourced by bench/run.sh and bench/io.sh: installs what the benchmarks
# need (bpftrace, bpftool, libbpf-dev), builds the release binary, the
# floor's user space and every floor program (bench/floor/*.bpf.c) into
# $OUT, and mounts tracefs for bpftrace's tracepoint probes.
OUT=target/bench
mkdir -p "$OUT"
bash scripts/install-deps.sh
need=()
command -v bpftrace >/dev/null || need+=(bpftrace)
command -v bpftool >/dev/null || need+=(bpftool)
[ -e /usr/include/bpf/libbpf.h ] || need+=(libbpf-dev)
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
cargo build --release --locked -q
arch=$(uname -m)
case "$arch" in x86_64) target_arch=x86 ;; aarch64) target_arch=arm64 ;; *) target_arch=$arch ;; esac
getppid_nr=$(printf '#include <sys/syscall.h>\nSYS_getppid\n' | cc -E -P - | tail -1)
cc -O2 -o "$OUT/floor" bench/floor/floor.c -lbpf
for src in bench/floor/*.bpf.c; do
	clang -O2 -g -target bpf -D__TARGET_ARCH_$target_arch -DTARGET_NR="$getppid_nr" \
		-I"vmlinux/$arch" -c "$src" -o "$OUT/$(basename "$src" .c).o"
done
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
DTRACE=$PWD/target/release/dtrace
