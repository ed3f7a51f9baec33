//! The skeletons build.rs generates from `bpf/*.bpf.c`, one module each.
#![allow(clippy::all, dead_code, non_camel_case_types, unused_imports, unused_qualifications)]

pub(crate) use crate::defs::layout::core_skel as dtrace;
pub(crate) mod syscall {
    include!(concat!(env!("OUT_DIR"), "/syscall.skel.rs"));
}
pub(crate) mod profile {
    include!(concat!(env!("OUT_DIR"), "/profile.skel.rs"));
}
pub(crate) mod sysinfo {
    include!(concat!(env!("OUT_DIR"), "/sysinfo.skel.rs"));
}
pub(crate) mod proc {
    include!(concat!(env!("OUT_DIR"), "/proc.skel.rs"));
}
pub(crate) mod io {
    include!(concat!(env!("OUT_DIR"), "/io.skel.rs"));
}
pub(crate) mod ip {
    include!(concat!(env!("OUT_DIR"), "/ip.skel.rs"));
}
pub(crate) mod sched {
    include!(concat!(env!("OUT_DIR"), "/sched.skel.rs"));
}
pub(crate) mod pid {
    include!(concat!(env!("OUT_DIR"), "/pid.skel.rs"));
}
