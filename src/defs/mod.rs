//! Shared definitions used by several pipeline stages: the record and
//! context layout shared with `bpf/` (`layout`), the aggregating functions
//! and their bucket geometry (`agg`), the grammar of printf() formats
//! (`printf_format`) and D's operators (`ops`).
//!
//! This is the bottom layer: it imports nothing from `syntax`, `sema`,
//! `codegen`, `runtime`, `consume` or `provider`, so each of them can use it
//! without depending on another stage.

pub(crate) mod agg;
pub(crate) mod layout;
pub(crate) mod ops;
pub(crate) mod printf_format;
