//! The token view of a source file the reads-source and test-only rules read:
//! tokens, paired brackets, statements and the aliases they bind (shared with
//! `test_only.rs`).

use super::super::lex::is_ident_byte;
use super::super::lex::Source;
use super::super::lex::Syntax;
use super::{CODE_EXTS, DATA_DIRS, DATA_EXTS, MAX_SCAN};
use std::collections::HashMap;
use std::collections::HashSet;

/// One token: a word, a punctuation byte, or a string literal.
#[derive(Debug, Clone, Copy)]
pub(in super::super) struct Tk<'a> {
    pub at: usize,
    pub text: &'a str,
    pub lit: bool,
    /// A newline of code lies between the previous token and this one.
    pub nl: bool,
}

impl<'a> Tk<'a> {
    pub fn is(&self, s: &str) -> bool {
        !self.lit && self.text == s
    }

    pub fn word(&self) -> Option<&'a str> {
        let first = *self.text.as_bytes().first()?;
        (!self.lit && is_ident_byte(first)).then_some(self.text)
    }

    /// A literal's value, quotes and prefixes taken off.
    pub fn content(&self) -> Option<&'a str> {
        self.lit.then(|| content(self.text))
    }
}

/// A literal's value without its quotes and prefix (`r#"x"#`, `f'x'`).
pub(in super::super) fn content(lit: &str) -> &str {
    lit.trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_matches(|c| matches!(c, '"' | '\'' | '#' | '`'))
}

pub(super) fn extension(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (_, e) = name.rsplit_once('.')?;
    (!e.is_empty() && e.bytes().all(|b| b.is_ascii_alphanumeric())).then(|| e.to_ascii_lowercase())
}

pub(super) fn in_data_dir(path: &str) -> bool {
    path.split(['/', '\\']).any(|s| DATA_DIRS.contains(&s))
}

/// Whether a literal names a code file (not one under a test-data folder).
pub(in super::super) fn is_code_path(path: &str) -> bool {
    extension(path).is_some_and(|e| CODE_EXTS.contains(&e.as_str())) && !in_data_dir(path)
}

/// Whether a literal names a data file.
pub(in super::super) fn is_data_path(path: &str) -> bool {
    match extension(path) {
        Some(e) if DATA_EXTS.contains(&e.as_str()) => true,
        Some(e) if CODE_EXTS.contains(&e.as_str()) => false,
        _ => in_data_dir(path),
    }
}

/// A file read as tokens and statements, with its aliases.
pub(in super::super) struct Code<'a> {
    pub syntax: Syntax,
    pub src: Source<'a>,
    pub toks: Vec<Tk<'a>>,
    /// At an opening bracket token, its closing one (`usize::MAX`: none).
    pub(super) close: Vec<usize>,
    /// Statements as token ranges.
    pub stmts: Vec<(usize, usize)>,
    /// Names bound to something else: Python to a dotted path, Rust to the
    /// last segment of a path (`use a::b as c;` binds `c` to `b`).
    pub(super) aliases: HashMap<&'a str, String>,
    /// Names an import binds.
    pub imported: HashSet<&'a str>,
}

pub(super) fn tokenize<'a>(src: &Source<'a>) -> Vec<Tk<'a>> {
    let code = &src.code;
    let mut out = Vec::new();
    let mut nl = false;
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if c.is_ascii_whitespace() {
            if let Some((s, e)) = src.string_at(i) {
                out.push(Tk {
                    at: s,
                    text: src.slice(s, e),
                    lit: true,
                    nl,
                });
                nl = false;
                i = e.max(i + 1);
                continue;
            }
            nl |= c == b'\n';
            i += 1;
        } else {
            let e = if is_ident_byte(c) {
                let mut e = i;
                while e < code.len() && is_ident_byte(code[e]) {
                    e += 1;
                }
                e
            } else {
                i + 1
            };
            out.push(Tk {
                at: i,
                text: src.slice(i, e),
                lit: false,
                nl,
            });
            nl = false;
            i = e;
        }
    }
    out
}

pub(super) fn pair(toks: &[Tk]) -> Vec<usize> {
    let mut close = vec![usize::MAX; toks.len()];
    let mut stacks: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (i, t) in toks.iter().enumerate() {
        if t.lit {
            continue;
        }
        match t.text {
            "(" => stacks[0].push(i),
            "[" => stacks[1].push(i),
            "{" => stacks[2].push(i),
            ")" | "]" | "}" => {
                let k = match t.text {
                    ")" => 0,
                    "]" => 1,
                    _ => 2,
                };
                if let Some(o) = stacks[k].pop() {
                    close[o] = i;
                }
            }
            _ => {}
        }
    }
    close
}

/// Statements: Rust splits at `;`, `{` and `}` outside parentheses and
/// brackets; Python at a newline outside brackets (not after `\`) and `;`.
pub(super) fn statements(toks: &[Tk], syntax: Syntax) -> Vec<(usize, usize)> {
    let python = syntax == Syntax::Python;
    let mut out = Vec::new();
    let mut start = 0;
    let mut stack: Vec<u8> = Vec::new();
    let cut = |out: &mut Vec<(usize, usize)>, start: &mut usize, end: usize, next: usize| {
        if end > *start {
            out.push((*start, end));
        }
        *start = next;
    };
    for (i, t) in toks.iter().enumerate() {
        if python && t.nl && stack.is_empty() && i > 0 && !toks[i - 1].is("\\") {
            cut(&mut out, &mut start, i, i);
        }
        if t.lit {
            continue;
        }
        let in_expr = matches!(stack.last(), Some(b'(' | b'['));
        match t.text {
            "(" => stack.push(b'('),
            "[" => stack.push(b'['),
            "{" => {
                if !python && !in_expr {
                    cut(&mut out, &mut start, i, i + 1);
                }
                stack.push(b'{');
            }
            ")" | "]" | "}" => {
                let want = match t.text {
                    ")" => b'(',
                    "]" => b'[',
                    _ => b'{',
                };
                if stack.last() == Some(&want) {
                    stack.pop();
                }
                let in_expr = matches!(stack.last(), Some(b'(' | b'['));
                if !python && want == b'{' && !in_expr {
                    cut(&mut out, &mut start, i, i + 1);
                }
            }
            ";" if (python && stack.is_empty()) || (!python && !in_expr) => {
                cut(&mut out, &mut start, i, i + 1);
            }
            _ => {}
        }
    }
    cut(&mut out, &mut start, toks.len(), toks.len());
    out
}

impl<'a> Code<'a> {
    pub fn new(text: &'a str, syntax: Syntax) -> Self {
        let src = Source::new(text, syntax);
        let toks = tokenize(&src);
        let close = pair(&toks);
        let stmts = statements(&toks, syntax);
        let mut c = Code {
            syntax,
            src,
            toks,
            close,
            stmts,
            aliases: HashMap::new(),
            imported: HashSet::new(),
        };
        c.read_aliases();
        c
    }

    pub fn is(&self, i: usize, s: &str) -> bool {
        self.toks.get(i).is_some_and(|t| t.is(s))
    }

    /// `is` at `i - back`, false before the start.
    pub fn is_before(&self, i: usize, back: usize, s: &str) -> bool {
        i.checked_sub(back).is_some_and(|k| self.is(k, s))
    }

    pub fn word(&self, i: usize) -> Option<&'a str> {
        self.toks.get(i).and_then(|t| t.word())
    }

    pub fn close_of(&self, open: usize) -> Option<usize> {
        self.close.get(open).copied().filter(|&c| c != usize::MAX)
    }

    pub fn line(&self, i: usize) -> u32 {
        self.src.line(self.toks.get(i).map_or(0, |t| t.at))
    }

    /// The original text of tokens `a..b`.
    pub fn text(&self, a: usize, b: usize) -> &'a str {
        if a >= b || b > self.toks.len() {
            return "";
        }
        let last = &self.toks[b - 1];
        self.src.slice(self.toks[a].at, last.at + last.text.len())
    }

    /// Tokens `a..b` joined: what is compared between the base and now.
    pub fn key(&self, a: usize, b: usize) -> String {
        let mut s = String::new();
        for t in &self.toks[a..b.min(self.toks.len())] {
            s.push_str(t.text);
            s.push(' ');
        }
        s
    }

    /// Literal values in tokens `a..b`.
    pub fn literals(&self, a: usize, b: usize) -> impl Iterator<Item = &'a str> + '_ {
        self.toks[a..b.min(self.toks.len())]
            .iter()
            .filter_map(|t| t.content())
    }

    pub fn has_word(&self, a: usize, b: usize, words: &[&str]) -> bool {
        self.toks[a..b.min(self.toks.len())]
            .iter()
            .any(|t| t.word().is_some_and(|w| words.contains(&w)))
    }

    /// What a Rust name stands for (its `use … as` or `let` alias).
    pub fn resolve(&self, w: &'a str) -> &str {
        self.aliases.get(w).map_or(w, |s| s.as_str())
    }

    /// Whether statement `a..` is an import (Python `import`/`from`, Rust
    /// `use`).
    pub fn is_import(&self, a: usize) -> bool {
        match self.syntax {
            Syntax::Python => self.is(a, "import") || self.is(a, "from"),
            _ => self.is(a, "use") || (self.is(a, "pub") && self.has_word(a, a + 6, &["use"])),
        }
    }

    /// The dotted (Python) or `::` (Rust) path starting at word `i`, when a
    /// path starts there, resolved through aliases, and the token after
    /// it.
    pub fn chain(&self, i: usize) -> Option<(String, usize)> {
        let w = self.word(i)?;
        let rust = self.syntax == Syntax::Rust;
        let continues = if rust {
            self.is_before(i, 1, ".") || (self.is_before(i, 1, ":") && self.is_before(i, 2, ":"))
        } else {
            self.is_before(i, 1, ".")
        };
        if continues {
            return None;
        }
        let mut out = self.resolve(w).to_string();
        let mut j = i + 1;
        loop {
            if rust && self.is(j, ":") && self.is(j + 1, ":") {
                let Some(seg) = self.word(j + 2) else { break };
                out.push_str("::");
                out.push_str(seg);
                j += 3;
            } else if !rust && self.is(j, ".") {
                let Some(seg) = self.word(j + 1) else { break };
                out.push('.');
                out.push_str(seg);
                j += 2;
            } else {
                break;
            }
        }
        Some((out, j))
    }

    /// The name a statement assigns (`let x =`, `const X: T =`, Python
    /// `x =`) and where its value starts.
    pub fn assignment(&self, a: usize, b: usize) -> Option<(&'a str, usize)> {
        if self.syntax == Syntax::Python {
            let name = self.word(a)?;
            let plain = self.is(a + 1, "=") && !self.is(a + 2, "=");
            return plain.then_some((name, a + 2));
        }
        let mut k = a;
        if self.is(k, "pub") {
            k += 1;
        }
        if !["let", "const", "static"].iter().any(|w| self.is(k, w)) {
            return None;
        }
        k += 1;
        if self.is(k, "mut") {
            k += 1;
        }
        let name = self.word(k)?;
        let eq = (k + 1..b.min(k + MAX_SCAN)).find(|&e| {
            self.is(e, "=")
                && !self.is(e + 1, "=")
                && !["=", "!", "<", ">"].iter().any(|p| self.is_before(e, 1, p))
        })?;
        Some((name, eq + 1))
    }

    pub(super) fn read_aliases(&mut self) {
        let mut aliases: HashMap<&'a str, String> = HashMap::new();
        let mut imported: HashSet<&'a str> = HashSet::new();
        for &(a, b) in &self.stmts {
            if self.syntax == Syntax::Python {
                if self.is(a, "import") {
                    // import a.b as c, d
                    let mut k = a + 1;
                    while k < b {
                        let mut path = String::new();
                        let first = self.word(k);
                        while k < b && !self.is(k, ",") && !self.is(k, "as") {
                            path.push_str(self.toks[k].text);
                            k += 1;
                        }
                        if self.is(k, "as") {
                            if let Some(name) = self.word(k + 1) {
                                aliases.insert(name, path);
                                imported.insert(name);
                            }
                            k += 2;
                        } else if let Some(f) = first {
                            imported.insert(f);
                        }
                        k += 1;
                    }
                } else if self.is(a, "from") {
                    let Some(imp) = (a + 1..b).find(|&k| self.is(k, "import")) else {
                        continue;
                    };
                    let module: String = (a + 1..imp).map(|k| self.toks[k].text).collect();
                    let mut k = imp + 1;
                    while k < b {
                        if let Some(name) = self.word(k) {
                            let bound = if self.is(k + 1, "as") {
                                self.word(k + 2).unwrap_or(name)
                            } else {
                                name
                            };
                            let sep = if module.ends_with('.') { "" } else { "." };
                            aliases.insert(bound, format!("{module}{sep}{name}"));
                            imported.insert(bound);
                            k += if bound == name { 1 } else { 3 };
                        } else {
                            k += 1;
                        }
                    }
                } else if let Some((name, v)) = self.assignment(a, b) {
                    // g = inspect.getsource
                    let resolved = {
                        self.aliases = std::mem::take(&mut aliases);
                        let r = self.chain(v).filter(|(_, end)| *end == b).map(|(r, _)| r);
                        aliases = std::mem::take(&mut self.aliases);
                        r
                    };
                    if let Some(r) = resolved {
                        aliases.insert(name, r);
                    }
                }
            } else if self.is_import(a) {
                for k in a..b {
                    if let Some(w) = self.word(k) {
                        imported.insert(w);
                    }
                    if self.is(k, "as") {
                        if let (Some(from), Some(to)) =
                            (self.word(k.wrapping_sub(1)), self.word(k + 1))
                        {
                            let from = aliases.get(from).cloned().unwrap_or(from.to_string());
                            aliases.insert(to, from);
                        }
                    }
                }
            } else if let Some((name, v)) = self.assignment(a, b) {
                // let slurp = std::fs::read_to_string;
                let path = (v..b).all(|k| self.word(k).is_some() || self.is(k, ":"));
                if path && v < b {
                    if let Some(last) = self.word(b - 1) {
                        let last = aliases.get(last).cloned().unwrap_or(last.to_string());
                        aliases.insert(name, last);
                    }
                }
            }
        }
        self.aliases = aliases;
        self.imported = imported;
    }
}
