//! Aggregations in the kernel: updating an aggregation's per-CPU map for
//! `@name[keys] = f(value)` (count, sum, min, max, avg, stddev, quantize,
//! lquantize, llquantize), and the bucket arithmetic of the quantizing
//! functions, whose geometry `defs::agg` defines for the consumer too.

use super::*;

impl Emitter<'_> {
    /// `@agg[keys] = func(value[, incr])`: finds (or creates) this CPU's
    /// entry for the key and applies the function to it in place.
    pub(super) fn aggregate(
        &mut self,
        index: usize,
        keys: &[TExpr],
        value: Option<&TExpr>,
        incr: Option<&TExpr>,
    ) -> Result<(), CodegenError> {
        let agg = &self.program.aggregations[index];
        // A key and value larger than the aggregation buffer (aggsize)
        // never fit: each update is an aggregation drop, as in DTrace.
        let per_key = (agg.key_size() + agg.map_value_words() * 8) as u64;
        if self.env.aggsize.is_some_and(|bytes| bytes < per_key) {
            self.count_in(MapRef::AggDrops, 0);
            return Ok(());
        }
        let map = MapRef::Aggregation(index);
        let saved_stack = self.stack_top;
        let done = self.new_label();

        let value_slot = match value {
            Some(v) => {
                let slot = self.alloc_slot(8)?;
                self.expr(v)?;
                self.emit(stx(Size::DW, FP, slot, R0));
                Some(slot)
            }
            None => None,
        };
        let incr_slot = match incr {
            Some(e) => {
                let slot = self.alloc_slot(8)?;
                self.expr(e)?;
                self.emit(stx(Size::DW, FP, slot, R0));
                Some(slot)
            }
            None => None,
        };

        let found = self.new_label();
        if agg.is_array() {
            // The one entry of a per-CPU array; mark it as updated.
            let key = self.alloc_slot(8)?;
            self.emit(st_imm(Size::DW, FP, key, 0));
            self.emit2(ld_map_fd(R1, map));
            self.emit(mov(R2, FP));
            self.emit(alu_imm(Alu::Add, R2, key as i32));
            self.emit(call(Helper::MapLookupElem));
            self.jump(jmp_imm(Cond::Eq, R0, 0, 0), done);
            self.emit(st_imm(Size::DW, R0, (agg.value_words() * 8) as i16, 1));
        } else {
            let key_ptr = self.build_key(&agg.keys.clone(), keys, false, done)?;

            // This CPU's value for the key; a new key starts from zeros. The
            // insert's result is not checked: the second lookup finds the
            // key whether this insert or a racing one (EEXIST) made it, and
            // finds nothing only if the map is full. Fewer branches per
            // aggregation let more clauses share a probe (codegen::limits).
            self.emit2(ld_map_fd(R1, map));
            self.emit(ldx(Size::DW, R2, FP, key_ptr));
            self.emit(call(Helper::MapLookupElem));
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), found);
            self.emit2(ld_map_fd(R1, map));
            self.emit(ldx(Size::DW, R2, FP, key_ptr));
            self.emit2(ld_map_value(R3, MapRef::AggZero, 0));
            self.emit(mov_imm(R4, BPF_NOEXIST));
            self.emit(call(Helper::MapUpdateElem));
            self.emit2(ld_map_fd(R1, map));
            self.emit(ldx(Size::DW, R2, FP, key_ptr));
            self.emit(call(Helper::MapLookupElem));
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), found);
            self.count_in(MapRef::AggDrops, 0);
            self.jump(ja(0), done);
        }
        self.bind(found);

        // r0: the value; r2: the aggregated value; r1, r3-r5 scratch.
        if let Some(slot) = value_slot {
            self.emit(ldx(Size::DW, R2, FP, slot));
        }
        let func = agg.func.clone();
        if let Some(buckets) = func.bucket_count() {
            // The sum of the values (times their increments), after the buckets.
            self.emit(mov(R3, R0));
            self.emit(alu_imm(Alu::Add, R3, (buckets * 8) as i32));
            self.emit(ldx(Size::DW, R1, R3, 0));
            match incr_slot {
                Some(slot) => {
                    self.emit(ldx(Size::DW, R4, FP, slot));
                    self.emit(alu_reg(Alu::Mul, R4, R2));
                    self.emit(alu_reg(Alu::Add, R1, R4));
                }
                None => self.emit(alu_reg(Alu::Add, R1, R2)),
            }
            self.emit(stx(Size::DW, R3, 0, R1));
        }
        match &func {
            AggFunc::Count => self.add_to_word(0, None),
            AggFunc::Sum => self.add_to_word(0, Some(R2)),
            AggFunc::Min | AggFunc::Max => {
                let set = self.new_label();
                let keep = self.new_label();
                self.emit(ldx(Size::DW, R1, R0, 0));
                self.jump(jmp_imm(Cond::Eq, R1, 0, 0), set);
                self.emit(ldx(Size::DW, R3, R0, 8));
                let cond = if func == AggFunc::Min { Cond::Sge } else { Cond::Sle };
                self.jump(jmp_reg(cond, R2, R3, 0), keep);
                self.bind(set);
                self.emit(stx(Size::DW, R0, 8, R2));
                self.bind(keep);
                self.add_to_word(0, None);
            }
            AggFunc::Avg => {
                self.add_to_word(0, None);
                self.add_to_word(8, Some(R2));
            }
            AggFunc::Stddev => {
                self.add_to_word(0, None);
                self.add_to_word(8, Some(R2));
                self.add_square_128(16);
            }
            AggFunc::Quantize => self.quantize_index(),
            AggFunc::Lquantize { base, limit, step } => self.lquantize_index(*base, *limit, *step),
            AggFunc::Llquantize { factor, low, high, nsteps } => {
                self.llquantize_index(&llquantize_plan(*factor, *low, *high, *nsteps))
            }
        }
        if let Some(buckets) = func.bucket_count() {
            // r4 = bucket index; the bound check is for the verifier.
            self.jump(jmp_imm(Cond::Ge, R4, buckets as i32, 0), done);
            self.emit(alu_imm(Alu::Lsh, R4, 3));
            self.emit(alu_reg(Alu::Add, R0, R4));
            match incr_slot {
                Some(slot) => {
                    self.emit(ldx(Size::DW, R2, FP, slot));
                    self.add_to_word(0, Some(R2));
                }
                None => self.add_to_word(0, None),
            }
        }
        self.bind(done);
        self.stack_top = saved_stack;
        Ok(())
    }

    /// *(u64 *)(r0 + off) += reg (or 1).
    pub(super) fn add_to_word(&mut self, off: i16, reg: Option<Reg>) {
        self.emit(ldx(Size::DW, R1, R0, off));
        match reg {
            Some(r) => self.emit(alu_reg(Alu::Add, R1, r)),
            None => self.emit(alu_imm(Alu::Add, R1, 1)),
        }
        self.emit(stx(Size::DW, R0, off, R1));
    }

    /// Adds r2 squared, as a 128-bit number, to the words at r0+off (low) and
    /// r0+off+8 (high): |v| = a·2³² + b, v² = a²·2⁶⁴ + ab·2³³ + b².
    pub(super) fn add_square_128(&mut self, off: i16) {
        self.emit(jmp_imm(Cond::Sge, R2, 0, 1));
        self.emit(neg(R2));
        self.emit(mov(R3, R2));
        self.emit(alu_imm(Alu::Rsh, R3, 32)); // a
        self.emit(mov(R4, R2));
        self.emit(alu_imm(Alu::Lsh, R4, 32));
        self.emit(alu_imm(Alu::Rsh, R4, 32)); // b
        self.emit(mov(R5, R4));
        self.emit(alu_reg(Alu::Mul, R5, R4)); // low = b²
        self.emit(alu_reg(Alu::Mul, R4, R3)); // mid = ab
        self.emit(alu_reg(Alu::Mul, R3, R3)); // high = a²
        self.emit(mov(R1, R4));
        self.emit(alu_imm(Alu::Lsh, R1, 33));
        self.emit(alu_reg(Alu::Add, R5, R1));
        self.emit(jmp_reg(Cond::Ge, R5, R1, 1));
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.emit(alu_imm(Alu::Rsh, R4, 31));
        self.emit(alu_reg(Alu::Add, R3, R4));
        // Accumulate (r3:r5) into the stored 128-bit sum.
        self.emit(ldx(Size::DW, R1, R0, off));
        self.emit(alu_reg(Alu::Add, R1, R5));
        self.emit(stx(Size::DW, R0, off, R1));
        self.emit(jmp_reg(Cond::Ge, R1, R5, 1));
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.emit(ldx(Size::DW, R1, R0, off + 8));
        self.emit(alu_reg(Alu::Add, R1, R3));
        self.emit(stx(Size::DW, R0, off + 8, R1));
    }

    /// r3 = floor(log2(r2)) for r2 != 0 (unsigned); clobbers r2, r5.
    pub(super) fn log2(&mut self) {
        self.emit(mov_imm(R3, 0));
        for shift in [32, 16, 8, 4, 2, 1] {
            self.emit(mov(R5, R2));
            self.emit(alu_imm(Alu::Rsh, R5, shift));
            self.emit(jmp_imm(Cond::Eq, R5, 0, 2));
            self.emit(mov(R2, R5));
            self.emit(alu_imm(Alu::Add, R3, shift));
        }
    }

    /// r4 = quantize()'s bucket for r2: DTrace's power-of-two buckets, the
    /// zero bucket at 63, negative values below it.
    pub(super) fn quantize_index(&mut self) {
        let zero_bucket = crate::defs::agg::QUANTIZE_ZERO_BUCKET as i32;
        let positive = self.new_label();
        let have = self.new_label();
        self.emit(mov_imm(R4, zero_bucket));
        self.jump(jmp_imm(Cond::Eq, R2, 0, 0), have);
        self.jump(jmp_imm(Cond::Sgt, R2, 0, 0), positive);
        self.emit(neg(R2));
        self.log2();
        self.emit(mov_imm(R4, zero_bucket - 1));
        self.emit(alu_reg(Alu::Sub, R4, R3));
        self.jump(jmp_imm(Cond::Sge, R4, 0, 0), have);
        self.emit(mov_imm(R4, 0));
        self.jump(ja(0), have);
        self.bind(positive);
        self.log2();
        self.emit(mov_imm(R4, zero_bucket + 1));
        self.emit(alu_reg(Alu::Add, R4, R3));
        self.bind(have);
    }

    /// r4 = lquantize()'s bucket for r2: 0 below base, then one per step,
    /// the last for limit and above.
    pub(super) fn lquantize_index(&mut self, base: i64, limit: i64, step: i64) {
        let levels = ((limit - base) / step) as i32;
        let have = self.new_label();
        self.emit(mov_imm(R4, 0));
        self.jump(jmp_imm(Cond::Slt, R2, base as i32, 0), have);
        self.emit(alu_imm(Alu::Sub, R2, base as i32));
        self.emit(alu_imm(Alu::Div, R2, step as i32));
        self.emit(mov_imm(R4, levels + 1));
        self.jump(jmp_imm(Cond::Ge, R2, levels, 0), have);
        self.emit(mov(R4, R2));
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.bind(have);
    }

    /// r4 = llquantize()'s bucket for r2 (dtrace-utils' log-linear buckets,
    /// symmetric for negative values), as a chain of compares against the
    /// precomputed magnitudes.
    pub(super) fn llquantize_index(&mut self, plan: &LlquantizePlan) {
        let have = self.new_label();
        let signed = self.new_label();
        // r5 = 1 for a negative value; r2 = |value|.
        self.emit(mov_imm(R5, 0));
        self.emit(jmp_imm(Cond::Sge, R2, 0, 2));
        self.emit(neg(R2));
        self.emit(mov_imm(R5, 1));
        self.emit2(ld_imm64(R4, plan.bin0));
        self.emit2(ld_imm64(R3, plan.first));
        self.jump(jmp_reg(Cond::Lt, R2, R3, 0), have);
        for m in &plan.magnitudes {
            let next = self.new_label();
            self.emit2(ld_imm64(R3, m.upper));
            self.jump(jmp_reg(Cond::Ge, R2, R3, 0), next);
            match m.divisor {
                Some(0) => self.emit(mov_imm(R2, 0)),
                Some(d) => {
                    self.emit2(ld_imm64(R3, d));
                    self.emit(alu_reg(Alu::Div, R2, R3));
                }
                None => {
                    self.emit2(ld_imm64(R3, plan.nsteps));
                    self.emit(alu_reg(Alu::Mul, R2, R3));
                    self.emit2(ld_imm64(R3, m.upper));
                    self.emit(alu_reg(Alu::Div, R2, R3));
                }
            }
            self.emit(mov(R4, R2));
            self.emit2(ld_imm64(R3, m.offset));
            self.emit(alu_reg(Alu::Add, R4, R3));
            self.jump(ja(0), signed);
            self.bind(next);
        }
        self.emit2(ld_imm64(R4, plan.overflow));
        self.bind(signed);
        self.emit(jmp_imm(Cond::Eq, R5, 0, 1));
        self.emit(neg(R4));
        self.emit2(ld_imm64(R3, plan.bin0));
        self.emit(alu_reg(Alu::Add, R4, R3));
        self.bind(have);
    }
}
