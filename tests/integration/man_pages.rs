//! The man pages in man/: each renders with man(1), is clean under mandoc's
//! lint, has the sections its kind needs, and every example in it (each
//! `.EX`/`.EE` block holds one command) runs and works.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::{Tracer, Workload, DTRACE};

/// Every page in man/, sorted: dtrace.1 and the provider pages.
pub(crate) fn pages() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("man/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("1" | "7")))
        .collect();
    pages.sort();
    assert!(pages.len() >= 5, "pages in man/: {pages:?}");
    pages
}

fn name(page: &Path) -> String {
    page.file_name().unwrap().to_string_lossy().into_owned()
}

/// Renders with man(1) the way a user reads it; returns the text.
pub(crate) fn render(man_args: &[&str], manpath: Option<&Path>) -> String {
    let mut command = Command::new("man");
    command.args(man_args).env("MANPAGER", "cat").env("MANWIDTH", "80").env("LC_ALL", "C.UTF-8");
    if let Some(path) = manpath {
        command.env("MANPATH", path);
    }
    let out = command.output().expect("man (apt-get install man-db)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "man {man_args:?}: {}: {stderr}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The example commands of a page, as a shell reads them: the text of each
/// `.EX`/`.EE` block with roff's escapes for '-' and '\' undone.
fn examples(source: &str) -> Vec<String> {
    let mut examples = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in source.lines() {
        match (line, current.as_mut()) {
            (".EX", None) => current = Some(Vec::new()),
            (".EE", Some(lines)) => {
                examples.push(lines.join("\n").replace("\\-", "-").replace("\\e", "\\"));
                current = None;
            }
            (_, Some(lines)) => lines.push(line),
            _ => {}
        }
    }
    assert!(current.is_none(), "an .EX block without .EE");
    examples
}

fn sections(source: &str) -> Vec<&str> {
    source.lines().filter_map(|l| l.strip_prefix(".SH ")).map(|s| s.trim_matches('"')).collect()
}

#[test]
fn every_page_renders_and_is_lint_clean() {
    for page in pages() {
        let path = page.to_str().unwrap();
        let text = render(&["-l", path], None);
        assert!(text.contains("NAME") && text.contains("EXAMPLES"), "{path} rendered as:\n{text}");
        let lint = Command::new("mandoc").args(["-Tlint", "-Wwarning", path]).output().expect("mandoc");
        let report = String::from_utf8_lossy(&lint.stdout).into_owned() + &String::from_utf8_lossy(&lint.stderr);
        assert!(lint.status.success() && report.is_empty(), "mandoc -Tlint -Wwarning {path}:\n{report}");
    }
}

#[test]
fn pages_have_their_sections_and_see_also_names_existing_pages() {
    let names: Vec<String> = pages().iter().map(|p| name(p)).collect();
    for page in pages() {
        let source = std::fs::read_to_string(&page).expect("read page");
        let wanted: &[&str] = if name(&page) == "dtrace.1" {
            &[
                "NAME",
                "SYNOPSIS",
                "DESCRIPTION",
                "OPTIONS",
                "OPERANDS",
                "EXIT STATUS",
                "ENVIRONMENT",
                "FILES",
                "EXAMPLES",
                "SEE ALSO",
            ]
        } else {
            &["NAME", "DESCRIPTION", "PROBES", "ARGUMENTS", "LINUX MAPPING", "STABILITY", "EXAMPLES", "SEE ALSO"]
        };
        let have = sections(&source);
        for s in wanted {
            assert!(have.contains(s), "{} lacks {s}: {have:?}", name(&page));
        }
        // `.BR dtrace\-syscall (7)` must name a page of ours.
        for line in source.lines().filter(|l| l.starts_with(".BR dtrace")) {
            let mut words = line[4..].split_whitespace();
            let (Some(page_name), Some(section)) = (words.next(), words.next()) else { continue };
            if !section.starts_with('(') {
                continue;
            }
            let file = format!("{}.{}", page_name.replace("\\-", "-"), section.trim_matches(|c| "(),.".contains(c)));
            assert!(names.contains(&file), "{} refers to {file}, which is not in man/", name(&page));
        }
    }
}

/// Whether this kernel can enable fbt probes (kprobes, or trampolines).
fn fbt_can_run() -> bool {
    let out =
        Command::new(DTRACE).args(["-qn", "fbt::vfs_read:entry", "-n", "BEGIN { exit(0); }"]).output().expect("dtrace");
    out.status.success()
}

/// A clause added to each example so the test knows its probes are enabled
/// (BEGIN fires after all of them are) before it drives events.
const READY: &str = r#"-n 'BEGIN { printf("ready\n"); }'"#;

/// Events for the examples to see: opens (one failing), reads and writes,
/// an exec, a clock_nanosleep, TLB shootdowns across CPUs, block I/O, and
/// IPv4 and IPv6 packets over loopback.
fn drive_events() {
    for family in ["-4", "-6"] {
        let to = if family == "-4" { "127.0.0.1" } else { "::1" };
        let _ = Command::new("ping").args([family, "-q", "-c", "2", "-i", "0.1", to]).output().expect("ping");
    }
    for args in [&["/etc/hostname"][..], &["/nonexistent"]] {
        let _ = Command::new("cat").args(args).output().expect("cat");
    }
    Command::new("sleep").arg("0.01").status().expect("sleep");
    Workload::spawn(&["xcalls", "20"]).go();
    // Block I/O for dtrace-io(7): direct writes and reads on the root disk.
    let file = format!("/var/tmp/dtrace-man-io-{}", std::process::id());
    let dd = format!(
        "dd if=/dev/zero of={file} bs=64k count=4 oflag=direct && dd if={file} of=/dev/null bs=64k iflag=direct"
    );
    let _ = Command::new("sh").args(["-c", &dd]).stderr(std::process::Stdio::null()).status().expect("dd");
    let _ = std::fs::remove_file(file);
    // TCP and UDP over loopback for dtrace-tcp(7) and dtrace-udp(7): a
    // connection that carries data, one refused, and datagrams.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let to = listener.local_addr().expect("address");
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("accept");
        let _ = std::io::copy(&mut conn, &mut std::io::sink());
    });
    let mut client = std::net::TcpStream::connect(to).expect("connect");
    std::io::Write::write_all(&mut client, b"hello").expect("write");
    drop(client);
    server.join().expect("server");
    assert!(std::net::TcpStream::connect(to).is_err(), "nothing listens on {to} now");
    let inbox = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    let outbox = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    outbox.send_to(b"hello", inbox.local_addr().expect("address")).expect("send");
}

/// How long the examples that trace until interrupted run before SIGINT.
const INTERRUPT_AFTER: Duration = Duration::from_secs(6);

struct Example {
    page: String,
    command: String,
    tracer: Tracer,
    /// Ends by itself (the example calls exit()); otherwise it is interrupted.
    exits: bool,
}

/// Runs every example of every page at once, as root, with the dtrace
/// under test first on PATH: each must exit with status 0 (the ones that
/// trace until interrupted, on SIGINT), print something, and write nothing
/// to standard error but DTrace's "matched" lines and the faults an example
/// expects.
#[test]
fn every_example_runs() {
    let bin_dir = Path::new(DTRACE).parent().expect("binary dir");
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut running = Vec::new();
    for page in pages() {
        let source = std::fs::read_to_string(&page).expect("read page");
        let commands = examples(&source);
        assert!(!commands.is_empty(), "{} has no examples", name(&page));
        for command in commands {
            assert!(command.starts_with("dtrace -"), "{}: example is not a dtrace command: {command}", name(&page));
            // fbt needs kprobes or BPF trampolines, which some kernels lack
            // (the guests of tests/kernel-matrix run fbt): there the example
            // is compiled against the running kernel's types, not run.
            if command.contains("fbt:") && !fbt_can_run() {
                let out = Command::new("sh")
                    .args(["-c", &format!("exec {command} -e")])
                    .env("PATH", &path)
                    .output()
                    .expect("sh");
                let stderr = String::from_utf8_lossy(&out.stderr);
                let only_matched =
                    stderr.lines().all(|l| l.starts_with("dtrace: description '") && l.contains(" matched "));
                assert!(out.status.success() && only_matched, "{} example\n{command}\n-e: {stderr}", name(&page));
                continue;
            }
            let exits = command.contains("exit(");
            let mut shell = Command::new("sh");
            shell.args(["-c", &format!("exec {command} {READY}")]).env("PATH", &path);
            running.push(Example { page: name(&page), command, tracer: Tracer::spawn_command(shell), exits });
        }
    }
    // An example that exits in BEGIN may end before the added clause runs.
    for ex in &mut running {
        ex.tracer.wait_until("ready");
    }
    let ready = Instant::now();
    for _ in 0..3 {
        drive_events();
    }
    // The examples that end by themselves first; those that trace until
    // interrupted run long enough for their periodic clauses (tick-5s) to fire.
    running.sort_by_key(|ex| !ex.exits);
    for mut ex in running {
        let out = if ex.exits {
            ex.tracer.finish()
        } else {
            std::thread::sleep(INTERRUPT_AFTER.saturating_sub(ready.elapsed()));
            ex.tracer.stop()
        };
        let what = format!(
            "{} example\n{}\n{:?}\nstdout:\n{}\nstderr:\n{}",
            ex.page, ex.command, out.status, out.stdout, out.stderr
        );
        out.assert_no_panic();
        assert_eq!(out.code(), 0, "{what}");
        let printed = out.stdout.lines().any(|l| !l.trim().is_empty() && !l.ends_with("ready"));
        assert!(printed, "printed nothing: {what}");
        // copyinstr() faults on strings in pages not yet touched (a new
        // process's first opens: dtrace-syscall(7)), but not on the file cat opens.
        let reads_paths = ex.command.contains("copyinstr(") && ex.command.contains("syscall::");
        if reads_paths {
            assert!(out.stdout.contains("/etc/hostname"), "did not see cat open /etc/hostname: {what}");
        }
        let catches_faults = ex.command.contains("ERROR");
        // A -c command's end is reported, as dtrace(1) reports it.
        let runs_command = ex.command.contains(" -c ");
        for line in out.stderr.lines() {
            let fault = line.starts_with("dtrace: error on enabled probe ID");
            // A busy machine (the rest of the suite) may fill an
            // aggregation keyed by pid: DTrace reports the drops so.
            let drops = line.starts_with("dtrace: ")
                && (line.contains(" aggregation drops on CPU ") || line.contains(" aggregation drop on CPU "));
            // Probes listed for Solaris that Linux cannot fire say so.
            let silent = line.starts_with("dtrace: ") && line.contains(" will not fire");
            let expected = (line.starts_with("dtrace: description '") && line.contains(" matched "))
                || silent
                || drops
                || (catches_faults && fault)
                || (reads_paths && fault && line.contains("invalid address"))
                || (runs_command && line.starts_with("dtrace: pid ") && line.ends_with(" has exited"));
            assert!(expected, "unexpected error output: {what}");
        }
    }
}
