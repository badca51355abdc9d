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

use super::lex::Syntax;
use super::{FileVersions, Finding};
pub(super) use code::Code;
use code::{is_code_path, is_data_path};
use rascal_core::model::verdict::{Issue, Severity};
use std::collections::{BTreeMap, HashMap, HashSet};
pub(super) use test_spans::{rust_spans, SpanKind, Spans};

mod code;
mod test_spans;

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
mod tests;
