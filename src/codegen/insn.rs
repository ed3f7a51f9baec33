//! BPF instruction encoding: the small assembler the code generator emits
//! through. Knows opcodes and operand packing, nothing about D.

use super::maps::MapRef;

/// One 8-byte BPF instruction, laid out as the kernel's `struct bpf_insn`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Insn {
    pub code: u8,
    /// dst in the low nibble, src in the high nibble.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reg(pub u8);

pub(crate) const R0: Reg = Reg(0);
pub(crate) const R1: Reg = Reg(1);
pub(crate) const R2: Reg = Reg(2);
pub(crate) const R3: Reg = Reg(3);
pub(crate) const R4: Reg = Reg(4);
pub(crate) const R5: Reg = Reg(5);
pub(crate) const R6: Reg = Reg(6);
pub(crate) const R7: Reg = Reg(7);
pub(crate) const R8: Reg = Reg(8);
pub(crate) const R9: Reg = Reg(9);
pub(crate) const FP: Reg = Reg(10);

// Instruction classes.
const LD: u8 = 0x00;
const LDX: u8 = 0x01;
const ST: u8 = 0x02;
const STX: u8 = 0x03;
const JMP: u8 = 0x05;
const ALU64: u8 = 0x07;
// Operand source.
const K: u8 = 0x00;
const X: u8 = 0x08;
// Memory mode.
const MEM: u8 = 0x60;
const IMM: u8 = 0x00;
const ATOMIC: u8 = 0xc0;
// Jump operations.
const CALL: u8 = 0x80;
const EXIT: u8 = 0x90;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Size {
    B = 0x10,
    H = 0x08,
    W = 0x00,
    DW = 0x18,
}

impl Size {
    /// The access of an integer of `bytes` bytes (8 for any other width).
    pub(crate) fn of_bytes(bytes: u8) -> Size {
        match bytes {
            1 => Size::B,
            2 => Size::H,
            4 => Size::W,
            _ => Size::DW,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alu {
    Add = 0x00,
    Sub = 0x10,
    Mul = 0x20,
    Div = 0x30,
    Or = 0x40,
    And = 0x50,
    Lsh = 0x60,
    Rsh = 0x70,
    Neg = 0x80,
    Mod = 0x90,
    Xor = 0xa0,
    Mov = 0xb0,
    Arsh = 0xc0,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    Eq = 0x10,
    Gt = 0x20,
    Ge = 0x30,
    Ne = 0x50,
    Sgt = 0x60,
    Sge = 0x70,
    Lt = 0xa0,
    Le = 0xb0,
    Slt = 0xc0,
    Sle = 0xd0,
}

impl Cond {
    /// The condition that holds exactly when this one does not.
    pub(crate) fn negated(self) -> Cond {
        match self {
            Cond::Eq => Cond::Ne,
            Cond::Ne => Cond::Eq,
            Cond::Gt => Cond::Le,
            Cond::Le => Cond::Gt,
            Cond::Ge => Cond::Lt,
            Cond::Lt => Cond::Ge,
            Cond::Sgt => Cond::Sle,
            Cond::Sle => Cond::Sgt,
            Cond::Sge => Cond::Slt,
            Cond::Slt => Cond::Sge,
        }
    }
}

/// Kernel helper function numbers (include/uapi/linux/bpf.h); stable ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Helper {
    MapLookupElem = 1,
    MapUpdateElem = 2,
    MapDeleteElem = 3,
    MapPushElem = 87,
    MapPopElem = 88,
    KtimeGetNs = 5,
    GetSmpProcessorId = 8,
    GetCurrentPidTgid = 14,
    GetCurrentUidGid = 15,
    GetCurrentComm = 16,
    GetStackid = 27,
    GetCurrentTask = 35,
    GetStack = 67,
    GetPrandomU32 = 7,
    TailCall = 12,
    ProbeWriteUser = 36,
    SendSignal = 109,
    ProbeReadUser = 112,
    ProbeReadKernel = 113,
    ProbeReadUserStr = 114,
    ProbeReadKernelStr = 115,
    RingbufOutput = 130,
    RingbufReserve = 131,
    RingbufSubmit = 132,
    RingbufDiscard = 133,
    TaskStorageGet = 156,
    GetCurrentTaskBtf = 158,
    TaskPtRegs = 175,
    Loop = 181,
}

/// `bpf_task_storage_get`'s flag: allocate the task's value when it has none.
pub(crate) const LOCAL_STORAGE_GET_F_CREATE: i32 = 1;

/// `src_reg` value marking an `ld_imm64` whose immediate is a map fd.
pub(crate) const PSEUDO_MAP_FD: u8 = 1;
/// `src_reg` marking an `ld_imm64` whose immediate is a map fd and whose
/// second word is an offset into the map's value (direct value access).
pub(crate) const PSEUDO_MAP_VALUE: u8 = 2;

fn insn(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
    Insn { code, regs: (src.0 << 4) | (dst.0 & 0x0f), off, imm }
}

pub(crate) fn alu_imm(op: Alu, dst: Reg, imm: i32) -> Insn {
    insn(ALU64 | K | op as u8, dst, R0, 0, imm)
}
pub(crate) fn alu_reg(op: Alu, dst: Reg, src: Reg) -> Insn {
    insn(ALU64 | X | op as u8, dst, src, 0, 0)
}
pub(crate) fn mov_imm(dst: Reg, imm: i32) -> Insn {
    alu_imm(Alu::Mov, dst, imm)
}
pub(crate) fn mov(dst: Reg, src: Reg) -> Insn {
    alu_reg(Alu::Mov, dst, src)
}
pub(crate) fn neg(dst: Reg) -> Insn {
    insn(ALU64 | K | Alu::Neg as u8, dst, R0, 0, 0)
}
/// Converts the low `bits` (16, 32, 64) of `dst` to big-endian, zero-extending
/// (a byte swap on little-endian machines: htons and friends).
pub(crate) fn to_big_endian(dst: Reg, bits: i32) -> Insn {
    const ALU: u8 = 0x04;
    const END: u8 = 0xd0;
    const TO_BE: u8 = 0x08;
    insn(ALU | END | TO_BE, dst, R0, 0, bits)
}
/// 64-bit immediate load: two instruction slots.
pub(crate) fn ld_imm64(dst: Reg, value: u64) -> [Insn; 2] {
    [insn(LD | IMM | Size::DW as u8, dst, R0, 0, value as u32 as i32), insn(0, R0, R0, 0, (value >> 32) as u32 as i32)]
}
/// `src_reg` marking an `ld_imm64` whose immediate is the distance to a
/// BPF function of the same program (from the instruction after it).
pub(crate) const PSEUDO_FUNC: u8 = 4;

/// Loads the address of the BPF function `distance` instructions past the
/// next into `dst` (a callback for bpf_loop()).
pub(crate) fn ld_func(dst: Reg, distance: i32) -> [Insn; 2] {
    [insn(LD | IMM | Size::DW as u8, dst, Reg(PSEUDO_FUNC), 0, distance), insn(0, R0, R0, 0, 0)]
}
/// Loads a map's address (for helper calls) into `dst`.
pub(crate) fn ld_map_fd(dst: Reg, map: MapRef) -> [Insn; 2] {
    [insn(LD | IMM | Size::DW as u8, dst, Reg(PSEUDO_MAP_FD), 0, map.symbol()), insn(0, R0, R0, 0, 0)]
}
/// Loads the address of byte `offset` of an array map's first value.
pub(crate) fn ld_map_value(dst: Reg, map: MapRef, offset: u32) -> [Insn; 2] {
    [insn(LD | IMM | Size::DW as u8, dst, Reg(PSEUDO_MAP_VALUE), 0, map.symbol()), insn(0, R0, R0, 0, offset as i32)]
}
pub(crate) fn ldx(size: Size, dst: Reg, src: Reg, off: i16) -> Insn {
    insn(LDX | MEM | size as u8, dst, src, off, 0)
}
pub(crate) fn stx(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
    insn(STX | MEM | size as u8, dst, src, off, 0)
}
pub(crate) fn st_imm(size: Size, dst: Reg, off: i16, imm: i32) -> Insn {
    insn(ST | MEM | size as u8, dst, R0, off, imm)
}
/// Atomic `*(u64 *)(dst + off) += src`.
pub(crate) fn atomic_add64(dst: Reg, off: i16, src: Reg) -> Insn {
    insn(STX | ATOMIC | Size::DW as u8, dst, src, off, Alu::Add as i32)
}
/// Atomic compare-and-exchange of `*(u64 *)(dst + off)`: if it equals r0
/// it becomes `src`; r0 gets the old value either way.
pub(crate) fn atomic_cmpxchg64(dst: Reg, off: i16, src: Reg) -> Insn {
    insn(STX | ATOMIC | Size::DW as u8, dst, src, off, BPF_CMPXCHG)
}
const BPF_CMPXCHG: i32 = 0xf0 | 0x01; // with BPF_FETCH

impl Insn {
    /// The first half of a 64-bit immediate load (two instruction slots).
    pub(crate) fn is_ld_imm64(&self) -> bool {
        self.code == LD | IMM | Size::DW as u8
    }
    /// An `ld_imm64` whose immediate names a map.
    pub(crate) fn loads_map(&self) -> bool {
        self.is_ld_imm64() && matches!(self.regs >> 4, PSEUDO_MAP_FD | PSEUDO_MAP_VALUE)
    }
    /// Whether this is a compare-and-exchange (Linux 5.12 and later).
    pub(crate) fn is_cmpxchg(&self) -> bool {
        self.code == STX | ATOMIC | Size::DW as u8 && self.imm == BPF_CMPXCHG
    }
}
pub(crate) fn jmp_imm(cond: Cond, dst: Reg, imm: i32, off: i16) -> Insn {
    insn(JMP | K | cond as u8, dst, R0, off, imm)
}
pub(crate) fn jmp_reg(cond: Cond, dst: Reg, src: Reg, off: i16) -> Insn {
    insn(JMP | X | cond as u8, dst, src, off, 0)
}
pub(crate) fn ja(off: i16) -> Insn {
    insn(JMP, R0, R0, off, 0)
}
pub(crate) fn call(helper: Helper) -> Insn {
    insn(JMP | CALL, R0, R0, 0, helper as i32)
}
pub(crate) fn exit() -> Insn {
    insn(JMP | EXIT, R0, R0, 0, 0)
}

/// The program in readable form, one line per instruction (a 64-bit
/// immediate load, which takes two slots, is one line), in the syntax the
/// kernel's verifier log and bpftool use: `r0 = *(u64 *)(r7 + 8)`.
/// A map load's operand as -S shows it: the map's role before loading,
/// its descriptor after.
fn map_name(imm: i32) -> String {
    match MapRef::from_symbol(imm) {
        Some(map) => format!("{map:?}"),
        None => format!("fd {imm}"),
    }
}

pub(crate) fn disassemble(insns: &[Insn]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pc = 0;
    while pc < insns.len() {
        let i = insns[pc];
        let text = if i.code == LD | IMM | Size::DW as u8 {
            let high = insns.get(pc + 1).map_or(0, |n| n.imm as u32);
            let text = match i.regs >> 4 {
                PSEUDO_MAP_FD => format!("r{} = map[{}]", i.regs & 0x0f, map_name(i.imm)),
                PSEUDO_MAP_VALUE => format!("r{} = map[{}] + {high}", i.regs & 0x0f, map_name(i.imm)),
                _ => format!("r{} = {:#x} ll", i.regs & 0x0f, (u64::from(high) << 32) | u64::from(i.imm as u32)),
            };
            lines.push(format!("{}    {text}", encoding(pc, &i)));
            if let Some(second) = insns.get(pc + 1) {
                lines.push(encoding(pc + 1, second));
            }
            pc += 2;
            continue;
        } else {
            describe(&i)
        };
        lines.push(format!("{}    {text}", encoding(pc, &i)));
        pc += 1;
    }
    lines
}

/// An instruction's place and fields as dtrace-utils' listing shows them:
/// index, byte offset, then opcode, dst, src, offset and immediate in hex.
fn encoding(pc: usize, i: &Insn) -> String {
    format!(
        "{pc:04} {:05}: {:02x} {:01x} {:01x} {:04x} {:08x}",
        pc * 8,
        i.code,
        i.regs & 0x0f,
        i.regs >> 4,
        i.off as u16,
        i.imm as u32
    )
}

/// One instruction's text; opcodes this assembler never emits show in hex.
fn describe(i: &Insn) -> String {
    let dst = format!("r{}", i.regs & 0x0f);
    let src = format!("r{}", i.regs >> 4);
    let size = |code: u8| match code & 0x18 {
        0x10 => "u8",
        0x08 => "u16",
        0x00 => "u32",
        _ => "u64",
    };
    let at = |reg: &str| format!("({reg} {} {})", if i.off < 0 { '-' } else { '+' }, i.off.unsigned_abs());
    let operand = if i.code & X != 0 { src.clone() } else { format!("{}", i.imm) };
    match i.code & 0x07 {
        ALU64 => {
            let op = match i.code & 0xf0 {
                0x00 => "+=",
                0x10 => "-=",
                0x20 => "*=",
                0x30 => "/=",
                0x40 => "|=",
                0x50 => "&=",
                0x60 => "<<=",
                0x70 => ">>=",
                0x80 => return format!("{dst} = -{dst}"),
                0x90 => "%=",
                0xa0 => "^=",
                0xb0 => "=",
                0xc0 => "s>>=",
                _ => return format!("<unknown {:#04x}>", i.code),
            };
            format!("{dst} {op} {operand}")
        }
        // Byte swaps are the only 32-bit ALU instructions emitted.
        0x04 if i.code & 0xf0 == 0xd0 => format!("{dst} = be{} {dst}", i.imm),
        LDX if i.code & 0xe0 == MEM => format!("{dst} = *({} *){}", size(i.code), at(&src)),
        STX if i.code & 0xe0 == MEM => format!("*({} *){} = {src}", size(i.code), at(&dst)),
        STX if i.code & 0xe0 == ATOMIC => match i.imm {
            0x00 => format!("lock *({} *){} += {src}", size(i.code), at(&dst)),
            0xf1 => format!("r0 = cmpxchg(*({} *){}, r0, {src})", size(i.code), at(&dst)),
            _ => format!("<atomic {:#x}>", i.imm),
        },
        ST if i.code & 0xe0 == MEM => format!("*({} *){} = {}", size(i.code), at(&dst), i.imm),
        JMP => {
            let target = format!("{:+}", i.off);
            let cond = match i.code & 0xf0 {
                0x00 => return format!("goto {target}"),
                0x80 => return format!("call {}", i.imm),
                0x90 => return "exit".to_string(),
                0x10 => "==",
                0x20 => ">",
                0x30 => ">=",
                0x50 => "!=",
                0x60 => "s>",
                0x70 => "s>=",
                0xa0 => "<",
                0xb0 => "<=",
                0xc0 => "s<",
                0xd0 => "s<=",
                _ => return format!("<unknown {:#04x}>", i.code),
            };
            format!("if {dst} {cond} {operand} goto {target}")
        }
        _ => format!("<unknown {:#04x}>", i.code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insn_encodings_match_the_kernel() {
        // Reference encodings from the kernel's filter.h macros.
        assert_eq!(mov_imm(R0, 0), Insn { code: 0xb7, regs: 0x00, off: 0, imm: 0 });
        assert_eq!(exit(), Insn { code: 0x95, regs: 0, off: 0, imm: 0 });
        assert_eq!(ldx(Size::DW, R1, R6, 8), Insn { code: 0x79, regs: 0x61, off: 8, imm: 0 });
        assert_eq!(stx(Size::W, FP, -4, R2), Insn { code: 0x63, regs: 0x2a, off: -4, imm: 0 });
        assert_eq!(call(Helper::MapLookupElem), Insn { code: 0x85, regs: 0, off: 0, imm: 1 });
        assert_eq!(jmp_imm(Cond::Eq, R0, 0, 3), Insn { code: 0x15, regs: 0, off: 3, imm: 0 });
        assert_eq!(ld_map_fd(R1, MapRef::Ctx)[0], Insn { code: 0x18, regs: 0x11, off: 0, imm: MapRef::Ctx.symbol() });
        assert_eq!(atomic_add64(R0, 0, R1).code, 0xdb);
        assert_eq!(atomic_cmpxchg64(R1, 0, R2), Insn { code: 0xdb, regs: 0x21, off: 0, imm: 0xf1 });
        assert_eq!(std::mem::size_of::<Insn>(), 8);
    }

    #[test]
    fn disassembly_reads_like_the_verifier_log() {
        // Each line: index, byte offset and fields (dtrace-utils' listing),
        // then the instruction as the verifier's log writes it; the second
        // half of a 16-byte load has no text of its own.
        let mut program = vec![ldx(Size::DW, R1, R7, 8), stx(Size::W, FP, -4, R2), alu_imm(Alu::Add, R0, 3)];
        program.extend(ld_map_fd(R1, MapRef::Globals));
        program.extend([jmp_imm(Cond::Eq, R0, 0, 2), call(Helper::MapLookupElem), to_big_endian(R3, 16), exit()]);
        let globals = MapRef::Globals.symbol() as u32;
        assert_eq!(
            disassemble(&program),
            [
                "0000 00000: 79 1 7 0008 00000000    r1 = *(u64 *)(r7 + 8)".to_string(),
                "0001 00008: 63 a 2 fffc 00000000    *(u32 *)(r10 - 4) = r2".to_string(),
                "0002 00016: 07 0 0 0000 00000003    r0 += 3".to_string(),
                format!("0003 00024: 18 1 1 0000 {globals:08x}    r1 = map[Globals]"),
                "0004 00032: 00 0 0 0000 00000000".to_string(),
                "0005 00040: 15 0 0 0002 00000000    if r0 == 0 goto +2".to_string(),
                "0006 00048: 85 0 0 0000 00000001    call 1".to_string(),
                "0007 00056: dc 3 0 0000 00000010    r3 = be16 r3".to_string(),
                "0008 00064: 95 0 0 0000 00000000    exit".to_string(),
            ]
        );
    }
}
