//! The sched provider: a thread's context switches as Solaris names them,
//! checked against processes the tests start. on-cpu fires for the thread
//! taking the CPU before it runs; its pid, tid, execname, curthread and
//! self-> are that thread's.

use std::process::Child;

use super::*;

fn sleeper(seconds: &str) -> Child {
    Command::new("sleep").arg(seconds).spawn().expect("sleep")
}

#[test]
fn on_cpu_off_cpu_and_sleep_follow_a_sleeping_process() {
    let script = r#"
        sched:::on-cpu /execname == "sleep"/ {
            @on[pid] = count();
            @same[pid == curthread->tgid && tid == curthread->pid && curpsinfo->pr_pid == pid] = count();
            self->on = 1;
        }
        sched:::off-cpu /execname == "sleep"/ { @off[pid, self->on] = count(); }
        sched:::sleep /execname == "sleep"/ { @sleep[pid] = count(); }
        sched:::wakeup /args[1]->pr_fname == "sleep"/ { @woken[args[1]->pr_pid] = count(); }
        END { printa("on %d %@d\n", @on); printa("same %d %@d\n", @same); printa("off %d %d %@d\n", @off);
              printa("sleep %d %@d\n", @sleep); printa("woken %d %@d\n", @woken); }"#;
    let mut t = Tracer::spawn(&["-qn", READY, "-n", script]);
    t.wait_for("ready");
    let mut child = sleeper("0.3");
    let pid = child.id();
    child.wait().expect("sleep");
    let out = t.stop();
    out.assert_no_panic();
    let count = |prefix: String| -> u64 {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{prefix}\n{}", out.stdout))
    };
    // Named sleep once it exec'd, it went to sleep (sleep, off-cpu), was
    // woken by its timer (wakeup) and took the CPU again (on-cpu).
    assert!(count(format!("on {pid} ")) >= 1, "{}", out.stdout);
    assert!(count(format!("sleep {pid} ")) >= 1, "{}", out.stdout);
    assert!(count(format!("woken {pid} ")) >= 1, "{}", out.stdout);
    // off-cpu runs in the thread, and sees the self-> on-cpu set for it.
    assert!(count(format!("off {pid} 1 ")) >= 1, "{}", out.stdout);
    assert!(!out.stdout.lines().any(|l| l.starts_with("same 0 ")), "on-cpu's thread: {}", out.stdout);
}

#[test]
fn preempt_fires_for_threads_that_share_a_cpu() {
    let script = r#"sched:::preempt { @[pid] = count(); } END { printa("preempt %d %@d\n", @); }"#;
    let mut t = Tracer::spawn(&["-qn", READY, "-n", script]);
    t.wait_for("ready");
    // Two busy shells on one CPU: the scheduler preempts each for the other.
    let spin = "end=$(($(date +%s) + 1)); while [ $(date +%s) -le $end ]; do :; done";
    let spinners: Vec<Child> = (0..2)
        .map(|_| Command::new("taskset").args(["-c", "0", "bash", "-c", spin]).spawn().expect("taskset"))
        .collect();
    let pids: Vec<u32> = spinners.iter().map(Child::id).collect();
    for mut s in spinners {
        s.wait().expect("spinner");
    }
    let out = t.stop();
    out.assert_no_panic();
    for pid in pids {
        assert!(out.stdout.lines().any(|l| l.starts_with(&format!("preempt {pid} "))), "{pid}: {}", out.stdout);
    }
}

#[test]
fn sched_probes_list_their_argument_types() {
    let out = run(&["-lv", "-n", "sched:::off-cpu"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains("\t\targs[0]: lwpsinfo_t *\n\t\targs[1]: psinfo_t *\n"), "{}", out.stdout);
}
