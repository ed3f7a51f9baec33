//! Speculations in the kernel: speculation() pops a free ID from the
//! `dt_spec_free` queue (no search, whatever nspec is) and activates its
//! `dt_specs` entry with a new tag, speculate() sends the clause's record to
//! it, commit() and discard() end it with a record of their own and queue
//! the ID again at once, as DTrace frees a speculation used on one CPU.
//!
//! The consumer keeps the speculative records by tag and prints or drops
//! them when it reads the ending record. Records leave the ring buffer in
//! the order they were reserved, and a record is reserved when its clause
//! starts, before speculate() checks that its speculation is active: so
//! every record a speculation accepted comes before the record that ends
//! it. A record of the ID's next use has another tag, wherever it lands.
//!
//! Ending is a BPF_CMPXCHG from active to ending (Linux 5.12), so only one
//! commit() or discard() ends a speculation and queues its ID: only
//! programs that end speculations contain it.

use super::*;

impl Emitter<'_> {
    /// r0 = speculation(): a free speculation's ID, now active, or 0
    /// (counted as failed: busy while some speculation is being ended, else
    /// unavailable).
    pub(super) fn speculation(&mut self) -> Result<(), CodegenError> {
        let (failed, done) = (self.new_label(), self.new_label());
        self.emit2(ld_map_fd(R1, MapRef::SpecFree));
        self.emit(mov(R2, FP));
        self.emit(alu_imm(Alu::Add, R2, STACK_KEY as i32));
        self.emit(call(Helper::MapPopElem));
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), failed);
        self.emit(ldx(Size::W, R1, FP, STACK_KEY));
        self.spec_entry_or(R1, failed);
        // The ID is ours alone until it is queued again: no atomics needed.
        self.emit(ldx(Size::DW, R1, R0, layout::SPEC_TAG as i16));
        self.emit(alu_imm(Alu::Add, R1, layout::SPEC_TAG_STEP as i32));
        self.emit(stx(Size::DW, R0, layout::SPEC_TAG as i16, R1));
        self.emit(st_imm(Size::DW, R0, layout::SPEC_BYTES as i16, 0));
        self.emit(st_imm(Size::DW, R0, layout::SPEC_STATE as i16, layout::SPEC_ACTIVE));
        self.emit(ldx(Size::W, R0, FP, STACK_KEY));
        self.jump(ja(0), done);

        self.bind(failed);
        let (unavailable, counted) = (self.new_label(), self.new_label());
        self.spec_ending_count(unavailable);
        self.emit(ldx(Size::DW, R1, R0, 0));
        self.jump(jmp_imm(Cond::Eq, R1, 0, 0), unavailable);
        self.count_in(MapRef::SpecStats, layout::SPEC_STATS_BUSY as i16);
        self.jump(ja(0), counted);
        self.bind(unavailable);
        self.count_in(MapRef::SpecStats, layout::SPEC_STATS_UNAVAIL as i16);
        self.bind(counted);
        self.emit(mov_imm(R0, 0));
        self.bind(done);
        Ok(())
    }

    /// r0 = the count of speculations being ended; jumps to `missing` if none.
    fn spec_ending_count(&mut self, missing: Label) {
        self.emit(st_imm(Size::W, FP, STACK_KEY, 0));
        self.lookup_stack_key(MapRef::SpecEnding);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), missing);
    }

    /// Adds `delta` to the count of speculations being ended.
    fn add_to_spec_ending(&mut self, delta: i32) {
        let skip = self.new_label();
        self.spec_ending_count(skip);
        self.emit(mov_imm(R1, delta));
        self.emit(atomic_add64(R0, 0, R1));
        self.bind(skip);
    }

    /// speculate(id), commit(id), discard(id).
    pub(super) fn speculation_op(&mut self, op: SpecOp, id: &TExpr) -> Result<(), CodegenError> {
        self.expr(id)?;
        match op {
            SpecOp::Speculate => self.speculate(),
            SpecOp::Commit => self.end_speculation(layout::EPID_COMMIT),
            SpecOp::Discard => self.end_speculation(layout::EPID_DISCARD),
        }
    }

    /// r0 = the entry of speculation r`id` (its ID is then at STACK_KEY);
    /// jumps to `missing` for an ID past nspec.
    fn spec_entry_or(&mut self, id: Reg, missing: Label) {
        self.emit(stx(Size::W, FP, STACK_KEY, id));
        self.lookup_stack_key(MapRef::Specs);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), missing);
    }

    /// r0 = the entry of speculation r`id` (its ID is then at STACK_KEY);
    /// jumps to `none` for ID 0 (entry 0 refuses every use); an ID past
    /// nspec, or negative, is an illegal operation, as in DTrace.
    fn spec_entry_from(&mut self, id: Reg, none: Label) -> Result<(), CodegenError> {
        self.jump(jmp_imm(Cond::Eq, id, 0, 0), none);
        self.emit(stx(Size::W, FP, STACK_KEY, id));
        self.lookup_stack_key(MapRef::Specs);
        let found = self.new_label();
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), found);
        self.emit(ldx(Size::W, R1, FP, STACK_KEY));
        self.raise_fault(layout::FAULT_ILLOP)?;
        self.bind(found);
        Ok(())
    }

    /// Tags the clause's record with speculation r0 if it is active and has
    /// room for the record (else counts a speculative drop). Otherwise the
    /// record is dropped and the rest of the clause with it, as DTrace's
    /// probe loop stops at a speculation it cannot write (the clause's
    /// variable updates do not happen: tst.SpecSizeVariations1).
    fn speculate(&mut self) -> Result<(), CodegenError> {
        let state = self.clause.ok_or_else(|| CodegenError("internal error: speculate outside a clause".into()))?;
        if !state.speculates {
            // A clause that records nothing has nothing to speculate.
            return Ok(());
        }
        let record_size = self.program.clauses[state.epid as usize - 1].record_size;
        let (refuse, full, done) = (self.new_label(), self.new_label(), self.new_label());
        self.spec_entry_from(R0, refuse)?;
        self.emit(ldx(Size::DW, R1, R0, layout::SPEC_STATE as i16));
        self.jump(jmp_imm(Cond::Ne, R1, layout::SPEC_ACTIVE, 0), refuse);
        self.emit(ldx(Size::DW, R1, R0, layout::SPEC_BYTES as i16));
        self.emit(alu_imm(Alu::Add, R1, record_size as i32));
        self.emit2(ld_imm64(R2, self.env.specsize));
        self.jump(jmp_reg(Cond::Gt, R1, R2, 0), full);
        self.emit(mov_imm(R1, record_size as i32));
        self.emit(atomic_add64(R0, layout::SPEC_BYTES as i16, R1));
        self.emit(ldx(Size::W, R1, R0, layout::SPEC_TAG as i16));
        self.emit(stx(Size::W, R9, layout::HDR_SPEC as i16, R1));
        self.jump(ja(0), done);
        self.bind(full);
        self.count_in(MapRef::SpecStats, layout::SPEC_STATS_DROPS as i16);
        self.bind(refuse);
        if !state.split {
            self.emit(mov(R1, R9));
            self.emit(mov_imm(R2, BPF_RB_NO_WAKEUP));
            self.emit(call(Helper::RingbufDiscard));
        }
        self.jump(ja(0), state.end);
        self.bind(done);
        Ok(())
    }

    /// commit() or discard() of speculation r0: active -> ending, a record
    /// with `epid` and its tag for the consumer, then free and queued again.
    /// Without room for the record the speculation stays active (and a drop
    /// is counted).
    fn end_speculation(&mut self, epid: u32) -> Result<(), CodegenError> {
        let (entry, id) = (self.alloc_slot(8)?, self.alloc_slot(8)?);
        let (done, no_room) = (self.new_label(), self.new_label());
        self.spec_entry_from(R0, done)?;
        self.emit(stx(Size::DW, FP, entry, R0));
        self.emit(ldx(Size::W, R1, FP, STACK_KEY));
        self.emit(stx(Size::W, FP, id, R1));
        self.emit(mov(R1, R0));
        self.emit(mov_imm(R2, layout::SPEC_ENDING));
        self.emit(mov_imm(R0, layout::SPEC_ACTIVE));
        self.emit(atomic_cmpxchg64(R1, layout::SPEC_STATE as i16, R2));
        self.jump(jmp_imm(Cond::Ne, R0, layout::SPEC_ACTIVE, 0), done);
        self.add_to_spec_ending(1);
        if self.env.record_timestamps {
            self.timestamp();
        }
        self.reserve_record(layout::HDR_SIZE as i32, no_room);
        self.header_fields(R0, epid, 0);
        self.emit(ldx(Size::DW, R1, FP, entry));
        self.emit(ldx(Size::W, R1, R1, layout::SPEC_TAG as i16));
        self.emit(stx(Size::W, R0, layout::HDR_SPEC as i16, R1));
        self.emit(mov(R1, R0));
        self.emit(mov_imm(R2, BPF_RB_NO_WAKEUP));
        self.emit(call(Helper::RingbufSubmit));
        self.emit(ldx(Size::DW, R1, FP, entry));
        self.emit(st_imm(Size::DW, R1, layout::SPEC_STATE as i16, layout::SPEC_FREE));
        self.emit2(ld_map_fd(R1, MapRef::SpecFree));
        self.emit(mov(R2, FP));
        self.emit(alu_imm(Alu::Add, R2, id as i32));
        self.emit(mov_imm(R3, 0));
        self.emit(call(Helper::MapPushElem));
        let ended = self.new_label();
        self.jump(ja(0), ended);
        self.bind(no_room);
        self.emit(ldx(Size::DW, R1, FP, entry));
        self.emit(st_imm(Size::DW, R1, layout::SPEC_STATE as i16, layout::SPEC_ACTIVE));
        self.bind(ended);
        self.add_to_spec_ending(-1);
        self.bind(done);
        self.stack_top += 16;
        Ok(())
    }
}
