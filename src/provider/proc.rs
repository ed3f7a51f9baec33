//! The proc provider: processes and threads being created, exec'ing,
//! exiting and signalled, as Solaris' proc provider names them, each on the
//! Linux tracepoint that means the same (bpf/proc.bpf.c). The entry
//! programs pass raw values; the typed arguments (`args[0]` of create is the
//! child's `psinfo_t *`) are D expressions over them, checked like any
//! other D (the D library's translators do the work).

use super::{arg, Attach, Probe, ProbeArg};

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
    // One program serves exit and lwp-exit (bpf/proc.bpf.c says why).
    ProcProbe { name: "lwp-exit", program: "dt_proc_exit", tracepoint: "sched_process_exit", args: &[] },
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
];

pub(crate) fn id_base() -> u32 {
    super::sysinfo::id_end()
}

pub(crate) fn provide(probes: &mut Vec<Probe>) {
    super::provide_slots(probes, "proc", id_base(), PROBES.iter().map(|p| p.name), |slot| Attach::Proc { slot });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let probes: Vec<_> = PROBES.iter().map(|p| (p.name, p.program, p.tracepoint)).collect();
        crate::provider::assert_slots_follow_the_entry_programs(include_str!("../../bpf/proc.bpf.c"), "PROC", &probes);
    }
}
