//! `dtrace -V`, and the Debian package: `cargo deb` packs the dtrace under
//! test (no rebuild: a second or two), the package holds the binary, the man pages and the D
//! library, and what it installs runs and shows its pages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::man_pages::{pages, render};
use crate::util::{run, scratch_dir, DTRACE};

/// What `dtrace -V` prints: illumos' line, exactly, as scripts and test
/// suites parse it (Oracle's says "Oracle D 2.0").
fn version_line() -> String {
    "dtrace: Sun D 1.13\n".to_string()
}

#[test]
fn version_is_printed_in_illumos_form() {
    let out = run(&["-V"]);
    assert_eq!((out.code(), out.stdout.as_str(), out.stderr.as_str()), (0, version_line().as_str(), ""));
}

fn checked(command: &mut Command) -> Output {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(out.status.success(), "{command:?}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    out
}

/// Packs the binary under test into a package in `dir`; returns its path.
/// cargo-deb takes target/release/dtrace from the target directory, so the
/// binary (of whatever profile) is copied into a scratch one there.
fn build_package(dir: &Path) -> PathBuf {
    let target = dir.join("target");
    std::fs::create_dir_all(target.join("release")).expect("mkdir");
    std::fs::copy(DTRACE, target.join("release/dtrace")).expect("copy dtrace");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let has_cargo_deb = Command::new(&cargo).args(["deb", "--version"]).output().is_ok_and(|o| o.status.success());
    assert!(has_cargo_deb, "cargo-deb is missing: run scripts/install-deps.sh");
    checked(
        Command::new(&cargo)
            .args(["deb", "--no-build", "--fast", "--output"])
            .arg(dir)
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(env!("CARGO_MANIFEST_DIR")),
    );
    let mut debs = std::fs::read_dir(dir).expect("output dir").map(|e| e.expect("entry").path());
    debs.find(|p| p.extension().is_some_and(|e| e == "deb")).expect("a .deb in the output directory")
}

#[test]
fn debian_package_installs_a_working_dtrace() {
    let scratch = scratch_dir("dtrace-test-deb");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("mkdir");
    let deb = build_package(&scratch);

    let listing = String::from_utf8(checked(Command::new("dpkg-deb").arg("-c").arg(&deb)).stdout).expect("utf-8");
    let files: Vec<&str> = listing.lines().filter_map(|l| l.split_whitespace().last()).collect();
    let mut wanted = vec![
        "./usr/sbin/dtrace".to_string(),
        "./usr/lib/dtrace/procfs.d".to_string(),
        "./usr/lib/dtrace/io.d".to_string(),
        "./usr/lib/dtrace/ip.d".to_string(),
        "./usr/lib/dtrace/errno.d".to_string(),
        "./usr/lib/dtrace/signal.d".to_string(),
    ];
    for page in pages() {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let section = name.rsplit('.').next().unwrap().to_string();
        wanted.push(format!("./usr/share/man/man{section}/{name}.gz"));
    }
    for file in &wanted {
        assert!(files.contains(&file.as_str()), "{file} not in the package:\n{listing}");
    }
    // libbpf is linked in; libelf and zlib are not (libgcc-s1 comes with libc6).
    let field = |name: &str| {
        String::from_utf8(checked(Command::new("dpkg-deb").arg("-f").arg(&deb).arg(name)).stdout).expect("utf-8")
    };
    let depends = field("Depends");
    for package in ["libc6", "libelf1", "zlib1g"] {
        assert!(depends.contains(package), "Depends: {depends}");
    }
    assert!(!depends.contains("libbpf"), "Depends: {depends}");
    // systemtap-sdt-dev's dtrace and dtrace.1.gz are diverted, not in conflict.
    assert!(field("Conflicts").trim().is_empty(), "Conflicts: {}", field("Conflicts"));
    assert!(field("Recommends").contains("systemtap-sdt-dev"));
    assert!(listing.contains("./usr/bin/dtrace -> ../sbin/dtrace\n"), "{listing}");
    // lintian finds nothing to warn about.
    let lintian = Command::new("lintian").arg(&deb).output().expect("lintian (scripts/install-deps.sh)");
    let tags = String::from_utf8_lossy(&lintian.stdout);
    assert!(!tags.lines().any(|l| l.starts_with("E:") || l.starts_with("W:")), "lintian:\n{tags}");

    // Installed into a scratch root, not onto the machine.
    let root = scratch.join("root");
    checked(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root));
    let installed = root.join("usr/sbin/dtrace");
    let version = checked(Command::new(&installed).arg("-V"));
    assert_eq!(String::from_utf8_lossy(&version.stdout), version_line());
    let one_liner = checked(Command::new(&installed).args(["-qn", r#"BEGIN { printf("ok\n"); exit(0); }"#]));
    assert_eq!(String::from_utf8_lossy(&one_liner.stdout), "ok\n\n");
    let manpath = root.join("usr/share/man");
    assert!(render(&["dtrace"], Some(&manpath)).contains("dtrace - dynamic tracing compiler"));
    assert!(render(&["7", "dtrace-syscall"], Some(&manpath)).contains("dtrace-syscall - the syscall provider"));

    std::fs::remove_dir_all(&scratch).expect("clean up");
}

/// Installs `deb` into the scratch dpkg database at `root`.
fn dpkg(root: &Path, args: &[&str]) -> Output {
    let mut command = Command::new("dpkg");
    command.arg(format!("--root={}", root.display())).args(["--force-script-chrootless", "--force-depends"]).args(args);
    checked(&mut command)
}

/// With systemtap-sdt-dev installed, the package takes over `dtrace` and
/// its man page (diverted to dtrace.systemtap) and gives them back when it
/// is removed: done by real dpkg into a scratch root, not onto the machine.
#[test]
fn package_diverts_systemtaps_dtrace_and_gives_it_back() {
    let scratch = scratch_dir("dtrace-test-divert");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("mkdir");
    let deb = build_package(&scratch);
    checked(Command::new("apt-get").args(["download", "-q", "systemtap-sdt-dev"]).current_dir(&scratch));
    let mut debs = std::fs::read_dir(&scratch).expect("dir").map(|e| e.expect("entry").path());
    let stap = debs.find(|p| p.to_string_lossy().contains("systemtap-sdt-dev")).expect("systemtap-sdt-dev's .deb");
    let root = scratch.join("root");
    let admin = root.join("var/lib/dpkg");
    for dir in ["info", "updates", "triggers"] {
        std::fs::create_dir_all(admin.join(dir)).expect("mkdir");
    }
    for file in ["status", "diversions"] {
        std::fs::write(admin.join(file), "").expect("write");
    }
    dpkg(&root, &["-i", &stap.to_string_lossy()]);
    let is_systemtaps = |path: &str| std::fs::read(root.join(path)).is_ok_and(|b| b.starts_with(b"#!/usr/bin/python3"));
    assert!(is_systemtaps("usr/bin/dtrace"));
    dpkg(&root, &["-i", &deb.to_string_lossy()]);
    assert_eq!(std::fs::read_link(root.join("usr/bin/dtrace")).expect("a symlink"), Path::new("../sbin/dtrace"));
    assert!(is_systemtaps("usr/bin/dtrace.systemtap"));
    assert!(root.join("usr/share/man/man1/dtrace.systemtap.1.gz").exists());
    let version = checked(Command::new(root.join("usr/bin/dtrace")).arg("-V"));
    assert_eq!(String::from_utf8_lossy(&version.stdout), version_line());
    dpkg(&root, &["-r", "dtrace"]);
    assert!(is_systemtaps("usr/bin/dtrace"), "removal gives systemtap its dtrace back");
    assert!(!root.join("usr/bin/dtrace.systemtap").exists());
    assert!(root.join("usr/share/man/man1/dtrace.1.gz").exists());
    std::fs::remove_dir_all(&scratch).expect("clean up");
}
