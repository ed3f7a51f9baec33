#!/bin/bash
# fbt side by side with Debian's bpftrace and a hand-written libbpf program
# (the floor), measured inside a kernel-matrix guest: the development
# machines have neither kprobes nor trampolines. One run, as ratios; the
# guest is emulated (qemu TCG, one CPU), so only ratios between the tools
# mean something, not the absolute figures.
#
#   bash bench/fbt.sh       # ROUNDS=3 N=100000 KREL=6.12 by default; ~15 minutes
#
# Cases (bench/fbt-guest.sh runs them in the guest):
#   fentry   `fbt::vfs_read:entry { @[execname] = count(); }` on a trampoline;
#            bpftrace `kfunc:vfs_read`, the floor `fentry/vfs_read`
#   kprobe   the same on a kprobe (DTRACE_FBT_NO_FENTRY=1); bpftrace
#            `kprobe:vfs_read`, the floor `kprobe/vfs_read`
#   wildcard `fbt::tcp_*:entry,fbt::security_*:entry { @ = count(); }`:
#            several hundred functions; bpftrace `kprobe:tcp_*,kprobe:security_*`,
#            the floor a `kprobe.multi` link per pattern
# Start-up is a whole run that attaches and exits (ms); per event is the BPF
# run time (kernel.bpf_stats_enabled) per vfs_read of N one-byte reads of
# /dev/zero, whose count every tool must report exactly. KREL picks the
# guest kernel (a release or its prefix; 6.12 has trampolines and
# multi-kprobes, Debian's 6.1 no multi-kprobes, so every tool's wildcard
# takes single kprobes there). Results go to stdout and to BENCHMARKS.md
# (section "fbt").
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
N=${N:-100000}
KREL=${KREL:-6.12}
source bench/setup.sh

# --- what the guest gets besides dtrace: bpftrace, bpftool, the floor ------
G=$OUT/fbt-guest
rm -rf "$G"
mkdir -p "$G"/bench "$G"/usr/bin "$G"/usr/sbin
cc -O2 -static -o "$G"/bench/loop bench/loop.c
cc -O2 -static -o "$G"/bench/measure bench/measure.c
cp "$OUT"/floor "$OUT"/fbt_*.bpf.o "$G"/bench/
cp "$(command -v bpftrace)" "$G"/usr/bin/bpftrace
cp "$(command -v bpftool)" "$G"/usr/sbin/bpftool
for bin in "$G"/usr/bin/bpftrace "$G"/usr/sbin/bpftool "$G"/bench/floor; do
	for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
		mkdir -p "$G$(dirname "$lib")"
		cp -L "$lib" "$G$lib"
	done
done

# --- one guest ------------------------------------------------------------
LOGS=$PWD/$OUT/fbt-logs
rm -rf "$LOGS"
GUEST_INIT=$PWD/bench/fbt-guest.sh GUEST_FILES=$PWD/$G LOGS=$LOGS MEM=2G GUEST_TIMEOUT=${GUEST_TIMEOUT:-2400} \
	EXTRA_APPEND="BENCH_ROUNDS=$ROUNDS BENCH_N=$N" bash tests/kernel-matrix/run.sh "$KREL" >&2 || {
	echo "bench: the guest failed; its console is in $LOGS" >&2
	grep '^BENCHERR' "$LOGS"/*.log >&2 || true
	exit 1
}
LOG=$(ls "$LOGS"/*.log | grep -v summary.txt | head -1)
GUEST_KREL=$(basename "$LOG" .log)
SAMPLES=$OUT/fbt-samples
sed -n 's/^SAMPLE //p' "$LOG" >"$SAMPLES"

# --- the report -------------------------------------------------------------
source bench/report.sh
functions() { awk -v t="$1" '$1 == "functions-wildcard" && $2 == t { print $3 }' "$SAMPLES"; }
REPORT=$OUT/fbt-report.md
cat >"$REPORT" <<EOF
## fbt: in a $GUEST_KREL guest ($(date -u +%Y-%m-%d), qemu TCG, 1 CPU, $ROUNDS rounds, median (min–max))

Produced by \`bash bench/fbt.sh\` (the method is in its header). The guest
is emulated: compare the tools by their ratios, not by absolute figures.

### Start-up (ms for a whole run that attaches and exits)

| case | dtrace | bpftrace | floor | dtrace / floor | dtrace / bpftrace | target: faster than bpftrace |
|---|---|---|---|---|---|---|
$(row start-fentry '`fbt::vfs_read:entry` on a trampoline (bpftrace `kfunc:`)' 'd < b')
$(row start-kprobe '`fbt::vfs_read:entry` on a kprobe (bpftrace `kprobe:`)' 'd < b')
$(row start-wildcard "\`fbt::tcp_*:entry,fbt::security_*:entry\`: $(functions dtrace) functions (bpftrace's \`kprobe:\`: $(functions bpftrace))" 'd < b')

### Peak memory (kB, resident)

| case | dtrace | bpftrace | floor | dtrace / floor | dtrace / bpftrace | target: < 20 MB |
|---|---|---|---|---|---|---|
$(row mem-fentry '`fbt::vfs_read:entry` on a trampoline' 'd < 20480')
$(row mem-wildcard 'the wildcard' 'd < 20480')

### In-kernel cost per event (ns of BPF run time per vfs_read, $N reads per run)

| case | dtrace | bpftrace | floor | dtrace / floor | dtrace / bpftrace | target: ≤ 1.3x floor, ≤ 0.5x bpftrace |
|---|---|---|---|---|---|---|
$(row bpf-fentry '`@[execname] = count()` on a trampoline' 'd <= 1.3 * f && d <= 0.5 * b')
$(row bpf-kprobe '`@[execname] = count()` on a kprobe' 'd <= 1.3 * f && d <= 0.5 * b')
EOF
cat "$REPORT"
replace_section fbt: "$REPORT"
