//! json(text, selector): the value the selector names in a JSON object or
//! array, as illumos' dtrace_json finds it: one pass over the text as a
//! state machine, no tree. The selector (`a.b[2].c`) is first split into
//! NUL-separated elements, each with its start and its value as an array
//! index; an object's key is compared with the current element while it is
//! read. A string value is returned without its quotes (escapes as
//! written), a number, true, false or null as written, an object or array
//! as its text; anything not found, or text that is not JSON, is a NULL
//! string. A selector has at most MAX_ELEMENTS elements.
//!
//! The machine's variables live in the scratch map, whose contents the
//! verifier does not track: every path through one byte's handling meets
//! the others at the loop's top in the same state, so each byte is checked
//! once, whatever the paths wrote.

use super::*;

/// The machine's states (illumos' DTRACE_JSON_*).
#[derive(Clone, Copy)]
enum State {
    Rest,
    Object,
    String,
    StringEscape,
    StringEscapeUnicode,
    Colon,
    Comma,
    Identifier,
    Number,
    NumberFrac,
    NumberExp,
    Value,
    CollectObject,
}

const STATES: usize = State::CollectObject as usize + 1;

/// Elements a selector may have (`a.b[2]` has three).
const MAX_ELEMENTS: i32 = 16;

/// The machine's variables, 8-byte words at the start of its scratch region.
#[derive(Clone, Copy)]
enum Var {
    State,
    ArrayElem,
    ArrayPos,
    Unicount,
    IsKey,
    Collect,
    Found,
    InArray,
    Braces,
    Brackets,
    /// Offset of the current selector element in the element list.
    Elem,
    /// Which element is current.
    ElemNo,
    Nelems,
    /// Bytes of the value collected so far in the result.
    Dd,
    /// How far the key being read has been compared with the element.
    Kpos,
    /// The key being read differs from the element.
    Kbad,
    /// While the selector is split: the element's index value, whether it
    /// is not a number, and where it starts.
    Acc,
    AccBad,
    AccStart,
    /// Set by the bpf_loop() callback when the value is found.
    Outcome,
}

const VARS: usize = Var::Outcome as usize + 1;

/// The loop over the text as a bpf_loop() callback: where its result and
/// the selector's elements are in the scratch memory. Its context is the
/// caller's scratch memory address, then the text's.
#[derive(Clone, Copy)]
pub(crate) struct JsonCallback {
    label: Label,
    dst: i32,
    elems: i32,
}

/// The scratch bytes json() needs: its variables, then per element of the
/// selector its value as an index and its start.
pub(crate) const JSON_SCRATCH_BYTES: usize = VARS * 8 + MAX_ELEMENTS as usize * 16;

struct Json {
    dst: i32,
    elems: i32,
    top: Label,
    fail: Label,
    found_value: Label,
    /// Appends r5 to the value, then goes on with the next byte.
    append_next: Label,
    comma: Label,
    handlers: Vec<Label>,
}

impl Emitter<'_> {
    pub(super) fn json(&mut self, args: &[TExpr]) -> Result<(), CodegenError> {
        let saved = self.stack_top;
        let text = self.stash(&args[0])?;
        let selector = self.stash(&args[1])?;
        let dst = self.scratch_slot()?;
        let after_dst = self.scratch_next;
        let elems = self.scratch_slot()?;
        let j = self.json_labels(dst, elems);
        for k in 0..VARS {
            self.emit(st_imm(Size::DW, R8, self.json_var_at(k), 0));
        }
        self.set(Var::ArrayElem, -1);
        self.json_split_selector(&j, selector);
        let end = self.new_label();
        if self.env.bpf_loop {
            // bpf_loop(strsize, callback, &context, 0): the verifier checks
            // one byte's handling once, whatever strsize and however many
            // json() calls the clause makes.
            let context = self.alloc_slot(16)?;
            self.emit(stx(Size::DW, FP, context, R8));
            self.emit(ldx(Size::DW, R0, FP, text));
            self.emit(stx(Size::DW, FP, context + 8, R0));
            let label = match self.json_callbacks.iter().find(|c| (c.dst, c.elems) == (dst, elems)) {
                Some(callback) => callback.label,
                None => {
                    let label = self.new_label();
                    self.json_callbacks.push(JsonCallback { label, dst, elems });
                    label
                }
            };
            self.emit(mov_imm(R1, self.strsize()));
            self.function_fixups.push((self.insns.len(), label));
            self.emit2(ld_func(R2, 0));
            self.emit(mov(R3, FP));
            self.emit(alu_imm(Alu::Add, R3, context as i32));
            self.emit(mov_imm(R4, 0));
            self.emit(call(Helper::Loop));
            self.get(R0, Var::Outcome);
            self.jump(jmp_imm(Cond::Ne, R0, 0, 0), j.found_value);
            self.jump(ja(0), j.fail);
        } else {
            // The loop: r3 is the index of the next byte of the text.
            self.emit(mov_imm(R3, 0));
            self.bind(j.top);
            self.json_next_byte(&j, FP, text);
            self.json_byte(&j);
        }

        // Found: the value is in the result, NUL-terminated.
        self.bind(j.found_value);
        self.dst_into_r0(dst);
        self.jump(ja(0), end);
        // Not found, or not JSON: a NULL string.
        self.bind(j.fail);
        self.dst_into_r0(dst);
        self.emit(st_imm(Size::B, R0, 0, 0));
        self.emit(st_imm(Size::B, R0, 1, NULL_STRING_BYTES[1] as i32));
        self.bind(end);
        self.scratch_next = after_dst;
        self.stack_top = saved;
        Ok(())
    }

    /// The machine's places and fresh labels.
    fn json_labels(&mut self, dst: i32, elems: i32) -> Json {
        Json {
            dst,
            elems,
            top: self.new_label(),
            fail: self.new_label(),
            found_value: self.new_label(),
            append_next: self.new_label(),
            comma: self.new_label(),
            handlers: (0..STATES).map(|_| self.new_label()).collect(),
        }
    }

    /// r5 = the text's byte at r3, r3 advanced; the text ends at strsize or
    /// its NUL (not found). The text's address is at `at` from `base`.
    fn json_next_byte(&mut self, j: &Json, base: Reg, at: i16) {
        self.exit_if(Cond::Ge, R3, self.strsize(), j.fail);
        self.emit(ldx(Size::DW, R1, base, at));
        self.emit(alu_reg(Alu::Add, R1, R3));
        self.emit(ldx(Size::B, R5, R1, 0));
        self.exit_if(Cond::Eq, R5, 0, j.fail);
        self.emit(alu_imm(Alu::Add, R3, 1));
    }

    /// One byte's handling (r5) in the machine's state, then on to the top.
    fn json_byte(&mut self, j: &Json) {
        self.get(R0, Var::State);
        // A binary search: fewer branches per byte for the verifier to keep.
        self.json_dispatch(j, 0, STATES - 1);

        self.json_rest(j);
        self.json_object(j);
        self.json_string(j);
        self.json_escapes(j);
        self.json_colon_comma(j);
        self.json_identifier(j);
        self.json_number(j);
        self.json_value(j);
        self.json_collect(j);
        self.bind(j.append_next);
        self.json_append(j);
        self.jump(ja(0), j.top);
    }

    /// The bpf_loop() callback, a BPF function after the program: r1 is
    /// the byte's index, r2 the context (on the caller's stack). It returns
    /// 0 to go on, 1 to stop: not found, or found (Outcome set).
    pub(crate) fn json_callback(&mut self, callback: &JsonCallback) {
        self.bind(callback.label);
        let j = self.json_labels(callback.dst, callback.elems);
        self.emit(mov(R6, R2));
        self.emit(mov(R3, R1));
        self.emit(ldx(Size::DW, R8, R6, 0));
        self.json_next_byte(&j, R6, 8);
        self.json_byte(&j);
        self.bind(j.top);
        self.emit(mov_imm(R0, 0));
        self.emit(exit());
        self.bind(j.fail);
        self.emit(mov_imm(R0, 1));
        self.emit(exit());
        self.bind(j.found_value);
        self.set(Var::Outcome, 1);
        self.emit(mov_imm(R0, 1));
        self.emit(exit());
    }

    fn json_var_at(&self, k: usize) -> i16 {
        (self.scratch.json + k * 8) as i16
    }

    fn json_table_at(&self) -> i32 {
        (self.scratch.json + VARS * 8) as i32
    }

    fn get(&mut self, reg: Reg, var: Var) {
        self.emit(ldx(Size::DW, reg, R8, self.json_var_at(var as usize)));
    }

    fn put(&mut self, var: Var, reg: Reg) {
        self.emit(stx(Size::DW, R8, self.json_var_at(var as usize), reg));
    }

    fn set(&mut self, var: Var, value: i32) {
        self.emit(st_imm(Size::DW, R8, self.json_var_at(var as usize), value));
    }

    /// var += delta, through r0.
    fn bump(&mut self, var: Var, delta: i32) {
        self.get(R0, var);
        self.emit(alu_imm(Alu::Add, R0, delta));
        self.put(var, R0);
    }

    fn goto_state(&mut self, j: &Json, state: State) {
        self.set(Var::State, state as i32);
        self.jump(ja(0), j.top);
    }

    /// Sets the state, then appends r5 and goes on with the next byte.
    fn append_in_state(&mut self, j: &Json, state: State) {
        self.set(Var::State, state as i32);
        self.jump(ja(0), j.append_next);
    }

    /// Jumps to `to` when r5 is white space (isspace).
    fn if_space(&mut self, to: Label) {
        self.jump(jmp_imm(Cond::Eq, R5, b' ' as i32, 0), to);
        self.if_in(9, 13, to);
    }

    /// Jumps to `to` when r5 is in `low..=high`.
    fn if_in(&mut self, low: u8, high: u8, to: Label) {
        self.emit(jmp_imm(Cond::Lt, R5, low as i32, 2));
        self.emit(jmp_imm(Cond::Gt, R5, high as i32, 1));
        self.jump(ja(0), to);
    }

    /// The selector as NUL-separated elements in the element list ('.' and
    /// '[' separate, ']' is dropped, a leading '[' too), and the table of
    /// each element's index value (-1 when not a number; none is 0, as
    /// dtrace_strtoll reads it) and start. Too many elements: no value.
    fn json_split_selector(&mut self, j: &Json, selector: i16) {
        let (top, done, skip, separator, store, not_digit) = (
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
        );
        self.set(Var::Nelems, 1);
        self.emit(ldx(Size::DW, R1, FP, selector));
        self.emit(mov(R2, R8));
        self.emit(alu_imm(Alu::Add, R2, j.elems));
        self.emit(mov_imm(R3, 0));
        self.emit(mov_imm(R4, 0));
        self.emit(ldx(Size::B, R5, R1, 0));
        self.emit(jmp_imm(Cond::Ne, R5, b'[' as i32, 1));
        self.emit(mov_imm(R3, 1));
        self.bind(top);
        // The output index trails the input by the brackets dropped, which
        // differ by path: forgotten, so each pass is checked once.
        self.forget(R4);
        self.exit_if(Cond::Ge, R3, self.strsize(), done);
        self.exit_if(Cond::Ge, R4, self.strsize() - 1, done);
        self.load_source_byte();
        self.exit_if(Cond::Eq, R5, 0, done);
        self.emit(alu_imm(Alu::Add, R3, 1));
        self.jump(jmp_imm(Cond::Eq, R5, b']' as i32, 0), skip);
        self.jump(jmp_imm(Cond::Eq, R5, b'.' as i32, 0), separator);
        self.jump(jmp_imm(Cond::Ne, R5, b'[' as i32, 0), store);
        self.bind(separator);
        self.json_end_element();
        self.bump(Var::Nelems, 1);
        self.emit(mov_imm(R5, 0));
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(stx(Size::B, R0, 0, R5));
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.put(Var::AccStart, R4);
        self.set(Var::Acc, 0);
        self.set(Var::AccBad, 0);
        self.jump(ja(0), top);
        self.bind(store);
        self.emit(mov(R0, R2));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(stx(Size::B, R0, 0, R5));
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.jump(jmp_imm(Cond::Lt, R5, b'0' as i32, 0), not_digit);
        self.jump(jmp_imm(Cond::Gt, R5, b'9' as i32, 0), not_digit);
        self.get(R0, Var::Acc);
        self.emit(alu_imm(Alu::Mul, R0, 10));
        self.emit(alu_reg(Alu::Add, R0, R5));
        self.emit(alu_imm(Alu::Sub, R0, b'0' as i32));
        self.put(Var::Acc, R0);
        self.jump(ja(0), top);
        self.bind(not_digit);
        self.set(Var::AccBad, 1);
        self.bind(skip);
        self.jump(ja(0), top);
        self.bind(done);
        self.launder(R4);
        self.terminate_at_r4();
        self.json_end_element();
        self.get(R0, Var::Nelems);
        self.jump(jmp_imm(Cond::Gt, R0, MAX_ELEMENTS, 0), j.fail);
    }

    /// table[nelems - 1] = (AccBad ? -1 : Acc, AccStart), when it fits.
    /// Keeps r1-r4; uses r0 and r5.
    fn json_end_element(&mut self) {
        let (full, value_known) = (self.new_label(), self.new_label());
        self.get(R0, Var::AccBad);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), value_known);
        self.set(Var::Acc, -1);
        self.bind(value_known);
        self.get(R0, Var::Nelems);
        self.emit(alu_imm(Alu::Sub, R0, 1));
        self.jump(jmp_imm(Cond::Ge, R0, MAX_ELEMENTS, 0), full);
        self.json_table_entry(R5, R0);
        self.get(R0, Var::Acc);
        self.emit(stx(Size::DW, R5, 0, R0));
        self.get(R0, Var::AccStart);
        self.emit(stx(Size::DW, R5, 8, R0));
        self.bind(full);
    }

    /// dst = the address of table entry `index` (a register checked to be
    /// below MAX_ELEMENTS; it is scaled in place).
    fn json_table_entry(&mut self, dst: Reg, index: Reg) {
        self.emit(alu_imm(Alu::Lsh, index, 4));
        self.emit(mov(dst, R8));
        self.emit(alu_imm(Alu::Add, dst, self.json_table_at()));
        self.emit(alu_reg(Alu::Add, dst, index));
    }

    /// Jumps to the handler of the state in r0 (states lo..=hi).
    fn json_dispatch(&mut self, j: &Json, lo: usize, hi: usize) {
        if lo == hi {
            self.jump(ja(0), j.handlers[lo]);
            return;
        }
        let mid = (lo + hi).div_ceil(2);
        let upper = self.new_label();
        self.jump(jmp_imm(Cond::Ge, R0, mid as i32, 0), upper);
        self.json_dispatch(j, lo, mid - 1);
        self.bind(upper);
        self.json_dispatch(j, mid, hi);
    }

    fn handler(&mut self, j: &Json, state: State) {
        self.bind(j.handlers[state as usize]);
    }

    /// Appends r5 to the result (dropped past strsize); while a key is read,
    /// compares it with the current element. Uses r0 and r4.
    fn json_append(&mut self, j: &Json) {
        let (stored, no_compare, same, bad) = (self.new_label(), self.new_label(), self.new_label(), self.new_label());
        self.get(R4, Var::Dd);
        self.jump(jmp_imm(Cond::Ge, R4, self.strsize() - 1, 0), stored);
        self.emit(mov(R0, R8));
        self.emit(alu_imm(Alu::Add, R0, j.dst));
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.emit(stx(Size::B, R0, 0, R5));
        self.emit(alu_imm(Alu::Add, R4, 1));
        self.put(Var::Dd, R4);
        self.bind(stored);
        self.get(R0, Var::IsKey);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), no_compare);
        self.get(R0, Var::Elem);
        self.get(R4, Var::Kpos);
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.jump(jmp_imm(Cond::Ge, R0, self.strsize() - 1, 0), bad);
        self.emit(mov(R4, R8));
        self.emit(alu_imm(Alu::Add, R4, j.elems));
        self.emit(alu_reg(Alu::Add, R4, R0));
        self.emit(ldx(Size::B, R4, R4, 0));
        self.jump(jmp_reg(Cond::Eq, R4, R5, 0), same);
        self.bind(bad);
        self.set(Var::Kbad, 1);
        self.bind(same);
        self.bump(Var::Kpos, 1);
        self.bind(no_compare);
    }

    /// Ends the collected value: result[dd] = NUL, dd = 0.
    fn json_end_value(&mut self, j: &Json) {
        self.get(R4, Var::Dd);
        self.dst_into_r2(j.dst);
        self.terminate_at_r4();
        self.set(Var::Dd, 0);
    }

    /// A scalar value has ended: it is the answer if its key matched and
    /// the selector has no more elements, no answer if more were wanted;
    /// otherwise goes on at `not_found`.
    fn json_scalar_done(&mut self, j: &Json, not_found: Label) {
        self.json_end_value(j);
        self.get(R0, Var::Found);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), not_found);
        self.get(R0, Var::Nelems);
        self.jump(jmp_imm(Cond::Gt, R0, 1, 0), j.fail);
        self.jump(ja(0), j.found_value);
    }

    /// An array starts: its wanted index is the current element's value;
    /// found when it is 0.
    fn json_array_starts(&mut self, j: &Json) {
        self.get(R0, Var::ElemNo);
        self.jump(jmp_imm(Cond::Ge, R0, MAX_ELEMENTS, 0), j.fail);
        self.json_table_entry(R4, R0);
        self.emit(ldx(Size::DW, R0, R4, 0));
        self.put(Var::ArrayElem, R0);
        self.set(Var::InArray, 1);
        self.set(Var::ArrayPos, 0);
        self.set(Var::Found, 0);
        self.emit(jmp_imm(Cond::Ne, R0, 0, 1));
        self.set(Var::Found, 1);
    }

    fn json_rest(&mut self, j: &Json) {
        self.handler(j, State::Rest);
        let (object, array) = (self.new_label(), self.new_label());
        self.if_space(j.top);
        self.jump(jmp_imm(Cond::Eq, R5, b'{' as i32, 0), object);
        self.jump(jmp_imm(Cond::Eq, R5, b'[' as i32, 0), array);
        self.jump(ja(0), j.fail);
        self.bind(object);
        self.goto_state(j, State::Object);
        self.bind(array);
        self.json_array_starts(j);
        self.goto_state(j, State::Value);
    }

    fn json_object(&mut self, j: &Json) {
        self.handler(j, State::Object);
        self.if_space(j.top);
        self.jump(jmp_imm(Cond::Ne, R5, b'"' as i32, 0), j.fail);
        self.set(Var::IsKey, 1);
        self.set(Var::Kpos, 0);
        self.set(Var::Kbad, 0);
        self.goto_state(j, State::String);
    }

    fn json_string(&mut self, j: &Json) {
        self.handler(j, State::String);
        let (escape, quote) = (self.new_label(), self.new_label());
        self.jump(jmp_imm(Cond::Eq, R5, b'\\' as i32, 0), escape);
        self.jump(jmp_imm(Cond::Eq, R5, b'"' as i32, 0), quote);
        self.jump(ja(0), j.append_next);
        self.bind(escape);
        self.append_in_state(j, State::StringEscape);
        // The closing quote.
        self.bind(quote);
        let (not_collected, key, after) = (self.new_label(), self.new_label(), self.new_label());
        self.get(R0, Var::Collect);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), not_collected);
        self.set(Var::Collect, 0);
        self.append_in_state(j, State::CollectObject);
        self.bind(not_collected);
        self.get(R0, Var::IsKey);
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), key);
        self.json_scalar_done(j, after);
        self.bind(after);
        self.goto_state(j, State::Comma);
        // A key: it matched if every byte did and the element ends here.
        self.bind(key);
        let no_match = self.new_label();
        self.json_end_value(j);
        self.set(Var::IsKey, 0);
        self.set(Var::Found, 0);
        self.get(R0, Var::Kbad);
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), no_match);
        self.get(R0, Var::Elem);
        self.get(R4, Var::Kpos);
        self.emit(alu_reg(Alu::Add, R0, R4));
        self.jump(jmp_imm(Cond::Ge, R0, self.strsize() - 1, 0), no_match);
        self.emit(mov(R4, R8));
        self.emit(alu_imm(Alu::Add, R4, j.elems));
        self.emit(alu_reg(Alu::Add, R4, R0));
        self.emit(ldx(Size::B, R0, R4, 0));
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), no_match);
        self.set(Var::Found, 1);
        self.bind(no_match);
        self.goto_state(j, State::Colon);
    }

    fn json_escapes(&mut self, j: &Json) {
        self.handler(j, State::StringEscape);
        let unicode = self.new_label();
        self.jump(jmp_imm(Cond::Eq, R5, b'u' as i32, 0), unicode);
        self.append_in_state(j, State::String);
        self.bind(unicode);
        self.set(Var::Unicount, 0);
        self.append_in_state(j, State::StringEscapeUnicode);

        self.handler(j, State::StringEscapeUnicode);
        let (hex, more) = (self.new_label(), self.new_label());
        self.if_in(b'0', b'9', hex);
        self.if_in(b'a', b'f', hex);
        self.if_in(b'A', b'F', hex);
        self.jump(ja(0), j.fail);
        self.bind(hex);
        self.bump(Var::Unicount, 1);
        self.jump(jmp_imm(Cond::Ne, R0, 4, 0), more);
        self.append_in_state(j, State::String);
        self.bind(more);
        self.jump(ja(0), j.append_next);
    }

    fn json_colon_comma(&mut self, j: &Json) {
        self.handler(j, State::Colon);
        self.if_space(j.top);
        self.jump(jmp_imm(Cond::Ne, R5, b':' as i32, 0), j.fail);
        self.goto_state(j, State::Value);

        // Also entered with the byte that ended a number or identifier.
        self.handler(j, State::Comma);
        self.bind(j.comma);
        let in_object = self.new_label();
        self.if_space(j.top);
        self.jump(jmp_imm(Cond::Ne, R5, b',' as i32, 0), j.fail);
        self.get(R0, Var::InArray);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), in_object);
        self.bump(Var::ArrayPos, 1);
        self.get(R4, Var::ArrayElem);
        self.emit(jmp_reg(Cond::Ne, R0, R4, 1));
        self.set(Var::Found, 1);
        self.goto_state(j, State::Value);
        self.bind(in_object);
        self.goto_state(j, State::Object);
    }

    /// true, false and null.
    fn json_identifier(&mut self, j: &Json) {
        self.handler(j, State::Identifier);
        let (ended, known, not_found) = (self.new_label(), self.new_label(), self.new_label());
        self.jump(jmp_imm(Cond::Lt, R5, b'a' as i32, 0), ended);
        self.jump(jmp_imm(Cond::Gt, R5, b'z' as i32, 0), ended);
        self.jump(ja(0), j.append_next);
        self.bind(ended);
        self.json_end_value(j);
        // The word is in the result: compare it whole, NUL included.
        self.dst_into_r2(j.dst);
        for word in [&b"true\0"[..], b"false\0", b"null\0"] {
            let next = self.new_label();
            for (k, c) in word.iter().enumerate() {
                self.emit(ldx(Size::B, R0, R2, k as i16));
                self.jump(jmp_imm(Cond::Ne, R0, *c as i32, 0), next);
            }
            self.jump(ja(0), known);
            self.bind(next);
        }
        self.jump(ja(0), j.fail);
        self.bind(known);
        self.get(R0, Var::Found);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), not_found);
        self.get(R0, Var::Nelems);
        self.jump(jmp_imm(Cond::Gt, R0, 1, 0), j.fail);
        self.jump(ja(0), j.found_value);
        self.bind(not_found);
        self.set(Var::State, State::Comma as i32);
        self.jump(ja(0), j.comma);
    }

    fn json_number(&mut self, j: &Json) {
        let (frac, exp, ended, after, to_frac, to_exp) = (
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
        );
        self.handler(j, State::Number);
        self.jump(jmp_imm(Cond::Ne, R5, b'.' as i32, 0), to_frac);
        self.append_in_state(j, State::NumberFrac);
        self.bind(to_frac);
        self.jump(jmp_imm(Cond::Eq, R5, b'x' as i32, 0), j.fail);
        self.jump(jmp_imm(Cond::Eq, R5, b'X' as i32, 0), j.fail);
        self.jump(ja(0), frac);

        self.handler(j, State::NumberFrac);
        self.bind(frac);
        self.jump(jmp_imm(Cond::Eq, R5, b'e' as i32, 0), to_exp);
        self.jump(jmp_imm(Cond::Eq, R5, b'E' as i32, 0), to_exp);
        // A sign belongs to an exponent only.
        self.jump(jmp_imm(Cond::Eq, R5, b'+' as i32, 0), j.fail);
        self.jump(jmp_imm(Cond::Eq, R5, b'-' as i32, 0), j.fail);
        self.jump(ja(0), exp);
        self.bind(to_exp);
        self.append_in_state(j, State::NumberExp);

        self.handler(j, State::NumberExp);
        self.bind(exp);
        self.if_in(b'0', b'9', j.append_next);
        self.jump(jmp_imm(Cond::Eq, R5, b'+' as i32, 0), j.append_next);
        self.jump(jmp_imm(Cond::Eq, R5, b'-' as i32, 0), j.append_next);
        self.bind(ended);
        self.json_scalar_done(j, after);
        self.bind(after);
        self.set(Var::State, State::Comma as i32);
        self.jump(ja(0), j.comma);
    }

    fn json_value(&mut self, j: &Json) {
        self.handler(j, State::Value);
        let (open, string, word, number, collect) =
            (self.new_label(), self.new_label(), self.new_label(), self.new_label(), self.new_label());
        self.if_space(j.top);
        self.jump(jmp_imm(Cond::Eq, R5, b'{' as i32, 0), open);
        self.jump(jmp_imm(Cond::Eq, R5, b'[' as i32, 0), open);
        self.jump(jmp_imm(Cond::Eq, R5, b'"' as i32, 0), string);
        self.if_in(b'a', b'z', word);
        self.if_in(b'0', b'9', number);
        self.jump(jmp_imm(Cond::Eq, R5, b'-' as i32, 0), number);
        self.jump(ja(0), j.fail);
        self.bind(string);
        self.goto_state(j, State::String);
        self.bind(word);
        self.append_in_state(j, State::Identifier);
        self.bind(number);
        self.append_in_state(j, State::Number);
        // An object or array: the next element of the selector names
        // something in it, or it is the value (or one to skip) whole.
        self.bind(open);
        self.get(R0, Var::Nelems);
        self.jump(jmp_imm(Cond::Le, R0, 1, 0), collect);
        self.get(R0, Var::Found);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), collect);
        self.bump(Var::Nelems, -1);
        self.bump(Var::ElemNo, 1);
        self.set(Var::Dd, 0);
        // The next element's start, from the table.
        self.jump(jmp_imm(Cond::Ge, R0, MAX_ELEMENTS, 0), j.fail);
        self.json_table_entry(R4, R0);
        self.emit(ldx(Size::DW, R0, R4, 8));
        self.put(Var::Elem, R0);
        let object = self.new_label();
        self.jump(jmp_imm(Cond::Ne, R5, b'[' as i32, 0), object);
        self.json_array_starts(j);
        self.goto_state(j, State::Value);
        self.bind(object);
        self.set(Var::InArray, 0);
        self.set(Var::Found, 0);
        self.goto_state(j, State::Object);
        self.bind(collect);
        let brace = self.new_label();
        self.jump(jmp_imm(Cond::Ne, R5, b'[' as i32, 0), brace);
        self.set(Var::Brackets, 1);
        self.append_in_state(j, State::CollectObject);
        self.bind(brace);
        self.set(Var::Braces, 1);
        self.append_in_state(j, State::CollectObject);
    }

    /// Inside an object or array that is collected whole (or skipped):
    /// counts brackets and braces until they balance.
    fn json_collect(&mut self, j: &Json) {
        self.handler(j, State::CollectObject);
        let (close_bracket, close_brace, open_bracket, open_brace, check, string) = (
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
            self.new_label(),
        );
        self.json_append(j);
        self.jump(jmp_imm(Cond::Eq, R5, b'"' as i32, 0), string);
        self.jump(jmp_imm(Cond::Eq, R5, b']' as i32, 0), close_bracket);
        self.jump(jmp_imm(Cond::Eq, R5, b'}' as i32, 0), close_brace);
        self.jump(jmp_imm(Cond::Eq, R5, b'[' as i32, 0), open_bracket);
        self.jump(jmp_imm(Cond::Eq, R5, b'{' as i32, 0), open_brace);
        self.jump(ja(0), j.top);
        self.bind(string);
        self.set(Var::Collect, 1);
        self.goto_state(j, State::String);
        for (label, var, delta) in [
            (close_bracket, Var::Brackets, -1),
            (close_brace, Var::Braces, -1),
            (open_bracket, Var::Brackets, 1),
            (open_brace, Var::Braces, 1),
        ] {
            self.bind(label);
            self.get(R0, var);
            if delta < 0 {
                // Unbalanced: not JSON.
                self.jump(jmp_imm(Cond::Eq, R0, 0, 0), j.fail);
            }
            self.emit(alu_imm(Alu::Add, R0, delta));
            self.put(var, R0);
            self.jump(ja(0), check);
        }
        self.bind(check);
        let skipped = self.new_label();
        self.get(R0, Var::Brackets);
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), j.top);
        self.get(R0, Var::Braces);
        self.jump(jmp_imm(Cond::Ne, R0, 0, 0), j.top);
        self.get(R0, Var::Found);
        self.jump(jmp_imm(Cond::Eq, R0, 0, 0), skipped);
        self.json_end_value(j);
        self.jump(ja(0), j.found_value);
        self.bind(skipped);
        self.set(Var::Dd, 0);
        self.goto_state(j, State::Comma);
    }
}
