//! Kernel reach on the host: the kernel's tracepoints as sdt and rawtp
//! probes, counted exactly against execs the test makes; fbt's listing and,
//! where the kernel can enable it, its probes (the kernel-matrix guests
//! test fbt on kernels with kprobes and trampolines), else the error that
//! names what is missing.

use super::*;

/// Runs `program` `n` times from a copy with a name no other process has.
fn exec_copies(n: usize) -> String {
    let dir = util::scratch_dir("dtrace-reach");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let copy = dir.join("reachtrue");
    std::fs::copy("/bin/true", &copy).expect("copy /bin/true");
    for _ in 0..n {
        assert!(Command::new(&copy).status().expect("exec").success());
    }
    copy.display().to_string()
}

#[test]
fn sdt_and_rawtp_count_execs_exactly_with_typed_arguments() {
    let script = r#"
        BEGIN { same = 0; }
        sdt:sched::sched_process_exec /basename(stringof(args[0])) == "reachtrue"/ {
            @sdt = count(); @same = count(); same += args[1] == pid;
        }
        rawtp:sched::sched_process_exec /stringof(args[0]->comm) == "reachtrue"/ {
            @rawtp = count(); @bprm[basename(stringof(args[2]->filename))] = count();
        }
        END { printa("sdt %@d\n", @sdt); printa("rawtp %@d\n", @rawtp); printa("bprm %s %@d\n", @bprm);
              printf("pid %d\n", same); }"#;
    let mut t = Tracer::spawn(&["-qn", READY, "-n", script]);
    t.wait_for("ready");
    exec_copies(7);
    let out = t.stop();
    out.assert_no_panic();
    for line in ["sdt 7", "rawtp 7", "bprm reachtrue 7", "pid 7"] {
        assert!(out.stdout.lines().any(|l| l == line), "{line}:\n{}\n{}", out.stdout, out.stderr);
    }
}

#[test]
fn sdt_and_rawtp_list_with_their_argument_types() {
    let out = run(&["-lv", "-n", "sdt:sched::sched_switch", "-n", "rawtp:sched::sched_switch"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for line in [
        "sdt             sched                                   sched_switch",
        "rawtp             sched                                   sched_switch",
        "args[0]: char *",
        "args[1]: pid_t",
        "args[2]: struct task_struct *",
    ] {
        assert!(out.stdout.contains(line), "{line}:\n{}", out.stdout);
    }
    // Groups other providers own are not tracepoints here.
    let out = run(&["-l", "-n", "sdt:syscalls::"]);
    assert_eq!(out.code(), 1, "{}", out.stdout);
    assert!(out.stderr.contains("failed to match sdt:syscalls::: No probe matches description"), "{}", out.stderr);
}

#[test]
fn fbt_lists_every_function_with_prototype_types() {
    let out = run(&["-l", "-P", "fbt"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let probes = out.stdout.lines().count() - 1;
    assert!(probes > 10_000, "{probes} fbt probes");
    let out = run(&["-lv", "-n", "fbt:vmlinux:vfs_read:"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for line in [
        "vmlinux                          vfs_read entry",
        "args[0]: struct file *",
        "args[2]: size_t",
        "args[1]: ssize_t",
    ] {
        assert!(out.stdout.contains(line), "{line}:\n{}", out.stdout);
    }
    // A description naming one function lists it alone; a later pattern
    // lists the rest, without that function twice.
    let out = run(&["-l", "-n", "fbt::vfs_read:entry", "-n", "fbt::vfs_rea*:entry"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let functions: Vec<&str> = out.stdout.lines().skip(1).filter_map(|l| l.split_whitespace().nth(3)).collect();
    assert_eq!(functions.iter().filter(|f| **f == "vfs_read").count(), 1, "{}", out.stdout);
    assert!(functions.contains(&"vfs_readv"), "{}", out.stdout);
    // args[] type-check against the kernel without privileges' worth of work.
    let out = run(&["-e", "-n", "fbt::vfs_read:entry { trace(stringof(args[0]->f_path.dentry->d_name.name)); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let out = run(&["-e", "-n", "fbt::vfs_read:entry { trace(args[0]->no_such_member); }"]);
    assert_eq!(out.code(), 1, "{}", out.stderr);
}

/// Where the kernel has neither kprobes nor trampolines (this project's
/// development machines), enabling says so, exits 1 and leaves nothing
/// attached; elsewhere the probe fires.
#[test]
fn fbt_enables_or_names_the_missing_kernel_facility() {
    let out = run(&["-qn", "fbt::vfs_read:entry { @ = count(); } tick-100ms { exit(0); }"]);
    out.assert_no_panic();
    if out.code() == 0 {
        return;
    }
    assert_eq!(out.code(), 1);
    assert!(
        out.stderr.contains("fbt probes cannot be enabled")
            && (out.stderr.contains("kprobes") || out.stderr.contains("trampolines")),
        "{}",
        out.stderr
    );
}

#[test]
fn caller_and_kernel_symbol_functions_name_where_the_probe_fired() {
    // caller, func(), mod() and %a agree, and none of them is the BPF
    // program or the tracepoint's dispatch code. Other tests exec programs
    // at the same time, so only the -c command's exec counts (traced from
    // before it: evaltime=exec).
    let out = run(&[
        "-q",
        "-x",
        "evaltime=exec",
        "-n",
        r#"rawtp:sched::sched_process_exec, sdt:sched::sched_process_exec
           /pid == $target/ { printf("%a\n", caller); func(caller); printf("\n"); mod(caller); printf("\n"); }"#,
        "-c",
        "/bin/true",
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 6, "two probes, three lines each: {}", out.stdout);
    for probe in lines.chunks(3) {
        let [at, func, module] = probe else { unreachable!() };
        assert!(at.starts_with(&format!("{func}+0x")), "{probe:?}");
        assert_eq!(*module, "vmlinux", "{probe:?}");
        for machinery in ["bpf`", "__traceiter_", "bpf_trace_run", "perf_trace_"] {
            assert!(!func.contains(machinery), "{probe:?}");
        }
    }
}

#[test]
fn solaris_interrupt_probes_fire_on_the_irq_tracepoints() {
    let out = run(&["-l", "-n", "sdt:::interrupt-start", "-n", "sdt:::interrupt-complete"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for name in ["interrupt-start", "interrupt-complete"] {
        assert!(out.stdout.lines().any(|l| l.contains(" irq ") && l.ends_with(name)), "{name}:\n{}", out.stdout);
    }
    // Direct I/O to a file on disk completes by interrupt.
    let file = format!("/var/tmp/dtrace-irq-{}", std::process::id());
    let script = r#"sdt:::interrupt-start { @start[arg0] = count(); }
        sdt:::interrupt-complete { @complete[arg0] = count(); }
        END { printa("start %d %@d\n", @start); printa("complete %d %@d\n", @complete); }"#;
    let mut t = Tracer::spawn(&["-qn", READY, "-n", script]);
    t.wait_for("ready");
    let dd = Command::new("dd")
        .args([
            "if=/dev/zero",
            &format!("of={file}"),
            "bs=64k",
            "count=16",
            "oflag=direct",
            "conv=fsync",
            "status=none",
        ])
        .status();
    let _ = std::fs::remove_file(&file);
    assert!(dd.expect("run dd").success());
    let out = t.stop();
    out.assert_no_panic();
    let irqs = |what: &str| -> Vec<String> {
        out.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(what))
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect()
    };
    let (started, completed) = (irqs("start "), irqs("complete "));
    assert!(!started.is_empty(), "{}\n{}", out.stdout, out.stderr);
    assert!(started.iter().any(|irq| completed.contains(irq)), "{}", out.stdout);
}
