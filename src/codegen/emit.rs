//! Code generation: turns the clauses enabled on one probe (or on a group of
//! probes that share the same clauses) into one BPF program.
//!
//! Register conventions inside a generated program:
//! - r6: the program's context (kept for helpers that need it),
//! - r7: this CPU's `struct dt_probe_ctx`, filled by the entry program,
//! - r8: this CPU's string scratch area,
//! - r9: the clause's ring-buffer record while the clause runs,
//! - r0: the value of the expression being evaluated; intermediate values
//!   live in stack slots, so helper calls never clobber them.

mod aggregate;
mod spec;
pub(crate) mod subr;

use super::insn::*;
use super::maps::MapRef;
use crate::defs::agg::{llquantize_plan, LlquantizePlan};
use crate::defs::layout;
use crate::defs::ops::BinOp;
use crate::sema::ir::*;

/// The settings the generated code depends on besides the program. Maps
/// are named by role (`MapRef`) and patched in when the program is loaded.
pub(crate) struct CodegenEnv {
    /// Strings of strsize bytes in the per-CPU scratch map.
    pub scratch_slots: usize,
    /// Bytes of each of the MAX_KEY_DEPTH regions of the key buffer map
    /// (`MapRef::AggKey`), where keys too large for the stack are built.
    pub key_buffer_size: usize,
    /// The specsize option.
    pub specsize: u64,
    /// The ID of dtrace:::ERROR, which a fault fires.
    pub error_probe_id: u32,
    /// Some enabled probe fires for a thread other than the current one
    /// (sched:::on-cpu): the thread's identity is then read from the probe
    /// context when the entry program put one there (`Current`).
    pub other_thread_probes: bool,
    /// Thread-local variables live in task-local storage (one
    /// BPF_MAP_TYPE_TASK_STORAGE map each) rather than hash maps keyed by
    /// thread ID: no hashing, and a thread's values go when it exits.
    pub task_storage: bool,
    /// The kernel has bpf_loop(): chill() waits, and json() reads its text,
    /// in a callback the verifier checks once (chill() for as long as
    /// DTrace allows).
    pub bpf_loop: bool,
    /// Each record carries its firing's timestamp (structured output shows it).
    pub record_timestamps: bool,
    /// The principal buffer's size (bufsize): a clause whose record, as
    /// DTrace sizes it, is larger never fits, and each firing is a drop.
    pub bufsize: u64,
    /// The aggsize option, when set.
    pub aggsize: Option<u64>,
    /// The dynvarsize option.
    pub dynvarsize: u64,
}

/// What the helpers say of the current thread, or the probe context of
/// the thread a probe fires for.
#[derive(Clone, Copy)]
enum Current {
    PidTgid,
    UidGid,
    Task,
}

#[derive(Debug)]
pub(crate) struct CodegenError(pub String);

/// A program whose jumps do not fit their 16 bits: its clauses can still
/// run as a chain of smaller programs.
const PROGRAM_TOO_LARGE: &str = "program is too large";

impl CodegenError {
    pub(crate) fn is_program_too_large(&self) -> bool {
        self.0 == PROGRAM_TOO_LARGE
    }
}

/// Byte offsets in the per-CPU scratch map's one value. In order: the
/// subroutines' result strings (`slots` of strsize bytes), the launder word,
/// the string clause-local variables, a work area of 2·strsize bytes (at
/// least 32) that one subroutine uses while it runs (index's failure
/// table, cleanpath's slash stack, strtok's delimiter set), strtok's
/// saved position and its copy of the string being split, alloca() memory
/// followed by as much again (so that bcopy's checked offset plus checked
/// size stays inside the map as far as the verifier can tell),
/// stackdepth's frame buffer, json()'s variables, and the buffer a whole
/// translated struct is built in.
pub(crate) struct ScratchLayout {
    pub launder: usize,
    pub clause_locals: usize,
    pub work: usize,
    pub strtok_position: usize,
    pub strtok_string: usize,
    /// A struct bound for a thread-local variable is copied here first
    /// (map updates read from map or stack memory); a missing one reads
    /// as the zeros after it.
    pub struct_staging: usize,
    pub struct_zeros: usize,
    pub alloca: usize,
    pub stack_buffer: usize,
    /// json()'s variables and selector table (subr/json.rs), when used.
    pub json: usize,
    /// The buffer a whole translated struct is built in.
    pub translated: usize,
    /// Clause-local scalars (their stack area) kept here while a firing
    /// goes on in the next part of a chain.
    pub chain_spill: usize,
    pub size: usize,
}

impl ScratchLayout {
    pub(crate) fn new(program: &Program, slots: usize) -> ScratchLayout {
        let strsize = program.strsize;
        let launder = slots * strsize;
        let clause_locals = launder + 8;
        let locals = program.clause_local_layout();
        let work = clause_locals + locals.scratch_bytes;
        // strtok's delimiter set (256 bits) needs 32 bytes whatever strsize.
        let strtok_position = work + (2 * strsize).max(32);
        let strtok_string = strtok_position + 8;
        let struct_staging = strtok_string + if program.uses_strtok { strsize } else { 0 };
        let largest_struct = program
            .thread_locals
            .iter()
            .map(|v| &v.ty)
            .chain(program.assoc_arrays.iter().map(|a| &a.value))
            .filter(|ty| matches!(ty, Type::Struct(_)))
            .filter_map(|ty| ty.by_reference_size(strsize))
            .max()
            .unwrap_or(0);
        let struct_zeros = struct_staging + largest_struct;
        let alloca = struct_zeros + largest_struct;
        let stack_buffer = alloca + 2 * program.alloca_bytes;
        let json = stack_buffer + if program.uses_stackdepth { STACK_BUFFER_BYTES } else { 0 };
        let translated = json + if program.uses_json { subr::JSON_SCRATCH_BYTES } else { 0 };
        let chain_spill = translated + program.translated_struct_bytes.next_multiple_of(8);
        let size = chain_spill + locals.stack_bytes;
        ScratchLayout {
            launder,
            clause_locals,
            work,
            strtok_position,
            strtok_string,
            struct_staging,
            struct_zeros,
            alloca,
            stack_buffer,
            json,
            translated,
            chain_spill,
            size,
        }
    }
}

const BPF_RB_NO_WAKEUP: i32 = 1;
const BPF_NOEXIST: i32 = 1;
/// Whose member `store_member` writes.
#[derive(Clone, Copy)]
enum MemberOf {
    /// An associative array's element, its key at this stack offset.
    Element(usize, i16),
    ThreadLocal(usize),
}

/// Where a dynamic variable's map key is.
#[derive(Clone, Copy)]
enum MapKey {
    /// At this stack offset (thread-locals: the thread ID at STACK_KEY).
    OnStack(i16),
    /// At the address held in this stack slot (keys built by build_key).
    At(i16),
}

/// Keys up to this size (an execname key is 16 bytes) are built on the stack.
const MAX_STACK_KEY: usize = 64;
/// Keys computed while computing a key (`a[b[x]]`) each need their own buffer.
pub(crate) const MAX_KEY_DEPTH: usize = 4;
/// stackdepth's buffer: room for the kernel's default maximum of 127
/// frames (kernel.perf_event_max_stack).
pub(crate) const STACK_BUFFER_BYTES: usize = 127 * 8;

/// Where a split clause's record starts in its map's value: after the word
/// that says whether the clause is still running.
pub(crate) const SPLIT_RECORD_START: usize = 8;
/// bpf_get_stack()'s and bpf_get_stackid()'s flag for the user stack.
const BPF_F_USER_STACK: i32 = 1 << 8;
const STACK_KEY: i16 = -8;
const STACK_FAULT_ADDR: i16 = -16;
const STACK_FAULT_ACTION: i16 = -24;
/// The fault's BPF pc, in the same word as its action.
const STACK_FAULT_PC: i16 = STACK_FAULT_ACTION + 4;
const STACK_VALUE: i16 = -32;
const STACK_FIRST_FREE: i16 = -40;
const STACK_LIMIT: i16 = -512;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Label(usize);

/// A variable a program refers to, for -S's variable table (DTrace's DIF
/// variable table): where in the program, and whether read or written.
#[derive(Debug, Clone)]
pub(crate) struct VarUse {
    pub var: VarRef,
    pub ty: Type,
    /// The first and the last instruction that refer to it.
    pub first: usize,
    pub last: usize,
    pub read: bool,
    pub written: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum VarRef {
    Var(Var),
    /// An associative array (`Program::assoc_arrays`).
    Array(usize),
    Builtin(Builtin),
}

/// A generated program and the variables it refers to.
pub(crate) struct Code {
    pub insns: Vec<Insn>,
    pub variables: Vec<VarUse>,
}

struct Emitter<'a> {
    program: &'a Program,
    env: &'a CodegenEnv,
    insns: Vec<Insn>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Label)>,
    /// `ld_func`s and the function each loads.
    function_fixups: Vec<(usize, Label)>,
    /// chill()'s bpf_loop() callback, appended after the program.
    chill_callback: Option<Label>,
    /// json()'s bpf_loop() callbacks, appended after the program: one per
    /// place of its result and selector in the scratch memory.
    json_callbacks: Vec<subr::JsonCallback>,
    /// Next free stack slot (negative offset from r10).
    stack_top: i16,
    /// Where each clause-local variable is: a stack offset for scalars, a
    /// scratch offset for the others.
    clause_local_slots: Vec<i16>,
    /// The stack area of the clause-local scalars.
    clause_locals_area: i16,
    /// The variables referred to so far.
    var_uses: Vec<VarUse>,
    /// Thread-locals in task-local storage looked up more than once by
    /// the program (a bit per variable), whose value's address the
    /// prologue gives a stack slot: the task keeps its storage while the
    /// program runs (nothing here deletes it), so the first lookup that
    /// finds it serves the rest (`/self->ts/ { ... self->ts ... }`).
    tls_cached: u64,
    /// The slot of each cached thread-local's address (0 until looked up).
    tls_slots: Vec<(usize, i16)>,
    /// How many lookups of each thread-local the program made.
    tls_lookups: Vec<(usize, u32)>,
    scratch_next: usize,
    /// Whether the prologue loads the scratch area into r8.
    with_scratch: bool,
    /// Whether any scratch slot was used.
    used_scratch: bool,
    /// Whether the prologue loads the probe context into r7.
    with_ctx: bool,
    /// Whether clauses evaluate their predicates (not when a guard has).
    predicates: bool,
    /// The one probe the program runs for, if only one does (`generate`).
    probe: Option<u32>,
    /// Whether an earlier clause of the program may have called exit().
    exit_called: bool,
    /// Where this program is in a chain of programs sharing one probe's
    /// clauses.
    chain: ChainPart,
    /// Keys being built while this one is (key buffer regions in use).
    key_depth: usize,
    scratch: ScratchLayout,
    /// Set while emitting a clause's statements.
    clause: Option<ClauseState>,
    error_clauses: &'a [usize],
    /// True while emitting ERROR clauses inline: their faults do not recurse.
    in_error: bool,
}

/// How many bytes a read checked by `check_alloca_read` takes.
#[derive(Clone, Copy)]
enum ReadSize {
    Bytes(usize),
    /// The size in this stack slot.
    Slot(i16),
}

#[derive(Clone, Copy)]
struct ClauseState {
    epid: u32,
    /// Fault handler once the record is reserved (it discards the record).
    fault: Label,
    /// Fault handler in the predicate, before any record exists.
    early_fault: Label,
    early_fault_used: bool,
    /// Whether r9 holds the clause's reserved record.
    reserved: bool,
    /// Whether any code jumps to `fault` (the verifier rejects dead code).
    fault_used: bool,
    /// Whether the clause speculates into its record.
    speculates: bool,
    /// The clause's end, where a clause abandoned after its record was
    /// released goes.
    end: Label,
    /// Presence bits of the header's word set when the record is made:
    /// the clause's actions outside any `if`, present whenever the record
    /// is written at all.
    always_present: u64,
    /// The clause is split between programs (`ChainPart::resumes_at`):
    /// r9 is its record in the split-record map, which is written to the
    /// ring buffer whole by its last part, and abandoning it releases
    /// nothing.
    split: bool,
}

impl ClauseState {
    fn new(epid: u32, fault: Label, early_fault: Label, end: Label) -> ClauseState {
        ClauseState {
            epid,
            fault,
            early_fault,
            early_fault_used: false,
            reserved: false,
            fault_used: false,
            speculates: false,
            end,
            always_present: 0,
            split: false,
        }
    }
}

/// Generates the program run for a probe whose enabled clauses are `clauses`
/// (indices into `program.clauses`, in program order).
///
/// `error_clauses` are the clauses enabled on dtrace:::ERROR: a fault runs
/// them right there, with ERROR's arguments (arg1 the faulting EPID, arg2
/// the action, arg4 the fault kind, arg5 the address); the probe's later
/// clauses then run as usual.
///
/// With `predicates` false the clauses' predicates are left out: a guard
/// (`generate_guard`) has decided them before the program runs. `probe`
/// is the one probe the program runs for, when only one does: its ID is
/// then a constant, and a program that reads nothing else of the probe
/// context does not look it up.
pub(crate) fn generate(
    program: &Program,
    env: &CodegenEnv,
    clauses: &[usize],
    error_clauses: &[usize],
    predicates: bool,
    probe: Option<u32>,
) -> Result<Code, CodegenError> {
    generate_part(program, env, clauses, error_clauses, predicates, ChainPart::default(), probe)
}

/// Where a program is in a chain: a probe's clauses too much for the
/// verifier in one program are split over programs that tail-call the
/// next (`MapRef::Chain`), the firing going on where the last left off.
#[derive(Clone, Copy, Default)]
pub(crate) struct ChainPart {
    /// Earlier parts ran first in this firing: clause-local variables are
    /// taken over, not started afresh, and an exit() there is heeded.
    pub continued: bool,
    /// The chain slot of the next part, tail-called at the end.
    pub then: Option<u32>,
    /// The part's first clause begins at this statement: it is one clause
    /// too much for the verifier alone, split between its statements, and
    /// an earlier part ran the ones before (if the clause was not
    /// abandoned there).
    pub resumes_at: usize,
    /// The part's last clause stops before this statement, a later part
    /// going on from there.
    pub stops_at: Option<usize>,
}

/// `generate` for one part of a chain.
pub(crate) fn generate_part(
    program: &Program,
    env: &CodegenEnv,
    clauses: &[usize],
    error_clauses: &[usize],
    predicates: bool,
    chain: ChainPart,
    probe: Option<u32>,
) -> Result<Code, CodegenError> {
    let generate_with = |with_scratch, with_ctx, tls_cached| {
        let parts = Parts { with_scratch, with_ctx, predicates, chain, probe, tls_cached };
        generate_with(program, env, clauses, error_clauses, parts)
    };
    // Most programs need no string scratch; generating twice (microseconds)
    // spares them the lookup on every event, as keeping the address of a
    // thread-local looked up twice spares them the second lookup.
    let (mut code, first) = generate_with(true, true, 0)?;
    let (used_scratch, mut tls_cached) = (first.used_scratch, first.repeated_tls);
    if !used_scratch || tls_cached != 0 {
        code = match generate_with(used_scratch, true, tls_cached) {
            Ok((code, _)) => code,
            // The kept addresses' stack slots must not cost a program that
            // generates without them.
            Err(_) if tls_cached != 0 => {
                tls_cached = 0;
                generate_with(used_scratch, true, 0)?.0
            }
            Err(e) => return Err(e),
        };
    }
    // Nor do clauses that read nothing of the probe context (a predicate
    // on pid and a count): its only mention is then the prologue's move.
    if references(&code.insns, R7) == 1 {
        let without = generate_with(used_scratch, false, tls_cached)?.0;
        if references(&without.insns, R7) == 0 {
            return Ok(without);
        }
    }
    Ok(code)
}

/// How many instructions name register `reg` (as destination or source).
fn references(insns: &[Insn], reg: Reg) -> usize {
    let mut count = 0;
    let mut pc = 0;
    while pc < insns.len() {
        let i = insns[pc];
        if i.regs & 0x0f == reg.0 || i.regs >> 4 == reg.0 {
            count += 1;
        }
        pc += if i.is_ld_imm64() { 2 } else { 1 };
    }
    count
}

/// What a generated program includes besides its clauses' actions.
#[derive(Clone, Copy)]
struct Parts {
    /// Its place in a chain of programs.
    chain: ChainPart,
    /// The prologue loads the scratch area into r8.
    with_scratch: bool,
    /// The prologue loads the probe context into r7.
    with_ctx: bool,
    /// The clauses' predicates are evaluated.
    predicates: bool,
    /// The one probe the program runs for, if only one does.
    probe: Option<u32>,
    /// Thread-locals whose address the program keeps once looked up.
    tls_cached: u64,
}

/// Thread-locals whose address one program keeps (`Emitter::tls_cached`).
const MAX_CACHED_THREAD_LOCALS: usize = 2;

/// What one generation learned: whether the scratch area was used, and
/// the thread-locals it looked up more than once.
struct Generation {
    used_scratch: bool,
    repeated_tls: u64,
}

fn generate_with(
    program: &Program,
    env: &CodegenEnv,
    clauses: &[usize],
    error_clauses: &[usize],
    parts: Parts,
) -> Result<(Code, Generation), CodegenError> {
    let mut e = Emitter::new(program, env, error_clauses, parts);
    e.prologue()?;
    for (k, &c) in clauses.iter().enumerate() {
        let clause = &program.clauses[c];
        let from = if k == 0 { e.chain.resumes_at } else { 0 };
        let until = if k + 1 == clauses.len() { e.chain.stops_at } else { None };
        e.clause(clause, from, until.unwrap_or(clause.body.len()))?;
    }
    if let Some(slot) = e.chain.then {
        e.tail_call_next(slot);
    }
    e.emit(mov_imm(R0, 0));
    e.emit(exit());
    let used_scratch = e.used_scratch;
    // The verifier follows each cached address as two states (looked up
    // and found, or not yet): with many, they multiply (eight variables
    // stored and read forty times took seconds to load). The two looked
    // up most often are kept.
    let mut repeated: Vec<(usize, u32)> = e.tls_lookups.iter().copied().filter(|&(var, n)| n > 1 && var < 64).collect();
    repeated.sort_by_key(|&(var, n)| (std::cmp::Reverse(n), var));
    let repeated_tls = repeated.iter().take(MAX_CACHED_THREAD_LOCALS).fold(0, |m, &(var, _)| m | 1 << var);
    let variables = std::mem::take(&mut e.var_uses);
    Ok((Code { insns: e.finish()?, variables }, Generation { used_scratch, repeated_tls }))
}

/// A predicate that can be decided before the probe's entry program runs:
/// it reads only what the helpers say of the current thread, constants and
/// global variables, and can neither fault nor change anything, so that
/// skipping the whole firing when it is false is what the clause would do.
fn decidable_early(e: &TExpr) -> bool {
    match &e.kind {
        TKind::Int(_) | TKind::Str(_) | TKind::Var(Var::Global(_)) => true,
        TKind::Builtin(b) => {
            matches!(b, Builtin::Pid | Builtin::Tid | Builtin::Uid | Builtin::Gid | Builtin::Execname | Builtin::Cpu)
        }
        TKind::Neg(x) | TKind::BitNot(x) | TKind::Not(x) | TKind::Cast(x) => decidable_early(x),
        // Division faults on zero.
        TKind::Binary { op, lhs, rhs, .. } => {
            !matches!(op, BinOp::Div | BinOp::Mod) && decidable_early(lhs) && decidable_early(rhs)
        }
        TKind::Logical { lhs, rhs, .. } | TKind::StrCmp { lhs, rhs, .. } => {
            decidable_early(lhs) && decidable_early(rhs)
        }
        TKind::Ternary(c, a, b) => decidable_early(c) && decidable_early(a) && decidable_early(b),
        _ => false,
    }
}

/// Code that decides `clause`'s predicate before an entry program runs
/// (the guard goes in front of the entry program it is joined with): it
/// exits when the predicate is false, and else goes on to the code after
/// it with r1 the context, as a program starts. A firing the predicate
/// rules out then costs what the predicate costs, as with a tracer without
/// a probe context. None when the predicate cannot be decided that early or
/// probes fire for threads other than the current one (the helpers would
/// describe the wrong thread).
pub(crate) fn generate_guard(program: &Program, env: &CodegenEnv, clause: &Clause) -> Option<Vec<Insn>> {
    let predicate = clause.predicate.as_ref()?;
    if env.other_thread_probes || !decidable_early(predicate) {
        return None;
    }
    let guard = |with_scratch| -> Result<(Vec<Insn>, bool), CodegenError> {
        let parts = Parts {
            with_scratch,
            with_ctx: false,
            predicates: true,
            chain: ChainPart::default(),
            probe: None,
            tls_cached: 0,
        };
        let mut e = Emitter::new(program, env, &[], parts);
        let (rule_out, go_on) = (e.new_label(), e.new_label());
        e.emit(mov(R6, R1));
        if with_scratch {
            e.emit(st_imm(Size::W, FP, STACK_KEY, 0));
            e.lookup_stack_key(MapRef::Scratch);
            e.jump(jmp_imm(Cond::Eq, R0, 0, 0), rule_out);
            e.emit(mov(R8, R0));
        }
        e.clause = Some(ClauseState::new(clause.epid, e.new_label(), e.new_label(), rule_out));
        e.jump_unless(predicate, rule_out)?;
        let state = e.clause.take().ok_or_else(|| CodegenError("internal error: no clause".into()))?;
        if state.fault_used || state.early_fault_used {
            return Err(CodegenError("the predicate can fault".into()));
        }
        e.emit(mov(R1, R6));
        e.jump(ja(0), go_on);
        e.bind(rule_out);
        e.emit(mov_imm(R0, 0));
        e.emit(exit());
        e.bind(go_on);
        let used_scratch = e.used_scratch;
        Ok((e.finish()?, used_scratch))
    };
    // A string compare needs the scratch area; others are spared its lookup.
    let (insns, _) = guard(false).ok().filter(|(_, used)| !used).or_else(|| guard(true).ok())?;
    // Nothing of the probe context may be read: the entry has not filled it.
    (references(&insns, R7) == 0).then_some(insns)
}

impl<'a> Emitter<'a> {
    fn new(program: &'a Program, env: &'a CodegenEnv, error_clauses: &'a [usize], parts: Parts) -> Emitter<'a> {
        Emitter {
            with_scratch: parts.with_scratch,
            with_ctx: parts.with_ctx,
            predicates: parts.predicates,
            probe: parts.probe,
            exit_called: parts.chain.continued,
            chain: parts.chain,
            used_scratch: false,
            key_depth: 0,
            error_clauses,
            in_error: false,
            program,
            env,
            insns: Vec::new(),
            labels: Vec::new(),
            fixups: Vec::new(),
            function_fixups: Vec::new(),
            chill_callback: None,
            json_callbacks: Vec::new(),
            stack_top: STACK_FIRST_FREE,
            clause_local_slots: Vec::new(),
            clause_locals_area: 0,
            var_uses: Vec::new(),
            tls_cached: parts.tls_cached,
            tls_slots: Vec::new(),
            tls_lookups: Vec::new(),
            scratch_next: 0,
            scratch: ScratchLayout::new(program, env.scratch_slots),
            clause: None,
        }
    }
}

impl<'a> Emitter<'a> {
    fn emit(&mut self, insn: Insn) {
        self.insns.push(insn);
    }
    fn emit2(&mut self, pair: [Insn; 2]) {
        self.insns.extend(pair);
    }
    fn new_label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }
    fn bind(&mut self, label: Label) {
        self.labels[label.0] = Some(self.insns.len());
    }
    fn jump(&mut self, insn: Insn, label: Label) {
        self.fixups.push((self.insns.len(), label));
        self.insns.push(insn);
    }
    /// Whether any jump emitted so far targets `label`.
    fn jumped_to(&self, label: Label) -> bool {
        self.fixups.iter().any(|&(_, l)| l == label)
    }
    fn finish(mut self) -> Result<Vec<Insn>, CodegenError> {
        // BPF functions follow the main program, which ends with an exit.
        if let Some(callback) = self.chill_callback {
            self.bind(callback);
            self.chill_until_deadline();
        }
        for callback in std::mem::take(&mut self.json_callbacks) {
            self.json_callback(&callback);
        }
        let bound = |labels: &[Option<usize>], label: Label| {
            labels[label.0].ok_or_else(|| CodegenError("internal error: unbound label".into()))
        };
        for (at, label) in std::mem::take(&mut self.fixups) {
            let off = bound(&self.labels, label)? as i64 - at as i64 - 1;
            self.insns[at].off = i16::try_from(off).map_err(|_| CodegenError(PROGRAM_TOO_LARGE.into()))?;
        }
        for (at, label) in std::mem::take(&mut self.function_fixups) {
            self.insns[at].imm = (bound(&self.labels, label)? - at - 1) as i32;
        }
        Ok(self.insns)
    }

    /// `reg` = the frames at the top of the kernel stack that the entry
    /// program found to be tracing machinery, as bpf_get_stack()'s and
    /// bpf_get_stackid()'s skip (their flags' low byte).
    fn machinery_frames_into(&mut self, reg: Reg) {
        self.emit(ldx(Size::W, reg, R7, layout::CTX_STACK_SKIP as i16));
        self.emit(alu_imm(Alu::And, reg, 0xff));
    }

    /// r0 = a ustack() value (`ir::ustack_value`): the user stack's ID in
    /// the user stack map of `frames` frames with this process's ID and
    /// the depth, or
    /// the helper's negative error.
    fn ustack_id(&mut self, frames: u8) -> Result<(), CodegenError> {
        use crate::sema::ir::ustack_value;
        let done = self.new_label();
        let taken = self.new_label();
        // The firing's ustack() of this depth, if one was taken (its depth
        // is in bits 54-61 of the value): the same stack, and the only ID
        // the stack map gives it in this firing (dt_probe_ctx.ustack).
        self.emit(ldx(Size::DW, R0, R7, layout::CTX_USTACK as i16));
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), taken);
        self.emit(mov(R1, R0));
        self.emit(alu_imm(Alu::Rsh, R1, ustack_value::FRAMES_SHIFT as i32));
        self.emit(alu_imm(Alu::And, R1, 0xff));
        self.jump(jmp_imm(Cond::Eq, R1, i32::from(frames), 0), done);
        self.bind(taken);
        let id = self.alloc_slot(8)?;
        self.emit(mov(R1, R6));
        self.emit2(ld_map_fd(R2, MapRef::UserStacks(frames)));
        self.emit(mov_imm(R3, BPF_F_USER_STACK));
        self.emit(call(Helper::GetStackid));
        self.jump(jmp_imm(Cond::Slt, R0, 0, 0), done);
        self.emit(stx(Size::DW, FP, id, R0));
        self.emit(call(Helper::GetCurrentPidTgid));
        self.emit(alu_imm(Alu::Rsh, R0, 32));
        self.emit2(ld_imm64(R1, ustack_value::PID_MASK));
        self.emit(alu_reg(Alu::And, R0, R1));
        self.emit(alu_imm(Alu::Lsh, R0, ustack_value::PID_SHIFT as i32));
        let tag = ustack_value::USER | (u64::from(frames) << ustack_value::FRAMES_SHIFT);
        self.emit2(ld_imm64(R1, tag));
        self.emit(alu_reg(Alu::Or, R0, R1));
        self.emit(ldx(Size::DW, R1, FP, id));
        self.emit(alu_reg(Alu::Or, R0, R1));
        self.emit(stx(Size::DW, R7, layout::CTX_USTACK as i16, R0));
        self.bind(done);
        self.stack_top += 8;
        Ok(())
    }

    fn alloc_slot(&mut self, bytes: i16) -> Result<i16, CodegenError> {
        self.stack_top -= bytes;
        if self.stack_top < STACK_LIMIT {
            return Err(CodegenError("expression is too complex: out of BPF stack".into()));
        }
        Ok(self.stack_top)
    }

    /// Notes that the code about to be emitted reads or writes `var`.
    fn note_use(&mut self, var: VarRef, ty: &Type, written: bool) {
        let at = self.insns.len();
        match self.var_uses.iter_mut().find(|u| u.var == var) {
            Some(known) => {
                known.last = at;
                known.read |= !written;
                known.written |= written;
            }
            None => self.var_uses.push(VarUse { var, ty: ty.clone(), first: at, last: at, read: !written, written }),
        }
    }

    fn scratch_slot(&mut self) -> Result<i32, CodegenError> {
        if !self.with_scratch || self.scratch_next >= self.env.scratch_slots {
            return Err(CodegenError("too many string temporaries in one probe's clauses".into()));
        }
        let off = self.scratch_next * self.program.strsize;
        self.scratch_next += 1;
        self.used_scratch = true;
        Ok(off as i32)
    }

    /// The most bytes a string takes with its NUL: strsize characters and
    /// the NUL (a string's buffer, `program.strsize`, may be longer).
    fn strsize(&self) -> i32 {
        self.program.max_strlen as i32 + 1
    }

    fn prologue(&mut self) -> Result<(), CodegenError> {
        let out = self.new_label();
        self.emit(mov(R6, R1));
        self.emit(st_imm(Size::W, FP, STACK_KEY, 0));
        if self.with_ctx {
            self.lookup_stack_key(MapRef::Ctx);
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), out);
            self.emit(mov(R7, R0));
        }
        if self.with_scratch && self.env.scratch_slots > 0 {
            self.lookup_stack_key(MapRef::Scratch);
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), out);
            self.emit(mov(R8, R0));
        }
        // strtok(NULL, ...) has nothing to go on from until a strtok(s, ...)
        // of this firing.
        if self.program.uses_strtok && !self.chain.continued {
            self.used_scratch = true;
            if self.with_scratch {
                self.emit(st_imm(Size::DW, R8, self.scratch.strtok_position as i16, -1));
            }
        }
        // Clause-local variables start at 0 (or "") for each firing, shared by
        // the clauses of this probe as in DTrace: scalars in an area of the
        // stack, strings, structs and arrays in the scratch map. A later part
        // of a chain takes them over from the part before.
        let locals = self.program.clause_local_layout();
        let area = if locals.stack_bytes > 0 { self.alloc_slot(locals.stack_bytes as i16)? } else { 0 };
        self.clause_locals_area = area;
        for word in (0..locals.stack_bytes).step_by(8) {
            let slot = area + word as i16;
            if self.chain.continued {
                self.used_scratch = true;
                if self.with_scratch {
                    self.emit(ldx(Size::DW, R0, R8, (self.scratch.chain_spill + word) as i16));
                    self.emit(stx(Size::DW, FP, slot, R0));
                }
            } else {
                self.emit(st_imm(Size::DW, FP, slot, 0));
            }
        }
        for (v, offset) in self.program.clause_locals.iter().zip(&locals.offsets) {
            if v.ty.by_reference_size(self.program.strsize).is_some() {
                let at = self.scratch.clause_locals + offset;
                self.used_scratch = true;
                if self.with_scratch && !self.chain.continued {
                    self.emit(st_imm(Size::B, R8, at as i16, 0));
                }
                self.clause_local_slots.push(at as i16);
            } else {
                self.clause_local_slots.push(area + *offset as i16);
            }
        }
        // Cached thread-local addresses start unknown.
        if self.env.task_storage {
            let cached = self.tls_cached;
            for var in (0..64).filter(|v| cached & 1 << v != 0) {
                let slot = self.alloc_slot(8)?;
                self.emit(st_imm(Size::DW, FP, slot, 0));
                self.tls_slots.push((var, slot));
            }
        }
        // The way out when a lookup fails (none when nothing is looked up:
        // the verifier refuses code no path reaches).
        if self.with_ctx || (self.with_scratch && self.env.scratch_slots > 0) {
            let start = self.new_label();
            self.jump(ja(0), start);
            self.bind(out);
            self.emit(mov_imm(R0, 0));
            self.emit(exit());
            self.bind(start);
        }
        Ok(())
    }

    /// Goes on to the chain's next part (slot `slot` of the chain map),
    /// with the clause-local scalars kept in scratch memory for it; the
    /// program's context is r6, as the prologue saved it.
    fn tail_call_next(&mut self, slot: u32) {
        let stack_bytes = self.program.clause_local_layout().stack_bytes;
        for word in (0..stack_bytes).step_by(8) {
            self.used_scratch = true;
            if self.with_scratch {
                self.emit(ldx(Size::DW, R0, FP, self.clause_locals_area + word as i16));
                self.emit(stx(Size::DW, R8, (self.scratch.chain_spill + word) as i16, R0));
            }
        }
        self.emit(mov(R1, R6));
        self.emit2(ld_map_fd(R2, MapRef::Chain));
        self.emit(mov_imm(R3, slot as i32));
        self.emit(call(Helper::TailCall));
    }

    /// Emits statements `from..until` of `clause`: all of them, or one part
    /// of a clause split between programs. A split clause's record is built
    /// in the split-record map, whose first word says whether the clause is
    /// still running: a part that goes on in the next program clears it
    /// first and sets it when it has run its statements, so a false
    /// predicate or a fault in one part keeps the later parts from running.
    fn clause(&mut self, clause: &Clause, from: usize, until: usize) -> Result<(), CodegenError> {
        let end = self.new_label();
        let fault = self.new_label();
        let early_fault = self.new_label();
        let saved_stack = self.stack_top;
        let (resumed, continues) = (from > 0, until < clause.body.len());
        let split = resumed || continues;
        let mut always_present = 0u64;
        for stmt in &clause.body {
            if let TStmt::Action { action, .. } = stmt {
                if let (layout::HDR_PRESENT, bit) = clause.present_bit(*action) {
                    always_present |= 1 << bit;
                }
            }
        }
        let state = ClauseState { split, always_present, ..ClauseState::new(clause.epid, fault, early_fault, end) };
        self.clause = Some(state);
        // DTrace reserves a clause's record before it evaluates the
        // predicate: one larger than the buffer is a drop, and the clause
        // does nothing (dtrace_probe's dtrace_buffer_reserve).
        if clause.records && !resumed && clause.dtrace_record_size(self.program.max_strlen) as u64 > self.env.bufsize {
            self.count_drop();
            self.clause = None;
            return Ok(());
        }
        // After an exit() (of an earlier clause of this firing, or another
        // CPU's) a clause does not run, as DTrace skips a probe's later
        // enablings once it is draining.
        if self.exit_called && !resumed {
            self.emit2(ld_map_value(R1, MapRef::State, layout::STATE_DRAINING as u32));
            self.emit(ldx(Size::W, R1, R1, 0));
            self.jump(jmp_imm(Cond::Eq, R1, layout::STATE_STOPPED as i32, 0), end);
        }
        if split {
            // One record a CPU: the parts of a firing run on one CPU.
            self.lookup_this_cpus_entry(MapRef::SplitRecord)?;
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), end);
            self.emit(mov(R9, R0));
            self.emit(alu_imm(Alu::Add, R9, SPLIT_RECORD_START as i32));
            if resumed {
                self.emit(ldx(Size::W, R1, R9, -(SPLIT_RECORD_START as i16)));
                self.jump(jmp_imm(Cond::Eq, R1, 0, 0), end);
            }
            if continues {
                self.emit(st_imm(Size::W, R9, -(SPLIT_RECORD_START as i16), 0));
            }
        }
        if !resumed {
            if let Some(pred) = clause.predicate.as_ref().filter(|_| self.predicates) {
                self.jump_unless(pred, end)?;
            }
        }
        if clause.records {
            if !resumed {
                let size = layout::HDR_SIZE.max(clause.record_size) as i32;
                // Sampled before the record is reserved: the ring buffer's
                // order is then as near the timestamps' as it can be.
                if self.env.record_timestamps {
                    self.timestamp();
                }
                if !split {
                    self.reserve_record(size, end);
                    self.emit(mov(R9, R0));
                }
                self.header_fields(R9, clause.epid, always_present);
                for word in 0..clause.more_present_words() {
                    let (base, off) = self.in_record(clause.more_present_bits + 8 * word, R1)?;
                    self.emit(st_imm(Size::DW, base, off, 0));
                }
                self.emit(call(Helper::GetSmpProcessorId));
                self.emit(stx(Size::W, R9, layout::HDR_CPU as i16, R0));
            }
            if let Some(c) = self.clause.as_mut() {
                c.reserved = true;
                c.speculates = clause.speculates;
            }
        }
        for stmt in clause.body.iter().take(until).skip(from) {
            self.stmt(stmt)?;
        }
        let state = self.clause.ok_or_else(|| CodegenError("internal error: no clause".into()))?;
        if continues {
            self.emit(st_imm(Size::W, R9, -(SPLIT_RECORD_START as i16), 1));
        } else if clause.records && split {
            // The whole record at once, as the consumer reads records.
            let written = self.new_label();
            self.emit2(ld_map_fd(R1, MapRef::Events));
            self.emit(mov(R2, R9));
            self.emit(mov_imm(R3, layout::HDR_SIZE.max(clause.record_size) as i32));
            self.emit(mov_imm(R4, BPF_RB_NO_WAKEUP));
            self.emit(call(Helper::RingbufOutput));
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), written);
            self.count_drop();
            self.bind(written);
        } else if clause.records {
            self.emit(mov(R1, R9));
            self.emit(mov_imm(R2, BPF_RB_NO_WAKEUP));
            self.emit(call(Helper::RingbufSubmit));
        }
        // A fault abandons the clause's record and reports the fault.
        if state.fault_used || state.early_fault_used {
            self.jump(ja(0), end);
            if state.fault_used {
                self.bind(fault);
                if clause.records && !split {
                    self.emit(mov(R1, R9));
                    self.emit(mov_imm(R2, BPF_RB_NO_WAKEUP));
                    self.emit(call(Helper::RingbufDiscard));
                }
            }
            if state.early_fault_used {
                self.bind(early_fault);
            }
            if self.in_error {
                // A fault in an ERROR clause fires no ERROR probe again:
                // DTrace counts it as a double error.
                self.count_in(MapRef::DblErrors, 0);
            } else {
                self.fault_record(clause.epid, end);
                if !self.error_clauses.is_empty() {
                    self.fire_error(clause.epid)?;
                }
            }
        }
        self.bind(end);
        self.clause = None;
        self.stack_top = saved_stack;
        Ok(())
    }

    /// Writes a fault record: header with DT_EPID_FAULT, then the fault.
    /// The fault kind is in r0's caller-saved slot STACK_VALUE, address and
    /// action number in their stack slots.
    fn fault_record(&mut self, epid: u32, end: Label) {
        if self.env.record_timestamps {
            self.timestamp();
        }
        self.reserve_record((layout::HDR_SIZE + layout::FAULT_SIZE) as i32, end);
        self.header_fields(R0, layout::EPID_FAULT, 0);
        let f = layout::HDR_SIZE as i16;
        self.emit(st_imm(Size::W, R0, f + layout::FAULT_EPID as i16, epid as i32));
        self.emit(ldx(Size::W, R1, FP, STACK_FAULT_ACTION));
        self.emit(stx(Size::W, R0, f + layout::FAULT_ACTION as i16, R1));
        self.emit(ldx(Size::W, R1, FP, STACK_VALUE));
        self.emit(stx(Size::W, R0, f + layout::FAULT_KIND as i16, R1));
        self.emit(ldx(Size::W, R1, FP, STACK_FAULT_PC));
        self.emit(stx(Size::W, R0, f + layout::FAULT_PC as i16, R1));
        self.emit(ldx(Size::DW, R1, FP, STACK_FAULT_ADDR));
        self.emit(stx(Size::DW, R0, f + layout::FAULT_ADDR as i16, R1));
        self.emit(mov(R1, R0));
        self.emit(mov_imm(R2, BPF_RB_NO_WAKEUP));
        self.emit(call(Helper::RingbufSubmit));
    }

    /// r0 = a new ring-buffer record of `size` bytes; when the buffer is
    /// full, counts a drop and jumps to `full`.
    fn reserve_record(&mut self, size: i32, full: Label) {
        let reserved = self.new_label();
        self.emit2(ld_map_fd(R1, MapRef::Events));
        self.emit(mov_imm(R2, size));
        self.emit(mov_imm(R3, 0));
        self.emit(call(Helper::RingbufReserve));
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), reserved);
        self.count_drop();
        self.jump(ja(0), full);
        self.bind(reserved);
    }

    /// Fills the header of the record at `rec` with `epid`, the probe and
    /// the actions `present` from the start; CPU and speculation start at
    /// 0, and so does the timestamp unless records carry the firing's
    /// (then sampled already).
    fn header_fields(&mut self, rec: Reg, epid: u32, present: u64) {
        self.emit(st_imm(Size::W, rec, layout::HDR_EPID as i16, epid as i32));
        match self.constant_probe_id() {
            Some(id) => self.emit(st_imm(Size::W, rec, layout::HDR_PROBE_ID as i16, id as i32)),
            None => {
                self.emit(ldx(Size::W, R1, R7, layout::CTX_PROBE_ID as i16));
                self.emit(stx(Size::W, rec, layout::HDR_PROBE_ID as i16, R1));
            }
        }
        self.emit(st_imm(Size::W, rec, layout::HDR_CPU as i16, 0));
        self.emit(st_imm(Size::W, rec, layout::HDR_SPEC as i16, 0));
        if present == 0 {
            self.emit(st_imm(Size::DW, rec, layout::HDR_PRESENT as i16, 0));
        } else {
            self.emit2(ld_imm64(R1, present));
            self.emit(stx(Size::DW, rec, layout::HDR_PRESENT as i16, R1));
        }
        if self.env.record_timestamps {
            self.emit(ldx(Size::DW, R1, R7, layout::CTX_TIMESTAMP as i16));
            self.emit(stx(Size::DW, rec, layout::HDR_TIMESTAMP as i16, R1));
        } else {
            self.emit(st_imm(Size::DW, rec, layout::HDR_TIMESTAMP as i16, 0));
        }
    }

    /// The ID of the probe firing when code generation knows it: the
    /// program runs for one probe, and this is not one of ERROR's clauses
    /// (which run inline, for ERROR).
    fn constant_probe_id(&self) -> Option<u32> {
        self.probe.filter(|_| !self.in_error)
    }

    /// `reg` = the ID of the probe firing.
    fn probe_id_into(&mut self, reg: Reg) {
        match self.constant_probe_id() {
            Some(id) => self.emit(mov_imm(reg, id as i32)),
            None => self.emit(ldx(Size::W, reg, R7, layout::CTX_PROBE_ID as i16)),
        }
    }

    /// Runs the ERROR clauses inline after a fault in clause `epid`, with
    /// ERROR's probe ID and arguments in the probe context; the probe's own
    /// are saved and restored around them so its later clauses see them.
    fn fire_error(&mut self, epid: u32) -> Result<(), CodegenError> {
        let arg = |n: usize| (layout::CTX_ARGS + 8 * n) as i16;
        let saved = self.alloc_slot(56)?;
        self.emit(ldx(Size::W, R1, R7, layout::CTX_PROBE_ID as i16));
        self.emit(stx(Size::DW, FP, saved, R1));
        for n in 0..6 {
            self.emit(ldx(Size::DW, R1, R7, arg(n)));
            self.emit(stx(Size::DW, FP, saved + 8 + 8 * n as i16, R1));
        }
        self.emit(st_imm(Size::W, R7, layout::CTX_PROBE_ID as i16, self.env.error_probe_id as i32));
        self.emit(st_imm(Size::DW, R7, arg(0), 0));
        self.emit(st_imm(Size::DW, R7, arg(1), self.program.shown_epid(epid, self.env.error_probe_id) as i32));
        self.emit(ldx(Size::W, R1, FP, STACK_FAULT_ACTION));
        self.emit(stx(Size::DW, R7, arg(2), R1));
        // arg3: the BPF pc where DTrace gives the DIF offset, -1 for none.
        self.emit(ldx(Size::W, R1, FP, STACK_FAULT_PC));
        self.emit(alu_imm(Alu::Lsh, R1, 32));
        self.emit(alu_imm(Alu::Arsh, R1, 32));
        self.emit(stx(Size::DW, R7, arg(3), R1));
        self.emit(ldx(Size::DW, R1, FP, STACK_VALUE));
        self.emit(stx(Size::DW, R7, arg(4), R1));
        self.emit(ldx(Size::DW, R1, FP, STACK_FAULT_ADDR));
        self.emit(stx(Size::DW, R7, arg(5), R1));
        let outer = self.clause.take();
        self.in_error = true;
        for &c in self.error_clauses {
            let clause = &self.program.clauses[c];
            self.clause(clause, 0, clause.body.len())?;
        }
        self.in_error = false;
        self.clause = outer;
        self.emit(ldx(Size::DW, R1, FP, saved));
        self.emit(stx(Size::W, R7, layout::CTX_PROBE_ID as i16, R1));
        for n in 0..6 {
            self.emit(ldx(Size::DW, R1, FP, saved + 8 + 8 * n as i16));
            self.emit(stx(Size::DW, R7, arg(n), R1));
        }
        self.stack_top += 56;
        Ok(())
    }

    /// Jumps to the clause's fault handler; r1 holds the faulting address.
    fn raise_fault(&mut self, kind: u32) -> Result<(), CodegenError> {
        let state =
            self.clause.as_mut().ok_or_else(|| CodegenError("internal error: fault outside a clause".into()))?;
        let target = if state.reserved {
            state.fault_used = true;
            state.fault
        } else {
            state.early_fault_used = true;
            state.early_fault
        };
        let state = *state;
        // The fault's place, as dtrace-utils reports it: the BPF pc of the
        // faulting code (none for a division by zero).
        let pc = if kind == layout::FAULT_DIVZERO { -1 } else { self.insns.len() as i32 };
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R1));
        // "action #N" and ERROR's arg2: Program::statement_id.
        let action = self.program.statement_id(state.epid);
        self.emit(st_imm(Size::W, FP, STACK_FAULT_ACTION, action as i32));
        self.emit(st_imm(Size::W, FP, STACK_FAULT_PC, pc));
        self.emit(st_imm(Size::DW, FP, STACK_VALUE, kind as i32));
        self.jump(ja(0), target);
        Ok(())
    }

    /// After a bpf_probe_read*() helper from the address saved at
    /// STACK_FAULT_ADDR: a negative r0 is a bad-address fault.
    fn fault_on_read_error(&mut self) -> Result<(), CodegenError> {
        let ok = self.new_label();
        self.jump(jmp_imm(Cond::Sge, R0, 0, 0), ok);
        self.emit(ldx(Size::DW, R1, FP, STACK_FAULT_ADDR));
        self.raise_fault(layout::FAULT_BADADDR)?;
        self.bind(ok);
        Ok(())
    }

    /// A NULL string in r0 (an absent thread-local or associative array
    /// element, `s = NULL`) has no bytes to copy: recording it is a
    /// bad-address fault at 0, as DTrace's load of its first byte is.
    fn fault_on_null_string(&mut self) -> Result<(), CodegenError> {
        let bytes = self.new_label();
        self.emit(ldx(Size::B, R1, R0, 0));
        self.jump(jmp_imm(Cond::Ne, R1, 0, 0), bytes);
        self.emit(ldx(Size::B, R1, R0, 1));
        self.jump(jmp_imm(Cond::Ne, R1, NULL_STRING_BYTES[1] as i32, 0), bytes);
        self.emit(mov_imm(R1, 0));
        self.raise_fault(layout::FAULT_BADADDR)?;
        self.bind(bytes);
        Ok(())
    }

    /// r0 = a scratch string read by `helper` (a *_str reader) from the
    /// address in r0, at most `max` bytes; a bad address is a fault.
    fn read_str_into_scratch(&mut self, helper: Helper, max: i32) -> Result<(), CodegenError> {
        let dst = self.scratch_slot()?;
        self.read_faulting(helper, R8, dst, max)?;
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, dst));
        Ok(())
    }

    /// Reads `size` bytes with `helper` (a bpf_probe_read*()) from the
    /// address in r0 to `base` + `offset`; a bad address is a fault.
    fn read_faulting(&mut self, helper: Helper, base: Reg, offset: i32, size: i32) -> Result<(), CodegenError> {
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R0));
        self.emit(mov(R3, R0));
        self.emit(mov(R1, base));
        self.emit(alu_imm(Alu::Add, R1, offset));
        self.emit(mov_imm(R2, size));
        self.emit(call(helper));
        // An address the kernel cannot read as its own is read as the
        // current process's, as DTrace's loads read user memory the kernel
        // maps (illumos) and as bpf_probe_read() does for dtrace-utils
        // (types/tst.struct2: `e64->e1` of a pr_envp pointer). The
        // destination is rebuilt from `base`, which the call must not
        // have clobbered.
        if helper == Helper::ProbeReadKernel && matches!(base, FP | R6 | R7 | R8 | R9) {
            let read = self.new_label();
            self.jump(jmp_imm(Cond::Sge, R0, 0, 0), read);
            self.emit(mov(R1, base));
            self.emit(alu_imm(Alu::Add, R1, offset));
            self.emit(mov_imm(R2, size));
            self.emit(ldx(Size::DW, R3, FP, STACK_FAULT_ADDR));
            self.emit(call(Helper::ProbeReadUser));
            self.bind(read);
        }
        self.fault_on_read_error()
    }

    /// Reads r2 bytes with `helper` from the address in stack slot `from`
    /// into scratch slot `dst`; a bad address is a fault.
    fn read_into_scratch_from_slot(&mut self, helper: Helper, from: i16, dst: i32) -> Result<(), CodegenError> {
        self.emit(ldx(Size::DW, R3, FP, from));
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R3));
        self.emit(mov(R1, R8));
        self.emit(alu_imm(Alu::Add, R1, dst));
        self.emit(call(helper));
        self.fault_on_read_error()
    }

    /// r0 = the value for the key at STACK_KEY in map `map` (NULL if none).
    fn lookup_stack_key(&mut self, map: MapRef) {
        self.emit2(ld_map_fd(R1, map));
        self.emit(mov(R2, FP));
        self.emit(alu_imm(Alu::Add, R2, STACK_KEY as i32));
        self.emit(call(Helper::MapLookupElem));
    }

    /// r0 = this CPU's value of `map` (an array with a value per CPU), or NULL.
    fn lookup_this_cpus_entry(&mut self, map: MapRef) -> Result<(), CodegenError> {
        let saved_stack = self.stack_top;
        let cpu = self.alloc_slot(8)?;
        self.emit(call(Helper::GetSmpProcessorId));
        self.emit(stx(Size::W, FP, cpu, R0));
        self.emit2(ld_map_fd(R1, map));
        self.emit(mov(R2, FP));
        self.emit(alu_imm(Alu::Add, R2, cpu as i32));
        self.emit(call(Helper::MapLookupElem));
        self.stack_top = saved_stack;
        Ok(())
    }

    fn count_drop(&mut self) {
        self.count_in(MapRef::Drops, 0);
    }

    /// Adds one to this CPU's counter at byte `offset` of a one-entry per-CPU array.
    fn count_in(&mut self, map: MapRef, offset: i16) {
        self.increment(map, 0, offset);
    }

    /// Atomically adds one to the u64 at byte `offset` of entry `key` of an array.
    fn increment(&mut self, map: MapRef, key: u32, offset: i16) {
        let skip = self.new_label();
        self.emit(st_imm(Size::W, FP, STACK_KEY, key as i32));
        self.lookup_stack_key(map);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), skip);
        self.emit(mov_imm(R1, 1));
        self.emit(atomic_add64(R0, offset, R1));
        self.bind(skip);
    }

    fn stmt(&mut self, stmt: &TStmt) -> Result<(), CodegenError> {
        // Variables copy strings into their own storage, so a statement's
        // string temporaries are dead once it is done.
        let scratch = self.scratch_next;
        let result = self.stmt_inner(stmt);
        self.scratch_next = scratch;
        result
    }

    fn stmt_inner(&mut self, stmt: &TStmt) -> Result<(), CodegenError> {
        match stmt {
            TStmt::Expr(e) => self.expr(e),
            TStmt::If { cond, then, otherwise } => {
                let else_label = self.new_label();
                let end = self.new_label();
                self.jump_unless(cond, else_label)?;
                for s in then {
                    self.stmt(s)?;
                }
                self.jump(ja(0), end);
                self.bind(else_label);
                for s in otherwise {
                    self.stmt(s)?;
                }
                self.bind(end);
                Ok(())
            }
            TStmt::Action { action, kind } => self.action(*action, kind),
            TStmt::Speculation { op, id } => self.speculation_op(*op, id),
            TStmt::Aggregate { agg, keys, value, incr } => self.aggregate(*agg, keys, value.as_ref(), incr.as_ref()),
            TStmt::Destructive(op) => self.destructive(op),
        }
    }

    /// Builds a map key from `keys` laid out as `columns` (with the current
    /// thread ID in the first column when `tid_first`): on the stack when it
    /// fits in MAX_STACK_KEY bytes, else in the per-CPU key buffer (one
    /// region per nesting level, for keys computed from other keys). Returns
    /// the stack slot holding the key's address; jumps to `fail` if the
    /// buffer cannot be had.
    fn build_key(
        &mut self,
        columns: &[KeyColumn],
        keys: &[TExpr],
        tid_first: bool,
        fail: Label,
    ) -> Result<i16, CodegenError> {
        let key_size = key_size(columns);
        let key_ptr = self.alloc_slot(8)?;
        if key_size <= MAX_STACK_KEY {
            let area = self.alloc_slot(key_size as i16)?;
            if columns.is_empty() {
                self.emit(st_imm(Size::DW, FP, area, 0));
            }
            self.emit(mov(R0, FP));
            self.emit(alu_imm(Alu::Add, R0, area as i32));
        } else {
            if self.key_depth >= MAX_KEY_DEPTH {
                return Err(CodegenError("keys nested too deeply".into()));
            }
            self.emit(st_imm(Size::W, FP, STACK_KEY, 0));
            self.lookup_stack_key(MapRef::AggKey);
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), fail);
            self.emit(alu_imm(Alu::Add, R0, (self.key_depth * self.env.key_buffer_size) as i32));
        }
        self.emit(stx(Size::DW, FP, key_ptr, R0));
        self.key_depth += 1;
        let offsets = key_offsets(columns);
        let mut values = keys.iter();
        for (i, (column, off)) in columns.iter().zip(offsets).enumerate() {
            let off = off as i32;
            if tid_first && i == 0 {
                self.current(Current::PidTgid);
                self.emit(alu_imm(Alu::Lsh, R0, 32));
                self.emit(alu_imm(Alu::Rsh, R0, 32));
                self.emit(ldx(Size::DW, R1, FP, key_ptr));
                self.emit(stx(Size::DW, R1, off as i16, R0));
                continue;
            }
            let key = values.next().ok_or_else(|| CodegenError("internal error: key count".into()))?;
            if matches!(column.ty, Type::Symbol(kind) if kind.user()) {
                // A user address is named in its process: the pid goes first.
                self.expr(key)?;
                self.emit(ldx(Size::DW, R1, FP, key_ptr));
                self.emit(stx(Size::DW, R1, (off + 8) as i16, R0));
                self.current_pid();
                self.emit(ldx(Size::DW, R1, FP, key_ptr));
                self.emit(stx(Size::DW, R1, off as i16, R0));
            } else if let Type::Struct(r) = &column.ty {
                // Its bytes, from the address the struct value is, the
                // column's padding cleared (keys compare as bytes).
                self.expr(key)?;
                self.emit(mov(R3, R0));
                self.emit(ldx(Size::DW, R1, FP, key_ptr));
                for word in 0..column.bytes / 8 {
                    self.emit(st_imm(Size::DW, R1, (off + 8 * word as i32) as i16, 0));
                }
                self.emit(alu_imm(Alu::Add, R1, off));
                self.emit(mov_imm(R2, r.size as i32));
                self.emit(call(Helper::ProbeReadKernel));
            } else if column.ty != Type::String {
                self.expr(key)?;
                self.emit(ldx(Size::DW, R1, FP, key_ptr));
                self.emit(stx(Size::DW, R1, off as i16, R0));
            } else {
                // Keys compare as bytes: clear the column, then copy the
                // string. The current comm is copied straight in (its
                // helper pads with NULs only on kernels since 2025, so it
                // needs the clearing too), and so is a char array in memory
                // (not into a scratch string first: one copy, not two).
                let own_comm = matches!(key.kind, TKind::Builtin(Builtin::Execname)) && !self.env.other_thread_probes;
                let (helper, max, from_memory) = match &key.kind {
                    _ if own_comm => (Helper::GetCurrentComm, column.bytes, false),
                    TKind::LoadStr(addr, len) => {
                        self.expr(addr)?;
                        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R0));
                        (Helper::ProbeReadKernelStr, (*len).min(self.strsize() as usize).min(column.bytes), true)
                    }
                    _ => {
                        self.expr(key)?;
                        (Helper::ProbeReadKernelStr, column.bytes, false)
                    }
                };
                if !own_comm {
                    self.emit(mov(R3, R0));
                }
                self.emit(ldx(Size::DW, R1, FP, key_ptr));
                for word in 0..column.bytes / 8 {
                    self.emit(st_imm(Size::DW, R1, (off + 8 * word as i32) as i16, 0));
                }
                self.emit(alu_imm(Alu::Add, R1, off));
                self.emit(mov_imm(R2, max as i32));
                self.emit(call(helper));
                if from_memory {
                    self.fault_on_read_error()?;
                }
            }
        }
        self.key_depth -= 1;
        Ok(key_ptr)
    }

    /// r2 = the address of a dynamic variable's key.
    fn key_into_r2(&mut self, key: MapKey) {
        match key {
            MapKey::OnStack(off) => {
                self.emit(mov(R2, FP));
                self.emit(alu_imm(Alu::Add, R2, off as i32));
            }
            MapKey::At(slot) => self.emit(ldx(Size::DW, R2, FP, slot)),
        }
    }

    /// r0 = a dynamic variable's value (0 or "" when absent): a thread-local
    /// or an associative array element, in hash map `map`.
    fn map_load(&mut self, map: MapRef, key: MapKey, ty: &Type) {
        self.emit2(ld_map_fd(R1, map));
        self.key_into_r2(key);
        self.emit(call(Helper::MapLookupElem));
        self.value_or_zero(ty);
    }

    /// r0 = the value at the address in r0 (its address, for by-reference
    /// values), or 0 or "" when r0 is 0: the variable is absent.
    fn value_or_zero(&mut self, ty: &Type) {
        let missing = self.new_label();
        let end = self.new_label();
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), missing);
        // By-reference values are their address in the map.
        if ty.by_reference_size(self.program.strsize).is_none() {
            self.emit(ldx(Size::DW, R0, R0, 0));
        }
        self.jump(ja(0), end);
        self.bind(missing);
        match ty {
            Type::String => self.string_const(NULL_STRING),
            Type::Struct(_) => {
                self.used_scratch = true;
                self.emit(mov(R0, R8));
                self.emit(alu_imm(Alu::Add, R0, self.scratch.struct_zeros as i32));
            }
            _ => self.emit(mov_imm(R0, 0)),
        }
        self.bind(end);
    }

    /// Stores r0 (already normalized to `ty`) into a dynamic variable;
    /// storing integer 0 deletes it, as DTrace frees a dynamic variable set
    /// to 0. r0 keeps the value.
    fn map_store(&mut self, map: MapRef, key: MapKey, ty: &Type) -> Result<(), CodegenError> {
        // A by-reference value is r0's address of map or stack memory.
        let is_string = ty.by_reference_size(self.program.strsize).is_some();
        let value = self.alloc_slot(8)?;
        let end = self.new_label();
        self.emit(stx(Size::DW, FP, value, R0));
        if !is_string {
            let store = self.new_label();
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), store);
            self.map_delete(map, key);
            self.jump(ja(0), end);
            self.bind(store);
        }
        self.emit2(ld_map_fd(R1, map));
        self.key_into_r2(key);
        if is_string {
            self.emit(ldx(Size::DW, R3, FP, value));
        } else {
            self.emit(mov(R3, FP));
            self.emit(alu_imm(Alu::Add, R3, value as i32));
        }
        self.emit(mov_imm(R4, 0));
        self.emit(call(Helper::MapUpdateElem));
        // A full map keeps the store from happening: DTrace's dynamic variable drop.
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), end);
        self.count_in(MapRef::DynDrops, 0);
        self.bind(end);
        self.emit(ldx(Size::DW, R0, FP, value));
        self.stack_top += 8;
        Ok(())
    }

    /// r0 = the address of thread-local `var`'s value (created zero-filled
    /// when `create`), or 0.
    fn thread_local_pointer(&mut self, var: usize, create: bool) {
        if self.env.task_storage {
            self.task_storage(var, create);
            return;
        }
        let key = self.thread_key();
        let found = self.new_label();
        self.emit2(ld_map_fd(R1, MapRef::ThreadLocal(var)));
        self.key_into_r2(key);
        self.emit(call(Helper::MapLookupElem));
        if create {
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), found);
            self.create_zeroed(MapRef::ThreadLocal(var), key);
        }
        self.bind(found);
    }

    /// r0 = the address of a new zero-filled value for `key` in `map` (0 if
    /// the map is full).
    fn create_zeroed(&mut self, map: MapRef, key: MapKey) {
        // Zeros to create it from: the scratch area missing structs read as.
        self.used_scratch = true;
        self.emit2(ld_map_fd(R1, map));
        self.key_into_r2(key);
        self.emit(mov(R3, R8));
        self.emit(alu_imm(Alu::Add, R3, self.scratch.struct_zeros as i32));
        self.emit(mov_imm(R4, BPF_NOEXIST));
        self.emit(call(Helper::MapUpdateElem));
        self.emit2(ld_map_fd(R1, map));
        self.key_into_r2(key);
        self.emit(call(Helper::MapLookupElem));
    }

    /// Stores r0 into a member of a struct element or thread-local,
    /// creating it zero-filled when it is not there; a full map is a
    /// dynamic variable drop. r0 keeps the value.
    fn store_member(&mut self, of: MemberOf, offset: u64, ty: &Type) -> Result<(), CodegenError> {
        let value = self.alloc_slot(8)?;
        self.emit(stx(Size::DW, FP, value, R0));
        let (found, end, dropped) = (self.new_label(), self.new_label(), self.new_label());
        match of {
            MemberOf::Element(array, key) => {
                let map = MapRef::Assoc(array);
                self.emit2(ld_map_fd(R1, map));
                self.key_into_r2(MapKey::At(key));
                self.emit(call(Helper::MapLookupElem));
                self.jump(jmp_imm(Cond::Ne, R0, 0, 0), found);
                self.create_zeroed(map, MapKey::At(key));
            }
            MemberOf::ThreadLocal(var) => self.thread_local_pointer(var, true),
        }
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), dropped);
        self.bind(found);
        if *ty == Type::String {
            // Its characters, copied into the member's bytes.
            self.emit(mov(R1, R0));
            self.emit(alu_imm(Alu::Add, R1, offset as i32));
            self.emit(mov_imm(R2, self.strsize()));
            self.emit(ldx(Size::DW, R3, FP, value));
            self.emit(call(Helper::ProbeReadKernelStr));
        } else {
            let width = match ty {
                Type::Int { size: 1, .. } => Size::B,
                Type::Int { size: 2, .. } => Size::H,
                Type::Int { size: 4, .. } => Size::W,
                _ => Size::DW,
            };
            self.emit(ldx(Size::DW, R1, FP, value));
            self.emit(stx(width, R0, offset as i16, R1));
        }
        self.jump(ja(0), end);
        self.bind(dropped);
        self.count_in(MapRef::DynDrops, 0);
        self.bind(end);
        self.emit(ldx(Size::DW, R0, FP, value));
        self.stack_top += 8;
        Ok(())
    }

    fn map_delete(&mut self, map: MapRef, key: MapKey) {
        self.emit2(ld_map_fd(R1, map));
        self.key_into_r2(key);
        self.emit(call(Helper::MapDeleteElem));
    }

    /// r0 = the address of thread-local `i` in the current task's storage,
    /// or 0 when the task has none (and `create` is false, or the kernel
    /// could not allocate it).
    fn task_storage(&mut self, i: usize, create: bool) {
        match self.tls_lookups.iter_mut().find(|(var, _)| *var == i) {
            Some((_, n)) => *n += 1,
            None => self.tls_lookups.push((i, 1)),
        }
        let cached = self.tls_slots.iter().find(|(var, _)| *var == i).map(|&(_, slot)| slot);
        let found = self.new_label();
        if let Some(slot) = cached {
            self.emit(ldx(Size::DW, R0, FP, slot));
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), found);
        }
        self.emit(call(Helper::GetCurrentTaskBtf));
        self.emit(mov(R2, R0));
        self.emit2(ld_map_fd(R1, MapRef::ThreadLocal(i)));
        self.emit(mov_imm(R3, 0));
        self.emit(mov_imm(R4, if create { LOCAL_STORAGE_GET_F_CREATE } else { 0 }));
        self.emit(call(Helper::TaskStorageGet));
        if let Some(slot) = cached {
            self.emit(stx(Size::DW, FP, slot, R0));
        }
        self.bind(found);
    }

    /// Stores r0 (already normalized to `ty`) into thread-local `i` in
    /// task-local storage. Storing integer 0 zeroes a value the task has
    /// and creates none: an absent variable and a zero one read the same,
    /// and zeroing in place spares the kernel a free and an allocation per
    /// set-and-clear pair. r0 keeps the value.
    fn task_storage_store(&mut self, i: usize, ty: &Type) -> Result<(), CodegenError> {
        let by_reference = ty.by_reference_size(self.program.strsize);
        let value = self.alloc_slot(8)?;
        let end = self.new_label();
        self.emit(stx(Size::DW, FP, value, R0));
        if by_reference.is_none() {
            let store = self.new_label();
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), store);
            self.task_storage_zero(i);
            self.jump(ja(0), end);
            self.bind(store);
        }
        self.task_storage(i, true);
        let stored = self.new_label();
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), stored);
        // No memory for the task's value: DTrace's dynamic variable drop.
        self.count_in(MapRef::DynDrops, 0);
        self.jump(ja(0), end);
        self.bind(stored);
        match by_reference {
            // Strings and structs: their bytes, from where r0 pointed.
            Some(size) => {
                self.emit(mov(R1, R0));
                self.emit(mov_imm(R2, size as i32));
                self.emit(ldx(Size::DW, R3, FP, value));
                self.emit(call(Helper::ProbeReadKernel));
            }
            None => {
                self.emit(ldx(Size::DW, R1, FP, value));
                self.emit(stx(Size::DW, R0, 0, R1));
            }
        }
        self.bind(end);
        self.emit(ldx(Size::DW, R0, FP, value));
        self.stack_top += 8;
        Ok(())
    }

    /// Zeroes thread-local integer `i` where the current task has it,
    /// creating nothing.
    fn task_storage_zero(&mut self, i: usize) {
        let absent = self.new_label();
        self.task_storage(i, false);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), absent);
        self.emit(st_imm(Size::DW, R0, 0, 0));
        self.bind(absent);
    }

    /// r0 = what the helper says of the current thread, or, in a script
    /// with probes that fire for other threads, the probe context's value
    /// when the entry program named a thread there.
    fn current(&mut self, what: Current) {
        let (helper, field) = match what {
            Current::PidTgid => (Helper::GetCurrentPidTgid, layout::CTX_PID_TGID),
            Current::UidGid => (Helper::GetCurrentUidGid, layout::CTX_UID_GID),
            Current::Task => (Helper::GetCurrentTask, layout::CTX_TASK),
        };
        if !self.env.other_thread_probes {
            self.emit(call(helper));
            return;
        }
        let (own, end) = (self.new_label(), self.new_label());
        self.emit(ldx(Size::DW, R0, R7, layout::CTX_TASK as i16));
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), own);
        self.emit(ldx(Size::DW, R0, R7, field as i16));
        self.jump(ja(0), end);
        self.bind(own);
        self.emit(call(helper));
        self.bind(end);
    }

    /// r0 = the current process ID (the thread's, for probes that fire for another).
    fn current_pid(&mut self) {
        self.current(Current::PidTgid);
        self.emit(alu_imm(Alu::Rsh, R0, 32));
    }

    /// Puts the current thread ID at STACK_KEY, the key of thread-locals.
    fn thread_key(&mut self) -> MapKey {
        self.current(Current::PidTgid);
        self.emit(stx(Size::W, FP, STACK_KEY, R0));
        MapKey::OnStack(STACK_KEY)
    }

    /// The firing's timestamp: the clock is read at the first use in a
    /// probe firing and kept in the probe context, so every use in every
    /// clause of the firing sees one value, as in DTrace.
    fn timestamp(&mut self) {
        let sampled = self.new_label();
        self.emit(ldx(Size::DW, R0, R7, layout::CTX_TIMESTAMP as i16));
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), sampled);
        self.emit(call(Helper::KtimeGetNs));
        self.emit(stx(Size::DW, R7, layout::CTX_TIMESTAMP as i16, R0));
        self.bind(sampled);
    }

    /// r0 = vtimestamp: the thread's dt_vtime total plus its current slice.
    /// A thread without an entry has not been switched in since tracing
    /// began: it has been on its CPU since then (dt_state.vtime_start_ns),
    /// and its entry starts there.
    fn vtimestamp(&mut self) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let value = self.alloc_slot(layout::VTIME_SIZE as i16)?;
        let entry = self.alloc_slot(8)?;
        let (found, end) = (self.new_label(), self.new_label());
        let key = self.thread_key();
        self.emit2(ld_map_fd(R1, MapRef::Vtime));
        self.key_into_r2(key);
        self.emit(call(Helper::MapLookupElem));
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), found);
        self.emit2(ld_map_value(R1, MapRef::State, layout::STATE_VTIME_START as u32));
        self.emit(ldx(Size::DW, R1, R1, 0));
        self.emit(st_imm(Size::DW, FP, value + layout::VTIME_TOTAL as i16, 0));
        self.emit(stx(Size::DW, FP, value + layout::VTIME_SINCE as i16, R1));
        self.emit2(ld_map_fd(R1, MapRef::Vtime));
        self.key_into_r2(key);
        self.emit(mov(R3, FP));
        self.emit(alu_imm(Alu::Add, R3, value as i32));
        self.emit(mov_imm(R4, BPF_NOEXIST));
        self.emit(call(Helper::MapUpdateElem));
        self.timestamp();
        self.emit(ldx(Size::DW, R1, FP, value + layout::VTIME_SINCE as i16));
        self.emit(alu_reg(Alu::Sub, R0, R1));
        self.jump(ja(0), end);
        self.bind(found);
        self.emit(stx(Size::DW, FP, entry, R0));
        self.timestamp();
        self.emit(ldx(Size::DW, R1, FP, entry));
        self.emit(ldx(Size::DW, R2, R1, layout::VTIME_SINCE as i16));
        self.emit(alu_reg(Alu::Sub, R0, R2));
        self.emit(ldx(Size::DW, R2, R1, layout::VTIME_TOTAL as i16));
        self.emit(alu_reg(Alu::Add, R0, R2));
        self.bind(end);
        self.stack_top = saved;
        Ok(())
    }

    /// The key of an element place, built once for a read-modify-write.
    fn place_key(&mut self, place: &Place, fail: Label) -> Result<Option<i16>, CodegenError> {
        match place {
            Place::Var(_) => Ok(None),
            Place::Element { array, keys } | Place::ElementMember { array, keys, .. } => {
                let a = &self.program.assoc_arrays[*array];
                let (columns, tid) = (a.keys.clone(), a.thread_local);
                Ok(Some(self.build_key(&columns, keys, tid, fail)?))
            }
            // A thread-local's key is the thread, built where it is used.
            Place::ThreadLocalMember { .. } => Ok(None),
            // The "key" of memory is its address, in a stack slot.
            Place::Memory(addr) | Place::Bitfield { addr, .. } => {
                self.expr(addr)?;
                let slot = self.alloc_slot(8)?;
                self.emit(stx(Size::DW, FP, slot, R0));
                Ok(Some(slot))
            }
        }
    }

    fn load_place(&mut self, place: &Place, key: Option<i16>, ty: &Type) -> Result<(), CodegenError> {
        match (place, key) {
            (Place::Var(v), _) => self.load_var(*v, ty),
            (Place::Element { array, .. }, Some(k)) => {
                self.note_use(VarRef::Array(*array), ty, false);
                self.map_load(MapRef::Assoc(*array), MapKey::At(k), ty);
                Ok(())
            }
            (Place::ElementMember { .. } | Place::ThreadLocalMember { .. }, k) => {
                // An element or thread-local not there yet reads as zeros.
                let (missing, end) = (self.new_label(), self.new_label());
                let offset = match place {
                    Place::ElementMember { array, offset, .. } => {
                        let k = k.ok_or_else(|| CodegenError("internal error: element without key".into()))?;
                        let element = self.program.assoc_arrays[*array].value.clone();
                        self.note_use(VarRef::Array(*array), &element, false);
                        self.emit2(ld_map_fd(R1, MapRef::Assoc(*array)));
                        self.key_into_r2(MapKey::At(k));
                        self.emit(call(Helper::MapLookupElem));
                        offset
                    }
                    Place::ThreadLocalMember { var, offset } => {
                        let whole = self.program.thread_locals[*var].ty.clone();
                        self.note_use(VarRef::Var(Var::ThreadLocal(*var)), &whole, false);
                        self.thread_local_pointer(*var, false);
                        offset
                    }
                    _ => unreachable!("matched above"),
                };
                self.jump(jmp_imm(Cond::Eq, R0, 0, 0), missing);
                self.emit(alu_imm(Alu::Add, R0, *offset as i32));
                self.load_at_r0(ty)?;
                self.jump(ja(0), end);
                self.bind(missing);
                self.emit(mov_imm(R0, 0));
                self.bind(end);
                Ok(())
            }
            (Place::Memory(_), Some(at)) => {
                self.emit(ldx(Size::DW, R0, FP, at));
                self.load_at_r0(ty)
            }
            (Place::Bitfield { unit, shift, bits, .. }, Some(at)) => {
                self.emit(ldx(Size::DW, R0, FP, at));
                self.load_at_r0(unit)?;
                // Up to the top, then down: the field, sign-extended if signed.
                let signed = matches!(ty, Type::Int { signed: true, .. });
                self.emit(alu_imm(Alu::Lsh, R0, (64 - shift - bits) as i32));
                self.emit(alu_imm(if signed { Alu::Arsh } else { Alu::Rsh }, R0, (64 - bits) as i32));
                Ok(())
            }
            _ => Err(CodegenError("internal error: element without key".into())),
        }
    }

    fn store_place(&mut self, place: &Place, key: Option<i16>, ty: &Type) -> Result<(), CodegenError> {
        match (place, key) {
            (Place::Var(v), _) => self.store_var(*v, ty),
            (Place::Element { array, .. }, Some(k)) => {
                self.note_use(VarRef::Array(*array), ty, true);
                if let Type::Struct(r) = ty {
                    // The map update copies from the staging area (the value
                    // may be kernel memory, which the helper cannot take).
                    self.used_scratch = true;
                    let staging = self.scratch.struct_staging as i32;
                    self.copy_from_r0(Helper::ProbeReadKernel, R8, staging, r.size as i32)?;
                    self.emit(mov(R0, R8));
                    self.emit(alu_imm(Alu::Add, R0, staging));
                } else if self.program.assoc_arrays[*array].declared {
                    self.normalize(ty);
                }
                let assoc = &self.program.assoc_arrays[*array];
                let by_reference = ty.by_reference_size(self.program.strsize).is_some();
                let (key_size, value_size) =
                    (assoc.key_size(), crate::sema::check::var_bytes(ty, self.program.strsize));
                if self.dynamic_store_never_fits(key_size, value_size, by_reference)? {
                    return Ok(());
                }
                self.map_store(MapRef::Assoc(*array), MapKey::At(k), ty)
            }
            (Place::ElementMember { array, offset, .. }, Some(k)) => {
                let element = self.program.assoc_arrays[*array].value.clone();
                self.note_use(VarRef::Array(*array), &element, false);
                self.normalize(ty);
                self.store_member(MemberOf::Element(*array, k), *offset, ty)
            }
            (Place::ThreadLocalMember { var, offset }, _) => {
                let whole = self.program.thread_locals[*var].ty.clone();
                self.note_use(VarRef::Var(Var::ThreadLocal(*var)), &whole, false);
                self.normalize(ty);
                self.store_member(MemberOf::ThreadLocal(*var), *offset, ty)
            }
            (Place::Memory(_), Some(at)) => {
                self.normalize(ty);
                self.store_memory(at, ty)
            }
            (Place::Bitfield { unit, shift, bits, .. }, Some(at)) => {
                // The unit read, the field's bits replaced, the unit written.
                let value = self.alloc_slot(8)?;
                self.emit(stx(Size::DW, FP, value, R0));
                self.emit(ldx(Size::DW, R0, FP, at));
                self.load_at_r0(unit)?;
                let mask = if *bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
                self.load_const(R1, !(mask << shift));
                self.emit(alu_reg(Alu::And, R0, R1));
                self.emit(ldx(Size::DW, R1, FP, value));
                self.load_const(R2, mask);
                self.emit(alu_reg(Alu::And, R1, R2));
                self.emit(alu_imm(Alu::Lsh, R1, *shift as i32));
                self.emit(alu_reg(Alu::Or, R0, R1));
                self.store_memory(at, unit)?;
                // The assignment's value is the field's: what a read gives.
                self.emit(ldx(Size::DW, R0, FP, value));
                let signed = matches!(ty, Type::Int { signed: true, .. });
                self.emit(alu_imm(Alu::Lsh, R0, (64 - bits) as i32));
                self.emit(alu_imm(if signed { Alu::Arsh } else { Alu::Rsh }, R0, (64 - bits) as i32));
                self.stack_top += 8;
                Ok(())
            }
            _ => Err(CodegenError("internal error: element without key".into())),
        }
    }

    /// Where byte `offset` of the record is, as a base register and a
    /// memory access's 16-bit offset: r9 and `offset`, or, past 32 KB (many
    /// strings of a large strsize), `scratch` pointed at it.
    fn in_record(&mut self, offset: usize, scratch: Reg) -> Result<(Reg, i16), CodegenError> {
        if let Ok(near) = i16::try_from(offset) {
            return Ok((R9, near));
        }
        self.emit(mov(scratch, R9));
        self.emit(alu_imm(Alu::Add, scratch, record_offset(offset)?));
        Ok((scratch, 0))
    }

    /// Stores `src` (not r1) at byte `offset` of the record.
    fn store_in_record(&mut self, offset: usize, src: Reg) -> Result<(), CodegenError> {
        let (base, off) = self.in_record(offset, R1)?;
        self.emit(stx(Size::DW, base, off, src));
        Ok(())
    }

    fn action(&mut self, action: usize, kind: &ActionKind) -> Result<(), CodegenError> {
        let clause = self.clause.ok_or_else(|| CodegenError("internal error: action outside a clause".into()))?;
        let epid = clause.epid;
        let clause_ir = &self.program.clauses[epid as usize - 1];
        let layout = clause_ir.actions[action].clone();
        let mut offset = layout.offset;
        let values: Vec<&TExpr> = match kind {
            ActionKind::Record(args) => args.iter().collect(),
            ActionKind::Exit(e) => vec![e],
        };
        for (value, value_layout) in values.into_iter().zip(&layout.values) {
            // Once in the record, a value's string temporaries are free again.
            let scratch = self.scratch_next;
            self.expr(value)?;
            match value_layout {
                ValueLayout::Int { .. } | ValueLayout::Float { .. } | ValueLayout::Stack => {
                    self.store_in_record(offset, R0)?
                }
                ValueLayout::Symbol(kind) if kind.user() => {
                    self.store_in_record(offset + 8, R0)?;
                    self.current_pid();
                    self.store_in_record(offset, R0)?;
                }
                ValueLayout::Symbol(_) => self.store_in_record(offset, R0)?,
                ValueLayout::Str => {
                    if matches!(value.kind, TKind::Var(_) | TKind::Element { .. }) {
                        self.fault_on_null_string()?;
                    }
                    self.emit(mov(R3, R0));
                    self.emit(mov(R1, R9));
                    self.emit(alu_imm(Alu::Add, R1, record_offset(offset)?));
                    self.emit(mov_imm(R2, self.strsize()));
                    self.emit(call(Helper::ProbeReadKernelStr));
                }
                ValueLayout::Memory(size) => {
                    self.read_faulting(Helper::ProbeReadKernel, R9, record_offset(offset)?, *size as i32)?
                }
                ValueLayout::Pointee(size) => {
                    self.store_in_record(offset, R0)?;
                    self.read_faulting(Helper::ProbeReadKernel, R9, record_offset(offset + 8)?, *size as i32)?
                }
            }
            offset += value_layout.bytes(self.program.strsize);
            self.scratch_next = scratch;
        }
        if matches!(kind, ActionKind::Exit(_)) {
            // Nothing fires any more, and this firing's later clauses do
            // not run; in END only the status changes.
            let ending = self.new_label();
            self.emit2(ld_map_value(R1, MapRef::State, layout::STATE_DRAINING as u32));
            self.emit(ldx(Size::W, R2, R1, 0));
            self.jump(jmp_imm(Cond::Eq, R2, layout::STATE_ENDING as i32, 0), ending);
            self.emit(st_imm(Size::W, R1, 0, layout::STATE_STOPPED as i32));
            self.bind(ending);
            self.exit_called = true;
        }
        // Mark the action as present in the record (if the header does not
        // say so already).
        let (word, bit) = self.program.clauses[epid as usize - 1].present_bit(action);
        if word == layout::HDR_PRESENT && clause.always_present & (1 << bit) != 0 {
            return Ok(());
        }
        let (base, off) = self.in_record(word, R3)?;
        self.emit(ldx(Size::DW, R1, base, off));
        self.emit2(ld_imm64(R2, 1u64 << bit));
        self.emit(alu_reg(Alu::Or, R1, R2));
        self.emit(stx(Size::DW, base, off, R1));
        Ok(())
    }

    /// Evaluates `e` into r0 (integers: the value; strings: a pointer to a
    /// NUL-terminated buffer with at least strsize readable bytes).
    fn expr(&mut self, e: &TExpr) -> Result<(), CodegenError> {
        match &e.kind {
            TKind::Int(v) => self.load_const(R0, *v),
            TKind::Str(i) => self.string_const(*i),
            TKind::Builtin(b) => {
                self.note_use(VarRef::Builtin(*b), &e.ty, false);
                self.builtin(*b)?
            }
            TKind::Var(v) => self.load_var(*v, &e.ty)?,
            // Arithmetic keeps 64-bit intermediates, as DTrace's does: a value
            // takes its type's size where it is stored, cast or recorded
            // (`i = 100000; j = i * i / i` is 100000).
            TKind::Neg(inner) => {
                self.expr(inner)?;
                self.emit(neg(R0));
            }
            TKind::BitNot(inner) => {
                self.expr(inner)?;
                self.emit(alu_imm(Alu::Xor, R0, -1));
            }
            TKind::Not(inner) => {
                self.expr(inner)?;
                self.bool_of(Cond::Eq, None, 0);
            }
            TKind::Binary { op, signed, lhs, rhs } => {
                if *op == BinOp::Comma {
                    self.expr(lhs)?;
                    return self.expr(rhs);
                }
                let slot = self.alloc_slot(8)?;
                self.expr(lhs)?;
                self.emit(stx(Size::DW, FP, slot, R0));
                self.expr(rhs)?;
                self.emit(mov(R1, R0));
                self.emit(ldx(Size::DW, R0, FP, slot));
                self.stack_top += 8;
                self.binary_op(*op, *signed)?;
            }
            TKind::Logical { op, lhs, rhs } => self.logical(*op, lhs, rhs)?,
            TKind::StrCmp { op, lhs, rhs } => {
                // The result is a number: the operands' string temporaries
                // are free again once they are compared.
                let scratch = self.scratch_next;
                let slot = self.alloc_slot(8)?;
                self.expr(lhs)?;
                self.emit(stx(Size::DW, FP, slot, R0));
                self.expr(rhs)?;
                self.emit(mov(R2, R0));
                self.emit(ldx(Size::DW, R1, FP, slot));
                self.stack_top += 8;
                self.strcmp();
                self.scratch_next = scratch;
                let cond = relation(*op, true);
                self.bool_of(cond, None, 0);
            }
            TKind::Ternary(c, a, b) => {
                let other = self.new_label();
                let end = self.new_label();
                self.jump_unless(c, other)?;
                // One branch runs: the other's string temporaries may use
                // the same scratch slots. Both results stay live after.
                let scratch = self.scratch_next;
                self.expr(a)?;
                let after_a = self.scratch_next;
                self.scratch_next = scratch;
                self.jump(ja(0), end);
                self.bind(other);
                self.expr(b)?;
                self.scratch_next = self.scratch_next.max(after_a);
                self.bind(end);
            }
            // `self->x = 0` in task storage: zeroed where present, with no
            // code that could allocate (the usual end of a latency pair).
            TKind::Assign { place: Place::Var(Var::ThreadLocal(i)), op: None, value, .. }
                if self.env.task_storage
                    && matches!(value.kind, TKind::Int(0))
                    && e.ty.by_reference_size(self.program.strsize).is_none() =>
            {
                self.note_use(VarRef::Var(Var::ThreadLocal(*i)), &e.ty, true);
                self.task_storage_zero(*i);
                self.emit(mov_imm(R0, 0));
            }
            // `x op= v` reads x before v is evaluated, as DTrace's `x = x op v`
            // does: `i = 1; i += i++` is 2.
            TKind::Assign { place, op: Some(op), signed, value } => {
                let saved = self.stack_top;
                let done = self.new_label();
                let key = self.place_key(place, done)?;
                self.load_place(place, key, &e.ty)?;
                let old_slot = self.alloc_slot(8)?;
                self.emit(stx(Size::DW, FP, old_slot, R0));
                self.expr(value)?;
                self.emit(mov(R1, R0));
                self.emit(ldx(Size::DW, R0, FP, old_slot));
                self.binary_op(*op, *signed)?;
                self.store_place(place, key, &e.ty)?;
                self.bind(done);
                self.stack_top = saved;
            }
            TKind::Assign { place, op: None, value, .. } => {
                let saved = self.stack_top;
                let done = self.new_label();
                self.expr(value)?;
                let value_slot = self.alloc_slot(8)?;
                self.emit(stx(Size::DW, FP, value_slot, R0));
                let key = self.place_key(place, done)?;
                self.emit(ldx(Size::DW, R0, FP, value_slot));
                self.store_place(place, key, &e.ty)?;
                if self.jumped_to(done) && e.ty.by_reference_size(self.program.strsize).is_some() {
                    // Without a key buffer (r0 = 0) the value is still the
                    // string or struct assigned, as older verifiers check.
                    let end = self.new_label();
                    self.jump(ja(0), end);
                    self.bind(done);
                    self.emit(ldx(Size::DW, R0, FP, value_slot));
                    self.bind(end);
                } else {
                    self.bind(done);
                }
                self.stack_top = saved;
            }
            TKind::IncDec { place, delta, post } => {
                let saved = self.stack_top;
                let done = self.new_label();
                let key = self.place_key(place, done)?;
                self.load_place(place, key, &e.ty)?;
                let slot = self.alloc_slot(8)?;
                self.emit(stx(Size::DW, FP, slot, R0));
                self.emit(alu_imm(Alu::Add, R0, *delta));
                self.normalize(&e.ty);
                self.store_place(place, key, &e.ty)?;
                if *post {
                    self.emit(ldx(Size::DW, R0, FP, slot));
                }
                self.bind(done);
                self.stack_top = saved;
            }
            TKind::Element { array, keys } => {
                let saved = self.stack_top;
                let done = self.new_label();
                let a = &self.program.assoc_arrays[*array];
                let (columns, tid) = (a.keys.clone(), a.thread_local);
                // Without a key buffer (r0 = 0 there) the element reads as
                // absent: a string is then the NULL string, as older
                // verifiers check on that path too.
                let key = self.build_key(&columns, keys, tid, done)?;
                self.note_use(VarRef::Array(*array), &e.ty, false);
                self.emit2(ld_map_fd(R1, MapRef::Assoc(*array)));
                self.key_into_r2(MapKey::At(key));
                self.emit(call(Helper::MapLookupElem));
                self.bind(done);
                self.value_or_zero(&e.ty);
                self.stack_top = saved;
            }
            TKind::Cast(inner) => {
                self.expr(inner)?;
                // curcpu points into a map: as a number (`(int64_t)curcpu >>
                // 8`) it must be one to the verifier, which allows a map
                // pointer no arithmetic but adding.
                if matches!(inner.kind, TKind::Builtin(Builtin::Curcpu)) && matches!(e.ty, Type::Int { .. }) {
                    self.address_as_number();
                }
                self.normalize(&e.ty);
            }
            TKind::Load(addr) => self.load(addr, &e.ty)?,
            TKind::Subr(subr, args) => self.subroutine(*subr, args, &e.ty)?,
            TKind::Progenyof { pid, parent_offset, tgid_offset } => {
                self.progenyof(pid, *parent_offset, *tgid_offset)?
            }
            TKind::DPath { path, offsets, mount_point } => self.d_path(path, offsets, *mount_point)?,
            TKind::Xlate { .. } => {
                return Err(CodegenError("internal error: a translated struct reached code generation".into()))
            }
            TKind::TranslatedStruct { size, members } => self.translated_struct(*size, members)?,
            TKind::StackId(frames) => {
                // The kernel stack of the probe's context, with the frames
                // to print packed above the ID; -1 when it cannot be had.
                let failed = self.new_label();
                self.emit(mov(R1, R6));
                self.emit2(ld_map_fd(R2, MapRef::Stacks(*frames)));
                self.machinery_frames_into(R3);
                self.emit(call(Helper::GetStackid));
                self.jump(jmp_imm(Cond::Slt, R0, 0, 0), failed);
                let tag = u64::from(*frames) << crate::sema::ir::ustack_value::FRAMES_SHIFT;
                self.emit2(ld_imm64(R1, tag));
                self.emit(alu_reg(Alu::Or, R0, R1));
                self.bind(failed);
            }
            TKind::UStackId(frames) => self.ustack_id(*frames)?,
            TKind::LoadStr(addr, len) => self.load_str(addr, *len)?,
            TKind::Offset(base, off) => {
                self.expr(base)?;
                if base.ty == Type::String && matches!(base.kind, TKind::Var(_) | TKind::Element { .. }) {
                    // A NULL string has no bytes: its address is 0, so
                    // indexing it faults there, as in DTrace.
                    let bytes = self.new_label();
                    self.emit(ldx(Size::B, R1, R0, 0));
                    self.jump(jmp_imm(Cond::Ne, R1, 0, 0), bytes);
                    self.emit(ldx(Size::B, R1, R0, 1));
                    self.jump(jmp_imm(Cond::Ne, R1, NULL_STRING_BYTES[1] as i32, 0), bytes);
                    self.emit(mov_imm(R0, 0));
                    self.bind(bytes);
                }
                self.emit(alu_imm(Alu::Add, R0, *off as i32));
                // An array in D's memory (a string's bytes, a member of a D
                // variable) is indexed through a map pointer: make it a
                // number. Kernel addresses are numbers already.
                if matches!(e.ty, Type::Array(..)) && in_d_memory(base) {
                    self.address_as_number();
                }
            }
            TKind::ClearVar(Place::Var(Var::ThreadLocal(i))) if matches!(e.ty, Type::Struct(_)) => {
                self.note_use(VarRef::Var(Var::ThreadLocal(*i)), &e.ty, true);
                self.clear_thread_local_struct(*i, &e.ty)?
            }
            TKind::ClearVar(Place::Var(var)) => self.clear_var(*var)?,
            TKind::ClearVar(Place::Element { array, keys }) => {
                let saved = self.stack_top;
                let done = self.new_label();
                let a = &self.program.assoc_arrays[*array];
                let (columns, tid) = (a.keys.clone(), a.thread_local);
                let key = self.build_key(&columns, keys, tid, done)?;
                self.note_use(VarRef::Array(*array), &e.ty, true);
                self.map_delete(MapRef::Assoc(*array), MapKey::At(key));
                self.bind(done);
                self.string_const(NULL_STRING);
                self.stack_top = saved;
            }
            TKind::ClearVar(
                Place::Memory(_)
                | Place::Bitfield { .. }
                | Place::ElementMember { .. }
                | Place::ThreadLocalMember { .. },
            ) => return Err(CodegenError("internal error: a string in memory is no variable".into())),
            TKind::CopyInStr(addr, None) => {
                self.expr(addr)?;
                self.read_str_into_scratch(Helper::ProbeReadUserStr, self.strsize())?;
            }
            TKind::CopyInStr(addr, Some(limit)) => self.copyinstr_at_most(addr, limit)?,
        }
        Ok(())
    }

    /// A whole translated struct in its scratch buffer: zeros, then each
    /// member's value at its offset; r0 = the buffer's address.
    #[inline(never)]
    fn translated_struct(&mut self, size: usize, members: &[(usize, usize, TExpr)]) -> Result<(), CodegenError> {
        self.used_scratch = true;
        let base = self.scratch.translated as i32;
        // Zeros first, then each member in place (sema flattened nested
        // translations into members of this buffer).
        let saved = self.stack_top;
        for word in 0..size.div_ceil(8) {
            self.emit(st_imm(Size::DW, R8, (base as usize + 8 * word) as i16, 0));
        }
        for (offset, bytes, value) in members {
            let at = base + *offset as i32;
            self.expr(value)?;
            match &value.ty {
                Type::String | Type::Struct(_) => {
                    let (helper, max) = match value.ty {
                        Type::String => (Helper::ProbeReadKernelStr, (*bytes).min(self.strsize() as usize)),
                        _ => (Helper::ProbeReadKernel, *bytes),
                    };
                    if max == 0 {
                        continue;
                    }
                    self.emit(mov(R3, R0));
                    self.emit(mov(R1, R8));
                    self.emit(alu_imm(Alu::Add, R1, at));
                    self.emit(mov_imm(R2, max as i32));
                    self.emit(call(helper));
                }
                _ => {
                    self.emit(stx(Size::of_bytes(u8::try_from(*bytes).unwrap_or(8)), R8, at as i16, R0));
                }
            }
        }
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, base));
        self.stack_top = saved;
        Ok(())
    }

    /// copyinstr(addr, maxlen): maxlen bytes with the NUL (dtrace-utils'
    /// copyinstr-low-maxsize: 8 gives 7 characters), within 1..=strsize + 1.
    /// (Out of `expr`, whose stack frame deep expressions recurse through.)
    #[inline(never)]
    fn copyinstr_at_most(&mut self, addr: &TExpr, limit: &TExpr) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let at = self.alloc_slot(8)?;
        self.expr(addr)?;
        self.emit(stx(Size::DW, FP, at, R0));
        self.expr(limit)?;
        self.emit(mov(R2, R0));
        self.emit(jmp_imm(Cond::Sle, R2, self.strsize(), 1));
        self.emit(mov_imm(R2, self.strsize()));
        self.emit(jmp_imm(Cond::Sge, R2, 1, 1));
        self.emit(mov_imm(R2, 1));
        let dst = self.scratch_slot()?;
        self.read_into_scratch_from_slot(Helper::ProbeReadUserStr, at, dst)?;
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, dst));
        self.stack_top = saved;
        Ok(())
    }

    /// r0 = the integer of type `ty` at kernel address `addr`; a bad address
    /// is a fault.
    fn load(&mut self, addr: &TExpr, ty: &Type) -> Result<(), CodegenError> {
        self.expr(addr)?;
        self.load_at_r0(ty)
    }

    /// r0 = the integer or pointer of type `ty` at the address in r0.
    fn load_at_r0(&mut self, ty: &Type) -> Result<(), CodegenError> {
        let size = match ty {
            Type::Int { size, .. } => size,
            Type::Pointer(_) => &8,
            _ => return Err(CodegenError("internal error: load of a non-scalar".into())),
        };
        self.check_alloca_read(ReadSize::Bytes(usize::from(*size)))?;
        let slot = self.alloc_slot(8)?;
        self.read_faulting(Helper::ProbeReadKernel, FP, slot as i32, *size as i32)?;
        let width = match size {
            1 => Size::B,
            2 => Size::H,
            4 => Size::W,
            _ => Size::DW,
        };
        self.emit(ldx(width, R0, FP, slot));
        self.normalize(ty);
        self.stack_top += 8;
        Ok(())
    }

    /// A read of `size` bytes at the address in r0 (kept) that lies around
    /// the alloca() region but not in what this clause reserved there (just
    /// below it, past its end, or in a pointer kept from another clause's
    /// alloca()) is a bad-address fault, as dtrace-utils checks reads
    /// through alloca()'d pointers.
    fn check_alloca_read(&mut self, size: ReadSize) -> Result<(), CodegenError> {
        if self.program.alloca_bytes == 0 || !self.with_scratch {
            return Ok(());
        }
        let Some(epid) = self.clause.map(|c| c.epid) else { return Ok(()) };
        let reserved = self.program.clauses[epid as usize - 1].alloca_bytes as i32;
        // The window checked: 8 bytes below the region (struct zeros, no
        // D pointer's target) to the end of its room.
        let below = 8.min(self.scratch.alloca);
        let window = below + 2 * self.program.alloca_bytes;
        let (ok, bad) = (self.new_label(), self.new_label());
        self.used_scratch = true;
        // Both as numbers: r0 may be a pointer the verifier knows.
        self.emit(mov(R1, R0));
        self.forget(R1);
        self.emit(mov(R2, R8));
        self.forget(R2);
        self.emit(alu_reg(Alu::Sub, R1, R2));
        self.emit(alu_imm(Alu::Sub, R1, (self.scratch.alloca - below) as i32));
        self.jump(jmp_imm(Cond::Ge, R1, window as i32, 0), ok);
        // The offset in the region (below it, the subtraction wraps to a
        // huge number), then its end.
        self.emit(alu_imm(Alu::Sub, R1, below as i32));
        self.jump(jmp_imm(Cond::Gt, R1, reserved, 0), bad);
        match size {
            ReadSize::Bytes(n) => self.emit(alu_imm(Alu::Add, R1, n as i32)),
            ReadSize::Slot(slot) => {
                self.emit(ldx(Size::DW, R2, FP, slot));
                self.jump(jmp_imm(Cond::Gt, R2, reserved, 0), bad);
                self.emit(alu_reg(Alu::Add, R1, R2));
            }
        }
        self.jump(jmp_imm(Cond::Le, R1, reserved, 0), ok);
        self.bind(bad);
        self.emit(mov(R1, R0));
        self.raise_fault(layout::FAULT_BADADDR)?;
        self.bind(ok);
        Ok(())
    }

    /// Stores r0 as a `ty` at the address in stack slot `at`, if the bytes
    /// lie in D's own memory: the clause-local strings or alloca() memory
    /// of the scratch map (the address is checked as a number and rebuilt
    /// from the scratch pointer, for the verifier). Anywhere else is a
    /// bad-address fault, as in DTrace.
    fn store_memory(&mut self, at: i16, ty: &Type) -> Result<(), CodegenError> {
        // A struct is copied from the address in r0, its size in bytes.
        let size = match ty {
            Type::Int { size, .. } => *size as usize,
            Type::Struct(r) => r.size,
            Type::String => self.strsize() as usize,
            _ => 8,
        };
        let width = match size {
            1 => Size::B,
            2 => Size::H,
            4 => Size::W,
            _ => Size::DW,
        };
        let value = self.alloc_slot(8)?;
        self.emit(stx(Size::DW, FP, value, R0));
        self.emit(ldx(Size::DW, R1, FP, at));
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R1));
        let done = self.new_label();
        // Addresses are laundered through scratch memory: a program that
        // stores is always generated with it.
        self.used_scratch = true;
        let mut regions_checked = false;
        let globals_bytes = self.program.globals_bytes();
        if self.with_scratch && globals_bytes >= size {
            // Global variables: at their offset in the one globals map value.
            regions_checked = true;
            let outside = self.new_label();
            self.emit(ldx(Size::DW, R3, FP, STACK_FAULT_ADDR));
            self.forget(R3);
            self.emit2(ld_map_value(R4, MapRef::Globals, 0));
            self.emit(mov(R2, R4));
            self.forget(R2);
            self.emit(alu_reg(Alu::Sub, R3, R2));
            self.jump(jmp_imm(Cond::Gt, R3, (globals_bytes - size) as i32, 0), outside);
            self.emit(alu_reg(Alu::Add, R4, R3));
            self.store_at_r4(value, ty, width, size);
            self.jump(ja(0), done);
            self.bind(outside);
        }
        if self.with_scratch {
            self.forget(R1);
            self.emit(mov(R2, R8));
            self.forget(R2);
            self.emit(alu_reg(Alu::Sub, R1, R2));
            // As DTrace's scratch space: the subroutines' results (a
            // copyin() buffer a script terminates), clause-locals, alloca().
            let regions = [
                (0, self.scratch.launder),
                (self.scratch.clause_locals, self.scratch.work),
                (self.scratch.alloca, self.scratch.alloca + self.program.alloca_bytes),
            ];
            for (start, end) in regions {
                if end < start + size {
                    continue;
                }
                regions_checked = true;
                let outside = self.new_label();
                self.emit(mov(R3, R1));
                self.emit(alu_imm(Alu::Sub, R3, start as i32));
                self.jump(jmp_imm(Cond::Gt, R3, (end - start - size) as i32, 0), outside);
                self.emit(mov(R4, R8));
                self.emit(alu_imm(Alu::Add, R4, start as i32));
                self.emit(alu_reg(Alu::Add, R4, R3));
                self.store_at_r4(value, ty, width, size);
                self.jump(ja(0), done);
                self.bind(outside);
            }
        }
        if !regions_checked {
            // Nothing is writable: the store always faults. A jump the
            // verifier cannot rule out (no probe has ID 0) keeps the code
            // after it reachable, as the verifier wants all code to be.
            self.emit(ldx(Size::W, R0, R7, layout::CTX_PROBE_ID as i16));
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), done);
        }
        self.emit(ldx(Size::DW, R1, FP, STACK_FAULT_ADDR));
        self.raise_fault(layout::FAULT_BADADDR)?;
        self.bind(done);
        self.emit(ldx(Size::DW, R0, FP, value));
        Ok(())
    }

    /// Stores the value in stack slot `value` at the checked address in r4:
    /// a scalar of `width`, or a struct's `size` bytes copied from the
    /// address the slot holds (D memory, readable).
    fn store_at_r4(&mut self, value: i16, ty: &Type, width: Size, size: usize) {
        if let Type::Struct(_) | Type::String = ty {
            let helper = if *ty == Type::String { Helper::ProbeReadKernelStr } else { Helper::ProbeReadKernel };
            self.emit(mov(R1, R4));
            self.emit(mov_imm(R2, size as i32));
            self.emit(ldx(Size::DW, R3, FP, value));
            self.emit(call(helper));
        } else {
            self.emit(ldx(Size::DW, R0, FP, value));
            self.emit(stx(width, R4, 0, R0));
        }
    }

    /// r0 = a scratch string holding the char array of `len` bytes at `addr`.
    /// An address the kernel cannot read as its own is read as the
    /// current process's, as dtrace-utils reads one (`stringof(arg0)` of a
    /// USDT probe's string); one neither can read is a fault.
    fn load_str(&mut self, addr: &TExpr, len: usize) -> Result<(), CodegenError> {
        self.expr(addr)?;
        // The array may fill its bytes without a NUL; the string stops at strsize.
        let max = len.min(self.strsize() as usize) as i32;
        let dst = self.scratch_slot()?;
        let read = self.new_label();
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R0));
        self.emit(mov(R3, R0));
        self.emit(mov(R1, R8));
        self.emit(alu_imm(Alu::Add, R1, dst));
        self.emit(mov_imm(R2, max));
        self.emit(call(Helper::ProbeReadKernelStr));
        self.jump(jmp_imm(Cond::Sge, R0, 0, 0), read);
        self.emit(ldx(Size::DW, R3, FP, STACK_FAULT_ADDR));
        self.emit(mov(R1, R8));
        self.emit(alu_imm(Alu::Add, R1, dst));
        self.emit(mov_imm(R2, max));
        self.emit(call(Helper::ProbeReadUserStr));
        self.fault_on_read_error()?;
        self.bind(read);
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, dst));
        Ok(())
    }

    /// `str = NULL`: a thread-local is deleted, a global emptied; r0 = "".
    /// `self->s = 0` of a struct or union: the thread's value is deleted
    /// (zeroed in task-local storage, which reads the same); r0 = 0.
    fn clear_thread_local_struct(&mut self, i: usize, ty: &Type) -> Result<(), CodegenError> {
        if !self.env.task_storage {
            let key = self.thread_key();
            self.map_delete(MapRef::ThreadLocal(i), key);
            self.emit(mov_imm(R0, 0));
            return Ok(());
        }
        // The struct's own bytes: the zeros kept are as many as the
        // largest struct value's.
        let size = ty.by_reference_size(self.program.strsize).unwrap_or(8);
        let done = self.new_label();
        self.task_storage(i, false);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), done);
        // Zeros copied from the scratch area kept zero for struct values.
        self.used_scratch = true;
        self.emit(mov(R1, R0));
        self.emit(mov_imm(R2, size as i32));
        self.emit(mov(R3, R8));
        self.emit(alu_imm(Alu::Add, R3, self.scratch.struct_zeros as i32));
        self.emit(call(Helper::ProbeReadKernel));
        self.bind(done);
        self.emit(mov_imm(R0, 0));
        Ok(())
    }

    fn clear_var(&mut self, var: Var) -> Result<(), CodegenError> {
        let ty = self.variable(var).ty.clone();
        self.note_use(VarRef::Var(var), &ty, true);
        match var {
            Var::ThreadLocal(i) if self.env.task_storage => {
                let done = self.new_label();
                self.task_storage(i, false);
                self.jump(jmp_imm(Cond::Eq, R0, 0, 0), done);
                self.emit(st_imm(Size::B, R0, 0, 0));
                self.emit(st_imm(Size::B, R0, 1, NULL_STRING_BYTES[1] as i32));
                self.bind(done);
            }
            Var::ThreadLocal(i) => {
                let key = self.thread_key();
                self.map_delete(MapRef::ThreadLocal(i), key);
            }
            Var::Global(i) => {
                self.emit2(ld_map_value(R1, MapRef::Globals, self.global_offset(i)));
                self.emit(st_imm(Size::B, R1, 0, 0));
                self.emit(st_imm(Size::B, R1, 1, NULL_STRING_BYTES[1] as i32));
            }
            Var::ClauseLocal(i) => {
                let slot = self.clause_local_slots[i];
                self.emit(st_imm(Size::B, R8, slot, 0));
                self.emit(st_imm(Size::B, R8, slot + 1, NULL_STRING_BYTES[1] as i32));
            }
        }
        self.string_const(NULL_STRING);
        Ok(())
    }

    fn load_const(&mut self, reg: Reg, v: u64) {
        let s = v as i64;
        if s >= i32::MIN as i64 && s <= i32::MAX as i64 {
            self.emit(mov_imm(reg, s as i32));
        } else {
            self.emit2(ld_imm64(reg, v));
        }
    }

    fn string_const(&mut self, index: usize) {
        let off = (index * self.program.strsize) as u32;
        self.emit2(ld_map_value(R0, MapRef::Strings, off));
    }

    /// Truncates and sign- or zero-extends r0 to an integer type.
    fn normalize(&mut self, ty: &Type) {
        if let Type::Int { size, signed, .. } = ty {
            if *size < 8 {
                let shift = 64 - 8 * *size as i32;
                self.emit(alu_imm(Alu::Lsh, R0, shift));
                self.emit(alu_imm(if *signed { Alu::Arsh } else { Alu::Rsh }, R0, shift));
            }
        }
    }

    /// Jumps to `target` when condition `cond` is false (zero). A
    /// comparison jumps on its operands, without making its 0 or 1: the
    /// common predicate `/pid == 1234/` is a helper call and one jump.
    fn jump_unless(&mut self, cond: &TExpr, target: Label) -> Result<(), CodegenError> {
        let TKind::Binary { op, signed, lhs, rhs } = &cond.kind else {
            self.expr(cond)?;
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), target);
            return Ok(());
        };
        let fails = match op {
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => relation(*op, *signed).negated(),
            _ => {
                self.expr(cond)?;
                self.jump(jmp_imm(Cond::Eq, R0, 0, 0), target);
                return Ok(());
            }
        };
        // A constant right operand that the jump's immediate holds exactly
        // (sign-extended, as the constant is loaded).
        if let TKind::Int(v) = rhs.kind {
            if let Ok(imm) = i32::try_from(v as i64) {
                self.expr(lhs)?;
                self.jump(jmp_imm(fails, R0, imm, 0), target);
                return Ok(());
            }
        }
        let slot = self.alloc_slot(8)?;
        self.expr(lhs)?;
        self.emit(stx(Size::DW, FP, slot, R0));
        self.expr(rhs)?;
        self.emit(mov(R1, R0));
        self.emit(ldx(Size::DW, R0, FP, slot));
        self.stack_top += 8;
        self.jump(jmp_reg(fails, R0, R1, 0), target);
        Ok(())
    }

    /// r0 = (r0 cond [r1 | imm]) ? 1 : 0
    fn bool_of(&mut self, cond: Cond, reg: Option<Reg>, imm: i32) {
        self.emit(mov_imm(R2, 1));
        match reg {
            Some(r) => self.emit(jmp_reg(cond, R0, r, 1)),
            None => self.emit(jmp_imm(cond, R0, imm, 1)),
        }
        self.emit(mov_imm(R2, 0));
        self.emit(mov(R0, R2));
    }

    /// r0 = r0 op r1
    fn binary_op(&mut self, op: BinOp, signed: bool) -> Result<(), CodegenError> {
        let alu = match op {
            BinOp::Add => Some(Alu::Add),
            BinOp::Sub => Some(Alu::Sub),
            BinOp::Mul => Some(Alu::Mul),
            BinOp::BitAnd => Some(Alu::And),
            BinOp::BitOr => Some(Alu::Or),
            BinOp::BitXor => Some(Alu::Xor),
            BinOp::Shl => Some(Alu::Lsh),
            BinOp::Shr => Some(if signed { Alu::Arsh } else { Alu::Rsh }),
            _ => None,
        };
        if let Some(alu) = alu {
            self.emit(alu_reg(alu, R0, R1));
            return Ok(());
        }
        match op {
            BinOp::Div | BinOp::Mod => self.divide(op == BinOp::Mod, signed),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                self.bool_of(relation(op, signed), Some(R1), 0);
                Ok(())
            }
            _ => Err(CodegenError(format!("internal error: operator {op:?} reached binary_op"))),
        }
    }

    /// r0 = r0 / r1 or r0 % r1, C semantics; division by zero is a fault.
    fn divide(&mut self, modulo: bool, signed: bool) -> Result<(), CodegenError> {
        let nonzero = self.new_label();
        self.jump(jmp_imm(Cond::Ne, R1, 0, 0), nonzero);
        self.emit(mov_imm(R1, 0));
        self.raise_fault(layout::FAULT_DIVZERO)?;
        self.bind(nonzero);
        let op = if modulo { Alu::Mod } else { Alu::Div };
        if !signed {
            self.emit(alu_reg(op, R0, R1));
            return Ok(());
        }
        // BPF divides unsigned: divide magnitudes, then fix the sign (the
        // quotient is negative when the signs differ, the remainder takes the
        // dividend's sign).
        self.emit(mov(R3, R0));
        if modulo {
            self.emit(mov(R4, R0));
        } else {
            self.emit(mov(R4, R0));
            self.emit(alu_reg(Alu::Xor, R4, R1));
        }
        self.emit(jmp_imm(Cond::Sge, R0, 0, 1));
        self.emit(neg(R0));
        self.emit(jmp_imm(Cond::Sge, R1, 0, 1));
        self.emit(neg(R1));
        self.emit(alu_reg(op, R0, R1));
        self.emit(jmp_imm(Cond::Sge, R4, 0, 1));
        self.emit(neg(R0));
        Ok(())
    }

    fn logical(&mut self, op: BinOp, lhs: &TExpr, rhs: &TExpr) -> Result<(), CodegenError> {
        let end = self.new_label();
        match op {
            BinOp::LogAnd | BinOp::LogOr => {
                self.expr(lhs)?;
                self.bool_of(Cond::Ne, None, 0);
                let short = if op == BinOp::LogAnd { Cond::Eq } else { Cond::Ne };
                self.jump(jmp_imm(short, R0, 0, 0), end);
                self.expr(rhs)?;
                self.bool_of(Cond::Ne, None, 0);
            }
            _ => {
                let slot = self.alloc_slot(8)?;
                self.expr(lhs)?;
                self.bool_of(Cond::Ne, None, 0);
                self.emit(stx(Size::DW, FP, slot, R0));
                self.expr(rhs)?;
                self.bool_of(Cond::Ne, None, 0);
                self.emit(ldx(Size::DW, R1, FP, slot));
                self.emit(alu_reg(Alu::Xor, R0, R1));
                self.stack_top += 8;
            }
        }
        self.bind(end);
        Ok(())
    }

    /// r0 = strcmp(r1, r2) (of at most strsize bytes): negative, 0 or
    /// positive, as their first differing bytes compare unsigned.
    ///
    /// Laid out for the verifier, which explores a branch's fall-through
    /// first and keeps the jump's target for later: the way out of the loop
    /// falls through and the loop goes on by jumping, so that a compare
    /// leaves one pending branch at a time rather than two per byte (a
    /// clause of 13 compares of 256-byte strings held more than the
    /// verifier's 8192), and the result, whatever way it was reached, is a
    /// value the verifier knows nothing of, so the states after it merge.
    fn strcmp(&mut self) {
        let looptop = self.new_label();
        let same = self.new_label();
        let next = self.new_label();
        let out = self.new_label();
        self.emit(mov_imm(R4, 0));
        self.bind(looptop);
        self.emit(mov(R5, R1));
        self.emit(alu_reg(Alu::Add, R5, R4));
        self.emit(ldx(Size::B, R5, R5, 0));
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(ldx(Size::B, R0, R0, 0));
        self.jump(jmp_reg(Cond::Eq, R5, R0, 0), same);
        self.jump(ja(0), out);
        self.bind(same);
        self.jump(jmp_imm(Cond::Ne, R5, 0, 0), next);
        self.jump(ja(0), out);
        self.bind(next);
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.jump(jmp_imm(Cond::Lt, R4, self.strsize(), 0), looptop);
        // Differing bytes, or equal ones: at a NUL or the last of strsize.
        self.bind(out);
        self.emit(alu_reg(Alu::Sub, R5, R0));
        self.emit(mov(R0, R5));
        // The verifier must not know the result (layout: dt_state.opaque_zero).
        self.emit2(ld_map_value(R1, MapRef::State, layout::STATE_OPAQUE_ZERO as u32));
        self.emit(ldx(Size::DW, R1, R1, 0));
        self.emit(alu_reg(Alu::Add, R0, R1));
    }

    fn builtin(&mut self, b: Builtin) -> Result<(), CodegenError> {
        match b {
            Builtin::Arg(n) => self.emit(ldx(Size::DW, R0, R7, (layout::CTX_ARGS + 8 * n as usize) as i16)),
            Builtin::Pid => self.current_pid(),
            Builtin::Tid => {
                self.current(Current::PidTgid);
                self.emit(alu_imm(Alu::Lsh, R0, 32));
                self.emit(alu_imm(Alu::Rsh, R0, 32));
            }
            Builtin::Ppid => self.emit(ldx(Size::W, R0, R7, layout::CTX_PPID as i16)),
            Builtin::Uid => {
                self.current(Current::UidGid);
                self.emit(alu_imm(Alu::Lsh, R0, 32));
                self.emit(alu_imm(Alu::Rsh, R0, 32));
            }
            Builtin::Gid => {
                self.current(Current::UidGid);
                self.emit(alu_imm(Alu::Rsh, R0, 32));
            }
            Builtin::Execname => {
                let dst = self.scratch_slot()?;
                self.emit(mov(R1, R8));
                self.emit(alu_imm(Alu::Add, R1, dst));
                self.emit(mov_imm(R2, 16));
                if self.env.other_thread_probes {
                    // The probe context's comm when it names another thread.
                    let (own, end) = (self.new_label(), self.new_label());
                    self.emit(ldx(Size::DW, R3, R7, layout::CTX_TASK as i16));
                    self.jump(jmp_imm(Cond::Eq, R3, 0, 0), own);
                    self.emit(mov(R3, R7));
                    self.emit(alu_imm(Alu::Add, R3, layout::CTX_COMM as i32));
                    self.emit(call(Helper::ProbeReadKernel));
                    self.jump(ja(0), end);
                    self.bind(own);
                    self.emit(call(Helper::GetCurrentComm));
                    self.bind(end);
                } else {
                    self.emit(call(Helper::GetCurrentComm));
                }
                self.emit(mov(R0, R8));
                self.emit(alu_imm(Alu::Add, R0, dst));
            }
            Builtin::Timestamp => self.timestamp(),
            Builtin::Vtimestamp => self.vtimestamp()?,
            Builtin::Walltimestamp => {
                // The consumer stores the wall clock's offset from
                // CLOCK_MONOTONIC in the state map when tracing starts.
                self.timestamp();
                self.emit2(ld_map_value(R1, MapRef::State, layout::STATE_WALL_OFFSET as u32));
                self.emit(ldx(Size::DW, R1, R1, 0));
                self.emit(alu_reg(Alu::Add, R0, R1));
            }
            Builtin::Cpu => self.emit(call(Helper::GetSmpProcessorId)),
            Builtin::ProbeProv | Builtin::ProbeMod | Builtin::ProbeFunc | Builtin::ProbeName => {
                let field = match b {
                    Builtin::ProbeProv => 0,
                    Builtin::ProbeMod => 1,
                    Builtin::ProbeFunc => 2,
                    _ => 3,
                };
                let found = self.new_label();
                let end = self.new_label();
                self.probe_id_into(R1);
                self.emit(stx(Size::W, FP, STACK_KEY, R1));
                self.lookup_stack_key(MapRef::ProbeNames);
                self.jump(jmp_imm(Cond::Ne, R0, 0, 0), found);
                // Not reachable for an enabled probe; the empty string keeps the verifier happy.
                self.string_const(0);
                self.jump(ja(0), end);
                self.bind(found);
                self.emit(alu_imm(Alu::Add, R0, field * self.program.strsize as i32));
                self.bind(end);
            }
            Builtin::Errno => {
                self.emit(ldx(Size::W, R0, R7, layout::CTX_ERRNO as i16));
                self.normalize(&Type::INT);
            }
            Builtin::Id => self.probe_id_into(R0),
            Builtin::Curthread => self.current(Current::Task),
            Builtin::Curcpu => {
                // This CPU's entry of dt_cpuinfo, at its cpuinfo_t (NULL
                // faults where it is read, as any bad pointer).
                self.lookup_this_cpus_entry(MapRef::CpuInfo)?;
                let null = self.new_label();
                self.jump(jmp_imm(Cond::Eq, R0, 0, 0), null);
                self.emit(alu_imm(Alu::Add, R0, layout::CPU_DATA_INFO as i32));
                self.bind(null);
            }
            Builtin::Stackdepth | Builtin::Ustackdepth => {
                // The frames bpf_get_stack() copies, 8 bytes each (0 on error).
                self.used_scratch = true;
                self.emit(mov(R1, R6));
                self.emit(mov(R2, R8));
                self.emit(alu_imm(Alu::Add, R2, self.scratch.stack_buffer as i32));
                self.emit(mov_imm(R3, STACK_BUFFER_BYTES as i32));
                if b == Builtin::Ustackdepth {
                    self.emit(mov_imm(R4, BPF_F_USER_STACK));
                } else {
                    self.machinery_frames_into(R4);
                }
                self.emit(call(Helper::GetStack));
                self.emit(jmp_imm(Cond::Sge, R0, 0, 1));
                self.emit(mov_imm(R0, 0));
                self.emit(alu_imm(Alu::Rsh, R0, 3));
            }
            Builtin::Ipl => self.emit(mov_imm(R0, 0)),
            Builtin::Caller => self.emit(ldx(Size::DW, R0, R7, layout::CTX_CALLER as i16)),
            Builtin::Ucaller => self.emit(ldx(Size::DW, R0, R7, layout::CTX_UCALLER as i16)),
            Builtin::Epid => {
                let epid = self.clause.map_or(0, |c| self.program.shown_epid(c.epid, self.env.error_probe_id));
                self.emit(mov_imm(R0, epid as i32));
            }
        }
        Ok(())
    }

    /// Makes the address in r0 a plain number: an array is indexed by any
    /// value, and the verifier refuses unbounded arithmetic on a map
    /// pointer. Loads read through the number; stores check it and
    /// rebuild the pointer (`store_memory`).
    fn address_as_number(&mut self) {
        self.used_scratch = true;
        if self.with_scratch {
            self.forget(R0);
        }
    }

    fn global_offset(&self, index: usize) -> u32 {
        self.program.globals[index].offset as u32
    }

    fn load_var(&mut self, var: Var, ty: &Type) -> Result<(), CodegenError> {
        self.note_use(VarRef::Var(var), ty, false);
        // By-reference values (strings, structs) are the variable's address.
        let by_reference = ty.by_reference_size(self.program.strsize).is_some();
        match var {
            Var::Global(i) => {
                self.emit2(ld_map_value(R0, MapRef::Globals, self.global_offset(i)));
                if !by_reference {
                    self.emit(ldx(self.var_width(var), R0, R0, 0));
                    self.widen(var, ty);
                } else if matches!(ty, Type::Array(..)) {
                    self.address_as_number();
                }
            }
            Var::ThreadLocal(i) if self.env.task_storage => {
                self.task_storage(i, false);
                self.value_or_zero(ty);
            }
            Var::ThreadLocal(i) => {
                let key = self.thread_key();
                self.map_load(MapRef::ThreadLocal(i), key, ty);
            }
            Var::ClauseLocal(i) => {
                if by_reference {
                    self.emit(mov(R0, R8));
                    self.emit(alu_imm(Alu::Add, R0, self.clause_local_slots[i] as i32));
                } else {
                    self.emit(ldx(self.var_width(var), R0, FP, self.clause_local_slots[i]));
                    self.widen(var, ty);
                }
            }
        }
        Ok(())
    }

    fn variable(&self, var: Var) -> &'a Variable {
        match var {
            Var::Global(i) => &self.program.globals[i],
            Var::ThreadLocal(i) => &self.program.thread_locals[i],
            Var::ClauseLocal(i) => &self.program.clause_locals[i],
        }
    }

    /// The width of a scalar variable's storage (`Variable::storage`).
    fn var_width(&self, var: Var) -> Size {
        Size::of_bytes(self.variable(var).storage(self.program.strsize).0 as u8)
    }

    /// Sign-extends a signed value loaded from narrower storage.
    fn widen(&mut self, var: Var, ty: &Type) {
        if self.var_width(var) != Size::DW && matches!(ty, Type::Int { signed: true, .. }) {
            self.normalize(ty);
        }
    }

    /// Stores r0 into `var`; r0 keeps the stored value (for strings and
    /// structs: the address of the variable's copy).
    fn store_var(&mut self, var: Var, ty: &Type) -> Result<(), CodegenError> {
        self.note_use(VarRef::Var(var), ty, true);
        // Strings are copied up to their NUL, structs whole.
        let by_reference = match ty {
            Type::String => Some((Helper::ProbeReadKernelStr, self.strsize())),
            Type::Struct(r) => Some((Helper::ProbeReadKernel, r.size as i32)),
            _ => None,
        };
        // A scalar variable typed by its first assignment holds all 64 bits
        // of its value, as DTrace's do (dtrace-utils' arithmetic/tst.basics):
        // its type says how much is printed or recorded. A declared one
        // takes its type's size (arithmetic/tst.cast-add).
        let declared = self.variable(var).declared;
        if by_reference.is_none() && declared {
            self.normalize(ty);
        }
        match (var, by_reference) {
            (Var::Global(i), Some((helper, size))) => {
                let off = self.global_offset(i);
                self.emit2(ld_map_value(R1, MapRef::Globals, off));
                self.copy_from_r0(helper, R1, 0, size)?;
                self.emit2(ld_map_value(R0, MapRef::Globals, off));
            }
            (Var::Global(i), None) => {
                self.emit2(ld_map_value(R1, MapRef::Globals, self.global_offset(i)));
                self.emit(stx(self.var_width(var), R1, 0, R0));
            }
            (Var::ThreadLocal(i), by_reference) => {
                let value_size = crate::sema::check::var_bytes(ty, self.program.strsize);
                // The thread is the key: only the value counts
                // (dtrace-utils' tvar/tst.load_no_alloc at dynvarsize=12).
                if self.dynamic_store_never_fits(0, value_size, by_reference.is_some())? {
                    return Ok(());
                }
                if let (Type::Struct(_), Some((helper, size))) = (ty, by_reference) {
                    // The map update copies from the staging area.
                    self.used_scratch = true;
                    let staging = self.scratch.struct_staging as i32;
                    self.copy_from_r0(helper, R8, staging, size)?;
                    self.emit(mov(R0, R8));
                    self.emit(alu_imm(Alu::Add, R0, staging));
                }
                if self.env.task_storage {
                    return self.task_storage_store(i, ty);
                }
                // The value waits on the stack while the thread ID is fetched.
                let value = self.alloc_slot(8)?;
                self.emit(stx(Size::DW, FP, value, R0));
                let key = self.thread_key();
                self.emit(ldx(Size::DW, R0, FP, value));
                self.map_store(MapRef::ThreadLocal(i), key, ty)?;
                self.stack_top += 8;
            }
            (Var::ClauseLocal(i), Some((helper, size))) => {
                let at = self.clause_local_slots[i] as i32;
                self.copy_from_r0(helper, R8, at, size)?;
                self.emit(mov(R0, R8));
                self.emit(alu_imm(Alu::Add, R0, at));
            }
            (Var::ClauseLocal(i), None) => self.emit(stx(self.var_width(var), FP, self.clause_local_slots[i], R0)),
        }
        Ok(())
    }

    /// Whether not one element of a dynamic variable fits in dynvarsize:
    /// then a store of the value in r0 (kept) is a dynamic variable drop,
    /// unless it is a scalar 0, which DTrace stores as a deletion.
    fn dynamic_store_never_fits(
        &mut self,
        key_size: usize,
        value_size: usize,
        by_reference: bool,
    ) -> Result<bool, CodegenError> {
        if layout::dynvar_data_bytes(key_size, value_size) <= self.env.dynvarsize {
            return Ok(false);
        }
        let zero = self.new_label();
        if !by_reference {
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), zero);
        }
        let value = self.alloc_slot(8)?;
        self.emit(stx(Size::DW, FP, value, R0));
        self.count_in(MapRef::DynDrops, 0);
        self.emit(ldx(Size::DW, R0, FP, value));
        self.stack_top += 8;
        self.bind(zero);
        Ok(true)
    }

    /// Copies `size` bytes from the address in r0 to `base` + `offset`:
    /// strings need no fault check (their buffers are always readable),
    /// structs may come from a bad kernel address.
    fn copy_from_r0(&mut self, helper: Helper, base: Reg, offset: i32, size: i32) -> Result<(), CodegenError> {
        if helper == Helper::ProbeReadKernelStr {
            self.emit(mov(R3, R0));
            self.emit(mov(R1, base));
            self.emit(alu_imm(Alu::Add, R1, offset));
            self.emit(mov_imm(R2, size));
            self.emit(call(helper));
            Ok(())
        } else {
            self.read_faulting(helper, base, offset, size)
        }
    }
}

/// The jump condition for a comparison operator.
fn relation(op: BinOp, signed: bool) -> Cond {
    match (op, signed) {
        (BinOp::Eq, _) => Cond::Eq,
        (BinOp::Ne, _) => Cond::Ne,
        (BinOp::Lt, true) => Cond::Slt,
        (BinOp::Le, true) => Cond::Sle,
        (BinOp::Gt, true) => Cond::Sgt,
        (BinOp::Ge, true) => Cond::Sge,
        (BinOp::Lt, false) => Cond::Lt,
        (BinOp::Le, false) => Cond::Le,
        (BinOp::Gt, false) => Cond::Gt,
        _ => Cond::Ge,
    }
}

/// Whether an address expression points into D's own memory (a variable,
/// an associative array element, a string's bytes) rather than the kernel's.
fn in_d_memory(e: &TExpr) -> bool {
    match &e.kind {
        TKind::Offset(inner, _) => in_d_memory(inner),
        TKind::Var(_) | TKind::Element { .. } => true,
        _ => e.ty == Type::String,
    }
}

fn record_offset(offset: usize) -> Result<i32, CodegenError> {
    i32::try_from(offset).map_err(|_| CodegenError("a clause records too many bytes".into()))
}
