//! The tcp provider: TCP segments sent and received and connections
//! changing state, as Solaris' (illumos') tcp provider names its probes
//! (bpf/tcp.bpf.c says which kernel events they are). The entry programs
//! fill the stable structs of bpf/tcp.h and bpf/ip.h and pass their
//! addresses as arg0..arg5; the typed arguments are those addresses with
//! the D types of d-library/tcp.d and ip.d, which declare the same structs
//! (a unit test below holds them to one layout).

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{
    arg, Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider,
    RAW_TP,
};

super::entry_programs!("tcp");

pub(crate) struct TcpProbe {
    pub name: &'static str,
    /// The entry program in bpf/tcp.bpf.c and the raw tracepoint it attaches to.
    pub program: &'static str,
    pub tracepoint: &'static str,
    pub args: &'static [ProbeArg],
    /// Needs the table of connections by address (received segments).
    pub finds_connections: bool,
}

/// A segment's arguments: send, receive and the connect/accept probes.
const SEGMENT: &[ProbeArg] = &[
    arg("pktinfo_t *", "(pktinfo_t *)arg0"),
    arg("csinfo_t *", "(csinfo_t *)arg1"),
    arg("ipinfo_t *", "(ipinfo_t *)arg2"),
    arg("tcpsinfo_t *", "(tcpsinfo_t *)arg3"),
    arg("tcpinfo_t *", "(tcpinfo_t *)arg4"),
];

/// state-change's: Solaris passes no segment (args[0], [2] and [4] void).
const STATE_CHANGE: &[ProbeArg] = &[
    arg("void", "(void)arg0"),
    arg("csinfo_t *", "(csinfo_t *)arg1"),
    arg("void", "(void)arg2"),
    arg("tcpsinfo_t *", "(tcpsinfo_t *)arg3"),
    arg("void", "(void)arg4"),
    arg("tcplsinfo_t *", "(tcplsinfo_t *)arg5"),
];

const fn probe(name: &'static str, program: &'static str, tracepoint: &'static str) -> TcpProbe {
    TcpProbe { name, program, tracepoint, args: SEGMENT, finds_connections: false }
}

/// In slot order: the index is DT_TCP_* in bpf/tcp.bpf.c.
pub(crate) const PROBES: &[TcpProbe] = &[
    probe("send", "dt_tcp_send", "net_dev_queue"),
    TcpProbe { finds_connections: true, ..probe("receive", "dt_tcp_receive", "netif_receive_skb") },
    TcpProbe { args: STATE_CHANGE, ..probe("state-change", "dt_tcp_state_change", "inet_sock_set_state") },
    probe("connect-request", "dt_tcp_connect_request", "net_dev_queue"),
    probe("connect-established", "dt_tcp_connect_established", "inet_sock_set_state"),
    probe("connect-refused", "dt_tcp_connect_refused", "tcp_receive_reset"),
    probe("accept-established", "dt_tcp_accept_established", "inet_sock_set_state"),
    probe("accept-refused", "dt_tcp_accept_refused", "net_dev_queue"),
];

/// The programs that keep the table of connections by address, attached
/// before the probes that read it.
const CONNECTION_TABLE: &[(&str, &str)] = &[("dt_tcp_track", "inet_sock_set_state"), ("dt_tcp_learn", "net_dev_queue")];

#[derive(Default)]
pub(crate) struct Tcp {
    id_base: u32,
}

impl Provider for Tcp {
    fn name(&self) -> &'static str {
        "tcp"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), PROBES.iter().map(|p| p.name));
    }

    fn typed_args(&self, probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        Some(PROBES[probe.key as usize].args)
    }

    fn argument_attributes(&self) -> Attributes {
        ("Evolving", "Evolving", "ISA")
    }

    fn library(&self) -> &'static [(&'static str, &'static str)] {
        &[("tcp.d", include_str!("../../d-library/tcp.d"))]
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        // cs_pid: bpf/inet.h's dt_inet_process_pid.
        cx.on_task_stack = true;
        let slots = super::enabled_slots(enabled);
        let finds_connections = slots.iter().any(|s| PROBES[*s].finds_connections);
        let mut open = cx.open(skel::TcpSkelBuilder::default(), "tcp")?;
        // Only the entry programs of the enabled probes are loaded.
        let mut wanted: Vec<&str> = slots.iter().map(|s| PROBES[*s].program).collect();
        if finds_connections {
            wanted.extend(CONNECTION_TABLE.iter().map(|(program, _)| *program));
        }
        super::autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_tcp_id_base = self.id_base;
        }
        let skel = open.load().context("loading the tcp entry programs")?;
        cx.fill_slots(&skel.maps.dt_tcp_progs, enabled, RAW_TP)?;
        if finds_connections {
            for (program, tracepoint) in CONNECTION_TABLE {
                cx.attach_raw_tp_or_warn(skel.object(), "tcp:::receive", program, tracepoint);
            }
        }
        for slot in slots {
            let probe = &PROBES[slot];
            cx.attach_raw_tp_or_warn(skel.object(), &format!("tcp:::{}", probe.name), probe.program, probe.tracepoint);
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
            include_str!("../../bpf/tcp.bpf.c"),
            "TCP",
            &probes,
        );
    }

    /// Each argument struct of d-library/tcp.d has bpf/tcp.h's layout.
    #[test]
    fn d_declarations_have_the_entry_programs_layout() {
        crate::provider::testing::assert_same_layouts(
            include_bytes!(concat!(env!("OUT_DIR"), "/tcp.bpf.o")),
            "tcp",
            &[
                ("tcpsinfo_t", "tcpsinfo"),
                ("tcpinfo_t", "tcpinfo"),
                ("tcplsinfo_t", "tcplsinfo"),
                ("pktinfo_t", "pktinfo"),
                ("csinfo_t", "csinfo"),
                ("ipinfo_t", "ipinfo"),
            ],
        );
    }
}
