//! The sdt provider: every kernel tracepoint, `sdt:<group>::<name>`, as
//! dtrace-utils names them (bpf/sdt.bpf.c). argN is the Nth field of the
//! tracepoint's record after the common ones, as its tracefs format lists
//! them; args[N] is typed from the field's declaration (`pid_t pid`,
//! `char prev_comm[16]` as `char *`, `__data_loc char[] filename` as the
//! `char *` it locates). The probes are listed when a description could
//! name one, not at every start.

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::fd::OwnedFd;

use anyhow::{anyhow, Context, Result};
use libbpf_rs::skel::OpenSkel;

use super::copies;
use super::desc::ProbeDesc;
use super::{
    Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, ProvideContext,
    Provider, TRACEPOINT,
};
use crate::defs::layout::{TpField, FIELD_ADDRESS, FIELD_DATA_LOC, FIELD_SIGNED, FIELD_UNSIGNED};

super::entry_programs!("sdt");

/// Arguments a probe passes to D (arg0..arg9).
const NARGS: usize = 10;

#[derive(Default)]
pub(crate) struct Sdt {
    /// Whether the tracepoints are in the probe table yet.
    listed: bool,
    /// Each probe's (group, name): a probe's key is its index here.
    events: Vec<(&'static str, &'static str)>,
    /// Fields read from tracefs, by key.
    formats: RefCell<HashMap<u64, Option<Format>>>,
}

/// A tracepoint's record as its format file gives it.
#[derive(Debug, Clone)]
pub(crate) struct Format {
    /// The fields after the common ones, at most NARGS: how each is read
    /// and its D type.
    fields: Vec<(TpField, String)>,
    args: &'static [ProbeArg],
}

impl Sdt {
    fn format(&self, key: u64) -> Option<Format> {
        if let Some(known) = self.formats.borrow().get(&key) {
            return known.clone();
        }
        let (group, name) = *self.events.get(key as usize)?;
        let format = super::tracefs::read(&format!("events/{group}/{name}/format")).ok().map(|t| parse_format(&t));
        self.formats.borrow_mut().insert(key, format.clone());
        format
    }
}

/// Lists every tracepoint of `provider` (sdt or rawtp) in `probes` once a
/// description could name one; returns the (group, name) of each, in key order.
pub(crate) fn list_tracepoints(
    provider: &'static str,
    desc: &ProbeDesc,
    listed: &mut bool,
    probes: &mut ProbeTable,
) -> Option<Vec<(&'static str, &'static str)>> {
    if *listed || !desc.could_match_provider(provider) {
        return None;
    }
    // `BEGIN` (any provider, a literal name) need not list 2,000 events to
    // learn that no tracepoint has that name.
    let solaris_name = provider == "sdt" && SOLARIS_PROBES.iter().any(|(n, _)| *n == desc.name);
    if desc.name_is_literal() && !solaris_name && !super::tracefs::has_tracepoint_named(&desc.name) {
        return None;
    }
    *listed = true;
    let mut events = super::tracefs::tracepoints();
    for (key, (group, name)) in events.iter().enumerate() {
        probes.add(provider, group, "", name, key as u64);
    }
    if provider == "sdt" {
        for (solaris, (group, name)) in SOLARIS_PROBES {
            if events.contains(&(group, name)) {
                probes.add(provider, group, "", solaris, events.len() as u64);
                events.push((group, name));
            }
        }
    }
    Some(events)
}

/// Solaris' sdt probes that scripts count interrupts with, on the
/// tracepoints that mark the same points (arg0 is the IRQ number, where
/// Solaris gives the device's dev_info_t; interrupt-complete's arg1 is the
/// handler's irqreturn_t, non-zero when it claimed the interrupt, as
/// Solaris' arg1).
const SOLARIS_PROBES: [(&str, (&str, &str)); 2] =
    [("interrupt-start", ("irq", "irq_handler_entry")), ("interrupt-complete", ("irq", "irq_handler_exit"))];

impl Provider for Sdt {
    fn name(&self) -> &'static str {
        "sdt"
    }

    fn populate(&mut self, _probes: &mut ProbeTable) {}

    fn provide(&mut self, desc: &ProbeDesc, probes: &mut ProbeTable, _cx: &mut ProvideContext) -> Option<Vec<u32>> {
        if let Some(events) = list_tracepoints("sdt", desc, &mut self.listed, probes) {
            self.events = events;
        }
        None
    }

    fn typed_args(&self, probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        self.format(probe.key).map(|f| f.args)
    }

    /// As dtrace-utils gives its sdt probes.
    fn argument_attributes(&self) -> Attributes {
        ("Private", "Private", "Unknown")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let slots = enabled.len() as u32;
        let mut open = cx.open(skel::SdtSkelBuilder::default(), "sdt")?;
        open.maps.dt_sdt_progs.set_max_entries(slots)?;
        open.maps.dt_sdt_probes.set_max_entries(slots)?;
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_need_args = cx.needs.args || !cx.needs.typed_args_used.is_empty();
        }
        let skel = open.load().context("loading the sdt entry program")?;
        let mut attached: Vec<OwnedFd> = Vec::new();
        for (slot, e) in enabled.iter().enumerate() {
            let slot = slot as u32;
            let (group, name) = self.events[e.probe.key as usize];
            let format = self
                .format(e.probe.key)
                .ok_or_else(|| anyhow!("cannot read the format of tracepoint {group}:{name}"))?;
            let fields: Vec<TpField> = format.fields.iter().map(|(f, _)| *f).collect();
            copies::set_probe(&skel.maps.dt_sdt_probes, slot, e.probe.id, &fields)?;
            let id = super::tracefs::tracepoint_ids(&[format!("{group}/{name}")])[0]
                .ok_or_else(|| anyhow!("tracepoint {group}:{name} has no ID in tracefs"))?;
            let prog = cx
                .probe_copy(
                    &skel.progs.dt_sdt_entry,
                    slot,
                    copies::Target::default(),
                    e,
                    &skel.maps.dt_sdt_progs,
                    TRACEPOINT,
                )
                .with_context(|| format!("loading the entry program of {}", e.probe.full_name()))?;
            let event = super::perf::open_tracepoint(id)?;
            copies::attach_perf(&prog, &event).with_context(|| format!("attaching {}", e.probe.full_name()))?;
            attached.extend([prog, event]);
        }
        Ok(Box::new(Loaded((skel, attached))))
    }
}

/// The fields of a tracepoint's format file after the common ones.
fn parse_format(text: &str) -> Format {
    let mut fields = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("field:") else { continue };
        let mut parts = rest.split(';').map(str::trim);
        let declaration = parts.next().unwrap_or_default();
        let mut offset = 0u16;
        let mut size = 0u8;
        let mut signed = false;
        for part in parts {
            if let Some(v) = part.strip_prefix("offset:") {
                offset = v.parse().unwrap_or(0);
            } else if let Some(v) = part.strip_prefix("size:") {
                size = v.parse().unwrap_or(0);
            } else if let Some(v) = part.strip_prefix("signed:") {
                signed = v == "1";
            }
        }
        let (ty, name) = declaration.rsplit_once(' ').unwrap_or(("int", declaration));
        if name.starts_with("common_") {
            continue;
        }
        fields.push(field(ty.trim(), name, offset, size, signed));
        if fields.len() == NARGS {
            break;
        }
    }
    let args = super::cast_args(fields.iter().map(|(_, ty)| ty.clone()));
    Format { fields, args }
}

/// How one field is read, and its D type.
fn field(ty: &str, name: &str, offset: u16, size: u8, signed: bool) -> (TpField, String) {
    let read = |kind: u8| TpField { offset, size, kind };
    let ty = ty.trim_start_matches("const ").trim_start_matches("volatile ").trim();
    if let Some(of) = ty.strip_prefix("__data_loc ") {
        let d = if of.starts_with("char") { "char *" } else { "void *" };
        return (read(FIELD_DATA_LOC), d.into());
    }
    if name.contains('[') {
        // An array: argN is its address.
        let d = match ty {
            t if t.ends_with("char") && t != "unsigned char" => "char *",
            "u8" | "__u8" | "unsigned char" => "uint8_t *",
            _ => "void *",
        };
        return (read(FIELD_ADDRESS), d.into());
    }
    if ty.ends_with('*') {
        let pointee = ty.trim_end_matches('*').trim();
        let d = if pointee == "char" {
            "char *".to_string()
        } else if pointee.starts_with("struct ") && !pointee.contains('*') {
            format!("{pointee} *")
        } else {
            "void *".to_string()
        };
        return (read(FIELD_UNSIGNED), d);
    }
    if !matches!(size, 1 | 2 | 4 | 8) {
        return (read(FIELD_ADDRESS), "void *".into());
    }
    let d = match ty {
        "int" | "unsigned int" | "long" | "unsigned long" | "short" | "unsigned short" | "long long"
        | "unsigned long long" | "char" | "unsigned char" | "pid_t" | "size_t" | "ssize_t" => ty.to_string(),
        _ => format!("{}int{}_t", if signed { "" } else { "u" }, size as u32 * 8),
    };
    (read(if signed { FIELD_SIGNED } else { FIELD_UNSIGNED }), d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_files_give_each_field_its_reading_and_type() {
        let text = "name: sched_process_exec\nID: 365\nformat:\n\
            \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
            \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
            \tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n\
            \tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n\
            \tfield:char prev_comm[16];\toffset:16;\tsize:16;\tsigned:0;\n\
            \tfield:u64 bytes;\toffset:32;\tsize:8;\tsigned:0;\n\
            \tfield:const void * skbaddr;\toffset:40;\tsize:8;\tsigned:0;\n\
            \tfield:struct sock * sk;\toffset:48;\tsize:8;\tsigned:0;\n";
        let f = parse_format(text);
        let got: Vec<(u16, u8, u8, &str)> =
            f.fields.iter().map(|(r, ty)| (r.offset, r.size, r.kind, ty.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (8, 4, FIELD_DATA_LOC, "char *"),
                (12, 4, FIELD_SIGNED, "pid_t"),
                (16, 16, FIELD_ADDRESS, "char *"),
                (32, 8, FIELD_UNSIGNED, "uint64_t"),
                (40, 8, FIELD_UNSIGNED, "void *"),
                (48, 8, FIELD_UNSIGNED, "struct sock *"),
            ]
        );
        assert_eq!(f.args[1].expr, "(pid_t)arg1");
    }
}
