//! `test-integrity/reads-source` (error): test code the change adds or
//! changes that reads the source text of the code instead of running it. A
//! test that greps the code's text is no evidence of behaviour: it fails at
//! the base only because it sees the base's (or a stub's) text, and passes
//! on any code that spells the right words.
//!
//! Test code is a test file ([`super::is_test_path`], a Python file the
//! runner collects, a Rust file of an out-of-line test module) or, in a Rust
//! source file, a `#[cfg(test)]` item or a `#[test]`-like function. Each
//! statement of it is read from the lexer's tokens (comments and layout do
//! not matter) and flagged when it:
//! - Rust: uses `include_str!`/`include_bytes!` on anything but one literal
//!   naming a data file (`.json`, `.txt`, …, or a path under `fixtures/`,
//!   `testdata/`, …); uses `file!()`; reads a file (`read_to_string`,
//!   `fs::read`, `File::open`, …) in a statement that names a code file
//!   (`"src/lib.rs"`), `file!()`, `CARGO_MANIFEST_DIR` with `src`, or a
//!   variable an earlier `let` set from one of those.
//! - Python: calls `inspect.getsource` (or `getsourcelines`,
//!   `getsourcefile`, `findsource`), `linecache`, `dis`, touches
//!   `__code__`/`co_code`/`co_consts`/`co_names`/`get_source`; reads a file
//!   (`open`, `read_text`, `read_bytes`, `.read()`, `importlib.resources`,
//!   `pkgutil.get_data`) in a statement that names a `.py` (or other code)
//!   file, `__spec__`/`__loader__`, `inspect.getfile`, `__file__` itself
//!   (no `dirname`/`parent`, no data file named), or a variable set from
//!   one of those; `ast.parse` of something read.
//!
//! Names are resolved through imports and plain aliases (`from inspect
//! import getsource as g`, `use std::fs::read_to_string as slurp;`, `g =
//! inspect.getsource`). Only what is new counts: statements are compared by
//! their tokens across every file of the change, base against now, so a
//! test moved or left alone is not reported.
//!
//! Misses: a path built across function calls or from a value the test
//! computes (`open(name)` where `name` comes from a helper or a loop),
//! sources read by a subprocess (`cat`, `grep`), `importlib` and
//! `getattr` indirection (`getattr(inspect, "getsource")`), and test code in
//! languages other than Rust and Python. A test of a code generator that
//! reads back a `.rs`/`.py` file it wrote is reported too (allow it).
//!
//! The token machinery here (tokens, statements, aliases, Rust test spans)
//! is shared with `test_only.rs`.

use super::lex::{is_ident_byte, Source, Syntax};
use super::{FileVersions, Finding};
use crate::model::verdict::{Issue, Severity};
use std::collections::{BTreeMap, HashMap, HashSet};

pub const RULE_READS_SOURCE: &str = "test-integrity/reads-source";

/// Extensions of files that hold code.
const CODE_EXTS: &[&str] = &[
    "rs", "py", "pyi", "go", "js", "jsx", "mjs", "cjs", "ts", "tsx", "java", "kt", "c", "h", "cc",
    "cpp", "cxx", "hpp",
];
/// Extensions of files that hold test data.
const DATA_EXTS: &[&str] = &[
    "json", "txt", "csv", "toml", "yaml", "yml", "xml", "html", "md", "bin", "dat", "snap",
    "golden", "expected", "out", "in",
];
/// Directory names that hold test data (whatever the extension).
const DATA_DIRS: &[&str] = &[
    "fixtures",
    "fixture",
    "testdata",
    "test_data",
    "data",
    "golden",
    "goldens",
    "snapshots",
    "__snapshots__",
    "resources",
    "samples",
];
/// Rust functions that read a file.
const RS_READS: &[&str] = &[
    "read_to_string",
    "read",
    "read_to_end",
    "open",
    "read_lines",
];
/// Python calls that read a file.
const PY_READS: &[&str] = &[
    "open",
    "read_text",
    "read_bytes",
    "read",
    "readlines",
    "readline",
    "open_text",
    "open_binary",
    "get_data",
];
/// Python functions that return a function's source.
const PY_GETSOURCE: &[&str] = &["getsource", "getsourcelines", "getsourcefile", "findsource"];
/// Python attributes that expose code objects or loaders' source.
const PY_CODE_ATTRS: &[&str] = &["__code__", "co_code", "co_consts", "co_names", "get_source"];
/// A statement read for a hit holds at most this many tokens of a `cfg`
/// predicate or a window after a call.
pub(super) const MAX_SCAN: usize = 256;

// ---------------------------------------------------------------------------
// Tokens and statements (shared with test_only.rs).

/// One token: a word, a punctuation byte, or a string literal.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tk<'a> {
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
pub(super) fn content(lit: &str) -> &str {
    lit.trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_matches(|c| matches!(c, '"' | '\'' | '#' | '`'))
}

fn extension(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (_, e) = name.rsplit_once('.')?;
    (!e.is_empty() && e.bytes().all(|b| b.is_ascii_alphanumeric())).then(|| e.to_ascii_lowercase())
}

fn in_data_dir(path: &str) -> bool {
    path.split(['/', '\\']).any(|s| DATA_DIRS.contains(&s))
}

/// Whether a literal names a code file (not one under a test-data folder).
pub(super) fn is_code_path(path: &str) -> bool {
    extension(path).is_some_and(|e| CODE_EXTS.contains(&e.as_str())) && !in_data_dir(path)
}

/// Whether a literal names a data file.
pub(super) fn is_data_path(path: &str) -> bool {
    match extension(path) {
        Some(e) if DATA_EXTS.contains(&e.as_str()) => true,
        Some(e) if CODE_EXTS.contains(&e.as_str()) => false,
        _ => in_data_dir(path),
    }
}

/// A file read as tokens and statements, with its aliases.
pub(super) struct Code<'a> {
    pub syntax: Syntax,
    pub src: Source<'a>,
    pub toks: Vec<Tk<'a>>,
    /// At an opening bracket token, its closing one (`usize::MAX`: none).
    close: Vec<usize>,
    /// Statements as token ranges.
    pub stmts: Vec<(usize, usize)>,
    /// Names bound to something else: Python to a dotted path, Rust to the
    /// last segment of a path (`use a::b as c;` binds `c` to `b`).
    aliases: HashMap<&'a str, String>,
    /// Names an import binds.
    pub imported: HashSet<&'a str>,
}

fn tokenize<'a>(src: &Source<'a>) -> Vec<Tk<'a>> {
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

fn pair(toks: &[Tk]) -> Vec<usize> {
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
fn statements(toks: &[Tk], syntax: Syntax) -> Vec<(usize, usize)> {
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

    fn read_aliases(&mut self) {
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

// ---------------------------------------------------------------------------
// Rust test code within a file (shared with test_only.rs).

/// What a span of Rust test code is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SpanKind {
    /// A `#[test]`-like function.
    TestFn,
    /// A `#[cfg(test)]` module holding tests (or named for them).
    TestModule,
    /// `#[cfg(test)] mod x;` or a private `#[cfg(test)] use …;`.
    CfgTestDecl,
    /// Any other item under a `cfg` that holds in test builds.
    CfgTestOther,
}

/// The Rust test code of a file: byte spans (attributes included) and
/// whether an inner `#![cfg(test)]` makes the whole file test code.
pub(super) struct Spans {
    pub spans: Vec<(usize, usize, SpanKind)>,
    pub file_test: bool,
}

impl Spans {
    pub fn within(&self, at: usize, kinds: &[SpanKind]) -> bool {
        self.file_test
            || self
                .spans
                .iter()
                .any(|&(a, b, k)| a <= at && at < b && kinds.contains(&k))
    }
}

const TEST_ATTRS: &[&str] = &[
    "test",
    "rstest",
    "test_case",
    "test_matrix",
    "wasm_bindgen_test",
    "quickcheck",
];

/// Whether the `cfg` predicate in the parentheses opened at `open` holds
/// in test builds: it names `test` outside any `not(…)`.
pub(super) fn cfg_test_positive(c: &Code, open: usize) -> bool {
    let Some(close) = c.close_of(open) else {
        return false;
    };
    let mut nots: Vec<usize> = Vec::new();
    for k in open + 1..close.min(open + MAX_SCAN) {
        while nots.last().is_some_and(|&e| k > e) {
            nots.pop();
        }
        if c.word(k) == Some("not") && c.is(k + 1, "(") {
            if let Some(e) = c.close_of(k + 1) {
                nots.push(e);
            }
        }
        if c.word(k) == Some("test") && nots.is_empty() {
            return true;
        }
    }
    false
}

/// Whether the attribute in tokens `a..b` marks a test function.
fn is_test_attr(c: &Code, a: usize, b: usize) -> bool {
    let mut last = None;
    let mut k = a;
    while k < b {
        match c.word(k) {
            Some(w) => last = Some(w),
            None if c.is(k, ":") => {}
            None => break,
        }
        k += 1;
    }
    last.is_some_and(|w| TEST_ATTRS.contains(&w))
}

pub(super) fn rust_spans(c: &Code) -> Spans {
    let n = c.toks.len();
    let mut spans = Vec::new();
    let mut modules: Vec<(usize, usize, bool, bool)> = Vec::new();
    let mut file_test = false;
    let mut depth = 0i64;
    let mut i = 0;
    while i < n {
        if c.is(i, "{") {
            depth += 1;
        } else if c.is(i, "}") {
            depth -= 1;
        }
        if !c.is(i, "#") {
            i += 1;
            continue;
        }
        if c.is(i + 1, "!") && c.is(i + 2, "[") {
            let Some(close) = c.close_of(i + 2) else {
                i += 1;
                continue;
            };
            if depth == 0 && c.is(i + 3, "cfg") && c.is(i + 4, "(") && cfg_test_positive(c, i + 4) {
                file_test = true;
            }
            i = close + 1;
            continue;
        }
        let start = i;
        let (mut test_attr, mut cfg_test, mut cfg_other) = (false, false, false);
        let mut j = i;
        while c.is(j, "#") && c.is(j + 1, "[") {
            let Some(close) = c.close_of(j + 1) else {
                break;
            };
            test_attr |= is_test_attr(c, j + 2, close);
            let cfg = c.is(j + 2, "cfg") && c.is(j + 3, "(");
            cfg_test |= cfg && cfg_test_positive(c, j + 3);
            cfg_other |= cfg && !cfg_test_positive(c, j + 3);
            j = close + 1;
        }
        if j == i {
            i += 1;
            continue;
        }
        // A module under any other `cfg` that holds tests is test code
        // too: whether its tests still run is the skip-marker rule's.
        let other_mod = cfg_other && !cfg_test && !test_attr && {
            let k = if c.is(j, "pub") { j + 1 } else { j };
            c.is(k, "mod") && c.is(k + 2, "{")
        };
        if (test_attr || cfg_test || other_mod) && j < n {
            let mut k = j;
            let public = c.is(k, "pub");
            if public {
                k += 1;
                if c.is(k, "(") {
                    k = c.close_of(k).map_or(n, |e| e + 1);
                }
            }
            let kw = c.word(k);
            let name = if kw == Some("mod") {
                c.word(k + 1)
            } else {
                None
            };
            let mut e = k;
            let limit = (k + 4 * MAX_SCAN).min(n);
            let (end, body) = loop {
                if e >= limit {
                    break (limit.saturating_sub(1).max(j), false);
                }
                if c.is(e, ";") {
                    break (e, false);
                }
                if c.is(e, "{") {
                    break (c.close_of(e).unwrap_or(n - 1), true);
                }
                if c.is(e, "(") || c.is(e, "[") {
                    e = c.close_of(e).map_or(n, |x| x + 1);
                } else {
                    e += 1;
                }
            };
            let last = &c.toks[end];
            let span = (c.toks[start].at, last.at + last.text.len());
            if test_attr {
                spans.push((span.0, span.1, SpanKind::TestFn));
            } else if kw == Some("mod") && body {
                let named = cfg_test && name.is_some_and(|m| m.contains("test"));
                modules.push((span.0, span.1, named, other_mod));
            } else if kw == Some("mod") || (kw == Some("use") && !public) {
                spans.push((span.0, span.1, SpanKind::CfgTestDecl));
            } else {
                spans.push((span.0, span.1, SpanKind::CfgTestOther));
            }
        }
        i = j;
    }
    let mut fns: Vec<usize> = spans
        .iter()
        .filter(|s| s.2 == SpanKind::TestFn)
        .map(|s| s.0)
        .collect();
    fns.sort_unstable();
    for (a, b, named, other_cfg) in modules {
        let k = fns.partition_point(|&s| s <= a);
        let holds_tests = fns.get(k).is_some_and(|&s| s < b);
        let kind = if named || holds_tests {
            SpanKind::TestModule
        } else if other_cfg {
            continue;
        } else {
            SpanKind::CfgTestOther
        };
        spans.push((a, b, kind));
    }
    Spans { spans, file_test }
}

// ---------------------------------------------------------------------------
// Comparing the base and now (shared with test_only.rs).

/// Which side of the change a file is read at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Base,
    Now,
}

/// One flagged statement: what is compared, what is shown, and where.
pub(super) struct Hit {
    pub line: u32,
    pub key: String,
    pub what: String,
}

pub(super) fn syntax_of(path: &str) -> Option<Syntax> {
    match path.rsplit_once('.').map(|(_, e)| e) {
        Some("rs") => Some(Syntax::Rust),
        Some("py") => Some(Syntax::Python),
        _ => None,
    }
}

/// Whether the whole file at `path` is test code on `side`: a test path,
/// or a Rust file of a module declared `#[cfg(test)]` out of line (when
/// the declaring file is part of the change).
pub(super) fn test_file(path: &str, files: &[FileVersions], side: Side) -> bool {
    if super::is_test_path(path) {
        return true;
    }
    let read = |p: &str| -> Option<String> {
        files
            .iter()
            .find_map(|f| match side {
                Side::Base => (f.old_path.unwrap_or(f.path) == p)
                    .then_some(f.base)
                    .flatten(),
                Side::Now => (f.path == p).then_some(f.new).flatten(),
            })
            .map(str::to_string)
    };
    super::in_rust_test_module(path, &read)
}

/// Lines of `new` not in `base` (by trimmed content, counted).
fn added_lines(base: Option<&str>, new: &str) -> HashSet<u32> {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for l in base.unwrap_or("").lines() {
        *left.entry(l.trim()).or_default() += 1;
    }
    let mut out = HashSet::new();
    for (i, l) in new.lines().enumerate() {
        match left.get_mut(l.trim()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                out.insert(i as u32 + 1);
            }
        }
    }
    out
}

pub(super) type Scanner = dyn Fn(&str, &str, Side, &[FileVersions]) -> Vec<Hit>;

/// Run `scan` over every Rust and Python file of the change at the base
/// and now, and report (as `rule`, an error) each statement now that the
/// base had fewer of, across all files, preferring ones on added lines.
pub(super) fn report(
    files: &[FileVersions],
    rule: &str,
    scan: &Scanner,
    message: &dyn Fn(&str, &str, u32) -> String,
    out: &mut Vec<Finding>,
) {
    let readable = |p: &str, t: &str| syntax_of(p).is_some() && t.len() <= super::MAX_FILE_BYTES;
    let mut at_base: HashMap<String, usize> = HashMap::new();
    let mut now: BTreeMap<String, Vec<(bool, usize, Hit)>> = BTreeMap::new();
    for (idx, f) in files.iter().enumerate() {
        let old = f.old_path.unwrap_or(f.path);
        if let Some(text) = f.base.filter(|t| readable(old, t)) {
            for h in scan(old, text, Side::Base, files) {
                *at_base.entry(h.key).or_default() += 1;
            }
        }
        if let Some(text) = f.new.filter(|t| readable(f.path, t)) {
            let added = added_lines(f.base, text);
            for h in scan(f.path, text, Side::Now, files) {
                now.entry(h.key.clone())
                    .or_default()
                    .push((!added.contains(&h.line), idx, h));
            }
        }
    }
    for (key, mut hits) in now {
        let keep = hits
            .len()
            .saturating_sub(at_base.get(&key).copied().unwrap_or(0));
        hits.sort_by_key(|(old_line, idx, h)| (*old_line, *idx, h.line));
        for (_, idx, h) in hits.into_iter().take(keep) {
            let path = files[idx].path;
            out.push(Finding::file(
                Issue::new(rule, Severity::Error, message(&h.what, path, h.line))
                    .at(path, Some(h.line)),
                &[path],
            ));
        }
    }
}

/// Each flagged statement of `c`: `flags` gives the tokens and reasons in
/// one statement, `keep` which of those tokens count (by byte offset).
pub(super) fn hits(
    c: &Code,
    flags: &dyn Fn(usize, usize) -> Vec<(usize, String)>,
    keep: &dyn Fn(usize) -> bool,
) -> Vec<Hit> {
    hits_keyed(c, flags, keep, &|a, b| c.key(a, b))
}

/// [`hits`], each statement `a..b` keyed by `key` (what must match a
/// statement of the base for the hit to be the base's).
pub(super) fn hits_keyed(
    c: &Code,
    flags: &dyn Fn(usize, usize) -> Vec<(usize, String)>,
    keep: &dyn Fn(usize) -> bool,
    key: &dyn Fn(usize, usize) -> String,
) -> Vec<Hit> {
    let mut out = Vec::new();
    for &(a, b) in &c.stmts {
        if c.is_import(a) {
            continue;
        }
        let mut whats = flags(a, b);
        whats.retain(|(k, _)| keep(c.toks[*k].at));
        let Some(&(anchor, _)) = whats.first() else {
            continue;
        };
        let mut shown: Vec<String> = Vec::new();
        for (_, w) in whats {
            if !shown.contains(&w) {
                shown.push(w);
            }
        }
        out.push(Hit {
            line: c.line(anchor),
            key: key(a, b),
            what: shown.join("; "),
        });
    }
    out
}

/// A snippet of source for a message.
pub(super) fn shown(text: &str) -> String {
    format!("`{}`", super::short(text).replace('`', "'"))
}

// ---------------------------------------------------------------------------
// The rule.

pub(super) fn check(files: &[FileVersions], out: &mut Vec<Finding>) {
    report(
        files,
        RULE_READS_SOURCE,
        &scan,
        &|what, path, line| {
            format!(
                "test reads the source text instead of running the code ({what}, {path}:{line}): it is not evidence of behaviour — test what the code does"
            )
        },
        out,
    );
}

fn scan(path: &str, text: &str, side: Side, files: &[FileVersions]) -> Vec<Hit> {
    let Some(syntax) = syntax_of(path) else {
        return Vec::new();
    };
    let whole = test_file(path, files, side)
        || (syntax == Syntax::Python && super::test_syntax(path).is_some());
    if syntax == Syntax::Python && !whole {
        return Vec::new();
    }
    let c = Code::new(text, syntax);
    let spans = if syntax == Syntax::Rust && !whole {
        rust_spans(&c)
    } else {
        Spans {
            spans: Vec::new(),
            file_test: whole,
        }
    };
    if !spans.file_test && spans.spans.is_empty() {
        return Vec::new();
    }
    let all = [
        SpanKind::TestFn,
        SpanKind::TestModule,
        SpanKind::CfgTestDecl,
        SpanKind::CfgTestOther,
    ];
    let tainted = taint(&c);
    let flags = |a: usize, b: usize| match syntax {
        Syntax::Rust => rust_flags(&c, a, b, &tainted),
        _ => python_flags(&c, a, b, &tainted),
    };
    hits(&c, &flags, &|at| spans.within(at, &all))
}

/// Names an assignment set from something that points at source.
fn taint<'a>(c: &Code<'a>) -> HashSet<&'a str> {
    let mut tainted = HashSet::new();
    for &(a, b) in &c.stmts {
        if let Some((name, v)) = c.assignment(a, b) {
            if source_marker(c, v, b, &tainted).is_some() {
                tainted.insert(name);
            } else {
                tainted.remove(name);
            }
        }
    }
    tainted
}

/// What in tokens `a..b` points at source code, if anything.
fn source_marker(c: &Code, a: usize, b: usize, tainted: &HashSet<&str>) -> Option<String> {
    if let Some(p) = c.literals(a, b).find(|l| is_code_path(l)) {
        return Some(shown(p));
    }
    let python = c.syntax == Syntax::Python;
    for k in a..b {
        let Some(w) = c.word(k) else { continue };
        let attribute = c.is_before(k, 1, ".");
        if tainted.contains(w) && !attribute {
            return Some(format!("`{w}`, a path to source"));
        }
        if python {
            if matches!(w, "__spec__" | "__loader__") {
                return Some(format!("`{w}`"));
            }
            if w == "__file__"
                && !c.literals(a, b).any(is_data_path)
                && !c.has_word(a, b, &["parent", "parents", "dirname"])
            {
                return Some("`__file__`".into());
            }
            if let Some((r, _)) = c.chain(k) {
                if matches!(r.as_str(), "inspect.getfile" | "inspect.getsourcefile") {
                    return Some(format!("`{r}`"));
                }
            }
        } else if w == "file" && c.is(k + 1, "!") && c.is(k + 2, "(") {
            return Some("`file!()`".into());
        }
    }
    if !python {
        let mut lits = c.literals(a, b);
        let manifest = c.literals(a, b).any(|l| l == "CARGO_MANIFEST_DIR");
        if manifest && lits.any(|l| l.split(['/', '\\']).any(|s| s == "src")) {
            return Some("`CARGO_MANIFEST_DIR` with `src`".into());
        }
    }
    None
}

fn rust_flags(c: &Code, a: usize, b: usize, tainted: &HashSet<&str>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut marker: Option<Option<String>> = None;
    for k in a..b {
        let Some(w) = c.word(k) else { continue };
        let r = c.resolve(w);
        if matches!(r, "include_str" | "include_bytes") && c.is(k + 1, "!") {
            let open = k + 2;
            let close = c.close_of(open).unwrap_or(b).min(b);
            let one_data_file = close == open + 2
                && c.toks[open + 1]
                    .content()
                    .is_some_and(|l| is_data_path(l) && !is_code_path(l));
            if !one_data_file {
                let arg = c.text(open + 1, close);
                out.push((k, format!("`{r}!` of {}", shown(arg))));
            }
        }
        if w == "file" && c.is(k + 1, "!") && c.is(k + 2, "(") {
            out.push((k, "`file!()`".into()));
        }
        if RS_READS.contains(&r) && c.is(k + 1, "(") && !c.is_before(k, 1, "fn") {
            let m = marker.get_or_insert_with(|| source_marker(c, a, b, tainted));
            if let Some(m) = m {
                out.push((k, format!("`{r}` of {m}")));
            }
        }
    }
    out
}

fn python_flags(c: &Code, a: usize, b: usize, tainted: &HashSet<&str>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    // `g = inspect.getsource`: an alias, reported where it is called.
    if let Some((_, v)) = c.assignment(a, b) {
        if c.chain(v).is_some_and(|(_, e)| e == b) {
            return out;
        }
    }
    let mut marker: Option<Option<String>> = None;
    let reads = |c: &Code| {
        (a..b).any(|k| c.word(k).is_some_and(|w| PY_READS.contains(&w)) && c.is(k + 1, "("))
    };
    for k in a..b {
        let Some(w) = c.word(k) else { continue };
        if let Some((r, _)) = c.chain(k) {
            let last = r.rsplit('.').next().unwrap_or(&r);
            let first = r.split('.').next().unwrap_or(&r);
            if PY_GETSOURCE.contains(&last)
                || first == "linecache"
                || (first == "dis" && r.contains('.') && c.imported.contains(w))
            {
                out.push((k, format!("`{r}`")));
            } else if r == "ast.parse"
                && reads(c)
                && !c
                    .literals(a, b)
                    .any(|l| is_data_path(l) && !is_code_path(l))
            {
                out.push((k, "`ast.parse` of a file read".into()));
            }
        }
        if PY_CODE_ATTRS.contains(&w) {
            out.push((k, format!("`{w}`")));
        }
        if PY_READS.contains(&w) && c.is(k + 1, "(") && !c.is_before(k, 1, "def") {
            let m = marker.get_or_insert_with(|| source_marker(c, a, b, tainted));
            if let Some(m) = m {
                out.push((k, format!("`{w}` of {m}")));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::check_one;
    use super::*;

    fn found(path: &str, base: Option<&str>, new: &str) -> Vec<Issue> {
        let mut out = Vec::new();
        check(
            &[FileVersions {
                path,
                old_path: None,
                base,
                new: Some(new),
            }],
            &mut out,
        );
        out.into_iter().map(|f| f.issue).collect()
    }

    const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 { a - b }\n";
    const LIB_TESTED: &str = "pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n}\n";

    /// `(name, path, base, new)`: each must give exactly one finding.
    const FLAGGED: &[(&str, &str, &str, &str)] = &[
        (
            "include_str of the code",
            "tests/it.rs",
            "",
            "#[test]\nfn t() {\n    let s = include_str!(\"../src/lib.rs\");\n    assert!(s.contains(\"a + b\"));\n}\n",
        ),
        (
            "include_str split with comments",
            "tests/it.rs",
            "",
            "#[test]\nfn t() {\n    let s = include_str! /* the code */ (\n        // here\n        \"../src/lib.rs\"\n    );\n    assert!(s.contains(\"+\"));\n}\n",
        ),
        (
            "include_str aliased",
            "tests/it.rs",
            "",
            "use std::include_str as inc;\n#[test]\nfn t() { assert!(inc!(\"../src/lib.rs\").contains(\"+\")); }\n",
        ),
        (
            "include_bytes built with concat",
            "tests/it.rs",
            "",
            "#[test]\nfn t() { let b = include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/data.json\")); assert!(!b.is_empty()); }\n",
        ),
        (
            "file!() in a test",
            "tests/it.rs",
            "",
            "#[test]\nfn t() { let me = file!(); assert!(me.ends_with(\"it.rs\")); }\n",
        ),
        (
            "read_to_string of src with the manifest dir",
            "tests/it.rs",
            "",
            "#[test]\nfn t() {\n    let s = std::fs::read_to_string(\n        concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/src/lib.rs\"),\n    ).unwrap();\n    assert!(s.contains(\"+\"));\n}\n",
        ),
        (
            "path through a let",
            "tests/it.rs",
            "",
            "#[test]\nfn t() {\n    let p = std::path::Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"src\");\n    let s = std::fs::read_to_string(p).unwrap();\n    assert!(s.contains(\"+\"));\n}\n",
        ),
        (
            "aliased read",
            "tests/it.rs",
            "",
            "use std::fs::read_to_string as slurp;\n#[test]\nfn t() { assert!(slurp(\"src/lib.rs\").unwrap().contains(\"+\")); }\n",
        ),
        (
            "File::open in a test module of src",
            "src/lib.rs",
            LIB_TESTED,
            "pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n    #[test]\n    fn spelled() {\n        let mut s = String::new();\n        std::io::Read::read_to_string(&mut std::fs::File::open(file!()).unwrap(), &mut s).unwrap();\n    }\n}\n",
        ),
        (
            "include_str in a new #[test] fn outside a module",
            "src/lib.rs",
            LIB,
            "pub fn add(a: i32, b: i32) -> i32 { a - b }\n#[test]\nfn t() { assert!(include_str!(\"lib.rs\").contains(\"a + b\")); }\n",
        ),
        (
            "getsource",
            "tests/test_calc.py",
            "import calc\n",
            "import calc\nimport inspect\n\ndef test_add():\n    assert 'a + b' in inspect.getsource(calc.add)\n",
        ),
        (
            "getsource aliased",
            "tests/test_calc.py",
            "",
            "from inspect import getsource as g\nimport calc\n\ndef test_add():\n    assert '+' in g(calc.add)\n",
        ),
        (
            "getsource assigned",
            "tests/test_calc.py",
            "",
            "import inspect as ins\nsrc_of = ins.getsource\n\ndef test_add():\n    assert '+' in src_of(calc.add)\n",
        ),
        (
            "getsource split with comments",
            "tests/test_calc.py",
            "",
            "import inspect\n\ndef test_add():\n    text = (inspect  # the module\n        .getsource)(\n        calc.add,  # the function\n    )\n    assert '+' in text\n",
        ),
        (
            "linecache",
            "tests/test_calc.py",
            "",
            "import linecache\n\ndef test_add():\n    assert '+' in linecache.getline(calc.__file__, 2)\n",
        ),
        (
            "code object",
            "tests/test_calc.py",
            "",
            "def test_add():\n    assert 2 in calc.add.__code__.co_consts\n",
        ),
        (
            "dis",
            "tests/test_calc.py",
            "",
            "import dis\n\ndef test_add():\n    dis.dis(calc.add)\n",
        ),
        (
            "open a module's file",
            "tests/test_calc.py",
            "",
            "def test_add():\n    with open(calc.__file__) as f:\n        assert '+' in f.read()\n",
        ),
        (
            "read_text of a .py path",
            "tests/test_calc.py",
            "",
            "from pathlib import Path\n\ndef test_add():\n    text = (Path(__file__).parent.parent\n            / 'calc.py').read_text()\n    assert '+' in text\n",
        ),
        (
            "a .py path through a variable",
            "tests/test_calc.py",
            "",
            "from pathlib import Path\nSRC = Path(__file__).parent.parent / 'calc.py'\n\ndef test_add():\n    assert '+' in SRC.read_text()\n",
        ),
        (
            "importlib.resources",
            "tests/test_calc.py",
            "",
            "import importlib.resources\n\ndef test_add():\n    assert '+' in importlib.resources.files('calc').joinpath('core.py').read_text()\n",
        ),
        (
            "ast.parse of a read file",
            "tests/test_calc.py",
            "",
            "import ast\n\ndef test_add(path):\n    tree = ast.parse(open(path).read())\n",
        ),
        (
            "loader get_source",
            "tests/test_calc.py",
            "",
            "def test_add():\n    assert '+' in calc.__loader__.get_source('calc')\n",
        ),
    ];

    #[test]
    fn each_way_of_reading_source_is_one_finding() {
        for (name, path, base, new) in FLAGGED {
            let base = (!base.is_empty()).then_some(*base);
            let issues = found(path, base, new);
            assert_eq!(issues.len(), 1, "{name}: {issues:?}");
            let i = &issues[0];
            assert_eq!(i.rule, RULE_READS_SOURCE, "{name}");
            assert_eq!(i.severity, Severity::Error, "{name}");
            assert!(
                i.message.contains("reads the source text")
                    && i.message.contains(&format!("{path}:")),
                "{name}: {}",
                i.message
            );
            // Present at the base already: not the change's.
            assert!(found(path, Some(new), new).is_empty(), "{name}: unchanged");
        }
    }

    #[test]
    fn honest_tests_are_clean() {
        let cases: &[(&str, &str, Option<&str>, &str)] = &[
            (
                "a fix with a test module",
                "src/lib.rs",
                Some(LIB),
                "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n}\n",
            ),
            (
                "a data fixture included",
                "tests/it.rs",
                None,
                "#[test]\nfn t() { let cases = include_str!(\"data/cases.json\"); assert!(!cases.is_empty()); }\n",
            ),
            (
                "a data fixture read at run time",
                "tests/it.rs",
                None,
                "#[test]\nfn t() {\n    let p = std::path::Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"tests/data/in.txt\");\n    let s = std::fs::read_to_string(p).unwrap();\n    assert_eq!(demo::add(1, 2), s.trim().parse().unwrap());\n}\n",
            ),
            (
                "a source file read by the code, not its tests",
                "src/lib.rs",
                Some(LIB),
                "pub fn add(a: i32, b: i32) -> i32 { a + b }\npub const SELF: &str = include_str!(\"lib.rs\");\n",
            ),
            (
                "only in a comment or a string",
                "tests/it.rs",
                None,
                "// include_str!(\"../src/lib.rs\")\n#[test]\nfn t() { let s = \"include_str!(\\\"../src/lib.rs\\\")\"; assert!(!s.is_empty()); }\n",
            ),
            (
                "a pytest test reading a JSON fixture",
                "tests/test_calc.py",
                None,
                "import json, os\nfrom pathlib import Path\nimport calc\nHERE = Path(__file__).parent\n\ndef test_add():\n    cases = json.loads((HERE / 'fixtures' / 'cases.json').read_text())\n    with open(os.path.join(os.path.dirname(__file__), 'data.json')) as f:\n        more = json.load(f)\n    for a, b, want in cases + more:\n        assert calc.add(a, b) == want\n",
            ),
            (
                "a test that calls the function",
                "tests/test_calc.py",
                None,
                "import inspect\nimport calc\n\ndef test_add():\n    assert calc.add(2, 2) == 4\n    assert inspect.isfunction(calc.add)\n",
            ),
            (
                "code under test may read itself",
                "calc.py",
                None,
                "import inspect\n\ndef describe(f):\n    return inspect.getsource(f)\n",
            ),
        ];
        for (name, path, base, new) in cases {
            let issues = found(path, *base, new);
            assert!(issues.is_empty(), "{name}: {issues:?}");
        }
    }

    #[test]
    fn only_what_the_change_adds_counts() {
        let one =
            "import inspect\n\ndef test_a():\n    assert '+' in inspect.getsource(calc.add)\n";
        let two = format!("{one}\ndef test_b():\n    assert '+' in inspect.getsource(calc.add)\n");
        let issues = found("tests/test_calc.py", Some(one), &two);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].line, Some(7));
        // Moved to another file of the change: not new.
        let mut out = Vec::new();
        check(
            &[
                FileVersions {
                    path: "tests/test_calc.py",
                    old_path: None,
                    base: Some(one),
                    new: Some("import calc\n"),
                },
                FileVersions {
                    path: "tests/test_more.py",
                    old_path: None,
                    base: None,
                    new: Some(one),
                },
            ],
            &mut out,
        );
        assert!(out.is_empty());
    }

    #[test]
    fn through_check_with_the_other_rules() {
        let now = format!(
            "{LIB}#[cfg(test)]\nmod tests {{\n    #[test]\n    fn spelled() {{ assert!(include_str!(\"lib.rs\").contains(\"a + b\")); }}\n}}\n"
        );
        let issues = check_one("src/lib.rs", Some(LIB), Some(&now));
        let ours: Vec<_> = issues
            .iter()
            .filter(|i| i.rule == RULE_READS_SOURCE)
            .collect();
        assert_eq!(ours.len(), 1, "{issues:?}");
        assert_eq!(ours[0].line, Some(5));
    }
}
