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
//! `require("x")`.

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
    let mut pending: Option<String> = None;
    for l in &change.added_lines {
        let line = strip_c_comments(clean(&l.text));
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
        for c in dynamic.captures_iter(text) {
            out.push((l.line, c[1].to_string()));
        }
        let code = match text.find('#') {
            Some(i) => &text[..i],
            None => text,
        };
        for stmt in code.split(';') {
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
        for r in [from, bare, call] {
            for c in r.captures_iter(text) {
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
