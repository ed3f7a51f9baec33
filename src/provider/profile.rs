//! The profile provider: profile-N fires on every CPU, tick-N on one CPU,
//! at a rate or interval N with DTrace's units. Probes with other rates are
//! created on demand when a script names them. Served by bpf/profile.bpf.c.

use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};

use anyhow::{bail, Context, Result};
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::{MapCore, MapFlags};

use super::copies::{self, Target};
use super::desc::ProbeDesc;
use super::{
    Attributes, EnableContext, Enabled, Enabling, EntryWork, ProbeTable, ProvideContext, Provider, PERF_EVENT,
};

super::entry_programs!("profile");

/// The probes `dtrace -l` lists, as illumos DTrace does.
const LISTED: &[&str] = &[
    "profile-97",
    "profile-199",
    "profile-499",
    "profile-997",
    "profile-1999",
    "profile-4001",
    "profile-4999",
    "tick-1",
    "tick-10",
    "tick-100",
    "tick-500",
    "tick-1000",
    "tick-5000",
];

/// Must equal DT_MAX_PROFILE in bpf/dtrace.h.
const MAX_PROFILE: usize = 64;

/// A probe's rate and reach, as its key holds them: the period in ns, and
/// in the low bit whether it fires on every CPU (profile) or one (tick).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rate {
    pub period_ns: u64,
    pub every_cpu: bool,
}

impl Rate {
    fn key(self) -> u64 {
        self.period_ns << 1 | u64::from(self.every_cpu)
    }
    fn of_key(key: u64) -> Rate {
        Rate { period_ns: key >> 1, every_cpu: key & 1 == 1 }
    }
}

#[derive(Default)]
pub(crate) struct Profile;

impl Provider for Profile {
    fn name(&self) -> &'static str {
        "profile"
    }

    fn populate(&mut self, probes: &mut ProbeTable) {
        for name in LISTED {
            let rate = parse_name(name).expect("listed profile names are valid");
            probes.add("profile", "", "", name, rate.key());
        }
    }

    /// Makes the probe a description names exactly (`profile:::tick-250ms`,
    /// `tick-1s`), if it is a valid profile probe name not made yet.
    fn provide(&mut self, desc: &ProbeDesc, probes: &mut ProbeTable, _cx: &mut ProvideContext) -> Option<Vec<u32>> {
        if !desc.name_is_literal() || !desc.could_match_provider("profile") {
            return None;
        }
        if !desc.module.is_empty() || !desc.function.is_empty() || probes.find("profile", "", "", &desc.name).is_some()
        {
            return None;
        }
        if let Some(rate) = parse_name(&desc.name) {
            probes.add("profile", "", "", &desc.name, rate.key());
        }
        None
    }

    fn argument_attributes(&self) -> Attributes {
        ("Evolving", "Evolving", "Common")
    }

    fn enable(&self, enabled: &[Enabled], cx: &mut EnableContext) -> Result<Box<dyn Enabling>> {
        if enabled.len() > MAX_PROFILE {
            bail!("too many profile and tick probes (the limit is {MAX_PROFILE})");
        }
        let mut open = cx.open(skel::ProfileSkelBuilder::default(), "profile")?;
        if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
            super::script_needs!(ro, cx.needs);
        }
        let skel = open.load().context("loading the profile entry programs")?;
        let cpus = super::perf::online_cpus();
        let mut periods = Vec::new();
        let mut timers = Vec::new();
        let mut owned: Vec<OwnedFd> = Vec::new();
        for (slot, e) in enabled.iter().enumerate() {
            // Each probe's events run the entry program joined with its
            // clauses, or else the shared one, which tail-calls its slot.
            let joined =
                cx.inlined(&skel.progs.dt_profile, None, Target::default(), e.clauses, EntryWork::FiringOnly)?;
            if joined.is_none() {
                cx.fill(&skel.maps.dt_prof_progs, slot as u32, e.clauses, PERF_EVENT)?;
            }
            let rate = Rate::of_key(e.probe.key);
            // The period tells the probes apart: equal rates differ by a nanosecond.
            let mut period = rate.period_ns;
            while periods.contains(&period) {
                period += 1;
            }
            periods.push(period);
            let probe = (u64::from(e.probe.id) << 32) | slot as u64;
            skel.maps.dt_prof_probes.update(&period.to_ne_bytes(), &probe.to_ne_bytes(), MapFlags::ANY)?;
            // tick-n fires on one CPU: the cpu option's, where probes fire.
            let one = cx.only_cpu.map_or(cpus[0], |cpu| cpu as i32);
            let targets: Vec<i32> = if rate.every_cpu { cpus.clone() } else { vec![one] };
            for cpu in targets {
                // Created disabled, enabled after BEGIN has fired (`started`):
                // no profile or tick probe may fire before BEGIN, however
                // long attaching takes.
                let pfd = super::perf::open_cpu_clock(cpu, period)?;
                timers.push(pfd.as_raw_fd());
                match &joined {
                    Some(prog) => {
                        copies::set_perf_program(prog, &pfd).context("attaching a profile probe")?;
                        owned.push(pfd);
                    }
                    None => {
                        let link = skel
                            .progs
                            .dt_profile
                            .attach_perf_event(pfd.as_raw_fd())
                            .context("attaching a profile probe")?;
                        // The link owns the perf event now and closes it.
                        let _ = pfd.into_raw_fd();
                        cx.links.push(link);
                    }
                }
            }
            owned.extend(joined);
        }
        Ok(Box::new(Timers { _skel: skel, timers, _owned: owned }))
    }
}

/// The profile probes' perf events (owned by their links), started after BEGIN.
struct Timers {
    _skel: skel::ProfileSkel<'static>,
    /// Every probe's perf events, kept open by their links or `_owned`.
    timers: Vec<i32>,
    /// The joined programs and their perf events.
    _owned: Vec<OwnedFd>,
}

impl Enabling for Timers {
    fn started(&self) -> Result<()> {
        for &fd in &self.timers {
            // SAFETY: fd is a perf event descriptor our links keep open.
            if unsafe { libc::ioctl(fd, super::perf::PERF_EVENT_IOC_ENABLE, 0) } != 0 {
                return Err(std::io::Error::last_os_error()).context("starting a profile probe's timer");
            }
        }
        Ok(())
    }
}

/// Parses `profile-<N>[unit]` / `tick-<N>[unit]`. No unit means hz.
pub(crate) fn parse_name(name: &str) -> Option<Rate> {
    let (every_cpu, spec) = if let Some(rest) = name.strip_prefix("profile-") {
        (true, rest)
    } else {
        (false, name.strip_prefix("tick-")?)
    };
    let digits = spec.bytes().take_while(u8::is_ascii_digit).count();
    let value: u64 = spec[..digits].parse().ok()?;
    if value == 0 {
        return None;
    }
    let unit_ns: Option<u64> = match &spec[digits..] {
        "ns" | "nsec" => Some(1),
        "us" | "usec" => Some(1_000),
        "ms" | "msec" => Some(1_000_000),
        "s" | "sec" => Some(1_000_000_000),
        "m" | "min" => Some(60_000_000_000),
        "h" | "hour" => Some(3_600_000_000_000),
        "d" | "day" => Some(86_400_000_000_000),
        "" | "hz" => None,
        _ => return None,
    };
    let period_ns = match unit_ns {
        Some(unit) => value.checked_mul(unit)?,
        None => 1_000_000_000 / value,
    };
    // DTrace refuses intervals under 200us for profile/tick, and ones past
    // what a signed 64-bit hrtime holds (the kernel's timers take a ktime_t).
    if !(200_000..=i64::MAX as u64).contains(&period_ns) {
        return None;
    }
    Some(Rate { period_ns, every_cpu })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_units_follow_dtrace() {
        let period = |n| parse_name(n).map(|r| r.period_ns);
        assert_eq!(period("tick-1s"), Some(1_000_000_000));
        assert_eq!(period("tick-200ms"), Some(200_000_000));
        assert_eq!(period("profile-97"), Some(1_000_000_000 / 97));
        assert_eq!(period("profile-100hz"), Some(10_000_000));
        assert_eq!(period("tick-2sec"), Some(2_000_000_000));
        assert_eq!(period("tick-1min"), Some(60_000_000_000));
        assert_eq!(period("tick-500usec"), Some(500_000));
        assert_eq!(period("tick-1d"), Some(86_400_000_000_000));
        assert_eq!(period("tick-1x"), None);
        assert_eq!(period("tick-"), None);
        assert_eq!(period("tick-0"), None);
        assert_eq!(period("tick-10ns"), None);
        assert_eq!(period("tick-18446744073709551615ns"), None);
        assert_eq!(period("tick-9223372036854775807ns"), Some(9223372036854775807));
    }
}
