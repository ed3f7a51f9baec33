//! The core object's skeleton (bpf/core.bpf.c): the maps every entry
//! program shares. Providers include their own skeletons.
#![allow(clippy::all, dead_code, non_camel_case_types, unused_imports, unused_qualifications)]

pub(crate) mod core {
    include!(concat!(env!("OUT_DIR"), "/core.skel.rs"));
}
