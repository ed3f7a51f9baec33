//! Kernel structs from the running kernel's BTF: `curthread`, casts to
//! kernel struct pointers, `->` and `.` chains, char arrays as strings,
//! DTrace's messages for bad members, and faults on bad addresses.

use super::*;

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
    assert!(out.stderr.contains("failed to resolve type struct no_such_struct"), "{}", out.stderr);
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
fn a_fault_in_a_predicate_is_reported_there() {
    let out = run(&["-qn", r#"BEGIN /((struct task_struct *)8)->pid == 1/ { trace(1); } BEGIN { exit(0); }"#]);
    assert_eq!(out.code(), 0);
    assert!(
        out.stderr.contains("dtrace: error on enabled probe ID 1 (ID 1: dtrace:::BEGIN): invalid address (0x"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.trim_end().ends_with(") in predicate"), "{}", out.stderr);
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
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
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
