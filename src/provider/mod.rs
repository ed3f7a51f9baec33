//! Providers, the unit of probes: each is one module here plus its entry
//! programs in `bpf/<name>.bpf.c`, behind the `Provider` trait, whose verbs
//! are those of dtrace-utils' `dt_provimpl_t`: populate (the probes
//! `dtrace -l` lists), provide (probes made on demand for a description),
//! probe info (argument types, attributes), enable (load the entry
//! programs, fill their program arrays with the generated clause programs,
//! attach). The runtime iterates the providers and never names one.
//!
//! The registry (`Registry`) lists the providers in one order, `providers()`,
//! and hands out probe IDs from one counter as each provider populates, then
//! as probes are made on demand: no provider knows another's IDs.

pub(crate) mod copies;
pub(crate) mod desc;
pub(crate) mod dtrace;
pub(crate) mod fbt;
pub(crate) mod fsinfo;
pub(crate) mod io;
pub(crate) mod ip;
pub(crate) mod kstat;
pub(crate) mod lockstat;
pub(crate) mod perf;
pub(crate) mod pid;
pub(crate) mod proc;
pub(crate) mod profile;
pub(crate) mod rawtp;
pub(crate) mod relocation;
pub(crate) mod sched;
pub(crate) mod sdt;
pub(crate) mod syscall;
pub(crate) mod sysinfo;
pub(crate) mod tcp;
pub(crate) mod tracefs;
pub(crate) mod udp;
pub(crate) mod uprobe;
pub(crate) mod usdt;
pub(crate) mod vminfo;

use std::collections::BTreeMap;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags};

use crate::process::Processes;
pub(crate) use desc::ProbeDesc;
pub(crate) use relocation::without_kernel_types as open_opts_without_kernel_types;

/// Every provider, in the order their probes are numbered.
fn providers() -> Vec<Box<dyn Provider>> {
    vec![
        Box::<dtrace::Dtrace>::default(),
        Box::<syscall::Syscall>::default(),
        Box::<profile::Profile>::default(),
        Box::<sysinfo::Sysinfo>::default(),
        Box::<vminfo::Vminfo>::default(),
        Box::<proc::Proc>::default(),
        Box::<io::Io>::default(),
        Box::<ip::Ip>::default(),
        Box::<sched::Sched>::default(),
        Box::<tcp::Tcp>::default(),
        Box::<udp::Udp>::default(),
        Box::<lockstat::Lockstat>::default(),
        Box::<fsinfo::Fsinfo>::default(),
        Box::<fbt::Fbt>::default(),
        Box::<sdt::Sdt>::default(),
        Box::<rawtp::Rawtp>::default(),
        Box::<pid::Pid>::default(),
        Box::<usdt::Usdt>::default(),
    ]
}

/// Includes the skeleton build.rs made of `bpf/<name>.bpf.c` as module `skel`.
macro_rules! entry_programs {
    ($name:literal) => {
        #[allow(clippy::all, dead_code, non_camel_case_types, unused_imports, unused_qualifications)]
        mod skel {
            include!(concat!(env!("OUT_DIR"), "/", $name, ".skel.rs"));
        }
    };
}
pub(crate) use entry_programs;

/// One provider: its probes, their types, and how they are enabled.
pub(crate) trait Provider {
    /// The name in probe descriptions (`pid` for `pid<PID>`).
    fn name(&self) -> &'static str;

    /// Adds the probes `dtrace -l` lists, taking their IDs from `probes`.
    fn populate(&mut self, probes: &mut ProbeTable);

    /// Makes the probes `desc` names that populate did not list (a profile
    /// rate, a pid probe). `Some(ids)` when this provider alone answers the
    /// description (its probes are not matched by name alone); `None` to
    /// let the description be matched against every probe's name.
    fn provide(&mut self, _desc: &ProbeDesc, _probes: &mut ProbeTable, _cx: &mut ProvideContext) -> Option<Vec<u32>> {
        None
    }

    /// The typed arguments (`args[]`) of one of this provider's probes, if
    /// it types them; otherwise args[n] is argN.
    fn typed_args(&self, _probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        None
    }

    /// Whether the probe fires for a thread other than the current one
    /// (its entry program names the thread in the probe context).
    fn fires_for_another_thread(&self, _probe: &Probe) -> bool {
        false
    }

    /// The stability of the arguments, as Solaris documents the provider's.
    fn argument_attributes(&self) -> Attributes {
        ("Private", "Private", "ISA")
    }

    /// A provider definition a script declares (`provider p { probe
    /// x(int); };`): for each probe (named with `-`), its argument types.
    fn declare_provider(&mut self, _name: &str, _probes: &[(String, Vec<String>)]) {}

    /// The D library files (name, text) the provider's types come from.
    fn library(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Loads the entry programs `enabled` needs, fills their program
    /// arrays with the generated clause programs and attaches them. What it
    /// returns keeps everything loaded until it is dropped.
    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>>;

    /// Whether this provider's probes may appear with processes that start
    /// after tracing began (it implements `retain`).
    fn retains(&self) -> bool {
        false
    }

    /// For descriptions kept for processes that start after tracing began
    /// (`python*:::entry`, by clause index): what finds and enables their
    /// probes in each such process. None for a provider whose probes are
    /// all known at start. New probes' IDs start at `first_id`.
    fn retain(
        &self,
        _retained: &[(usize, ProbeDesc)],
        _first_id: u32,
        _cx: &mut EnableContext,
    ) -> Result<Option<Box<dyn Retained>>> {
        Ok(None)
    }
}

/// A provider's probes in processes started after tracing began, made and
/// attached as each starts (DTrace's retained enablings).
pub(crate) trait Retained {
    /// Lets go of the probes of processes that have exited (their room
    /// counts toward nusdtprobes); returns their IDs.
    fn reap(&mut self) -> Vec<u32>;

    /// Process `pid` exec'd, or is one running when tracing began: makes
    /// and attaches the probes its files have that the retained
    /// descriptions match, where not made before; returns them.
    fn process_started(&mut self, pid: u32, cx: &mut LateContext) -> Result<Vec<Probe>>;
}

/// What a provider needs to enable probes after tracing began.
pub(crate) struct LateContext<'a> {
    /// Loads (once per type and list) the program of a clause list.
    pub clause_program: &'a mut dyn FnMut(&[usize], ClauseProgType) -> Result<i32>,
    pub kernel: &'a mut dyn KernelFacts,
    /// What could not be done but does not stop tracing, in words.
    pub warnings: Vec<String>,
}

/// A provider's part of a tracing session, alive while it runs. The
/// runtime calls these at DTrace's moments, for every provider in order.
pub(crate) trait Enabling {
    /// When tracing starts: fire BEGIN.
    fn begin(&self) -> Result<()> {
        Ok(())
    }
    /// Once every BEGIN clause has run: start what must not fire before
    /// (profile timers).
    fn started(&self) -> Result<()> {
        Ok(())
    }
    /// When tracing ends: fire END.
    fn end(&self) -> Result<()> {
        Ok(())
    }
}

/// Attaches `prog` to tracepoint `name` (`group/event`) through a perf
/// event, tracefs giving its ID (libbpf looks only where tracefs is
/// mounted); the link owns the event and closes it when dropped.
pub(crate) fn attach_tracepoint(prog: &libbpf_rs::ProgramMut, name: &str) -> Result<Link> {
    use std::os::fd::IntoRawFd;
    let id = tracefs::tracepoint_ids(&[name.to_string()])[0].with_context(|| format!("no tracepoint {name}"))?;
    let event = perf::open_tracepoint(id)?;
    prog.attach_perf_event(event.into_raw_fd()).with_context(|| format!("attaching to {name}"))
}

/// Keeps a provider's loaded entry programs (a skeleton) alive.
pub(crate) struct Loaded<T>(pub T);
impl<T> Enabling for Loaded<T> {}

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

/// Arguments typed at run time (from BTF, a tracepoint's format, a
/// script's provider definition): args[i] is argI cast to the ith type.
/// They live as long as the process, as the static tables' do.
pub(crate) fn cast_args(types: impl IntoIterator<Item = String>) -> &'static [ProbeArg] {
    let args: Vec<ProbeArg> = types
        .into_iter()
        .enumerate()
        .map(|(i, ty)| {
            let ty: &'static str = Box::leak(ty.into_boxed_str());
            arg(ty, Box::leak(format!("({ty})arg{i}").into_boxed_str()))
        })
        .collect();
    Box::leak(args.into_boxed_slice())
}

/// DTrace's stability attributes: identifier names, data semantics,
/// dependency class.
pub(crate) type Attributes = (&'static str, &'static str, &'static str);

#[derive(Debug, Clone)]
pub(crate) struct Probe {
    pub id: u32,
    pub provider: &'static str,
    pub module: String,
    pub function: String,
    pub name: String,
    /// The provider that serves it (index in `providers()` order).
    owner: usize,
    /// The provider's own key for it: a slot of its program array, a
    /// system call and direction, a rate, an index in its own table.
    pub key: u64,
}

impl Probe {
    /// A probe outside any registry, for tests of what prints probes.
    #[cfg(test)]
    pub(crate) fn unregistered(id: u32, provider: &'static str, function: &str, name: &str) -> Probe {
        Probe { id, provider, module: String::new(), function: function.into(), name: name.into(), owner: 0, key: 0 }
    }

    pub(crate) fn full_name(&self) -> String {
        format!("{}:{}:{}:{}", self.provider, self.module, self.function, self.name)
    }
}

/// All probes in ID order, and the counter IDs come from.
pub(crate) struct ProbeTable {
    probes: Vec<Probe>,
    next_id: u32,
    /// The provider adding probes now.
    owner: usize,
}

impl ProbeTable {
    /// Adds a probe with the next ID and returns the ID.
    pub(crate) fn add(&mut self, provider: &'static str, module: &str, function: &str, name: &str, key: u64) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        self.probes.push(Probe {
            id,
            provider,
            module: module.to_string(),
            function: function.to_string(),
            name: name.to_string(),
            owner: self.owner,
            key,
        });
        id
    }

    /// Reserves `count` IDs for probes added with `add_at` (a provider
    /// whose entry programs compute IDs with gaps, as syscall's do).
    pub(crate) fn reserve(&mut self, count: u32) -> u32 {
        let base = self.next_id;
        self.next_id += count;
        base
    }

    /// Adds a probe with a reserved ID; reserved IDs are added in order.
    pub(crate) fn add_at(
        &mut self,
        id: u32,
        provider: &'static str,
        module: &str,
        function: &str,
        name: &str,
        key: u64,
    ) {
        debug_assert!(id < self.next_id && self.probes.last().is_none_or(|p| p.id < id));
        self.probes.push(Probe {
            id,
            provider,
            module: module.to_string(),
            function: function.to_string(),
            name: name.to_string(),
            owner: self.owner,
            key,
        });
    }

    /// An empty table whose IDs start at `first_id`, for provider `owner`
    /// (probes made after tracing began).
    pub(crate) fn starting_at(first_id: u32, owner: usize) -> ProbeTable {
        ProbeTable { probes: Vec::new(), next_id: first_id, owner }
    }

    /// The probes added since the table had `count`.
    pub(crate) fn added_since(&self, count: usize) -> &[Probe] {
        &self.probes[count.min(self.probes.len())..]
    }

    /// How many probes it has.
    pub(crate) fn len(&self) -> usize {
        self.probes.len()
    }

    /// The next ID `add` hands out.
    pub(crate) fn next_id(&self) -> u32 {
        self.next_id
    }

    /// The probe with ID `id`.
    pub(crate) fn get(&self, id: u32) -> Option<&Probe> {
        self.probes.binary_search_by_key(&id, |p| p.id).ok().map(|i| &self.probes[i])
    }

    /// Whether some probe's provider is named `provider`.
    pub(crate) fn has_provider(&self, provider: &str) -> bool {
        self.probes.iter().any(|p| p.provider == provider)
    }

    /// The probe named exactly so, if any.
    pub(crate) fn find(&self, provider: &str, module: &str, function: &str, name: &str) -> Option<&Probe> {
        self.probes
            .iter()
            .find(|p| p.provider == provider && p.module == module && p.function == function && p.name == name)
    }
}

/// What providers share when they make probes on demand.
pub(crate) struct ProvideContext<'a> {
    /// The processes pid (and USDT) probes are placed in.
    pub processes: &'a mut Processes,
    /// The running kernel's types (fbt and rawtp probes' arguments).
    pub kernel: &'a mut dyn KernelFacts,
    /// Why the description names no probe, where DTrace says more than
    /// that it matches none (a pid probe's function not in its module).
    pub refusal: Option<Refusal>,
}

/// A description a provider refuses: DTrace's error tag and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub tag: &'static str,
    pub message: String,
}

/// The providers and all probes.
pub(crate) struct Registry {
    providers: Vec<Box<dyn Provider>>,
    table: ProbeTable,
    /// User processes' modules and symbols (pid probes, ustack()).
    pub(crate) processes: Processes,
    /// The running kernel's types, for providers whose probes' arguments
    /// come from BTF.
    kernel: std::cell::RefCell<Box<dyn KernelFacts>>,
}

impl Registry {
    /// A registry that knows nothing of the kernel's types: kernel
    /// functions' and raw tracepoints' arguments are untyped.
    #[cfg(test)]
    pub(crate) fn new() -> Registry {
        Registry::with_kernel(Box::new(UnknownKernel))
    }

    /// A registry whose providers type arguments from `kernel`.
    pub(crate) fn with_kernel(kernel: Box<dyn KernelFacts>) -> Registry {
        let mut providers = providers();
        let mut table = ProbeTable { probes: Vec::new(), next_id: 1, owner: 0 };
        for (owner, provider) in providers.iter_mut().enumerate() {
            table.owner = owner;
            provider.populate(&mut table);
        }
        Registry { providers, table, processes: Processes::default(), kernel: std::cell::RefCell::new(kernel) }
    }

    pub(crate) fn all(&self) -> &[Probe] {
        &self.table.probes
    }

    pub(crate) fn get(&self, id: u32) -> Option<&Probe> {
        // IDs are increasing but not dense (syscall numbers have gaps).
        self.table.get(id)
    }

    /// The ID of probe `provider:::name` (dtrace:::ERROR), 0 if none.
    pub(crate) fn id_of(&self, provider: &str, name: &str) -> u32 {
        self.table.find(provider, "", "", name).map_or(0, |p| p.id)
    }

    fn owner(&self, probe: &Probe) -> &dyn Provider {
        self.providers[probe.owner].as_ref()
    }

    /// The typed arguments (`args[]`) of probe `id`, for providers that
    /// type them; other probes' args[n] is argN.
    pub(crate) fn typed_args(&self, id: u32) -> Option<&'static [ProbeArg]> {
        let probe = self.get(id)?;
        self.owner(probe).typed_args(probe, self.kernel.borrow_mut().as_mut())
    }

    /// Whether probe `id` is of a provider whose probes may appear later
    /// (a description that matches only such probes is retained).
    pub(crate) fn may_appear_later(&self, id: u32) -> bool {
        self.get(id).is_some_and(|p| self.owner(p).retains())
    }

    /// Whether probe `id` fires for a thread other than the current one.
    pub(crate) fn fires_for_another_thread(&self, id: u32) -> bool {
        self.get(id).is_some_and(|p| self.owner(p).fires_for_another_thread(p))
    }

    /// Hands a script's provider definition to every provider (the USDT
    /// provider types its probes' arguments with it).
    pub(crate) fn declare_provider(&mut self, name: &str, probes: &[(String, Vec<String>)]) {
        for provider in &mut self.providers {
            provider.declare_provider(name, probes);
        }
    }

    /// The D library files of every provider.
    pub(crate) fn library(&self) -> Vec<(&'static str, &'static str)> {
        self.providers.iter().flat_map(|p| p.library().iter().copied()).collect()
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
        attributes("Argument Attributes", self.owner(probe).argument_attributes());
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

    /// IDs of the probes matching `desc`, first letting each provider make
    /// the probes it makes on demand.
    pub(crate) fn matching(&mut self, desc: &ProbeDesc) -> Result<Vec<u32>, Refusal> {
        let mut cx =
            ProvideContext { processes: &mut self.processes, kernel: self.kernel.get_mut().as_mut(), refusal: None };
        for (owner, provider) in self.providers.iter_mut().enumerate() {
            self.table.owner = owner;
            let ids = provider.provide(desc, &mut self.table, &mut cx);
            if let Some(refusal) = cx.refusal.take() {
                return Err(refusal);
            }
            if let Some(ids) = ids {
                return Ok(ids);
            }
        }
        Ok(self.table.probes.iter().filter(|p| desc.matches(p)).map(|p| p.id).collect())
    }

    /// The enabled probes grouped by the provider that serves them, in
    /// provider order: (provider, its enabled probes).
    /// Whether a provider of this name exists (a `#pragma D depends_on
    /// provider` of a library).
    pub(crate) fn has_provider(&self, name: &str) -> bool {
        self.providers.iter().any(|p| p.name() == name) || self.table.has_provider(name)
    }

    /// What each provider keeps for processes started later, given every
    /// clause's retained descriptions.
    pub(crate) fn retain(
        &self,
        retained: &[(usize, ProbeDesc)],
        cx: &mut EnableContext,
    ) -> Result<Vec<Box<dyn Retained>>> {
        let mut kept = Vec::new();
        for provider in &self.providers {
            if let Some(r) = provider.retain(retained, self.table.next_id(), cx)? {
                kept.push(r);
            }
        }
        Ok(kept)
    }

    pub(crate) fn by_provider<'a>(
        &'a self,
        enabled: impl Iterator<Item = (u32, &'a [usize])>,
    ) -> Vec<(&'a dyn Provider, Vec<Enabled<'a>>)> {
        let mut groups: Vec<Vec<Enabled>> = (0..self.providers.len()).map(|_| Vec::new()).collect();
        for (id, clauses) in enabled {
            if let Some(probe) = self.get(id) {
                groups[probe.owner].push(Enabled { probe, clauses });
            }
        }
        self.providers.iter().map(|p| p.as_ref()).zip(groups).filter(|(_, g)| !g.is_empty()).collect()
    }
}

/// An enabled probe and the clauses (indices in program order) that run
/// when it fires.
pub(crate) struct Enabled<'a> {
    pub probe: &'a Probe,
    pub clauses: &'a [usize],
}

/// What the generated clause programs are loaded as: a tail call needs the
/// caller's program type, and for some types its expected attach type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ClauseProgType {
    pub prog_type: libbpf_sys::bpf_prog_type,
    pub expected_attach_type: libbpf_sys::bpf_attach_type,
    /// For trampoline programs, the function they are bound to (BTF ID).
    pub attach_btf_id: u32,
}

const fn clause_type(prog_type: libbpf_sys::bpf_prog_type) -> ClauseProgType {
    ClauseProgType { prog_type, expected_attach_type: 0, attach_btf_id: 0 }
}

pub(crate) const RAW_TP: ClauseProgType = clause_type(libbpf_sys::BPF_PROG_TYPE_RAW_TRACEPOINT);
pub(crate) const TRACEPOINT: ClauseProgType = clause_type(libbpf_sys::BPF_PROG_TYPE_TRACEPOINT);
pub(crate) const PERF_EVENT: ClauseProgType = clause_type(libbpf_sys::BPF_PROG_TYPE_PERF_EVENT);
/// Uprobes are kprobe-type programs: so are the pid probes' clause programs.
pub(crate) const KPROBE: ClauseProgType = clause_type(libbpf_sys::BPF_PROG_TYPE_KPROBE);
/// Tail-called from a uprobe.multi program, which has this attach type.
pub(crate) const KPROBE_UPROBE_MULTI: ClauseProgType = ClauseProgType {
    prog_type: libbpf_sys::BPF_PROG_TYPE_KPROBE,
    expected_attach_type: libbpf_sys::BPF_TRACE_UPROBE_MULTI,
    attach_btf_id: 0,
};

/// Sets what every entry-program object reads of the script (dtrace.h's
/// dt_need_* constants) in its read-only data `$ro`.
macro_rules! script_needs {
    ($ro:expr, $needs:expr) => {{
        $ro.dt_need_ppid = $needs.ppid;
        $ro.dt_need_caller = $needs.caller;
        $ro.dt_need_ucaller = $needs.ucaller;
        $ro.dt_need_stack_skip = $needs.stack;
        $ro.dt_need_ustack = $needs.ustack;
    }};
}
pub(crate) use script_needs;

/// What the script asks of every entry program, read from the compiled
/// program by the runtime.
pub(crate) struct ScriptNeeds<'a> {
    /// `ppid` is read: the entry programs fill it (dt_need_ppid).
    pub ppid: bool,
    /// `caller` and `ucaller` are read: the entry programs walk the stacks
    /// (dt_need_caller, dt_need_ucaller).
    pub caller: bool,
    pub ucaller: bool,
    /// arg0..argN are read (syscall entry copies them only then).
    pub args: bool,
    /// stack() or stackdepth is used: kernel frames are needed, and the
    /// entry programs count the machinery frames above the traced code's
    /// (dt_need_stack_skip).
    pub stack: bool,
    /// ustack() is used: the entry programs reset the firing's ustack()
    /// value (dt_need_ustack).
    pub ustack: bool,
    /// (probe ID, n) of every typed `args[n]` the clauses read.
    pub typed_args_used: &'a std::collections::BTreeSet<(u32, usize)>,
    /// (probe ID, n) to the members read as `args[n]->member`, or None
    /// where any member may be read.
    pub typed_arg_members: &'a std::collections::BTreeMap<(u32, usize), Option<std::collections::BTreeSet<String>>>,
}

/// What providers ask of the running kernel's BTF (read lazily: only a
/// question asked costs anything). Implemented by `sema::kernel_btf`.
pub(crate) trait KernelFacts {
    /// How many arguments raw tracepoint `name`'s prototype has.
    fn tracepoint_arg_count(&mut self, name: &str) -> Option<usize>;
    /// Whether the kernel has `struct name`.
    fn has_struct(&mut self, name: &str) -> bool;
    /// The D types of raw tracepoint `name`'s arguments.
    fn tracepoint_parameters(&mut self, name: &str) -> Option<Vec<String>>;
    /// The D types of kernel function `name`'s parameters.
    fn function_parameters(&mut self, name: &str) -> Option<Vec<String>>;
    /// The D type kernel function `name` returns.
    fn function_return(&mut self, name: &str) -> Option<String>;
    /// The BTF type ID of kernel function `name` (a trampoline's attach target).
    fn function_btf_id(&mut self, name: &str) -> Option<u32>;
}

/// A kernel nobody asked about: for registries that never enable a probe.
#[cfg(test)]
struct UnknownKernel;

#[cfg(test)]
impl KernelFacts for UnknownKernel {
    fn tracepoint_arg_count(&mut self, _name: &str) -> Option<usize> {
        None
    }
    fn has_struct(&mut self, _name: &str) -> bool {
        false
    }
    fn tracepoint_parameters(&mut self, _name: &str) -> Option<Vec<String>> {
        None
    }
    fn function_parameters(&mut self, _name: &str) -> Option<Vec<String>> {
        None
    }
    fn function_return(&mut self, _name: &str) -> Option<String> {
        None
    }
    fn function_btf_id(&mut self, _name: &str) -> Option<u32> {
        None
    }
}

/// BPF instructions as the kernel takes them.
pub(crate) type Insns = Vec<libbpf_sys::bpf_insn>;

/// Joins an entry program's final instructions with clause code (the
/// runtime's, which holds the generated programs).
pub(crate) type InlineClauses<'a> = dyn FnMut(&[libbpf_sys::bpf_insn], Fires, EntryWork) -> Result<Option<Insns>> + 'a;

/// What an entry program does besides starting a firing of its probe. When
/// it does nothing else, a predicate that can be decided without the probe
/// context (`/pid == 123/`) may run before it and skip it altogether; an
/// entry that keeps state for later firings (a start time, a queue) must
/// run on every event.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryWork {
    FiringOnly,
    KeepsState,
}

/// Which clauses an entry program is joined with.
pub(crate) enum Fires<'c> {
    /// These, whatever slot its tail call names (the caller knows the
    /// program fires only them).
    Clauses(&'c [usize]),
    /// Those of the slot its tail call names, when that is a constant:
    /// (program array descriptor, slot) → clauses.
    Slot(&'c BTreeMap<(i32, u32), Vec<usize>>),
}

/// What a provider's `enable` works with: the script's needs, the maps
/// every entry program shares, the generated clause programs, and where
/// links and warnings go.
pub(crate) struct EnableContext<'a> {
    pub needs: ScriptNeeds<'a>,
    pub kernel: &'a mut dyn KernelFacts,
    /// The core object's probe context and state maps.
    pub shared_ctx: BorrowedFd<'a>,
    pub shared_state: BorrowedFd<'a>,
    pub shared_caller_code: BorrowedFd<'a>,
    pub shared_cpuinfo: BorrowedFd<'a>,
    /// Loads (once per type and list) the program generated for a clause list.
    pub clause_program: &'a mut dyn FnMut(&[usize], ClauseProgType) -> Result<i32>,
    /// An entry program's final instructions with the code generated for a
    /// clause list in place of its tail call; None when they cannot be
    /// joined (see `EnableContext::inlined`).
    pub inline_clauses: &'a mut InlineClauses<'a>,
    /// The provider's entry programs must run on the task's own kernel
    /// stack (bpf/inet.h tells process context by the stack's address), so
    /// they keep their tail calls: kernels since 6.13 give a program with
    /// no tail call and a large frame a per-CPU stack of its own. Set by
    /// the provider, cleared by the runtime before each provider's enable.
    pub on_task_stack: bool,
    /// The clause list of every program-array slot filled so far, by
    /// (program array descriptor, slot).
    pub slot_clauses: BTreeMap<(i32, u32), Vec<usize>>,
    pub links: Vec<Link>,
    /// Descriptors that keep programs attached (joined programs, their
    /// raw tracepoints and perf events).
    pub held: Vec<OwnedFd>,
    /// Probes that are enabled but cannot fire on this kernel, and why.
    pub warnings: Vec<String>,
    /// The most probes of processes found after tracing began that are
    /// enabled at a time (nusdtprobes).
    pub late_probes: u32,
    /// The cpu option: probes fire on this CPU only (the programs check);
    /// a timer that fires on one CPU runs there.
    pub only_cpu: Option<u32>,
}

impl EnableContext<'_> {
    /// Opens a provider's entry-program skeleton with the shared maps in
    /// place of its own copies; `what` names it in errors.
    pub(crate) fn open<B: SkelBuilder<'static>>(&self, builder: B, what: &str) -> Result<B::Output> {
        self.open_reading_kernel_structs(builder, what, true)
    }

    /// `open`, for an object whose programs, as this script loads them,
    /// read no kernel struct unless `reads_kernel_structs` (relocation.rs).
    pub(crate) fn open_reading_kernel_structs<B: SkelBuilder<'static>>(
        &self,
        builder: B,
        what: &str,
        reads_kernel_structs: bool,
    ) -> Result<B::Output> {
        // The skeletons borrow their object storage for their whole life,
        // which is the rest of the process.
        let storage = Box::leak(Box::new(MaybeUninit::uninit()));
        let open = if reads_kernel_structs {
            builder.open(storage)
        } else {
            builder.open_opts(open_opts_without_kernel_types()?, storage)
        };
        let mut open = open.with_context(|| format!("opening the {what} entry programs"))?;
        for mut map in open.open_object_mut().maps_mut() {
            let fd = match map.name().to_str() {
                Some("dt_ctx") => self.shared_ctx,
                Some("dt_state") => self.shared_state,
                Some("dt_caller_code") => self.shared_caller_code,
                Some("dt_cpuinfo") => self.shared_cpuinfo,
                _ => continue,
            };
            map.reuse_fd(fd).with_context(|| format!("sharing the maps with the {what} entry programs"))?;
        }
        Ok(open)
    }

    /// Puts the program generated for `clauses` in slot `slot` of
    /// `prog_array`.
    pub(crate) fn fill(
        &mut self,
        prog_array: &dyn MapCore,
        slot: u32,
        clauses: &[usize],
        ty: ClauseProgType,
    ) -> Result<()> {
        let fd = (self.clause_program)(clauses, ty)?;
        prog_array.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
        self.slot_clauses.insert((prog_array.as_fd().as_raw_fd(), slot), clauses.to_vec());
        Ok(())
    }

    /// Loads entry program `program` (loaded already; for a per-probe
    /// program, the copy for `slot`) joined with the code generated for
    /// `clauses`: one program that runs both, rather than an entry that
    /// tail-calls the clause program. None when that cannot be done here
    /// (the entry calls BPF functions of its own, or the kernel refuses
    /// the joined program): then the caller fills the program array as
    /// before, and a refused clause program gets its diagnosis there.
    pub(crate) fn inlined(
        &mut self,
        program: &libbpf_rs::Program,
        slot: Option<u32>,
        target: copies::Target,
        clauses: &[usize],
        work: EntryWork,
    ) -> Result<Option<OwnedFd>> {
        let entry = copies::final_insns(program, slot)?;
        let Some(joined) = (self.inline_clauses)(&entry, Fires::Clauses(clauses), work)? else {
            return Ok(None);
        };
        Ok(copies::load_insns(program, &joined, target).ok())
    }

    /// The program of one probe of a per-probe provider: the copy of
    /// `program` for `slot` joined with the probe's clauses, or else the
    /// copy alone, which tail-calls the clause program put in `slot` of
    /// `prog_array` (loaded as `ty`).
    pub(crate) fn probe_copy(
        &mut self,
        program: &libbpf_rs::Program,
        slot: u32,
        target: copies::Target,
        e: &Enabled,
        prog_array: &dyn MapCore,
        ty: ClauseProgType,
    ) -> Result<OwnedFd> {
        // The per-probe entries (fbt, sdt, rawtp) only start a firing.
        if let Some(joined) = self.inlined(program, Some(slot), target, e.clauses, EntryWork::FiringOnly)? {
            return Ok(joined);
        }
        self.fill(prog_array, slot, e.clauses, ty)?;
        copies::load(program, slot, target)
    }

    /// Fills a slot provider's program array: each enabled probe's clauses
    /// go in its slot (its key).
    pub(crate) fn fill_slots(
        &mut self,
        prog_array: &dyn MapCore,
        enabled: &[Enabled],
        ty: ClauseProgType,
    ) -> Result<()> {
        for e in enabled {
            self.fill(prog_array, e.probe.key as u32, e.clauses, ty)?;
        }
        Ok(())
    }

    /// Attaches entry program `program` of `object` to raw tracepoint
    /// `tracepoint`; false when the running kernel has no such tracepoint
    /// (or the program does not fit its prototype).
    pub(crate) fn attach_raw_tp(&mut self, object: &libbpf_rs::Object, program: &str, tracepoint: &str) -> bool {
        let Some(prog) = object.progs_mut().find(|p| p.name() == program) else { return false };
        // Joined with the clauses of the slot it fires, when that is one
        // slot the provider filled: no tail call per firing.
        let entry = prog.insns();
        let joined = match self.on_task_stack {
            true => None,
            false => {
                (self.inline_clauses)(entry, Fires::Slot(&self.slot_clauses), EntryWork::KeepsState).ok().flatten()
            }
        };
        if let Some(joined) = joined {
            if let Ok(fd) = copies::load_insns(&prog, &joined, copies::Target::default()) {
                return match copies::attach_raw(&fd, Some(tracepoint)) {
                    Ok(link) => {
                        self.held.extend([fd, link]);
                        true
                    }
                    Err(_) => false,
                };
            }
        }
        match prog.attach_raw_tracepoint(tracepoint) {
            Ok(link) => {
                self.links.push(link);
                true
            }
            Err(_) => false,
        }
    }

    /// Warns that the enabled probes `silent` (name, reason) of `provider`,
    /// which Linux has no event for, will not fire: one line per reason,
    /// so that `provider:::` says each once.
    pub(crate) fn never_fire(&mut self, provider: &str, silent: &[(&str, &str)]) {
        let mut reasons: Vec<(&str, Vec<String>)> = Vec::new();
        for &(name, why) in silent {
            let probe = format!("{provider}:::{name}");
            match reasons.iter_mut().find(|(w, _)| *w == why) {
                Some((_, probes)) => probes.push(probe),
                None => reasons.push((why, vec![probe])),
            }
        }
        for (why, probes) in reasons {
            self.warnings.push(format!("{} will not fire: {why}", probes.join(", ")));
        }
    }

    /// Attaches `program` to `tracepoint`, or warns that `probe` will not
    /// fire on this kernel.
    pub(crate) fn attach_raw_tp_or_warn(
        &mut self,
        object: &libbpf_rs::Object,
        probe: &str,
        program: &str,
        tracepoint: &str,
    ) {
        if !self.attach_raw_tp(object, program, tracepoint) {
            self.warnings.push(format!("{probe} will not fire: this kernel has no usable {tracepoint} tracepoint"));
        }
    }
}

/// Loads only the programs named in `wanted` of an entry object.
pub(crate) fn autoload_only(object: &mut libbpf_rs::OpenObject, wanted: &[&str]) {
    for mut prog in object.progs_mut() {
        let name = prog.name().to_string_lossy().into_owned();
        prog.set_autoload(wanted.contains(&name.as_str()));
    }
}

/// The probes of a provider whose probes are the slots of one program
/// array, named `names` in slot order: probe `names[i]` has key `i`.
/// Returns the first probe's ID, which the entry programs add their slot to.
fn populate_slots<'a>(probes: &mut ProbeTable, provider: &'static str, names: impl Iterator<Item = &'a str>) -> u32 {
    // The kernel's probes are vmlinux's, as dtrace-utils names them
    // (`sched:vmlinux::on-cpu`); BEGIN, END and ERROR are dtrace's own.
    let module = if provider == "dtrace" { "" } else { "vmlinux" };
    let base = probes.next_id();
    for (slot, name) in names.enumerate() {
        probes.add(provider, module, "", name, slot as u64);
    }
    base
}

/// The enabled probes' slots (keys), for autoloading their programs.
fn enabled_slots(enabled: &[Enabled]) -> Vec<usize> {
    enabled.iter().map(|e| e.probe.key as usize).collect()
}

/// What providers' tests share.
#[cfg(test)]
pub(crate) mod testing {
    use super::Registry;

    /// Asserts that an entry-program file numbers its probe slots as the
    /// provider's table orders them (`#define DT_<PREFIX>_<NAME> <slot>` and
    /// `DT_<PREFIX>_COUNT`) and has each probe's program on its raw tracepoint.
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

    /// A man page's LINUX MAPPING entry for probe `name` (`.B name` up to the
    /// next `.TP` or `.PP`), with `\-` read as `-` and lines joined.
    pub(crate) fn man_mapping_entry(page: &str, name: &str) -> String {
        let page = page.replace("\\-", "-");
        let section = page.split(".SH LINUX MAPPING").nth(1).and_then(|s| s.split(".SH").next()).unwrap_or_default();
        let entry = section.split(&format!(".B {name}\n")).nth(1).unwrap_or_default();
        entry.split(".TP").next().unwrap_or_default().split(".PP").next().unwrap_or_default().replace('\n', " ")
    }

    /// Asserts that each D struct of the D library has the layout of its C
    /// twin in a compiled entry-program object: the same members in the same
    /// order, at the same offsets, of the same sizes, and the same size. The C
    /// side is read from the object's BTF. `pairs` are (D typedef, C struct name).
    pub(crate) fn assert_same_layouts(object: &[u8], object_name: &str, pairs: &[(&str, &str)]) {
        use crate::sema::check::{CheckOptions, Checker};
        use crate::sema::ir::{RecordBody, Type};
        use libbpf_rs::btf::types::{self, MemberAttr};
        use libbpf_rs::btf::Btf;
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
        let library = crate::compile::parse_library(&registry).expect("the D library parses");
        let mut checker = Checker::new(
            CheckOptions {
                macro_args: &[],
                zero_matches_ok: false,
                strsize: crate::flags::string_buffer_bytes(256),
                max_strlen: 256,
                target_pid: None,
                defaultargs: false,
                stackframes: 20,
                ustackframes: 100,
                jstackframes: 50,
                maxframes: 127,
                scratchsize: 4096,
                tregs: None,
                empty: false,
                d_version: (1, 13),
            },
            &mut registry,
        );
        checker.load_library(&library).map_err(|e| e.message).expect("the D library loads");
        for (typedef, name) in pairs {
            let d = checker
                .declared_struct(typedef)
                .unwrap_or_else(|| panic!("{typedef} is not declared in the D library"));
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
            // DTrace's (CTF's) records end with their last member, C's are
            // padded to their alignment.
            let c_end = c_members.iter().map(|(_, offset, size)| offset + size).max().unwrap_or(0);
            assert_eq!(d.size, c_end, "size of {typedef}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IDs come from one counter in provider order: BEGIN is 1 as in
    /// DTrace, and each provider's probes are contiguous.
    #[test]
    fn provider_ids_follow_the_registry_order() {
        let registry = Registry::new();
        assert_eq!(registry.id_of("dtrace", "BEGIN"), 1);
        let mut seen: Vec<&str> = Vec::new();
        for p in registry.all() {
            if seen.last() != Some(&p.provider) {
                assert!(!seen.contains(&p.provider), "{} probes are not contiguous", p.provider);
                seen.push(p.provider);
            }
        }
        let order: Vec<&str> = providers().iter().map(|p| p.name()).filter(|n| seen.contains(n)).collect();
        assert_eq!(seen, order);
    }
}
