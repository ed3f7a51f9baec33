//! Kernel types from the running kernel's BTF, read on demand.
//!
//! Nothing is read until a script names a kernel type (`curthread`,
//! `(struct file *)arg0`); then /sys/kernel/btf/vmlinux is memory-mapped,
//! not parsed, and only the types the script reaches are decoded. Compiling
//! `curthread->comm` costs one scan of BTF's type names (~4 ms here),
//! once per struct the script names, not a decoding of 100,000 types.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::{Mutex, OnceLock};

use btf_rs::{Backend, Btf};

use super::ir::{Record, RecordBody, Type};

const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";

/// What a member access resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MemberKind {
    /// An integer, pointer, or (for `.`/`->` chains) an embedded struct.
    Value(Type),
    /// A `char` array: read as a string of at most `len` bytes.
    CharArray { len: usize },
    /// An integer bit-field: `bits` bits, `shift` bits into the storage
    /// unit (an integer of `ty`'s size) at the member's offset.
    Bitfield { ty: Type, shift: u32, bits: u32 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemberRef {
    /// Byte offset from the start of the struct.
    pub offset: usize,
    pub kind: MemberKind,
}

// How many times this thread read the kernel's BTF: start-up reads it only
// for scripts that name kernel types.
#[cfg(test)]
thread_local! {
    pub(crate) static LOADS_ON_THIS_THREAD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

#[derive(Default)]
pub(crate) struct KernelBtf {
    btf: Option<Btf>,
    /// Records already looked up: each name lookup scans BTF's names.
    records: HashMap<(String, bool), Rc<Record>>,
    /// Kernel variables already looked up: each lookup reads /proc/kallsyms.
    variables: HashMap<(Option<String>, String), KernelVariable>,
    /// Kernel functions by name, indexed in one pass over BTF the first
    /// time a function is asked about (fbt probes name many).
    functions: Option<HashMap<String, u32>>,
    /// Functions looked up without the index so far (`function_id`).
    function_scans: u32,
    /// The in-memory copy mapped when sysfs cannot be mapped directly.
    _copy: Option<std::fs::File>,
}

impl KernelBtf {
    fn btf(&mut self) -> Result<&Btf, String> {
        if self.btf.is_none() {
            #[cfg(test)]
            LOADS_ON_THIS_THREAD.with(|n| n.set(n.get() + 1));
            let btf = match Btf::from_file_with_backend(VMLINUX_BTF, Backend::Mmap) {
                Ok(btf) => btf,
                // sysfs can map the BTF only since Linux 6.16: before, map a copy.
                Err(_) => {
                    let (btf, copy) =
                        map_a_copy().map_err(|e| format!("cannot read the kernel's types from {VMLINUX_BTF}: {e}"))?;
                    self._copy = Some(copy);
                    btf
                }
            };
            self.btf = Some(btf);
        }
        Ok(self.btf.as_ref().expect("just loaded"))
    }

    /// `struct name` (or `union name`) of the running kernel.
    /// The enumerators of the kernel's `enum name`, by value.
    pub(crate) fn enumerators(&mut self, name: &str) -> Option<Vec<(i64, String)>> {
        let btf = self.btf().ok()?;
        let types = btf.resolve_types_by_name(name).ok()?;
        let e = types.iter().find_map(|t| match t {
            btf_rs::Type::Enum(e) => Some(e),
            _ => None,
        })?;
        let signed = e.is_signed();
        let value = |v: u32| if signed { i64::from(v as i32) } else { i64::from(v) };
        Some(e.members.iter().filter_map(|m| Some((value(m.val()), btf.resolve_name(m).ok()?))).collect())
    }

    pub(crate) fn record(&mut self, name: &str, union: bool) -> Result<Option<Rc<Record>>, String> {
        if let Some(r) = self.records.get(&(name.to_string(), union)) {
            return Ok(Some(r.clone()));
        }
        let btf = self.btf()?;
        let types = btf.resolve_types_by_name(name).unwrap_or_default();
        for t in types {
            match (t, union) {
                (btf_rs::Type::Struct(s), false) | (btf_rs::Type::Union(s), true) => {
                    let record = Rc::new(Record {
                        name: name.to_string(),
                        typedef: None,
                        union,
                        size: s.size(),
                        body: RecordBody::Kernel(s),
                    });
                    self.records.insert((name.to_string(), union), record.clone());
                    return Ok(Some(record));
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// Member `name` of `record`, looking inside anonymous structs and unions.
    pub(crate) fn member(&mut self, record: &Record, name: &str) -> Result<Option<MemberRef>, String> {
        let s = match &record.body {
            RecordBody::D(members) => {
                return Ok(members.iter().find(|m| m.name == name).map(|m| MemberRef {
                    offset: m.offset,
                    kind: match m.bitfield {
                        Some((shift, bits)) => MemberKind::Bitfield { ty: m.ty.clone(), shift, bits },
                        None => MemberKind::of(m.ty.clone()),
                    },
                }))
            }
            RecordBody::Forward => return Ok(None),
            RecordBody::Kernel(s) => s,
        };
        let btf = self.btf()?;
        let found = find_member(btf, s, name, 0)
            .or_else(|| renamed_member(&record.name, name).and_then(|other| find_member(btf, s, other, 0)));
        Ok(found.and_then(|(bit_offset, t, bits)| {
            let kind = MemberKind::of(d_type(btf, &t)?);
            let offset = (bit_offset / 8) as usize;
            match (bits, kind) {
                (None, kind) if bit_offset % 8 == 0 => Some(MemberRef { offset, kind }),
                (_, MemberKind::Value(ty @ Type::Int { .. })) => {
                    // Read through the field type's storage unit, aligned;
                    // a field crossing it (packed structs) is not readable.
                    let unit_bits = 8 * type_bytes(&ty) as u32;
                    let bits = bits.unwrap_or(unit_bits);
                    let shift = bit_offset % unit_bits;
                    if shift + bits > unit_bits {
                        return None;
                    }
                    let offset = ((bit_offset - shift) / 8) as usize;
                    Some(MemberRef { offset, kind: MemberKind::Bitfield { ty, shift, bits } })
                }
                _ => None,
            }
        }))
    }
}

/// Members the kernel renamed, by the other name they have had: a script
/// (or the D library) written for one kernel runs on the others.
fn renamed_member(record: &str, name: &str) -> Option<&'static str> {
    const RENAMES: &[(&str, &str, &str)] = &[
        // Linux 5.14 renamed task_struct.state to __state.
        ("task_struct", "__state", "state"),
    ];
    RENAMES.iter().find_map(|&(r, new, old)| match () {
        _ if r != record => None,
        _ if name == new => Some(old),
        _ if name == old => Some(new),
        _ => None,
    })
}

/// One member of a struct, for print(): anonymous members keep an empty
/// name; `ty` is `None` for types D cannot show (floats, functions).
pub(crate) struct Field {
    pub name: String,
    pub bit_offset: usize,
    pub bits: Option<u32>,
    pub ty: Option<Type>,
    /// The typedef the member is declared with (`atomic_t`), if any.
    pub typedef: Option<String>,
}

impl KernelBtf {
    /// Every member of `record`, in order.
    pub(crate) fn fields(&mut self, record: &Record) -> Result<Vec<Field>, String> {
        let s = match &record.body {
            RecordBody::D(members) => {
                return Ok(members
                    .iter()
                    .map(|m| Field {
                        name: m.name.clone(),
                        bit_offset: 8 * m.offset + m.bitfield.map_or(0, |(shift, _)| shift as usize),
                        bits: m.bitfield.map(|(_, bits)| bits),
                        ty: Some(m.ty.clone()),
                        typedef: None,
                    })
                    .collect())
            }
            RecordBody::Forward => return Ok(Vec::new()),
            RecordBody::Kernel(s) => s,
        };
        let btf = self.btf()?;
        Ok(s.members
            .iter()
            .map(|m| {
                let t = btf.resolve_chained_type(m).ok();
                Field {
                    name: btf.resolve_name(m).unwrap_or_default(),
                    bit_offset: m.bit_offset() as usize,
                    bits: m.bitfield_size().filter(|&b| b != 0),
                    ty: t.as_ref().and_then(|t| d_type(btf, t)),
                    typedef: t.as_ref().and_then(|t| typedef_name(btf, t)),
                }
            })
            .collect())
    }
}

/// A kernel variable named with DTrace's backquote (`` `jiffies ``).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KernelVariable {
    /// Its address, from /proc/kallsyms.
    At(u64),
    /// A per-CPU variable: its symbol is an offset, not an address.
    PerCpu,
    /// Not in /proc/kallsyms (or addresses are hidden from us).
    Unknown,
}

impl KernelBtf {
    /// Looks `name` up among the kernel's data symbols (or any symbol of
    /// `module`). One pass over /proc/kallsyms, only for scripts that use
    /// the backquote.
    pub(crate) fn variable(&mut self, module: Option<&str>, name: &str) -> KernelVariable {
        let key = (module.map(String::from), name.to_string());
        if let Some(known) = self.variables.get(&key) {
            return *known;
        }
        let found = self.find_variable(module, name);
        self.variables.insert(key, found);
        found
    }

    fn find_variable(&mut self, module: Option<&str>, name: &str) -> KernelVariable {
        use std::io::BufRead;
        let Ok(file) = std::fs::File::open("/proc/kallsyms") else { return KernelVariable::Unknown };
        let module = module.filter(|m| !matches!(*m, "vmlinux" | "kernel" | "genunix"));
        for line in std::io::BufReader::new(file).lines().map_while(|l| l.ok()) {
            let mut words = line.split_whitespace();
            let (Some(addr), Some(_kind), Some(sym)) = (words.next(), words.next(), words.next()) else { continue };
            if sym != name {
                continue;
            }
            let in_module = words.next().map(|m| m.trim_start_matches('[').trim_end_matches(']'));
            if in_module != module {
                continue;
            }
            let Ok(addr) = u64::from_str_radix(addr, 16) else { continue };
            if addr == 0 {
                return KernelVariable::Unknown;
            }
            // BTF describes per-CPU variables (and, on current kernels, only those).
            let per_cpu = self.btf().ok().is_some_and(|btf| {
                btf.resolve_types_by_name(name).unwrap_or_default().iter().any(|t| matches!(t, btf_rs::Type::Var(_)))
            });
            return if per_cpu { KernelVariable::PerCpu } else { KernelVariable::At(addr) };
        }
        KernelVariable::Unknown
    }
}

impl KernelBtf {
    /// The number of arguments of raw tracepoint `name` on the running
    /// kernel, from the prototype BTF gives it (`btf_trace_<name>`, whose
    /// first parameter is the tracepoint's private data).
    pub(crate) fn tracepoint_arg_count(&mut self, name: &str) -> Option<usize> {
        let (_, proto) = self.prototype(name, true)?;
        proto.parameters.len().checked_sub(1)
    }

    /// The prototype of a BTF function type: raw tracepoint `name`'s
    /// (`btf_trace_<name>`, without its private-data parameter) or kernel
    /// function `name`'s.
    fn prototype(&mut self, name: &str, tracepoint: bool) -> Option<(u32, btf_rs::FuncProto)> {
        let btf = self.btf().ok()?;
        if tracepoint {
            let types = btf.resolve_types_by_name(&format!("btf_trace_{name}")).ok()?;
            let btf_rs::Type::Typedef(def) = types.first()? else { return None };
            let btf_rs::Type::Ptr(ptr) = btf.resolve_chained_type(def).ok()? else { return None };
            let btf_rs::Type::FuncProto(proto) = btf.resolve_chained_type(&ptr).ok()? else { return None };
            return Some((0, proto));
        }
        let id = self.function_id(name)?;
        let btf = self.btf().ok()?;
        let btf_rs::Type::Func(func) = btf.resolve_type_by_id(id).ok()? else { return None };
        let btf_rs::Type::FuncProto(proto) = btf.resolve_chained_type(&func).ok()? else { return None };
        Some((id, proto))
    }

    /// The BTF ID of kernel function `name`. The first few are found by a
    /// scan of the types (a script names few functions); an index of them
    /// all (megabytes of names) is built only for a script that asks for
    /// many, as a wildcard over thousands of functions does.
    fn function_id(&mut self, name: &str) -> Option<u32> {
        const SCANS: u32 = 4;
        if self.functions.is_none() && self.function_scans < SCANS {
            self.function_scans += 1;
            let btf = self.btf().ok()?;
            let ids = btf.resolve_ids_by_name(name).ok()?;
            return ids.into_iter().find(|id| matches!(btf.resolve_type_by_id(*id), Ok(btf_rs::Type::Func(_))));
        }
        self.functions().get(name).copied()
    }

    /// Every kernel function BTF describes, by name.
    fn functions(&mut self) -> &HashMap<String, u32> {
        if self.functions.is_none() {
            let mut functions = HashMap::new();
            if let Ok(btf) = self.btf() {
                let mut types = btf.type_iter();
                let (mut id, _) = btf.base().type_id_range();
                while let Ok(Some(t)) = fallible_iterator::FallibleIterator::next(&mut types) {
                    if let btf_rs::Type::Func(f) = t {
                        if let Ok(name) = btf.resolve_name(&f) {
                            functions.entry(name).or_insert(id);
                        }
                    }
                    id += 1;
                }
            }
            self.functions = Some(functions);
        }
        self.functions.as_ref().expect("just indexed")
    }

    /// Each parameter's type as D text (`struct file *`, `size_t`).
    fn parameter_types(&mut self, name: &str, tracepoint: bool) -> Option<Vec<String>> {
        let (_, proto) = self.prototype(name, tracepoint)?;
        let btf = self.btf().ok()?;
        let params = proto.parameters.iter().skip(usize::from(tracepoint));
        Some(params.map(|p| btf.resolve_chained_type(p).map_or("void *".into(), |t| d_type_text(btf, &t))).collect())
    }
}

/// A BTF type as D text a script could write: D's typedefs where D has the
/// kernel's (`size_t`, `pid_t`), C's integer names otherwise, `struct x *`
/// for pointers to records, `void *` for pointers D cannot follow.
fn d_type_text(btf: &Btf, t: &btf_rs::Type) -> String {
    if let Some(name) = typedef_name(btf, t) {
        if crate::sema::check::types::named_type(&name).is_some() {
            return name;
        }
    }
    let Some(t) = strip(btf, t.clone()) else { return "void *".into() };
    match &t {
        btf_rs::Type::Int(i) if i.is_bool() => "uint8_t".into(),
        // Kernels since 6.2 build with -funsigned-char: char is still char.
        btf_rs::Type::Int(i) if i.is_char() => "char".into(),
        btf_rs::Type::Int(i) => int_type(i.size(), i.is_signed(), None).name(),
        btf_rs::Type::Enum(e) => int_type(e.size(), e.is_signed(), None).name(),
        btf_rs::Type::Ptr(p) => match btf.resolve_chained_type(p).ok().and_then(|to| strip(btf, to)) {
            Some(
                to @ (btf_rs::Type::Int(_) | btf_rs::Type::Struct(_) | btf_rs::Type::Union(_) | btf_rs::Type::Ptr(_)),
            ) => {
                let inner = d_type_text(btf, &to);
                if inner.ends_with('*') {
                    format!("{inner}*")
                } else {
                    format!("{inner} *")
                }
            }
            _ => "void *".into(),
        },
        btf_rs::Type::Struct(s) | btf_rs::Type::Union(s) => {
            let keyword = if matches!(t, btf_rs::Type::Union(_)) { "union" } else { "struct" };
            match btf.resolve_name(s) {
                Ok(name) if !name.is_empty() => format!("{keyword} {name}"),
                _ => "void".into(),
            }
        }
        _ => "void *".into(),
    }
}

impl MemberKind {
    /// How a member of type `ty` is read: char arrays as strings.
    pub(crate) fn of(ty: Type) -> MemberKind {
        match ty {
            Type::Array(elem, len) if matches!(*elem, Type::Int { size: 1, .. }) => MemberKind::CharArray { len },
            ty => MemberKind::Value(ty),
        }
    }
}

fn type_bytes(ty: &Type) -> usize {
    match ty {
        Type::Int { size, .. } => *size as usize,
        _ => 8,
    }
}

/// Copies the BTF into an anonymous memory file and maps that (a few ms for
/// a few MB; still no parsing of all types).
fn map_a_copy() -> Result<(Btf, std::fs::File), String> {
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd};
    let bytes = std::fs::read(VMLINUX_BTF).map_err(|e| e.to_string())?;
    // SAFETY: memfd_create with a valid name; the descriptor is ours.
    let fd = unsafe { libc::memfd_create(c"dtrace-btf".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    // SAFETY: a new descriptor we own.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(&bytes).map_err(|e| e.to_string())?;
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let btf = Btf::from_file_with_backend(path, Backend::Mmap).map_err(|e| e.to_string())?;
    Ok((btf, file))
}

/// (bit offset, type, bit-field width if one) of member `name`.
fn find_member(btf: &Btf, s: &btf_rs::Struct, name: &str, base: u32) -> Option<(u32, btf_rs::Type, Option<u32>)> {
    for m in &s.members {
        let offset = base + m.bit_offset();
        let member_name = btf.resolve_name(m).unwrap_or_default();
        // Resolving a type costs a walk of the mapped BTF: only for the
        // member asked for, and anonymous ones to look inside.
        if member_name != name && !member_name.is_empty() {
            continue;
        }
        let t = btf.resolve_chained_type(m).ok()?;
        if member_name == name {
            let bits = m.bitfield_size().filter(|&b| b != 0);
            return Some((offset, t, bits));
        }
        if member_name.is_empty() {
            if let Some(btf_rs::Type::Struct(inner) | btf_rs::Type::Union(inner)) = strip(btf, t) {
                if let Some(found) = find_member(btf, &inner, name, offset) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// Skips typedefs and qualifiers; keeps the last typedef's name for integers.
fn strip(btf: &Btf, mut t: btf_rs::Type) -> Option<btf_rs::Type> {
    for _ in 0..32 {
        match &t {
            btf_rs::Type::Typedef(x) => t = btf.resolve_chained_type(x).ok()?,
            btf_rs::Type::Const(x) | btf_rs::Type::Volatile(x) | btf_rs::Type::Restrict(x) => {
                t = btf.resolve_chained_type(x).ok()?
            }
            btf_rs::Type::TypeTag(x) => t = btf.resolve_chained_type(x).ok()?,
            _ => return Some(t),
        }
    }
    None
}

/// The D type of a BTF type: integers, enums, pointers, structs, unions
/// and arrays of those; `None` for what D cannot use (functions, floats).
fn d_type(btf: &Btf, t: &btf_rs::Type) -> Option<Type> {
    let type_name = typedef_name(btf, t);
    let t = strip(btf, t.clone())?;
    Some(match &t {
        btf_rs::Type::Int(i) => int_type(i.size(), i.is_signed(), type_name),
        btf_rs::Type::Enum(e) => {
            let name = btf.resolve_name(e).ok().filter(|n| !n.is_empty());
            Type::Int { size: 4, signed: false, name: name.map_or("enum", |n| intern(format!("enum {n}"))) }
        }
        btf_rs::Type::Ptr(p) => Type::Pointer(Box::new(pointee(btf, p))),
        btf_rs::Type::Struct(s) | btf_rs::Type::Union(s) => {
            let union = matches!(t, btf_rs::Type::Union(_));
            let name = btf.resolve_name(s).unwrap_or_default();
            let typedef = type_name.filter(|_| name.is_empty());
            Type::Struct(Rc::new(Record { name, typedef, union, size: s.size(), body: RecordBody::Kernel(s.clone()) }))
        }
        btf_rs::Type::Array(a) => Type::Array(Box::new(d_type(btf, &btf.resolve_chained_type(a).ok()?)?), a.len()),
        _ => return None,
    })
}

/// What a pointer points to, for D: what `d_type` knows, else void.
fn pointee(btf: &Btf, p: &btf_rs::Ptr) -> Type {
    btf.resolve_chained_type(p).ok().and_then(|target| d_type(btf, &target)).unwrap_or(Type::Void)
}

fn typedef_name(btf: &Btf, t: &btf_rs::Type) -> Option<String> {
    match t {
        btf_rs::Type::Typedef(td) => btf.resolve_name(td).ok(),
        _ => None,
    }
}

/// A D integer type for a kernel integer; the name is the typedef's when
/// there is one (`pid_t`), else C's.
fn int_type(size: usize, signed: bool, typedef: Option<String>) -> Type {
    let size = size.clamp(1, 8) as u8;
    let name: &'static str = match typedef {
        Some(n) => intern(n),
        None => match (size, signed) {
            (1, true) => "char",
            (1, false) => "unsigned char",
            (2, true) => "short",
            (2, false) => "unsigned short",
            (4, true) => "int",
            (4, false) => "unsigned int",
            (_, true) => "long",
            (_, false) => "unsigned long",
        },
    };
    Type::Int { size, signed, name }
}

/// A kernel type name as the `&'static str` D types carry: each distinct
/// name is leaked once (a script names few).
pub(crate) fn intern(name: String) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = names.get(name.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}

/// The kernel facts providers ask for when they enable probes.
impl crate::provider::KernelFacts for KernelBtf {
    fn tracepoint_arg_count(&mut self, name: &str) -> Option<usize> {
        KernelBtf::tracepoint_arg_count(self, name)
    }

    fn has_struct(&mut self, name: &str) -> bool {
        matches!(self.record(name, false), Ok(Some(_)))
    }

    fn tracepoint_parameters(&mut self, name: &str) -> Option<Vec<String>> {
        self.parameter_types(name, true)
    }

    fn function_parameters(&mut self, name: &str) -> Option<Vec<String>> {
        self.parameter_types(name, false)
    }

    fn function_return(&mut self, name: &str) -> Option<String> {
        let (_, proto) = self.prototype(name, false)?;
        let btf = self.btf().ok()?;
        if proto.return_type_id() == 0 {
            return Some("void".into());
        }
        Some(btf.resolve_type_by_id(proto.return_type_id()).map_or("void *".into(), |t| d_type_text(btf, &t)))
    }

    fn function_btf_id(&mut self, name: &str) -> Option<u32> {
        self.prototype(name, false).map(|(id, _)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_struct_members_resolve_when_the_kernel_has_btf() {
        if !std::path::Path::new(VMLINUX_BTF).exists() {
            return; // nothing to check against on a kernel without BTF
        }
        let mut k = KernelBtf::default();
        let task = k.record("task_struct", false).expect("btf").expect("task_struct");
        let comm = k.member(&task, "comm").expect("btf").expect("comm");
        assert_eq!(comm.kind, MemberKind::CharArray { len: 16 });
        let pid = k.member(&task, "pid").expect("btf").expect("pid");
        assert_eq!(pid.kind, MemberKind::Value(Type::Int { size: 4, signed: true, name: "pid_t" }));
        let parent = k.member(&task, "real_parent").expect("btf").expect("real_parent");
        assert!(matches!(parent.kind, MemberKind::Value(Type::Pointer(ref to)) if matches!(**to, Type::Struct(_))));
        assert_eq!(k.member(&task, "commm").expect("btf"), None);
    }

    /// The path kernels before 6.16 take, where sysfs cannot map the BTF.
    #[test]
    fn tracepoint_prototypes_come_from_btf() {
        if !std::path::Path::new(VMLINUX_BTF).exists() {
            return;
        }
        let mut k = KernelBtf::default();
        assert_eq!(k.tracepoint_arg_count("block_rq_complete"), Some(3));
        assert_eq!(k.tracepoint_arg_count("sched_switch").map(|n| n >= 3), Some(true));
        assert_eq!(k.tracepoint_arg_count("no_such_tracepoint"), None);
    }

    #[test]
    fn a_mapped_copy_resolves_the_same_types() {
        if !std::path::Path::new(VMLINUX_BTF).exists() {
            return;
        }
        let (btf, _file) = map_a_copy().expect("copy");
        let mut k = KernelBtf { btf: Some(btf), ..Default::default() };
        let task = k.record("task_struct", false).expect("btf").expect("task_struct");
        assert_eq!(k.member(&task, "comm").expect("btf").map(|m| m.kind), Some(MemberKind::CharArray { len: 16 }));
    }
}
