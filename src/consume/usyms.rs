//! User symbols for ustack(): each frame as the kernel recorded it (the
//! build ID of the file it is in and the offset in that file, or a bare
//! address) becomes DTrace's `module`function+0xoff`.
//!
//! Files are found by build ID among the modules the pid provider read for
//! the script's processes, then among the files the frame's process maps
//! (`/proc/PID/maps`, read once per process while it lives), then among
//! the files dtrace maps itself (libc, the loader). Frames of a process
//! that has exited are symbolized as long as their file is one of the
//! first or the last; others print as the hex offset in their file, or the
//! address, as DTrace prints an address it cannot name.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use crate::process::ElfSymbols;
use crate::runtime::UserFrame;

/// A file-backed mapping of a process: [start, end), file offset, path.
struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    path: PathBuf,
}

pub(crate) struct UserSymbols {
    /// Files read for the pid provider, searched first.
    known: Vec<Rc<ElfSymbols>>,
    by_build_id: RefCell<HashMap<[u8; 20], Option<Rc<ElfSymbols>>>>,
    by_path: RefCell<HashMap<PathBuf, Option<Rc<ElfSymbols>>>>,
    maps: RefCell<HashMap<u32, Rc<Vec<Mapping>>>>,
}

/// A build ID as the kernel stores it: its first 20 bytes, zero-padded.
fn padded(id: &[u8]) -> [u8; 20] {
    let mut out = [0u8; 20];
    let n = id.len().min(20);
    out[..n].copy_from_slice(&id[..n]);
    out
}

impl UserSymbols {
    pub(crate) fn new(known: Vec<Rc<ElfSymbols>>) -> UserSymbols {
        let by_path = known.iter().map(|e| (e.path.clone(), Some(e.clone()))).collect();
        UserSymbols {
            known,
            by_build_id: RefCell::new(HashMap::new()),
            by_path: RefCell::new(by_path),
            maps: RefCell::new(HashMap::new()),
        }
    }

    fn file(&self, path: &PathBuf) -> Option<Rc<ElfSymbols>> {
        if let Some(e) = self.by_path.borrow().get(path) {
            return e.clone();
        }
        let elf = ElfSymbols::load(path).map(Rc::new);
        self.by_path.borrow_mut().insert(path.clone(), elf.clone());
        elf
    }

    /// Reads the mappings of live process `pid` now, to name its addresses
    /// after it exits.
    pub(crate) fn remember(&self, pid: u32) {
        self.mappings(pid);
    }

    fn mappings(&self, pid: u32) -> Rc<Vec<Mapping>> {
        if let Some(m) = self.maps.borrow().get(&pid) {
            return m.clone();
        }
        let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        let mut maps = Vec::new();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let (Some(range), Some(_perms), Some(offset)) = (words.next(), words.next(), words.next()) else {
                continue;
            };
            let Some(path) = words.nth(2).filter(|p| p.starts_with('/')) else { continue };
            let Some((start, end)) = range.split_once('-') else { continue };
            let (Ok(start), Ok(end), Ok(offset)) =
                (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16), u64::from_str_radix(offset, 16))
            else {
                continue;
            };
            maps.push(Mapping { start, end, offset, path: PathBuf::from(path) });
        }
        let maps = Rc::new(maps);
        // An empty list (the process is gone) is not cached: it may be a
        // pid that is not running yet.
        if !maps.is_empty() {
            self.maps.borrow_mut().insert(pid, maps.clone());
        }
        maps
    }

    fn by_build_id(&self, pid: u32, id: &[u8; 20]) -> Option<Rc<ElfSymbols>> {
        if let Some(e) = self.by_build_id.borrow().get(id) {
            return e.clone();
        }
        let matches = |e: &ElfSymbols| e.build_id.as_deref().is_some_and(|b| padded(b) == *id);
        let mut found = self.known.iter().find(|e| matches(e)).cloned();
        if found.is_none() {
            let maps = self.mappings(pid);
            let mut paths: Vec<&PathBuf> = maps.iter().map(|m| &m.path).collect();
            paths.dedup();
            found = paths.into_iter().filter_map(|p| self.file(p)).find(|e| matches(e));
        }
        if found.is_none() {
            // The process may be gone: the libraries dtrace maps itself
            // (libc, the loader) are the likeliest files of any process.
            let own = self.mappings(std::process::id());
            let mut paths: Vec<&PathBuf> = own.iter().map(|m| &m.path).collect();
            paths.dedup();
            found = paths.into_iter().filter_map(|p| self.file(p)).find(|e| matches(e));
        }
        self.by_build_id.borrow_mut().insert(*id, found.clone());
        found
    }

    /// One frame as DTrace prints it (dt_print_ustack): `module`function+0xoff`,
    /// `module`0xADDR` for an address of a file no symbol covers, `0xADDR`
    /// outside every file. None ends the stack: DTrace stops at a pc of 0,
    /// and a frame the kernel placed before its file's first mapping (its
    /// offset wrapped around: find_vma's next mapping, for a pc of 0 or a
    /// small garbage value a frame-pointer walk ends on) is such a pc.
    pub(crate) fn frame(&self, pid: u32, frame: UserFrame) -> Option<String> {
        let (elf, offset) = match frame {
            UserFrame::BuildId { build_id, offset } => match self.by_build_id(pid, &build_id) {
                Some(elf) => (elf, offset),
                None => return Some(format!("0x{offset:x}")),
            },
            UserFrame::Ip(ip) => match self.mapped_file(pid, ip) {
                Some((elf, offset)) => return Some(symbol_in(&elf, offset, Some(ip)).text(true)),
                None => return Some(format!("0x{ip:x}")),
            },
        };
        // The process's address of the offset, where its mappings are known.
        let maps = self.mappings(pid);
        let mut file_maps = maps.iter().filter(|m| m.path == elf.path).peekable();
        let first = file_maps.peek().map(|m| (m.start, m.offset));
        let addr = file_maps
            .find(|m| offset >= m.offset && offset - m.offset < m.end - m.start)
            .map(|m| m.start + (offset - m.offset));
        if elf.vaddr_of_offset(offset).is_none() && addr.is_none() {
            let pc = first.map(|(start, file_offset)| offset.wrapping_add(start).wrapping_sub(file_offset));
            return match pc {
                Some(0) | None => None,
                Some(pc) => Some(format!("0x{pc:x}")),
            };
        }
        Some(symbol_in(&elf, offset, addr).text(true))
    }

    /// What a user address of process `pid` is, as ufunc(), umod() and
    /// uaddr() print it (DTrace's dtrace_uaddr2str): None when no file of
    /// the process maps it (or the process is gone).
    pub(crate) fn symbol(&self, pid: u32, addr: u64) -> Option<UserSymbol> {
        let (elf, offset) = self.mapped_file(pid, addr)?;
        Some(symbol_in(&elf, offset, Some(addr)))
    }

    /// The file mapped at `addr` in process `pid`, and the address's offset in it.
    fn mapped_file(&self, pid: u32, addr: u64) -> Option<(Rc<ElfSymbols>, u64)> {
        let maps = self.mappings(pid);
        let m = maps.iter().find(|m| addr >= m.start && addr < m.end)?;
        Some((self.file(&m.path)?, addr - m.start + m.offset))
    }
}

/// A user address named: its file's name, and the function and offset
/// (or, when no symbol covers it, the address: the process's where known,
/// as DTrace prints `module`0xaddr`, else the file's).
pub(crate) struct UserSymbol {
    pub module: String,
    pub function: Result<(String, u64), u64>,
}

impl UserSymbol {
    /// `module`name+0xoff` (without the offset unless `offset`).
    pub(crate) fn text(&self, offset: bool) -> String {
        let module = &self.module;
        match &self.function {
            Ok((name, off)) if *off != 0 && offset => format!("{module}`{name}+0x{off:x}"),
            Ok((name, _)) => format!("{module}`{name}"),
            Err(vaddr) => format!("{module}`0x{vaddr:x}"),
        }
    }
}

/// The symbol at file offset `offset` of `elf`, mapped at `addr` if known.
fn symbol_in(elf: &ElfSymbols, offset: u64, addr: Option<u64>) -> UserSymbol {
    let module = elf.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let function = match elf.vaddr_of_offset(offset) {
        None => Err(addr.unwrap_or(offset)),
        Some(vaddr) => elf.symbolize(vaddr).map(|(name, off)| (name.to_string(), off)).ok_or(addr.unwrap_or(vaddr)),
    };
    UserSymbol { module, function }
}
