//! The sched provider: threads leaving and taking CPUs, sleeping, being
//! preempted, woken, queued and dequeued, priority changes, clock ticks and
//! reschedule requests, as Solaris' sched provider names them, on the
//! scheduler's tracepoints (bpf/sched.bpf.c). Solaris probes with no Linux
//! counterpart are listed with the reason they never fire. on-cpu fires for the thread
//! taking the CPU before it runs: the entry program names it in the probe
//! context, and the generated code reads pid, tid, execname, curthread and
//! self-> from there (codegen's `Current`).

use super::proc::{LWPSINFO_0, PSINFO_1};
use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{
    arg, Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider,
    RAW_TP,
};

super::entry_programs!("sched");

/// How a probe fires on Linux.
pub(crate) enum Fires {
    /// From its entry programs in ENTRY_PROGRAMS.
    Events,
    /// Never: why (the man page gives the same words).
    Never(&'static str),
}

pub(crate) struct SchedProbe {
    pub name: &'static str,
    pub args: &'static [ProbeArg],
    /// Fires for a thread other than the current one.
    pub other_thread: bool,
    pub fires: Fires,
}

const CPUINFO_2: ProbeArg = arg("cpuinfo_t *", "(cpuinfo_t *)arg2");
const SCHEDCTL: &str = "Linux has no schedctl(3C) preemption control";
const CPUCAPS: &str = "Linux has no CPU caps (CFS bandwidth throttling has no tracepoint)";

const fn fires(name: &'static str, args: &'static [ProbeArg]) -> SchedProbe {
    SchedProbe { name, args, other_thread: false, fires: Fires::Events }
}

const fn never(name: &'static str, why: &'static str) -> SchedProbe {
    SchedProbe { name, args: &[], other_thread: false, fires: Fires::Never(why) }
}

/// In slot order: the index is DT_SCHED_* in bpf/sched.bpf.c.
pub(crate) const PROBES: &[SchedProbe] = &[
    fires("off-cpu", &[LWPSINFO_0, PSINFO_1]),
    SchedProbe { name: "on-cpu", args: &[], other_thread: true, fires: Fires::Events },
    fires("sleep", &[]),
    fires("preempt", &[]),
    fires("wakeup", &[LWPSINFO_0, PSINFO_1]),
    fires("enqueue", &[LWPSINFO_0, PSINFO_1, CPUINFO_2, arg("int", "(int)arg3")]),
    fires("dequeue", &[LWPSINFO_0, PSINFO_1, CPUINFO_2]),
    fires("change-pri", &[LWPSINFO_0, PSINFO_1, arg("pri_t", "(pri_t)arg2")]),
    fires("tick", &[LWPSINFO_0, PSINFO_1]),
    fires("surrender", &[LWPSINFO_0, PSINFO_1]),
    never(
        "remain-cpu",
        "Linux's scheduler has no tracepoint where it keeps the running thread (__schedule() then \
         switches nothing)",
    ),
    never("schedctl-nopreempt", SCHEDCTL),
    never("schedctl-preempt", SCHEDCTL),
    never("schedctl-yield", SCHEDCTL),
    never("cpucaps-sleep", CPUCAPS),
    never("cpucaps-wakeup", CPUCAPS),
];

/// Every entry program as (probe, program, raw tracepoint), in the order
/// they are attached, which is the order the kernel runs one tracepoint's
/// programs: at a context switch Solaris fires sleep or preempt, enqueue
/// (the preempted thread goes back to the queue), dequeue (the next one
/// leaves it), off-cpu, on-cpu; a queued thread moved to another CPU is
/// dequeued before it is enqueued.
pub(crate) const ENTRY_PROGRAMS: &[(&str, &str, &str)] = &[
    ("sleep", "dt_sched_sleep", "sched_switch"),
    ("preempt", "dt_sched_preempt", "sched_switch"),
    ("enqueue", "dt_sched_enqueue_preempt", "sched_switch"),
    ("dequeue", "dt_sched_dequeue_switch", "sched_switch"),
    ("off-cpu", "dt_sched_off_cpu", "sched_switch"),
    ("on-cpu", "dt_sched_on_cpu", "sched_switch"),
    ("wakeup", "dt_sched_wakeup", "sched_wakeup"),
    ("enqueue", "dt_sched_enqueue_wakeup", "sched_wakeup"),
    ("enqueue", "dt_sched_enqueue_new", "sched_wakeup_new"),
    ("dequeue", "dt_sched_dequeue_migrate", "sched_migrate_task"),
    ("enqueue", "dt_sched_enqueue_migrate", "sched_migrate_task"),
    ("change-pri", "dt_sched_change_pri", "sched_pi_setprio"),
    ("tick", "dt_sched_tick", "hrtimer_expire_entry"),
    ("surrender", "dt_sched_surrender", "reschedule_entry"),
];

/// The clock tick's hrtimer function, by its names across kernel versions.
const TICK_FUNCTIONS: [&str; 2] = ["tick_nohz_handler", "tick_sched_timer"];

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
        let (mut names, mut silent) = (Vec::new(), Vec::new());
        for slot in super::enabled_slots(enabled) {
            match PROBES[slot].fires {
                Fires::Events => names.push(PROBES[slot].name),
                Fires::Never(why) => silent.push((PROBES[slot].name, why)),
            }
        }
        cx.never_fire(self.name(), &silent);
        if names.is_empty() {
            return Ok(Box::new(Loaded(())));
        }
        let mut open = cx.open(skel::SchedSkelBuilder::default(), "sched")?;
        // Only the entry programs of the enabled probes are loaded.
        let entries: Vec<&(&str, &str, &str)> = ENTRY_PROGRAMS.iter().filter(|(p, _, _)| names.contains(p)).collect();
        let wanted: Vec<&str> = entries.iter().map(|(_, program, _)| *program).collect();
        super::autoload_only(open.open_object_mut(), &wanted);
        let tick_functions = if names.contains(&"tick") { tick_functions() } else { [0; 2] };
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_sched_id_base = self.id_base;
            ro.dt_sched_tick_fn = tick_functions;
        }
        let skel = open.load().context("loading the sched entry programs")?;
        cx.fill_slots(&skel.maps.dt_sched_progs, enabled, RAW_TP)?;
        // The kernel runs a tracepoint's programs in the order they were attached.
        for (probe, program, tracepoint) in entries {
            cx.attach_raw_tp_or_warn(skel.object(), &format!("sched:::{probe}"), program, tracepoint);
        }
        if names.contains(&"tick") && tick_functions == [0; 2] {
            cx.warnings.push(format!(
                "sched:::tick will not fire: kallsyms names no clock tick hrtimer function ({})",
                TICK_FUNCTIONS.join(", ")
            ));
        }
        Ok(Box::new(Loaded(skel)))
    }
}

/// The addresses of the clock tick's hrtimer functions (0 for a name the
/// kernel lacks).
fn tick_functions() -> [u64; 2] {
    crate::kallsyms::vmlinux_addresses(TICK_FUNCTIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let c = include_str!("../../bpf/sched.bpf.c");
        for (slot, probe) in PROBES.iter().enumerate() {
            let define = format!("#define DT_SCHED_{} {slot}\n", probe.name.replace('-', "_").to_uppercase());
            assert!(c.contains(&define), "{define}");
            let programs = ENTRY_PROGRAMS.iter().filter(|(p, _, _)| *p == probe.name).count();
            match probe.fires {
                Fires::Events => assert!(programs > 0, "{} has no entry program", probe.name),
                Fires::Never(_) => assert_eq!(programs, 0, "{}", probe.name),
            }
        }
        assert!(c.contains(&format!("#define DT_SCHED_COUNT {}\n", PROBES.len())));
        for (_, program, tracepoint) in ENTRY_PROGRAMS {
            let entry = format!("SEC(\"raw_tp/{tracepoint}\")\nint {program}(");
            assert!(c.contains(&entry), "{entry}");
        }
    }

    #[test]
    fn the_man_page_gives_every_mapping() {
        for probe in PROBES {
            let entry =
                crate::provider::testing::man_mapping_entry(include_str!("../../man/dtrace-sched.7"), probe.name);
            match probe.fires {
                Fires::Events => {
                    for (_, _, tracepoint) in ENTRY_PROGRAMS.iter().filter(|(p, _, _)| *p == probe.name) {
                        assert!(entry.contains(tracepoint), "dtrace-sched(7): {} lacks {tracepoint}", probe.name);
                    }
                }
                Fires::Never(why) => assert!(
                    entry.contains(&format!("never: {why}")),
                    "dtrace-sched(7) lacks why {} never fires",
                    probe.name
                ),
            }
        }
    }
}
