//! Integration tests: the built `dtrace` binary, run as root against real
//! probes in the running kernel, with workloads the tests drive themselves.
//! Every wait is bounded (util::WAIT).

mod util;

#[path = "integration/aggregations.rs"]
mod aggregations;
#[path = "integration/corpus.rs"]
mod corpus;
#[path = "integration/fsinfo_provider.rs"]
mod fsinfo_provider;
#[path = "integration/io_provider.rs"]
mod io_provider;
#[path = "integration/ip_provider.rs"]
mod ip_provider;
#[path = "integration/joined_programs.rs"]
mod joined_programs;
#[path = "integration/kernel_reach.rs"]
mod kernel_reach;
#[path = "integration/kernel_types.rs"]
mod kernel_types;
#[path = "integration/lockstat_provider.rs"]
mod lockstat_provider;
#[path = "integration/man_pages.rs"]
mod man_pages;
#[path = "integration/open_files.rs"]
mod open_files;
#[path = "integration/options.rs"]
mod options;
#[path = "integration/package.rs"]
mod package;
#[path = "integration/pid_provider.rs"]
mod pid_provider;
#[path = "integration/proc_provider.rs"]
mod proc_provider;
#[path = "integration/robustness.rs"]
mod robustness;
#[path = "integration/sched_provider.rs"]
mod sched_provider;
#[path = "integration/speculations.rs"]
mod speculations;
#[path = "integration/structured_output.rs"]
mod structured_output;
#[path = "integration/sysinfo.rs"]
mod sysinfo_provider;
#[path = "integration/tcp_provider.rs"]
mod tcp_provider;
#[path = "integration/thread_locals.rs"]
mod thread_locals;
#[path = "integration/udp_provider.rs"]
mod udp_provider;
#[path = "integration/usdt_provider.rs"]
mod usdt_provider;
#[path = "integration/vminfo_provider.rs"]
mod vminfo_provider;

use std::process::Command;

use util::{run, script, Tracer};

/// A BEGIN clause that tells the test all probes are attached.
const READY: &str = r#"BEGIN { printf("ready\n"); }"#;

mod dtrace_provider {
    use super::*;

    #[test]
    fn begin_printf_quiet_prints_exactly() {
        let out = run(&["-qn", r#"BEGIN { printf("hello %d\n", 42); exit(0); }"#]);
        out.assert_no_panic();
        // dtrace(1) ends its output with a newline, even when quiet.
        assert_eq!(out.stdout, "hello 42\n\n");
        assert_eq!(out.code(), 0);
        assert_eq!(out.stderr, "");
    }

    #[test]
    fn begin_default_output_has_heading_and_record_line() {
        let out = run(&["-n", r#"BEGIN { printf("hello %d\n", 42); exit(0); }"#]);
        assert_eq!(out.code(), 0);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines[0], "CPU     ID                    FUNCTION:NAME");
        // "%3d %6d %32s " then the printf output, then chewrec's newline.
        let rec = lines[1];
        assert_eq!(&rec[3..11], "      1 ", "probe ID column in {rec:?}");
        assert_eq!(&rec[11..], format!("{:>32} hello 42", ":BEGIN"));
        assert!(rec[..3].trim().parse::<u32>().is_ok(), "CPU column in {rec:?}");
        assert_eq!(lines.get(2), Some(&""));
        assert!(out.stderr.contains("dtrace: description 'BEGIN ' matched 1 probe\n"), "{}", out.stderr);
    }

    #[test]
    fn exit_status_is_the_scripts() {
        let out = run(&["-qn", "BEGIN { exit(3); }"]);
        assert_eq!(out.code(), 3);
        assert_eq!(out.stdout, "");
    }

    #[test]
    fn end_runs_after_exit() {
        let out = run(&["-qn", r#"BEGIN { exit(0); } END { printf("end\n"); }"#]);
        assert_eq!(out.stdout, "end\n\n");
        assert_eq!(out.code(), 0);
    }

    #[test]
    fn sigterm_and_sigint_detach_and_run_end() {
        for sig in [libc::SIGTERM, libc::SIGINT] {
            let mut t = Tracer::spawn(&["-qn", READY, "-n", r#"END { printf("end %d\n", 7); }"#]);
            t.wait_for("ready");
            t.signal(sig);
            let out = t.finish();
            assert_eq!(out.code(), 0, "signal {sig}: {}", out.stderr);
            // An interrupt is answered with a newline before END runs.
            assert_eq!(out.stdout, "ready\n\nend 7\n\n");
        }
    }

    #[test]
    fn empty_clause_traces_the_probe() {
        let out = run(&["-n", "BEGIN {} BEGIN { exit(0); }"]);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines.len(), 4, "{:?}", out.stdout);
        assert!(lines[1].ends_with(":BEGIN "), "{:?}", lines[1]);
        assert!(lines[2].ends_with(":BEGIN "), "{:?}", lines[2]);
    }

    #[test]
    fn trace_formats_like_dtrace() {
        let out = run(&["-n", r#"BEGIN { trace(42); trace("str"); trace(1234567890123); exit(0); }"#]);
        let rec = out.stdout.lines().nth(1).unwrap().to_string();
        let data = &rec[44..];
        assert_eq!(data, format!(" {:>8}  {:<33} {:>16}", 42, "str", 1234567890123i64));
        let out = run(&["-qn", r#"BEGIN { trace(42); trace("str"); exit(0); }"#]);
        assert_eq!(out.stdout, "42str\n");
    }

    #[test]
    fn bad_address_reports_dtrace_error_and_tracing_goes_on() {
        let out = run(&["-qn", r#"BEGIN { printf("%s\n", copyinstr(0)); } BEGIN { printf("after\n"); exit(0); }"#]);
        assert_eq!(out.stdout, "after\n\n");
        // Enabled probe IDs as dtrace-utils numbers them (1 is dtrace's own
        // ERROR enabling), and the fault's BPF pc, as it shows it.
        let message =
            "dtrace: error on enabled probe ID 2 (ID 1: dtrace:::BEGIN): invalid address (0x0) in action #1 at BPF pc ";
        let pc = out.stderr.split(message).nth(1).unwrap_or_else(|| panic!("{}", out.stderr));
        assert!(pc.trim_end().parse::<u32>().is_ok_and(|pc| pc > 0), "{}", out.stderr);
        assert_eq!(out.code(), 0);
    }

    #[test]
    fn error_probe_fires_with_fault_arguments() {
        let out = run(&[
            "-qn",
            r#"BEGIN { printf("%s", copyinstr(0)); } BEGIN { printf("second %s\n", probename); }
               ERROR { printf("%s epid=%d action=%d kind=%d addr=%d\n", probename, arg1, arg2, arg4, arg5); }
               BEGIN { exit(0); }"#,
        ]);
        // The ERROR clause's own enabling comes before the BEGIN clauses'.
        assert_eq!(out.stdout, "ERROR epid=3 action=1 kind=1 addr=0\nsecond BEGIN\n\n");
        assert!(out.stderr.contains("invalid address (0x0) in action #1"), "{}", out.stderr);
    }

    #[test]
    fn divide_by_zero_is_a_runtime_error() {
        let out = run(&["-qn", r#"BEGIN { x = 0; printf("%d\n", 1 / x); } BEGIN { exit(0); }"#]);
        assert_eq!(out.stdout, "");
        assert!(out.stderr.contains("divide-by-zero in action #1"), "{}", out.stderr);
    }
}

mod language {
    use super::*;

    /// freopen() sends the output to a file (appended to) and "" back;
    /// ftruncate() empties the output file; freopen() is destructive.
    #[test]
    fn freopen_and_ftruncate_redirect_and_empty_the_output() {
        let dir = util::scratch_dir("dtrace-freopen");
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("out1.txt");
        std::fs::write(&file, "before\n").expect("file");
        let script = format!(
            r#"BEGIN {{ printf("a\n"); freopen("{}/out%d.txt", 1); printf("b\n"); freopen(""); printf("c\n"); exit(0); }}"#,
            dir.display()
        );
        let out = run(&["-wqn", &script]);
        assert_eq!(out.code(), 0, "{}", out.stderr);
        assert_eq!(out.stdout, "a\nc\n\n");
        assert_eq!(std::fs::read_to_string(&file).expect("file"), "before\nb\n");
        let out = run(&["-qn", &script]);
        assert_eq!(out.code(), 1, "{}", out.stdout);
        let truncated = dir.join("truncated.txt");
        let path = truncated.to_str().expect("path");
        let out = run(&["-qn", r#"BEGIN { printf("gone\n"); ftruncate(); printf("kept\n"); exit(0); }"#, "-o", path]);
        assert_eq!(out.code(), 0, "{}", out.stderr);
        assert_eq!(std::fs::read_to_string(&truncated).expect("file"), "kept\n\n");
        std::fs::remove_dir_all(&dir).ok();
    }

    fn eval(body: &str) -> String {
        let out = run(&["-qn", &format!("BEGIN {{ {body} exit(0); }}")]);
        out.assert_no_panic();
        assert_eq!(out.code(), 0, "{body}: {}", out.stderr);
        // Without dtrace(1)'s closing newline.
        out.stdout.strip_suffix('\n').unwrap_or_else(|| panic!("no closing newline: {:?}", out.stdout)).to_string()
    }

    #[test]
    fn integer_operators_follow_c() {
        assert_eq!(
            eval(r#"printf("%d %d %d %d %d\n", 7 + 3 * 2, (7 + 3) * 2, 17 / 5, 17 % 5, -17 / 5);"#),
            "13 20 3 2 -3\n"
        );
        assert_eq!(eval(r#"printf("%d %d %d\n", -17 % 5, 17 / -5, 1 - 10);"#), "-2 -3 -9\n");
        assert_eq!(
            eval(r#"printf("%x %x %x %x %d\n", 0xf0 | 0x0f, 0xff & 0x3c, 0xff ^ 0x0f, ~0, 1 << 10);"#),
            "ff 3c f0 ffffffff 1024\n"
        );
        assert_eq!(eval(r#"printf("%d %d\n", -16 >> 2, 2147483647 + 1);"#), "-4 -2147483648\n");
        assert_eq!(
            eval(r#"printf("%d %d %d %d %d %d\n", 1 < 2, 2 <= 1, 3 > 2, 3 >= 4, 5 == 5, 5 != 5);"#),
            "1 0 1 0 1 0\n"
        );
        assert_eq!(eval(r#"printf("%d %d %d %d\n", 1 && 0, 1 || 0, 1 ^^ 1, !0);"#), "0 1 0 1\n");
        assert_eq!(eval(r#"printf("%d %d\n", 1 ? 10 : 20, 0 ? 10 : 20);"#), "10 20\n");
        assert_eq!(eval(r#"printf("%u %d\n", (unsigned int)-1, (char)300);"#), "4294967295 44\n");
    }

    #[test]
    fn assignment_operators_and_increments() {
        assert_eq!(
            eval(r#"x = 10; x += 5; x -= 3; x *= 2; x /= 4; x %= 4; y = x++; z = ++x; printf("%d %d %d\n", x, y, z);"#),
            "4 2 4\n"
        );
        assert_eq!(eval(r#"a = 6; a <<= 2; a >>= 1; a |= 1; a &= 13; a ^= 2; printf("%d\n", a);"#), "15\n");
        assert_eq!(eval(r#"n--; --n; printf("%d\n", n);"#), "-2\n");
    }

    #[test]
    fn strings_compare_as_strings() {
        assert_eq!(
            eval(r#"s = "abc"; printf("%d %d %d %d %d\n", s == "abc", s != "abc", s < "abd", "b" > s, "ab" < s);"#),
            "1 0 1 1 1\n"
        );
        assert_eq!(eval(r#"printf("%d %s\n", execname == "dtrace", execname);"#), "1 dtrace\n");
    }

    #[test]
    fn builtins_have_values() {
        let out = eval(r#"printf("%d %d %d %d %d\n", pid, tid, ppid, uid, gid);"#);
        let v: Vec<i64> = out.split_whitespace().map(|w| w.parse().unwrap()).collect();
        assert!(v[0] > 1 && v[1] == v[0], "{out}");
        assert_eq!(v[2], std::process::id() as i64, "ppid of dtrace is the test");
        assert_eq!((v[3], v[4]), (0, 0), "tests run as root");
        let out = eval(r#"printf("%s:%s:%s:%s %d %d\n", probeprov, probemod, probefunc, probename, id, cpu >= 0);"#);
        assert_eq!(out, "dtrace:::BEGIN 1 1\n");
        let out = eval(r#"printf("%d\n", timestamp > 0 && walltimestamp > 1600000000000000000);"#);
        assert_eq!(out, "1\n");
    }

    #[test]
    fn clause_local_strings() {
        assert_eq!(
            eval(
                r#"this->s = "abc"; this->t = strjoin(this->s, "def"); printf("%s %s %d", this->s, this->t, this->s == "abc");"#
            ),
            "abc abcdef 1"
        );
    }

    #[test]
    fn string_subroutines_follow_dtrace() {
        assert_eq!(
            eval(
                r#"printf("%d|%s|%s|%s|%s|%s|%s|%s|", strlen("hello"), toupper("abC1"), tolower("ABc"),
                   strjoin("foo", "bar"), substr("hello world", 6), substr("hello", 1, 3), substr("hello", -3),
                   substr("hello", 0, -2));"#
            ),
            "5|ABC1|abc|foobar|world|ell|llo|hel|"
        );
        // basename and dirname as illumos computes them.
        assert_eq!(
            eval(
                r#"printf("%s %s %s %s %s", basename("/a/b/c"), basename("a/b//"), basename("/"), basename("c"), basename(""));"#
            ),
            "c b / c ."
        );
        assert_eq!(
            eval(r#"printf("%s %s %s %s", dirname("/a/b/c"), dirname("/x"), dirname("c"), dirname(""));"#),
            "/a/b / . ."
        );
        assert_eq!(
            eval(
                r#"printf("%s|%s|%s|%s|%s", strchr("a=b=c", '='), strrchr("a=b=c", '='), strchr("abc", 'x'), lltostr(-1234), lltostr(0));"#
            ),
            "=b=c|=c||-1234|0"
        );
        assert_eq!(
            eval(
                r#"printf("%x %x %d %d %d", htons(0x1234), htonl(0x12345678), ntohs(htons(80)), getmajor(0x800001), getminor(0x800001));"#
            ),
            "3412 78563412 80 8 1"
        );
    }

    #[test]
    fn associative_arrays_keep_values_by_key() {
        assert_eq!(
            eval(
                r#"a["x"] = 1; a["y"] = 2; a["x"] += 10; b[1, "k"] = "str"; c[3]++; c[3]++;
                   printf("%d %d %d %s %d %d|", a["x"], a["y"], a["z"], b[1, "k"], c[3], c[4]);
                   a["x"] = 0; b[1, "k"] = NULL; printf("%d %d|", a["x"], b[1, "k"] == NULL);
                   self->t[pid] = 5; printf("%d %d", self->t[pid], self->t[pid + 1]);"#
            ),
            "11 2 0 str 2 0|0 1|5 0"
        );
        // Keys of a different arity or type are refused as DTrace refuses them.
        let out = run(&["-n", r#"BEGIN { a[1] = 1; a["x"] = 2; }"#]);
        assert_eq!(out.code(), 1);
        assert!(out.stderr.contains("a[ ] key #1 is incompatible with prototype:"), "{}", out.stderr);
        let out = run(&["-n", "BEGIN { a[1] = 1; a[1, 2] = 2; }"]);
        assert!(out.stderr.contains("a[ ] prototype mismatch: 2 keys passed, 1 expected"), "{}", out.stderr);
    }

    #[test]
    fn if_else_and_clause_locals() {
        assert_eq!(
            eval(
                r#"this->v = 5; if (this->v > 3) { printf("big\n"); } else { printf("small\n"); } if (this->v > 9) printf("huge\n");"#
            ),
            "big\n"
        );
    }

    #[test]
    fn printf_conversions_match_c() {
        assert_eq!(
            eval(
                r#"printf("%5d|%-5d|%x|%X|%o|%c|%s|%10s|%-10s|%%|%u|%05d|%+d|%.3d\n", 42, 42, 255, 255, 8, 65, "str", "right", "left", -1, 42, 42, 7);"#
            ),
            "   42|42   |ff|FF|10|A|str|     right|left      |%|4294967295|00042|+42|007\n"
        );
        assert_eq!(eval(r#"printf("%*d|%-*d|\n", 4, 1, 3, 2);"#), "   1|2  |\n");
    }

    #[test]
    fn macro_arguments_and_interpreter_line() {
        let path = script(
            "args.d",
            "#!/usr/sbin/dtrace -qs\nBEGIN\n{\n\tprintf(\"%d %s %s\\n\", $1 + 1, $$2, $2);\n}\ntick-$3 { exit(0); }\n",
        );
        let out = run(&["-qs", &path, "41", "execname", "100ms"]);
        assert_eq!(out.code(), 0, "{}", out.stderr);
        assert_eq!(out.stdout, "42 execname dtrace\n\n");
    }

    #[test]
    fn pragma_options_apply() {
        let path = script("pragma.d", "#pragma D option quiet\nBEGIN { printf(\"quiet\\n\"); exit(0); }\n");
        let out = run(&["-s", &path]);
        assert_eq!(out.stdout, "quiet\n\n");
        assert_eq!(out.stderr, "");
    }
}

mod syscall_provider {
    use super::*;

    #[test]
    fn openat_copyinstr_sees_each_cat() {
        let mut t = Tracer::spawn(&[
            "-qn",
            READY,
            "-n",
            r#"syscall::openat:entry /execname == "cat"/ { printf("%s %s\n", execname, copyinstr(arg1)); }"#,
        ]);
        t.wait_for("ready");
        for _ in 0..3 {
            let st = Command::new("cat").arg("/etc/hostname").output().expect("cat");
            assert!(st.status.success());
        }
        // dtrace drains the ring buffer once more after the signal.
        let out = t.stop();
        let hits = out.stdout.lines().filter(|l| *l == "cat /etc/hostname").count();
        assert_eq!(hits, 3, "{}", out.stdout);
        assert!(out.stdout.lines().all(|l| l.is_empty() || l == "ready" || l.starts_with("cat /")), "{}", out.stdout);
    }

    /// One or a few probes attach to their system calls' own tracepoints,
    /// many to the raw sys_enter/sys_exit tracepoints: both count alike.
    #[test]
    fn few_and_many_probes_count_exactly() {
        let many = "syscall::getppid:entry, syscall::getpid:entry, syscall::gettid:entry, \
                    syscall::getuid:entry, syscall::getgid:entry";
        for probes in ["syscall::getppid:entry", "syscall::getppid:entry, syscall::getppid:return", many] {
            let w = util::Workload::spawn(&["getppid", "5000"]);
            let pid = w.pid();
            let program = format!(
                "{probes} /pid == {pid}/ {{ @[probefunc, probename] = count(); }} END {{ printa(\"%s %s %@d\\n\", @); }}"
            );
            let mut t = Tracer::spawn(&["-qn", READY, "-n", &program]);
            t.wait_for("ready");
            w.go();
            let out = t.stop();
            assert!(out.stdout.lines().any(|l| l == "getppid entry 5000"), "{probes}: {}", out.stdout);
            if probes.contains("return") {
                assert!(out.stdout.lines().any(|l| l == "getppid return 5000"), "{probes}: {}", out.stdout);
            }
        }
    }

    #[test]
    fn thread_locals_time_entry_to_return() {
        let mut t = Tracer::spawn(&[
            "-qn",
            READY,
            "-n",
            r#"syscall::nanosleep:entry, syscall::clock_nanosleep:entry /execname == "sleep"/ { self->ts = timestamp; }
               syscall::nanosleep:return, syscall::clock_nanosleep:return /self->ts/ { printf("%d\n", (timestamp - self->ts) / 1000000); self->ts = 0; }"#,
        ]);
        t.wait_for("ready");
        Command::new("sleep").arg("0.1").status().expect("sleep");
        std::thread::sleep(std::time::Duration::from_millis(200));
        let out = t.stop();
        let ms: Vec<i64> = out.stdout.lines().skip(1).filter(|l| !l.is_empty()).map(|l| l.parse().unwrap()).collect();
        assert_eq!(ms.len(), 1, "{}", out.stdout);
        assert!((100..=180).contains(&ms[0]), "slept {} ms", ms[0]);
    }

    #[test]
    fn return_probes_carry_value_and_errno() {
        let mut t = Tracer::spawn(&[
            "-qn",
            READY,
            "-n",
            r#"syscall::openat:return /execname == "cat" && errno != 0/ { printf("%d %d %d\n", (int)arg0, (int)arg1, errno); }"#,
        ]);
        t.wait_for("ready");
        let _ = Command::new("cat").arg("/nonexistent/file").output();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let out = t.stop();
        assert!(out.stdout.lines().any(|l| l == "-1 -1 2" || l == "-2 -2 2"), "{}", out.stdout);
    }

    #[test]
    fn all_entries_match_and_fire() {
        let mut t = Tracer::spawn(&[
            "-n",
            READY,
            "-n",
            r#"syscall:::entry /execname == "cat"/ { printf("%s\n", probefunc); }"#,
        ]);
        t.wait_for("ready");
        Command::new("cat").arg("/etc/hostname").output().expect("cat");
        std::thread::sleep(std::time::Duration::from_millis(200));
        let out = t.stop();
        let table =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/provider/syscalls/x86_64.tbl")).unwrap();
        let n = if cfg!(target_arch = "x86_64") { table.lines().count() } else { 0 };
        if n > 0 {
            assert!(
                out.stderr.contains(&format!("description 'syscall:::entry ' matched {n} probes")),
                "{}",
                out.stderr
            );
        }
        for f in ["openat", "read", "close", "mmap"] {
            assert!(out.stdout.contains(&format!(":entry {f}\n")), "no {f} in {}", out.stdout);
        }
    }
}

mod profile_provider {
    use super::*;

    #[test]
    fn ticks_count_and_stop() {
        let out = run(&["-qn", r#"tick-200ms { printf("%d\n", n++); } tick-1s { exit(0); }"#]);
        assert_eq!(out.code(), 0);
        assert!(out.stdout == "0\n1\n2\n3\n\n" || out.stdout == "0\n1\n2\n3\n4\n\n", "{:?}", out.stdout);
    }

    #[test]
    fn profile_fires_on_cpus() {
        let out = run(&["-qn", r#"profile-997 { n++; } tick-500ms { printf("%d\n", n > 0); exit(0); }"#]);
        assert_eq!(out.stdout, "1\n\n");
    }
}

mod drops {
    use super::*;

    #[test]
    fn a_full_buffer_is_reported_not_silent() {
        // A 4 KiB buffer holds about 15 string records; profile-997 on every
        // CPU writes far more than that between two drains a second apart.
        // Stopped by a signal: an exit() record could itself be dropped.
        let mut t = Tracer::spawn(&[
            "-q",
            "-x",
            "bufsize=4k",
            "-x",
            "switchrate=1s",
            "-n",
            r#"profile-997 { printf("%s\n", execname); }"#,
        ]);
        std::thread::sleep(std::time::Duration::from_millis(2500));
        let out = t.stop();
        assert_eq!(out.code(), 0, "{}", out.stderr);
        assert!(
            out.stderr.lines().any(|l| l.starts_with("dtrace: ") && l.contains(" drops on CPU ")),
            "{}",
            out.stderr
        );
    }
}

mod errors {
    use super::*;

    #[test]
    fn syntax_error_names_line() {
        let path = script("syntax.d", "BEGIN\n{\n\ttrace(1)\n\tx = 2;\n}\n");
        let out = run(&["-s", &path]);
        out.assert_no_panic();
        assert_eq!(out.code(), 1);
        assert_eq!(
            out.stderr,
            format!("dtrace: failed to compile script {path}: line 4: syntax error near \"x = 2;\"\n")
        );
    }

    #[test]
    fn unknown_probe_is_invalid_specifier() {
        let out = run(&["-n", "syscall::nosuch:entry { trace(1); }"]);
        assert_eq!(out.code(), 1);
        assert_eq!(
            out.stderr,
            "dtrace: invalid probe specifier syscall::nosuch:entry { trace(1); }: probe description syscall::nosuch:entry does not match any probes\n"
        );
        let out = run(&["-Z", "-qn", "syscall::nosuch:entry { trace(1); } BEGIN { exit(0); }"]);
        assert_eq!(out.code(), 0, "-Z permits it: {}", out.stderr);
    }

    #[test]
    fn unknown_variable_is_reported() {
        let out = run(&["-n", "BEGIN { trace(nosuchvar); }"]);
        assert_eq!(out.code(), 1);
        assert_eq!(
            out.stderr,
            "dtrace: invalid probe specifier BEGIN { trace(nosuchvar); }: in action list: failed to resolve nosuchvar: Unknown variable name\n"
        );
    }

    #[test]
    fn bad_options() {
        let out = run(&["-x", "nosuchopt", "-n", "BEGIN"]);
        assert_eq!(out.code(), 1);
        assert_eq!(out.stderr, "dtrace: failed to set -x nosuchopt: Invalid option name\n");
        let out = run(&["-k"]);
        assert_eq!(out.code(), 2);
        assert!(out.stderr.starts_with("dtrace: illegal option -- k\nUsage: dtrace"), "{}", out.stderr);
        let out = run(&["-s", "/nonexistent/x.d"]);
        assert_eq!(out.code(), 1);
        assert_eq!(out.stderr, "dtrace: failed to open /nonexistent/x.d: No such file or directory\n");
    }

    #[test]
    fn type_errors_name_both_types() {
        let out = run(&["-n", r#"BEGIN { x = "a" + 1; }"#]);
        assert_eq!(out.code(), 1);
        assert!(out.stderr.contains(r#"operands have incompatible types: "string" + "int""#), "{}", out.stderr);
    }

    #[test]
    fn garbage_never_panics() {
        for program in [
            "",
            "{",
            "}",
            "BEGIN {",
            "BEGIN / {",
            "::::",
            "BEGIN { printf(); }",
            "BEGIN { exit(\"a\"); }",
            "BEGIN { @a = count(1); }",
            "BEGIN { x = 1 / 0; }",
            "\"",
            "#pragma D option nosuch\nBEGIN",
            "BEGIN { 'ab }",
            // i64::MIN / -1 overflows: no constant (and no panic folding it).
            "BEGIN { @a = lquantize(1, (-9223372036854775807 - 1) / -1, 10); }",
            "BEGIN { curthread = 1; }",
            "BEGIN { NULL = 1; }",
            "BEGIN { curthread[1] = 2; }",
            "BEGIN { NULL[1] = 2; }",
        ] {
            let out = run(&["-n", program]);
            out.assert_no_panic();
            assert!(out.code() == 1 || out.code() == 2, "{program:?}: {} {}", out.code(), out.stderr);
            assert!(out.stderr.starts_with("dtrace: "), "{program:?}: {}", out.stderr);
        }
    }
}

mod command_line {
    use super::*;

    #[test]
    fn list_prints_dtrace_columns() {
        let out = run(&["-l", "-n", "syscall::openat:entry"]);
        assert_eq!(out.code(), 0);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines[0], "   ID   PROVIDER            MODULE                          FUNCTION NAME");
        assert_eq!(lines.len(), 2);
        assert!(
            lines[1].ends_with("   syscall           vmlinux                            openat entry"),
            "{:?}",
            lines[1]
        );
        let out = run(&["-l"]);
        assert!(out.stdout.lines().count() > 600);
        assert!(out.stdout.contains("    1     dtrace                                                     BEGIN\n"));
        let out = run(&["-lP", "profile"]);
        assert!(out.stdout.contains(" profile-97\n") && out.stdout.contains(" tick-1\n"));
    }

    #[test]
    fn output_file_and_compile_only() {
        let path = util::scratch_dir("dtrace-out");
        let _ = std::fs::remove_file(&path);
        let out = run(&["-q", "-o", path.to_str().unwrap(), "-n", r#"BEGIN { printf("to file\n"); exit(0); }"#]);
        assert_eq!(out.code(), 0);
        assert_eq!(out.stdout, "");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "to file\n\n");
        std::fs::remove_file(&path).ok();
        let out = run(&["-e", "-n", r#"BEGIN { printf("never\n"); }"#]);
        assert_eq!((out.code(), out.stdout.as_str()), (0, ""));
    }

    #[test]
    fn c_preprocessor_with_defines_undefines_and_includes() {
        let header = script("defs.h", "#define GREETING \"hi\"\n#define TWICE(x) ((x) * 2)\n");
        let dir = std::path::Path::new(&header).parent().unwrap().to_string_lossy().into_owned();
        let path = script(
            "cpp.d",
            "#!/usr/sbin/dtrace -Cqs\n#include <defs.h>\nBEGIN\n{\n#ifdef EXTRA\n\tprintf(\"%s %d %d\\n\", GREETING, TWICE(21), EXTRA);\n#else\n\tprintf(\"%s %d\\n\", GREETING, TWICE(21));\n#endif\n\texit(0);\n}\n",
        );
        let include = format!("-I{dir}");
        let out = run(&["-C", &include, "-q", "-s", &path]);
        assert_eq!(out.stdout, "hi 42\n\n", "{}", out.stderr);
        let out = run(&["-C", &include, "-DEXTRA=7", "-q", "-s", &path]);
        assert_eq!(out.stdout, "hi 42 7\n\n", "{}", out.stderr);
        let out = run(&["-C", &include, "-DEXTRA=7", "-UEXTRA", "-q", "-s", &path]);
        assert_eq!(out.stdout, "hi 42\n\n", "{}", out.stderr);
        // A system header that defines C inline functions (glibc's
        // <endian.h>), as dtrace-utils' typedef/tst.TypedefDataAssign uses.
        let path_endian = script(
            "endian.d",
            "#include <endian.h>\n#if __BYTE_ORDER == __LITTLE_ENDIAN\n#define ORDER \"little\"\n#else\n#define ORDER \"big\"\n#endif\nBEGIN { printf(\"%s\\n\", ORDER); exit(0); }\n",
        );
        let out = run(&["-C", "-q", "-s", &path_endian]);
        let order = if cfg!(target_endian = "little") { "little" } else { "big" };
        assert_eq!((out.code(), out.stdout.as_str()), (0, format!("{order}\n\n").as_str()), "{}", out.stderr);
        // A missing header: the preprocessor says so on stderr, then
        // dtrace as DTrace does (EDT_CPPERR).
        let out = run(&["-C", "-q", "-s", &path]);
        assert_eq!(out.code(), 1);
        assert!(out.stderr.starts_with("/dev/stdin:2: fatal error: defs.h"), "{}", out.stderr);
        assert!(
            out.stderr.ends_with(&format!(
                "dtrace: failed to compile script {path}: Preprocessor failed to process input program\n"
            )),
            "{}",
            out.stderr
        );
        // A cpppath program that is no C preprocessor fails on the first
        // definition, which leads the arguments (dtrace-utils'
        // options/tst.cpppath).
        let out = run(&["-C", "-x", "cpppath=/bin/cat", "-q", "-s", &path]);
        assert_eq!(out.code(), 1);
        assert!(out.stderr.starts_with("cat: invalid option -- 'D'"), "{}", out.stderr);
    }

    #[test]
    fn several_programs_share_globals() {
        let out = run(&["-q", "-n", "BEGIN { x = 5; }", "-n", r#"BEGIN { printf("%d\n", x); exit(0); }"#]);
        assert_eq!(out.stdout, "5\n\n");
    }
}
