//! Statements, actions and subroutines: the statement list of a clause,
//! each action's arguments and the records it lays out (trace(), printf()
//! and its format checks, tracemem(), exit(), the destructive actions,
//! speculation), and the subroutines' signatures and calls (alloca()
//! included).

use super::aggregations::{aggregation_target, is_aggregating_function};
use super::expr::{char_array, folded};
use super::types::{type_size, value_layout};
use super::*;
use crate::defs::printf_format::{self as printf, ArgClass};
use crate::syntax::ast::ExprKind;

/// Data-recording actions in one clause (each has a presence bit in its
/// record; the record is at most a ring buffer's page-multiple anyway).
const MAX_ACTIONS: usize = 4096;

impl Checker<'_> {
    /// Reserves alloca(size) bytes in the clause's alloca region. Sizes are
    /// constants, so the region's size (and the verifier's bounds) are
    /// known when the program is built.
    pub(super) fn alloca(&mut self, size: &TExpr, span: &Span) -> Result<Subr> {
        let Some(bytes) = folded(size) else {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                span,
                "alloca( ) sizes that are not constant expressions are not supported yet",
            ));
        };
        let offset = self.clause_alloca;
        let end = offset + (bytes as usize).next_multiple_of(8);
        let limit = self.opts.scratchsize;
        if bytes as usize > limit {
            return Err(CompileError::new(
                "D_ALLOCA_SIZE",
                span,
                format!("alloca({bytes}) size larger than scratchsize {limit}"),
            ));
        }
        if end > limit {
            return Err(CompileError::new(
                "D_ALLOCA_SIZE",
                span,
                format!(
                    "alloca({bytes}) exceeds the clause's scratch space (scratchsize {limit}, {offset} bytes in use)"
                ),
            ));
        }
        self.clause_alloca = end;
        self.program.alloca_bytes = self.program.alloca_bytes.max(end);
        Ok(Subr::Alloca { offset, size: bytes as usize })
    }

    /// copyin()'s buffer: at most strsize bytes (fewer when the size is a
    /// constant) and a NUL, kept for the rest of the clause in its alloca
    /// region when scratchsize leaves room (a pointer to it may be used
    /// by later statements), else in a statement's scratch slot.
    fn copyin_buffer(&mut self, size: &TExpr) -> Subr {
        let strsize = self.opts.strsize;
        let limit = folded(size).map_or(strsize, |n| (n as usize).min(strsize));
        let end = self.clause_alloca + (limit + 1).next_multiple_of(8);
        if end > self.opts.scratchsize {
            return Subr::Copyin { offset: None, limit: strsize };
        }
        let offset = self.clause_alloca;
        self.clause_alloca = end;
        self.program.alloca_bytes = self.program.alloca_bytes.max(end);
        Subr::Copyin { offset: Some(offset), limit }
    }

    pub(super) fn stmts(&mut self, stmts: &[ast::Stmt]) -> Result<Vec<TStmt>> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out)?;
        }
        Ok(out)
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<TStmt>) -> Result<()> {
        match &s.kind {
            StmtKind::Empty => {}
            StmtKind::Block(list) => {
                for s in list {
                    self.stmt(s, out)?;
                }
            }
            StmtKind::If { cond, then, otherwise } => {
                let c = self.scalar_expr(cond, "D_IF_SCALAR", "if-statement condition must be of scalar type")?;
                let then = self.stmts(then)?;
                let otherwise = match otherwise {
                    Some(o) => self.stmts(o)?,
                    None => Vec::new(),
                };
                out.push(TStmt::If { cond: c, then, otherwise });
            }
            StmtKind::Expr(e) => {
                // `OPT_x ? printf(...) : 1;`: a constant condition picks its
                // branch before checking, as DTrace folds it while parsing,
                // so the branch may be an action.
                if let ExprKind::Ternary(c, a, b) = &e.kind {
                    if let Some(v) = self.constant_condition(c) {
                        let chosen = if v != 0 { a } else { b };
                        let stmt = ast::Stmt { kind: StmtKind::Expr((**chosen).clone()), span: s.span.clone() };
                        return self.stmt(&stmt, out);
                    }
                }
                if let ExprKind::Assign(op, target, value) = &e.kind {
                    // `@a[1][2] = count()`: dt_cook_op2's D_AGG_MDIM.
                    if let ExprKind::Index(inner, _) = &target.kind {
                        if let (ExprKind::Index(..), Some((name, _))) = (&inner.kind, aggregation_target(inner)) {
                            return Err(CompileError::new(
                                "D_AGG_MDIM",
                                &target.span,
                                format!("@{name}[ ] may not be referenced as a multi-dimensional array"),
                            ));
                        }
                    }
                    if let Some((name, keys)) = aggregation_target(target) {
                        self.check_order(ActionClass::Aggregation, &e.span)?;
                        out.push(self.aggregate(*op, name, keys, value, &e.span)?);
                        return Ok(());
                    }
                }
                if let Some((name, _)) = aggregation_target(e) {
                    // `@a;` names an aggregation (unknown: D_IDENT_UNDEF);
                    // `@a[1];` is an element with no effect.
                    let plain = matches!(e.kind, ExprKind::Aggregation(_));
                    if plain && !self.program.aggregations.iter().any(|a| a.name == name) {
                        return Err(CompileError::new(
                            "D_IDENT_UNDEF",
                            &e.span,
                            format!("failed to resolve @{name}: Unknown variable name"),
                        ));
                    }
                    return Err(CompileError::new(
                        "D_AGG_NULL",
                        &e.span,
                        format!("expression has null effect: @{name}"),
                    ));
                }
                if let ExprKind::Call { name, name_span, args } = &e.kind {
                    if let Some(stmt) = self.action(name, name_span, args, &e.span)? {
                        out.push(stmt);
                        return Ok(());
                    }
                }
                let e = self.expr(e)?;
                out.push(TStmt::Expr(e));
            }
        }
        Ok(())
    }

    /// printf() and system(): a constant format checked against its values;
    /// returns the format's index in `Program::formats` and the values.
    pub(super) fn formatted_action(
        &mut self,
        name: &str,
        name_span: &Span,
        args: &[ast::Expr],
        span: &Span,
    ) -> Result<(usize, Vec<TExpr>)> {
        if args.is_empty() {
            // DTrace's wording differs: printf() fails its prototype check.
            return Err(if name == "printf" {
                CompileError::new("D_PROTO_LEN", name_span, "printf( ) prototype mismatch: 0 args passed, 1 expected")
            } else {
                CompileError::new(
                    "D_PRINTF_ARG_PROTO",
                    name_span,
                    format!("{name}( ) prototype mismatch: 0 args passed, at least 1 expected"),
                )
            });
        }
        // Anything but a string constant, printf(123) included, is no
        // format (illumos' err.D_PRINTF_ARG_FMT.badfmt), in
        // dt_action_printflike's words.
        let ExprKind::Str(fmt) = &args[0].kind else {
            let given = self.expr(&args[0])?;
            return Err(CompileError::new(
                "D_PRINTF_ARG_FMT",
                &args[0].span,
                format!(
                    "{name}( ) argument #1 is incompatible with prototype:\n\tprototype: string constant\n\t argument: {}",
                    given.ty.name()
                ),
            ));
        };
        // The arguments are cooked before the format is parsed, as in DTrace.
        // An aggregation cooks to DTrace's dynamic type, which the format
        // then refuses by its kind's name (err.D_PRINTF_ARG_TYPE.aggarg).
        let mut refused = None;
        let mut dynamic = Vec::new();
        let mut values = Vec::new();
        for a in &args[1..] {
            let is_aggregation = matches!(&a.kind,
                ExprKind::Aggregation(n) if self.program.aggregations.iter().any(|x| x.name == *n));
            dynamic.push(is_aggregation);
            if is_aggregation {
                // D_AGG_SCALAR, unless the format refuses it first.
                if let Err(e) = self.expr(a) {
                    refused.get_or_insert(e);
                }
                values.push(TExpr { kind: TKind::Int(0), ty: Type::Void, span: a.span.clone() });
            } else {
                values.push(self.expr(a)?);
            }
        }
        let format =
            printf::parse_format(fmt).map_err(|e| CompileError::new("D_SYNTAX", &args[0].span, e.to_string()))?;
        let dynamic_kind = |i: usize| dynamic.get(i).copied().unwrap_or(false).then_some("aggregation");
        check_printf_args(name, &format, &values, &dynamic_kind, span)?;
        if let Some(e) = refused {
            return Err(e);
        }
        self.program.formats.push(format);
        Ok((self.program.formats.len() - 1, values))
    }

    /// Notes a destructive action: tracing then needs -w (checked when
    /// enabling, as DTrace does), and it may not follow speculate().
    /// panic() and breakpoint() stop the whole machine and have no Linux
    /// BPF counterpart: they compile (their errors come first, as in
    /// DTrace) and tracing is refused when enabled.
    pub(super) fn destructive(&mut self, name: &str, span: &Span) -> Result<()> {
        self.check_order(ActionClass::Destructive, span)?;
        if let "panic" | "breakpoint" = name {
            self.program.unavailable.get_or_insert_with(|| {
                format!(
                    "{name}( ) is not available on Linux: BPF programs cannot {}",
                    if name == "panic" { "panic the kernel" } else { "enter the kernel debugger" }
                )
            });
        }
        self.program.destructive = true;
        Ok(())
    }

    /// raise(sig), stop(), copyoutstr(): destructive actions that record nothing.
    pub(super) fn destructive_action(
        &mut self,
        name: &str,
        name_span: &Span,
        args: &[ast::Expr],
        span: &Span,
    ) -> Result<Option<TStmt>> {
        let op = match name {
            "raise" => {
                self.arity(name, name_span, args, 1, 1)?;
                DestructiveOp::Signal(self.int_arg(name, &args[0])?)
            }
            "stop" => {
                self.arity(name, name_span, args, 0, 0)?;
                DestructiveOp::Signal(TExpr {
                    kind: TKind::Int(libc::SIGSTOP as u64),
                    ty: Type::Int { size: 4, signed: true, name: "int" },
                    span: name_span.clone(),
                })
            }
            "copyoutstr" => {
                self.arity(name, name_span, args, 3, 3)?;
                let text = self.expr(&args[0])?;
                if text.ty != Type::String {
                    return Err(incompatible_arg("D_PROTO_ARG", &args[0].span, name, 1, "string", &text.ty.name()));
                }
                let addr = self.expr(&args[1])?;
                if !addr.ty.is_int() && !matches!(addr.ty, Type::Pointer(_)) {
                    return Err(incompatible_arg("D_PROTO_ARG", &args[1].span, name, 2, "uintptr_t", &addr.ty.name()));
                }
                let max = self.expr(&args[2])?;
                if !max.ty.is_int() {
                    return Err(incompatible_arg("D_PROTO_ARG", &args[2].span, name, 3, "size_t", &max.ty.name()));
                }
                DestructiveOp::CopyOutStr { text, addr, max }
            }
            "copyout" => {
                self.arity(name, name_span, args, 3, 3)?;
                let mut checked = Vec::new();
                for (i, (arg, want)) in args.iter().zip(["void *", "uintptr_t", "size_t"]).enumerate() {
                    let e = self.expr(arg)?;
                    // A string is the address of its characters to a void *.
                    let fits = e.ty.is_int()
                        || (i < 2 && matches!(e.ty, Type::Pointer(_)))
                        || (i == 0 && e.ty == Type::String);
                    if !fits {
                        return Err(incompatible_arg("D_PROTO_ARG", &arg.span, name, i + 1, want, &e.ty.name()));
                    }
                    checked.push(e);
                }
                let size = checked.pop();
                let addr = checked.pop();
                let buf = checked.pop();
                let (Some(buf), Some(addr), Some(size)) = (buf, addr, size) else { return Ok(None) };
                DestructiveOp::CopyOut { buf, addr, size }
            }
            "chill" => {
                self.arity(name, name_span, args, 1, 1)?;
                self.program.uses_chill = true;
                DestructiveOp::Chill(self.int_arg(name, &args[0])?)
            }
            // dtrace-utils' return(int): a kprobe's override of the traced
            // function's return value (error injection). It compiles with
            // DTrace's checks; enabling refuses it (see main's check).
            "return" => {
                self.arity(name, name_span, args, 1, 1)?;
                self.int_arg(name, &args[0])?;
                self.destructive(name, span)?;
                if !self.program.return_overrides.contains(&self.clause_desc) {
                    self.program.return_overrides.push(self.clause_desc.clone());
                }
                return Ok(Some(TStmt::Expr(TExpr { kind: TKind::Int(0), ty: Type::INT, span: span.clone() })));
            }
            "panic" | "breakpoint" => {
                self.arity(name, name_span, args, 0, 0)?;
                self.destructive(name, span)?;
                return Ok(Some(TStmt::Expr(TExpr { kind: TKind::Int(0), ty: Type::INT, span: span.clone() })));
            }
            _ => return Ok(None),
        };
        self.destructive(name, span)?;
        Ok(Some(TStmt::Destructive(op)))
    }

    /// Actions (trace, printf, exit) are statements, not expressions.
    pub(super) fn action(
        &mut self,
        name: &str,
        name_span: &Span,
        args: &[ast::Expr],
        span: &Span,
    ) -> Result<Option<TStmt>> {
        if let Some(stmt) = self.destructive_action(name, name_span, args, span)? {
            return Ok(Some(stmt));
        }
        let spec_op = match name {
            "speculate" => Some(SpecOp::Speculate),
            "commit" => Some(SpecOp::Commit),
            "discard" => Some(SpecOp::Discard),
            _ => None,
        };
        if let Some(op) = spec_op {
            self.arity(name, name_span, args, 1, 1)?;
            let id = self.int_arg(name, &args[0])?;
            self.check_order(ActionClass::Spec(op), span)?;
            return Ok(Some(TStmt::Speculation { op, id }));
        }
        let kind = match name {
            "trace" => {
                self.arity(name, name_span, args, 1, 1)?;
                if aggregation_target(&args[0]).is_some() {
                    return Err(CompileError::new(
                        "D_TRACE_AGG",
                        &args[0].span,
                        "trace( ) may not be applied to an aggregation",
                    ));
                }
                let e = self.expr(&args[0])?;
                if e.ty == Type::Void {
                    return Err(CompileError::new(
                        "D_TRACE_VOID",
                        &args[0].span,
                        "trace( ) may not be applied to a void expression",
                    ));
                }
                if let Type::Struct(_) | Type::Array(..) = e.ty {
                    copy_fits("a trace( ) record", &e.ty, self.opts.strsize, &args[0].span)?;
                }
                // trace(ustack()) traces the stack, as the action does
                // (profilers' `profile-997 { trace(ustack()); }`).
                let record = if e.ty == Type::Stack { RecordKind::Stack } else { RecordKind::Trace };
                (record, ActionKind::Record(vec![e]))
            }
            "print" => {
                self.arity(name, name_span, args, 1, 1)?;
                if aggregation_target(&args[0]).is_some() {
                    return Err(CompileError::new(
                        "D_PRINT_AGG",
                        &args[0].span,
                        "print( ) may not be applied to an aggregation",
                    ));
                }
                let e = char_array(self.expr(&args[0])?);
                if e.ty == Type::Void {
                    return Err(CompileError::new(
                        "D_PRINT_VOID",
                        &args[0].span,
                        "print( ) may not be applied to a void expression",
                    ));
                }
                // A pointer to a struct or union prints what it points to
                // (dtrace-utils' print(), whose argument is a pointer).
                let pointee = match &e.ty {
                    Type::Pointer(to) => match to.as_ref() {
                        Type::Struct(record) => Some(Type::Struct(self.completed(record.clone()))),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(to) = pointee {
                    if type_size(&to, self.opts.strsize) == 0 {
                        return Err(CompileError::new(
                            "D_PRINT_SIZE",
                            &args[0].span,
                            format!(
                                "print( ) argument #1 reference has type '{}' with size 0; cannot print( ) it.",
                                to.name()
                            ),
                        ));
                    }
                    (RecordKind::PrintPointee(self.print_node(&to, &args[0].span)?), ActionKind::Record(vec![e]))
                } else {
                    let node = self.print_node(&e.ty, &args[0].span)?;
                    if let PrintKind::Array { .. } | PrintKind::Record(_) = node.kind {
                        copy_fits("a print( ) record", &e.ty, self.opts.strsize, &args[0].span)?;
                    }
                    (RecordKind::Print(node), ActionKind::Record(vec![e]))
                }
            }
            "printf" => {
                let (format, values) = self.formatted_action(name, name_span, args, span)?;
                (RecordKind::Printf(format), ActionKind::Record(values))
            }
            // system() formats as printf() does; the consumer runs the result.
            "system" => {
                self.destructive(name, name_span)?;
                let (format, values) = self.formatted_action(name, name_span, args, span)?;
                (RecordKind::System(format), ActionKind::Record(values))
            }
            "freopen" => {
                // "." is DTrace's own sentinel for freopen("") (restore).
                if matches!(args.first().map(|a| &a.kind), Some(ExprKind::Str(text)) if text.as_slice() == b".") {
                    return Err(CompileError::new(
                        "D_FREOPEN_INVALID",
                        name_span,
                        "freopen( ) argument #1 cannot be \".\"",
                    ));
                }
                self.destructive(name, name_span)?;
                let (format, values) = self.formatted_action(name, name_span, args, span)?;
                (RecordKind::Freopen(format), ActionKind::Record(values))
            }
            "ftruncate" => {
                self.arity(name, name_span, args, 0, 0)?;
                (RecordKind::Ftruncate, ActionKind::Record(Vec::new()))
            }
            "printa" => self.printa(name_span, args, span)?,
            "tracemem" => self.tracemem(name_span, args)?,
            "printm" => self.printm(name_span, args)?,
            "stack" => {
                let id = self.stack(name, args, span)?;
                (RecordKind::Stack, ActionKind::Record(vec![id]))
            }
            // As a statement, func() and its kin trace the symbol.
            _ if SymbolKind::of_function(name).is_some() => {
                let symbol = self.symbol(name, name_span, args, span)?;
                (RecordKind::Trace, ActionKind::Record(vec![symbol]))
            }
            // jstack() is ustack() where no Java VM annotates frames.
            "ustack" | "jstack" => {
                let id = self.ustack(name, args, span)?;
                (RecordKind::Stack, ActionKind::Record(vec![id]))
            }
            "trunc" => {
                if args.is_empty() || args.len() > 2 {
                    let bound = if args.is_empty() { "at least 1" } else { "no more than 2" };
                    return Err(CompileError::new(
                        "D_TRUNC_PROTO",
                        name_span,
                        format!("trunc( ) prototype mismatch: {} args passed, {bound} expected", args.len()),
                    ));
                }
                let agg = self.aggregation_arg(name, "D_TRUNC", &args[0], 1)?;
                let values = match args.get(1) {
                    Some(n) => vec![self.scalar_arg(name, "D_TRUNC_SCALAR", n)?],
                    None => Vec::new(),
                };
                (RecordKind::Trunc(agg), ActionKind::Record(values))
            }
            "clear" | "denormalize" => {
                let tag = if name == "clear" { "D_CLEAR" } else { "D_NORMALIZE" };
                if args.len() != 1 {
                    return Err(CompileError::new(
                        if name == "clear" { "D_CLEAR_PROTO" } else { "D_NORMALIZE_PROTO" },
                        name_span,
                        format!("{name}( ) prototype mismatch: {} args passed, 1 expected", args.len()),
                    ));
                }
                let agg = self.aggregation_arg(name, tag, &args[0], 1)?;
                let kind = if name == "clear" { RecordKind::Clear(agg) } else { RecordKind::Denormalize(agg) };
                (kind, ActionKind::Record(Vec::new()))
            }
            "normalize" => {
                if args.len() != 2 {
                    return Err(CompileError::new(
                        "D_NORMALIZE_PROTO",
                        name_span,
                        format!("normalize( ) prototype mismatch: {} args passed, 2 expected", args.len()),
                    ));
                }
                let agg = self.aggregation_arg(name, "D_NORMALIZE", &args[0], 1)?;
                let factor = self.scalar_arg(name, "D_NORMALIZE_SCALAR", &args[1])?;
                (RecordKind::Normalize(agg), ActionKind::Record(vec![factor]))
            }
            // The option's name is a constant; its value may be computed
            // (setopt("aggsortpos", lltostr(j))), recorded and applied by
            // the consumer when the record comes.
            "setopt" => {
                self.arity(name, name_span, args, 1, 2)?;
                let ExprKind::Str(option) = &args[0].kind else {
                    let ty = self.expr(&args[0])?.ty.name();
                    // setopt's prototype is void(char *[, char *]).
                    return Err(incompatible_arg("D_PROTO_ARG", &args[0].span, "setopt", 1, "char *", &ty));
                };
                let option = String::from_utf8_lossy(option).into_owned();
                match args.get(1).map(|a| (a, &a.kind)) {
                    None => (RecordKind::Setopt { name: option, value: None }, ActionKind::Record(Vec::new())),
                    Some((_, ExprKind::Str(text))) => {
                        let value = Some(String::from_utf8_lossy(text).into_owned());
                        (RecordKind::Setopt { name: option, value }, ActionKind::Record(Vec::new()))
                    }
                    Some((a, _)) => {
                        let value = self.expr(a)?;
                        if value.ty != Type::String {
                            let ty = value.ty.name();
                            return Err(incompatible_arg("D_PROTO_ARG", &a.span, "setopt", 2, "char *", &ty));
                        }
                        (RecordKind::Setopt { name: option, value: None }, ActionKind::Record(vec![value]))
                    }
                }
            }
            "exit" => {
                self.arity(name, name_span, args, 1, 1)?;
                (RecordKind::Exit, ActionKind::Exit(self.int_arg(name, &args[0])?))
            }
            _ => return Ok(None),
        };
        let (record_kind, kind) = kind;
        let class = match record_kind {
            RecordKind::Exit => ActionClass::Exit,
            RecordKind::System(_) | RecordKind::Freopen(_) => ActionClass::Destructive,
            _ => ActionClass::Data,
        };
        self.check_order(class, span)?;
        let action = self.actions_in_clause;
        if action >= MAX_ACTIONS {
            return Err(CompileError::new(
                "D_ACT_MAX",
                span,
                format!("too many actions in one clause (the limit is {MAX_ACTIONS})"),
            ));
        }
        self.actions_in_clause += 1;
        let values = match (&kind, &record_kind) {
            // tracemem's address stands for the memory it copies.
            (ActionKind::Record(args), RecordKind::Tracemem { size }) => std::iter::once(ValueLayout::Memory(*size))
                .chain(args[1..].iter().map(|a| value_layout(&a.ty)))
                .collect(),
            // print() and trace() record a struct's or an array's bytes, not its address.
            (ActionKind::Record(args), RecordKind::PrintPointee(_)) => args
                .iter()
                .map(|a| match &a.ty {
                    Type::Pointer(to) => {
                        ValueLayout::Pointee(type_size(to, self.opts.strsize).min(super::types::MAX_COPY_BYTES))
                    }
                    ty => value_layout(ty),
                })
                .collect(),
            (ActionKind::Record(args), RecordKind::Print(_) | RecordKind::Trace) => args
                .iter()
                .map(|a| match a.ty {
                    Type::Struct(_) | Type::Array(..) => ValueLayout::Memory(type_size(&a.ty, self.opts.strsize)),
                    _ => value_layout(&a.ty),
                })
                .collect(),
            (ActionKind::Record(args), _) => args.iter().map(|a| value_layout(&a.ty)).collect(),
            (ActionKind::Exit(_), _) => vec![ValueLayout::Int { size: 4, signed: true }],
        };
        let offset = self.record_offset;
        self.record_offset += values.iter().map(|v| v.bytes(self.opts.strsize)).sum::<usize>();
        self.layouts.push(ActionLayout { kind: record_kind, offset, values });
        Ok(Some(TStmt::Action { action, kind }))
    }

    /// An `int` argument (exit, speculate, commit, discard).
    pub(super) fn int_arg(&mut self, func: &str, arg: &ast::Expr) -> Result<TExpr> {
        let e = self.expr(arg)?;
        if !e.ty.is_int() {
            return Err(incompatible_arg("D_PROTO_ARG", &arg.span, func, 1, "int", &e.ty.name()));
        }
        Ok(e)
    }

    /// tracemem(addr, size[, dsize]): `size` (a constant) bytes of kernel
    /// memory; dsize, when given, says how many of them to print.
    pub(super) fn tracemem(&mut self, name_span: &Span, args: &[ast::Expr]) -> Result<(RecordKind, ActionKind)> {
        self.arity("tracemem", name_span, args, 2, usize::MAX)?;
        if let Some(extra) = args.get(3) {
            return Err(CompileError::new(
                "D_PROTO_LEN",
                &extra.span,
                format!("tracemem( ) prototype mismatch: {} args passed, at most 3 expected", args.len()),
            ));
        }
        let addr = self.expr(&args[0])?;
        if !addr.ty.is_scalar() {
            let ty = addr.ty.name();
            return Err(incompatible_arg("D_TRACEMEM_ADDR", &args[0].span, "tracemem", 1, "pointer or integer", &ty));
        }
        // A size that is no integer mismatches the prototype (int).
        let size_ty = self.expr(&args[1])?.ty;
        if !size_ty.is_int() {
            return Err(incompatible_arg("D_PROTO_ARG", &args[1].span, "tracemem", 2, "int", &size_ty.name()));
        }
        let size = self.positive_constant(
            &args[1],
            "D_TRACEMEM_SIZE",
            "tracemem( ) argument #2 must be a non-zero positive integral constant expression",
        )?;
        let mut values = vec![addr];
        if let Some(dsize) = args.get(2) {
            let message = "tracemem ( ) dynamic size (argument #3) must be of scalar type";
            values.push(self.scalar_expr(dsize, "D_TRACEMEM_DYNSIZE", message)?);
        }
        Ok((RecordKind::Tracemem { size: size as usize }, ActionKind::Record(values)))
    }

    /// printm(size, addr), FreeBSD's: `size` (a constant) bytes of kernel
    /// memory at a pointer, printed as tracemem() prints them.
    pub(super) fn printm(&mut self, name_span: &Span, args: &[ast::Expr]) -> Result<(RecordKind, ActionKind)> {
        self.arity("printm", name_span, args, 2, 2)?;
        let size = self.positive_constant(
            &args[0],
            "D_PRINTM_SIZE",
            "printm( ) argument #1 must be a non-zero positive integral constant expression",
        )?;
        let addr = self.expr(&args[1])?;
        if !matches!(addr.ty, Type::Pointer(_)) {
            let ty = addr.ty.name();
            return Err(incompatible_arg("D_PRINTM_ADDR", &args[1].span, "printm", 2, "pointer", &ty));
        }
        Ok((RecordKind::Tracemem { size: size as usize }, ActionKind::Record(vec![addr])))
    }

    /// stack(), stack(n): the kernel stack, `n` frames or stackframes'.
    pub(super) fn stack(&mut self, name: &str, args: &[ast::Expr], span: &Span) -> Result<TExpr> {
        too_many_stack_args(name, args, 1, "D_STACK_PROTO")?;
        let frames = self.stack_depth(args.first(), self.opts.stackframes, "D_STACK_SIZE", "stack")?;
        self.program.stack_depths.insert(frames);
        Ok(TExpr { kind: TKind::StackId(frames), ty: Type::Stack, span: span.clone() })
    }

    /// func(), sym(), mod(), ufunc(), usym(), umod(), uaddr(): the address,
    /// typed to print as its symbol.
    pub(super) fn symbol(&mut self, name: &str, name_span: &Span, args: &[ast::Expr], span: &Span) -> Result<TExpr> {
        self.arity(name, name_span, args, 1, 1)?;
        let kind = SymbolKind::of_function(name).expect("a symbol function");
        let addr = self.expr(&args[0])?;
        if !addr.ty.is_scalar() {
            return Err(incompatible_arg("D_PROTO_ARG", &args[0].span, name, 1, "uintptr_t", &addr.ty.name()));
        }
        Ok(TExpr { kind: TKind::Cast(Box::new(addr)), ty: Type::Symbol(kind), span: span.clone() })
    }

    /// `ustack([nframes[, strsize]])`: the user stack, `nframes` frames or
    /// ustackframes'; strsize (for Java frames in DTrace) is accepted and
    /// unused.
    pub(super) fn ustack(&mut self, name: &str, args: &[ast::Expr], span: &Span) -> Result<TExpr> {
        too_many_stack_args(name, args, 2, "D_USTACK_PROTO")?;
        // dtrace-utils' prototype is ustack(uint32_t, ...): a frame count
        // that is no integer fails it before the constant checks
        // (stack/err.D_PROTO_ARG.ustack-frames); a string size is
        // D_USTACK_STRSIZE, as illumos' dt_action_ustack_args says it.
        if let Some(arg) = args.first() {
            let ty = self.expr(arg)?.ty;
            if !ty.is_int() {
                return Err(incompatible_arg("D_PROTO_ARG", &arg.span, name, 1, "uint32_t", &ty.name()));
            }
        }
        let default = if name == "jstack" { self.opts.jstackframes } else { self.opts.ustackframes };
        let frames = self.stack_depth(args.first(), default, "D_USTACK_FRAMES", name)?;
        if let Some(arg) = args.get(1) {
            if self.integer_constant(arg).is_none_or(|n| n < 0) {
                return Err(CompileError::new(
                    "D_USTACK_STRSIZE",
                    &arg.span,
                    "ustack( ) argument #2 must be a positive integer constant",
                ));
            }
        }
        self.program.ustack_depths.insert(frames);
        Ok(TExpr { kind: TKind::UStackId(frames), ty: Type::Stack, span: span.clone() })
    }

    /// The frames a stack()/ustack() takes: its constant first argument, or
    /// the option's default, at most maxframes and a stack map's depth.
    fn stack_depth(&mut self, arg: Option<&ast::Expr>, default: u32, tag: &'static str, name: &str) -> Result<u8> {
        let frames = match arg {
            None => default,
            Some(arg) => match self.integer_constant(arg) {
                Some(n) if n > 0 => u32::try_from(n).unwrap_or(u32::MAX),
                // stack()'s argument that is no integer constant at all is
                // worded as its size (dt_action_stack_args); a constant out
                // of range as ustack()'s.
                None if name == "stack" => {
                    return Err(CompileError::new(
                        tag,
                        &arg.span,
                        "stack( ) size must be a non-zero positive integral constant expression",
                    ))
                }
                _ => {
                    return Err(CompileError::new(
                        tag,
                        &arg.span,
                        format!("{name}( ) argument #1 must be a non-zero positive integer constant"),
                    ))
                }
            },
        };
        Ok(frames.min(self.opts.maxframes).min(u32::from(crate::sema::ir::ustack_value::MAX_FRAMES)) as u8)
    }

    pub(super) fn arity(&self, name: &str, span: &Span, args: &[ast::Expr], min: usize, max: usize) -> Result<()> {
        if args.len() < min || args.len() > max {
            let expected = if min == max {
                format!("{min}")
            } else if args.len() < min {
                format!("at least {min}")
            } else {
                format!("at most {max}")
            };
            return Err(CompileError::new(
                "D_PROTO_LEN",
                span,
                format!(
                    "{name}( ) prototype mismatch: {} arg{} passed, {expected} expected",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn subroutine(
        &mut self,
        name: &str,
        name_span: &Span,
        args: &[ast::Expr],
        span: &Span,
    ) -> Result<TExpr> {
        match name {
            "stack" => self.stack(name, args, span),
            "ustack" | "jstack" => self.ustack(name, args, span),
            _ if SymbolKind::of_function(name).is_some() => self.symbol(name, name_span, args, span),
            "progenyof" => {
                self.arity(name, name_span, args, 1, 1)?;
                let pid = self.expr(&args[0])?;
                if !pid.ty.is_int() {
                    return Err(incompatible_arg("D_PROTO_ARG", &args[0].span, name, 1, "pid_t", &pid.ty.name()));
                }
                let task = self.kernel_record("task_struct", false, span)?;
                let offset = |k: &mut KernelBtf, m: &str| -> Result<usize> {
                    match k.member(&task, m) {
                        Ok(Some(r)) => Ok(r.offset),
                        _ => Err(CompileError::new("D_TYPE_ERR", span, format!("the kernel's task_struct has no {m}"))),
                    }
                };
                let parent_offset = offset(&mut self.kernel_btf, "real_parent")?;
                let tgid_offset = offset(&mut self.kernel_btf, "tgid")?;
                Ok(TExpr {
                    kind: TKind::Progenyof { pid: Box::new(pid), parent_offset, tgid_offset },
                    ty: Type::INT,
                    span: span.clone(),
                })
            }
            // d_path(&f->f_path), and the D library's mount point of a path.
            "d_path" | "__dtrace_mountpoint" => {
                self.arity(name, name_span, args, 1, 1)?;
                let path = self.expr(&args[0])?;
                let is_path =
                    matches!(&path.ty, Type::Pointer(to) if matches!(&**to, Type::Struct(r) if r.name == "path"));
                if !is_path && !is_null_constant(&path) {
                    return Err(incompatible_arg(
                        "D_PROTO_ARG",
                        &args[0].span,
                        name,
                        1,
                        "struct path *",
                        &path.ty.name(),
                    ));
                }
                let offsets = Box::new(self.d_path_offsets(span)?);
                // What a file outside any tree (a pipe, a socket) is named.
                self.intern(b"<unknown>");
                Ok(TExpr {
                    kind: TKind::DPath { path: Box::new(path), offsets, mount_point: name == "__dtrace_mountpoint" },
                    ty: Type::String,
                    span: span.clone(),
                })
            }
            "copyinstr" => {
                self.arity(name, name_span, args, 1, 2)?;
                let addr = self.expr(&args[0])?;
                if !addr.ty.is_int() {
                    return Err(incompatible_arg("D_PROTO_ARG", &args[0].span, name, 1, "uintptr_t", &addr.ty.name()));
                }
                let limit = match args.get(1) {
                    Some(limit) => {
                        let limit = self.expr(limit)?;
                        if !limit.ty.is_int() {
                            let ty = limit.ty.name();
                            return Err(incompatible_arg("D_PROTO_ARG", &args[1].span, name, 2, "size_t", &ty));
                        }
                        // Its buffer is scratch memory, as copyin()'s.
                        if let Some(size) = folded(&limit).filter(|n| *n as usize > self.opts.scratchsize) {
                            return Err(CompileError::new(
                                "D_ALLOCA_SIZE",
                                &args[1].span,
                                format!("copyinstr( ) size {size} larger than scratchsize {}", self.opts.scratchsize),
                            ));
                        }
                        Some(Box::new(limit))
                    }
                    None => None,
                };
                Ok(TExpr { kind: TKind::CopyInStr(Box::new(addr), limit), ty: Type::String, span: span.clone() })
            }
            // An action's value is void, as its prototype says: what uses
            // the value reports the error, as in DTrace (D_OP_VOID, ...).
            // Its arguments are counted first, as DTrace cooks the call
            // against the action's prototype before its value is used.
            _ if is_action(name) => {
                if let Some((min, max)) = action_arity(name) {
                    self.arity(name, name_span, args, min, max)?;
                }
                Ok(TExpr { kind: TKind::Int(0), ty: Type::Void, span: span.clone() })
            }
            _ if is_aggregating_function(name) => Err(CompileError::new(
                "D_CG_EXPR",
                name_span,
                format!(
                    "aggregating function {name}( ) may not be called from a D expression (D program context required)"
                ),
            )),
            _ => match subroutine_signature(name) {
                Some(signature) => self.call_subroutine(name, name_span, args, signature, span),
                // The D library's subroutines (d-library/subr.d).
                None if let Some(params) = self.library_subroutine_params(name) => {
                    self.arity(name, name_span, args, params, params)?;
                    self.inline_call(name, args, span)
                }
                None => Err(CompileError::new("D_FUNC_UNDEF", name_span, format!("undefined function name: {name}"))),
            },
        }
    }

    /// The members d_path's walk reads, in the running kernel's structs.
    fn d_path_offsets(&mut self, span: &Span) -> Result<DPathOffsets> {
        let mut offset = |record: &str, path: &[&str]| -> Result<usize> {
            let missing = || {
                CompileError::new("D_TYPE_ERR", span, format!("the kernel's struct {record} has no {}", path.join(".")))
            };
            let mut r = self.kernel_record(record, false, span)?;
            let mut at = 0;
            for (i, m) in path.iter().enumerate() {
                let found = self.kernel_btf.member(&r, m).ok().flatten().ok_or_else(missing)?;
                at += found.offset;
                if i + 1 < path.len() {
                    match found.kind {
                        crate::sema::kernel_btf::MemberKind::Value(Type::Struct(inner)) => r = inner,
                        _ => return Err(missing()),
                    }
                }
            }
            Ok(at)
        };
        Ok(DPathOffsets {
            path_mnt: offset("path", &["mnt"])?,
            path_dentry: offset("path", &["dentry"])?,
            vfsmount_root: offset("vfsmount", &["mnt_root"])?,
            mount_mnt: offset("mount", &["mnt"])?,
            mount_parent: offset("mount", &["mnt_parent"])?,
            mount_mountpoint: offset("mount", &["mnt_mountpoint"])?,
            dentry_parent: offset("dentry", &["d_parent"])?,
            dentry_name_len: offset("dentry", &["d_name", "len"])?,
            dentry_name: offset("dentry", &["d_name", "name"])?,
        })
    }

    /// A call of a subroutine with a signature in [`subroutine_signature`].
    pub(super) fn call_subroutine(
        &mut self,
        name: &str,
        name_span: &Span,
        args: &[ast::Expr],
        (subr, params, result): (Subr, &'static [&'static str], Type),
        span: &Span,
    ) -> Result<TExpr> {
        let required = params.iter().filter(|p| !p.ends_with('?')).count();
        self.arity(name, name_span, args, required, params.len())?;
        let mut values = Vec::new();
        for (i, (a, param)) in args.iter().zip(params).enumerate() {
            let e = self.expr(a)?;
            // A char array passed for a pointer is its address, as in C.
            let e = if param.ends_with('*') { char_array(e) } else { e };
            let param = param.trim_end_matches('?');
            let want_string = param.starts_with("string");
            // A `char *` or char array passed for a string (`const char *`
            // in DTrace's prototypes) is the string at that address.
            let e = match &e.ty {
                Type::Pointer(to) | Type::Array(to, _) if want_string && matches!(**to, Type::Int { size: 1, .. }) => {
                    let len = match e.ty {
                        Type::Array(_, len) => len.min(self.opts.strsize),
                        _ => self.opts.strsize,
                    };
                    let span = e.span.clone();
                    TExpr { kind: TKind::LoadStr(Box::new(e), len), ty: Type::String, span }
                }
                _ => e,
            };
            // The memory bcopy() and copyinto() write must be alloca()'d:
            // a pointer, never an integer or a string (dtrace-utils'
            // copyinto/err.D_PROTO_ARG.non_ptr_arg3, bcopy/err.bcopy-into-string).
            let destination = matches!((subr, i), (Subr::Bcopy, 1) | (Subr::Copyinto, 2));
            let ok = match param {
                _ if destination => matches!(e.ty, Type::Pointer(_)),
                "string" => e.ty == Type::String,
                // strtok(NULL, delim) goes on from the previous call's position.
                "string or NULL" => e.ty == Type::String || is_null_constant(&e),
                // A string is its address, as DTrace's dt_node_is_argcompat
                // takes strings for pointers (`bcopy(probename, p, 5)`).
                _ if param.ends_with('*') => e.ty.is_scalar() || matches!(e.ty, Type::Array(..) | Type::String),
                _ => e.ty.is_int(),
            };
            if !ok {
                let prototype = if want_string { "const char *" } else { param };
                return Err(incompatible_arg("D_PROTO_ARG", &a.span, name, i + 1, prototype, &e.ty.name()));
            }
            values.push(e);
        }
        if matches!(subr, Subr::Basename | Subr::Dirname) {
            // Their result for a name without a directory part.
            self.intern(b".");
        }
        if subr == Subr::Strtok {
            self.program.uses_strtok = true;
        }
        if subr == Subr::Json {
            self.program.uses_json = true;
        }
        if subr == Subr::PsargsOf {
            self.program.uses_psargs_table = true;
        }
        if let Subr::Copyin { .. } = subr {
            // Its buffer is scratch memory, as alloca()'s.
            if let Some(size) = folded(&values[1]).filter(|n| *n as usize > self.opts.scratchsize) {
                return Err(CompileError::new(
                    "D_ALLOCA_SIZE",
                    &args[1].span,
                    format!("copyin( ) size {size} larger than scratchsize {}", self.opts.scratchsize),
                ));
            }
        }
        let subr = match subr {
            Subr::Alloca { .. } => self.alloca(&values[0], &args[0].span)?,
            Subr::Copyin { .. } => self.copyin_buffer(&values[1]),
            other => other,
        };
        Ok(TExpr { kind: TKind::Subr(subr, values), ty: result, span: span.clone() })
    }
}

/// Actions that are values too: stack(), ustack() and the symbol
/// functions record what they name as a statement, and give it as a value.
pub(super) fn is_value_action(name: &str) -> bool {
    matches!(name, "stack" | "ustack" | "jstack") || SymbolKind::of_function(name).is_some()
}

/// Whether `name` is an action (a statement, not a value).
pub(super) fn is_action(name: &str) -> bool {
    matches!(
        name,
        "trace"
            | "printf"
            | "exit"
            | "printa"
            | "trunc"
            | "clear"
            | "normalize"
            | "denormalize"
            | "setopt"
            | "tracemem"
            | "printm"
            | "speculate"
            | "commit"
            | "discard"
            | "system"
            | "freopen"
            | "ftruncate"
            | "raise"
            | "stop"
            | "copyout"
            | "copyoutstr"
            | "chill"
            | "panic"
            | "breakpoint"
            | "return"
            | "print"
            | "stack"
            | "ustack"
            | "jstack"
            | "func"
            | "sym"
            | "mod"
            | "ufunc"
            | "usym"
            | "umod"
            | "uaddr"
    )
}

/// dt_action_stack and dt_action_ustack count their own arguments.
fn too_many_stack_args(name: &str, args: &[ast::Expr], max: usize, tag: &'static str) -> Result<()> {
    match args.get(max) {
        Some(extra) => {
            Err(CompileError::new(tag, &extra.span, format!("{name}( ) prototype mismatch: too many arguments")))
        }
        None => Ok(()),
    }
}

/// How many arguments an action takes (its prototype's count).
fn action_arity(name: &str) -> Option<(usize, usize)> {
    Some(match name {
        "trace" | "print" | "exit" | "clear" | "denormalize" | "speculate" | "commit" | "discard" | "raise"
        | "chill" | "return" => (1, 1),
        "printf" | "printa" | "system" | "freopen" => (1, usize::MAX),
        "ftruncate" | "stop" | "panic" | "breakpoint" => (0, 0),
        "trunc" | "setopt" => (1, 2),
        "normalize" | "printm" => (2, 2),
        "tracemem" => (2, 3),
        "copyout" | "copyoutstr" => (3, 3),
        _ => return None,
    })
}

/// NULL or a literal 0, where a subroutine takes a pointer.
pub(super) fn is_null_constant(e: &TExpr) -> bool {
    matches!(e.kind, TKind::Int(0)) && e.ty.is_scalar()
}

/// A subroutine's kind, parameters (`?` marks an optional one; "string or
/// NULL" also takes NULL or 0) and result type.
pub(super) fn subroutine_signature(name: &str) -> Option<(Subr, &'static [&'static str], Type)> {
    let size_t = Type::Int { size: 8, signed: false, name: "size_t" };
    let u16 = Type::Int { size: 2, signed: false, name: "uint16_t" };
    let u32 = Type::Int { size: 4, signed: false, name: "uint32_t" };
    Some(match name {
        "strlen" => (Subr::Strlen, &["string"], size_t),
        "strjoin" => (Subr::Strjoin, &["string", "string"], Type::String),
        "substr" => (Subr::Substr, &["string", "int", "int?"], Type::String),
        "toupper" => (Subr::Toupper, &["string"], Type::String),
        "tolower" => (Subr::Tolower, &["string"], Type::String),
        "basename" => (Subr::Basename, &["string"], Type::String),
        "dirname" => (Subr::Dirname, &["string"], Type::String),
        "strchr" => (Subr::Strchr, &["string", "char"], Type::String),
        "strrchr" => (Subr::Strrchr, &["string", "char"], Type::String),
        "strstr" => (Subr::Strstr, &["string", "string"], Type::String),
        "index" => (Subr::Index, &["string", "string", "int?"], Type::INT),
        "rindex" => (Subr::Rindex, &["string", "string", "int?"], Type::INT),
        "strtok" => (Subr::Strtok, &["string or NULL", "string"], Type::String),
        "cleanpath" => (Subr::Cleanpath, &["string"], Type::String),
        "lltostr" => (Subr::Lltostr, &["int64_t", "int?"], Type::String),
        "strtoll" => (Subr::Strtoll, &["string", "int?"], Type::INT64),
        "json" => (Subr::Json, &["string", "string"], Type::String),
        "htons" | "ntohs" => (Subr::ByteSwap(16), &["uint16_t"], u16),
        "htonl" | "ntohl" => (Subr::ByteSwap(32), &["uint32_t"], u32),
        "htonll" | "ntohll" => (Subr::ByteSwap(64), &["uint64_t"], Type::UINT64),
        "rand" => (Subr::Rand, &[], Type::INT),
        "getmajor" => (Subr::Getmajor, &["dev_t"], Type::Int { size: 4, signed: false, name: "major_t" }),
        "inet_ntoa" => (Subr::InetNtoa, &["ipaddr_t *"], Type::String),
        "inet_ntoa6" => (Subr::InetNtoa6, &["in6_addr_t *"], Type::String),
        "inet_ntop" => (Subr::InetNtop, &["int", "void *"], Type::String),
        "link_ntop" => (Subr::LinkNtop, &["int", "void *"], Type::String),
        "copyin" => {
            (Subr::Copyin { offset: None, limit: 0 }, &["uintptr_t", "size_t"], Type::Pointer(Box::new(Type::Void)))
        }
        "__dtrace_psargs" => (Subr::Psargs, &["uintptr_t", "uintptr_t"], Type::String),
        "__dtrace_psargs_of" => (Subr::PsargsOf, &["pid_t", "string"], Type::String),
        // The offset and size of alloca's memory are filled in by `Checker::alloca`.
        "alloca" => (Subr::Alloca { offset: 0, size: 0 }, &["size_t"], Type::Pointer(Box::new(Type::Void))),
        "bcopy" => (Subr::Bcopy, &["void *", "void *", "size_t"], Type::Void),
        "copyinto" => (Subr::Copyinto, &["uintptr_t", "size_t", "void *"], Type::Void),
        "speculation" => (Subr::Speculation, &[], Type::INT),
        "getminor" => (Subr::Getminor, &["dev_t"], Type::Int { size: 4, signed: false, name: "minor_t" }),
        _ => return None,
    })
}

/// DTrace's message for an argument whose type the function does not take.
pub(super) fn incompatible_arg(
    tag: &'static str,
    span: &Span,
    func: &str,
    position: usize,
    prototype: &str,
    argument: &str,
) -> CompileError {
    CompileError::new(
        tag,
        span,
        format!("{func}( ) argument #{position} is incompatible with prototype:\n\tprototype: {prototype}\n\t argument: {argument}"),
    )
}

/// What a printf conversion sees of a D type.
pub(super) fn arg_class(ty: &Type) -> ArgClass {
    match ty {
        Type::String => ArgClass::String,
        Type::Int { name: "float" | "double" | "long double", .. } => ArgClass::Float,
        Type::Int { size, signed, .. } => ArgClass::Integer { size: *size, signed: *signed },
        Type::Pointer(_) | Type::Symbol(_) => ArgClass::Pointer,
        Type::Void | Type::Struct(_) | Type::Array(..) | Type::Stack => ArgClass::Other,
    }
}

/// Checks a format's conversions against its values; `dynamic(i)` names the
/// kind of value `i` where it has DTrace's dynamic type (an aggregation),
/// as dt_node_type_name does.
fn check_printf_args(
    action: &str,
    format: &printf::Format,
    values: &[TExpr],
    dynamic: &dyn Fn(usize) -> Option<&'static str>,
    span: &Span,
) -> Result<()> {
    // freopen("") restores the original output.
    if format.is_empty() && action != "freopen" {
        return Err(CompileError::new("D_PRINTF_FMT_EMPTY", span, printf::Format::empty_message(action)));
    }
    let mut next = 0;
    for conv in format.conversions() {
        if conv.takes_aggregation_value() {
            return Err(CompileError::new(
                "D_PRINTF_AGG_CONV",
                span,
                printf::Conversion::aggregation_only_message(action),
            ));
        }
        let stars = conv.star_args();
        for k in 0..conv.args_consumed() {
            // `*` width/precision arguments come first and must be integers.
            let is_star = k < stars;
            let precision = is_star && !(k == 0 && matches!(conv.width, printf::Count::FromArg));
            // dt_printf_validate tags the `*` arguments' errors D_PRINTF_DYN_*.
            let Some(arg) = values.get(next) else {
                return Err(if is_star {
                    CompileError::new("D_PRINTF_DYN_PROTO", span, conv.missing_star_message(action, precision))
                } else {
                    CompileError::new("D_PRINTF_ARG_PROTO", span, conv.missing_value_message(action))
                });
            };
            let class = arg_class(&arg.ty);
            if is_star && !printf::Conversion::star_accepts(&class) {
                return Err(CompileError::new(
                    "D_PRINTF_DYN_TYPE",
                    &arg.span,
                    conv.incompatible_star_message(action, next + 2, precision, &arg.ty.name()),
                ));
            }
            if !is_star && !conv.accepts(&class) {
                return Err(CompileError::new(
                    "D_PRINTF_ARG_TYPE",
                    &arg.span,
                    conv.incompatible_message(
                        action,
                        Some(next + 2),
                        &dynamic(next).map_or_else(|| arg.ty.name(), str::to_string),
                    ),
                ));
            }
            next += 1;
        }
    }
    if next < values.len() {
        return Err(CompileError::new(
            "D_PRINTF_ARG_EXTRA",
            &values[next].span,
            printf::Format::extra_args_message(action, next),
        ));
    }
    Ok(())
}
