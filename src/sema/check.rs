//! The type checker: resolves names, matches probe descriptions, applies
//! D's typing rules and builds the typed program (`ir::Program`) with the
//! record layout of every clause.
//!
//! Must not know BPF: code generation reads only the typed program.

use std::collections::HashMap;

use super::ir::*;
use super::kernel_btf::{KernelBtf, KernelVariable, MemberKind};
use super::probes::{expand_macros, ProbeDesc};
use crate::defs::layout;
use crate::defs::printf_format::{self as printf, ArgClass};
use crate::diag::{CompileError, Result};
use crate::provider::Registry;
use crate::syntax::ast::{self, BinOp, ExprKind, Span, StmtKind, UnOp};

mod decls;
#[cfg(test)]
mod tests;
pub(crate) use decls::LIBRARY;

/// What the checker needs from the command line.
pub(crate) struct CheckOptions<'a> {
    /// `$0`, `$1`, ...: the script name and its arguments.
    pub macro_args: &'a [String],
    /// -Z: descriptions that match nothing are allowed.
    pub zero_matches_ok: bool,
    pub strsize: usize,
    /// Value of `$target` (-c/-p), if any.
    pub target_pid: Option<u32>,
}

/// Where an error was found, for DTrace's "in predicate:" / "in action list:" prefix.
pub(crate) const REGION_PREDICATE: &str = "in predicate: ";
pub(crate) const REGION_ACTIONS: &str = "in action list: ";

pub(crate) struct Checker<'a> {
    opts: CheckOptions<'a>,
    registry: &'a mut Registry,
    program: Program,
    var_index: HashMap<(Scope, String), usize>,
    actions_in_clause: usize,
    layouts: Vec<ActionLayout>,
    record_offset: usize,
    /// Set while checking, to prefix errors with DTrace's region.
    pub region: &'static str,
    /// Number of probes each description matched (for "matched N probes").
    pub matched: usize,
    /// The source being checked (for line numbers inside messages).
    text: String,
    /// Line of each aggregation's first use.
    agg_lines: Vec<usize>,
    /// The running kernel's types, read only when a script names one.
    kernel_btf: KernelBtf,
    /// Types, constants, inlines and translators declared in D.
    declared: decls::Declared,
    /// Translator inputs in scope while a translated member is checked.
    bindings: Vec<(String, TExpr)>,
    /// Bytes of alloca() memory the current clause has reserved.
    clause_alloca: usize,
    /// What the clause's earlier actions were, for the speculation rules.
    order: ActionOrder,
    /// The probes the clause being checked enables, and its first probe
    /// description as written (for `args[]` and its messages).
    clause_probes: Vec<u32>,
    clause_desc: String,
}

/// What a clause's actions so far were: DTrace allows speculate() only
/// before data-recording actions, commit() only without them, and neither
/// twice (illumos dt_stmt_append).
#[derive(Default)]
struct ActionOrder {
    speculated: bool,
    committed: bool,
    /// A data-recording action or aggregation outside any speculation.
    recorded: bool,
}

/// An action as the speculation rules class it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ActionClass {
    Spec(SpecOp),
    Aggregation,
    Exit,
    /// trace(), printf() and the other actions that record data.
    Data,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Scope {
    Global,
    Thread,
    Clause,
}

/// The largest struct or array print() records or a variable holds.
const MAX_COPY_BYTES: usize = 8192;

/// The most alloca() memory one clause may use.
const MAX_ALLOCA: usize = 4096;

impl<'a> Checker<'a> {
    pub(crate) fn new(opts: CheckOptions<'a>, registry: &'a mut Registry) -> Checker<'a> {
        let strsize = opts.strsize;
        Checker {
            opts,
            registry,
            // String constant 0 is the empty string, which generated code falls back on.
            program: Program { strsize, strings: vec![Vec::new()], ..Program::default() },
            var_index: HashMap::new(),
            actions_in_clause: 0,
            layouts: Vec::new(),
            record_offset: 0,
            region: "",
            matched: 0,
            text: String::new(),
            agg_lines: Vec::new(),
            kernel_btf: KernelBtf::default(),
            declared: decls::Declared::default(),
            bindings: Vec::new(),
            clause_alloca: 0,
            order: ActionOrder::default(),
            clause_probes: Vec::new(),
            clause_desc: String::new(),
        }
    }

    /// Checks the items of one parsed source; call once per -n/-s, in order.
    pub(crate) fn check_items(&mut self, ast: &ast::Program, text: &str) -> Result<()> {
        self.text = text.to_string();
        if ast.items.is_empty() {
            return Err(CompileError::nowhere("D_EMPTY", "empty D program translation unit"));
        }
        for item in &ast.items {
            match item {
                ast::Item::Clause(clause) => self.clause(clause)?,
                ast::Item::Pragma { .. } => {} // options are applied by the caller
                ast::Item::Decl(decl) => self.declaration(decl)?,
                // A script's inline is checked where it is declared (the D
                // library's, only where used: they name kernel types).
                ast::Item::Inline(def) => self.inline(def, true)?,
                ast::Item::Translator(def) => self.translator(def, false)?,
            }
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> Program {
        self.program
    }

    fn clause(&mut self, clause: &ast::Clause) -> Result<()> {
        let mut probes = Vec::new();
        for spec in &clause.probes {
            let target = self.opts.target_pid;
            let text = expand_macros(&spec.text, self.opts.macro_args, &|w| match w {
                "target" => target.map(|p| p.to_string()),
                "pid" => Some(std::process::id().to_string()),
                _ => None,
            })
            .map_err(|m| CompileError::new("D_PDESC_INVAL", &spec.span, m))?;
            let desc = ProbeDesc::parse(&text).map_err(|m| CompileError::new("D_PDESC_INVAL", &spec.span, m))?;
            let ids = self.registry.matching(&desc);
            if ids.is_empty() && !self.opts.zero_matches_ok {
                return Err(CompileError::new(
                    "D_PDESC_ZERO",
                    &spec.span,
                    format!("probe description {} does not match any probes", desc_text(&desc)),
                ));
            }
            for id in ids {
                if !probes.contains(&id) {
                    probes.push(id);
                }
            }
        }
        self.matched += probes.len();
        self.clause_alloca = 0;
        self.clause_probes = probes.clone();
        self.clause_desc = clause.probes.first().map(|s| s.text.clone()).unwrap_or_default();

        self.region = REGION_PREDICATE;
        let predicate = match &clause.predicate {
            Some(p) => Some(self.scalar_expr(p, "D_PRED_SCALAR", "predicate result must be of scalar type")?),
            None => None,
        };
        self.region = REGION_ACTIONS;
        self.actions_in_clause = 0;
        self.layouts.clear();
        self.record_offset = layout::HDR_SIZE;
        self.order = ActionOrder::default();
        let body = self.stmts(&clause.body)?;
        // An empty clause traces the probe firing, as DTrace's default action.
        let records = !self.layouts.is_empty() || clause.body.iter().all(|s| matches!(s.kind, StmtKind::Empty));
        self.region = "";
        let epid = self.program.clauses.len() as u32 + 1;
        self.program.clauses.push(Clause {
            epid,
            probes,
            predicate,
            body,
            actions: std::mem::take(&mut self.layouts),
            record_size: self.record_offset,
            records,
            speculates: self.order.speculated,
        });
        Ok(())
    }

    fn declaration(&mut self, decl: &ast::Decl) -> Result<()> {
        let scope = match decl.class {
            None | Some(ast::StorageClass::Static) => Scope::Global,
            Some(ast::StorageClass::SelfVar) => Scope::Thread,
            Some(ast::StorageClass::ThisVar) => Scope::Clause,
            Some(ast::StorageClass::Typedef) => {
                let base = self.type_spec(&decl.spec, &decl.span)?;
                return self.typedef(decl, base);
            }
            Some(_) => {
                return Err(CompileError::new("D_UNSUPPORTED", &decl.span, "this declaration is not supported yet"))
            }
        };
        let base = self.type_spec(&decl.spec, &decl.span)?;
        for d in &decl.declarators {
            let Some(name) = &d.name else { continue };
            let ty = self.declarator_type(base.clone(), &d.ops, &d.span)?;
            if let Type::Struct(_) = ty {
                copy_fits("a variable", &ty, self.opts.strsize, &d.span)?;
            }
            if !(ty.is_scalar() || ty == Type::String || matches!(ty, Type::Struct(_))) {
                return Err(CompileError::new(
                    "D_UNSUPPORTED",
                    &d.span,
                    format!("variables of type {} are not supported yet", ty.name()),
                ));
            }
            if self.var_index.contains_key(&(scope, name.clone())) {
                return Err(CompileError::new("D_DECL_IDRED", &d.span, format!("identifier redeclared: {name}")));
            }
            self.new_var(scope, name, ty);
        }
        Ok(())
    }

    fn type_spec(&mut self, spec: &ast::TypeSpec, span: &Span) -> Result<Type> {
        let ty = match spec {
            ast::TypeSpec::Builtin { words, .. } => {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                int_type_from_words(&words)
            }
            ast::TypeSpec::Named { name, .. } => match kernel_typedef(name) {
                Some(record) => return Ok(Type::Struct(self.kernel_record(record, false, span)?)),
                None => self.typedef_named(name),
            },
            ast::TypeSpec::Struct(record) => return self.record_type(record, false, span),
            ast::TypeSpec::Union(record) => return self.record_type(record, true, span),
            ast::TypeSpec::Enum(e) => return self.enum_type(e),
        };
        ty.ok_or_else(|| CompileError::new("D_UNSUPPORTED", span, "this type is not supported yet"))
    }

    /// A type name as in casts and sizeof: specifiers and an abstract declarator.
    fn type_name(&mut self, tn: &ast::TypeName) -> Result<Type> {
        let base = self.type_spec(&tn.spec, &tn.span)?;
        self.declarator_type(base, &tn.ops, &tn.span)
    }

    /// The index of a string constant, added if new.
    fn intern(&mut self, bytes: &[u8]) -> usize {
        match self.program.strings.iter().position(|s| s == bytes) {
            Some(i) => i,
            None => {
                self.program.strings.push(bytes.to_vec());
                self.program.strings.len() - 1
            }
        }
    }

    /// A struct or union of the running kernel, by name.
    fn kernel_record(&mut self, name: &str, union: bool, span: &Span) -> Result<std::rc::Rc<Record>> {
        let kind = if union { "union" } else { "struct" };
        match self.kernel_btf.record(name, union) {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(CompileError::new(
                "D_TYPE_ERR",
                span,
                format!("failed to resolve type {kind} {name}: Unknown type name"),
            )),
            Err(why) => Err(CompileError::new("D_TYPE_ERR", span, why)),
        }
    }

    /// `base->name` (arrow) or `base.name`: the member's value, read from the
    /// kernel at the struct's address plus the member's offset.
    fn member_access(&mut self, base: &ast::Expr, name: &str, arrow: bool, span: &Span) -> Result<TExpr> {
        let base = self.expr_any(base)?;
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
        let record = self.completed(record);
        let found = self.kernel_btf.member(&record, name).map_err(|why| CompileError::new("D_TYPE_ERR", span, why))?;
        let Some(member) = found else {
            let kind = if record.union { "union" } else { "struct" };
            return Err(CompileError::new(
                "D_MEMBER_NAME",
                span,
                format!("{name} is not a member of {kind} {}", record.name),
            ));
        };
        let typed = |kind, ty| TExpr { kind, ty, span: span.clone() };
        let addr_ty = Type::Pointer(Box::new(Type::Void));
        let addr = typed(TKind::Offset(Box::new(base), member.offset as u64), addr_ty);
        match member.kind {
            MemberKind::CharArray { len } => Ok(typed(TKind::LoadStr(Box::new(addr), len), Type::String)),
            MemberKind::Value(ty) => value_at(addr, ty, span),
            MemberKind::Bitfield { ty, shift, bits } => Ok(bitfield(addr, ty, shift, bits, span)),
        }
    }

    /// `` `name ``: a kernel variable at its /proc/kallsyms address. The
    /// kernel's BTF gives no types for (non-per-CPU) variables, so its value
    /// reads as a `long`; other types via a cast of its address:
    /// `*(int *)&`nr_threads`.
    fn kernel_variable(&mut self, module: Option<&str>, name: &str, span: &Span) -> Result<TExpr> {
        let shown = match module {
            Some(m) => format!("{m}`{name}"),
            None => format!("`{name}"),
        };
        match self.kernel_btf.variable(module, name) {
            KernelVariable::At(addr) => {
                let addr =
                    TExpr { kind: TKind::Int(addr), ty: Type::Pointer(Box::new(Type::Void)), span: span.clone() };
                value_at(addr, Type::Int { size: 8, signed: true, name: "long" }, span)
            }
            KernelVariable::PerCpu => Err(CompileError::new(
                "D_UNSUPPORTED",
                span,
                format!("{shown} is a per-CPU variable; those are not supported yet"),
            )),
            KernelVariable::Unknown => {
                Err(CompileError::new("D_SYM_BADREF", span, format!("failed to resolve {shown}: Unknown symbol name")))
            }
        }
    }

    /// How print() shows a value of type `ty`: the type's shape, with every
    /// member of a struct (nested structs included, pointers not followed).
    fn print_node(&mut self, ty: &Type, span: &Span) -> Result<PrintNode> {
        let kind = match ty {
            Type::Int { size, signed, name } => {
                PrintKind::Int { size: *size as usize, char: *size == 1 && *signed && name.ends_with("char") }
            }
            Type::Pointer(_) => PrintKind::Pointer,
            Type::String => PrintKind::String,
            Type::Array(elem, len) => PrintKind::Array {
                elem: Box::new(self.print_node(elem, span)?),
                len: *len,
                elem_size: type_size(elem, self.opts.strsize),
            },
            Type::Struct(record) => {
                let record = &self.completed(record.clone());
                let fields =
                    self.kernel_btf.fields(record).map_err(|why| CompileError::new("D_TYPE_ERR", span, why))?;
                let mut members = Vec::new();
                for f in fields {
                    let Some(ty) = f.ty else { continue };
                    let mut node = self.print_node(&ty, span)?;
                    if let Some(typedef) = f.typedef {
                        node.name = typedef;
                    }
                    members.push(PrintMember { name: f.name, bit_offset: f.bit_offset, bits: f.bits, node });
                }
                PrintKind::Record(members)
            }
            Type::Void | Type::Stack => {
                return Err(CompileError::new(
                    "D_PROTO_ARG",
                    span,
                    format!(
                        "print( ) argument #1 is incompatible with prototype:\n\tprototype: @\n\t argument: {}",
                        ty.name()
                    ),
                ))
            }
        };
        Ok(PrintNode { name: ty.name(), kind })
    }

    /// Reserves alloca(size) bytes in the clause's alloca region. Sizes are
    /// constants, so the region's size (and the verifier's bounds) are
    /// known when the program is built.
    fn alloca(&mut self, size: &TExpr, span: &Span) -> Result<Subr> {
        let Some(bytes) = folded(size) else {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                span,
                "alloca( ) sizes that are not constant expressions are not supported yet",
            ));
        };
        let offset = self.clause_alloca;
        let end = offset + (bytes as usize).next_multiple_of(8);
        if bytes as usize > MAX_ALLOCA || end > MAX_ALLOCA {
            return Err(CompileError::new(
                "D_ALLOCA_SIZE",
                span,
                format!("alloca( ) of more than {MAX_ALLOCA} bytes in one clause is not supported"),
            ));
        }
        self.clause_alloca = end;
        self.program.alloca_bytes = self.program.alloca_bytes.max(end);
        Ok(Subr::Alloca { offset, size: bytes as usize })
    }

    /// Whether `base[...]` indexes an associative array rather than a
    /// pointer or array: a global or self-> name that is not a scalar
    /// variable (assignment declares associative arrays on first use).
    fn names_assoc_array(&self, base: &ast::Expr) -> bool {
        let (scope, name) = match &base.kind {
            ExprKind::Ident(name) if !is_predefined(name) => (Scope::Global, name),
            ExprKind::SelfVar(name) => (Scope::Thread, name),
            _ => return false,
        };
        self.lookup_var(scope, name).is_none_or(|(_, ty)| pointee(&ty).is_none())
    }

    /// `base[index]` where base is a pointer or an array: the element.
    fn pointer_index(&mut self, base: TExpr, keys: &[ast::Expr], span: &Span) -> Result<TExpr> {
        if keys.len() != 1 {
            return Err(CompileError::new(
                "D_OP_INDEX",
                span,
                format!("operator [ ] applied to type {} requires exactly one index", base.ty.name()),
            ));
        }
        let index = self.expr(&keys[0])?;
        let elem = self.pointer_add(BinOp::Add, base, index, span)?;
        self.deref(elem, span)
    }

    /// `*p`: the value p points at.
    fn deref(&mut self, e: TExpr, span: &Span) -> Result<TExpr> {
        match &e.ty {
            Type::Pointer(to) | Type::Array(to, _) => {
                let to = self.resolved((**to).clone());
                value_at(TExpr { ty: Type::Pointer(Box::new(Type::Void)), ..e }, to, span)
            }
            other => Err(CompileError::new(
                "D_DEREF_NONPTR",
                span,
                format!("operator * requires an operand of pointer type: \"{}\"", other.name()),
            )),
        }
    }

    /// Pointer arithmetic as in C: `p + n` and `p - n` move by n elements,
    /// `p - q` counts the elements between. Arrays decay to pointers.
    fn pointer_add(&mut self, op: BinOp, l: TExpr, r: TExpr, span: &Span) -> Result<TExpr> {
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
            (Some(_), None) if r.ty.is_int() => (l, r),
            (None, Some(_)) if l.ty.is_int() && op == BinOp::Add => (r, l),
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
        // void * moves by bytes, as GCC and DTrace allow.
        let size = match elem {
            Type::Void => 1,
            ref t => type_size(t, self.opts.strsize) as u64,
        };
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

    fn new_var(&mut self, scope: Scope, name: &str, ty: Type) -> Var {
        let list = match scope {
            Scope::Global => &mut self.program.globals,
            Scope::Thread => &mut self.program.thread_locals,
            Scope::Clause => &mut self.program.clause_locals,
        };
        let offset = if scope == Scope::Global {
            let end = list.last().map_or(0, |v: &Variable| v.offset + var_bytes(&v.ty, self.opts.strsize));
            end
        } else {
            0
        };
        list.push(Variable { ty, offset });
        let index = list.len() - 1;
        self.var_index.insert((scope, name.to_string()), index);
        make_var(scope, index)
    }

    fn lookup_var(&self, scope: Scope, name: &str) -> Option<(Var, Type)> {
        let index = *self.var_index.get(&(scope, name.to_string()))?;
        let list = match scope {
            Scope::Global => &self.program.globals,
            Scope::Thread => &self.program.thread_locals,
            Scope::Clause => &self.program.clause_locals,
        };
        Some((make_var(scope, index), list[index].ty.clone()))
    }

    fn stmts(&mut self, stmts: &[ast::Stmt]) -> Result<Vec<TStmt>> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out)?;
        }
        Ok(out)
    }

    fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<TStmt>) -> Result<()> {
        match &s.kind {
            StmtKind::Empty => {}
            StmtKind::Block(list) => {
                for s in list {
                    self.stmt(s, out)?;
                }
            }
            StmtKind::Decl(decl) => self.declaration(decl)?,
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
                if let ExprKind::Assign(op, target, value) = &e.kind {
                    if let Some((name, keys)) = aggregation_target(target) {
                        self.check_order(ActionClass::Aggregation, &e.span)?;
                        out.push(self.aggregate(*op, name, keys, value, &e.span)?);
                        return Ok(());
                    }
                }
                if let Some((name, _)) = aggregation_target(e) {
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
    fn formatted_action(
        &mut self,
        name: &str,
        name_span: &Span,
        args: &[ast::Expr],
        span: &Span,
    ) -> Result<(usize, Vec<TExpr>)> {
        if args.is_empty() {
            return Err(CompileError::new(
                "D_PRINTF_ARG_PROTO",
                name_span,
                format!("{name}( ) prototype mismatch: 0 args passed, at least 1 expected"),
            ));
        }
        let ExprKind::Str(fmt) = &args[0].kind else {
            return Err(CompileError::new(
                "D_PRINTF_ARG_FMT",
                &args[0].span,
                format!("{name}( ) argument #1 must be a string constant"),
            ));
        };
        let format =
            printf::parse_format(fmt).map_err(|e| CompileError::new("D_PRINTF_FMT", &args[0].span, e.to_string()))?;
        let values: Vec<TExpr> = args[1..].iter().map(|a| self.expr(a)).collect::<Result<_>>()?;
        check_printf_args(name, &format, &values, span)?;
        self.program.formats.push(format);
        Ok((self.program.formats.len() - 1, values))
    }

    /// Notes a destructive action: tracing then needs -w (checked when
    /// enabling, as DTrace does). panic() and breakpoint() stop the whole
    /// machine and have no Linux BPF counterpart; chill() would spin in the
    /// kernel, which BPF cannot do safely.
    fn destructive(&mut self, name: &str, name_span: &Span) -> Result<()> {
        if let "panic" | "breakpoint" | "chill" = name {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                name_span,
                format!("{name}( ) is not supported on Linux: BPF programs cannot do it safely"),
            ));
        }
        self.program.destructive = true;
        Ok(())
    }

    /// raise(sig), stop(), copyoutstr(): destructive actions that record nothing.
    fn destructive_action(&mut self, name: &str, name_span: &Span, args: &[ast::Expr]) -> Result<Option<TStmt>> {
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
                    let fits = e.ty.is_int() || (i < 2 && matches!(e.ty, Type::Pointer(_)));
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
            // destructive() refuses these.
            "panic" | "breakpoint" | "chill" => return self.destructive(name, name_span).map(|()| None),
            _ => return Ok(None),
        };
        self.destructive(name, name_span)?;
        Ok(Some(TStmt::Destructive(op)))
    }

    /// Actions (trace, printf, exit) are statements, not expressions.
    fn action(&mut self, name: &str, name_span: &Span, args: &[ast::Expr], span: &Span) -> Result<Option<TStmt>> {
        if let Some(stmt) = self.destructive_action(name, name_span, args)? {
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
                    return Err(incompatible_arg("D_PROTO_ARG", &args[0].span, "trace", 1, "@", "void"));
                }
                if let Type::Struct(_) | Type::Array(..) = e.ty {
                    copy_fits("a trace( ) record", &e.ty, self.opts.strsize, &args[0].span)?;
                }
                (RecordKind::Trace, ActionKind::Record(vec![e]))
            }
            "print" => {
                self.arity(name, name_span, args, 1, 1)?;
                let e = char_array(self.expr(&args[0])?);
                let node = self.print_node(&e.ty, &args[0].span)?;
                if let PrintKind::Array { .. } | PrintKind::Record(_) = node.kind {
                    copy_fits("a print( ) record", &e.ty, self.opts.strsize, &args[0].span)?;
                }
                (RecordKind::Print(node), ActionKind::Record(vec![e]))
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
            "printa" => self.printa(name_span, args, span)?,
            "tracemem" => self.tracemem(name_span, args)?,
            "stack" => {
                self.arity(name, name_span, args, 0, 0)?;
                self.program.uses_stack = true;
                let id = TExpr { kind: TKind::StackId, ty: Type::Stack, span: span.clone() };
                (RecordKind::Stack, ActionKind::Record(vec![id]))
            }
            "ustack" => {
                let id = self.ustack(name, name_span, args, span)?;
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
            "setopt" => {
                self.arity(name, name_span, args, 1, 2)?;
                let mut strings = Vec::new();
                for (i, a) in args.iter().enumerate() {
                    let ExprKind::Str(text) = &a.kind else {
                        let ty = self.expr(a)?.ty.name();
                        return Err(incompatible_arg("D_PROTO_ARG", &a.span, "setopt", i + 1, "string", &ty));
                    };
                    strings.push(String::from_utf8_lossy(text).into_owned());
                }
                let value = strings.get(1).cloned();
                (RecordKind::Setopt { name: strings.swap_remove(0), value }, ActionKind::Record(Vec::new()))
            }
            "exit" => {
                self.arity(name, name_span, args, 1, 1)?;
                (RecordKind::Exit, ActionKind::Exit(self.int_arg(name, &args[0])?))
            }
            _ => return Ok(None),
        };
        let (record_kind, kind) = kind;
        let class = if record_kind == RecordKind::Exit { ActionClass::Exit } else { ActionClass::Data };
        self.check_order(class, span)?;
        let action = self.actions_in_clause;
        if action >= 64 {
            return Err(CompileError::new("D_ACT_MAX", span, "too many actions in one clause (the limit is 64)"));
        }
        self.actions_in_clause += 1;
        let values = match (&kind, &record_kind) {
            // tracemem's address stands for the memory it copies.
            (ActionKind::Record(args), RecordKind::Tracemem { size }) => std::iter::once(ValueLayout::Memory(*size))
                .chain(args[1..].iter().map(|a| value_layout(&a.ty)))
                .collect(),
            // print() and trace() record a struct's or an array's bytes, not its address.
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
    fn int_arg(&mut self, func: &str, arg: &ast::Expr) -> Result<TExpr> {
        let e = self.expr(arg)?;
        if !e.ty.is_int() {
            return Err(incompatible_arg("D_PROTO_ARG", &arg.span, func, 1, "int", &e.ty.name()));
        }
        Ok(e)
    }

    /// DTrace's rules on where speculate(), commit(), aggregations and
    /// exit() may stand among a clause's actions, checked as each comes.
    fn check_order(&mut self, class: ActionClass, span: &Span) -> Result<()> {
        let o = &mut self.order;
        // (whether the rule is broken, its tag, its message), first match wins.
        let rules = match class {
            ActionClass::Spec(SpecOp::Commit) => vec![
                (o.committed, "D_COMM_COMM", "commit( ) may not follow commit( )"),
                (o.recorded, "D_COMM_DREC", "commit( ) may not follow data-recording action(s)"),
            ],
            ActionClass::Spec(SpecOp::Speculate) => vec![
                (o.speculated, "D_SPEC_SPEC", "speculate( ) may not follow speculate( )"),
                (o.committed, "D_SPEC_COMM", "speculate( ) may not follow commit( )"),
                (o.recorded, "D_SPEC_DREC", "speculate( ) may not follow data-recording action(s)"),
            ],
            // discard() records nothing and may stand anywhere.
            ActionClass::Spec(SpecOp::Discard) => vec![],
            ActionClass::Aggregation => vec![
                (o.committed, "D_AGG_COMM", "aggregating actions may not follow commit( )"),
                (o.speculated, "D_AGG_SPEC", "aggregating actions may not follow speculate( )"),
            ],
            ActionClass::Exit | ActionClass::Data => vec![
                (class == ActionClass::Exit && o.speculated, "D_EXIT_SPEC", "exit( ) may not follow speculate( )"),
                (o.committed, "D_DREC_COMM", "data-recording actions may not follow commit( )"),
            ],
        };
        match class {
            ActionClass::Spec(SpecOp::Commit) => o.committed = true,
            ActionClass::Spec(SpecOp::Speculate) => o.speculated = true,
            ActionClass::Spec(SpecOp::Discard) => {}
            ActionClass::Aggregation => o.recorded = true,
            // Speculative data is not the clause's own.
            ActionClass::Exit | ActionClass::Data => o.recorded |= !o.speculated,
        }
        match rules.into_iter().find(|(broken, _, _)| *broken) {
            Some((_, tag, message)) => Err(CompileError::new(tag, span, message)),
            None => Ok(()),
        }
    }

    /// tracemem(addr, size[, dsize]): `size` (a constant) bytes of kernel
    /// memory; dsize, when given, says how many of them to print.
    fn tracemem(&mut self, name_span: &Span, args: &[ast::Expr]) -> Result<(RecordKind, ActionKind)> {
        self.arity("tracemem", name_span, args, 2, usize::MAX)?;
        if let Some(extra) = args.get(3) {
            return Err(CompileError::new(
                "D_TRACEMEM_ARGS",
                &extra.span,
                "tracemem ( ) prototype mismatch: expected at most 3 args",
            ));
        }
        let addr = self.expr(&args[0])?;
        if !addr.ty.is_scalar() {
            let ty = addr.ty.name();
            return Err(incompatible_arg("D_TRACEMEM_ADDR", &args[0].span, "tracemem", 1, "pointer or integer", &ty));
        }
        let size = positive_const(
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

    /// printa([format,] @a, ...).
    fn printa(&mut self, name_span: &Span, args: &[ast::Expr], span: &Span) -> Result<(RecordKind, ActionKind)> {
        let (format, aggs) = match args.first().map(|a| &a.kind) {
            None => {
                return Err(CompileError::new(
                    "D_PRINTA_PROTO",
                    name_span,
                    "printa( ) prototype mismatch: 0 args passed, 1 expected",
                ))
            }
            Some(ExprKind::Str(fmt)) => {
                let format = printf::parse_format(fmt)
                    .map_err(|e| CompileError::new("D_PRINTF_FMT", &args[0].span, e.to_string()))?;
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
    fn aggregation_arg(&mut self, func: &str, tag: &str, arg: &ast::Expr, position: usize) -> Result<usize> {
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

    /// An expression that must be an integer or a pointer.
    fn scalar_expr(&mut self, e: &ast::Expr, tag: &'static str, message: &str) -> Result<TExpr> {
        let typed = self.expr(e)?;
        if !typed.ty.is_scalar() {
            return Err(CompileError::new(tag, &e.span, message));
        }
        Ok(typed)
    }

    /// An integer argument #2 of trunc() or normalize().
    fn scalar_arg(&mut self, func: &str, tag: &'static str, arg: &ast::Expr) -> Result<TExpr> {
        let e = self.expr(arg)?;
        if !e.ty.is_int() {
            return Err(CompileError::new(tag, &arg.span, format!("{func}( ) argument #2 must be of scalar type")));
        }
        Ok(e)
    }

    fn aggregation_index(&self, name: &str) -> Option<usize> {
        self.program.aggregations.iter().position(|a| a.name == name)
    }

    /// `@name[keys] = func(args)`.
    fn aggregate(
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
            return Err(CompileError::new(
                "D_AGG_FUNC",
                span,
                format!("@{name} must be assigned the result of an aggregating function"),
            ));
        };
        let (func, value, incr) = self.aggregating_call(func_name, func_span, args)?;
        let keys: Vec<TExpr> = keys.iter().map(|k| self.expr(k)).collect::<Result<_>>()?;
        for k in &keys {
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
        let line = self.line_of(span);
        let agg = match self.aggregation_index(name) {
            Some(i) => {
                let previous_line = self.agg_lines[i];
                let existing = &mut self.program.aggregations[i];
                check_same_function(name, &existing.func, &func, previous_line, span)?;
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
                self.agg_lines.push(line);
                self.program.aggregations.len() - 1
            }
        };
        Ok(TStmt::Aggregate { agg, keys, value, incr })
    }

    /// The script line of a span, for messages that cite an earlier line.
    fn line_of(&self, span: &Span) -> usize {
        crate::syntax::line_of(&self.text, span.start)
    }

    /// Checks an aggregating function's arguments; returns the function with
    /// its constant parameters, the value and the increment.
    fn aggregating_call(
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
        let constant = |i: usize, tag: &'static str, what: &str| -> Result<i64> {
            const_int(&args[i])
                .ok_or_else(|| CompileError::new(tag, &args[i].span, format!("{name}( ) argument #{i} must be {what}")))
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
                let step = match args.get(3) {
                    Some(a) => positive_const(
                        a,
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
                    &args[4],
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

    /// `ustack([nframes[, strsize]])`: the user stack; strsize (for
    /// Java frames in DTrace) is accepted and unused.
    fn ustack(&mut self, name: &str, name_span: &Span, args: &[ast::Expr], span: &Span) -> Result<TExpr> {
        self.arity(name, name_span, args, 0, 2)?;
        let frames = match args.first() {
            None => 0,
            Some(arg) => match const_int(arg) {
                Some(n) if (1..=255).contains(&n) => n as u8,
                _ => {
                    return Err(CompileError::new(
                        "D_USTACK_FRAMES",
                        &arg.span,
                        "ustack( ) argument #1 must be a non-zero positive integer constant",
                    ))
                }
            },
        };
        if let Some(arg) = args.get(1) {
            if const_int(arg).is_none_or(|n| n < 0) {
                return Err(CompileError::new(
                    "D_USTACK_STRSIZE",
                    &arg.span,
                    "ustack( ) argument #2 must be a positive integer constant",
                ));
            }
        }
        self.program.uses_ustack = true;
        Ok(TExpr { kind: TKind::UStackId(frames), ty: Type::Stack, span: span.clone() })
    }

    fn arity(&self, name: &str, span: &Span, args: &[ast::Expr], min: usize, max: usize) -> Result<()> {
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

    fn expr(&mut self, e: &ast::Expr) -> Result<TExpr> {
        let value = self.expr_any(e)?;
        if let TKind::Xlate { .. } = value.kind {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                &e.span,
                format!("a translated {} can only be used with -> or . yet", value.ty.name()),
            ));
        }
        Ok(value)
    }

    /// An expression, including a translated struct (`xlate`, `curpsinfo`),
    /// which only member access may use.
    fn expr_any(&mut self, e: &ast::Expr) -> Result<TExpr> {
        let span = e.span.clone();
        let typed = |kind, ty| TExpr { kind, ty, span: e.span.clone() };
        Ok(match &e.kind {
            ExprKind::Int { value, suffix, decimal } => {
                typed(TKind::Int(*value), int_constant_type(*value, *suffix, *decimal))
            }
            ExprKind::Char(c) => typed(TKind::Int(*c as u64), Type::INT),
            ExprKind::Str(bytes) => {
                if bytes.len() >= self.opts.strsize {
                    return Err(CompileError::new("D_STR_LEN", &span, "string literal is longer than strsize"));
                }
                let index = self.intern(bytes);
                typed(TKind::Str(index), Type::String)
            }
            ExprKind::Float(_) => {
                return Err(CompileError::new("D_FLOAT", &span, "floating-point constants are not permitted"))
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
                let ty = self.type_name(tn)?;
                let Type::Struct(record) = &ty else {
                    return Err(CompileError::new(
                        "D_OFFSETOF_TYPE",
                        &span,
                        format!("offsetof operand must be a struct or union type: {}", ty.name()),
                    ));
                };
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
                            format!("{} is not a member of {}", member, ty.name()),
                        ))
                    }
                }
            }
            ExprKind::Ident(name) => match builtin(name) {
                Some((b, ty)) => {
                    match b {
                        Builtin::Ppid => self.program.uses_ppid = true,
                        Builtin::Stackdepth => self.program.uses_stackdepth = true,
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
                    // D's NULL: a void pointer 0.
                    (None, _) if name == "NULL" => typed(TKind::Int(0), Type::Pointer(Box::new(Type::Void))),
                    (None, Some(value)) => typed(TKind::Int(value), Type::INT),
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
            ExprKind::MacroStr(n) => match self.opts.macro_args.get(*n as usize) {
                Some(s) => return self.expr(&ast::Expr { kind: ExprKind::Str(s.as_bytes().to_vec()), span }),
                None => {
                    return Err(CompileError::new(
                        "D_MACRO_UNDEF",
                        &span,
                        format!("macro argument $${n} is not defined"),
                    ))
                }
            },
            ExprKind::MacroVar(name) => {
                let value = match name.as_str() {
                    "pid" => Some(std::process::id()),
                    "ppid" => Some(std::os::unix::process::parent_id()),
                    "uid" => Some(unsafe_free_getuid()),
                    "target" => self.opts.target_pid,
                    _ => None,
                };
                match value {
                    Some(v) => typed(TKind::Int(v as u64), Type::INT),
                    None => {
                        return Err(CompileError::new(
                            "D_MACRO_UNDEF",
                            &span,
                            format!("failed to resolve ${name}: Unknown variable name"),
                        ))
                    }
                }
            }
            ExprKind::Unary(op, inner) => self.unary(*op, inner, &span)?,
            ExprKind::Binary(op, lhs, rhs) => self.binary(*op, lhs, rhs, &span)?,
            ExprKind::Ternary(c, a, b) => {
                let c = self.expr(c)?;
                if !c.ty.is_scalar() {
                    return Err(CompileError::new(
                        "D_OP_SCALAR",
                        &span,
                        "operator ?: must be applied to a scalar condition",
                    ));
                }
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                let ty = match (&a.ty, &b.ty) {
                    (Type::String, Type::String) => Type::String,
                    (x, y) if x.is_int() && y.is_int() => arith_result(x, y),
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
                let inner = self.expr(inner)?;
                match (&ty, &inner.ty) {
                    (Type::Int { .. }, Type::Int { .. }) => typed(TKind::Cast(Box::new(inner)), ty),
                    // Pointers and integers convert freely, as in C (both are 8 bytes here).
                    (Type::Pointer(_), t) | (Type::Int { .. }, t @ Type::Pointer(_)) if t.is_scalar() => {
                        typed(TKind::Cast(Box::new(inner)), ty)
                    }
                    (Type::String, Type::String) => inner,
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
                typed(
                    TKind::Int(type_size(&ty, self.opts.strsize) as u64),
                    Type::Int { size: 8, signed: false, name: "size_t" },
                )
            }
            ExprKind::SizeofExpr(inner) => {
                let inner = char_array(self.expr(inner)?);
                typed(
                    TKind::Int(type_size(&inner.ty, self.opts.strsize) as u64),
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
            ExprKind::Index(base, keys) if !self.names_assoc_array(base) => {
                let base = char_array(self.expr(base)?);
                if pointee(&base.ty).is_none() {
                    return Err(CompileError::new(
                        "D_OP_INDEX",
                        &span,
                        format!("operator [ ] cannot be applied to type {}", base.ty.name()),
                    ));
                }
                return self.pointer_index(base, keys, &span);
            }
            ExprKind::Index(base, keys) => {
                let (place, ty) = self.element(base, keys, None, &span)?;
                let Place::Element { array, keys } = place else { unreachable!("element() returns elements") };
                typed(TKind::Element { array, keys }, ty)
            }
        })
    }

    fn macro_arg(&mut self, n: u32, span: &Span) -> Result<TExpr> {
        let Some(text) = self.opts.macro_args.get(n as usize) else {
            return Err(CompileError::new("D_MACRO_UNDEF", span, format!("macro argument ${n} is not defined")));
        };
        // An argument that looks like an integer is an integer; else a string (DTrace
        // would treat it as an identifier; a string is what scripts mean in practice).
        let parsed = if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            u64::from_str_radix(hex, 16).ok()
        } else if text.starts_with('-') {
            text.parse::<i64>().ok().map(|v| v as u64)
        } else {
            text.parse::<u64>().ok()
        };
        match parsed {
            Some(v) => {
                let ty = if (v as i64) >= i32::MIN as i64 && (v as i64) <= i32::MAX as i64 {
                    Type::INT
                } else {
                    Type::INT64
                };
                Ok(TExpr { kind: TKind::Int(v), ty, span: span.clone() })
            }
            None => self.expr(&ast::Expr { kind: ExprKind::Str(text.as_bytes().to_vec()), span: span.clone() }),
        }
    }

    fn unary(&mut self, op: UnOp, inner: &ast::Expr, span: &Span) -> Result<TExpr> {
        match op {
            UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec => {
                let (place, ty) = self.lvalue(inner, Type::INT)?;
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
                let ty = if op == UnOp::Not { Type::INT } else { promote(&e.ty) };
                let kind = match op {
                    UnOp::Neg => TKind::Neg(Box::new(e)),
                    UnOp::BitNot => TKind::BitNot(Box::new(e)),
                    _ => TKind::Not(Box::new(e)),
                };
                Ok(TExpr { kind, ty, span: span.clone() })
            }
            UnOp::Deref => {
                let e = char_array(self.expr(inner)?);
                self.deref(e, span)
            }
            // &p->m, &a[i], &*p: the address the value would be read from.
            UnOp::AddrOf => {
                let e = match &inner.kind {
                    ExprKind::Arrow(..)
                    | ExprKind::Member(..)
                    | ExprKind::Index(..)
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

    fn require_int(&self, e: &TExpr, op: &str, span: &Span) -> Result<()> {
        if e.ty.is_int() {
            Ok(())
        } else {
            Err(CompileError::new("D_OP_INT", span, format!("operator {op} requires an operand of integral type")))
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &ast::Expr, rhs: &ast::Expr, span: &Span) -> Result<TExpr> {
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
        if l.ty == Type::String || r.ty == Type::String {
            if relational && l.ty == r.ty {
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
        if matches!(op, BinOp::Div | BinOp::Mod) && matches!(r.kind, TKind::Int(0)) {
            return Err(CompileError::new("D_DIV_ZERO", span, "expression contains division by zero"));
        }
        let common = arith_result(&l.ty, &r.ty);
        let signed = matches!(common, Type::Int { signed: true, .. });
        let (signed, ty) = match op {
            // Shifts take the type of the promoted left operand.
            BinOp::Shl | BinOp::Shr => {
                let t = promote(&l.ty);
                (matches!(t, Type::Int { signed: true, .. }), t)
            }
            _ if relational => (signed, Type::INT),
            _ => (signed, common),
        };
        Ok(typed(TKind::Binary { op, signed, lhs: Box::new(l), rhs: Box::new(r) }, ty))
    }

    /// Resolves an assignable expression; unknown globals, thread-locals and
    /// associative arrays are created with `default_ty` (D declares them by
    /// first assignment).
    fn lvalue(&mut self, target: &ast::Expr, default_ty: Type) -> Result<(Place, Type)> {
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
                        format!("operator = cannot be applied to a built-in variable: {name}"),
                    ));
                }
                (Scope::Global, name)
            }
            ExprKind::SelfVar(name) => (Scope::Thread, name),
            ExprKind::ThisVar(name) => (Scope::Clause, name),
            ExprKind::Index(base, keys) => return self.element(base, keys, Some(default_ty), &target.span),
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
        let var = self.new_var(scope, name, default_ty.clone());
        Ok((Place::Var(var), default_ty))
    }

    /// A key's column in an aggregation or associative array: an execname
    /// key takes its 16 bytes, a char array its length and a NUL, other
    /// strings strsize, the rest a word. (Narrow columns hash faster, and
    /// Linux 5.10 refuses hash map keys over 512 bytes: two strsize strings
    /// are too many there.)
    fn key_column(&self, k: &TExpr) -> KeyColumn {
        let string_bytes = var_bytes(&Type::String, self.opts.strsize);
        let bytes = match (&k.ty, &k.kind) {
            (Type::String, _) if is_execname(k) => COMM_KEY_BYTES,
            (Type::String, TKind::LoadStr(_, len)) => (len + 1).next_multiple_of(8).min(string_bytes),
            (Type::String, _) => string_bytes,
            _ => 8,
        };
        KeyColumn { ty: k.ty.clone(), bytes }
    }

    /// `name[keys]` or `self->name[keys]`. With `create`, an unknown array is
    /// declared with that value type; without, it must exist.
    fn element(
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
        let keys: Vec<TExpr> = keys.iter().map(|k| self.expr(k)).collect::<Result<_>>()?;
        let mut columns = Vec::new();
        if thread_local {
            columns.push(KeyColumn { ty: Type::Int { size: 4, signed: true, name: "id_t" }, bytes: 8 });
        }
        for k in &keys {
            if !matches!(k.ty, Type::String | Type::Int { .. } | Type::Pointer(_) | Type::Stack) {
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
                    if (have.ty == Type::String) != (new.ty == Type::String) {
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
                if !(value.is_scalar() || value == Type::String) {
                    return Err(CompileError::new(
                        "D_UNSUPPORTED",
                        span,
                        format!("associative arrays of {} are not supported yet", value.name()),
                    ));
                }
                self.program.assoc_arrays.push(AssocArray { name, thread_local, keys: columns, value });
                self.program.assoc_arrays.len() - 1
            }
            (None, None) => return Err(undeclared(&shown, span)),
        };
        let ty = self.program.assoc_arrays[index].value.clone();
        Ok((Place::Element { array: index, keys }, ty))
    }

    fn assign(&mut self, op: Option<BinOp>, target: &ast::Expr, value: &ast::Expr, span: &Span) -> Result<TExpr> {
        let value = self.expr(value)?;
        if value.ty == Type::Void {
            return Err(CompileError::new(
                "D_OP_VOID",
                span,
                "operator = cannot be applied to an operand of type void",
            ));
        }
        let (place, ty) = self.lvalue(target, value.ty.clone())?;
        // `str = NULL` frees the variable, as DTrace frees dynamic variables set to 0.
        let is_null = matches!(value.kind, TKind::Int(0)) && matches!(value.ty, Type::Pointer(_));
        if ty == Type::String && is_null && op.is_none() {
            return Ok(TExpr { kind: TKind::ClearVar(place), ty, span: span.clone() });
        }
        let compatible = match (&ty, &value.ty) {
            (Type::String, Type::String) => op.is_none(),
            (Type::Struct(a), Type::Struct(b)) => {
                copy_fits("a variable", &ty, self.opts.strsize, span)?;
                op.is_none()
                    && self.completed(a.clone()) == self.completed(b.clone())
                    && !matches!(place, Place::Element { .. })
            }
            (Type::Pointer(_), Type::Pointer(_)) => op.is_none(),
            (a, b) => a.is_int() && b.is_int(),
        };
        if !compatible {
            let text = op.map_or("=".to_string(), |o| format!("{}=", binop_text(o)));
            return Err(CompileError::new(
                "D_OP_INCOMPAT",
                span,
                format!("operands have incompatible types: \"{}\" {text} \"{}\"", ty.name(), value.ty.name()),
            ));
        }
        let signed = matches!(arith_result(&ty, &value.ty), Type::Int { signed: true, .. }) || ty == Type::String;
        Ok(TExpr { kind: TKind::Assign { place, op, signed, value: Box::new(value) }, ty, span: span.clone() })
    }

    fn subroutine(&mut self, name: &str, name_span: &Span, args: &[ast::Expr], span: &Span) -> Result<TExpr> {
        match name {
            "stack" => {
                self.arity(name, name_span, args, 0, 0)?;
                self.program.uses_stack = true;
                Ok(TExpr { kind: TKind::StackId, ty: Type::Stack, span: span.clone() })
            }
            "ustack" => self.ustack(name, name_span, args, span),
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
            "copyinstr" => {
                self.arity(name, name_span, args, 1, 2)?;
                let addr = self.expr(&args[0])?;
                if !addr.ty.is_int() {
                    return Err(incompatible_arg("D_PROTO_ARG", &args[0].span, name, 1, "uintptr_t", &addr.ty.name()));
                }
                Ok(TExpr { kind: TKind::CopyInStr(Box::new(addr)), ty: Type::String, span: span.clone() })
            }
            "trace" | "printf" | "exit" | "printa" | "trunc" | "clear" | "normalize" | "denormalize" | "setopt"
            | "tracemem" | "speculate" | "commit" | "discard" | "system" | "raise" | "stop" | "copyout"
            | "copyoutstr" | "chill" | "panic" | "breakpoint" => Err(CompileError::new(
                "D_PROTO_ARG",
                name_span,
                format!("{name}( ) may not be used as an expression; it is an action"),
            )),
            _ if is_aggregating_function(name) => Err(CompileError::new(
                "D_CG_EXPR",
                name_span,
                format!(
                    "aggregating function {name}( ) may not be called from a D expression (D program context required)"
                ),
            )),
            _ => match subroutine_signature(name) {
                Some(signature) => self.call_subroutine(name, name_span, args, signature, span),
                None => {
                    Err(CompileError::new("D_IDENT_UNDEF", name_span, format!("{name}( ) is not a function or action")))
                }
            },
        }
    }

    /// A call of a subroutine with a signature in [`subroutine_signature`].
    fn call_subroutine(
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
            let ok = match param {
                "string" => e.ty == Type::String,
                // strtok(NULL, delim) goes on from the previous call's position.
                "string or NULL" => e.ty == Type::String || is_null_constant(&e),
                _ if param.ends_with('*') => e.ty.is_scalar() || matches!(e.ty, Type::Array(..)),
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
        let subr = match subr {
            Subr::Alloca { .. } => self.alloca(&values[0], &args[0].span)?,
            other => other,
        };
        Ok(TExpr { kind: TKind::Subr(subr, values), ty: result, span: span.clone() })
    }
}

/// Names D defines, which a script cannot assign or index: the built-in
/// variables, curthread, NULL and the integer constants.
fn is_predefined(name: &str) -> bool {
    builtin(name).is_some() || name == "curthread" || name == "NULL" || builtin_constant(name).is_some()
}

/// NULL or a literal 0, where a subroutine takes a pointer.
fn is_null_constant(e: &TExpr) -> bool {
    matches!(e.kind, TKind::Int(0)) && e.ty.is_scalar()
}

/// Integer constants D defines for scripts (Linux's address families).
fn builtin_constant(name: &str) -> Option<u64> {
    match name {
        "AF_INET" => Some(2),
        "AF_INET6" => Some(10),
        _ => None,
    }
}

/// A subroutine's kind, parameters (`?` marks an optional one; "string or
/// NULL" also takes NULL or 0) and result type.
fn subroutine_signature(name: &str) -> Option<(Subr, &'static [&'static str], Type)> {
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
        "lltostr" => (Subr::Lltostr, &["int64_t"], Type::String),
        "htons" | "ntohs" => (Subr::ByteSwap(16), &["uint16_t"], u16),
        "htonl" | "ntohl" => (Subr::ByteSwap(32), &["uint32_t"], u32),
        "htonll" | "ntohll" => (Subr::ByteSwap(64), &["uint64_t"], Type::UINT64),
        "rand" => (Subr::Rand, &[], Type::INT),
        "getmajor" => (Subr::Getmajor, &["dev_t"], Type::Int { size: 4, signed: false, name: "major_t" }),
        "inet_ntoa" => (Subr::InetNtoa, &["ipaddr_t *"], Type::String),
        "inet_ntoa6" => (Subr::InetNtoa6, &["in6_addr_t *"], Type::String),
        "inet_ntop" => (Subr::InetNtop, &["int", "void *"], Type::String),
        "copyin" => (Subr::Copyin, &["uintptr_t", "size_t"], Type::Pointer(Box::new(Type::Void))),
        "__dtrace_psargs" => (Subr::Psargs, &["uintptr_t", "uintptr_t"], Type::String),
        // The offset and size of alloca's memory are filled in by `Checker::alloca`.
        "alloca" => (Subr::Alloca { offset: 0, size: 0 }, &["size_t"], Type::Pointer(Box::new(Type::Void))),
        "bcopy" => (Subr::Bcopy, &["void *", "void *", "size_t"], Type::Void),
        "copyinto" => (Subr::Copyinto, &["uintptr_t", "size_t", "void *"], Type::Void),
        "speculation" => (Subr::Speculation, &[], Type::INT),
        "getminor" => (Subr::Getminor, &["dev_t"], Type::Int { size: 4, signed: false, name: "minor_t" }),
        _ => return None,
    })
}

/// Width of a string key column fed only by execname: the kernel's comm is 16 bytes.
const COMM_KEY_BYTES: usize = 16;

fn is_aggregating_function(name: &str) -> bool {
    matches!(name, "count" | "sum" | "min" | "max" | "avg" | "stddev" | "quantize" | "lquantize" | "llquantize")
}

/// `@name` or `@name[keys]` as an assignment target.
fn aggregation_target(target: &ast::Expr) -> Option<(&str, &[ast::Expr])> {
    match &target.kind {
        ExprKind::Aggregation(name) => Some((name, &[])),
        ExprKind::Index(base, keys) => match &base.kind {
            ExprKind::Aggregation(name) => Some((name, keys)),
            _ => None,
        },
        _ => None,
    }
}

fn is_execname(e: &TExpr) -> bool {
    matches!(e.kind, TKind::Builtin(Builtin::Execname))
}

fn func_text(f: &AggFunc) -> &'static str {
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

/// The value of an integer constant expression (literals, negation, and
/// simple arithmetic on them), as aggregating-function parameters need.
/// The value of a typed integer expression made of constants (`sizeof (x) * 2`).
fn folded(e: &TExpr) -> Option<u64> {
    match &e.kind {
        TKind::Int(v) => Some(*v),
        TKind::Cast(inner) => folded(inner),
        TKind::Binary { op, lhs, rhs, .. } => {
            let (l, r) = (folded(lhs)?, folded(rhs)?);
            match op {
                BinOp::Add => l.checked_add(r),
                BinOp::Sub => l.checked_sub(r),
                BinOp::Mul => l.checked_mul(r),
                BinOp::Div => l.checked_div(r),
                _ => None,
            }
        }
        _ => None,
    }
}

fn const_int(e: &ast::Expr) -> Option<i64> {
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

/// An argument that must be an integer constant above 0.
fn positive_const(arg: &ast::Expr, tag: &'static str, message: &str) -> Result<i64> {
    const_int(arg).filter(|n| *n > 0).ok_or_else(|| CompileError::new(tag, &arg.span, message))
}

fn check_lquantize(base: i64, limit: i64, step: i64, span: &Span) -> Result<()> {
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
fn check_llquantize(factor: i64, low: i64, high: i64, nsteps: i64, span: &Span) -> Result<()> {
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
fn check_same_function(
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
fn check_printa_format(format: &printf::Format, keys: &[KeyColumn], span: &Span) -> Result<()> {
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

/// DTrace's message for an argument whose type the function does not take.
fn incompatible_arg(
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

fn member_operand_error(arrow: bool, ty: &Type, span: &Span) -> CompileError {
    let (op, wants) = if arrow { ("->", "a pointer to a struct or union") } else { (".", "a struct or union") };
    CompileError::new(
        "D_OP_SOU",
        span,
        format!("operator {op} cannot be applied to type \"{}\": it needs {wants}", ty.name()),
    )
}

fn undeclared(name: &str, span: &Span) -> CompileError {
    CompileError::new("D_VAR_UNDEF", span, format!("{name} has not yet been declared or assigned"))
}

fn make_var(scope: Scope, index: usize) -> Var {
    match scope {
        Scope::Global => Var::Global(index),
        Scope::Thread => Var::ThreadLocal(index),
        Scope::Clause => Var::ClauseLocal(index),
    }
}

fn desc_text(d: &ProbeDesc) -> String {
    format!("{}:{}:{}:{}", d.provider, d.module, d.function, d.name)
}

fn value_layout(ty: &Type) -> ValueLayout {
    match ty {
        Type::String => ValueLayout::Str,
        Type::Int { size, signed, .. } => ValueLayout::Int { size: *size, signed: *signed },
        Type::Pointer(_) | Type::Struct(_) | Type::Array(..) => ValueLayout::Int { size: 8, signed: false },
        Type::Stack => ValueLayout::Stack,
        Type::Void => ValueLayout::Int { size: 8, signed: true },
    }
}

/// sizeof: the type's size in C terms (a string is strsize bytes).
fn type_size(ty: &Type, strsize: usize) -> usize {
    match ty {
        Type::Int { size, .. } => *size as usize,
        Type::String => strsize,
        Type::Pointer(_) | Type::Stack => 8,
        Type::Struct(r) => r.size,
        Type::Array(of, len) => type_size(of, strsize) * len,
        Type::Void => 1,
    }
}

/// A char array member read as a string, seen as the array again (for
/// indexing and pointer arithmetic); anything else unchanged.
fn char_array(e: TExpr) -> TExpr {
    match e.kind {
        TKind::LoadStr(addr, len) => TExpr { ty: Type::Array(Box::new(Type::CHAR), len), ..*addr },
        _ => e,
    }
}

/// A struct or array copied whole (into a record or a variable) must fit
/// MAX_COPY_BYTES; `into` says where it goes.
fn copy_fits(into: &str, ty: &Type, strsize: usize, span: &Span) -> Result<()> {
    let size = type_size(ty, strsize);
    if size > MAX_COPY_BYTES {
        return Err(CompileError::new(
            "D_UNSUPPORTED",
            span,
            format!("copying more than {MAX_COPY_BYTES} bytes into {into} is not supported ({} has {size})", ty.name()),
        ));
    }
    Ok(())
}

/// What a pointer or an array (decaying to a pointer) points at.
fn pointee(ty: &Type) -> Option<Type> {
    match ty {
        Type::Pointer(to) | Type::Array(to, _) => Some((**to).clone()),
        _ => None,
    }
}

/// The value of type `ty` stored at `addr`: integers and pointers are read
/// from memory; a struct or an array is its address.
fn value_at(addr: TExpr, ty: Type, span: &Span) -> Result<TExpr> {
    match ty {
        Type::Int { .. } | Type::Pointer(_) => Ok(TExpr { kind: TKind::Load(Box::new(addr)), ty, span: span.clone() }),
        // The address itself, whatever computed it (Offset keeps the
        // computation's own type for the code generator).
        Type::Struct(_) | Type::Array(..) => {
            Ok(TExpr { kind: TKind::Offset(Box::new(addr), 0), ty, span: span.clone() })
        }
        _ => Err(CompileError::new("D_DEREF_VOID", span, "cannot dereference pointer to type void")),
    }
}

/// A bit-field's value: the bytes that hold it, shifted down and masked
/// (signed fields sign-extended by shifting up and back down).
fn bitfield(addr: TExpr, ty: Type, shift: u32, bits: u32, span: &Span) -> TExpr {
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

/// Bytes a variable of this type occupies (8-byte aligned).
pub(crate) fn var_bytes(ty: &Type, strsize: usize) -> usize {
    ty.by_reference_size(strsize).map_or(8, |n| n.next_multiple_of(8))
}

/// What a printf conversion sees of a D type.
fn arg_class(ty: &Type) -> ArgClass {
    match ty {
        Type::String => ArgClass::String,
        Type::Int { size, signed, .. } => ArgClass::Integer { size: *size, signed: *signed },
        Type::Pointer(_) => ArgClass::Pointer,
        Type::Void | Type::Struct(_) | Type::Array(..) | Type::Stack => ArgClass::Other,
    }
}

fn check_printf_args(action: &str, format: &printf::Format, values: &[TExpr], span: &Span) -> Result<()> {
    if format.is_empty() {
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
            let Some(arg) = values.get(next) else {
                let message = if is_star {
                    conv.missing_star_message(action, precision)
                } else {
                    conv.missing_value_message(action)
                };
                return Err(CompileError::new("D_PRINTF_ARG_PROTO", span, message));
            };
            let class = arg_class(&arg.ty);
            if is_star && !printf::Conversion::star_accepts(&class) {
                return Err(CompileError::new(
                    "D_PRINTF_ARG_TYPE",
                    &arg.span,
                    conv.incompatible_star_message(action, next + 2, precision, &arg.ty.name()),
                ));
            }
            if !is_star && !conv.accepts(&class) {
                return Err(CompileError::new(
                    "D_PRINTF_ARG_TYPE",
                    &arg.span,
                    conv.incompatible_message(action, Some(next + 2), &arg.ty.name()),
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

fn builtin(name: &str) -> Option<(Builtin, Type)> {
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
        "stackdepth" => (Builtin::Stackdepth, Type::Int { size: 4, signed: false, name: "uint32_t" }),
        _ => return None,
    })
}

/// C's type of an integer constant: the first of int, long (and their
/// unsigned forms for hex/octal or a `u` suffix) that holds the value.
fn int_constant_type(value: u64, suffix: ast::IntSuffix, decimal: bool) -> Type {
    let fits_int = value <= i32::MAX as u64;
    let fits_uint = value <= u32::MAX as u64;
    let fits_long = value <= i64::MAX as u64;
    match (suffix.unsigned, suffix.long) {
        (false, 0) if fits_int => Type::INT,
        (false, 0) if !decimal && fits_uint => Type::UINT,
        (true, 0) if fits_uint => Type::UINT,
        (false, _) if fits_long => Type::Int { size: 8, signed: true, name: "long" },
        _ => Type::Int { size: 8, signed: false, name: "unsigned long" },
    }
}

/// Integer promotion: anything narrower than int becomes int.
fn promote(ty: &Type) -> Type {
    match ty {
        Type::Int { size, .. } if *size < 4 => Type::INT,
        other => other.clone(),
    }
}

/// C's usual arithmetic conversions.
fn arith_result(a: &Type, b: &Type) -> Type {
    let (a, b) = (promote(a), promote(b));
    match (&a, &b) {
        (Type::Int { size: sa, signed: ga, .. }, Type::Int { size: sb, signed: gb, .. }) => {
            if sa > sb {
                a.clone()
            } else if sb > sa {
                b.clone()
            } else if !ga {
                a.clone()
            } else if !gb {
                b.clone()
            } else {
                a.clone()
            }
        }
        _ => a,
    }
}

/// D's built-in integer types spelled with C keywords.
fn int_type_from_words(words: &[&str]) -> Option<Type> {
    let unsigned = words.contains(&"unsigned");
    let longs = words.iter().filter(|w| **w == "long").count();
    let (size, name_s, name_u) = if words.contains(&"char") {
        (1, "char", "unsigned char")
    } else if words.contains(&"short") {
        (2, "short", "unsigned short")
    } else if longs >= 2 {
        (8, "long long", "unsigned long long")
    } else if longs == 1 {
        (8, "long", "unsigned long")
    } else if words.contains(&"void") {
        return Some(Type::Void);
    } else {
        (4, "int", "unsigned int")
    };
    Some(Type::Int { size, signed: !unsigned, name: if unsigned { name_u } else { name_s } })
}

/// Whether D knows `name` as a type name (for the parser).
pub(crate) fn is_type_name(name: &str) -> bool {
    named_type(name).is_some() || kernel_typedef(name).is_some()
}

/// D's predefined typedefs of kernel structs: the struct's name in the
/// running kernel's BTF.
fn kernel_typedef(name: &str) -> Option<&'static str> {
    match name {
        "in6_addr_t" => Some("in6_addr"),
        _ => None,
    }
}

/// D's predefined typedefs for integers, and `string`.
pub(crate) fn named_type(name: &str) -> Option<Type> {
    let t = |size, signed, name| Some(Type::Int { size, signed, name });
    match name {
        "string" => Some(Type::String),
        "int8_t" => t(1, true, "int8_t"),
        "int16_t" => t(2, true, "int16_t"),
        "int32_t" => t(4, true, "int32_t"),
        "int64_t" => t(8, true, "int64_t"),
        "uint8_t" => t(1, false, "uint8_t"),
        "uint16_t" => t(2, false, "uint16_t"),
        "uint32_t" => t(4, false, "uint32_t"),
        "uint64_t" => t(8, false, "uint64_t"),
        "intptr_t" => t(8, true, "intptr_t"),
        "uintptr_t" => t(8, false, "uintptr_t"),
        "size_t" => t(8, false, "size_t"),
        "ssize_t" => t(8, true, "ssize_t"),
        "off_t" => t(8, true, "off_t"),
        "pid_t" => t(4, true, "pid_t"),
        "id_t" => t(4, true, "id_t"),
        "uid_t" => t(4, false, "uid_t"),
        "gid_t" => t(4, false, "gid_t"),
        "uint_t" => t(4, false, "uint_t"),
        "uchar_t" => t(1, false, "uchar_t"),
        "ushort_t" => t(2, false, "ushort_t"),
        "ulong_t" => t(8, false, "ulong_t"),
        "u_longlong_t" => t(8, false, "u_longlong_t"),
        "longlong_t" => t(8, true, "longlong_t"),
        "processorid_t" => t(4, true, "processorid_t"),
        "hrtime_t" => t(8, true, "hrtime_t"),
        "ipaddr_t" => t(4, false, "ipaddr_t"),
        "dev_t" => t(8, false, "dev_t"),
        _ => None,
    }
}

fn unsafe_free_getuid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

fn unop_text(op: UnOp) -> &'static str {
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
