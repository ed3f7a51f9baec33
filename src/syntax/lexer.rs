//! The D lexer: cuts script text into tokens carrying byte spans.
//!
//! It owns everything that is decided character by character: white space,
//! `/* */` and `//` comments, control lines (`#pragma` lines are collected for
//! the parser wherever they appear, as DTrace processes them anywhere; `#!`,
//! `#line` and other `#` lines are skipped), keywords, constants with their C
//! escapes and suffixes, macro references (`$1`, `$$1`, `$target`),
//! aggregation names and punctuators. D needs a second lexing mode for probe
//! descriptions (`syscall::open*:entry` contains characters that are operators
//! elsewhere); the parser asks for it explicitly with
//! [`Lexer::next_probe_spec`], mirroring the S2 state of DTrace's `dt_lex.l`.

use std::collections::BTreeMap;

use super::ast::{IntSuffix, Span};
use super::ParseError;

macro_rules! keywords {
    ($($variant:ident = $text:literal,)*) => {
        /// Every reserved word of D, including the ones that no rule of the
        /// grammar uses (`for`, `switch`, ...): they still cannot be identifiers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Keyword { $($variant,)* }

        impl Keyword {
            pub(crate) fn from_word(word: &str) -> Option<Keyword> {
                match word {
                    $($text => Some(Keyword::$variant),)*
                    _ => None,
                }
            }

            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $(Keyword::$variant => $text,)*
                }
            }
        }
    };
}

keywords! {
    Auto = "auto",
    Break = "break",
    Case = "case",
    Char = "char",
    Const = "const",
    Continue = "continue",
    Counter = "counter",
    Default = "default",
    Do = "do",
    Double = "double",
    Else = "else",
    Enum = "enum",
    Extern = "extern",
    Float = "float",
    For = "for",
    Goto = "goto",
    If = "if",
    Import = "import",
    Inline = "inline",
    Int = "int",
    Long = "long",
    Offsetof = "offsetof",
    Probe = "probe",
    Provider = "provider",
    Register = "register",
    Restrict = "restrict",
    SelfKw = "self",
    Short = "short",
    Signed = "signed",
    Sizeof = "sizeof",
    Static = "static",
    String = "string",
    Stringof = "stringof",
    Struct = "struct",
    Switch = "switch",
    This = "this",
    Translator = "translator",
    Typedef = "typedef",
    Union = "union",
    Unsigned = "unsigned",
    Void = "void",
    Volatile = "volatile",
    While = "while",
    Xlate = "xlate",
}

macro_rules! puncts {
    ($($variant:ident = $text:literal,)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Punct { $($variant,)* }

        /// Longest spellings first, so that the first match is the longest.
        const PUNCTS: &[(&str, Punct)] = &[$(($text, Punct::$variant),)*];
    };
}

puncts! {
    ShlAssign = "<<=",
    ShrAssign = ">>=",
    Ellipsis = "...",
    Arrow = "->",
    PlusPlus = "++",
    MinusMinus = "--",
    Shl = "<<",
    Shr = ">>",
    Le = "<=",
    Ge = ">=",
    EqEq = "==",
    NotEq = "!=",
    AndAnd = "&&",
    OrOr = "||",
    XorXor = "^^",
    PlusAssign = "+=",
    MinusAssign = "-=",
    StarAssign = "*=",
    SlashAssign = "/=",
    PercentAssign = "%=",
    AmpAssign = "&=",
    PipeAssign = "|=",
    CaretAssign = "^=",
    LParen = "(",
    RParen = ")",
    LBracket = "[",
    RBracket = "]",
    LBrace = "{",
    RBrace = "}",
    Comma = ",",
    Semi = ";",
    Colon = ":",
    Question = "?",
    Dot = ".",
    Plus = "+",
    Minus = "-",
    Star = "*",
    Slash = "/",
    Percent = "%",
    Amp = "&",
    Pipe = "|",
    Caret = "^",
    Bang = "!",
    Tilde = "~",
    Lt = "<",
    Gt = ">",
    Assign = "=",
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    Ident(String),
    Keyword(Keyword),
    /// `` `name `` or `` module`name ``.
    Backquote {
        module: Option<String>,
        name: String,
    },
    Int {
        value: u64,
        suffix: IntSuffix,
        decimal: bool,
    },
    Float(String),
    Char(i64),
    Str(Vec<u8>),
    MacroArg(u32),
    MacroStr(u32),
    MacroVar(String),
    /// Name without the `@`; empty for the anonymous aggregation.
    Aggregation(String),
    Punct(Punct),
    /// Only produced by [`Lexer::next_probe_spec`].
    ProbeSpec(String),
    Eof,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// Macro variables DTrace defines (`$target`, `$pid`, ...).
const MACRO_VARIABLES: &[&str] =
    &["egid", "euid", "gid", "pgid", "pid", "ppid", "projid", "sid", "target", "taskid", "uid"];

/// Character constants are packed into a 64-bit integer, as C compilers do.
const MAX_CHAR_CONSTANT_BYTES: usize = 8;

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// White space as C's `isspace` sees it.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Characters that may start a probe description (DTrace's RGX_PSPEC, plus
/// digits for probes named by id).
pub(crate) fn is_probe_start(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-$:_.?*\\[]!".contains(&b)
}

/// Characters that may continue a probe description.
pub(crate) fn is_probe_continue(b: u8) -> bool {
    is_probe_start(b) || b"`~+".contains(&b)
}

/// A `#pragma` line: the words after `#pragma` and the line's span.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PragmaLine {
    pub words: Vec<String>,
    pub span: Span,
}

pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// `#pragma` lines met so far, by offset: the parser may re-lex text
    /// after a rewind, and each line must be reported once.
    pragmas: BTreeMap<usize, PragmaLine>,
    /// Macro argument references (`$1`, `$$2`) met so far, by offset:
    /// (index, as a string, end).
    macro_args: BTreeMap<usize, (u32, bool, usize)>,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Lexer { src, pos: 0, pragmas: BTreeMap::new(), macro_args: BTreeMap::new() }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Moves back to `pos` (the start of a token already produced), so that
    /// the following text can be lexed again in another mode.
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.src.len());
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    pub(crate) fn byte_at(&self, pos: usize) -> Option<u8> {
        self.bytes().get(pos).copied()
    }

    /// The text of the probe-description characters starting at `pos`.
    pub(crate) fn probe_word_at(&self, pos: usize) -> &'a str {
        let bytes = self.bytes();
        let mut end = pos;
        while end < bytes.len() && is_probe_continue(bytes[end]) {
            end += 1;
        }
        // Only ASCII bytes were consumed, so both ends are char boundaries.
        &self.src[pos.min(end)..end]
    }

    /// Whether a `/` ending at `after` closes a predicate: like DTrace, look
    /// at the next non-blank character; end of input, `;`, `{` or `/` close.
    /// The offset of the first byte after `pos` that is not white space.
    pub(crate) fn next_nonblank(&self, pos: usize) -> usize {
        let bytes = self.bytes();
        let mut p = pos;
        while p < bytes.len() && is_space(bytes[p]) {
            p += 1;
        }
        p
    }

    pub(crate) fn slash_ends_predicate(&self, after: usize) -> bool {
        matches!(self.bytes().get(self.next_nonblank(after)), None | Some(b';' | b'{' | b'/'))
    }

    /// Whether only blanks separate `pos` from the start of its line.
    fn at_line_start(&self, pos: usize) -> bool {
        let bytes = self.bytes();
        let mut p = pos;
        while p > 0 && matches!(bytes[p - 1], b' ' | b'\t' | b'\r' | 0x0b | 0x0c) {
            p -= 1;
        }
        p == 0 || bytes[p - 1] == b'\n'
    }

    fn line_end(&self, pos: usize) -> usize {
        let bytes = self.bytes();
        let mut p = pos;
        while p < bytes.len() && bytes[p] != b'\n' {
            p += 1;
        }
        p
    }

    /// The directive word of the control line whose `#` is at `hash`.
    fn directive_at(&self, hash: usize) -> &'a str {
        let bytes = self.bytes();
        let mut start = hash + 1;
        while start < bytes.len() && matches!(bytes[start], b' ' | b'\t') {
            start += 1;
        }
        let mut end = start;
        while end < bytes.len() && is_ident_continue(bytes[end]) {
            end += 1;
        }
        &self.src[start..end]
    }

    /// The macro argument references met so far, in source order.
    pub(crate) fn take_macro_args(&mut self) -> Vec<(u32, bool, std::ops::Range<usize>)> {
        std::mem::take(&mut self.macro_args).into_iter().map(|(start, (n, s, end))| (n, s, start..end)).collect()
    }

    /// Whether a `#pragma` with exactly these words has been read.
    pub(crate) fn has_pragma(&self, words: &[&str]) -> bool {
        self.pragmas.values().any(|p| p.words.iter().map(String::as_str).eq(words.iter().copied()))
    }

    /// The `#pragma` lines met so far, in source order.
    pub(crate) fn take_pragmas(&mut self) -> Vec<PragmaLine> {
        std::mem::take(&mut self.pragmas).into_values().collect()
    }

    /// Skips white space, comments and control lines: `#pragma` lines are
    /// recorded, the others (`#!`, `#line`, cpp's `# 1 "file"`) carry no
    /// meaning for D.
    pub(crate) fn skip_trivia(&mut self) -> Result<(), ParseError> {
        let bytes = self.bytes();
        while self.pos < bytes.len() {
            let b = bytes[self.pos];
            let next = self.byte_at(self.pos + 1);
            if is_space(b) {
                self.pos += 1;
            } else if b == b'\\' && next == Some(b'\n') {
                self.pos += 2;
            } else if b == b'/' && next == Some(b'*') {
                self.skip_block_comment()?;
            } else if b == b'/' && next == Some(b'/') {
                self.pos = self.line_end(self.pos);
            } else if b == b'#' && self.at_line_start(self.pos) {
                // dt_lex reads a control line to its newline.
                if self.line_end(self.pos) == bytes.len() {
                    return Err(ParseError::new(
                        self.pos..self.pos,
                        "D_SYNTAX",
                        "end-of-file encountered before end of control line",
                    ));
                }
                self.skip_control_line()?;
            } else {
                break;
            }
        }
        Ok(())
    }

    fn skip_block_comment(&mut self) -> Result<(), ParseError> {
        let bytes = self.bytes();
        let start = self.pos;
        let mut p = start + 2;
        loop {
            match (bytes.get(p), bytes.get(p + 1)) {
                // Where the lexer is when it meets the end of the file.
                (None, _) | (Some(_), None) => {
                    return Err(ParseError::new(
                        bytes.len()..bytes.len(),
                        "D_SYNTAX",
                        "end-of-file encountered before matching */",
                    ));
                }
                (Some(b'*'), Some(b'/')) => {
                    self.pos = p + 2;
                    return Ok(());
                }
                (Some(b'/'), Some(b'*')) => {
                    return Err(ParseError::new(p..p + 2, "D_SYNTAX", "/* encountered inside a comment"));
                }
                _ => p += 1,
            }
        }
    }

    /// Lexes a probe description if one starts here, otherwise an ordinary
    /// token (which the parser will then reject or use, e.g. `{`).
    pub(crate) fn next_probe_spec(&mut self) -> Result<Token, ParseError> {
        self.skip_trivia()?;
        let start = self.pos;
        match self.byte_at(start) {
            Some(b) if is_probe_start(b) => {
                let text = self.probe_word_at(start);
                self.pos = start + text.len();
                Ok(Token { kind: TokenKind::ProbeSpec(text.to_string()), span: start..self.pos })
            }
            _ => self.next_token(),
        }
    }

    /// Lexes the next token of clause bodies, predicates and declarations.
    pub(crate) fn next_token(&mut self) -> Result<Token, ParseError> {
        self.skip_trivia()?;
        let start = self.pos;
        let Some(b) = self.byte_at(start) else {
            return Ok(Token { kind: TokenKind::Eof, span: start..start });
        };
        let next = self.byte_at(start + 1);
        let kind = match b {
            _ if is_ident_start(b) || b == b'`' => self.lex_word(start)?,
            b'0'..=b'9' => self.lex_number(start)?,
            b'.' if next.is_some_and(|n| n.is_ascii_digit()) => self.lex_number(start)?,
            b'"' => TokenKind::Str(self.lex_quoted(start, b'"')?),
            b'\'' => self.lex_char_constant(start)?,
            b'$' => self.lex_macro(start)?,
            b'@' => {
                let mut end = start + 1;
                if self.byte_at(end).is_some_and(is_ident_start) {
                    while self.byte_at(end).is_some_and(is_ident_continue) {
                        end += 1;
                    }
                }
                self.pos = end;
                TokenKind::Aggregation(self.src[start + 1..end].to_string())
            }
            _ => self.lex_punct(start)?,
        };
        Ok(Token { kind, span: start..self.pos })
    }

    /// Identifiers, keywords and backquoted symbols (DTrace's RGX_IDENT:
    /// a backquote may appear anywhere in the word).
    fn lex_word(&mut self, start: usize) -> Result<TokenKind, ParseError> {
        let mut end = start;
        while self.byte_at(end).is_some_and(|b| is_ident_continue(b) || b == b'`') {
            end += 1;
        }
        self.pos = end;
        let word = &self.src[start..end];
        let Some((module, name)) = word.split_once('`') else {
            return Ok(match Keyword::from_word(word) {
                Some(keyword) => TokenKind::Keyword(keyword),
                None => TokenKind::Ident(word.to_string()),
            });
        };
        // A backquote alone is the empty symbol, which no lookup finds
        // (sizeof/err.D_IDENT_UNDEF.UnknownSymbol).
        if word == "`" {
            return Ok(TokenKind::Backquote { module: None, name: String::new() });
        }
        let name_ok = name.bytes().next().is_some_and(is_ident_start) && !name.contains('`');
        if !name_ok {
            return Err(syntax_error_near(start..end, word));
        }
        let module = (!module.is_empty()).then(|| module.to_string());
        Ok(TokenKind::Backquote { module, name: name.to_string() })
    }

    fn lex_number(&mut self, start: usize) -> Result<TokenKind, ParseError> {
        let bytes = self.bytes();
        let run = |mut p: usize, pred: fn(u8) -> bool| {
            while p < bytes.len() && pred(bytes[p]) {
                p += 1;
            }
            p
        };
        // `0x` without a hex digit is the constant 0 and then `x...`, as
        // DTrace's lexer (RGX_INT) reads it.
        let hex = bytes[start] == b'0'
            && matches!(self.byte_at(start + 1), Some(b'x' | b'X'))
            && self.byte_at(start + 2).is_some_and(|b| b.is_ascii_hexdigit());
        let (digits_start, radix) = if hex { (start + 2, 16) } else { (start, 10) };
        let is_digit: fn(u8) -> bool = if hex { |b| b.is_ascii_hexdigit() } else { |b| b.is_ascii_digit() };
        let digits_end = run(digits_start, is_digit);

        if !hex && self.float_follows(digits_end) {
            return self.lex_float(start, digits_end);
        }

        // The digits and a suffix of u, U, l and L, as DTrace's lexer takes
        // them (RGX_INT): letters after that start the next token, so
        // `int 0abc;` is a syntax error, not a bad constant.
        let end = run(digits_end, |b| matches!(b, b'u' | b'U' | b'l' | b'L'));
        self.pos = end;
        let text = &self.src[start..end];
        let suffix_text = &self.src[digits_end..end];
        let bad_digit =
            |c: char| ParseError::new(start..end, "D_INT_DIGIT", format!("constant {text} contains invalid digit {c}"));

        if hex && digits_end == digits_start {
            return Err(bad_digit(char::from(bytes[start + 1])));
        }
        let Some(suffix) = parse_int_suffix(suffix_text) else {
            let bad = suffix_text
                .chars()
                .find(|c| !"uUlL".contains(*c))
                .or_else(|| suffix_text.chars().last())
                .unwrap_or('?');
            return Err(bad_digit(bad));
        };
        let digits = &self.src[digits_start..digits_end];
        let octal = !hex && digits.len() > 1 && digits.starts_with('0');
        let radix = if octal { 8 } else { radix };
        if let Some(c) = digits.chars().find(|c| !c.is_digit(radix)) {
            return Err(bad_digit(c));
        }
        let value = digits
            .chars()
            .try_fold(0u64, |acc, c| {
                let digit = u64::from(c.to_digit(radix)?);
                acc.checked_mul(u64::from(radix))?.checked_add(digit)
            })
            .ok_or_else(|| {
                ParseError::new(start..end, "D_INT_OFLOW", format!("constant {text} results in integer overflow"))
            })?;
        Ok(TokenKind::Int { value, suffix, decimal: !hex && !octal })
    }

    /// After the integer digits ending at `p`: does a fraction or exponent follow?
    fn float_follows(&self, p: usize) -> bool {
        match self.byte_at(p) {
            // `1.` and `1.5` are floating constants, `1...` is not a thing in D.
            Some(b'.') => self.byte_at(p + 1) != Some(b'.'),
            Some(b'e' | b'E') => match self.byte_at(p + 1) {
                Some(b'+' | b'-') => self.byte_at(p + 2).is_some_and(|b| b.is_ascii_digit()),
                Some(b) => b.is_ascii_digit(),
                None => false,
            },
            _ => false,
        }
    }

    /// Floating constants are kept as written; D rejects them later.
    fn lex_float(&mut self, start: usize, mut p: usize) -> Result<TokenKind, ParseError> {
        let digits_from = |mut p: usize| {
            while self.byte_at(p).is_some_and(|b| b.is_ascii_digit()) {
                p += 1;
            }
            p
        };
        if self.byte_at(p) == Some(b'.') {
            p = digits_from(p + 1);
        }
        if matches!(self.byte_at(p), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.byte_at(p + 1), Some(b'+' | b'-')));
            if self.byte_at(p + 1 + sign).is_some_and(|b| b.is_ascii_digit()) {
                p = digits_from(p + 1 + sign);
            }
        }
        if matches!(self.byte_at(p), Some(b'f' | b'F' | b'l' | b'L')) {
            p += 1;
        }
        let mut end = p;
        while self.byte_at(end).is_some_and(is_ident_continue) {
            end += 1;
        }
        self.pos = end;
        let text = &self.src[start..end];
        if end != p {
            return Err(ParseError::new(
                start..end,
                "D_INT_DIGIT",
                format!("constant {text} contains invalid digit {}", char::from(self.bytes()[p])),
            ));
        }
        Ok(TokenKind::Float(text.to_string()))
    }

    /// A string literal or the body of a character constant, escapes decoded.
    fn lex_quoted(&mut self, start: usize, quote: u8) -> Result<Vec<u8>, ParseError> {
        let bytes = self.bytes();
        let what = if quote == b'"' { "string literal" } else { "character constant" };
        let newline_tag = if quote == b'"' { "D_STR_NL" } else { "D_CHR_NL" };
        let mut out = Vec::new();
        let mut p = start + 1;
        loop {
            match bytes.get(p).copied() {
                None => {
                    return Err(ParseError::new(
                        start..bytes.len(),
                        "D_SYNTAX",
                        format!("end-of-file encountered in {what}"),
                    ));
                }
                // On the line after it: the lexer has read the newline.
                Some(b'\n') => {
                    return Err(ParseError::new(p + 1..p + 1, newline_tag, format!("newline encountered in {what}")));
                }
                Some(b) if b == quote => {
                    self.pos = p + 1;
                    return Ok(out);
                }
                Some(b'\\') => match bytes.get(p + 1).copied() {
                    // Let the next turn report the newline or the end of input.
                    None | Some(b'\n') => p += 1,
                    Some(_) => p = decode_escape(bytes, p + 1, &mut out),
                },
                // A byte that was not UTF-8 in the source is itself again.
                Some(b) => {
                    let (len, byte) = super::raw::byte_at(bytes, p).unwrap_or((1, b));
                    out.push(byte);
                    p += len;
                }
            }
        }
    }

    fn lex_char_constant(&mut self, start: usize) -> Result<TokenKind, ParseError> {
        let chars = self.lex_quoted(start, b'\'')?;
        let span = start..self.pos;
        if chars.is_empty() {
            return Err(ParseError::new(span, "D_CHR_NULL", "empty character constant"));
        }
        if chars.len() > MAX_CHAR_CONSTANT_BYTES {
            return Err(ParseError::new(span, "D_CHR_OFLOW", "character constant is too long"));
        }
        // The first character ends up in the most significant used byte.
        let packed = chars.iter().fold(0u64, |acc, &c| (acc << 8) | u64::from(c));
        Ok(TokenKind::Char(packed as i64))
    }

    fn lex_macro(&mut self, start: usize) -> Result<TokenKind, ParseError> {
        let bytes = self.bytes();
        let as_string = self.byte_at(start + 1) == Some(b'$');
        let name_start = start + 1 + usize::from(as_string);
        let mut end = name_start;
        let numeric = self.byte_at(name_start).is_some_and(|b| b.is_ascii_digit());
        if numeric {
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        } else if self.byte_at(name_start).is_some_and(is_ident_start) {
            while end < bytes.len() && is_ident_continue(bytes[end]) {
                end += 1;
            }
        }
        self.pos = end;
        let text = &self.src[start..end];
        let name = &self.src[name_start..end];
        if name.is_empty() {
            self.pos = start + 1;
            return Err(syntax_error_near(start..start + 1, "$"));
        }
        if numeric {
            let index: u32 = name.parse().map_err(|_| {
                ParseError::new(start..end, "D_MACRO_UNDEF", format!("macro argument {text} is not defined"))
            })?;
            self.macro_args.insert(start, (index, as_string, end));
            return Ok(if as_string { TokenKind::MacroStr(index) } else { TokenKind::MacroArg(index) });
        }
        if !MACRO_VARIABLES.contains(&name) {
            return Err(ParseError::new(start..end, "D_MACRO_UNDEF", format!("macro variable {text} is not defined")));
        }
        if as_string {
            // The tree has no node for `$$target`-style string macro variables.
            return Err(syntax_error_near(start..end, text));
        }
        Ok(TokenKind::MacroVar(name.to_string()))
    }

    /// Skips the control line whose `#` is at the current position,
    /// recording it if it is a `#pragma`: its words run to the end of the
    /// line or to a comment. Of the other directives dt_pragma knows only
    /// line controls (`#line N`, cpp's `# N "file"`), `#ident` and
    /// `#error`; a C directive like `#define` is cpp's (dtrace -C), and
    /// without -C it is D_PRAGCTL_INVAL.
    fn skip_control_line(&mut self) -> Result<(), ParseError> {
        let start = self.pos;
        let line_end = self.line_end(start);
        let directive = self.directive_at(start);
        if directive != "pragma" {
            let line = &self.src[start + 1..line_end];
            let rest = line.trim_start();
            let span = start..line_end;
            match directive {
                "line" | "ident" => {}
                "error" => {
                    let words: Vec<&str> = rest["error".len()..].split_whitespace().collect();
                    return Err(ParseError::new(span, "D_PRAGERR", error_directive_message(&words)));
                }
                // A null directive, an interpreter line (dt_lex discards
                // `#!` lines), or a line control.
                "" if rest.is_empty() || line.starts_with('!') => {}
                _ if directive.starts_with(|c: char| c.is_ascii_digit()) => {}
                "" => return Err(ParseError::new(span, "D_PRAGCTL_INVAL", "invalid control directive")),
                _ => {
                    return Err(ParseError::new(
                        span,
                        "D_PRAGCTL_INVAL",
                        format!("invalid control directive: #{directive}"),
                    ))
                }
            }
            self.pos = line_end;
            return Ok(());
        }
        let line = &self.src[start..line_end];
        let comment = [line.find("//"), line.find("/*")].into_iter().flatten().min();
        let text_end = comment.map_or(line_end, |c| start + c);
        // Resume at the comment, if any, so that skip_trivia handles it.
        self.pos = text_end;
        let text = &self.src[start + 1..text_end];
        let words = text.split_whitespace().skip(1).map(str::to_string).collect(); // skip "pragma"
        let span = start..start + 1 + text.trim_end().len();
        self.pragmas.insert(start, PragmaLine { words, span });
        Ok(())
    }

    fn lex_punct(&mut self, start: usize) -> Result<TokenKind, ParseError> {
        let rest = &self.src[start..];
        // The first byte rules out most entries without a string compare.
        let first = rest.as_bytes().first().copied().unwrap_or(0);
        if let Some(&(text, punct)) =
            PUNCTS.iter().find(|(text, _)| text.as_bytes()[0] == first && rest.starts_with(text))
        {
            self.pos = start + text.len();
            return Ok(TokenKind::Punct(punct));
        }
        let c = rest.chars().next().unwrap_or('\0');
        let span = start..start + c.len_utf8();
        self.pos = span.end;
        if c.is_ascii_graphic() {
            Err(syntax_error_near(span, &c.to_string()))
        } else {
            Err(ParseError::new(span, "D_SYNTAX", format!("invalid character '\\x{:02x}'", rest.as_bytes()[0])))
        }
    }
}

pub(crate) fn syntax_error_near(span: Span, text: &str) -> ParseError {
    ParseError::new(span, "D_SYNTAX", format!("syntax error near \"{text}\""))
}

/// `u`, `l`, `ul`, `lu`, `ll`, `ull`, `llu` in any case; `None` if invalid.
fn parse_int_suffix(text: &str) -> Option<IntSuffix> {
    let lower = text.to_ascii_lowercase();
    let (unsigned, long) = match lower.as_str() {
        "" => (false, 0),
        "u" => (true, 0),
        "l" => (false, 1),
        "ul" | "lu" => (true, 1),
        "ll" => (false, 2),
        "ull" | "llu" => (true, 2),
        _ => return None,
    };
    Some(IntSuffix { unsigned, long })
}

/// Decodes the escape whose letter is at `p` (just after the backslash) into
/// `out`, returning where the escape ends. Follows DTrace's `stresc2chr`:
/// octal takes up to three digits, `\x` any number of hex digits (keeping
/// the low byte), and an unknown escape is kept as written: `\?` and `\'`
/// are unknown to it (`'\''` is the two-character constant 0x5c27).
fn decode_escape(bytes: &[u8], p: usize, out: &mut Vec<u8>) -> usize {
    let Some(&c) = bytes.get(p) else {
        return p;
    };
    let simple = match c {
        b'a' => Some(0x07),
        b'b' => Some(0x08),
        b'f' => Some(0x0c),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        b'v' => Some(0x0b),
        b'"' | b'\\' => Some(c),
        _ => None,
    };
    if let Some(byte) = simple {
        out.push(byte);
        return p + 1;
    }
    match c {
        b'0'..=b'7' => {
            let mut value: u32 = 0;
            let mut q = p;
            while q < p + 3 && q < bytes.len() && (b'0'..=b'7').contains(&bytes[q]) {
                value = value * 8 + u32::from(bytes[q] - b'0');
                q += 1;
            }
            out.push(value as u8); // C truncates `\777` to a byte too
            q
        }
        b'x' => {
            let mut value: u8 = 0;
            let mut q = p + 1;
            while let Some(digit) = bytes.get(q).and_then(|&b| char::from(b).to_digit(16)) {
                value = value.wrapping_mul(16).wrapping_add(digit as u8);
                q += 1;
            }
            out.push(value);
            q
        }
        // A quote after the backslash is kept with it, and does not end
        // the literal.
        b'\'' => {
            out.extend_from_slice(&[b'\\', c]);
            p + 1
        }
        _ => {
            // Keep the backslash; the character itself is copied by the caller.
            out.push(b'\\');
            p
        }
    }
}

/// `#error` and `#pragma D error`: the program's own error, its words each
/// followed by a space (dt_pragma_error).
pub(crate) fn error_directive_message<S: AsRef<str>>(words: &[S]) -> String {
    let words: String = words.iter().map(|w| format!("{} ", w.as_ref().trim_matches('"'))).collect();
    format!("#error: {words}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        let mut lexer = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let token = lexer.next_token().expect("lexes");
            if token.kind == TokenKind::Eof {
                return out;
            }
            out.push(token.kind);
        }
    }

    fn error(src: &str) -> ParseError {
        let mut lexer = Lexer::new(src);
        loop {
            match lexer.next_token() {
                Ok(Token { kind: TokenKind::Eof, .. }) => panic!("no error for {src:?}"),
                Ok(_) => {}
                Err(e) => return e,
            }
        }
    }

    fn int(value: u64, unsigned: bool, long: u8, decimal: bool) -> TokenKind {
        TokenKind::Int { value, suffix: IntSuffix { unsigned, long }, decimal }
    }

    #[test]
    fn integers() {
        assert_eq!(
            kinds("0 42 0x1F 017"),
            vec![int(0, false, 0, true), int(42, false, 0, true), int(31, false, 0, false), int(15, false, 0, false)]
        );
        assert_eq!(
            kinds("1u 2UL 3ll 4ULL 5lu 6LLU"),
            vec![
                int(1, true, 0, true),
                int(2, true, 1, true),
                int(3, false, 2, true),
                int(4, true, 2, true),
                int(5, true, 1, true),
                int(6, true, 2, true)
            ]
        );
        assert_eq!(
            kinds("18446744073709551615 0xffffffffffffffff"),
            vec![int(u64::MAX, false, 0, true), int(u64::MAX, false, 0, false)]
        );
    }

    #[test]
    fn integer_errors() {
        let e = error("0x1ffffffffffffffff");
        assert_eq!(e.message, "constant 0x1ffffffffffffffff results in integer overflow");
        assert_eq!(e.tag, "D_INT_OFLOW");
        assert_eq!(error("18446744073709551616").tag, "D_INT_OFLOW");
        assert_eq!(error("08").message, "constant 08 contains invalid digit 8");
        assert_eq!(error("1lul").tag, "D_INT_DIGIT");
        assert_eq!(error("09").message, "constant 09 contains invalid digit 9");
    }

    #[test]
    fn letters_after_a_constant_start_the_next_token() {
        assert_eq!(kinds("12abc"), vec![int(12, false, 0, true), TokenKind::Ident("abc".into())]);
        assert_eq!(kinds("0x"), vec![int(0, false, 0, true), TokenKind::Ident("x".into())]);
    }

    #[test]
    fn floats() {
        assert_eq!(
            kinds("1.5 .5 1e10 2.5e-3f 3."),
            vec![
                TokenKind::Float("1.5".into()),
                TokenKind::Float(".5".into()),
                TokenKind::Float("1e10".into()),
                TokenKind::Float("2.5e-3f".into()),
                TokenKind::Float("3.".into()),
            ]
        );
    }

    #[test]
    fn characters() {
        assert_eq!(
            kinds(r"'a' '\n' '\0' '\x41' '\\' '\'' 'ab' '\101'"),
            vec![
                TokenKind::Char(97),
                TokenKind::Char(10),
                TokenKind::Char(0),
                TokenKind::Char(0x41),
                TokenKind::Char(92),
                TokenKind::Char(0x5c27),
                TokenKind::Char(0x6162),
                TokenKind::Char(65),
            ]
        );
        assert_eq!(error("''").message, "empty character constant");
        assert_eq!(error("'abcdefghi'").message, "character constant is too long");
        assert_eq!(error("'a\n'").message, "newline encountered in character constant");
        assert_eq!(error("'a").message, "end-of-file encountered in character constant");
    }

    #[test]
    fn strings() {
        assert_eq!(kinds(r#""a\n\t\"\\\0\x41\101\q""#), vec![TokenKind::Str(b"a\n\t\"\\\0AA\\q".to_vec())]);
        assert_eq!(kinds(r#""""#), vec![TokenKind::Str(vec![])]);
        let e = error("x = \"abc\n\";");
        assert_eq!((e.message.as_str(), e.tag), ("newline encountered in string literal", "D_STR_NL"));
        // After the newline: DTrace's lexer has read it (lexer/err.D_STR_NL.string).
        assert_eq!(e.span.start, 9);
        assert_eq!(error("\"abc").message, "end-of-file encountered in string literal");
        assert_eq!(error("\"abc\\").message, "end-of-file encountered in string literal");
    }

    #[test]
    fn words() {
        assert_eq!(
            kinds("self foo string `jiffies vmlinux`pid_t"),
            vec![
                TokenKind::Keyword(Keyword::SelfKw),
                TokenKind::Ident("foo".into()),
                TokenKind::Keyword(Keyword::String),
                TokenKind::Backquote { module: None, name: "jiffies".into() },
                TokenKind::Backquote { module: Some("vmlinux".into()), name: "pid_t".into() },
            ]
        );
        assert_eq!(error("a`").message, "syntax error near \"a`\"");
    }

    #[test]
    fn macros_and_aggregations() {
        assert_eq!(
            kinds("$1 $$2 $target $pid @ @count"),
            vec![
                TokenKind::MacroArg(1),
                TokenKind::MacroStr(2),
                TokenKind::MacroVar("target".into()),
                TokenKind::MacroVar("pid".into()),
                TokenKind::Aggregation(String::new()),
                TokenKind::Aggregation("count".into()),
            ]
        );
        let e = error("$foo");
        assert_eq!((e.message.as_str(), e.tag), ("macro variable $foo is not defined", "D_MACRO_UNDEF"));
        assert_eq!(error("$ x").message, "syntax error near \"$\"");
    }

    #[test]
    fn punctuators_take_the_longest_spelling() {
        use Punct::*;
        let expect: Vec<TokenKind> = [ShlAssign, Shr, Arrow, MinusMinus, Minus, XorXor, Caret, Ellipsis, Dot]
            .into_iter()
            .map(TokenKind::Punct)
            .collect();
        assert_eq!(kinds("<<= >> -> -- - ^^ ^ ... ."), expect);
    }

    #[test]
    fn comments_and_control_lines() {
        let src = "#!/usr/sbin/dtrace -qs\n# 1 \"x.d\"\n/* c */ a // d\n#line 3\n  #pragma D option quiet /* q */\nb";
        assert_eq!(kinds(src), vec![TokenKind::Ident("a".into()), TokenKind::Ident("b".into())]);
        let mut lexer = Lexer::new(src);
        while lexer.next_token().expect("lexes").kind != TokenKind::Eof {}
        lexer.seek(0); // re-lexing must not report the pragma twice
        while lexer.next_token().expect("lexes").kind != TokenKind::Eof {}
        let pragmas = lexer.take_pragmas();
        assert_eq!(pragmas.len(), 1);
        assert_eq!(pragmas[0].words, ["D", "option", "quiet"]);
        assert_eq!(&src[pragmas[0].span.clone()], "#pragma D option quiet");
        let e = error("a /* never closed\n");
        assert_eq!(e.message, "end-of-file encountered before matching */");
        // At the end of the file, where the lexer is (lexer/err.eof-in-comment).
        assert_eq!(e.span.start, 18);
        assert_eq!(error("x;\n#pragma").message, "end-of-file encountered before end of control line");
        assert_eq!(error("/* /* */").message, "/* encountered inside a comment");
        assert_eq!(error("a # b").message, "syntax error near \"#\"");
    }

    #[test]
    fn bad_characters() {
        assert_eq!(error("\u{1}").message, "invalid character '\\x01'");
        assert_eq!(error("é").message, "invalid character '\\xc3'");
        assert_eq!(error("a\\b").message, "syntax error near \"\\\"");
    }

    #[test]
    fn probe_specs() {
        let mut lexer = Lexer::new("  syscall::[rw]*:entry, pid$target:libc.so.6:str*:entry/x/");
        let first = lexer.next_probe_spec().expect("spec");
        assert_eq!(first.kind, TokenKind::ProbeSpec("syscall::[rw]*:entry".into()));
        assert_eq!(first.span, 2..22);
        assert_eq!(lexer.next_token().expect("comma").kind, TokenKind::Punct(Punct::Comma));
        assert_eq!(
            lexer.next_probe_spec().expect("spec").kind,
            TokenKind::ProbeSpec("pid$target:libc.so.6:str*:entry".into())
        );
        assert_eq!(lexer.next_token().expect("slash").kind, TokenKind::Punct(Punct::Slash));
    }

    #[test]
    fn predicate_slash_lookahead() {
        let lexer = Lexer::new("/x/ {} /x / 2/\n;");
        assert!(lexer.slash_ends_predicate(3));
        assert!(!lexer.slash_ends_predicate(11));
        assert!(lexer.slash_ends_predicate(14));
    }
}
