//! Semantic analysis: probe matching, name resolution and type checking.
pub(crate) mod check;
pub(crate) mod ir;
pub(crate) mod kernel_btf;
