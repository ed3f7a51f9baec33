//! Aggregations: exact values over workloads the tests drive, DTrace's
//! output layouts, printa(), trunc()/clear()/normalize(), sort options,
//! errors, and drops of a full aggregation.

use super::*;

/// A copy of dd under a unique name, so predicates on execname see only it.
struct Workload {
    path: String,
    name: String,
}

impl Workload {
    fn new(tag: &str) -> Workload {
        // comm holds 15 characters.
        let name = format!("dtw{}{}", tag, std::process::id() % 100000);
        let name = name[..name.len().min(15)].to_string();
        let dir = std::env::temp_dir().join(format!("dtrace-agg-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join(&name);
        std::fs::copy("/bin/dd", &path).expect("copy dd");
        Workload { path: path.to_string_lossy().into_owned(), name }
    }

    /// dd: exactly `count` reads from fd 0 and writes to fd 1 of `bs` bytes each.
    fn dd(&self, bs: usize, count: usize) {
        let st = Command::new(&self.path)
            .args(["if=/dev/zero", "of=/dev/null", &format!("bs={bs}"), &format!("count={count}"), "status=none"])
            .status()
            .expect("run dd");
        assert!(st.success());
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
    let d = format!(r#"syscall::write:entry /execname == "{}" && arg0 == 1/ {{ @[execname] = quantize(arg2); }}"#, w.name);
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
