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

use super::base_tests::rust_test_modules;
use super::lex::{Source, Syntax};
use items::{python_items, rust_items};
use std::collections::{HashMap, HashSet};

mod items;

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
mod tests;
