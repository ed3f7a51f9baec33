//! Front end of the D compiler: turns script text into the syntax tree of
//! [`ast`]. The lexer (`lexer.rs`) cuts the text into tokens, including the
//! probe-description tokens that only exist at the start of a clause; the
//! parser (`parser.rs`) builds the tree. Only the first error is reported, with
//! DTrace's wording, so that callers can print
//! `dtrace: failed to compile script x.d: line N: <message>`.

pub(crate) mod ast;
mod lexer;
pub(crate) use lexer::error_directive_message;
mod parser;
/// D's reserved words (a parameter named in an error must not be one).
pub(crate) use lexer::Keyword;
pub(crate) mod raw;

/// The first lexical or syntax error found in a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Where the offending text is (byte offsets into the source).
    pub span: ast::Span,
    /// DTrace's wording, e.g. `syntax error near "}"`.
    pub message: String,
    /// DTrace's error tag, e.g. `D_SYNTAX`, `D_STR_NL`, `D_INT_OFLOW`.
    pub tag: &'static str,
}

impl ParseError {
    pub(crate) fn new(span: ast::Span, tag: &'static str, message: impl Into<String>) -> Self {
        ParseError { span, message: message.into(), tag }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses a whole D program (a script, or the text of `dtrace -n`, where a
/// probe description may stand alone without predicate or actions).
///
/// `is_type` tells whether an identifier names a type (typedef) known outside
/// the script: D built-ins like `uint64_t`, provider types, kernel BTF
/// typedefs. Scoped names are asked about in full (`` vmlinux`pid_t ``) and
/// then without the scope. Typedefs declared by the script itself are tracked
/// by the parser.
///
/// `#pragma` lines are accepted at the start of any line, as DTrace does;
/// they appear in `Program::items` in source order, one inside a clause or
/// declaration right after that item.
pub fn parse(src: &str, is_type: &dyn Fn(&str) -> bool) -> Result<ast::Program, ParseError> {
    parser::Parser::new(src, is_type).parse_program()
}

/// `parse` for a script file (-s): a probe description there must be
/// followed by a predicate or actions, as DTrace's grammar requires of
/// file input. `pspec` (the option, from the command line; a script may
/// set it with a pragma before the item) reads a file-scope item that could
/// be a declaration as a probe description.
pub fn parse_script(src: &str, is_type: &dyn Fn(&str) -> bool, pspec: bool) -> Result<ast::Program, ParseError> {
    let mut parser = parser::Parser::new(src, is_type);
    parser.script_file = true;
    parser.pspec = pspec;
    parser.parse_program()
}

/// 1-based line number of a byte offset, for messages. Offsets past the end
/// count as the last line.
/// The bytes of `text` when it is exactly one D string literal (`"a\tb"`,
/// escapes read as in D source); None otherwise.
pub(crate) fn string_literal(text: &str) -> Option<Vec<u8>> {
    if !text.starts_with('"') {
        return None;
    }
    let mut lexer = lexer::Lexer::new(text);
    let token = lexer.next_token().ok()?;
    let lexer::TokenKind::Str(bytes) = token.kind else { return None };
    (lexer.pos() == text.len()).then_some(bytes)
}

/// The line number of byte `offset` of a source. A line control (cpp's
/// `# 12 "file"`, `#line 12`) numbers the line after it, as DTrace's lexer
/// reads them: errors in a script run through cpp (-C) name the script's
/// own lines.
pub fn line_of(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    let mut line = 1;
    let mut start = 0;
    while let Some(at) = src.as_bytes()[start..end].iter().position(|&b| b == b'\n') {
        line = control_line_number(&src[start..start + at]).unwrap_or(line + 1);
        start += at + 1;
    }
    line
}

/// N of a line control `# N ...` or `#line N ...`.
fn control_line_number(line: &str) -> Option<usize> {
    let rest = line.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").map_or(rest, str::trim_start);
    let digits = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

/// A small deterministic generator (xorshift64) for the fuzz tests of the
/// front end: a failing case replays from its seed.
#[cfg(test)]
pub(crate) struct XorShift(pub u64);

#[cfg(test)]
impl XorShift {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}
