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

const SLASH: i32 = b'/' as i32;

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
        let cell = (self.env.scratch_slots * self.program.strsize) as i16;
        self.emit(stx(Size::DW, R8, cell, reg));
        self.emit(ldx(Size::DW, reg, R8, cell));
        // The loop's temporaries differ by exit path; forget them too, so the
        // paths look the same from here on.
        for temp in [R0, R5] {
            if temp != reg {
                self.emit(mov_imm(temp, 0));
            }
        }
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
            Subr::Lltostr => self.lltostr(&args[0])?,
            Subr::ByteSwap(bits) => {
                self.expr(&args[0])?;
                self.emit(to_big_endian(R0, bits));
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
            Subr::InetNtoa => self.inet_ntoa(&args[0])?,
            Subr::Speculation => self.speculation()?,
            Subr::Copyin => {
                let saved = self.stack_top;
                let addr = self.stash(&args[0])?;
                self.expr(&args[1])?;
                let dst = self.scratch_slot()?;
                // At most strsize bytes: the buffer is one scratch slot.
                self.emit(mov(R2, R0));
                self.emit(jmp_imm(Cond::Le, R2, self.strsize(), 1));
                self.emit(mov_imm(R2, self.strsize()));
                self.emit(ldx(Size::DW, R3, FP, addr));
                self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R3));
                self.emit(mov(R1, R8));
                self.emit(alu_imm(Alu::Add, R1, dst));
                self.emit(call(Helper::ProbeReadUser));
                self.fault_on_read_error()?;
                self.dst_into_r0(dst);
                self.stack_top = saved;
            }
            Subr::Alloca(offset) => {
                self.used_scratch = true;
                self.emit(mov(R0, R8));
                self.emit(alu_imm(Alu::Add, R0, (self.alloca_base() + offset) as i32));
            }
            Subr::Bcopy => self.copy_into_alloca(&args[0], &args[2], &args[1], Helper::ProbeReadKernel)?,
            Subr::Copyinto => self.copy_into_alloca(&args[0], &args[1], &args[2], Helper::ProbeReadUser)?,
        }
        Ok(())
    }

    /// Where alloca() memory starts in the scratch map: after the string
    /// slots, the launder word and the string clause-locals.
    fn alloca_base(&self) -> usize {
        let string_locals = self.program.clause_locals.iter().filter(|v| v.ty == Type::String).count();
        (self.env.scratch_slots + string_locals) * self.program.strsize + 8
    }

    /// Where stackdepth's buffer starts in the scratch map: after alloca()
    /// memory and its verifier slack.
    pub(in crate::codegen) fn stack_buffer_base(&self) -> usize {
        self.alloca_base() + 2 * self.program.alloca_bytes
    }

    /// bcopy/copyinto: `size` bytes from `src` (kernel or user memory, as
    /// `helper` reads) to `dest`, which must lie in alloca() memory; as in
    /// DTrace, any other destination is a bad-address fault. The destination
    /// is checked as a number (laundered: it may come from any variable)
    /// and rebuilt from the scratch pointer, so the verifier sees a map
    /// pointer with a bounded offset.
    fn copy_into_alloca(
        &mut self,
        src: &TExpr,
        size: &TExpr,
        dest: &TExpr,
        helper: Helper,
    ) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let limit = self.program.alloca_bytes as i32;
        let base = self.alloca_base() as i32;
        let src = self.stash(src)?;
        let size = self.stash(size)?;
        self.expr(dest)?;
        self.used_scratch = true;
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R0));
        self.launder(R0);
        self.emit(mov(R1, R0));
        self.emit(mov(R2, R8));
        self.emit(alu_imm(Alu::Add, R2, base));
        self.launder(R2);
        self.emit(alu_reg(Alu::Sub, R1, R2));
        self.fault_unless_at_most(R1, limit)?;
        self.emit(ldx(Size::DW, R2, FP, size));
        self.fault_unless_at_most(R2, limit)?;
        self.emit(mov(R3, R1));
        self.emit(alu_reg(Alu::Add, R3, R2));
        self.fault_unless_at_most(R3, limit)?;
        self.emit(mov(R3, R8));
        self.emit(alu_imm(Alu::Add, R3, base));
        self.emit(alu_reg(Alu::Add, R3, R1));
        self.emit(mov(R1, R3));
        self.emit(ldx(Size::DW, R3, FP, src));
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R3));
        self.emit(call(helper));
        self.fault_on_read_error()?;
        self.emit(mov_imm(R0, 0));
        self.stack_top = saved;
        Ok(())
    }

    /// A bad-address fault (at the address saved in STACK_FAULT_ADDR)
    /// unless `reg` <= `limit`, unsigned.
    fn fault_unless_at_most(&mut self, reg: Reg, limit: i32) -> Result<(), CodegenError> {
        let ok = self.new_label();
        self.jump(jmp_imm(Cond::Le, reg, limit, 0), ok);
        self.emit(ldx(Size::DW, R1, FP, STACK_FAULT_ADDR));
        self.raise_fault(layout::FAULT_BADADDR)?;
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
        self.emit(call(Helper::GetCurrentTask));
        self.emit(stx(Size::DW, FP, task, R0));
        for _ in 0..PROGENY_DEPTH {
            // tgid == pid?
            self.emit(st_imm(Size::DW, FP, word, 0));
            self.emit(mov(R1, FP));
            self.emit(alu_imm(Alu::Add, R1, word as i32));
            self.emit(mov_imm(R2, 4));
            self.emit(ldx(Size::DW, R3, FP, task));
            self.emit(alu_imm(Alu::Add, R3, tgid_offset as i32));
            self.emit(call(Helper::ProbeReadKernel));
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), no);
            self.emit(ldx(Size::W, R1, FP, word));
            self.emit(ldx(Size::DW, R2, FP, want));
            self.emit(alu_imm(Alu::Lsh, R2, 32));
            self.emit(alu_imm(Alu::Rsh, R2, 32));
            self.jump(jmp_reg(Cond::Eq, R1, R2, 0), yes);
            // Up to the parent; the idle task is its own parent.
            self.emit(mov(R1, FP));
            self.emit(alu_imm(Alu::Add, R1, word as i32));
            self.emit(mov_imm(R2, 8));
            self.emit(ldx(Size::DW, R3, FP, task));
            self.emit(alu_imm(Alu::Add, R3, parent_offset as i32));
            self.emit(call(Helper::ProbeReadKernel));
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), no);
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

    /// inet_ntoa(addr): the four bytes at kernel address `addr` (network
    /// order) as "a.b.c.d"; a bad address is a fault.
    fn inet_ntoa(&mut self, addr: &TExpr) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        self.expr(addr)?;
        let bytes = self.alloc_slot(8)?;
        let dst = self.scratch_slot()?;
        self.emit(stx(Size::DW, FP, STACK_FAULT_ADDR, R0));
        self.emit(st_imm(Size::DW, FP, bytes, 0));
        self.emit(mov(R3, R0));
        self.emit(mov(R1, FP));
        self.emit(alu_imm(Alu::Add, R1, bytes as i32));
        self.emit(mov_imm(R2, 4));
        self.emit(call(Helper::ProbeReadKernel));
        self.fault_on_read_error()?;
        self.dst_into_r2(dst);
        // r4 = next position (at most 15 characters and the NUL).
        self.emit(mov_imm(R4, 0));
        let full = self.new_label();
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
                self.emit(mov_imm(R1, b'.' as i32 - b'0' as i32));
                self.put_digit(R1, full);
            }
        }
        self.bind(full);
        self.emit(jmp_imm(Cond::Ge, R4, self.strsize(), 3));
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(st_imm(Size::B, R0, 0, 0));
        self.dst_into_r0(dst);
        self.stack_top = saved;
        Ok(())
    }

    /// dst[r4++] = '0' + reg, unless the string is full.
    fn put_digit(&mut self, reg: Reg, full: Label) {
        self.jump(jmp_imm(Cond::Ge, R4, self.strsize() - 1, 0), full);
        self.emit(alu_imm(Alu::Add, reg, b'0' as i32));
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
    fn strlen_r1_into_r4(&mut self) {
        let top = self.new_label();
        let end = self.new_label();
        self.emit(mov_imm(R4, 0));
        self.bind(top);
        self.jump(jmp_imm(Cond::Ge, R4, self.strsize() - 1, 0), end);
        self.emit(mov(R0, R1));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(ldx(Size::B, R5, R0, 0));
        self.jump(jmp_imm(Cond::Eq, R5, 0, 0), end);
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
        self.jump(jmp_imm(Cond::Ge, R3, self.strsize(), 0), done);
        self.jump(jmp_imm(Cond::Ge, R4, self.strsize() - 1, 0), done);
        if let Some(slot) = end {
            self.emit(ldx(Size::DW, R0, FP, slot));
            self.jump(jmp_reg(Cond::Sge, R3, R0, 0), done);
        }
        self.load_source_byte();
        self.jump(jmp_imm(Cond::Eq, R5, 0, 0), done);
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
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(stx(Size::B, R0, 0, R5));
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.jump(ja(0), top);
        self.bind(done);
        self.launder(R4);
        let after = self.new_label();
        self.jump(jmp_imm(Cond::Ge, R4, self.strsize(), 0), after);
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(st_imm(Size::B, R0, 0, 0));
        self.bind(after);
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
        let hit = self.new_label();
        let end = self.new_label();
        self.emit(ldx(Size::DW, R3, FP, found));
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
        self.stack_top = saved;
        Ok(())
    }

    /// lltostr(v): the decimal digits, written backwards at the end of the
    /// scratch slot, then moved to its start.
    fn lltostr(&mut self, arg: &TExpr) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        self.expr(arg)?;
        let dst = self.scratch_slot()?;
        let negative = self.alloc_slot(8)?;
        self.emit(st_imm(Size::DW, FP, negative, 0));
        self.emit(jmp_imm(Cond::Sge, R0, 0, 2));
        self.emit(st_imm(Size::DW, FP, negative, 1));
        self.emit(neg(R0));
        self.dst_into_r2(dst);
        // r4: where the next digit goes, from strsize - 2 down.
        self.emit(mov_imm(R4, self.strsize() - 2));
        let top = self.new_label();
        let digits_done = self.new_label();
        self.bind(top);
        self.jump(jmp_imm(Cond::Slt, R4, 1, 0), digits_done);
        self.jump(jmp_imm(Cond::Ge, R4, self.strsize(), 0), digits_done);
        self.emit(mov(R5, R0));
        self.emit(alu_imm(Alu::Mod, R5, 10));
        self.emit(alu_imm(Alu::Add, R5, b'0' as i32));
        self.emit(mov(R1, R2));
        self.emit(alu_reg(Alu::Add, R1, R4));
        self.emit(stx(Size::B, R1, 0, R5));
        self.emit(alu_imm(Alu::Div, R0, 10));
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), digits_done);
        self.emit(alu_imm(Alu::Sub, R4, 1));
        self.jump(ja(0), top);
        self.bind(digits_done);
        self.launder(R4);
        let positive = self.new_label();
        self.emit(ldx(Size::DW, R0, FP, negative));
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), positive);
        self.jump(jmp_imm(Cond::Slt, R4, 2, 0), positive);
        self.jump(jmp_imm(Cond::Ge, R4, self.strsize(), 0), positive);
        self.emit(alu_imm(Alu::Sub, R4, 1));
        self.emit(mov(R1, R2));
        self.emit(alu_reg(Alu::Add, R1, R4));
        self.emit(st_imm(Size::B, R1, 0, b'-' as i32));
        self.bind(positive);
        // Move the text from r4 to the start of the slot: the source index is
        // never below the destination index.
        self.emit(mov(R1, R2));
        self.emit(mov(R3, R4));
        let end = self.alloc_slot(8)?;
        self.emit(st_imm(Size::DW, FP, end, self.strsize() - 1));
        self.emit(mov_imm(R4, 0));
        self.copy_loop(Some(end), Case::Keep);
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
