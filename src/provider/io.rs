//! The io provider: block device I/O requests being issued and completed,
//! and threads waiting for them, as Solaris' io provider describes them,
//! on the block layer's tracepoints (bpf/io.bpf.c). The entry programs
//! fill bufinfo_t, devinfo_t and fileinfo_t themselves (bpf/io.h) and pass
//! their addresses; the D library (providers/io.d) declares the same
//! layouts, and a test below keeps the two in step.

use super::proc::ProbeArg;
use super::{Attach, Probe};

const IO_ARGS: &[ProbeArg] = &[
    ProbeArg { ty: "bufinfo_t *", expr: "(bufinfo_t *)arg0" },
    ProbeArg { ty: "devinfo_t *", expr: "(devinfo_t *)arg1" },
    ProbeArg { ty: "fileinfo_t *", expr: "(fileinfo_t *)arg2" },
];

/// args[n] of fileinfo_t: the entry programs build paths only if a script uses it.
pub(crate) const FILEINFO_ARG: usize = 2;

pub(crate) struct IoProbe {
    pub name: &'static str,
    /// The entry program in bpf/io.bpf.c and the raw tracepoint it attaches to.
    pub program: &'static str,
    pub tracepoint: &'static str,
}

/// In slot order: the index is DT_IO_* in bpf/io.bpf.c.
pub(crate) const PROBES: &[IoProbe] = &[
    IoProbe { name: "start", program: "dt_io_start", tracepoint: "block_rq_issue" },
    IoProbe { name: "done", program: "dt_io_done", tracepoint: "block_rq_complete" },
    IoProbe { name: "wait-start", program: "dt_io_wait_start", tracepoint: "sched_switch" },
    IoProbe { name: "wait-done", program: "dt_io_wait_done", tracepoint: "sched_switch" },
];

pub(crate) fn args() -> &'static [ProbeArg] {
    IO_ARGS
}

pub(crate) fn id_base() -> u32 {
    super::proc::id_base() + super::proc::PROBES.len() as u32
}

pub(crate) fn provide(probes: &mut Vec<Probe>) {
    for (slot, probe) in PROBES.iter().enumerate() {
        probes.push(Probe {
            id: id_base() + slot as u32,
            provider: "io",
            module: String::new(),
            function: String::new(),
            name: probe.name.to_string(),
            attach: Attach::Io { slot: slot as u32 },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let c = include_str!("../../bpf/io.bpf.c");
        for (slot, probe) in PROBES.iter().enumerate() {
            let define = format!("#define DT_IO_{} {slot}\n", probe.name.replace('-', "_").to_uppercase());
            assert!(c.contains(&define), "{define}");
            assert!(c.contains(&format!("int {}(", probe.program)), "{}", probe.program);
        }
        assert!(c.contains(&format!("#define DT_IO_COUNT {}\n", PROBES.len())));
    }
}
