//! The running kernel's symbols (/proc/kallsyms, and /proc/modules for
//! where each module's code ends): stack() frames and func() are named from
//! the text symbols, `%a` and sym() of a lock or other static variable from
//! the data symbols (kernels built with CONFIG_KALLSYMS_ALL list them), and
//! `caller` skips the frames they mark as tracing machinery.

/// Text and data symbols sorted by address.
pub(crate) struct KernelSymbols {
    symbols: Vec<Symbol>,
    /// Each module's [start, end) as /proc/modules gives it.
    modules: Vec<(String, u64, u64)>,
    /// The end of vmlinux's text (_etext).
    vmlinux_end: u64,
    /// The end of vmlinux's image (_end, or a page past its last symbol
    /// where kallsyms lists no data): BPF programs lie beyond it.
    image_end: u64,
}

struct Symbol {
    addr: u64,
    module: String,
    name: String,
    /// Code, not data.
    text: bool,
}

impl KernelSymbols {
    /// Reads the tables (empty when they cannot be read: every address then
    /// prints as a number).
    pub(crate) fn load() -> KernelSymbols {
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
        let mut vmlinux_end = 0;
        let mut image_end = 0;
        let mut symbols: Vec<Symbol> = text
            .lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                let addr = u64::from_str_radix(words.next()?, 16).ok()?;
                let kind = words.next()?;
                let name = words.next()?;
                match name {
                    "_etext" => vmlinux_end = addr,
                    "_end" => image_end = addr,
                    _ => {}
                }
                let text = matches!(kind, "t" | "T" | "w" | "W");
                if addr == 0 || !(text || matches!(kind, "d" | "D" | "b" | "B" | "r" | "R" | "v" | "V")) {
                    return None;
                }
                let module = words.next().map_or("vmlinux", |m| m.trim_start_matches('[').trim_end_matches(']'));
                Some(Symbol { addr, module: module.to_string(), name: name.to_string(), text })
            })
            .collect();
        symbols.sort_by_key(|s| s.addr);
        if image_end == 0 {
            image_end = symbols.iter().rev().find(|s| s.module == "vmlinux").map_or(0, |s| s.addr + 4096);
        }
        let modules = std::fs::read_to_string("/proc/modules")
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let words: Vec<&str> = line.split_whitespace().collect();
                let size: u64 = words.get(1)?.parse().ok()?;
                let base = u64::from_str_radix(words.get(5)?.trim_start_matches("0x"), 16).ok()?;
                Some((words[0].to_string(), base, base + size))
            })
            .collect();
        KernelSymbols { symbols, modules, vmlinux_end, image_end }
    }

    /// (`module`name, offset) of the function `addr` is in.
    pub(crate) fn resolve(&self, addr: u64) -> Option<(String, u64)> {
        let s = self.containing(addr)?;
        Some((format!("{}`{}", s.module, s.name), addr - s.addr))
    }

    /// The symbol `addr` is in: none past the end of vmlinux's image or of
    /// its module (a BPF program's code, which kallsyms may not list).
    fn containing(&self, addr: u64) -> Option<&Symbol> {
        let i = self.symbols.partition_point(|s| s.addr <= addr).checked_sub(1)?;
        let s = &self.symbols[i];
        let end = if s.module == "vmlinux" {
            self.image_end
        } else {
            self.modules.iter().find(|(name, ..)| *name == s.module).map_or(u64::MAX, |(_, _, end)| *end)
        };
        (addr < end).then_some(s)
    }

    /// The address ranges a probe's caller can be in, sorted and merged:
    /// vmlinux's and the modules' code without the tracing machinery. A
    /// BPF program (loaded later, in memory no module has) is in none.
    pub(crate) fn caller_ranges(&self) -> Vec<(u64, u64)> {
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for (i, s) in self.symbols.iter().enumerate() {
            if !s.text || is_machinery(&s.module, &s.name) {
                continue;
            }
            let bound = if s.module == "vmlinux" {
                Some(self.vmlinux_end)
            } else {
                self.modules.iter().find(|(name, ..)| *name == s.module).map(|(_, _, end)| *end)
            };
            let Some(bound) = bound.filter(|b| *b > s.addr) else { continue };
            let end = self.symbols.get(i + 1).map_or(bound, |next| next.addr.min(bound));
            match ranges.last_mut() {
                Some(last) if last.1 == s.addr => last.1 = end,
                _ if end > s.addr => ranges.push((s.addr, end)),
                _ => {}
            }
        }
        ranges
    }
}

/// The addresses of vmlinux symbols `names` (0 for one it lacks), in one
/// pass over /proc/kallsyms without keeping the table.
pub(crate) fn vmlinux_addresses<const N: usize>(names: [&str; N]) -> [u64; N] {
    use std::io::BufRead;
    let mut found = [0u64; N];
    let Ok(file) = std::fs::File::open("/proc/kallsyms") else { return found };
    for line in std::io::BufReader::new(file).lines().map_while(|l| l.ok()) {
        let mut words = line.split_whitespace();
        let (Some(addr), Some(_kind), Some(name), None) = (words.next(), words.next(), words.next(), words.next())
        else {
            continue;
        };
        if let Some(i) = names.iter().position(|n| *n == name) {
            found[i] = u64::from_str_radix(addr, 16).unwrap_or(0);
        }
    }
    found
}

/// Functions that run probes: BPF programs and trampolines, the raw and
/// perf tracepoint glue every tracepoint has, and kprobe and ftrace dispatch.
fn is_machinery(module: &str, name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "bpf_trace_run",
        "__bpf_trace_",
        "__traceiter_",
        "__probestub_",
        "perf_trace_",
        "trace_event_raw_event_",
        "trace_call_bpf",
        "bpf_prog_",
        "__bpf_prog_",
        "bpf_trampoline_",
        "__bpf_tramp_",
        "kprobe_",
        "kretprobe_",
        "__kretprobe_",
        "pre_handler_kretprobe",
        "rethook_",
        "arch_rethook_",
        "fprobe_",
        "ftrace_",
        "arch_ftrace_",
        "trampoline_handler",
        "exc_int3",
        "asm_exc_int3",
        "bpf_overflow_handler",
    ];
    module == "bpf" || PREFIXES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> KernelSymbols {
        let symbols = [
            (0x1000, "vmlinux", "bprm_execve"),
            (0x1100, "vmlinux", "__traceiter_sched_process_exec"),
            (0x1140, "vmlinux", "do_execveat_common"),
            (0x1200, "vmlinux", "bpf_trace_run3"),
            (0x1300, "vmlinux", "ksys_read"),
            (0x2000, "vmlinux", "rtnl_mutex"),
            (0x2020, "vmlinux", "jiffies"),
            (0x9000, "ext4", "ext4_file_read_iter"),
            (0x9100, "ext4", "ext4_llseek"),
        ]
        .map(|(addr, module, name)| Symbol { addr, module: module.into(), name: name.into(), text: addr & 0x2000 == 0 })
        .into();
        KernelSymbols {
            symbols,
            modules: vec![("ext4".into(), 0x9000, 0x9400)],
            vmlinux_end: 0x1400,
            image_end: 0x3000,
        }
    }

    #[test]
    fn caller_ranges_leave_out_machinery_and_what_no_module_has() {
        // The tracepoint glue splits vmlinux's text; ext4's code ends where
        // /proc/modules says, so a BPF program after it is in no range.
        assert_eq!(table().caller_ranges(), [(0x1000, 0x1100), (0x1140, 0x1200), (0x1300, 0x1400), (0x9000, 0x9400)]);
    }

    #[test]
    fn frames_resolve_to_module_and_function() {
        let t = table();
        assert_eq!(t.resolve(0x1150), Some(("vmlinux`do_execveat_common".into(), 0x10)));
        // A BPF program's code, past vmlinux and every module, is no one's.
        assert_eq!(t.resolve(0x3100), None);
        assert_eq!(t.resolve(0x9500), None);
    }

    /// A lock in a static variable is named by its data symbol (lockstat's
    /// `printa("%a")`); data is never where a caller can be.
    #[test]
    fn data_addresses_resolve_to_their_variable() {
        let t = table();
        assert_eq!(t.resolve(0x2000), Some(("vmlinux`rtnl_mutex".into(), 0)));
        assert_eq!(t.resolve(0x2008), Some(("vmlinux`rtnl_mutex".into(), 8)));
        assert!(t.caller_ranges().iter().all(|&(start, end)| end <= 0x2000 || start > 0x2020));
    }
}
