//! Test data in code: the items of a Rust source file outside its test
//! modules that only test code uses — a `const` or `static` table of
//! cases, a helper function, an item gated `#[cfg(test)]` on its own. They
//! belong to the tests as much as an assertion does: a row removed from a
//! table of cases weakens the test that reads it. So a base-tests copy lays
//! the base's version of each such item over the change's file (the base's
//! tests run with the base's data), and a change to one is
//! `test-integrity/test-data-changed`, like an edited assertion.
//!
//! "Only test code uses it" is read by reference over the crate's files
//! (what [`Words`] counts): the item's name occurs in test code (a
//! `#[cfg(test)]` module, a file under `tests/`) and nowhere in the rest
//! of the code outside the item itself. An item gated `#[cfg(test)]` is
//! test code whatever uses it. A public function used only by tests is the
//! API under test, not data, and a public constant that is not a table
//! (`pub const MAX: usize`) may be API too: neither is counted. Reading is
//! lexical (words, not resolved paths): a name shared with other code
//! makes an item code, never the other way round.

use super::base_tests::{outer_attribute, rust_test_modules};
use super::lex::{self, Source, Syntax};
use std::collections::{HashMap, HashSet};

/// One top-level item of a Rust file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// `const`, `static` or `fn`.
    pub kind: &'static str,
    pub name: String,
    /// Its bytes, from its first attribute to its `;` or closing brace.
    pub start: usize,
    pub end: usize,
    /// The line of its name.
    pub line: u32,
    /// Declared `pub` (in any form).
    pub public: bool,
    /// Gated `#[cfg(test)]` on its own.
    pub cfg_test: bool,
    /// Its type is a table: an array or slice (`&[…]`, `[T; N]`).
    pub table: bool,
}

/// How often each name occurs in the code of a set of Rust files: in
/// test code and in the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Words {
    pub code: HashMap<String, usize>,
    pub tests: HashMap<String, usize>,
    /// The string literals of test code, and of the rest, that may name a
    /// file (`include_str!("../data/cases.txt")`, `fs::read("x.json")`).
    pub test_paths: HashSet<String>,
    pub code_paths: HashSet<String>,
    /// The string literals of code (not test code) that may name a
    /// directory (`read_dir("data")`, `"./fixtures/"`): the code may
    /// read any file under it by a name built at run time.
    pub code_dirs: HashSet<String>,
}

impl Words {
    /// Count the words of file `path` with text `text`.
    pub fn add(&mut self, path: &str, text: &str) {
        let Some(syntax) = syntax_of(path) else {
            return;
        };
        let src = Source::new(text, syntax);
        let whole_test = is_test_file(path);
        let tests = match syntax {
            Syntax::Rust => rust_test_modules(text),
            _ => Vec::new(),
        };
        let in_test = |i: usize| whole_test || tests.iter().any(|&(a, b)| a <= i && i < b);
        let mut i = 0;
        while i < src.len() {
            if let Some((a, e)) = src.string_at(i) {
                if let Some(d) = dir_in(src.slice(a, e)).filter(|_| !in_test(a)) {
                    self.code_dirs.insert(d);
                }
                if let Some(p) = path_in(src.slice(a, e)) {
                    // A file included as docs (`#![doc =
                    // include_str!("../README.md")]`): its examples are
                    // doctests, so it is test data like a fixture.
                    let set = if in_test(a) || (syntax == Syntax::Rust && doc_include(&src, a)) {
                        &mut self.test_paths
                    } else {
                        &mut self.code_paths
                    };
                    set.insert(p);
                }
                i = e.max(i + 1);
                continue;
            }
            match src.word(i) {
                Some((w, e)) => {
                    let in_test = in_test(i);
                    let map = if in_test {
                        &mut self.tests
                    } else {
                        &mut self.code
                    };
                    *map.entry(w.to_string()).or_default() += 1;
                    i = e;
                }
                None => i += 1,
            }
        }
    }
}

impl Words {
    /// Whether the words of a file named `path` are counted (Rust and
    /// Python sources).
    pub fn reads(path: &str) -> bool {
        syntax_of(path).is_some()
    }

    /// Whether the file at `path` (from the repository's root) is one
    /// only test code names: test data, whatever directory it is in.
    pub fn test_only_file(&self, path: &str) -> bool {
        syntax_of(path).is_none() && self.tests_name(path) && !self.code_names(path)
    }

    /// Whether some code (not test code) names the file at `path` in a
    /// string: the code may read it.
    pub fn code_names(&self, path: &str) -> bool {
        self.code_paths.iter().any(|l| names_path(l, path))
    }

    /// Whether some code names the file at `path` or a directory it is in
    /// (`read_dir("data")`, `"data/" + name`): the code may read it under a
    /// name built at run time.
    pub fn code_may_read(&self, path: &str) -> bool {
        self.code_names(path)
            || self
                .code_dirs
                .iter()
                .any(|d| path.starts_with(&format!("{d}/")) || path.contains(&format!("/{d}/")))
    }

    fn tests_name(&self, path: &str) -> bool {
        self.test_paths.iter().any(|l| names_path(l, path))
    }
}

/// Whether the literal at `a` is the path of `doc = include_str!(…)`.
fn doc_include(src: &Source, a: usize) -> bool {
    let Some(open) = src.prev_sig(a).filter(|&p| src.at(p) == b'(') else {
        return false;
    };
    let Some(bang) = src.prev_sig(open).filter(|&p| src.at(p) == b'!') else {
        return false;
    };
    let name = src.word_before(bang);
    if name != "include_str" {
        return false;
    }
    let Some(eq) = src
        .prev_sig(bang - name.len())
        .filter(|&p| src.at(p) == b'=')
    else {
        return false;
    };
    src.word_before(src.prev_sig(eq).map_or(eq, |p| p + 1)) == "doc"
}

/// A string literal's text as a relative file path, when it looks like
/// one: quotes and a raw string's `r#` gone, leading `./` and `../` parts
/// gone, one `.` in its last part (a file's extension), no spaces.
fn path_in(literal: &str) -> Option<String> {
    let t = literal
        .trim_start_matches(['r', 'b'])
        .trim_matches('#')
        .trim_matches('"');
    let mut rest = t;
    while let Some(r) = rest.strip_prefix("./").or_else(|| rest.strip_prefix("../")) {
        rest = r;
    }
    let last = rest.rsplit('/').next().unwrap_or(rest);
    let plausible = !rest.is_empty()
        && rest.len() <= 200
        && !rest.starts_with('/')
        && !rest.contains(|c: char| c.is_whitespace() || c == '{' || c == '\\')
        && last.contains('.')
        && !last.starts_with('.')
        && !last.ends_with('.');
    plausible.then(|| rest.to_string())
}

/// The directory a string literal of code may name, without `./`, `../`
/// and a trailing `/`: no blanks, no placeholders, no backslashes. Any
/// word qualifies (`"data"`): a directory is read by whatever name the
/// code gives it. Not `"."` (too common a separator to mean the current
/// directory: `".".join(…)`).
fn dir_in(literal: &str) -> Option<String> {
    let t = literal
        .trim_start_matches(['r', 'b'])
        .trim_matches('#')
        .trim_matches('"')
        .trim_matches('\'');
    let mut rest = t;
    while let Some(r) = rest.strip_prefix("./").or_else(|| rest.strip_prefix("../")) {
        rest = r;
    }
    let rest = rest.trim_end_matches('/');
    let plausible = !rest.is_empty()
        && rest.len() <= 200
        && !rest.starts_with('/')
        && !rest.split('/').any(|p| p == "." || p == "..")
        && !rest.contains(|c: char| c.is_whitespace() || c == '{' || c == '\\');
    plausible.then(|| rest.to_string())
}

/// Whether literal path `lit` (relative to some directory) names `path`:
/// it is `path`'s whole tail, part by part.
fn names_path(lit: &str, path: &str) -> bool {
    path == lit || path.ends_with(&format!("/{lit}"))
}

/// A source file that is test code whole: a Rust file under a `tests/`
/// or `benches/` directory, or `src/tests.rs`; a Python test file
/// (`test_*.py`, `*_test.py`, `conftest.py`, anything under `tests/`).
fn is_test_file(path: &str) -> bool {
    path.split('/')
        .rev()
        .skip(1)
        .any(|d| d == "tests" || d == "benches")
        || path.ends_with("/tests.rs")
        || path == "tests.rs"
        || (path.ends_with(".py") && super::is_test_path(path))
}

/// The languages whose test data is read here: Rust and Python.
pub fn syntax_of(path: &str) -> Option<Syntax> {
    if path.ends_with(".rs") {
        Some(Syntax::Rust)
    } else if path.ends_with(".py") {
        Some(Syntax::Python)
    } else {
        None
    }
}

/// The items of the source file at `path` (see [`rust_items`] and
/// [`python_items`]); none for other languages.
pub fn items_of(path: &str, text: &str) -> Vec<Item> {
    match syntax_of(path) {
        Some(Syntax::Rust) => rust_items(text),
        Some(Syntax::Python) => python_items(text),
        _ => Vec::new(),
    }
}

/// The module-level assignments (`CASES = [...]`, `LIMIT: int = 3`) and
/// functions (`def _cases(): ...`, decorators included) of a Python file,
/// each from its first line to the end of its last. A name that starts
/// with `_` is private; a table is a bracketed literal (list, tuple, dict,
/// set).
pub fn python_items(text: &str) -> Vec<Item> {
    let src = Source::new(text, Syntax::Python);
    let starts = src.line_starts().to_vec();
    let top = |s: usize| lex::is_ident_byte(src.at(s)) || src.at(s) == b'@';
    let mut out = Vec::new();
    let mut k = 0;
    while k < starts.len() {
        let s = starts[k];
        if s >= src.len() || !top(s) {
            k += 1;
            continue;
        }
        // Decorators belong to what follows them.
        let mut d = k;
        while d < starts.len() && src.at(starts[d]) == b'@' {
            d += 1;
        }
        let Some(&line_at) = starts.get(d) else { break };
        let Some((first, e)) = src.word(line_at) else {
            k = d + 1;
            continue;
        };
        let def = match first {
            "def" => src.word(src.skip_space(e)),
            "async" => src
                .word(src.skip_space(e))
                .filter(|(w, _)| *w == "def")
                .and_then(|(_, e2)| src.word(src.skip_space(e2))),
            _ => None,
        };
        if let Some((name, at)) = def {
            // A function ends before the next line that starts at column 0.
            let mut n = d + 1;
            while n < starts.len() && (starts[n] >= src.len() || !top(starts[n])) {
                n += 1;
            }
            let end = starts.get(n).copied().unwrap_or(src.len());
            out.push(py_item("fn", name, s, end, src.line(at), false));
            k = n;
            continue;
        }
        // `NAME = value` or `NAME: type = value`.
        let mut i = src.skip_space(e);
        if src.at(i) == b':' {
            while i < src.len() && src.at(i) != b'=' && src.at(i) != b'\n' {
                i = match src.at(i) {
                    b'(' | b'[' | b'{' => src.close(i) + 1,
                    _ => i + 1,
                };
            }
        }
        let assigns = src.at(i) == b'=' && src.at(i + 1) != b'=';
        let mut end = line_at;
        while end < src.len() && src.at(end) != b'\n' {
            end = match src.at(end) {
                b'(' | b'[' | b'{' => src.close(end) + 1,
                _ => end + 1,
            };
        }
        let end = (end + 1).min(src.len());
        if assigns {
            let v = src.skip_space(i + 1);
            let table = matches!(src.at(v), b'[' | b'(' | b'{');
            out.push(py_item("const", first, s, end, src.line(line_at), table));
        }
        k = starts.partition_point(|&x| x < end);
    }
    out
}

fn py_item(
    kind: &'static str,
    name: &str,
    start: usize,
    end: usize,
    line: u32,
    table: bool,
) -> Item {
    Item {
        kind,
        name: name.to_string(),
        start,
        end,
        line,
        public: !name.starts_with('_'),
        cfg_test: false,
        table,
    }
}

/// The top-level `const`, `static` and `fn` items of a Rust file outside
/// its `#[cfg(test)]` modules.
pub fn rust_items(text: &str) -> Vec<Item> {
    let src = Source::new(text, Syntax::Rust);
    let modules = rust_test_modules(text);
    let mut out = Vec::new();
    let mut cur = Pending::default();
    let mut i = 0;
    while i < src.len() {
        if let Some(&(_, b)) = modules.iter().find(|&&(a, _)| a == i) {
            i = b;
            cur = Pending::default();
            continue;
        }
        let c = src.at(i);
        match c {
            b'#' => {
                let Some((attr, after)) = outer_attribute(&src, i) else {
                    // An inner attribute's brackets are skipped below.
                    i += 1;
                    continue;
                };
                cur.start.get_or_insert(i);
                cur.cfg_test |= attr == "cfg(test)";
                i = after;
            }
            b'{' => {
                let e = src.close(i);
                match cur.kind {
                    Some("fn") => {
                        cur.push(&src, e + 1, &mut out);
                        cur = Pending::default();
                    }
                    Some(_) => {}
                    None => cur = Pending::default(),
                }
                i = e + 1;
            }
            b'[' => {
                if cur.kind.is_some() && cur.name.is_some() && !cur.typed_done {
                    cur.table = true;
                }
                i = src.close(i) + 1;
            }
            b'(' => i = src.close(i) + 1,
            b'=' => {
                cur.typed_done = true;
                i += 1;
            }
            b';' => {
                if matches!(cur.kind, Some("const" | "static")) {
                    cur.push(&src, i + 1, &mut out);
                }
                cur = Pending::default();
                i += 1;
            }
            _ if lex::is_ident_byte(c) => {
                let Some((w, e)) = src.word(i) else {
                    i += 1;
                    continue;
                };
                cur.start.get_or_insert(i);
                if cur.name.is_none() {
                    match w {
                        "pub" => cur.public = true,
                        "fn" => cur.kind = Some("fn"),
                        "const" | "static" if cur.kind.is_none() => {
                            cur.kind = Some(if w == "const" { "const" } else { "static" })
                        }
                        "mut" | "unsafe" | "async" | "extern" => {}
                        _ if cur.kind.is_some() => cur.name = Some((w.to_string(), i)),
                        _ => {}
                    }
                }
                i = e;
            }
            _ => i += 1,
        }
    }
    out
}

/// An item being read.
#[derive(Default)]
struct Pending {
    start: Option<usize>,
    kind: Option<&'static str>,
    name: Option<(String, usize)>,
    public: bool,
    cfg_test: bool,
    table: bool,
    /// Past the `=` of a `const`/`static`: brackets there are its value.
    typed_done: bool,
}

impl Pending {
    fn push(&self, src: &Source, end: usize, out: &mut Vec<Item>) {
        let (Some(kind), Some((name, at)), Some(start)) = (self.kind, &self.name, self.start)
        else {
            return;
        };
        if name == "_" {
            return;
        }
        out.push(Item {
            kind,
            name: name.clone(),
            start: src.line_start(start),
            end,
            line: src.line(*at),
            public: self.public,
            cfg_test: self.cfg_test,
            table: self.table,
        });
    }
}

/// The items of the base's file `text` that are test data, given the
/// words of the crate's files at the base (`crate_words`, this file's
/// included).
pub fn test_only_items(path: &str, text: &str, crate_words: &Words) -> Vec<Item> {
    items_of(path, text)
        .into_iter()
        .filter(|it| {
            if it.cfg_test {
                return true;
            }
            if it.name == "main" || (it.public && !(it.table && it.kind != "fn")) {
                return false;
            }
            let mut own = Words::default();
            own.add(path, &text[it.start..it.end]);
            let count = |m: &HashMap<String, usize>| m.get(&it.name).copied().unwrap_or(0);
            let in_code = count(&crate_words.code).saturating_sub(count(&own.code));
            in_code == 0 && count(&crate_words.tests) > 0
        })
        .collect()
}

/// A table item's text before its value's rows, and the rows (each with
/// its whitespace left out); None when its value is not a bracketed list.
fn rows(syntax: Syntax, item: &str) -> Option<(String, Vec<String>)> {
    let src = Source::new(item, syntax);
    let mut i = 0;
    while i < src.len() && src.at(i) != b'=' {
        i = match src.at(i) {
            b'(' | b'[' | b'{' => src.close(i) + 1,
            _ => i + 1,
        };
    }
    // Rust's rows are in `[…]` (after a `&`); Python's in any bracket.
    let opens: &[u8] = match syntax {
        Syntax::Rust => b"[",
        _ => b"[({",
    };
    while i < src.len() && !opens.contains(&src.at(i)) {
        i += 1;
    }
    if i >= src.len() {
        return None;
    }
    let head = squeezed(&item[..i]);
    let rows = src
        .args(i)
        .into_iter()
        .map(|(a, b)| squeezed(&item[a..b]))
        .collect();
    Some((head, rows))
}

/// Whether table item `now` is `base` with rows added and none changed or
/// removed (new cases are new tests, not weaker ones).
fn only_added(syntax: Syntax, base: &str, now: &str) -> bool {
    let (Some((head, mut left)), Some((now_head, now_rows))) =
        (rows(syntax, base), rows(syntax, now))
    else {
        return false;
    };
    // A fixed-size array's length changes with its rows.
    let sized = |h: &str| h.split(';').next().unwrap_or("").to_string();
    if head != now_head && sized(&head) != sized(&now_head) {
        return false;
    }
    for r in now_rows {
        if let Some(k) = left.iter().position(|x| *x == r) {
            left.remove(k);
        }
    }
    left.is_empty()
}

/// An item's text with its whitespace left out, for comparing.
fn squeezed(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The test-data `items` of `base` that `now` changed: (item, whether it
/// is gone).
pub fn changed<'a>(path: &str, base: &str, now: &str, items: &'a [Item]) -> Vec<(&'a Item, bool)> {
    let syntax = syntax_of(path).unwrap_or(Syntax::Rust);
    let theirs = items_of(path, now);
    items
        .iter()
        .filter_map(|it| {
            let mine = squeezed(&base[it.start..it.end]);
            match theirs
                .iter()
                .find(|t| t.name == it.name && t.kind == it.kind)
            {
                Some(t) if squeezed(&now[t.start..t.end]) == mine => None,
                Some(t)
                    if it.table
                        && only_added(syntax, &base[it.start..it.end], &now[t.start..t.end]) =>
                {
                    None
                }
                Some(_) => Some((it, false)),
                None => Some((it, true)),
            }
        })
        .collect()
}

/// Whether `now`'s version of test-data item `it` (of `base`) has fewer
/// rows, or lines, than the base's: cases removed, not only changed.
pub fn shrinks(path: &str, base: &str, now: &str, it: &Item) -> bool {
    let syntax = syntax_of(path).unwrap_or(Syntax::Rust);
    let Some(t) = items_of(path, now)
        .into_iter()
        .find(|t| t.name == it.name && t.kind == it.kind)
    else {
        return true;
    };
    let (b, n) = (&base[it.start..it.end], &now[t.start..t.end]);
    match (rows(syntax, b), rows(syntax, n)) {
        (Some((_, br)), Some((_, nr))) => nr.len() < br.len(),
        _ => n.lines().count() < b.lines().count(),
    }
}

/// `now` with each of `items` (of `base`) as the base has it: in place of
/// the item of that name, or added at the end when `now` has none. None
/// when nothing changes.
pub fn with_base_items(path: &str, base: &str, now: &str, items: &[Item]) -> Option<String> {
    let theirs = items_of(path, now);
    let mut swaps: Vec<(usize, usize, &str)> = Vec::new();
    let mut appended = String::new();
    for (it, gone) in changed(path, base, now, items) {
        let text = &base[it.start..it.end];
        if gone {
            appended.push('\n');
            appended.push_str(text);
            appended.push('\n');
        } else if let Some(t) = theirs
            .iter()
            .find(|t| t.name == it.name && t.kind == it.kind)
        {
            swaps.push((t.start, t.end, text));
        }
    }
    if swaps.is_empty() && appended.is_empty() {
        return None;
    }
    swaps.sort_by_key(|s| s.0);
    let mut out = String::with_capacity(now.len() + appended.len());
    let mut at = 0;
    for (a, b, text) in swaps {
        if a < at {
            continue;
        }
        out.push_str(&now[at..a]);
        out.push_str(text);
        at = b;
    }
    out.push_str(&now[at..]);
    if !appended.is_empty() {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&appended);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n/// The cases.\npub const CASES: &[(i32, i32, i32)] = &[\n    (1, 1, 2),\n    (2, 2, 4),\n];\n\npub const MAX: usize = 4;\n\nfn helper(x: i32) -> i32 {\n    add(x, 0)\n}\n\n#[cfg(test)]\nstatic SEEN: i32 = 0;\n\nconst LIMIT: i32 = 9;\n\npub fn capped(a: i32) -> i32 {\n    a.min(LIMIT)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        for (a, b, s) in CASES {\n            assert_eq!(add(*a, *b), *s + helper(0) + SEEN + MAX as i32 * 0);\n        }\n    }\n}\n";

    fn words(files: &[(&str, &str)]) -> Words {
        let mut w = Words::default();
        for (p, t) in files {
            w.add(p, t);
        }
        w
    }

    #[test]
    fn items_only_tests_use_are_test_data() {
        let items = rust_items(LIB);
        let names: Vec<(&str, &str, bool)> = items
            .iter()
            .map(|i| (i.kind, i.name.as_str(), i.table))
            .collect();
        assert_eq!(
            names,
            [
                ("fn", "add", false),
                ("const", "CASES", true),
                ("const", "MAX", false),
                ("fn", "helper", false),
                ("static", "SEEN", false),
                ("const", "LIMIT", false),
                ("fn", "capped", false)
            ]
        );
        assert!(LIB[items[1].start..items[1].end].starts_with("pub const CASES"));
        assert!(LIB[items[1].start..items[1].end].ends_with("];"));
        let inner = format!("#![allow(dead_code)]\n\n{LIB}");
        assert!(
            rust_items(&inner)[1].start > 20,
            "an inner attribute starts no item"
        );
        let data: Vec<String> = test_only_items("src/lib.rs", LIB, &words(&[("src/lib.rs", LIB)]))
            .into_iter()
            .map(|i| i.name)
            .collect();
        // `add` is the API under test, `MAX` a public constant, `LIMIT`
        // used by code.
        assert_eq!(data, ["CASES", "helper", "SEEN"]);
        // Used by code elsewhere in the crate: not test data.
        let other = "pub fn first() -> i32 { crate::CASES[0].2 }\n";
        let data = test_only_items(
            "src/lib.rs",
            LIB,
            &words(&[("src/lib.rs", LIB), ("src/other.rs", other)]),
        );
        assert!(!data.iter().any(|i| i.name == "CASES"), "{data:?}");
        // Used only by an integration test: test data.
        let lib = LIB.replace("for (a, b, s) in CASES", "for (a, b, s) in [(1, 1, 2)]");
        let it = "use calc::*;\n#[test]\nfn all() { for c in CASES { let _ = c; } }\n";
        let data = test_only_items(
            "src/lib.rs",
            &lib,
            &words(&[("src/lib.rs", &lib), ("tests/it.rs", it)]),
        );
        assert!(data.iter().any(|i| i.name == "CASES"), "{data:?}");
    }

    #[test]
    fn files_only_test_code_names_are_test_data() {
        let lib = "pub fn load() -> &'static str {\n    include_str!(\"../data/config.toml\")\n}\n\n#[cfg(test)]\nmod tests {\n    const CASES: &str = include_str!(\"../data/cases.txt\");\n\n    #[test]\n    fn reads() {\n        let _ = std::fs::read(r\"data/golden.json\");\n        assert!(!CASES.is_empty() && !\"a b.txt\".is_empty());\n    }\n}\n";
        let w = words(&[("src/lib.rs", lib)]);
        assert!(w.test_only_file("data/cases.txt"));
        assert!(w.test_only_file("data/golden.json"));
        assert!(!w.test_only_file("data/config.toml"), "code reads it too");
        assert!(!w.test_only_file("other/cases.txt.bak"));
        assert!(!w.test_only_file("src/lib.rs"));
        assert!(!w.test_only_file("a b.txt"));
        assert_eq!(path_in("\"../../x/y.rs\""), Some("x/y.rs".to_string()));
        assert_eq!(path_in("\"hello\""), None);
        assert_eq!(path_in("\"{}.txt\""), None);
    }

    #[test]
    fn a_file_under_a_directory_code_names_may_be_read_by_it() {
        let lib = "pub fn limits() -> Vec<String> {\n    std::fs::read_dir(\"./data/\").unwrap().map(|e| format!(\"{e:?}\")).collect()\n}\n\npub fn join(p: &[&str]) -> String {\n    p.join(\".\")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn reads() {\n        let _ = std::fs::read_dir(\"fixtures\");\n    }\n}\n";
        let w = words(&[("src/lib.rs", lib)]);
        assert!(w.code_may_read("data/limits.txt"));
        assert!(w.code_may_read("crate/data/limits.txt"));
        assert!(
            !w.code_names("data/limits.txt"),
            "no literal names the file"
        );
        assert!(
            !w.code_may_read("fixtures/x.txt"),
            "only test code names it"
        );
        assert!(
            !w.code_may_read("marker.txt"),
            "\".\" is a separator, not the current directory"
        );
        assert!(!w.code_may_read("database/x.txt"));
    }

    #[test]
    fn a_changed_row_is_found_and_laid_back_from_the_base() {
        let items = test_only_items("src/lib.rs", LIB, &words(&[("src/lib.rs", LIB)]));
        let cheat = LIB.replace("    (2, 2, 4),\n", "");
        let c = changed("src/lib.rs", LIB, &cheat, &items);
        assert_eq!(c.len(), 1);
        assert!(shrinks("src/lib.rs", LIB, &cheat, c[0].0));
        let edited = LIB.replace("(2, 2, 4)", "(2, 2, 5)");
        assert!(!shrinks(
            "src/lib.rs",
            LIB,
            &edited,
            changed("src/lib.rs", LIB, &edited, &items)[0].0
        ));
        assert_eq!((c[0].0.name.as_str(), c[0].1), ("CASES", false));
        let laid = with_base_items("src/lib.rs", LIB, &cheat, &items).unwrap();
        assert_eq!(laid, LIB);
        // A row added, none changed: new cases, not weaker ones.
        let more = LIB.replace("    (2, 2, 4),\n", "    (2, 2, 4),\n    (3, 3, 6),\n");
        assert!(changed("src/lib.rs", LIB, &more, &items).is_empty());
        let swapped = LIB.replace("    (2, 2, 4),\n", "    (3, 3, 6),\n");
        assert_eq!(changed("src/lib.rs", LIB, &swapped, &items).len(), 1);
        // Reformatted only: not a change.
        let spaced = LIB.replace("(1, 1, 2),", "(1,  1,  2),");
        assert!(changed("src/lib.rs", LIB, &spaced, &items).is_empty());
        assert_eq!(with_base_items("src/lib.rs", LIB, &spaced, &items), None);
        // Removed: laid back at the end.
        let start = LIB.find("/// The cases.").unwrap();
        let end = LIB.find("];\n").unwrap() + 3;
        let gone = format!("{}{}", &LIB[..start], &LIB[end..]);
        let c = changed("src/lib.rs", LIB, &gone, &items);
        assert_eq!((c[0].0.name.as_str(), c[0].1), ("CASES", true));
        let laid = with_base_items("src/lib.rs", LIB, &gone, &items).unwrap();
        assert!(laid.contains("(2, 2, 4),"));
        assert_eq!(
            rust_items(&laid)
                .iter()
                .filter(|i| i.name == "CASES")
                .count(),
            1
        );
    }

    const CALC: &str = "\"\"\"Small helpers.\"\"\"\n\nLIMIT = 10\n\nCASES = [\n    (1, 1, 2),\n    (2, 3, 5),\n]\n\n_BIG: dict = {\"a\": 1}\n\n\n@staticmethod\ndef _make(n):\n    return [(n, n, 2 * n)]\n\n\ndef add(a, b):\n    if a > LIMIT:\n        return a - b\n    return a + b\n";
    const TEST_CALC: &str = "from calc import CASES, _BIG, _make, add\n\n\ndef test_add():\n    for a, b, s in CASES + _make(4):\n        assert add(a, b) == s\n    assert _BIG\n";

    #[test]
    fn python_module_level_tables_and_private_helpers_only_tests_use_are_test_data() {
        let items = python_items(CALC);
        let names: Vec<(&str, &str, bool, bool)> = items
            .iter()
            .map(|i| (i.kind, i.name.as_str(), i.public, i.table))
            .collect();
        assert_eq!(
            names,
            [
                ("const", "LIMIT", true, false),
                ("const", "CASES", true, true),
                ("const", "_BIG", false, true),
                ("fn", "_make", false, false),
                ("fn", "add", true, false),
            ]
        );
        assert!(CALC[items[3].start..items[3].end].starts_with("@staticmethod\ndef _make"));
        let w = words(&[("calc.py", CALC), ("test_calc.py", TEST_CALC)]);
        let data: Vec<String> = test_only_items("calc.py", CALC, &w)
            .into_iter()
            .map(|i| i.name)
            .collect();
        assert_eq!(data, ["CASES", "_BIG", "_make"]);
        // A row dropped: cases removed, and laid back from the base.
        let cheat = CALC.replace("    (2, 3, 5),\n", "");
        let items = test_only_items("calc.py", CALC, &w);
        let c = changed("calc.py", CALC, &cheat, &items);
        assert_eq!((c[0].0.name.as_str(), c[0].1), ("CASES", false));
        assert!(shrinks("calc.py", CALC, &cheat, c[0].0));
        assert_eq!(
            with_base_items("calc.py", CALC, &cheat, &items).unwrap(),
            CALC
        );
        // A row added is a new case.
        let more = CALC.replace("    (2, 3, 5),\n", "    (2, 3, 5),\n    (4, 4, 8),\n");
        assert!(changed("calc.py", CALC, &more, &items).is_empty());
    }

    #[test]
    fn a_file_included_as_docs_is_test_data() {
        let lib = "#![doc = include_str!(\"../README.md\")]\n\npub fn f() -> &'static str {\n    include_str!(\"../data/words.txt\")\n}\n";
        let w = words(&[("src/lib.rs", lib)]);
        assert!(w.test_only_file("README.md"));
        assert!(!w.test_only_file("data/words.txt"));
        let spaced = lib.replace("doc = include_str!(", "doc=include_str! (");
        assert!(words(&[("src/lib.rs", &spaced)]).test_only_file("README.md"));
    }
}
