//! perf events for entry programs: tracepoint events, CPU clocks and
//! software events, which the syscall, profile and vminfo providers attach
//! their programs to.

use std::os::fd::{FromRawFd, OwnedFd};

use anyhow::{Context, Result};

/// _IO('$', 0) from linux/perf_event.h.
pub(crate) const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;

/// A perf event for tracepoint `id` (all CPUs: a BPF program attached to a
/// tracepoint event runs wherever the tracepoint fires).
pub(crate) fn open_tracepoint(id: u64) -> Result<OwnedFd> {
    // SAFETY: perf_event_attr is plain data; all zeros is a valid value.
    let mut attr: libbpf_sys::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = libbpf_sys::PERF_TYPE_TRACEPOINT;
    attr.size = std::mem::size_of::<libbpf_sys::perf_event_attr>() as u32;
    attr.config = id;
    perf_event_open(&attr, 0).with_context(|| format!("opening tracepoint {id}"))
}

/// A kprobe (or, `retprobe`, a kretprobe) perf event on kernel function
/// `function`, from the kprobe PMU (no tracefs needed); None where the
/// kernel has no kprobes.
pub(crate) fn open_kprobe(function: &str, retprobe: bool) -> Result<OwnedFd> {
    let (pmu_type, retprobe_bit) = kprobe_pmu()?;
    let name = std::ffi::CString::new(function).context("a function name with a NUL")?;
    // SAFETY: perf_event_attr is plain data; all zeros is a valid value.
    let mut attr: libbpf_sys::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = pmu_type;
    attr.size = std::mem::size_of::<libbpf_sys::perf_event_attr>() as u32;
    attr.config = if retprobe { 1 << retprobe_bit } else { 0 };
    attr.__bindgen_anon_3.config1 = name.as_ptr() as u64;
    perf_event_open(&attr, 0).with_context(|| format!("placing a kprobe on {function}"))
}

/// The kprobe PMU's perf type and the config bit that asks for a return
/// probe (its format/retprobe, "config:0"), read once.
fn kprobe_pmu() -> Result<(u32, u32)> {
    static PMU: std::sync::OnceLock<Option<(u32, u32)>> = std::sync::OnceLock::new();
    let pmu = PMU.get_or_init(|| {
        let dir = "/sys/bus/event_source/devices/kprobe";
        let pmu_type = std::fs::read_to_string(format!("{dir}/type")).ok()?.trim().parse().ok()?;
        let retprobe_bit = std::fs::read_to_string(format!("{dir}/format/retprobe"))
            .ok()
            .and_then(|t| t.trim().strip_prefix("config:").and_then(|b| b.parse().ok()))
            .unwrap_or(0);
        Some((pmu_type, retprobe_bit))
    });
    pmu.ok_or_else(|| anyhow::anyhow!("this kernel has no kprobes (CONFIG_KPROBES is not set)"))
}

/// A software cpu-clock perf event on one CPU, sampling every `period_ns`,
/// created disabled: it starts with PERF_EVENT_IOC_ENABLE.
pub(crate) fn open_cpu_clock(cpu: i32, period_ns: u64) -> Result<OwnedFd> {
    // SAFETY: perf_event_attr is plain data; all zeros is a valid value.
    let mut attr: libbpf_sys::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = libbpf_sys::PERF_TYPE_SOFTWARE;
    attr.size = std::mem::size_of::<libbpf_sys::perf_event_attr>() as u32;
    attr.config = libbpf_sys::PERF_COUNT_SW_CPU_CLOCK as u64;
    attr.__bindgen_anon_1.sample_period = period_ns;
    attr.set_disabled(1);
    perf_event_open(&attr, cpu).with_context(|| format!("opening a cpu-clock event on CPU {cpu}"))
}

/// A software perf event (PERF_COUNT_SW_*) on one CPU that samples every
/// occurrence: a BPF program attached to it runs in the thread counted.
pub(crate) fn open_software(cpu: i32, config: u32) -> Result<OwnedFd> {
    // SAFETY: perf_event_attr is plain data; all zeros is a valid value.
    let mut attr: libbpf_sys::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = libbpf_sys::PERF_TYPE_SOFTWARE;
    attr.size = std::mem::size_of::<libbpf_sys::perf_event_attr>() as u32;
    attr.config = u64::from(config);
    attr.__bindgen_anon_1.sample_period = 1;
    perf_event_open(&attr, cpu).with_context(|| format!("opening software event {config} on CPU {cpu}"))
}

/// perf_event_open(2) for every process, on `cpu` (a BPF program on a
/// tracepoint or kprobe event runs on every CPU, whichever it names).
fn perf_event_open(attr: &libbpf_sys::perf_event_attr, cpu: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: attr is initialized; perf_event_open has no other memory effects.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const _,
            -1i32,
            cpu,
            -1i32,
            8u64, /* PERF_FLAG_FD_CLOEXEC */
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: perf_event_open returned a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// The online CPUs.
pub(crate) fn online_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_else(|_| "0".into());
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let mut bounds = part.split('-').filter_map(|n| n.parse::<i32>().ok());
        if let Some(lo) = bounds.next() {
            let hi = bounds.next().unwrap_or(lo);
            cpus.extend(lo..=hi);
        }
    }
    if cpus.is_empty() {
        cpus.push(0);
    }
    cpus
}
