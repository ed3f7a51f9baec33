//! D subroutines computed in the kernel: string functions as bounded byte
//! loops the verifier can follow, byte swaps, rand() and dev_t parts.
//!
//! Strings keep the code generator's invariant: a string value is a pointer
//! to a buffer with at least strsize readable bytes. A subroutine that
//! returns a new string writes it into a scratch slot; one that returns part
//! of its argument copies that part, so the result still starts a buffer.
//!
//! Inside the loops: r1 source, r2 destination, r3 source index, r4
//! destination index, r5 the byte, r0 a temporary. No helper is called in a
//! loop, so these stay put.

use super::*;

mod json;

pub(crate) use json::{JsonCallback, JSON_SCRATCH_BYTES};

const SLASH: i32 = b'/' as i32;
/// Words of the kernel's struct pt_regs that hold user registers (x86_64:
/// r15 .. ss; arm64: x0 .. x30, sp, pc, pstate), as d-library/regs.d numbers them.
/// chill()'s loop: the verifier follows each turn and holds the exit of
/// each for later (8,192 such at most in one program), so a turn reads the
/// clock CHILL_READS times and tests it once.
const CHILL_TURNS: i32 = 1024;
const CHILL_READS: usize = 16;

/// The longest chill DTrace allows (dtrace_chill_max: 500 ms).
const CHILL_MAX_NS: u64 = 500_000_000;
/// bpf_loop()'s most turns (BPF_MAX_LOOPS), each one read of the clock.
const CHILL_LOOP_TURNS: u64 = 1 << 23;

/// Linux's address families, as inet_ntop() takes them.
const AF_INET: i32 = 2;
const AF_INET6: i32 = 10;

/// Which way index/rindex/strstr search.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

impl Emitter<'_> {
    /// Makes the verifier forget the exact value of `reg` by passing it
    /// through map memory (the word after the scratch slots). A loop's exit
    /// index would otherwise be one exact value per iteration, and every
    /// later loop would be verified once per such value: chained loops would
    /// multiply instead of add. The loops re-check their bounds anyway.
    fn launder(&mut self, reg: Reg) {
        if !self.with_scratch {
            return;
        }
        self.forget(reg);
        // The loop's temporaries differ by exit path; forget them too, so the
        // paths look the same from here on.
        for temp in [R0, R5] {
            if temp != reg {
                self.emit(mov_imm(temp, 0));
            }
        }
    }

    /// The part of `launder` that passes `reg` through map memory, leaving
    /// the other registers alone.
    pub(super) fn forget(&mut self, reg: Reg) {
        let cell = self.scratch.launder as i16;
        self.emit(stx(Size::DW, R8, cell, reg));
        self.emit(ldx(Size::DW, reg, R8, cell));
    }

    /// Leaves a loop for `exit` when `reg` `cond` `imm`, with the exit as the
    /// fall-through: the verifier follows the fall-through first and keeps
    /// the other way for later, so an exit taken by a jump would keep one
    /// pending state per check and pass until the loop's last pass, and a
    /// few long loops exceed the verifier's 8192. This way each pass's exit
    /// is checked (and found alike the first one) before the next pass.
    fn exit_if(&mut self, cond: Cond, reg: Reg, imm: i32, exit: Label) {
        self.emit(jmp_imm(cond.negated(), reg, imm, 1));
        self.jump(ja(0), exit);
    }

    /// `exit_if` comparing two registers.
    fn exit_if_reg(&mut self, cond: Cond, reg: Reg, other: Reg, exit: Label) {
        self.emit(jmp_reg(cond.negated(), reg, other, 1));
        self.jump(ja(0), exit);
    }

    /// `forget` for integers in stack slots, before a loop reads them: the
    /// verifier narrows a value's range at each comparison, differently on
    /// each path that reaches the loop, and would check the loop once per
    /// such range. Uses r0.
    fn forget_slots(&mut self, slots: &[i16]) {
        for &slot in slots {
            self.emit(ldx(Size::DW, R0, FP, slot));
            self.forget(R0);
            self.emit(stx(Size::DW, FP, slot, R0));
        }
    }

    /// raise()/stop() (bpf_send_signal to the current process),
    /// copyout() and copyoutstr() (bpf_probe_write_user of the string and
    /// its NUL, at most maxlen bytes; nothing for maxlen 0).
    pub(super) fn destructive(&mut self, op: &DestructiveOp) -> Result<(), CodegenError> {
        match op {
            DestructiveOp::Signal(signal) => {
                self.expr(signal)?;
                self.emit(mov(R1, R0));
                self.emit(call(Helper::SendSignal));
            }
            DestructiveOp::CopyOut { buf, addr, size } => self.copy_out(buf, addr, size)?,
            DestructiveOp::Chill(ns) => self.chill(ns)?,
            DestructiveOp::CopyOutStr { text, addr, max } => {
                let saved_stack = self.stack_top;
                let (addr_slot, max_slot, text_slot) = (self.alloc_slot(8)?, self.alloc_slot(8)?, self.alloc_slot(8)?);
                for (value, slot) in [(addr, addr_slot), (max, max_slot), (text, text_slot)] {
                    self.expr(value)?;
                    self.emit(stx(Size::DW, FP, slot, R0));
                }
                self.emit(ldx(Size::DW, R1, FP, text_slot));
                self.strlen_r1_into_r4();
                self.emit(alu_imm(Alu::Add, R4, 1));
                // r3 = min(strlen + 1, maxlen), then checked against
                // [1, strsize] by constants, as the verifier wants a size it
                // can bound and that is not zero.
                let done = self.new_label();
                self.emit(ldx(Size::DW, R3, FP, max_slot));
                self.emit(jmp_reg(Cond::Le, R3, R4, 1));
                self.emit(mov(R3, R4));
                self.emit(alu_imm(Alu::Sub, R3, 1));
                self.jump(jmp_imm(Cond::Gt, R3, self.strsize() - 1, 0), done);
                self.emit(alu_imm(Alu::Add, R3, 1));
                self.emit(ldx(Size::DW, R1, FP, addr_slot));
                self.emit(ldx(Size::DW, R2, FP, text_slot));
                self.emit(call(Helper::ProbeWriteUser));
                self.bind(done);
                self.stack_top = saved_stack;
            }
        }
        Ok(())
    }

    /// chill(ns): reads the clock until `ns` have passed, in a bpf_loop()
    /// callback where the kernel has one. Elsewhere the verifier follows
    /// every turn of the loop, so the turns are bounded (`CHILL_TURNS` of
    /// `CHILL_READS`, some hundreds of microseconds). A chill the spin
    /// cannot cover is an illegal operation, as DTrace's beyond its limit
    /// (chill_max) is.
    fn chill(&mut self, ns: &TExpr) -> Result<(), CodegenError> {
        let saved_stack = self.stack_top;
        let (deadline, turns) = (self.alloc_slot(8)?, self.alloc_slot(8)?);
        self.expr(ns)?;
        let done = self.new_label();
        if self.env.bpf_loop {
            // More than DTrace lets a CPU chill is an illegal operation at
            // once (dtrace_action_chill's dtrace_chill_max).
            let allowed = self.new_label();
            self.emit2(ld_imm64(R1, CHILL_MAX_NS));
            self.jump(jmp_reg(Cond::Le, R0, R1, 0), allowed);
            self.emit(mov_imm(R1, 0));
            self.raise_fault(layout::FAULT_ILLOP)?;
            self.bind(allowed);
        }
        self.emit(stx(Size::DW, FP, deadline, R0));
        self.emit(call(Helper::KtimeGetNs));
        self.emit(ldx(Size::DW, R1, FP, deadline));
        self.emit(alu_reg(Alu::Add, R1, R0));
        self.emit(stx(Size::DW, FP, deadline, R1));
        if self.env.bpf_loop {
            // bpf_loop(turns, callback, &deadline, 0): the callback reads
            // the clock until the deadline; the verifier checks it once.
            let callback = match self.chill_callback {
                Some(label) => label,
                None => {
                    let label = self.new_label();
                    self.chill_callback = Some(label);
                    label
                }
            };
            self.emit2(ld_imm64(R1, CHILL_LOOP_TURNS));
            self.function_fixups.push((self.insns.len(), callback));
            self.emit2(ld_func(R2, 0));
            self.emit(mov(R3, FP));
            self.emit(alu_imm(Alu::Add, R3, deadline as i32));
            self.emit(mov_imm(R4, 0));
            self.emit(call(Helper::Loop));
            self.emit(call(Helper::KtimeGetNs));
            self.emit(ldx(Size::DW, R1, FP, deadline));
            self.jump(jmp_reg(Cond::Ge, R0, R1, 0), done);
        } else {
            self.emit(st_imm(Size::DW, FP, turns, 0));
            let again = self.new_label();
            self.bind(again);
            for _ in 0..CHILL_READS {
                self.emit(call(Helper::KtimeGetNs));
            }
            self.emit(ldx(Size::DW, R1, FP, deadline));
            self.jump(jmp_reg(Cond::Ge, R0, R1, 0), done);
            self.emit(ldx(Size::DW, R1, FP, turns));
            self.emit(alu_imm(Alu::Add, R1, 1));
            self.emit(stx(Size::DW, FP, turns, R1));
            self.jump(jmp_imm(Cond::Lt, R1, CHILL_TURNS, 0), again);
        }
        // The deadline not reached: more than the spin can cover.
        self.emit(mov_imm(R1, 0));
        self.raise_fault(layout::FAULT_ILLOP)?;
        self.bind(done);
        // As in DTrace, the firing's timestamp is read again after a chill.
        self.emit(st_imm(Size::DW, R7, layout::CTX_TIMESTAMP as i16, 0));
        self.stack_top = saved_stack;
        Ok(())
    }

    /// chill()'s bpf_loop() callback, a BPF function of its own: r2 is the
    /// deadline's address (on the caller's stack); it returns 1, which
    /// ends the loop, once the clock has passed the deadline.
    pub(super) fn chill_until_deadline(&mut self) {
        let passed = self.new_label();
        self.emit(stx(Size::DW, FP, -8, R2));
        self.emit(call(Helper::KtimeGetNs));
        self.emit(ldx(Size::DW, R1, FP, -8));
        self.emit(ldx(Size::DW, R1, R1, 0));
        self.jump(jmp_reg(Cond::Ge, R0, R1, 0), passed);
        self.emit(mov_imm(R0, 0));
        self.emit(exit());
        self.bind(passed);
        self.emit(mov_imm(R0, 1));
        self.emit(exit());
    }

    pub(super) fn subroutine(&mut self, subr: Subr, args: &[TExpr], ty: &Type) -> Result<(), CodegenError> {
        match subr {
            Subr::Strlen => {
                self.expr(&args[0])?;
                self.emit(mov(R1, R0));
                self.strlen_r1_into_r4();
                self.emit(mov(R0, R4));
            }
            Subr::Toupper | Subr::Tolower => {
                self.expr(&args[0])?;
                let dst = self.scratch_slot()?;
                self.emit(mov(R1, R0));
                self.dst_into_r2(dst);
                self.emit(mov_imm(R3, 0));
                self.emit(mov_imm(R4, 0));
                let case = if subr == Subr::Toupper { Case::Upper } else { Case::Lower };
                self.copy_loop(None, case);
                self.dst_into_r0(dst);
            }
            Subr::Strjoin => {
                let first = self.stash(&args[0])?;
                self.expr(&args[1])?;
                let dst = self.scratch_slot()?;
                let second = self.alloc_slot(8)?;
                self.emit(stx(Size::DW, FP, second, R0));
                self.emit(ldx(Size::DW, R1, FP, first));
                self.dst_into_r2(dst);
                self.emit(mov_imm(R3, 0));
                self.emit(mov_imm(R4, 0));
                self.copy_loop(None, Case::Keep);
                // r4 is where the first string's NUL went; the second goes there.
                self.emit(ldx(Size::DW, R1, FP, second));
                self.emit(mov_imm(R3, 0));
                self.copy_loop(None, Case::Keep);
                self.dst_into_r0(dst);
                self.stack_top += 16;
            }
            Subr::Substr => self.substr(args)?,
            Subr::Basename | Subr::Dirname => self.path_part(&args[0], subr == Subr::Dirname)?,
            Subr::Strchr | Subr::Strrchr => self.strchr(args, subr == Subr::Strrchr)?,
            Subr::Index | Subr::Rindex => {
                let saved = self.stack_top;
                let direction = if subr == Subr::Index { Direction::Forward } else { Direction::Backward };
                let _ = self.string_search(args, direction)?;
                self.stack_top = saved;
            }
            Subr::Strstr => {
                let saved = self.stack_top;
                let s = self.string_search(args, Direction::Forward)?;
                let dst = self.scratch_slot()?;
                self.emit(mov(R3, R0));
                self.suffix_or_empty(s, dst);
                self.stack_top = saved;
            }
            Subr::Strtok => self.strtok(args)?,
            Subr::Cleanpath => self.cleanpath(&args[0])?,
            Subr::Lltostr => self.lltostr(args)?,
            Subr::Strtoll => self.strtoll(args)?,
            Subr::Json => self.json(args)?,
            Subr::ByteSwap(bits) => {
                self.expr(&args[0])?;
                self.emit(to_big_endian(R0, bits));
            }
            Subr::CheckedIndex(len) => {
                self.expr(&args[0])?;
                let ok = self.new_label();
                self.jump(jmp_imm(Cond::Lt, R0, len.min(i32::MAX as u64) as i32, 0), ok);
                self.emit(mov(R1, R0));
                self.raise_fault(layout::FAULT_BADINDEX)?;
                self.bind(ok);
            }
            Subr::Uregs(UregsWord::Zero) => self.emit(mov_imm(R0, 0)),
            Subr::Uregs(UregsWord::PtRegs(word)) => {
                // The registers the thread entered the kernel with.
                let slot = self.alloc_slot(8)?;
                self.emit(call(Helper::GetCurrentTaskBtf));
                self.emit(mov(R1, R0));
                self.emit(call(Helper::TaskPtRegs));
                self.emit(mov(R3, R0));
                self.emit(alu_imm(Alu::Add, R3, 8 * word as i32));
                self.emit(mov(R1, FP));
                self.emit(alu_imm(Alu::Add, R1, slot as i32));
                self.emit(mov_imm(R2, 8));
                self.emit(call(Helper::ProbeReadKernel));
                self.emit(ldx(Size::DW, R0, FP, slot));
                self.stack_top += 8;
            }
            Subr::Uregs(UregsWord::Task { offset, size }) => {
                let slot = self.alloc_slot(8)?;
                self.emit(call(Helper::GetCurrentTask));
                self.emit(mov(R3, R0));
                self.emit(alu_imm(Alu::Add, R3, offset as i32));
                self.emit(mov(R1, FP));
                self.emit(alu_imm(Alu::Add, R1, slot as i32));
                self.emit(mov_imm(R2, i32::from(size.min(8))));
                self.emit(call(Helper::ProbeReadKernel));
                self.emit(ldx(Size::of_bytes(size.min(8)), R0, FP, slot));
                self.stack_top += 8;
            }
            Subr::Rand => {
                self.emit(call(Helper::GetPrandomU32));
                self.normalize(ty);
            }
            Subr::Getmajor => {
                // The kernel's dev_t: 12 bits of major above 20 bits of minor.
                self.expr(&args[0])?;
                self.emit(alu_imm(Alu::Lsh, R0, 32));
                self.emit(alu_imm(Alu::Rsh, R0, 52));
            }
            Subr::Getminor => {
                self.expr(&args[0])?;
                self.emit(alu_imm(Alu::And, R0, 0xfffff));
            }
            Subr::InetNtoa | Subr::InetNtoa6 | Subr::InetNtop => self.inet_text(subr, args)?,
            Subr::LinkNtop => self.link_text(args)?,
            Subr::Speculation => self.speculation()?,
            Subr::Psargs => self.psargs(&args[0], &args[1])?,
            Subr::PsargsOf => self.psargs_of(&args[0], &args[1])?,
            Subr::Copyin { offset, limit } => self.copyin(args, offset, limit)?,
            Subr::Alloca { offset, size: bytes } => {
                // As in DTrace, the memory starts zeroed; the size is a
                // constant of at most scratchsize bytes, so plain stores do.
                self.used_scratch = true;
                let start = self.scratch.alloca + offset;
                for word in 0..bytes.div_ceil(8) {
                    self.emit(st_imm(Size::DW, R8, (start + 8 * word) as i16, 0));
                }
                self.emit(mov(R0, R8));
                self.emit(alu_imm(Alu::Add, R0, start as i32));
                self.address_as_number();
            }
            // The arguments are evaluated in the order written
            // (bcopy/tst.bcopy_arg_order), whichever they are.
            Subr::Bcopy => {
                let saved = self.stack_top;
                let (src, dest, size) = (self.stash(&args[0])?, self.stash(&args[1])?, self.stash(&args[2])?);
                // A source in alloca() memory must lie in what the clause reserved.
                self.emit(ldx(Size::DW, R0, FP, src));
                self.check_alloca_read(ReadSize::Slot(size))?;
                self.copy_into_alloca(src, size, dest, Helper::ProbeReadKernel)?;
                self.stack_top = saved;
            }
            Subr::Copyinto => {
                let saved = self.stack_top;
                let (src, size, dest) = (self.stash(&args[0])?, self.stash(&args[1])?, self.stash(&args[2])?);
                self.copy_into_alloca(src, size, dest, Helper::ProbeReadUser)?;
                self.stack_top = saved;
            }
        }
        Ok(())
    }

    /// copyin(addr, size): `size` bytes of the process's memory (at most
    /// `limit`) in its buffer (`Subr::Copyin`), NUL after them; the value
    /// is the buffer's address as a number.
    #[inline(never)]
    fn copyin(&mut self, args: &[TExpr], offset: Option<usize>, limit: usize) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let addr = self.stash(&args[0])?;
        self.expr(&args[1])?;
        let (dst, limit) = match offset {
            Some(offset) => {
                self.used_scratch = true;
                ((self.scratch.alloca + offset) as i32, limit as i32)
            }
            None => (self.scratch_slot()?, self.strsize()),
        };
        self.emit(mov(R2, R0));
        self.emit(jmp_imm(Cond::Le, R2, limit, 1));
        self.emit(mov_imm(R2, limit));
        let size = self.alloc_slot(8)?;
        self.emit(stx(Size::DW, FP, size, R2));
        self.read_into_scratch_from_slot(Helper::ProbeReadUser, addr, dst)?;
        // A NUL after the bytes: stringof(copyin(addr, n)) is n
        // characters at most, not n and what the slot held before.
        let (at, end) = (self.new_label(), self.new_label());
        self.emit(ldx(Size::DW, R2, FP, size));
        // A clause buffer has room for the NUL after `limit` bytes; a
        // scratch slot holds strsize bytes and the next slot after them.
        let room = if offset.is_some() { Cond::Le } else { Cond::Lt };
        self.jump(jmp_imm(room, R2, limit, 0), at);
        self.jump(ja(0), end);
        self.bind(at);
        self.dst_into_r0(dst);
        self.emit(alu_reg(Alu::Add, R0, R2));
        self.emit(st_imm(Size::B, R0, 0, 0));
        self.bind(end);
        self.dst_into_r0(dst);
        // A pointer scripts index with any value (`buf[arg0] = 0`).
        self.address_as_number();
        self.stack_top = saved;
        Ok(())
    }

    /// r0 = a scratch string of the process memory [start, end) (at most
    /// PSARGS_MAX bytes), NULs between the arguments turned into spaces.
    fn psargs(&mut self, start: &TExpr, end: &TExpr) -> Result<(), CodegenError> {
        // Solaris' PRARGSZ is 80 with the NUL.
        const PSARGS_MAX: i32 = 79;
        let saved = self.stack_top;
        let max = PSARGS_MAX.min(self.strsize() - 1);
        let start = self.stash(start)?;
        self.expr(end)?;
        let len = self.alloc_slot(8)?;
        let dst = self.scratch_slot()?;
        self.emit(ldx(Size::DW, R1, FP, start));
        self.emit(alu_reg(Alu::Sub, R0, R1));
        self.emit(jmp_imm(Cond::Sle, R0, max, 1));
        self.emit(mov_imm(R0, max));
        self.emit(jmp_imm(Cond::Sge, R0, 0, 1));
        self.emit(mov_imm(R0, 0));
        self.emit(stx(Size::DW, FP, len, R0));
        self.emit(mov(R2, R0));
        self.read_into_scratch_from_slot(Helper::ProbeReadUser, start, dst)?;
        // Every NUL before the last byte separates two arguments.
        self.dst_into_r2(dst);
        self.emit(mov_imm(R4, 0));
        let (top, done) = (self.new_label(), self.new_label());
        self.bind(top);
        self.exit_if(Cond::Ge, R4, max, done);
        self.emit(ldx(Size::DW, R0, FP, len));
        self.emit(alu_imm(Alu::Sub, R0, 1));
        self.exit_if_reg(Cond::Sge, R4, R0, done);
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(ldx(Size::B, R5, R0, 0));
        self.emit(jmp_imm(Cond::Ne, R5, 0, 1));
        self.emit(st_imm(Size::B, R0, 0, b' ' as i32));
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.jump(ja(0), top);
        self.bind(done);
        self.emit(ldx(Size::DW, R4, FP, len));
        self.launder(R4);
        self.emit(jmp_imm(Cond::Gt, R4, max, 3));
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(st_imm(Size::B, R0, 0, 0));
        self.dst_into_r0(dst);
        self.stack_top = saved;
        Ok(())
    }

    /// Process `pid`'s command line from the runtime's table (dt_psargs),
    /// copied to scratch memory; `fallback` where the table has none.
    fn psargs_of(&mut self, pid: &TExpr, fallback: &TExpr) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        self.expr(pid)?;
        let key = self.alloc_slot(8)?;
        self.emit(stx(Size::W, FP, key, R0));
        self.emit2(ld_map_fd(R1, MapRef::Psargs));
        self.emit(mov(R2, FP));
        self.emit(alu_imm(Alu::Add, R2, key as i32));
        self.emit(call(Helper::MapLookupElem));
        let (missing, end) = (self.new_label(), self.new_label());
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), missing);
        let dst = self.scratch_slot()?;
        self.emit(mov(R3, R0));
        self.emit(mov(R1, R8));
        self.emit(alu_imm(Alu::Add, R1, dst));
        self.emit(mov_imm(R2, (layout::PSARGS_SIZE as i32).min(self.strsize())));
        self.emit(call(Helper::ProbeReadKernelStr));
        self.dst_into_r0(dst);
        self.jump(ja(0), end);
        self.bind(missing);
        self.expr(fallback)?;
        self.bind(end);
        self.stack_top = saved;
        Ok(())
    }

    /// bcopy/copyinto: `size` bytes from `src` (kernel or user memory, as
    /// `helper` reads) to `dest`, which must lie in alloca() memory; as in
    /// DTrace, any other destination is a bad-address fault. The arguments
    /// are in stack slots, already evaluated.
    fn copy_into_alloca(&mut self, src: i16, size: i16, dest: i16, helper: Helper) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        self.alloca_range(dest, size)?;
        self.emit(ldx(Size::DW, R3, FP, src));
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R3));
        self.emit(call(helper));
        self.fault_on_read_error()?;
        self.emit(mov_imm(R0, 0));
        self.stack_top = saved;
        Ok(())
    }

    /// Checks that `size` bytes at `pointer` (stack slots holding them) lie
    /// in alloca() memory (else a bad-address fault at `pointer`, or
    /// dtrace-utils' invalid-size fault when only the size reaches past it)
    /// and leaves r1 = the pointer, r2 = the size. The pointer is checked as
    /// a number (laundered: it may come from any variable) and rebuilt from
    /// the scratch pointer, so the verifier sees a map pointer with a
    /// bounded offset.
    fn alloca_range(&mut self, pointer: i16, size: i16) -> Result<(), CodegenError> {
        let limit = self.program.alloca_bytes as i32;
        let base = self.scratch.alloca as i32;
        self.emit(ldx(Size::DW, R0, FP, pointer));
        self.used_scratch = true;
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R0));
        self.launder(R0);
        self.emit(mov(R1, R0));
        self.emit(mov(R2, R8));
        self.emit(alu_imm(Alu::Add, R2, base));
        self.launder(R2);
        self.emit(alu_reg(Alu::Sub, R1, R2));
        self.fault_unless_at_most(R1, limit, layout::FAULT_BADADDR)?;
        self.emit(ldx(Size::DW, R2, FP, size));
        self.fault_unless_at_most(R2, limit, layout::FAULT_BADSIZE)?;
        self.emit(mov(R3, R1));
        self.emit(alu_reg(Alu::Add, R3, R2));
        self.fault_unless_at_most(R3, limit, layout::FAULT_BADSIZE)?;
        self.emit(mov(R3, R8));
        self.emit(alu_imm(Alu::Add, R3, base));
        self.emit(alu_reg(Alu::Add, R3, R1));
        self.emit(mov(R1, R3));
        Ok(())
    }

    /// copyout(buf, addr, nbytes): `nbytes` of alloca() memory at `buf` to
    /// user memory at `addr`; nothing for 0 bytes.
    fn copy_out(&mut self, buf: &TExpr, addr: &TExpr, size: &TExpr) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let (buf, addr, size) = (self.stash(buf)?, self.stash(addr)?, self.stash(size)?);
        self.alloca_range(buf, size)?;
        // The verifier wants a size it knows is not zero: 1..=limit.
        let done = self.new_label();
        self.emit(alu_imm(Alu::Sub, R2, 1));
        self.jump(jmp_imm(Cond::Gt, R2, self.program.alloca_bytes as i32 - 1, 0), done);
        self.emit(alu_imm(Alu::Add, R2, 1));
        self.emit(mov(R3, R2));
        self.emit(mov(R2, R1));
        self.emit(ldx(Size::DW, R1, FP, addr));
        self.emit(call(Helper::ProbeWriteUser));
        self.bind(done);
        self.stack_top = saved;
        Ok(())
    }

    /// A fault of `kind` unless `reg` <= `limit`, unsigned: a bad address
    /// names the address saved in STACK_FAULT_ADDR, an invalid size the
    /// size in r2.
    fn fault_unless_at_most(&mut self, reg: Reg, limit: i32, kind: u32) -> Result<(), CodegenError> {
        let ok = self.new_label();
        self.jump(jmp_imm(Cond::Le, reg, limit, 0), ok);
        if kind == layout::FAULT_BADSIZE {
            self.emit(mov(R1, R2));
        } else {
            self.emit(ldx(Size::DW, R1, FP, STACK_FAULT_ADDR));
        }
        self.raise_fault(kind)?;
        self.bind(ok);
        Ok(())
    }

    /// r0 = 1 if the current process is `pid` or descends from it: the
    /// real_parent chain is walked up to PROGENY_DEPTH levels (unrolled).
    pub(super) fn progenyof(
        &mut self,
        pid: &TExpr,
        parent_offset: usize,
        tgid_offset: usize,
    ) -> Result<(), CodegenError> {
        const PROGENY_DEPTH: usize = 48;
        let saved = self.stack_top;
        let want = self.stash(pid)?;
        let task = self.alloc_slot(8)?;
        let word = self.alloc_slot(8)?;
        let yes = self.new_label();
        let no = self.new_label();
        let end = self.new_label();
        self.current(Current::Task);
        self.emit(stx(Size::DW, FP, task, R0));
        // `size` bytes of the task's field at `offset` into `word`; an
        // unreadable task ends the walk with "no".
        let read_field = |e: &mut Self, offset: usize, size: i32| {
            e.emit(mov(R1, FP));
            e.emit(alu_imm(Alu::Add, R1, word as i32));
            e.emit(mov_imm(R2, size));
            e.emit(ldx(Size::DW, R3, FP, task));
            e.emit(alu_imm(Alu::Add, R3, offset as i32));
            e.emit(call(Helper::ProbeReadKernel));
            e.jump(jmp_imm(Cond::Ne, R0, 0, 0), no);
        };
        for _ in 0..PROGENY_DEPTH {
            // tgid == pid?
            self.emit(st_imm(Size::DW, FP, word, 0));
            read_field(self, tgid_offset, 4);
            self.emit(ldx(Size::W, R1, FP, word));
            self.emit(ldx(Size::DW, R2, FP, want));
            self.emit(alu_imm(Alu::Lsh, R2, 32));
            self.emit(alu_imm(Alu::Rsh, R2, 32));
            self.jump(jmp_reg(Cond::Eq, R1, R2, 0), yes);
            // Up to the parent; the idle task is its own parent.
            read_field(self, parent_offset, 8);
            self.emit(ldx(Size::DW, R1, FP, word));
            self.emit(ldx(Size::DW, R2, FP, task));
            self.jump(jmp_reg(Cond::Eq, R1, R2, 0), no);
            self.jump(jmp_imm(Cond::Eq, R1, 0, 0), no);
            self.emit(stx(Size::DW, FP, task, R1));
        }
        self.bind(no);
        self.emit(mov_imm(R0, 0));
        self.jump(ja(0), end);
        self.bind(yes);
        self.emit(mov_imm(R0, 1));
        self.bind(end);
        self.stack_top = saved;
        Ok(())
    }

    /// inet_ntoa(addr), inet_ntoa6(addr) and inet_ntop(af, addr): the
    /// address at kernel address `addr` as text, written as illumos DTrace
    /// does. A bad address is a fault, a family other than AF_INET and
    /// AF_INET6 an illegal operation.
    fn inet_text(&mut self, subr: Subr, args: &[TExpr]) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let family = match subr {
            Subr::InetNtop => Some(self.stash(&args[0])?),
            _ => None,
        };
        let addr = self.stash(args.last().ok_or_else(|| CodegenError("internal error: no address".into()))?)?;
        let bytes = self.alloc_slot(16)?;
        let dst = self.scratch_slot()?;
        let full = self.new_label();
        match family {
            None if subr == Subr::InetNtoa => self.inet4_text(addr, bytes, dst, full)?,
            None => self.inet6_text(addr, bytes, dst, full, true)?,
            Some(family) => {
                let not_inet = self.new_label();
                let not_inet6 = self.new_label();
                self.emit(ldx(Size::DW, R0, FP, family));
                self.jump(jmp_imm(Cond::Ne, R0, AF_INET, 0), not_inet);
                self.inet4_text(addr, bytes, dst, full)?;
                self.jump(ja(0), full);
                self.bind(not_inet);
                self.jump(jmp_imm(Cond::Ne, R0, AF_INET6, 0), not_inet6);
                self.inet6_text(addr, bytes, dst, full, false)?;
                self.jump(ja(0), full);
                self.bind(not_inet6);
                self.emit(mov_imm(R1, 0));
                self.raise_fault(layout::FAULT_ILLOP)?;
            }
        }
        // r2 is the text, r4 its length.
        self.bind(full);
        self.terminate_at_r4();
        self.dst_into_r0(dst);
        self.stack_top = saved;
        Ok(())
    }

    /// link_ntop(type, addr): the hardware address at `addr` as dtrace-utils
    /// writes it, two lowercase hex digits per byte joined by ':'; 6 bytes
    /// for ARPHRD_ETHER, 20 for ARPHRD_INFINIBAND, any other type an
    /// illegal operation and a bad address a fault.
    fn link_text(&mut self, args: &[TExpr]) -> Result<(), CodegenError> {
        const ARPHRD_ETHER: i32 = 1;
        const ARPHRD_INFINIBAND: i32 = 32;
        let saved = self.stack_top;
        let kind = self.stash(&args[0])?;
        let addr = self.stash(&args[1])?;
        let bytes = self.alloc_slot(24)?;
        let dst = self.scratch_slot()?;
        let full = self.new_label();
        let (not_ether, infiniband) = (self.new_label(), self.new_label());
        self.emit(ldx(Size::DW, R0, FP, kind));
        self.jump(jmp_imm(Cond::Ne, R0, ARPHRD_ETHER, 0), not_ether);
        self.hardware_address(addr, bytes, 6, dst, full)?;
        self.jump(ja(0), full);
        self.bind(not_ether);
        self.jump(jmp_imm(Cond::Eq, R0, ARPHRD_INFINIBAND, 0), infiniband);
        self.emit(mov_imm(R1, 0));
        self.raise_fault(layout::FAULT_ILLOP)?;
        self.bind(infiniband);
        self.hardware_address(addr, bytes, 20, dst, full)?;
        // r2 is the text, r4 its length.
        self.bind(full);
        self.terminate_at_r4();
        self.dst_into_r0(dst);
        self.stack_top = saved;
        Ok(())
    }

    /// The `len` bytes at the kernel address in slot `addr` as "xx:xx:..."
    /// into scratch slot `dst`: r2 the text, r4 its length.
    fn hardware_address(&mut self, addr: i16, bytes: i16, len: i16, dst: i32, full: Label) -> Result<(), CodegenError> {
        self.read_kernel_bytes(addr, bytes, i32::from(len))?;
        self.dst_into_r2(dst);
        self.emit(mov_imm(R4, 0));
        for k in 0..len {
            if k > 0 {
                self.put_byte(b':', full);
            }
            self.emit(ldx(Size::B, R5, FP, bytes + k));
            for shift in [4, 0] {
                self.emit(mov(R1, R5));
                self.emit(alu_imm(Alu::Rsh, R1, shift));
                self.emit(alu_imm(Alu::And, R1, 0xf));
                self.emit(jmp_imm(Cond::Lt, R1, 10, 1));
                self.emit(alu_imm(Alu::Add, R1, (b'a' - b'0') as i32 - 10));
                self.put_digit(R1, full);
            }
        }
        Ok(())
    }

    /// Reads `size` bytes at the kernel address in stack slot `addr` into
    /// stack slot `bytes`; a bad address is a fault.
    fn read_kernel_bytes(&mut self, addr: i16, bytes: i16, size: i32) -> Result<(), CodegenError> {
        self.emit(ldx(Size::DW, R3, FP, addr));
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R3));
        self.emit(mov(R1, FP));
        self.emit(alu_imm(Alu::Add, R1, bytes as i32));
        self.emit(mov_imm(R2, size));
        self.emit(call(Helper::ProbeReadKernel));
        self.fault_on_read_error()
    }

    /// An IPv4 address as "a.b.c.d" into scratch slot `dst`: r2 the text, r4
    /// its length.
    fn inet4_text(&mut self, addr: i16, bytes: i16, dst: i32, full: Label) -> Result<(), CodegenError> {
        self.read_kernel_bytes(addr, bytes, 4)?;
        self.dst_into_r2(dst);
        self.emit(mov_imm(R4, 0));
        self.dotted_quad(bytes, full);
        Ok(())
    }

    /// Appends the four bytes at stack offset `bytes` as "a.b.c.d" at r2[r4..]
    /// (at most 15 characters).
    fn dotted_quad(&mut self, bytes: i16, full: Label) {
        for k in 0..4 {
            self.emit(ldx(Size::B, R5, FP, bytes + k));
            // Hundreds and tens only when they are not leading zeros.
            let no_hundreds = self.new_label();
            let tens = self.new_label();
            let no_tens = self.new_label();
            self.jump(jmp_imm(Cond::Lt, R5, 100, 0), no_hundreds);
            self.emit(mov(R1, R5));
            self.emit(alu_imm(Alu::Div, R1, 100));
            self.put_digit(R1, full);
            self.jump(ja(0), tens);
            self.bind(no_hundreds);
            self.jump(jmp_imm(Cond::Lt, R5, 10, 0), no_tens);
            self.bind(tens);
            self.emit(mov(R1, R5));
            self.emit(alu_imm(Alu::Div, R1, 10));
            self.emit(alu_imm(Alu::Mod, R1, 10));
            self.put_digit(R1, full);
            self.bind(no_tens);
            self.emit(mov(R1, R5));
            self.emit(alu_imm(Alu::Mod, R1, 10));
            self.put_digit(R1, full);
            if k < 3 {
                self.put_byte(b'.', full);
            }
        }
    }

    /// An IPv6 address as illumos' inet_ntoa6 writes it (RFC 1884): groups
    /// in lowercase hex without leading zeros, the longest zero run as "::"
    /// (chosen by illumos' byte-wise walk, quirks included), and an IPv4
    /// mapped or compatible address with a dotted tail, or for inet_ntoa6
    /// (`v4_alone`) as the dotted quad alone. r2 the text, r4 its length.
    fn inet6_text(&mut self, addr: i16, bytes: i16, dst: i32, full: Label, v4_alone: bool) -> Result<(), CodegenError> {
        self.read_kernel_bytes(addr, bytes, 16)?;
        let (first_zero, zero_bytes, v6_end) = (self.alloc_slot(8)?, self.alloc_slot(8)?, self.alloc_slot(8)?);
        let (run_first, run_last, no_colon_after) = (self.alloc_slot(8)?, self.alloc_slot(8)?, self.alloc_slot(8)?);
        // illumos' zero-run walk: r3 the run being tried (-1: none), r4 the
        // first zero of the longest run so far, r1 its length in bytes
        // (starts at 1, so a lone zero byte never counts).
        self.emit(mov_imm(R3, -1));
        self.emit(mov_imm(R4, -1));
        self.emit(mov_imm(R1, 1));
        for i in 0..16i32 {
            let step_end = self.new_label();
            let run_goes_on = self.new_label();
            self.emit(ldx(Size::B, R5, FP, bytes + i as i16));
            if i % 2 == 0 {
                self.jump(jmp_imm(Cond::Ne, R5, 0, 0), run_goes_on);
                self.jump(jmp_imm(Cond::Ne, R3, -1, 0), run_goes_on);
                self.emit(mov_imm(R3, i));
                self.jump(ja(0), step_end);
            }
            self.bind(run_goes_on);
            self.jump(jmp_imm(Cond::Eq, R3, -1, 0), step_end);
            if i != 15 {
                self.jump(jmp_imm(Cond::Eq, R5, 0, 0), step_end);
            }
            // The run ends here: the longest so far only if strictly longer.
            let longer = self.new_label();
            self.emit(mov_imm(R0, i));
            self.emit(alu_reg(Alu::Sub, R0, R3));
            self.jump(jmp_reg(Cond::Sgt, R0, R1, 0), longer);
            self.emit(mov_imm(R3, -1));
            self.jump(ja(0), step_end);
            self.bind(longer);
            self.emit(mov(R4, R3));
            self.emit(mov_imm(R1, i - i % 2));
            self.emit(alu_reg(Alu::Sub, R1, R3));
            self.emit(mov_imm(R3, -1));
            if i == 15 {
                self.jump(jmp_imm(Cond::Ne, R5, 0, 0), step_end);
                self.emit(alu_imm(Alu::Add, R1, 2));
            }
            self.bind(step_end);
            // Each step's outcomes look alike to the verifier from here.
            for reg in [R1, R3, R4] {
                self.forget(reg);
            }
        }
        self.emit(stx(Size::DW, FP, first_zero, R4));
        self.emit(stx(Size::DW, FP, zero_bytes, R1));
        self.dst_into_r2(dst);
        self.emit(mov_imm(R4, 0));
        // IPv4-mapped (::ffff:a.b.c.d) or -compatible (::a.b.c.d, but not ::
        // or ::1): the last four bytes are written as a dotted quad.
        let word = |b: [u8; 4]| u32::from_ne_bytes(b) as u64;
        let embedded = self.new_label();
        let plain = self.new_label();
        let groups = self.new_label();
        self.emit(st_imm(Size::DW, FP, v6_end, 14));
        self.emit(ldx(Size::W, R0, FP, bytes));
        self.emit(ldx(Size::W, R1, FP, bytes + 4));
        self.emit(alu_reg(Alu::Or, R0, R1));
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), plain);
        self.emit(ldx(Size::W, R0, FP, bytes + 8));
        self.load_const(R1, word([0, 0, 0xff, 0xff]));
        self.jump(jmp_reg(Cond::Eq, R0, R1, 0), embedded);
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), plain);
        self.emit(ldx(Size::W, R0, FP, bytes + 12));
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), plain);
        self.load_const(R1, word([0, 0, 0, 1]));
        self.jump(jmp_reg(Cond::Eq, R0, R1, 0), plain);
        self.bind(embedded);
        if v4_alone {
            self.dotted_quad(bytes + 12, full);
            self.jump(ja(0), full);
        } else {
            self.emit(st_imm(Size::DW, FP, v6_end, 10));
        }
        self.bind(plain);
        // The run is written as "::" only when the walk backwards from
        // v6_end would meet its last group (an IPv4-compatible address whose
        // zeros reach into the dotted part is written in full); the group
        // just before the run has no ':' of its own.
        self.emit(st_imm(Size::DW, FP, run_first, 16));
        self.emit(st_imm(Size::DW, FP, run_last, -16));
        self.emit(ldx(Size::DW, R1, FP, first_zero));
        self.emit(mov(R0, R1));
        self.emit(alu_imm(Alu::Sub, R0, 2));
        self.emit(stx(Size::DW, FP, no_colon_after, R0));
        self.jump(jmp_imm(Cond::Slt, R1, 0, 0), groups);
        self.emit(ldx(Size::DW, R5, FP, zero_bytes));
        self.emit(alu_reg(Alu::Add, R0, R5));
        self.emit(ldx(Size::DW, R5, FP, v6_end));
        self.jump(jmp_reg(Cond::Sgt, R0, R5, 0), groups);
        self.emit(stx(Size::DW, FP, run_first, R1));
        self.emit(stx(Size::DW, FP, run_last, R0));
        self.bind(groups);
        let tail = self.new_label();
        for i in (0..16i32).step_by(2) {
            let outside_run = self.new_label();
            let next = self.new_label();
            if i > 10 {
                self.emit(ldx(Size::DW, R0, FP, v6_end));
                self.jump(jmp_imm(Cond::Slt, R0, i, 0), tail);
            }
            self.emit(ldx(Size::DW, R0, FP, run_first));
            self.jump(jmp_imm(Cond::Sgt, R0, i, 0), outside_run);
            self.emit(ldx(Size::DW, R1, FP, run_last));
            self.jump(jmp_imm(Cond::Slt, R1, i, 0), outside_run);
            self.jump(jmp_imm(Cond::Ne, R0, i, 0), next);
            self.put_byte(b':', full);
            self.put_byte(b':', full);
            self.jump(ja(0), next);
            self.bind(outside_run);
            self.emit(ldx(Size::B, R5, FP, bytes + i as i16));
            self.emit(alu_imm(Alu::Lsh, R5, 8));
            self.emit(ldx(Size::B, R0, FP, bytes + i as i16 + 1));
            self.emit(alu_reg(Alu::Or, R5, R0));
            self.hex_without_leading_zeros(full);
            if i < 14 {
                self.emit(ldx(Size::DW, R0, FP, no_colon_after));
                self.jump(jmp_imm(Cond::Eq, R0, i, 0), next);
                self.put_byte(b':', full);
            }
            self.bind(next);
            // Every group's length is one path; the next group need not care.
            self.launder(R4);
        }
        self.bind(tail);
        if !v4_alone {
            self.emit(ldx(Size::DW, R0, FP, v6_end));
            self.jump(jmp_imm(Cond::Ne, R0, 10, 0), full);
            self.dotted_quad(bytes + 12, full);
        }
        Ok(())
    }

    /// Appends r5 (below 0x10000) in lowercase hex without leading zeros.
    fn hex_without_leading_zeros(&mut self, full: Label) {
        let digits: Vec<Label> = (0..4).map(|_| self.new_label()).collect();
        for (d, limit) in [(3, 0x1000), (2, 0x100), (1, 0x10)] {
            self.jump(jmp_imm(Cond::Ge, R5, limit, 0), digits[d]);
        }
        self.jump(ja(0), digits[0]);
        for d in (0..4).rev() {
            self.bind(digits[d]);
            self.emit(mov(R1, R5));
            self.emit(alu_imm(Alu::Rsh, R1, 4 * d as i32));
            self.emit(alu_imm(Alu::And, R1, 0xf));
            self.emit(jmp_imm(Cond::Lt, R1, 10, 1));
            self.emit(alu_imm(Alu::Add, R1, (b'a' - b'0') as i32 - 10));
            self.put_digit(R1, full);
        }
    }

    /// dst[r4++] = c, unless the string is full.
    fn put_byte(&mut self, c: u8, full: Label) {
        self.emit(mov_imm(R1, c as i32));
        self.put_char(R1, full);
    }

    /// dst[r4++] = '0' + reg, unless the string is full.
    fn put_digit(&mut self, reg: Reg, full: Label) {
        self.emit(alu_imm(Alu::Add, reg, b'0' as i32));
        self.put_char(reg, full);
    }

    /// dst[r4++] = reg, unless the string is full (r2 is dst).
    fn put_char(&mut self, reg: Reg, full: Label) {
        self.jump(jmp_imm(Cond::Ge, R4, self.strsize() - 1, 0), full);
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(stx(Size::B, R0, 0, reg));
        self.emit(alu_imm(Alu::Add, R4, 1));
    }

    /// Evaluates `e` into a new stack slot; returns the slot.
    fn stash(&mut self, e: &TExpr) -> Result<i16, CodegenError> {
        self.expr(e)?;
        let slot = self.alloc_slot(8)?;
        self.emit(stx(Size::DW, FP, slot, R0));
        Ok(slot)
    }

    fn dst_into_r2(&mut self, dst: i32) {
        self.emit(mov(R2, R8));
        self.emit(alu_imm(Alu::Add, R2, dst));
    }

    fn dst_into_r0(&mut self, dst: i32) {
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, dst));
    }

    /// r5 = the byte at r1 + r3 (r3 already checked against strsize).
    fn load_source_byte(&mut self) {
        self.emit(mov(R0, R1));
        self.emit(alu_reg(Alu::Add, R0, R3));
        self.emit(ldx(Size::B, R5, R0, 0));
    }

    /// r4 = strlen(r1), at most strsize - 1.
    /// strtoll(s[, base]): r0 = the value. r1 the string, r2 the base, r3
    /// the index, r4 the value, r5 the byte; the sign waits in a slot.
    fn strtoll(&mut self, args: &[TExpr]) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        // Its loop launders through scratch memory.
        self.used_scratch = true;
        let text = self.stash(&args[0])?;
        match args.get(1) {
            Some(base) => self.expr(base)?,
            None => self.emit(mov_imm(R0, 10)),
        }
        let base = self.alloc_slot(8)?;
        let negative = self.alloc_slot(8)?;
        self.emit(stx(Size::DW, FP, base, R0));
        // A base outside 2..36 is an illegal operation, as in DTrace.
        let base_ok = self.new_label();
        self.emit(alu_imm(Alu::Sub, R0, 2));
        self.jump(jmp_imm(Cond::Le, R0, 34, 0), base_ok);
        self.emit(ldx(Size::DW, R1, FP, base));
        self.raise_fault(layout::FAULT_ILLOP)?;
        self.bind(base_ok);
        self.emit(st_imm(Size::DW, FP, negative, 0));
        self.emit(ldx(Size::DW, R1, FP, text));
        self.emit(mov_imm(R3, 0));
        self.emit(mov_imm(R4, 0));
        let last = self.strsize() - 1;
        let byte_at_r3 = |e: &mut Self| {
            e.emit(mov(R0, R1));
            e.emit(alu_reg(Alu::Add, R0, R3));
            e.emit(ldx(Size::B, R5, R0, 0));
        };
        // Blanks before the number.
        let (blanks, signed) = (self.new_label(), self.new_label());
        self.bind(blanks);
        self.exit_if(Cond::Gt, R3, last, signed);
        byte_at_r3(self);
        let blank = self.new_label();
        self.jump(jmp_imm(Cond::Eq, R5, b' ' as i32, 0), blank);
        self.exit_if(Cond::Ne, R5, b'\t' as i32, signed);
        self.bind(blank);
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.jump(ja(0), blanks);
        self.bind(signed);
        self.launder(R3);
        // A sign.
        let unsigned = self.new_label();
        self.jump(jmp_imm(Cond::Gt, R3, last, 0), unsigned);
        byte_at_r3(self);
        let plus = self.new_label();
        self.jump(jmp_imm(Cond::Eq, R5, b'+' as i32, 0), plus);
        self.jump(jmp_imm(Cond::Ne, R5, b'-' as i32, 0), unsigned);
        self.emit(st_imm(Size::DW, FP, negative, 1));
        self.bind(plus);
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.bind(unsigned);
        self.launder(R3);
        // In base 16, a 0x or 0X before a hex digit.
        let digits = self.new_label();
        self.emit(ldx(Size::DW, R2, FP, base));
        self.jump(jmp_imm(Cond::Ne, R2, 16, 0), digits);
        self.jump(jmp_imm(Cond::Gt, R3, last - 2, 0), digits);
        byte_at_r3(self);
        self.jump(jmp_imm(Cond::Ne, R5, b'0' as i32, 0), digits);
        self.emit(ldx(Size::B, R5, R0, 1));
        self.emit(alu_imm(Alu::Or, R5, 0x20));
        self.jump(jmp_imm(Cond::Ne, R5, b'x' as i32, 0), digits);
        self.emit(ldx(Size::B, R5, R0, 2));
        self.hex_digit_r5_into_r5();
        self.jump(jmp_imm(Cond::Ge, R5, 16, 0), digits);
        self.emit(alu_imm(Alu::Add, R3, 2));
        self.bind(digits);
        self.launder(R3);
        // The digits: each below the base.
        let (top, done) = (self.new_label(), self.new_label());
        self.emit(ldx(Size::DW, R1, FP, text));
        self.emit(ldx(Size::DW, R2, FP, base));
        self.bind(top);
        self.exit_if(Cond::Gt, R3, last, done);
        byte_at_r3(self);
        self.hex_digit_r5_into_r5();
        // Digits and letters take different ways: one state again (else
        // each pass would double the states the verifier follows).
        if self.with_scratch {
            self.forget(R5);
        }
        self.exit_if_reg(Cond::Ge, R5, R2, done);
        self.emit(alu_reg(Alu::Mul, R4, R2));
        self.emit(alu_reg(Alu::Add, R4, R5));
        if self.with_scratch {
            self.forget(R4);
        }
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.jump(ja(0), top);
        self.bind(done);
        // One state after the loop, whichever pass left it.
        self.launder(R4);
        self.emit(mov_imm(R3, 0));
        self.emit(mov_imm(R2, 0));
        self.emit(mov(R0, R4));
        let positive = self.new_label();
        self.emit(ldx(Size::DW, R1, FP, negative));
        self.jump(jmp_imm(Cond::Eq, R1, 0, 0), positive);
        self.emit(alu_imm(Alu::Neg, R0, 0));
        self.bind(positive);
        self.stack_top = saved;
        Ok(())
    }

    /// r5 = the value of the digit or letter in r5 (0-9, a-z, A-Z: 0..35),
    /// or 36 for any other byte.
    fn hex_digit_r5_into_r5(&mut self) {
        let (letter, done) = (self.new_label(), self.new_label());
        self.emit(alu_imm(Alu::Sub, R5, b'0' as i32));
        self.jump(jmp_imm(Cond::Le, R5, 9, 0), done);
        // Letters of either case: 'A' - '0' = 17; lower case sets bit 0x20.
        self.emit(alu_imm(Alu::Add, R5, b'0' as i32));
        self.emit(alu_imm(Alu::Or, R5, 0x20));
        self.emit(alu_imm(Alu::Sub, R5, b'a' as i32));
        self.jump(jmp_imm(Cond::Le, R5, 25, 0), letter);
        self.emit(mov_imm(R5, 36));
        self.jump(ja(0), done);
        self.bind(letter);
        self.emit(alu_imm(Alu::Add, R5, 10));
        self.bind(done);
    }

    fn strlen_r1_into_r4(&mut self) {
        let top = self.new_label();
        let end = self.new_label();
        self.emit(mov_imm(R4, 0));
        self.bind(top);
        self.exit_if(Cond::Ge, R4, self.strsize() - 1, end);
        self.emit(mov(R0, R1));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(ldx(Size::B, R5, R0, 0));
        self.exit_if(Cond::Eq, R5, 0, end);
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.jump(ja(0), top);
        self.bind(end);
        self.launder(R4);
    }

    /// Copies bytes from r1[r3..] to r2[r4..] until a NUL, the exclusive end
    /// index in `end` (a stack slot), or strsize; then writes the NUL.
    fn copy_loop(&mut self, end: Option<i16>, case: Case) {
        let top = self.new_label();
        let done = self.new_label();
        self.bind(top);
        self.exit_if(Cond::Ge, R3, self.strsize(), done);
        self.exit_if(Cond::Ge, R4, self.strsize() - 1, done);
        if let Some(slot) = end {
            self.emit(ldx(Size::DW, R0, FP, slot));
            self.exit_if_reg(Cond::Sge, R3, R0, done);
        }
        self.load_source_byte();
        self.exit_if(Cond::Eq, R5, 0, done);
        let (low, high, delta) = match case {
            Case::Keep => (0, -1, 0),
            Case::Upper => (b'a' as i32, b'z' as i32, -32),
            Case::Lower => (b'A' as i32, b'Z' as i32, 32),
        };
        if delta != 0 {
            self.emit(jmp_imm(Cond::Lt, R5, low, 2));
            self.emit(jmp_imm(Cond::Gt, R5, high, 1));
            self.emit(alu_imm(Alu::Add, R5, delta));
        }
        self.copy_byte_r5();
        self.jump(ja(0), top);
        self.bind(done);
        self.launder(R4);
        self.terminate_at_r4();
    }

    /// One byte of a copy: dst[r4++] = r5 (r2 is dst), r3++.
    fn copy_byte_r5(&mut self) {
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(stx(Size::B, R0, 0, R5));
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.emit(alu_imm(Alu::Add, R4, 1));
    }

    /// dst[r4] = NUL (r2 is dst), when r4 is inside the string.
    fn terminate_at_r4(&mut self) {
        self.emit(jmp_imm(Cond::Ge, R4, self.strsize(), 3));
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(st_imm(Size::B, R0, 0, 0));
    }

    /// substr(s, index[, length]) with illumos DTrace's rules for negative
    /// index and length.
    fn substr(&mut self, args: &[TExpr]) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let s = self.stash(&args[0])?;
        let index = self.stash(&args[1])?;
        let remaining = match args.get(2) {
            Some(len) => self.stash(len)?,
            None => {
                let slot = self.alloc_slot(8)?;
                self.emit(st_imm(Size::DW, FP, slot, self.strsize()));
                slot
            }
        };
        let dst = self.scratch_slot()?;
        let len = self.alloc_slot(8)?;
        let end = self.alloc_slot(8)?;
        self.emit(ldx(Size::DW, R1, FP, s));
        self.strlen_r1_into_r4();
        self.emit(stx(Size::DW, FP, len, R4));
        // r3 = index, r5 = remaining, r4 = len
        self.emit(ldx(Size::DW, R3, FP, index));
        self.emit(ldx(Size::DW, R5, FP, remaining));
        let index_ok = self.new_label();
        self.jump(jmp_imm(Cond::Sge, R3, 0, 0), index_ok);
        self.emit(alu_reg(Alu::Add, R3, R4));
        // Still before the start: the part from the start that the length reaches.
        self.jump(jmp_imm(Cond::Sge, R3, 0, 0), index_ok);
        self.emit(mov(R0, R3));
        self.emit(alu_reg(Alu::Add, R0, R5));
        self.jump(jmp_imm(Cond::Sle, R0, 0, 0), index_ok);
        self.emit(alu_reg(Alu::Add, R5, R3));
        self.emit(mov_imm(R3, 0));
        self.bind(index_ok);
        let empty = self.new_label();
        let copy = self.new_label();
        self.jump(jmp_imm(Cond::Slt, R3, 0, 0), empty);
        self.jump(jmp_reg(Cond::Sge, R3, R4, 0), empty);
        let positive = self.new_label();
        self.jump(jmp_imm(Cond::Sge, R5, 0, 0), positive);
        // A negative length counts back from the end.
        self.emit(alu_reg(Alu::Add, R5, R4));
        self.emit(alu_reg(Alu::Sub, R5, R3));
        self.bind(positive);
        self.jump(jmp_imm(Cond::Sle, R5, 0, 0), empty);
        self.emit(mov(R0, R3));
        self.emit(alu_reg(Alu::Add, R0, R5));
        self.emit(stx(Size::DW, FP, end, R0));
        self.jump(ja(0), copy);
        self.bind(empty);
        self.emit(mov_imm(R3, 0));
        self.emit(st_imm(Size::DW, FP, end, 0));
        self.bind(copy);
        self.emit(ldx(Size::DW, R1, FP, s));
        self.dst_into_r2(dst);
        self.emit(mov_imm(R4, 0));
        self.copy_loop(Some(end), Case::Keep);
        self.dst_into_r0(dst);
        self.stack_top = saved;
        Ok(())
    }

    /// r3 moves back from r3 while the byte at r3 is (`slash`) or is not a
    /// slash; stops at -1.
    fn scan_back(&mut self, while_slash: bool) {
        let top = self.new_label();
        let done = self.new_label();
        self.bind(top);
        self.jump(jmp_imm(Cond::Slt, R3, 0, 0), done);
        self.jump(jmp_imm(Cond::Ge, R3, self.strsize(), 0), done);
        self.load_source_byte();
        let cond = if while_slash { Cond::Ne } else { Cond::Eq };
        self.jump(jmp_imm(cond, R5, SLASH, 0), done);
        self.emit(alu_imm(Alu::Sub, R3, 1));
        self.jump(ja(0), top);
        self.bind(done);
        self.launder(R3);
    }

    /// basename(s) / dirname(s), as illumos DTrace computes them.
    fn path_part(&mut self, arg: &TExpr, dirname: bool) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let s = self.stash(arg)?;
        let dst = self.scratch_slot()?;
        let (lastbase, firstbase, lastdir, end) =
            (self.alloc_slot(8)?, self.alloc_slot(8)?, self.alloc_slot(8)?, self.alloc_slot(8)?);
        let dot =
            self.program.strings.iter().position(|s| s == b".").ok_or_else(|| {
                CodegenError("internal error: the \".\" constant of basename/dirname is missing".into())
            })?;
        // The empty string is ".".
        self.emit(ldx(Size::DW, R1, FP, s));
        self.strlen_r1_into_r4();
        let nonempty = self.new_label();
        self.jump(jmp_imm(Cond::Ne, R4, 0, 0), nonempty);
        self.string_const(dot);
        self.emit(stx(Size::DW, FP, s, R0));
        self.emit(mov_imm(R4, 1));
        self.bind(nonempty);
        self.emit(ldx(Size::DW, R1, FP, s));
        self.emit(mov(R3, R4));
        self.emit(alu_imm(Alu::Sub, R3, 1));
        self.scan_back(true);
        self.emit(stx(Size::DW, FP, lastbase, R3));
        self.scan_back(false);
        self.emit(mov(R0, R3));
        self.emit(alu_imm(Alu::Add, R0, 1));
        self.emit(jmp_imm(Cond::Sge, R3, 0, 1));
        self.emit(mov_imm(R0, -1));
        self.emit(stx(Size::DW, FP, firstbase, R0));
        self.scan_back(true);
        self.emit(stx(Size::DW, FP, lastdir, R3));
        // Only slashes: both are "/".
        let not_all_slashes = self.new_label();
        self.emit(ldx(Size::DW, R0, FP, lastbase));
        self.jump(jmp_imm(Cond::Sge, R0, 0, 0), not_all_slashes);
        for slot in [lastbase, firstbase, lastdir] {
            self.emit(st_imm(Size::DW, FP, slot, 0));
        }
        self.bind(not_all_slashes);
        // No slash at all: dirname is ".", basename the whole string.
        let has_slash = self.new_label();
        self.emit(ldx(Size::DW, R0, FP, firstbase));
        self.jump(jmp_imm(Cond::Sge, R0, 0, 0), has_slash);
        if dirname {
            self.string_const(dot);
            self.emit(stx(Size::DW, FP, s, R0));
            self.emit(st_imm(Size::DW, FP, lastdir, 0));
        } else {
            self.emit(st_imm(Size::DW, FP, firstbase, 0));
        }
        self.bind(has_slash);
        if dirname {
            // "/name": the directory is "/".
            self.emit(ldx(Size::DW, R0, FP, lastdir));
            self.emit(jmp_imm(Cond::Sge, R0, 0, 1));
            self.emit(mov_imm(R0, 0));
            self.emit(alu_imm(Alu::Add, R0, 1));
            self.emit(stx(Size::DW, FP, end, R0));
            self.emit(mov_imm(R3, 0));
        } else {
            self.emit(ldx(Size::DW, R0, FP, lastbase));
            self.emit(alu_imm(Alu::Add, R0, 1));
            self.emit(stx(Size::DW, FP, end, R0));
            self.emit(ldx(Size::DW, R3, FP, firstbase));
        }
        self.emit(ldx(Size::DW, R1, FP, s));
        self.dst_into_r2(dst);
        self.emit(mov_imm(R4, 0));
        self.copy_loop(Some(end), Case::Keep);
        self.dst_into_r0(dst);
        self.stack_top = saved;
        Ok(())
    }

    /// strchr(s, c) / strrchr(s, c): the rest of s from the first (last) c,
    /// or the empty string.
    fn strchr(&mut self, args: &[TExpr], last: bool) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let s = self.stash(&args[0])?;
        let c = self.stash(&args[1])?;
        let dst = self.scratch_slot()?;
        let found = self.alloc_slot(8)?;
        self.emit(st_imm(Size::DW, FP, found, -1));
        self.emit(ldx(Size::DW, R1, FP, s));
        self.emit(ldx(Size::DW, R2, FP, c));
        self.emit(alu_imm(Alu::And, R2, 0xff));
        self.emit(mov_imm(R3, 0));
        let top = self.new_label();
        let done = self.new_label();
        let next = self.new_label();
        self.bind(top);
        self.jump(jmp_imm(Cond::Ge, R3, self.strsize() - 1, 0), done);
        self.load_source_byte();
        self.jump(jmp_imm(Cond::Eq, R5, 0, 0), done);
        self.jump(jmp_reg(Cond::Ne, R5, R2, 0), next);
        self.emit(stx(Size::DW, FP, found, R3));
        if !last {
            self.jump(ja(0), done);
        }
        self.bind(next);
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.jump(ja(0), top);
        self.bind(done);
        self.emit(ldx(Size::DW, R3, FP, found));
        self.suffix_or_empty(s, dst);
        self.stack_top = saved;
        Ok(())
    }

    /// r0 = the string in stack slot `s` from index r3 on, copied to scratch
    /// slot `dst`; or, for a negative r3 (not found), the empty string: where
    /// DTrace's result is NULL, ours is "".
    fn suffix_or_empty(&mut self, s: i16, dst: i32) {
        let hit = self.new_label();
        let end = self.new_label();
        self.launder(R3);
        self.jump(jmp_imm(Cond::Sge, R3, 0, 0), hit);
        self.string_const(0);
        self.jump(ja(0), end);
        self.bind(hit);
        self.emit(ldx(Size::DW, R1, FP, s));
        self.dst_into_r2(dst);
        self.emit(mov_imm(R4, 0));
        self.copy_loop(None, Case::Keep);
        self.dst_into_r0(dst);
        self.bind(end);
    }

    /// index(s, subs[, start]) (forward), rindex(s, subs[, start])
    /// (backward), and strstr(s, subs) (forward, no start) with illumos
    /// DTrace's rules for an empty subs and a start out of range: r0 = the
    /// position, or -1. Returns the stack slot holding s.
    ///
    /// The search is Knuth-Morris-Pratt's, two loops of at most 2·strsize
    /// passes: a naive search nests one loop in another, which the verifier
    /// checks at the product of their lengths.
    fn string_search(&mut self, args: &[TExpr], direction: Direction) -> Result<i16, CodegenError> {
        let s = self.stash(&args[0])?;
        let pattern = self.stash(&args[1])?;
        let start = match args.get(2) {
            Some(start) => self.stash(start)?,
            None => {
                // index's default is the start of s, rindex's its end
                // (strsize is past any end and is clamped to it).
                let slot = self.alloc_slot(8)?;
                let default = if direction == Direction::Forward { 0 } else { self.strsize() };
                self.emit(st_imm(Size::DW, FP, slot, default));
                slot
            }
        };
        let (len, pattern_len) = (self.alloc_slot(8)?, self.alloc_slot(8)?);
        self.used_scratch = true;
        self.emit(ldx(Size::DW, R1, FP, s));
        self.strlen_r1_into_r4();
        self.emit(stx(Size::DW, FP, len, R4));
        self.emit(ldx(Size::DW, R1, FP, pattern));
        self.strlen_r1_into_r4();
        self.emit(stx(Size::DW, FP, pattern_len, R4));
        let (search, not_found, done) = (self.new_label(), self.new_label(), self.new_label());
        // r3 = start clamped to [0, len]: the answer for an empty subs.
        self.emit(ldx(Size::DW, R3, FP, start));
        self.emit(ldx(Size::DW, R5, FP, len));
        self.emit(jmp_imm(Cond::Sge, R3, 0, 1));
        self.emit(mov_imm(R3, 0));
        self.emit(jmp_reg(Cond::Sle, R3, R5, 1));
        self.emit(mov(R3, R5));
        self.jump(jmp_imm(Cond::Ne, R4, 0, 0), search);
        self.emit(mov(R0, R3));
        self.jump(ja(0), done);
        self.bind(search);
        match direction {
            Direction::Forward => {
                // From the clamped start; nothing at or after the end.
                self.jump(jmp_reg(Cond::Ge, R3, R5, 0), not_found);
            }
            Direction::Backward => {
                // Nothing before a negative start. A match starting at or
                // before the start ends by start + |subs|: the backward
                // walk begins there.
                self.emit(ldx(Size::DW, R0, FP, start));
                self.jump(jmp_imm(Cond::Slt, R0, 0, 0), not_found);
                self.emit(alu_reg(Alu::Add, R3, R4));
                self.emit(jmp_reg(Cond::Sle, R3, R5, 1));
                self.emit(mov(R3, R5));
                self.emit(alu_imm(Alu::Sub, R3, 1));
            }
        }
        self.emit(stx(Size::DW, FP, start, R3));
        self.failure_table(pattern, pattern_len, direction)?;
        self.kmp_search(s, pattern, start, pattern_len, len, direction, not_found, done)?;
        self.bind(not_found);
        self.emit(mov_imm(R0, -1));
        self.bind(done);
        Ok(s)
    }

    /// `into` = byte `index` of the pattern in stack slot `pattern` (length
    /// in slot `len`), counted from its end for a backward search; jumps to
    /// `bad` when the index is outside the string (never at run time, but
    /// the verifier needs the bound). Uses r1.
    fn pattern_byte(&mut self, index: Reg, into: Reg, pattern: i16, len: i16, direction: Direction, bad: Label) {
        self.emit(mov(R1, index));
        if direction == Direction::Backward {
            self.emit(neg(R1));
            self.emit(ldx(Size::DW, into, FP, len));
            self.emit(alu_reg(Alu::Add, R1, into));
            self.emit(alu_imm(Alu::Sub, R1, 1));
        }
        self.exit_if(Cond::Ge, R1, self.strsize(), bad);
        self.emit(ldx(Size::DW, into, FP, pattern));
        self.emit(alu_reg(Alu::Add, into, R1));
        self.emit(ldx(Size::B, into, into, 0));
    }

    /// r1 = the address of 16-bit entry `index` of the scratch work area;
    /// jumps to `bad` past its end.
    fn work_entry(&mut self, index: Reg, bad: Label) {
        self.exit_if(Cond::Ge, index, self.strsize(), bad);
        self.emit(mov(R1, index));
        self.emit(alu_imm(Alu::Lsh, R1, 1));
        self.emit(alu_reg(Alu::Add, R1, R8));
        self.emit(alu_imm(Alu::Add, R1, self.scratch.work as i32));
    }

    /// Knuth-Morris-Pratt's failure table of the pattern (read backwards
    /// for a backward search) in the work area: entry t is the length of the
    /// longest proper prefix of the pattern's first t + 1 bytes that is also
    /// their suffix. r3 = t, r4 = that length for the bytes before t.
    fn failure_table(&mut self, pattern: i16, len: i16, direction: Direction) -> Result<(), CodegenError> {
        let (top, done) = (self.new_label(), self.new_label());
        let matched = self.alloc_slot(8)?;
        self.forget_slots(&[len]);
        self.emit(mov(R1, R8));
        self.emit(alu_imm(Alu::Add, R1, self.scratch.work as i32));
        self.emit(st_imm(Size::H, R1, 0, 0));
        self.emit(mov_imm(R2, 0));
        self.emit(mov_imm(R3, 1));
        self.emit(mov_imm(R4, 0));
        self.bind(top);
        self.exit_if(Cond::Ge, R2, 2 * self.strsize(), done);
        self.emit(ldx(Size::DW, R0, FP, len));
        self.exit_if_reg(Cond::Ge, R3, R0, done);
        self.pattern_byte(R3, R5, pattern, len, direction, done);
        self.pattern_byte(R4, R0, pattern, len, direction, done);
        self.kmp_step(matched, 1, true, done);
        self.jump(ja(0), top);
        self.bind(done);
        Ok(())
    }

    /// The search proper, from the index in slot `start` of s: r0 = where
    /// the first (backward: last) match starts, then a jump to `done`; or a
    /// jump to `not_found`. r3 is the index in s, r4 the bytes matched.
    #[allow(clippy::too_many_arguments)]
    fn kmp_search(
        &mut self,
        s: i16,
        pattern: i16,
        start: i16,
        pattern_len: i16,
        len: i16,
        direction: Direction,
        not_found: Label,
        done: Label,
    ) -> Result<(), CodegenError> {
        let (top, found) = (self.new_label(), self.new_label());
        let matched = self.alloc_slot(8)?;
        self.forget_slots(&[start, pattern_len, len]);
        self.emit(mov_imm(R2, 0));
        self.emit(ldx(Size::DW, R3, FP, start));
        self.emit(mov_imm(R4, 0));
        self.bind(top);
        self.exit_if(Cond::Ge, R2, 2 * self.strsize(), not_found);
        self.emit(ldx(Size::DW, R0, FP, pattern_len));
        self.exit_if_reg(Cond::Ge, R4, R0, found);
        if direction == Direction::Forward {
            self.emit(ldx(Size::DW, R0, FP, len));
            self.exit_if_reg(Cond::Ge, R3, R0, not_found);
        }
        // Unsigned: a backward walk past the start is out of range too.
        self.exit_if(Cond::Ge, R3, self.strsize(), not_found);
        self.emit(ldx(Size::DW, R1, FP, s));
        self.load_source_byte();
        self.pattern_byte(R4, R0, pattern, pattern_len, direction, not_found);
        let step = if direction == Direction::Forward { 1 } else { -1 };
        self.kmp_step(matched, step, false, not_found);
        self.jump(ja(0), top);
        self.bind(found);
        self.emit(mov(R0, R3));
        match direction {
            Direction::Forward => self.emit(alu_reg(Alu::Sub, R0, R4)),
            Direction::Backward => self.emit(alu_imm(Alu::Add, R0, 1)),
        }
        self.jump(ja(0), done);
        Ok(())
    }

    /// One pass of Knuth-Morris-Pratt after comparing bytes r5 and r0, with
    /// r3 the position, r4 the bytes matched and r2 the pass count:
    ///
    /// - equal: r3 += step, r4 += 1;
    /// - different, r4 > 0: r4 = table[r4 - 1] (fall back, same position);
    /// - different, r4 = 0: r3 += step.
    ///
    /// Computed without branches, so that a pass is one path for the
    /// verifier: within a loop it records states only every few passes, and
    /// paths that branched in between would multiply until then. Every pass
    /// is verified once (r2 counts them, r3 and r4 go through map memory):
    /// two loops of at most 2·strsize passes, where a naive search nests one
    /// loop in another, which the verifier checks at the product of their
    /// lengths. `write_table`: table[r3] = the new r4 (when r3 stays, the
    /// entry is rewritten before anything reads it).
    fn kmp_step(&mut self, matched: i16, step: i32, write_table: bool, bad: Label) {
        // r5 = 1 if the bytes are equal, else 0 (bytes: r5 ^ r0 < 256).
        self.emit(alu_reg(Alu::Xor, R5, R0));
        self.emit(alu_imm(Alu::Sub, R5, 1));
        self.emit(alu_imm(Alu::Rsh, R5, 63));
        self.emit(stx(Size::DW, FP, matched, R5));
        if write_table {
            self.emit(mov(R0, R4));
            self.emit(alu_imm(Alu::Add, R0, 1));
            self.emit(alu_reg(Alu::Mul, R0, R5));
            self.work_entry(R3, bad);
            self.emit(stx(Size::H, R1, 0, R0));
        }
        // r5 = 1 if r4 > 0; r0 = table[r4 - 1] then, else 0.
        self.emit(mov_imm(R5, 0));
        self.emit(alu_reg(Alu::Sub, R5, R4));
        self.emit(alu_imm(Alu::Rsh, R5, 63));
        self.emit(mov(R0, R4));
        self.emit(alu_reg(Alu::Sub, R0, R5));
        self.work_entry(R0, bad);
        self.emit(ldx(Size::H, R0, R1, 0));
        self.emit(alu_reg(Alu::Mul, R0, R5));
        // The position moves on a match or when there is no fallback.
        self.emit(ldx(Size::DW, R1, FP, matched));
        self.emit(alu_imm(Alu::Xor, R5, 1));
        self.emit(alu_reg(Alu::Or, R5, R1));
        self.emit(alu_reg(if step > 0 { Alu::Add } else { Alu::Sub }, R3, R5));
        // r4 = matched ? r4 + 1 : the fallback.
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.emit(alu_reg(Alu::Mul, R4, R1));
        self.emit(alu_imm(Alu::Xor, R1, 1));
        self.emit(alu_reg(Alu::Mul, R0, R1));
        self.emit(alu_reg(Alu::Add, R4, R0));
        self.emit(alu_imm(Alu::Add, R2, 1));
        self.forget(R3);
        self.forget(R4);
    }

    /// strtok(s, delim) / strtok(NULL, delim), as illumos DTrace: skips
    /// delimiters, returns the token up to the next delimiter (or "" when
    /// only delimiters are left, where DTrace's result is NULL) and saves the
    /// position after it for strtok(NULL, ...) later in the same firing.
    /// strtok(s, ...) copies s to its own buffer, so the saved position
    /// stays valid whatever happens to s; strtok(NULL, ...) with no saved
    /// position reads address 0 in DTrace, and faults here too.
    fn strtok(&mut self, args: &[TExpr]) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let (position, string) = (self.scratch.strtok_position as i32, self.scratch.strtok_string as i32);
        let delim = if args[0].ty == Type::String {
            let s = self.stash(&args[0])?;
            let delim = self.stash(&args[1])?;
            self.emit(ldx(Size::DW, R1, FP, s));
            self.emit(mov(R2, R8));
            self.emit(alu_imm(Alu::Add, R2, string));
            self.emit(mov_imm(R3, 0));
            self.emit(mov_imm(R4, 0));
            self.copy_loop(None, Case::Keep);
            self.emit(mov(R0, R8));
            self.emit(alu_imm(Alu::Add, R0, position));
            self.emit(st_imm(Size::DW, R0, 0, 0));
            delim
        } else {
            self.stash(&args[1])?
        };
        let dst = self.scratch_slot()?;
        let saved_position = self.new_label();
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, position));
        self.emit(ldx(Size::DW, R0, R0, 0));
        self.jump(jmp_imm(Cond::Sge, R0, 0, 0), saved_position);
        self.emit(mov_imm(R1, 0));
        self.raise_fault(layout::FAULT_BADADDR)?;
        self.bind(saved_position);
        self.delimiter_set(delim);
        // Skip delimiters; none but delimiters left: no token.
        let (skip, token, no_token, end) = (self.new_label(), self.new_label(), self.new_label(), self.new_label());
        self.emit(mov(R3, R8));
        self.emit(alu_imm(Alu::Add, R3, position));
        self.emit(ldx(Size::DW, R3, R3, 0));
        self.bind(skip);
        self.exit_if(Cond::Ge, R3, self.strsize(), no_token);
        self.strtok_byte(string);
        self.exit_if(Cond::Eq, R5, 0, no_token);
        self.is_delimiter();
        self.exit_if(Cond::Eq, R0, 0, token);
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.jump(ja(0), skip);
        self.bind(no_token);
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, position));
        self.emit(st_imm(Size::DW, R0, 0, -1));
        self.string_const(0);
        self.jump(ja(0), end);
        // The token: up to a delimiter or the end.
        self.bind(token);
        self.launder(R3);
        let (copy, copied) = (self.new_label(), self.new_label());
        self.dst_into_r2(dst);
        self.emit(mov_imm(R4, 0));
        self.bind(copy);
        self.exit_if(Cond::Ge, R3, self.strsize(), copied);
        self.exit_if(Cond::Ge, R4, self.strsize() - 1, copied);
        self.strtok_byte(string);
        self.exit_if(Cond::Eq, R5, 0, copied);
        self.is_delimiter();
        self.exit_if(Cond::Ne, R0, 0, copied);
        self.copy_byte_r5();
        self.jump(ja(0), copy);
        self.bind(copied);
        self.launder(R4);
        self.terminate_at_r4();
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, position));
        self.emit(stx(Size::DW, R0, 0, R3));
        self.dst_into_r0(dst);
        self.bind(end);
        self.stack_top = saved;
        Ok(())
    }

    /// r5 = byte r3 (below strsize) of strtok's copy of its string.
    fn strtok_byte(&mut self, string: i32) {
        self.emit(mov(R1, R8));
        self.emit(alu_imm(Alu::Add, R1, string));
        self.load_source_byte();
    }

    /// The bytes of the string in stack slot `delim` as a 256-bit set in the
    /// work area, as DTrace's strtok keeps them: one pass over delim, then
    /// one lookup per byte of the string.
    fn delimiter_set(&mut self, delim: i16) {
        let work = self.scratch.work as i32;
        self.emit(mov(R2, R8));
        self.emit(alu_imm(Alu::Add, R2, work));
        for word in 0..4 {
            self.emit(st_imm(Size::DW, R2, 8 * word, 0));
        }
        let (top, done) = (self.new_label(), self.new_label());
        self.emit(ldx(Size::DW, R1, FP, delim));
        self.emit(mov_imm(R3, 0));
        self.bind(top);
        self.exit_if(Cond::Ge, R3, self.strsize(), done);
        self.load_source_byte();
        self.exit_if(Cond::Eq, R5, 0, done);
        // set[c / 8] |= 1 << (c % 8)
        self.emit(mov(R0, R5));
        self.emit(alu_imm(Alu::Rsh, R0, 3));
        self.emit(alu_reg(Alu::Add, R0, R2));
        self.emit(ldx(Size::B, R4, R0, 0));
        self.emit(alu_imm(Alu::And, R5, 7));
        self.emit(mov_imm(R1, 1));
        self.emit(alu_reg(Alu::Lsh, R1, R5));
        self.emit(alu_reg(Alu::Or, R4, R1));
        self.emit(stx(Size::B, R0, 0, R4));
        self.emit(ldx(Size::DW, R1, FP, delim));
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.jump(ja(0), top);
        self.bind(done);
    }

    /// r0 = 1 if byte r5 is in the delimiter set, else 0. Uses r1.
    fn is_delimiter(&mut self) {
        self.emit(mov(R0, R5));
        self.emit(alu_imm(Alu::Rsh, R0, 3));
        self.emit(alu_reg(Alu::Add, R0, R8));
        self.emit(alu_imm(Alu::Add, R0, self.scratch.work as i32));
        self.emit(ldx(Size::B, R0, R0, 0));
        self.emit(mov(R1, R5));
        self.emit(alu_imm(Alu::And, R1, 7));
        self.emit(alu_reg(Alu::Rsh, R0, R1));
        self.emit(alu_imm(Alu::And, R0, 1));
    }

    /// cleanpath(s): illumos DTrace's walk, one byte per pass. `state` says
    /// what the pending bytes are: nothing, "/", "/." or "/..". A "/../"
    /// (or a final "/..") takes the output back to the last '/' written,
    /// which a stack of the positions of the '/' written keeps (in the work
    /// area): DTrace searches back for it, a loop in a loop. As in DTrace,
    /// the output stops 5 bytes before strsize.
    fn cleanpath(&mut self, arg: &TExpr) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let s = self.stash(arg)?;
        let dst = self.scratch_slot()?;
        let (state, slashes) = (self.alloc_slot(8)?, self.alloc_slot(8)?);
        let [top, next, after_slash, after_dot, after_dotdot, slash, up, up_at_end, finish] =
            [(); 9].map(|_| self.new_label());
        self.dst_into_r2(dst);
        // "/.." leaves DTrace's first byte unwritten; ours is the root.
        self.emit(st_imm(Size::B, R2, 0, SLASH));
        self.emit(st_imm(Size::DW, FP, state, 0));
        self.emit(st_imm(Size::DW, FP, slashes, 0));
        self.emit(mov_imm(R3, 0));
        self.emit(mov_imm(R4, 0));
        self.bind(top);
        self.exit_if(Cond::Ge, R3, self.strsize(), finish);
        self.emit(ldx(Size::DW, R1, FP, s));
        self.load_source_byte();
        self.emit(alu_imm(Alu::Add, R3, 1));
        // Through map memory: as an exact value the state would make the
        // verifier check each pass once per state.
        self.emit(ldx(Size::DW, R0, FP, state));
        self.forget(R0);
        self.jump(jmp_imm(Cond::Eq, R0, 1, 0), after_slash);
        self.jump(jmp_imm(Cond::Eq, R0, 2, 0), after_dot);
        self.jump(jmp_imm(Cond::Eq, R0, 3, 0), after_dotdot);
        // A byte of a name, or a slash starting a component.
        self.emit(mov(R0, R4));
        self.emit(alu_imm(Alu::Add, R0, 5));
        self.exit_if(Cond::Ge, R0, self.strsize(), finish);
        self.jump(jmp_imm(Cond::Eq, R5, SLASH, 0), slash);
        self.put_char(R5, finish);
        self.jump(jmp_imm(Cond::Eq, R5, 0, 0), finish);
        self.jump(ja(0), next);
        // "/" then: another slash counts once, a dot may be "/." or "/..".
        self.bind(after_slash);
        self.jump(jmp_imm(Cond::Eq, R5, SLASH, 0), slash);
        self.pending_dot(state, 2, next);
        self.put_component(state, slashes, b"/", next, finish);
        // "/." then: "/./" is nothing, "/.." may go up.
        self.bind(after_dot);
        self.jump(jmp_imm(Cond::Eq, R5, SLASH, 0), slash);
        self.pending_dot(state, 3, next);
        self.put_component(state, slashes, b"/.", next, finish);
        // "/.." then: a slash or the end goes up, anything else is a name.
        self.bind(after_dotdot);
        self.jump(jmp_imm(Cond::Eq, R5, SLASH, 0), up);
        self.jump(jmp_imm(Cond::Eq, R5, 0, 0), up_at_end);
        self.put_component(state, slashes, b"/..", next, finish);
        self.bind(up);
        self.pop_slash(slashes);
        self.bind(slash);
        self.emit(mov(R0, R4));
        self.emit(alu_imm(Alu::Add, R0, 5));
        self.exit_if(Cond::Ge, R0, self.strsize(), finish);
        self.emit(st_imm(Size::DW, FP, state, 1));
        self.jump(ja(0), next);
        // A final "/..": the output keeps the '/' it goes back to.
        self.bind(up_at_end);
        self.pop_slash(slashes);
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.jump(ja(0), finish);
        self.bind(next);
        self.launder(R4);
        self.jump(ja(0), top);
        self.bind(finish);
        self.launder(R4);
        self.terminate_at_r4();
        self.dst_into_r0(dst);
        self.stack_top = saved;
        Ok(())
    }

    /// cleanpath: a dot after the pending bytes makes them `dotted_state`.
    fn pending_dot(&mut self, state: i16, dotted_state: i32, next: Label) {
        let not_dot = self.new_label();
        self.jump(jmp_imm(Cond::Ne, R5, b'.' as i32, 0), not_dot);
        self.emit(st_imm(Size::DW, FP, state, dotted_state));
        self.jump(ja(0), next);
        self.bind(not_dot);
    }

    /// cleanpath: writes `pending` ("/", "/." or "/..", whose '/' goes on
    /// the stack in slot `slashes`) and byte r5, back to state 0; a NUL ends
    /// the path.
    fn put_component(&mut self, state: i16, slashes: i16, pending: &[u8], next: Label, finish: Label) {
        // The stack's depth goes through map memory: as an exact value per
        // path it would keep the verifier from merging the paths.
        self.emit(ldx(Size::DW, R0, FP, slashes));
        self.forget(R0);
        self.jump(jmp_imm(Cond::Ge, R0, self.strsize(), 0), finish);
        self.emit(mov(R1, R0));
        self.emit(alu_imm(Alu::Add, R1, 1));
        self.emit(stx(Size::DW, FP, slashes, R1));
        self.work_entry(R0, finish);
        self.emit(stx(Size::H, R1, 0, R4));
        for &c in pending {
            self.put_byte(c, finish);
        }
        self.put_char(R5, finish);
        self.emit(st_imm(Size::DW, FP, state, 0));
        self.jump(jmp_imm(Cond::Eq, R5, 0, 0), finish);
        self.jump(ja(0), next);
    }

    /// cleanpath: r4 = the position of the last '/' on the stack in slot
    /// `slashes`, popped; 0 when the stack is empty.
    fn pop_slash(&mut self, slashes: i16) {
        let empty = self.new_label();
        let done = self.new_label();
        self.emit(ldx(Size::DW, R0, FP, slashes));
        self.forget(R0);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), empty);
        self.emit(alu_imm(Alu::Sub, R0, 1));
        self.emit(stx(Size::DW, FP, slashes, R0));
        self.work_entry(R0, empty);
        self.emit(ldx(Size::H, R4, R1, 0));
        self.jump(ja(0), done);
        self.bind(empty);
        self.emit(mov_imm(R4, 0));
        self.bind(done);
    }

    /// lltostr(v[, base]) as illumos writes it: digits 0-9a-z in base 2 to
    /// 36 (another base is an illegal operation), a '-' only in base 10
    /// (other bases show the 64 bits unsigned), "0x" before base 16 and "0"
    /// before base 8 digits. DTrace builds the whole text and the string
    /// stops at strsize characters: the digits past it are dropped.
    fn lltostr(&mut self, args: &[TExpr]) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let (base, value, negative, total, prefix) =
            (self.alloc_slot(8)?, self.alloc_slot(8)?, self.alloc_slot(8)?, self.alloc_slot(8)?, self.alloc_slot(8)?);
        match args.get(1) {
            Some(b) => {
                self.expr(b)?;
                self.emit(stx(Size::DW, FP, base, R0));
            }
            None => self.emit(st_imm(Size::DW, FP, base, 10)),
        }
        self.expr(&args[0])?;
        self.emit(stx(Size::DW, FP, value, R0));
        let valid = self.new_label();
        self.emit(ldx(Size::DW, R1, FP, base));
        self.emit(jmp_imm(Cond::Sle, R1, 1, 1));
        self.jump(jmp_imm(Cond::Sle, R1, 36, 0), valid);
        self.emit(mov_imm(R1, 0));
        self.raise_fault(layout::FAULT_ILLOP)?;
        self.bind(valid);
        let dst = self.scratch_slot()?;
        // The sign, in base 10 only; the magnitude (unsigned) in r0.
        self.emit(st_imm(Size::DW, FP, negative, 0));
        self.emit(ldx(Size::DW, R0, FP, value));
        self.emit(jmp_imm(Cond::Ne, R1, 10, 3));
        self.emit(jmp_imm(Cond::Sge, R0, 0, 2));
        self.emit(st_imm(Size::DW, FP, negative, 1));
        self.emit(neg(R0));
        self.emit(stx(Size::DW, FP, value, R0));
        // The prefix: "0x" in base 16, "0" in base 8 (none for 0 there).
        self.emit(st_imm(Size::DW, FP, prefix, 0));
        self.emit(jmp_imm(Cond::Ne, R1, 16, 1));
        self.emit(st_imm(Size::DW, FP, prefix, 2));
        self.emit(jmp_imm(Cond::Ne, R1, 8, 2));
        self.emit(jmp_imm(Cond::Eq, R0, 0, 1));
        self.emit(st_imm(Size::DW, FP, prefix, 1));
        // r3 = the characters: digits (at least one), sign and prefix.
        let (count, counted) = (self.new_label(), self.new_label());
        self.emit(mov(R2, R0));
        self.emit(mov_imm(R3, 1));
        self.bind(count);
        self.jump(jmp_reg(Cond::Lt, R2, R1, 0), counted);
        self.emit(alu_reg(Alu::Div, R2, R1));
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.jump(jmp_imm(Cond::Gt, R3, 64, 0), counted);
        self.jump(ja(0), count);
        self.bind(counted);
        self.emit(ldx(Size::DW, R2, FP, negative));
        self.emit(alu_reg(Alu::Add, R3, R2));
        self.emit(ldx(Size::DW, R2, FP, prefix));
        self.emit(alu_reg(Alu::Add, R3, R2));
        // Drop the digits past strsize (fewer than 70 characters in all).
        let (trim, fits) = (self.new_label(), self.new_label());
        self.bind(trim);
        self.jump(jmp_imm(Cond::Sle, R3, self.strsize() - 1, 0), fits);
        self.emit(alu_reg(Alu::Div, R0, R1));
        self.emit(alu_imm(Alu::Sub, R3, 1));
        self.jump(jmp_imm(Cond::Slt, R3, 0, 0), fits);
        self.jump(ja(0), trim);
        self.bind(fits);
        self.emit(stx(Size::DW, FP, total, R3));
        self.emit(stx(Size::DW, FP, value, R0));
        self.dst_into_r2(dst);
        // The NUL, then the digits backwards down to the prefix's end.
        self.emit(mov(R4, R3));
        self.terminate_at_r4();
        self.emit(ldx(Size::DW, R0, FP, value));
        self.emit(ldx(Size::DW, R5, FP, negative));
        self.emit(ldx(Size::DW, R1, FP, prefix));
        self.emit(alu_reg(Alu::Add, R5, R1));
        self.emit(stx(Size::DW, FP, prefix, R5));
        self.emit(ldx(Size::DW, R1, FP, base));
        let (top, done) = (self.new_label(), self.new_label());
        self.bind(top);
        self.emit(alu_imm(Alu::Sub, R4, 1));
        self.emit(ldx(Size::DW, R5, FP, prefix));
        self.exit_if_reg(Cond::Slt, R4, R5, done);
        self.exit_if(Cond::Ge, R4, self.strsize(), done);
        self.exit_if(Cond::Slt, R4, 0, done);
        self.emit(mov(R5, R0));
        self.emit(alu_reg(Alu::Mod, R5, R1));
        self.emit(jmp_imm(Cond::Lt, R5, 10, 1));
        self.emit(alu_imm(Alu::Add, R5, (b'a' - b'0') as i32 - 10));
        self.emit(alu_imm(Alu::Add, R5, b'0' as i32));
        self.emit(alu_reg(Alu::Div, R0, R1));
        self.emit(mov(R3, R2));
        self.emit(alu_reg(Alu::Add, R3, R4));
        self.emit(stx(Size::B, R3, 0, R5));
        self.jump(ja(0), top);
        self.bind(done);
        // Sign and prefix in front, where they fit.
        self.emit(ldx(Size::DW, R4, FP, negative));
        self.emit(ldx(Size::DW, R3, FP, total));
        let (no_sign, no_prefix, octal) = (self.new_label(), self.new_label(), self.new_label());
        self.jump(jmp_imm(Cond::Eq, R4, 0, 0), no_sign);
        self.jump(jmp_imm(Cond::Slt, R3, 1, 0), no_sign);
        self.emit(st_imm(Size::B, R2, 0, b'-' as i32));
        self.bind(no_sign);
        // (r4 is 0 or 1: where the prefix starts.)
        self.emit(ldx(Size::DW, R1, FP, base));
        self.emit(ldx(Size::DW, R5, FP, prefix));
        self.emit(alu_reg(Alu::Sub, R5, R4));
        self.jump(jmp_imm(Cond::Eq, R5, 0, 0), no_prefix);
        self.jump(jmp_imm(Cond::Ne, R1, 16, 0), octal);
        self.jump(jmp_imm(Cond::Slt, R3, 2, 0), no_prefix);
        self.emit(st_imm(Size::B, R2, 0, b'0' as i32));
        self.emit(st_imm(Size::B, R2, 1, b'x' as i32));
        self.jump(ja(0), no_prefix);
        self.bind(octal);
        self.jump(jmp_imm(Cond::Slt, R3, 1, 0), no_prefix);
        self.emit(st_imm(Size::B, R2, 0, b'0' as i32));
        self.bind(no_prefix);
        self.dst_into_r0(dst);
        self.stack_top = saved;
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    Keep,
    Upper,
    Lower,
}

/// Path components d_path follows, mount crossings included (unrolled).
pub(crate) const D_PATH_DEPTH: usize = 40;

impl Emitter<'_> {
    /// d_path(path): the absolute name of `struct path *`, as the kernel's
    /// d_path() builds it: from the dentry up its d_parent chain, crossing
    /// from a mount's root to its mount point in the parent mount, until
    /// the root of the mount tree. Names are written from the end of a
    /// work buffer backwards (`/` before each), then the text is copied to
    /// the start of the result. With `mount_point`, the walk starts at the
    /// path's mount's root: the name of its mount point. A path deeper than
    /// D_PATH_DEPTH or longer than strsize keeps its last components. An
    /// unreadable path is a bad-address fault.
    pub(super) fn d_path(&mut self, path: &TExpr, o: &DPathOffsets, mount_point: bool) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let p = self.stash(path)?;
        let dst = self.scratch_slot()?;
        let after_dst = self.scratch_next;
        // Twice strsize: a name of up to strsize - 2 bytes read at any
        // position below strsize stays inside, which the verifier checks.
        let work = self.scratch_slot()?;
        self.scratch_slot()?;
        let (dentry, mount, root, word, len, name, pos) = (
            self.alloc_slot(8)?,
            self.alloc_slot(8)?,
            self.alloc_slot(8)?,
            self.alloc_slot(8)?,
            self.alloc_slot(8)?,
            self.alloc_slot(8)?,
            self.alloc_slot(8)?,
        );
        let w = self.strsize();
        let (done, copy, end, unknown, out) =
            (self.new_label(), self.new_label(), self.new_label(), self.new_label(), self.new_label());
        let unknown_text =
            self.program.strings.iter().position(|s| s == b"<unknown>").ok_or_else(|| {
                CodegenError("internal error: the \"<unknown>\" constant of d_path is missing".into())
            })?;
        // The text ends at the work buffer's strsize - 1: a NUL there.
        self.emit(mov_imm(R0, w - 1));
        self.emit(stx(Size::DW, FP, pos, R0));
        self.emit(st_imm(Size::B, R8, (work + w - 1) as i16, 0));
        // The mount first: a bad path faults at its own address (its first
        // member), as dtrace-utils reports it.
        self.d_path_read(word, 8, p, o.path_mnt, None)?;
        self.d_path_read(dentry, 8, p, o.path_dentry, None)?;
        // struct mount contains the vfsmount the path names.
        self.emit(ldx(Size::DW, R0, FP, word));
        self.emit(alu_imm(Alu::Sub, R0, o.mount_mnt as i32));
        self.emit(stx(Size::DW, FP, mount, R0));
        self.d_path_read(root, 8, word, o.vfsmount_root, Some(done))?;
        if mount_point {
            self.emit(ldx(Size::DW, R0, FP, root));
            self.emit(stx(Size::DW, FP, dentry, R0));
        }
        for _ in 0..D_PATH_DEPTH {
            let (cross, next) = (self.new_label(), self.new_label());
            self.d_path_read(word, 8, dentry, o.dentry_parent, Some(done))?;
            // At the mount's root: cross. A dentry that is its own parent
            // without being a mount's root is in no tree (a pipe, a
            // socket, an unlinked directory's remains): no path names it.
            self.emit(ldx(Size::DW, R1, FP, dentry));
            self.emit(ldx(Size::DW, R2, FP, root));
            self.jump(jmp_reg(Cond::Eq, R1, R2, 0), cross);
            self.emit(ldx(Size::DW, R2, FP, word));
            self.jump(jmp_reg(Cond::Eq, R1, R2, 0), unknown);
            self.jump(jmp_imm(Cond::Eq, R2, 0, 0), unknown);
            // "/" and the name before what is written, if it fits.
            self.d_path_read(len, 4, dentry, o.dentry_name_len, Some(done))?;
            self.d_path_read(name, 8, dentry, o.dentry_name, Some(done))?;
            self.emit(ldx(Size::DW, R0, FP, pos));
            self.forget(R0);
            self.jump(jmp_imm(Cond::Gt, R0, w - 1, 0), done);
            self.emit(ldx(Size::DW, R2, FP, len));
            self.jump(jmp_imm(Cond::Gt, R2, w - 2, 0), done);
            self.emit(alu_reg(Alu::Sub, R0, R2));
            self.emit(alu_imm(Alu::Sub, R0, 1));
            self.jump(jmp_imm(Cond::Slt, R0, 0, 0), done);
            self.jump(jmp_imm(Cond::Gt, R0, w - 1, 0), done);
            self.emit(stx(Size::DW, FP, pos, R0));
            self.emit(mov(R1, R8));
            self.emit(alu_reg(Alu::Add, R1, R0));
            self.emit(st_imm(Size::B, R1, work as i16, SLASH));
            self.emit(alu_imm(Alu::Add, R1, work + 1));
            self.emit(ldx(Size::DW, R3, FP, name));
            self.emit(call(Helper::ProbeReadKernel));
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), done);
            self.emit(ldx(Size::DW, R0, FP, word));
            self.emit(stx(Size::DW, FP, dentry, R0));
            self.jump(ja(0), next);
            // To the mount point, in the parent mount; none above: the end.
            self.bind(cross);
            self.d_path_read(word, 8, mount, o.mount_parent, Some(done))?;
            self.emit(ldx(Size::DW, R1, FP, word));
            self.emit(ldx(Size::DW, R2, FP, mount));
            self.jump(jmp_reg(Cond::Eq, R1, R2, 0), done);
            self.jump(jmp_imm(Cond::Eq, R1, 0, 0), done);
            self.d_path_read(dentry, 8, mount, o.mount_mountpoint, Some(done))?;
            self.emit(ldx(Size::DW, R0, FP, word));
            self.emit(stx(Size::DW, FP, mount, R0));
            self.emit(alu_imm(Alu::Add, R0, o.mount_mnt as i32));
            self.emit(stx(Size::DW, FP, word, R0));
            self.d_path_read(root, 8, word, o.vfsmount_root, Some(done))?;
            self.bind(next);
        }
        self.bind(done);
        // The root alone is "/".
        self.emit(ldx(Size::DW, R0, FP, pos));
        self.forget(R0);
        self.jump(jmp_imm(Cond::Gt, R0, w - 1, 0), end);
        self.jump(jmp_imm(Cond::Ne, R0, w - 1, 0), copy);
        self.emit(st_imm(Size::B, R8, (work + w - 2) as i16, SLASH));
        self.emit(mov_imm(R0, w - 2));
        self.bind(copy);
        // strsize - pos bytes (the text and its NUL) to the result.
        self.emit(mov(R3, R8));
        self.emit(alu_reg(Alu::Add, R3, R0));
        self.emit(alu_imm(Alu::Add, R3, work));
        self.emit(mov_imm(R2, w));
        self.emit(alu_reg(Alu::Sub, R2, R0));
        self.dst_into_r0(dst);
        self.emit(mov(R1, R0));
        self.emit(call(Helper::ProbeReadKernel));
        self.bind(end);
        self.dst_into_r0(dst);
        self.jump(ja(0), out);
        self.bind(unknown);
        self.string_const(unknown_text);
        self.bind(out);
        self.scratch_next = after_dst;
        self.stack_top = saved;
        Ok(())
    }

    /// `size` bytes at [base] + offset into stack slot `into` (zeroed
    /// first); an unreadable address goes to `fail`, or is a bad-address
    /// fault without one.
    fn d_path_read(
        &mut self,
        into: i16,
        size: i32,
        base: i16,
        offset: usize,
        fail: Option<Label>,
    ) -> Result<(), CodegenError> {
        self.emit(st_imm(Size::DW, FP, into, 0));
        self.emit(mov(R1, FP));
        self.emit(alu_imm(Alu::Add, R1, into as i32));
        self.emit(mov_imm(R2, size));
        self.emit(ldx(Size::DW, R3, FP, base));
        self.emit(alu_imm(Alu::Add, R3, offset as i32));
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R3));
        self.emit(call(Helper::ProbeReadKernel));
        match fail {
            Some(fail) => {
                self.jump(jmp_imm(Cond::Ne, R0, 0, 0), fail);
                Ok(())
            }
            None => self.fault_on_read_error(),
        }
    }
}
