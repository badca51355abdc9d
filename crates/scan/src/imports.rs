//! New-import detection for Layer 4 `forbidden-import`: which modules a
//! change imports on its ADDED lines, for Go, Rust, Python and
//! JavaScript/TypeScript (chosen by file extension).
//!
//! This is a scanner, not a parser: it only sees added lines (unchanged
//! context is not in the ChangeSet), so it errs towards reporting.
//! - Go: any added line shaped like an import spec (`"os/exec"`,
//!   `e "os/exec"`, `_ "x"`) counts, even when the `import (` line is
//!   unchanged context, because such a line is not valid Go elsewhere.
//! - Rust: `use` trees accumulated up to the `;` and expanded (`use std::{fs,
//!   process::Command}` yields `std::fs`, `std::process::Command`),
//!   `extern crate`, and fully qualified paths used without any `use`
//!   (`std::process::Command::new("id")`, `::std::process::exit(0)`, also
//!   split over lines). A Rust import reaches what is below it (`use std
//!   as s;` then `s::process::…`, `use std::*;` then `process::…`), so the
//!   permissions layer matches it against forbidden entries below it too.
//! - Python: `import a.b as c`, `from x import y` (yields `x` and `x.y`,
//!   over parenthesised or continued lines; `from x import *` yields
//!   `x.*`, which reaches everything in `x`), `__import__("x")`,
//!   `importlib.import_module("x")` (also with `name=`), and the literal
//!   code given to `exec` / `eval` / `compile`.
//! - JavaScript/TypeScript: `import … from "x"`, `export … from "x"` (the
//!   `from "x"` may be on any line), `import "x"`, `import("x")`,
//!   `require("x")`, `require.resolve("x")`, and the literal code given
//!   to `eval` / `Function`; `node:` prefixes are stripped.
//!
//! Comments and string literals are masked before matching (Rust, Python,
//! JS/TS), so `// std::process::exit` or `"require('child_process')"` are
//! not imports — but the module name of `require("x")` is read from its
//! string, and the code inside `${…}` of a JS template and `{…}` of a
//! Python f-string is code. Masking follows strings and comments across
//! the consecutive added lines of a hunk. A hunk that does not start at
//! line 1 may continue a string or comment opened above it in unchanged
//! context, which would invert what is code, so it is also scanned from
//! each such state (errs towards reporting); so is a JS `/` that could
//! start a regular expression or be a division. Not seen: computed module
//! names (`require(name)`, `__import__(f"o{s}")`), code that reaches a
//! module through a value (`getattr`, an aliased `require`), and paths
//! built by Rust macros.

use crate::model::changeset::{FileChange, Operation};
use regex::Regex;
use std::sync::OnceLock;

/// Source languages the scanner understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Go,
    Rust,
    Python,
    JavaScript,
}

/// The language of a path, by extension (case-insensitive).
pub fn lang_of(path: &str) -> Option<Lang> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    match ext.as_str() {
        "go" => Some(Lang::Go),
        "rs" => Some(Lang::Rust),
        "py" | "pyi" | "pyw" => Some(Lang::Python),
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" | "vue" | "svelte" => {
            Some(Lang::JavaScript)
        }
        _ => None,
    }
}

/// Whether an import of `module` in `path` also reaches what is below it:
/// every Rust import (a module's items are reachable through it), and a
/// glob (`x.*`, `x::*`) in any language.
pub fn reaches_below(path: &str, module: &str) -> bool {
    lang_of(path) == Some(Lang::Rust) || module.ends_with(".*") || module.ends_with("::*")
}

/// Longest Rust `use` statement (bytes) accumulated across lines.
const MAX_STMT: usize = 64 * 1024;
/// Deepest brace nesting expanded in a Rust use tree.
const MAX_DEPTH: usize = 32;
/// How deep literal code given to `exec` / `eval` is scanned.
const MAX_EVAL_DEPTH: usize = 3;

/// The modules newly imported by a change's added lines, with the line
/// number of the line that completes the import statement.
pub fn new_imports(change: &FileChange) -> Vec<(u32, String)> {
    if change.binary || change.op == Operation::Delete || change.added_lines.is_empty() {
        return Vec::new();
    }
    let Some(lang) = lang_of(&change.path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if lang == Lang::Go {
        go(change, &mut out);
    } else {
        for hunk in hunks(change) {
            let known_start = hunk.first().is_some_and(|(n, _)| *n <= 1);
            for start in start_states(lang, known_start) {
                let scan = Scan::new(&hunk, lang, start.clone());
                match lang {
                    Lang::Rust => rust(&scan, &mut out),
                    Lang::Python => python(&scan, 0, &mut out),
                    _ => {
                        js(&scan, 0, &mut out);
                        // A `/` that may start a regex or be a division:
                        // read the hunk the other way too.
                        if scan.ambiguous_slash {
                            let other = MaskState {
                                slash_after_close_is_regex: true,
                                ..start
                            };
                            js(&Scan::new(&hunk, lang, other), 0, &mut out);
                        }
                    }
                }
            }
        }
    }
    out.retain(|(_, m)| !m.is_empty());
    // In line order; each import once (the scans from several states
    // find the same ones).
    out.sort_by_key(|(l, _)| *l);
    let mut seen = std::collections::HashSet::new();
    out.retain(|x| seen.insert(x.clone()));
    out
}

/// Runs of consecutive added lines, as (line number, text).
fn hunks(change: &FileChange) -> Vec<Vec<(u32, &str)>> {
    let mut out: Vec<Vec<(u32, &str)>> = Vec::new();
    let mut last = None;
    for l in &change.added_lines {
        let text = clean(&l.text);
        match out.last_mut() {
            Some(h) if last.is_some_and(|n: u32| n.checked_add(1) == Some(l.line)) => {
                h.push((l.line, text))
            }
            _ => out.push(vec![(l.line, text)]),
        }
        last = Some(l.line);
    }
    out
}

fn clean(text: &str) -> &str {
    text.trim_end_matches(['\r', '\n']).trim()
}

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("static regex"))
}

// ---------------------------------------------------------------- masking

/// What a byte of a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Code,
    Str,
    Comment,
}

/// An open construct of the lexer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ctx {
    /// A string literal (or JS regex) closed by `close`. `subst` opens code
    /// inside it (`${` in a JS template, `{` in a Python f-string);
    /// a string that is not `multiline` ends at the end of its line
    /// unless the line ends with a backslash.
    Str {
        close: String,
        escapes: bool,
        multiline: bool,
        subst: Option<&'static str>,
    },
    /// A `/* … */` comment.
    Block,
    /// Code inside a string's substitution, `depth` braces deep.
    Subst { depth: u32 },
}

impl Ctx {
    fn string(close: &str, escapes: bool, multiline: bool, subst: Option<&'static str>) -> Ctx {
        Ctx::Str {
            close: close.to_string(),
            escapes,
            multiline,
            subst,
        }
    }
}

/// The lexer's state between lines.
#[derive(Debug, Clone, Default)]
struct MaskState {
    stack: Vec<Ctx>,
    /// JS: the last code character and word, to tell a regex from a division.
    prev: Option<char>,
    prev_word: String,
    /// JS: a `/` whose meaning depends on what came before (after `)`,
    /// `]`, `}` or at the start of a hunk) starts a regex.
    slash_after_close_is_regex: bool,
    /// JS: such a `/` was met.
    ambiguous_slash: bool,
}

/// The states a hunk may start in. A hunk at line 1 starts in code; any
/// other may continue a string or comment of the unchanged lines above.
fn start_states(lang: Lang, known: bool) -> Vec<MaskState> {
    let code = MaskState::default();
    let mut out = vec![code.clone()];
    if known {
        return out;
    }
    let ctxs: Vec<Ctx> = match lang {
        Lang::Rust => vec![
            Ctx::string("\"", true, true, None),
            Ctx::string("\"", false, true, None),
            Ctx::string("\"#", false, true, None),
            Ctx::string("\"##", false, true, None),
            Ctx::Block,
        ],
        Lang::Python => vec![
            Ctx::string("\"\"\"", true, true, None),
            Ctx::string("'''", true, true, None),
            Ctx::string("\"\"\"", true, true, Some("{")),
            Ctx::string("'''", true, true, Some("{")),
            Ctx::string("\"", true, false, None),
            Ctx::string("'", true, false, None),
        ],
        Lang::JavaScript => vec![
            Ctx::string("`", true, true, Some("${")),
            Ctx::string("\"", true, false, None),
            Ctx::string("'", true, false, None),
            Ctx::Block,
        ],
        Lang::Go => vec![],
    };
    out.extend(ctxs.into_iter().map(|c| MaskState {
        stack: vec![c],
        ..code.clone()
    }));
    out
}

/// One line, classified byte by byte: `code` has everything but code
/// blanked, `scan` only the comments; both keep the line's byte offsets.
struct Masked {
    code: String,
    scan: String,
    class: Vec<Class>,
}

impl Masked {
    #[cfg(test)]
    fn code_at(&self, byte: usize) -> bool {
        self.class.get(byte) == Some(&Class::Code)
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Words after which a JS `/` starts a regular expression.
const JS_REGEX_AFTER: &[&str] = &[
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
    "instanceof",
];

/// Mask one line from a fresh state (tests).
#[cfg(test)]
fn mask(text: &str, lang: Lang) -> Masked {
    mask_line(text, lang, &mut MaskState::default())
}

/// Classify one line, continuing (and updating) `st`. Go is never masked.
fn mask_line(text: &str, lang: Lang, st: &mut MaskState) -> Masked {
    let mut line = LineMask::new(text, lang);
    let mut i = 0;
    while i < line.chars.len() {
        if let Some(next) = line.step_inside(st, i) {
            i = next;
            continue;
        }
        match line.step_code(st, i) {
            Some(next) => i = next,
            None => break,
        }
    }
    end_one_line_strings(text, st);
    line.render(text)
}

/// A one-line string still open at the end of its line ends there,
/// unless a backslash continues it.
fn end_one_line_strings(text: &str, st: &mut MaskState) {
    if text.ends_with('\\') {
        return;
    }
    if let Some(k) = st.stack.iter().position(|c| {
        matches!(
            c,
            Ctx::Str {
                multiline: false,
                ..
            }
        )
    }) {
        st.stack.truncate(k);
    }
}

/// One line being classified: its characters and each byte's class.
struct LineMask {
    chars: Vec<(usize, char)>,
    class: Vec<Class>,
    lang: Lang,
}

impl LineMask {
    /// A line of `lang`, every byte code until classified otherwise.
    fn new(text: &str, lang: Lang) -> LineMask {
        LineMask {
            chars: text.char_indices().collect(),
            class: vec![Class::Code; text.len()],
            lang,
        }
    }

    /// The character at index `i`, if any.
    fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).map(|&(_, c)| c)
    }

    /// The characters from index `i` on start with `pat`.
    fn starts(&self, i: usize, pat: &str) -> bool {
        pat.chars()
            .enumerate()
            .all(|(k, p)| self.at(i + k) == Some(p))
    }

    /// Mark chars[from..to) as `k`.
    fn mark(&mut self, from: usize, to: usize, k: Class) {
        let n = self.chars.len();
        for &(b, c) in &self.chars[from.min(n)..to.min(n)] {
            for x in &mut self.class[b..b + c.len_utf8()] {
                *x = k;
            }
        }
    }

    /// Inside a block comment, a string or a substitution's braces: one
    /// step, to the next index; None when the character is code.
    fn step_inside(&mut self, st: &mut MaskState, i: usize) -> Option<usize> {
        let c = self.chars[i].1;
        match st.stack.last().cloned() {
            Some(Ctx::Block) => {
                if self.starts(i, "*/") {
                    self.mark(i, i + 2, Class::Comment);
                    st.stack.pop();
                    Some(i + 2)
                } else {
                    self.mark(i, i + 1, Class::Comment);
                    Some(i + 1)
                }
            }
            Some(Ctx::Str {
                close,
                escapes,
                subst,
                ..
            }) => {
                // An escape, or `{{` in an f-string: two characters of text.
                if (escapes && c == '\\') || (subst == Some("{") && self.starts(i, "{{")) {
                    self.mark(i, i + 2, Class::Str);
                    Some(i + 2)
                } else if let Some(open) = subst.filter(|o| self.starts(i, o)) {
                    let n = open.chars().count();
                    self.mark(i, i + n, Class::Str);
                    st.stack.push(Ctx::Subst { depth: 0 });
                    Some(i + n)
                } else if self.starts(i, &close) {
                    let n = close.chars().count();
                    self.mark(i, i + n, Class::Str);
                    st.stack.pop();
                    Some(i + n)
                } else {
                    self.mark(i, i + 1, Class::Str);
                    Some(i + 1)
                }
            }
            Some(Ctx::Subst { depth }) if c == '{' || c == '}' => {
                let top = st.stack.len() - 1;
                match (c, depth) {
                    ('}', 0) => {
                        st.stack.pop();
                        self.mark(i, i + 1, Class::Str);
                    }
                    ('}', d) => st.stack[top] = Ctx::Subst { depth: d - 1 },
                    (_, d) => st.stack[top] = Ctx::Subst { depth: d + 1 },
                }
                Some(i + 1)
            }
            _ => None,
        }
    }

    /// One step of code: a comment, regex, string or character literal
    /// opens, or the character is code. The next index; None at a line
    /// comment (the rest of the line).
    fn step_code(&mut self, st: &mut MaskState, i: usize) -> Option<usize> {
        let c = self.chars[i].1;
        let lang = self.lang;
        let c_like = matches!(lang, Lang::Rust | Lang::JavaScript);
        let prev_ident = i > 0 && is_ident(self.chars[i - 1].1);
        if (c_like && self.starts(i, "//")) || (lang == Lang::Python && c == '#') {
            self.mark(i, self.chars.len(), Class::Comment);
            return None;
        }
        if c_like && self.starts(i, "/*") {
            self.mark(i, i + 2, Class::Comment);
            st.stack.push(Ctx::Block);
            return Some(i + 2);
        }
        if lang == Lang::JavaScript && c == '/' {
            if let Some(end) = js_regex_end(&self.chars, i, st) {
                self.mark(i, end, Class::Str);
                st.prev = Some('/');
                st.prev_word.clear();
                return Some(end);
            }
        }
        if lang == Lang::Rust && c == 'r' {
            if let Some(next) = self.rust_raw_string(st, i) {
                return Some(next);
            }
        }
        if lang == Lang::Rust && c == '\'' {
            return Some(self.rust_char(i));
        }
        if let Some(ctx) = self.opened_string(i) {
            let n = match &ctx {
                Ctx::Str { close, .. } if close.len() == 3 => 3,
                _ => 1,
            };
            self.mark(i, i + n, Class::Str);
            st.stack.push(ctx);
            return Some(i + n);
        }
        if !c.is_whitespace() {
            if is_ident(c) {
                if !prev_ident {
                    st.prev_word.clear();
                }
                st.prev_word.push(c);
            } else {
                st.prev_word.clear();
            }
            st.prev = Some(c);
        }
        Some(i + 1)
    }

    /// Rust raw strings: r"…", r#"…"#, br"…", cr"…" — at the `r` (not
    /// inside an identifier, unless a `b`/`c` prefix): the opening marked,
    /// the string pushed, the index after it.
    fn rust_raw_string(&mut self, st: &mut MaskState, i: usize) -> Option<usize> {
        let chars = &self.chars;
        let prev_ident = i > 0 && is_ident(chars[i - 1].1);
        let prefixed =
            i > 0 && matches!(chars[i - 1].1, 'b' | 'c') && !(i >= 2 && is_ident(chars[i - 2].1));
        if prev_ident && !prefixed {
            return None;
        }
        let mut j = i + 1;
        while self.at(j) == Some('#') {
            j += 1;
        }
        if self.at(j) != Some('"') {
            return None;
        }
        let close: String = std::iter::once('"')
            .chain(std::iter::repeat_n('#', j - i - 1))
            .collect();
        self.mark(i, j + 1, Class::Str);
        st.stack.push(Ctx::string(&close, false, true, None));
        Some(j + 1)
    }

    /// Rust char literals ('x', '\n', '\u{1F600}'), marked; anything else
    /// is a lifetime. The index after it.
    fn rust_char(&mut self, i: usize) -> usize {
        let end = if self.at(i + 1) == Some('\\') {
            (i + 2..(i + 12).min(self.chars.len()))
                .find(|&k| self.at(k) == Some('\''))
                .map(|k| k + 1)
        } else if self.at(i + 2) == Some('\'') && self.at(i + 1).is_some() {
            Some(i + 3)
        } else {
            None
        };
        match end {
            Some(end) => {
                self.mark(i, end, Class::Str);
                end
            }
            None => i + 1,
        }
    }

    /// The string a quote at `i` opens, in this language (Python: with
    /// its triple quotes and f-string substitutions).
    fn opened_string(&self, i: usize) -> Option<Ctx> {
        let chars = &self.chars;
        let c = chars[i].1;
        match (self.lang, c) {
            (Lang::Rust, '"') => Some(Ctx::string("\"", true, true, None)),
            (Lang::JavaScript, '"' | '\'') => Some(Ctx::string(&c.to_string(), true, false, None)),
            (Lang::JavaScript, '`') => Some(Ctx::string("`", true, true, Some("${"))),
            (Lang::Python, '"' | '\'') => {
                let triple: String = std::iter::repeat_n(c, 3).collect();
                // The prefix letters just before the quote: f"…", rf'…'.
                let mut k = i;
                while k > 0 && chars[k - 1].1.is_ascii_alphabetic() && i - k < 2 {
                    k -= 1;
                }
                let f_string = (k == 0 || !is_ident(chars[k - 1].1))
                    && chars[k..i].iter().any(|&(_, p)| p == 'f' || p == 'F');
                let subst = f_string.then_some("{");
                Some(if self.starts(i, &triple) {
                    Ctx::string(&triple, true, true, subst)
                } else {
                    Ctx::string(&c.to_string(), true, false, subst)
                })
            }
            _ => None,
        }
    }

    /// The line with everything but code blanked, and with only its
    /// comments blanked (byte offsets kept).
    fn render(self, text: &str) -> Masked {
        let mut code = String::with_capacity(text.len());
        let mut scan = String::with_capacity(text.len());
        for (b, ch) in text.char_indices() {
            let n = ch.len_utf8();
            match self.class[b] {
                Class::Code => {
                    code.push(ch);
                    scan.push(ch);
                }
                Class::Str => {
                    code.extend(std::iter::repeat_n(' ', n));
                    scan.push(ch);
                }
                Class::Comment => {
                    code.extend(std::iter::repeat_n(' ', n));
                    scan.extend(std::iter::repeat_n(' ', n));
                }
            }
        }
        Masked {
            code,
            scan,
            class: self.class,
        }
    }
}

/// Where a JS regular expression literal starting at `chars[i]` (a `/`)
/// ends, if it is one: a `/` where an expression may start, closed on the
/// same line by a `/` outside a `[…]` class (then its flags).
fn js_regex_end(chars: &[(usize, char)], i: usize, st: &mut MaskState) -> Option<usize> {
    let regex = match st.prev {
        None | Some(')' | ']' | '}') => {
            st.ambiguous_slash = true;
            st.slash_after_close_is_regex
        }
        Some(p) if is_ident(p) => JS_REGEX_AFTER.contains(&st.prev_word.as_str()),
        Some(_) => true,
    };
    if !regex {
        return None;
    }
    let mut j = i + 1;
    let mut class = false;
    while j < chars.len() {
        match chars[j].1 {
            '\\' => j += 1,
            '[' => class = true,
            ']' => class = false,
            '/' if !class => {
                j += 1;
                while j < chars.len() && chars[j].1.is_ascii_alphabetic() {
                    j += 1;
                }
                return Some(j);
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// A hunk masked from one start state, and joined: one text whose lines
/// are the hunk's lines, so a pattern may run over several of them.
struct Scan<'a> {
    lines: Vec<(u32, &'a str)>,
    masked: Vec<Masked>,
    /// Code only (the rest blanked), and comments blanked, joined by `\n`.
    code: String,
    scan: String,
    class: Vec<Class>,
    /// Byte offset of each line in the joined texts.
    starts: Vec<usize>,
    /// JS: a `/` was met whose meaning this scan had to guess.
    ambiguous_slash: bool,
}

impl<'a> Scan<'a> {
    fn new(lines: &[(u32, &'a str)], lang: Lang, mut st: MaskState) -> Scan<'a> {
        let mut s = Scan {
            lines: lines.to_vec(),
            masked: Vec::new(),
            code: String::new(),
            scan: String::new(),
            class: Vec::new(),
            starts: Vec::new(),
            ambiguous_slash: false,
        };
        for (k, (_, text)) in lines.iter().enumerate() {
            if k > 0 {
                s.code.push('\n');
                s.scan.push('\n');
                s.class.push(Class::Code);
            }
            s.starts.push(s.code.len());
            let m = mask_line(text, lang, &mut st);
            s.code.push_str(&m.code);
            s.scan.push_str(&m.scan);
            s.class.extend_from_slice(&m.class);
            s.masked.push(m);
        }
        s.ambiguous_slash = st.ambiguous_slash;
        s
    }

    /// The line number of joined byte `offset`.
    fn line_at(&self, offset: usize) -> u32 {
        let k = self.starts.partition_point(|&s| s <= offset).max(1) - 1;
        self.lines.get(k).map_or(0, |l| l.0)
    }

    fn class_at(&self, offset: usize) -> Class {
        self.class.get(offset).copied().unwrap_or(Class::Code)
    }
}

/// The content of a string literal starting with the quote at `open` in
/// `scan` (escapes kept as written), up to its closing quote.
fn literal_at(scan: &Scan<'_>, open: usize) -> Option<String> {
    let text = scan.scan.get(open..)?;
    let q = text.chars().next()?;
    let triple: String = std::iter::repeat_n(q, 3).collect();
    let close = if q != '`' && text.starts_with(&triple) {
        triple
    } else {
        q.to_string()
    };
    let multiline = close.len() == 3 || q == '`';
    let mut body = &text[close.len()..];
    let mut out = String::new();
    while let Some(c) = body.chars().next() {
        if body.starts_with(&close) {
            return Some(out);
        }
        if c == '\n' && !multiline {
            return None;
        }
        let n = if c == '\\' {
            body.chars().take(2).map(char::len_utf8).sum()
        } else {
            c.len_utf8()
        };
        out.push_str(&body[..n]);
        body = &body[n..];
    }
    None
}

// ---------------------------------------------------------------- Go

/// Remove `/* … */` comments and a trailing `// …` comment.
fn strip_c_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        match rest[i + 2..].find("*/") {
            Some(j) => rest = &rest[i + 2 + j + 2..],
            None => {
                rest = "";
                break;
            }
        }
        out.push(' ');
    }
    out.push_str(rest);
    if let Some(i) = out.find("//") {
        out.truncate(i);
    }
    out
}

fn go_spec(spec: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let r = re(
        &RE,
        r#"^(?:(?:[\p{L}_][\p{L}\p{N}_]*|\.)\s*)?(?:"([^"]*)"|`([^`]*)`)$"#,
    );
    let c = r.captures(spec.trim())?;
    c.get(1).or(c.get(2)).map(|m| m.as_str().to_string())
}

fn go(change: &FileChange, out: &mut Vec<(u32, String)>) {
    let mut in_block = false;
    for l in &change.added_lines {
        let line = strip_c_comments(clean(&l.text));
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let mut body = t;
        if in_block {
            if let Some(i) = body.find(')') {
                for s in body[..i].split(';') {
                    if let Some(m) = go_spec(s) {
                        out.push((l.line, m));
                    }
                }
                in_block = false;
                continue;
            }
        } else if let Some(rest) = t.strip_prefix("import") {
            let rest = rest.trim_start();
            if rest.len() < t.len() - "import".len() || rest.starts_with(['(', '"', '`']) {
                if let Some(inner) = rest.strip_prefix('(') {
                    match inner.find(')') {
                        Some(i) => body = &inner[..i],
                        None => {
                            in_block = true;
                            body = inner;
                        }
                    }
                } else {
                    body = rest;
                }
            }
        }
        // Inside a block, after `import`, or a bare spec-shaped line
        // anywhere in a Go file (conservative; see module doc).
        for s in body.split(';') {
            if let Some(m) = go_spec(s) {
                out.push((l.line, m));
            }
        }
    }
}

// ---------------------------------------------------------------- Rust

fn rust(scan: &Scan<'_>, out: &mut Vec<(u32, String)>) {
    static START: OnceLock<Regex> = OnceLock::new();
    static EXTERN: OnceLock<Regex> = OnceLock::new();
    static QUALIFIED: OnceLock<Regex> = OnceLock::new();
    let start = re(
        &START,
        r"^(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?use\s+(.*)$",
    );
    let extern_crate = re(
        &EXTERN,
        r"^(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?extern\s+crate\s+([A-Za-z_][A-Za-z0-9_]*)",
    );
    // A path of two or more segments not preceded by another segment
    // (`my::std::process` is `my::…`, not `std::…`); its `::` may be
    // spaced out or split over lines.
    let qualified = re(
        &QUALIFIED,
        r"(?:^|[^\w:$#'])(?:::\s*)?((?:r#)?[\p{L}_][\p{L}\p{N}_]*(?:\s*::\s*(?:r#)?[\p{L}_][\p{L}\p{N}_]*)+)",
    );
    // `use` statements are read as trees; the rest of the code is
    // searched for qualified paths.
    // The bytes of each line (from the start) that a `use` or `extern
    // crate` statement covers: up to its `;`, or all of it.
    let mut in_use = vec![0usize; scan.lines.len()];
    let upto_semicolon = |code: &str| code.find(';').map_or(code.len(), |i| i + 1);
    let mut pending: Option<String> = None;
    for (k, m) in scan.masked.iter().enumerate() {
        let line = scan.lines[k].0;
        let t = m.code.trim();
        if let Some(acc) = pending.as_mut() {
            in_use[k] = upto_semicolon(&m.code);
            acc.push(' ');
            acc.push_str(t);
            if let Some(i) = acc.find(';') {
                let stmt = acc[..i].to_string();
                pending = None;
                use_tree(&stmt, line, out);
            } else if acc.len() > MAX_STMT {
                let stmt = std::mem::take(acc);
                pending = None;
                use_tree(&stmt, line, out);
            }
            continue;
        }
        if let Some(c) = extern_crate.captures(t) {
            out.push((line, c[1].to_string()));
            in_use[k] = upto_semicolon(&m.code);
            continue;
        }
        if let Some(c) = start.captures(t) {
            in_use[k] = upto_semicolon(&m.code);
            let rest = c.get(1).map_or("", |m| m.as_str());
            match rest.find(';') {
                Some(i) => use_tree(&rest[..i], line, out),
                None => pending = Some(rest.to_string()),
            }
        }
    }
    if let Some(stmt) = pending {
        let line = scan.lines.last().map_or(0, |l| l.0);
        use_tree(&stmt, line, out);
    }
    // What follows a `use …;` on its line is code like any other.
    let mut code = Vec::with_capacity(scan.code.len());
    for (k, m) in scan.masked.iter().enumerate() {
        if k > 0 {
            code.push(b'\n');
        }
        let covered = in_use[k];
        code.extend(std::iter::repeat_n(b' ', covered));
        code.extend_from_slice(&m.code.as_bytes()[covered..]);
    }
    // Only whole ASCII-delimited prefixes were blanked: still UTF-8.
    let code = String::from_utf8(code).unwrap_or_default();
    for c in qualified.captures_iter(&code) {
        let m = c.get(1).expect("group 1");
        let path = compact(m.as_str()).replace("r#", "");
        out.push((scan.line_at(m.start()), path));
    }
}

fn use_tree(tree: &str, line: u32, out: &mut Vec<(u32, String)>) {
    let mut mods = Vec::new();
    expand_tree(tree, "", 0, &mut mods);
    out.extend(mods.into_iter().map(|m| (line, m)));
}

fn join_path(prefix: &str, item: &str) -> String {
    match (prefix.is_empty(), item.is_empty()) {
        (true, _) => item.to_string(),
        (_, true) => prefix.to_string(),
        _ => format!("{prefix}::{item}"),
    }
}

fn expand_tree(tree: &str, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let t = tree.trim();
    let t = t.strip_prefix("::").unwrap_or(t).trim();
    if t.is_empty() {
        if !prefix.is_empty() {
            out.push(prefix.to_string());
        }
        return;
    }
    if depth > MAX_DEPTH {
        out.push(join_path(prefix, &compact(t)));
        return;
    }
    if let Some(open) = t.find('{') {
        let head = compact(&t[..open]);
        let head = head.trim_end_matches(':');
        let new_prefix = join_path(prefix, head);
        // Find the matching close brace (or take the rest if unbalanced).
        let inner_all = &t[open + 1..];
        let mut level = 0usize;
        let mut end = inner_all.len();
        for (i, ch) in inner_all.char_indices() {
            match ch {
                '{' => level += 1,
                '}' if level == 0 => {
                    end = i;
                    break;
                }
                '}' => level -= 1,
                _ => {}
            }
        }
        let inner = &inner_all[..end];
        let mut any = false;
        for part in split_top(inner) {
            let p = part.trim();
            if p.is_empty() {
                continue;
            }
            any = true;
            let item = strip_as(p);
            if item == "self" {
                out.push(new_prefix.clone());
            } else {
                expand_tree(p, &new_prefix, depth + 1, out);
            }
        }
        if !any {
            out.push(new_prefix);
        }
        return;
    }
    let item = compact(strip_as(t));
    let item = item.strip_suffix("::*").unwrap_or(&item);
    let item = if item == "*" || item == "self" {
        ""
    } else {
        item
    };
    let full = join_path(prefix, item);
    if !full.is_empty() {
        out.push(full);
    }
}

fn strip_as(s: &str) -> &str {
    static AS: OnceLock<Regex> = OnceLock::new();
    let r = re(&AS, r"\s+as\s+");
    match r.find(s) {
        Some(m) => s[..m.start()].trim(),
        None => s.trim(),
    }
}

fn compact(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut level = 0usize;
    let mut start = 0;
    for (i, ch) in s.char_indices() {
        match ch {
            '{' => level += 1,
            '}' => level = level.saturating_sub(1),
            ',' if level == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

// ---------------------------------------------------------------- Python

fn python(scan: &Scan<'_>, depth: usize, out: &mut Vec<(u32, String)>) {
    // Statements: physical lines joined while a bracket is open or a
    // line ends with `\`, then split at `;`.
    let mut logical = String::new();
    let mut first_line = None;
    let mut open = 0i32;
    for (k, m) in scan.masked.iter().enumerate() {
        let line = scan.lines[k].0;
        first_line.get_or_insert(line);
        let code = m.code.trim_end();
        for c in code.chars() {
            match c {
                '(' | '[' | '{' => open += 1,
                ')' | ']' | '}' => open = (open - 1).max(0),
                _ => {}
            }
        }
        // Each physical line on its own too: a bracket the masker
        // misjudged must not glue an import onto another statement.
        for stmt in code.split(';') {
            python_statement(stmt, line, out);
        }
        let continued = code.ends_with('\\');
        logical.push(' ');
        logical.push_str(code.trim_end_matches('\\'));
        if open == 0 && !continued {
            for stmt in logical.split(';') {
                python_statement(stmt, first_line.unwrap_or(line), out);
            }
            logical.clear();
            first_line = None;
        }
    }
    if !logical.trim().is_empty() {
        for stmt in logical.split(';') {
            python_statement(stmt, first_line.unwrap_or(0), out);
        }
    }
    // Dynamic imports: the call must be code, its module a string.
    static DYN: OnceLock<Regex> = OnceLock::new();
    let dynamic = re(
        &DYN,
        r#"(?:\b__import__|\bimport_module)\s*\(\s*(?:name\s*=\s*)?[rbuRBUfF]{0,2}(["'])"#,
    );
    for c in dynamic.captures_iter(&scan.scan) {
        let call = c.get(0).expect("match").start();
        let quote = c.get(1).expect("group 1").start();
        if scan.class_at(call) != Class::Code || scan.class_at(quote) != Class::Str {
            continue;
        }
        if let Some(m) = literal_at(scan, quote) {
            out.push((scan.line_at(call), m));
        }
    }
    // Literal code given to exec / eval / compile is code.
    static EXEC: OnceLock<Regex> = OnceLock::new();
    let exec = re(
        &EXEC,
        r#"\b(?:exec|eval|compile)\s*\(\s*(?:source\s*=\s*)?[rbuRBU]{0,2}(["'])"#,
    );
    if depth < MAX_EVAL_DEPTH {
        for c in exec.captures_iter(&scan.scan) {
            let call = c.get(0).expect("match").start();
            let quote = c.get(1).expect("group 1").start();
            if scan.class_at(call) != Class::Code || scan.class_at(quote) != Class::Str {
                continue;
            }
            let Some(src) = literal_at(scan, quote) else {
                continue;
            };
            eval_literal(&src, scan.line_at(call), Lang::Python, depth, out);
        }
    }
}

/// Scan the literal source given to `exec`/`eval` as code of `lang`, all
/// reported at `line`. `\n` escapes separate its lines.
fn eval_literal(src: &str, line: u32, lang: Lang, depth: usize, out: &mut Vec<(u32, String)>) {
    let lines: Vec<(u32, &str)> = src.split("\\n").map(|l| (line, l.trim())).collect();
    let scan = Scan::new(&lines, lang, MaskState::default());
    match lang {
        Lang::Python => python(&scan, depth + 1, out),
        _ => js(&scan, depth + 1, out),
    }
}

/// One Python statement (masked code): `import …` or `from … import …`,
/// also after a compound statement's colon (`try: import x`).
fn python_statement(stmt: &str, line: u32, out: &mut Vec<(u32, String)>) {
    static FROM: OnceLock<Regex> = OnceLock::new();
    static COMPOUND: OnceLock<Regex> = OnceLock::new();
    let from = re(&FROM, r"^from\s+([\w.]+)\s+import\b\s*(.*)$");
    let compound = re(
        &COMPOUND,
        r"^(?:if|elif|else|try|except|finally|with|for|while|async\s+with)\b[^:]*:\s*(.*)$",
    );
    let mut s = stmt.trim();
    if let Some(c) = compound.captures(s) {
        s = c.get(1).map_or("", |m| m.as_str()).trim();
    }
    if let Some(rest) = s.strip_prefix("import") {
        if !rest.starts_with(|c: char| c.is_whitespace()) {
            return;
        }
        for part in rest.split(',') {
            let m = strip_as(part.trim_matches(|c: char| c.is_whitespace() || c == '\\'));
            let m = m.trim_matches(['(', ')', ' ', '\t']);
            if !m.is_empty() {
                out.push((line, m.to_string()));
            }
        }
    } else if let Some(c) = from.captures(s) {
        let module = c[1].to_string();
        out.push((line, module.clone()));
        let names = c.get(2).map_or("", |m| m.as_str());
        for part in names.split(',') {
            let n =
                strip_as(part.trim_matches(|c: char| {
                    c.is_whitespace() || c == '(' || c == ')' || c == '\\'
                }));
            let valid = n == "*" || n.chars().all(|c| c.is_alphanumeric() || c == '_');
            if n.is_empty() || !valid {
                continue;
            }
            let full = if module.ends_with('.') {
                format!("{module}{n}")
            } else {
                format!("{module}.{n}")
            };
            out.push((line, full));
        }
    }
}

// ---------------------------------------------------------------- JS / TS

fn js(scan: &Scan<'_>, depth: usize, out: &mut Vec<(u32, String)>) {
    static FROM: OnceLock<Regex> = OnceLock::new();
    static BARE: OnceLock<Regex> = OnceLock::new();
    static CALL: OnceLock<Regex> = OnceLock::new();
    static EVAL: OnceLock<Regex> = OnceLock::new();
    // `import … from 'x'`, `export … from 'x'`: `from` followed by a
    // string is only ever the source of an import or export.
    let from = re(&FROM, r#"\bfrom\s*(['"`])"#);
    let bare = re(&BARE, r#"\bimport\s*(['"`])"#);
    let call = re(
        &CALL,
        r#"(?:\bimport|\brequire(?:\s*\.\s*resolve)?)\s*(?:\?\.\s*)?\(\s*(['"`])"#,
    );
    for r in [from, bare, call] {
        for c in r.captures_iter(&scan.scan) {
            let kw = c.get(0).expect("match").start();
            let quote = c.get(1).expect("group 1").start();
            // The keyword must be code, the module a string.
            if scan.class_at(kw) != Class::Code || scan.class_at(quote) != Class::Str {
                continue;
            }
            let Some(m) = literal_at(scan, quote) else {
                continue;
            };
            let m = m.trim();
            let m = m.strip_prefix("node:").unwrap_or(m);
            out.push((scan.line_at(kw), m.to_string()));
        }
    }
    // Literal code given to eval / Function is code.
    let eval = re(&EVAL, r#"\b(?:eval|Function)\s*\(\s*(['"`])"#);
    if depth < MAX_EVAL_DEPTH {
        for c in eval.captures_iter(&scan.scan) {
            let kw = c.get(0).expect("match").start();
            let quote = c.get(1).expect("group 1").start();
            if scan.class_at(kw) != Class::Code || scan.class_at(quote) != Class::Str {
                continue;
            }
            if let Some(src) = literal_at(scan, quote) {
                eval_literal(&src, scan.line_at(kw), Lang::JavaScript, depth, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mods(path: &str, lines: &[&str]) -> Vec<String> {
        let c = FileChange::new(path, Operation::Create).with_lines(lines);
        new_imports(&c).into_iter().map(|(_, m)| m).collect()
    }

    /// Imports of lines added in the middle of an existing file (from
    /// line 10): the hunk may continue a string or comment above it.
    fn mods_inserted(path: &str, lines: &[&str]) -> Vec<String> {
        let mut c = FileChange::new(path, Operation::Modify).with_lines(lines);
        for l in &mut c.added_lines {
            l.line += 9;
        }
        new_imports(&c).into_iter().map(|(_, m)| m).collect()
    }

    fn has(found: &[String], m: &str) -> bool {
        found.iter().any(|f| f == m)
    }

    #[test]
    fn rust_use_trees_expand() {
        let m = mods(
            "a.rs",
            &[
                "use std::{fs, process::{Command, Stdio}};",
                "pub use ::x::y as z;",
            ],
        );
        assert_eq!(
            m,
            vec![
                "std::fs",
                "std::process::Command",
                "std::process::Stdio",
                "x::y"
            ]
        );
        let m = mods("a.rs", &["use std::{", "    process,", "};"]);
        assert_eq!(m, vec!["std::process"]);
        assert_eq!(mods("a.rs", &["use std::{process};"]), vec!["std::process"]);
        assert_eq!(mods("a.rs", &["use std as s;"]), vec!["std"]);
        assert_eq!(mods("a.rs", &["use std::*;"]), vec!["std"]);
        assert_eq!(mods("a.rs", &["extern crate std as s;"]), vec!["std"]);
        assert!(reaches_below("a.rs", "std"), "a Rust import reaches below");
        assert!(!reaches_below("a.go", "os") && reaches_below("a.py", "os.*"));
    }

    #[test]
    fn masking() {
        let m = mask(r##"let s = "a//b"; x::y(); // z::w"##, Lang::Rust).code;
        assert!(
            m.contains("x::y()") && !m.contains("z::w") && !m.contains("a//b"),
            "{m}"
        );
        let m = mask(
            r##"f(r#"std::process"#, 'x', '\n', b'y'); g::<'a>()"##,
            Lang::Rust,
        )
        .code;
        assert!(!m.contains("std") && m.contains("g::<'a>()"), "{m}");
        let m = mask(r#"x = '#'; import os # c"#, Lang::Python).code;
        assert!(m.contains("import os") && !m.contains(" c"), "{m}");
        let m = mask(r#"a = `${x}`; /* c */ require("y")"#, Lang::JavaScript);
        assert!(m.code.contains("require(") && !m.code.contains(" c "));
        assert!(!m.code_at(r#"a = `${x}`; /* c */ require(""#.len()));
        assert!(m.code_at("a = `${".len()), "a template's ${{…}} is code");
        let m = mask(r#"f"{__import__('os')}" + "{x}""#, Lang::Python);
        assert!(m.code.contains("__import__(") && !m.code.contains("{x}"));
        // Byte offsets survive non-ASCII text.
        let m = mask("s = \"é\"; import os", Lang::Python);
        assert_eq!(m.code.len(), "s = \"é\"; import os".len());
    }

    #[test]
    fn rust_qualified_paths() {
        let m = mods(
            "a.rs",
            &[
                "let c = std::process::Command::new(\"id\");",
                "::core::ptr::null::<u8>(); x.y::<T>(); Vec::<u8>::new();",
                "my::std::process::run(); let s = \"std::fs::read\";",
            ],
        );
        assert_eq!(
            m,
            vec![
                "std::process::Command::new",
                "core::ptr::null",
                "my::std::process::run"
            ]
        );
        // A path split over lines is one path.
        let m = mods(
            "a.rs",
            &["let c = std::", "    process", "    ::Command::new(x);"],
        );
        assert!(has(&m, "std::process::Command::new"), "{m:?}");
        let m = mods("a.rs", &["std /* c */ :: process::exit(0);"]);
        assert_eq!(m, vec!["std::process::exit"]);
        // Code after a `use …;` on the same line is still read.
        let m = mods("a.rs", &["use a::b; std::process::exit(0);"]);
        assert_eq!(m, vec!["a::b", "std::process::exit"]);
        let m = mods("a.rs", &["use std::{fs::File};"]);
        assert_eq!(m, vec!["std::fs::File"], "no path is read twice");
    }

    #[test]
    fn go_forms() {
        let m = mods(
            "a.go",
            &[
                "import \"fmt\"",
                "import (",
                "\te \"os/exec\" // run",
                "\t_ `unsafe`",
                ")",
                "\t\"net/http\"",
            ],
        );
        assert_eq!(m, vec!["fmt", "os/exec", "unsafe", "net/http"]);
    }

    #[test]
    fn python_forms() {
        let m = mods(
            "a.py",
            &["from os import path as p, sep", "import a.b as c, d"],
        );
        assert_eq!(m, vec!["os", "os.path", "os.sep", "a.b", "d"]);
        for (line, want) in [
            ("m = __import__(\"subprocess\")", "subprocess"),
            ("m = __import__( 'subprocess' ).run", "subprocess"),
            ("m = importlib.import_module('subprocess')", "subprocess"),
            ("m = import_module(name=\"subprocess\")", "subprocess"),
            ("m = __import__(\"\"\"subprocess\"\"\")", "subprocess"),
            (
                "x = f\"{__import__('subprocess').run(['id'])}\"",
                "subprocess",
            ),
            ("exec(\"import subprocess\")", "subprocess"),
            ("eval(\"__import__('subprocess')\")", "subprocess"),
            (
                "exec('x = 1\\nfrom subprocess import run')",
                "subprocess.run",
            ),
            ("from os import *", "os.*"),
        ] {
            assert!(
                has(&mods("a.py", &[line]), want),
                "{line}: {:?}",
                mods("a.py", &[line])
            );
        }
        // Over several lines.
        let m = mods(
            "a.py",
            &["from os import (", "    path,", "    system,", ")"],
        );
        assert!(has(&m, "os.system") && has(&m, "os.path"), "{m:?}");
        let m = mods("a.py", &["from os import path, \\", "    system"]);
        assert!(has(&m, "os.system"), "{m:?}");
        let m = mods("a.py", &["m = __import__(", "    \"subprocess\"", ")"]);
        assert!(has(&m, "subprocess"), "{m:?}");
        // Strings and comments are not imports.
        let m = mods(
            "a.py",
            &[
                "s = \"import subprocess\"",
                "# __import__('subprocess')",
                "doc = \"\"\"",
                "import subprocess",
                "\"\"\"",
            ],
        );
        assert!(m.is_empty(), "{m:?}");
    }

    #[test]
    fn js_forms() {
        let m = mods(
            "a.ts",
            &[
                "import x, { y } from 'lib/x';",
                "const cp = require(\"node:child_process\");",
                "} from \"z\";",
                "import 'side';",
                "await import(`dyn`);",
            ],
        );
        assert_eq!(m, vec!["lib/x", "child_process", "z", "side", "dyn"]);
        for lines in [
            &["import {", "  exec } from \"child_process\";"][..],
            &["import cp", "  from 'child_process'"],
            &["export * as cp from 'child_process'"],
            &["export { exec } from \"child_process\""],
            &["const cp = require(", "  'child_process'", ")"],
            &["const cp = require(/* c */ 'child_process')"],
            &["const r = require.resolve('child_process')"],
            &["const r = require?.('child_process')"],
            &["const x = `${require('child_process').execSync('id')}`"],
            &["const re = /\"/; require(\"child_process\")"],
            &["eval(\"require('child_process')\")"],
            &["const f = new Function(\"return require('child_process')\")"],
            &["const x = a", "  / require('child_process') / 2"],
            &["if (x) /\"/.test(s); require(\"child_process\"); //\""],
            &["const y = (a) / require('child_process') / 2"],
        ] {
            assert!(
                has(&mods("a.js", lines), "child_process"),
                "{lines:?}: {:?}",
                mods("a.js", lines)
            );
        }
        let m = mods(
            "a.js",
            &[
                "// require(\"child_process\")",
                "const s = \"require('child_process')\";",
                "/* import('child_process') */",
                "const t = `import x from 'child_process'`;",
                "const u = Array.from('child_process');",
            ],
        );
        assert!(m.is_empty(), "{m:?}");
    }

    #[test]
    fn a_hunk_inside_an_existing_string_or_comment_is_also_read_as_code() {
        // The base had `let s = "…` open above; the agent closes it, runs
        // code and opens another string that the base closes below.
        let rs = mods_inserted("a.rs", &["\"; std::process::exit(0); let t = \""]);
        assert!(has(&rs, "std::process::exit"), "{rs:?}");
        let py = mods_inserted("a.py", &["\"\"\"; import subprocess; x = \"\"\""]);
        assert!(has(&py, "subprocess"), "{py:?}");
        let js = mods_inserted("a.js", &["`; require('child_process'); `"]);
        assert!(has(&js, "child_process"), "{js:?}");
        let js = mods_inserted("a.js", &["*/ require('child_process') /*"]);
        assert!(has(&js, "child_process"), "{js:?}");
        // From line 1 the state is known: a string is a string.
        assert!(mods("a.rs", &["let s = \"std::process::exit\";"]).is_empty());
    }
}
