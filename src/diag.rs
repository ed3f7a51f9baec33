//! Compile errors: a DTrace error tag (`D_*`), the message in DTrace's
//! wording, and where it happened. Formatting into the
//! `dtrace: failed to compile script x.d: line N: ...` form is done by the
//! caller, which knows whether the program came from -s or -n.

use crate::syntax::ast::Span;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompileError {
    pub tag: &'static str,
    pub message: String,
    pub span: Option<Span>,
}

impl CompileError {
    pub(crate) fn new(tag: &'static str, span: &Span, message: impl Into<String>) -> CompileError {
        CompileError { tag, message: message.into(), span: Some(span.clone()) }
    }
    /// The same error, reported at `span`: for errors in text the user did
    /// not write (the D library, typed probe arguments), at the use.
    pub(crate) fn at(self, span: &Span) -> CompileError {
        CompileError { span: Some(span.clone()), ..self }
    }
    /// An error DTrace reports without a line (its code generator's, tagged
    /// D_NOREG, which is also shown without a clause region).
    pub(crate) fn nowhere(tag: &'static str, message: impl Into<String>) -> CompileError {
        CompileError { tag, message: message.into(), span: None }
    }
}

pub(crate) type Result<T> = std::result::Result<T, CompileError>;
