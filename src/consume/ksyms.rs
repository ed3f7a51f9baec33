//! Kernel symbols for stack() and %a (the session's /proc/kallsyms, read
//! once), as DTrace's `module`symbol+offset`.

use super::printf::FrameFormat;
use super::usyms::UserSymbols;
use crate::defs::layout::read_u64;
use crate::runtime::{Session, UserFrame};
use crate::sema::ir::{ustack_value, SymbolKind};

/// The highest address of user space (x86-64, 47-bit).
const USER_ADDRESS_LIMIT: u64 = 0x7fff_ffff_ffff;

/// Symbolizes kernel addresses and renders stack() and ustack() records.
pub(crate) struct Symbols<'a> {
    session: &'a Session,
    user: UserSymbols,
    /// Spaces before each frame of a stack() record (stackindent).
    pub stack_indent: usize,
    /// The address that stands for each module mod() and umod() keys
    /// name (by pid and name; 0 for the kernel): the first one seen.
    module_addresses: std::cell::RefCell<std::collections::HashMap<(u32, String), u64>>,
    /// The process whose addresses printa()'s %A conversions name: the
    /// pid the row's user symbol key was recorded with.
    pub printa_pid: std::cell::Cell<Option<u32>>,
    /// The -c/-p process (`$target`), whose addresses %A names when
    /// nothing else says whose they are, as DTrace's consumer does.
    pub target: Option<u32>,
}

impl<'a> Symbols<'a> {
    pub(crate) fn new(session: &'a Session, user: UserSymbols) -> Symbols<'a> {
        Symbols {
            session,
            user,
            stack_indent: 14,
            module_addresses: Default::default(),
            printa_pid: Default::default(),
            target: None,
        }
    }

    /// The -c/-p processes: their mappings are read now, while they live,
    /// so their addresses are still named after they exit (the final
    /// printa of `pid$target` keys); `target` names %A's default process.
    pub(crate) fn know_targets(&mut self, pids: &[u32], target: Option<u32>) {
        for &pid in pids {
            self.user.remember(pid);
        }
        self.target = target;
    }

    /// A symbol-typed aggregation key column made canonical, as DTrace's
    /// consumer does before it merges keys (dt_aggregate_sym, _usym, _mod,
    /// _umod): func() and ufunc() addresses become their function's start,
    /// mod() and umod() ones one address per module, so that everything
    /// one function (or module) holds is one key. uaddr() stays as it is,
    /// as do addresses nothing names.
    pub(crate) fn canonicalize(&self, kind: SymbolKind, record: &mut [u8]) {
        let at = if kind.user() { 8 } else { 0 };
        if record.len() < at + 8 {
            return;
        }
        let addr = read_u64(record, at);
        let pid = if kind.user() { read_u64(record, 0) as u32 } else { 0 };
        let canonical = match kind {
            SymbolKind::UAddr => None,
            SymbolKind::Func => self.session.kernel_symbols().resolve(addr).map(|(_, off)| addr - off),
            SymbolKind::UFunc => self.user.symbol(pid, addr).and_then(|s| s.function.ok()).map(|(_, off)| addr - off),
            SymbolKind::Mod | SymbolKind::UMod => {
                let module = match kind {
                    SymbolKind::Mod => self
                        .session
                        .kernel_symbols()
                        .resolve(addr)
                        .map(|(name, _)| name.split('`').next().unwrap_or_default().to_string()),
                    _ => self.user.symbol(pid, addr).map(|s| s.module),
                };
                module.map(|m| *self.module_addresses.borrow_mut().entry((pid, m)).or_insert(addr))
            }
        };
        if let Some(canonical) = canonical {
            record[at..at + 8].copy_from_slice(&canonical.to_ne_bytes());
        }
    }

    /// One frame as DTrace prints it: `module`symbol+0xoff`, or the address.
    fn frame(&self, addr: u64) -> String {
        match self.session.kernel_symbols().resolve(addr) {
            Some((name, 0)) => name,
            Some((name, off)) => format!("{name}+0x{off:x}"),
            None => format!("0x{addr:x}"),
        }
    }

    /// A symbol-typed value as DTrace prints it (dt_print_sym, dt_print_mod,
    /// dt_print_usym, dt_print_umod): `record` is the address, after the
    /// pid for a user one. What cannot be named prints as the address.
    pub(crate) fn symbol_text(&self, kind: SymbolKind, record: &[u8]) -> String {
        if !kind.user() {
            let addr = read_u64(record, 0);
            return match self.session.kernel_symbols().resolve(addr) {
                Some((name, _)) if kind == SymbolKind::Mod => name.split('`').next().unwrap_or_default().to_string(),
                Some((name, _)) => name,
                None => format!("0x{addr:x}"),
            };
        }
        let (pid, addr) = (read_u64(record, 0) as u32, read_u64(record, 8));
        match self.user.symbol(pid, addr) {
            Some(symbol) => match kind {
                SymbolKind::UMod => symbol.module,
                SymbolKind::UAddr => symbol.text(true),
                _ => symbol.text(false),
            },
            None => format!("0x{addr:x}"),
        }
    }

    /// The frames of stack `id` (a stack-typed value: a kernel stack ID or
    /// a packed ustack() value), innermost first.
    pub(crate) fn stack_frames(&self, id: u64) -> Vec<String> {
        if let Some((pid, limit, id)) = ustack_value::decode(id) {
            // A frame-pointer walk through code built without frame
            // pointers ends in garbage: a user stack stops at the first
            // address no user process can have.
            let frames: Vec<UserFrame> = self
                .session
                .ustack_frames(limit as u8, id)
                .into_iter()
                .take_while(|f| !matches!(f, UserFrame::Ip(addr) if *addr > USER_ADDRESS_LIMIT))
                .collect();
            return frames.into_iter().map_while(|f| self.user.frame(pid, f)).collect();
        }
        let (depth, id) = ustack_value::decode_kernel(id);
        let frames = self.session.stack_frames(depth as u8, id).into_iter();
        frames.map(|a| self.frame(a)).collect()
    }

    /// A stack as the stack() action prints it.
    pub(crate) fn write_stack(&self, id: u64, out: &mut Vec<u8>) {
        self.write_frames(id, self.stack_indent, None, out);
    }

    /// A stack as DTrace prints it (dt_print_stack): a newline, then each
    /// frame on its own line, indented, through `frame`'s %s field if any.
    fn write_frames(&self, id: u64, indent: usize, frame: Option<&FrameFormat>, out: &mut Vec<u8>) {
        out.push(b'\n');
        for text in self.stack_frames(id) {
            out.extend(std::iter::repeat_n(b' ', indent));
            match frame {
                Some(f) => f.write(text.as_bytes(), out),
                None => out.extend_from_slice(text.as_bytes()),
            }
            out.push(b'\n');
        }
    }
}

impl super::printf::FormatContext for Symbols<'_> {
    fn kernel_symbol(&self, addr: u64) -> Option<(String, u64)> {
        self.session.kernel_symbols().resolve(addr)
    }
    fn user_symbol(&self, addr: u64) -> Option<(String, u64)> {
        let symbol = self.user.symbol(self.printa_pid.get().or(self.target)?, addr)?;
        Some(match symbol.function {
            Ok((name, off)) => (format!("{}`{name}", symbol.module), off),
            Err(addr) => (format!("{}`0x{addr:x}", symbol.module), 0),
        })
    }
    /// `record` is the stack ID the stack() record carries.
    fn stack(&self, record: &[u8], indent: usize, frame: &FrameFormat, out: &mut Vec<u8>) {
        if let Some(id) = record.get(..8).and_then(|b| b.try_into().ok()) {
            self.write_frames(u64::from_ne_bytes(id), indent, Some(frame), out);
        }
    }
}
