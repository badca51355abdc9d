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

use rascal_core::model::changeset::{FileChange, Operation};
use regex::Regex;
use std::sync::OnceLock;

mod go;
mod js;
mod mask;
mod python;
mod rust;
#[cfg(test)]
mod tests;

use go::go;
use js::js;
use mask::{mask_line, start_states, Class, MaskState, Masked};
use python::python;
use rust::rust;

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
                            let other = start.slash_after_close_as_regex();
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
