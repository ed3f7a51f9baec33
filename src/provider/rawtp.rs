//! The rawtp provider: the kernel's raw tracepoints,
//! `rawtp:<group>::<name>`, as dtrace-utils names them (bpf/rawtp.bpf.c).
//! argN is the tracepoint's Nth argument and args[N] has the type its
//! prototype in BTF gives it (`btf_trace_<name>`): `rawtp:sched::sched_switch`
//! has `args[1]`, the `struct task_struct *` leaving the CPU. The probes
//! are listed when a description could name one.

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::fd::OwnedFd;

use anyhow::{anyhow, Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::copies;
use super::desc::ProbeDesc;
use super::{
    Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, ProvideContext,
    Provider, RAW_TP,
};

super::entry_programs!("rawtp");

/// Arguments a probe passes to D (arg0..arg9): dt_rawtp_10 reads them all.
const NARGS: usize = 10;

#[derive(Default)]
pub(crate) struct Rawtp {
    /// Whether the tracepoints are in the probe table yet.
    listed: bool,
    /// Each probe's (group, name): a probe's key is its index here.
    events: Vec<(&'static str, &'static str)>,
    /// Argument types from BTF, by key.
    args: RefCell<HashMap<u64, Option<&'static [ProbeArg]>>>,
}

impl Provider for Rawtp {
    fn name(&self) -> &'static str {
        "rawtp"
    }

    fn populate(&mut self, _probes: &mut ProbeTable) {}

    fn provide(&mut self, desc: &ProbeDesc, probes: &mut ProbeTable, _cx: &mut ProvideContext) -> Option<Vec<u32>> {
        if let Some(events) = super::sdt::list_tracepoints("rawtp", desc, &mut self.listed, probes) {
            self.events = events;
        }
        None
    }

    fn typed_args(&self, probe: &Probe, kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        if let Some(known) = self.args.borrow().get(&probe.key) {
            return *known;
        }
        let args =
            kernel.tracepoint_parameters(&probe.name).map(|types| super::cast_args(types.into_iter().take(NARGS)));
        self.args.borrow_mut().insert(probe.key, args);
        args
    }

    /// As dtrace-utils gives its rawtp probes: the arguments are the
    /// kernel's own, typed by its BTF.
    fn argument_attributes(&self) -> Attributes {
        ("Private", "Private", "ISA")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        // Each probe's argument count picks its entry program.
        let mut counts = Vec::with_capacity(enabled.len());
        for e in enabled {
            let name = self.events[e.probe.key as usize].1;
            let n = cx.kernel.tracepoint_arg_count(name).ok_or_else(|| {
                anyhow!("{}: this kernel has no raw tracepoint {name} (or no BTF for it)", e.probe.full_name())
            })?;
            counts.push(n.min(NARGS));
        }
        let slots = enabled.len() as u32;
        let mut open = cx.open(skel::RawtpSkelBuilder::default(), "rawtp")?;
        open.maps.dt_rawtp_progs.set_max_entries(slots)?;
        open.maps.dt_rawtp_probes.set_max_entries(slots)?;
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
        }
        let wanted: Vec<String> = counts.iter().map(|n| format!("dt_rawtp_{n}")).collect();
        let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
        super::autoload_only(open.open_object_mut(), &wanted);
        let skel = open.load().context("loading the rawtp entry programs")?;
        let mut attached: Vec<OwnedFd> = Vec::new();
        for (slot, (e, n)) in enabled.iter().zip(&counts).enumerate() {
            let slot = slot as u32;
            let name = self.events[e.probe.key as usize].1;
            copies::set_probe(&skel.maps.dt_rawtp_probes, slot, e.probe.id, &[])?;
            let program = skel
                .object()
                .progs()
                .find(|p| p.name().to_str() == Some(&format!("dt_rawtp_{n}")))
                .expect("the program was loaded");
            let prog = cx
                .probe_copy(&program, slot, copies::Target::default(), e, &skel.maps.dt_rawtp_progs, RAW_TP)
                .with_context(|| format!("loading the entry program of {}", e.probe.full_name()))?;
            let link =
                copies::attach_raw(&prog, Some(name)).with_context(|| format!("attaching {}", e.probe.full_name()))?;
            attached.extend([prog, link]);
        }
        Ok(Box::new(Loaded((skel, attached))))
    }
}
