//! The lockstat provider on kernel locks the test contends itself: four
//! threads writing to one pipe (its mutex: adaptive-spin and
//! adaptive-block) and four writing to one tmpfs file (its inode's rwsem:
//! rw-block). The script learns each lock's address from the kernel
//! structures of the descriptors the test writes to, so a count is of the
//! right lock, not of any lock.

use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use super::*;

const WRITERS: usize = 4;
const CHUNK: usize = 64 * 1024;

fn value(stdout: &str, label: &str) -> i64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{label} ")).and_then(|v| v.trim().parse().ok()))
        .unwrap_or_else(|| panic!("no {label} in:\n{stdout}"))
}

#[test]
fn a_contended_pipe_mutex_and_file_rwsem_show_their_waits() {
    let mut fds = [0; 2];
    // Close-on-exec: dtrace must not hold the write end open (the reader waits for EOF).
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let (rfd, wfd) = (fds[0], fds[1]);
    let path = format!("/dev/shm/dtrace-lockstat-{}", std::process::id());
    let file = std::fs::OpenOptions::new().create(true).truncate(true).read(true).write(true).open(&path).unwrap();
    let ffd = file.as_raw_fd();
    let script = format!(
        r#"
syscall::write:entry /pid == {pid} && arg0 == {wfd} && !pipe/ {{
	pipe = (uint64_t)&((struct pipe_inode_info *)curthread->files->fdt->fd[arg0]->private_data)->mutex;
}}
syscall::pwrite64:entry /pid == {pid} && arg0 == {ffd} && !file/ {{
	file = (uint64_t)&curthread->files->fdt->fd[arg0]->f_inode->i_rwsem;
}}
lockstat:::adaptive-spin, lockstat:::adaptive-block /pipe && arg0 == pipe/ {{
	@n["pipe"] = count();
	@bad["pipe"] = sum(arg1 == 0 || arg1 > 10000000000 || args[0] != (struct mutex *)pipe || pid != {pid});
	@where[stack(12)] = count();
}}
lockstat:::adaptive-spin, lockstat:::adaptive-block /pipe && arg0 == pipe && !said/ {{
	said = 1;
	printf("pipe contended\n");
}}
lockstat:::rw-block /file && arg0 == file/ {{
	@n["file"] = count();
	@bad["file"] = sum(arg1 == 0 || arg1 > 10000000000 || args[2] != RW_WRITER || pid != {pid});
	@held["file"] = sum(args[3] != 0);
}}
END {{
	printa("n %s %@d\n", @n); printa("bad %s %@d\n", @bad); printa("held %s %@d\n", @held);
	printa(@where);
}}
"#,
        pid = std::process::id()
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut buf = vec![0_u8; CHUNK];
            while unsafe { libc::read(rfd, buf.as_mut_ptr().cast(), CHUNK) } > 0 {}
        });
        for w in 0..WRITERS {
            let file = &file;
            s.spawn(move || {
                let buf = vec![2_u8; CHUNK];
                for i in 0..2000 {
                    file.write_all_at(&buf, ((i * WRITERS + w) % 256 * CHUNK) as u64).unwrap();
                }
            });
        }
        // Rounds of pipe writers until their mutex has been waited for (a
        // machine busy with other tests may not run two at once every time).
        for _round in 0..10 {
            let pipe_writers: Vec<_> = (0..WRITERS)
                .map(|_| {
                    s.spawn(move || {
                        let buf = vec![1_u8; CHUNK];
                        for _ in 0..2000 {
                            assert_eq!(unsafe { libc::write(wfd, buf.as_ptr().cast(), CHUNK) }, CHUNK as isize);
                        }
                    })
                })
                .collect();
            for w in pipe_writers {
                w.join().unwrap();
            }
            if std::iter::from_fn(|| t.next_line().ok()).any(|line| line == "pipe contended") {
                break;
            }
        }
        unsafe { libc::close(wfd) };
    });
    unsafe { libc::close(rfd) };
    let _ = std::fs::remove_file(&path);
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for lock in ["pipe", "file"] {
        assert!(value(&out.stdout, &format!("n {lock}")) > 0, "{}", out.stdout);
        assert_eq!(value(&out.stdout, &format!("bad {lock}")), 0, "{}", out.stdout);
    }
    // Writers wait for a writer (the rwsem is only ever taken to write;
    // the lock may be let go between the failed try and the tracepoint).
    assert!(value(&out.stdout, "held file") > 0, "{}", out.stdout);
    // The waits are where the pipe's mutex is taken.
    assert!(out.stdout.contains("pipe_write") || out.stdout.contains("pipe_read"), "{}", out.stdout);
}

#[test]
fn hold_event_probes_say_why_they_never_fire() {
    let out =
        run(&["-qn", "lockstat:::adaptive-acquire, lockstat:::spin-release { @ = count(); } tick-1ms { exit(0); }"]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    // Probes that never fire for one reason share its line.
    assert!(
        out.stderr
            .contains("lockstat:::adaptive-acquire, lockstat:::spin-release will not fire: Linux has no tracepoint"),
        "{}",
        out.stderr
    );
}

#[test]
fn spin_probes_name_their_lock_by_the_kernels_typedef() {
    // As dtrace-utils' lockstat/tst.lv-spin-*: args[0] is a spinlock_t *,
    // whose members a clause reads.
    let out = run(&["-lvn", "lockstat:::spin-spin"]);
    out.assert_no_panic();
    assert!(out.stdout.contains("args[0]: spinlock_t *"), "{}", out.stdout);
    let out = run(&["-en", "lockstat:::spin-spin { trace(args[0]->rlock.raw_lock.val.counter); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
}
