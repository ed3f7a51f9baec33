//! Tracepoint IDs from tracefs, which perf_event_open needs to attach to a
//! classic tracepoint. tracefs is often not mounted; then a child process
//! mounts it in a mount namespace of its own, reads the IDs and exits, so
//! nothing changes for the rest of the system.

use std::io::Read;

const MOUNTED: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
const PRIVATE_MOUNT: &str = "/sys/kernel/tracing";

/// The ID of each `category/name` tracepoint, or None where there is no such
/// tracepoint (or tracefs cannot be had at all).
pub(crate) fn tracepoint_ids(names: &[String]) -> Vec<Option<u64>> {
    for root in MOUNTED {
        if std::path::Path::new(root).join("events").is_dir() {
            return names.iter().map(|n| read_id(root, n)).collect();
        }
    }
    ids_from_private_mount(names).unwrap_or_else(|| vec![None; names.len()])
}

fn read_id(root: &str, name: &str) -> Option<u64> {
    std::fs::read_to_string(format!("{root}/events/{name}/id")).ok()?.trim().parse().ok()
}

fn ids_from_private_mount(names: &[String]) -> Option<Vec<Option<u64>>> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills the two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return None;
    }
    let [read_end, write_end] = fds;
    // SAFETY: dtrace is single-threaded here; the child only makes system
    // calls, reads small files and exits without returning.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        unsafe { libc::close(read_end) };
        unsafe { libc::close(write_end) };
        return None;
    }
    if pid == 0 {
        unsafe { libc::close(read_end) };
        let mut out = String::new();
        // SAFETY: plain system calls with valid C strings.
        let mounted = unsafe {
            libc::unshare(libc::CLONE_NEWNS) == 0
                && libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) == 0
                && libc::mount(
                    c"tracefs".as_ptr(),
                    c"/sys/kernel/tracing".as_ptr(),
                    c"tracefs".as_ptr(),
                    0,
                    std::ptr::null(),
                ) == 0
        };
        if mounted {
            for n in names {
                out.push_str(&read_id(PRIVATE_MOUNT, n).map_or("-".to_string(), |id| id.to_string()));
                out.push('\n');
            }
        }
        // SAFETY: writing our buffer to our pipe, then leaving without unwinding.
        unsafe {
            libc::write(write_end, out.as_ptr().cast(), out.len());
            libc::_exit(0);
        }
    }
    unsafe { libc::close(write_end) };
    // SAFETY: the read end is ours; File takes it over.
    let mut pipe = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(read_end) };
    let mut text = String::new();
    let _ = pipe.read_to_string(&mut text);
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let ids: Vec<Option<u64>> = text.lines().map(|l| l.parse().ok()).collect();
    (ids.len() == names.len()).then_some(ids)
}
