//! The provider registry: every probe the running system offers, with its
//! stable numeric ID, and how each provider attaches.
//!
//! Providers are static tables first (see each file); the registry lists
//! them in one order, which fixes the probe IDs `dtrace -l` prints.
//! Providers that create probes on demand (profile) mint IDs after the
//! listed ones.

pub(crate) mod dtrace;
pub(crate) mod io;
pub(crate) mod ip;
pub(crate) mod pid;
pub(crate) mod proc;
pub(crate) mod profile;
pub(crate) mod sched;
pub(crate) mod syscall;
pub(crate) mod sysinfo;

use crate::sema::probes::ProbeDesc;

/// Which entry program serves a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attach {
    /// dtrace:::BEGIN/END/ERROR, fired by the consumer through test_run.
    Dtrace { slot: u32 },
    /// syscall entry (`ret == false`) or return of system call `nr`.
    Syscall { nr: u32, ret: bool },
    /// A cpu-clock perf event every `period_ns`, on every CPU or only one (tick).
    Profile { period_ns: u64, every_cpu: bool },
    /// sysinfo statistic number `stat` (providers/sysinfo/stats.h order).
    Sysinfo { stat: u32 },
    /// proc probe in slot `slot` (proc::PROBES order).
    Proc { slot: u32 },
    /// io probe in slot `slot` (io::PROBES order).
    Io { slot: u32 },
    /// sched probe in slot `slot` (sched::PROBES order).
    Sched { slot: u32 },
    /// ip probe in slot `slot` (ip::PROBES order).
    Ip { slot: u32 },
    /// pid probe: a uprobe (uretprobe if `ret`) at `offset` in file `path`,
    /// for process `pid` only.
    Pid { pid: u32, path: std::path::PathBuf, offset: u64, ret: bool },
}

/// A probe's typed argument: its D type and the expression that computes it
/// from the raw arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProbeArg {
    pub ty: &'static str,
    pub expr: &'static str,
}

pub(crate) const fn arg(ty: &'static str, expr: &'static str) -> ProbeArg {
    ProbeArg { ty, expr }
}

/// DTrace's stability attributes: identifier names, data semantics,
/// dependency class.
type Attributes = (&'static str, &'static str, &'static str);

/// The stability of each provider's arguments, as Solaris documents them.
fn argument_attributes(provider: &str) -> Attributes {
    match provider {
        "dtrace" => ("Stable", "Stable", "Common"),
        "profile" => ("Evolving", "Evolving", "Common"),
        "proc" | "io" | "ip" | "sched" => ("Evolving", "Evolving", "ISA"),
        // As the Solaris Dynamic Tracing Guide gives the pid provider's.
        p if pid::provider_pid(p).is_some() => ("Private", "Private", "Unknown"),
        _ => ("Private", "Private", "ISA"),
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Probe {
    pub id: u32,
    pub provider: &'static str,
    pub module: String,
    pub function: String,
    pub name: String,
    pub attach: Attach,
}

impl Probe {
    pub(crate) fn full_name(&self) -> String {
        format!("{}:{}:{}:{}", self.provider, self.module, self.function, self.name)
    }
}

/// Appends the probes of a provider whose probes are slots of one entry
/// program array: probe `names[i]` gets ID `base + i` and `attach(i)`.
fn provide_slots<'a>(
    probes: &mut Vec<Probe>,
    provider: &'static str,
    base: u32,
    names: impl Iterator<Item = &'a str>,
    attach: fn(u32) -> Attach,
) {
    for (slot, name) in names.enumerate() {
        let slot = slot as u32;
        probes.push(Probe {
            id: base + slot,
            provider,
            module: String::new(),
            function: String::new(),
            name: name.to_string(),
            attach: attach(slot),
        });
    }
}

/// Asserts that an entry-program file numbers its probe slots as the
/// provider's table orders them (`#define DT_<PREFIX>_<NAME> <slot>` and
/// `DT_<PREFIX>_COUNT`) and has each probe's program on its raw tracepoint.
#[cfg(test)]
pub(crate) fn assert_slots_follow_the_entry_programs(
    c: &str,
    prefix: &str,
    probes: &[(&str, &str, &str)], // (name, program, tracepoint)
) {
    for (slot, (name, program, tracepoint)) in probes.iter().enumerate() {
        let define = format!("#define DT_{prefix}_{} {slot}\n", name.replace('-', "_").to_uppercase());
        assert!(c.contains(&define), "{define}");
        let entry = format!("SEC(\"raw_tp/{tracepoint}\")\nint {program}(");
        assert!(c.contains(&entry), "{entry}");
    }
    assert!(c.contains(&format!("#define DT_{prefix}_COUNT {}\n", probes.len())));
}

/// All probes, in ID order, plus probes created on demand by a script.
pub(crate) struct Registry {
    probes: Vec<Probe>,
    /// The pid provider's processes and modules.
    pub(crate) pids: pid::Pids,
}

impl Registry {
    pub(crate) fn new() -> Registry {
        let mut probes = Vec::new();
        dtrace::provide(&mut probes);
        syscall::provide(&mut probes);
        profile::provide(&mut probes);
        sysinfo::provide(&mut probes);
        proc::provide(&mut probes);
        io::provide(&mut probes);
        ip::provide(&mut probes);
        sched::provide(&mut probes);
        Registry { probes, pids: pid::Pids::default() }
    }

    pub(crate) fn all(&self) -> &[Probe] {
        &self.probes
    }

    pub(crate) fn get(&self, id: u32) -> Option<&Probe> {
        // IDs are increasing but not dense (syscall numbers have gaps).
        self.probes.binary_search_by_key(&id, |p| p.id).ok().map(|i| &self.probes[i])
    }

    /// The typed arguments (`args[]`) of probe `id`, for providers that
    /// type them; other probes' args[n] is argN.
    pub(crate) fn typed_args(&self, id: u32) -> Option<&'static [ProbeArg]> {
        match self.get(id)?.attach {
            Attach::Proc { slot } => proc::PROBES.get(slot as usize).map(|p| p.args),
            Attach::Io { .. } => Some(io::args()),
            Attach::Ip { .. } => Some(ip::ARGS),
            Attach::Sched { slot } => sched::PROBES.get(slot as usize).map(|p| p.args),
            _ => None,
        }
    }

    /// Whether probe `id` fires for a thread other than the current one
    /// (its entry program names the thread in the probe context).
    pub(crate) fn fires_for_another_thread(&self, id: u32) -> bool {
        match self.get(id).map(|p| &p.attach) {
            Some(Attach::Sched { slot }) => sched::PROBES.get(*slot as usize).is_some_and(|p| p.other_thread),
            Some(Attach::Io { slot }) => io::PROBES.get(*slot as usize).is_some_and(|p| p.other_thread),
            _ => false,
        }
    }

    /// `dtrace -lv`'s block for probe `id`: its attributes and argument
    /// types, as dtrace(1)'s print_probe_info lays them out.
    pub(crate) fn verbose_info(&self, id: u32) -> String {
        let Some(probe) = self.get(id) else { return String::new() };
        let mut text = String::new();
        let mut attributes = |title: &str, (names, data, class): Attributes| {
            text.push_str(&format!("\n\t{title}\n"));
            text.push_str(&format!("\t\tIdentifier Names: {names}\n"));
            text.push_str(&format!("\t\tData Semantics:   {data}\n"));
            text.push_str(&format!("\t\tDependency Class: {class}\n"));
        };
        // Module and function names are Private/Unknown for every provider
        // here, and the description's attributes are the least of its parts.
        attributes("Probe Description Attributes", ("Private", "Private", "Unknown"));
        attributes("Argument Attributes", argument_attributes(probe.provider));
        text.push_str("\n\tArgument Types\n");
        match self.typed_args(id) {
            Some(args) if !args.is_empty() => {
                for (i, arg) in args.iter().enumerate() {
                    text.push_str(&format!("\t\targs[{i}]: {}\n", arg.ty));
                }
            }
            _ => text.push_str("\t\tNone\n"),
        }
        text.push('\n');
        text
    }

    /// IDs of the probes matching `desc`, creating on-demand probes (profile-N) if needed.
    pub(crate) fn matching(&mut self, desc: &ProbeDesc) -> Vec<u32> {
        if let Some(pid) = pid::provider_pid(&desc.provider) {
            let mut new = Vec::new();
            let ids = self.pids.matching(desc, pid, self.next_id(), &mut new);
            self.probes.extend(new);
            return ids;
        }
        let mut ids: Vec<u32> = self.probes.iter().filter(|p| desc.matches(p)).map(|p| p.id).collect();
        if ids.is_empty() {
            if let Some(probe) = profile::create(desc, self.next_id()) {
                ids.push(probe.id);
                self.probes.push(probe);
            }
        }
        ids
    }

    fn next_id(&self) -> u32 {
        self.probes.last().map_or(1, |p| p.id + 1)
    }
}

/// Asserts that each D struct of the D library (`providers/*.d`) has the
/// layout of its C twin in a compiled entry-program object: the same
/// members in the same order, at the same offsets, of the same sizes, and
/// the same size. The C side is read from the object's BTF. `pairs` are
/// (D typedef, C struct name).
#[cfg(test)]
pub(crate) fn assert_same_layouts(object: &[u8], object_name: &str, pairs: &[(&str, &str)]) {
    use crate::sema::check::{CheckOptions, Checker};
    use crate::sema::ir::{RecordBody, Type};
    use libbpf_rs::btf::types::{self, MemberAttr};
    use libbpf_rs::btf::{Btf, HasSize};
    use libbpf_rs::AsRawLibbpf;

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

    let btf = Btf::from_raw(object_name, object).expect("BTF").expect("the object has BTF");
    let mut registry = Registry::new();
    let mut checker = Checker::new(
        CheckOptions { macro_args: &[], zero_matches_ok: false, strsize: 256, target_pid: None },
        &mut registry,
    );
    let library = crate::compile::parse_library().expect("the D library parses");
    checker.load_library(&library).map_err(|e| e.message).expect("the D library loads");
    for (typedef, name) in pairs {
        let d =
            checker.declared_struct(typedef).unwrap_or_else(|| panic!("{typedef} is not declared in the D library"));
        let RecordBody::D(d_members) = &d.body else { panic!("{typedef} is not a D struct") };
        let c = btf
            .type_by_name::<types::Struct>(name)
            .unwrap_or_else(|| panic!("struct {name} is not in {object_name}'s BTF"));
        let c_members: Vec<(String, usize, usize)> = c
            .iter()
            .map(|m| {
                let MemberAttr::Normal { offset } = m.attr else { panic!("bit-field in struct {name}") };
                // SAFETY: the BTF object outlives the call; the type ID is one of its own.
                let size = unsafe { libbpf_sys::btf__resolve_size(btf.as_libbpf_object().as_ptr(), m.ty.into()) };
                let member = m.name.map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                (member, offset as usize / 8, size as usize)
            })
            .collect();
        let d_members: Vec<(String, usize, usize)> =
            d_members.iter().map(|m| (m.name.clone(), m.offset, d_size(&m.ty))).collect();
        assert_eq!(d_members, c_members, "{typedef} (D library) and struct {name} ({object_name}) differ");
        assert_eq!(d.size, c.size(), "size of {typedef}");
    }
}
