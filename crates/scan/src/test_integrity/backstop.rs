//! Backstop rules, cheap and lexical, for what running the tests cannot
//! see: the code under test runs in the runner's own process, so code that
//! runs before `main`, ends the process early, prints a runner's result
//! lines, or quietly redefines what a test calls can make a run look like
//! a pass.
//!
//! Each rule reads the TOKENS of a file (comments and whitespace are not
//! tokens, a string literal is one), the whole file at the base and now, so
//! a construct split over lines, with comments between its tokens, or
//! reached through an alias (`use std::process::exit as quit;`,
//! `import os as o`, `from os import _exit as e`, `e = os._exit`) reads the
//! same as its plain form. A construct is reported when the change made it
//! more frequent than at the base (keyed by what it resolves to, not by
//! its spelling), at its occurrences on the lines the change added:
//!
//! - `test-integrity/runs-before-tests` (error): code that runs before
//!   `main` (or after it): Rust `#[link_section = …]` naming a constructor
//!   or destructor section (`.init_array*`, `.preinit_array`, `.ctors*`,
//!   `__DATA,__mod_init_func`, `.CRT$XC*`/`XI*`/`XL*`, `.fini_array*`,
//!   `.dtors*`, `__mod_term_func`, `.CRT$XT*`) — also inside `unsafe(…)` or
//!   `cfg_attr(…)`, built with `concat!`, or given by a macro variable or
//!   any other non-literal — the same sections in `global_asm!`/`asm!`,
//!   `#[ctor]`/`#[dtor]` under any path or `use` alias; C
//!   `__attribute__((constructor))`/`destructor`, `[[gnu::constructor]]`,
//!   `#pragma init`, and any C string naming such a section.
//! - `test-integrity/ends-the-run` (error): code that ends the process
//!   itself, so the tests after it never report and the exit status is its
//!   choice: in Rust test code, `process::exit`/`process::abort`,
//!   `libc::_exit`/`exit`/`abort` (through `use` and `extern crate`
//!   aliases and globs); in a Go test, `os.Exit`/`syscall.Exit` (any import
//!   name) other than `os.Exit(m.Run())`; in Python anywhere, `os._exit`,
//!   `os.abort`, `os.exec*`, `os.kill`/`killpg` of its own process,
//!   `signal.signal`/`raise_signal`/`pthread_kill`, `atexit.register`,
//!   and `getattr`/`__dict__`/`vars` on `os`, `sys`, `atexit` or `signal`
//!   with a computed or concatenated name; in a Python test file also
//!   `sys.exit` and the `exit`/`quit` builtins.
//! - `test-integrity/forged-results` (error): a string a runner prints as a
//!   result (`test result: ok`, `... ok` at a line's end, `--- PASS:`),
//!   also assembled from pieces: adjacent literals, `+`, `concat!`,
//!   `stringify!`, and literals filling a format string's placeholders.
//! - `test-integrity/assertion-redefined` (error): a Rust macro named like
//!   a standard assertion or test macro (`assert`, `assert_eq`,
//!   `assert_ne`, `debug_assert*`, `assert_matches`, `panic`,
//!   `unreachable`, `todo`, `unimplemented`, `matches`) by `macro_rules!`
//!   (raw names too), `macro`, `#[proc_macro] fn`, or a `use … as` rename.
//! - `test-integrity/shadowed` (error): a function in a Rust test module
//!   with the name of a function of the code under test in the same file:
//!   the tests call the copy, not the code.
//! - `test-integrity/patches-runner` (error): Python that reaches into the
//!   test runner from inside its process. In code under test (not a test
//!   file): importing `pytest`, `_pytest`, `pluggy` or `unittest` (its
//!   `mock` aside), importing a module by a computed name (`__import__`,
//!   `importlib.import_module`), and `sys.modules` used other than by a
//!   literal key or `__name__`. Anywhere: setting or deleting an attribute
//!   of the runner, `TestCase` or `builtins`/`__builtins__` (assignment,
//!   `setattr`, `object.__setattr__`, `mock.patch`/`monkeypatch.setattr`
//!   on a runner path), `setattr` with a computed name on anything but a
//!   plain local name, a runner module in `sys.modules`, the runner reached
//!   by `getattr` with a computed name or `__dict__`, `gc.get_objects`/
//!   `get_referrers`/`get_referents`, the runner's internals
//!   (`TestReport`, `pluginmanager`, `config.hook`, `ihook`, `TestResult`,
//!   `TextTestResult`, `addFailure`, `addSuccess`, …; not in a
//!   `conftest.py`, which is runner configuration anyway), `ctypes` that
//!   loads the process's own C library or `pythonapi` or calls an exit,
//!   and `faulthandler`'s private crash functions. Importing the runner in
//!   a test file is normal and not reported.
//!
//! A Rust `extern crate x as std;` (or `core`, `alloc`, `test`, or
//! `extern crate self as std`), `use x as std;` or `mod std` is a
//! `test-integrity/runner-config` error: the `std::` paths the tests and
//! assertions name resolve to it.

use super::lex::{Source, Syntax};
use super::{FileVersions, Finding};
use crate::model::verdict::{Issue, Severity};
use std::collections::{HashMap, HashSet};

pub const RULE_RUNS_BEFORE: &str = "test-integrity/runs-before-tests";
pub const RULE_ENDS_RUN: &str = "test-integrity/ends-the-run";
pub const RULE_FORGED: &str = "test-integrity/forged-results";
pub const RULE_ASSERT_MACRO: &str = "test-integrity/assertion-redefined";
pub const RULE_SHADOWED: &str = "test-integrity/shadowed";
pub const RULE_PATCHES_RUNNER: &str = "test-integrity/patches-runner";

/// Standard assertion and test macros (sorted).
const ASSERT_NAMES: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_matches",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_matches",
    "debug_assert_ne",
    "matches",
    "panic",
    "todo",
    "unimplemented",
    "unreachable",
];

/// Crate names whose stand-in changes what `std::…` paths mean.
const STD_NAMES: &[&str] = &["alloc", "core", "std", "test"];

/// Nesting deeper than this is not looked into (use trees, getattr chains).
const MAX_NEST: usize = 16;

/// Whether this rule set reads `path` (source files that can run in a test
/// process).
pub(super) fn reads(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    matches!(
        ext,
        "rs" | "py" | "go" | "c" | "cc" | "cpp" | "cxx" | "h" | "hpp"
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Rust,
    Python,
    Go,
    C,
}

fn lang(path: &str) -> Option<Lang> {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    Some(match ext {
        "rs" => Lang::Rust,
        "py" => Lang::Python,
        "go" => Lang::Go,
        "c" | "cc" | "cpp" | "cxx" | "h" | "hpp" => Lang::C,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// The token stream.

#[derive(Debug, Clone, Copy)]
struct Tk<'a> {
    s: usize,
    e: usize,
    text: &'a str,
    lit: bool,
}

struct Stream<'a> {
    src: Source<'a>,
    t: Vec<Tk<'a>>,
    /// At an opening bracket, the index of its closing one (`t.len()` when
    /// never closed); the token's own index elsewhere.
    close: Vec<usize>,
    /// Python: the token starts a logical line (or follows a `;`).
    starts: Vec<bool>,
    /// Bracket depth at each token (before it, for an opening one).
    depth: Vec<u32>,
}

impl<'a> Stream<'a> {
    fn new(text: &'a str, lang: Lang) -> Self {
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

    fn len(&self) -> usize {
        self.t.len()
    }

    /// Whether token `i` is the code (not literal) `s`.
    fn is(&self, i: usize, s: &str) -> bool {
        self.t.get(i).is_some_and(|t| !t.lit && t.text == s)
    }

    /// The word (identifier or keyword) at `i`.
    fn word(&self, i: usize) -> Option<&'a str> {
        self.t
            .get(i)
            .filter(|t| !t.lit && is_word(t.text))
            .map(|t| t.text)
    }

    /// `::` at `i`.
    fn path_sep(&self, i: usize) -> bool {
        self.is(i, ":") && self.is(i + 1, ":") && self.t[i].e == self.t[i + 1].s
    }

    /// The token after the group opened at `i` (or after `i`).
    fn after(&self, i: usize) -> usize {
        match self.t.get(i) {
            Some(t) if !t.lit && matches!(t.text, "(" | "[" | "{") => {
                self.close[i].saturating_add(1).min(self.len())
            }
            _ => i + 1,
        }
    }

    /// The top-level comma-separated parts of the group opened at `open`,
    /// as token ranges.
    fn args(&self, open: usize) -> Vec<(usize, usize)> {
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
    fn lit_eval(&self, a: usize, b: usize) -> Option<(String, usize)> {
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

fn is_word(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(|c| super::lex::is_ident_byte(c) && !c.is_ascii_digit())
}

/// The value of a literal token: quotes, prefixes and raw-string hashes
/// taken off, escapes decoded (not in raw strings).
fn lit_value(text: &str) -> String {
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

fn unescape(s: &str) -> String {
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

/// Whether the section `v` runs its functions before `main` (`Some(true)`)
/// or after it (`Some(false)`), matched by prefix (priorities and the
/// letters after `.CRT$XC` vary).
fn section_runs(v: &str) -> Option<bool> {
    let v: String = v
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    const BEFORE: &[&str] = &[
        ".init_array",
        ".preinit_array",
        ".ctors",
        ".crt$xc",
        ".crt$xi",
        ".crt$xl",
    ];
    const AFTER: &[&str] = &[".fini_array", ".dtors", ".crt$xt", ".crt$xp"];
    if v == ".init" || v.contains("mod_init_func") || BEFORE.iter().any(|p| v.starts_with(p)) {
        Some(true)
    } else if v == ".fini" || v.contains("mod_term_func") || AFTER.iter().any(|p| v.starts_with(p))
    {
        Some(false)
    } else {
        None
    }
}

/// Whether assembly text `v` puts something in a constructor or destructor
/// section.
fn asm_sections(v: &str) -> Option<bool> {
    let v = v.to_ascii_lowercase();
    const BEFORE: &[&str] = &[
        ".init_array",
        ".preinit_array",
        ".ctors",
        "mod_init_func",
        ".crt$xc",
        ".crt$xi",
        ".crt$xl",
    ];
    const AFTER: &[&str] = &[".fini_array", ".dtors", "mod_term_func", ".crt$xt"];
    if BEFORE.iter().any(|p| v.contains(p)) {
        Some(true)
    } else if AFTER.iter().any(|p| v.contains(p)) {
        Some(false)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// What each rule finds.

/// One occurrence of a construct a rule reports.
struct Hit {
    rule: &'static str,
    /// What it is, independent of spelling and place (with its context
    /// where that matters): occurrences are counted by it.
    key: String,
    /// Byte span in the file.
    s: usize,
    e: usize,
    msg: String,
}

/// Where a file stands: its path, whether it is a test file, and (Rust) the
/// spans of its test modules.
struct Ctx<'p> {
    path: &'p str,
    test_file: bool,
    test_spans: Vec<(usize, usize)>,
}

impl Ctx<'_> {
    fn in_tests(&self, offset: usize) -> bool {
        self.test_file
            || self
                .test_spans
                .iter()
                .any(|(a, b)| *a <= offset && offset < *b)
    }
}

struct Hits<'s, 'a> {
    st: &'s Stream<'a>,
    out: Vec<Hit>,
}

impl Hits<'_, '_> {
    /// A hit over tokens `a..b`; `msg` gets the construct's text.
    fn push(
        &mut self,
        rule: &'static str,
        key: String,
        a: usize,
        b: usize,
        msg: impl Fn(&str) -> String,
    ) {
        let b = b.min(self.st.len());
        let (Some(first), Some(last)) = (self.st.t.get(a), self.st.t.get(b.max(a + 1) - 1)) else {
            return;
        };
        // Shown: at most a few hundred bytes of it.
        let text = self.st.src.text;
        let mut cut = last.e.min(first.s + 320).min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let shown = super::short(self.st.src.slice(first.s, cut));
        self.out.push(Hit {
            rule,
            key: format!("{rule}|{key}"),
            s: first.s,
            e: last.e,
            msg: msg(&shown),
        });
    }
}

/// The hits in one version of a file (`test_spans`: its Rust test
/// modules).
fn hits(path: &str, text: &str, test_spans: Vec<(usize, usize)>) -> Vec<Hit> {
    let Some(lang) = lang(path) else {
        return Vec::new();
    };
    let st = Stream::new(text, lang);
    let ctx = Ctx {
        path,
        test_file: super::is_test_path(path),
        test_spans,
    };
    let mut h = Hits {
        st: &st,
        out: Vec::new(),
    };
    match lang {
        Lang::Rust => rust(&mut h, &ctx),
        Lang::Python => python(&mut h, &ctx),
        Lang::Go => go(&mut h, &ctx),
        Lang::C => c(&mut h),
    }
    forged(&mut h);
    h.out
}

fn before_msg(runs_before: bool) -> impl Fn(&str) -> String {
    move |t| {
        let when = if runs_before { "before" } else { "after" };
        format!("code that runs {when} `main` was added (`{t}`): it can print or decide a test run's results")
    }
}

fn ends_msg(why: &'static str) -> impl Fn(&str) -> String {
    move |t| {
        format!("{why} (`{t}`): the tests after it never report, and the exit status is its choice")
    }
}

fn patch_msg(why: &'static str) -> impl Fn(&str) -> String {
    move |t| format!("{why} (`{t}`): the runner reports what the code in its process lets it")
}

// ---------------------------------------------------------------------------
// Rust.

/// A name a `use` or `extern crate` binds, and the path it names.
struct Bind {
    name: String,
    path: Vec<String>,
    /// The statement, as a token range.
    stmt: (usize, usize),
    /// Bound by `extern crate`.
    extern_crate: bool,
}

/// The bindings of the `use` tree at `i` (after `prefix`); returns the
/// token after the tree.
fn use_tree(
    st: &Stream,
    mut i: usize,
    prefix: &[String],
    stmt: (usize, usize),
    out: &mut (Vec<Bind>, Vec<Vec<String>>),
    depth: usize,
) -> usize {
    let mut path = prefix.to_vec();
    if st.path_sep(i) {
        i += 2;
    }
    loop {
        if st.is(i, "{") {
            let end = st.close[i].min(st.len());
            if depth < MAX_NEST {
                let mut j = i + 1;
                while j < end {
                    j = use_tree(st, j, &path, stmt, out, depth + 1);
                    while j < end && !st.is(j, ",") {
                        j = st.after(j);
                    }
                    j += 1;
                }
            }
            return end + 1;
        }
        if st.is(i, "*") {
            out.1.push(path);
            return i + 1;
        }
        let Some(w) = st.word(i) else {
            return i + 1;
        };
        if st.path_sep(i + 1) {
            path.push(w.to_string());
            i += 3;
            continue;
        }
        let (alias, next) = if st.word(i + 1) == Some("as") {
            (st.word(i + 2), i + 3)
        } else {
            (None, i + 1)
        };
        if w != "self" {
            path.push(w.to_string());
        }
        let name = alias.unwrap_or_else(|| path.last().map_or("", String::as_str));
        if !name.is_empty() && name != "_" {
            out.0.push(Bind {
                name: name.to_string(),
                path,
                stmt,
                extern_crate: false,
            });
        }
        return next;
    }
}

/// The token ending the statement that starts at `i` (its `;`, or the
/// closing brace around it).
fn statement_end(st: &Stream, i: usize) -> usize {
    let mut j = i + 1;
    while j < st.len() && !st.is(j, ";") && !st.is(j, "}") {
        j = st.after(j);
    }
    j.min(st.len().saturating_sub(1))
}

/// Whether a resolved Rust path ends the process.
fn rust_exit(p: &[String]) -> bool {
    const TAILS: &[&[&str]] = &[
        &["process", "exit"],
        &["process", "abort"],
        &["libc", "_exit"],
        &["libc", "exit"],
        &["libc", "abort"],
        &["unistd", "_exit"],
        &["intrinsics", "abort"],
    ];
    TAILS.iter().any(|t| {
        p.len() >= t.len()
            && p[p.len() - t.len()..]
                .iter()
                .zip(t.iter())
                .all(|(a, b)| a == b)
    })
}

/// The path at `i` (`a::b::c`) and the token after it.
fn rust_path(st: &Stream, i: usize) -> (Vec<String>, usize) {
    let mut segs = Vec::new();
    let mut k = i;
    while let Some(w) = st.word(k) {
        segs.push(w.to_string());
        if st.path_sep(k + 1) && st.word(k + 3).is_some() {
            k += 3;
        } else {
            k += 1;
            break;
        }
    }
    (segs, k)
}

fn runner_msg(name: String) -> impl Fn(&str) -> String {
    move |t| {
        format!("`{t}` was added: a stand-in named `{name}` takes the place of the crate the tests' `{name}::` paths and assertions name")
    }
}

fn assert_msg(name: String, renamed: bool) -> impl Fn(&str) -> String {
    move |t| {
        if renamed {
            format!("a macro was renamed `{name}!` (`{t}`): it replaces the standard assertion in the code that sees it")
        } else {
            format!("a macro named `{name}!` was defined: it replaces the standard assertion in the code that sees it")
        }
    }
}

fn rust(h: &mut Hits, ctx: &Ctx) {
    let st = h.st;
    let n = st.len();
    let mut uses = (Vec::<Bind>::new(), Vec::<Vec<String>>::new());
    let mut in_use = vec![false; n];
    let mut i = 0;
    while i < n {
        let w = st.word(i);
        if w == Some("use") {
            let end = statement_end(st, i);
            use_tree(st, i + 1, &[], (i, end + 1), &mut uses, 0);
            in_use[i..=end].iter_mut().for_each(|b| *b = true);
            i = end + 1;
            continue;
        }
        if w == Some("extern") && st.word(i + 1) == Some("crate") {
            let end = statement_end(st, i);
            if let Some(krate) = st.word(i + 2) {
                let alias = (st.word(i + 3) == Some("as"))
                    .then(|| st.word(i + 4))
                    .flatten();
                let name = alias.unwrap_or(krate);
                if name != "_" {
                    uses.0.push(Bind {
                        name: name.to_string(),
                        path: vec![krate.to_string()],
                        stmt: (i, end + 1),
                        extern_crate: true,
                    });
                }
            }
            in_use[i..=end].iter_mut().for_each(|b| *b = true);
            i = end + 1;
            continue;
        }
        i += 1;
    }
    let (binds, globs) = uses;
    let alias: HashMap<&str, &Vec<String>> =
        binds.iter().map(|b| (b.name.as_str(), &b.path)).collect();
    let resolve = |mut p: Vec<String>| {
        for _ in 0..4 {
            let Some(first) = p.first() else { break };
            if matches!(first.as_str(), "crate" | "self" | "super") {
                break;
            }
            match alias.get(first.as_str()) {
                Some(to) if to.first() != Some(first) || to.len() > 1 => {
                    let mut q = (*to).clone();
                    q.extend(p.drain(1..));
                    p = q;
                }
                _ => break,
            }
        }
        p
    };
    for b in &binds {
        let renamed = b.path.last() != Some(&b.name);
        if ASSERT_NAMES.binary_search(&b.name.as_str()).is_ok() && renamed && !b.extern_crate {
            h.push(
                RULE_ASSERT_MACRO,
                format!("use as {}: {}", b.name, b.path.join("::")),
                b.stmt.0,
                b.stmt.1,
                assert_msg(b.name.clone(), true),
            );
        }
        let std_name = if b.extern_crate {
            STD_NAMES.contains(&b.name.as_str())
        } else {
            matches!(b.name.as_str(), "std" | "core" | "alloc")
        };
        if std_name && renamed {
            h.push(
                super::RULE_RUNNER,
                format!("{} as {}", b.path.join("::"), b.name),
                b.stmt.0,
                b.stmt.1,
                runner_msg(b.name.clone()),
            );
        }
    }
    for i in 0..n {
        let prev_joins = i > 0 && (st.is(i - 1, ".") || (i > 1 && st.path_sep(i - 2)));
        if st.is(i, "#") {
            let mut j = i + 1;
            if st.is(j, "!") {
                j += 1;
            }
            if st.is(j, "[") {
                rust_attribute(h, i, j, &resolve);
            }
            continue;
        }
        let Some(w) = st.word(i) else { continue };
        match w {
            "macro_rules" if st.is(i + 1, "!") => {
                if let Some(name) = st.word(i + 2) {
                    if ASSERT_NAMES.binary_search(&name).is_ok() {
                        h.push(
                            RULE_ASSERT_MACRO,
                            format!("macro {name}"),
                            i,
                            i + 3,
                            assert_msg(name.to_string(), false),
                        );
                    }
                }
            }
            "macro" => {
                if let Some(name) = st.word(i + 1) {
                    if ASSERT_NAMES.binary_search(&name).is_ok() {
                        h.push(
                            RULE_ASSERT_MACRO,
                            format!("macro {name}"),
                            i,
                            i + 2,
                            assert_msg(name.to_string(), false),
                        );
                    }
                }
            }
            "global_asm" | "asm" | "naked_asm" if st.is(i + 1, "!") => {
                let open = i + 2;
                let end = st.after(open);
                for k in open..end.min(open + 4096) {
                    if st.t[k].lit {
                        if let Some(before) = asm_sections(&lit_value(st.t[k].text)) {
                            h.push(
                                RULE_RUNS_BEFORE,
                                format!("asm {before}"),
                                i,
                                end,
                                before_msg(before),
                            );
                            break;
                        }
                    }
                }
            }
            "link_section" if st.is(i + 1, "=") => rust_link_section(h, i),
            "mod" => {
                if let Some(name) = st
                    .word(i + 1)
                    .filter(|n| matches!(*n, "std" | "core" | "alloc"))
                {
                    h.push(
                        super::RULE_RUNNER,
                        format!("mod {name}"),
                        i,
                        i + 2,
                        runner_msg(name.to_string()),
                    );
                }
            }
            _ if !in_use.get(i).copied().unwrap_or(false) && !prev_joins => {
                let offset = st.t[i].s;
                if !ctx.in_tests(offset) {
                    continue;
                }
                let (segs, end) = rust_path(st, i);
                let single = segs.len() == 1 && !alias.contains_key(segs[0].as_str());
                let resolved = resolve(segs.clone());
                let exits = rust_exit(&resolved)
                    || (single
                        && globs.iter().any(|g| {
                            let mut p = g.clone();
                            p.push(segs[0].clone());
                            rust_exit(&p)
                        }));
                if exits {
                    let end = if st.is(end, "(") { st.after(end) } else { end };
                    let key = if single && !rust_exit(&resolved) {
                        format!("glob {}", segs[0])
                    } else {
                        resolved.join("::")
                    };
                    h.push(
                        RULE_ENDS_RUN,
                        format!("tests {key}"),
                        i,
                        end,
                        ends_msg("test code ends the process itself"),
                    );
                }
            }
            _ => {}
        }
    }
}

/// An attribute `#[…]` whose `[` is at `open`, starting at `hash`.
fn rust_attribute(
    h: &mut Hits,
    hash: usize,
    open: usize,
    resolve: &dyn Fn(Vec<String>) -> Vec<String>,
) {
    let st = h.st;
    let end = st.close[open].min(st.len());
    let mut k = open + 1;
    if st.word(k) == Some("unsafe") && st.is(k + 1, "(") {
        k += 2;
    }
    let (segs, _) = rust_path(st, k);
    let path = resolve(segs);
    let last = path.last().map_or("", String::as_str);
    let ctor = path.iter().any(|s| s == "ctor" || s == "dtor")
        || matches!(last, "constructor" | "destructor");
    if ctor {
        let before = !matches!(last, "dtor" | "destructor");
        h.push(
            RULE_RUNS_BEFORE,
            format!("attr {}", path.join("::")),
            hash,
            end + 1,
            before_msg(before),
        );
    }
    if path.len() == 1 && last == "proc_macro" {
        let mut j = end + 1;
        let stop = (end + 40).min(st.len());
        while j < stop && !st.is(j, "fn") {
            j += 1;
        }
        if let Some(name) = st
            .word(j + 1)
            .filter(|n| ASSERT_NAMES.binary_search(n).is_ok())
        {
            h.push(
                RULE_ASSERT_MACRO,
                format!("macro {name}"),
                hash,
                j + 2,
                assert_msg(name.to_string(), false),
            );
        }
    }
}

/// `link_section = …` at `i`, in an attribute (also within `unsafe(…)` or
/// `cfg_attr(…)`).
fn rust_link_section(h: &mut Hits, i: usize) {
    let st = h.st;
    let mut v = i + 2;
    while v < st.len() && !st.is(v, ",") && !st.is(v, ")") && !st.is(v, "]") && !st.is(v, ";") {
        v = st.after(v);
    }
    // Shown from the attribute's `#` when it is near.
    let start = (i.saturating_sub(8)..i)
        .rev()
        .find(|&k| st.is(k, "#"))
        .unwrap_or(i);
    let end = if st.is(v, ")") || st.is(v, "]") {
        let mut e = v;
        while e < st.len() && e < v + 4 && (st.is(e, ")") || st.is(e, "]")) {
            e += 1;
        }
        e
    } else {
        v
    };
    match st.lit_eval(i + 2, v) {
        Some((value, _)) => {
            if let Some(before) = section_runs(&value) {
                h.push(RULE_RUNS_BEFORE, format!("link_section {value}"), start, end, before_msg(before));
            }
        }
        None => h.push(RULE_RUNS_BEFORE, "link_section ?".into(), start, end, |t| {
            format!("code was put in a link section the code does not name (`{t}`): it can run before `main` and print or decide a test run's results")
        }),
    }
}

// ---------------------------------------------------------------------------
// Python.

/// Modules that end the process, hook its end, or hold the runner: a name
/// bound to one by assignment is followed like an import.
const PY_MODULES: &[&str] = &[
    "__builtins__",
    "_pytest",
    "atexit",
    "builtins",
    "ctypes",
    "faulthandler",
    "gc",
    "importlib",
    "os",
    "pluggy",
    "pytest",
    "signal",
    "sys",
    "unittest",
];

/// Python that ends the process or hooks its end, anywhere.
const PY_ENDS: &[&str] = &[
    "atexit.register",
    "os._exit",
    "os.abort",
    "os.execl",
    "os.execle",
    "os.execlp",
    "os.execlpe",
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.execvpe",
    "signal.pthread_kill",
    "signal.raise_signal",
    "signal.signal",
];

/// The runner's internals, by name.
const PY_INTERNALS: &[&str] = &[
    "CallInfo",
    "TestReport",
    "TestResult",
    "TextTestResult",
    "_TextTestResult",
    "addError",
    "addExpectedFailure",
    "addFailure",
    "addSkip",
    "addSubTest",
    "addSuccess",
    "addUnexpectedSuccess",
    "ihook",
    "pluginmanager",
];

const W_IMPORT: &str = "the code under test imports the test runner";
const W_DYN_IMPORT: &str = "the code under test imports a module by a computed name";
const W_DYN_RUNNER: &str = "it imports the test runner by a computed name";
const W_SET: &str = "it sets an attribute of the test runner";
const W_BUILTIN: &str = "it replaces a builtin";
const W_SETATTR_DYN: &str = "it sets an attribute named at run time";
const W_SYS_MODULES_RUNNER: &str = "it replaces the test runner in `sys.modules`";
const W_SYS_MODULES: &str = "the code under test reaches into `sys.modules`";
const W_GC: &str = "it walks the interpreter's objects (`gc`), the test runner's among them";
const W_INTERNALS: &str = "it reaches the test runner's internals";
const W_GETATTR: &str = "it reaches the test runner through a computed name";
const W_CTYPES_EXIT: &str = "it ends the process through `ctypes`";
const W_CTYPES: &str = "it reaches into the interpreter through `ctypes`";
const W_FAULT: &str = "it crashes the process through `faulthandler`";

/// A dotted expression: `a.b(c)[d].e`, its head resolved through imports
/// and aliases, `getattr`/`vars`/`__import__`/`importlib.import_module`
/// followed.
#[derive(Debug, Clone, Default)]
struct Chain {
    /// The token after it.
    end: usize,
    /// Names; `()` for a call, `[k]` for a subscript (`[?]` computed),
    /// `?` for a name computed at run time.
    segs: Vec<String>,
    /// The head is a module (bound by an import, or imported by name).
    imported: bool,
    /// A `getattr` with a computed or concatenated name, or an import by a
    /// computed name, is on the way.
    dynamic: bool,
    /// The `(` of the first call right after the leading names.
    first_call: Option<usize>,
    /// Imports by name on the way: the module when literal, and whether it
    /// was assembled from pieces.
    imports: Vec<(Option<String>, bool)>,
}

impl Chain {
    /// The leading names, dotted.
    fn names(&self) -> String {
        self.segs
            .iter()
            .take_while(|s| is_word(s))
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(".")
    }
    fn root(&self) -> &str {
        self.segs.first().map_or("", String::as_str)
    }
    fn seg(&self, i: usize) -> &str {
        self.segs.get(i).map_or("", String::as_str)
    }
    fn has(&self, n: &str) -> bool {
        self.segs.iter().any(|s| s == n)
    }
    fn is_runner(&self) -> bool {
        match self.root() {
            "pytest" | "_pytest" | "pluggy" | "TestCase" => true,
            "unittest" => self.seg(1) != "mock",
            "py" => self.imported,
            _ => false,
        }
    }
    fn is_builtins(&self) -> bool {
        matches!(self.root(), "builtins" | "__builtins__")
    }
}

/// Whether a module name is the runner's (`unittest.mock` is not).
fn runner_module(m: &str) -> bool {
    let root = m.split('.').next().unwrap_or("");
    match root {
        "pytest" | "_pytest" | "pluggy" => true,
        "unittest" => m != "unittest.mock" && !m.starts_with("unittest.mock."),
        _ => false,
    }
}

/// `posix` and `nt` are `os` by another name.
fn canonical(mut segs: Vec<String>) -> Vec<String> {
    if let Some(r) = segs.first_mut() {
        if r == "posix" || r == "nt" {
            *r = "os".into();
        }
    }
    segs
}

fn dotted(s: &str) -> Vec<String> {
    s.split('.').map(String::from).collect()
}

#[derive(Default)]
struct PyEnv {
    /// Name → (path, bound to a module or a module's member).
    alias: HashMap<String, (Vec<String>, bool)>,
}

/// The dotted name at `i` and the token after it.
fn py_dotted(st: &Stream, i: usize) -> (String, usize) {
    let mut out = String::new();
    let mut k = i;
    while let Some(w) = st.word(k) {
        out.push_str(w);
        if st.is(k + 1, ".") && st.word(k + 2).is_some() {
            out.push('.');
            k += 2;
        } else {
            k += 1;
            break;
        }
    }
    (out, k)
}

fn py_chain(st: &Stream, i: usize, env: &PyEnv, depth: usize) -> Option<Chain> {
    let w = st.word(i)?;
    let mut c = Chain::default();
    match env.alias.get(w) {
        Some((p, imported)) => {
            c.segs = p.clone();
            c.imported = *imported;
        }
        None => c.segs = vec![w.to_string()],
    }
    c.segs = canonical(c.segs);
    let mut k = i + 1;
    loop {
        if st.is(k, ".") {
            if let Some(n) = st.word(k + 1) {
                c.segs.push(n.to_string());
                k += 2;
                continue;
            }
        }
        if st.is(k, "(") {
            let names = c.names();
            let all_names = c.segs.iter().all(|s| is_word(s));
            let args = || st.args(k);
            let arg = |n: usize| args().get(n).and_then(|&(a, b)| st.lit_eval(a, b));
            if all_names
                && matches!(
                    names.as_str(),
                    "__import__"
                        | "builtins.__import__"
                        | "importlib.import_module"
                        | "importlib.__import__"
                )
            {
                let v = arg(0);
                c.imports.push((
                    v.as_ref().map(|v| v.0.clone()),
                    v.as_ref().is_some_and(|v| v.1 > 1),
                ));
                match v {
                    Some((m, pieces)) => {
                        let m = if names.ends_with("__import__") {
                            m.split('.').next().unwrap_or("").to_string()
                        } else {
                            m
                        };
                        c.segs = canonical(dotted(&m));
                        c.imported = true;
                        c.dynamic |= pieces > 1;
                    }
                    None => {
                        c.segs = vec!["?".into()];
                        c.dynamic = true;
                    }
                }
            } else if all_names
                && matches!(
                    names.as_str(),
                    "getattr" | "builtins.getattr" | "vars" | "builtins.vars"
                )
            {
                let target = args().first().and_then(|&(a, b)| {
                    if depth >= MAX_NEST {
                        return None;
                    }
                    py_chain(st, a, env, depth + 1).filter(|t| t.end == b)
                });
                match target {
                    Some(t) => {
                        c.segs = t.segs;
                        c.imported = t.imported;
                        c.dynamic |= t.dynamic;
                        c.imports.extend(t.imports);
                    }
                    None => c.segs = vec!["?expr".into()],
                }
                if names.ends_with("vars") {
                    c.segs.push("__dict__".into());
                } else {
                    match arg(1) {
                        Some((n, pieces)) => {
                            c.segs.push(n);
                            c.dynamic |= pieces > 1;
                        }
                        None => {
                            c.segs.push("?".into());
                            c.dynamic = true;
                        }
                    }
                }
            } else {
                if c.first_call.is_none() && all_names {
                    c.first_call = Some(k);
                }
                c.segs.push("()".into());
            }
            k = st.after(k);
            continue;
        }
        if st.is(k, "[") {
            let end = st.close[k];
            let key = match st.lit_eval(k + 1, end) {
                Some((v, _)) => v,
                None if end == k + 2 && st.word(k + 1) == Some("__name__") => "__name__".into(),
                None => "?".into(),
            };
            c.segs.push(format!("[{key}]"));
            k = st.after(k);
            continue;
        }
        break;
    }
    c.end = k;
    Some(c)
}

/// Whether the chain from `head` to `end` is assigned to or deleted.
fn py_target(st: &Stream, head: usize, end: usize) -> bool {
    if head > 0 && st.word(head - 1) == Some("del") {
        return true;
    }
    let single_eq = |k: usize| st.is(k, "=") && !st.is(k + 1, "=");
    if single_eq(end) {
        return true;
    }
    let op = |k: usize| st.t.get(k).filter(|t| !t.lit).map_or("", |t| t.text);
    if matches!(op(end), "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" | "@") && st.is(end + 1, "=")
    {
        return true;
    }
    if matches!(op(end), "*" | "/" | ">" | "<") && op(end + 1) == op(end) && st.is(end + 2, "=") {
        return true;
    }
    // `a, unittest.TestCase.x = …`: a tuple target at statement level.
    if st.is(end, ",") && st.depth[head] == 0 {
        let mut k = end;
        let stop = (end + 64).min(st.len());
        while k < stop && !st.starts[k] {
            if matches!(
                st.word(k),
                Some("in" | "lambda" | "for" | "if" | "return" | "yield")
            ) {
                return false;
            }
            if single_eq(k) && !matches!(op(k - 1), "=" | "!" | "<" | ">" | ":") {
                return true;
            }
            k = st.after(k);
        }
    }
    false
}

fn python(h: &mut Hits, ctx: &Ctx) {
    let st = h.st;
    let n = st.len();
    let mut env = PyEnv::default();
    let mut in_import = vec![false; n];
    // (module, members, statement) of every import.
    let mut imports: Vec<(String, Vec<String>, usize, usize)> = Vec::new();
    // The start of the next logical line after each token.
    let mut next_start = vec![n; n + 1];
    for i in (0..n).rev() {
        next_start[i] = if i + 1 < n && st.starts[i + 1] {
            i + 1
        } else {
            next_start[i + 1]
        };
    }
    for i in 0..n {
        let at_start = st.starts[i] || (i > 0 && st.is(i - 1, ":"));
        let kw = st.word(i);
        if in_import[i] || !at_start || !matches!(kw, Some("import" | "from")) {
            continue;
        }
        let end = next_start[i];
        in_import[i..end].iter_mut().for_each(|b| *b = true);
        if kw == Some("import") {
            let mut j = i + 1;
            while j < end {
                let (module, k) = py_dotted(st, j);
                if module.is_empty() {
                    break;
                }
                let (name, path, k) = if st.word(k) == Some("as") {
                    (
                        st.word(k + 1).unwrap_or("_").to_string(),
                        dotted(&module),
                        k + 2,
                    )
                } else {
                    let root = module.split('.').next().unwrap_or("").to_string();
                    (root.clone(), vec![root], k)
                };
                env.alias.insert(name, (canonical(path), true));
                imports.push((module, Vec::new(), i, end));
                if !st.is(k, ",") {
                    break;
                }
                j = k + 1;
            }
        } else {
            let mut j = i + 1;
            let mut module = String::new();
            while st.is(j, ".") {
                module.push('.');
                j += 1;
            }
            let (m, k) = py_dotted(st, j);
            module.push_str(&m);
            if st.word(k) != Some("import") {
                continue;
            }
            let (mut j, stop) = if st.is(k + 1, "(") {
                (k + 2, st.close[k + 1].min(end))
            } else {
                (k + 1, end)
            };
            let mut members = Vec::new();
            while j < stop {
                if st.is(j, "*") {
                    members.push("*".to_string());
                    j += 1;
                } else if let Some(w) = st.word(j) {
                    let (name, next) = if st.word(j + 1) == Some("as") {
                        (st.word(j + 2).unwrap_or("_"), j + 3)
                    } else {
                        (w, j + 1)
                    };
                    let mut path = dotted(&module);
                    path.push(w.to_string());
                    env.alias.insert(name.to_string(), (canonical(path), true));
                    members.push(w.to_string());
                    j = next;
                } else {
                    j += 1;
                }
            }
            imports.push((module, members, i, end));
        }
    }
    // `from os import *`: the module's dangerous members by their bare names.
    for (module, members, _, _) in &imports {
        if members.iter().any(|m| m == "*") {
            for d in PY_ENDS.iter().chain(&["sys.exit"]) {
                if let Some(member) =
                    d.strip_prefix(&format!("{}.", canonical(dotted(module)).join("."))[..])
                {
                    env.alias
                        .entry(member.to_string())
                        .or_insert_with(|| (dotted(d), true));
                }
            }
        }
    }
    if !ctx.test_file {
        for (module, members, a, b) in &imports {
            let only_mock =
                module == "unittest" && !members.is_empty() && members.iter().all(|m| m == "mock");
            if runner_module(module) && !only_mock {
                h.push(
                    RULE_PATCHES_RUNNER,
                    format!("import {module}"),
                    *a,
                    *b,
                    patch_msg(W_IMPORT),
                );
            }
        }
    }
    let conftest = ctx.path.rsplit('/').next() == Some("conftest.py");
    for i in 0..n {
        if in_import.get(i).copied().unwrap_or(false) {
            continue;
        }
        let Some(w) = st.word(i) else { continue };
        if !conftest {
            if PY_INTERNALS.binary_search(&w).is_ok() {
                h.push(
                    RULE_PATCHES_RUNNER,
                    format!("internals {w}"),
                    i,
                    i + 1,
                    patch_msg(W_INTERNALS),
                );
            } else if w == "hook" && i >= 2 && st.is(i - 1, ".") && st.word(i - 2) == Some("config")
            {
                h.push(
                    RULE_PATCHES_RUNNER,
                    "internals config.hook".into(),
                    i - 2,
                    i + 1,
                    patch_msg(W_INTERNALS),
                );
            }
        }
        let prev = if i > 0 {
            st.t[i - 1]
        } else {
            Tk {
                s: 0,
                e: 0,
                text: "",
                lit: true,
            }
        };
        if !prev.lit && matches!(prev.text, "." | "def" | "class" | "as" | "import") {
            continue;
        }
        let Some(c) = py_chain(st, i, &env, 0) else {
            continue;
        };
        // `name = <module or member>`: an alias from here on.
        if st.starts[i] && c.segs.len() == 1 && st.is(c.end, "=") && !st.is(c.end + 1, "=") {
            if let Some(rhs) = py_chain(st, c.end + 1, &env, 0) {
                let to_end = rhs.end >= n || st.starts[rhs.end];
                if to_end && (rhs.imported || PY_MODULES.contains(&rhs.root())) && rhs.root() != "?"
                {
                    env.alias.insert(w.to_string(), (rhs.segs.clone(), true));
                }
            }
        }
        py_chain_hits(h, ctx, i, &c, &env);
    }
}

fn py_chain_hits(h: &mut Hits, ctx: &Ctx, i: usize, c: &Chain, env: &PyEnv) {
    let st = h.st;
    let names = c.names();
    let root = c.root();
    let end = c.end;
    let call_args = |open: Option<usize>| open.map(|p| st.args(p)).unwrap_or_default();
    // Ending the process.
    let ends_why = if ctx.test_file {
        "test code ends the process itself"
    } else {
        "code the tests run ends the process itself"
    };
    if let Some(d) = PY_ENDS
        .iter()
        .find(|d| names == **d || names.starts_with(&format!("{d}.")))
    {
        let hooks = matches!(*d, "atexit.register" | "signal.signal");
        h.push(RULE_ENDS_RUN, format!("py {d}"), i, end, move |t| {
            if hooks {
                format!("code hooks the end of the test process (`{t}`): it runs when the tests end, and the exit status is its choice")
            } else {
                ends_msg(ends_why)(t)
            }
        });
    }
    if matches!(names.as_str(), "os.kill" | "os.killpg") {
        let own = call_args(c.first_call).first().is_some_and(|&(a, b)| {
            (b == a + 1 && st.is(a, "0"))
                || (a..b).any(|k| {
                    matches!(
                        st.word(k),
                        Some("getpid" | "getppid" | "getpgid" | "getpgrp")
                    )
                })
        });
        if own {
            h.push(
                RULE_ENDS_RUN,
                format!("py {names} own"),
                i,
                end,
                ends_msg(ends_why),
            );
        }
    }
    if ctx.test_file {
        let builtin_exit = matches!(names.as_str(), "exit" | "quit")
            && c.segs.len() >= 2
            && !c.imported
            && !env.alias.contains_key(root);
        if names == "sys.exit" || builtin_exit {
            h.push(
                RULE_ENDS_RUN,
                format!("py {names}"),
                i,
                end,
                ends_msg(ends_why),
            );
        }
    }
    if matches!(root, "os" | "sys" | "atexit" | "signal") && (c.dynamic || c.has("__dict__")) {
        h.push(RULE_ENDS_RUN, format!("py computed {root}"), i, end, move |t| {
            format!("code reaches `{root}` through a computed name (`{t}`): it can end the process where no reader sees it")
        });
    }
    // Reaching into the runner.
    let patch = |h: &mut Hits, key: String, why: &'static str| {
        h.push(RULE_PATCHES_RUNNER, key, i, end, patch_msg(why));
    };
    let sys_modules = root == "sys" && c.seg(1) == "modules";
    if c.segs.len() >= 2 && !sys_modules && py_target(st, i, end) {
        if c.is_runner() {
            patch(h, format!("set {}", c.segs.join(".")), W_SET);
        } else if c.is_builtins() {
            patch(h, format!("set {}", c.segs.join(".")), W_BUILTIN);
        }
    }
    let setattr = matches!(
        names.as_str(),
        "setattr"
            | "delattr"
            | "builtins.setattr"
            | "builtins.delattr"
            | "object.__setattr__"
            | "object.__delattr__"
            | "type.__setattr__"
            | "type.__delattr__"
    ) && c.seg(names.split('.').count()) == "()";
    if setattr {
        let args = call_args(c.first_call);
        let target = args
            .first()
            .and_then(|&(a, b)| py_chain(st, a, env, 1).filter(|t| t.end == b));
        let name = args.get(1).and_then(|&(a, b)| st.lit_eval(a, b));
        match &target {
            Some(t) if t.is_runner() => patch(h, format!("setattr {}", t.segs.join(".")), W_SET),
            Some(t) if t.is_builtins() => {
                patch(h, format!("setattr {}", t.segs.join(".")), W_BUILTIN)
            }
            _ => {
                let plain = target.as_ref().is_some_and(|t| {
                    !t.imported
                        && !t.dynamic
                        && t.segs.iter().all(|s| is_word(s))
                        && !PY_MODULES.contains(&t.root())
                });
                if name.is_none() && !plain {
                    patch(h, "setattr computed".into(), W_SETATTR_DYN);
                }
            }
        }
    } else if c.segs.len() >= 2 || names == "patch" {
        let last = names.rsplit('.').next().unwrap_or("");
        if matches!(
            last,
            "setattr" | "delattr" | "patch" | "object" | "setitem" | "delitem" | "dict"
        ) {
            let args = call_args(c.first_call);
            if let Some(&(a, b)) = args.first() {
                if let Some((v, _)) = st.lit_eval(a, b) {
                    if runner_module(&v) {
                        patch(h, format!("patch {v}"), W_SET);
                    }
                } else if let Some(t) = py_chain(st, a, env, 1).filter(|t| t.end == b) {
                    if t.is_runner() {
                        patch(h, format!("patch {}", t.segs.join(".")), W_SET);
                    } else if t.root() == "sys" && t.seg(1) == "modules" && t.segs.len() == 2 {
                        let (open, close) = (
                            c.first_call.unwrap_or(0),
                            st.after(c.first_call.unwrap_or(0)),
                        );
                        let runner = (open..close)
                            .any(|k| st.t[k].lit && runner_module(&lit_value(st.t[k].text)));
                        if runner {
                            patch(h, "sys.modules runner".into(), W_SYS_MODULES_RUNNER);
                        }
                    }
                }
            }
        }
    }
    if sys_modules {
        let key = c.seg(2);
        let runner_key = key
            .strip_prefix('[')
            .and_then(|k| k.strip_suffix(']'))
            .is_some_and(runner_module);
        let getter = matches!(key, "get" | "pop" | "setdefault") && c.seg(3) == "()";
        let getter_arg = if getter {
            call_args(c.first_call).first().map(|&(a, b)| {
                (
                    st.lit_eval(a, b).map(|v| v.0),
                    b == a + 1 && st.word(a) == Some("__name__"),
                )
            })
        } else {
            None
        };
        let runner_get = getter_arg
            .as_ref()
            .is_some_and(|(v, _)| v.as_deref().is_some_and(runner_module));
        if runner_key || runner_get {
            patch(h, "sys.modules runner".into(), W_SYS_MODULES_RUNNER);
        } else if !ctx.test_file {
            let literal_key = key.starts_with('[') && key != "[?]";
            let literal_get = getter_arg.is_some_and(|(v, name)| v.is_some() || name);
            let membership = c.segs.len() == 2 && i > 0 && st.word(i - 1) == Some("in");
            if !(literal_key || literal_get || membership) {
                patch(h, "sys.modules code".into(), W_SYS_MODULES);
            }
        }
    }
    for (v, pieces) in &c.imports {
        match v {
            None if !ctx.test_file => patch(h, "import computed".into(), W_DYN_IMPORT),
            Some(m) if runner_module(m) && *pieces => patch(h, format!("import {m}"), W_DYN_RUNNER),
            Some(m) if runner_module(m) && !ctx.test_file => {
                patch(h, format!("import {m}"), W_IMPORT)
            }
            _ => {}
        }
    }
    if root == "gc" && matches!(c.seg(1), "get_objects" | "get_referrers" | "get_referents") {
        patch(h, format!("gc {}", c.seg(1)), W_GC);
    }
    if c.is_runner() && (c.dynamic || c.has("__dict__")) {
        patch(h, format!("computed {root}"), W_GETATTR);
    }
    if root == "ctypes" || root == "_ctypes" {
        if c.has("pythonapi") {
            patch(h, "ctypes pythonapi".into(), W_CTYPES);
        }
        if c.segs.iter().any(|s| {
            matches!(
                s.as_str(),
                "_exit" | "exit" | "_Exit" | "quick_exit" | "abort" | "kill" | "raise"
            )
        }) {
            patch(h, "ctypes exit".into(), W_CTYPES_EXIT);
        }
        let last = names.rsplit('.').next().unwrap_or("");
        if matches!(last, "CDLL" | "PyDLL" | "LoadLibrary" | "find_library") || c.has("msvcrt") {
            let own = call_args(c.first_call).first().is_some_and(|&(a, b)| {
                (b == a + 1 && st.word(a) == Some("None"))
                    || st.lit_eval(a, b).is_some_and(|(v, _)| {
                        let v = v.to_ascii_lowercase();
                        v == "c"
                            || ["libc", "msvcrt", "ucrtbase", "libsystem"]
                                .iter()
                                .any(|l| v.contains(l))
                    })
            });
            if own || c.has("msvcrt") {
                patch(h, "ctypes libc".into(), W_CTYPES);
            }
        }
    }
    if root == "faulthandler" && c.seg(1).starts_with('_') && is_word(c.seg(1)) {
        patch(h, format!("faulthandler {}", c.seg(1)), W_FAULT);
    }
}

// ---------------------------------------------------------------------------
// Go and C.

fn go(h: &mut Hits, ctx: &Ctx) {
    let st = h.st;
    let n = st.len();
    // Import name → package path; packages imported with `.`.
    let mut alias: HashMap<String, String> = HashMap::new();
    let mut dot: Vec<String> = Vec::new();
    for i in 0..n {
        if st.word(i) != Some("import") || (i > 0 && st.is(i - 1, ".")) {
            continue;
        }
        let grouped = st.is(i + 1, "(");
        let (mut j, stop) = if grouped {
            (i + 2, st.close[i + 1].min(n))
        } else {
            (i + 1, (i + 3).min(n))
        };
        while j < stop {
            let name = if st.t[j].lit {
                None
            } else if st.word(j).is_some() || st.is(j, ".") {
                j += 1;
                Some(st.t[j - 1].text)
            } else {
                j += 1;
                continue;
            };
            let Some(lit) = st.t.get(j).filter(|t| t.lit) else {
                continue;
            };
            let path = lit_value(lit.text);
            j += 1;
            match name {
                Some(".") => dot.push(path),
                Some("_") => {}
                Some(a) => {
                    alias.insert(a.to_string(), path);
                }
                None => {
                    let last = path.rsplit('/').next().unwrap_or(&path).to_string();
                    alias.insert(last, path);
                }
            }
            if !grouped {
                break;
            }
        }
    }
    if !ctx.test_file {
        return;
    }
    const EXITS: &[&str] = &["os.Exit", "syscall.Exit", "golang.org/x/sys/unix.Exit"];
    for i in 0..n {
        let Some(w) = st.word(i) else { continue };
        if i > 0 && st.is(i - 1, ".") {
            continue;
        }
        let (full, open) = if st.is(i + 1, ".") && st.word(i + 2).is_some() {
            let pkg = alias.get(w).cloned().unwrap_or_else(|| w.to_string());
            (format!("{pkg}.{}", st.t[i + 2].text), i + 3)
        } else if !dot.is_empty() {
            match dot
                .iter()
                .find(|p| EXITS.contains(&format!("{p}.{w}").as_str()))
            {
                Some(p) => (format!("{p}.{w}"), i + 1),
                None => continue,
            }
        } else {
            continue;
        };
        if !EXITS.contains(&full.as_str()) {
            continue;
        }
        // `os.Exit(m.Run())`: the usual end of a `TestMain`.
        let args = if st.is(open, "(") {
            st.args(open)
        } else {
            Vec::new()
        };
        let run = args.len() == 1 && {
            let (a, b) = args[0];
            b == a + 5
                && st.word(a).is_some()
                && st.is(a + 1, ".")
                && st.word(a + 2) == Some("Run")
                && st.is(a + 3, "(")
                && st.is(a + 4, ")")
        };
        if !run {
            let end = st.after(open);
            h.push(
                RULE_ENDS_RUN,
                format!("go {full}"),
                i,
                end,
                ends_msg("test code ends the process itself"),
            );
        }
    }
}

fn c(h: &mut Hits) {
    let st = h.st;
    let n = st.len();
    for i in 0..n {
        let t = st.t[i];
        if t.lit {
            if let Some(before) = section_runs(&lit_value(t.text)) {
                h.push(
                    RULE_RUNS_BEFORE,
                    format!("c section {before}"),
                    i,
                    i + 1,
                    before_msg(before),
                );
            }
            continue;
        }
        let attr = |w: Option<&str>| match w {
            Some("constructor" | "__constructor__") => Some(true),
            Some("destructor" | "__destructor__") => Some(false),
            _ => None,
        };
        match t.text {
            "__attribute__" | "__attribute" if st.is(i + 1, "(") => {
                let end = st.after(i + 1);
                if let Some(before) = (i + 2..end.min(i + 256)).find_map(|k| attr(st.word(k))) {
                    h.push(
                        RULE_RUNS_BEFORE,
                        format!("c attr {before}"),
                        i,
                        end,
                        before_msg(before),
                    );
                }
            }
            "gnu" | "__gnu__" if st.path_sep(i + 1) => {
                if let Some(before) = attr(st.word(i + 3)) {
                    h.push(
                        RULE_RUNS_BEFORE,
                        format!("c attr {before}"),
                        i,
                        i + 4,
                        before_msg(before),
                    );
                }
            }
            "#" if st.word(i + 1) == Some("pragma") => {
                let before = match st.word(i + 2) {
                    Some("init") => Some(true),
                    Some("fini") => Some(false),
                    _ => None,
                };
                if let Some(before) = before {
                    h.push(
                        RULE_RUNS_BEFORE,
                        format!("c pragma {before}"),
                        i,
                        i + 3,
                        before_msg(before),
                    );
                }
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------
// Forged result lines.

/// The spans of format placeholders in `s`: `{…}` (not `{{`) and printf's
/// `%…x`.
fn placeholders(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' if b.get(i + 1) == Some(&b'{') => i += 2,
            b'{' => match s[i..].find('}') {
                Some(e) if !s[i + 1..i + e].contains(['{', '\n']) => {
                    out.push((i, i + e + 1));
                    i += e + 1;
                }
                _ => i += 1,
            },
            b'%' if b.get(i + 1) == Some(&b'%') => i += 2,
            b'%' => {
                let mut k = i + 1;
                while k < b.len() && (b"-+ #0.*".contains(&b[k]) || b[k].is_ascii_digit()) {
                    k += 1;
                }
                if k < b.len() && b"sdifrxXcuegGoqv".contains(&b[k]) {
                    out.push((i, k + 1));
                    i = k + 1;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn strip_placeholders(s: &str) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (a, b) in placeholders(s) {
        out.push_str(&s[last..a]);
        last = b;
    }
    out.push_str(&s[last..]);
    out
}

/// The pieces with the first one holding placeholders filled, in order, by
/// the ones after it.
fn fill(pieces: &[String]) -> Option<String> {
    let t = pieces.iter().position(|p| !placeholders(p).is_empty())?;
    let mut out: String = pieces[..t].concat();
    let mut args = pieces[t + 1..].iter();
    let mut last = 0;
    let template = &pieces[t];
    for (a, b) in placeholders(template) {
        out.push_str(&template[last..a]);
        if let Some(arg) = args.next() {
            out.push_str(arg);
        }
        last = b;
    }
    out.push_str(&template[last..]);
    Some(out)
}

/// Which result line `text` forges, if one.
fn forges(text: &str) -> Option<&'static str> {
    let sq: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '\t' | '\r'))
        .collect();
    if sq.contains("testresult:ok") {
        return Some("test result: ok");
    }
    if sq.contains("---PASS:") {
        return Some("--- PASS:");
    }
    let dots = sq.match_indices("...ok").any(|(i, m)| {
        let rest = &sq[i + m.len()..];
        rest.is_empty() || rest.starts_with('\n')
    });
    dots.then_some("... ok")
}

fn forged(h: &mut Hits) {
    let st = h.st;
    let n = st.len();
    // A literal, or `stringify!(…)` (its tokens as text).
    let piece = |i: usize| -> Option<(String, usize)> {
        let t = st.t.get(i)?;
        if t.lit {
            return Some((lit_value(t.text), i + 1));
        }
        if t.text == "stringify" && st.is(i + 1, "!") && st.is(i + 2, "(") {
            let end = st.after(i + 2);
            let words: Vec<&str> = st.t[i + 3..end.saturating_sub(1).max(i + 3)]
                .iter()
                .map(|t| t.text)
                .collect();
            return Some((words.join(" "), end));
        }
        None
    };
    let joiner = |k: usize| {
        let t = st.t[k];
        !t.lit
            && (matches!(
                t.text,
                "+" | "," | "(" | ")" | "%" | "." | "\\" | "format" | "concat"
            ) || (t.text == "!" && k > 0 && matches!(st.t[k - 1].text, "concat" | "format")))
    };
    let mut i = 0;
    while i < n {
        let Some((first, next)) = piece(i) else {
            i += 1;
            continue;
        };
        let start = i;
        let mut pieces = vec![first];
        let mut end = next;
        loop {
            let mut k = end;
            while k < n && joiner(k) {
                k += 1;
            }
            match piece(k) {
                Some((v, nx)) => {
                    pieces.push(v);
                    end = nx;
                }
                None => break,
            }
        }
        let whole = pieces.concat();
        let found = pieces
            .iter()
            .map(|p| strip_placeholders(p))
            .chain([strip_placeholders(&whole)])
            .chain(fill(&pieces))
            .find_map(|c| forges(&c));
        if let Some(what) = found {
            let norm: String = whole
                .chars()
                .filter(|c| !c.is_whitespace())
                .take(200)
                .collect();
            h.push(RULE_FORGED, format!("{what} {norm}"), start, end, |t| {
                format!("the code writes a test runner's result line (`{t}`): results are read from the runner, not from the code")
            });
        }
        i = end.max(i + 1);
    }
}

// ---------------------------------------------------------------------------
// Reporting.

/// The lines `new` adds to `base` (1-based line numbers in `new`), by
/// content: a line moved is not added.
fn added_lines(base: Option<&str>, new: &str) -> Vec<u32> {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for l in base.unwrap_or("").lines() {
        *left.entry(l.trim()).or_default() += 1;
    }
    let mut out = Vec::new();
    for (i, l) in new.lines().enumerate() {
        match left.get_mut(l.trim()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(u32::try_from(i + 1).unwrap_or(u32::MAX)),
        }
    }
    out
}

/// The findings for one changed file.
pub(super) fn check(f: &FileVersions, out: &mut Vec<Finding>) {
    let Some(new) = f.new else {
        return;
    };
    if !reads(f.path) || new.len() > super::MAX_FILE_BYTES {
        return;
    }
    let old_path = f.old_path.unwrap_or(f.path);
    let base = f
        .base
        .filter(|b| b.len() <= super::MAX_FILE_BYTES && reads(old_path));
    let spans = |path: &str, text: &str| {
        if lang(path) == Some(Lang::Rust) {
            super::base_tests::rust_test_modules(text)
        } else {
            Vec::new()
        }
    };
    let new_spans = spans(f.path, new);
    let base_spans = base.map(|b| spans(old_path, b)).unwrap_or_default();
    let now = hits(f.path, new, new_spans.clone());
    let base_hits = base
        .map(|b| hits(old_path, b, base_spans.clone()))
        .unwrap_or_default();
    let mut at_base: HashMap<&str, usize> = HashMap::new();
    for h in &base_hits {
        *at_base.entry(h.key.as_str()).or_default() += 1;
    }
    let added = added_lines(f.base, new);
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(new.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line = |offset: usize| {
        u32::try_from(line_starts.partition_point(|&s| s <= offset)).unwrap_or(u32::MAX)
    };
    let touches = |h: &Hit| {
        let (a, b) = (line(h.s), line(h.e.saturating_sub(1).max(h.s)));
        let k = added.partition_point(|&l| l < a);
        added.get(k).is_some_and(|&l| l <= b)
    };
    let mut order: Vec<&str> = Vec::new();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, h) in now.iter().enumerate() {
        let g = groups.entry(h.key.as_str()).or_default();
        if g.is_empty() {
            order.push(h.key.as_str());
        }
        g.push(k);
    }
    let mut chosen: Vec<usize> = Vec::new();
    for key in order {
        let idx = &groups[key];
        let excess = idx
            .len()
            .saturating_sub(at_base.get(key).copied().unwrap_or(0));
        if excess == 0 {
            continue;
        }
        let mut pick: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&k| touches(&now[k]))
            .take(excess)
            .collect();
        for &k in idx.iter().rev() {
            if pick.len() >= excess {
                break;
            }
            if !pick.contains(&k) {
                pick.push(k);
            }
        }
        chosen.extend(pick);
    }
    chosen.sort_by_key(|&k| now[k].s);
    let mut seen: HashSet<(&str, u32)> = HashSet::new();
    for k in chosen {
        let h = &now[k];
        let at = line(h.s);
        if seen.insert((h.rule, at)) {
            out.push(Finding::file(
                Issue::new(h.rule, Severity::Error, h.msg.clone()).at(f.path, Some(at)),
                &[f.path],
            ));
        }
    }
    if lang(f.path) == Some(Lang::Rust) {
        shadowed(
            f,
            new,
            &new_spans,
            base.map(|b| (b, base_spans.as_slice())),
            out,
        );
    }
}

/// `fn name` items (offset of `fn`, name), read from tokens.
fn fn_names(text: &str) -> Vec<(usize, String)> {
    let st = Stream::new(text, Lang::Rust);
    (0..st.len())
        .filter(|&i| st.is(i, "fn"))
        .filter_map(|i| st.word(i + 1).map(|w| (st.t[i].s, w.to_string())))
        .collect()
}

/// Functions of a Rust test module named like code of the same file (not
/// so at the base).
fn shadowed(
    f: &FileVersions,
    new: &str,
    spans: &[(usize, usize)],
    base: Option<(&str, &[(usize, usize)])>,
    out: &mut Vec<Finding>,
) {
    if spans.is_empty() {
        return;
    }
    let inside = |i: usize| spans.iter().any(|(a, b)| *a <= i && i < *b);
    let all = fn_names(new);
    let code: HashSet<&str> = all
        .iter()
        .filter(|(i, _)| !inside(*i))
        .map(|(_, n)| n.as_str())
        .collect();
    let at_base: HashSet<String> = base
        .map(|(b, spans)| {
            fn_names(b)
                .into_iter()
                .filter(|(i, _)| spans.iter().any(|(a, z)| a <= i && i < z))
                .map(|(_, n)| n)
                .collect()
        })
        .unwrap_or_default();
    for (i, name) in all.iter().filter(|(i, _)| inside(*i)) {
        if code.contains(name.as_str()) && !at_base.contains(name) && name != "main" {
            let line = new[..*i].matches('\n').count() as u32 + 1;
            out.push(Finding::file(
                Issue::new(
                    RULE_SHADOWED,
                    Severity::Error,
                    format!("the test module defines its own `{name}`, shadowing the code under test's `{name}`: its tests check the copy"),
                )
                .at(f.path, Some(line)),
                &[f.path],
            ));
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn rules(path: &str, base: Option<&str>, new: &str) -> Vec<String> {
        let mut out = Vec::new();
        check(
            &FileVersions {
                path,
                old_path: None,
                base,
                new: Some(new),
            },
            &mut out,
        );
        out.into_iter().map(|f| f.issue.rule).collect()
    }

    const BASE: &str = "pub fn add(a: i32, b: i32) -> i32 { a - b }\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n}\n";

    #[test]
    fn each_trick_is_found_by_its_rule() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "init-array",
                "src/lib.rs",
                "#[used]\n#[link_section = \".init_array\"]\nstatic I: extern \"C\" fn() = f;\n",
                RULE_RUNS_BEFORE,
            ),
            (
                "ctor",
                "src/lib.rs",
                "#[ctor::ctor]\nfn f() {}\n",
                RULE_RUNS_BEFORE,
            ),
            (
                "c-constructor",
                "native/x.c",
                "__attribute__((constructor)) static void f(void) {}\n",
                RULE_RUNS_BEFORE,
            ),
            (
                "exit-in-test",
                "src/lib.rs",
                "#[cfg(test)]\nmod more {\n    #[test]\n    fn z() { std::process::exit(0) }\n}\n",
                RULE_ENDS_RUN,
            ),
            (
                "py-exit",
                "tests/test_x.py",
                "import atexit, os\natexit.register(lambda: os._exit(0))\n",
                RULE_ENDS_RUN,
            ),
            (
                "go-exit",
                "x_test.go",
                "func TestMain(m *testing.M) { m.Run(); os.Exit(0) }\n",
                RULE_ENDS_RUN,
            ),
            (
                "forged",
                "src/lib.rs",
                "fn f() { println!(\"test tests::adds ... ok\"); }\n",
                RULE_FORGED,
            ),
            (
                "macro",
                "src/lib.rs",
                "#[cfg(test)]\nmod t {\n    macro_rules! assert_eq { ($($t:tt)*) => {} }\n}\n",
                RULE_ASSERT_MACRO,
            ),
            (
                "py-import-runner",
                "calc.py",
                "import unittest\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-from-pytest",
                "calc.py",
                "from _pytest import runner\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-setattr",
                "tests/test_x.py",
                "setattr(unittest.TestCase, 'assertEqual', lambda *a: None)\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-assign",
                "test_x.py",
                "unittest.TestCase.assertEqual = lambda *a, **k: None\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-ctypes-exit",
                "calc.py",
                "ctypes.CDLL(None)._exit(0)\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-sys-modules",
                "calc.py",
                "sys.modules['pytest'] = fake\n",
                RULE_PATCHES_RUNNER,
            ),
        ];
        for (name, path, added, rule) in cases {
            let new = format!("{BASE}{added}");
            let found = rules(path, Some(BASE), &new);
            assert!(
                found.iter().any(|r| r == rule),
                "{name}: want {rule}, got {found:?}"
            );
            assert!(
                rules(path, Some(&new), &new).is_empty(),
                "{name}: unchanged is clean"
            );
        }
    }

    #[test]
    fn a_test_module_copy_of_the_code_under_test_is_shadowing() {
        let new = BASE.replace(
            "    use super::*;\n",
            "    use super::*;\n    fn add(a: i32, b: i32) -> i32 { a + b }\n",
        );
        assert_eq!(rules("src/lib.rs", Some(BASE), &new), vec![RULE_SHADOWED]);
        // A helper with a name of its own is fine.
        let helper = BASE.replace(
            "    use super::*;\n",
            "    use super::*;\n    fn two() -> i32 { 2 }\n",
        );
        assert!(rules("src/lib.rs", Some(BASE), &helper).is_empty());
    }

    #[test]
    fn ordinary_changes_are_clean() {
        let new = BASE.replace("a - b", "a + b").replace(
            "fn adds() { assert_eq!(add(2, 2), 4); }",
            "fn adds() { assert_eq!(add(2, 2), 4); }\n    #[test]\n    fn adds_more() { assert_eq!(add(1, 2), 3); }",
        );
        assert!(rules("src/lib.rs", Some(BASE), &new).is_empty());
        let py = "import os\n\ndef test_x():\n    assert os.getcwd()\n";
        assert!(rules("tests/test_x.py", None, py).is_empty());
        // Tests import their runner and use its assertions; code may mock.
        let tests = "import unittest\nimport pytest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(1, 1)\n        assert type(self) != unittest.TestCase\n";
        assert!(rules("tests/test_x.py", None, tests).is_empty());
        let code = "from unittest import mock\nimport sys\nsys.modules['calc_cache'] = None\n";
        let skip = "import pytest\npytest.skip(\"later\", allow_module_level=True)\n";
        assert!(!rules("tests/test_x.py", None, skip)
            .iter()
            .any(|r| r == RULE_PATCHES_RUNNER));
        assert!(rules("calc.py", None, code).is_empty());
    }

    const PY_BASE: &str = "import os\n\n\ndef add(a, b):\n    return a + b\n";
    const GO_BASE: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n";
    const C_BASE: &str = "int add(int a, int b) { return a + b; }\n";

    fn base_for(path: &str) -> &'static str {
        match path.rsplit_once('.').map(|(_, e)| e) {
            Some("py") => PY_BASE,
            Some("go") => GO_BASE,
            Some("c") => C_BASE,
            _ => BASE,
        }
    }

    /// Each case: a name, a path, the code added (after the path's base
    /// text) and the rule it must raise; unchanged, it must raise nothing.
    fn found_by(cases: &[(&str, &str, &str, &str)]) {
        for (name, path, added, rule) in cases {
            let base = base_for(path);
            let new = format!("{base}{added}");
            let found = rules(path, Some(base), &new);
            assert!(
                found.iter().any(|r| r == rule),
                "{name}: want {rule}, got {found:?}"
            );
            assert!(
                rules(path, Some(&new), &new).is_empty(),
                "{name}: unchanged is clean"
            );
        }
    }

    #[test]
    fn runs_before_tests_plain_split_commented_aliased() {
        let f = "static I: extern \"C\" fn() = f;\n";
        found_by(&[
            ("plain", "src/lib.rs", &format!("#[used]\n#[link_section = \".init_array\"]\n{f}"), RULE_RUNS_BEFORE),
            ("split", "src/lib.rs", &format!("#[\n  link_section\n  =\n  \".init_array.00099\"\n]\n{f}"), RULE_RUNS_BEFORE),
            ("comments", "src/lib.rs", &format!("#[ /* a */ link_section /* b */ = // c\n \".ctors\"]\n{f}"), RULE_RUNS_BEFORE),
            ("unsafe", "src/lib.rs", &format!("#[unsafe(link_section = \"__DATA,__mod_init_func\")]\n#[used]\n{f}"), RULE_RUNS_BEFORE),
            ("cfg_attr", "src/lib.rs", &format!("#[cfg_attr(all(), link_section = \".CRT$XCU\")]\n{f}"), RULE_RUNS_BEFORE),
            ("concat", "src/lib.rs", &format!("#[link_section = concat!(\".init\", \"_array\")]\n{f}"), RULE_RUNS_BEFORE),
            ("escaped", "src/lib.rs", &format!("#[link_section = \"\\x2einit_array\"]\n{f}"), RULE_RUNS_BEFORE),
            ("macro variable", "src/lib.rs", "macro_rules! put { ($s:literal) => { #[link_section = $s] #[used] static I: extern \"C\" fn() = f; } }\nput!(\".init_array\");\n", RULE_RUNS_BEFORE),
            ("destructor section", "src/lib.rs", &format!("#[link_section = \".fini_array\"]\n{f}"), RULE_RUNS_BEFORE),
            ("global_asm", "src/lib.rs", "core::arch::global_asm!(\".pushsection .init_array,\\\"aw\\\"\", \".quad {f}\", f = sym f);\n", RULE_RUNS_BEFORE),
            ("ctor", "src/lib.rs", "#[ctor]\nfn f() {}\n", RULE_RUNS_BEFORE),
            ("ctor path split", "src/lib.rs", "#[ctor\n  :: /* x */ ctor]\nfn f() {}\n", RULE_RUNS_BEFORE),
            ("ctor aliased", "src/lib.rs", "use ctor::ctor as init;\n#[init]\nfn f() {}\n", RULE_RUNS_BEFORE),
            ("raw ident", "src/lib.rs", &format!("#[r#link_section = \".init_array\"]\n{f}"), RULE_RUNS_BEFORE),
            ("c plain", "native/x.c", "__attribute__((constructor)) static void f(void) {}\n", RULE_RUNS_BEFORE),
            ("c split", "native/x.c", "__attribute__ (\n (\n  constructor\n )\n) static void f(void) {}\n", RULE_RUNS_BEFORE),
            ("c comments", "native/x.c", "__attribute__((/* a */ constructor /* b */ (101))) static void f(void) {}\n", RULE_RUNS_BEFORE),
            ("c gnu attribute", "native/x.c", "[[gnu::constructor]] static void f(void) {}\n", RULE_RUNS_BEFORE),
            ("c msvc section", "native/x.c", "#pragma section(\".CRT$XCU\", read)\n__declspec(allocate(\".CRT$XCU\")) void (*p)(void) = f;\n", RULE_RUNS_BEFORE),
        ]);
    }

    #[test]
    fn assertion_redefined_plain_split_commented_aliased() {
        let body = "{ ($($t:tt)*) => {} }\n";
        found_by(&[
            (
                "plain",
                "src/lib.rs",
                &format!("macro_rules! assert_eq {body}"),
                RULE_ASSERT_MACRO,
            ),
            (
                "split",
                "src/lib.rs",
                &format!("macro_rules!\n    assert_eq\n{body}"),
                RULE_ASSERT_MACRO,
            ),
            (
                "comments",
                "src/lib.rs",
                &format!("macro_rules! /* x */ assert // y\n {body}"),
                RULE_ASSERT_MACRO,
            ),
            (
                "raw name",
                "src/lib.rs",
                &format!("macro_rules! r#assert_eq {body}"),
                RULE_ASSERT_MACRO,
            ),
            (
                "unreachable",
                "src/lib.rs",
                &format!("macro_rules! unreachable {body}"),
                RULE_ASSERT_MACRO,
            ),
            (
                "matches",
                "src/lib.rs",
                &format!("#[macro_export]\nmacro_rules! matches {body}"),
                RULE_ASSERT_MACRO,
            ),
            (
                "debug_assert_ne exported",
                "src/lib.rs",
                &format!("#[macro_export]\nmacro_rules! debug_assert_ne {body}"),
                RULE_ASSERT_MACRO,
            ),
            (
                "renamed",
                "src/lib.rs",
                "use some_crate::fake_assert as assert_eq;\n",
                RULE_ASSERT_MACRO,
            ),
            (
                "renamed pub(crate)",
                "src/lib.rs",
                "pub(crate) use x as\n  assert_eq;\n",
                RULE_ASSERT_MACRO,
            ),
            (
                "renamed in a group",
                "src/lib.rs",
                "use fake::{ok as /* */ assert, other};\n",
                RULE_ASSERT_MACRO,
            ),
            (
                "proc macro",
                "src/lib.rs",
                "#[proc_macro]\npub fn assert_eq(input: TokenStream) -> TokenStream { input }\n",
                RULE_ASSERT_MACRO,
            ),
        ]);
    }

    #[test]
    fn ends_the_run_plain_split_commented_aliased() {
        let test = |body: &str| format!("#[cfg(test)]\nmod more {{\n{body}\n}}\n");
        found_by(&[
            (
                "rust plain",
                "src/lib.rs",
                &test("#[test]\nfn z() { std::process::exit(0) }"),
                RULE_ENDS_RUN,
            ),
            (
                "rust split",
                "src/lib.rs",
                &test("#[test]\nfn z() { std::process\n    ::exit(0) }"),
                RULE_ENDS_RUN,
            ),
            (
                "rust comments",
                "src/lib.rs",
                &test("#[test]\nfn z() { std:: /* a */ process /* b */ :: exit(0) }"),
                RULE_ENDS_RUN,
            ),
            (
                "rust alias",
                "src/lib.rs",
                &test("use std::process::exit as quit;\n#[test]\nfn z() { quit(0) }"),
                RULE_ENDS_RUN,
            ),
            (
                "rust module alias",
                "src/lib.rs",
                &test("use std::process as p;\n#[test]\nfn z() { p::exit(0) }"),
                RULE_ENDS_RUN,
            ),
            (
                "rust abort",
                "tests/it.rs",
                "#[test]\nfn z() { std::process::abort() }\n",
                RULE_ENDS_RUN,
            ),
            (
                "rust libc alias",
                "tests/it.rs",
                "extern crate libc as c;\n#[test]\nfn z() { unsafe { c::_exit(0) } }\n",
                RULE_ENDS_RUN,
            ),
            (
                "rust glob",
                "tests/it.rs",
                "use std::process::*;\n#[test]\nfn z() { exit(0) }\n",
                RULE_ENDS_RUN,
            ),
            ("py plain", "calc.py", "os._exit(0)\n", RULE_ENDS_RUN),
            (
                "py split",
                "calc.py",
                "os._exit(\n    0\n)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py continued",
                "calc.py",
                "x = os \\\n    ._exit\n",
                RULE_ENDS_RUN,
            ),
            (
                "py comments",
                "calc.py",
                "os._exit(  # bye\n    0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py from-import alias",
                "calc.py",
                "from os import _exit as e\ne(0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py module alias",
                "calc.py",
                "import os as o\no._exit(0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py posix",
                "calc.py",
                "import posix\nposix._exit(0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py assigned import",
                "calc.py",
                "o = __import__('os')\no._exit(0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py getattr concatenated",
                "calc.py",
                "getattr(os, '_ex' + 'it')(0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py getattr computed",
                "calc.py",
                "getattr(os, name)(0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py kill self",
                "calc.py",
                "os.kill(os.getpid(), 9)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py atexit anywhere",
                "calc.py",
                "import atexit\natexit.register(report)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py atexit decorator",
                "calc.py",
                "import atexit as a\n@a.register\ndef bye():\n    pass\n",
                RULE_ENDS_RUN,
            ),
            (
                "py signal",
                "calc.py",
                "import signal\nsignal.signal(signal.SIGTERM, lambda *a: os._exit(0))\n",
                RULE_ENDS_RUN,
            ),
            (
                "py exec",
                "calc.py",
                "os.execv('/bin/true', ['true'])\n",
                RULE_ENDS_RUN,
            ),
            (
                "py sys.exit in a test",
                "tests/test_x.py",
                "import sys\ndef test_x():\n    sys.exit(0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "py exit builtin in a test",
                "tests/test_x.py",
                "def test_x():\n    exit(0)\n",
                RULE_ENDS_RUN,
            ),
            (
                "go plain",
                "x_test.go",
                "func TestMain(m *testing.M) { m.Run(); os.Exit(0) }\n",
                RULE_ENDS_RUN,
            ),
            (
                "go split",
                "x_test.go",
                "func TestMain(m *testing.M) { m.Run(); os.\n\tExit(0) }\n",
                RULE_ENDS_RUN,
            ),
            (
                "go comments",
                "x_test.go",
                "func TestMain(m *testing.M) { m.Run(); os. /* x */ Exit(0) }\n",
                RULE_ENDS_RUN,
            ),
            (
                "go alias",
                "x_test.go",
                "import xos \"os\"\nfunc TestMain(m *testing.M) { m.Run(); xos.Exit(0) }\n",
                RULE_ENDS_RUN,
            ),
        ]);
    }

    #[test]
    fn forged_results_plain_split_commented_assembled() {
        found_by(&[
            (
                "rust plain",
                "src/lib.rs",
                "fn f() { println!(\"test result: ok. 3 passed\"); }\n",
                RULE_FORGED,
            ),
            (
                "rust format pieces",
                "src/lib.rs",
                "fn f() { println!(\n  \"{} {}\",\n  \"test result:\",\n  \"ok\"); }\n",
                RULE_FORGED,
            ),
            (
                "rust concat",
                "src/lib.rs",
                "fn f() { print!(concat!(\"test res\", /* x */ \"ult: ok\")); }\n",
                RULE_FORGED,
            ),
            (
                "rust stringify",
                "src/lib.rs",
                "fn f() { println!(\"{}\", stringify!(test result: ok)); }\n",
                RULE_FORGED,
            ),
            (
                "py adjacent",
                "calc.py",
                "print(\"test result\" \": ok\")\n",
                RULE_FORGED,
            ),
            (
                "py split with a comment",
                "calc.py",
                "print(\n    \"test tests::adds \"  # x\n    \"... ok\"\n)\n",
                RULE_FORGED,
            ),
            (
                "py percent",
                "calc.py",
                "print(\"--- %s: TestAdd\" % \"PASS\")\n",
                RULE_FORGED,
            ),
            (
                "go plus",
                "calc.go",
                "func f() { fmt.Println(\"--- \" + /* x */ \"PASS: TestAdd (0.00s)\") }\n",
                RULE_FORGED,
            ),
        ]);
    }

    #[test]
    fn patches_runner_plain_split_commented_aliased() {
        found_by(&[
            ("import alias", "calc.py", "import pytest as p\n", RULE_PATCHES_RUNNER),
            ("from _pytest alias", "calc.py", "from _pytest import reports as r\n", RULE_PATCHES_RUNNER),
            ("from unittest TestCase", "calc.py", "from unittest import mock, TestCase\n", RULE_PATCHES_RUNNER),
            ("import_module concatenated", "calc.py", "import importlib\nimportlib.import_module(\"py\" + \"test\")\n", RULE_PATCHES_RUNNER),
            ("import_module concatenated in a test", "tests/test_x.py", "import importlib\nm = importlib.import_module(\"py\" + \"test\")\n", RULE_PATCHES_RUNNER),
            ("__import__ computed", "calc.py", "m = __import__(name)\n", RULE_PATCHES_RUNNER),
            ("sys.modules by a variable", "calc.py", "import sys\nm = sys.modules[name]\n", RULE_PATCHES_RUNNER),
            ("sys.modules walked", "calc.py", "import sys\nfor m in sys.modules.values():\n    pass\n", RULE_PATCHES_RUNNER),
            ("sys.modules aliased", "calc.py", "from sys import modules as m\nx = m[k]\n", RULE_PATCHES_RUNNER),
            ("gc", "tests/test_x.py", "import gc\nfor o in gc.get_objects():\n    pass\n", RULE_PATCHES_RUNNER),
            ("gc referrers aliased", "calc.py", "from gc import get_referrers as g\ng(x)\n", RULE_PATCHES_RUNNER),
            ("TestReport", "tests/test_x.py", "def test_x(request):\n    TestReport.outcome = 'passed'\n", RULE_PATCHES_RUNNER),
            ("pluginmanager", "tests/test_x.py", "def test_x(request):\n    request.config.pluginmanager.unregister(name='terminalreporter')\n", RULE_PATCHES_RUNNER),
            ("config.hook split", "tests/test_x.py", "def test_x(request):\n    request.config\\\n        .hook.pytest_runtest_logreport(report=r)\n", RULE_PATCHES_RUNNER),
            ("TestResult", "calc.py", "import unittest\nunittest.TestResult.addFailure = unittest.TestResult.addSuccess\n", RULE_PATCHES_RUNNER),
            ("builtins", "calc.py", "import builtins\nbuiltins.open = fake_open\n", RULE_PATCHES_RUNNER),
            ("builtins aliased", "calc.py", "import builtins as b\nb.print = quiet\n", RULE_PATCHES_RUNNER),
            ("__builtins__ item", "calc.py", "__builtins__['open'] = fake_open\n", RULE_PATCHES_RUNNER),
            ("setattr computed", "calc.py", "setattr(getattr(obj, a), name, value)\n", RULE_PATCHES_RUNNER),
            ("setattr split with comments", "tests/test_x.py", "setattr(\n    unittest.TestCase,  # x\n    'assertEqual',\n    lambda *a: None,\n)\n", RULE_PATCHES_RUNNER),
            ("TestCase via getattr", "tests/test_x.py", "getattr(unittest, 'Test' + 'Case').assertEqual = f\n", RULE_PATCHES_RUNNER),
            ("TestCase via __import__", "tests/test_x.py", "setattr(getattr(__import__('unit' + 'test'), 'TestCase'), 'assertEqual', f)\n", RULE_PATCHES_RUNNER),
            ("TestCase aliased", "tests/test_x.py", "from unittest import TestCase as T\nT.assertEqual = lambda *a: None\n", RULE_PATCHES_RUNNER),
            ("unittest aliased, augmented", "tests/test_x.py", "import unittest as u\nu.TestCase.maxDiff += 1\n", RULE_PATCHES_RUNNER),
            ("monkeypatch a runner path", "tests/test_x.py", "def test_x(monkeypatch):\n    monkeypatch.setattr('unittest.TestCase.assertEqual', f)\n", RULE_PATCHES_RUNNER),
            ("mock.patch.object", "tests/test_x.py", "from unittest import mock\nmock.patch.object(unittest.TestCase, 'assertEqual', f).start()\n", RULE_PATCHES_RUNNER),
            ("sys.modules runner in a test", "tests/test_x.py", "import sys\nsys.modules['_pytest.runner'] = fake\n", RULE_PATCHES_RUNNER),
            ("ctypes libc", "calc.py", "import ctypes\nlibc = ctypes.CDLL(None)\n", RULE_PATCHES_RUNNER),
            ("ctypes aliased exit", "calc.py", "import ctypes as c\nc.cdll.LoadLibrary('libc.so.6')\n", RULE_PATCHES_RUNNER),
            ("ctypes pythonapi", "calc.py", "import ctypes\nctypes.pythonapi.Py_Exit(0)\n", RULE_PATCHES_RUNNER),
            ("faulthandler", "calc.py", "import faulthandler\nfaulthandler._sigsegv()\n", RULE_PATCHES_RUNNER),
        ]);
    }

    #[test]
    fn std_renamed_is_runner_config() {
        let runner = super::super::RULE_RUNNER;
        found_by(&[
            (
                "extern crate as std",
                "src/lib.rs",
                "extern crate fake as std;\n",
                runner,
            ),
            (
                "split with comments",
                "src/lib.rs",
                "extern crate\n  fake /* x */ as\n  core;\n",
                runner,
            ),
            (
                "self as std",
                "src/lib.rs",
                "extern crate self as std;\n",
                runner,
            ),
            (
                "as test",
                "src/lib.rs",
                "extern crate fake as test;\n",
                runner,
            ),
            ("use as alloc", "src/lib.rs", "use fake as alloc;\n", runner),
            (
                "mod std",
                "src/lib.rs",
                "mod std { pub use fake::*; }\n",
                runner,
            ),
        ]);
    }

    #[test]
    fn honest_code_is_clean() {
        let cases: &[(&str, &str, &str)] = &[
            ("command", "src/lib.rs", "use std::process::Command;\npub fn run() -> bool { Command::new(\"ls\").status().is_ok() }\n#[cfg(test)]\nmod t {\n    #[test]\n    fn runs() { assert!(std::process::Command::new(\"true\").status().is_ok()); }\n}\n"),
            ("exit in main", "src/main.rs", "fn main() {\n    std::process::exit(run())\n}\n"),
            ("own assert helper", "src/lib.rs", "#[cfg(test)]\nmod t {\n    macro_rules! my_assert { ($e:expr) => { assert!($e) } }\n    #[test]\n    fn z() { my_assert!(true); }\n}\n"),
            ("pretty assertions", "tests/it.rs", "use pretty_assertions::assert_eq;\n#[test]\nfn z() { assert_eq!(1, 1); }\n"),
            ("libtest", "benches/b.rs", "extern crate test;\nextern crate alloc;\n"),
            ("ordinary section", "src/lib.rs", "#[link_section = \".text.hot\"]\npub fn f() {}\n"),
            ("progress message", "src/lib.rs", "pub fn f() { println!(\"Loading... done\"); eprintln!(\"all {} ok\", 3); }\n"),
            ("os.path", "calc.py", "import os\np = os.path.join('a', 'b')\nenv = os.environ.get('HOME')\n"),
            ("cli main", "cli.py", "import sys\n\n\ndef main():\n    args = sys.argv[1:]\n    sys.exit(run(args))\n\n\nif __name__ == '__main__':\n    main()\n"),
            ("pytest test", "tests/test_calc.py", "import pytest\nfrom unittest import mock\nimport unittest\n\nimport calc\n\n\ndef test_add(monkeypatch):\n    monkeypatch.setattr('calc.helper', lambda: 0)\n    with mock.patch('builtins.open'):\n        with pytest.raises(ValueError):\n            calc.add(1, 'x')\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(calc.add(1, 2), 3)\n"),
            ("kwargs setattr", "calc.py", "class C:\n    def __init__(self, **kw):\n        for k, v in kw.items():\n            setattr(self, k, v)\n"),
            ("own modules", "calc.py", "import sys\nfrom importlib import import_module\nj = import_module('json')\nme = sys.modules[__name__]\nhave = 'numpy' in sys.modules\nx = sys.modules.get('yaml')\n"),
            ("kill a child", "calc.py", "import os, signal\nos.kill(proc.pid, signal.SIGTERM)\n"),
            ("go test main", "x_test.go", "func TestMain(m *testing.M) { os.Exit(m.Run()) }\n"),
            ("c section", "native/x.c", "static const char *name = \".text\";\n__attribute__((unused)) static int x;\n"),
        ];
        for (name, path, text) in cases {
            let found = rules(path, None, text);
            assert!(found.is_empty(), "{name}: {found:?}");
        }
    }

    #[test]
    fn counted_against_the_base_not_by_line() {
        let base = "import os\n\n\ndef stop():\n    os._exit(1)\n";
        // Reformatted: the same construct, now split over lines.
        let reformatted = "import os\n\n\ndef stop():\n    os._exit(\n        1,\n    )\n";
        assert!(rules("calc.py", Some(base), reformatted).is_empty());
        // A second one added is found, on its line.
        let more = format!("{base}\n\ndef again():\n    os._exit(0)\n");
        let mut out = Vec::new();
        check(
            &FileVersions {
                path: "calc.py",
                old_path: None,
                base: Some(base),
                new: Some(&more),
            },
            &mut out,
        );
        assert_eq!(
            out.len(),
            1,
            "{:?}",
            out.iter().map(|f| &f.issue).collect::<Vec<_>>()
        );
        assert_eq!(out[0].issue.line, Some(9));
        // Aliased at the base, plain now: the same construct.
        let aliased = "from os import _exit as e\n\n\ndef stop():\n    e(1)\n";
        assert!(rules("calc.py", Some(aliased), base).is_empty());
    }

    #[test]
    fn hostile_token_streams_stay_linear() {
        const N: usize = 20_000;
        let texts = [
            "getattr(".repeat(N),
            "x: import ".repeat(N),
            "#[link_section = ".repeat(N),
            "#[cfg_attr(all(), ".repeat(N),
            "use {".repeat(N),
            "a::".repeat(N),
            "x.".repeat(N),
            "\"a\" ".repeat(N),
            "\"{}\" % ".repeat(N),
            "global_asm!(".repeat(N),
            "__attribute__((".repeat(N),
            "setattr(".repeat(N),
            "r#".repeat(N),
            "\\\n".repeat(N),
        ];
        let started = std::time::Instant::now();
        for text in &texts {
            for path in ["src/lib.rs", "tests/test_x.py", "x_test.go", "x.c"] {
                let _ = rules(path, Some(""), text);
            }
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }
}
