//! Target processes (-c and -p): the processes whose pid is `$target`.
//! A -c command is forked at once and held before exec (it reads one byte
//! from a pipe); unless evaltime is exec, it is then run to where tracing
//! begins and stopped there (`evaltime`), until tracing is enabled. A -p
//! process is watched through a pidfd. When every target has exited,
//! tracing ends as dtrace(1) ends it.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use crate::flags::{EvalTime, TargetSpec};

mod evaltime;

struct Target {
    pid: i32,
    /// Readable once the process has exited (pidfd_open).
    pidfd: OwnedFd,
    /// For a -c command: the pipe that lets it exec; None once released.
    release: Option<File>,
    created: bool,
    exited: bool,
    /// For a -c command: the program it will exec.
    program: Option<std::path::PathBuf>,
    /// A -c command stopped where tracing begins (evaltime), until release.
    stopped: bool,
    /// The wait status of a -c command reaped while it was run to there.
    reaped: Option<i32>,
}

#[derive(Default)]
pub(crate) struct Targets {
    targets: Vec<Target>,
}

impl Targets {
    /// Creates the -c commands (held before exec) and grabs the -p pids, in
    /// command-line order; errors read like dtrace(1)'s.
    /// `env` holds the setenv/unsetenv options: the -c commands' environment
    /// is dtrace's with those changes, in order.
    /// A -c command runs to `evaltime` and stays stopped there.
    /// The files read to find where are kept in `processes`.
    pub(crate) fn start(
        specs: &[TargetSpec],
        env: &[(String, Option<String>)],
        evaltime: EvalTime,
        processes: &mut crate::process::Processes,
    ) -> Result<Targets, String> {
        let mut targets = Targets::default();
        let environment = command_environment(env);
        for spec in specs {
            let target = match spec {
                TargetSpec::Command(line) => create(line, &environment)?,
                TargetSpec::Pid(text) => grab(text)?,
            };
            targets.targets.push(target);
            let target = targets.targets.last_mut().expect("just pushed");
            if evaltime == EvalTime::Exec {
                continue;
            }
            if let Some(release) = target.release.take() {
                match evaltime::advance(target.pid, release, evaltime, processes)? {
                    evaltime::Advanced::Stopped => target.stopped = true,
                    evaltime::Advanced::Ended(status) => target.reaped = Some(status),
                }
            }
        }
        Ok(targets)
    }

    /// `$target`: as in DTrace, the pid of the last process created or grabbed.
    /// The -c commands not yet released, with the program each will exec
    /// (the pid provider reads its modules from the program's file).
    pub(crate) fn held_programs(&self) -> Vec<(u32, std::path::PathBuf)> {
        self.targets
            .iter()
            .filter(|t| t.release.is_some())
            .filter_map(|t| Some((t.pid as u32, t.program.clone()?)))
            .collect()
    }

    /// Every target's pid, in command-line order.
    pub(crate) fn pids(&self) -> Vec<u32> {
        self.targets.iter().map(|t| t.pid as u32).collect()
    }

    pub(crate) fn last_pid(&self) -> Option<u32> {
        self.targets.last().map(|t| t.pid as u32)
    }

    /// Lets the created commands run (tracing is enabled).
    pub(crate) fn release(&mut self) {
        for target in &mut self.targets {
            if let Some(mut pipe) = target.release.take() {
                let _ = pipe.write_all(b"g");
            }
            if std::mem::take(&mut target.stopped) {
                // SAFETY: continues our own stopped child.
                unsafe { libc::kill(target.pid, libc::SIGCONT) };
            }
        }
    }

    /// dtrace's notices for the targets that exited since the last call.
    pub(crate) fn check_exits(&mut self) -> Vec<String> {
        let mut notices = Vec::new();
        for target in self.targets.iter_mut().filter(|t| !t.exited) {
            let mut poll = libc::pollfd { fd: target.pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd, no timeout.
            if unsafe { libc::poll(&mut poll, 1, 0) } > 0 {
                target.exited = true;
                notices.push(exit_notice(target));
            }
        }
        notices
    }

    /// True when there are targets and all of them have exited.
    pub(crate) fn all_exited(&self) -> bool {
        !self.targets.is_empty() && self.targets.iter().all(|t| t.exited)
    }
}

impl Drop for Targets {
    /// Created commands do not outlive dtrace (DTrace kills them too); a
    /// command never released exits when its pipe closes.
    fn drop(&mut self) {
        for target in self.targets.iter_mut().filter(|t| t.created) {
            // Closing the pipe of a command never released makes it exit.
            if target.release.take().is_none() && !target.exited {
                // SAFETY: our own child, not yet reaped.
                unsafe { libc::kill(target.pid, libc::SIGKILL) };
            }
            if target.reaped.is_none() {
                // SAFETY: reaps our own child; a null status pointer is allowed.
                unsafe { libc::waitpid(target.pid, std::ptr::null_mut(), 0) };
            }
        }
    }
}

/// `pid N has exited`, or how it ended when dtrace is its parent (dtrace.c's prochandler).
fn exit_notice(target: &Target) -> String {
    let pid = target.pid;
    if !target.created {
        return format!("pid {pid} has exited");
    }
    let mut status = 0;
    if let Some(reaped) = target.reaped {
        status = reaped;
    // SAFETY: our own child, which has exited; WNOHANG cannot block.
    } else if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } != pid {
        return format!("pid {pid} has exited");
    }
    if libc::WIFSIGNALED(status) {
        format!("pid {pid} terminated by {}", signal_name(libc::WTERMSIG(status)))
    } else if libc::WEXITSTATUS(status) != 0 {
        format!("pid {pid} exited with status {}", libc::WEXITSTATUS(status))
    } else {
        format!("pid {pid} has exited")
    }
}

fn signal_name(signal: i32) -> String {
    const NAMES: [&str; 32] = [
        "", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM",
        "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF",
        "WINCH", "IO", "PWR", "SYS",
    ];
    match NAMES.get(signal as usize) {
        Some(name) if !name.is_empty() => format!("SIG{name}"),
        _ => format!("signal {signal}"),
    }
}

fn pidfd_open(pid: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags; the result is a new fd we own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// -c: forks the command, held until `release`. As DTrace's make_argv does,
/// the line is split on blanks (no shell quoting).
fn create(line: &str, environment: &[CString]) -> Result<Target, String> {
    let words: Vec<CString> = line
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            CString::new(crate::syntax::raw::bytes_of(w))
                .map_err(|_| format!("failed to execute {line}: invalid argument"))
        })
        .collect::<Result<_, _>>()?;
    if words.is_empty() {
        return Err(format!("failed to execute {line}: no command"));
    }
    // Found and checked before the fork, so a program that cannot run is
    // reported as DTrace reports it (exit status 1, nothing traced) and the
    // held process makes no failed execve attempts.
    let name = words[0].to_string_lossy();
    let program = find_program(std::ffi::OsStr::from_bytes(words[0].as_bytes()))
        .ok_or_else(|| format!("failed to execute {name}: No such file or directory"))?;
    check_executable(&program).map_err(|why| format!("failed to execute {name}: {why}"))?;
    let program_path = program.clone();
    let program = CString::new(program.into_os_string().into_encoded_bytes())
        .map_err(|_| format!("failed to execute {line}: invalid argument"))?;
    let mut argv: Vec<*const libc::c_char> = words.iter().map(|w| w.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = environment.iter().map(|v| v.as_ptr()).collect();
    envp.push(std::ptr::null());
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("failed to execute {line}: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are ours.
    let (wait_end, release_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    let failure = CString::new(format!("dtrace: failed to execute {line}: ")).unwrap_or_default();
    // SAFETY: getpid has no preconditions.
    let dtrace_pid = unsafe { libc::getpid() };
    // SAFETY: the child only calls async-signal-safe functions (close, read, execv,
    // write, _exit) on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("failed to execute {line}: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: see above; the child never returns into Rust code.
        unsafe {
            // Only dtrace may hold a release end: its closing means "never".
            // Every other descriptor goes too, so an earlier -c command's
            // release end is not kept open by this one (each would wait for
            // the other) and the command starts with only 0, 1 and 2.
            let wait_fd = wait_end.as_raw_fd() as libc::c_uint;
            close_range(3, wait_fd - 1);
            close_range(wait_fd + 1, libc::c_uint::MAX);
            // A created command does not outlive dtrace, even a SIGKILLed
            // one: the kernel kills it when dtrace dies (kept across exec,
            // except for set-user-ID programs). Checked after setting, in
            // case dtrace died first.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != dtrace_pid {
                libc::_exit(1);
            }
            let mut go = 0u8;
            if libc::read(wait_end.as_raw_fd(), (&mut go as *mut u8).cast(), 1) != 1 {
                libc::_exit(1);
            }
            raw_execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr());
            let error = libc::strerror(*libc::__errno_location());
            libc::write(2, failure.as_ptr().cast(), failure.as_bytes().len());
            libc::write(2, error.cast(), libc::strlen(error));
            libc::write(2, b"\n".as_ptr().cast(), 1);
            libc::_exit(127);
        }
    }
    drop(wait_end);
    let pidfd = pidfd_open(pid).map_err(|e| format!("failed to execute {line}: {e}"))?;
    Ok(Target {
        pid,
        pidfd,
        release: Some(release_end),
        created: true,
        exited: false,
        program: Some(program_path),
        stopped: false,
        reaped: None,
    })
}

/// dtrace's environment with the setenv/unsetenv changes applied, as
/// `NAME=value` strings for execve.
fn command_environment(changes: &[(String, Option<String>)]) -> Vec<CString> {
    use std::os::unix::ffi::OsStringExt;
    let mut vars: Vec<(Vec<u8>, Vec<u8>)> = std::env::vars_os().map(|(k, v)| (k.into_vec(), v.into_vec())).collect();
    for (name, value) in changes {
        let name = crate::syntax::raw::bytes_of(name);
        vars.retain(|(k, _)| *k != name);
        if let Some(value) = value {
            vars.push((name, crate::syntax::raw::bytes_of(value)));
        }
    }
    vars.into_iter()
        .filter_map(|(mut k, v)| {
            k.push(b'=');
            k.extend(v);
            CString::new(k).ok()
        })
        .collect()
}

/// execve(2) without calling into libc: the pid provider's probes on libc
/// are attached for this pid before it is released, and its last steps in
/// dtrace's own code must not fire them (`-> execve` with no return).
/// On failure errno is set and it returns.
///
/// # Safety
/// As execve: `path` and the NULL-terminated `argv` and `envp` must be valid.
unsafe fn raw_execve(path: *const libc::c_char, argv: *const *const libc::c_char, envp: *const *const libc::c_char) {
    #[cfg(target_arch = "x86_64")]
    {
        let ret: i64;
        // SAFETY: the execve system call with valid arguments; rcx and r11
        // are clobbered by `syscall`.
        unsafe {
            std::arch::asm!("syscall", inlateout("rax") libc::SYS_execve => ret, in("rdi") path, in("rsi") argv,
                in("rdx") envp, lateout("rcx") _, lateout("r11") _, options(nostack));
            *libc::__errno_location() = -ret as i32;
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let ret: i64;
        // SAFETY: the execve system call with valid arguments.
        unsafe {
            std::arch::asm!("svc 0", in("x8") libc::SYS_execve, inlateout("x0") path as i64 => ret, in("x1") argv,
                in("x2") envp, options(nostack));
            *libc::__errno_location() = -ret as i32;
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: as above.
    unsafe {
        libc::execve(path, argv, envp);
    }
}

/// The program a command names: a path as is, else the first executable
/// file of that name in PATH, as execvp looks.
fn find_program(name: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    if name.as_bytes().contains(&b'/') {
        return Some(name.into());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| check_executable(p).is_ok())
}

/// close_range(2), with close(2) over the range where the kernel (before
/// 5.9) lacks it. Async-signal-safe.
///
/// # Safety
/// Closes descriptors other code may own: only for a forked child.
unsafe fn close_range(first: libc::c_uint, last: libc::c_uint) {
    if first > last {
        return;
    }
    // SAFETY: the caller owns every descriptor in the range.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, last, 0) == 0 {
            return;
        }
        let limit = libc::sysconf(libc::_SC_OPEN_MAX).clamp(0, 1 << 20) as libc::c_uint;
        for fd in first..=last.min(limit) {
            libc::close(fd as i32);
        }
    }
}

/// What execve would say of `program`, checked in advance: a missing file,
/// a directory or a file without execute permission.
fn check_executable(program: &std::path::Path) -> Result<(), &'static str> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(program).map_err(|e| match e.raw_os_error() {
        Some(libc::EACCES) => "Permission denied",
        Some(libc::ENOTDIR) => "Not a directory",
        _ => "No such file or directory",
    })?;
    if meta.is_dir() || meta.permissions().mode() & 0o111 == 0 {
        return Err("Permission denied");
    }
    Ok(())
}

/// -p: watches a running process.
fn grab(text: &str) -> Result<Target, String> {
    // As strtol() reads it for DTrace: leading white space is skipped.
    let pid = text
        .trim_start()
        .parse::<i32>()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("invalid process ID: {text}"))?;
    let pidfd = pidfd_open(pid).map_err(|e| {
        let why = if e.raw_os_error() == Some(libc::ESRCH) { "No such process".to_string() } else { e.to_string() };
        format!("failed to grab pid {pid}: {why}")
    })?;
    Ok(Target { pid, pidfd, release: None, created: false, exited: false, program: None, stopped: false, reaped: None })
}
