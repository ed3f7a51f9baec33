//! What D programs declare besides variables: structs, unions and enums,
//! typedefs, `inline` constants and translators (with `xlate`), both from
//! scripts and from the D library files in `d-library/` that define
//! `psinfo_t`, `curpsinfo` and the other stable types.
//!
//! Translators are checked where a script uses one of their members, with
//! the translator's input bound to the `xlate` operand, so a library
//! translator costs nothing (no kernel type is read) until it is used.

use std::collections::HashMap;
use std::rc::Rc;

use super::expr::{builtin, const_int};
use super::types::{named_type, type_size};
use super::*;
use crate::provider::ProbeArg;

/// Everything declared in D so far, in every source and library file.
#[derive(Default)]
pub(super) struct Declared {
    typedefs: HashMap<String, Type>,
    records: HashMap<(String, bool), Rc<Record>>,
    /// Structs the D library defines (struct timespec): a script may define
    /// its own, as a kernel type may be redefined in D (`#include <time.h>`).
    library_records: std::collections::HashSet<(String, bool)>,
    /// Whether the D library is being read.
    in_library: bool,
    /// Enumerators: `enum e { A, B = 5 }` declares A = 0 and B = 5, of
    /// type `enum e` (an int).
    constants: HashMap<String, (i64, Type)>,
    /// Each named enum's enumerators by value, by its type's name (`enum e`).
    enums: HashMap<&'static str, Vec<(i64, String)>>,
    inlines: HashMap<String, Inline>,
    translators: Vec<Translator>,
    /// Translator members being checked (a member defined through itself
    /// would otherwise recurse without end).
    translating: Vec<(usize, String)>,
    /// Inline expansions made so far (see `Inline::checked`).
    inline_expansions: u64,
}

struct Inline {
    /// The declared type: the D library's is resolved where the inline is
    /// first used, as it may name kernel types (reading the kernel's BTF
    /// for a script that uses none would cost every start-up ~4 ms).
    ty: Option<Type>,
    declared_ty: ast::TypeName,
    /// `inline string name[int32_t s] = ...`: the parameters, checked where
    /// the inline is used (`name[e]`) with each bound to its argument.
    params: Vec<(ast::TypeName, String)>,
    value: ast::Expr,
    /// From the D library: errors in it are reported where it is used.
    library: bool,
    /// A script's inline, checked once where it is defined, and how many
    /// inline expansions its value holds: each use is a copy, never a new
    /// check, so chains of inlines cost their size, not 2^depth checks.
    checked: Option<(TExpr, u64)>,
}

/// The most inline expansions one inline's value may hold. Past it the
/// program could never load (and copying it would exhaust memory).
const MAX_INLINE_EXPANSIONS: u64 = 1 << 16;

pub(super) struct Translator {
    output: Rc<Record>,
    /// The input type as written, resolved (kernel types read) on first use.
    input_decl: ast::TypeName,
    input: Option<Type>,
    param: String,
    members: HashMap<String, ast::Expr>,
    /// From the D library: errors in it are reported where it is used.
    library: bool,
}

impl Checker<'_> {
    /// Loads the D library files (parsed, not yet type-checked against the
    /// kernel: translators are checked when used).
    pub(crate) fn load_library(&mut self, library: &[(String, ast::Program)]) -> Result<()> {
        self.declared.in_library = true;
        let loaded = self.load_library_items(library);
        self.declared.in_library = false;
        loaded
    }

    fn load_library_items(&mut self, library: &[(String, ast::Program)]) -> Result<()> {
        for (_, program) in library {
            for item in &program.items {
                match item {
                    ast::Item::Decl(decl) => self.declaration(decl)?,
                    ast::Item::Inline(def) => self.inline(def, false)?,
                    ast::Item::Translator(def) => self.translator(def, true)?,
                    ast::Item::Clause(_) | ast::Item::Pragma { .. } | ast::Item::Provider(_) => {}
                }
            }
        }
        Ok(())
    }

    pub(super) fn typedef(&mut self, decl: &ast::Decl, base: Type) -> Result<()> {
        for d in &decl.declarators {
            let Some(name) = &d.name else { continue };
            // `typedef struct foo { ... } foo_t;`: the struct is foo_t.
            let ty = match self.declarator_type(base.clone(), &d.ops, &d.span)? {
                Type::Struct(r) if r.typedef.is_none() => {
                    Type::Struct(Rc::new(Record { typedef: Some(name.clone()), ..(*r).clone() }))
                }
                ty => ty,
            };
            // dt_node_decl's words for a typedef's name taken by a type.
            if self.declared.typedefs.get(name).is_some_and(|old| *old != ty) {
                return Err(CompileError::new("D_DECL_IDRED", &d.span, format!("typedef redeclared: {name}")));
            }
            self.declared.typedefs.insert(name.clone(), ty);
        }
        Ok(())
    }

    /// The struct a D typedef names (tests compare D's layouts with C's).
    #[cfg(test)]
    pub(crate) fn declared_struct(&self, typedef: &str) -> Option<Rc<Record>> {
        match self.declared.typedefs.get(typedef)? {
            Type::Struct(r) => Some(r.clone()),
            _ => None,
        }
    }

    pub(super) fn typedef_named(&self, name: &str) -> Option<Type> {
        self.declared_typedef(name).or_else(|| named_type(name))
    }

    /// A typedef the script or the D library declared.
    pub(super) fn declared_typedef(&self, name: &str) -> Option<Type> {
        self.declared.typedefs.get(name).cloned()
    }

    /// A struct or union type: declared in D (a body declares it), else the kernel's.
    pub(super) fn record_type(&mut self, spec: &ast::RecordSpec, union: bool, span: &Span) -> Result<Type> {
        let Some(members) = &spec.members else {
            let name = spec.name.as_deref().unwrap_or_default();
            // `struct D`foo` is the script's (D's own scope) and
            // `struct vmlinux`task_struct` the kernel's.
            let (scope, name) = match name.split_once('`') {
                Some((scope, bare)) => (Some(scope), bare),
                None => (None, name),
            };
            if scope.is_some_and(|m| m != "D") {
                return Ok(Type::Struct(self.kernel_record(name, union, span)?));
            }
            if let Some(r) = self.declared.records.get(&(name.to_string(), union)) {
                return Ok(Type::Struct(r.clone()));
            }
            // A struct neither D nor the kernel declares is declared forward
            // (dt_decl_type's forward tag): pointers to it are fine, its
            // size and members are not, until a definition completes it.
            if !name.is_empty() && matches!(self.kernel_btf.record(name, union), Ok(None)) {
                let forward =
                    Record { name: name.to_string(), typedef: None, union, size: 0, body: RecordBody::Forward };
                let forward = Rc::new(forward);
                self.declared.records.insert((name.to_string(), union), forward.clone());
                return Ok(Type::Struct(forward));
            }
            return Ok(Type::Struct(self.kernel_record(name, union, span)?));
        };
        let key = (spec.name.clone().unwrap_or_default(), union);
        if !key.0.is_empty() && !self.declared.records.contains_key(&key) {
            let forward = Record { name: key.0.clone(), typedef: None, union, size: 0, body: RecordBody::Forward };
            self.declared.records.insert(key.clone(), Rc::new(forward));
        }
        let laid_out = self.lay_out(members, union);
        if laid_out.is_err() && self.declared.records.get(&key).is_some_and(|r| r.body == RecordBody::Forward) {
            self.declared.records.remove(&key);
        }
        let (laid_out, size) = laid_out?;
        let name = spec.name.clone().unwrap_or_default();
        let record = Rc::new(Record { name: name.clone(), typedef: None, union, size, body: RecordBody::D(laid_out) });
        if !name.is_empty() {
            let key = (name.clone(), union);
            let declared = self.declared.records.get(&key);
            let shadows_library = self.declared.library_records.remove(&key);
            if declared.is_some_and(|r| r.body != RecordBody::Forward) && !shadows_library {
                let kind = if union { "union" } else { "struct" };
                return Err(CompileError::new("D_DECL_TYPERED", span, format!("type redeclared: {kind} {name}")));
            }
            if self.declared.in_library {
                self.declared.library_records.insert(key.clone());
            }
            self.declared.records.insert(key, record.clone());
        }
        Ok(Type::Struct(record))
    }

    /// The layout DTrace gives a struct's or union's members (CTF's): the
    /// members and the size in bytes.
    fn lay_out(&mut self, members: &[ast::MemberDecl], union: bool) -> Result<(Vec<DMember>, usize)> {
        let mut laid_out: Vec<DMember> = Vec::new();
        // Positions in bits: where the last member's bits end.
        let (mut bits_used, mut size) = (0usize, 0usize);
        for (i, m) in members.iter().enumerate() {
            let base = match self.type_spec(&m.spec, &m.span) {
                // A struct no one declared is incomplete here, as DTrace
                // declares it forward (struct/err.D_DECL_INCOMPLETE.simple).
                Err(e) if e.tag == "D_TYPE_ERR" && m.declarator.ops.is_empty() && names_a_record(&m.spec) => {
                    return Err(CompileError::new(
                        "D_DECL_INCOMPLETE",
                        &m.span,
                        format!(
                            "incomplete struct/union/enum {}: {}",
                            e.message
                                .trim_start_matches("failed to resolve type ")
                                .trim_end_matches(": Unknown type name"),
                            m.declarator.name.as_deref().unwrap_or("(anon)")
                        ),
                    ))
                }
                other => other?,
            };
            // `int f();` as a member: a function has no bytes (dt_decl_member).
            if let Some(ast::DeclOp::Function(_)) = m.declarator.ops.first() {
                let name = m.declarator.name.as_deref().unwrap_or("(anon)");
                return Err(CompileError::new("D_DECL_VOIDOBJ", &m.span, format!("cannot have void member: {name}")));
            }
            let ty = match m.declarator.ops.split_first() {
                // C's flexible array member (`uint64_t e3[];`, last): no
                // bytes of its own, indexed past the struct's end.
                Some((ast::DeclOp::Array(None), outer)) if i + 1 == members.len() && !union => {
                    Type::Array(Box::new(self.declarator_type(base, outer, &m.span)?), 0)
                }
                _ => self.declarator_type(base, &m.declarator.ops, &m.span)?,
            };
            if let Type::Struct(r) = &ty {
                if r.body == RecordBody::Forward {
                    return Err(CompileError::new(
                        "D_DECL_INCOMPLETE",
                        &m.span,
                        format!(
                            "incomplete struct/union/enum {}: {}",
                            ty.name(),
                            m.declarator.name.as_deref().unwrap_or("(anon)")
                        ),
                    ));
                }
            }
            let (member_size, member_align) = (type_size(&ty, self.opts.strsize), self.type_align(&ty));
            let width = match &m.bits {
                Some(bits) => {
                    let width = self.constant_value(bits)?;
                    // dt_decl_member: a named bit-field needs a positive width.
                    if width < 0 || (width == 0 && m.declarator.name.is_some()) {
                        return Err(CompileError::new(
                            "D_DECL_BFCONST",
                            &m.span,
                            "positive integral constant expression expected as bit-field size",
                        ));
                    }
                    // Floating-point types are Type::Int here (sized, not computed).
                    let floating = matches!(ty, Type::Int { name: "float" | "double" | "long double", .. });
                    if !ty.is_int() || floating {
                        return Err(CompileError::new(
                            "D_DECL_BFTYPE",
                            &m.span,
                            // dt_decl_member names the member, not its type.
                            format!("invalid type for bit-field: {}", m.declarator.name.as_deref().unwrap_or("(anon)")),
                        ));
                    }
                    if width as usize > 8 * member_size {
                        return Err(CompileError::new(
                            "D_DECL_BFSIZE",
                            &m.span,
                            format!("bit-field too big for type: {}", m.declarator.name.as_deref().unwrap_or("(anon)")),
                        ));
                    }
                    Some(width as usize)
                }
                None => None,
            };
            // A bit-field's type is an integer of the bytes its width needs,
            // rounded to a power of two (ctf_add_integer), aligned as that.
            let (ty, member_size, member_align) = match width {
                Some(w) => {
                    let unit = if w == 0 { 0 } else { w.div_ceil(8).next_power_of_two() };
                    let Type::Int { signed, name, .. } = ty else { unreachable!("checked an integer") };
                    (Type::Int { size: unit as u8, signed, name }, unit, unit)
                }
                None => (ty, member_size, member_align),
            };
            // CTF's layout, which DTrace's declarations get (ctf_add_member):
            // each member starts at the first byte past the last one's bits,
            // aligned for its type, so bit-fields never share bytes.
            let start = if union { 0 } else { bits_used.div_ceil(8).next_multiple_of(member_align.max(1)) * 8 };
            let end = start + width.unwrap_or(8 * member_size);
            // The record ends with its last member's type (no padding after).
            size = if union { size.max(member_size) } else { start / 8 + member_size };
            bits_used = if union { bits_used.max(end) } else { end };
            let Some(name) = &m.declarator.name else {
                // An anonymous struct or union: its members are reached as
                // the enclosing struct's, as in C11 and DTrace.
                if let (None, Type::Struct(inner)) = (width, &ty) {
                    if let RecordBody::D(members) = &inner.body {
                        for inner_member in members {
                            if laid_out.iter().any(|o| o.name == inner_member.name) {
                                return Err(CompileError::new(
                                    "D_UNKNOWN",
                                    &m.span,
                                    format!(
                                        "failed to define member '{}': Duplicate member or variable name",
                                        inner_member.name
                                    ),
                                ));
                            }
                            let offset = start / 8 + inner_member.offset;
                            laid_out.push(DMember { offset, ..inner_member.clone() });
                        }
                    }
                }
                continue;
            };
            if laid_out.iter().any(|o| &o.name == name) {
                return Err(CompileError::new(
                    "D_UNKNOWN",
                    &m.span,
                    format!("failed to define member '{name}': Duplicate member or variable name"),
                ));
            }
            // A bit-field is read through its type's bytes, from their first bit.
            let (offset, bitfield) = (start / 8, width.map(|w| (0, w as u32)));
            laid_out.push(DMember { name: name.clone(), offset, ty, bitfield });
        }
        Ok((laid_out, size))
    }

    /// An enum type; a body declares its enumerators as integer constants
    /// of it. A named enum is an int named `enum e` (print() shows its
    /// values by name); a reference names a D enum or the kernel's.
    pub(super) fn enum_type(&mut self, spec: &ast::EnumSpec) -> Result<Type> {
        let ty = match &spec.name {
            Some(name) => {
                Type::Int { size: 4, signed: true, name: crate::sema::kernel_btf::intern(format!("enum {name}")) }
            }
            None => Type::INT,
        };
        let Type::Int { name: type_name, .. } = ty else { unreachable!("an enum is an int") };
        let mut enumerators = Vec::new();
        let mut next = 0i64;
        for (name, value, span) in spec.values.iter().flatten() {
            if let Some(value) = value {
                // dt_decl_enumerator: an integral constant, which may name
                // the enumerators before it.
                let checked = self.expr(value)?;
                next = match (super::expr::folded(&checked), checked.ty.is_int()) {
                    (Some(v), true) => v as i64,
                    _ => {
                        return Err(CompileError::new(
                            "D_DECL_ENCONST",
                            span,
                            format!("enumerator '{name}' must be assigned to an integral constant expression"),
                        ))
                    }
                };
            }
            // Enumerators are ints (dt_decl.c's limits and wording).
            // dt_decl_enumerator names INT_MAX for values below INT_MIN too.
            if i32::try_from(next).is_err() {
                return Err(CompileError::new(
                    "D_DECL_ENOFLOW",
                    span,
                    format!("enumerator '{name}' value overflows INT_MAX ({})", i32::MAX),
                ));
            }
            // Twice in one enum: CTF refuses the second (dt_decl_enumerator).
            if enumerators.iter().any(|(_, known)| known == name) {
                return Err(CompileError::new(
                    "D_UNKNOWN",
                    span,
                    format!("failed to define enumerator '{name}': Duplicate member or variable name"),
                ));
            }
            if self.declared.constants.contains_key(name) || builtin(name).is_some() {
                return Err(CompileError::new("D_DECL_IDRED", span, format!("identifier redeclared: {name}")));
            }
            self.declared.constants.insert(name.clone(), (next, ty.clone()));
            enumerators.push((next, name.clone()));
            next += 1;
        }
        if spec.values.is_some() && spec.name.is_some() {
            self.declared.enums.insert(type_name, enumerators);
        }
        Ok(ty)
    }

    /// The enumerators of an enum type (D's or the kernel's), for print().
    pub(super) fn enumerators(&mut self, type_name: &str) -> Option<Vec<(i64, String)>> {
        if let Some(known) = self.declared.enums.get(type_name) {
            return Some(known.clone());
        }
        self.kernel_btf.enumerators(type_name.strip_prefix("enum ")?)
    }

    /// An integer constant expression (enumerator values, array sizes).
    fn constant_value(&mut self, e: &ast::Expr) -> Result<i64> {
        let checked = self.expr(e)?;
        if let Some(v) = super::expr::folded(&checked).filter(|_| checked.ty.is_int()) {
            return Ok(v as i64);
        }
        match checked {
            TExpr { kind: TKind::Int(v), .. } => Ok(v as i64),
            _ => const_int(e)
                .ok_or_else(|| CompileError::new("D_DECL_ARRSUB", &e.span, "integer constant expression required")),
        }
    }

    /// The type a declarator makes of `base`: `*p` a pointer, `a[4]` an array.
    pub(super) fn declarator_type(&mut self, base: Type, ops: &[ast::DeclOp], span: &Span) -> Result<Type> {
        let mut ty = base;
        // Operators are listed from the name outwards, so the last applies first.
        let mut ops = ops.iter().rev().peekable();
        while let Some(op) = ops.next() {
            ty = match op {
                // A pointer to a function (`void (*g)();`, a struct member):
                // D cannot call it, so it is an address, as BTF's are read.
                ast::DeclOp::Function(params) if matches!(ops.peek(), Some(ast::DeclOp::Pointer)) => {
                    self.function_prototype(params)?;
                    ops.next();
                    Type::Pointer(Box::new(Type::Void))
                }
                ast::DeclOp::Pointer => Type::Pointer(Box::new(ty)),
                // dt_decl_array's checks, in its order.
                ast::DeclOp::Array(Some(len)) => {
                    if ty == Type::Void {
                        return Err(CompileError::new("D_DECL_VOIDOBJ", span, "cannot declare array of void"));
                    }
                    let len = self.constant_value(len)?;
                    if len <= 0 {
                        return Err(CompileError::new(
                            "D_DECL_ARRSUB",
                            span,
                            "positive integral constant expression or tuple signature expected as array declaration \
                             subscript",
                        ));
                    }
                    if len > i64::from(u32::MAX) {
                        return Err(CompileError::new("D_DECL_ARRBIG", span, "array dimension too big"));
                    }
                    Type::Array(Box::new(ty), len as usize)
                }
                ast::DeclOp::Function(params) => {
                    self.function_prototype(params)?;
                    return Err(CompileError::new(
                        "D_DECL_ARRNULL",
                        span,
                        "declarations of this form are not supported",
                    ));
                }
                _ => {
                    return Err(CompileError::new(
                        "D_DECL_ARRNULL",
                        span,
                        "declarations of this form are not supported",
                    ))
                }
            };
        }
        Ok(ty)
    }

    /// Checks an `extern` declaration of a kernel symbol (`extern int
    /// a[];`, `extern int *(*f)(void);`): its types must exist and a
    /// function's prototype be well formed. The symbol itself is typed
    /// from the kernel's BTF where a script names it.
    pub(super) fn extern_declarator(&mut self, base: Type, ops: &[ast::DeclOp], span: &Span) -> Result<()> {
        for op in ops {
            match op {
                ast::DeclOp::Pointer | ast::DeclOp::Array(None) => {}
                ast::DeclOp::Array(Some(len)) => {
                    if self.constant_value(len)? <= 0 {
                        return Err(CompileError::new("D_DECL_ARRSUB", span, "array dimension must be positive"));
                    }
                }
                ast::DeclOp::Function(params) => self.function_prototype(params)?,
                ast::DeclOp::AssocArray(_) => {
                    return Err(CompileError::new(
                        "D_DECL_CLASS",
                        span,
                        "associative arrays may not be declared as extern",
                    ))
                }
            }
        }
        if base == Type::Void && !ops.iter().any(|op| matches!(op, ast::DeclOp::Pointer | ast::DeclOp::Function(_))) {
            return Err(CompileError::new("D_DECL_VOIDOBJ", span, "cannot declare void object"));
        }
        Ok(())
    }

    /// A function prototype's parameters, as dt_decl_prototype checks
    /// them: no dynamic (associative array) types, void only alone.
    fn function_prototype(&mut self, params: &[ast::TypeName]) -> Result<()> {
        let mut voids = 0;
        for (i, p) in params.iter().enumerate() {
            if p.ops.iter().any(|op| matches!(op, ast::DeclOp::AssocArray(_))) {
                // The parameter's name, where written, is the last word
                // before its dimensions (its span covers it).
                let text = self.text.get(p.span.clone()).unwrap_or_default();
                let declarator = text.split('[').next().unwrap_or_default();
                let name = declarator
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .rfind(|w| !w.is_empty())
                    .filter(|w| self.typedef_named(w).is_none() && crate::syntax::Keyword::from_word(w).is_none())
                    .unwrap_or("(anonymous)");
                return Err(CompileError::new(
                    "D_DECL_PROTO_TYPE",
                    &p.span,
                    format!(
                        "function prototype may not use parameter of type dynamic variable: {name}, parameter #{}",
                        i + 1
                    ),
                ));
            }
            let ty = self.type_name(p)?;
            voids += usize::from(ty == Type::Void);
        }
        if voids > 0 && params.len() > 1 {
            let span = &params[0].span;
            return Err(CompileError::new("D_DECL_PROTO_VOID", span, "void must be sole parameter"));
        }
        Ok(())
    }

    /// Whether `name` is an enumerator or an inline.
    pub(super) fn declares_value(&self, name: &str) -> bool {
        self.declared.constants.contains_key(name) || self.declared.inlines.contains_key(name)
    }

    /// The value of the enumerator or inline `name` (see `declares_value`).
    pub(super) fn declared_value(&mut self, name: &str, span: &Span) -> Result<TExpr> {
        if let Some((v, ty)) = self.declared.constants.get(name) {
            return Ok(TExpr { kind: TKind::Int(*v as u64), ty: ty.clone(), span: span.clone() });
        }
        let inline = &self.declared.inlines[name];
        if !inline.params.is_empty() {
            return Err(CompileError::new(
                "D_IDENT_UNDEF",
                span,
                format!("{name} takes {} argument(s): use {name}[...]", inline.params.len()),
            ));
        }
        if let Some((value, expansions)) = &inline.checked {
            let value = TExpr { span: span.clone(), ..value.clone() };
            self.declared.inline_expansions += expansions;
            return Ok(value);
        }
        let (value, library) = (inline.value.clone(), inline.library);
        let ty = self.inline_type(name).map_err(|e| if library { e.at(span) } else { e })?;
        let value = self.expr_any(&value).map_err(|e| if library { e.at(span) } else { e })?;
        convert(value, ty, span)
    }

    /// `inline type name = value;`. A script's inline is checked here, as
    /// DTrace does, before its name exists (so it cannot refer to itself);
    /// the D library's only where used, as they name kernel types.
    pub(super) fn inline(&mut self, def: &ast::InlineDef, check_now: bool) -> Result<()> {
        let ty = if check_now {
            let base = self.type_spec(&def.ty.spec, &def.ty.span)?;
            Some(self.declarator_type(base, &def.ty.ops, &def.ty.span)?)
        } else {
            None
        };
        if let Some(previous) = self.global_identifier_kind(&def.name) {
            // dt_node_inline's words: dt_idkind_name, then "inline" for one.
            return Err(CompileError::new(
                "D_DECL_IDRED",
                &def.span,
                format!("identifier redefined: {}\n\t current: inline definition\n\tprevious: {previous}", def.name),
            ));
        }
        let checked = if let (Some(ty), true) = (&ty, def.params.is_empty()) {
            let before = self.declared.inline_expansions;
            let value = self.expr_any(&def.value)?;
            let value_ty = value.ty.name();
            let value = convert(value, ty.clone(), &def.span).map_err(|e| match e.tag {
                "D_OP_INCOMPAT" => CompileError::new(
                    "D_OP_INCOMPAT",
                    &def.span,
                    format!(
                        "inline {} definition uses incompatible types: \"{}\" = \"{value_ty}\"",
                        def.name,
                        ty.name()
                    ),
                ),
                _ => e,
            })?;
            let expansions = 1 + (self.declared.inline_expansions - before);
            if expansions > MAX_INLINE_EXPANSIONS {
                return Err(CompileError::new(
                    "D_UNKNOWN",
                    &def.span,
                    format!("inline {} is too large: it expands to {expansions} inlines", def.name),
                ));
            }
            // A constant stays one node however many inlines made it.
            match (super::expr::folded(&value), &value.ty) {
                (Some(v), &Type::Int { size, signed, .. }) => {
                    Some((TExpr { kind: TKind::Int(fit_to_size(v, size, signed)), ..value }, 1))
                }
                _ => Some((value, expansions)),
            }
        } else {
            None
        };
        let library = !check_now;
        let params = def.params.clone();
        self.declared.inlines.insert(
            def.name.clone(),
            Inline { ty, declared_ty: def.ty.clone(), params, value: def.value.clone(), library, checked },
        );
        Ok(())
    }

    /// What global identifier `name` already is, in dt_idkind_name's words
    /// followed by "inline" for an inline (DTrace's global identifiers:
    /// built-in variables and functions, inlines, variables, enumerators).
    fn global_identifier_kind(&self, name: &str) -> Option<String> {
        let kind = if let Some(inline) = self.declared.inlines.get(name) {
            return Some(if inline.params.is_empty() { "scalar inline" } else { "associative array inline" }.into());
        } else if name == "args" || name == "uregs" {
            "associative array"
        } else if builtin(name).is_some() || self.lookup_var(super::super::check::Scope::Global, name).is_some() {
            "scalar"
        } else if super::actions::subroutine_signature(name).is_some() {
            "function"
        } else if super::actions::is_action(name) {
            "tracing function"
        } else if super::aggregations::is_aggregating_function(name) {
            "aggregating function"
        } else if self.program.assoc_arrays.iter().any(|a| a.name == name && !a.thread_local) {
            "associative array"
        } else if self.declared.constants.contains_key(name) {
            // dt_decl_enumerator inserts them as inlines.
            return Some("enumerator inline".into());
        } else {
            return None;
        };
        Some(format!("{kind} "))
    }

    /// The declared type of inline `name`, resolved on first use.
    fn inline_type(&mut self, name: &str) -> Result<Type> {
        let inline = &self.declared.inlines[name];
        if let Some(ty) = &inline.ty {
            return Ok(ty.clone());
        }
        let declared = inline.declared_ty.clone();
        let base = self.type_spec(&declared.spec, &declared.span)?;
        let ty = self.declarator_type(base, &declared.ops, &declared.span)?;
        self.declared.inlines.get_mut(name).expect("looked up above").ty = Some(ty.clone());
        Ok(ty)
    }

    /// Whether `name` is an inline with parameters (`name[e]` is its use).
    /// The parameter count of a parameterized inline of the D library,
    /// which a script calls as a function.
    pub(super) fn library_subroutine_params(&self, name: &str) -> Option<usize> {
        self.declared.inlines.get(name).filter(|i| i.library && !i.params.is_empty()).map(|i| i.params.len())
    }

    pub(super) fn inline_has_params(&self, name: &str) -> bool {
        self.declared.inlines.get(name).is_some_and(|i| !i.params.is_empty())
    }

    /// `name[a, b]` of `inline T name[T1 p, T2 q] = value`: the value with
    /// each parameter bound to its argument converted to the parameter's type.
    pub(super) fn inline_call(&mut self, name: &str, args: &[ast::Expr], span: &Span) -> Result<TExpr> {
        let inline = &self.declared.inlines[name];
        let (params, value, library) = (inline.params.clone(), inline.value.clone(), inline.library);
        let ty = self.inline_type(name).map_err(|e| if library { e.at(span) } else { e })?;
        if args.len() != params.len() {
            return Err(CompileError::new(
                "D_ARR_BADREF",
                span,
                format!("{name}[ ] takes {} argument(s), not {}", params.len(), args.len()),
            ));
        }
        let mut bound = Vec::new();
        for (i, ((param_ty, param), arg)) in params.iter().zip(args).enumerate() {
            let param_ty = self.type_name(param_ty)?;
            let arg_span = arg.span.clone();
            let arg = self.expr(arg)?;
            let arg_ty = arg.ty.name();
            let converted = convert(arg, param_ty.clone(), span).map_err(|e| {
                // A library subroutine's argument is checked as a prototype's.
                if library {
                    super::actions::incompatible_arg("D_PROTO_ARG", &arg_span, name, i + 1, &param_ty.name(), &arg_ty)
                } else {
                    e
                }
            })?;
            bound.push((param.clone(), converted));
        }
        let depth = self.bindings.len();
        self.bindings.extend(bound);
        let value = self.expr_any(&value).map_err(|e| if library { e.at(span) } else { e });
        self.bindings.truncate(depth);
        let value = convert(value?, ty, span)?;
        // Constant arguments make a constant, usable where D wants one.
        Ok(match (super::expr::folded(&value), &value.ty) {
            (Some(v), &Type::Int { size, signed, .. }) => {
                TExpr { kind: TKind::Int(fit_to_size(v, size, signed)), ..value }
            }
            _ => value,
        })
    }

    /// A translator declaration. DTrace creates it (dt_xlator_create) when
    /// its parser reduces the whole declaration, so the errors about the
    /// translator itself are on the line of its closing `};`; those in a
    /// member's value are on the member's.
    pub(super) fn translator(&mut self, def: &ast::TranslatorDef, library: bool) -> Result<()> {
        let end = def.span.end.saturating_sub(1)..def.span.end;
        let output = match self.type_spec(&def.output.spec, &def.output.span)? {
            Type::Struct(r) if def.output.ops.is_empty() && matches!(r.body, RecordBody::D(_)) => r,
            Type::Struct(r) if def.output.ops.is_empty() && matches!(r.body, RecordBody::Forward) => {
                return Err(CompileError::new(
                    "D_XLATE_SOU",
                    &end,
                    format!("incomplete struct/union/enum {}", Type::Struct(r).name()),
                ))
            }
            _ => {
                return Err(CompileError::new("D_XLATE_SOU", &end, "translator output type must be a struct or union"))
            }
        };
        let mut members = HashMap::new();
        for (name, value, _) in &def.members {
            if self.record_member(&output, name).is_none() {
                return Err(CompileError::new(
                    "D_XLATE_MEMB",
                    &end,
                    format!("translator member {name} is not a member of {}", Type::Struct(output.clone()).name()),
                ));
            }
            members.insert(name.clone(), value.clone());
        }
        // A script's translator is checked where it is declared, as DTrace
        // cooks each member (dt_xlator_create); the D library's where used,
        // as they name kernel types.
        let input = if library { None } else { Some(self.check_translator(def, &output, &end)?) };
        self.declared.translators.push(Translator {
            output,
            input_decl: def.input.clone(),
            input,
            param: def.input_name.clone(),
            members,
            library,
        });
        Ok(())
    }

    /// A script translator's input type and member values, checked: the
    /// input (a struct no one declared is declared forward, as a declaration
    /// does in C), no second translator for the same types, each member's
    /// value of a type its member takes. Returns the input type.
    fn check_translator(&mut self, def: &ast::TranslatorDef, output: &Rc<Record>, end: &Span) -> Result<Type> {
        if let ast::TypeSpec::Struct(spec) | ast::TypeSpec::Union(spec) = &def.input.spec {
            let union = matches!(def.input.spec, ast::TypeSpec::Union(_));
            let name = spec.name.clone().unwrap_or_default();
            let key = (name.clone(), union);
            if spec.members.is_none() && !name.is_empty() && !self.declared.records.contains_key(&key) {
                if self.kernel_btf.record(&name, union).ok().flatten().is_none() {
                    let forward = Record { name, typedef: None, union, size: 0, body: RecordBody::Forward };
                    self.declared.records.insert(key, Rc::new(forward));
                }
            }
        }
        let input = self.type_name(&def.input)?;
        for t in &self.declared.translators {
            // (The D library's translators resolve their input only when used.)
            let same_input = t.input.as_ref() == Some(&input);
            if Rc::ptr_eq(&t.output, output) && same_input {
                return Err(CompileError::new(
                    "D_XLATE_REDECL",
                    end,
                    format!(
                        "translator from {} to {} has already been declared",
                        input.name(),
                        Type::Struct(output.clone()).name()
                    ),
                ));
            }
        }
        let dummy = TExpr { kind: TKind::Int(0), ty: input.clone(), span: def.output.span.clone() };
        for (name, value, _) in &def.members {
            let member = self.record_member(output, name).expect("checked by the caller");
            self.bindings.push((def.input_name.clone(), dummy.clone()));
            let value = self.member_value(value, &member.ty);
            self.bindings.pop();
            let value = value?;
            if let TKind::Xlate { .. } = value.kind {
                continue;
            }
            // dt_node_is_argcompat: an integer is no pointer (but NULL).
            if matches!(member.ty, Type::Pointer(_)) && value.ty.is_int() && !matches!(value.kind, TKind::Int(0)) {
                return Err(CompileError::new(
                    "D_XLATE_INCOMPAT",
                    end,
                    format!(
                        "translator member {name} definition uses incompatible types: \"{}\" = \"{}\"",
                        member.ty.name(),
                        value.ty.name()
                    ),
                ));
            }
            translated_value(value, member.ty, name, end)?;
        }
        Ok(input)
    }

    fn record_member(&self, record: &Record, name: &str) -> Option<DMember> {
        match &record.body {
            RecordBody::D(members) => members.iter().find(|m| m.name == name).cloned(),
            RecordBody::Kernel(_) | RecordBody::Forward => None,
        }
    }

    /// C's alignment of a type (a string is a char array); a kernel
    /// struct's is its most aligned member's.
    fn type_align(&mut self, ty: &Type) -> usize {
        match ty {
            Type::Int { size, .. } => *size as usize,
            Type::Array(of, _) => self.type_align(of),
            Type::Struct(r) => {
                let fields = self.kernel_btf.fields(r).unwrap_or_default();
                fields.iter().filter_map(|f| f.ty.as_ref()).map(|t| self.type_align(t)).max().unwrap_or(1)
            }
            Type::String | Type::Void => 1,
            Type::Pointer(_) | Type::Stack | Type::Symbol(_) => 8,
        }
    }

    /// `ty`, with a struct named before its declaration was complete
    /// completed now.
    pub(super) fn resolved(&self, ty: Type) -> Type {
        match ty {
            Type::Struct(r) => Type::Struct(self.completed(r)),
            other => other,
        }
    }

    /// A struct named before its declaration was complete, completed now.
    pub(super) fn completed(&self, record: Rc<Record>) -> Rc<Record> {
        match record.body {
            RecordBody::Forward => {
                self.declared.records.get(&(record.name.clone(), record.union)).cloned().unwrap_or(record)
            }
            _ => record,
        }
    }

    /// `args[n]`: the typed argument the clause's probes describe (a D
    /// expression over arg0..arg9, checked here like an inline's value), or
    /// argN for providers whose arguments are untyped.
    pub(super) fn probe_arg(&mut self, keys: &[ast::Expr], span: &Span) -> Result<TExpr> {
        let member = self.arg_member.take();
        if let [key] = keys {
            // dt_idcook_args: the index must be an integer (constant).
            if matches!(key.kind, ast::ExprKind::Str(_)) {
                return Err(CompileError::new(
                    "D_PROTO_ARG",
                    &key.span,
                    "args[ ] argument #1 is incompatible with prototype:\n\tprototype: int\n\t argument: string",
                ));
            }
        }
        let n = match keys {
            [k] => const_int(k).filter(|n| (0..10).contains(n)),
            _ => None,
        };
        let Some(n) = n.map(|n| n as usize) else {
            return Err(CompileError::new("D_ARGS_IDX", span, "args[ ] index must be an integer constant from 0 to 9"));
        };
        let typed: Vec<Option<&'static [ProbeArg]>> =
            self.clause_probes.iter().map(|&id| self.registry.typed_args(id)).collect();
        let Some(Some(first)) = typed.first().copied() else {
            if typed.iter().any(Option::is_some) {
                return Err(unstable_args(&self.clause_desc, span));
            }
            self.program.uses_args = true;
            return Ok(TExpr { kind: TKind::Builtin(Builtin::Arg(n as u8)), ty: Type::INT64, span: span.clone() });
        };
        if typed.iter().any(|t| t.and_then(|t| t.get(n)) != first.get(n)) {
            return Err(unstable_args(&self.clause_desc, span));
        }
        let Some(arg) = first.get(n) else {
            return Err(CompileError::new(
                "D_ARGS_IDX",
                span,
                format!("index {n} is out of range for {} args[ ]", self.clause_desc),
            ));
        };
        for &id in &self.clause_probes {
            self.program.typed_args_used.insert((id, n));
            let members = self.program.typed_arg_members.entry((id, n)).or_insert_with(|| Some(Default::default()));
            match (members.as_mut(), &member) {
                (Some(read), Some(name)) => {
                    read.insert(name.clone());
                }
                _ => *members = None,
            }
        }
        let text = format!("inline {} __dt_arg = {};", arg.ty, arg.expr);
        let declared = |name: &str| is_type_name(name) || self.declared.typedefs.contains_key(name);
        let parsed = crate::syntax::parse(&text, &declared)
            .map_err(|e| CompileError::new("D_ARGS_TYPE", span, format!("args[{n}]: {}", e.message)))?;
        let Some(ast::Item::Inline(def)) = parsed.items.first() else {
            return Err(CompileError::new("D_ARGS_TYPE", span, format!("args[{n}] is not an expression")));
        };
        let ty = self.type_name(&def.ty).map_err(|e| e.at(span))?;
        let value = self.expr_any(&def.value).map_err(|e| e.at(span))?;
        // The value's spans point into `text`: report at args[n] instead.
        convert(TExpr { span: span.clone(), ..value }, ty, span)
    }

    /// `xlate <T *> (e)` or `xlate <T> (e)`: finds the translator to T from
    /// e's type. The result is usable only with `->` or `.`.
    pub(super) fn xlate(&mut self, target: &ast::TypeName, operand: &ast::Expr, span: &Span) -> Result<TExpr> {
        let base = self.type_spec(&target.spec, &target.span)?;
        let ty = self.declarator_type(base, &target.ops, &target.span)?;
        let output = match &ty {
            Type::Struct(r) => r.clone(),
            Type::Pointer(to) => match &**to {
                Type::Struct(r) => r.clone(),
                _ => return Err(xlate_type_error(&ty, span)),
            },
            _ => return Err(xlate_type_error(&ty, span)),
        };
        let input = self.expr(operand)?;
        // An exact match first, then (dt_xlator_lookup's DT_XLATE_FUZZY) a
        // translator whose input the operand may be passed as: any integer
        // for an integer, a void pointer for a pointer or the reverse.
        let mut compatible = None;
        for index in 0..self.declared.translators.len() {
            if self.declared.translators[index].output != output {
                continue;
            }
            let from = self.resolve_input(index)?;
            if from == input.ty {
                compatible = Some(index);
                break;
            }
            let void_pointer = |t: &Type| matches!(t, Type::Pointer(to) if **to == Type::Void);
            let passes = (from.is_int() && input.ty.is_int())
                || (matches!(from, Type::Pointer(_)) && void_pointer(&input.ty))
                || (void_pointer(&from) && matches!(input.ty, Type::Pointer(_)));
            if passes && compatible.is_none() {
                compatible = Some(index);
            }
        }
        if let Some(index) = compatible {
            return Ok(TExpr {
                kind: TKind::Xlate { translator: index, input: Box::new(input) },
                ty,
                span: span.clone(),
            });
        }
        Err(CompileError::new(
            "D_XLATE_NONE",
            span,
            format!("cannot translate from \"{}\" to \"{}\"", input.ty.name(), ty.name()),
        ))
    }

    /// The input type of translator `index`, reading a kernel struct the
    /// first time it is needed.
    fn resolve_input(&mut self, index: usize) -> Result<Type> {
        if let Some(ty) = &self.declared.translators[index].input {
            return Ok(ty.clone());
        }
        let decl = self.declared.translators[index].input_decl.clone();
        let base = self.type_spec(&decl.spec, &decl.span)?;
        let ty = self.declarator_type(base, &decl.ops, &decl.span)?;
        self.declared.translators[index].input = Some(ty.clone());
        Ok(ty)
    }

    /// `xlate<...>(e)->name`: the translator's expression for `name`, with
    /// its input bound to e, converted to the member's type.
    pub(super) fn translated_member(
        &mut self,
        translator: usize,
        input: TExpr,
        name: &str,
        span: &Span,
    ) -> Result<TExpr> {
        let t = &self.declared.translators[translator];
        // As in DTrace, a member the translator does not convert is reported
        // as such, whether or not the struct has it.
        let Some(value) = t.members.get(name).cloned() else {
            return Err(CompileError::new(
                "D_XLATE_NOCONV",
                span,
                format!("translator does not define conversion for member: {name}"),
            ));
        };
        let member = self.record_member(&t.output, name).expect("translator members are checked when declared");
        let this = (translator, name.to_string());
        if self.declared.translating.contains(&this) {
            return Err(CompileError::new(
                "D_XLATE_MEMB",
                span,
                format!("translator member {name} is defined in terms of itself"),
            ));
        }
        self.declared.translating.push(this);
        let library = t.library;
        self.bindings.push((t.param.clone(), input));
        let value = self.member_value(&value, &member.ty).map_err(|e| if library { e.at(span) } else { e });
        self.bindings.pop();
        self.declared.translating.pop();
        let value = value?;
        if let TKind::Xlate { .. } = value.kind {
            return Ok(value);
        }
        translated_value(value, member.ty, name, span)
    }

    /// `xlate <struct T> (input)` as a whole struct: each member the
    /// translator defines, at its offset (a member that is itself a
    /// translation, member by member); the others stay zero, as DTrace
    /// fills them.
    pub(super) fn translated_struct(
        &mut self,
        translator: usize,
        input: TExpr,
        ty: &Type,
        span: &Span,
    ) -> Result<TExpr> {
        let mut members = Vec::new();
        self.translated_members(translator, input, 0, &mut members, span)?;
        let size = match ty {
            Type::Struct(r) => r.size,
            _ => 0,
        };
        self.program.translated_struct_bytes = self.program.translated_struct_bytes.max(size);
        Ok(TExpr { kind: TKind::TranslatedStruct { size, members }, ty: ty.clone(), span: span.clone() })
    }

    fn translated_members(
        &mut self,
        translator: usize,
        input: TExpr,
        base: usize,
        out: &mut Vec<(usize, usize, TExpr)>,
        span: &Span,
    ) -> Result<()> {
        let t = &self.declared.translators[translator];
        let RecordBody::D(fields) = &t.output.body else { return Ok(()) };
        let strsize = self.opts.strsize;
        let defined: Vec<(String, usize, usize)> = fields
            .iter()
            .filter(|f| t.members.contains_key(&f.name) && f.bitfield.is_none())
            .map(|f| (f.name.clone(), f.offset, super::types::type_size(&f.ty, strsize)))
            .collect();
        for (name, offset, bytes) in defined {
            let value = self.translated_member(translator, input.clone(), &name, span)?;
            match value.kind {
                TKind::Xlate { translator: inner, input: inner_input } => {
                    self.translated_members(inner, *inner_input, base + offset, out, span)?
                }
                _ => out.push((base + offset, bytes, value)),
            }
        }
        Ok(())
    }

    /// A translator member's defining expression. A struct-typed member may
    /// be another translation to its type (`pr_start = xlate <timestruc_t>
    /// (ns)`), read through `.` as that translator's members.
    fn member_value(&mut self, value: &ast::Expr, member: &Type) -> Result<TExpr> {
        if !matches!(member, Type::Struct(_)) {
            return self.expr(value);
        }
        let typed = self.expr_any(value)?;
        match &typed.kind {
            TKind::Xlate { .. } if &typed.ty == member => Ok(typed),
            TKind::Xlate { .. } => self.expr(value),
            _ => Ok(typed),
        }
    }
}

/// A translator member's value as its member's type (a char array member
/// is a string), or D_XLATE_INCOMPAT.
fn translated_value(value: TExpr, member: Type, name: &str, span: &Span) -> Result<TExpr> {
    let ty = match member {
        Type::Array(elem, _) if matches!(*elem, Type::Int { size: 1, .. }) => Type::String,
        ty => ty,
    };
    let (want, got) = (ty.name(), value.ty.name());
    convert(value, ty, span).map_err(|_| {
        CompileError::new(
            "D_XLATE_INCOMPAT",
            span,
            format!("translator member {name} definition uses incompatible types: \"{want}\" = \"{got}\""),
        )
    })
}

fn unstable_args(desc: &str, span: &Span) -> CompileError {
    CompileError::new(
        "D_ARGS_MULTI",
        span,
        format!("args[ ] may not be referenced because probe description {desc} matches an unstable set of probes"),
    )
}

fn xlate_type_error(ty: &Type, span: &Span) -> CompileError {
    CompileError::new(
        "D_XLATE_SOU",
        span,
        format!("xlate output type must be a struct or union or a pointer to one: {}", ty.name()),
    )
}

/// `value` as a value of type `ty` (inline and translator member values).
fn convert(value: TExpr, ty: Type, span: &Span) -> Result<TExpr> {
    match (&ty, &value.ty) {
        (a, b) if a == b => Ok(value),
        (Type::Int { .. }, t) | (Type::Pointer(_), t @ (Type::Int { .. } | Type::Pointer(_))) if t.is_scalar() => {
            Ok(TExpr { kind: TKind::Cast(Box::new(value)), ty, span: span.clone() })
        }
        _ => Err(CompileError::new(
            "D_OP_INCOMPAT",
            span,
            format!("operands have incompatible types: \"{}\" = \"{}\"", ty.name(), value.ty.name()),
        )),
    }
}

/// `v` as a value of an integer type of `size` bytes: truncated, and sign-
/// extended to 64 bits when signed, as a cast of the constant would give it.
pub(super) fn fit_to_size(v: u64, size: u8, signed: bool) -> u64 {
    if size >= 8 {
        return v;
    }
    let bits = u32::from(size) * 8;
    let low = v & ((1u64 << bits) - 1);
    if signed && (low >> (bits - 1)) & 1 == 1 {
        low | !((1u64 << bits) - 1)
    } else {
        low
    }
}

/// Whether a member's type is `struct name` or `union name` without a body.
fn names_a_record(spec: &ast::TypeSpec) -> bool {
    matches!(spec, ast::TypeSpec::Struct(r) | ast::TypeSpec::Union(r) if r.members.is_none())
}
