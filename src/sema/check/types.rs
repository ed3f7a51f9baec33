//! D's types as the checker builds them: type names and specifiers (D's
//! own, typedefs, and the running kernel's structs, unions and variables),
//! the sizes and record layouts of values (`sizeof`, `var_bytes`, what a
//! record holds and what print() walks), D's usual arithmetic conversions
//! (which, unlike C's, promote nothing to int), and the predefined type names the parser asks
//! about.

use super::expr::value_at;
use super::*;
use crate::sema::kernel_btf::KernelVariable;

impl Checker<'_> {
    pub(super) fn type_spec(&mut self, spec: &ast::TypeSpec, span: &Span) -> Result<Type> {
        let ty = match spec {
            ast::TypeSpec::Builtin { words, .. } => {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                check_specifier_words(&words, span)?;
                int_type_from_words(&words)
            }
            // `vmlinux`__be32` is the kernel's type of that name, `D`foo_t`
            // the script's (DTrace's type namespaces).
            ast::TypeSpec::Named { name, .. } => match name.split_once('`') {
                Some(("D", bare)) => self.declared_typedef(bare),
                Some((_, bare)) => match kernel_typedef(bare) {
                    Some(record) => return self.kernel_typedef_type(bare, record, span),
                    None => named_type(bare),
                },
                None => match kernel_typedef(name) {
                    Some(record) => return self.kernel_typedef_type(name, record, span),
                    None => self.typedef_named(name),
                },
            },
            ast::TypeSpec::Struct(record) => return self.record_type(record, false, span),
            ast::TypeSpec::Union(record) => return self.record_type(record, true, span),
            ast::TypeSpec::Enum(e) => return self.enum_type(e),
        };
        ty.ok_or_else(|| CompileError::new("D_UNSUPPORTED", span, "this type is not supported yet"))
    }

    /// A type name as in casts and sizeof: specifiers and an abstract declarator.
    pub(super) fn type_name(&mut self, tn: &ast::TypeName) -> Result<Type> {
        let base = self.type_spec(&tn.spec, &tn.span)?;
        self.declarator_type(base, &tn.ops, &tn.span)
    }

    /// A struct or union of the running kernel, by name.
    /// A predefined typedef of a kernel struct, known by its typedef's name.
    fn kernel_typedef_type(&mut self, typedef: &str, record: &str, span: &Span) -> Result<Type> {
        let r = self.kernel_record(record, false, span)?;
        Ok(Type::Struct(std::rc::Rc::new(Record { typedef: Some(typedef.to_string()), ..(*r).clone() })))
    }

    pub(super) fn kernel_record(&mut self, name: &str, union: bool, span: &Span) -> Result<std::rc::Rc<Record>> {
        let kind = if union { "union" } else { "struct" };
        match self.kernel_btf.record(name, union) {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(CompileError::new(
                "D_TYPE_ERR",
                span,
                format!("failed to resolve type {kind} {name}: Unknown type name"),
            )),
            Err(why) => Err(CompileError::new("D_TYPE_ERR", span, why)),
        }
    }

    /// `` `name ``: a kernel variable at its /proc/kallsyms address. The
    /// kernel's BTF gives no types for (non-per-CPU) variables, so its value
    /// reads as a `long`; other types via a cast of its address:
    /// `*(int *)&`nr_threads`.
    pub(super) fn kernel_variable(&mut self, module: Option<&str>, name: &str, span: &Span) -> Result<TExpr> {
        let shown = match module {
            Some(m) => format!("{m}`{name}"),
            None => format!("`{name}"),
        };
        match self.kernel_btf.variable(module, name) {
            KernelVariable::At(addr) => {
                let addr =
                    TExpr { kind: TKind::Int(addr), ty: Type::Pointer(Box::new(Type::Void)), span: span.clone() };
                value_at(addr, Type::Int { size: 8, signed: true, name: "long" }, span)
            }
            KernelVariable::PerCpu => Err(CompileError::new(
                "D_UNSUPPORTED",
                span,
                format!("{shown} is a per-CPU variable; those are not supported yet"),
            )),
            // The empty symbol (a backquote alone) is no identifier at all.
            KernelVariable::Unknown if name.is_empty() => {
                Err(CompileError::new("D_IDENT_UNDEF", span, format!("failed to resolve {shown}: Unknown symbol name")))
            }
            KernelVariable::Unknown => {
                Err(CompileError::new("D_SYM_BADREF", span, format!("failed to resolve {shown}: Unknown symbol name")))
            }
        }
    }

    /// Reading a `cpu_t` or `cpuinfo_t` (d-library/sched.d), however the
    /// script names or reaches it, needs the runtime to describe the CPUs.
    pub(super) fn note_runtime_filled(&mut self, record: &Record) {
        if matches!(record.body, RecordBody::D(_)) && matches!(record.name.as_str(), "cpu" | "cpuinfo") {
            self.program.uses_cpuinfo = true;
        }
    }

    /// How print() shows a value of type `ty`: the type's shape, with every
    /// member of a struct (nested structs included, pointers not followed).
    pub(super) fn print_node(&mut self, ty: &Type, span: &Span) -> Result<PrintNode> {
        let kind = match ty {
            Type::Int { size, name, .. } if name.starts_with("enum ") => match self.enumerators(name) {
                Some(enumerators) => PrintKind::Enum { size: *size as usize, enumerators },
                None => PrintKind::Int { size: *size as usize, signed: true, char: false },
            },
            Type::Int { size, signed, name } => PrintKind::Int {
                size: *size as usize,
                signed: *signed,
                char: *size == 1 && *signed && name.ends_with("char"),
            },
            Type::Pointer(_) | Type::Symbol(_) => PrintKind::Pointer,
            Type::String => PrintKind::String,
            Type::Array(elem, len) => PrintKind::Array {
                elem: Box::new(self.print_node(elem, span)?),
                len: *len,
                elem_size: type_size(elem, self.opts.strsize),
            },
            Type::Struct(record) => {
                self.note_runtime_filled(record);
                let record = &self.completed(record.clone());
                let fields =
                    self.kernel_btf.fields(record).map_err(|why| CompileError::new("D_TYPE_ERR", span, why))?;
                let mut members = Vec::new();
                for f in fields {
                    let Some(ty) = f.ty else { continue };
                    let mut node = self.print_node(&ty, span)?;
                    if let Some(typedef) = f.typedef {
                        node.name = typedef;
                    }
                    members.push(PrintMember { name: f.name, bit_offset: f.bit_offset, bits: f.bits, node });
                }
                PrintKind::Record(members)
            }
            Type::Void | Type::Stack => {
                return Err(CompileError::new(
                    "D_PROTO_ARG",
                    span,
                    format!(
                        "print( ) argument #1 is incompatible with prototype:\n\tprototype: @\n\t argument: {}",
                        ty.name()
                    ),
                ))
            }
        };
        Ok(PrintNode { name: ty.name(), kind })
    }
}

/// The largest struct or array print() records or a variable holds.
pub(super) const MAX_COPY_BYTES: usize = 8192;

pub(super) fn value_layout(ty: &Type) -> ValueLayout {
    match ty {
        Type::String => ValueLayout::Str,
        // A long double's 16 bytes do not fit a slot: D has no arithmetic
        // on floating-point values, so its high bytes are never set.
        Type::Int { size, name: "float" | "double" | "long double", .. } => ValueLayout::Float { size: (*size).min(8) },
        Type::Int { size, signed, .. } => ValueLayout::Int { size: *size, signed: *signed },
        Type::Pointer(_) | Type::Struct(_) | Type::Array(..) => ValueLayout::Int { size: 8, signed: false },
        Type::Stack => ValueLayout::Stack,
        Type::Symbol(kind) => ValueLayout::Symbol(*kind),
        Type::Void => ValueLayout::Int { size: 8, signed: true },
    }
}

/// sizeof: the type's size in C terms (a string is strsize bytes).
pub(super) fn type_size(ty: &Type, strsize: usize) -> usize {
    match ty {
        Type::Int { size, .. } => *size as usize,
        Type::String => strsize,
        Type::Pointer(_) | Type::Stack | Type::Symbol(_) => 8,
        Type::Struct(r) => r.size,
        Type::Array(of, len) => type_size(of, strsize) * len,
        Type::Void => 1,
    }
}

/// A struct or array copied whole (into a record or a variable) must fit
/// MAX_COPY_BYTES; `into` says where it goes.
pub(super) fn copy_fits(into: &str, ty: &Type, strsize: usize, span: &Span) -> Result<()> {
    let size = type_size(ty, strsize);
    if size > MAX_COPY_BYTES {
        return Err(CompileError::new(
            "D_UNSUPPORTED",
            span,
            format!("copying more than {MAX_COPY_BYTES} bytes into {into} is not supported ({} has {size})", ty.name()),
        ));
    }
    Ok(())
}

/// What a pointer or an array (decaying to a pointer) points at.
pub(super) fn pointee(ty: &Type) -> Option<Type> {
    match ty {
        Type::Pointer(to) | Type::Array(to, _) => Some((**to).clone()),
        _ => None,
    }
}

/// Bytes a variable of this type occupies (8-byte aligned).
pub(crate) fn var_bytes(ty: &Type, strsize: usize) -> usize {
    ty.by_reference_size(strsize).map_or(8, |n| n.next_multiple_of(8))
}

/// C's type of an integer constant: the first of int, long (and their
/// unsigned forms for hex/octal or a `u` suffix) that holds the value.
pub(super) fn int_constant_type(value: u64, suffix: ast::IntSuffix, decimal: bool) -> Type {
    let fits_int = value <= i32::MAX as u64;
    let fits_uint = value <= u32::MAX as u64;
    let fits_long = value <= i64::MAX as u64;
    match (suffix.unsigned, suffix.long) {
        (false, 0) if fits_int => Type::INT,
        (false, 0) if !decimal && fits_uint => Type::UINT,
        (true, 0) if fits_uint => Type::UINT,
        (false, _) if fits_long => Type::Int { size: 8, signed: true, name: "long" },
        _ => Type::Int { size: 8, signed: false, name: "unsigned long" },
    }
}

/// D's usual arithmetic conversions (dt_type_promote): the operand of
/// higher rank, where rank is the width in bits plus one if unsigned. Unlike
/// C, nothing narrower than int is promoted to int first, so the sum of two
/// unsigned chars is an unsigned char (`(uchar_t)254 + (uchar_t)3` is 1).
pub(super) fn arith_result(a: &Type, b: &Type) -> Type {
    match (a, b) {
        (Type::Int { size: sa, signed: ga, .. }, Type::Int { size: sb, signed: gb, .. }) => {
            if sa > sb {
                a.clone()
            } else if sb > sa {
                b.clone()
            } else if !ga {
                a.clone()
            } else if !gb {
                b.clone()
            } else {
                a.clone()
            }
        }
        _ => a.clone(),
    }
}

/// The combinations of C's type keywords DTrace refuses (dt_decl_spec,
/// dt_decl_attr): two base types (`char int`), signed with unsigned,
/// short or long with char, short with long, which names no type, and an
/// attribute repeated (`unsigned unsigned`; only long may be twice).
fn check_specifier_words(words: &[&str], span: &Span) -> Result<()> {
    let count = |w: &str| words.iter().filter(|x| **x == w).count();
    let bases = ["char", "int", "void", "float", "double"].iter().map(|b| count(b)).sum::<usize>();
    let combo = || CompileError::new("D_DECL_COMBO", span, "invalid type combination");
    let attributes = ["short", "long", "signed", "unsigned"].iter().map(|a| count(a)).sum::<usize>();
    if bases == 1 && count("void") == 1 && attributes > 0 {
        return Err(CompileError::new(
            "D_DECL_VOIDATTR",
            span,
            "invalid type declaration: attributes may not be used with void type",
        ));
    }
    if bases > 1 || (count("signed") > 0 && count("unsigned") > 0) || (count("void") > 0 && words.len() > 1) {
        return Err(combo());
    }
    if count("char") > 0 && (count("short") > 0 || count("long") > 0) {
        return Err(CompileError::new(
            "D_DECL_CHARATTR",
            span,
            "invalid type declaration: short and long may not be used with char type",
        ));
    }
    if count("short") > 0 && count("long") > 0 {
        let rest: Vec<&str> = words.iter().copied().filter(|w| *w != "short" && *w != "long").collect();
        let name = ["short", "long"].iter().copied().chain(rest).collect::<Vec<_>>().join(" ");
        return Err(CompileError::new("D_UNKNOWN", span, format!("failed to resolve type {name} : Unknown type name")));
    }
    if count("short") > 1 || count("long") > 2 || count("signed") > 1 || count("unsigned") > 1 {
        return Err(combo());
    }
    Ok(())
}

/// D's built-in integer types spelled with C keywords.
pub(super) fn int_type_from_words(words: &[&str]) -> Option<Type> {
    let unsigned = words.contains(&"unsigned");
    let longs = words.iter().filter(|w| **w == "long").count();
    // Floating-point types have C's sizes (D traces them, it does not
    // compute with them).
    if words.contains(&"double") {
        let (size, name) = if longs > 0 { (16, "long double") } else { (8, "double") };
        return Some(Type::Int { size, signed: true, name });
    }
    if words.contains(&"float") {
        return Some(Type::Int { size: 4, signed: true, name: "float" });
    }
    let (size, name_s, name_u) = if words.contains(&"char") {
        (1, "char", "unsigned char")
    } else if words.contains(&"short") {
        (2, "short", "unsigned short")
    } else if longs >= 2 {
        (8, "long long", "unsigned long long")
    } else if longs == 1 {
        (8, "long", "unsigned long")
    } else if words.contains(&"void") {
        return Some(Type::Void);
    } else {
        (4, "int", "unsigned int")
    };
    Some(Type::Int { size, signed: !unsigned, name: if unsigned { name_u } else { name_s } })
}

/// Whether D knows `name` as a type name (for the parser).
pub(crate) fn is_type_name(name: &str) -> bool {
    named_type(name).is_some() || kernel_typedef(name).is_some()
}

/// D's predefined typedefs of kernel structs: the struct's name in the
/// running kernel's BTF, looked up when a script uses the name (a typedef
/// in the D library would read the kernel's BTF at every start-up: 2-3 ms).
pub(super) fn kernel_typedef(name: &str) -> Option<&'static str> {
    match name {
        "in6_addr_t" => Some("in6_addr"),
        // lockstat's spin-* args[0], as the kernel's code and dtrace-utils name it.
        "spinlock_t" => Some("spinlock"),
        _ => None,
    }
}

/// D's predefined typedefs for integers, and `string`.
pub(crate) fn named_type(name: &str) -> Option<Type> {
    let t = |size, signed, name| Some(Type::Int { size, signed, name });
    match name {
        "string" => Some(Type::String),
        "int8_t" => t(1, true, "int8_t"),
        "int16_t" => t(2, true, "int16_t"),
        "int32_t" => t(4, true, "int32_t"),
        "int64_t" => t(8, true, "int64_t"),
        "uint8_t" => t(1, false, "uint8_t"),
        "uint16_t" => t(2, false, "uint16_t"),
        "uint32_t" => t(4, false, "uint32_t"),
        "uint64_t" => t(8, false, "uint64_t"),
        "intptr_t" => t(8, true, "intptr_t"),
        "uintptr_t" => t(8, false, "uintptr_t"),
        "size_t" => t(8, false, "size_t"),
        "ssize_t" => t(8, true, "ssize_t"),
        "off_t" => t(8, true, "off_t"),
        "pid_t" => t(4, true, "pid_t"),
        "id_t" => t(4, true, "id_t"),
        "uid_t" => t(4, false, "uid_t"),
        "gid_t" => t(4, false, "gid_t"),
        "uint_t" => t(4, false, "uint_t"),
        "uchar_t" => t(1, false, "uchar_t"),
        "ushort_t" => t(2, false, "ushort_t"),
        "ulong_t" => t(8, false, "ulong_t"),
        "u_longlong_t" => t(8, false, "u_longlong_t"),
        "longlong_t" => t(8, true, "longlong_t"),
        "processorid_t" => t(4, true, "processorid_t"),
        "pri_t" => t(2, true, "pri_t"),
        "hrtime_t" => t(8, true, "hrtime_t"),
        "ipaddr_t" => t(4, false, "ipaddr_t"),
        "in_addr_t" => t(4, false, "in_addr_t"),
        "in_port_t" => t(2, false, "in_port_t"),
        "dev_t" => t(8, false, "dev_t"),
        "psetid_t" => t(4, true, "psetid_t"),
        "lgrp_id_t" => t(4, true, "lgrp_id_t"),
        "zoneid_t" => t(4, true, "zoneid_t"),
        "projid_t" => t(4, true, "projid_t"),
        "taskid_t" => t(4, true, "taskid_t"),
        "poolid_t" => t(4, true, "poolid_t"),
        "ctid_t" => t(4, true, "ctid_t"),
        "boolean_t" => t(4, true, "boolean_t"),
        "major_t" => t(4, false, "major_t"),
        "minor_t" => t(4, false, "minor_t"),
        "mode_t" => t(4, false, "mode_t"),
        "time_t" => t(8, true, "time_t"),
        "clock_t" => t(8, true, "clock_t"),
        "ino_t" => t(8, false, "ino_t"),
        "intmax_t" => t(8, true, "intmax_t"),
        "uintmax_t" => t(8, false, "uintmax_t"),
        // The Linux kernel's integer typedefs, as its BTF defines them on
        // every architecture, usable in casts (`(u32)x`) without reading
        // BTF; each keeps its name, as a typedef does.
        "u8" => t(1, false, "u8"),
        "__u8" => t(1, false, "__u8"),
        "u16" => t(2, false, "u16"),
        "__u16" => t(2, false, "__u16"),
        "__le16" => t(2, false, "__le16"),
        "__be16" => t(2, false, "__be16"),
        "umode_t" => t(2, false, "umode_t"),
        "u32" => t(4, false, "u32"),
        "__u32" => t(4, false, "__u32"),
        "__le32" => t(4, false, "__le32"),
        "__be32" => t(4, false, "__be32"),
        "gfp_t" => t(4, false, "gfp_t"),
        "u64" => t(8, false, "u64"),
        "__u64" => t(8, false, "__u64"),
        "__le64" => t(8, false, "__le64"),
        "__be64" => t(8, false, "__be64"),
        "sector_t" => t(8, false, "sector_t"),
        "pgoff_t" => t(8, false, "pgoff_t"),
        "s8" => t(1, true, "s8"),
        "__s8" => t(1, true, "__s8"),
        "s16" => t(2, true, "s16"),
        "__s16" => t(2, true, "__s16"),
        "s32" => t(4, true, "s32"),
        "__s32" => t(4, true, "__s32"),
        "s64" => t(8, true, "s64"),
        "__s64" => t(8, true, "__s64"),
        "loff_t" => t(8, true, "loff_t"),
        "bool" | "_Bool" => t(1, false, "bool"),
        // The short unsigned names of Solaris' sys/types.h and of Linux's
        // linux/types.h (BSD's u_* among them), which scripts cast with.
        "uchar" => t(1, false, "uchar"),
        "unchar" => t(1, false, "unchar"),
        "u_char" => t(1, false, "u_char"),
        "u_int8_t" => t(1, false, "u_int8_t"),
        "ushort" => t(2, false, "ushort"),
        "u_short" => t(2, false, "u_short"),
        "u_int16_t" => t(2, false, "u_int16_t"),
        "uint" => t(4, false, "uint"),
        "u_int" => t(4, false, "u_int"),
        "u_int32_t" => t(4, false, "u_int32_t"),
        "ulong" => t(8, false, "ulong"),
        "u_long" => t(8, false, "u_long"),
        "u_int64_t" => t(8, false, "u_int64_t"),
        _ => None,
    }
}
