# Sourced by the benchmark scripts: medians of samples and the rows of
# BENCHMARKS.md's tables. Samples are lines "METRIC TOOL VALUE" in $SAMPLES
# (VALUE "fail" when a run failed); the tools are dtrace, bpftrace and floor.

# "median min max" of one metric for one tool ("fail" if any run failed,
# "none" if the tool has no such measure).
stat() {
	awk -v m="$1" -v t="$2" '$1 == m && $2 == t { print $3 }' "$SAMPLES" | sort -g |
		awk '$1 == "fail" { fail = 1 } { v[NR] = $1 }
		     END { if (NR == 0) { print "none none none"; exit }
		           if (fail) { print "fail fail fail"; exit }
		           m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		           printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "fail" || b == "fail" || a == "none" || b == "none" || b <= 0) print "–"; else printf "%.2f", a / b }'; }
cell() {
	case "$1" in
	fail) echo "not supported yet" ;;
	none) echo "–" ;;
	*) echo "$1 ($2–$3)" ;;
	esac
}

# row METRIC LABEL TARGET-CHECK: TARGET-CHECK is an awk condition on
# d (dtrace), b (bpftrace), f (floor) medians; "" for no target.
row() {
	local metric=$1 label=$2 target=$3 verdict=""
	read -r d dmin dmax <<<"$(stat "$metric" dtrace)"
	read -r b bmin bmax <<<"$(stat "$metric" bpftrace)"
	read -r f fmin fmax <<<"$(stat "$metric" floor)"
	if [ -n "$target" ]; then
		if [ "$d" = fail ]; then verdict="not met (not supported yet)"
		else verdict=$(awk -v d="$d" -v b="$b" -v f="$f" "BEGIN { print ($target) ? \"met\" : \"not met\" }"); fi
	fi
	echo "| $label | $(cell "$d" "$dmin" "$dmax") | $(cell "$b" "$bmin" "$bmax") | $(cell "$f" "$fmin" "$fmax") | $(ratio "$d" "$f") | $(ratio "$d" "$b") | $verdict |"
}

# replace_section PREFIX FILE: BENCHMARKS.md's section whose heading starts
# with "## PREFIX" (up to the next "## " heading) becomes FILE's text,
# appended at the end; the other sections stay.
replace_section() {
	[ -f BENCHMARKS.md ] || echo "# Benchmarks" >BENCHMARKS.md
	awk -v p="## $1" 'index($0, p) == 1 { skip = 1; next } /^## / { skip = 0 } !skip' BENCHMARKS.md >BENCHMARKS.md.new
	# no blank line piles up where the section was
	sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' BENCHMARKS.md.new
	{ cat BENCHMARKS.md.new; echo; cat "$2"; } >BENCHMARKS.md
	rm BENCHMARKS.md.new
}
