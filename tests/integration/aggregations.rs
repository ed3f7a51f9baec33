//! Aggregations: exact values over workloads the tests drive, DTrace's
//! output layouts, printa(), trunc()/clear()/normalize(), sort options,
//! errors, and drops of a full aggregation.

use super::*;

/// A copy of dd under a unique name, so predicates on execname see only it.
pub(super) struct Workload {
    path: String,
    pub name: String,
}

impl Workload {
    pub fn new(tag: &str) -> Workload {
        // comm holds 15 characters.
        let name = format!("dtw{}{}", tag, std::process::id() % 100000);
        let name = name[..name.len().min(15)].to_string();
        let dir = util::scratch_dir(&format!("dtrace-agg-{tag}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join(&name);
        std::fs::copy("/bin/dd", &path).expect("copy dd");
        Workload { path: path.to_string_lossy().into_owned(), name }
    }

    /// dd: exactly `count` reads from fd 0 and writes to fd 1 of `bs` bytes each.
    pub fn dd(&self, bs: usize, count: usize) {
        let st = Command::new(&self.path)
            .args(["if=/dev/zero", "of=/dev/null", &format!("bs={bs}"), &format!("count={count}"), "status=none"])
            .status()
            .expect("run dd");
        assert!(st.success());
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        // The copy lives in a directory of its own; leave no trace of the run.
        if let Some(dir) = std::path::Path::new(&self.path).parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Runs a quiet script (with a READY clause) around a workload; returns stdout.
fn trace_around(script_text: &str, workload: impl FnOnce()) -> util::Output {
    let mut t = Tracer::spawn(&["-q", "-n", READY, "-n", script_text]);
    t.wait_for("ready");
    workload();
    let out = t.stop();
    out.assert_no_panic();
    out
}

fn value_of(stdout: &str, label: &str) -> i64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{label} ")))
        .unwrap_or_else(|| panic!("no {label} line in {stdout:?}"));
    line[label.len() + 1..].trim().parse().unwrap_or_else(|_| panic!("bad {label} line {line:?}"))
}

#[test]
fn scalar_functions_are_exact_over_200000_writes() {
    let w = Workload::new("s");
    let d = format!(
        r#"syscall::write:entry /execname == "{}" && arg0 == 1/ {{
            @c = count(); @s = sum(arg2); @mn = min(arg2); @mx = max(arg2); @a = avg(arg2); @sd = stddev(arg2);
        }}
        END {{
            printa("count %@d\n", @c); printa("sum %@d\n", @s); printa("min %@d\n", @mn);
            printa("max %@d\n", @mx); printa("avg %@d\n", @a); printa("stddev %@d\n", @sd);
        }}"#,
        w.name
    );
    let out = trace_around(&d, || {
        w.dd(512, 150_000);
        w.dd(4096, 50_000);
    });
    let sizes: Vec<i64> = std::iter::repeat_n(512, 150_000).chain(std::iter::repeat_n(4096, 50_000)).collect();
    let n = sizes.len() as i64;
    let sum: i64 = sizes.iter().sum();
    assert_eq!(value_of(&out.stdout, "count"), n, "{}", out.stdout);
    assert_eq!(value_of(&out.stdout, "sum"), sum);
    assert_eq!(value_of(&out.stdout, "min"), 512);
    assert_eq!(value_of(&out.stdout, "max"), 4096);
    assert_eq!(value_of(&out.stdout, "avg"), sum / n);
    // DTrace: sqrt(sum(x²)/n - (sum/n)²) in integers.
    let squares: i128 = sizes.iter().map(|&x| (x as i128) * (x as i128)).sum();
    let variance = squares / n as i128 - (sum / n) as i128 * (sum / n) as i128;
    let stddev = (variance as f64).sqrt().floor() as i64;
    assert_eq!(value_of(&out.stdout, "stddev"), stddev);
    assert_eq!(out.stderr, "");
}

#[test]
fn quantize_of_write_sizes_prints_dtraces_distribution() {
    let w = Workload::new("q");
    let d =
        format!(r#"syscall::write:entry /execname == "{}" && arg0 == 1/ {{ @[execname] = quantize(arg2); }}"#, w.name);
    let out = trace_around(&d, || {
        w.dd(512, 150_000);
        w.dd(4096, 50_000);
        w.dd(100, 3);
    });
    // After the interrupt's and the closing newline: the key, then the table
    // from one bucket below the lowest to one above the highest, and a blank line.
    let expected = [
        "ready",
        "",
        "",
        &format!("  {:<50}", w.name),
        "           value  ------------- Distribution ------------- count    ",
        "              32 |                                         0        ",
        "              64 |                                         3        ",
        "             128 |                                         0        ",
        "             256 |                                         0        ",
        "             512 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@           150000   ",
        "            1024 |                                         0        ",
        "            2048 |                                         0        ",
        "            4096 |@@@@@@@@@@                               50000    ",
        "            8192 |                                         0        ",
        "",
        "",
    ]
    .join("\n");
    assert_eq!(out.stdout, expected);
}

/// Runs a quiet BEGIN program and returns stdout without a leading newline
/// (dtrace(1)'s closing one, when the BEGIN clause printed nothing).
fn begin(options: &[&str], body: &str) -> String {
    let program = format!("BEGIN {{ {body} exit(0); }}");
    let mut args: Vec<&str> = options.to_vec();
    args.extend(["-qn", &program]);
    let out = run(&args);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{body}: {}", out.stderr);
    out.stdout.strip_prefix('\n').unwrap_or(&out.stdout).to_string()
}

#[test]
fn scalar_functions_print_like_dtrace() {
    let out = begin(
        &[],
        r#"@s["neg"] = sum(-5); @s["zero"] = sum(0); @s["big"] = sum(9223372036854775807);
           @mn = min(-9223372036854775807 - 1); @mx = max(0); @av["a"] = avg(-7); @av["a"] = avg(2);
           @sd = stddev(-3); @sd = stddev(3); @sd = stddev(100); @c = count(); @c = count();"#,
    );
    let key = |k: &str| format!("  {k:<50}");
    let expected = [
        format!("{} {:>16}", key("neg"), -5),
        format!("{} {:>16}", key("zero"), 0),
        format!("{} {:>16}", key("big"), i64::MAX),
        format!(" {:>16}", i64::MIN),
        format!(" {:>16}", 0),
        // avg is C's integer division; stddev sqrt(10018/3 - 33²) = 47.
        format!("{} {:>16}", key("a"), -2),
        format!(" {:>16}", 47),
        format!(" {:>16}", 2),
        String::new(),
    ]
    .join("\n");
    assert_eq!(out, expected);
}

#[test]
fn lquantize_has_underflow_and_overflow_rows() {
    let out = begin(
        &[],
        "@l = lquantize(-5, 0, 10, 2); @l = lquantize(3, 0, 10, 2); @l = lquantize(10, 0, 10, 2);
         @l = lquantize(42, 0, 10, 2, 3);",
    );
    let expected = [
        "",
        "           value  ------------- Distribution ------------- count    ",
        "             < 0 |@@@@@@@                                  1        ",
        "               0 |                                         0        ",
        "               2 |@@@@@@@                                  1        ",
        "               4 |                                         0        ",
        "               6 |                                         0        ",
        "               8 |                                         0        ",
        "           >= 10 |@@@@@@@@@@@@@@@@@@@@@@@@@@@              4        ",
        "",
        "",
    ]
    .join("\n");
    assert_eq!(out, expected);
}

#[test]
fn quantize_shows_negative_zero_and_large_buckets() {
    let out = begin(&[], "@q = quantize(-5); @q = quantize(0); @q = quantize(0); @q = quantize(1099511627776);");
    let mut expected = vec![
        String::new(),
        "           value  ------------- Distribution ------------- count    ".to_string(),
        "              -8 |                                         0        ".to_string(),
        "              -4 |@@@@@@@@@@                               1        ".to_string(),
    ];
    for v in ["-2", "-1"] {
        expected.push(format!("{v:>16} |                                         0        "));
    }
    expected.push("               0 |@@@@@@@@@@@@@@@@@@@@                     2        ".to_string());
    for p in 0..40 {
        expected.push(format!("{:>16} |                                         0        ", 1u64 << p));
    }
    expected.push(format!("{:>16} |@@@@@@@@@@                               1        ", 1u64 << 40));
    expected.push(format!("{:>16} |                                         0        ", 1u64 << 41));
    expected.extend([String::new(), String::new()]);
    assert_eq!(out, expected.join("\n"));
}

#[test]
fn llquantize_uses_log_linear_buckets() {
    let out = begin(
        &[],
        "@ = llquantize(5, 10, 0, 2, 10); @ = llquantize(55, 10, 0, 2, 10); @ = llquantize(5000, 10, 0, 2, 10);",
    );
    let mut expected =
        vec![String::new(), "           value  ------------- Distribution ------------- count    ".to_string()];
    let row = |label: &str, count: u64| {
        let bar = if count == 0 { String::new() } else { "@".repeat(13) };
        format!("{label:>16} |{bar:<40} {count:<9}")
    };
    expected.push(row("4", 0));
    expected.push(row("5", 1));
    for v in ["6", "7", "8", "9", "10", "20", "30", "40"] {
        expected.push(row(v, 0));
    }
    expected.push(row("50", 1));
    for v in ["60", "70", "80", "90", "100", "200", "300", "400", "500", "600", "700", "800", "900"] {
        expected.push(row(v, 0));
    }
    expected.push(row(">= 1000", 1));
    expected.extend([String::new(), String::new()]);
    assert_eq!(out, expected.join("\n"));
}

const KEYED: &str = r#"@c[1, "b"] = count(); @c[2, "a"] = count(); @c[2, "a"] = count(); @c[-1, "c"] = count();
    @s[1, "b"] = sum(100); @s[2, "a"] = sum(-1); @s[3, "z"] = sum(7);"#;

#[test]
fn printa_formats_take_keys_then_aggregation_values() {
    let out = begin(
        &[],
        &format!(r#"{KEYED} printa("%d %s %@d %@u %@x|%@8d|\n", @c, @s); printa("%@d %d %s\n", @c); printa(@c, @s);"#),
    );
    let expected = [
        // Joined rows: a key @c lacks counts 0; %@ past the last aggregation reuses it.
        "3 z 0 7 7|       7|",
        "-1 c 1 0 0|       0|",
        "1 b 1 100 64|     100|",
        "2 a 2 18446744073709551615 ffffffffffffffff|      -1|",
        "1 1 b",
        "1 -1 c",
        "2 2 a",
        "",
        &format!("        3  {:<50} {:>16} {:>16}", "z", 0, 7),
        &format!("       -1  {:<50} {:>16} {:>16}", "c", 1, 0),
        &format!("        1  {:<50} {:>16} {:>16}", "b", 1, 100),
        &format!("        2  {:<50} {:>16} {:>16}", "a", 2, -1),
        // The closing newline; both were printed by printa(): nothing more at exit.
        "",
        "",
    ]
    .join("\n");
    assert_eq!(out, expected);
}

#[test]
fn sort_options_order_rows() {
    let rows = |opts: &[&str]| {
        let out = begin(opts, &format!(r#"{KEYED} printa("%d%s ", @c, @s);"#));
        out.trim_end().to_string()
    };
    // By @c's value, ties by @s's, then by key (integers compare unsigned).
    assert_eq!(rows(&[]), "3z -1c 1b 2a");
    assert_eq!(rows(&["-x", "aggsortkey"]), "1b 2a 3z -1c");
    assert_eq!(rows(&["-x", "aggsortkey", "-x", "aggsortkeypos=1"]), "2a 1b -1c 3z");
    assert_eq!(rows(&["-x", "aggsortrev"]), "2a 1b -1c 3z");
    assert_eq!(rows(&["-x", "aggsortpos=1"]), "2a -1c 3z 1b");
    // The same through #pragma and setopt().
    let out = begin(&[], &format!(r#"{KEYED} setopt("aggsortkey"); printa("%d%s ", @c, @s);"#));
    assert_eq!(out.trim_end(), "1b 2a 3z -1c");
}

#[test]
fn trunc_clear_and_normalize() {
    let out = begin(
        &[],
        "@a[1] = sum(10); @a[2] = sum(20); @a[3] = sum(30); @a[4] = sum(40);
         @b[1] = sum(10); @b[2] = sum(20); @b[3] = sum(30);
         @n[1] = sum(10); @n[2] = sum(25); @d[7] = count(); @e[1] = count();
         trunc(@a, 2); trunc(@b, -1); trunc(@e); normalize(@n, 5); clear(@d);
         printa(\"n %d %@d\\n\", @n); denormalize(@n); printa(\"n %d %@d\\n\", @n);",
    );
    let expected = [
        "n 1 2",
        "n 2 5",
        "n 1 10",
        "n 2 25",
        "",
        // At exit: @a's two largest, @b's smallest, @d's key with a cleared value, @e empty.
        &format!("{:>9} {:>16}", 3, 30),
        &format!("{:>9} {:>16}", 4, 40),
        &format!("{:>9} {:>16}", 1, 10),
        &format!("{:>9} {:>16}", 7, 0),
        "",
    ]
    .join("\n");
    assert_eq!(out, expected);
}

#[test]
fn misuse_is_reported_with_dtraces_messages_and_tags() {
    let cases = [
        ("@a = count(); @a = sum(1);", "[D_AGG_REDEF] in action list: aggregation redefined: @a\n\t current: @a = sum( )\n\tprevious: @a = count( ) : line 1"),
        ("@a = sum(execname);", "[D_AGG_SCALAR] in action list: sum( ) argument #1 must be of scalar type"),
        ("@a = lquantize(1, 10, 0);", "[D_LQUANT_MISMATCH] in action list: lquantize( ) base (argument #1) must be less than limit (argument #2)"),
        ("@a = lquantize(1, 0, 10, 0);", "[D_LQUANT_STEPTYPE] in action list: lquantize( ) argument #3 must be a non-zero positive integer constant"),
        ("limit = 10; @a = lquantize(1, 0, limit);", "[D_LQUANT_LIMTYPE] in action list: lquantize( ) argument #2 must be an integer constant"),
        ("@a = llquantize(1, 1, 0, 3, 10);", "[D_LLQUANT_FACTORVAL] in action list: llquantize( ) argument #1 must be an unsigned 16-bit quantity greater than or equal to 2"),
        ("@a = llquantize(1, 10, 0, 3, 7);", "[D_LLQUANT_STEPVAL] in action list: llquantize() argument #4 (steps) must evenly divide argument #1 (factor) when steps<factor"),
        ("@a = count(1);", "[D_PROTO_LEN] in action list: count( ) prototype mismatch: 1 arg passed, 0 expected"),
        ("@a = quantize();", "[D_PROTO_LEN] in action list: quantize( ) prototype mismatch: 0 args passed, at least 1 expected"),
        ("@a[1] = count(); @a[\"x\"] = count();", "[D_PROTO_ARG] in action list: @a[ ] argument #1 is incompatible with prototype:\n\tprototype: int\n\t argument: string"),
        ("printa(@nope);", "[D_PRINTA_AGGBAD] in action list: undefined aggregation: @nope"),
        ("x = 1; printa(x);", "[D_PRINTA_AGGARG] in action list: printa( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int"),
        ("@a = count(); clear();", "[D_CLEAR_PROTO] in action list: clear( ) prototype mismatch: 0 args passed, 1 expected"),
        ("@a = count(); trace(@a);", "[D_TRACE_AGG] in action list: trace( ) may not be applied to an aggregation"),
        ("@a = 1;", "[D_AGG_FUNC] in action list: @a must be assigned the result of an aggregating function"),
        ("@a = count(); printf(\"%@d\", 1);", "[D_PRINTF_AGG_CONV] in action list: %@ conversion requires an aggregation and is not for use with printf( )"),
    ];
    for (body, message) in cases {
        let program = format!("BEGIN {{ {body} }}");
        let out = run(&["-x", "errtags", "-n", &program]);
        out.assert_no_panic();
        assert_eq!(out.code(), 1, "{body}");
        assert_eq!(out.stderr, format!("dtrace: invalid probe specifier {program}: {message}\n"), "{body}");
    }
    // Without errtags, and in a script: the line, no tag.
    let path = script("redef.d", "BEGIN\n{\n\t@a = count();\n}\n\nEND\n{\n\t@a = sum(1);\n}\n");
    let out = run(&["-s", &path]);
    assert_eq!(
        out.stderr,
        format!("dtrace: failed to compile script {path}: line 8: aggregation redefined: @a\n\t current: @a = sum( )\n\tprevious: @a = count( ) : line 3\n")
    );
}

#[test]
fn a_full_aggregation_is_reported_as_drops() {
    let w = Workload::new("d");
    // aggsize=1k leaves room for 64 keys; every write gets its own key.
    let d = format!(
        r#"syscall::write:entry /execname == "{}" && arg0 == 1/ {{ @[timestamp] = count(); }}
           END {{ printa("%@d\n", @); }}"#,
        w.name
    );
    let mut t = Tracer::spawn(&["-q", "-x", "aggsize=1k", "-n", READY, "-n", &d]);
    t.wait_for("ready");
    w.dd(1, 1000);
    let out = t.stop();
    let kept = out.stdout.lines().filter(|l| *l == "1").count() as u64;
    let mut dropped = 0;
    for line in out.stderr.lines() {
        let rest = line.strip_prefix("dtrace: ").unwrap_or_else(|| panic!("unexpected stderr {line:?}"));
        let (n, tail) = rest.split_once(' ').expect("count");
        assert!(tail.starts_with("aggregation drop"), "{line:?}");
        dropped += n.parse::<u64>().expect("number");
    }
    assert_eq!(kept, 64, "{}", out.stdout);
    assert_eq!(kept + dropped, 1000, "{}", out.stderr);
}

/// Seed 001: write() timing by execname, run as `write_timing.d 2sec`.
#[test]
fn seed_write_timing_prints_a_distribution_per_execname() {
    let path = script(
        "write_timing.d",
        "#!/usr/sbin/dtrace -s\n#pragma D option quiet\n\n    /* don't care about writev() */\nsyscall::write:entry\n{ self->ts = timestamp; }\n\nsyscall::write:return\n/ self->ts /\n{\n    @time[execname] = quantize(timestamp - self->ts);\n    self->ts = 0;\n}\n\ntick-$1\n{ exit(0); }\n",
    );
    let w = Workload::new("t");
    let mut t = Tracer::spawn(&["-n", READY, "-s", &path, "2sec"]);
    t.wait_for("ready");
    w.dd(1, 500);
    let out = t.finish();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let key = format!("  {:<50}", w.name);
    let at = lines.iter().position(|l| *l == key).unwrap_or_else(|| panic!("no {key:?} in {}", out.stdout));
    assert_eq!(lines[at + 1], "           value  ------------- Distribution ------------- count    ");
    let mut total = 0;
    let mut previous: Option<u64> = None;
    for row in lines[at + 2..].iter().take_while(|l| !l.is_empty()) {
        let (value, rest) = row.split_once(" |").unwrap_or_else(|| panic!("row {row:?}"));
        let value: u64 = value.trim().parse().expect("bucket value");
        // Power-of-two buckets, each twice the previous.
        if let Some(p) = previous {
            assert_eq!(value, if p == 0 { 1 } else { 2 * p }, "{row:?}");
        }
        previous = Some(value);
        assert_eq!(rest.len(), 40 + 1 + 9, "{row:?}");
        assert!(rest[..40].chars().all(|c| c == '@' || c == ' '), "{row:?}");
        total += rest[41..].trim().parse::<u64>().expect("count");
    }
    // Every write the workload made, timed from entry to return.
    assert_eq!(total, 500, "{}", out.stdout);
}

/// Seed 000/001: count_syscalls.d with a 1 s tick: trunc to ten, normalize,
/// printa with a format, clear.
#[test]
fn seed_count_syscalls_prints_ten_rows_per_tick() {
    let path = script(
        "count_syscalls.d",
        "#!/usr/sbin/dtrace -s\n\n/* get some statistic about system call rates */\n\n#pragma D option quiet\n\nBEGIN {\n    timer = timestamp;          /* nanosecond timestamp */\n}\nsyscall:::entry {\n    @c[pid, execname, probefunc] = count();\n}\ntick-1s {\n    trunc(@c, 10);\n    normalize(@c, (timestamp-timer) /1000000000);\n    printa(\"%5d %-20s %6@d %s\\n\", @c);\n    clear(@c);\n    printf(\"\\n\");\n    timer = timestamp;\n}\n",
    );
    let busy = std::thread::spawn(|| {
        for _ in 0..200 {
            let _ = Command::new("cat").arg("/etc/hostname").output();
        }
    });
    let out = run(&["-s", &path, "-n", "tick-1s { ticks++; } tick-1s /ticks == 2/ { exit(0); }"]);
    busy.join().expect("workload");
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let blocks: Vec<&str> = out.stdout.trim_end().split("\n\n").collect();
    assert_eq!(blocks.len(), 2, "{}", out.stdout);
    for block in blocks {
        let rows: Vec<&str> = block.lines().collect();
        assert_eq!(rows.len(), 10, "{block}");
        for row in rows {
            // "%5d %-20s %6@d %s"
            let (pid, rest) = (row[..5].trim(), &row[6..]);
            assert!(pid.parse::<u32>().is_ok(), "{row:?}");
            let (count, func) = rest[21..].trim().split_once(' ').unwrap_or_else(|| panic!("{row:?}"));
            assert!(count.parse::<u64>().is_ok() && !func.is_empty(), "{row:?}");
        }
    }
}

#[test]
fn keyless_aggregations_truncate_clear_and_stay_silent_until_updated() {
    // @k is removed by trunc(), @z cleared to 0, @late never updated: nothing.
    let out = begin(&[], "@k = count(); @z = sum(5); trunc(@k); clear(@z);");
    let out_with_late = run(&["-qn", "BEGIN { exit(0); } tick-10s { @late = count(); }"]);
    assert_eq!(out, format!(" {:>16}\n", 0));
    assert_eq!(out_with_late.code(), 0);
    assert_eq!(out_with_late.stdout.trim(), "");
}
