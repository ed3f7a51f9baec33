//! The syscall provider: entry and return of every system call of the
//! architecture, from the table in src/provider/syscalls/<arch>.tbl. Served by
//! bpf/syscall.bpf.c: the raw tracepoints sys_enter/sys_exit, or for a few
//! system calls their own tracepoints.

use std::os::fd::{AsRawFd, IntoRawFd};

use anyhow::{anyhow, Context, Result};
use libbpf_rs::skel::OpenSkel;

use super::copies::{self, Target};
use super::{EnableContext, Enabled, Enabling, EntryWork, Loaded, ProbeTable, Provider, RAW_TP, TRACEPOINT};

super::entry_programs!("syscall");

#[cfg(target_arch = "x86_64")]
const TABLE: &str = include_str!("syscalls/x86_64.tbl");
#[cfg(target_arch = "aarch64")]
const TABLE: &str = include_str!("syscalls/aarch64.tbl");

/// Must equal DT_MAX_SYSCALLS in bpf/dtrace.h.
pub(crate) const MAX_SYSCALLS: u32 = 1024;

/// (number, name) of every system call in the table.
pub(crate) fn table() -> impl Iterator<Item = (u32, &'static str)> {
    TABLE.lines().filter_map(|line| {
        let mut words = line.split_whitespace();
        let nr = words.next()?.parse().ok()?;
        Some((nr, words.next()?))
    })
}

/// A probe's key: system call number and direction.
fn key(nr: u32, ret: bool) -> u64 {
    u64::from(nr) << 1 | u64::from(ret)
}

/// Scripts enabling at most this many system-call probes attach them to
/// their own tracepoints. Each costs ~50-90 ms when dtrace exits (the kernel
/// waits for an RCU grace period per tracepoint detached, under a mutex), so
/// beyond a few the raw tracepoints (~20 ns on every other system call, but
/// a quick exit) are the better trade.
const MAX_TRACEPOINT_SYSCALLS: usize = 4;

#[derive(Default)]
pub(crate) struct Syscall {
    /// ID of the entry probe of system call 0; entry of nr is base + 2*nr,
    /// return base + 2*nr + 1 (bpf/syscall.bpf.c computes the same).
    id_base: u32,
}

impl Provider for Syscall {
    fn name(&self) -> &'static str {
        "syscall"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = probes.reserve(2 * MAX_SYSCALLS);
        // The system calls are the kernel's: module vmlinux, as Oracle's
        // DTrace for Linux lists them (`syscall:vmlinux:read:entry`).
        for (nr, name) in table() {
            for (ret, probe_name) in [(false, "entry"), (true, "return")] {
                let id = self.id_base + key(nr, ret) as u32;
                probes.add_at(id, "syscall", "vmlinux", name, probe_name, key(nr, ret));
            }
        }
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        // Bit 1: entry enabled, bit 2: return enabled, by system call number.
        let mut sys_enabled = vec![0u8; MAX_SYSCALLS as usize];
        for e in enabled {
            sys_enabled[(e.probe.key >> 1) as usize] |= 1 << (e.probe.key & 1);
        }
        let mut open = cx.open(skel::SyscallSkelBuilder::default(), "syscall")?;
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_sys_id_base = self.id_base;
            ro.dt_need_args = cx.needs.args;
            ro.dt_sys_enabled.copy_from_slice(&sys_enabled);
        }
        let skel = open.load().context("loading the syscall entry programs")?;
        // A few system calls: their own tracepoints, so that other system
        // calls run no BPF at all. Many: the two raw tracepoints, attached in
        // two steps however many calls are traced.
        // stack() needs the raw path: some kernels (before 6.12) give a
        // syscall tracepoint program the user's registers, with no kernel frames.
        let tracepoints = if cx.needs.stack { None } else { per_syscall_tracepoints(enabled) };
        let (prog_type, prog_array) = match tracepoints {
            Some(_) => (TRACEPOINT, &skel.maps.dt_sys_tp_progs),
            None => (RAW_TP, &skel.maps.dt_sys_progs),
        };
        // Each entry program is joined with its clauses where it can be
        // (no tail call per firing); the rest tail-call their slots.
        let tail_called = |cx: &mut EnableContext, e: &Enabled| {
            // Entry programs in slots 0.., return programs after MAX_SYSCALLS.
            let (nr, ret) = ((e.probe.key >> 1) as u32, e.probe.key & 1 == 1);
            cx.fill(prog_array, if ret { MAX_SYSCALLS + nr } else { nr }, e.clauses, prog_type)
        };
        match tracepoints {
            Some(events) => {
                let p = &skel.progs;
                // Widest first: the kernel refuses programs that read past the event.
                let enters = [
                    &p.dt_sys_enter_tp6,
                    &p.dt_sys_enter_tp5,
                    &p.dt_sys_enter_tp4,
                    &p.dt_sys_enter_tp3,
                    &p.dt_sys_enter_tp2,
                    &p.dt_sys_enter_tp1,
                    &p.dt_sys_enter_tp0,
                ];
                for (e, (ret, id)) in enabled.iter().zip(events) {
                    let candidates: &[&libbpf_rs::ProgramMut] = if ret { &[&p.dt_sys_exit_tp] } else { &enters };
                    let pfd = super::perf::open_tracepoint(id)?;
                    let mut joined = None;
                    for prog in candidates {
                        if let Some(fd) = cx.inlined(prog, None, Target::default(), e.clauses, EntryWork::FiringOnly)? {
                            if copies::attach_perf(&fd, &pfd).is_ok() {
                                joined = Some(fd);
                                break;
                            }
                        }
                    }
                    if let Some(fd) = joined {
                        cx.held.extend([fd, pfd]);
                        continue;
                    }
                    tail_called(cx, e)?;
                    let link = candidates
                        .iter()
                        .find_map(|prog| prog.attach_perf_event(pfd.as_raw_fd()).ok())
                        .ok_or_else(|| anyhow!("attaching to system call tracepoint {id} failed"))?;
                    // The link owns the perf event now and closes it.
                    let _ = pfd.into_raw_fd();
                    cx.links.push(link);
                }
            }
            None => {
                let raw = [(false, &skel.progs.dt_sys_enter, "sys_enter"), (true, &skel.progs.dt_sys_exit, "sys_exit")];
                for (ret, prog, tracepoint) in raw {
                    let probes: Vec<&Enabled> = enabled.iter().filter(|e| (e.probe.key & 1 == 1) == ret).collect();
                    let Some(first) = probes.first() else { continue };
                    // One program serves every system call of the raw
                    // tracepoint: it can hold the clauses when all its
                    // probes have the same ones.
                    if probes.iter().all(|e| e.clauses == first.clauses) {
                        if let Some(fd) =
                            cx.inlined(prog, None, Target::default(), first.clauses, EntryWork::FiringOnly)?
                        {
                            let link = copies::attach_raw(&fd, Some(tracepoint))
                                .with_context(|| format!("attaching to {tracepoint}"))?;
                            cx.held.extend([fd, link]);
                            continue;
                        }
                    }
                    for e in probes {
                        tail_called(cx, e)?;
                    }
                    let link = prog.attach_raw_tracepoint(tracepoint);
                    cx.links.push(link.with_context(|| format!("attaching to {tracepoint}"))?);
                }
            }
        }
        Ok(Box::new(Loaded(skel)))
    }
}

/// (is return, tracepoint ID) of each enabled system-call probe, when there
/// are few of them and tracefs can name them all; None for the raw path.
fn per_syscall_tracepoints(enabled: &[Enabled]) -> Option<Vec<(bool, u64)>> {
    if enabled.is_empty() || enabled.len() > MAX_TRACEPOINT_SYSCALLS {
        return None;
    }
    let wanted: Vec<(bool, String)> = enabled
        .iter()
        .map(|e| {
            let ret = e.probe.key & 1 == 1;
            (ret, format!("syscalls/sys_{}_{}", if ret { "exit" } else { "enter" }, e.probe.function))
        })
        .collect();
    let names: Vec<String> = wanted.iter().map(|(_, n)| n.clone()).collect();
    let ids = super::tracefs::tracepoint_ids(&names);
    wanted.iter().zip(ids).map(|((ret, _), id)| Some((*ret, id?))).collect()
}
