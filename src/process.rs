//! The ELF images of user processes: the modules a process maps (or, for a
//! -c command held before its exec, the files it will map) and their
//! function symbols, read once per process and file. The pid provider
//! places probes with them; ustack() frames are symbolized with them
//! (consume/usyms.rs).
//!
//! Modules are the ELF files the process maps (`/proc/PID/maps`); for a
//! -c command still held before its exec, the program and the libraries the
//! dynamic loader would map (`ld.so --list`). Functions are the defined
//! function symbols of `.symtab` and `.dynsym`, read with the `object`
//! crate. An IFUNC symbol (glibc's `strlen`) is resolved to the
//! implementation the loader picks, as this process's own loader picks it
//! for the same file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use object::{Object, ObjectSegment, ObjectSymbol, SymbolFlags};

/// A function symbol of a module.
#[derive(Debug, Clone)]
pub(crate) struct Function {
    pub name: String,
    /// Virtual address in the file's own layout (st_value).
    pub vaddr: u64,
    /// Bytes, 0 if unknown.
    pub size: u64,
    /// Whether a uprobe can be placed on its first instruction.
    pub probeable: bool,
    /// A weak symbol (STB_WEAK).
    pub weak: bool,
    /// A file-local symbol (STB_LOCAL: static functions).
    pub local: bool,
}

/// The functions and load segments of one ELF file.
#[derive(Debug)]
pub(crate) struct ElfSymbols {
    pub path: PathBuf,
    /// Functions by name order of discovery; `by_addr` sorts them.
    pub functions: Vec<Function>,
    by_addr: Vec<usize>,
    /// PT_LOAD segments: (vaddr, file offset, file size).
    segments: Vec<(u64, u64, u64)>,
    /// Each segment's size in memory (past its file size: .bss).
    memory_sizes: Vec<u64>,
    pub build_id: Option<Vec<u8>>,
    /// The entry point's virtual address (e_entry).
    pub entry: u64,
    /// The USDT probe sites its `.note.stapsdt` notes declare.
    pub usdt: Vec<UsdtNote>,
    /// The `*_ENABLED()` tests of the headers `dtrace -h` writes (no
    /// arguments): sites that only hold a probe's semaphore.
    pub usdt_enabled: Vec<UsdtNote>,
    /// The translated arguments of its USDT probes whose provider
    /// definition translates them (the notes `dtrace -G` writes).
    pub usdt_argmaps: Vec<UsdtArgMap>,
}

/// What D scripts see of a USDT probe's arguments, where its provider
/// definition translates them (`crate::usdt_build::ARGMAP_SECTION`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsdtArgMap {
    pub provider: String,
    /// As the stapsdt note names the probe (`function__entry`).
    pub name: String,
    /// For each translated argument, the native argument it is.
    pub map: Vec<usize>,
    /// The translated arguments' D types.
    pub types: Vec<String>,
}

/// A USDT probe site: one `.note.stapsdt` note (the stapsdt note format
/// of <sys/sdt.h>: three addresses, then the provider, the probe name and
/// the argument descriptors as NUL-terminated strings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsdtNote {
    pub provider: String,
    /// The probe's name as written in C (`function__entry`).
    pub name: String,
    /// The site's virtual address in the file's layout.
    pub vaddr: u64,
    /// The semaphore's virtual address; 0 if the probe has none.
    pub semaphore: u64,
    /// The argument descriptors (`-4@%eax 8@-8(%rbp) 4@$5`).
    pub args: String,
}

const STT_FUNC: u8 = 2;
const STT_GNU_IFUNC: u8 = 10;

/// Adds the defined function symbols of `symbols` not named before.
fn add_functions<'data, S: ObjectSymbol<'data>>(
    symbols: impl Iterator<Item = S>,
    functions: &mut Vec<Function>,
    seen: &mut HashMap<String, ()>,
    ifuncs: &mut Vec<usize>,
) {
    for sym in symbols {
        let SymbolFlags::Elf { st_info, .. } = sym.flags() else { continue };
        let kind = st_info & 0xf;
        if !(kind == STT_FUNC || kind == STT_GNU_IFUNC) || sym.is_undefined() || sym.address() == 0 {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        if name.is_empty() || seen.insert(name.to_string(), ()).is_some() {
            continue;
        }
        if kind == STT_GNU_IFUNC {
            ifuncs.push(functions.len());
        }
        functions.push(Function {
            name: name.to_string(),
            vaddr: sym.address(),
            size: sym.size(),
            probeable: true,
            weak: st_info >> 4 == 2,
            local: st_info >> 4 == 0,
        });
    }
}

/// Where distributions install separate debug files by build ID
/// (Debian's *-dbg and *-dbgsym packages, Fedora's debuginfo).
const DEBUG_BUILD_ID_DIR: &str = "/usr/lib/debug/.build-id";

/// The separate debug file of the ELF file with build ID `id`, if
/// installed, mapped: only the parts read are brought in.
fn debug_file_of(id: &[u8]) -> Option<memmap2::Mmap> {
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let (dir, rest) = (hex.get(..2)?, hex.get(2..)?);
    let file = std::fs::File::open(Path::new(DEBUG_BUILD_ID_DIR).join(dir).join(format!("{rest}.debug"))).ok()?;
    // SAFETY: a read-only mapping of a file packages install; a file
    // changed under it while symbols are read yields wrong names at worst.
    unsafe { memmap2::Mmap::map(&file) }.ok()
}

impl ElfSymbols {
    pub(crate) fn load(path: &Path) -> Option<ElfSymbols> {
        let data = std::fs::read(path).ok()?;
        let file = object::File::parse(&*data).ok()?;
        let segments: Vec<(u64, u64, u64)> =
            file.segments().map(|s| (s.address(), s.file_range().0, s.file_range().1)).collect();
        let memory_sizes = file.segments().map(|s| s.size()).collect();
        let mut functions = Vec::new();
        let mut seen: HashMap<String, ()> = HashMap::new();
        let mut ifuncs = Vec::new();
        add_functions(file.symbols().chain(file.dynamic_symbols()), &mut functions, &mut seen, &mut ifuncs);
        let build_id = file.build_id().ok().flatten().map(<[u8]>::to_vec);
        // A stripped file's static functions (glibc's
        // __libc_start_call_main, where every program's stack begins) are
        // in its separate debug file, found by build ID as debuggers and
        // dtrace-utils find it; mapped, not read: only its symbol table is
        // touched. They name ustack() frames; probes stay on the file's own
        // symbols (glibc's static variants include ones whose first
        // instruction the kernel will not probe, and finding those among
        // thousands in one multi-uprobe link costs seconds).
        let own_functions = functions.len();
        if file.section_by_name(".symtab").is_none() {
            if let Some(debug) = build_id.as_deref().and_then(debug_file_of) {
                if let Ok(debug_file) = object::File::parse(&*debug) {
                    add_functions(debug_file.symbols(), &mut functions, &mut seen, &mut ifuncs);
                }
            }
        }
        let usdt = usdt_notes(&file);
        let usdt_enabled = usdt_enabled_notes(&file);
        let usdt_argmaps = usdt_argmaps(&file);
        let mut elf = ElfSymbols {
            path: path.to_path_buf(),
            functions,
            by_addr: Vec::new(),
            segments,
            memory_sizes,
            build_id,
            entry: file.entry(),
            usdt,
            usdt_enabled,
            usdt_argmaps,
        };
        let mut resolved_ifuncs = std::collections::HashSet::new();
        for i in ifuncs {
            if let Some(vaddr) = resolve_ifunc(path, &elf.functions[i].name) {
                elf.functions[i].vaddr = vaddr;
                elf.functions[i].size = 0;
                resolved_ifuncs.insert(i);
            }
        }
        for i in 0..elf.functions.len() {
            let start = elf.file_offset(elf.functions[i].vaddr).and_then(|o| data.get(o as usize..));
            elf.functions[i].probeable = i < own_functions && start.is_some_and(probeable);
        }
        // Of aliases (strchr, index; malloc, __libc_malloc), a frame and a
        // pid probe are named by a global one before a weak one before a
        // static one, then by the fewest leading underscores: sorted last
        // among equals, as symbolize() and canonical() take the last.
        let mut by_addr: Vec<usize> = (0..elf.functions.len()).collect();
        by_addr.sort_by_key(|&i| {
            let f = &elf.functions[i];
            let underscores = f.name.len() - f.name.trim_start_matches('_').len();
            (f.vaddr, !f.local, !f.weak, std::cmp::Reverse(underscores))
        });
        // An IFUNC's implementation has no size of its own here (stripped
        // files name only the IFUNC): it ends where the next function begins.
        for (k, &i) in by_addr.iter().enumerate() {
            let f = &elf.functions[i];
            if f.size != 0 || !resolved_ifuncs.contains(&i) {
                continue;
            }
            let next = by_addr[k + 1..].iter().map(|&j| elf.functions[j].vaddr).find(|&v| v > f.vaddr);
            if let Some(next) = next.filter(|&v| elf.file_offset(v).is_some()) {
                elf.functions[i].size = next - f.vaddr;
            }
        }
        elf.by_addr = by_addr;
        Some(elf)
    }

    /// The file offset of virtual address `vaddr` (what a uprobe attaches to).
    pub(crate) fn file_offset(&self, vaddr: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|(va, _, size)| vaddr >= *va && vaddr < va + size)
            .map(|(va, off, _)| vaddr - va + off)
    }

    /// The offset in the file that `vaddr` is at as the kernel counts it
    /// for a uprobe's reference counter (a USDT semaphore): its segment's
    /// file offset plus the distance, also for a zero-initialized variable
    /// (.bss) past the segment's file data.
    pub(crate) fn counter_offset(&self, vaddr: u64) -> Option<u64> {
        self.segments
            .iter()
            .zip(&self.memory_sizes)
            .find(|((va, _, _), memsz)| vaddr >= *va && vaddr < va + **memsz)
            .map(|((va, off, _), _)| vaddr - va + off)
    }

    /// The virtual address of file offset `offset`.
    pub(crate) fn vaddr_of_offset(&self, offset: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|(_, off, size)| offset >= *off && offset < off + size)
            .map(|(va, off, _)| offset - off + va)
    }

    /// The name the functions at `vaddr` go by (of aliases, the one a
    /// frame there is named by).
    pub(crate) fn canonical(&self, vaddr: u64) -> Option<&Function> {
        let i = self.by_addr.partition_point(|&i| self.functions[i].vaddr <= vaddr).checked_sub(1)?;
        Some(&self.functions[self.by_addr[i]]).filter(|f| f.vaddr == vaddr)
    }

    /// The function `vaddr` is in and the distance into it: the function
    /// at or before it, unless that one's size says it ends before (a
    /// symbol of size 0, as `_init` and `_fini` often are, covers only its
    /// own address, as libproc's lookups take it).
    pub(crate) fn symbolize(&self, vaddr: u64) -> Option<(&str, u64)> {
        let i = self.by_addr.partition_point(|&i| self.functions[i].vaddr <= vaddr).checked_sub(1)?;
        let f = &self.functions[self.by_addr[i]];
        let off = vaddr - f.vaddr;
        (off == 0 || off < f.size).then_some((f.name.as_str(), off))
    }
}

/// The argument maps of the notes `dtrace -G` writes (see
/// `crate::usdt_build::ARGMAP_SECTION` for their layout).
pub(crate) fn usdt_argmaps(file: &object::File) -> Vec<UsdtArgMap> {
    use object::ObjectSection;
    let section = crate::usdt_build::ARGMAP_SECTION;
    let Some(data) = file.section_by_name_bytes(section).and_then(|s| s.data().ok()) else { return Vec::new() };
    let mut maps = Vec::new();
    for desc in notes_of(data, file.is_little_endian(), b"dtrace\0", crate::usdt_build::ARGMAP_NOTE_TYPE) {
        let mut strings = desc.split(|&b| b == 0);
        let (Some(provider), Some(name)) = (strings.next(), strings.next()) else { continue };
        let counted = provider.len() + name.len() + 2;
        let Some(&count) = desc.get(counted) else { continue };
        let Some(map) = desc.get(counted + 1..counted + 1 + count as usize) else { continue };
        let types = desc[counted + 1 + count as usize..]
            .split(|&b| b == 0)
            .take(count as usize)
            .map(|t| String::from_utf8_lossy(t).into_owned())
            .collect();
        maps.push(UsdtArgMap {
            provider: String::from_utf8_lossy(provider).into_owned(),
            name: String::from_utf8_lossy(name).into_owned(),
            map: map.iter().map(|&i| usize::from(i)).collect(),
            types,
        });
    }
    maps
}

/// The descriptors of the notes in `data` (an ELF note section) whose
/// owner is `owner` (with its NUL) and type `kind`, in the file's byte
/// order (`little`); a truncated note ends the list.
fn notes_of<'a>(data: &'a [u8], little: bool, owner: &[u8], kind: u32) -> Vec<&'a [u8]> {
    let mut found = Vec::new();
    let mut at = 0;
    while let (Some(namesz), Some(descsz), Some(k)) =
        (read_word(data, at, 4, little), read_word(data, at + 4, 4, little), read_word(data, at + 8, 4, little))
    {
        let (namesz, descsz) = (namesz as usize, descsz as usize);
        let name_at = at + 12;
        let desc_at = name_at + namesz.next_multiple_of(4);
        at = desc_at + descsz.next_multiple_of(4);
        let Some(desc) = data.get(desc_at..desc_at + descsz) else { break };
        if data.get(name_at..name_at + namesz) == Some(owner) && k == u64::from(kind) {
            found.push(desc);
        }
    }
    found
}

/// The `size`-byte word at `at` of `bytes` in the file's byte order.
fn read_word(bytes: &[u8], at: usize, size: usize, little: bool) -> Option<u64> {
    let bytes = bytes.get(at..at.checked_add(size)?)?;
    Some(bytes.iter().enumerate().fold(0u64, |v, (i, &byte)| {
        let shift = if little { i * 8 } else { (size - 1 - i) * 8 };
        v | u64::from(byte) << shift
    }))
}

const NT_STAPSDT: u32 = 3;

/// The USDT notes of an ELF file. A site's address is adjusted by how far
/// `.stapsdt.base` moved since the note was written (prelink), as
/// <sys/sdt.h> asks of its readers.
pub(crate) fn usdt_notes<'data, R: object::ReadRef<'data>>(file: &object::File<'data, R>) -> Vec<UsdtNote> {
    use object::ObjectSection;
    let Some(section) = file.section_by_name(".note.stapsdt") else { return Vec::new() };
    let Ok(data) = section.data() else { return Vec::new() };
    let base_now = file.section_by_name(".stapsdt.base").map(|s| s.address());
    let little = file.is_little_endian();
    let addr_size = if file.is_64() { 8 } else { 4 };
    let mut notes = Vec::new();
    for desc in notes_of(data, little, b"stapsdt\0", NT_STAPSDT) {
        let word = |at: usize| read_word(desc, at, addr_size, little);
        let (Some(pc), Some(base), Some(semaphore)) = (word(0), word(addr_size), word(2 * addr_size)) else {
            continue;
        };
        let mut strings = desc[3 * addr_size..].split(|&b| b == 0).map(|s| String::from_utf8_lossy(s).into_owned());
        let (Some(provider), Some(name)) = (strings.next(), strings.next()) else { continue };
        let args = strings.next().unwrap_or_default();
        let vaddr = match base_now {
            Some(now) if base != 0 => pc.wrapping_add(now).wrapping_sub(base),
            _ => pc,
        };
        notes.push(UsdtNote { provider, name, vaddr, semaphore, args });
    }
    notes
}

/// The is-enabled tests of a file (`crate::usdt_build::ENABLED_SECTION`):
/// each a site of its probe without arguments.
pub(crate) fn usdt_enabled_notes<'data, R: object::ReadRef<'data>>(file: &object::File<'data, R>) -> Vec<UsdtNote> {
    use object::ObjectSection;
    let Some(section) = file.section_by_name_bytes(crate::usdt_build::ENABLED_SECTION) else { return Vec::new() };
    let Ok(data) = section.data() else { return Vec::new() };
    let little = file.is_little_endian();
    let addr_size = if file.is_64() { 8 } else { 4 };
    let mut notes = Vec::new();
    for desc in notes_of(data, little, b"dtrace\0", crate::usdt_build::ENABLED_NOTE_TYPE) {
        let word = |at: usize| read_word(desc, at, addr_size, little);
        let (Some(vaddr), Some(semaphore)) = (word(0), word(addr_size)) else { continue };
        let mut strings = desc[2 * addr_size..].split(|&b| b == 0).map(|s| String::from_utf8_lossy(s).into_owned());
        let (Some(provider), Some(name)) = (strings.next(), strings.next()) else { continue };
        notes.push(UsdtNote { provider, name, vaddr, semaphore, args: String::new() });
    }
    notes
}

/// Whether the kernel places a uprobe on the instruction at `code`: x86
/// refuses segment-override and lock prefixes (arch/x86/kernel/uprobes.c,
/// is_prefix_bad), which a function that starts with a locked operation
/// (pthread_spin_lock) has. A refusal found only when attaching would make
/// the kernel undo a whole multi-uprobe link.
fn probeable(code: &[u8]) -> bool {
    if !cfg!(target_arch = "x86_64") {
        return true;
    }
    for &b in code.iter().take(15) {
        match b {
            0x26 | 0x2e | 0x36 | 0x3e | 0xf0 => return false,
            0x66 | 0x67 | 0x64 | 0x65 | 0xf2 | 0xf3 => continue,
            // int3 and hlt are never probed either.
            0xcc | 0xf4 => return false,
            _ => return true,
        }
    }
    true
}

impl ElfSymbols {
    /// The offsets in function `f` of its instructions a uprobe can take,
    /// `file` being this file's bytes (none if its size is unknown).
    pub(crate) fn instruction_offsets(&self, f: &Function, file: &[u8]) -> Vec<u64> {
        let Some(start) = self.file_offset(f.vaddr) else { return Vec::new() };
        let Some(code) = file.get(start as usize..(start + f.size) as usize) else { return Vec::new() };
        instruction_starts(code).into_iter().filter(|&off| probeable(&code[off as usize..])).collect()
    }
}

/// Where each instruction of `code` starts.
#[cfg(target_arch = "x86_64")]
fn instruction_starts(code: &[u8]) -> Vec<u64> {
    let mut decoder = iced_x86::Decoder::new(64, code, iced_x86::DecoderOptions::NONE);
    let mut starts = Vec::new();
    while decoder.can_decode() {
        let at = decoder.position() as u64;
        // Bytes that decode as nothing (padding, data) end the function's
        // code: no probe is placed inside what is not an instruction.
        if decoder.decode().is_invalid() {
            break;
        }
        starts.push(at);
    }
    starts
}

/// Where each instruction of `code` starts: fixed 4-byte instructions.
#[cfg(not(target_arch = "x86_64"))]
fn instruction_starts(code: &[u8]) -> Vec<u64> {
    (0..code.len() as u64).step_by(4).collect()
}

/// Whether the kernel places a uprobe on the instruction at file offset
/// `offset` of `path` (see probeable).
pub(crate) fn site_probeable(path: &Path, offset: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let mut code = [0u8; 15];
    let Ok(file) = std::fs::File::open(path) else { return false };
    match file.read_at(&mut code, offset) {
        Ok(n) if n > 0 => probeable(&code[..n]),
        _ => false,
    }
}

/// The address an IFUNC symbol resolves to, when this process maps the same
/// file (glibc's libc.so.6): dlsym() runs the resolver, and the same file on
/// the same CPU picks the same implementation in the target.
fn resolve_ifunc(path: &Path, name: &str) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let cpath = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let cname = std::ffi::CString::new(name).ok()?;
    // SAFETY: RTLD_NOLOAD only finds a library already loaded here; nothing
    // is loaded and no constructor runs.
    let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return None;
    }
    // SAFETY: handle is a live handle; dlsym of an IFUNC calls its resolver,
    // which has no side effects beyond selecting an implementation.
    let addr = unsafe { libc::dlsym(handle, cname.as_ptr()) };
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: info is a valid out-parameter.
    let ok = !addr.is_null() && unsafe { libc::dladdr(addr, &mut info) } != 0;
    // SAFETY: balances the dlopen above.
    unsafe { libc::dlclose(handle) };
    if !ok || info.dli_fbase.is_null() {
        return None;
    }
    // The implementation must be in the same file.
    // SAFETY: dladdr sets dli_fname to a NUL-terminated string.
    let file = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let same = std::fs::canonicalize(Path::new(std::ffi::OsStr::from_bytes(file.to_bytes())))
        .ok()
        .zip(std::fs::canonicalize(path).ok())
        .is_some_and(|(a, b)| a == b);
    same.then(|| addr as u64 - info.dli_fbase as u64)
}

/// One module of a process.
#[derive(Debug)]
pub(crate) struct Module {
    /// The name probemod shows: the file name.
    pub name: String,
    pub is_exe: bool,
    pub elf: Rc<ElfSymbols>,
}

/// Processes' modules and the files they map, each read once.
#[derive(Default)]
pub(crate) struct Processes {
    modules: HashMap<u32, Rc<Vec<Module>>>,
    /// Programs of -c commands not yet exec'd: their pid shows dtrace.
    exec_hints: HashMap<u32, PathBuf>,
    files: HashMap<PathBuf, Rc<ElfSymbols>>,
    /// The USDT providers of files' notes, read without their symbols.
    note_providers: HashMap<PathBuf, Rc<[String]>>,
    /// The -c and -p processes: USDT probes named without a pid are theirs.
    pub targets: Vec<u32>,
}

impl Processes {
    pub(crate) fn set_exec_hint(&mut self, pid: u32, program: PathBuf) {
        self.exec_hints.insert(pid, program);
    }

    /// Every module file known for any process (for ustack()).
    pub(crate) fn known_files(&self) -> Vec<Rc<ElfSymbols>> {
        self.files.values().cloned().collect()
    }

    /// The symbols of the ELF file at `path`, read once.
    pub(crate) fn file(&mut self, path: &Path) -> Option<Rc<ElfSymbols>> {
        if let Some(e) = self.files.get(path) {
            return Some(e.clone());
        }
        let e = Rc::new(ElfSymbols::load(path)?);
        self.files.insert(path.to_path_buf(), e.clone());
        Some(e)
    }

    /// The stapsdt providers named in the notes of the ELF file at `path`
    /// (its section table and notes are all that is read), once a file.
    pub(crate) fn note_providers(&mut self, path: &Path) -> Rc<[String]> {
        if let Some(p) = self.note_providers.get(path) {
            return p.clone();
        }
        let providers: Rc<[String]> = read_note_providers(path).into();
        self.note_providers.insert(path.to_path_buf(), providers.clone());
        providers
    }

    /// The ELF files process `pid` maps, executable first.
    pub(crate) fn mapped_files(&self, pid: u32) -> Vec<PathBuf> {
        mapped_modules(pid).1
    }

    /// The modules of process `pid` among `paths` only (the files whose
    /// USDT notes a system-wide search found), without reading the rest.
    pub(crate) fn some_modules(&mut self, pid: u32, paths: &[PathBuf]) -> Vec<Module> {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        paths
            .iter()
            .filter_map(|path| {
                let elf = self.file(path)?;
                let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                Some(Module { name, is_exe: exe.as_ref() == Some(path), elf })
            })
            .collect()
    }

    /// The modules of process `pid`, read once.
    pub(crate) fn modules(&mut self, pid: u32) -> Rc<Vec<Module>> {
        if let Some(m) = self.modules.get(&pid) {
            return m.clone();
        }
        let (exe, paths) = match self.exec_hints.get(&pid) {
            Some(program) => planned_modules(program),
            None => mapped_modules(pid),
        };
        let mut modules = Vec::new();
        for path in paths {
            let Some(elf) = self.file(&path) else { continue };
            let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            modules.push(Module { name, is_exe: exe.as_ref() == Some(&path), elf });
        }
        let modules = Rc::new(modules);
        self.modules.insert(pid, modules.clone());
        modules
    }
}

/// The ELF files process `pid` maps, executable first.
fn mapped_modules(pid: u32) -> (Option<PathBuf>, Vec<PathBuf>) {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let mut paths: Vec<PathBuf> = exe.iter().cloned().collect();
    for line in text.lines() {
        // address perms offset dev inode path
        let Some(path) = line.split_whitespace().nth(5) else { continue };
        if !path.starts_with('/') {
            continue;
        }
        let path = PathBuf::from(path);
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    (exe, paths)
}

/// The stapsdt providers of an ELF file's notes, reading only its headers,
/// section table and notes (a system-wide search opens every mapped file).
fn read_note_providers(path: &Path) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else { return Vec::new() };
    let cache = object::read::ReadCache::new(file);
    let Ok(elf) = object::File::parse(&cache) else { return Vec::new() };
    let mut providers: Vec<String> = Vec::new();
    for note in usdt_notes(&elf).into_iter().chain(usdt_enabled_notes(&elf)) {
        if !providers.contains(&note.provider) {
            providers.push(note.provider);
        }
    }
    providers
}

/// When process `pid` started, in clock ticks since boot (field 22 of
/// /proc/PID/stat): with the pid, it names one process (pids are reused).
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Every process but this one, by pid (`/proc`).
pub(crate) fn all_pids() -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut pids: Vec<u32> =
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).filter(|&pid| pid != me).collect();
    pids.sort_unstable();
    pids
}

/// The files a program will map when it runs: itself, its interpreter and
/// the libraries its interpreter lists (`ld.so --list`, which loads them
/// without running any of their code).
fn planned_modules(program: &Path) -> (Option<PathBuf>, Vec<PathBuf>) {
    let mut program = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    // A script runs its interpreter (`#!/bin/sh`): that is the process.
    if let Some(interpreter) = shebang(&program) {
        program = std::fs::canonicalize(&interpreter).unwrap_or(interpreter);
    }
    let mut paths = vec![program.clone()];
    let interp = std::fs::read(&program).ok().and_then(|data| {
        let file = object::File::parse(&*data).ok()?;
        let object::File::Elf64(elf) = &file else { return None };
        use object::read::elf::ProgramHeader;
        let endian = elf.endian();
        elf.elf_program_headers().iter().find_map(|ph| {
            if ph.p_type(endian) != object::elf::PT_INTERP {
                return None;
            }
            let bytes = ph.data(endian, &*data).ok()?;
            let text = std::str::from_utf8(bytes).ok()?.trim_end_matches('\0');
            Some(PathBuf::from(text))
        })
    });
    if let Some(interp) = interp {
        if let Ok(out) = std::process::Command::new(&interp).arg("--list").arg(&program).output() {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or
                // "/lib64/ld-linux-x86-64.so.2 (0x...)"
                let line = line.trim();
                let path = match line.split_once(" => ") {
                    Some((_, rest)) => rest.split(" (").next().unwrap_or(""),
                    None => line.split(" (").next().unwrap_or(""),
                };
                if path.starts_with('/') {
                    let path = PathBuf::from(path);
                    if !paths.contains(&path) {
                        paths.push(path);
                    }
                }
            }
        }
        if !paths.contains(&interp) {
            paths.push(interp);
        }
    }
    (Some(program), paths)
}

/// The interpreter a `#!` line names.
fn shebang(path: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n')?];
    let word = std::str::from_utf8(line).ok()?.split_whitespace().next()?;
    Some(PathBuf::from(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stripped_librarys_static_functions_come_from_its_debug_file() {
        // glibc is stripped; libc6-dbg (scripts/install-deps.sh) installs
        // its debug file, whose static __libc_start_call_main calls main.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let libc = maps.lines().filter_map(|l| l.split_whitespace().nth(5)).find(|p| p.contains("/libc.so")).unwrap();
        let elf = ElfSymbols::load(Path::new(libc)).expect("libc is ELF");
        let id = elf.build_id.as_deref().expect("glibc has a build ID");
        assert!(debug_file_of(id).is_some(), "no debug file of {libc} under {DEBUG_BUILD_ID_DIR}");
        let f = elf.functions.iter().find(|f| f.name == "__libc_start_call_main").expect("the static function");
        assert!(f.local);
        let name = elf.symbolize(f.vaddr + 0x10).map(|(n, _)| n.to_string());
        assert_eq!(name.as_deref(), Some("__libc_start_call_main"));
        // It names frames; the pid provider's probes stay on libc's own symbols.
        assert!(!f.probeable);
    }

    #[test]
    fn reads_this_programs_symbols() {
        let exe = std::env::current_exe().unwrap();
        let elf = ElfSymbols::load(&exe).expect("the test binary is ELF");
        assert!(elf.functions.iter().any(|f| f.name == "main"));
        let main = elf.functions.iter().find(|f| f.name == "main").unwrap();
        assert_eq!(elf.symbolize(main.vaddr + 1).map(|(n, o)| (n.to_string(), o)), Some(("main".to_string(), 1)));
        let off = elf.file_offset(main.vaddr).unwrap();
        assert_eq!(elf.vaddr_of_offset(off), Some(main.vaddr));
    }

    /// Instruction boundaries of real x86-64 code: push rbp; mov rbp,rsp;
    /// lock inc dword [rax] (refused: a lock prefix); pop rbp; ret.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn instruction_probes_skip_what_uprobes_refuse() {
        let code = [0x55, 0x48, 0x89, 0xe5, 0xf0, 0xff, 0x00, 0x5d, 0xc3];
        let f = Function {
            name: "f".into(),
            vaddr: 0,
            size: code.len() as u64,
            probeable: true,
            weak: false,
            local: false,
        };
        let elf = ElfSymbols {
            path: "/f.bin".into(),
            functions: vec![f.clone()],
            by_addr: vec![0],
            segments: vec![(0, 0, code.len() as u64)],
            memory_sizes: vec![code.len() as u64],
            build_id: None,
            entry: 0,
            usdt: Vec::new(),
            usdt_enabled: Vec::new(),
            usdt_argmaps: Vec::new(),
        };
        assert_eq!(elf.instruction_offsets(&f, &code), [0, 1, 7, 8]);
    }

    #[test]
    fn a_symbol_of_size_zero_names_only_its_own_address() {
        let function = |name: &str, vaddr, size| Function {
            name: name.into(),
            vaddr,
            size,
            probeable: true,
            weak: false,
            local: false,
        };
        let elf = ElfSymbols {
            path: "/lib/x".into(),
            functions: vec![function("_fini", 0x1000, 0), function("f", 0x2000, 0x10)],
            by_addr: vec![0, 1],
            segments: vec![(0, 0, 0x3000)],
            memory_sizes: vec![0x3000],
            build_id: None,
            entry: 0,
            usdt: Vec::new(),
            usdt_enabled: Vec::new(),
            usdt_argmaps: Vec::new(),
        };
        assert_eq!(elf.symbolize(0x1000), Some(("_fini", 0)));
        assert_eq!(elf.symbolize(0x1800), None);
        assert_eq!(elf.symbolize(0x200f), Some(("f", 0xf)));
        assert_eq!(elf.symbolize(0x2010), None);
    }
}
