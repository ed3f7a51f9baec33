//! The sched provider: threads leaving and taking CPUs, sleeping, being
//! preempted and woken, as Solaris' sched provider names them, on the
//! scheduler's tracepoints (bpf/sched.bpf.c). on-cpu fires for the thread
//! taking the CPU before it runs: the entry program names it in the probe
//! context, and the generated code reads pid, tid, execname, curthread and
//! self-> from there (codegen's `Current`).

use super::proc::{LWPSINFO_0, PSINFO_1};
use super::{Attach, Probe, ProbeArg};

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

pub(crate) fn id_base() -> u32 {
    super::ip::id_base() + super::ip::PROBES.len() as u32
}

pub(crate) fn provide(probes: &mut Vec<Probe>) {
    super::provide_slots(probes, "sched", id_base(), PROBES.iter().map(|p| p.name), |slot| Attach::Sched { slot });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let probes: Vec<_> = PROBES.iter().map(|p| (p.name, p.program, p.tracepoint)).collect();
        crate::provider::assert_slots_follow_the_entry_programs(
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
