//! Running a -c command to where tracing begins (the evaltime option), as
//! DTrace's dt_proc.c does with breakpoints: by default after its
//! libraries and initializers have run, stopped at `main`, so probes on
//! its startup code do not fire and the pid provider sees the libraries it
//! has mapped. The command is traced (ptrace) only until then, and left
//! stopped (SIGSTOP) for `Targets::release` to continue.
//!
//! `main` is the executable's symbol; a stripped dynamically linked program
//! is run to its entry point, then to glibc's `__libc_start_main`, whose
//! first argument is `main`. Only x86-64 is handled; elsewhere, and for a
//! program where no such point is found, tracing begins at exec.

use std::fs::File;
use std::io::Write;

use std::rc::Rc;

use crate::flags::EvalTime;
use crate::process::{ElfSymbols, Processes};

/// What became of the command.
pub(super) enum Advanced {
    /// Stopped (SIGSTOP) at the point: SIGCONT lets it go on.
    Stopped,
    /// It ended before getting there (its exec failed, or it exited),
    /// with this wait status (it is reaped).
    Ended(i32),
}

/// Lets the held command exec (writing to `release`) and runs it to
/// `point`; the files read to find it are kept in `processes`.
pub(super) fn advance(
    pid: i32,
    mut release: File,
    point: EvalTime,
    processes: &mut Processes,
) -> Result<Advanced, String> {
    let failed = |what: &str| format!("failed to control pid {pid}: {what}: {}", std::io::Error::last_os_error());
    // SAFETY: ptrace of our own child, held in read(2) before its exec.
    let seized = unsafe {
        libc::ptrace(libc::PTRACE_SEIZE, pid, 0, (libc::PTRACE_O_TRACEEXEC | libc::PTRACE_O_EXITKILL) as libc::c_ulong)
    };
    if seized != 0 {
        return Err(failed("ptrace"));
    }
    release.write_all(b"g").map_err(|e| format!("failed to control pid {pid}: {e}"))?;
    drop(release);
    let mut tracee = Tracee { pid, ended: 0 };
    if !tracee.wait_for_exec()? {
        return Ok(Advanced::Ended(tracee.ended));
    }
    match tracee.run_to(point, processes) {
        Ok(true) => {}
        Ok(false) => return Ok(Advanced::Ended(tracee.ended)),
        Err(e) => {
            tracee.detach_stopped();
            return Err(e);
        }
    }
    tracee.detach_stopped();
    Ok(Advanced::Stopped)
}

struct Tracee {
    pid: i32,
    /// Its wait status, once it has ended.
    ended: i32,
}

/// A stop, as waitpid reports it: None when the process has ended.
type Stop = Option<i32>;

impl Tracee {
    fn wait(&mut self) -> Result<Stop, String> {
        let mut status = 0;
        loop {
            // SAFETY: waits for our own traced child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, libc::__WALL) };
            if r == self.pid {
                break;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Err(format!(
                    "failed to control pid {}: waitpid: {}",
                    self.pid,
                    std::io::Error::last_os_error()
                ));
            }
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            self.ended = status;
            return Ok(None);
        }
        Ok(Some(status))
    }

    fn cont(&self, signal: i32) {
        // SAFETY: resumes our own stopped tracee.
        unsafe { libc::ptrace(libc::PTRACE_CONT, self.pid, 0, signal as libc::c_ulong) };
    }

    /// Resumes a stop that is not ours, passing on a signal it stopped for.
    fn pass(&self, status: i32) {
        let event = status >> 16;
        let signal = libc::WSTOPSIG(status);
        let deliver = event == 0 && signal != libc::SIGTRAP;
        self.cont(if deliver { signal } else { 0 });
    }

    /// Waits for the exec; false if the command ended instead.
    fn wait_for_exec(&mut self) -> Result<bool, String> {
        loop {
            let Some(status) = self.wait()? else { return Ok(false) };
            if status >> 8 == (libc::SIGTRAP | (libc::PTRACE_EVENT_EXEC << 8)) {
                return Ok(true);
            }
            self.pass(status);
        }
    }

    /// Runs to `point`; false if the command ended first.
    fn run_to(&mut self, point: EvalTime, processes: &mut Processes) -> Result<bool, String> {
        if point == EvalTime::Exec || !cfg!(target_arch = "x86_64") {
            return Ok(true);
        }
        let Some(exe) = Mapped::file(self.pid, &format!("/proc/{}/exe", self.pid), processes) else { return Ok(true) };
        if point == EvalTime::Preinit {
            return self.run_to_address(exe.entry()).map(|r| r.is_some());
        }
        if let Some(main) = exe.function("main") {
            return self.run_to_address(main).map(|r| r.is_some());
        }
        // Stripped: libc is mapped at the entry point; its start routine
        // is given main.
        if self.run_to_address(exe.entry())?.is_none() {
            return Ok(false);
        }
        let Some(start) =
            Mapped::library(self.pid, "libc.so", processes).and_then(|libc| libc.function("__libc_start_main"))
        else {
            return Ok(true);
        };
        let Some(regs) = self.run_to_address(start)? else { return Ok(false) };
        Ok(self.run_to_address(regs.rdi)?.is_some())
    }

    /// Runs until the instruction at `addr` is about to run, with a
    /// breakpoint; the registers there, or None if the command ended.
    fn run_to_address(&mut self, addr: u64) -> Result<Option<libc::user_regs_struct>, String> {
        let pid = self.pid;
        let failed = |what: &str| format!("failed to control pid {pid}: {what}: {}", std::io::Error::last_os_error());
        // SAFETY: reads a word of our stopped tracee's memory (errno
        // tells a failure from a word of -1).
        let word = unsafe {
            *libc::__errno_location() = 0;
            libc::ptrace(libc::PTRACE_PEEKTEXT, pid, addr as libc::c_ulong, 0)
        };
        // SAFETY: reads errno.
        if word == -1 && unsafe { *libc::__errno_location() } != 0 {
            return Err(failed("reading its code"));
        }
        let trap = (word & !0xff) | 0xcc;
        // SAFETY: writes one word of our stopped tracee's code.
        if unsafe { libc::ptrace(libc::PTRACE_POKETEXT, pid, addr as libc::c_ulong, trap as libc::c_ulong) } != 0 {
            return Err(failed("placing a breakpoint"));
        }
        self.cont(0);
        loop {
            let Some(status) = self.wait()? else { return Ok(None) };
            if status >> 16 == 0 && libc::WSTOPSIG(status) == libc::SIGTRAP {
                let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
                // SAFETY: reads the registers of our stopped tracee.
                unsafe { libc::ptrace(libc::PTRACE_GETREGS, pid, 0, &mut regs as *mut libc::user_regs_struct) };
                if regs.rip == addr + 1 {
                    regs.rip = addr;
                    // SAFETY: restores the code word and the instruction
                    // pointer of our stopped tracee.
                    unsafe {
                        libc::ptrace(libc::PTRACE_POKETEXT, pid, addr as libc::c_ulong, word as libc::c_ulong);
                        libc::ptrace(libc::PTRACE_SETREGS, pid, 0, &regs as *const libc::user_regs_struct);
                    }
                    return Ok(Some(regs));
                }
            }
            self.pass(status);
        }
    }

    /// Leaves the command stopped and no longer traced.
    fn detach_stopped(&mut self) {
        // SAFETY: detaches our tracee with a SIGSTOP to stop at.
        unsafe { libc::ptrace(libc::PTRACE_DETACH, self.pid, 0, libc::SIGSTOP as libc::c_ulong) };
    }
}

/// An ELF file as one process maps it: its symbols and load bias.
struct Mapped {
    elf: Rc<ElfSymbols>,
    bias: u64,
}

impl Mapped {
    /// The file at `path` (a /proc link or a path), as `pid` maps it.
    fn file(pid: i32, path: &str, processes: &mut Processes) -> Option<Mapped> {
        let real = std::fs::read_link(path).unwrap_or_else(|_| path.into());
        let base = mapping_start(pid, |mapped| std::path::Path::new(mapped) == real)?;
        Mapped::at(&real, base, processes)
    }

    /// The first library whose file name starts with `stem`.
    fn library(pid: i32, stem: &str, processes: &mut Processes) -> Option<Mapped> {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
        let path = maps
            .lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .find(|p| std::path::Path::new(p).file_name().is_some_and(|n| n.to_string_lossy().starts_with(stem)))?;
        let base = mapping_start(pid, |mapped| mapped == path)?;
        Mapped::at(std::path::Path::new(path), base, processes)
    }

    fn at(path: &std::path::Path, base: u64, processes: &mut Processes) -> Option<Mapped> {
        let elf = processes.file(path)?;
        // The mapping at file offset 0 is where the first segment's page is.
        let bias = base.wrapping_sub(elf.vaddr_of_offset(0)? & !0xfff);
        Some(Mapped { elf, bias })
    }

    fn entry(&self) -> u64 {
        self.bias.wrapping_add(self.elf.entry)
    }

    fn function(&self, name: &str) -> Option<u64> {
        let f = self.elf.functions.iter().find(|f| f.name == name && !f.local)?;
        Some(self.bias.wrapping_add(f.vaddr))
    }
}

/// Where the mapping at file offset 0 of the file `is_file` names begins.
fn mapping_start(pid: i32, is_file: impl Fn(&str) -> bool) -> Option<u64> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    maps.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (range, offset, path) = (words.first()?, words.get(2)?, words.get(5)?);
        if u64::from_str_radix(offset, 16).ok()? != 0 || !is_file(path) {
            return None;
        }
        u64::from_str_radix(range.split('-').next()?, 16).ok()
    })
}
