//! What the statistics providers (sysinfo, vminfo) share: each probe is a
//! Solaris kstat statistic, listed in a C header both the entry programs
//! and the registry read, and each is mapped to the Linux events that mean
//! the same (bpf/kstat.h has the probes' arguments).

use std::os::fd::{AsRawFd, IntoRawFd};

use super::EnableContext;

/// How one statistic is observed on Linux.
pub(crate) struct Mapping {
    pub name: &'static str,
    /// Entry programs and the events they attach to. Where a statistic has
    /// alternatives (a tracepoint whose prototype changed), the first that
    /// attaches wins.
    pub hooks: &'static [Hook],
    /// The Linux event, in words (the man page; "none: why" for none).
    pub linux: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hook {
    pub program: &'static str,
    pub event: Event,
    /// Hooks in the same group are alternatives; different groups all attach.
    pub group: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    RawTracepoint(&'static str),
    /// A software perf event (PERF_COUNT_SW_*) on every CPU, each
    /// occurrence sampled, in the context of the thread it counts.
    Software {
        config: u32,
        name: &'static str,
    },
}

impl Event {
    fn name(&self) -> &'static str {
        match self {
            Event::RawTracepoint(name) | Event::Software { name, .. } => name,
        }
    }
}

/// A hook on a raw tracepoint.
pub(crate) const fn hook(program: &'static str, tracepoint: &'static str, group: u8) -> Hook {
    Hook { program, event: Event::RawTracepoint(tracepoint), group }
}

/// The statistics of a header (`DT_SI(name)` lines for `DT_SI`), in
/// order: index = statistic number.
pub(crate) fn stats(header: &'static str, entry: &'static str) -> impl Iterator<Item = &'static str> {
    header.lines().filter_map(move |l| l.trim().strip_prefix(entry)?.strip_prefix('(')?.strip_suffix(')'))
}

/// The programs the enabled statistics need, to autoload only them.
pub(crate) fn programs(mappings: &[&Mapping]) -> Vec<&'static str> {
    mappings.iter().flat_map(|m| m.hooks.iter().map(|h| h.program)).collect()
}

/// Attaches each statistic's hooks, one of each group, and says which
/// probe will not fire (or only in part) and why.
pub(crate) fn attach(cx: &mut EnableContext, object: &libbpf_rs::Object, provider: &str, mappings: &[&Mapping]) {
    let silent: Vec<(&str, &str)> = mappings
        .iter()
        .filter(|m| m.hooks.is_empty())
        .map(|m| (m.name, m.linux.strip_prefix("none: ").unwrap_or(m.linux)))
        .collect();
    cx.never_fire(provider, &silent);
    for mapping in mappings.iter().filter(|m| !m.hooks.is_empty()) {
        let probe = format!("{provider}:::{}", mapping.name);
        let mut groups: Vec<u8> = mapping.hooks.iter().map(|h| h.group).collect();
        groups.dedup();
        let group_count = groups.len();
        let mut missing = Vec::new();
        for group in groups {
            let hooks: Vec<&Hook> = mapping.hooks.iter().filter(|h| h.group == group).collect();
            if !hooks.iter().any(|hook| attach_hook(cx, object, hook)) {
                missing.push(hooks[0].event.name());
            }
        }
        if !missing.is_empty() {
            let what = if missing.len() == 1 { "event" } else { "events" };
            let verb = if missing.len() == group_count { "will not fire" } else { "will fire only in part" };
            cx.warnings.push(format!("{probe} {verb}: this kernel has no usable {} {what}", missing.join(" or ")));
        }
    }
}

fn attach_hook(cx: &mut EnableContext, object: &libbpf_rs::Object, hook: &Hook) -> bool {
    match hook.event {
        Event::RawTracepoint(tracepoint) => cx.attach_raw_tp(object, hook.program, tracepoint),
        Event::Software { config, .. } => {
            let Some(prog) = object.progs_mut().find(|p| p.name() == hook.program) else { return false };
            for cpu in super::perf::online_cpus() {
                let Ok(event) = super::perf::open_software(cpu, config) else { return false };
                // The link owns the perf event and closes it.
                let Ok(link) = prog.attach_perf_event(event.as_raw_fd()) else { return false };
                let _ = event.into_raw_fd();
                cx.links.push(link);
            }
            true
        }
    }
}

/// Asserts that `mappings` map the header's statistics in its order and
/// that the provider's man page gives each mapping as `.B name` and the
/// mapping's words.
#[cfg(test)]
pub(crate) fn assert_mapped_and_documented(
    stats: impl Iterator<Item = &'static str>,
    mappings: &[Mapping],
    page: &str,
) {
    let names: Vec<&str> = stats.collect();
    let mapped: Vec<&str> = mappings.iter().map(|m| m.name).collect();
    assert_eq!(names, mapped);
    let page = page.replace("\\-", "-");
    for m in mappings {
        assert!(page.contains(&format!(".B {}\n{}\n", m.name, m.linux)), "the man page lacks {}", m.name);
    }
}
