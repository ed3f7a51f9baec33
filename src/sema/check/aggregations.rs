//! Aggregations: `@name[keys] = func(args)` and its parameter rules
//! (quantize(), lquantize(), llquantize() and the others, the same function
//! at every use), the key columns of aggregations and associative arrays,
//! printa() with its format, and the aggregation and scalar arguments that
//! trunc(), normalize(), clear() and denormalize() take.

use super::actions::{arg_class, incompatible_arg};
use super::*;
use crate::defs::printf_format as printf;
use crate::syntax::ast::{BinOp, ExprKind};

impl Checker<'_> {
    /// printa([format,] @a, ...).
    pub(super) fn printa(
        &mut self,
        name_span: &Span,
        args: &[ast::Expr],
        span: &Span,
    ) -> Result<(RecordKind, ActionKind)> {
        let (format, aggs) = match args.first().map(|a| &a.kind) {
            // Its prototype takes at least one argument (printa(@...)).
            None => {
                return Err(CompileError::new(
                    "D_PROTO_LEN",
                    name_span,
                    "printa( ) prototype mismatch: 0 args passed, at least 1 expected",
                ))
            }
            Some(ExprKind::Str(fmt)) => {
                let format = printf::parse_format(fmt)
                    .map_err(|e| CompileError::new("D_SYNTAX", &args[0].span, e.to_string()))?;
                (Some(format), &args[1..])
            }
            Some(_) => (None, args),
        };
        if aggs.is_empty() {
            return Err(CompileError::new(
                "D_PRINTA_PROTO",
                name_span,
                format!("printa( ) prototype mismatch: {} args passed, 2 expected", args.len()),
            ));
        }
        // DTrace numbers every bad aggregation argument as the first one that may be one.
        let position = if format.is_some() { 2 } else { 1 };
        let mut indices = Vec::new();
        for a in aggs {
            indices.push(self.aggregation_arg("printa", "D_PRINTA", a, position)?);
        }
        let first = &self.program.aggregations[indices[0]];
        for &agg in &indices[1..] {
            let other = &self.program.aggregations[agg];
            if other.keys.len() != first.keys.len() {
                let keys = |n: usize| format!("{n} key{}", if n == 1 { "" } else { "s" });
                return Err(CompileError::new(
                    "D_PRINTA_AGGKEY",
                    span,
                    format!(
                        "printa( ): @{} and @{} do not have matching key signatures: @{} has {}, @{} has {}",
                        first.name,
                        other.name,
                        first.name,
                        keys(first.keys.len()),
                        other.name,
                        keys(other.keys.len())
                    ),
                ));
            }
            for (k, (a, b)) in first.keys.iter().zip(&other.keys).enumerate() {
                if a.ty.is_int() != b.ty.is_int() {
                    return Err(CompileError::new(
                        "D_PRINTA_AGGPROTO",
                        span,
                        format!(
                            "printa( ): @{}[ ] key #{} is incompatible with @{}:\n{:>9} key #{}: {}\n{:>9} key #{}: {}",
                            other.name,
                            k + 1,
                            first.name,
                            format!("@{}", first.name),
                            k + 1,
                            a.ty.name(),
                            format!("@{}", other.name),
                            k + 1,
                            b.ty.name()
                        ),
                    ));
                }
            }
        }
        let keys = first.keys.clone();
        let format = match format {
            Some(format) => {
                check_printa_format(&format, &keys, span)?;
                self.program.formats.push(format);
                Some(self.program.formats.len() - 1)
            }
            None => None,
        };
        Ok((RecordKind::Printa { format, aggs: indices }, ActionKind::Record(Vec::new())))
    }

    /// An argument that must name an aggregation declared earlier; `tag` is
    /// the action's error-tag prefix (D_PRINTA, D_TRUNC, ...).
    pub(super) fn aggregation_arg(&mut self, func: &str, tag: &str, arg: &ast::Expr, position: usize) -> Result<usize> {
        let tag_of = |suffix: &str| -> &'static str {
            match (tag, suffix) {
                ("D_PRINTA", "AGGBAD") => "D_PRINTA_AGGBAD",
                ("D_PRINTA", _) => "D_PRINTA_AGGARG",
                ("D_TRUNC", "AGGBAD") => "D_TRUNC_AGGBAD",
                ("D_TRUNC", _) => "D_TRUNC_AGGARG",
                ("D_CLEAR", "AGGBAD") => "D_CLEAR_AGGBAD",
                ("D_CLEAR", _) => "D_CLEAR_AGGARG",
                (_, "AGGBAD") => "D_NORMALIZE_AGGBAD",
                _ => "D_NORMALIZE_AGGARG",
            }
        };
        match &arg.kind {
            ExprKind::Aggregation(name) => self.aggregation_index(name).ok_or_else(|| {
                CompileError::new(tag_of("AGGBAD"), &arg.span, format!("undefined aggregation: @{name}"))
            }),
            _ => {
                let ty = self.expr(arg).map(|e| e.ty.name()).unwrap_or_else(|_| "void".into());
                Err(incompatible_arg(tag_of("AGGARG"), &arg.span, func, position, "aggregation", &ty))
            }
        }
    }

    /// An integer argument #2 of trunc() or normalize().
    pub(super) fn scalar_arg(&mut self, func: &str, tag: &'static str, arg: &ast::Expr) -> Result<TExpr> {
        // An aggregation is an argument DTrace cooks, not a scalar.
        let is_aggregation = matches!(&arg.kind, ExprKind::Aggregation(n) if self.aggregation_index(n).is_some());
        let e = if is_aggregation { None } else { Some(self.expr(arg)?) };
        let Some(e) = e.filter(|e| e.ty.is_int()) else {
            return Err(CompileError::new(tag, &arg.span, format!("{func}( ) argument #2 must be of scalar type")));
        };
        Ok(e)
    }

    pub(super) fn aggregation_index(&self, name: &str) -> Option<usize> {
        self.program.aggregations.iter().position(|a| a.name == name)
    }

    /// `@name[keys] = func(args)`.
    pub(super) fn aggregate(
        &mut self,
        op: Option<BinOp>,
        name: &str,
        keys: &[ast::Expr],
        value: &ast::Expr,
        span: &Span,
    ) -> Result<TStmt> {
        let call = match (&value.kind, op) {
            (ExprKind::Call { name, name_span, args }, None) if is_aggregating_function(name) => {
                Some((name.as_str(), name_span, args))
            }
            _ => None,
        };
        let Some((func_name, func_span, args)) = call else {
            // An unknown function is that first (dt_node_func).
            if let ExprKind::Call { name, name_span, .. } = &value.kind {
                if !super::actions::is_action(name)
                    && super::actions::subroutine_signature(name).is_none()
                    && self.library_subroutine_params(name).is_none()
                    && !self.inline_has_params(name)
                {
                    return Err(CompileError::new(
                        "D_FUNC_UNDEF",
                        name_span,
                        format!("undefined function name: {name}"),
                    ));
                }
            }
            return Err(CompileError::new(
                "D_AGG_FUNC",
                span,
                format!("@{name} must be assigned the result of an aggregating function"),
            ));
        };
        let (func, value, incr) = self.aggregating_call(func_name, func_span, args)?;
        // An aggregation is no key (dt_cook_op2 cooks the keys first).
        if let Some(k) = keys.iter().find(|k| matches!(k.kind, ExprKind::Aggregation(_))) {
            return Err(CompileError::new("D_KEY_TYPE", &k.span, "aggregation key may not be of type aggregation"));
        }
        // Oracle's code generator passes the keys in its tuple registers,
        // which the tregs option sizes (illumos' records them one by one:
        // without tregs, any number of keys).
        if self.opts.tregs.is_some_and(|most| keys.len() > most) {
            return Err(CompileError::nowhere("D_NOREG", "Insufficient tuple registers to generate code"));
        }
        let keys: Vec<TExpr> = keys.iter().map(|k| self.expr_any(k)).collect::<Result<_>>()?;
        for k in &keys {
            if let TKind::Xlate { .. } = k.kind {
                return Err(CompileError::new(
                    "D_KEY_TYPE",
                    &k.span,
                    format!("aggregation key may not be of dynamic type {}", k.ty.name()),
                ));
            }
            if k.ty == Type::Void {
                return Err(CompileError::new("D_KEY_TYPE", &k.span, "aggregation key may not be of type void"));
            }
            if let Type::Struct(_) | Type::Array(..) = k.ty {
                return Err(CompileError::new(
                    "D_UNSUPPORTED",
                    &k.span,
                    format!("aggregation keys of type {} are not supported yet", k.ty.name()),
                ));
            }
        }
        let columns: Vec<KeyColumn> = keys.iter().map(|k| self.key_column(k)).collect();
        let agg = match self.aggregation_index(name) {
            Some(i) => {
                let existing = &mut self.program.aggregations[i];
                if existing.func != func {
                    let previous_line = crate::syntax::line_of(&self.text, self.agg_first_uses[i]);
                    check_same_function(name, &existing.func, &func, previous_line, span)?;
                }
                if existing.keys.len() != columns.len() {
                    return Err(CompileError::new(
                        "D_PROTO_LEN",
                        span,
                        format!(
                            "@{name}[ ] prototype mismatch: {} arg{} passed, {} expected",
                            columns.len(),
                            if columns.len() == 1 { "" } else { "s" },
                            existing.keys.len()
                        ),
                    ));
                }
                for (k, (have, new)) in existing.keys.iter().zip(&columns).enumerate() {
                    if have.ty.is_int() != new.ty.is_int() {
                        return Err(CompileError::new(
                            "D_PROTO_ARG",
                            &keys[k].span,
                            format!(
                                "@{name}[ ] argument #{} is incompatible with prototype:\n\tprototype: {}\n\t argument: {}",
                                k + 1,
                                have.ty.name(),
                                new.ty.name()
                            ),
                        ));
                    }
                }
                // A string column is as wide as its widest update.
                for (have, new) in existing.keys.iter_mut().zip(&columns) {
                    have.bytes = have.bytes.max(new.bytes);
                }
                i
            }
            None => {
                self.program.aggregations.push(Aggregation { name: name.to_string(), func, keys: columns });
                self.agg_first_uses.push(span.start);
                self.program.aggregations.len() - 1
            }
        };
        Ok(TStmt::Aggregate { agg, keys, value, incr })
    }

    /// Checks an aggregating function's arguments; returns the function with
    /// its constant parameters, the value and the increment.
    pub(super) fn aggregating_call(
        &mut self,
        name: &str,
        span: &Span,
        args: &[ast::Expr],
    ) -> Result<(AggFunc, Option<TExpr>, Option<TExpr>)> {
        // DTrace's prototypes: count(void), sum..stddev(@), quantize(@, ...),
        // lquantize(@, int32_t, int32_t, ...), llquantize(@, int32_t x4, ...).
        let (min, max) = match name {
            "count" => (0, 0),
            "quantize" => (1, 2),
            "lquantize" => (3, 5),
            "llquantize" => (5, 6),
            _ => (1, 1),
        };
        self.arity(name, span, args, min, max)?;
        // DTrace cooks the call against its prototype (int32_t parameters)
        // before it checks the aggregated value.
        let int32_parameters = match name {
            "lquantize" => 2,
            "llquantize" => 4,
            _ => 0,
        };
        for (i, a) in args.iter().enumerate().skip(1).take(int32_parameters) {
            let e = self.expr(a)?;
            if !e.ty.is_int() {
                return Err(super::actions::incompatible_arg(
                    "D_PROTO_ARG",
                    &a.span,
                    name,
                    i + 1,
                    "int32_t",
                    &e.ty.name(),
                ));
            }
        }
        let value = match args.first() {
            Some(a) => {
                let e = self.expr(a)?;
                if !e.ty.is_int() {
                    return Err(CompileError::new(
                        "D_AGG_SCALAR",
                        &a.span,
                        format!("{name}( ) argument #1 must be of scalar type"),
                    ));
                }
                Some(e)
            }
            None => None,
        };
        // Parameters are numbered from the one after the value, as DTrace does.
        // Only lquantize's and llquantize's parameters must be constants;
        // quantize's argument #1 is an increment, checked as an expression.
        let parameters = match name {
            "lquantize" => 3,
            "llquantize" => 4,
            _ => 0,
        };
        let constants: Vec<Option<i64>> =
            args.iter().skip(1).take(parameters).map(|a| self.integer_constant(a)).collect();
        let constant = |i: usize, tag: &'static str, what: &str| -> Result<i64> {
            constants[i - 1]
                .ok_or_else(|| CompileError::new(tag, &args[i].span, format!("{name}( ) argument #{i} must be {what}")))
        };
        let positive_const = |i: usize, tag: &'static str, message: &str| -> Result<i64> {
            constants[i - 1].filter(|n| *n > 0).ok_or_else(|| CompileError::new(tag, &args[i].span, message))
        };
        let (func, incr_at) = match name {
            "count" => (AggFunc::Count, usize::MAX),
            "sum" => (AggFunc::Sum, usize::MAX),
            "min" => (AggFunc::Min, usize::MAX),
            "max" => (AggFunc::Max, usize::MAX),
            "avg" => (AggFunc::Avg, usize::MAX),
            "stddev" => (AggFunc::Stddev, usize::MAX),
            "quantize" => (AggFunc::Quantize, 1),
            "lquantize" => {
                let base = constant(1, "D_LQUANT_BASETYPE", "an integer constant")?;
                let limit = constant(2, "D_LQUANT_LIMTYPE", "an integer constant")?;
                // dtrace-utils compares base and limit before it checks the step.
                if args.get(3).is_some() && limit <= base {
                    check_lquantize(base, limit, 1, &args[1].span)?;
                }
                let step = match args.get(3) {
                    Some(_) => positive_const(
                        3,
                        "D_LQUANT_STEPTYPE",
                        "lquantize( ) argument #3 must be a non-zero positive integer constant",
                    )?,
                    None => 1,
                };
                check_lquantize(base, limit, step, &args[1].span)?;
                (AggFunc::Lquantize { base, limit, step }, 4)
            }
            _ => {
                let factor = constant(1, "D_LLQUANT_FACTORTYPE", "an integer constant")?;
                let low = constant(2, "D_LLQUANT_LMAGTYPE", "an integer constant")?;
                let high = constant(3, "D_LLQUANT_HMAGTYPE", "an integer constant")?;
                let nsteps = positive_const(
                    4,
                    "D_LLQUANT_STEPTYPE",
                    "llquantize( ) argument #4 must be a non-zero positive integer constant",
                )?;
                check_llquantize(factor, low, high, nsteps, &args[1].span)?;
                let func = AggFunc::Llquantize {
                    factor: factor as u64,
                    low: low as u64,
                    high: high as u64,
                    nsteps: nsteps as u64,
                };
                (func, 5)
            }
        };
        let incr = match args.get(incr_at) {
            Some(a) => {
                let e = self.expr(a)?;
                if !e.ty.is_int() {
                    return Err(CompileError::new(
                        "D_PROTO_ARG",
                        &a.span,
                        format!("{name}( ) increment value (argument #{}) must be of scalar type", incr_at + 1),
                    ));
                }
                Some(e)
            }
            None => None,
        };
        Ok((func, value, incr))
    }

    /// A key's column in an aggregation or associative array: an execname
    /// key takes its 16 bytes, a char array its length and a NUL, other
    /// strings strsize, the rest a word. (Narrow columns hash faster, and
    /// Linux 5.10 refuses hash map keys over 512 bytes: two strsize strings
    /// are too many there.)
    pub(super) fn key_column(&self, k: &TExpr) -> KeyColumn {
        let string_bytes = var_bytes(&Type::String, self.opts.strsize);
        let bytes = match (&k.ty, &k.kind) {
            (Type::String, _) if is_execname(k) => COMM_KEY_BYTES,
            (Type::String, TKind::LoadStr(_, len)) => (len + 1).next_multiple_of(8).min(string_bytes),
            (Type::String, _) => string_bytes,
            (Type::Symbol(kind), _) => kind.recorded_bytes(),
            (Type::Struct(r), _) => r.size.next_multiple_of(8),
            _ => 8,
        };
        KeyColumn { ty: k.ty.clone(), bytes }
    }
}

/// Width of a string key column fed only by execname: the kernel's comm is 16 bytes.
pub(super) const COMM_KEY_BYTES: usize = 16;

pub(super) fn is_aggregating_function(name: &str) -> bool {
    matches!(name, "count" | "sum" | "min" | "max" | "avg" | "stddev" | "quantize" | "lquantize" | "llquantize")
}

/// `@name` or `@name[keys]` as an assignment target.
pub(super) fn aggregation_target(target: &ast::Expr) -> Option<(&str, &[ast::Expr])> {
    match &target.kind {
        ExprKind::Aggregation(name) => Some((name, &[])),
        ExprKind::Index(base, keys) => match &base.kind {
            ExprKind::Aggregation(name) => Some((name, keys)),
            _ => None,
        },
        _ => None,
    }
}

pub(super) fn is_execname(e: &TExpr) -> bool {
    matches!(e.kind, TKind::Builtin(Builtin::Execname))
}

pub(super) fn func_text(f: &AggFunc) -> &'static str {
    match f {
        AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::Avg => "avg",
        AggFunc::Stddev => "stddev",
        AggFunc::Quantize => "quantize",
        AggFunc::Lquantize { .. } => "lquantize",
        AggFunc::Llquantize { .. } => "llquantize",
    }
}

pub(super) fn check_lquantize(base: i64, limit: i64, step: i64, span: &Span) -> Result<()> {
    let err = |tag: &'static str, m: &str| Err(CompileError::new(tag, span, m.to_string()));
    if base < i32::MIN as i64 || base > i32::MAX as i64 {
        return err("D_LQUANT_BASEVAL", "lquantize( ) argument #1 must be a 32-bit quantity");
    }
    if limit < i32::MIN as i64 || limit > i32::MAX as i64 {
        return err("D_LQUANT_LIMVAL", "lquantize( ) argument #2 must be a 32-bit quantity");
    }
    if limit <= base {
        return err("D_LQUANT_MISMATCH", "lquantize( ) base (argument #1) must be less than limit (argument #2)");
    }
    if step > u16::MAX as i64 {
        return err("D_LQUANT_STEPVAL", "lquantize( ) argument #3 must be a 16-bit quantity");
    }
    let levels = (limit - base) / step;
    if levels == 0 {
        return err(
            "D_LQUANT_STEPLARGE",
            "lquantize( ) step (argument #3) too large: must have at least one quantization level",
        );
    }
    if levels > u16::MAX as i64 {
        return err(
            "D_LQUANT_STEPSMALL",
            "lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity",
        );
    }
    Ok(())
}

/// dtrace-utils' llquantize parameter rules.
pub(super) fn check_llquantize(factor: i64, low: i64, high: i64, nsteps: i64, span: &Span) -> Result<()> {
    let err = |tag: &'static str, m: &str| Err(CompileError::new(tag, span, m.to_string()));
    let u16_range = 0..=u16::MAX as i64;
    if !(2..=u16::MAX as i64).contains(&factor) {
        return err(
            "D_LLQUANT_FACTORVAL",
            "llquantize( ) argument #1 must be an unsigned 16-bit quantity greater than or equal to 2",
        );
    }
    if !u16_range.contains(&low) {
        return err("D_LLQUANT_LMAGVAL", "llquantize( ) argument #2 must be an unsigned 16-bit quantity");
    }
    if !u16_range.contains(&high) {
        return err("D_LLQUANT_HMAGVAL", "llquantize( ) argument #3 must be an unsigned 16-bit quantity");
    }
    if high < low {
        return err(
            "D_LLQUANT_HMAGVAL",
            "llquantize( ) argument #3 (high magnitude) must be at least argument #2 (low magnitude)",
        );
    }
    if (factor as u64).checked_pow(high as u32 + 1).is_none() {
        return err("D_LLQUANT_HMAGVAL", "llquantize( ) argument #3 (high magnitude) will cause overflow of 64 bits");
    }
    if !u16_range.contains(&nsteps) {
        return err("D_LLQUANT_STEPVAL", "llquantize( ) argument #4 must be an unsigned 16-bit quantity");
    }
    let (factor, nsteps) = (factor as u64, nsteps as u64);
    if nsteps < factor && factor % nsteps != 0 {
        return err(
            "D_LLQUANT_STEPVAL",
            "llquantize() argument #4 (steps) must evenly divide argument #1 (factor) when steps<factor",
        );
    }
    if nsteps > factor {
        if nsteps % factor != 0 {
            return err(
                "D_LLQUANT_STEPVAL",
                "llquantize() argument #4 (steps) must be a multiple of argument #1 (factor) when steps>factor",
            );
        }
        if low == 0 && (factor * factor) % nsteps != 0 {
            return err(
                "D_LLQUANT_STEPVAL",
                "llquantize() argument #4 (steps) must evenly divide the square of argument #1 (factor) when steps>factor and lmag==0",
            );
        }
        if low > 0 && factor.checked_pow(low as u32 + 1).is_some_and(|p| p % nsteps != 0) {
            return err(
                "D_LLQUANT_STEPVAL",
                "llquantize() argument #4 (steps) must evenly divide pow(argument #1 (factor), lmag (argument #2) + 1) when steps>factor and lmag>0",
            );
        }
    }
    Ok(())
}

/// A later `@name = f(...)` must use the function (and parameters) of the first.
pub(super) fn check_same_function(
    name: &str,
    previous: &AggFunc,
    current: &AggFunc,
    previous_line: usize,
    span: &Span,
) -> Result<()> {
    if previous == current {
        return Ok(());
    }
    let mismatch = |tag: &'static str, what: &str, expected: i64, found: i64| {
        Err(CompileError::new(
            tag,
            span,
            format!("{what} doesn't match previous declaration: expected {expected}, found {found}"),
        ))
    };
    match (previous, current) {
        (
            AggFunc::Lquantize { base: b0, limit: l0, step: s0 },
            AggFunc::Lquantize { base: b1, limit: l1, step: s1 },
        ) => {
            if b0 != b1 {
                return mismatch("D_LQUANT_MATCHBASE", "lquantize( ) base (argument #1)", *b0, *b1);
            }
            let top = |b: i64, l: i64, s: i64| b + (l - b) / s * s;
            if top(*b0, *l0, *s0) != top(*b1, *l1, *s1) {
                return mismatch("D_LQUANT_MATCHLIM", "lquantize( ) limit (argument #2)", *l0, *l1);
            }
            mismatch("D_LQUANT_MATCHSTEP", "lquantize( ) step (argument #3)", *s0, *s1)
        }
        (
            AggFunc::Llquantize { factor: f0, low: a0, high: h0, nsteps: n0 },
            AggFunc::Llquantize { factor: f1, low: a1, high: h1, nsteps: n1 },
        ) => {
            let pairs = [
                ("D_LLQUANT_MATCHFACTOR", "llquantize() factor (argument #1)", f0, f1),
                ("D_LLQUANT_MATCHLMAG", "llquantize() lmag (argument #2)", a0, a1),
                ("D_LLQUANT_MATCHHMAG", "llquantize() hmag (argument #3)", h0, h1),
                ("D_LLQUANT_MATCHSTEPS", "llquantize() steps (argument #4)", n0, n1),
            ];
            let (tag, what, e, f) = pairs.into_iter().find(|(_, _, e, f)| e != f).unwrap_or(pairs[3]);
            mismatch(tag, what, *e as i64, *f as i64)
        }
        _ => Err(CompileError::new(
            "D_AGG_REDEF",
            span,
            format!(
                "aggregation redefined: @{name}\n\t current: @{name} = {}( )\n\tprevious: @{name} = {}( ) : line {previous_line}",
                func_text(current),
                func_text(previous)
            ),
        )),
    }
}

/// printa() formats: conversions before the first `%@` take the keys in
/// order; `%@` conversions take the aggregation values.
pub(super) fn check_printa_format(format: &printf::Format, keys: &[KeyColumn], span: &Span) -> Result<()> {
    if format.is_empty() {
        return Err(CompileError::new("D_PRINTF_FMT_EMPTY", span, printf::Format::empty_message("printa")));
    }
    let mut next = 0;
    for conv in format.conversions() {
        if conv.takes_aggregation_value() {
            continue;
        }
        for _ in 0..conv.args_consumed() {
            let Some(key) = keys.get(next) else {
                return Err(CompileError::new("D_PRINTF_ARG_PROTO", span, conv.missing_value_message("printa")));
            };
            if !conv.accepts(&arg_class(&key.ty)) {
                return Err(CompileError::new(
                    "D_PRINTF_ARG_TYPE",
                    span,
                    conv.incompatible_message("printa", Some(next + 2), &key.ty.name()),
                ));
            }
            next += 1;
        }
    }
    Ok(())
}
