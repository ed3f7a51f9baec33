//! The D abstract syntax tree, as the parser builds it.
//!
//! Every node carries a `Span` (byte offsets into the source) so that later
//! passes can report errors with the script line. The tree is purely
//! syntactic: names are not resolved and no types are attached here.

/// Byte range in the source text.
pub type Span = std::ops::Range<usize>;

pub use crate::defs::ops::{BinOp, UnOp};

#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub items: Vec<Item>,
    /// The macro argument references (`$1`, `$$2`) in source order:
    /// (index, as a string, where), as DTrace's lexer meets them.
    pub macro_args: Vec<(u32, bool, Span)>,
    /// Where DTrace places errors about the operators on the right edge of
    /// a predicate or an expression statement written over lines: its
    /// parser reduces them when it has read the next token (past a
    /// predicate's closing `/`, dt_lex's lookahead; a statement's `;` or
    /// `}`), so their line is that token's. Node span → the offset of
    /// that token.
    pub reduced_at: Vec<(Span, usize)>,
}

impl Program {
    /// The place DTrace gives an error found at `span`.
    pub fn reported_at(&self, span: &Span) -> Span {
        match self.reduced_at.iter().find(|(s, _)| s == span) {
            Some(&(_, at)) => at..at + 1,
            None => span.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `probe-descriptions [/predicate/] { statements }`
    Clause(Clause),
    /// `#pragma D option name=value` and the other `#pragma D ...` forms;
    /// `words` are the whitespace-separated words after `#pragma`.
    Pragma { words: Vec<String>, span: Span },
    /// A declaration at file scope: variables, typedefs, struct/union/enum definitions.
    Decl(Decl),
    /// `inline type name = expr;`
    Inline(InlineDef),
    /// `translator out_type < in_type name > { member = expr; ... };`
    Translator(TranslatorDef),
    /// `provider name { probe name(types) [: (types)]; ... };`: the USDT
    /// probes a program defines (`dtrace -h`, `-G`).
    Provider(ProviderDef),
}

/// A provider definition: the probes an application declares.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderDef {
    pub name: String,
    pub probes: Vec<ProbeDecl>,
    pub span: Span,
}

/// `probe name(native types) [: (translated types)];`
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeDecl {
    /// As written, with `__` (shown as `-` in probe names).
    pub name: String,
    /// The types the program passes; `(void)` is no argument.
    pub args: Vec<TypeName>,
    /// The types D scripts see, when the definition translates them.
    pub translated: Option<Vec<TypeName>>,
    /// The parameter names of `args` and of `translated`, where written.
    pub arg_names: Vec<Option<String>>,
    pub translated_names: Vec<Option<String>>,
    pub span: Span,
}

impl ProbeDecl {
    /// For each argument D scripts see, the native argument it is: a
    /// translated argument named as a native one is that one (`probe
    /// place(int i, int j) : (int j, int i, int i, int j)` sees j, i, i,
    /// j), an unnamed one the native one at its position.
    pub fn argument_map(&self) -> Vec<usize> {
        let Some(translated) = &self.translated else { return (0..self.args.len()).collect() };
        (0..translated.len())
            .map(|k| {
                let name = self.translated_names.get(k).cloned().flatten();
                name.and_then(|n| self.arg_names.iter().position(|a| a.as_deref() == Some(n.as_str()))).unwrap_or(k)
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub probes: Vec<ProbeSpec>,
    pub predicate: Option<Expr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

/// A probe description exactly as written, e.g. `syscall::open*:entry`,
/// `tick-$1`, `pid$target:libc:str*:entry`. Splitting into
/// provider:module:function:name and macro expansion happen in sema.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeSpec {
    pub text: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Expr(Expr),
    If { cond: Expr, then: Vec<Stmt>, otherwise: Option<Vec<Stmt>> },
    Block(Vec<Stmt>),
    Empty,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntSuffix {
    pub unsigned: bool,
    /// 0 = none, 1 = `l`, 2 = `ll`
    pub long: u8,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// Integer constant; `decimal` is false for hex and octal literals (C's
    /// typing rules differ).
    Int {
        value: u64,
        suffix: IntSuffix,
        decimal: bool,
    },
    /// Floating constant, kept as written (D has no floating arithmetic).
    Float(String),
    /// Character constant `'a'`, `'\n'`, multi-character constants packed as C does.
    Char(i64),
    /// String literal with escapes already decoded.
    Str(Vec<u8>),
    /// Identifier: variables, built-ins (`pid`, `execname`, `args`, `curthread`), enum constants.
    Ident(String),
    /// `` `name `` or `` module`name ``: a kernel symbol.
    Backquote {
        module: Option<String>,
        name: String,
    },
    /// `$1`, `$2`, ... (`$0` is the script name).
    MacroArg(u32),
    /// `$$1`, `$$2`, ...: the argument as a string.
    MacroStr(u32),
    /// `$target`, `$pid`, `$ppid`, `$uid`, `$gid`, `$pgid`, `$sid`, `$projid`, `$taskid`.
    MacroVar(String),
    /// `self->name`
    SelfVar(String),
    /// `this->name`
    ThisVar(String),
    /// `@name`; empty string for the anonymous aggregation `@`.
    Aggregation(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `lhs = rhs` (op None) or `lhs op= rhs`.
    Assign(Option<BinOp>, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `name(args)`: subroutines, actions and aggregating functions.
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
    },
    /// `base[i, j, ...]`: arrays, associative arrays and aggregation keys.
    Index(Box<Expr>, Vec<Expr>),
    /// `base.member`
    Member(Box<Expr>, String),
    /// `base->member`
    Arrow(Box<Expr>, String),
    Cast(TypeName, Box<Expr>),
    SizeofType(TypeName),
    SizeofExpr(Box<Expr>),
    Offsetof(TypeName, String),
    Stringof(Box<Expr>),
    /// `xlate < type > ( expr )`
    Xlate(TypeName, Box<Expr>),
}

/// A type as written in a cast, sizeof, declaration or translator.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeName {
    pub spec: TypeSpec,
    /// Abstract declarator: pointers and array dimensions applied to `spec`.
    pub ops: Vec<DeclOp>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeSpec {
    /// Built-in C keywords in the order written, e.g. `["unsigned", "long", "long"]`,
    /// `["char"]`, `["void"]`. `const`/`volatile` are dropped (recorded in `qualifiers`).
    Builtin {
        words: Vec<String>,
        qualifiers: Vec<String>,
    },
    /// A typedef name, including D's `string` and names like `uint64_t`,
    /// possibly scoped with a backquote (`` vmlinux`pid_t ``).
    Named {
        name: String,
        qualifiers: Vec<String>,
    },
    Struct(RecordSpec),
    Union(RecordSpec),
    Enum(EnumSpec),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecordSpec {
    pub name: Option<String>,
    /// `None` for a reference (`struct foo`), `Some` for a definition.
    pub members: Option<Vec<MemberDecl>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MemberDecl {
    pub spec: TypeSpec,
    pub declarator: Declarator,
    /// Bitfield width, `int x : 3;`
    pub bits: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EnumSpec {
    pub name: Option<String>,
    /// `None` for a reference (`enum foo`), `Some` for a definition.
    pub values: Option<Vec<(String, Option<Expr>, Span)>>,
}

/// Type operators applied from the name outwards, as C reads them:
/// `int *a[4]` is `[Array(4), Pointer]` (array of 4 pointers to int).
#[derive(Debug, Clone, PartialEq)]
pub enum DeclOp {
    Pointer,
    Array(Option<Expr>),
    /// D's associative array declaration: `int a[string, int];`
    AssocArray(Vec<TypeName>),
    Function(Vec<TypeName>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Declarator {
    pub name: Option<String>,
    pub ops: Vec<DeclOp>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageClass {
    /// `self int x;`: thread-local
    SelfVar,
    /// `this int x;`: clause-local
    ThisVar,
    Static,
    Extern,
    Typedef,
    Register,
    Auto,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Decl {
    pub class: Option<StorageClass>,
    pub spec: TypeSpec,
    pub declarators: Vec<Declarator>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct InlineDef {
    pub ty: TypeName,
    pub name: String,
    /// `inline string name[int32_t s] = ...`: used as `name[e]`, with each
    /// parameter bound to its argument.
    pub params: Vec<(TypeName, String)>,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TranslatorDef {
    pub output: TypeName,
    pub input: TypeName,
    pub input_name: String,
    pub members: Vec<(String, Expr, Span)>,
    pub span: Span,
}
