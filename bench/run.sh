#!/bin/bash
# Benchmarks dtrace side by side with Debian's bpftrace and a hand-written
# libbpf program (the floor), in one run, as ratios: this machine is shared
# and noisy, so only figures measured together mean something.
#
#   bash bench/run.sh            # ROUNDS=7 N=2000000 by default
#
# Per-event overhead: a loop makes N getppid() calls on CPU 1 (in batches,
# keeping the fastest batch's mean: noise only adds) with nothing attached,
# then with each tracer counting `@[execname] = count()` on getppid's entry;
# overhead = traced - untraced, per call. The same tracers'
# cost on *other* system calls: a getuid() loop while they trace getppid.
# Rounds alternate the tracers' order; the table gives median (min-max).
# Results go to stdout and to BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-7}
N=${N:-2000000}
OUT=target/bench
mkdir -p "$OUT"

# --- build what the benchmark needs -------------------------------------
bash scripts/install-deps.sh
need=()
command -v bpftrace >/dev/null || need+=(bpftrace)
[ -e /usr/include/bpf/libbpf.h ] || need+=(libbpf-dev)
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
cargo build --release --locked -q
arch=$(uname -m)
case "$arch" in x86_64) target_arch=x86 ;; aarch64) target_arch=arm64 ;; *) target_arch=$arch ;; esac
getppid_nr=$(printf '#include <sys/syscall.h>\nSYS_getppid\n' | cc -E -P - | tail -1)
cc -O2 -o "$OUT/loop" bench/loop.c
clang -O2 -g -target bpf -D__TARGET_ARCH_$target_arch -DTARGET_NR="$getppid_nr" \
	-I"vmlinux/$arch" -c bench/floor/count_comm.bpf.c -o "$OUT/count_comm.bpf.o"
cc -O2 -o "$OUT/count_comm" bench/floor/count_comm.c -lbpf

# bpftrace's tracepoint probes need tracefs.
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

DTRACE=target/release/dtrace
# Starts a tracer on CPU 0 (the loop runs on CPU 1), writing to
# $OUT/<name>.out; waits (bounded) for "ready".
start_tracer() {
	local name=$1
	case "$name" in
	dtrace) taskset -c 0 "$DTRACE" -q -n 'BEGIN { printf("ready\n"); }' \
		-n 'syscall::getppid:entry { @[execname] = count(); }' >"$OUT/$name.out" 2>&1 & ;;
	bpftrace) taskset -c 0 bpftrace -e 'BEGIN { printf("ready\n"); }
		tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }' >"$OUT/$name.out" 2>&1 & ;;
	floor) taskset -c 0 "$OUT/count_comm" "$OUT/count_comm.bpf.o" >"$OUT/$name.out" 2>&1 & ;;
	esac
	TRACER_PID=$!
	for _ in $(seq 200); do
		grep -q ready "$OUT/$name.out" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench: $name never became ready:" >&2
	cat "$OUT/$name.out" >&2
	exit 1
}

stop_tracer() {
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID" || true
}

run_loop() { taskset -c 1 "$OUT/loop" "$1" "$N"; }

# Each tracer must have counted exactly the loop's calls: a fast tracer
# that loses events would be no result at all.
check_count() {
	local name=$1 count
	count=$(awk '$1 == "loop" || $1 == "@[loop]:" { print $NF }' "$OUT/$name.out" | tail -1)
	if [ "$count" != "$N" ]; then
		echo "bench: $name counted '${count}' getppid calls of loop, not $N" >&2
		exit 1
	fi
}

tracers=(dtrace bpftrace floor)
: >"$OUT/samples"
: >"$OUT/base"
for round in $(seq "$ROUNDS"); do
	# Rotate the order so no tracer always runs first.
	for k in 0 1 2; do
		name=${tracers[$(((round + k) % 3))]}
		# The untraced figure is taken next to each traced one: the
		# machine's speed drifts over a run.
		base_ppid=$(run_loop getppid)
		base_uid=$(run_loop getuid)
		echo "$base_ppid" >>"$OUT/base"
		start_tracer "$name"
		ppid=$(run_loop getppid)
		uid=$(run_loop getuid)
		stop_tracer
		check_count "$name"
		awk -v n="$name" -v a="$ppid" -v b="$base_ppid" 'BEGIN { print n, "event", a - b }' >>"$OUT/samples"
		awk -v n="$name" -v a="$uid" -v b="$base_uid" 'BEGIN { print n, "other", a - b }' >>"$OUT/samples"
	done
done

# median (min-max) of one tracer's samples for one case
stat() {
	awk -v t="$1" -v c="$2" '$1 == t && $2 == c { print $3 }' "$OUT/samples" | sort -g |
		awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
			printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) print "n/a"; else printf "%.2f", a / b }'; }

row() {
	local case=$1 label=$2
	read -r d dmin dmax <<<"$(stat dtrace "$case")"
	read -r b bmin bmax <<<"$(stat bpftrace "$case")"
	read -r f fmin fmax <<<"$(stat floor "$case")"
	echo "| $label | $d ($dmin–$dmax) | $b ($bmin–$bmax) | $f ($fmin–$fmax) | $(ratio "$d" "$f") | $(ratio "$d" "$b") |"
}

base=$(sort -g "$OUT/base" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
report=$(
	cat <<EOF
## Aggregation per-event overhead ($(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs)

\`@[execname] = count()\` on getppid's entry; loop of $N calls on CPU 1
(untraced: $base ns/call; fastest of 20 batches); $ROUNDS alternating rounds; ns added per call,
median (min–max). Floor: bench/floor/count_comm.bpf.c (raw_tp sys_enter,
16-byte comm key, per-CPU hash). bpftrace $(bpftrace --version | awk '{ print $2 }').

| case | dtrace | bpftrace | floor | dtrace / floor | dtrace / bpftrace |
|---|---|---|---|---|---|
$(row event "each traced getppid()")
$(row other "each other syscall (getuid) while getppid is traced")
EOF
)
echo "$report"
{
	echo "# Benchmarks"
	echo
	echo "Produced by \`bash bench/run.sh\`; figures are only comparable within one run."
	echo
	echo "$report"
} >BENCHMARKS.md
