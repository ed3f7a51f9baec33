//! The pid provider: `pid<PID>:<module>:<function>:entry|return|<offset>`,
//! probes on the functions of a process's executable and libraries,
//! created on demand when a script names them (bpf/pid.bpf.c). The
//! processes' modules and symbols come from `crate::process`.
//!
//! A module is named as DTrace users write it: its file name
//! (`libc.so.6`), that name without the version (`libc.so`) or without
//! `.so` (`libc`), its path, or `a.out` for the executable.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use libbpf_rs::skel::OpenSkel;

use super::desc::{glob_match, split_pid, ProbeDesc};
use super::uprobe::{self, ClauseSlots, MAX_SINGLE_UPROBES};
use super::{Attributes, EnableContext, Enabled, Enabling, Loaded, ProbeTable, ProvideContext, Provider, Refusal};

super::entry_programs!("pid");

/// Where a pid probe attaches: a uprobe (uretprobe if `ret`) at `offset`
/// in file `path`, for process `pid` only.
#[derive(Debug, Clone)]
struct Uprobe {
    pid: u32,
    path: PathBuf,
    offset: u64,
    ret: bool,
    /// At the function's first instruction: its return address is at the stack pointer.
    at_entry: bool,
    /// The file offset of the semaphore of a USDT site at the same place
    /// (0: none): the kernel wants every uprobe there to count it.
    ref_ctr: u64,
}

/// The pid provider's probes, made on demand.
#[derive(Default)]
pub(crate) struct Pid {
    /// Probe IDs by full name, so that two descriptions share probes.
    ids: HashMap<String, u32>,
    /// `pid<N>` for each process, made once.
    providers: HashMap<u32, &'static str>,
    /// Each probe's uprobe: a probe's key is its index here.
    uprobes: Vec<Uprobe>,
}

impl Provider for Pid {
    fn name(&self) -> &'static str {
        "pid"
    }

    fn populate(&mut self, _probes: &mut ProbeTable) {}

    fn provide(&mut self, desc: &ProbeDesc, probes: &mut ProbeTable, cx: &mut ProvideContext) -> Option<Vec<u32>> {
        if let Some(pid) = provider_pid(&desc.provider) {
            if pid == 0 {
                cx.refusal =
                    Some(refusal("D_PROC_BADPID", format!("'{}' does not contain a valid pid", desc.provider)));
                return Some(Vec::new());
            }
            return match self.matching(desc, pid, probes, cx, true) {
                Ok(ids) => Some(ids),
                Err(r) => {
                    cx.refusal = Some(r);
                    Some(Vec::new())
                }
            };
        }
        // A glob that names pid<N> (`p*d$target`) makes that process's
        // probes of a function named exactly; the names are then matched
        // like any probe's. As in dt_setcontext, only a provider that ends
        // in a digit may name a process: `::main:entry` makes no pid
        // probes. (A glob over every function of every process would
        // instrument all of them: those need the pid named.)
        let may_name_a_process = desc.provider.ends_with(|c: char| c.is_ascii_digit());
        if !desc.provider_is_literal() && may_name_a_process && desc.function_is_literal() {
            let mut pids = cx.processes.targets.clone();
            pids.extend(split_pid(&desc.provider).1.filter(|&p| p != 0));
            pids.sort_unstable();
            pids.dedup();
            for pid in pids {
                let provider = format!("pid{pid}");
                if glob_match(&desc.provider, &provider) {
                    let named = ProbeDesc { provider, ..desc.clone() };
                    // Not finding it in this process is not an error here.
                    let _ = self.matching(&named, pid, probes, cx, false);
                }
            }
        }
        None
    }

    /// As the Solaris Dynamic Tracing Guide gives the pid provider's.
    fn argument_attributes(&self) -> Attributes {
        ("Private", "Private", "Unknown")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let open = |cx: &EnableContext, multi: bool| -> Result<skel::PidSkel<'static>> {
            let mut open = cx.open(skel::PidSkelBuilder::default(), "pid")?;
            let wanted: &[&str] =
                if multi { &["dt_pid_entry", "dt_pid_return"] } else { &["dt_pid_entry1", "dt_pid_return1"] };
            super::autoload_only(open.open_object_mut(), wanted);
            if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
                super::script_needs!(ro, cx.needs);
                ro.dt_need_stack_args = cx.needs.args || cx.needs.typed_args_used.iter().any(|&(_, n)| n >= 6);
            }
            Ok(open.load()?)
        };
        let (skel, multi) = uprobe::load(cx, open, "the pid provider needs")?;
        let mut slots = ClauseSlots::default();
        let probes: Vec<Placed> = enabled
            .iter()
            .map(|e| Placed {
                id: e.probe.id,
                uprobe: &self.uprobes[e.probe.key as usize],
                slot: slots.slot(e.clauses),
            })
            .collect();
        slots.fill(cx, &skel.maps.dt_pid_progs, multi, "pid")?;
        let refused = if multi { attach_multi(&skel, &probes, cx)? } else { attach_single(&skel, &probes, cx)? };
        let name =
            |id: u32| enabled.iter().find(|e| e.probe.id == id).map_or_else(String::new, |e| e.probe.full_name());
        match refused.as_slice() {
            [] => {}
            [id] => cx.warnings.push(format!("{} will not fire: the kernel cannot place a uprobe there", name(*id))),
            ids => cx.warnings.push(format!(
                "{} pid probes will not fire (e.g. {}): the kernel cannot place a uprobe there",
                ids.len(),
                name(ids[0])
            )),
        }
        Ok(Box::new(Loaded(skel)))
    }
}

/// The most pid probes one run makes (Solaris' fasttrap-max-probes).
const MAX_PID_PROBES: usize = 250_000;

/// DT_PID_AT_ENTRY in bpf/pid.bpf.c.
const PID_AT_ENTRY: u64 = 1 << 31;

/// An enabled pid probe: its ID, where it attaches, and the slot of its
/// clause list's program.
struct Placed<'a> {
    id: u32,
    uprobe: &'a Uprobe,
    slot: u32,
}

impl Placed<'_> {
    /// The attach cookie: the probe's ID, whether it is at a function's
    /// entry (PID_AT_ENTRY) and its clause list's slot.
    fn cookie(&self) -> u64 {
        let at_entry = if self.uprobe.at_entry { PID_AT_ENTRY } else { 0 };
        (u64::from(self.id) << 32) | at_entry | u64::from(self.slot)
    }
}

/// Attaches every probe with one multi-uprobe link per file and direction
/// (Linux 6.6); returns the IDs of probes the kernel refused.
fn attach_multi(skel: &skel::PidSkel<'static>, probes: &[Placed], cx: &mut EnableContext) -> Result<Vec<u32>> {
    let mut refused = Vec::new();
    let mut groups: BTreeMap<(u32, &std::path::Path, bool), Vec<&Placed>> = BTreeMap::new();
    for p in probes {
        groups.entry((p.uprobe.pid, p.uprobe.path.as_path(), p.uprobe.ret)).or_default().push(p);
    }
    for ((pid, path, ret), group) in groups {
        let prog = if ret { &skel.progs.dt_pid_return } else { &skel.progs.dt_pid_entry };
        let attach = |part: &[&Placed]| {
            let opts = libbpf_rs::UprobeMultiOpts {
                offsets: part.iter().map(|p| p.uprobe.offset as usize).collect(),
                ref_ctr_offsets: part.iter().map(|p| p.uprobe.ref_ctr as usize).collect(),
                cookies: part.iter().map(|p| p.cookie()).collect(),
                retprobe: ret,
                ..Default::default()
            };
            prog.attach_uprobe_multi_with_opts(pid as i32, path, "", opts)
        };
        // One link for the group; if the kernel refuses some offset
        // (an instruction uprobes cannot probe), halves until the
        // refused probes are found, and attaches the rest.
        let mut pending: Vec<&[&Placed]> = vec![&group];
        while let Some(part) = pending.pop() {
            match attach(part) {
                Ok(link) => cx.links.push(link),
                Err(e) if part.len() == 1 => {
                    if group.len() == 1 {
                        return Err(anyhow!("{e}"))
                            .with_context(|| format!("attaching a uprobe to {} for pid {pid}", path.display()));
                    }
                    refused.push(part[0].id);
                }
                Err(_) => {
                    let (a, b) = part.split_at(part.len() / 2);
                    pending.push(a);
                    pending.push(b);
                }
            }
        }
    }
    Ok(refused)
}

/// Attaches one uprobe per probe, where the kernel has no multi-uprobe links.
fn attach_single(skel: &skel::PidSkel<'static>, probes: &[Placed], cx: &mut EnableContext) -> Result<Vec<u32>> {
    // One perf event per uprobe: ~40 ms to attach and ~170 ms to detach
    // each (measured on 6.18), so a glob over libc would take minutes.
    if probes.len() > MAX_SINGLE_UPROBES {
        bail!(
            "{} pid probes need multi-uprobe links (Linux 6.6 or later); this kernel attaches uprobes one \
             by one (about 0.2 s each), and at most {MAX_SINGLE_UPROBES} are allowed: name fewer functions",
            probes.len()
        );
    }
    for p in probes {
        let u = p.uprobe;
        let prog = if u.ret { &skel.progs.dt_pid_return1 } else { &skel.progs.dt_pid_entry1 };
        let opts = libbpf_rs::UprobeOpts {
            cookie: p.cookie(),
            retprobe: u.ret,
            ref_ctr_offset: u.ref_ctr as usize,
            ..Default::default()
        };
        let link = prog.attach_uprobe_with_opts(u.pid as i32, &u.path, u.offset as usize, opts).with_context(|| {
            format!("attaching a uprobe to {}+0x{:x} for pid {}", u.path.display(), u.offset, u.pid)
        })?;
        cx.links.push(link);
    }
    Ok(Vec::new())
}

/// `pid1234` → 1234.
pub(crate) fn provider_pid(provider: &str) -> Option<u32> {
    let digits = provider.strip_prefix("pid")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Whether module pattern `pattern` names the module at `path`: its file
/// name, with `.so.N` cut to `.so` or `.so` and what follows cut, a
/// `-<version>` before `.so` cut (`libc-2.31.so`), its path, or `a.out`.
pub(crate) fn module_matches(pattern: &str, path: &str, is_exe: bool) -> bool {
    if pattern.is_empty() {
        return true;
    }
    let base = path.rsplit('/').next().unwrap_or(path);
    let mut names = vec![base.to_string(), path.to_string()];
    if let Some(pos) = base.find(".so") {
        names.push(base[..pos + 3].to_string());
        let stem = &base[..pos];
        names.push(stem.to_string());
        if let Some(dash) = stem.rfind('-') {
            if stem[dash + 1..].starts_with(|c: char| c.is_ascii_digit()) {
                names.push(stem[..dash].to_string());
                names.push(format!("{}.so", &stem[..dash]));
            }
        }
    }
    if is_exe {
        names.push("a.out".to_string());
    }
    names.iter().any(|n| glob_match(pattern, n))
}

/// A probe name: entry, return, or an offset in hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Site {
    Entry,
    Return,
    Offset(u64),
}

fn refusal(tag: &'static str, message: String) -> Refusal {
    Refusal { tag, message }
}

/// The sites a probe name names; a literal name that is none is an error
/// (D_PROC_NAME, as dt_pid.c's).
fn sites(name_pattern: &str, literal: bool) -> Result<Vec<Site>, Refusal> {
    if literal {
        return match name_pattern {
            "entry" => Ok(vec![Site::Entry]),
            "return" => Ok(vec![Site::Return]),
            text => hex_number(text)
                .map(|off| vec![Site::Offset(off)])
                .ok_or_else(|| refusal("D_PROC_NAME", format!("'{text}' is an invalid probe name"))),
        };
    }
    // A pattern matches entry and return; offsets are named one by one.
    Ok([("entry", Site::Entry), ("return", Site::Return)]
        .into_iter()
        .filter(|(n, _)| glob_match(name_pattern, n))
        .map(|(_, s)| s)
        .collect())
}

/// A site named exactly whose instruction a uprobe cannot take (a lock or
/// segment prefix, hlt, int3).
fn unprobeable(site: &str) -> Refusal {
    refusal("D_PROC_CREATEFAIL", format!("failed to create probe at {site}: its instruction cannot be traced"))
}

/// The file offset of the semaphore of a USDT site at `vaddr`, or 0.
fn usdt_semaphore(elf: &crate::process::ElfSymbols, vaddr: u64) -> u64 {
    elf.usdt
        .iter()
        .find(|n| n.vaddr == vaddr && n.semaphore != 0)
        .and_then(|n| elf.counter_offset(n.semaphore))
        .unwrap_or(0)
}

/// A probe name or address in hex, with or without `0x`.
fn hex_number(text: &str) -> Option<u64> {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

impl Pid {
    /// The probes of `desc` (provider `pid<pid>`), created as needed.
    /// `strict`: the description names this process's pid provider, and
    /// names that cannot be probes are errors, as DTrace's dt_pid.c says.
    fn matching(
        &mut self,
        desc: &ProbeDesc,
        pid: u32,
        probes: &mut ProbeTable,
        cx: &mut ProvideContext,
        strict: bool,
    ) -> Result<Vec<u32>, Refusal> {
        // Probe::provider is static: each process's name is made once.
        let provider: &'static str =
            self.providers.entry(pid).or_insert_with(|| Box::leak(format!("pid{pid}").into_boxed_str()));
        let modules = cx.processes.modules(pid);
        if desc.function == "-" {
            return self.absolute(desc, provider, pid, &modules, probes);
        }
        let sites = match sites(&desc.name, desc.name_is_literal()) {
            Ok(sites) => sites,
            Err(r) if strict => return Err(r),
            Err(_) => return Ok(Vec::new()),
        };
        // A glob name also names every instruction by its offset (`pid$target:a.out:main:`).
        let instructions = !desc.name_is_literal();
        let mut ids = Vec::new();
        for module in modules.iter() {
            let path = module.elf.path.to_string_lossy();
            if !module_matches(&desc.module, &path, module.is_exe) {
                continue;
            }
            // A function named exactly must be in a module named exactly.
            if strict
                && desc.function_is_literal()
                && desc.module_is_literal()
                && !module.elf.functions.iter().any(|f| f.probeable && f.name == desc.function)
            {
                return Err(refusal(
                    "D_PROC_FUNC",
                    format!("failed to lookup '{}' in module '{}'", desc.function, desc.module),
                ));
            }
            // Instructions are decoded from the file, read once a module.
            let mut code: Option<Vec<u8>> = None;
            // Aliases (go, _go) share an address and one probe, named as
            // a frame there is: a description may name any of them.
            let mut addresses = std::collections::HashSet::new();
            for alias in &module.elf.functions {
                if !alias.probeable || !glob_match(&desc.function, &alias.name) || !addresses.insert(alias.vaddr) {
                    continue;
                }
                let f = module.elf.canonical(alias.vaddr).unwrap_or(alias);
                let mut sites = sites.clone();
                if instructions {
                    let code = code.get_or_insert_with(|| std::fs::read(&module.elf.path).unwrap_or_default());
                    sites.extend(
                        module
                            .elf
                            .instruction_offsets(f, code)
                            .into_iter()
                            .filter(|off| glob_match(&desc.name, &format!("{off:x}")))
                            .map(Site::Offset),
                    );
                }
                if self.uprobes.len() + sites.len() > MAX_PID_PROBES {
                    return Err(refusal(
                        "D_PROC_CREATEFAIL",
                        format!("failed to create probes in process {pid}: more than {MAX_PID_PROBES} probes"),
                    ));
                }
                for &site in &sites {
                    let (name, vaddr, ret) = match site {
                        Site::Entry => ("entry".to_string(), f.vaddr, false),
                        // The program's entry point is jumped to, never
                        // called, and never returns (fasttrap, which probes
                        // `ret` instructions, finds none): a uretprobe would
                        // take argc at the top of its stack for a return
                        // address and overwrite it.
                        Site::Return if f.vaddr == module.elf.entry && module.elf.entry != 0 => continue,
                        Site::Return => ("return".to_string(), f.vaddr, true),
                        Site::Offset(off) => {
                            if f.size != 0 && off >= f.size {
                                if strict && desc.function_is_literal() {
                                    return Err(refusal(
                                        "D_PROC_OFF",
                                        format!("offset 0x{off:x} outside of function '{}'", f.name),
                                    ));
                                }
                                continue;
                            }
                            (format!("{off:x}"), f.vaddr + off, false)
                        }
                    };
                    let Some(offset) = module.elf.file_offset(vaddr) else { continue };
                    // (Offsets a glob named are instructions found probeable.)
                    if let (Site::Offset(off), false) = (site, instructions) {
                        if !crate::process::site_probeable(&module.elf.path, offset) {
                            if strict && desc.function_is_literal() {
                                return Err(unprobeable(&format!("{}+0x{off:x}", f.name)));
                            }
                            continue;
                        }
                    }
                    let at_entry = vaddr == f.vaddr && !ret;
                    let ref_ctr = usdt_semaphore(&module.elf, vaddr);
                    let site = Uprobe { pid, path: module.elf.path.clone(), offset, ret, at_entry, ref_ctr };
                    ids.push(self.probe(probes, provider, &module.name, &f.name, &name, site));
                }
            }
        }
        Ok(ids)
    }

    /// The probe named so, made once.
    fn probe(
        &mut self,
        probes: &mut ProbeTable,
        provider: &'static str,
        module: &str,
        function: &str,
        name: &str,
        site: Uprobe,
    ) -> u32 {
        let full = format!("{provider}:{module}:{function}:{name}");
        if let Some(&id) = self.ids.get(&full) {
            return id;
        }
        let key = self.uprobes.len() as u64;
        self.uprobes.push(site);
        let id = probes.add(provider, module, function, name, key);
        self.ids.insert(full, id);
        id
    }

    /// `pid<N>:a.out:-:<address>`: a probe at an address of the executable,
    /// as its file places it (for a position-independent executable, the
    /// address objdump shows, not where this run loaded it).
    fn absolute(
        &mut self,
        desc: &ProbeDesc,
        provider: &'static str,
        pid: u32,
        modules: &[crate::process::Module],
        probes: &mut ProbeTable,
    ) -> Result<Vec<u32>, Refusal> {
        let exe = modules.iter().find(|m| m.is_exe);
        let names_exe = desc.module.is_empty()
            || (desc.module_is_literal()
                && exe.is_some_and(|m| module_matches(&desc.module, &m.elf.path.to_string_lossy(), true)));
        if !names_exe {
            return Err(refusal("D_PROC_LIB", "only the a.out module is valid with the '-' function".to_string()));
        }
        if !desc.name_is_literal() {
            return Err(refusal(
                "D_PROC_NAME",
                "only individual addresses may be specified with the '-' function".to_string(),
            ));
        }
        let Some(addr) = hex_number(&desc.name) else {
            return Err(refusal("D_PROC_NAME", format!("'{}' is an invalid probe name", desc.name)));
        };
        let Some(exe) = exe else { return Ok(Vec::new()) };
        let Some(offset) = exe.elf.file_offset(addr) else {
            return Err(refusal(
                "D_PROC_CREATEFAIL",
                format!("failed to create probe at address 0x{addr:x}: not in {}", exe.name),
            ));
        };
        if !crate::process::site_probeable(&exe.elf.path, offset) {
            return Err(unprobeable(&format!("0x{addr:x}")));
        }
        let at_entry = exe.elf.canonical(addr).is_some();
        let ref_ctr = usdt_semaphore(&exe.elf, addr);
        let site = Uprobe { pid, path: exe.elf.path.clone(), offset, ret: false, at_entry, ref_ctr };
        Ok(vec![self.probe(probes, provider, &exe.name, "-", &desc.name, site)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_a_pid() {
        assert_eq!(provider_pid("pid123"), Some(123));
        assert_eq!(provider_pid("pid"), None);
        assert_eq!(provider_pid("pid12x"), None);
        assert_eq!(provider_pid("pid*"), None);
        assert_eq!(provider_pid("syscall"), None);
    }

    #[test]
    fn module_names_as_dtrace_users_write_them() {
        let libc = "/lib/x86_64-linux-gnu/libc.so.6";
        for pattern in ["libc", "libc.so", "libc.so.6", libc, "libc*", "", "lib?.so.6"] {
            assert!(module_matches(pattern, libc, false), "{pattern}");
        }
        for pattern in ["libm", "libc.so.7", "a.out", "c"] {
            assert!(!module_matches(pattern, libc, false), "{pattern}");
        }
        assert!(module_matches("a.out", "/usr/bin/ls", true));
        assert!(module_matches("ls", "/usr/bin/ls", true));
        assert!(!module_matches("a.out", "/usr/bin/ls", false));
        assert!(module_matches("libc", "/lib/libc-2.31.so", false));
        assert!(module_matches("libc.so", "/lib/libc-2.31.so", false));
        assert!(module_matches("libpthread", "/lib/libpthread.so.0", false));
    }

    #[test]
    fn probe_names() {
        assert_eq!(sites("entry", true), Ok(vec![Site::Entry]));
        assert_eq!(sites("return", true), Ok(vec![Site::Return]));
        assert_eq!(sites("1f", true), Ok(vec![Site::Offset(0x1f)]));
        assert_eq!(sites("0x10", true), Ok(vec![Site::Offset(0x10)]));
        // A glob also names instructions, by offset (added per function).
        assert_eq!(sites("", false), Ok(vec![Site::Entry, Site::Return]));
        assert_eq!(sites("e*", false), Ok(vec![Site::Entry]));
        let refused = sites("beginning", true).unwrap_err();
        assert_eq!((refused.tag, refused.message.as_str()), ("D_PROC_NAME", "'beginning' is an invalid probe name"));
        assert_eq!(sites("0x", true).unwrap_err().tag, "D_PROC_NAME");
    }
}
