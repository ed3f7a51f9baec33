//! The command lines of processes already running when tracing starts,
//! for pr_psargs of a process other than the current one: the core
//! object's `dt_psargs` table, which its exec and fork programs keep up to
//! date from then on (bpf/core.bpf.c). Read from /proc only for scripts
//! that use it.

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags};

use crate::defs::layout;

/// At most this many processes' command lines are kept (least recently
/// used first out).
pub(crate) const ENTRIES: u32 = 32_768;

/// Writes every process's /proc/PID/cmdline into `map` (kernel threads,
/// whose is empty, are left out: pr_psargs shows their comm).
pub(crate) fn fill(map: &dyn MapCore) -> Result<()> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Ok(()) };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        // A process may exit meanwhile: it is simply not there.
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if let Some(value) = psargs(&cmdline) {
            map.update(&pid.to_ne_bytes(), &value, MapFlags::ANY)?;
        }
    }
    Ok(())
}

/// pr_psargs of a /proc cmdline (NUL-separated arguments): joined by
/// spaces, cut to PRARGSZ with its NUL.
fn psargs(cmdline: &[u8]) -> Option<Vec<u8>> {
    let text = cmdline.strip_suffix(&[0]).unwrap_or(cmdline);
    if text.is_empty() {
        return None;
    }
    let mut value = vec![0u8; layout::PSARGS_SIZE];
    for (to, &byte) in value.iter_mut().zip(text.iter().take(layout::PSARGS_SIZE - 1)) {
        *to = if byte == 0 { b' ' } else { byte };
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_joined_by_spaces_and_cut_to_prargsz() {
        let value = psargs(b"sleep\x0010\x00").expect("a command line");
        assert_eq!(&value[..9], b"sleep 10\0");
        assert_eq!(value.len(), 80);
        let long = [b'x'; 200];
        let value = psargs(&long).expect("a command line");
        assert_eq!(value[78], b'x');
        assert_eq!(value[79], 0);
        assert_eq!(psargs(b""), None);
    }
}
