//! The fsinfo provider: file-system operations on open files, as Solaris'
//! fsinfo provider names them, each with the file's `fileinfo_t` (the io
//! provider's, d-library/io.d) and, for read and write, the bytes moved.
//! Linux has no tracepoint in its VFS, so an operation fires where the
//! system call that asks for it returns (bpf/fsinfo.bpf.c); the operations
//! that name a path rather than an open file are listed with the reason
//! they never fire.

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::{MapCore, MapFlags};

use super::{
    arg, Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider,
    RAW_TP,
};

super::entry_programs!("fsinfo");

/// Where the file descriptor is (DT_FS_FD_*).
#[derive(Clone, Copy)]
enum Fd {
    Arg0 = 0,
    Ret = 1,
}

/// Where fileinfo_t's fi_offset comes from (DT_FS_OFF_*).
#[derive(Clone, Copy)]
enum Offset {
    /// The file's position when the call returns.
    Position = 0,
    /// The position before the returned bytes moved (read, write).
    PositionBefore = 1,
    /// A positional read's or write's offset argument.
    Arg3 = 2,
}

/// Calls that are the operation only with some argument (DT_FS_ONLY_*).
#[derive(Clone, Copy)]
enum Only {
    Always = 0,
    /// fcntl(fd, F_SETFL, ...).
    Setfl = 1,
    /// mmap() of a file (arg4 the descriptor), not of anonymous memory.
    FileMap = 2,
    /// newfstatat(fd, "", st, AT_EMPTY_PATH): fstat(2) in glibc.
    EmptyPathArg3 = 3,
    /// statx(fd, "", AT_EMPTY_PATH, ...).
    EmptyPathArg2 = 4,
}

/// System calls that perform an operation, and how to read them.
pub(crate) struct Calls {
    syscalls: &'static [&'static str],
    fd: Fd,
    offset: Offset,
    only: Only,
    /// args[1] is the bytes moved (the return value).
    bytes: bool,
    /// Fires when the call is entered (close: the descriptor still names
    /// the file), not when it returns.
    at_entry: bool,
}

const fn on(syscalls: &'static [&'static str]) -> Calls {
    Calls { syscalls, fd: Fd::Arg0, offset: Offset::Position, only: Only::Always, bytes: false, at_entry: false }
}

/// How a probe fires on Linux.
pub(crate) enum Fires {
    Calls(&'static [Calls]),
    /// Never: why (the man page gives the same words).
    Never(&'static str),
}

pub(crate) struct FsProbe {
    pub name: &'static str,
    pub fires: Fires,
}

const PATH: &str = "the operation names a path, not an open file, and Linux has no tracepoint in its VFS \
                    (trace the system call)";
const PAGING: &str = "paging is not a file-system operation on Linux (see the vminfo provider)";

const READ: Calls = Calls {
    syscalls: &["read", "readv"],
    fd: Fd::Arg0,
    offset: Offset::PositionBefore,
    only: Only::Always,
    bytes: true,
    at_entry: false,
};
const PREAD: Calls = Calls { syscalls: &["pread64", "preadv", "preadv2"], offset: Offset::Arg3, ..READ };
const WRITE: Calls = Calls { syscalls: &["write", "writev"], ..READ };
const PWRITE: Calls = Calls { syscalls: &["pwrite64", "pwritev", "pwritev2"], offset: Offset::Arg3, ..READ };

/// In slot order: the index is the probe's slot in bpf/fsinfo.bpf.c's
/// program array (at most DT_FSINFO_COUNT).
pub(crate) const PROBES: &[FsProbe] = &[
    FsProbe {
        name: "open",
        fires: Fires::Calls(&[Calls { fd: Fd::Ret, ..on(&["open", "openat", "openat2", "creat"]) }]),
    },
    FsProbe { name: "close", fires: Fires::Calls(&[Calls { at_entry: true, ..on(&["close"]) }]) },
    FsProbe { name: "read", fires: Fires::Calls(&[READ, PREAD]) },
    FsProbe { name: "write", fires: Fires::Calls(&[WRITE, PWRITE]) },
    FsProbe {
        name: "getattr",
        fires: Fires::Calls(&[
            on(&["fstat"]),
            Calls { only: Only::EmptyPathArg3, ..on(&["newfstatat"]) },
            Calls { only: Only::EmptyPathArg2, ..on(&["statx"]) },
        ]),
    },
    FsProbe { name: "setattr", fires: Fires::Calls(&[on(&["fchmod", "fchown", "ftruncate"])]) },
    FsProbe { name: "readdir", fires: Fires::Calls(&[on(&["getdents", "getdents64"])]) },
    FsProbe { name: "fsync", fires: Fires::Calls(&[on(&["fsync", "fdatasync"])]) },
    FsProbe { name: "seek", fires: Fires::Calls(&[on(&["lseek"])]) },
    FsProbe { name: "ioctl", fires: Fires::Calls(&[on(&["ioctl"])]) },
    FsProbe { name: "setfl", fires: Fires::Calls(&[Calls { only: Only::Setfl, ..on(&["fcntl"]) }]) },
    FsProbe { name: "map", fires: Fires::Calls(&[Calls { only: Only::FileMap, ..on(&["mmap"]) }]) },
    FsProbe { name: "access", fires: Fires::Never(PATH) },
    FsProbe { name: "lookup", fires: Fires::Never(PATH) },
    FsProbe { name: "create", fires: Fires::Never(PATH) },
    FsProbe { name: "remove", fires: Fires::Never(PATH) },
    FsProbe { name: "link", fires: Fires::Never(PATH) },
    FsProbe { name: "rename", fires: Fires::Never(PATH) },
    FsProbe { name: "mkdir", fires: Fires::Never(PATH) },
    FsProbe { name: "rmdir", fires: Fires::Never(PATH) },
    FsProbe { name: "symlink", fires: Fires::Never(PATH) },
    FsProbe { name: "readlink", fires: Fires::Never(PATH) },
    FsProbe { name: "statvfs", fires: Fires::Never(PATH) },
    FsProbe { name: "mount", fires: Fires::Never(PATH) },
    FsProbe { name: "unmount", fires: Fires::Never(PATH) },
    FsProbe { name: "getpage", fires: Fires::Never(PAGING) },
    FsProbe { name: "putpage", fires: Fires::Never(PAGING) },
];

const ARGS: &[ProbeArg] = &[arg("fileinfo_t *", "(fileinfo_t *)arg0"), arg("int", "(int)arg1")];

/// The size of struct dt_fsinfo_call in bpf/fsinfo.bpf.c.
const CALL_SIZE: usize = 6;

/// struct dt_fsinfo_call for a call of probe `slot`.
fn call_value(slot: usize, calls: &Calls) -> [u8; CALL_SIZE] {
    [
        (slot + 1) as u8,
        calls.fd as u8,
        calls.offset as u8,
        calls.only as u8,
        u8::from(calls.bytes),
        u8::from(calls.at_entry),
    ]
}

#[derive(Default)]
pub(crate) struct Fsinfo {
    id_base: u32,
}

impl Provider for Fsinfo {
    fn name(&self) -> &'static str {
        "fsinfo"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), PROBES.iter().map(|p| p.name));
    }

    fn typed_args(&self, _probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        Some(ARGS)
    }

    fn argument_attributes(&self) -> Attributes {
        ("Evolving", "Evolving", "ISA")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let numbers: std::collections::HashMap<&str, u32> =
            super::syscall::table().map(|(nr, name)| (name, nr)).collect();
        let mut calls = Vec::new();
        let mut silent = Vec::new();
        for slot in super::enabled_slots(enabled) {
            match PROBES[slot].fires {
                Fires::Calls(list) => {
                    for c in list {
                        // A call this architecture lacks (fstat's old forms) is skipped.
                        calls.extend(
                            c.syscalls.iter().filter_map(|s| numbers.get(*s)).map(|nr| (*nr, call_value(slot, c), c)),
                        );
                    }
                }
                Fires::Never(why) => silent.push((PROBES[slot].name, why)),
            }
        }
        cx.never_fire(self.name(), &silent);
        if calls.is_empty() {
            return Ok(Box::new(Loaded(())));
        }
        let mut open = cx.open(skel::FsinfoSkelBuilder::default(), "fsinfo")?;
        let mut wanted = Vec::new();
        if calls.iter().any(|(_, _, c)| c.at_entry) {
            wanted.push(("dt_fsinfo_enter", "sys_enter"));
        }
        if calls.iter().any(|(_, _, c)| !c.at_entry) {
            wanted.push(("dt_fsinfo_exit", "sys_exit"));
        }
        let programs: Vec<&str> = wanted.iter().map(|(p, _)| *p).collect();
        super::autoload_only(open.open_object_mut(), &programs);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_fsinfo_id_base = self.id_base;
        }
        let skel = open.load().context("loading the fsinfo entry programs")?;
        for (nr, value, _) in &calls {
            skel.maps
                .dt_fsinfo_calls
                .update(&nr.to_ne_bytes(), value, MapFlags::ANY)
                .context("describing the system calls of the fsinfo probes")?;
        }
        cx.fill_slots(&skel.maps.dt_fsinfo_progs, enabled, RAW_TP)?;
        for (program, tracepoint) in wanted {
            cx.attach_raw_tp_or_warn(skel.object(), "fsinfo's probes", program, tracepoint);
        }
        Ok(Box::new(Loaded(skel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_fit_the_program_array_and_calls_the_c_struct() {
        let c = include_str!("../../bpf/fsinfo.bpf.c");
        assert!(c.contains("#define DT_FSINFO_COUNT 32\n"));
        assert!(PROBES.len() <= 32);
        // struct dt_fsinfo_call's members, in call_value's order, all bytes.
        let body = c.split("struct dt_fsinfo_call {").nth(1).and_then(|s| s.split("};").next()).unwrap_or_default();
        let members: Vec<&str> = body
            .lines()
            .filter_map(|l| l.trim().strip_prefix("__u8 "))
            .map(|l| l.split(';').next().unwrap_or_default())
            .collect();
        assert_eq!(members, ["slot_plus_one", "fd_from", "offset_from", "only", "bytes", "at_entry"]);
        assert_eq!(members.len(), CALL_SIZE);
        for (name, value) in [
            ("DT_FS_FD_RET", Fd::Ret as u8),
            ("DT_FS_OFF_POS_BEFORE", Offset::PositionBefore as u8),
            ("DT_FS_OFF_ARG3", Offset::Arg3 as u8),
            ("DT_FS_ONLY_SETFL", Only::Setfl as u8),
            ("DT_FS_ONLY_FILE_MAP", Only::FileMap as u8),
            ("DT_FS_ONLY_EMPTY_PATH_ARG3", Only::EmptyPathArg3 as u8),
            ("DT_FS_ONLY_EMPTY_PATH_ARG2", Only::EmptyPathArg2 as u8),
        ] {
            assert!(c.contains(&format!("#define {name} {value}")), "{name}");
        }
    }

    #[test]
    fn every_call_is_a_system_call_of_this_architecture_and_the_man_page_gives_every_mapping() {
        let names: Vec<&str> = super::super::syscall::table().map(|(_, name)| name).collect();
        for probe in PROBES {
            let entry =
                crate::provider::testing::man_mapping_entry(include_str!("../../man/dtrace-fsinfo.7"), probe.name);
            match probe.fires {
                Fires::Calls(list) => {
                    for call in list.iter().flat_map(|c| c.syscalls) {
                        assert!(names.contains(call), "{call} is not an x86-64 system call");
                        assert!(entry.contains(call), "dtrace-fsinfo(7): {} lacks {call}", probe.name);
                    }
                }
                Fires::Never(why) => assert!(
                    entry.contains(&format!("never: {why}")),
                    "dtrace-fsinfo(7) lacks why {} never fires",
                    probe.name
                ),
            }
        }
    }
}
