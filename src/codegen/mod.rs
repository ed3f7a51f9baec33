//! Code generation: BPF instruction encoding and the emitter that turns a
//! typed program into one BPF program per group of probes. It runs as the
//! last pass of `compile`, without privileges: maps are named by role
//! (`maps::MapRef`) and patched in by the runtime when it loads a program.

use std::collections::{BTreeMap, BTreeSet};

pub(crate) mod emit;
pub(crate) mod insn;
pub(crate) mod maps;
pub(crate) mod splice;

use crate::sema::ir::{Program, Type};
use emit::{CodegenEnv, CodegenError, ScratchLayout};
use insn::Insn;

/// Strings of strsize bytes in the per-CPU scratch map: the results of
/// string subroutines one expression may hold at once.
pub(crate) const SCRATCH_SLOTS: usize = 8;

/// The kernel's limit on one per-CPU map value (PCPU_MIN_UNIT_SIZE).
pub(crate) const MAX_PERCPU_VALUE: usize = 32768;

/// The generated code of a script: one program per distinct list of
/// clauses enabled on some probe, and the sizes the runtime gives the maps
/// the programs use.
pub(crate) struct Generated {
    /// The clauses (indices in program order) enabled on each probe, by probe ID.
    pub clauses_of: BTreeMap<u32, Vec<usize>>,
    /// The program of each clause list, with symbolic map references.
    pub programs: BTreeMap<Vec<usize>, Vec<Insn>>,
    /// The variables each program refers to (-S).
    pub variables: BTreeMap<Vec<usize>, Vec<emit::VarUse>>,
    /// The clause lists too much for one program: the runtime generates
    /// them as chains of parts when it loads them.
    pub chained: BTreeSet<Vec<usize>>,
    /// For a clause list of one clause whose predicate can be decided
    /// before an entry program runs: that guard and the clause without it.
    pub guarded: BTreeMap<Vec<usize>, Guarded>,
    /// Bytes of the per-CPU scratch map's value.
    pub scratch_size: usize,
    /// Bytes of each region of the key buffer map.
    pub key_buffer_size: usize,
    /// Thread-local variables are in task-local storage maps, not hash maps.
    pub task_storage: bool,
    /// What the programs were generated for, to generate parts of a chain.
    env: emit::CodegenEnv,
    error_clauses: Vec<usize>,
    /// The clause lists enabled on one probe only, none of them retained
    /// (no probe found later shares the program): that probe's ID.
    sole_probe: BTreeMap<Vec<usize>, u32>,
}

impl Generated {
    /// The program of `clauses`, one part of a chain of programs that share
    /// a probe's clauses when one program of them all is too much for the
    /// verifier (the runtime splits a list the kernel refused).
    pub(crate) fn chain_part(
        &self,
        program: &Program,
        clauses: &[usize],
        chain: emit::ChainPart,
    ) -> Result<Vec<Insn>, PartError> {
        let probe = self.sole_probe.get(clauses).copied();
        let insns = emit::generate_part(program, &self.env, clauses, &self.error_clauses, true, chain, probe)
            .map_err(|e| if e.is_program_too_large() { PartError::TooLarge(e.0) } else { PartError::Other(e) })?
            .insns;
        within_limits(&insns).map_err(PartError::TooLarge)?;
        Ok(insns)
    }
}

/// Why a part of a chain was not generated.
pub(crate) enum PartError {
    /// Past a limit of one program (instructions, maps, jump range): a
    /// smaller part may fit.
    TooLarge(String),
    Other(CodegenError),
}

/// A clause split for joining with an entry program: `guard` goes in front
/// of the entry (it exits when the predicate is false), `body` after it.
pub(crate) struct Guarded {
    pub guard: Vec<Insn>,
    pub body: Vec<Insn>,
}

/// The kernel's limits on one program, checked here so that a script that
/// would exceed them gets a D-level error at compile time (and from `-e`),
/// not the verifier's log at enable time.
pub(crate) mod limits {
    /// MAX_USED_MAPS: distinct maps one program may refer to.
    pub const MAPS_PER_PROGRAM: usize = 64;
    /// BPF_COMPLEXITY_LIMIT_JMP_SEQ: branches the verifier may hold to
    /// explore later. It follows one path depth-first and holds the other
    /// side of each conditional jump on it whose outcome it cannot tell
    /// from the values it tracks, so the count depends on those values:
    /// exceeding it is found at load time (runtime::load_program), where it
    /// is reported with this number. About 2,700 aggregating clauses on
    /// one probe fit.
    pub const PENDING_BRANCHES: usize = 8192;
    /// BPF_COMPLEXITY_LIMIT_INSNS: the longest program a privileged loader
    /// may load.
    pub const INSTRUCTIONS: usize = 1_000_000;
}

/// What code generation needs to know besides the program.
pub(crate) struct Target<'a> {
    /// The ID of dtrace:::ERROR.
    pub error_probe_id: u32,
    /// Some enabled probe fires for a thread other than the current one.
    pub other_thread_probes: bool,
    /// Thread-local variables may live in task-local storage: the kernel
    /// lets every program type call bpf_task_storage_get, and no probe
    /// fires for another thread (whose task the generated code would have
    /// only as a number, which the helper does not take).
    pub task_storage: bool,
    /// chill() may wait in a bpf_loop() callback.
    pub bpf_loop: bool,
    /// The specsize option.
    pub specsize: u64,
    /// Records carry their firing's timestamp (-x oformat=json, temporal).
    pub record_timestamps: bool,
    /// The bufsize option.
    pub bufsize: u64,
    /// The aggsize option, when set.
    pub aggsize: Option<u64>,
    /// The dynvarsize option.
    pub dynvarsize: u64,
    /// A probe's name, for errors about the program of its clauses.
    pub probe_name: &'a dyn Fn(u32) -> String,
}

/// Generates every program the script needs, or the first reason one
/// cannot be generated.
pub(crate) fn generate(program: &Program, target: &Target) -> Result<Generated, CodegenError> {
    let mut clauses_of: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, clause) in program.clauses.iter().enumerate() {
        for &id in &clause.probes {
            clauses_of.entry(id).or_default().push(i);
        }
    }
    let scratch_size = ScratchLayout::new(program, SCRATCH_SLOTS).size;
    // The generated code's 16-bit offsets stay within the limit too.
    if scratch_size > MAX_PERCPU_VALUE {
        return Err(CodegenError(format!(
            "the program needs {scratch_size} bytes of per-CPU scratch memory (strings of strsize bytes, \
             alloca(), struct variables); the kernel allows {MAX_PERCPU_VALUE}: use a smaller strsize \
             or smaller variables"
        )));
    }
    for agg in &program.aggregations {
        let value_size = agg.map_value_words() * 8;
        if value_size > MAX_PERCPU_VALUE {
            return Err(CodegenError(format!(
                "aggregation @{} needs {value_size} bytes per key and CPU; the kernel allows {MAX_PERCPU_VALUE} \
                 (use fewer lquantize levels)",
                agg.name
            )));
        }
    }
    let indexed = [program.thread_locals.len(), program.aggregations.len(), program.assoc_arrays.len()];
    if indexed.iter().any(|n| *n > maps::MapRef::MAX_INDEX) {
        return Err(CodegenError("too many variables of one kind".into()));
    }
    let key_buffer_size = program
        .aggregations
        .iter()
        .map(|a| a.key_size())
        .chain(program.assoc_arrays.iter().map(|a| a.key_size()))
        .max()
        .unwrap_or(8);
    let env = CodegenEnv {
        scratch_slots: SCRATCH_SLOTS,
        key_buffer_size,
        specsize: target.specsize,
        error_probe_id: target.error_probe_id,
        other_thread_probes: target.other_thread_probes,
        task_storage: target.task_storage && !target.other_thread_probes,
        bpf_loop: target.bpf_loop,
        record_timestamps: target.record_timestamps,
        bufsize: target.bufsize,
        aggsize: target.aggsize,
        dynvarsize: target.dynvarsize,
    };
    // ERROR clauses run inline in the programs that fault (see emit::generate).
    let error_clauses = clauses_of.get(&target.error_probe_id).cloned().unwrap_or_default();
    let mut probes_of: BTreeMap<&Vec<usize>, Vec<u32>> = BTreeMap::new();
    for (&probe, clauses) in &clauses_of {
        probes_of.entry(clauses).or_default().push(probe);
    }
    let sole_probe: BTreeMap<Vec<usize>, u32> = probes_of
        .iter()
        .filter(|(clauses, probes)| {
            probes.len() == 1 && clauses.iter().all(|&c| program.clauses[c].retained.is_empty())
        })
        .map(|(clauses, probes)| ((*clauses).clone(), probes[0]))
        .collect();
    let mut programs = BTreeMap::new();
    let mut variables = BTreeMap::new();
    let mut guarded = BTreeMap::new();
    let mut chained = BTreeSet::new();
    for (&probe, clauses) in &clauses_of {
        if !programs.contains_key(clauses) && !chained.contains(clauses) {
            let sole = sole_probe.get(clauses).copied();
            let fits = match emit::generate(program, &env, clauses, &error_clauses, true, sole) {
                Ok(code) => within_limits(&code.insns).map(|()| code),
                Err(e) if e.is_program_too_large() => Err(e.0),
                Err(e) => return Err(e),
            };
            let code = match fits {
                Ok(code) => code,
                // More clauses or statements than one program holds run as
                // a chain of parts, which the runtime generates as it splits.
                Err(_) if clauses.len() > 1 || program.clauses[clauses[0]].body.len() > 1 => {
                    chained.insert(clauses.clone());
                    continue;
                }
                Err(why) => {
                    return Err(CodegenError(format!(
                        "{} {why}",
                        clauses_enabled_on(clauses.len(), &(target.probe_name)(probe))
                    )))
                }
            };
            programs.insert(clauses.clone(), code.insns);
            variables.insert(clauses.clone(), code.variables);
            if let [only] = clauses.as_slice() {
                if let Some(guard) = emit::generate_guard(program, &env, &program.clauses[*only]) {
                    let body = emit::generate(program, &env, clauses, &error_clauses, false, sole)?.insns;
                    guarded.insert(clauses.clone(), Guarded { guard, body });
                }
            }
        }
    }
    let task_storage = env.task_storage;
    Ok(Generated {
        clauses_of,
        programs,
        variables,
        chained,
        guarded,
        scratch_size,
        key_buffer_size,
        task_storage,
        env,
        error_clauses,
        sole_probe,
    })
}

/// "the N clauses enabled on P": the subject of errors about the one
/// program of a probe's clauses.
pub(crate) fn clauses_enabled_on(count: usize, probe: &str) -> String {
    format!("the {count} clause{} enabled on {probe}", if count == 1 { "" } else { "s" })
}

/// Whether the kernel will take a program of these instructions as far as
/// its size and shape go; if not, what exceeds which limit.
fn within_limits(insns: &[Insn]) -> Result<(), String> {
    let maps = maps::maps_used(insns).len();
    if maps > limits::MAPS_PER_PROGRAM {
        return Err(format!(
            "use {maps} maps (aggregations, associative arrays, thread-local variables, stacks and dtrace's own); \
             the kernel allows {} in one program: spread them over fewer clauses of this probe",
            limits::MAPS_PER_PROGRAM
        ));
    }
    if insns.len() > limits::INSTRUCTIONS {
        return Err(format!(
            "make a program of {} instructions; the kernel allows {}",
            insns.len(),
            limits::INSTRUCTIONS
        ));
    }
    Ok(())
}

/// -S of a clause list too much for one program: its parts are generated
/// only as the runtime splits it.
pub(crate) fn show_chained(clauses: &[usize]) -> String {
    let epids: Vec<String> = clauses.iter().map(|c| (c + 1).to_string()).collect();
    format!("\nBPF programs for clauses {}: a chain of parts, generated when loaded\n", epids.join(", "))
}

/// -S: a generated program as DTrace shows DIF, one instruction a line,
/// headed by the clauses (numbered as their EPIDs) it runs, followed by
/// the table of the variables it refers to.
pub(crate) fn show_program(clauses: &[usize], insns: &[Insn], variables: &[emit::VarUse], program: &Program) -> String {
    // Headed as dtrace-utils heads a clause's listing (`Disassembly of
    // clause :::BEGIN`); a program that runs several clauses names each.
    let descs: Vec<String> = clauses
        .iter()
        .map(|&c| {
            let desc = program.clauses.get(c).map_or("", |clause| clause.desc.as_str());
            if clauses.len() == 1 { desc.to_string() } else { format!("{} ({desc})", c + 1) }
        })
        .collect();
    let mut text = match clauses.len() {
        1 => format!("\nDisassembly of clause {}\n", descs[0]),
        _ => format!("\nDisassembly of clauses {}\n", descs.join(", ")),
    };
    for line in insn::disassemble(insns) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(&variable_table(variables, program));
    text
}

/// DTrace's DIF variable table (dtrace-utils' -S): each variable's name,
/// ID, offset in its storage (none for built-in variables and associative
/// arrays, whose elements are map entries), kind, scope, the instructions
/// that refer to it, whether read (r) or written (w), and type.
fn variable_table(variables: &[emit::VarUse], program: &Program) -> String {
    use crate::sema::ir::Var;
    use emit::VarRef;
    if variables.is_empty() {
        return String::new();
    }
    const USER_BASE: usize = 0x500;
    let locals = program.clause_local_layout();
    let mut text = format!(
        "\n{:<16} {:<4} {:<6} {:<3} {:<3} {:<11} {:<4} TYPE\n",
        "NAME", "ID", "OFFSET", "KND", "SCP", "RANGE", "FLAG"
    );
    for u in variables {
        let (name, id, offset, kind, scope) = match u.var {
            VarRef::Var(Var::Global(i)) => {
                let v = &program.globals[i];
                (v.name.clone(), USER_BASE + i, Some(v.offset), "scl", "glb")
            }
            // Each thread's value is a map entry of its own.
            VarRef::Var(Var::ThreadLocal(i)) => {
                (program.thread_locals[i].name.clone(), USER_BASE + i, Some(0), "scl", "tls")
            }
            VarRef::Var(Var::ClauseLocal(i)) => {
                (program.clause_locals[i].name.clone(), USER_BASE + i, Some(locals.offsets[i]), "scl", "loc")
            }
            VarRef::Array(i) => {
                let a = &program.assoc_arrays[i];
                let (before, scope) =
                    if a.thread_local { (program.thread_locals.len(), "tls") } else { (program.globals.len(), "glb") };
                (a.name.clone(), USER_BASE + before + i, None, "arr", scope)
            }
            VarRef::Builtin(b) => (b.name(), b.dif_id() as usize, None, "scl", "glb"),
        };
        let flags = match (u.read, u.written) {
            (true, true) => "r/w",
            (true, false) => "r",
            _ => "w",
        };
        text.push_str(&format!(
            "{name:<16} {id:<4x} {:<6} {kind:<3} {scope:<3} {:<11} {flags:<4} {}\n",
            offset.map(|o| o.to_string()).unwrap_or_default(),
            format!("[{}-{}]", u.first, u.last),
            dif_type(&u.ty, program.strsize)
        ));
    }
    text
}

/// A variable's type as DTrace's DIF type descriptions print it.
fn dif_type(ty: &Type, strsize: usize) -> String {
    match ty {
        Type::String => format!("string (unknown) by ref (size {strsize})"),
        Type::Int { size, .. } => format!("D type (integer) (size {size})"),
        Type::Symbol(_) | Type::Stack => "D type (integer) (size 8)".into(),
        Type::Pointer(_) => "D type (pointer) (size 8)".into(),
        Type::Struct(r) => format!("D type ({}) by ref (size {})", if r.union { "union" } else { "struct" }, r.size),
        Type::Array(..) => format!("D type (array) by ref (size {})", ty.fixed_size().unwrap_or(0)),
        Type::Void => "D type (unknown) (size 0)".into(),
    }
}

/// Unit tests of the code generator: instruction sequences of
/// representative clauses, checked without a kernel (no verifier).
#[cfg(test)]
mod tests {
    use super::insn::{Helper, Insn};
    use super::maps::MapRef;
    use super::Generated;
    use crate::defs::layout;

    fn generated(src: &str) -> Generated {
        crate::compile::compile_for_test(src).unwrap_or_else(|e| panic!("{src}: {e}")).generated
    }

    /// The one program of a script whose clauses all run on the same probes.
    fn program(src: &str) -> Vec<Insn> {
        let g = generated(src);
        assert_eq!(g.programs.len(), 1, "{src}");
        g.programs.into_values().next().unwrap()
    }

    const JMP: u8 = 0x05;
    const JMP32: u8 = 0x06;
    const CALL: u8 = 0x80;
    const EXIT: u8 = 0x90;

    /// The helpers a program calls, in order.
    fn calls(insns: &[Insn]) -> Vec<i32> {
        insns.iter().filter(|i| i.code == JMP | CALL).map(|i| i.imm).collect()
    }

    /// Indices of the instructions that are the second half of an ld_imm64.
    fn second_halves(insns: &[Insn]) -> Vec<usize> {
        let mut halves = Vec::new();
        let mut pc = 0;
        while pc < insns.len() {
            if insns[pc].is_ld_imm64() {
                halves.push(pc + 1);
                pc += 2;
            } else {
                pc += 1;
            }
        }
        halves
    }

    /// What the verifier checks first of any program: it ends in exit,
    /// every ld_imm64 is whole, every jump lands on an instruction inside
    /// the program and not inside an ld_imm64.
    fn assert_well_formed(src: &str, insns: &[Insn]) {
        assert_eq!(insns.last().map(|i| i.code), Some(JMP | EXIT), "{src}: does not end in exit");
        let halves = second_halves(insns);
        assert!(halves.iter().all(|&h| h < insns.len()), "{src}: a cut ld_imm64");
        for (pc, i) in insns.iter().enumerate() {
            let class = i.code & 0x07;
            let op = i.code & 0xf0;
            if halves.contains(&pc) || !(class == JMP || class == JMP32) || op == CALL || op == EXIT {
                continue;
            }
            let target = pc as i64 + 1 + i64::from(i.off);
            assert!((0..insns.len() as i64).contains(&target), "{src}: jump at {pc} leaves the program");
            assert!(!halves.contains(&(target as usize)), "{src}: jump at {pc} lands inside an ld_imm64");
        }
    }

    /// Whether the program loads the address of `map`'s value at `offset`.
    fn loads_value_of(insns: &[Insn], map: MapRef, offset: usize) -> bool {
        insns.windows(2).any(|w| w[0].loads_map() && w[0].imm == map.symbol() && w[1].imm == offset as i32)
    }

    #[test]
    fn codegen_every_representative_clause_is_well_formed() {
        let scripts = [
            "BEGIN { trace(1); }",
            "syscall::read:entry /pid == 1234/ { @[execname] = count(); }",
            "syscall::read:entry { self->ts = timestamp; } syscall::read:return /self->ts/ { @ = quantize(timestamp - self->ts); self->ts = 0; }",
            r#"syscall::openat:entry { printf("%s %d %s\n", execname, pid, copyinstr(arg1)); }"#,
            "syscall::write:entry { @bytes[probefunc] = sum(arg2); @avg = avg(arg2); @l = lquantize(arg2, 0, 100, 10); }",
            r#"BEGIN { x = strjoin("a", "b"); if (x == "ab") { trace(strlen(x)); } else { trace(0); } }"#,
            "BEGIN { s = speculation(); speculate(s); trace(1); } END { commit(1); }",
            "BEGIN { a[1, \"x\"] = 2; trace(a[1, \"x\"]); } ERROR { trace(arg4); }",
            "BEGIN { trace(*(int *)0); }",
            "profile-97 { @[stack()] = count(); }",
        ];
        for src in scripts {
            for insns in generated(src).programs.values() {
                assert_well_formed(src, insns);
            }
        }
    }

    #[test]
    fn codegen_a_predicate_on_the_current_thread_is_decided_by_a_guard() {
        use super::insn::R7;
        let guarded = |src: &str| {
            let g = generated(src);
            g.guarded.into_iter().next().map(|(clauses, guarded)| (guarded, g.programs[&clauses].clone()))
        };
        for src in [
            "syscall::getppid:entry /pid == 0/ { @ = count(); }",
            r#"syscall::read:entry /execname == "dd" && (tid != 1 || cpu > 2)/ { @ = count(); }"#,
            "BEGIN { x = 1; } syscall::read:entry /uid == x/ { trace(arg0); }",
        ] {
            let (g, whole) = guarded(src).unwrap_or_else(|| panic!("{src}: no guard"));
            // It ends by going on to the entry, past its own exit.
            let last_exit = g.guard.iter().rposition(|i| i.code == JMP | EXIT).unwrap();
            assert_eq!(last_exit, g.guard.len() - 1, "{src}");
            let mut with_entry = g.guard.clone();
            with_entry.extend(program("BEGIN { exit(0); }"));
            assert_well_formed(src, &with_entry);
            assert!(!g.guard.iter().any(|i| i.regs & 0x0f == R7.0 || i.regs >> 4 == R7.0), "{src}: reads the context");
            assert_well_formed(src, &g.body);
            // The body does not decide the predicate again.
            assert!(g.body.len() < whole.len(), "{src}");
        }
        for src in [
            // The probe context, the clock kept per firing, a fault, state.
            "syscall::read:entry /arg0 == 1/ { @ = count(); }",
            "syscall::read:entry /timestamp > 5/ { @ = count(); }",
            "syscall::read:entry /100 / (pid - pid) == 1/ { @ = count(); }",
            "self int ts; syscall::read:entry /self->ts/ { self->ts = 0; }",
            "syscall::read:entry /curthread->pid == 1/ { @ = count(); }",
            "syscall::read:entry { @ = count(); }",
            // Two clauses: each decides its own.
            "syscall::read:entry /pid == 1/ { @ = count(); } syscall::read:entry /pid == 2/ { @ = count(); }",
            // sched:::on-cpu fires for the thread switched to, not the current one.
            "sched:::on-cpu /pid == 1/ { @ = count(); }",
        ] {
            assert!(guarded(src).is_none(), "{src}: guarded");
        }
    }

    #[test]
    fn codegen_probes_with_the_same_clauses_share_one_program() {
        let g = generated("syscall::read:entry, syscall::write:entry { @ = count(); }");
        assert_eq!(g.clauses_of.len(), 2);
        assert_eq!(g.programs.len(), 1);
        // BEGIN runs clauses 1 and 2, END only clause 2: two programs.
        let g = generated("BEGIN { trace(1); } BEGIN, END { trace(2); }");
        let lists: Vec<&Vec<usize>> = g.programs.keys().collect();
        assert_eq!(lists, [&vec![0, 1], &vec![1]]);
    }

    #[test]
    fn codegen_a_predicate_and_an_aggregation_send_nothing_to_user_space() {
        let insns = program("syscall::getppid:entry /pid == 1234/ { @[execname] = count(); }");
        let helpers = calls(&insns);
        assert!(helpers.contains(&(Helper::GetCurrentPidTgid as i32)));
        assert!(!helpers.contains(&(Helper::RingbufReserve as i32)), "an aggregation must stay in the kernel");
        assert!(insns.iter().any(|i| i.loads_map() && i.imm == MapRef::Aggregation(0).symbol()));
        // The predicate's comparison comes before the aggregation's map.
        let compare = insns.iter().position(|i| i.imm == 1234).expect("the predicate's constant");
        let lookup = insns.iter().position(|i| i.loads_map() && i.imm == MapRef::Aggregation(0).symbol()).unwrap();
        assert!(compare < lookup);
    }

    #[test]
    fn codegen_a_comparison_predicate_is_one_jump_on_its_operands() {
        use super::insn::{alu_imm, jmp_imm, Alu, Cond, R0};
        // `pid == 0`: the helper, the shift that makes it the pid, and a
        // jump past the clause when it differs; no 0 or 1 is made.
        let insns = program("syscall::getppid:entry /pid == 0/ { @c = count(); }");
        let call = insns.iter().position(|i| i.code == JMP | CALL && i.imm == Helper::GetCurrentPidTgid as i32);
        let call = call.expect("the pid helper");
        assert_eq!(insns[call + 1], alu_imm(Alu::Rsh, R0, 32));
        let jump = insns[call + 2];
        assert_eq!(jump, jmp_imm(Cond::Ne, R0, 0, jump.off), "{:?}", &insns[call..]);
        // It skips the clause: its target is the program's final return.
        assert_eq!(call + 2 + 1 + jump.off as usize, insns.len() - 2);
        // Nothing of the probe context is read: it is not even looked up.
        assert!(!insns.iter().any(|i| i.loads_map() && i.imm == MapRef::Ctx.symbol()));
        let insns = program("syscall::getppid:entry /arg0 == 0/ { @c = count(); }");
        assert!(insns.iter().any(|i| i.loads_map() && i.imm == MapRef::Ctx.symbol()));

        // Two computed operands compare in registers, the condition negated.
        let insns = program("syscall::getppid:entry /pid < tid/ { @c = count(); }");
        // pid_t is signed: `if r0 s>= r1` skips the clause.
        let skip = super::insn::jmp_reg(Cond::Sge, R0, super::insn::R1, 0);
        assert!(insns.iter().any(|i| Insn { off: 0, ..*i } == skip), "{insns:?}");
    }

    #[test]
    fn codegen_printf_writes_a_ring_buffer_record() {
        let insns = program(r#"syscall::getppid:entry { printf("%d\n", pid); }"#);
        let helpers = calls(&insns);
        let reserve = helpers.iter().position(|h| *h == Helper::RingbufReserve as i32).expect("reserve");
        let submit = helpers.iter().position(|h| *h == Helper::RingbufSubmit as i32).expect("submit");
        assert!(reserve < submit);
        assert!(insns.iter().any(|i| i.loads_map() && i.imm == MapRef::Events.symbol()));
    }

    /// A program that runs for one probe writes its ID as a constant and,
    /// reading nothing else of the probe context, does not look it up; the
    /// action outside any `if` is marked present with the header, not by
    /// a read-modify-write after it. Programs shared by several probes
    /// read the ID from the context.
    #[test]
    fn codegen_a_program_for_one_probe_names_it_without_the_context() {
        use super::insn::{alu_reg, st_imm, Alu, Size, R1, R2, R9};
        let g = generated(r#"syscall::getppid:entry { printf("%d\n", pid); }"#);
        let (clauses, insns) = g.programs.iter().next().expect("a program");
        let probe = *g.clauses_of.iter().find(|(_, c)| *c == clauses).expect("its probe").0;
        assert!(insns.contains(&st_imm(Size::W, R9, layout::HDR_PROBE_ID as i16, probe as i32)));
        assert!(!insns.iter().any(|i| i.loads_map() && i.imm == MapRef::Ctx.symbol()));
        assert!(!insns.contains(&alu_reg(Alu::Or, R1, R2)));
        let insns = program(r#"syscall::getppid:entry, syscall::getpid:entry { printf("%d\n", pid); }"#);
        assert!(insns.iter().any(|i| i.loads_map() && i.imm == MapRef::Ctx.symbol()));
    }

    #[test]
    fn codegen_exit_sets_the_draining_flag() {
        let insns = program("BEGIN { exit(3); }");
        assert!(loads_value_of(&insns, MapRef::State, layout::STATE_DRAINING));
    }

    #[test]
    fn codegen_walltimestamp_adds_the_clock_offset_from_the_state_map() {
        let insns = program("BEGIN { trace(walltimestamp); }");
        assert!(calls(&insns).contains(&(Helper::KtimeGetNs as i32)));
        assert!(loads_value_of(&insns, MapRef::State, layout::STATE_WALL_OFFSET));
    }

    #[test]
    fn codegen_more_maps_than_a_program_may_use_are_left_to_a_chain_or_refused() {
        let clauses = |n: usize| -> String {
            (0..n).map(|i| format!("syscall::getppid:entry {{ @a{i} = sum(arg0); }}\n")).collect()
        };
        // With the context, state, drops and zero-value maps, 60 fit.
        let fits = crate::compile::compile_for_test(&clauses(60)).expect("compiles");
        assert_eq!(fits.generated.programs.len(), 1);
        // 70 clauses are generated as parts of a chain when loaded.
        let chained = crate::compile::compile_for_test(&clauses(70)).expect("compiles");
        assert!(chained.generated.programs.is_empty());
        assert_eq!(chained.generated.chained.len(), 1, "-S names the chained list");
        // One statement that names too many maps cannot be split.
        let keys: Vec<String> = (0..70).map(|i| format!("a{i}[1]")).collect();
        let one = format!("syscall::getppid:entry {{ printf(\"{}\", {}); }}\n", "%d".repeat(70), keys.join(", "));
        let e = crate::compile::compile_for_test(&one).err().expect("an error");
        assert!(e.contains("the 1 clause enabled on syscall:vmlinux:getppid:entry use") && e.contains("allows 64"), "{e}");
    }

    /// The programs of `src` compiled for a kernel with task-local storage.
    fn with_task_storage(src: &str) -> Generated {
        crate::compile::compile_for_test_with(src, || true).unwrap_or_else(|e| panic!("{src}: {e}")).generated
    }

    #[test]
    fn codegen_thread_locals_in_task_storage_take_no_thread_id_and_no_hash() {
        let src = "syscall::getppid:entry { self->ts = timestamp; } \
                   syscall::getppid:return /self->ts/ { @ = quantize(timestamp - self->ts); self->ts = 0; }";
        let g = with_task_storage(src);
        assert!(g.task_storage);
        for insns in g.programs.values() {
            assert_well_formed(src, insns);
            let helpers = calls(insns);
            assert!(helpers.contains(&(Helper::TaskStorageGet as i32)), "{helpers:?}");
            assert!(helpers.contains(&(Helper::GetCurrentTaskBtf as i32)));
            // Neither the thread ID as a key nor a hash map operation.
            for h in [Helper::GetCurrentPidTgid, Helper::MapUpdateElem, Helper::MapDeleteElem] {
                assert!(!helpers.contains(&(h as i32)), "{h:?} in {helpers:?}");
            }
        }
        // The return clause's `self->ts = 0` creates nothing: only the
        // entry's store asks the kernel to allocate (flag 1 in r4).
        let creates = |insns: &[Insn]| {
            insns.windows(2).filter(|w| w[0] == super::insn::mov_imm(super::insn::R4, 1) && w[1].imm == 156).count()
        };
        let counts: Vec<usize> = g.programs.values().map(|p| creates(p)).collect();
        assert_eq!(counts.iter().sum::<usize>(), 1, "{counts:?}");
        // Without the kernel's support: hash maps keyed by thread ID.
        let g = generated(src);
        assert!(!g.task_storage);
        assert!(g.programs.values().all(|p| !calls(p).contains(&(Helper::TaskStorageGet as i32))));
    }

    #[test]
    fn codegen_a_thread_local_looked_up_again_in_a_program_reuses_its_address() {
        use super::insn::{jmp_imm, ldx, stx, Cond, Size, FP, R0};
        let src = "syscall::getppid:entry { self->ts = timestamp; } \
                   syscall::getppid:return /self->ts/ { @ = quantize(timestamp - self->ts); self->ts = 0; }";
        let g = with_task_storage(src);
        let lookups = |insns: &[Insn]| -> Vec<usize> {
            (0..insns.len())
                .filter(|&pc| insns[pc].imm == Helper::TaskStorageGet as i32 && insns[pc].code == 0x85)
                .collect()
        };
        let mut cached_programs = 0;
        for insns in g.programs.values() {
            assert_well_formed(src, insns);
            let calls = lookups(insns);
            if calls.len() < 2 {
                continue;
            }
            cached_programs += 1;
            // The predicate's, the body's read and the store of 0 (and the
            // entry's two ways to store): each keeps the address in one slot and is skipped once it is there.
            let slot = insns[calls[0] + 1].off;
            for &call in &calls {
                assert_eq!(insns[call + 1], stx(Size::DW, FP, slot, R0), "at {call}");
                let skip =
                    (0..call).rev().find(|&pc| insns[pc] == ldx(Size::DW, R0, FP, slot)).expect("a load of the slot");
                let over = (call + 1 - (skip + 1)) as i16;
                assert_eq!(insns[skip + 1], jmp_imm(Cond::Ne, R0, 0, over), "the lookup at {call} is not skipped");
            }
        }
        assert_eq!(cached_programs, 2);
        // Each kept address is two states to the verifier at every use:
        // of three variables read again, two are kept.
        let src = "BEGIN { self->a = 1; self->b = 2; self->c = 3; trace(self->a + self->b + self->c); }";
        let g = with_task_storage(src);
        let insns = g.programs.values().next().expect("a program");
        let slots: std::collections::BTreeSet<i16> = lookups(insns)
            .iter()
            .filter(|&&call| {
                insns[call + 1].code == stx(Size::DW, FP, 0, R0).code && insns[call + 1].regs & 0x0f == FP.0
            })
            .map(|&call| insns[call + 1].off)
            .collect();
        assert_eq!(slots.len(), 2, "{slots:?}");
    }

    #[test]
    fn codegen_thread_locals_in_task_storage_not_with_probes_for_another_thread() {
        // sched:::on-cpu fires for the thread taking the CPU: its task is a
        // number in the probe context, which bpf_task_storage_get refuses.
        let g = with_task_storage("sched:::on-cpu { self->t = timestamp; }");
        assert!(!g.task_storage);
        // A script without thread-locals does not ask the kernel.
        let g = crate::compile::compile_for_test_with("BEGIN { x = 1; }", || panic!("asked")).unwrap().generated;
        assert!(!g.task_storage);
    }

    /// d_path's walk is unrolled (no jump goes back, so the verifier needs
    /// no loop bound) and reads kernel memory only through the helper.
    #[test]
    fn codegen_d_path_walk_is_unrolled_with_checked_reads() {
        let src = "syscall::read:entry { trace(fds[arg0].fi_pathname); trace(fds[arg0].fi_mount); }";
        let insns = program(src);
        assert_well_formed(src, &insns);
        let halves = second_halves(&insns);
        for (pc, i) in insns.iter().enumerate() {
            let class = i.code & 0x07;
            if !halves.contains(&pc) && (class == JMP || class == JMP32) && i.code & 0xf0 != CALL {
                assert!(i.off >= 0, "{src}: a backward jump at {pc}");
            }
        }
        let reads = calls(&insns).iter().filter(|&&h| h == Helper::ProbeReadKernel as i32).count();
        // Per component: parent, name length, name pointer, name bytes.
        assert!(reads > 4 * super::emit::subr::D_PATH_DEPTH, "{reads} reads");
    }

    #[test]
    fn codegen_errors_are_compile_errors() {
        let mut nested = "probefunc".to_string();
        for _ in 0..60 {
            nested = format!("strjoin(probefunc, {nested})");
        }
        // The compiler recurses per level: on the 8 MB of dtrace's main
        // thread, not the 2 MB of a test thread (debug frames are large).
        let e = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || crate::compile::compile_for_test(&format!("BEGIN {{ trace({nested}); }}")).err())
            .expect("thread")
            .join()
            .expect("no panic")
            .expect("an error");
        assert!(e.ends_with("expression is too complex: out of BPF stack"), "{e}");
        assert!(e.starts_with("invalid probe specifier"), "{e}");
    }
}
