//! The USDT provider and `dtrace -h`/`-G`: C programs built here with
//! Debian's <sys/sdt.h> (systemtap-sdt-dev) and gcc, the -h/-G flow of a
//! provider definition, and Debian's own python3.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::*;

/// A fresh directory for one test's build.
fn build_dir(name: &str) -> PathBuf {
    let dir = util::scratch_dir(&format!("dtrace-usdt-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir
}

fn sh(dir: &std::path::Path, command: &str) {
    let out = Command::new("sh").arg("-c").arg(command).current_dir(dir).output().expect("sh");
    assert!(
        out.status.success(),
        "{command}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A program with <sys/sdt.h> probes: `tick(i, name, big, small)` with an
/// int, a string, a negative 64-bit and a negative short (no semaphore),
/// and `nothing()` with no arguments, each fired N times.
const SDT_PROGRAM: &str = r#"
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
static const char *names[] = {"alpha", "beta", "gamma"};
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	for (int i = 0; i < n; i++) {
		char buf[16];
		long big = -1000000000000L * i;
		short small = -i;
		snprintf(buf, sizeof buf, "%s", names[i % 3]);
		DTRACE_PROBE4(myapp, tick, i, buf, big, small);
		DTRACE_PROBE(myapp, nothing);
	}
	return 0;
}
"#;

fn sdt_program() -> PathBuf {
    let dir = build_dir("sdt");
    std::fs::write(dir.join("prog.c"), SDT_PROGRAM).expect("write");
    sh(&dir, "gcc -O2 -o prog prog.c");
    dir.join("prog")
}

#[test]
fn sdt_probes_fire_with_their_arguments() {
    let prog = sdt_program();
    let cmd = format!("{} 5", prog.display());
    let out = run(&[
        "-q",
        "-n",
        r#"myapp$target:::tick { printf("%d %s %d %d %s:%s:%s\n", arg0, copyinstr(arg1), arg2, arg3, probemod, probefunc, probename); }"#,
        "-n",
        "myapp$target:::nothing { @n = count(); } END { printa(\"nothing %@d\\n\", @n); }",
        "-c",
        &cmd,
    ]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let names = ["alpha", "beta", "gamma"];
    let expected: Vec<String> = (0..5i64)
        .map(|i| format!("{i} {} {} {} prog:main:tick", names[i as usize % 3], -1_000_000_000_000 * i, -i))
        .collect();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.ends_with(":tick")).collect();
    assert_eq!(lines, expected, "{}", out.stdout);
    assert!(out.stdout.contains("nothing 5\n"), "{}", out.stdout);
}

#[test]
fn probes_are_listed_and_named_without_a_pid() {
    let prog = sdt_program();
    let cmd = format!("{} 1", prog.display());
    // -l -c: the target's probes, with module and function.
    let out = run(&["-l", "-P", "myapp", "-c", &cmd]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let rows: Vec<Vec<&str>> = out.stdout.lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 2, "{}", out.stdout);
    for (row, name) in rows.iter().zip(["tick", "nothing"]) {
        assert!(row[1].starts_with("myapp") && row[1][5..].parse::<u32>().is_ok(), "{row:?}");
        assert_eq!(&row[2..], ["prog", "main", name]);
    }
    // `myapp:::tick` means the target's, as myapp$target does.
    let out = run(&[
        "-qn",
        "myapp:::tick { @ = count(); } END { printa(\"%@d\\n\", @); }",
        "-c",
        &format!("{} 7", prog.display()),
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains("7\n"), "{}", out.stdout);
    // A probe the program does not have matches nothing, as DTrace says.
    let out = run(&["-n", "myapp$target:::nosuch", "-c", &cmd]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("does not match any probes"), "{}", out.stderr);
    // The target's probes are registered for any description (dtrace-utils'
    // dtrace-util/tst.ListProbesFuncUSDT): by function, exactly or as a
    // glob; a description without a pid<N> provider makes no pid probes.
    for function in ["main", "mai*"] {
        let out = run(&["-l", "-f", function, "-c", &cmd]);
        assert_eq!(out.code(), 0, "{}", out.stderr);
        let providers: Vec<&str> = out.stdout.lines().skip(1).filter_map(|l| l.split_whitespace().nth(1)).collect();
        assert_eq!(providers.len(), 2, "{}", out.stdout);
        assert!(providers.iter().all(|p| p.starts_with("myapp")), "{}", out.stdout);
    }
}

/// A provider definition with several probes and argument types.
const PROVIDER: &str = r#"
#pragma D attributes Evolving/Evolving/Common provider myprov provider
provider myprov {
	probe request__start(int, char *);
	probe request__done(int id, const char *name, long long bytes);
	probe tick(void);
};
"#;

/// Serves lines on stdin: for each, reports whether request-start is
/// traced (`enabled 0|1`), then fires the probes once with that line's
/// number.
const SERVER: &str = r#"
#include <stdio.h>
#include <string.h>
#include "prov.h"
int main(void) {
	char line[64];
	int i = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		printf("enabled %d\n", MYPROV_REQUEST_START_ENABLED() ? 1 : 0);
		if (MYPROV_REQUEST_START_ENABLED())
			MYPROV_REQUEST_START(i, line);
		MYPROV_REQUEST_DONE(i, line, -4096LL * i);
		MYPROV_TICK();
		i++;
	}
	return 0;
}
"#;

/// Builds SERVER the standard way: header with -h, compile, -G over the
/// object, link with the -G output.
fn server(name: &str) -> PathBuf {
    let dir = build_dir(name);
    std::fs::write(dir.join("prov.d"), PROVIDER).expect("write");
    std::fs::write(dir.join("server.c"), SERVER).expect("write");
    let dtrace = util::DTRACE;
    sh(&dir, &format!("{dtrace} -h -s prov.d"));
    let header = std::fs::read_to_string(dir.join("prov.h")).expect("-h writes prov.h");
    assert!(header.contains("#define MYPROV_REQUEST_DONE(arg1, arg2, arg3)"), "{header}");
    sh(&dir, "gcc -O2 -Wall -Werror -c server.c -o server.o");
    sh(&dir, &format!("{dtrace} -G -s prov.d -o prov.o server.o"));
    sh(&dir, "gcc -Wl,--fatal-warnings -o server server.o prov.o");
    dir.join("server")
}

struct Server {
    child: std::process::Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Server {
    fn start(path: &std::path::Path) -> Server {
        let mut child =
            Command::new(path).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("start the server");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Server { child, lines }
    }

    /// Sends one request; returns whether request-start was enabled.
    fn request(&mut self, text: &str) -> bool {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{text}").expect("write");
        let line = self.lines.next().expect("a reply").expect("line");
        match line.as_str() {
            "enabled 0" => false,
            "enabled 1" => true,
            other => panic!("unexpected reply {other:?}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn h_and_g_build_a_program_whose_probes_fire_and_semaphores_follow_tracing() {
    let path = server("hg");
    let mut server = Server::start(&path);
    assert!(!server.request("before"), "no dtrace yet: *_ENABLED() is false");
    let pid = server.child.id().to_string();
    let mut t = Tracer::spawn(&[
        "-q",
        "-n",
        READY,
        "-n",
        r#"myprov$target:::request-start { printf("start %d %s\n", arg0, copyinstr(arg1)); }"#,
        "-n",
        r#"myprov$target:::request-done { printf("done %d %s %d\n", arg0, copyinstr(arg1), arg2); }"#,
        "-p",
        &pid,
    ]);
    t.wait_for("ready");
    assert!(server.request("alpha"), "traced: MYPROV_REQUEST_START_ENABLED() is true");
    assert!(server.request("beta"));
    t.wait_for("done 2 beta -8192");
    // SIGTERM, as a kill would: the kernel drops the reference counts.
    let out = {
        t.signal(libc::SIGTERM);
        t.finish()
    };
    out.assert_no_panic();
    let traced: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty() && *l != "ready").collect();
    assert_eq!(traced, ["start 1 alpha", "done 1 alpha -4096", "start 2 beta", "done 2 beta -8192"], "{}", out.stdout);
    assert!(!server.request("after"), "dtrace gone: *_ENABLED() is false again");
}

#[test]
fn python_function_entry_counts_by_name() {
    // Debian's python3 (3.11) has python:::function-entry; since 3.11
    // CPython fires it only while its line probe is enabled too
    // (cpython#98894), hence the empty line clause.
    let script = util::script(
        "calls.py",
        "def known(i):\n    return i * 2\n\ntotal = 0\nfor i in range(250):\n    total += known(i)\nprint(total)\n",
    );
    let cmd = format!("/usr/bin/python3 {script}");
    let out = run(&[
        "-q",
        "-n",
        r#"python$target:::function-entry /copyinstr(arg1) == "known"/ { @[basename(copyinstr(arg0)), copyinstr(arg1)] = count(); }"#,
        "-n",
        "python$target:::line { }",
        "-c",
        &cmd,
    ]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let row: Vec<&str> =
        out.stdout.lines().find(|l| l.contains("known")).map(|l| l.split_whitespace().collect()).unwrap_or_default();
    assert_eq!(row, ["calls.py", "known", "250"], "{}", out.stdout);
}

#[test]
fn h_and_g_refuse_what_they_cannot_build() {
    let dir = build_dir("refuse");
    std::fs::write(dir.join("prov.d"), PROVIDER).expect("write");
    std::fs::write(dir.join("notes.txt"), "not an object").expect("write");
    let prov = dir.join("prov.d").to_string_lossy().into_owned();
    let out = run(&["-G", "-s", &prov, "-o", "/dev/null", &dir.join("notes.txt").to_string_lossy()]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("not an ELF file"), "{}", out.stderr);
    let out = run(&["-h", "-n", "BEGIN"]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("-h requires a script"), "{}", out.stderr);
    let bad = util::script("badtype.d", "provider p { probe x(nosuchtype_t); };");
    let out = run(&["-h", "-s", &bad, "-o", "/dev/null"]);
    assert_eq!(out.code(), 1, "{}", out.stderr);
    // A provider name a pid could not follow within DTrace's 64 bytes.
    let long = format!("provider p{} {{ probe x(); }};", "1".repeat(53));
    let out = run(&["-G", "-s", &util::script("long.d", &long), "-o", "/dev/null"]);
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("USDT provider name may not exceed 53 characters"), "{}", out.stderr);
    // A probe site in the objects that the definitions do not declare.
    for (site, why) in
        [("myprov, nosuch", "no such probe myprov:nosuch"), ("otherprov, tick", "no such provider otherprov")]
    {
        std::fs::write(dir.join("site.c"), format!("#include <sys/sdt.h>\nvoid f(void) {{ DTRACE_PROBE({site}); }}\n"))
            .expect("write");
        sh(&dir, "gcc -c site.c -o site.o");
        let out = run(&["-G", "-s", &prov, "-o", "/dev/null", &dir.join("site.o").to_string_lossy()]);
        assert_eq!(out.code(), 1, "{}", out.stderr);
        assert!(
            out.stderr.starts_with("dtrace: failed to link script null: ") && out.stderr.contains(why),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn a_provider_definition_types_args_and_lv_shows_them() {
    let path = server("typed");
    let prov = path.with_file_name("prov.d").to_string_lossy().into_owned();
    let typed = util::script(
        "typed.d",
        &format!(
            "{PROVIDER}\nmyprov$target:::request-done {{ printf(\"%d %s %d %d\\n\", args[0], copyinstr((uintptr_t)args[1]), args[2], sizeof(args[0])); }}\n"
        ),
    );
    let mut server = Server::start(&path);
    let pid = server.child.id().to_string();
    let mut t = Tracer::spawn(&["-q", "-n", READY, "-s", &typed, "-p", &pid]);
    t.wait_for("ready");
    server.request("gamma");
    t.wait_for("0 gamma 0 4");
    server.request("delta");
    t.wait_for("1 delta -4096 4");
    t.stop().assert_no_panic();
    // -lv: the types the definition gives; beyond them, out of range.
    let out = run(&["-lv", "-s", &prov, "-n", &format!("myprov{pid}:::request-done")]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let types: Vec<&str> = out.stdout.lines().filter(|l| l.trim_start().starts_with("args[")).map(str::trim).collect();
    assert_eq!(types, ["args[0]: int", "args[1]: char *", "args[2]: long long"], "{}", out.stdout);
    let out = run(&["-e", "-s", &prov, "-n", &format!("myprov{pid}:::tick {{ trace(args[0]); }}")]);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("out of range"), "{}", out.stderr);
}

/// A definition that translates its arguments (`: (int j, int i, int i,
/// int j)`, dtrace-utils' tst.argmap): -G records the map in the program,
/// and argN and args[N] are the translated arguments, typed as the
/// translation says, with no definition in the tracing script. The
/// provider's `__` is `-` in scripts (`my-map`).
#[test]
fn translated_arguments_are_mapped_from_the_program_g_built() {
    let dir = build_dir("argmap");
    std::fs::write(
        dir.join("prov.d"),
        "provider my__map {\n\tprobe place(int i, long j) : (long j, int i, int i, long j);\n};\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\n#include \"prov.h\"\nint main(void) {\n\tchar line[64];\n\t\
         while (fgets(line, sizeof line, stdin)) { MY__MAP_PLACE(10, 4); puts(\"placed\"); fflush(stdout); }\n\treturn 0;\n}\n",
    )
    .expect("write");
    let dtrace = util::DTRACE;
    sh(&dir, &format!("{dtrace} -h -s prov.d"));
    sh(&dir, "gcc -O2 -c main.c -o main.o");
    sh(&dir, &format!("{dtrace} -G -s prov.d -o prov.o main.o"));
    sh(&dir, "gcc -o main main.o prov.o");
    let mut child = Command::new(dir.join("main")).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("main");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let pid = child.id().to_string();
    let mut t = Tracer::spawn(&[
        "-q",
        "-n",
        READY,
        "-n",
        r#"my-map$target:::place { printf("%d %d %d %d / %d %d %d\n", arg0, arg1, arg2, arg3, args[0], args[1], sizeof(args[0])); exit(0); }"#,
        "-p",
        &pid,
    ]);
    t.wait_for("ready");
    writeln!(child.stdin.as_mut().expect("stdin"), "go").expect("write");
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("placed"));
    let out = t.finish();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains("4 10 10 4 / 4 10 8\n"), "{}", out.stdout);
    let listed = run(&["-lv", "-n", &format!("my-map{pid}:::place")]);
    let _ = child.kill();
    let _ = child.wait();
    let types: Vec<&str> =
        listed.stdout.lines().filter(|l| l.trim_start().starts_with("args[")).map(str::trim).collect();
    assert_eq!(types, ["args[0]: long", "args[1]: int", "args[2]: int", "args[3]: long"], "{}", listed.stdout);
}

/// A semaphore that is an ordinary zero-initialized variable (in .bss,
/// past its segment's file data: the kernel counts it all the same), and a
/// provider whose name has `__`, shown as `-` as in probe names.
#[test]
fn bss_semaphores_and_double_underscore_providers() {
    let dir = build_dir("bss");
    std::fs::write(
        dir.join("main.c"),
        "#define _SDT_HAS_SEMAPHORES 1\n#include <sys/sdt.h>\n#include <stdio.h>\n\
         unsigned short my__prov_ping_semaphore = 0;\n\
         int main(void) {\n\tchar line[16];\n\twhile (fgets(line, sizeof line, stdin)) {\n\t\t\
         if (my__prov_ping_semaphore) STAP_PROBE1(my__prov, ping, 7);\n\t\t\
         printf(\"%d\\n\", my__prov_ping_semaphore != 0); fflush(stdout);\n\t}\n\treturn 0;\n}\n",
    )
    .expect("write");
    sh(&dir, "gcc -O0 -o main main.c");
    let mut child = Command::new(dir.join("main")).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("main");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let pid = child.id().to_string();
    let mut ask = |child: &mut std::process::Child| {
        writeln!(child.stdin.as_mut().expect("stdin"), "go").expect("write");
        lines.next().and_then(Result::ok)
    };
    assert_eq!(ask(&mut child).as_deref(), Some("0"), "not traced: the semaphore is 0");
    let mut t = Tracer::spawn(&[
        "-q",
        "-n",
        READY,
        "-n",
        r#"my-prov$target:::ping { printf("%s %d\n", probeprov, arg0); exit(0); }"#,
        "-p",
        &pid,
    ]);
    t.wait_for("ready");
    assert_eq!(ask(&mut child).as_deref(), Some("1"), "traced: the kernel counts the semaphore");
    let out = t.finish();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains(&format!("my-prov{pid} 7\n")), "{}", out.stdout);
}

/// A provider glob without a pid (`sysw*:::`) names the USDT probes of
/// every process that has a matching provider, found system-wide as
/// DTrace's registered providers are; digits in a glob are the glob's
/// (`s*w<pid>` is one process, not pid <pid> of provider `s*w`).
#[test]
fn provider_globs_find_usdt_processes_system_wide() {
    let dir = build_dir("systemwide");
    std::fs::write(
        dir.join("main.c"),
        "#include <sys/sdt.h>\n#include <stdio.h>\n#include <stdlib.h>\n\
         int main(int argc, char **argv) {\n\tint me = atoi(argv[1]);\n\tchar line[16];\n\t\
         while (fgets(line, sizeof line, stdin)) {\n\t\tSTAP_PROBE1(sysw, ping, me);\n\t\t\
         printf(\"ok\\n\"); fflush(stdout);\n\t}\n\treturn 0;\n}\n",
    )
    .expect("write");
    sh(&dir, "gcc -O1 -o main main.c");
    let mut children: Vec<(std::process::Child, std::io::Lines<BufReader<std::process::ChildStdout>>)> = (1..=3)
        .map(|i| {
            let mut child = Command::new(dir.join("main"))
                .arg(i.to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("main");
            let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
            (child, lines)
        })
        .collect();
    let pids: Vec<u32> = children.iter().map(|(c, _)| c.id()).collect();
    // Each has run (and mapped its libraries) before dtrace looks.
    for (child, lines) in &mut children {
        writeln!(child.stdin.as_mut().expect("stdin"), "go").expect("write");
        assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ok"));
    }
    let listed = run(&["-ln", "sysw*:::ping"]);
    for pid in &pids {
        assert!(listed.stdout.contains(&format!("sysw{pid} ")), "{}", listed.stdout);
    }
    let second = format!("s*w{}:::ping", pids[1]);
    let clause = format!(r#"{second} {{ printf("second %d\n", arg0); }}"#);
    let mut t = Tracer::spawn(&[
        "-q",
        "-n",
        READY,
        "-n",
        r#"sysw*:::ping { printf("%s %d\n", probeprov, arg0); n++; } sysw*:::ping /n == 3/ { exit(0); }"#,
        "-n",
        &clause,
    ]);
    t.wait_for("ready");
    for (child, lines) in &mut children {
        writeln!(child.stdin.as_mut().expect("stdin"), "go").expect("write");
        assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ok"));
    }
    let out = t.finish();
    for (mut child, _) in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for (i, pid) in pids.iter().enumerate() {
        assert!(out.stdout.contains(&format!("sysw{pid} {}\n", i + 1)), "{}", out.stdout);
    }
    assert_eq!(out.stdout.matches("second ").collect::<Vec<_>>().len(), 1, "{}", out.stdout);
    assert!(out.stdout.contains("second 2\n"), "{}", out.stdout);
}

/// A program that fires `<provider>:ping` with a count: N times 40 ms apart
/// and exits when given N, else once per line of its input, answering "ok".
/// (Each test its own provider: a glob sees every process, other tests'.)
fn late_program(provider: &str) -> PathBuf {
    let dir = build_dir(provider);
    std::fs::write(
        dir.join("main.c"),
        "#include <sys/sdt.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n\
         int main(int argc, char **argv) {\n\tint n = 0;\n\tchar line[16];\n\t\
         if (argc > 1) {\n\t\tfor (int i = atoi(argv[1]); n < i; n++) {\n\t\t\tSTAP_PROBE1(PROVIDER, ping, n);\n\t\t\tusleep(40000);\n\t\t}\n\t\treturn 0;\n\t}\n\t\
         while (fgets(line, sizeof line, stdin)) {\n\t\tSTAP_PROBE1(PROVIDER, ping, n);\n\t\tn++;\n\t\t\
         printf(\"ok\\n\"); fflush(stdout);\n\t}\n\treturn 0;\n}\n",
    )
    .expect("write");
    sh(&dir, &format!("gcc -O1 -DPROVIDER={provider} -o main main.c"));
    dir.join("main")
}

/// A provider glob keeps matching after tracing began (DTrace's retained
/// enablings; with -Z it may match nothing at first): a process started
/// later gets its probes when it execs, and a -c command's probes, made
/// before it runs, fire once each.
#[test]
fn provider_globs_match_processes_started_later() {
    let prog = late_program("later");
    let mut t =
        Tracer::spawn(&["-Z", "-q", "-n", READY, "-n", r#"lat*:::ping { printf("%s %d\n", probeprov, arg0); }"#]);
    t.wait_for("ready");
    let mut child = Command::new(&prog).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("main");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let pid = child.id();
    let mut ping = |child: &mut std::process::Child| {
        writeln!(child.stdin.as_mut().expect("stdin"), "go").expect("write");
        assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ok"));
    };
    // The probes are attached within a moment of the exec (bounded here:
    // each try waits a second for the firing's line).
    let mut first = None;
    for _ in 0..10 {
        ping(&mut child);
        if let Ok(line) = t.next_line() {
            first = Some(line);
            break;
        }
    }
    let first = first.expect("the later process's probe never fired");
    let n: u32 = first.strip_prefix(&format!("later{pid} ")).and_then(|n| n.parse().ok()).expect(&first);
    ping(&mut child);
    assert_eq!(t.next_line().as_deref(), Ok(format!("later{pid} {}", n + 1).as_str()));
    drop(child.stdin.take());
    let _ = child.wait();
    let out = t.stop();
    assert_eq!(out.code(), 0, "{}", out.stderr);

    let cmd = format!("{} 5", prog.display());
    let out = run(&["-q", "-n", r#"late*:::ping { printf("%d\n", arg0); }"#, "-c", &cmd]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "0\n1\n2\n3\n4", "{}", out.stderr);
}

/// nusdtprobes bounds the probes of processes found later that are enabled
/// at once (said once on stderr), and a process's probes make room again
/// when it exits.
#[test]
fn nusdtprobes_bounds_later_probes_and_an_exit_makes_room() {
    let prog = late_program("bounded");
    let mut t = Tracer::spawn(&[
        "-Z",
        "-q",
        "-x",
        "nusdtprobes=1",
        "-n",
        READY,
        "-n",
        r#"bound*:::ping { printf("%s\n", probeprov); }"#,
    ]);
    t.wait_for("ready");
    let start = || {
        let mut child = Command::new(&prog).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("main");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        (child, lines)
    };
    let ping = |(child, lines): &mut (std::process::Child, std::io::Lines<BufReader<std::process::ChildStdout>>)| {
        writeln!(child.stdin.as_mut().expect("stdin"), "go").expect("write");
        assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ok"));
    };
    // Pings until dtrace prints a line (each try waits a second for it).
    let fired = |t: &mut Tracer, process: &mut (std::process::Child, _), tries: usize| -> Option<String> {
        (0..tries).find_map(|_| {
            ping(process);
            t.next_line().ok()
        })
    };
    let mut first = start();
    let first_pid = first.0.id();
    assert_eq!(fired(&mut t, &mut first, 10), Some(format!("bounded{first_pid}")));
    let mut second = start();
    assert_eq!(fired(&mut t, &mut second, 3), None, "a second process's probe is past nusdtprobes=1");
    drop(first.0.stdin.take());
    let _ = first.0.wait();
    let mut third = start();
    let third_pid = third.0.id();
    assert_eq!(fired(&mut t, &mut third, 10), Some(format!("bounded{third_pid}")), "the first's exit made room");
    for (mut child, _) in [second, third] {
        drop(child.stdin.take());
        let _ = child.wait();
    }
    let out = t.stop();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stderr.matches("more than nusdtprobes (1)").count(), 1, "{}", out.stderr);
}

/// A probe a program only tests (`*_ENABLED()`) and never fires still
/// exists, at its tests (dtrace-utils' usdt/tst.onlyenabled): listed in
/// the function that tests it, enabling it makes the test true, and it
/// fires nothing.
#[test]
fn a_probe_only_tested_is_enabled_without_firing() {
    let dir = build_dir("onlyenabled");
    std::fs::write(dir.join("prov.d"), "provider test_prov {\n\tprobe go();\n};\n").expect("write");
    std::fs::write(
        dir.join("test.c"),
        "#include <stdio.h>\n#include \"prov.h\"\nint main(void) {\n\tif (TEST_PROV_GO_ENABLED())\n\t\t\
         printf(\"enabled\\n\");\n\telse\n\t\tprintf(\"not enabled\\n\");\n\treturn 0;\n}\n",
    )
    .expect("write");
    let dtrace = env!("CARGO_BIN_EXE_dtrace");
    sh(
        &dir,
        &format!(
            "{dtrace} -h -s prov.d && gcc -O2 -c test.c && {dtrace} -G -s prov.d test.o && gcc -o test test.o prov.o"
        ),
    );
    let test = dir.join("test").to_string_lossy().into_owned();
    let plain = Command::new(&test).output().expect("test");
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "not enabled\n");
    let listed = run(&["-lP", "test_prov$target", "-c", &test]);
    let row: Vec<&str> =
        listed.stdout.lines().find(|l| l.ends_with(" go")).map(|l| l.split_whitespace().collect()).unwrap_or_default();
    assert_eq!(row.get(2..), Some(&["test", "main", "go"][..]), "{}", listed.stdout);
    let out = run(&["-n", r#"test_prov$target:::go { printf("fired\n"); }"#, "-c", &test]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains("enabled\n") && !out.stdout.contains("not enabled"), "{}", out.stdout);
    assert!(!out.stdout.contains("fired"), "{}", out.stdout);
}

/// A provider glob also matches the probes of a library a running process
/// loads later with dlopen() (a JVM's libjvm.so): the process is looked at
/// again once it maps the library's code, and its probes, with the
/// library's name as their module, fire.
#[test]
fn provider_globs_match_libraries_loaded_later() {
    let dir = build_dir("dlopen");
    std::fs::write(
        dir.join("plugin.c"),
        "#include <sys/sdt.h>\nvoid plugin_run(int n) { STAP_PROBE1(plugged, run, n); }\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("main.c"),
        "#include <dlfcn.h>\n#include <stdio.h>\n\
         #include <stdlib.h>\n#include <unistd.h>\n\
         int main(int argc, char **argv) {\n\tchar line[16];\n\tvoid (*run)(int) = 0;\n\tint n = 0;\n\t\
         if (argc > 2) {\n\t\trun = (void (*)(int))dlsym(dlopen(argv[1], RTLD_NOW), \"plugin_run\");\n\t\t\
         for (; n < atoi(argv[2]); n++) { run(n); usleep(20000); }\n\t\treturn 0;\n\t}\n\t\
         while (fgets(line, sizeof line, stdin)) {\n\t\tif (!run) {\n\t\t\tvoid *h = dlopen(argv[1], RTLD_NOW);\n\t\t\t\
         if (!h) { printf(\"%s\\n\", dlerror()); return 1; }\n\t\t\trun = (void (*)(int))dlsym(h, \"plugin_run\");\n\t\t}\n\t\t\
         run(n++);\n\t\tprintf(\"ok\\n\"); fflush(stdout);\n\t}\n\treturn 0;\n}\n",
    )
    .expect("write");
    sh(&dir, "gcc -O1 -shared -fPIC -o libplugin.so plugin.c && gcc -O1 -o main main.c -ldl");
    // The process runs before tracing starts and has no probes then.
    let mut child = Command::new(dir.join("main"))
        .arg(dir.join("libplugin.so"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("main");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let pid = child.id();
    let mut t = Tracer::spawn(&[
        "-Z",
        "-q",
        "-n",
        READY,
        "-n",
        r#"plug*:::run, plug*:::ping { printf("%s %s %s %d\n", probeprov, probemod, probefunc, arg0); }"#,
    ]);
    t.wait_for("ready");
    // A process that execs with probes of the glob, once its probe fires,
    // shows dtrace has looked at the processes running when it started:
    // the library is loaded after that look.
    let marker = late_program("plugmark");
    let mut marker = Command::new(&marker).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("marker");
    let mut marker_lines = BufReader::new(marker.stdout.take().expect("stdout")).lines();
    let marked = (0..10).any(|_| {
        writeln!(marker.stdin.as_mut().expect("stdin"), "go").expect("write");
        assert_eq!(marker_lines.next().and_then(Result::ok).as_deref(), Some("ok"));
        t.next_line().is_ok_and(|line| line.starts_with(&format!("plugmark{} ", marker.id())))
    });
    assert!(marked, "the marker process's probe never fired");
    drop(marker.stdin.take());
    let _ = marker.wait();
    let mut first = None;
    for _ in 0..10 {
        writeln!(child.stdin.as_mut().expect("stdin"), "go").expect("write");
        assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ok"));
        if let Ok(line) = t.next_line() {
            first = Some(line);
            break;
        }
    }
    let first = first.expect("the loaded library's probe never fired");
    let n: u32 = first
        .strip_prefix(&format!("plugged{pid} libplugin.so plugin_run "))
        .and_then(|n| n.parse().ok())
        .expect(&first);
    writeln!(child.stdin.as_mut().expect("stdin"), "go").expect("write");
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ok"));
    assert_eq!(t.next_line().as_deref(), Ok(format!("plugged{pid} libplugin.so plugin_run {}", n + 1).as_str()));
    drop(child.stdin.take());
    let _ = child.wait();
    let out = t.stop();
    assert_eq!(out.code(), 0, "{}", out.stderr);

    // Under -Z a provider the -c process has not loaded yet is waited for
    // (`dtrace -Z -n 'hotspot$target:::...' -c java`): its library's probes
    // fire once it is loaded, the last of 50 firings 20 ms apart included.
    let cmd = format!("{} {} 50", dir.join("main").display(), dir.join("libplugin.so").display());
    let out = run(&["-Z", "-q", "-n", r#"plugged$target:::run { printf("%d\n", arg0); }"#, "-c", &cmd]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let seen: Vec<u32> = out.stdout.split_whitespace().map(|n| n.parse().expect(n)).collect();
    assert_eq!(seen.last(), Some(&49), "{}{}", out.stdout, out.stderr);
    assert!(seen.windows(2).all(|w| w[1] == w[0] + 1), "{}", out.stdout);
}

#[test]
fn minus_g_names_its_output_as_dtrace_does_and_needs_no_providers() {
    // A script without providers links to an object that defines none
    // (illumos' tst.ELFGenerationOut); a script not named *.d gives d.out.
    let dir = build_dir("d-out");
    std::fs::write(dir.join("plain.d"), "BEGIN { exit(0); }\n").expect("write");
    std::fs::write(dir.join("script"), "BEGIN { exit(0); }\n").expect("write");
    let dtrace = std::fs::canonicalize(util::DTRACE).expect("dtrace path");
    let dtrace = dtrace.to_string_lossy();
    sh(&dir, &format!("{dtrace} -G -s plain.d && {dtrace} -G -s script && {dtrace} -h -s plain.d"));
    for (file, want_elf) in [("plain.o", true), ("d.out", true), ("plain.h", false)] {
        let bytes = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(bytes.starts_with(b"\x7fELF"), want_elf, "{file}");
    }
    sh(&dir, "gcc -x c -c -o main.o - <<'EOF'\n#include \"plain.h\"\nint main(void) { return 0; }\nEOF\ngcc -o main main.o plain.o && ./main");
}
