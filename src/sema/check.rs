//! The type checker: resolves names, matches probe descriptions, applies
//! D's typing rules and builds the typed program (`ir::Program`) with the
//! record layout of every clause.
//!
//! Must not know BPF: code generation reads only the typed program.
//!
//! This file holds the checker itself and its entry points (`Checker::new`,
//! `check_items`, `finish`; `load_library` is in `decls`), the clause and
//! its record layout, variables, and the rules on the order of a clause's
//! actions (speculation). The rest is by concern, in `check/`: `types`
//! (type names, sizes, conversions), `expr` (expression typing), `actions`
//! (statements, actions, subroutines), `aggregations` and `decls` (what D
//! declares: structs, enums, typedefs, inlines, translators).

use std::collections::HashMap;

use super::ir::*;
use crate::defs::layout;
use crate::diag::{CompileError, Result};
use crate::provider::desc::{expand_macros, macro_variable, ProbeDesc};
use crate::provider::Registry;
use crate::sema::kernel_btf::KernelBtf;
use crate::syntax::ast::{self, Span, StmtKind};

mod actions;
mod aggregations;
mod decls;
mod expr;
#[cfg(test)]
mod tests;
pub(crate) mod types;
use types::copy_fits;
pub(crate) use types::{is_type_name, var_bytes};

/// What the checker needs from the command line.
pub(crate) struct CheckOptions<'a> {
    /// `$0`, `$1`, ...: the script name and its arguments.
    pub macro_args: &'a [String],
    /// -Z: descriptions that match nothing are allowed.
    pub zero_matches_ok: bool,
    /// Bytes of a string's buffer (flags::string_buffer_bytes).
    pub strsize: usize,
    /// The strsize option: the most characters a string holds.
    pub max_strlen: usize,
    /// Value of `$target` (-c/-p), if any.
    pub target_pid: Option<u32>,
    /// defaultargs: a macro argument not given is 0, or "" as `$$n`.
    pub defaultargs: bool,
    /// Frames of a stack() given no count (stackframes).
    pub stackframes: u32,
    /// Frames of a ustack() given no count (ustackframes).
    pub ustackframes: u32,
    /// Frames of a jstack() given no count (jstackframes).
    pub jstackframes: u32,
    /// Most frames of any stack()/ustack() (maxframes).
    pub maxframes: u32,
    /// Bytes of alloca() and copyin() memory per clause (scratchsize).
    pub scratchsize: usize,
    /// The tregs option: the most elements of a tuple, when set.
    pub tregs: Option<usize>,
    /// The empty option: a program without clauses or declarations compiles.
    pub empty: bool,
    /// The `version` option's (major, minor).
    pub d_version: (u32, u32),
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
    /// Source offset of each aggregation's first use; its line is counted
    /// only for a message (counting per use made many clauses quadratic).
    agg_first_uses: Vec<usize>,
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
    /// The member the `->` being checked reads, while its operand is a
    /// bare `args[n]` (Program::typed_arg_members).
    arg_member: Option<String>,
    /// The storage unit's address and type, shift and width of the last
    /// bit-field member read: where `lvalue` stores into one.
    last_bitfield: Option<(TExpr, Type, u32, u32)>,
    /// Whether each pointer variable assigned so far holds alloca()'d
    /// memory (true) or other memory (false): one may not hold both.
    alloca_vars: HashMap<Var, bool>,
    /// Checking the operand of `&` that is an array element: the address
    /// one past the last element may be taken (`&a[5]` of `int a[5]`).
    address_of_element: bool,
    /// The macro arguments ($n, $$n) the program references.
    pub(crate) macro_args_used: std::collections::BTreeSet<u32>,
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
    /// raise(), system(), copyout() and the others -w allows.
    Destructive,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Scope {
    Global,
    Thread,
    Clause,
}

impl<'a> Checker<'a> {
    pub(crate) fn new(opts: CheckOptions<'a>, registry: &'a mut Registry) -> Checker<'a> {
        let (strsize, max_strlen) = (opts.strsize, opts.max_strlen);
        Checker {
            opts,
            registry,
            // String constant 0 is the empty string, which generated code
            // falls back on; NULL_STRING is a NULL string.
            program: Program {
                strsize,
                max_strlen,
                strings: vec![Vec::new(), NULL_STRING_BYTES.to_vec()],
                ..Program::default()
            },
            var_index: HashMap::new(),
            actions_in_clause: 0,
            layouts: Vec::new(),
            record_offset: 0,
            region: "",
            matched: 0,
            text: String::new(),
            agg_first_uses: Vec::new(),
            kernel_btf: KernelBtf::default(),
            declared: decls::Declared::default(),
            bindings: Vec::new(),
            clause_alloca: 0,
            order: ActionOrder::default(),
            clause_probes: Vec::new(),
            clause_desc: String::new(),
            arg_member: None,
            macro_args_used: Default::default(),
            last_bitfield: None,
            alloca_vars: HashMap::new(),
            address_of_element: false,
        }
    }

    /// Checks the items of one parsed source; call once per -n/-s, in order.
    pub(crate) fn check_items(&mut self, ast: &ast::Program, text: &str) -> Result<()> {
        self.text = text.to_string();
        if ast.items.is_empty() && !self.opts.empty {
            // At the end of the source, as DTrace's parser finds it.
            let end = text.len()..text.len();
            return Err(CompileError::new("D_EMPTY", &end, "empty D program translation unit"));
        }
        for item in &ast.items {
            match item {
                ast::Item::Clause(clause) => self.clause(clause)?,
                ast::Item::Pragma { .. } => {} // options are applied by the caller
                // A provider's probes are the application's (dtrace -h, -G);
                // here their argument types must be types.
                // Their types become the args[] of the USDT probes of that
                // provider (DTrace reads them from the program it built).
                ast::Item::Provider(def) => {
                    let mut probes = Vec::new();
                    for probe in &def.probes {
                        let mut types = Vec::new();
                        for ty in &probe.args {
                            types.push(self.type_name(ty)?.name());
                        }
                        for ty in probe.translated.iter().flatten() {
                            self.type_name(ty)?;
                        }
                        probes.push((probe.name.replace("__", "-"), types));
                    }
                    self.registry.declare_provider(&def.name, &probes);
                }
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

    /// `desc` as a USDT description of one process whose provider may
    /// appear later: `name<pid>`, or a provider named without a pid (the
    /// target's), where no provider has the name.
    fn usdt_provider_to_come(&self, desc: &ProbeDesc, target: Option<u32>) -> Option<ProbeDesc> {
        let (name, pid) = crate::provider::desc::split_pid(&desc.provider);
        // Globs that match nothing were retained already, so `desc` names one provider.
        if name.is_empty() || self.registry.has_provider(name) {
            return None;
        }
        match (pid, target) {
            (Some(_), _) if !self.registry.has_provider(&desc.provider) => Some(desc.clone()),
            (None, Some(target)) => Some(ProbeDesc { provider: format!("{name}{target}"), ..desc.clone() }),
            _ => None,
        }
    }

    fn clause(&mut self, clause: &ast::Clause) -> Result<()> {
        let mut probes = Vec::new();
        let mut retained = Vec::new();
        for spec in &clause.probes {
            let target = self.opts.target_pid;
            self.macro_args_used.extend(macro_references(&spec.text));
            let text =
                expand_macros(&spec.text, self.opts.macro_args, &|w| macro_variable(w, target).map(|v| v.to_string()))
                    .map_err(|m| CompileError::new("D_PDESC_INVAL", &spec.span, m))?;
            let desc = ProbeDesc::parse(&text).map_err(|m| CompileError::new("D_PDESC_INVAL", &spec.span, m))?;
            let ids = self.registry.matching(&desc).map_err(|r| CompileError::new(r.tag, &spec.span, r.message))?;
            if ids.is_empty() && !self.opts.zero_matches_ok {
                return Err(CompileError::new(
                    "D_PDESC_ZERO",
                    &spec.span,
                    format!("probe description {} does not match any probes", desc_text(&desc)),
                ));
            }
            // Each description is an enabling of its own, as DTrace's: a
            // probe two descriptions of a clause match runs the clause
            // twice per firing, and counts twice in "matched N probes".
            // A provider glob goes on matching processes that start later
            // (USDT providers), unless it names providers whose probes are
            // all there at start (`sys*:::entry`).
            let glob = desc.provider.contains(['*', '?', '[', '\\']);
            if glob && ids.iter().all(|&id| self.registry.may_appear_later(id)) {
                retained.push(desc);
            } else if ids.is_empty() && self.opts.zero_matches_ok {
                // Under -Z a process's USDT provider that is not there yet
                // (a JVM's hotspot, in the libjvm.so it loads) is kept
                // waiting for, as DTrace's retained enablings find it.
                retained.extend(self.usdt_provider_to_come(&desc, target));
            }
            self.matched += ids.len();
            probes.extend(ids);
        }
        self.clause_alloca = 0;
        self.clause_probes = probes.clone();
        // As dtrace_desc2str() shows it: all four fields (`:::BEGIN`).
        self.clause_desc = clause
            .probes
            .first()
            .map(|s| match crate::provider::desc::ProbeDesc::parse(&s.text) {
                Ok(d) => format!("{}:{}:{}:{}", d.provider, d.module, d.function, d.name),
                Err(_) => s.text.clone(),
            })
            .unwrap_or_default();

        let (predicate, body) = match self.predicate(clause) {
            // A predicate may read a variable its clause's actions declare by
            // assigning it (`/i < 100/ { i++; }`): as DTrace's dt_cook_clause
            // does on its second try, the actions are checked first. When
            // they fail too, the predicate's error is the one reported
            // (dtrace-utils' clauses/err.D_IDENT_UNDEF.both).
            Err(e) if e.tag == "D_IDENT_UNDEF" => {
                let body = self.clause_actions(clause).map_err(|_| e)?;
                (self.predicate(clause)?, body)
            }
            predicate => (predicate?, self.clause_actions(clause)?),
        };
        // An empty clause traces the probe firing, as DTrace's default action;
        // so does one that only speculates: the firing is what the
        // speculation keeps (the Guide's `fbt::: /self->spec/ {
        // speculate(self->spec); }`, shown on commit as the probe's line).
        let records = !self.layouts.is_empty()
            || self.order.speculated
            || clause.body.iter().all(|s| matches!(s.kind, StmtKind::Empty));
        self.region = "";
        let epid = self.program.clauses.len() as u32 + 1;
        // Actions past 64 say that they ran in words after their data.
        let more_present_bits = match Clause::present_words_past_header(self.layouts.len()) {
            0 => 0,
            words => {
                let at = self.record_offset.next_multiple_of(8);
                self.record_offset = at + 8 * words;
                at
            }
        };
        self.program.clauses.push(Clause {
            epid,
            desc: self.clause_desc.clone(),
            probes,
            predicate,
            body,
            actions: std::mem::take(&mut self.layouts),
            record_size: self.record_offset,
            records,
            speculates: self.order.speculated,
            more_present_bits,
            alloca_bytes: self.clause_alloca,
            retained,
        });
        Ok(())
    }

    /// Whether `name` is a subroutine or action of the D version compiled
    /// for: a global may not take its name (DTrace's D_DECL_IDRED). The
    /// string subroutines came with D 1.1.
    fn reserved_name(&self, name: &str) -> bool {
        let since_1_1 =
            matches!(name, "strstr" | "strchr" | "strrchr" | "strtok" | "substr" | "index" | "rindex" | "freopen");
        if since_1_1 && self.opts.d_version < (1, 1) {
            return false;
        }
        actions::is_action(name) || actions::subroutine_signature(name).is_some()
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
            Some(ast::StorageClass::Register | ast::StorageClass::Auto) => {
                return Err(CompileError::new(
                    "D_DECL_BADCLASS",
                    &decl.span,
                    "specified storage class not appropriate in D",
                ))
            }
            Some(ast::StorageClass::Extern) if !decl.declarators.is_empty() => {
                let base = self.type_spec(&decl.spec, &decl.span)?;
                for d in &decl.declarators {
                    self.extern_declarator(base.clone(), &d.ops, &d.span)?;
                }
                return Ok(());
            }
            Some(_) if decl.declarators.is_empty() => {
                return Err(CompileError::new("D_DECL_USELESS", &decl.span, "useless declaration"))
            }
            Some(_) => {
                return Err(CompileError::new("D_UNSUPPORTED", &decl.span, "this declaration is not supported yet"))
            }
        };
        let base = self.type_spec(&decl.spec, &decl.span)?;
        for d in &decl.declarators {
            let Some(name) = &d.name else { continue };
            // A function declared without a storage class (or static) is
            // extern, as dt_decl makes it: `void func(int, int);`.
            if scope == Scope::Global && matches!(d.ops.first(), Some(ast::DeclOp::Function(_))) {
                self.extern_declarator(base.clone(), &d.ops, &d.span)?;
                continue;
            }
            if let Some(ast::DeclOp::AssocArray(keys)) = d.ops.first() {
                let value = self.declarator_type(base.clone(), &d.ops[1..], &d.span)?;
                self.declare_assoc_array(scope, name, keys, value, &d.span)?;
                continue;
            }
            if let Some(ast::DeclOp::Array(None)) = d.ops.first() {
                return Err(CompileError::new(
                    "D_DECL_ARRNULL",
                    &d.span,
                    format!("array declaration requires array dimension or tuple signature: {name}"),
                ));
            }
            let ty = self.declarator_type(base.clone(), &d.ops, &d.span)?;
            if let Type::Struct(_) = ty {
                copy_fits("a variable", &ty, self.opts.strsize, &d.span)?;
            }
            // A fixed-size array is a global's or a clause-local's, in D's
            // own memory (stores into a thread-local's map entry are not
            // checked yet).
            let array = scope != Scope::Thread && matches!(ty, Type::Array(..)) && ty.fixed_size().is_some();
            if array {
                copy_fits("a variable", &ty, self.opts.strsize, &d.span)?;
            }
            if !(ty.is_scalar() || ty == Type::String || matches!(ty, Type::Struct(_)) || array) {
                return Err(CompileError::new(
                    "D_UNSUPPORTED",
                    &d.span,
                    format!("variables of type {} are not supported yet", ty.name()),
                ));
            }
            // self-> and this-> variables have namespaces of their own.
            let reserved = scope == Scope::Global && self.reserved_name(name);
            if self.var_index.contains_key(&(scope, name.clone())) || reserved {
                return Err(CompileError::new("D_DECL_IDRED", &d.span, format!("identifier redeclared: {name}")));
            }
            self.new_var(scope, name, ty, true);
        }
        Ok(())
    }

    /// `int a[string, int];`, `self int last[dev_t];`: an associative array
    /// with declared key and value types, as its first assignment would make it.
    fn declare_assoc_array(
        &mut self,
        scope: Scope,
        name: &str,
        keys: &[ast::TypeName],
        value: Type,
        span: &Span,
    ) -> Result<()> {
        let thread_local = match scope {
            Scope::Global => false,
            Scope::Thread => true,
            Scope::Clause => {
                return Err(CompileError::new(
                    "D_DECL_LOCASSC",
                    span,
                    format!("associative arrays may not be declared as local variables: {name}"),
                ))
            }
        };
        let exists = self.program.assoc_arrays.iter().any(|a| a.name == name && a.thread_local == thread_local);
        if exists || self.var_index.contains_key(&(scope, name.to_string())) {
            return Err(CompileError::new("D_DECL_IDRED", span, format!("identifier redeclared: {name}")));
        }
        if !(value.is_scalar() || value == Type::String || matches!(value, Type::Struct(_))) {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                span,
                format!("associative arrays of {} are not supported yet", value.name()),
            ));
        }
        let mut columns = Vec::new();
        if thread_local {
            columns.push(KeyColumn { ty: Type::Int { size: 4, signed: true, name: "id_t" }, bytes: 8 });
        }
        for (i, key) in keys.iter().enumerate() {
            let ty = self.type_name(key)?;
            let bytes = match ty {
                // dt_decl_prototype of an array's tuple.
                Type::Void => {
                    return Err(CompileError::new(
                        "D_DECL_PROTO_TYPE",
                        &key.span,
                        format!(
                            "array prototype may not use parameter of type void: (anonymous), parameter #{}",
                            i + 1
                        ),
                    ))
                }
                Type::String => var_bytes(&Type::String, self.opts.strsize),
                Type::Int { .. } | Type::Pointer(_) => 8,
                _ => {
                    return Err(CompileError::new(
                        "D_KEY_TYPE",
                        span,
                        format!("{name}[ ] keys of type {} are not supported", ty.name()),
                    ))
                }
            };
            columns.push(KeyColumn { ty, bytes });
        }
        self.program.assoc_arrays.push(AssocArray {
            name: name.to_string(),
            thread_local,
            keys: columns,
            value,
            declared: true,
        });
        Ok(())
    }

    fn predicate(&mut self, clause: &ast::Clause) -> Result<Option<TExpr>> {
        self.region = REGION_PREDICATE;
        let Some(predicate) = &clause.predicate else { return Ok(None) };
        let checked = self.expr(predicate)?;
        if !checked.ty.is_scalar() {
            // DTrace checks the predicate once the whole clause is read: the
            // error names the line of the clause's end.
            let end = clause.span.end.saturating_sub(1)..clause.span.end;
            return Err(CompileError::new("D_PRED_SCALAR", &end, "predicate result must be of scalar type"));
        }
        Ok(Some(checked))
    }

    /// The clause's statements, with its record layout started afresh.
    fn clause_actions(&mut self, clause: &ast::Clause) -> Result<Vec<TStmt>> {
        self.region = REGION_ACTIONS;
        self.actions_in_clause = 0;
        self.layouts.clear();
        self.record_offset = layout::HDR_SIZE;
        self.order = ActionOrder::default();
        self.stmts(&clause.body)
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

    fn new_var(&mut self, scope: Scope, name: &str, ty: Type, declared: bool) -> Var {
        let list = match scope {
            Scope::Global => &mut self.program.globals,
            Scope::Thread => &mut self.program.thread_locals,
            Scope::Clause => &mut self.program.clause_locals,
        };
        let mut var = Variable { name: name.to_string(), ty, offset: 0, declared };
        if scope == Scope::Global {
            let end = list.last().map_or(0, |v: &Variable| v.offset + v.storage(self.opts.strsize).0);
            var.offset = end.next_multiple_of(var.storage(self.opts.strsize).1);
        }
        list.push(var);
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

    /// DTrace's rules on where speculate(), commit(), aggregations and
    /// exit() may stand among a clause's actions, checked as each comes.
    fn check_order(&mut self, class: ActionClass, span: &Span) -> Result<()> {
        let o = &mut self.order;
        // (whether the rule is broken, its tag, its message), first match wins.
        let rules = match class {
            // Several commits (and discards) in one clause are legal.
            ActionClass::Spec(SpecOp::Commit) => {
                vec![(o.recorded, "D_COMM_DREC", "commit( ) may not follow data-recording action(s)")]
            }
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
            ActionClass::Destructive => {
                vec![(o.speculated, "D_ACT_SPEC", "destructive actions may not follow speculate( )")]
            }
            ActionClass::Exit | ActionClass::Data => vec![
                (class == ActionClass::Exit && o.speculated, "D_EXIT_SPEC", "exit( ) may not follow speculate( )"),
                (o.committed, "D_DREC_COMM", "data-recording actions may not follow commit( )"),
            ],
        };
        match class {
            ActionClass::Spec(SpecOp::Commit) => o.committed = true,
            ActionClass::Spec(SpecOp::Speculate) => o.speculated = true,
            ActionClass::Spec(SpecOp::Discard) | ActionClass::Destructive => {}
            ActionClass::Aggregation => o.recorded = true,
            // Speculative data is not the clause's own.
            ActionClass::Exit | ActionClass::Data => o.recorded |= !o.speculated,
        }
        match rules.into_iter().find(|(broken, _, _)| *broken) {
            Some((_, tag, message)) => Err(CompileError::new(tag, span, message)),
            None => Ok(()),
        }
    }
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

/// The n of each `$n` and `$$n` in a probe description's text.
fn macro_references(text: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        rest = rest[at..].trim_start_matches('$');
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if let Ok(n) = rest[..digits].parse() {
            found.push(n);
        }
        rest = &rest[digits..];
    }
    found
}
