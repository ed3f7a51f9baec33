//! The io provider: block device I/O requests being issued and completed,
//! and threads waiting for them, as Solaris' io provider describes them,
//! on the block layer's tracepoints (bpf/io.bpf.c). The entry programs
//! fill bufinfo_t, devinfo_t and fileinfo_t themselves (bpf/io.h) and pass
//! their addresses; the D library (providers/io.d) declares the same
//! layouts, and a test below keeps the two in step.

use super::{Attach, Probe, ProbeArg};

const IO_ARGS: &[ProbeArg] = &[
    ProbeArg { ty: "bufinfo_t *", expr: "(bufinfo_t *)arg0" },
    ProbeArg { ty: "devinfo_t *", expr: "(devinfo_t *)arg1" },
    ProbeArg { ty: "fileinfo_t *", expr: "(fileinfo_t *)arg2" },
];

/// args[n] of bufinfo_t, devinfo_t and fileinfo_t: the entry programs fill
/// them only if a script uses them.
pub(crate) const BUFINFO_ARG: usize = 0;
pub(crate) const DEVINFO_ARG: usize = 1;
pub(crate) const FILEINFO_ARG: usize = 2;

pub(crate) struct IoProbe {
    pub name: &'static str,
    /// The entry program in bpf/io.bpf.c and the raw tracepoint it attaches to.
    pub program: &'static str,
    pub tracepoint: &'static str,
    /// Fires for a thread other than the current one.
    pub other_thread: bool,
}

const fn probe(name: &'static str, program: &'static str, tracepoint: &'static str, other_thread: bool) -> IoProbe {
    IoProbe { name, program, tracepoint, other_thread }
}

/// In slot order: the index is DT_IO_* in bpf/io.bpf.c.
///
/// wait-done fires when the thread that waited takes a CPU again, before
/// it runs: for that thread (its pid, execname, self->), as sched:::on-cpu.
pub(crate) const PROBES: &[IoProbe] = &[
    probe("start", "dt_io_start", "block_rq_issue", false),
    probe("done", "dt_io_done", "block_rq_complete", false),
    probe("wait-start", "dt_io_wait_start", "sched_switch", false),
    probe("wait-done", "dt_io_wait_done", "sched_switch", true),
];

pub(crate) fn args() -> &'static [ProbeArg] {
    IO_ARGS
}

pub(crate) fn id_base() -> u32 {
    super::proc::id_base() + super::proc::PROBES.len() as u32
}

pub(crate) fn provide(probes: &mut Vec<Probe>) {
    super::provide_slots(probes, "io", id_base(), PROBES.iter().map(|p| p.name), |slot| Attach::Io { slot });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bufinfo_t, devinfo_t and fileinfo_t of providers/io.d have bpf/io.h's layouts.
    #[test]
    fn the_d_library_declares_the_layouts_the_entry_programs_fill() {
        crate::provider::assert_same_layouts(
            include_bytes!(concat!(env!("OUT_DIR"), "/io.bpf.o")),
            "io",
            &[("bufinfo_t", "dt_bufinfo"), ("devinfo_t", "dt_devinfo"), ("fileinfo_t", "dt_fileinfo")],
        );
    }

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let probes: Vec<_> = PROBES.iter().map(|p| (p.name, p.program, p.tracepoint)).collect();
        crate::provider::assert_slots_follow_the_entry_programs(include_str!("../../bpf/io.bpf.c"), "IO", &probes);
    }
}
