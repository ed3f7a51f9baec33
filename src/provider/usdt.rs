//! The USDT provider: statically defined probes in applications,
//! `<provider><pid>:<module>:<function>:<name>` as DTrace names them
//! (`python1234:python3.11:_PyEval_EvalFrameDefault:function-entry`). On
//! Linux they are `.note.stapsdt` ELF notes (<sys/sdt.h>, and the headers
//! `dtrace -h` writes); the sites come from the process's executable and
//! every library it maps (`crate::process`), and `bpf/usdt.bpf.c` reads
//! each site's arguments as its note describes them.
//!
//! A probe is one (provider, module, function, name); the note's `__` in a
//! name is `-` (`function__entry` is `function-entry`), the module is the
//! file's name and the function the symbol that holds the site. One probe
//! may have several sites (a macro used twice in one function), each with
//! its own argument locations. A probe named without a pid (`python:::`)
//! means the -c and -p processes'. A provider glob (`python*:::`) names
//! every process with a matching provider, and keeps matching those that
//! exec later (`LateUsdt`: DTrace's retained enablings).
//!
//! Semaphores (`<provider>_<name>_semaphore`, which `*_ENABLED()` tests) are
//! the kernel's uprobe reference counters: it increments them in the
//! traced process while a site is attached and decrements them when the
//! link goes, however dtrace ends.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::{Link, MapCore, MapFlags};

use super::desc::{glob_match, split_pid, ProbeDesc};
use super::uprobe::{self, ClauseSlots, MAX_SINGLE_UPROBES};
use super::{
    Attributes, EnableContext, Enabled, Enabling, KernelFacts, LateContext, Loaded, Probe, ProbeArg, ProbeTable,
    ProvideContext, Provider, Retained,
};
use crate::process::UsdtNote;

super::entry_programs!("usdt");

/// Sites are numbered in 24 bits of the attach cookie.
const MAX_SITES: usize = 1 << 24;
/// Arguments a site passes to D (arg0..arg9).
const NARGS: usize = 10;

/// Where one argument of a site is, as its note's descriptor says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgLocation {
    Constant(i64),
    /// A register: its offset in the kernel's `struct pt_regs`.
    Register(u32),
    /// Memory at a register plus a displacement.
    Memory {
        register: u32,
        displacement: i64,
    },
}

/// One argument: where it is, its size in bytes and signedness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArgSpec {
    pub location: ArgLocation,
    pub size: u8,
    pub signed: bool,
}

/// A probe site in a file.
#[derive(Debug, Clone)]
struct Site {
    /// File offset of the site's instruction (what a uprobe attaches to).
    offset: u64,
    /// File offset of the probe's semaphore; 0 if it has none.
    semaphore: u64,
    /// Its arguments; None where a descriptor cannot be decoded.
    args: Vec<Option<ArgSpec>>,
    /// An `*_ENABLED()` test of a probe no other site has: attached only
    /// to hold the probe's semaphore, it fires nothing.
    enable_only: bool,
}

/// A USDT probe: its sites in one file of one process.
#[derive(Debug)]
struct UsdtProbe {
    pid: u32,
    path: PathBuf,
    sites: Vec<Site>,
}

/// The USDT probes of the processes descriptions have named, made once per
/// process.
#[derive(Default)]
pub(crate) struct Usdt {
    /// `<provider><pid>` names, made once each (Probe::provider is static).
    names: HashMap<String, &'static str>,
    /// Each probe's sites: a probe's key is its index here.
    probes: Vec<UsdtProbe>,
    /// (pid, stapsdt provider name, probe ID) of every probe made.
    made: Vec<(u32, String, u32)>,
    /// Processes whose probes are made.
    done: HashSet<u32>,
    /// Argument types from scripts' provider definitions, by (provider,
    /// probe name).
    declared: HashMap<(String, String), &'static [ProbeArg]>,
}

impl Provider for Usdt {
    fn name(&self) -> &'static str {
        "usdt"
    }

    fn populate(&mut self, _probes: &mut ProbeTable) {}

    fn provide(&mut self, desc: &ProbeDesc, probes: &mut ProbeTable, cx: &mut ProvideContext) -> Option<Vec<u32>> {
        // Any provider (`::main:`): the targets' probes are registered, as
        // every USDT provider of a process DTrace grabbed is, and matched
        // like any probe's.
        if desc.provider.is_empty() {
            for pid in cx.processes.targets.clone() {
                self.make_probes(pid, None, probes, cx);
            }
            return None;
        }
        let glob = desc.provider.contains(['*', '?', '[', '\\']);
        let (prefix, pid) = split_pid(&desc.provider);
        let pids = match pid {
            Some(pid) if !glob => {
                self.make_probes(pid, None, probes, cx);
                vec![pid]
            }
            _ => {
                // A provider the registry has (syscall) is not a USDT one.
                if !glob && probes.has_provider(&desc.provider) {
                    return None;
                }
                let mut pids = cx.processes.targets.clone();
                for &pid in &pids {
                    self.make_probes(pid, None, probes, cx);
                }
                if glob {
                    // `python*:::`: every process with a provider the glob
                    // matches, as DTrace's USDT providers are registered
                    // system-wide (the digits may be the glob's own:
                    // `prov*7` names the processes whose pid ends in 7).
                    for (pid, files) in self.processes_matching(&desc.provider, cx) {
                        self.make_probes(pid, Some(&files), probes, cx);
                        pids.push(pid);
                    }
                }
                pids
            }
        };
        // `python:::` (no pid, no glob): the targets' python<pid> probes.
        if pid.is_none() && !glob {
            let ids: Vec<u32> = self
                .made
                .iter()
                .filter(|(p, provider, _)| pids.contains(p) && *provider == prefix)
                .map(|(_, _, id)| *id)
                .filter(|&id| {
                    probes.get(id).is_some_and(|p| {
                        glob_match(&desc.module, &p.module)
                            && glob_match(&desc.function, &p.function)
                            && glob_match(&desc.name, &p.name)
                    })
                })
                .collect();
            return Some(ids);
        }
        // Otherwise the full names (python1234) are matched like any probe's.
        None
    }

    /// args[n] is argN as the provider definition's type, when a script
    /// defines the probe's provider; otherwise untyped (stapsdt notes carry
    /// sizes, not types).
    fn typed_args(&self, probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        let (provider, _) = split_pid(probe.provider);
        self.declared.get(&(provider.to_string(), probe.name.clone())).copied()
    }

    fn declare_provider(&mut self, name: &str, probes: &[(String, Vec<String>)]) {
        for (probe, types) in probes {
            let args = super::cast_args(types.iter().take(NARGS).cloned());
            self.declared.insert((probe_name(name), probe.clone()), args);
        }
    }

    fn retains(&self) -> bool {
        true
    }

    /// Descriptions with a provider glob keep matching: a process that
    /// execs later with a matching provider gets its probes then.
    fn retain(
        &self,
        retained: &[(usize, ProbeDesc)],
        first_id: u32,
        cx: &mut EnableContext,
    ) -> Result<Option<Box<dyn Retained>>> {
        if retained.is_empty() {
            return Ok(None);
        }
        let specs = LateUsdt::spec_entries(cx.late_probes);
        let (skel, multi) = uprobe::load(cx, |cx, multi| open_entry_programs(cx, multi, specs), "USDT probes need")?;
        let usdt = Usdt { declared: self.declared.clone(), ..Usdt::default() };
        Ok(Some(Box::new(LateUsdt {
            usdt,
            table: ProbeTable::starting_at(first_id, 0),
            processes: crate::process::Processes::default(),
            retained: retained.to_vec(),
            made_in: self.probes.iter().map(|p| (p.pid, p.path.clone())).collect(),
            skel,
            multi,
            slots: Vec::new(),
            live: HashMap::new(),
            free_specs: Vec::new(),
            next_spec: 0,
            max_probes: cx.late_probes as usize,
            said_full: false,
        })))
    }

    /// As dtrace-utils lists USDT probes (usdt/tst.multiprov-dupprobe):
    /// DTrace's default for a provider whose definition gives none.
    fn argument_attributes(&self) -> Attributes {
        ("Private", "Private", "Unknown")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        // One slot per distinct clause list; one spec per site.
        let mut slots = ClauseSlots::default();
        let mut placed: Vec<Placed> = Vec::new();
        let mut specs: Vec<&Site> = Vec::new();
        let mut undecoded: Vec<String> = Vec::new();
        for e in enabled {
            let slot = slots.slot(e.clauses);
            let probe = &self.probes[e.probe.key as usize];
            for site in &probe.sites {
                if let Some(n) = site.args.iter().position(Option::is_none) {
                    undecoded.push(format!("{} (arg{n})", e.probe.full_name()));
                }
                placed.push(Placed {
                    id: e.probe.id,
                    pid: probe.pid,
                    path: &probe.path,
                    site,
                    slot,
                    spec: specs.len() as u32,
                });
                specs.push(site);
            }
        }
        if specs.len() > MAX_SITES {
            bail!("too many USDT probe sites (the limit is {MAX_SITES})");
        }
        let entries = specs.len().max(1) as u32;
        let (skel, multi) = uprobe::load(cx, |cx, multi| open_entry_programs(cx, multi, entries), "USDT probes need")?;
        for (i, site) in specs.iter().enumerate() {
            write_spec(&skel, i as u32, site)?;
        }
        slots.fill(cx, &skel.maps.dt_usdt_progs, multi, "USDT")?;
        if multi {
            attach_multi(&skel, &placed, &mut cx.links)?;
        } else {
            attach_single(&skel, &placed, &mut cx.links)?;
        }
        match undecoded.as_slice() {
            [] => {}
            [one] => cx.warnings.push(format!("{one}: an argument's location cannot be decoded; it reads as 0")),
            many => cx.warnings.push(format!(
                "{} USDT probe sites have arguments whose location cannot be decoded (e.g. {}); they read as 0",
                many.len(),
                many[0]
            )),
        }
        Ok(Box::new(Loaded(skel)))
    }
}

/// The USDT probes of processes that exec after tracing began, made and
/// attached as each is found (DTrace's retained enablings), with entry
/// programs of their own. At most `max_probes` are enabled at a time
/// (nusdtprobes); a process's probes go, and their room with them, when it
/// exits.
struct LateUsdt {
    usdt: Usdt,
    table: ProbeTable,
    processes: crate::process::Processes,
    /// (clause index, description) of every provider glob.
    retained: Vec<(usize, ProbeDesc)>,
    /// (process, file) of every probe made, at start or since.
    made_in: HashSet<(u32, PathBuf)>,
    skel: skel::UsdtSkel<'static>,
    multi: bool,
    /// The clause list of each program-array slot.
    slots: Vec<Vec<usize>>,
    /// The processes with probes made here, by pid.
    live: HashMap<u32, LiveProcess>,
    /// Spec map entries free again, and the first never used.
    free_specs: Vec<u32>,
    next_spec: u32,
    max_probes: usize,
    /// Whether the limit has been said to be reached.
    said_full: bool,
}

/// A process's probes made after tracing began.
struct LiveProcess {
    /// Its start time (/proc/PID/stat), which tells a reused pid.
    started: Option<u64>,
    ids: Vec<u32>,
    specs: Vec<u32>,
    links: Vec<Link>,
}

impl LateUsdt {
    /// The spec map's entries: room for a few sites per probe.
    fn spec_entries(max_probes: u32) -> u32 {
        (4 * max_probes).max(1024)
    }
}

impl Retained for LateUsdt {
    fn reap(&mut self) -> Vec<u32> {
        let gone: Vec<u32> = self
            .live
            .iter()
            .filter(|(pid, p)| crate::process::start_time(**pid) != p.started || p.started.is_none())
            .map(|(pid, _)| *pid)
            .collect();
        let mut ids = Vec::new();
        for pid in gone {
            let Some(p) = self.live.remove(&pid) else { continue };
            // Dropping the links detaches them (and lets go of semaphores).
            drop(p.links);
            self.free_specs.extend(p.specs);
            ids.extend(p.ids);
            self.made_in.retain(|(made, _)| *made != pid);
            self.usdt.done.remove(&pid);
        }
        ids
    }

    fn process_started(&mut self, pid: u32, cx: &mut LateContext) -> Result<Vec<Probe>> {
        let globs: Vec<&str> = self.retained.iter().map(|(_, d)| d.provider.as_str()).collect();
        // A file whose probes this process has (made at start, or at an
        // earlier look) keeps them: its links follow the process.
        let files: Vec<PathBuf> = self
            .processes
            .mapped_files(pid)
            .into_iter()
            .filter(|path| !self.made_in.contains(&(pid, path.clone())))
            .filter(|path| {
                let providers = self.processes.note_providers(path);
                providers.iter().any(|p| globs.iter().any(|g| glob_names_provider(g, p, pid)))
            })
            .collect();
        if files.is_empty() {
            return Ok(Vec::new());
        }
        self.made_in.extend(files.iter().map(|f| (pid, f.clone())));
        self.usdt.done.remove(&pid);
        let before = self.table.len();
        let mut pcx = ProvideContext { processes: &mut self.processes, kernel: &mut *cx.kernel, refusal: None };
        self.usdt.make_probes(pid, Some(&files), &mut self.table, &mut pcx);
        let ty = if self.multi { super::KPROBE_UPROBE_MULTI } else { super::KPROBE };
        let live_probes: usize = self.live.values().map(|p| p.ids.len()).sum();
        let process = self.live.entry(pid).or_insert_with(|| LiveProcess {
            started: crate::process::start_time(pid),
            ids: Vec::new(),
            specs: Vec::new(),
            links: Vec::new(),
        });
        let mut made = Vec::new();
        let mut placed = Vec::new();
        let mut refused = 0;
        for probe in self.table.added_since(before) {
            let mut clauses: Vec<usize> = self
                .retained
                .iter()
                .filter(|(_, d)| {
                    glob_match(&d.provider, probe.provider)
                        && glob_match(&d.module, &probe.module)
                        && glob_match(&d.function, &probe.function)
                        && glob_match(&d.name, &probe.name)
                })
                .map(|(c, _)| *c)
                .collect();
            clauses.sort_unstable();
            clauses.dedup();
            if clauses.is_empty() {
                continue;
            }
            let sites = &self.usdt.probes[probe.key as usize];
            let spec_room =
                self.free_specs.len() + (self.skel.maps.dt_usdt_specs.max_entries() - self.next_spec) as usize;
            if live_probes + made.len() >= self.max_probes || sites.sites.len() > spec_room {
                refused += 1;
                continue;
            }
            let slot = match self.slots.iter().position(|c| *c == clauses) {
                Some(slot) => slot,
                None => {
                    let capacity = self.skel.maps.dt_usdt_progs.max_entries() as usize;
                    if self.slots.len() == capacity {
                        bail!("too many different clause lists on USDT probes (the limit is {capacity})");
                    }
                    let fd = (cx.clause_program)(&clauses, ty)?;
                    let slot = self.slots.len();
                    self.skel.maps.dt_usdt_progs.update(
                        &(slot as u32).to_ne_bytes(),
                        &fd.to_ne_bytes(),
                        MapFlags::ANY,
                    )?;
                    self.slots.push(clauses);
                    slot
                }
            };
            for site in &sites.sites {
                let spec = self.free_specs.pop().unwrap_or_else(|| {
                    self.next_spec += 1;
                    self.next_spec - 1
                });
                write_spec(&self.skel, spec, site)?;
                process.specs.push(spec);
                placed.push(Placed { id: probe.id, pid, path: &sites.path, site, slot: slot as u32, spec });
            }
            process.ids.push(probe.id);
            made.push(probe.clone());
        }
        if refused > 0 && !self.said_full {
            self.said_full = true;
            cx.warnings.push(format!(
                "{refused} USDT probes of process {pid} not enabled: more than nusdtprobes ({}) probes of \
                 processes found since tracing began would be enabled at once",
                self.max_probes
            ));
        }
        if self.multi {
            attach_multi(&self.skel, &placed, &mut process.links)?;
        } else {
            attach_single(&self.skel, &placed, &mut process.links)?;
        }
        Ok(made)
    }
}

/// An enabled site: its probe, where it is, its spec's index and the slot
/// of its clause list's program.
struct Placed<'a> {
    id: u32,
    pid: u32,
    path: &'a Path,
    site: &'a Site,
    slot: u32,
    spec: u32,
}

impl Placed<'_> {
    /// The attach cookie: probe ID, spec index and slot (bpf/usdt.bpf.c).
    fn cookie(&self) -> u64 {
        (u64::from(self.id) << 32) | (u64::from(self.spec) << 8) | u64::from(self.slot)
    }
}

/// Opens and loads the entry programs (the multi-uprobe one or the single
/// one) with room for `specs` sites.
fn open_entry_programs(cx: &EnableContext, multi: bool, specs: u32) -> Result<skel::UsdtSkel<'static>> {
    let mut open = cx.open(skel::UsdtSkelBuilder::default(), "USDT")?;
    super::autoload_only(open.open_object_mut(), if multi { &["dt_usdt_fire_multi"] } else { &["dt_usdt_fire1"] });
    open.maps.dt_usdt_specs.set_max_entries(specs)?;
    if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
        super::script_needs!(ro, cx.needs);
    }
    Ok(open.load()?)
}

/// Puts site `site`'s argument locations at `index` of the spec map.
fn write_spec(skel: &skel::UsdtSkel<'static>, index: u32, site: &Site) -> Result<()> {
    let spec = encode_spec(site);
    // SAFETY: dt_usdt_spec is the skeleton's plain-old-data twin of the C
    // struct (no padding is read as anything but bytes).
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&spec as *const skel::types::dt_usdt_spec).cast::<u8>(),
            std::mem::size_of::<skel::types::dt_usdt_spec>(),
        )
    };
    skel.maps.dt_usdt_specs.update(&index.to_ne_bytes(), bytes, MapFlags::ANY)?;
    Ok(())
}

/// The C struct dt_usdt_spec for a site.
fn encode_spec(site: &Site) -> skel::types::dt_usdt_spec {
    let mut spec = skel::types::dt_usdt_spec::default();
    for (i, arg) in site.args.iter().take(NARGS).enumerate() {
        let Some(arg) = arg else { continue };
        let out = &mut spec.args[i];
        match arg.location {
            ArgLocation::Constant(v) => {
                out.kind = 1;
                out.value = v as u64;
            }
            ArgLocation::Register(off) => {
                out.kind = 2;
                out.reg_off = off;
            }
            ArgLocation::Memory { register, displacement } => {
                out.kind = 3;
                out.reg_off = register;
                out.value = displacement as u64;
            }
        }
        out.bitshift = 64 - 8 * u32::from(arg.size);
        out.is_signed = u32::from(arg.signed);
    }
    spec.enable_only = u32::from(site.enable_only);
    spec
}

/// Attaches every site with one multi-uprobe link per process and file
/// (Linux 6.6), semaphores as the links' reference counters.
fn attach_multi(skel: &skel::UsdtSkel<'static>, placed: &[Placed], links: &mut Vec<Link>) -> Result<()> {
    let mut groups: BTreeMap<(u32, &Path), Vec<&Placed>> = BTreeMap::new();
    for p in placed {
        groups.entry((p.pid, p.path)).or_default().push(p);
    }
    for ((pid, path), group) in groups {
        let opts = libbpf_rs::UprobeMultiOpts {
            offsets: group.iter().map(|p| p.site.offset as usize).collect(),
            ref_ctr_offsets: group.iter().map(|p| p.site.semaphore as usize).collect(),
            cookies: group.iter().map(|p| p.cookie()).collect(),
            retprobe: false,
            ..Default::default()
        };
        match skel.progs.dt_usdt_fire_multi.attach_uprobe_multi_with_opts(pid as i32, path, "", opts) {
            Ok(link) => links.push(link),
            // A process found system-wide may exit before it is attached:
            // its probes are gone, as in DTrace.
            Err(_) if process_gone(pid) => {}
            Err(e) => {
                return Err(e).with_context(|| format!("attaching USDT probes in {} for pid {pid}", path.display()))
            }
        }
    }
    Ok(())
}

/// Attaches one uprobe per site, where the kernel has no multi-uprobe links.
fn attach_single(skel: &skel::UsdtSkel<'static>, placed: &[Placed], links: &mut Vec<Link>) -> Result<()> {
    if placed.len() > MAX_SINGLE_UPROBES {
        bail!(
            "{} USDT probe sites need multi-uprobe links (Linux 6.6 or later); this kernel attaches uprobes one \
             by one, and at most {MAX_SINGLE_UPROBES} are allowed: name fewer probes",
            placed.len()
        );
    }
    for p in placed {
        let opts = libbpf_rs::UprobeOpts {
            cookie: p.cookie(),
            ref_ctr_offset: p.site.semaphore as usize,
            ..Default::default()
        };
        match skel.progs.dt_usdt_fire1.attach_uprobe_with_opts(p.pid as i32, p.path, p.site.offset as usize, opts) {
            Ok(link) => links.push(link),
            Err(_) if process_gone(p.pid) => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("attaching a USDT probe at {}+0x{:x} for pid {}", p.path.display(), p.site.offset, p.pid)
                })
            }
        }
    }
    Ok(())
}

/// Whether provider glob `glob` names stapsdt provider `note_provider` of
/// process `pid`, as `<provider><pid>` (`__` shown as `-`).
fn glob_names_provider(glob: &str, note_provider: &str, pid: u32) -> bool {
    glob_match(glob, &format!("{}{pid}", probe_name(note_provider)))
}

/// Whether process `pid` has exited (and been reaped).
fn process_gone(pid: u32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

/// A probe name as DTrace shows it: `__` is `-`.
pub(crate) fn probe_name(note_name: &str) -> String {
    note_name.replace("__", "-")
}

/// (stapsdt provider, function, probe name).
type ProbeKey = (String, String, String);

impl Usdt {
    /// The processes (but the targets) with a USDT provider `glob` names
    /// `<provider><pid>`, and which of their files declare one.
    fn processes_matching(&mut self, glob: &str, cx: &mut ProvideContext) -> Vec<(u32, Vec<PathBuf>)> {
        let mut found = Vec::new();
        for pid in crate::process::all_pids() {
            if cx.processes.targets.contains(&pid) || self.done.contains(&pid) {
                continue;
            }
            let files: Vec<PathBuf> = cx
                .processes
                .mapped_files(pid)
                .into_iter()
                .filter(|path| {
                    let providers = cx.processes.note_providers(path);
                    providers.iter().any(|p| glob_names_provider(glob, p, pid))
                })
                .collect();
            if !files.is_empty() {
                found.push((pid, files));
            }
        }
        found
    }

    /// Makes the probes of every USDT site in process `pid`'s files (or in
    /// `only` those of them).
    fn make_probes(&mut self, pid: u32, only: Option<&[PathBuf]>, probes: &mut ProbeTable, cx: &mut ProvideContext) {
        if !self.done.insert(pid) {
            return;
        }
        let modules = match only {
            Some(paths) => std::rc::Rc::new(cx.processes.some_modules(pid, paths)),
            None => cx.processes.modules(pid),
        };
        for module in modules.iter() {
            let elf = &module.elf;
            // Probes in file order of their first site; a probe only
            // tested (`*_ENABLED()`), never fired, has its tests as sites.
            let mut by_probe: Vec<(ProbeKey, Vec<&UsdtNote>)> = Vec::new();
            let fired: HashSet<(&str, &str)> =
                elf.usdt.iter().map(|n| (n.provider.as_str(), n.name.as_str())).collect();
            let tested = elf.usdt_enabled.iter().filter(|n| !fired.contains(&(n.provider.as_str(), n.name.as_str())));
            for note in elf.usdt.iter().chain(tested) {
                let function = elf.symbolize(note.vaddr).map_or_else(String::new, |(f, _)| f.to_string());
                let key = (note.provider.clone(), function, probe_name(&note.name));
                match by_probe.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, notes)) => notes.push(note),
                    None => by_probe.push((key, vec![note])),
                }
            }
            for ((note_provider, function, name), notes) in by_probe {
                let enable_only = !fired.contains(&(note_provider.as_str(), notes[0].name.as_str()));
                // `__` in a provider's name is `-` too (`test__prov` is
                // test-prov), as dtrace-utils shows it.
                let provider = probe_name(&note_provider);
                // What -G recorded of the definition: args[N] has its type,
                // argN is the native argument its map names.
                let argmap =
                    elf.usdt_argmaps.iter().find(|m| m.provider == note_provider && probe_name(&m.name) == name);
                if let Some(m) = argmap {
                    let types = super::cast_args(m.types.iter().take(NARGS).cloned());
                    self.declared.entry((provider.clone(), name.clone())).or_insert(types);
                }
                let sites: Vec<Site> = notes
                    .iter()
                    .filter_map(|n| {
                        let native: Vec<Option<ArgSpec>> =
                            n.args.split_whitespace().map(|a| parse_arg(a).ok()).collect();
                        let args = match argmap {
                            Some(m) => m.map.iter().map(|&i| native.get(i).copied().flatten()).collect(),
                            None => native,
                        };
                        Some(Site {
                            offset: elf.file_offset(n.vaddr)?,
                            semaphore: if n.semaphore == 0 { 0 } else { elf.counter_offset(n.semaphore)? },
                            args,
                            enable_only,
                        })
                    })
                    .collect();
                if sites.is_empty() {
                    continue;
                }
                let full = format!("{provider}{pid}");
                let provider_name: &'static str =
                    self.names.entry(full.clone()).or_insert_with(|| Box::leak(full.into_boxed_str()));
                let key = self.probes.len() as u64;
                self.probes.push(UsdtProbe { pid, path: elf.path.clone(), sites });
                let id = probes.add(provider_name, &module.name, &function, &name, key);
                self.made.push((pid, provider, id));
            }
        }
    }
}

/// Decodes one argument descriptor of a stapsdt note: `[-]size@operand`,
/// the operand in the assembler syntax of the architecture.
pub(crate) fn parse_arg(text: &str) -> Result<ArgSpec, String> {
    let (size, operand) = match text.split_once('@') {
        Some((size, operand)) => (size.parse::<i8>().map_err(|_| format!("bad size in {text}"))?, operand),
        // Old notes have no size: a long.
        None => (8, text),
    };
    let signed = size < 0;
    let size = size.unsigned_abs();
    if !matches!(size, 1 | 2 | 4 | 8) {
        return Err(format!("bad size in {text}"));
    }
    let location = parse_operand(operand).ok_or_else(|| format!("cannot decode {text}"))?;
    Ok(ArgSpec { location, size, signed })
}

fn parse_int(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let value = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok()? as i64,
        None => digits.parse::<u64>().ok()? as i64,
    };
    Some(if negative { value.wrapping_neg() } else { value })
}

/// x86-64 (AT&T syntax): `%reg`, `$imm`, `disp(%reg)`, `(%reg)`.
#[cfg(target_arch = "x86_64")]
fn parse_operand(operand: &str) -> Option<ArgLocation> {
    if let Some(imm) = operand.strip_prefix('$') {
        return parse_int(imm).map(ArgLocation::Constant);
    }
    if let Some(reg) = operand.strip_prefix('%') {
        return register(reg).map(ArgLocation::Register);
    }
    let (disp, rest) = operand.split_once('(')?;
    let reg = rest.strip_suffix(')')?.strip_prefix('%')?;
    // `sym(%rip)` and index registers are not decoded.
    let displacement = if disp.is_empty() { 0 } else { parse_int(disp)? };
    Some(ArgLocation::Memory { register: register(reg)?, displacement })
}

/// An x86-64 register (any width of it) → its offset in `struct pt_regs`,
/// whose layout is the ptrace ABI's `user_regs_struct`.
#[cfg(target_arch = "x86_64")]
fn register(name: &str) -> Option<u32> {
    use std::mem::offset_of;
    type R = libc::user_regs_struct;
    let off = match name {
        "rax" | "eax" | "ax" | "al" => offset_of!(R, rax),
        "rbx" | "ebx" | "bx" | "bl" => offset_of!(R, rbx),
        "rcx" | "ecx" | "cx" | "cl" => offset_of!(R, rcx),
        "rdx" | "edx" | "dx" | "dl" => offset_of!(R, rdx),
        "rsi" | "esi" | "si" | "sil" => offset_of!(R, rsi),
        "rdi" | "edi" | "di" | "dil" => offset_of!(R, rdi),
        "rbp" | "ebp" | "bp" | "bpl" => offset_of!(R, rbp),
        "rsp" | "esp" | "sp" | "spl" => offset_of!(R, rsp),
        "r8" | "r8d" | "r8w" | "r8b" => offset_of!(R, r8),
        "r9" | "r9d" | "r9w" | "r9b" => offset_of!(R, r9),
        "r10" | "r10d" | "r10w" | "r10b" => offset_of!(R, r10),
        "r11" | "r11d" | "r11w" | "r11b" => offset_of!(R, r11),
        "r12" | "r12d" | "r12w" | "r12b" => offset_of!(R, r12),
        "r13" | "r13d" | "r13w" | "r13b" => offset_of!(R, r13),
        "r14" | "r14d" | "r14w" | "r14b" => offset_of!(R, r14),
        "r15" | "r15d" | "r15w" | "r15b" => offset_of!(R, r15),
        _ => return None,
    };
    Some(off as u32)
}

/// arm64: `xN`/`wN`/`sp`, `#imm` or `imm`, `[reg]`, `[reg, #off]`.
#[cfg(target_arch = "aarch64")]
fn parse_operand(operand: &str) -> Option<ArgLocation> {
    if let Some(inner) = operand.strip_prefix('[').and_then(|o| o.strip_suffix(']')) {
        let mut parts = inner.split(',').map(str::trim);
        let register = register(parts.next()?)?;
        let displacement = match parts.next() {
            Some(d) => parse_int(d.trim_start_matches('#'))?,
            None => 0,
        };
        return Some(ArgLocation::Memory { register, displacement });
    }
    if let Some(off) = register(operand) {
        return Some(ArgLocation::Register(off));
    }
    parse_int(operand.trim_start_matches('#')).map(ArgLocation::Constant)
}

#[cfg(target_arch = "aarch64")]
fn register(name: &str) -> Option<u32> {
    use std::mem::offset_of;
    type R = libc::user_regs_struct;
    if name == "sp" {
        return Some(offset_of!(R, sp) as u32);
    }
    let n: usize = name.strip_prefix('x').or_else(|| name.strip_prefix('w'))?.parse().ok()?;
    (n < 31).then(|| (offset_of!(R, regs) + 8 * n) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_names_have_dashes() {
        assert_eq!(probe_name("function__entry"), "function-entry");
        assert_eq!(probe_name("gc__start"), "gc-start");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x86_argument_descriptors() {
        use std::mem::offset_of;
        type R = libc::user_regs_struct;
        let rax = offset_of!(R, rax) as u32;
        let rbp = offset_of!(R, rbp) as u32;
        assert_eq!(parse_arg("-4@%eax"), Ok(ArgSpec { location: ArgLocation::Register(rax), size: 4, signed: true }));
        assert_eq!(
            parse_arg("8@-8(%rbp)"),
            Ok(ArgSpec { location: ArgLocation::Memory { register: rbp, displacement: -8 }, size: 8, signed: false })
        );
        assert_eq!(
            parse_arg("-4@112(%rsp)").map(|a| a.location),
            Ok(ArgLocation::Memory { register: offset_of!(R, rsp) as u32, displacement: 112 })
        );
        assert_eq!(
            parse_arg("2@(%r12)").map(|a| (a.location, a.size)),
            Ok((ArgLocation::Memory { register: offset_of!(R, r12) as u32, displacement: 0 }, 2))
        );
        assert_eq!(parse_arg("-4@$-5"), Ok(ArgSpec { location: ArgLocation::Constant(-5), size: 4, signed: true }));
        assert_eq!(parse_arg("1@$0x10").map(|a| a.location), Ok(ArgLocation::Constant(16)));
        assert_eq!(parse_arg("8@%r15").map(|a| a.location), Ok(ArgLocation::Register(offset_of!(R, r15) as u32)));
        assert_eq!(parse_arg("-1@%sil").map(|a| a.location), Ok(ArgLocation::Register(offset_of!(R, rsi) as u32)));
        assert!(parse_arg("8@counter(%rip)").is_err());
        assert!(parse_arg("8@(%rax,%rbx,8)").is_err());
        assert!(parse_arg("3@%eax").is_err());
    }
}
