//! The profile provider: profile-N fires on every CPU, tick-N on one CPU,
//! at a rate or interval N with DTrace's units. Probes with other rates are
//! created on demand when a script names them. Served by bpf/profile.bpf.c.

use super::{Attach, Probe};
use crate::sema::probes::ProbeDesc;

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

pub(crate) fn provide(probes: &mut Vec<Probe>) {
    for (id, name) in (super::syscall::id_end()..).zip(LISTED) {
        let attach = parse_name(name).expect("listed profile names are valid");
        probes.push(new_probe(id, name, attach));
    }
}

/// First ID after the listed profile probes.
pub(crate) fn id_end() -> u32 {
    super::syscall::id_end() + LISTED.len() as u32
}

fn new_probe(id: u32, name: &str, attach: Attach) -> Probe {
    Probe { id, provider: "profile", module: String::new(), function: String::new(), name: name.to_string(), attach }
}

/// Creates the probe a description names exactly (`profile:::tick-250ms`,
/// `tick-1s`), if it is a valid profile probe name.
pub(crate) fn create(desc: &ProbeDesc, id: u32) -> Option<Probe> {
    if !desc.name_is_literal() || !desc.could_match_provider("profile") {
        return None;
    }
    if !desc.module.is_empty() || !desc.function.is_empty() {
        return None;
    }
    let attach = parse_name(&desc.name)?;
    Some(new_probe(id, &desc.name, attach))
}

/// Parses `profile-<N>[unit]` / `tick-<N>[unit]`. No unit means hz.
pub(crate) fn parse_name(name: &str) -> Option<Attach> {
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
    // DTrace refuses intervals under 200us for profile/tick.
    if period_ns < 200_000 {
        return None;
    }
    Some(Attach::Profile { period_ns, every_cpu })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_units_follow_dtrace() {
        let period = |n| match parse_name(n) {
            Some(Attach::Profile { period_ns, .. }) => Some(period_ns),
            _ => None,
        };
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
    }
}
