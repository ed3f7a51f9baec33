//! The udp provider: `udp:::send` and `udp:::receive`, UDP datagrams
//! leaving and arriving at any interface, as Solaris' (illumos') udp
//! provider names them (bpf/udp.bpf.c says which kernel events they are).
//! The entry program fills the stable structs of bpf/udp.h and bpf/ip.h
//! and passes their addresses as arg0..arg4; the typed arguments are those
//! addresses with the D types of d-library/udp.d and ip.d (a unit test
//! below holds them to one layout).

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{
    arg, Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider,
    RAW_TP,
};

super::entry_programs!("udp");

pub(crate) struct UdpProbe {
    pub name: &'static str,
    /// The entry program in bpf/udp.bpf.c and the raw tracepoint it attaches to.
    pub program: &'static str,
    pub tracepoint: &'static str,
}

/// In slot order: the index is DT_UDP_* in bpf/udp.bpf.c.
pub(crate) const PROBES: &[UdpProbe] = &[
    UdpProbe { name: "send", program: "dt_udp_send", tracepoint: "net_dev_queue" },
    UdpProbe { name: "receive", program: "dt_udp_receive", tracepoint: "netif_receive_skb" },
];

/// Both probes' arguments.
pub(crate) const ARGS: &[ProbeArg] = &[
    arg("pktinfo_t *", "(pktinfo_t *)arg0"),
    arg("csinfo_t *", "(csinfo_t *)arg1"),
    arg("ipinfo_t *", "(ipinfo_t *)arg2"),
    arg("udpsinfo_t *", "(udpsinfo_t *)arg3"),
    arg("udpinfo_t *", "(udpinfo_t *)arg4"),
];

#[derive(Default)]
pub(crate) struct Udp {
    id_base: u32,
}

impl Provider for Udp {
    fn name(&self) -> &'static str {
        "udp"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), PROBES.iter().map(|p| p.name));
    }

    fn typed_args(&self, _probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        Some(ARGS)
    }

    fn argument_attributes(&self) -> Attributes {
        ("Evolving", "Evolving", "ISA")
    }

    fn library(&self) -> &'static [(&'static str, &'static str)] {
        &[("udp.d", include_str!("../../d-library/udp.d"))]
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        // cs_pid: bpf/inet.h's dt_inet_process_pid.
        cx.on_task_stack = true;
        let slots = super::enabled_slots(enabled);
        let mut open = cx.open(skel::UdpSkelBuilder::default(), "udp")?;
        // Only the entry programs of the enabled probes are loaded.
        let wanted: Vec<&str> = slots.iter().map(|s| PROBES[*s].program).collect();
        super::autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_udp_id_base = self.id_base;
        }
        let skel = open.load().context("loading the udp entry programs")?;
        cx.fill_slots(&skel.maps.dt_udp_progs, enabled, RAW_TP)?;
        for slot in slots {
            let probe = &PROBES[slot];
            cx.attach_raw_tp_or_warn(skel.object(), &format!("udp:::{}", probe.name), probe.program, probe.tracepoint);
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
            include_str!("../../bpf/udp.bpf.c"),
            "UDP",
            &probes,
        );
    }

    /// Each argument struct of d-library/udp.d has bpf/udp.h's layout.
    #[test]
    fn d_declarations_have_the_entry_programs_layout() {
        crate::provider::testing::assert_same_layouts(
            include_bytes!(concat!(env!("OUT_DIR"), "/udp.bpf.o")),
            "udp",
            &[("udpsinfo_t", "udpsinfo"), ("udpinfo_t", "udpinfo")],
        );
    }
}
