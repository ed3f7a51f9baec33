//! print(): a value with its type, laid out as libdtrace's dt_print.c lays
//! it out: `int 0x5`, `string "abc"`, and structs member by member,
//!
//!     struct timespec {
//!         time64_t tv_sec = 0x5
//!         long tv_nsec = 0x1
//!     }
//!
//! (integers in hex, chars quoted, char arrays that hold a string as the
//! string, pointers not followed). The type description comes from the
//! type checker (`PrintNode`); the bytes from the record.

use crate::sema::ir::{PrintKind, PrintNode};

/// Prints `data` (the value's bytes, little-endian) as print() does.
pub(crate) fn print_value(node: &PrintNode, data: &[u8], line: &mut Vec<u8>) {
    if let PrintKind::String = node.kind {
        let end = data.iter().position(|b| *b == 0).unwrap_or(data.len());
        line.extend_from_slice(b"string \"");
        line.extend_from_slice(&data[..end]);
        line.push(b'"');
        line.push(b'\n');
        return;
    }
    let mut printer = Printer { data, line, depth: 0, nest: 0 };
    printer.visit("", node, 0, 0, None);
    printer.trailing_braces(0);
}

struct Printer<'a> {
    data: &'a [u8],
    line: &'a mut Vec<u8>,
    /// The member depth of the last member printed.
    depth: usize,
    /// How deep inside arrays of structs this printer is.
    nest: usize,
}

impl Printer<'_> {
    /// One member and, for structs, its members one level deeper (the order
    /// of CTF's type visit).
    fn visit(&mut self, name: &str, node: &PrintNode, bit_offset: usize, depth: usize, bits: Option<u32>) {
        self.member(name, node, bit_offset, depth, bits);
        if let PrintKind::Record(members) = &node.kind {
            for m in members {
                self.visit(&m.name, &m.node, bit_offset + m.bit_offset, depth + 1, m.bits);
            }
        }
    }

    fn member(&mut self, name: &str, node: &PrintNode, bit_offset: usize, depth: usize, bits: Option<u32>) {
        self.trailing_braces(depth);
        if depth < self.depth {
            self.line.push(b'\n');
        }
        self.depth = depth;
        let structlike = matches!(node.kind, PrintKind::Record(_));
        let array_member = self.nest != 0 && depth == 0;
        // Simple members of an array are printed inline: [ 0x1, 0x2 ].
        let brief = array_member && !structlike;
        if !brief {
            if array_member {
                self.line.push(b'\n');
            }
            self.indent();
            self.line.extend_from_slice(node.name.as_bytes());
            if !name.is_empty() {
                if !node.name.ends_with('*') && !node.name.ends_with(' ') {
                    self.line.push(b' ');
                }
                self.line.extend_from_slice(name.as_bytes());
                if let Some(bits) = bits {
                    self.line.extend(format!(" :{bits}").as_bytes());
                }
                self.line.extend_from_slice(b" =");
            }
            self.line.push(b' ');
        }
        self.value(node, bit_offset, bits);
        if !brief {
            self.line.push(b'\n');
        }
    }

    fn value(&mut self, node: &PrintNode, bit_offset: usize, bits: Option<u32>) {
        let at = bit_offset / 8;
        match &node.kind {
            PrintKind::Int { size, .. } if bits.is_some() || bit_offset % 8 != 0 => {
                let bits = bits.unwrap_or(8 * *size as u32);
                let raw = self.read(at, (bit_offset % 8 + bits as usize).div_ceil(8));
                let value = (raw >> (bit_offset % 8)) & mask(bits);
                self.line.extend(c_hex(value).as_bytes());
            }
            PrintKind::Int { size: 1, char: true, .. } => {
                let c = self.read(at, 1) as u8;
                let text = match c {
                    0 => "'\\0'".to_string(),
                    0x20..=0x7e => format!("'{}'", c as char),
                    _ => format!("'\\{c:03o}'"),
                };
                self.line.extend(text.as_bytes());
            }
            PrintKind::Int { size, .. } => self.hex(at, *size),
            PrintKind::Enum { size, enumerators } => {
                let raw = self.read(at, *size);
                let value = if *size < 8 { ((raw << (64 - 8 * size)) as i64) >> (64 - 8 * size) } else { raw as i64 };
                match enumerators.iter().find(|(v, _)| *v == value) {
                    Some((_, name)) => self.line.extend_from_slice(name.as_bytes()),
                    None => self.line.extend(value.to_string().as_bytes()),
                }
            }
            PrintKind::Pointer => self.hex(at, 8),
            PrintKind::String => {
                let bytes = self.data.get(at..).unwrap_or_default();
                let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
                self.line.push(b'"');
                self.line.extend_from_slice(&bytes[..end]);
                self.line.push(b'"');
            }
            PrintKind::Array { elem, len, elem_size } => self.array(elem, *len, *elem_size, at),
            PrintKind::Record(_) => self.line.push(b'{'),
        }
    }

    fn array(&mut self, elem: &PrintNode, len: usize, elem_size: usize, at: usize) {
        // A char array holding printable text and a NUL prints as a string.
        let is_string = matches!(elem.kind, PrintKind::Int { size: 1, char: true, .. }) && {
            let bytes = self.data.get(at..at + len).unwrap_or_default();
            let text = bytes.iter().position(|b| !(0x20..=0x7e).contains(b)).unwrap_or(bytes.len());
            text < len && bytes.get(text) == Some(&0)
        };
        let structlike = matches!(elem.kind, PrintKind::Record(_));
        let bracketed = !is_string || self.depth != 0;
        if bracketed {
            self.line.extend_from_slice(b"[ ");
        }
        if is_string {
            let bytes = &self.data[at..at + len];
            let end = bytes.iter().position(|b| *b == 0).unwrap_or(len);
            self.line.push(b'"');
            self.line.extend_from_slice(&bytes[..end]);
            self.line.push(b'"');
        } else {
            for i in 0..len {
                let mut inner =
                    Printer { data: self.data, line: &mut *self.line, depth: 0, nest: self.nest + self.depth + 1 };
                inner.visit("", elem, 8 * (at + i * elem_size), 0, None);
                inner.trailing_braces(0);
                if i + 1 != len {
                    self.line.extend_from_slice(b", ");
                } else if structlike {
                    self.line.push(b'\n');
                }
            }
        }
        if bracketed {
            if structlike {
                self.indent();
            } else {
                self.line.push(b' ');
            }
            self.line.push(b']');
        }
    }

    /// Closes the structs deeper than `depth`; the last brace gets no newline.
    fn trailing_braces(&mut self, depth: usize) {
        for d in (depth + 1..=self.depth).rev() {
            let indent = (d + self.nest - 1) * 4;
            self.line.extend(std::iter::repeat_n(b' ', indent));
            self.line.push(b'}');
            if d != depth + 1 {
                self.line.push(b'\n');
            }
        }
    }

    fn indent(&mut self) {
        self.line.extend(std::iter::repeat_n(b' ', (self.depth + self.nest) * 4));
    }

    fn hex(&mut self, at: usize, size: usize) {
        let value = self.read(at, size);
        self.line.extend(c_hex(value).as_bytes());
    }

    /// `size` (at most 8) little-endian bytes at `at`; missing bytes read 0.
    fn read(&self, at: usize, size: usize) -> u64 {
        let mut bytes = [0u8; 8];
        for (i, b) in bytes.iter_mut().enumerate().take(size.min(8)) {
            *b = self.data.get(at + i).copied().unwrap_or(0);
        }
        u64::from_le_bytes(bytes)
    }
}

/// C's `%#x`: no prefix for zero.
fn c_hex(value: u64) -> String {
    if value == 0 {
        "0".to_string()
    } else {
        format!("{value:#x}")
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::ir::PrintMember;

    fn int(name: &str, size: usize) -> PrintNode {
        PrintNode { name: name.into(), kind: PrintKind::Int { size, signed: true, char: name == "char" } }
    }

    fn member(name: &str, byte: usize, node: PrintNode) -> PrintMember {
        PrintMember { name: name.into(), bit_offset: 8 * byte, bits: None, node }
    }

    fn printed(node: &PrintNode, data: &[u8]) -> String {
        let mut line = Vec::new();
        print_value(node, data, &mut line);
        String::from_utf8(line).expect("utf-8")
    }

    #[test]
    fn scalars_print_their_type_and_hex_value() {
        assert_eq!(printed(&int("int", 4), &5u64.to_le_bytes()), "int 0x5\n");
        assert_eq!(printed(&int("uint64_t", 8), &0u64.to_le_bytes()), "uint64_t 0\n");
        assert_eq!(printed(&int("char", 1), b"A\0\0\0\0\0\0\0"), "char 'A'\n");
        let string = PrintNode { name: "string".into(), kind: PrintKind::String };
        assert_eq!(printed(&string, b"hello\0junk"), "string \"hello\"\n");
    }

    #[test]
    fn structs_print_member_by_member_with_nested_braces() {
        let chars = PrintNode {
            name: "char [4]".into(),
            kind: PrintKind::Array { elem: Box::new(int("char", 1)), len: 4, elem_size: 1 },
        };
        let shorts = PrintNode {
            name: "short [2]".into(),
            kind: PrintKind::Array { elem: Box::new(int("short", 2)), len: 2, elem_size: 2 },
        };
        let inner =
            PrintNode { name: "struct in".into(), kind: PrintKind::Record(vec![member("x", 0, int("int", 4))]) };
        let mut flag = member("flag", 16, int("unsigned int", 4));
        flag.bit_offset = 8 * 16 + 1;
        flag.bits = Some(2);
        let outer = PrintNode {
            name: "struct out".into(),
            kind: PrintKind::Record(vec![
                member("a", 0, int("int", 4)),
                member("name", 4, chars),
                member("in", 8, inner),
                member("pair", 12, shorts),
                flag,
            ]),
        };
        let mut data = vec![0u8; 20];
        data[0] = 1;
        data[4..7].copy_from_slice(b"ab\0");
        data[8] = 9;
        data[12] = 3;
        data[14] = 4;
        data[16] = 0b110;
        assert_eq!(
            printed(&outer, &data),
            "struct out {\n    int a = 0x1\n    char [4] name = [ \"ab\" ]\n    struct in in = {\n        int x = 0x9\n    }\n    short [2] pair = [ 0x3, 0x4 ]\n    unsigned int flag :2 = 0x3\n}"
        );
    }
}
