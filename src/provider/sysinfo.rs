//! The sysinfo provider: one probe per Solaris `sys` statistic, each mapped
//! to the Linux event that means the same. The statistics and their order
//! come from bpf/sysinfo_stats.h, which bpf/sysinfo.bpf.c includes
//! too; this file says, per statistic, which entry programs serve it and on
//! which kernel event, for the runtime and for `dtrace -l`/the man page.

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{EnableContext, Enabled, Enabling, Loaded, ProbeTable, Provider, RAW_TP};

super::entry_programs!("sysinfo");

const STATS_H: &str = include_str!("../../bpf/sysinfo_stats.h");

use super::kstat::{hook, Mapping};

/// Two-argument (queue, request/bio) kernels first: attaching that program
/// fails where the tracepoint has one argument.
macro_rules! block_hooks {
    ($q:literal, $one:literal, $tp:literal) => {
        &[hook($q, $tp, 0), hook($one, $tp, 0)]
    };
}

pub(crate) const MAPPINGS: &[Mapping] = &[
    Mapping {
        name: "bawrite",
        hooks: block_hooks!("dt_si_bawrite_q", "dt_si_bawrite", "block_rq_issue"),
        linux: "a write request without REQ_SYNC issued to a block device (block_rq_issue)",
    },
    Mapping {
        name: "bread",
        hooks: block_hooks!("dt_si_bread_q", "dt_si_bread", "block_rq_issue"),
        linux: "a read request issued to a block device (block_rq_issue)",
    },
    Mapping {
        name: "bwrite",
        hooks: block_hooks!("dt_si_bwrite_q", "dt_si_bwrite", "block_rq_issue"),
        linux: "a write request issued to a block device (block_rq_issue)",
    },
    Mapping {
        name: "idlethread",
        hooks: &[hook("dt_si_idlethread", "sched_switch", 0)],
        linux: "a CPU switches to its idle task (sched_switch)",
    },
    Mapping {
        name: "intrblk",
        hooks: &[hook("dt_si_intrblk", "irq_handler_entry", 0)],
        linux: "a hardware interrupt handler runs (irq_handler_entry)",
    },
    Mapping {
        name: "inv_swtch",
        hooks: &[hook("dt_si_inv_swtch_state", "sched_switch", 0), hook("dt_si_inv_swtch", "sched_switch", 0)],
        linux: "a thread is switched out while runnable: preempted or yielding (sched_switch)",
    },
    Mapping {
        name: "lread",
        hooks: block_hooks!("dt_si_lread_q", "dt_si_lread", "block_bio_queue"),
        linux: "a read bio submitted to the block layer (block_bio_queue)",
    },
    Mapping {
        name: "lwrite",
        hooks: block_hooks!("dt_si_lwrite_q", "dt_si_lwrite", "block_bio_queue"),
        linux: "a write bio submitted to the block layer (block_bio_queue)",
    },
    Mapping {
        name: "modload",
        hooks: &[hook("dt_si_modload", "module_load", 0)],
        linux: "a kernel module is loaded (module_load)",
    },
    Mapping {
        name: "modunload",
        hooks: &[hook("dt_si_modunload", "module_free", 0)],
        linux: "a kernel module is freed (module_free)",
    },
    Mapping { name: "msg", hooks: &[hook("dt_si_msg", "sys_enter", 0)], linux: "entry of msgsnd(2) or msgrcv(2)" },
    Mapping {
        name: "mutex_adenters",
        hooks: &[hook("dt_si_mutex_adenters", "contention_begin", 0)],
        linux: "a mutex is found held (contention_begin with LCB_F_MUTEX|LCB_F_SPIN, or an rt_mutex)",
    },
    Mapping {
        name: "namei",
        hooks: &[hook("dt_si_namei", "sys_enter", 0)],
        linux: "entry of a system call that looks up a path name (open, stat, exec, ...)",
    },
    Mapping {
        name: "nthreads",
        hooks: &[hook("dt_si_nthreads", "task_newtask", 0)],
        linux: "a user thread or process is created (task_newtask)",
    },
    Mapping {
        name: "phread",
        hooks: &[hook("dt_si_phread", "sys_enter", 0)],
        linux: "entry of a read system call on a file opened O_DIRECT",
    },
    Mapping {
        name: "phwrite",
        hooks: &[hook("dt_si_phwrite", "sys_enter", 0)],
        linux: "entry of a write system call on a file opened O_DIRECT",
    },
    Mapping {
        name: "procovf",
        hooks: &[hook("dt_si_procovf", "sys_exit", 0)],
        linux: "fork, vfork, clone or clone3 fails with EAGAIN",
    },
    Mapping {
        name: "pswitch",
        hooks: &[hook("dt_si_pswitch", "sched_switch", 0)],
        linux: "a CPU switches from one thread to another (sched_switch)",
    },
    Mapping {
        name: "readch",
        hooks: &[hook("dt_si_readch", "sys_exit", 0)],
        linux: "return of read, readv, pread64, preadv, preadv2 with bytes read (arg0)",
    },
    Mapping {
        name: "rw_rdfails",
        hooks: &[hook("dt_si_rw_rdfails", "contention_begin", 0)],
        linux: "a reader/writer lock is found held when reading (contention_begin with LCB_F_READ)",
    },
    Mapping {
        name: "rw_wrfails",
        hooks: &[hook("dt_si_rw_wrfails", "contention_begin", 0)],
        linux: "a reader/writer lock is found held when writing (contention_begin with LCB_F_WRITE)",
    },
    Mapping { name: "sema", hooks: &[hook("dt_si_sema", "sys_enter", 0)], linux: "entry of semop(2) or semtimedop(2)" },
    Mapping {
        name: "sysexec",
        hooks: &[hook("dt_si_sysexec", "sched_process_exec", 0)],
        linux: "a successful exec (sched_process_exec)",
    },
    Mapping {
        name: "sysfork",
        hooks: &[hook("dt_si_sysfork", "task_newtask", 0)],
        linux: "a process is created by fork or clone without CLONE_THREAD or CLONE_VFORK (task_newtask)",
    },
    Mapping {
        name: "sysread",
        hooks: &[hook("dt_si_sysread", "sys_enter", 0)],
        linux: "entry of read, readv, pread64, preadv, preadv2",
    },
    Mapping {
        name: "sysvfork",
        hooks: &[hook("dt_si_sysvfork", "task_newtask", 0)],
        linux: "a process is created with CLONE_VFORK (task_newtask)",
    },
    Mapping {
        name: "syswrite",
        hooks: &[hook("dt_si_syswrite", "sys_enter", 0)],
        linux: "entry of write, writev, pwrite64, pwritev, pwritev2",
    },
    Mapping {
        name: "trap",
        hooks: &[hook("dt_si_trap_user", "page_fault_user", 0), hook("dt_si_trap_kernel", "page_fault_kernel", 1)],
        linux: "a page fault, in user or kernel mode (page_fault_user, page_fault_kernel; x86)",
    },
    Mapping { name: "ufsdirblk", hooks: &[], linux: "none: UFS is not a Linux file system" },
    Mapping { name: "ufsiget", hooks: &[], linux: "none: UFS is not a Linux file system" },
    Mapping { name: "ufsinopage", hooks: &[], linux: "none: UFS is not a Linux file system" },
    Mapping { name: "ufsipage", hooks: &[], linux: "none: UFS is not a Linux file system" },
    Mapping {
        name: "writech",
        hooks: &[hook("dt_si_writech", "sys_exit", 0)],
        linux: "return of write, writev, pwrite64, pwritev, pwritev2 with bytes written (arg0)",
    },
    Mapping {
        name: "xcalls",
        hooks: &[hook("dt_si_xcalls_cpu", "ipi_send_cpu", 0), hook("dt_si_xcalls_mask", "ipi_send_cpumask", 1)],
        linux: "an inter-processor interrupt is sent (ipi_send_cpu, ipi_send_cpumask)",
    },
];

/// The statistics in bpf/sysinfo_stats.h order: index = statistic number.
pub(crate) fn stats() -> impl Iterator<Item = &'static str> {
    super::kstat::stats(STATS_H, "DT_SI")
}

pub(crate) fn mapping(stat: u32) -> Option<&'static Mapping> {
    let name = stats().nth(stat as usize)?;
    MAPPINGS.iter().find(|m| m.name == name)
}

#[derive(Default)]
pub(crate) struct Sysinfo {
    /// Probe ID of statistic 0; the others follow in stats.h order.
    id_base: u32,
}

impl Provider for Sysinfo {
    fn name(&self) -> &'static str {
        "sysinfo"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), stats());
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let mut open = cx.open(skel::SysinfoSkelBuilder::default(), "sysinfo")?;
        // Only the entry programs of the enabled statistics are loaded.
        let mappings: Vec<&Mapping> = enabled.iter().filter_map(|e| mapping(e.probe.key as u32)).collect();
        let wanted = super::kstat::programs(&mappings);
        super::autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_si_id_base = self.id_base;
            ro.dt_si_o_direct = libc::O_DIRECT as u32;
            for (nr, name) in super::syscall::table() {
                if let Some(class) = ro.dt_si_sysclass.get_mut(nr as usize) {
                    *class = syscall_class(name);
                }
            }
        }
        let skel = open.load().context("loading the sysinfo entry programs")?;
        cx.fill_slots(&skel.maps.dt_si_progs, enabled, RAW_TP)?;
        super::kstat::attach(cx, skel.object(), self.name(), &mappings);
        Ok(Box::new(Loaded(skel)))
    }
}

/// System call classes for bpf/sysinfo.bpf.c (DT_SC_*), by syscall name.
pub(crate) fn syscall_class(name: &str) -> u8 {
    const READ: u8 = 0x01;
    const WRITE: u8 = 0x02;
    const PATH: u8 = 0x04;
    const MSG: u8 = 0x08;
    const SEM: u8 = 0x10;
    const FORK: u8 = 0x20;
    match name {
        "read" | "readv" | "pread64" | "preadv" | "preadv2" => READ,
        "write" | "writev" | "pwrite64" | "pwritev" | "pwritev2" => WRITE,
        "msgsnd" | "msgrcv" => MSG,
        "semop" | "semtimedop" => SEM,
        "fork" | "vfork" | "clone" | "clone3" => FORK,
        "open" | "openat" | "openat2" | "creat" | "stat" | "lstat" | "newfstatat" | "statx" | "access"
        | "faccessat" | "faccessat2" | "execve" | "execveat" | "mkdir" | "mkdirat" | "rmdir" | "unlink"
        | "unlinkat" | "rename" | "renameat" | "renameat2" | "link" | "linkat" | "symlink" | "symlinkat"
        | "readlink" | "readlinkat" | "chdir" | "chroot" | "chmod" | "fchmodat" | "fchmodat2" | "chown" | "lchown"
        | "fchownat" | "truncate" | "utime" | "utimes" | "utimensat" | "futimesat" | "mknod" | "mknodat" | "statfs"
        | "getxattr" | "lgetxattr" | "setxattr" | "lsetxattr" | "listxattr" | "llistxattr" | "removexattr"
        | "lremovexattr" | "mount" | "umount2" | "swapon" | "swapoff" | "name_to_handle_at" | "inotify_add_watch"
        | "fanotify_mark" | "open_tree" | "move_mount" | "fsconfig" | "mount_setattr" => PATH,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statistic_has_one_mapping_in_order_and_the_man_page_gives_it() {
        assert_eq!(stats().count(), 34);
        super::super::kstat::assert_mapped_and_documented(
            stats(),
            MAPPINGS,
            include_str!("../../man/dtrace-sysinfo.7"),
        );
    }

    #[test]
    fn classes_cover_the_read_write_families() {
        assert_eq!(syscall_class("pread64"), 1);
        assert_eq!(syscall_class("pwritev2"), 2);
        assert_eq!(syscall_class("openat"), 4);
        assert_eq!(syscall_class("getpid"), 0);
    }

    /// sysinfo's cpu_t and curcpu's cpuinfo_t (d-library/sched.d) have the
    /// layout of bpf/dtrace.h's structs, which the runtime fills.
    #[test]
    fn cpu_types_have_the_runtimes_layout() {
        crate::provider::testing::assert_same_layouts(
            include_bytes!(concat!(env!("OUT_DIR"), "/core.bpf.o")),
            "core",
            &[("cpu_t", "dt_cpu"), ("cpuinfo_t", "dt_cpuinfo"), ("processor_info_t", "dt_processor_info")],
        );
    }
}
