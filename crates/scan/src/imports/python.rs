//! Python imports: `import`, `from … import`, `__import__`,
//! `importlib.import_module`, and the literal code given to `exec` / `eval`.

use super::mask::Class;
use super::rust::strip_as;
use super::{eval_literal, literal_at, re, Lang, Scan, MAX_EVAL_DEPTH};
use regex::Regex;
use std::sync::OnceLock;

pub(super) fn python(scan: &Scan<'_>, depth: usize, out: &mut Vec<(u32, String)>) {
    // Statements: physical lines joined while a bracket is open or a
    // line ends with `\`, then split at `;`.
    let mut logical = String::new();
    let mut first_line = None;
    let mut open = 0i32;
    for (k, m) in scan.masked.iter().enumerate() {
        let line = scan.lines[k].0;
        first_line.get_or_insert(line);
        let code = m.code.trim_end();
        for c in code.chars() {
            match c {
                '(' | '[' | '{' => open += 1,
                ')' | ']' | '}' => open = (open - 1).max(0),
                _ => {}
            }
        }
        // Each physical line on its own too: a bracket the masker
        // misjudged must not glue an import onto another statement.
        for stmt in code.split(';') {
            python_statement(stmt, line, out);
        }
        let continued = code.ends_with('\\');
        logical.push(' ');
        logical.push_str(code.trim_end_matches('\\'));
        if open == 0 && !continued {
            for stmt in logical.split(';') {
                python_statement(stmt, first_line.unwrap_or(line), out);
            }
            logical.clear();
            first_line = None;
        }
    }
    if !logical.trim().is_empty() {
        for stmt in logical.split(';') {
            python_statement(stmt, first_line.unwrap_or(0), out);
        }
    }
    // Dynamic imports: the call must be code, its module a string.
    static DYN: OnceLock<Regex> = OnceLock::new();
    let dynamic = re(
        &DYN,
        r#"(?:\b__import__|\bimport_module)\s*\(\s*(?:name\s*=\s*)?[rbuRBUfF]{0,2}(["'])"#,
    );
    for c in dynamic.captures_iter(&scan.scan) {
        let call = c.get(0).expect("match").start();
        let quote = c.get(1).expect("group 1").start();
        if scan.class_at(call) != Class::Code || scan.class_at(quote) != Class::Str {
            continue;
        }
        if let Some(m) = literal_at(scan, quote) {
            out.push((scan.line_at(call), m));
        }
    }
    // Literal code given to exec / eval / compile is code.
    static EXEC: OnceLock<Regex> = OnceLock::new();
    let exec = re(
        &EXEC,
        r#"\b(?:exec|eval|compile)\s*\(\s*(?:source\s*=\s*)?[rbuRBU]{0,2}(["'])"#,
    );
    if depth < MAX_EVAL_DEPTH {
        for c in exec.captures_iter(&scan.scan) {
            let call = c.get(0).expect("match").start();
            let quote = c.get(1).expect("group 1").start();
            if scan.class_at(call) != Class::Code || scan.class_at(quote) != Class::Str {
                continue;
            }
            let Some(src) = literal_at(scan, quote) else {
                continue;
            };
            eval_literal(&src, scan.line_at(call), Lang::Python, depth, out);
        }
    }
}

/// One Python statement (masked code): `import …` or `from … import …`,
/// also after a compound statement's colon (`try: import x`).
fn python_statement(stmt: &str, line: u32, out: &mut Vec<(u32, String)>) {
    static FROM: OnceLock<Regex> = OnceLock::new();
    static COMPOUND: OnceLock<Regex> = OnceLock::new();
    let from = re(&FROM, r"^from\s+([\w.]+)\s+import\b\s*(.*)$");
    let compound = re(
        &COMPOUND,
        r"^(?:if|elif|else|try|except|finally|with|for|while|async\s+with)\b[^:]*:\s*(.*)$",
    );
    let mut s = stmt.trim();
    if let Some(c) = compound.captures(s) {
        s = c.get(1).map_or("", |m| m.as_str()).trim();
    }
    if let Some(rest) = s.strip_prefix("import") {
        if !rest.starts_with(|c: char| c.is_whitespace()) {
            return;
        }
        for part in rest.split(',') {
            let m = strip_as(part.trim_matches(|c: char| c.is_whitespace() || c == '\\'));
            let m = m.trim_matches(['(', ')', ' ', '\t']);
            if !m.is_empty() {
                out.push((line, m.to_string()));
            }
        }
    } else if let Some(c) = from.captures(s) {
        let module = c[1].to_string();
        out.push((line, module.clone()));
        let names = c.get(2).map_or("", |m| m.as_str());
        for part in names.split(',') {
            let n =
                strip_as(part.trim_matches(|c: char| {
                    c.is_whitespace() || c == '(' || c == ')' || c == '\\'
                }));
            let valid = n == "*" || n.chars().all(|c| c.is_alphanumeric() || c == '_');
            if n.is_empty() || !valid {
                continue;
            }
            let full = if module.ends_with('.') {
                format!("{module}{n}")
            } else {
                format!("{module}.{n}")
            };
            out.push((line, full));
        }
    }
}
