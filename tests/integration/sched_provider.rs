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
    // The loop forks nothing (bash's own SECONDS), so the shell itself spins
    // rather than waiting for children.
    let spin = "while [ $SECONDS -lt 2 ]; do :; done";
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

/// Solaris' queues: a thread is enqueued when it becomes runnable and
/// dequeued when it takes a CPU (or moves), so over a process's whole life
/// every enqueue has its dequeue, on the same CPU's queue.
#[test]
fn enqueue_and_dequeue_pair_on_one_cpu_over_a_process_life() {
    let script = r#"
        sched:::enqueue /args[1]->pr_fname == "sleep"/ {
            @e[args[1]->pr_pid] = count();
            queued[args[0]->pr_lwpid] = args[2]->cpu_id + 1;
        }
        sched:::dequeue /args[1]->pr_fname == "sleep"/ {
            @d[args[1]->pr_pid] = count();
            @same[args[1]->pr_pid, queued[args[0]->pr_lwpid] == args[2]->cpu_id + 1] = count();
            queued[args[0]->pr_lwpid] = 0;
        }
        END { printa("enqueue %d %@d\n", @e); printa("dequeue %d %@d\n", @d); printa("same %d %d %@d\n", @same); }"#;
    let mut t = Tracer::spawn(&["-qn", READY, "-n", script]);
    t.wait_for("ready");
    // Three sleeps: each wakeup enqueues the thread.
    let mut child = Command::new("sleep").args(["0.05", "0.05", "0.05"]).spawn().expect("sleep");
    let pid = child.id();
    child.wait().expect("sleep");
    let out = t.stop();
    out.assert_no_panic();
    let count = |prefix: String| -> u64 {
        out.stdout.lines().find_map(|l| l.strip_prefix(&prefix)).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
    };
    let enqueued = count(format!("enqueue {pid} "));
    assert!(enqueued >= 1, "{}", out.stdout);
    assert_eq!(count(format!("dequeue {pid} ")), enqueued, "{}", out.stdout);
    assert_eq!(count(format!("same {pid} 1 ")), enqueued, "{}", out.stdout);
}

/// Priority inheritance: a nice 10 thread holding a PI mutex that a nice 0
/// thread waits for is lent priority 120 (from 130), and given back 130 at
/// the unlock: change-pri fires twice per round, with the old priority in
/// args[0]->pr_pri and the new one in args[2].
#[test]
fn change_pri_fires_for_priority_inheritance() {
    let w = util::Workload::spawn(&["pi-boost", "3"]);
    let pid = w.pid();
    let script = format!(
        r#"sched:::change-pri /args[1]->pr_pid == {pid}/ {{
               printf("%d %d %d\n", args[0]->pr_lwpid, args[0]->pr_pri, args[2]);
           }}"#
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    let holders = w.go();
    let out = t.stop();
    out.assert_no_panic();
    let expected: Vec<String> =
        holders.lines().flat_map(|tid| [format!("{tid} 130 120"), format!("{tid} 120 130")]).collect();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty() && *l != "ready").collect();
    assert_eq!(lines, expected, "{}", out.stdout);
}

/// The clock tick charges the thread it interrupts: a busy process takes
/// ticks.
#[test]
fn tick_fires_in_a_busy_thread() {
    let script = r#"sched:::tick { @[pid] = count(); } END { printa("tick %d %@d\n", @); }"#;
    let mut t = Tracer::spawn(&["-qn", READY, "-n", script]);
    t.wait_for("ready");
    let spin = "end=$(($(date +%s) + 1)); while [ $(date +%s) -le $end ]; do :; done";
    let mut spinner = Command::new("bash").args(["-c", spin]).spawn().expect("bash");
    let pid = spinner.id();
    spinner.wait().expect("spinner");
    let out = t.stop();
    out.assert_no_panic();
    assert!(out.stdout.lines().any(|l| l.starts_with(&format!("tick {pid} "))), "{pid}: {}", out.stdout);
}

/// A thread woken from CPU 0 onto busy CPU 1 makes CPU 0 ask CPU 1 to
/// reschedule: surrender fires there, in the thread it interrupts.
#[test]
fn surrender_fires_on_the_cpu_asked_to_reschedule() {
    let shared = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list")
        .or_else(|_| std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cache/index2/shared_cpu_list"))
        .unwrap_or_default();
    if !shared.trim().contains('1') && !shared.trim().contains('-') {
        // Without a shared cache the kernel queues the wakeup on CPU 1
        // itself, which then reschedules without being asked.
        eprintln!("skipped: CPUs 0 and 1 share no cache ({shared:?})");
        return;
    }
    let script = r#"sched:::surrender { @[cpu] = count(); } END { printa("surrender %d %@d\n", @); }"#;
    let mut t = Tracer::spawn(&["-qn", READY, "-n", script]);
    t.wait_for("ready");
    let spin = "end=$(($(date +%s) + 1)); while [ $(date +%s) -le $end ]; do :; done";
    let mut spinner = Command::new("taskset").args(["-c", "1", "bash", "-c", spin]).spawn().expect("taskset");
    let wake = "for i in $(seq 50); do echo; sleep 0.01; done | taskset -c 1 cat > /dev/null";
    let status = Command::new("taskset").args(["-c", "0", "bash", "-c", wake]).status().expect("taskset");
    assert!(status.success());
    spinner.wait().expect("spinner");
    let out = t.stop();
    out.assert_no_panic();
    assert!(out.stdout.lines().any(|l| l.starts_with("surrender 1 ")), "{}", out.stdout);
}

/// Probes Linux has no counterpart for are listed, and enabling one says
/// why it will not fire.
#[test]
fn probes_without_a_linux_event_say_why() {
    let out = run(&["-l", "-n", "sched:::remain-cpu", "-n", "sched:::schedctl-yield"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let out = run(&["-qn", "sched:::remain-cpu { trace(1); } BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("sched:::remain-cpu will not fire: Linux's scheduler has no tracepoint"),
        "{}",
        out.stderr
    );
}
