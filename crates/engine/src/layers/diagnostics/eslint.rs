//! eslint: the default `stylish` format (a file's path, then
//! `  2:3  error  message  rule` lines under it), `unix`
//! (`path:2:3: message [Error/rule]`) and `compact`
//! (`path: line 2, col 3, Error - message (rule)`). Errors only.

use super::{number, Diagnostic, Location};
use regex::Regex;
use std::sync::LazyLock;

static STYLISH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}(\S+))?\s*$").unwrap()
});
static UNIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S.*?):(\d+):(\d+): (.*) \[(Error|Warning)(?:/(\S+))?\]\s*$").unwrap()
});
static COMPACT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S.*?): line (\d+), col (\d+), (Error|Warning) - (.*?)(?: \((\S+)\))?\s*$")
        .unwrap()
});

/// Source files eslint lints (the header line of a stylish block).
const EXTENSIONS: &[&str] = &[
    ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte", ".json",
    ".md", ".astro",
];

pub(super) fn parse(lines: &[&str]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut file: Option<(usize, &str)> = None;
    let mut header_used = false;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_end();
        if !t.is_empty() && !t.starts_with([' ', '\t']) {
            file = EXTENSIONS.iter().any(|e| t.ends_with(e)).then_some((i, t));
            header_used = false;
        }
        let found = if let Some(c) = UNIX.captures(t) {
            (&c[5] == "Error").then(|| {
                (
                    i,
                    Location::new(&c[1], number(&c[2]), number(&c[3])),
                    with_rule(&c[4], c.get(6).map(|m| m.as_str())),
                )
            })
        } else if let Some(c) = COMPACT.captures(t) {
            (&c[4] == "Error").then(|| {
                (
                    i,
                    Location::new(&c[1], number(&c[2]), number(&c[3])),
                    with_rule(&c[5], c.get(6).map(|m| m.as_str())),
                )
            })
        } else if let (Some(c), Some((start, path))) = (STYLISH.captures(t), file) {
            (&c[3] == "error").then(|| {
                // The file's line with its first error, when close enough.
                let from = if i - start <= 4 && !header_used {
                    start
                } else {
                    i
                };
                header_used = true;
                (
                    from,
                    Location::new(path, number(&c[1]), number(&c[2])),
                    with_rule(&c[4], c.get(5).map(|m| m.as_str())),
                )
            })
        } else {
            None
        };
        if let Some((from, at, message)) = found {
            out.push(Diagnostic {
                at: vec![at],
                message,
                lines: from..i + 1,
            });
        }
    }
    out
}

fn with_rule(message: &str, rule: Option<&str>) -> String {
    match rule {
        Some(r) => format!("{} ({r})", message.trim()),
        None => message.trim().to_string(),
    }
}
