#!/bin/busybox sh
# /init of bench/fbt.sh's guest: measures dtrace's fbt against bpftrace and the
# libbpf floor inside one kernel and prints "SAMPLE <metric> <tool> <value>"
# lines for the host to tabulate, then "RESULT 1 fbt-bench PASS|FAIL".
# Kernel command line (environment): BENCH_ROUNDS (default 3), BENCH_N
# (reads per per-event measurement, a multiple of 20; default 100000).
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/usr/sbin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# bpftrace and libbpf find the traceable functions through tracefs.
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
ulimit -l unlimited
ROUNDS=${BENCH_ROUNDS:-3}
N=${BENCH_N:-100000}
B=/bench
ERRORS=0
echo "=== guest up: $(uname -r), bpftrace $(bpftrace --version 2>&1)"

# The script each tool runs for a case (wildcard: several hundred functions).
program() {
	case $1:$2 in
	dtrace:fentry | dtrace:kprobe) echo 'fbt::vfs_read:entry { @[execname] = count(); }' ;;
	bpftrace:fentry) echo 'kfunc:vfs_read { @[comm] = count(); }' ;;
	bpftrace:kprobe) echo 'kprobe:vfs_read { @[comm] = count(); }' ;;
	floor:fentry) echo fbt_fentry.bpf.o ;;
	floor:kprobe) echo fbt_kprobe.bpf.o ;;
	dtrace:wildcard) echo 'fbt::tcp_*:entry,fbt::security_*:entry { @ = count(); }' ;;
	bpftrace:wildcard) echo 'kprobe:tcp_*,kprobe:security_* { @ = count(); }' ;;
	floor:wildcard) echo fbt_wildcard.bpf.o ;;
	esac
}

# launch TOOL CASE once|trace [WRAPPER...]: runs the tool's script; "once"
# exits as soon as everything is attached, "trace" prints "ready" then and
# traces until SIGINT. The kprobe case forces dtrace off trampolines. Always
# run in a subshell (`&` or `$(...)`): it execs the tool, so that $! is the
# tool itself and SIGINT reaches it.
launch() {
	tool=$1 c=$2 mode=$3
	shift 3
	case $tool in
	dtrace)
		if [ "$mode" = once ]; then b='exit(0);'; else b='printf("ready\n");'; fi
		env=
		[ "$c" = kprobe ] && env=DTRACE_FBT_NO_FENTRY=1
		exec "$@" env $env dtrace -q -n "$(program dtrace "$c")" -n "BEGIN { $b }"
		;;
	bpftrace)
		if [ "$mode" = once ]; then b='exit();'; else b='printf("ready\n");'; fi
		exec "$@" bpftrace -e "BEGIN { $b } $(program bpftrace "$c")"
		;;
	floor)
		if [ "$mode" = once ]; then exec "$@" $B/floor --once "$B/$(program floor "$c")"; fi
		exec "$@" $B/floor "$B/$(program floor "$c")"
		;;
	esac
}

# Total run time (ns) of every loaded BPF program (kernel.bpf_stats_enabled).
bpf_run_ns() { bpftool prog show | grep -o 'run_time_ns [0-9]*' | awk '{ s += $2 } END { print s + 0 }'; }

# Start-up: a whole run that attaches and exits, wall ms and peak kB.
startup() {
	tool=$1 c=$2
	# measure exits with the tool's status: a run that failed is no sample.
	if (launch "$tool" "$c" once $B/measure > /tmp/m 2> /tmp/err) && out=$(tail -1 /tmp/m) && [ -n "$out" ]; then
		echo "SAMPLE start-$c $tool ${out% *}"
		echo "SAMPLE mem-$c $tool ${out#* }"
	else
		echo "BENCHERR $tool $c start-up failed: $(head -3 /tmp/err | tr '\n' '|')"
		ERRORS=$((ERRORS + 1))
	fi
}

# Per event: BPF run time per vfs_read of N one-byte reads, and the count
# each tool reports for the loop must be exactly N.
per_event() {
	tool=$1 c=$2
	rm -f /tmp/out /tmp/err # not the last run's "ready"
	launch "$tool" "$c" trace > /tmp/out 2> /tmp/err &
	P=$!
	i=0
	while ! grep -q ready /tmp/out 2> /dev/null; do
		i=$((i + 1))
		if [ $i -gt 1500 ] || ! kill -0 $P 2> /dev/null; then
			echo "BENCHERR $tool $c never started tracing: $(head -3 /tmp/err | tr '\n' '|')"
			ERRORS=$((ERRORS + 1))
			kill -INT $P 2> /dev/null
			wait $P
			return
		fi
		sleep 0.2
	done
	echo "--- $tool $c: tracing after $i waits"
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	before=$(bpf_run_ns)
	$B/loop read "$N" > /dev/null
	after=$(bpf_run_ns)
	echo 0 > /proc/sys/kernel/bpf_stats_enabled
	echo "--- $tool $c: $N reads done"
	kill -INT $P
	i=0
	while kill -0 $P 2> /dev/null && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
	if kill -0 $P 2> /dev/null; then
		echo "BENCHERR $tool $c did not stop on SIGINT"
		ERRORS=$((ERRORS + 1))
		kill -KILL $P
	fi
	wait $P
	seen=$(awk '$1 == "loop" || $1 == "@[loop]:" { print $NF }' /tmp/out | tail -1)
	if [ "$seen" != "$N" ]; then
		echo "BENCHERR $tool $c counted '$seen' reads of the loop, not $N: $(head -3 /tmp/err | tr '\n' '|')"
		head -20 /tmp/out
		ERRORS=$((ERRORS + 1))
	fi
	echo "SAMPLE bpf-$c $tool $(awk -v a="$after" -v b="$before" -v n="$N" 'BEGIN { printf "%.1f", (a - b) / n }')"
}

rotation() {
	case $(($1 % 3)) in
	0) echo dtrace bpftrace floor ;;
	1) echo bpftrace floor dtrace ;;
	2) echo floor dtrace bpftrace ;;
	esac
}

echo "SAMPLE functions-wildcard dtrace $(($(dtrace -l -n 'fbt::tcp_*:entry,fbt::security_*:entry' | wc -l) - 1))"
echo "SAMPLE functions-wildcard bpftrace $( (bpftrace -l 'kprobe:tcp_*'; bpftrace -l 'kprobe:security_*') | wc -l)"
for round in $(seq "$ROUNDS"); do
	echo "=== round $round (uptime $(cut -d' ' -f1 /proc/uptime)s)"
	for tool in $(rotation "$round"); do
		for c in fentry kprobe wildcard; do startup "$tool" "$c"; done
		for c in fentry kprobe; do per_event "$tool" "$c"; done
	done
done

if [ $ERRORS = 0 ]; then echo "RESULT 1 fbt-bench PASS"; else echo "RESULT 1 fbt-bench FAIL $ERRORS errors"; fi
echo "=== DONE uptime=$(cut -d' ' -f1 /proc/uptime)s"
poweroff -f
