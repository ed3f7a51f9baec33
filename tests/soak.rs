//! Soak: eight dtrace sessions at once under a system-call storm (their
//! eight -c workloads). Each must exit 0 with every event either printed
//! or reported as a drop, and nothing of any session may stay loaded in
//! the kernel afterwards. A test binary of its own: cargo runs test
//! binaries one after another, so no other test's programs are loaded
//! while this one counts them.

// The soak uses a few of the shared helpers.
#[allow(dead_code)]
mod util;

use std::process::Command;

const SESSIONS: usize = 8;
const EVENTS: u64 = 20_000;

/// Names of the loaded BPF programs that are dtrace's (`dt_*`).
fn dtrace_programs() -> Vec<String> {
    let out = Command::new("bpftool").args(["-j", "prog", "show"]).output().expect("bpftool (scripts/install-deps.sh)");
    assert!(out.status.success(), "bpftool: {}", String::from_utf8_lossy(&out.stderr));
    let progs: serde_json::Value = serde_json::from_slice(&out.stdout).expect("bpftool's JSON");
    progs
        .as_array()
        .map(|all| {
            all.iter().filter_map(|p| p["name"].as_str()).filter(|n| n.starts_with("dt_")).map(str::to_string).collect()
        })
        .unwrap_or_default()
}

/// dtrace's programs still loaded once the kernel has had time to free
/// those of processes that have exited: it frees a program after an RCU
/// grace period (a sleepable uprobe program's, RCU tasks trace, can take
/// seconds), so a program seen right after its dtrace exited may be on
/// its way out. Bounded: what stays after 10 s is left behind.
fn dtrace_programs_left() -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let left = dtrace_programs();
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn workload_command(args: &str) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    format!("{} {args}", dir.join("examples/workload").display())
}

#[test]
fn eight_sessions_under_a_syscall_storm_account_for_every_event_and_leave_nothing() {
    assert_eq!(dtrace_programs_left(), Vec::<String>::new(), "dtrace programs loaded before the soak");
    let command = workload_command(&format!("getppid {EVENTS}"));
    // A small buffer, so that some sessions drop records.
    let mut sessions: Vec<util::Tracer> = (0..SESSIONS)
        .map(|_| {
            util::Tracer::spawn(&[
                "-q",
                "-x",
                "bufsize=8k",
                "-x",
                "statusrate=100ms",
                "-c",
                &command,
                "-n",
                "syscall::getppid:entry /pid == $target/ { printf(\"e\\n\"); }",
            ])
        })
        .collect();
    for (i, session) in sessions.iter_mut().enumerate() {
        let out = session.finish();
        out.assert_no_panic();
        assert_eq!(out.code(), 0, "session {i}: {}", out.stderr);
        let printed = out.stdout.lines().filter(|l| *l == "e").count() as u64;
        let dropped: u64 = out
            .stderr
            .lines()
            .filter_map(|l| l.strip_prefix("dtrace: ")?.split_once(" drop")?.0.parse::<u64>().ok())
            .sum();
        assert_eq!(printed + dropped, EVENTS, "session {i}: printed {printed}, dropped {dropped}: {}", out.stderr);
    }
    assert_eq!(dtrace_programs_left(), Vec::<String>::new(), "dtrace programs left loaded after the soak");
}
