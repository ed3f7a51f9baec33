//! DTrace-compatible `printf()` formatting: this module owns rendering a
//! format parsed by `defs::printf_format` with run-time argument values the
//! way illumos libdtrace (`dt_printf.c`) does on top of C's printf — including DTrace's own
//! conversions (`%a %A %S %C %Y %T %k ...`) and its quirks (a precision of 0
//! is dropped, `%p` is plain hex, `%d` follows the argument's signedness).
//! The numeric formatting is implemented here, following C's rules for flags,
//! width and precision; no C library printf is involved at run time.

use std::fmt;

use crate::defs::printf_format::{until_nul, Conversion, Count, Format, Piece, Render, MAX_FIELD};

/// A run-time argument value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// An integer record of `size` bytes (1, 2, 4 or 8); `bits` holds it in
    /// its low bytes.
    Int { bits: u64, size: u8, signed: bool },
    /// A float (`size` 4) or double (8) record: its bits in `bits`' low bytes.
    Float { bits: u64, size: u8 },
    /// A string record: NUL-terminated or the full buffer. Formatting stops
    /// at the first NUL. For `%k` it is the stack record handed to
    /// [`FormatContext::stack`].
    Str(&'a [u8]),
    /// Text rendered elsewhere (an aggregation's distribution for a printa()
    /// `%@` conversion): written as it is, whatever the conversion.
    Text(&'a [u8]),
}

/// Symbol and stack services the consumer provides.
pub trait FormatContext {
    /// `(name, offset)` for a kernel address; `name` is printed as given, so
    /// it should already be `module`symbol`.
    fn kernel_symbol(&self, addr: u64) -> Option<(String, u64)>;
    /// Same for a user address of the traced process.
    fn user_symbol(&self, addr: u64) -> Option<(String, u64)>;
    /// Renders a `%k` stack record. As in DTrace's dt_print_stack, each
    /// frame is indented by `indent` spaces (the width of a left-justified
    /// `%-Nk`, else 0) and its text written through `frame` (the `%Ns`
    /// field the conversion's width and precision make). The default treats
    /// the record as already-rendered text.
    fn stack(&self, record: &[u8], indent: usize, frame: &FrameFormat, out: &mut Vec<u8>) {
        let _ = (indent, frame);
        out.extend_from_slice(until_nul(record));
    }
}

/// The `%s` field a `%k` conversion applies to each stack frame's text.
#[derive(Clone, Copy, Debug)]
pub struct FrameFormat {
    spec: Spec,
}

impl FrameFormat {
    /// Writes one frame's text (e.g. "vmlinux`do_sys_open+0x1c") padded and
    /// truncated like `%s` with the conversion's flags, width and precision.
    pub fn write(&self, frame_text: &[u8], out: &mut Vec<u8>) {
        format_str(frame_text, &self.spec, out);
    }
}

/// Why rendering stopped early (DTrace stops a printf at the first
/// conversion whose data record is missing or unusable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatRuntimeError {
    MissingArgument { conversion: usize },
    ArgumentMismatch { conversion: usize },
}

impl fmt::Display for FormatRuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatRuntimeError::MissingArgument { conversion } => {
                write!(f, "printf conversion #{conversion} has no data record")
            }
            FormatRuntimeError::ArgumentMismatch { conversion } => {
                write!(f, "printf conversion #{conversion}: data record does not match format")
            }
        }
    }
}

impl std::error::Error for FormatRuntimeError {}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

/// Renders `fmt` with `args` (printf/trace-style: every conversion takes its
/// values from `args`). Rendering stops at the first conversion whose
/// argument is missing or of the wrong kind, as DTrace does; extra arguments
/// are ignored.
pub fn format(fmt: &Format, args: &[Value], ctx: &dyn FormatContext, out: &mut Vec<u8>) {
    let _ = try_format(fmt, args, ctx, out);
}

/// [`format`], telling why it stopped early.
pub fn try_format(
    fmt: &Format,
    args: &[Value],
    ctx: &dyn FormatContext,
    out: &mut Vec<u8>,
) -> Result<(), FormatRuntimeError> {
    try_format_printa(fmt, args, &[], ctx, out)
}

/// Renders a printa() line: keys and `*` values come from `args`, `%@`
/// conversions take the aggregation values in turn, re-using the last one
/// once they run out (as DTrace does).
pub fn format_printa(fmt: &Format, args: &[Value], aggs: &[Value], ctx: &dyn FormatContext, out: &mut Vec<u8>) {
    let _ = try_format_printa(fmt, args, aggs, ctx, out);
}

/// [`format_printa`], telling why it stopped early.
pub fn try_format_printa(
    fmt: &Format,
    args: &[Value],
    aggs: &[Value],
    ctx: &dyn FormatContext,
    out: &mut Vec<u8>,
) -> Result<(), FormatRuntimeError> {
    let mut next_arg = args.iter();
    let mut next_agg = 0usize;
    for piece in &fmt.pieces {
        let conv = match piece {
            Piece::Literal(text) => {
                out.extend_from_slice(text);
                continue;
            }
            Piece::Conv(conv) => conv,
        };
        let missing = FormatRuntimeError::MissingArgument { conversion: conv.number };
        let mismatch = FormatRuntimeError::ArgumentMismatch { conversion: conv.number };

        let dynamic_width = if conv.width == Count::FromArg {
            Some(star_value(next_arg.next().ok_or(missing.clone())?).ok_or(mismatch.clone())?)
        } else {
            None
        };
        let dynamic_precision = if conv.precision == Count::FromArg {
            Some(star_value(next_arg.next().ok_or(missing.clone())?).ok_or(mismatch.clone())?)
        } else {
            None
        };
        let value = if conv.flags.agg {
            let v = aggs.get(next_agg.min(aggs.len().saturating_sub(1))).ok_or(missing)?;
            next_agg += 1;
            v
        } else {
            next_arg.next().ok_or(missing)?
        };
        let spec = effective_spec(conv, dynamic_width, dynamic_precision);
        render(conv, &spec, dynamic_width, value, ctx, out).ok_or(mismatch)?;
    }
    Ok(())
}

/// A `*` argument, read as DTrace's dt_printf_getint does: sign-extended
/// from its size and truncated to a C int.
fn star_value(v: &Value) -> Option<i32> {
    match *v {
        Value::Int { bits, size, .. } => Some(sign_extend(bits, size) as i32),
        Value::Float { .. } | Value::Str(_) | Value::Text(_) => None,
    }
}

/// The C printf specification DTrace builds for one conversion at run time.
#[derive(Clone, Copy, Debug, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    group: bool,
    width: usize,
    precision: Option<usize>,
}

fn effective_spec(conv: &Conversion, dynamic_width: Option<i32>, dynamic_precision: Option<i32>) -> Spec {
    let width: i64 = match (conv.width, dynamic_width) {
        (_, Some(w)) => i64::from(w),
        (Count::Fixed(w), None) => i64::from(w),
        _ => 0,
    };
    // DTrace only writes a precision into the C format when it is > 0, so
    // `%.0d` and `%.0f` behave like `%d` and `%f`.
    let precision: i64 = match (conv.precision, dynamic_precision) {
        (_, Some(p)) => i64::from(p),
        (Count::Fixed(p), None) => i64::from(p),
        _ => 0,
    };
    let mut spec = Spec {
        left: conv.flags.left || width < 0,
        plus: conv.flags.plus,
        space: conv.flags.space,
        alt: conv.flags.alt,
        zero: conv.flags.zero,
        group: conv.flags.group,
        width: width.unsigned_abs().min(u64::from(MAX_FIELD)) as usize,
        precision: (precision > 0).then(|| precision.min(i64::from(MAX_FIELD)) as usize),
    };
    // A left-justified stack uses its width as the frame indent instead.
    if conv.spec.render == Render::Stack && conv.flags.left {
        spec.width = 0;
    }
    spec
}

/// Renders one conversion; `None` when the value is of the wrong kind.
fn render(
    conv: &Conversion,
    spec: &Spec,
    dynamic_width: Option<i32>,
    value: &Value,
    ctx: &dyn FormatContext,
    out: &mut Vec<u8>,
) -> Option<()> {
    let c_conv = conv.spec.c_conv;
    if let Value::Text(text) = value {
        out.extend_from_slice(text);
        return Some(());
    }
    match conv.spec.render {
        Render::SignedInt => {
            let (bits, size, _) = int_of(value)?;
            format_signed(sign_extend(bits, size), spec, out);
        }
        Render::UnsignedInt => {
            let (bits, size, _) = int_of(value)?;
            format_unsigned(zero_extend(bits, size), c_conv, spec, out);
        }
        Render::DecimalBySign => {
            let (bits, size, signed) = int_of(value)?;
            if signed {
                format_signed(sign_extend(bits, size), spec, out);
            } else {
                format_unsigned(zero_extend(bits, size), b'u', spec, out);
            }
        }
        Render::Char => {
            let (bits, _, _) = int_of(value)?;
            pad_field(spec, false, &[], &[bits as u8], out);
        }
        Render::WideChar => {
            let (bits, size, _) = int_of(value)?;
            let ch = char::from_u32(sign_extend(bits, size) as u32).unwrap_or(char::REPLACEMENT_CHARACTER);
            let mut buf = [0u8; 4];
            pad_field(spec, false, &[], ch.encode_utf8(&mut buf).as_bytes(), out);
        }
        Render::Float => {
            let x = match *value {
                Value::Float { bits, size: 4 } => f64::from(f32::from_bits(bits as u32)),
                Value::Float { bits, .. } => f64::from_bits(bits),
                _ => {
                    let (bits, size, signed) = int_of(value)?;
                    if signed {
                        sign_extend(bits, size) as f64
                    } else {
                        zero_extend(bits, size) as f64
                    }
                }
            };
            format_float(x, c_conv, spec, out);
        }
        Render::KernelAddr | Render::UserAddr => {
            let (bits, size, _) = int_of(value)?;
            let addr = zero_extend(bits, size);
            let found =
                if conv.spec.render == Render::KernelAddr { ctx.kernel_symbol(addr) } else { ctx.user_symbol(addr) };
            let text = match found {
                Some((name, 0)) => name,
                Some((name, off)) => format!("{name}+0x{off:x}"),
                None => format!("0x{addr:x}"),
            };
            format_str(text.as_bytes(), spec, out);
        }
        Render::Stack => {
            let Value::Str(record) = value else {
                return None;
            };
            let indent = match dynamic_width {
                Some(w) if w < 0 => w.unsigned_abs() as usize,
                _ if conv.flags.left => spec_width_for_indent(conv, dynamic_width),
                _ => 0,
            };
            ctx.stack(record, indent.min(MAX_FIELD as usize), &FrameFormat { spec: *spec }, out);
        }
        Render::Str | Render::InetAddr => format_str(until_nul(str_of(value)?), spec, out),
        Render::WideStr => format_str(&wide_to_utf8(str_of(value)?), spec, out),
        Render::EscapedStr => format_str(&escape_c(str_of(value)?), spec, out),
        Render::EscapedChar => {
            let (bits, _, _) = int_of(value)?;
            format_str(&escape_c(&[bits as u8]), spec, out);
        }
        Render::Time | Render::Time822 => {
            let (bits, size, _) = int_of(value)?;
            // hrtime_t is signed; DTrace divides before converting to time_t.
            let secs = sign_extend(bits, size) / 1_000_000_000;
            let text = if conv.spec.render == Render::Time { walltime_text(secs) } else { rfc822_text(secs) };
            format_str(text.as_bytes(), spec, out);
        }
        Render::Port => {
            let (bits, _, _) = int_of(value)?;
            format_str((bits as u16).to_string().as_bytes(), spec, out);
        }
    }
    Some(())
}

fn spec_width_for_indent(conv: &Conversion, dynamic_width: Option<i32>) -> usize {
    match (dynamic_width, conv.width) {
        (Some(w), _) if w != 0 => w.unsigned_abs() as usize,
        (_, Count::Fixed(w)) => w as usize,
        _ => 0,
    }
}

fn int_of(v: &Value) -> Option<(u64, u8, bool)> {
    match *v {
        Value::Int { bits, size, signed } => Some((bits, size, signed)),
        Value::Float { bits, size } => Some((bits, size, false)),
        Value::Str(_) | Value::Text(_) => None,
    }
}

fn str_of<'a>(v: &Value<'a>) -> Option<&'a [u8]> {
    match *v {
        Value::Str(s) => Some(s),
        Value::Int { .. } | Value::Float { .. } | Value::Text(_) => None,
    }
}

/// Sizes outside 1..=8 are read as 8 bytes rather than rejected.
fn effective_size(size: u8) -> u32 {
    if size == 0 || size > 8 {
        8
    } else {
        u32::from(size)
    }
}

fn zero_extend(bits: u64, size: u8) -> u64 {
    let nbits = effective_size(size) * 8;
    if nbits >= 64 {
        bits
    } else {
        bits & ((1u64 << nbits) - 1)
    }
}

fn sign_extend(bits: u64, size: u8) -> i64 {
    let nbits = effective_size(size) * 8;
    if nbits >= 64 {
        bits as i64
    } else {
        let shift = 64 - nbits;
        ((bits << shift) as i64) >> shift
    }
}

/// DTrace's strchr2esc(): C escapes for specials, `\ooo` for other
/// non-printables. The string ends at its NUL (a printa() key holds one).
fn escape_c(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for &c in s.iter().take_while(|c| **c != 0) {
        let simple = match c {
            0x07 => Some(b'a'),
            0x08 => Some(b'b'),
            0x0c => Some(b'f'),
            b'\n' => Some(b'n'),
            b'\r' => Some(b'r'),
            b'\t' => Some(b't'),
            0x0b => Some(b'v'),
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            _ => None,
        };
        if let Some(e) = simple {
            out.extend_from_slice(&[b'\\', e]);
        } else if c == b' ' || (b'!'..=b'~').contains(&c) {
            out.push(c);
        } else {
            out.extend_from_slice(&[b'\\', b'0' + (c >> 6), b'0' + ((c >> 3) & 7), b'0' + (c & 7)]);
        }
    }
    out
}

/// A wchar_t (32-bit, native order) string up to its NUL, as UTF-8.
fn wide_to_utf8(s: &[u8]) -> Vec<u8> {
    let mut text = String::new();
    for unit in s.chunks_exact(4) {
        let code = u32::from_ne_bytes([unit[0], unit[1], unit[2], unit[3]]);
        if code == 0 {
            break;
        }
        text.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    text.into_bytes()
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// Broken-down local time, or UTC if the C library cannot convert.
fn local_tm(secs: i64) -> libc::tm {
    // SAFETY: localtime_r only writes the tm we pass; an all-zero tm is a
    // valid value of this plain C struct.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        let t = secs as libc::time_t;
        if !libc::localtime_r(&t, &mut tm).is_null() {
            return tm;
        }
        utc_tm(secs)
    }
}

/// UTC broken-down time computed without libc, for times localtime_r rejects.
fn utc_tm(secs: i64) -> libc::tm {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // SAFETY: all-zero is a valid libc::tm.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = (year - 1900) as libc::c_int;
    tm.tm_mon = (month - 1) as libc::c_int;
    tm.tm_mday = day as libc::c_int;
    tm.tm_hour = (rem / 3600) as libc::c_int;
    tm.tm_min = (rem / 60 % 60) as libc::c_int;
    tm.tm_sec = (rem % 60) as libc::c_int;
    tm.tm_wday = (days + 4).rem_euclid(7) as libc::c_int;
    tm
}

/// `%Y`: ctime's fields reordered to "2026 Nov 21 23:52:09" (day padded
/// with a space, like `%e`), in local time.
fn walltime_text(secs: i64) -> String {
    let tm = local_tm(secs);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02}",
        i64::from(tm.tm_year) + 1900,
        MONTHS[tm.tm_mon.clamp(0, 11) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// `%T`: strftime("%a, %d %b %G %T %Z") of the local time, as DTrace does
/// (its `%G` is the ISO week-based year).
fn rfc822_text(secs: i64) -> String {
    let tm = local_tm(secs);
    let mut buf = [0u8; 64];
    // SAFETY: the format is NUL-terminated, buf's length is passed, tm is valid.
    let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), buf.len(), c"%a, %d %b %G %T %Z".as_ptr(), &tm) };
    String::from_utf8_lossy(&buf[..n.min(buf.len())]).into_owned()
}

// ---------------------------------------------------------------------------
// C printf core
// ---------------------------------------------------------------------------

/// Writes `prefix` (sign, `0x`) and `body` padded to the width. Zero padding
/// goes between prefix and body; glibc never zero-pads `%s`/`%c`.
fn pad_field(spec: &Spec, zero_pad: bool, prefix: &[u8], body: &[u8], out: &mut Vec<u8>) {
    let len = prefix.len() + body.len();
    let pad = spec.width.saturating_sub(len);
    if spec.left {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.resize(out.len() + pad, b' ');
    } else if zero_pad {
        out.extend_from_slice(prefix);
        out.resize(out.len() + pad, b'0');
        out.extend_from_slice(body);
    } else {
        out.resize(out.len() + pad, b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

/// `%s`: precision limits the bytes taken; flags other than `-` do nothing.
fn format_str(s: &[u8], spec: &Spec, out: &mut Vec<u8>) {
    let s = match spec.precision {
        Some(p) if p < s.len() => &s[..p],
        _ => s,
    };
    pad_field(spec, false, &[], s, out);
}

/// Inserts `,` every three digits from the right of a digit string.
fn group_thousands(digits: &[u8]) -> Vec<u8> {
    let mut grouped = Vec::with_capacity(digits.len() + digits.len() / 3);
    for (i, &d) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(b',');
        }
        grouped.push(d);
    }
    grouped
}

/// `%d`/`%i` of a value already extended to 64 bits.
fn format_signed(v: i64, spec: &Spec, out: &mut Vec<u8>) {
    let sign: &[u8] = if v < 0 {
        b"-"
    } else if spec.plus {
        b"+"
    } else if spec.space {
        b" "
    } else {
        b""
    };
    let mut buffer = itoa::Buffer::new();
    let digits = buffer.format(v.unsigned_abs()).as_bytes();
    format_decimal_digits(sign, digits, spec, out);
}

/// Decimal digits: straight to the field unless a precision or grouping
/// reshapes them (every event's printf passes here).
fn format_decimal_digits(prefix: &[u8], digits: &[u8], spec: &Spec, out: &mut Vec<u8>) {
    if spec.precision.is_none() && !spec.group {
        pad_field(spec, spec.zero, prefix, digits, out);
    } else {
        format_integer_digits(prefix, digits.to_vec(), true, spec, out);
    }
}

fn format_unsigned(v: u64, c_conv: u8, spec: &Spec, out: &mut Vec<u8>) {
    if !matches!(c_conv, b'o' | b'x' | b'X' | b'c') {
        let mut buffer = itoa::Buffer::new();
        return format_decimal_digits(b"", buffer.format(v).as_bytes(), spec, out);
    }
    let (digits, prefix): (String, &[u8]) = match c_conv {
        b'o' => (format!("{v:o}"), b""),
        b'x' => (format!("{v:x}"), if spec.alt && v != 0 { b"0x" } else { b"" }),
        b'X' => (format!("{v:X}"), if spec.alt && v != 0 { b"0X" } else { b"" }),
        b'c' => {
            pad_field(spec, false, &[], &[v as u8], out);
            return;
        }
        _ => (v.to_string(), b""),
    };
    let mut digits = digits.into_bytes();
    let decimal = !matches!(c_conv, b'o' | b'x' | b'X');
    // C: with a precision of 0 the value 0 prints no digits. DTrace never
    // passes a precision of 0, but keep the engine faithful to C.
    if spec.precision == Some(0) && v == 0 {
        digits.clear();
    }
    // `#o` guarantees a leading zero unless the precision already gives one.
    if c_conv == b'o' && spec.alt && spec.precision.unwrap_or(0) <= digits.len() && digits.first() != Some(&b'0') {
        digits.insert(0, b'0');
    }
    format_integer_digits(prefix, digits, decimal, spec, out);
}

/// Applies precision (minimum digits), grouping and width to integer digits.
fn format_integer_digits(prefix: &[u8], mut digits: Vec<u8>, decimal: bool, spec: &Spec, out: &mut Vec<u8>) {
    if spec.precision == Some(0) && digits == b"0" {
        digits.clear();
    }
    if decimal && spec.group {
        digits = group_thousands(&digits);
    }
    if let Some(p) = spec.precision.filter(|&p| digits.len() < p) {
        let mut padded = vec![b'0'; p - digits.len()];
        padded.extend_from_slice(&digits);
        digits = padded;
    }
    // C ignores `0` when a precision is given for integer conversions.
    let zero_pad = spec.zero && spec.precision.is_none();
    pad_field(spec, zero_pad, prefix, &digits, out);
}

fn format_float(x: f64, c_conv: u8, spec: &Spec, out: &mut Vec<u8>) {
    let upper = c_conv.is_ascii_uppercase();
    let sign: &[u8] = if x.is_sign_negative() {
        b"-"
    } else if spec.plus {
        b"+"
    } else if spec.space {
        b" "
    } else {
        b""
    };
    if !x.is_finite() {
        let text: &[u8] = match (x.is_nan(), upper) {
            (true, false) => b"nan",
            (true, true) => b"NAN",
            (false, false) => b"inf",
            (false, true) => b"INF",
        };
        pad_field(spec, false, sign, text, out);
        return;
    }
    let x = x.abs();
    let precision = spec.precision.unwrap_or(6);
    let body = match c_conv.to_ascii_lowercase() {
        b'e' => exp_form(x, precision, spec.alt, upper),
        b'g' => general_form(x, precision, spec.alt, spec.group, upper),
        _ => fixed_form(x, precision, spec.alt, spec.group),
    };
    pad_field(spec, spec.zero, sign, &body, out);
}

/// A double's exact decimal expansion has at most 1074 fractional digits
/// (and 767 significant ones), so digits past this are zeros. Rust's
/// formatter also rejects precisions above 65535.
const EXACT_DIGITS: usize = 1100;

/// Rust's `{:.p}` for any `p`, padding with the zeros C would print.
fn rust_fixed(x: f64, precision: usize) -> String {
    let capped = precision.min(EXACT_DIGITS);
    let mut text = format!("{x:.capped$}");
    text.extend(std::iter::repeat_n('0', precision - capped));
    text
}

fn fixed_form(x: f64, precision: usize, alt: bool, group: bool) -> Vec<u8> {
    let mut text = rust_fixed(x, precision).into_bytes();
    if alt && precision == 0 {
        text.push(b'.');
    }
    if group {
        let int_len = text.iter().position(|&b| b == b'.').unwrap_or(text.len());
        let mut grouped = group_thousands(&text[..int_len]);
        grouped.extend_from_slice(&text[int_len..]);
        text = grouped;
    }
    text
}

/// Rust's `{:.pe}` text split into mantissa and decimal exponent.
fn rust_exp(x: f64, precision: usize) -> (String, i32) {
    let capped = precision.min(EXACT_DIGITS);
    let text = format!("{x:.capped$e}");
    let (mantissa, exp) = match text.split_once('e') {
        Some((mantissa, exp)) => (mantissa.to_string(), exp.parse().unwrap_or(0)),
        None => (text, 0),
    };
    let mut mantissa = mantissa;
    mantissa.extend(std::iter::repeat_n('0', precision - capped));
    (mantissa, exp)
}

fn exp_form(x: f64, precision: usize, alt: bool, upper: bool) -> Vec<u8> {
    let (mut mantissa, exp) = rust_exp(x, precision);
    if alt && precision == 0 {
        mantissa.push('.');
    }
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{e}{sign}{:02}", exp.unsigned_abs()).into_bytes()
}

/// C's `%g`: `%e` or `%f` by the exponent, trailing zeros removed unless `#`.
fn general_form(x: f64, precision: usize, alt: bool, group: bool, upper: bool) -> Vec<u8> {
    let p = precision.max(1);
    let (_, exp) = rust_exp(x, p - 1);
    let (mut text, exp_at) = if exp < -4 || i64::from(exp) >= p as i64 {
        let text = exp_form(x, p - 1, alt, upper);
        let at = text.iter().position(|&b| b == b'e' || b == b'E');
        (text, at)
    } else {
        let frac_digits = (p as i64 - 1 - i64::from(exp)) as usize;
        (fixed_form(x, frac_digits, alt, group), None)
    };
    if !alt {
        let end = exp_at.unwrap_or(text.len());
        if text[..end].contains(&b'.') {
            let mut cut = end;
            while text[cut - 1] == b'0' {
                cut -= 1;
            }
            if text[cut - 1] == b'.' {
                cut -= 1;
            }
            text.drain(cut..end);
        }
    }
    text
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defs::printf_format::{parse_format, ArgClass, Flags, LengthModifier};
    use std::ffi::{CStr, CString};

    struct Symbols;

    impl FormatContext for Symbols {
        fn kernel_symbol(&self, addr: u64) -> Option<(String, u64)> {
            match addr {
                0xffff_ffff_8100_0000..=0xffff_ffff_8100_00ff => {
                    Some(("vmlinux`do_sys_open".to_string(), addr - 0xffff_ffff_8100_0000))
                }
                _ => None,
            }
        }
        fn user_symbol(&self, addr: u64) -> Option<(String, u64)> {
            (0x40_1000..0x40_1100).contains(&addr).then(|| ("a.out`main".to_string(), addr - 0x40_1000))
        }
    }

    fn int(v: i64, size: u8, signed: bool) -> Value<'static> {
        Value::Int { bits: v as u64, size, signed }
    }
    fn i32v(v: i32) -> Value<'static> {
        int(i64::from(v), 4, true)
    }
    fn u32v(v: u32) -> Value<'static> {
        int(i64::from(v), 4, false)
    }
    fn i64v(v: i64) -> Value<'static> {
        int(v, 8, true)
    }
    fn u64v(v: u64) -> Value<'static> {
        Value::Int { bits: v, size: 8, signed: false }
    }

    fn run(fmt: &str, args: &[Value]) -> String {
        let parsed = parse_format(fmt.as_bytes()).unwrap_or_else(|e| panic!("{fmt}: {e}"));
        let mut out = Vec::new();
        format(&parsed, args, &Symbols, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn parse_err(fmt: &str) -> String {
        parse_format(fmt.as_bytes()).expect_err(fmt).to_string()
    }

    /// The C library's printf of one argument: the oracle DTrace uses.
    enum CArg<'a> {
        Int(i32),
        UInt(u32),
        LongLong(i64),
        ULongLong(u64),
        Double(f64),
        Str(&'a str),
    }

    fn c_printf(fmt: &str, arg: CArg) -> String {
        let cfmt = CString::new(fmt).unwrap();
        let mut buf = vec![0u8; 4096];
        let p = buf.as_mut_ptr().cast::<libc::c_char>();
        let n = buf.len();
        // SAFETY: each call passes the argument type its format expects.
        unsafe {
            match arg {
                CArg::Int(v) => libc::snprintf(p, n, cfmt.as_ptr(), v),
                CArg::UInt(v) => libc::snprintf(p, n, cfmt.as_ptr(), v),
                CArg::LongLong(v) => libc::snprintf(p, n, cfmt.as_ptr(), v),
                CArg::ULongLong(v) => libc::snprintf(p, n, cfmt.as_ptr(), v),
                CArg::Double(v) => libc::snprintf(p, n, cfmt.as_ptr(), v),
                CArg::Str(s) => {
                    let cs = CString::new(s).unwrap();
                    libc::snprintf(p, n, cfmt.as_ptr(), cs.as_ptr())
                }
            };
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }

    const FLAG_SETS: &[&str] = &["", "-", "+", " ", "#", "0", "-+", "+0", " 0", "#0", "-#", "#+", "- "];
    const WIDTHS: &[&str] = &["", "1", "5", "12", "25"];
    const PRECISIONS: &[&str] = &["", ".1", ".3", ".8", ".20"];

    fn each_spec(mut f: impl FnMut(String)) {
        for flags in FLAG_SETS {
            for width in WIDTHS {
                for prec in PRECISIONS {
                    f(format!("{flags}{width}{prec}"));
                }
            }
        }
    }

    #[test]
    fn signed_conversions_match_c() {
        let values: &[i64] =
            &[0, 1, -1, 42, -42, 7, 1234567, i64::from(i32::MIN), i64::from(i32::MAX), i64::MIN, i64::MAX];
        each_spec(|spec| {
            for &v in values {
                for conv in ["d", "i"] {
                    let fmt = format!("%{spec}{conv}");
                    if let Ok(v32) = i32::try_from(v) {
                        assert_eq!(run(&fmt, &[i32v(v32)]), c_printf(&fmt, CArg::Int(v32)), "{fmt} {v}");
                    }
                    let cfmt = format!("%{spec}ll{conv}");
                    assert_eq!(run(&fmt, &[i64v(v)]), c_printf(&cfmt, CArg::LongLong(v)), "{fmt} {v}");
                }
            }
        });
    }

    #[test]
    fn unsigned_conversions_match_c() {
        let values: &[u64] = &[0, 1, 7, 8, 42, 0xdead_beef, u64::from(u32::MAX), u64::MAX, 1 << 40];
        each_spec(|spec| {
            for &v in values {
                for conv in ["u", "o", "x", "X"] {
                    let fmt = format!("%{spec}{conv}");
                    if let Ok(v32) = u32::try_from(v) {
                        assert_eq!(run(&fmt, &[u32v(v32)]), c_printf(&fmt, CArg::UInt(v32)), "{fmt} {v}");
                    }
                    let cfmt = format!("%{spec}ll{conv}");
                    assert_eq!(run(&fmt, &[u64v(v)]), c_printf(&cfmt, CArg::ULongLong(v)), "{fmt} {v}");
                }
            }
        });
    }

    #[test]
    fn float_conversions_match_c() {
        let values: &[f64] = &[
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.5,
            2.5,
            0.125,
            std::f64::consts::PI,
            1e-5,
            1.5e-4,
            123456.789,
            1e15,
            1e21,
            9.9999999,
            99999.95,
            0.0001,
            1e300,
            -2.5e-300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        each_spec(|spec| {
            for &v in values {
                for conv in ["e", "E", "f", "g", "G"] {
                    let fmt = format!("%{spec}{conv}");
                    let mut out = Vec::new();
                    let conv_parsed = parse_format(fmt.as_bytes()).unwrap();
                    let Piece::Conv(c) = &conv_parsed.pieces[0] else { panic!() };
                    format_float(v, c.spec.c_conv, &effective_spec(c, None, None), &mut out);
                    assert_eq!(String::from_utf8(out).unwrap(), c_printf(&fmt, CArg::Double(v)), "{fmt} {v}");
                }
            }
        });
    }

    #[test]
    fn integer_arguments_to_float_conversions_become_doubles() {
        assert_eq!(run("%f", &[i32v(3)]), "3.000000");
        assert_eq!(run("%e", &[i64v(-12345)]), c_printf("%e", CArg::Double(-12345.0)));
        assert_eq!(run("%g", &[u64v(u64::MAX)]), c_printf("%g", CArg::Double(u64::MAX as f64)));
        assert_eq!(run("%08.3f", &[i32v(-2)]), "-002.000");
    }

    #[test]
    fn strings_and_chars_match_c() {
        for s in ["", "a", "hello", "hello, world"] {
            each_spec(|spec| {
                let fmt = format!("%{spec}s");
                let record = format!("{s}\0garbage");
                assert_eq!(run(&fmt, &[Value::Str(record.as_bytes())]), c_printf(&fmt, CArg::Str(s)), "{fmt}");
            });
        }
        for flags in FLAG_SETS {
            for width in WIDTHS {
                let fmt = format!("%{flags}{width}c");
                assert_eq!(run(&fmt, &[int(b'x'.into(), 1, true)]), c_printf(&fmt, CArg::Int(b'x'.into())));
            }
        }
        // A record filling its buffer has no NUL.
        assert_eq!(run("[%s]", &[Value::Str(b"full")]), "[full]");
    }

    #[test]
    fn brief_edge_cases() {
        assert_eq!(run("%5.3d", &[i32v(42)]), "  042");
        assert_eq!(run("%-5d|", &[i32v(42)]), "42   |");
        assert_eq!(run("%+d", &[i32v(5)]), "+5");
        assert_eq!(run("% d", &[i32v(5)]), " 5");
        assert_eq!(run("%#o", &[u32v(0)]), "0");
        assert_eq!(run("%#x", &[u32v(0)]), "0");
        assert_eq!(run("%08.3f", &[i64v(3)]), "0003.000");
        assert_eq!(run("%'d", &[i32v(1234567)]), "1,234,567");
        assert_eq!(run("%'d", &[i32v(-1234567)]), "-1,234,567");
        assert_eq!(run("%'u", &[u32v(999)]), "999");
        assert_eq!(run("%'.2f", &[i64v(1234567)]), "1,234,567.00");
    }

    #[test]
    fn dtrace_drops_a_zero_precision() {
        // dt_printf_format only emits ".N" when N > 0.
        assert_eq!(run("%.0d", &[i32v(0)]), "0");
        assert_eq!(run("%.d", &[i32v(0)]), "0");
        assert_eq!(run("%.0f", &[i32v(2)]), "2.000000");
        assert_eq!(run("%.*d", &[i32v(0), i32v(0)]), "0");
        assert_eq!(run("%.*d", &[i32v(-3), i32v(7)]), "7");
        assert_eq!(run("%.*d", &[i32v(3), i32v(7)]), "007");
    }

    #[test]
    fn sizes_and_signedness() {
        assert_eq!(run("%u", &[i32v(-1)]), "4294967295");
        assert_eq!(run("%u", &[i64v(-1)]), "18446744073709551615");
        assert_eq!(run("%d", &[int(-1, 1, true)]), "-1");
        assert_eq!(run("%d", &[int(-1, 2, true)]), "-1");
        assert_eq!(run("%d", &[int(0xff, 1, false)]), "255");
        // %d of an unsigned value prints it as %u.
        assert_eq!(run("%d", &[u64v(u64::MAX)]), "18446744073709551615");
        assert_eq!(run("%d", &[u32v(u32::MAX)]), "4294967295");
        // %i is always signed, sign-extending from the record size.
        assert_eq!(run("%i", &[u32v(u32::MAX)]), "-1");
        assert_eq!(run("%i", &[int(200, 1, false)]), "-56");
        assert_eq!(run("%x", &[int(-1, 1, true)]), "ff");
        assert_eq!(run("%x", &[int(-1, 2, true)]), "ffff");
        assert_eq!(run("%X", &[i32v(-1)]), "FFFFFFFF");
        assert_eq!(run("%o", &[int(-1, 1, true)]), "377");
        assert_eq!(run("%hd", &[int(-1, 2, true)]), "-1");
        assert_eq!(run("%hi", &[int(-1, 2, true)]), "-1");
        assert_eq!(run("%lld %llu", &[i64v(-5), u64v(5)]), "-5 5");
        assert_eq!(run("%c", &[int(i64::from(b'A'), 4, true)]), "A");
        assert_eq!(run("%lc", &[i32v(0xe9)]), "é");
        // Bits above the size are ignored.
        assert_eq!(run("%d", &[Value::Int { bits: 0xffff_ffff_0000_0005, size: 4, signed: true }]), "5");
    }

    #[test]
    fn pointers_print_as_plain_hex() {
        assert_eq!(run("%p", &[u64v(0xffff_8880_1234_5678)]), "ffff888012345678");
        assert_eq!(run("%#p", &[u64v(0x1000)]), "0x1000");
        assert_eq!(run("%?p|", &[u64v(0x1000)]), "            1000|");
        assert_eq!(run("%-?p|", &[u64v(0x1000)]), "1000            |");
    }

    #[test]
    fn dynamic_width_and_precision() {
        assert_eq!(run("[%*d]", &[i32v(5), i32v(42)]), "[   42]");
        assert_eq!(run("[%*d]", &[i32v(-5), i32v(42)]), "[42   ]");
        assert_eq!(run("[%0*d]", &[i32v(-5), i32v(42)]), "[42   ]");
        assert_eq!(run("[%*.*s]", &[i64v(6), i64v(2), Value::Str(b"hello\0")]), "[    he]");
        assert_eq!(run("[%-*s]", &[int(4, 1, false), Value::Str(b"ab")]), "[ab  ]");
        // `*` values are C ints: an 8-byte value is truncated.
        assert_eq!(run("[%*d]", &[i64v(0x1_0000_0003), i32v(1)]), "[  1]");
        // The value after a `*` comes from the next argument.
        let f = parse_format(b"%*d %d").unwrap();
        assert_eq!(f.args_required(), 3);
    }

    #[test]
    fn kernel_and_user_symbols() {
        assert_eq!(run("%a", &[u64v(0xffff_ffff_8100_001c)]), "vmlinux`do_sys_open+0x1c");
        assert_eq!(run("%a", &[u64v(0xffff_ffff_8100_0000)]), "vmlinux`do_sys_open");
        assert_eq!(run("%a", &[u64v(0x1234)]), "0x1234");
        assert_eq!(run("[%-30a]", &[u64v(0xffff_ffff_8100_0001)]), "[vmlinux`do_sys_open+0x1       ]");
        assert_eq!(run("[%10a]", &[u64v(0xabc)]), "[     0xabc]");
        assert_eq!(run("%A", &[u64v(0x40_1010)]), "a.out`main+0x10");
        assert_eq!(run("%A", &[u64v(0x99)]), "0x99");
    }

    #[test]
    fn escaped_strings() {
        assert_eq!(run("%S", &[Value::Str(b"a\tb\n\"q\"\\ z")]), "a\\tb\\n\\\"q\\\"\\\\ z");
        assert_eq!(run("%S", &[Value::Str(&[1, 0x7f, 0xff, b'x'])]), "\\001\\177\\377x");
        assert_eq!(run("%S", &[Value::Str(&[7, 8, 12, 13, 11])]), "\\a\\b\\f\\r\\v");
        // The string ends at its NUL, which is not shown.
        assert_eq!(run("%S", &[Value::Str(b"abc\0def")]), "abc");
        assert_eq!(run("[%8S]", &[Value::Str(b"a\n")]), "[     a\\n]");
        assert_eq!(run("%C", &[int(10, 1, true)]), "\\n");
        assert_eq!(run("%C", &[int(i64::from(b'q'), 4, true)]), "q");
    }

    fn strftime_oracle(secs: i64, fmt: &str) -> String {
        let cfmt = CString::new(fmt).unwrap();
        let mut buf = [0u8; 128];
        // SAFETY: valid tm, NUL-terminated format, buffer length passed.
        unsafe {
            let mut tm: libc::tm = std::mem::zeroed();
            let t = secs as libc::time_t;
            assert!(!libc::localtime_r(&t, &mut tm).is_null());
            let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), cfmt.as_ptr(), &tm);
            String::from_utf8_lossy(&buf[..n]).into_owned()
        }
    }

    #[test]
    fn walltimestamps() {
        for secs in [0i64, 1_700_000_000, 1_795_305_129, 951_782_400, 4_102_444_800] {
            let ns = secs * 1_000_000_000 + 123_456_789;
            assert_eq!(run("%Y", &[i64v(ns)]), strftime_oracle(secs, "%Y %b %e %T"), "{secs}");
            assert_eq!(run("%T", &[i64v(ns)]), strftime_oracle(secs, "%a, %d %b %G %T %Z"), "{secs}");
        }
        let text = run("%Y", &[i64v(1_795_305_129_000_000_000)]);
        assert_eq!(text.len(), "2026 Nov 21 23:52:09".len());
        assert_eq!(run("[%.4Y]", &[i64v(0)]).len(), 6);
        // UTC fallback agrees with the C library on UTC fields.
        let tm = utc_tm(1_795_305_129);
        assert_eq!((tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec), (126, 10, 21, 23, 52, 9));
        let tm = utc_tm(-1);
        assert_eq!((tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour), (69, 11, 31, 23));
    }

    #[test]
    fn stacks_go_through_the_context() {
        struct Stacks;
        impl FormatContext for Stacks {
            fn kernel_symbol(&self, _: u64) -> Option<(String, u64)> {
                None
            }
            fn user_symbol(&self, _: u64) -> Option<(String, u64)> {
                None
            }
            fn stack(&self, record: &[u8], indent: usize, frame: &FrameFormat, out: &mut Vec<u8>) {
                out.extend_from_slice(format!("<{} {indent}:", record.len()).as_bytes());
                frame.write(b"f", out);
                out.push(b'>');
            }
        }
        let mut out = Vec::new();
        format(
            &parse_format(b"%k|%-8k|%*k|%12k").unwrap(),
            &[Value::Str(&[0; 16]), Value::Str(&[0; 8]), i32v(-3), Value::Str(&[0; 8]), Value::Str(&[])],
            &Stacks,
            &mut out,
        );
        // A negative `*` width sets the indent but, unlike `-`, does not drop
        // the width from the frame format (dt_printf_format checks the flag).
        assert_eq!(String::from_utf8(out).unwrap(), "<16 0:f>|<8 8:f>|<8 3:f  >|<0 0:           f>");
        // The default renders the record as text.
        assert_eq!(run("%k", &[Value::Str(b"\n  frame\0")]), "\n  frame");
    }

    #[test]
    fn percent_and_literals() {
        let f = parse_format(b"100%% of %d%%\n").unwrap();
        assert_eq!(f.pieces.len(), 3);
        assert_eq!(f.pieces[0], Piece::Literal(b"100% of ".to_vec()));
        assert_eq!(run("100%% of %d%%\n", &[i32v(5)]), "100% of 5%\n");
        assert_eq!(run("plain", &[]), "plain");
        assert!(parse_format(b"").unwrap().is_empty());
        // The format ends at a NUL, as in C.
        assert_eq!(run("ab\0%y", &[]), "ab");
    }

    #[test]
    fn parse_records_flags_width_precision_and_modifiers() {
        let f = parse_format(b"%-+ #0'@12.5lld").unwrap();
        let c = f.conversions().next().unwrap();
        // `0` after `-` cancels the left flag (DTrace's rule).
        assert_eq!(
            c.flags,
            Flags { left: false, plus: true, space: true, alt: true, zero: true, group: true, agg: true }
        );
        assert_eq!(
            (c.width, c.precision, c.length, c.conversion),
            (Count::Fixed(12), Count::Fixed(5), LengthModifier::LongLong, b'd')
        );
        assert_eq!(c.name(), "lld");
        assert_eq!(c.args_consumed(), 0);
        let f = parse_format(b"%0-5d").unwrap();
        let c = f.conversions().next().unwrap();
        assert!(c.flags.left && !c.flags.zero);
        let f = parse_format(b"%*.*hx %.f %l-5u").unwrap();
        let convs: Vec<_> = f.conversions().collect();
        assert_eq!(
            (convs[0].width, convs[0].precision, convs[0].length),
            (Count::FromArg, Count::FromArg, LengthModifier::Short)
        );
        assert_eq!(convs[0].args_consumed(), 3);
        assert_eq!(convs[1].precision, Count::Fixed(0));
        assert_eq!((convs[2].name(), convs[2].width, convs[2].flags.left), ("lu", Count::Fixed(5), true));
        assert_eq!(f.args_required(), 5);
        assert_eq!(convs.iter().map(|c| c.number).collect::<Vec<_>>(), [1, 2, 3]);
        let f = parse_format(b"%%%d").unwrap();
        assert_eq!(f.conversions().next().unwrap().number, 2);
    }

    #[test]
    fn parse_errors_use_dtrace_texts() {
        assert_eq!(parse_err("%y"), "format conversion #1 is undefined: %y");
        assert_eq!(parse_err("%d %ly"), "format conversion #2 is undefined: %ly");
        assert_eq!(parse_err("%hhd"), "format conversion #1 is undefined: %hhd");
        assert_eq!(parse_err("%zu"), "format conversion #1 is undefined: %z");
        assert_eq!(parse_err("%lf"), "format conversion #1 is undefined: %lf");
        assert_eq!(parse_err("%llllllllld"), "format conversion #1 is undefined: %lllllld");
        assert_eq!(parse_err("abc%"), "format conversion #1 name expected before end of format string");
        assert_eq!(parse_err("%-5"), "format conversion #1 name expected before end of format string");
        assert_eq!(parse_err("%**d"), "format conversion #1 has more than one '*' specified for the output width");
        assert_eq!(parse_err("%*5*d"), "format conversion #1 has more than one '*' specified for the output width");
        assert_eq!(parse_err("%.**d"), "format conversion #1 has more than one '*' specified for the output precision");
        assert_eq!(parse_err("%1.2.3d"), "format conversion #1 has more than one '.' specified");
        assert_eq!(parse_err("%1$d"), "format conversion #1 uses unsupported positional format (%n$)");
        assert_eq!(parse_err("%%%5%"), "format conversion #2 cannot be combined with other format flags: %%");
    }

    #[test]
    fn argument_checks_and_prototypes() {
        let f = parse_format(b"%d %s %a %c %f %Y %ld %hx %k %p %A %S %llx %lu").unwrap();
        let c: Vec<_> = f.conversions().collect();
        let int4 = ArgClass::Integer { size: 4, signed: true };
        let int8 = ArgClass::Integer { size: 8, signed: true };
        let uint8 = ArgClass::Integer { size: 8, signed: false };
        let short = ArgClass::Integer { size: 2, signed: false };
        assert!(c[0].accepts(&int4) && !c[0].accepts(&ArgClass::String) && !c[0].accepts(&ArgClass::Pointer));
        assert_eq!(c[0].prototype(), "char, short, int, long, or long long");
        assert!(c[1].accepts(&ArgClass::String) && !c[1].accepts(&int4));
        assert_eq!(c[1].prototype(), "char [] or string (or use stringof)");
        assert!(c[2].accepts(&ArgClass::Pointer) && c[2].accepts(&int8) && !c[2].accepts(&ArgClass::String));
        assert_eq!(c[2].prototype(), "pointer or integer");
        assert!(c[3].accepts(&int4) && !c[3].accepts(&int8));
        assert_eq!(c[3].prototype(), "char, short, or int");
        assert!(c[4].accepts(&ArgClass::Float) && !c[4].accepts(&int4));
        assert_eq!(c[4].prototype(), "float, double, or long double");
        assert!(c[5].accepts(&uint8) && !c[5].accepts(&int4));
        assert_eq!(c[5].prototype(), "int64_t");
        assert!(c[6].accepts(&int8) && !c[6].accepts(&uint8) && !c[6].accepts(&int4));
        assert_eq!(c[6].prototype(), "long");
        assert!(c[7].accepts(&short) && !c[7].accepts(&int4));
        assert!(c[8].accepts(&ArgClass::Other) && !c[8].accepts(&int8));
        assert_eq!(c[8].prototype(), "stack");
        assert!(c[9].accepts(&ArgClass::Pointer) && c[9].accepts(&int8));
        assert_eq!(c[10].prototype(), "pointer or integer (with -p/-c) or _usymaddr (without -p/-c)");
        assert!(c[11].accepts(&ArgClass::String));
        assert!(c[12].accepts(&int8) && c[12].accepts(&uint8));
        assert!(c[13].accepts(&uint8) && !c[13].accepts(&int8));
        assert!(Conversion::star_accepts(&int4) && !Conversion::star_accepts(&ArgClass::String));
        assert_eq!(
            c[0].incompatible_message("printf", Some(2), "string"),
            "printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %d\n\t prototype: char, short, int, long, or long long\n\t  argument: string"
        );
        assert_eq!(
            c[0].incompatible_message("printa", None, "uint64_t"),
            "printa( ) aggregating action is incompatible with conversion #1 prototype:\n\tconversion: %d\n\t prototype: char, short, int, long, or long long\n\t  argument: uint64_t"
        );
        assert_eq!(
            c[1].incompatible_star_message("printf", 3, true, "string"),
            "printf( ) argument #3 is incompatible with conversion #2 prototype:\n\tconversion: % .* s\n\t prototype: int\n\t  argument: string"
        );
        assert_eq!(
            c[1].missing_value_message("printf"),
            "printf( ) prototype mismatch: conversion #2 (%s) is missing a corresponding value argument"
        );
        assert_eq!(
            c[1].missing_star_message("printf", false),
            "printf( ) prototype mismatch: conversion #2 (%s) is missing a corresponding \"*\" argument"
        );
        assert_eq!(
            Format::extra_args_message("printf", 1),
            "printf( ) prototype mismatch: only 1 arguments required by this format string"
        );
        assert_eq!(Format::empty_message("printf"), "printf( ) format string is empty");
        assert_eq!(
            Conversion::aggregation_only_message("printf"),
            "%@ conversion requires an aggregation and is not for use with printf( )"
        );
    }

    #[test]
    fn printa_aggregation_values() {
        let f = parse_format(b"%s %@d %@8u|%@x\n").unwrap();
        assert_eq!(f.args_required(), 1);
        let mut out = Vec::new();
        format_printa(&f, &[Value::Str(b"bash\0")], &[i64v(-3), u64v(17)], &Symbols, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "bash -3       17|11\n");
    }

    #[test]
    fn missing_extra_and_mismatched_arguments_do_not_panic() {
        let f = parse_format(b"a%db%sc").unwrap();
        let mut out = Vec::new();
        assert_eq!(
            try_format(&f, &[i32v(1)], &Symbols, &mut out),
            Err(FormatRuntimeError::MissingArgument { conversion: 2 })
        );
        assert_eq!(out, b"a1b");
        out.clear();
        assert_eq!(
            try_format(&f, &[Value::Str(b"x"), i32v(1)], &Symbols, &mut out),
            Err(FormatRuntimeError::ArgumentMismatch { conversion: 1 })
        );
        assert_eq!(out, b"a");
        assert_eq!(run("%d", &[i32v(1), i32v(2), Value::Str(b"extra")]), "1");
        assert_eq!(run("%@d", &[]), "");
        assert_eq!(run("%*d", &[Value::Str(b"w"), i32v(1)]), "");
        assert_eq!(run("%d", &[Value::Int { bits: 7, size: 0, signed: true }]), "7");
        assert_eq!(run("%d", &[Value::Int { bits: 7, size: 200, signed: true }]), "7");
        assert_eq!(run("%d", &[Value::Int { bits: 0xff_ffff, size: 3, signed: true }]), "-1");
        assert!(!run("%Y", &[i64v(i64::MAX)]).is_empty());
        assert!(!run("%Y", &[i64v(i64::MIN)]).is_empty());
        assert_eq!(run("%ls", &[Value::Str(&[b'h', 0, 0, 0, 0xe9, 0, 0, 0, 0, 0, 0, 0, b'x'])]), "hé");
        assert_eq!(run("%ls", &[Value::Str(&[0xff, 0xff, 0xff, 0xff])]), "\u{fffd}");
    }

    #[test]
    fn huge_widths_are_clamped() {
        let mut out = Vec::new();
        format(&parse_format(b"%99999999999d").unwrap(), &[i32v(1)], &Symbols, &mut out);
        assert_eq!(out.len(), MAX_FIELD as usize);
        out.clear();
        format(&parse_format(b"%*d").unwrap(), &[i32v(i32::MIN), i32v(1)], &Symbols, &mut out);
        assert_eq!(out.len(), MAX_FIELD as usize);
        out.clear();
        format(&parse_format(b"%.99999999999f").unwrap(), &[i32v(1)], &Symbols, &mut out);
        assert_eq!(out.len(), MAX_FIELD as usize + 2);
        // Past the exact digits C prints zeros; compare one such case.
        for fmt in ["%.1500f", "%.1500e", "%#.1500g", "%.1500g"] {
            let parsed = parse_format(fmt.as_bytes()).unwrap();
            for x in [0.1, 5e-324, 1.0 / 3.0] {
                let mut out = Vec::new();
                let Piece::Conv(c) = &parsed.pieces[0] else { panic!() };
                format_float(x, c.spec.c_conv, &effective_spec(c, None, None), &mut out);
                assert_eq!(String::from_utf8(out).unwrap(), c_printf(fmt, CArg::Double(x)), "{fmt} {x}");
            }
        }
    }

    /// Every format built from a small alphabet, up to a length, parses or
    /// fails cleanly and renders with several argument lists without panic.
    #[test]
    fn odd_formats_never_panic() {
        let alphabet: &[u8] = b"%-+ #0'@*.?$1hlLwdsaAcCSeEfgGkxXopuiYTIP\xff\0";
        let arg_lists: [&[Value]; 4] = [
            &[],
            &[i32v(-7), i64v(3), Value::Str(b"s\0"), u64v(u64::MAX), int(-1, 1, true)],
            &[Value::Str(b"x"), Value::Str(b""), i32v(i32::MIN), i32v(i32::MAX)],
            &[i64v(i64::MIN), i64v(-1), i64v(0), i64v(1), i64v(i64::MAX), i64v(5)],
        ];
        let mut fmt = Vec::new();
        let mut count = 0usize;
        // Depth-first enumeration of all strings of length <= 3, then a
        // deterministic pseudo-random sample of longer ones.
        fn visit(fmt: &[u8], arg_lists: &[&[Value]; 4], count: &mut usize) {
            *count += 1;
            if let Ok(parsed) = parse_format(fmt) {
                for args in arg_lists {
                    let mut out = Vec::new();
                    format(&parsed, args, &Symbols, &mut out);
                    format_printa(&parsed, args, args, &Symbols, &mut out);
                }
            }
        }
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    fmt.clear();
                    fmt.extend_from_slice(&[*a, *b, *c]);
                    visit(&fmt, &arg_lists, &mut count);
                    visit(&fmt[..2], &arg_lists, &mut count);
                }
            }
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            fmt.clear();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = 4 + (seed % 12) as usize;
            let mut s = seed;
            for _ in 0..len {
                fmt.push(alphabet[(s % alphabet.len() as u64) as usize]);
                s = s.rotate_right(5).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            }
            visit(&fmt, &arg_lists, &mut count);
        }
        assert!(count > 100_000);
    }
}
