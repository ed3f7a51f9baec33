//! The integration tests' workload: a process whose system calls, forks,
//! execs and threads are known exactly. It waits for a line on stdin (so
//! the test can start tracing its pid first), does one thing, and prints
//! what it measured about itself.
//!
//!   workload read SIZE COUNT    COUNT read(2)s of SIZE bytes from /dev/zero
//!   workload write SIZE COUNT   COUNT write(2)s of SIZE bytes to /dev/null
//!   workload fork N             N fork(2)s; each child exits at once
//!   workload exec N             N children that exec /bin/true
//!   workload threads N          N threads, each joined
//!   workload switch N           N 1 ms sleeps and some spinning; prints the
//!                               voluntary and involuntary context switches
//!                               /proc/self/status counted meanwhile
//!   workload xcalls N           N mmap/touch/munmap rounds while a second
//!                               thread runs, so TLB shootdowns cross CPUs
//!   workload getppid N          N getppid(2)s
//!   workload open PATH...       opens each PATH for reading (openat(2)), in
//!                               order; prints how many opens failed
//!   workload calls N            calls dt_workload_outer(i) for i in 0..N,
//!                               which calls dt_workload_call(i), which
//!                               returns 2i+1 (pid provider tests); prints
//!                               the sum of the results
//!   workload calls-held N       the same, then waits for another line
//!   workload pi-boost N         N rounds in which a nice 10 thread holds a
//!                               priority-inheritance mutex this (nice 0)
//!                               thread waits for: the kernel lends the
//!                               holder this thread's priority and takes it
//!                               back at the unlock; prints the holders' tids

use std::io::{BufRead, Read, Write};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let number = |i: usize| -> usize { args.get(i).and_then(|a| a.parse().ok()).expect("a number argument") };
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).expect("go line");
    match args.get(1).map(String::as_str) {
        Some("read") => {
            let mut f = std::fs::File::open("/dev/zero").expect("open /dev/zero");
            let mut buf = vec![0u8; number(2)];
            for _ in 0..number(3) {
                f.read_exact(&mut buf).expect("read");
            }
        }
        Some("write") => {
            let mut f = std::fs::OpenOptions::new().write(true).open("/dev/null").expect("open /dev/null");
            let buf = vec![0u8; number(2)];
            for _ in 0..number(3) {
                f.write_all(&buf).expect("write");
            }
        }
        Some("fork") => {
            for _ in 0..number(2) {
                // SAFETY: single-threaded here; the child only calls _exit.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    unsafe { libc::_exit(0) };
                }
                wait(pid);
            }
        }
        Some("exec") => {
            for _ in 0..number(2) {
                let status = std::process::Command::new("/bin/true").status().expect("run /bin/true");
                assert!(status.success());
            }
        }
        Some("threads") => {
            let handles: Vec<_> = (0..number(2)).map(|_| std::thread::spawn(|| ())).collect();
            for h in handles {
                h.join().expect("join");
            }
        }
        // Threads still running when the process exits: exit_group ends
        // them all at once.
        Some("exit-threads") => {
            for _ in 0..number(2) {
                std::thread::spawn(|| loop {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::process::exit(0);
        }
        Some("switch") => {
            let before = switches();
            for _ in 0..number(2) {
                std::thread::sleep(std::time::Duration::from_millis(1));
                let start = std::time::Instant::now();
                while start.elapsed() < std::time::Duration::from_micros(200) {}
            }
            let after = switches();
            println!("{} {}", after.0 - before.0, after.1 - before.1);
        }
        Some("xcalls") => {
            use std::sync::atomic::{AtomicBool, Ordering};
            // A shootdown IPI goes only to CPUs running this mm: pin a
            // spinning thread to one CPU and unmap from another, once the
            // spinner runs (other tests may be busy on the same CPUs).
            let stop = std::sync::Arc::new(AtomicBool::new(false));
            let running = std::sync::Arc::new(AtomicBool::new(false));
            let spinner = {
                let (stop, running) = (stop.clone(), running.clone());
                std::thread::spawn(move || {
                    pin_to_cpu(1);
                    running.store(true, Ordering::Relaxed);
                    while !stop.load(Ordering::Relaxed) {}
                })
            };
            pin_to_cpu(0);
            while !running.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
            for _ in 0..number(2) {
                // SAFETY: an anonymous private mapping, touched and unmapped here only.
                unsafe {
                    let p = libc::mmap(
                        std::ptr::null_mut(),
                        4096,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    );
                    assert_ne!(p, libc::MAP_FAILED);
                    *(p as *mut u8) = 1;
                    libc::munmap(p, 4096);
                }
            }
            stop.store(true, Ordering::Relaxed);
            spinner.join().expect("join");
        }
        Some("getppid") => {
            for _ in 0..number(2) {
                // SAFETY: getppid has no preconditions.
                unsafe { libc::getppid() };
            }
        }
        Some("open") => {
            let failed = args[2..].iter().filter(|path| std::fs::File::open(path).is_err()).count();
            println!("{failed}");
        }
        Some("calls") => {
            let sum: u64 = (0..number(2) as u64).map(|i| dt_workload_outer(i)).sum();
            println!("{sum}");
        }
        // The process stays until another line: its addresses can still be named.
        Some("calls-held") => {
            let sum: u64 = (0..number(2) as u64).map(|i| dt_workload_outer(i)).sum();
            println!("{sum}");
            std::io::stdout().flush().expect("flush");
            std::io::stdin().lock().read_line(&mut line).expect("exit line");
        }
        Some("pi-boost") => {
            for _ in 0..number(2) {
                println!("{}", pi_boost_round());
            }
        }
        _ => {
            eprintln!(
                "usage: workload read|write|fork|exec|threads|exit-threads|switch|xcalls|getppid|open|calls|pi-boost ..."
            );
            std::process::exit(2);
        }
    }
}

/// The pid provider tests' function: a symbol of its own (`.symtab`).
#[no_mangle]
#[inline(never)]
pub extern "C" fn dt_workload_call(x: u64) -> u64 {
    std::hint::black_box(x) * 2 + 1
}

/// Calls dt_workload_call, so that its stack has a caller.
#[no_mangle]
#[inline(never)]
pub extern "C" fn dt_workload_outer(x: u64) -> u64 {
    std::hint::black_box(dt_workload_call(std::hint::black_box(x)))
}

/// glibc's PTHREAD_PRIO_INHERIT (<pthread.h>).
const PTHREAD_PRIO_INHERIT: libc::c_int = 1;

/// One pi-boost round; returns the holder's tid.
fn pi_boost_round() -> libc::pid_t {
    // SAFETY: the mutex is initialized before either thread uses it and
    // outlives both (leaked); the holder unlocks before it exits.
    unsafe {
        let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
        libc::pthread_mutexattr_init(&mut attr);
        libc::pthread_mutexattr_setprotocol(&mut attr, PTHREAD_PRIO_INHERIT);
        let mutex: &'static mut libc::pthread_mutex_t = Box::leak(Box::new(std::mem::zeroed()));
        libc::pthread_mutex_init(mutex, &attr);
        let address = mutex as *mut libc::pthread_mutex_t as usize;
        let (held, is_held) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            let mutex = address as *mut libc::pthread_mutex_t;
            let tid = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
            libc::pthread_mutex_lock(mutex);
            held.send(()).expect("send");
            std::thread::sleep(std::time::Duration::from_millis(50));
            libc::pthread_mutex_unlock(mutex);
            tid
        });
        is_held.recv().expect("held");
        libc::pthread_mutex_lock(mutex);
        libc::pthread_mutex_unlock(mutex);
        holder.join().expect("holder")
    }
}

fn wait(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
}

/// (voluntary, involuntary) context switches of this process so far.
fn switches() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let field = |name: &str| -> u64 {
        status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok()).expect("switch counts")
    };
    (field("voluntary_ctxt_switches:"), field("nonvoluntary_ctxt_switches:"))
}

/// Runs the calling thread on `cpu` only (when the machine has it).
fn pin_to_cpu(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET and sched_setaffinity
    // only touch it and the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}
