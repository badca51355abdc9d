//! Where a text's string literals and comments are, one byte-level pass per
//! syntax (Rust, Python, Go, JavaScript, Java/Kotlin).

use super::is_ident_byte;

pub(super) fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

pub(super) fn ident_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ident_byte(b[i]) {
        i += 1;
    }
    i
}

pub(super) fn line_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

/// The end (exclusive) of a literal opened just before `i` and closed by
/// `q`, backslash escapes honoured. A single-line literal stops before an
/// unescaped newline.
pub(super) fn quoted_end(b: &[u8], mut i: usize, q: u8, multiline: bool) -> usize {
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
pub(super) fn triple_end(b: &[u8], mut i: usize, q: u8, escapes: bool) -> usize {
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

pub(super) fn block_comment_end(b: &[u8], mut i: usize, nested: bool) -> usize {
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

pub(super) fn utf8_len(lead: u8) -> usize {
    match lead {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[derive(Clone, Copy)]
pub(super) struct Region {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) string: bool,
}

pub(super) struct Regions(pub(super) Vec<Region>);

impl Regions {
    pub(super) fn string(&mut self, start: usize, end: usize) {
        self.0.push(Region {
            start,
            end,
            string: true,
        });
    }
    pub(super) fn comment(&mut self, start: usize, end: usize) {
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
pub(super) fn lex_c_like(
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
pub(super) fn string_to(out: &mut Regions, i: usize, e: usize) -> usize {
    out.string(i, e);
    e
}

pub(super) fn lex_rust(b: &[u8], out: &mut Regions) {
    lex_c_like(b, out, true, rust_token);
}

pub(super) fn rust_token(b: &[u8], i: usize, out: &mut Regions) -> usize {
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
pub(super) fn raw_end(b: &[u8], mut i: usize, hashes: usize) -> usize {
    while i < b.len() {
        if b[i] == b'"' && (1..=hashes).all(|h| at(b, i + h) == b'#') {
            return i + 1 + hashes;
        }
        i += 1;
    }
    b.len()
}

pub(super) fn lex_python(b: &[u8], out: &mut Regions) {
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

pub(super) fn python_string_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    if at(b, i + 1) == q && at(b, i + 2) == q {
        triple_end(b, i + 3, q, true)
    } else {
        quoted_end(b, i + 1, q, false)
    }
}

pub(super) fn lex_go(b: &[u8], out: &mut Regions) {
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

pub(super) fn lex_jvm(b: &[u8], out: &mut Regions) {
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
pub(super) const JS_REGEX_AFTER: &[&str] = &[
    "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
    "yield", "await",
];

/// Where lexing JavaScript stands inside template literals.
#[derive(Clone, Copy)]
pub(super) enum JsMode {
    Template,
    /// Code inside `${…}`, with its own `{` depth.
    Expr(usize),
}

pub(super) struct JsState<'b> {
    pub(super) stack: Vec<JsMode>,
    pub(super) template_start: usize,
    /// The last significant byte of code (b'a' for a word) and the last
    /// word.
    pub(super) last_sig: u8,
    pub(super) last_word: &'b [u8],
}

impl JsState<'_> {
    /// One step through a template literal's text at `i`; returns where
    /// the next step starts.
    pub(super) fn template_step(&mut self, b: &[u8], i: usize, out: &mut Regions) -> usize {
        match b[i] {
            b'\\' => i + 2,
            b'`' => {
                self.stack.pop();
                if self.stack.is_empty() {
                    out.string(self.template_start, i + 1);
                    self.last_sig = b'a';
                    self.last_word = b"";
                }
                i + 1
            }
            b'$' if at(b, i + 1) == b'{' => {
                self.stack.push(JsMode::Expr(0));
                i + 2
            }
            _ => i + 1,
        }
    }

    /// Whether a `/` here starts a regular expression (not a division).
    pub(super) fn regex_starts(&self) -> bool {
        match self.last_sig {
            0 => true,
            b'a' => JS_REGEX_AFTER.contains(&std::str::from_utf8(self.last_word).unwrap_or("")),
            s => b"(,=:[!&|?{};+-*%<>~^".contains(&s),
        }
    }
}

pub(super) fn lex_js(b: &[u8], out: &mut Regions) {
    let n = b.len();
    let mut js = JsState {
        stack: Vec::new(),
        template_start: 0,
        last_sig: 0,
        last_word: b"",
    };
    let mut i = 0;
    while i < n {
        let in_template = !js.stack.is_empty();
        if let Some(JsMode::Template) = js.stack.last() {
            i = js.template_step(b, i, out);
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
            js.last_sig = b'a';
            js.last_word = b"";
            i = e;
        } else if c == b'`' {
            if !in_template {
                js.template_start = i;
            }
            js.stack.push(JsMode::Template);
            i += 1;
        } else if c == b'{' {
            if let Some(JsMode::Expr(d)) = js.stack.last_mut() {
                *d += 1;
            }
            js.last_sig = c;
            i += 1;
        } else if c == b'}' {
            if let Some(JsMode::Expr(d)) = js.stack.last_mut() {
                if *d == 0 {
                    js.stack.pop();
                } else {
                    *d -= 1;
                }
            }
            js.last_sig = c;
            i += 1;
        } else if c == b'/' {
            if js.regex_starts() {
                let e = regex_end(b, i + 1);
                if !in_template {
                    out.string(i, e);
                }
                js.last_sig = b'a';
                js.last_word = b"";
                i = e;
            } else {
                js.last_sig = c;
                i += 1;
            }
        } else if is_ident_byte(c) {
            let e = ident_end(b, i);
            js.last_sig = b'a';
            js.last_word = &b[i..e];
            i = e;
        } else {
            if !c.is_ascii_whitespace() {
                js.last_sig = c;
            }
            i += 1;
        }
    }
    if !js.stack.is_empty() {
        out.string(js.template_start, n);
    }
}

/// The end of a regular-expression literal whose body starts at `i`; one
/// that meets a newline first ends there.
pub(super) fn regex_end(b: &[u8], mut i: usize) -> usize {
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
