//! The sysinfo provider against a workload whose reads, writes, forks,
//! execs, threads and context switches are known (examples/workload.rs).

use std::process::Stdio;

use super::*;
use util::Workload;

/// Traces `program` (quiet) while the workload runs; returns dtrace's output.
fn trace(program: &str, workload: Workload) -> (util::Output, String) {
    let mut t = Tracer::spawn(&["-q", "-n", READY, "-n", program]);
    t.wait_for("ready");
    let printed = workload.go();
    let out = t.stop();
    out.assert_no_panic();
    (out, printed)
}

fn count_of(stdout: &str, label: &str) -> i64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{label} ")))
        .unwrap_or_else(|| panic!("no {label} in {stdout:?}"))
        .trim()
        .parse()
        .expect("number")
}

#[test]
fn readch_and_writech_see_every_byte() {
    let w = Workload::spawn(&["read", "4096", "100"]);
    let pid = w.pid();
    let (out, _) = trace(
        &format!("readch /pid == {pid}/ {{ @q = quantize(arg0); @s = sum(arg0); }} END {{ printa(\"sum %@d\\n\", @s); printa(@q); }}"),
        w,
    );
    // 100 reads of 4096 bytes, and the 3-byte read of the "go" line.
    assert_eq!(count_of(&out.stdout, "sum"), 100 * 4096 + 3, "{}", out.stdout);
    let table: Vec<&str> = out.stdout.lines().skip_while(|l| !l.contains("Distribution")).collect();
    let row = |v: u64| table.iter().find(|l| l.trim_start().starts_with(&format!("{v} |"))).map(|l| l.to_string());
    assert!(row(2).is_some_and(|r| r.trim_end().ends_with(" 1")), "{}", out.stdout);
    assert!(row(4096).is_some_and(|r| r.trim_end().ends_with(" 100")), "{}", out.stdout);

    let w = Workload::spawn(&["write", "1000", "50"]);
    let pid = w.pid();
    let (out, _) = trace(
        &format!("writech /pid == {pid}/ {{ @s = sum(arg0); @n = count(); }} END {{ printa(\"sum %@d\\n\", @s); printa(\"n %@d\\n\", @n); }}"),
        w,
    );
    assert_eq!(count_of(&out.stdout, "sum"), 50_000, "{}", out.stdout);
    assert_eq!(count_of(&out.stdout, "n"), 50);
}

/// Counts of several statistics for one workload, by the workload's pid (or
/// its children's parent).
fn counts(args: &[&str], predicate: &str, stats: &[&str]) -> Vec<i64> {
    let w = Workload::spawn(args);
    let pid = w.pid();
    let mut program = String::new();
    for s in stats {
        program.push_str(&format!(
            "sysinfo:::{s} /{}/ {{ @{s} = count(); }}\n",
            predicate.replace("PID", &pid.to_string())
        ));
    }
    program.push_str("END {");
    for s in stats {
        program.push_str(&format!("printa(\"{s} %@d\\n\", @{s}); "));
    }
    program.push('}');
    let (out, _) = trace(&program, w);
    stats.iter().map(|s| if out.stdout.contains(&format!("{s} ")) { count_of(&out.stdout, s) } else { 0 }).collect()
}

#[test]
fn forks_execs_and_threads_are_counted_exactly() {
    assert_eq!(counts(&["fork", "5"], "pid == PID", &["sysfork", "sysvfork", "nthreads"]), [5, 0, 5]);
    assert_eq!(counts(&["threads", "6"], "pid == PID", &["sysfork", "nthreads"]), [0, 6]);
    // Command::spawn forks (or vforks) a child that execs /bin/true.
    let forks = counts(&["exec", "4"], "pid == PID", &["sysfork", "sysvfork"]);
    assert_eq!(forks[0] + forks[1], 4, "{forks:?}");
    assert_eq!(counts(&["exec", "4"], "ppid == PID", &["sysexec"]), [4]);
}

#[test]
fn context_switches_agree_with_proc_status() {
    let w = Workload::spawn(&["switch", "50"]);
    let pid = w.pid();
    let (out, printed) = trace(
        &format!(
            "pswitch /pid == {pid}/ {{ @p = count(); }} inv_swtch /pid == {pid}/ {{ @i = count(); }}
                  END {{ printa(\"p %@d\\n\", @p); printa(\"i %@d\\n\", @i); }}"
        ),
        w,
    );
    let mut measured = printed.split_whitespace().map(|n| n.parse::<i64>().expect("count"));
    let (voluntary, involuntary) = (measured.next().expect("voluntary"), measured.next().expect("involuntary"));
    let pswitch = count_of(&out.stdout, "p");
    let inv = if out.stdout.contains("i ") { count_of(&out.stdout, "i") } else { 0 };
    // The workload's own /proc reads and its exit switch a few times more.
    assert!((pswitch - (voluntary + involuntary)).abs() <= 4, "pswitch {pswitch}, /proc {voluntary}+{involuntary}");
    assert!((inv - involuntary).abs() <= 4, "inv_swtch {inv}, /proc {involuntary}");
    assert!(voluntary >= 50);
}

#[test]
fn xcalls_fire_for_tlb_shootdowns_and_find_d_runs() {
    let w = Workload::spawn(&["xcalls", "300"]);
    let (out, _) = trace("xcalls{@[execname] = count()}", w);
    let row =
        out.stdout.lines().find(|l| l.trim_start().starts_with("workload")).unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(row.split_whitespace().last().unwrap().parse::<u64>().unwrap() > 0, "{row}");

    // Seed 004's find.d, attributing find's cross calls to system calls.
    let path = script(
        "find.d",
        "syscall:::entry\n/execname == \"find\"/\n{\n\tself->syscall = probefunc;\n\tself->insys = 1;\n}\n\nsysinfo:::xcalls\n/execname == \"find\"/\n{\n\t@[self->insys ? self->syscall : \"<none>\"] = count();\n}\n\nsyscall:::return\n/self->insys/\n{\n\tself->insys = 0;\n\tself->syscall = NULL;\n}\n",
    );
    let mut t = Tracer::spawn(&["-s", &path, "-n", r#"BEGIN { printf("ready\n"); }"#]);
    t.wait_for("ready");
    Command::new("find").args(["/usr/share", "-xdev"]).stdout(Stdio::null()).status().expect("find");
    let out = t.stop();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stderr.contains("dtrace: script"), "{}", out.stderr);
}

#[test]
fn every_statistic_is_listed_and_unavailable_ones_say_why() {
    let out = run(&["-l", "-n", "sysinfo:::"]);
    assert_eq!(out.stdout.lines().count(), 1 + 34, "{}", out.stdout);
    // A bare name is the probe name.
    let out = run(&["-l", "-n", "readch"]);
    assert!(
        out.stdout.lines().nth(1).is_some_and(|l| l.contains("sysinfo") && l.ends_with("readch")),
        "{}",
        out.stdout
    );
    let out = run(&["-qn", "ufsiget { @ = count(); } tick-100ms { exit(0); }"]);
    assert_eq!(out.code(), 0);
    assert!(
        out.stderr.contains("dtrace: sysinfo:::ufsiget will not fire: UFS is not a Linux file system"),
        "{}",
        out.stderr
    );
}

#[test]
fn arg1_points_at_the_growing_total_and_arg2_at_the_cpu() {
    let w = Workload::spawn(&["write", "10", "3"]);
    let pid = w.pid();
    let (out, _) = trace(
        &format!(
            "writech /pid == {pid}/ {{ printf(\"%d %d %d\\n\", ((cpu_t *)arg2)->cpu_id, arg0, *(uint64_t *)arg1); }}"
        ),
        w,
    );
    let events: Vec<Vec<u64>> =
        out.stdout.lines().map(|l| l.split_whitespace().filter_map(|n| n.parse().ok()).collect()).collect();
    let events: Vec<&Vec<u64>> = events.iter().filter(|e| e.len() == 3).collect();
    assert_eq!(events.len(), 3, "{}", out.stdout);
    // Per CPU, the total before each increment has grown at least by the
    // previous increment (other processes' writes count too).
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e[1], 10);
        if let Some(prev) = events[..i].iter().rev().find(|p| p[0] == e[0]) {
            assert!(e[2] >= prev[2] + prev[1], "{events:?}");
        }
    }
}

/// The seed's `((cpu_t *)arg2)->cpu_id` and `curcpu->cpu_id` name the CPU a
/// statistic is counted on: both agree with `cpu` at every context switch.
#[test]
fn cpu_t_of_arg2_and_curcpu_agree_with_cpu() {
    let out = run(&[
        "-qn",
        r#"sysinfo:::pswitch { @[cpu, ((cpu_t *)arg2)->cpu_id, curcpu->cpu_id] = count(); }
           tick-1s { exit(0); }
           END { printa("%d %d %d %@d\n", @);
                 printf("info %d %s %d %d\n", curcpu->cpu_pset, curcpu->cpu_info.pi_processor_type,
                     curcpu->cpu_info.pi_state == P_ONLINE, curcpu->cpu_lgrp >= 0 && curcpu->cpu_chip >= 0); }"#,
    ]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let rows: Vec<Vec<i64>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().filter_map(|n| n.parse().ok()).collect::<Vec<i64>>())
        .filter(|r| r.len() == 4)
        .collect();
    assert!(!rows.is_empty(), "{}", out.stdout);
    for r in &rows {
        assert!(r[0] == r[1] && r[1] == r[2] && r[3] > 0, "{}", out.stdout);
    }
    let machine = std::env::consts::ARCH;
    assert!(out.stdout.lines().any(|l| l == format!("info -1 {machine} 1 1")), "{}", out.stdout);
}
