//! The D parser: builds the [`ast`](super::ast) tree from the lexer's tokens.
//!
//! It owns the grammar of DTrace's `dt_grammar.y`: file-scope items (clauses,
//! declarations, `inline`, `translator`, pragmas), statements, C declarations
//! with their declarators, type names, and expressions with C's precedence
//! plus D's `^^`. It also owns the decisions the C grammar leaves to context:
//! whether a file-scope item is a clause or a declaration, whether an
//! identifier names a type (through the caller's `is_type` and the script's
//! own typedefs), and whether a `/` ends a predicate. Expressions are parsed
//! by recursive descent with an explicit operator stack for binary operators;
//! recursion depth is bounded so that hostile input yields an error instead of
//! a stack overflow.

use std::collections::{HashSet, VecDeque};

use super::ast::*;
use super::lexer::{is_probe_start, syntax_error_near, Keyword, Lexer, Punct, Token, TokenKind};
use super::ParseError;

/// Bound on nested parse calls plus operator-chain lengths, which is roughly
/// the depth of the tree built: far beyond any real script, small enough for
/// the recursive walks later passes (and `Drop`) make over the tree.
const MAX_NESTING: usize = 1000;

/// Stack the parser may use below its entry, whatever the build profile:
/// unoptimized frames are several times larger, so counting calls alone
/// cannot keep the parser inside a 2 MiB thread stack.
const STACK_BUDGET: usize = 1 << 20;

/// Approximate current stack address, to measure the stack in use.
fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// What a declarator must look like where it is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeclaratorKind {
    /// Declarations: a name is required.
    Named,
    /// Type names in casts, `sizeof`, `xlate`: no name allowed.
    Abstract,
    /// Function parameters: the name is optional.
    Either,
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    /// Tokens lexed ahead in ordinary mode; dropped and re-lexed when the
    /// parser switches to probe-description mode.
    lookahead: VecDeque<Token>,
    is_type: &'a dyn Fn(&str) -> bool,
    script_typedefs: HashSet<String>,
    /// End of the last token consumed, for node spans.
    prev_end: usize,
    nesting: usize,
    /// [`stack_position`] when parsing started.
    stack_base: usize,
    /// Inside `/ predicate /`, where a `/` followed by `{`, `;`, `/` or the
    /// end of input closes the predicate instead of dividing.
    in_predicate: bool,
    /// Where the predicate being parsed begins (after its `/`).
    predicate_start: Option<usize>,
    /// `Program::reduced_at`.
    reduced_at: Vec<(Span, usize)>,
    /// The source is a script file (-s), where a probe description needs a
    /// predicate or actions after it; `dtrace -n BEGIN` need not.
    pub(crate) script_file: bool,
    /// The pspec option: see `syntax::parse_script`.
    pub(crate) pspec: bool,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str, is_type: &'a dyn Fn(&str) -> bool) -> Self {
        Parser {
            src,
            lexer: Lexer::new(src),
            lookahead: VecDeque::new(),
            is_type,
            script_typedefs: HashSet::new(),
            prev_end: 0,
            nesting: 0,
            stack_base: stack_position(),
            in_predicate: false,
            predicate_start: None,
            reduced_at: Vec::new(),
            script_file: false,
            pspec: false,
        }
    }

    // ----- token plumbing -------------------------------------------------

    fn peek_nth(&mut self, n: usize) -> Result<&Token, ParseError> {
        while self.lookahead.len() <= n {
            let token = self.lexer.next_token()?;
            self.lookahead.push_back(token);
        }
        Ok(&self.lookahead[n])
    }

    fn peek(&mut self) -> Result<&Token, ParseError> {
        self.peek_nth(0)
    }

    fn peek_punct(&mut self) -> Result<Option<Punct>, ParseError> {
        Ok(match self.peek()?.kind {
            TokenKind::Punct(p) => Some(p),
            _ => None,
        })
    }

    fn peek_keyword(&mut self) -> Result<Option<Keyword>, ParseError> {
        Ok(match self.peek()?.kind {
            TokenKind::Keyword(k) => Some(k),
            _ => None,
        })
    }

    fn peek_start(&mut self) -> Result<usize, ParseError> {
        Ok(self.peek()?.span.start)
    }

    fn bump(&mut self) -> Result<Token, ParseError> {
        let token = match self.lookahead.pop_front() {
            Some(token) => token,
            None => self.lexer.next_token()?,
        };
        self.prev_end = token.span.end;
        Ok(token)
    }

    fn eat(&mut self, punct: Punct) -> Result<bool, ParseError> {
        if self.peek_punct()? == Some(punct) {
            self.bump()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn expect(&mut self, punct: Punct) -> Result<Token, ParseError> {
        if self.peek_punct()? == Some(punct) {
            return self.bump();
        }
        Err(self.unexpected())
    }

    fn expect_ident(&mut self) -> Result<(String, Span), ParseError> {
        if let TokenKind::Ident(_) = self.peek()?.kind {
            let token = self.bump()?;
            if let TokenKind::Ident(name) = token.kind {
                return Ok((name, token.span));
            }
        }
        Err(self.unexpected())
    }

    /// After `.` and `->` any word is a member name, keywords included, as in
    /// DTrace's SIDENT lexer state.
    fn expect_member_name(&mut self) -> Result<String, ParseError> {
        match &self.peek()?.kind {
            TokenKind::Ident(name) => {
                let name = name.clone();
                self.bump()?;
                Ok(name)
            }
            TokenKind::Keyword(keyword) => {
                let name = keyword.as_str().to_string();
                self.bump()?;
                Ok(name)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// Drops the ordinary-mode lookahead so that the lexer resumes at the
    /// first token not yet consumed.
    fn rewind_lookahead(&mut self) {
        if let Some(first) = self.lookahead.front() {
            self.lexer.seek(first.span.start);
            self.lookahead.clear();
        }
    }

    fn error_at(&self, token: &Token) -> ParseError {
        if let Some(error) = self.unbalanced_at(token) {
            return error;
        }
        match token.kind {
            TokenKind::Eof => ParseError::new(token.span.clone(), "D_SYNTAX", "syntax error near end of input"),
            // DTrace's lexer looks ahead after an identifier to tell names
            // from types and puts the characters back, which leaves the
            // rest of the line in the token's text: that is what its
            // message shows (typedef/err.D_SYNTAX.BadExistingTypedef:
            // near "new_int;", offsetof/err.D_SYNTAX.badmemb).
            TokenKind::Ident(_) if !self.token_names_type(token) => {
                let line_end = self.src[token.span.start..].find('\n').map_or(self.src.len(), |n| token.span.start + n);
                let text = self.src.get(token.span.start..line_end).unwrap_or_default().trim_end();
                syntax_error_near(token.span.clone(), text)
            }
            _ => {
                let text = self.src.get(token.span.clone()).unwrap_or_default();
                syntax_error_near(token.span.clone(), text)
            }
        }
    }

    /// DTrace's lexer counts parentheses and brackets: a closing one with
    /// none open is "extra ) in input stream", and a predicate's closing
    /// `/` met with one still open says which closing one it expected, on
    /// the line of the token after the `/` (its lookahead).
    fn unbalanced_at(&self, token: &Token) -> Option<ParseError> {
        let balance = |from: usize, to: usize| -> (i32, i32) {
            let mut lexer = Lexer::new(self.src);
            lexer.seek(from);
            let (mut parens, mut brackets) = (0, 0);
            while let Ok(t) = lexer.next_token() {
                if t.span.start >= to || t.kind == TokenKind::Eof {
                    break;
                }
                match t.kind {
                    TokenKind::Punct(Punct::LParen) => parens += 1,
                    TokenKind::Punct(Punct::RParen) => parens -= 1,
                    TokenKind::Punct(Punct::LBracket) => brackets += 1,
                    TokenKind::Punct(Punct::RBracket) => brackets -= 1,
                    _ => {}
                }
            }
            (parens, brackets)
        };
        match token.kind {
            TokenKind::Punct(closer @ (Punct::RParen | Punct::RBracket)) => {
                let (p, b) = balance(0, token.span.start);
                let (open, text) = if closer == Punct::RParen { (p, ")") } else { (b, "]") };
                (open <= 0)
                    .then(|| ParseError::new(token.span.clone(), "D_SYNTAX", format!("extra {text} in input stream")))
            }
            TokenKind::Punct(Punct::Slash) if self.in_predicate && self.lexer.slash_ends_predicate(token.span.end) => {
                let (p, b) = balance(self.predicate_start?, token.span.start);
                let text = if p > 0 {
                    ")"
                } else if b > 0 {
                    "]"
                } else {
                    return None;
                };
                let at = self.lexer.next_nonblank(token.span.end);
                Some(ParseError::new(at..at, "D_SYNTAX", format!("closing {text} expected in predicate before /")))
            }
            _ => None,
        }
    }

    /// A syntax error at the next token (or the lexical error met reading it).
    fn unexpected(&mut self) -> ParseError {
        match self.peek() {
            Ok(token) => {
                let token = token.clone();
                self.error_at(&token)
            }
            Err(e) => e,
        }
    }

    fn span_from(&self, start: usize) -> Span {
        start..self.prev_end.max(start)
    }

    fn too_complex(&mut self) -> ParseError {
        match self.peek() {
            Ok(token) => ParseError::new(token.span.clone(), "D_SYNTAX", "expression is too complex"),
            Err(e) => e,
        }
    }

    /// Runs a recursive parse one level deeper, refusing to go past the
    /// nesting bound or the stack budget.
    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> Result<T, ParseError>) -> Result<T, ParseError> {
        if self.nesting >= MAX_NESTING || self.stack_base.abs_diff(stack_position()) > STACK_BUDGET {
            return Err(self.too_complex());
        }
        self.nesting += 1;
        let result = parse(self);
        self.nesting -= 1;
        result
    }

    /// Runs a loop that builds a left-deep chain (`a + b + c`, `a[1][2]`,
    /// `a, b, c`); the loop calls [`Parser::deepen`] per link so that the
    /// chain counts towards the nesting bound.
    fn chained<T>(&mut self, parse: impl FnOnce(&mut Self) -> Result<T, ParseError>) -> Result<T, ParseError> {
        let outer = self.nesting;
        let result = parse(self);
        self.nesting = outer;
        result
    }

    fn deepen(&mut self) -> Result<(), ParseError> {
        if self.nesting >= MAX_NESTING {
            return Err(self.too_complex());
        }
        self.nesting += 1;
        Ok(())
    }

    // ----- type names -----------------------------------------------------

    /// Whether `name` (possibly `` module`name ``) is a typedef name.
    fn names_type(&self, name: &str) -> bool {
        let known = |n: &str| self.script_typedefs.contains(n) || (self.is_type)(n);
        known(name) || name.split_once('`').is_some_and(|(_, bare)| known(bare))
    }

    fn token_names_type(&self, token: &Token) -> bool {
        match &token.kind {
            TokenKind::Ident(name) => self.names_type(name),
            TokenKind::Backquote { .. } => self.names_type(self.src.get(token.span.clone()).unwrap_or_default()),
            _ => false,
        }
    }

    /// Whether `token` can begin a type name (specifiers and qualifiers).
    fn token_starts_type(&self, token: &Token) -> bool {
        use Keyword::*;
        match token.kind {
            TokenKind::Keyword(k) => matches!(
                k,
                Char | Const
                    | Double
                    | Enum
                    | Float
                    | Int
                    | Long
                    | Restrict
                    | Short
                    | Signed
                    | String
                    | Struct
                    | Union
                    | Unsigned
                    | Void
                    | Volatile
            ),
            _ => self.token_names_type(token),
        }
    }

    fn nth_starts_type(&mut self, n: usize) -> Result<bool, ParseError> {
        let token = self.peek_nth(n)?.clone();
        Ok(self.token_starts_type(&token))
    }

    // ----- file scope -----------------------------------------------------

    pub(crate) fn parse_program(mut self) -> Result<Program, ParseError> {
        self.stack_base = stack_position();
        let mut items = Vec::new();
        loop {
            self.rewind_lookahead();
            self.lexer.skip_trivia()?;
            let start = self.lexer.pos();
            match self.lexer.byte_at(start) {
                None => break,
                Some(_) if self.starts_clause(start) => items.push(Item::Clause(self.parse_clause()?)),
                Some(_) => items.push(self.parse_external_declaration()?),
            }
        }
        // `#pragma` lines may sit anywhere; each is listed after the item it
        // appears in (or before the next one), in source order.
        let pragmas = self.lexer.take_pragmas();
        items.extend(pragmas.into_iter().map(|p| Item::Pragma { words: p.words, span: p.span }));
        items.sort_by_key(item_start);
        let macro_args = self.lexer.take_macro_args();
        Ok(Program { items, macro_args, reduced_at: std::mem::take(&mut self.reduced_at) })
    }

    /// Decides, from the raw text at `pos`, whether a file-scope item is a
    /// probe clause. Like DTrace: a description containing `:-.?!`, or named
    /// BEGIN/END/ERROR, is a clause; otherwise the word before any `*` is
    /// looked up, and a declaration keyword or type name starts a declaration
    /// (`int*x;` declares, `syscall* {}` is a clause). Unlike DTrace, a
    /// `` module`type `` word may also start a declaration.
    fn starts_clause(&self, pos: usize) -> bool {
        let Some(first) = self.lexer.byte_at(pos) else {
            return false;
        };
        if !is_probe_start(first) {
            return false;
        }
        if !(first.is_ascii_alphabetic() || first == b'_') {
            return true;
        }
        // pspec: what could be a description is one (`int*x` names probes).
        if self.pspec || self.lexer.has_pragma(&["D", "option", "pspec"]) {
            return true;
        }
        let word = self.lexer.probe_word_at(pos);
        if word.contains([':', '-', '.', '?', '!']) || matches!(word, "BEGIN" | "END" | "ERROR") {
            return true;
        }
        let name_len = word.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '`')).unwrap_or(word.len());
        let name = &word[..name_len];
        match Keyword::from_word(name) {
            Some(keyword) => !starts_external_declaration(keyword),
            None => !self.names_type(name),
        }
    }

    fn parse_external_declaration(&mut self) -> Result<Item, ParseError> {
        match self.peek_keyword()? {
            Some(Keyword::Inline) => Ok(Item::Inline(self.parse_inline()?)),
            Some(Keyword::Translator) => Ok(Item::Translator(self.parse_translator()?)),
            Some(Keyword::Provider) => Ok(Item::Provider(self.parse_provider()?)),
            _ => Ok(Item::Decl(self.parse_declaration()?)),
        }
    }

    fn parse_clause(&mut self) -> Result<Clause, ParseError> {
        let mut probes = Vec::new();
        loop {
            self.rewind_lookahead();
            let token = self.lexer.next_probe_spec()?;
            let TokenKind::ProbeSpec(text) = token.kind else {
                return Err(self.error_at(&token));
            };
            self.prev_end = token.span.end;
            probes.push(ProbeSpec { text, span: token.span });
            if !self.eat(Punct::Comma)? {
                break;
            }
        }
        let start = probes.first().map_or(0, |p| p.span.start);

        let mut predicate = None;
        if self.eat(Punct::Slash)? {
            self.in_predicate = true;
            self.predicate_start = Some(self.prev_end);
            let condition = self.parse_expr();
            self.in_predicate = false;
            let condition = condition?;
            let slash = self.peek()?.span.clone();
            self.expect(Punct::Slash)?;
            let next = self.lexer.next_nonblank(slash.end);
            self.note_right_edge(&condition, next);
            predicate = Some(condition);
        }

        let body = if self.eat(Punct::LBrace)? {
            self.parse_block_body()?
        } else if let Some(condition) = &predicate {
            return Err(ParseError::new(
                condition.span.clone(),
                "D_SYNTAX",
                "expected actions { } following probe description and predicate",
            ));
        } else if self.script_file {
            // The D grammar's probe_definition: only a description given on
            // the command line may stand alone.
            let span = probes.first().map_or(0..0, |p| p.span.clone());
            return Err(ParseError::new(
                span,
                "D_SYNTAX",
                "expected predicate and/or actions following probe description",
            ));
        } else {
            // `dtrace -n BEGIN`: a bare description takes the default action.
            Vec::new()
        };
        Ok(Clause { probes, predicate, body, span: self.span_from(start) })
    }

    /// `inline type name = expr;`, or with parameters (illumos' tcp.d):
    /// `inline string name[int32_t state] = expr;`, used as `name[e]`.
    fn parse_inline(&mut self) -> Result<InlineDef, ParseError> {
        let start = self.bump()?.span.start;
        let type_start = self.peek_start()?;
        let (_, spec) = self.parse_decl_specifiers(false)?;
        // A result that is a pointer: `inline struct file *getf[int fd]`.
        let mut stars = 0;
        while matches!(self.peek_nth(stars)?.kind, TokenKind::Punct(Punct::Star)) {
            stars += 1;
        }
        let has_params = matches!(self.peek_nth(stars)?.kind, TokenKind::Ident(_))
            && matches!(self.peek_nth(stars + 1)?.kind, TokenKind::Punct(Punct::LBracket))
            && self.nth_starts_type(stars + 2)?;
        let (name, ty, params) = if has_params {
            let mut ops = Vec::new();
            while self.eat(Punct::Star)? {
                ops.push(DeclOp::Pointer);
            }
            let TokenKind::Ident(name) = self.bump()?.kind else { unreachable!("peeked an identifier") };
            let ty = TypeName { spec, ops, span: type_start..self.prev_end };
            self.expect(Punct::LBracket)?;
            let mut params = Vec::new();
            loop {
                let param_start = self.peek_start()?;
                let (_, param_spec) = self.parse_decl_specifiers(false)?;
                let declarator = self.parse_declarator(DeclaratorKind::Named)?;
                let Some(param) = declarator.name else {
                    return Err(self.unexpected());
                };
                let param_ty = TypeName { spec: param_spec, ops: declarator.ops, span: param_start..self.prev_end };
                params.push((param_ty, param));
                if !self.eat(Punct::Comma)? {
                    break;
                }
            }
            self.expect(Punct::RBracket)?;
            (name, ty, params)
        } else {
            let declarator = self.parse_declarator(DeclaratorKind::Named)?;
            let Some(name) = declarator.name else {
                return Err(self.unexpected());
            };
            (name, TypeName { spec, ops: declarator.ops, span: type_start..declarator.span.end }, Vec::new())
        };
        self.expect(Punct::Assign)?;
        let value = self.parse_assign()?;
        self.expect(Punct::Semi)?;
        Ok(InlineDef { ty, name, params, value, span: self.span_from(start) })
    }

    /// `translator out < in_type name > { member = expr; ... };`
    fn parse_translator(&mut self) -> Result<TranslatorDef, ParseError> {
        let start = self.bump()?.span.start;
        let output = self.parse_type_name()?;
        self.expect(Punct::Lt)?;
        let input_start = self.peek_start()?;
        let (_, input_spec) = self.parse_decl_specifiers(false)?;
        let declarator = self.parse_declarator(DeclaratorKind::Named)?;
        let Some(input_name) = declarator.name else {
            return Err(self.unexpected());
        };
        let input = TypeName { spec: input_spec, ops: declarator.ops, span: input_start..declarator.span.end };
        self.expect(Punct::Gt)?;
        // DTrace's lexer is in a declaration here: an identifier where the
        // `{` belongs is shown alone, without the rest of its line.
        if self.peek_punct()? != Some(Punct::LBrace) {
            let token = self.peek()?.clone();
            let text = self.src.get(token.span.clone()).unwrap_or_default();
            return Err(syntax_error_near(token.span.clone(), text));
        }
        self.expect(Punct::LBrace)?;
        let mut members = Vec::new();
        while !self.eat(Punct::RBrace)? {
            let (name, name_span) = self.expect_ident()?;
            self.expect(Punct::Assign)?;
            let value = self.parse_assign()?;
            self.expect(Punct::Semi)?;
            members.push((name, value, self.span_from(name_span.start)));
        }
        self.expect(Punct::Semi)?;
        Ok(TranslatorDef { output, input, input_name, members, span: self.span_from(start) })
    }

    /// `provider name { probe name(types) [: (types)]; ... };`
    fn parse_provider(&mut self) -> Result<ProviderDef, ParseError> {
        let start = self.bump()?.span.start;
        let (name, _) = self.expect_ident()?;
        self.expect(Punct::LBrace)?;
        let mut probes = Vec::new();
        while !self.eat(Punct::RBrace)? {
            let probe_start = self.peek_start()?;
            if self.peek_keyword()? != Some(Keyword::Probe) {
                return Err(self.unexpected());
            }
            self.bump()?;
            let (name, _) = self.expect_ident()?;
            self.expect(Punct::LParen)?;
            let (args, arg_names) = without_void(self.parse_named_parameters()?).into_iter().unzip();
            let (translated, translated_names) = if self.eat(Punct::Colon)? {
                self.expect(Punct::LParen)?;
                let (types, names) = without_void(self.parse_named_parameters()?).into_iter().unzip();
                (Some(types), names)
            } else {
                (None, Vec::new())
            };
            self.expect(Punct::Semi)?;
            let span = self.span_from(probe_start);
            probes.push(ProbeDecl { name, args, translated, arg_names, translated_names, span });
        }
        self.expect(Punct::Semi)?;
        Ok(ProviderDef { name, probes, span: self.span_from(start) })
    }

    // ----- declarations ---------------------------------------------------

    /// `specifiers [declarator, ...];`
    fn parse_declaration(&mut self) -> Result<Decl, ParseError> {
        let start = self.peek_start()?;
        if self.c_inline_function()? {
            return self.skip_c_inline_function(start);
        }
        let (class, spec) = self.parse_decl_specifiers(true)?;
        let mut declarators = Vec::new();
        if !self.eat(Punct::Semi)? {
            loop {
                declarators.push(self.parse_declarator(DeclaratorKind::Named)?);
                if !self.eat(Punct::Comma)? {
                    break;
                }
            }
            self.expect(Punct::Semi)?;
        }
        if class == Some(StorageClass::Typedef) {
            self.script_typedefs.extend(declarators.iter().filter_map(|d| d.name.clone()));
        }
        Ok(Decl { class, spec, declarators, span: self.span_from(start) })
    }

    /// `static inline type name(params) { ... }`: a C function that a
    /// system header included with -C defines (glibc's <endian.h> has
    /// __bswap_16). D has no functions and C code has no place in a script,
    /// so only this form, which headers use, is recognized.
    fn c_inline_function(&mut self) -> Result<bool, ParseError> {
        Ok(matches!(self.peek()?.kind, TokenKind::Keyword(Keyword::Static))
            && matches!(self.peek_nth(1)?.kind, TokenKind::Keyword(Keyword::Inline)))
    }

    /// Reads past a C inline function (its prototype, then its body as
    /// balanced braces) and declares nothing.
    fn skip_c_inline_function(&mut self, start: usize) -> Result<Decl, ParseError> {
        self.bump()?;
        self.bump()?;
        let (_, spec) = self.parse_decl_specifiers(false)?;
        let declarator = self.parse_declarator(DeclaratorKind::Named)?;
        if !matches!(declarator.ops.last(), Some(DeclOp::Function(_))) {
            return Err(self.unexpected());
        }
        self.expect(Punct::LBrace)?;
        let mut depth = 1;
        while depth > 0 {
            let token = self.bump()?;
            match token.kind {
                TokenKind::Punct(Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RBrace) => depth -= 1,
                TokenKind::Eof => return Err(self.error_at(&token)),
                _ => {}
            }
        }
        Ok(Decl { class: None, spec, declarators: Vec::new(), span: self.span_from(start) })
    }

    /// Storage class (if allowed), qualifiers and type specifiers, in any
    /// order, as C permits (`unsigned long long`, `const char`, `self int`).
    fn parse_decl_specifiers(&mut self, allow_storage: bool) -> Result<(Option<StorageClass>, TypeSpec), ParseError> {
        let mut class = None;
        let mut qualifiers = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut named: Option<String> = None;
        let mut tagged: Option<TypeSpec> = None;
        loop {
            let token = self.peek()?.clone();
            let nothing_yet = words.is_empty() && named.is_none() && tagged.is_none();
            match token.kind {
                TokenKind::Keyword(keyword) => {
                    use Keyword::*;
                    if let Some(storage) = storage_class(keyword) {
                        if allow_storage && class.is_some() {
                            return Err(ParseError::new(
                                token.span.clone(),
                                "D_DECL_CLASS",
                                "only one storage class allowed in a declaration",
                            ));
                        }
                        if !allow_storage {
                            return Err(self.error_at(&token));
                        }
                        class = Some(storage);
                        self.bump()?;
                        continue;
                    }
                    match keyword {
                        Const | Volatile | Restrict => {
                            qualifiers.push(keyword.as_str().to_string());
                            self.bump()?;
                        }
                        Void | Char | Short | Int | Long | Float | Double | Signed | Unsigned => {
                            if named.is_some() || tagged.is_some() {
                                return Err(self.error_at(&token));
                            }
                            words.push(keyword.as_str().to_string());
                            self.bump()?;
                        }
                        String => {
                            if !nothing_yet {
                                return Err(self.error_at(&token));
                            }
                            named = Some("string".to_string());
                            self.bump()?;
                        }
                        Struct | Union | Enum => {
                            // `unsigned struct s`, `long struct s`: the
                            // attributes need an integer (dt_decl_check).
                            let attribute = |w: &[&str]| words.iter().any(|x| w.contains(&x.as_str()));
                            if named.is_none() && tagged.is_none() && attribute(&["signed", "unsigned"]) {
                                return Err(ParseError::new(
                                    token.span.clone(),
                                    "D_DECL_SIGNINT",
                                    "invalid type declaration: signed and unsigned may only be used with integer type",
                                ));
                            }
                            if named.is_none() && tagged.is_none() && attribute(&["long"]) {
                                return Err(ParseError::new(
                                    token.span.clone(),
                                    "D_DECL_LONGINT",
                                    "invalid type declaration: long and long long may only be used with integer or \
                                     floating-point type",
                                ));
                            }
                            // `struct a { ... } struct b { ... };`: a missing
                            // `;` makes one declaration of two types.
                            if !nothing_yet {
                                return Err(ParseError::new(
                                    token.span.clone(),
                                    "D_DECL_COMBO",
                                    "invalid type combination",
                                ));
                            }
                            tagged = Some(self.nested(Self::parse_tagged_type)?);
                        }
                        _ => break,
                    }
                }
                TokenKind::Ident(_) | TokenKind::Backquote { .. } if nothing_yet && self.token_names_type(&token) => {
                    let text = self.src.get(token.span.clone()).unwrap_or_default();
                    named = Some(text.to_string());
                    self.bump()?;
                }
                _ => break,
            }
        }
        let spec = match (tagged, named) {
            (Some(tagged), _) => tagged,
            (None, Some(name)) => TypeSpec::Named { name, qualifiers },
            (None, None) if !words.is_empty() => TypeSpec::Builtin { words, qualifiers },
            // `self x;`: a storage class alone declares an int, as in C.
            (None, None) if class.is_some() => TypeSpec::Builtin { words: vec!["int".to_string()], qualifiers },
            (None, None) => return Err(self.unexpected()),
        };
        Ok((class, spec))
    }

    /// `struct|union [name] [{ members }]` or `enum [name] [{ A, B = 1 }]`.
    fn parse_tagged_type(&mut self) -> Result<TypeSpec, ParseError> {
        let keyword = self.peek_keyword()?;
        self.bump()?;
        let scoped = matches!(self.peek()?.kind, TokenKind::Backquote { .. });
        let name = match self.peek()?.kind {
            TokenKind::Ident(_) | TokenKind::Backquote { .. } => {
                let token = self.bump()?;
                Some(self.src.get(token.span).unwrap_or_default().to_string())
            }
            _ => None,
        };
        // A type in another module's scope (`struct foo`bar`) may be named,
        // never defined here.
        if scoped && self.peek_punct()? == Some(Punct::LBrace) {
            let at_brace = self.unexpected();
            self.bump()?;
            // An empty body is the grammar's error first, as in DTrace.
            return Err(if self.peek_punct()? == Some(Punct::RBrace) { self.unexpected() } else { at_brace });
        }
        let has_body = self.eat(Punct::LBrace)?;
        if name.is_none() && !has_body {
            return Err(self.unexpected());
        }
        // C's grammar (and D's) wants at least one member or enumerator.
        if has_body && self.peek_punct()? == Some(Punct::RBrace) {
            return Err(self.unexpected());
        }
        if keyword == Some(Keyword::Enum) {
            let values = if has_body { Some(self.parse_enumerators()?) } else { None };
            return Ok(TypeSpec::Enum(EnumSpec { name, values }));
        }
        let members = if has_body { Some(self.parse_members()?) } else { None };
        let record = RecordSpec { name, members };
        Ok(if keyword == Some(Keyword::Union) { TypeSpec::Union(record) } else { TypeSpec::Struct(record) })
    }

    /// Members up to and including the closing `}`.
    fn parse_members(&mut self) -> Result<Vec<MemberDecl>, ParseError> {
        let mut members = Vec::new();
        while !self.eat(Punct::RBrace)? {
            let start = self.peek_start()?;
            let (_, spec) = self.parse_decl_specifiers(false)?;
            if self.peek_punct()? == Some(Punct::Semi) {
                // Anonymous member, e.g. `struct { int a; };`
                let declarator = Declarator { name: None, ops: Vec::new(), span: self.prev_end..self.prev_end };
                self.bump()?;
                members.push(MemberDecl { spec, declarator, bits: None, span: self.span_from(start) });
                continue;
            }
            loop {
                let declarator = if self.peek_punct()? == Some(Punct::Colon) {
                    let at = self.peek_start()?;
                    Declarator { name: None, ops: Vec::new(), span: at..at }
                } else {
                    self.parse_declarator(DeclaratorKind::Named)?
                };
                let bits = if self.eat(Punct::Colon)? { Some(self.parse_conditional()?) } else { None };
                members.push(MemberDecl { spec: spec.clone(), declarator, bits, span: self.span_from(start) });
                if !self.eat(Punct::Comma)? {
                    break;
                }
            }
            self.expect(Punct::Semi)?;
        }
        Ok(members)
    }

    /// Enumerators up to and including the closing `}`. Each one's span is
    /// the token after it (`,` or `}`): DTrace's parser defines an
    /// enumerator once it sees that token, and its errors name that line.
    fn parse_enumerators(&mut self) -> Result<Vec<(String, Option<Expr>, Span)>, ParseError> {
        let mut values = Vec::new();
        while !self.eat(Punct::RBrace)? {
            let (name, _) = self.expect_ident()?;
            let value = if self.eat(Punct::Assign)? { Some(self.parse_conditional()?) } else { None };
            let after = self.peek_start()?;
            values.push((name, value, after..after));
            if !self.eat(Punct::Comma)? {
                self.expect(Punct::RBrace)?;
                break;
            }
        }
        Ok(values)
    }

    /// A type name: specifiers and qualifiers, then an abstract declarator.
    fn parse_type_name(&mut self) -> Result<TypeName, ParseError> {
        let start = self.peek_start()?;
        let (_, spec) = self.parse_decl_specifiers(false)?;
        let declarator = self.parse_declarator(DeclaratorKind::Abstract)?;
        Ok(TypeName { spec, ops: declarator.ops, span: self.span_from(start) })
    }

    fn parse_declarator(&mut self, kind: DeclaratorKind) -> Result<Declarator, ParseError> {
        self.nested(|p| p.parse_declarator_inner(kind))
    }

    /// C declarators. The operators are listed from the name outwards: those
    /// of a parenthesized inner declarator first, then array and function
    /// suffixes left to right, then the leading pointers.
    fn parse_declarator_inner(&mut self, kind: DeclaratorKind) -> Result<Declarator, ParseError> {
        let start = self.peek_start()?;
        let mut pointers = 0;
        while self.eat(Punct::Star)? {
            pointers += 1;
            while matches!(self.peek_keyword()?, Some(Keyword::Const | Keyword::Volatile | Keyword::Restrict)) {
                self.bump()?;
            }
        }

        let (name, mut ops) = match self.peek()?.kind.clone() {
            TokenKind::Ident(name) if kind != DeclaratorKind::Abstract => {
                self.bump()?;
                (Some(name), Vec::new())
            }
            TokenKind::Punct(Punct::LParen) if self.paren_groups_declarator(kind)? => {
                self.bump()?;
                let inner = self.parse_declarator(kind)?;
                self.expect(Punct::RParen)?;
                (inner.name, inner.ops)
            }
            TokenKind::Backquote { .. } if kind != DeclaratorKind::Abstract => {
                let token = self.peek()?.clone();
                let text = self.src.get(token.span.clone()).unwrap_or_default().to_string();
                return Err(ParseError::new(
                    token.span,
                    "D_DECL_SCOPE",
                    format!("D scoping operator may not be used in a declaration name ({text})"),
                ));
            }
            _ if kind == DeclaratorKind::Named => return Err(self.unexpected()),
            _ => (None, Vec::new()),
        };

        loop {
            if self.eat(Punct::LBracket)? {
                ops.push(self.parse_array_suffix()?);
            } else if self.eat(Punct::LParen)? {
                ops.push(DeclOp::Function(self.parse_parameters()?));
            } else {
                break;
            }
        }
        ops.extend(std::iter::repeat_n(DeclOp::Pointer, pointers));
        Ok(Declarator { name, ops, span: self.span_from(start) })
    }

    /// Whether the `(` ahead groups an inner declarator, as in `(*fp)`,
    /// rather than opening a parameter list, as in the abstract `int (int)`.
    fn paren_groups_declarator(&mut self, kind: DeclaratorKind) -> Result<bool, ParseError> {
        let after = self.peek_nth(1)?.clone();
        Ok(match (&after.kind, kind) {
            (_, DeclaratorKind::Named) => true,
            (TokenKind::Punct(Punct::Star | Punct::LParen | Punct::LBracket), _) => true,
            (TokenKind::Ident(_), DeclaratorKind::Either) => !self.token_names_type(&after),
            _ => false,
        })
    }

    /// After `[`: `[]`, `[size]`, or D's associative `[type, ...]`.
    fn parse_array_suffix(&mut self) -> Result<DeclOp, ParseError> {
        if self.eat(Punct::RBracket)? {
            return Ok(DeclOp::Array(None));
        }
        self.refuse_variable_length_tuple()?;
        if self.nth_starts_type(0)? {
            let mut keys = Vec::new();
            loop {
                self.refuse_variable_length_tuple()?;
                keys.push(self.parse_type_name()?);
                if !self.eat(Punct::Comma)? {
                    break;
                }
            }
            self.expect(Punct::RBracket)?;
            return Ok(DeclOp::AssocArray(keys));
        }
        let size = self.parse_conditional()?;
        self.expect(Punct::RBracket)?;
        Ok(DeclOp::Array(Some(size)))
    }

    /// dt_decl_prototype: an associative array's tuple (`int a[...]`) has
    /// no variable-length part.
    fn refuse_variable_length_tuple(&mut self) -> Result<(), ParseError> {
        if self.peek_punct()? != Some(Punct::Ellipsis) {
            return Ok(());
        }
        let start = self.peek_start()?;
        self.bump()?;
        Err(ParseError::new(
            start..self.prev_end,
            "D_DECL_PROTO_VARARGS",
            "array prototype may not use a variable-length argument list",
        ))
    }

    /// After `(`: parameter declarations up to and including `)`. Parameter
    /// names are dropped; `(void)` is kept as written.
    fn parse_parameters(&mut self) -> Result<Vec<TypeName>, ParseError> {
        Ok(self.parse_named_parameters()?.into_iter().map(|(ty, _)| ty).collect())
    }

    /// Parameters with their names, where written (a type's span covers
    /// its name too).
    fn parse_named_parameters(&mut self) -> Result<Vec<(TypeName, Option<String>)>, ParseError> {
        let mut params = Vec::new();
        if self.eat(Punct::RParen)? {
            return Ok(params);
        }
        loop {
            // `int f(int, ...)`, `f(...)`: a function's variable-length
            // argument list, last (extern functions are declared, never
            // called, so it is not kept).
            if self.eat(Punct::Ellipsis)? {
                break;
            }
            let start = self.peek_start()?;
            let (class, spec) = self.parse_decl_specifiers(true)?;
            // dt_decl_pop_param: a parameter's storage class may only be
            // register (or none).
            if class.is_some_and(|c| c != StorageClass::Register) {
                return Err(ParseError::new(
                    start..self.prev_end,
                    "D_DECL_PARMCLASS",
                    "inappropriate storage class for function or associative array parameter",
                ));
            }
            let declarator = self.parse_declarator(DeclaratorKind::Either)?;
            let span = self.span_from(start);
            // dt_decl_prototype: `void` stands alone, without a name.
            let void = matches!(&spec, TypeSpec::Builtin { words, .. } if words.len() == 1 && words[0] == "void");
            if let (true, true, Some(name)) = (void, declarator.ops.is_empty(), &declarator.name) {
                return Err(ParseError::new(
                    span,
                    "D_DECL_PROTO_NAME",
                    format!("void parameter may not have a name: {name}"),
                ));
            }
            params.push((TypeName { spec, ops: declarator.ops, span }, declarator.name));
            if !self.eat(Punct::Comma)? {
                break;
            }
        }
        self.expect(Punct::RParen)?;
        Ok(params)
    }

    // ----- statements -----------------------------------------------------

    /// Statements up to and including the closing `}`.
    fn parse_block_body(&mut self) -> Result<Vec<Stmt>, ParseError> {
        let mut stmts = Vec::new();
        while !self.eat(Punct::RBrace)? {
            stmts.push(self.parse_statement()?);
        }
        Ok(stmts)
    }

    fn parse_statement(&mut self) -> Result<Stmt, ParseError> {
        self.nested(Self::parse_statement_inner)
    }

    fn parse_statement_inner(&mut self) -> Result<Stmt, ParseError> {
        let start = self.peek_start()?;
        let kind = match (self.peek_punct()?, self.peek_keyword()?) {
            (Some(Punct::Semi), _) => {
                self.bump()?;
                StmtKind::Empty
            }
            (Some(Punct::LBrace), _) => {
                self.bump()?;
                StmtKind::Block(self.parse_block_body()?)
            }
            (_, Some(Keyword::If)) => {
                self.bump()?;
                self.expect(Punct::LParen)?;
                let cond = self.parse_expr()?;
                self.expect(Punct::RParen)?;
                let then = self.parse_branch()?;
                let otherwise = if self.peek_keyword()? == Some(Keyword::Else) {
                    self.bump()?;
                    Some(self.parse_branch()?)
                } else {
                    None
                };
                StmtKind::If { cond, then, otherwise }
            }
            // D's grammar has no declarations among a clause's statements
            // (probes/err.D_SYNTAX.declare: `int i = 0;` is a syntax error
            // at `int`); `self` and `this` are expressions, so the error
            // is at the type after them.
            _ if self.starts_local_declaration()? => {
                if matches!(self.peek()?.kind, TokenKind::Keyword(Keyword::SelfKw | Keyword::This)) {
                    self.bump()?;
                }
                return Err(self.unexpected());
            }
            _ => {
                let expr = self.parse_expr()?;
                let next = self.peek()?.span.start;
                self.note_right_edge(&expr, next);
                // As in D, the `;` may be left out before the closing `}`.
                if !self.eat(Punct::Semi)? && self.peek_punct()? != Some(Punct::RBrace) {
                    return Err(self.unexpected());
                }
                StmtKind::Expr(expr)
            }
        };
        Ok(Stmt { kind, span: self.span_from(start) })
    }

    /// The body of `if` or `else`: a `{ }` block's statements, or one statement.
    fn parse_branch(&mut self) -> Result<Vec<Stmt>, ParseError> {
        if self.eat(Punct::LBrace)? {
            return self.parse_block_body();
        }
        Ok(vec![self.parse_statement()?])
    }

    /// Whether a statement is a declaration: a declaration keyword, `self` or
    /// `this` not followed by `->`, or a type name followed by a declarator
    /// (DTrace likewise treats `name =`, `name[`, `name;` as identifiers).
    fn starts_local_declaration(&mut self) -> Result<bool, ParseError> {
        use Keyword::*;
        let token = self.peek()?.clone();
        Ok(match token.kind {
            TokenKind::Keyword(SelfKw | This) => self.peek_nth(1)?.kind != TokenKind::Punct(Punct::Arrow),
            TokenKind::Keyword(keyword) => {
                // typedef is for the program's outer level only (D_SYNTAX in a clause, as DTrace's grammar).
                starts_external_declaration(keyword) && !matches!(keyword, Inline | Translator | Typedef)
            }
            TokenKind::Ident(_) | TokenKind::Backquote { .. } => {
                self.token_names_type(&token)
                    && matches!(self.peek_nth(1)?.kind, TokenKind::Ident(_) | TokenKind::Punct(Punct::Star))
            }
            _ => false,
        })
    }

    // ----- expressions ----------------------------------------------------
    //
    // The functions on the recursive path of nested expressions (parentheses,
    // arguments, operands) are kept small and hand the rarer forms to helpers,
    // because their frames multiply with the nesting depth.

    /// `expression`: assignments separated by the comma operator.
    fn parse_expr(&mut self) -> Result<Expr, ParseError> {
        let first = self.parse_assign()?;
        if self.peek_punct()? != Some(Punct::Comma) {
            return Ok(first);
        }
        self.chained(|p| {
            let mut expr = first;
            while p.eat(Punct::Comma)? {
                p.deepen()?;
                let rhs = p.parse_assign()?;
                expr = binary(BinOp::Comma, expr, rhs);
            }
            Ok(expr)
        })
    }

    fn parse_assign(&mut self) -> Result<Expr, ParseError> {
        self.nested(|p| {
            let lhs = p.parse_conditional()?;
            match p.peek_punct()? {
                Some(punct) if punct == Punct::Assign || compound_assign_op(punct).is_some() => {
                    p.parse_assign_rest(lhs, compound_assign_op(punct))
                }
                _ => Ok(lhs),
            }
        })
    }

    #[inline(never)]
    fn parse_assign_rest(&mut self, lhs: Expr, op: Option<BinOp>) -> Result<Expr, ParseError> {
        self.bump()?;
        let rhs = self.parse_assign()?;
        let span = lhs.span.start..rhs.span.end;
        Ok(Expr { kind: ExprKind::Assign(op, Box::new(lhs), Box::new(rhs)), span })
    }

    /// `a ? b : c`, where `b` may contain commas and `c` is again conditional.
    fn parse_conditional(&mut self) -> Result<Expr, ParseError> {
        let cond = self.parse_binary()?;
        if self.peek_punct()? == Some(Punct::Question) {
            return self.parse_ternary_rest(cond);
        }
        Ok(cond)
    }

    #[inline(never)]
    fn parse_ternary_rest(&mut self, cond: Expr) -> Result<Expr, ParseError> {
        self.bump()?;
        let then = self.parse_expr()?;
        self.expect(Punct::Colon)?;
        let otherwise = self.nested(Self::parse_conditional)?;
        let span = cond.span.start..otherwise.span.end;
        Ok(Expr { kind: ExprKind::Ternary(Box::new(cond), Box::new(then), Box::new(otherwise)), span })
    }

    /// Binary operators from `||` down to `*`, all left-associative, with an
    /// explicit stack so that long chains do not recurse.
    fn parse_binary(&mut self) -> Result<Expr, ParseError> {
        let first = self.parse_cast()?;
        if self.peek_binary_op()?.is_none() {
            return Ok(first);
        }
        self.parse_binary_rest(first)
    }

    #[inline(never)]
    fn parse_binary_rest(&mut self, first: Expr) -> Result<Expr, ParseError> {
        self.chained(|p| p.parse_binary_chain(first))
    }

    fn parse_binary_chain(&mut self, first: Expr) -> Result<Expr, ParseError> {
        let mut pending: Vec<(Expr, BinOp, u8)> = Vec::new();
        let mut current = first;
        while let Some((op, precedence)) = self.peek_binary_op()? {
            self.bump()?;
            self.deepen()?;
            while pending.last().is_some_and(|&(_, _, top)| top >= precedence) {
                if let Some((lhs, top_op, _)) = pending.pop() {
                    current = binary(top_op, lhs, current);
                }
            }
            pending.push((current, op, precedence));
            current = self.parse_cast()?;
        }
        while let Some((lhs, op, _)) = pending.pop() {
            current = binary(op, lhs, current);
        }
        Ok(current)
    }

    fn peek_binary_op(&mut self) -> Result<Option<(BinOp, u8)>, ParseError> {
        let token = self.peek()?;
        let TokenKind::Punct(punct) = token.kind else {
            return Ok(None);
        };
        let end = token.span.end;
        if punct == Punct::Slash && self.in_predicate && self.lexer.slash_ends_predicate(end) {
            return Ok(None);
        }
        Ok(binary_op(punct))
    }

    /// `(type) expr` or a unary expression.
    fn parse_cast(&mut self) -> Result<Expr, ParseError> {
        self.nested(|p| {
            if p.peek_punct()? == Some(Punct::LParen) && p.nth_starts_type(1)? {
                return p.parse_cast_rest();
            }
            p.parse_unary()
        })
    }

    #[inline(never)]
    fn parse_cast_rest(&mut self) -> Result<Expr, ParseError> {
        let start = self.bump()?.span.start;
        let ty = self.parse_type_name()?;
        self.expect(Punct::RParen)?;
        let operand = self.parse_cast()?;
        Ok(Expr { kind: ExprKind::Cast(ty, Box::new(operand)), span: self.span_from(start) })
    }

    fn parse_unary(&mut self) -> Result<Expr, ParseError> {
        self.nested(|p| {
            if let Some(op) = p.peek_punct()?.and_then(prefix_op) {
                return p.parse_prefix_op(op);
            }
            match p.peek_keyword()? {
                Some(Keyword::Sizeof | Keyword::Stringof) => p.parse_sizeof_or_stringof(),
                _ => p.parse_postfix(),
            }
        })
    }

    #[inline(never)]
    fn parse_prefix_op(&mut self, op: UnOp) -> Result<Expr, ParseError> {
        let start = self.bump()?.span.start;
        // `++`/`--` apply to a unary expression, the others to a cast.
        let operand = if matches!(op, UnOp::PreInc | UnOp::PreDec) { self.parse_unary()? } else { self.parse_cast()? };
        Ok(Expr { kind: ExprKind::Unary(op, Box::new(operand)), span: self.span_from(start) })
    }

    #[inline(never)]
    fn parse_sizeof_or_stringof(&mut self) -> Result<Expr, ParseError> {
        let token = self.bump()?;
        let kind = if token.kind == TokenKind::Keyword(Keyword::Stringof) {
            ExprKind::Stringof(Box::new(self.parse_unary()?))
        } else if self.peek_punct()? == Some(Punct::LParen) && self.nth_starts_type(1)? {
            self.bump()?;
            let ty = self.parse_type_name()?;
            self.expect(Punct::RParen)?;
            ExprKind::SizeofType(ty)
        } else {
            ExprKind::SizeofExpr(Box::new(self.parse_unary()?))
        };
        Ok(Expr { kind, span: self.span_from(token.span.start) })
    }

    fn parse_postfix(&mut self) -> Result<Expr, ParseError> {
        let primary = self.parse_primary()?;
        match self.peek_punct()? {
            Some(Punct::LBracket | Punct::LParen | Punct::Dot | Punct::Arrow | Punct::PlusPlus | Punct::MinusMinus) => {
                self.chained(|p| p.parse_postfix_chain(primary))
            }
            _ => Ok(primary),
        }
    }

    #[inline(never)]
    fn parse_postfix_chain(&mut self, mut expr: Expr) -> Result<Expr, ParseError> {
        while let Some(punct) = self.peek_punct()? {
            self.deepen()?;
            expr = match punct {
                Punct::LBracket => self.parse_index(expr)?,
                // Only identifiers are callable in D (dt_node_func).
                Punct::LParen if matches!(expr.kind, ExprKind::Ident(_)) => self.parse_call(expr)?,
                Punct::LParen => {
                    let at = self.peek()?.span.clone();
                    return Err(ParseError::new(at, "D_FUNC_IDENT", "function designator is not of function type"));
                }
                Punct::Dot | Punct::Arrow | Punct::PlusPlus | Punct::MinusMinus => self.parse_member_or_step(expr)?,
                _ => break,
            };
        }
        Ok(expr)
    }

    /// Records the operators on a predicate's or statement's right edge as
    /// reduced at the token `next` (Program::reduced_at); primaries, calls,
    /// members and subscripts are reduced before the lookahead is read.
    fn note_right_edge(&mut self, e: &Expr, next: usize) {
        let last = match &e.kind {
            ExprKind::Binary(_, _, rhs) | ExprKind::Assign(_, _, rhs) | ExprKind::Ternary(_, _, rhs) => rhs,
            ExprKind::Unary(op, operand) if !matches!(op, UnOp::PostInc | UnOp::PostDec) => operand,
            ExprKind::Cast(_, operand) => operand,
            _ => return,
        };
        self.reduced_at.push((e.span.clone(), next));
        self.note_right_edge(last, next);
    }

    #[inline(never)]
    fn parse_index(&mut self, base: Expr) -> Result<Expr, ParseError> {
        self.bump()?;
        let keys = self.parse_arguments(Punct::RBracket)?;
        let span = self.span_from(base.span.start);
        Ok(Expr { kind: ExprKind::Index(Box::new(base), keys), span })
    }

    #[inline(never)]
    fn parse_call(&mut self, callee: Expr) -> Result<Expr, ParseError> {
        let ExprKind::Ident(name) = callee.kind else {
            return Err(self.unexpected());
        };
        self.bump()?;
        let args = if self.eat(Punct::RParen)? { Vec::new() } else { self.parse_arguments(Punct::RParen)? };
        let span = self.span_from(callee.span.start);
        Ok(Expr { kind: ExprKind::Call { name, name_span: callee.span, args }, span })
    }

    /// `.member`, `->member`, postfix `++` and `--`.
    #[inline(never)]
    fn parse_member_or_step(&mut self, base: Expr) -> Result<Expr, ParseError> {
        let token = self.bump()?;
        let start = base.span.start;
        let base = Box::new(base);
        let kind = match token.kind {
            TokenKind::Punct(Punct::Dot) => ExprKind::Member(base, self.expect_member_name()?),
            TokenKind::Punct(Punct::Arrow) => ExprKind::Arrow(base, self.expect_member_name()?),
            TokenKind::Punct(Punct::PlusPlus) => ExprKind::Unary(UnOp::PostInc, base),
            _ => ExprKind::Unary(UnOp::PostDec, base),
        };
        Ok(Expr { kind, span: self.span_from(start) })
    }

    /// One or more assignment expressions separated by commas, then `close`.
    fn parse_arguments(&mut self, close: Punct) -> Result<Vec<Expr>, ParseError> {
        let mut args = Vec::new();
        loop {
            args.push(self.parse_assign()?);
            if !self.eat(Punct::Comma)? {
                break;
            }
        }
        self.expect(close)?;
        Ok(args)
    }

    fn parse_primary(&mut self) -> Result<Expr, ParseError> {
        match self.peek()?.kind {
            TokenKind::Punct(Punct::LParen) => self.parse_parenthesized(),
            TokenKind::Keyword(Keyword::Offsetof | Keyword::Xlate) => self.parse_offsetof_or_xlate(),
            _ => self.parse_atom(),
        }
    }

    #[inline(never)]
    fn parse_parenthesized(&mut self) -> Result<Expr, ParseError> {
        let start = self.bump()?.span.start;
        let inner = self.parse_expr()?;
        self.expect(Punct::RParen)?;
        Ok(Expr { kind: inner.kind, span: self.span_from(start) })
    }

    #[inline(never)]
    fn parse_offsetof_or_xlate(&mut self) -> Result<Expr, ParseError> {
        let token = self.bump()?;
        let kind = if token.kind == TokenKind::Keyword(Keyword::Offsetof) {
            self.expect(Punct::LParen)?;
            let ty = self.parse_type_name()?;
            self.expect(Punct::Comma)?;
            let member = self.expect_member_name()?;
            self.expect(Punct::RParen)?;
            ExprKind::Offsetof(ty, member)
        } else {
            self.expect(Punct::Lt)?;
            let ty = self.parse_type_name()?;
            self.expect(Punct::Gt)?;
            self.expect(Punct::LParen)?;
            let operand = self.parse_expr()?;
            self.expect(Punct::RParen)?;
            ExprKind::Xlate(ty, Box::new(operand))
        };
        Ok(Expr { kind, span: self.span_from(token.span.start) })
    }

    /// Constants, names, macros, aggregations, `self->x` and `this->x`.
    #[inline(never)]
    fn parse_atom(&mut self) -> Result<Expr, ParseError> {
        let token = self.bump()?;
        let kind = match token.kind {
            TokenKind::Int { value, suffix, decimal } => ExprKind::Int { value, suffix, decimal },
            TokenKind::Float(text) => ExprKind::Float(text),
            TokenKind::Char(value) => ExprKind::Char(value),
            TokenKind::Str(bytes) => ExprKind::Str(bytes),
            TokenKind::Ident(name) => ExprKind::Ident(name),
            TokenKind::Backquote { module, name } => ExprKind::Backquote { module, name },
            TokenKind::MacroArg(n) => ExprKind::MacroArg(n),
            TokenKind::MacroStr(n) => ExprKind::MacroStr(n),
            TokenKind::MacroVar(name) => ExprKind::MacroVar(name),
            TokenKind::Aggregation(name) => ExprKind::Aggregation(name),
            TokenKind::Keyword(Keyword::SelfKw) => {
                self.expect(Punct::Arrow)?;
                ExprKind::SelfVar(self.expect_member_name()?)
            }
            TokenKind::Keyword(Keyword::This) => {
                self.expect(Punct::Arrow)?;
                ExprKind::ThisVar(self.expect_member_name()?)
            }
            _ => return Err(self.error_at(&token)),
        };
        Ok(Expr { kind, span: token.span.start..self.prev_end })
    }
}

fn prefix_op(punct: Punct) -> Option<UnOp> {
    Some(match punct {
        Punct::PlusPlus => UnOp::PreInc,
        Punct::MinusMinus => UnOp::PreDec,
        Punct::Amp => UnOp::AddrOf,
        Punct::Star => UnOp::Deref,
        Punct::Plus => UnOp::Plus,
        Punct::Minus => UnOp::Neg,
        Punct::Tilde => UnOp::BitNot,
        Punct::Bang => UnOp::Not,
        _ => return None,
    })
}

fn item_start(item: &Item) -> usize {
    match item {
        Item::Clause(clause) => clause.span.start,
        Item::Pragma { span, .. } => span.start,
        Item::Decl(decl) => decl.span.start,
        Item::Inline(inline) => inline.span.start,
        Item::Translator(translator) => translator.span.start,
        Item::Provider(provider) => provider.span.start,
    }
}

fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let span = lhs.span.start..rhs.span.end;
    Expr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span }
}

/// Binary operators with their precedence (higher binds tighter).
fn binary_op(punct: Punct) -> Option<(BinOp, u8)> {
    Some(match punct {
        Punct::OrOr => (BinOp::LogOr, 1),
        Punct::XorXor => (BinOp::LogXor, 2),
        Punct::AndAnd => (BinOp::LogAnd, 3),
        Punct::Pipe => (BinOp::BitOr, 4),
        Punct::Caret => (BinOp::BitXor, 5),
        Punct::Amp => (BinOp::BitAnd, 6),
        Punct::EqEq => (BinOp::Eq, 7),
        Punct::NotEq => (BinOp::Ne, 7),
        Punct::Lt => (BinOp::Lt, 8),
        Punct::Le => (BinOp::Le, 8),
        Punct::Gt => (BinOp::Gt, 8),
        Punct::Ge => (BinOp::Ge, 8),
        Punct::Shl => (BinOp::Shl, 9),
        Punct::Shr => (BinOp::Shr, 9),
        Punct::Plus => (BinOp::Add, 10),
        Punct::Minus => (BinOp::Sub, 10),
        Punct::Star => (BinOp::Mul, 11),
        Punct::Slash => (BinOp::Div, 11),
        Punct::Percent => (BinOp::Mod, 11),
        _ => return None,
    })
}

fn compound_assign_op(punct: Punct) -> Option<BinOp> {
    Some(match punct {
        Punct::PlusAssign => BinOp::Add,
        Punct::MinusAssign => BinOp::Sub,
        Punct::StarAssign => BinOp::Mul,
        Punct::SlashAssign => BinOp::Div,
        Punct::PercentAssign => BinOp::Mod,
        Punct::AmpAssign => BinOp::BitAnd,
        Punct::PipeAssign => BinOp::BitOr,
        Punct::CaretAssign => BinOp::BitXor,
        Punct::ShlAssign => BinOp::Shl,
        Punct::ShrAssign => BinOp::Shr,
        _ => return None,
    })
}

fn storage_class(keyword: Keyword) -> Option<StorageClass> {
    Some(match keyword {
        Keyword::SelfKw => StorageClass::SelfVar,
        Keyword::This => StorageClass::ThisVar,
        Keyword::Static => StorageClass::Static,
        Keyword::Extern => StorageClass::Extern,
        Keyword::Typedef => StorageClass::Typedef,
        Keyword::Register => StorageClass::Register,
        Keyword::Auto => StorageClass::Auto,
        _ => return None,
    })
}

/// Keywords that begin a file-scope declaration (DTrace's S2 keyword rules).
/// `counter`, `import` and `provider` are among them although this parser
/// does not support what follows, so that they fail as syntax errors.
/// `(void)` declares no parameters.
fn without_void(params: Vec<(TypeName, Option<String>)>) -> Vec<(TypeName, Option<String>)> {
    match params.as_slice() {
        [(only, _)]
            if only.ops.is_empty() && matches!(&only.spec, TypeSpec::Builtin { words, .. } if words == &["void"]) =>
        {
            Vec::new()
        }
        _ => params,
    }
}

fn starts_external_declaration(keyword: Keyword) -> bool {
    use Keyword::*;
    matches!(
        keyword,
        Auto | Char
            | Const
            | Counter
            | Double
            | Enum
            | Extern
            | Float
            | Import
            | Inline
            | Int
            | Long
            | Provider
            | Register
            | Restrict
            | SelfKw
            | Short
            | Signed
            | Static
            | String
            | Struct
            | This
            | Translator
            | Typedef
            | Union
            | Unsigned
            | Void
            | Volatile
    )
}

#[cfg(test)]
mod tests {
    use super::super::ast::*;
    use super::super::{line_of, parse, ParseError};

    fn is_type(name: &str) -> bool {
        matches!(name, "uint64_t" | "pid_t" | "size_t" | "psinfo_t" | "tick")
    }

    fn program(src: &str) -> Program {
        parse(src, &is_type).unwrap_or_else(|e| panic!("{src:?}: {} at {:?}", e.message, e.span))
    }

    fn error(src: &str) -> ParseError {
        match parse(src, &is_type) {
            Ok(p) => panic!("{src:?} parsed: {p:?}"),
            Err(e) => e,
        }
    }

    fn clause(src: &str) -> Clause {
        match program(src).items.as_slice() {
            [Item::Clause(c)] => c.clone(),
            items => panic!("{src:?}: not one clause: {items:?}"),
        }
    }

    fn decl(src: &str) -> Decl {
        match program(src).items.as_slice() {
            [Item::Decl(d)] => d.clone(),
            items => panic!("{src:?}: not one declaration: {items:?}"),
        }
    }

    /// The statements of `BEGIN { body }`, one line each.
    fn body(src: &str) -> Vec<String> {
        clause(&format!("BEGIN {{ {src} }}")).body.iter().map(show_stmt).collect()
    }

    /// The one expression statement of `BEGIN { src; }`.
    fn expr(src: &str) -> String {
        match clause(&format!("BEGIN {{ {src}; }}")).body.as_slice() {
            [Stmt { kind: StmtKind::Expr(e), .. }] => show(e),
            other => panic!("{src:?}: {other:?}"),
        }
    }

    fn show_stmt(stmt: &Stmt) -> String {
        let block = |stmts: &[Stmt]| format!("{{{}}}", stmts.iter().map(show_stmt).collect::<Vec<_>>().join(" "));
        match &stmt.kind {
            StmtKind::Expr(e) => show(e),
            StmtKind::If { cond, then, otherwise } => match otherwise {
                Some(o) => format!("if {} {} else {}", show(cond), block(then), block(o)),
                None => format!("if {} {}", show(cond), block(then)),
            },
            StmtKind::Block(stmts) => block(stmts),
            StmtKind::Empty => ";".to_string(),
        }
    }

    /// S-expressions, e.g. `(+ a (* b c))`.
    fn show(e: &Expr) -> String {
        let list = |items: &[Expr]| items.iter().map(show).collect::<Vec<_>>().join(" ");
        match &e.kind {
            ExprKind::Int { value, suffix, decimal } => format!(
                "{value}{}{}{}",
                if *decimal { "" } else { "#" },
                if suffix.unsigned { "u" } else { "" },
                "l".repeat(usize::from(suffix.long))
            ),
            ExprKind::Float(text) => format!("float:{text}"),
            ExprKind::Char(v) => format!("char:{v}"),
            ExprKind::Str(bytes) => format!("\"{}\"", bytes.escape_ascii()),
            ExprKind::Ident(name) => name.clone(),
            ExprKind::Backquote { module, name } => format!("{}`{name}", module.as_deref().unwrap_or("")),
            ExprKind::MacroArg(n) => format!("${n}"),
            ExprKind::MacroStr(n) => format!("$${n}"),
            ExprKind::MacroVar(name) => format!("${name}"),
            ExprKind::SelfVar(name) => format!("self->{name}"),
            ExprKind::ThisVar(name) => format!("this->{name}"),
            ExprKind::Aggregation(name) => format!("@{name}"),
            ExprKind::Unary(op, operand) => format!("({op:?} {})", show(operand)),
            ExprKind::Binary(op, l, r) => format!("({} {} {})", binop(*op), show(l), show(r)),
            ExprKind::Assign(None, l, r) => format!("(= {} {})", show(l), show(r)),
            ExprKind::Assign(Some(op), l, r) => format!("({}= {} {})", binop(*op), show(l), show(r)),
            ExprKind::Ternary(c, a, b) => format!("(? {} {} {})", show(c), show(a), show(b)),
            ExprKind::Call { name, args, .. } if args.is_empty() => format!("({name})"),
            ExprKind::Call { name, args, .. } => format!("({name} {})", list(args)),
            ExprKind::Index(base, keys) => format!("(index {} {})", show(base), list(keys)),
            ExprKind::Member(base, m) => format!("(. {} {m})", show(base)),
            ExprKind::Arrow(base, m) => format!("(-> {} {m})", show(base)),
            ExprKind::Cast(ty, operand) => format!("(cast <{}> {})", show_type(ty), show(operand)),
            ExprKind::SizeofType(ty) => format!("(sizeof <{}>)", show_type(ty)),
            ExprKind::SizeofExpr(operand) => format!("(sizeof {})", show(operand)),
            ExprKind::Offsetof(ty, m) => format!("(offsetof <{}> {m})", show_type(ty)),
            ExprKind::Stringof(operand) => format!("(stringof {})", show(operand)),
            ExprKind::Xlate(ty, operand) => format!("(xlate <{}> {})", show_type(ty), show(operand)),
        }
    }

    fn binop(op: BinOp) -> &'static str {
        use BinOp::*;
        match op {
            Mul => "*",
            Div => "/",
            Mod => "%",
            Add => "+",
            Sub => "-",
            Shl => "<<",
            Shr => ">>",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            BitAnd => "&",
            BitXor => "^",
            BitOr => "|",
            LogAnd => "&&",
            LogXor => "^^",
            LogOr => "||",
            Comma => ",",
        }
    }

    /// Type operators read from the name outwards, then the specifier:
    /// `int *a[4]` shows as `[4] * int`.
    fn show_ops(ops: &[DeclOp]) -> String {
        let types = |ts: &[TypeName]| ts.iter().map(show_type).collect::<Vec<_>>().join(", ");
        ops.iter()
            .map(|op| match op {
                DeclOp::Pointer => "* ".to_string(),
                DeclOp::Array(None) => "[] ".to_string(),
                DeclOp::Array(Some(size)) => format!("[{}] ", show(size)),
                DeclOp::AssocArray(keys) => format!("[{}] ", types(keys)),
                DeclOp::Function(params) => format!("({}) ", types(params)),
            })
            .collect()
    }

    fn show_type(ty: &TypeName) -> String {
        format!("{}{}", show_ops(&ty.ops), show_spec(&ty.spec))
    }

    fn show_spec(spec: &TypeSpec) -> String {
        let qualified = |qualifiers: &[String], base: String| {
            qualifiers.iter().map(|q| format!("{q} ")).collect::<String>() + &base
        };
        let record = |keyword: &str, r: &RecordSpec| {
            let mut out = keyword.to_string();
            if let Some(name) = &r.name {
                out += &format!(" {name}");
            }
            if let Some(members) = &r.members {
                let members: Vec<String> = members
                    .iter()
                    .map(|m| {
                        let bits = m.bits.as_ref().map(|b| format!(" : {}", show(b))).unwrap_or_default();
                        format!("{}{bits}", show_declarator(&m.spec, &m.declarator))
                    })
                    .collect();
                out += &format!(" {{{}}}", members.join("; "));
            }
            out
        };
        match spec {
            TypeSpec::Builtin { words, qualifiers } => qualified(qualifiers, words.join(" ")),
            TypeSpec::Named { name, qualifiers } => qualified(qualifiers, name.clone()),
            TypeSpec::Struct(r) => record("struct", r),
            TypeSpec::Union(r) => record("union", r),
            TypeSpec::Enum(e) => {
                let mut out = "enum".to_string();
                if let Some(name) = &e.name {
                    out += &format!(" {name}");
                }
                if let Some(values) = &e.values {
                    let values: Vec<String> = values
                        .iter()
                        .map(|(name, value, _)| match value {
                            Some(v) => format!("{name} = {}", show(v)),
                            None => name.clone(),
                        })
                        .collect();
                    out += &format!(" {{{}}}", values.join(", "));
                }
                out
            }
        }
    }

    fn show_declarator(spec: &TypeSpec, d: &Declarator) -> String {
        format!("{}: {}{}", d.name.as_deref().unwrap_or("_"), show_ops(&d.ops), show_spec(spec))
    }

    fn show_decl(d: &Decl) -> String {
        let class = d.class.map(|c| format!("{c:?} ")).unwrap_or_default();
        if d.declarators.is_empty() {
            return format!("{class}{};", show_spec(&d.spec));
        }
        let declarators: Vec<String> = d.declarators.iter().map(|x| show_declarator(&d.spec, x)).collect();
        format!("{class}{}", declarators.join(", "))
    }

    #[test]
    fn probe_descriptions() {
        let cases = [
            ("BEGIN {}", vec!["BEGIN"]),
            ("syscall::open*:entry{}", vec!["syscall::open*:entry"]),
            ("tick-$1 {}", vec!["tick-$1"]),
            ("profile-97hz {}", vec!["profile-97hz"]),
            ("pid$target:libc.so.6:str*:entry {}", vec!["pid$target:libc.so.6:str*:entry"]),
            ("syscall:::entry {}", vec!["syscall:::entry"]),
            (":::BEGIN {}", vec![":::BEGIN"]),
            ("fbt:vmlinux:vfs_*:entry {}", vec!["fbt:vmlinux:vfs_*:entry"]),
            ("io:::start,\n  sysinfo:::readch ,\n readch\n{}", vec!["io:::start", "sysinfo:::readch", "readch"]),
            ("syscall::[rw]*:entry {}", vec!["syscall::[rw]*:entry"]),
            ("*:::entry {}", vec!["*:::entry"]),
            ("syscall* {}", vec!["syscall*"]),
            ("1234 {}", vec!["1234"]),
            (
                "syscall::read:entry /* c */ , // d\n syscall::write:entry {}",
                vec!["syscall::read:entry", "syscall::write:entry"],
            ),
        ];
        for (src, expected) in cases {
            let c = clause(src);
            let texts: Vec<&str> = c.probes.iter().map(|p| p.text.as_str()).collect();
            assert_eq!(texts, expected, "{src:?}");
            for p in &c.probes {
                assert_eq!(&src[p.span.clone()], p.text);
            }
            assert_eq!(c.span.start, c.probes[0].span.start);
            assert_eq!(c.span.end, src.len(), "{src:?}");
        }
    }

    #[test]
    fn clauses_predicates_and_bodies() {
        let c = clause("BEGIN/x/{}");
        assert_eq!(c.predicate.as_ref().map(show).as_deref(), Some("x"));
        assert!(c.body.is_empty());

        let c = clause("syscall::read:entry\n/pid == $target && arg0 / 2 > 1/\n{\n  @[execname] = count();\n}");
        assert_eq!(c.predicate.as_ref().map(show).as_deref(), Some("(&& (== pid $target) (> (/ arg0 2) 1))"));
        assert_eq!(c.body.iter().map(show_stmt).collect::<Vec<_>>(), vec!["(= (index @ execname) (count))"]);

        let c = clause("BEGIN / (a / b) / { x }");
        assert_eq!(c.predicate.as_ref().map(show).as_deref(), Some("(/ a b)"));
        assert_eq!(c.body.iter().map(show_stmt).collect::<Vec<_>>(), vec!["x"]);

        // `dtrace -n BEGIN`: a bare description.
        let p = program("BEGIN");
        assert!(matches!(p.items.as_slice(), [Item::Clause(c)] if c.body.is_empty() && c.predicate.is_none()));

        let p = program("BEGIN { a = 1; } END { b = 2 }\ntick-1s { exit(0); }");
        assert_eq!(p.items.len(), 3);
    }

    #[test]
    fn script_start_and_pragmas() {
        let src = "#!/usr/sbin/dtrace -qs\n#pragma D option quiet\n#pragma D option bufsize=16m\n# 1 \"x.d\"\n#line 4\n#pragma ident \"x\"\nBEGIN { }\n";
        let items = program(src).items;
        let pragmas: Vec<Vec<String>> = items
            .iter()
            .filter_map(|item| match item {
                Item::Pragma { words, .. } => Some(words.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            pragmas,
            vec![vec!["D", "option", "quiet"], vec!["D", "option", "bufsize=16m"], vec!["ident", "\"x\""]]
        );
        assert_eq!(items.len(), 4);
        let Item::Pragma { span, .. } = &items[0] else { panic!() };
        assert_eq!(&src[span.clone()], "#pragma D option quiet");
        assert_eq!(line_of(src, span.start), 2);

        // DTrace processes control lines anywhere, also inside a clause.
        let src = "BEGIN {\n#pragma D option quiet\n  x = 1;\n}\n#pragma D option flowindent\nEND {}";
        let order: Vec<String> = program(src)
            .items
            .iter()
            .map(|item| match item {
                Item::Pragma { words, .. } => words.join(" "),
                Item::Clause(c) => {
                    format!("{} {:?}", c.probes[0].text, c.body.iter().map(show_stmt).collect::<Vec<_>>())
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(order, ["BEGIN [\"(= x 1)\"]", "D option quiet", "D option flowindent", "END []"]);
    }

    #[test]
    fn file_scope_declarations() {
        let cases = [
            ("int x;", "x: int"),
            ("int a, *b, c[10];", "a: int, b: * int, c: [10] int"),
            ("int *a[4];", "a: [4] * int"),
            ("int a[2][3];", "a: [2] [3] int"),
            ("int *(*p)[3];", "p: * [3] * int"),
            ("int*x;", "x: * int"),
            ("self int x;", "SelfVar x: int"),
            ("this string s;", "ThisVar s: string"),
            ("int counts[string, int];", "counts: [string, int] int"),
            ("uint64_t ts[pid_t];", "ts: [pid_t] uint64_t"),
            ("unsigned long long x;", "x: unsigned long long"),
            ("const char *p;", "p: * const char"),
            ("char * const p;", "p: * char"),
            ("extern int x;", "Extern x: int"),
            ("static int x;", "Static x: int"),
            ("vmlinux`pid_t p;", "p: vmlinux`pid_t"),
            ("extern vmlinux`pid_t p;", "Extern p: vmlinux`pid_t"),
            ("int (*fp)(int, char *);", "fp: * (int, * char) int"),
            ("int f(void);", "f: (void) int"),
            ("int f(int x, char *[]);", "f: (int, [] * char) int"),
            ("struct s { int a; char b[4]; };", "struct s {a: int; b: [4] char};"),
            ("struct s;", "struct s;"),
            ("struct s *p;", "p: * struct s"),
            ("union u { int i; long l; } v;", "v: union u {i: int; l: long}"),
            ("enum e { A, B = 3, C };", "enum e {A, B = 3, C};"),
            ("enum e { A, };", "enum e {A};"),
            ("enum e x;", "x: enum e"),
            (
                "typedef struct foo { int a; char b[4]; unsigned int c : 3; int : 2; } foo_t;",
                "Typedef foo_t: struct foo {a: int; b: [4] char; c: unsigned int : 3; _: int : 2}",
            ),
            ("struct s { struct { int x; } in; int a, *b; };", "struct s {in: struct {x: int}; a: int; b: * int};"),
        ];
        for (src, expected) in cases {
            assert_eq!(show_decl(&decl(src)), expected, "{src:?}");
        }
        let d = decl("int a, *b;");
        assert_eq!(d.span, 0..10);
        assert_eq!(d.declarators[1].span, 7..9);
    }

    #[test]
    fn script_typedefs_become_type_names() {
        let p = program("typedef unsigned long my_t;\nmy_t x;\nmy_t*y;\nBEGIN { z = (my_t)1; }");
        assert_eq!(p.items.len(), 4);
        let Item::Decl(d) = &p.items[1] else { panic!("{:?}", p.items[1]) };
        assert_eq!(show_decl(d), "x: my_t");
        let Item::Clause(c) = &p.items[3] else { panic!() };
        let shown: Vec<String> = c.body.iter().map(show_stmt).collect();
        assert_eq!(shown, vec!["(= z (cast <my_t> 1))"]);
        // A type name that is also the start of a probe description.
        assert!(matches!(program("tick-1s {}").items.as_slice(), [Item::Clause(_)]));
        assert!(matches!(program("tick x;").items.as_slice(), [Item::Decl(_)]));
    }

    #[test]
    fn inlines_and_translators() {
        let p = program("inline int FOO = 42;\ninline string s = \"x\";\ninline uint64_t *P = 0;");
        let inlines: Vec<String> = p
            .items
            .iter()
            .map(|item| match item {
                Item::Inline(i) => format!("{}: {} = {}", i.name, show_type(&i.ty), show(&i.value)),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(inlines, vec!["FOO: int = 42", "s: string = \"x\"", "P: * uint64_t = 0"]);

        let src = "translator psinfo_t < struct task_struct *T > {\n  pr_pid = T->tgid;\n  pr_fname = T->comm;\n};";
        let translator = program(src);
        let [Item::Translator(t)] = translator.items.as_slice() else { panic!() };
        assert_eq!(show_type(&t.output), "psinfo_t");
        assert_eq!(show_type(&t.input), "* struct task_struct");
        assert_eq!(t.input_name, "T");
        let members: Vec<String> = t.members.iter().map(|(n, e, _)| format!("{n} = {}", show(e))).collect();
        assert_eq!(members, vec!["pr_pid = (-> T tgid)", "pr_fname = (-> T comm)"]);
        assert_eq!(t.span, 0..src.len());
        assert!(matches!(program("translator psinfo_t < int *p > { };").items.as_slice(), [Item::Translator(_)]));
    }

    #[test]
    fn statements() {
        let cases: &[(&str, &[&str])] = &[
            ("x = 1; y = 2", &["(= x 1)", "(= y 2)"]),
            ("", &[]),
            (";;", &[";", ";"]),
            ("{ a; { b } }", &["{a {b}}"]),
            ("if (x) y = 1;", &["if x {(= y 1)}"]),
            ("if (x) { y = 1; z = 2; } else { w = 3; }", &["if x {(= y 1) (= z 2)} else {(= w 3)}"]),
            ("if (a) if (b) c; else d;", &["if a {if b {c} else {d}}"]),
            ("if (a) x; else if (b) y; else z;", &["if a {x} else {if b {y} else {z}}"]),
            ("tick = 1; tick[1] = 2; tick++;", &["(= tick 1)", "(= (index tick 1) 2)", "(PostInc tick)"]),
        ];
        for (src, expected) in cases {
            assert_eq!(body(src), *expected, "{src:?}");
        }
        let c = clause("BEGIN { x = 1 ; y }");
        assert_eq!(c.body[0].span, 8..15);
        assert_eq!(c.body[1].span, 16..17);
    }

    #[test]
    fn expression_precedence() {
        let cases = [
            ("a = b = c", "(= a (= b c))"),
            ("a += b -= c", "(+= a (-= b c))"),
            ("a <<= 1, b >>= 2, c %= 3", "(, (, (<<= a 1) (>>= b 2)) (%= c 3))"),
            ("a &= 1 | 2 ^ 3", "(&= a (| 1 (^ 2 3)))"),
            ("x = a ? b : c ? d : e", "(= x (? a b (? c d e)))"),
            ("a ? b, c : d", "(? a (, b c) d)"),
            ("a || b ^^ c && d", "(|| a (^^ b (&& c d)))"),
            ("a ^^ b ^^ c", "(^^ (^^ a b) c)"),
            ("a | b ^ c & d", "(| a (^ b (& c d)))"),
            ("a == b < c", "(== a (< b c))"),
            ("a != b >= c <= d > e", "(!= a (> (<= (>= b c) d) e))"),
            ("a << b + c", "(<< a (+ b c))"),
            ("a - b - c", "(- (- a b) c)"),
            ("a + b * c % d / e", "(+ a (/ (% (* b c) d) e))"),
            ("a * (b + c)", "(* a (+ b c))"),
            ("-a * !b", "(* (Neg a) (Not b))"),
            ("~+a", "(BitNot (Plus a))"),
            ("*p++", "(Deref (PostInc p))"),
            ("&x->y", "(AddrOf (-> x y))"),
            ("++a--", "(PreInc (PostDec a))"),
            ("--*p", "(PreDec (Deref p))"),
            ("- -1", "(Neg (Neg 1))"),
            ("a-- - --b", "(- (PostDec a) (PreDec b))"),
        ];
        for (src, expected) in cases {
            assert_eq!(expr(src), expected, "{src:?}");
        }
    }

    #[test]
    fn casts_and_type_operators() {
        let cases = [
            ("(uint64_t)x", "(cast <uint64_t> x)"),
            ("(struct file *)arg0", "(cast <* struct file> arg0)"),
            ("(char)c", "(cast <char> c)"),
            ("(int *)p", "(cast <* int> p)"),
            ("(string)x", "(cast <string> x)"),
            ("(unsigned long long)x", "(cast <unsigned long long> x)"),
            ("(const char *)(x + 1)", "(cast <* const char> (+ x 1))"),
            ("(vmlinux`pid_t)x", "(cast <vmlinux`pid_t> x)"),
            ("(int (*)(int))f", "(cast <* (int) int> f)"),
            ("(int)(char)x * 2", "(* (cast <int> (cast <char> x)) 2)"),
            ("-(int)x", "(Neg (cast <int> x))"),
            ("(x)", "x"),
            ("(x) - 1", "(- x 1)"),
            ("sizeof(int)", "(sizeof <int>)"),
            ("sizeof (struct task_struct)", "(sizeof <struct task_struct>)"),
            ("sizeof x", "(sizeof x)"),
            ("sizeof(x)", "(sizeof x)"),
            ("sizeof x + 1", "(+ (sizeof x) 1)"),
            ("sizeof(char *[4])", "(sizeof <[4] * char>)"),
            ("offsetof(struct foo, bar)", "(offsetof <struct foo> bar)"),
            ("stringof x", "(stringof x)"),
            ("stringof(x) + 1", "(+ (stringof x) 1)"),
            ("xlate<psinfo_t>(curthread)", "(xlate <psinfo_t> curthread)"),
            ("xlate < psinfo_t * > (t)->pr_pid", "(-> (xlate <* psinfo_t> t) pr_pid)"),
        ];
        for (src, expected) in cases {
            assert_eq!(expr(src), expected, "{src:?}");
        }
    }

    #[test]
    fn postfix_and_primary() {
        let cases = [
            ("f()", "(f)"),
            ("printf(\"%d\\n\", a, b)", "(printf \"%d\\n\" a b)"),
            ("a[x, y]", "(index a x y)"),
            ("a[1][2]", "(index (index a 1) 2)"),
            ("s.a.b", "(. (. s a) b)"),
            ("p->a->b", "(-> (-> p a) b)"),
            ("args[0]->f_path.dentry", "(. (-> (index args 0) f_path) dentry)"),
            ("p->string", "(-> p string)"),
            ("self->x", "self->x"),
            ("self->x[a, b]", "(index self->x a b)"),
            ("this->x++", "(PostInc this->x)"),
            ("@", "@"),
            ("@name", "@name"),
            ("@name[k1, k2] = count()", "(= (index @name k1 k2) (count))"),
            ("@q = quantize(x)", "(= @q (quantize x))"),
            ("`jiffies", "`jiffies"),
            ("vmlinux`jiffies", "vmlinux`jiffies"),
            ("$1 + $$2", "(+ $1 $$2)"),
            ("$target + $pid + $ppid + $uid + $gid", "(+ (+ (+ (+ $target $pid) $ppid) $uid) $gid)"),
            ("$pgid + $sid + $projid + $taskid", "(+ (+ (+ $pgid $sid) $projid) $taskid)"),
            ("'a' + '\\n'", "(+ char:97 char:10)"),
            ("\"a\\tb\"", "\"a\\tb\""),
            ("1.5", "float:1.5"),
            ("18446744073709551615", "18446744073709551615"),
            ("0x10UL + 010 + 1ll", "(+ (+ 16#ul 8#) 1ll)"),
            ("probefunc == execname", "(== probefunc execname)"),
            ("trace(curthread->pid)", "(trace (-> curthread pid))"),
        ];
        for (src, expected) in cases {
            assert_eq!(expr(src), expected, "{src:?}");
        }
        let c = clause("BEGIN { foo(a); }");
        let [Stmt { kind: StmtKind::Expr(e), .. }] = c.body.as_slice() else { panic!() };
        let ExprKind::Call { name_span, .. } = &e.kind else { panic!() };
        assert_eq!(*name_span, 8..11);
        assert_eq!(e.span, 8..14);
    }

    #[test]
    fn syntax_errors() {
        let cases = [
            ("BEGIN { x = ; }", "syntax error near \";\""),
            ("BEGIN { x = 1", "syntax error near end of input"),
            ("BEGIN { trace(\"a\" \"b\"); }", "syntax error near \"\"b\"\""),
            ("BEGIN { x = 1 y = 2; }", "syntax error near \"y = 2; }\""),
            ("BEGIN { int = 1; }", "syntax error near \"int\""),
            // No declarations among a clause's statements: `self` and
            // `this` are expressions, so the error is at the type after them.
            ("BEGIN { int i = 0; }", "syntax error near \"int\""),
            ("BEGIN { this int x; }", "syntax error near \"int\""),
            ("BEGIN { uint64_t t; }", "syntax error near \"uint64_t\""),
            ("BEGIN { for = 1; }", "syntax error near \"for\""),
            ("BEGIN { x = self; }", "syntax error near \";\""),
            ("BEGIN { (1)(2); }", "function designator is not of function type"),
            ("BEGIN { int x = 1; }", "syntax error near \"int\""),
            ("BEGIN /x/", "expected actions { } following probe description and predicate"),
            ("BEGIN, {}", "syntax error near \"{\""),
            ("{}", "syntax error near \"{\""),
            (";", "syntax error near \";\""),
            ("int x", "syntax error near end of input"),
            ("struct { int a; }", "syntax error near end of input"),
            ("struct;", "syntax error near \";\""),
            ("int long string x;", "syntax error near \"string\""),
            ("static static int x;", "only one storage class allowed in a declaration"),
            ("BEGIN { @a[] = count(); }", "syntax error near \"]\""),
            ("BEGIN { x = a ? b; }", "syntax error near \";\""),
            ("BEGIN { x = $foo; }", "macro variable $foo is not defined"),
            ("BEGIN { x = \"abc\n\"; }", "newline encountered in string literal"),
            ("BEGIN { x = \"abc", "end-of-file encountered in string literal"),
            ("BEGIN { /* x", "end-of-file encountered before matching */"),
            ("BEGIN { x = 0x1ffffffffffffffff; }", "constant 0x1ffffffffffffffff results in integer overflow"),
            ("BEGIN { x = \u{7}; }", "invalid character '\\x07'"),
            ("BEGIN { x = # 1 }", "syntax error near \"#\""),
            ("inline int x;", "syntax error near \";\""),
            ("translator psinfo_t < int > { };", "syntax error near \">\""),
        ];
        for (src, message) in cases {
            assert_eq!(error(src).message, message, "{src:?}");
        }
        let src = "BEGIN\n{\n  x = 1;\n  y = ;\n}";
        let e = error(src);
        assert_eq!((e.tag, line_of(src, e.span.start)), ("D_SYNTAX", 4));
        assert_eq!(e.span, 23..24);
        assert_eq!(error("BEGIN { x = 1").span, 13..13);
    }

    #[test]
    fn line_numbers() {
        let src = "a\nbc\n\nd";
        assert_eq!([0, 1, 2, 4, 5, 6, 100].map(|o| line_of(src, o)), [1, 1, 2, 2, 3, 4, 4]);
    }

    /// Small deterministic generator so the test needs no crates.
    const SAMPLE: &str = r#"#!/usr/sbin/dtrace -qs
#pragma D option quiet
typedef struct foo { int a; char b[4]; unsigned c : 3; } foo_t;
inline int LIMIT = 10;
translator psinfo_t < struct task_struct *T > { pr_pid = T->tgid; };
self int depth;
syscall::open*:entry, syscall::read:entry
/pid == $target && arg0 / 2 > 1/
{
    self->ts[probefunc, 1] = timestamp;
    this->p = (struct file *)arg0;
    @counts[execname, "x\n"] = count();
    if (x > 'a') { y = sizeof(int) + stringof x; } else z = xlate<psinfo_t>(curthread)->pr_pid;
    x = a ? b : c, d <<= 0x10UL;
    printf("%d %s\n", `jiffies, vmlinux`init_task.comm);
}
"#;

    #[test]
    fn random_and_truncated_inputs_do_not_panic() {
        // Every prefix of a realistic script.
        for end in 0..=SAMPLE.len() {
            if SAMPLE.is_char_boundary(end) {
                let _ = parse(&SAMPLE[..end], &is_type);
            }
        }
        assert!(parse(SAMPLE, &is_type).is_ok(), "{:?}", parse(SAMPLE, &is_type));

        // Random token soups and random byte mutations of the sample.
        let pieces = [
            "BEGIN",
            "syscall::read:entry",
            "{",
            "}",
            "(",
            ")",
            "[",
            "]",
            "/",
            "*",
            ";",
            ",",
            "=",
            "->",
            ".",
            "?",
            ":",
            "int",
            "struct",
            "self",
            "this",
            "x",
            "uint64_t",
            "\"s\"",
            "'c'",
            "0x1",
            "1.5",
            "@a",
            "$1",
            "`k",
            "#pragma D option q\n",
            "\n",
            " ",
            "if",
            "else",
            "sizeof",
            "xlate",
            "<",
            ">",
            "typedef",
            "inline",
            "translator",
            "/*",
            "*/",
            "\"",
            "'",
            "\\",
            "$",
            "@",
            "&&",
            "^^",
            "++",
            "enum",
            "{A,B}",
        ];
        let mut rng = crate::syntax::XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..600 {
            let len = rng.below(40);
            let src: String = (0..len).map(|_| pieces[rng.below(pieces.len())]).collect::<Vec<_>>().join("");
            let _ = parse(&src, &is_type);
        }
        for _ in 0..300 {
            let mut bytes = SAMPLE.as_bytes().to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len());
                match rng.below(3) {
                    0 => {
                        bytes.remove(at);
                    }
                    1 => bytes.insert(at, b"(){}[]/*;,'\"\\`$@#:?<>\n x1"[rng.below(25)]),
                    _ => bytes[at] = (rng.next() & 0x7f) as u8,
                }
            }
            let src = String::from_utf8_lossy(&bytes);
            let _ = parse(&src, &is_type);
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = [
            format!("BEGIN {{ x = {}1; }}", "(".repeat(10_000)),
            format!("BEGIN {{ x = {}1; }}", "-".repeat(10_000)),
            format!("BEGIN {{ x = {}1; }}", "(int)".repeat(10_000)),
            format!("BEGIN {{ x = {}1; }}", "a ? b : ".repeat(10_000)),
            format!("BEGIN {{ x = {}1; }}", "a = ".repeat(10_000)),
            format!("BEGIN {}", "{".repeat(10_000)),
            format!("BEGIN {{ {} }}", "if (x) ".repeat(10_000)),
            format!("int {}x;", "(".repeat(10_000)),
            format!("{}int x;", "struct { ".repeat(10_000)),
            format!("BEGIN {{ x = {}; }}", "f(".repeat(10_000)),
            format!("BEGIN {{ x = {}; }}", "a[".repeat(10_000)),
        ];
        // Run where a stack overflow would show: a 2 MiB thread.
        let on_small_stack = |src: String| {
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || parse(&src, &is_type))
                .expect("spawn")
                .join()
                .expect("no stack overflow")
        };
        for src in deep {
            let head = src[..30].to_string();
            let result = on_small_stack(src);
            assert_eq!(result.map_err(|e| e.message), Err("expression is too complex".to_string()), "{head}");
        }
        // Operator chains build trees as deep as they are long, so they are
        // bounded too, but far beyond what scripts write.
        let flat = format!("BEGIN {{ x = 1{}; }}", " + 1".repeat(900));
        assert!(on_small_stack(flat).is_ok());
        for chain in [" + 1", "[1]", "->a", ", 1"] {
            let src = format!("BEGIN {{ x = y{}; }}", chain.repeat(20_000));
            assert_eq!(on_small_stack(src).map_err(|e| e.message), Err("expression is too complex".to_string()));
        }
        // Nesting well beyond real scripts is accepted, even unoptimized.
        let nested = [
            format!("BEGIN {{ x = {}1{}; }}", "(".repeat(40), ")".repeat(40)),
            format!("BEGIN {{ x = {}{}; }}", "f(".repeat(40), ")".repeat(40)),
            format!("BEGIN {{ {}x{} }}", "if (x) { ".repeat(40), " }".repeat(40)),
            format!("{}int x;{}", "struct { ".repeat(30), " } y;".repeat(30)),
        ];
        for src in nested {
            let head = src[..30].to_string();
            assert!(on_small_stack(src).is_ok(), "{head}");
        }
    }
}
