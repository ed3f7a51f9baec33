//! The typed program: what the type checker hands to the code generator.
//!
//! Names are resolved (variables to slots, built-ins to `Builtin`), every
//! expression has a `Type`, and D's rules have been applied (string
//! comparison is `StrCmp`, not an integer compare). Nothing here knows BPF.

use crate::syntax::ast::{BinOp, Span};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Type {
    Void,
    /// C integer; `name` is how D spells it in messages (`int`, `uint64_t`).
    Int {
        size: u8,
        signed: bool,
        name: &'static str,
    },
    String,
}

impl Type {
    pub(crate) const INT: Type = Type::Int { size: 4, signed: true, name: "int" };
    pub(crate) const INT64: Type = Type::Int { size: 8, signed: true, name: "int64_t" };
    pub(crate) const UINT64: Type = Type::Int { size: 8, signed: false, name: "uint64_t" };
    pub(crate) const UINT: Type = Type::Int { size: 4, signed: false, name: "uint_t" };

    pub(crate) fn is_int(&self) -> bool {
        matches!(self, Type::Int { .. })
    }
    pub(crate) fn name(&self) -> String {
        match self {
            Type::Void => "void".into(),
            Type::Int { name, .. } => (*name).into(),
            Type::String => "string".into(),
        }
    }
}

/// Values read from the kernel or the probe context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Arg(u8),
    Pid,
    Tid,
    Ppid,
    Uid,
    Gid,
    Execname,
    Timestamp,
    Walltimestamp,
    Cpu,
    ProbeProv,
    ProbeMod,
    ProbeFunc,
    ProbeName,
    Errno,
    Id,
    Epid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Var {
    /// Index into `Program::globals`.
    Global(usize),
    /// Index into `Program::thread_locals`.
    ThreadLocal(usize),
    /// Index into `Program::clause_locals`.
    ClauseLocal(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct TExpr {
    pub kind: TKind,
    pub ty: Type,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub(crate) enum TKind {
    Int(u64),
    /// Index into `Program::strings`.
    Str(usize),
    Builtin(Builtin),
    Var(Var),
    Neg(Box<TExpr>),
    BitNot(Box<TExpr>),
    Not(Box<TExpr>),
    /// Integer arithmetic, bitwise and comparison operators; `signed` says
    /// how division, shifts and comparisons treat the operands.
    Binary {
        op: BinOp,
        signed: bool,
        lhs: Box<TExpr>,
        rhs: Box<TExpr>,
    },
    /// `&&`, `||`, `^^` with short-circuit evaluation.
    Logical {
        op: BinOp,
        lhs: Box<TExpr>,
        rhs: Box<TExpr>,
    },
    /// String comparison with ==, !=, <, <=, >, >=.
    StrCmp {
        op: BinOp,
        lhs: Box<TExpr>,
        rhs: Box<TExpr>,
    },
    Ternary(Box<TExpr>, Box<TExpr>, Box<TExpr>),
    /// `var = value` or `var op= value`; the value of the expression is the new value.
    Assign {
        var: Var,
        op: Option<BinOp>,
        signed: bool,
        value: Box<TExpr>,
    },
    /// `++var`, `var--`, ...
    IncDec {
        var: Var,
        delta: i32,
        post: bool,
    },
    /// Integer conversion to `ty` (truncation and sign/zero extension).
    Cast(Box<TExpr>),
    CopyInStr(Box<TExpr>),
}

#[derive(Debug, Clone)]
pub(crate) enum TStmt {
    Expr(TExpr),
    /// `action` numbers the clause's data-recording actions from 0.
    Action {
        action: usize,
        kind: ActionKind,
    },
    If {
        cond: TExpr,
        then: Vec<TStmt>,
        otherwise: Vec<TStmt>,
    },
}

#[derive(Debug, Clone)]
pub(crate) enum ActionKind {
    Trace(TExpr),
    Printf { format: usize, args: Vec<TExpr> },
    Exit(TExpr),
}

/// How an action's data sits in a record, for the consumer.
#[derive(Debug, Clone)]
pub(crate) struct ActionLayout {
    pub kind: RecordKind,
    /// Byte offset of the action's first value in the record.
    pub offset: usize,
    pub values: Vec<ValueLayout>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RecordKind {
    Trace,
    /// Index into `Program::formats`.
    Printf(usize),
    Exit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueLayout {
    /// An 8-byte slot holding an integer of this size and signedness.
    Int { size: u8, signed: bool },
    /// A NUL-terminated string of at most `strsize` bytes.
    Str,
}

impl ValueLayout {
    pub(crate) fn bytes(&self, strsize: usize) -> usize {
        match self {
            ValueLayout::Int { .. } => 8,
            ValueLayout::Str => (strsize + 7) & !7,
        }
    }
}

/// One clause, enabled on a set of probes: an ECB in DTrace's terms.
#[derive(Debug, Clone)]
pub(crate) struct Clause {
    /// Enabled probe ID (1-based), written in every record of the clause.
    pub epid: u32,
    pub probes: Vec<u32>,
    pub predicate: Option<TExpr>,
    pub body: Vec<TStmt>,
    pub actions: Vec<ActionLayout>,
    /// Bytes of action data after the record header; 0 when nothing is recorded.
    pub record_size: usize,
    /// True when the clause writes a record (it has data-recording actions or is empty).
    pub records: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Variable {
    pub ty: Type,
    /// Byte offset in the globals map value (globals only).
    pub offset: usize,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Program {
    pub clauses: Vec<Clause>,
    pub globals: Vec<Variable>,
    pub thread_locals: Vec<Variable>,
    pub clause_locals: Vec<Variable>,
    /// String constants, without their terminating NUL.
    pub strings: Vec<Vec<u8>>,
    pub formats: Vec<crate::consume::printf::Format>,
    pub strsize: usize,
    pub uses_ppid: bool,
    pub uses_probe_names: bool,
}
