//! The ip provider: `ip:::send` and `ip:::receive`, IPv4 and IPv6 packets
//! leaving and arriving at any interface, as Solaris' ip provider names
//! them (bpf/ip.bpf.c says which kernel events they are). The entry program
//! fills the stable structs of bpf/ip.h and passes their addresses as
//! arg0..arg5; the typed arguments are those addresses with the D types of
//! d-library/ip.d, which declares the same structs (a unit test below holds
//! the two to one layout).

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{
    arg, Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider,
    RAW_TP,
};

super::entry_programs!("ip");

pub(crate) struct IpProbe {
    pub name: &'static str,
    /// The entry program in bpf/ip.bpf.c and the raw tracepoint it attaches to.
    pub program: &'static str,
    pub tracepoint: &'static str,
}

/// In slot order: the index is DT_IP_* in bpf/ip.bpf.c.
pub(crate) const PROBES: &[IpProbe] = &[
    IpProbe { name: "send", program: "dt_ip_send", tracepoint: "net_dev_queue" },
    IpProbe { name: "receive", program: "dt_ip_receive", tracepoint: "netif_receive_skb" },
];

/// Both probes' arguments.
pub(crate) const ARGS: &[ProbeArg] = &[
    arg("pktinfo_t *", "(pktinfo_t *)arg0"),
    arg("csinfo_t *", "(csinfo_t *)arg1"),
    arg("ipinfo_t *", "(ipinfo_t *)arg2"),
    arg("ifinfo_t *", "(ifinfo_t *)arg3"),
    arg("ipv4info_t *", "(ipv4info_t *)arg4"),
    arg("ipv6info_t *", "(ipv6info_t *)arg5"),
];

#[derive(Default)]
pub(crate) struct Ip {
    id_base: u32,
}

impl Provider for Ip {
    fn name(&self) -> &'static str {
        "ip"
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
        &[("ip.d", include_str!("../../d-library/ip.d"))]
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        // cs_pid: bpf/inet.h's dt_inet_process_pid.
        cx.on_task_stack = true;
        let slots = super::enabled_slots(enabled);
        let mut open = cx.open(skel::IpSkelBuilder::default(), "ip")?;
        // Only the entry programs of the enabled probes are loaded.
        let wanted: Vec<&str> = slots.iter().map(|s| PROBES[*s].program).collect();
        super::autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_ip_id_base = self.id_base;
        }
        let skel = open.load().context("loading the ip entry programs")?;
        cx.fill_slots(&skel.maps.dt_ip_progs, enabled, RAW_TP)?;
        for slot in slots {
            let probe = &PROBES[slot];
            cx.attach_raw_tp_or_warn(skel.object(), &format!("ip:::{}", probe.name), probe.program, probe.tracepoint);
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
            include_str!("../../bpf/ip.bpf.c"),
            "IP",
            &probes,
        );
    }

    /// Each argument struct of d-library/ip.d has bpf/ip.h's layout.
    #[test]
    fn d_declarations_have_the_entry_programs_layout() {
        // Every pointer argument names one of these structs.
        let mut names: Vec<&str> = ARGS.iter().map(|a| a.ty.trim_end_matches(" *")).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ARGS.len());
        let pairs: Vec<(&str, &str)> = names.iter().map(|t| (*t, t.trim_end_matches("_t"))).collect();
        crate::provider::testing::assert_same_layouts(
            include_bytes!(concat!(env!("OUT_DIR"), "/ip.bpf.o")),
            "ip",
            &pairs,
        );
    }
}
