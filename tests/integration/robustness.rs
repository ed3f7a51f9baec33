//! Nothing silent, nothing stuck: output errors, -c commands that cannot
//! run or must not outlive dtrace, arguments and scripts that are not
//! UTF-8, inputs that must be bounded.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{self, run, Tracer, DTRACE, WAIT};

/// Runs dtrace with byte-string arguments, bounded by WAIT; its output is
/// kept as bytes (small: it stays in the pipes until dtrace exits).
fn run_bytes(args: &[&[u8]]) -> std::process::Output {
    let mut child = Command::new(DTRACE)
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    wait_bounded(&mut child, "dtrace did not exit");
    child.wait_with_output().expect("output")
}

/// Waits (bounded by WAIT) for `child` to exit; `why` says what a timeout means.
fn wait_bounded(child: &mut std::process::Child, why: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{why} within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_c_commands_do_not_hold_each_other() {
    // Each held command used to inherit the other's release pipe: -e never returned.
    let out = run(&["-e", "-n", "BEGIN", "-c", "/bin/true", "-c", "/bin/true"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let out = run(&["-qn", "BEGIN { exit(0); }", "-c", "/bin/true", "-c", "/bin/true"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
}

#[test]
fn a_c_command_that_cannot_run_is_an_error_before_tracing() {
    let not_executable = util::script("not-executable", "echo hi\n");
    for (program, why) in
        [("/nonexistent/prog", "No such file or directory"), (not_executable.as_str(), "Permission denied")]
    {
        let out = run(&["-n", "BEGIN { trace(1); }", "-c", program]);
        out.assert_no_panic();
        assert_eq!(out.code(), 1, "{program}: {}", out.stderr);
        assert_eq!(out.stderr, format!("dtrace: failed to execute {program}: {why}\n"));
        assert_eq!(out.stdout, "", "nothing may be traced");
    }
}

#[test]
fn a_c_command_dies_with_a_killed_dtrace() {
    let mut tracer = Tracer::spawn(&["-q", "-c", "sleep 57.25", "-n", "BEGIN { printf(\"%d\\n\", $target); }"]);
    let deadline = Instant::now() + WAIT;
    let pid = loop {
        if let Ok(line) = tracer.next_line() {
            break line.trim().parse::<i32>().expect("pid");
        }
        assert!(Instant::now() < deadline, "no pid printed");
    };
    tracer.signal(libc::SIGKILL);
    let _ = tracer.finish();
    // The command is dtrace's child until dtrace dies; then it must die too.
    let gone = |pid: i32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.is_empty() || stat.split(") ").nth(1).is_some_and(|rest| rest.starts_with('Z'))
    };
    let deadline = Instant::now() + WAIT;
    while !gone(pid) {
        assert!(Instant::now() < deadline, "sleep {pid} outlived a SIGKILLed dtrace");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_error_storm_still_ends_at_sigint_and_sigterm() {
    // Every system call faults, and each fault's message is a write that
    // faults again: the ring refills as fast as it is read. Draining it
    // until empty used to keep dtrace from ever seeing the signal.
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let mut t = Tracer::spawn(&[
            "-qn",
            r#"BEGIN { printf("ready\n"); } syscall:::entry { trace(*(int *)0); } END { printf("end\n"); }"#,
        ]);
        t.wait_for("ready");
        std::thread::sleep(Duration::from_millis(300));
        t.signal(sig);
        let out = t.finish();
        out.assert_no_panic();
        assert_eq!(out.code(), 0, "signal {sig}: {}", &out.stderr[..out.stderr.len().min(500)]);
        assert!(out.stdout.ends_with("end\n\n"), "signal {sig}: {:?}", out.stdout);
        assert!(out.stderr.contains("invalid address (0x0) in action #1"), "signal {sig}: no fault reported");
    }
}

#[test]
fn a_closed_pipe_ends_dtrace_as_sigpipe_ends_dtrace() {
    // `dtrace ... | head -2` used to trace forever.
    let mut child = Command::new(DTRACE)
        .args(["-n", "tick-10ms { trace(1); }"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut stdout, &mut first).expect("some output");
    drop(stdout);
    let status = wait_bounded(&mut child, "dtrace kept tracing into a closed pipe");
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
}

#[test]
fn a_write_error_aborts_with_exit_status_1() {
    let mut command = Command::new(DTRACE);
    command.args(["-qn", "tick-1ms { printf(\"%s\\n\", \"0123456789abcdef0123456789abcdef\"); }"]);
    command.stdout(std::fs::File::options().write(true).open("/dev/full").expect("/dev/full"));
    let mut child = command.stderr(Stdio::piped()).spawn().expect("spawn");
    wait_bounded(&mut child, "dtrace kept tracing into a full device");
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "dtrace: processing aborted: No space left on device\n");
}

#[test]
fn output_file_errors_come_before_anything_is_enabled() {
    let out = run(&["-n", "BEGIN { trace(1); }", "-o", "/nonexistent/dir/out"]);
    assert_eq!(out.code(), 1);
    assert_eq!(out.stderr, "dtrace: failed to open output file '/nonexistent/dir/out': No such file or directory\n");
}

#[test]
fn arguments_and_scripts_that_are_not_utf8_are_bytes() {
    // Used to panic in std::env::args (exit 134).
    let out = run_bytes(&[b"-qn", b"BEGIN { /* \xff */ printf(\"%s|%s\\n\", \"a\xfeb\", $$1); exit(0); }", b"z\xfd"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(out.stdout, b"a\xfeb|z\xfd\n\n");
    let path = util::script("bytes.d", "");
    std::fs::write(&path, b"BEGIN { /* caf\xe9 */ trace(\"\xe9t\xe9\"); exit(0); }").expect("write");
    let out = run_bytes(&[b"-qs", path.as_bytes()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, b"\xe9t\xe9\n");
    let out = run_bytes(&[b"-e", b"-n", b"BEGIN", b"-c", b"/bin/tr\xff"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

#[test]
fn a_script_without_end_is_refused_not_read_forever() {
    let out = run(&["-e", "-s", "/dev/zero"]);
    assert_eq!((out.code(), out.stderr.as_str()), (1, "dtrace: failed to open /dev/zero: File too large\n"));
}

#[test]
fn an_interval_past_a_64_bit_hrtime_matches_no_probe() {
    let out = run(&["-e", "-n", "tick-18446744073709551615ns {}"]);
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("does not match any probes"), "{}", out.stderr);
}

#[test]
fn dynamic_variable_stores_into_a_full_dynvarsize_are_reported_drops() {
    // 1k of dynvarsize holds 16 elements of int keys and values (64 bytes
    // each); every store beyond them is a drop DTrace reports.
    let program = "BEGIN { i = 1; }
        tick-1ms /i <= 40/ { a[i] = 1; self->v[i] = 1; }
        tick-1ms /i <= 40 && a[i] == 1/ { kept++; }
        tick-1ms /i <= 40 && a[i] != 1/ { lost++; }
        tick-1ms /i <= 40/ { i++; }
        tick-1ms /i > 40/ { printf(\"kept %d lost %d\\n\", kept, lost); exit(0); }";
    let out = run(&["-q", "-x", "dynvarsize=1k", "-n", program]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "kept 16 lost 24\n\n");
    // a[] lost 24; self->v[] (thread and index keys: 72-byte elements, 14
    // fit) lost 26. Reported once a second and at exit.
    let reported: u64 = out
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("dtrace: ")?.strip_suffix(" dynamic variable drops"))
        .map(|n| n.parse::<u64>().expect("count"))
        .sum();
    assert_eq!(reported, 50, "{}", out.stderr);
}

#[test]
fn a_fault_in_an_error_clause_is_a_double_error_not_another_error_probe() {
    // ERROR's clause faults too: DTrace fires no ERROR probe for it (that
    // would loop) and reports it as a drop.
    let program = "BEGIN { trace(*(int *)NULL); }
        ERROR { trace(*(int *)NULL); }
        ERROR { printf(\"error clause ran\\n\"); }
        BEGIN { exit(0); }";
    let out = run(&["-q", "-n", program]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "error clause ran\n\n");
    let errors = out.stderr.lines().filter(|l| l.contains("invalid address (0x0)")).count();
    assert_eq!(errors, 1, "{}", out.stderr);
    assert!(out.stderr.contains("dtrace: 1 error in ERROR probe enabling\n"), "{}", out.stderr);
    // droptags names the kind of each drop report.
    let out = run(&["-q", "-x", "droptags", "-n", program]);
    assert!(out.stderr.contains("dtrace: [DTRACEDROP_DBLERROR] 1 error in ERROR probe enabling\n"), "{}", out.stderr);
}

#[test]
fn begin_fires_before_any_other_probe_and_end_after_every_other() {
    // dtrace's own system calls between attaching and BEGIN (or after END)
    // used to fire the syscall probes: 71 early and 2 late here.
    let program = "int began, ended;
        BEGIN { began = 1; }
        syscall:::entry /began == 0/ { @early = count(); }
        syscall:::entry /ended == 1/ { @late = count(); }
        tick-100ms { exit(0); }
        END { ended = 1; }";
    let out = run(&["-q", "-n", program]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "", "no probe may fire before BEGIN or after END");
}

#[test]
fn thousands_of_clauses_on_one_probe_run_or_are_refused_in_d_terms() {
    // Thousands of aggregating clauses on one probe used to end in the
    // verifier's "8193 jumps is too complex" (at about 1,600); 2,500 run
    // now, each counted. (The verifier's time grows with the square of the
    // clauses on one probe: 2,500 take about 5 s.)
    let clauses = |n: usize| -> String { (0..n).map(|i| format!("BEGIN {{ @[{}] = count(); }}\n", i % 4)).collect() };
    let path = util::script("clauses.d", &clauses(2500));
    let out = run(&["-q", "-s", &path, "-n", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let counts: Vec<&str> = out.stdout.split_whitespace().collect();
    assert_eq!(counts, ["0", "625", "1", "625", "2", "625", "3", "625"], "{}", out.stdout);
}

/// Clauses too much for the verifier in one program together run as a
/// chain of programs, each tail-calling the next: the firing goes on with
/// its clause-local variables, and an exit() stops the later clauses as in
/// one program. A clause too much alone is refused in D terms, exit status
/// 1, not with the verifier's log. (Each json() call is about a quarter of
/// the verifier's budget at the default strsize where the kernel lacks
/// bpf_loop(), each strstr() about a fifteenth everywhere.)
#[test]
fn clauses_too_much_for_one_program_run_as_a_chain() {
    let json = |key: char| format!(r#"printf("%s\n", json("{{\"{key}\":1}}", "{key}"));"#);
    let mut script = format!("BEGIN {{ this->n = 42; this->s = \"kept\"; {} }}\n", json('a'));
    for key in ['b', 'c', 'd'] {
        script += &format!("BEGIN {{ {} }}\n", json(key));
    }
    script += &format!("BEGIN {{ {} printf(\"%d %s\\n\", this->n, this->s); exit(0); }}\n", json('e'));
    script += "BEGIN { printf(\"after exit\\n\"); }\n";
    let path = util::script("chain.d", &script);
    let out = run(&["-q", "-s", &path]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "1\n1\n1\n1\n1\n42 kept\n\n", "{}", out.stderr);
    let calls = vec![r#"strstr(s, "ab")"#; 20].join(", ");
    let formats = "%s".repeat(20);
    let path =
        util::script("one_action.d", &format!("BEGIN {{ s = \"ab\"; printf(\"{formats}\", {calls}); exit(0); }}\n"));
    let out = run(&["-q", "-s", &path]);
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("an action of a clause enabled on dtrace:::BEGIN is too much for the kernel's verifier"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("processed"), "the verifier's log leaked: {}", out.stderr);
}

/// One clause too much for the verifier alone runs split between its
/// statements, as one clause: its output is one record, its clause-local
/// variables go on, a false predicate skips all of it, and a fault in a
/// later part abandons the whole clause (its earlier output too) and fires
/// ERROR with the action's number. (Each strstr() is about a fifteenth of
/// the verifier's budget at the default strsize.)
#[test]
fn a_clause_too_much_for_one_program_runs_split_between_its_statements() {
    let searches = r#"printf("%s", strstr(s, "ab"));"#.repeat(16);
    let script = format!(
        "BEGIN {{ s = \"ab\"; this->n = 42; {searches} printf(\" n=%d\\n\", this->n); this->n = 43; }}\n\
         BEGIN /this->n == 42/ {{ {searches} printf(\"not run\\n\"); }}\n\
         BEGIN {{ {searches} trace(*(int *)8); printf(\"not reached\\n\"); }}\n\
         ERROR {{ printf(\"fault in action %d\\n\", arg2); }}\n\
         BEGIN {{ printf(\"n=%d\\n\", this->n); exit(0); }}\n"
    );
    let path = util::script("split_clause.d", &script);
    let out = run(&["-q", "-s", &path]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("{} n=42\nfault in action 3\nn=43\n\n", "ab".repeat(16)), "{}", out.stderr);
    assert!(out.stderr.contains("invalid address (0x8) in action #3"), "{}", out.stderr);
}

/// More aggregations than one program may name maps (illumos'
/// multiaggs/tst.many has 247 in one clause) run as a chain of parts, and a
/// record past 32 KB (strings of a large strsize) is written whole, in one
/// program and in a clause split between programs.
#[test]
fn clauses_past_one_programs_maps_and_records_past_32_kb_run() {
    let aggregations: String = (0..100).map(|i| format!("@a{i} = count(); ")).collect();
    let path = util::script("many_maps.d", &format!("BEGIN {{ {aggregations} exit(0); }}\n"));
    let out = run(&["-q", "-s", &path]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().filter(|l| l.trim() == "1").count(), 100, "{}", out.stdout);

    let prints: String = (0..40).map(|i| format!("printf(\"%s\", s{}); ", i % 4)).collect();
    let setup = "s0 = \"a\"; s1 = \"b\"; s2 = \"c\"; s3 = \"d\";";
    let want = "abcd".repeat(10) + "\n";
    let path = util::script("big_record.d", &format!("BEGIN {{ {setup} }} BEGIN {{ {prints} exit(0); }}\n"));
    let out = run(&["-q", "-x", "strsize=1024", "-s", &path]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, want.as_str()), "{}", out.stderr);
    let split: String = (0..100).map(|i| format!("@b{i} = count(); ")).collect();
    let path = util::script("big_split.d", &format!("BEGIN {{ {setup} }} BEGIN {{ {prints} {split} exit(0); }}\n"));
    let out = run(&["-q", "-x", "strsize=1024", "-s", &path]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.starts_with(&"abcd".repeat(10)), "{}", out.stdout);
}

/// Random combinations of dtrace's options, -c commands included: each run
/// ends by itself or at Ctrl-C (some, like `-Z -n nosuch:::probe`, trace
/// until then, as DTrace does), without a panic, with one of dtrace's exit
/// statuses, and leaves no -c command behind. `DTRACE_ARGS_FUZZ_RUNS` makes a longer run.
#[test]
fn command_line_combinations_end_cleanly() {
    const WORDS: &[&[&str]] = &[
        &["-n", "BEGIN { exit(0); }"],
        &["-n", "tick-10ms { exit(0); }"],
        &["-n", "syscall::getppid:entry { @[pid] = count(); } tick-20ms { exit(0); }"],
        &["-n", "BEGIN {"],
        &["-n", "nosuch:::probe"],
        &["-c", "/bin/true"],
        &["-c", "sleep 0.05"],
        &["-c", "/nonexistent/prog"],
        &["-p", "1"],
        &["-p", "notapid"],
        &["-q"],
        &["-e"],
        &["-Z"],
        &["-F"],
        &["-S"],
        &["-l"],
        &["-v"],
        &["-w"],
        &["-x", "quiet"],
        &["-x", "bufsize=16k"],
        &["-x", "strsize=1"],
        &["-x", "nosuchopt"],
        &["-x", "oformat=json"],
        &["-x", "stackframes=3"],
        &["-b", "4k"],
        &["-o", "/dev/null"],
        &["-s", "/dev/null"],
        &["-s", "/nonexistent.d"],
        &["-P", "dtrace"],
        &["-32"],
        &["-V"],
        &["--"],
        &["-y"],
        &["$1"],
    ];
    let runs: u64 = std::env::var("DTRACE_ARGS_FUZZ_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..runs {
        let count = 1 + (next() % 5) as usize;
        let args: Vec<&str> =
            (0..count).flat_map(|_| WORDS[(next() % WORDS.len() as u64) as usize].iter().copied()).collect();
        // Listing is bounded work, but -l -v types every kernel function's
        // arguments from BTF (seconds for a debug build).
        let patience = if args.contains(&"-l") { Duration::from_secs(30) } else { Duration::from_millis(500) };
        let out = Tracer::spawn(&args).finish_within(patience);
        out.assert_no_panic();
        assert!(matches!(out.code(), 0..=2), "{args:?}: status {:?}: {}", out.status, out.stderr);
    }
    // No -c command outlives its dtrace.
    let stray = Command::new("pgrep").args(["-f", "^sleep 0.05$"]).output().expect("pgrep");
    assert!(stray.stdout.is_empty(), "left behind: {}", String::from_utf8_lossy(&stray.stdout));
}

/// A closed stderr ends dtrace as it ends DTrace, by SIGPIPE when an
/// error message is written to it, not by a panic (Rust's eprintln!);
/// nothing of it stays loaded.
#[test]
fn a_closed_stderr_ends_dtrace_by_sigpipe() {
    let mut child = Command::new(DTRACE)
        .args(["-q", "-n", "tick-10ms { trace(*(char *)0); }"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // The reader goes away before the first runtime error is reported.
    drop(child.stderr.take());
    let status = wait_bounded(&mut child, "dtrace did not end on a closed stderr");
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
}
