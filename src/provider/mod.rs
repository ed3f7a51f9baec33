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
        "proc" | "io" | "ip" => ("Evolving", "Evolving", "ISA"),
        p if pid::provider_pid(p).is_some() => ("Evolving", "Evolving", "ISA"),
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
            _ => None,
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
