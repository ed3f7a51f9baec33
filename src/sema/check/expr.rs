//! Expression typing: literals, identifiers and built-in variables, unary
//! and binary operators (with pointer arithmetic), member access on D and
//! kernel types (bit-fields included), indexing of pointers and associative
//! arrays, assignment targets, and the constant folding that aggregating
//! functions and alloca() need.

use super::types::{arith_result, int_constant_type, pointee, type_size};
use super::*;
use crate::provider::desc::macro_variable;
use crate::sema::kernel_btf::MemberKind;
use crate::syntax::ast::{BinOp, ExprKind, UnOp};

impl Checker<'_> {
    /// `base->name` (arrow) or `base.name`: the member's value, read from the
    /// kernel at the struct's address plus the member's offset.
    pub(super) fn member_access(&mut self, base: &ast::Expr, name: &str, arrow: bool, span: &Span) -> Result<TExpr> {
        if arrow && matches!(&base.kind, ExprKind::Index(b, _) if matches!(&b.kind, ExprKind::Ident(n) if n == "args"))
        {
            self.arg_member = Some(name.to_string());
        }
        let base = self.expr_any(base);
        self.arg_member = None;
        let base = base?;
        if let TKind::Xlate { translator, input } = base.kind {
            if arrow != matches!(base.ty, Type::Pointer(_)) {
                return Err(member_operand_error(arrow, &base.ty, span));
            }
            return self.translated_member(translator, *input, name, span);
        }
        let record = match (&base.ty, arrow) {
            (Type::Pointer(to), true) => match &**to {
                Type::Struct(r) => r.clone(),
                _ => return Err(member_operand_error(arrow, &base.ty, span)),
            },
            (Type::Struct(r), false) => r.clone(),
            _ => return Err(member_operand_error(arrow, &base.ty, span)),
        };
        self.note_runtime_filled(&record);
        let record = self.completed(record);
        if record.body == RecordBody::Forward {
            let kind = if record.union { "union" } else { "struct" };
            return Err(CompileError::new(
                "D_OP_INCOMPLETE",
                span,
                format!(
                    "operator {} cannot be applied to a forward declaration: no {kind} {} definition is available",
                    if arrow { "->" } else { "." },
                    record.name
                ),
            ));
        }
        let found = self.kernel_btf.member(&record, name).map_err(|why| CompileError::new("D_TYPE_ERR", span, why))?;
        let Some(member) = found else {
            let kind = if record.union { "union" } else { "struct" };
            return Err(CompileError::new(
                "D_TYPE_MEMBER",
                span,
                format!("{name} is not a member of {kind} {}", record.name),
            ));
        };
        let typed = |kind, ty| TExpr { kind, ty, span: span.clone() };
        let addr_ty = Type::Pointer(Box::new(Type::Void));
        let addr = typed(TKind::Offset(Box::new(base), member.offset as u64), addr_ty);
        self.last_bitfield = None;
        match member.kind {
            MemberKind::CharArray { len } => Ok(typed(TKind::LoadStr(Box::new(addr), len), Type::String)),
            MemberKind::Value(ty) => value_at(addr, ty, span),
            MemberKind::Bitfield { ty, shift, bits } => {
                let unit = match ty {
                    Type::Int { size, .. } => Type::Int { size, signed: false, name: "uint64_t" },
                    _ => Type::UINT64,
                };
                self.last_bitfield = Some((addr.clone(), unit, shift, bits));
                Ok(bitfield(addr, ty, shift, bits, span))
            }
        }
    }

    /// Whether `base[...]` indexes an associative array rather than a
    /// pointer or array: a global or self-> name that is not a scalar
    /// variable (assignment declares associative arrays on first use).
    pub(super) fn names_assoc_array(&self, base: &ast::Expr) -> bool {
        let (scope, name) = match &base.kind {
            ExprKind::Ident(name) if !is_predefined(name) => (Scope::Global, name),
            ExprKind::SelfVar(name) => (Scope::Thread, name),
            _ => return false,
        };
        self.lookup_var(scope, name).is_none_or(|(_, ty)| pointee(&ty).is_none() && ty != Type::String)
    }

    /// `uregs[i]`: a user register of the current thread, named by a
    /// constant (`R_PC`, `R_SP`, ... of d-library/regs.d), as DTrace's
    /// uregs[] takes only constant indexes.
    fn uregs(&mut self, keys: &[ast::Expr], span: &Span) -> Result<TExpr> {
        let [key] = keys else {
            return Err(CompileError::new(
                "D_PROTO_LEN",
                span,
                format!("uregs[ ] prototype mismatch: {} args passed, 1 expected", keys.len()),
            ));
        };
        let index = self.expr(key)?;
        let Some(word) = folded(&index).filter(|_| index.ty.is_int()).and_then(|w| u32::try_from(w).ok()) else {
            return Err(CompileError::new(
                "D_PROTO_ARG",
                &key.span,
                format!(
                    "uregs[ ] argument #1 is incompatible with prototype:\n\tprototype: integer constant\n\t argument: {}",
                    index.ty.name()
                ),
            ));
        };
        self.program.uses_uregs = true;
        let word = self.uregs_word(word);
        Ok(TExpr { kind: TKind::Subr(Subr::Uregs(word), Vec::new()), ty: Type::UINT64, span: span.clone() })
    }

    /// Where uregs[word] is kept: pt_regs' words first; on x86_64 the
    /// words after them (regs.d's R_DS, R_ES, R_FS, R_GS, R_TRAPNO, as
    /// dtrace-utils numbers them, then R_FSBASE, R_GSBASE) are members of
    /// task->thread, R_FS and R_GS being the bases as in dtrace-utils.
    fn uregs_word(&mut self, word: u32) -> UregsWord {
        let pt_regs_words = if cfg!(target_arch = "aarch64") { 34 } else { 21 };
        if word < pt_regs_words {
            return UregsWord::PtRegs(word);
        }
        let member = match word {
            _ if cfg!(target_arch = "aarch64") => return UregsWord::Zero,
            21 => "ds",
            22 => "es",
            23 | 26 => "fsbase",
            24 | 27 => "gsbase",
            25 => "trap_nr",
            _ => return UregsWord::Zero,
        };
        let mut at = |record: &str, member: &str| -> Option<(usize, Type)> {
            let record = self.kernel_btf.record(record, false).ok()??;
            let found = self.kernel_btf.member(&record, member).ok()??;
            match found.kind {
                crate::sema::kernel_btf::MemberKind::Value(ty) => Some((found.offset, ty)),
                _ => None,
            }
        };
        let (Some((thread, _)), Some((offset, ty))) = (at("task_struct", "thread"), at("thread_struct", member)) else {
            return UregsWord::Zero;
        };
        match ty {
            Type::Int { size, .. } => UregsWord::Task { offset: thread + offset, size },
            _ => UregsWord::Zero,
        }
    }

    /// What DTrace calls an identifier that is no scalar (dt_idkind_name):
    /// an associative array (args[] too), an action, an aggregating
    /// function or a subroutine.
    fn non_scalar_kind(&self, name: &str) -> Option<&'static str> {
        if name == "args" || self.program.assoc_arrays.iter().any(|a| a.name == name && !a.thread_local) {
            return Some("associative array");
        }
        let subroutine = matches!(
            name,
            "copyout"
                | "copyoutstr"
                | "copyinstr"
                | "progenyof"
                | "d_path"
                | "getf"
                | "mutex_owned"
                | "mutex_owner"
                | "mutex_type_adaptive"
                | "mutex_type_spin"
                | "rw_read_held"
                | "rw_write_held"
                | "rw_iswriter"
                | "ddi_pathname"
                | "msgsize"
                | "msgdsize"
        ) || super::actions::subroutine_signature(name).is_some();
        if subroutine {
            Some("function")
        } else if super::actions::is_action(name) {
            Some("tracing function")
        } else if super::aggregations::is_aggregating_function(name) {
            Some("aggregating function")
        } else {
            None
        }
    }

    /// `base[index]` where base is a pointer or an array: the element.
    /// `one_past`: the element is the operand of `&`, which may name the
    /// one past the end of an array.
    pub(super) fn pointer_index(
        &mut self,
        base: TExpr,
        keys: &[ast::Expr],
        one_past: bool,
        span: &Span,
    ) -> Result<TExpr> {
        if keys.len() != 1 {
            return Err(CompileError::new(
                "D_OP_INDEX",
                span,
                format!("operator [ ] applied to type {} requires exactly one index", base.ty.name()),
            ));
        }
        let mut index = self.expr(&keys[0])?;
        // An index is checked against the array's size (not a flexible
        // array member's, of no size): a constant one here, as
        // dtrace-utils' dt_cook_op2 words it, another when it is known.
        if let Type::Array(_, len @ 1..) = &base.ty {
            let end = *len as u64 + u64::from(one_past);
            if let TKind::Int(at) = index.kind {
                if at >= end {
                    return Err(CompileError::new(
                        "D_ARR_BOUNDS",
                        span,
                        format!("index outside array bounds: {at}, max is {len}"),
                    ));
                }
            } else if index.ty.is_int() {
                let (ty, span) = (index.ty.clone(), index.span.clone());
                index = TExpr { kind: TKind::Subr(Subr::CheckedIndex(end), vec![index]), ty, span };
            }
        }
        let elem = self.pointer_add(BinOp::Add, base, index, span)?;
        self.deref(elem, span)
    }

    /// `*p`: the value p points at.
    pub(super) fn deref(&mut self, e: TExpr, span: &Span) -> Result<TExpr> {
        match &e.ty {
            Type::Pointer(to) | Type::Array(to, _) => {
                let to = self.resolved((**to).clone());
                value_at(TExpr { ty: Type::Pointer(Box::new(Type::Void)), ..e }, to, span)
            }
            _ => Err(CompileError::new("D_DEREF_NONPTR", span, "cannot dereference non-pointer type")),
        }
    }

    /// Pointer arithmetic as in C: `p + n` and `p - n` move by n elements,
    /// `p - q` counts the elements between. Arrays decay to pointers.
    pub(super) fn pointer_add(&mut self, op: BinOp, l: TExpr, r: TExpr, span: &Span) -> Result<TExpr> {
        let typed = |kind, ty| TExpr { kind, ty, span: span.clone() };
        let (ptr, int) = match (pointee(&l.ty), pointee(&r.ty)) {
            (Some(a), Some(b)) if op == BinOp::Sub => {
                let (a, b) = (self.resolved(a), self.resolved(b));
                if a != b {
                    return Err(CompileError::new(
                        "D_OP_INCOMPAT",
                        span,
                        format!("operands have incompatible types: \"{}\" - \"{}\"", l.ty.name(), r.ty.name()),
                    ));
                }
                let size = type_size(&a, self.opts.strsize).max(1) as u64;
                let diff = typed(
                    TKind::Binary { op, signed: true, lhs: Box::new(l), rhs: Box::new(r) },
                    Type::Int { size: 8, signed: true, name: "ptrdiff_t" },
                );
                let count = TKind::Binary {
                    op: BinOp::Div,
                    signed: true,
                    lhs: Box::new(diff.clone()),
                    rhs: Box::new(typed(TKind::Int(size), Type::INT64)),
                };
                return Ok(typed(count, diff.ty));
            }
            // dt_cook_op2: void * takes no arithmetic (its element has no size).
            (Some(a), None) if r.ty.is_int() && a != Type::Void => (l, r),
            (None, Some(b)) if l.ty.is_int() && op == BinOp::Add && b != Type::Void => (r, l),
            _ => {
                return Err(CompileError::new(
                    "D_OP_INCOMPAT",
                    span,
                    format!(
                        "operands have incompatible types: \"{}\" {} \"{}\"",
                        l.ty.name(),
                        binop_text(op),
                        r.ty.name()
                    ),
                ))
            }
        };
        let elem = self.resolved(pointee(&ptr.ty).expect("checked above"));
        let size = type_size(&elem, self.opts.strsize) as u64;
        let int = typed(TKind::Cast(Box::new(int)), Type::INT64);
        let scaled = if size == 1 {
            int
        } else {
            let size = typed(TKind::Int(size), Type::INT64);
            typed(TKind::Binary { op: BinOp::Mul, signed: true, lhs: Box::new(int), rhs: Box::new(size) }, Type::INT64)
        };
        let ty = Type::Pointer(Box::new(elem));
        Ok(typed(TKind::Binary { op, signed: false, lhs: Box::new(ptr), rhs: Box::new(scaled) }, ty))
    }

    /// An expression that must be an integer or a pointer.
    pub(super) fn scalar_expr(&mut self, e: &ast::Expr, tag: &'static str, message: &str) -> Result<TExpr> {
        let typed = self.expr(e)?;
        if !typed.ty.is_scalar() {
            return Err(CompileError::new(tag, &e.span, message));
        }
        Ok(typed)
    }

    pub(super) fn expr(&mut self, e: &ast::Expr) -> Result<TExpr> {
        let value = self.expr_any(e)?;
        // DTrace's code generator refuses a translated pointer as a value
        // (D_CG_DYN); casts and keys say so in their own words.
        if let TKind::Xlate { .. } = value.kind {
            return Err(CompileError::new(
                "D_CG_DYN",
                &e.span,
                format!("a translated {} can only be used with -> or . yet", value.ty.name()),
            ));
        }
        Ok(value)
    }

    /// An expression, including a translated struct (`xlate`, `curpsinfo`),
    /// which only member access may use.
    pub(super) fn expr_any(&mut self, e: &ast::Expr) -> Result<TExpr> {
        let span = e.span.clone();
        let typed = |kind, ty| TExpr { kind, ty, span: e.span.clone() };
        Ok(match &e.kind {
            ExprKind::Int { value, suffix, decimal } => {
                typed(TKind::Int(*value), int_constant_type(*value, *suffix, *decimal))
            }
            // A constant of more than four characters is a long, as DTrace
            // types an integer constant by its value.
            ExprKind::Char(c) if i32::try_from(*c).is_err() => {
                typed(TKind::Int(*c as u64), Type::Int { size: 8, signed: true, name: "long" })
            }
            ExprKind::Char(c) => typed(TKind::Int(*c as u64), Type::INT),
            ExprKind::Str(bytes) => {
                // A longer literal is cut to strsize, as every D string.
                let index = self.intern(&bytes[..bytes.len().min(self.opts.max_strlen)]);
                typed(TKind::Str(index), Type::String)
            }
            ExprKind::Float(_) => {
                return Err(CompileError::new("D_FLOAT", &span, "floating-point constants are not permitted"))
            }
            ExprKind::Ident(name) if name == "curcpu" => {
                let Some(info @ Type::Struct(_)) = self.typedef_named("cpuinfo_t") else {
                    unreachable!("the D library declares cpuinfo_t")
                };
                self.program.uses_cpuinfo = true;
                typed(TKind::Builtin(Builtin::Curcpu), Type::Pointer(Box::new(info)))
            }
            ExprKind::Ident(name) if name == "curthread" => {
                let task = self.kernel_record("task_struct", false, &span)?;
                typed(TKind::Builtin(Builtin::Curthread), Type::Pointer(Box::new(Type::Struct(task))))
            }
            ExprKind::Arrow(base, member) => return self.member_access(base, member, true, &span),
            ExprKind::Member(base, member) => return self.member_access(base, member, false, &span),
            ExprKind::Ident(name) if self.bindings.iter().any(|(param, _)| param == name) => {
                let (_, input) = self.bindings.iter().rev().find(|(param, _)| param == name).expect("just found");
                TExpr { span, ..input.clone() }
            }
            ExprKind::Ident(name) if builtin(name).is_none() && self.declares_value(name) => {
                return self.declared_value(name, &span)
            }
            ExprKind::Xlate(target, operand) => return self.xlate(target, operand, &span),
            ExprKind::Backquote { module, name } => return self.kernel_variable(module.as_deref(), name, &span),
            ExprKind::Offsetof(tn, member) => {
                // An undeclared struct is a forward declaration, which
                // offsetof cannot take (dt_cook_op2's D_OFFSETOF_TYPE).
                let ty = self.type_name(tn)?;
                let record = match &ty {
                    Type::Struct(record) => Some(self.completed(record.clone())),
                    _ => None,
                };
                let Some(record) = record.filter(|r| r.body != RecordBody::Forward) else {
                    return Err(CompileError::new(
                        "D_OFFSETOF_TYPE",
                        &span,
                        "offsetof operand must be a struct or union type",
                    ));
                };
                let record = &record;
                let found = self
                    .kernel_btf
                    .member(record, member)
                    .map_err(|why| CompileError::new("D_TYPE_ERR", &span, why))?;
                match found {
                    Some(m) if !matches!(m.kind, MemberKind::Bitfield { .. }) => {
                        typed(TKind::Int(m.offset as u64), Type::Int { size: 8, signed: false, name: "size_t" })
                    }
                    Some(_) => {
                        return Err(CompileError::new(
                            "D_OFFSETOF_BITFIELD",
                            &span,
                            format!("cannot take offset of a bit-field: {member}"),
                        ))
                    }
                    None => {
                        return Err(CompileError::new(
                            "D_UNKNOWN",
                            &span,
                            format!("failed to determine offset of {member}: Member name not found"),
                        ))
                    }
                }
            }
            ExprKind::Ident(name) => match builtin(name) {
                Some((b, ty)) => {
                    match b {
                        Builtin::Ppid => self.program.uses_ppid = true,
                        Builtin::Stackdepth | Builtin::Ustackdepth => self.program.uses_stackdepth = true,
                        Builtin::Caller => self.program.uses_caller = true,
                        Builtin::Ucaller => self.program.uses_ucaller = true,
                        Builtin::Vtimestamp => self.program.uses_vtimestamp = true,
                        Builtin::Arg(_) => self.program.uses_args = true,
                        Builtin::ProbeProv | Builtin::ProbeMod | Builtin::ProbeFunc | Builtin::ProbeName => {
                            self.program.uses_probe_names = true
                        }
                        _ => {}
                    }
                    typed(TKind::Builtin(b), ty)
                }
                None => match (self.lookup_var(Scope::Global, name), builtin_constant(name)) {
                    (Some((var, ty)), _) => typed(TKind::Var(var), ty),
                    // D's NULL: the integer 0, which any pointer takes
                    // (sizeof (NULL) is 4: sizeof/tst.SizeofNULL).
                    (None, _) if name == "NULL" => typed(TKind::Int(0), Type::INT),
                    (None, Some(value)) => typed(TKind::Int(value), Type::INT),
                    // An array or a function named as a value (dt_xcook_ident),
                    // by its kind's name (dt_idkind_name).
                    (None, None) if self.non_scalar_kind(name).is_some() => {
                        let kind = self.non_scalar_kind(name).unwrap_or_default();
                        return Err(CompileError::new(
                            "D_IDENT_BADREF",
                            &span,
                            format!("{kind} '{name}' may not be referenced as scalar"),
                        ));
                    }
                    (None, None) => {
                        return Err(CompileError::new(
                            "D_IDENT_UNDEF",
                            &span,
                            format!("failed to resolve {name}: Unknown variable name"),
                        ))
                    }
                },
            },
            ExprKind::SelfVar(name) => match self.lookup_var(Scope::Thread, name) {
                Some((var, ty)) => typed(TKind::Var(var), ty),
                // As in DTrace, a self-> variable must be assigned (earlier in
                // the program) before it is read; at run time it reads 0
                // until this thread assigns it.
                None => return Err(undeclared(&format!("self->{name}"), &span)),
            },
            ExprKind::ThisVar(name) => match self.lookup_var(Scope::Clause, name) {
                Some((var, ty)) => typed(TKind::Var(var), ty),
                None => return Err(undeclared(&format!("this->{name}"), &span)),
            },
            ExprKind::MacroArg(n) => self.macro_arg(*n, &span)?,
            ExprKind::MacroStr(n) => {
                self.macro_args_used.insert(*n);
                match self.opts.macro_args.get(*n as usize) {
                    Some(s) => {
                        return self.expr(&ast::Expr { kind: ExprKind::Str(crate::syntax::raw::bytes_of(s)), span })
                    }
                    None if self.opts.defaultargs => {
                        return self.expr(&ast::Expr { kind: ExprKind::Str(Vec::new()), span })
                    }
                    None => {
                        return Err(CompileError::new(
                            "D_MACRO_UNDEF",
                            &span,
                            format!("macro argument $${n} is not defined"),
                        ))
                    }
                }
            }
            ExprKind::MacroVar(name) => match macro_variable(name, self.opts.target_pid) {
                Some(v) => typed(TKind::Int(v), Type::INT),
                None => {
                    return Err(CompileError::new(
                        "D_MACRO_UNDEF",
                        &span,
                        format!("failed to resolve ${name}: Unknown variable name"),
                    ))
                }
            },
            ExprKind::Unary(op, inner) => self.unary(*op, inner, &span)?,
            ExprKind::Binary(op, lhs, rhs) => self.binary(*op, lhs, rhs, &span)?,
            ExprKind::Ternary(c, a, b) => {
                if let Some(v) = self.constant_condition(c) {
                    return self.expr_any(if v != 0 { a } else { b });
                }
                // As dt_cook_op3: the condition and both branches are cooked
                // first (an action's own argument errors come first), then
                // the condition, the branches' types and actions are judged.
                let c = self.expr(c)?;
                let mut cooked = Vec::new();
                for branch in [a, b] {
                    match &branch.kind {
                        ExprKind::Call { name, name_span, args }
                            if super::actions::is_action(name) && !super::actions::is_value_action(name) =>
                        {
                            // The clause fails below: what the check records is moot.
                            self.action(name, name_span, args, &branch.span)?;
                        }
                        _ => cooked.push(self.expr(branch)?),
                    }
                }
                let actions = 2 - cooked.len();
                if !c.ty.is_scalar() {
                    return Err(CompileError::new(
                        "D_OP_SCALAR",
                        &span,
                        "operator ?: expression must be of scalar type",
                    ));
                }
                // An action is void: with another action the types agree.
                match actions {
                    0 => {}
                    2 => {
                        return Err(CompileError::new(
                            "D_OP_ACT",
                            &span,
                            "action cannot be used in a conditional context",
                        ))
                    }
                    _ => {
                        return Err(CompileError::new(
                            "D_OP_INCOMPAT",
                            &span,
                            "operator ?: operands must have compatible types",
                        ))
                    }
                }
                let (b, a) = (cooked.pop().expect("two branches"), cooked.pop().expect("two branches"));
                let null = |e: &TExpr| matches!(e.kind, TKind::Int(0)) && e.ty.is_scalar();
                let ty = match (&a.ty, &b.ty) {
                    (Type::String, Type::String) => Type::String,
                    (Type::Symbol(x), Type::Symbol(y)) if x == y => a.ty.clone(),
                    (x, y) if x.is_int() && y.is_int() => arith_result(x, y),
                    // Pointers to the same type, void * with any, or NULL.
                    (Type::Pointer(x), Type::Pointer(y)) if x == y || **y == Type::Void => a.ty.clone(),
                    (Type::Pointer(x), Type::Pointer(_)) if **x == Type::Void => b.ty.clone(),
                    (Type::Pointer(_), _) if null(&b) => a.ty.clone(),
                    (_, Type::Pointer(_)) if null(&a) => b.ty.clone(),
                    _ => {
                        return Err(CompileError::new(
                            "D_OP_INCOMPAT",
                            &span,
                            "operator ?: operands must have compatible types",
                        ))
                    }
                };
                typed(TKind::Ternary(Box::new(c), Box::new(a), Box::new(b)), ty)
            }
            ExprKind::Assign(op, target, value) => self.assign(*op, target, value, &span)?,
            ExprKind::Call { name, name_span, args } => self.subroutine(name, name_span, args, &span)?,
            ExprKind::Cast(tn, inner) => {
                let ty = self.type_name(tn)?;
                let inner = self.expr_any(inner)?;
                if let TKind::Xlate { .. } = inner.kind {
                    // dt_node_type_name's name for xlate<T *>'s value.
                    let from = match inner.ty {
                        Type::Pointer(_) => "pointer to translated data".to_string(),
                        _ => inner.ty.name(),
                    };
                    return Err(CompileError::new(
                        "D_CAST_INVAL",
                        &span,
                        format!("invalid cast expression: \"{from}\" to \"{}\"", ty.name()),
                    ));
                }
                // A char array in memory (a member such as curthread->comm)
                // converts to a pointer as its address, as in C; so does a
                // string, the char array that holds it (`(char *)
                // curpsinfo->pr_psargs`, Solaris' char[80] member).
                let inner = match ty {
                    Type::Pointer(_) => self.char_array(inner),
                    Type::Int { size: 8, .. } => char_array(inner),
                    _ => inner,
                };
                match (&ty, &inner.ty) {
                    // dt_node_op2 folds a cast of an integer constant: the
                    // value cut to the type's size and sign-extended.
                    (&Type::Int { size, signed, .. }, Type::Int { .. }) if matches!(inner.kind, TKind::Int(_)) => {
                        let TKind::Int(v) = inner.kind else { unreachable!("matched above") };
                        typed(TKind::Int(super::decls::fit_to_size(v, size, signed)), ty)
                    }
                    (Type::Int { .. }, Type::Int { .. }) => typed(TKind::Cast(Box::new(inner)), ty),
                    (Type::Pointer(_) | Type::Int { size: 8, .. }, Type::Array(..)) => {
                        typed(TKind::Cast(Box::new(inner)), ty)
                    }
                    // Pointers and integers convert freely, as in C (both are 8 bytes here).
                    (Type::Pointer(_), t) | (Type::Int { .. }, t @ Type::Pointer(_)) if t.is_scalar() => {
                        typed(TKind::Cast(Box::new(inner)), ty)
                    }
                    (Type::String, Type::String) => inner,
                    // A char or void pointer cast to string is the string at
                    // that address, as stringof() makes it (dtrace-utils:
                    // `(string)alloca(n)` after a bcopy()).
                    (Type::String, Type::Pointer(to)) if matches!(**to, Type::Void | Type::Int { size: 1, .. }) => {
                        typed(TKind::LoadStr(Box::new(inner), self.opts.strsize), Type::String)
                    }
                    // dt_cook_op2's cast rules: anything casts to void, and
                    // a value to its own type (a struct to itself).
                    (Type::Void, _) => typed(TKind::Cast(Box::new(inner)), Type::Void),
                    (to, from) if to == from => TExpr { ty, ..inner },
                    _ => {
                        return Err(CompileError::new(
                            "D_CAST_INVAL",
                            &span,
                            format!("invalid cast expression: \"{}\" to \"{}\"", inner.ty.name(), ty.name()),
                        ))
                    }
                }
            }
            ExprKind::SizeofType(tn) => {
                let ty = self.type_name(tn)?;
                let ty = self.resolved(ty);
                typed(TKind::Int(sizeof(&ty, &self.opts, &span)?), Type::Int { size: 8, signed: false, name: "size_t" })
            }
            // A string constant's size is its characters and NUL, as C's
            // (sizeof/tst.SizeofStrConst: sizeof ("hi") is 3).
            ExprKind::SizeofExpr(inner) if matches!(inner.kind, ExprKind::Str(_)) => {
                let ExprKind::Str(text) = &inner.kind else { unreachable!("matched a string") };
                typed(TKind::Int(text.len() as u64 + 1), Type::Int { size: 8, signed: false, name: "size_t" })
            }
            ExprKind::SizeofExpr(inner) => {
                self.last_bitfield = None;
                let member = matches!(inner.kind, ExprKind::Member(..) | ExprKind::Arrow(..));
                let inner = char_array(self.expr(inner)?);
                if member && self.last_bitfield.take().is_some() {
                    return Err(CompileError::new("D_SIZEOF_BITFIELD", &span, "cannot apply sizeof to a bit-field"));
                }
                typed(
                    TKind::Int(sizeof(&inner.ty, &self.opts, &span)?),
                    Type::Int { size: 8, signed: false, name: "size_t" },
                )
            }
            // A string as it is; an integer or a pointer as the address of a
            // string in kernel memory, as DTrace treats them.
            ExprKind::Stringof(inner) => {
                let inner = self.expr(inner)?;
                match &inner.ty {
                    Type::String => inner,
                    Type::Int { .. } | Type::Pointer(_) => {
                        let len = self.opts.strsize;
                        typed(TKind::LoadStr(Box::new(inner), len), Type::String)
                    }
                    Type::Array(elem, len) if **elem == Type::CHAR || matches!(**elem, Type::Int { size: 1, .. }) => {
                        let len = *len;
                        typed(TKind::LoadStr(Box::new(inner), len), Type::String)
                    }
                    other => {
                        return Err(CompileError::new(
                            "D_STRINGOF_TYPE",
                            &span,
                            format!("cannot apply stringof to a value of type {}", other.name()),
                        ))
                    }
                }
            }
            ExprKind::Aggregation(name) if !self.program.aggregations.iter().any(|a| a.name == *name) => {
                return Err(CompileError::new(
                    "D_IDENT_UNDEF",
                    &span,
                    format!("failed to resolve @{name}: Unknown variable name"),
                ))
            }
            ExprKind::Aggregation(name) => {
                return Err(CompileError::new(
                    "D_AGG_SCALAR",
                    &span,
                    format!("aggregation @{name} may not be used in an expression"),
                ))
            }
            ExprKind::Index(base, _) if matches!(base.kind, ExprKind::Aggregation(_)) => {
                return Err(CompileError::new(
                    "D_AGG_SCALAR",
                    &span,
                    "an aggregation's value may not be used in an expression",
                ))
            }
            ExprKind::Index(base, keys) if matches!(&base.kind, ExprKind::Ident(n) if n == "args") => {
                return self.probe_arg(keys, &span)
            }
            ExprKind::Index(base, keys) if matches!(&base.kind, ExprKind::Ident(n) if n == "uregs") => {
                return self.uregs(keys, &span)
            }
            ExprKind::Index(base, keys) if matches!(&base.kind, ExprKind::Ident(n) if self.inline_has_params(n)) => {
                let ExprKind::Ident(name) = &base.kind else { unreachable!("matched an identifier") };
                return self.inline_call(name, keys, &span);
            }
            ExprKind::Index(base, keys) if !self.names_assoc_array(base) => {
                // Only this element's own `&` may name the one past the end.
                let one_past = std::mem::take(&mut self.address_of_element);
                // A tuple index on a variable that is no associative array
                // (dt_cook_op2's D_ARR_BADREF).
                if keys.len() > 1 {
                    let named = match &base.kind {
                        ExprKind::Ident(n) => Some(format!("scalar {n}")),
                        ExprKind::SelfVar(n) => Some(format!("scalar self->{n}")),
                        ExprKind::ThisVar(n) => Some(format!("scalar this->{n}")),
                        _ => None,
                    };
                    if let Some(named) = named {
                        return Err(CompileError::new(
                            "D_ARR_BADREF",
                            &span,
                            format!("cannot access {named} as an associative array"),
                        ));
                    }
                }
                let base = self.expr(base)?;
                let base = self.char_array(base);
                if pointee(&base.ty).is_none() {
                    return Err(CompileError::new(
                        "D_OP_INDEX",
                        &span,
                        format!("operator [ ] cannot be applied to type {}", base.ty.name()),
                    ));
                }
                return self.pointer_index(base, keys, one_past, &span);
            }
            ExprKind::Index(base, keys) => {
                let (place, ty) = self.element(base, keys, None, &span)?;
                let Place::Element { array, keys } = place else { unreachable!("element() returns elements") };
                typed(TKind::Element { array, keys }, ty)
            }
        })
    }

    /// The value of an integer constant expression: literals and the
    /// arithmetic on them, enumerators, integer inlines, `sizeof`, macro
    /// arguments. None for anything else (or an expression in error).
    pub(super) fn integer_constant(&mut self, e: &ast::Expr) -> Option<i64> {
        if let Some(v) = const_int(e) {
            return Some(v);
        }
        let typed = self.expr(e).ok()?;
        let v = folded(&typed)?;
        // A signed value narrower than 64 bits is stored zero-extended.
        Some(match typed.ty {
            Type::Int { size: 4, signed: true, .. } => v as u32 as i32 as i64,
            _ => v as i64,
        })
    }

    /// An argument that must be an integer constant above 0.
    pub(super) fn positive_constant(&mut self, arg: &ast::Expr, tag: &'static str, message: &str) -> Result<i64> {
        self.integer_constant(arg).filter(|n| *n > 0).ok_or_else(|| CompileError::new(tag, &arg.span, message))
    }

    /// The value of a `?:` condition DTrace folds while parsing: an integer
    /// literal, a macro argument, or an enumerator or inline whose value is
    /// an integer constant.
    pub(super) fn constant_condition(&mut self, c: &ast::Expr) -> Option<u64> {
        match &c.kind {
            ExprKind::Int { value, .. } => Some(*value),
            ExprKind::Char(v) => Some(*v as u64),
            ExprKind::MacroArg(_) | ExprKind::MacroVar(_) => match self.expr(c) {
                Ok(TExpr { kind: TKind::Int(v), .. }) => Some(v),
                _ => None,
            },
            ExprKind::Ident(name) if self.declares_value(name) => self.expr(c).ok().as_ref().and_then(folded),
            ExprKind::Unary(UnOp::Neg | UnOp::Plus | UnOp::Not | UnOp::BitNot, inner) => {
                self.constant_condition(inner)?;
                self.expr(c).ok().as_ref().and_then(folded)
            }
            ExprKind::Binary(_, l, r) => {
                self.constant_condition(l)?;
                self.constant_condition(r)?;
                self.expr(c).ok().as_ref().and_then(folded)
            }
            _ => None,
        }
    }

    pub(super) fn macro_arg(&mut self, n: u32, span: &Span) -> Result<TExpr> {
        self.macro_args_used.insert(n);
        let Some(text) = self.opts.macro_args.get(n as usize) else {
            if self.opts.defaultargs {
                return Ok(TExpr { kind: TKind::Int(0), ty: Type::INT, span: span.clone() });
            }
            return Err(CompileError::new("D_MACRO_UNDEF", span, format!("macro argument ${n} is not defined")));
        };
        // Text that is neither an integer nor an identifier (a script's
        // name as $0, `a b`, `'"bash"'`) is a string, as DTrace's lexer reads
        // it (strbadidnum): its quotes stripped, its escapes converted.
        if is_string_macro_text(text) {
            let inner = match text.len() {
                2.. if text.starts_with('"') && text.ends_with('"') => &text[1..text.len() - 1],
                _ => text.as_str(),
            };
            let bytes = (!inner.contains(['"', '\n']))
                .then(|| crate::syntax::string_literal(&format!("\"{inner}\"")))
                .flatten()
                .unwrap_or_else(|| inner.as_bytes().to_vec());
            return self.expr(&ast::Expr { kind: ExprKind::Str(bytes), span: span.clone() });
        }
        // An argument that begins as an integer is an integer; any other text
        // is the identifier it spells, as DTrace's lexer reads it (id_or_type):
        // `$1` given `execname` is execname, given `foo` an unknown variable.
        let Some((negative, digits)) = text
            .strip_prefix('-')
            .map(|d| (true, d))
            .or_else(|| text.strip_prefix('+').map(|d| (false, d)))
            .or_else(|| text.starts_with(|c: char| c.is_ascii_digit()).then_some((false, text.as_str())))
        else {
            return self.expr(&ast::Expr { kind: ExprKind::Ident(text.clone()), span: span.clone() });
        };
        // strtoull(v, &p, 0): the base from the prefix, the longest run of
        // digits, and what follows is the integer's suffix.
        let (radix, body) = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
            Some(hex) => (16, hex),
            None if digits.len() > 1 && digits.starts_with('0') => (8, &digits[1..]),
            None => (10, digits),
        };
        let run = body.find(|c: char| !c.is_digit(radix)).unwrap_or(body.len());
        let (number, suffix) = body.split_at(run);
        let value = if number.is_empty() { Some(0) } else { u64::from_str_radix(number, radix).ok() };
        let Some(value) = value else {
            return Err(CompileError::new(
                "D_MACRO_OFLOW",
                span,
                format!("macro argument ${n} constant {digits} results in integer overflow"),
            ));
        };
        if !["", "u", "l", "ul", "lu", "ll", "ull", "llu"].contains(&suffix.to_ascii_lowercase().as_str()) {
            return Err(CompileError::new(
                "D_INT_OFLOW",
                span,
                format!("integer constant {value:#x} cannot be represented in any built-in integral type"),
            ));
        }
        let v = if negative { value.wrapping_neg() } else { value };
        let ty = if (v as i64) >= i32::MIN as i64 && (v as i64) <= i32::MAX as i64 { Type::INT } else { Type::INT64 };
        Ok(TExpr { kind: TKind::Int(v), ty, span: span.clone() })
    }

    pub(super) fn unary(&mut self, op: UnOp, inner: &ast::Expr, span: &Span) -> Result<TExpr> {
        match op {
            UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec => {
                let (place, ty) = self.lvalue(inner, Type::INT64).map_err(|e| for_operator(e, unop_text(op)))?;
                if !ty.is_int() {
                    return Err(CompileError::new(
                        "D_OP_SCALAR",
                        span,
                        format!("operator {} requires operand of scalar type", unop_text(op)),
                    ));
                }
                let delta = if matches!(op, UnOp::PreInc | UnOp::PostInc) { 1 } else { -1 };
                let post = matches!(op, UnOp::PostInc | UnOp::PostDec);
                Ok(TExpr { kind: TKind::IncDec { place, delta, post }, ty, span: span.clone() })
            }
            UnOp::Plus => {
                let e = self.expr(inner)?;
                self.require_int(&e, unop_text(op), span)?;
                Ok(e)
            }
            UnOp::Neg | UnOp::BitNot | UnOp::Not => {
                let e = self.expr(inner)?;
                let accepted = if op == UnOp::Not { e.ty.is_scalar() } else { e.ty.is_int() };
                if !accepted {
                    // DTrace names the kind of operand each operator needs.
                    let (tag, kind) = match op {
                        UnOp::Neg => ("D_OP_ARITH", "arithmetic"),
                        UnOp::BitNot => ("D_OP_INT", "integral"),
                        _ => ("D_OP_SCALAR", "scalar"),
                    };
                    return Err(CompileError::new(
                        tag,
                        span,
                        format!("operator {} requires an operand of {kind} type", unop_text(op)),
                    ));
                }
                // -x and ~x have x's type, as in DTrace (no promotion to int).
                let ty = if op == UnOp::Not { Type::INT } else { e.ty.clone() };
                // dt_node_op1 folds the negation of an integer constant, an
                // unsigned one cut to its type's size (`-1u` is 0xffffffff;
                // `~0u` keeps all 64 bits, as there).
                if let (UnOp::Neg, TKind::Int(v), &Type::Int { size, signed, .. }) = (op, &e.kind, &e.ty) {
                    let negated = v.wrapping_neg();
                    let value = if signed { negated } else { super::decls::fit_to_size(negated, size, false) };
                    return Ok(TExpr { kind: TKind::Int(value), ty, span: span.clone() });
                }
                let kind = match op {
                    UnOp::Neg => TKind::Neg(Box::new(e)),
                    UnOp::BitNot => TKind::BitNot(Box::new(e)),
                    _ => TKind::Not(Box::new(e)),
                };
                Ok(TExpr { kind, ty, span: span.clone() })
            }
            UnOp::Deref => {
                let e = self.expr_any(inner)?;
                // `*curpsinfo`: the struct translated whole.
                if let (TKind::Xlate { translator, input }, Type::Pointer(to)) = (&e.kind, &e.ty) {
                    if let Type::Struct(_) = **to {
                        return self.translated_struct(*translator, (**input).clone(), to, span);
                    }
                }
                if let TKind::Xlate { .. } = e.kind {
                    return self.expr(inner);
                }
                self.deref(char_array(e), span)
            }
            // &p->m, &a[i], &*p: the address the value would be read from.
            UnOp::AddrOf => {
                let dynamic_variable =
                    || CompileError::new("D_ADDROF_VAR", span, "cannot take address of dynamic variable");
                let e = match &inner.kind {
                    // D's variables live in maps, not at addresses (dt_cook_op1).
                    ExprKind::SelfVar(_) | ExprKind::ThisVar(_) | ExprKind::Aggregation(_) => {
                        return Err(dynamic_variable())
                    }
                    ExprKind::Ident(_) => match self.expr(inner)? {
                        TExpr { kind: TKind::Var(_) | TKind::Builtin(_), .. } => return Err(dynamic_variable()),
                        _ => {
                            return Err(CompileError::new(
                                "D_ADDROF_LVAL",
                                span,
                                "unacceptable operand for unary & operator",
                            ))
                        }
                    },
                    ExprKind::Index(..) => {
                        self.address_of_element = true;
                        let e = self.expr(inner);
                        self.address_of_element = false;
                        e?
                    }
                    ExprKind::Arrow(..)
                    | ExprKind::Member(..)
                    | ExprKind::Unary(UnOp::Deref, _)
                    | ExprKind::Backquote { .. } => self.expr(inner)?,
                    _ => {
                        return Err(CompileError::new(
                            "D_ADDROF_LVAL",
                            span,
                            "unacceptable operand for unary & operator",
                        ))
                    }
                };
                let (addr, to) = match e.kind {
                    TKind::Element { .. } => return Err(dynamic_variable()),
                    // A bit-field's value is shifted out of its storage unit.
                    TKind::Cast(_) if matches!(inner.kind, ExprKind::Arrow(..) | ExprKind::Member(..)) => {
                        return Err(CompileError::new("D_ADDROF_BITFIELD", span, "cannot take address of bit-field"))
                    }
                    TKind::Load(addr) => (*addr, e.ty),
                    TKind::LoadStr(addr, len) => (*addr, Type::Array(Box::new(Type::CHAR), len)),
                    _ if matches!(e.ty, Type::Struct(_) | Type::Array(..)) => {
                        (TExpr { ty: Type::Void, ..e.clone() }, e.ty)
                    }
                    _ => {
                        return Err(CompileError::new(
                            "D_ADDROF_LVAL",
                            span,
                            "unacceptable operand for unary & operator",
                        ))
                    }
                };
                Ok(TExpr { ty: Type::Pointer(Box::new(to)), ..addr })
            }
        }
    }

    pub(super) fn require_int(&self, e: &TExpr, op: &str, span: &Span) -> Result<()> {
        if e.ty.is_int() {
            Ok(())
        } else {
            Err(CompileError::new("D_OP_INT", span, format!("operator {op} requires an operand of integral type")))
        }
    }

    pub(super) fn binary(&mut self, op: BinOp, lhs: &ast::Expr, rhs: &ast::Expr, span: &Span) -> Result<TExpr> {
        let l = self.expr(lhs)?;
        let r = self.expr(rhs)?;
        let text = binop_text(op);
        let typed = |kind, ty| TExpr { kind, ty, span: span.clone() };
        if op == BinOp::Comma {
            let ty = r.ty.clone();
            return Ok(typed(TKind::Binary { op, signed: false, lhs: Box::new(l), rhs: Box::new(r) }, ty));
        }
        if matches!(op, BinOp::LogAnd | BinOp::LogOr | BinOp::LogXor) {
            if !l.ty.is_scalar() || !r.ty.is_scalar() {
                return Err(CompileError::new(
                    "D_OP_SCALAR",
                    span,
                    format!("operator {text} requires operands of scalar type"),
                ));
            }
            return Ok(typed(TKind::Logical { op, lhs: Box::new(l), rhs: Box::new(r) }, Type::INT));
        }
        let relational = matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne);
        let arithmetic = matches!(op, BinOp::Add | BinOp::Sub);
        let (l, r) = if arithmetic { (char_array(l), char_array(r)) } else { (l, r) };
        if arithmetic && (pointee(&l.ty).is_some() || pointee(&r.ty).is_some()) {
            return self.pointer_add(op, l, r, span);
        }
        // A char pointer or array compared with a string is the string at
        // that address (dt_node_is_strcompat): `s == "abc"` for `char *s`.
        let strsize = self.opts.strsize;
        let as_string = |e: TExpr| -> TExpr {
            let len = match &e.ty {
                Type::Pointer(to) if matches!(**to, Type::Int { size: 1, .. }) => strsize,
                Type::Array(elem, len) if matches!(**elem, Type::Int { size: 1, .. }) => *len,
                _ => return e,
            };
            let span = e.span.clone();
            TExpr { kind: TKind::LoadStr(Box::new(e), len), ty: Type::String, span }
        };
        let (l, r) = match (&l.ty, &r.ty) {
            (Type::String, Type::String) => (l, r),
            (Type::String, _) if relational => (l, as_string(r)),
            (_, Type::String) if relational => (as_string(l), r),
            _ => (l, r),
        };
        if l.ty == Type::String || r.ty == Type::String {
            if relational && l.ty == r.ty {
                return Ok(typed(TKind::StrCmp { op, lhs: Box::new(l), rhs: Box::new(r) }, Type::INT));
            }
            // `strtok(...) == NULL`: the subroutines that find nothing give
            // the empty string here where DTrace gives NULL.
            let null = |e: &TExpr| matches!(e.kind, TKind::Int(0)) && e.ty.is_scalar();
            if matches!(op, BinOp::Eq | BinOp::Ne) && (null(&l) || null(&r)) {
                let empty = typed(TKind::Str(self.intern(b"")), Type::String);
                let (l, r) = if null(&l) { (empty, r) } else { (l, empty) };
                return Ok(typed(TKind::StrCmp { op, lhs: Box::new(l), rhs: Box::new(r) }, Type::INT));
            }
            match op {
                BinOp::Mul | BinOp::Div => {
                    return Err(CompileError::new(
                        "D_OP_ARITH",
                        span,
                        format!("operator {text} requires operands of arithmetic type"),
                    ))
                }
                BinOp::Mod | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                    return Err(CompileError::new(
                        "D_OP_INT",
                        span,
                        format!("operator {text} requires operands of integral type"),
                    ))
                }
                _ => {}
            }
            return Err(CompileError::new(
                "D_OP_INCOMPAT",
                span,
                format!("operands have incompatible types: \"{}\" {text} \"{}\"", l.ty.name(), r.ty.name()),
            ));
        }
        // Pointers compare with pointers and with integers (NULL, 0), unsigned.
        if relational && l.ty.is_scalar() && r.ty.is_scalar() && !(l.ty.is_int() && r.ty.is_int()) {
            return Ok(typed(TKind::Binary { op, signed: false, lhs: Box::new(l), rhs: Box::new(r) }, Type::INT));
        }

        if !l.ty.is_int() || !r.ty.is_int() {
            return Err(CompileError::new(
                "D_OP_INT",
                span,
                format!("operator {text} requires operands of integral type"),
            ));
        }
        if matches!(op, BinOp::Div | BinOp::Mod) && folded(&r) == Some(0) {
            return Err(CompileError::new("D_DIV_ZERO", span, "expression contains division by zero"));
        }
        let common = arith_result(&l.ty, &r.ty);
        let signed = matches!(common, Type::Int { signed: true, .. });
        let (signed, ty) = match op {
            // Shifts take the left operand's type (DTrace does not promote it).
            BinOp::Shl | BinOp::Shr => (matches!(l.ty, Type::Int { signed: true, .. }), l.ty.clone()),
            _ if relational => (signed, Type::INT),
            _ => (signed, common),
        };
        Ok(typed(TKind::Binary { op, signed, lhs: Box::new(l), rhs: Box::new(r) }, ty))
    }

    /// Resolves an assignable expression; unknown globals, thread-locals and
    /// associative arrays are created with `default_ty` (D declares them by
    /// first assignment).
    /// The struct or union type of the existing associative array that
    /// `target` (`a[k]`, `self->a[k]`) names an element of.
    fn assoc_record_value(&self, target: &ast::Expr) -> Option<Type> {
        let ExprKind::Index(base, _) = &target.kind else { return None };
        let (name, thread_local) = match &base.kind {
            ExprKind::Ident(name) => (name, false),
            ExprKind::SelfVar(name) => (name, true),
            _ => return None,
        };
        let array = self.program.assoc_arrays.iter().find(|a| &a.name == name && a.thread_local == thread_local)?;
        matches!(array.value, Type::Struct(_)).then(|| array.value.clone())
    }

    pub(super) fn lvalue(&mut self, target: &ast::Expr, default_ty: Type) -> Result<(Place, Type)> {
        let (scope, name) = match &target.kind {
            // NULL is a constant, not a variable.
            ExprKind::Ident(name) if name == "NULL" => {
                return Err(CompileError::new(
                    "D_OP_LVAL",
                    &target.span,
                    "operator = requires modifiable lvalue as an operand",
                ))
            }
            ExprKind::Ident(name) => {
                if is_predefined(name) {
                    return Err(CompileError::new(
                        "D_OP_WRITE",
                        &target.span,
                        "operator = can only be applied to a writable variable",
                    ));
                }
                (Scope::Global, name)
            }
            ExprKind::SelfVar(name) => (Scope::Thread, name),
            ExprKind::ThisVar(name) => (Scope::Clause, name),
            ExprKind::Index(base, keys) if self.names_assoc_array(base) => {
                return self.element(base, keys, Some(default_ty), &target.span)
            }
            ExprKind::Index(base, _) if matches!(&base.kind, ExprKind::ThisVar(n) if self.lookup_var(Scope::Clause, n).is_none()) =>
            {
                let name = match &base.kind {
                    ExprKind::ThisVar(n) => n.as_str(),
                    _ => "",
                };
                return Err(CompileError::new(
                    "D_ARR_LOCAL",
                    &target.span,
                    format!("local variable this->{name} may not be used as an associative array"),
                ));
            }
            ExprKind::Index(..) | ExprKind::Unary(UnOp::Deref, _) | ExprKind::Member(..) | ExprKind::Arrow(..) => {
                // An integer or pointer in memory: the load's address is the place.
                self.last_bitfield = None;
                let value = self.expr(target)?;
                let bitfield = match &target.kind {
                    ExprKind::Member(..) | ExprKind::Arrow(..) => self.last_bitfield.take(),
                    _ => None,
                };
                return match value.kind {
                    TKind::Load(addr) if value.ty.is_scalar() && bitfield.is_none() && in_thread_local(&addr) => {
                        match thread_local_member(&addr, 0) {
                            Some((var, offset)) => Ok((Place::ThreadLocalMember { var, offset }, value.ty)),
                            None => Err(CompileError::new(
                                "D_UNSUPPORTED",
                                &target.span,
                                "a member of a self-> struct at a variable index cannot be assigned yet",
                            )),
                        }
                    }
                    TKind::Load(addr) if value.ty.is_scalar() && in_thread_local(&addr) => Err(CompileError::new(
                        "D_UNSUPPORTED",
                        &target.span,
                        "a bit-field of a self-> struct cannot be assigned yet: assign the whole struct",
                    )),
                    TKind::Load(addr) if value.ty.is_scalar() && bitfield.is_none() && in_element(&addr) => {
                        match element_member(&addr, 0) {
                            Some((array, keys, offset)) => {
                                Ok((Place::ElementMember { array, keys: keys.to_vec(), offset }, value.ty))
                            }
                            None => Err(CompileError::new(
                                "D_UNSUPPORTED",
                                &target.span,
                                "a member of an associative array's struct at a variable index cannot be assigned yet",
                            )),
                        }
                    }
                    TKind::Load(addr) if value.ty.is_scalar() && in_element(&addr) => Err(CompileError::new(
                        "D_UNSUPPORTED",
                        &target.span,
                        "a bit-field of an associative array's struct cannot be assigned yet: assign the whole struct",
                    )),
                    TKind::Load(addr) if value.ty.is_scalar() => Ok((Place::Memory(addr), value.ty)),
                    // A string member: its characters' bytes are the place.
                    TKind::Offset(addr, 0) if value.ty == Type::String => {
                        let unsupported = |what: &str| {
                            CompileError::new(
                                "D_UNSUPPORTED",
                                &target.span,
                                format!("a member of {what} at a variable index cannot be assigned yet"),
                            )
                        };
                        if in_thread_local(&addr) {
                            let (var, offset) =
                                thread_local_member(&addr, 0).ok_or_else(|| unsupported("a self-> struct"))?;
                            Ok((Place::ThreadLocalMember { var, offset }, Type::String))
                        } else if in_element(&addr) {
                            let (array, keys, offset) =
                                element_member(&addr, 0).ok_or_else(|| unsupported("an associative array's struct"))?;
                            Ok((Place::ElementMember { array, keys: keys.to_vec(), offset }, Type::String))
                        } else {
                            Ok((Place::Memory(addr), Type::String))
                        }
                    }
                    // A struct member of struct type: its address is the place.
                    TKind::Offset(..) if matches!(value.ty, Type::Struct(_)) => {
                        let ty = value.ty.clone();
                        let addr = TExpr { ty: Type::Pointer(Box::new(Type::Void)), ..value };
                        Ok((Place::Memory(Box::new(addr)), ty))
                    }
                    // A bit-field: the storage unit's address is the place.
                    _ if bitfield.is_some() => {
                        let (addr, unit, shift, bits) = bitfield.expect("just matched");
                        Ok((Place::Bitfield { addr: Box::new(addr), unit, shift, bits }, value.ty))
                    }
                    _ => Err(CompileError::new(
                        "D_OP_LVAL",
                        &target.span,
                        "operator = requires modifiable lvalue as an operand",
                    )),
                };
            }
            _ => {
                return Err(CompileError::new(
                    "D_OP_LVAL",
                    &target.span,
                    "operator = requires modifiable lvalue as an operand",
                ))
            }
        };
        if let Some((var, ty)) = self.lookup_var(scope, name) {
            return Ok((Place::Var(var), ty));
        }
        let var = self.new_var(scope, name, default_ty.clone(), false);
        Ok((Place::Var(var), default_ty))
    }

    /// A variable holds alloca()'d memory or other memory, never both
    /// (dtrace-utils' D_ALLOCA_INCOMPAT: the code generator checks accesses
    /// through it by what it holds).
    fn note_alloca_var(&mut self, var: Var, value: &TExpr, target: &ast::Expr, span: &Span) -> Result<()> {
        let Some(alloca) = self.alloca_memory(value).map_err(|()| {
            CompileError::new(
                "D_ALLOCA_INCOMPAT",
                span,
                "ternary conditional with alloca and non-alloca branches cannot be assigned to a variable",
            )
        })?
        else {
            return Ok(());
        };
        match self.alloca_vars.insert(var, alloca) {
            Some(before) if before != alloca => {
                let name = match &target.kind {
                    ExprKind::Ident(n) | ExprKind::SelfVar(n) | ExprKind::ThisVar(n) => n.as_str(),
                    _ => "",
                };
                Err(CompileError::new(
                    "D_ALLOCA_INCOMPAT",
                    span,
                    format!("{name}: cannot reuse the same identifier for both alloca and non-alloca allocations"),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Whether a pointer value is alloca()'d memory: Some(true) if it is,
    /// Some(false) for other memory, None for what is neither (NULL, an
    /// integer); Err for a `?:` whose branches differ.
    fn alloca_memory(&self, e: &TExpr) -> std::result::Result<Option<bool>, ()> {
        Ok(match &e.kind {
            // copyin()'s buffer is alloca()'d too.
            TKind::Subr(Subr::Alloca { .. } | Subr::Copyin { .. }, _) => Some(true),
            TKind::Int(0) => None,
            TKind::Cast(inner) => match self.alloca_memory(inner)? {
                None if matches!(e.ty, Type::Pointer(_)) && !matches!(inner.kind, TKind::Int(0)) => Some(false),
                taint => taint,
            },
            TKind::Binary { op: BinOp::Add | BinOp::Sub, lhs, rhs, .. } if matches!(e.ty, Type::Pointer(_)) => {
                self.alloca_memory(lhs)?.or(self.alloca_memory(rhs)?)
            }
            TKind::Var(v) => self.alloca_vars.get(v).copied(),
            TKind::Ternary(_, a, b) => match (self.alloca_memory(a)?, self.alloca_memory(b)?) {
                (Some(x), Some(y)) if x != y => return Err(()),
                (x, y) => x.or(y),
            },
            _ if matches!(e.ty, Type::Pointer(_)) => Some(false),
            _ => None,
        })
    }

    /// `name[keys]` or `self->name[keys]`. An unknown array is declared with
    /// the value type `create` (an assignment's), or int (a read).
    pub(super) fn element(
        &mut self,
        base: &ast::Expr,
        keys: &[ast::Expr],
        create: Option<Type>,
        span: &Span,
    ) -> Result<(Place, Type)> {
        let (thread_local, name) = match &base.kind {
            ExprKind::Ident(name) if !is_predefined(name) => (false, name.clone()),
            ExprKind::SelfVar(name) => (true, name.clone()),
            _ => {
                return Err(CompileError::new(
                    "D_UNSUPPORTED",
                    &base.span,
                    "only global and self-> associative arrays can be indexed yet",
                ))
            }
        };
        let shown = if thread_local { format!("self->{name}") } else { name.clone() };
        let scope = if thread_local { Scope::Thread } else { Scope::Global };
        if self.lookup_var(scope, &name).is_some() {
            return Err(CompileError::new(
                "D_OP_INDEX",
                span,
                format!("operator [ ] cannot be applied to {shown}: it is not an associative array"),
            ));
        }
        // DTrace's code generator passes a tuple in its tuple registers
        // (eight unless tregs says otherwise).
        if keys.len() > self.opts.tregs.unwrap_or(MAX_TUPLE_KEYS) {
            return Err(CompileError::nowhere("D_NOREG", "Insufficient registers to generate code"));
        }
        let keys: Vec<TExpr> = keys.iter().map(|k| self.expr(k)).collect::<Result<_>>()?;
        let mut columns = Vec::new();
        if thread_local {
            columns.push(KeyColumn { ty: Type::Int { size: 4, signed: true, name: "id_t" }, bytes: 8 });
        }
        for k in &keys {
            // A struct key is its bytes (tst.StructAssoc).
            if !matches!(
                k.ty,
                Type::String | Type::Int { .. } | Type::Pointer(_) | Type::Stack | Type::Symbol(_) | Type::Struct(_)
            ) {
                return Err(CompileError::new(
                    "D_KEY_TYPE",
                    &k.span,
                    format!("{shown}[ ] keys of type {} are not supported", k.ty.name()),
                ));
            }
            columns.push(self.key_column(k));
        }
        let found = self.program.assoc_arrays.iter().position(|a| a.name == name && a.thread_local == thread_local);
        let index = match (found, create) {
            (Some(i), _) => {
                let array = &mut self.program.assoc_arrays[i];
                let skip = usize::from(thread_local);
                let expected = array.keys.len() - skip;
                if expected != keys.len() {
                    return Err(CompileError::new(
                        "D_PROTO_LEN",
                        span,
                        format!(
                            "{shown}[ ] prototype mismatch: {} key{} passed, {expected} expected",
                            keys.len(),
                            if keys.len() == 1 { "" } else { "s" }
                        ),
                    ));
                }
                for (k, (have, new)) in array.keys.iter_mut().zip(&columns).enumerate().skip(skip) {
                    let is_struct = |t: &Type| matches!(t, Type::Struct(_));
                    if (have.ty == Type::String) != (new.ty == Type::String)
                        || ((is_struct(&have.ty) || is_struct(&new.ty)) && have.ty != new.ty)
                    {
                        return Err(CompileError::new(
                            "D_PROTO_ARG",
                            &keys[k - skip].span,
                            format!(
                                "{shown}[ ] key #{} is incompatible with prototype:\n\tprototype: {}\n\t      key: {}",
                                k - skip + 1,
                                have.ty.name(),
                                new.ty.name()
                            ),
                        ));
                    }
                    have.bytes = have.bytes.max(new.bytes);
                }
                i
            }
            (None, Some(value)) => {
                if !(value.is_scalar() || value == Type::String || matches!(value, Type::Struct(_))) {
                    return Err(CompileError::new(
                        "D_UNSUPPORTED",
                        span,
                        format!("associative arrays of {} are not supported yet", value.name()),
                    ));
                }
                self.program.assoc_arrays.push(AssocArray {
                    name,
                    thread_local,
                    keys: columns,
                    value,
                    declared: false,
                });
                self.program.assoc_arrays.len() - 1
            }
            // Read before any assignment: DTrace creates the array, of int.
            (None, None) => {
                self.program.assoc_arrays.push(AssocArray {
                    name,
                    thread_local,
                    keys: columns,
                    value: Type::INT,
                    declared: false,
                });
                self.program.assoc_arrays.len() - 1
            }
        };
        let ty = self.program.assoc_arrays[index].value.clone();
        Ok((Place::Element { array: index, keys }, ty))
    }

    pub(super) fn assign(
        &mut self,
        op: Option<BinOp>,
        target: &ast::Expr,
        value: &ast::Expr,
        span: &Span,
    ) -> Result<TExpr> {
        // `x op= v` reads x first: as in DTrace, it must exist already.
        if op.is_some() {
            let missing = match &target.kind {
                ExprKind::Ident(name) if !is_predefined(name) && self.lookup_var(Scope::Global, name).is_none() => {
                    Some(name.clone())
                }
                ExprKind::SelfVar(name) if self.lookup_var(Scope::Thread, name).is_none() => {
                    Some(format!("self->{name}"))
                }
                ExprKind::ThisVar(name) if self.lookup_var(Scope::Clause, name).is_none() => {
                    Some(format!("this->{name}"))
                }
                _ => None,
            };
            if let Some(name) = missing {
                return Err(undeclared(&name, &target.span));
            }
        }
        let value = match op {
            // A struct translated whole is copied as any struct value.
            None => {
                let v = self.expr_any(value)?;
                match v.kind {
                    TKind::Xlate { translator, input } if matches!(v.ty, Type::Struct(_)) => {
                        self.translated_struct(translator, *input, &v.ty, &v.span)?
                    }
                    TKind::Xlate { .. } => self.expr(value)?,
                    _ => v,
                }
            }
            Some(_) => self.expr(value)?,
        };
        if value.ty == Type::Void {
            return Err(CompileError::new(
                "D_OP_VOID",
                span,
                "operator = cannot be applied to an operand of type void",
            ));
        }
        // 0 stored in an associative array's struct or union element
        // deletes it, as 0 does any dynamic variable
        // (assocs/tst.store_zero_deletes_struct).
        if op.is_none() && matches!(value.kind, TKind::Int(0)) && value.ty.is_scalar() {
            if let Some(record) = self.assoc_record_value(target) {
                let (place, ty) = self.lvalue(target, record)?;
                return Ok(TExpr { kind: TKind::ClearVar(place), ty, span: span.clone() });
            }
        }
        let (place, ty) = self.lvalue(target, value.ty.clone()).map_err(|e| for_operator(e, &op_text(op)))?;
        if let (Place::Var(var), None) = (&place, op) {
            self.note_alloca_var(*var, &value, target, span)?;
        }
        if matches!(ty, Type::Array(..)) {
            return Err(CompileError::new(
                "D_OP_ARRFUN",
                span,
                format!("operator {} may not be applied to operand of type \"{}\"", op_text(op), ty.name()),
            ));
        }
        // An array assigned to a pointer is its first element's address, as in C.
        let value = match (&ty, &value.ty) {
            (Type::Pointer(to), Type::Array(elem, _)) if to == elem || **to == Type::Void => {
                TExpr { kind: TKind::Cast(Box::new(value)), ty: ty.clone(), span: span.clone() }
            }
            _ => value,
        };
        // `str = NULL` frees the variable, as DTrace frees dynamic variables set to 0.
        // NULL, or the constant 0 (which D also takes as a null pointer or string).
        let is_null = matches!(value.kind, TKind::Int(0)) && value.ty.is_scalar();
        if ty == Type::String && is_null && op.is_none() {
            return Ok(TExpr { kind: TKind::ClearVar(place), ty, span: span.clone() });
        }
        // 0 stored in a thread-local struct or union deletes it, as in any
        // dynamic variable (tvar/tst.store_zero_deletes_struct).
        if matches!(ty, Type::Struct(_)) && is_null && op.is_none() && matches!(place, Place::Var(Var::ThreadLocal(_)))
        {
            return Ok(TExpr { kind: TKind::ClearVar(place), ty, span: span.clone() });
        }
        // A string assigned to a char pointer is its characters' address,
        // as strings and char pointers are compatible in DTrace
        // (dt_node_is_strcompat): `char *s; s = probeprov; s[0]`.
        let char_pointer = matches!(&ty, Type::Pointer(to) if matches!(**to, Type::Int { size: 1, .. }));
        let value = if char_pointer && value.ty == Type::String && op.is_none() {
            let chars = self.char_array(value);
            TExpr { kind: TKind::Cast(Box::new(chars)), ty: ty.clone(), span: span.clone() }
        } else {
            value
        };
        let compatible = match (&ty, &value.ty) {
            (Type::String, Type::String) => op.is_none(),
            (Type::Struct(a), Type::Struct(b)) => {
                copy_fits("a variable", &ty, self.opts.strsize, span)?;
                op.is_none() && self.completed(a.clone()) == self.completed(b.clone())
            }
            (Type::Pointer(_), Type::Pointer(_)) => op.is_none(),
            (Type::Pointer(_), _) if is_null => op.is_none(),
            (a, b) => a.is_int() && b.is_int(),
        };
        let void_pointer = |t: &Type| matches!(t, Type::Pointer(to) if **to == Type::Void);
        if !compatible && matches!(op, Some(BinOp::Add | BinOp::Sub)) && (void_pointer(&ty) || void_pointer(&value.ty))
        {
            return Err(CompileError::new(
                "D_OP_VFPTR",
                span,
                format!("operator {} requires an operand of a non-void pointer type", op_text(op)),
            ));
        }
        if !compatible {
            let text = op_text(op);
            return Err(CompileError::new(
                "D_OP_INCOMPAT",
                span,
                format!("operands have incompatible types: \"{}\" {text} \"{}\"", ty.name(), value.ty.name()),
            ));
        }
        let signed = matches!(arith_result(&ty, &value.ty), Type::Int { signed: true, .. }) || ty == Type::String;
        Ok(TExpr { kind: TKind::Assign { place, op, signed, value: Box::new(value) }, ty, span: span.clone() })
    }
}

/// `=` or `op=`, as messages name an assignment operator.
fn op_text(op: Option<BinOp>) -> String {
    op.map_or("=".to_string(), |o| format!("{}=", binop_text(o)))
}

/// Names D defines, which a script cannot assign or index: the built-in
/// variables, curthread, NULL and the integer constants.
pub(super) fn is_predefined(name: &str) -> bool {
    builtin(name).is_some()
        || name == "curthread"
        || name == "curcpu"
        || name == "NULL"
        || builtin_constant(name).is_some()
}

/// Integer constants D defines for scripts (Linux's address families).
pub(super) fn builtin_constant(name: &str) -> Option<u64> {
    match name {
        "AF_INET" => Some(2),
        "AF_INET6" => Some(10),
        // The ERROR probe's arg4 (fault kinds), as DTrace numbers them.
        "DTRACEFLT_UNKNOWN" => Some(0),
        "DTRACEFLT_BADADDR" => Some(1),
        "DTRACEFLT_BADALIGN" => Some(2),
        "DTRACEFLT_ILLOP" => Some(3),
        "DTRACEFLT_DIVZERO" => Some(4),
        "DTRACEFLT_NOSCRATCH" => Some(5),
        "DTRACEFLT_KPRIV" => Some(6),
        "DTRACEFLT_UPRIV" => Some(7),
        "DTRACEFLT_TUPOFLOW" => Some(8),
        "DTRACEFLT_BADSTACK" => Some(9),
        "DTRACEFLT_BADSIZE" => Some(10),
        "DTRACEFLT_BADINDEX" => Some(11),
        _ => None,
    }
}

/// The value of an integer constant expression (literals, negation, and
/// simple arithmetic on them), as aggregating-function parameters need.
/// The value of a typed integer expression made of constants (`sizeof (x) * 2`).
pub(super) fn folded(e: &TExpr) -> Option<u64> {
    let signed = |t: &TExpr| matches!(t.ty, Type::Int { signed: true, .. });
    match &e.kind {
        TKind::Int(v) => Some(*v),
        TKind::Cast(inner) => folded(inner),
        TKind::Neg(inner) => Some(folded(inner)?.wrapping_neg()),
        TKind::BitNot(inner) => Some(!folded(inner)?),
        TKind::Not(inner) => Some(u64::from(folded(inner)? == 0)),
        TKind::Logical { op, lhs, rhs } => {
            let (l, r) = (folded(lhs)? != 0, folded(rhs)? != 0);
            Some(u64::from(match op {
                BinOp::LogAnd => l && r,
                BinOp::LogOr => l || r,
                _ => l != r,
            }))
        }
        TKind::Binary { op, lhs, rhs, signed: signed_op } => {
            let (l, r) = (folded(lhs)?, folded(rhs)?);
            let signed = signed(lhs) || signed(rhs);
            if *signed_op && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) {
                // Overflow (i64::MIN / -1 included) is no constant.
                let (a, b) = (l as i64, r as i64);
                let value = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    _ => a.checked_div(b),
                };
                return value.map(|v| v as u64);
            }
            let cmp = |o: std::cmp::Ordering| {
                if signed {
                    (l as i64).cmp(&(r as i64)) == o
                } else {
                    l.cmp(&r) == o
                }
            };
            use std::cmp::Ordering::*;
            match op {
                BinOp::Add => l.checked_add(r),
                BinOp::Sub => l.checked_sub(r),
                BinOp::Mul => l.checked_mul(r),
                BinOp::Div => l.checked_div(r),
                BinOp::BitAnd => Some(l & r),
                BinOp::BitOr => Some(l | r),
                BinOp::BitXor => Some(l ^ r),
                BinOp::Eq => Some(u64::from(l == r)),
                BinOp::Ne => Some(u64::from(l != r)),
                BinOp::Lt => Some(u64::from(cmp(Less))),
                BinOp::Gt => Some(u64::from(cmp(Greater))),
                BinOp::Le => Some(u64::from(!cmp(Greater))),
                BinOp::Ge => Some(u64::from(!cmp(Less))),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(super) fn const_int(e: &ast::Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value as i64),
        ExprKind::Char(c) => Some(*c),
        ExprKind::Unary(UnOp::Neg, inner) => const_int(inner).map(i64::wrapping_neg),
        ExprKind::Unary(UnOp::Plus, inner) => const_int(inner),
        ExprKind::Binary(op, l, r) => {
            let (l, r) = (const_int(l)?, const_int(r)?);
            match op {
                BinOp::Add => Some(l.wrapping_add(r)),
                BinOp::Sub => Some(l.wrapping_sub(r)),
                BinOp::Mul => Some(l.wrapping_mul(r)),
                BinOp::Div => l.checked_div(r),
                BinOp::Shl => Some(l.wrapping_shl(r as u32)),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(super) fn member_operand_error(arrow: bool, ty: &Type, span: &Span) -> CompileError {
    // dt_cook_op2: -> first wants a pointer at all.
    if arrow && !matches!(ty, Type::Pointer(_)) {
        return CompileError::new("D_OP_PTR", span, "operator -> must be applied to a pointer");
    }
    // dt_cook_op2's words.
    let text = match ty {
        Type::Pointer(to) if arrow => format!(
            "operator -> cannot be applied to pointer to type \"{}\"; must be applied to a struct or union pointer",
            to.name()
        ),
        _ => format!(
            "operator {} cannot be applied to type \"{}\"; must be applied to a struct or union",
            if arrow { "->" } else { "." },
            ty.name()
        ),
    };
    CompileError::new("D_OP_SOU", span, text)
}

/// Whether an address lies in a thread-local variable's value (a member or
/// element of a self-> struct or array).
fn in_thread_local(addr: &TExpr) -> bool {
    match &addr.kind {
        TKind::Var(Var::ThreadLocal(_)) => true,
        TKind::Offset(base, _) => in_thread_local(base),
        TKind::Binary { lhs, .. } => in_thread_local(lhs),
        _ => false,
    }
}

/// Whether `addr` is inside an associative array's element (a struct value).
fn in_element(addr: &TExpr) -> bool {
    match &addr.kind {
        TKind::Element { .. } => true,
        TKind::Offset(base, _) => in_element(base),
        TKind::Binary { lhs, .. } => in_element(lhs),
        _ => false,
    }
}

/// The element and the member's offset in it, when `addr` is a member (at
/// constant offsets) of an associative array's struct element.
fn element_member(addr: &TExpr, offset: u64) -> Option<(usize, &[TExpr], u64)> {
    match &addr.kind {
        TKind::Element { array, keys } => Some((*array, keys, offset)),
        TKind::Offset(base, off) => element_member(base, offset + off),
        _ => None,
    }
}

/// The thread-local and the member's offset in it, when `addr` is a member
/// (at constant offsets) of a thread-local struct.
fn thread_local_member(addr: &TExpr, offset: u64) -> Option<(usize, u64)> {
    match &addr.kind {
        TKind::Var(Var::ThreadLocal(i)) => Some((*i, offset)),
        TKind::Offset(base, off) => thread_local_member(base, offset + off),
        _ => None,
    }
}

/// The most keys an associative array's tuple may have (DIF_DTR_NREGS).
const MAX_TUPLE_KEYS: usize = 8;

pub(super) fn undeclared(name: &str, span: &Span) -> CompileError {
    CompileError::new("D_VAR_UNDEF", span, format!("{name} has not yet been declared or assigned"))
}

/// A char array member read as a string, seen as the array again (for
/// indexing and pointer arithmetic); anything else unchanged.
pub(super) fn char_array(e: TExpr) -> TExpr {
    match e.kind {
        TKind::LoadStr(addr, len) => TExpr { ty: Type::Array(Box::new(Type::CHAR), len), ..*addr },
        _ => e,
    }
}

impl Checker<'_> {
    /// A string indexes as the `char [strsize]` that holds it (`s[0]`,
    /// `execname[i]`), as in DTrace; a char array member stays an array.
    pub(super) fn char_array(&self, e: TExpr) -> TExpr {
        // A char array in memory is indexed where it is, not in a copy.
        if e.ty == Type::String && !matches!(e.kind, TKind::LoadStr(..)) {
            // Offset keeps the string's own type for the code generator,
            // which evaluates it to the address of its bytes.
            let span = e.span.clone();
            let ty = Type::Array(Box::new(Type::CHAR), self.opts.strsize);
            return TExpr { kind: TKind::Offset(Box::new(e), 0), ty, span };
        }
        char_array(e)
    }
}

/// The value of type `ty` stored at `addr`: integers and pointers are read
/// from memory; a struct or an array is its address.
pub(super) fn value_at(addr: TExpr, ty: Type, span: &Span) -> Result<TExpr> {
    match ty {
        Type::Int { .. } | Type::Pointer(_) => Ok(TExpr { kind: TKind::Load(Box::new(addr)), ty, span: span.clone() }),
        // The address itself, whatever computed it (Offset keeps the
        // computation's own type for the code generator).
        // A string member holds its characters in place (D's `string` in
        // a struct is a char[strsize]): the string is at that address.
        Type::Struct(_) | Type::Array(..) | Type::String => {
            Ok(TExpr { kind: TKind::Offset(Box::new(addr), 0), ty, span: span.clone() })
        }
        _ => Err(CompileError::new("D_DEREF_VOID", span, "cannot dereference pointer to void")),
    }
}

/// sizeof: the type's size (a string's is the strsize option); void has
/// none (dt_cook_op1's D_SIZEOF_TYPE).
fn sizeof(ty: &Type, opts: &CheckOptions, span: &Span) -> Result<u64> {
    if *ty == Type::String {
        return Ok(opts.max_strlen as u64);
    }
    match type_size(ty, opts.strsize) {
        n if n > 0 && *ty != Type::Void => Ok(n as u64),
        _ => Err(CompileError::new("D_SIZEOF_TYPE", span, "cannot apply sizeof to an operand of unknown size")),
    }
}

/// A bit-field's value: the bytes that hold it, shifted down and masked
/// (signed fields sign-extended by shifting up and back down).
pub(super) fn bitfield(addr: TExpr, ty: Type, shift: u32, bits: u32, span: &Span) -> TExpr {
    let typed = |kind, ty| TExpr { kind, ty, span: span.clone() };
    // The storage unit is the field's type, at its aligned offset: reading
    // it stays inside the struct.
    let unit = match ty {
        Type::Int { size, .. } => size,
        _ => 8,
    };
    let storage = typed(TKind::Load(Box::new(addr)), Type::Int { size: unit, signed: false, name: "uint64_t" });
    let signed = matches!(ty, Type::Int { signed: true, .. });
    let binary = |op, lhs, by: u32| {
        let rhs = typed(TKind::Int(by as u64), Type::INT);
        typed(
            TKind::Binary { op, signed, lhs: Box::new(lhs), rhs: Box::new(rhs) },
            Type::Int { size: 8, signed, name: "int64_t" },
        )
    };
    let up = binary(BinOp::Shl, storage, 64 - shift - bits);
    let value = binary(BinOp::Shr, up, 64 - bits);
    typed(TKind::Cast(Box::new(value)), ty)
}

pub(super) fn builtin(name: &str) -> Option<(Builtin, Type)> {
    let int = |name| Type::Int { size: 4, signed: true, name };
    let uint = |name| Type::Int { size: 4, signed: false, name };
    Some(match name {
        "arg0" | "arg1" | "arg2" | "arg3" | "arg4" | "arg5" | "arg6" | "arg7" | "arg8" | "arg9" => {
            (Builtin::Arg(name.as_bytes()[3] - b'0'), Type::INT64)
        }
        "pid" => (Builtin::Pid, int("pid_t")),
        "tid" => (Builtin::Tid, int("id_t")),
        "ppid" => (Builtin::Ppid, int("pid_t")),
        "uid" => (Builtin::Uid, uint("uid_t")),
        "gid" => (Builtin::Gid, uint("gid_t")),
        "execname" => (Builtin::Execname, Type::String),
        "timestamp" => (Builtin::Timestamp, Type::UINT64),
        "walltimestamp" => (Builtin::Walltimestamp, Type::INT64),
        "cpu" => (Builtin::Cpu, int("processorid_t")),
        "probeprov" => (Builtin::ProbeProv, Type::String),
        "probemod" => (Builtin::ProbeMod, Type::String),
        "probefunc" => (Builtin::ProbeFunc, Type::String),
        "probename" => (Builtin::ProbeName, Type::String),
        "errno" => (Builtin::Errno, Type::INT),
        "id" => (Builtin::Id, Type::UINT),
        "epid" => (Builtin::Epid, Type::UINT),
        "vtimestamp" => (Builtin::Vtimestamp, Type::UINT64),
        "ipl" => (Builtin::Ipl, uint("uint_t")),
        "stackdepth" => (Builtin::Stackdepth, Type::Int { size: 4, signed: false, name: "uint32_t" }),
        "ustackdepth" => (Builtin::Ustackdepth, Type::Int { size: 4, signed: false, name: "uint32_t" }),
        "caller" => (Builtin::Caller, Type::Int { size: 8, signed: false, name: "uintptr_t" }),
        "ucaller" => (Builtin::Ucaller, Type::UINT64),
        _ => return None,
    })
}

/// An lvalue's error (worded for `=`) for the operator that needs it.
fn for_operator(e: CompileError, op: &str) -> CompileError {
    match e.message.strip_prefix("operator = ") {
        Some(rest) => CompileError { message: format!("operator {op} {rest}"), ..e },
        None => e,
    }
}

pub(super) fn unop_text(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "-",
        UnOp::Plus => "+",
        UnOp::Not => "!",
        UnOp::BitNot => "~",
        UnOp::Deref => "*",
        UnOp::AddrOf => "&",
        UnOp::PreInc | UnOp::PostInc => "++",
        UnOp::PreDec | UnOp::PostDec => "--",
    }
}

pub(crate) fn binop_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::BitAnd => "&",
        BinOp::BitXor => "^",
        BinOp::BitOr => "|",
        BinOp::LogAnd => "&&",
        BinOp::LogXor => "^^",
        BinOp::LogOr => "||",
        BinOp::Comma => ",",
    }
}

/// DTrace's strbadidnum(): whether a macro argument's text is neither an
/// integer strtoull() reads whole nor made of identifier characters.
fn is_string_macro_text(text: &str) -> bool {
    if text.is_empty() {
        return true;
    }
    let digits = text.trim_start().strip_prefix(['+', '-']).unwrap_or(text.trim_start());
    let (radix, body) = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => (16, hex),
        None if digits.starts_with('0') => (8, digits),
        None => (10, digits),
    };
    let whole_integer = !body.is_empty() && body.chars().all(|c| c.is_digit(radix));
    !whole_integer && !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '`')
}
