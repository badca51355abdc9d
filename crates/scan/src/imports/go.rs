//! Go imports: spec-shaped lines in and out of `import ( … )` blocks.

use super::{clean, re};
use rascal_core::model::changeset::FileChange;
use regex::Regex;
use std::sync::OnceLock;

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

pub(super) fn go(change: &FileChange, out: &mut Vec<(u32, String)>) {
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
