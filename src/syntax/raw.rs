//! Text that is not UTF-8. D strings are bytes, and so are command-line
//! arguments and script files; the front end works on `str`. Each byte
//! that is not part of valid UTF-8 is carried as one private-use character,
//! U+10FF00 plus the byte, and turned back into the byte wherever text
//! becomes data: string literals, `$1` values, paths, -c command lines.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

const BASE: u32 = 0x10_FF00;

/// Bytes as text: valid UTF-8 as is, each other byte as its stand-in.
pub(crate) fn text_from_bytes(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        for &b in chunk.invalid() {
            text.push(char::from_u32(BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER));
        }
    }
    text
}

pub(crate) fn text_from_os(arg: OsString) -> String {
    match arg.into_string() {
        Ok(text) => text,
        Err(arg) => text_from_bytes(&arg.into_vec()),
    }
}

/// The byte a stand-in character carries.
pub(crate) fn byte_of(c: char) -> Option<u8> {
    let v = u32::from(c);
    (BASE + 0x80..=BASE + 0xFF).contains(&v).then(|| (v - BASE) as u8)
}

/// Length in bytes of the stand-in that starts at `at`, and its byte.
pub(crate) fn byte_at(bytes: &[u8], at: usize) -> Option<(usize, u8)> {
    let c = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?.chars().next()?;
    byte_of(c).map(|b| (4, b))
}

/// The original bytes of text made by `text_from_bytes`.
pub(crate) fn bytes_of(text: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len());
    for c in text.chars() {
        match byte_of(c) {
            Some(b) => bytes.push(b),
            None => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    bytes
}

/// A path or program name, as the bytes the user gave.
pub(crate) fn os_of(text: &str) -> OsString {
    OsStr::from_bytes(&bytes_of(text)).to_os_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_sequence_survives_the_round_trip() {
        let samples: [&[u8]; 4] = [b"plain", b"a\xffb", b"\xc3(\x80\xfe", "é\u{10ff80}".as_bytes()];
        for bytes in samples.iter().take(3) {
            let text = text_from_bytes(bytes);
            assert_eq!(bytes_of(&text), *bytes);
        }
        assert_eq!(text_from_bytes(b"a\xffb"), "a\u{10ffff}b");
        assert_eq!(byte_at("\u{10ffff}".as_bytes(), 0), Some((4, 0xff)));
        assert_eq!(byte_at(b"abcd", 0), None);
    }
}
