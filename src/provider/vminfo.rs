//! The vminfo provider: one probe per statistic of Solaris' `vm` kstat
//! (the counters behind vmstat's paging columns), each mapped to the Linux
//! event that means the same, or listed with the reason it never fires.
//! The statistics and their order come from bpf/vminfo_stats.h, which
//! bpf/vminfo.bpf.c includes too; the probes' arguments are sysinfo's
//! (bpf/kstat.h).

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::kstat::{hook, Event, Hook, Mapping};
use super::{EnableContext, Enabled, Enabling, Loaded, ProbeTable, Provider, PERF_EVENT, RAW_TP};

super::entry_programs!("vminfo");

const STATS_H: &str = include_str!("../../bpf/vminfo_stats.h");

/// A fault statistic: its program on user-mode and on kernel-mode faults.
macro_rules! fault_hooks {
    ($user:literal, $kernel:literal) => {
        &[hook($user, "page_fault_user", 0), hook($kernel, "page_fault_kernel", 1)]
    };
}

/// A paging I/O statistic: two-argument (queue, bio) kernels first.
macro_rules! bio_hooks {
    ($q:literal, $one:literal) => {
        &[hook($q, "block_bio_queue", 0), hook($one, "block_bio_queue", 0)]
    };
}

const NO_EXEC: &str = "none: Linux does not count a program's text pages apart from other file pages";
const NO_SWAPIN: &str =
    "none: Linux has no event where a page is read back from swap (maj_fault counts the faults that do)";
const NO_FREE_LIST: &str = "none: Linux has no list of freed pages that keep their contents";
const NO_THREAD_SWAP: &str = "none: Linux does not swap whole threads out and in";

pub(crate) const MAPPINGS: &[Mapping] = &[
    Mapping {
        name: "anonfree",
        hooks: &[hook("dt_vm_anonfree", "mm_vmscan_lru_shrink_inactive", 0)],
        linux: "anonymous pages the page scanner frees (mm_vmscan_lru_shrink_inactive, not file; arg0 pages)",
    },
    Mapping { name: "anonpgin", hooks: &[], linux: NO_SWAPIN },
    Mapping {
        name: "anonpgout",
        hooks: bio_hooks!("dt_vm_anonpgout_q", "dt_vm_anonpgout"),
        linux: "a swap write submitted (block_bio_queue with REQ_SWAP; arg0 pages)",
    },
    Mapping {
        name: "as_fault",
        hooks: fault_hooks!("dt_vm_as_fault_user", "dt_vm_as_fault_kernel"),
        linux: "a fault on a user address with no page present (page_fault_user, page_fault_kernel; x86)",
    },
    Mapping {
        name: "cow_fault",
        hooks: fault_hooks!("dt_vm_cow_fault_user", "dt_vm_cow_fault_kernel"),
        linux: "a write to a present, write-protected user page: copy-on-write, or the first write to a \
                shared file page (page_fault_user, page_fault_kernel; x86)",
    },
    Mapping {
        name: "dfree",
        hooks: &[hook("dt_vm_dfree", "mm_vmscan_lru_shrink_inactive", 0)],
        linux: "pages the page scanner frees (mm_vmscan_lru_shrink_inactive; arg0 pages)",
    },
    Mapping { name: "execfree", hooks: &[], linux: NO_EXEC },
    Mapping { name: "execpgin", hooks: &[], linux: NO_EXEC },
    Mapping { name: "execpgout", hooks: &[], linux: NO_EXEC },
    Mapping {
        name: "fsfree",
        hooks: &[hook("dt_vm_fsfree", "mm_vmscan_lru_shrink_inactive", 0)],
        linux: "file pages the page scanner frees (mm_vmscan_lru_shrink_inactive, file; arg0 pages)",
    },
    Mapping {
        name: "fspgin",
        hooks: bio_hooks!("dt_vm_fspgin_q", "dt_vm_fspgin"),
        linux: "a read submitted to a block device, not swap (block_bio_queue; arg0 pages)",
    },
    Mapping {
        name: "fspgout",
        hooks: bio_hooks!("dt_vm_fspgout_q", "dt_vm_fspgout"),
        linux: "a write submitted to a block device, not swap (block_bio_queue; arg0 pages)",
    },
    Mapping {
        name: "kernel_asflt",
        hooks: &[hook("dt_vm_kernel_asflt_kernel", "page_fault_kernel", 0)],
        linux: "a fault on a kernel address (page_fault_kernel; x86)",
    },
    Mapping {
        name: "maj_fault",
        hooks: &[Hook {
            program: "dt_vm_maj_fault",
            event: Event::Software { config: libbpf_sys::PERF_COUNT_SW_PAGE_FAULTS_MAJ, name: "major-faults" },
            group: 0,
        }],
        linux: "a page fault that needed I/O (the major-faults software event)",
    },
    Mapping { name: "pgfrec", hooks: &[], linux: NO_FREE_LIST },
    Mapping {
        name: "pgin",
        hooks: bio_hooks!("dt_vm_pgin_q", "dt_vm_pgin"),
        linux: "a read submitted to a block device (block_bio_queue; arg0 1)",
    },
    Mapping {
        name: "pgout",
        hooks: bio_hooks!("dt_vm_pgout_q", "dt_vm_pgout"),
        linux: "a write submitted to a block device (block_bio_queue; arg0 1)",
    },
    Mapping {
        name: "pgpgin",
        hooks: bio_hooks!("dt_vm_pgpgin_q", "dt_vm_pgpgin"),
        linux: "a read submitted to a block device (block_bio_queue; arg0 pages)",
    },
    Mapping {
        name: "pgpgout",
        hooks: bio_hooks!("dt_vm_pgpgout_q", "dt_vm_pgpgout"),
        linux: "a write submitted to a block device (block_bio_queue; arg0 pages)",
    },
    Mapping { name: "pgrec", hooks: &[], linux: NO_FREE_LIST },
    Mapping {
        name: "pgrrun",
        hooks: &[hook("dt_vm_pgrrun", "mm_vmscan_wakeup_kswapd", 0)],
        linux: "the page daemon is asked to run (mm_vmscan_wakeup_kswapd)",
    },
    Mapping { name: "pgswapin", hooks: &[], linux: NO_SWAPIN },
    Mapping {
        name: "pgswapout",
        hooks: bio_hooks!("dt_vm_pgswapout_q", "dt_vm_pgswapout"),
        linux: "a swap write submitted (block_bio_queue with REQ_SWAP; arg0 pages)",
    },
    Mapping {
        name: "prot_fault",
        hooks: fault_hooks!("dt_vm_prot_fault_user", "dt_vm_prot_fault_kernel"),
        linux: "a read or execution of a present user page it may not (page_fault_user, page_fault_kernel; x86)",
    },
    Mapping {
        name: "rev",
        hooks: &[hook("dt_vm_rev", "mm_vmscan_kswapd_wake", 0)],
        linux: "the page daemon starts a round of reclaim (mm_vmscan_kswapd_wake)",
    },
    Mapping {
        name: "scan",
        hooks: &[hook("dt_vm_scan", "mm_vmscan_lru_isolate", 0)],
        linux: "pages the page scanner examines (mm_vmscan_lru_isolate; arg0 pages)",
    },
    Mapping {
        name: "softlock",
        hooks: &[],
        linux: "none: Linux pins pages without faulting them in as Solaris' F_SOFTLOCK",
    },
    Mapping { name: "swapin", hooks: &[], linux: NO_THREAD_SWAP },
    Mapping { name: "swapout", hooks: &[], linux: NO_THREAD_SWAP },
    Mapping {
        name: "zfod",
        hooks: &[],
        linux: "none: Linux has no event where a zero-filled page is made on demand (as_fault counts the faults)",
    },
];

/// The statistics in bpf/vminfo_stats.h order: index = statistic number.
pub(crate) fn stats() -> impl Iterator<Item = &'static str> {
    super::kstat::stats(STATS_H, "DT_VM")
}

fn mapping(stat: u32) -> Option<&'static Mapping> {
    let name = stats().nth(stat as usize)?;
    MAPPINGS.iter().find(|m| m.name == name)
}

#[derive(Default)]
pub(crate) struct Vminfo {
    /// Probe ID of statistic 0; the others follow in vminfo_stats.h order.
    id_base: u32,
}

impl Provider for Vminfo {
    fn name(&self) -> &'static str {
        "vminfo"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = super::populate_slots(probes, self.name(), stats());
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let mut open = cx.open(skel::VminfoSkelBuilder::default(), "vminfo")?;
        // Only the entry programs of the enabled statistics are loaded.
        let mappings: Vec<&Mapping> = enabled.iter().filter_map(|e| mapping(e.probe.key as u32)).collect();
        super::autoload_only(open.open_object_mut(), &super::kstat::programs(&mappings));
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_vm_id_base = self.id_base;
        }
        let skel = open.load().context("loading the vminfo entry programs")?;
        for e in enabled {
            let on_perf = mapping(e.probe.key as u32)
                .is_some_and(|m| m.hooks.iter().any(|h| matches!(h.event, Event::Software { .. })));
            let (array, ty) =
                if on_perf { (&skel.maps.dt_vm_perf_progs, PERF_EVENT) } else { (&skel.maps.dt_vm_progs, RAW_TP) };
            cx.fill(array, e.probe.key as u32, e.clauses, ty)?;
        }
        super::kstat::attach(cx, skel.object(), self.name(), &mappings);
        Ok(Box::new(Loaded(skel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statistic_has_one_mapping_in_order_and_the_man_page_gives_it() {
        assert_eq!(stats().count(), 30);
        super::super::kstat::assert_mapped_and_documented(stats(), MAPPINGS, include_str!("../../man/dtrace-vminfo.7"));
    }
}
