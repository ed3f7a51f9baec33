//! Inlining a clause program into the entry program that would tail-call
//! it: the entry's `bpf_tail_call` becomes a jump to the clause code,
//! appended after the entry's own. A firing then runs one program, without
//! the tail call's indirect jump and its program-array lookup.
//!
//! Both programs begin the same way for the code that follows the tail
//! call: r1 is the context (the tail call's first argument is the context,
//! and a generated program starts from r1 = context), and nothing else is
//! carried over; the clause code sets up its own registers and stack slots,
//! and the entry's stack is dead once it tail-calls. So the two share one
//! stack frame and the limit of 512 bytes is the larger of the two frames.

use super::insn::{jmp_imm, Cond, Insn, PSEUDO_FUNC, R1};

/// BPF_JMP | BPF_CALL.
const CALL: u8 = 0x85;
/// `src_reg` of a call to a BPF function of the same program.
const PSEUDO_CALL: u8 = 1;
/// bpf_tail_call's helper number (include/uapi/linux/bpf.h).
const TAIL_CALL: i32 = 12;

/// `entry` with `clause` in place of its tail call, or None when it cannot
/// be inlined: the entry has no tail call or more than one (each could
/// lead to other code), or either program calls BPF functions of its own
/// (the kernel takes a program's functions to be the instructions after the
/// main one, so nothing may be appended after them).
pub(crate) fn inline_at_tail_call(entry: &[Insn], clause: &[Insn]) -> Option<Vec<Insn>> {
    let calls_functions =
        |insns: &[Insn]| insns.iter().any(|i| i.code == CALL && i.regs >> 4 == PSEUDO_CALL || loads_function(i));
    if calls_functions(entry) || calls_functions(clause) {
        return None;
    }
    let mut tail_calls = entry.iter().enumerate().filter(|(_, i)| is_tail_call(i)).map(|(at, _)| at);
    let at = tail_calls.next()?;
    if tail_calls.next().is_some() {
        return None;
    }
    let offset = i16::try_from(entry.len() - at - 1).ok()?;
    let mut program = Vec::with_capacity(entry.len() + clause.len());
    program.extend_from_slice(entry);
    // A conditional jump that is always taken (the context is never NULL)
    // rather than `ja`: the entry's code after the tail call (its return
    // when the slot is empty) stays reachable, which the kernel requires of
    // every instruction.
    program[at] = jmp_imm(Cond::Ne, R1, 0, offset);
    program.extend_from_slice(clause);
    Some(program)
}

/// The program array (its descriptor) and the slot of `entry`'s one tail
/// call, when both are constants set on the only way to the call: a map
/// load into r2 and a move of an immediate into r3, with no jump landing
/// between them and the call. A per-probe entry program fires one slot
/// that way; one that computes its slot gives None.
pub(crate) fn tail_call_target(entry: &[Insn]) -> Option<(i32, u32)> {
    let mut tail_calls = entry.iter().enumerate().filter(|(_, i)| is_tail_call(i)).map(|(at, _)| at);
    let at = tail_calls.next()?;
    if tail_calls.next().is_some() {
        return None;
    }
    let starts = instruction_starts(entry);
    let (map_at, map) = last_write(entry, &starts, at, 2)?;
    let (slot_at, slot) = last_write(entry, &starts, at, 3)?;
    let first = map_at.min(slot_at);
    if jump_targets(entry, &starts).any(|t| t > first && t <= at) {
        return None;
    }
    let map = map.is_ld_imm64().then_some(map).filter(|m| m.regs >> 4 == PSEUDO_MAP_FD)?;
    // `rX = imm`, 64- or 32-bit: a slot is never negative.
    let slot = matches!(slot.code, MOV64_IMM | MOV32_IMM).then_some(slot.imm)?;
    Some((map.imm, u32::try_from(slot).ok()?))
}

/// BPF_ALU64 | BPF_MOV | BPF_K and BPF_ALU | BPF_MOV | BPF_K.
const MOV64_IMM: u8 = 0xb7;
const MOV32_IMM: u8 = 0xb4;
/// `src_reg` of an `ld_imm64` whose immediate is a map's descriptor.
const PSEUDO_MAP_FD: u8 = 1;

/// Which slots begin an instruction (the second half of a 64-bit
/// immediate load does not).
fn instruction_starts(insns: &[Insn]) -> Vec<bool> {
    let mut starts = vec![false; insns.len()];
    let mut pc = 0;
    while pc < insns.len() {
        starts[pc] = true;
        pc += if insns[pc].is_ld_imm64() { 2 } else { 1 };
    }
    starts
}

/// Where every jump of the program lands.
fn jump_targets<'a>(insns: &'a [Insn], starts: &'a [bool]) -> impl Iterator<Item = usize> + 'a {
    insns.iter().enumerate().filter(|(pc, _)| starts[*pc]).filter_map(|(pc, i)| {
        let class = i.code & 0x07;
        let op = i.code & 0xf0;
        // BPF_JMP and BPF_JMP32, not their calls and exits.
        let jumps = (class == 0x05 || class == 0x06) && op != 0x80 && op != 0x90;
        jumps.then(|| (pc as i64 + 1 + i64::from(i.off)) as usize)
    })
}

/// The last instruction before `at` that writes `reg`, and where it is;
/// None when it is a call (which leaves r1-r5 undefined) or not found.
fn last_write(insns: &[Insn], starts: &[bool], at: usize, reg: u8) -> Option<(usize, Insn)> {
    (0..at)
        .rev()
        .filter(|pc| starts[*pc])
        .find_map(|pc| {
            let i = insns[pc];
            let class = i.code & 0x07;
            let dst = i.regs & 0x0f;
            let src = i.regs >> 4;
            let writes = match class {
                // BPF_LD (ld_imm64), BPF_LDX, BPF_ALU, BPF_ALU64.
                0x00 | 0x01 | 0x04 | 0x07 => dst == reg,
                // BPF_STX atomics with BPF_FETCH write their source; cmpxchg r0.
                0x03 if i.code & 0xe0 == 0xc0 => (i.imm & 0x01 != 0 && src == reg) || reg == 0,
                // Calls leave r0-r5 undefined.
                0x05 => i.code & 0xf0 == 0x80 && reg <= 5,
                _ => false,
            };
            writes.then_some((pc, i))
        })
        .filter(|(_, i)| i.code & 0xf0 != 0x80 || i.code & 0x07 != 0x05)
}

fn is_tail_call(insn: &Insn) -> bool {
    insn.code == CALL && insn.regs >> 4 == 0 && insn.imm == TAIL_CALL
}

fn loads_function(insn: &Insn) -> bool {
    insn.is_ld_imm64() && insn.regs >> 4 == PSEUDO_FUNC
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::insn::{call, exit, ld_imm64, mov, mov_imm, Helper, R0, R2, R3, R6};

    fn tail_call() -> Insn {
        Insn { code: CALL, regs: 0, off: 0, imm: TAIL_CALL }
    }

    /// An entry in the shape clang gives dt_sys_enter_tp: a test that
    /// returns early, the tail call, then `return 0`.
    fn entry() -> Vec<Insn> {
        let [map_lo, map_hi] = ld_imm64(R2, 0);
        vec![
            mov(R6, R1),
            jmp_imm(Cond::Eq, R6, 0, 5),
            mov(R1, R6),
            map_lo,
            map_hi,
            mov_imm(R3, 7),
            tail_call(),
            mov_imm(R0, 0),
            exit(),
        ]
    }

    fn clause() -> Vec<Insn> {
        vec![mov(R6, R1), call(Helper::GetCurrentPidTgid), mov_imm(R0, 0), exit()]
    }

    #[test]
    fn the_tail_call_becomes_a_jump_to_the_appended_clause() {
        let entry = entry();
        let program = inline_at_tail_call(&entry, &clause()).expect("inlined");
        assert_eq!(program.len(), entry.len() + clause().len());
        assert_eq!(&program[..6], &entry[..6], "the entry's code before the tail call is kept");
        // From the tail call's place (6) to the clause (9): 6 + 1 + 2.
        assert_eq!(program[6], jmp_imm(Cond::Ne, R1, 0, 2));
        assert_eq!(&program[7..9], &entry[7..9], "the entry's return stays");
        assert_eq!(&program[9..], clause().as_slice());
        // The early return still lands on the entry's `r0 = 0`.
        assert_eq!(1 + 1 + program[1].off as usize, 7);
    }

    #[test]
    fn a_constant_slot_set_on_the_only_way_to_the_tail_call_is_found() {
        let mut entry = entry();
        entry[3].regs |= PSEUDO_MAP_FD << 4;
        entry[3].imm = 42;
        assert_eq!(tail_call_target(&entry), Some((42, 7)));

        // A jump that lands between the slot's move and the call.
        let mut joined_path = entry.clone();
        joined_path.splice(6..6, [mov_imm(R0, 0)]);
        joined_path[1].off = 4;
        assert_eq!(tail_call_target(&joined_path), None);

        // A computed slot.
        let mut computed = entry.clone();
        computed.splice(6..6, [crate::codegen::insn::alu_imm(crate::codegen::insn::Alu::Add, R3, 1)]);
        computed[1].off = 6;
        assert_eq!(tail_call_target(&computed), None);

        // A call between the slot's move and the tail call clobbers r3.
        let mut clobbered = entry.clone();
        clobbered.splice(6..6, [call(Helper::GetCurrentPidTgid)]);
        clobbered[1].off = 6;
        assert_eq!(tail_call_target(&clobbered), None);
    }

    #[test]
    fn entries_it_cannot_inline_into_are_left_to_the_tail_call() {
        let no_tail_call: Vec<Insn> = entry().into_iter().filter(|i| !is_tail_call(i)).collect();
        assert_eq!(inline_at_tail_call(&no_tail_call, &clause()), None);

        let mut two = entry();
        two.splice(7..7, [tail_call()]);
        assert_eq!(inline_at_tail_call(&two, &clause()), None);

        let mut with_function = entry();
        with_function.insert(0, Insn { code: CALL, regs: PSEUDO_CALL << 4, off: 0, imm: 3 });
        assert_eq!(inline_at_tail_call(&with_function, &clause()), None);

        let mut clause_with_function = clause();
        let [lo, hi] = ld_imm64(R0, 0);
        clause_with_function.splice(0..0, [Insn { regs: lo.regs | PSEUDO_FUNC << 4, ..lo }, hi]);
        assert_eq!(inline_at_tail_call(&entry(), &clause_with_function), None);
    }
}
