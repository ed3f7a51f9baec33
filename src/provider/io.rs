//! The io provider: block device I/O requests being issued and completed,
//! and threads waiting for them, as Solaris' io provider describes them,
//! on the block layer's tracepoints (bpf/io.bpf.c). The entry programs
//! fill bufinfo_t, devinfo_t and fileinfo_t themselves (bpf/io.h) and pass
//! their addresses; the D library (d-library/io.d) declares the same
//! layouts, and a test below keeps the two in step.

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{
    Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider, RAW_TP,
};

super::entry_programs!("io");

/// arg0 is the request (the same at start and done); the entry programs
/// fill the translated structs and pass their addresses in arg7..arg9.
const IO_ARGS: &[ProbeArg] = &[
    ProbeArg { ty: "bufinfo_t *", expr: "(bufinfo_t *)arg7" },
    ProbeArg { ty: "devinfo_t *", expr: "(devinfo_t *)arg8" },
    ProbeArg { ty: "fileinfo_t *", expr: "(fileinfo_t *)arg9" },
];

/// args[n] of bufinfo_t, devinfo_t and fileinfo_t: the entry programs fill
/// them only if a script uses them.
const BUFINFO_ARG: usize = 0;
const DEVINFO_ARG: usize = 1;
const FILEINFO_ARG: usize = 2;

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

#[derive(Default)]
pub(crate) struct Io {
    id_base: u32,
}

impl Provider for Io {
    fn name(&self) -> &'static str {
        "io"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), PROBES.iter().map(|p| p.name));
    }

    fn typed_args(&self, _probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        Some(IO_ARGS)
    }

    fn fires_for_another_thread(&self, probe: &Probe) -> bool {
        PROBES.get(probe.key as usize).is_some_and(|p| p.other_thread)
    }

    fn argument_attributes(&self) -> Attributes {
        ("Evolving", "Evolving", "ISA")
    }

    fn library(&self) -> &'static [(&'static str, &'static str)] {
        &[("io.d", include_str!("../../d-library/io.d"))]
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let slots = super::enabled_slots(enabled);
        let mut open = cx.open(skel::IoSkelBuilder::default(), "io")?;
        let mut wanted: Vec<&str> = slots.iter().map(|s| PROBES[*s].program).collect();
        let waits = slots.iter().any(|s| PROBES[*s].name.starts_with("wait-"));
        if waits {
            // wait-start and wait-done take their arguments from the thread's last request.
            wanted.push(PROBES[0].program);
        }
        // start skips the reissue of a requeued request.
        let starts = wanted.contains(&PROBES[0].program);
        if starts {
            wanted.push("dt_io_requeue");
        }
        super::autoload_only(open.open_object_mut(), &wanted);
        let ids = self.id_base..self.id_base + PROBES.len() as u32;
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_io_id_base = self.id_base;
            // block_rq_issue(q, rq) before Linux 5.11, block_rq_issue(rq) since.
            ro.dt_io_rq_arg = u32::from(cx.kernel.tracepoint_arg_count("block_rq_issue") == Some(2));
            let uses = |arg: usize| cx.needs.typed_args_used.iter().any(|(id, n)| ids.contains(id) && *n == arg);
            // Whether a clause may read one of `members` of args[arg].
            let reads = |arg: usize, members: &[&str]| {
                cx.needs.typed_arg_members.iter().any(|((id, n), read)| {
                    ids.contains(id)
                        && *n == arg
                        && read.as_ref().is_none_or(|r| members.iter().any(|m| r.contains(*m)))
                })
            };
            ro.dt_io_want_buf = uses(BUFINFO_ARG);
            ro.dt_io_want_edev = reads(BUFINFO_ARG, &["b_edev"]);
            ro.dt_io_want_pages = reads(BUFINFO_ARG, &["b_flags", "b_addr", "b_iodone"]);
            ro.dt_io_want_dev = uses(DEVINFO_ARG);
            ro.dt_io_want_file = uses(FILEINFO_ARG);
            ro.dt_io_want_fi_pathname = reads(FILEINFO_ARG, &["fi_pathname"]);
            ro.dt_io_want_fi_name = reads(FILEINFO_ARG, &["fi_name"]);
            ro.dt_io_want_fi_dirname = reads(FILEINFO_ARG, &["fi_dirname"]);
            ro.dt_io_want_fi_mount = reads(FILEINFO_ARG, &["fi_mount"]);
            ro.dt_io_want_fi_fs = reads(FILEINFO_ARG, &["fi_fs"]);
            ro.dt_io_want_waits = waits;
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            ro.dt_io_page_shift = (page.max(1) as u64).trailing_zeros();
        }
        let skel = open.load().context("loading the io entry programs")?;
        cx.fill_slots(&skel.maps.dt_io_progs, enabled, RAW_TP)?;
        for (slot, probe) in PROBES.iter().enumerate() {
            // start may be loaded only to serve the waits: attached then too,
            // but a warning is for an enabled probe.
            if slots.contains(&slot) {
                let full = format!("io:::{}", probe.name);
                cx.attach_raw_tp_or_warn(skel.object(), &full, probe.program, probe.tracepoint);
            } else if wanted.contains(&probe.program) {
                cx.attach_raw_tp(skel.object(), probe.program, probe.tracepoint);
            }
        }
        // Linux has had block_rq_requeue since 2.6; were it missing, a
        // reissued request would start twice, as it did before.
        if starts {
            cx.attach_raw_tp(skel.object(), "dt_io_requeue", "block_rq_requeue");
        }
        Ok(Box::new(Loaded(skel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bufinfo_t, devinfo_t and fileinfo_t of d-library/io.d have bpf/io.h's layouts.
    #[test]
    fn the_d_library_declares_the_layouts_the_entry_programs_fill() {
        crate::provider::testing::assert_same_layouts(
            include_bytes!(concat!(env!("OUT_DIR"), "/io.bpf.o")),
            "io",
            &[("bufinfo_t", "dt_bufinfo"), ("devinfo_t", "dt_devinfo"), ("fileinfo_t", "dt_fileinfo")],
        );
    }

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let probes: Vec<_> = PROBES.iter().map(|p| (p.name, p.program, p.tracepoint)).collect();
        crate::provider::testing::assert_slots_follow_the_entry_programs(
            include_str!("../../bpf/io.bpf.c"),
            "IO",
            &probes,
        );
    }
}
