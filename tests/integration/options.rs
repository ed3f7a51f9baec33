//! dtrace(1)'s process options (-c, -p), -F, -S, -x checking, the options
//! this dtrace refuses, and destructive actions with and without -w.

use super::*;

/// The workload example (see util::Workload) as a -c command line.
fn workload_command(args: &str) -> String {
    format!("{} {args}", crate::util::workload_path().display())
}

/// The pid in dtrace's `pid N has exited` (or `... exited with status`,
/// `... terminated by`) notice.
fn exited_pid(stderr: &str) -> Option<u32> {
    let line = stderr.lines().find(|l| l.starts_with("dtrace: pid "))?;
    line["dtrace: pid ".len()..].split(' ').next()?.parse().ok()
}

#[test]
fn c_runs_the_command_as_target_and_counts_only_its_system_calls() {
    let command = workload_command("getppid 4321");
    let out = run(&[
        "-q",
        "-c",
        &command,
        "-n",
        r#"BEGIN { printf("target %d\n", $target); }
           syscall::getppid:entry /pid == $target/ { @ = count(); }
           END { printa("count %@d\n", @); }"#,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains("count 4321\n"), "{}", out.stdout);
    // dtrace.c's notice() is silent under -q.
    assert_eq!(exited_pid(&out.stderr), None, "{}", out.stderr);
    let out = run(&["-c", &command, "-n", r#"BEGIN { printf("target %d\n", $target); }"#]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let pid = exited_pid(&out.stderr).unwrap_or_else(|| panic!("no exit notice: {}", out.stderr));
    assert!(out.stderr.contains(&format!("dtrace: pid {pid} has exited\n")), "{}", out.stderr);
    assert!(out.stdout.contains(&format!("target {pid}\n")), "{}", out.stdout);
}

#[test]
fn c_reports_how_the_command_ended() {
    let out = run(&["-c", "false", "-n", "BEGIN {}"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let pid = exited_pid(&out.stderr).expect("notice");
    assert!(out.stderr.contains(&format!("dtrace: pid {pid} exited with status 1\n")), "{}", out.stderr);
    let out = run(&["-c", "no-such-command-here", "-n", "BEGIN"]);
    assert_eq!(out.code(), 1);
    assert_eq!(out.stderr, "dtrace: failed to execute no-such-command-here: No such file or directory\n");
}

#[test]
fn p_watches_a_running_process_until_it_exits() {
    let w = util::Workload::spawn(&["getppid", "2500"]);
    let pid = w.pid().to_string();
    let mut t = Tracer::spawn(&[
        "-p",
        &pid,
        "-n",
        READY,
        "-n",
        r#"syscall::getppid:entry /pid == $target/ { @ = count(); } END { printa("count %@d\n", @); }"#,
    ]);
    t.wait_for("ready");
    w.go();
    // dtrace ends by itself once the process has exited.
    let out = t.finish();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stderr.contains(&format!("dtrace: pid {pid} has exited\n")), "{}", out.stderr);
    assert!(out.stdout.contains("count 2500\n"), "{}", out.stdout);
    let out = run(&["-p", "2147483647", "-n", "BEGIN"]);
    assert_eq!((out.code(), out.stderr.as_str()), (1, "dtrace: failed to grab pid 2147483647: No such process\n"));
}

#[test]
fn flowindent_shows_entries_and_returns() {
    let command = workload_command("getppid 3");
    let out = run(&["-F", "-c", &command, "-n", "syscall::getppid:entry, syscall::getppid:return /pid == $target/ {}"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines[0], format!("{:>3} {:<41}", "CPU", "FUNCTION"), "{}", out.stdout);
    // Entry and return of each call alternate, at depth 0 (system calls
    // use => and <=, as in DTrace).
    let flows: Vec<&str> = lines[1..].iter().map(|l| l[4..].trim_end()).collect();
    assert_eq!(flows, [" => getppid", " <= getppid"].repeat(3), "{}", out.stdout);
}

#[test]
fn s_shows_the_generated_program() {
    let out = run(&["-S", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    // Headed and laid out as dtrace-utils' listing (options/tst.S): the
    // clause's description, then index, byte offset and fields of each
    // instruction before its text.
    assert!(
        out.stderr.contains("Disassembly of clause :::BEGIN\n0000 00000: bf 6 1 0000 00000000    r6 = r1\n"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.lines().any(|l| l.ends_with(" 00000000    exit")), "{}", out.stderr);
}

#[test]
fn s_lists_each_programs_variables_with_their_offsets() {
    // As dtrace-utils' -S: one row per variable the program touches, its
    // offset in its storage (globals at C's natural alignment) and access.
    let out = run(&["-S", "-qn", "char c; int var; BEGIN { var = 1; this->x = 2; trace(this->x + pid); exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let rows: Vec<Vec<&str>> =
        out.stderr.lines().skip_while(|l| !l.starts_with("NAME ")).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0][..8], ["NAME", "ID", "OFFSET", "KND", "SCP", "RANGE", "FLAG", "TYPE"], "{}", out.stderr);
    let row = |name: &str| rows.iter().find(|r| r[0] == name).unwrap_or_else(|| panic!("{name}: {}", out.stderr));
    assert_eq!((row("var")[2], row("var")[3], row("var")[4], row("var")[6]), ("4", "scl", "glb", "w"));
    assert_eq!((row("x")[2], row("x")[4], row("x")[6]), ("0", "loc", "r/w"));
    // A built-in has no offset.
    assert_eq!((row("pid")[2], row("pid")[3], row("pid")[5]), ("scl", "glb", "r"));
    assert!(rows.iter().all(|r| r[0] != "c"), "an unused variable is no row: {}", out.stderr);
}

#[test]
fn unknown_and_unsupported_options_say_so() {
    let out = run(&["-x", "nosuchopt", "-n", "BEGIN"]);
    assert_eq!((out.code(), out.stderr.as_str()), (1, "dtrace: failed to set -x nosuchopt: Invalid option name\n"));
    // Options that ask for what this dtrace always does are accepted, their
    // values checked; ones whose subject does not exist here are refused.
    let out =
        run(&["-x", "bufpolicy=switch", "-x", "cleanrate=50hz", "-x", "temporal", "-64", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for (option, message) in [
        ("quiet=garbage", "Invalid value for specified option"),
        ("zdefs=1", "Invalid value for specified option"),
        ("cleanrate=fast", "Invalid value for specified option"),
        ("bufpolicy=circular", "Invalid value for specified option"),
        ("ldpath=/bin/ld", "Option not supported: -G writes its object without a linker"),
        ("grabanon", "Option not supported: there is no anonymous tracing on Linux"),
        ("encoding=ebcdic", "Invalid value for specified option"),
    ] {
        let out = run(&["-x", option, "-n", "BEGIN"]);
        // dtrace(1) names the option without its value.
        let name = option.split('=').next().unwrap_or(option);
        assert_eq!(
            (out.code(), out.stderr.as_str()),
            (1, format!("dtrace: failed to set -x {name}: {message}\n").as_str())
        );
    }
    for (flags, why) in [
        (&["-32"][..], "-32 is not supported"),
        (&["-h", "-G"], "-h and -G may not be used together"),
        (&["-G"], "-G requires a script (-s)"),
    ] {
        let out = run(&[flags, &["-n", "BEGIN"]].concat());
        assert_eq!(out.code(), 1, "{flags:?}");
        assert!(out.stderr.starts_with(&format!("dtrace: {why}")), "{flags:?}: {}", out.stderr);
    }
}

#[test]
fn options_may_be_given_again_as_getopt_takes_them() {
    // A flag stays set; the last -b wins (dtrace-utils' tst.ZeroNameProbes,
    // tst.BufsizeKilo); -e with nothing to compile has nothing to do.
    let out = run(&["-qZn", "nosuch:::probe { exit(1); }", "-qn", "BEGIN { printf(\"once\\n\"); exit(0); }"]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "once\n\n"), "{}", out.stderr);
    let out = run(&["-b", "1k", "-b", "2k", "-e"]);
    assert_eq!((out.code(), out.stderr.as_str()), (0, ""));
    let out = run(&["-b", "1k", "-b", "2k"]);
    assert_eq!(out.code(), 2, "no program and no -e is a usage error");
}

#[test]
fn probe_options_are_named_as_given_in_errors() {
    // -P fills the provider field: more fields are overspecified
    // (dtrace-utils' tst.InvalidProvider1); -f names the function
    // (tst.InvalidTraceFunc1); each -l description is compiled on its own,
    // an operand it does not use extraneous (tst.ExtraneousProbeIds).
    for (args, want) in [
        (
            &["-lP", "profile:::profile-97"][..],
            "dtrace: invalid probe specifier profile:::profile-97: invalid probe description \"profile:::profile-97\": Overspecified probe description\n",
        ),
        // -l implies -Z: a description matching nothing is reported as
        // list_stmt reports it (tst.ListProbesFuncEmpty), the status is 1.
        (&["-lf", "profile"], "dtrace: failed to match ::profile:: No probe matches description\n"),
        (&["-li", "12", "10", "-i", "23"], "dtrace: invalid probe specifier 12: extraneous argument '10' ($1 is not referenced)\n"),
        // -i's digits name the probe (0 none); text after them, or without
        // them, is a name matching nothing (tst.InvalidTraceID3..7); of
        // several unused operands the last is named.
        (&["-i", "0-2"], "dtrace: invalid probe specifier 0-2: invalid probe identifier 0: Unknown probe identifier\n"),
        (&["-i", "2-2"], "dtrace: invalid probe specifier 2-2: probe description :::-2 does not match any probes\n"),
        (&["-li", "-3"], "dtrace: failed to match :::-3: No probe matches description\n"),
        (&["-lf", "read", "-f", "fight"], "dtrace: failed to match ::fight:: No probe matches description\n"),
        (&["-i", "1", "2", "3", "4"], "dtrace: invalid probe specifier 1: extraneous argument '4' ($3 is not referenced)\n"),
        // Digits first are a probe ID to D's lexer, which only a name may
        // be (tst.InvalidFuncName2); an empty first field is never read
        // (tst.InvalidTraceFunc4).
        (&["-f", "4.56"], "dtrace: invalid probe specifier 4.56: probe identifier 4 not permitted when specifying functions\n"),
        (&["-f", "::read:"], "dtrace: invalid probe specifier ::read:: probe description :read:: does not match any probes\n"),
        (&["-n", "99999999999"], "dtrace: invalid probe specifier 99999999999: identifier 99999999999 exceeds maximum probe id\n"),
    ] {
        let out = run(args);
        assert_eq!((out.code(), out.stderr.as_str()), (1, want), "{args:?}");
    }
    // Enabling is the same: -i enables the probe of that ID, and each
    // program must reference every operand.
    let out = run(&["-i", "12", "10", "-i", "23"]);
    assert_eq!(
        (out.code(), out.stderr.as_str()),
        (1, "dtrace: invalid probe specifier 12: extraneous argument '10' ($1 is not referenced)\n")
    );
    let out = run(&["-i", "1", "-c", "true"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    // So does -n with digits (`dtrace -n 1` is BEGIN), a clause after them.
    let by_id = run(&["-qn", "1 { printf(\"begun\\n\"); exit(0); }"]);
    assert_eq!((by_id.code(), by_id.stdout.as_str()), (0, "begun\n\n"), "{}", by_id.stderr);
    // A clause may follow the name (dtraceUtil/tst.DestructWithID).
    let clause = run(&["-qi", "1{ trace(1); exit(0); }"]);
    assert_eq!((clause.code(), clause.stdout.as_str()), (0, "1\n"), "{}", clause.stderr);
    let clause = run(&["-qP", "dtrace/probename == \"BEGIN\"/{ trace(2); exit(0); }"]);
    assert_eq!((clause.code(), clause.stdout.as_str()), (0, "2\n"), "{}", clause.stderr);
    // A process's provider that has no such probes is reported, and the
    // listing goes on (dtrace-utils' usdt/tst.dlclose1).
    let listed = run(&["-lP", "nosuchprov1", "-n", "BEGIN"]);
    assert_eq!(
        (listed.code(), listed.stderr.as_str()),
        (0, "dtrace: failed to match nosuchprov1:::: No probe matches description\n")
    );
    assert!(listed.stdout.lines().any(|l| l.trim_end().ends_with("BEGIN")), "{}", listed.stdout);
    assert!(out.stdout.lines().any(|l| l.trim_end().ends_with(":BEGIN")), "{}", out.stdout);
    // A module given with its function fills both fields.
    let out = run(&["-lf", "vmlinux:nosuchfunction"]);
    assert!(out.stderr.contains("failed to match :vmlinux:nosuchfunction:: No probe"), "{}", out.stderr);
}

#[test]
fn h_names_the_files_the_preprocessor_includes() {
    let header = script("included.h", "#define GREETING \"hello\"\n");
    let dir = std::path::Path::new(&header).parent().expect("dir").to_string_lossy().into_owned();
    let main = script("includes.d", "#include \"included.h\"\nBEGIN { printf(\"%s\\n\", GREETING); exit(0); }\n");
    let out = run(&["-q", "-C", "-C", "-H", "-I", &dir, "-s", &main]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "hello\n\n"), "{}", out.stderr);
    assert!(out.stderr.lines().any(|l| l.starts_with(". ") && l.ends_with("included.h")), "{}", out.stderr);
    // -x cpphdrs is -H; -x cppargs hands cpp more arguments (Oracle's).
    let out = run(&["-q", "-C", "-x", "cpphdrs", "-x", &format!("cppargs=-I{dir} -DGREETING=\"hi\""), "-s", &main]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "hello\n\n"), "{}", out.stderr);
    assert!(out.stderr.lines().any(|l| l.starts_with(". ") && l.ends_with("included.h")), "{}", out.stderr);
    let macro_only = script("macro.d", "BEGIN { printf(\"%s\\n\", GREETING); exit(0); }\n");
    let out = run(&["-q", "-C", "-x", "cppargs=-DGREETING=\"hi\" -DUNUSED", "-s", &macro_only]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "hi\n\n"), "{}", out.stderr);
    // Without -H nothing is said of them.
    let out = run(&["-q", "-C", "-I", &dir, "-s", &main]);
    assert_eq!((out.code(), out.stderr.as_str()), (0, ""));
    // An error names the script's own line, past the included lines, blank
    // lines and comments cpp leaves out (cpp's line controls, as DTrace's
    // lexer reads them).
    let bad =
        script("bad_line.d", "#include \"included.h\"\nBEGIN\n{\n\n/* a\n * comment */\n\n\n\n\n\n\n\n\n  x = ;\n}\n");
    let out = run(&["-q", "-C", "-I", &dir, "-s", &bad]);
    assert_eq!(out.stderr, format!("dtrace: failed to compile script {bad}: line 15: syntax error near \";\"\n"));
}

#[test]
fn cpp_defines_what_dtrace_defines_and_not_the_compilers_names() {
    let main = script(
        "predefined.d",
        "BEGIN {\n#if defined(__linux) && defined(__unix) && defined(__SVR4) && defined(__SUNW_D_64) && !defined(__GNUC__)\n\
         printf(\"%x %d\\n\", __SUNW_D_VERSION, __SUNW_D);\n#else\nprintf(\"wrong\\n\");\n#endif\nexit(0); }\n",
    );
    let out = run(&["-q", "-C", "-s", &main]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "100d000 1\n\n"), "{}", out.stderr);
    // -X s (K&R C) has no __STDC__; the ISO modes have it; another mode
    // is refused (dtrace-utils' options/tst.stdc-*, err.stdc-x).
    let stdc = script(
        "stdc.d",
        "BEGIN {\n#ifdef __STDC__\nprintf(\"iso\\n\");\n#else\nprintf(\"kr\\n\");\n#endif\nexit(0); }\n",
    );
    for (args, want) in [
        (&["-X", "s"][..], "kr"),
        (&["-X", "c"], "iso"),
        (&["-x", "stdc=s", "-X", "a"], "iso"),
        (&["-x", "stdc=s"], "kr"),
    ] {
        let out = run(&[args, &["-q", "-C", "-s", &stdc]].concat());
        assert_eq!((out.code(), out.stdout.trim()), (0, want), "{args:?}: {}", out.stderr);
    }
    let out = run(&["-x", "stdc=X", "-n", "BEGIN"]);
    assert_eq!(out.stderr, "dtrace: failed to set -x stdc: Invalid value for specified option\n");
    // -vV says the version the macro encodes.
    let out = run(&["-vV"]);
    assert!(out.stdout.starts_with("dtrace: Sun D 1.13\nThis is DTrace 1.13.0\n"), "{}", out.stdout);
}

#[test]
fn raise_signals_the_current_process_only_with_w() {
    let program = "syscall::nanosleep:entry, syscall::clock_nanosleep:entry /pid == $target/ { raise(9); }";
    let out = run(&["-q", "-c", "sleep 5", "-n", program]);
    assert_eq!(
        (out.code(), out.stderr.as_str()),
        (1, "dtrace: could not enable tracing: Destructive actions not allowed\n")
    );
    let started = std::time::Instant::now();
    let out = run(&["-w", "-c", "sleep 5", "-n", program]);
    // dtrace.c's notice, once tracing is enabled, when not quiet.
    assert!(out.stderr.contains("dtrace: allowing destructive actions\n"), "{}", out.stderr);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let pid = exited_pid(&out.stderr).expect("notice");
    assert!(out.stderr.contains(&format!("dtrace: pid {pid} terminated by SIGKILL\n")), "{}", out.stderr);
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
}

#[test]
fn stop_stops_the_current_process() {
    let mut shell = Command::new("sh").args(["-c", "while :; do sleep 0.05; done"]).spawn().expect("sh");
    let shell_pid = shell.id().to_string();
    let out = run(&[
        "-w",
        "-q",
        "-p",
        &shell_pid,
        "-n",
        r#"syscall::nanosleep:entry, syscall::clock_nanosleep:entry /ppid == $target/ { stop(); printf("%d\n", pid); exit(0); }"#,
    ]);
    let _ = shell.kill();
    let _ = shell.wait();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let stopped: i32 = out.stdout.trim().parse().unwrap_or_else(|_| panic!("{}", out.stdout));
    let status = std::fs::read_to_string(format!("/proc/{stopped}/status")).unwrap_or_default();
    // SAFETY: kill has no memory preconditions; the sleep was our shell's child.
    unsafe { libc::kill(stopped, libc::SIGKILL) };
    assert!(status.lines().any(|l| l.starts_with("State:\tT")), "{status}");
}

#[test]
fn copyout_and_copyoutstr_write_or_say_why_not() {
    // Kernels under lockdown refuse BPF writes to user memory; others write
    // (here to address 0 of dtrace itself, which fails harmlessly).
    for program in [
        r#"BEGIN { copyoutstr("x", 0, 2); exit(0); }"#,
        r#"BEGIN { this->b = (char *)alloca(8); copyout(this->b, 0, 8); exit(0); }"#,
    ] {
        let out = run(&["-w", "-qn", program]);
        out.assert_no_panic();
        assert!(out.code() == 0 || out.stderr.contains("(kernel lockdown)"), "{}", out.stderr);
        let out = run(&["-qn", program]);
        assert_eq!(out.stderr, "dtrace: could not enable tracing: Destructive actions not allowed\n");
    }
}

/// -e compiles through code generation without privileges: as an
/// unprivileged user, a clause the code generator rejects is reported with
/// exit status 1, and a program that compiles exits 0 without enabling.
#[test]
fn e_reports_code_generator_errors_without_privileges() {
    // A copy any user may run, whatever the permissions of the build tree.
    let dir = util::scratch_dir("dtrace-unprivileged");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("dtrace");
    std::fs::copy(util::DTRACE, &exe).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let as_nobody = |args: &[&str]| {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&exe)
            .args(args)
            .output()
            .expect("setpriv runs");
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let mut nested = "probefunc".to_string();
    for _ in 0..60 {
        nested = format!("strjoin(probefunc, {nested})");
    }
    let (status, stderr) = as_nobody(&["-e", "-n", &format!("BEGIN {{ trace({nested}); }}")]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("out of BPF stack"), "{stderr}");
    let (status, stderr) = as_nobody(&["-e", "-n", "BEGIN { trace(strjoin(probefunc, probename)); }"]);
    assert_eq!((status, stderr.as_str()), (Some(0), ""));
    // Without -e the same user may not enable it.
    let (status, stderr) = as_nobody(&["-n", "BEGIN { exit(0); }"]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("DTrace requires additional privileges"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Records that wrap around the end of a small ring buffer (16 KB; 72
/// bytes each, which do not divide it) reach the output whole and in
/// order, and each write is printed or counted as a drop (a drop is a
/// clause that did not run, so its `n++` did not happen either).
#[test]
fn records_wrapping_a_small_rings_end_arrive_whole_and_in_order() {
    const WRITES: u64 = 3000;
    let dd = format!("dd if=/dev/zero of=/dev/null bs=1 count={WRITES} status=none");
    let out = run(&[
        "-q",
        "-b",
        "16k",
        "-c",
        &dd,
        "-n",
        r#"BEGIN { n = 0; } syscall::write:entry /pid == $target/ { printf("%d %d %d\n", n, n * 3, n * 7); n++; }"#,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let mut printed = 0u64;
    for line in out.stdout.lines().filter(|l| !l.is_empty()) {
        let fields: Vec<u64> = line.split(' ').map(|f| f.parse().expect(line)).collect();
        assert_eq!(fields, [printed, printed * 3, printed * 7], "line {printed}");
        printed += 1;
    }
    let dropped: u64 =
        out.stderr.lines().filter_map(|l| l.strip_prefix("dtrace: ")?.split_once(" drop")?.0.parse::<u64>().ok()).sum();
    assert!(printed > 0, "{}", out.stderr);
    assert_eq!(printed + dropped, WRITES, "{}", out.stderr);
}

/// -b sets the principal buffer's size as -x bufsize does; a buffer that
/// cannot hold a word is refused, as dtrace_state_go refuses it (one
/// smaller than a clause's record makes that clause a drop: corpus
/// option-bufsize-smaller-than-record).
#[test]
fn b_sets_the_buffer_size() {
    let out = run(&["-q", "-b", "64k", "-n", r#"BEGIN { printf("ok\n"); exit(0); }"#]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "ok\n\n");
    let out = run(&["-q", "-xbufsize=64", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let out = run(&["-q", "-b4", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 1);
    assert_eq!(out.stderr, "dtrace: could not enable tracing: Enabling exceeds size of buffer\n");
    // Any size parses (illumos' tst.BufsizeTera); under bufresize=auto the
    // kernel gets what it can allocate, under manual a size past what it
    // maps is refused.
    let out = run(&["-b", "1t", "-b", "2t", "-e"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let out = run(&["-q", "-b", "64g", "-x", "bufresize=manual", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("bufresize=manual forbids a smaller one"), "{}", out.stderr);
    let out = run(&["-x", "bufresize=sometimes", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("Invalid value for specified option"), "{}", out.stderr);
}

#[test]
fn options_that_used_to_be_ignored_act() {
    // defaultargs: $1 is 0 and $$2 is "" when not given.
    let out = run(&["-q", "-x", "defaultargs", "-n", "BEGIN { printf(\"%d [%s]\\n\", $1, $$2); exit(0); }"]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "0 []\n\n"), "{}", out.stderr);
    // quiet=no unsets, quiet=0 sets (dt_opt_runtime).
    let out = run(&["-x", "quiet=no", "-n", "BEGIN { trace(7); exit(0); }"]);
    assert!(out.stdout.contains(":BEGIN"), "{}", out.stdout);
    let out = run(&["-x", "quiet=0", "-n", "BEGIN { trace(7); exit(0); }"]);
    assert_eq!(out.stdout, "7\n");
    // zdefs: a description that matches nothing is allowed, as with -Z.
    let out = run(&["-x", "zdefs", "-qn", "nosuch:::probe, BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    // setenv/unsetenv: the -c command's environment.
    let script = crate::util::script("env.sh", "#!/bin/sh\necho \"[$DT_TEST_VAR] [${HOME-unset}]\"\n");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let out = run(&["-q", "-x", "setenv=DT_TEST_VAR=hello", "-x", "unsetenv=HOME", "-c", &script, "-n", "BEGIN {}"]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "[hello] [unset]\n\n"), "{}", out.stderr);
    // cpu: probes fire on that CPU only.
    let out = run(&[
        "-q",
        "-x",
        "cpu=0",
        "-n",
        "profile-997 { @[cpu] = count(); } profile-997 /cpu == 0 && ++n == 30/ { exit(0); }",
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let cpus: Vec<&str> = out.stdout.split_whitespace().step_by(2).collect();
    assert_eq!(cpus, ["0"], "{}", out.stdout);
    // BEGIN and END fire on it too (dtrace-utils' options/tst.cpu-END).
    let last = std::thread::available_parallelism().map_or(0, |n| n.get() - 1).to_string();
    let out = run(&[
        "-q",
        "-x",
        &format!("cpu={last}"),
        "-n",
        "BEGIN { printf(\"%d \", cpu); exit(0); } END { trace(cpu); }",
    ]);
    assert_eq!((out.code(), out.stdout.trim()), (0, format!("{last} {last}").as_str()), "{}", out.stderr);
    // verbose shows the generated programs, as -S.
    let out = run(&["-e", "-x", "verbose", "-n", "BEGIN { trace(1); }"]);
    assert!(out.stderr.contains("exit"), "{}", out.stderr);
}

#[test]
fn stack_depth_and_indent_follow_stack_n_stackframes_and_stackindent() {
    let frames = |out: &crate::util::Output| out.stdout.lines().filter(|l| l.contains('`')).count();
    let indents = |out: &crate::util::Output| {
        out.stdout.lines().filter(|l| l.contains('`')).map(|l| l.len() - l.trim_start().len()).collect::<Vec<_>>()
    };
    // Stacks taken in a system call are deep (entry code, the handler).
    let program = |action: &str| format!("syscall::getppid:entry /pid == $target/ {{ {action} exit(0); }}");
    let command = workload_command("getppid 50");
    let out = run(&["-q", "-x", "stackframes=2", "-c", &command, "-n", &program("stack();")]);
    assert_eq!(frames(&out), 2, "{}{}", out.stdout, out.stderr);
    let out = run(&["-q", "-x", "stackindent=3", "-c", &command, "-n", &program("stack(3);")]);
    assert_eq!(indents(&out), [3, 3, 3], "{}{}", out.stdout, out.stderr);
    // dtrace-utils' words: a constant out of range, or no integer constant.
    let out = run(&["-e", "-n", "BEGIN { stack(0); }"]);
    assert!(out.stderr.contains("stack( ) argument #1 must be a non-zero positive integer constant"), "{}", out.stderr);
    let out = run(&["-e", "-n", "BEGIN { stack(\"x\"); }"]);
    assert!(
        out.stderr.contains("stack( ) size must be a non-zero positive integral constant expression"),
        "{}",
        out.stderr
    );
}

#[test]
fn setopt_changes_dynamic_options_and_reports_the_rest() {
    let out = run(&["-n", "BEGIN { setopt(\"quiet\"); trace(5); } BEGIN { setopt(\"bufsize\", \"8m\"); exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("couldn't set option \"bufsize\" to \"8m\": Operation illegal when tracing is active"),
        "{}",
        out.stderr
    );
    // Without a value the option is set to "1"; each message ends in a blank line.
    let out = run(&["-qn", "BEGIN { setopt(\"Nixon\"); exit(0); }"]);
    assert!(out.stderr.ends_with("couldn't set option \"Nixon\" to \"1\": Invalid option name\n\n"), "{}", out.stderr);
}

/// The empty option lets a program without clauses compile; it then
/// enables nothing, as DTrace says. Without it, DTrace's D_EMPTY.
#[test]
fn empty_option_compiles_an_empty_program_that_matches_nothing() {
    let path = script("empty.d", "/*\n * Nothing.\n */\n");
    let out = run(&["-x", "empty", "-s", &path]);
    assert_eq!(
        (out.code(), out.stderr.as_str()),
        (1, format!("dtrace: script '{path}' matched 0 probes\ndtrace: no probes matched\n").as_str())
    );
    let out = run(&["-s", &path]);
    assert_eq!(
        (out.code(), out.stderr.as_str()),
        (1, format!("dtrace: failed to compile script {path}: line 4: empty D program translation unit\n").as_str())
    );
}

/// DTrace refuses an argument the program never references, unless
/// -x argref; operands may come between options, as getopt takes them.
#[test]
fn unreferenced_arguments_are_refused_unless_argref() {
    let path = util::script("args-unused.d", "BEGIN { exit(0); }");
    let out = run(&["-q", "-s", &path, "foo"]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("extraneous argument 'foo' ($1 is not referenced)"), "{}", out.stderr);
    let out = run(&["-x", "argref", "-q", "-s", &path, "foo"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let path = util::script("args-used.d", "BEGIN { printf(\"%d %s\\n\", $1, $$2); exit(0); }");
    // -5 is an operand, and -x after the operands is an option.
    let out = run(&["-s", &path, "-5", "bar", "-x", "quiet"]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "-5 bar\n\n"), "{}", out.stderr);
    let out = run(&["-qn", "syscall::$1:entry { exit(0); }", "getppid", "-c", "/bin/true"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
}

#[test]
fn a_numeric_operand_past_64_bits_is_an_overflow_not_a_string() {
    let out = run(&["-q", "-n", "BEGIN { trace($1); exit(0); }", "0x12345678123456781"]);
    assert_eq!(out.code(), 1, "{}", out.stdout);
    assert_eq!(
        out.stderr,
        "dtrace: invalid probe specifier BEGIN { trace($1); exit(0); }: \
         macro argument $1 constant 0x12345678123456781 results in integer overflow\n"
    );
    // A number that fits is a number (strtoull's bases); other text is the
    // identifier it spells, as DTrace's lexer reads it.
    let out = run(&[
        "-q",
        "-n",
        "BEGIN { printf(\"%d %d %d %s\\n\", $1, $2, $3, $4); exit(0); }",
        "0xffffffffffffffff",
        "010",
        "+7",
        "execname",
    ]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "-1 8 7 dtrace\n\n"), "{}", out.stderr);
    let out = run(&["-q", "-n", "BEGIN { trace($1); }", "word"]);
    assert_eq!(
        (out.code(), out.stderr.as_str()),
        (1, "dtrace: invalid probe specifier BEGIN { trace($1); }: in action list: failed to resolve word: Unknown variable name\n")
    );
    let out = run(&["-q", "-n", "BEGIN { trace($1); }", "12x"]);
    assert_eq!(
        (out.code(), out.stderr.as_str()),
        (1, "dtrace: invalid probe specifier BEGIN { trace($1); }: integer constant 0xc cannot be represented in any built-in integral type\n")
    );
    // A quoted operand is the string token it spells (the Oracle tutorial's
    // `dtrace -s activity.d '"bash"'`): $1 is bash, $$1 the text as given.
    let out = run(&["-q", "-n", "BEGIN { printf(\"[%s] %d [%s]\\n\", $1, strlen($1), $$1); exit(0); }", "\"bash\""]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "[bash] 4 [\"bash\"]\n\n"), "{}", out.stderr);
    // Text that is neither number nor identifier is a string (strbadidnum):
    // `a b`, `x.y`, and $0, the script's name (scripting/tst.arg0.d).
    let out = run(&["-q", "-n", "BEGIN { printf(\"[%s] [%s]\\n\", $1, $2); exit(0); }", "a b", "x.y"]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "[a b] [x.y]\n\n"), "{}", out.stderr);
    let script = util::script("arg0.d", "BEGIN { printf(\"%s\\n\", $0); exit(0); }\n");
    let out = run(&["-q", "-s", &script]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, format!("{script}\n\n").as_str()), "{}", out.stderr);
}

#[test]
fn dtrace_utils_test_mode_leaves_out_the_cpu_and_id_columns() {
    let mut command = std::process::Command::new(util::DTRACE);
    command.env("_DTRACE_TESTING", "t").args(["-n", "BEGIN { trace(1); exit(0); }"]);
    let out = util::Tracer::spawn_command(command).finish();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, "                   FUNCTION:NAME\n                          :BEGIN         1\n\n");
    let out = run(&["-n", "BEGIN { trace(1); exit(0); }"]);
    assert!(out.stdout.starts_with("CPU     ID                    FUNCTION:NAME\n"), "{}", out.stdout);
}

/// maxframes caps every stack(), whatever it asks for; BEGIN's kernel
/// stack is the bpf() system call's (as DTrace's is its ioctl's), with no
/// frame of the tracer's own program.
#[test]
fn maxframes_caps_stacks_and_begin_shows_no_bpf_program() {
    let frames = |out: &util::Output| out.stdout.lines().filter(|l| !l.trim().is_empty()).count();
    let out = run(&["-qn", "BEGIN { stack(10); exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.trim_start().starts_with("vmlinux`__sys_bpf+"), "{}", out.stdout);
    assert!(frames(&out) > 2, "{}", out.stdout);
    let out = run(&["-qn", "BEGIN { stack(10); exit(0); }", "-x", "maxframes=2"]);
    assert_eq!((out.code(), frames(&out)), (0, 2), "{}", out.stdout);
    let out = run(&["-qn", "BEGIN { exit(0); }", "-x", "maxframes=0"]);
    assert_eq!(out.code(), 1, "{}", out.stderr);
    // Deeper than the kernel records a stack is refused (dtrace-utils'
    // options/err.*frames-too-high).
    let deepest: u32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_stack")
        .map_or(127, |s| s.trim().parse().expect("perf_event_max_stack"));
    for option in ["maxframes", "stackframes", "ustackframes", "jstackframes"] {
        let out = run(&["-qn", "BEGIN { exit(0); }", "-x", &format!("{option}={}", deepest + 1)]);
        assert_eq!(
            (out.code(), out.stderr.as_str()),
            (1, format!("dtrace: failed to set -x {option}: Invalid value for specified option\n").as_str())
        );
        let out = run(&["-qn", "BEGIN { exit(0); }", "-x", &format!("{option}={deepest}")]);
        assert_eq!(out.code(), 0, "{}", out.stderr);
    }
}

/// -L (and -x libdir) loads the D library files of a directory before the
/// program, in the order their `#pragma D depends_on library` lines ask
/// (illumos' pragma/tst.libchain); a dependency cycle is an error
/// (err.circlibdep), as is a dependency on a library none of the
/// directories has (err.invalidlibdep); a missing directory is skipped, as dt_load_libs_dir
/// skips it.
#[test]
fn l_loads_library_directories_in_dependency_order() {
    let dir = util::scratch_dir("dtrace-libdir");
    let _ = std::fs::remove_dir_all(&dir);
    let (chain, cycle, missing) = (dir.join("chain"), dir.join("cycle"), dir.join("missing"));
    for d in [&chain, &cycle, &missing] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(missing.join("liba.d"), "#pragma D depends_on library libnotthere.d\n").expect("write");
    // liba sorts first by name but needs libb's inline and type.
    std::fs::write(
        chain.join("liba.d"),
        "#pragma D depends_on library libb.d\ninline int foo = bar + sizeof (mine_t);\n",
    )
    .expect("write");
    std::fs::write(chain.join("libb.d"), "inline int bar = 0xd0061e;\ntypedef struct mine { int x; } mine_t;\n")
        .expect("write");
    for (name, needs) in [("liba.d", "libc.d"), ("libb.d", "libc.d"), ("libc.d", "liba.d")] {
        std::fs::write(cycle.join(name), format!("#pragma D depends_on library {needs}\n")).expect("write");
    }
    let chain = chain.to_string_lossy().into_owned();
    let out = run(&["-L", &chain, "-qn", r#"BEGIN { printf("%x\n", foo); exit(0); }"#]);
    assert_eq!((out.code(), out.stdout.as_str()), (0, "d00622\n\n"), "{}", out.stderr);
    let out = run(&["-x", &format!("libdir={chain}"), "-e"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let out = run(&[&format!("-L{}", cycle.display()), "-e"]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("Cyclic dependency detected"), "{}", out.stderr);
    let out = run(&[&format!("-L{}", missing.display()), "-e"]);
    let want = format!("dtrace: Invalid library dependency in {}: libnotthere.d\n", missing.join("liba.d").display());
    assert_eq!((out.code(), out.stderr), (1, want));
    let out = run(&["-L", "/nonexistent/dtrace-libdir", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// temporal: records print in their firings' time order. Without it a
/// firing that reserves its record, works, then reads `timestamp` prints
/// before another CPU's that read it earlier; both CPUs are kept busy so
/// profile fires on each (an idle CPU's clock event does not fire here).
#[test]
fn temporal_prints_records_in_timestamp_order() {
    let spinners: Vec<std::process::Child> =
        (0..2).map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("sh")).collect();
    let script = script(
        "temporal.d",
        r#"profile-997 /cpu == 0/ {
               this->s = strjoin(execname, probefunc);
               this->a = strstr(this->s, "zz"); this->b = strstr(this->s, "zy"); this->c = strstr(this->s, "zx");
               printf("%u 0\n", timestamp);
           }
           profile-997 /cpu != 0/ { printf("%u 1\n", timestamp); }
           tick-1s { exit(0); }"#,
    );
    let out = run(&["-q", "-x", "temporal", "-s", &script]);
    for mut spinner in spinners {
        let _ = spinner.kill();
        let _ = spinner.wait();
    }
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<(u64, &str)> = out
        .stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split_once(' ').map(|(t, c)| (t.parse().expect("timestamp"), c)).expect("two fields"))
        .collect();
    assert!(lines.iter().any(|(_, c)| *c == "0") && lines.iter().any(|(_, c)| *c == "1"), "{}", out.stdout);
    let unordered = lines.windows(2).filter(|w| w[1].0 < w[0].0).count();
    assert_eq!(unordered, 0, "{} of {} lines out of order", unordered, lines.len());
}

/// bpflog (Oracle's dtrace): the verifier's log of each clause program,
/// its lines after "BPF: "; a log past bpflogsize is said to be
/// incomplete, and tracing goes on.
#[test]
fn bpflog_prints_the_verifiers_log_of_each_clause_program() {
    let out = run(&["-xbpflog", "-qn", "BEGIN { trace(1); exit(0); }"]);
    assert_eq!((out.code(), out.stdout.trim()), (0, "1"), "{}", out.stderr);
    assert!(out.stderr.lines().all(|l| l.starts_with("BPF: ")), "{}", out.stderr);
    assert!(out.stderr.lines().any(|l| l.starts_with("BPF: processed ") && l.contains(" insns")), "{}", out.stderr);
    let out = run(&["-xbpflog", "-xbpflogsize=200", "-qn", "BEGIN { trace(2); exit(0); }"]);
    assert_eq!((out.code(), out.stdout.trim()), (0, "2"), "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "BPF verifier log is incomplete and is not reported.\n\
             Set DTrace option 'bpflogsize' to some greater size for more output.\n(Current size is 200.)\n"
        ),
        "{}",
        out.stderr
    );
    let out = run(&["-xbpflogsize=100", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(
        (out.code(), out.stderr.as_str()),
        (1, "dtrace: failed to set -x bpflogsize: Invalid value for specified option\n")
    );
}

/// -x version: a version this compiler does not define, or text that is
/// no version, in libdtrace's words (EDT_VERSUNDEF, EDT_VERSINVAL).
#[test]
fn version_option_names_what_is_wrong_with_the_version() {
    for (value, why) in [
        ("99.1", "Requested version is not supported by compiler"),
        ("1.2.3.4", "Version is not properly formatted or is too large"),
        ("one", "Version is not properly formatted or is too large"),
    ] {
        let out = run(&[&format!("-xversion={value}"), "-n", "BEGIN { exit(0); }"]);
        assert_eq!(
            (out.code(), out.stderr.as_str()),
            (1, format!("dtrace: failed to set -x version: {why}\n").as_str())
        );
    }
    let out = run(&["-xversion=1.6", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
}

/// -x debug (and DTRACE_DEBUG) say what each stage did, libdtrace's way
/// (`<who> DEBUG <time>: ...`, as dtrace-utils' options/tst.debug reads
/// them); without it, nothing is said.
#[test]
fn debug_option_says_what_each_stage_did() {
    let script = "BEGIN { exit(0); }";
    let out = run(&["-q", "-x", "debug", "-n", script]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("dtrace DEBUG ")).collect();
    for line in &lines {
        let time = line.split_whitespace().nth(2).unwrap_or("").trim_end_matches(':');
        assert!(time.parse::<u64>().is_ok_and(|t| t > 0), "{line}");
    }
    assert!(lines.iter().any(|l| l.contains("compiled 1 clauses")), "{}", out.stderr);
    assert!(lines.iter().any(|l| l.contains("enabled 1 probes of provider dtrace")), "{}", out.stderr);
    let mut command = std::process::Command::new(util::DTRACE);
    command.env("DTRACE_DEBUG", "1").args(["-q", "-n", script]);
    let out = util::Tracer::spawn_command(command).finish();
    assert!(out.stderr.lines().any(|l| l.starts_with("dtrace DEBUG ")), "{}", out.stderr);
    let out = run(&["-q", "-n", script]);
    assert_eq!((out.code(), out.stderr.as_str()), (0, ""));
}
