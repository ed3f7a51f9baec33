//! Helpers for running the built `dtrace` against real probes: spawn it,
//! wait (bounded) for a line, drive a workload, stop it with a signal, and
//! collect what it printed.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

pub const DTRACE: &str = env!("CARGO_BIN_EXE_dtrace");

/// Upper bound for any wait in these tests.
pub const WAIT: Duration = Duration::from_secs(20);

pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }
    /// No panic, no Rust backtrace, whatever happened.
    pub fn assert_no_panic(&self) {
        assert!(!self.stderr.contains("panicked"), "panic: {}", self.stderr);
        assert!(!self.stderr.contains("RUST_BACKTRACE"), "backtrace: {}", self.stderr);
    }
}

/// Runs dtrace to completion (bounded by WAIT).
pub fn run(args: &[&str]) -> Output {
    let mut t = Tracer::spawn(args);
    t.finish()
}

pub struct Tracer {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl Tracer {
    pub fn spawn(args: &[&str]) -> Tracer {
        let mut command = Command::new(DTRACE);
        command.args(args);
        Tracer::spawn_command(command)
    }

    /// The tracer's process ID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Spawns `command` (dtrace, or a shell that execs it) with its output
    /// captured as `spawn` does.
    pub fn spawn_command(mut command: Command) -> Tracer {
        let mut child =
            command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn dtrace");
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = channel();
        // Lines are bytes: a traced process's arguments need not be UTF-8,
        // and a reader that stopped at one would kill dtrace with SIGPIPE.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).split(b'\n') {
                let Ok(line) = line else { break };
                if tx.send(String::from_utf8_lossy(&line).into_owned()).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stderr.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        });
        Tracer { child, lines: rx, seen: Vec::new(), stderr }
    }

    /// Waits until a stdout line ends with `line` (the whole line under -q,
    /// the data after the probe columns otherwise); panics after WAIT.
    pub fn wait_for(&mut self, line: &str) {
        if !self.wait_until(line) {
            panic!("dtrace never printed {line:?}; saw {:?}", self.seen);
        }
    }

    /// As `wait_for`, but returns false if dtrace exits without printing it.
    pub fn wait_until(&mut self, line: &str) -> bool {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            match self.lines.recv_timeout(Duration::from_millis(100)) {
                Ok(l) => {
                    let found = l.ends_with(line);
                    self.seen.push(l);
                    if found {
                        return true;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if let Ok(Some(_)) = self.child.try_wait() {
                        return false;
                    }
                }
                Err(_) => return false,
            }
        }
        panic!("dtrace did not print {line:?} within {WAIT:?}; saw {:?}", self.seen);
    }

    /// The next stdout line, waiting at most a second.
    pub fn next_line(&mut self) -> Result<String, std::sync::mpsc::RecvTimeoutError> {
        let line = self.lines.recv_timeout(Duration::from_secs(1))?;
        self.seen.push(line.clone());
        Ok(line)
    }

    pub fn signal(&mut self, sig: i32) {
        // SAFETY: plain kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// Waits (bounded) for exit and returns everything printed.
    pub fn finish(&mut self) -> Output {
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("dtrace did not exit within {WAIT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut lines = std::mem::take(&mut self.seen);
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(2)) {
            lines.push(l);
        }
        let stderr = std::mem::replace(&mut self.stderr, std::thread::spawn(String::new)).join().unwrap_or_default();
        let mut stdout = lines.join("\n");
        if !stdout.is_empty() {
            stdout.push('\n');
        }
        Output { status, stdout, stderr }
    }

    /// Waits up to `patience` for dtrace to exit by itself, then interrupts
    /// it as Ctrl-C would, and collects the output (bounded by WAIT).
    pub fn finish_within(&mut self, patience: Duration) -> Output {
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return self.finish();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stop()
    }

    /// Sends SIGINT and collects the output.
    pub fn stop(&mut self) -> Output {
        self.signal(libc::SIGINT);
        self.finish()
    }
}

/// A test that fails before stopping its tracer must not leave it tracing.
impl Drop for Tracer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A directory for one test's files, named `name` and this test process's
/// ID, under cargo's scratch directory for integration tests (in the build
/// tree, so runs leave nothing in /tmp).
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()))
}

/// Writes a script into a fresh temporary directory and returns its path.
pub fn script(name: &str, text: &str) -> String {
    let dir = scratch_dir(&format!("dtrace-test-{name}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write script");
    path.to_string_lossy().into_owned()
}

/// The workload program (examples/workload.rs).
pub fn workload_path() -> std::path::PathBuf {
    // target/<profile>/deps/integration-* -> target/<profile>/examples/workload
    let exe = std::env::current_exe().expect("test binary");
    exe.parent().and_then(|d| d.parent()).expect("target dir").join("examples/workload")
}

/// The workload, waiting for "go" on stdin so tracing can start first.
pub struct Workload {
    child: Child,
}

impl Workload {
    pub fn spawn(args: &[&str]) -> Workload {
        let path = workload_path();
        let child = Command::new(&path)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e} (built by cargo test)", path.display()));
        Workload { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Lets it run to the end; returns what it printed.
    pub fn go(mut self) -> String {
        self.child.stdin.take().expect("stdin").write_all(b"go\n").expect("go");
        let mut out = String::new();
        for line in BufReader::new(self.child.stdout.take().expect("stdout")).lines() {
            out.push_str(&line.expect("line"));
            out.push('\n');
        }
        assert!(self.child.wait().expect("wait").success());
        out
    }
}

impl Workload {
    /// For a workload that holds after its work (`calls-held`): lets it
    /// run, and returns its first line once printed; it then waits for
    /// another line (`finish`).
    pub fn go_and_hold(&mut self) -> String {
        self.child.stdin.as_mut().expect("stdin").write_all(b"go\n").expect("go");
        let mut line = String::new();
        BufReader::new(self.child.stdout.as_mut().expect("stdout")).read_line(&mut line).expect("line");
        line
    }

    /// Lets a held workload exit, successfully.
    pub fn finish(mut self) {
        self.child.stdin.as_mut().expect("stdin").write_all(b"exit\n").expect("exit");
        assert!(self.child.wait().expect("wait").success());
    }
}

/// A workload left waiting for "go" by a failing test ends with it.
impl Drop for Workload {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
