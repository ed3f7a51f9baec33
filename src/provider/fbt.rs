//! The fbt provider: entry and return of every traceable kernel function,
//! `fbt:<module>:<function>:entry|return` (module `vmlinux` for the kernel's
//! own), as dtrace-utils names them (bpf/fbt.bpf.c). args[] are typed from
//! the function's BTF prototype; on return, arg1 (args[1]) is the return
//! value. The functions are listed from tracefs (or, where lockdown hides
//! that list, from BTF and kallsyms) when a description could name one.
//!
//! Each probe is attached by the best mechanism the kernel has: a BPF
//! trampoline (fentry/fexit), else one multi-kprobe link for many
//! functions, else single kprobes. DTRACE_FBT_NO_FENTRY=1 and
//! DTRACE_NO_KPROBE_MULTI=1 take the next mechanism down (tests of the
//! fallbacks).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;

use anyhow::{bail, Context, Result};
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::{KprobeMultiOpts, Link};

use super::copies::{self, Target};
use super::desc::{glob_match, ProbeDesc};
use super::{
    Attributes, ClauseProgType, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable,
    ProvideContext, Provider, KPROBE,
};

super::entry_programs!("fbt");

/// The most arguments a trampoline entry program reads (dt_fbt_entry_6),
/// and a kprobe's register arguments.
const MAX_ARGS: usize = 6;
/// From this many functions on, one multi-kprobe link attaches them all:
/// a trampoline per function costs milliseconds each to attach.
const MULTI_FROM: usize = 16;

const KPROBE_MULTI: ClauseProgType = ClauseProgType {
    prog_type: libbpf_sys::BPF_PROG_TYPE_KPROBE,
    expected_attach_type: libbpf_sys::BPF_TRACE_KPROBE_MULTI,
    attach_btf_id: 0,
};

#[derive(Default)]
pub(crate) struct Fbt {
    /// Whether the traceable functions have been read.
    read: bool,
    /// (module, function), each once: probe key 2i is function i's entry,
    /// 2i+1 its return.
    functions: Functions,
    /// Which functions' probes are in the probe table: a description that
    /// names one function adds only its two, so a script's start-up does
    /// not pay for tens of thousands of probes it cannot use.
    in_table: Vec<bool>,
    /// Whether every function's probes are in the table.
    all_in_table: bool,
    /// Argument types from BTF, by key.
    args: RefCell<HashMap<u64, Option<&'static [ProbeArg]>>>,
}

/// How one probe is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mechanism {
    /// fentry/fexit on the function of this BTF ID with this many arguments.
    Trampoline {
        btf_id: u32,
        nargs: usize,
    },
    Multi,
    Kprobe,
}

impl Fbt {
    /// Adds the probes of the functions whose module and name match the
    /// patterns of `only` (every function when None) that are not in the
    /// table yet: a wildcard over a few hundred functions adds theirs, not
    /// the kernel's tens of thousands.
    fn list(&mut self, kernel: &mut dyn KernelFacts, probes: &mut ProbeTable, only: Option<(&str, &str)>) {
        if !self.read {
            self.read = true;
            let mut functions = Functions::default();
            if !super::tracefs::traceable_functions(&mut |m, f| functions.add(m, f)) {
                functions_from_btf(kernel, &mut functions);
            }
            functions.seen = HashSet::new();
            functions.entries.shrink_to_fit();
            functions.names.shrink_to_fit();
            self.in_table = vec![false; functions.entries.len()];
            self.functions = functions;
        }
        for (i, (module, function)) in self.functions.iter().enumerate() {
            let wanted = only.is_none_or(|(m, f)| glob_match(f, function) && glob_match(m, module));
            if self.in_table[i] || !wanted {
                continue;
            }
            self.in_table[i] = true;
            probes.add("fbt", module, function, "entry", 2 * i as u64);
            probes.add("fbt", module, function, "return", 2 * i as u64 + 1);
        }
        self.all_in_table = only.is_none();
    }

    fn function(&self, key: u64) -> (&str, &str) {
        self.functions.get((key / 2) as usize)
    }
}

/// The kernel's functions where tracefs' list cannot be read: those BTF
/// describes that kallsyms has as text (BTF also describes functions that
/// were inlined everywhere), and modules' text symbols.
fn functions_from_btf(kernel: &mut dyn KernelFacts, functions: &mut Functions) {
    let Ok(kallsyms) = std::fs::File::open("/proc/kallsyms") else { return };
    super::tracefs::for_each_line(kallsyms, &mut |line| {
        let mut words = line.split_whitespace();
        let (Some(_), Some(kind), Some(name)) = (words.next(), words.next(), words.next()) else { return };
        if !matches!(kind, "t" | "T") {
            return;
        }
        match words.next() {
            None if kernel.function_btf_id(name).is_some() => functions.add("vmlinux", name),
            Some(module) if !name.contains('.') && !name.starts_with("__pfx_") && !name.starts_with("__cfi_") => {
                functions.add(module.trim_matches(['[', ']']), name)
            }
            _ => {}
        }
    });
}

/// The kernel's traceable functions, each (module, name) once, in the
/// order the kernel lists them. Tens of thousands: the names share one
/// buffer and the modules are numbered (a pair of Strings each took
/// about 100 bytes per function).
#[derive(Default)]
struct Functions {
    modules: Vec<String>,
    names: String,
    /// (module, name's start and end in `names`)
    entries: Vec<(u16, u32, u32)>,
    /// Hashes of the pairs added so far: a static function's name may
    /// repeat within a module (a copy of every name would double the
    /// memory this takes). Emptied once all are read.
    seen: HashSet<u64>,
}

impl Functions {
    fn add(&mut self, module: &str, name: &str) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&(module, name), &mut h);
        if !self.seen.insert(std::hash::Hasher::finish(&h)) {
            return;
        }
        // Functions come grouped by module: the last one is the likeliest.
        let m = match self.modules.iter().rposition(|x| x == module) {
            Some(m) => m,
            None => {
                self.modules.push(module.to_string());
                self.modules.len() - 1
            }
        };
        let start = self.names.len() as u32;
        self.names.push_str(name);
        self.entries.push((m as u16, start, self.names.len() as u32));
    }

    fn get(&self, i: usize) -> (&str, &str) {
        let (m, start, end) = self.entries[i];
        (&self.modules[m as usize], &self.names[start as usize..end as usize])
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (0..self.entries.len()).map(|i| self.get(i))
    }
}

/// Whether a parameter type is passed in registers one per argument (a
/// struct passed by value is not: it shifts the rest).
fn one_register(ty: &str) -> bool {
    ty.ends_with('*') || !(ty.starts_with("struct ") || ty.starts_with("union "))
}

impl Provider for Fbt {
    fn name(&self) -> &'static str {
        "fbt"
    }

    fn populate(&mut self, _probes: &mut ProbeTable) {}

    fn provide(&mut self, desc: &ProbeDesc, probes: &mut ProbeTable, cx: &mut ProvideContext) -> Option<Vec<u32>> {
        let could_name = desc.could_match_provider("fbt")
            && (!desc.name_is_literal() || matches!(desc.name.as_str(), "entry" | "return"));
        if could_name && !self.all_in_table {
            let every = |field: &str| field.is_empty() || field == "*";
            let only =
                (!(every(&desc.module) && every(&desc.function))).then_some((&desc.module[..], &desc.function[..]));
            self.list(cx.kernel, probes, only);
        }
        None
    }

    fn typed_args(&self, probe: &Probe, kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        if let Some(known) = self.args.borrow().get(&probe.key) {
            return *known;
        }
        let (module, function) = self.function(probe.key);
        // Modules' functions are in their own BTF, which is not read: untyped.
        let args = if module != "vmlinux" {
            None
        } else if probe.key % 2 == 0 {
            kernel.function_parameters(function).map(|types| super::cast_args(types.into_iter().take(MAX_ARGS)))
        } else {
            kernel.function_return(function).map(|ret| {
                let mut types = vec!["int".to_string()];
                if ret != "void" {
                    types.push(ret);
                }
                super::cast_args(types)
            })
        };
        self.args.borrow_mut().insert(probe.key, args);
        args
    }

    /// As dtrace-utils gives its fbt probes.
    fn argument_attributes(&self) -> Attributes {
        ("Private", "Private", "ISA")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let no_fentry = std::env::var_os("DTRACE_FBT_NO_FENTRY").is_some();
        let mut plan: Vec<Mechanism> = Vec::with_capacity(enabled.len());
        for e in enabled {
            let (module, function) = self.function(e.probe.key);
            let trampoline = (module == "vmlinux" && !no_fentry)
                .then(|| {
                    let params = cx.kernel.function_parameters(function)?;
                    let fits = params.len() <= MAX_ARGS && params.iter().all(|p| one_register(p));
                    fits.then_some(())?;
                    Some(Mechanism::Trampoline { btf_id: cx.kernel.function_btf_id(function)?, nargs: params.len() })
                })
                .flatten();
            plan.push(trampoline.unwrap_or(Mechanism::Kprobe));
        }
        let kprobes = std::path::Path::new("/sys/bus/event_source/devices/kprobe").exists();
        // The link's struct is in BTF only where CONFIG_FPROBE built it
        // (not Debian's 6.1, whose wildcards take single kprobes).
        let multi_wanted = kprobes
            && std::env::var_os("DTRACE_NO_KPROBE_MULTI").is_none()
            && cx.kernel.has_struct("bpf_kprobe_multi_link");
        // Plans from best to worst: each falls back to the next when the
        // kernel refuses a mechanism (multi-kprobes need CONFIG_FPROBE;
        // trampolines may be refused, as under lockdown).
        let mut plans = Vec::new();
        if multi_wanted && enabled.len() >= MULTI_FROM {
            // Many functions: one multi-kprobe link rather than a trampoline each.
            plans.push(vec![Mechanism::Multi; enabled.len()]);
        } else if multi_wanted && plan.iter().filter(|m| **m == Mechanism::Kprobe).count() >= MULTI_FROM {
            plans.push(plan.iter().map(|m| if *m == Mechanism::Kprobe { Mechanism::Multi } else { *m }).collect());
        }
        if plan.iter().any(|m| *m != Mechanism::Kprobe) {
            plans.push(plan.clone());
        }
        plans.push(vec![Mechanism::Kprobe; enabled.len()]);
        let mut refused = Vec::new();
        for plan in &plans {
            match self.enable_with(enabled, plan, cx) {
                Ok(enabling) => return Ok(enabling),
                Err(e) => refused.push((plan, e)),
            }
        }
        let (_, last) = refused.pop().expect("at least one plan");
        if !kprobes {
            let trampolines = match refused
                .iter()
                .find(|(plan, _)| plan.iter().any(|m| matches!(m, Mechanism::Trampoline { .. })))
            {
                Some((_, e)) => format!("refuses BPF trampolines (fentry: {})", e.root_cause()),
                None => "cannot reach these functions by BPF trampolines (a module's, or with more than six arguments)"
                    .into(),
            };
            bail!("fbt probes cannot be enabled: this kernel has no kprobes (CONFIG_KPROBES is not set) and {trampolines}");
        }
        Err(last)
    }
}

impl Fbt {
    fn enable_with(
        &self,
        enabled: &[Enabled],
        plan: &[Mechanism],
        cx: &mut EnableContext,
    ) -> Result<Box<dyn Enabling>> {
        let slots = enabled.len() as u32;
        let mut open = cx.open(skel::FbtSkelBuilder::default(), "fbt")?;
        for map in [
            &mut open.maps.dt_fbt_tracing_progs,
            &mut open.maps.dt_fbt_kprobe_progs,
            &mut open.maps.dt_fbt_multi_progs,
            &mut open.maps.dt_fbt_probes,
        ] {
            map.set_max_entries(slots)?;
        }
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
        }
        // Only the programs the plan uses load: a trampoline program for
        // each argument count, bound at load time to one function of that
        // count (its copies are bound to the others).
        let mut wanted: Vec<(String, Option<String>)> = Vec::new();
        for (e, m) in enabled.iter().zip(plan) {
            let ret = e.probe.key % 2 == 1;
            let program = match m {
                Mechanism::Trampoline { nargs, .. } => {
                    format!("dt_fbt_{}_{nargs}", if ret { "return" } else { "entry" })
                }
                Mechanism::Multi => (if ret { "dt_fbt_kretprobe_multi" } else { "dt_fbt_kprobe_multi" }).into(),
                Mechanism::Kprobe => (if ret { "dt_fbt_kretprobe" } else { "dt_fbt_kprobe" }).into(),
            };
            if !wanted.iter().any(|(p, _)| *p == program) {
                let target =
                    matches!(m, Mechanism::Trampoline { .. }).then(|| self.function(e.probe.key).1.to_string());
                wanted.push((program, target));
            }
        }
        for mut prog in open.open_object_mut().progs_mut() {
            let name = prog.name().to_string_lossy().into_owned();
            match wanted.iter().find(|(p, _)| *p == name) {
                Some((_, target)) => {
                    prog.set_autoload(true);
                    if let Some(function) = target {
                        prog.set_attach_target(0, Some(function.clone()))?;
                    }
                }
                None => prog.set_autoload(false),
            }
        }
        let skel = open.load().context("loading the fbt entry programs")?;
        let p = &skel.progs;
        let program = |name: &str| -> Result<&libbpf_rs::ProgramMut> {
            Ok(match name {
                "dt_fbt_entry_0" => &p.dt_fbt_entry_0,
                "dt_fbt_entry_1" => &p.dt_fbt_entry_1,
                "dt_fbt_entry_2" => &p.dt_fbt_entry_2,
                "dt_fbt_entry_3" => &p.dt_fbt_entry_3,
                "dt_fbt_entry_4" => &p.dt_fbt_entry_4,
                "dt_fbt_entry_5" => &p.dt_fbt_entry_5,
                "dt_fbt_entry_6" => &p.dt_fbt_entry_6,
                "dt_fbt_return_0" => &p.dt_fbt_return_0,
                "dt_fbt_return_1" => &p.dt_fbt_return_1,
                "dt_fbt_return_2" => &p.dt_fbt_return_2,
                "dt_fbt_return_3" => &p.dt_fbt_return_3,
                "dt_fbt_return_4" => &p.dt_fbt_return_4,
                "dt_fbt_return_5" => &p.dt_fbt_return_5,
                "dt_fbt_return_6" => &p.dt_fbt_return_6,
                "dt_fbt_kprobe" => &p.dt_fbt_kprobe,
                "dt_fbt_kretprobe" => &p.dt_fbt_kretprobe,
                "dt_fbt_kprobe_multi" => &p.dt_fbt_kprobe_multi,
                "dt_fbt_kretprobe_multi" => &p.dt_fbt_kretprobe_multi,
                _ => bail!("no entry program {name}"),
            })
        };
        let mut attached: Vec<OwnedFd> = Vec::new();
        let mut links: Vec<Link> = Vec::new();
        // (symbols, slots) of the multi-kprobe entries and returns.
        let mut multi: [(Vec<String>, Vec<u64>); 2] = Default::default();
        for (slot, (e, m)) in enabled.iter().zip(plan).enumerate() {
            let slot = slot as u32;
            let ret = e.probe.key % 2 == 1;
            let function = self.function(e.probe.key).1;
            copies::set_probe(&skel.maps.dt_fbt_probes, slot, e.probe.id, &[])?;
            let what = || e.probe.full_name();
            match *m {
                Mechanism::Trampoline { btf_id, nargs } => {
                    let expected_attach_type =
                        if ret { libbpf_sys::BPF_TRACE_FEXIT } else { libbpf_sys::BPF_TRACE_FENTRY };
                    // Bound to the function too: kernels since 6.17 tail-call
                    // only between programs of one attach point's prototype.
                    let ty = ClauseProgType {
                        prog_type: libbpf_sys::BPF_PROG_TYPE_TRACING,
                        expected_attach_type,
                        attach_btf_id: btf_id,
                    };
                    let name = format!("dt_fbt_{}_{nargs}", if ret { "return" } else { "entry" });
                    let target = Target { expected_attach_type, attach_btf_id: btf_id };
                    let prog = cx
                        .probe_copy(program(&name)?, slot, target, e, &skel.maps.dt_fbt_tracing_progs, ty)
                        .with_context(|| format!("loading the trampoline program of {}", what()))?;
                    let link = copies::attach_raw(&prog, None).with_context(|| format!("attaching {}", what()))?;
                    attached.extend([prog, link]);
                }
                Mechanism::Kprobe => {
                    let name = if ret { "dt_fbt_kretprobe" } else { "dt_fbt_kprobe" };
                    let prog = cx
                        .probe_copy(program(name)?, slot, Target::default(), e, &skel.maps.dt_fbt_kprobe_progs, KPROBE)
                        .with_context(|| format!("loading the kprobe program of {}", what()))?;
                    let event = super::perf::open_kprobe(function, ret)?;
                    copies::attach_perf(&prog, &event).with_context(|| format!("attaching {}", what()))?;
                    attached.extend([prog, event]);
                }
                Mechanism::Multi => {
                    cx.fill(&skel.maps.dt_fbt_multi_progs, slot, e.clauses, KPROBE_MULTI)?;
                    let (symbols, cookies) = &mut multi[usize::from(ret)];
                    symbols.push(function.to_string());
                    cookies.push(u64::from(slot));
                }
            }
        }
        for (ret, (symbols, cookies)) in multi.into_iter().enumerate() {
            if symbols.is_empty() {
                continue;
            }
            let name = if ret == 1 { "dt_fbt_kretprobe_multi" } else { "dt_fbt_kprobe_multi" };
            let count = symbols.len();
            let opts = KprobeMultiOpts { symbols, cookies, retprobe: ret == 1, ..Default::default() };
            let link = program(name)?
                .attach_kprobe_multi_with_opts(opts)
                .with_context(|| format!("attaching a multi-kprobe link to {count} functions"))?;
            links.push(link);
        }
        cx.links.extend(links);
        Ok(Box::new(Loaded((skel, attached))))
    }
}
