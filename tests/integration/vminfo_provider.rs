//! The vminfo provider against python3 workloads whose paging is known:
//! a forked child writing to pages its parent filled (copy-on-write), a
//! file mapped after its pages were dropped and read page by page without
//! readahead (major faults that page in), and a file read in a memory
//! cgroup too small for it (the page scanner finds and frees pages).

use super::*;

/// Runs python3 `code` under `dtrace -c` with `clauses`; its output.
fn traced_python(clauses: &str, code: &str) -> util::Output {
    let dir = util::scratch_dir(&format!("dtrace-vminfo-{}", code.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("workload.py");
    std::fs::write(&script, code).unwrap();
    // Debian's interpreter itself, not a wrapper script (pyenv's shims run helpers).
    let command = format!("/usr/bin/python3 {}", script.display());
    let out = run(&["-q", "-n", clauses, "-c", &command]);
    let _ = std::fs::remove_dir_all(&dir);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    out
}

fn value(stdout: &str, label: &str) -> i64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{label} ")).and_then(|v| v.trim().parse().ok()))
        .unwrap_or_else(|| panic!("no {label} in:\n{stdout}"))
}

const PAGES: i64 = 2000;

#[test]
fn a_forked_child_writing_its_parents_pages_takes_copy_on_write_faults() {
    let out = traced_python(
        r#"vminfo:::cow_fault /ppid == $target/ { @cow = sum(arg0); }
        vminfo:::as_fault /pid == $target/ { @as = count(); }
        vminfo:::cow_fault /ppid == $target/ { @cpu = sum(((cpu_t *)arg2)->cpu_id != cpu); }
        END { printa("cow %@d\n", @cow); printa("as %@d\n", @as); printa("cpu %@d\n", @cpu); }"#,
        &format!(
            "import os\nb = bytearray({PAGES} * 4096)\nfor i in range(0, len(b), 4096): b[i] = 1\n\
             pid = os.fork()\nif pid == 0:\n    for i in range(0, len(b), 4096): b[i] = 2\n    os._exit(0)\nos.waitpid(pid, 0)\n"
        ),
    );
    // Each page the child writes is its parent's until the fault copies it.
    assert!(value(&out.stdout, "cow") >= PAGES, "{}", out.stdout);
    // The parent's first touches of the fresh buffer.
    assert!(value(&out.stdout, "as") >= PAGES, "{}", out.stdout);
    assert_eq!(value(&out.stdout, "cpu"), 0, "{}", out.stdout);
}

#[test]
fn pages_dropped_and_mapped_without_readahead_are_major_faults_that_page_in() {
    const FILE_PAGES: i64 = 64;
    let path = format!("/var/tmp/dtrace-vminfo-maj-{}", std::process::id());
    std::fs::write(&path, vec![7_u8; FILE_PAGES as usize * 4096]).unwrap();
    let out = traced_python(
        r#"syscall::lseek:entry /pid == $target && arg1 == 12345/ { self->reading = 1; }
        syscall::lseek:entry /pid == $target && arg1 == 54321/ { self->reading = 0; }
        vminfo:::maj_fault /self->reading/ { @maj = sum(arg0); }
        vminfo:::pgpgin /self->reading/ { @pgpgin = sum(arg0); }
        vminfo:::pgin /self->reading/ { @pgin = sum(arg0); }
        END { printa("maj %@d\n", @maj); printa("pgpgin %@d\n", @pgpgin); printa("pgin %@d\n", @pgin); }"#,
        &format!(
            "import mmap, os\nfd = os.open('{path}', os.O_RDONLY)\nos.fsync(fd)\n\
             os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n\
             m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)\nm.madvise(mmap.MADV_RANDOM)\n\
             os.lseek(fd, 12345, 0)\nassert sum(m[i] for i in range(0, len(m), 4096)) == 7 * {FILE_PAGES}\n\
             os.lseek(fd, 54321, 0)\n"
        ),
    );
    let _ = std::fs::remove_file(&path);
    // Without readahead each page is read by its own fault.
    assert_eq!(value(&out.stdout, "maj"), FILE_PAGES, "{}", out.stdout);
    assert!(value(&out.stdout, "pgpgin") >= FILE_PAGES, "{}", out.stdout);
    assert!(value(&out.stdout, "pgin") >= 1, "{}", out.stdout);
}

/// A memory cgroup limited to `limit` bytes, removed when dropped: the
/// cgroup v1 memory controller where it is mounted, else cgroup v2.
struct MemoryCgroup {
    dir: std::path::PathBuf,
}

impl MemoryCgroup {
    fn new(limit: u64) -> MemoryCgroup {
        let name = format!("dtrace-vminfo-{}", std::process::id());
        let v1 = std::path::Path::new("/sys/fs/cgroup/memory");
        let (dir, limit_file) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(&name), "memory.limit_in_bytes")
        } else {
            let root = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
                .iter()
                .map(std::path::Path::new)
                .find(|p| std::fs::read_to_string(p.join("cgroup.controllers")).is_ok_and(|c| c.contains("memory")))
                .expect("a memory cgroup controller");
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+memory");
            (root.join(&name), "memory.max")
        };
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(limit_file), limit.to_string()).unwrap();
        MemoryCgroup { dir }
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn a_file_read_in_a_small_memory_cgroup_makes_the_scanner_scan_and_free() {
    let cgroup = MemoryCgroup::new(16 << 20);
    let path = format!("/var/tmp/dtrace-vminfo-scan-{}", std::process::id());
    std::fs::write(&path, vec![1_u8; 96 << 20]).unwrap();
    let out = traced_python(
        r#"vminfo:::scan /pid == $target/ { @scan = sum(arg0); } vminfo:::dfree /pid == $target/ { @dfree = sum(arg0); }
        vminfo:::fsfree /pid == $target/ { @fsfree = sum(arg0); } vminfo:::anonfree /pid == $target/ { @anonfree = sum(arg0); }
        END { printa("scan %@d\n", @scan); printa("dfree %@d\n", @dfree); printa("fsfree %@d\n", @fsfree);
              printa("anonfree %@d\n", @anonfree); }"#,
        &format!(
            "import os\nopen('{}/cgroup.procs', 'w').write(str(os.getpid()))\n\
             fd = os.open('{path}', os.O_RDONLY)\nos.fsync(fd)\nos.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n\
             while os.read(fd, 1 << 20): pass\n",
            cgroup.dir.display()
        ),
    );
    let _ = std::fs::remove_file(&path);
    let (scan, dfree, fsfree) = (value(&out.stdout, "scan"), value(&out.stdout, "dfree"), value(&out.stdout, "fsfree"));
    // 96 MiB through 16 MiB: the reading thread's own reclaim (a memory
    // cgroup's limit is kept by the thread that charges it) frees most of it.
    assert!(dfree >= (64 << 20) / 4096, "{}", out.stdout);
    assert!(scan >= dfree, "{}", out.stdout);
    let anonfree =
        out.stdout.lines().find_map(|l| l.strip_prefix("anonfree ")).map_or(0, |v| v.trim().parse().unwrap());
    assert_eq!(fsfree + anonfree, dfree, "{}", out.stdout);
}

#[test]
fn a_faulting_copyin_fires_no_fault_probe_inside_the_clause() {
    // copyinstr() of an unmapped address faults with page faults disabled:
    // the kernel does not service it, and as_fault must not fire in the
    // middle of the clause (its firing took over the clause's context, and
    // the error named as_fault).
    let out = crate::util::run(&[
        "-qn",
        r#"syscall::openat:entry /pid == $target/ { printf("%s\n", copyinstr(arg1 + 0x100000000)); }
           vminfo:::as_fault /pid == $target && arg0 == 0/ { @ = count(); }"#,
        "-c",
        "cat /etc/hostname",
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let errors: Vec<&str> = out.stderr.lines().filter(|l| l.contains("error on enabled probe")).collect();
    assert!(!errors.is_empty(), "{}", out.stderr);
    assert!(errors.iter().all(|l| l.contains("syscall:vmlinux:openat:entry")), "{}", out.stderr);
}
