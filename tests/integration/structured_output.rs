//! Output that machines read: `-x oformat=json` parsed with a real JSON
//! parser for every record kind, and `-x metricsfile` read by promtool and
//! by Debian's node_exporter, scraped over HTTP.

use super::aggregations::Workload;
use super::*;
use serde_json::{json, Value};

/// Each line of structured output, parsed (every line must be JSON).
fn records(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect()
}

/// The output elements of the records of probe `name`.
fn outputs_of<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["name"] == name).flat_map(|r| r["output"].as_array().expect("output list")).collect()
}

#[test]
fn every_record_kind_is_json_as_freebsd_structures_it() {
    let d = r#"BEGIN {
        trace(42); trace("hi"); trace((uint8_t)-1); trace((uint64_t)-1); trace(-5);
        printf("x=%d %s\n", 7, "s"); printf("plain\n");
        @c["a"] = count(); @c["a"] = count(); @c["b"] = count();
        @s = sum(-3); @mn = min(4); @mx = max(9); @av = avg(5); @av = avg(7); @sd = stddev(4);
        @q = quantize(5); @q = quantize(6); @q = quantize(0);
        @l[1, "x"] = lquantize(3, 0, 10, 2); @l[1, "x"] = lquantize(50, 0, 10, 2);
        @ll = llquantize(1234, 10, 0, 6, 10);
        printa(@c); printa("%@d\n", @q); printa(@l); printa(@ll); printa(@s); printa(@mn); printa(@mx);
        printa(@av); printa(@sd);
        stack(); ustack();
        exit(0);
    }"#;
    let out = run(&["-x", "oformat=json", "-n", d]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let recs = records(&out.stdout);
    assert_eq!(recs.len(), 1, "one record, no text around it: {}", out.stdout);
    let r = &recs[0];
    assert_eq!(
        (&r["provider"], &r["module"], &r["function"], &r["name"]),
        (&json!("dtrace"), &json!(""), &json!(""), &json!("BEGIN"))
    );
    assert_eq!(r["id"], json!(1));
    assert!(r["cpu"].is_u64() && r["timestamp"].as_u64().is_some_and(|t| t > 0), "{r}");
    let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["timestamp", "cpu", "id", "provider", "module", "function", "name", "output"]);
    let o = r["output"].as_array().unwrap();
    assert_eq!(
        o[..5],
        [
            json!({"value": 42}),
            json!({"value": "hi"}),
            json!({"value": 255}),
            json!({"value": u64::MAX}),
            json!({"value": -5})
        ]
    );
    assert_eq!(
        o[5..10],
        [
            json!({"message": "x=7 s\n"}),
            json!({"value": 7}),
            json!({"value": "s"}),
            json!({"message": "plain\n"}),
            json!({"value": 0})
        ]
    );
    let agg = |i: usize, name: &str| {
        assert_eq!(o[i]["aggregation-name"], json!(name), "{}", o[i]);
        o[i]["aggregation-data"].clone()
    };
    assert_eq!(agg(10, "c"), json!([{"keys": [{"value": "b"}], "count": 1}, {"keys": [{"value": "a"}], "count": 2}]));
    assert_eq!(
        agg(11, "q"),
        json!([{"keys": [], "buckets": [
            {"value": -1, "count": 0}, {"value": 0, "count": 1}, {"value": 1, "count": 0},
            {"value": 2, "count": 0}, {"value": 4, "count": 2}, {"value": 8, "count": 0}]}])
    );
    assert_eq!(
        agg(12, "l"),
        json!([{"keys": [{"value": 1}, {"value": "x"}], "buckets": [
            {"value": 0, "count": 0}, {"value": 2, "count": 1}, {"value": 4, "count": 0},
            {"value": 6, "count": 0}, {"value": 8, "count": 0}, {"value": 10, "operator": ">=", "count": 1}]}])
    );
    assert_eq!(
        agg(13, "ll"),
        json!([{"keys": [], "buckets": [
            {"value": 900, "count": 0}, {"value": 1000, "count": 1}, {"value": 2000, "count": 0}]}])
    );
    assert_eq!(agg(14, "s"), json!([{"keys": [], "sum": -3}]));
    assert_eq!(agg(15, "mn"), json!([{"keys": [], "min": 4}]));
    assert_eq!(agg(16, "mx"), json!([{"keys": [], "max": 9}]));
    assert_eq!(agg(17, "av"), json!([{"keys": [], "average": 6}]));
    assert_eq!(agg(18, "sd"), json!([{"keys": [], "stddev": 0}]));
    let frames = o[19]["stack-frames"].as_array().expect("stack-frames");
    assert!(!frames.is_empty());
    for f in frames {
        let symbol = f["symbol"].as_str().expect("symbol");
        if let (Some(m), Some(n)) = (f["module"].as_str(), f["name"].as_str()) {
            assert!(symbol.starts_with(&format!("{m}`{n}")), "{f}");
        }
    }
    assert!(frames.iter().any(|f| f["module"] == "vmlinux"), "{frames:?}");
    // BEGIN fires in dtrace itself: its user stack ends in libc.
    let ustack = o[20]["ustack-frames"].as_array().expect("ustack-frames");
    assert!(ustack.iter().any(|f| f["module"].as_str().is_some_and(|m| m.starts_with("libc"))), "{ustack:?}");
    assert_eq!(o.len(), 21);
}

#[test]
fn records_follow_a_running_trace_with_their_probe_and_time() {
    let w = Workload::new("json");
    let d = format!(r#"syscall::write:entry /execname == "{}" && arg0 == 1/ {{ printf("%d\n", arg2); }}"#, w.name);
    let mut t = Tracer::spawn(&["-x", "oformat=json", "-n", READY, "-n", &d]);
    t.wait_for(r#"[{"message":"ready\n"},{"value":0}]}"#);
    w.dd(7, 5);
    let out = t.stop();
    out.assert_no_panic();
    // A signal ends structured output without the text mode's newline.
    assert!(!out.stdout.contains("\n\n"), "{:?}", out.stdout);
    let recs = records(&out.stdout);
    let writes: Vec<&Value> = recs.iter().filter(|r| r["function"] == "write").collect();
    assert_eq!(writes.len(), 5, "{}", out.stdout);
    let id = writes[0]["id"].as_u64().unwrap();
    let mut last = 0;
    for w in &writes {
        assert_eq!((&w["provider"], &w["name"]), (&json!("syscall"), &json!("entry")));
        assert_eq!(w["id"].as_u64(), Some(id));
        assert_eq!(w["output"], json!([{"message": "7\n"}, {"value": 7}]));
        // Timestamps are the firings' own, in nanoseconds, in order.
        let ts = w["timestamp"].as_u64().unwrap();
        assert!(ts > last, "{ts} after {last}");
        last = ts;
    }
    let listed = run(&["-l", "-n", "syscall::write:entry"]);
    assert!(
        listed.stdout.lines().nth(1).is_some_and(|l| l.trim_start().starts_with(&format!("{id} "))),
        "{}",
        listed.stdout
    );
}

#[test]
fn aggregations_at_exit_only_with_capital_o() {
    let d = r#"BEGIN { @calls["x"] = count(); @bytes = sum(10); exit(0); }"#;
    let without = run(&["-x", "oformat=json", "-n", d]);
    assert_eq!((without.code(), without.stdout.as_str()), (0, ""), "{}", without.stderr);
    let with = run(&["-x", "oformat=json", "-O", "-n", d]);
    assert_eq!(
        records(&with.stdout),
        [
            json!({"aggregation-data": [{"keys": [{"value": "x"}], "count": 1}], "aggregation-name": "calls"}),
            json!({"aggregation-data": [{"keys": [], "sum": 10}], "aggregation-name": "bytes"}),
        ]
    );
    // The anonymous aggregation is FreeBSD's "_"; two counts in one printa() stay apart.
    let both = run(&[
        "-x",
        "oformat=json",
        "-n",
        r#"BEGIN { @[1] = count(); @b[1] = count(); @b[1] = count(); printa(@, @b); exit(0); }"#,
    ]);
    assert_eq!(
        outputs_of(&records(&both.stdout), "BEGIN"),
        [&json!({"aggregation-data": [{"keys": [{"value": 1}], "count": 1, "count@b": 2}], "aggregation-name": "_"})]
    );
}

#[test]
fn runtime_errors_and_drops_are_records_too() {
    let out = run(&["-x", "oformat=json", "-n", "BEGIN { x = 0; trace(1 / x); } BEGIN { trace(2); exit(0); }"]);
    assert_eq!(out.code(), 0);
    let recs = records(&out.stdout);
    let error = recs.iter().find(|r| r["name"] == "ERROR").unwrap_or_else(|| panic!("no ERROR record: {}", out.stdout));
    assert_eq!(
        (&error["provider"], &error["module"], &error["id"]),
        (&json!("dtrace"), &json!("INTERNAL"), &json!(-1))
    );
    assert_eq!(
        (&error["epid"], &error["fault"], &error["probe"]),
        (&json!(2), &json!("divide-by-zero"), &json!("dtrace:::BEGIN"))
    );
    let msg = "error on enabled probe ID 2 (ID 1: dtrace:::BEGIN): divide-by-zero in action #1";
    assert_eq!(error["msg"], json!(format!("{msg}\n")));
    // Standard error has it too, as FreeBSD prints it.
    assert!(out.stderr.contains(msg), "{}", out.stderr);
    assert_eq!(outputs_of(&recs, "BEGIN"), [&json!({"value": 2})]);

    // aggsize=1k holds 64 keys: the other writes are aggregation drops.
    let w = Workload::new("jdrop");
    let d = format!(r#"syscall::write:entry /execname == "{}" && arg0 == 1/ {{ @[timestamp] = count(); }}"#, w.name);
    let mut t = Tracer::spawn(&["-x", "oformat=json", "-O", "-x", "aggsize=1k", "-n", READY, "-n", &d]);
    t.wait_for(r#"[{"message":"ready\n"},{"value":0}]}"#);
    w.dd(1, 300);
    let out = t.stop();
    assert_eq!(out.stderr.lines().filter(|l| l.contains("drop")).count(), 0, "drops go to the records: {}", out.stderr);
    let recs = records(&out.stdout);
    let drops: Vec<&Value> = recs.iter().filter(|r| r["name"] == "DROP").collect();
    assert!(!drops.is_empty(), "{}", out.stdout);
    let mut dropped = 0;
    for d in &drops {
        assert_eq!((&d["kind"], &d["function"]), (&json!(1), &json!("INTERNAL")));
        let (count, cpu) = (d["count"].as_u64().unwrap(), d["cpu"].as_u64().unwrap());
        assert_eq!(
            d["msg"],
            json!(format!("{count} aggregation drop{} on CPU {cpu}\n", if count == 1 { "" } else { "s" }))
        );
        assert!(d["timestamp"].as_str().is_some_and(|t| t.contains('.')), "{d}");
        dropped += count;
    }
    let kept = recs.iter().find_map(|r| r["aggregation-data"].as_array()).map_or(0, |rows| rows.len() as u64);
    assert_eq!(kept, 64);
    assert_eq!(kept + dropped, 300);
}

#[test]
fn bad_structured_output_options_say_why() {
    let xml = run(&["-x", "oformat=xml", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(xml.code(), 1);
    assert!(
        xml.stderr
            .contains("failed to set -x oformat: Invalid value for specified option: only text and json are supported"),
        "{}",
        xml.stderr
    );
    let flow = run(&["-F", "-x", "oformat=json", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(flow.code(), 1);
    assert!(flow.stderr.contains("-F cannot be used with oformat=json"), "{}", flow.stderr);
    let labels = run(&[
        "-x",
        "metricsfile=/tmp/dtrace-never.prom",
        "-x",
        "metricslabels=c:a,b",
        "-n",
        "BEGIN { @c[1] = count(); exit(0); }",
    ]);
    assert_eq!(labels.code(), 1);
    assert_eq!(labels.stderr, "dtrace: metricslabels gives 2 labels for @c, which has 1 key\n");
    let reserved = run(&["-x", "metricslabels=c:le", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(reserved.code(), 1);
    let nowhere = run(&["-x", "metricsfile=/nonexistent/dir/x.prom", "-n", "BEGIN { @c[1] = count(); exit(0); }"]);
    assert_eq!(nowhere.code(), 1);
    assert_eq!(
        nowhere.stderr,
        "dtrace: failed to open metrics file '/nonexistent/dir/x.prom': No such file or directory\n"
    );
}

/// A metrics file from a script that counts and sizes the writes of `w`
/// (each test its own dd, so that none sees another's writes).
fn metrics_of_dd(w: &Workload, path: &std::path::Path, extra: &[&str], writes: usize) -> String {
    let d = format!(
        r#"syscall::write:entry /execname == "{}" && arg0 == 1/ {{
               @writes[execname, arg2] = count(); @size = quantize(arg2); @lat = lquantize(arg2, 0, 100, 10); }}"#,
        w.name
    );
    let setting = format!("metricsfile={}", path.display());
    let mut args = vec!["-q", "-x", &setting];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-n", READY, "-n", &d]);
    let mut t = Tracer::spawn(&args);
    t.wait_for("ready");
    w.dd(24, writes);
    let out = t.stop();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    std::fs::read_to_string(path).expect("metrics file")
}

#[test]
fn metrics_file_is_prometheus_text_promtool_accepts() {
    let dir = util::scratch_dir("dtrace-prom");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("dtrace.prom");
    let w = Workload::new("prom");
    let text = metrics_of_dd(&w, &path, &["-x", "metricslabels=writes:program,bytes"], 12);
    let name = &w.name;
    assert!(text.contains(&format!("dtrace_writes_total{{program=\"{name}\",bytes=\"24\"}} 12\n")), "{text}");
    assert!(text.contains("# TYPE dtrace_size histogram\n"), "{text}");
    // quantize's bucket 16 holds 16..31: 24 is counted at le="31", not below.
    assert!(text.contains("dtrace_size_bucket{le=\"31\"} 12\n"), "{text}");
    assert!(text.contains("dtrace_size_bucket{le=\"+Inf\"} 12\ndtrace_size_sum 288\ndtrace_size_count 12\n"), "{text}");
    assert!(text.contains("dtrace_lat_bucket{le=\"29\"} 12\n"), "{text}");
    assert!(!text.contains("dtrace_lat_bucket{le=\"19\"}"), "buckets below any count are left out: {text}");
    // Written atomically: nothing else left in the directory.
    let entries: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, ["dtrace.prom"]);
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package)");
    use std::io::Write;
    promtool.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("to promtool");
    let checked = promtool.wait_with_output().expect("promtool");
    assert!(
        checked.status.success(),
        "promtool: {}{}\n{text}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

/// Debian's node_exporter on a loopback port, publishing `dir` with its
/// textfile collector; killed when dropped.
struct NodeExporter {
    child: std::process::Child,
    port: u16,
}

impl NodeExporter {
    fn start(dir: &std::path::Path) -> NodeExporter {
        // A free port: bind, note it, release it for node_exporter.
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
        let child = Command::new("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("prometheus-node-exporter (Debian's package)");
        NodeExporter { child, port }
    }

    /// GET /metrics, waiting (bounded) for the exporter to listen.
    fn scrape(&self) -> String {
        use std::io::{Read, Write};
        let deadline = std::time::Instant::now() + util::WAIT;
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                s.set_read_timeout(Some(util::WAIT)).expect("timeout");
                write!(s, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").expect("request");
                let mut response = String::new();
                s.read_to_string(&mut response).expect("response");
                assert!(response.starts_with("HTTP/1.0 200") || response.starts_with("HTTP/1.1 200"), "{response}");
                return response;
            }
            assert!(std::time::Instant::now() < deadline, "node_exporter never listened on {}", self.port);
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn node_exporter_publishes_the_aggregations() {
    let dir = util::scratch_dir("dtrace-textfile");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let exporter = NodeExporter::start(&dir);
    let w = Workload::new("nodeexp");
    metrics_of_dd(&w, &dir.join("dtrace.prom"), &[], 9);
    let scraped = exporter.scrape();
    let name = &w.name;
    assert!(scraped.contains(&format!("dtrace_writes_total{{key0=\"{name}\",key1=\"24\"}} 9\n")), "{scraped}");
    assert!(scraped.contains("dtrace_size_bucket{le=\"31\"} 9\n"), "{scraped}");
    assert!(scraped.contains("dtrace_size_sum 216\n"), "{scraped}");
    assert!(scraped.contains("dtrace_size_count 9\n"), "{scraped}");
    assert!(scraped.contains("dtrace_lat_bucket{le=\"29\"} 9\n"), "{scraped}");
    // The collector read the file without complaint.
    assert!(scraped.contains("node_textfile_scrape_error 0\n"), "{scraped}");
}
