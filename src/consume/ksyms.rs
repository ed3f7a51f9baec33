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
}

impl<'a> Symbols<'a> {
    pub(crate) fn new(session: &'a Session, user: UserSymbols) -> Symbols<'a> {
        Symbols { session, user, stack_indent: 14 }
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
            return frames.into_iter().map(|f| self.user.frame(pid, f)).collect();
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
    fn user_symbol(&self, _addr: u64) -> Option<(String, u64)> {
        None
    }
    /// `record` is the stack ID the stack() record carries.
    fn stack(&self, record: &[u8], indent: usize, frame: &FrameFormat, out: &mut Vec<u8>) {
        if let Some(id) = record.get(..8).and_then(|b| b.try_into().ok()) {
            self.write_frames(u64::from_ne_bytes(id), indent, Some(frame), out);
        }
    }
}
