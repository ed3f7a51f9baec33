//! Speculative tracing against real system calls: records kept back per
//! speculation, printed on commit() and dropped on discard(), and the
//! failures DTrace reports.

use super::*;

/// The classic use: speculate on every open, commit only those that fail.
#[test]
fn only_failing_opens_are_committed() {
    let w = util::Workload::spawn(&["open", "/etc/hostname", "/nonexistent/a", "/etc/passwd", "/nonexistent/b"]);
    let pid = w.pid();
    let program = format!(
        r#"syscall::openat:entry /pid == {pid}/ {{ self->spec = speculation(); speculate(self->spec); printf("open %s\n", copyinstr(arg1)); }}
           syscall::openat:return /self->spec && errno != 0/ {{ speculate(self->spec); printf("errno %d\n", errno); }}
           syscall::openat:return /self->spec && errno != 0/ {{ commit(self->spec); self->spec = 0; }}
           syscall::openat:return /self->spec/ {{ discard(self->spec); self->spec = 0; }}"#
    );
    // One speculation is enough: each is free again once ended.
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &program]);
    t.wait_for("ready");
    assert_eq!(w.go(), "2\n");
    let out = t.stop();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let traced: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty() && *l != "ready").collect();
    assert_eq!(traced, ["open /nonexistent/a", "errno 2", "open /nonexistent/b", "errno 2"], "{}", out.stdout);
    assert!(!out.stderr.contains("failed speculation"), "{}", out.stderr);
}

#[test]
fn failed_speculations_are_reported_as_dtrace_words_them() {
    // Every speculation in use.
    let out = run(&["-qn", "BEGIN { a = speculation(); b = speculation(); exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stderr.contains("dtrace: 1 failed speculation (no speculative buffer available)\n"), "{}", out.stderr);
    // A record past specsize.
    let out = run(&[
        "-q",
        "-x",
        "specsize=24",
        "-n",
        r#"BEGIN { a = speculation(); } BEGIN { speculate(a); printf("%d", 1); } BEGIN { commit(a); } BEGIN { exit(0); }"#,
    ]);
    assert_eq!(out.stdout.trim(), "", "the record was dropped");
    assert!(out.stderr.contains("dtrace: 1 speculative drop\n"), "{}", out.stderr);
}

/// As in DTrace for a speculation used on one CPU, an ended speculation's
/// ID is free at once; the records of its two uses stay apart.
#[test]
fn an_ended_speculation_is_free_at_once() {
    let out = run(&[
        "-qn",
        r#"BEGIN { a = speculation(); } BEGIN { speculate(a); printf("first use\n"); } BEGIN { discard(a); }
           BEGIN { b = speculation(); c = speculation(); printf("%d %d\n", b, c); }
           BEGIN { speculate(b); printf("second use\n"); } BEGIN { commit(b); } BEGIN { exit(0); }"#,
    ]);
    assert_eq!(out.stdout, "1 0\nsecond use\n\n", "{}", out.stderr);
    assert!(out.stderr.contains("dtrace: 1 failed speculation (no speculative buffer available)\n"), "{}", out.stderr);
}

#[test]
fn committed_records_keep_their_probe_columns() {
    let out = run(&[
        "-n",
        r#"BEGIN { a = speculation(); } BEGIN { speculate(a); trace(7); } BEGIN { commit(a); } BEGIN { exit(0); }"#,
    ]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "CPU     ID                    FUNCTION:NAME");
    assert_eq!(&lines[1][3..], format!("      1 {:>32}  {:>8}", ":BEGIN", 7), "{:?}", out.stdout);
}

#[test]
fn a_clause_that_only_speculates_records_the_firing() {
    // The Guide's flow example (`fbt::: /self->spec/ { speculate(self->spec); }`):
    // the firing is what the speculation keeps, shown on commit as the
    // probe's line.
    let out = run(&[
        "-n",
        "BEGIN { self->spec = speculation(); } BEGIN { speculate(self->spec); } \
         BEGIN { commit(self->spec); } BEGIN { printf(\"after\"); exit(0); }",
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().map(str::trim_end).filter(|l| l.contains(":BEGIN")).collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(lines[0].ends_with(":BEGIN") && lines[1].ends_with(":BEGIN after"), "{}", out.stdout);
}
