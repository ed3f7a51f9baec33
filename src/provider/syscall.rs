//! The syscall provider: entry and return of every system call of the
//! architecture, from the table in providers/syscalls/<arch>.tbl. Served by
//! bpf/syscall.bpf.c (raw tracepoints sys_enter/sys_exit).

use super::{Attach, Probe};

#[cfg(target_arch = "x86_64")]
const TABLE: &str = include_str!("../../providers/syscalls/x86_64.tbl");
#[cfg(target_arch = "aarch64")]
const TABLE: &str = include_str!("../../providers/syscalls/aarch64.tbl");

/// Probe ID of the entry probe of syscall 0; entry of nr is BASE + 2*nr,
/// return BASE + 2*nr + 1 (bpf/syscall.bpf.c computes the same).
pub(crate) const ID_BASE: u32 = 4;
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

pub(crate) fn provide(probes: &mut Vec<Probe>) {
    for (nr, name) in table() {
        for (ret, probe_name) in [(false, "entry"), (true, "return")] {
            probes.push(Probe {
                id: ID_BASE + 2 * nr + ret as u32,
                provider: "syscall",
                module: String::new(),
                function: name.to_string(),
                name: probe_name.to_string(),
                attach: Attach::Syscall { nr, ret },
            });
        }
    }
}

/// First ID after the syscall probes.
pub(crate) fn id_end() -> u32 {
    ID_BASE + 2 * MAX_SYSCALLS
}
