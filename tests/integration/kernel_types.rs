//! Kernel structs from the running kernel's BTF: `curthread`, casts to
//! kernel struct pointers, `->` and `.` chains, char arrays as strings,
//! DTrace's messages for bad members, and faults on bad addresses.

use super::*;
use crate::util::script;

#[test]
fn curthread_members_read_the_current_task() {
    // BEGIN fires in dtrace itself: its comm, and its pid/ppid seen two ways.
    let out = run(&[
        "-qn",
        r#"BEGIN { printf("%s %d %d %d\n", curthread->comm, curthread->pid == pid, curthread->tgid == pid,
                  curthread->real_parent->tgid == ppid); exit(0); }"#,
    ]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "dtrace 1 1 1\n\n");
}

#[test]
fn pointers_are_conditions_and_compare() {
    let out = run(&[
        "-qn",
        r#"BEGIN { printf("%d %d %d %d %d %d", curthread->real_parent != NULL, curthread == 0, !curthread,
                  curthread && 1, curthread == curthread, curthread ? 7 : 8);
                  if (curthread->real_parent) printf(" if\n"); exit(0); }"#,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "1 0 0 1 1 7 if\n\n");
}

#[test]
fn casts_to_kernel_struct_pointers_and_member_chains() {
    let out = run(&[
        "-qn",
        r#"BEGIN { t = (struct task_struct *)curthread; printf("%s %d\n", t->comm, t->real_parent->real_parent->pid >= 0);
                  exit(0); }"#,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "dtrace 1\n\n");
    // In a system call probe the task is the caller's.
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"syscall::openat:entry /curthread->comm == "cat"/ { printf("%s %d\n", curthread->comm, curthread->tgid == pid); }"#,
    ]);
    t.wait_for("ready");
    Command::new("cat").arg("/etc/hostname").output().expect("cat");
    let out = t.stop();
    assert!(out.stdout.lines().any(|l| l == "cat 1"), "{}", out.stdout);
}

#[test]
fn a_wrong_member_is_named_with_its_struct() {
    let out = run(&["-n", "BEGIN { trace(curthread->commm); }"]);
    assert_eq!(out.code(), 1);
    assert_eq!(
        out.stderr,
        "dtrace: invalid probe specifier BEGIN { trace(curthread->commm); }: in action list: commm is not a member of struct task_struct\n"
    );
    let out = run(&["-n", "BEGIN { trace(((struct no_such_struct *)0)->x); }"]);
    assert_eq!(out.code(), 1);
    // An undeclared struct is a forward declaration, as DTrace's dt_decl_type makes it.
    assert!(
        out.stderr.contains(
            "operator -> cannot be applied to a forward declaration: no struct no_such_struct definition is available"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_bad_kernel_address_is_a_runtime_error() {
    let out =
        run(&["-qn", r#"BEGIN { trace(((struct task_struct *)16)->pid); } BEGIN { printf("after\n"); exit(0); }"#]);
    assert_eq!(out.code(), 0);
    assert_eq!(out.stdout, "after\n\n");
    assert!(out.stderr.contains("invalid address (0x"), "{}", out.stderr);
    assert!(out.stderr.contains(") in action #1"), "{}", out.stderr);
    // So is a char array (read as a string) at a bad address.
    let out = run(&["-qn", r#"BEGIN { trace(((struct task_struct *)16)->comm); } BEGIN { exit(0); }"#]);
    assert_eq!(out.code(), 0);
    assert!(out.stderr.contains("invalid address (0x"), "{}", out.stderr);
}

#[test]
fn a_fault_in_a_predicate_names_its_clause_as_dtrace_utils_does() {
    let out = run(&["-qn", r#"BEGIN /((struct task_struct *)8)->pid == 1/ { trace(1); } BEGIN { exit(0); }"#]);
    assert_eq!(out.code(), 0);
    assert!(
        out.stderr.contains("dtrace: error on enabled probe ID 2 (ID 1: dtrace:::BEGIN): invalid address (0x"),
        "{}",
        out.stderr
    );
    // The statement ID is set before the predicate runs (dt_cg_prologue).
    assert!(out.stderr.contains(") in action #1 at BPF pc "), "{}", out.stderr);
}

#[test]
fn stack_prints_symbolized_kernel_frames() {
    let w = util::Workload::spawn(&["getppid", "300"]);
    let pid = w.pid();
    let path = script(
        "stack.d",
        &format!(
            "int done;\nsyscall::getppid:entry /pid == {pid}/ {{ @[stack()] = count(); }}\nsyscall::getppid:return /pid == {pid} && !done/ {{ stack(); done = 1; }}\n"
        ),
    );
    let mut t = Tracer::spawn(&["-q", "-n", READY, "-s", &path]);
    t.wait_for("ready");
    w.go();
    let out = t.stop();
    out.assert_no_panic();
    // Frames are `module`symbol+0xoffset`, indented by 14 spaces, as DTrace prints them.
    let frames: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("              vmlinux`")).collect();
    assert!(frames.iter().any(|f| f.contains("do_syscall_64+0x")), "{}", out.stdout);
    // The aggregation: one stack, counted 300 times, its count under its frames.
    let count = out.stdout.lines().filter_map(|l| l.trim().parse::<u64>().ok()).collect::<Vec<_>>();
    assert_eq!(count, vec![300], "{}", out.stdout);
}

#[test]
fn stacks_equal_in_their_first_n_frames_are_one_key_of_stack_n() {
    // Sampled kernel stacks share top frames and differ below them (the
    // idle loop of each CPU, a copy routine under read and write): stack(1)
    // and stack(2) must each print every distinct key once, as DTrace does.
    // (A stack lost to a full slot of the stack map prints no frames: the
    // empty keys are not compared.)
    let out = run(&[
        "-q",
        "-c",
        "dd if=/dev/zero of=/dev/null bs=512 count=1000000",
        "-n",
        "profile-997 { @one[stack(1)] = count(); @two[stack(2)] = count(); }",
        "-n",
        r#"END { printa("one%k\n", @one); printa("two%k\n", @two); }"#,
    ]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for (name, depth) in [("one", 1), ("two", 2)] {
        let keys: Vec<&str> =
            out.stdout.split("\n\n").filter_map(|k| k.strip_prefix(name)).filter(|k| !k.trim().is_empty()).collect();
        assert!(!keys.is_empty(), "no @{name}: {}", out.stdout);
        for key in &keys {
            assert!(key.lines().filter(|l| !l.is_empty()).count() <= depth, "@{name}: {key}");
        }
        let mut sorted = keys.clone();
        sorted.sort();
        let repeated: Vec<&&str> = sorted.windows(2).filter(|w| w[0] == w[1]).map(|w| &w[0]).collect();
        assert!(repeated.is_empty(), "@{name} repeats {repeated:?}: {}", out.stdout);
    }
}

#[test]
fn printf_and_printa_print_stacks_with_k() {
    // As dt_print_stack: a newline, then one frame per line, indented by
    // the width of a left-justified %-Nk.
    let out = run(&[
        "-qn",
        r#"BEGIN { printf("<%k>", stack()); printf("<%-3k>", stack()); @[stack()] = count();
                  printa("{%k %@d}", @); exit(0); }"#,
    ]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let parts: Vec<&str> = out.stdout.split('>').collect();
    assert!(parts[0].starts_with("<\n") && parts[0].ends_with('\n'), "{}", out.stdout);
    assert!(parts[0].lines().any(|l| l.starts_with("vmlinux`do_syscall_64+0x")), "{}", out.stdout);
    assert!(parts[1].lines().any(|l| l.starts_with("   vmlinux`do_syscall_64+0x")), "{}", out.stdout);
    let printa = &out.stdout[out.stdout.find('{').expect("printa output")..];
    assert!(printa.starts_with("{\n") && printa.trim_end().ends_with("\n 1}"), "{}", out.stdout);
    assert!(printa.lines().any(|l| l.starts_with("vmlinux`do_syscall_64+0x")), "{}", out.stdout);
}

#[test]
fn inet_ntoa_and_member_addresses() {
    // The bytes of dtrace's own tgid, in memory order, as a dotted quad.
    let out = run(&[
        "-qn",
        r#"BEGIN { printf("%s %d\n", inet_ntoa((ipaddr_t *)&curthread->tgid), curthread->tgid); exit(0); }"#,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let (dotted, tgid) = out.stdout.trim().split_once(' ').expect("two words");
    let b = tgid.parse::<u32>().expect("tgid").to_ne_bytes();
    assert_eq!(dotted, format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]));
    // A bad address is DTrace's runtime error.
    let out = run(&["-qn", r#"BEGIN { trace(inet_ntoa((ipaddr_t *)8)); } BEGIN { exit(0); }"#]);
    assert!(out.stderr.contains("invalid address (0x8) in action #1"), "{}", out.stderr);
}

/// A copy of /bin/echo called `name` (a comm a script can pick out), in a
/// fresh directory; returns the directory and the program.
fn echo_named(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = util::scratch_dir(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let echo = dir.join(name);
    std::fs::copy("/bin/echo", &echo).expect("copy echo");
    (dir, echo)
}

#[test]
fn copyin_reads_the_callers_memory() {
    let (dir, echo) = echo_named("dtcopyin");
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"syscall::write:entry /execname == "dtcopyin"/ { printf("%d %c %x\n", arg2, *(char *)copyin(arg1, 2), *(unsigned short *)copyin(arg1, 2)); }"#,
    ]);
    t.wait_for("ready");
    Command::new(&echo).arg("hi").output().expect("echo");
    let out = t.stop();
    std::fs::remove_dir_all(&dir).ok();
    // "hi\n": three bytes, 'h' first, and the first two as a little-endian short.
    assert!(out.stdout.lines().any(|l| l == "3 h 6968"), "{}", out.stdout);
    // A bad user address is DTrace's runtime error.
    let out = run(&["-qn", r#"BEGIN { trace(*(char *)copyin(8, 1)); } BEGIN { exit(0); }"#]);
    assert!(out.stderr.contains("invalid address (0x8) in action #1"), "{}", out.stderr);
}

#[test]
fn copyin_buffers_are_terminated_indexed_written_and_kept_and_copyinstr_takes_maxlen() {
    let (dir, echo) = echo_named("dtcopybuf");
    // shellsnoop's idiom: the buffer copied in is cut at the bytes written
    // by a store at an index only known at run time.
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"syscall::write:entry /execname == "dtcopybuf"/ {
            this->text = (char *)copyin(arg1, arg2);
            this->text[arg2 - 1] = '\0';
            printf("cut [%s]\n", stringof(this->text));
            printf("one [%s]\n", stringof(copyin(arg1, 1)));
            printf("max [%s] [%s]\n", copyinstr(arg1, 4), copyinstr(arg1, 0));
            this->a = (char *)alloca(8);
            this->a[arg2 - 5] = 'z';
            printf("alloca %c\n", this->a[1]);
            this->joined = strjoin(execname, strjoin("/", copyinstr(arg1)));
            printf("kept [%s]\n", stringof(this->text));
        }"#,
    ]);
    t.wait_for("ready");
    Command::new(&echo).arg("hello").output().expect("echo");
    let out = t.stop();
    std::fs::remove_dir_all(&dir).ok();
    out.assert_no_panic();
    // "hello\n" is six bytes: the newline cut, one byte alone, maxlen with
    // its NUL (4 gives 3 characters), an index of 1 into alloca memory;
    // the first buffer lives as long as the clause, whatever the
    // statements after it copy in or join.
    for line in ["cut [hello]", "one [h]", "max [hel] []", "alloca z", "kept [hello]"] {
        assert!(out.stdout.lines().any(|l| l == line), "{line}:\n{}\n{}", out.stdout, out.stderr);
    }
}

#[test]
fn bitfield_members_read_their_own_bits() {
    // signal_struct's is_child_subreaper and has_child_subreaper are
    // neighbouring one-bit fields. Under a subreaper parent (the shell made
    // one with prctl), dtrace has only the second set.
    let script = format!(
        r#"exec timeout 20 {} -qn 'BEGIN {{ printf("%d %d\n", curthread->signal->is_child_subreaper,
            curthread->signal->has_child_subreaper); exit(0); }}'"#,
        crate::util::DTRACE
    );
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &script]);
    // SAFETY: prctl is async-signal-safe; the child only sets a flag on itself.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            Ok(())
        });
    }
    let out = cmd.output().expect("sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout, "0 1\n\n");
}

#[test]
fn curpsinfo_describes_the_traced_process() {
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"syscall::exit_group:entry /curpsinfo->pr_fname == "sh"/ {
            printf("%d %d %d %d %s|%s|\n", curpsinfo->pr_pid, curpsinfo->pr_ppid, curpsinfo->pr_pgid,
                   curpsinfo->pr_sid, curpsinfo->pr_psargs, execargs); }"#,
    ]);
    t.wait_for("ready");
    // A shell in a new session: its pid is its process group and session ID.
    // (Not a group leader, setsid execs sh in the same process.)
    let mut child = Command::new("setsid").args(["sh", "-c", ":; :"]).spawn().expect("setsid");
    child.wait().expect("sh");
    let out = t.stop();
    let pid = child.id().to_string();
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with(&format!("{pid} ")))
        .unwrap_or_else(|| panic!("no row for {pid}: {}", out.stdout));
    // Oracle's execargs is the same command line.
    let (line, execargs) = line.trim_end_matches('|').split_once('|').expect("two strings");
    assert_eq!(execargs, "sh -c :; :", "execargs {line}");
    let fields: Vec<&str> = line.splitn(5, ' ').collect();
    assert_eq!(fields.len(), 5, "{line}");
    assert_eq!(fields[1], std::process::id().to_string(), "ppid {line}");
    assert_eq!(fields[2], pid, "pgid {line}");
    assert_eq!(fields[3], pid, "sid {line}");
    assert_eq!(fields[4], "sh -c :; :", "psargs {line}");
}

#[test]
fn bcopy_outside_alloca_memory_is_a_bad_address_or_size() {
    // As in DTrace, only alloca()'d memory may be written; the clause's
    // data is discarded and tracing goes on. A copy that starts inside it
    // and runs past its end is dtrace-utils' invalid size (the size).
    let out = run(&[
        "-qn",
        r#"BEGIN { this->p = alloca(8); printf("lost\n"); bcopy(curthread->comm, (void *)16, 4); }
           BEGIN { bcopy(curthread->comm, alloca(4), 9); } BEGIN { printf("went on\n"); exit(0); }"#,
    ]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "went on\n\n");
    let errors: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(errors.len(), 2, "{}", out.stderr);
    assert!(
        errors[0].starts_with(
            "dtrace: error on enabled probe ID 2 (ID 1: dtrace:::BEGIN): invalid address (0x10) in action #1 at BPF pc "
        ),
        "{}",
        errors[0]
    );
    assert!(
        errors[1]
            .starts_with("dtrace: error on enabled probe ID 3 (ID 1: dtrace:::BEGIN): invalid size (0x9) in action #2"),
        "{}",
        errors[1]
    );
}

#[test]
fn copyinto_copies_the_callers_memory_into_alloca_memory() {
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"syscall::openat:entry /execname == "cat"/ { this->buf = alloca(32); copyinto(arg1, 14, this->buf);
            printf("%s\n", stringof(this->buf)); }"#,
    ]);
    t.wait_for("ready");
    Command::new("cat").arg("/etc/hostname").output().expect("cat");
    let out = t.stop();
    assert!(out.stdout.lines().any(|l| l == "/etc/hostname"), "{}", out.stdout);
}

#[test]
fn stackdepth_counts_the_frames_stack_prints() {
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"syscall::getppid:entry /execname == "sh"/ { printf("depth %d\n", stackdepth); stack(); exit(0); }"#,
    ]);
    t.wait_for("ready");
    Command::new("sh").args(["-c", "echo $PPID"]).output().expect("sh");
    let out = t.finish();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let depth: usize = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("depth "))
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no depth in {}", out.stdout));
    let frames = out.stdout.lines().filter(|l| l.starts_with("              ")).count();
    assert!(depth > 0, "{}", out.stdout);
    assert_eq!(depth, frames, "{}", out.stdout);
}

#[test]
fn vtimestamp_counts_time_on_cpu_only() {
    // Two CPU-bound dd's share one CPU: each runs about half of the wall
    // time. A sleep runs almost not at all. Rows are matched by pid: other
    // processes may run dd or sleep meanwhile.
    let path = script(
        "vtime.d",
        r#"self uint64_t t;
self uint64_t v;
BEGIN { printf("ready\n"); }
syscall::read:entry,syscall::clock_nanosleep:entry /(execname == "dd" || execname == "sleep") && !self->t/
{ self->t = timestamp; self->v = vtimestamp; }
syscall::exit_group:entry /self->t/
{ printf("%d %d %d\n", pid, (timestamp - self->t) / 1000000, (vtimestamp - self->v) / 1000000); }
"#,
    );
    let mut t = Tracer::spawn(&["-qs", &path]);
    t.wait_for("ready");
    let dd = || {
        Command::new("taskset")
            .args(["-c", "0", "dd", "if=/dev/zero", "of=/dev/null", "bs=1M", "count=6000"])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dd")
    };
    let (mut a, mut b) = (dd(), dd());
    a.wait().expect("dd");
    b.wait().expect("dd");
    let mut sleep = Command::new("sleep").arg("0.3").spawn().expect("sleep");
    sleep.wait().expect("sleep");
    let out = t.stop();
    // (wall ms, cpu ms) of a process by pid.
    let times = |child: &std::process::Child| -> (u64, u64) {
        let row = out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{} ", child.id())))
            .unwrap_or_else(|| panic!("no row for {}: {}", child.id(), out.stdout));
        let mut w = row.split(' ').map(|n| n.parse::<u64>().expect("ms"));
        (w.next().expect("wall"), w.next().expect("cpu"))
    };
    for child in [&a, &b] {
        let (wall, cpu) = times(child);
        // Bounds loose enough for other tests running beside this one.
        assert!(wall > 0 && cpu * 100 >= wall * 15 && cpu * 100 <= wall * 75, "{}", out.stdout);
    }
    let (wall, cpu) = times(&sleep);
    assert!(wall >= 290 && cpu < 50, "{}", out.stdout);
}

/// stringof() of an address the kernel cannot read as its own reads it as
/// the current process's, as dtrace-utils does (a USDT or system call
/// argument); NULL stays a fault.
#[test]
fn stringof_reads_a_user_address_as_the_process_string() {
    let path = util::scratch_dir("dtrace-stringof");
    std::fs::write(&path, "x\n").expect("write");
    let shown = path.to_string_lossy().into_owned();
    let command = format!("cat {shown}");
    let out = run(&[
        "-qn",
        "syscall::openat:entry /pid == $target/ { printf(\"[%s]\\n\", stringof(arg1)); }",
        "-c",
        &command,
    ]);
    std::fs::remove_file(&path).ok();
    assert!(out.stdout.contains(&format!("[{shown}]\n")), "{}\n{}", out.stdout, out.stderr);
    let out = run(&["-qn", "BEGIN { trace(stringof(0)); } BEGIN { exit(0); }"]);
    assert!(out.stderr.contains("invalid address (0x0) in action #1"), "{}", out.stderr);
}

/// A thread on its CPU since before tracing began has run all that time:
/// its first vtimestamp is not 0 (scripts test `self->start` for nonzero).
#[test]
fn vtimestamp_of_a_thread_running_before_tracing_began() {
    let dir = util::scratch_dir("dtrace-vtime");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let flag = dir.join("go");
    // Spins (stat() only, no sleeping) until the flag exists, then getppid();
    // says so once it spins, before tracing begins.
    let mut spinner = Command::new("python3")
        .args([
            "-c",
            "import os, sys\nprint('spinning', flush=True)\nwhile not os.path.exists(sys.argv[1]): pass\nos.getppid()\n",
        ])
        .arg(&flag)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut said = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(spinner.stdout.take().expect("stdout")), &mut said)
        .expect("read");
    assert_eq!(said, "spinning\n");
    let probe =
        format!("syscall::getppid:entry /pid == {}/ {{ printf(\"%d\\n\", vtimestamp / 1000000); }}", spinner.id());
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &probe]);
    t.wait_for("ready");
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(&flag, "").expect("flag");
    spinner.wait().expect("python3");
    let out = t.stop();
    std::fs::remove_dir_all(&dir).ok();
    // The last getppid() is the one after the spinning.
    let ms: u64 = out.stdout.lines().filter_map(|l| l.parse().ok()).last().unwrap_or_else(|| panic!("{}", out.stdout));
    // Spinning for the 300 ms since tracing began, less its share of a
    // loaded machine.
    assert!((30..5000).contains(&ms), "{}", out.stdout);
}

#[test]
fn inet_ntop_writes_ipv6_addresses_as_illumos_does() {
    // A copy of echo under a name of our own writes each address's 16 bytes
    // (`echo -ne '\xHH...'`); the script reads them from write()'s buffer.
    let (dir, echo) = echo_named("dtinet6");
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"syscall::write:entry /execname == "dtinet6"/
           { printf("%s %s\n", inet_ntop(AF_INET6, copyin(arg1, 16)), inet_ntoa6(copyin(arg1, 16))); }"#,
    ]);
    t.wait_for("ready");
    // (address bytes, inet_ntop, inet_ntoa6), worked out from illumos'
    // dtrace.c: the zero run its byte-wise walk picks (a later run of equal
    // length wins when it ends at an odd byte), no ':' before the "::",
    // and a dotted tail for IPv4-mapped and -compatible addresses only.
    let cases: [([u8; 16], &str, &str); 8] = [
        ([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "2001:db8::1", "2001:db8::1"),
        ([0; 16], "::", "::"),
        ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "::1", "::1"),
        ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1], "::ffff:127.0.0.1", "127.0.0.1"),
        ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4], "::1.2.3.4", "1.2.3.4"),
        (
            [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x14, 0x4f, 0xff, 0xfe, 0x0b, 0x76, 0xc8],
            "fe80::214:4fff:fe0b:76c8",
            "fe80::214:4fff:fe0b:76c8",
        ),
        ([0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3], "1:0:0:2::3", "1:0:0:2::3"),
        ([0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1], "1:0:0:1::1:1", "1:0:0:1::1:1"),
    ];
    for (bytes, _, _) in &cases {
        let escaped: String = bytes.iter().map(|b| format!("\\x{b:02x}")).collect();
        Command::new(&echo).arg("-ne").arg(&escaped).output().expect("echo");
    }
    let out = t.stop();
    std::fs::remove_dir_all(&dir).ok();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty() && *l != "ready").collect();
    let want: Vec<String> = cases.iter().map(|(_, ntop, ntoa6)| format!("{ntop} {ntoa6}")).collect();
    assert_eq!(lines, want, "{}", out.stderr);
}

#[test]
fn strtok_without_a_saved_position_reads_address_zero() {
    // DTrace's strtok(NULL, ...) with nothing saved in this firing loads
    // from NULL: a bad-address fault, and tracing goes on.
    let out = run(&["-qn", r#"BEGIN { trace(strtok(NULL, ",")); } BEGIN { exit(0); }"#]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stderr.contains("invalid address (0x0) in action #1"), "{}", out.stderr);
    // inet_ntop() of a family other than AF_INET and AF_INET6.
    let out = run(&["-qn", r#"BEGIN { trace(inet_ntop(3, (void *)&curthread->comm)); } BEGIN { exit(0); }"#]);
    assert!(out.stderr.contains("illegal operation in action #1"), "{}", out.stderr);
}

/// uregs[] at a system call's entry: the registers the thread made it with
/// (x86_64: orig_ax holds the call's number, rax -ENOSYS until it returns).
#[cfg(target_arch = "x86_64")]
#[test]
fn uregs_holds_the_registers_a_system_call_was_made_with() {
    let w = util::Workload::spawn(&["getppid", "3"]);
    let script = format!(
        "syscall::getppid:entry /pid == {}/ {{ printf(\"%d %d %d\\n\", uregs[R_ERR], (long)uregs[R_RAX], uregs[R_PC] != 0); }}",
        w.pid()
    );
    let mut t = Tracer::spawn(&["-q", "-n", READY, "-n", &script]);
    t.wait_for("ready");
    w.go();
    let out = t.stop();
    out.assert_no_panic();
    let want = format!("{} -38 1", libc::SYS_getppid);
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty() && *l != "ready").collect();
    assert!(!lines.is_empty() && lines.iter().all(|l| *l == want), "{}", out.stdout);
}

/// `struct timespec` is the system call ABI's (the kernel's BTF has none):
/// a script copies in clock_nanosleep()'s request and reads its members;
/// a script's own definition (`#include <time.h>` under -C) replaces it.
#[test]
fn struct_timespec_is_the_system_call_abi_type() {
    let out = run(&[
        "-qn",
        "syscall::clock_nanosleep:entry /pid == $target/ {
            this->ts = (struct timespec *)copyin(arg2, sizeof (struct timespec));
            printf(\"%d %d.%09d\\n\", sizeof (timespec_t), this->ts->tv_sec, this->ts->tv_nsec);
        }",
        "-c",
        "sleep 1.25",
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "16 1.250000000", "{}", out.stderr);
    let path = script(
        "timespec-include",
        "#include <time.h>\nBEGIN { printf(\"%d\\n\", sizeof (struct timespec)); exit(0); }\n",
    );
    let out = run(&["-C", "-qs", &path]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "16");
}

/// print() of a pointer to a struct prints the address and, indented to the
/// body column, the members that are not zero (dtrace-utils' print()); a
/// member that begins past printsize ends it with `...`; a NULL pointer is
/// an invalid address. The kernel's own struct, read through curthread, too.
#[test]
fn print_of_a_struct_pointer_shows_what_it_points_to() {
    let out = run(&[
        "-qn",
        r#"struct pair { int a; char name[6]; long b; };
           BEGIN { p = (struct pair *)alloca(sizeof(struct pair)); p->a = -2; p->name[0] = 'o'; p->name[1] = 'k';
                   print(p); setopt("printsize", "8"); print(p); print(curthread->real_parent->cred); exit(0); }"#,
    ]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let body = |from: usize, want: &[&str]| {
        for (i, w) in want.iter().enumerate() {
            assert_eq!(lines.get(from + i).copied(), Some(*w), "line {} of {}", from + i, out.stdout);
        }
    };
    let pad = " ".repeat(44);
    assert!(lines[0].starts_with("0x") && lines[0].ends_with(" = *"), "{}", out.stdout);
    body(
        1,
        &[
            &format!("{pad}(struct pair) {{"),
            &format!("{pad} .a = (int)-2,"),
            &format!("{pad} .name = (char [6]) ["),
            &format!("{pad}  (char)'o',"),
            &format!("{pad}  (char)'k',"),
            &format!("{pad} ],"),
            &format!("{pad}}}"),
        ],
    );
    assert_eq!(lines[8], lines[0], "{}", out.stdout);
    // name begins before byte 8 and shows whole; b does not.
    body(15, &[&format!("{pad} ..."), &format!("{pad}}}")]);
    // The parent's credentials: a kernel struct, read whole.
    assert!(lines[17].starts_with("0xffff") && lines[18] == format!("{pad}(struct cred) {{"), "{}", out.stdout);
    assert!(lines.iter().any(|l| l.starts_with(&format!("{pad} .usage = "))), "{}", out.stdout);

    let out = run(&["-qn", "struct pair { int a; }; BEGIN { print((struct pair *)0); } BEGIN { exit(0); }"]);
    assert!(out.stderr.contains("invalid address (0x0) in action #1"), "{}", out.stderr);
}
