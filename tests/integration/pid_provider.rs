//! The pid provider and ustack(): uprobes on the workload's own functions
//! (`workload calls N`: dt_workload_outer(i) calls dt_workload_call(i),
//! which returns 2i+1) and on libc in commands run with -c, and the seeds'
//! lib_call_stack.d and libc_trace.d.

use super::*;

/// Runs `workload calls n` under `program` (a -p script with $target) and
/// returns dtrace's output, which ends when the workload exits.
fn trace_calls(n: usize, program: &str) -> util::Output {
    let w = util::Workload::spawn(&["calls", &n.to_string()]);
    let pid = w.pid().to_string();
    let mut t = Tracer::spawn(&["-qn", READY, "-n", program, "-p", &pid]);
    t.wait_for("ready");
    let sum = w.go();
    assert_eq!(sum.trim(), (n * n).to_string(), "the workload's sum of 2i+1");
    let out = t.finish();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    out
}

#[test]
fn entry_and_return_count_each_call() {
    let out = trace_calls(
        1000,
        r#"pid$target:a.out:dt_workload_call:entry { @e = count(); }
           pid$target:workload:dt_workload_call:return { @r = count(); }
           END { printa("entry %@d\n", @e); printa("return %@d\n", @r); }"#,
    );
    assert!(out.stdout.contains("entry 1000\n"), "{}", out.stdout);
    assert!(out.stdout.contains("return 1000\n"), "{}", out.stdout);
}

#[test]
fn arguments_on_entry_and_return_value_in_arg1() {
    let out = trace_calls(
        5,
        r#"pid$target::dt_workload_call:entry { printf("%s %s %s %d\n", probemod, probefunc, probename, arg0); }
           pid$target::dt_workload_call:return { printf("%s %d %d\n", probename, arg0, arg1); }"#,
    );
    let lines: Vec<&str> =
        out.stdout.lines().filter(|l| l.starts_with("workload ") || l.starts_with("return ")).collect();
    let mut expected = Vec::new();
    for i in 0..5 {
        expected.push(format!("workload dt_workload_call entry {i}"));
        expected.push(format!("return 0 {}", 2 * i + 1));
    }
    assert_eq!(lines, expected, "{}", out.stdout);
}

#[test]
fn ustack_names_the_workloads_functions() {
    let out = trace_calls(
        3,
        r#"pid$target:a.out:dt_workload_call:entry { @[ustack()] = count(); }
           pid$target:a.out:dt_workload_call:return { @r[ustack(1)] = count(); }"#,
    );
    // The entry stack starts in the function itself; the return stack is
    // where it returns to, in its caller (or the caller's caller after a
    // tail call).
    let lines: Vec<&str> = out.stdout.lines().map(str::trim).collect();
    assert!(lines.contains(&"workload`dt_workload_call"), "{}", out.stdout);
    assert!(lines.iter().any(|l| l.starts_with("workload`dt_workload_outer+0x") || l.starts_with("workload`main")));
    assert!(lines.contains(&"3"), "each stack counted 3 times: {}", out.stdout);
}

/// trace(ustack()) traces the stack as the ustack() action does (profilers
/// write `profile-997 { trace(ustack()); }`), not its bytes.
#[test]
fn trace_of_a_stack_prints_its_frames() {
    let out = trace_calls(2, "pid$target:a.out:dt_workload_call:entry { trace(ustack(1)); }");
    let frames: Vec<&str> = out.stdout.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "ready").collect();
    assert_eq!(frames, ["workload`dt_workload_call", "workload`dt_workload_call"], "{}", out.stdout);
}

#[test]
fn libc_by_every_module_name() {
    for module in ["libc", "libc.so", "libc.so.6", "libc.so*"] {
        let program = format!(
            r#"pid$target:{module}:malloc:entry {{ @[probeprov == strjoin("pid", lltostr($target)), probemod] = count(); }}
               END {{ printa("%d %s %@d\n", @); }}"#
        );
        let out = run(&["-qn", &program, "-c", "ls /"]);
        out.assert_no_panic();
        assert_eq!(out.code(), 0, "{module}: {}", out.stderr);
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with("1 libc.so.6 "))
            .unwrap_or_else(|| panic!("{module}: {}", out.stdout));
        let calls: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(calls > 0, "{line}");
    }
}

#[test]
fn globs_in_function_and_name_and_listing() {
    let out = run(&["-qn", "pid$target:libc:str*:entry { @[probefunc] = count(); }", "-c", "ls /"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    // Aggregation rows are indented; the rest is ls's own output.
    let names: Vec<&str> =
        out.stdout.lines().filter(|l| l.starts_with("  ")).filter_map(|l| l.split_whitespace().next()).collect();
    // A function is named by its preferred alias (strdup is __strdup's
    // weak alias: __strdup), as a frame there is.
    assert!(!names.is_empty() && names.iter().all(|n| n.trim_start_matches('_').starts_with("str")), "{}", out.stdout);
    assert!(names.contains(&"__strdup") && !names.contains(&"strdup"), "{}", out.stdout);
    // glibc's strlen is an IFUNC: probed where the loader sends calls.
    assert!(names.contains(&"strlen"), "{}", out.stdout);

    let out = run(&["-l", "-n", "pid$target::malloc:", "-c", "ls"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let rows: Vec<Vec<&str>> = out.stdout.lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    assert!(rows.iter().any(|r| r[2..] == ["libc.so.6", "malloc", "entry"]), "{}", out.stdout);
    assert!(rows.iter().any(|r| r[2..] == ["libc.so.6", "malloc", "return"]), "{}", out.stdout);
    assert!(rows.iter().all(|r| r[1].starts_with("pid")), "{}", out.stdout);
    // An empty name also names each instruction, by its offset in hex.
    assert!(rows.iter().any(|r| r[2..] == ["libc.so.6", "malloc", "0"]), "{}", out.stdout);
    assert!(rows.iter().filter(|r| r[4].bytes().all(|b| b.is_ascii_hexdigit())).count() > 10, "{}", out.stdout);
}

#[test]
fn lib_call_stack_seed() {
    let path = script(
        "lib_call_stack.d",
        r#"#!/usr/sbin/dtrace -s

/* uses the 'pid' Provider to print call stacks */

#pragma D option quiet

pid$target:$1:$2:entry
{
    printf("%s:%s:%s", probeprov, probemod, probefunc);
    ustack();
}
"#,
    );
    let out = run(&["-s", &path, "-c", "ls /", "libc", "str*"]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    // "pid1234:libc.so.6:strlen" then the stack, first frame the function.
    let i = lines
        .iter()
        .position(|l| l.starts_with("pid") && l.contains(":libc.so.6:str"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(lines[i + 1].starts_with("              libc.so.6`"), "{}", out.stdout);
    assert!(lines.iter().any(|l| l.trim_start() == "libc.so.6`strlen"), "{}", out.stdout);
}

#[test]
fn libc_trace_seed_indents_flow() {
    let path = script(
        "libc_trace.d",
        "#!/usr/sbin/dtrace -s\n/* uses the 'pid' Provider to trace libc functions */\npid$target:libc.so::entry,\npid$target:libc.so::return\n{\n    /* use \"automatic printing\" feature */\n}\n",
    );
    let out = run(&["-s", &path, "-F", "-c", "date"]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stderr.contains(&format!("dtrace: script '{path}' matched ")), "{}", out.stderr);
    assert!(out.stderr.contains(" has exited"), "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("CPU FUNCTION")), "{}", out.stdout);
    // An entry one level deeper than the line before it, and its return
    // at the same depth: "  0    -> getenv" ... "  0    <- getenv".
    let depth = |l: &str, arrow: &str| l.find(arrow).map(|i| (i, l[i + 3..].trim().to_string()));
    let nested = lines.windows(2).any(|w| match (depth(w[0], "-> "), depth(w[1], "-> ")) {
        (Some((a, _)), Some((b, f))) => b == a + 2 && lines.iter().any(|l| depth(l, "<- ") == Some((b, f.clone()))),
        _ => false,
    });
    assert!(nested, "{}", out.stdout);
}

#[test]
fn no_such_function_or_module_is_refused() {
    // dt_pid.c's errors: a module it does not find matches no probe; a
    // function not in a module named exactly is D_PROC_FUNC.
    for (desc, what, why) in [
        ("pid$target:libc:nosuchfunction:entry", "function", "failed to lookup 'nosuchfunction' in module 'libc'"),
        ("pid$target:nosuchlib::entry", "module", "does not match any probes"),
        ("pid$target:a.out:main:beginning", "name", "'beginning' is an invalid probe name"),
        ("pid$target:libc:-:800", "'-' module", "only the a.out module is valid with the '-' function"),
    ] {
        let program = format!("{desc} {{ trace(1); }}");
        let out = run(&["-n", &program, "-c", "echo never-run"]);
        out.assert_no_panic();
        assert_eq!(out.code(), 1, "{what}: {}", out.stderr);
        assert!(
            out.stderr.starts_with(&format!("dtrace: invalid probe specifier {program}: ")),
            "{what}: {}",
            out.stderr
        );
        assert!(out.stderr.trim_end().ends_with(why), "{}", out.stderr);
        // The held command never ran.
        assert!(!out.stdout.contains("never-run"), "{}", out.stdout);
    }
    let out = run(&["-l", "-n", "pid$target:libc:nosuchfunction:entry", "-c", "ls"]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("failed to lookup 'nosuchfunction'"), "{}", out.stderr);
    let out = run(&["-xerrtags", "-n", "pid0:::entry", "-c", "ls"]);
    assert_eq!(
        (out.code(), out.stderr.trim_end()),
        (1, "dtrace: invalid probe specifier pid0:::entry: [D_PROC_BADPID] 'pid0' does not contain a valid pid")
    );
}

#[test]
fn ustack_in_a_syscall_probe_of_the_target() {
    // The lseek/write seed's form: user stacks of a system call, by process.
    let out = run(&["-qn", r#"syscall::write:entry /pid == $target/ { @[ustack(2)] = count(); }"#, "-c", "echo hello"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.lines().any(|l| l.trim_start().starts_with("libc.so.6`")), "{}", out.stdout);
    // jstack() is ustack() where no Java VM annotates frames.
    let out = run(&["-qn", r#"syscall::write:entry /pid == $target/ { jstack(); }"#, "-c", "echo hello"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.lines().any(|l| l.trim_start().starts_with("libc.so.6`")), "{}", out.stdout);
}

#[test]
fn offset_probes_fire_at_their_instruction() {
    // Offset 0 is the function's first instruction: it fires as entry does.
    let out = trace_calls(
        7,
        r#"pid$target:a.out:dt_workload_call:0 { @[probename] = count(); }
           END { printa("%s %@d\n", @); }"#,
    );
    assert!(out.stdout.contains("0 7\n"), "{}", out.stdout);
    // An offset past the function's end is D_PROC_OFF.
    let w = util::Workload::spawn(&["calls", "1"]);
    let pid = w.pid().to_string();
    let out = run(&["-n", "pid$target:a.out:dt_workload_call:100000 { }", "-p", &pid]);
    w.go();
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("offset 0x100000 outside of function 'dt_workload_call'"), "{}", out.stderr);
}

#[test]
fn ucaller_and_user_symbol_functions_name_the_calling_function() {
    let mut w = util::Workload::spawn(&["calls-held", "3"]);
    let pid = w.pid().to_string();
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"pid$target:a.out:dt_workload_call:entry { ufunc(ucaller); umod(ucaller); uaddr(ucaller); printf("|\n"); }"#,
        "-p",
        &pid,
    ]);
    t.wait_for("ready");
    assert_eq!(w.go_and_hold().trim(), "9");
    // Printed while the workload still runs, so its mappings name it.
    for _ in 0..3 {
        t.wait_for("|");
    }
    w.finish();
    let out = t.finish();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let rows: Vec<Vec<&str>> =
        out.stdout.lines().filter(|l| l.ends_with('|')).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 3, "{}", out.stdout);
    for row in rows {
        // The return address is in the caller (dt_workload_outer, or the
        // function it was inlined into): func, module, func+offset.
        let [func, module, addr, _] = row[..] else { panic!("{row:?}") };
        assert!(func.starts_with("workload`") && !func.contains('+'), "{row:?}");
        assert_eq!(module, "workload", "{row:?}");
        assert!(addr.starts_with(&format!("{func}+0x")), "{row:?}");
    }
}

/// DTrace's consumer makes ufunc() and umod() keys canonical before it
/// merges them: two addresses in one function are one ufunc() key, one
/// umod() key, and two uaddr() keys.
#[test]
fn ufunc_and_umod_keys_of_one_function_are_one_key() {
    let mut w = util::Workload::spawn(&["calls-held", "3"]);
    let pid = w.pid().to_string();
    // ucaller and ucaller + 1 are both in the calling function: the call
    // is never its last instruction.
    let mut t = Tracer::spawn(&[
        "-qn",
        READY,
        "-n",
        r#"pid$target:a.out:dt_workload_call:entry {
               this->a = ucaller + (n++ % 2);
               @f[ufunc(this->a)] = count(); @m[umod(this->a)] = count(); @a[uaddr(this->a)] = count(); }
           pid$target:a.out:dt_workload_call:entry /n == 3/ {
               printa("f %A %@d|\n", @f); printa("a %A %@d|\n", @a); printf("umod:"); printa(@m); printf("done|\n"); }"#,
        "-p",
        &pid,
    ]);
    t.wait_for("ready");
    assert_eq!(w.go_and_hold().trim(), "9");
    // Printed while the workload still runs, so its mappings name it.
    t.wait_for("done|");
    w.finish();
    let out = t.finish();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let rows = |kind: &str| -> Vec<Vec<String>> {
        out.stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{kind} ")) && l.ends_with('|'))
            .map(|l| l.trim_end_matches('|').split_whitespace().skip(1).map(str::to_string).collect())
            .collect()
    };
    let f = rows("f");
    assert_eq!(f.len(), 1, "{}", out.stdout);
    assert!(f[0][0].starts_with("workload`") && !f[0][0].contains('+') && f[0][1] == "3", "{f:?}");
    // umod() keys print as the module's name in printa's default format.
    let after = out.stdout.split("umod:").nth(1).expect("umod rows");
    let umod: Vec<Vec<&str>> = after
        .lines()
        .take_while(|l| !l.contains("done|"))
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(umod, [["workload", "3"]], "{}", out.stdout);
    let mut counts: Vec<String> = rows("a").into_iter().map(|r| r[1].clone()).collect();
    counts.sort();
    assert_eq!(counts, ["1", "2"], "{}", out.stdout);
}

/// A C program (gcc -O0) for what the pid provider reads of compiled code:
/// a static function with a weak alias (`_leaf`, as dtrace-utils'
/// tst.weak2), a global one with a weak alias (`_go`, tst.weak1), ten
/// arguments (arg6..arg9 passed on the stack) and a loop to count
/// instructions in. It runs `argv[1]` rounds.
fn c_program() -> std::path::PathBuf {
    // Built once: tests running at once must not rewrite what another runs.
    static PROGRAM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PROGRAM.get_or_init(build_c_program).clone()
}

fn build_c_program() -> std::path::PathBuf {
    gcc_program(
        "dtrace-pid-c",
        "prog",
        r#"#include <stdlib.h>
#pragma weak _go = go
#pragma weak _leaf = leaf
int _go(int a);
int _leaf(int a);
static int leaf(int a) { return a + 1; }
int go(int a) { return _leaf(a) + 1; }
long ten(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9) {
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
}
int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }
int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    long sum = 0;
    for (int r = 0; r < rounds; r++)
        sum += _go(r) + ten(0, 1, 2, 3, 4, 5, 6, 7, 8, 9) + loop(3);
    return sum == 0;
}
"#,
        &["-O0", "-g"],
    )
}

/// Builds the C program `source` with gcc and `flags` in a fresh scratch
/// directory `dir_name`: the executable `name`.
fn gcc_program(dir_name: &str, name: &str, source: &str, flags: &[&str]) -> std::path::PathBuf {
    let dir = util::scratch_dir(dir_name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join(format!("{name}.c"));
    std::fs::write(&path, source).expect("write");
    let exe = dir.join(name);
    let out = std::process::Command::new("gcc").args(flags).arg("-o").arg(&exe).arg(&path).output().expect("gcc");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    exe
}

#[test]
fn aliases_stack_arguments_instructions_and_addresses() {
    let exe = c_program();
    let command = format!("{} 3", exe.display());
    // Aliases are one probe, named as a frame there is: a global name
    // before a weak one, a weak one before a static one.
    let out = run(&[
        "-qn",
        r#"pid$target:a.out:go:entry, pid$target:a.out:_go:entry, pid$target:a.out:leaf:entry,
           pid$target:a.out:_leaf:entry { @[probefunc] = count(); }"#,
        "-c",
        &command,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let rows: Vec<Vec<&str>> =
        out.stdout.lines().map(|l| l.split_whitespace().collect()).filter(|r: &Vec<&str>| !r.is_empty()).collect();
    // Each description is an enabling: the probe both name fires twice a call.
    assert_eq!(rows, [vec!["_leaf", "6"], vec!["go", "6"]], "{}", out.stdout);

    // arg6..arg9 are on the stack at a function's first instruction.
    let out = run(&[
        "-qn",
        r#"pid$target:a.out:ten:entry { printf("%d %d %d %d %d %d %d %d %d %d\n", arg0, arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9); }"#,
        "-c",
        &command,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().filter(|l| *l == "0 1 2 3 4 5 6 7 8 9").count(), 3, "{}", out.stdout);

    // A glob name is every instruction too: offset 0 fires with entry, at
    // the same PC; some instruction of the loop runs more than once a call.
    let out = run(&[
        "-qn",
        r#"pid$target:a.out:loop: { @[probename] = count(); @pc[probename] = max(uregs[R_PC]); }
           END { printa("%s %@d\n", @); printa("pc %s %@x\n", @pc); }"#,
        "-c",
        &command,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let count = |name: &str| {
        out.stdout.lines().find_map(|l| l.strip_prefix(&format!("{name} "))).and_then(|n| n.parse::<u64>().ok())
    };
    assert_eq!((count("entry"), count("0"), count("return")), (Some(3), Some(3), Some(3)), "{}", out.stdout);
    let pc = |name: &str| out.stdout.lines().find_map(|l| l.strip_prefix(&format!("pc {name} "))).map(str::to_string);
    assert_eq!(pc("entry"), pc("0"), "{}", out.stdout);
    let offsets: Vec<u64> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_once(' ').filter(|(n, _)| n.bytes().all(|b| b.is_ascii_hexdigit())))
        .filter_map(|(_, c)| c.parse().ok())
        .collect();
    assert!(offsets.len() > 5 && offsets.iter().any(|&c| c > 3), "{}", out.stdout);

    // `-` names an address of the executable as its file places it; a
    // provider glob that names pid<N> makes that process's probes.
    let symbols = std::process::Command::new("nm").arg(&exe).output().expect("nm");
    let go = String::from_utf8_lossy(&symbols.stdout)
        .lines()
        .find_map(|l| l.strip_suffix(" T go").map(|a| u64::from_str_radix(a, 16).expect("hex")))
        .expect("go in nm");
    let out = run(&[
        "-qn",
        &format!("pid$target:a.out:-:{go:x} {{ @[probefunc, probename] = count(); }}"),
        "-n",
        r#"p*d$target::go:return { @[probefunc, probename] = count(); }"#,
        "-c",
        &command,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let row = |cells: [&str; 3]| out.stdout.lines().any(|l| l.split_whitespace().eq(cells));
    assert!(row(["-", &format!("{go:x}"), "3"]) && row(["go", "return", "3"]), "{}", out.stdout);
}

/// evaltime: a -c command is stopped where tracing begins. By default
/// (postinit, as DTrace) its initializers have run: a constructor's probe
/// does not fire, main's does; exec holds it before its first instruction.
/// A stripped program is stopped at main too (found through glibc's
/// __libc_start_main): the loader's opening of libc is not seen.
#[test]
fn evaltime_stops_commands_after_their_initializers() {
    let exe = gcc_program(
        "dtrace-evaltime",
        "init",
        "#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void early(void) { close(open(\"/dev/null\", O_WRONLY)); }\n\
         int main(void) { close(open(\"/dev/zero\", O_RDONLY)); return 0; }\n",
        &["-O0"],
    );
    let stripped = exe.with_file_name("init-stripped");
    let out = std::process::Command::new("strip").arg("-o").arg(&stripped).arg(&exe).output().expect("strip");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let program = r#"pid$target:a.out:early:entry, pid$target:a.out:main:entry { printf("%s\n", probefunc); }"#;
    let command = exe.to_string_lossy().into_owned();
    let fired =
        |out: &util::Output| out.stdout.lines().filter(|l| !l.is_empty()).map(str::to_string).collect::<Vec<_>>();
    let out = run(&["-qn", program, "-c", &command]);
    assert_eq!((out.code(), fired(&out)), (0, vec!["main".to_string()]), "{}", out.stderr);
    let out = run(&["-qn", program, "-c", &command, "-x", "evaltime=exec"]);
    assert_eq!((out.code(), fired(&out)), (0, vec!["early".to_string(), "main".to_string()]), "{}", out.stderr);
    let out = run(&["-qn", program, "-c", &command, "-x", "evaltime=preinit"]);
    assert_eq!((out.code(), fired(&out)), (0, vec!["early".to_string(), "main".to_string()]), "{}", out.stderr);
    // The stripped copy: the files it opens after the loader's, by their
    // flags (the constructor's write-only, main's read-only; the loader's
    // have O_CLOEXEC). Its strings may not be paged in yet at preinit.
    let opens = r#"syscall::openat:entry /pid == $target/ { printf("%x\n", arg2); }"#;
    let command = stripped.to_string_lossy().into_owned();
    let out = run(&["-qn", opens, "-c", &command]);
    assert_eq!((out.code(), fired(&out)), (0, vec!["0".to_string()]), "{}", out.stderr);
    let out = run(&["-qn", opens, "-c", &command, "-x", "evaltime=preinit"]);
    assert_eq!((out.code(), fired(&out)), (0, vec!["1".to_string(), "0".to_string()]), "{}", out.stderr);
    let out = run(&["-qn", opens, "-c", &command, "-x", "evaltime=exec"]);
    assert!(fired(&out).len() > 2, "the loader's opens too: {}", out.stdout);
    if let Some(dir) = exe.parent() {
        std::fs::remove_dir_all(dir).ok();
    }
}

#[test]
fn return_probes_leave_the_entry_point_and_argc_alone() {
    let exe = c_program();
    let command = format!("{} 3", exe.display());
    // Every function's return probed from exec on: the entry point is
    // jumped to, never called, so it has no return probe (a uretprobe there
    // would take argc for a return address and overwrite it).
    let out = run(&[
        "-qn",
        r#"pid$target:a.out::return { @r[probefunc] = count(); }
           pid$target:a.out:main:entry { printf("argc %d\n", arg0); }"#,
        "-c",
        &command,
        "-x",
        "evaltime=exec",
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.lines().any(|l| l == "argc 2"), "{}", out.stdout);
    assert!(out.stdout.contains(" main "), "{}", out.stdout);
    assert!(!out.stdout.contains("_start"), "{}", out.stdout);
}

#[test]
fn addresses_of_an_exited_target_are_still_named_and_percent_a_names_integers() {
    let exe = c_program();
    let command = format!("{} 3", exe.display());
    // The target has exited by END: its mappings were read while it ran.
    // %A of a plain integer names an address of the target, as DTrace's.
    let out = run(&[
        "-qn",
        r#"pid$target:a.out:go:entry { @pc[uregs[R_PC]] = count(); @f[ufunc(uregs[R_PC])] = count(); }
           END { printa("pc %A %@d\n", @pc); printa("func %A %@d\n", @f); }"#,
        "-c",
        &command,
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for line in ["pc prog`go 3", "func prog`go 3"] {
        assert!(out.stdout.lines().any(|l| l == line), "{line}:\n{}", out.stdout);
    }
}

/// ustack() frames as dt_print_ustack prints them: a frame-pointer walk
/// through code built without frame pointers ends at a pc of 0 or garbage,
/// which the kernel reports at an offset wrapped around before the file's
/// first mapping; such a frame ends the stack (a pc of 0) or prints as a
/// bare address, never as `ls`0xffff...`.
#[test]
fn ustack_frames_never_name_wrapped_offsets() {
    let out = run(&["-qn", "pid$target::malloc:entry { @[ustack()] = count(); }", "-c", "ls /"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains("libc.so.6`malloc"), "{}", out.stdout);
    let wrapped: Vec<&str> = out.stdout.lines().filter(|l| l.contains("`0xffff")).collect();
    assert!(wrapped.is_empty(), "{wrapped:?}\n{}", out.stdout);
}

#[test]
fn ustack_names_libcs_static_caller_of_main_from_its_debug_file() {
    // glibc is stripped; its debug file (libc6-dbg, scripts/install-deps.sh)
    // names the static function that calls main, as dtrace-utils'
    // ustack/tst.ustack_profile expects it.
    let command = format!("{} 1", c_program().display());
    let out = run(&["-qn", "pid$target:a.out:leaf:entry { ustack(); exit(0); }", "-c", &command]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let frames: Vec<&str> = out.stdout.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let main = frames.iter().position(|f| f.starts_with("prog`main+")).unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(frames.get(main + 1).is_some_and(|f| f.starts_with("libc.so.6`__libc_start_call_main+")), "{}", out.stdout);
}

/// Every ustack() of one profile firing is the same stack: the first is
/// kept for the firing (dt_probe_ctx.ustack). A second bpf_get_stackid()
/// in the timer interrupt gets addresses where the first got build IDs,
/// which the stack map refused as another stack (-EEXIST), so an
/// aggregation keyed by the second lost its frames (dtrace-utils'
/// aggs/tst.ustack: `ustack(5);` in one clause, `@[ustack(5)]` in the next).
#[test]
fn every_ustack_of_one_profile_firing_is_the_same_stack() {
    let exe = gcc_program(
        "dtrace-ustack-firing",
        "spin",
        "#include <time.h>\nvolatile unsigned long n;\n\
         __attribute__((noinline)) void dt_spin_here(time_t end) {\n\
         \tstruct timespec t;\n\tdo { for (int i = 0; i < 100000; i++) n++; clock_gettime(CLOCK_MONOTONIC, &t); } while (t.tv_sec < end);\n}\n\
         int main(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); dt_spin_here(t.tv_sec + 2); return 0; }\n",
        &["-O0", "-fno-omit-frame-pointer"],
    );
    let program = r#"profile-997 /pid == $target/ { ustack(1); @all = count(); }
        profile-997 /pid == $target/ { @[ustack(1)] = count(); }
        END { printa("%@d total\n", @all); printa("%k%@d\n", @); }"#;
    let out = run(&["-qn", program, "-c", &exe.to_string_lossy()]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let total: u64 = out
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" total")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}", out.stdout));
    // The key's frame, then its count on the next line.
    let lines: Vec<&str> = out.stdout.lines().collect();
    let in_spin: u64 = lines
        .windows(2)
        .filter(|w| w[0].trim_start().starts_with("spin`dt_spin_here+"))
        .filter_map(|w| w[1].trim().parse::<u64>().ok())
        .sum();
    assert!(total > 100, "{}", out.stdout);
    // Nearly all of the time is in dt_spin_here; the rest in clock_gettime.
    assert!(in_spin * 10 >= total * 8, "{in_spin} of {total} in dt_spin_here:\n{}", out.stdout);
}
