//! The grammar of D's printf() formats, shared by the type checker and the
//! consumer: parsing a format string into pieces and conversions (with
//! DTrace's exact compile-time error texts, after illumos libdtrace's
//! `dt_printf_create`), DTrace's conversion table, and which argument kinds
//! each conversion accepts (with the prototype strings DTrace prints in type
//! errors). Rendering a parsed format with run-time values is
//! `consume::printf`'s.

use std::fmt;

/// Widths and precisions are clamped to this so a hostile format or a huge
/// dynamic `*` value cannot make us allocate gigabytes; C would try to print
/// them, DTrace scripts never need them.
pub(crate) const MAX_FIELD: u32 = 1 << 20;

/// DTrace keeps at most this many length-modifier characters (`h l L w`) of
/// a conversion name (`char name[8]` minus the conversion char and the NUL).
const MAX_MODIFIER_CHARS: usize = 6;

// ---------------------------------------------------------------------------
// Parsed format
// ---------------------------------------------------------------------------

/// A parsed format string: literal text and conversions, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    pub pieces: Vec<Piece>,
}

/// One piece of a format. Adjacent literal text (including `%%`) is merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Literal(Vec<u8>),
    Conv(Conversion),
}

/// Flags written between `%` and the conversion name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `-`: left-justify. DTrace clears it when a later `0` flag is seen.
    pub left: bool,
    /// `+`: always print a sign for signed conversions.
    pub plus: bool,
    /// ` `: print a space where a `+` would go.
    pub space: bool,
    /// `#`: alternate form.
    pub alt: bool,
    /// `0`: pad with zeros. DTrace clears it when a later `-` flag is seen.
    pub zero: bool,
    /// `'`: thousands grouping of the integer part.
    pub group: bool,
    /// `@`: the value is the aggregation's value (printa only), not an argument.
    pub agg: bool,
}

/// A width or precision as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    None,
    Fixed(u32),
    /// `*` / `.*`: taken from the argument list at run time.
    FromArg,
}

/// The length modifiers DTrace knows; they select an entry of DTrace's
/// conversion table (`%ld`, `%hx`, `%Lf`, ...) rather than changing how the
/// value is read (the value's own size decides that).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthModifier {
    None,
    /// `h`
    Short,
    /// `l`
    Long,
    /// `ll`
    LongLong,
    /// `L`
    LongDouble,
    /// `w`
    Wide,
}

/// One `%...` conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    /// DTrace's 1-based conversion number used in its messages. Like DTrace
    /// it counts every `%`, including `%%`.
    pub number: usize,
    pub flags: Flags,
    pub width: Count,
    pub precision: Count,
    pub length: LengthModifier,
    /// The conversion character (`d`, `s`, `a`, ...).
    pub conversion: u8,
    pub(crate) spec: &'static ConvSpec,
}

/// What the type checker knows about an argument expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgClass {
    Integer {
        size: u8,
        signed: bool,
    },
    Pointer,
    String,
    Float,
    /// Anything else (structs, stacks from stack()/ustack(), ...).
    Other,
}

/// A compile-time format error; `Display` gives DTrace's message text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatError {
    /// A second `*` for the width (`precision` false) or the precision.
    MultipleStars {
        conversion: usize,
        precision: bool,
    },
    MultipleDots {
        conversion: usize,
    },
    Positional {
        conversion: usize,
    },
    PercentWithFlags {
        conversion: usize,
    },
    UnexpectedEnd {
        conversion: usize,
    },
    Undefined {
        conversion: usize,
        name: Vec<u8>,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Oracle's DTrace names which one (illumos' test of a flag that
            // is never zero always said "precision").
            FormatError::MultipleStars { conversion, precision } => {
                let what = if *precision { "precision" } else { "width" };
                write!(f, "format conversion #{conversion} has more than one '*' specified for the output {what}")
            }
            FormatError::MultipleDots { conversion } => {
                write!(f, "format conversion #{conversion} has more than one '.' specified")
            }
            FormatError::Positional { conversion } => {
                write!(f, "format conversion #{conversion} uses unsupported positional format (%n$)")
            }
            FormatError::PercentWithFlags { conversion } => {
                write!(f, "format conversion #{conversion} cannot be combined with other format flags: %%")
            }
            FormatError::UnexpectedEnd { conversion } => {
                write!(f, "format conversion #{conversion} name expected before end of format string")
            }
            FormatError::Undefined { conversion, name } => {
                write!(f, "format conversion #{conversion} is undefined: %{}", String::from_utf8_lossy(name))
            }
        }
    }
}

impl std::error::Error for FormatError {}

// ---------------------------------------------------------------------------
// DTrace's conversion table
// ---------------------------------------------------------------------------

/// How a conversion turns its value into text (DTrace's `pfprint_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Render {
    /// pfprint_sint: sign-extend from the record size, whatever the type.
    SignedInt,
    /// pfprint_uint: zero-extend from the record size.
    UnsignedInt,
    /// `%d`: DTrace rewrites it to `%i` or `%u` after the argument's sign.
    DecimalBySign,
    Char,
    WideChar,
    Float,
    KernelAddr,
    UserAddr,
    Stack,
    Str,
    WideStr,
    EscapedStr,
    EscapedChar,
    Time,
    Time822,
    /// `%I`: DTrace tries a reverse DNS lookup; we print the address text.
    InetAddr,
    /// `%P`: DTrace tries a service name lookup; we print the port number.
    Port,
}

/// Which argument types a conversion accepts (DTrace's `pfcheck_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    PointerOrInteger,
    Stack,
    Time,
    Str,
    WideStr,
    CharShortInt,
    Float,
    AnyInteger,
    /// `pfcheck_type` against an integer type: same size and signedness.
    IntegerType {
        size: u8,
        signed: bool,
    },
    /// `pfcheck_xshort/xlong/xlonglong`: the type's name, i.e. its size.
    IntegerOfSize(u8),
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ConvSpec {
    name: &'static str,
    /// The C conversion used for numeric output.
    pub(crate) c_conv: u8,
    pub(crate) render: Render,
    check: Check,
    prototype: &'static str,
}

const PROTO_XINT: &str = "char, short, int, long, or long long";
const PROTO_CSI: &str = "char, short, or int";
const PROTO_FP: &str = "float, double, or long double";
const PROTO_ADDR: &str = "pointer or integer";
const PROTO_UADDR: &str = "pointer or integer (with -p/-c) or _usymaddr (without -p/-c)";
const PROTO_CSTR: &str = "char [] or string (or use stringof)";
const PROTO_WSTR: &str = "wchar_t []";

macro_rules! conv {
    ($name:expr, $c:expr, $render:ident, $check:expr, $proto:expr) => {
        ConvSpec { name: $name, c_conv: $c, render: Render::$render, check: $check, prototype: $proto }
    };
}

/// DTrace's conversion dictionary (illumos `_dtrace_conversions`), minus `%%`
/// which the parser turns into literal text.
static CONVERSIONS: &[ConvSpec] = &[
    conv!("a", b's', KernelAddr, Check::PointerOrInteger, PROTO_ADDR),
    conv!("A", b's', UserAddr, Check::PointerOrInteger, PROTO_UADDR),
    conv!("c", b'c', Char, Check::CharShortInt, PROTO_CSI),
    conv!("C", b's', EscapedChar, Check::CharShortInt, PROTO_CSI),
    conv!("d", b'd', DecimalBySign, Check::AnyInteger, PROTO_XINT),
    conv!("e", b'e', Float, Check::Float, PROTO_FP),
    conv!("E", b'E', Float, Check::Float, PROTO_FP),
    conv!("f", b'f', Float, Check::Float, PROTO_FP),
    conv!("g", b'g', Float, Check::Float, PROTO_FP),
    conv!("G", b'G', Float, Check::Float, PROTO_FP),
    conv!("hd", b'd', SignedInt, Check::IntegerType { size: 2, signed: true }, "short"),
    conv!("hi", b'i', SignedInt, Check::IntegerType { size: 2, signed: true }, "short"),
    conv!("ho", b'o', UnsignedInt, Check::IntegerType { size: 2, signed: false }, "unsigned short"),
    conv!("hu", b'u', UnsignedInt, Check::IntegerType { size: 2, signed: false }, "unsigned short"),
    conv!("hx", b'x', UnsignedInt, Check::IntegerOfSize(2), "short"),
    conv!("hX", b'X', UnsignedInt, Check::IntegerOfSize(2), "short"),
    conv!("i", b'i', SignedInt, Check::AnyInteger, PROTO_XINT),
    conv!("I", b's', InetAddr, Check::Str, PROTO_CSTR),
    conv!("k", b's', Stack, Check::Stack, "stack"),
    conv!("lc", b'c', WideChar, Check::IntegerType { size: 4, signed: true }, "int"),
    conv!("ld", b'd', SignedInt, Check::IntegerType { size: 8, signed: true }, "long"),
    conv!("li", b'i', SignedInt, Check::IntegerType { size: 8, signed: true }, "long"),
    conv!("lo", b'o', UnsignedInt, Check::IntegerType { size: 8, signed: false }, "unsigned long"),
    conv!("lu", b'u', UnsignedInt, Check::IntegerType { size: 8, signed: false }, "unsigned long"),
    conv!("ls", b's', WideStr, Check::WideStr, PROTO_WSTR),
    conv!("lx", b'x', UnsignedInt, Check::IntegerOfSize(8), "long"),
    conv!("lX", b'X', UnsignedInt, Check::IntegerOfSize(8), "long"),
    conv!("lld", b'd', SignedInt, Check::IntegerType { size: 8, signed: true }, "long long"),
    conv!("lli", b'i', SignedInt, Check::IntegerType { size: 8, signed: true }, "long long"),
    conv!("llo", b'o', UnsignedInt, Check::IntegerType { size: 8, signed: false }, "unsigned long long"),
    conv!("llu", b'u', UnsignedInt, Check::IntegerType { size: 8, signed: false }, "unsigned long long"),
    conv!("llx", b'x', UnsignedInt, Check::IntegerOfSize(8), "long long"),
    conv!("llX", b'X', UnsignedInt, Check::IntegerOfSize(8), "long long"),
    conv!("Le", b'e', Float, Check::Float, "long double"),
    conv!("LE", b'E', Float, Check::Float, "long double"),
    conv!("Lf", b'f', Float, Check::Float, "long double"),
    conv!("Lg", b'g', Float, Check::Float, "long double"),
    conv!("LG", b'G', Float, Check::Float, "long double"),
    conv!("o", b'o', UnsignedInt, Check::AnyInteger, PROTO_XINT),
    conv!("p", b'x', UnsignedInt, Check::PointerOrInteger, PROTO_ADDR),
    conv!("P", b's', Port, Check::IntegerType { size: 2, signed: false }, "uint16_t"),
    conv!("s", b's', Str, Check::Str, PROTO_CSTR),
    conv!("S", b's', EscapedStr, Check::Str, PROTO_CSTR),
    conv!("T", b's', Time822, Check::Time, "int64_t"),
    conv!("u", b'u', UnsignedInt, Check::AnyInteger, PROTO_XINT),
    conv!("wc", b'c', WideChar, Check::IntegerType { size: 4, signed: true }, "int"),
    conv!("ws", b's', WideStr, Check::WideStr, PROTO_WSTR),
    conv!("x", b'x', UnsignedInt, Check::AnyInteger, PROTO_XINT),
    conv!("X", b'X', UnsignedInt, Check::AnyInteger, PROTO_XINT),
    conv!("Y", b's', Time, Check::Time, "int64_t"),
];

fn lookup_conversion(name: &[u8]) -> Option<&'static ConvSpec> {
    CONVERSIONS.iter().find(|c| c.name.as_bytes() == name)
}

impl Conversion {
    /// DTrace's name for the conversion, modifiers included (`d`, `llx`).
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// Whether an argument of this class passes DTrace's check. Where DTrace
    /// compares type names (`%ld` wants `long`, `%hx` a `short`), size and
    /// signedness stand in for the name.
    pub fn accepts(&self, c: &ArgClass) -> bool {
        let integer = matches!(c, ArgClass::Integer { .. });
        match self.spec.check {
            Check::PointerOrInteger => integer || *c == ArgClass::Pointer,
            Check::Stack => *c == ArgClass::Other,
            Check::Time => matches!(c, ArgClass::Integer { size: 8, .. }),
            Check::Str => *c == ArgClass::String,
            // There is no class for wchar_t arrays, so nothing passes, as in
            // a D program without them.
            Check::WideStr => false,
            Check::CharShortInt => matches!(c, ArgClass::Integer { size, .. } if *size <= 4),
            Check::Float => *c == ArgClass::Float,
            Check::AnyInteger => integer,
            Check::IntegerType { size, signed } => *c == ArgClass::Integer { size, signed },
            Check::IntegerOfSize(want) => {
                matches!(c, ArgClass::Integer { size, .. } if *size == want)
            }
        }
    }

    /// The prototype text DTrace prints for this conversion in type errors.
    pub fn prototype(&self) -> &'static str {
        self.spec.prototype
    }

    /// Number of `*` arguments (width and/or precision) it takes.
    pub fn star_args(&self) -> usize {
        usize::from(self.width == Count::FromArg) + usize::from(self.precision == Count::FromArg)
    }

    /// Whether the value comes from the aggregation (`%@`), not the argument list.
    pub fn takes_aggregation_value(&self) -> bool {
        self.flags.agg
    }

    /// Arguments taken from the argument list: one per `*`, plus the value
    /// itself unless it is an aggregation value (`%@d`).
    pub fn args_consumed(&self) -> usize {
        self.star_args() + usize::from(!self.flags.agg)
    }

    /// The `*` argument of width or precision must be an integer (DTrace).
    pub fn star_accepts(c: &ArgClass) -> bool {
        matches!(c, ArgClass::Integer { .. })
    }

    /// DTrace's type error for the value argument. `argno` is DTrace's
    /// argument number (the format string of printf is argument #1, so the
    /// first value is #2); `None` means the `%@` aggregation value.
    pub fn incompatible_message(&self, func: &str, argno: Option<usize>, arg_type: &str) -> String {
        let what = match argno {
            Some(n) => format!("argument #{n}"),
            None => "aggregating action".to_string(),
        };
        format!(
            "{func}( ) {what} is incompatible with conversion #{} prototype:\n\tconversion: %{}\n\t prototype: {}\n\t  argument: {arg_type}",
            self.number,
            self.name(),
            self.prototype()
        )
    }

    /// DTrace's type error for a non-integer `*` (`precision` selects `.*`).
    pub fn incompatible_star_message(&self, func: &str, argno: usize, precision: bool, arg_type: &str) -> String {
        let star = if precision { ".*" } else { "*" };
        format!(
            "{func}( ) argument #{argno} is incompatible with conversion #{} prototype:\n\tconversion: % {star} {}\n\t prototype: int\n\t  argument: {arg_type}",
            self.number,
            self.name()
        )
    }

    /// DTrace's error when the value argument is missing.
    pub fn missing_value_message(&self, func: &str) -> String {
        format!(
            "{func}( ) prototype mismatch: conversion #{} (%{}) is missing a corresponding value argument",
            self.number,
            self.name()
        )
    }

    /// DTrace's error when a `*` argument is missing.
    pub fn missing_star_message(&self, func: &str, precision: bool) -> String {
        let star = if precision { ".*" } else { "*" };
        format!(
            "{func}( ) prototype mismatch: conversion #{} (%{}) is missing a corresponding \"{star}\" argument",
            self.number,
            self.name()
        )
    }

    /// DTrace's error for `%@` outside printa().
    pub fn aggregation_only_message(func: &str) -> String {
        format!("%@ conversion requires an aggregation and is not for use with {func}( )")
    }
}

impl Format {
    /// The conversions, in order.
    pub fn conversions(&self) -> impl Iterator<Item = &Conversion> + '_ {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Conv(c) => Some(c),
            Piece::Literal(_) => None,
        })
    }

    /// Number of argument values the format takes from the argument list.
    #[cfg(test)]
    pub fn args_required(&self) -> usize {
        self.conversions().map(Conversion::args_consumed).sum()
    }

    /// True for the empty format string, which DTrace rejects at validation.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// DTrace's error for an empty format string.
    pub fn empty_message(func: &str) -> String {
        format!("{func}( ) format string is empty")
    }

    /// DTrace's error for too many arguments (`required` = args_required()).
    pub fn extra_args_message(func: &str, required: usize) -> String {
        format!("{func}( ) prototype mismatch: only {required} arguments required by this format string")
    }
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// Parses a D format string the way DTrace's `dt_printf_create` does. The
/// string ends at its first NUL byte, as in C.
pub fn parse_format(fmt: &[u8]) -> Result<Format, FormatError> {
    let fmt = until_nul(fmt);
    let mut pieces = Vec::new();
    let mut literal = Vec::new();
    let mut number = 0usize;
    let mut i = 0usize;

    while i < fmt.len() {
        if fmt[i] != b'%' {
            literal.push(fmt[i]);
            i += 1;
            continue;
        }
        number += 1;
        let (parsed, next) = parse_conversion(fmt, i, number)?;
        i = next;
        match parsed {
            Parsed::Percent => literal.push(b'%'),
            Parsed::Conv(c) => {
                if !literal.is_empty() {
                    pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                }
                pieces.push(Piece::Conv(c));
            }
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    Ok(Format { pieces })
}

enum Parsed {
    Percent,
    Conv(Conversion),
}

/// Parses the conversion whose `%` is at `start`; returns it and the index
/// just past it. Mirrors DTrace's state machine, where flags, digits and
/// length modifiers may come in any order (`%l-5d` is accepted).
fn parse_conversion(fmt: &[u8], start: usize, number: usize) -> Result<(Parsed, usize), FormatError> {
    let mut flags = Flags::default();
    let mut width = 0u32;
    let mut precision = 0u32;
    let mut dynamic_width = false;
    let mut dynamic_precision = false;
    let mut dot = false;
    let mut digits = 0u32;
    let mut modifiers: Vec<u8> = Vec::new();
    let mut p = start;

    let conv_char = loop {
        p += 1;
        let Some(&c) = fmt.get(p) else {
            return Err(FormatError::UnexpectedEnd { conversion: number });
        };
        match c {
            b'0'..=b'9' => {
                if !dot && digits == 0 && c == b'0' {
                    flags.zero = true;
                    flags.left = false;
                    continue;
                }
                let mut n = 0u32;
                while let Some(&d) = fmt.get(p).filter(|d| d.is_ascii_digit()) {
                    n = n.saturating_mul(10).saturating_add(u32::from(d - b'0'));
                    p += 1;
                }
                p -= 1;
                if dot {
                    precision = n;
                } else {
                    width = n;
                }
                digits += 1;
            }
            b'#' => flags.alt = true,
            b'*' => {
                let already = if dot { &mut dynamic_precision } else { &mut dynamic_width };
                if *already {
                    return Err(FormatError::MultipleStars { conversion: number, precision: dot });
                }
                *already = true;
            }
            b'+' => flags.plus = true,
            b'-' => {
                flags.left = true;
                flags.zero = false;
            }
            b'.' => {
                if dot {
                    return Err(FormatError::MultipleDots { conversion: number });
                }
                dot = true;
                digits = 0;
            }
            // DTrace's "pointer width" flag: 16 on LP64.
            b'?' => width = 16,
            b'@' => flags.agg = true,
            b'\'' => flags.group = true,
            b' ' => flags.space = true,
            b'$' => return Err(FormatError::Positional { conversion: number }),
            b'%' => {
                if fmt[p - 1] == b'%' {
                    return Ok((Parsed::Percent, p + 1));
                }
                return Err(FormatError::PercentWithFlags { conversion: number });
            }
            b'h' | b'l' | b'L' | b'w' => {
                if modifiers.len() < MAX_MODIFIER_CHARS {
                    modifiers.push(c);
                }
            }
            other => break other,
        }
    };

    let mut name = modifiers.clone();
    name.push(conv_char);
    let Some(spec) = lookup_conversion(&name) else {
        return Err(FormatError::Undefined { conversion: number, name });
    };
    let length = match modifiers.as_slice() {
        b"h" => LengthModifier::Short,
        b"l" => LengthModifier::Long,
        b"ll" => LengthModifier::LongLong,
        b"L" => LengthModifier::LongDouble,
        b"w" => LengthModifier::Wide,
        _ => LengthModifier::None,
    };
    let width = if dynamic_width {
        Count::FromArg
    } else if width != 0 {
        Count::Fixed(width)
    } else {
        Count::None
    };
    let precision = if dynamic_precision {
        Count::FromArg
    } else if dot {
        Count::Fixed(precision)
    } else {
        Count::None
    };
    let conv = Conversion { number, flags, width, precision, length, conversion: conv_char, spec };
    Ok((Parsed::Conv(conv), p + 1))
}

pub(crate) fn until_nul(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(n) => &s[..n],
        None => s,
    }
}
