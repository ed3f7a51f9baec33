//! What the uprobe-based providers (pid, USDT) share: choosing between
//! multi-uprobe links and single uprobes, and the slots of their clause
//! lists in a program array.

use anyhow::{anyhow, bail, Context, Result};
use libbpf_rs::MapCore;

use super::{ClauseProgType, EnableContext, KPROBE, KPROBE_UPROBE_MULTI};

/// The most uprobes attached one at a time (kernels before 6.6): each costs
/// ~40 ms to attach and ~170 ms to detach (measured on 6.18).
pub(crate) const MAX_SINGLE_UPROBES: usize = 64;

/// Loads a provider's entry programs with `open(cx, multi)`: the
/// multi-uprobe ones where the kernel has multi-uprobe links, else the
/// single-uprobe twins. Returns them and whether they are multi. Both read
/// their probe from the attach cookie; `needs_cookies` says who needs them
/// when neither loads.
pub(crate) fn load<T>(
    cx: &mut EnableContext,
    open: impl Fn(&EnableContext, bool) -> Result<T>,
    needs_cookies: &str,
) -> Result<(T, bool)> {
    // Multi-uprobe links came with Linux 6.6, and with them the kernel's
    // `struct bpf_uprobe_multi_link`: before, a uprobe.multi program may
    // load but never attach. DTRACE_NO_UPROBE_MULTI tests the other path
    // on newer kernels.
    let try_multi =
        std::env::var_os("DTRACE_NO_UPROBE_MULTI").is_none() && cx.kernel.has_struct("bpf_uprobe_multi_link");
    match if try_multi { open(cx, true) } else { Err(anyhow!("multi-uprobe links not wanted")) } {
        Ok(loaded) => Ok((loaded, true)),
        Err(_) => Ok((
            open(cx, false).with_context(|| format!("{needs_cookies} BPF attach cookies (Linux 5.15 or later)"))?,
            false,
        )),
    }
}

/// One program-array slot per distinct clause list: the attach cookie
/// carries the slot, so thousands of probes share a few programs.
#[derive(Default)]
pub(crate) struct ClauseSlots<'a> {
    lists: Vec<&'a [usize]>,
}

impl<'a> ClauseSlots<'a> {
    /// The slot of `clauses`, given on first sight.
    pub(crate) fn slot(&mut self, clauses: &'a [usize]) -> u32 {
        let i = self.lists.iter().position(|c| *c == clauses).unwrap_or_else(|| {
            self.lists.push(clauses);
            self.lists.len() - 1
        });
        i as u32
    }

    /// Puts each list's generated program in its slot of `prog_array`, as
    /// programs tail-called from (multi-)uprobe entry programs; `what`
    /// names the probes if there are more lists than slots.
    pub(crate) fn fill(&self, cx: &mut EnableContext, prog_array: &dyn MapCore, multi: bool, what: &str) -> Result<()> {
        let capacity = prog_array.max_entries();
        if self.lists.len() as u32 > capacity {
            bail!("too many different clause lists on {what} probes (the limit is {capacity})");
        }
        let ty: ClauseProgType = if multi { KPROBE_UPROBE_MULTI } else { KPROBE };
        for (slot, clauses) in self.lists.iter().enumerate() {
            cx.fill(prog_array, slot as u32, clauses, ty)?;
        }
        Ok(())
    }
}
