//! The CPUs as D sees them: each CPU's `cpu_t` (the sysinfo provider's
//! arg2) and `cpuinfo_t` (`curcpu`), written into its entry of the core
//! object's `dt_cpuinfo` map (keyed by CPU number) (struct dt_cpu_data in bpf/dtrace.h)
//! when a script uses either. Read from sysfs and /proc/cpuinfo once, at
//! start-up.

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags};

use crate::defs::layout;

/// Solaris' processor states (sys/processor.h) and cpu_t flags (sys/cpuvar.h).
const P_OFFLINE: i32 = 0x0001;
const P_ONLINE: i32 = 0x0002;
const CPU_RUNNING: u16 = 0x001;
const CPU_READY: u16 = 0x002;
const CPU_EXISTS: u16 = 0x008;
const CPU_ENABLE: u16 = 0x010;
const CPU_OFFLINE: u16 = 0x020;

/// What one CPU is.
struct Cpu {
    id: i32,
    online: bool,
    chip: i32,
    node: i32,
    mhz: i32,
}

pub(crate) fn fill(map: &dyn MapCore) -> Result<()> {
    let possible = libbpf_rs::num_possible_cpus()?;
    let online = cpu_list(&std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default());
    let nodes = node_of_cpus();
    let mhz = clock_mhz();
    for id in 0..possible {
        let sysfs = format!("/sys/devices/system/cpu/cpu{id}");
        let chip = std::fs::read_to_string(format!("{sysfs}/topology/physical_package_id"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(-1);
        let cpu = Cpu {
            id: id as i32,
            online: online.contains(&id),
            chip,
            node: nodes.iter().find(|(cpu, _)| *cpu == id).map_or(0, |(_, node)| *node),
            mhz: mhz.iter().find(|(cpu, _)| *cpu == id).map_or(0, |(_, mhz)| *mhz),
        };
        map.update(&(id as u32).to_ne_bytes(), &cpu_data(&cpu), MapFlags::ANY)?;
    }
    Ok(())
}

/// One CPU's struct dt_cpu_data.
fn cpu_data(cpu: &Cpu) -> Vec<u8> {
    let mut v = vec![0u8; layout::CPU_DATA_SIZE];
    let mut put = |off: usize, bytes: &[u8]| v[off..off + bytes.len()].copy_from_slice(bytes);
    let (pi_state, flags) = if cpu.online {
        (P_ONLINE, CPU_RUNNING | CPU_READY | CPU_EXISTS | CPU_ENABLE)
    } else {
        (P_OFFLINE, CPU_EXISTS | CPU_OFFLINE)
    };
    let processor_info = |base: usize, put: &mut dyn FnMut(usize, &[u8])| {
        put(base + layout::PI_STATE, &pi_state.to_ne_bytes());
        put(base + layout::PI_TYPE, std::env::consts::ARCH.as_bytes());
        let fpu: &[u8] = if cfg!(target_arch = "x86_64") { b"i387 compatible" } else { b"" };
        put(base + layout::PI_FPUTYPES, fpu);
        put(base + layout::PI_CLOCK, &cpu.mhz.to_ne_bytes());
    };
    let c = layout::CPU_DATA_CPU;
    put(c + layout::CPU_ID, &cpu.id.to_ne_bytes());
    put(c + layout::CPU_SEQID, &cpu.id.to_ne_bytes());
    put(c + layout::CPU_FLAGS, &flags.to_ne_bytes());
    put(c + layout::CPU_CHIP, &cpu.chip.to_ne_bytes());
    put(c + layout::CPU_LGRP, &cpu.node.to_ne_bytes());
    processor_info(c + layout::CPU_TYPE_INFO, &mut put);
    let i = layout::CPU_DATA_INFO;
    put(i + layout::CPUINFO_ID, &cpu.id.to_ne_bytes());
    put(i + layout::CPUINFO_PSET, &(-1i32).to_ne_bytes());
    put(i + layout::CPUINFO_CHIP, &cpu.chip.to_ne_bytes());
    put(i + layout::CPUINFO_LGRP, &cpu.node.to_ne_bytes());
    processor_info(i + layout::CPUINFO_INFO, &mut put);
    v
}

/// The CPUs of a sysfs list ("0-3,8,10-11").
fn cpu_list(text: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(first), Ok(last)) = (first.parse::<usize>(), last.parse::<usize>()) {
            cpus.extend(first..=last);
        }
    }
    cpus
}

/// (CPU, NUMA node) for every CPU a node lists.
fn node_of_cpus() -> Vec<(usize, i32)> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") else { return Vec::new() };
    let mut pairs = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(node) = name.strip_prefix("node").and_then(|n| n.parse::<i32>().ok()) else { continue };
        let list = std::fs::read_to_string(entry.path().join("cpulist")).unwrap_or_default();
        pairs.extend(cpu_list(&list).into_iter().map(|cpu| (cpu, node)));
    }
    pairs
}

/// (CPU, MHz): the highest frequency cpufreq gives, else /proc/cpuinfo's.
fn clock_mhz() -> Vec<(usize, i32)> {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mut pairs = Vec::new();
    let mut current = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        match key.trim() {
            "processor" => current = value.trim().parse::<usize>().ok(),
            "cpu MHz" => {
                if let (Some(cpu), Ok(mhz)) = (current, value.trim().parse::<f64>()) {
                    pairs.push((cpu, mhz.round() as i32));
                }
            }
            _ => {}
        }
    }
    for (cpu, mhz) in pairs.iter_mut() {
        let max = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq");
        if let Some(khz) = std::fs::read_to_string(max).ok().and_then(|s| s.trim().parse::<i64>().ok()) {
            *mhz = (khz / 1000) as i32;
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_read_as_sysfs_writes_them() {
        assert_eq!(cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(cpu_list("0\n"), vec![0]);
        assert!(cpu_list("").is_empty());
    }

    #[test]
    fn a_cpus_entry_holds_its_id_in_both_structs() {
        let v = cpu_data(&Cpu { id: 5, online: true, chip: 1, node: 0, mhz: 2000 });
        let at = |off: usize| i32::from_ne_bytes(v[off..off + 4].try_into().expect("4 bytes"));
        assert_eq!(at(layout::CPU_DATA_CPU + layout::CPU_ID), 5);
        assert_eq!(at(layout::CPU_DATA_INFO + layout::CPUINFO_ID), 5);
        assert_eq!(at(layout::CPU_DATA_INFO + layout::CPUINFO_PSET), -1);
        assert_eq!(at(layout::CPU_DATA_INFO + layout::CPUINFO_CHIP), 1);
    }
}
