//! The sched provider: threads leaving and taking CPUs, sleeping, being
//! preempted and woken, as Solaris' sched provider names them, on the
//! scheduler's tracepoints (bpf/sched.bpf.c). on-cpu fires for the thread
//! taking the CPU before it runs: the entry program names it in the probe
//! context, and the generated code reads pid, tid, execname, curthread and
//! self-> from there (codegen's `Current`).

use super::proc::{LWPSINFO_0, PSINFO_1};
use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{
    Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider, RAW_TP,
};

super::entry_programs!("sched");

pub(crate) struct SchedProbe {
    pub name: &'static str,
    /// The entry program in bpf/sched.bpf.c and the raw tracepoint it attaches to.
    pub program: &'static str,
    pub tracepoint: &'static str,
    pub args: &'static [ProbeArg],
    /// Fires for a thread other than the current one.
    pub other_thread: bool,
}

/// In slot order: the index is DT_SCHED_* in bpf/sched.bpf.c.
pub(crate) const PROBES: &[SchedProbe] = &[
    SchedProbe {
        name: "off-cpu",
        program: "dt_sched_off_cpu",
        tracepoint: "sched_switch",
        args: &[LWPSINFO_0, PSINFO_1],
        other_thread: false,
    },
    SchedProbe {
        name: "on-cpu",
        program: "dt_sched_on_cpu",
        tracepoint: "sched_switch",
        args: &[],
        other_thread: true,
    },
    SchedProbe { name: "sleep", program: "dt_sched_sleep", tracepoint: "sched_switch", args: &[], other_thread: false },
    SchedProbe {
        name: "preempt",
        program: "dt_sched_preempt",
        tracepoint: "sched_switch",
        args: &[],
        other_thread: false,
    },
    SchedProbe {
        name: "wakeup",
        program: "dt_sched_wakeup",
        tracepoint: "sched_wakeup",
        args: &[LWPSINFO_0, PSINFO_1],
        other_thread: false,
    },
];

/// The order the entry programs are attached in, which is the order the
/// kernel runs them at one context switch: Solaris fires sleep or preempt,
/// then off-cpu, then on-cpu.
pub(crate) const ATTACH_ORDER: &[&str] = &["sleep", "preempt", "off-cpu", "on-cpu", "wakeup"];

#[derive(Default)]
pub(crate) struct Sched {
    id_base: u32,
}

impl Provider for Sched {
    fn name(&self) -> &'static str {
        "sched"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), PROBES.iter().map(|p| p.name));
    }

    fn typed_args(&self, probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        PROBES.get(probe.key as usize).map(|p| p.args)
    }

    fn fires_for_another_thread(&self, probe: &Probe) -> bool {
        PROBES.get(probe.key as usize).is_some_and(|p| p.other_thread)
    }

    fn argument_attributes(&self) -> Attributes {
        ("Evolving", "Evolving", "ISA")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let slots = super::enabled_slots(enabled);
        let mut open = cx.open(skel::SchedSkelBuilder::default(), "sched")?;
        // Only the entry programs of the enabled probes are loaded.
        let wanted: Vec<&str> = slots.iter().map(|s| PROBES[*s].program).collect();
        super::autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_sched_id_base = self.id_base;
        }
        let skel = open.load().context("loading the sched entry programs")?;
        cx.fill_slots(&skel.maps.dt_sched_progs, enabled, RAW_TP)?;
        // The kernel runs a tracepoint's programs in the order they were attached.
        for name in ATTACH_ORDER {
            let Some(slot) = PROBES.iter().position(|p| p.name == *name) else { continue };
            if !slots.contains(&slot) {
                continue;
            }
            let probe = &PROBES[slot];
            let full = format!("sched:::{}", probe.name);
            cx.attach_raw_tp_or_warn(skel.object(), &full, probe.program, probe.tracepoint);
        }
        Ok(Box::new(Loaded(skel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let probes: Vec<_> = PROBES.iter().map(|p| (p.name, p.program, p.tracepoint)).collect();
        crate::provider::testing::assert_slots_follow_the_entry_programs(
            include_str!("../../bpf/sched.bpf.c"),
            "SCHED",
            &probes,
        );
        let mut ordered: Vec<&str> = ATTACH_ORDER.to_vec();
        ordered.sort();
        let mut names: Vec<&str> = PROBES.iter().map(|p| p.name).collect();
        names.sort();
        assert_eq!(ordered, names);
    }
}
