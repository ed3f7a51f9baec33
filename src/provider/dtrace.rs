//! The dtrace provider: BEGIN, END and ERROR. They are fired by the consumer
//! (BPF_PROG_TEST_RUN of the core object's dt_fire), not by a kernel hook.

use super::{Attach, Probe};

pub(crate) const BEGIN_ID: u32 = 1;
pub(crate) const END_ID: u32 = 2;
pub(crate) const ERROR_ID: u32 = 3;

/// (name, slot in dt_dtrace_progs): slots match DT_SLOT_* in bpf/dtrace.h.
const PROBES: &[(&str, u32)] = &[("BEGIN", 0), ("END", 1), ("ERROR", 2)];

pub(crate) fn provide(probes: &mut Vec<Probe>) {
    for (i, (name, slot)) in PROBES.iter().enumerate() {
        probes.push(Probe {
            id: BEGIN_ID + i as u32,
            provider: "dtrace",
            module: String::new(),
            function: String::new(),
            name: (*name).to_string(),
            attach: Attach::Dtrace { slot: *slot },
        });
    }
}
