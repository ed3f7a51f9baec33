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

/// args[n] of fileinfo_t: the entry programs build paths only if a script uses it.
pub(crate) const FILEINFO_ARG: usize = 2;

/// An entry program in bpf/io.bpf.c and the raw tracepoint it attaches to.
pub(crate) struct Hook {
    pub program: &'static str,
    pub tracepoint: &'static str,
}

pub(crate) struct IoProbe {
    pub name: &'static str,
    /// All of them are attached; the first is named after the probe.
    pub hooks: &'static [Hook],
    /// Fires for a thread other than the current one.
    pub other_thread: bool,
}

const fn hook(program: &'static str, tracepoint: &'static str) -> Hook {
    Hook { program, tracepoint }
}

/// In slot order: the index is DT_IO_* in bpf/io.bpf.c.
///
/// wait-done fires when the thread that waited takes a CPU again, before
/// it runs: for that thread (its pid, execname, self->), as sched:::on-cpu.
pub(crate) const PROBES: &[IoProbe] = &[
    IoProbe { name: "start", hooks: &[hook("dt_io_start", "block_rq_issue")], other_thread: false },
    IoProbe { name: "done", hooks: &[hook("dt_io_done", "block_rq_complete")], other_thread: false },
    IoProbe { name: "wait-start", hooks: &[hook("dt_io_wait_start", "sched_switch")], other_thread: false },
    IoProbe { name: "wait-done", hooks: &[hook("dt_io_wait_done", "sched_switch")], other_thread: true },
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
    use crate::runtime::skel::io::types::{dt_bufinfo, dt_devinfo, dt_fileinfo};
    use crate::sema::ir::{ActionKind, TKind, TStmt};
    use std::mem::{offset_of, size_of, size_of_val};

    /// The constants `BEGIN { trace(e); ... }` traces, for each D expression e.
    fn d_constants(exprs: &[String]) -> Vec<usize> {
        let traces: String = exprs.iter().map(|e| format!("trace({e}); ")).collect();
        let program = crate::compile::compile_description(&format!("BEGIN {{ {traces} }}")).expect("compiles");
        program.clauses[0]
            .body
            .iter()
            .map(|s| match s {
                TStmt::Action { kind: ActionKind::Record(v), .. } => match v[0].kind {
                    TKind::Int(n) => n as usize,
                    _ => panic!("not a constant"),
                },
                _ => panic!("not a trace"),
            })
            .collect()
    }

    /// providers/io.d's `d_type` has bpf/io.h's layout: the same size, and
    /// each member at the same offset with the same size.
    macro_rules! same_layout {
        ($d_type:literal, $c_type:ty, [$($member:ident),+ $(,)?]) => {{
            let c = <$c_type>::default();
            let mut d_exprs = vec![format!("sizeof ({})", $d_type)];
            let mut c_values = vec![size_of::<$c_type>()];
            $(
                d_exprs.push(format!("offsetof({}, {})", $d_type, stringify!($member)));
                d_exprs.push(format!("sizeof ((({} *)0)->{})", $d_type, stringify!($member)));
                c_values.push(offset_of!($c_type, $member));
                c_values.push(size_of_val(&c.$member));
            )+
            assert_eq!(d_constants(&d_exprs), c_values, "{} and {}: {:?}", $d_type, stringify!($c_type), d_exprs);
        }};
    }

    #[test]
    fn the_d_library_declares_the_layouts_the_entry_programs_fill() {
        same_layout!(
            "bufinfo_t",
            dt_bufinfo,
            [b_flags, b_bcount, b_addr, b_blkno, b_lblkno, b_resid, b_bufsize, b_iodone, b_edev, b_error]
        );
        same_layout!(
            "devinfo_t",
            dt_devinfo,
            [dev_major, dev_minor, dev_instance, dev_name, dev_statname, dev_pathname]
        );
        same_layout!("fileinfo_t", dt_fileinfo, [fi_name, fi_dirname, fi_pathname, fi_offset, fi_fs, fi_mount]);
    }

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let c = include_str!("../../bpf/io.bpf.c");
        for (slot, probe) in PROBES.iter().enumerate() {
            let define = format!("#define DT_IO_{} {slot}\n", probe.name.replace('-', "_").to_uppercase());
            assert!(c.contains(&define), "{define}");
            for hook in probe.hooks {
                assert!(
                    c.contains(&format!("SEC(\"raw_tp/{}\")\nint {}(", hook.tracepoint, hook.program)),
                    "{}",
                    hook.program
                );
            }
        }
        assert!(c.contains(&format!("#define DT_IO_COUNT {}\n", PROBES.len())));
    }
}
