//! The light lexer the test-integrity scanners share: it blanks comments and
//! string literals out of a source text (same length, newlines kept, so every
//! offset and line number still holds), remembers where the literals were,
//! and pairs brackets. Structure is then read from the blanked code, and
//! literal values from the original text at the remembered spans.
//!
//! One pass per file, linear in its length; delimiters are all ASCII, so
//! scanning bytes never splits a UTF-8 character, and every slice of the
//! original text goes through `str::get`.

/// No closing bracket (texts of 4 GiB or more are not paired at all).
const NONE: u32 = u32::MAX;

/// The lexical rules a file follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Syntax {
    Rust,
    Python,
    Go,
    Js,
    Jvm,
}

/// A source text with its comments and literals blanked out.
pub(super) struct Source<'a> {
    pub text: &'a str,
    /// The text with every byte of a comment or string literal (delimiters
    /// included) replaced by a space, newlines kept. ASCII wherever it
    /// differs from `text`.
    pub code: Vec<u8>,
    /// Spans of string (and char) literals, in order, not overlapping.
    strings: Vec<(usize, usize)>,
    /// Offset of the start of every line.
    lines: Vec<usize>,
    /// At an opening bracket, the offset of its closing one (each of `()`,
    /// `[]`, `{}` is paired on its own stack); `NONE` elsewhere.
    pairs: Vec<u32>,
    /// Tokens still to be read from this file (see [`FILE_TOKENS`]).
    budget: std::cell::Cell<usize>,
}

/// One token of an assertion: a literal value or anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tok {
    pub lit: bool,
    pub text: String,
}

/// At most this many tokens are read from one assertion.
const MAX_TOKENS: usize = 256;
/// At most this many tokens are read from one file, so that nested
/// assertions (each reading the ones inside it) cannot make the work
/// quadratic; past it, assertions are still counted but their values are
/// not compared.
const FILE_TOKENS: usize = 100_000;
/// At most this many bytes of source are read for one assertion.
const MAX_SPAN: usize = 8 * 1024;
/// A literal longer than this is compared by a hash of its text.
const MAX_LITERAL: usize = 256;

/// Words that are literal values in the languages read here.
const LITERAL_WORDS: &[&str] = &[
    "true",
    "false",
    "True",
    "False",
    "None",
    "nil",
    "null",
    "undefined",
];

pub(super) fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

fn ident_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ident_byte(b[i]) {
        i += 1;
    }
    i
}

fn line_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

/// The end (exclusive) of a literal opened just before `i` and closed by
/// `q`, backslash escapes honoured. A single-line literal stops before an
/// unescaped newline.
fn quoted_end(b: &[u8], mut i: usize, q: u8, multiline: bool) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\n' if !multiline => return i,
            c if c == q => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of a literal closed by three `q` in a row.
fn triple_end(b: &[u8], mut i: usize, q: u8, escapes: bool) -> usize {
    while i < b.len() {
        if escapes && b[i] == b'\\' {
            i += 2;
        } else if b[i] == q && at(b, i + 1) == q && at(b, i + 2) == q {
            return i + 3;
        } else {
            i += 1;
        }
    }
    b.len()
}

fn block_comment_end(b: &[u8], mut i: usize, nested: bool) -> usize {
    let mut depth = 1usize;
    while i < b.len() {
        if nested && b[i] == b'/' && at(b, i + 1) == b'*' {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && at(b, i + 1) == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[derive(Clone, Copy)]
struct Region {
    start: usize,
    end: usize,
    string: bool,
}

struct Regions(Vec<Region>);

impl Regions {
    fn string(&mut self, start: usize, end: usize) {
        self.0.push(Region {
            start,
            end,
            string: true,
        });
    }
    fn comment(&mut self, start: usize, end: usize) {
        self.0.push(Region {
            start,
            end,
            string: false,
        });
    }
}

/// The loop the C-like languages share: `//` and `/* */` comments
/// (`nested` in Rust), everything else read by the language's own `token`,
/// which records the string at `i` (if one starts there) and returns where
/// the next token starts (always past `i`).
fn lex_c_like(
    b: &[u8],
    out: &mut Regions,
    nested: bool,
    token: impl Fn(&[u8], usize, &mut Regions) -> usize,
) {
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && at(b, i + 1) == b'/' {
            let e = line_end(b, i);
            out.comment(i, e);
            i = e;
        } else if b[i] == b'/' && at(b, i + 1) == b'*' {
            let e = block_comment_end(b, i + 2, nested);
            out.comment(i, e);
            i = e;
        } else {
            i = token(b, i, out);
        }
    }
}

/// A quoted string from `i` to `e`, recorded; the next token starts at `e`.
fn string_to(out: &mut Regions, i: usize, e: usize) -> usize {
    out.string(i, e);
    e
}

fn lex_rust(b: &[u8], out: &mut Regions) {
    lex_c_like(b, out, true, rust_token);
}

fn rust_token(b: &[u8], i: usize, out: &mut Regions) -> usize {
    let n = b.len();
    let c = b[i];
    if c == b'"' {
        return string_to(out, i, quoted_end(b, i + 1, b'"', true));
    }
    if c == b'\'' {
        if at(b, i + 1) == b'\\' {
            // An escaped char literal: '\n', '\'', '\u{1F600}'.
            let mut k = i + 3;
            while k < n && k < i + 16 && b[k] != b'\'' && b[k] != b'\n' {
                k += 1;
            }
            if at(b, k) == b'\'' {
                return string_to(out, i, k + 1);
            }
            return i + 1;
        }
        let len = utf8_len(at(b, i + 1));
        if i + 1 < n && b[i + 1] != b'\'' && at(b, i + 1 + len) == b'\'' {
            return string_to(out, i, i + 2 + len);
        }
        // A lifetime or label.
        return i + 1;
    }
    if !is_ident_byte(c) {
        return i + 1;
    }
    // A string prefix: b"", c"", r"", r#""#, br#""#, cr"".
    let mut j = i;
    if c == b'b' || c == b'c' {
        j += 1;
    }
    if at(b, j) == b'r' {
        let mut k = j + 1;
        let mut hashes = 0usize;
        while at(b, k) == b'#' && hashes < 255 {
            hashes += 1;
            k += 1;
        }
        if at(b, k) == b'"' {
            return string_to(out, i, raw_end(b, k + 1, hashes));
        }
    } else if j > i && at(b, j) == b'"' {
        return string_to(out, i, quoted_end(b, j + 1, b'"', true));
    } else if j > i && at(b, j) == b'\'' && j == i + 1 && c == b'b' {
        // b'x': the char branch takes it from the quote.
        return j;
    }
    ident_end(b, i)
}

/// The end of a Rust raw string whose body starts at `i`.
fn raw_end(b: &[u8], mut i: usize, hashes: usize) -> usize {
    while i < b.len() {
        if b[i] == b'"' && (1..=hashes).all(|h| at(b, i + h) == b'#') {
            return i + 1 + hashes;
        }
        i += 1;
    }
    b.len()
}

fn lex_python(b: &[u8], out: &mut Regions) {
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c = b[i];
        if c == b'#' {
            let e = line_end(b, i);
            out.comment(i, e);
            i = e;
        } else if c == b'"' || c == b'\'' {
            let e = python_string_end(b, i);
            out.string(i, e);
            i = e;
        } else if is_ident_byte(c) {
            let e = ident_end(b, i);
            let prefix = e - i <= 2 && b[i..e].iter().all(|p| b"rRbBuUfFtT".contains(p));
            if prefix && (at(b, e) == b'"' || at(b, e) == b'\'') {
                let se = python_string_end(b, e);
                out.string(i, se);
                i = se;
            } else {
                i = e;
            }
        } else {
            i += 1;
        }
    }
}

fn python_string_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    if at(b, i + 1) == q && at(b, i + 2) == q {
        triple_end(b, i + 3, q, true)
    } else {
        quoted_end(b, i + 1, q, false)
    }
}

fn lex_go(b: &[u8], out: &mut Regions) {
    lex_c_like(b, out, false, |b, i, out| match b[i] {
        q @ (b'"' | b'\'') => string_to(out, i, quoted_end(b, i + 1, q, false)),
        b'`' => {
            let mut e = i + 1;
            while e < b.len() && b[e] != b'`' {
                e += 1;
            }
            string_to(out, i, (e + 1).min(b.len()))
        }
        _ => i + 1,
    });
}

fn lex_jvm(b: &[u8], out: &mut Regions) {
    lex_c_like(b, out, false, |b, i, out| match b[i] {
        b'"' if at(b, i + 1) == b'"' && at(b, i + 2) == b'"' => {
            string_to(out, i, triple_end(b, i + 3, b'"', true))
        }
        q @ (b'"' | b'\'') => string_to(out, i, quoted_end(b, i + 1, q, false)),
        // A Kotlin quoted name: `does the thing`.
        b'`' => string_to(out, i, quoted_end(b, i + 1, b'`', false)),
        _ => i + 1,
    });
}

/// JavaScript keywords after which a `/` starts a regular expression.
const JS_REGEX_AFTER: &[&str] = &[
    "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
    "yield", "await",
];

fn lex_js(b: &[u8], out: &mut Regions) {
    #[derive(Clone, Copy)]
    enum Mode {
        Template,
        /// Code inside `${…}`, with its own `{` depth.
        Expr(usize),
    }
    let n = b.len();
    let mut stack: Vec<Mode> = Vec::new();
    let mut template_start = 0usize;
    // The last significant byte of code (b'a' for a word) and the last word.
    let mut last_sig = 0u8;
    let mut last_word: &[u8] = b"";
    let mut i = 0;
    while i < n {
        let in_template = !stack.is_empty();
        if let Some(Mode::Template) = stack.last() {
            match b[i] {
                b'\\' => i += 2,
                b'`' => {
                    stack.pop();
                    i += 1;
                    if stack.is_empty() {
                        out.string(template_start, i);
                        last_sig = b'a';
                        last_word = b"";
                    }
                }
                b'$' if at(b, i + 1) == b'{' => {
                    stack.push(Mode::Expr(0));
                    i += 2;
                }
                _ => i += 1,
            }
            continue;
        }
        let c = b[i];
        if c == b'/' && at(b, i + 1) == b'/' {
            let e = line_end(b, i);
            if !in_template {
                out.comment(i, e);
            }
            i = e;
        } else if c == b'/' && at(b, i + 1) == b'*' {
            let e = block_comment_end(b, i + 2, false);
            if !in_template {
                out.comment(i, e);
            }
            i = e;
        } else if c == b'"' || c == b'\'' {
            let e = quoted_end(b, i + 1, c, false);
            if !in_template {
                out.string(i, e);
            }
            last_sig = b'a';
            last_word = b"";
            i = e;
        } else if c == b'`' {
            if !in_template {
                template_start = i;
            }
            stack.push(Mode::Template);
            i += 1;
        } else if c == b'{' {
            if let Some(Mode::Expr(d)) = stack.last_mut() {
                *d += 1;
            }
            last_sig = c;
            i += 1;
        } else if c == b'}' {
            if let Some(Mode::Expr(d)) = stack.last_mut() {
                if *d == 0 {
                    stack.pop();
                } else {
                    *d -= 1;
                }
            }
            last_sig = c;
            i += 1;
        } else if c == b'/' {
            let regex = match last_sig {
                0 => true,
                b'a' => JS_REGEX_AFTER.contains(&std::str::from_utf8(last_word).unwrap_or("")),
                s => b"(,=:[!&|?{};+-*%<>~^".contains(&s),
            };
            if regex {
                let e = regex_end(b, i + 1);
                if !in_template {
                    out.string(i, e);
                }
                last_sig = b'a';
                last_word = b"";
                i = e;
            } else {
                last_sig = c;
                i += 1;
            }
        } else if is_ident_byte(c) {
            let e = ident_end(b, i);
            last_sig = b'a';
            last_word = &b[i..e];
            i = e;
        } else {
            if !c.is_ascii_whitespace() {
                last_sig = c;
            }
            i += 1;
        }
    }
    if !stack.is_empty() {
        out.string(template_start, n);
    }
}

/// The end of a regular-expression literal whose body starts at `i`; one
/// that meets a newline first ends there.
fn regex_end(b: &[u8], mut i: usize) -> usize {
    let mut class = false;
    while i < b.len() {
        match b[i] {
            b'\n' => return i,
            b'\\' => i += 2,
            b'[' => {
                class = true;
                i += 1;
            }
            b']' => {
                class = false;
                i += 1;
            }
            b'/' if !class => return ident_end(b, i + 1),
            _ => i += 1,
        }
    }
    b.len()
}

/// A literal's text, or for a long one its start, length and hash.
fn literal_text(s: &str) -> String {
    use std::hash::{Hash, Hasher};
    if s.len() <= MAX_LITERAL {
        return s.to_string();
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    let mut head = 32;
    while !s.is_char_boundary(head) {
        head -= 1;
    }
    format!("{}…({} bytes, {:016x})", &s[..head], s.len(), h.finish())
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str, syntax: Syntax) -> Self {
        let b = text.as_bytes();
        let mut regions = Regions(Vec::new());
        match syntax {
            Syntax::Rust => lex_rust(b, &mut regions),
            Syntax::Python => lex_python(b, &mut regions),
            Syntax::Go => lex_go(b, &mut regions),
            Syntax::Js => lex_js(b, &mut regions),
            Syntax::Jvm => lex_jvm(b, &mut regions),
        }
        let mut code = b.to_vec();
        let mut strings = Vec::new();
        for r in &regions.0 {
            let end = r.end.min(b.len());
            for byte in &mut code[r.start.min(end)..end] {
                if *byte != b'\n' {
                    *byte = b' ';
                }
            }
            if r.string {
                strings.push((r.start, end));
            }
        }
        let mut lines = vec![0];
        lines.extend(
            b.iter()
                .enumerate()
                .filter(|(_, c)| **c == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut pairs = vec![NONE; if b.len() < NONE as usize { b.len() } else { 0 }];
        let mut stacks: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for (i, c) in code.iter().enumerate() {
            match c {
                b'(' => stacks[0].push(i),
                b'[' => stacks[1].push(i),
                b'{' => stacks[2].push(i),
                b')' | b']' | b'}' => {
                    let k = match c {
                        b')' => 0,
                        b']' => 1,
                        _ => 2,
                    };
                    if let (Some(open), Ok(close)) = (stacks[k].pop(), u32::try_from(i)) {
                        if let Some(p) = pairs.get_mut(open) {
                            *p = close;
                        }
                    }
                }
                _ => {}
            }
        }
        Source {
            text,
            code,
            strings,
            lines,
            budget: std::cell::Cell::new(FILE_TOKENS),
            pairs,
        }
    }

    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// The blanked byte at `i`, or 0 past the end.
    pub fn at(&self, i: usize) -> u8 {
        at(&self.code, i)
    }

    /// The 1-based line of offset `i`.
    pub fn line(&self, i: usize) -> u32 {
        let idx = self.lines.partition_point(|&s| s <= i);
        u32::try_from(idx.max(1)).unwrap_or(u32::MAX)
    }

    /// The offset where the line holding `i` starts.
    pub fn line_start(&self, i: usize) -> usize {
        let idx = self.lines.partition_point(|&s| s <= i);
        self.lines.get(idx.saturating_sub(1)).copied().unwrap_or(0)
    }

    /// Offsets where lines start.
    pub fn line_starts(&self) -> &[usize] {
        &self.lines
    }

    /// The closing bracket of the one opened at `open`, or the end of the
    /// text when it is never closed.
    pub fn close(&self, open: usize) -> usize {
        match self.pairs.get(open) {
            Some(&c) if c != NONE => c as usize,
            _ => self.len(),
        }
    }

    /// `text[a..b]`, or "" when that is not a valid slice.
    pub fn slice(&self, a: usize, b: usize) -> &'a str {
        self.text.get(a..b.min(self.text.len())).unwrap_or("")
    }

    /// The blanked code in `a..b`, as text.
    pub fn code_str(&self, a: usize, b: usize) -> &str {
        let b = b.min(self.code.len());
        self.code
            .get(a.min(b)..b)
            .and_then(|s| std::str::from_utf8(s).ok())
            .unwrap_or("")
    }

    /// The first offset at or after `i` that is not blank.
    pub fn skip_ws(&self, mut i: usize) -> usize {
        while i < self.code.len() && self.code[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    }

    /// The first offset at or after `i` that is not whitespace in the
    /// original text (a literal there is not skipped, unlike [`skip_ws`]).
    ///
    /// [`skip_ws`]: Source::skip_ws
    pub fn skip_space(&self, mut i: usize) -> usize {
        let b = self.text.as_bytes();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    }

    /// The last offset before `i` that is not blank, if any.
    pub fn prev_sig(&self, i: usize) -> Option<usize> {
        let mut j = i.min(self.code.len());
        while j > 0 {
            j -= 1;
            if !self.code[j].is_ascii_whitespace() {
                return Some(j);
            }
        }
        None
    }

    /// The word starting at `i` and the offset after it.
    pub fn word(&self, i: usize) -> Option<(&'a str, usize)> {
        if !is_ident_byte(self.at(i)) {
            return None;
        }
        let e = ident_end(&self.code, i);
        let w = self.text.get(i..e)?;
        Some((w, e))
    }

    /// The word ending just before `i` (as for the receiver of `x.f`).
    pub fn word_before(&self, i: usize) -> &'a str {
        let mut s = i.min(self.code.len());
        while s > 0 && is_ident_byte(self.code[s - 1]) {
            s -= 1;
        }
        self.slice(s, i)
    }

    /// The string literal starting at `i`, as (start, end).
    pub fn string_at(&self, i: usize) -> Option<(usize, usize)> {
        let k = self.strings.partition_point(|&(s, _)| s < i);
        self.strings.get(k).copied().filter(|&(s, _)| s == i)
    }

    /// Whether offset `i` is inside a string literal (not at its start).
    pub fn inside_string(&self, i: usize) -> bool {
        let k = self.strings.partition_point(|&(s, _)| s < i);
        k > 0 && self.strings[k - 1].1 > i
    }

    /// The top-level comma-separated parts of the bracket group opened at
    /// `open`, as spans.
    pub fn args(&self, open: usize) -> Vec<(usize, usize)> {
        let close = self.close(open);
        let mut out = Vec::new();
        let mut start = open + 1;
        let mut i = open + 1;
        while i < close {
            match self.code[i] {
                b'(' | b'[' | b'{' => i = self.close(i).max(i) + 1,
                b',' => {
                    out.push((start, i));
                    start = i + 1;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        // A last part may be a literal alone (blank in `code`).
        let literal = {
            let k = self.strings.partition_point(|&(_, e)| e <= start);
            self.strings.get(k).is_some_and(|&(s, _)| s < close)
        };
        if self.skip_ws(start) < close || literal {
            out.push((start, close.min(self.len())));
        }
        out
    }

    /// The tokens of `a..b`, literals told apart; a `-` before a number
    /// that cannot be a subtraction belongs to the number.
    pub fn tokens(&self, a: usize, b: usize, out: &mut Vec<Tok>) {
        let b = b.min(self.code.len()).min(a.saturating_add(MAX_SPAN));
        let budget = self.budget.get();
        let limit = out.len() + MAX_TOKENS.min(budget);
        let before = out.len();
        self.read_tokens(a, b, limit, out);
        self.budget
            .set(budget.saturating_sub(out.len().saturating_sub(before)));
    }

    fn read_tokens(&self, a: usize, b: usize, limit: usize, out: &mut Vec<Tok>) {
        let mut k = self.strings.partition_point(|&(_, e)| e <= a);
        let mut i = a;
        while i < b && out.len() < limit {
            if let Some(&(s, e)) = self.strings.get(k) {
                if s <= i {
                    out.push(Tok {
                        lit: true,
                        text: literal_text(self.slice(s, e)),
                    });
                    i = e.max(i + 1);
                    k += 1;
                    continue;
                }
            }
            let c = self.code[i];
            if c.is_ascii_whitespace() {
                i += 1;
            } else if is_ident_byte(c) {
                let mut e = ident_end(&self.code, i);
                let number = c.is_ascii_digit();
                if number {
                    // 1.5, 1e-3: a number runs on through dots and exponent signs.
                    while e < b
                        && (is_ident_byte(self.code[e])
                            || self.code[e] == b'.'
                            || (matches!(self.code[e], b'+' | b'-')
                                && matches!(self.code[e - 1], b'e' | b'E')))
                    {
                        e += 1;
                    }
                }
                let word = self.slice(i, e);
                let lit = number || LITERAL_WORDS.contains(&word);
                let negate = lit
                    && number
                    && out.last().is_some_and(|t| !t.lit && t.text == "-")
                    && out.len().checked_sub(2).is_none_or(|p| {
                        let t = &out[p];
                        !t.lit
                            && !t.text.bytes().all(is_ident_byte)
                            && !matches!(t.text.as_str(), ")" | "]")
                    });
                if negate {
                    out.pop();
                    out.push(Tok {
                        lit: true,
                        text: format!("-{word}"),
                    });
                } else {
                    out.push(Tok {
                        lit,
                        text: word.to_string(),
                    });
                }
                i = e.max(i + 1);
            } else {
                out.push(Tok {
                    lit: false,
                    text: (c as char).to_string(),
                });
                i += 1;
            }
        }
    }

    /// Every token of the whole text as `(start, end, literal)`: a string
    /// or char literal whole, a word (letters, digits, `_`, `$`), or one
    /// byte of punctuation; comments and whitespace are not tokens. Unlike
    /// [`tokens`](Source::tokens) it has no budget and no span limit.
    pub(super) fn spans(&self) -> Vec<(usize, usize, bool)> {
        let mut out = Vec::new();
        let mut k = 0;
        let mut i = 0;
        let n = self.code.len();
        while i < n {
            if let Some(&(s, e)) = self.strings.get(k) {
                if s <= i {
                    out.push((s, e, true));
                    i = e.max(i + 1);
                    k += 1;
                    continue;
                }
            }
            let c = self.code[i];
            if c.is_ascii_whitespace() {
                i += 1;
            } else if is_ident_byte(c) {
                let e = ident_end(&self.code, i);
                out.push((i, e, false));
                i = e;
            } else {
                out.push((i, i + 1, false));
                i += 1;
            }
        }
        out
    }

    /// The end of a method chain after a call closed at `close`:
    /// `expect(x).not.toBe(1)` runs on to the last `)`.
    pub fn chain_end(&self, close: usize) -> usize {
        let mut end = close + 1;
        for _ in 0..32 {
            let dot = self.skip_ws(end);
            if self.at(dot) != b'.' {
                break;
            }
            let Some((_, after)) = self.word(self.skip_ws(dot + 1)) else {
                break;
            };
            let paren = self.skip_ws(after);
            end = if self.at(paren) == b'(' {
                self.close(paren) + 1
            } else {
                after
            };
        }
        end.min(self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str, syntax: Syntax) -> String {
        String::from_utf8(Source::new(text, syntax).code).unwrap()
    }

    #[test]
    fn rust_comments_strings_and_raw_strings_are_blanked() {
        let src = "a /* b /* c */ d */ e \"{\\\"}\" r#\"x\"}\"# f // g\n'{' 'a h";
        let c = code(src, Syntax::Rust);
        assert_eq!(c.len(), src.len());
        assert!(!c.contains('{'), "{c}");
        assert!(
            c.contains(" e ") && c.contains(" f ") && c.contains("'a h"),
            "{c}"
        );
        assert!(!c.contains('g') && !c.contains('x'), "{c}");
    }

    #[test]
    fn python_triple_quotes_and_prefixes() {
        let c = code("x = rb'''a\n}'''\ny = f\"{z}\" # c\n", Syntax::Python);
        let blank = |n| " ".repeat(n);
        assert_eq!(
            c,
            format!("x ={}\n{}\ny ={}\n", blank(7), blank(4), blank(11))
        );
    }

    #[test]
    fn js_templates_nest_and_regexes_are_literals() {
        let c = code("a(`x${b ? `}` : '{'}y`, /[/{]/g, c / d)", Syntax::Js);
        assert!(!c.contains('{') && c.contains("c / d"), "{c}");
    }

    #[test]
    fn tokens_tell_literals_and_keep_negative_numbers() {
        let s = Source::new("f(x, -1, \"s\", a - 2, true)", Syntax::Rust);
        let mut t = Vec::new();
        s.tokens(0, s.len(), &mut t);
        let lits: Vec<&str> = t
            .iter()
            .filter(|t| t.lit)
            .map(|t| t.text.as_str())
            .collect();
        assert_eq!(lits, ["-1", "\"s\"", "2", "true"]);
    }

    #[test]
    fn hostile_text_does_not_panic() {
        for src in [
            "'",
            "\"",
            "r#",
            "r#\"",
            "'\\",
            "b'",
            "/*",
            "`${",
            "`${`",
            "é'é",
            "'é",
            "(((",
            ")))",
            "'\\u{",
            "#[",
            "\u{feff}'x",
        ] {
            for syntax in [
                Syntax::Rust,
                Syntax::Python,
                Syntax::Go,
                Syntax::Js,
                Syntax::Jvm,
            ] {
                let s = Source::new(src, syntax);
                let mut t = Vec::new();
                s.tokens(0, s.len(), &mut t);
                let _ = s.args(0);
                let _ = s.chain_end(0);
                let _ = s.line(s.len());
            }
        }
    }

    #[test]
    fn a_last_argument_that_is_a_literal_alone_is_an_argument() {
        let parts = |text: &str, syntax: Syntax| {
            let s = Source::new(text, syntax);
            let open = text.find('(').unwrap();
            s.args(open)
                .into_iter()
                .map(|(a, b)| text[a..b].trim().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(parts("f(x, 'abc')", Syntax::Python), ["x", "'abc'"]);
        assert_eq!(parts("f(\"abc\")", Syntax::Rust), ["\"abc\""]);
        assert_eq!(
            parts("f(x, \"a\" /* c */)", Syntax::Rust),
            ["x", "\"a\" /* c */"]
        );
        assert_eq!(parts("f(x, /* c */)", Syntax::Rust), ["x"]);
        assert_eq!(parts("f(x,)", Syntax::Rust), ["x"]);
        assert_eq!(parts("f()", Syntax::Rust), Vec::<String>::new());
    }
}
