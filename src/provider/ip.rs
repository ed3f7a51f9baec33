//! The ip provider: `ip:::send` and `ip:::receive`, IPv4 and IPv6 packets
//! leaving and arriving at any interface, as Solaris' ip provider names
//! them (bpf/ip.bpf.c says which kernel events they are). The entry program
//! fills the stable structs of bpf/ip.h and passes their addresses as
//! arg0..arg5; the typed arguments are those addresses with the D types of
//! providers/ip.d, which declares the same structs (a unit test below holds
//! the two to one layout).

use super::{arg, Attach, Probe, ProbeArg};

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

pub(crate) fn id_base() -> u32 {
    super::io::id_base() + super::io::PROBES.len() as u32
}

pub(crate) fn provide(probes: &mut Vec<Probe>) {
    for (slot, probe) in PROBES.iter().enumerate() {
        probes.push(Probe {
            id: id_base() + slot as u32,
            provider: "ip",
            module: String::new(),
            function: String::new(),
            name: probe.name.to_string(),
            attach: Attach::Ip { slot: slot as u32 },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::check::{CheckOptions, Checker};
    use crate::sema::ir::{RecordBody, Type};

    #[test]
    fn slots_follow_the_entry_programs_order() {
        let c = include_str!("../../bpf/ip.bpf.c");
        for (slot, probe) in PROBES.iter().enumerate() {
            let define = format!("#define DT_IP_{} {slot}\n", probe.name.to_uppercase());
            assert!(c.contains(&define), "{define}");
            assert!(c.contains(&format!("int {}(", probe.program)), "{}", probe.program);
            assert!(c.contains(&format!("SEC(\"raw_tp/{}\")\nint {}(", probe.tracepoint, probe.program)));
        }
        assert!(c.contains(&format!("#define DT_IP_COUNT {}\n", PROBES.len())));
    }

    /// A D member's size, as C would have it.
    fn d_size(ty: &Type) -> usize {
        match ty {
            Type::Int { size, .. } => usize::from(*size),
            Type::Pointer(_) => 8,
            Type::Array(of, len) => d_size(of) * len,
            Type::Struct(r) => r.size,
            other => panic!("unexpected member type {}", other.name()),
        }
    }

    /// Each argument struct of providers/ip.d has the members of bpf/ip.h's,
    /// in the same order, at the same offsets, of the same sizes: the C
    /// side is read from the compiled entry program's BTF.
    #[test]
    fn d_declarations_have_the_entry_programs_layout() {
        use libbpf_rs::btf::types::{self, MemberAttr};
        use libbpf_rs::btf::{Btf, HasSize};
        use libbpf_rs::AsRawLibbpf;

        let object = include_bytes!(concat!(env!("OUT_DIR"), "/ip.bpf.o"));
        let btf = Btf::from_raw("ip", object).expect("BTF").expect("the object has BTF");
        let mut registry = crate::provider::Registry::new();
        let mut checker = Checker::new(
            CheckOptions { macro_args: &[], zero_matches_ok: false, strsize: 256, target_pid: None },
            &mut registry,
        );
        let library = crate::compile::parse_library().expect("the D library parses");
        checker.load_library(&library).map_err(|e| e.message).expect("the D library loads");
        // Every pointer argument names one of these structs.
        let mut names: Vec<&str> = ARGS.iter().map(|a| a.ty.trim_end_matches(" *")).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ARGS.len());
        for typedef in names {
            let name = typedef.trim_end_matches("_t");
            let d = checker.declared_struct(typedef).unwrap_or_else(|| panic!("{typedef} is not declared in ip.d"));
            let RecordBody::D(d_members) = &d.body else { panic!("{typedef} is not a D struct") };
            let c = btf.type_by_name::<types::Struct>(name).unwrap_or_else(|| panic!("struct {name} not in ip.h"));
            let c_members: Vec<(String, usize, usize)> = c
                .iter()
                .map(|m| {
                    let MemberAttr::Normal { offset } = m.attr else { panic!("bit-field in struct {name}") };
                    let size = unsafe { libbpf_sys::btf__resolve_size(btf.as_libbpf_object().as_ptr(), m.ty.into()) };
                    let member = m.name.map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    (member, offset as usize / 8, size as usize)
                })
                .collect();
            let d_members: Vec<(String, usize, usize)> =
                d_members.iter().map(|m| (m.name.clone(), m.offset, d_size(&m.ty))).collect();
            assert_eq!(d_members, c_members, "{typedef} (providers/ip.d) and struct {name} (bpf/ip.h) differ");
            assert_eq!(d.size, c.size(), "size of {typedef}");
        }
    }
}
