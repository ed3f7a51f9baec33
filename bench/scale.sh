#!/bin/bash
# How cost grows with the work, side by side with Debian's bpftrace, in one
# run (figures only compare within a run): each case at 1x, 10x and 100x.
#
#   bash bench/scale.sh        # ROUNDS=3 by default; a few minutes
#
# Aggregation keys: a loop makes K getppid() calls on CPU 1 and each tool
# counts them by a key that differs at every call (`@[i++] = count()`), so
# the aggregation holds K keys. Measured: the time from SIGINT to the
# tool's exit, which is printing K rows (reading the map, merging the CPUs,
# sorting, formatting), the peak resident memory, and the rows printed (must
# be K). Then `printa` of the same aggregation from a tick: the time from
# the event that asks for it to the line printed after it.
#
# Probes attached: the first P functions of libc (1, 10, 100, 1000) as pid
# provider entry probes (bpftrace: uprobes) on a sleeping process; measured
# is the time from start to BEGIN's "ready" (attach) and from SIGINT to exit
# (detach).
#
# Each figure is the median of ROUNDS rounds. Results go to stdout and to
# BENCHMARKS.md (section "Scale").
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
source bench/setup.sh
cc -O2 -o "$OUT/loop" bench/loop.c
source bench/report.sh
SAMPLES=$OUT/scale-samples
: >"$SAMPLES"
sample() { echo "$1 $2 $3" >>"$SAMPLES"; }
now_ms() { date +%s%3N; }

TRACER_PID=
trap '[ -n "$TRACER_PID" ] && kill "$TRACER_PID" 2>/dev/null || true; [ -n "${SLEEPER:-}" ] && kill "$SLEEPER" 2>/dev/null || true' EXIT

# Starts "$@" under /usr/bin/time (peak memory to $OUT/scale.mem) on CPU 0
# and waits for "ready"; sets TRACER_PID to the tool's own process.
start() {
	: >"$OUT/scale.out"
	taskset -c 0 /usr/bin/time -f %M -o "$OUT/scale.mem" "$@" >"$OUT/scale.out" 2>"$OUT/scale.err" &
	local timer=$!
	for _ in $(seq 2400); do
		grep -q '^ready' "$OUT/scale.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q '^ready' "$OUT/scale.out" || { echo "bench: $1 never became ready:" >&2; cat "$OUT/scale.err" >&2; exit 1; }
	TRACER_PID=$(pgrep -P "$timer")
	TIMER_PID=$timer
}

# Sends SIGINT and waits (in this shell: its child); STOP_MS is the
# milliseconds it took to exit.
stop() {
	local t0
	t0=$(now_ms)
	kill -INT "$TRACER_PID"
	wait "$TIMER_PID" || true
	STOP_MS=$(($(now_ms) - t0))
	TRACER_PID=
}

echo "bench: aggregation keys" >&2
for round in $(seq "$ROUNDS"); do
	for keys in 10000 100000 1000000; do
		for tool in dtrace bpftrace; do
			# Each tool's map sized for the keys (32 bytes a key is room for
			# 1.3-2x as many in dtrace's).
			if [ "$tool" = dtrace ]; then
				start "$DTRACE" -q -x aggsize=$((32 * keys)) -n 'BEGIN { printf("ready\n"); }' \
					-n 'syscall::getppid:entry /execname == "loop"/ { @[i++] = count(); }'
			else
				BPFTRACE_MAP_KEYS_MAX=$((keys * 3 / 2)) start bpftrace -e 'BEGIN { printf("ready\n"); }
					tracepoint:syscalls:sys_enter_getppid /comm == "loop"/ { @[@i] = count(); @i = @i + 1; }'
			fi
			taskset -c 1 "$OUT/loop" getppid "$keys" >/dev/null
			stop
			sample "print-$keys" "$tool" "$STOP_MS"
			sample "mem-$keys" "$tool" "$(cat "$OUT/scale.mem")"
			# dtrace: "  KEY  COUNT", bpftrace: "@[KEY]: COUNT".
			rows=$(grep -c '^ *\(@\[\)\?[0-9][0-9]*\]\?:\? *[0-9][0-9]*$' "$OUT/scale.out" || true)
			if [ "$rows" != "$keys" ]; then
				echo "bench: $tool printed $rows rows for $keys keys:" >&2
				head -3 "$OUT/scale.out" "$OUT/scale.err" >&2
				# dtrace must print every key; bpftrace's figure stands as it is.
				[ "$tool" = dtrace ] && sample "print-$keys" "$tool" fail
			fi
		done
	done
done

echo "bench: printa in a tick" >&2
for round in $(seq "$ROUNDS"); do
	for keys in 10000 100000 1000000; do
		# After the loop, one getuid() arms a 10 ms tick that prints the
		# aggregation and then a marker; timed from the getuid to the marker
		# (the consumer drains every 10 ms).
		start "$DTRACE" -q -x switchrate=10ms -x aggsize=$((32 * keys)) -n 'BEGIN { printf("ready\n"); }' \
			-n 'syscall::getppid:entry /execname == "loop"/ { @[i++] = count(); }' \
			-n 'syscall::getuid:entry /execname == "loop"/ { go = 1; }' \
			-n 'tick-10ms /go == 1/ { go = 2; printa(@); printf("printed\n"); }'
		taskset -c 1 "$OUT/loop" getppid "$keys" >/dev/null
		t0=$(now_ms)
		taskset -c 1 "$OUT/loop" getuid 20 >/dev/null
		for _ in $(seq 12000); do
			grep -q '^printed' "$OUT/scale.out" && break
			sleep 0.01
		done
		sample "printa-$keys" dtrace $(($(now_ms) - t0))
		stop
	done
done

echo "bench: probes attached" >&2
sleep 1000 &
SLEEPER=$!
LIBC=$(awk '/libc\.so/ { print $6; exit }' /proc/$SLEEPER/maps)
# Functions with a pid probe (dtrace -l) that bpftrace can also name.
mapfile -t FUNCS < <("$DTRACE" -l -n "pid$SLEEPER:libc.so.6::entry" 2>/dev/null | awk 'NR > 1 { print $4 }' |
	grep -E '^[a-z][a-z0-9_]*$' | sort -u | head -1000)
for round in $(seq "$ROUNDS"); do
	for probes in 1 10 100 1000; do
		dlist=$(printf "pid$SLEEPER:libc.so.6:%s:entry," "${FUNCS[@]:0:$probes}")
		blist=$(printf "uprobe:$LIBC:%s," "${FUNCS[@]:0:$probes}")
		for tool in dtrace bpftrace; do
			t0=$(now_ms)
			if [ "$tool" = dtrace ]; then
				start "$DTRACE" -q -n 'BEGIN { printf("ready\n"); }' -n "${dlist%,} { @ = count(); }"
			else
				BPFTRACE_MAX_PROBES=2000 start bpftrace -p "$SLEEPER" -e "BEGIN { printf(\"ready\\n\"); } ${blist%,} { @ = count(); }"
			fi
			sample "attach-$probes" "$tool" $(($(now_ms) - t0))
			stop
			sample "detach-$probes" "$tool" "$STOP_MS"
		done
	done
done

report=$(
	cat <<EOF
Produced by \`bash bench/scale.sh\` (the method is in its header). Run of
$(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -r), $(nproc) CPUs; bpftrace $(bpftrace --version | awk '{ print $2 }');
$ROUNDS rounds, median (min–max). The floor column is empty: no
hand-written program does these.

| case | dtrace | bpftrace | floor | dtrace / floor | dtrace / bpftrace | target: ≤ bpftrace |
|---|---|---|---|---|---|---|
$(row print-10000 'print 10^4 keys at exit (ms)' 'd <= b')
$(row print-100000 'print 10^5 keys at exit (ms)' 'd <= b')
$(row print-1000000 'print 10^6 keys at exit (ms)' 'd <= b')
$(row mem-10000 'peak memory, 10^4 keys (kB)' 'd <= b')
$(row mem-100000 'peak memory, 10^5 keys (kB)' 'd <= b')
$(row mem-1000000 'peak memory, 10^6 keys (kB)' 'd <= b')
$(row printa-10000 'printa of 10^4 keys in a tick (ms)' '')
$(row printa-100000 'printa of 10^5 keys in a tick (ms)' '')
$(row printa-1000000 'printa of 10^6 keys in a tick (ms)' '')
$(row attach-1 'attach 1 pid probe (ms, start to ready)' 'd <= b')
$(row attach-10 'attach 10 pid probes' 'd <= b')
$(row attach-100 'attach 100 pid probes' 'd <= b')
$(row attach-1000 'attach 1000 pid probes' 'd <= b')
$(row detach-1 'detach 1 pid probe (ms, SIGINT to exit)' 'd <= b')
$(row detach-10 'detach 10 pid probes' 'd <= b')
$(row detach-100 'detach 100 pid probes' 'd <= b')
$(row detach-1000 'detach 1000 pid probes' 'd <= b')
EOF
)
echo "$report"
{
	echo "## Scale: aggregation keys and probes attached ($(date -u '+%Y-%m-%d'))"
	echo
	echo "$report"
} >"$OUT/scale.md"
replace_section "Scale" "$OUT/scale.md"
