//! Code generation: BPF instruction encoding and the emitter that turns a
//! typed program into one BPF program per group of probes. It runs as the
//! last pass of `compile`, without privileges: maps are named by role
//! (`maps::MapRef`) and patched in by the runtime when it loads a program.

use std::collections::BTreeMap;

pub(crate) mod emit;
pub(crate) mod insn;
pub(crate) mod maps;

use crate::sema::ir::Program;
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
    /// Bytes of the per-CPU scratch map's value.
    pub scratch_size: usize,
    /// Bytes of each region of the key buffer map.
    pub key_buffer_size: usize,
}

/// What code generation needs to know besides the program.
pub(crate) struct Target {
    /// The ID of dtrace:::ERROR.
    pub error_probe_id: u32,
    /// Whether probe `id` fires for a thread other than the current one.
    pub fires_for_another_thread: Box<dyn Fn(u32) -> bool>,
    /// The specsize option.
    pub specsize: u64,
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
        other_thread_probes: clauses_of.keys().any(|id| (target.fires_for_another_thread)(*id)),
    };
    // ERROR clauses run inline in the programs that fault (see emit::generate).
    let error_clauses = clauses_of.get(&target.error_probe_id).cloned().unwrap_or_default();
    let mut programs = BTreeMap::new();
    for clauses in clauses_of.values() {
        if !programs.contains_key(clauses) {
            programs.insert(clauses.clone(), emit::generate(program, &env, clauses, &error_clauses)?);
        }
    }
    Ok(Generated { clauses_of, programs, scratch_size, key_buffer_size })
}

/// -S: a generated program as DTrace shows DIF, one instruction a line,
/// headed by the clauses (numbered as their EPIDs) it runs.
pub(crate) fn show_program(clauses: &[usize], insns: &[Insn]) -> String {
    let epids: Vec<String> = clauses.iter().map(|c| (c + 1).to_string()).collect();
    let mut text =
        format!("\nBPF program for clause{} {}:\n", if clauses.len() == 1 { "" } else { "s" }, epids.join(", "));
    for line in insn::disassemble(insns) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}
