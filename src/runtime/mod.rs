//! The runtime: orchestrates a tracing session. It loads the core object
//! (the maps every entry program shares), creates the maps the generated
//! code uses, and asks each provider with enabled probes to load and attach
//! its entry programs, handing it the generated clause programs (patched
//! with the maps' descriptors, loaded once per program type). It names no
//! provider: `provider::Registry` says which provider serves each probe.
//!
//! Start-up work is proportional to the script: only the providers the
//! script enables load anything, and BTF is read only where a provider
//! asks (`provider::KernelFacts`). Everything
//! loaded and attached is owned by `Session`; dropping it detaches all.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

pub(crate) mod batch;
mod cpuinfo;
mod functions;
mod psargs;
pub(crate) mod task_storage;

pub(crate) use functions::bpf_loop_usable;

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, MapHandle, MapType};

use crate::codegen::emit::ChainPart;
use crate::codegen::insn::{atomic_cmpxchg64, exit, mov_imm, st_imm, Insn, Size, FP, R0, R2};
use crate::codegen::maps::{patch_maps, MapRef};
use crate::codegen::splice;
use crate::codegen::{Generated, PartError};
use crate::defs::layout::{self, core_skel};
use crate::kallsyms::KernelSymbols;
use crate::provider::{
    ClauseProgType, EnableContext, Enabling, EntryWork, Fires, LateContext, Probe, ProbeDesc, Registry, Retained,
    ScriptNeeds,
};
use crate::sema::check::var_bytes;
use crate::sema::ir::Program;

/// Options that shape the maps and buffers.
pub(crate) struct RuntimeOptions {
    /// Bytes of the buffer records reach the consumer through.
    pub bufsize: u64,
    /// bufresize=auto: a buffer the kernel cannot allocate is halved until
    /// it can (DTrace's policy); manual: the error stands.
    pub bufresize_auto: bool,
    /// The most USDT probes of processes found after tracing began that
    /// are enabled at a time (nusdtprobes).
    pub nusdtprobes: u32,
    /// Bytes each dynamic variable (associative array, thread-local) may
    /// hold (the dynvarsize option).
    pub dynvarsize: u64,
    /// Bytes per CPU for each aggregation (the aggsize option), when set.
    pub aggsize: Option<u64>,
    pub nspec: u32,
    /// The only CPU probes fire on (the cpu option).
    pub cpu: Option<u32>,
    /// RLIMIT_MEMLOCK (the lockmem option); None: unlimited.
    pub lockmem: Option<u64>,
    /// bpflog: the verifier's log of each clause program, in this many
    /// bytes at most (bpflogsize), is printed.
    pub bpflog: Option<u32>,
}

/// Everything loaded and attached for one run.
pub(crate) struct Session {
    core: core_skel::CoreSkel<'static>,
    /// Each enabled provider's part, in registry order.
    providers: Vec<Box<dyn Enabling>>,
    /// Probes that are enabled but cannot fire on this kernel, and why.
    pub warnings: Vec<String>,
    _links: Vec<Link>,
    /// The clause programs loaded, and where more are loaded (processes
    /// whose USDT probes retained descriptions match, found later).
    clause_programs: std::cell::RefCell<ClausePrograms>,
    /// The generated code's maps by role (`code_maps`'s, which `_maps` and
    /// the core object keep open).
    code_map_fds: BTreeMap<MapRef, i32>,
    /// What providers keep for processes started later (retained
    /// descriptions), and the probes made in them so far.
    late: std::cell::RefCell<Vec<Box<dyn Retained>>>,
    late_probes: std::cell::RefCell<BTreeMap<u32, Probe>>,
    /// The first look for started processes looks at all of them.
    look_at_every_process: std::cell::Cell<bool>,
    /// What keeps the joined entry programs attached.
    _held: Vec<OwnedFd>,
    _maps: Vec<MapHandle>,
    /// One per aggregation, in `Program::aggregations` order.
    aggregations: Vec<MapHandle>,
    /// stack(n)'s frames by stack ID, one map per depth n.
    stacks: BTreeMap<u8, MapHandle>,
    /// ustack(n)'s frames by stack ID, one map per depth n.
    ustacks: BTreeMap<u8, MapHandle>,
    /// /proc/kallsyms, read once: at start for scripts whose entry programs
    /// need the code ranges of traced code, else when first printed from.
    kernel_symbols: std::cell::OnceCell<KernelSymbols>,
}

/// The maps of the generated code, by role.
struct CodeMaps {
    fds: BTreeMap<MapRef, i32>,
    /// The maps created for this script (the core object owns the others).
    owned: Vec<MapHandle>,
    aggregations: Vec<MapHandle>,
    stacks: BTreeMap<u8, MapHandle>,
    ustacks: BTreeMap<u8, MapHandle>,
}

impl CodeMaps {
    /// Creates the maps `program` uses, sized for it and the options, and
    /// names the core object's shared maps by their roles too.
    fn create(
        program: &Program,
        generated: &Generated,
        registry: &Registry,
        opts: &RuntimeOptions,
        core: &core_skel::CoreSkel<'static>,
    ) -> Result<CodeMaps> {
        let mut fds: BTreeMap<MapRef, i32> = BTreeMap::new();
        let mut maps: Vec<(MapRef, MapHandle)> = Vec::new();
        let keep = |role: MapRef, map: MapHandle, maps: &mut Vec<(MapRef, MapHandle)>| maps.push((role, map));
        let globals_size = program.globals_bytes().max(8);
        keep(MapRef::Globals, array_map("dt_globals", globals_size)?, &mut maps);
        let strings = array_map("dt_strings", program.strsize * program.strings.len())?;
        let mut string_bytes = vec![0u8; program.strsize * program.strings.len()];
        for (i, s) in program.strings.iter().enumerate() {
            let s = &s[..s.len().min(program.strsize)];
            string_bytes[i * program.strsize..i * program.strsize + s.len()].copy_from_slice(s);
        }
        strings.update(&0u32.to_ne_bytes(), &string_bytes, MapFlags::ANY)?;
        keep(MapRef::Strings, strings, &mut maps);
        let scratch = MapHandle::create(
            MapType::PercpuArray,
            Some("dt_scratch"),
            4,
            generated.scratch_size as u32,
            1,
            &map_opts(),
        )?;
        keep(MapRef::Scratch, scratch, &mut maps);
        let probenames = MapHandle::create(
            MapType::Hash,
            Some("dt_probenames"),
            4,
            (4 * program.strsize) as u32,
            // Room for probes of processes found later, where kept for.
            generated.clauses_of.len().max(1) as u32
                + if program.clauses.iter().any(|c| !c.retained.is_empty()) { opts.nusdtprobes } else { 0 },
            &map_opts(),
        )?;
        if program.uses_probe_names {
            for &id in generated.clauses_of.keys() {
                let Some(p) = registry.get(id) else { continue };
                probenames.update(&id.to_ne_bytes(), &probe_names_value(p, program), MapFlags::ANY)?;
            }
        }
        keep(MapRef::ProbeNames, probenames, &mut maps);
        let self_sizes: Vec<usize> = program.thread_locals.iter().map(|v| var_bytes(&v.ty, program.strsize)).collect();
        if generated.task_storage {
            let created = task_storage::create_maps(&self_sizes).context("creating task-local storage for self->")?;
            for (i, m) in created.into_iter().enumerate() {
                keep(MapRef::ThreadLocal(i), m, &mut maps);
            }
        } else {
            for (i, &value_size) in self_sizes.iter().enumerate() {
                let entries = dynvar_entries(opts.dynvarsize, 4, value_size);
                let m = MapHandle::create(MapType::Hash, Some("dt_self"), 4, value_size as u32, entries, &map_opts())?;
                keep(MapRef::ThreadLocal(i), m, &mut maps);
            }
        }
        // Aggregations: one per-CPU hash map each, sized by aggsize. The maps
        // are preallocated: run-time allocation from tracing programs can fail
        // transiently (and warns on kernels before 6.1). Preallocating costs
        // start-up time (~10 ms per 16,384 keys), so without -x aggsize a map
        // holds at most DEFAULT_AGG_KEYS keys; a full map is reported as drops.
        let mut aggregations = Vec::new();
        for (i, agg) in program.aggregations.iter().enumerate() {
            let value_size = agg.map_value_words() * 8;
            let per_key = (agg.key_size() + value_size) as u64;
            let entries = match opts.aggsize {
                // Fewer keys than asked is a smaller buffer: bufresize's call.
                Some(bytes) if bytes / per_key > MAX_AGG_KEYS && !opts.bufresize_auto => anyhow::bail!(
                    "aggregation @{} would hold {} keys of {per_key} bytes (aggsize); a map holds at most \
                     {MAX_AGG_KEYS} here, and bufresize=manual forbids a smaller one",
                    agg.name,
                    bytes / per_key
                ),
                Some(bytes) => (bytes / per_key).clamp(64, MAX_AGG_KEYS),
                None => ((4 << 20) / per_key).clamp(64, DEFAULT_AGG_KEYS),
            } as u32;
            let (map_type, key_size, entries) = if agg.is_array() {
                (MapType::PercpuArray, 4, 1)
            } else {
                (MapType::PercpuHash, agg.key_size() as u32, entries)
            };
            let map = MapHandle::create(map_type, Some("dt_agg"), key_size, value_size as u32, entries, &map_opts())
                .with_context(|| format!("creating the map of aggregation @{}", agg.name))?;
            fds.insert(MapRef::Aggregation(i), map.as_fd().as_raw_fd());
            aggregations.push(map);
        }
        // Associative arrays: one hash map each, sized like thread-local variables.
        for (i, a) in program.assoc_arrays.iter().enumerate() {
            let value_size = var_bytes(&a.value, program.strsize);
            let entries = dynvar_entries(opts.dynvarsize, a.key_size(), value_size);
            let map = MapHandle::create(
                MapType::Hash,
                Some("dt_assoc"),
                a.key_size() as u32,
                value_size as u32,
                entries,
                &map_opts(),
            )
            .with_context(|| format!("creating the map of associative array {}", a.name))?;
            keep(MapRef::Assoc(i), map, &mut maps);
        }
        let max_value = program.aggregations.iter().map(|a| a.value_words() * 8).max().unwrap_or(8);
        let agg_key = MapHandle::create(
            MapType::PercpuArray,
            Some("dt_aggkey"),
            4,
            (generated.key_buffer_size * crate::codegen::emit::MAX_KEY_DEPTH) as u32,
            1,
            &map_opts(),
        )?;
        keep(MapRef::AggKey, agg_key, &mut maps);
        keep(MapRef::AggZero, array_map("dt_aggzero", max_value)?, &mut maps);
        // A stack map of n frames hashes only the first n: stack(n)s equal
        // there get one ID, so they are one aggregation key, as in DTrace.
        // The kernel refuses maps deeper than perf_event_max_stack.
        let max_frames = perf_event_max_stack();
        let mut stacks = BTreeMap::new();
        for &depth in &program.stack_depths {
            let frames = u32::from(depth).clamp(1, max_frames);
            let map = MapHandle::create(
                MapType::StackTrace,
                Some("dt_stacks"),
                4,
                8 * frames,
                stack_map_entries(8 * frames),
                &map_opts(),
            )
            .context("creating the stack map for stack( )")?;
            fds.insert(MapRef::Stacks(depth), map.as_fd().as_raw_fd());
            stacks.insert(depth, map);
        }
        // User stacks: each frame as the kernel resolves it when the stack is
        // taken, a build ID and file offset (struct bpf_stack_build_id), so
        // that frames of a process that has exited by the time they are
        // printed can still be symbolized.
        let mut ustacks = BTreeMap::new();
        for &depth in &program.ustack_depths {
            let frames = u32::from(depth).clamp(1, max_frames);
            let mut create = map_opts();
            create.map_flags = libbpf_sys::BPF_F_STACK_BUILD_ID;
            let map = MapHandle::create(
                MapType::StackTrace,
                Some("dt_ustacks"),
                4,
                frames * USTACK_FRAME_BYTES,
                USTACK_ENTRIES,
                &create,
            )
            .context("creating the user stack map for ustack( )")?;
            fds.insert(MapRef::UserStacks(depth), map.as_fd().as_raw_fd());
            ustacks.insert(depth, map);
        }
        let m = &core.maps;
        for (role, map) in [
            (MapRef::Ctx, m.dt_ctx.as_fd()),
            (MapRef::Events, m.dt_events.as_fd()),
            (MapRef::State, m.dt_state.as_fd()),
            (MapRef::Drops, m.dt_drops.as_fd()),
            (MapRef::AggDrops, m.dt_aggdrops.as_fd()),
            (MapRef::DynDrops, m.dt_dyndrops.as_fd()),
            (MapRef::DblErrors, m.dt_dblerrors.as_fd()),
            (MapRef::Vtime, m.dt_vtime.as_fd()),
            (MapRef::CpuInfo, m.dt_cpuinfo.as_fd()),
            (MapRef::Psargs, m.dt_psargs.as_fd()),
            (MapRef::Specs, m.dt_specs.as_fd()),
            (MapRef::SpecFree, m.dt_spec_free.as_fd()),
            (MapRef::SpecEnding, m.dt_spec_ending.as_fd()),
            (MapRef::SpecStats, m.dt_spec_stats.as_fd()),
        ] {
            fds.insert(role, map.as_raw_fd());
        }
        fds.extend(maps.iter().map(|(role, map)| (*role, map.as_fd().as_raw_fd())));
        Ok(CodeMaps { fds, owned: maps.into_iter().map(|(_, map)| map).collect(), aggregations, stacks, ustacks })
    }

    fn fd(&self, map: MapRef) -> Option<i32> {
        self.fds.get(&map).copied()
    }
}

pub(crate) fn start(
    program: &Program,
    generated: &Generated,
    registry: &Registry,
    opts: &RuntimeOptions,
) -> Result<Session> {
    set_limits(opts.lockmem);
    // libbpf's own messages would interleave with DTrace's; our errors say
    // what failed instead.
    if std::env::var_os("DTRACE_DEBUG_LIBBPF").is_none() {
        libbpf_rs::set_print(None);
    }
    // Said plainly rather than in the verifier's log of the refused program.
    // SAFETY: a probe call with no options; it only loads a program.
    let has_task_pt_regs = || unsafe {
        libbpf_sys::libbpf_probe_bpf_helper(
            libbpf_sys::BPF_PROG_TYPE_RAW_TRACEPOINT,
            libbpf_sys::BPF_FUNC_task_pt_regs,
            std::ptr::null(),
        )
    } == 1;
    if program.uses_uregs && !has_task_pt_regs() {
        anyhow::bail!(
            "uregs[] needs the kernel's bpf_task_pt_regs helper (Linux 5.15 and later), which this kernel lacks"
        );
    }

    let retained: Vec<(usize, ProbeDesc)> =
        program.clauses.iter().enumerate().flat_map(|(i, c)| c.retained.iter().map(move |d| (i, d.clone()))).collect();
    // `caller` looks for the first frame in traced code: the kernel's code
    // without the tracing machinery, as kallsyms tells it.
    let kernel_symbols = std::cell::OnceCell::new();
    let caller_ranges = if program.uses_caller || program.uses_kernel_stack() {
        kernel_symbols.get_or_init(KernelSymbols::load).caller_ranges()
    } else {
        Vec::new()
    };
    // The ring buffer's size is a power of two the kernel can map.
    if !opts.bufresize_auto && opts.bufsize > MAX_RING {
        anyhow::bail!(
            "a buffer of {} bytes is more than the kernel maps ({MAX_RING} bytes), and bufresize=manual forbids a smaller one",
            opts.bufsize
        );
    }
    // A program none of whose clauses records sends only fault records
    // through the ring buffer, and one that records only in BEGIN and END
    // those and theirs; a small ring carries them, and every page of a ring
    // counts in the process's resident memory (the consumer maps it).
    let ring_bytes = match once_only_record_bytes(program, registry) {
        Some(bytes) => opts.bufsize.min(FAULTS_ONLY_RING + bytes),
        None => opts.bufsize,
    };
    let mut ring_size = ring_bytes.clamp(MIN_RING, MAX_RING).next_power_of_two() as u32;
    let core = loop {
        match load_core(program, opts, ring_size, !retained.is_empty(), caller_ranges.len()) {
            Ok(core) => break core,
            Err(e) if opts.bufresize_auto && ring_size > MIN_RING as u32 && out_of_memory(&e) => {
                debug_line!("a ring buffer of {ring_size} bytes cannot be had ({e:#}): halving it");
                ring_size /= 2
            }
            Err(e) => return Err(e),
        }
    };
    debug_line!("loaded the core object: a ring buffer of {ring_size} bytes");
    for (i, (start, end)) in caller_ranges.iter().enumerate() {
        let mut range = [0u8; layout::CODE_RANGE_SIZE];
        range[..8].copy_from_slice(&start.to_ne_bytes());
        range[8..16].copy_from_slice(&end.to_ne_bytes());
        core.maps.dt_caller_code.update(&(i as u32).to_ne_bytes(), &range, MapFlags::ANY)?;
    }
    if program.uses_cpuinfo {
        cpuinfo::fill(&core.maps.dt_cpuinfo).context("describing the CPUs for curcpu and cpu_t")?;
    }
    let mut links: Vec<Link> = Vec::new();
    if program.uses_vtimestamp {
        links.push(core.progs.dt_vtime_switch.attach().context("attaching vtimestamp's context-switch program")?);
    }
    if program.uses_psargs_table {
        // Attached first, so a process started during the scan is not missed.
        links.push(core.progs.dt_psargs_exec.attach().context("attaching pr_psargs' exec program")?);
        links.push(core.progs.dt_psargs_fork.attach().context("attaching pr_psargs' fork program")?);
        psargs::fill(&core.maps.dt_psargs).context("reading the command lines of running processes")?;
    }
    let mut state = vec![0u8; layout::STATE_SIZE];
    state[layout::STATE_WALL_OFFSET..layout::STATE_WALL_OFFSET + 8].copy_from_slice(&wall_offset_ns().to_ne_bytes());
    // After dt_vtime_switch is attached: threads it has not seen since
    // have been on their CPUs from here on.
    state[layout::STATE_VTIME_START..layout::STATE_VTIME_START + 8].copy_from_slice(&monotonic_ns().to_ne_bytes());
    if let Some(cpu) = opts.cpu {
        let cpus = libbpf_rs::num_possible_cpus()?;
        if cpu as usize >= cpus {
            anyhow::bail!("cpu {cpu} does not exist (this machine has {cpus})");
        }
        state[layout::STATE_ONLY_CPU..layout::STATE_ONLY_CPU + 4].copy_from_slice(&(cpu + 1).to_ne_bytes());
    }
    state[layout::STATE_CALLER_RANGES..layout::STATE_CALLER_RANGES + 4]
        .copy_from_slice(&(caller_ranges.len() as u32).to_ne_bytes());
    // Attached probes fire nothing until BEGIN has run (fire_begin).
    state[layout::STATE_DRAINING..layout::STATE_DRAINING + 4].copy_from_slice(&layout::STATE_NOT_BEGUN.to_ne_bytes());
    core.maps.dt_state.update(&0u32.to_ne_bytes(), &state, MapFlags::ANY)?;

    let code_maps = CodeMaps::create(program, generated, registry, opts, &core)?;
    // Each ID starts with its own tag (generation 0) and free.
    for id in 1..=opts.nspec {
        let mut entry = vec![0u8; layout::SPEC_SIZE];
        entry[layout::SPEC_TAG..layout::SPEC_TAG + 8].copy_from_slice(&u64::from(id).to_ne_bytes());
        core.maps.dt_specs.update(&id.to_ne_bytes(), &entry, MapFlags::ANY)?;
        // A queue has no keys.
        core.maps.dt_spec_free.update(&[], &id.to_ne_bytes(), MapFlags::ANY).context("queueing a free speculation")?;
    }

    // A tail call needs caller and callee of one program type, so one clause
    // list may be loaded once per entry-program type.
    let mut clause_programs = ClausePrograms { bpflog: opts.bpflog, ..ClausePrograms::default() };
    let mut clause_program = |clauses: &[usize], prog_type: ClauseProgType| -> Result<i32> {
        clause_programs.load(program, generated, &code_maps.fds, clauses, prog_type, &|clauses| {
            generated
                .clauses_of
                .iter()
                .find(|(_, list)| list.as_slice() == clauses)
                .and_then(|(id, _)| registry.get(*id))
                .map_or_else(|| "one probe".to_string(), |p| p.full_name())
        })
    };

    let inline_clauses = |entry: &[libbpf_sys::bpf_insn],
                          fires: Fires,
                          work: EntryWork|
     -> Result<Option<Vec<libbpf_sys::bpf_insn>>> {
        let entry = as_insns(entry);
        let clauses = match fires {
            Fires::Clauses(clauses) => clauses,
            Fires::Slot(filled) => {
                let found = splice::tail_call_target(entry).and_then(|target| filled.get(&target));
                let Some(clauses) = found else { return Ok(None) };
                clauses
            }
        };
        let patched = |code: &Vec<Insn>| -> Result<Vec<Insn>> {
            let mut code = code.clone();
            patch_maps(&mut code, &|m| code_maps.fd(m)).map_err(anyhow::Error::msg)?;
            Ok(code)
        };
        // A predicate decided before an entry that only starts the firing
        // spares the entry's work when it is false.
        if let Some(guarded) = generated.guarded.get(clauses).filter(|_| work == EntryWork::FiringOnly) {
            let mut code = patched(&guarded.guard)?;
            let Some(joined) = splice::inline_at_tail_call(entry, &patched(&guarded.body)?) else { return Ok(None) };
            code.extend(joined);
            return Ok(Some(as_bpf_insns(&code).to_vec()));
        }
        // Clauses too much for one program run as a chain: tail calls.
        let Some(code) = generated.programs.get(clauses) else { return Ok(None) };
        let code = patched(code)?;
        Ok(splice::inline_at_tail_call(entry, &code).map(|joined| as_bpf_insns(&joined).to_vec()))
    };
    let mut inline_clauses = inline_clauses;

    let mut kernel = crate::sema::kernel_btf::KernelBtf::default();
    let mut cx = EnableContext {
        kernel: &mut kernel,
        needs: ScriptNeeds {
            ppid: program.uses_ppid,
            caller: program.uses_caller,
            ucaller: program.uses_ucaller,
            args: program.uses_args,
            stack: program.uses_kernel_stack(),
            ustack: program.uses_ustack(),
            typed_args_used: &program.typed_args_used,
            typed_arg_members: &program.typed_arg_members,
        },
        shared_ctx: core.maps.dt_ctx.as_fd(),
        shared_state: core.maps.dt_state.as_fd(),
        shared_caller_code: core.maps.dt_caller_code.as_fd(),
        shared_cpuinfo: core.maps.dt_cpuinfo.as_fd(),
        clause_program: &mut clause_program,
        inline_clauses: &mut inline_clauses,
        on_task_stack: false,
        slot_clauses: BTreeMap::new(),
        held: Vec::new(),
        links: Vec::new(),
        warnings: Vec::new(),
        late_probes: opts.nusdtprobes,
        only_cpu: opts.cpu,
    };
    let enabled = generated.clauses_of.iter().map(|(id, clauses)| (*id, clauses.as_slice()));
    let mut providers = Vec::new();
    for (provider, probes) in registry.by_provider(enabled) {
        cx.on_task_stack = false;
        let (started, links_before) = (monotonic_ns(), cx.links.len());
        providers.push(provider.enable(&probes, &mut cx)?);
        debug_line!(
            "enabled {} probes of provider {}: {} links in {} us",
            probes.len(),
            provider.name(),
            cx.links.len() - links_before,
            (monotonic_ns() - started) / 1000
        );
    }
    // What cannot watch for later processes (an old kernel's uprobes)
    // leaves the probes found now traced.
    let late = registry.retain(&retained, &mut cx).unwrap_or_else(|e| {
        cx.warnings.push(format!("processes started from now on are not traced: {e:#}"));
        Vec::new()
    });
    let EnableContext { links: provider_links, held, mut warnings, .. } = cx;
    links.extend(provider_links);
    if !late.is_empty() {
        // From here on no exec is missed; the first look at the processes
        // (enable_started_processes) finds those started since compiling.
        links.push(core.progs.dt_exec_notify.attach().context("attaching the exec program of retained USDT globs")?);
        // And no library a process maps later (dlopen) is missed either.
        match attach_exec_mmap_programs(&core) {
            Ok(mmap_links) => links.extend(mmap_links),
            Err(e) => warnings.push(format!("USDT probes of libraries processes load later will not be found: {e:#}")),
        }
    }
    Ok(Session {
        core,
        providers,
        warnings,
        _links: links,
        clause_programs: std::cell::RefCell::new(clause_programs),
        code_map_fds: code_maps.fds,
        late: std::cell::RefCell::new(late),
        late_probes: std::cell::RefCell::new(BTreeMap::new()),
        look_at_every_process: std::cell::Cell::new(true),
        _held: held,
        _maps: code_maps.owned,
        aggregations: code_maps.aggregations,
        stacks: code_maps.stacks,
        ustacks: code_maps.ustacks,
        kernel_symbols,
    })
}

impl Session {
    /// Makes and attaches the probes retained descriptions match in the
    /// processes that exec'd since the last call (at the first, in every
    /// process); what could not be enabled, in words.
    pub(crate) fn enable_started_processes(&self, program: &Program, generated: &Generated) -> Vec<String> {
        let mut late = self.late.borrow_mut();
        if late.is_empty() {
            return Vec::new();
        }
        // First every process running, then those that exec'd since.
        let mut pids = if self.look_at_every_process.replace(false) { crate::process::all_pids() } else { Vec::new() };
        while let Ok(Some(value)) = self.core.maps.dt_execs.lookup_and_delete(&[]) {
            if let Ok(bytes) = <[u8; 4]>::try_from(value.as_slice()) {
                pids.push(u32::from_ne_bytes(bytes));
            }
        }
        if pids.is_empty() {
            return Vec::new();
        }
        let mut warnings = Vec::new();
        let mut clause_programs = self.clause_programs.borrow_mut();
        let fds = &self.code_map_fds;
        let mut clause_program = |clauses: &[usize], prog_type: ClauseProgType| {
            clause_programs.load(program, generated, fds, clauses, prog_type, &|_| "a USDT probe".to_string())
        };
        let mut kernel = crate::sema::kernel_btf::KernelBtf::default();
        let mut cx = LateContext { clause_program: &mut clause_program, kernel: &mut kernel, warnings: Vec::new() };
        // Probes of processes that exited make room first.
        for retained in late.iter_mut() {
            for id in retained.reap() {
                if let Some(&fd) = fds.get(&MapRef::ProbeNames) {
                    // SAFETY: the key is the map's size (4 bytes).
                    unsafe { libbpf_sys::bpf_map_delete_elem(fd, id.to_ne_bytes().as_ptr().cast()) };
                }
            }
        }
        for pid in pids {
            for retained in late.iter_mut() {
                match retained.process_started(pid, &mut cx) {
                    Ok(probes) => {
                        for probe in probes {
                            if program.uses_probe_names {
                                if let Some(&fd) = fds.get(&MapRef::ProbeNames) {
                                    let value = probe_names_value(&probe, program);
                                    // SAFETY: key and value are the map's sizes (4 and 4 * strsize).
                                    unsafe {
                                        libbpf_sys::bpf_map_update_elem(
                                            fd,
                                            probe.id.to_ne_bytes().as_ptr().cast(),
                                            value.as_ptr().cast(),
                                            0,
                                        );
                                    }
                                }
                            }
                            self.late_probes.borrow_mut().insert(probe.id, probe);
                        }
                    }
                    Err(e) => warnings.push(format!("failed to enable probes in process {pid}: {e:#}")),
                }
            }
        }
        warnings.extend(cx.warnings);
        warnings
    }

    /// A probe made after tracing began (in a process found later).
    pub(crate) fn late_probe(&self, id: u32) -> Option<Probe> {
        self.late_probes.borrow().get(&id).cloned()
    }

    pub(crate) fn events_map(&self) -> &libbpf_rs::MapMut<'static> {
        &self.core.maps.dt_events
    }

    /// Tracing starts: BEGIN fires, in this process as DTrace does, and
    /// then (unless BEGIN called exit()) every other enabled probe.
    pub(crate) fn fire_begin(&self) -> Result<()> {
        self.providers.iter().try_for_each(|p| p.begin())?;
        if self.draining()? == layout::STATE_NOT_BEGUN {
            self.set_draining(layout::STATE_FIRING)?;
        }
        Ok(())
    }

    /// Starts what must not fire before BEGIN has run (profile timers).
    pub(crate) fn start_timers(&self) -> Result<()> {
        self.providers.iter().try_for_each(|p| p.started())
    }

    /// Stops every probe but END from firing (DTrace's draining state).
    pub(crate) fn stop_probes(&self) -> Result<()> {
        self.set_draining(layout::STATE_ENDING)
    }

    /// END fires last: every other probe is stopped first (END itself
    /// fires through BPF_PROG_TEST_RUN, which the flag does not stop).
    pub(crate) fn fire_end(&self) -> Result<()> {
        self.stop_probes()?;
        self.providers.iter().try_for_each(|p| p.end())
    }

    fn draining(&self) -> Result<u32> {
        let value = self.core.maps.dt_state.lookup(&0u32.to_ne_bytes(), MapFlags::ANY)?.unwrap_or_default();
        Ok(layout::read_u32(&value, layout::STATE_DRAINING))
    }

    fn set_draining(&self, value: u32) -> Result<()> {
        let key = 0u32.to_ne_bytes();
        let state = &self.core.maps.dt_state;
        let mut bytes = state.lookup(&key, MapFlags::ANY)?.unwrap_or_else(|| vec![0u8; layout::STATE_SIZE]);
        bytes[layout::STATE_DRAINING..layout::STATE_DRAINING + 4].copy_from_slice(&value.to_ne_bytes());
        state.update(&key, &bytes, MapFlags::ANY)?;
        Ok(())
    }

    /// Records lost because the ring buffer was full, per CPU.
    pub(crate) fn drops(&self) -> Vec<u64> {
        percpu_counter(&self.core.maps.dt_drops)
    }

    /// Dynamic variable stores lost because a variable's map was full, over all CPUs.
    pub(crate) fn dynamic_variable_drops(&self) -> u64 {
        percpu_counter(&self.core.maps.dt_dyndrops).iter().sum()
    }

    /// Faults in ERROR clauses (double errors), over all CPUs.
    pub(crate) fn double_errors(&self) -> u64 {
        percpu_counter(&self.core.maps.dt_dblerrors).iter().sum()
    }

    /// Aggregation updates lost because an aggregation's map was full, per CPU.
    pub(crate) fn aggregation_drops(&self) -> Vec<u64> {
        percpu_counter(&self.core.maps.dt_aggdrops)
    }

    /// Speculative drops and failed speculations (busy, unavailable) so far,
    /// over all CPUs.
    pub(crate) fn speculation_troubles(&self) -> SpeculationTroubles {
        let per_cpu = match self.core.maps.dt_spec_stats.lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY) {
            Ok(Some(values)) => values,
            _ => Vec::new(),
        };
        let total = |offset: usize| -> u64 { per_cpu.iter().map(|v| layout::read_u64(v, offset)).sum() };
        SpeculationTroubles {
            drops: total(layout::SPEC_STATS_DROPS),
            busy: total(layout::SPEC_STATS_BUSY),
            unavailable: total(layout::SPEC_STATS_UNAVAIL),
        }
    }

    /// The kernel addresses of stack `id` of `depth` frames (innermost
    /// first), if recorded.
    pub(crate) fn stack_frames(&self, depth: u8, id: u32) -> Vec<u64> {
        let Some(map) = self.stacks.get(&depth) else { return Vec::new() };
        let Ok(Some(bytes)) = map.lookup(&id.to_ne_bytes(), MapFlags::ANY) else { return Vec::new() };
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .take_while(|&a| a != 0)
            .collect()
    }

    /// The frames of user stack `id` of `depth` frames (innermost first),
    /// if recorded.
    pub(crate) fn ustack_frames(&self, depth: u8, id: u32) -> Vec<UserFrame> {
        let Some(map) = self.ustacks.get(&depth) else { return Vec::new() };
        let Ok(Some(bytes)) = map.lookup(&id.to_ne_bytes(), MapFlags::ANY) else { return Vec::new() };
        let mut frames = Vec::new();
        for f in bytes.chunks_exact(USTACK_FRAME_BYTES as usize) {
            let status = i32::from_ne_bytes(f[0..4].try_into().unwrap_or([0; 4]));
            let word = u64::from_ne_bytes(f[24..32].try_into().unwrap_or([0; 8]));
            match status as u32 {
                libbpf_sys::BPF_STACK_BUILD_ID_VALID => {
                    let mut build_id = [0u8; 20];
                    build_id.copy_from_slice(&f[4..24]);
                    frames.push(UserFrame::BuildId { build_id, offset: word });
                }
                libbpf_sys::BPF_STACK_BUILD_ID_IP if word != 0 => frames.push(UserFrame::Ip(word)),
                _ => break,
            }
        }
        frames
    }

    /// The kernel's symbols, read the first time they are needed.
    pub(crate) fn kernel_symbols(&self) -> &KernelSymbols {
        self.kernel_symbols.get_or_init(KernelSymbols::load)
    }

    /// The map of aggregation `index` (per-CPU hash: key → function state).
    pub(crate) fn aggregation_map(&self, index: usize) -> &MapHandle {
        &self.aggregations[index]
    }

    /// Calls `visit` with every key of aggregation `index` and its
    /// per-CPU values.
    pub(crate) fn for_each_aggregation_entry(&self, index: usize, visit: &mut batch::EntryVisitor) {
        batch::for_each_percpu(&self.aggregations[index], visit)
    }
}

/// One frame of a user stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UserFrame {
    /// In the file with this build ID (the kernel may pad it with zeros), at
    /// this file offset.
    BuildId { build_id: [u8; 20], offset: u64 },
    /// An address the kernel could not resolve to a file.
    Ip(u64),
}

/// Counts of speculation troubles, as DTrace reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SpeculationTroubles {
    /// Speculative records refused for want of room (specsize).
    pub drops: u64,
    /// speculation() calls that failed while some speculation was still ending.
    pub busy: u64,
    /// speculation() calls that failed with every speculation in use.
    pub unavailable: u64,
}

/// Slots of a kernel stack map whose values are `value_size` bytes. A
/// stack map is a table indexed by the stack's hash, without chaining: a
/// stack whose slot holds another is lost (EEXIST), so with k distinct
/// stacks about k²/2n are lost. As many slots as fit in 16 MB (each
/// costs the value and a 24-byte header), at most 65,536: 65,536 for 20
/// frames, where 500 distinct stacks lose about 2.
fn stack_map_entries(value_size: u32) -> u32 {
    let fit = (16 << 20) / (value_size + 24);
    let power_of_two = 1u32 << (31 - fit.max(1).leading_zeros());
    power_of_two.clamp(1024, 65536)
}

/// The smallest and largest ring buffers (the kernel maps at most 2^31
/// bytes of one).
/// The bytes of records a program can write if all its recording clauses
/// are on BEGIN or END, which fire once each (`BEGIN { exit(0); }` needs
/// no bufsize of ring: its 4 MB of pages, which the kernel allocates and
/// zeroes, were a tenth of the start-up); None if some clause can fire
/// again.
fn once_only_record_bytes(program: &Program, registry: &Registry) -> Option<u64> {
    let once = [registry.id_of("dtrace", "BEGIN"), registry.id_of("dtrace", "END")];
    let mut bytes = 0;
    for clause in program.clauses.iter().filter(|c| c.records) {
        if clause.probes.is_empty() || !clause.probes.iter().all(|id| once.contains(id)) || !clause.retained.is_empty()
        {
            return None;
        }
        // The kernel's 8-byte header, ours, the clause's data, 8-aligned.
        bytes += (8 + layout::HDR_SIZE + clause.record_size).next_multiple_of(8) as u64;
    }
    Some(bytes)
}

const MIN_RING: u64 = 4096;
/// The ring of a program that records only faults: some thousands of them
/// between two reads of the consumer.
const FAULTS_ONLY_RING: u64 = 128 << 10;
const MAX_RING: u64 = 1 << 31;

/// Whether loading failed for want of memory (a buffer too big for it).
fn out_of_memory(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<libbpf_rs::Error>().is_some_and(|e| e.kind() == libbpf_rs::ErrorKind::OutOfMemory)
            || c.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::OutOfMemory)
    })
}

/// Opens and loads the core object: the maps every entry program shares,
/// its ring buffer of `ring_size` bytes, and the programs the script needs.
fn load_core(
    program: &Program,
    opts: &RuntimeOptions,
    ring_size: u32,
    retains: bool,
    caller_ranges: usize,
) -> Result<core_skel::CoreSkel<'static>> {
    let storage = Box::leak(Box::new(std::mem::MaybeUninit::uninit()));
    // Only the optional programs read kernel structs: without them, libbpf
    // need not read the kernel's BTF (open_opts_without_kernel_types).
    let open_core = if program.uses_vtimestamp || program.uses_psargs_table {
        core_skel::CoreSkelBuilder::default().open(storage)
    } else {
        core_skel::CoreSkelBuilder::default().open_opts(crate::provider::open_opts_without_kernel_types()?, storage)
    };
    let mut open_core = open_core.context("opening the core object")?;
    open_core.maps.dt_events.set_max_entries(ring_size)?;
    open_core.progs.dt_vtime_switch.set_autoload(program.uses_vtimestamp);
    open_core.progs.dt_psargs_exec.set_autoload(program.uses_psargs_table);
    open_core.progs.dt_psargs_fork.set_autoload(program.uses_psargs_table);
    open_core.progs.dt_exec_notify.set_autoload(retains);
    open_core.progs.dt_mmap_enter.set_autoload(retains);
    open_core.progs.dt_mmap_exit.set_autoload(retains);
    if retains {
        open_core.maps.dt_execs.set_max_entries(EXEC_QUEUE)?;
    }
    if program.uses_psargs_table {
        open_core.maps.dt_psargs.set_max_entries(psargs::ENTRIES)?;
    }
    if !program.uses_vtimestamp {
        // An LRU map is preallocated: keep the unused one small.
        open_core.maps.dt_vtime.set_max_entries(1)?;
    }
    // Speculation IDs count from 1; entry 0 stays free and refuses every use.
    open_core.maps.dt_specs.set_max_entries(opts.nspec + 1)?;
    open_core.maps.dt_spec_free.set_max_entries(opts.nspec.max(1))?;
    open_core.maps.dt_caller_code.set_max_entries(caller_ranges.max(1) as u32)?;
    if program.uses_cpuinfo {
        open_core.maps.dt_cpuinfo.set_max_entries(libbpf_rs::num_possible_cpus()? as u32)?;
    }
    open_core.load().context("loading the core object")
}

/// Execs not yet looked at by the consumer, at most.
const EXEC_QUEUE: u32 = 4096;

/// Attaches the programs that note a process mapping a file's code
/// (mmap() with PROT_EXEC, at its entry and return tracepoints).
fn attach_exec_mmap_programs(core: &core_skel::CoreSkel<'static>) -> Result<Vec<Link>> {
    Ok(vec![
        crate::provider::attach_tracepoint(&core.progs.dt_mmap_enter, "syscalls/sys_enter_mmap")?,
        crate::provider::attach_tracepoint(&core.progs.dt_mmap_exit, "syscalls/sys_exit_mmap")?,
    ])
}

/// A probe's four names as dt_probenames holds them, strsize bytes each.
fn probe_names_value(p: &Probe, program: &Program) -> Vec<u8> {
    let mut value = vec![0u8; 4 * program.strsize];
    for (k, field) in [p.provider, &p.module, &p.function, &p.name].iter().enumerate() {
        let n = field.len().min(program.max_strlen);
        value[k * program.strsize..k * program.strsize + n].copy_from_slice(&field.as_bytes()[..n]);
    }
    value
}

/// kernel.perf_event_max_stack: the most frames a stack map may hold.
fn perf_event_max_stack() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_stack")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(u32::from(crate::sema::ir::ustack_value::MAX_FRAMES))
}

/// sizeof(struct bpf_stack_build_id).
const USTACK_FRAME_BYTES: u32 = 32;
/// Distinct user stacks kept (~13 MB at 100 frames).
const USTACK_ENTRIES: u32 = 4096;

/// The most keys of an aggregation's map, whatever aggsize asks for (a
/// preallocated map of more takes seconds to make).
const MAX_AGG_KEYS: u64 = 1 << 20;

/// Keys per aggregation without -x aggsize.
const DEFAULT_AGG_KEYS: u64 = 8192;

fn percpu_counter(map: &dyn MapCore) -> Vec<u64> {
    match map.lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY) {
        Ok(Some(values)) => values.iter().map(|v| layout::read_u64(v, 0)).collect(),
        _ => Vec::new(),
    }
}

/// Whether an associative array's element is larger than all of
/// dynvarsize, or an aggregation's value (and the word kept with it)
/// larger than all of aggsize: Oracle's DTrace refuses such an enabling
/// (assocs/err.dynvarsize-too-small, aggs/err.aggsize-too-small). A
/// thread-local variable that does not fit, or an aggregation key too
/// large, is a drop at each store instead (dtrace-utils'
/// drp.DTRACEDROP_DYNAMIC.local_only, illumos' drp.DTRACEDROP_AGGREGATION).
pub(crate) fn enabling_exceeds_buffers(program: &Program, dynvarsize: u64, aggsize: Option<u64>) -> bool {
    let element =
        |a: &crate::sema::ir::AssocArray| layout::dynvar_data_bytes(a.key_size(), var_bytes(&a.value, program.strsize));
    program.assoc_arrays.iter().any(|a| !a.thread_local && element(a) > dynvarsize)
        || aggsize.is_some_and(|room| program.aggregations.iter().any(|a| (a.map_value_words() * 8 + 8) as u64 > room))
}

/// How many elements of a dynamic variable fit in `dynvarsize` bytes
/// (`layout::dynvar_element_bytes` each, at least one when its data fits).
/// A store into a full variable is a dynamic variable drop, as in DTrace;
/// when not even one element's data fits, the code generator makes every
/// store a drop.
fn dynvar_entries(dynvarsize: u64, key_size: usize, value_size: usize) -> u32 {
    (dynvarsize / layout::dynvar_element_bytes(key_size, value_size)).clamp(1, u64::from(u32::MAX)) as u32
}

fn map_opts() -> libbpf_sys::bpf_map_create_opts {
    libbpf_sys::bpf_map_create_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_map_create_opts>() as _,
        ..Default::default()
    }
}

fn array_map(name: &str, value_size: usize) -> Result<MapHandle> {
    Ok(MapHandle::create(MapType::Array, Some(name), 4, value_size as u32, 1, &map_opts())?)
}

// The code generator's instructions are the kernel's struct bpf_insn.
const _: () = assert!(std::mem::size_of::<Insn>() == std::mem::size_of::<libbpf_sys::bpf_insn>());

fn as_insns(insns: &[libbpf_sys::bpf_insn]) -> &[Insn] {
    // SAFETY: both are the same 8 bytes (code, dst:4 src:4, off, imm) with
    // the same alignment; every bit pattern is valid for both.
    unsafe { std::slice::from_raw_parts(insns.as_ptr().cast(), insns.len()) }
}

fn as_bpf_insns(insns: &[Insn]) -> &[libbpf_sys::bpf_insn] {
    // SAFETY: as in as_insns.
    unsafe { std::slice::from_raw_parts(insns.as_ptr().cast(), insns.len()) }
}

/// Why a generated program did not load.
enum LoadError {
    /// It exceeds the verifier's limits on the work of checking one
    /// program (which of them: the text).
    TooComplex(String),
    Other(anyhow::Error),
}

/// The chain maps: for each program type, the parts of clause lists split
/// over several programs (a tail call needs caller and callee of one type).
#[derive(Default)]
struct Chains {
    maps: BTreeMap<ClauseProgType, (MapHandle, u32)>,
    /// The parts the maps hold, kept open with them.
    parts: Vec<OwnedFd>,
    /// Where a clause split between programs builds its record
    /// (`MapRef::SplitRecord`), made when a first clause is split.
    split_record: Option<MapHandle>,
}

impl Chains {
    /// Most parts one program type's clause lists may be split into.
    const SLOTS: u32 = 256;

    fn fd(&self, prog_type: ClauseProgType) -> Option<i32> {
        self.maps.get(&prog_type).map(|(map, _)| map.as_fd().as_raw_fd())
    }

    fn split_record_fd(&self) -> Option<i32> {
        self.split_record.as_ref().map(|map| map.as_fd().as_raw_fd())
    }

    /// Makes the split-record map, one value a CPU, as large as the
    /// largest record of the program with the running word before it;
    /// false when that is more than a map value may hold (the clause cannot
    /// be split).
    fn make_split_record(&mut self, program: &Program) -> Result<bool, LoadError> {
        if self.split_record.is_some() {
            return Ok(true);
        }
        let largest = program.clauses.iter().map(|c| layout::HDR_SIZE.max(c.record_size)).max().unwrap_or(0);
        let size = (crate::codegen::emit::SPLIT_RECORD_START + largest).next_multiple_of(8);
        // An array's values are kmalloc()ed: at most KMALLOC_MAX_SIZE (4 MB
        // with 4 KB pages). A per-CPU array's would be at most 32 KB.
        if size > 1 << 22 {
            return Ok(false);
        }
        let cpus = libbpf_rs::num_possible_cpus().map_err(|e| LoadError::Other(e.into()))? as u32;
        let map = MapHandle::create(MapType::Array, Some("dt_split_rec"), 4, size as u32, cpus, &map_opts())
            .map_err(|e| LoadError::Other(e.into()))?;
        self.split_record = Some(map);
        Ok(true)
    }

    /// Puts a loaded part in its type's chain map; its slot.
    fn add(&mut self, prog_type: ClauseProgType, part: OwnedFd) -> Result<u32, LoadError> {
        let other = |e: libbpf_rs::Error| LoadError::Other(e.into());
        if !self.maps.contains_key(&prog_type) {
            let map = MapHandle::create(MapType::ProgArray, Some("dt_chain"), 4, 4, Self::SLOTS, &map_opts())
                .map_err(other)?;
            self.maps.insert(prog_type, (map, 0));
        }
        let (map, used) = self.maps.get_mut(&prog_type).expect("just created");
        if *used == Self::SLOTS {
            return Err(LoadError::Other(anyhow::anyhow!("more than {} program parts of one type", Self::SLOTS)));
        }
        let slot = *used;
        map.update(&slot.to_ne_bytes(), &part.as_raw_fd().to_ne_bytes(), MapFlags::ANY).map_err(other)?;
        *used += 1;
        self.parts.push(part);
        Ok(slot)
    }
}

/// The programs loaded for clause lists, once per list and program type.
#[derive(Default)]
struct ClausePrograms {
    programs: Vec<OwnedFd>,
    /// Parts of clause lists split over several programs: a program array
    /// is emptied when user space closes it.
    chains: Chains,
    loaded: BTreeMap<(ClauseProgType, Vec<usize>), i32>,
    /// The bpflog option's log size: each program's log is printed.
    bpflog: Option<u32>,
}

impl ClausePrograms {
    /// The program of `clauses` as a `prog_type` program (loaded on first
    /// use); `probe_of` names a probe they are enabled on, for the error
    /// of a clause too much for the verifier.
    fn load(
        &mut self,
        program: &Program,
        generated: &Generated,
        fds: &BTreeMap<MapRef, i32>,
        clauses: &[usize],
        prog_type: ClauseProgType,
        probe_of: &dyn Fn(&[usize]) -> String,
    ) -> Result<i32> {
        if let Some(fd) = self.loaded.get(&(prog_type, clauses.to_vec())) {
            return Ok(*fd);
        }
        let mut load =
            ClauseLoader { program, generated, fds, chains: &mut self.chains, prog_type, bpflog: self.bpflog };
        let started = monotonic_ns();
        let loaded = load.clauses(clauses, ChainPart::default());
        debug_line!(
            "loaded the program of clauses {clauses:?} ({} instructions) in {} us",
            generated.programs.get(clauses).map_or(0, Vec::len),
            (monotonic_ns() - started) / 1000
        );
        let fd = loaded.map_err(|e| match e {
            LoadError::TooComplex(why) => {
                let probe = probe_of(clauses);
                // The verifier follows json()'s loop once per byte of strsize.
                let hint = if program.uses_json {
                    " (each json( ) call is checked once per byte of strsize: fewer calls in one action, or a smaller strsize)"
                } else {
                    ""
                };
                // The loader splits a list down to single statements: one
                // of those is what the verifier refused.
                anyhow::anyhow!(
                    "an action of a clause enabled on {probe} is too much for the kernel's verifier ({why}): \
                     split its work over more actions{hint}"
                )
            }
            LoadError::Other(e) => e,
        })?;
        let raw = fd.as_raw_fd();
        self.programs.push(fd);
        self.loaded.insert((prog_type, clauses.to_vec()), raw);
        Ok(raw)
    }
}

/// Loads the program of a probe's clauses. A list the verifier finds too
/// much for one program is split in two, the first half tail-calling the
/// second (each split again as needed), and one clause too much alone is
/// split between its statements, so that what DTrace runs runs here; one
/// statement too much alone stays an error.
struct ClauseLoader<'a> {
    program: &'a Program,
    generated: &'a Generated,
    fds: &'a BTreeMap<MapRef, i32>,
    chains: &'a mut Chains,
    prog_type: ClauseProgType,
    bpflog: Option<u32>,
}

impl ClauseLoader<'_> {
    fn clauses(&mut self, clauses: &[usize], chain: ChainPart) -> Result<OwnedFd, LoadError> {
        // One clause alone splits between its statements.
        let statements = match clauses {
            [only] => chain.resumes_at..chain.stops_at.unwrap_or(self.program.clauses[*only].body.len()),
            _ => 0..0,
        };
        let splittable = clauses.len() > 1 || statements.len() > 1;
        let generated = match self.generated.programs.get(clauses) {
            Some(insns) if !chain.continued && chain.then.is_none() => Ok(insns.clone()),
            // A part of a chain, or a list no probe had at start (a
            // process found later), or one too large for one program:
            // generated now.
            _ => self.generated.chain_part(self.program, clauses, chain),
        };
        let mut insns = match generated {
            Ok(insns) => insns,
            Err(PartError::TooLarge(why)) if splittable => return self.split(clauses, chain, statements, why),
            Err(PartError::TooLarge(why)) => return Err(LoadError::TooComplex(why)),
            Err(PartError::Other(e)) => return Err(LoadError::Other(anyhow::anyhow!("{}", e.0))),
        };
        let (chain_fd, split_fd) = (self.chains.fd(self.prog_type), self.chains.split_record_fd());
        patch_maps(&mut insns, &|m| match m {
            MapRef::Chain => chain_fd,
            MapRef::SplitRecord => split_fd,
            _ => self.fds.get(&m).copied(),
        })
        .map_err(|e| LoadError::Other(anyhow::Error::msg(e)))?;
        match load_program(self.prog_type, &insns, splittable, self.bpflog) {
            Err(LoadError::TooComplex(_)) if splittable => {
                match self.split(clauses, chain, statements, String::new()) {
                    // Said to be too much without the reason: find it.
                    Err(LoadError::TooComplex(why)) if why.is_empty() => {
                        load_program(self.prog_type, &insns, false, self.bpflog)
                    }
                    split => split,
                }
            }
            loaded => loaded,
        }
    }

    /// Loads `clauses` (or the `statements` of one) as two programs, the
    /// first tail-calling the second; TooComplex with `why` when they
    /// cannot be split.
    fn split(
        &mut self,
        clauses: &[usize],
        chain: ChainPart,
        statements: std::ops::Range<usize>,
        why: String,
    ) -> Result<OwnedFd, LoadError> {
        if clauses.len() > 1 {
            let (first, rest) = clauses.split_at(clauses.len() / 2);
            let rest_part = ChainPart { continued: true, resumes_at: 0, ..chain };
            let next = self.clauses(rest, rest_part)?;
            let slot = self.chains.add(self.prog_type, next)?;
            return self.clauses(first, ChainPart { then: Some(slot), stops_at: None, ..chain });
        }
        if statements.len() > 1 && self.chains.make_split_record(self.program)? {
            let middle = statements.start + statements.len() / 2;
            let next = self.clauses(clauses, ChainPart { continued: true, resumes_at: middle, ..chain })?;
            let slot = self.chains.add(self.prog_type, next)?;
            return self.clauses(clauses, ChainPart { then: Some(slot), stops_at: Some(middle), ..chain });
        }
        Err(LoadError::TooComplex(why))
    }
}

/// Loads a generated program; on rejection, what the verifier's log
/// says went wrong. With `splittable`, a program too much for the
/// verifier is said to be so without checking it again for the reason
/// (its caller splits it; a second pass to the limit takes seconds).
fn load_program(
    kind: ClauseProgType,
    insns: &[Insn],
    splittable: bool,
    bpflog: Option<u32>,
) -> Result<OwnedFd, LoadError> {
    let prog_type = kind.prog_type;
    let name = CString::new("dt_clause").expect("no NUL");
    let license = CString::new("GPL").expect("no NUL");
    let mut log = vec![0u8; 1 << 20];
    let functions = functions::FunctionInfo::of(insns).map_err(LoadError::Other)?;
    // The verifier's work limit, known from the error even when a long
    // log fills the buffer (kernels before 6.4 then keep only its head).
    let mut too_large = false;
    // bpflog: a first load keeps the log (every instruction the verifier
    // follows, and its statistics) and prints it, as Oracle's dtrace does; a log too long for
    // bpflogsize is not printed (the kernel refuses that load: the
    // program is loaded again without it).
    let levels: &[u32] = if bpflog.is_some() { &[BPF_LOG_LEVEL2 | BPF_LOG_STATS, 0, 1] } else { &[0, 1] };
    for (attempt, &log_level) in levels.iter().enumerate() {
        let bpflog = bpflog.filter(|_| attempt == 0);
        if let Some(size) = bpflog {
            log.resize(size as usize, 0);
        } else if attempt > 0 && log.len() != 1 << 20 {
            log = vec![0u8; 1 << 20];
        }
        let mut opts: libbpf_sys::bpf_prog_load_opts = unsafe { std::mem::zeroed() };
        opts.sz = std::mem::size_of::<libbpf_sys::bpf_prog_load_opts>() as _;
        opts.expected_attach_type = kind.expected_attach_type;
        opts.attach_btf_id = kind.attach_btf_id;
        if let Some(functions) = &functions {
            functions.describe(&mut opts);
        }
        if log_level > 0 {
            opts.log_level = log_level;
            opts.log_buf = log.as_mut_ptr().cast();
            opts.log_size = log.len() as u32;
        }
        // SAFETY: `insns` is a slice of 8-byte instructions laid out as
        // struct bpf_insn; the names, log buffer and opts outlive the call.
        let fd = unsafe {
            libbpf_sys::bpf_prog_load(
                prog_type,
                name.as_ptr(),
                license.as_ptr(),
                insns.as_ptr().cast(),
                insns.len() as _,
                &mut opts,
            )
        };
        if bpflog.is_some() {
            print_verifier_log(&log, fd == -libc::ENOSPC);
            if fd < 0 {
                continue;
            }
        }
        if fd >= 0 {
            // SAFETY: the kernel just returned this descriptor to us.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        // E2BIG: a limit on the verifier's work (the program's own length
        // is checked before it is generated).
        if fd == -libc::E2BIG {
            if splittable {
                return Err(LoadError::TooComplex(String::new()));
            }
            too_large = true;
        }
    }
    // commit()/discard() use compare-and-exchange, which kernels before
    // 5.12 lack: say so rather than show the verifier's log.
    let other = |e: anyhow::Error| Err(LoadError::Other(e));
    if insns.iter().any(Insn::is_cmpxchg) && !kernel_has_cmpxchg(prog_type) {
        return other(anyhow::anyhow!(
            "commit( ) and discard( ) need BPF compare-and-exchange, which this kernel lacks (Linux 5.12 or later)"
        ));
    }
    let text = String::from_utf8_lossy(&log);
    let text = text.trim_end_matches('\0');
    // The kernel offers no user-memory writes under lockdown (integrity).
    if text.contains("cannot use helper bpf_probe_write_user") {
        return other(anyhow::anyhow!(
            "copyout( ) and copyoutstr( ) are refused by this kernel: it does not allow BPF to write user memory (kernel lockdown)"
        ));
    }
    // The verifier's limits on its own work (BPF_COMPLEXITY_LIMIT_JMP_SEQ,
    // BPF_COMPLEXITY_LIMIT_INSNS, BPF_COMPLEXITY_LIMIT_STATES): what they
    // depend on is known only to the verifier, so they are found here.
    if let Some(line) = text.lines().find(|l| l.contains("jumps is too complex")) {
        let jumps = line.split_whitespace().find_map(|w| w.parse::<u64>().ok()).unwrap_or(0);
        return Err(LoadError::TooComplex(format!(
            "it would have to hold {jumps} branches to explore; it holds at most {}",
            crate::codegen::limits::PENDING_BRANCHES
        )));
    }
    if too_large || text.contains("BPF program is too large") {
        return Err(LoadError::TooComplex("it would have to check more than 1,000,000 instructions".into()));
    }
    // The reason is the line before the verifier's "processed N insns"
    // summary (state dumps may follow it): show it and what led to it.
    let lines: Vec<&str> = text.lines().collect();
    let end = lines.iter().rposition(|l| l.starts_with("processed ")).unwrap_or(lines.len());
    let tail = &lines[end.saturating_sub(12)..end];
    other(anyhow::anyhow!("the kernel's verifier rejected the generated program:\n{}", tail.join("\n")))
}

const BPF_LOG_LEVEL2: u32 = 2;
const BPF_LOG_STATS: u32 = 4;

/// The bpflog option's output: the verifier's log, each line after
/// "BPF: ", or Oracle's words for a log that did not fit.
fn print_verifier_log(log: &[u8], truncated: bool) {
    if truncated {
        stderr_line!(
            "BPF verifier log is incomplete and is not reported.\n\
             Set DTrace option 'bpflogsize' to some greater size for more output.\n\
             (Current size is {}.)",
            log.len()
        );
        return;
    }
    use std::io::Write as _;
    // The log is a C string: past its NUL lie lines of states the
    // verifier pruned and took back.
    let text = String::from_utf8_lossy(log.split(|b| *b == 0).next().unwrap_or_default());
    let mut err = std::io::stderr().lock();
    for line in text.lines() {
        let _ = writeln!(err, "BPF: {line}");
    }
}

/// Whether the verifier accepts BPF_CMPXCHG: a tiny program that
/// exchanges a stack word.
fn kernel_has_cmpxchg(prog_type: libbpf_sys::bpf_prog_type) -> bool {
    let probe = [
        st_imm(Size::DW, FP, -8, 0),
        mov_imm(R0, 0),
        mov_imm(R2, 1),
        atomic_cmpxchg64(FP, -8, R2),
        mov_imm(R0, 0),
        exit(),
    ];
    let license = CString::new("GPL").expect("no NUL");
    // SAFETY: as in load_program; no options.
    let fd = unsafe {
        libbpf_sys::bpf_prog_load(
            prog_type,
            std::ptr::null(),
            license.as_ptr(),
            probe.as_ptr().cast(),
            probe.len() as _,
            std::ptr::null_mut(),
        )
    };
    if fd >= 0 {
        // SAFETY: ours to close.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    fd >= 0
}

/// Offset from CLOCK_MONOTONIC (bpf_ktime_get_ns) to the wall clock.
fn wall_offset_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME).wrapping_sub(monotonic_ns())
}

/// bpf_ktime_get_ns()'s clock.
pub(crate) fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec to write to.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Locked memory as lockmem says (unlimited by default), which kernels
/// before 5.11 charge BPF maps and programs to; open files for the probes.
fn set_limits(lockmem: Option<u64>) {
    let bytes = lockmem.unwrap_or(libc::RLIM_INFINITY);
    let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
    // SAFETY: setrlimit reads the struct we pass; failure is harmless on
    // kernels that account BPF memory with cgroups. libbpf is told the
    // same limit, so it does not raise it again on such kernels.
    unsafe {
        libc::setrlimit(libc::RLIMIT_MEMLOCK, &limit);
        libbpf_sys::libbpf_set_memlock_rlim(bytes);
    }
    // Providers that load a program per probe (fbt, sdt, rawtp) hold two
    // or three descriptors per probe: hundreds of probes pass the usual
    // soft limit of 1024.
    let mut files = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut files) == 0 {
            files.rlim_cur = files.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &files);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_records_only_in_begin_and_end_needs_only_their_records_of_ring() {
        let once_only = |text: &str| {
            let compiled = crate::compile::compile_for_test(text).expect("compiles");
            // Probe IDs are the same in every registry of this kernel.
            once_only_record_bytes(&compiled.program, &Registry::new())
        };
        // A header and an exit status.
        let exit = once_only("BEGIN { exit(0); }").expect("fires once");
        assert!(exit > 0 && exit <= 128, "{exit}");
        // Aggregating elsewhere records nothing there.
        let both = once_only("BEGIN { trace(1); } syscall::read:entry { @ = count(); } END { printa(@); }");
        assert!(both.is_some_and(|b| b > exit), "{both:?}");
        assert_eq!(once_only("BEGIN { trace(1); } syscall::read:entry { trace(arg0); }"), None);
        assert_eq!(once_only("ERROR { trace(arg4); }"), None);
    }
}
