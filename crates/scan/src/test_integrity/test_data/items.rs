//! The top-level items of a Python or Rust source file (assignments,
//! functions, consts, statics, tables), each with its lines, for the test-
//! data rule.

use super::super::base_tests::outer_attribute;
use super::super::base_tests::rust_test_modules;
use super::super::lex;
use super::super::lex::Source;
use super::super::lex::Syntax;
use super::Item;

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
