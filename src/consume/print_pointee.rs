//! print() of a pointer to a struct or union, laid out as dtrace-utils lays
//! it out: the address, then the object it points to, member by member,
//!
//!     0xffff8c0a41e9c000 = *
//!                                                 (struct tun_page) {
//!                                                  .page = (struct page *)0xfeedfacefeedface,
//!                                                  .count = (int)123,
//!                                                 }
//!
//! The body starts at column 44 (the width of the CPU, ID and
//! FUNCTION:NAME columns), one more space per level; members that are all
//! zero are left out; a char array stops at its NUL; members that begin
//! past the printsize option's bytes end the walk with `...`. The type
//! description comes from the type checker (`PrintNode`), the bytes from
//! the record (the address, then the object).

use crate::defs::layout::read_u64;
use crate::sema::ir::{PrintKind, PrintNode};

/// The column the body starts at.
const START_INDENT: usize = 44;
/// Members this deep are not shown (`...`).
const MAX_DEPTH: usize = 10;

/// Prints a PrintPointee record: `record` holds the address (8 bytes) and
/// the object's bytes; at most `printsize` of them are shown.
pub(crate) fn print_pointee(node: &PrintNode, record: &[u8], printsize: usize, line: &mut Vec<u8>) {
    let address = read_u64(record, 0);
    let data = record.get(8..).unwrap_or_default();
    line.extend(format!("{address:#x} = *\n").as_bytes());
    let mut walk = Walk { data, limit: data.len().min(printsize), last_depth: 0, records: [false; MAX_DEPTH], line };
    walk.visit("", node, 0, 0);
    walk.close(0);
}

struct Walk<'a> {
    data: &'a [u8],
    /// Bytes a member must begin before to be shown.
    limit: usize,
    /// The depth of the last member shown.
    last_depth: usize,
    /// Whether the last member shown at each depth is a struct or union
    /// (whose closing brace is still due).
    records: [bool; MAX_DEPTH],
    line: &'a mut Vec<u8>,
}

impl Walk<'_> {
    /// One member, then (for a struct or union) its members one level
    /// deeper; false once the walk has stopped at the printsize limit.
    fn visit(&mut self, name: &str, node: &PrintNode, bit_offset: usize, depth: usize) -> bool {
        if !self.member(name, node, bit_offset, depth, None) {
            return false;
        }
        if let PrintKind::Record(members) = &node.kind {
            for m in members {
                if !self.visit(&m.name, &m.node, bit_offset + m.bit_offset, depth + 1) {
                    return false;
                }
            }
        }
        true
    }

    /// One member's line (an array's element lines too). Its members, if
    /// any, are the caller's to visit. `bits` is a bit-field's width.
    fn member(&mut self, name: &str, node: &PrintNode, bit_offset: usize, depth: usize, bits: Option<u32>) -> bool {
        let at = bit_offset / 8;
        if at >= self.limit || depth >= MAX_DEPTH {
            self.indent(depth);
            self.line.extend_from_slice(b"...\n");
            return false;
        }
        if self.last_depth > depth {
            self.close(depth);
        }
        let size = node_size(node);
        if depth > 0 && self.is_zero(at, size) {
            return true;
        }
        self.records[depth] = matches!(node.kind, PrintKind::Record(_));
        self.last_depth = depth;
        let type_name = node.name.strip_suffix(' ').unwrap_or(&node.name);
        let value = match &node.kind {
            PrintKind::Record(_) => format!("({type_name}) {{"),
            PrintKind::Array { len: 0, .. } => format!("({type_name}) [],"),
            PrintKind::Array { .. } => format!("({type_name}) ["),
            // Floating-point members are not shown.
            PrintKind::Int { .. } if is_float(type_name) => return true,
            PrintKind::Int { size, signed, char } => {
                let raw = self.read(at, *size);
                let value = match bits {
                    Some(bits) => (raw >> (bit_offset % 8)) & low_bits(bits),
                    None => raw,
                };
                if *char && type_name == "char" && bits.is_none() {
                    format!("({type_name})'{}',", value as u8 as char)
                } else if *signed && *size < 8 {
                    let shift = 64 - 8 * *size as u32;
                    format!("({type_name}){},", ((value << shift) as i64) >> shift)
                } else if *signed {
                    format!("({type_name}){},", value as i64)
                } else {
                    format!("({type_name}){value},")
                }
            }
            PrintKind::Enum { enumerators, .. } => {
                let value = i64::from(self.read(at, 4) as u32 as i32);
                match enumerators.iter().find(|(v, _)| *v == value) {
                    Some((_, enumerator)) => format!("({type_name}){enumerator},"),
                    None => format!("({type_name}){value},"),
                }
            }
            PrintKind::Pointer => format!("({type_name}){:#x},", self.read(at, 8)),
            PrintKind::String => {
                let bytes = self.data.get(at..).unwrap_or_default();
                let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
                format!("({type_name})\"{}\",", String::from_utf8_lossy(&bytes[..end]))
            }
        };
        self.indent(depth);
        if depth > 0 && !name.is_empty() {
            self.line.extend(format!(".{name} = ").as_bytes());
        }
        self.line.extend(value.as_bytes());
        self.line.push(b'\n');
        match &node.kind {
            PrintKind::Array { elem, len, elem_size } if *len > 0 => self.elements(elem, *len, *elem_size, at, depth),
            _ => true,
        }
    }

    /// An array's elements, one line each (zero ones left out, a char
    /// array's up to its NUL), then its closing bracket.
    fn elements(&mut self, elem: &PrintNode, len: usize, elem_size: usize, at: usize, depth: usize) -> bool {
        let text = matches!(elem.kind, PrintKind::Int { size: 1, .. }) && elem.name.ends_with("char");
        // The elements' own depths do not close the members around them.
        let (last_depth, records) = (self.last_depth, self.records);
        for i in 0..len {
            let from = at + i * elem_size;
            if text && self.data.get(from) == Some(&0) {
                break;
            }
            if !self.member("", elem, 8 * from, depth + 1, None) {
                return false;
            }
        }
        (self.last_depth, self.records) = (last_depth, records);
        self.indent(depth);
        self.line.extend_from_slice(b"],\n");
        true
    }

    /// Closes the structs and unions deeper than `depth`: `},` inside
    /// another, `}` for the outermost.
    fn close(&mut self, depth: usize) {
        if !self.records[depth] {
            return;
        }
        if depth == 0 && self.last_depth == 0 {
            self.last_depth = 1;
        }
        for i in (1..=self.last_depth - depth).rev() {
            self.indent(depth + i - 1);
            self.line.push(b'}');
            if depth > 0 || i > 1 {
                self.line.push(b',');
            }
            self.line.push(b'\n');
        }
        self.last_depth = depth;
    }

    fn indent(&mut self, depth: usize) {
        self.line.extend(std::iter::repeat_n(b' ', START_INDENT + depth));
    }

    fn is_zero(&self, at: usize, size: usize) -> bool {
        self.data.get(at..at + size).unwrap_or_default().iter().all(|b| *b == 0)
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

/// The bytes a value of the node's type takes.
fn node_size(node: &PrintNode) -> usize {
    match &node.kind {
        PrintKind::Int { size, .. } | PrintKind::Enum { size, .. } => *size,
        PrintKind::Pointer => 8,
        PrintKind::String => 1,
        PrintKind::Array { len, elem_size, .. } => len * elem_size,
        PrintKind::Record(members) => members
            .iter()
            .map(|m| m.bit_offset / 8 + m.bits.map_or_else(|| node_size(&m.node), |bits| bits.div_ceil(8) as usize))
            .max()
            .unwrap_or(0),
    }
}

fn is_float(type_name: &str) -> bool {
    matches!(type_name, "float" | "double" | "long double")
}

fn low_bits(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::ir::PrintMember;

    fn int(name: &str, size: usize, signed: bool) -> PrintNode {
        PrintNode { name: name.into(), kind: PrintKind::Int { size, signed, char: size == 1 && signed } }
    }

    fn member(name: &str, byte_offset: usize, node: PrintNode) -> PrintMember {
        PrintMember { name: name.into(), bit_offset: 8 * byte_offset, bits: None, node }
    }

    /// struct s { int a; char b[5]; union { uint8_t c; uint64_t d; } u; }
    fn sample() -> PrintNode {
        let chars = PrintNode {
            name: "char [5]".into(),
            kind: PrintKind::Array { elem: Box::new(int("char", 1, true)), len: 5, elem_size: 1 },
        };
        let union = PrintNode {
            name: "union ".into(),
            kind: PrintKind::Record(vec![
                member("c", 0, int("uint8_t", 1, false)),
                member("d", 0, int("uint64_t", 8, false)),
            ]),
        };
        PrintNode {
            name: "struct s".into(),
            kind: PrintKind::Record(vec![
                member("a", 0, int("int", 4, true)),
                member("b", 4, chars),
                member("u", 16, union),
            ]),
        }
    }

    fn record(object: &[u8]) -> Vec<u8> {
        let mut record = 0xfeedu64.to_le_bytes().to_vec();
        record.extend_from_slice(object);
        record
    }

    fn printed(object: &[u8], printsize: usize) -> String {
        let mut line = Vec::new();
        print_pointee(&sample(), &record(object), printsize, &mut line);
        String::from_utf8(line)
            .unwrap()
            .lines()
            .map(|l| l.trim_start().to_string() + "|" + &(l.len() - l.trim_start().len()).to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn members_nest_one_space_deeper_and_zero_ones_are_left_out() {
        let mut object = [0u8; 24];
        object[0..4].copy_from_slice(&(-1i32).to_le_bytes());
        object[4..9].copy_from_slice(b"te\0st");
        object[16..24].copy_from_slice(&0x1234u64.to_le_bytes());
        let want = [
            "0xfeed = *|0",
            "(struct s) {|44",
            ".a = (int)-1,|45",
            ".b = (char [5]) [|45",
            "(char)'t',|46",
            "(char)'e',|46",
            "],|45",
            ".u = (union) {|45",
            ".c = (uint8_t)52,|46",
            ".d = (uint64_t)4660,|46",
            "},|45",
            "}|44",
        ];
        assert_eq!(printed(&object, 8192), want.join("\n"));
    }

    #[test]
    fn a_member_past_printsize_ends_the_walk_before_the_braces_close() {
        let mut object = [0u8; 24];
        object[0] = 1;
        object[16] = 1;
        let want = ["0xfeed = *|0", "(struct s) {|44", ".a = (int)1,|45", "...|45", "}|44"];
        assert_eq!(printed(&object, 8), want.join("\n"));
    }
}
