//! Entry programs joined with their clause code (ARCHITECTURE.md, "Joined
//! programs"): what the kernel runs at each attached probe, read back with
//! bpftool, has no tail call where the clauses are known, and keeps it
//! where the provider needs the task's stack.

use super::*;

/// (tracepoint, program's translated code) of every program the process
/// `pid` holds attached, as bpftool lists them.
fn attached_programs(pid: u32) -> Vec<(String, String)> {
    let list = Command::new("bpftool").args(["-j", "perf", "list"]).output().expect("bpftool perf list");
    assert!(list.status.success(), "{}", String::from_utf8_lossy(&list.stderr));
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).expect("bpftool's JSON");
    let mut programs = Vec::new();
    for entry in list.as_array().expect("a list") {
        if entry["pid"].as_u64() != Some(u64::from(pid)) {
            continue;
        }
        let id = entry["prog_id"].as_u64().expect("prog_id").to_string();
        let code = Command::new("bpftool").args(["prog", "dump", "xlated", "id", &id]).output().expect("bpftool");
        let tracepoint = entry["tracepoint"].as_str().unwrap_or_default().to_string();
        programs.push((tracepoint, String::from_utf8_lossy(&code.stdout).into_owned()));
    }
    programs
}

#[test]
fn probes_whose_clauses_are_known_run_one_program_without_a_tail_call() {
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        // rand() (the kernel's bpf_user_rnd_u32) marks the clause code: no
        // entry program calls it.
        "syscall::getppid:entry, syscall::getppid:return, proc:::exec-success, ip:::send { @[rand()] = count(); }",
    ]);
    t.wait_for("ready");
    let programs = attached_programs(t.pid());
    let out = t.stop();
    out.assert_no_panic();
    let code_at = |tracepoint: &str| {
        let found = programs.iter().find(|(tp, _)| tp == tracepoint);
        &found.unwrap_or_else(|| panic!("nothing attached to {tracepoint}: {programs:?}")).1
    };
    for joined in ["sys_enter_getppid", "sys_exit_getppid", "sched_process_exec"] {
        let code = code_at(joined);
        assert!(!code.contains("bpf_tail_call"), "{joined}:\n{code}");
        assert!(code.contains("call bpf_user_rnd_u32"), "the clause code is in {joined}:\n{code}");
    }
    // ip's programs tell a sender's context by their stack: they keep theirs.
    assert!(code_at("net_dev_queue").contains("bpf_tail_call"), "{}", code_at("net_dev_queue"));
}

/// The instruction number of the first line of `code` (bpftool's
/// translated listing) that contains `text`.
fn first_insn_with(code: &str, text: &str) -> Option<usize> {
    code.lines().find(|l| l.contains(text)).and_then(|l| l.trim().split(':').next()?.parse().ok())
}

#[test]
fn a_predicate_on_the_current_thread_runs_before_the_entry_program() {
    let (a, b) = (util::Workload::spawn(&["getppid", "300"]), util::Workload::spawn(&["getppid", "200"]));
    let script = format!(
        "syscall::getppid:entry /pid == {}/ {{ @entries = count(); }}
         syscall::getppid:return /pid == {} && execname == \"workload\"/ {{ @returns = count(); }}
         END {{ printa(\"entries %@d\\n\", @entries); printa(\"returns %@d\\n\", @returns); }}",
        a.pid(),
        b.pid()
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    let programs = attached_programs(t.pid());
    a.go();
    b.go();
    let out = t.stop();
    out.assert_no_panic();
    // Only each workload's own calls count.
    let value = |name: &str| {
        let line = out.stdout.lines().find(|l| l.split_whitespace().next() == Some(name));
        line.and_then(|l| l.split_whitespace().nth(1)).map(str::to_string)
    };
    assert_eq!(value("entries").as_deref(), Some("300"), "{}", out.stdout);
    assert_eq!(value("returns").as_deref(), Some("200"), "{}", out.stdout);
    // The predicate comes first, before the entry program's hundred or so
    // instructions of starting a firing.
    for (tracepoint, helper) in
        [("sys_enter_getppid", "bpf_get_current_pid_tgid"), ("sys_exit_getppid", "bpf_get_current_pid_tgid")]
    {
        let (_, code) =
            programs.iter().find(|(tp, _)| tp == tracepoint).unwrap_or_else(|| panic!("{tracepoint}: {programs:?}"));
        let at = first_insn_with(code, helper).unwrap_or_else(|| panic!("{tracepoint} calls no {helper}:\n{code}"));
        assert!(at < 20, "{tracepoint}: the predicate's {helper} at instruction {at}:\n{code}");
    }
}
