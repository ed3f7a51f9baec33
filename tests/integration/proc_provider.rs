//! The proc provider: process creation, exec (success and failure), exit
//! reasons and signals, with their typed arguments (psinfo_t, lwpsinfo_t),
//! checked against processes the tests start.

use super::*;

const SCRIPT: &str = r#"
proc:::create { printf("create %d %d %d\n", pid, args[0]->pr_pid, args[0]->pr_ppid); }
proc:::exec { printf("exec %d %s\n", ppid, args[0]); }
proc:::exec-success { printf("exec-success %d %d %s\n", pid, ppid, curpsinfo->pr_psargs); }
proc:::exec-failure { printf("exec-failure %d %d\n", ppid, args[0]); }
proc:::exit { printf("exit %d %d %d\n", pid, ppid, args[0]); }
"#;

/// The lines of `out` whose second word is `pid`.
fn lines_of(out: &str, pid: u32) -> Vec<String> {
    out.lines().filter(|l| l.split(' ').nth(1) == Some(pid.to_string().as_str())).map(String::from).collect()
}

#[test]
fn create_exec_and_exit_follow_a_shell() {
    let mut t = Tracer::spawn(&["-qn", READY, "-n", SCRIPT]);
    t.wait_for("ready");
    // The shell forks three children: one execs false (exit status 1), one
    // fails to exec (ENOENT, then exits 127), one is killed by a signal.
    let mut sh = Command::new("sh")
        .args(["-c", "/bin/false; /nonexistent-dtrace-test 2>/dev/null; sh -c 'kill -KILL $$'; exit 0"])
        .spawn()
        .expect("sh");
    let shell = sh.id();
    sh.wait().expect("sh");
    let out = t.stop();
    let from_shell = lines_of(&out.stdout, shell);
    let created: Vec<u32> = from_shell
        .iter()
        .filter(|l| l.starts_with("create "))
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(created.len(), 3, "{}", out.stdout);
    // Each create names the child, whose parent is the shell.
    for l in from_shell.iter().filter(|l| l.starts_with("create ")) {
        assert_eq!(l.split(' ').nth(3), Some(shell.to_string().as_str()), "{l}");
    }
    let has = |line: String| out.stdout.lines().any(|l| l == line);
    assert!(has(format!("exec {shell} /bin/false")), "{}", out.stdout);
    assert!(has(format!("exec-success {} {shell} /bin/false", created[0])), "{}", out.stdout);
    assert!(has(format!("exit {} {shell} 1", created[0])), "CLD_EXITED {}", out.stdout);
    assert!(has(format!("exec-failure {shell} 2")), "ENOENT {}", out.stdout);
    assert!(has(format!("exit {} {shell} 1", created[1])), "{}", out.stdout);
    assert!(has(format!("exit {} {shell} 2", created[2])), "CLD_KILLED {}", out.stdout);
    assert!(has(format!("exit {shell} {} 1", std::process::id())), "the shell itself {}", out.stdout);
}

#[test]
fn signal_send_names_the_target_and_the_signal() {
    let script = format!(
        r#"proc:::signal-send /pid == {}/ {{ printf("%d %d %d %d\n", pid, args[1]->pr_pid, args[0]->pr_lwpid, args[2]); }}"#,
        std::process::id()
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    let mut sleeper = Command::new("sleep").arg("5").spawn().expect("sleep");
    let target = sleeper.id();
    // SAFETY: signalling a child of ours.
    unsafe { libc::kill(target as i32, libc::SIGTERM) };
    sleeper.wait().expect("sleep");
    let out = t.stop();
    let want = format!("{} {target} {target} {}", std::process::id(), libc::SIGTERM);
    assert!(out.stdout.lines().any(|l| l == want), "want {want:?} in {}", out.stdout);
}

#[test]
fn verbose_listing_shows_argument_types_and_stability() {
    let out = run(&["-lv", "-n", "proc:::signal-send"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let want = "\n\tArgument Attributes\n\t\tIdentifier Names: Evolving\n\t\tData Semantics:   Evolving\n\t\tDependency Class: ISA\n\n\tArgument Types\n\t\targs[0]: lwpsinfo_t *\n\t\targs[1]: psinfo_t *\n\t\targs[2]: int\n\n";
    assert!(out.stdout.ends_with(want), "{}", out.stdout);
    let out = run(&["-lv", "-n", "dtrace:::BEGIN"]);
    assert!(out.stdout.ends_with("\tArgument Types\n\t\tNone\n\n"), "{}", out.stdout);
}

#[test]
fn exit_fires_once_when_threads_exit_together() {
    let w = util::Workload::spawn(&["exit-threads", "6"]);
    let pid = w.pid();
    let script = format!(
        r#"proc:::exit /pid == {pid}/ {{ @e = count(); }} proc:::lwp-exit /pid == {pid}/ {{ @l = count(); }}
           END {{ printa("exit %@d\n", @e); printa("lwp-exit %@d\n", @l); }}"#
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    w.go();
    let out = t.stop();
    assert!(out.stdout.lines().any(|l| l == "exit 1"), "{}", out.stdout);
    // Every thread fires lwp-exit, the last one too (then exit), as on Solaris.
    assert!(out.stdout.lines().any(|l| l == "lwp-exit 7"), "{}", out.stdout);
}

/// Solaris' other proc probes, on a python3 program that does each thing
/// once: forks a child and starts a thread (start, lwp-start, each in the
/// new one's own context; a child's first thread fires lwp-start after
/// start), sends itself a signal it ignores
/// (signal-discard), takes a blocked signal with sigtimedwait
/// (signal-clear), and forks a child that reads address 0 (fault: no
/// mapping there, FLTBOUNDS, with SIGSEGV's siginfo). SIGCHLD, which it
/// ignores by default, is discarded too, and left out.
#[test]
fn start_lwp_start_discard_clear_and_fault_fire_once_each() {
    let dir = util::scratch_dir("dtrace-proc");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("proc.py");
    std::fs::write(
        &program,
        // SIGUSR2 is blocked before the thread starts: a thread that has
        // finished but not yet exited must not take it (and die of it).
        "import ctypes, os, signal, threading\n\
         signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])\n\
         pid = os.fork()\nif pid == 0: os._exit(0)\nos.waitpid(pid, 0)\n\
         t = threading.Thread(target=lambda: None); t.start(); t.join()\n\
         signal.signal(signal.SIGUSR1, signal.SIG_IGN)\nos.kill(os.getpid(), signal.SIGUSR1)\n\
         os.kill(os.getpid(), signal.SIGUSR2)\n\
         assert signal.sigtimedwait([signal.SIGUSR2], 5).si_signo == signal.SIGUSR2\n\
         pid = os.fork()\nif pid == 0: ctypes.string_at(0)\nos.waitpid(pid, 0)\n",
    )
    .unwrap();
    let script = r#"
proc:::start /ppid == $target/ { @["start", pid != $target && curpsinfo->pr_ppid == $target] = count(); }
proc:::lwp-start /pid == $target/ { @["lwp-start", tid != pid && curlwpsinfo->pr_lwpid == tid] = count(); }
proc:::start /ppid == $target/ { self->started = 1; }
proc:::lwp-start /ppid == $target/ { @["child lwp-start after start", self->started && tid == pid] = count(); }
proc:::signal-discard /pid == $target && args[2] != SIGCHLD/ {
	@["discard", args[2] == SIGUSR1 && args[1]->pr_pid == $target && args[0]->pr_lwpid == $target] = count();
}
proc:::signal-clear /pid == $target/ { @["clear", args[0] == SIGUSR2] = count(); }
proc:::fault /ppid == $target/ {
	@["fault", args[0] == FLTBOUNDS && args[1]->si_signo == SIGSEGV && args[1]->si_code == 1] = count();
}
END { printa("%s %d %@d\n", @); }
"#;
    let out = run(&["-qn", script, "-c", &format!("/usr/bin/python3 {}", program.display())]);
    let _ = std::fs::remove_dir_all(&dir);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let mut lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    lines.sort();
    // Two children: the forked one and the faulting one.
    assert_eq!(
        lines,
        ["child lwp-start after start 1 2", "clear 1 1", "discard 1 1", "fault 1 1", "lwp-start 1 1", "start 1 2"],
        "{}{}",
        out.stdout,
        out.stderr
    );
}

/// pr_psargs of a process other than the current one: a signal's target,
/// running before tracing began (its command line from /proc) or started
/// after (recorded at its exec).
#[test]
fn psargs_of_a_signal_target_is_its_command_line() {
    let mut before = Command::new("sleep").args(["30", "1"]).spawn().expect("sleep");
    let script = format!(
        r#"proc:::signal-send /pid == {}/ {{ printf("%d [%s]\n", args[1]->pr_pid, args[1]->pr_psargs); }}"#,
        std::process::id()
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    let mut after = Command::new("sleep").args(["30", "2"]).spawn().expect("sleep");
    std::thread::sleep(std::time::Duration::from_millis(100));
    for child in [&mut before, &mut after] {
        child.kill().expect("kill");
        child.wait().expect("wait");
    }
    let out = t.stop();
    out.assert_no_panic();
    for (child, args) in [(&before, "sleep 30 1"), (&after, "sleep 30 2")] {
        let line = format!("{} [{args}]", child.id());
        assert!(out.stdout.lines().any(|l| l == line), "{line}: {}", out.stdout);
    }
}
