//! The lockstat provider: kernel lock contention, as Solaris' lockstat
//! provider names its probes, mapped to Linux mutexes (adaptive), rwsems
//! and rwlocks (rw) and spinlocks (spin). The contention probes fire from
//! the kernel's lock contention tracepoints (bpf/lockstat.bpf.c, Linux
//! 5.19); the hold-event probes (acquire, release) have no tracepoint on
//! kernels without lockdep, and are listed with the reason they never fire.

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel};

use super::{
    arg, Attributes, EnableContext, Enabled, Enabling, KernelFacts, Loaded, Probe, ProbeArg, ProbeTable, Provider,
    RAW_TP,
};

super::entry_programs!("lockstat");

/// How a probe fires on Linux.
pub(crate) enum Fires {
    /// At contention_end, after a wait of this kind: the man page's words,
    /// which a test holds the page to.
    Contention(#[cfg_attr(not(test), allow(dead_code))] &'static str),
    /// Never: why.
    Never(&'static str),
}

pub(crate) struct LockProbe {
    pub name: &'static str,
    pub args: &'static [ProbeArg],
    pub fires: Fires,
}

const HOLD: &str = "Linux has no tracepoint where a lock is taken or released (lockdep's lock_acquired \
                    and lock_release exist only in kernels built with CONFIG_LOCKDEP)";

const MUTEX: ProbeArg = arg("struct mutex *", "(struct mutex *)arg0");
const RWSEM: ProbeArg = arg("struct rw_semaphore *", "(struct rw_semaphore *)arg0");
const RWLOCK: ProbeArg = arg("struct qrwlock *", "(struct qrwlock *)arg0");
const SPINLOCK: ProbeArg = arg("spinlock_t *", "(spinlock_t *)arg0");
const WAIT: ProbeArg = arg("uint64_t", "(uint64_t)arg1");
const RW_KIND: ProbeArg = arg("int", "(int)arg2");

/// In slot order: the index is DT_LS_* in bpf/lockstat.bpf.c.
pub(crate) const PROBES: &[LockProbe] = &[
    LockProbe { name: "adaptive-acquire", args: &[MUTEX], fires: Fires::Never(HOLD) },
    LockProbe {
        name: "adaptive-block",
        args: &[MUTEX, WAIT],
        fires: Fires::Contention("a mutex (or PREEMPT_RT rt_mutex) slept on is acquired; arg1 is the sleep in ns"),
    },
    LockProbe {
        name: "adaptive-spin",
        args: &[MUTEX, WAIT],
        fires: Fires::Contention("a mutex is acquired by optimistic spinning; arg1 is the spin in ns"),
    },
    LockProbe { name: "adaptive-release", args: &[MUTEX], fires: Fires::Never(HOLD) },
    LockProbe {
        name: "adaptive-acquire-error",
        args: &[MUTEX, arg("int", "(int)arg1")],
        fires: Fires::Contention("a contended killable or interruptible mutex wait fails; arg1 is the -errno"),
    },
    LockProbe { name: "rw-acquire", args: &[RWSEM, arg("int", "(int)arg1")], fires: Fires::Never(HOLD) },
    LockProbe {
        name: "rw-block",
        args: &[RWSEM, WAIT, RW_KIND, arg("int", "(int)arg3"), arg("uint_t", "(uint_t)arg4")],
        fires: Fires::Contention(
            "an rwsem (or percpu rwsem) slept on is acquired; arg1 the sleep in ns, arg2 RW_WRITER or \
             RW_READER, arg3 whether a writer held it, arg4 its readers when the wait began",
        ),
    },
    LockProbe {
        name: "rw-spin",
        args: &[RWLOCK, WAIT, RW_KIND],
        fires: Fires::Contention("an rwlock_t spun on is acquired; arg1 the spin in ns, arg2 RW_WRITER or RW_READER"),
    },
    LockProbe { name: "rw-release", args: &[RWSEM, arg("int", "(int)arg1")], fires: Fires::Never(HOLD) },
    LockProbe { name: "spin-acquire", args: &[SPINLOCK], fires: Fires::Never(HOLD) },
    LockProbe {
        name: "spin-spin",
        args: &[SPINLOCK, WAIT],
        fires: Fires::Contention("a spinlock spun on (the queued slow path) is acquired; arg1 is the spin in ns"),
    },
    LockProbe { name: "spin-release", args: &[SPINLOCK], fires: Fires::Never(HOLD) },
];

/// The programs every contention probe needs, and their tracepoints.
const CONTENTION: &[(&str, &str)] = &[("dt_ls_begin", "contention_begin"), ("dt_ls_end", "contention_end")];

#[derive(Default)]
pub(crate) struct Lockstat {
    id_base: u32,
}

impl Provider for Lockstat {
    fn name(&self) -> &'static str {
        "lockstat"
    }

    /// Module `vmlinux` and no function, as dtrace-utils lists them.
    fn populate(&mut self, probes: &mut ProbeTable) {
        self.id_base = probes.next_id();
        for (slot, probe) in PROBES.iter().enumerate() {
            probes.add(self.name(), "vmlinux", "", probe.name, slot as u64);
        }
    }

    fn typed_args(&self, probe: &Probe, _kernel: &mut dyn KernelFacts) -> Option<&'static [ProbeArg]> {
        PROBES.get(probe.key as usize).map(|p| p.args)
    }

    fn argument_attributes(&self) -> Attributes {
        ("Evolving", "Evolving", "ISA")
    }

    fn library(&self) -> &'static [(&'static str, &'static str)] {
        &[("lockstat.d", include_str!("../../d-library/lockstat.d"))]
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        let (mut mask, mut silent) = (0u32, Vec::new());
        for slot in super::enabled_slots(enabled) {
            match PROBES[slot].fires {
                Fires::Contention(_) => mask |= 1 << slot,
                Fires::Never(why) => silent.push((PROBES[slot].name, why)),
            }
        }
        cx.never_fire(self.name(), &silent);
        if mask == 0 {
            return Ok(Box::new(Loaded(())));
        }
        let mut open = cx.open(skel::LockstatSkelBuilder::default(), "lockstat")?;
        let wanted: Vec<&str> = CONTENTION.iter().map(|(program, _)| *program).collect();
        super::autoload_only(open.open_object_mut(), &wanted);
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
            ro.dt_ls_id_base = self.id_base;
            ro.dt_ls_enabled = mask;
        }
        let skel = open.load().context("loading the lockstat entry programs")?;
        cx.fill_slots(&skel.maps.dt_ls_progs, enabled, RAW_TP)?;
        let mut attached = true;
        for (program, tracepoint) in CONTENTION {
            attached &= cx.attach_raw_tp(skel.object(), program, tracepoint);
        }
        if !attached {
            cx.warnings.push(
                "lockstat's contention probes will not fire: this kernel has no contention_begin and \
                 contention_end tracepoints (Linux 5.19 added them)"
                    .to_string(),
            );
        }
        Ok(Box::new(Loaded(skel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slots are numbered as the entry program numbers them.
    #[test]
    fn slots_follow_the_entry_programs_order() {
        let c = include_str!("../../bpf/lockstat.bpf.c");
        for (slot, probe) in PROBES.iter().enumerate() {
            let define = format!("#define DT_LS_{} {slot}\n", probe.name.replace('-', "_").to_uppercase());
            assert!(c.contains(&define), "{define}");
        }
        assert!(c.contains(&format!("#define DT_LS_COUNT {}\n", PROBES.len())));
        for (program, tracepoint) in CONTENTION {
            assert!(c.contains(&format!("SEC(\"raw_tp/{tracepoint}\")\nint {program}(")));
        }
    }

    #[test]
    fn the_man_page_gives_every_mapping() {
        let page = include_str!("../../man/dtrace-lockstat.7").replace("\\-", "-");
        for probe in PROBES {
            let linux = match probe.fires {
                Fires::Contention(event) => event.to_string(),
                Fires::Never(why) => format!("never: {why}"),
            };
            assert!(
                page.contains(&format!(".B {}\n{linux}\n", probe.name)),
                "man/dtrace-lockstat.7 lacks {}",
                probe.name
            );
        }
    }
}
