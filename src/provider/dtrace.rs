//! The dtrace provider: BEGIN, END and ERROR (bpf/dtrace.bpf.c). They are
//! fired by the consumer (BPF_PROG_TEST_RUN of dt_fire), not by a kernel
//! hook: BEGIN when tracing starts, END when it ends, both in the dtrace
//! process itself as in DTrace. ERROR's clauses run inline in the
//! generated program that faults.

use anyhow::{Context, Result};
use libbpf_rs::skel::OpenSkel;

use super::{Attributes, EnableContext, Enabled, Enabling, KernelFacts, Probe, ProbeArg, ProbeTable, Provider, RAW_TP};

super::entry_programs!("dtrace");

/// In slot order: the index is DT_SLOT_* in bpf/dtrace.h.
const PROBES: &[&str] = &["BEGIN", "END", "ERROR"];
const SLOT_BEGIN: u32 = 0;
const SLOT_END: u32 = 1;

#[derive(Default)]
pub(crate) struct Dtrace {
    id_base: u32,
}

impl Provider for Dtrace {
    fn name(&self) -> &'static str {
        "dtrace"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), PROBES.iter().copied());
    }

    /// BEGIN, END and ERROR have no typed arguments: args[n] is out of
    /// range for each n, as in DTrace (arg0 to arg9 remain).
    fn typed_args(&self, _probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        Some(&[])
    }

    fn argument_attributes(&self) -> Attributes {
        ("Stable", "Stable", "Common")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        // Only the parent's pid reads a kernel struct here.
        let mut open = cx.open_reading_kernel_structs(skel::DtraceSkelBuilder::default(), "dtrace", cx.needs.ppid)?;
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
        }
        let skel = open.load().context("loading the dtrace entry programs")?;
        cx.fill_slots(&skel.maps.dt_dtrace_progs, enabled, RAW_TP)?;
        let has = |slot: u32| enabled.iter().any(|e| e.probe.key == u64::from(slot));
        Ok(Box::new(Fired { has_begin: has(SLOT_BEGIN), has_end: has(SLOT_END), id_base: self.id_base, skel }))
    }
}

/// BEGIN and END, fired at their moments.
struct Fired {
    skel: skel::DtraceSkel<'static>,
    id_base: u32,
    has_begin: bool,
    has_end: bool,
}

impl Fired {
    fn fire(&self, slot: u32) -> Result<()> {
        let mut args = [0u64; 10];
        args[0] = u64::from(slot);
        args[1] = u64::from(self.id_base + slot);
        let mut ctx: Vec<u8> = args.iter().flat_map(|a| a.to_ne_bytes()).collect();
        let mut input = libbpf_rs::ProgramInput { context_in: Some(&mut ctx), ..Default::default() };
        // Under -x cpu, BEGIN and END fire on that CPU too, as the other
        // probes only fire there.
        if let Some(cpu) = self.only_cpu()? {
            input.cpu = cpu;
            input.flags = BPF_F_TEST_RUN_ON_CPU;
        }
        self.skel.progs.dt_fire.test_run(input).context("firing a dtrace probe")?;
        Ok(())
    }
}

impl Fired {
    /// The cpu option's CPU, from the shared state.
    fn only_cpu(&self) -> Result<Option<u32>> {
        use libbpf_rs::MapCore;
        let state = self.skel.maps.dt_state.lookup(&0u32.to_ne_bytes(), libbpf_rs::MapFlags::ANY)?.unwrap_or_default();
        Ok(crate::defs::layout::read_u32(&state, crate::defs::layout::STATE_ONLY_CPU).checked_sub(1))
    }
}

/// BPF_PROG_TEST_RUN's flag for running on the given CPU (linux/bpf.h).
const BPF_F_TEST_RUN_ON_CPU: u32 = 1;

impl Enabling for Fired {
    fn begin(&self) -> Result<()> {
        if self.has_begin {
            self.fire(SLOT_BEGIN)?;
        }
        Ok(())
    }

    fn end(&self) -> Result<()> {
        if self.has_end {
            self.fire(SLOT_END)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn slots_follow_the_entry_programs_order() {
        let c = include_str!("../../bpf/dtrace.h");
        for (slot, name) in super::PROBES.iter().enumerate() {
            assert!(c.contains(&format!("#define DT_SLOT_{} {slot}\n", name)), "{name}");
        }
    }
}
