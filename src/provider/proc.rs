//! The proc provider: processes and threads being created, exec'ing,
//! exiting and signalled, as Solaris' proc provider names them, each on the
//! Linux tracepoint that means the same (bpf/proc.bpf.c). The entry
//! programs pass raw values; the typed arguments (`args[0]` of create is the
//! child's `psinfo_t *`) are D expressions over them, checked like any
//! other D (the D library's translators do the work).

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{
    arg, Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider,
    RAW_TP,
};

super::entry_programs!("proc");

pub(crate) const PSINFO_0: ProbeArg = arg("psinfo_t *", "xlate <psinfo_t *> ((struct task_struct *)arg0)");
pub(crate) const LWPSINFO_0: ProbeArg = arg("lwpsinfo_t *", "xlate <lwpsinfo_t *> ((struct task_struct *)arg0)");
pub(crate) const PSINFO_1: ProbeArg = arg("psinfo_t *", "xlate <psinfo_t *> ((struct task_struct *)arg1)");

pub(crate) struct ProcProbe {
    pub name: &'static str,
    /// The entry program in bpf/proc.bpf.c and the raw tracepoint it attaches to.
    pub program: &'static str,
    pub tracepoint: &'static str,
    pub args: &'static [ProbeArg],
}

/// In slot order: the index is DT_PROC_* in bpf/proc.bpf.c.
pub(crate) const PROBES: &[ProcProbe] = &[
    ProcProbe { name: "create", program: "dt_proc_create", tracepoint: "sched_process_fork", args: &[PSINFO_0] },
    ProcProbe {
        name: "exec",
        program: "dt_proc_exec",
        tracepoint: "sys_enter",
        args: &[arg("string", "copyinstr(arg0)")],
    },
    ProcProbe { name: "exec-success", program: "dt_proc_exec_success", tracepoint: "sched_process_exec", args: &[] },
    ProcProbe {
        name: "exec-failure",
        program: "dt_proc_exec_failure",
        tracepoint: "sys_exit",
        args: &[arg("int", "(int)arg0")],
    },
    ProcProbe {
        name: "exit",
        program: "dt_proc_exit",
        tracepoint: "sched_process_exit",
        args: &[arg("int", "(int)arg0")],
    },
    ProcProbe {
        name: "lwp-create",
        program: "dt_proc_lwp_create",
        tracepoint: "sched_process_fork",
        args: &[LWPSINFO_0, PSINFO_1],
    },
    ProcProbe { name: "lwp-exit", program: "dt_proc_lwp_exit", tracepoint: "sched_process_exit", args: &[] },
    ProcProbe {
        name: "signal-send",
        program: "dt_proc_signal_send",
        tracepoint: "signal_generate",
        args: &[LWPSINFO_0, PSINFO_1, arg("int", "(int)arg2")],
    },
    ProcProbe {
        name: "signal-handle",
        program: "dt_proc_signal_handle",
        tracepoint: "signal_deliver",
        args: &[arg("int", "(int)arg0"), arg("void *", "(void *)arg1"), arg("void *", "(void *)arg2")],
    },
    ProcProbe {
        name: "signal-discard",
        program: "dt_proc_signal_discard",
        tracepoint: "signal_generate",
        args: &[LWPSINFO_0, PSINFO_1, arg("int", "(int)arg2")],
    },
    ProcProbe {
        name: "signal-clear",
        program: "dt_proc_signal_clear",
        tracepoint: "sys_exit",
        args: &[arg("int", "(int)arg0")],
    },
    ProcProbe {
        name: "fault",
        program: "dt_proc_fault",
        tracepoint: "signal_generate",
        args: &[arg("int", "(int)arg0"), arg("struct siginfo *", "(struct siginfo *)arg1")],
    },
    ProcProbe { name: "start", program: "dt_proc_start", tracepoint: "sys_exit", args: &[] },
    ProcProbe { name: "lwp-start", program: "dt_proc_lwp_start", tracepoint: "sys_exit", args: &[] },
];

#[derive(Default)]
pub(crate) struct Proc {
    id_base: u32,
}

impl Provider for Proc {
    fn name(&self) -> &'static str {
        "proc"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), PROBES.iter().map(|p| p.name));
    }

    fn typed_args(&self, probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        PROBES.get(probe.key as usize).map(|p| p.args)
    }

    fn argument_attributes(&self) -> Attributes {
        ("Evolving", "Evolving", "ISA")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let slots = super::enabled_slots(enabled);
        let mut open = cx.open(skel::ProcSkelBuilder::default(), "proc")?;
        // Only the entry programs of the enabled probes are loaded.
        let wanted: Vec<&str> = slots.iter().map(|s| PROBES[*s].program).collect();
        super::autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_proc_id_base = self.id_base;
            for (nr, name) in super::syscall::table() {
                match name {
                    "execve" => ro.dt_proc_nr_execve = nr.into(),
                    "execveat" => ro.dt_proc_nr_execveat = nr.into(),
                    "fork" => ro.dt_proc_nr_fork = nr.into(),
                    "vfork" => ro.dt_proc_nr_vfork = nr.into(),
                    "clone" => ro.dt_proc_nr_clone = nr.into(),
                    "clone3" => ro.dt_proc_nr_clone3 = nr.into(),
                    "rt_sigtimedwait" => ro.dt_proc_nr_rt_sigtimedwait = nr.into(),
                    _ => {}
                }
            }
        }
        let skel = open.load().context("loading the proc entry programs")?;
        cx.fill_slots(&skel.maps.dt_proc_progs, enabled, RAW_TP)?;
        // Programs on one tracepoint run in the order they were attached:
        // a last thread fires lwp-exit before exit, a first thread start
        // before lwp-start (slot order), as Solaris' proc_exit and
        // lwp_rtt_initial do.
        let mut slots = slots;
        slots.sort_by_key(|&s| (PROBES[s].name == "exit", s));
        for slot in slots {
            let probe = &PROBES[slot];
            cx.attach_raw_tp_or_warn(skel.object(), &format!("proc:::{}", probe.name), probe.program, probe.tracepoint);
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
            include_str!("../../bpf/proc.bpf.c"),
            "PROC",
            &probes,
        );
    }
}
