//! tracefs: tracepoint IDs and formats, the list of tracepoints, the list
//! of traceable kernel functions. tracefs is often not mounted; then dtrace
//! makes a detached mount of its own (fsopen/fsmount, Linux 5.2) that no
//! other process sees and that goes with the process, and reads through its
//! descriptor: nothing changes for the rest of the system.

use std::ffi::CString;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::OnceLock;

const MOUNTED: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

enum Root {
    Mounted(PathBuf),
    Detached(OwnedFd),
}

/// tracefs, mounted or made once; why not where the kernel or our
/// privileges give none.
fn root() -> Result<&'static Root, &'static str> {
    static ROOT: OnceLock<Result<Root, String>> = OnceLock::new();
    ROOT.get_or_init(find_root).as_ref().map_err(String::as_str)
}

fn find_root() -> Result<Root, String> {
    for dir in MOUNTED {
        let dir = PathBuf::from(dir);
        if dir.join("events").is_dir() {
            return Ok(Root::Mounted(dir));
        }
    }
    detached_mount().map(Root::Detached).map_err(|e| format!("tracefs is not mounted and cannot be mounted: {e}"))
}

fn detached_mount() -> std::io::Result<OwnedFd> {
    const FSOPEN_CLOEXEC: libc::c_ulong = 1;
    const FSCONFIG_CMD_CREATE: libc::c_ulong = 6;
    const FSMOUNT_CLOEXEC: libc::c_ulong = 1;
    let check = |r: libc::c_long| {
        if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            // SAFETY: the kernel just returned this descriptor to us.
            Ok(unsafe { OwnedFd::from_raw_fd(r as i32) })
        }
    };
    // SAFETY: plain system calls with a valid C string and null pointers
    // where the calls take none.
    let context = check(unsafe { libc::syscall(libc::SYS_fsopen, c"tracefs".as_ptr(), FSOPEN_CLOEXEC) })?;
    let created = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            context.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    if created < 0 {
        return Err(std::io::Error::last_os_error());
    }
    check(unsafe { libc::syscall(libc::SYS_fsmount, context.as_raw_fd(), FSMOUNT_CLOEXEC, 0) })
}

/// The text of tracefs file `path` (relative to its root).
pub(crate) fn read(path: &str) -> std::io::Result<String> {
    let mut text = String::new();
    open(path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// Tracefs file `path` (relative to its root), opened for reading.
fn open(path: &str) -> std::io::Result<std::fs::File> {
    let root = root().map_err(std::io::Error::other)?;
    Ok(match root {
        Root::Mounted(dir) => std::fs::File::open(dir.join(path))?,
        Root::Detached(fd) => {
            let name = CString::new(path).map_err(std::io::Error::other)?;
            // SAFETY: a valid directory descriptor and C string.
            let f = unsafe { libc::openat(fd.as_raw_fd(), name.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if f < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: openat returned a new descriptor we own.
            unsafe { std::fs::File::from_raw_fd(f) }
        }
    })
}

/// Calls `line` with each line of a text file, read a block at a time:
/// the kernel's function lists are megabytes, kept whole they doubled
/// the peak memory of a script that names one function.
pub(crate) fn for_each_line(file: std::fs::File, line: &mut dyn FnMut(&str)) {
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, file);
    let mut text = String::new();
    loop {
        text.clear();
        match std::io::BufRead::read_line(&mut reader, &mut text) {
            Ok(0) | Err(_) => break,
            Ok(_) => line(text.trim_end_matches('\n')),
        }
    }
}

/// The ID of each `category/name` tracepoint, or None where there is no such
/// tracepoint (or tracefs cannot be had at all).
pub(crate) fn tracepoint_ids(names: &[String]) -> Vec<Option<u64>> {
    names.iter().map(|n| read(&format!("events/{n}/id")).ok()?.trim().parse().ok()).collect()
}

/// Every tracepoint, as (group, name), in tracefs' order.
pub(crate) fn available_events() -> &'static [(String, String)] {
    static EVENTS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    EVENTS.get_or_init(|| {
        read("available_events")
            .map(|text| {
                text.lines().filter_map(|l| l.split_once(':')).map(|(g, n)| (g.to_string(), n.to_string())).collect()
            })
            .unwrap_or_default()
    })
}

/// Tracepoint groups that are not kernel tracepoints of their own: system
/// calls (the syscall provider's), dynamic probes (uprobes and kprobes,
/// ours or other tools'), ftrace's internal events.
const NOT_TRACEPOINTS: &[&str] = &["syscalls", "uprobes", "kprobes", "ftrace"];

/// Whether some kernel tracepoint (of a group `tracepoints` lists) is
/// named `name`: a look at each group's directory, not the whole list.
pub(crate) fn has_tracepoint_named(name: &str) -> bool {
    // sdt and rawtp ask the same question about one description.
    static LAST: std::sync::Mutex<Option<(String, bool)>> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, answer)) = last.as_ref().filter(|(asked, _)| asked == name) {
        return *answer;
    }
    let answer = look_for_tracepoint(name);
    *last = Some((name.to_string(), answer));
    answer
}

fn look_for_tracepoint(name: &str) -> bool {
    // A name with a slash names no directory entry of a group.
    if name.is_empty() || name.contains('/') || name.contains('\0') {
        return false;
    }
    let Ok(root) = root() else { return false };
    let events = match root {
        Root::Mounted(dir) => dir.join("events"),
        // The detached mount's directory, through our descriptor.
        Root::Detached(fd) => PathBuf::from(format!("/proc/self/fd/{}/events", fd.as_raw_fd())),
    };
    let (Ok(groups), Ok(events)) = (std::fs::read_dir(&events), open("events")) else { return true };
    // Each group's entry is looked up from the events directory's
    // descriptor rather than by a path walk from the root per group.
    groups.flatten().any(|group| {
        let Some(group) = group.file_name().to_str().map(str::to_string) else { return false };
        if NOT_TRACEPOINTS.contains(&group.as_str()) {
            return false;
        }
        let Ok(entry) = CString::new(format!("{group}/{name}")) else { return false };
        // SAFETY: a valid directory descriptor, C string and stat buffer.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        let found = unsafe { libc::fstatat(events.as_raw_fd(), entry.as_ptr(), &mut stat, libc::AT_SYMLINK_NOFOLLOW) };
        found == 0 && (stat.st_mode & libc::S_IFMT) == libc::S_IFDIR
    })
}

/// The kernel's tracepoints (sdt and rawtp probes), as (group, name).
pub(crate) fn tracepoints() -> Vec<(&'static str, &'static str)> {
    available_events()
        .iter()
        .filter(|(group, _)| !NOT_TRACEPOINTS.contains(&group.as_str()))
        .map(|(g, n)| (g.as_str(), n.as_str()))
        .collect()
}

/// The functions ftrace can trace, given to `add` as (module, function):
/// `vmlinux` for the kernel's own. False where the list cannot be read
/// (tracefs missing, or lockdown refuses it).
pub(crate) fn traceable_functions(add: &mut dyn FnMut(&str, &str)) -> bool {
    let Ok(file) = open("available_filter_functions") else { return false };
    for_each_line(file, &mut |l| {
        let mut words = l.split_whitespace();
        let Some(function) = words.next() else { return };
        let module = words.next().map_or("vmlinux", |m| m.trim_start_matches('[').trim_end_matches(']'));
        add(module, function);
    });
    true
}
