//! The light lexer the test-integrity scanners share: it blanks comments and
//! string literals out of a source text (same length, newlines kept, so every
//! offset and line number still holds), remembers where the literals were,
//! and pairs brackets. Structure is then read from the blanked code, and
//! literal values from the original text at the remembered spans.
//!
//! One pass per file, linear in its length; delimiters are all ASCII, so
//! scanning bytes never splits a UTF-8 character, and every slice of the
//! original text goes through `str::get`.

use regions::{at, ident_end, lex_go, lex_js, lex_jvm, lex_python, lex_rust, Regions};

mod regions;

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
mod tests;
