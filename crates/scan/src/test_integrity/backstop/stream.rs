//! The token stream the backstop rules read: a file's tokens (comments and
//! whitespace dropped, a string literal one token), brackets paired, and
//! literal values.

use super::super::lex::Source;
use super::super::lex::Syntax;
use super::Lang;

#[derive(Debug, Clone, Copy)]
pub(super) struct Tk<'a> {
    pub(super) s: usize,
    pub(super) e: usize,
    pub(super) text: &'a str,
    pub(super) lit: bool,
}

pub(super) struct Stream<'a> {
    pub(super) src: Source<'a>,
    pub(super) t: Vec<Tk<'a>>,
    /// At an opening bracket, the index of its closing one (`t.len()` when
    /// never closed); the token's own index elsewhere.
    pub(super) close: Vec<usize>,
    /// Python: the token starts a logical line (or follows a `;`).
    pub(super) starts: Vec<bool>,
    /// Bracket depth at each token (before it, for an opening one).
    pub(super) depth: Vec<u32>,
}

impl<'a> Stream<'a> {
    pub(super) fn new(text: &'a str, lang: Lang) -> Self {
        let syntax = match lang {
            Lang::Rust => Syntax::Rust,
            Lang::Python => Syntax::Python,
            // C's literals and comments read like Go's (no nesting, no raw
            // strings to speak of).
            Lang::Go | Lang::C => Syntax::Go,
        };
        let src = Source::new(text, syntax);
        let raw = src.spans();
        let mut t: Vec<Tk<'a>> = Vec::with_capacity(raw.len());
        // Python: tokens that follow a line continuation (`\` at a line's
        // end, itself not a token).
        let mut continued: Vec<bool> = Vec::new();
        let mut pending = false;
        let mut k = 0;
        while k < raw.len() {
            let (s, e, lit) = raw[k];
            if lang == Lang::Python && !lit && src.slice(s, e) == "\\" {
                let rest = src.slice(e, e + 2);
                if rest.starts_with('\n') || rest == "\r\n" {
                    pending = true;
                    k += 1;
                    continue;
                }
            }
            if lang == Lang::Python {
                continued.push(pending);
                pending = false;
            }
            // A Rust raw identifier `r#name` reads as `name`.
            if lang == Lang::Rust && !lit && src.slice(s, e) == "r" {
                if let (Some(&(hs, he, false)), Some(&(ns, ne, false))) =
                    (raw.get(k + 1), raw.get(k + 2))
                {
                    if hs == e && src.slice(hs, he) == "#" && ns == he && is_word(src.slice(ns, ne))
                    {
                        t.push(Tk {
                            s,
                            e: ne,
                            text: src.slice(ns, ne),
                            lit: false,
                        });
                        k += 3;
                        continue;
                    }
                }
            }
            t.push(Tk {
                s,
                e,
                text: src.slice(s, e),
                lit,
            });
            k += 1;
        }
        let n = t.len();
        let mut close: Vec<usize> = (0..n).collect();
        let mut depth = vec![0u32; n];
        let mut stacks: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        let mut d = 0u32;
        for i in 0..n {
            depth[i] = d;
            if t[i].lit {
                continue;
            }
            let kind = match t[i].text {
                "(" | ")" => 0,
                "[" | "]" => 1,
                "{" | "}" => 2,
                _ => continue,
            };
            if matches!(t[i].text, "(" | "[" | "{") {
                close[i] = n;
                stacks[kind].push(i);
                d += 1;
            } else if let Some(open) = stacks[kind].pop() {
                close[open] = i;
                d = d.saturating_sub(1);
                depth[i] = d;
            }
        }
        let mut starts = vec![false; n];
        if lang == Lang::Python {
            for i in 0..n {
                starts[i] = i == 0
                    || (depth[i] == 0
                        && (t[i - 1].text == ";" && !t[i - 1].lit
                            || (src.line(t[i - 1].e.saturating_sub(1)) < src.line(t[i].s)
                                && !continued[i])));
            }
        }
        Stream {
            src,
            t,
            close,
            starts,
            depth,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.t.len()
    }

    /// Whether token `i` is the code (not literal) `s`.
    pub(super) fn is(&self, i: usize, s: &str) -> bool {
        self.t.get(i).is_some_and(|t| !t.lit && t.text == s)
    }

    /// The word (identifier or keyword) at `i`.
    pub(super) fn word(&self, i: usize) -> Option<&'a str> {
        self.t
            .get(i)
            .filter(|t| !t.lit && is_word(t.text))
            .map(|t| t.text)
    }

    /// `::` at `i`.
    pub(super) fn path_sep(&self, i: usize) -> bool {
        self.is(i, ":") && self.is(i + 1, ":") && self.t[i].e == self.t[i + 1].s
    }

    /// The token after the group opened at `i` (or after `i`).
    pub(super) fn after(&self, i: usize) -> usize {
        match self.t.get(i) {
            Some(t) if !t.lit && matches!(t.text, "(" | "[" | "{") => {
                self.close[i].saturating_add(1).min(self.len())
            }
            _ => i + 1,
        }
    }

    /// The top-level comma-separated parts of the group opened at `open`,
    /// as token ranges.
    pub(super) fn args(&self, open: usize) -> Vec<(usize, usize)> {
        let end = self
            .close
            .get(open)
            .copied()
            .unwrap_or(open)
            .min(self.len());
        let mut out = Vec::new();
        let mut start = open + 1;
        let mut i = open + 1;
        while i < end {
            if self.is(i, ",") {
                out.push((start, i));
                start = i + 1;
                i += 1;
            } else {
                i = self.after(i);
            }
        }
        if start < end {
            out.push((start, end));
        }
        out
    }

    /// The value of tokens `a..b` when they are only literals joined by
    /// `+`, adjacency, parentheses or `concat!(…, …)`: the value and the
    /// number of literals it was built from.
    pub(super) fn lit_eval(&self, a: usize, b: usize) -> Option<(String, usize)> {
        let mut out = String::new();
        let mut pieces = 0;
        let mut i = a;
        while i < b.min(self.len()) {
            let t = self.t[i];
            if t.lit {
                let prefix = t.text.split(['"', '\'', '`']).next().unwrap_or("");
                let v = lit_value(t.text);
                if prefix.contains(['f', 'F']) && v.contains('{') {
                    return None;
                }
                out.push_str(&v);
                pieces += 1;
                i += 1;
            } else if matches!(t.text, "+" | "(" | ")")
                || (t.text == "," && pieces > 0)
                || (t.text == "concat" && self.is(i + 1, "!"))
            {
                i += if t.text == "concat" { 2 } else { 1 };
            } else {
                return None;
            }
        }
        (pieces > 0).then_some((out, pieces))
    }
}

pub(super) fn is_word(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(|c| super::super::lex::is_ident_byte(c) && !c.is_ascii_digit())
}

/// The value of a literal token: quotes, prefixes and raw-string hashes
/// taken off, escapes decoded (not in raw strings).
pub(super) fn lit_value(text: &str) -> String {
    let Some(q) = text.find(['"', '\'', '`']) else {
        return text.to_string();
    };
    let prefix = &text[..q];
    let raw = prefix.contains(['r', 'R']) || text[q..].starts_with('`');
    let mut body = &text[q..];
    // Rust raw strings: r#"…"#.
    let hashes = body.len() - body.trim_start_matches('#').len();
    if hashes > 0 {
        body = body.trim_start_matches('#');
        body = body.strip_suffix(&"#".repeat(hashes)[..]).unwrap_or(body);
    }
    let quote = body.chars().next().unwrap_or('"');
    let triple = quote.to_string().repeat(3);
    let inner = if body.len() >= 6 && body.starts_with(&triple) && body.ends_with(&triple) {
        &body[3..body.len() - 3]
    } else {
        let b = body.strip_prefix(quote).unwrap_or(body);
        b.strip_suffix(quote).unwrap_or(b)
    };
    if raw {
        inner.to_string()
    } else {
        unescape(inner)
    }
}

pub(super) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    let hex = |it: &mut std::iter::Peekable<std::str::Chars>, n: usize| {
        let mut v = 0u32;
        for _ in 0..n {
            match it.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    v = v * 16 + d;
                    it.next();
                }
                None => break,
            }
        }
        char::from_u32(v).unwrap_or('\u{fffd}')
    };
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\n') => {}
            Some(d @ '0'..='7') => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            v = v * 8 + x;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            Some('x') => out.push(hex(&mut it, 2)),
            Some('u') if it.peek() == Some(&'{') => {
                it.next();
                let mut v = String::new();
                for c in it.by_ref() {
                    if c == '}' {
                        break;
                    }
                    v.push(c);
                }
                let v = u32::from_str_radix(&v.replace('_', ""), 16).unwrap_or(0xfffd);
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            Some('u') => out.push(hex(&mut it, 4)),
            Some('U') => out.push(hex(&mut it, 8)),
            Some(o) => out.push(o),
            None => out.push('\\'),
        }
    }
    out
}
