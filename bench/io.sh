#!/bin/bash
# The io provider's cost per block I/O request, side by side with Debian's
# bpftrace and a hand-written libbpf program (the floor), in one run, as
# ratios. The workload reads a 64 MiB file with O_DIRECT in 4 KiB requests
# (16,384 requests) on CPU 1 while the tracer runs on CPU 0; the figure is
# the BPF run time (kernel.bpf_stats_enabled) of the tracer's own programs
# per request, the median of ROUNDS rounds (min and max beside it).
#
#   bash bench/io.sh        # ROUNDS=5 by default; about a minute
#
# Cases: bytes by program (`@[execname] = sum(args[0]->b_bcount)`, which
# all three can do) and bytes by file (`@[args[2]->fi_pathname] = ...`,
# which only dtrace can do: its figure is compared with the floor of the
# first case). Results go to stdout and to BENCHMARKS.md (section "io").
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
source bench/setup.sh

FILE=/var/tmp/dtrace-bench-io.dat
REQUESTS=16384
[ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" = $((REQUESTS * 4096)) ] ||
	dd if=/dev/urandom of="$FILE" bs=4k count=$REQUESTS status=none
trap 'sysctl -qw kernel.bpf_stats_enabled=0; [ -n "${TRACER_PID:-}" ] && kill "$TRACER_PID" 2>/dev/null || true' EXIT

command_for() {
	case "$1:$2" in
	dtrace:comm) CMD=("$DTRACE" -q -n 'BEGIN { printf("ready\n"); }' -n 'io:::start { @[execname] = sum(args[0]->b_bcount); }') ;;
	bpftrace:comm) CMD=(bpftrace -e 'BEGIN { printf("ready\n"); } tracepoint:block:block_rq_issue { @[comm] = sum(args->bytes); }') ;;
	floor:comm) CMD=("$OUT/floor" "$OUT/io_bytes.bpf.o") ;;
	dtrace:file) CMD=("$DTRACE" -q -n 'BEGIN { printf("ready\n"); }' -n 'io:::start { @[args[2]->fi_pathname] = sum(args[0]->b_bcount); }') ;;
	esac
}

# BPF run time (ns) of the programs process $1 holds (its descriptors'
# prog_id in /proc/PID/fdinfo: programs and links).
run_ns() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u | tr '\n' ' ')
	bpftool prog show -j | python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[1].split()}
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin) if p["id"] in ids))' "$ids"
}

SAMPLES=$OUT/io-samples
: >"$SAMPLES"
for round in $(seq "$ROUNDS"); do
	for tc in dtrace:comm bpftrace:comm floor:comm dtrace:file; do
		command_for "${tc%%:*}" "${tc#*:}"
		taskset -c 0 "${CMD[@]}" >"$OUT/run.out" 2>"$OUT/run.err" &
		TRACER_PID=$!
		for _ in $(seq 300); do grep -q ready "$OUT/run.out" 2>/dev/null && break; sleep 0.1; done
		grep -q ready "$OUT/run.out" || { echo "bench: $tc never started:" >&2; cat "$OUT/run.err" >&2; exit 1; }
		sysctl -qw kernel.bpf_stats_enabled=1
		before=$(run_ns "$TRACER_PID")
		taskset -c 1 dd if="$FILE" of=/dev/null bs=4k iflag=direct status=none
		after=$(run_ns "$TRACER_PID")
		sysctl -qw kernel.bpf_stats_enabled=0
		kill -INT "$TRACER_PID"; wait "$TRACER_PID" || true
		TRACER_PID=
		echo "$tc $(( (after - before) / REQUESTS ))" >>"$SAMPLES"
	done
	echo "round $round done" >&2
done

# Median (min-max) per tool and case.
median() { grep "^$1 " "$SAMPLES" | awk '{ print $2 }' | sort -n | awk '{ v[NR] = $1 } END { printf "%d %d %d\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
read -r dc dc_min dc_max < <(median dtrace:comm)
read -r bc bc_min bc_max < <(median bpftrace:comm)
read -r fc fc_min fc_max < <(median floor:comm)
read -r df df_min df_max < <(median dtrace:file)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
# "met" when $1 <= $3 times $2.
met() { awk -v a="$1" -v b="$2" -v k="$3" 'BEGIN { print (a <= k * b ? "met" : "not met") }'; }
REPORT=$OUT/io-report.md
{
	echo "## io: BPF time per block I/O request ($(date -u +%Y-%m-%d), $ROUNDS rounds, $REQUESTS requests each)"
	echo
	echo "| case | dtrace | bpftrace | floor | dtrace/floor | dtrace/bpftrace | target |"
	echo "|---|---|---|---|---|---|---|"
	echo "| bytes by program | $dc ns ($dc_min-$dc_max) | $bc ns ($bc_min-$bc_max) | $fc ns ($fc_min-$fc_max) | $(ratio "$dc" "$fc") | $(ratio "$dc" "$bc") | at or below bpftrace: $(met "$dc" "$bc" 1) |"
	echo "| bytes by file (fi_pathname) | $df ns ($df_min-$df_max) | - | - | $(ratio "$df" "$fc") | - | within 3x the floor: $(met "$df" "$fc" 3) |"
} >"$REPORT"
cat "$REPORT"
source bench/report.sh
replace_section io: "$REPORT"
