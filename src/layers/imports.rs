//! New-import detection for Layer 4 `forbidden-import`: which modules a
//! change imports on its ADDED lines, for Go, Rust, Python and
//! JavaScript/TypeScript (chosen by file extension).
//!
//! This is a line-level scanner, not a parser: it only sees added lines
//! (unchanged context is not in the ChangeSet), so it errs towards
//! reporting. In a `.go` file, any added line shaped like an import spec
//! (`"os/exec"`, `e "os/exec"`, `_ "x"`) counts as an import even when the
//! `import (` line is unchanged context, because such a line is not valid
//! Go anywhere else. Rust `use` statements are accumulated across added
//! lines up to the `;` and brace groups are expanded (`use std::{fs,
//! process::Command}` yields `std::fs`, `std::process::Command`).
//! Python `from x import y` yields both `x` and `x.y`. JS/TS `node:`
//! prefixes are stripped. Dynamic forms are also caught: Python
//! `__import__("x")` / `importlib.import_module("x")`, JS `import("x")` /
//! `require("x")`. In Rust, a fully qualified path used without any `use`
//! counts as an import of that path: `std::process::Command::new("id")`
//! and `::std::process::exit(0)` import `std::process::…` (a path that
//! starts with `crate`, `self`, `super` or a local module only matters if a
//! forbidden entry names it).
//!
//! Comments and string literals are masked per line before matching (for
//! Rust, Python and JS/TS), so `// std::process::exit` or
//! `"require('child_process')"` are not imports, and a `#` or `//` inside a
//! string does not hide the code after it. Limits: the masking is line by
//! line — a block comment or a string literal spanning several lines
//! (Python triple quotes, JS template literals, Rust multi-line strings) is
//! only known on its first line, so code in its later lines is scanned
//! (errs towards reporting); JS regular-expression literals are not
//! recognised; computed module names (`require(name)`,
//! `__import__(f"o{s}")`) and Rust macros that build paths are not seen.

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

/// Longest Rust `use` statement (bytes) accumulated across lines.
const MAX_STMT: usize = 64 * 1024;
/// Deepest brace nesting expanded in a Rust use tree.
const MAX_DEPTH: usize = 32;

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
    match lang {
        Lang::Go => go(change, &mut out),
        Lang::Rust => rust(change, &mut out),
        Lang::Python => python(change, &mut out),
        Lang::JavaScript => js(change, &mut out),
    }
    out.retain(|(_, m)| !m.is_empty());
    out.dedup();
    out
}

fn clean(text: &str) -> &str {
    text.trim_end_matches(['\r', '\n']).trim()
}

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("static regex"))
}

// ---------------------------------------------------------------- masking

/// One line with comments and string literals masked: `code` has them
/// replaced by spaces (one per char) and `is_code[byte]` says whether each
/// byte of the original line is code.
struct Masked {
    code: String,
    is_code: Vec<bool>,
}

impl Masked {
    fn code_at(&self, byte: usize) -> bool {
        self.is_code.get(byte).copied().unwrap_or(false)
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Mask comments and string literals of one line (see the module doc for
/// the limits). Go is never masked.
fn mask(text: &str, lang: Lang) -> Masked {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut is_code = vec![true; text.len()];
    let mut code = String::with_capacity(text.len());
    let c_like = matches!(lang, Lang::Rust | Lang::JavaScript);
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let starts = |i: usize, pat: &str| pat.chars().enumerate().all(|(k, p)| at(i + k) == Some(p));
    // Mark chars[from..to) as not code.
    let mut blank = |from: usize, to: usize, code: &mut String| {
        for &(b, c) in &chars[from..to.min(chars.len())] {
            for x in &mut is_code[b..b + c.len_utf8()] {
                *x = false;
            }
            code.push(' ');
        }
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let prev_ident = i > 0 && is_ident(chars[i - 1].1);
        // Line comments: the rest of the line.
        if (c_like && starts(i, "//")) || (lang == Lang::Python && c == '#') {
            blank(i, chars.len(), &mut code);
            break;
        }
        if c_like && starts(i, "/*") {
            let mut j = i + 2;
            while j < chars.len() && !starts(j, "*/") {
                j += 1;
            }
            let end = (j + 2).min(chars.len());
            blank(i, end, &mut code);
            i = end;
            continue;
        }
        // Rust raw strings: r"…", r#"…"#, br"…".
        let byte_prefix = i > 0 && chars[i - 1].1 == 'b' && !(i >= 2 && is_ident(chars[i - 2].1));
        if lang == Lang::Rust && c == 'r' && (!prev_ident || byte_prefix) {
            let mut j = i + 1;
            while at(j) == Some('#') {
                j += 1;
            }
            if at(j) == Some('"') {
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', j - i - 1))
                    .collect();
                let mut k = j + 1;
                while k < chars.len() && !starts(k, &close) {
                    k += 1;
                }
                let end = (k + close.chars().count()).min(chars.len());
                blank(i, end, &mut code);
                i = end;
                continue;
            }
        }
        // Rust char literals ('x', '\n', '\u{1F600}'); anything else is a lifetime.
        if lang == Lang::Rust && c == '\'' {
            let end = if at(i + 1) == Some('\\') {
                (i + 2..(i + 12).min(chars.len()))
                    .find(|&k| at(k) == Some('\''))
                    .map(|k| k + 1)
            } else if at(i + 2) == Some('\'') && at(i + 1).is_some() {
                Some(i + 3)
            } else {
                None
            };
            if let Some(end) = end {
                blank(i, end, &mut code);
                i = end;
                continue;
            }
            code.push(c);
            i += 1;
            continue;
        }
        let quote = match lang {
            Lang::Rust => c == '"',
            Lang::Python => c == '"' || c == '\'',
            Lang::JavaScript => c == '"' || c == '\'' || c == '`',
            Lang::Go => false,
        };
        if quote {
            let triple: String = std::iter::repeat_n(c, 3).collect();
            let close = if lang == Lang::Python && starts(i, &triple) {
                triple
            } else {
                c.to_string()
            };
            let mut k = i + close.chars().count();
            while k < chars.len() && !starts(k, &close) {
                if chars[k].1 == '\\' {
                    k += 1;
                }
                k += 1;
            }
            let end = (k + close.chars().count()).min(chars.len());
            blank(i, end, &mut code);
            i = end;
            continue;
        }
        code.push(c);
        i += 1;
    }
    Masked { code, is_code }
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

fn rust(change: &FileChange, out: &mut Vec<(u32, String)>) {
    static START: OnceLock<Regex> = OnceLock::new();
    static EXTERN: OnceLock<Regex> = OnceLock::new();
    let start = re(
        &START,
        r"^(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?use\s+(.*)$",
    );
    let extern_crate = re(
        &EXTERN,
        r"^(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?extern\s+crate\s+([A-Za-z_][A-Za-z0-9_]*)",
    );
    static QUALIFIED: OnceLock<Regex> = OnceLock::new();
    // A path of two or more segments not preceded by another segment
    // (`my::std::process` is `my::…`, not `std::…`).
    let qualified = re(
        &QUALIFIED,
        r"(?:^|[^\w:$#'])(?:::\s*)?((?:r#)?[\p{L}_][\p{L}\p{N}_]*(?:\s*::\s*(?:r#)?[\p{L}_][\p{L}\p{N}_]*)+)",
    );
    let mut pending: Option<String> = None;
    for l in &change.added_lines {
        let line = mask(clean(&l.text), Lang::Rust).code;
        let t = line.trim();
        if let Some(acc) = pending.as_mut() {
            acc.push(' ');
            acc.push_str(t);
            if let Some(i) = acc.find(';') {
                let stmt = acc[..i].to_string();
                pending = None;
                use_tree(&stmt, l.line, out);
            } else if acc.len() > MAX_STMT {
                let stmt = std::mem::take(acc);
                pending = None;
                use_tree(&stmt, l.line, out);
            }
            continue;
        }
        if let Some(c) = extern_crate.captures(t) {
            out.push((l.line, c[1].to_string()));
            continue;
        }
        if let Some(c) = start.captures(t) {
            let rest = c.get(1).map_or("", |m| m.as_str());
            match rest.find(';') {
                Some(i) => use_tree(&rest[..i], l.line, out),
                None => pending = Some(rest.to_string()),
            }
            continue;
        }
        // Fully qualified paths in code: `std::process::Command::new(…)`.
        for c in qualified.captures_iter(t) {
            let path = compact(&c[1]).replace("r#", "");
            out.push((l.line, path));
        }
    }
    if let Some(stmt) = pending {
        let line = change.added_lines.last().map_or(0, |l| l.line);
        use_tree(&stmt, line, out);
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

fn python(change: &FileChange, out: &mut Vec<(u32, String)>) {
    static FROM: OnceLock<Regex> = OnceLock::new();
    static DYN: OnceLock<Regex> = OnceLock::new();
    static COMPOUND: OnceLock<Regex> = OnceLock::new();
    let from = re(&FROM, r"^from\s+([\w.]+)\s+import\b\s*(.*)$");
    // `if x: import y`, `try: import y`: the statement after the colon.
    let compound = re(
        &COMPOUND,
        r"^(?:if|elif|else|try|except|finally|with|for|while|async\s+with)\b[^:]*:\s*(.*)$",
    );
    let dynamic = re(
        &DYN,
        r#"(?:\b__import__|\bimport_module)\s*\(\s*(?:[rbuRBU]{0,2})["']([^"']+)["']"#,
    );
    for l in &change.added_lines {
        let text = clean(&l.text);
        let masked = mask(text, Lang::Python);
        for c in dynamic.captures_iter(text) {
            if masked.code_at(c.get(0).map_or(0, |m| m.start())) {
                out.push((l.line, c[1].to_string()));
            }
        }
        for stmt in masked.code.split(';') {
            let mut s = stmt.trim();
            if let Some(c) = compound.captures(s) {
                s = c.get(1).map_or("", |m| m.as_str()).trim();
            }
            if let Some(rest) = s.strip_prefix("import") {
                if !rest.starts_with(|c: char| c.is_whitespace()) {
                    continue;
                }
                for part in rest.split(',') {
                    let m = strip_as(part.trim_matches(|c: char| c.is_whitespace() || c == '\\'));
                    let m = m.trim_matches(['(', ')', ' ', '\t']);
                    if !m.is_empty() {
                        out.push((l.line, m.to_string()));
                    }
                }
            } else if let Some(c) = from.captures(s) {
                let module = c[1].to_string();
                out.push((l.line, module.clone()));
                let names = c.get(2).map_or("", |m| m.as_str());
                for part in names.split(',') {
                    let n = strip_as(part.trim_matches(|c: char| {
                        c.is_whitespace() || c == '(' || c == ')' || c == '\\'
                    }));
                    if n.is_empty()
                        || n == "*"
                        || !n.chars().all(|c| c.is_alphanumeric() || c == '_')
                    {
                        continue;
                    }
                    let full = if module.ends_with('.') {
                        format!("{module}{n}")
                    } else {
                        format!("{module}.{n}")
                    };
                    out.push((l.line, full));
                }
            }
        }
    }
}

// ---------------------------------------------------------------- JS / TS

fn js(change: &FileChange, out: &mut Vec<(u32, String)>) {
    static FROM: OnceLock<Regex> = OnceLock::new();
    static BARE: OnceLock<Regex> = OnceLock::new();
    static CALL: OnceLock<Regex> = OnceLock::new();
    // `import … from 'x'`, `export … from 'x'`, and the closing line of a
    // multi-line import/export: `} from 'x'`.
    let from = re(
        &FROM,
        r#"(?:^\s*\}|\bimport\b|\bexport\b)[^'"`]*?\bfrom\s*['"`]([^'"`]+)['"`]"#,
    );
    let bare = re(&BARE, r#"\bimport\s*['"`]([^'"`]+)['"`]"#);
    let call = re(
        &CALL,
        r#"(?:\bimport|\brequire(?:\s*\.\s*resolve)?)\s*\(\s*['"`]([^'"`]+)['"`]"#,
    );
    for l in &change.added_lines {
        let text = clean(&l.text);
        if !(text.contains("import")
            || text.contains("require")
            || text.contains("from")
            || text.contains("export"))
        {
            continue;
        }
        let masked = mask(text, Lang::JavaScript);
        for r in [from, bare, call] {
            for c in r.captures_iter(text) {
                // The keyword must be code: not in a comment or a string.
                let kw = c.get(0).map_or(0, |m| m.start());
                let kw = text[kw..]
                    .find(|ch: char| ch.is_alphanumeric() || ch == '}')
                    .map_or(kw, |d| kw + d);
                if !masked.code_at(kw) {
                    continue;
                }
                let m = c[1].trim();
                let m = m.strip_prefix("node:").unwrap_or(m);
                out.push((l.line, m.to_string()));
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
    fn python_and_js_forms() {
        let m = mods(
            "a.py",
            &["from os import path as p, sep", "import a.b as c, d"],
        );
        assert_eq!(m, vec!["os", "os.path", "os.sep", "a.b", "d"]);
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
    }
}
