//! The runtime: loads the entry-program skeletons a script needs, creates
//! the maps the generated code uses, loads the generated clause programs
//! into the entry programs' program arrays, attaches, and fires BEGIN/END.
//!
//! Start-up work is proportional to the script: only the skeletons of the
//! providers the script enables are opened, and nothing here reads BTF.
//! Everything attached is owned by `Session`; dropping it detaches all.

pub(crate) mod skel;
mod tracefs;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, IntoRawFd, OwnedFd};

use anyhow::{anyhow, bail, Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, MapHandle, MapType};

use crate::codegen::emit::{self, CodegenEnv};
use crate::codegen::insn::{atomic_cmpxchg64, exit, mov_imm, st_imm, Insn, Size, FP, R0, R2};
use crate::defs::layout;
use crate::provider::{
    dtrace as dtrace_provider, io as io_provider, ip as ip_provider, proc as proc_provider, sched as sched_provider,
    syscall as syscall_provider, sysinfo as sysinfo_provider, Attach, Registry,
};
use crate::sema::check::var_bytes;
use crate::sema::ir::Program;

/// Options that shape the maps and buffers.
pub(crate) struct RuntimeOptions {
    pub bufsize: u32,
    pub dynvar_entries: u32,
    /// Bytes per CPU for each aggregation (the aggsize option), when set.
    pub aggsize: Option<u64>,
    pub nspec: u32,
    pub specsize: u64,
    /// -S: print each generated program's instructions to stderr.
    pub show_programs: bool,
    /// Frames kept per ustack() (the ustackframes option).
    pub ustackframes: u32,
}

/// -S: a generated program as DTrace shows DIF, one instruction a line,
/// headed by the clauses (numbered as their EPIDs) it runs.
fn show_program(clauses: &[usize], insns: &[crate::codegen::insn::Insn]) {
    let epids: Vec<String> = clauses.iter().map(|c| (c + 1).to_string()).collect();
    let mut text =
        format!("\nBPF program for clause{} {}:\n", if clauses.len() == 1 { "" } else { "s" }, epids.join(", "));
    for line in crate::codegen::insn::disassemble(insns) {
        text.push_str(&line);
        text.push('\n');
    }
    eprint!("{text}");
}

/// Everything loaded and attached for one run.
pub(crate) struct Session {
    core: skel::dtrace::DtraceSkel<'static>,
    _syscall: Option<skel::syscall::SyscallSkel<'static>>,
    _profile: Option<skel::profile::ProfileSkel<'static>>,
    _sysinfo: Option<skel::sysinfo::SysinfoSkel<'static>>,
    _proc: Option<skel::proc::ProcSkel<'static>>,
    _io: Option<skel::io::IoSkel<'static>>,
    _ip: Option<skel::ip::IpSkel<'static>>,
    _sched: Option<skel::sched::SchedSkel<'static>>,
    _pid: Option<skel::pid::PidSkel<'static>>,
    /// Probes that are enabled but cannot fire on this kernel, and why.
    pub warnings: Vec<String>,
    _links: Vec<Link>,
    /// The profile probes' perf events (owned by their links), started after BEGIN.
    profile_fds: Vec<i32>,
    _programs: Vec<OwnedFd>,
    _maps: Vec<MapHandle>,
    /// One per aggregation, in `Program::aggregations` order.
    aggregations: Vec<MapHandle>,
    /// stack()'s frames by stack ID.
    stacks: Option<MapHandle>,
    /// ustack()'s frames by stack ID.
    ustacks: Option<MapHandle>,
    has_begin: bool,
    has_end: bool,
}

/// Where a generated program goes: which entry program's array, which type.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Dispatch {
    Dtrace(u32),
    Syscall(u32),
    Profile(u32),
    Sysinfo(u32),
    Proc(u32),
    Io(u32),
    Ip(u32),
    Sched(u32),
    /// Slot of a clause list in dt_pid_progs.
    Pid(u32),
}

fn leak_storage() -> &'static mut MaybeUninit<libbpf_rs::OpenObject> {
    // The skeletons borrow their object storage for their whole life, which
    // is the rest of the process.
    Box::leak(Box::new(MaybeUninit::uninit()))
}

pub(crate) fn start(program: &Program, registry: &Registry, opts: &RuntimeOptions) -> Result<Session> {
    bump_memlock();
    // libbpf's own messages would interleave with DTrace's; our errors say
    // what failed instead.
    if std::env::var_os("DTRACE_DEBUG_LIBBPF").is_none() {
        libbpf_rs::set_print(None);
    }
    // Which clauses run for each enabled probe, in program order.
    let mut clauses_of: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, clause) in program.clauses.iter().enumerate() {
        for &id in &clause.probes {
            clauses_of.entry(id).or_default().push(i);
        }
    }

    // Core object: BEGIN/END/ERROR and the shared maps.
    let mut open_core =
        skel::dtrace::DtraceSkelBuilder::default().open(leak_storage()).context("opening the dtrace entry programs")?;
    if let Some(ro) = open_core.maps.rodata_data.as_deref_mut() {
        ro.dt_need_ppid = program.uses_ppid;
    }
    open_core.maps.dt_events.set_max_entries(opts.bufsize.next_power_of_two().max(4096))?;
    open_core.progs.dt_vtime_switch.set_autoload(program.uses_vtimestamp);
    if !program.uses_vtimestamp {
        // An LRU map is preallocated: keep the unused one small.
        open_core.maps.dt_vtime.set_max_entries(1)?;
    }
    // Speculation IDs count from 1; entry 0 stays free and refuses every use.
    open_core.maps.dt_specs.set_max_entries(opts.nspec + 1)?;
    open_core.maps.dt_spec_free.set_max_entries(opts.nspec.max(1))?;
    let core = open_core.load().context("loading the dtrace entry programs")?;
    let vtime_link = if program.uses_vtimestamp {
        Some(core.progs.dt_vtime_switch.attach().context("attaching vtimestamp's context-switch program")?)
    } else {
        None
    };

    // Maps of the generated code.
    let mut maps = Vec::new();
    let globals_size: usize = program.globals.iter().map(|v| var_bytes(&v.ty, program.strsize)).sum::<usize>().max(8);
    let globals = array_map("dt_globals", globals_size)?;
    let strings = array_map("dt_strings", program.strsize * program.strings.len())?;
    let mut string_bytes = vec![0u8; program.strsize * program.strings.len()];
    for (i, s) in program.strings.iter().enumerate() {
        string_bytes[i * program.strsize..i * program.strsize + s.len()].copy_from_slice(s);
    }
    strings.update(&0u32.to_ne_bytes(), &string_bytes, MapFlags::ANY)?;
    let scratch_slots = 8;
    let scratch_size = crate::codegen::emit::ScratchLayout::new(program, scratch_slots).size;
    // The generated code's 16-bit offsets stay within the limit too.
    if scratch_size > MAX_PERCPU_VALUE {
        bail!(
            "the program needs {scratch_size} bytes of per-CPU scratch memory (strings of strsize bytes, \
             alloca(), struct variables); the kernel allows {MAX_PERCPU_VALUE}: use a smaller strsize \
             or smaller variables"
        );
    }
    let scratch = MapHandle::create(MapType::PercpuArray, Some("dt_scratch"), 4, scratch_size as u32, 1, &map_opts())?;
    let probenames = MapHandle::create(
        MapType::Hash,
        Some("dt_probenames"),
        4,
        (4 * program.strsize) as u32,
        clauses_of.len().max(1) as u32,
        &map_opts(),
    )?;
    if program.uses_probe_names {
        for &id in clauses_of.keys() {
            let Some(p) = registry.get(id) else { continue };
            let mut value = vec![0u8; 4 * program.strsize];
            for (k, field) in [p.provider, &p.module, &p.function, &p.name].iter().enumerate() {
                let n = field.len().min(program.strsize - 1);
                value[k * program.strsize..k * program.strsize + n].copy_from_slice(&field.as_bytes()[..n]);
            }
            probenames.update(&id.to_ne_bytes(), &value, MapFlags::ANY)?;
        }
    }
    let mut thread_local_fds = Vec::new();
    for v in &program.thread_locals {
        let m = MapHandle::create(
            MapType::Hash,
            Some("dt_self"),
            4,
            var_bytes(&v.ty, program.strsize) as u32,
            opts.dynvar_entries,
            &map_opts(),
        )?;
        thread_local_fds.push(m.as_fd().as_raw_fd());
        maps.push(m);
    }
    // Aggregations: one per-CPU hash map each, sized by aggsize. The maps
    // are preallocated: run-time allocation from tracing programs can fail
    // transiently (and warns on kernels before 6.1). Preallocating costs
    // start-up time (~10 ms per 16,384 keys), so without -x aggsize a map
    // holds at most DEFAULT_AGG_KEYS keys; a full map is reported as drops.
    let mut aggregations = Vec::new();
    for agg in &program.aggregations {
        let value_size = agg.map_value_words() * 8;
        if value_size > MAX_PERCPU_VALUE {
            bail!(
                "aggregation @{} needs {value_size} bytes per key and CPU; the kernel allows {MAX_PERCPU_VALUE} \
                 (use fewer lquantize levels)",
                agg.name
            );
        }
        let per_key = (agg.key_size() + value_size) as u64;
        let entries = match opts.aggsize {
            Some(bytes) => (bytes / per_key).clamp(64, 1 << 20),
            None => ((4 << 20) / per_key).clamp(64, DEFAULT_AGG_KEYS),
        } as u32;
        let (map_type, key_size, entries) = if agg.is_array() {
            (MapType::PercpuArray, 4, 1)
        } else {
            (MapType::PercpuHash, agg.key_size() as u32, entries)
        };
        let map = MapHandle::create(map_type, Some("dt_agg"), key_size, value_size as u32, entries, &map_opts())
            .with_context(|| format!("creating the map of aggregation @{}", agg.name))?;
        aggregations.push(map);
    }
    // Associative arrays: one hash map each, sized like thread-local variables.
    let mut assoc = Vec::new();
    for a in &program.assoc_arrays {
        let map = MapHandle::create(
            MapType::Hash,
            Some("dt_assoc"),
            a.key_size() as u32,
            var_bytes(&a.value, program.strsize) as u32,
            opts.dynvar_entries,
            &map_opts(),
        )
        .with_context(|| format!("creating the map of associative array {}", a.name))?;
        assoc.push(map);
    }
    let max_key = program
        .aggregations
        .iter()
        .map(|a| a.key_size())
        .chain(program.assoc_arrays.iter().map(|a| a.key_size()))
        .max()
        .unwrap_or(8);
    let max_value = program.aggregations.iter().map(|a| a.value_words() * 8).max().unwrap_or(8);
    let agg_key = MapHandle::create(
        MapType::PercpuArray,
        Some("dt_aggkey"),
        4,
        (max_key * emit::MAX_KEY_DEPTH) as u32,
        1,
        &map_opts(),
    )?;
    let agg_zero = array_map("dt_aggzero", max_value)?;
    // Kernel stacks for stack(): frames of 8 bytes, up to MAX_STACK_FRAMES.
    let stacks = if program.uses_stack {
        Some(MapHandle::create(
            MapType::StackTrace,
            Some("dt_stacks"),
            4,
            (8 * MAX_STACK_FRAMES) as u32,
            16384,
            &map_opts(),
        )?)
    } else {
        None
    };

    // User stacks for ustack(): each frame as the kernel resolves it when
    // the stack is taken, a build ID and file offset (struct
    // bpf_stack_build_id), so that frames of a process that has exited by
    // the time they are printed can still be symbolized.
    let ustacks = if program.uses_ustack {
        let frames = opts.ustackframes.clamp(1, MAX_USTACK_FRAMES);
        let mut create = map_opts();
        create.map_flags = libbpf_sys::BPF_F_STACK_BUILD_ID;
        Some(
            MapHandle::create(
                MapType::StackTrace,
                Some("dt_ustacks"),
                4,
                frames * USTACK_FRAME_BYTES,
                USTACK_ENTRIES,
                &create,
            )
            .context("creating the user stack map for ustack( )")?,
        )
    } else {
        None
    };

    let env = CodegenEnv {
        ctx_fd: core.maps.dt_ctx.as_fd().as_raw_fd(),
        events_fd: core.maps.dt_events.as_fd().as_raw_fd(),
        state_fd: core.maps.dt_state.as_fd().as_raw_fd(),
        drops_fd: core.maps.dt_drops.as_fd().as_raw_fd(),
        globals_fd: globals.as_fd().as_raw_fd(),
        strings_fd: strings.as_fd().as_raw_fd(),
        scratch_fd: scratch.as_fd().as_raw_fd(),
        scratch_slots,
        probenames_fd: probenames.as_fd().as_raw_fd(),
        thread_local_fds,
        wall_offset_ns: wall_offset_ns(),
        agg_fds: aggregations.iter().map(|m| m.as_fd().as_raw_fd()).collect(),
        agg_key_fd: agg_key.as_fd().as_raw_fd(),
        key_buffer_size: max_key,
        assoc_fds: assoc.iter().map(|m| m.as_fd().as_raw_fd()).collect(),
        stack_fd: stacks.as_ref().map_or(-1, |m| m.as_fd().as_raw_fd()),
        ustack_fd: ustacks.as_ref().map_or(-1, |m| m.as_fd().as_raw_fd()),
        agg_zero_fd: agg_zero.as_fd().as_raw_fd(),
        agg_drops_fd: core.maps.dt_aggdrops.as_fd().as_raw_fd(),
        vtime_fd: core.maps.dt_vtime.as_fd().as_raw_fd(),
        specs_fd: core.maps.dt_specs.as_fd().as_raw_fd(),
        spec_free_fd: core.maps.dt_spec_free.as_fd().as_raw_fd(),
        spec_ending_fd: core.maps.dt_spec_ending.as_fd().as_raw_fd(),
        spec_stats_fd: core.maps.dt_spec_stats.as_fd().as_raw_fd(),
        specsize: opts.specsize,
        other_thread_probes: clauses_of.keys().any(|id| registry.fires_for_another_thread(*id)),
    };
    // Each ID starts with its own tag (generation 0) and free.
    for id in 1..=opts.nspec {
        let mut entry = vec![0u8; layout::SPEC_SIZE];
        entry[layout::SPEC_TAG..layout::SPEC_TAG + 8].copy_from_slice(&u64::from(id).to_ne_bytes());
        core.maps.dt_specs.update(&id.to_ne_bytes(), &entry, MapFlags::ANY)?;
        // A queue has no keys.
        core.maps.dt_spec_free.update(&[], &id.to_ne_bytes(), MapFlags::ANY).context("queueing a free speculation")?;
    }
    maps.extend([globals, strings, scratch, probenames, agg_key, agg_zero]);
    maps.extend(assoc);

    // Group probes by entry program and clause list: probes with the same
    // clauses share one generated program.
    let mut dispatch: Vec<(Dispatch, u32, Vec<usize>)> = Vec::new();
    let mut profile_slots: Vec<(u32, u64, bool)> = Vec::new();
    let mut sys_enabled = vec![0u8; syscall_provider::MAX_SYSCALLS as usize];
    // pid probes: one slot per distinct clause list; the attach cookie
    // carries the probe ID, so thousands of probes share a few programs.
    let mut pid_lists: Vec<Vec<usize>> = Vec::new();
    let mut pid_probes: Vec<PidProbe> = Vec::new();
    for (&id, clauses) in &clauses_of {
        let probe = registry.get(id).ok_or_else(|| anyhow!("internal error: no probe {id}"))?;
        let d = match &probe.attach {
            Attach::Dtrace { slot } => Dispatch::Dtrace(*slot),
            Attach::Syscall { nr, ret } => {
                sys_enabled[*nr as usize] |= if *ret { 2 } else { 1 };
                Dispatch::Syscall(if *ret { syscall_provider::MAX_SYSCALLS + nr } else { *nr })
            }
            Attach::Profile { period_ns, every_cpu } => {
                let slot = profile_slots.len() as u32;
                profile_slots.push((id, *period_ns, *every_cpu));
                Dispatch::Profile(slot)
            }
            Attach::Sysinfo { stat } => Dispatch::Sysinfo(*stat),
            Attach::Proc { slot } => Dispatch::Proc(*slot),
            Attach::Io { slot } => Dispatch::Io(*slot),
            Attach::Ip { slot } => Dispatch::Ip(*slot),
            Attach::Sched { slot } => Dispatch::Sched(*slot),
            Attach::Pid { pid, path, offset, ret } => {
                let (slot, new) = match pid_lists.iter().position(|c| c == clauses) {
                    Some(i) => (i as u32, false),
                    None => {
                        pid_lists.push(clauses.clone());
                        (pid_lists.len() as u32 - 1, true)
                    }
                };
                pid_probes.push(PidProbe { id, pid: *pid, path: path.clone(), offset: *offset, ret: *ret, slot });
                // Each slot's program is loaded once.
                if !new {
                    continue;
                }
                Dispatch::Pid(slot)
            }
        };
        dispatch.push((d, id, clauses.clone()));
    }

    // ERROR clauses run inline in the programs that fault (see emit::generate).
    let error_clauses: Vec<usize> = clauses_of.get(&dtrace_provider::ERROR_ID).cloned().unwrap_or_default();
    let mut programs = Vec::new();
    // A tail call needs caller and callee of one program type, so one clause
    // list may be generated once per entry-program type.
    let mut loaded: BTreeMap<(ClauseProgType, Vec<usize>), i32> = BTreeMap::new();
    let mut load = |clauses: &Vec<usize>, prog_type: ClauseProgType, programs: &mut Vec<OwnedFd>| -> Result<i32> {
        if let Some(fd) = loaded.get(&(prog_type, clauses.clone())) {
            return Ok(*fd);
        }
        let insns = emit::generate(program, &env, clauses, &error_clauses).map_err(|e| anyhow!("{}", e.0))?;
        if opts.show_programs {
            show_program(clauses, &insns);
        }
        let fd = load_program(prog_type, &insns)?;
        let raw = fd.as_raw_fd();
        programs.push(fd);
        loaded.insert((prog_type, clauses.clone()), raw);
        Ok(raw)
    };

    let mut has_begin = false;
    let mut has_end = false;
    for (d, _, clauses) in &dispatch {
        if let Dispatch::Dtrace(slot) = d {
            let fd = load(clauses, RAW_TP, &mut programs)?;
            core.maps.dt_dtrace_progs.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
            has_begin |= *slot == 0;
            has_end |= *slot == 1;
        }
    }

    let mut links: Vec<Link> = vtime_link.into_iter().collect();
    let syscall_skel = if sys_enabled.iter().any(|b| *b != 0) {
        let mut open = skel::syscall::SyscallSkelBuilder::default().open(leak_storage())?;
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            ro.dt_need_ppid = program.uses_ppid;
            ro.dt_sys_id_base = syscall_provider::ID_BASE;
            ro.dt_need_args = program.uses_args;
            ro.dt_sys_enabled.copy_from_slice(&sys_enabled);
        }
        open.maps.dt_ctx.reuse_fd(core.maps.dt_ctx.as_fd())?;
        open.maps.dt_state.reuse_fd(core.maps.dt_state.as_fd())?;
        let skel = open.load().context("loading the syscall entry programs")?;
        // A few system calls: their own tracepoints, so that other system
        // calls run no BPF at all. Many: the two raw tracepoints, attached in
        // two steps however many calls are traced.
        // stack() needs the raw path: some kernels (before 6.12) give a
        // syscall tracepoint program the user's registers, with no kernel frames.
        let tracepoints = if program.uses_stack { None } else { per_syscall_tracepoints(&sys_enabled, registry) };
        let (prog_type, prog_array) = match tracepoints {
            Some(_) => (TRACEPOINT, &skel.maps.dt_sys_tp_progs),
            None => (RAW_TP, &skel.maps.dt_sys_progs),
        };
        for (d, _, clauses) in &dispatch {
            if let Dispatch::Syscall(slot) = d {
                let fd = load(clauses, prog_type, &mut programs)?;
                prog_array.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
            }
        }
        match tracepoints {
            Some(events) => {
                let p = &skel.progs;
                // Widest first: the kernel refuses programs that read past the event.
                let enters = [
                    &p.dt_sys_enter_tp6,
                    &p.dt_sys_enter_tp5,
                    &p.dt_sys_enter_tp4,
                    &p.dt_sys_enter_tp3,
                    &p.dt_sys_enter_tp2,
                    &p.dt_sys_enter_tp1,
                    &p.dt_sys_enter_tp0,
                ];
                for (ret, id) in events {
                    let candidates: &[&libbpf_rs::ProgramMut] = if ret { &[&p.dt_sys_exit_tp] } else { &enters };
                    let pfd = open_tracepoint(id)?;
                    let link = candidates
                        .iter()
                        .find_map(|prog| prog.attach_perf_event(pfd.as_raw_fd()).ok())
                        .ok_or_else(|| anyhow!("attaching to system call tracepoint {id} failed"))?;
                    // The link owns the perf event now and closes it.
                    let _ = pfd.into_raw_fd();
                    links.push(link);
                }
            }
            None => {
                let enters = sys_enabled.iter().any(|b| b & 1 != 0);
                let exits = sys_enabled.iter().any(|b| b & 2 != 0);
                if enters {
                    links.push(
                        skel.progs.dt_sys_enter.attach_raw_tracepoint("sys_enter").context("attaching to sys_enter")?,
                    );
                }
                if exits {
                    links.push(
                        skel.progs.dt_sys_exit.attach_raw_tracepoint("sys_exit").context("attaching to sys_exit")?,
                    );
                }
            }
        }
        Some(skel)
    } else {
        None
    };

    let mut profile_fds = Vec::new();
    let profile_skel = if !profile_slots.is_empty() {
        if profile_slots.len() > 64 {
            bail!("too many profile and tick probes (the limit is 64)");
        }
        let mut open = skel::profile::ProfileSkelBuilder::default().open(leak_storage())?;
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            ro.dt_need_ppid = program.uses_ppid;
        }
        open.maps.dt_ctx.reuse_fd(core.maps.dt_ctx.as_fd())?;
        open.maps.dt_state.reuse_fd(core.maps.dt_state.as_fd())?;
        let skel = open.load().context("loading the profile entry programs")?;
        for (d, _, clauses) in &dispatch {
            if let Dispatch::Profile(slot) = d {
                let fd = load(clauses, PERF_EVENT, &mut programs)?;
                skel.maps.dt_prof_progs.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
            }
        }
        let cpus = online_cpus();
        let mut periods = Vec::new();
        for (slot, (probe_id, period_ns, every_cpu)) in profile_slots.iter().enumerate() {
            // The period tells the probes apart: equal rates differ by a nanosecond.
            let mut period = *period_ns;
            while periods.contains(&period) {
                period += 1;
            }
            periods.push(period);
            let probe = (u64::from(*probe_id) << 32) | slot as u64;
            skel.maps.dt_prof_probes.update(&period.to_ne_bytes(), &probe.to_ne_bytes(), MapFlags::ANY)?;
            let targets: Vec<i32> = if *every_cpu { cpus.clone() } else { vec![cpus[0]] };
            for cpu in targets {
                let pfd = open_cpu_clock(cpu, period)?;
                let link =
                    skel.progs.dt_profile.attach_perf_event(pfd.as_raw_fd()).context("attaching a profile probe")?;
                // The link owns the perf event now and closes it.
                profile_fds.push(pfd.into_raw_fd());
                links.push(link);
            }
        }
        Some(skel)
    } else {
        None
    };

    let mut warnings = Vec::new();
    let sysinfo_stats: Vec<u32> =
        dispatch.iter().filter_map(|(d, _, _)| if let Dispatch::Sysinfo(s) = d { Some(*s) } else { None }).collect();
    let sysinfo_skel = if !sysinfo_stats.is_empty() {
        let mut open = skel::sysinfo::SysinfoSkelBuilder::default().open(leak_storage())?;
        // Only the entry programs of the enabled statistics are loaded.
        let wanted: Vec<&str> = sysinfo_stats
            .iter()
            .filter_map(|s| sysinfo_provider::mapping(*s))
            .flat_map(|m| m.hooks.iter().map(|h| h.program))
            .collect();
        autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            ro.dt_need_ppid = program.uses_ppid;
            ro.dt_si_id_base = sysinfo_provider::id_base();
            ro.dt_si_o_direct = libc::O_DIRECT as u32;
            for (nr, name) in syscall_provider::table() {
                if let Some(class) = ro.dt_si_sysclass.get_mut(nr as usize) {
                    *class = sysinfo_provider::syscall_class(name);
                }
            }
        }
        open.maps.dt_ctx.reuse_fd(core.maps.dt_ctx.as_fd())?;
        open.maps.dt_state.reuse_fd(core.maps.dt_state.as_fd())?;
        let skel = open.load().context("loading the sysinfo entry programs")?;
        for (d, _, clauses) in &dispatch {
            if let Dispatch::Sysinfo(stat) = d {
                let fd = load(clauses, RAW_TP, &mut programs)?;
                skel.maps.dt_si_progs.update(&stat.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
            }
        }
        for &stat in &sysinfo_stats {
            let Some(mapping) = sysinfo_provider::mapping(stat) else { continue };
            let probe = format!("sysinfo:::{}", mapping.name);
            if mapping.hooks.is_empty() {
                let why = mapping.linux.strip_prefix("none: ").unwrap_or(mapping.linux);
                warnings.push(format!("{probe} will not fire: {why}"));
                continue;
            }
            // Hooks of one group are alternatives; each group must attach one.
            let mut groups: Vec<u8> = mapping.hooks.iter().map(|h| h.group).collect();
            groups.dedup();
            let group_count = groups.len();
            let mut missing = Vec::new();
            for group in groups {
                let mut attached = false;
                let mut tracepoints = Vec::new();
                for hook in mapping.hooks.iter().filter(|h| h.group == group) {
                    tracepoints.push(hook.tracepoint);
                    let prog = skel.object().progs_mut().find(|p| p.name() == hook.program);
                    if let Some(link) = prog.and_then(|p| p.attach_raw_tracepoint(hook.tracepoint).ok()) {
                        links.push(link);
                        attached = true;
                        break;
                    }
                }
                if !attached {
                    missing.push(tracepoints[0]);
                }
            }
            if !missing.is_empty() {
                let what = if missing.len() == 1 { "tracepoint" } else { "tracepoints" };
                let verb = if missing.len() == group_count { "will not fire" } else { "will fire only in part" };
                warnings.push(format!("{probe} {verb}: this kernel has no usable {} {what}", missing.join(" or ")));
            }
        }
        Some(skel)
    } else {
        None
    };

    let proc_slots: Vec<u32> =
        dispatch.iter().filter_map(|(d, _, _)| if let Dispatch::Proc(s) = d { Some(*s) } else { None }).collect();
    let proc_skel = if !proc_slots.is_empty() {
        let mut open = skel::proc::ProcSkelBuilder::default().open(leak_storage())?;
        // Only the entry programs of the enabled probes are loaded.
        let wanted: Vec<&str> = proc_slots.iter().map(|s| proc_provider::PROBES[*s as usize].program).collect();
        autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            ro.dt_need_ppid = program.uses_ppid;
            ro.dt_proc_id_base = proc_provider::id_base();
            for (nr, name) in syscall_provider::table() {
                match name {
                    "execve" => ro.dt_proc_nr_execve = nr.into(),
                    "execveat" => ro.dt_proc_nr_execveat = nr.into(),
                    _ => {}
                }
            }
        }
        open.maps.dt_ctx.reuse_fd(core.maps.dt_ctx.as_fd())?;
        open.maps.dt_state.reuse_fd(core.maps.dt_state.as_fd())?;
        let skel = open.load().context("loading the proc entry programs")?;
        for (d, _, clauses) in &dispatch {
            if let Dispatch::Proc(slot) = d {
                let fd = load(clauses, RAW_TP, &mut programs)?;
                skel.maps.dt_proc_progs.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
            }
        }
        let mut attached: Vec<&str> = Vec::new();
        for &slot in &proc_slots {
            let probe = &proc_provider::PROBES[slot as usize];
            // Probes that share an entry program attach it once.
            if attached.contains(&probe.program) {
                continue;
            }
            attached.push(probe.program);
            if !attach_raw_tp(skel.object(), probe.program, probe.tracepoint, &mut links) {
                warnings.push(no_tracepoint(&format!("proc:::{}", probe.name), probe.tracepoint));
            }
        }
        Some(skel)
    } else {
        None
    };

    let io_slots: Vec<u32> =
        dispatch.iter().filter_map(|(d, _, _)| if let Dispatch::Io(s) = d { Some(*s) } else { None }).collect();
    let io_skel = if !io_slots.is_empty() {
        let mut open = skel::io::IoSkelBuilder::default().open(leak_storage())?;
        let mut wanted: Vec<&str> = io_slots.iter().map(|s| io_provider::PROBES[*s as usize].program).collect();
        let waits = io_slots.iter().any(|s| io_provider::PROBES[*s as usize].name.starts_with("wait-"));
        if waits {
            // wait-start and wait-done take their arguments from the thread's last request.
            wanted.push(io_provider::PROBES[0].program);
        }
        autoload_only(open.open_object_mut(), &wanted);
        let io_ids = io_provider::id_base()..io_provider::id_base() + io_provider::PROBES.len() as u32;
        let mut kernel = crate::sema::kernel_btf::KernelBtf::default();
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            ro.dt_need_ppid = program.uses_ppid;
            ro.dt_io_id_base = io_provider::id_base();
            // block_rq_issue(q, rq) before Linux 5.11, block_rq_issue(rq) since.
            ro.dt_io_rq_arg = u32::from(kernel.tracepoint_arg_count("block_rq_issue") == Some(2));
            let uses = |arg: usize| program.typed_args_used.iter().any(|(id, n)| io_ids.contains(id) && *n == arg);
            ro.dt_io_want_buf = uses(io_provider::BUFINFO_ARG);
            ro.dt_io_want_dev = uses(io_provider::DEVINFO_ARG);
            ro.dt_io_want_file = uses(io_provider::FILEINFO_ARG);
            ro.dt_io_want_waits = waits;
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            ro.dt_io_page_shift = (page.max(1) as u64).trailing_zeros();
        }
        open.maps.dt_ctx.reuse_fd(core.maps.dt_ctx.as_fd())?;
        open.maps.dt_state.reuse_fd(core.maps.dt_state.as_fd())?;
        let skel = open.load().context("loading the io entry programs")?;
        for (d, _, clauses) in &dispatch {
            if let Dispatch::Io(slot) = d {
                let fd = load(clauses, RAW_TP, &mut programs)?;
                skel.maps.dt_io_progs.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
            }
        }
        for (slot, probe) in io_provider::PROBES.iter().enumerate() {
            let attached = wanted.contains(&probe.program)
                && attach_raw_tp(skel.object(), probe.program, probe.tracepoint, &mut links);
            if !attached && io_slots.contains(&(slot as u32)) {
                warnings.push(no_tracepoint(&format!("io:::{}", probe.name), probe.tracepoint));
            }
        }
        Some(skel)
    } else {
        None
    };

    let ip_slots: Vec<u32> =
        dispatch.iter().filter_map(|(d, _, _)| if let Dispatch::Ip(s) = d { Some(*s) } else { None }).collect();
    let ip_skel = if !ip_slots.is_empty() {
        let mut open =
            skel::ip::IpSkelBuilder::default().open(leak_storage()).context("opening the ip entry programs")?;
        // Only the entry programs of the enabled probes are loaded.
        let wanted: Vec<&str> = ip_slots.iter().map(|s| ip_provider::PROBES[*s as usize].program).collect();
        autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            ro.dt_need_ppid = program.uses_ppid;
            ro.dt_ip_id_base = ip_provider::id_base();
        }
        open.maps.dt_ctx.reuse_fd(core.maps.dt_ctx.as_fd())?;
        open.maps.dt_state.reuse_fd(core.maps.dt_state.as_fd())?;
        let skel = open.load().context("loading the ip entry programs")?;
        for (d, _, clauses) in &dispatch {
            if let Dispatch::Ip(slot) = d {
                let fd = load(clauses, RAW_TP, &mut programs)?;
                skel.maps.dt_ip_progs.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
            }
        }
        for &slot in &ip_slots {
            let probe = &ip_provider::PROBES[slot as usize];
            if !attach_raw_tp(skel.object(), probe.program, probe.tracepoint, &mut links) {
                warnings.push(no_tracepoint(&format!("ip:::{}", probe.name), probe.tracepoint));
            }
        }
        Some(skel)
    } else {
        None
    };

    let sched_slots: Vec<u32> =
        dispatch.iter().filter_map(|(d, _, _)| if let Dispatch::Sched(s) = d { Some(*s) } else { None }).collect();
    let sched_skel = if !sched_slots.is_empty() {
        let mut open = skel::sched::SchedSkelBuilder::default()
            .open(leak_storage())
            .context("opening the sched entry programs")?;
        // Only the entry programs of the enabled probes are loaded.
        let wanted: Vec<&str> = sched_slots.iter().map(|s| sched_provider::PROBES[*s as usize].program).collect();
        autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            ro.dt_need_ppid = program.uses_ppid;
            ro.dt_sched_id_base = sched_provider::id_base();
        }
        open.maps.dt_ctx.reuse_fd(core.maps.dt_ctx.as_fd())?;
        open.maps.dt_state.reuse_fd(core.maps.dt_state.as_fd())?;
        let skel = open.load().context("loading the sched entry programs")?;
        for (d, _, clauses) in &dispatch {
            if let Dispatch::Sched(slot) = d {
                let fd = load(clauses, RAW_TP, &mut programs)?;
                skel.maps.dt_sched_progs.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
            }
        }
        // The kernel runs a tracepoint's programs in the order they were attached.
        for name in sched_provider::ATTACH_ORDER {
            let Some(slot) = sched_provider::PROBES.iter().position(|p| p.name == *name) else { continue };
            if !sched_slots.contains(&(slot as u32)) {
                continue;
            }
            let probe = &sched_provider::PROBES[slot];
            if !attach_raw_tp(skel.object(), probe.program, probe.tracepoint, &mut links) {
                warnings.push(no_tracepoint(&format!("sched:::{}", probe.name), probe.tracepoint));
            }
        }
        Some(skel)
    } else {
        None
    };

    let pid_skel = if !pid_probes.is_empty() {
        let mut refused = Vec::new();
        let skel = attach_pid(program, &core, &dispatch, &pid_probes, &mut links, &mut refused, &mut |c, t| {
            load(c, t, &mut programs)
        })?;
        match refused.as_slice() {
            [] => {}
            [id] => warnings.push(format!(
                "{} will not fire: the kernel cannot place a uprobe there",
                registry.get(*id).map_or_else(String::new, |p| p.full_name())
            )),
            ids => warnings.push(format!(
                "{} pid probes will not fire (e.g. {}): the kernel cannot place a uprobe there",
                ids.len(),
                registry.get(ids[0]).map_or_else(String::new, |p| p.full_name())
            )),
        }
        Some(skel)
    } else {
        None
    };

    Ok(Session {
        core,
        _pid: pid_skel,
        _sysinfo: sysinfo_skel,
        _proc: proc_skel,
        _io: io_skel,
        _ip: ip_skel,
        _sched: sched_skel,
        warnings,
        _syscall: syscall_skel,
        _profile: profile_skel,
        _links: links,
        profile_fds,
        _programs: programs,
        _maps: maps,
        aggregations,
        stacks,
        ustacks,
        has_begin,
        has_end,
    })
}

impl Session {
    pub(crate) fn events_map(&self) -> &libbpf_rs::MapMut<'static> {
        &self.core.maps.dt_events
    }

    /// Fires BEGIN in this process, as DTrace does.
    pub(crate) fn fire_begin(&self) -> Result<()> {
        if self.has_begin {
            self.fire(0, dtrace_provider::BEGIN_ID)?;
        }
        Ok(())
    }

    /// Starts the profile and tick timers; called once BEGIN has fired.
    pub(crate) fn start_timers(&self) -> Result<()> {
        for &fd in &self.profile_fds {
            // SAFETY: fd is a perf event descriptor our links keep open.
            if unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) } != 0 {
                return Err(std::io::Error::last_os_error()).context("starting a profile probe's timer");
            }
        }
        Ok(())
    }

    pub(crate) fn fire_end(&self) -> Result<()> {
        // END fires even after exit(): clear the draining flag for it.
        self.set_draining(false)?;
        if self.has_end {
            self.fire(1, dtrace_provider::END_ID)?;
        }
        self.set_draining(true)
    }

    fn fire(&self, slot: u64, probe_id: u32) -> Result<()> {
        let mut args = [0u64; 10];
        args[0] = slot;
        args[1] = probe_id as u64;
        let mut ctx: Vec<u8> = args.iter().flat_map(|a| a.to_ne_bytes()).collect();
        let input = libbpf_rs::ProgramInput { context_in: Some(&mut ctx), ..Default::default() };
        self.core.progs.dt_fire.test_run(input).context("firing a dtrace probe")?;
        Ok(())
    }

    fn set_draining(&self, on: bool) -> Result<()> {
        let mut value = vec![0u8; std::mem::size_of::<skel::dtrace::types::dt_state>()];
        value[layout::STATE_DRAINING..layout::STATE_DRAINING + 4].copy_from_slice(&(on as u32).to_ne_bytes());
        self.core.maps.dt_state.update(&0u32.to_ne_bytes(), &value, MapFlags::ANY)?;
        Ok(())
    }

    /// Records lost because the ring buffer was full, per CPU.
    pub(crate) fn drops(&self) -> Vec<u64> {
        percpu_counter(&self.core.maps.dt_drops)
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

    /// The kernel addresses of stack `id` (innermost first), if recorded.
    pub(crate) fn stack_frames(&self, id: u64) -> Vec<u64> {
        let Some(map) = &self.stacks else { return Vec::new() };
        let Ok(Some(bytes)) = map.lookup(&(id as u32).to_ne_bytes(), MapFlags::ANY) else { return Vec::new() };
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .take_while(|&a| a != 0)
            .collect()
    }

    /// The frames of user stack `id` (innermost first), if recorded.
    pub(crate) fn ustack_frames(&self, id: u32) -> Vec<UserFrame> {
        let Some(map) = &self.ustacks else { return Vec::new() };
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

    /// The map of aggregation `index` (per-CPU hash: key → function state).
    pub(crate) fn aggregation_map(&self, index: usize) -> &MapHandle {
        &self.aggregations[index]
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

/// What a generated clause program is loaded as: a tail call needs the
/// caller's program type, and for some types its expected attach type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ClauseProgType {
    prog_type: libbpf_sys::bpf_prog_type,
    expected_attach_type: libbpf_sys::bpf_attach_type,
}

const fn clause_type(prog_type: libbpf_sys::bpf_prog_type) -> ClauseProgType {
    ClauseProgType { prog_type, expected_attach_type: 0 }
}

const RAW_TP: ClauseProgType = clause_type(libbpf_sys::BPF_PROG_TYPE_RAW_TRACEPOINT);
const TRACEPOINT: ClauseProgType = clause_type(libbpf_sys::BPF_PROG_TYPE_TRACEPOINT);
const PERF_EVENT: ClauseProgType = clause_type(libbpf_sys::BPF_PROG_TYPE_PERF_EVENT);
/// Uprobes are kprobe-type programs: so are the pid probes' clause programs.
const KPROBE: ClauseProgType = clause_type(libbpf_sys::BPF_PROG_TYPE_KPROBE);
/// Tail-called from a uprobe.multi program, which has this attach type.
const KPROBE_UPROBE_MULTI: ClauseProgType = ClauseProgType {
    prog_type: libbpf_sys::BPF_PROG_TYPE_KPROBE,
    expected_attach_type: libbpf_sys::BPF_TRACE_UPROBE_MULTI,
};

/// An enabled pid probe and where it attaches.
struct PidProbe {
    id: u32,
    pid: u32,
    path: std::path::PathBuf,
    offset: u64,
    ret: bool,
    slot: u32,
}

/// The most pid probes attached one uprobe at a time (kernels before 6.6).
const MAX_SINGLE_UPROBES: usize = 64;

/// Loads bpf/pid.bpf.c, fills its program array and attaches every pid
/// probe: one multi-uprobe link per file and direction (Linux 6.6), or one
/// uprobe per probe where the kernel has no multi-uprobe links.
fn attach_pid(
    program: &Program,
    core: &skel::dtrace::DtraceSkel<'static>,
    dispatch: &[(Dispatch, u32, Vec<usize>)],
    probes: &[PidProbe],
    links: &mut Vec<Link>,
    refused: &mut Vec<u32>,
    load: &mut dyn FnMut(&Vec<usize>, ClauseProgType) -> Result<i32>,
) -> Result<skel::pid::PidSkel<'static>> {
    let open = |multi: bool| -> Result<skel::pid::PidSkel<'static>> {
        let mut open = skel::pid::PidSkelBuilder::default().open(leak_storage())?;
        let wanted: &[&str] =
            if multi { &["dt_pid_entry", "dt_pid_return"] } else { &["dt_pid_entry1", "dt_pid_return1"] };
        autoload_only(open.open_object_mut(), wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            ro.dt_need_ppid = program.uses_ppid;
        }
        open.maps.dt_ctx.reuse_fd(core.maps.dt_ctx.as_fd())?;
        open.maps.dt_state.reuse_fd(core.maps.dt_state.as_fd())?;
        Ok(open.load()?)
    };
    // Multi-uprobe links came with Linux 6.6, and with them the kernel's
    // `struct bpf_uprobe_multi_link`: before, a uprobe.multi program may
    // load but never attach. DTRACE_NO_UPROBE_MULTI tests the other path
    // on newer kernels.
    let try_multi = std::env::var_os("DTRACE_NO_UPROBE_MULTI").is_none()
        && matches!(crate::sema::kernel_btf::KernelBtf::default().record("bpf_uprobe_multi_link", false), Ok(Some(_)));
    let (skel, multi) = match if try_multi { open(true) } else { Err(anyhow!("multi-uprobe links not wanted")) } {
        Ok(skel) => (skel, true),
        // The entry programs read their probe from the attach cookie.
        Err(_) => (open(false).context("the pid provider needs BPF attach cookies (Linux 5.15 or later)")?, false),
    };
    // The program array's size is DT_MAX_PID_PROGS (bpf/dtrace.h).
    let capacity = skel.maps.dt_pid_progs.max_entries();
    let slots = dispatch.iter().filter(|(d, _, _)| matches!(d, Dispatch::Pid(_))).count();
    if slots as u32 > capacity {
        bail!("too many different clause lists on pid probes (the limit is {capacity})");
    }
    for (d, _, clauses) in dispatch {
        if let Dispatch::Pid(slot) = d {
            let fd = load(clauses, if multi { KPROBE_UPROBE_MULTI } else { KPROBE })?;
            skel.maps.dt_pid_progs.update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)?;
        }
    }
    let cookie = |p: &PidProbe| (u64::from(p.id) << 32) | u64::from(p.slot);
    if multi {
        let mut groups: BTreeMap<(u32, &std::path::Path, bool), Vec<&PidProbe>> = BTreeMap::new();
        for p in probes {
            groups.entry((p.pid, p.path.as_path(), p.ret)).or_default().push(p);
        }
        for ((pid, path, ret), group) in groups {
            let prog = if ret { &skel.progs.dt_pid_return } else { &skel.progs.dt_pid_entry };
            let attach = |part: &[&PidProbe]| {
                let opts = libbpf_rs::UprobeMultiOpts {
                    offsets: part.iter().map(|p| p.offset as usize).collect(),
                    cookies: part.iter().map(|p| cookie(p)).collect(),
                    retprobe: ret,
                    ..Default::default()
                };
                prog.attach_uprobe_multi_with_opts(pid as i32, path, "", opts)
            };
            // One link for the group; if the kernel refuses some offset
            // (an instruction uprobes cannot probe), halves until the
            // refused probes are found, and attaches the rest.
            let mut pending: Vec<&[&PidProbe]> = vec![&group];
            while let Some(part) = pending.pop() {
                match attach(part) {
                    Ok(link) => links.push(link),
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
    } else {
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
            let prog = if p.ret { &skel.progs.dt_pid_return1 } else { &skel.progs.dt_pid_entry1 };
            let opts = libbpf_rs::UprobeOpts { cookie: cookie(p), retprobe: p.ret, ..Default::default() };
            let link =
                prog.attach_uprobe_with_opts(p.pid as i32, &p.path, p.offset as usize, opts).with_context(|| {
                    format!("attaching a uprobe to {}+0x{:x} for pid {}", p.path.display(), p.offset, p.pid)
                })?;
            links.push(link);
        }
    }
    Ok(skel)
}

/// _IO('$', 0) from linux/perf_event.h.
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;

/// Scripts enabling at most this many system-call probes attach them to
/// their own tracepoints. Each costs ~50-90 ms when dtrace exits (the kernel
/// waits for an RCU grace period per tracepoint detached, under a mutex), so
/// beyond a few the raw tracepoints (~20 ns on every other system call, but
/// a quick exit) are the better trade.
const MAX_TRACEPOINT_SYSCALLS: usize = 4;

/// (is return, tracepoint ID) of each enabled system-call probe, when there
/// are few of them and tracefs can name them all; None for the raw path.
fn per_syscall_tracepoints(sys_enabled: &[u8], registry: &Registry) -> Option<Vec<(bool, u64)>> {
    let mut wanted = Vec::new();
    for (nr, bits) in sys_enabled.iter().enumerate() {
        for (bit, ret, dir) in [(1u8, false, "enter"), (2u8, true, "exit")] {
            if bits & bit != 0 {
                let id = syscall_provider::ID_BASE + 2 * nr as u32 + ret as u32;
                let name = &registry.get(id)?.function;
                wanted.push((ret, format!("syscalls/sys_{dir}_{name}")));
            }
        }
    }
    if wanted.is_empty() || wanted.len() > MAX_TRACEPOINT_SYSCALLS {
        return None;
    }
    let names: Vec<String> = wanted.iter().map(|(_, n)| n.clone()).collect();
    let ids = tracefs::tracepoint_ids(&names);
    wanted.iter().zip(ids).map(|((ret, _), id)| Some((*ret, id?))).collect()
}

/// A perf event for tracepoint `id` (all CPUs: a BPF program attached to a
/// tracepoint event runs wherever the tracepoint fires).
fn open_tracepoint(id: u64) -> Result<OwnedFd> {
    let mut attr: libbpf_sys::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = libbpf_sys::PERF_TYPE_TRACEPOINT;
    attr.size = std::mem::size_of::<libbpf_sys::perf_event_attr>() as u32;
    attr.config = id;
    perf_event_open(&attr, 0).with_context(|| format!("opening tracepoint {id}"))
}

/// perf_event_open(2) for every process, on `cpu`.
fn perf_event_open(attr: &libbpf_sys::perf_event_attr, cpu: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: attr is initialized; perf_event_open has no other memory effects.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const _,
            -1i32,
            cpu,
            -1i32,
            8u64, /* PERF_FLAG_FD_CLOEXEC */
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: perf_event_open returned a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Frames kept per stack (the kernel's default perf_event_max_stack is 127).
const MAX_STACK_FRAMES: usize = 64;

/// The kernel's default kernel.perf_event_max_stack, the most frames a
/// stack map may hold.
const MAX_USTACK_FRAMES: u32 = 127;
/// sizeof(struct bpf_stack_build_id).
const USTACK_FRAME_BYTES: u32 = 32;
/// Distinct user stacks kept (~13 MB at 100 frames).
const USTACK_ENTRIES: u32 = 4096;

/// Keys per aggregation without -x aggsize.
const DEFAULT_AGG_KEYS: u64 = 8192;

/// The kernel's limit on one per-CPU map value (PCPU_MIN_UNIT_SIZE).
const MAX_PERCPU_VALUE: usize = 32768;

fn percpu_counter(map: &dyn MapCore) -> Vec<u64> {
    match map.lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY) {
        Ok(Some(values)) => values.iter().map(|v| layout::read_u64(v, 0)).collect(),
        _ => Vec::new(),
    }
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

/// Loads a generated program; on rejection, the verifier's log is the error.
fn load_program(kind: ClauseProgType, insns: &[Insn]) -> Result<OwnedFd> {
    let prog_type = kind.prog_type;
    let name = CString::new("dt_clause").expect("no NUL");
    let license = CString::new("GPL").expect("no NUL");
    let mut log = vec![0u8; 1 << 20];
    for log_level in [0u32, 1] {
        let mut opts: libbpf_sys::bpf_prog_load_opts = unsafe { std::mem::zeroed() };
        opts.sz = std::mem::size_of::<libbpf_sys::bpf_prog_load_opts>() as _;
        opts.expected_attach_type = kind.expected_attach_type;
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
        if fd >= 0 {
            // SAFETY: the kernel just returned this descriptor to us.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    }
    // commit()/discard() use compare-and-exchange, which kernels before
    // 5.12 lack: say so rather than show the verifier's log.
    if insns.iter().any(Insn::is_cmpxchg) && !kernel_has_cmpxchg(prog_type) {
        bail!("commit( ) and discard( ) need BPF compare-and-exchange, which this kernel lacks (Linux 5.12 or later)");
    }
    let text = String::from_utf8_lossy(&log);
    let text = text.trim_end_matches('\0');
    // The kernel offers no user-memory writes under lockdown (integrity).
    if text.contains("cannot use helper bpf_probe_write_user") {
        bail!("copyout( ) and copyoutstr( ) are refused by this kernel: it does not allow BPF to write user memory (kernel lockdown)");
    }
    let tail: Vec<&str> = text.lines().rev().take(12).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    bail!("the kernel's verifier rejected the generated program:\n{}", tail.join("\n"))
}

/// Attaches entry program `program` of `object` to raw tracepoint
/// `tracepoint`; false when the running kernel has no such tracepoint (or
/// the program does not fit its prototype).
fn attach_raw_tp(object: &libbpf_rs::Object, program: &str, tracepoint: &str, links: &mut Vec<Link>) -> bool {
    let prog = object.progs_mut().find(|p| p.name() == program);
    match prog.map(|p| p.attach_raw_tracepoint(tracepoint)) {
        Some(Ok(link)) => {
            links.push(link);
            true
        }
        _ => false,
    }
}

/// The warning for probe `probe` whose tracepoint the kernel lacks.
fn no_tracepoint(probe: &str, tracepoint: &str) -> String {
    format!("{probe} will not fire: this kernel has no usable {tracepoint} tracepoint")
}

/// Loads only the programs named in `wanted` of an entry object.
fn autoload_only(object: &mut libbpf_rs::OpenObject, wanted: &[&str]) {
    for mut prog in object.progs_mut() {
        let name = prog.name().to_string_lossy().into_owned();
        prog.set_autoload(wanted.contains(&name.as_str()));
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
    let read = |clock| {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: ts is a valid timespec to write to.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    read(libc::CLOCK_REALTIME).wrapping_sub(read(libc::CLOCK_MONOTONIC))
}

fn online_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_else(|_| "0".into());
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let mut bounds = part.split('-').filter_map(|n| n.parse::<i32>().ok());
        if let Some(lo) = bounds.next() {
            let hi = bounds.next().unwrap_or(lo);
            cpus.extend(lo..=hi);
        }
    }
    if cpus.is_empty() {
        cpus.push(0);
    }
    cpus
}

/// A software cpu-clock perf event on one CPU, sampling every `period_ns`.
fn open_cpu_clock(cpu: i32, period_ns: u64) -> Result<OwnedFd> {
    let mut attr: libbpf_sys::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = libbpf_sys::PERF_TYPE_SOFTWARE;
    attr.size = std::mem::size_of::<libbpf_sys::perf_event_attr>() as u32;
    attr.config = libbpf_sys::PERF_COUNT_SW_CPU_CLOCK as u64;
    attr.__bindgen_anon_1.sample_period = period_ns;
    // Enabled after BEGIN has fired (Session::start_timers): no profile or
    // tick probe may fire before BEGIN, however long attaching takes.
    attr.set_disabled(1);
    perf_event_open(&attr, cpu).with_context(|| format!("opening a cpu-clock event on CPU {cpu}"))
}

fn bump_memlock() {
    let limit = libc::rlimit { rlim_cur: libc::RLIM_INFINITY, rlim_max: libc::RLIM_INFINITY };
    // SAFETY: setrlimit reads the struct we pass; failure is harmless on
    // kernels that account BPF memory with cgroups.
    unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &limit) };
}
